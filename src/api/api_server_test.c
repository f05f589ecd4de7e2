/*
 * api_server_test.c - the API server over a memory store: CRUD semantics, subresources,
 * deletion (finalizers, namespaces, cascades), NodeRestriction, reviews, events, errors,
 * and watch streams over a real loopback HTTP server (port 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "api/api.h"
#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct k32_buf out;
};

static k32_status_t fake_logs(void *ctx, const char *ns, const char *pod, const char *container,
			      const char *node, const char *query, struct k32_buf *out,
			      int *out_code, struct k32_err *err)
{
	(void)ctx;
	*out_code = 200;
	return k32_buf_printf(out, err, "%s/%s/%s on %s (%s)\n", ns, pod, container, node, query);
}

static int fx_setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	struct store_config sc = {.data_dir = NULL, .history_events = 16};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {
	    .store = fx.store, .bootstrap = true, .log_fn = fake_logs, .bookmark_s = 1};
	if (api_server_new(&ac, &fx.api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx.out, k32_default_allocator(), 4 << 20, "test response");
	*state = &fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	return 0;
}

/* Runs one request; returns the code; the body is in fx->out. */
static int req_as(struct fx *fx, const char *token, const char *method, const char *target,
		  const char *ctype, const char *body)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do_as(fx->api, token, method, target, ctype, body,
				   body ? strlen(body) : 0, &code, &fx->out, &err),
			 K32_OK);
	return code;
}

static int req(struct fx *fx, const char *method, const char *target, const char *body)
{
	const char *ct = NULL;
	if (!strcmp(method, "PATCH"))
		ct = "application/merge-patch+json";
	else if (body)
		ct = "application/json";
	return req_as(fx, NULL, method, target, ct, body);
}

/* The out body as JSON (freed by the caller). */
static cJSON *outj(struct fx *fx)
{
	cJSON *j = cJSON_ParseWithLength(k32_buf_cstr(&fx->out), fx->out.len);
	if (!j)
		fail_msg("response is not JSON: %s", k32_buf_cstr(&fx->out));
	return j;
}

static const char *outs(struct fx *fx, const char *path, char *buf, size_t cap)
{
	cJSON *j = outj(fx);
	const cJSON *v = k32_json_find(j, path);
	if (cJSON_IsString(v))
		snprintf(buf, cap, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(buf, cap, "%lld", (long long)v->valuedouble);
	else
		snprintf(buf, cap, "<absent>");
	cJSON_Delete(j);
	return buf;
}

#define EXPECT(fx, want, call)                                                                     \
	do {                                                                                       \
		int code_ = (call);                                                                \
		if (code_ != (want))                                                               \
			fail_msg("%s: HTTP %d, want %d: %s", #call, code_, want,                   \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

static const char cm_demo[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm1\",\"labels\":{"
    "\"app\":\"x\"}},\"data\":{\"a\":\"1\"}}";

static void test_crud(void **state)
{
	struct fx *fx = *state;
	char b[128], rv1[32];
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"crud\"}}"));
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/crud/configmaps", cm_demo));
	assert_string_equal(outs(fx, "metadata.namespace", b, sizeof(b)), "crud");
	assert_string_not_equal(outs(fx, "metadata.uid", b, sizeof(b)), "<absent>");
	outs(fx, "metadata.resourceVersion", rv1, sizeof(rv1));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/crud/configmaps/cm1", NULL));
	assert_string_equal(outs(fx, "metadata.resourceVersion", b, sizeof(b)), rv1);
	assert_string_equal(outs(fx, "kind", b, sizeof(b)), "ConfigMap");
	/* errors */
	EXPECT(fx, 409, req(fx, "POST", "/api/v1/namespaces/crud/configmaps", cm_demo));
	assert_string_equal(outs(fx, "reason", b, sizeof(b)), "AlreadyExists");
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/crud/configmaps/nope", NULL));
	assert_string_equal(outs(fx, "message", b, sizeof(b)), "configmaps \"nope\" not found");
	EXPECT(fx, 404, req(fx, "POST", "/api/v1/namespaces/ghost/configmaps", cm_demo));
	assert_string_equal(outs(fx, "message", b, sizeof(b)), "namespaces \"ghost\" not found");
	EXPECT(fx, 400, req(fx, "POST", "/api/v1/namespaces/crud/configmaps", "{\"metadata\":"));
	EXPECT(fx, 400,
	       req(fx, "POST", "/api/v1/namespaces/crud/configmaps",
		   "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"x\"}}"));
	EXPECT(fx, 422,
	       req(fx, "POST", "/api/v1/namespaces/crud/configmaps",
		   "{\"metadata\":{\"name\":\"Bad_Name\"}}"));
	EXPECT(fx, 400,
	       req(fx, "POST", "/api/v1/namespaces/crud/configmaps?fieldValidation=Strict",
		   "{\"metadata\":{\"name\":\"s\"},\"dataa\":{}}"));
	/* PUT: stale resourceVersion is a Conflict; an unchanged PUT keeps the version */
	EXPECT(fx, 409,
	       req(fx, "PUT", "/api/v1/namespaces/crud/configmaps/cm1",
		   "{\"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"1\"},\"data\":{\"a\":"
		   "\"2\"}}"));
	assert_string_equal(outs(fx, "reason", b, sizeof(b)), "Conflict");
	EXPECT(fx, 200, req(fx, "PUT", "/api/v1/namespaces/crud/configmaps/cm1", cm_demo));
	assert_string_equal(outs(fx, "metadata.resourceVersion", b, sizeof(b)), rv1);
	EXPECT(
	    fx, 200,
	    req(fx, "PATCH", "/api/v1/namespaces/crud/configmaps/cm1", "{\"data\":{\"b\":\"2\"}}"));
	assert_string_not_equal(outs(fx, "metadata.resourceVersion", b, sizeof(b)), rv1);
	assert_string_equal(outs(fx, "data.b", b, sizeof(b)), "2");
	/* JSON patch with a failing test changes nothing */
	EXPECT(fx, 422,
	       req_as(fx, NULL, "PATCH", "/api/v1/namespaces/crud/configmaps/cm1",
		      "application/json-patch+json",
		      "[{\"op\":\"test\",\"path\":\"/data/b\",\"value\":\"9\"}]"));
	EXPECT(fx, 415,
	       req_as(fx, NULL, "PATCH", "/api/v1/namespaces/crud/configmaps/cm1", "text/plain",
		      "{}"));
	/* dryRun stores nothing */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/crud/configmaps?dryRun=All",
		   "{\"metadata\":{\"name\":\"dry\"}}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/crud/configmaps/dry", NULL));
	/* generateName */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/crud/configmaps",
		   "{\"metadata\":{\"generateName\":\"gen-\"}}"));
	assert_int_equal(strlen(outs(fx, "metadata.name", b, sizeof(b))), 9);
	/* routing errors */
	EXPECT(fx, 405, req(fx, "PUT", "/api/v1/namespaces/crud/configmaps", "{}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/crud/widgets", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/openapi/v2", NULL));
	assert_non_null(strstr(k32_buf_cstr(&fx->out), "\"swagger\":\"2.0\""));
	EXPECT(fx, 200, req(fx, "GET", "/apis", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/openapi/v3/apis/apps/v1", NULL));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/crud/nodes/x", NULL));
}

static void test_list(void **state)
{
	struct fx *fx = *state;
	char b[600], body[200];
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"lst\"}}"));
	for (int i = 0; i < 5; i++) {
		snprintf(
		    body, sizeof(body),
		    "{\"metadata\":{\"name\":\"c%d\",\"labels\":{\"i\":\"%d\",\"odd\":\"%s\"}}}", i,
		    i, i % 2 ? "yes" : "no");
		EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/lst/configmaps", body));
	}
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/configmaps", NULL));
	cJSON *l = outj(fx);
	assert_string_equal(cJSON_GetObjectItem(l, "kind")->valuestring, "ConfigMapList");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 5);
	cJSON_Delete(l);
	EXPECT(fx, 200,
	       req(fx, "GET", "/api/v1/namespaces/lst/configmaps?labelSelector=odd%3Dyes", NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/secrets", NULL));
	assert_non_null(strstr(k32_buf_cstr(&fx->out), "\"items\":[]"));
	/* paging */
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/configmaps?limit=3", NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 3);
	const cJSON *cont = k32_json_find(l, "metadata.continue");
	assert_true(cJSON_IsString(cont));
	char target[700], enc[600];
	size_t o = 0;
	for (const char *p = cont->valuestring; *p && o + 4 < sizeof(enc); p++)
		o +=
		    (size_t)snprintf(enc + o, sizeof(enc) - o,
				     (*p == '/' || *p == ':') ? "%%%02X" : "%c", (unsigned char)*p);
	snprintf(target, sizeof(target), "/api/v1/namespaces/lst/configmaps?limit=3&continue=%s",
		 enc);
	cJSON_Delete(l);
	EXPECT(fx, 200, req(fx, "GET", target, NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	EXPECT(fx, 400,
	       req(fx, "GET", "/api/v1/namespaces/lst/configmaps?labelSelector=a%20in%20(", NULL));
	EXPECT(fx, 400, req(fx, "GET", "/api/v1/pods?fieldSelector=spec.bogus%3D1", NULL));
	EXPECT(fx, 400, req(fx, "GET", "/api/v1/pods?limit=-1", NULL));
	/* an exact-revision read sees the past; a future revision is refused */
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/configmaps?limit=1", NULL));
	char rv0[32], target2[200];
	outs(fx, "metadata.resourceVersion", rv0, sizeof(rv0));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/lst/configmaps",
		   "{\"metadata\":{\"name\":\"later\"}}"));
	snprintf(target2, sizeof(target2),
		 "/api/v1/namespaces/lst/configmaps?resourceVersionMatch=Exact&resourceVersion=%s",
		 rv0);
	EXPECT(fx, 200, req(fx, "GET", target2, NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 5);
	cJSON_Delete(l);
	EXPECT(fx, 504,
	       req(fx, "GET",
		   "/api/v1/namespaces/lst/"
		   "configmaps?resourceVersionMatch=Exact&resourceVersion=999999",
		   NULL));
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/lst/configmaps/later", NULL));
	/* deletecollection by selector */
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/api/v1/namespaces/lst/configmaps?labelSelector=odd%3Dno", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/configmaps", NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/lst/configmaps/c1", NULL));
	assert_string_equal(outs(fx, "metadata.labels.odd", b, sizeof(b)), "yes");
}

static const char deploy[] =
    "{\"apiVersion\":\"apps/"
    "v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":2,"
    "\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{"
    "\"app\":\"d\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}}}";

static void test_workload(void **state)
{
	struct fx *fx = *state;
	char b[200];
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"wl\"}}"));
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/wl/deployments", deploy));
	assert_string_equal(outs(fx, "metadata.generation", b, sizeof(b)), "1");
	/* status subresource changes only status; the main resource ignores status */
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/apis/apps/v1/namespaces/wl/deployments/d/status",
		   "{\"status\":{\"readyReplicas\":2},\"spec\":{\"replicas\":9}}"));
	assert_string_equal(outs(fx, "status.readyReplicas", b, sizeof(b)), "2");
	assert_string_equal(outs(fx, "spec.replicas", b, sizeof(b)), "2");
	assert_string_equal(outs(fx, "metadata.generation", b, sizeof(b)), "1");
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/apis/apps/v1/namespaces/wl/deployments/d",
		   "{\"status\":{\"readyReplicas\":0},\"spec\":{\"replicas\":3}}"));
	assert_string_equal(outs(fx, "status.readyReplicas", b, sizeof(b)), "2");
	assert_string_equal(outs(fx, "metadata.generation", b, sizeof(b)), "2");
	/* scale */
	EXPECT(fx, 200, req(fx, "GET", "/apis/apps/v1/namespaces/wl/deployments/d/scale", NULL));
	assert_string_equal(outs(fx, "kind", b, sizeof(b)), "Scale");
	assert_string_equal(outs(fx, "status.selector", b, sizeof(b)), "app=d");
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/apis/apps/v1/namespaces/wl/deployments/d/scale",
		   "{\"spec\":{\"replicas\":5}}"));
	assert_string_equal(outs(fx, "spec.replicas", b, sizeof(b)), "5");
	EXPECT(fx, 422,
	       req(fx, "PATCH", "/apis/apps/v1/namespaces/wl/deployments/d/scale",
		   "{\"spec\":{\"replicas\":-1}}"));
	/* strategic merge patch with $setElementOrder, as kubectl apply sends it */
	EXPECT(fx, 200,
	       req_as(fx, NULL, "PATCH", "/apis/apps/v1/namespaces/wl/deployments/d",
		      "application/strategic-merge-patch+json",
		      "{\"spec\":{\"template\":{\"spec\":{\"$setElementOrder/"
		      "containers\":[{\"name\":\"m\"}],"
		      "\"containers\":[{\"name\":\"m\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}]"
		      "}}}}"));
	cJSON *d = outj(fx);
	const cJSON *c0 = cJSON_GetArrayItem(k32_json_find(d, "spec.template.spec.containers"), 0);
	assert_string_equal(cJSON_GetObjectItem(c0, "image")->valuestring, "m.wasm");
	assert_non_null(cJSON_GetObjectItem(c0, "env"));
	cJSON_Delete(d);
}

static void test_delete(void **state)
{
	struct fx *fx = *state;
	char b[300], body[600];
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"del\"}}"));
	/* finalizers hold an object until they are removed */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/del/configmaps",
		   "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"kube32.io/x\"]}}"));
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/del/configmaps/f", NULL));
	assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)), "<absent>");
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/configmaps/f", NULL));
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/api/v1/namespaces/del/configmaps/f",
		   "{\"metadata\":{\"finalizers\":null}}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/configmaps/f", NULL));
	/* preconditions */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/del/configmaps",
		   "{\"metadata\":{\"name\":\"p\"}}"));
	EXPECT(fx, 409,
	       req(fx, "DELETE", "/api/v1/namespaces/del/configmaps/p",
		   "{\"preconditions\":{\"uid\":\"not-it\"}}"));
	EXPECT(fx, 400,
	       req(fx, "DELETE", "/api/v1/namespaces/del/configmaps/p",
		   "{\"propagationPolicy\":\"Sideways\"}"));
	/* cascade: Deployment > ReplicaSet > Pod by ownerReferences */
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/deployments", deploy));
	char duid[64], rsuid[64];
	outs(fx, "metadata.uid", duid, sizeof(duid));
	snprintf(
	    body, sizeof(body),
	    "{\"metadata\":{\"name\":\"d-1\",\"ownerReferences\":[{\"apiVersion\":\"apps/"
	    "v1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"%s\",\"controller\":true}]},"
	    "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{"
	    "\"labels\":{\"app\":\"d\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}}}",
	    duid);
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/replicasets", body));
	outs(fx, "metadata.uid", rsuid, sizeof(rsuid));
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"d-1-x\",\"ownerReferences\":[{\"apiVersion\":\"apps/"
		 "v1\",\"kind\":\"ReplicaSet\",\"name\":\"d-1\",\"uid\":\"%s\"}]},"
		 "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}",
		 rsuid);
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/del/pods", body));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/del/pods",
		   "{\"metadata\":{\"name\":\"lonely\"},\"spec\":{\"containers\":[{\"name\":\"m\","
		   "\"image\":\"m.wasm\"}]}}"));
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/apis/apps/v1/namespaces/del/deployments/d",
		   "{\"propagationPolicy\":\"Background\"}"));
	EXPECT(fx, 404, req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/d-1", NULL));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/d-1-x", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/lonely", NULL));
	/* Background, dependents by the rules of a direct delete: a pod bound to a node is
	 * marked with its grace period (its kubelet finishes it), one with a finalizer is marked
	 * and stays until the finalizer goes, an unbound one without finalizers goes at once */
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"bg\"},\"spec\":{\"selector\":{\"matchLabels\":{"
		 "\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},"
		 "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}}}");
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/replicasets", body));
	outs(fx, "metadata.uid", rsuid, sizeof(rsuid));
	static const struct {
		const char *name, *meta, *spec; /* extra metadata and spec members */
	} bg_pods[] = {{"bg-bound", "", "\"nodeName\":\"n1\",\"terminationGracePeriodSeconds\":7,"},
		       {"bg-fin", "\"finalizers\":[\"kube32.io/hold\"],", ""},
		       {"bg-plain", "", ""}};
	for (size_t i = 0; i < sizeof(bg_pods) / sizeof(bg_pods[0]); i++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"%s\",%s\"ownerReferences\":[{\"apiVersion\":"
			 "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"bg\",\"uid\":\"%s\"}]},"
			 "\"spec\":{%s\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}",
			 bg_pods[i].name, bg_pods[i].meta, rsuid, bg_pods[i].spec);
		EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/del/pods", body));
	}
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/apis/apps/v1/namespaces/del/replicasets/bg",
		   "{\"propagationPolicy\":\"Background\"}"));
	EXPECT(fx, 404, req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/bg", NULL));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/bg-plain", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/bg-bound", NULL));
	assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)), "<absent>");
	assert_string_equal(outs(fx, "metadata.deletionGracePeriodSeconds", b, sizeof(b)), "7");
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/bg-fin", NULL));
	assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)), "<absent>");
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/api/v1/namespaces/del/pods/bg-fin",
		   "{\"metadata\":{\"finalizers\":null}}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/bg-fin", NULL));
	/* the kubelet's part for the bound pod: delete with grace 0 */
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/api/v1/namespaces/del/pods/bg-bound",
		   "{\"gracePeriodSeconds\":0}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/bg-bound", NULL));
	/* Orphan keeps the dependents and strips their ownerReferences */
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/deployments", deploy));
	outs(fx, "metadata.uid", duid, sizeof(duid));
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"d-2\",\"ownerReferences\":[{\"apiVersion\":\"apps/"
		 "v1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"%s\"}]},"
		 "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{"
		 "\"metadata\":{\"labels\":{\"app\":\"d\"}},"
		 "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}}}",
		 duid);
	EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/replicasets", body));
	EXPECT(fx, 200,
	       req(fx, "DELETE",
		   "/apis/apps/v1/namespaces/del/deployments/d?propagationPolicy=Orphan", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/d-2", NULL));
	assert_string_equal(outs(fx, "metadata.ownerReferences", b, sizeof(b)), "<absent>");
	cJSON *rs = outj(fx);
	assert_int_equal(cJSON_GetArraySize(k32_json_find(rs, "metadata.ownerReferences")), 0);
	cJSON_Delete(rs);
	/* Foreground: the owner is marked, dependents go first, the owner last; a dependent's
	 * finalizer holds the chain until it is removed (the GC removes foregroundDeletion) */
	static const struct {
		const char *pod_meta; /* extra metadata of the pod */
		bool held;	      /* the owners stay after the DELETE */
	} fg[] = {{"", false}, {",\"finalizers\":[\"kube32.io/hold\"]", true}};
	for (size_t i = 0; i < sizeof(fg) / sizeof(fg[0]); i++) {
		EXPECT(fx, 201,
		       req(fx, "POST", "/apis/apps/v1/namespaces/del/deployments", deploy));
		outs(fx, "metadata.uid", duid, sizeof(duid));
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"fg-1\",\"ownerReferences\":[{\"apiVersion\":"
			 "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"%s\"}]},"
			 "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{"
			 "\"metadata\":{\"labels\":{\"app\":\"d\"}},"
			 "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}}}",
			 duid);
		EXPECT(fx, 201, req(fx, "POST", "/apis/apps/v1/namespaces/del/replicasets", body));
		outs(fx, "metadata.uid", rsuid, sizeof(rsuid));
		snprintf(
		    body, sizeof(body),
		    "{\"metadata\":{\"name\":\"fg-1-x\",\"ownerReferences\":[{\"apiVersion\":"
		    "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"fg-1\",\"uid\":\"%s\"}]%s},"
		    "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}",
		    rsuid, fg[i].pod_meta);
		EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/del/pods", body));
		EXPECT(
		    fx, 200,
		    req(fx, "DELETE",
			"/apis/apps/v1/namespaces/del/deployments/d?propagationPolicy=Foreground",
			NULL));
		if (!fg[i].held) {
			EXPECT(fx, 404,
			       req(fx, "GET", "/apis/apps/v1/namespaces/del/deployments/d", NULL));
			EXPECT(
			    fx, 404,
			    req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/fg-1", NULL));
			EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/fg-1-x", NULL));
			continue;
		}
		assert_non_null(strstr(k32_buf_cstr(&fx->out), "\"foregroundDeletion\""));
		assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)),
					"<absent>");
		EXPECT(fx, 200,
		       req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/fg-1", NULL));
		assert_non_null(strstr(k32_buf_cstr(&fx->out), "\"foregroundDeletion\""));
		EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/fg-1-x", NULL));
		assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)),
					"<absent>");
		/* the pod's finalizer goes: the pod goes; then what the GC does, by hand */
		EXPECT(fx, 200,
		       req(fx, "PATCH", "/api/v1/namespaces/del/pods/fg-1-x",
			   "{\"metadata\":{\"finalizers\":null}}"));
		EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/fg-1-x", NULL));
		EXPECT(fx, 200, req(fx, "GET", "/apis/apps/v1/namespaces/del/deployments/d", NULL));
		EXPECT(fx, 200,
		       req(fx, "PATCH", "/apis/apps/v1/namespaces/del/replicasets/fg-1",
			   "{\"metadata\":{\"finalizers\":null}}"));
		EXPECT(fx, 404,
		       req(fx, "GET", "/apis/apps/v1/namespaces/del/replicasets/fg-1", NULL));
		EXPECT(fx, 200,
		       req(fx, "PATCH", "/apis/apps/v1/namespaces/del/deployments/d",
			   "{\"metadata\":{\"finalizers\":null}}"));
		EXPECT(fx, 404, req(fx, "GET", "/apis/apps/v1/namespaces/del/deployments/d", NULL));
	}
	/* a pod bound to a node is deleted gracefully: its kubelet finishes with grace 0 */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/del/pods",
		   "{\"metadata\":{\"name\":\"bound\"},\"spec\":{\"nodeName\":\"n1\","
		   "\"containers\":[{\"name\":\"m\",\"image\":\"m.wasm\"}]}}"));
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/del/pods/bound", NULL));
	assert_string_equal(outs(fx, "metadata.deletionGracePeriodSeconds", b, sizeof(b)), "30");
	/* the kubelet's status write while it stops the pod does not complete the deletion */
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/api/v1/namespaces/del/pods/bound/status",
		   "{\"status\":{\"phase\":\"Running\"}}"));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/bound", NULL));
	EXPECT(
	    fx, 200,
	    req(fx, "DELETE", "/api/v1/namespaces/del/pods/bound", "{\"gracePeriodSeconds\":0}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/bound", NULL));
	/* namespace deletion removes its contents, and creating inside is refused meanwhile */
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/del", NULL));
	assert_string_equal(outs(fx, "status.phase", b, sizeof(b)), "Terminating");
	/* asynchronous, like kube's namespace controller: the contents are still there at once
	 * (kubectl delete -f deletes them itself) and gone after K32_API_NS_PURGE_DELAY_MS */
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/del/pods/lonely", NULL));
	EXPECT(fx, 403,
	       req(fx, "POST", "/api/v1/namespaces/del/configmaps",
		   "{\"metadata\":{\"name\":\"late\"}}"));
	int code = 200;
	for (int i = 0; i < 100 && code != 404; i++) {
		k32_plat()->sleep_us(50000);
		code = req(fx, "GET", "/api/v1/namespaces/del", NULL);
	}
	assert_int_equal(code, 404);
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/del/pods/lonely", NULL));
	EXPECT(fx, 403, req(fx, "DELETE", "/api/v1/namespaces/default", NULL));
}

static void test_pods_and_nodes(void **state)
{
	struct fx *fx = *state;
	char b[300], tok1[80], tok2[80];
	struct k32_err err;
	assert_int_equal(api_server_node_token(fx->api, "n1", tok1, sizeof(tok1), &err), K32_OK);
	assert_int_equal(api_server_node_token(fx->api, "n2", tok2, sizeof(tok2), &err), K32_OK);
	char again[80];
	assert_int_equal(api_server_node_token(fx->api, "n1", again, sizeof(again), &err), K32_OK);
	assert_string_equal(again, tok1);
	assert_int_not_equal(api_server_node_token(fx->api, "Bad_Node", again, sizeof(again), &err),
			     K32_OK);
	/* a node registers itself, not another */
	EXPECT(fx, 201,
	       req_as(fx, tok1, "POST", "/api/v1/nodes", "application/json",
		      "{\"metadata\":{\"name\":\"n1\"}}"));
	EXPECT(fx, 403,
	       req_as(fx, tok1, "POST", "/api/v1/nodes", "application/json",
		      "{\"metadata\":{\"name\":\"n3\"}}"));
	assert_string_equal(outs(fx, "reason", b, sizeof(b)), "Forbidden");
	EXPECT(fx, 201,
	       req_as(fx, tok2, "POST", "/api/v1/nodes", "application/json",
		      "{\"metadata\":{\"name\":\"n2\"}}"));
	EXPECT(fx, 200,
	       req_as(fx, tok1, "PATCH", "/api/v1/nodes/n1/status", "application/merge-patch+json",
		      "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"));
	EXPECT(fx, 403,
	       req_as(fx, tok1, "PATCH", "/api/v1/nodes/n2/status", "application/merge-patch+json",
		      "{\"status\":{}}"));
	/* leases: its own, in kube-node-lease */
	EXPECT(fx, 201,
	       req_as(fx, tok1, "POST",
		      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
		      "application/json",
		      "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"holderIdentity\":\"n1\"}}"));
	EXPECT(fx, 403,
	       req_as(fx, tok1, "POST",
		      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
		      "application/json", "{\"metadata\":{\"name\":\"n2\"}}"));
	/* a pod, bound by the scheduler (binding), then its node writes its status */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/default/pods",
		   "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"m\","
		   "\"image\":\"m.wasm\"}]}}"));
	assert_string_equal(outs(fx, "status.phase", b, sizeof(b)), "Pending");
	EXPECT(fx, 403,
	       req_as(fx, tok1, "POST", "/api/v1/namespaces/default/pods", "application/json",
		      "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"m\","
		      "\"image\":\"m.wasm\"}]}}"));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/default/pods/p/binding",
		   "{\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}"));
	EXPECT(fx, 409,
	       req(fx, "POST", "/api/v1/namespaces/default/pods/p/binding",
		   "{\"target\":{\"kind\":\"Node\",\"name\":\"n2\"}}"));
	EXPECT(fx, 200,
	       req_as(fx, tok1, "PATCH", "/api/v1/namespaces/default/pods/p/status",
		      "application/merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}"));
	EXPECT(fx, 403,
	       req_as(fx, tok2, "PATCH", "/api/v1/namespaces/default/pods/p/status",
		      "application/merge-patch+json", "{\"status\":{\"phase\":\"Failed\"}}"));
	EXPECT(fx, 403,
	       req_as(fx, tok1, "PATCH", "/api/v1/namespaces/default/pods/p",
		      "application/merge-patch+json", "{\"spec\":{\"nodeName\":\"n9\"}}"));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", NULL));
	cJSON *l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 1);
	cJSON_Delete(l);
	/* log: from the hook, with the pod's only container and its node */
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/pods/p/log?tailLines=5", NULL));
	assert_string_equal(k32_buf_cstr(&fx->out), "default/p/m on n1 (tailLines=5)\n");
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/default/pods",
		   "{\"metadata\":{\"name\":\"wait\"},\"spec\":{\"containers\":[{\"name\":\"m\","
		   "\"image\":\"m.wasm\"}]}}"));
	EXPECT(fx, 400, req(fx, "GET", "/api/v1/namespaces/default/pods/wait/log", NULL));
	assert_non_null(strstr(k32_buf_cstr(&fx->out), "is waiting to start: ContainerCreating"));
	/* reviews */
	EXPECT(fx, 201,
	       req_as(fx, tok1, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		      "application/json",
		      "{\"spec\":{\"resourceAttributes\":{\"verb\":\"create\",\"resource\":"
		      "\"deployments\",\"group\":\"apps\",\"namespace\":\"default\"}}}"));
	cJSON *r = outj(fx);
	assert_true(cJSON_IsFalse(k32_json_find(r, "status.allowed")));
	cJSON_Delete(r);
	EXPECT(fx, 201,
	       req(fx, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		   "{\"spec\":{\"resourceAttributes\":{\"verb\":\"create\",\"resource\":\"pods\","
		   "\"namespace\":\"default\"}}}"));
	r = outj(fx);
	assert_true(cJSON_IsTrue(k32_json_find(r, "status.allowed")));
	cJSON_Delete(r);
	EXPECT(fx, 422,
	       req(fx, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		   "{\"spec\":{}}"));
	EXPECT(fx, 201,
	       req_as(fx, tok1, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		      "application/json", "{}"));
	assert_string_equal(outs(fx, "status.userInfo.username", b, sizeof(b)), "system:node:n1");
	/* eviction is a delete (201 Status) */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/default/pods/p/eviction",
		   "{\"apiVersion\":\"policy/"
		   "v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p\"}}"));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/pods/p", NULL));
	assert_string_not_equal(outs(fx, "metadata.deletionTimestamp", b, sizeof(b)), "<absent>");
}

/* kubectl create configmap cfg --from-literal=a=1 --from-literal=b=two -n demo */
static const uint8_t pb_cm[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 'v',  '1',	0x12, 0x09, 'C',  'o',
    'n',  'f',	'i',  'g',  'M',  'a',	'p',  0x12, 0x2b, 0x0a, 0x17, 0x0a, 0x03, 'c',
    'f',  'g',	0x12, 0x00, 0x1a, 0x04, 'd',  'e',  'm',  'o',	0x22, 0x00, 0x2a, 0x00,
    0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, 'a',  0x12, 0x01, '1',
    0x12, 0x08, 0x0a, 0x01, 'b',  0x12, 0x03, 't',  'w',  'o',	0x1a, 0x00, 0x22, 0x00,
};

static void test_protobuf_and_events(void **state)
{
	struct fx *fx = *state;
	char b[200];
	struct k32_err err;
	int code;
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"demo\"}}"));
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do(fx->api, "POST",
				"/api/v1/namespaces/demo/configmaps?fieldValidation=Strict",
				"application/vnd.kubernetes.protobuf", pb_cm, sizeof(pb_cm), &code,
				&fx->out, &err),
			 K32_OK);
	assert_int_equal(code, 201);
	assert_string_equal(outs(fx, "data.b", b, sizeof(b)), "two");
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do(fx->api, "POST", "/api/v1/namespaces/demo/configmaps",
				"application/vnd.kubernetes.protobuf", "k8s", 3, &code, &fx->out,
				&err),
			 K32_OK);
	assert_int_equal(code, 400);

	/* events: a repeat within the series window bumps count on the same Event */
	struct api_event_ref ref = {"v1", "ConfigMap", "demo", "cfg", NULL};
	assert_int_equal(
	    api_event_record(fx->api, &ref, "Normal", "Checked", "looked at it", "test", &err),
	    K32_OK);
	assert_int_equal(
	    api_event_record(fx->api, &ref, "Normal", "Checked", "looked at it", "test", &err),
	    K32_OK);
	assert_int_equal(
	    api_event_record(fx->api, &ref, "Warning", "Other", "something else", "test", &err),
	    K32_OK);
	EXPECT(fx, 200,
	       req(fx, "GET",
		   "/api/v1/namespaces/demo/"
		   "events?fieldSelector=involvedObject.name%3Dcfg,reason%3DChecked",
		   NULL));
	cJSON *l = outj(fx);
	const cJSON *items = cJSON_GetObjectItem(l, "items");
	assert_int_equal(cJSON_GetArraySize(items), 1);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "count")->valueint, 2);
	cJSON_Delete(l);
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/demo/events", NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	/* GC: an event last seen long ago goes; recent ones stay */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/demo/events",
		   "{\"metadata\":{\"name\":\"old\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":"
		   "\"p\"},"
		   "\"reason\":\"Old\",\"message\":\"m\",\"type\":\"Normal\",\"lastTimestamp\":"
		   "\"2020-01-01T00:00:00Z\"}"));
	uint32_t deleted = 0;
	assert_int_equal(api_events_gc(fx->api, k32_plat()->wall_s(), &deleted, &err), K32_OK);
	assert_int_equal(deleted, 1);
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/demo/events/old", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/demo/events", NULL));
	l = outj(fx);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	struct api_event_ref bad = {"v1", NULL, "demo", "x", NULL};
	assert_int_not_equal(api_event_record(fx->api, &bad, "Normal", "R", "m", "t", &err),
			     K32_OK);
}

/* ---- watch over HTTP ---------------------------------------------------------------------- */

struct lines {
	char text[8192];
	size_t len;
	int count;
};

static k32_status_t on_line(void *ctx, const uint8_t *data, size_t len)
{
	struct lines *l = ctx;
	if (l->len + len + 2 < sizeof(l->text)) {
		memcpy(l->text + l->len, data, len);
		l->len += len;
		l->text[l->len++] = '\n';
		l->text[l->len] = 0;
	}
	l->count++;
	return K32_OK;
}

static void watch_lines(uint16_t port, const char *target, const char *accept, struct lines *out)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct k32_err err;
	http_client_config_init(&cc);
	cc.port = port;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	char hdr[256];
	snprintf(hdr, sizeof(hdr), "Accept: %s\r\n", accept);
	struct http_client_request r = {
	    .method = "GET", .target = target, .headers = hdr, .timeout_us = 5000000};
	int status = 0;
	memset(out, 0, sizeof(*out));
	assert_int_equal(http_client_stream(c, &r, true, on_line, out, &status, &err), K32_OK);
	assert_int_equal(status, 200);
	http_client_free(c);
}

/* PATCH application/apply-patch+yaml as manager (force: --force-conflicts). */
static int apply(struct fx *fx, const char *path, const char *manager, bool force, const char *body)
{
	char target[256];
	snprintf(target, sizeof(target), "%s?fieldManager=%s%s", path, manager,
		 force ? "&force=true" : "");
	return req_as(fx, NULL, "PATCH", target, "application/apply-patch+yaml", body);
}

/* The fieldsV1 of entry (manager, operation) in fx->out, as JSON text ("-" when absent). */
static void fields_of(struct fx *fx, const char *manager, const char *op, char *buf, size_t cap)
{
	cJSON *j = outj(fx);
	const cJSON *e;
	snprintf(buf, cap, "-");
	cJSON_ArrayForEach(e, k32_json_find(j, "metadata.managedFields"))
	{
		const cJSON *m = cJSON_GetObjectItem(e, "manager");
		const cJSON *o = cJSON_GetObjectItem(e, "operation");
		if (cJSON_IsString(m) && !strcmp(m->valuestring, manager) && cJSON_IsString(o) &&
		    !strcmp(o->valuestring, op)) {
			char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(e, "fieldsV1"));
			snprintf(buf, cap, "%s", t ? t : "?");
			cJSON_free(t);
		}
	}
	cJSON_Delete(j);
}

static void expect_fields(struct fx *fx, const char *manager, const char *op, const char *want)
{
	char got[1024];
	fields_of(fx, manager, op, got, sizeof(got));
	cJSON *a = cJSON_Parse(got), *b = cJSON_Parse(want);
	bool same = (!a && !b && !strcmp(got, want)) || cJSON_Compare(a, b, true);
	cJSON_Delete(a);
	cJSON_Delete(b);
	if (!same)
		fail_msg("fields of %s/%s: %s, want %s", manager, op, got, want);
}

/* Server-side apply: ownership, conflicts, force, removal, Update entries, keyed lists. */
static void test_server_side_apply(void **state)
{
	struct fx *fx = *state;
	char buf[512];
	const char *cm = "/api/v1/namespaces/ssa/configmaps/c";
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ssa\"}}"));
	static const struct {
		const char *manager;
		bool force;
		const char *body;
		int code;
		const char *data; /* .data of the object afterwards (JSON), NULL: not checked */
		const char *msg;  /* prefix of the Status message for a failure */
	} steps[] = {
	    /* m1 creates: it owns what it applied */
	    {"m1", false,
	     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
	     "\"labels\":{\"x\":\"y\"}},\"data\":{\"a\":\"1\",\"b\":\"2\"}}",
	     201, "{\"a\":\"1\",\"b\":\"2\"}", NULL},
	    /* m2 changing m1's field: conflict, nothing changes */
	    {"m2", false, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"9\"}}",
	     409, NULL, "Apply failed with 1 conflict: conflict with \"m1\": .data.a"},
	    /* the same value is no conflict: both own a; c is m2's */
	    {"m2", false,
	     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"1\",\"c\":\"3\"}}",
	     200, "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}", NULL},
	    /* force takes a from m1 */
	    {"m2", true,
	     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"9\",\"c\":\"3\"}}",
	     200, "{\"a\":\"9\",\"b\":\"2\",\"c\":\"3\"}", NULL},
	    /* m1 stops applying b (and a, which is m2's now): b goes, a stays */
	    {"m1", false,
	     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"x\":"
	     "\"y\"}}}",
	     200, "{\"a\":\"9\",\"c\":\"3\"}", NULL},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int code = apply(fx, cm, steps[i].manager, steps[i].force, steps[i].body);
		if (code != steps[i].code)
			fail_msg("step %zu (%s): HTTP %d, want %d: %s", i, steps[i].manager, code,
				 steps[i].code, k32_buf_cstr(&fx->out));
		if (steps[i].msg) {
			cJSON *j = outj(fx);
			const char *m = api_jstr(j, "message");
			if (!m || strncmp(m, steps[i].msg, strlen(steps[i].msg)))
				fail_msg("step %zu: message %s, want %s", i, m ? m : "-",
					 steps[i].msg);
			assert_string_equal(api_jstr(j, "reason"), "Conflict");
			const cJSON *c0 = cJSON_GetArrayItem(k32_json_find(j, "details.causes"), 0);
			assert_string_equal(api_jstr(c0, "reason"), "FieldManagerConflict");
			assert_string_equal(api_jstr(c0, "field"), ".data.a");
			assert_string_equal(api_jstr(c0, "message"), "conflict with \"m1\"");
			cJSON_Delete(j);
		}
		EXPECT(fx, 200, req(fx, "GET", cm, NULL));
		if (steps[i].data) {
			cJSON *j = outj(fx), *want = cJSON_Parse(steps[i].data);
			if (!cJSON_Compare(cJSON_GetObjectItem(j, "data"), want, true))
				fail_msg("step %zu: object %s, want data %s", i,
					 k32_buf_cstr(&fx->out), steps[i].data);
			cJSON_Delete(j);
			cJSON_Delete(want);
		}
	}
	expect_fields(fx, "m1", "Apply", "{\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
	expect_fields(fx, "m2", "Apply", "{\"f:data\":{\"f:a\":{},\"f:c\":{}}}");
	/* re-applying the same configuration writes nothing */
	char rv[32];
	outs(fx, "metadata.resourceVersion", rv, sizeof(rv));
	EXPECT(fx, 200,
	       apply(fx, cm, "m1", false,
		     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{"
		     "\"x\":\"y\"}}}"));
	assert_string_equal(outs(fx, "metadata.resourceVersion", buf, sizeof(buf)), rv);
	/* an ordinary patch is an Update: editor owns c now, m2 no longer */
	EXPECT(fx, 200,
	       req_as(fx, NULL, "PATCH", "/api/v1/namespaces/ssa/configmaps/c?fieldManager=editor",
		      "application/merge-patch+json", "{\"data\":{\"c\":\"4\"}}"));
	expect_fields(fx, "editor", "Update", "{\"f:data\":{\"f:c\":{}}}");
	expect_fields(fx, "m2", "Apply", "{\"f:data\":{\"f:a\":{}}}");
	/* two managers in conflict at once, in name order, Update managers with version+time */
	EXPECT(fx, 409,
	       apply(fx, cm, "m3", false,
		     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"x\",\"c\":"
		     "\"y\"}}"));
	outs(fx, "message", buf, sizeof(buf));
	static const char two_msg[] =
	    "Apply failed with 2 conflicts: conflicts with \"editor\" using v1 at 20";
	if (strncmp(buf, two_msg, sizeof(two_msg) - 1) ||
	    !strstr(buf, ":\n- .data.c\nconflicts with \"m2\":\n- .data.a"))
		fail_msg("two conflicts: %s", buf);
	/* a removed field leaves its owners: nobody owns a after a JSON patch removes it */
	EXPECT(fx, 200,
	       req_as(fx, NULL, "PATCH", "/api/v1/namespaces/ssa/configmaps/c?fieldManager=jp",
		      "application/json-patch+json", "[{\"op\":\"remove\",\"path\":\"/data/a\"}]"));
	expect_fields(fx, "m2", "Apply", "-");
	/* apply needs a field manager */
	EXPECT(fx, 400,
	       req_as(fx, NULL, "PATCH", cm, "application/apply-patch+yaml",
		      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}"));
	assert_non_null(strstr(k32_buf_cstr(&fx->out), "fieldManager is required"));

	/* keyed lists: containers by name */
	const char *dp = "/apis/apps/v1/namespaces/ssa/deployments/d";
	static const char d1[] =
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},"
	    "\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":"
	    "{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"name\":"
	    "\"main\",\"image\":\"a.wasm\"},{\"name\":\"side\",\"image\":\"s.wasm\"}]}}}}";
	EXPECT(fx, 201, apply(fx, dp, "m1", false, d1));
	static const char d2[] =
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"main\",\"image\":\"b.wasm\"}]}}}}";
	EXPECT(fx, 409, apply(fx, dp, "m2", false, d2));
	outs(fx, "message", buf, sizeof(buf));
	assert_string_equal(buf, "Apply failed with 1 conflict: conflict with \"m1\": "
				 ".spec.template.spec.containers[name=\"main\"].image");
	/* m1 drops the side container: it is removed; scale is an Update of spec.replicas */
	static const char d3[] =
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},"
	    "\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":"
	    "{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"name\":"
	    "\"main\",\"image\":\"a.wasm\"}]}}}}";
	EXPECT(fx, 200, apply(fx, dp, "m1", false, d3));
	cJSON *dj = outj(fx);
	const cJSON *ctrs = k32_json_find(dj, "spec.template.spec.containers");
	assert_int_equal(cJSON_GetArraySize(ctrs), 1);
	assert_string_equal(api_jstr(cJSON_GetArrayItem(ctrs, 0), "name"), "main");
	assert_string_equal(api_jstr(cJSON_GetArrayItem(ctrs, 0), "image"), "a.wasm");
	cJSON_Delete(dj);
	EXPECT(fx, 200,
	       req_as(fx, NULL, "PATCH", "/apis/apps/v1/namespaces/ssa/deployments/d/scale",
		      "application/merge-patch+json", "{\"spec\":{\"replicas\":3}}"));
	EXPECT(fx, 409, apply(fx, dp, "m1", false, d3));
	outs(fx, "message", buf, sizeof(buf));
	static const char scale_msg[] = "Apply failed with 1 conflict: conflict with \"kube32\" "
					"with subresource \"scale\" using apps/v1 at ";
	if (strncmp(buf, scale_msg, sizeof(scale_msg) - 1) || !strstr(buf, ": .spec.replicas"))
		fail_msg("scale conflict: %s", buf);
	EXPECT(fx, 200, apply(fx, dp, "m1", true, d3));
	assert_string_equal(outs(fx, "spec.replicas", buf, sizeof(buf)), "1");
	/* objects never applied carry no managedFields */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/ssa/configmaps",
		   "{\"metadata\":{\"name\":\"plain\"},\"data\":{\"a\":\"1\"}}"));
	assert_null(strstr(k32_buf_cstr(&fx->out), "managedFields"));
	/* ...and their first apply meets before-first-apply on changed fields */
	EXPECT(fx, 409,
	       apply(fx, "/api/v1/namespaces/ssa/configmaps/plain", "m1", false,
		     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"2\"}}"));
	outs(fx, "message", buf, sizeof(buf));
	static const char bfa_msg[] =
	    "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1 at ";
	if (strncmp(buf, bfa_msg, sizeof(bfa_msg) - 1) || !strstr(buf, ": .data.a"))
		fail_msg("before-first-apply: %s", buf);
}

/* GET target over HTTP; *gz tells whether it came gzip-encoded; the (inflated) body into out. */
static int http_get(uint16_t port, const char *target, const char *extra, bool *gz,
		    struct k32_buf *out)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct http_client_response resp;
	struct k32_err err;
	http_client_config_init(&cc);
	cc.port = port;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	struct http_client_request r = {.method = "GET", .target = target, .headers = extra};
	assert_int_equal(http_client_do(c, &r, &resp, &err), K32_OK);
	*gz = strstr(k32_buf_cstr(&resp.headers), "Content-Encoding: gzip\r\n") != NULL;
	k32_buf_reset(out);
	if (*gz) {
		z_stream z;
		memset(&z, 0, sizeof(z));
		assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
		assert_int_equal(k32_buf_reserve(out, 1 << 20, &err), K32_OK);
		z.next_in = resp.body.data;
		z.avail_in = (uInt)resp.body.len;
		z.next_out = out->data;
		z.avail_out = 1 << 20;
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		out->len = (1 << 20) - z.avail_out;
		out->data[out->len] = 0;
		inflateEnd(&z);
	} else {
		assert_int_equal(k32_buf_append(out, resp.body.data, resp.body.len, &err), K32_OK);
	}
	int status = resp.status;
	http_client_response_fini(&resp);
	http_client_free(c);
	return status;
}

/* Items in a list answer (-1 when it is not a list). */
static int list_items(const struct k32_buf *b)
{
	cJSON *j = cJSON_ParseWithLength(k32_buf_cstr(b), b->len);
	const cJSON *items = cJSON_GetObjectItem(j, "items");
	int n = cJSON_IsArray(items) ? cJSON_GetArraySize(items) : -1;
	cJSON_Delete(j);
	return n;
}

/* Plain lists for gzip clients come from the cache of compressed answers until a write. */
static void test_list_gzip_cache(void **state)
{
	struct fx *fx = *state;
	struct http_server_config hc;
	struct http_server *srv = NULL;
	struct k32_err err;
	struct k32_buf b;
	bool gz;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = fx->api;
	assert_int_equal(http_server_start(&hc, &srv, &err), K32_OK);
	uint16_t port = http_server_port(srv);
	k32_buf_init(&b, k32_default_allocator(), 2 << 20, "test body");
	const char *ae = "Accept-Encoding: gzip\r\n";
	const char *all = "/api/v1/namespaces/gz/configmaps";
	char body[160];

	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"gz\"}}"));
	for (int i = 0; i < 30; i++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"cm-%02d\",\"labels\":{\"odd\":\"%s\"}},"
			 "\"data\":{\"k\":\"value %d\"}}",
			 i, i % 2 ? "yes" : "no", i);
		EXPECT(fx, 201, req(fx, "POST", all, body));
	}
	struct api_list_cache *lc = &fx->api->lists;
	uint64_t hits0 = lc->hits, misses0 = lc->misses;
	static const struct {
		const char *target;
		bool gzip_ae;
		int items;
		bool gzip;  /* answer gzip-encoded */
		int hits;   /* cache hits after this request (since the start) */
		int misses; /* cache misses after it */
	} cases[] = {
	    {"/api/v1/namespaces/gz/configmaps", true, 30, true, 0, 1},	  /* rendered */
	    {"/api/v1/namespaces/gz/configmaps", true, 30, true, 1, 1},	  /* cached */
	    {"/api/v1/namespaces/gz/configmaps", false, 30, false, 1, 1}, /* identity */
	    {"/api/v1/namespaces/gz/configmaps?labelSelector=odd%3Dyes", true, 15, true, 1, 2},
	    {"/api/v1/namespaces/gz/configmaps?labelSelector=odd%3Dyes", true, 15, true, 2, 2},
	    {"/api/v1/namespaces/gz/configmaps?limit=2", true, 2, false, 2, 3}, /* < 1 KiB */
	    {"/api/v1/namespaces/gz/configmaps", true, 30, true, 3, 3},		/* still cached */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = http_get(port, cases[i].target, cases[i].gzip_ae ? ae : NULL, &gz, &b);
		if (code != 200 || gz != cases[i].gzip || list_items(&b) != cases[i].items ||
		    lc->hits - hits0 != (uint64_t)cases[i].hits ||
		    lc->misses - misses0 != (uint64_t)cases[i].misses)
			fail_msg("case %zu %s: code %d gzip %d items %d (%zu bytes) hits %llu "
				 "misses %llu",
				 i, cases[i].target, code, gz, list_items(&b), b.len,
				 (unsigned long long)(lc->hits - hits0),
				 (unsigned long long)(lc->misses - misses0));
	}
	/* any write moves the revision: the next list is read and rendered again */
	EXPECT(fx, 201, req(fx, "POST", all, "{\"metadata\":{\"name\":\"cm-new\"}}"));
	assert_int_equal(http_get(port, all, ae, &gz, &b), 200);
	assert_true(gz);
	assert_int_equal(list_items(&b), 31);
	assert_int_equal(lc->misses - misses0, 4);
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/gz/configmaps/cm-03", NULL));
	assert_int_equal(http_get(port, all, ae, &gz, &b), 200);
	assert_int_equal(list_items(&b), 30);
	assert_null(strstr(k32_buf_cstr(&b), "\"cm-03\""));
	/* a write in another namespace moves the revision too (coarse, never stale) */
	assert_int_equal(http_get(port, all, ae, &gz, &b), 200);
	uint64_t h = lc->hits;
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/default/configmaps",
		   "{\"metadata\":{\"name\":\"elsewhere\"}}"));
	assert_int_equal(http_get(port, all, ae, &gz, &b), 200);
	assert_int_equal(lc->hits, h);
	/* a Table is never cached (its ages move with the clock) but is still compressed */
	assert_int_equal(http_get(port, all,
				  "Accept-Encoding: gzip\r\nAccept: application/json;as=Table;v=v1;"
				  "g=meta.k8s.io\r\n",
				  &gz, &b),
			 200);
	assert_true(gz);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"kind\":\"Table\""));
	assert_int_equal(lc->hits, h);
	k32_buf_fini(&b);
	http_server_stop(srv);
}

static void test_watch(void **state)
{
	struct fx *fx = *state;
	struct http_server_config hc;
	struct http_server *srv = NULL;
	struct k32_err err;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = fx->api;
	assert_int_equal(http_server_start(&hc, &srv, &err), K32_OK);
	api_server_attach_http(fx->api, srv);
	uint16_t port = http_server_port(srv);
	char rv[32], target[256];

	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"w\"}}"));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/w/configmaps",
		   "{\"metadata\":{\"name\":\"a\",\"labels\":{\"keep\":\"yes\"}}}"));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/w/configmaps", NULL));
	outs(fx, "metadata.resourceVersion", rv, sizeof(rv));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/w/configmaps",
		   "{\"metadata\":{\"name\":\"b\",\"labels\":{\"keep\":\"yes\"}}}"));
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/api/v1/namespaces/w/configmaps/b",
		   "{\"metadata\":{\"labels\":{\"keep\":\"no\"}}}"));
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/w/configmaps/a", NULL));

	/* from the list's revision: every change after it, in order */
	struct lines l;
	snprintf(target, sizeof(target),
		 "/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=%s&timeoutSeconds=1",
		 rv);
	watch_lines(port, target, "application/json", &l);
	assert_int_equal(l.count, 3);
	const char *p1 = strstr(l.text, "{\"type\":\"ADDED\"");
	const char *p2 = strstr(l.text, "{\"type\":\"MODIFIED\"");
	const char *p3 = strstr(l.text, "{\"type\":\"DELETED\"");
	assert_true(p1 && p2 && p3 && p1 < p2 && p2 < p3);

	/* with a selector, b leaving it is a DELETED; watch=True (python) works */
	snprintf(
	    target, sizeof(target),
	    "/api/v1/namespaces/w/"
	    "configmaps?watch=True&resourceVersion=%s&timeoutSeconds=1&labelSelector=keep%%3Dyes",
	    rv);
	watch_lines(port, target, "application/json", &l);
	assert_int_equal(l.count, 3);
	assert_non_null(strstr(l.text, "\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\","
				       "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\""));
	assert_null(strstr(l.text, "MODIFIED"));

	/* without a revision: the current objects as synthetic ADDED, then the end */
	EXPECT(
	    fx, 201,
	    req(fx, "POST", "/api/v1/namespaces/w/configmaps", "{\"metadata\":{\"name\":\"c\"}}"));
	watch_lines(port, "/api/v1/namespaces/w/configmaps?watch=1&timeoutSeconds=1",
		    API_CT_TABLE ",application/json", &l);
	assert_int_equal(l.count, 2);
	assert_non_null(strstr(l.text, "\"kind\":\"Table\""));
	/* a single-object watch on its path */
	watch_lines(port, "/api/v1/namespaces/w/configmaps/c?watch=true&timeoutSeconds=1",
		    "application/json", &l);
	assert_int_equal(l.count, 1);

	/* bookmarks: the watcher's progress, every bookmark_s (1 s here) */
	char now_rv[32];
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/w/configmaps", NULL));
	outs(fx, "metadata.resourceVersion", now_rv, sizeof(now_rv));
	snprintf(
	    target, sizeof(target),
	    "/api/v1/namespaces/w/"
	    "configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=%s",
	    now_rv);
	watch_lines(port, target, "application/json", &l);
	assert_non_null(strstr(l.text,
			       "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\","
			       "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\""));
	/* too old: one ERROR event with a 410 Expired Status */
	for (int i = 0; i < 20; i++)
		EXPECT(fx, 200,
		       req(fx, "PATCH", "/api/v1/namespaces/w/configmaps/c",
			   i % 2 ? "{\"data\":{\"x\":\"1\"}}" : "{\"data\":{\"x\":\"2\"}}"));
	snprintf(target, sizeof(target),
		 "/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=%s&timeoutSeconds=1",
		 rv);
	watch_lines(port, target, "application/json", &l);
	assert_int_equal(l.count, 1);
	assert_non_null(strstr(l.text, "\"type\":\"ERROR\""));
	assert_non_null(strstr(l.text, "\"code\":410"));
	assert_non_null(strstr(l.text, "\"reason\":\"Expired\""));

	http_server_stop(srv);
	api_server_attach_http(fx->api, NULL);
}

static void test_inproc_watch(void **state)
{
	struct fx *fx = *state;
	struct api_watch *w = NULL;
	struct k32_err err;
	struct k32_buf ev;
	k32_buf_init(&ev, k32_default_allocator(), 1 << 20, "event");
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"iw\"}}"));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/iw/configmaps",
		   "{\"metadata\":{\"name\":\"pre\",\"labels\":{\"w\":\"1\"}}}"));
	assert_int_not_equal(api_watch_open(fx->api, "/api/v1/namespaces/iw/widgets", &w, &err),
			     K32_OK);
	assert_int_not_equal(api_watch_open(fx->api,
					    "/api/v1/namespaces/iw/configmaps?labelSelector=a%20in",
					    &w, &err),
			     K32_OK);
	assert_int_equal(api_watch_open(fx->api,
					"/api/v1/namespaces/iw/configmaps?labelSelector=w%3D1", &w,
					&err),
			 K32_OK);
	/* synthetic ADDED for what exists, then nothing */
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&ev), "{\"type\":\"ADDED\""));
	assert_non_null(strstr(k32_buf_cstr(&ev), "\"name\":\"pre\""));
	k32_buf_reset(&ev);
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_ERR_SHOULD_WAIT);
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/iw/configmaps",
		   "{\"metadata\":{\"name\":\"other\"}}"));
	EXPECT(fx, 200,
	       req(fx, "PATCH", "/api/v1/namespaces/iw/configmaps/pre",
		   "{\"metadata\":{\"labels\":{\"w\":\"0\"}}}"));
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&ev), "{\"type\":\"DELETED\""));
	k32_buf_reset(&ev);
	assert_int_equal(api_watch_next(w, &ev, k32_deadline_after(1000), &err), K32_ERR_TIMED_OUT);
	api_watch_cancel(w);
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_ERR_CANCELED);
	api_watch_close(w);
	/* from a revision too old for the history */
	assert_int_equal(
	    api_watch_open(fx->api, "/api/v1/namespaces/iw/configmaps?resourceVersion=1", &w, &err),
	    K32_ERR_COMPACTED);
	k32_buf_fini(&ev);
}

/* The number of ConfigMaps in namespace ns. */
static int cm_count(struct fx *fx, const char *ns)
{
	char target[128];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps", ns);
	EXPECT(fx, 200, req(fx, "GET", target, NULL));
	cJSON *l = outj(fx);
	int n = cJSON_GetArraySize(cJSON_GetObjectItem(l, "items"));
	cJSON_Delete(l);
	return n;
}

static void expect_msg(struct fx *fx, const char *piece)
{
	if (!strstr(k32_buf_cstr(&fx->out), piece))
		fail_msg("answer lacks \"%s\": %s", piece, k32_buf_cstr(&fx->out));
}

/*
 * Query parameters that do not fit their limit, or are not of their kind, are a 400 and the
 * request is not carried out. A selector too long for its buffer was once taken as absent, so
 * a delete by a long selector deleted every ConfigMap of the namespace.
 */
static void test_query_limits(void **state)
{
	struct fx *fx = *state;
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"qlim\"}}"));
	for (int i = 0; i < 3; i++) {
		char body[120];
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"c%d\",\"labels\":{\"k\":\"v\"}}}", i);
		EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/qlim/configmaps", body));
	}
	/* "k!=zzz...": a selector that, ignored, matches all three */
	static char target[1400];
	const char *base = "/api/v1/namespaces/qlim/configmaps?labelSelector=k%21%3D";
	size_t o = (size_t)snprintf(target, sizeof(target), "%s", base);
	memset(target + o, 'z', 600);
	target[o + 600] = 0;
	EXPECT(fx, 400, req(fx, "DELETE", target, NULL));
	expect_msg(fx, "labelSelector");
	expect_msg(fx, "over the limit of 511 (K32_API_SELECTOR_LEN - 1)");
	assert_int_equal(cm_count(fx, "qlim"), 3);
	EXPECT(fx, 400, req(fx, "GET", target, NULL));
	expect_msg(fx, "603 bytes long");
	strcat(target, "&watch=true");
	EXPECT(fx, 400, req(fx, "GET", target, NULL));
	/* the same through a field selector */
	o = (size_t)snprintf(
	    target, sizeof(target), "%s",
	    "/api/v1/namespaces/qlim/configmaps?fieldSelector=metadata.name%21%3D");
	memset(target + o, 'z', 600);
	target[o + 600] = 0;
	EXPECT(fx, 400, req(fx, "DELETE", target, NULL));
	expect_msg(fx, "fieldSelector");
	assert_int_equal(cm_count(fx, "qlim"), 3);
	/* a bad escape is not an absent selector either */
	EXPECT(fx, 400,
	       req(fx, "DELETE", "/api/v1/namespaces/qlim/configmaps?labelSelector=k%3", NULL));
	expect_msg(fx, "percent-encoding");
	assert_int_equal(cm_count(fx, "qlim"), 3);
	/* dryRun takes only All: anything else is refused, not a real write */
	EXPECT(fx, 400,
	       req(fx, "POST", "/api/v1/namespaces/qlim/configmaps?dryRun=All1",
		   "{\"metadata\":{\"name\":\"dry\"}}"));
	expect_msg(fx, "dryRun=\\\"All1\\\" is not valid: expected All");
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/qlim/configmaps/dry", NULL));
	EXPECT(fx, 400,
	       req(fx, "DELETE", "/api/v1/namespaces/qlim/configmaps/c0?dryRun=true", NULL));
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces/qlim/configmaps?dryRun=All",
		   "{\"metadata\":{\"name\":\"dry\"}}"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/qlim/configmaps/dry", NULL));
	/* the other enumerations and kinds */
	EXPECT(fx, 400,
	       req(fx, "POST", "/api/v1/namespaces/qlim/configmaps?fieldValidation=strict",
		   "{\"metadata\":{\"name\":\"fv\"}}"));
	expect_msg(fx, "expected Strict, Warn, Ignore");
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/qlim/configmaps/fv", NULL));
	EXPECT(
	    fx, 400,
	    req(fx, "DELETE", "/api/v1/namespaces/qlim/configmaps/c0?propagationPolicy=Now", NULL));
	EXPECT(
	    fx, 400,
	    req(fx, "DELETE", "/api/v1/namespaces/qlim/configmaps/c0?gracePeriodSeconds=-5", NULL));
	EXPECT(fx, 400, req(fx, "GET", "/api/v1/namespaces/qlim/configmaps?watch=maybe", NULL));
	EXPECT(fx, 400,
	       req(fx, "GET", "/api/v1/namespaces/qlim/configmaps?timeoutSeconds=1e3", NULL));
	assert_int_equal(cm_count(fx, "qlim"), 3);
	/* a fieldManager over Kubernetes' 128 bytes */
	char fm[300] = "/api/v1/namespaces/qlim/configmaps?fieldManager=";
	o = strlen(fm);
	memset(fm + o, 'm', 129);
	fm[o + 129] = 0;
	EXPECT(fx, 400, req(fx, "POST", fm, "{\"metadata\":{\"name\":\"fm\"}}"));
	expect_msg(fx, "API_FIELD_MANAGER_MAX");
	fm[o + 128] = 0;
	EXPECT(fx, 201, req(fx, "POST", fm, "{\"metadata\":{\"name\":\"fm\"}}"));
	/* the in-process watch checks its query as well */
	struct api_watch *w = NULL;
	struct k32_err err;
	o = (size_t)snprintf(target, sizeof(target), "%s", base);
	memset(target + o, 'z', 600);
	target[o + 600] = 0;
	assert_int_equal(api_watch_open(fx->api, target, &w, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "labelSelector"));
	/* every 404 has details (kubectl debug dereferences them and panicked without) */
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/nope", NULL));
	expect_msg(fx, "\"details\":{}");
	EXPECT(fx, 404,
	       req(fx, "PATCH", "/api/v1/namespaces/qlim/pods/x/ephemeralcontainers", "{}"));
	expect_msg(fx, "not supported by kube32");
	expect_msg(fx, "\"details\":{\"kind\":\"pods\"}");
	/* /metrics counts what was answered, by verb, resource and code */
	EXPECT(fx, 200, req(fx, "GET", "/metrics", NULL));
	expect_msg(fx, "# TYPE apiserver_request_total counter\n");
	expect_msg(fx, "apiserver_request_total{verb=\"DELETECOLLECTION\",group=\"\","
		       "resource=\"configmaps\",subresource=\"\",code=\"400\"} 3\n");
	expect_msg(fx, "apiserver_request_total{verb=\"PATCH\",group=\"\",resource=\"pods\","
		       "subresource=\"ephemeralcontainers\",code=\"404\"} 1\n");
	expect_msg(fx, "apiserver_request_duration_seconds_bucket{verb=\"POST\",le=\"+Inf\"}");
	expect_msg(fx, "# TYPE kube32_store_revision gauge\nkube32_store_revision ");
	/* the WAL fsync histogram under etcd's name (memory-only store here: no fsync yet) */
	expect_msg(fx, "# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n");
	expect_msg(fx, "etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 0\n");
	expect_msg(fx, "etcd_disk_wal_fsync_duration_seconds_count 0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crud),
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_query_limits),
	    cmocka_unit_test(test_workload),
	    cmocka_unit_test(test_delete),
	    cmocka_unit_test(test_pods_and_nodes),
	    cmocka_unit_test(test_protobuf_and_events),
	    cmocka_unit_test(test_watch),
	    cmocka_unit_test(test_inproc_watch),
	    cmocka_unit_test(test_list_gzip_cache),
	    cmocka_unit_test(test_server_side_apply),
	};
	int failed = cmocka_run_group_tests(tests, fx_setup, fx_teardown);
	/* no message anywhere in the suite was cut (issue 17; api_msg_test drives them all) */
	if (api_fail_cut_count())
		fprintf(stderr, "%zu API messages were cut (api_fail_cut_count)\n",
			api_fail_cut_count());
	return failed || api_fail_cut_count() != 0;
}
