/*
 * bench_kernels_test.c - correctness of the benchmark tools, never their speed: the kernels
 * give their known answers natively; the bench pod (the same source compiled to wasm32 -Oz)
 * gives the same checksums metered and unmetered; the K32_BENCH line round-trips through its
 * formatter and parser; the pod's HTTP handler answers /run and /hostcall with lines the
 * parser reads and rejects bad requests with 400/404.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench_host.h"
#include "bench_kernels.h"
#include "bench_line.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

static int64_t fake_now;

static int64_t fake_clock(void)
{
	return fake_now += 7;
}

static void test_native_known_answers(void **state)
{
	(void)state;
	assert_int_equal(bench_run(BENCH_FIB, 15, 1), 610);
	assert_int_equal(bench_run(BENCH_SIEVE, 4096, 1), 564); /* primes below 4096 */
	assert_int_equal(bench_run(99, 1, 1), 0xFFFFFFFFu);
	bench_clock_fn = fake_clock;
	assert_int_equal(bench_hostcall(100), 100);
}

static void test_kernel_names_and_args(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint32_t kernel;
		uint32_t arg;
		uint32_t n;
	} cases[] = {
	    {"fib", BENCH_FIB, 15, 15},		{"crc32", BENCH_CRC32, 4, 4096},
	    {"sieve", BENCH_SIEVE, 4096, 4096}, {"sort", BENCH_SORT, 1024, 1024},
	    {"mandel", BENCH_MANDEL, 32, 32},	{"json", BENCH_JSON, 200, 200},
	    {"crc", BENCH_KERNEL_COUNT, 0, 0},	{"crc32x", BENCH_KERNEL_COUNT, 0, 0},
	    {"", BENCH_KERNEL_COUNT, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t k = bench_kernel_find(cases[i].name, (uint32_t)strlen(cases[i].name));
		assert_int_equal(k, cases[i].kernel);
		if (k == BENCH_KERNEL_COUNT)
			continue;
		assert_string_equal(bench_kernel_name(k), cases[i].name);
		assert_int_equal(bench_default_arg(k), cases[i].arg);
		assert_int_equal(bench_arg_to_n(k, cases[i].arg), cases[i].n);
		assert_int_equal(bench_arg_to_n(k, cases[i].arg), bench_default_n(k));
	}
	assert_int_equal(bench_arg_to_n(BENCH_CRC32, 1000), 8192); /* clamped to the scratch */
	assert_string_equal(bench_kernel_name(42), "?");
}

static void assert_result_equal(const struct bench_result *a, const struct bench_result *b)
{
	assert_int_equal(a->kernel, b->kernel);
	assert_int_equal(a->arg, b->arg);
	assert_int_equal(a->runs, b->runs);
	assert_int_equal(a->us_min, b->us_min);
	assert_int_equal(a->us_total, b->us_total);
	assert_int_equal(a->sum, b->sum);
}

static void test_line_round_trip(void **state)
{
	(void)state;
	char buf[BENCH_LINE_MAX + 1];
	struct bench_result r = {BENCH_CRC32, 4, 5, 880, 4420, 0xFFFFFFFFu}, back;
	uint32_t len = bench_line_format(buf, sizeof(buf), &r);

	assert_string_equal(
	    buf, "K32_BENCH kernel=crc32 n=4 runs=5 us_min=880 us_total=4420 sum=4294967295");
	assert_int_equal(len, strlen(buf));
	assert_true(bench_line_parse(buf, len, &back));
	assert_result_equal(&r, &back);

	/* the longest line fits BENCH_LINE_MAX */
	struct bench_result big = {BENCH_MANDEL, UINT32_MAX, UINT32_MAX,
				   UINT64_MAX,	 UINT64_MAX, UINT32_MAX};
	assert_true(bench_line_format(buf, sizeof(buf), &big) > 0);
	assert_true(bench_line_parse(buf, (uint32_t)strlen(buf), &back));
	assert_result_equal(&big, &back);
	assert_int_equal(bench_line_format(buf, 20, &r), 0); /* too small: 0 and empty */
	assert_string_equal(buf, "");

	len = bench_line_format_hostcall(buf, sizeof(buf), 100000, 2440);
	assert_string_equal(buf, "K32_BENCH hostcall calls=100000 us=2440");
	uint32_t calls;
	uint64_t us;
	assert_true(bench_line_parse_hostcall(buf, len, &calls, &us));
	assert_int_equal(calls, 100000);
	assert_int_equal(us, 2440);
}

static void test_line_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "K32_BENCH",
	    "K32_BENCH kernel=crc33 n=4 runs=5 us_min=1 us_total=2 sum=3",
	    "K32_BENCH kernel=crc32 n=4 runs=5 us_min=1 us_total=2",
	    "K32_BENCH kernel=crc32 n=4 runs=5 us_min=1 us_total=2 sum=3 extra=1",
	    "K32_BENCH kernel=crc32 n=-4 runs=5 us_min=1 us_total=2 sum=3",
	    "K32_BENCH kernel=crc32 n=4294967296 runs=5 us_min=1 us_total=2 sum=3",
	    "K32_BENCH kernel=crc32 runs=5 n=4 us_min=1 us_total=2 sum=3",
	    "K32_BENCH kernel=crc32 n= runs=5 us_min=1 us_total=2 sum=3",
	    "k32_bench kernel=crc32 n=4 runs=5 us_min=1 us_total=2 sum=3",
	    "K32_BENCH kernel=crc32 n=4 runs=5 us_min=99999999999999999999 us_total=2 sum=3",
	};
	struct bench_result r;
	uint32_t calls;
	uint64_t us;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bench_line_parse(bad[i], (uint32_t)strlen(bad[i]), &r))
			fail_msg("accepted: %s", bad[i]);
	}
	/* a NUL inside the given length is junk */
	static const char with_nul[] =
	    "K32_BENCH kernel=fib n=15 runs=1 us_min=1 us_total=1 sum=610";
	assert_false(bench_line_parse(with_nul, sizeof(with_nul), &r));
	const char *ok = "K32_BENCH kernel=fib n=15 runs=1 us_min=1 us_total=1 sum=610\r\n";
	assert_true(bench_line_parse(ok, (uint32_t)strlen(ok), &r));
	assert_int_equal(r.sum, 610);
	assert_false(bench_line_parse_hostcall("K32_BENCH hostcall calls=1", 26, &calls, &us));
	assert_false(bench_line_parse_hostcall("K32_BENCH hostcall us=1 calls=1", 31, &calls, &us));
}

static void test_query(void **state)
{
	(void)state;
	static const struct {
		const char *q;
		const char *key;
		bool found;
		uint32_t val;
	} cases[] = {
	    {"/run?k=crc32&n=4&r=5", "n", true, 4},
	    {"/run?k=crc32&n=4&r=5", "r", true, 5},
	    {"/run?k=crc32&nn=4&r=5", "n", false, 0},
	    {"/run?k=crc32&n=&r=5", "n", false, 0},
	    {"/run?n=4294967295", "n", true, UINT32_MAX},
	    {"/run?n=4294967296", "n", false, 0},
	    {"/run?n=12x", "n", false, 0},
	    {"n=3", "n", true, 3},
	    {"/run", "n", false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = 0;
		bool f =
		    bench_query_u32(cases[i].q, (uint32_t)strlen(cases[i].q), cases[i].key, &v);
		if (f != cases[i].found || (f && v != cases[i].val))
			fail_msg("case %zu: %s %s", i, cases[i].q, cases[i].key);
	}
	const char *v;
	uint32_t vl;
	assert_true(bench_query_str("/run?k=crc32&n=4", 16, "k", &v, &vl));
	assert_int_equal(vl, 5);
	assert_memory_equal(v, "crc32", 5);
}

static void load_pod(uint8_t **bytes, size_t *len)
{
	struct k32_err err;

	if (k32_plat()->file_read_all(K32_BENCH_POD_PATH, k32_default_allocator(), 1 << 20, bytes,
				      len, &err) != K32_OK)
		fail_msg("bench pod not built: %s", err.msg);
}

static void run_pod(bool metered)
{
	struct bench_pod p;
	struct bench_pod_opts o = {.metered = metered, .mem_bytes = 24 * 1024};
	struct k32_err err;
	uint8_t *bytes;
	size_t len;
	uint32_t sum;

	load_pod(&bytes, &len);
	assert_int_equal(bench_pod_open(&p, bytes, len, &o, &err), K32_OK);
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		if (bench_pod_run(&p, k, bench_default_n(k), 2, &sum, &err) != K32_OK)
			fail_msg("kernel %u: %s", k, err.msg);
		uint32_t want = bench_run(k, bench_default_n(k), 2);
		if (sum != want)
			fail_msg("kernel %u: pod %08x, native %08x", k, sum, want);
	}
	assert_int_equal(bench_pod_hostcall(&p, 1000, &sum, &err), K32_OK);
	assert_int_equal(sum, 1000);
	bench_pod_close(&p);

	/* A tiny gas budget stops the pod with an out-of-gas trap; the instance is usable
	 * after it. */
	if (metered) {
		o.gas = 100000; /* fib(25) makes 242,785 calls: far more; fib(2) far less */
		assert_int_equal(bench_pod_open(&p, bytes, len, &o, &err), K32_OK);
		assert_int_equal(bench_pod_run(&p, BENCH_FIB, 25, 1, &sum, &err), K32_ERR_TRAP);
		assert_non_null(strstr(err.msg, "gas"));
		assert_int_equal(bench_pod_run(&p, BENCH_FIB, 2, 1, &sum, &err), K32_OK);
		assert_int_equal(sum, 1);
		bench_pod_close(&p);
	}
	k32_free(k32_default_allocator(), bytes, len + 1);
}

static void test_pod_metered_matches_native(void **state)
{
	(void)state;
	run_pod(true);
}

static void test_pod_unmetered_matches_native(void **state)
{
	(void)state;
	run_pod(false);
}

static void test_pod_http(void **state)
{
	(void)state;
	struct bench_pod p;
	struct bench_pod_opts o = {.metered = true, .mem_bytes = 24 * 1024};
	struct k32_err err;
	struct bench_result r;
	uint8_t *bytes;
	size_t len;
	int32_t status;
	static const struct {
		const char *target;
		int32_t status;
		const char *body_has;
	} cases[] = {
	    {"/run?k=nope", 400, "unknown kernel"},
	    {"/run", 400, "missing k="},
	    {"/run?k=fib&n=x", 400, "n= is not a number"},
	    {"/run?k=fib&r=0", 400, "r= must be"},
	    {"/run?k=fib&r=101", 400, "r= must be"},
	    {"/hostcall?n=99999999999", 400, "n= must be"},
	    {"/other", 404, "not found"},
	    {"/hostcall?n=1000", 200, "K32_BENCH hostcall calls=1000 us="},
	};

	load_pod(&bytes, &len);
	assert_int_equal(bench_pod_open(&p, bytes, len, &o, &err), K32_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bench_pod_get(&p, cases[i].target, &status, &err), K32_OK);
		if (status != cases[i].status || !strstr(p.req.body, cases[i].body_has))
			fail_msg("%s: %d %s", cases[i].target, status, p.req.body);
	}
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		char target[64];
		snprintf(target, sizeof(target), "/run?k=%s&n=%u&r=2", bench_kernel_name(k),
			 bench_default_arg(k));
		assert_int_equal(bench_pod_get(&p, target, &status, &err), K32_OK);
		assert_int_equal(status, 200);
		if (!bench_line_parse(p.req.body, p.req.body_len, &r))
			fail_msg("%s: unparsable %s", target, p.req.body);
		assert_int_equal(r.kernel, k);
		assert_int_equal(r.runs, 2);
		assert_true(r.us_min <= r.us_total);
		assert_int_equal(r.sum, bench_run(k, bench_default_n(k), 1));
	}
	/* n defaults to the page's size */
	assert_int_equal(bench_pod_get(&p, "/run?k=crc32&r=1", &status, &err), K32_OK);
	assert_true(bench_line_parse(p.req.body, p.req.body_len, &r));
	assert_int_equal(r.arg, 4);
	bench_pod_close(&p);
	k32_free(k32_default_allocator(), bytes, len + 1);
}

static void test_measure_native(void **state)
{
	(void)state;
	struct bench_result r;

	fake_now = 0;
	bench_measure(BENCH_FIB, 10, 3, fake_clock, &r);
	assert_int_equal(r.runs, 3);
	assert_int_equal(r.us_min, 7);
	assert_int_equal(r.us_total, 21);
	assert_int_equal(r.sum, 55);
	bench_measure(BENCH_FIB, 10, 0, fake_clock, &r);
	assert_int_equal(r.runs, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_native_known_answers),
	    cmocka_unit_test(test_kernel_names_and_args),
	    cmocka_unit_test(test_line_round_trip),
	    cmocka_unit_test(test_line_rejects),
	    cmocka_unit_test(test_query),
	    cmocka_unit_test(test_measure_native),
	    cmocka_unit_test(test_pod_metered_matches_native),
	    cmocka_unit_test(test_pod_unmetered_matches_native),
	    cmocka_unit_test(test_pod_http),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
