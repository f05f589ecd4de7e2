/*
 * bench_md_test.c - the Markdown writer: escaped cells, header separators, numbers with
 * thousands separators, and the too-small-buffer paths.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench_md.h"

static void test_rows(void **state)
{
	(void)state;
	char buf[128];
	const char *cells[] = {"Kernel", "a|b", "x\ny", NULL};

	size_t len = bench_md_row(buf, sizeof(buf), cells, 4, 0);
	assert_int_equal(len, strlen(buf));
	assert_string_equal(buf, "| Kernel | a\\|b | x y |  |\n");
	bench_md_row(buf, sizeof(buf), cells, 2, 1);
	assert_string_equal(buf, "| Kernel | a\\|b |\n| --- | --- |\n");
	for (size_t cap = 0; cap < 32; cap++) { /* "| Kernel | a\|b |\n| --- | --- |\n" is 32 */
		assert_int_equal(bench_md_row(buf, cap, cells, 2, 1), 0);
		if (cap)
			assert_string_equal(buf, "");
	}
	assert_int_equal(bench_md_row(buf, 33, cells, 2, 1), 32);
}

static void test_numbers(void **state)
{
	(void)state;
	static const struct {
		double v;
		int prec;
		const char *want;
	} cases[] = {
	    {0, 0, "0"},
	    {999, 0, "999"},
	    {1000, 0, "1,000"},
	    {1234567.25, 1, "1,234,567.2"}, /* printf rounds half to even here */
	    {-4194.4, 0, "-4,194"},
	    {12.345, 2, "12.35"},
	    {100000, 2, "100,000.00"},
	    {0.5, 9, "0.500000"}, /* prec capped at 6 */
	    {NAN, 1, "n/a"},
	    {INFINITY, 1, "n/a"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bench_md_num(buf, sizeof(buf), cases[i].v, cases[i].prec);
		if (strcmp(buf, cases[i].want))
			fail_msg("%g/%d: got %s want %s", cases[i].v, cases[i].prec, buf,
				 cases[i].want);
	}
	assert_string_equal(bench_md_num(buf, 5, 1234567, 0), ""); /* too small */
	assert_string_equal(bench_md_num(buf, 6, 1234, 0), "1,234");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
