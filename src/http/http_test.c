/*
 * http_test.c - tests of src/http: helpers, the server driven by the client and by raw
 * sockets (keep-alive, pipelining, chunked bodies, limits, malformed input, slow clients,
 * connection limit, streams), TLS with the generated CA (and its reuse), bearer tokens,
 * curl against the TLS server, and memory per open stream.
 *
 * Every server listens on 127.0.0.1 port 0 and is stopped by the test that started it.
 * No test asserts a duration: waits are bounded only so that a bug fails instead of hanging.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/http.h"

#if K32_HTTP_GZIP
#include <zlib.h>
#endif
#include "platform/k32_platform.h"

#define WAIT_US 10000000 /* upper bound of any wait in these tests (10 s) */

static const struct k32_platform_ops *P;

/* ---- the test handler ---------------------------------------------------------------------- */

struct stream_prod {
	int total;	      /* lines to send */
	atomic_int sent;      /* lines sent so far */
	atomic_int closed;    /* close callback ran */
	atomic_int close_why; /* its status */
	bool wait_for_wake;   /* send the next line only after a wake */
};

static struct stream_prod g_prod;
static atomic_uint g_stream_id;
static struct http_server *g_srv;

static k32_status_t prod_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	struct stream_prod *p = ctx;
	char line[64];

	int budget =
	    ((events & HTTP_STREAM_EV_START) ? 1 : 0) + ((events & HTTP_STREAM_EV_WAKE) ? 1 : 0);

	if (!(events & (HTTP_STREAM_EV_START | HTTP_STREAM_EV_WAKE | HTTP_STREAM_EV_WRITABLE)))
		return K32_OK;
	while (atomic_load(&p->sent) < p->total) {
		int n = snprintf(line, sizeof(line), "{\"type\":\"ADDED\",\"n\":%d}\n",
				 atomic_load(&p->sent) + 1);
		k32_status_t st = http_stream_write(s, line, (size_t)n);

		if (st == K32_ERR_SHOULD_WAIT)
			return K32_OK;
		if (st != K32_OK)
			return st;
		atomic_fetch_add(&p->sent, 1);
		/* In wake mode: one line for the start and one per wake. */
		if (p->wait_for_wake && --budget <= 0)
			break;
	}
	return atomic_load(&p->sent) >= p->total ? K32_ERR_CANCELED : K32_OK;
}

static void prod_close(void *ctx, k32_status_t why)
{
	struct stream_prod *p = ctx;

	atomic_store(&p->close_why, why);
	atomic_store(&p->closed, 1);
}

static const struct http_stream_ops prod_ops = {prod_pull, prod_close};

/* Idle streams for the memory test: never write, close when the client leaves. */
static atomic_int g_idle_closed;

static k32_status_t idle_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	(void)ctx;
	(void)s;
	(void)events;
	return K32_OK;
}

static void idle_close(void *ctx, k32_status_t why)
{
	(void)ctx;
	(void)why;
	atomic_fetch_add(&g_idle_closed, 1);
}

static const struct http_stream_ops idle_ops = {idle_pull, idle_close};

/* hs_steps when /order ran (test_handshake_before_requests) */
static atomic_ullong g_order_hs_steps;

/* /block waits (bounded) until /unblock ran: only possible with handler threads. */
static struct k32_mutex g_block_mu;
static struct k32_cond g_block_cond;
static int g_unblocked;

static void handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	char q[64] = "";
	size_t qlen = 0;

	(void)ctx;
	if (k32_str_eq_cstr(req->path, "/block")) {
		int64_t deadline = k32_deadline_after(WAIT_US);

		k32_mutex_lock(&g_block_mu);
		while (!g_unblocked && P->cond_wait(&g_block_cond, &g_block_mu, deadline) == K32_OK)
			;
		resp->status = g_unblocked ? 200 : 504;
		k32_mutex_unlock(&g_block_mu);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/order")) {
		struct http_server_stats st;

		http_server_get_stats(req->server, &st);
		atomic_store(&g_order_hs_steps, st.hs_steps);
		resp->status = 200;
		return;
	}
	if (k32_str_eq_cstr(req->path, "/unblock")) {
		k32_mutex_lock(&g_block_mu);
		g_unblocked = 1;
		P->cond_broadcast(&g_block_cond);
		k32_mutex_unlock(&g_block_mu);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/stream")) {
		http_stream_id_t id = 0;

		http_response_header(resp, "Content-Type", "application/json");
		assert_int_equal(http_response_stream(resp, &prod_ops, &g_prod, &id), K32_OK);
		assert_int_equal(http_response_stream(resp, &prod_ops, &g_prod, NULL),
				 K32_ERR_BAD_STATE);
		assert_true(id != 0);
		atomic_store(&g_stream_id, id);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/stream-selfwake")) {
		http_stream_id_t id = 0;

		/* A wake right after registration, before the first pull, must not be lost. */
		assert_int_equal(http_response_stream(resp, &prod_ops, &g_prod, &id), K32_OK);
		assert_int_equal(http_server_stream_wake(req->server, id), K32_OK);
		atomic_store(&g_stream_id, 0);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/idle-stream")) {
		http_response_stream(resp, &idle_ops, NULL, NULL);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/big")) {
		resp->status = 200;
		for (int i = 0; i < 20000; i++)
			k32_buf_printf(&resp->body, NULL, "line %05d of a big body\n", i);
		return;
	}
	if (k32_str_eq_cstr(req->path, "/close")) {
		resp->close = true;
		http_response_set(resp, 200, "text/plain", "bye", 3);
		return;
	}
	/* /echo and everything else */
	http_query_get(req->query, "q", q, sizeof(q), &qlen);
	resp->status = k32_str_eq_cstr(req->path, "/echo") ? 200 : 404;
	http_response_header(resp, "Content-Type", "text/plain");
	k32_buf_printf(&resp->body, NULL, "method=%s path=%.*s q=%s token=%.*s tls=%d body=%.*s",
		       req->method, (int)req->path.len, req->path.p, q, (int)req->bearer_token.len,
		       req->bearer_token.p, req->tls, (int)req->body_len, (const char *)req->body);
}

static bool authenticate(void *ctx, struct http_request *req, struct http_response *resp)
{
	(void)ctx;
	if (k32_str_eq_cstr(req->bearer_token, "good-token")) {
		req->identity = (void *)"admin";
		return true;
	}
	http_response_set(resp, 401, "application/json", "{\"reason\":\"Unauthorized\"}", 25);
	return false;
}

static struct http_server *start(struct http_server_config *cfg)
{
	struct http_server *srv = NULL;
	struct k32_err err;

	cfg->handler = handler;
	if (http_server_start(cfg, &srv, &err) != K32_OK)
		fail_msg("server start: %s", err.msg);
	g_srv = srv;
	return srv;
}

static struct http_server *start_default(void)
{
	struct http_server_config cfg;

	http_server_config_init(&cfg);
	return start(&cfg);
}

static struct http_client *client_for(struct http_server *srv, const char *token)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	cc.bearer_token = token;
	cc.timeout_us = WAIT_US;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	return c;
}

/* ---- raw socket helpers ---------------------------------------------------------------------- */

static k32_sock_t raw_connect(struct http_server *srv)
{
	k32_sock_t s;
	struct k32_err err;

	assert_int_equal(P->tcp_connect("127.0.0.1", http_server_port(srv), WAIT_US, &s, &err),
			 K32_OK);
	return s;
}

static void raw_send(k32_sock_t s, const char *data, size_t len)
{
	while (len > 0) {
		size_t n = 0;

		assert_int_equal(P->sock_send(s, data, len, &n), K32_OK);
		data += n;
		len -= n;
	}
}

static void raw_send_str(k32_sock_t s, const char *data)
{
	raw_send(s, data, strlen(data));
}

/*
 * Reads until buf holds `until` (if non-NULL), the peer closes, or cap fills. Returns bytes
 * read; *out_closed tells whether the peer closed.
 */
static size_t raw_read(k32_sock_t s, char *buf, size_t cap, const char *until, bool *out_closed)
{
	size_t len = 0;
	int64_t deadline = (int64_t)k32_now_us() + WAIT_US;

	*out_closed = false;
	buf[0] = 0;
	while (len + 1 < cap && (!until || !strstr(buf, until))) {
		struct k32_pollfd p = {s, K32_POLL_IN, 0};
		size_t ready = 0, n = 0;
		int64_t left = deadline - (int64_t)k32_now_us();
		k32_status_t st;

		if (left <= 0)
			fail_msg("raw_read: nothing for %d s (have %zu bytes: %.80s)",
				 WAIT_US / 1000000, len, buf);
		P->poll(&p, 1, left, &ready);
		if (ready == 0)
			continue;
		st = P->sock_recv(s, buf + len, cap - 1 - len, &n);
		if (st != K32_OK) {
			*out_closed = true;
			break;
		}
		len += n;
		buf[len] = 0;
	}
	return len;
}

/* Reads until the peer closes (bounded); returns bytes. */
static size_t raw_read_all(k32_sock_t s, char *buf, size_t cap)
{
	bool closed = false;
	size_t n = raw_read(s, buf, cap, NULL, &closed);

	assert_true(closed);
	return n;
}

/* ---- gzip ------------------------------------------------------------------------------------ */

static void test_accepts_gzip(void **state)
{
	static const struct {
		const char *value;
		bool gzip;
	} cases[] = {
	    {"gzip", true},
	    {"GZIP", true},
	    {"deflate, gzip", true},
	    {"gzip;q=0.5", true},
	    {" br ; q=1 , gzip ; q=0.8", true},
	    {"*", true},
	    {"gzip;q=1.0", true},
	    {"gzip;q=0", false},
	    {"gzip;q=0.000", false},
	    {"identity", false},
	    {"", false},
	    {"gzipx", false},
	    {"x-gzip2, br", false},
	    {",,,", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (http_accepts_gzip(k32_str_from(cases[i].value)) != cases[i].gzip)
			fail_msg("Accept-Encoding \"%s\": expected %s", cases[i].value,
				 cases[i].gzip ? "gzip" : "no gzip");
	}
}

#if K32_HTTP_GZIP
/* Inflates a gzip member; returns its length (0 on any error). */
static size_t gunzip(const void *in, size_t len, char *out, size_t cap)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 0;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	int zr = inflate(&z, Z_FINISH);
	size_t n = cap - z.avail_out;
	inflateEnd(&z);
	return zr == Z_STREAM_END && z.avail_in == 0 ? n : 0;
}

static void test_gzip_encode(void **state)
{
	static char text[100000], back[100001];
	struct k32_buf out;
	struct k32_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = "{\"metadata\":{\"name\":\"pod-"[i % 25] + (char)(i % 251 == 0);
	/* round trip, appended after what the buffer already holds */
	k32_buf_init(&out, k32_default_allocator(), sizeof(text), "gzip test");
	assert_int_equal(k32_buf_append_str(&out, "head", &err), K32_OK);
	assert_int_equal(http_gzip(text, sizeof(text), &out, &err), K32_OK);
	assert_true(out.len > 4 + 18 && out.len < sizeof(text) / 10);
	assert_memory_equal(out.data, "head", 4);
	assert_int_equal(gunzip(out.data + 4, out.len - 4, back, sizeof(back)), sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
	/* capped just under the input, as the server does: small and odd sizes all fit */
	static const size_t sizes[] = {1024, 1500, 3728, 4097, 16385, 65536};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		k32_buf_fini(&out);
		k32_buf_init(&out, k32_default_allocator(), sizes[i] - 1, "capped body");
		if (http_gzip(text, sizes[i], &out, &err) != K32_OK)
			fail_msg("gzip of %zu bytes capped at %zu: %s", sizes[i], sizes[i] - 1,
				 err.msg);
		assert_int_equal(gunzip(out.data, out.len, back, sizeof(back)), sizes[i]);
		assert_memory_equal(back, text, sizes[i]);
	}
	/* an empty body is a valid (empty) member */
	k32_buf_reset(&out);
	assert_int_equal(http_gzip("", 0, &out, &err), K32_OK);
	assert_int_equal(gunzip(out.data, out.len, back, sizeof(back)), 0 * 1);
	k32_buf_fini(&out);
	/* a cap the compressed bytes do not fit: refused, buffer unchanged, message says so */
	k32_buf_init(&out, k32_default_allocator(), 64, "tiny body");
	assert_int_equal(k32_buf_append_str(&out, "keep", &err), K32_OK);
	k32_err_clear(&err);
	assert_int_equal(http_gzip(text, sizeof(text), &out, &err), K32_ERR_NO_RESOURCES);
	assert_int_equal(out.len, 4);
	assert_string_equal(k32_buf_cstr(&out), "keep");
	assert_non_null(strstr(err.msg, "tiny body"));
	k32_buf_fini(&out);
}

/* http_gunzip: round trip, and every way a body can be wrong */
static void test_gunzip(void **state)
{
	static char text[50000];
	struct k32_buf z, out;
	struct k32_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + (i * 7 + i / 13) % 26);
	k32_buf_init(&z, k32_default_allocator(), 1 << 20, "gz");
	assert_int_equal(http_gzip(text, sizeof(text), &z, &err), K32_OK);
	static const struct {
		const char *what;
		int edit;   /* 0 none, 1 truncate, 2 flip a middle byte, 3 trailing bytes,
			     * 4 not gzip, 5 flip the CRC */
		size_t cap; /* out's max_len */
		k32_status_t want;
		const char *msg; /* part of the error */
	} cases[] = {
	    {"whole", 0, sizeof(text) + 1, K32_OK, NULL},
	    {"truncated", 1, sizeof(text) + 1, K32_ERR_CORRUPT, "truncated"},
	    {"flipped", 2, 1 << 20, K32_ERR_CORRUPT, "gunzip"}, /* may inflate to more */
	    {"trailing", 3, sizeof(text) + 1, K32_ERR_CORRUPT, "after the gzip member"},
	    {"not gzip", 4, sizeof(text) + 1, K32_ERR_CORRUPT, "not a valid gzip stream"},
	    {"bad crc", 5, sizeof(text) + 1, K32_ERR_CORRUPT, "gunzip"},
	    {"over the cap", 0, sizeof(text), K32_ERR_NO_RESOURCES, "passes its limit"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static uint8_t in[1 << 16];
		size_t n = z.len;
		memcpy(in, z.data, n);
		switch (cases[i].edit) {
		case 1:
			n /= 2;
			break;
		case 2:
			in[n / 2] ^= 0x55;
			break;
		case 3:
			memcpy(in + n, "junk", 4);
			n += 4;
			break;
		case 4:
			memcpy(in, "{\"kind\":\"PodList\"}", 18);
			n = 18;
			break;
		case 5:
			in[n - 6] ^= 1; /* CRC-32 of the trailer */
			break;
		}
		k32_buf_init(&out, k32_default_allocator(), cases[i].cap, "test body");
		assert_int_equal(k32_buf_append_str(&out, "x", &err), K32_OK);
		k32_err_clear(&err);
		k32_status_t st = http_gunzip(in, n, &out, &err);
		if (st != cases[i].want || (cases[i].msg && !strstr(err.msg, cases[i].msg)))
			fail_msg("%s: %s (%s), want %s", cases[i].what, k32_status_name(st),
				 err.msg, k32_status_name(cases[i].want));
		if (st == K32_OK) {
			assert_int_equal(out.len, 1 + sizeof(text));
			assert_memory_equal(out.data + 1, text, sizeof(text));
		} else {
			assert_int_equal(out.len, 1); /* unchanged */
		}
		k32_buf_fini(&out);
	}
	k32_buf_fini(&z);
}

#else  /* !K32_HTTP_GZIP */

/* Built without zlib (-DK32_HTTP_GZIP=OFF, the boards): both directions refuse, and say why. */
static void test_gzip_off(void **state)
{
	struct k32_buf out;
	struct k32_err err;

	(void)state;
	k32_buf_init(&out, k32_default_allocator(), 4096, "gzip test");
	assert_int_equal(k32_buf_append_str(&out, "keep", &err), K32_OK);
	assert_int_equal(http_gzip("abc", 3, &out, &err), K32_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(err.msg, "K32_HTTP_GZIP=0"));
	assert_int_equal(http_gunzip("abc", 3, &out, &err), K32_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(err.msg, "K32_HTTP_GZIP=0"));
	assert_string_equal(k32_buf_cstr(&out), "keep");
	k32_buf_fini(&out);
}

/* The tests below read a compressed body only when zlib is there; without it none comes. */
static size_t gunzip(const void *in, size_t len, char *out, size_t cap)
{
	(void)in;
	(void)len;
	(void)out;
	(void)cap;
	fail_msg("a gzip body from a server built without zlib");
	return 0;
}
#endif /* K32_HTTP_GZIP */

/* A client with accept_gzip asks for gzip and hands back the plain bytes (without zlib it
 * does not ask, and the server would not compress anyway). */
static void test_client_gzip(void **state)
{
	struct http_server *srv = start_default();
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct http_client_response resp;
	struct http_client_request req = {.method = "GET", .target = "/big"};
	struct http_server_stats st;
	struct k32_err err;

	(void)state;
	for (int gz = 0; gz < 2; gz++) {
		http_client_config_init(&cc);
		cc.port = http_server_port(srv);
		cc.timeout_us = WAIT_US;
		cc.accept_gzip = gz;
		assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
		for (int i = 0; i < 2; i++) { /* keep-alive: twice on one connection */
			assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
			assert_int_equal(resp.status, 200);
			assert_int_equal(resp.body.len, 20000 * 25);
			assert_non_null(
			    strstr(k32_buf_cstr(&resp.body), "line 19999 of a big body\n"));
			assert_int_equal(
			    http_client_response_header(&resp, "Content-Encoding", NULL),
			    gz && K32_HTTP_GZIP);
			http_client_response_fini(&resp);
		}
		http_client_free(c);
	}
	http_server_get_stats(srv, &st);
	assert_int_equal(st.gzip_responses, K32_HTTP_GZIP ? 2 : 0);
	http_server_stop(srv);
}

/* GET target with the given Accept-Encoding (NULL: none) on a fresh connection. */
static void gzip_get(struct http_server *srv, const char *target, const char *ae, int *out_status,
		     bool *out_gzip, struct k32_buf *body)
{
	struct http_client *c = client_for(srv, NULL);
	char hdr[128];
	struct http_client_request req = {.method = "GET", .target = target};
	struct http_client_response resp;
	struct k32_err err;

	if (ae) {
		snprintf(hdr, sizeof(hdr), "Accept-Encoding: %s\r\n", ae);
		req.headers = hdr;
	}
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	*out_status = resp.status;
	*out_gzip = strstr(k32_buf_cstr(&resp.headers), "Content-Encoding: gzip\r\n") != NULL;
	if (*out_gzip)
		assert_non_null(strstr(k32_buf_cstr(&resp.headers), "Vary: Accept-Encoding\r\n"));
	k32_buf_reset(body);
	assert_int_equal(k32_buf_append(body, resp.body.data, resp.body.len, &err), K32_OK);
	http_client_response_fini(&resp);
	http_client_free(c);
}

static void test_gzip_server(void **state)
{
	static char plain[20000 * 25 + 1];
	static const struct {
		const char *target, *ae;
		size_t min_bytes;
		bool gzip;
	} cases[] = {
	    {"/big", "gzip", K32_HTTP_GZIP_MIN_BYTES, true},
	    {"/big", "deflate, gzip;q=0.9", K32_HTTP_GZIP_MIN_BYTES, true},
	    {"/big", NULL, K32_HTTP_GZIP_MIN_BYTES, false},	  /* not asked */
	    {"/big", "gzip;q=0", K32_HTTP_GZIP_MIN_BYTES, false}, /* refused */
	    {"/big", "br", K32_HTTP_GZIP_MIN_BYTES, false},
	    {"/big", "gzip", 0, false},			       /* turned off */
	    {"/echo", "gzip", K32_HTTP_GZIP_MIN_BYTES, false}, /* under the minimum */
	    {"/nope", "gzip", 16, false},		       /* not a 2xx */
	    {"/echo", "gzip", 16, false}, /* ~50 bytes that gzip does not shrink: plain */
	};
	struct k32_buf body;
	struct http_server_stats st;

	(void)state;
	k32_buf_init(&body, k32_default_allocator(), 1u << 20, "test body");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_server_config cfg;
		int status = 0;
		bool gz = false;

		http_server_config_init(&cfg);
		cfg.gzip_min_bytes = cases[i].min_bytes;
		struct http_server *srv = start(&cfg);
		gzip_get(srv, cases[i].target, cases[i].ae, &status, &gz, &body);
		if (gz != (cases[i].gzip && K32_HTTP_GZIP)) /* without zlib: never */
			fail_msg("case %zu %s AE %s: gzip %d, expected %d", i, cases[i].target,
				 cases[i].ae ? cases[i].ae : "-", gz, cases[i].gzip);
		if (!strcmp(cases[i].target, "/big")) {
			size_t n =
			    gz ? gunzip(body.data, body.len, plain, sizeof(plain)) : body.len;
			assert_int_equal(n, 20000 * 25);
			if (!gz)
				memcpy(plain, body.data, n);
			assert_memory_equal(plain + 19999 * 25, "line 19999 of a big body\n", 25);
			if (gz)
				assert_true(body.len < n / 5);
		}
		http_server_get_stats(srv, &st);
		assert_int_equal(st.gzip_responses, gz ? 1 : 0);
		if (gz)
			assert_true(st.gzip_out_bytes < st.gzip_in_bytes);
		http_server_stop(srv);
	}
	k32_buf_fini(&body);
}

/* ---- helper tests ---- */

static void test_url_decode(void **state)
{
	static const struct {
		const char *in;
		bool plus;
		k32_status_t st;
		const char *out;
	} cases[] = {
	    {"abc", true, K32_OK, "abc"},
	    {"a%20b", false, K32_OK, "a b"},
	    {"a+b", true, K32_OK, "a b"},
	    {"a+b", false, K32_OK, "a+b"},
	    {"metadata.name%3Dx", true, K32_OK, "metadata.name=x"},
	    {"%zz", true, K32_ERR_INVALID_ARGS, NULL},
	    {"%4", true, K32_ERR_INVALID_ARGS, NULL},
	    {"%", true, K32_ERR_INVALID_ARGS, NULL},
	    {"%00", true, K32_ERR_INVALID_ARGS, NULL},
	    {"0123456789abcdef", true, K32_ERR_BUFFER_TOO_SMALL, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[16];
		size_t len = 0;
		k32_status_t st = http_url_decode(k32_str_from(cases[i].in), cases[i].plus, out,
						  sizeof(out), &len);

		assert_int_equal(st, cases[i].st);
		if (cases[i].out) {
			assert_string_equal(out, cases[i].out);
			assert_int_equal(len, strlen(cases[i].out));
		}
	}
}

static void test_query(void **state)
{
	struct k32_str q = k32_str_from("watch=true&&fieldSelector=metadata.name%3Dx&flag&a+b=c+d");
	struct k32_str rest = q, k, v;
	char out[64];
	int count = 0;

	(void)state;
	while (http_query_next(&rest, &k, &v))
		count++;
	assert_int_equal(count, 4);
	assert_int_equal(http_query_get(q, "watch", out, sizeof(out), NULL), K32_OK);
	assert_string_equal(out, "true");
	assert_int_equal(http_query_get(q, "fieldSelector", out, sizeof(out), NULL), K32_OK);
	assert_string_equal(out, "metadata.name=x");
	assert_int_equal(http_query_get(q, "flag", out, sizeof(out), NULL), K32_OK);
	assert_string_equal(out, "");
	assert_int_equal(http_query_get(q, "a b", out, sizeof(out), NULL), K32_OK);
	assert_string_equal(out, "c d");
	assert_int_equal(http_query_get(q, "missing", out, sizeof(out), NULL), K32_ERR_NOT_FOUND);
	assert_string_equal(http_status_reason(404), "Not Found");
	assert_string_equal(http_status_reason(431), "Request Header Fields Too Large");
	assert_string_equal(http_status_reason(799), "Unknown");
}

/* http_query_check: every listed parameter bounded and typed; unlisted ones ignored. */
static void test_query_check(void **state)
{
	static const char *const modes[] = {"All", NULL};
	static const struct http_qspec specs[] = {
	    {"sel", HTTP_Q_TEXT, 8, "SEL_MAX", NULL},
	    {"watch", HTTP_Q_BOOL, 31, NULL, NULL},
	    {"limit", HTTP_Q_UINT, 4, NULL, NULL},
	    {"dryRun", HTTP_Q_CHOICE, 31, NULL, modes},
	};
	static const struct {
		const char *query;
		enum http_qfault_kind fault;
		const char *name;   /* the spec named in the fault */
		const char *in_msg; /* a piece of the message */
	} cases[] = {
	    {"", HTTP_QF_NONE, NULL, NULL},
	    {"sel=12345678&watch=true&limit=9999&dryRun=All", HTTP_QF_NONE, NULL, NULL},
	    {"sel=%31%32%33%34%35%36%37%38", HTTP_QF_NONE, NULL, NULL}, /* 8 once decoded */
	    {"unknown="
	     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	     HTTP_QF_NONE, NULL, NULL},
	    {"watch&limit=&watch=", HTTP_QF_NONE, NULL, NULL}, /* no value: true / absent */
	    {"sel=123456789", HTTP_QF_TOO_LONG, "sel",
	     "is 9 bytes long, over the limit of 8 (SEL_MAX)"},
	    {"sel=ok&sel=123456789", HTTP_QF_TOO_LONG, "sel", "limit of 8"}, /* every occurrence */
	    {"s%65l=123456789", HTTP_QF_TOO_LONG, "sel",
	     "sel=\"123456789\" is 9 bytes"}, /* encoded name */
	    {"sel=%zz", HTTP_QF_ENCODING, "sel", "not valid percent-encoding"},
	    {"sel=a%00b", HTTP_QF_ENCODING, "sel", "%00 is not allowed"},
	    {"sel=ab%4", HTTP_QF_ENCODING, "sel", "sel=\"ab%4\""},
	    {"watch=maybe", HTTP_QF_TYPE, "watch",
	     "watch=\"maybe\" is not valid: expected true or false"},
	    {"limit=-1", HTTP_QF_TYPE, "limit", "a non-negative integer"},
	    {"limit=12345", HTTP_QF_TOO_LONG, "limit", "limit of 4"},
	    {"dryRun=All1", HTTP_QF_TYPE, "dryRun", "expected All"},
	    {"dryRun=", HTTP_QF_TYPE, "dryRun", "expected All"},
	    {"dryRun=All&dryRun=all", HTTP_QF_TYPE, "dryRun", "dryRun=\"all\""},
	    {"%zz=1", HTTP_QF_KEY, NULL, "query parameter name \"%zz\""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_qfault fault;
		char msg[256];
		k32_status_t st = http_query_check(k32_str_from(cases[i].query), specs,
						   sizeof(specs) / sizeof(specs[0]), &fault);
		http_qfault_message(&fault, msg, sizeof(msg));
		if (fault.kind != cases[i].fault)
			fail_msg("case %zu (%s): fault %d, want %d (%s)", i, cases[i].query,
				 (int)fault.kind, (int)cases[i].fault, msg);
		assert_int_equal(st,
				 cases[i].fault == HTTP_QF_NONE ? K32_OK : K32_ERR_INVALID_ARGS);
		if (cases[i].name)
			assert_string_equal(fault.spec->name, cases[i].name);
		if (cases[i].in_msg && !strstr(msg, cases[i].in_msg))
			fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, msg, cases[i].in_msg);
	}
	/* a long value is shown by its start only, and the message still ends with the fix */
	char q[700] = "sel=";
	memset(q + 4, 'a', 600);
	struct http_qfault fault;
	char msg[256];
	assert_int_equal(http_query_check(k32_str_from(q), specs, 4, &fault), K32_ERR_INVALID_ARGS);
	http_qfault_message(&fault, msg, sizeof(msg));
	assert_non_null(strstr(msg, "is 600 bytes long"));
	assert_non_null(strstr(msg, "...\""));
	assert_non_null(strstr(msg, "shorten it"));
}

static void test_config_errors(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv = NULL;
	struct k32_err err;

	(void)state;
	http_server_config_init(&cfg);
	assert_int_equal(http_server_start(&cfg, &srv, &err),
			 K32_ERR_INVALID_ARGS); /* no handler */
	assert_non_null(strstr(err.msg, "handler"));
	cfg.handler = handler;
	cfg.tls = true;
	assert_int_equal(http_server_start(&cfg, &srv, &err), K32_ERR_INVALID_ARGS); /* no dir */
	assert_non_null(strstr(err.msg, "data_dir"));
	cfg.tls = false;
	cfg.max_conns = 0;
	assert_int_equal(http_server_start(&cfg, &srv, &err), K32_ERR_INVALID_ARGS);
	assert_null(srv);
}

/* ---- server behaviour ---- */

static void test_keepalive_methods_token(void **state)
{
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, "tok-123");
	static const char *methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
	struct http_server_stats stats;
	struct k32_err err;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		struct http_client_request req = {.method = methods[i],
						  .target = "/echo?q=a%20b",
						  .content_type = "application/json",
						  .body = "{\"x\":1}",
						  .body_len = 7};
		struct http_client_response resp;
		char want[160];
		struct k32_str ct;

		if (i == 0) {
			req.body = NULL;
			req.body_len = 0;
		}
		assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
		assert_int_equal(resp.status, 200);
		snprintf(want, sizeof(want),
			 "method=%s path=/echo q=a b token=tok-123 tls=0 body=%s", methods[i],
			 i == 0 ? "" : "{\"x\":1}");
		assert_string_equal(k32_buf_cstr(&resp.body), want);
		assert_true(http_client_response_header(&resp, "content-type", &ct));
		assert_true(k32_str_eq_cstr(ct, "text/plain"));
		http_client_response_fini(&resp);
	}
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 1); /* all five on one kept-alive connection */
	assert_int_equal(stats.requests, 5);
	http_client_free(c);
	http_server_stop(srv);
}

static void test_not_found_and_close(void **state)
{
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, NULL);
	struct http_client_request req = {.method = "GET", .target = "/nope"};
	struct http_client_response resp;
	struct http_server_stats stats;
	struct k32_err err;

	(void)state;
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 404);
	http_client_response_fini(&resp);
	/* A response with resp->close ends the connection; the client reconnects. */
	req.target = "/close";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_string_equal(k32_buf_cstr(&resp.body), "bye");
	http_client_response_fini(&resp);
	req.target = "/echo";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	/* A big body goes out whole. */
	req.target = "/big";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.body.len, 20000 * 25);
	assert_non_null(strstr(k32_buf_cstr(&resp.body), "line 19999 of a big body\n"));
	http_client_response_fini(&resp);
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 2);
	http_client_free(c);
	http_server_stop(srv);
}

static void test_chunked_request_and_pipelining(void **state)
{
	struct http_server *srv = start_default();
	k32_sock_t s = raw_connect(srv);
	char buf[4096];
	bool closed;
	char *second;

	(void)state;
	raw_send_str(s, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
			"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
	raw_read(s, buf, sizeof(buf), "world", &closed);
	assert_false(closed);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(buf, "body=hello world"));

	/* Two requests in one write: answered in order on the same connection. */
	raw_send_str(s, "GET /echo?q=one HTTP/1.1\r\nHost: x\r\n\r\n"
			"GET /echo?q=two HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_read(s, buf, sizeof(buf), "q=two", &closed);
	second = strstr(buf, "q=two");
	assert_non_null(strstr(buf, "q=one"));
	assert_non_null(second);
	assert_true(strstr(buf, "q=one") < second);

	/* Expect: 100-continue gets the interim answer before the body is sent. */
	raw_send_str(s, "PUT /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
			"Content-Length: 5\r\n\r\n");
	raw_read(s, buf, sizeof(buf), "\r\n\r\n", &closed);
	assert_string_equal(buf, "HTTP/1.1 100 Continue\r\n\r\n");
	raw_send_str(s, "12345");
	raw_read(s, buf, sizeof(buf), "body=12345", &closed);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK"));

	/* HTTP/1.0 without keep-alive: answered, then closed. */
	raw_send_str(s, "GET /echo HTTP/1.0\r\n\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Connection: close"));
	P->sock_close(s);
	http_server_stop(srv);
}

static void test_limits(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	char buf[4096], big[3000];
	k32_sock_t s;

	(void)state;
	http_server_config_init(&cfg);
	cfg.max_body_bytes = 1024;
	cfg.max_header_bytes = 2048;
	srv = start(&cfg);

	/* Declared body over the limit: 413 before the body is sent, then closed. */
	s = raw_connect(srv);
	raw_send_str(s, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 413 Payload Too Large"));
	assert_non_null(strstr(buf, "max_body_bytes"));
	P->sock_close(s);

	/* Chunked body growing over the limit. */
	s = raw_connect(srv);
	memset(big, 'a', sizeof(big));
	raw_send_str(s, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
			"800\r\n");
	raw_send(s, big, 0x800);
	raw_send_str(s, "\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 413"));
	P->sock_close(s);

	/* Exactly at the limit is fine. */
	{
		struct http_client *c = client_for(srv, NULL);
		struct http_client_request req = {
		    .method = "PUT", .target = "/echo", .body = big, .body_len = 1024};
		struct http_client_response resp;
		struct k32_err err;

		assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
		assert_int_equal(resp.status, 200);
		http_client_response_fini(&resp);
		http_client_free(c);
	}

	/* Head over max_header_bytes: 431. */
	s = raw_connect(srv);
	memset(big, 'h', sizeof(big));
	big[sizeof(big) - 1] = 0;
	raw_send_str(s, "GET /echo HTTP/1.1\r\nX-Big: ");
	raw_send_str(s, big);
	raw_send_str(s, "\r\n\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 431"));
	P->sock_close(s);

	/* Too many header lines: 431. */
	s = raw_connect(srv);
	raw_send_str(s, "GET /echo HTTP/1.1\r\n");
	for (int i = 0; i < K32_HTTP_MAX_HEADERS + 1; i++)
		raw_send_str(s, "A: b\r\n");
	raw_send_str(s, "\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 431"));
	P->sock_close(s);
	http_server_stop(srv);
}

static void error_json(void *ctx, int status, const char *detail, struct http_response *resp)
{
	(void)ctx;
	http_response_header(resp, "Content-Type", "application/json");
	k32_buf_printf(&resp->body, NULL, "{\"kind\":\"Status\",\"code\":%d,\"message\":\"%s\"}",
		       status, detail);
	/* A stream cannot start from here. */
	assert_int_not_equal(http_response_stream(resp, &idle_ops, NULL, NULL), K32_OK);
}

static void test_error_hook(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	char buf[2048];
	k32_sock_t s;

	(void)state;
	http_server_config_init(&cfg);
	cfg.max_body_bytes = 16;
	cfg.error_body = error_json;
	srv = start(&cfg);
	s = raw_connect(srv);
	raw_send_str(s, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 413 Payload Too Large\r\n"));
	assert_non_null(strstr(buf, "Content-Type: application/json\r\n"));
	assert_non_null(strstr(buf, "Connection: close\r\n"));
	assert_non_null(
	    strstr(buf, "{\"kind\":\"Status\",\"code\":413,\"message\":\"body over 16 bytes"));
	P->sock_close(s);
	s = raw_connect(srv);
	raw_send_str(s, "NOT HTTP\r\n\r\n");
	raw_read_all(s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"code\":400"));
	P->sock_close(s);
	http_server_stop(srv);
}

/* The default 3 MiB body limit, through the client: at the limit fine, one byte over 413. */
static void test_default_body_limit(void **state)
{
	size_t len = K32_HTTP_MAX_BODY_BYTES;
	char *body = malloc(len + 1);
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, NULL);
	struct http_client_request req = {.method = "PUT", .target = "/echo", .body = body};
	struct http_client_response resp;
	struct k32_err err;

	(void)state;
	assert_non_null(body);
	memset(body, 'b', len + 1);
	req.body_len = len;
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	assert_true(resp.body.len > len);
	http_client_response_fini(&resp);
	req.body_len = len + 1;
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 413);
	http_client_response_fini(&resp);
	http_client_free(c);
	http_server_stop(srv);
	free(body);
}

static void test_malformed(void **state)
{
	static const char *bad[] = {
	    "BLAH\r\n\r\n",
	    "GET / HTTP/9.9\r\n\r\n",
	    "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\n\x01\r\n\r\n",
	};
	struct http_server *srv = start_default();
	struct http_server_stats stats;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k32_sock_t s = raw_connect(srv);
		char buf[2048];

		raw_send_str(s, bad[i]);
		raw_read_all(s, buf, sizeof(buf)); /* answered, then closed */
		if (!strstr(buf, "HTTP/1.1 400 Bad Request"))
			fail_msg("case %zu: expected 400, got: %.100s", i, buf);
		P->sock_close(s);
	}
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.errors_4xx, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(stats.requests, 0);
	http_server_stop(srv);
}

static void test_slow_client_and_timeout(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = "/echo"};
	struct http_client_response resp;
	struct http_server_stats stats;
	struct k32_err err;
	k32_sock_t slow, idle;
	char buf[256];

	(void)state;
	http_server_config_init(&cfg);
	cfg.header_timeout_us = 300000; /* short, so the test does not wait 10 s */
	srv = start(&cfg);
	slow = raw_connect(srv);
	idle = raw_connect(srv);
	raw_send_str(slow, "GET /echo HTTP/1.1\r\nHost: x"); /* never finished */

	/* Another client is served while the slow one hangs. */
	c = client_for(srv, NULL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
		assert_int_equal(resp.status, 200);
		http_client_response_fini(&resp);
	}
	/* The slow client is dropped at its header timeout; the idle one is not. */
	raw_read_all(slow, buf, sizeof(buf));
	http_server_get_stats(srv, &stats);
	assert_true(stats.timeouts >= 1);
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	http_client_response_fini(&resp);
	raw_send_str(idle, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_read(idle, buf, sizeof(buf), "body=", &(bool){false});
	assert_non_null(strstr(buf, "200 OK"));
	P->sock_close(slow);
	P->sock_close(idle);
	http_client_free(c);
	http_server_stop(srv);
}

static void test_conn_limit(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_server_stats stats;
	k32_sock_t s[3];
	char buf[512];
	bool closed;

	(void)state;
	http_server_config_init(&cfg);
	cfg.max_conns = 2;
	srv = start(&cfg);
	for (int i = 0; i < 2; i++) {
		s[i] = raw_connect(srv);
		raw_send_str(s[i], "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
		raw_read(s[i], buf, sizeof(buf), "body=", &closed);
		assert_false(closed);
	}
	s[2] = raw_connect(srv);
	raw_read_all(s[2], buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 503"));
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_refused, 1);
	assert_int_equal(stats.conns_open, 2);
	assert_int_equal(stats.conns_peak, 2);
	/* Freeing a slot lets the next client in. */
	P->sock_close(s[0]);
	P->sock_close(s[2]);
	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &stats);
		if (stats.conns_open == 1)
			break;
		P->sleep_us(10000);
	}
	s[0] = raw_connect(srv);
	raw_send_str(s[0], "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_read(s[0], buf, sizeof(buf), "body=", &closed);
	assert_non_null(strstr(buf, "200 OK"));
	P->sock_close(s[0]);
	P->sock_close(s[1]);
	http_server_stop(srv);
}

/* ---- admission ---- */

/* Waits until the server has accepted `accepted` connections in all. */
static void wait_accepted(struct http_server *srv, uint64_t accepted)
{
	struct http_server_stats stats;

	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &stats);
		if (stats.conns_accepted >= accepted)
			return;
		P->sleep_us(10000);
	}
	fail_msg("server accepted %llu connections, expected %llu",
		 (unsigned long long)stats.conns_accepted, (unsigned long long)accepted);
}

/* A clock the test moves forward: the admission deadlines without waiting for them. */
static struct k32_platform_ops g_clock_ops;
static atomic_uint_fast64_t g_clock_skew_us;

static uint64_t skewed_now_us(void)
{
	return k32_plat_native()->now_us() + atomic_load(&g_clock_skew_us);
}

static void clock_ops_install(void)
{
	g_clock_ops = *k32_plat_native();
	g_clock_ops.now_us = skewed_now_us;
	atomic_store(&g_clock_skew_us, 0);
	k32_plat_set_ops(&g_clock_ops);
	P = k32_plat();
}

static void clock_ops_remove(void)
{
	k32_plat_set_ops(NULL);
	P = k32_plat();
}

static const char k_authed_get[] =
    "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good-token\r\n\r\n";

/*
 * A 401 closes its connection; an authenticated one stays; idle unauthenticated connections
 * from one address beyond max_unauth_per_addr close the oldest, never the authenticated one,
 * and a new client is still served.
 */
static void test_admission_unauth(void **state)
{
	enum { IDLE = 10, CAP = 4 };
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_server_stats stats;
	k32_sock_t authed, anon, idle[IDLE], late;
	char buf[1024];
	bool closed;

	(void)state;
	clock_ops_install();
	http_server_config_init(&cfg);
	cfg.authenticate = authenticate;
	cfg.max_unauth_per_addr = CAP;
	/* the clock moves K32_HTTP_IDLE_EVICT_MS per connection: no first-request timeout */
	cfg.first_request_timeout_us = 3600 * 1000000LL;
	srv = start(&cfg);

	anon = raw_connect(srv);
	raw_send_str(anon, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
	raw_read_all(anon, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 401"));
	assert_non_null(strstr(buf, "Connection: close"));
	P->sock_close(anon);

	authed = raw_connect(srv);
	raw_send_str(authed, k_authed_get);
	raw_read(authed, buf, sizeof(buf), "body=", &closed);
	assert_false(closed);
	assert_non_null(strstr(buf, "200 OK"));
	assert_null(strstr(buf, "Connection: close"));

	/* one by one, so each earlier one has been through a poll (idle, evictable) */
	http_server_get_stats(srv, &stats);
	size_t mem0 = stats.mem_bytes;
	for (int i = 0; i < IDLE; i++) {
		/* each earlier one has now been idle for K32_HTTP_IDLE_EVICT_MS */
		atomic_fetch_add(&g_clock_skew_us, (uint64_t)K32_HTTP_IDLE_EVICT_MS * 1000);
		idle[i] = raw_connect(srv);
		wait_accepted(srv, 3 + (uint64_t)i);
		if (i == 0) {
			http_server_get_stats(srv, &stats);
			print_message("http: an idle unauthenticated connection holds %zu bytes\n",
				      stats.mem_bytes - mem0);
		}
	}
	atomic_fetch_add(&g_clock_skew_us, (uint64_t)K32_HTTP_IDLE_EVICT_MS * 1000);
	late = raw_connect(srv);
	raw_send_str(late, k_authed_get);
	raw_read(late, buf, sizeof(buf), "body=", &closed);
	assert_non_null(strstr(buf, "200 OK"));
	http_server_get_stats(srv, &stats);
	/* the 5th..10th idle and the late one each closed the oldest idle one */
	assert_int_equal(stats.conns_evicted, IDLE + 1 - CAP);
	assert_true(stats.unauth_open <= CAP);
	for (int i = 0; i < IDLE + 1 - CAP; i++)
		raw_read_all(idle[i], buf, sizeof(buf)); /* closed by the server, oldest first */
	/* the authenticated connection was never a candidate */
	raw_send_str(authed, k_authed_get);
	raw_read(authed, buf, sizeof(buf), "body=", &closed);
	assert_false(closed);
	assert_non_null(strstr(buf, "200 OK"));
	for (int i = 0; i < IDLE; i++)
		P->sock_close(idle[i]);
	P->sock_close(authed);
	P->sock_close(late);
	http_server_stop(srv);
	clock_ops_remove();
}

/* An unauthenticated connection that sends nothing is closed at first_request_timeout_us
 * (not at the 120 s idle timeout); an authenticated idle one is kept. */
static void test_admission_first_request_deadline(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_server_stats stats;
	k32_sock_t authed, quiet, poke;
	char buf[512];
	bool closed;

	(void)state;
	clock_ops_install();
	http_server_config_init(&cfg);
	cfg.authenticate = authenticate;
	cfg.first_request_timeout_us = 5000000;
	srv = start(&cfg);
	authed = raw_connect(srv);
	raw_send_str(authed, k_authed_get);
	raw_read(authed, buf, sizeof(buf), "body=", &closed);
	quiet = raw_connect(srv);
	wait_accepted(srv, 2);
	atomic_store(&g_clock_skew_us, 6000000); /* 6 s later */
	poke = raw_connect(srv);		 /* a loop turn on the new clock */
	raw_read_all(quiet, buf, sizeof(buf));
	http_server_get_stats(srv, &stats);
	assert_true(stats.timeouts >= 1);
	raw_send_str(authed, k_authed_get);
	raw_read(authed, buf, sizeof(buf), "body=", &closed);
	assert_false(closed);
	assert_non_null(strstr(buf, "200 OK"));
	P->sock_close(quiet);
	P->sock_close(poke);
	P->sock_close(authed);
	http_server_stop(srv);
	clock_ops_remove();
}

static struct http_client *tls_client(struct http_server *srv, const char *token)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	cc.tls = true;
	cc.ca_file = http_server_ca_file(srv);
	cc.bearer_token = token;
	cc.timeout_us = WAIT_US;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	return c;
}

/*
 * TLS refusals are told in TLS: past max_conns_per_addr a 503 after the handshake saying
 * why; with no slot at all a fatal alert record, never plain text. A stalled handshake gives
 * its slot (max_handshakes) to a new client once K32_HTTP_HANDSHAKE_STALL_MS have passed.
 */
static void test_admission_tls(void **state)
{
	static const uint8_t alert[] = {21, 3, 3, 0, 2, 2, 80};
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_server_stats stats;
	struct http_client *c1, *c2;
	struct http_client_request req = {.method = "GET", .target = "/echo"};
	struct http_client_response resp;
	struct k32_err err;
	k32_sock_t raw, stalled;
	char buf[512];
	size_t n;

	(void)state;
	clock_ops_install();
	http_server_config_init(&cfg);
	cfg.tls = true;
	cfg.data_dir = "http_test_data";
	cfg.authenticate = authenticate;
	cfg.max_conns_per_addr = 1;
	srv = start(&cfg);
	c1 = tls_client(srv, "good-token");
	assert_int_equal(http_client_do(c1, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	c2 = tls_client(srv, "good-token");
	assert_int_equal(http_client_do(c2, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 503);
	assert_non_null(strstr(k32_buf_cstr(&resp.body), "max_conns_per_addr"));
	http_client_response_fini(&resp);
	http_client_free(c2);
	http_client_free(c1);
	http_server_stop(srv);

	/* no slot at all: one authenticated connection holds the only one */
	cfg.max_conns_per_addr = K32_HTTP_MAX_CONNS_PER_ADDR;
	cfg.max_conns = 1;
	srv = start(&cfg);
	c1 = tls_client(srv, "good-token");
	assert_int_equal(http_client_do(c1, &req, &resp, &err), K32_OK);
	http_client_response_fini(&resp);
	raw = raw_connect(srv);
	n = raw_read_all(raw, buf, sizeof(buf));
	assert_int_equal(n, sizeof(alert));
	assert_memory_equal(buf, alert, sizeof(alert));
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_refused, 1);
	P->sock_close(raw);
	http_client_free(c1);
	http_server_stop(srv);

	/* one handshake slot, held by a client that sent a record header and stalled */
	cfg.max_conns = K32_HTTP_MAX_CONNS;
	cfg.max_handshakes = 1;
	srv = start(&cfg);
	http_server_get_stats(srv, &stats);
	size_t mem0 = stats.mem_bytes;
	stalled = raw_connect(srv);
	raw_send(stalled, "\x16\x03\x01\x00\x80", 5);
	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &stats);
		if (stats.handshakes == 1)
			break;
		P->sleep_us(10000);
	}
	assert_int_equal(stats.handshakes, 1);
	print_message("http: a TLS connection in handshake holds %zu bytes of the server allocator "
		      "(plus mbedTLS record buffers from the C heap)\n",
		      stats.mem_bytes - mem0);
	atomic_store(&g_clock_skew_us, (uint64_t)K32_HTTP_HANDSHAKE_STALL_MS * 1000 + 1000);
	c1 = tls_client(srv, "good-token");
	assert_int_equal(http_client_do(c1, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	raw_read_all(stalled, buf, sizeof(buf));
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_evicted, 1);
	assert_int_equal(stats.handshakes, 0);
	P->sock_close(stalled);
	http_client_free(c1);
	http_server_stop(srv);
	clock_ops_remove();
}

/* ---- streams ---- */

struct line_sink {
	int lines;
	int stop_after; /* 0: never */
	bool no_wake;	/* do not wake the producer */
	char last[128];
};

static k32_status_t on_line(void *ctx, const uint8_t *data, size_t len)
{
	struct line_sink *s = ctx;

	s->lines++;
	if (s->no_wake) {
		snprintf(s->last, sizeof(s->last), "%.*s", (int)len, (const char *)data);
		return K32_OK;
	}
	snprintf(s->last, sizeof(s->last), "%.*s", (int)len, (const char *)data);
	/* In wake mode the producer has sent exactly the lines received so far: each line
	 * reached the client before the next was produced (delivery is incremental). */
	if (g_prod.wait_for_wake)
		assert_int_equal(atomic_load(&g_prod.sent), s->lines);
	/* Only now may the producer send the next line (NOT_FOUND once the stream ended). */
	http_server_stream_wake(g_srv, atomic_load(&g_stream_id));
	if (s->stop_after && s->lines >= s->stop_after)
		return K32_ERR_CANCELED;
	return K32_OK;
}

static void test_stream_incremental(void **state)
{
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, NULL);
	struct http_client_request req = {.method = "GET", .target = "/stream?watch=true"};
	struct line_sink sink = {0};
	struct http_server_stats stats;
	struct k32_err err;
	int status = 0;

	(void)state;
	memset(&g_prod, 0, sizeof(g_prod));
	g_prod.total = 5;
	g_prod.wait_for_wake = true;
	assert_int_equal(http_client_stream(c, &req, true, on_line, &sink, &status, &err), K32_OK);
	assert_int_equal(status, 200);
	assert_int_equal(sink.lines, 5);
	assert_string_equal(sink.last, "{\"type\":\"ADDED\",\"n\":5}");
	for (int tries = 0; tries < 1000 && !atomic_load(&g_prod.closed); tries++)
		P->sleep_us(10000);
	assert_int_equal(atomic_load(&g_prod.closed), 1);
	assert_int_equal(atomic_load(&g_prod.close_why), K32_ERR_CANCELED);
	/* The id is dead now: a late wake is ignored. */
	assert_int_equal(http_server_stream_wake(srv, atomic_load(&g_stream_id)),
			 K32_ERR_NOT_FOUND);
	assert_int_equal(http_server_stream_wake(srv, 0), K32_ERR_NOT_FOUND);

	/* The connection stays usable after a finished stream. */
	{
		struct http_client_request r2 = {.method = "GET", .target = "/echo"};
		struct http_client_response resp;

		assert_int_equal(http_client_do(c, &r2, &resp, &err), K32_OK);
		assert_int_equal(resp.status, 200);
		http_client_response_fini(&resp);
	}
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 1);
	assert_int_equal(stats.streams_open, 0);

	/* A client that leaves mid-stream: close runs with PEER_CLOSED. */
	memset(&g_prod, 0, sizeof(g_prod));
	g_prod.total = 1000;
	g_prod.wait_for_wake = true;
	sink = (struct line_sink){.stop_after = 2};
	assert_int_equal(http_client_stream(c, &req, true, on_line, &sink, &status, &err),
			 K32_ERR_CANCELED);
	for (int tries = 0; tries < 1000 && !atomic_load(&g_prod.closed); tries++)
		P->sleep_us(10000);
	assert_int_equal(atomic_load(&g_prod.closed), 1);
	assert_int_equal(atomic_load(&g_prod.close_why), K32_ERR_PEER_CLOSED);
	http_client_free(c);
	http_server_stop(srv);
}

static k32_status_t stop_at_first(void *ctx, const uint8_t *data, size_t len)
{
	int *lines = ctx;

	(void)data;
	if (len == 0)
		return K32_OK;
	(*lines)++;
	return K32_ERR_COMPACTED;
}

/* A stream callback that stops on a response already received whole (a watch answered with
 * one ERROR line and a Content-Length) keeps the connection; one that stops mid-response
 * drops it. Counted by the server's accepts, not by time. */
static void test_stream_stop_keeps_whole(void **state)
{
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, NULL);
	struct http_client_request one = {.method = "GET", .target = "/echo"};
	struct http_client_request big = {.method = "GET", .target = "/big"};
	struct http_client_response resp;
	struct http_server_stats stats;
	struct k32_err err;
	int status = 0, lines = 0;

	(void)state;
	assert_int_equal(http_client_stream(c, &one, true, stop_at_first, &lines, &status, &err),
			 K32_ERR_COMPACTED);
	assert_int_equal(status, 200);
	assert_int_equal(lines, 1);
	assert_int_equal(http_client_do(c, &one, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 1);

	/* 20,000 lines: stopped after the first, most of it still on the way */
	lines = 0;
	assert_int_equal(http_client_stream(c, &big, true, stop_at_first, &lines, &status, &err),
			 K32_ERR_COMPACTED);
	assert_int_equal(lines, 1);
	assert_int_equal(http_client_do(c, &one, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 2);
	http_client_free(c);
	http_server_stop(srv);
}

static void test_stream_backpressure(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = "/stream"};
	struct line_sink sink = {0};
	struct k32_err err;
	int status = 0;

	(void)state;
	http_server_config_init(&cfg);
	cfg.stream_buf_bytes = 256; /* forces SHOULD_WAIT and WRITABLE rounds */
	srv = start(&cfg);
	c = client_for(srv, NULL);
	memset(&g_prod, 0, sizeof(g_prod));
	g_prod.total = 2000;
	assert_int_equal(http_client_stream(c, &req, true, on_line, &sink, &status, &err), K32_OK);
	assert_int_equal(sink.lines, 2000);
	assert_string_equal(sink.last, "{\"type\":\"ADDED\",\"n\":2000}");
	http_client_free(c);
	http_server_stop(srv);
}

static k32_status_t count_ticks(void *ctx, const uint8_t *data, size_t len)
{
	int *ticks = ctx;

	assert_null(data);
	assert_int_equal(len, 0);
	return ++*ticks >= 3 ? K32_ERR_CANCELED : K32_OK;
}

/* A quiet stream ticks so its reader can end it; the server then sees the client leave. */
static void test_stream_tick(void **state)
{
	struct http_server *srv = start_default();
	struct http_client *c = client_for(srv, NULL);
	struct http_client_request req = {
	    .method = "GET", .target = "/idle-stream", .tick_us = 50000};
	struct k32_err err;
	int ticks = 0, status = 0;

	(void)state;
	atomic_store(&g_idle_closed, 0);
	assert_int_equal(http_client_stream(c, &req, true, count_ticks, &ticks, &status, &err),
			 K32_ERR_CANCELED);
	assert_int_equal(ticks, 3);
	assert_int_equal(status, 200);
	for (int tries = 0; tries < 1000 && atomic_load(&g_idle_closed) < 1; tries++)
		P->sleep_us(10000);
	assert_int_equal(atomic_load(&g_idle_closed), 1);
	http_client_free(c);
	http_server_stop(srv);
}

/* Many open, quiet streams: memory the server holds per stream stays small. */
static void test_stream_memory(void **state)
{
	enum { N = 500 };
	static k32_sock_t socks[N];
	struct http_server *srv = start_default();
	struct http_server_stats before, after;
	char buf[512];
	bool closed;
	size_t per;

	(void)state;
	atomic_store(&g_idle_closed, 0);
	http_server_get_stats(srv, &before);
	for (int i = 0; i < N; i++) {
		socks[i] = raw_connect(srv);
		raw_send_str(socks[i], "GET /idle-stream?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n");
	}
	for (int i = 0; i < N; i++) {
		raw_read(socks[i], buf, sizeof(buf), "\r\n\r\n", &closed);
		assert_false(closed);
		assert_non_null(strstr(buf, "Transfer-Encoding: chunked"));
	}
	http_server_get_stats(srv, &after);
	assert_int_equal(after.streams_open, N);
	per = (after.mem_bytes - before.mem_bytes) / N;
	print_message("http: %d open streams hold %zu bytes of server memory (%zu per stream)\n", N,
		      after.mem_bytes - before.mem_bytes, per);
	assert_true(per < 1024);
	for (int i = 0; i < N; i++)
		P->sock_close(socks[i]);
	for (int tries = 0; tries < 1000 && atomic_load(&g_idle_closed) < N; tries++)
		P->sleep_us(10000);
	assert_int_equal(atomic_load(&g_idle_closed), N);
	http_server_stop(srv);
}

/* ---- TLS ---- */

static void remove_pki(const char *dir)
{
	static const char *files[] = {"ca.crt", "ca.key", "server.crt", "server.key",
				      "server.names"};
	char path[512];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/pki/%s", dir, files[i]);
		P->file_remove(path, NULL);
	}
}

static void read_whole(const char *path, char *out, size_t cap)
{
	uint8_t *data;
	size_t len;
	struct k32_err err;

	assert_int_equal(
	    P->file_read_all(path, k32_default_allocator(), cap - 1, &data, &len, &err), K32_OK);
	memcpy(out, data, len + 1);
	k32_free(k32_default_allocator(), data, len + 1);
}

/* Waits until stats.tls_parked is parked and at least parks parkings happened. */
static void wait_parked(struct http_server *srv, uint32_t parked, uint64_t parks)
{
	struct http_server_stats stats;

	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &stats);
		if (stats.tls_parked == parked && stats.tls_parks >= parks)
			break;
		P->sleep_us(10000);
	}
	assert_int_equal(stats.tls_parked, parked);
	assert_true(stats.tls_parks >= parks);
}

/* on_line, after the server parked the quiet stream's TLS session (the wake resumes it). */
static uint64_t g_parks_base;
static k32_status_t on_line_parked(void *ctx, const uint8_t *data, size_t len)
{
	wait_parked(g_srv, 1, g_parks_base + (uint64_t)((struct line_sink *)ctx)->lines + 1);
	return on_line(ctx, data, len);
}

static void test_tls(void **state)
{
	static const char *names[] = {"kube32.local", "10.1.2.3"};
	static char ca1[8192], ca2[8192], crt1[8192], crt2[8192];
	const char *dir = "http_test_data";
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client_config cc;
	struct http_client *c;
	struct http_client_request req = {
	    .method = "POST", .target = "/echo", .body = "hi", .body_len = 2};
	struct http_client_response resp;
	struct http_tls_files files;
	struct http_server_stats stats;
	struct k32_err err;
	bool created = true;

	(void)state;
	remove_pki(dir);
	http_server_config_init(&cfg);
	cfg.tls = true;
	cfg.data_dir = dir;
	cfg.tls_names = names;
	cfg.tls_name_count = 2;
	cfg.authenticate = authenticate;
	srv = start(&cfg);
	assert_non_null(http_server_ca_file(srv));
	assert_string_equal(http_server_ca_file(srv), "http_test_data/pki/ca.crt");
	read_whole("http_test_data/pki/ca.crt", ca1, sizeof(ca1));
	read_whole("http_test_data/pki/server.crt", crt1, sizeof(crt1));
	assert_non_null(strstr(ca1, "-----BEGIN CERTIFICATE-----"));

	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	cc.tls = true;
	cc.ca_file = http_server_ca_file(srv);
	cc.bearer_token = "good-token";
	cc.timeout_us = WAIT_US;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
		assert_int_equal(resp.status, 200);
		assert_string_equal(k32_buf_cstr(&resp.body),
				    "method=POST path=/echo q= token=good-token tls=1 body=hi");
		http_client_response_fini(&resp);
	}
	/* Between requests the idle session is parked (record buffers freed)... */
	wait_parked(srv, 1, 1);
	/* ...and resumes for the next one: a big response crosses many TLS records. */
	req.method = "GET";
	req.target = "/big";
	req.body_len = 0;
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.body.len, 20000 * 25);
	http_client_response_fini(&resp);
	wait_parked(srv, 1, 2);
	req.target = "/echo";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_string_equal(k32_buf_cstr(&resp.body),
			    "method=GET path=/echo q= token=good-token tls=1 body=");
	http_client_response_fini(&resp);
	wait_parked(srv, 1, 3);
	http_client_free(c);
	wait_parked(srv, 0, 3); /* a parked connection that closes is no longer counted */

	/* Wrong token: authenticate answers 401 and the handler does not run. */
	cc.bearer_token = "bad";
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	req.target = "/echo";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 401);
	assert_string_equal(k32_buf_cstr(&resp.body), "{\"reason\":\"Unauthorized\"}");
	http_client_response_fini(&resp);
	http_client_free(c);

	/* A quiet TLS stream is parked between events and resumes for each one. */
	{
		struct http_client_request sreq = {.method = "GET", .target = "/stream?watch=true"};
		struct line_sink sink = {0};
		int status = 0;

		cc.bearer_token = "good-token";
		assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
		memset(&g_prod, 0, sizeof(g_prod));
		g_prod.total = 4;
		g_prod.wait_for_wake = true;
		http_server_get_stats(srv, &stats);
		g_parks_base = stats.tls_parks;
		assert_int_equal(
		    http_client_stream(c, &sreq, true, on_line_parked, &sink, &status, &err),
		    K32_OK);
		assert_int_equal(status, 200);
		assert_int_equal(sink.lines, 4);
		assert_string_equal(sink.last, "{\"type\":\"ADDED\",\"n\":4}");
		http_client_free(c);
	}

	/* curl trusts the generated CA, by IP and by name. */
	if (P->file_exists("/usr/bin/curl")) {
		char cmd[1024], out[512];

		for (int i = 0; i < 2; i++) {
			snprintf(cmd, sizeof(cmd),
				 "curl -sS --max-time 10 --cacert %s -H 'Authorization: Bearer "
				 "good-token' "
				 "-o http_test_data/curl.out https://%s:%u/echo?q=curl",
				 http_server_ca_file(srv), i == 0 ? "127.0.0.1" : "localhost",
				 http_server_port(srv));
			assert_int_equal(system(cmd), 0);
			read_whole("http_test_data/curl.out", out, sizeof(out));
			assert_string_equal(
			    out, "method=GET path=/echo q=curl token=good-token tls=1 body=");
		}
	} else {
		print_message(
		    "curl missing: skipping the curl check (install it: scripts/deps.sh)\n");
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("curl is missing with CI=true");
	}
	http_server_stop(srv);

	/* Restart: the same CA and serving certificate are reused. */
	srv = start(&cfg);
	read_whole("http_test_data/pki/ca.crt", ca2, sizeof(ca2));
	read_whole("http_test_data/pki/server.crt", crt2, sizeof(crt2));
	assert_string_equal(ca1, ca2);
	assert_string_equal(crt1, crt2);
	http_server_stop(srv);
	assert_int_equal(http_tls_ensure(dir, names, 2, &files, &created, &err), K32_OK);
	assert_false(created);
	/* Another name list: the serving certificate alone is re-issued. */
	assert_int_equal(http_tls_ensure(dir, names, 1, &files, &created, &err), K32_OK);
	assert_true(created);
	read_whole("http_test_data/pki/ca.crt", ca2, sizeof(ca2));
	read_whole("http_test_data/pki/server.crt", crt2, sizeof(crt2));
	assert_string_equal(ca1, ca2);
	assert_string_not_equal(crt1, crt2);

	/* A client trusting another CA refuses the server. */
	remove_pki("http_test_data2");
	assert_int_equal(http_tls_ensure("http_test_data2", NULL, 0, &files, &created, &err),
			 K32_OK);
	assert_true(created);
	srv = start(&cfg);
	cc.port = http_server_port(srv);
	cc.ca_file = "http_test_data2/pki/ca.crt";
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_ERR_ACCESS_DENIED);
	assert_non_null(strstr(err.msg, "certificate"));
	http_client_response_fini(&resp);
	http_client_free(c);
	/* Plain HTTP to a TLS port fails cleanly, it does not hang. */
	cc.tls = false;
	cc.timeout_us = 2000000;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	assert_int_not_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	http_client_response_fini(&resp);
	http_client_free(c);
	http_server_stop(srv);

	/* Corrupt material is reported, not trusted. */
	assert_int_equal(P->file_write_atomic("http_test_data2/pki/ca.crt", "junk", 4, &err),
			 K32_OK);
	assert_int_equal(http_tls_ensure("http_test_data2", NULL, 0, &files, &created, &err),
			 K32_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "ca.crt"));
}

/* ---- handler threads ---- */

struct blocked_call {
	uint16_t port;
	int status;
};

static void call_block(void *arg)
{
	struct blocked_call *b = arg;
	struct http_client_config cc;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = "/block"};
	struct http_client_response resp;
	struct k32_err err;

	http_client_config_init(&cc);
	cc.port = b->port;
	cc.timeout_us = WAIT_US * 2;
	if (http_client_new(&cc, &c, &err) != K32_OK)
		return;
	if (http_client_do(c, &req, &resp, &err) == K32_OK)
		b->status = resp.status;
	http_client_response_fini(&resp);
	http_client_free(c);
}

struct tls_call {
	uint16_t port;
	const char *ca;
	const char *target;
	struct http_client *c; /* NULL: a new one (a new TLS handshake) */
	int status;
};

static void tls_call_main(void *arg)
{
	struct tls_call *t = arg;
	struct http_client_config cc;
	struct http_client *c = t->c;
	struct http_client_request req = {.method = "GET", .target = t->target};
	struct http_client_response resp;
	struct k32_err err;

	if (!c) {
		http_client_config_init(&cc);
		cc.port = t->port;
		cc.tls = true;
		cc.ca_file = t->ca;
		cc.timeout_us = WAIT_US * 2;
		if (http_client_new(&cc, &c, &err) != K32_OK)
			return;
	}
	if (http_client_do(c, &req, &resp, &err) == K32_OK)
		t->status = resp.status;
	http_client_response_fini(&resp);
	if (!t->c)
		http_client_free(c);
}

static void wait_jobs(struct http_server *srv, uint32_t want)
{
	struct http_server_stats st;

	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &st);
		if (st.jobs_waiting >= want)
			return;
		P->sleep_us(10000);
	}
	fail_msg("%" PRIu32 " jobs waiting, expected %" PRIu32, st.jobs_waiting, want);
}

/* A new client's handshake step is taken before requests queued earlier (a fleet's fsynced
 * writes must not keep kubectl's handshake past its timeout). One handler task, held by
 * /block; a kept-alive client's /order is queued, then a new client's first handshake step;
 * when /block returns, /order sees that step already run. Ordered by counters, not time. */
static void test_handshake_before_requests(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client_config cc;
	struct http_client *kept;
	struct http_client_request echo = {.method = "GET", .target = "/echo"};
	struct http_client_response resp;
	struct http_server_stats st;
	struct tls_call blk = {.target = "/block"}, ord = {.target = "/order"},
			fresh = {.target = "/echo"};
	struct k32_task *tb, *to, *tf;
	struct k32_err err;

	(void)state;
	P->mutex_init(&g_block_mu);
	P->cond_init(&g_block_cond);
	g_unblocked = 0;
	http_server_config_init(&cfg);
	cfg.tls = true;
	cfg.data_dir = "http_test_data";
	cfg.handler_threads = 1;
	srv = start(&cfg);
	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	cc.tls = true;
	cc.ca_file = http_server_ca_file(srv);
	cc.timeout_us = WAIT_US * 2;
	assert_int_equal(http_client_new(&cc, &kept, &err), K32_OK);
	assert_int_equal(http_client_do(kept, &echo, &resp, &err), K32_OK); /* handshaken */
	http_client_response_fini(&resp);
	blk.port = ord.port = fresh.port = cc.port;
	blk.ca = ord.ca = fresh.ca = cc.ca_file;
	ord.c = kept;
	assert_int_equal(P->task_create(&tb, "block", tls_call_main, &blk, 0, -1, &err), K32_OK);
	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &st);
		if (st.requests >= 2 && st.jobs_waiting == 0)
			break;
		P->sleep_us(10000);
	}
	/* the one handler task now holds /block (taken off the queue) */
	assert_int_equal(P->task_create(&to, "order", tls_call_main, &ord, 0, -1, &err), K32_OK);
	wait_jobs(srv, 1);
	assert_int_equal(P->task_create(&tf, "fresh", tls_call_main, &fresh, 0, -1, &err), K32_OK);
	wait_jobs(srv, 2);
	http_server_get_stats(srv, &st);
	uint64_t before = st.hs_steps;
	k32_mutex_lock(&g_block_mu);
	g_unblocked = 1;
	P->cond_broadcast(&g_block_cond);
	k32_mutex_unlock(&g_block_mu);
	P->task_join(tb);
	P->task_join(to);
	P->task_join(tf);
	assert_int_equal(blk.status, 200);
	assert_int_equal(ord.status, 200);
	assert_int_equal(fresh.status, 200);
	assert_true(atomic_load(&g_order_hs_steps) > before);
	http_client_free(kept);
	http_server_stop(srv);
}

static void test_handler_threads(void **state)
{
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = "/unblock"};
	struct http_client_request sreq = {.method = "GET", .target = "/stream"};
	struct http_client_response resp;
	struct blocked_call b = {0};
	struct line_sink sink = {0};
	struct http_server_stats stats;
	struct k32_task *t;
	struct k32_err err;
	int status = 0;

	(void)state;
	P->mutex_init(&g_block_mu);
	P->cond_init(&g_block_cond);
	g_unblocked = 0;
	http_server_config_init(&cfg);
	cfg.handler_threads = 2;
	srv = start(&cfg);
	/* A request that blocks in its handler until another request has run: it completes
	 * only because handlers run on two tasks while the loop keeps serving. */
	b.port = http_server_port(srv);
	assert_int_equal(P->task_create(&t, "blocked", call_block, &b, 0, -1, &err), K32_OK);
	for (int tries = 0; tries < 1000; tries++) {
		http_server_get_stats(srv, &stats);
		if (stats.requests >= 1)
			break;
		P->sleep_us(10000);
	}
	c = client_for(srv, NULL);
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	P->task_join(t);
	assert_int_equal(b.status, 200);

	/* Keep-alive, bodies and streams work the same through handler tasks. */
	for (int i = 0; i < 20; i++) {
		struct http_client_request e = {
		    .method = "POST", .target = "/echo?q=w", .body = "b", .body_len = 1};

		assert_int_equal(http_client_do(c, &e, &resp, &err), K32_OK);
		assert_string_equal(k32_buf_cstr(&resp.body),
				    "method=POST path=/echo q=w token= tls=0 body=b");
		http_client_response_fini(&resp);
	}
	memset(&g_prod, 0, sizeof(g_prod));
	g_prod.total = 5;
	g_prod.wait_for_wake = true;
	assert_int_equal(http_client_stream(c, &sreq, true, on_line, &sink, &status, &err), K32_OK);
	assert_int_equal(sink.lines, 5);
	/* The handler wakes its own stream at once: start + wake give exactly two lines. */
	for (int i = 0; i < 20; i++) {
		memset(&g_prod, 0, sizeof(g_prod));
		g_prod.total = 2;
		g_prod.wait_for_wake = true;
		sink = (struct line_sink){.no_wake = true};
		sreq.target = "/stream-selfwake";
		assert_int_equal(http_client_stream(c, &sreq, true, on_line, &sink, &status, &err),
				 K32_OK);
		assert_int_equal(sink.lines, 2);
	}
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 2);
	http_client_free(c);
	http_server_stop(srv);
	P->cond_fini(&g_block_cond);
	P->mutex_fini(&g_block_mu);
}

/* ---- short reads and writes (platform ops replaced) ---- */

static struct k32_platform_ops g_short_ops;
static atomic_uint g_short_seq;

/* Moves 1..7 bytes per call, so every partial-I/O path runs. */
static size_t short_len(size_t len)
{
	size_t n = (atomic_fetch_add(&g_short_seq, 1) % 7) + 1;

	return len < n ? len : n;
}

static k32_status_t short_send(k32_sock_t s, const void *buf, size_t len, size_t *out_sent)
{
	return k32_plat_native()->sock_send(s, buf, short_len(len), out_sent);
}

static k32_status_t short_recv(k32_sock_t s, void *buf, size_t cap, size_t *out_len)
{
	return k32_plat_native()->sock_recv(s, buf, short_len(cap), out_len);
}

static atomic_int g_accept_failures;

/* Out of descriptors for the first few accepts (EMFILE): the listener stays readable. */
static k32_status_t failing_accept(k32_sock_t listener, k32_sock_t *out)
{
	if (atomic_fetch_sub(&g_accept_failures, 1) > 0) {
		*out = K32_SOCK_INVALID;
		return K32_ERR_NO_RESOURCES;
	}
	return k32_plat_native()->tcp_accept(listener, out);
}

static void test_accept_out_of_fds(void **state)
{
	struct http_server *srv;
	struct http_client *c;
	struct http_client_request req = {.method = "GET", .target = "/echo"};
	struct http_client_response resp;
	struct http_server_stats stats;
	struct k32_err err;

	(void)state;
	g_short_ops = *k32_plat_native();
	g_short_ops.tcp_accept = failing_accept;
	atomic_store(&g_accept_failures, 0);
	k32_plat_set_ops(&g_short_ops);
	P = k32_plat();
	srv = start_default(); /* its wake pair uses accept too: fail only after start */
	atomic_store(&g_accept_failures, 3);
	c = client_for(srv, NULL);
	/* The connection waits in the backlog through three failed accepts, then is served. */
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	http_client_response_fini(&resp);
	assert_true(atomic_load(&g_accept_failures) < 0);
	http_server_get_stats(srv, &stats);
	assert_int_equal(stats.conns_accepted, 1);
	http_client_free(c);
	http_server_stop(srv);
	k32_plat_set_ops(NULL);
	P = k32_plat();
}

static void test_short_io(void **state)
{
	static const char *names[] = {"short.local"};
	struct http_server_config cfg;
	struct http_server *srv;
	struct http_client_config cc;
	struct http_client *c;
	struct http_client_request req = {.method = "POST",
					  .target = "/echo?q=short",
					  .body = "0123456789abcdef",
					  .body_len = 16};
	struct http_client_response resp;
	struct line_sink sink = {0};
	struct k32_err err;
	int status = 0;

	(void)state;
	g_short_ops = *k32_plat_native();
	g_short_ops.sock_send = short_send;
	g_short_ops.sock_recv = short_recv;
	k32_plat_set_ops(&g_short_ops);
	P = k32_plat();
	for (int tls = 0; tls < 2; tls++) {
		http_server_config_init(&cfg);
		cfg.tls = tls;
		cfg.data_dir = "http_test_data";
		cfg.tls_names = names;
		cfg.tls_name_count = 1;
		srv = start(&cfg);
		http_client_config_init(&cc);
		cc.port = http_server_port(srv);
		cc.tls = tls;
		cc.ca_file = http_server_ca_file(srv);
		cc.bearer_token = "t";
		cc.timeout_us = WAIT_US;
		assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(http_client_do(c, &req, &resp, &err), K32_OK);
			assert_int_equal(resp.status, 200);
			assert_string_equal(k32_buf_cstr(&resp.body),
					    tls ? "method=POST path=/echo q=short token=t tls=1 "
						  "body=0123456789abcdef"
						: "method=POST path=/echo q=short token=t tls=0 "
						  "body=0123456789abcdef");
			http_client_response_fini(&resp);
		}
		/* A stream through the same trickle. */
		memset(&g_prod, 0, sizeof(g_prod));
		g_prod.total = 50;
		sink = (struct line_sink){0};
		req.method = "GET";
		req.target = "/stream";
		req.body_len = 0;
		assert_int_equal(http_client_stream(c, &req, true, on_line, &sink, &status, &err),
				 K32_OK);
		assert_int_equal(sink.lines, 50);
		assert_string_equal(sink.last, "{\"type\":\"ADDED\",\"n\":50}");
		req.method = "POST";
		req.target = "/echo?q=short";
		req.body_len = 16;
		http_client_free(c);
		http_server_stop(srv);
	}
	k32_plat_set_ops(NULL);
	P = k32_plat();
}

static void test_client_errors(void **state)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct http_client_request req = {.method = "GET", .target = "/"};
	struct http_client_response resp;
	struct http_server *srv;
	struct k32_err err;
	k32_sock_t l;
	uint16_t port;

	(void)state;
	http_client_config_init(&cc);
	assert_int_equal(http_client_new(&cc, &c, &err), K32_ERR_INVALID_ARGS); /* no port */
	cc.tls = true;
	cc.port = 1;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_ERR_INVALID_ARGS); /* no CA */
	cc.tls = false;
	cc.bearer_token = "a\r\nb";
	assert_int_equal(http_client_new(&cc, &c, &err), K32_ERR_INVALID_ARGS);

	/* A listener that never answers: the call times out. */
	assert_int_equal(P->tcp_listen("127.0.0.1", 0, 4, &l, &err), K32_OK);
	assert_int_equal(P->sock_port(l, &port), K32_OK);
	http_client_config_init(&cc);
	cc.port = port;
	cc.timeout_us = 200000;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_ERR_TIMED_OUT);
	http_client_response_fini(&resp);
	http_client_free(c);
	P->sock_close(l);

	/* Bad request lines are refused before sending. */
	srv = start_default();
	c = client_for(srv, NULL);
	req.target = "no-slash";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_ERR_INVALID_ARGS);
	http_client_response_fini(&resp);
	req.target = "/with space";
	assert_int_equal(http_client_do(c, &req, &resp, &err), K32_ERR_INVALID_ARGS);
	http_client_response_fini(&resp);
	http_client_free(c);
	http_server_stop(srv);
}

/* Allocation failures at every step of a request: clean errors, no crash, no leak. */
static void test_alloc_failures(void **state)
{
	struct k32_heap heap;
	struct k32_allocator a;
	struct http_server_config cfg;
	struct http_server *srv = NULL;
	struct k32_err err;
	int ok_runs = 0;

	(void)state;
	for (uint32_t n = 1; n < 40; n++) {
		struct http_client *c;
		struct http_client_request req = {
		    .method = "POST", .target = "/echo", .body = "x", .body_len = 1};
		struct http_client_response resp;
		k32_status_t st;

		k32_heap_init(&heap, 0);
		a = k32_heap_allocator(&heap);
		http_server_config_init(&cfg);
		cfg.handler = handler;
		cfg.alloc = &a;
		cfg.max_conns = 4;
		cfg.handler_threads = n % 2; /* both the inline and the handler-task paths */
		k32_heap_fail_nth(&heap, n);
		st = http_server_start(&cfg, &srv, &err);
		if (st != K32_OK) {
			assert_int_equal(st, K32_ERR_NO_MEMORY);
			assert_int_equal(heap.stats.cur_bytes, 0);
			continue;
		}
		c = client_for(srv, NULL);
		st = http_client_do(c, &req, &resp, &err);
		if (st == K32_OK && resp.status == 200)
			ok_runs++;
		http_client_response_fini(&resp);
		http_client_free(c);
		http_server_stop(srv);
		assert_int_equal(heap.stats.cur_bytes, 0);
	}
	assert_true(ok_runs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_decode),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_keepalive_methods_token),
		cmocka_unit_test(test_not_found_and_close),
		cmocka_unit_test(test_chunked_request_and_pipelining),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_default_body_limit),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_error_hook),
		cmocka_unit_test(test_slow_client_and_timeout),
		cmocka_unit_test(test_conn_limit),
		cmocka_unit_test(test_admission_unauth),
		cmocka_unit_test(test_admission_first_request_deadline),
		cmocka_unit_test(test_admission_tls),
		cmocka_unit_test(test_stream_incremental),
		cmocka_unit_test(test_stream_stop_keeps_whole),
		cmocka_unit_test(test_stream_backpressure),
		cmocka_unit_test(test_stream_tick),
		cmocka_unit_test(test_stream_memory),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_handler_threads),
		cmocka_unit_test(test_handshake_before_requests),
		cmocka_unit_test(test_short_io),
		cmocka_unit_test(test_accept_out_of_fds),
		cmocka_unit_test(test_client_errors),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_accepts_gzip),
#if K32_HTTP_GZIP
		cmocka_unit_test(test_gzip_encode),
		cmocka_unit_test(test_gunzip),
#else
		cmocka_unit_test(test_gzip_off),
#endif
		cmocka_unit_test(test_gzip_server),
		cmocka_unit_test(test_client_gzip),
		cmocka_unit_test(test_query_check),
	};

	P = k32_plat();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
