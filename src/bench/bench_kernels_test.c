/*
 * bench_kernels_test.c - the bench kernels give their known answers natively, and the bench
 * pod (the same source compiled to wasm32 -Oz) gives the same checksums metered and
 * unmetered. This checks the interpreter on real clang output; speed is `make bench`'s job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench_kernels.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

static k32_status_t host_nop(struct k32_hostcall *call)
{
	call->results[0] = (uint32_t)call->args[0];
	return K32_OK;
}

static const struct k32_hostfn_def host[] = {{"kube32", "bench_nop", "i:i", host_nop, NULL}};

static uint32_t native_nop(uint32_t v)
{
	return v;
}

static void test_native_known_answers(void **state)
{
	(void)state;
	assert_int_equal(bench_run(BENCH_FIB, 15, 1), 610);
	assert_int_equal(bench_run(BENCH_SIEVE, 4096, 1), 564); /* primes below 4096 */
	assert_int_equal(bench_run(99, 1, 1), 0xFFFFFFFFu);
	bench_nop_fn = native_nop;
	assert_int_equal(bench_hostcall(100), 4950);
}

static void run_pod(bool metered)
{
	struct k32_heap heap;
	struct k32_allocator a;
	struct wrt_load_opts opts;
	struct wrt_limits lim;
	struct wrt_linker lk;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	struct k32_err err;
	uint8_t *bytes;
	size_t len;
	uint32_t run_fn, hc_fn;

	if (k32_plat()->file_read_all(K32_BENCH_POD_PATH, k32_default_allocator(), 1 << 20, &bytes,
				      &len, &err) != K32_OK)
		fail_msg("bench pod not built: %s", err.msg);
	k32_heap_init(&heap, 0);
	a = k32_heap_allocator(&heap);
	wrt_load_opts_default(&opts);
	opts.gas_metering = metered;
	assert_int_equal(wrt_module_load(&a, bytes, len, &opts, &mod, &err), K32_OK);
	wrt_linker_init(&lk);
	assert_int_equal(wrt_linker_add_host(&lk, host, 1, &err), K32_OK);
	wrt_limits_default(&lim);
	lim.mem_bytes = 24 * 1024;
	lim.gas_enabled = metered;
	lim.gas = 1ull << 40;
	lim.canonical_nan = true;
	assert_int_equal(wrt_instance_new(mod, &lk, &lim, &a, NULL, &inst, &err), K32_OK);
	assert_int_equal(wrt_export_func(inst, "run", &run_fn, &err), K32_OK);
	assert_int_equal(wrt_export_func(inst, "hostcall", &hc_fn, &err), K32_OK);
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		uint64_t args[3] = {k, bench_default_n(k), 2};
		uint64_t res = 0;

		if (wrt_invoke(inst, run_fn, args, 3, &res, 1, &err) != K32_OK)
			fail_msg("kernel %u: %s", k, err.msg);
		uint32_t want = bench_run(k, bench_default_n(k), 2);
		if ((uint32_t)res != want)
			fail_msg("kernel %u: pod %08x, native %08x", k, (uint32_t)res, want);
	}
	uint64_t n = 1000, res = 0;
	assert_int_equal(wrt_invoke(inst, hc_fn, &n, 1, &res, 1, &err), K32_OK);
	assert_int_equal((uint32_t)res, 499500);

	/* A tiny gas budget stops the pod with an out-of-gas trap, and the instance is usable
	 * after it. */
	if (metered) {
		struct wrt_instance *small;
		uint64_t args[3] = {BENCH_FIB, 25, 1};

		lim.gas = 1000;
		assert_int_equal(wrt_instance_new(mod, &lk, &lim, &a, NULL, &small, &err), K32_OK);
		assert_int_equal(wrt_invoke(small, run_fn, args, 3, &res, 1, &err), K32_ERR_TRAP);
		assert_non_null(strstr(err.msg, "gas"));
		args[1] = 2;
		assert_int_equal(wrt_invoke(small, run_fn, args, 3, &res, 1, &err), K32_OK);
		assert_int_equal((uint32_t)res, 1);
		wrt_instance_free(small);
	}
	wrt_instance_free(inst);
	wrt_module_free(mod);
	assert_int_equal(heap.stats.cur_bytes, 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_native_known_answers),
	    cmocka_unit_test(test_pod_metered_matches_native),
	    cmocka_unit_test(test_pod_unmetered_matches_native),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
