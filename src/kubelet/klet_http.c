/*
 * klet_http.c - the node's pod HTTP server (design.md section 7): port 7000 by default,
 * routing by the `X-Kube32-Pod: <namespace>/<name>` header to that pod's HTTP handler.
 *
 *   404  no such pod on this node (or a malformed header value)
 *   503  the pod is not Running (starting, back-off, finished); or the interpreter is held
 *        past the request's bound, or K32_KLET_POD_HTTP_QUEUE requests wait (Retry-After)
 *   501  the pod's module has no HTTP handler export
 *   504  the handler ran out of its execution budget
 *   500  the handler trapped (the pod then restarts per its restartPolicy)
 *
 * With `X-Kube32-Service: <namespace>/<name>` instead: one ready pod of that Service,
 * round-robin, here or forwarded to its node's pod server (klet_svc.c).
 *
 * Without either header: GET /healthz ("ok"), GET /stats (the pod pool and each pod's bytes
 * by kind, JSON) and GET /containerLogs/<ns>/<pod>/<container>
 * with the query parameters of pods/log (tailLines, previous, timestamps, follow), which is
 * how the control plane's log proxy reads the log of a pod on a board in another process.
 * follow=true on a running container is a chunked stream: the lines so far (or the last
 * tailLines), then new lines as they come (looked for every K32_KLET_LOG_FOLLOW_MS), until
 * the container ends (its last lines are sent first), the pod goes, or the client leaves; at
 * most K32_KLET_LOG_FOLLOWERS such streams at once (429 past it).
 *
 * Credentials. The node's own endpoints (POST /console, GET /stats, GET /metrics,
 * GET /containerLogs/...)
 * answer only a request carrying "Authorization: Bearer <token>" with a token the node
 * trusts, as the kubelet API does in Kubernetes: the token it talks to the API server with
 * (klet_config.token: its node token, or the admin token it joined with) or one of
 * klet_config.pod_http_tokens (kube32-sim gives its boards the cluster admin's). Anything
 * else is 401 with WWW-Authenticate, before any work. Tokens are compared in constant time.
 * Pod routes (X-Kube32-Pod) and GET /healthz stay open: a pod's HTTP is its own business.
 * The control plane's log relay and metrics send the admin token (src/cplane).
 *
 * Connections: at most profile.pod_http_conns open at once (K32_KLET_POD_HTTP_CONNS), and at
 * most profile.pod_http_conns_per_client from one client address
 * (K32_KLET_POD_HTTP_CONNS_PER_CLIENT; the generic server's max_conns_per_addr: past it a
 * client is answered 503 and its connection closed).
 *
 * Routing never waits on pod code (docs/node-tasks.md section 1). The server's loop accepts
 * and parses; the handler (auth, choosing the pod, error answers) runs on one of
 * K32_KLET_POD_HTTP_ROUTERS handler tasks and takes only the kubelet's `lock`. A pod request
 * is queued to the exec task (the board's one interpreter), which runs it between two pod
 * calls; its router waits for the answer. At most K32_KLET_POD_HTTP_QUEUE requests are
 * queued or running at once (one router is then always free); one more, a request whose wait
 * would outlast K32_KLET_POD_HTTP_WAIT_MS (cfg.pod_http_wait_ms) because the running call's
 * deadline lies further, or one not taken within it, is answered 503 with Retry-After,
 * naming the pod and the call that hold the interpreter (or "queue full").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_prom.h"
#include "kmeta/kmeta.h"
#include "kubelet/klet_int.h"

static void text(struct http_response *resp, int status, const char *msg)
{
	http_response_set(resp, status, "text/plain; charset=utf-8", msg, strlen(msg));
	http_response_header(resp, "X-Content-Type-Options", "nosniff");
}

/* A query parameter of req for kmeta_log_opts_parse. */
static bool klet_query_get(void *ctx, const char *name, char *buf, size_t cap)
{
	const struct http_request *req = ctx;
	return !http_query_get(req->query, name, buf, cap, NULL);
}

/* A followed log (/containerLogs?follow=true). */
struct follow {
	struct klet *k;
	char ns[KLET_NS_LEN];
	char name[KLET_NAME_LEN];
	uint32_t gen;		/* the pod slot's generation: another pod in the slot ends it */
	uint64_t run_start_us;	/* the container followed: a restart ends the stream */
	uint64_t seq;		/* last line sent */
	int64_t tail;		/* tailLines, for the first read only */
	bool ts;		/* timestamps */
	bool started;		/* the first read was made */
	bool done;		/* the container ended: end once pending is sent */
	struct k32_buf pending; /* lines read, not yet accepted by the stream */
};

/* Reads the followed container's new lines into f->pending and notes whether it ended.
 * K32_ERR_NOT_FOUND: the pod is gone. */
static k32_status_t follow_read(struct follow *f)
{
	struct klet *k = f->k;
	k32_status_t st = K32_OK;
	k32_mutex_lock(&k->lock);
	struct klet_pod *p = klet_pod_find_locked(k, f->ns, f->name);
	if (!p || p->gen != f->gen) {
		st = K32_ERR_NOT_FOUND;
	} else {
		/* a new container moved the followed one's lines to the previous ring */
		bool same = p->run_start_us == f->run_start_us;
		bool ended = !same || !p->started || p->exit_pending || p->deleting ||
			     p->state != KLET_C_RUNNING;
		st = klet_ring_read(same ? &p->log : &p->prev, f->started ? -1 : f->tail, f->ts,
				    &f->seq, &f->pending, NULL);
		if (st == K32_ERR_NO_RESOURCES)
			st = K32_OK; /* the buffer is full: the rest comes with the next read */
		else if (!st && ended)
			f->done = true;
	}
	f->started = true;
	k32_mutex_unlock(&k->lock);
	return st;
}

static k32_status_t follow_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	(void)events;
	struct follow *f = ctx;
	if (!f->pending.len) {
		if (f->done)
			return K32_ERR_CANCELED; /* the container ended and everything was sent */
		if (follow_read(f) == K32_ERR_NOT_FOUND)
			return K32_ERR_CANCELED; /* the pod is gone: end the log */
	}
	if (f->pending.len) {
		k32_status_t st = http_stream_write(s, f->pending.data, f->pending.len);
		if (st == K32_ERR_SHOULD_WAIT)
			return K32_OK; /* pulled again when the client has read its output */
		if (st)
			return st;
		k32_buf_reset(&f->pending);
		if (f->done)
			return K32_ERR_CANCELED;
	}
	http_stream_set_timer(s, (int64_t)(k32_now_us() + K32_KLET_LOG_FOLLOW_MS * 1000ull));
	return K32_OK;
}

static void follow_close(void *ctx, k32_status_t why)
{
	(void)why;
	struct follow *f = ctx;
	struct klet *k = f->k;
	k32_buf_fini(&f->pending);
	k32_free(k->alloc, f, sizeof(*f));
	k32_mutex_lock(&k->lock);
	k->log_followers--;
	k32_mutex_unlock(&k->lock);
}

static const struct http_stream_ops follow_ops = {.pull = follow_pull, .close = follow_close};

/* Starts following a running container's log. false: not running (answer it once). */
static bool follow_start(struct klet *k, const char *ns, const char *name, int64_t tail, bool ts,
			 struct http_response *resp)
{
	char m[KLET_MSG_LEN + 64];
	k32_mutex_lock(&k->lock);
	struct klet_pod *p = klet_pod_find_locked(k, ns, name);
	bool running = p && p->started && p->state == KLET_C_RUNNING && !p->exit_pending;
	uint32_t gen = running ? p->gen : 0;
	uint64_t run_start = running ? p->run_start_us : 0;
	bool full = running && k->log_followers >= K32_KLET_LOG_FOLLOWERS;
	if (running && !full)
		k->log_followers++;
	k32_mutex_unlock(&k->lock);
	if (!running)
		return false;
	if (full) {
		klet_msgf(m, sizeof(m),
			  "node %s already streams %u logs (K32_KLET_LOG_FOLLOWERS); close one or "
			  "read without follow\n",
			  k->node, (unsigned)K32_KLET_LOG_FOLLOWERS);
		text(resp, 429, m);
		return true;
	}
	struct follow *f = k32_calloc(k->alloc, sizeof(*f));
	if (f) {
		f->k = k;
		snprintf(f->ns, sizeof(f->ns), "%s", ns);
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->gen = gen;
		f->run_start_us = run_start;
		f->tail = tail;
		f->ts = ts;
		k32_buf_init(&f->pending, k->alloc, 2 * K32_KLET_LOG_RING_BYTES + 1024,
			     "followed log");
		http_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
		if (!http_response_stream(resp, &follow_ops, f, NULL))
			return true;
		k32_buf_fini(&f->pending);
		k32_free(k->alloc, f, sizeof(*f));
		k32_buf_reset(&resp->headers); /* the answer below sets its own */
	}
	k32_mutex_lock(&k->lock);
	k->log_followers--;
	k32_mutex_unlock(&k->lock);
	text(resp, 500, "out of memory for the log stream; read without follow\n");
	return true;
}

static void serve_logs(struct klet *k, struct http_request *req, struct http_response *resp)
{
	/* /containerLogs/<ns>/<pod>/<container> */
	char path[512], ns[KLET_NS_LEN], name[KLET_NAME_LEN];
	if (http_url_decode(req->path, false, path, sizeof(path), NULL)) {
		text(resp, 400, "bad path\n");
		return;
	}
	const char *s = path + strlen("/containerLogs/");
	const char *a = strchr(s, '/');
	const char *b = a ? strchr(a + 1, '/') : NULL;
	if (!a || (size_t)(a - s) >= sizeof(ns) ||
	    (size_t)((b ? b : a + strlen(a)) - a - 1) >= sizeof(name)) {
		text(resp, 400, "expected /containerLogs/<namespace>/<pod>/<container>\n");
		return;
	}
	memcpy(ns, s, (size_t)(a - s));
	ns[a - s] = 0;
	size_t nl = (size_t)((b ? b : a + strlen(a)) - a - 1);
	memcpy(name, a + 1, nl);
	name[nl] = 0;
	/* checked first, so that no value too long for v is taken as absent */
	static const struct http_qspec log_query[] = {
	    {"tailLines", HTTP_Q_UINT, 18, NULL, NULL}, {"previous", HTTP_Q_BOOL, 8, NULL, NULL},
	    {"timestamps", HTTP_Q_BOOL, 8, NULL, NULL}, {"follow", HTTP_Q_BOOL, 8, NULL, NULL},
	    {"afterSeq", HTTP_Q_UINT, 20, NULL, NULL},
	};
	struct http_qfault fault;
	if (http_query_check(req->query, log_query, sizeof(log_query) / sizeof(log_query[0]),
			     &fault)) {
		char m[320];
		http_qfault_message(&fault, m, sizeof(m) - 1);
		strcat(m, "\n");
		text(resp, 400, m);
		return;
	}
	/* kmeta's one reader of log options, the API's pods/log too */
	struct kmeta_log_opts lo;
	char m[K32_ERR_MSG_LEN + 2];
	if (kmeta_log_opts_parse(klet_query_get, req, &lo, m, sizeof(m) - 1)) {
		strcat(m, "\n");
		text(resp, 400, m);
		return;
	}
	int64_t tail = lo.tail_lines;
	bool prev = lo.previous, ts = lo.timestamps;
	if (lo.follow && !prev && follow_start(k, ns, name, tail, ts, resp))
		return;
	uint64_t seq = lo.after_seq;
	struct k32_err err;
	k32_err_clear(&err);
	k32_status_t st = klet_pod_logs(k, ns, name, prev, tail, ts, &seq, &resp->body, &err);
	if (st) {
		k32_buf_reset(&resp->body);
		char m[K32_ERR_MSG_LEN + 2];
		klet_msgf(m, sizeof(m), "%s\n", err.msg);
		text(resp, st == K32_ERR_NOT_FOUND ? 404 : 500, m);
		return;
	}
	char sq[24];
	snprintf(sq, sizeof(sq), "%llu", (unsigned long long)seq);
	http_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
	http_response_header(resp, "X-Kube32-Log-Seq", sq);
}

/* ---- pod requests: routed here, run by the exec task ---------------------------------- */

void klet_exec_busy(struct klet *k, const struct klet_pod *p, const char *entry)
{
	k32_mutex_lock(&k->lock);
	k->busy.on = entry != NULL;
	if (entry) {
		snprintf(k->busy.ref, sizeof(k->busy.ref), "%s", p->ref);
		k->busy.entry = entry;
		k->busy.deadline_ms = p->deadline_ms;
		k->busy.until_us = k32_now_us() + (uint64_t)p->deadline_ms * 1000u;
	}
	k32_mutex_unlock(&k->lock);
}

bool klet_http_queued_locked(const struct klet *k)
{
	for (uint32_t i = 0; i < K32_KLET_POD_HTTP_QUEUE; i++)
		if (k->http_jobs[i].state == KLET_JOB_QUEUED)
			return true;
	return false;
}

/* The oldest queued job, now RUNNING, or NULL (lock held). */
static struct klet_http_job *job_take_locked(struct klet *k)
{
	struct klet_http_job *j = NULL;
	for (uint32_t i = 0; i < K32_KLET_POD_HTTP_QUEUE; i++) {
		struct klet_http_job *c = &k->http_jobs[i];
		if (c->state == KLET_JOB_QUEUED && (!j || (int32_t)(c->seq - j->seq) < 0))
			j = c;
	}
	if (j)
		j->state = KLET_JOB_RUNNING;
	return j;
}

void klet_http_serve(struct klet *k)
{
	/* at most the queue's length per visit: requests that keep coming cannot starve the
	 * pods' ticks */
	for (uint32_t n = 0; n < K32_KLET_POD_HTTP_QUEUE; n++) {
		k32_mutex_lock(&k->lock);
		struct klet_http_job *j = job_take_locked(k);
		k32_mutex_unlock(&k->lock);
		if (!j)
			return;
		struct klet_pod *p = j->p;
		k32_mutex_lock(&k->run_lock);
		k32_mutex_lock(&k->lock);
		bool running =
		    p->used && p->gen == j->gen && p->started && !p->exit_pending && !p->deleting;
		k32_mutex_unlock(&k->lock);
		uint64_t c0 = 0, c1 = 0;
		k32_status_t st = K32_ERR_BAD_STATE;
		if (running) {
			klet_exec_busy(k, p, "k32_http");
			c0 = k32_plat()->thread_cpu_us();
			st = k->ops->http(k->ops_ctx, p, j->req, j->resp);
			c1 = k32_plat()->thread_cpu_us();
			klet_exec_busy(k, p, NULL);
			klet_snapshot(k, p);
		}
		k32_mutex_unlock(&k->run_lock);
		if (running) {
			klet_pod_cpu_add(k, p, c1 - c0);
			klet_events_kick(k,
					 NULL); /* the request may have queued packets for pods */
		}
		k32_mutex_lock(&k->lock);
		j->st = st;
		j->state = KLET_JOB_DONE;
		k32_plat()->cond_broadcast(&k->http_cv);
		k32_mutex_unlock(&k->lock);
	}
}

/* 503 with Retry-After (seconds, at least 1) for a request the exec task cannot take. */
static void busy_answer(struct http_response *resp, const char *msg, uint64_t retry_s)
{
	char ra[24];
	snprintf(ra, sizeof(ra), "%llu", (unsigned long long)(retry_s ? retry_s : 1));
	text(resp, 503, msg);
	http_response_header(resp, "Retry-After", ra);
}

/* What holds the interpreter, for a 503 (lock held). */
static void busy_what_locked(const struct klet *k, uint64_t now, char *out, size_t cap,
			     uint64_t *out_retry_s)
{
	*out_retry_s = 1;
	if (!k->busy.on) {
		klet_msgf(out, cap, "node %s's exec task is busy (not in a pod call)", k->node);
		return;
	}
	uint64_t left_ms = k->busy.until_us > now ? (k->busy.until_us - now + 999) / 1000 : 0;
	*out_retry_s = (left_ms + 999) / 1000;
	klet_msgf(out, cap,
		  "pod %s holds node %s's interpreter in %s (up to %" PRIu64
		  " ms more, its deadline is %" PRIu32 " ms)",
		  k->busy.ref, k->node, k->busy.entry, left_ms, k->busy.deadline_ms);
}

/*
 * Queues the request to the exec task and waits for its answer; answers 503 itself when it
 * cannot be served within the wait bound. Router task; takes `lock` only (never run_lock).
 */
static k32_status_t pod_call(struct klet *k, struct klet_pod *p, uint32_t gen,
			     const struct klet_http_req *hr, struct klet_http_resp *hp,
			     struct http_response *resp)
{
	char why[KLET_MSG_LEN], m[2 * KLET_MSG_LEN];
	uint64_t retry_s = 1;
	k32_mutex_lock(&k->lock);
	uint32_t wait_ms =
	    k->cfg.pod_http_wait_ms ? k->cfg.pod_http_wait_ms : K32_KLET_POD_HTTP_WAIT_MS;
	uint64_t now = k32_now_us();
	struct klet_http_job *j = NULL;
	for (uint32_t i = 0; i < K32_KLET_POD_HTTP_QUEUE && !j; i++)
		if (k->http_jobs[i].state == KLET_JOB_FREE)
			j = &k->http_jobs[i];
	if (!j || k->stopping || k->http_closing) {
		busy_what_locked(k, now, why, sizeof(why), &retry_s);
		k32_mutex_unlock(&k->lock);
		if (k->stopping || k->http_closing)
			klet_msgf(m, sizeof(m), "node %s is stopping; pod %s/%s takes no request\n",
				  k->node, p->ns, p->name);
		else
			klet_msgf(m, sizeof(m),
				  "pod %s/%s: %u requests already wait for node %s's interpreter "
				  "(queue full, K32_KLET_POD_HTTP_QUEUE); %s; retry later\n",
				  p->ns, p->name, (unsigned)K32_KLET_POD_HTTP_QUEUE, k->node, why);
		busy_answer(resp, m, retry_s);
		return K32_ERR_SHOULD_WAIT;
	}
	if (k->busy.on && k->busy.until_us > now + (uint64_t)wait_ms * 1000u) {
		/* the running call may hold the interpreter past this request's bound: say so now
		 * rather than after the bound */
		busy_what_locked(k, now, why, sizeof(why), &retry_s);
		k32_mutex_unlock(&k->lock);
		klet_msgf(m, sizeof(m),
			  "pod %s/%s cannot be served within %" PRIu32
			  " ms (K32_KLET_POD_HTTP_WAIT_MS): %s; retry after it\n",
			  p->ns, p->name, wait_ms, why);
		busy_answer(resp, m, retry_s);
		return K32_ERR_SHOULD_WAIT;
	}
	*j = (struct klet_http_job){.state = KLET_JOB_QUEUED,
				    .seq = k->http_seq++,
				    .p = p,
				    .gen = gen,
				    .req = hr,
				    .resp = hp};
	k32_plat()->cond_broadcast(&k->cv); /* the exec task takes it between two pod calls */
	uint64_t until = now + (uint64_t)wait_ms * 1000u;
	while (j->state != KLET_JOB_DONE) {
		now = k32_now_us();
		bool closing = k->stopping || k->http_closing;
		if (j->state == KLET_JOB_QUEUED && (closing || now >= until)) {
			/* not taken in time: withdraw it (the exec task never saw it) */
			j->state = KLET_JOB_FREE;
			busy_what_locked(k, now, why, sizeof(why), &retry_s);
			k32_mutex_unlock(&k->lock);
			if (closing)
				klet_msgf(m, sizeof(m),
					  "node %s is stopping; pod %s/%s takes no request\n",
					  k->node, p->ns, p->name);
			else
				klet_msgf(
				    m, sizeof(m),
				    "pod %s/%s waited %" PRIu32
				    " ms for node %s's interpreter (K32_KLET_POD_HTTP_WAIT_MS): "
				    "%s; retry later\n",
				    p->ns, p->name, wait_ms, k->node, why);
			busy_answer(resp, m, retry_s);
			return K32_ERR_SHOULD_WAIT;
		}
		/* a running request ends by its call deadline; look again at least every second */
		uint64_t wake =
		    j->state == KLET_JOB_QUEUED && until < now + 1000000u ? until : now + 1000000u;
		k32_plat()->cond_wait(&k->http_cv, &k->lock, (int64_t)wake);
	}
	k32_status_t st = j->st;
	j->state = KLET_JOB_FREE;
	k32_mutex_unlock(&k->lock);
	return st;
}

static void pod_request(struct klet *k, struct k32_str hv, struct http_request *req,
			struct http_response *resp)
{
	char ns[KLET_NS_LEN], name[KLET_NAME_LEN];
	struct k32_str a, b;
	if (!k32_str_cut(hv, '/', &a, &b) || !a.len || !b.len || !k32_str_copy(a, ns, sizeof(ns)) ||
	    !k32_str_copy(b, name, sizeof(name))) {
		text(resp, 404, "X-Kube32-Pod must be <namespace>/<name>\n");
		return;
	}
	char m[KLET_MSG_LEN + 64];
	k32_mutex_lock(&k->lock);
	struct klet_pod *p = klet_pod_find_locked(k, ns, name);
	uint32_t gen = p ? p->gen : 0;
	bool running = p && p->started && p->state == KLET_C_RUNNING && !p->deleting;
	k32_mutex_unlock(&k->lock);
	if (!p) {
		klet_msgf(m, sizeof(m), "pod %s/%s is not on node %s\n", ns, name, k->node);
		text(resp, 404, m);
		return;
	}
	if (!running || !k->ops->http) {
		klet_msgf(m, sizeof(m), "pod %s/%s is not Running on node %s\n", ns, name, k->node);
		text(resp, 503, m);
		return;
	}
	struct klet_http_req hr = {.method = req->method,
				   .target = req->target,
				   .body = req->body,
				   .body_len = req->body_len};
	struct klet_http_resp hp = {.status = 200};
	snprintf(hp.content_type, sizeof(hp.content_type), "text/plain; charset=utf-8");
	k32_buf_init(&hp.body, k->alloc, K32_KLET_POD_HTTP_BODY_MAX, "pod HTTP response");
	k32_status_t st = pod_call(k, p, gen, &hr, &hp, resp);
	switch (st) {
	case K32_ERR_SHOULD_WAIT:
		break; /* answered 503 */
	case K32_OK:
		http_response_set(resp, hp.status >= 100 && hp.status <= 599 ? hp.status : 500,
				  hp.content_type, hp.body.data ? (const char *)hp.body.data : "",
				  hp.body.len);
		break;
	case K32_ERR_BAD_STATE:
		klet_msgf(m, sizeof(m), "pod %s/%s stopped while the request waited\n", ns, name);
		text(resp, 503, m);
		break;
	case K32_ERR_NOT_SUPPORTED:
		klet_msgf(m, sizeof(m), "pod %s/%s has no HTTP handler (export k32_http)\n", ns,
			  name);
		text(resp, 501, m);
		break;
	case K32_ERR_TIMED_OUT:
		klet_msgf(m, sizeof(m), "pod %s/%s ran out of its execution budget: %.*s\n", ns,
			  name, (int)hp.body.len, hp.body.data ? (const char *)hp.body.data : "");
		text(resp, 504, m);
		break;
	default:
		klet_msgf(m, sizeof(m), "pod %s/%s failed the request: %.*s\n", ns, name,
			  (int)hp.body.len, hp.body.data ? (const char *)hp.body.data : "");
		text(resp, 500, m);
		break;
	}
	k32_buf_fini(&hp.body);
}

void klet_http_pod_request(struct klet *k, struct k32_str hv, struct http_request *req,
			   struct http_response *resp)
{
	pod_request(k, hv, req, resp);
}

/* Whether a and b (b NUL-terminated) are equal, in time that depends on the lengths only. */
static bool token_eq(struct k32_str a, const char *b)
{
	size_t n = strlen(b);
	unsigned diff = (unsigned)(a.len ^ n);
	for (size_t i = 0; i < a.len; i++)
		diff |= (unsigned)((unsigned char)a.p[i] ^ (unsigned char)b[i < n ? i : 0]);
	return n > 0 && diff == 0;
}

/* The node endpoints' credentials: true if the bearer token is one the node trusts, else
 * answers 401 (with what to send) and returns false. */
static bool node_authorized(struct klet *k, struct http_request *req, struct http_response *resp)
{
	struct k32_str t = req->bearer_token;
	bool ok = false;
	if (t.len) {
		ok |= k->token[0] && token_eq(t, k->token);
		for (uint32_t i = 0; i < k->pod_token_count; i++)
			ok |= token_eq(t, k->pod_tokens[i]);
	}
	if (ok)
		return true;
	char m[KLET_MSG_LEN + 64];
	klet_msgf(m, sizeof(m),
		  "%.*s on node %s needs the cluster's credentials: send \"Authorization: Bearer "
		  "<token>\" with the admin token of your kubeconfig (pod routes with "
		  "X-Kube32-Pod need none)\n",
		  (int)req->path.len, req->path.p, k->node);
	text(resp, 401, m);
	http_response_header(resp, "WWW-Authenticate", "Bearer realm=\"kube32-node\"");
	return false;
}

/* GET /stats: the pod pool and every pod's bytes by kind and CPU (klet_stats_json). */
static void serve_stats(struct klet *k, struct http_response *resp)
{
	if (klet_stats_json(k, &resp->body, NULL)) {
		k32_buf_reset(&resp->body);
		text(resp, 500, "stats do not fit the response\n");
		return;
	}
	http_response_header(resp, "Content-Type", "application/json");
}

static void handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct klet *k = ctx;
	struct k32_str hv;
	if (http_request_header(req, "X-Kube32-Pod", &hv)) {
		pod_request(k, hv, req, resp);
		return;
	}
	if (http_request_header(req, "X-Kube32-Service", &hv)) {
		klet_svc_request(k, hv, req, resp); /* klet_svc.c */
		return;
	}
	if (!strcmp(req->method, "GET") && k32_str_eq_cstr(req->path, "/healthz")) {
		text(resp, 200, "ok\n");
		return;
	}
	bool node_ep = k32_str_eq_cstr(req->path, "/console") ||
		       k32_str_eq_cstr(req->path, "/stats") ||
		       k32_str_eq_cstr(req->path, "/metrics") ||
		       k32_str_has_prefix(req->path, "/containerLogs/");
	if (node_ep && !node_authorized(k, req, resp))
		return;
	if (!strcmp(req->method, "POST") && k32_str_eq_cstr(req->path, "/console")) {
		klet_console_exec(k, (const char *)req->body, req->body_len, &resp->body);
		http_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
		return;
	}
	if (!strcmp(req->method, "GET") && k32_str_eq_cstr(req->path, "/metrics")) {
		if (klet_metrics_text(k, &resp->body, NULL)) {
			k32_buf_reset(&resp->body);
			text(resp, 500, "metrics do not fit the response\n");
			return;
		}
		http_response_header(resp, "Content-Type", K32_PROM_CONTENT_TYPE);
		return;
	}
	if (!strcmp(req->method, "GET") && k32_str_eq_cstr(req->path, "/stats")) {
		serve_stats(k, resp);
		return;
	}
	if (!strcmp(req->method, "GET") && k32_str_has_prefix(req->path, "/containerLogs/")) {
		serve_logs(k, req, resp);
		return;
	}
	text(resp, 400, "kube32 pod server: send X-Kube32-Pod: <namespace>/<name>\n");
}

k32_status_t klet_http_start(struct klet *k, struct k32_err *err)
{
	struct http_server_config c;
	http_server_config_init(&c);
	k32_mutex_lock(&k->lock);
	k->http_closing = false;
	k32_mutex_unlock(&k->lock);
	c.host = k->pod_http_host;
	c.port = k->cfg.pod_http_port;
	c.handler = handler;
	c.ctx = k;
	c.alloc = k->alloc;
	c.max_conns =
	    k->profile.pod_http_conns ? k->profile.pod_http_conns : K32_KLET_POD_HTTP_CONNS;
	/* one client (one address) may not take every connection of the node */
	c.max_conns_per_addr = k->profile.pod_http_conns_per_client
				   ? k->profile.pod_http_conns_per_client
				   : K32_KLET_POD_HTTP_CONNS_PER_CLIENT;
	if (c.max_conns_per_addr > c.max_conns)
		c.max_conns_per_addr = c.max_conns;
	/* routing runs on its own tasks, never behind a pod's call: a pod request is queued
	 * to the exec task and its router waits for the answer (bounded), so one router more
	 * than the queue holds is always free to route */
	c.handler_threads = K32_KLET_POD_HTTP_ROUTERS;
	c.max_body_bytes = K32_KLET_POD_HTTP_BODY_MAX;
	c.max_response_bytes = K32_HTTP_MAX_RESPONSE_BYTES;
	k32_status_t st = klet_svc_init(k, err);
	if (!st)
		st = http_server_start(&c, &k->pod_srv, err);
	if (st) {
		char why[K32_ERR_MSG_LEN];
		snprintf(why, sizeof(why), "%s", err->msg);
		return k32_err_set(err, st, KLET_MOD, "node %s: pod HTTP server on %s:%u: %s",
				   k->node, k->pod_http_host, (unsigned)k->cfg.pod_http_port, why);
	}
	return K32_OK;
}

void klet_http_stop(struct klet *k)
{
	/* a router waiting on a queued request answers it now: the exec task may never come
	 * (a failed start) or be gone already */
	k32_mutex_lock(&k->lock);
	k->http_closing = true;
	k32_plat()->cond_broadcast(&k->http_cv);
	k32_mutex_unlock(&k->lock);
	http_server_stop(k->pod_srv);
	k->pod_srv = NULL;
	klet_svc_fini(k);
}

uint16_t klet_pod_http_port(const struct klet *k)
{
	return k->pod_srv ? http_server_port(k->pod_srv) : 0;
}
