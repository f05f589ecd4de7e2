/*
 * hw_devctrl_test.c - the Device controller's reconcile pass against a real API server in
 * this process: driver pods created once per Device with status.driverPod recorded, the
 * younger of two Devices on one address refused with a Conflict condition, Stale after the
 * readings stop, orphaned driver pods deleted, and RFC 3339 parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "api/api.h"
#include "base/k32_log.h"
#include "hw/hw_int.h"

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
	assert_int_equal(req(api, "GET", target, NULL, NULL, b), 200);
	cJSON *j = NULL;
	assert_int_equal(k32_json_parse(k32_buf_cstr(b), b->len, &j, NULL), K32_OK);
	return j;
}

static const char *ready_reason(const cJSON *dev)
{
	const cJSON *c = cJSON_GetArrayItem(k32_json_find(dev, "status.conditions"), 0);
	const cJSON *r = cJSON_GetObjectItem(c, "reason");
	return cJSON_IsString(r) ? r->valuestring : "";
}

static void test_rfc3339_parse(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool ok;
		uint64_t v;
	} cases[] = {{"1970-01-01T00:00:00Z", true, 0},
		     {"2025-01-01T12:00:03Z", true, 1735732803},
		     {"2000-02-29T00:00:00Z", true, 951782400},
		     {"2025-01-01T12:00:03.5Z", true, 1735732803},
		     {"2025-01-01T12:00:03+01:00", false, 0},
		     {"2025-01-01T12:00:03.Z", false, 0},
		     {"2025-13-01T00:00:00Z", false, 0},
		     {"nonsense", false, 0},
		     {NULL, false, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		assert_int_equal(hw_rfc3339_parse(cases[i].s, &v), cases[i].ok);
		if (cases[i].ok)
			assert_int_equal(v, cases[i].v);
		if (cases[i].ok && !strchr(cases[i].s, '.')) {
			char t[24];
			hw_rfc3339(v, t);
			assert_string_equal(t, cases[i].s);
		}
	}
}

#define DEVS "/apis/kube32.io/v1alpha1/namespaces/default/devices"

static void test_reconcile(void **state)
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
	static const char *devs[] = {
	    "{\"metadata\":{\"name\":\"envpro\"},\"spec\":{\"node\":\"cardputer-1\",\"model\":"
	    "\"bme688\",\"address\":119,\"muxChannel\":2}}",
	    "{\"metadata\":{\"name\":\"scale\"},\"spec\":{\"node\":\"cardputer-1\",\"model\":"
	    "\"miniscale\",\"address\":38,\"muxChannel\":1}}",
	    "{\"metadata\":{\"name\":\"envpro-2\"},\"spec\":{\"node\":\"cardputer-1\",\"model\":"
	    "\"bme688\",\"address\":119,\"muxChannel\":2}}",
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(req(api, "POST", DEVS, NULL, devs[i], &b), 201);

	struct hw_devctrl_stats s;
	uint64_t now = 1900000000;
	assert_int_equal(hw_devctrl_run_once(api, now, 10, "24Ki", &s, &err), K32_OK);
	assert_int_equal(s.devices, 3);
	assert_int_equal(s.created, 2);
	assert_int_equal(s.conflicts, 1);
	assert_int_equal(s.deleted, 0);
	cJSON *j = get(api, "/api/v1/namespaces/default/pods/bme688-envpro", &b);
	assert_string_equal(k32_json_find(j, "spec.nodeName")->valuestring, "cardputer-1");
	cJSON_Delete(j);
	j = get(api, "/api/v1/namespaces/default/pods/miniscale-scale", &b);
	cJSON_Delete(j);
	assert_int_equal(
	    req(api, "GET", "/api/v1/namespaces/default/pods/bme688-envpro-2", NULL, NULL, &b),
	    404);
	j = get(api, DEVS "/envpro", &b);
	assert_string_equal(k32_json_find(j, "status.driverPod")->valuestring, "bme688-envpro");
	cJSON_Delete(j);
	j = get(api, DEVS "/envpro-2", &b);
	assert_string_equal(ready_reason(j), "Conflict");
	const cJSON *c0 = cJSON_GetArrayItem(k32_json_find(j, "status.conditions"), 0);
	assert_non_null(strstr(cJSON_GetObjectItem(c0, "message")->valuestring, "default/envpro"));
	cJSON_Delete(j);

	/* the refusal is also an Event on the Device */
	assert_int_equal(req(api, "GET", "/api/v1/namespaces/default/events", NULL, NULL, &b), 200);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"reason\":\"Conflict\""));
	assert_non_null(strstr(k32_buf_cstr(&b), "\"name\":\"envpro-2\""));

	/* a second pass changes nothing */
	assert_int_equal(hw_devctrl_run_once(api, now, 10, "24Ki", &s, &err), K32_OK);
	assert_int_equal(s.created, 0);
	assert_int_equal(s.updated, 0);
	assert_int_equal(s.conflicts, 1);

	/* readings stop: Stale after max(3 poll intervals, 2 heartbeats) + grace */
	assert_int_equal(req(api, "PATCH", DEVS "/envpro/status", "application/merge-patch+json",
			     "{\"status\":{\"readings\":{\"temperature_c\":\"23.64\"},"
			     "\"lastReadTime\":\"2030-03-17T17:46:40Z\",\"conditions\":[{\"type\":"
			     "\"Ready\",\"status\":\"True\",\"reason\":\"Reading\"}]}}",
			     &b),
			 200);
	uint64_t lrt;
	assert_true(hw_rfc3339_parse("2030-03-17T17:46:40Z", &lrt));
	assert_int_equal(hw_devctrl_run_once(api, lrt + 2 * K32_HW_STATUS_HEARTBEAT_S + 10, 10,
					     "24Ki", &s, &err),
			 K32_OK);
	assert_int_equal(s.stale, 0);
	assert_int_equal(hw_devctrl_run_once(api, lrt + 2 * K32_HW_STATUS_HEARTBEAT_S + 11, 10,
					     "24Ki", &s, &err),
			 K32_OK);
	assert_int_equal(s.stale, 1);
	j = get(api, DEVS "/envpro", &b);
	assert_string_equal(ready_reason(j), "Stale");
	cJSON_Delete(j);
	assert_int_equal(hw_devctrl_run_once(api, lrt + 100, 10, "24Ki", &s, &err), K32_OK);
	assert_int_equal(s.stale, 0); /* reported once */

	/* the Device goes: its driver pod goes too */
	assert_int_equal(req(api, "DELETE", DEVS "/scale", NULL, NULL, &b), 200);
	assert_int_equal(hw_devctrl_run_once(api, now, 10, "24Ki", &s, &err), K32_OK);
	assert_int_equal(s.deleted, 1);
	int code =
	    req(api, "GET", "/api/v1/namespaces/default/pods/miniscale-scale", NULL, NULL, &b);
	if (code == 200) { /* graceful deletion: marked, not yet gone */
		j = get(api, "/api/v1/namespaces/default/pods/miniscale-scale", &b);
		assert_non_null(k32_json_find(j, "metadata.deletionTimestamp"));
		cJSON_Delete(j);
	} else {
		assert_int_equal(code, 404);
	}
	k32_buf_fini(&b);
	api_server_free(api);
	store_close(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc3339_parse),
	    cmocka_unit_test(test_reconcile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
