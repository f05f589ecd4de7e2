/*
 * klet_svc.c - Service routing on the node's pod server: a request with header
 * `X-Kube32-Service: <namespace>/<name>` goes to one ready pod of that Service, round-robin
 * over the Service's Endpoints (written by the endpoints controller, src/ctrl/ctrl_endpoints.c:
 * every endpoint is the pod plus its node's pod server). A pod on this node is served here
 * (as X-Kube32-Pod would be); a pod elsewhere is forwarded to its node's pod server with
 * X-Kube32-Pod: <namespace>/<pod>, which that server answers itself and never forwards
 * again, so a request crosses at most one hop (a Service request that arrives with
 * X-Kube32-Forwarded-By is refused with 508 as well). A node that cannot be reached within
 * K32_SVC_FORWARD_TIMEOUT_MS is skipped for the next endpoint, K32_SVC_FORWARD_TRIES in all.
 *
 *   503  the Service has no ready endpoint (or every one tried failed to connect)
 *   504  the node forwarded to did not answer in time
 *   404  no such Service (or a malformed header value)
 *   508  a loop (a forwarded request asked for a Service again)
 * Anything else is the pod's own answer (or pod_request's, klet_http.c), with header
 * X-Kube32-Endpoint: <namespace>/<pod>@<node> naming who answered.
 *
 * The Endpoints are read from the API server with the node's credentials and kept
 * K32_KLET_SVC_CACHE_MS for at most K32_KLET_SVC_CACHE Services (least recently read
 * replaced). Runs on the pod server's task(s); the cache is under svc->mu, which is never
 * held across a forward or a pod call. A forward holds the pod server's task for up to the
 * timeout (the pod server has no handler tasks by default).
 */
#include <stdio.h>
#include <string.h>

#include "kmeta/kmeta.h"
#include "kubelet/klet_int.h"

#define KLET_SVC_VIA "X-Kube32-Forwarded-By"

struct klet_svc_entry {
	char ns[64];
	char name[64];
	uint64_t read_us; /* when eps was read; 0: free */
	uint32_t rr;	  /* the next endpoint's index */
	cJSON *eps;	  /* the Endpoints (NULL: none, the Service has no endpoints object) */
};

struct klet_svc {
	struct k32_mutex mu;
	struct kclient *api; /* the pod server's API client (made on first use) */
	struct k32_buf b;
	struct klet_svc_entry e[K32_KLET_SVC_CACHE];
};

static void text(struct http_response *resp, int status, const char *msg)
{
	http_response_set(resp, status, "text/plain; charset=utf-8", msg, strlen(msg));
	http_response_header(resp, "X-Content-Type-Options", "nosniff");
}

k32_status_t klet_svc_init(struct klet *k, struct k32_err *err)
{
	struct klet_svc *s = k32_calloc(k->alloc, sizeof(*s));
	if (!s)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD,
				   "node %s: out of memory for the Service routing table (%zu "
				   "bytes)",
				   k->node, sizeof(*s));
	k32_plat()->mutex_init(&s->mu);
	k32_buf_init(&s->b, k->alloc, K32_HTTP_MAX_RESPONSE_BYTES, "Endpoints");
	k->svc = s;
	return K32_OK;
}

void klet_svc_fini(struct klet *k)
{
	struct klet_svc *s = k->svc;
	if (!s)
		return;
	for (size_t i = 0; i < K32_KLET_SVC_CACHE; i++)
		cJSON_Delete(s->e[i].eps);
	kclient_free(s->api);
	k32_buf_fini(&s->b);
	k32_plat()->mutex_fini(&s->mu);
	k32_free(k->alloc, s, sizeof(*s));
	k->svc = NULL;
}

uint32_t klet_svc_api_failures(struct klet *k)
{
	struct klet_svc *s = k->svc;
	if (!s)
		return 0;
	k32_mutex_lock(&s->mu);
	uint32_t n = kclient_failures(s->api);
	k32_mutex_unlock(&s->mu);
	return n;
}

/* The cache entry of ns/name, read again when older than K32_KLET_SVC_CACHE_MS (mu held).
 * NULL with msg set when the API cannot be asked. */
static struct klet_svc_entry *svc_entry(struct klet *k, struct klet_svc *s, const char *ns,
					const char *name, char *msg, size_t cap)
{
	uint64_t now = k32_now_us();
	struct klet_svc_entry *e = NULL, *oldest = &s->e[0];
	for (size_t i = 0; i < K32_KLET_SVC_CACHE; i++) {
		struct klet_svc_entry *x = &s->e[i];
		if (x->read_us && !strcmp(x->ns, ns) && !strcmp(x->name, name))
			e = x;
		if (x->read_us < oldest->read_us)
			oldest = x;
	}
	if (e && now - e->read_us < (uint64_t)K32_KLET_SVC_CACHE_MS * 1000)
		return e;
	struct k32_err err;
	k32_err_clear(&err);
	if (!s->api) {
		/* its own connection: a Service lookup does not wait behind the worker's
		 * requests, and gives up within the forward timeout */
		if (klet_kclient_new(k, (int64_t)K32_SVC_FORWARD_TIMEOUT_MS * 1000, &s->api,
				     &err)) {
			klet_msgf(msg, cap,
				  "node %s cannot ask the API server for Service %s/%s: %s\n",
				  k->node, ns, name, err.msg);
			return NULL;
		}
	}
	char target[200];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/endpoints/%s", ns, name);
	int code = 0;
	if (kclient_call(s->api, "GET", target, NULL, NULL, &code, &s->b, &err) ||
	    (code != 200 && code != 404)) {
		klet_msgf(msg, cap, "node %s could not read the endpoints of Service %s/%s: %s\n",
			  k->node, ns, name, code ? "the API server refused" : err.msg);
		return NULL;
	}
	if (!e) {
		e = oldest;
		cJSON_Delete(e->eps);
		memset(e, 0, sizeof(*e));
		snprintf(e->ns, sizeof(e->ns), "%s", ns);
		snprintf(e->name, sizeof(e->name), "%s", name);
	}
	cJSON_Delete(e->eps);
	e->eps = NULL;
	if (code == 200 && k32_json_parse((const char *)s->b.data, s->b.len, &e->eps, NULL))
		e->eps = NULL;
	e->read_us = now ? now : 1;
	return e;
}

/* Picks the next endpoint of ns/name; its count (0: none), or -1 with msg set. */
static int svc_pick(struct klet *k, const char *ns, const char *name, struct kmeta_endpoint *ep,
		    char *msg, size_t cap)
{
	struct klet_svc *s = k->svc;
	k32_mutex_lock(&s->mu);
	struct klet_svc_entry *e = svc_entry(k, s, ns, name, msg, cap);
	int n = -1;
	if (e)
		n = (int)kmeta_endpoints_pick(e->eps, e->rr++, ep);
	k32_mutex_unlock(&s->mu);
	return n;
}

/* Names the pod that answered (and its node) in the answer: X-Kube32-Endpoint: ns/pod@node. */
static void svc_endpoint_header(struct http_response *resp, const char *ns,
				const struct kmeta_endpoint *ep)
{
	char v[600];
	klet_msgf(v, sizeof(v), "%s/%s@%s", ns, ep->pod, ep->node);
	http_response_header(resp, "X-Kube32-Endpoint", v);
}

/* Forwards req to ep's node; false (msg set) when the node could not be reached. */
static bool svc_forward(struct klet *k, const char *ns, const struct kmeta_endpoint *ep,
			struct http_request *req, struct http_response *resp, char *msg, size_t cap,
			bool *timed_out)
{
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.host = ep->ip;
	cc.port = ep->port;
	cc.timeout_us = (int64_t)K32_SVC_FORWARD_TIMEOUT_MS * 1000;
	cc.max_response_bytes = K32_KLET_POD_HTTP_BODY_MAX;
	cc.alloc = k->alloc;
	struct http_client *c = NULL;
	struct k32_err err;
	k32_err_clear(&err);
	char hdr[512], target[K32_API_PROXY_PATH_MAX + 1], ctype[96] = "";
	snprintf(hdr, sizeof(hdr), "X-Kube32-Pod: %.63s/%.253s\r\n" KLET_SVC_VIA ": %.80s\r\n", ns,
		 ep->pod, k->node);
	struct k32_str ct;
	if (http_request_header(req, "Content-Type", &ct))
		k32_str_copy(ct, ctype, sizeof(ctype));
	if (!k32_str_copy(req->target, target, sizeof(target))) {
		klet_msgf(msg, cap,
			  "the request target is over %u bytes (K32_API_PROXY_PATH_MAX)\n",
			  (unsigned)K32_API_PROXY_PATH_MAX);
		*timed_out = false;
		return false;
	}
	struct http_client_request rq = {.method = req->method,
					 .target = target,
					 .content_type = ctype[0] ? ctype : NULL,
					 .headers = hdr,
					 .body = req->body,
					 .body_len = req->body_len};
	struct http_client_response r;
	memset(&r, 0, sizeof(r));
	k32_status_t st = http_client_new(&cc, &c, &err);
	if (!st)
		st = http_client_do(c, &rq, &r, &err);
	if (!st) {
		char rct[96] = "text/plain; charset=utf-8";
		if (http_client_response_header(&r, "Content-Type", &ct))
			k32_str_copy(ct, rct, sizeof(rct));
		http_response_set(resp, r.status >= 100 && r.status <= 599 ? r.status : 502, rct,
				  r.body.data ? (const char *)r.body.data : "", r.body.len);
		svc_endpoint_header(resp, ns, ep);
	} else {
		*timed_out = st == K32_ERR_TIMED_OUT;
		klet_msgf(msg, cap,
			  "node %s could not reach pod %s/%s at node %s's pod server http://%s:%u: "
			  "%s\n",
			  k->node, ns, ep->pod, ep->node, ep->ip, (unsigned)ep->port, err.msg);
	}
	http_client_response_fini(&r);
	http_client_free(c);
	return !st;
}

void klet_svc_request(struct klet *k, struct k32_str hv, struct http_request *req,
		      struct http_response *resp)
{
	char ns[64], name[64], m[KLET_MSG_LEN + 200];
	struct k32_str a, b, via;
	if (!k32_str_cut(hv, '/', &a, &b) || !a.len || !b.len || !k32_str_copy(a, ns, sizeof(ns)) ||
	    !k32_str_copy(b, name, sizeof(name)) || !kmeta_host_ok(ns) || !kmeta_host_ok(name)) {
		text(resp, 404, "X-Kube32-Service must be <namespace>/<name>\n");
		return;
	}
	if (http_request_header(req, KLET_SVC_VIA, &via)) {
		klet_msgf(
		    m, sizeof(m),
		    "Service %s/%s: a request forwarded by node %.*s asks for a Service again "
		    "(loop refused)\n",
		    ns, name, (int)(via.len > 64 ? 64 : via.len), via.p);
		text(resp, 508, m);
		return;
	}
	if (!k->svc) {
		text(resp, 503, "this pod server routes no Services (out of memory at start)\n");
		return;
	}
	struct kmeta_endpoint ep;
	bool timed_out = false;
	for (int tries = 0; tries < K32_SVC_FORWARD_TRIES; tries++) {
		int n = svc_pick(k, ns, name, &ep, m, sizeof(m));
		if (n < 0) {
			text(resp, 503, m);
			return;
		}
		if (n == 0) {
			klet_msgf(m, sizeof(m),
				  "Service %s/%s has no ready endpoints (no ready pod matches its "
				  "selector, or no such Service; kubectl get endpoints %s -n %s)\n",
				  ns, name, name, ns);
			text(resp, 503, m);
			return;
		}
		if (!strcmp(ep.node, k->node)) {
			char pv[320];
			snprintf(pv, sizeof(pv), "%s/%s", ns, ep.pod);
			klet_http_pod_request(k, k32_str_from(pv), req, resp);
			svc_endpoint_header(resp, ns, &ep);
			return;
		}
		if (svc_forward(k, ns, &ep, req, resp, m, sizeof(m), &timed_out))
			return;
		if (tries + 1 >= n)
			break; /* every endpoint was tried */
	}
	text(resp, timed_out ? 504 : 503, m);
}
