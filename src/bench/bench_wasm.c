/*
 * bench_wasm.c - `wasm-bench`: the bench kernels natively against the bench pod, in one run.
 *
 *   wasm-bench [--pod PATH] [--runs N] [--ops]
 *
 * For each kernel of bench_kernels.c: the native time (gcc, this build's flags), the pod
 * metered (gas compiled in and charged) and the pod unmetered (module loaded without gas
 * code, as `kube32.io/execution-budget: "off"` runs it), each the fastest of N runs (default
 * 5) of the same number of repetitions, as microseconds per kernel call and the ratio to
 * native; the checksums of all three must agree or the program fails. Then the host-call
 * crossing (pod calling an identity host function) against a native indirect call, the
 * compiled-code size per byte of Wasm, and instantiation time.
 *
 * With --ops: executed internal ops per kernel (the interpreter's count_ops mode), ns per
 * op from the unmetered time, the op mix, and the cost per gas charge derived from the
 * metered/unmetered difference and the number of GAS ops executed.
 *
 * The pod runs in-process through wrt.h here; the benchmarks page also measures it through a
 * kubelet over HTTP (docs/benchmarks.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

#define POD_MEM_BYTES	 (24u * 1024u) /* the bench pod's memory limit on the boards */
#define TARGET_NATIVE_US 3000u	       /* repetitions are chosen so native takes about this */

static const char *const kernel_names[BENCH_KERNEL_COUNT] = {
    "fib: recursive Fibonacci, n = 15 (calls)",
    "crc32: bitwise CRC-32 of 4 KiB (byte loads, shifts)",
    "sieve: sieve of Eratosthenes below 4096 (byte stores)",
    "sort: heapsort of 1024 words (compares, swaps)",
    "mandel: 32 x 32 Mandelbrot, 64 iterations (float)",
    "json: 200 small JSON records (text)",
};

struct pod {
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t run_fn;
	uint32_t hostcall_fn;
};

static k32_status_t host_nop(struct k32_hostcall *call)
{
	call->results[0] = (uint32_t)call->args[0];
	return K32_OK;
}

static const struct k32_hostfn_def bench_host[] = {
    {"kube32", "bench_nop", "i:i", host_nop, NULL},
};

static uint32_t native_nop(uint32_t v)
{
	return v;
}

static void die(const char *what, const struct k32_err *err)
{
	fprintf(stderr, "wasm-bench: %s: %s\n", what, err->msg);
	exit(1);
}

static void pod_open(struct pod *p, const uint8_t *bytes, size_t len, bool metered, bool count_ops)
{
	struct wrt_load_opts opts;
	struct wrt_limits lim;
	struct wrt_linker lk;
	struct k32_err err;

	wrt_load_opts_default(&opts);
	opts.gas_metering = metered;
	if (wrt_module_load(k32_default_allocator(), bytes, len, &opts, &p->mod, &err) != K32_OK)
		die("loading the bench pod", &err);
	wrt_linker_init(&lk);
	if (wrt_linker_add_host(&lk, bench_host, 1, &err) != K32_OK)
		die("linking", &err);
	wrt_limits_default(&lim);
	lim.mem_bytes = POD_MEM_BYTES;
	lim.gas_enabled = metered;
	lim.gas = UINT64_MAX / 4; /* metered, but never out of gas: we measure the charging */
	lim.canonical_nan = true;
	lim.count_ops = count_ops;
	if (wrt_instance_new(p->mod, &lk, &lim, k32_default_allocator(), NULL, &p->inst, &err) !=
	    K32_OK)
		die("instantiating the bench pod", &err);
	if (wrt_export_func(p->inst, "run", &p->run_fn, &err) != K32_OK ||
	    wrt_export_func(p->inst, "hostcall", &p->hostcall_fn, &err) != K32_OK)
		die("finding exports", &err);
}

static void pod_close(struct pod *p)
{
	wrt_instance_free(p->inst);
	wrt_module_free(p->mod);
}

static uint32_t pod_call(struct pod *p, uint32_t fn, uint32_t a, uint32_t b, uint32_t c,
			 uint32_t nargs)
{
	uint64_t args[3] = {a, b, c};
	uint64_t res = 0;
	struct k32_err err;

	if (wrt_invoke(p->inst, fn, args, nargs, &res, 1, &err) != K32_OK)
		die("running the bench pod", &err);
	return (uint32_t)res;
}

/* Fastest of runs: microseconds for reps repetitions. */
static double time_native(uint32_t k, uint32_t n, uint32_t reps, uint32_t runs, uint32_t *sum)
{
	double best = 1e18;

	for (uint32_t i = 0; i < runs; i++) {
		uint64_t t0 = k32_now_us();

		*sum = bench_run(k, n, reps);
		double us = (double)(k32_now_us() - t0);
		if (us < best)
			best = us;
	}
	return best;
}

static double time_pod(struct pod *p, uint32_t k, uint32_t n, uint32_t reps, uint32_t runs,
		       uint32_t *sum)
{
	double best = 1e18;

	for (uint32_t i = 0; i < runs; i++) {
		uint64_t t0 = k32_now_us();

		*sum = pod_call(p, p->run_fn, k, n, reps, 3);
		double us = (double)(k32_now_us() - t0);
		if (us < best)
			best = us;
	}
	return best;
}

static uint32_t calibrate_reps(uint32_t k, uint32_t n)
{
	uint32_t reps = 1;
	uint32_t sum;

	while (reps < (1u << 24) && time_native(k, n, reps, 1, &sum) < TARGET_NATIVE_US)
		reps *= 2;
	return reps;
}

static void print_ops(struct pod *counted, const double *unmetered_us, const double *metered_us,
		      const uint32_t *reps)
{
	uint32_t nops = wrt_op_count();
	uint64_t *before = calloc(nops, sizeof(uint64_t));
	uint32_t gas_op = UINT32_MAX;

	if (!before)
		return;
	for (uint32_t i = 0; i < nops; i++) {
		if (strcmp(wrt_op_name(i), "GAS") == 0)
			gas_op = i;
	}
	printf("\nOps executed per kernel call (interpreter internal ops, count_ops mode)\n\n");
	printf("%-8s %12s %10s %10s  %s\n", "kernel", "ops", "ns/op", "ns/gas", "top ops");
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		const uint64_t *c = wrt_op_counts(counted->inst);
		uint64_t total = 0;
		uint64_t gas = 0;
		uint32_t top[4] = {0, 0, 0, 0};

		memcpy(before, c, nops * sizeof(uint64_t));
		pod_call(counted, counted->run_fn, k, bench_default_n(k), 1, 3);
		c = wrt_op_counts(counted->inst);
		for (uint32_t i = 0; i < nops; i++) {
			uint64_t d = c[i] - before[i];

			total += d;
			before[i] = d;
		}
		if (gas_op != UINT32_MAX)
			gas = before[gas_op];
		for (int t = 0; t < 4; t++) {
			uint64_t best = 0;

			for (uint32_t i = 0; i < nops; i++) {
				bool taken = false;

				for (int u = 0; u < t; u++)
					taken |= top[u] == i;
				if (!taken && before[i] > best) {
					best = before[i];
					top[t] = i;
				}
			}
		}
		double per_call_unmetered = unmetered_us[k] / reps[k] * 1000.0;
		double per_call_metered = metered_us[k] / reps[k] * 1000.0;
		printf("%-8.*s %12llu %10.2f %10.2f ", (int)strcspn(kernel_names[k], ":"),
		       kernel_names[k], (unsigned long long)total,
		       per_call_unmetered / (double)total,
		       gas ? (per_call_metered - per_call_unmetered) / (double)gas : 0.0);
		for (int t = 0; t < 4; t++)
			printf(" %s %.0f%%", wrt_op_name(top[t]),
			       100.0 * (double)before[top[t]] / (double)total);
		printf("\n");
	}
	printf("\nns/gas: (metered - unmetered) time per GAS op executed: the cost of one gas "
	       "charge.\n");
	free(before);
}

int main(int argc, char **argv)
{
	const char *path = K32_BENCH_POD_PATH;
	uint32_t runs = 5;
	bool ops = false;
	uint8_t *bytes;
	size_t len;
	struct k32_err err;
	struct pod metered, unmetered;
	double nat_us[BENCH_KERNEL_COUNT], met_us[BENCH_KERNEL_COUNT], unm_us[BENCH_KERNEL_COUNT];
	uint32_t reps[BENCH_KERNEL_COUNT];
	double log_met = 0, log_unm = 0, worst_unm = 0, worst_overhead = 0;
	bool sums_ok = true;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pod") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = (uint32_t)strtoul(argv[++i], NULL, 10);
			if (runs == 0)
				runs = 1;
		} else if (!strcmp(argv[i], "--ops")) {
			ops = true;
		} else {
			fprintf(stderr, "usage: wasm-bench [--pod PATH] [--runs N] [--ops]\n");
			return 2;
		}
	}
	if (k32_plat()->file_read_all(path, k32_default_allocator(), 16u << 20, &bytes, &len,
				      &err) != K32_OK)
		die("reading the bench pod (build it with `make`; needs clang and wasm-ld)", &err);
	bench_nop_fn = native_nop;
	pod_open(&metered, bytes, len, true, false);
	pod_open(&unmetered, bytes, len, false, false);

	printf("Wasm against native code (fastest of %u runs; µs per kernel call)\n\n", runs);
	printf("%-55s %10s %18s %18s %9s %s\n", "Kernel", "Native", "Pod, metered",
	       "Pod, unmetered", "metering", "checksum");
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		uint32_t n = bench_default_n(k);
		uint32_t s_nat, s_met, s_unm;
		char met[32], unm[32];

		reps[k] = calibrate_reps(k, n);
		nat_us[k] = time_native(k, n, reps[k], runs, &s_nat);
		met_us[k] = time_pod(&metered, k, n, reps[k], runs, &s_met);
		unm_us[k] = time_pod(&unmetered, k, n, reps[k], runs, &s_unm);
		double rm = met_us[k] / nat_us[k], ru = unm_us[k] / nat_us[k];
		double overhead = (met_us[k] / unm_us[k] - 1.0) * 100.0;

		log_met += log(rm);
		log_unm += log(ru);
		if (ru > worst_unm)
			worst_unm = ru;
		if (overhead > worst_overhead)
			worst_overhead = overhead;
		snprintf(met, sizeof(met), "%.2f (%.1fx)", met_us[k] / reps[k], rm);
		snprintf(unm, sizeof(unm), "%.2f (%.1fx)", unm_us[k] / reps[k], ru);
		bool same = s_nat == s_met && s_nat == s_unm;
		sums_ok &= same;
		printf("%-55s %10.2f %18s %18s %8.1f%% %08x%s\n", kernel_names[k],
		       nat_us[k] / reps[k], met, unm, overhead, s_nat, same ? "" : " MISMATCH");
	}
	printf("\ngeometric mean: metered %.1fx, unmetered %.1fx native; worst unmetered %.1fx; "
	       "metering adds at most %.1f%%\n",
	       exp(log_met / BENCH_KERNEL_COUNT), exp(log_unm / BENCH_KERNEL_COUNT), worst_unm,
	       worst_overhead);

	/* Host call crossing. */
	{
		const uint32_t calls = 1000000;
		uint32_t s_nat = 0, s_pod = 0;
		double best_nat = 1e18, best_pod = 1e18;

		for (uint32_t i = 0; i < runs; i++) {
			uint64_t t0 = k32_now_us();

			s_nat = bench_hostcall(calls);
			double us = (double)(k32_now_us() - t0);
			if (us < best_nat)
				best_nat = us;
			t0 = k32_now_us();
			s_pod = pod_call(&unmetered, unmetered.hostcall_fn, calls, 0, 0, 1);
			us = (double)(k32_now_us() - t0);
			if (us < best_pod)
				best_pod = us;
		}
		sums_ok &= s_nat == s_pod;
		printf(
		    "\nHost call: native indirect call %.2f ns; pod (unmetered) calling the host "
		    "%.2f ns per call (loop included); crossing %.2f ns%s\n",
		    best_nat * 1000.0 / calls, best_pod * 1000.0 / calls,
		    (best_pod - best_nat) * 1000.0 / calls, s_nat == s_pod ? "" : " MISMATCH");
	}

	/* Code size and instantiation. */
	{
		size_t compiled, wasm;
		struct wrt_stats st;

		wrt_module_code_size(metered.mod, &compiled, &wasm);
		wrt_instance_stats(metered.inst, &st);
		printf(
		    "\nCompiled code: %zu bytes from %zu bytes of Wasm code (%.2f bytes per byte, "
		    "metered build)\n",
		    compiled, wasm, (double)compiled / (double)wasm);
		wrt_module_code_size(unmetered.mod, &compiled, &wasm);
		printf("Compiled code: %zu bytes from %zu bytes of Wasm code (%.2f bytes per byte, "
		       "unmetered build)\n",
		       compiled, wasm, (double)compiled / (double)wasm);
		printf(
		    "Instance: memory %zu, stacks %zu, tables %zu, runtime %zu, module %zu bytes\n",
		    st.memory_bytes, st.stack_bytes, st.table_bytes, st.runtime_bytes,
		    st.module_bytes);

		double best = 1e18;
		for (int i = 0; i < 200; i++) {
			struct pod p;
			uint64_t t0 = k32_now_us();

			pod_open(&p, bytes, len, true, false);
			double us = (double)(k32_now_us() - t0);
			pod_close(&p);
			if (us < best)
				best = us;
		}
		printf("Load + instantiate the bench pod: %.1f µs (fastest of 200)\n", best);
	}

	if (ops) {
		struct pod counted;

		pod_open(&counted, bytes, len, true, true);
		print_ops(&counted, unm_us, met_us, reps);
		pod_close(&counted);
	}
	pod_close(&metered);
	pod_close(&unmetered);
	k32_free(k32_default_allocator(), bytes, len + 1);
	if (!sums_ok) {
		fprintf(stderr, "wasm-bench: checksums differ between native and pod runs\n");
		return 1;
	}
	return 0;
}
