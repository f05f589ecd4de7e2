/*
 * bench_wasm.c - `wasm-bench`: the Wasm sections of the benchmarks page, printed as Markdown
 * (scripts/bench_page.py pastes them under their headings in docs/benchmarks.md).
 *
 *   wasm-bench [--pod PATH] [--runs N] [--section NAME] [--mhz F] [--module NAME=PATH ...]
 *
 * Sections (default: kernels):
 *   kernels  the six kernels natively (this build, -O2) against the bench pod in-process
 *            (apps/bench/bench.wasm, -Oz), metered and unmetered, fastest of N runs (default
 *            5), ratios, equal checksums (a mismatch fails the program); the host call
 *            crossing; compiled code per Wasm byte; instantiation; a verdict per target of
 *            the runtime issue.
 *   ops      executed internal ops per kernel (count_ops), ns per op, cycles per op at the
 *            nominal clock --mhz when given, native ns per op, op mix by group, cost of one
 *            gas check.
 *   stack    native stack used by wrt_invoke against function length and call depth, and
 *            the trap a pod gets past its Wasm stack.
 *   memory   per-pod memory (wrt_instance_stats, accounted as the kubelet does) of the bench
 *            pod and of each --module NAME=PATH (the drivers), on the cardputer limits.
 *
 * Context: a command-line tool on the host; timings use the platform's monotonic clock.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_host.h"
#include "bench_kernels.h"
#include "bench_md.h"
#include "k32/k32_config.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"
#ifdef K32_BENCH_HAVE_HW
#include "hw/hw.h"
#endif

#define POD_MEM_BYTES	 (24u * 1024u) /* the bench pod's memory limit on the boards */
#define TARGET_NATIVE_US 3000u	       /* repetitions are chosen so native takes about this */
#define MAX_MODULES	 8
#define DRIVER_MEM_BYTES (2u * 1024u) /* a driver pod's memory limit (hw_device.c manifest) */

/* Targets of the runtime issue (issue 3). */
#define TARGET_GEOMEAN	     12.0  /* unmetered, times native */
#define TARGET_WORST	     20.0  /* unmetered, no kernel worse */
#define TARGET_METERING_PCT  10.0  /* metered over unmetered */
#define TARGET_HOSTCALL_NS   10.0  /* crossing */
#define TARGET_CODE_PER_BYTE 2.5   /* compiled bytes per Wasm byte */
#define TARGET_INSTANTIATE   100.0 /* µs */

static const char *const kernel_desc[BENCH_KERNEL_COUNT] = {
    "fib: recursive Fibonacci, n = 15 (calls)",
    "crc32: bitwise CRC-32 of 4 KiB (byte loads, shifts)",
    "sieve: sieve of Eratosthenes below 4096 (byte stores)",
    "sort: heapsort of 1024 words (compares, swaps)",
    "mandel: 32 x 32 Mandelbrot, 64 iterations (float)",
    "json: 200 small JSON records (text)",
};

struct opts {
	const char *pod_path;
	uint32_t runs;
	double mhz;
	const char *mod_name[MAX_MODULES];
	const char *mod_path[MAX_MODULES];
	uint32_t nmod;
};

/* Results of the kernels pass that the ops section reuses. */
struct kernel_times {
	double nat_us[BENCH_KERNEL_COUNT]; /* per kernel call */
	double met_us[BENCH_KERNEL_COUNT];
	double unm_us[BENCH_KERNEL_COUNT];
	uint32_t reps[BENCH_KERNEL_COUNT];
	bool sums_ok;
};

static void die(const char *what, const struct k32_err *err)
{
	fprintf(stderr, "wasm-bench: %s: %s\n", what, err->msg);
	exit(1);
}

static int64_t native_clock(void)
{
	return (int64_t)k32_now_us();
}

static int64_t native_counter(void)
{
	static int64_t counter;

	return ++counter;
}

static void md_row(const char *const *cells, size_t n, int header)
{
	char buf[1024];

	if (bench_md_row(buf, sizeof(buf), cells, n, header))
		fputs(buf, stdout);
}

static const char *num(char *buf, double v, int prec)
{
	return bench_md_num(buf, 32, v, prec);
}

static void pod_open(struct bench_pod *p, const uint8_t *bytes, size_t len, bool metered,
		     bool count_ops)
{
	struct bench_pod_opts o = {
	    .metered = metered, .count_ops = count_ops, .mem_bytes = POD_MEM_BYTES};
	struct k32_err err;

	if (bench_pod_open(p, bytes, len, &o, &err) != K32_OK)
		die("opening the bench pod", &err);
}

static uint32_t pod_run(struct bench_pod *p, uint32_t k, uint32_t n, uint32_t reps)
{
	struct k32_err err;
	uint32_t sum;

	if (bench_pod_run(p, k, n, reps, &sum, &err) != K32_OK)
		die("running the bench pod", &err);
	return sum;
}

/* One run: microseconds for reps repetitions (pod NULL: native). */
static double time_once(struct bench_pod *p, uint32_t k, uint32_t n, uint32_t reps, uint32_t *sum)
{
	uint64_t t0 = k32_now_us();

	*sum = p ? pod_run(p, k, n, reps) : bench_run(k, n, reps);
	return (double)(k32_now_us() - t0);
}

/* Fastest of runs (pod NULL: native). */
static double time_kernel(struct bench_pod *p, uint32_t k, uint32_t n, uint32_t reps, uint32_t runs,
			  uint32_t *sum)
{
	double best = 1e18;

	for (uint32_t i = 0; i < runs; i++) {
		double us = time_once(p, k, n, reps, sum);
		if (us < best)
			best = us;
	}
	return best;
}

static uint32_t calibrate_reps(uint32_t k, uint32_t n)
{
	uint32_t reps = 1;
	uint32_t sum;

	while (reps < (1u << 24) && time_kernel(NULL, k, n, reps, 1, &sum) < TARGET_NATIVE_US)
		reps *= 2;
	return reps;
}

static void verdict(const char *what, double got, const char *unit, double target, bool below,
		    bool strict)
{
	bool met = below ? (strict ? got < target : got <= target)
			 : (strict ? got > target : got >= target);
	double by = below ? got / target : target / got;

	printf("- %s: %.2f%s against a target of %s %.1f%s (issue 3): **%s**", what, got, unit,
	       below ? (strict ? "under" : "at most") : "at least", target, unit,
	       met ? "met" : "not met");
	if (!met)
		printf(" (%.2fx the target)", by);
	printf("\n");
}

static void section_kernels(const struct opts *o, const uint8_t *bytes, size_t len,
			    struct kernel_times *t)
{
	struct bench_pod met, unm;
	double log_met = 0, log_unm = 0, worst_unm = 0, worst_overhead = -1e9;
	const char *worst_kernel = "";
	char a[32], b[32], c[32], d[32], e[32];

	pod_open(&met, bytes, len, true, false);
	pod_open(&unm, bytes, len, false, false);
	t->sums_ok = true;
	printf(
	    "Fastest of %u runs, in µs per kernel call (each run repeats the kernel so that the "
	    "native side takes about %u µs; native, metered and unmetered take turns within each "
	    "run); ratio to native in brackets. Metering is the metered time over the "
	    "unmetered. Spread is the slowest run over the fastest, the worst of the three "
	    "sides: how noisy the machine was.\n\n",
	    o->runs, TARGET_NATIVE_US);
	md_row((const char *[]){"Kernel", "Native", "Pod, metered", "Pod, unmetered", "Metering",
				"Spread", "Checksum (all three)"},
	       7, 1);
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		uint32_t n = bench_default_n(k);
		uint32_t s_nat = 0, s_met = 1, s_unm = 2;
		char met_s[64], unm_s[64], sum_s[32];

		/* the three sides take turns in each run, so a busy moment of this shared
		 * machine hits all of them alike; each keeps its fastest run */
		double best[3] = {1e18, 1e18, 1e18}, worst[3] = {0, 0, 0};
		t->reps[k] = calibrate_reps(k, n);
		for (uint32_t i = 0; i < o->runs; i++) {
			double us[3] = {time_once(NULL, k, n, t->reps[k], &s_nat),
					time_once(&met, k, n, t->reps[k], &s_met),
					time_once(&unm, k, n, t->reps[k], &s_unm)};
			for (int j = 0; j < 3; j++) {
				best[j] = us[j] < best[j] ? us[j] : best[j];
				worst[j] = us[j] > worst[j] ? us[j] : worst[j];
			}
		}
		double nat = best[0] / t->reps[k], mt = best[1] / t->reps[k],
		       un = best[2] / t->reps[k];
		double rm = mt / nat, ru = un / nat, ovh = (mt / un - 1.0) * 100.0;
		double spread = 0;
		for (int j = 0; j < 3; j++)
			spread = worst[j] / best[j] > spread ? worst[j] / best[j] : spread;

		t->nat_us[k] = nat;
		t->met_us[k] = mt;
		t->unm_us[k] = un;
		log_met += log(rm);
		log_unm += log(ru);
		if (ru > worst_unm) {
			worst_unm = ru;
			worst_kernel = bench_kernel_name(k);
		}
		if (ovh > worst_overhead)
			worst_overhead = ovh;
		snprintf(met_s, sizeof(met_s), "%s (%sx)", num(a, mt, 2), num(b, rm, 1));
		snprintf(unm_s, sizeof(unm_s), "%s (%sx)", num(c, un, 2), num(d, ru, 1));
		bool same = s_nat == s_met && s_nat == s_unm;
		t->sums_ok &= same;
		snprintf(sum_s, sizeof(sum_s), "%08x%s", s_nat, same ? " (equal)" : " MISMATCH");
		snprintf(e, sizeof(e), "%+.1f %%", ovh);
		char spr[32];
		snprintf(spr, sizeof(spr), "%.2f", spread);
		md_row(
		    (const char *[]){kernel_desc[k], num(a, nat, 2), met_s, unm_s, e, spr, sum_s},
		    7, 0);
	}
	double gm_met = exp(log_met / BENCH_KERNEL_COUNT),
	       gm_unm = exp(log_unm / BENCH_KERNEL_COUNT);
	printf("\nGeometric mean: metered %.1fx, unmetered %.1fx native. Worst unmetered: %s "
	       "%.1fx. Metering adds at most %.1f %%.\n",
	       gm_met, gm_unm, worst_kernel, worst_unm, worst_overhead);

	/* Host call crossing. The pod's hostcall(n) calls kube32.k32_time_us n times (the
	 * import every kubelet offers); natively the same loop calls a function pointer. With
	 * a counter behind both (no clock read) the difference per call is the crossing
	 * alone; with the platform clock behind both, it is what a pod pays to read the clock. */
	const uint32_t calls = 1000000;
	struct bench_pod cnt;
	struct bench_pod_opts co = {
	    .metered = false, .mem_bytes = POD_MEM_BYTES, .counter_clock = true};
	struct k32_err err;
	double ns[4];
	uint32_t okv[4];

	if (bench_pod_open(&cnt, bytes, len, &co, &err) != K32_OK)
		die("opening the bench pod with a counter clock", &err);
	for (int v = 0; v < 4; v++)
		ns[v] = 1e18;
	for (uint32_t i = 0; i < o->runs; i++) {
		for (int v = 0; v < 4; v++) {
			uint64_t t0 = k32_now_us();

			if (v == 0 || v == 2) {
				bench_clock_fn = v == 0 ? native_counter : native_clock;
				okv[v] = bench_hostcall(calls);
			} else if (bench_pod_hostcall(v == 1 ? &cnt : &unm, calls, &okv[v], &err) !=
				   K32_OK) {
				die("host-call run", &err);
			}
			double t_ns = (double)(k32_now_us() - t0) * 1000.0 / calls;
			if (t_ns < ns[v])
				ns[v] = t_ns;
		}
	}
	bench_pod_close(&cnt);
	for (int v = 0; v < 4; v++)
		t->sums_ok &= okv[v] == calls;
	double crossing = ns[1] - ns[0];
	printf(
	    "\nHost call: `hostcall(n)` of the bench pod calls the import `k32_time_us` n times, "
	    "against the same loop natively through a function pointer; %s calls, fastest of "
	    "%u runs, ns per call (loop included):\n\n",
	    num(a, calls, 0), o->runs);
	md_row((const char *[]){"Behind the call", "Native call", "From an unmetered pod",
				"Difference"},
	       4, 1);
	snprintf(e, sizeof(e), "%.2f", crossing);
	md_row((const char *[]){"a counter (no clock read): the cost of crossing the sandbox",
				num(b, ns[0], 2), num(c, ns[1], 2), e},
	       4, 0);
	snprintf(e, sizeof(e), "%.2f", ns[3] - ns[2]);
	md_row((const char *[]){"the platform clock (`k32_now_us`, as the kubelet's k32_time_us)",
				num(b, ns[2], 2), num(c, ns[3], 2), e},
	       4, 0);

	/* Code size and instantiation. */
	size_t comp_m, wasm_m, comp_u, wasm_u;
	wrt_module_code_size(met.mod, &comp_m, &wasm_m);
	wrt_module_code_size(unm.mod, &comp_u, &wasm_u);
	double best_inst = 1e18;
	for (int i = 0; i < 200; i++) {
		struct bench_pod p;
		uint64_t t0 = k32_now_us();

		pod_open(&p, bytes, len, true, false);
		double us = (double)(k32_now_us() - t0);
		bench_pod_close(&p);
		if (us < best_inst)
			best_inst = us;
	}
	printf("\nCompiled code of the bench pod (%zu bytes of Wasm function bodies, %zu bytes of "
	       "module):\n\n",
	       wasm_m, len);
	md_row((const char *[]){"Build", "Compiled bytes", "Bytes per Wasm byte"}, 3, 1);
	snprintf(e, sizeof(e), "%.2f", (double)comp_m / (double)wasm_m);
	md_row((const char *[]){"metered (gas checks compiled in)", num(a, (double)comp_m, 0), e},
	       3, 0);
	snprintf(e, sizeof(e), "%.2f", (double)comp_u / (double)wasm_u);
	md_row((const char *[]){"unmetered", num(a, (double)comp_u, 0), e}, 3, 0);
	printf("\nLoad (decode, validate, compile) and instantiate the bench pod, metered: "
	       "%.1f µs (fastest of 200).\n",
	       best_inst);

	printf("\nAgainst the runtime's targets (issue 3), this run:\n\n");
	verdict("geometric mean, unmetered", gm_unm, "x", TARGET_GEOMEAN, true, false);
	verdict("worst kernel, unmetered", worst_unm, "x", TARGET_WORST, true, false);
	verdict("metering overhead, worst kernel", worst_overhead, " %", TARGET_METERING_PCT, true,
		false);
	verdict("host call crossing", crossing, " ns", TARGET_HOSTCALL_NS, true, true);
	verdict("compiled code per Wasm byte (metered)", (double)comp_m / (double)wasm_m, "",
		TARGET_CODE_PER_BYTE, true, false);
	verdict("load and instantiate", best_inst, " µs", TARGET_INSTANTIATE, true, true);
	printf("- checksums: %s\n", t->sums_ok ? "native, metered and unmetered agree on every "
						 "kernel and the host-call run"
					       : "**MISMATCH** (see the table)");
	bench_pod_close(&met);
	bench_pod_close(&unm);
}

/* ---- ops ------------------------------------------------------------------------------- */

enum op_group { G_INT, G_FLOAT, G_BRANCH, G_MEMORY, G_CALL, G_OTHER, G_GAS, G__COUNT };
static const char *const group_names[G__COUNT] = {"integer", "float", "branch", "memory",
						  "call",    "other", "gas"};

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The group of an internal op, by its name (wrt_ops.h). */
static enum op_group op_group(const char *name)
{
	if (!strcmp(name, "GAS"))
		return G_GAS;
	if (strstr(name, "LOAD") || strstr(name, "STORE") || starts(name, "MEMORY_") ||
	    starts(name, "LD8BR"))
		return G_MEMORY; /* LD8BR: a loop's repeated byte load fused with its test */
	if (starts(name, "F32_") || starts(name, "F64_"))
		return G_FLOAT;
	if (starts(name, "BR") || starts(name, "FBR") || strstr(name, "ADDBR_") ||
	    !strcmp(name, "RETURN") || !strcmp(name, "UNREACHABLE"))
		return G_BRANCH; /* [R]ADDBR: add, compare, branch; FBR: float compare, branch */
	if (starts(name, "CALL"))
		return G_CALL;
	if (starts(name, "I32_") || starts(name, "I64_") || starts(name, "CONST"))
		return G_INT;
	return G_OTHER; /* COPY (locals), SELECT, globals, tables */
}

static void section_ops(const struct opts *o, const uint8_t *bytes, size_t len,
			const struct kernel_times *t)
{
	struct bench_pod counted;
	uint32_t nops = wrt_op_count();
	uint64_t *d = calloc(nops, sizeof(uint64_t));
	char a[32], b[32], c[32], e[32], f[32], g[32];
	double gas_lo = 1e18, gas_hi = 0;
	int gas_noise = 0, gas_folded = 0;

	if (!d) {
		fprintf(stderr, "wasm-bench: out of memory for %u op counters\n", nops);
		exit(1);
	}
	pod_open(&counted, bytes, len, true, true);
	printf("Internal ops the interpreter executes for one kernel call (the metered build the "
	       "pods run by default, counted with `count_ops`); ns per op from the unmetered time "
	       "of the same run; native ns per op is the native time divided by the same count.");
	if (o->mhz > 0)
		printf(" Cycles are ns x %.0f MHz, the CPU's nominal clock: `perf stat -e cycles` "
		       "reports `<not supported>` on this machine (no PMU in the VM), so no cycle "
		       "counter was read.",
		       o->mhz);
	printf("\n\n");
	md_row((const char *[]){"Kernel", "Ops (gas checks)", "Interpreter ns/op",
				o->mhz > 0 ? "≈ cycles/op" : "cycles/op", "Native ns/op",
				"Ratio (unmetered)", "Ops by type"},
	       7, 1);
	for (uint32_t k = 0; k < BENCH_KERNEL_COUNT; k++) {
		const uint64_t *cnt = wrt_op_counts(counted.inst);
		uint64_t groups[G__COUNT] = {0}, total = 0;

		memcpy(d, cnt, nops * sizeof(uint64_t));
		pod_run(&counted, k, bench_default_n(k), 1);
		cnt = wrt_op_counts(counted.inst);
		for (uint32_t i = 0; i < nops; i++) {
			uint64_t n = cnt[i] - d[i];

			groups[op_group(wrt_op_name(i))] += n;
			total += n;
		}
		uint64_t work = total - groups[G_GAS];
		double ns_op = t->unm_us[k] * 1000.0 / (double)work;
		double nat_op = t->nat_us[k] * 1000.0 / (double)work;
		/* per GAS op only where GAS ops carry the charging (at least 1 % of the ops): a
		 * runtime that charges at back-edges and calls leaves a GAS op or two per call */
		bool gas_sep = groups[G_GAS] * 100 >= work;
		double gas_ns =
		    gas_sep ? (t->met_us[k] - t->unm_us[k]) * 1000.0 / (double)groups[G_GAS] : NAN;
		if (!gas_sep)
			gas_folded++;
		if (gas_sep && gas_ns > 0 && gas_ns < gas_lo)
			gas_lo = gas_ns;
		if (gas_sep && gas_ns > gas_hi)
			gas_hi = gas_ns;
		if (gas_sep && !(gas_ns > 0))
			gas_noise++;
		char mix[160] = "", ops_s[64];
		size_t at = 0;
		for (int pass = 0; pass < G_GAS; pass++) {
			/* groups in falling order, those of at least 5 % */
			int best = -1;
			for (int gi = 0; gi < G_GAS; gi++) {
				bool used = false;
				for (size_t x = 0; x < at; x++)
					used |= mix[x] == (char)('0' + gi);
				if (!used && (best < 0 || groups[gi] > groups[best]))
					best = gi;
			}
			if (best < 0 || groups[best] * 20 < work)
				break;
			mix[at++] = (char)('0' + best);
		}
		char mix_s[160] = "";
		for (size_t x = 0; x < at; x++) {
			int gi = mix[x] - '0';
			size_t l = strlen(mix_s);
			snprintf(mix_s + l, sizeof(mix_s) - l, "%s%.0f %% %s", x ? ", " : "",
				 100.0 * (double)groups[gi] / (double)work, group_names[gi]);
		}
		snprintf(ops_s, sizeof(ops_s), "%s (%s)", num(a, (double)work, 0),
			 num(b, (double)groups[G_GAS], 0));
		snprintf(e, sizeof(e), "%.0fx", t->unm_us[k] / t->nat_us[k]);
		md_row((const char *[]){bench_kernel_name(k), ops_s, num(c, ns_op, 2),
					o->mhz > 0 ? num(f, ns_op * o->mhz / 1000.0, 1) : "n/a",
					num(g, nat_op, 3), e, mix_s},
		       7, 0);
	}
	if (gas_hi > 0)
		printf("\nOne gas check (the GAS op, charged once per straight-line block) costs "
		       "%.2f to %.2f ns here: (metered - unmetered time) / GAS ops executed, per "
		       "kernel",
		       gas_lo, gas_hi);
	else if (gas_folded == BENCH_KERNEL_COUNT)
		printf(
		    "\nThe cost of one gas check is not separable here: the runtime charges gas "
		    "inside back-edges and calls (GAS ops are under 1 %% of the ops executed; "
		    "their "
		    "count is in brackets), so metering's whole cost is the Metering column of the "
		    "kernels table");
	else
		printf("\nThe cost of one gas check could not be resolved in this run");
	if (gas_noise)
		printf(" (in %d of the kernels the metered run was not slower than the unmetered "
		       "one, below this machine's noise, so they give no figure)",
		       gas_noise);
	printf(". Groups: "
	       "integer = i32/i64 arithmetic, compares, conversions and constants; branch = br, "
	       "br_if, fused (float) compare-and-branch and add-compare-branch, br_table, return; "
	       "memory = loads (a loop's byte load fused with its test too), stores, memory.*; "
	       "call = call, call_indirect; other = local moves (COPY), select (fused with its "
	       "compare too), globals.\n");
	bench_pod_close(&counted);
	free(d);
}

/* ---- stack ----------------------------------------------------------------------------- */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

static void wb_byte(struct wbuf *w, uint8_t b)
{
	if (w->len == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->p = realloc(w->p, w->cap);
		if (!w->p) {
			fprintf(stderr, "wasm-bench: out of memory building a module\n");
			exit(1);
		}
	}
	w->p[w->len++] = b;
}

static void wb_leb(struct wbuf *w, uint32_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		wb_byte(w, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static void wb_bytes(struct wbuf *w, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wb_byte(w, ((const uint8_t *)p)[i]);
}

static void wb_section(struct wbuf *w, uint8_t id, const struct wbuf *body)
{
	wb_byte(w, id);
	wb_leb(w, (uint32_t)body->len);
	wb_bytes(w, body->p, body->len);
}

/*
 * A module importing kube32.probe: () -> () and exporting chain(depth: i32): its body is
 * `len` times (i32.const 1; drop), then probe() when depth is 0, else chain(depth - 1).
 */
static struct wbuf chain_module(uint32_t len)
{
	static const uint8_t hdr[] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	static const uint8_t types[] = {2, 0x60, 0, 0, 0x60, 1, 0x7f, 0};
	static const uint8_t imports[] = {1, 6,	  'k', 'u', 'b', 'e', '3', '2',
					  5, 'p', 'r', 'o', 'b', 'e', 0,   0};
	static const uint8_t funcs[] = {1, 1};
	static const uint8_t exports[] = {1, 5, 'c', 'h', 'a', 'i', 'n', 0, 1};
	static const uint8_t tail[] = {0x20, 0,	   0x45, 0x04, 0x40, 0x10, 0,	 0x05, 0x20,
				       0,    0x41, 1,	 0x6b, 0x10, 1,	   0x0b, 0x0b};
	struct wbuf m = {0}, s = {0}, body = {0};

	wb_bytes(&m, hdr, sizeof(hdr));
	s.len = 0;
	wb_bytes(&s, types, sizeof(types));
	wb_section(&m, 1, &s);
	s.len = 0;
	wb_bytes(&s, imports, sizeof(imports));
	wb_section(&m, 2, &s);
	s.len = 0;
	wb_bytes(&s, funcs, sizeof(funcs));
	wb_section(&m, 3, &s);
	s.len = 0;
	wb_bytes(&s, exports, sizeof(exports));
	wb_section(&m, 7, &s);
	wb_byte(&body, 0); /* no locals */
	for (uint32_t i = 0; i < len; i++)
		wb_bytes(&body, (const uint8_t[]){0x41, 1, 0x1a}, 3);
	wb_bytes(&body, tail, sizeof(tail));
	s.len = 0;
	wb_byte(&s, 1);
	wb_leb(&s, (uint32_t)body.len);
	wb_bytes(&s, body.p, body.len);
	wb_section(&m, 10, &s);
	free(s.p);
	free(body.p);
	return m;
}

static uintptr_t probe_low; /* lowest stack address seen in the probe */

static k32_status_t h_probe(struct k32_hostcall *c)
{
	volatile uint8_t marker = 0;
	uintptr_t at = (uintptr_t)&marker;

	(void)c;
	if (at < probe_low)
		probe_low = at;
	return K32_OK;
}

static const struct k32_hostfn_def probe_fn[] = {{"kube32", "probe", ":", h_probe, NULL}};

/* Native stack bytes between this frame and the probe, for one call of chain(depth). Kept out
 * of line so its frame is the reference point. */
static __attribute__((noinline)) long stack_used(struct wrt_instance *inst, uint32_t fn,
						 uint32_t depth, struct k32_err *err)
{
	volatile uint8_t base = 0;
	uint64_t arg = depth;

	probe_low = UINTPTR_MAX;
	if (wrt_invoke(inst, fn, &arg, 1, NULL, 0, err) != K32_OK)
		return -1;
	return (long)((uintptr_t)&base - probe_low);
}

static struct wrt_instance *chain_instance(struct wrt_module **mod, const struct wbuf *m,
					   uint32_t stack_bytes, uint32_t frames, uint32_t *fn)
{
	struct wrt_load_opts lo;
	struct wrt_limits lim;
	struct wrt_linker lk;
	struct wrt_instance *inst;
	struct k32_err err;

	wrt_load_opts_default(&lo);
	if (wrt_module_load(k32_default_allocator(), m->p, m->len, &lo, mod, &err))
		die("loading the stack probe module", &err);
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, probe_fn, 1, &err);
	wrt_limits_default(&lim);
	lim.stack_bytes = stack_bytes;
	lim.frames = frames;
	lim.canonical_nan = true;
	if (wrt_instance_new(*mod, &lk, &lim, k32_default_allocator(), NULL, &inst, &err) ||
	    wrt_export_func(inst, "chain", fn, &err))
		die("instantiating the stack probe module", &err);
	return inst;
}

static void section_stack(void)
{
	static const uint32_t lens[] = {1, 100, 10000};
	static const uint32_t depths[] = {0, 10, 100, 1000};
	char a[32];
	struct wbuf m[3];
	struct wrt_module *mod[3];
	struct wrt_instance *inst[3];
	uint32_t fn[3];
	struct k32_err err;
	long lo = -1, hi = -1;

	printf("Native stack between the caller of `wrt_invoke` and a host function called from "
	       "the innermost Wasm frame, in bytes. Method: a generated module whose exported "
	       "function runs *length* instructions (`i32.const 1; drop`), then calls itself "
	       "*depth* times and finally calls the host function `probe`, which records the "
	       "address of one of its locals; the figure is the distance from a local of the "
	       "(out-of-line) calling function. It covers the interpreter loop, the host-call "
	       "dispatch and the probe's own frame: what any host function has under it.\n\n");
	md_row((const char *[]){"Function length \\ call depth", "0", "10", "100", "1,000"}, 5, 1);
	for (int i = 0; i < 3; i++) {
		m[i] = chain_module(lens[i]);
		inst[i] = chain_instance(&mod[i], &m[i], 1u << 20, 2048, &fn[i]);
		char lab[48];
		const char *cells[5];
		char vals[4][32];

		snprintf(lab, sizeof(lab), "%s instructions", num(a, lens[i] * 2.0, 0));
		cells[0] = lab;
		for (int j = 0; j < 4; j++) {
			long used = stack_used(inst[i], fn[i], depths[j], &err);
			if (used < 0)
				die("running the stack probe module", &err);
			if (lo < 0 || used < lo)
				lo = used;
			if (used > hi)
				hi = used;
			snprintf(vals[j], sizeof(vals[j]), "%ld", used);
			cells[j + 1] = vals[j];
		}
		md_row(cells, 5, 0);
	}
	if (lo == hi)
		printf(
		    "\nConstant: %ld bytes whatever the length and depth (Wasm frames live on the "
		    "instance's own frame stack, not the C stack).\n",
		    lo);
	else
		printf(
		    "\nFrom %ld to %ld bytes: **not constant** (it should be: Wasm frames live on "
		    "the instance's frame stack).\n",
		    lo, hi);

	/* What a pod gets past its Wasm stack: the kubelet's defaults (value stack
	 * K32_KLET_POD_STACK_BYTES, K32_KLET_POD_FRAMES frames). */
	struct wrt_module *pmod;
	uint32_t pfn;
	struct wrt_instance *pinst =
	    chain_instance(&pmod, &m[1], K32_KLET_POD_STACK_BYTES, K32_KLET_POD_FRAMES, &pfn);
	uint64_t arg = 100000;
	k32_status_t st = wrt_invoke(pinst, pfn, &arg, 1, NULL, 0, &err);
	printf("\nA pod past its Wasm stack: the same module with the kubelet's defaults "
	       "(K32_KLET_POD_STACK_BYTES = %u bytes of value stack, K32_KLET_POD_FRAMES = %u "
	       "frames) recursing 100,000 deep gets status %d and the trap message (the "
	       "container's termination message and last log line):\n\n    %s\n",
	       (unsigned)K32_KLET_POD_STACK_BYTES, (unsigned)K32_KLET_POD_FRAMES, (int)st,
	       st ? err.msg : "(no trap: unexpected)");
	wrt_instance_free(pinst);
	wrt_module_free(pmod);
	/* a small value stack and many frames: the value stack is what runs out */
	pinst = chain_instance(&pmod, &m[1], 1024, 4096, &pfn);
	st = wrt_invoke(pinst, pfn, &arg, 1, NULL, 0, &err);
	printf("\nWith kube32.io/stack-bytes: \"1024\" and frames to spare, the value stack runs "
	       "out first:\n\n    %s\n",
	       st ? err.msg : "(no trap: unexpected)");
	wrt_instance_free(pinst);
	wrt_module_free(pmod);
	for (int i = 0; i < 3; i++) {
		wrt_instance_free(inst[i]);
		wrt_module_free(mod[i]);
		free(m[i].p);
	}
}

/* ---- memory ---------------------------------------------------------------------------- */

/* Bytes held through the allocator below, and their peak: what loading a module needs. */
static size_t held_cur, held_peak;

static void *counting_alloc(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	const struct k32_allocator *base = ud;
	void *p = base->fn(base->ud, ptr, old_len, new_len);
	if (new_len == 0 || p) {
		held_cur += new_len - (ptr ? old_len : 0);
		if (held_cur > held_peak)
			held_peak = held_cur;
	}
	return p;
}

/* One pod's row; returns its compiled bytes per Wasm byte, or -1 when not measured. */
static double memory_row(const char *name, const char *path, uint64_t mem_limit)
{
	uint8_t *bytes;
	size_t len;
	struct k32_err err;
	struct wrt_module *mod;
	struct wrt_load_opts lo;
	struct wrt_limits lim;
	struct wrt_linker lk;
	struct wrt_instance *inst;
	struct wrt_stats st;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32];
	struct k32_allocator counting = {counting_alloc, (void *)k32_default_allocator()};

	if (k32_plat()->file_read_all(path, k32_default_allocator(), 4u << 20, &bytes, &len,
				      &err) != K32_OK) {
		printf("| %s | not measured: %s | | | | | | |\n", name, err.msg);
		return -1;
	}
	wrt_load_opts_default(&lo);
	held_cur = held_peak = 0;
	if (wrt_module_load(&counting, bytes, len, &lo, &mod, &err))
		die(path, &err);
	size_t load_peak = held_peak;
	/* the kubelet's imports (as bench_host offers them) and, when src/hw is built, the
	 * drivers' hardware host functions; nothing is called, only instantiated */
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, bench_host_fns, bench_host_count, &err);
#ifdef K32_BENCH_HAVE_HW
	wrt_linker_add_host(&lk, hw_hostfn_table, HW_HOSTFN_COUNT, &err);
#endif
	wrt_limits_default(&lim);
	lim.mem_bytes = mem_limit;
	lim.stack_bytes = K32_KLET_POD_STACK_BYTES;
	lim.frames = K32_KLET_POD_FRAMES;
	lim.canonical_nan = true;
	if (wrt_instance_new(mod, &lk, &lim, k32_default_allocator(), NULL, &inst, &err)) {
		printf("| %s | not measured: %s | | | | | | |\n", name, err.msg);
		wrt_module_free(mod);
		k32_free(k32_default_allocator(), bytes, len + 1);
		return -1;
	}
	wrt_instance_stats(inst, &st);
	size_t comp, wasm;
	wrt_module_code_size(mod, &comp, &wasm);
	/* accounted as the kubelet's stats do (klet_wasm.c kw_stats): code = module + the
	 * kept image bytes, runtime = instance structures + tables + its own record */
	size_t code = st.module_bytes + len;
	size_t runtime = st.runtime_bytes + st.table_bytes;
	size_t total = code + st.memory_bytes + st.stack_bytes + runtime;
	snprintf(g, sizeof(g), "%.2f", (double)comp / (double)wasm);
	md_row((const char *[]){name, num(a, (double)len, 0), num(b, (double)st.memory_bytes, 0),
				num(c, (double)code, 0), num(d, (double)st.stack_bytes, 0),
				num(e, (double)runtime, 0), num(f, (double)total, 0), g,
				num(h, (double)load_peak, 0)},
	       9, 0);
	wrt_instance_free(inst);
	wrt_module_free(mod);
	k32_free(k32_default_allocator(), bytes, len + 1);
	return (double)comp / (double)wasm;
}

static void section_memory(const struct opts *o)
{
	printf("Per pod, in bytes, on the kubelet's defaults (value stack %u bytes, %u frames), "
	       "counted with `wrt_instance_stats` the way the kubelet reports a pod "
	       "(`klet_wasm.c` stats): compiled code = the module's structures and compiled code "
	       "plus the image bytes it keeps; runtime = instance structures and tables. All of "
	       "it comes from the node's pod pool. The bench pod has a 24 KiB memory limit, a "
	       "driver the 2 KiB of its manifest (hw_device.c). Load peak: the most bytes held "
	       "through the allocator during `wrt_module_load` (the module it returns and the "
	       "loader's scratch), the image not included.\n\n",
	       (unsigned)K32_KLET_POD_STACK_BYTES, (unsigned)K32_KLET_POD_FRAMES);
	md_row((const char *[]){"Pod", "Module file", "Linear memory", "Code (module + image)",
				"Stacks", "Runtime", "Total", "Compiled bytes per Wasm byte",
				"Load peak"},
	       9, 1);
	memory_row("bench (memory limit 24 KiB)", o->pod_path, POD_MEM_BYTES);
	double worst = -1;
	uint32_t measured = 0;
	for (uint32_t i = 0; i < o->nmod; i++) {
		double r = memory_row(o->mod_name[i], o->mod_path[i], DRIVER_MEM_BYTES);
		if (r >= 0) {
			measured++;
			if (r > worst)
				worst = r;
		}
	}
	if (measured) {
		printf("\n");
		verdict("compiled code per Wasm byte, worst of the modules above (metered)", worst,
			"", TARGET_CODE_PER_BYTE, true, false);
	}
}

int main(int argc, char **argv)
{
	struct opts o = {.pod_path = K32_BENCH_POD_PATH, .runs = 5};
	const char *section = "kernels";
	uint8_t *bytes;
	size_t len;
	struct k32_err err;
	struct kernel_times t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pod") && i + 1 < argc) {
			o.pod_path = argv[++i];
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			o.runs = (uint32_t)strtoul(argv[++i], NULL, 10);
			if (o.runs == 0)
				o.runs = 1;
		} else if (!strcmp(argv[i], "--section") && i + 1 < argc) {
			section = argv[++i];
		} else if (!strcmp(argv[i], "--mhz") && i + 1 < argc) {
			o.mhz = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "--module") && i + 1 < argc && o.nmod < MAX_MODULES) {
			char *eq = strchr(argv[++i], '=');
			if (!eq) {
				fprintf(stderr, "wasm-bench: --module wants NAME=PATH\n");
				return 2;
			}
			*eq = 0;
			o.mod_name[o.nmod] = argv[i];
			o.mod_path[o.nmod++] = eq + 1;
		} else {
			fprintf(stderr,
				"usage: wasm-bench [--pod PATH] [--runs N] [--section "
				"kernels|ops|stack|memory] [--mhz F] [--module NAME=PATH]\n");
			return 2;
		}
	}
	if (!strcmp(section, "stack")) {
		section_stack();
		return 0;
	}
	if (!strcmp(section, "memory")) {
		section_memory(&o);
		return 0;
	}
	if (strcmp(section, "kernels") && strcmp(section, "ops")) {
		fprintf(stderr, "wasm-bench: unknown section %s (kernels, ops, stack, memory)\n",
			section);
		return 2;
	}
	if (k32_plat()->file_read_all(o.pod_path, k32_default_allocator(), 16u << 20, &bytes, &len,
				      &err) != K32_OK)
		die("reading the bench pod (build it with `make`; needs clang and wasm-ld)", &err);
	if (!strcmp(section, "ops")) {
		/* the ops table needs the times: measure quietly, print only the ops */
		FILE *keep = stdout;
		stdout = fopen("/dev/null", "w");
		section_kernels(&o, bytes, len, &t);
		fclose(stdout);
		stdout = keep;
		section_ops(&o, bytes, len, &t);
	} else {
		section_kernels(&o, bytes, len, &t);
	}
	k32_free(k32_default_allocator(), bytes, len + 1);
	if (!t.sums_ok) {
		fprintf(stderr, "wasm-bench: checksums differ between native and pod runs\n");
		return 1;
	}
	return 0;
}
