/*
 * bench_main.c - kube32-bench: the command line and the runner.
 *
 *   kube32-bench micro [--filter REGEX] [--json] [--min-time SECONDS] [--repetitions N]
 *
 * Runs the zircon-benchmarks list (docs/kobj.md) against kube32's kernel objects and, in the
 * same run, the Linux equivalent of each row, and prints a Google-Benchmark-style table with
 * the ratio on each line. Iteration counts are adaptive: a row is re-run with more iterations
 * until it takes at least --min-time, then repeated --repetitions times; the median is shown.
 * This file is a Linux program (see bench.h).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <regex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double min_time_s = 0.1;
static unsigned repetitions = 3;
uint32_t bench_cross_spin_ns = 10000;

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_pause(struct brun *r)
{
	r->pause_t0 = bench_now_ns();
}

void bench_resume(struct brun *r)
{
	r->paused_ns += bench_now_ns() - r->pause_t0;
}

void bench_pin(int core)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (core < 0) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(core, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
}

struct result {
	double ns;	/* wall ns per iteration (median) */
	double cpu;	/* CPU ns per iteration of the calling thread */
	uint64_t iters; /* iterations of one repetition */
	const char *skip;
};

/* One timed run of n iterations. */
static void run_once(bench_fn fn, uint64_t arg, uint64_t n, double *wall, double *cpu,
		     const char **skip)
{
	struct brun r = {.iters = n, .arg = arg};
	uint64_t w0 = bench_now_ns(), c0 = cpu_ns();
	fn(&r);
	uint64_t w1 = bench_now_ns(), c1 = cpu_ns();
	double total = (double)(w1 - w0);
	double w = total - (double)r.paused_ns;
	/* CPU time has no pause clock of its own: scale it by the timed share of the wall. */
	double c = total > 0 ? (double)(c1 - c0) * (w / total) : 0;
	*wall = w > 0 ? w : 0;
	*cpu = c > 0 ? c : 0;
	*skip = r.skip;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct result measure(bench_fn fn, uint64_t arg, bool threads)
{
	struct result res = {0};
	double wall = 0, cpu = 0;
	uint64_t n = 1, cap = threads ? 2000000u : 1000000000u;
	/* Warm up, then grow n until one run lasts min_time (Google Benchmark's rule). */
	run_once(fn, arg, 1, &wall, &cpu, &res.skip);
	if (res.skip)
		return res;
	for (;;) {
		run_once(fn, arg, n, &wall, &cpu, &res.skip);
		if (res.skip)
			return res;
		double secs = wall / 1e9;
		if (secs >= min_time_s || n >= cap)
			break;
		double mult = secs > 0 ? min_time_s * 1.4 / secs : 10.0;
		if (mult > 10.0)
			mult = 10.0;
		if (mult < 2.0)
			mult = 2.0;
		n = (uint64_t)((double)n * mult);
		if (n > cap)
			n = cap;
	}
	double walls[32], cpus[32];
	unsigned reps = repetitions > 32 ? 32 : repetitions;
	walls[0] = wall / (double)n;
	cpus[0] = cpu / (double)n;
	for (unsigned i = 1; i < reps; i++) {
		run_once(fn, arg, n, &wall, &cpu, &res.skip);
		walls[i] = wall / (double)n;
		cpus[i] = cpu / (double)n;
	}
	qsort(walls, reps, sizeof(double), cmp_double);
	qsort(cpus, reps, sizeof(double), cmp_double);
	res.ns = walls[reps / 2];
	res.cpu = cpus[reps / 2];
	res.iters = n;
	return res;
}

static void fmt_time(char *buf, size_t len, double ns)
{
	if (ns < 10)
		snprintf(buf, len, "%.2f ns", ns);
	else if (ns < 100000)
		snprintf(buf, len, "%.0f ns", ns);
	else
		snprintf(buf, len, "%.0f us", ns / 1000);
}

static void fmt_rate(char *buf, size_t len, double bytes_per_s)
{
	const char *unit[] = {"B/s", "kB/s", "MB/s", "GB/s"};
	int u = 0;
	while (bytes_per_s >= 1024 && u < 3) {
		bytes_per_s /= 1024;
		u++;
	}
	snprintf(buf, len, "%.4g%s", bytes_per_s, unit[u]);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: kube32-bench micro [--filter REGEX] [--json] [--min-time SECONDS]\n"
		"                          [--repetitions N] [--spin-ns NS] [--list]\n"
		"Runs kube32 kernel-object micro-benchmarks next to their Linux equivalents.\n");
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	bool json = false, list = false;
	if (argc < 2 || strcmp(argv[1], "micro") != 0) {
		usage();
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
			filter = argv[++i];
		} else if (!strncmp(argv[i], "--filter=", 9)) {
			filter = argv[i] + 9;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--list")) {
			list = true;
		} else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
			min_time_s = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--spin-ns") && i + 1 < argc) {
			bench_cross_spin_ns = (uint32_t)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--repetitions") && i + 1 < argc) {
			repetitions = (unsigned)atoi(argv[++i]);
			if (repetitions < 1)
				repetitions = 1;
		} else {
			usage();
			return 2;
		}
	}
	regex_t re;
	if (filter && regcomp(&re, filter, REG_EXTENDED | REG_NOSUB) != 0) {
		fprintf(stderr, "kube32-bench: --filter '%s' is not a valid extended regex\n",
			filter);
		return 2;
	}
	if (bench_micro_setup() != 0) {
		fprintf(stderr, "kube32-bench: kobj_node_new failed\n");
		return 1;
	}
	char why[200] = "";
	bool pod_ok = bench_pod_setup(why, sizeof(why)) == 0;

	const struct brow *sets[2] = {bench_micro_rows, bench_pod_rows};
	unsigned counts[2] = {bench_micro_count, pod_ok ? bench_pod_count : 0};
	bench_pin(0);
	if (json)
		printf("{\n  \"context\": {\"min_time_s\": %g, \"repetitions\": %u, "
		       "\"cross_core_spin_ns\": "
		       "%u, \"pod_section\": %s},\n  \"benchmarks\": [",
		       min_time_s, repetitions, bench_cross_spin_ns, pod_ok ? "true" : "false");
	else if (!list)
		printf("%-44s %12s %12s %11s %12s   %-30s %12s %s\n%s\n", "Benchmark", "Time",
		       "CPU", "Iterations", "Rate", "Linux equivalent", "Time", "  kube32 vs Linux",
		       "----------------------------------------------------------------------"
		       "----------------------------------------------------------------------"
		       "-----------------");
	bool first = true;
	for (int s = 0; s < 2; s++) {
		if (s == 1 && !json && !list) {
			if (pod_ok)
				printf("-- pod section: the same operations called from a Wasm pod "
				       "through the kx_* imports --\n");
			else
				printf("-- pod section skipped: %s --\n", why);
		}
		for (unsigned i = 0; i < counts[s]; i++) {
			const struct brow *row = &sets[s][i];
			if (filter && regexec(&re, row->name, 0, NULL, 0) != 0)
				continue;
			if (list) {
				printf("%s\n", row->name);
				continue;
			}
			struct result k = measure(row->fn, row->arg, row->threads);
			struct result l = {0};
			if (row->linux_fn)
				l = measure(row->linux_fn, row->arg, row->threads);
			char t1[32], t2[32], rate[32] = "", lt[32] = "", ratio[48] = "";
			fmt_time(t1, sizeof(t1), k.ns);
			fmt_time(t2, sizeof(t2), k.cpu);
			if (row->bytes && k.ns > 0)
				fmt_rate(rate, sizeof(rate), (double)row->bytes * 1e9 / k.ns);
			if (row->linux_fn && !l.skip) {
				fmt_time(lt, sizeof(lt), l.ns);
				if (k.ns > 0 && l.ns >= k.ns)
					snprintf(ratio, sizeof(ratio), "%.1fx faster", l.ns / k.ns);
				else if (k.ns > 0)
					snprintf(ratio, sizeof(ratio), "%.2fx slower", k.ns / l.ns);
			}
			if (json) {
				printf("%s\n    {\"name\": ", first ? "" : ",");
				json_str(row->name);
				if (k.skip) {
					printf(", \"skipped\": ");
					json_str(k.skip);
					printf("}");
					first = false;
					continue;
				}
				printf(
				    ", \"time_ns\": %.3f, \"cpu_ns\": %.3f, \"iterations\": %llu",
				    k.ns, k.cpu, (unsigned long long)k.iters);
				if (row->bytes)
					printf(", \"bytes_per_second\": %.0f",
					       (double)row->bytes * 1e9 / k.ns);
				if (row->linux_fn && !l.skip) {
					printf(", \"linux\": {\"name\": ");
					json_str(row->linux_name);
					printf(", \"time_ns\": %.3f, \"cpu_ns\": %.3f, "
					       "\"iterations\": "
					       "%llu}, \"speedup\": %.3f",
					       l.ns, l.cpu, (unsigned long long)l.iters,
					       k.ns > 0 ? l.ns / k.ns : 0.0);
				}
				printf("}");
				first = false;
				continue;
			}
			if (k.skip) {
				printf("%-44s skipped: %s\n", row->name, k.skip);
				continue;
			}
			printf("%-44s %12s %12s %11llu %12s   %-30s %12s   %s\n", row->name, t1, t2,
			       (unsigned long long)k.iters, rate,
			       row->linux_fn ? row->linux_name : "-", row->linux_fn ? lt : "",
			       ratio);
			fflush(stdout);
		}
	}
	if (json)
		printf("\n  ]\n}\n");
	if (filter)
		regfree(&re);
	return 0;
}
