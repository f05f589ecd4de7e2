/*
 * sim.c - board profiles, the in-process control plane with its pods/log proxy, simulated
 * boards, and the kubeconfig writer. See sim.h.
 *
 * The control plane's HTTP handler is the API server's, wrapped: only GET .../pods/P/log
 * is touched (after the API server has authorised and answered it). The table of local
 * kubelets is guarded by cp->mu; a log stream names its kubelet by node name and looks it
 * up on every pull, so a board that stops ends its streams instead of leaving a dangling
 * pointer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#include "base/k32_json.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "platform/k32_platform.h"
#include "store/store.h"
#ifdef SIM_HAVE_CTRL
#include "ctrl/ctrl.h"
#endif

#define SIM_MOD "sim"
/* How often a followed log (kubectl logs -f) looks for new lines. */
#define SIM_LOG_FOLLOW_US 250000
/* Timeout of the log proxy's request to a board in another process. */
#define SIM_LOG_REMOTE_TIMEOUT_US 2000000

/* ---- profiles ------------------------------------------------------------------------------ */

static struct klet_profile profiles[] = {
    /* the control-plane board: a pod pool carved from its 2 MB PSRAM */
    {.name = "devkit",
     .pod_pool_bytes = 1024 * 1024,
     .interp_stack = 32 * 1024,
     .max_pods = 16,
     .hardware = ""},
    /* the worker: 80 KiB pod pool reserved at boot, 28 KiB interpreter stack, 3 I2C devices */
    {.name = "cardputer",
     .pod_pool_bytes = 80 * 1024,
     .interp_stack = 28 * 1024,
     .max_pods = 8,
     .hardware = "i2c:bme688,i2c:miniscale,i2c:rfid"},
    /* development: configurable */
    {.name = "host",
     .pod_pool_bytes = 4 * 1024 * 1024,
     .interp_stack = 64 * 1024,
     .max_pods = 32,
     .hardware = ""},
};

const struct klet_profile *sim_profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

void sim_profile_set_host(size_t pool, size_t stack)
{
	if (pool)
		profiles[2].pod_pool_bytes = pool;
	if (stack)
		profiles[2].interp_stack = stack;
}

/* ---- kubeconfig ------------------------------------------------------------------------------ */

static void b64(const uint8_t *in, size_t len, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < len ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? t[v & 63] : '=';
	}
	out[o] = 0;
}

k32_status_t sim_write_kubeconfig(const char *path, const char *scheme, const char *host,
				  uint16_t port, const char *ca_file, const char *token,
				  struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	const struct k32_allocator *a = k32_default_allocator();
	uint8_t *ca = NULL;
	size_t ca_len = 0;
	char *ca64 = NULL;
	size_t ca64_len = 0;
	k32_status_t st;
	if (ca_file) {
		st = pl->file_read_all(ca_file, a, 64 * 1024, &ca, &ca_len, err);
		if (st)
			return st;
		ca64_len = (ca_len + 2) / 3 * 4 + 1;
		ca64 = k32_alloc(a, ca64_len);
		if (!ca64) {
			k32_free(a, ca, ca_len + 1);
			return k32_err_set(err, K32_ERR_NO_MEMORY, SIM_MOD, "out of memory");
		}
		b64(ca, ca_len, ca64);
		k32_free(a, ca, ca_len + 1);
	}
	struct k32_buf b;
	k32_buf_init(&b, a, 256 * 1024, "kubeconfig");
	st = k32_buf_printf(&b, err,
			    "apiVersion: v1\nkind: Config\nclusters:\n- name: kube32\n  cluster:\n"
			    "    server: %s://%s:%u\n",
			    scheme, host, (unsigned)port);
	if (!st && ca64)
		st = k32_buf_printf(&b, err, "    certificate-authority-data: %s\n", ca64);
	if (!st)
		st = k32_buf_printf(
		    &b, err,
		    "users:\n- name: admin\n  user:\n    token: %s\ncontexts:\n"
		    "- name: kube32\n  context:\n    cluster: kube32\n    user: admin\n"
		    "    namespace: default\ncurrent-context: kube32\n",
		    token);
	if (!st)
		st = pl->file_write_atomic(path, b.data, b.len, err);
	k32_buf_fini(&b);
	if (ca64)
		k32_free(a, ca64, ca64_len);
	return st;
}

/* ---- control plane --------------------------------------------------------------------------- */

struct sim_cp {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	bool tls;
#ifdef SIM_HAVE_CTRL
	struct ctrl *ctrl;
#endif
	struct k32_mutex mu;			  /* guards klets */
	struct klet *klets[SIM_MAX_LOCAL_BOARDS]; /* boards of this process */
};

/* A followed log. */
struct logf {
	struct sim_cp *cp;
	char node[128];
	char ns[64];
	char name[128];
	uint64_t seq;
	int64_t tail; /* first pull only */
	bool ts;
	bool started;
	struct k32_buf pending; /* lines not yet accepted by the stream */
};

static struct klet *klet_find_locked(struct sim_cp *cp, const char *node)
{
	for (size_t i = 0; i < SIM_MAX_LOCAL_BOARDS; i++)
		if (cp->klets[i] && !strcmp(klet_node_name(cp->klets[i]), node))
			return cp->klets[i];
	return NULL;
}

static void status_fail(struct http_response *resp, int code, const char *reason, const char *msg)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "kind", "Status");
	cJSON_AddStringToObject(s, "apiVersion", "v1");
	cJSON_AddObjectToObject(s, "metadata");
	cJSON_AddStringToObject(s, "status", "Failure");
	cJSON_AddStringToObject(s, "message", msg);
	cJSON_AddStringToObject(s, "reason", reason);
	cJSON_AddNumberToObject(s, "code", code);
	char *t = cJSON_PrintUnformatted(s);
	cJSON_Delete(s);
	k32_buf_reset(&resp->headers);
	k32_buf_reset(&resp->body);
	http_response_set(resp, code, "application/json", t ? t : "{}", t ? strlen(t) : 2);
	cJSON_free(t);
}

static k32_status_t logf_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	struct logf *f = ctx;
	(void)events;
	if (!f->pending.len) {
		struct k32_err err;
		k32_mutex_lock(&f->cp->mu);
		struct klet *k = klet_find_locked(f->cp, f->node);
		k32_status_t st =
		    k ? klet_pod_logs(k, f->ns, f->name, false, f->started ? -1 : f->tail, f->ts,
				      &f->seq, &f->pending, &err)
		      : K32_ERR_NOT_FOUND;
		k32_mutex_unlock(&f->cp->mu);
		f->started = true;
		if (st == K32_ERR_NOT_FOUND)
			return K32_ERR_CANCELED; /* the pod or its board is gone: end the log */
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
	http_stream_set_timer(s, (int64_t)k32_now_us() + SIM_LOG_FOLLOW_US);
	return K32_OK;
}

static void logf_close(void *ctx, k32_status_t why)
{
	(void)why;
	struct logf *f = ctx;
	k32_buf_fini(&f->pending);
	k32_free(k32_default_allocator(), f, sizeof(*f));
}

static const struct http_stream_ops logf_ops = {.pull = logf_pull, .close = logf_close};

/* Reads the pod's node, then its address and pod-server port. */
static bool pod_node(struct sim_cp *cp, const char *ns, const char *name, char *node, size_t ncap,
		     char *ip, size_t ipcap, uint16_t *port)
{
	struct k32_buf b;
	struct k32_err err;
	int code = 0;
	char target[400];
	bool ok = false;
	cJSON *j = NULL;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "pod");
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
	if (api_do(cp->api, "GET", target, NULL, NULL, 0, &code, &b, &err) || code != 200 ||
	    k32_json_parse((const char *)b.data, b.len, &j, NULL))
		goto out;
	const cJSON *p = k32_json_find(j, "status.daemonEndpoints.kubeletEndpoint.Port");
	*port = cJSON_IsNumber(p) ? (uint16_t)p->valuedouble : 0;
	snprintf(ip, ipcap, "127.0.0.1");
	const cJSON *a;
	cJSON_ArrayForEach(a, k32_json_find(j, "status.addresses"))
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(a, "type"));
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(a, "address"));
		if (t && v && !strcmp(t, "InternalIP"))
			snprintf(ip, ipcap, "%s", v);
	}
	ok = true;
out:
	cJSON_Delete(j);
	k32_buf_fini(&b);
	return ok;
}

/*
 * sinceSeconds and limitBytes of pods/log, applied to a fetched log: lines were fetched with
 * their RFC 3339 stamps when cutoff is set (they sort as text); lines older than cutoff are
 * dropped and the stamps removed again unless keep_ts; then the result is cut at limit bytes (< 0:
 * no limit).
 */
static void log_filter(struct k32_buf *body, const char *cutoff, bool keep_ts, int64_t limit)
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

/* The body of pods/log from the board that runs the pod. */
static void serve_log(struct sim_cp *cp, struct http_request *req, struct http_response *resp,
		      const char *ns, const char *name)
{
	char node[128], ip[64], v[32];
	uint16_t port = 0;
	if (!pod_node(cp, ns, name, node, sizeof(node), ip, sizeof(ip), &port))
		return; /* the API server's own answer stands */
	int64_t tail = -1;
	if (!http_query_get(req->query, "tailLines", v, sizeof(v), NULL))
		tail = strtoll(v, NULL, 10);
	bool prev =
	    !http_query_get(req->query, "previous", v, sizeof(v), NULL) && !strcmp(v, "true");
	bool ts =
	    !http_query_get(req->query, "timestamps", v, sizeof(v), NULL) && !strcmp(v, "true");
	bool follow =
	    !http_query_get(req->query, "follow", v, sizeof(v), NULL) && !strcmp(v, "true");
	int64_t limit = -1;
	if (!http_query_get(req->query, "limitBytes", v, sizeof(v), NULL))
		limit = strtoll(v, NULL, 10);
	char cutoff[32] = "";
	if (!http_query_get(req->query, "sinceSeconds", v, sizeof(v), NULL)) {
		uint64_t since = strtoull(v, NULL, 10), now = k32_plat()->wall_s();
		klet_fmt_time(now > since ? now - since : 0, cutoff, sizeof(cutoff));
	}
	bool user_ts = ts;
	if (cutoff[0] && !follow)
		ts = true; /* stamps to filter by; removed again unless asked for */
	struct k32_err err;
	k32_err_clear(&err);
	k32_mutex_lock(&cp->mu);
	struct klet *k = klet_find_locked(cp, node);
	if (k && follow && !prev) {
		k32_mutex_unlock(&cp->mu);
		struct logf *f = k32_calloc(k32_default_allocator(), sizeof(*f));
		if (!f) {
			status_fail(resp, 500, "InternalError", "out of memory for the log stream");
			return;
		}
		f->cp = cp;
		snprintf(f->node, sizeof(f->node), "%s", node);
		snprintf(f->ns, sizeof(f->ns), "%s", ns);
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->tail = tail;
		f->ts = ts;
		k32_buf_init(&f->pending, k32_default_allocator(), 256 * 1024, "log stream");
		if (http_response_stream(resp, &logf_ops, f, NULL)) {
			k32_buf_fini(&f->pending);
			k32_free(k32_default_allocator(), f, sizeof(*f));
		}
		return;
	}
	k32_status_t st;
	if (k) {
		k32_buf_reset(&resp->body);
		st = klet_pod_logs(k, ns, name, prev, tail, ts, NULL, &resp->body, &err);
		k32_mutex_unlock(&cp->mu);
	} else {
		k32_mutex_unlock(&cp->mu);
		/* a board in another process: ask its pod server */
		struct http_client_config cc;
		http_client_config_init(&cc);
		cc.host = ip;
		cc.port = port;
		cc.timeout_us = SIM_LOG_REMOTE_TIMEOUT_US;
		struct http_client *c = NULL;
		char target[512];
		snprintf(target, sizeof(target),
			 "/containerLogs/%s/%s/c?tailLines=%lld&previous=%s&timestamps=%s", ns,
			 name, (long long)tail, prev ? "true" : "false", ts ? "true" : "false");
		st = port ? http_client_new(&cc, &c, &err)
			  : k32_err_set(&err, K32_ERR_NOT_FOUND, SIM_MOD,
					"node %s publishes no kubelet port", node);
		if (!st) {
			struct http_client_request rq = {.method = "GET", .target = target};
			struct http_client_response r;
			st = http_client_do(c, &rq, &r, &err);
			if (!st && r.status == 200) {
				k32_buf_reset(&resp->body);
				st = k32_buf_append(&resp->body, r.body.data, r.body.len, &err);
			} else if (!st) {
				st = k32_err_set(&err,
						 r.status == 404 ? K32_ERR_NOT_FOUND : K32_ERR_IO,
						 SIM_MOD, "%s", k32_buf_cstr(&r.body));
			}
			http_client_response_fini(&r);
		}
		http_client_free(c);
	}
	if (st == K32_ERR_NOT_FOUND && prev)
		status_fail(resp, 400, "BadRequest", err.msg);
	else if (st)
		status_fail(resp, 500, "InternalError", err.msg);
	else
		log_filter(&resp->body, cutoff, user_ts, limit);
}

/* Splits /api/v1/namespaces/<ns>/pods/<name>/log; false for anything else. */
static bool log_path(struct k32_str path, char *ns, size_t nscap, char *name, size_t namecap)
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

/* ---- metrics.k8s.io (kubectl top) --------------------------------------------------------
 *
 * The API server does not serve the metrics group; the control plane here adds it to
 * discovery and answers it from the kubelets' figures (klet_stats_json for boards in this
 * process, GET /stats on the pod server for the others): a pod's memory is the bytes it
 * holds from its node's pod pool, its CPU the rate of the time spent in its calls over the
 * last >= 10 s; a node's memory is its pool in use, its CPU the sum over its pods.
 */
#define SIM_METRICS_PREFIX	      "/apis/metrics.k8s.io/v1beta1"
#define SIM_METRICS_REMOTE_TIMEOUT_US 500000

static const char metrics_discovery_item[] =
    "{\"metadata\":{\"name\":\"metrics.k8s.io\"},\"versions\":[{\"version\":\"v1beta1\","
    "\"resources\":[{\"resource\":\"nodes\",\"responseKind\":{\"group\":\"metrics.k8s.io\","
    "\"version\":\"v1beta1\",\"kind\":\"NodeMetrics\"},\"scope\":\"Cluster\","
    "\"singularResource\":\"\",\"verbs\":[\"get\",\"list\"]},{\"resource\":\"pods\","
    "\"responseKind\":{\"group\":\"metrics.k8s.io\",\"version\":\"v1beta1\",\"kind\":"
    "\"PodMetrics\"},\"scope\":\"Namespaced\",\"singularResource\":\"\",\"verbs\":[\"get\","
    "\"list\"]}],\"freshness\":\"Current\"}]}";
static const char metrics_group_item[] =
    "{\"name\":\"metrics.k8s.io\",\"versions\":[{\"groupVersion\":\"metrics.k8s.io/v1beta1\","
    "\"version\":\"v1beta1\"}],\"preferredVersion\":{\"groupVersion\":"
    "\"metrics.k8s.io/v1beta1\",\"version\":\"v1beta1\"}}";
static const char metrics_resources[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":"
    "\"metrics.k8s.io/v1beta1\",\"resources\":[{\"name\":\"nodes\",\"singularName\":\"\","
    "\"namespaced\":false,\"kind\":\"NodeMetrics\",\"verbs\":[\"get\",\"list\"]},{\"name\":"
    "\"pods\",\"singularName\":\"\",\"namespaced\":true,\"kind\":\"PodMetrics\",\"verbs\":["
    "\"get\",\"list\"]}]}";

/* Adds the metrics group to a /apis answer (aggregated or legacy). */
static void discovery_add_metrics(struct http_response *resp)
{
	cJSON *j = NULL;
	if (!resp->body.len ||
	    k32_json_parse((const char *)resp->body.data, resp->body.len, &j, NULL))
		return;
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(j, "kind"));
	const char *item = NULL, *list = NULL;
	if (kind && !strcmp(kind, "APIGroupDiscoveryList")) {
		item = metrics_discovery_item;
		list = "items";
	} else if (kind && !strcmp(kind, "APIGroupList")) {
		item = metrics_group_item;
		list = "groups";
	}
	cJSON *arr = list ? cJSON_GetObjectItem(j, list) : NULL;
	cJSON *add = item ? cJSON_Parse(item) : NULL;
	if (cJSON_IsArray(arr) && add) {
		cJSON_AddItemToArray(arr, add);
		add = NULL;
		char *t = cJSON_PrintUnformatted(j);
		if (t) {
			k32_buf_reset(&resp->body);
			k32_buf_append_str(&resp->body, t, NULL);
			cJSON_free(t);
		}
	}
	cJSON_Delete(add);
	cJSON_Delete(j);
}

/* Every node's stats object (klet_stats_json's format) into arr. */
static void metrics_collect(struct sim_cp *cp, cJSON *arr)
{
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), 4 << 20, "stats");
	char local[SIM_MAX_LOCAL_BOARDS][128];
	size_t nlocal = 0;
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < SIM_MAX_LOCAL_BOARDS; i++) {
		if (!cp->klets[i])
			continue;
		snprintf(local[nlocal++], sizeof(local[0]), "%s", klet_node_name(cp->klets[i]));
		k32_buf_reset(&b);
		cJSON *j = NULL;
		if (!klet_stats_json(cp->klets[i], &b, &err) &&
		    !k32_json_parse((const char *)b.data, b.len, &j, NULL))
			cJSON_AddItemToArray(arr, j);
	}
	k32_mutex_unlock(&cp->mu);
	/* boards in other processes: their pod servers */
	int code = 0;
	cJSON *nodes = NULL;
	k32_buf_reset(&b);
	if (api_do(cp->api, "GET", "/api/v1/nodes", NULL, NULL, 0, &code, &b, &err) ||
	    code != 200 || k32_json_parse((const char *)b.data, b.len, &nodes, NULL))
		goto out;
	const cJSON *n;
	cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes, "items"))
	{
		const char *name = cJSON_GetStringValue(k32_json_find(n, "metadata.name"));
		const cJSON *port = k32_json_find(n, "status.daemonEndpoints.kubeletEndpoint.Port");
		bool is_local = false;
		for (size_t i = 0; name && i < nlocal; i++)
			is_local |= !strcmp(local[i], name);
		if (!name || is_local || !cJSON_IsNumber(port) || port->valuedouble <= 0)
			continue;
		const char *ip = "127.0.0.1";
		const cJSON *a;
		cJSON_ArrayForEach(a, k32_json_find(n, "status.addresses"))
		{
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(a, "type"));
			const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(a, "address"));
			if (t && v && !strcmp(t, "InternalIP"))
				ip = v;
		}
		struct http_client_config cc;
		http_client_config_init(&cc);
		cc.host = ip;
		cc.port = (uint16_t)port->valuedouble;
		cc.timeout_us = SIM_METRICS_REMOTE_TIMEOUT_US;
		struct http_client *c = NULL;
		if (http_client_new(&cc, &c, &err))
			continue;
		struct http_client_request rq = {.method = "GET", .target = "/stats"};
		struct http_client_response r;
		cJSON *j = NULL;
		if (!http_client_do(c, &rq, &r, &err) && r.status == 200 &&
		    !k32_json_parse((const char *)r.body.data, r.body.len, &j, NULL))
			cJSON_AddItemToArray(arr, j);
		http_client_response_fini(&r);
		http_client_free(c);
	}
out:
	cJSON_Delete(nodes);
	k32_buf_fini(&b);
}

static void metrics_usage(cJSON *obj, uint64_t nanocores, uint64_t bytes)
{
	char v[32];
	cJSON *u = cJSON_AddObjectToObject(obj, "usage");
	snprintf(v, sizeof(v), "%llun", (unsigned long long)nanocores);
	cJSON_AddStringToObject(u, "cpu", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
	cJSON_AddStringToObject(u, "memory", v);
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *v = k32_json_find(o, path);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* GET /apis/metrics.k8s.io/v1beta1/... */
static void serve_metrics(struct sim_cp *cp, struct http_request *req, struct http_response *resp)
{
	char path[400];
	if (http_url_decode(req->path, false, path, sizeof(path), NULL)) {
		status_fail(resp, 400, "BadRequest", "bad path");
		return;
	}
	const char *rest = path + strlen(SIM_METRICS_PREFIX);
	if (!*rest || !strcmp(rest, "/")) {
		http_response_set(resp, 200, "application/json", metrics_resources,
				  strlen(metrics_resources));
		return;
	}
	char ns[64] = "", one[128] = "";
	bool nodes = false;
	if (!strncmp(rest, "/nodes", 6) && (!rest[6] || rest[6] == '/')) {
		nodes = true;
		if (rest[6])
			snprintf(one, sizeof(one), "%.127s", rest + 7);
	} else if (!strcmp(rest, "/pods")) {
		/* all namespaces */
	} else if (!strncmp(rest, "/namespaces/", 12)) {
		const char *a = rest + 12, *b = strchr(a, '/');
		if (!b || (size_t)(b - a) >= sizeof(ns) || strncmp(b, "/pods", 5) ||
		    (b[5] && b[5] != '/')) {
			status_fail(resp, 404, "NotFound",
				    "the server could not find the requested resource");
			return;
		}
		memcpy(ns, a, (size_t)(b - a));
		ns[b - a] = 0;
		if (b[5])
			snprintf(one, sizeof(one), "%.127s", b + 6);
	} else {
		status_fail(resp, 404, "NotFound",
			    "the server could not find the requested resource");
		return;
	}
	cJSON *stats = cJSON_CreateArray();
	metrics_collect(cp, stats);
	char ts[32];
	klet_fmt_time(k32_plat()->wall_s(), ts, sizeof(ts));
	cJSON *list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "kind", nodes ? "NodeMetricsList" : "PodMetricsList");
	cJSON_AddStringToObject(list, "apiVersion", "metrics.k8s.io/v1beta1");
	cJSON_AddObjectToObject(list, "metadata");
	cJSON *items = cJSON_AddArrayToObject(list, "items");
	const cJSON *st;
	cJSON_ArrayForEach(st, stats)
	{
		const char *node = cJSON_GetStringValue(cJSON_GetObjectItem(st, "node"));
		uint64_t cpu = 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(st, "pods"))
		{
			cpu += (uint64_t)jnum(p, "cpuNanocores");
			const char *pns = cJSON_GetStringValue(cJSON_GetObjectItem(p, "namespace"));
			const char *pn = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
			const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(p, "state"));
			if (nodes || !pns || !pn || !state || strcmp(state, "running") ||
			    (ns[0] && strcmp(ns, pns)) || (one[0] && strcmp(one, pn)))
				continue;
			cJSON *it = cJSON_CreateObject();
			cJSON *md = cJSON_AddObjectToObject(it, "metadata");
			cJSON_AddStringToObject(md, "name", pn);
			cJSON_AddStringToObject(md, "namespace", pns);
			cJSON_AddStringToObject(md, "creationTimestamp", ts);
			cJSON_AddStringToObject(it, "timestamp", ts);
			cJSON_AddStringToObject(it, "window", "10s");
			cJSON *cs = cJSON_AddArrayToObject(it, "containers");
			cJSON *c = cJSON_CreateObject();
			const char *cn = cJSON_GetStringValue(cJSON_GetObjectItem(p, "container"));
			cJSON_AddStringToObject(c, "name", cn ? cn : "main");
			metrics_usage(c, (uint64_t)jnum(p, "cpuNanocores"),
				      (uint64_t)jnum(p, "memory.poolBytes"));
			cJSON_AddItemToArray(cs, c);
			cJSON_AddItemToArray(items, it);
		}
		if (nodes && node && (!one[0] || !strcmp(one, node))) {
			cJSON *it = cJSON_CreateObject();
			cJSON *md = cJSON_AddObjectToObject(it, "metadata");
			cJSON_AddStringToObject(md, "name", node);
			cJSON_AddStringToObject(md, "creationTimestamp", ts);
			cJSON_AddStringToObject(it, "timestamp", ts);
			cJSON_AddStringToObject(it, "window", "10s");
			metrics_usage(it, cpu, (uint64_t)jnum(st, "pool.usedBytes"));
			cJSON_AddItemToArray(items, it);
		}
	}
	cJSON_Delete(stats);
	cJSON *out = list;
	if (one[0]) {
		cJSON *first = cJSON_DetachItemFromArray(items, 0);
		cJSON_Delete(list);
		if (!first) {
			char m[300];
			snprintf(m, sizeof(m), "%s.metrics.k8s.io \"%s\" not found",
				 nodes ? "nodemetrics" : "podmetrics", one);
			status_fail(resp, 404, "NotFound", m);
			return;
		}
		cJSON_AddStringToObject(first, "kind", nodes ? "NodeMetrics" : "PodMetrics");
		cJSON_AddStringToObject(first, "apiVersion", "metrics.k8s.io/v1beta1");
		out = first;
	}
	char *t = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	http_response_set(resp, 200, "application/json", t ? t : "{}", t ? strlen(t) : 2);
	cJSON_free(t);
}

static void cp_handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct sim_cp *cp = ctx;
	if (!strcmp(req->method, "GET") && k32_str_has_prefix(req->path, SIM_METRICS_PREFIX)) {
		serve_metrics(cp, req, resp);
		return;
	}
	api_http_handler(cp->api, req, resp);
	char ns[64], name[128];
	if (resp->status != 200 || strcmp(req->method, "GET"))
		return;
	if (k32_str_eq_cstr(req->path, "/apis"))
		discovery_add_metrics(resp);
	else if (log_path(req->path, ns, sizeof(ns), name, sizeof(name)))
		serve_log(cp, req, resp, ns, name);
}

static bool cp_auth(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct sim_cp *cp = ctx;
	return api_http_authenticate(cp->api, req, resp);
}

k32_status_t sim_cp_start(const struct sim_cp_config *cfg, struct sim_cp **out, struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	*out = NULL;
	if (!cfg->data_dir)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_MOD,
				   "control plane: a data directory is required");
	k32_status_t st = pl->dir_create(cfg->data_dir, err);
	if (st)
		return st;
	struct sim_cp *cp = k32_calloc(k32_default_allocator(), sizeof(*cp));
	if (!cp)
		return k32_err_set(err, K32_ERR_NO_MEMORY, SIM_MOD, "out of memory");
	pl->mutex_init(&cp->mu);
	cp->tls = cfg->tls;
	struct store_config sc = {.data_dir = cfg->memory_store ? NULL : cfg->data_dir};
	st = store_open(&sc, &cp->store, err);
	if (st)
		goto out_free;
	const char *host = cfg->host ? cfg->host : "127.0.0.1";
	struct api_config ac = {.store = cp->store, .data_dir = cfg->data_dir, .bootstrap = true};
	char addr[96];
	snprintf(addr, sizeof(addr), "%s:%u", host, (unsigned)cfg->port);
	ac.server_addr = addr;
	st = api_server_new(&ac, &cp->api, err);
	if (st)
		goto out_store;
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.host = host;
	hc.port = cfg->port;
	hc.handler = cp_handler;
	hc.authenticate = cp_auth;
	hc.ctx = cp;
	hc.tls = cfg->tls;
	hc.data_dir = cfg->data_dir;
	st = http_server_start(&hc, &cp->srv, err);
	if (st)
		goto out_api;
	api_server_attach_http(cp->api, cp->srv);
#ifdef SIM_HAVE_CTRL
	if (cfg->controllers) {
		struct ctrl_config cc = {.node_grace_s = cfg->node_grace_s,
					 .pod_eviction_s = cfg->pod_eviction_s};
		st = ctrl_start(&cc, cp->api, cp->store, &cp->ctrl, err);
		if (st)
			goto out_http;
	}
#endif
	*out = cp;
	return K32_OK;
#ifdef SIM_HAVE_CTRL
out_http:
	http_server_stop(cp->srv);
#endif
out_api:
	api_server_free(cp->api);
out_store:
	store_close(cp->store);
out_free:
	pl->mutex_fini(&cp->mu);
	k32_free(k32_default_allocator(), cp, sizeof(*cp));
	return st;
}

void sim_cp_stop(struct sim_cp *cp)
{
	if (!cp)
		return;
	http_server_stop(cp->srv);
#ifdef SIM_HAVE_CTRL
	ctrl_stop(cp->ctrl);
#endif
	api_server_free(cp->api);
	store_close(cp->store);
	k32_plat()->mutex_fini(&cp->mu);
	k32_free(k32_default_allocator(), cp, sizeof(*cp));
}

uint16_t sim_cp_port(const struct sim_cp *cp)
{
	return http_server_port(cp->srv);
}

const char *sim_cp_ca_file(const struct sim_cp *cp)
{
	return cp->tls ? http_server_ca_file(cp->srv) : NULL;
}

struct api_server *sim_cp_api(struct sim_cp *cp)
{
	return cp->api;
}

bool sim_cp_has_controllers(const struct sim_cp *cp)
{
#ifdef SIM_HAVE_CTRL
	return cp->ctrl != NULL;
#else
	(void)cp;
	return false;
#endif
}

const char *sim_cp_admin_token(const struct sim_cp *cp)
{
	return api_server_admin_token(cp->api);
}

k32_status_t sim_cp_node_token(struct sim_cp *cp, const char *node, char *out, size_t cap,
			       struct k32_err *err)
{
	return api_server_node_token(cp->api, node, out, cap, err);
}

k32_status_t sim_cp_attach_klet(struct sim_cp *cp, struct klet *k, struct k32_err *err)
{
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < SIM_MAX_LOCAL_BOARDS; i++) {
		if (!cp->klets[i]) {
			cp->klets[i] = k;
			k32_mutex_unlock(&cp->mu);
			return K32_OK;
		}
	}
	k32_mutex_unlock(&cp->mu);
	return k32_err_set(err, K32_ERR_NO_RESOURCES, SIM_MOD,
			   "more than SIM_MAX_LOCAL_BOARDS (%d) boards in one process",
			   SIM_MAX_LOCAL_BOARDS);
}

void sim_cp_detach_klet(struct sim_cp *cp, struct klet *k)
{
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < SIM_MAX_LOCAL_BOARDS; i++)
		if (cp->klets[i] == k)
			cp->klets[i] = NULL;
	k32_mutex_unlock(&cp->mu);
}

/* ---- boards ------------------------------------------------------------------------------------
 */

k32_status_t sim_board_start(const struct sim_board_config *cfg, struct klet **out,
			     struct k32_err *err)
{
	struct klet_config kc = {
	    .node_name = cfg->name,
	    .profile = cfg->profile,
	    .api_host = cfg->api_host,
	    .api_port = cfg->api_port,
	    .api_tls = cfg->ca_file != NULL,
	    .ca_file = cfg->ca_file,
	    .token = cfg->token,
	    .image_dir = cfg->image_dir,
	    .pod_http_port = cfg->pod_port,
	    .console_ext = cfg->console_ext,
	    .console_ext_ctx = cfg->console_ext_ctx,
	    .hw_node = cfg->hw_node,
	    .lease_renew_ms = cfg->lease_renew_ms,
	};
	struct klet *k;
	k32_status_t st = klet_new(&kc, &k, err);
	if (st)
		return st;
	st = klet_start(k, err);
	if (st) {
		klet_free(k);
		return st;
	}
	*out = k;
	return K32_OK;
}
