/*
 * cplane.c - the control plane's life cycle (store, API server, HTTP server, controllers),
 * its HTTP handler (the API server's, wrapped for pods/log and metrics.k8s.io), the table
 * of nodes in this process, and the kubeconfig writer. See cplane.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cplane/cplane_int.h"

#include "base/k32_base64.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"
#include "store/store.h"
#ifdef CPLANE_HAVE_CTRL
#include "ctrl/ctrl.h"
#endif

/* ---- kubeconfig ---------------------------------------------------------------------------- */

k32_status_t cplane_write_kubeconfig(const char *path, const char *scheme, const char *host,
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
	if (!token || !token[0])
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CPLANE_MOD,
				   "kubeconfig %s: no admin token to write (the tokens file has no "
				   "system:masters identity); add one to <data-dir>/tokens",
				   path);
	if (ca_file) {
		st = pl->file_read_all(ca_file, a, K32_CPLANE_CA_MAX_BYTES, &ca, &ca_len, err);
		if (st)
			return st;
		ca64_len = k32_base64_len(ca_len) + 1;
		ca64 = k32_alloc(a, ca64_len);
		if (!ca64) {
			k32_free(a, ca, ca_len + 1);
			return k32_err_set(err, K32_ERR_NO_MEMORY, CPLANE_MOD,
					   "kubeconfig %s: out of memory for %zu bytes of CA", path,
					   ca64_len);
		}
		k32_base64_encode(ca, ca_len, ca64);
		k32_free(a, ca, ca_len + 1);
	}
	struct k32_buf b;
	k32_buf_init(&b, a, ca64_len + 2048, "kubeconfig");
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

/* ---- helpers shared by the proxy and metrics ------------------------------------------------ */

void cplane_status_fail(struct http_response *resp, int code, const char *reason, const char *msg)
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

struct cplane_node *cplane_node_find_locked(struct cplane *cp, const char *name)
{
	for (size_t i = 0; i < K32_CPLANE_MAX_LOCAL_NODES; i++) {
		struct cplane_node *n = &cp->nodes[i];
		if (n->ops && !strcmp(n->ops->name(n->node), name))
			return n;
	}
	return NULL;
}

void cplane_fmt_time(uint64_t s, char *out, size_t cap)
{
	char t[KMETA_RFC3339_LEN]; /* kmeta's one RFC 3339 formatter */
	kmeta_rfc3339(s, t);
	snprintf(out, cap, "%s", t);
}

k32_status_t cplane_node_get(struct cplane *cp, struct http_client *c, const char *node,
			     const char *target, struct http_client_response *r,
			     struct k32_err *err)
{
	char hdr[192];
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", cplane_admin_token(cp));
	struct http_client_request rq = {.method = "GET", .target = target, .headers = hdr};
	k32_status_t st = http_client_do(c, &rq, r, err);
	if (st || r->status != 401)
		return st;
	char tok[128];
	if (cplane_node_token(cp, node, tok, sizeof(tok), NULL))
		return K32_OK; /* the 401 stands */
	http_client_response_fini(r);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", tok);
	return http_client_do(c, &rq, r, err);
}

void cplane_node_endpoint(const cJSON *node, char *ip, size_t ipcap, uint16_t *port)
{
	kmeta_node_pod_server(node, ip, ipcap, port);
}

/* ---- the HTTP handler ---------------------------------------------------------------------- */

static void cp_handler(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct cplane *cp = ctx;
	if (!strcmp(req->method, "GET") && k32_str_has_prefix(req->path, CPLANE_METRICS_PREFIX)) {
		cplane_serve_metrics(cp, req, resp);
		api_http_release_identity(req); /* a ServiceAccount's, from cp_auth */
		return;
	}
	api_http_handler(cp->api, req, resp);
	char ns[64], name[128];
	if (resp->status != 200 || strcmp(req->method, "GET"))
		return;
	if (k32_str_eq_cstr(req->path, "/apis"))
		cplane_discovery_add_metrics(resp);
	else if (cplane_log_path(req->path, ns, sizeof(ns), name, sizeof(name)))
		cplane_serve_log(cp, req, resp, ns, name);
}

static bool cp_auth(void *ctx, struct http_request *req, struct http_response *resp)
{
	struct cplane *cp = ctx;
	return api_http_authenticate(cp->api, req, resp);
}

/* ---- life cycle ------------------------------------------------------------------------------ */

void cplane_config_init(struct cplane_config *cfg)
{
	struct http_server_config hc;
	http_server_config_init(&hc);
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->tls = true;
	cfg->controllers = true;
	cfg->handler_threads = hc.handler_threads;
	cfg->tls_park = hc.tls_park;
}

static void stage(const struct cplane_config *cfg, enum cplane_stage s)
{
	if (cfg->on_stage)
		cfg->on_stage(cfg->stage_ctx, s);
}

k32_status_t cplane_start(const struct cplane_config *cfg, struct cplane **out, struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	*out = NULL;
	if (!cfg->data_dir)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CPLANE_MOD,
				   "control plane: a data directory is required (--data-dir)");
	k32_status_t st = pl->dir_create(cfg->data_dir, err);
	if (st)
		return st;
	struct cplane *cp = k32_calloc(k32_default_allocator(), sizeof(*cp));
	if (!cp)
		return k32_err_set(err, K32_ERR_NO_MEMORY, CPLANE_MOD,
				   "control plane: out of memory for its %zu-byte state",
				   sizeof(*cp));
	pl->mutex_init(&cp->mu);
	pl->cond_init(&cp->relay_cv);
	cp->tls = cfg->tls;
	struct store_config sc = {.data_dir = cfg->memory_store ? NULL : cfg->data_dir,
				  .accept_log_loss = cfg->accept_log_loss,
				  .max_bytes = cfg->store_bytes,
				  .max_objects = cfg->store_objects};
	st = store_open(&sc, &cp->store, err);
	if (st)
		goto out_free;
	stage(cfg, CPLANE_STAGE_STORE);
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
	hc.handler_threads = cfg->handler_threads;
	hc.tls_park = cfg->tls_park;
	st = http_server_start(&hc, &cp->srv, err);
	if (st)
		goto out_api;
	api_server_attach_http(cp->api, cp->srv);
	stage(cfg, CPLANE_STAGE_API);
#ifdef CPLANE_HAVE_CTRL
	if (cfg->controllers) {
		/* the controllers are API clients like any other, here over the in-process
		 * entry points (kube32-server --controllers-only runs them over HTTPS) */
		struct ctrl_config cc = {.node_grace_s = cfg->node_grace_s,
					 .pod_eviction_s = cfg->pod_eviction_s};
		st = kclient_inproc_new(cp->api, NULL, &cp->ctrl_client, err);
		if (!st)
			st = ctrl_start(&cc, cp->ctrl_client, &cp->ctrl, err);
		if (st) {
			kclient_free(cp->ctrl_client);
			goto out_http;
		}
		stage(cfg, CPLANE_STAGE_CONTROLLERS);
	}
#endif
	*out = cp;
	return K32_OK;
#ifdef CPLANE_HAVE_CTRL
out_http:
	http_server_stop(cp->srv);
#endif
out_api:
	api_server_free(cp->api);
out_store:
	store_close(cp->store);
out_free:
	pl->cond_fini(&cp->relay_cv);
	pl->mutex_fini(&cp->mu);
	k32_free(k32_default_allocator(), cp, sizeof(*cp));
	return st;
}

void cplane_stop(struct cplane *cp)
{
	if (!cp)
		return;
	cplane_relay_stop(cp); /* it wakes streams of the server: first */
	http_server_stop(cp->srv);
	cplane_relay_free(cp);
#ifdef CPLANE_HAVE_CTRL
	ctrl_stop(cp->ctrl);
	kclient_free(cp->ctrl_client);
#endif
	api_server_free(cp->api);
	store_close(cp->store);
	k32_plat()->cond_fini(&cp->relay_cv);
	k32_plat()->mutex_fini(&cp->mu);
	k32_free(k32_default_allocator(), cp, sizeof(*cp));
}

uint16_t cplane_port(const struct cplane *cp)
{
	return http_server_port(cp->srv);
}

const char *cplane_ca_file(const struct cplane *cp)
{
	return cp->tls ? http_server_ca_file(cp->srv) : NULL;
}

struct api_server *cplane_api(struct cplane *cp)
{
	return cp->api;
}

struct store *cplane_store(struct cplane *cp)
{
	return cp->store;
}

bool cplane_has_controllers(const struct cplane *cp)
{
	return cp->ctrl != NULL;
}

const char *cplane_admin_token(const struct cplane *cp)
{
	return api_server_admin_token(cp->api);
}

k32_status_t cplane_node_token(struct cplane *cp, const char *node, char *out, size_t cap,
			       struct k32_err *err)
{
	return api_server_node_token(cp->api, node, out, cap, err);
}

k32_status_t cplane_node_attach(struct cplane *cp, const struct cplane_node_ops *ops, void *node,
				struct k32_err *err)
{
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < K32_CPLANE_MAX_LOCAL_NODES; i++) {
		if (!cp->nodes[i].ops) {
			cp->nodes[i].ops = ops;
			cp->nodes[i].node = node;
			k32_mutex_unlock(&cp->mu);
			return K32_OK;
		}
	}
	k32_mutex_unlock(&cp->mu);
	return k32_err_set(err, K32_ERR_NO_RESOURCES, CPLANE_MOD,
			   "node %s: more than K32_CPLANE_MAX_LOCAL_NODES (%d) nodes in this "
			   "process; its logs and metrics go through its pod server instead",
			   ops->name(node), K32_CPLANE_MAX_LOCAL_NODES);
}

void cplane_node_detach(struct cplane *cp, void *node)
{
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < K32_CPLANE_MAX_LOCAL_NODES; i++)
		if (cp->nodes[i].ops && cp->nodes[i].node == node)
			cp->nodes[i].ops = NULL;
	k32_mutex_unlock(&cp->mu);
}
