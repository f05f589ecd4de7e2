/*
 * ctrl_bench.c - how fast the control plane reacts (`make bench`; not a test).
 *
 * In-process: a memory store, an api_server and the controllers on their own task, with
 * NODES Ready nodes. Measures, over ROUNDS pods each:
 *   1. pod created (api_do POST) -> bound by the scheduler (the MODIFIED event carrying
 *      spec.nodeName on a store watch): the "apply to scheduled" latency of issue 6;
 *   2. ReplicaSet scaled 0 -> 1 (PATCH /scale) -> its pod bound: the same through one more
 *      controller;
 *   3. passes, writes and the controller task's CPU during 10 s of a quiet cluster (no
 *      self-triggering loop; node lifecycle's 5 s check is what runs).
 * Prints median and 90th percentile in microseconds, and the controllers' counters.
 * Usage: ctrl-bench [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_buf.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#define NODES 4

#define IDLE_S 10

/* CPU time the controller task has used so far (platform task list). */
static uint64_t ctrl_task_cpu_us(void)
{
	struct k32_task_info info[K32_PLAT_MAX_TASKS];
	size_t n = 0;
	k32_plat()->task_list(info, K32_PLAT_MAX_TASKS, &n);
	for (size_t i = 0; i < n && i < K32_PLAT_MAX_TASKS; i++)
		if (!strcmp(info[i].name, "k32-ctrl"))
			return info[i].cpu_us;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int call(struct api_server *api, const char *method, const char *target, const char *ctype,
		const char *body)
{
	struct k32_buf out;
	struct k32_err err;
	int code = 0;
	k32_buf_init(&out, k32_default_allocator(), 1 << 20, "bench answer");
	api_do(api, method, target, ctype, body, body ? strlen(body) : 0, &code, &out, &err);
	k32_buf_fini(&out);
	return code;
}

/* Waits for a pods event whose object has a nodeName and, if name is set, that name. */
static bool wait_bound(struct store *st, struct store_watch *w, const char *name)
{
	int64_t deadline = k32_deadline_after(5 * 1000000);
	for (;;) {
		struct store_event ev[16];
		size_t n = 0;
		struct k32_err err;
		if (store_watch_next(w, ev, 16, &n, deadline, &err))
			return false;
		bool hit = false;
		for (size_t i = 0; i < n; i++) {
			const char *d = store_obj_data(ev[i].obj);
			if (ev[i].type == STORE_EVENT_MODIFIED && strstr(d, "\"nodeName\"") &&
			    (!name || strstr(d, name)) && !strstr(d, "\"PodScheduled\""))
				hit = true;
		}
		store_events_release(st, ev, n);
		if (hit)
			return true;
	}
}

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_u64);
	printf("%-44s median %6llu us  p90 %6llu us  (n=%d)\n", what, (unsigned long long)v[n / 2],
	       (unsigned long long)v[n * 9 / 10], n);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	if (rounds < 1 || rounds > 10000)
		rounds = 50;
	k32_log_set_stderr(false);
	struct k32_err err;
	struct store *st = NULL;
	struct api_server *api = NULL;
	struct ctrl *c = NULL;
	struct store_config sc = {0};
	if (store_open(&sc, &st, &err))
		return fprintf(stderr, "store_open: %s\n", err.msg), 1;
	struct api_config ac = {.store = st, .bootstrap = true};
	if (api_server_new(&ac, &api, &err))
		return fprintf(stderr, "api_server_new: %s\n", err.msg), 1;
	char body[2048];
	for (int i = 0; i < NODES; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},"
			 "\"status\":{\"allocatable\":{\"memory\":\"64Mi\",\"pods\":\"1000\"},"
			 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			 i);
		call(api, "POST", "/api/v1/nodes", "application/json", body);
	}
	struct kclient *kc = NULL;
	if (kclient_inproc_new(api, NULL, &kc, &err) || ctrl_start(NULL, kc, &c, &err))
		return fprintf(stderr, "ctrl_start: %s\n", err.msg), 1;
	size_t lat_len = (size_t)rounds * sizeof(uint64_t);
	uint64_t *lat = k32_calloc(k32_default_allocator(), lat_len);
	struct store_key key = {.group = "", .resource = "pods"};
	struct store_watch *w = NULL;
	if (!lat || store_watch_open(st, &key, 0, NULL, NULL, &w, &err))
		return fprintf(stderr, "watch: %s\n", err.msg), 1;
	int ok = 0;
	for (int i = 0; i < rounds; i++) {
		char name[32];
		snprintf(name, sizeof(name), "\"p%d\"", i);
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\"},"
			 "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"hello.wasm\","
			 "\"resources\":{\"limits\":{\"memory\":\"24Ki\"}}}]}}",
			 i);
		uint64_t t0 = k32_now_us();
		call(api, "POST", "/api/v1/namespaces/default/pods", "application/json", body);
		if (!wait_bound(st, w, name))
			break;
		lat[ok++] = k32_now_us() - t0;
	}
	if (ok)
		report("pod created -> bound", lat, ok);
	call(api, "POST", "/apis/apps/v1/namespaces/default/replicasets", "application/json",
	     "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"r\"},"
	     "\"spec\":{\"replicas\":0,\"selector\":{\"matchLabels\":{\"a\":\"r\"}},\"template\":{"
	     "\"metadata\":{\"labels\":{\"a\":\"r\"}},\"spec\":{\"containers\":[{\"name\":\"m\","
	     "\"image\":\"hello.wasm\"}]}}}}");
	int ok2 = 0;
	for (int i = 0; i < rounds && ok2 == i; i++) {
		snprintf(body, sizeof(body), "{\"spec\":{\"replicas\":%d}}", i + 1);
		uint64_t t0 = k32_now_us();
		call(api, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/r/scale",
		     "application/merge-patch+json", body);
		if (!wait_bound(st, w, "\"r-"))
			break;
		lat[ok2++] = k32_now_us() - t0;
	}
	if (ok2)
		report("ReplicaSet scaled +1 -> new pod bound", lat, ok2);
	struct ctrl_stats cs, idle;
	k32_plat()->sleep_us(1000000); /* let the last changes settle */
	ctrl_get_stats(c, &idle);
	uint64_t cpu0 = ctrl_task_cpu_us();
	/* quiet cluster: only the periodic passes run (node lifecycle every 5 s) */
	k32_plat()->sleep_us(IDLE_S * 1000000ull);
	ctrl_get_stats(c, &cs);
	uint64_t cpu = ctrl_task_cpu_us() - cpu0;
	printf("idle %d s (%d nodes, %d pods): %llu controller passes, %llu API writes, "
	       "k32-ctrl task CPU %llu us = %.4f%% of a core\n",
	       IDLE_S, NODES, 2 * rounds, (unsigned long long)(cs.passes - idle.passes),
	       (unsigned long long)(cs.writes - idle.writes), (unsigned long long)cpu,
	       100.0 * (double)cpu / (IDLE_S * 1e6));
	printf("controller passes %llu, API writes %llu (%llu refused), pods bound %llu\n",
	       (unsigned long long)cs.passes, (unsigned long long)cs.writes,
	       (unsigned long long)cs.write_errors, (unsigned long long)cs.bound);
	store_watch_close(w);
	ctrl_stop(c);
	kclient_free(kc);
	api_server_free(api);
	store_close(st);
	k32_free(k32_default_allocator(), lat, lat_len);
	return ok == rounds && ok2 == rounds ? 0 : 1;
}
