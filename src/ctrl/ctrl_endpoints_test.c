/*
 * ctrl_endpoints_test.c - the endpoints controller (CTRL_ENDPOINTS) against a real API server
 * in this process, through the in-process client: a Service's Endpoints and EndpointSlices
 * list its ready pods at their nodes' pod servers (one subset and one slice per server,
 * unready pods apart, pods of other labels and finished pods left out), a second pass
 * writes nothing, a pod turning unready moves, a Service without a selector keeps the
 * Endpoints its owner wrote, and deleting the Service deletes what the controller made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "kmeta/kmeta.h"
#include "store/store.h"

static int req(struct api_server *api, const char *method, const char *target, const char *ct,
	       const char *body, struct k32_buf *out)
{
	int code = 0;
	struct k32_err err;
	k32_buf_reset(out);
	assert_int_equal(
	    api_do(api, method, target, ct, body, body ? strlen(body) : 0, &code, out, &err),
	    K32_OK);
	return code;
}

static cJSON *get(struct api_server *api, const char *target, struct k32_buf *b)
{
	if (req(api, "GET", target, NULL, NULL, b) != 200)
		return NULL;
	cJSON *j = NULL;
	assert_int_equal(k32_json_parse(k32_buf_cstr(b), b->len, &j, NULL), K32_OK);
	return j;
}

/* One CTRL_ENDPOINTS pass; returns the writes it made (none may fail). */
static uint64_t pass(struct ctrl *c)
{
	struct ctrl_stats a, b;
	struct k32_err err;
	ctrl_get_stats(c, &a);
	assert_int_equal(ctrl_run_once(c, CTRL_ENDPOINTS, NULL, &err), K32_OK);
	ctrl_get_stats(c, &b);
	assert_int_equal(b.write_errors, a.write_errors);
	return b.writes - a.writes;
}

static void node(struct api_server *api, const char *name, const char *ip, int port,
		 struct k32_buf *b)
{
	char body[400];
	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", name);
	assert_int_equal(req(api, "POST", "/api/v1/nodes", NULL, body, b), 201);
	snprintf(body, sizeof(body),
		 "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"%s\"}],"
		 "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":%d}}}}",
		 ip, port);
	char target[96];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s/status", name);
	assert_int_equal(req(api, "PATCH", target, "application/merge-patch+json", body, b), 200);
}

static void pod(struct api_server *api, const char *name, const char *app, const char *node_name,
		const char *phase, bool ready, struct k32_buf *b)
{
	char body[600];
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{"
		 "\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"hello.wasm\"}]}}",
		 name, app, node_name);
	assert_int_equal(req(api, "POST", "/api/v1/namespaces/default/pods", NULL, body, b), 201);
	snprintf(body, sizeof(body),
		 "{\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
		 "\"%s\"}]}}",
		 phase, ready ? "True" : "False");
	char target[160];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s/status", name);
	assert_int_equal(req(api, "PATCH", target, "application/merge-patch+json", body, b), 200);
}

#define EPS    "/api/v1/namespaces/default/endpoints"
#define SLICES "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"

static int slice_count(struct api_server *api, struct k32_buf *b)
{
	cJSON *l = get(api, SLICES "?labelSelector=kubernetes.io%2Fservice-name%3Dweb", b);
	assert_non_null(l);
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(l, "items"));
	cJSON_Delete(l);
	return n;
}

static void test_endpoints(void **state)
{
	(void)state;
	k32_log_set_stderr(false);
	struct store *store;
	struct api_server *api;
	struct k32_err err;
	struct store_config sc = {.data_dir = NULL, .history_events = 16};
	assert_int_equal(store_open(&sc, &store, &err), K32_OK);
	struct api_config ac = {.store = store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &api, &err), K32_OK);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "resp");
	node(api, "n1", "10.0.0.1", 7001, &b);
	node(api, "n2", "10.0.0.2", 7002, &b);
	pod(api, "web-a", "web", "n1", "Running", true, &b);
	pod(api, "web-b", "web", "n1", "Running", true, &b);
	pod(api, "web-c", "web", "n2", "Running", true, &b);
	pod(api, "web-d", "web", "n2", "Running", false, &b);	/* not ready */
	pod(api, "web-e", "web", "n2", "Succeeded", false, &b); /* finished: left out */
	pod(api, "db-a", "db", "n1", "Running", true, &b);	/* another selector */
	assert_int_equal(req(api, "POST", "/api/v1/namespaces/default/services", NULL,
			     "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"selector\":{\"app\":"
			     "\"web\"},\"ports\":[{\"name\":\"http\",\"port\":80}]}}",
			     &b),
			 201);
	/* a Service without a selector, with Endpoints of its own */
	assert_int_equal(req(api, "POST", "/api/v1/namespaces/default/services", NULL,
			     "{\"metadata\":{\"name\":\"manual\"},\"spec\":{\"ports\":[{\"port\":"
			     "80}]}}",
			     &b),
			 201);
	assert_int_equal(req(api, "POST", EPS, NULL,
			     "{\"metadata\":{\"name\":\"manual\"},\"subsets\":[{\"addresses\":[{"
			     "\"ip\":\"192.168.1.9\"}],\"ports\":[{\"port\":8080}]}]}",
			     &b),
			 201);
	struct kclient *kc = NULL;
	struct ctrl *c = NULL;
	assert_int_equal(kclient_inproc_new(api, NULL, &kc, &err), K32_OK);
	struct ctrl_config cc = {.no_task = true, .enable = CTRL_ENDPOINTS};
	assert_int_equal(ctrl_start(&cc, kc, &c, &err), K32_OK);

	/* Endpoints + 2 slices */
	assert_int_equal(pass(c), 3);
	cJSON *ep = get(api, EPS "/web", &b);
	assert_non_null(ep);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ep, "subsets")), 2);
	struct kmeta_endpoint e;
	assert_int_equal(kmeta_endpoints_pick(ep, 0, &e), 3);
	assert_string_equal(e.pod, "web-a");
	assert_string_equal(e.node, "n1");
	assert_string_equal(e.ip, "10.0.0.1");
	assert_int_equal(e.port, 7001);
	kmeta_endpoints_pick(ep, 2, &e);
	assert_string_equal(e.pod, "web-c");
	assert_int_equal(e.port, 7002);
	const cJSON *nr = k32_json_find(cJSON_GetArrayItem(cJSON_GetObjectItem(ep, "subsets"), 1),
					"notReadyAddresses");
	assert_int_equal(cJSON_GetArraySize(nr), 1);
	assert_string_equal(k32_json_find(cJSON_GetArrayItem(nr, 0), "targetRef.name")->valuestring,
			    "web-d");
	const cJSON *port =
	    k32_json_find(cJSON_GetArrayItem(cJSON_GetObjectItem(ep, "subsets"), 0), "ports");
	assert_string_equal(
	    cJSON_GetStringValue(k32_json_find(cJSON_GetArrayItem(port, 0), "name")), "http");
	cJSON_Delete(ep);
	assert_int_equal(slice_count(api, &b), 2);
	cJSON *sl = get(api, SLICES, &b);
	const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(sl, "items"), 0);
	assert_string_equal(cJSON_GetStringValue(k32_json_find(s0, "addressType")), "IPv4");
	assert_non_null(k32_json_find(s0, "metadata.ownerReferences"));
	cJSON_Delete(sl);

	/* nothing changed: nothing written */
	assert_int_equal(pass(c), 0);

	/* web-a turns unready: the Endpoints and n1's slice change */
	assert_int_equal(
	    req(api, "PATCH", "/api/v1/namespaces/default/pods/web-a/status",
		"application/merge-patch+json",
		"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}", &b),
	    200);
	assert_int_equal(pass(c), 2);
	ep = get(api, EPS "/web", &b);
	assert_int_equal(kmeta_endpoints_pick(ep, 0, NULL), 2);
	cJSON_Delete(ep);

	/* the manual Service's Endpoints are its owner's */
	ep = get(api, EPS "/manual", &b);
	assert_non_null(ep);
	assert_string_equal(
	    k32_json_find(
		cJSON_GetArrayItem(
		    k32_json_find(cJSON_GetArrayItem(cJSON_GetObjectItem(ep, "subsets"), 0),
				  "addresses"),
		    0),
		"ip")
		->valuestring,
	    "192.168.1.9");
	cJSON_Delete(ep);

	/* the Service goes: so do its Endpoints and slices */
	assert_int_equal(
	    req(api, "DELETE", "/api/v1/namespaces/default/services/web", NULL, NULL, &b), 200);
	assert_int_equal(pass(c), 3);
	assert_null(get(api, EPS "/web", &b));
	assert_int_equal(slice_count(api, &b), 0);
	assert_non_null(ep = get(api, EPS "/manual", &b));
	cJSON_Delete(ep);

	ctrl_stop(c);
	kclient_free(kc);
	k32_buf_fini(&b);
	api_server_free(api);
	store_close(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_endpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
