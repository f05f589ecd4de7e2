/*
 * cplane_logs.c - the body of GET /api/v1/namespaces/<ns>/pods/<pod>/log, from the node that
 * runs the pod (see cplane.h):
 *
 *   node in this process   ops->logs; with follow=true a stream whose timer asks for new
 *                          lines every K32_CPLANE_LOG_FOLLOW_MS (by node name on every pull,
 *                          so a node that is detached ends its streams instead of leaving a
 *                          dangling pointer);
 *   node elsewhere         GET <InternalIP>:<kubelet port>/containerLogs/<ns>/<pod>/c; with
 *                          follow=true a slot in cp->follows polled by the relay task with
 *                          ?afterSeq=<last X-Kube32-Log-Seq> every K32_CPLANE_LOG_FOLLOW_MS:
 *                          the relay appends to the slot's pending lines and wakes the
 *                          stream; the stream's pull (loop task) writes them out. The loop
 *                          never waits on a board; a slow board delays only its own streams.
 *
 * A followed log ends when its pod (or node) is gone (404 from the node), when the node
 * cannot be reached K32_CPLANE_LOG_FOLLOW_FAILS times in a row, or when the client leaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cplane/cplane_int.h"

#include "base/k32_log.h"
#include "kmeta/kmeta.h"

/* Timeout of one request to a node's pod server. */
#define CPLANE_LOG_REMOTE_TIMEOUT_US 2000000

/* ---- paths and filters --------------------------------------------------------------------- */

bool cplane_log_path(struct k32_str path, char *ns, size_t nscap, char *name, size_t namecap)
{
	static const char pre[] = "/api/v1/namespaces/";
	if (!k32_str_has_prefix(path, pre))
		return false;
	struct k32_str rest = {path.p + sizeof(pre) - 1, path.len - (sizeof(pre) - 1)};
	struct k32_str a, b, c, d;
	if (!k32_str_cut(rest, '/', &a, &b) || !k32_str_cut(b, '/', &c, &d) ||
	    !k32_str_eq_cstr(c, "pods"))
		return false;
	struct k32_str n, sub;
	if (!k32_str_cut(d, '/', &n, &sub) || !k32_str_eq_cstr(sub, "log"))
		return false;
	return k32_str_copy(a, ns, nscap) && k32_str_copy(n, name, namecap);
}

/*
 * sinceSeconds and limitBytes of pods/log, applied to a fetched log: lines were fetched with
 * their RFC 3339 stamps when cutoff is set (they sort as text); lines older than cutoff are
 * dropped and the stamps removed again unless keep_ts; then the result is cut at limit bytes
 * (< 0: no limit).
 */
void cplane_log_filter(struct k32_buf *body, const char *cutoff, bool keep_ts, int64_t limit)
{
	size_t w = 0, r = 0;
	char *d = (char *)body->data;
	while (d && r < body->len) {
		char *nl = memchr(d + r, '\n', body->len - r);
		size_t end = nl ? (size_t)(nl - d) + 1 : body->len;
		char *sp = memchr(d + r, ' ', end - r);
		bool keep =
		    !cutoff[0] || (sp && strncmp(d + r, cutoff, (size_t)(sp - (d + r))) >= 0);
		size_t from = !cutoff[0] || keep_ts || !sp ? r : (size_t)(sp - d) + 1;
		if (keep) {
			memmove(d + w, d + from, end - from);
			w += end - from;
		}
		r = end;
	}
	if (limit >= 0 && (uint64_t)limit < w)
		w = (size_t)limit;
	body->len = w;
	if (d)
		d[w] = 0;
}

/* The pod's node name, and that node's pod server address. */
static bool pod_node(struct cplane *cp, const char *ns, const char *name, char *node, size_t ncap,
		     char *ip, size_t ipcap, uint16_t *port)
{
	struct k32_buf b;
	struct k32_err err;
	int code = 0;
	char target[400];
	bool ok = false;
	cJSON *j = NULL;
	k32_buf_init(&b, k32_default_allocator(), K32_CPLANE_OBJ_MAX_BYTES, "pod");
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (api_do(cp->api, "GET", target, NULL, NULL, 0, &code, &b, &err) || code != 200 ||
	    k32_json_parse((const char *)b.data, b.len, &j, NULL))
		goto out;
	const char *nn = cJSON_GetStringValue(k32_json_find(j, "spec.nodeName"));
	if (!nn)
		goto out;
	snprintf(node, ncap, "%s", nn);
	cJSON_Delete(j);
	j = NULL;
	k32_buf_reset(&b);
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", node);
	*port = 0;
	snprintf(ip, ipcap, "127.0.0.1");
	if (!api_do(cp->api, "GET", target, NULL, NULL, 0, &code, &b, &err) && code == 200 &&
	    !k32_json_parse((const char *)b.data, b.len, &j, NULL))
		cplane_node_endpoint(j, ip, ipcap, port);
	ok = true;
out:
	cJSON_Delete(j);
	k32_buf_fini(&b);
	return ok;
}

/*
 * One GET /containerLogs from a node's pod server into out (appended); *inout_seq (may be
 * NULL) is sent as afterSeq and updated from X-Kube32-Log-Seq. K32_ERR_NOT_FOUND: the node
 * does not have the pod (or its previous container).
 */
static k32_status_t remote_logs(struct cplane *cp, struct http_client *c, const char *node,
				const char *ns, const char *pod, bool prev, int64_t tail, bool ts,
				uint64_t *inout_seq, struct k32_buf *out, struct k32_err *err)
{
	char target[512], tail_q[40] = "";
	if (tail >= 0) /* absent: the whole log (the pod server takes no negative count) */
		snprintf(tail_q, sizeof(tail_q), "tailLines=%lld&", (long long)tail);
	snprintf(target, sizeof(target),
		 "/containerLogs/%s/%s/c?%sprevious=%s&timestamps=%s&afterSeq=%llu", ns, pod,
		 tail_q, prev ? "true" : "false", ts ? "true" : "false",
		 (unsigned long long)(inout_seq ? *inout_seq : 0));
	struct http_client_response r;
	k32_status_t st = cplane_node_get(cp, c, node, target, &r, err);
	if (!st && r.status == 200) {
		st = k32_buf_append(out, r.body.data, r.body.len, err);
		struct k32_str v;
		char sq[24];
		if (inout_seq && http_client_response_header(&r, "X-Kube32-Log-Seq", &v) &&
		    k32_str_copy(v, sq, sizeof(sq)))
			*inout_seq = strtoull(sq, NULL, 10);
	} else if (!st) {
		st = k32_err_set(err, r.status == 404 ? K32_ERR_NOT_FOUND : K32_ERR_IO, CPLANE_MOD,
				 "%s", k32_buf_cstr(&r.body));
	}
	http_client_response_fini(&r);
	return st;
}

static k32_status_t remote_client(const char *ip, uint16_t port, struct http_client **out,
				  struct k32_err *err)
{
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.host = ip;
	cc.port = port;
	cc.timeout_us = CPLANE_LOG_REMOTE_TIMEOUT_US;
	return http_client_new(&cc, out, err);
}

/* ---- follow a node of this process ----------------------------------------------------------- */

struct local_follow {
	struct cplane *cp;
	char node[128];
	char ns[64];
	char name[128];
	uint64_t seq;
	int64_t tail; /* first pull only */
	bool ts;
	bool started;
	struct k32_buf pending; /* lines not yet accepted by the stream */
};

static k32_status_t local_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	struct local_follow *f = ctx;
	(void)events;
	if (!f->pending.len) {
		struct k32_err err;
		k32_mutex_lock(&f->cp->mu);
		struct cplane_node *n = cplane_node_find_locked(f->cp, f->node);
		k32_status_t st =
		    n ? n->ops->logs(n->node, f->ns, f->name, false, f->started ? -1 : f->tail,
				     f->ts, &f->seq, &f->pending, &err)
		      : K32_ERR_NOT_FOUND;
		k32_mutex_unlock(&f->cp->mu);
		f->started = true;
		if (st == K32_ERR_NOT_FOUND)
			return K32_ERR_CANCELED; /* the pod or its node is gone: end the log */
		if (st && st != K32_ERR_NO_RESOURCES)
			return st;
	}
	if (f->pending.len) {
		k32_status_t st = http_stream_write(s, f->pending.data, f->pending.len);
		if (st == K32_ERR_SHOULD_WAIT)
			return K32_OK; /* called again when the client drained its output */
		if (st)
			return st;
		k32_buf_reset(&f->pending);
	}
	http_stream_set_timer(s, (int64_t)k32_now_us() + K32_CPLANE_LOG_FOLLOW_MS * 1000);
	return K32_OK;
}

static void local_close(void *ctx, k32_status_t why)
{
	(void)why;
	struct local_follow *f = ctx;
	k32_buf_fini(&f->pending);
	k32_free(k32_default_allocator(), f, sizeof(*f));
}

static const struct http_stream_ops local_ops = {.pull = local_pull, .close = local_close};

static void follow_local(struct cplane *cp, struct http_response *resp, const char *node,
			 const char *ns, const char *name, int64_t tail, bool ts)
{
	struct local_follow *f = k32_calloc(k32_default_allocator(), sizeof(*f));
	if (!f) {
		cplane_status_fail(resp, 500, "InternalError",
				   "out of memory for the log stream; try again");
		return;
	}
	f->cp = cp;
	snprintf(f->node, sizeof(f->node), "%s", node);
	snprintf(f->ns, sizeof(f->ns), "%s", ns);
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->tail = tail;
	f->ts = ts;
	k32_buf_init(&f->pending, k32_default_allocator(), K32_CPLANE_LOG_PENDING_BYTES,
		     "log stream");
	if (http_response_stream(resp, &local_ops, f, NULL)) {
		k32_buf_fini(&f->pending);
		k32_free(k32_default_allocator(), f, sizeof(*f));
	}
}

/* ---- follow a node in another process: the relay ----------------------------------------------
 */

static k32_status_t remote_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	struct cplane_follow *f = ctx;
	struct cplane *cp = f->cp;
	(void)events;
	k32_status_t st = K32_OK;
	k32_mutex_lock(&cp->mu);
	if (f->pending.len) {
		st = http_stream_write(s, f->pending.data, f->pending.len);
		if (st == K32_ERR_SHOULD_WAIT)
			st = K32_OK; /* called again when the client drained its output */
		else if (!st)
			k32_buf_reset(&f->pending);
	}
	if (!st && !f->pending.len && f->end)
		st = f->end;
	k32_mutex_unlock(&cp->mu);
	return st;
}

static void remote_close(void *ctx, k32_status_t why)
{
	(void)why;
	struct cplane_follow *f = ctx;
	k32_mutex_lock(&f->cp->mu);
	f->closed = true; /* the relay frees the slot */
	k32_plat()->cond_signal(&f->cp->relay_cv);
	k32_mutex_unlock(&f->cp->mu);
}

static const struct http_stream_ops remote_ops = {.pull = remote_pull, .close = remote_close};

/* Frees a slot the stream no longer uses (cp->mu held; the client is closed by the caller). */
static struct http_client *slot_free_locked(struct cplane_follow *f)
{
	struct http_client *c = f->cli;
	k32_buf_fini(&f->pending);
	f->cli = NULL;
	f->used = false;
	f->closed = false;
	f->id = 0;
	return c;
}

/* One poll of slot f (cp->mu NOT held; f->used and not closed when called). */
static void relay_poll(struct cplane *cp, struct cplane_follow *f, struct k32_buf *scratch)
{
	struct k32_err err;
	k32_err_clear(&err);
	k32_buf_reset(scratch);
	k32_status_t st = f->cli ? K32_OK : remote_client(f->ip, f->port, &f->cli, &err);
	uint64_t seq = f->seq;
	if (!st)
		st = remote_logs(cp, f->cli, f->node, f->ns, f->pod, false,
				 f->started ? -1 : f->tail, f->ts, &seq, scratch, &err);
	k32_mutex_lock(&cp->mu);
	if (!st) {
		f->started = true;
		f->seq = seq;
		f->fails = 0;
		if (scratch->len && k32_buf_append(&f->pending, scratch->data, scratch->len, &err))
			f->end = K32_ERR_NO_RESOURCES; /* the client does not read: give up */
	} else if (st == K32_ERR_NOT_FOUND) {
		f->end = K32_ERR_CANCELED; /* the pod left the node: the log ends */
	} else if (++f->fails >= K32_CPLANE_LOG_FOLLOW_FAILS) {
		k32_log(K32_LOG_WARN, CPLANE_MOD,
			"logs -f of %s/%s: node at %s:%u unreachable %d times in a row (%s); "
			"ending the stream",
			f->ns, f->pod, f->ip, (unsigned)f->port, f->fails, err.msg);
		f->end = K32_ERR_IO;
	}
	bool wake = f->pending.len || f->end;
	http_stream_id_t id = f->id;
	k32_mutex_unlock(&cp->mu);
	if (wake)
		http_server_stream_wake(cp->srv, id);
}

static void relay_main(void *arg)
{
	struct cplane *cp = arg;
	const struct k32_platform_ops *pl = k32_plat();
	struct k32_buf scratch;
	k32_buf_init(&scratch, k32_default_allocator(), K32_CPLANE_LOG_PENDING_BYTES, "log relay");
	k32_mutex_lock(&cp->mu);
	while (!cp->relay_stop) {
		bool any = false;
		for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS && !cp->relay_stop; i++) {
			struct cplane_follow *f = &cp->follows[i];
			if (f->used && f->closed) {
				struct http_client *c = slot_free_locked(f);
				k32_mutex_unlock(&cp->mu);
				http_client_free(c);
				k32_mutex_lock(&cp->mu);
				continue;
			}
			if (!f->used || !f->id)
				continue;
			any = true;
			/* a client that has not taken what waits gets nothing more for now */
			if (f->end || f->pending.len >= K32_CPLANE_LOG_PENDING_BYTES / 2)
				continue;
			k32_mutex_unlock(&cp->mu);
			relay_poll(cp, f, &scratch);
			k32_mutex_lock(&cp->mu);
		}
		if (cp->relay_stop)
			break;
		pl->cond_wait(&cp->relay_cv, &cp->mu,
			      any ? (int64_t)k32_now_us() + K32_CPLANE_LOG_FOLLOW_MS * 1000
				  : K32_FOREVER);
	}
	k32_mutex_unlock(&cp->mu);
	k32_buf_fini(&scratch);
}

static void follow_remote(struct cplane *cp, struct http_response *resp, const char *node,
			  const char *ip, uint16_t port, const char *ns, const char *name,
			  int64_t tail, bool ts)
{
	struct k32_err err;
	struct cplane_follow *f = NULL;
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS && !f && !cp->relay_stop; i++)
		if (!cp->follows[i].used)
			f = &cp->follows[i];
	if (f) {
		memset(f, 0, sizeof(*f));
		f->used = true;
		f->cp = cp;
		snprintf(f->node, sizeof(f->node), "%s", node);
		snprintf(f->ip, sizeof(f->ip), "%s", ip);
		f->port = port;
		snprintf(f->ns, sizeof(f->ns), "%s", ns);
		snprintf(f->pod, sizeof(f->pod), "%s", name);
		f->tail = tail;
		f->ts = ts;
		k32_buf_init(&f->pending, k32_default_allocator(), K32_CPLANE_LOG_PENDING_BYTES,
			     "log stream");
	}
	k32_status_t st = K32_OK;
	if (f && !cp->relay)
		st = k32_plat()->task_create(&cp->relay, "cp-logrelay", relay_main, cp,
					     K32_CPLANE_RELAY_STACK_BYTES, -1, &err);
	if (f && st)
		slot_free_locked(f);
	k32_mutex_unlock(&cp->mu);
	if (!f) {
		char m[200];
		snprintf(m, sizeof(m),
			 "more than K32_CPLANE_MAX_REMOTE_FOLLOWS (%d) followed logs of pods on "
			 "other nodes (or the control plane is stopping); stop one or try again "
			 "later",
			 K32_CPLANE_MAX_REMOTE_FOLLOWS);
		cplane_status_fail(resp, 503, "ServiceUnavailable", m);
		return;
	}
	if (st) {
		cplane_status_fail(resp, 500, "InternalError", err.msg);
		return;
	}
	http_stream_id_t id = 0;
	st = http_response_stream(resp, &remote_ops, f, &id);
	k32_mutex_lock(&cp->mu);
	if (st)
		slot_free_locked(f); /* no client yet: nothing to close */
	else
		f->id = id;
	k32_plat()->cond_signal(&cp->relay_cv);
	k32_mutex_unlock(&cp->mu);
}

void cplane_relay_stop(struct cplane *cp)
{
	k32_mutex_lock(&cp->mu);
	cp->relay_stop = true;
	k32_plat()->cond_signal(&cp->relay_cv);
	struct k32_task *t = cp->relay;
	cp->relay = NULL;
	k32_mutex_unlock(&cp->mu);
	if (t)
		k32_plat()->task_join(t);
}

void cplane_relay_free(struct cplane *cp)
{
	/* the HTTP server has stopped: every stream is closed, nothing uses the slots */
	for (size_t i = 0; i < K32_CPLANE_MAX_REMOTE_FOLLOWS; i++)
		if (cp->follows[i].used)
			http_client_free(slot_free_locked(&cp->follows[i]));
}

/* ---- GET .../pods/P/log ------------------------------------------------------------------------
 */

/* A query parameter of req for kmeta_log_opts_parse. */
static bool cplane_query_get(void *ctx, const char *name, char *buf, size_t cap)
{
	const struct http_request *req = ctx;
	return !http_query_get(req->query, name, buf, cap, NULL);
}

void cplane_serve_log(struct cplane *cp, struct http_request *req, struct http_response *resp,
		      const char *ns, const char *name)
{
	char node[128], ip[64];
	uint16_t port = 0;
	if (!pod_node(cp, ns, name, node, sizeof(node), ip, sizeof(ip), &port))
		return; /* the API server's own answer stands */
	/* kmeta's one reader of log options, the kubelet's /containerLogs too */
	struct kmeta_log_opts lo;
	char m[K32_ERR_MSG_LEN];
	if (kmeta_log_opts_parse(cplane_query_get, req, &lo, m, sizeof(m))) {
		cplane_status_fail(resp, 400, "BadRequest", m);
		return;
	}
	int64_t tail = lo.tail_lines, limit = lo.limit_bytes;
	bool prev = lo.previous, ts = lo.timestamps, follow = lo.follow;
	char cutoff[32] = "";
	if (lo.has_since) {
		uint64_t now = k32_plat()->wall_s();
		cplane_fmt_time(now > lo.since_seconds ? now - lo.since_seconds : 0, cutoff,
				sizeof(cutoff));
	}
	bool user_ts = ts;
	if (cutoff[0] && !follow)
		ts = true; /* stamps to filter by; removed again unless asked for */
	struct k32_err err;
	k32_err_clear(&err);
	k32_mutex_lock(&cp->mu);
	struct cplane_node *n = cplane_node_find_locked(cp, node);
	if (follow && !prev) {
		k32_mutex_unlock(&cp->mu);
		if (n)
			follow_local(cp, resp, node, ns, name, tail, ts);
		else if (port)
			follow_remote(cp, resp, node, ip, port, ns, name, tail, ts);
		else
			cplane_status_fail(resp, 502, "BadGateway",
					   "the pod's node publishes no kubelet port "
					   "(status.daemonEndpoints); is its kubelet running?");
		return;
	}
	k32_status_t st;
	if (n) {
		k32_buf_reset(&resp->body);
		st = n->ops->logs(n->node, ns, name, prev, tail, ts, NULL, &resp->body, &err);
		k32_mutex_unlock(&cp->mu);
	} else {
		k32_mutex_unlock(&cp->mu);
		struct http_client *c = NULL;
		st = port
			 ? remote_client(ip, port, &c, &err)
			 : k32_err_set(&err, K32_ERR_NOT_FOUND, CPLANE_MOD,
				       "node %s publishes no kubelet port (status.daemonEndpoints)",
				       node);
		if (!st) {
			k32_buf_reset(&resp->body);
			st = remote_logs(cp, c, node, ns, name, prev, tail, ts, NULL, &resp->body,
					 &err);
		}
		http_client_free(c);
	}
	if (st == K32_ERR_NOT_FOUND && prev)
		cplane_status_fail(resp, 400, "BadRequest", err.msg);
	else if (st)
		cplane_status_fail(resp, 500, "InternalError", err.msg);
	else
		cplane_log_filter(&resp->body, cutoff, user_ts, limit);
}
