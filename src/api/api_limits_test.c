/*
 * api_limits_test.c - the API server at the store's limits: a store full of ConfigMaps
 * still takes Lease renewals, node status writes and deletes (the store's reserve, which
 * the API uses for those writes only), and answers the rest 429 naming the limit; Events
 * past their share of the store evict the oldest ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_int.h"
#include "api/api.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct k32_buf out;
};

static void fx_open(struct fx *fx, size_t max_bytes, uint32_t max_objects)
{
	struct k32_err err;
	memset(fx, 0, sizeof(*fx));
	k32_log_set_stderr(false);
	struct store_config sc = {.max_bytes = max_bytes, .max_objects = max_objects};
	assert_int_equal(store_open(&sc, &fx->store, &err), K32_OK);
	struct api_config ac = {.store = fx->store, .bootstrap = true};
	if (api_server_new(&ac, &fx->api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx->out, k32_default_allocator(), 1 << 20, "test response");
}

static void fx_close(struct fx *fx)
{
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
}

/* Runs one request as the admin; returns the code; the body is in fx->out. */
static int req(struct fx *fx, const char *method, const char *target, const char *body)
{
	struct k32_err err;
	int code = 0;
	const char *ct = !strcmp(method, "PATCH") ? "application/merge-patch+json"
			 : body			  ? "application/json"
						  : NULL;
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do(fx->api, method, target, ct, body, body ? strlen(body) : 0, &code,
				&fx->out, &err),
			 K32_OK);
	return code;
}

#define EXPECT(fx, want, call)                                                                     \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		if (got_ != (want))                                                                \
			fail_msg("line %d: HTTP %d, want %d: %s", __LINE__, got_, (want),          \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

/* Creates ConfigMaps in demo with data of pad bytes until the store refuses one (429);
 * returns how many went in. */
static int fill(struct fx *fx, const char *prefix, size_t pad)
{
	static char body[4096];
	char data[2048];
	int n = 0;
	assert_true(pad < sizeof(data));
	memset(data, 'x', pad);
	data[pad] = '\0';
	for (;; n++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"%s-%d\"},\"data\":{\"d\":\"%s\"}}", prefix, n,
			 data);
		int code = req(fx, "POST", "/api/v1/namespaces/demo/configmaps", body);
		if (code == 429)
			return n;
		if (code != 201)
			fail_msg("creating %s-%d: HTTP %d: %s", prefix, n, code,
				 k32_buf_cstr(&fx->out));
		assert_true(n < 100000);
	}
}

static void test_full_store_keeps_essential_writes(void **state)
{
	struct fx fx;
	(void)state;
	fx_open(&fx, 256 * 1024, 0);
	EXPECT(&fx, 201,
	       req(&fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"demo\"}}"));
	EXPECT(&fx, 201, req(&fx, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
		   "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"holderIdentity\":\"n1\","
		   "\"leaseDurationSeconds\":40,\"renewTime\":\"2026-01-01T00:00:00.000000Z\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, "POST", "/api/v1/namespaces/demo/configmaps",
		   "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"example.com/keep\"]}}"));
	/* big ones, then small ones: what is left below the reserve is less than a small one */
	int big = fill(&fx, "big", 1024), small = fill(&fx, "small", 0);
	assert_true(big > 100);
	(void)small;
	const char *msg = k32_buf_cstr(&fx.out);
	assert_non_null(strstr(msg, "K32_STORE_MAX_BYTES"));
	assert_non_null(strstr(msg, "K32_STORE_RESERVE_PCT"));
	assert_non_null(strstr(msg, "raise the limit"));
	struct store_stats ss;
	store_get_stats(fx.store, &ss);
	assert_true(ss.object_bytes <= ss.max_bytes - ss.reserve_bytes);

	/* growing writes that are not essential are refused: a Node's labels, a ConfigMap */
	static const char grow[] =
	    "{\"metadata\":{\"annotations\":{\"example.com/note\":\"long enough to grow the "
	    "object by more than the room that is left below the reserve: 0123456789 0123456789 "
	    "0123456789 0123456789 0123456789 0123456789 0123456789\"}}}";
	EXPECT(&fx, 429, req(&fx, "PATCH", "/api/v1/nodes/n1", grow));
	EXPECT(&fx, 429, req(&fx, "PATCH", "/api/v1/namespaces/demo/configmaps/big-0", grow));

	/* a Lease renewal (growing it too: the holder changes to a longer name) */
	EXPECT(&fx, 200,
	       req(&fx, "PATCH",
		   "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
		   "{\"spec\":{\"holderIdentity\":\"n1-with-a-much-longer-holder-identity-than-"
		   "before-0123456789-0123456789-0123456789\",\"renewTime\":"
		   "\"2026-01-01T00:00:10.000000Z\"}}"));
	/* a node status write that adds conditions */
	EXPECT(
	    &fx, 200,
	    req(&fx, "PATCH", "/api/v1/nodes/n1/status",
		"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
		"\"KubeletReady\",\"message\":\"kubelet is posting ready status\","
		"\"lastHeartbeatTime\":\"2026-01-01T00:00:10Z\",\"lastTransitionTime\":"
		"\"2026-01-01T00:00:10Z\"},{\"type\":\"MemoryPressure\",\"status\":\"False\","
		"\"reason\":\"KubeletHasSufficientMemory\",\"message\":\"kubelet has sufficient "
		"memory available\",\"lastHeartbeatTime\":\"2026-01-01T00:00:10Z\","
		"\"lastTransitionTime\":\"2026-01-01T00:00:10Z\"}]}}"));
	/* deletes: one that only marks the object (its finalizer holds it), one that removes */
	EXPECT(&fx, 200, req(&fx, "DELETE", "/api/v1/namespaces/demo/configmaps/held", NULL));
	EXPECT(&fx, 200, req(&fx, "GET", "/api/v1/namespaces/demo/configmaps/held", NULL));
	assert_non_null(strstr(k32_buf_cstr(&fx.out), "deletionTimestamp"));
	EXPECT(&fx, 200, req(&fx, "DELETE", "/api/v1/namespaces/demo/configmaps/big-1", NULL));
	EXPECT(&fx, 404, req(&fx, "GET", "/api/v1/namespaces/demo/configmaps/big-1", NULL));
	store_get_stats(fx.store, &ss);
	assert_true(ss.object_bytes <= ss.max_bytes);
	fx_close(&fx);
}

/* Number of Events in demo, and whether the named one is among them. */
static int events_in_demo(struct fx *fx, const char *name, bool *has)
{
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/demo/events", NULL));
	cJSON *l = cJSON_ParseWithLength(k32_buf_cstr(&fx->out), fx->out.len);
	const cJSON *items = cJSON_GetObjectItem(l, "items"), *it;
	*has = false;
	cJSON_ArrayForEach(it, items)
	{
		const char *n = cJSON_GetStringValue(k32_json_find(it, "metadata.name"));
		if (n && !strcmp(n, name))
			*has = true;
	}
	int count = cJSON_GetArraySize(items);
	cJSON_Delete(l);
	return count;
}

static void post_event(struct fx *fx, int i, size_t pad)
{
	static char body[4096];
	char msg[2048];
	assert_true(pad < sizeof(msg));
	memset(msg, 'm', pad);
	msg[pad] = '\0';
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"ev-%03d\"},\"involvedObject\":{\"kind\":\"Pod\","
		 "\"name\":\"p\"},\"reason\":\"Started\",\"message\":\"%s\",\"type\":\"Normal\"}",
		 i, msg);
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/demo/events", body));
}

static void test_events_bounded_by_count(void **state)
{
	struct fx fx;
	bool has;
	(void)state;
	fx_open(&fx, 0, 200); /* Events may take K32_API_EVENTS_OBJECTS_PCT of 200 objects */
	const int max = 200 * K32_API_EVENTS_OBJECTS_PCT / 100;
	EXPECT(&fx, 201,
	       req(&fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"demo\"}}"));
	for (int i = 0; i < max + 20; i++)
		post_event(&fx, i, 8);
	int n = events_in_demo(&fx, "ev-000", &has);
	assert_true(n <= max);
	assert_true(n >= max - K32_API_EVENT_GC_BATCH);
	assert_false(has); /* the oldest went first */
	events_in_demo(&fx, "ev-019", &has);
	assert_false(has);
	char last[16];
	snprintf(last, sizeof(last), "ev-%03d", max + 19);
	events_in_demo(&fx, last, &has);
	assert_true(has);
	/* a write renews an Event: rewrite the oldest left, then push past the bound again */
	EXPECT(&fx, 200, req(&fx, "GET", "/api/v1/namespaces/demo/events", NULL));
	cJSON *l = cJSON_ParseWithLength(k32_buf_cstr(&fx.out), fx.out.len);
	char oldest[32], path[96];
	snprintf(oldest, sizeof(oldest), "%s",
		 cJSON_GetStringValue(k32_json_find(
		     cJSON_GetArrayItem(cJSON_GetObjectItem(l, "items"), 0), "metadata.name")));
	cJSON_Delete(l);
	snprintf(path, sizeof(path), "/api/v1/namespaces/demo/events/%s", oldest);
	EXPECT(&fx, 200, req(&fx, "PATCH", path, "{\"count\":2}"));
	for (int i = max + 20; i < max + 40; i++)
		post_event(&fx, i, 8);
	assert_true(events_in_demo(&fx, oldest, &has) <= max);
	assert_true(has);
	fx_close(&fx);
}

static void test_events_bounded_by_bytes(void **state)
{
	struct fx fx;
	bool has;
	(void)state;
	const size_t store_bytes = 128 * 1024;
	fx_open(&fx, store_bytes, 0);
	EXPECT(&fx, 201,
	       req(&fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"demo\"}}"));
	for (int i = 0; i < 120; i++) /* ~1.3 KiB each: ~150 KiB, past the Events' share */
		post_event(&fx, i, 1024);
	int n = events_in_demo(&fx, "ev-000", &has);
	assert_false(has);
	assert_true(n < 120);
	size_t bytes = 0;
	EXPECT(&fx, 200, req(&fx, "GET", "/api/v1/namespaces/demo/events", NULL));
	cJSON *l = cJSON_ParseWithLength(k32_buf_cstr(&fx.out), fx.out.len);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(l, "items"))
	{
		char *t = cJSON_PrintUnformatted(it);
		bytes += strlen(t);
		cJSON_free(t);
	}
	cJSON_Delete(l);
	assert_true(bytes <= store_bytes / 100 * K32_API_EVENTS_BYTES_PCT);
	events_in_demo(&fx, "ev-119", &has);
	assert_true(has);
	fx_close(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full_store_keeps_essential_writes),
	    cmocka_unit_test(test_events_bounded_by_count),
	    cmocka_unit_test(test_events_bounded_by_bytes),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	/* no message anywhere in the suite was cut (issue 17; api_msg_test drives them all) */
	if (api_fail_cut_count())
		fprintf(stderr, "%zu API messages were cut (api_fail_cut_count)\n",
			api_fail_cut_count());
	return failed || api_fail_cut_count() != 0;
}
