/*
 * kube32-load - a small closed-loop load client for kube32-server (benchmarks only).
 *
 *   kube32-load --port N [--ca FILE] [--token T] [--clients 8] [--requests 250]
 *               [--warmup 20] [--path /api/v1/pods] [--gzip]
 *
 * Starts --clients tasks, each with its own keep-alive connection (HTTPS when --ca is given,
 * verified against that CA; plain HTTP otherwise) through src/http's client (mbedTLS, the
 * same code a kubelet uses). Each task sends --warmup requests, waits for the others, then
 * times --requests GETs of --path one after the other. Prints the latency percentiles over
 * all clients and the rate (clients / mean latency):
 *   load_clients 8
 *   load_p50_ms 0.412 ... load_p99_ms 1.9 ... load_rps 5400
 * --gzip asks for gzip answers (Accept-Encoding, as kubectl does) and inflates them, so the
 * client's decompression is inside the timed request as it is for kubectl.
 * A request that fails or answers non-200 is counted in load_failures (exit status 1).
 * The client is much cheaper than Python's (no interpreter, no GIL), so what it measures is
 * closer to the server's own latency; on a 2-core machine the clients still share the cores
 * with the server.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_alloc.h"
#include "http/http.h"
#include "platform/k32_platform.h"

#define MAX_CLIENTS 64

struct load {
	uint16_t port;
	const char *ca;
	const char *token;
	const char *path;
	int requests, warmup, clients;
	bool gzip;
	atomic_int ready;
	atomic_int failures;
	uint64_t *lat; /* clients * requests, microseconds */
};

struct worker {
	struct load *ld;
	int idx;
};

static void run_client(void *arg)
{
	struct worker *w = arg;
	struct load *ld = w->ld;
	const struct k32_platform_ops *P = k32_plat();
	struct http_client_config cc;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = ld->path};
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = ld->port;
	cc.tls = ld->ca != NULL;
	cc.ca_file = ld->ca;
	cc.bearer_token = ld->token;
	cc.accept_gzip = ld->gzip;
	if (http_client_new(&cc, &c, &err) != K32_OK) {
		fprintf(stderr, "kube32-load: %s\n", err.msg);
		atomic_fetch_add(&ld->failures, ld->requests);
		atomic_fetch_add(&ld->ready, 1);
		return;
	}
	for (int i = 0; i < ld->warmup; i++) {
		struct http_client_response resp;

		if (http_client_do(c, &req, &resp, &err) != K32_OK || resp.status != 200)
			atomic_fetch_add(&ld->failures, 1);
		http_client_response_fini(&resp);
	}
	atomic_fetch_add(&ld->ready, 1);
	while (atomic_load(&ld->ready) < ld->clients)
		P->sleep_us(100);
	for (int i = 0; i < ld->requests; i++) {
		struct http_client_response resp;
		uint64_t t0 = k32_now_us();
		k32_status_t st = http_client_do(c, &req, &resp, &err);

		ld->lat[(size_t)w->idx * (size_t)ld->requests + (size_t)i] = k32_now_us() - t0;
		if (st != K32_OK || resp.status != 200) {
			if (atomic_fetch_add(&ld->failures, 1) == 0)
				fprintf(stderr, "kube32-load: GET %s: %s %d\n", ld->path,
					st ? err.msg : "status", resp.status);
		}
		http_client_response_fini(&resp);
	}
	http_client_free(c);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static struct load ld = {
	    .path = "/api/v1/pods", .requests = 250, .warmup = 20, .clients = 8};
	static struct worker workers[MAX_CLIENTS];
	struct k32_task *tasks[MAX_CLIENTS];
	const struct k32_platform_ops *P = k32_plat();
	struct k32_err err;

	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(a, "--gzip")) {
			ld.gzip = true;
			i--; /* a flag without a value */
		} else if (!strcmp(a, "--port"))
			ld.port = (uint16_t)atoi(v);
		else if (!strcmp(a, "--ca"))
			ld.ca = v;
		else if (!strcmp(a, "--token"))
			ld.token = v;
		else if (!strcmp(a, "--path"))
			ld.path = v;
		else if (!strcmp(a, "--clients"))
			ld.clients = atoi(v);
		else if (!strcmp(a, "--requests"))
			ld.requests = atoi(v);
		else if (!strcmp(a, "--warmup"))
			ld.warmup = atoi(v);
		else {
			fprintf(stderr, "kube32-load: unknown option %s\n", a);
			return 2;
		}
	}
	if (!ld.port || ld.clients < 1 || ld.clients > MAX_CLIENTS || ld.requests < 1 ||
	    ld.warmup < 0) {
		fprintf(stderr, "usage: kube32-load --port N [--ca FILE] [--token T] [--clients "
				"1..64] [--requests N] [--warmup N] [--path P] [--gzip]\n");
		return 2;
	}
	const struct k32_allocator *a = k32_default_allocator();
	size_t lat_bytes = (size_t)ld.clients * (size_t)ld.requests * sizeof(uint64_t);

	ld.lat = k32_alloc(a, lat_bytes);
	if (!ld.lat) {
		fprintf(stderr, "kube32-load: out of memory for %d x %d latencies\n", ld.clients,
			ld.requests);
		return 1;
	}
	for (int i = 0; i < ld.clients; i++) {
		workers[i] = (struct worker){&ld, i};
		if (P->task_create(&tasks[i], "load", run_client, &workers[i], 256 * 1024, -1,
				   &err) != K32_OK) {
			fprintf(stderr, "kube32-load: %s\n", err.msg);
			return 1;
		}
	}
	for (int i = 0; i < ld.clients; i++)
		P->task_join(tasks[i]);
	size_t n = (size_t)ld.clients * (size_t)ld.requests;
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += (double)ld.lat[i];

	qsort(ld.lat, n, sizeof(uint64_t), cmp_u64);
	printf("load_clients %d\nload_gzip %d\nload_requests %zu\n", ld.clients, (int)ld.gzip, n);
	printf("load_p50_ms %.3f\nload_p90_ms %.3f\nload_p99_ms %.3f\nload_max_ms %.3f\n",
	       ld.lat[n / 2] / 1e3, ld.lat[n * 9 / 10] / 1e3, ld.lat[n * 99 / 100] / 1e3,
	       ld.lat[n - 1] / 1e3);
	/* Closed loop: each client has one request in flight, so rate = clients / mean. */
	printf("load_rps %.0f\nload_failures %d\n", ld.clients / (sum / (double)n / 1e6),
	       atomic_load(&ld.failures));
	k32_free(a, ld.lat, lat_bytes);
	return atomic_load(&ld.failures) ? 1 : 0;
}
