/*
 * klet_hw_test.c - driver pods bound to Devices (annotation kube32.io/device): a kubelet
 * with the Wasm provider and a simulated I2C bus (src/hw's hw_sim: a PCA9548A with a BME688
 * on channel 2 and Mini Scales on channel 1), an in-process API server. Cases: a bound pod
 * reads the chip and its reading lands in the Device's status; an unbound pod running the
 * same module is refused the bus (K32_EPERM -> its trap); a bound pod that traps leaves
 * Ready=False DriverCrash and a Warning Event on its Device; a pod naming a missing Device
 * and one on a kubelet without buses fail with CreateContainerError and say why.
 */
#include "kubelet/klet_testfx.h"

#include "base/k32_log.h"
#include "hw/hw.h"
#include "kubelet/klet_int.h"

#include <stdlib.h>

static const struct klet_profile prof = {.name = "cardputer",
					 .pod_pool_bytes = 80 * 1024,
					 .interp_stack = 28 * 1024,
					 .max_pods = 8,
					 .hardware = "i2c:bme688,i2c:miniscale"};

#define NODE "hw-node"
#define DEVS "/apis/kube32.io/v1alpha1/namespaces/default/devices"

struct hfx {
	struct fx_cp cp;
	struct hw_sim *sim;
	struct hw_bus bus;
	struct hw_node node;
	struct klet *k;	 /* with the bus */
	struct klet *k2; /* node "bare-node": no hardware */
};

static void device_create(struct fx_cp *cp, const char *name, const char *model, int mux, int addr)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":\"Device\",\"metadata\":{"
		 "\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"node\":\"" NODE "\","
		 "\"model\":\"%s\",\"bus\":0,\"muxChannel\":%d,\"address\":%d,"
		 "\"pollIntervalMs\":200}}",
		 name, model, mux, addr);
	int code;
	cJSON_Delete(fx_do(cp, "POST", DEVS, body, &code));
	if (code != 201)
		fail_msg("creating Device %s: HTTP %d", name, code);
}

/* Polls Device name until path has the string want (10 s at most). */
static void wait_device(struct fx_cp *cp, const char *name, const char *path, const char *want)
{
	char target[256];
	snprintf(target, sizeof(target), DEVS "/%s", name);
	for (int i = 0; i < 1000; i++) {
		int code;
		cJSON *d = fx_do(cp, "GET", target, NULL, &code);
		const cJSON *v = NULL;
		if (d && !strcmp(path, "ready.reason")) { /* the Ready condition's reason */
			const cJSON *c;
			cJSON_ArrayForEach(c, k32_json_find(d, "status.conditions"))
			{
				if (!strcmp(fx_str(c, "type"), "Ready"))
					v = cJSON_GetObjectItem(c, "reason");
			}
		} else if (d) {
			v = k32_json_find(d, path);
		}
		bool ok = cJSON_IsString(v) && !strcmp(v->valuestring, want);
		cJSON_Delete(d);
		if (ok)
			return;
		k32_plat()->sleep_us(10000);
	}
	fail_msg("Device %s: %s never became \"%s\"", name, path, want);
}

static int setup(void **state)
{
	static struct hfx t;
	memset(&t, 0, sizeof(t));
	fx_cp_start(&t.cp);
	struct k32_err err;
	static const struct hw_sim_bus_config buses[] = {{NODE, 0, true, 0x70}};
	static const struct hw_sim_dev_config devs[] = {
	    {"envpro", NODE, 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", NODE, 0, 1, 0x26, HW_MODEL_MINISCALE},
	};
	struct hw_sim_config sc = {buses, 1, devs, 2, NULL, NULL};
	if (hw_sim_new(k32_default_allocator(), &sc, &t.sim, &err))
		fail_msg("hw_sim_new: %s", err.msg);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(t.sim, NODE, 0, &ops, &ctx), K32_OK);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	assert_int_equal(hw_bus_init(&t.bus, 0, ops, ctx, &bc, &err), K32_OK);
	struct hw_node_config nc = {.bus = {&t.bus}, .min_interval_ms = 200};
	hw_node_init(&t.node, &nc);
	struct klet_config c;
	fx_klet_config(&c, &t.cp, NODE, &prof);
	c.image_dir = KLET_TEST_IMAGES;
	c.hw_node = &t.node;
	if (klet_new(&c, &t.k, &err) || klet_start(t.k, &err))
		fail_msg("kubelet: %s", err.msg);
	fx_klet_config(&c, &t.cp, "bare-node", &prof);
	c.image_dir = KLET_TEST_IMAGES;
	if (klet_new(&c, &t.k2, &err) || klet_start(t.k2, &err))
		fail_msg("kubelet: %s", err.msg);
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	struct hfx *t = *state;
	klet_free(t->k);
	klet_free(t->k2);
	hw_bus_fini(&t->bus);
	hw_sim_free(t->sim);
	fx_cp_stop(&t->cp);
	return 0;
}

static bool last_msg_has(const cJSON *pod, const void *arg)
{
	const char *m = fx_str(fx_cs(pod), "lastState.terminated.message");
	return m && strstr(m, arg);
}

static bool waiting_msg_has(const cJSON *pod, const void *arg)
{
	const char *m = fx_str(fx_cs(pod), "state.waiting.message");
	return m && strstr(m, arg);
}

/* kube32_pod_i2c_transactions_total{outcome} of pod in the node's /metrics (-1: absent). */
static double i2c_count(struct klet *k, const char *pod, const char *outcome)
{
	struct k32_buf b;
	struct k32_err err;
	char sample[256];
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "metrics");
	assert_int_equal(klet_metrics_text(k, &b, &err), K32_OK);
	snprintf(sample, sizeof(sample),
		 "kube32_pod_i2c_transactions_total{node=\"" NODE "\",namespace=\"default\","
		 "pod=\"%s\",outcome=\"%s\"} ",
		 pod, outcome);
	const char *at = strstr(k32_buf_cstr(&b), sample);
	double v = at ? strtod(at + strlen(sample), NULL) : -1;
	k32_buf_fini(&b);
	return v;
}

/* A bound pod reads its chip (BME688 chip id 0x61 = 97) into the Device's status. */
static void test_bound_reads(void **state)
{
	struct hfx *t = *state;
	device_create(&t->cp, "envpro", "bme688", 2, 0x77);
	fx_pod_create(&t->cp, "drv", NODE, "t_hw.wasm", "Always", "2Ki",
		      ",\"annotations\":{\"kube32.io/device\":\"envpro\","
		      "\"kube32.io/stack-bytes\":\"1024\",\"kube32.io/call-depth\":\"16\"}");
	cJSON_Delete(fx_wait_pod(&t->cp, "drv", fx_ready, NULL));
	wait_device(&t->cp, "envpro", "status.readings.chip_id", "97");
	/* the node's /metrics counts the driver's transactions, done and failed */
	struct k32_err err;
	assert_true(i2c_count(t->k, "drv", "ok") > 0);
	assert_true(i2c_count(t->k, "drv", "error") == 0);
	assert_int_equal(hw_sim_inject(t->sim, NODE, 0, 0x77, HW_XFER_NACK_ADDR, 3, &err), K32_OK);
	for (int i = 0; i < 1000 && i2c_count(t->k, "drv", "error") < 3; i++)
		k32_plat()->sleep_us(10000);
	assert_true(i2c_count(t->k, "drv", "error") == 3);
}

/* The same module without a Device: the bus refuses it (K32_EPERM), it traps. */
static void test_unbound_refused(void **state)
{
	struct hfx *t = *state;
	fx_pod_create(&t->cp, "rogue", NODE, "t_hw.wasm", "Always", "2Ki", NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "rogue", last_msg_has, "unreachable"));
}

/* A bound driver that traps: Ready=False DriverCrash and a Warning Event on its Device. */
static void test_driver_crash(void **state)
{
	struct hfx *t = *state;
	device_create(&t->cp, "scale", "miniscale", 1, 0x26);
	fx_pod_create(&t->cp, "crash", NODE, "t_trap.wasm", "Always", "2Ki",
		      ",\"annotations\":{\"kube32.io/device\":\"scale\"}");
	wait_device(&t->cp, "scale", "ready.reason", "DriverCrash");
	int code;
	cJSON *ev = fx_do(&t->cp, "GET", "/api/v1/namespaces/default/events", NULL, &code);
	assert_int_equal(code, 200);
	bool found = false;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(ev, "items"))
	{
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(e, "reason"));
		const char *n = fx_str(e, "involvedObject.name");
		if (r && n && !strcmp(r, "DriverCrash") && !strcmp(n, "scale"))
			found = !strcmp(fx_str(e, "type"), "Warning");
	}
	cJSON_Delete(ev);
	assert_true(found);
}

/* Start failures that name their cause. */
static void test_start_errors(void **state)
{
	struct hfx *t = *state;
	static const struct {
		const char *pod, *node, *device, *msg;
	} cases[] = {
	    {"nodev", NODE, "ghost", "GET Device default/ghost answered 404"},
	    {"nobus", "bare-node", "envpro", "has no I2C buses"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char meta[128];
		snprintf(meta, sizeof(meta), ",\"annotations\":{\"kube32.io/device\":\"%s\"}",
			 cases[i].device);
		fx_pod_create(&t->cp, cases[i].pod, cases[i].node, "t_hw.wasm", "Always", "2Ki",
			      meta);
		cJSON *p = fx_wait_pod(&t->cp, cases[i].pod, waiting_msg_has, cases[i].msg);
		assert_string_equal(fx_str(fx_cs(p), "state.waiting.reason"),
				    "CreateContainerError");
		cJSON_Delete(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bound_reads),
	    cmocka_unit_test(test_unbound_refused),
	    cmocka_unit_test(test_driver_crash),
	    cmocka_unit_test(test_start_errors),
	};
	k32_log_set_stderr(getenv("KLET_HW_LOG") != NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
