/*
 * drivers_node_test.c - Devices to live readings in one process, as a board and the control
 * plane would do it, minus the network: an API server; three Devices on node cardputer-1;
 * the Device controller (src/ctrl, CTRL_DEVICE) creates their driver pods; a small stand-in for the
 * kubelet lists the pods bound to the node, binds each to its Device (hw_node), loads the
 * pod's image (the built driver .wasm) into the runtime with the hw host functions, runs the
 * ticks on a virtual clock over the simulated board, and sends each due status patch to
 * devices/<name>/status. Then `kubectl get devices` (the Table over HTTP) shows the readings,
 * and they change when the simulated values change; a missing device, a bus error and a
 * trapping driver each show as a Ready=False reason on their own Device only.
 *
 * Skips without the built pods (clang/wasm-ld missing); fails then under CI=true.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "hw/hw.h"
#include "wasm/wrt.h"

#define NODE  "cardputer-1"
#define DEVS  "/apis/kube32.io/v1alpha1/namespaces/default/devices"
#define MAXP  4
#define WALL0 1900000000ull

static uint64_t vclock = 1000000;

static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

static uint64_t vwall(void *ud)
{
	(void)ud;
	return WALL0 + vclock / 1000000;
}

static void vsleep(void *ud, uint64_t us)
{
	(void)ud;
	vclock += us;
}

struct kpod { /* the stand-in kubelet's pod record */
	struct hw_node_pod slot;
	uint8_t *bytes;
	size_t len;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t f_tick;
	uint64_t next_us;
	bool dead;
};

static struct {
	struct store *store;
	struct api_server *api;
	struct hw_sim *sim;
	struct hw_bus bus;
	struct hw_node node;
	struct wrt_linker lk;
	struct k32_hostfn_def defs[HW_HOSTFN_COUNT];
	struct kpod pods[MAXP];
	int npods;
	struct k32_buf b;
} T;

static struct hw_pod *pod_of(void *user)
{
	return &((struct kpod *)user)->slot.pod;
}

static const struct hw_pod_env env = {pod_of};

static int req(const char *method, const char *target, const char *ct, const char *body)
{
	int code = 0;
	struct k32_err err;
	k32_buf_reset(&T.b);
	assert_int_equal(
	    api_do(T.api, method, target, ct, body, body ? strlen(body) : 0, &code, &T.b, &err),
	    K32_OK);
	return code;
}

static cJSON *get(const char *target)
{
	assert_int_equal(req("GET", target, NULL, NULL), 200);
	cJSON *j = NULL;
	assert_int_equal(k32_json_parse(k32_buf_cstr(&T.b), T.b.len, &j, NULL), K32_OK);
	return j;
}

static bool built(void)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/bme688.wasm", K32_DRIVERS_DIR);
	return k32_plat()->file_exists(p);
}

/* The kubelet's part: start every driver pod bound to NODE. */
static void kubelet_sync(void)
{
	cJSON *pods = get("/api/v1/pods?fieldSelector=spec.nodeName%3D" NODE);
	const cJSON *p;
	cJSON_ArrayForEach(p, k32_json_find(pods, "items"))
	{
		const cJSON *ann = k32_json_find(p, "metadata.annotations");
		const cJSON *dn = cJSON_GetObjectItemCaseSensitive(ann, "kube32.io/device");
		const char *name = k32_json_find(p, "metadata.name")->valuestring;
		assert_true(cJSON_IsString(dn));
		assert_true(T.npods < MAXP);
		struct kpod *k = &T.pods[T.npods++];
		char target[256], path[512];
		snprintf(target, sizeof(target), DEVS "/%s", dn->valuestring);
		cJSON *dev = get(target);
		struct k32_err err;
		assert_int_equal(hw_node_bind(&T.node, &k->slot, dev, name, &err), K32_OK);
		cJSON_Delete(dev);
		const cJSON *c = cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0);
		snprintf(path, sizeof(path), "%s/%s", K32_DRIVERS_DIR,
			 cJSON_GetObjectItem(c, "image")->valuestring);
		assert_int_equal(k32_plat()->file_read_all(path, k32_default_allocator(), 65536,
							   &k->bytes, &k->len, &err),
				 K32_OK);
		struct wrt_load_opts lo;
		wrt_load_opts_default(&lo);
		assert_int_equal(
		    wrt_module_load(k32_default_allocator(), k->bytes, k->len, &lo, &k->mod, &err),
		    K32_OK);
		struct wrt_limits lim;
		wrt_limits_default(&lim);
		lim.mem_bytes = 2048;
		lim.stack_bytes = 512;
		lim.frames = 16;
		lim.table_elems = 1;
		lim.gas = 1000000;
		assert_int_equal(wrt_instance_new(k->mod, &T.lk, &lim, k32_default_allocator(), k,
						  &k->inst, &err),
				 K32_OK);
		uint32_t f_init;
		uint64_t r = 1;
		assert_int_equal(wrt_export_func(k->inst, "k32_init", &f_init, &err), K32_OK);
		assert_int_equal(wrt_export_func(k->inst, "k32_tick", &k->f_tick, &err), K32_OK);
		assert_int_equal(wrt_invoke(k->inst, f_init, NULL, 0, &r, 1, &err), K32_OK);
		assert_int_equal((int32_t)r, 0);
		k->next_us = vclock;
	}
	cJSON_Delete(pods);
}

static void flush(void)
{
	for (int i = 0; i < T.npods; i++) {
		struct kpod *k = &T.pods[i];
		if (!hw_node_pod_due(&k->slot))
			continue;
		struct k32_buf patch;
		struct k32_err err;
		k32_buf_init(&patch, k32_default_allocator(), 8192, "patch");
		assert_int_equal(hw_node_pod_patch(&k->slot, &patch, &err), K32_OK);
		char target[256];
		snprintf(target, sizeof(target), DEVS "/%s/status", k->slot.dev.name);
		assert_int_equal(
		    req("PATCH", target, "application/merge-patch+json", k32_buf_cstr(&patch)),
		    200);
		k32_buf_fini(&patch);
	}
}

/* The kubelet's part: post the Warning Events owed for failures. */
static int post_events(void)
{
	int n = 0;
	for (int i = 0; i < T.npods; i++) {
		struct k32_buf ev;
		k32_buf_init(&ev, k32_default_allocator(), 8192, "event");
		if (hw_node_pod_event(&T.pods[i].slot, "kubelet", &ev, NULL)) {
			assert_int_equal(req("POST", "/api/v1/namespaces/default/events", NULL,
					     k32_buf_cstr(&ev)),
					 201);
			n++;
		}
		k32_buf_fini(&ev);
	}
	return n;
}

static void run_until(uint64_t until_us)
{
	for (;;) {
		struct kpod *next = NULL;
		for (int i = 0; i < T.npods; i++)
			if (!T.pods[i].dead && (!next || T.pods[i].next_us < next->next_us))
				next = &T.pods[i];
		if (!next || next->next_us > until_us)
			break;
		if (vclock < next->next_us)
			vclock = next->next_us;
		uint64_t r = 0;
		struct k32_err err;
		if (wrt_invoke(next->inst, next->f_tick, NULL, 0, &r, 1, &err) != K32_OK) {
			next->dead = true;
			hw_node_pod_failed(&next->slot, "DriverCrash", err.msg);
		} else {
			int32_t d = (int32_t)(uint32_t)r;
			next->next_us = vclock + (uint64_t)(d < 1 ? 1000 : d) * 1000;
		}
		flush();
	}
	if (vclock < until_us)
		vclock = until_us;
	flush();
}

static const char *reading(const char *dev, const char *key, char *out, size_t cap)
{
	char target[256];
	snprintf(target, sizeof(target), DEVS "/%s", dev);
	cJSON *j = get(target);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(k32_json_find(j, "status.readings"), key);
	snprintf(out, cap, "%s", cJSON_IsString(r) ? r->valuestring : "<none>");
	cJSON_Delete(j);
	return out;
}

static const char *ready(const char *dev, char *out, size_t cap)
{
	char target[256];
	snprintf(target, sizeof(target), DEVS "/%s", dev);
	cJSON *j = get(target);
	const cJSON *c = cJSON_GetArrayItem(k32_json_find(j, "status.conditions"), 0);
	const cJSON *s = cJSON_GetObjectItem(c, "status"), *r = cJSON_GetObjectItem(c, "reason");
	snprintf(out, cap, "%s/%s", cJSON_IsString(s) ? s->valuestring : "?",
		 cJSON_IsString(r) ? r->valuestring : "?");
	cJSON_Delete(j);
	return out;
}

static void table(char *out, size_t cap)
{
	struct http_server_config hc;
	struct http_server *srv = NULL;
	struct k32_err err;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = T.api;
	assert_int_equal(http_server_start(&hc, &srv, &err), K32_OK);
	api_server_attach_http(T.api, srv);
	struct http_client_config cc;
	struct http_client *c = NULL;
	http_client_config_init(&cc);
	cc.port = http_server_port(srv);
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	struct http_client_request hr = {
	    .method = "GET",
	    .target = DEVS,
	    .headers = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n",
	    .timeout_us = 5000000};
	struct http_client_response resp;
	assert_int_equal(http_client_do(c, &hr, &resp, &err), K32_OK);
	assert_int_equal(resp.status, 200);
	snprintf(out, cap, "%s", k32_buf_cstr(&resp.body));
	http_client_response_fini(&resp);
	http_client_free(c);
	http_server_stop(srv);
}

static void test_devices_to_readings(void **state)
{
	(void)state;
	if (!built()) {
		const char *ci = getenv("CI");
		print_message("driver pods not built (clang or wasm-ld missing): skipping\n");
		if (ci && !strcmp(ci, "true"))
			fail_msg("CI=true: the driver pods must be built");
		return;
	}
	k32_log_set_stderr(false);
	struct k32_err err;
	struct store_config sc = {.data_dir = NULL, .history_events = 64};
	assert_int_equal(store_open(&sc, &T.store, &err), K32_OK);
	struct api_config ac = {.store = T.store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &T.api, &err), K32_OK);
	k32_buf_init(&T.b, k32_default_allocator(), 1 << 20, "resp");

	/* the board */
	static const struct hw_sim_bus_config buses[] = {{NODE, 0, true, 0x70}};
	static const struct hw_sim_dev_config sdevs[] = {
	    {"envpro", NODE, 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", NODE, 0, 1, 0x26, HW_MODEL_MINISCALE},
	    {"tag", NODE, 0, 0, 0x28, HW_MODEL_MFRC522},
	};
	struct hw_sim_config scfg = {buses, 1, sdevs, 3, vnow, NULL};
	assert_int_equal(hw_sim_new(k32_default_allocator(), &scfg, &T.sim, &err), K32_OK);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(T.sim, NODE, 0, &ops, &ctx), K32_OK);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	assert_int_equal(hw_bus_init(&T.bus, 0, ops, ctx, &bc, &err), K32_OK);
	assert_int_equal(hw_bus_mux_reset(&T.bus, &err), K32_OK);
	struct hw_node_config nc = {.bus = {&T.bus},
				    .now_us = vnow,
				    .wall_s = vwall,
				    .sleep_us = vsleep,
				    .min_interval_ms = 1000};
	hw_node_init(&T.node, &nc);
	hw_hostfns(&env, T.defs, HW_HOSTFN_COUNT);
	wrt_linker_init(&T.lk);
	assert_int_equal(wrt_linker_add_host(&T.lk, T.defs, HW_HOSTFN_COUNT, &err), K32_OK);
	assert_int_equal(
	    hw_sim_bme688_set_raw(T.sim, "envpro", 493000, 355000, 20500, 600, 9, &err), K32_OK);

	/* the user's Devices */
	static const char *devs[] = {
	    "{\"metadata\":{\"name\":\"envpro\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"bme688\",\"address\":119,\"muxChannel\":2,\"pollIntervalMs\":1000,"
	    "\"params\":{\"heaterTempC\":\"320\",\"heaterDurationMs\":\"150\","
	    "\"pollIntervalMs\":\"1000\"}}}",
	    "{\"metadata\":{\"name\":\"scale\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"miniscale\",\"address\":38,\"muxChannel\":1}}",
	    "{\"metadata\":{\"name\":\"tag\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"rfid\",\"address\":40,\"muxChannel\":0}}",
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(req("POST", DEVS, NULL, devs[i]), 201);
	/* the Device controller (src/ctrl), one pass through the in-process client */
	struct kclient *kc = NULL;
	struct ctrl *ctl = NULL;
	struct ctrl_config cc = {.no_task = true, .enable = CTRL_DEVICE, .wall_s = vwall};
	assert_int_equal(kclient_inproc_new(T.api, NULL, &kc, &err), K32_OK);
	assert_int_equal(ctrl_start(&cc, kc, &ctl, &err), K32_OK);
	assert_int_equal(ctrl_run_once(ctl, CTRL_DEVICE, NULL, &err), K32_OK);
	struct ctrl_stats st;
	ctrl_get_stats(ctl, &st);
	ctrl_stop(ctl);
	kclient_free(kc);
	assert_int_equal(st.device_pods_created, 3);
	kubelet_sync();
	assert_int_equal(T.npods, 3);
	assert_int_equal(hw_sim_set_value(T.sim, "scale", "weight_g", 250, &err), K32_OK);
	run_until(vclock + 6000000);

	char v[64], tbl[8192];
	assert_string_equal(reading("envpro", "temperature_c", v, sizeof(v)), "23.64");
	assert_string_equal(reading("envpro", "pressure_pa", v, sizeof(v)), "99987");
	assert_string_equal(reading("envpro", "humidity_pct", v, sizeof(v)), "41.955");
	assert_string_equal(reading("envpro", "gas_ohm", v, sizeof(v)), "117400");
	assert_string_equal(ready("envpro", v, sizeof(v)), "True/Reading");
	assert_string_equal(reading("scale", "weight_g", v, sizeof(v)), "250.00");
	assert_string_equal(reading("tag", "present", v, sizeof(v)), "false");
	table(tbl, sizeof(tbl));
	const char *rows = strstr(tbl, "\"rows\"");
	assert_non_null(rows);
	print_message("kubectl get devices (Table rows): %.700s\n", rows);
	assert_non_null(strstr(tbl, "temperature_c=23.64"));
	assert_non_null(strstr(tbl, "weight_g=250.00"));
	assert_non_null(strstr(tbl, "present=false"));

	/* values change: so do the Devices */
	static const uint8_t uid[] = {0x5A, 0x3C, 0x91, 0x0E};
	assert_int_equal(hw_sim_rfid_place(T.sim, "tag", uid, 4, 0, 0, &err), K32_OK);
	assert_int_equal(hw_sim_set_value(T.sim, "envpro", "temperature_c", 19.5, &err), K32_OK);
	assert_int_equal(hw_sim_set_value(T.sim, "scale", "weight_g", 80, &err), K32_OK);
	run_until(vclock + 1000000);
	assert_string_equal(reading("tag", "uid", v, sizeof(v)), "5A3C910E"); /* within 1 s */
	run_until(vclock + 5000000);
	assert_string_equal(reading("envpro", "temperature_c", v, sizeof(v)), "19.50");
	assert_string_equal(reading("scale", "weight_g", v, sizeof(v)), "80.00");
	assert_int_equal(hw_sim_rfid_remove(T.sim, "tag", &err), K32_OK);
	run_until(vclock + 1000000);
	assert_string_equal(reading("tag", "present", v, sizeof(v)), "false");

	/* faults stay on their own Device */
	assert_int_equal(hw_sim_set_value(T.sim, "scale", "present", 0, &err), K32_OK);
	assert_int_equal(hw_sim_inject(T.sim, NODE, 0, 0x77, HW_XFER_BUS_ERROR, 100, &err), K32_OK);
	run_until(vclock + 3000000);
	assert_string_equal(ready("scale", v, sizeof(v)), "False/NotFound");
	assert_string_equal(ready("envpro", v, sizeof(v)), "False/BusError");
	assert_string_equal(ready("tag", v, sizeof(v)), "True/Reading");
	/* a driver that traps: DriverCrash on its Device */
	for (int i = 0; i < T.npods; i++)
		if (!strcmp(T.pods[i].slot.dev.name, "tag"))
			hw_node_pod_failed(&T.pods[i].slot, "DriverCrash",
					   "k32_tick trapped: out of gas (test)");
	flush();
	assert_string_equal(ready("tag", v, sizeof(v)), "False/DriverCrash");
	/* and each failure is an Event on its Device */
	assert_int_equal(post_events(), 3);
	assert_int_equal(post_events(), 0);
	assert_int_equal(req("GET", "/api/v1/namespaces/default/events", NULL, NULL), 200);
	static const char *want[] = {"\"reason\":\"NotFound\"", "\"reason\":\"BusError\"",
				     "\"reason\":\"DriverCrash\"", "\"kind\":\"Device\""};
	for (int i = 0; i < 4; i++)
		assert_non_null(strstr(k32_buf_cstr(&T.b), want[i]));

	for (int i = 0; i < T.npods; i++) {
		hw_node_unbind(&T.pods[i].slot);
		wrt_instance_free(T.pods[i].inst);
		wrt_module_free(T.pods[i].mod);
		k32_free(k32_default_allocator(), T.pods[i].bytes, T.pods[i].len + 1);
	}
	hw_bus_fini(&T.bus);
	hw_sim_free(T.sim);
	k32_buf_fini(&T.b);
	api_server_free(T.api);
	store_close(T.store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_devices_to_readings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
