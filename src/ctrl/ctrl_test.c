/*
 * ctrl_test.c - the scheduler and controllers against a real api_server over a memory
 * store, in-process (api_do; no HTTP). Passes are driven with ctrl_run_once and a fake
 * clock: nothing here waits on a timer. The kubelet is simulated by writing pod status
 * (phase, Ready) through the status subresource and renewing Leases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "ctrl/ctrl_int.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct ctrl *ctrl;
	struct k32_buf out;
	uint64_t now_us; /* fake monotonic clock */
	uint64_t wall_s; /* fake wall clock */
};

static uint64_t fx_now(void *ctx)
{
	return ((struct fx *)ctx)->now_us;
}

static uint64_t fx_wall(void *ctx)
{
	return ((struct fx *)ctx)->wall_s;
}

static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct k32_err err;
	k32_log_set_stderr(false);
	struct store_config sc = {.data_dir = NULL};
	assert_int_equal(store_open(&sc, &fx->store, &err), K32_OK);
	struct api_config ac = {.store = fx->store, .bootstrap = true};
	if (api_server_new(&ac, &fx->api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx->out, k32_default_allocator(), 8 << 20, "test response");
	fx->now_us = 1000000;
	fx->wall_s = 1767225600; /* 2026-01-01T00:00:00Z */
	struct ctrl_config cc = {
	    .no_task = true, .now_us = fx_now, .wall_s = fx_wall, .clock_ctx = fx};
	if (ctrl_start(&cc, fx->api, fx->store, &fx->ctrl, &err))
		fail_msg("ctrl_start: %s", err.msg);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	ctrl_stop(fx->ctrl);
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	free(fx);
	return 0;
}

/* Runs one request; returns the HTTP code; the answer is in fx->out. */
static int req(struct fx *fx, const char *method, const char *target, const char *body)
{
	struct k32_err err;
	int code = 0;
	const char *ct = NULL;
	if (!strcmp(method, "PATCH"))
		ct = "application/merge-patch+json";
	else if (body)
		ct = "application/json";
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do(fx->api, method, target, ct, body, body ? strlen(body) : 0, &code,
				&fx->out, &err),
			 K32_OK);
	return code;
}

static int reqf(struct fx *fx, const char *method, const char *target, const char *fmt, ...)
{
	char body[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	return req(fx, method, target, body);
}

/* GETs target as JSON (caller frees); fails the test on a non-200. */
static cJSON *get(struct fx *fx, const char *target)
{
	int code = req(fx, "GET", target, NULL);
	if (code != 200)
		fail_msg("GET %s: %d %s", target, code, k32_buf_cstr(&fx->out));
	return cJSON_Parse(k32_buf_cstr(&fx->out));
}

static void must(int code, int want, struct fx *fx, const char *what)
{
	if (code != want)
		fail_msg("%s: HTTP %d, want %d: %s", what, code, want, k32_buf_cstr(&fx->out));
}

/* Runs every controller until nothing is left to do (at most n turns). */
static __attribute__((unused)) void settle(struct fx *fx, int n)
{
	struct k32_err err;
	for (int i = 0; i < n; i++) {
		bool more = false;
		if (ctrl_run_once(fx->ctrl, CTRL_ALL, &more, &err))
			fail_msg("ctrl_run_once: %s", err.msg);
	}
}

static void run(struct fx *fx, uint32_t mask)
{
	struct k32_err err;
	if (ctrl_run_once(fx->ctrl, mask, NULL, &err))
		fail_msg("ctrl_run_once: %s", err.msg);
}

/* Adds a Ready node with memory bytes allocatable, pods slots and extra JSON for spec,
 * metadata extras (labels/annotations) */
static void node_add(struct fx *fx, const char *name, const char *mem, int pods,
		     const char *meta_extra, const char *spec_extra, const char *ready)
{
	int code = reqf(
	    fx, "POST", "/api/v1/nodes",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"%s%s},"
	    "\"spec\":{%s},\"status\":{\"capacity\":{\"memory\":\"%s\",\"pods\":\"%d\"},"
	    "\"allocatable\":{\"memory\":\"%s\",\"pods\":\"%d\"},"
	    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\",\"reason\":\"KubeletReady\"}]}}",
	    name, meta_extra ? "," : "", meta_extra ? meta_extra : "", spec_extra ? spec_extra : "",
	    mem, pods, mem, pods, ready ? ready : "True");
	must(code, 201, fx, name);
	/* status is a subresource: write it there too */
	char target[128];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s/status", name);
	code = reqf(fx, "PATCH", target,
		    "{\"status\":{\"capacity\":{\"memory\":\"%s\",\"pods\":\"%d\"},"
		    "\"allocatable\":{\"memory\":\"%s\",\"pods\":\"%d\"},"
		    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\",\"reason\":"
		    "\"KubeletReady\"}]}}",
		    mem, pods, mem, pods, ready ? ready : "True");
	must(code, 200, fx, "node status");
}

static void pod_add(struct fx *fx, const char *ns, const char *name, const char *mem,
		    const char *meta_extra, const char *spec_extra)
{
	char target[128];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", ns);
	char res[96] = "";
	if (mem)
		snprintf(res, sizeof(res), ",\"resources\":{\"limits\":{\"memory\":\"%s\"}}", mem);
	int code =
	    reqf(fx, "POST", target,
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s%s},"
		 "\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"hello.wasm\"%s}]%s%s}}",
		 name, meta_extra ? "," : "", meta_extra ? meta_extra : "", res,
		 spec_extra ? "," : "", spec_extra ? spec_extra : "");
	must(code, 201, fx, name);
}

/* The nodeName of a pod ("" when unbound). Caller-owned copy in buf. */
static const char *pod_node(struct fx *fx, const char *ns, const char *name, char *buf, size_t cap)
{
	char target[200];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
	cJSON *p = get(fx, target);
	const char *n = ctrl_jstr(p, "spec.nodeName");
	snprintf(buf, cap, "%s", n ? n : "");
	cJSON_Delete(p);
	return buf;
}

/* The message of the newest event with reason about pod name ("" if none). */
static void event_msg(struct fx *fx, const char *name, const char *reason, char *buf, size_t cap)
{
	cJSON *l = get(fx, "/api/v1/events");
	const cJSON *e;
	buf[0] = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(l, "items"))
	{
		const char *r = ctrl_jstr(e, "reason");
		const char *n = ctrl_jstr(e, "involvedObject.name");
		if (r && n && !strcmp(r, reason) && !strcmp(n, name))
			snprintf(buf, cap, "%s", ctrl_jstr(e, "message"));
	}
	cJSON_Delete(l);
}

/* ---- pure helpers ---------------------------------------------------------------------- */

static void test_quantity(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		bool ok;
		uint64_t want;
	} cases[] = {
	    {"4096", true, 4096},
	    {"24Ki", true, 24576},
	    {"1Mi", true, 1048576},
	    {"64k", true, 64000},
	    {"1M", true, 1000000},
	    {"1.5Mi", true, 1572864},
	    {"2Gi", true, 2147483648ull},
	    {"1e3", true, 1000},
	    {"0.1", true, 1},
	    {"", false, 0},
	    {"Ki", false, 0},
	    {"12X", false, 0},
	    {"-5", false, 0},
	    {"1Ki ", false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		bool ok = ctrl_quantity_bytes(cases[i].in, &v);
		if (ok != cases[i].ok || (ok && v != cases[i].want))
			fail_msg("quantity \"%s\": ok %d value %llu", cases[i].in, ok,
				 (unsigned long long)v);
	}
}

static void test_time_and_hardware(void **state)
{
	(void)state;
	char buf[32];
	ctrl_fmt_time(1767225600, buf, sizeof(buf));
	assert_string_equal(buf, "2026-01-01T00:00:00Z");
	uint64_t s = 0;
	assert_true(ctrl_parse_time("2026-01-01T00:00:10.123456Z", &s));
	assert_int_equal(s, 1767225610);
	assert_true(ctrl_parse_time("2026-01-01T01:00:00+01:00", &s));
	assert_int_equal(s, 1767225600);
	assert_false(ctrl_parse_time("yesterday", &s));
	char miss[64];
	assert_true(ctrl_hardware_met("i2c:bme688", "i2c:bme688,i2c:rfid", miss, sizeof(miss)));
	assert_true(ctrl_hardware_met("i2c", "i2c:rfid", miss, sizeof(miss)));
	assert_true(ctrl_hardware_met("i2c.rfid", "i2c:rfid", miss, sizeof(miss)));
	assert_true(ctrl_hardware_met("none", "", miss, sizeof(miss)));
	assert_true(ctrl_hardware_met(NULL, "", miss, sizeof(miss)));
	assert_false(ctrl_hardware_met("i2c:bme688,i2c:rfid", "i2c:rfid", miss, sizeof(miss)));
	assert_string_equal(miss, "i2c:bme688");
	assert_false(ctrl_hardware_met("spi", "i2c:spi", miss, sizeof(miss)));
}

/* ---- scheduler ------------------------------------------------------------------------- */

struct sched_case {
	const char *name;
	const char *pod_mem;   /* limits.memory or NULL */
	const char *pod_meta;  /* extra metadata JSON or NULL */
	const char *pod_spec;  /* extra spec JSON or NULL */
	const char *want_node; /* "" = unschedulable */
	const char *want_msg;  /* substring of the FailedScheduling message */
};

/* Three nodes: small (80Ki, label board=cardputer, hardware i2c:bme688), big (1Mi, tainted
 * dedicated=ml:NoSchedule), cordoned (1Mi, unschedulable), plus notready (1Mi, Ready=False)
 * and full (1Mi, 1 pod slot already used by "filler"). */
static const struct sched_case sched_cases[] = {
    {"fits-small-only", "64Ki", NULL, "\"nodeSelector\":{\"board\":\"cardputer\"}", "small", NULL},
    {"selector-none", NULL, NULL, "\"nodeSelector\":{\"board\":\"nope\"}", "",
     "0/5 nodes are available: 1 node(s) were unschedulable, 4 node(s) didn't match Pod's "
     "node affinity/selector."},
    {"taint-tolerated", "512Ki", NULL,
     "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"ml\","
     "\"effect\":\"NoSchedule\"}]",
     "big", NULL},
    {"too-big", "2Mi", NULL, NULL, "",
     "0/5 nodes are available: 1 Insufficient memory, 1 Too many pods, 1 node(s) had "
     "untolerated taint {dedicated: ml}, 1 node(s) had untolerated taint "
     "{node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable."},
    {"shortfall-named", "96Ki", NULL, "\"nodeSelector\":{\"board\":\"cardputer\"}", "",
     "small: pod needs 98304 bytes, 81920 of 81920 free"},
    {"hardware-ok", NULL, "\"annotations\":{\"kube32.io/hardware\":\"i2c:bme688\"}", NULL, "small",
     NULL},
    {"hardware-missing", NULL, "\"annotations\":{\"kube32.io/hardware\":\"i2c:rfid\"}", NULL, "",
     "small: no hardware \"i2c:rfid\" (has \"i2c:bme688\")"},
    {"affinity-in", NULL, NULL,
     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
     "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"board\",\"operator\":\"In\","
     "\"values\":[\"cardputer\",\"x\"]}]}]}}}",
     "small", NULL},
    {"affinity-field", NULL, NULL,
     "\"tolerations\":[{\"operator\":\"Exists\"}],"
     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
     "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
     "\"In\",\"values\":[\"cordoned\"]}]}]}}}",
     "cordoned", NULL},
    {"affinity-notin", NULL, NULL,
     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
     "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"board\",\"operator\":"
     "\"DoesNotExist\"}]}]}}}",
     "", "1 node(s) didn't match Pod's node affinity/selector"},
    {"notready-tolerated", "900Ki", NULL,
     "\"nodeSelector\":{\"kind\":\"nr\"},\"tolerations\":[{\"key\":\"node.kubernetes.io/"
     "not-ready\",\"operator\":\"Exists\"}]",
     "notready", NULL},
    {"nodename-set", NULL, NULL, "\"nodeName\":\"big\"", "big", NULL},
    {"other-scheduler", NULL, NULL, "\"schedulerName\":\"my-scheduler\"", "", NULL},
};

static void sched_nodes(struct fx *fx)
{
	node_add(fx, "small", "80Ki", 10,
		 "\"labels\":{\"board\":\"cardputer\"},\"annotations\":{\"kube32.io/hardware\":"
		 "\"i2c:bme688\"}",
		 NULL, NULL);
	node_add(fx, "big", "1Mi", 10, "\"labels\":{\"kind\":\"big\"}",
		 "\"taints\":[{\"key\":\"dedicated\",\"value\":\"ml\",\"effect\":\"NoSchedule\"}]",
		 NULL);
	node_add(fx, "cordoned", "1Mi", 10, NULL, "\"unschedulable\":true", NULL);
	node_add(fx, "notready", "1Mi", 10, "\"labels\":{\"kind\":\"nr\"}", NULL, "False");
	node_add(fx, "full", "1Mi", 1, NULL, NULL, NULL);
	pod_add(fx, "default", "filler", NULL, NULL, "\"nodeName\":\"full\"");
}

static void test_sched_table(void **state)
{
	for (size_t i = 0; i < sizeof(sched_cases) / sizeof(sched_cases[0]); i++) {
		const struct sched_case *tc = &sched_cases[i];
		fx_setup(state);
		struct fx *fx = *state;
		sched_nodes(fx);
		pod_add(fx, "default", tc->name, tc->pod_mem, tc->pod_meta, tc->pod_spec);
		run(fx, CTRL_SCHEDULER);
		char node[64], msg[K32_CTRL_MSG_LEN];
		pod_node(fx, "default", tc->name, node, sizeof(node));
		if (strcmp(node, tc->want_node))
			fail_msg("case %s: bound to \"%s\", want \"%s\"", tc->name, node,
				 tc->want_node);
		event_msg(fx, tc->name, "FailedScheduling", msg, sizeof(msg));
		if (tc->want_msg && !strstr(msg, tc->want_msg))
			fail_msg("case %s: message \"%s\" lacks \"%s\"", tc->name, msg,
				 tc->want_msg);
		if (!tc->want_msg && msg[0])
			fail_msg("case %s: unexpected FailedScheduling \"%s\"", tc->name, msg);
		if (tc->want_msg) {
			/* the condition says the same */
			char target[128];
			snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s",
				 tc->name);
			cJSON *p = get(fx, target);
			const cJSON *cd =
			    ctrl_cond_find(k32_json_find(p, "status.conditions"), "PodScheduled");
			assert_non_null(cd);
			assert_string_equal(ctrl_jstr(cd, "status"), "False");
			assert_string_equal(ctrl_jstr(cd, "reason"), "Unschedulable");
			cJSON_Delete(p);
		}
		fx_teardown(state);
	}
}

/* Memory fit accumulates over the pods bound in the same pass and in earlier ones. */
static void test_sched_fit_accumulates(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "a", "100Ki", 10, NULL, NULL, NULL);
	pod_add(fx, "default", "p1", "40Ki", NULL, NULL);
	pod_add(fx, "default", "p2", "40Ki", NULL, NULL);
	pod_add(fx, "default", "p3", "40Ki", NULL, NULL);
	run(fx, CTRL_SCHEDULER);
	char n1[32], n2[32], n3[32], msg[K32_CTRL_MSG_LEN];
	event_msg(fx, "p1", "FailedScheduling", msg, sizeof(msg));
	if (msg[0])
		fail_msg("p1: %s", msg);
	assert_string_equal(pod_node(fx, "default", "p1", n1, sizeof(n1)), "a");
	assert_string_equal(pod_node(fx, "default", "p2", n2, sizeof(n2)), "a");
	assert_string_equal(pod_node(fx, "default", "p3", n3, sizeof(n3)), "");
	event_msg(fx, "p3", "FailedScheduling", msg, sizeof(msg));
	assert_non_null(strstr(msg, "0/1 nodes are available: 1 Insufficient memory."));
	assert_non_null(strstr(msg, "a: pod needs 40960 bytes, 20480 of 102400 free"));
	/* a freed slot (p1 deleted) lets p3 in on the next pass */
	must(req(fx, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0", NULL),
	     200, fx, "delete p1");
	run(fx, CTRL_SCHEDULER);
	assert_string_equal(pod_node(fx, "default", "p3", n3, sizeof(n3)), "a");
	/* the bound pod has PodScheduled=True and a Scheduled event */
	cJSON *p = get(fx, "/api/v1/namespaces/default/pods/p3");
	assert_string_equal(ctrl_cond_status(p, "PodScheduled"), "True");
	cJSON_Delete(p);
	event_msg(fx, "p3", "Scheduled", msg, sizeof(msg));
	assert_string_equal(msg, "Successfully assigned default/p3 to a");
	struct ctrl_stats st;
	ctrl_get_stats(fx->ctrl, &st);
	assert_int_equal(st.bound, 3);
	assert_true(st.unschedulable >= 1);
}

/* Spreading: equal nodes share pods; no nodes gives a clear message. */
static void test_sched_spread_and_empty(void **state)
{
	struct fx *fx = *state;
	char msg[K32_CTRL_MSG_LEN], n[32];
	pod_add(fx, "default", "lonely", NULL, NULL, NULL);
	run(fx, CTRL_SCHEDULER);
	event_msg(fx, "lonely", "FailedScheduling", msg, sizeof(msg));
	assert_string_equal(msg, "0/0 nodes are available: no nodes are registered.");
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	node_add(fx, "n2", "1Mi", 10, NULL, NULL, NULL);
	pod_add(fx, "default", "s1", "100Ki", NULL, NULL);
	pod_add(fx, "default", "s2", "100Ki", NULL, NULL);
	run(fx, CTRL_SCHEDULER);
	char a[32], b[32];
	pod_node(fx, "default", "s1", a, sizeof(a));
	pod_node(fx, "default", "s2", b, sizeof(b));
	assert_true(a[0] && b[0]);
	assert_string_not_equal(a, b);
	assert_true(pod_node(fx, "default", "lonely", n, sizeof(n))[0] != 0);
}

/* Hardware from Devices: a Device naming the node gives it "i2c:<model>". */
static void test_sched_device_hardware(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "w1", "1Mi", 10, NULL, NULL, NULL);
	node_add(fx, "w2", "1Mi", 10, NULL, NULL, NULL);
	must(req(fx, "POST", "/apis/kube32.io/v1alpha1/namespaces/default/devices",
		 "{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":\"Device\",\"metadata\":{"
		 "\"name\":\"env\"},\"spec\":{\"node\":\"w2\",\"address\":119,\"model\":"
		 "\"bme688\"}}"),
	     201, fx, "device");
	pod_add(fx, "default", "drv", NULL,
		"\"annotations\":{\"kube32.io/hardware\":\"i2c:bme688\"}", NULL);
	run(fx, CTRL_SCHEDULER);
	char n[32];
	assert_string_equal(pod_node(fx, "default", "drv", n, sizeof(n)), "w2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantity),
	    cmocka_unit_test(test_time_and_hardware),
	    cmocka_unit_test(test_sched_table),
	    cmocka_unit_test_setup_teardown(test_sched_fit_accumulates, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_spread_and_empty, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_device_hardware, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
