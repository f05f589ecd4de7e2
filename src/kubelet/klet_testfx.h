/*
 * klet_testfx.h - test fixture shared by the kubelet tests: an in-process control plane
 * (memory store, API server, plain HTTP on 127.0.0.1 port 0) that kubelets reach over
 * HTTP exactly as a board would, and helpers to create pods and wait for their status.
 */
#ifndef KLET_TESTFX_H
#define KLET_TESTFX_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "http/http.h"
#include "kubelet/klet.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx_cp {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	uint16_t port;
};

static inline void fx_cp_start(struct fx_cp *cp)
{
	struct k32_err err;
	memset(cp, 0, sizeof(*cp));
	struct store_config sc = {.data_dir = NULL};
	assert_int_equal(store_open(&sc, &cp->store, &err), K32_OK);
	struct api_config ac = {.store = cp->store, .bootstrap = true};
	if (api_server_new(&ac, &cp->api, &err))
		fail_msg("api_server_new: %s", err.msg);
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = cp->api;
	if (http_server_start(&hc, &cp->srv, &err))
		fail_msg("http_server_start: %s", err.msg);
	api_server_attach_http(cp->api, cp->srv);
	cp->port = http_server_port(cp->srv);
}

static inline void fx_cp_stop(struct fx_cp *cp)
{
	http_server_stop(cp->srv);
	api_server_free(cp->api);
	store_close(cp->store);
}

/* api_do into a parsed object (NULL on a non-JSON answer). */
static inline cJSON *fx_do(struct fx_cp *cp, const char *method, const char *target,
			   const char *body, int *out_code)
{
	struct k32_buf b;
	struct k32_err err;
	int code = 0;
	k32_buf_init(&b, k32_default_allocator(), 1 << 22, "test");
	k32_status_t st =
	    api_do(cp->api, method, target, NULL, body, body ? strlen(body) : 0, &code, &b, &err);
	if (st)
		fail_msg("api_do %s %s: %s", method, target, err.msg);
	cJSON *j = NULL;
	if (b.len)
		k32_json_parse((const char *)b.data, b.len, &j, NULL);
	k32_buf_fini(&b);
	if (out_code)
		*out_code = code;
	return j;
}

/* Creates pod ns/name bound to node with image and restartPolicy; extra is raw JSON
 * members appended to metadata (e.g. ",\"annotations\":{...}") or "". */
static inline void fx_pod_create(struct fx_cp *cp, const char *name, const char *node,
				 const char *image, const char *policy, const char *mem,
				 const char *meta_extra)
{
	char body[2048], lim[128] = "";
	if (mem)
		snprintf(lim, sizeof(lim), ",\"resources\":{\"limits\":{\"memory\":\"%s\"}}", mem);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"default\"%s},\"spec\":{\"nodeName\":\"%s\",\"restartPolicy\":"
		 "\"%s\",\"containers\":[{\"name\":\"main\",\"image\":\"%s\"%s}]}}",
		 name, meta_extra ? meta_extra : "", node, policy, image, lim);
	int code;
	cJSON *j = fx_do(cp, "POST", "/api/v1/namespaces/default/pods", body, &code);
	if (code != 201)
		fail_msg("creating pod %s: HTTP %d", name, code);
	cJSON_Delete(j);
}

typedef bool (*fx_pred)(const cJSON *pod, const void *arg);

/* Polls the pod until pred holds (10 s at most: a bound, not a timing assertion). */
static inline cJSON *fx_wait_pod(struct fx_cp *cp, const char *name, fx_pred pred, const void *arg)
{
	char target[256];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", name);
	cJSON *last = NULL;
	for (int i = 0; i < 1000; i++) {
		int code;
		cJSON_Delete(last);
		last = fx_do(cp, "GET", target, NULL, &code);
		if (code == 200 && pred(last, arg))
			return last;
		if (pred == NULL)
			break;
		k32_plat()->sleep_us(10000);
	}
	char *t = last ? cJSON_Print(last) : NULL;
	print_error("pod %s never reached the expected state; last seen:\n%s\n", name,
		    t ? t : "(none)");
	cJSON_free(t);
	cJSON_Delete(last);
	fail();
	return NULL;
}

static inline const char *fx_str(const cJSON *o, const char *path)
{
	return cJSON_GetStringValue(k32_json_find(o, path));
}

static inline const cJSON *fx_cs(const cJSON *pod)
{
	return cJSON_GetArrayItem(k32_json_find(pod, "status.containerStatuses"), 0);
}

static inline bool fx_phase_is(const cJSON *pod, const void *arg)
{
	const char *ph = fx_str(pod, "status.phase");
	return ph && !strcmp(ph, arg);
}

static inline bool fx_waiting_is(const cJSON *pod, const void *arg)
{
	const char *r = fx_str(fx_cs(pod), "state.waiting.reason");
	return r && !strcmp(r, arg);
}

static inline bool fx_ready(const cJSON *pod, const void *arg)
{
	(void)arg;
	const cJSON *c;
	cJSON_ArrayForEach(c, k32_json_find(pod, "status.conditions"))
	{
		const char *t = fx_str(c, "type"), *s = fx_str(c, "status");
		if (t && s && !strcmp(t, "Ready"))
			return !strcmp(s, "True");
	}
	return false;
}

static inline bool fx_gone_pred(struct fx_cp *cp, const char *name)
{
	char target[256];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", name);
	for (int i = 0; i < 3000; i++) { /* up to 30 s: TSan under CI's load took over 10 */
		int code;
		cJSON *j = fx_do(cp, "GET", target, NULL, &code);
		cJSON_Delete(j);
		if (code == 404)
			return true;
		k32_plat()->sleep_us(10000);
	}
	return false;
}

/* The token the tests' kubelets accept on their node endpoints (/console, /stats,
 * /containerLogs): klet_config.pod_http_tokens, as kube32-sim gives the admin token. */
#define FX_POD_TOKEN "fx-cluster-token"
static const char *const fx_pod_tokens[] = {FX_POD_TOKEN};

static inline void fx_klet_config(struct klet_config *c, struct fx_cp *cp, const char *node,
				  const struct klet_profile *prof)
{
	memset(c, 0, sizeof(*c));
	c->pod_http_tokens = fx_pod_tokens;
	c->pod_http_token_count = 1;
	c->node_name = node;
	c->profile = prof;
	c->api_port = cp->port;
	c->watch_timeout_s = 1;
	c->backoff_initial_ms = 50;
	c->backoff_max_ms = 200;
}

#endif /* KLET_TESTFX_H */
