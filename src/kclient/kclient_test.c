/*
 * kclient_test.c - both implementations of the client interface against one API server in
 * this process (memory store; the HTTP one over a loopback server on a free port): the same
 * answers to requests, and a watch that delivers what exists, then a change made through
 * the client from the watch's own tick, then stops when asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "kclient/kclient.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	struct kclient *cli[2]; /* in-process, http */
};

static int setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	struct store_config sc = {.data_dir = NULL};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &fx.api, &err), K32_OK);
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = fx.api;
	assert_int_equal(http_server_start(&hc, &fx.srv, &err), K32_OK);
	api_server_attach_http(fx.api, fx.srv);
	assert_int_equal(kclient_inproc_new(fx.api, NULL, &fx.cli[0], &err), K32_OK);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)http_server_port(fx.srv));
	struct kclient_http_config kc = {.url = url};
	assert_int_equal(kclient_http_new(&kc, &fx.cli[1], &err), K32_OK);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	kclient_free(fx->cli[0]);
	kclient_free(fx->cli[1]);
	http_server_stop(fx->srv);
	api_server_free(fx->api);
	store_close(fx->store);
	return 0;
}

static void test_url(void **state)
{
	(void)state;
	bool tls = false;
	char host[32];
	uint16_t port = 0;
	assert_true(kclient_parse_url("https://10.0.0.2:6443", &tls, host, sizeof(host), &port));
	assert_true(tls);
	assert_string_equal(host, "10.0.0.2");
	assert_int_equal(port, 6443);
	assert_true(kclient_parse_url("http://localhost:80/", &tls, host, sizeof(host), &port));
	assert_false(tls);
	static const char *const bad[] = {"10.0.0.2:6443",   "https://h",  "https://h:0",
					  "https://h:70000", "https://:1", "ftp://h:1",
					  "https://h:12x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kclient_parse_url(bad[i], &tls, host, sizeof(host), &port))
			fail_msg("%s accepted", bad[i]);
	struct kclient *c = NULL;
	struct k32_err err;
	struct kclient_http_config kc = {.url = "https://127.0.0.1:1"};
	assert_int_equal(kclient_http_new(&kc, &c, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "CA file"));
	assert_null(c);
}

/* The same requests through each client: created, read back, refused the same way. */
static void test_requests(void **state)
{
	struct fx *fx = *state;
	struct k32_buf out;
	struct k32_err err;
	k32_buf_init(&out, k32_default_allocator(), 1 << 20, "answer");
	for (int i = 0; i < 2; i++) {
		char body[160], target[128];
		int code = 0;
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"cm%d\"},\"data\":{\"k\":\"%d\"}}", i, i);
		k32_buf_reset(&out);
		assert_int_equal(kclient_do(fx->cli[i], "POST",
					    "/api/v1/namespaces/default/configmaps", NULL, body,
					    strlen(body), &code, &out, &err),
				 K32_OK);
		assert_int_equal(code, 201);
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/configmaps/cm%d", i);
		k32_buf_reset(&out);
		assert_int_equal(
		    kclient_do(fx->cli[i], "GET", target, NULL, NULL, 0, &code, &out, &err),
		    K32_OK);
		assert_int_equal(code, 200);
		assert_non_null(strstr(k32_buf_cstr(&out), "\"k\":\""));
		/* validation answers as a Status, not a transport error */
		k32_buf_reset(&out);
		assert_int_equal(kclient_do(fx->cli[i], "POST",
					    "/api/v1/namespaces/default/configmaps", NULL, "{}", 2,
					    &code, &out, &err),
				 K32_OK);
		assert_int_equal(code, 422);
		assert_non_null(strstr(k32_buf_cstr(&out), "\"kind\":\"Status\""));
		k32_buf_reset(&out);
		assert_int_equal(kclient_do(fx->cli[i], "GET", "/api/v1/namespaces/default/nope",
					    NULL, NULL, 0, &code, &out, &err),
				 K32_OK);
		assert_int_equal(code, 404);
	}
	assert_string_equal(kclient_name(fx->cli[0]), "in-process");
	assert_string_equal(kclient_name(fx->cli[1]), "http");
	k32_buf_fini(&out);
}

struct wctx {
	struct kclient *c;
	int which;
	int ticks;
	bool created, saw_old, saw_new;
};

static k32_status_t on_line(void *arg, const char *line, size_t len)
{
	struct wctx *w = arg;
	if (!line) {
		if (++w->ticks > 200)
			return K32_ERR_TIMED_OUT; /* bound: fail below instead of hanging */
		if (!w->created) {
			char body[96];
			int code = 0;
			struct k32_buf out;
			struct k32_err err;
			k32_buf_init(&out, k32_default_allocator(), 1 << 16, "answer");
			snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"w%d\"}}", w->which);
			kclient_do(w->c, "POST", "/api/v1/namespaces/wt/configmaps", NULL, body,
				   strlen(body), &code, &out, &err);
			k32_buf_fini(&out);
			w->created = code == 201;
		}
		return K32_OK;
	}
	char want[32];
	snprintf(want, sizeof(want), "\"name\":\"w%d\"", w->which);
	/* line is not NUL-terminated by contract: copy what we look at */
	char buf[4096];
	size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = 0;
	assert_non_null(strstr(buf, "{\"type\":\"ADDED\""));
	if (strstr(buf, "\"name\":\"old\""))
		w->saw_old = true;
	if (strstr(buf, want)) {
		w->saw_new = true;
		return K32_ERR_CANCELED;
	}
	return K32_OK;
}

static void test_watch(void **state)
{
	struct fx *fx = *state;
	struct k32_buf out;
	struct k32_err err;
	int code = 0;
	k32_buf_init(&out, k32_default_allocator(), 1 << 16, "answer");
	const char *ns = "{\"metadata\":{\"name\":\"wt\"}}";
	assert_int_equal(kclient_do(fx->cli[0], "POST", "/api/v1/namespaces", NULL, ns, strlen(ns),
				    &code, &out, &err),
			 K32_OK);
	const char *old = "{\"metadata\":{\"name\":\"old\"}}";
	assert_int_equal(kclient_do(fx->cli[0], "POST", "/api/v1/namespaces/wt/configmaps", NULL,
				    old, strlen(old), &code, &out, &err),
			 K32_OK);
	assert_int_equal(code, 201);
	k32_buf_fini(&out);
	for (int i = 0; i < 2; i++) {
		struct wctx w = {.c = fx->cli[i], .which = i};
		k32_status_t st = kclient_watch(fx->cli[i], "/api/v1/namespaces/wt/configmaps",
						on_line, &w, &err);
		if (st != K32_ERR_CANCELED)
			fail_msg("%s watch: %s (%s)", kclient_name(fx->cli[i]), k32_status_name(st),
				 err.msg);
		assert_true(w.saw_old);
		assert_true(w.created);
		assert_true(w.saw_new);
	}
	/* not a collection the API serves */
	assert_int_not_equal(kclient_watch(fx->cli[0], "/api/v1/nope", on_line, NULL, &err),
			     K32_OK);
}

/* Counts the events of a watch that the server ends at its timeoutSeconds. */
static k32_status_t count_line(void *arg, const char *line, size_t len)
{
	(void)len;
	if (line)
		(*(int *)arg)++;
	return K32_OK;
}

/* A watch the server ended cleanly leaves its connection for the next one: two watches in a
 * row open one connection between them (the kubelet re-watches every few seconds). */
static void test_watch_keeps_connection(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	struct http_server_stats before, after;
	int events = 0;
	http_server_get_stats(fx->srv, &before);
	for (int i = 0; i < 2; i++) {
		k32_status_t st =
		    kclient_watch(fx->cli[1], "/api/v1/namespaces/wt/configmaps?timeoutSeconds=1",
				  count_line, &events, &err);
		if (st)
			fail_msg("watch %d: %s (%s)", i, k32_status_name(st), err.msg);
	}
	http_server_get_stats(fx->srv, &after);
	assert_true(events >= 2); /* what exists, once per watch */
	assert_int_equal(after.conns_accepted - before.conns_accepted, 1);
}

/* Answers the caller did not want become errors with the status the code means and the
 * Status message (or the body's first bytes). */
static void test_answer_err(void **state)
{
	(void)state;
	static const struct {
		int code;
		const char *body;
		k32_status_t want;
		const char *msg;
	} cases[] = {
	    {403, "{\"kind\":\"Status\",\"message\":\"nodes is forbidden\"}", K32_ERR_ACCESS_DENIED,
	     "listing: API server answered 403: nodes is forbidden"},
	    {401, "", K32_ERR_ACCESS_DENIED, "listing: API server answered 401: "},
	    {404, "{\"message\":\"pods \\\"x\\\" not found\"}", K32_ERR_NOT_FOUND,
	     "listing: API server answered 404: pods \"x\" not found"},
	    {409, "{}", K32_ERR_CONFLICT, "listing: API server answered 409: {}"},
	    {410, "gone", K32_ERR_COMPACTED, "listing: API server answered 410: gone"},
	    {500, "not json", K32_ERR_IO, "listing: API server answered 500: not json"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct k32_buf b;
		struct k32_err err;
		k32_buf_init(&b, k32_default_allocator(), 4096, "answer");
		assert_int_equal(k32_buf_append(&b, cases[i].body, strlen(cases[i].body), &err),
				 K32_OK);
		assert_int_equal(kclient_answer_err(&err, "t", "listing", cases[i].code, &b),
				 cases[i].want);
		assert_int_equal(err.status, cases[i].want);
		assert_string_equal(err.msg, cases[i].msg);
		k32_buf_fini(&b);
	}
	/* a message longer than the error holds keeps its end (the server's advice) */
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), 4096, "answer");
	k32_buf_append_str(&b, "{\"message\":\"", &err);
	for (int i = 0; i < K32_ERR_MSG_LEN; i++)
		k32_buf_append_str(&b, "x", &err);
	k32_buf_append_str(&b, " ADVICE\"}", &err);
	kclient_answer_err(&err, "t", "listing", 422, &b);
	assert_non_null(strstr(err.msg, " ADVICE"));
	k32_buf_fini(&b);
}

/* Retry pauses: min, doubling to max, each in [half, whole]; reset starts over. */
static void test_backoff(void **state)
{
	(void)state;
	struct kclient_backoff bo;
	kclient_backoff_init(&bo, 500, 30000);
	uint32_t whole = 500;
	for (int i = 0; i < 12; i++) {
		uint32_t p = kclient_backoff_next(&bo);
		if (p < whole / 2 || p > whole)
			fail_msg("pause %d: %u ms outside [%u, %u]", i, (unsigned)p,
				 (unsigned)(whole / 2), (unsigned)whole);
		whole = whole * 2 > 30000 ? 30000 : whole * 2;
	}
	assert_int_equal(bo.next_ms, 30000);
	kclient_backoff_reset(&bo);
	uint32_t p = kclient_backoff_next(&bo);
	assert_true(p >= 250 && p <= 500);
}

/* Requests that got no answer are counted by the HTTP client (the kubelet's api_errors). */
static void test_failures(void **state)
{
	struct fx *fx = *state;
	struct kclient *c = NULL;
	struct k32_err err;
	/* a port nothing listens on: this test's server's, once it is stopped */
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.ctx = fx->api;
	struct http_server *srv = NULL;
	assert_int_equal(http_server_start(&hc, &srv, &err), K32_OK);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)http_server_port(srv));
	http_server_stop(srv);
	struct kclient_http_config kc = {.url = url, .timeout_us = 2000000};
	assert_int_equal(kclient_http_new(&kc, &c, &err), K32_OK);
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 4096, "answer");
	int code = 0;
	assert_int_equal(kclient_failures(c), 0);
	for (int i = 0; i < 2; i++)
		assert_int_not_equal(
		    kclient_call(c, "GET", "/api/v1/namespaces", NULL, NULL, &code, &out, &err),
		    K32_OK);
	assert_int_equal(kclient_failures(c), 2);
	assert_int_equal(kclient_failures(fx->cli[0]), 0);
	/* kclient_call empties out first */
	k32_buf_append_str(&out, "stale", &err);
	assert_int_equal(
	    kclient_call(fx->cli[1], "GET", "/api/v1/namespaces/wt", NULL, NULL, &code, &out, &err),
	    K32_OK);
	assert_int_equal(code, 200);
	assert_int_equal(strncmp(k32_buf_cstr(&out), "stale", 5) != 0, 1);
	k32_buf_fini(&out);
	kclient_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url),	       cmocka_unit_test(test_requests),
	    cmocka_unit_test(test_watch),      cmocka_unit_test(test_watch_keeps_connection),
	    cmocka_unit_test(test_answer_err), cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_failures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
