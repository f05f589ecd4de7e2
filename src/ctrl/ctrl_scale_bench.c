/*
 * ctrl_scale_bench.c - the control plane's CPU for one pod change as the cluster grows
 * (issue 14 acceptance, issue 15 item 6; not a test).
 *
 * In-process: a memory store, an api_server, the controllers on their task with their
 * informers (in-process client), NODES Ready nodes and PODS pods in PODS/10 Deployments of
 * 10 replicas (namespace default), all bound. No kubelet: pods stay Pending-but-bound, so
 * nothing else moves. Then ROUNDS times: one pod is deleted (grace 0) and the cluster is
 * left to settle: its ReplicaSet creates a replacement, the scheduler binds it, and the
 * passes stop (no new pass for QUIET_MS). Measured per change: the CPU time of every
 * control-plane task (k32-ctrl and the k32-inf-* informers, which carry the in-process API
 * work they cause) plus the thread that made the change, as a median over the rounds.
 *
 * --no-cache runs the same with the controllers listing through the API on every pass (the
 * informers only ring the doorbell): what they did before the caches, for the ratio.
 * --nodes N puts the pods on N nodes instead of 10 (issue 15's fleet: 10 pods a board).
 *
 * The periodic resyncs are set to an hour while changes are measured (a full pass of every
 * controller is measured apart, once, at the end: "resync"). While a change settles, this
 * thread only reads the controllers' counters (the check that every pod is bound, a list
 * of all pods, runs after the measured window).
 *
 * Instructions instead of CPU time (steady on a loaded machine): run it under callgrind,
 * which counts only the measured windows (the changes, then the resync, each one dump):
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=cg.%p \
 *       build/src/ctrl/ctrl-scale-bench 1000 5
 * and divide the "changes" dump's total (callgrind_annotate) by the rounds.
 *
 * Also printed: the mean CPU of each controller's passes per change (ctrl_stats.pass_cpu_us).
 * BENCH_DEBUG=1 prints the progress while settling and the controllers' log.
 *
 * Usage: ctrl-scale-bench PODS [ROUNDS] [--no-cache] [--nodes N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "api/api.h"
#include "base/k32_buf.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "kclient/kclient.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_DUMP_STATS_AT(s)
#endif

#define PER_DEPL 10
#define QUIET_MS 300

static struct api_server *api;

/* CPU of the control plane's tasks (k32-ctrl, k32-inf-*) plus this thread. */
static uint64_t cplane_cpu_us(void)
{
	struct k32_task_info info[K32_PLAT_MAX_TASKS];
	size_t n = 0;
	uint64_t sum = k32_plat()->thread_cpu_us();
	k32_plat()->task_list(info, K32_PLAT_MAX_TASKS, &n);
	for (size_t i = 0; i < n && i < K32_PLAT_MAX_TASKS; i++)
		if (!strcmp(info[i].name, "k32-ctrl") || !strncmp(info[i].name, "k32-inf-", 8))
			sum += info[i].cpu_us;
	return sum;
}

static int call(const char *method, const char *target, const char *body, struct k32_buf *out)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(out);
	api_do(api, method, target, body ? "application/json" : NULL, body, body ? strlen(body) : 0,
	       &code, out, &err);
	return code;
}

/* Pods that are bound (spec.nodeName) and not being deleted; name of the first of app d0. */
static int count_bound(struct k32_buf *b, char *first, size_t cap)
{
	int n = 0;
	char cont[512] = "", target[700];
	if (first)
		first[0] = 0;
	for (;;) {
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods?limit=500%s%s",
			 cont[0] ? "&continue=" : "", cont);
		if (call("GET", target, NULL, b) != 200)
			return -1;
		cJSON *l = cJSON_ParseWithLength(k32_buf_cstr(b), b->len);
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(l, "items"))
		{
			const cJSON *nn = k32_json_find(it, "spec.nodeName");
			if (!cJSON_IsString(nn) || k32_json_find(it, "metadata.deletionTimestamp"))
				continue;
			n++;
			const cJSON *app = k32_json_find(it, "metadata.labels");
			app = cJSON_GetObjectItemCaseSensitive(app, "app");
			if (first && !first[0] && cJSON_IsString(app) &&
			    !strcmp(app->valuestring, "d0"))
				snprintf(first, cap, "%s",
					 cJSON_GetStringValue(k32_json_find(it, "metadata.name")));
		}
		const cJSON *c = k32_json_find(l, "metadata.continue");
		bool more = cJSON_IsString(c) && c->valuestring[0];
		if (more)
			snprintf(cont, sizeof(cont), "%s", c->valuestring);
		cJSON_Delete(l);
		if (!more)
			return n;
	}
}

/* Waits until the scheduler bound `bound` pods in all and no pass ran for QUIET_MS (at
 * most 120 s), reading only the counters (no request from this thread). */
static bool settle_quiet(struct ctrl *c, uint64_t bound)
{
	uint64_t end = k32_now_us() + 120 * 1000000ull;
	while (k32_now_us() < end) {
		struct ctrl_stats a, z;
		ctrl_get_stats(c, &a);
		k32_plat()->sleep_us(QUIET_MS * 1000);
		ctrl_get_stats(c, &z);
		if (z.passes == a.passes && z.bound >= bound)
			return true;
	}
	return false;
}

/* Waits until want pods are bound and no pass ran for QUIET_MS (at most 120 s; the first
 * time, with every pod being made, 1,200 s). */
static bool settle(struct ctrl *c, struct k32_buf *b, int want)
{
	static bool first = true;
	uint64_t end = k32_now_us() + (first ? 1200 : 120) * 1000000ull;
	first = false;
	while (k32_now_us() < end) {
		struct ctrl_stats a, z;
		ctrl_get_stats(c, &a);
		k32_plat()->sleep_us(QUIET_MS * 1000);
		ctrl_get_stats(c, &z);
		if (getenv("BENCH_DEBUG"))
			fprintf(stderr, "passes %llu writes %llu errs %llu bound %d\n",
				(unsigned long long)z.passes, (unsigned long long)z.writes,
				(unsigned long long)z.write_errors, count_bound(b, NULL, 0));
		int bound = count_bound(b, NULL, 0);
		if (z.passes == a.passes && bound == want)
			return true;
		if (k32_now_us() >= end)
			fprintf(stderr, "settle: %d of %d pods bound, %llu passes\n", bound, want,
				(unsigned long long)z.passes);
	}
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_u64);
	return n ? v[n / 2] : 0;
}

int main(int argc, char **argv)
{
	int pods = argc > 1 ? atoi(argv[1]) : 100;
	int rounds = argc > 2 && argv[2][0] != '-' ? atoi(argv[2]) : 9;
	int nodes = 10;
	bool no_cache = false;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--no-cache"))
			no_cache = true;
		else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nodes = atoi(argv[++i]);
	}
	if (pods < PER_DEPL || pods > 20000 || rounds < 1 || rounds > 1000 || nodes < 1 ||
	    nodes > 4096) {
		fprintf(stderr, "usage: ctrl-scale-bench PODS(10..20000) [ROUNDS] [--no-cache] "
				"[--nodes N(1..4096)]\n");
		return 2;
	}
	pods -= pods % PER_DEPL;
	k32_log_set_stderr(getenv("BENCH_DEBUG") != NULL);
	struct k32_err err;
	struct store *st = NULL;
	/* room for the pods, their ReplicaSets, Deployments, nodes and Events (~2.5 KiB a pod) */
	struct store_config sc = {.max_objects = (uint32_t)pods * 4 + (uint32_t)nodes * 2 + 1000,
				  .max_bytes =
				      (size_t)pods * 8192 + (size_t)nodes * 4096 + (4u << 20)};
	struct api_config ac = {.bootstrap = true};
	if (store_open(&sc, &st, &err))
		return fprintf(stderr, "store_open: %s\n", err.msg), 1;
	ac.store = st;
	if (api_server_new(&ac, &api, &err))
		return fprintf(stderr, "api_server_new: %s\n", err.msg), 1;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 8 << 20, "bench answer");
	char body[2048];
	for (int i = 0; i < nodes; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},"
			 "\"status\":{\"allocatable\":{\"memory\":\"64Gi\",\"pods\":\"%d\"},"
			 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			 i, pods / nodes + 100);
		call("POST", "/api/v1/nodes", body, &b);
	}
	struct kclient *kc = NULL;
	struct ctrl *c = NULL;
	/* no node lifecycle: without kubelets it would mark every node Unknown and evict; the
	 * periodic resyncs are measured apart (below), not inside the changes */
	struct ctrl_config cc = {.enable = CTRL_ALL & ~(uint32_t)CTRL_NODE_LIFECYCLE,
				 .no_cache = no_cache,
				 .resync_s = 3600,
				 .sched_resync_s = 3600};
	if (kclient_inproc_new(api, NULL, &kc, &err) || ctrl_start(&cc, kc, &c, &err))
		return fprintf(stderr, "ctrl_start: %s\n", err.msg), 1;
	for (int d = 0; d < pods / PER_DEPL; d++) {
		snprintf(
		    body, sizeof(body),
		    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
		    "\"name\":\"d%d\"},\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":"
		    "{\"app\":\"d%d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d%d\"}},"
		    "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"hello.wasm\","
		    "\"resources\":{\"limits\":{\"memory\":\"24Ki\"}}}]}}}}",
		    d, PER_DEPL, d, d);
		if (call("POST", "/apis/apps/v1/namespaces/default/deployments", body, &b) != 201)
			return fprintf(stderr, "deployment d%d: %s\n", d, k32_buf_cstr(&b)), 1;
	}
	uint64_t t0 = k32_now_us();
	/* the counters first (a list of every pod each 300 ms would slow the start down) */
	for (int i = 0; i < 5 && !settle_quiet(c, (uint64_t)pods); i++)
		;
	if (!settle(c, &b, pods))
		return fprintf(stderr, "the %d pods were not all bound and settled\n", pods), 1;
	fprintf(stderr, "%d pods bound in %.1f s\n", pods, (double)(k32_now_us() - t0) / 1e6);
	uint64_t *cpu = calloc((size_t)rounds, sizeof(uint64_t));
	int ok = 0;
	struct ctrl_stats before, after;
	uint64_t per[11] = {0};
	for (int r = 0; r < rounds; r++) {
		char victim[260], target[400];
		if (count_bound(&b, victim, sizeof(victim)) != pods || !victim[0])
			break;
		ctrl_get_stats(c, &before);
		/* glibc frees small blocks lazily and merges them on a later large allocation:
		 * the check above freed a parsed list of every pod, which the change's first
		 * request would merge inside the measured window (at 1,000 pods it was a third of
		 * the window's instructions); merge them now */
#if defined(__GLIBC__)
		malloc_trim(0);
#endif
		CALLGRIND_START_INSTRUMENTATION;
		uint64_t c0 = cplane_cpu_us();
		snprintf(target, sizeof(target),
			 "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", victim);
		if (call("DELETE", target, NULL, &b) != 200)
			break;
		bool settled = settle_quiet(c, before.bound + 1);
		uint64_t used = cplane_cpu_us() - c0;
		CALLGRIND_STOP_INSTRUMENTATION;
		if (!settled || !settle(c, &b, pods))
			break;
		cpu[ok++] = used;
		ctrl_get_stats(c, &after);
		for (int k = 0; k < 11; k++)
			per[k] += after.pass_cpu_us[k] - before.pass_cpu_us[k];
	}
	CALLGRIND_DUMP_STATS_AT("changes");
	/* one resync: a full pass of every controller (what runs every resync_s) */
	CALLGRIND_START_INSTRUMENTATION;
	ctrl_get_stats(c, &before);
	uint64_t r0 = cplane_cpu_us();
	ctrl_kick(c, CTRL_ALL);
	bool resynced = settle_quiet(c, before.bound);
	uint64_t resync_cpu = cplane_cpu_us() - r0;
	CALLGRIND_STOP_INSTRUMENTATION;
	CALLGRIND_DUMP_STATS_AT("resync");
	uint64_t med = median(cpu, ok);
	printf("%s%6d pods (%d Deployments x %d, %d nodes): one pod deleted -> replaced and "
	       "bound: control-plane CPU median %7llu us, min %7llu, max %7llu (n=%d); one full "
	       "resync %llu us\n",
	       no_cache ? "no cache " : "informers", pods, pods / PER_DEPL, PER_DEPL, nodes,
	       (unsigned long long)med, ok ? (unsigned long long)cpu[0] : 0ull,
	       ok ? (unsigned long long)cpu[ok - 1] : 0ull, ok,
	       resynced ? (unsigned long long)resync_cpu : 0ull);
	static const char *const names[11] = {"scheduler", "replicaset", "deployment", "daemonset",
					      "job",	   "node",	 "gc",	       "namespace",
					      "device",	   "cronjob",	 "endpoints"};
	printf("  mean pass CPU per change (us):");
	for (int k = 0; k < 11; k++)
		if (ok && per[k] / (uint64_t)ok)
			printf(" %s %llu", names[k], (unsigned long long)(per[k] / (uint64_t)ok));
	printf("\n");
	free(cpu);
	ctrl_stop(c);
	kclient_free(kc);
	k32_buf_fini(&b);
	api_server_free(api);
	store_close(st);
	return ok == rounds ? 0 : 1;
}
