/*
 * api_crd_version_test.c - a CRD with two served versions (v1beta1, and v1 the storage
 * version), driven through the in-process API server: writes at either version are stored
 * at v1 (the store's own text is read), reads, lists (cached lists too) and dry-runs answer
 * at the version asked, with only apiVersion differing (conversion strategy None, as
 * kube-apiserver does without a webhook). Moving the storage version to v1beta1 stores the
 * next write there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "store/store.h"

static const char crd_fmt[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"gauges.demo.kube32.io\"},\"spec\":{\"group\":\"demo.kube32.io\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"gauges\",\"singular\":\"gauge\","
    "\"kind\":\"Gauge\"},\"versions\":["
    "{\"name\":\"v1beta1\",\"served\":true,\"storage\":%s,\"schema\":{\"openAPIV3Schema\":{"
    "\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"level\":{\"type\":\"integer\"}}}}}}},"
    "{\"name\":\"v1\",\"served\":true,\"storage\":%s,\"schema\":{\"openAPIV3Schema\":{"
    "\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"level\":{\"type\":\"integer\"}}}}}}}]}}";

struct fx {
	struct store *store;
	struct api_server *api;
	struct k32_buf b;
};

static int req(struct fx *x, const char *method, const char *target, const char *body)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&x->b);
	assert_int_equal(api_do(x->api, method, target, body ? "application/json" : NULL, body,
				body ? strlen(body) : 0, &code, &x->b, &err),
			 K32_OK);
	return code;
}

/* The answer's string at a dotted path ("" when absent). */
static const char *field(struct fx *x, const char *path, char *out, size_t cap)
{
	cJSON *j = cJSON_ParseWithLength((const char *)x->b.data, x->b.len);
	const char *v = cJSON_GetStringValue(k32_json_find(j, path));
	snprintf(out, cap, "%s", v ? v : "");
	cJSON_Delete(j);
	return out;
}

/* The apiVersion the store holds the object with. */
static const char *stored(struct fx *x, const char *name, char *out, size_t cap)
{
	struct store_key k = {
	    .group = "demo.kube32.io", .resource = "gauges", .ns = "default", .name = name};
	struct store_obj *o = NULL;
	struct k32_err err;
	assert_int_equal(store_get(x->store, &k, &o, &err), K32_OK);
	cJSON *j = cJSON_ParseWithLength(store_obj_data(o), o->len);
	snprintf(out, cap, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(j, "apiVersion")));
	assert_memory_equal(store_obj_data(o), "{\"apiVersion\":", 14); /* normalised order */
	cJSON_Delete(j);
	store_obj_unref(x->store, o);
	return out;
}

static void test_versions(void **state)
{
	(void)state;
	k32_log_set_stderr(false);
	struct fx x;
	struct k32_err err;
	struct store_config sc = {.data_dir = NULL, .history_events = 64};
	assert_int_equal(store_open(&sc, &x.store, &err), K32_OK);
	struct api_config ac = {.store = x.store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &x.api, &err), K32_OK);
	k32_buf_init(&x.b, k32_default_allocator(), 1 << 20, "resp");
	char crd[2048], v[96];
	snprintf(crd, sizeof(crd), crd_fmt, "false", "true");
	assert_int_equal(
	    req(&x, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd), 201);

	/* written at v1beta1: answered at v1beta1, stored at v1 */
	static const char g1[] = "{\"apiVersion\":\"demo.kube32.io/v1beta1\",\"kind\":\"Gauge\","
				 "\"metadata\":{\"name\":\"g1\"},\"spec\":{\"level\":3}}";
	assert_int_equal(
	    req(&x, "POST", "/apis/demo.kube32.io/v1beta1/namespaces/default/gauges", g1), 201);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1beta1");
	assert_string_equal(stored(&x, "g1", v, sizeof(v)), "demo.kube32.io/v1");

	/* read at each served version: that version, the same object otherwise */
	assert_int_equal(
	    req(&x, "GET", "/apis/demo.kube32.io/v1/namespaces/default/gauges/g1", NULL), 200);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1");
	char uid1[64];
	field(&x, "metadata.uid", uid1, sizeof(uid1));
	assert_int_equal(
	    req(&x, "GET", "/apis/demo.kube32.io/v1beta1/namespaces/default/gauges/g1", NULL), 200);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1beta1");
	assert_string_equal(field(&x, "metadata.uid", v, sizeof(v)), uid1);
	assert_non_null(strstr(k32_buf_cstr(&x.b), "\"level\":3"));

	/* written at v1 (PUT of what v1beta1 read, re-labelled): stored at v1 still */
	static const char g1v1[] = "{\"apiVersion\":\"demo.kube32.io/v1\",\"kind\":\"Gauge\","
				   "\"metadata\":{\"name\":\"g1\"},\"spec\":{\"level\":4}}";
	assert_int_equal(
	    req(&x, "PUT", "/apis/demo.kube32.io/v1/namespaces/default/gauges/g1", g1v1), 200);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1");
	assert_string_equal(stored(&x, "g1", v, sizeof(v)), "demo.kube32.io/v1");

	/* lists at both versions, twice each (the second from the list cache) */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(
		    req(&x, "GET", "/apis/demo.kube32.io/v1beta1/namespaces/default/gauges", NULL),
		    200);
		assert_string_equal(field(&x, "apiVersion", v, sizeof(v)),
				    "demo.kube32.io/v1beta1");
		cJSON *l = cJSON_ParseWithLength((const char *)x.b.data, x.b.len);
		const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "items"), 0);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "apiVersion")),
				    "demo.kube32.io/v1beta1");
		cJSON_Delete(l);
		assert_int_equal(
		    req(&x, "GET", "/apis/demo.kube32.io/v1/namespaces/default/gauges", NULL), 200);
		l = cJSON_ParseWithLength((const char *)x.b.data, x.b.len);
		it = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "items"), 0);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "apiVersion")),
				    "demo.kube32.io/v1");
		cJSON_Delete(l);
	}

	/* a dry-run create at v1beta1 answers at v1beta1 */
	static const char g2[] = "{\"apiVersion\":\"demo.kube32.io/v1beta1\",\"kind\":\"Gauge\","
				 "\"metadata\":{\"name\":\"g2\"},\"spec\":{\"level\":1}}";
	assert_int_equal(req(&x, "POST",
			     "/apis/demo.kube32.io/v1beta1/namespaces/default/gauges?dryRun=All",
			     g2),
			 201);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1beta1");

	/* the storage version moved to v1beta1: the next write is stored there, and an object
	 * still stored at v1 reads at v1beta1 all the same */
	assert_int_equal(req(&x, "GET",
			     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
			     "gauges.demo.kube32.io",
			     NULL),
			 200);
	char rv[32];
	field(&x, "metadata.resourceVersion", rv, sizeof(rv));
	snprintf(crd, sizeof(crd), crd_fmt, "true", "false");
	cJSON *cj = cJSON_Parse(crd);
	cJSON *md = cJSON_GetObjectItem(cj, "metadata");
	cJSON_AddStringToObject(md, "resourceVersion", rv);
	char *put = cJSON_PrintUnformatted(cj);
	assert_int_equal(req(&x, "PUT",
			     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
			     "gauges.demo.kube32.io",
			     put),
			 200);
	cJSON_free(put);
	cJSON_Delete(cj);
	static const char g3[] = "{\"apiVersion\":\"demo.kube32.io/v1\",\"kind\":\"Gauge\","
				 "\"metadata\":{\"name\":\"g3\"},\"spec\":{\"level\":7}}";
	assert_int_equal(req(&x, "POST", "/apis/demo.kube32.io/v1/namespaces/default/gauges", g3),
			 201);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1");
	assert_string_equal(stored(&x, "g3", v, sizeof(v)), "demo.kube32.io/v1beta1");
	assert_string_equal(stored(&x, "g1", v, sizeof(v)), "demo.kube32.io/v1");
	assert_int_equal(
	    req(&x, "GET", "/apis/demo.kube32.io/v1beta1/namespaces/default/gauges/g1", NULL), 200);
	assert_string_equal(field(&x, "apiVersion", v, sizeof(v)), "demo.kube32.io/v1beta1");
	/* status.storedVersions keeps both */
	assert_int_equal(req(&x, "GET",
			     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
			     "gauges.demo.kube32.io",
			     NULL),
			 200);
	assert_non_null(strstr(k32_buf_cstr(&x.b), "\"storedVersions\":[\"v1\",\"v1beta1\"]"));

	k32_buf_fini(&x.b);
	api_server_free(x.api);
	store_close(x.store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
