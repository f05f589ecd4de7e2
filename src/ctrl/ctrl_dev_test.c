/*
 * ctrl_dev_test.c - the Device controller (CTRL_DEVICE) against a real API server in this
 * process, through the in-process client, with a fake wall clock: driver pods created once
 * per Device with status.driverPod recorded, the younger of two Devices on one address
 * refused with a Conflict condition and Event, Stale after the readings stop, orphaned
 * driver pods deleted; and src/hw's Device helpers (status publisher, manifest) against the
 * API, which src/hw itself cannot include.
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
#include "hw/hw.h"
#include "store/store.h"

static uint64_t fake_wall;

static uint64_t wall_fn(void *ctx)
{
	(void)ctx;
	return fake_wall;
}

/* One CTRL_DEVICE pass at wall time now; returns the writes it made. */
static uint64_t pass(struct ctrl *c, uint64_t now)
{
	struct ctrl_stats a, b;
	struct k32_err err;
	fake_wall = now;
	ctrl_get_stats(c, &a);
	assert_int_equal(ctrl_run_once(c, CTRL_DEVICE, NULL, &err), K32_OK);
	ctrl_get_stats(c, &b);
	assert_int_equal(b.write_errors, a.write_errors);
	return b.writes - a.writes;
}
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
	struct kclient *kc = NULL;
	struct ctrl *c = NULL;
	assert_int_equal(kclient_inproc_new(api, NULL, &kc, &err), K32_OK);
	struct ctrl_config cc = {.no_task = true, .enable = CTRL_DEVICE, .wall_s = wall_fn};
	assert_int_equal(ctrl_start(&cc, kc, &c, &err), K32_OK);

	uint64_t now = 1900000000;
	/* 2 driver pods + 2 driverPod patches + 1 Conflict */
	assert_int_equal(pass(c, now), 5);
	struct ctrl_stats st;
	ctrl_get_stats(c, &st);
	assert_int_equal(st.device_pods_created, 2);
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

	/* a second pass changes nothing (the Conflict is not reported again) */
	assert_int_equal(pass(c, now), 0);

	/* readings stop: Stale after max(3 poll intervals, 2 heartbeats) + grace */
	assert_int_equal(req(api, "PATCH", DEVS "/envpro/status", "application/merge-patch+json",
			     "{\"status\":{\"readings\":{\"temperature_c\":\"23.64\"},"
			     "\"lastReadTime\":\"2030-03-17T17:46:40Z\",\"conditions\":[{\"type\":"
			     "\"Ready\",\"status\":\"True\",\"reason\":\"Reading\"}]}}",
			     &b),
			 200);
	uint64_t lrt = 1900000000; /* 2030-03-17T17:46:40Z */
	uint64_t grace = K32_CTRL_DEVICE_STALE_GRACE_S;
	assert_int_equal(pass(c, lrt + 2 * K32_HW_STATUS_HEARTBEAT_S + grace), 0);
	j = get(api, DEVS "/envpro", &b);
	assert_string_equal(ready_reason(j), "Reading");
	cJSON_Delete(j);
	assert_int_equal(pass(c, lrt + 2 * K32_HW_STATUS_HEARTBEAT_S + grace + 1), 1);
	j = get(api, DEVS "/envpro", &b);
	assert_string_equal(ready_reason(j), "Stale");
	cJSON_Delete(j);
	assert_int_equal(pass(c, lrt + 100), 0); /* reported once */

	/* the Device goes: its driver pod goes too */
	assert_int_equal(req(api, "DELETE", DEVS "/scale", NULL, NULL, &b), 200);
	assert_int_equal(pass(c, now), 1);
	int code =
	    req(api, "GET", "/api/v1/namespaces/default/pods/miniscale-scale", NULL, NULL, &b);
	if (code == 200) { /* graceful deletion: marked, not yet gone */
		j = get(api, "/api/v1/namespaces/default/pods/miniscale-scale", &b);
		assert_non_null(k32_json_find(j, "metadata.deletionTimestamp"));
		cJSON_Delete(j);
	} else {
		assert_int_equal(code, 404);
	}
	ctrl_stop(c);
	kclient_free(kc);
	k32_buf_fini(&b);
	api_server_free(api);
	store_close(store);
}

static cJSON *parse(const char *s)
{
	cJSON *j = NULL;
	struct k32_err err;
	assert_int_equal(k32_json_parse(s, strlen(s), &j, &err), K32_OK);
	return j;
}

/* A reading set from "key", "value", ... pairs (NULL-terminated). */
static struct hw_readings R(const char *k, ...) {
	struct hw_readings r;
	hw_readings_clear(&r);
	va_list ap;
	va_start(ap, k);
	for (; k; k = va_arg(ap, const char *)) {
		const char *v = va_arg(ap, const char *);
		assert_int_equal(hw_readings_set(&r, k, strlen(k), v, strlen(v)), HW_OK);
	}
	va_end(ap);
	return r;
}

/* ---- src/hw's Device helpers against the API server ---- */

static int
req_api(struct api_server *api, const char *method, const char *target, const char *ct,
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

static void test_api(void **state)
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
	struct k32_buf b, patch;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "resp");
	k32_buf_init(&patch, k32_default_allocator(), 8192, "patch");
	const char *devs = "/apis/kube32.io/v1alpha1/namespaces/default/devices";
	assert_int_equal(
	    req_api(api, "POST", devs, NULL,
		    "{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":\"Device\","
		    "\"metadata\":{\"name\":\"envpro\"},\"spec\":{\"node\":\"cardputer-1\","
		    "\"model\":\"bme688\",\"address\":119,\"bus\":0,\"muxChannel\":2}}",
		    &b),
	    201);
	cJSON *j = parse(k32_buf_cstr(&b));
	struct hw_device d;
	assert_int_equal(hw_device_parse(j, &d, &err), K32_OK);
	cJSON_Delete(j);
	assert_true(d.uid[0] != 0);
	/* the controller's pod manifest is a valid pod */
	k32_buf_reset(&patch);
	assert_int_equal(hw_device_pod_manifest(&d, "24Ki", &patch, &err), K32_OK);
	assert_int_equal(
	    req_api(api, "POST", "/api/v1/namespaces/default/pods", NULL, k32_buf_cstr(&patch), &b),
	    201);
	/* the worked example's readings, through the publisher, into the status */
	struct hw_devstatus st;
	hw_devstatus_init(&st, d.poll_ms, 1000);
	struct hw_readings r = R("temperature_c", "23.64", "pressure_pa", "99987", "humidity_pct",
				 "41.955", "gas_ohm", "117400", (const char *)NULL);
	hw_devstatus_readings(&st, &r, 1000000, 1735732803);
	assert_true(hw_devstatus_due(&st, 1000000, 1735732803));
	k32_buf_reset(&patch);
	char pod[64];
	hw_device_pod_name(&d, pod, sizeof(pod));
	assert_int_equal(hw_devstatus_patch(&st, pod, 1000000, &patch, &err), K32_OK);
	assert_int_equal(
	    req_api(api, "PATCH",
		    "/apis/kube32.io/v1alpha1/namespaces/default/devices/envpro/status",
		    "application/merge-patch+json", k32_buf_cstr(&patch), &b),
	    200);
	assert_int_equal(req_api(api, "GET",
				 "/apis/kube32.io/v1alpha1/namespaces/default/devices/envpro", NULL,
				 NULL, &b),
			 200);
	j = parse(k32_buf_cstr(&b));
	assert_string_equal(k32_json_find(j, "status.readings.temperature_c")->valuestring,
			    "23.64");
	assert_string_equal(k32_json_find(j, "status.readings.gas_ohm")->valuestring, "117400");
	assert_string_equal(k32_json_find(j, "status.lastReadTime")->valuestring,
			    "2025-01-01T12:00:03Z");
	assert_string_equal(k32_json_find(j, "status.driverPod")->valuestring, "bme688-envpro");
	cJSON_Delete(j);

	/* kubectl get devices: the Table over HTTP */
	struct http_server_config hc;
	struct http_server *srv = NULL;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = api;
	assert_int_equal(http_server_start(&hc, &srv, &err), K32_OK);
	api_server_attach_http(api, srv);
	struct http_client_config cc;
	struct http_client *c = NULL;
	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	struct http_client_request hr = {
	    .method = "GET",
	    .target = devs,
	    .headers = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n",
	    .timeout_us = 5000000};
	struct http_client_response resp;
	assert_int_equal(http_client_do(c, &hr, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	const char *t = k32_buf_cstr(&resp.body);
	assert_non_null(strstr(t, "\"kind\":\"Table\""));
	assert_non_null(strstr(t, "temperature_c=23.64"));
	assert_non_null(strstr(t, "cardputer-1"));
	http_client_response_fini(&resp);
	http_client_free(c);
	http_server_stop(srv);
	k32_buf_fini(&b);
	k32_buf_fini(&patch);
	api_server_free(api);
	store_close(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reconcile),
	    cmocka_unit_test(test_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
