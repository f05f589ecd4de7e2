/*
 * bench_pod.c - the bench pod: the kernels of src/bench/bench_kernels.c in a Wasm pod.
 *
 * Through the node's pod HTTP server (X-Kube32-Pod: <ns>/<name>, port 7000):
 *
 *   GET /run?k=crc32&n=4&r=5   runs the kernel r times (default 5; n defaults to the page's
 *                              size, crc32 in KiB), timing each run with the node's clock:
 *                              "K32_BENCH kernel=crc32 n=4 runs=5 us_min=.. us_total=.. sum=.."
 *   GET /hostcall?n=100000     n host calls (k32_time_us):
 *                              "K32_BENCH hostcall calls=100000 us=.."
 *
 * The same lines as the node console's K32_CMD:BENCH (src/console), so one parser reads
 * both. Errors answer 400 with what was wrong. In-process benchmarks (wasm-bench) call the
 * exports run(k, n, r) and hostcall(n) directly.
 */
#include "bench_kernels.h"
#include "bench_line.h"
#include "k32_klet.h"

#define MAX_RUNS  100u
#define MAX_CALLS 10000000u

static char target[256];
static char out[BENCH_LINE_MAX + 2];

__attribute__((export_name("run"))) uint32_t run(uint32_t k, uint32_t n, uint32_t r)
{
	return bench_run(k, n, r);
}

__attribute__((export_name("hostcall"))) uint32_t hostcall(uint32_t n)
{
	return bench_hostcall(n);
}

static int64_t node_clock(void)
{
	return k32_time_us();
}

static int32_t reply(const char *s, uint32_t len, int32_t status)
{
	k32_http_write(s, len);
	k32_http_write("\n", 1);
	return status;
}

static uint32_t cstrlen(const char *s)
{
	uint32_t n = 0;

	while (s[n])
		n++;
	return n;
}

static int32_t bad(const char *msg)
{
	return reply(msg, cstrlen(msg), 400);
}

static bool has_prefix(const char *s, uint32_t len, const char *p)
{
	uint32_t i = 0;

	for (; p[i]; i++) {
		if (i >= len || s[i] != p[i])
			return false;
	}
	return i == len || s[i] == '?';
}

static int32_t do_run(uint32_t len)
{
	const char *kname;
	uint32_t klen, arg, runs = 5;
	struct bench_result r;

	if (!bench_query_str(target, len, "k", &kname, &klen))
		return bad("missing k=: one of fib, crc32, sieve, sort, mandel, json");
	uint32_t k = bench_kernel_find(kname, klen);
	if (k >= BENCH_KERNEL_COUNT)
		return bad("unknown kernel k=: use fib, crc32, sieve, sort, mandel or json");
	arg = bench_default_arg(k);
	if (bench_query_str(target, len, "n", &kname, &klen) &&
	    !bench_query_u32(target, len, "n", &arg))
		return bad("n= is not a number");
	if (bench_query_str(target, len, "r", &kname, &klen) &&
	    (!bench_query_u32(target, len, "r", &runs) || runs == 0 || runs > MAX_RUNS))
		return bad("r= must be a number from 1 to 100");
	bench_measure(k, arg, runs, node_clock, &r);
	return reply(out, bench_line_format(out, sizeof(out), &r), 200);
}

static int32_t do_hostcall(uint32_t len)
{
	uint32_t n = 100000;
	const char *v;
	uint32_t vl;

	if (bench_query_str(target, len, "n", &v, &vl) &&
	    (!bench_query_u32(target, len, "n", &n) || n > MAX_CALLS))
		return bad("n= must be a number up to 10000000");
	int64_t t0 = k32_time_us();
	uint32_t ok = bench_hostcall(n);
	int64_t t1 = k32_time_us();
	if (ok != n)
		return bad("the node's clock went backwards during the run");
	return reply(out, bench_line_format_hostcall(out, sizeof(out), n, (uint64_t)(t1 - t0)),
		     200);
}

K32_EXPORT(k32_http)
int32_t k32_http(uint32_t method, uint32_t path_len, uint32_t body_len)
{
	(void)path_len;
	(void)body_len;
	int32_t len = k32_http_path(target, sizeof(target));

	if (len < 0)
		return bad("request target longer than 256 bytes");
	if (method != K32_HTTP_GET)
		return bad("only GET /run?k=..&n=..&r=.. and GET /hostcall?n=.. are served");
	if (has_prefix(target, (uint32_t)len, "/run"))
		return do_run((uint32_t)len);
	if (has_prefix(target, (uint32_t)len, "/hostcall"))
		return do_hostcall((uint32_t)len);
	return reply("not found: use /run?k=crc32&n=4&r=5 or /hostcall?n=100000", 57, 404);
}
