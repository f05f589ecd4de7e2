/*
 * kube32-sim-bench - the cluster figures of issue 6, measured on one kube32-sim-like
 * process: a control plane (HTTPS, scheduler and controllers when built) and one host
 * board running the hello pod.
 *
 *   kube32-sim-bench DATA_DIR IMAGES_DIR [PODS]
 *
 *   create -> scheduled   POST of a pod without nodeName (HTTPS, admin token) until its
 *                         spec.nodeName is set (reference devkit: 1.1 s; target < 20 ms)
 *   create -> Running     ... until its Ready condition is True (devkit: 2.8 s; < 100 ms)
 *   pod HTTP round trip   GET through the node's pod server with X-Kube32-Pod on a kept-
 *                         alive connection (devkit over Wi-Fi: 37 ms; < 1 ms)
 *   RSS, idle CPU         of this process with PODS (10) hello pods running, CPU over 10 s
 *                         of idling (reference: 10.3 MiB, 0.33 %; targets 5 MiB, 0.2 %)
 *
 * Medians and 99th percentiles of wall-clock time; the machine is shared, so read them
 * as orders of magnitude against the reference, not as exact numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/k32_json.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "kubelet/klet.h"
#include "platform/k32_platform.h"
#include "sim/sim.h"

#define MAX_PODS  64
#define HTTP_REQS 2000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i];
}

static cJSON *get_pod(struct cplane *cp, const char *name)
{
	char target[200];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", name);
	struct k32_buf b;
	struct k32_err err;
	int code = 0;
	cJSON *j = NULL;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "pod");
	if (!api_do(cplane_api(cp), "GET", target, NULL, NULL, 0, &code, &b, &err) && code == 200)
		k32_json_parse((const char *)b.data, b.len, &j, NULL);
	k32_buf_fini(&b);
	return j;
}

static bool is_ready(const cJSON *pod)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, k32_json_find(pod, "status.conditions"))
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
		const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
		if (t && s && !strcmp(t, "Ready"))
			return !strcmp(s, "True");
	}
	return false;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: kube32-sim-bench DATA_DIR IMAGES_DIR [PODS]\n");
		return 2;
	}
	int npods = argc > 3 ? atoi(argv[3]) : 10;
	if (npods < 1 || npods > MAX_PODS)
		npods = 10;
	k32_log_set_level(K32_LOG_WARN);
	struct k32_err err;
	k32_err_clear(&err);
	struct cplane_config cc;
	cplane_config_init(&cc);
	cc.data_dir = argv[1];
	struct cplane *cp;
	if (cplane_start(&cc, &cp, &err)) {
		fprintf(stderr, "kube32-sim-bench: %s\n", err.msg);
		return 1;
	}
	char tok[128];
	struct klet *k = NULL;
	int rc = 1;
	if (cplane_node_token(cp, "host-1", tok, sizeof(tok), &err))
		goto out;
	struct sim_board_config bc = {.name = "host-1",
				      .profile = sim_profile_find("host"),
				      .api_port = cplane_port(cp),
				      .ca_file = cplane_ca_file(cp),
				      .token = tok,
				      .image_dir = argv[2]};
	if (sim_board_start(&bc, &k, &err))
		goto out;
	/* the client kubectl would be: HTTPS with the admin token */
	struct http_client_config hc;
	http_client_config_init(&hc);
	hc.port = cplane_port(cp);
	hc.tls = true;
	hc.ca_file = cplane_ca_file(cp);
	hc.bearer_token = cplane_admin_token(cp);
	struct http_client *api_cli;
	if (http_client_new(&hc, &api_cli, &err))
		goto out;
	bool sched = cplane_has_controllers(cp);
	uint64_t t_sched[MAX_PODS], t_run[MAX_PODS];
	int nsched = 0;
	for (int i = 0; i < npods; i++) {
		char body[600], name[32];
		snprintf(name, sizeof(name), "hello-%d", i);
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
			 "\"spec\":{%s\"containers\":[{\"name\":\"main\",\"image\":\"hello.wasm\","
			 "\"resources\":{\"limits\":{\"memory\":\"24Ki\"}}}]}}",
			 name, sched ? "" : "\"nodeName\":\"host-1\",");
		struct http_client_request rq = {.method = "POST",
						 .target = "/api/v1/namespaces/default/pods",
						 .content_type = "application/json",
						 .body = body,
						 .body_len = strlen(body)};
		struct http_client_response r;
		uint64_t t0 = k32_now_us();
		k32_status_t st = http_client_do(api_cli, &rq, &r, &err);
		int status = r.status;
		http_client_response_fini(&r);
		if (st || status != 201) {
			fprintf(stderr, "kube32-sim-bench: creating %s: %s HTTP %d\n", name,
				err.msg, status);
			goto out_cli;
		}
		bool bound = false;
		for (;;) {
			cJSON *p = get_pod(cp, name);
			uint64_t now = k32_now_us();
			if (!bound && cJSON_GetStringValue(k32_json_find(p, "spec.nodeName"))) {
				bound = true;
				t_sched[nsched++] = now - t0;
			}
			bool ready = p && is_ready(p);
			cJSON_Delete(p);
			if (ready) {
				t_run[i] = now - t0;
				break;
			}
			if (now - t0 > 30000000) {
				fprintf(stderr, "kube32-sim-bench: %s not Running after 30 s\n",
					name);
				goto out_cli;
			}
			k32_plat()->sleep_us(200);
		}
	}
	printf("%-34s %10s %10s   %s\n", "measure", "median", "p99", "reference devkit / target");
	if (sched && nsched)
		printf("%-34s %8.2fms %8.2fms   1.1 s / < 20 ms\n", "create -> scheduled",
		       pct(t_sched, (size_t)nsched, 0.5) / 1000,
		       pct(t_sched, (size_t)nsched, 0.99) / 1000);
	printf("%-34s %8.2fms %8.2fms   2.8 s / < 100 ms%s\n", "create -> Running",
	       pct(t_run, (size_t)npods, 0.5) / 1000, pct(t_run, (size_t)npods, 0.99) / 1000,
	       sched ? "" : " (pinned: no controllers)");

	/* pod HTTP round trips on one kept-alive connection */
	struct http_client_config pc;
	http_client_config_init(&pc);
	pc.port = klet_pod_http_port(k);
	struct http_client *pod_cli;
	if (http_client_new(&pc, &pod_cli, &err))
		goto out_cli;
	static uint64_t t_http[HTTP_REQS];
	struct http_client_request rq = {
	    .method = "GET", .target = "/bench", .headers = "X-Kube32-Pod: default/hello-0\r\n"};
	for (int i = 0; i < HTTP_REQS; i++) {
		struct http_client_response r;
		uint64_t t0 = k32_now_us();
		k32_status_t st = http_client_do(pod_cli, &rq, &r, &err);
		t_http[i] = k32_now_us() - t0;
		int status = r.status;
		http_client_response_fini(&r);
		if (st || status != 200) {
			fprintf(stderr, "kube32-sim-bench: pod HTTP: %s HTTP %d\n", err.msg,
				status);
			http_client_free(pod_cli);
			goto out_cli;
		}
	}
	http_client_free(pod_cli);
	printf("%-34s %8.3fms %8.3fms   37 ms / < 1 ms\n", "pod HTTP round trip (loopback)",
	       pct(t_http, HTTP_REQS, 0.5) / 1000, pct(t_http, HTTP_REQS, 0.99) / 1000);

	/* idle: every pod ticks once a second, the lease renews every 10 s. The API client
	 * (kubectl's part, another process in real use) is closed first: RSS is the cluster's. */
	http_client_free(api_cli);
	api_cli = NULL;
	clock_t c0 = clock();
	uint64_t w0 = k32_now_us();
	k32_plat()->sleep_us(10000000);
	double cpu_s = (double)(clock() - c0) / CLOCKS_PER_SEC;
	double wall_s = (double)(k32_now_us() - w0) / 1e6;
	long rss = rss_kib();
	struct klet_stats ks;
	klet_get_stats(k, &ks);
	char what[64];
	snprintf(what, sizeof(what), "RSS, control plane + %d pods", npods);
	if (rss >= 0)
		printf("%-34s %8.2fMiB %10s   10.3 MiB / < 5 MiB\n", what, (double)rss / 1024, "");
	printf("%-34s %9.3f%% %10s   0.33 %% / < 0.2 %%\n", "idle CPU (share of one core)",
	       100.0 * cpu_s / wall_s, "");
	printf("%-34s %8zuB %10s   pool %zu B, peak %zu B\n", "pod pool in use", ks.pool_bytes, "",
	       ks.pool_limit, ks.pool_peak);
	const struct k32_heap *heap = k32_default_allocator()->ud;
	printf("%-34s %8zuB %10s   peak %zu B (mbedTLS and libc allocations not counted)\n",
	       "default heap in use", __atomic_load_n(&heap->stats.cur_bytes, __ATOMIC_RELAXED), "",
	       __atomic_load_n(&heap->stats.peak_bytes, __ATOMIC_RELAXED));
	rc = 0;
out_cli:
	http_client_free(api_cli);
out:
	if (rc)
		fprintf(stderr, "kube32-sim-bench: %s\n", err.msg);
	klet_stop_begin(k);
	cplane_stop(cp);
	klet_free(k);
	return rc;
}
