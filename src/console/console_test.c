/*
 * console_test.c - the K32_CMD: protocol: parsing (fields, limits, bad names), dispatch and
 * errors for unknown commands and wrong field counts, line assembly across feeds with
 * "\r\n", over-long lines, log lines ignored, and the built-in BENCH (checksums against the
 * kernels), TASKS (a platform task of ours is listed) and HELP. Timings are not asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench_kernels.h"
#include "bench_line.h"
#include "console.h"
#include "platform/k32_platform.h"

static char out[8192];
static size_t out_len;
static int out_lines;

static void capture(void *user, const char *s, size_t len)
{
	(void)user;
	assert_true(len > 0 && s[len - 1] == '\n');
	if (out_len + len < sizeof(out)) {
		memcpy(out + out_len, s, len);
		out_len += len;
		out[out_len] = 0;
	}
	out_lines++;
}

static void reset(void)
{
	out_len = 0;
	out[0] = 0;
	out_lines = 0;
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		k32_status_t st;
		const char *name;
		uint32_t argc;
		const char *msg; /* part of err.msg on failure */
	} cases[] = {
	    {"K32_CMD:TASKS", K32_OK, "TASKS", 0, NULL},
	    {"K32_CMD:BENCH:crc32:4:5", K32_OK, "BENCH", 3, NULL},
	    {"K32_CMD:BENCH::", K32_OK, "BENCH", 2, NULL},
	    {"K32_CMD:X:1:2:3:4:5:6:7:8", K32_OK, "X", 8, NULL},
	    {"K32_CMD:X:1:2:3:4:5:6:7:8:9", K32_ERR_INVALID_ARGS, NULL, 0, "K32_CON_MAX_ARGS"},
	    {"K32_CMD:", K32_ERR_INVALID_ARGS, NULL, 0, "empty command name"},
	    {"K32_CMD::x", K32_ERR_INVALID_ARGS, NULL, 0, "empty command name"},
	    {"K32_CMD:tasks", K32_ERR_INVALID_ARGS, NULL, 0, "outside A-Z"},
	    {"K32_CMD:TA SKS", K32_ERR_INVALID_ARGS, NULL, 0, "outside A-Z"},
	    {"K32_CMD:TASKS\t", K32_ERR_INVALID_ARGS, NULL, 0, "control character 0x09"},
	    {"K32_CMD", K32_ERR_NOT_FOUND, NULL, 0, "not a command"},
	    {"hello K32_CMD:TASKS", K32_ERR_NOT_FOUND, NULL, 0, "not a command"},
	    {"", K32_ERR_NOT_FOUND, NULL, 0, "not a command"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct con_args a;
		struct k32_err err;

		k32_err_clear(&err);
		k32_status_t st = con_parse(cases[i].line, strlen(cases[i].line), &a, &err);
		if (st != cases[i].st)
			fail_msg("%s: status %d, want %d (%s)", cases[i].line, st, cases[i].st,
				 err.msg);
		if (st == K32_OK) {
			assert_true(k32_str_eq_cstr(a.name, cases[i].name));
			assert_int_equal(a.argc, cases[i].argc);
		} else if (!strstr(err.msg, cases[i].msg)) {
			fail_msg("%s: message \"%s\" lacks \"%s\"", cases[i].line, err.msg,
				 cases[i].msg);
		}
	}
	/* fields are views into the line */
	struct con_args a;
	struct k32_err err;
	assert_int_equal(con_parse("K32_CMD:BENCH:crc32:4:5", 23, &a, &err), K32_OK);
	assert_true(k32_str_eq_cstr(a.argv[0], "crc32"));
	assert_true(k32_str_eq_cstr(a.argv[1], "4"));
	assert_true(k32_str_eq_cstr(a.argv[2], "5"));
	/* a line past the limit */
	char big[K32_CON_LINE_MAX + 2];
	memset(big, 'A', sizeof(big));
	memcpy(big, "K32_CMD:", 8);
	assert_int_equal(con_parse(big, sizeof(big), &a, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "K32_CON_LINE_MAX"));
}

static void test_exec_errors(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		k32_status_t st;
		const char *out; /* expected in the output; NULL: no output */
	} cases[] = {
	    {"plain log text", K32_OK, NULL},
	    {"K32_CMD:NOPE", K32_ERR_NOT_FOUND, "K32_ERR unknown command NOPE: try K32_CMD:HELP"},
	    {"K32_CMD:TASKS:1", K32_ERR_INVALID_ARGS, "K32_ERR TASKS takes 0 to 0 fields, got 1"},
	    {"K32_CMD:BENCH", K32_ERR_INVALID_ARGS, "BENCH takes 1 to 3 fields, got 0"},
	    {"K32_CMD:BENCH:quux", K32_ERR_INVALID_ARGS, "unknown kernel \"quux\""},
	    {"K32_CMD:BENCH:fib:x", K32_ERR_INVALID_ARGS, "size \"x\" is not a number"},
	    {"K32_CMD:BENCH:fib:10:0", K32_ERR_INVALID_ARGS, "runs must be 1 to"},
	    {"K32_CMD:BENCH:fib:10:101", K32_ERR_INVALID_ARGS, "runs must be 1 to"},
	    {"K32_CMD:BENCH:hostcall", K32_ERR_INVALID_ARGS, "BENCH:hostcall wants one count"},
	    {"K32_CMD:BENCH:hostcall:x", K32_ERR_INVALID_ARGS, "BENCH:hostcall wants one count"},
	    {"K32_CMD:BENCH:hostcall:99999999999", K32_ERR_INVALID_ARGS, "wants one count"},
	    {"K32_CMD:bench", K32_ERR_INVALID_ARGS, "K32_ERR command name \"bench\""},
	};
	struct con c;

	con_init(&c, con_builtin_cmds, con_builtin_count, capture, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		reset();
		k32_status_t st = con_exec(&c, cases[i].line, strlen(cases[i].line));
		if (st != cases[i].st)
			fail_msg("%s: status %d, want %d: %s", cases[i].line, st, cases[i].st, out);
		if (!cases[i].out)
			assert_int_equal(out_lines, 0);
		else if (out_lines != 1 || !strstr(out, cases[i].out))
			fail_msg("%s: output \"%s\" lacks \"%s\"", cases[i].line, out,
				 cases[i].out);
	}
	assert_int_equal(c.errors, sizeof(cases) / sizeof(cases[0]) - 1);
}

static void test_bench(void **state)
{
	(void)state;
	struct con c;
	struct bench_result r;

	con_init(&c, con_builtin_cmds, con_builtin_count, capture, NULL);
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		char line[64];

		reset();
		snprintf(line, sizeof(line), "K32_CMD:BENCH:%s:%u:2", bench_kernel_name(k),
			 bench_default_arg(k));
		assert_int_equal(con_exec(&c, line, strlen(line)), K32_OK);
		if (!bench_line_parse(out, (uint32_t)out_len, &r))
			fail_msg("%s: unparsable \"%s\"", line, out);
		assert_int_equal(r.kernel, k);
		assert_int_equal(r.arg, bench_default_arg(k));
		assert_int_equal(r.runs, 2);
		assert_true(r.us_min <= r.us_total);
		assert_int_equal(r.sum, bench_run(k, bench_default_n(k), 1));
	}
	/* the reference page's example, and defaults for the size and runs */
	reset();
	assert_int_equal(con_exec(&c, "K32_CMD:BENCH:crc32:4:5", 23), K32_OK);
	assert_true(bench_line_parse(out, (uint32_t)out_len, &r));
	assert_int_equal(r.runs, 5);
	reset();
	assert_int_equal(con_exec(&c, "K32_CMD:BENCH:fib", 17), K32_OK);
	assert_true(bench_line_parse(out, (uint32_t)out_len, &r));
	assert_int_equal(r.arg, 15);
	assert_int_equal(r.sum, 610);
	assert_int_equal(r.runs, 5);

	uint32_t calls;
	uint64_t us;
	reset();
	assert_int_equal(con_exec(&c, "K32_CMD:BENCH:hostcall:1000", 27), K32_OK);
	assert_true(bench_line_parse_hostcall(out, (uint32_t)out_len, &calls, &us));
	assert_int_equal(calls, 1000);
}

static void spin(void *arg)
{
	volatile uint64_t *x = arg;
	uint64_t t0 = k32_now_us();

	while (k32_now_us() - t0 < 20000)
		(*x)++;
}

static void test_tasks(void **state)
{
	(void)state;
	struct con c;
	struct k32_task *t;
	struct k32_err err;
	volatile uint64_t x = 0;

	assert_int_equal(
	    k32_plat()->task_create(&t, "con-test-spin", spin, (void *)&x, 64 * 1024, -1, &err),
	    K32_OK);
	k32_plat()->sleep_us(5000);
	con_init(&c, con_builtin_cmds, con_builtin_count, capture, NULL);
	reset();
	assert_int_equal(con_exec(&c, "K32_CMD:TASKS\r", 14), K32_OK);
	k32_plat()->task_join(t);
	assert_non_null(strstr(out, "K32_TASK name=con-test-spin run_ms="));
	assert_non_null(strstr(out, " busy="));
	assert_non_null(strstr(out, "K32_TASKS count="));
	/* the last line is the summary */
	const char *last = out + out_len - 1;
	while (last > out && last[-1] != '\n')
		last--;
	assert_memory_equal(last, "K32_TASKS count=", 16);

	reset();
	assert_int_equal(con_exec(&c, "K32_CMD:HELP", 12), K32_OK);
	assert_int_equal(out_lines, (int)con_builtin_count);
	assert_non_null(strstr(out, "K32_HELP K32_CMD:BENCH:"));
}

static void test_feed(void **state)
{
	(void)state;
	struct con c;
	const char *in = "boot: hello\nK32_CMD:BENCH:fib:10:1\r\nK32_CMD:NO";
	struct bench_result r;

	con_init(&c, con_builtin_cmds, con_builtin_count, capture, NULL);
	reset();
	/* byte by byte: lines assemble across calls */
	for (size_t i = 0; i < strlen(in); i++)
		con_feed(&c, in + i, 1);
	assert_int_equal(out_lines, 1);
	assert_true(bench_line_parse(out, (uint32_t)out_len, &r));
	assert_int_equal(r.sum, 55);
	con_feed(&c, "PE\n", 3);
	assert_int_equal(out_lines, 2);
	assert_non_null(strstr(out, "K32_ERR unknown command NOPE"));

	/* an over-long command line: one error, and the next line works */
	reset();
	char big[K32_CON_LINE_MAX + 50];
	memset(big, 'A', sizeof(big));
	memcpy(big, "K32_CMD:", 8);
	con_feed(&c, big, sizeof(big));
	con_feed(&c, "\nK32_CMD:BENCH:fib:2:1\n", 23);
	assert_int_equal(out_lines, 2);
	assert_non_null(strstr(out, "K32_ERR line longer than K32_CON_LINE_MAX"));
	assert_non_null(strstr(out, "K32_BENCH kernel=fib n=2 runs=1"));
	/* an over-long log line: silently skipped */
	reset();
	memset(big, 'b', sizeof(big));
	con_feed(&c, big, sizeof(big));
	con_feed(&c, "\n", 1);
	assert_int_equal(out_lines, 0);
	assert_int_equal(c.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse), cmocka_unit_test(test_exec_errors),
	    cmocka_unit_test(test_bench), cmocka_unit_test(test_tasks),
	    cmocka_unit_test(test_feed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
