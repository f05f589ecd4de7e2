/*
 * http_bench.c - numbers for the HTTP layer on this machine (loopback only):
 *   1. GET latency with 8 concurrent keep-alive clients (1 KiB and 100 KiB bodies);
 *   2. memory of 500 open, quiet streams (server allocator bytes and process RSS);
 *   3. wake-to-client latency of a stream event;
 *   4. TLS: handshake time and memory per idle TLS connection;
 *   5. CPU of the server loop with 10 idle keep-alive connections over 2 s.
 * Usage: http-bench [data_dir]   (data_dir holds the TLS material; default ./http-bench-data)
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "platform/k32_platform.h"

#define CLIENTS	  8
#define REQS	  2000
#define STREAMS	  500
#define TLS_CONNS 100

static const struct k32_platform_ops *P;
static char g_body[100 * 1024];
static atomic_uint g_sid;
static atomic_int g_pending; /* events the producer has asked for */

static k32_status_t ev_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	(void)ctx;
	while (atomic_load(&g_pending) > 0) {
		k32_status_t st = http_stream_write(s, "{\"type\":\"MODIFIED\"}\n", 20);

		if (st != K32_OK)
			return st == K32_ERR_SHOULD_WAIT ? K32_OK : st;
		atomic_fetch_sub(&g_pending, 1);
	}
	(void)events;
	return K32_OK;
}

static void ev_close(void *ctx, k32_status_t why)
{
	(void)ctx;
	(void)why;
}

static const struct http_stream_ops ev_ops = {ev_pull, ev_close};

static void handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	(void)ctx;
	if (k32_str_eq_cstr(req->path, "/watch")) {
		http_stream_id_t id;

		http_response_stream(resp, &ev_ops, NULL, &id);
		atomic_store(&g_sid, id);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/slow")) {
		P->sleep_us(5000); /* stands for a handler waiting on an fsync */
		http_response_set(resp, 200, "application/json", "{}", 2);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/big")) {
		http_response_set(resp, 200, "application/json", g_body, sizeof(g_body));
		return;
	}
	http_response_set(resp, 200, "application/json", g_body, 1024);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Resident set size from /proc (Linux; 0 elsewhere). stdio only, no OS header. */
static size_t rss_bytes(void)
{
	char line[256];
	size_t rss = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			rss = (size_t)strtoull(line + 6, NULL, 10) * 1024;
	}
	fclose(f);
	return rss;
}

struct worker {
	uint16_t port;
	const char *target;
	uint64_t lat[REQS];
	int failures;
};

static void worker_fn(void *arg)
{
	struct worker *w = arg;
	struct http_client_config cc;
	struct http_client *c;
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = w->port;
	if (http_client_new(&cc, &c, &err) != K32_OK) {
		w->failures = REQS;
		return;
	}
	for (int i = 0; i < REQS; i++) {
		struct http_client_request req = {.method = "GET", .target = w->target};
		struct http_client_response resp;
		uint64_t t0 = k32_now_us();

		if (http_client_do(c, &req, &resp, &err) != K32_OK || resp.status != 200)
			w->failures++;
		w->lat[i] = k32_now_us() - t0;
		http_client_response_fini(&resp);
	}
	http_client_free(c);
}

static void bench_latency(struct http_server *srv, const char *target, const char *label)
{
	static struct worker w[CLIENTS];
	static uint64_t all[CLIENTS * REQS];
	struct k32_task *t[CLIENTS];
	struct k32_err err;
	int failures = 0;
	size_t n = 0;

	for (int i = 0; i < CLIENTS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].port = http_server_port(srv);
		w[i].target = target;
		P->task_create(&t[i], "bench-cl", worker_fn, &w[i], 0, -1, &err);
	}
	for (int i = 0; i < CLIENTS; i++) {
		P->task_join(t[i]);
		failures += w[i].failures;
		memcpy(all + n, w[i].lat, sizeof(w[i].lat));
		n += REQS;
	}
	qsort(all, n, sizeof(all[0]), cmp_u64);
	printf("http: GET %s, %d clients x %d keep-alive requests: median %.3f ms, p99 %.3f ms, "
	       "failures %d\n",
	       label, CLIENTS, REQS, all[n / 2] / 1000.0, all[n * 99 / 100] / 1000.0, failures);
}

static void bench_streams(struct http_server *srv)
{
	static k32_sock_t socks[STREAMS];
	struct http_server_stats a, b;
	struct k32_err err;
	size_t rss0, rss1;
	char buf[512];

	http_server_get_stats(srv, &a);
	rss0 = rss_bytes();
	for (int i = 0; i < STREAMS; i++) {
		P->tcp_connect("127.0.0.1", http_server_port(srv), 5000000, &socks[i], &err);
		const char *req = "GET /watch HTTP/1.1\r\nHost: x\r\n\r\n";
		size_t sent;

		P->sock_send(socks[i], req, strlen(req), &sent);
	}
	for (int i = 0; i < STREAMS; i++) {
		size_t got = 0;

		P->sock_recv(socks[i], buf, sizeof(buf), &got); /* the response head */
	}
	http_server_get_stats(srv, &b);
	rss1 = rss_bytes();
	printf("http: %u open watch streams: server allocator +%zu bytes (%zu per stream), process "
	       "RSS +%zu KiB\n",
	       b.streams_open - a.streams_open, b.mem_bytes - a.mem_bytes,
	       (b.mem_bytes - a.mem_bytes) / STREAMS, (rss1 - rss0) / 1024);
	for (int i = 0; i < STREAMS; i++)
		P->sock_close(socks[i]);
}

struct ev_sink {
	int got;
};

static k32_status_t ev_line(void *ctx, const uint8_t *d, size_t len)
{
	(void)ctx;
	(void)d;
	(void)len;
	return K32_ERR_CANCELED; /* one event per call */
}

static void bench_wake_latency(struct http_server *srv)
{
	enum { EVENTS = 2000 };
	static uint64_t lat[EVENTS];
	k32_sock_t s;
	struct k32_err err;
	char buf[4096];
	size_t got;
	const char *req = "GET /watch HTTP/1.1\r\nHost: x\r\n\r\n";

	(void)ev_line;
	P->tcp_connect("127.0.0.1", http_server_port(srv), 5000000, &s, &err);
	P->sock_send(s, req, strlen(req), &got);
	P->sock_recv(s, buf, sizeof(buf), &got);
	for (int i = 0; i < EVENTS; i++) {
		uint64_t t0 = k32_now_us();

		atomic_fetch_add(&g_pending, 1);
		http_server_stream_wake(srv, atomic_load(&g_sid));
		P->sock_recv(s, buf, sizeof(buf), &got);
		lat[i] = k32_now_us() - t0;
	}
	qsort(lat, EVENTS, sizeof(lat[0]), cmp_u64);
	printf("http: stream event, wake from another thread to bytes at the client: median %.1f "
	       "us, p99 %.1f us\n",
	       (double)lat[EVENTS / 2], (double)lat[EVENTS * 99 / 100]);
	P->sock_close(s);
}

static void bench_tls(const char *dir)
{
	static struct http_client *cl[TLS_CONNS];
	static uint64_t hs[TLS_CONNS];
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client_config cc;
	struct k32_err err;
	size_t rss0, rss1;

	http_server_config_init(&cfg);
	cfg.handler = handler;
	cfg.tls = true;
	cfg.data_dir = dir;
	if (http_server_start(&cfg, &srv, &err) != K32_OK) {
		printf("http: TLS bench skipped: %s\n", err.msg);
		return;
	}
	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	cc.tls = true;
	cc.ca_file = http_server_ca_file(srv);
	rss0 = rss_bytes();
	for (int i = 0; i < TLS_CONNS; i++) {
		struct http_client_request req = {.method = "GET", .target = "/"};
		struct http_client_response resp;
		uint64_t t0 = k32_now_us();

		http_client_new(&cc, &cl[i], &err);
		http_client_do(cl[i], &req, &resp, &err);
		hs[i] = k32_now_us() - t0;
		http_client_response_fini(&resp);
	}
	rss1 = rss_bytes();
	qsort(hs, TLS_CONNS, sizeof(hs[0]), cmp_u64);
	printf("http: TLS (ECDSA P-256, TLS 1.2) new connection + first GET: median %.2f ms; %d "
	       "idle TLS connections: RSS +%zu KiB (client and server sides, ~%zu KiB per pair)\n",
	       hs[TLS_CONNS / 2] / 1000.0, TLS_CONNS, (rss1 - rss0) / 1024,
	       (rss1 - rss0) / 1024 / TLS_CONNS);
	for (int i = 0; i < TLS_CONNS; i++)
		http_client_free(cl[i]);
	http_server_stop(srv);
}

static void bench_idle_cpu(struct http_server *srv)
{
	static struct k32_task_info info[64];
	struct http_client *cl[10];
	struct http_client_config cc;
	struct k32_err err;
	size_t count = 0;
	uint64_t cpu0 = 0, cpu1 = 0;

	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	for (int i = 0; i < 10; i++) {
		struct http_client_request req = {.method = "GET", .target = "/"};
		struct http_client_response resp;

		http_client_new(&cc, &cl[i], &err);
		http_client_do(cl[i], &req, &resp, &err);
		http_client_response_fini(&resp);
	}
	P->task_list(info, 64, &count);
	for (size_t i = 0; i < count && i < 64; i++)
		if (strcmp(info[i].name, "http") == 0 && info[i].running)
			cpu0 += info[i].cpu_us;
	P->sleep_us(2000000);
	P->task_list(info, 64, &count);
	for (size_t i = 0; i < count && i < 64; i++)
		if (strcmp(info[i].name, "http") == 0 && info[i].running)
			cpu1 += info[i].cpu_us;
	printf("http: server loop CPU with 10 idle keep-alive connections: %llu us over 2 s (%.4f "
	       "%% of a core)\n",
	       (unsigned long long)(cpu1 - cpu0), (double)(cpu1 - cpu0) / 20000.0);
	for (int i = 0; i < 10; i++)
		http_client_free(cl[i]);
}

static atomic_int g_slow_stop;

static void slow_fn(void *arg)
{
	struct http_client_config cc;
	struct http_client *c;
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = *(uint16_t *)arg;
	if (http_client_new(&cc, &c, &err) != K32_OK)
		return;
	while (!atomic_load(&g_slow_stop)) {
		struct http_client_request req = {.method = "GET", .target = "/slow"};
		struct http_client_response resp;

		http_client_do(c, &req, &resp, &err);
		http_client_response_fini(&resp);
	}
	http_client_free(c);
}

/* GET latency of one client while another keeps a 5 ms handler busy. */
static void bench_slow_neighbour(uint32_t threads)
{
	enum { N = 300 };
	static uint64_t lat[N];
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client_config cc;
	struct http_client *c;
	struct k32_task *t;
	struct k32_err err;
	uint16_t port;

	http_server_config_init(&cfg);
	cfg.handler = handler;
	cfg.handler_threads = threads;
	if (http_server_start(&cfg, &srv, &err) != K32_OK)
		return;
	port = http_server_port(srv);
	atomic_store(&g_slow_stop, 0);
	P->task_create(&t, "bench-slow", slow_fn, &port, 0, -1, &err);
	http_client_config_init(&cc);
	cc.port = port;
	http_client_new(&cc, &c, &err);
	for (int i = 0; i < N; i++) {
		struct http_client_request req = {.method = "GET", .target = "/"};
		struct http_client_response resp;
		uint64_t t0 = k32_now_us();

		http_client_do(c, &req, &resp, &err);
		lat[i] = k32_now_us() - t0;
		http_client_response_fini(&resp);
	}
	atomic_store(&g_slow_stop, 1);
	P->task_join(t);
	http_client_free(c);
	http_server_stop(srv);
	qsort(lat, N, sizeof(lat[0]), cmp_u64);
	printf("http: GET 1 KiB next to a client busy in a 5 ms handler, handler_threads=%u: "
	       "median %.3f ms, p99 %.3f ms\n",
	       threads, lat[N / 2] / 1000.0, lat[N * 99 / 100] / 1000.0);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "http-bench-data";
	struct http_server_config cfg;
	struct http_server *srv;
	struct k32_err err;

	P = k32_plat();
	memset(g_body, 'x', sizeof(g_body));
	http_server_config_init(&cfg);
	cfg.handler = handler;
	if (http_server_start(&cfg, &srv, &err) != K32_OK) {
		fprintf(stderr, "http-bench: %s\n", err.msg);
		return 1;
	}
	bench_latency(srv, "/", "1 KiB body");
	bench_latency(srv, "/big", "100 KiB body");
	bench_streams(srv);
	bench_wake_latency(srv);
	bench_idle_cpu(srv);
	http_server_stop(srv);
	bench_slow_neighbour(0);
	bench_slow_neighbour(2);
	bench_tls(dir);
	return 0;
}
