/*
 * hw_device_test.c - the Device helpers: parsing (table of good and bad objects), grants,
 * the driver pod manifest, the duplicate check, the status publisher's rate limit, urgent
 * string changes, nulls for dropped readings and NoReading; then against a real API server in
 * this process: the Device is created, its driver pod manifest is accepted, the publisher's
 * patches land in devices/<name>/status, and `kubectl get devices` (the Table over HTTP) shows
 * the readings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/k32_log.h"
#include "hw/hw_int.h"

static cJSON *parse(const char *s)
{
	cJSON *j = NULL;
	struct k32_err err;
	assert_int_equal(k32_json_parse(s, strlen(s), &j, &err), K32_OK);
	return j;
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		k32_status_t st;
		const char *msg;
	} cases[] = {
	    {"{\"metadata\":{\"name\":\"env\"},\"spec\":{\"node\":\"c1\",\"model\":\"bme688\","
	     "\"address\":119,\"muxChannel\":2,\"params\":{\"heaterTempC\":\"320\"}}}",
	     K32_OK, NULL},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\","
	     "\"address\":40}}",
	     K32_OK, NULL},
	    {"{\"spec\":{\"node\":\"c1\",\"model\":\"rfid\",\"address\":40}}", K32_ERR_INVALID_ARGS,
	     "metadata.name"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"model\":\"rfid\",\"address\":40}}",
	     K32_ERR_INVALID_ARGS, "spec.node"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"lcd\","
	     "\"address\":40}}",
	     K32_ERR_INVALID_ARGS, "spec.model"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\"}}",
	     K32_ERR_INVALID_ARGS, "spec.address is required"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\","
	     "\"address\":200}}",
	     K32_ERR_INVALID_ARGS, "spec.address"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\","
	     "\"address\":40,\"muxChannel\":8}}",
	     K32_ERR_INVALID_ARGS, "spec.muxChannel"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\","
	     "\"address\":40,\"params\":{\"k\":1}}}",
	     K32_ERR_INVALID_ARGS, "spec.params[k]"},
	    /* names go verbatim into the driver pod's JSON: a quote or backslash is refused
	     * (found by the hw_device fuzzer in CI) */
	    {"{\"metadata\":{\"name\":\"t\",\"namespace\":\"x\\\"y\"},\"spec\":{\"node\":"
	     "\"c1\",\"model\":\"rfid\",\"address\":40}}",
	     K32_ERR_INVALID_ARGS, "lowercase alphanumerics"},
	    {"{\"metadata\":{\"name\":\"t\"},\"spec\":{\"node\":\"c\\\\u00b\",\"model\":"
	     "\"rfid\",\"address\":40}}",
	     K32_ERR_INVALID_ARGS, "spec.node must be"},
	    {"{\"metadata\":{\"name\":\"T\"},\"spec\":{\"node\":\"c1\",\"model\":\"rfid\","
	     "\"address\":40}}",
	     K32_ERR_INVALID_ARGS, "metadata.name"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = parse(cases[i].json);
		struct hw_device d;
		struct k32_err err;
		k32_err_clear(&err);
		assert_int_equal(hw_device_parse(j, &d, &err), cases[i].st);
		if (cases[i].msg)
			assert_non_null(strstr(err.msg, cases[i].msg));
		cJSON_Delete(j);
	}
	cJSON *j = parse(cases[0].json);
	struct hw_device d;
	assert_int_equal(hw_device_parse(j, &d, NULL), K32_OK);
	cJSON_Delete(j);
	assert_string_equal(d.ns, "default");
	assert_int_equal(d.poll_ms, 3000);
	struct hw_grant g;
	hw_device_grant(&d, &g);
	assert_int_equal(g.bus, 0);
	assert_int_equal(g.mux_channel, 2);
	assert_int_equal(g.addr, 0x77);
	assert_string_equal(g.model, "bme688");
	assert_int_equal(g.nparams, 1);
	assert_string_equal(g.params[0].value, "320");
	j = parse(cases[1].json);
	assert_int_equal(hw_device_parse(j, &d, NULL), K32_OK);
	cJSON_Delete(j);
	assert_int_equal(d.mux_channel, HW_MUX_NONE);
	assert_int_equal(d.poll_ms, 200);
	/* params packed into K32_HW_DEVICE_PARAMS_BYTES: up to HW_DEVICE_MAX_PARAMS pairs of
	 * 31-byte keys and values while they fit, then a clear error; a copy is rebased */
	char js[2048];
	int off = snprintf(js, sizeof(js),
			   "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"node\":"
			   "\"c1\",\"model\":\"rfid\",\"address\":40,\"params\":{");
	size_t used = 0, fit = 0;
	for (int i = 0; i < HW_DEVICE_MAX_PARAMS; i++) {
		off += snprintf(js + off, sizeof(js) - (size_t)off, "%s\"k%02d%s\":\"%s\"",
				i ? "," : "", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
		used += 31 + 31 + 2;
		fit += used <= K32_HW_DEVICE_PARAMS_BYTES;
	}
	snprintf(js + off, sizeof(js) - (size_t)off, "}}}");
	j = parse(js);
	struct k32_err err;
	k32_err_clear(&err);
	k32_status_t st = hw_device_parse(j, &d, &err);
	cJSON_Delete(j);
	if (fit < HW_DEVICE_MAX_PARAMS) {
		assert_int_equal(st, K32_ERR_INVALID_ARGS);
		assert_non_null(strstr(err.msg, "spec.params take more than"));
	} else {
		assert_int_equal(st, K32_OK);
	}
	j = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"node\":\"c1\",\"model\":"
		  "\"bme688\",\"address\":119,\"params\":{\"heaterTempC\":\"300\","
		  "\"ambientC\":\"20\"}}}");
	assert_int_equal(hw_device_parse(j, &d, NULL), K32_OK);
	cJSON_Delete(j);
	struct hw_device *copy = malloc(sizeof(*copy));
	assert_non_null(copy);
	*copy = d;
	memset(&d, 0, sizeof(d));
	hw_device_rebase(copy);
	assert_int_equal(copy->nparams, 2);
	assert_string_equal(copy->params[0].key, "heaterTempC");
	assert_string_equal(copy->params[0].value, "300");
	assert_string_equal(copy->params[1].key, "ambientC");
	assert_string_equal(copy->params[1].value, "20");
	free(copy);
}

static void test_manifest_conflict(void **state)
{
	(void)state;
	cJSON *j =
	    parse("{\"metadata\":{\"name\":\"envpro\",\"namespace\":\"lab\",\"uid\":\"u-1\"},"
		  "\"spec\":{\"node\":\"cardputer-1\",\"model\":\"bme688\",\"address\":119,"
		  "\"muxChannel\":2}}");
	struct hw_device d[3];
	assert_int_equal(hw_device_parse(j, &d[0], NULL), K32_OK);
	cJSON_Delete(j);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 8192, "manifest");
	assert_int_equal(hw_device_pod_manifest(&d[0], "2Ki", &b, NULL), K32_OK);
	cJSON *pod = parse(k32_buf_cstr(&b));
	assert_string_equal(k32_json_find(pod, "metadata.name")->valuestring, "bme688-envpro");
	assert_string_equal(k32_json_find(pod, "metadata.namespace")->valuestring, "lab");
	assert_string_equal(k32_json_find(pod, "spec.nodeName")->valuestring, "cardputer-1");
	const cJSON *own = cJSON_GetArrayItem(k32_json_find(pod, "metadata.ownerReferences"), 0);
	assert_string_equal(cJSON_GetObjectItem(own, "uid")->valuestring, "u-1");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(own, "controller")));
	const cJSON *c = cJSON_GetArrayItem(k32_json_find(pod, "spec.containers"), 0);
	assert_string_equal(cJSON_GetObjectItem(c, "image")->valuestring, "bme688.wasm");
	const cJSON *ann = k32_json_find(pod, "metadata.annotations");
	char want[16];
	snprintf(want, sizeof(want), "%u", (unsigned)K32_HW_DRIVER_STACK_BYTES);
	assert_string_equal(cJSON_GetObjectItem(ann, "kube32.io/stack-bytes")->valuestring, want);
	snprintf(want, sizeof(want), "%u", (unsigned)K32_HW_DRIVER_FRAMES);
	assert_string_equal(cJSON_GetObjectItem(ann, "kube32.io/call-depth")->valuestring, want);
	cJSON_Delete(pod);
	/* the memory limit: the driver's own need, capped by the caller's quantity */
	static const struct {
		const char *cap;
		unsigned long long want;
	} mems[] = {{"2Ki", K32_HW_DRIVER_MEM_BYTES},
		    {NULL, K32_HW_DRIVER_MEM_BYTES},
		    {"512", 512},
		    {"1k", K32_HW_DRIVER_MEM_BYTES < 1000 ? K32_HW_DRIVER_MEM_BYTES : 1000},
		    {"0.5Ki", 512},
		    {"0Ki", K32_HW_DRIVER_MEM_BYTES},  /* the API refuses a 0-byte memory limit */
		    {"512K", K32_HW_DRIVER_MEM_BYTES}, /* not a quantity: the kilo is 'k' */
		    {"junk", K32_HW_DRIVER_MEM_BYTES},
		    {"99999999999Mi", K32_HW_DRIVER_MEM_BYTES}};
	for (size_t i = 0; i < sizeof(mems) / sizeof(mems[0]); i++) {
		k32_buf_reset(&b);
		assert_int_equal(hw_device_pod_manifest(&d[0], mems[i].cap, &b, NULL), K32_OK);
		pod = parse(k32_buf_cstr(&b));
		c = cJSON_GetArrayItem(k32_json_find(pod, "spec.containers"), 0);
		const cJSON *m = k32_json_find(c, "resources.limits.memory");
		assert_non_null(m);
		assert_int_equal(strtoull(m->valuestring, NULL, 10), mems[i].want);
		cJSON_Delete(pod);
	}
	k32_buf_fini(&b);

	d[1] = d[0];
	snprintf(d[1].name, sizeof(d[1].name), "other");
	d[2] = d[0];
	snprintf(d[2].name, sizeof(d[2].name), "third");
	d[2].mux_channel = 3;
	assert_int_equal(hw_device_conflict(d, 1, &d[1]), 0);
	assert_int_equal(hw_device_conflict(d, 1, &d[0]), -1); /* itself */
	assert_int_equal(hw_device_conflict(d, 2, &d[2]), -1);
	char name[64];
	memset(d[0].name, 'x', 63);
	d[0].name[63] = 0;
	hw_device_pod_name(&d[0], name, sizeof(name));
	assert_int_equal(strlen(name), 63);
}

static void test_rfc3339(void **state)
{
	(void)state;
	char t[24];
	hw_rfc3339(0, t);
	assert_string_equal(t, "1970-01-01T00:00:00Z");
	hw_rfc3339(1735732803, t);
	assert_string_equal(t, "2025-01-01T12:00:03Z");
	hw_rfc3339(951782400, t); /* 2000-02-29 */
	assert_string_equal(t, "2000-02-29T00:00:00Z");
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

static void
test_publisher(void **state)
{
	(void)state;
	struct hw_devstatus st;
	hw_devstatus_init(&st, 1000, 1000);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 8192, "patch");
	uint64_t t = 10000000, wall = 1735732800;
	assert_false(hw_devstatus_due(&st, t, wall));
	struct hw_readings r = R("present", "false", "uid", "", (const char *)NULL);
	hw_devstatus_readings(&st, &r, t, wall);
	assert_true(hw_devstatus_due(&st, t, wall)); /* first one at once */
	assert_int_equal(hw_devstatus_patch(&st, "rfid-tag", t, &b, NULL), K32_OK);
	cJSON *p = parse(k32_buf_cstr(&b));
	assert_string_equal(k32_json_find(p, "status.readings.present")->valuestring, "false");
	assert_string_equal(k32_json_find(p, "status.lastReadTime")->valuestring,
			    "2025-01-01T12:00:00Z");
	assert_string_equal(k32_json_find(p, "status.driverPod")->valuestring, "rfid-tag");
	const cJSON *c = cJSON_GetArrayItem(k32_json_find(p, "status.conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "True");
	assert_string_equal(cJSON_GetObjectItem(c, "reason")->valuestring, "Reading");
	cJSON_Delete(p);
	/* the same strings again: only a heartbeat every K32_HW_STATUS_HEARTBEAT_S */
	t += 200000;
	hw_devstatus_readings(&st, &r, t, wall);
	assert_false(hw_devstatus_due(&st, t, wall));
	for (int i = 1; i < K32_HW_STATUS_HEARTBEAT_S; i++) {
		t += 1000000;
		hw_devstatus_readings(&st, &r, t, wall);
		assert_false(hw_devstatus_due(&st, t, wall));
	}
	t += 800000;
	hw_devstatus_readings(&st, &r, t, wall);
	assert_true(hw_devstatus_due(&st, t, wall));
	k32_buf_reset(&b);
	assert_int_equal(hw_devstatus_patch(&st, NULL, t, &b, NULL), K32_OK);
	/* a string reading changes: at once */
	t += 200000;
	struct hw_readings r2 =
	    R("present", "true", "uid", "5A3C910E", "sak", "8", (const char *)NULL);
	hw_devstatus_readings(&st, &r2, t, wall + 1);
	assert_true(hw_devstatus_due(&st, t, wall + 1));
	k32_buf_reset(&b);
	assert_int_equal(hw_devstatus_patch(&st, NULL, t, &b, NULL), K32_OK);
	/* numbers alone changing wait for the interval; a dropped key is sent as null */
	t += 200000;
	struct hw_readings r3 = R("present", "true", "uid", "5A3C910E", (const char *)NULL);
	hw_devstatus_readings(&st, &r3, t, wall + 1);
	assert_false(hw_devstatus_due(&st, t, wall + 1));
	t += 1000000;
	assert_true(hw_devstatus_due(&st, t, wall + 2));
	k32_buf_reset(&b);
	assert_int_equal(hw_devstatus_patch(&st, NULL, t, &b, NULL), K32_OK);
	p = parse(k32_buf_cstr(&b));
	assert_true(cJSON_IsNull(k32_json_find(p, "status.readings.sak")));
	cJSON_Delete(p);
	/* silence for three poll intervals: NoReading */
	t += 1900000;
	assert_false(hw_devstatus_due(&st, t, wall + 3));
	t += 200000;
	assert_true(hw_devstatus_due(&st, t, wall + 3));
	k32_buf_reset(&b);
	assert_int_equal(hw_devstatus_patch(&st, NULL, t, &b, NULL), K32_OK);
	p = parse(k32_buf_cstr(&b));
	c = cJSON_GetArrayItem(k32_json_find(p, "status.conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "False");
	assert_string_equal(cJSON_GetObjectItem(c, "reason")->valuestring, "NoReading");
	cJSON_Delete(p);
	/* the driver's own condition and the kubelet's DriverCrash */
	hw_devstatus_condition(&st, false, "BusError", 8, "bus error", 9, wall + 4);
	assert_true(hw_devstatus_due(&st, t, wall + 4));
	k32_buf_reset(&b);
	assert_int_equal(hw_devstatus_patch(&st, NULL, t, &b, NULL), K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"reason\":\"BusError\""));
	/* one Warning Event per failure */
	struct hw_device dev;
	cJSON *dj = parse("{\"metadata\":{\"name\":\"tag\",\"uid\":\"u-9\"},\"spec\":{\"node\":"
			  "\"c1\",\"model\":\"rfid\",\"address\":40}}");
	assert_int_equal(hw_device_parse(dj, &dev, NULL), K32_OK);
	cJSON_Delete(dj);
	k32_buf_reset(&b);
	assert_true(hw_devstatus_event(&st, &dev, "kubelet", wall + 4, &b, NULL));
	p = parse(k32_buf_cstr(&b));
	assert_string_equal(k32_json_find(p, "involvedObject.kind")->valuestring, "Device");
	assert_string_equal(k32_json_find(p, "involvedObject.uid")->valuestring, "u-9");
	assert_string_equal(k32_json_find(p, "reason")->valuestring, "BusError");
	assert_string_equal(k32_json_find(p, "type")->valuestring, "Warning");
	cJSON_Delete(p);
	k32_buf_reset(&b);
	assert_false(hw_devstatus_event(&st, &dev, "kubelet", wall + 4, &b, NULL));
	assert_false(hw_devstatus_due(&st, t + 5000000, wall + 9)); /* nothing new */
	k32_buf_fini(&b);
}

/* One driver pod per Device on a node: a second binding is refused until the first goes. */
static void test_node_one_driver(void **state)
{
	(void)state;
	static struct hw_bus bus; /* only its presence matters to a binding */
	struct hw_node_config cfg = {.bus = {&bus}};
	struct hw_node node;
	hw_node_init(&node, &cfg);
	cJSON *scale = parse("{\"metadata\":{\"name\":\"scale\"},\"spec\":{\"node\":\"c1\","
			     "\"model\":\"miniscale\",\"address\":38,\"muxChannel\":1}}");
	cJSON *tag = parse("{\"metadata\":{\"name\":\"tag\"},\"spec\":{\"node\":\"c1\","
			   "\"model\":\"rfid\",\"address\":40,\"muxChannel\":0}}");
	static struct hw_node_pod a, b, c;
	struct k32_err err;
	static const struct {
		struct hw_node_pod *slot;
		const char *pod;
		k32_status_t want;
	} steps[] = {
	    {&a, "miniscale-scale", K32_OK},
	    {&b, "crashy", K32_ERR_ALREADY_EXISTS}, /* scale again */
	    {&c, "rfid-tag", K32_OK},		    /* another Device */
	    {&a, "miniscale-scale", K32_OK},	    /* re-bound in place */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		k32_err_clear(&err);
		const cJSON *dev = steps[i].slot == &c ? tag : scale;
		assert_int_equal(hw_node_bind(&node, steps[i].slot, dev, steps[i].pod, &err),
				 steps[i].want);
		if (steps[i].want == K32_ERR_ALREADY_EXISTS)
			assert_non_null(strstr(err.msg, "already driven by pod miniscale-scale"));
	}
	assert_false(b.bound);
	/* the first driver goes: now the second may bind */
	hw_node_unbind(&a);
	assert_int_equal(hw_node_bind(&node, &b, scale, "crashy", &err), K32_OK);
	int n = 0;
	for (const struct hw_node_pod *o = node.bound; o; o = o->next)
		n++;
	assert_int_equal(n, 2);
	hw_node_unbind(&b);
	hw_node_unbind(&c);
	assert_null(node.bound);
	cJSON_Delete(scale);
	cJSON_Delete(tag);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),	    cmocka_unit_test(test_manifest_conflict),
	    cmocka_unit_test(test_rfc3339),	    cmocka_unit_test(test_publisher),
	    cmocka_unit_test(test_node_one_driver),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
