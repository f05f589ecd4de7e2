/*
 * api_bench.c - in-process benchmark of the API layer (no sockets, no TLS): the time the
 * server spends answering GET /api/v1/pods with 100 pods (plain list, and with label and
 * field selectors), a single-pod GET and a status patch (one store write, no fsync: memory
 * store), and 100 Events listed through core/v1 (stored bytes) and events.k8s.io/v1 (each
 * converted from the one stored core Event). Prints one result per line (median and p99 in
 * microseconds) for scripts/bench.sh. Memory store; nothing persists.
 *
 *   api-bench [iterations]      (default 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct api_server *g_api;
static struct k32_buf g_out;

static int run(const char *method, const char *target, const char *ctype, const char *body)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&g_out);
	if (api_do(g_api, method, target, ctype, body, body ? strlen(body) : 0, &code, &g_out,
		   &err) != K32_OK)
		return -1;
	return code;
}

static void measure(const char *name, int iters, const char *method, const char *target,
		    const char *ctype, const char *body, int want)
{
	size_t tlen = sizeof(uint64_t) * (size_t)iters;
	uint64_t *t = k32_alloc(k32_default_allocator(), tlen);
	if (!t)
		return;
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = k32_now_us();
		int code = run(method, target, ctype, body);
		t[i] = k32_now_us() - t0;
		if (code != want) {
			fprintf(stderr, "api-bench: %s: HTTP %d, want %d: %.200s\n", name, code,
				want, k32_buf_cstr(&g_out));
			k32_free(k32_default_allocator(), t, tlen);
			exit(1);
		}
	}
	qsort(t, (size_t)iters, sizeof(*t), cmp_u64);
	printf("api_%s_median_us %llu\n", name, (unsigned long long)t[iters / 2]);
	printf("api_%s_p99_us %llu\n", name, (unsigned long long)t[iters * 99 / 100]);
	k32_free(k32_default_allocator(), t, tlen);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 2000;
	struct k32_err err;
	struct store *store = NULL;
	struct store_config sc = {0};
	if (iters < 10)
		iters = 10;
	k32_log_set_stderr(false);
	if (store_open(&sc, &store, &err)) {
		fprintf(stderr, "api-bench: %s\n", err.msg);
		return 1;
	}
	struct api_config ac = {.store = store, .bootstrap = true};
	if (api_server_new(&ac, &g_api, &err)) {
		fprintf(stderr, "api-bench: %s\n", err.msg);
		return 1;
	}
	k32_buf_init(&g_out, k32_default_allocator(), 16u << 20, "bench response");
	char body[512];
	for (int i = 0; i < 100; i++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"blinky-%d\",\"labels\":{\"app\":\"blinky\"}},"
			 "\"spec\":{\"nodeName\":\"mcu-%d\",\"containers\":[{\"name\":\"main\","
			 "\"image\":\"blinky.wasm\",\"resources\":{\"limits\":{\"memory\":\"24Ki\"}"
			 "}}]}}",
			 i, i % 10);
		if (run("POST", "/api/v1/namespaces/default/pods", "application/json", body) !=
		    201) {
			fprintf(stderr, "api-bench: creating pods: %s\n", k32_buf_cstr(&g_out));
			return 1;
		}
	}
	measure("list_pods_100", iters, "GET", "/api/v1/pods", NULL, NULL, 200);
	printf("api_list_pods_100_bytes %zu\n", g_out.len);
	measure("list_pods_100_selector", iters / 4, "GET",
		"/api/v1/pods?labelSelector=app%3Dblinky&fieldSelector=spec.nodeName%3Dmcu-3", NULL,
		NULL, 200);
	measure("list_pods_100_label", iters / 4, "GET", "/api/v1/pods?labelSelector=app%3Dblinky",
		NULL, NULL, 200);
	measure("get_pod", iters, "GET", "/api/v1/namespaces/default/pods/blinky-42", NULL, NULL,
		200);
	measure("patch_pod_status", iters / 4, "PATCH",
		"/api/v1/namespaces/default/pods/blinky-7/status", "application/merge-patch+json",
		"{\"status\":{\"phase\":\"Running\"}}", 200);
	/* one Event store, two APIs: core serves the stored bytes, events.k8s.io converts */
	for (int i = 0; i < 100; i++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"blinky-%d.1\"},\"involvedObject\":{\"kind\":"
			 "\"Pod\",\"name\":\"blinky-%d\",\"namespace\":\"default\"},\"reason\":"
			 "\"Started\",\"message\":\"Started container main\",\"type\":\"Normal\","
			 "\"count\":2,\"source\":{\"component\":\"kubelet\",\"host\":\"mcu-%d\"},"
			 "\"firstTimestamp\":\"2026-01-01T10:00:00Z\","
			 "\"lastTimestamp\":\"2026-01-01T10:01:00Z\"}",
			 i, i, i % 10);
		if (run("POST", "/api/v1/namespaces/default/events", "application/json", body) !=
		    201) {
			fprintf(stderr, "api-bench: creating events: %s\n", k32_buf_cstr(&g_out));
			return 1;
		}
	}
	measure("list_events_100_core", iters / 4, "GET", "/api/v1/events", NULL, NULL, 200);
	measure("list_events_100_v1", iters / 4, "GET", "/apis/events.k8s.io/v1/events", NULL, NULL,
		200);
	printf("api_bench_iterations %d\n", iters);
	k32_buf_fini(&g_out);
	api_server_free(g_api);
	store_close(store);
	return 0;
}
