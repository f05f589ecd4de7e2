/*
 * api_proxy.c - reaching pods through the API server, and the `kubernetes` Service.
 *
 *   /api/v1/namespaces/NS/pods/NAME/proxy[/PATH]            the pod's HTTP handler
 *   /api/v1/namespaces/NS/services/NAME[:PORT]/proxy[/PATH]  one ready pod of the Service
 *                                                            (round-robin), PORT a port
 *                                                            name or number of the Service
 *                                                            ("http:NAME:PORT" too)
 * are forwarded to the pod's node's pod server (the Node's InternalIP and
 * status.daemonEndpoints.kubeletEndpoint.Port) as METHOD /PATH?QUERY with header
 * X-Kube32-Pod: NS/POD; the pod's status, Content-Type and body come back. The verb checked
 * is the method's (get, create, update, patch, delete) on pods/proxy or services/proxy.
 * Bounds: K32_API_PROXY_PATH_MAX bytes of forwarded target, K32_API_PROXY_BODY_MAX bytes of
 * body each way, K32_SVC_FORWARD_TIMEOUT_MS per forward, K32_API_PROXY_CONCURRENT forwards at
 * once in the process (429 past it: each holds a handler task while the board answers).
 * pods/portforward with a SPDY/3.1 upgrade, or a WebSocket one carrying SPDY (kubectl
 * 1.31+), becomes the tunnel of api_portforward.c; any other is refused naming the pod's
 * real pod server.
 *
 * Creating a Service past K32_SVC_MAX in the cluster is 403 (api_service_room).
 * The `kubernetes` Service (default namespace, no selector, port 443 "https") and its
 * Endpoints (the API server's address and real port) are written when the HTTP server is
 * attached, as kube-apiserver's own; `kubectl cluster-info` lists kube-system's Services
 * labelled kubernetes.io/cluster-service=true.
 */
#include "api/api_srv.h"
#include "http/http.h"
#include "kmeta/kmeta.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"
#include "base/k32_log.h"

/* forwards in flight (process-wide) and the services/proxy round-robin position */
static _Atomic uint32_t api_proxy_inflight;
static _Atomic uint32_t api_proxy_rr;

/* ---- parsing ----------------------------------------------------------------------------- */

/* Whether s[0..n) is a DNS label/subdomain name (what object names hold). */
static bool api_proxy_name_ok(const char *s, size_t n)
{
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

/* Appends the decoded rest of a path to out, percent-encoding what may not stand in a
 * request line; false if it does not fit. */
static bool api_proxy_encode(const char *rest, char *out, size_t cap)
{
	static const char keep[] = "-._~!$&'()*+,;=:@/";
	static const char hex[] = "0123456789ABCDEF";
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)rest; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || strchr(keep, *p);
		size_t need = plain ? 1 : 3;
		if (w + need >= cap)
			return false;
		if (plain) {
			out[w++] = (char)*p;
		} else {
			out[w++] = '%';
			out[w++] = hex[*p >> 4];
			out[w++] = hex[*p & 15];
		}
	}
	out[w] = 0;
	return true;
}

bool api_proxy_parse(const char *path, struct k32_str query, struct api_proxy_target *t,
		     struct api_fail *f)
{
	static const char pre[] = "/api/v1/namespaces/";
	memset(t, 0, sizeof(*t));
	if (strncmp(path, pre, sizeof(pre) - 1))
		return false;
	const char *p = path + sizeof(pre) - 1;
	const char *s1 = strchr(p, '/');
	if (!s1 || !api_proxy_name_ok(p, (size_t)(s1 - p)) || (size_t)(s1 - p) >= sizeof(t->ns))
		return false;
	const char *kind = s1 + 1;
	if (!strncmp(kind, "pods/", 5))
		t->service = false;
	else if (!strncmp(kind, "services/", 9))
		t->service = true;
	else
		return false;
	const char *name = kind + (t->service ? 9 : 5);
	const char *s2 = strchr(name, '/');
	if (!s2)
		return false;
	const char *sub = s2 + 1;
	const char *s3 = strchr(sub, '/');
	size_t sublen = s3 ? (size_t)(s3 - sub) : strlen(sub);
	if (sublen == 11 && !strncmp(sub, "portforward", 11) && !t->service && !s3)
		t->portforward = true;
	else if (sublen != 5 || strncmp(sub, "proxy", 5))
		return false;
	/* from here on it is a proxy request: what is wrong is the client's (400) */
	memcpy(t->ns, p, (size_t)(s1 - p));
	/* NAME, or for services [scheme:]NAME[:PORT] */
	char id[300];
	size_t idlen = (size_t)(s2 - name);
	if (idlen >= sizeof(id)) {
		api_fail_set(f, 400, "BadRequest", "proxy: the name is over %zu bytes",
			     sizeof(id) - 1);
		return true;
	}
	memcpy(id, name, idlen);
	id[idlen] = 0;
	char *parts[3];
	size_t np = 0;
	for (char *q = id, *c; np < 3; q = c + 1) {
		parts[np++] = q;
		c = strchr(q, ':');
		if (!c)
			break;
		*c = 0;
		if (np == 3) {
			api_fail_set(f, 400, "BadRequest",
				     "proxy: \"%.60s\" has too many ':' (use NAME, NAME:PORT or "
				     "SCHEME:NAME:PORT)",
				     name);
			return true;
		}
	}
	const char *nm = parts[0], *port = NULL;
	if (np == 3) {
		if (strcmp(parts[0], "http") && strcmp(parts[0], "")) {
			api_fail_set(
			    f, 400, "BadRequest",
			    "proxy: scheme \"%.20s\" is not supported: a kube32 pod answers "
			    "plain HTTP (use http:NAME:PORT or NAME:PORT)",
			    parts[0]);
			return true;
		}
		nm = parts[1];
		port = parts[2];
	} else if (np == 2) {
		port = parts[1];
	}
	if ((port || np > 1) && !t->service) {
		/* pods/NAME:PORT: the port is accepted and ignored (one handler per pod) */
		if (np == 3)
			nm = parts[1];
	}
	if (!api_proxy_name_ok(nm, strlen(nm)) || strlen(nm) >= sizeof(t->name)) {
		api_fail_set(f, 400, "BadRequest",
			     "proxy: \"%.60s\" is not a valid %s name (lower-case letters, digits, "
			     "'-' and '.', at most 253)",
			     nm, t->service ? "service" : "pod");
		return true;
	}
	memcpy(t->name, nm, strlen(nm) + 1); /* fits: checked above */
	if (port && port[0]) {
		if (strlen(port) >= sizeof(t->port) || !api_proxy_name_ok(port, strlen(port))) {
			api_fail_set(f, 400, "BadRequest",
				     "proxy: port \"%.40s\" is not a port name or number", port);
			return true;
		}
		memcpy(t->port, port, strlen(port) + 1); /* fits: checked above */
	}
	if (t->portforward)
		return true;
	/* the target: /REST?QUERY, encoded again */
	const char *rest = s3 ? s3 : "/";
	if (!api_proxy_encode(rest, t->target, sizeof(t->target))) {
		api_fail_set(f, 414, "RequestURITooLong",
			     "proxy: the path to forward is over %u bytes "
			     "(K32_API_PROXY_PATH_MAX)",
			     (unsigned)K32_API_PROXY_PATH_MAX);
		return true;
	}
	if (query.len) {
		size_t used = strlen(t->target);
		if (used + 1 + query.len >= sizeof(t->target)) {
			api_fail_set(f, 414, "RequestURITooLong",
				     "proxy: the path and query to forward are over %u bytes "
				     "(K32_API_PROXY_PATH_MAX)",
				     (unsigned)K32_API_PROXY_PATH_MAX);
			return true;
		}
		for (size_t i = 0; i < query.len; i++) {
			unsigned char ch = (unsigned char)query.p[i];
			if (ch <= 0x20 || ch >= 0x7f) {
				api_fail_set(f, 400, "BadRequest",
					     "proxy: the query holds a byte 0x%02x that may not "
					     "be forwarded",
					     ch);
				return true;
			}
		}
		t->target[used] = '?';
		memcpy(t->target + used + 1, query.p, query.len);
		t->target[used + 1 + query.len] = 0;
	}
	return true;
}

/* ---- reading the objects ------------------------------------------------------------------ */

static cJSON *api_proxy_get_cap(struct api_server *api, const char *target, size_t cap, int *code)
{
	struct k32_buf b;
	struct k32_err err;
	cJSON *j = NULL;
	k32_buf_init(&b, k32_default_allocator(), cap, "proxy lookup");
	*code = 0;
	if (!api_do(api, "GET", target, NULL, NULL, 0, code, &b, &err) && *code == 200 &&
	    k32_json_parse((const char *)b.data, b.len, &j, NULL))
		j = NULL;
	k32_buf_fini(&b);
	return j;
}

static cJSON *api_proxy_get(struct api_server *api, const char *target, int *code)
{
	return api_proxy_get_cap(api, target, K32_API_PROXY_BODY_MAX * 4, code);
}

/* The pod server of the node a pod runs on; false answers f. */
static bool api_proxy_pod_server(struct api_server *api, const char *ns, const char *name,
				 char *node, size_t ncap, char *ip, size_t ipcap, uint16_t *port,
				 struct api_fail *f)
{
	char target[400];
	int code;
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
	cJSON *pod = api_proxy_get(api, target, &code);
	if (!pod) {
		api_fail_set(f, code == 404 ? 404 : 500, code == 404 ? "NotFound" : "InternalError",
			     "pods \"%s\" not found", name);
		snprintf(f->kind, sizeof(f->kind), "pods");
		return false;
	}
	const char *nn = cJSON_GetStringValue(k32_json_find(pod, "spec.nodeName"));
	if (!nn || !nn[0]) {
		cJSON_Delete(pod);
		api_fail_set(f, 503, "ServiceUnavailable",
			     "pod %s/%s is not scheduled to a node yet; retry when it runs", ns,
			     name);
		return false;
	}
	snprintf(node, ncap, "%s", nn);
	cJSON_Delete(pod);
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", node);
	cJSON *no = api_proxy_get(api, target, &code);
	*port = 0;
	if (no)
		kmeta_node_pod_server(no, ip, ipcap, port);
	cJSON_Delete(no);
	if (!*port) {
		api_fail_set(
		    f, 503, "ServiceUnavailable",
		    "node %s of pod %s/%s publishes no pod server "
		    "(status.daemonEndpoints.kubeletEndpoint.Port): it runs without one or "
		    "has not registered",
		    K32_CLIP(node), ns, K32_CLIP(name));
		return false;
	}
	return true;
}

/* Picks a ready endpoint of Service ns/name (port: "" or a port name or number it has). */
static bool api_proxy_service_endpoint(struct api_server *api, const struct api_proxy_target *t,
				       struct kmeta_endpoint *ep, struct api_fail *f)
{
	char target[400];
	int code;
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/services/%s", t->ns, t->name);
	cJSON *svc = api_proxy_get(api, target, &code);
	if (!svc) {
		api_fail_set(f, code == 404 ? 404 : 500, code == 404 ? "NotFound" : "InternalError",
			     "services \"%s\" not found", t->name);
		snprintf(f->kind, sizeof(f->kind), "services");
		return false;
	}
	bool port_ok = !t->port[0];
	const cJSON *p;
	cJSON_ArrayForEach(p, k32_json_find(svc, "spec.ports"))
	{
		const char *pn = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
		const cJSON *num = cJSON_GetObjectItem(p, "port");
		char nbuf[16];
		snprintf(nbuf, sizeof(nbuf), "%d", cJSON_IsNumber(num) ? num->valueint : -1);
		if (t->port[0] && ((pn && !strcmp(pn, t->port)) || !strcmp(nbuf, t->port)))
			port_ok = true;
	}
	cJSON_Delete(svc);
	if (!port_ok) {
		api_fail_set(f, 503, "ServiceUnavailable",
			     "no endpoints available for service \"%s\": it has no port \"%s\"",
			     t->name, t->port);
		return false;
	}
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/endpoints/%s", t->ns, t->name);
	cJSON *eps = api_proxy_get(api, target, &code);
	uint32_t n = eps ? kmeta_endpoints_pick(eps, atomic_fetch_add(&api_proxy_rr, 1), ep) : 0;
	cJSON_Delete(eps);
	if (!n) {
		api_fail_set(f, 503, "ServiceUnavailable",
			     "no endpoints available for service \"%s\" (no ready pod matches its "
			     "selector; see kubectl get endpoints %s -n %s)",
			     t->name, t->name, t->ns);
		return false;
	}
	return true;
}

/* ---- forwarding ----------------------------------------------------------------------------- */

k32_status_t api_pod_forward(const char *ns, const char *pod, const char *ip, uint16_t port,
			     const struct api_pod_request *prq, int *status, char *rct, size_t rcap,
			     struct k32_buf *answer, struct k32_err *err)
{
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.host = ip;
	cc.port = port;
	cc.timeout_us = (int64_t)K32_SVC_FORWARD_TIMEOUT_MS * 1000;
	cc.max_response_bytes = K32_API_PROXY_BODY_MAX;
	struct http_client *c = NULL;
	char hdr[400];
	snprintf(hdr, sizeof(hdr), "X-Kube32-Pod: %.63s/%.253s\r\n", ns, pod);
	struct http_client_request req = {.method = prq->method,
					  .target = prq->target,
					  .content_type =
					      prq->ctype && prq->ctype[0] ? prq->ctype : NULL,
					  .headers = hdr,
					  .body = prq->body,
					  .body_len = prq->body_len};
	struct http_client_response r;
	memset(&r, 0, sizeof(r));
	*status = 0;
	k32_status_t st = http_client_new(&cc, &c, err);
	if (!st)
		st = http_client_do(c, &req, &r, err);
	if (!st) {
		struct k32_str v;
		if (http_client_response_header(&r, "Content-Type", &v))
			k32_str_copy(v, rct, rcap);
		st = k32_buf_append(answer, r.body.data, r.body.len, err);
		*status = r.status >= 100 && r.status <= 599 ? r.status : 502;
	}
	http_client_response_fini(&r);
	http_client_free(c);
	return st;
}

/* Sends the request to ip:port for pod ns/pod and answers out with what the pod said. */
static void api_proxy_forward(const struct api_req *rq, struct api_out *out, const char *ns,
			      const char *pod, const char *node, const char *ip, uint16_t port,
			      const char *target)
{
	struct api_fail f;
	api_fail_clear(&f);
	struct k32_err err;
	k32_err_clear(&err);
	const struct api_pod_request prq = {.method = rq->method,
					    .target = target,
					    .ctype = rq->ctype,
					    .body = rq->body,
					    .body_len = rq->body_len};
	char ctype[sizeof(out->ctype)] = "text/plain; charset=utf-8";
	struct k32_buf answer;
	k32_buf_init(&answer, k32_default_allocator(), K32_API_PROXY_BODY_MAX, "proxy answer");
	int status = 0;
	k32_status_t st =
	    api_pod_forward(ns, pod, ip, port, &prq, &status, ctype, sizeof(ctype), &answer, &err);
	if (st) {
		api_fail_set(&f, st == K32_ERR_TIMED_OUT ? 504 : 503,
			     st == K32_ERR_TIMED_OUT ? "Timeout" : "ServiceUnavailable",
			     "error trying to reach the pod at node %s's pod server http://%s:%u "
			     "(header X-Kube32-Pod: %s/%s): %s",
			     K32_CLIP(node), ip, (unsigned)port, ns, K32_CLIP(pod),
			     k32_clip_to((char[K32_API_PROXY_ERR_CLIP + 1]){0},
					 K32_API_PROXY_ERR_CLIP + 1, err.msg));
		api_out_fail(out, &f);
	} else {
		api_out_text(out, status, ctype, answer.data ? (const char *)answer.data : "",
			     answer.len);
		if (rq->http) { /* who answered, as the pod servers' Service routing says it */
			char v[600];
			snprintf(v, sizeof(v), "%.63s/%.253s@%.253s", ns, pod, node);
			http_response_header(rq->http, "X-Kube32-Endpoint", v);
		}
	}
	k32_buf_fini(&answer);
}

static const char *api_proxy_verb(const char *method)
{
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "OPTIONS"))
		return "get";
	if (!strcmp(method, "POST"))
		return "create";
	if (!strcmp(method, "PUT"))
		return "update";
	if (!strcmp(method, "PATCH"))
		return "patch";
	if (!strcmp(method, "DELETE"))
		return "delete";
	return NULL;
}

bool api_proxy_route(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_proxy_target t;
	struct api_fail *f = &rq->fail;
	api_fail_clear(f);
	if (!api_proxy_parse(rq->path, rq->query, &t, f)) {
		api_fail_clear(f); /* not a proxy path: the request's failure stays clear */
		return false;
	}
	if (f->code) {
		api_out_fail(out, f);
		return true;
	}
	const struct api_resource *res =
	    api_registry_find("", "v1", t.service ? "services" : "pods");
	const char *verb = api_proxy_verb(rq->method);
	char why[320];
	if (!verb) {
		api_fail_set(f, 405, "MethodNotAllowed", "proxy: method %s is not supported",
			     rq->method);
		api_out_fail(out, f);
		return true;
	}
	if (t.portforward)
		verb = "create";
	if (!api_authorize(rq->who, verb, res, t.portforward ? "portforward" : "proxy", t.ns,
			   t.name, NULL, why, sizeof(why))) {
		api_fail_set(f, 403, "Forbidden", "%s", why);
		api_out_fail(out, f);
		return true;
	}
	if (rq->body_len > K32_API_PROXY_BODY_MAX) {
		api_fail_set(f, 413, "RequestEntityTooLarge",
			     "proxy: the request body is %zu bytes, over %u "
			     "(K32_API_PROXY_BODY_MAX)",
			     rq->body_len, (unsigned)K32_API_PROXY_BODY_MAX);
		api_out_fail(out, f);
		return true;
	}
	char node[254], ip[KMETA_HOST_LEN];
	uint16_t port = 0;
	const char *pod = t.name;
	struct kmeta_endpoint ep;
	if (t.service) {
		if (!api_proxy_service_endpoint(api, &t, &ep, f)) {
			api_out_fail(out, f);
			return true;
		}
		pod = ep.pod;
		snprintf(node, sizeof(node), "%s", ep.node);
		snprintf(ip, sizeof(ip), "%s", ep.ip);
		port = ep.port;
	} else if (!api_proxy_pod_server(api, t.ns, t.name, node, sizeof(node), ip, sizeof(ip),
					 &port, f)) {
		api_out_fail(out, f);
		return true;
	}
	if (t.portforward && api_portforward_start(rq, out, t.ns, t.name, node, ip, port))
		return true;
	if (t.portforward) {
		api_fail_set(
		    f, 400, "BadRequest",
		    "pods/portforward: kube32 tunnels SPDY/3.1 (plain or in WebSocket, "
		    "subprotocol " API_PF_WS_PROTOCOL "), not \"%s\"; the pod answers HTTP at its "
		    "node's pod server http://%s:%u with header X-Kube32-Pod: %s/%s, and at "
		    "pods/<name>/proxy (kubectl get --raw)",
		    K32_CLIP(rq->upgrade[0] ? rq->upgrade : "no upgrade"), ip, (unsigned)port, t.ns,
		    K32_CLIP(t.name));
		api_out_fail(out, f);
		return true;
	}
	if (atomic_fetch_add(&api_proxy_inflight, 1) >= K32_API_PROXY_CONCURRENT) {
		atomic_fetch_sub(&api_proxy_inflight, 1);
		api_fail_set(f, 429, "TooManyRequests",
			     "proxy: %u requests are being forwarded already "
			     "(K32_API_PROXY_CONCURRENT); retry shortly",
			     (unsigned)K32_API_PROXY_CONCURRENT);
		api_out_fail(out, f);
		return true;
	}
	api_proxy_forward(rq, out, t.ns, pod, node, ip, port, t.target);
	atomic_fetch_sub(&api_proxy_inflight, 1);
	return true;
}

/* ---- the kubernetes Service, the Service limit ---------------------------------------------- */

k32_status_t api_service_room(struct api_server *api, const struct api_resource *res,
			      struct api_fail *f)
{
	if (res->group[0] || strcmp(res->plural, "services"))
		return K32_OK;
	char target[64];
	int code = 0;
	snprintf(target, sizeof(target), "/api/v1/services?limit=%u", (unsigned)K32_SVC_MAX);
	/* room for the whole page (a Service is well under 4 KiB) */
	cJSON *l = api_proxy_get_cap(api, target, (size_t)K32_SVC_MAX * 4096, &code);
	int n = l ? cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")) : 0;
	cJSON_Delete(l);
	if (n < K32_SVC_MAX)
		return K32_OK;
	return api_fail_set(f, 403, "Forbidden",
			    "services: the cluster has %d Services, the most kube32 routes "
			    "(K32_SVC_MAX = %u); delete one first",
			    n, (unsigned)K32_SVC_MAX);
}

/* ---- the kubernetes Service ---------------------------------------------------------------- */

static void api_proxy_put(struct api_server *api, const char *coll, const char *name,
			  const char *body)
{
	struct k32_buf b;
	struct k32_err err;
	int code = 0;
	char target[160];
	k32_buf_init(&b, k32_default_allocator(), 64 * 1024, "bootstrap response");
	snprintf(target, sizeof(target), "%s/%s", coll, name);
	if (!api_do(api, "GET", target, NULL, NULL, 0, &code, &b, &err) && code == 200) {
		/* replace it (the port may have changed since the last start) */
		k32_buf_reset(&b);
		api_do(api, "DELETE", target, NULL, NULL, 0, &code, &b, &err);
	}
	k32_buf_reset(&b);
	if (api_do(api, "POST", coll, "application/json", body, strlen(body), &code, &b, &err) ||
	    (code != 201 && code != 409))
		K32_LOGW("api", "writing %s/%s at start: HTTP %d: %.120s", coll, name, code,
			 k32_buf_cstr(&b));
	k32_buf_fini(&b);
}

void api_service_bootstrap(struct api_server *api, uint16_t port)
{
	char host[64];
	snprintf(host, sizeof(host), "%s", api->server_addr);
	char *colon = strrchr(host, ':');
	if (colon)
		*colon = 0;
	if (!kmeta_host_ok(host) || !strcmp(host, "0.0.0.0"))
		snprintf(host, sizeof(host), "127.0.0.1");
	char body[700];
	snprintf(
	    body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"kubernetes\","
	    "\"namespace\":\"default\",\"labels\":{\"component\":\"apiserver\",\"provider\":"
	    "\"kubernetes\"}},\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443,"
	    "\"protocol\":\"TCP\",\"targetPort\":%u}]}}",
	    (unsigned)port);
	api_proxy_put(api, "/api/v1/namespaces/default/services", "kubernetes", body);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":"
		 "\"kubernetes\",\"namespace\":\"default\",\"labels\":{"
		 "\"endpointslice.kubernetes.io/skip-mirror\":\"true\"}},\"subsets\":[{"
		 "\"addresses\":[{\"ip\":\"%s\"}],\"ports\":[{\"name\":\"https\",\"port\":%u,"
		 "\"protocol\":\"TCP\"}]}]}",
		 host, (unsigned)port);
	api_proxy_put(api, "/api/v1/namespaces/default/endpoints", "kubernetes", body);
}
