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
 *
 * Also printed: the mean CPU of each controller's passes per change (ctrl_stats.pass_cpu_us).
 * BENCH_DEBUG=1 prints the progress while settling and the controllers' log.
 *
 * Usage: ctrl-scale-bench PODS [ROUNDS] [--no-cache]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_buf.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "kclient/kclient.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#define NODES	 10
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

/* Waits until want pods are bound and no pass ran for QUIET_MS (at most 120 s). */
static bool settle(struct ctrl *c, struct k32_buf *b, int want)
{
	uint64_t end = k32_now_us() + 120 * 1000000ull;
	while (k32_now_us() < end) {
		struct ctrl_stats a, z;
		ctrl_get_stats(c, &a);
		k32_plat()->sleep_us(QUIET_MS * 1000);
		ctrl_get_stats(c, &z);
		if (getenv("BENCH_DEBUG"))
			fprintf(stderr, "passes %llu writes %llu errs %llu bound %d\n",
				(unsigned long long)z.passes, (unsigned long long)z.writes,
				(unsigned long long)z.write_errors, count_bound(b, NULL, 0));
		if (z.passes == a.passes && count_bound(b, NULL, 0) == want)
			return true;
	}
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int pods = argc > 1 ? atoi(argv[1]) : 100;
	int rounds = argc > 2 && argv[2][0] != '-' ? atoi(argv[2]) : 9;
	bool no_cache = argc > 1 && !strcmp(argv[argc - 1], "--no-cache");
	if (pods < PER_DEPL || pods > 20000 || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: ctrl-scale-bench PODS(10..20000) [ROUNDS] [--no-cache]\n");
		return 2;
	}
	pods -= pods % PER_DEPL;
	k32_log_set_stderr(getenv("BENCH_DEBUG") != NULL);
	struct k32_err err;
	struct store *st = NULL;
	/* room for the pods, their ReplicaSets, Deployments and Events (~2.5 KiB a pod) */
	struct store_config sc = {.max_objects = (uint32_t)pods * 4 + 1000,
				  .max_bytes = (size_t)pods * 8192 + (4u << 20)};
	struct api_config ac = {.bootstrap = true};
	if (store_open(&sc, &st, &err))
		return fprintf(stderr, "store_open: %s\n", err.msg), 1;
	ac.store = st;
	if (api_server_new(&ac, &api, &err))
		return fprintf(stderr, "api_server_new: %s\n", err.msg), 1;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 8 << 20, "bench answer");
	char body[2048];
	for (int i = 0; i < NODES; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},"
			 "\"status\":{\"allocatable\":{\"memory\":\"64Gi\",\"pods\":\"5000\"},"
			 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			 i);
		call("POST", "/api/v1/nodes", body, &b);
	}
	struct kclient *kc = NULL;
	struct ctrl *c = NULL;
	/* no node lifecycle: without kubelets it would mark every node Unknown and evict */
	struct ctrl_config cc = {.enable = CTRL_ALL & ~(uint32_t)CTRL_NODE_LIFECYCLE,
				 .no_cache = no_cache};
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
	if (!settle(c, &b, pods))
		return fprintf(stderr, "the %d pods were not all bound in 120 s\n", pods), 1;
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
		uint64_t c0 = cplane_cpu_us();
		snprintf(target, sizeof(target),
			 "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", victim);
		if (call("DELETE", target, NULL, &b) != 200)
			break;
		/* settle's own list requests run on this thread: not counted */
		uint64_t own0 = k32_plat()->thread_cpu_us();
		bool settled = settle(c, &b, pods);
		uint64_t own = k32_plat()->thread_cpu_us() - own0;
		if (!settled)
			break;
		cpu[ok++] = cplane_cpu_us() - c0 - own;
		ctrl_get_stats(c, &after);
		for (int k = 0; k < 11; k++)
			per[k] += after.pass_cpu_us[k] - before.pass_cpu_us[k];
	}
	qsort(cpu, (size_t)ok, sizeof(cpu[0]), cmp_u64);
	struct ctrl_stats cs;
	ctrl_get_stats(c, &cs);
	printf("%s%6d pods (%d Deployments x %d, %d nodes): one pod deleted -> replaced and "
	       "bound: control-plane CPU median %7llu us, min %7llu, max %7llu (n=%d)\n",
	       no_cache ? "no cache " : "informers", pods, pods / PER_DEPL, PER_DEPL, NODES,
	       ok ? (unsigned long long)cpu[ok / 2] : 0ull, ok ? (unsigned long long)cpu[0] : 0ull,
	       ok ? (unsigned long long)cpu[ok - 1] : 0ull, ok);
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
