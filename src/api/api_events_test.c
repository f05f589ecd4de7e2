/*
 * api_events_test.c - one Event store served through core/v1 and events.k8s.io/v1: an Event
 * created through either API is stored once and read through both, each in its own shape
 * (get, list, watch, field selectors on each API's names); a patch through events.k8s.io
 * changes the stored core Event; the conversion's field mapping both ways.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_int.h"
#include "api/api.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#define CORE "/api/v1/namespaces/ev/events"
#define V1   "/apis/events.k8s.io/v1/namespaces/ev/events"

struct fx {
	struct store *store;
	struct api_server *api;
	struct k32_buf out;
	cJSON *j; /* the last answer, parsed */
};

static int setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	struct store_config sc = {.history_events = 64};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true};
	if (api_server_new(&ac, &fx.api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx.out, k32_default_allocator(), 1 << 20, "test response");
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	cJSON_Delete(fx->j);
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	return 0;
}

/* Runs one request as the admin; returns the code; the answer is parsed into fx->j. */
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
	cJSON_Delete(fx->j);
	fx->j = cJSON_Parse(k32_buf_cstr(&fx->out));
	return code;
}

#define EXPECT(fx, want, call)                                                                     \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		if (got_ != (want))                                                                \
			fail_msg("line %d: HTTP %d, want %d: %s", __LINE__, got_, (want),          \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

/* The string at path of fx->j ("" when missing); "items.N.rest" looks into item N. */
static const char *at(struct fx *fx, const char *path)
{
	const cJSON *o = fx->j;
	if (!strncmp(path, "items.", 6)) {
		char *rest;
		long i = strtol(path + 6, &rest, 10);
		o = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "items"), (int)i);
		path = rest + 1;
	}
	const char *v = cJSON_GetStringValue(k32_json_find(o, path));
	return v ? v : "";
}

static double num(struct fx *fx, const char *path)
{
	const cJSON *v = k32_json_find(fx->j, path);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char core_ev[] =
    "{\"metadata\":{\"name\":\"c1\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web-1\","
    "\"namespace\":\"ev\"},\"reason\":\"Started\",\"message\":\"started the pod\","
    "\"type\":\"Normal\",\"count\":3,\"source\":{\"component\":\"kubelet\",\"host\":\"mcu-1\"},"
    "\"firstTimestamp\":\"2026-01-01T10:00:00Z\",\"lastTimestamp\":\"2026-01-01T10:05:00Z\"}";

static const char v1_ev[] =
    "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"n1\"},"
    "\"regarding\":{\"kind\":\"Deployment\",\"name\":\"api\",\"namespace\":\"ev\"},"
    "\"reason\":\"ScalingReplicaSet\",\"note\":\"scaled up to 2\",\"type\":\"Normal\","
    "\"action\":\"Scale\",\"eventTime\":\"2026-01-01T11:00:00.123456Z\","
    "\"reportingController\":\"deployment-controller\",\"reportingInstance\":\"ctrl-0\"}";

static void test_one_store(void **state)
{
	struct fx *fx = *state;
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ev\"}}"));
	/* created through core/v1, read through events.k8s.io/v1: converted */
	EXPECT(fx, 201, req(fx, "POST", CORE, core_ev));
	EXPECT(fx, 200, req(fx, "GET", V1 "/c1", NULL));
	assert_string_equal(at(fx, "apiVersion"), "events.k8s.io/v1");
	assert_string_equal(at(fx, "kind"), "Event");
	assert_string_equal(at(fx, "regarding.name"), "web-1");
	assert_string_equal(at(fx, "note"), "started the pod");
	assert_string_equal(at(fx, "reportingController"), "kubelet"); /* from source */
	assert_string_equal(at(fx, "reportingInstance"), "mcu-1");
	assert_string_equal(at(fx, "deprecatedSource.component"), "kubelet");
	assert_string_equal(at(fx, "deprecatedFirstTimestamp"), "2026-01-01T10:00:00Z");
	assert_string_equal(at(fx, "deprecatedLastTimestamp"), "2026-01-01T10:05:00Z");
	assert_int_equal((int)num(fx, "deprecatedCount"), 3);
	assert_int_equal((int)num(fx, "series.count"), 3);
	assert_string_equal(at(fx, "series.lastObservedTime"), "2026-01-01T10:05:00.000000Z");
	assert_null(k32_json_find(fx->j, "involvedObject"));
	assert_null(k32_json_find(fx->j, "message"));
	assert_null(k32_json_find(fx->j, "count"));
	/* and through core/v1 as it was written, no series made up */
	EXPECT(fx, 200, req(fx, "GET", CORE "/c1", NULL));
	assert_string_equal(at(fx, "apiVersion"), "v1");
	assert_string_equal(at(fx, "involvedObject.name"), "web-1");
	assert_string_equal(at(fx, "message"), "started the pod");
	assert_null(k32_json_find(fx->j, "series"));
	assert_null(k32_json_find(fx->j, "regarding"));

	/* created through events.k8s.io/v1: stored once, as a core Event */
	EXPECT(fx, 201, req(fx, "POST", V1, v1_ev));
	assert_string_equal(at(fx, "apiVersion"), "events.k8s.io/v1");
	assert_string_equal(at(fx, "note"), "scaled up to 2");
	EXPECT(fx, 200, req(fx, "GET", CORE "/n1", NULL));
	assert_string_equal(at(fx, "apiVersion"), "v1");
	assert_string_equal(at(fx, "involvedObject.kind"), "Deployment");
	assert_string_equal(at(fx, "message"), "scaled up to 2");
	assert_string_equal(at(fx, "reportingComponent"), "deployment-controller");
	assert_string_equal(at(fx, "reportingInstance"), "ctrl-0");
	assert_string_equal(at(fx, "action"), "Scale");
	assert_string_equal(at(fx, "eventTime"), "2026-01-01T11:00:00.123456Z");
	assert_null(k32_json_find(fx->j, "note"));
	/* the same name through either API is the same object */
	EXPECT(fx, 409,
	       req(fx, "POST", CORE, "{\"metadata\":{\"name\":\"n1\"},\"message\":\"x\"}"));
	struct store_key key = {.group = "events.k8s.io", .resource = "events", .ns = "ev"};
	struct store_list list;
	struct store_list_opts opts = {0};
	struct k32_err err;
	memset(&list, 0, sizeof(list));
	assert_int_equal(store_list(fx->store, &key, &opts, &list, &err), K32_OK);
	assert_int_equal(list.count, 0); /* nothing under the old second key space */
	store_list_fini(fx->store, &list);

	/* lists: both APIs list both Events, each in its own shape */
	EXPECT(fx, 200, req(fx, "GET", CORE, NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 2);
	assert_string_equal(at(fx, "items.1.message"), "scaled up to 2");
	EXPECT(fx, 200, req(fx, "GET", V1, NULL));
	assert_string_equal(at(fx, "kind"), "EventList");
	assert_string_equal(at(fx, "apiVersion"), "events.k8s.io/v1");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 2);
	assert_string_equal(at(fx, "items.0.note"), "started the pod");
	assert_string_equal(at(fx, "items.0.regarding.kind"), "Pod");
	assert_string_equal(at(fx, "items.1.reportingController"), "deployment-controller");
	EXPECT(fx, 200, req(fx, "GET", "/apis/events.k8s.io/v1/events", NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 2);

	/* field selectors on each API's own names */
	EXPECT(fx, 200, req(fx, "GET", V1 "?fieldSelector=regarding.name%3Dweb-1", NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 1);
	assert_string_equal(at(fx, "items.0.metadata.name"), "c1");
	EXPECT(fx, 200, req(fx, "GET", V1 "?fieldSelector=reportingController%3Dkubelet", NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 1);
	assert_string_equal(at(fx, "items.0.metadata.name"), "c1");
	EXPECT(fx, 200,
	       req(fx, "GET",
		   V1 "?fieldSelector=reportingController%3Ddeployment-controller,type%3DNormal",
		   NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 1);
	assert_string_equal(at(fx, "items.0.metadata.name"), "n1");
	EXPECT(fx, 200, req(fx, "GET", CORE "?fieldSelector=involvedObject.name%3Dapi", NULL));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fx->j, "items")), 1);
	assert_string_equal(at(fx, "items.0.metadata.name"), "n1");
	/* each API refuses the other's names */
	EXPECT(fx, 400, req(fx, "GET", V1 "?fieldSelector=involvedObject.name%3Dapi", NULL));
	EXPECT(fx, 400, req(fx, "GET", CORE "?fieldSelector=regarding.name%3Dapi", NULL));

	/* a patch through events.k8s.io edits that view and changes the stored core Event */
	EXPECT(fx, 200,
	       req(fx, "PATCH", V1 "/c1", "{\"note\":\"restarted\",\"deprecatedCount\":4}"));
	assert_string_equal(at(fx, "note"), "restarted");
	assert_int_equal((int)num(fx, "deprecatedCount"), 4);
	EXPECT(fx, 200, req(fx, "GET", CORE "/c1", NULL));
	assert_string_equal(at(fx, "message"), "restarted");
	assert_int_equal((int)num(fx, "count"), 4);
	assert_string_equal(at(fx, "involvedObject.name"), "web-1");
	assert_string_equal(at(fx, "source.host"), "mcu-1");
	assert_null(k32_json_find(fx->j, "note"));
	assert_null(k32_json_find(fx->j, "deprecatedCount"));
	/* the series the view made up for count 3 is not stored as a stale one */
	assert_null(k32_json_find(fx->j, "series"));
	/* an update (PUT) of the view, and a delete through events.k8s.io */
	EXPECT(fx, 200, req(fx, "GET", V1 "/n1", NULL));
	cJSON_DeleteItemFromObject(fx->j, "note");
	cJSON_AddStringToObject(fx->j, "note", "scaled up to 3");
	char *body = cJSON_PrintUnformatted(fx->j);
	EXPECT(fx, 200, req(fx, "PUT", V1 "/n1", body));
	cJSON_free(body);
	EXPECT(fx, 200, req(fx, "GET", CORE "/n1", NULL));
	assert_string_equal(at(fx, "message"), "scaled up to 3");
	EXPECT(fx, 200, req(fx, "DELETE", V1 "/n1", NULL));
	EXPECT(fx, 404, req(fx, "GET", CORE "/n1", NULL));
}

static void test_watch(void **state)
{
	struct fx *fx = *state;
	struct api_watch *w = NULL;
	struct k32_err err;
	struct k32_buf ev;
	k32_buf_init(&ev, k32_default_allocator(), 1 << 20, "test watch");
	if (api_watch_open(fx->api, V1, &w, &err))
		fail_msg("api_watch_open: %s", err.msg);
	/* the existing core Event, converted */
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	cJSON *line = cJSON_Parse(k32_buf_cstr(&ev));
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "type")), "ADDED");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "object.apiVersion")),
			    "events.k8s.io/v1");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "object.note")), "restarted");
	cJSON_Delete(line);
	k32_buf_reset(&ev);
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_ERR_SHOULD_WAIT);
	/* a new core Event reaches the events.k8s.io watch in its shape */
	EXPECT(fx, 201,
	       req(fx, "POST", CORE,
		   "{\"metadata\":{\"name\":\"c2\"},\"involvedObject\":{\"kind\":\"Node\","
		   "\"name\":\"mcu-2\"},\"reason\":\"Ready\",\"message\":\"node ready\","
		   "\"type\":\"Normal\",\"source\":{\"component\":\"kubelet\"}}"));
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	line = cJSON_Parse(k32_buf_cstr(&ev));
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "type")), "ADDED");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "object.regarding.name")),
			    "mcu-2");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "object.note")), "node ready");
	assert_null(k32_json_find(line, "object.message"));
	assert_non_null(k32_json_find(line, "object.metadata.resourceVersion"));
	cJSON_Delete(line);
	k32_buf_reset(&ev);
	/* its deletion through core/v1 too, with the deletion's revision */
	EXPECT(fx, 200, req(fx, "DELETE", CORE "/c2", NULL));
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	line = cJSON_Parse(k32_buf_cstr(&ev));
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "type")), "DELETED");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(line, "object.regarding.kind")),
			    "Node");
	char rv[24];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)store_rev(fx->store));
	assert_string_equal(
	    cJSON_GetStringValue(k32_json_find(line, "object.metadata.resourceVersion")), rv);
	cJSON_Delete(line);
	api_watch_close(w);

	/* a watch with a field selector on events.k8s.io's names */
	assert_int_equal(
	    api_watch_open(fx->api, V1 "?fieldSelector=regarding.name%3Dweb-9", &w, &err), K32_OK);
	k32_buf_reset(&ev);
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_ERR_SHOULD_WAIT);
	EXPECT(fx, 201,
	       req(fx, "POST", CORE,
		   "{\"metadata\":{\"name\":\"c3\"},\"involvedObject\":{\"kind\":\"Pod\","
		   "\"name\":\"web-9\"},\"reason\":\"Killing\",\"message\":\"stopping\"}"));
	assert_int_equal(api_watch_next(w, &ev, K32_NO_WAIT, &err), K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&ev), "\"note\":\"stopping\""));
	api_watch_close(w);
	k32_buf_fini(&ev);
}

/* The mapping both ways on its own, and a round trip that keeps a core Event as it was. */
static void test_convert(void **state)
{
	(void)state;
	cJSON *e = cJSON_Parse(core_ev);
	assert_non_null(e);
	char *before = cJSON_PrintUnformatted(e);
	api_event_to_v1(e);
	assert_string_equal(cJSON_GetStringValue(k32_json_find(e, "deprecatedSource.host")),
			    "mcu-1");
	assert_non_null(k32_json_find(e, "series"));
	api_event_to_core(e);
	assert_null(k32_json_find(e, "series"));
	assert_string_equal(cJSON_GetStringValue(k32_json_find(e, "apiVersion")), "v1");
	cJSON_DeleteItemFromObject(e, "apiVersion");
	/* the reporter named by source is now also named by reportingComponent/Instance */
	assert_string_equal(cJSON_GetStringValue(k32_json_find(e, "reportingComponent")),
			    "kubelet");
	cJSON_DeleteItemFromObject(e, "reportingComponent");
	cJSON_DeleteItemFromObject(e, "reportingInstance");
	cJSON *orig = cJSON_Parse(before);
	assert_true(cJSON_Compare(orig, e, true));
	cJSON_Delete(orig);
	cJSON_free(before);
	cJSON_Delete(e);
	/* a real series (events.k8s.io reporters) is kept both ways */
	e = cJSON_Parse("{\"series\":{\"count\":7,\"lastObservedTime\":\"2026-01-01T10:00:00.5Z\"},"
			"\"count\":7,\"lastTimestamp\":\"2026-01-01T10:00:00Z\"}");
	api_event_to_v1(e);
	api_event_to_core(e);
	assert_string_equal(cJSON_GetStringValue(k32_json_find(e, "series.lastObservedTime")),
			    "2026-01-01T10:00:00.5Z");
	cJSON_Delete(e);
	/* not objects: left alone */
	api_event_to_v1(NULL);
	api_event_to_core(NULL);
	assert_false(api_events_v1(api_registry_find("", "v1", "events")));
	assert_true(api_events_v1(api_registry_find("events.k8s.io", "v1", "events")));
}

/* An Event left under the old events.k8s.io key space (a store written before the two APIs
 * shared one) is reachable by no request: the Event GC removes it. */
static void test_legacy_gc(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	static const char old[] = "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
				  "\"metadata\":{\"name\":\"old\",\"namespace\":\"ev\"}}";
	struct store_key key = {
	    .group = "events.k8s.io", .resource = "events", .ns = "ev", .name = "old"};
	struct store_value val = {.data = old, .len = sizeof(old) - 1, .rv_off = STORE_NO_STAMP};
	assert_int_equal(store_create(fx->store, &key, &val, NULL, &err), K32_OK);
	uint32_t deleted = 0;
	assert_int_equal(api_events_gc(fx->api, k32_plat()->wall_s(), &deleted, &err), K32_OK);
	assert_true(deleted >= 1); /* and c1, last seen in January */
	struct store_obj *o = NULL;
	assert_int_equal(store_get(fx->store, &key, &o, &err), K32_ERR_NOT_FOUND);
	store_obj_unref(fx->store, o);
	/* an Event of the one store younger than the TTL is kept */
	EXPECT(fx, 200, req(fx, "GET", CORE "/c3", NULL));
	/* deletecollection through events.k8s.io, selected by its own field names */
	EXPECT(fx, 200, req(fx, "DELETE", V1 "?fieldSelector=regarding.name%3Dweb-8", NULL));
	EXPECT(fx, 200, req(fx, "GET", CORE "/c3", NULL));
	EXPECT(fx, 200, req(fx, "DELETE", V1 "?fieldSelector=regarding.name%3Dweb-9", NULL));
	EXPECT(fx, 404, req(fx, "GET", CORE "/c3", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_store),
	    cmocka_unit_test(test_watch),
	    cmocka_unit_test(test_convert),
	    cmocka_unit_test(test_legacy_gc),
	};
	int failed = cmocka_run_group_tests(tests, setup, teardown);
	/* no message anywhere in the suite was cut (issue 17; api_msg_test drives them all) */
	if (api_fail_cut_count())
		fprintf(stderr, "%zu API messages were cut (api_fail_cut_count)\n",
			api_fail_cut_count());
	return failed || api_fail_cut_count() != 0;
}
