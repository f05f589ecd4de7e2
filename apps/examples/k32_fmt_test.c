/*
 * k32_fmt_test.c - the pod SDK's k32_snprintf (sdk/k32_fmt.c, what k32_logf formats with),
 * compiled for the host: a table of formats and arguments with the exact text expected, the
 * length returned for a text that does not fit, and the NUL always written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "k32_klet.h"

static void test_formats(void **state)
{
	(void)state;
	char b[64];
	static const char *const want[] = {
	    "tick 42",
	    "-7|4294967289|fff9",
	    "x=002a|   -5|-0005|ab  |",
	    "s=hel|(null)|c=Z|100%",
	    "big 18446744073709551615 -9223372036854775807 7fffffffffffffff",
	    "bad %q stays, %",
	    "0x1f"};
	char got[7][64];
	k32_snprintf(got[0], 64, "tick %u", 42u);
	k32_snprintf(got[1], 64, "%d|%u|%x", -7, (unsigned)-7, (unsigned)-7 & 0xffffu);
	k32_snprintf(got[2], 64, "x=%04x|%5d|%05d|%-4s|", 42u, -5, -5, "ab");
	const char *volatile none = NULL; /* hidden from the compiler's format check */
	const char *volatile bad = "bad %q stays, %";
	k32_snprintf(got[3], 64, "s=%.3s|%s|c=%c|100%%", "hello", none, 'Z');
	k32_snprintf(got[4], 64, "big %llu %lld %llx", 18446744073709551615ull,
		     -9223372036854775807ll, 0x7fffffffffffffffull);
	k32_snprintf(got[5], 64, bad, 0);
	k32_snprintf(got[6], 64, "%p", (void *)(uintptr_t)0x1f);
	for (int i = 0; i < 7; i++)
		assert_string_equal(got[i], want[i]);
	/* too small: the length it needs, a NUL at the end of what fits */
	memset(b, 'z', sizeof(b));
	assert_int_equal(k32_snprintf(b, 8, "%s-%d", "abcdef", 12345), 12);
	assert_string_equal(b, "abcdef-");
	assert_int_equal(b[8], 'z');
	assert_int_equal(k32_snprintf(NULL, 0, "%d", 123), 3);
	int w = 3;
	k32_snprintf(b, sizeof(b), "[%.*s]", w, "abcdef");
	assert_string_equal(b, "[abc]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_formats)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
