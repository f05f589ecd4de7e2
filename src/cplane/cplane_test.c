/*
 * cplane_test.c - the control plane on its own (memory store, plain HTTP on 127.0.0.1:0)
 * with two fake nodes instead of kubelets: "local-1" attached through struct
 * cplane_node_ops, and "remote-1" behind a small fake pod server (GET /containerLogs with
 * afterSeq and X-Kube32-Log-Seq, GET /stats) published in its Node's daemonEndpoints, as a
 * board in another process. Checked over HTTP: pods/log (tail, previous, limitBytes) from
 * both, `logs -f` from both (new lines arrive while the stream is open; the stream ends when
 * the pod leaves the node, or when the node stops answering), metrics.k8s.io, the node
 * table's limit, start errors, and the kubeconfig writer; plus the pure helpers (log path,
 * filter, RFC 3339 time) from tables. src/sim/sim_test.c runs the same proxy against a real
 * kubelet and Wasm pod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cplane/cplane_int.h"

/* ---- a fake node: a log of numbered lines and a stats object ------------------------------- */

#define FAKE_LINES 64

struct fake_node {
	const char *name;
	struct k32_mutex mu;
	char pod[32]; /* the one pod it runs ("" once gone) */
	char lines[FAKE_LINES][32];
	uint64_t count; /* lines so far; line i has seq i + 1 */
	bool has_previous;
};

static void fake_add(struct fake_node *n, const char *text)
{
	k32_mutex_lock(&n->mu);
	if (n->count < FAKE_LINES)
		snprintf(n->lines[n->count++], sizeof(n->lines[0]), "%s", text);
	k32_mutex_unlock(&n->mu);
}

static const char *fake_name(void *node)
{
	return ((struct fake_node *)node)->name;
}

static k32_status_t fake_logs(void *node, const char *ns, const char *pod, bool previous,
			      int64_t tail, bool ts, uint64_t *inout_seq, struct k32_buf *out,
			      struct k32_err *err)
{
	struct fake_node *n = node;
	k32_status_t st = K32_OK;
	(void)ns;
	k32_mutex_lock(&n->mu);
	if (strcmp(pod, n->pod) || (previous && !n->has_previous)) {
		st = k32_err_set(err, K32_ERR_NOT_FOUND, "fake", "pod %s is not on node %s", pod,
				 n->name);
		goto out;
	}
	uint64_t after = inout_seq ? *inout_seq : 0, first = 0;
	if (tail >= 0 && (uint64_t)tail < n->count)
		first = n->count - (uint64_t)tail;
	for (uint64_t i = first; i < n->count && !st; i++) {
		if (i + 1 <= after)
			continue;
		st = k32_buf_printf(out, err, "%s%s%s\n", ts ? "2026-01-01T00:00:00Z " : "",
				    previous ? "prev " : "", n->lines[i]);
		if (!st && inout_seq)
			*inout_seq = i + 1;
	}
out:
	k32_mutex_unlock(&n->mu);
	return st;
}

static k32_status_t fake_stats(void *node, struct k32_buf *out, struct k32_err *err)
{
	struct fake_node *n = node;
	return k32_buf_printf(out, err,
			      "{\"node\":\"%s\",\"pool\":{\"usedBytes\":5000},\"pods\":[{"
			      "\"namespace\":\"default\",\"name\":\"%s\",\"container\":\"main\","
			      "\"state\":\"running\",\"cpuNanocores\":1000,\"memory\":{"
			      "\"poolBytes\":4096}}]}",
			      n->name, n->pod);
}

static const struct cplane_node_ops fake_ops = {
    .name = fake_name, .logs = fake_logs, .stats = fake_stats};

static struct fake_node local_node = {.name = "local-1", .pod = "pl"};
static struct fake_node remote_node = {.name = "remote-1", .pod = "pr"};

/* The token remote-1's pod server trusts (its node token, as a board that joined with it:
 * the control plane's first try, the admin token, gets 401) and what it saw. */
static char fake_trusted[128];
static _Atomic int fake_refused, fake_accepted;

/* The remote node's pod server (what src/kubelet/klet_http.c serves). */
static void fake_pod_server(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct fake_node *n = ctx;
	char v[32], path[256];
	k32_str_copy(req->path, path, sizeof(path));
	if (!k32_str_eq_cstr(req->bearer_token, fake_trusted)) {
		fake_refused++;
		http_response_set(resp, 401, "text/plain", "credentials\n", 12);
		return;
	}
	fake_accepted++;
	if (!strcmp(path, "/stats")) {
		fake_stats(n, &resp->body, NULL);
		return;
	}
	char pod[64];
	if (sscanf(path, "/containerLogs/default/%63[^/]/c", pod) != 1) {
		http_response_set(resp, 404, "text/plain", "no\n", 3);
		return;
	}
	int64_t tail = -1;
	uint64_t seq = 0;
	if (!http_query_get(req->query, "tailLines", v, sizeof(v), NULL))
		tail = strtoll(v, NULL, 10);
	if (!http_query_get(req->query, "afterSeq", v, sizeof(v), NULL))
		seq = strtoull(v, NULL, 10);
	bool prev =
	    !http_query_get(req->query, "previous", v, sizeof(v), NULL) && !strcmp(v, "true");
	bool ts =
	    !http_query_get(req->query, "timestamps", v, sizeof(v), NULL) && !strcmp(v, "true");
	struct k32_err err;
	if (fake_logs(n, "default", pod, prev, tail, ts, &seq, &resp->body, &err)) {
		k32_buf_reset(&resp->body);
		http_response_set(resp, 404, "text/plain", err.msg, strlen(err.msg));
		return;
	}
	snprintf(v, sizeof(v), "%llu", (unsigned long long)seq);
	http_response_header(resp, "X-Kube32-Log-Seq", v);
}

/* ---- fixture ------------------------------------------------------------------------------ */

static struct {
	struct cplane *cp;
	struct http_server *pods; /* remote-1's pod server */
	struct http_client *c;
} fx;

static int do_req(const char *method, const char *target, const char *body, struct k32_buf *out)
{
	struct http_client_request rq = {.method = method,
					 .target = target,
					 .content_type = body ? "application/json" : NULL,
					 .body = body,
					 .body_len = body ? strlen(body) : 0};
	struct http_client_response r;
	struct k32_err err;
	if (http_client_do(fx.c, &rq, &r, &err))
		fail_msg("%s %s: %s", method, target, err.msg);
	int st = r.status;
	k32_buf_reset(out);
	k32_buf_append(out, r.body.data ? r.body.data : (const uint8_t *)"", r.body.len, NULL);
	http_client_response_fini(&r);
	return st;
}

static void make_pod(const char *name, const char *node, struct k32_buf *b)
{
	char body[600], target[200];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"main\","
		 "\"image\":\"x.wasm\"}]}}",
		 name, node);
	assert_int_equal(do_req("POST", "/api/v1/namespaces/default/pods", body, b), 201);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
		 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"main\","
		 "\"image\":\"x.wasm\"}]},\"status\":{\"phase\":\"Running\"}}",
		 name, node);
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s/status", name);
	assert_int_equal(do_req("PUT", target, body, b), 200);
}

static int setup(void **state)
{
	(void)state;
	struct k32_err err;
	const struct k32_platform_ops *pl = k32_plat();
	pl->mutex_init(&local_node.mu);
	pl->mutex_init(&remote_node.mu);
	fake_add(&local_node, "line 1");
	fake_add(&local_node, "line 2");
	fake_add(&remote_node, "line 1");
	fake_add(&remote_node, "line 2");
	struct cplane_config cc;
	cplane_config_init(&cc);
	cc.data_dir = CPLANE_TEST_DIR "/cp";
	cc.memory_store = true;
	cc.tls = false;
	cc.controllers = false;
	if (cplane_start(&cc, &fx.cp, &err))
		fail_msg("cplane_start: %s", err.msg);
	assert_false(cplane_has_controllers(fx.cp));
	assert_null(cplane_ca_file(fx.cp));
	assert_int_equal(cplane_node_attach(fx.cp, &fake_ops, &local_node, &err), K32_OK);
	assert_int_equal(
	    cplane_node_token(fx.cp, "remote-1", fake_trusted, sizeof(fake_trusted), &err), K32_OK);
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = fake_pod_server;
	hc.ctx = &remote_node;
	if (http_server_start(&hc, &fx.pods, &err))
		fail_msg("fake pod server: %s", err.msg);
	struct http_client_config cfg;
	http_client_config_init(&cfg);
	cfg.port = cplane_port(fx.cp);
	cfg.bearer_token = cplane_admin_token(fx.cp);
	cfg.timeout_us = 10000000;
	if (http_client_new(&cfg, &fx.c, &err))
		fail_msg("client: %s", err.msg);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	char node[400];
	snprintf(node, sizeof(node),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"remote-1\"}}");
	assert_int_equal(do_req("POST", "/api/v1/nodes", node, &b), 201);
	snprintf(node, sizeof(node),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"remote-1\"},"
		 "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],"
		 "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":%u}}}}",
		 (unsigned)http_server_port(fx.pods));
	assert_int_equal(do_req("PUT", "/api/v1/nodes/remote-1/status", node, &b), 200);
	make_pod("pl", "local-1", &b);
	make_pod("pr", "remote-1", &b);
	make_pod("lost", "nowhere-1", &b); /* its node publishes no kubelet port */
	k32_buf_fini(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	http_client_free(fx.c);
	cplane_stop(fx.cp);
	http_server_stop(fx.pods);
	return 0;
}

/* ---- pods/log ---------------------------------------------------------------------------- */

static void test_logs(void **state)
{
	(void)state;
	static const struct {
		const char *target;
		int code;
		const char *want; /* the whole body, or a substring when code != 200 */
	} cases[] = {
	    {"/api/v1/namespaces/default/pods/pl/log", 200, "line 1\nline 2\n"},
	    {"/api/v1/namespaces/default/pods/pl/log?tailLines=1", 200, "line 2\n"},
	    {"/api/v1/namespaces/default/pods/pl/log?limitBytes=4", 200, "line"},
	    {"/api/v1/namespaces/default/pods/pl/log?sinceSeconds=1", 200, ""},
	    {"/api/v1/namespaces/default/pods/pl/log?previous=true", 400, "is not on node local-1"},
	    {"/api/v1/namespaces/default/pods/pr/log", 200, "line 1\nline 2\n"},
	    {"/api/v1/namespaces/default/pods/pr/log?tailLines=1&timestamps=true", 200,
	     "2026-01-01T00:00:00Z line 2\n"},
	    {"/api/v1/namespaces/default/pods/pr/log?previous=true", 400,
	     "is not on node remote-1"},
	    {"/api/v1/namespaces/default/pods/lost/log", 500, "publishes no kubelet port"},
	    {"/api/v1/namespaces/default/pods/none/log", 404, "NotFound"},
	};
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = do_req("GET", cases[i].target, NULL, &b);
		if (code != cases[i].code ||
		    (code == 200 ? strcmp(k32_buf_cstr(&b), cases[i].want)
				 : !strstr(k32_buf_cstr(&b), cases[i].want)))
			fail_msg("%s: HTTP %d \"%s\", want %d \"%s\"", cases[i].target, code,
				 k32_buf_cstr(&b), cases[i].code, cases[i].want);
	}
	/* remote-1's pod server took only its own node token: the admin token came first (401)
	 * and each request was answered with the node token */
	assert_true(fake_refused > 0);
	assert_true(fake_accepted >= 3);
	/* a node trusting neither: the node's 401 is what the user gets, not a silent empty log */
	snprintf(fake_trusted, sizeof(fake_trusted), "nothing-the-control-plane-has");
	int code = do_req("GET", "/api/v1/namespaces/default/pods/pr/log", NULL, &b);
	assert_int_equal(code, 500);
	assert_non_null(strstr(k32_buf_cstr(&b), "credentials"));
	struct k32_err err;
	assert_int_equal(
	    cplane_node_token(fx.cp, "remote-1", fake_trusted, sizeof(fake_trusted), &err), K32_OK);
	k32_buf_fini(&b);
}

struct follow {
	struct fake_node *n;
	int lines;   /* lines received */
	int stop_at; /* hang up after this many (0: never) */
	int drop_at; /* after this many, the pod leaves the node (0: never) */
	char last[64];
};

/* Each line received makes the node log the next one, so only streaming gets them all. */
static k32_status_t on_line(void *ctx, const uint8_t *data, size_t len)
{
	struct follow *f = ctx;
	if (!data)
		return K32_OK;
	f->lines++;
	snprintf(f->last, sizeof(f->last), "%.*s", (int)len, (const char *)data);
	if (f->stop_at && f->lines >= f->stop_at)
		return K32_ERR_CANCELED;
	if (f->drop_at && f->lines >= f->drop_at) {
		k32_mutex_lock(&f->n->mu);
		f->n->pod[0] = 0;
		k32_mutex_unlock(&f->n->mu);
		return K32_OK;
	}
	char next[32];
	snprintf(next, sizeof(next), "line %d", (int)f->n->count + 1);
	fake_add(f->n, next);
	return K32_OK;
}

static k32_status_t follow(const char *pod, struct follow *f, int *code)
{
	char target[200];
	snprintf(target, sizeof(target),
		 "/api/v1/namespaces/default/pods/%s/log?follow=true&tailLines=1", pod);
	struct http_client_request rq = {.method = "GET", .target = target, .timeout_us = 5000000};
	struct k32_err err;
	return http_client_stream(fx.c, &rq, true, on_line, f, code, &err);
}

static void test_follow(void **state)
{
	(void)state;
	static struct {
		const char *pod;
		struct fake_node *n;
	} cases[] = {{"pl", &local_node}, {"pr", &remote_node}};
	for (size_t i = 0; i < 2; i++) {
		/* the tail line, then new ones as they are logged */
		struct follow f = {.n = cases[i].n, .stop_at = 4};
		int code = 0;
		assert_int_equal(follow(cases[i].pod, &f, &code), K32_ERR_CANCELED);
		assert_int_equal(code, 200);
		assert_int_equal(f.lines, 4);
		char want[32];
		snprintf(want, sizeof(want), "line %d", (int)cases[i].n->count);
		assert_string_equal(f.last, want);
		/* the pod leaves its node: the stream ends by itself */
		struct follow g = {.n = cases[i].n, .drop_at = 2};
		assert_int_equal(follow(cases[i].pod, &g, &code), K32_OK);
		assert_int_equal(code, 200);
		assert_int_equal(g.lines, 2);
		k32_mutex_lock(&cases[i].n->mu);
		snprintf(cases[i].n->pod, sizeof(cases[i].n->pod), "%s", cases[i].pod);
		k32_mutex_unlock(&cases[i].n->mu);
	}
	/* a node with no kubelet port: 502 */
	struct follow h = {.n = &remote_node};
	int code = 0;
	assert_int_equal(follow("lost", &h, &code), K32_OK);
	assert_int_equal(code, 502);
}

/* A remote node that stops answering ends its followed logs after a few polls. */
static void test_follow_unreachable(void **state)
{
	(void)state;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	/* a port nothing listens on: bind one, note it, close it */
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = fake_pod_server;
	hc.ctx = &remote_node;
	struct http_server *tmp;
	struct k32_err err;
	assert_int_equal(http_server_start(&hc, &tmp, &err), K32_OK);
	unsigned dead = http_server_port(tmp);
	http_server_stop(tmp);
	char node[400];
	snprintf(node, sizeof(node),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"gone-1\"}}");
	assert_int_equal(do_req("POST", "/api/v1/nodes", node, &b), 201);
	snprintf(node, sizeof(node),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"gone-1\"},"
		 "\"status\":{\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":%u}}}}",
		 dead);
	assert_int_equal(do_req("PUT", "/api/v1/nodes/gone-1/status", node, &b), 200);
	make_pod("pg", "gone-1", &b);
	struct follow f = {.n = &remote_node};
	int code = 0;
	assert_int_equal(follow("pg", &f, &code), K32_OK);
	assert_int_equal(code, 200);
	assert_int_equal(f.lines, 0);
	k32_buf_fini(&b);
}

/* At most K32_CPLANE_MAX_REMOTE_FOLLOWS remote streams at once: one more gets 503; once they
 * end, their slots serve again. */
static void test_follow_limit(void **state)
{
	(void)state;
	const struct k32_platform_ops *pl = k32_plat();
	k32_sock_t socks[K32_CPLANE_MAX_REMOTE_FOLLOWS];
	struct k32_err err;
	char req[512];
	snprintf(req, sizeof(req),
		 "GET /api/v1/namespaces/default/pods/pr/log?follow=true HTTP/1.1\r\nHost: x\r\n"
		 "Authorization: Bearer %s\r\n\r\n",
		 cplane_admin_token(fx.cp));
	/* the earlier tests' streams end asynchronously (their client saw the end first) */
	for (int tries = 0; tries < 400; tries++) {
		bool busy = false;
		k32_mutex_lock(&fx.cp->mu);
		for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS; i++)
			busy |= fx.cp->follows[i].used;
		k32_mutex_unlock(&fx.cp->mu);
		if (!busy)
			break;
		pl->sleep_us(5000);
	}
	for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS; i++) {
		assert_int_equal(
		    pl->tcp_connect("127.0.0.1", cplane_port(fx.cp), 2000000, &socks[i], &err),
		    K32_OK);
		size_t sent = 0;
		assert_int_equal(pl->sock_send(socks[i], req, strlen(req), &sent), K32_OK);
		assert_int_equal(sent, strlen(req));
		/* its answer's head: the stream is open */
		char head[256];
		size_t got = 0;
		struct k32_pollfd pf = {.sock = socks[i], .events = K32_POLL_IN};
		size_t ready = 0;
		assert_int_equal(pl->poll(&pf, 1, 5000000, &ready), K32_OK);
		assert_int_equal(pl->sock_recv(socks[i], head, sizeof(head) - 1, &got), K32_OK);
		head[got] = 0;
		if (strncmp(head, "HTTP/1.1 200", 12))
			fail_msg("stream %zu: %s", i, head);
	}
	struct follow f = {.n = &remote_node};
	int code = 0;
	assert_int_equal(follow("pr", &f, &code), K32_OK);
	assert_int_equal(code, 503);
	for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS; i++)
		pl->sock_close(socks[i]);
	/* the relay frees the closed streams' slots on its next round */
	for (int i = 0; i < 200 && code != 200; i++) {
		pl->sleep_us(25000);
		struct follow g = {.n = &remote_node, .stop_at = 1};
		follow("pr", &g, &code);
	}
	assert_int_equal(code, 200);
}

static void test_metrics(void **state)
{
	(void)state;
	static const struct {
		const char *target;
		int code;
		const char *want;
	} cases[] = {
	    {"/apis", 200, "\"name\":\"metrics.k8s.io\""},
	    {"/apis/metrics.k8s.io/v1beta1", 200, "\"kind\":\"PodMetrics\""},
	    {"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pl", 200, "\"memory\":\"4Ki\""},
	    {"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pr", 200, "\"cpu\":\"1000n\""},
	    {"/apis/metrics.k8s.io/v1beta1/nodes/remote-1", 200, "\"memory\":\"5000\""},
	    {"/apis/metrics.k8s.io/v1beta1/nodes/local-1", 200, "\"kind\":\"NodeMetrics\""},
	    {"/apis/metrics.k8s.io/v1beta1/nodes/nope", 404, "not found"},
	    {"/apis/metrics.k8s.io/v1beta1/namespaces/x/pods/pl", 404, "not found"},
	    {"/apis/metrics.k8s.io/v1beta1/bogus", 404, "NotFound"},
	};
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = do_req("GET", cases[i].target, NULL, &b);
		if (code != cases[i].code || !strstr(k32_buf_cstr(&b), cases[i].want))
			fail_msg("%s: HTTP %d \"%s\", want %d \"%s\"", cases[i].target, code,
				 k32_buf_cstr(&b), cases[i].code, cases[i].want);
	}
	k32_buf_fini(&b);
}

/* The table of local nodes is bounded and named in the error. */
static void test_attach_limit(void **state)
{
	(void)state;
	static struct fake_node many[K32_CPLANE_MAX_LOCAL_NODES];
	struct k32_err err;
	size_t n = 0;
	for (; n < K32_CPLANE_MAX_LOCAL_NODES; n++) {
		many[n].name = "many";
		if (cplane_node_attach(fx.cp, &fake_ops, &many[n], &err))
			break;
	}
	assert_int_equal(n, K32_CPLANE_MAX_LOCAL_NODES - 1); /* local-1 holds one entry */
	assert_non_null(strstr(err.msg, "K32_CPLANE_MAX_LOCAL_NODES"));
	for (size_t i = 0; i < K32_CPLANE_MAX_LOCAL_NODES; i++)
		cplane_node_detach(fx.cp, &many[i]);
	cplane_node_detach(fx.cp, &many[0]); /* twice: ignored */
	assert_int_equal(cplane_node_attach(fx.cp, &fake_ops, &many[0], &err), K32_OK);
	cplane_node_detach(fx.cp, &many[0]);
}

/* ---- without a running control plane --------------------------------------------------------- */

struct stage_log {
	int n;
	enum cplane_stage s[4];
};

static void on_stage(void *ctx, enum cplane_stage s)
{
	struct stage_log *l = ctx;
	if (l->n < 4)
		l->s[l->n++] = s;
}

static void test_start(void **state)
{
	(void)state;
	struct cplane_config cc;
	struct cplane *cp = NULL, *cp2 = NULL;
	struct k32_err err;
	cplane_config_init(&cc);
	assert_true(cc.tls && cc.controllers);
	cc.tls = false;
	assert_int_equal(cplane_start(&cc, &cp, &err), K32_ERR_INVALID_ARGS);
	assert_null(cp);
	assert_non_null(strstr(err.msg, "data directory"));
	/* with the controllers, and the boot stages in order */
	struct stage_log log = {0};
	cc.data_dir = CPLANE_TEST_DIR "/start";
	cc.memory_store = true;
	cc.on_stage = on_stage;
	cc.stage_ctx = &log;
	assert_int_equal(cplane_start(&cc, &cp, &err), K32_OK);
	assert_int_equal(log.s[0], CPLANE_STAGE_STORE);
	assert_int_equal(log.s[1], CPLANE_STAGE_API);
#ifdef CPLANE_HAVE_CTRL
	assert_true(cplane_has_controllers(cp));
	assert_int_equal(log.n, 3);
	assert_int_equal(log.s[2], CPLANE_STAGE_CONTROLLERS);
#else
	assert_int_equal(log.n, 2);
#endif
	assert_non_null(cplane_store(cp));
	char tok[128];
	assert_int_equal(cplane_node_token(cp, "n-1", tok, sizeof(tok), &err), K32_OK);
	assert_true(strlen(tok) > 8);
	/* a second one on the same port fails cleanly, naming the port */
	cc.port = cplane_port(cp);
	cc.on_stage = NULL;
	assert_int_not_equal(cplane_start(&cc, &cp2, &err), K32_OK);
	assert_null(cp2);
	cplane_stop(cp);
	cplane_stop(NULL);
}

static void test_kubeconfig(void **state)
{
	(void)state;
	const struct k32_platform_ops *pl = k32_plat();
	struct k32_err err;
	const char *ca = CPLANE_TEST_DIR "/ca.pem", *kc = CPLANE_TEST_DIR "/kc";
	assert_int_equal(pl->dir_create(CPLANE_TEST_DIR, &err), K32_OK);
	assert_int_equal(pl->file_write_atomic(ca, "abc", 3, &err), K32_OK);
	assert_int_equal(cplane_write_kubeconfig(kc, "https", "127.0.0.1", 6443, ca, "tok", &err),
			 K32_OK);
	uint8_t *text;
	size_t len;
	assert_int_equal(pl->file_read_all(kc, k32_default_allocator(), 1 << 16, &text, &len, &err),
			 K32_OK);
	assert_non_null(strstr((char *)text, "server: https://127.0.0.1:6443\n"));
	assert_non_null(strstr((char *)text, "certificate-authority-data: YWJj\n"));
	assert_non_null(strstr((char *)text, "token: tok\n"));
	k32_free(k32_default_allocator(), text, len + 1);
	/* plain HTTP: no CA line */
	assert_int_equal(cplane_write_kubeconfig(kc, "http", "h", 1, NULL, "t", &err), K32_OK);
	assert_int_equal(pl->file_read_all(kc, k32_default_allocator(), 1 << 16, &text, &len, &err),
			 K32_OK);
	assert_null(strstr((char *)text, "certificate-authority"));
	k32_free(k32_default_allocator(), text, len + 1);
	/* an unreadable CA is an error, not a broken file */
	assert_int_not_equal(
	    cplane_write_kubeconfig(kc, "https", "h", 1, CPLANE_TEST_DIR "/none.pem", "t", &err),
	    K32_OK);
}

static void test_helpers(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		bool ok;
		const char *ns, *name;
	} paths[] = {
	    {"/api/v1/namespaces/default/pods/p/log", true, "default", "p"},
	    {"/api/v1/namespaces/kube-system/pods/a-b/log", true, "kube-system", "a-b"},
	    {"/api/v1/namespaces/default/pods/p", false, "", ""},
	    {"/api/v1/namespaces/default/pods/p/status", false, "", ""},
	    {"/api/v1/namespaces/default/configmaps/p/log", false, "", ""},
	    {"/api/v1/pods", false, "", ""},
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char ns[64] = "", name[128] = "";
		struct k32_str s = {paths[i].path, strlen(paths[i].path)};
		assert_int_equal(cplane_log_path(s, ns, sizeof(ns), name, sizeof(name)),
				 paths[i].ok);
		if (paths[i].ok) {
			assert_string_equal(ns, paths[i].ns);
			assert_string_equal(name, paths[i].name);
		}
	}
	static const struct {
		const char *in, *cutoff;
		bool keep_ts;
		int64_t limit;
		const char *out;
	} filters[] = {
	    {"a\nb\n", "", false, -1, "a\nb\n"},
	    {"a\nb\n", "", false, 3, "a\nb"},
	    {"2026-01-01T00:00:00Z a\n2026-01-02T00:00:00Z b\n", "2026-01-01T12:00:00Z", false, -1,
	     "b\n"},
	    {"2026-01-01T00:00:00Z a\n2026-01-02T00:00:00Z b\n", "2026-01-01T12:00:00Z", true, -1,
	     "2026-01-02T00:00:00Z b\n"},
	    {"2026-01-01T00:00:00Z a\n", "2027-01-01T00:00:00Z", false, -1, ""},
	    {"", "", false, 0, ""},
	};
	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		struct k32_buf b;
		k32_buf_init(&b, k32_default_allocator(), 4096, "f");
		k32_buf_append_str(&b, filters[i].in, NULL);
		cplane_log_filter(&b, filters[i].cutoff, filters[i].keep_ts, filters[i].limit);
		assert_string_equal(k32_buf_cstr(&b), filters[i].out);
		k32_buf_fini(&b);
	}
	static const struct {
		uint64_t s;
		const char *want;
	} times[] = {
	    {0, "1970-01-01T00:00:00Z"},
	    {951782400, "2000-02-29T00:00:00Z"},
	    {1767225599, "2025-12-31T23:59:59Z"},
	    {4107542400, "2100-03-01T00:00:00Z"},
	};
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		char t[32];
		cplane_fmt_time(times[i].s, t, sizeof(t));
		assert_string_equal(t, times[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest plain[] = {
	    cmocka_unit_test(test_helpers),
	    cmocka_unit_test(test_kubeconfig),
	    cmocka_unit_test(test_start),
	};
	const struct CMUnitTest served[] = {
	    cmocka_unit_test(test_logs),
	    cmocka_unit_test(test_follow),
	    cmocka_unit_test(test_follow_unreachable),
	    cmocka_unit_test(test_follow_limit),
	    cmocka_unit_test(test_metrics),
	    cmocka_unit_test(test_attach_limit),
	};
	int rc = cmocka_run_group_tests(plain, NULL, NULL);
	return rc | cmocka_run_group_tests(served, setup, teardown);
}
