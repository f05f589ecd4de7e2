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
#include "kclient/kclient.h"
#include "kmeta/kmeta.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct kclient *kc; /* the controllers' in-process client */
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
	if (kclient_inproc_new(fx->api, NULL, &fx->kc, &err))
		fail_msg("kclient_inproc_new: %s", err.msg);
	if (ctrl_start(&cc, fx->kc, &fx->ctrl, &err))
		fail_msg("ctrl_start: %s", err.msg);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	ctrl_stop(fx->ctrl);
	kclient_free(fx->kc);
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
static void settle(struct fx *fx, int n)
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
	    {"24K", false, 0}, /* Kubernetes' kilo is 'k' */
	    {"1Ti", false, 0}, /* over K32_POD_MEM_MAX: the API refuses it */
	};
	/* the scheduler counts what kmeta reads (the kubelet's and the API's parser): a value
	 * that does not parse counts as K32_POD_MEM_DEFAULT, what the kubelet would give */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[256];
		snprintf(body, sizeof(body),
			 "{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"memory\":"
			 "\"%s\"}}}]}}",
			 cases[i].in);
		cJSON *pod = cJSON_Parse(body);
		uint64_t want = K32_CTRL_POD_OVERHEAD_BYTES +
				(cases[i].ok ? cases[i].want : (uint64_t)K32_POD_MEM_DEFAULT);
		uint64_t got = ctrl_pod_memory(pod);
		if (got != want)
			fail_msg("memory \"%s\": %llu, want %llu", cases[i].in,
				 (unsigned long long)got, (unsigned long long)want);
		cJSON_Delete(pod);
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
    {"dotted-label-key", NULL, NULL, "\"nodeSelector\":{\"kube32.io/board\":\"cardputer\"}",
     "small", NULL},
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
     "small: pod needs 114688 bytes (limits + 16384 overhead), 81920 of 81920 free"},
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
		 "\"labels\":{\"board\":\"cardputer\",\"kube32.io/board\":\"cardputer\"},"
		 "\"annotations\":{\"kube32.io/hardware\":"
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
	node_add(fx, "a", "120Ki", 10, NULL, NULL, NULL);
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
	assert_non_null(
	    strstr(msg, "a: pod needs 57344 bytes (limits + 16384 overhead), 8192 of 122880 free"));
	/* a freed slot (p1 deleted) lets p3 in once its backoff (1 s after one failure) ends */
	must(req(fx, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0", NULL),
	     200, fx, "delete p1");
	run(fx, CTRL_SCHEDULER);
	assert_string_equal(pod_node(fx, "default", "p3", n3, sizeof(n3)), "");
	fx->now_us += K32_CTRL_SCHED_BACKOFF_INITIAL_MS * 1000u;
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
	fx->now_us += K32_CTRL_SCHED_BACKOFF_INITIAL_MS * 1000u; /* lonely's backoff */
	run(fx, CTRL_SCHEDULER);
	char a[32], b[32];
	pod_node(fx, "default", "s1", a, sizeof(a));
	pod_node(fx, "default", "s2", b, sizeof(b));
	assert_true(a[0] && b[0]);
	assert_string_not_equal(a, b);
	assert_true(pod_node(fx, "default", "lonely", n, sizeof(n))[0] != 0);
}

/* The store's current revision (from a list). */
static uint64_t cm_list_rev(struct fx *fx)
{
	cJSON *l = get(fx, "/api/v1/namespaces/default/configmaps");
	uint64_t rev = strtoull(ctrl_jstr(l, "metadata.resourceVersion"), NULL, 10);
	cJSON_Delete(l);
	return rev;
}

/* Runs the scheduler as its task would for secs of fake time: whenever it asked to run
 * again (more, or the wake-up time it asked for), and once per second besides (as watch
 * events could trigger it); returns the passes run. */
static int sched_for(struct fx *fx, int secs)
{
	int passes = 0;
	for (int t = 0; t < secs * 10; t++) {
		fx->now_us += 100000;
		bool more = true;
		for (int i = 0; more && i < 50; i++) {
			struct k32_err err;
			uint64_t due = fx->ctrl->requeue_us;
			if (i == 0 && t % 10 && (!due || fx->now_us < due))
				break;
			if (ctrl_run_once(fx->ctrl, CTRL_SCHEDULER, &more, &err))
				fail_msg("ctrl_run_once: %s", err.msg);
			passes++;
		}
	}
	return passes;
}

/*
 * The scheduling queue: 100 pods that fit nowhere are each tried, then parked; with nothing
 * changing, 30 s of passes write (almost) nothing, and a pod that fits is placed at once.
 * Before the queue, each pass took the 32 oldest pending pods and ran again at once (a
 * spin), re-counting their events: thousands of revisions a second, and pods past the 32nd
 * were never tried.
 */
static void test_sched_queue(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "small", "64Ki", 200, NULL, NULL, NULL);
	for (int i = 0; i < 100; i++) {
		char name[16];
		snprintf(name, sizeof(name), "big-%03d", i);
		pod_add(fx, "default", name, "1Mi", NULL, NULL);
	}
	int passes = sched_for(fx, 2);
	/* every one of the 100 was tried: each has its FailedScheduling event */
	char msg[K32_CTRL_MSG_LEN];
	for (int i = 0; i < 100; i += 33) {
		char name[16];
		snprintf(name, sizeof(name), "big-%03d", i);
		event_msg(fx, name, "FailedScheduling", msg, sizeof(msg));
		if (!strstr(msg, "Insufficient memory"))
			fail_msg("%s: not tried (event \"%s\")", name, msg);
	}
	event_msg(fx, "big-099", "FailedScheduling", msg, sizeof(msg));
	assert_non_null(strstr(msg, "Insufficient memory"));
	assert_true(passes < 40);
	assert_int_equal(ctrl_schedq_count(fx->ctrl->schedq), 100);
	/* nothing changes for 30 s: the store stays (nearly) still */
	uint64_t rev0 = cm_list_rev(fx);
	passes = sched_for(fx, 30);
	uint64_t rev1 = cm_list_rev(fx);
	if (rev1 - rev0 > 5)
		fail_msg("30 s of an idle cluster with 100 unschedulable pods wrote %llu revisions",
			 (unsigned long long)(rev1 - rev0));
	assert_true(passes <= 40); /* the once-a-second triggers, no spin */
	/* a pod that fits is placed on the next pass, ahead of the parked ones */
	pod_add(fx, "default", "fits", "8Ki", NULL, NULL);
	run(fx, CTRL_SCHEDULER);
	char node[32];
	assert_string_equal(pod_node(fx, "default", "fits", node, sizeof(node)), "small");
	/* room appears (a big node): the parked pods are tried again after their backoff */
	node_add(fx, "big", "256Mi", 200, NULL, NULL, NULL);
	sched_for(fx, 12);
	for (int i = 0; i < 100; i += 9) {
		char name[16];
		snprintf(name, sizeof(name), "big-%03d", i);
		assert_string_equal(pod_node(fx, "default", name, node, sizeof(node)), "big");
	}
	assert_int_equal(ctrl_schedq_count(fx->ctrl->schedq), 0);
}

/* Backoff doubles per failed attempt up to its maximum; a failure that repeats with the
 * same message writes its event once per K32_CTRL_SCHED_EVENT_INTERVAL_S. */
static void test_sched_backoff(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "tiny", "16Ki", 10, NULL, NULL, NULL);
	pod_add(fx, "default", "huge", "1Mi", NULL, NULL);
	run(fx, CTRL_SCHEDULER);
	cJSON *p = get(fx, "/api/v1/namespaces/default/pods/huge");
	uint64_t key = ctrl_schedq_key(ctrl_jstr(p, "metadata.uid"));
	cJSON_Delete(p);
	struct ctrl_schedq_ent *e = ctrl_schedq_find(&fx->ctrl->schedq, key, false);
	assert_non_null(e);
	assert_int_equal(e->attempts, 1);
	assert_int_equal(e->retry_us - e->tried_us, K32_CTRL_SCHED_BACKOFF_INITIAL_MS * 1000u);
	uint64_t first_event = e->event_us;
	/* a node changes each time (a label): the pod is tried after each backoff */
	uint64_t want_ms = K32_CTRL_SCHED_BACKOFF_INITIAL_MS;
	for (int i = 2; i <= 6; i++) {
		char body[96];
		snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"round\":\"%d\"}}}", i);
		must(req(fx, "PATCH", "/api/v1/nodes/tiny", body), 200, fx, "label");
		run(fx, CTRL_SCHEDULER); /* still backing off: not tried */
		e = ctrl_schedq_find(&fx->ctrl->schedq, key, false);
		assert_int_equal(e->attempts, (uint32_t)i - 1);
		fx->now_us = e->retry_us;
		run(fx, CTRL_SCHEDULER);
		e = ctrl_schedq_find(&fx->ctrl->schedq, key, false);
		assert_int_equal(e->attempts, (uint32_t)i);
		want_ms = want_ms * 2 > K32_CTRL_SCHED_BACKOFF_MAX_MS
			      ? K32_CTRL_SCHED_BACKOFF_MAX_MS
			      : want_ms * 2;
		assert_int_equal(e->retry_us - e->tried_us, want_ms * 1000u);
	}
	assert_int_equal(e->event_us, first_event); /* same message: the event was not rewritten */
	/* without a change, the pod is tried again only after K32_CTRL_SCHED_PARK_MAX_S */
	fx->now_us += 20000000;
	run(fx, CTRL_SCHEDULER);
	assert_int_equal(ctrl_schedq_find(&fx->ctrl->schedq, key, false)->attempts, 6);
	fx->now_us += (uint64_t)K32_CTRL_SCHED_PARK_MAX_S * 1000000u;
	run(fx, CTRL_SCHEDULER);
	e = ctrl_schedq_find(&fx->ctrl->schedq, key, false);
	assert_int_equal(e->attempts, 7);
	assert_true(e->event_us > first_event); /* the interval passed: counted again */
	/* a deleted pod leaves the queue */
	must(req(fx, "DELETE", "/api/v1/namespaces/default/pods/huge?gracePeriodSeconds=0", NULL),
	     200, fx, "delete");
	run(fx, CTRL_SCHEDULER);
	assert_null(ctrl_schedq_find(&fx->ctrl->schedq, key, false));
}

/* The queue's table: many keys in, removal by backward shift keeps every other key found. */
static void test_schedq_table(void **state)
{
	(void)state;
	struct ctrl_schedq *q = NULL;
	char uid[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		struct ctrl_schedq_ent *e = ctrl_schedq_find(&q, ctrl_schedq_key(uid), true);
		assert_non_null(e);
		e->seen = (uint32_t)(i % 3 ? 1 : 2);
		e->attempts = (uint32_t)i;
	}
	assert_int_equal(ctrl_schedq_count(q), 1000);
	ctrl_schedq_sweep(q, 1); /* drops the third seen in "pass 2" */
	for (int i = 0; i < 1000; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		struct ctrl_schedq_ent *e = ctrl_schedq_find(&q, ctrl_schedq_key(uid), false);
		if (i % 3) {
			assert_non_null(e);
			assert_int_equal(e->attempts, (uint32_t)i);
		} else {
			assert_null(e);
		}
	}
	for (int i = 1; i < 1000; i += 3) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		ctrl_schedq_remove(q, ctrl_schedq_key(uid));
	}
	for (int i = 2; i < 1000; i += 3) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		assert_non_null(ctrl_schedq_find(&q, ctrl_schedq_key(uid), false));
	}
	assert_int_equal(ctrl_schedq_count(q), 333);
	ctrl_schedq_free(q);
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

/* ---- kubelet simulation ---------------------------------------------------------------- */

/* Plays every kubelet: bound pods go Running+Ready (or the phase given for pods whose name
 * starts with fail_prefix / ok_prefix), pods being deleted are removed with grace 0. */
static void kubelet_phase(struct fx *fx, const char *ok_prefix, const char *fail_prefix)
{
	cJSON *l = get(fx, "/api/v1/pods");
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		const char *ns = ctrl_jstr(p, "metadata.namespace");
		const char *name = ctrl_jstr(p, "metadata.name");
		const char *node = ctrl_jstr(p, "spec.nodeName");
		char target[300];
		if (ctrl_jstr(p, "metadata.deletionTimestamp")) {
			snprintf(target, sizeof(target),
				 "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", ns, name);
			req(fx, "DELETE", target, NULL);
			continue;
		}
		if (!node || !node[0] || ctrl_pod_terminal(p))
			continue;
		const char *gen = ctrl_jstr(p, "metadata.generateName");
		const char *base = gen ? gen : name;
		const char *phase = "Running";
		if (ok_prefix && !strncmp(base, ok_prefix, strlen(ok_prefix)))
			phase = "Succeeded";
		if (fail_prefix && !strncmp(base, fail_prefix, strlen(fail_prefix)))
			phase = "Failed";
		bool ready = !strcmp(phase, "Running");
		if (ready && ctrl_pod_ready(p))
			continue;
		char now[32];
		ctrl_fmt_time(fx->wall_s, now, sizeof(now));
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/status", ns, name);
		must(reqf(fx, "PATCH", target,
			  "{\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":\"Ready\","
			  "\"status\":\"%s\",\"lastTransitionTime\":\"%s\"}],"
			  "\"containerStatuses\":[{\"name\":\"main\",\"state\":{%s%s%s}}]}}",
			  phase, ready ? "True" : "False", now,
			  ready ? "\"running\":{}" : "\"terminated\":{\"finishedAt\":\"",
			  ready ? "" : now, ready ? "" : "\"}"),
		     200, fx, "pod status");
	}
	cJSON_Delete(l);
}

static void kubelet(struct fx *fx)
{
	kubelet_phase(fx, NULL, NULL);
}

/* Counts pods in ns whose name starts with prefix: live (not being deleted) and ready. */
static void count_pods(struct fx *fx, const char *prefix, int *out_live, int *out_ready)
{
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
	const cJSON *p;
	*out_live = 0;
	*out_ready = 0;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		const char *name = ctrl_jstr(p, "metadata.name");
		if (strncmp(name, prefix, strlen(prefix)) ||
		    ctrl_jstr(p, "metadata.deletionTimestamp"))
			continue;
		(*out_live)++;
		*out_ready += ctrl_pod_ready(p);
	}
	cJSON_Delete(l);
}

static int64_t jint(struct fx *fx, const char *target, const char *path)
{
	cJSON *o = get(fx, target);
	int64_t v = ctrl_jint(o, path, 0);
	cJSON_Delete(o);
	return v;
}

/* ---- ReplicaSet ------------------------------------------------------------------------ */

static const char *rs_body =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web\"},"
    "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
    "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{"
    "\"name\":\"main\",\"image\":\"hello.wasm\"}]}}}}";

static void test_rs_scale(void **state)
{
	struct fx *fx = *state;
	const char *rs = "/apis/apps/v1/namespaces/default/replicasets/web";
	node_add(fx, "n1", "1Mi", 20, NULL, NULL, NULL);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs");
	settle(fx, 2);
	int live, ready;
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 3);
	assert_int_equal(ready, 0);
	/* owned by the ReplicaSet, bound by the scheduler */
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
	const cJSON *p;
	cJSON *rsj = get(fx, rs);
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		assert_string_equal(ctrl_controller_uid(p), ctrl_jstr(rsj, "metadata.uid"));
		assert_string_equal(ctrl_jstr(p, "spec.nodeName"), "n1");
		assert_string_equal(ctrl_jstr(p, "metadata.labels.app"), "web");
	}
	cJSON_Delete(l);
	cJSON_Delete(rsj);
	kubelet(fx);
	settle(fx, 1);
	assert_int_equal(jint(fx, rs, "status.replicas"), 3);
	assert_int_equal(jint(fx, rs, "status.readyReplicas"), 3);
	assert_int_equal(jint(fx, rs, "status.availableReplicas"), 3);
	assert_int_equal(jint(fx, rs, "status.fullyLabeledReplicas"), 3);
	assert_int_equal(jint(fx, rs, "status.observedGeneration"), 1);
	/* scale up to 5 through the scale subresource, then down to 1 */
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale",
		 "{\"spec\":{\"replicas\":5}}"),
	     200, fx, "scale up");
	settle(fx, 2);
	kubelet(fx);
	settle(fx, 1);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 5);
	assert_int_equal(jint(fx, rs, "status.readyReplicas"), 5);
	assert_int_equal(jint(fx, rs, "status.observedGeneration"), 2);
	/* a pod that is not bound goes first on scale-down */
	must(req(fx, "PATCH", "/api/v1/nodes/n1", "{\"spec\":{\"unschedulable\":true}}"), 200, fx,
	     "cordon");
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale",
		 "{\"spec\":{\"replicas\":6}}"),
	     200, fx, "scale 6");
	settle(fx, 1);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 6);
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale",
		 "{\"spec\":{\"replicas\":1}}"),
	     200, fx, "scale down");
	run(fx, CTRL_REPLICASET);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 1);
	assert_int_equal(ready, 1); /* the unbound one went, and four ready ones */
	kubelet(fx);
	settle(fx, 1);
	assert_int_equal(jint(fx, rs, "status.replicas"), 1);
	/* events on the ReplicaSet */
	char msg[256];
	event_msg(fx, "web", "SuccessfulCreate", msg, sizeof(msg));
	assert_non_null(strstr(msg, "Created pod: web-"));
	event_msg(fx, "web", "SuccessfulDelete", msg, sizeof(msg));
	assert_non_null(strstr(msg, "Deleted pod: web-"));
	/* a pod relabelled out of the ReplicaSet is released and replaced; a matching orphan
	 * is adopted (the ReplicaSet then has one too many and deletes one) */
	l = get(fx, "/api/v1/namespaces/default/pods");
	char one[128] = "";
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		if (!ctrl_jstr(p, "metadata.deletionTimestamp"))
			snprintf(one, sizeof(one), "%s", ctrl_jstr(p, "metadata.name"));
	}
	cJSON_Delete(l);
	char target[200];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", one);
	must(req(fx, "PATCH", target, "{\"metadata\":{\"labels\":{\"app\":\"debug\"}}}"), 200, fx,
	     "relabel");
	settle(fx, 2);
	cJSON *rel = get(fx, target);
	assert_null(ctrl_controller_uid(rel));
	cJSON_Delete(rel);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 2); /* the released one + its replacement */
	must(req(fx, "PATCH", target, "{\"metadata\":{\"labels\":{\"app\":\"web\"}}}"), 200, fx,
	     "relabel back");
	settle(fx, 1);
	rel = get(fx, target);
	rsj = get(fx, rs);
	const char *cu = ctrl_controller_uid(rel);
	assert_non_null(cu);
	assert_string_equal(cu, ctrl_jstr(rsj, "metadata.uid"));
	cJSON_Delete(rel);
	cJSON_Delete(rsj);
	kubelet(fx);
	settle(fx, 1);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 1); /* adopted, then one of the two deleted */
	/* a pod that fails is replaced */
	kubelet_phase(fx, NULL, "web-");
	settle(fx, 2);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 2); /* the Failed one stays (for its logs) + its replacement */
	assert_int_equal(jint(fx, rs, "status.replicas"), 1);
}

/* ---- Deployment ------------------------------------------------------------------------ */

static const char *deploy_fmt =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"app\"},"
    "\"spec\":{\"replicas\":4,\"revisionHistoryLimit\":%d,\"selector\":{\"matchLabels\":{"
    "\"app\":\"app\"}},\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{"
    "\"maxSurge\":1,\"maxUnavailable\":1}},\"template\":{\"metadata\":{\"labels\":{\"app\":"
    "\"app\"}},\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"%s\"}]}}}}";

#define DEPLOY "/apis/apps/v1/namespaces/default/deployments/app"

static bool deploy_done(struct fx *fx)
{
	cJSON *d = get(fx, DEPLOY);
	const cJSON *cd = ctrl_cond_find(k32_json_find(d, "status.conditions"), "Progressing");
	const char *reason = ctrl_jstr(cd, "reason");
	bool done = ctrl_jint(d, "status.observedGeneration", 0) ==
			ctrl_jint(d, "metadata.generation", 1) &&
		    ctrl_jint(d, "status.updatedReplicas", 0) == 4 &&
		    ctrl_jint(d, "status.replicas", 0) == 4 &&
		    ctrl_jint(d, "status.availableReplicas", 0) == 4 && reason &&
		    !strcmp(reason, "NewReplicaSetAvailable");
	cJSON_Delete(d);
	return done;
}

/* Steps controllers and kubelet until the rollout completes, checking after every step that
 * at most replicas + maxSurge pods exist and at least replicas - maxUnavailable are ready
 * (once the first rollout has made them ready). */
static int rollout(struct fx *fx, bool check_ready)
{
	for (int step = 0; step < 60; step++) {
		if (deploy_done(fx))
			return step;
		run(fx, CTRL_ALL);
		int live, ready;
		count_pods(fx, "app-", &live, &ready);
		if (live > 5)
			fail_msg("step %d: %d pods exist, maxSurge allows 5", step, live);
		if (check_ready && ready < 3)
			fail_msg("step %d: %d pods ready, maxUnavailable allows 3", step, ready);
		kubelet(fx);
	}
	fail_msg("rollout did not complete in 60 steps");
	return -1;
}

static const char *dp_annotation(cJSON *o)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(k32_json_find(o, "metadata.annotations"),
							  "deployment.kubernetes.io/revision");
	return cJSON_IsString(a) ? a->valuestring : "";
}

static void test_deploy_rollout_undo(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "n1", "1Mi", 50, NULL, NULL, NULL);
	must(reqf(fx, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy_fmt, 10,
		  "a.wasm"),
	     201, fx, "deployment");
	rollout(fx, false);
	cJSON *d = get(fx, DEPLOY);
	assert_string_equal(dp_annotation(d), "1");
	const cJSON *av = ctrl_cond_find(k32_json_find(d, "status.conditions"), "Available");
	assert_string_equal(ctrl_jstr(av, "status"), "True");
	assert_string_equal(ctrl_jstr(av, "reason"), "MinimumReplicasAvailable");
	assert_int_equal(ctrl_jint(d, "status.readyReplicas", 0), 4);
	cJSON_Delete(d);
	/* template A -> B: surge 1, unavailable 1 hold at every step */
	must(req(fx, "PATCH", DEPLOY,
		 "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
		 "\"image\":\"b.wasm\"}]}}}}"),
	     200, fx, "set image");
	int steps = rollout(fx, true);
	assert_true(steps >= 2);
	cJSON *rsl = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rsl, "items")), 2);
	cJSON *old_tmpl = NULL;
	const cJSON *rs;
	cJSON_ArrayForEach(rs, cJSON_GetObjectItem(rsl, "items"))
	{
		const char *img = ctrl_jstr(
		    cJSON_GetArrayItem(k32_json_find(rs, "spec.template.spec.containers"), 0),
		    "image");
		const char *rev = dp_annotation((cJSON *)rs);
		if (!strcmp(img, "a.wasm")) {
			assert_string_equal(rev, "1");
			assert_int_equal(ctrl_jint(rs, "spec.replicas", -1), 0);
			old_tmpl = cJSON_Duplicate(k32_json_find(rs, "spec.template"), true);
		} else {
			assert_string_equal(rev, "2");
			assert_int_equal(ctrl_jint(rs, "spec.replicas", -1), 4);
			assert_non_null(k32_json_find(rs, "metadata.labels.pod-template-hash"));
		}
	}
	cJSON_Delete(rsl);
	d = get(fx, DEPLOY);
	assert_string_equal(dp_annotation(d), "2");
	cJSON_Delete(d);
	char msg[256];
	event_msg(fx, "app", "ScalingReplicaSet", msg, sizeof(msg));
	assert_non_null(strstr(msg, "Scaled down replica set app-"));
	/* kubectl rollout undo: JSON patch replacing /spec/template with the old ReplicaSet's
	 * template minus its pod-template-hash label */
	assert_non_null(old_tmpl);
	cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)k32_json_find(old_tmpl, "metadata.labels"),
						"pod-template-hash");
	/* kubectl's typed template carries "creationTimestamp": null */
	cJSON_AddNullToObject(cJSON_GetObjectItem(old_tmpl, "metadata"), "creationTimestamp");
	char *tt = cJSON_PrintUnformatted(old_tmpl);
	char body[4096];
	snprintf(body, sizeof(body),
		 "[{\"op\":\"replace\",\"path\":\"/spec/template\",\"value\":%s}]", tt);
	cJSON_free(tt);
	cJSON_Delete(old_tmpl);
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&fx->out);
	assert_int_equal(api_do(fx->api, "PATCH", DEPLOY, "application/json-patch+json", body,
				strlen(body), &code, &fx->out, &err),
			 K32_OK);
	must(code, 200, fx, "undo");
	rollout(fx, true);
	rsl = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rsl, "items")), 2);
	cJSON_ArrayForEach(rs, cJSON_GetObjectItem(rsl, "items"))
	{
		const char *img = ctrl_jstr(
		    cJSON_GetArrayItem(k32_json_find(rs, "spec.template.spec.containers"), 0),
		    "image");
		if (!strcmp(img, "a.wasm")) {
			assert_string_equal(dp_annotation((cJSON *)rs), "3");
			assert_int_equal(ctrl_jint(rs, "spec.replicas", -1), 4);
		} else {
			assert_int_equal(ctrl_jint(rs, "spec.replicas", -1), 0);
		}
	}
	cJSON_Delete(rsl);
	d = get(fx, DEPLOY);
	assert_string_equal(dp_annotation(d), "3");
	cJSON_Delete(d);
	/* history limit 0: the idle old ReplicaSet is deleted */
	must(req(fx, "PATCH", DEPLOY, "{\"spec\":{\"revisionHistoryLimit\":0}}"), 200, fx,
	     "history");
	settle(fx, 2);
	rsl = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rsl, "items")), 1);
	cJSON_Delete(rsl);
	/* scale the Deployment down through its scale subresource */
	must(req(fx, "PATCH", DEPLOY "/scale", "{\"spec\":{\"replicas\":2}}"), 200, fx, "scale");
	settle(fx, 2);
	kubelet(fx);
	settle(fx, 2);
	int live, ready;
	count_pods(fx, "app-", &live, &ready);
	assert_int_equal(live, 2);
	assert_int_equal(jint(fx, DEPLOY, "status.availableReplicas"), 2);
	/* delete with --cascade=orphan, apply again: the ReplicaSet and its pods are adopted */
	must(req(fx, "DELETE", DEPLOY "?propagationPolicy=Orphan", NULL), 200, fx, "orphan");
	rsl = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	rs = cJSON_GetArrayItem(cJSON_GetObjectItem(rsl, "items"), 0);
	assert_null(ctrl_controller_uid(rs));
	cJSON_Delete(rsl);
	must(reqf(fx, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy_fmt, 0,
		  "a.wasm"),
	     201, fx, "deployment again");
	settle(fx, 3);
	kubelet(fx);
	settle(fx, 2);
	rsl = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rsl, "items")), 1);
	rs = cJSON_GetArrayItem(cJSON_GetObjectItem(rsl, "items"), 0);
	d = get(fx, DEPLOY);
	assert_string_equal(ctrl_controller_uid(rs), ctrl_jstr(d, "metadata.uid"));
	cJSON_Delete(d);
	cJSON_Delete(rsl);
	assert_true(deploy_done(fx));
}

/* A rollout that makes no progress for progressDeadlineSeconds is reported as such (kubectl
 * rollout status then fails), and recovers once pods become available. */
static void test_deploy_deadline(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "n1", "1Mi", 50, NULL, NULL, NULL);
	must(reqf(fx, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy_fmt, 10,
		  "a.wasm"),
	     201, fx, "deployment");
	must(req(fx, "PATCH", DEPLOY, "{\"spec\":{\"progressDeadlineSeconds\":60}}"), 200, fx,
	     "deadline");
	for (int i = 0; i < 4; i++)
		settle(fx, 1); /* no kubelet: nothing becomes Ready */
	cJSON *d = get(fx, DEPLOY);
	const cJSON *cd = ctrl_cond_find(k32_json_find(d, "status.conditions"), "Progressing");
	assert_string_equal(ctrl_jstr(cd, "reason"), "ReplicaSetUpdated");
	cJSON_Delete(d);
	fx->wall_s += 61;
	settle(fx, 1);
	settle(fx, 1); /* stays: nothing moved */
	d = get(fx, DEPLOY);
	cd = ctrl_cond_find(k32_json_find(d, "status.conditions"), "Progressing");
	assert_string_equal(ctrl_jstr(cd, "status"), "False");
	assert_string_equal(ctrl_jstr(cd, "reason"), "ProgressDeadlineExceeded");
	cJSON_Delete(d);
	rollout(fx, false);
}

/* Recreate: the old pods all go before any new one is created. */
static void test_deploy_recreate(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "n1", "1Mi", 50, NULL, NULL, NULL);
	must(reqf(fx, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy_fmt, 10,
		  "a.wasm"),
	     201, fx, "deployment");
	must(req(fx, "PATCH", DEPLOY,
		 "{\"spec\":{\"strategy\":{\"type\":\"Recreate\",\"rollingUpdate\":null}}}"),
	     200, fx, "recreate");
	rollout(fx, false);
	must(req(fx, "PATCH", DEPLOY,
		 "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
		 "\"image\":\"b.wasm\"}]}}}}"),
	     200, fx, "set image");
	for (int step = 0; step < 60 && !deploy_done(fx); step++) {
		run(fx, CTRL_ALL);
		/* never old and new pods at once */
		cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
		const cJSON *p;
		int olds = 0, news = 0;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
		{
			const char *img = ctrl_jstr(
			    cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0), "image");
			if (!strcmp(img, "a.wasm"))
				olds++;
			else
				news++;
		}
		cJSON_Delete(l);
		if (olds && news)
			fail_msg("step %d: %d old and %d new pods at once", step, olds, news);
		/* the kubelet finishes deletions only every fourth step: new pods must wait */
		if (step % 4 == 3)
			kubelet(fx);
	}
	assert_true(deploy_done(fx));
}

/* ---- DaemonSet ------------------------------------------------------------------------- */

#define DS "/apis/apps/v1/namespaces/default/daemonsets/drv"

static void test_daemonset(void **state)
{
	struct fx *fx = *state;
	node_add(fx, "b1", "1Mi", 10, "\"labels\":{\"bus\":\"i2c\"}", NULL, NULL);
	node_add(fx, "b2", "1Mi", 10, "\"labels\":{\"bus\":\"i2c\"}", "\"unschedulable\":true",
		 NULL);
	node_add(fx, "other", "1Mi", 10, NULL, NULL, NULL);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/daemonsets",
		 "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":"
		 "\"drv\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"drv\"}},"
		 "\"template\":{\"metadata\":{\"labels\":{\"app\":\"drv\"}},\"spec\":{"
		 "\"nodeSelector\":{\"bus\":\"i2c\"},\"containers\":[{\"name\":\"main\","
		 "\"image\":\"bme688.wasm\"}]}}}}"),
	     201, fx, "ds");
	settle(fx, 2);
	kubelet(fx);
	settle(fx, 1);
	char target[200];
	int live, ready;
	count_pods(fx, "drv-", &live, &ready);
	assert_int_equal(live, 2); /* b1 and the cordoned b2 (daemons tolerate it), not other */
	assert_int_equal(jint(fx, DS, "status.desiredNumberScheduled"), 2);
	assert_int_equal(jint(fx, DS, "status.currentNumberScheduled"), 2);
	assert_int_equal(jint(fx, DS, "status.numberReady"), 2);
	assert_int_equal(jint(fx, DS, "status.updatedNumberScheduled"), 2);
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
	const cJSON *p;
	int on_b1 = 0, on_b2 = 0;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		const char *n = ctrl_jstr(p, "spec.nodeName");
		on_b1 += !strcmp(n, "b1");
		on_b2 += !strcmp(n, "b2");
		/* pinned by node affinity (matchFields), as Kubernetes does */
		const cJSON *mf = cJSON_GetArrayItem(
		    cJSON_GetObjectItem(
			cJSON_GetArrayItem(
			    k32_json_find(p, "spec.affinity.nodeAffinity."
					     "requiredDuringSchedulingIgnoredDuringExecution."
					     "nodeSelectorTerms"),
			    0),
			"matchFields"),
		    0);
		assert_string_equal(ctrl_jstr(mf, "key"), "metadata.name");
	}
	cJSON_Delete(l);
	assert_int_equal(on_b1, 1);
	assert_int_equal(on_b2, 1);
	/* node added: a pod follows; node label removed: its pod goes */
	node_add(fx, "b3", "1Mi", 10, "\"labels\":{\"bus\":\"i2c\"}", NULL, NULL);
	settle(fx, 2);
	kubelet(fx);
	count_pods(fx, "drv-", &live, &ready);
	assert_int_equal(live, 3);
	must(req(fx, "PATCH", "/api/v1/nodes/b1", "{\"metadata\":{\"labels\":{\"bus\":null}}}"),
	     200, fx, "unlabel");
	settle(fx, 1);
	kubelet(fx);
	settle(fx, 1);
	count_pods(fx, "drv-", &live, &ready);
	assert_int_equal(live, 2);
	/* node deleted: its pod is deleted at once (nobody is there to confirm) */
	must(req(fx, "DELETE", "/api/v1/nodes/b3", NULL), 200, fx, "delete node");
	settle(fx, 1);
	count_pods(fx, "drv-", &live, &ready);
	assert_int_equal(live, 1);
	assert_int_equal(jint(fx, DS, "status.desiredNumberScheduled"), 1);
	/* template change rolls the pod */
	must(req(fx, "PATCH", DS,
		 "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
		 "\"image\":\"bme688-v2.wasm\"}]}}}}"),
	     200, fx, "ds update");
	for (int i = 0; i < 4; i++) {
		settle(fx, 1);
		kubelet(fx);
	}
	settle(fx, 1);
	assert_int_equal(jint(fx, DS, "status.updatedNumberScheduled"), 1);
	assert_int_equal(jint(fx, DS, "status.numberReady"), 1);
	l = get(fx, "/api/v1/namespaces/default/pods");
	p = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "items"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 1);
	assert_string_equal(
	    ctrl_jstr(cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0), "image"),
	    "bme688-v2.wasm");
	cJSON_Delete(l);
	(void)target;
}

/* ---- Job ------------------------------------------------------------------------------- */

static void job_create(struct fx *fx, const char *name, int completions, int parallelism,
		       int backoff)
{
	must(reqf(fx, "POST", "/apis/batch/v1/namespaces/default/jobs",
		  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\"},"
		  "\"spec\":{\"completions\":%d,\"parallelism\":%d,\"backoffLimit\":%d,"
		  "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
		  "\"main\",\"image\":\"wasi-hello.wasm\"}]}}}}",
		  name, completions, parallelism, backoff),
	     201, fx, name);
}

static void test_job_complete(void **state)
{
	struct fx *fx = *state;
	const char *job = "/apis/batch/v1/namespaces/default/jobs/hello";
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	job_create(fx, "hello", 3, 2, 6);
	settle(fx, 2);
	int live, ready;
	count_pods(fx, "hello-", &live, &ready);
	assert_int_equal(live, 2); /* parallelism */
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods?labelSelector=job-name%3Dhello");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 2);
	cJSON_Delete(l);
	/* the Job got the selector Kubernetes generates (kubectl logs job/x uses it) */
	cJSON *jj = get(fx, job);
	const cJSON *ml = k32_json_find(jj, "spec.selector.matchLabels");
	assert_string_equal(ctrl_label(ml, "batch.kubernetes.io/controller-uid"),
			    ctrl_jstr(jj, "metadata.uid"));
	cJSON_Delete(jj);
	kubelet_phase(fx, "hello-", NULL); /* both succeed */
	settle(fx, 2);
	count_pods(fx, "hello-", &live, &ready);
	assert_int_equal(live, 3); /* 2 succeeded + the last completion */
	assert_int_equal(jint(fx, job, "status.succeeded"), 2);
	assert_int_equal(jint(fx, job, "status.active"), 1);
	kubelet_phase(fx, "hello-", NULL);
	settle(fx, 2);
	cJSON *j = get(fx, job);
	assert_int_equal(ctrl_jint(j, "status.succeeded", 0), 3);
	assert_int_equal(ctrl_jint(j, "status.active", -1), 0);
	assert_string_equal(ctrl_cond_status(j, "Complete"), "True");
	assert_non_null(ctrl_jstr(j, "status.completionTime"));
	assert_non_null(ctrl_jstr(j, "status.startTime"));
	cJSON_Delete(j);
	char msg[128];
	event_msg(fx, "hello", "Completed", msg, sizeof(msg));
	assert_string_equal(msg, "Job completed");
	/* finished: nothing more is created */
	settle(fx, 2);
	count_pods(fx, "hello-", &live, &ready);
	assert_int_equal(live, 3);
}

static void test_job_backoff(void **state)
{
	struct fx *fx = *state;
	const char *job = "/apis/batch/v1/namespaces/default/jobs/crash";
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	job_create(fx, "crash", 1, 1, 2);
	int live, ready;
	for (int i = 0; i < 3; i++) {
		settle(fx, 2);
		kubelet_phase(fx, NULL, "crash-");
		/* the replacement waits for the back-off: 10 s, then 20 s */
		settle(fx, 2);
		count_pods(fx, "crash-", &live, &ready);
		assert_int_equal(live, i + 1);
		fx->wall_s += (uint64_t)K32_CTRL_JOB_BACKOFF_S << i;
	}
	settle(fx, 2);
	cJSON *j = get(fx, job);
	assert_int_equal(ctrl_jint(j, "status.failed", 0), 3); /* backoffLimit 2 + 1 */
	assert_string_equal(ctrl_cond_status(j, "Failed"), "True");
	const cJSON *cd = ctrl_cond_find(k32_json_find(j, "status.conditions"), "Failed");
	assert_string_equal(ctrl_jstr(cd, "reason"), "BackoffLimitExceeded");
	assert_null(ctrl_cond_status(j, "Complete"));
	cJSON_Delete(j);
	settle(fx, 2);
	count_pods(fx, "crash-", &live, &ready);
	assert_int_equal(live, 3); /* no retry after the Job failed */
}

/* ---- CronJob --------------------------------------------------------------------------- */

/* The CronJob's Jobs (its controller ownerReference), as a fresh array of names. */
static int cron_jobs(struct fx *fx, const char *cj_uid, char names[][64], int max)
{
	cJSON *l = get(fx, "/apis/batch/v1/namespaces/default/jobs");
	const cJSON *j;
	int n = 0;
	cJSON_ArrayForEach(j, cJSON_GetObjectItem(l, "items"))
	{
		const char *owner = ctrl_controller_uid(j);
		if (owner && !strcmp(owner, cj_uid) && n < max)
			snprintf(names[n++], 64, "%s", ctrl_jstr(j, "metadata.name"));
	}
	cJSON_Delete(l);
	return n;
}

/* A CronJob on a fake clock: nothing before its first time, a Job at it (named by the
 * scheduled minute, owned, annotated), Forbid holds the next one while it runs, the next
 * time after it completes runs, suspend stops it, and the oldest finished Job past the
 * history limit goes. */
static void test_cronjob(void **state)
{
	struct fx *fx = *state;
	const char *cjp = "/apis/batch/v1/namespaces/default/cronjobs/tick";
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	must(req(fx, "POST", "/apis/batch/v1/namespaces/default/cronjobs",
		 "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":"
		 "\"tick\"},\"spec\":{\"schedule\":\"*/5 * * * *\",\"concurrencyPolicy\":"
		 "\"Forbid\",\"successfulJobsHistoryLimit\":2,\"jobTemplate\":{\"spec\":{"
		 "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{"
		 "\"name\":\"main\",\"image\":\"wasi-hello.wasm\"}]}}}}}}"),
	     201, fx, "cronjob");
	cJSON *cj = get(fx, cjp);
	char uid[64];
	snprintf(uid, sizeof(uid), "%s", ctrl_jstr(cj, "metadata.uid"));
	uint64_t created;
	assert_true(ctrl_parse_time(ctrl_jstr(cj, "metadata.creationTimestamp"), &created));
	cJSON_Delete(cj);
	struct kmeta_cron cr;
	char why[160], names[8][64], want[64];
	assert_true(kmeta_cron_parse("*/5 * * * *", &cr, why, sizeof(why)));
	uint64_t t1 = kmeta_cron_next(&cr, created);
	/* before its first time: nothing */
	fx->wall_s = t1 - 1;
	settle(fx, 3);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 0);
	/* at it: one Job named by the scheduled minute, with its pods */
	fx->wall_s = t1 + 7;
	settle(fx, 3);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 1);
	snprintf(want, sizeof(want), "tick-%llu", (unsigned long long)(t1 / 60));
	assert_string_equal(names[0], want);
	char jp[200], ts[32];
	snprintf(jp, sizeof(jp), "/apis/batch/v1/namespaces/default/jobs/%s", want);
	cJSON *job = get(fx, jp);
	ctrl_fmt_time(t1, ts, sizeof(ts));
	assert_string_equal(ctrl_label(k32_json_find(job, "metadata.annotations"),
				       "batch.kubernetes.io/cronjob-scheduled-timestamp"),
			    ts);
	cJSON_Delete(job);
	cj = get(fx, cjp);
	assert_string_equal(ctrl_jstr(cj, "status.lastScheduleTime"), ts);
	assert_int_equal(cJSON_GetArraySize(k32_json_find(cj, "status.active")), 1);
	cJSON_Delete(cj);
	char msg[128];
	event_msg(fx, "tick", "SuccessfulCreate", msg, sizeof(msg));
	snprintf(why, sizeof(why), "Created job %s", want);
	assert_string_equal(msg, why);
	/* a pass at the same time again makes nothing more */
	settle(fx, 2);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 1);
	/* Forbid: the next time comes while the Job runs: held */
	kubelet_phase(fx, NULL, NULL); /* its pod runs */
	fx->wall_s = t1 + 300 + 5;
	settle(fx, 3);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 1);
	/* it completes: the held time runs (still within no deadline) */
	kubelet_phase(fx, "tick-", NULL);
	settle(fx, 3);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 2);
	cj = get(fx, cjp);
	assert_non_null(ctrl_jstr(cj, "status.lastSuccessfulTime"));
	cJSON_Delete(cj);
	/* two more completed runs: three succeeded, the oldest goes (history limit 2) */
	for (int i = 2; i <= 3; i++) {
		kubelet_phase(fx, "tick-", NULL);
		settle(fx, 3);
		fx->wall_s = t1 + 300 * (uint64_t)i + 5;
		settle(fx, 3);
	}
	kubelet_phase(fx, "tick-", NULL);
	settle(fx, 4);
	int n = cron_jobs(fx, uid, names, 8);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		assert_string_not_equal(names[i], want); /* the first one was deleted */
	/* suspended: its next time passes with no Job */
	must(req(fx, "PATCH", cjp, "{\"spec\":{\"suspend\":true}}"), 200, fx, "suspend");
	fx->wall_s += 600;
	settle(fx, 3);
	assert_int_equal(cron_jobs(fx, uid, names, 8), 2);
}

/* ---- node lifecycle -------------------------------------------------------------------- */

static void lease_renew(struct fx *fx, const char *node)
{
	static int seq;
	char target[200];
	seq++;
	snprintf(target, sizeof(target),
		 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/%s", node);
	int code =
	    reqf(fx, "PATCH", target, "{\"spec\":{\"renewTime\":\"2026-01-01T00:00:%02d.%06dZ\"}}",
		 seq % 60, seq);
	if (code == 404)
		code = reqf(
		    fx, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
		    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
		    "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"holderIdentity\":\"%s\","
		    "\"leaseDurationSeconds\":40,\"renewTime\":\"2026-01-01T00:00:00.%06dZ\"}}",
		    node, node, seq);
	if (code != 200 && code != 201)
		fail_msg("lease %s: %d %s", node, code, k32_buf_cstr(&fx->out));
}

static bool node_tainted(struct fx *fx, const char *node, const char *effect)
{
	char target[100];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", node);
	cJSON *n = get(fx, target);
	bool has = false;
	const cJSON *t;
	cJSON_ArrayForEach(t, k32_json_find(n, "spec.taints"))
	{
		has |= !strcmp(ctrl_jstr(t, "key"), "node.kubernetes.io/unreachable") &&
		       !strcmp(ctrl_jstr(t, "effect"), effect);
	}
	cJSON_Delete(n);
	return has;
}

static const char *node_ready_status(struct fx *fx, const char *node, char *buf, size_t cap)
{
	char target[100];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", node);
	cJSON *n = get(fx, target);
	snprintf(buf, cap, "%s", ctrl_cond_status(n, "Ready"));
	cJSON_Delete(n);
	return buf;
}

static int pods_on(struct fx *fx, const char *node)
{
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
	const cJSON *p;
	int n = 0;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		const char *nn = ctrl_jstr(p, "spec.nodeName");
		n += nn && !strcmp(nn, node) && !ctrl_jstr(p, "metadata.deletionTimestamp");
	}
	cJSON_Delete(l);
	return n;
}

/* Counts WARN lines of ctrl containing what, from log sequence *seq on (advanced). */
static int warn_count(uint64_t *seq, const char *what)
{
	static struct k32_log_line lines[64];
	size_t nl;
	int n = 0;
	while ((nl = k32_log_read(*seq, lines, 64, NULL)) > 0) {
		*seq = lines[nl - 1].seq;
		for (size_t i = 0; i < nl; i++)
			n += lines[i].level == K32_LOG_WARN && strstr(lines[i].text, what);
	}
	return n;
}

/* Node lifecycle watches every node up to ctrl_config.max_nodes (no fixed 64: the 100th
 * node's silence is seen), and past the limit says so in one line per pass whatever the
 * number of nodes left out, not one line per node. */
static void test_node_many(void **state)
{
	struct fx *fx = *state;
	char name[16];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "m%03d", i);
		node_add(fx, name, "1Mi", 10, NULL, NULL, NULL);
		lease_renew(fx, name);
	}
	uint64_t seq = 0;
	warn_count(&seq, "");
	run(fx, CTRL_NODE_LIFECYCLE);
	fx->now_us += (uint64_t)(K32_CTRL_NODE_GRACE_S + 1) * 1000000u;
	for (int i = 0; i < 99; i++) { /* all but m099 renew */
		snprintf(name, sizeof(name), "m%03d", i);
		lease_renew(fx, name);
	}
	run(fx, CTRL_NODE_LIFECYCLE);
	cJSON *n = get(fx, "/api/v1/nodes/m099");
	assert_string_equal(ctrl_cond_status(n, "Ready"), "Unknown");
	cJSON_Delete(n);
	n = get(fx, "/api/v1/nodes/m098");
	assert_string_equal(ctrl_cond_status(n, "Ready"), "True");
	cJSON_Delete(n);
	assert_int_equal(warn_count(&seq, "not monitored"), 0);
	/* a controller limited to 10 nodes: one WARN naming the 90 others and the limit */
	struct k32_err err;
	struct ctrl *c = NULL;
	struct ctrl_config cc = {.no_task = true,
				 .enable = CTRL_NODE_LIFECYCLE,
				 .max_nodes = 10,
				 .now_us = fx_now,
				 .wall_s = fx_wall,
				 .clock_ctx = fx};
	assert_int_equal(ctrl_start(&cc, fx->kc, &c, &err), K32_OK);
	assert_int_equal(ctrl_run_once(c, CTRL_NODE_LIFECYCLE, NULL, &err), K32_OK);
	assert_int_equal(warn_count(&seq, "90 nodes not monitored: 10 are, the limit "
					  "(ctrl_config.max_nodes, K32_CTRL_MAX_NODES) is 10"),
			 1);
	/* the same count again: no new line before a minute */
	assert_int_equal(ctrl_run_once(c, CTRL_NODE_LIFECYCLE, NULL, &err), K32_OK);
	assert_int_equal(warn_count(&seq, "not monitored"), 0);
	ctrl_stop(c);
}

static void test_node_lifecycle(void **state)
{
	struct fx *fx = *state;
	char buf[32];
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	node_add(fx, "n2", "1Mi", 10, NULL, NULL, NULL);
	lease_renew(fx, "n1");
	lease_renew(fx, "n2");
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs");
	/* a pod that tolerates unreachable forever stays */
	pod_add(fx, "default", "stay", NULL, NULL,
		"\"nodeName\":\"n1\",\"tolerations\":[{\"key\":\"node.kubernetes.io/"
		"unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]");
	settle(fx, 2);
	kubelet(fx);
	settle(fx, 1);
	int on1 = pods_on(fx, "n1");
	assert_true(on1 >= 2); /* "stay" and at least one web pod */
	/* 20 s: n2 renews, n1 is silent but within the grace */
	fx->now_us += 20 * 1000000ull;
	lease_renew(fx, "n2");
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_string_equal(node_ready_status(fx, "n1", buf, sizeof(buf)), "True");
	/* 41 s: n1 goes Unknown and gets the unreachable taints; no eviction yet */
	fx->now_us += 21 * 1000000ull;
	lease_renew(fx, "n2");
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_string_equal(node_ready_status(fx, "n1", buf, sizeof(buf)), "Unknown");
	assert_string_equal(node_ready_status(fx, "n2", buf, sizeof(buf)), "True");
	assert_true(node_tainted(fx, "n1", "NoExecute"));
	assert_true(node_tainted(fx, "n1", "NoSchedule"));
	assert_false(node_tainted(fx, "n2", "NoExecute"));
	assert_int_equal(pods_on(fx, "n1"), on1);
	/* 30 s more (K32_CTRL_POD_EVICTION_S): the web pods on n1 are evicted and come back
	 * on n2 */
	fx->now_us += 30 * 1000000ull;
	lease_renew(fx, "n2");
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_int_equal(pods_on(fx, "n1"), 1); /* only "stay" */
	settle(fx, 2);
	int live, ready;
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 3);
	assert_int_equal(pods_on(fx, "n2"), 3);
	struct ctrl_stats st;
	ctrl_get_stats(fx->ctrl, &st);
	assert_int_equal(st.evicted, (uint64_t)(on1 - 1));
	char msg[256];
	event_msg(fx, "stay", "TaintManagerEviction", msg, sizeof(msg));
	assert_string_equal(msg, "");
	/* n1 renews again: taints gone, Ready again */
	lease_renew(fx, "n1");
	lease_renew(fx, "n2");
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_false(node_tainted(fx, "n1", "NoExecute"));
	assert_false(node_tainted(fx, "n1", "NoSchedule"));
	assert_string_equal(node_ready_status(fx, "n1", buf, sizeof(buf)), "True");
	/* n1 deleted: the pods bound to it go once older than the grace (pod GC) */
	must(req(fx, "DELETE", "/api/v1/nodes/n1", NULL), 200, fx, "delete n1");
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_int_equal(pods_on(fx, "n1"), 1); /* "stay" was created "now" (wall clock) */
	fx->wall_s = k32_plat()->wall_s() + 60;
	fx->now_us += 31 * 1000000ull;
	run(fx, CTRL_NODE_LIFECYCLE);
	assert_int_equal(pods_on(fx, "n1"), 0);
}

/* ---- garbage collector and namespaces ------------------------------------------------- */

static void test_gc_background(void **state)
{
	struct fx *fx = *state;
	/* a ConfigMap owned by a pod (the API cascades only workload kinds) */
	pod_add(fx, "default", "owner", NULL, NULL, NULL);
	cJSON *p = get(fx, "/api/v1/namespaces/default/pods/owner");
	char uid[64];
	snprintf(uid, sizeof(uid), "%s", ctrl_jstr(p, "metadata.uid"));
	cJSON_Delete(p);
	must(reqf(fx, "POST", "/api/v1/namespaces/default/configmaps",
		  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dep\","
		  "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"owner\","
		  "\"uid\":\"%s\"}]},\"data\":{\"a\":\"b\"}}",
		  uid),
	     201, fx, "cm");
	/* two owners, one of them gone: only the reference goes */
	must(reqf(fx, "POST", "/api/v1/namespaces/default/configmaps",
		  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"two\","
		  "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"owner\","
		  "\"uid\":\"%s\"},{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"ghost\","
		  "\"uid\":\"0000\"}]}}",
		  uid),
	     201, fx, "cm2");
	/* an owner kind the GC does not know is left alone */
	must(req(fx, "POST", "/api/v1/namespaces/default/configmaps",
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"alien\","
		 "\"ownerReferences\":[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Thing\","
		 "\"name\":\"x\",\"uid\":\"1111\"}]}}"),
	     201, fx, "alien");
	run(fx, CTRL_GC);
	fx->now_us += K32_CTRL_GC_CONFIRM_S * 1000000ull;
	run(fx, CTRL_GC);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/dep", NULL), 200);
	cJSON *two = get(fx, "/api/v1/namespaces/default/configmaps/two");
	assert_int_equal(cJSON_GetArraySize(k32_json_find(two, "metadata.ownerReferences")), 1);
	cJSON_Delete(two);
	must(req(fx, "DELETE", "/api/v1/namespaces/default/pods/owner", NULL), 200, fx, "del");
	run(fx, CTRL_GC);
	/* found, not yet collected: the GC confirms K32_CTRL_GC_CONFIRM_S later */
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/dep", NULL), 200);
	fx->now_us += K32_CTRL_GC_CONFIRM_S * 1000000ull;
	run(fx, CTRL_GC);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/dep", NULL), 404);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/two", NULL), 404);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/alien", NULL), 200);
}

static void test_gc_foreground_orphan(void **state)
{
	struct fx *fx = *state;
	const char *rs = "/apis/apps/v1/namespaces/default/replicasets/web";
	node_add(fx, "n1", "1Mi", 20, NULL, NULL, NULL);
	/* foreground: the finalizer holds the ReplicaSet until its pods are gone */
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs");
	settle(fx, 2);
	must(req(fx, "PATCH", rs, "{\"metadata\":{\"finalizers\":[\"foregroundDeletion\"]}}"), 200,
	     fx, "finalizer");
	must(req(fx, "DELETE", rs, NULL), 200, fx, "delete rs");
	int live, ready;
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 3); /* held by the finalizer, pods untouched by the API */
	assert_int_equal(req(fx, "GET", rs, NULL), 200);
	run(fx, CTRL_GC); /* deletes the pods (bound: graceful) */
	assert_int_equal(req(fx, "GET", rs, NULL), 200);
	kubelet(fx); /* the kubelet finishes the graceful deletions */
	run(fx, CTRL_GC);
	assert_int_equal(req(fx, "GET", rs, NULL), 404);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 0);
	/* orphan: the pods stay, without their owner reference */
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs2");
	settle(fx, 2);
	must(req(fx, "PATCH", rs, "{\"metadata\":{\"finalizers\":[\"orphan\"]}}"), 200, fx,
	     "orphan finalizer");
	must(req(fx, "DELETE", rs, NULL), 200, fx, "delete rs2");
	run(fx, CTRL_GC);
	assert_int_equal(req(fx, "GET", rs, NULL), 404);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 3);
	cJSON *l = get(fx, "/api/v1/namespaces/default/pods");
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(l, "items"))
	{
		assert_int_equal(cJSON_GetArraySize(k32_json_find(p, "metadata.ownerReferences")),
				 0);
	}
	cJSON_Delete(l);
}

static void test_namespace_finalizer(void **state)
{
	struct fx *fx = *state;
	must(req(fx, "POST", "/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"t\","
		 "\"finalizers\":[\"kubernetes\"]}}"),
	     201, fx, "ns");
	must(req(fx, "POST", "/api/v1/namespaces/t/configmaps",
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}"),
	     201, fx, "cm");
	must(req(fx, "DELETE", "/api/v1/namespaces/t", NULL), 200, fx, "delete ns");
	cJSON *ns = get(fx, "/api/v1/namespaces/t");
	assert_string_equal(ctrl_jstr(ns, "status.phase"), "Terminating");
	cJSON_Delete(ns);
	run(fx, CTRL_NAMESPACE);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/t", NULL), 404);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/t/configmaps/c", NULL), 404);
}

/* ---- the task: store watches trigger passes -------------------------------------------- */

/* Waits (bounded, 10 s) for the RS's pods to exist: the condition is the assertion, the
 * wait only gives the task time to run. */
static void test_task_triggers(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	ctrl_stop(fx->ctrl);
	struct ctrl_config cc = {.resync_s = 3600, .sched_resync_s = 3600};
	if (ctrl_start(&cc, fx->kc, &fx->ctrl, &err))
		fail_msg("ctrl_start: %s", err.msg);
	node_add(fx, "n1", "1Mi", 20, NULL, NULL, NULL);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs");
	int live = 0, ready = 0, bound = 0;
	struct ctrl_stats st = {0};
	uint64_t deadline = k32_now_us() + 10 * 1000000ull;
	while (k32_now_us() < deadline) {
		count_pods(fx, "web-", &live, &ready);
		bound = pods_on(fx, "n1");
		/* the counter moves just after the binding is stored: wait for both */
		ctrl_get_stats(fx->ctrl, &st);
		if (live == 3 && bound == 3 && st.bound == 3)
			break;
		k32_plat()->sleep_us(5000);
	}
	assert_int_equal(live, 3);
	assert_int_equal(bound, 3);
	assert_true(st.passes > 0);
	assert_int_equal(st.bound, 3);
}

/* Heartbeats trigger no pass: a Node update that only moves lastHeartbeatTime is ignored,
 * one that changes a label or the Ready status is not. */
static void test_heartbeat_filter(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	struct store_key key = {.group = "", .resource = "nodes"};
	struct store_watch *w = NULL;
	assert_int_equal(store_watch_open(fx->store, &key, 0, NULL, NULL, &w, &err), K32_OK);
	static const struct {
		const char *path, *patch;
		bool changed;
	} steps[] = {
	    {"/api/v1/nodes/n1/status",
	     "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
	     "\"KubeletReady\",\"lastHeartbeatTime\":\"2026-01-01T00:00:10Z\"}]}}",
	     false},
	    {"/api/v1/nodes/n1/status",
	     "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
	     "\"KubeletReady\",\"lastHeartbeatTime\":\"2026-01-01T00:00:20Z\"}]}}",
	     false},
	    {"/api/v1/nodes/n1", "{\"metadata\":{\"labels\":{\"zone\":\"a\"}}}", true},
	    {"/api/v1/nodes/n1/status",
	     "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":"
	     "\"KubeletNotReady\",\"lastHeartbeatTime\":\"2026-01-01T00:00:30Z\"}]}}",
	     true},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		must(req(fx, "PATCH", steps[i].path, steps[i].patch), 200, fx, steps[i].path);
		struct store_event ev[4];
		size_t n = 0;
		assert_int_equal(store_watch_next(w, ev, 4, &n, K32_NO_WAIT, &err), K32_OK);
		assert_int_equal(n, 1);
		cJSON *now = cJSON_Parse(store_obj_data(ev[0].obj));
		cJSON *before = ev[0].prev ? cJSON_Parse(store_obj_data(ev[0].prev)) : NULL;
		bool changed = ctrl_node_changed(now, before);
		cJSON_Delete(now);
		cJSON_Delete(before);
		if (changed != steps[i].changed)
			fail_msg("step %zu: changed %d, want %d", i, !steps[i].changed,
				 steps[i].changed);
		store_events_release(fx->store, ev, n);
	}
	store_watch_close(w);
}

/* Pod changes wake the scheduler only when they can change a decision. */
static void test_pod_sched_filter(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	node_add(fx, "n1", "1Mi", 10, NULL, NULL, NULL);
	struct store_key key = {.group = "", .resource = "pods"};
	struct store_watch *w = NULL;
	assert_int_equal(store_watch_open(fx->store, &key, 0, NULL, NULL, &w, &err), K32_OK);
	static const struct {
		const char *method, *path, *body;
		bool relevant;
	} steps[] = {
	    {"POST", "/api/v1/namespaces/default/pods",
	     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{"
	     "\"containers\":[{\"name\":\"m\",\"image\":\"x.wasm\"}]}}",
	     true}, /* pending */
	    {"POST", "/api/v1/namespaces/default/pods/a/binding",
	     "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"a\"},"
	     "\"target\":{\"name\":\"n1\"}}",
	     false}, /* bound: frees nothing */
	    {"PATCH", "/api/v1/namespaces/default/pods/a/status",
	     "{\"status\":{\"phase\":\"Running\"}}", false}, /* a running pod's status */
	    {"PATCH", "/api/v1/namespaces/default/pods/a/status",
	     "{\"status\":{\"phase\":\"Succeeded\"}}", true}, /* finished: room freed */
	    {"DELETE", "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0", NULL, true},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int code = req(fx, steps[i].method, steps[i].path, steps[i].body);
		if (code >= 300)
			fail_msg("step %zu: %d %s", i, code, k32_buf_cstr(&fx->out));
		struct store_event ev[4];
		size_t n = 0;
		assert_int_equal(store_watch_next(w, ev, 4, &n, K32_NO_WAIT, &err), K32_OK);
		assert_int_equal(n, 1);
		cJSON *now = ev[0].type == STORE_EVENT_DELETED
				 ? NULL
				 : cJSON_Parse(store_obj_data(ev[0].obj));
		cJSON *before = ev[0].type == STORE_EVENT_MODIFIED && ev[0].prev
				    ? cJSON_Parse(store_obj_data(ev[0].prev))
				    : NULL;
		bool relevant = ctrl_pod_sched_relevant(now, before);
		cJSON_Delete(now);
		cJSON_Delete(before);
		if (relevant != steps[i].relevant)
			fail_msg("step %zu: relevant %d, want %d", i, !steps[i].relevant,
				 steps[i].relevant);
		store_events_release(fx->store, ev, n);
	}
	store_watch_close(w);
}

/* ---- limits and failure paths --------------------------------------------------------- */

/* A pass acts on at most K32_CTRL_BATCH objects, says so, and finishes on the next. */
static void test_batch_limit(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	char body[1024];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
		 "\"big\"},\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":{\"app\":"
		 "\"big\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"big\"}},\"spec\":{"
		 "\"containers\":[{\"name\":\"main\",\"image\":\"hello.wasm\"}]}}}}",
		 K32_CTRL_BATCH + 8);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", body), 201, fx, "rs");
	bool more = false;
	assert_int_equal(ctrl_run_once(fx->ctrl, CTRL_REPLICASET, &more, &err), K32_OK);
	assert_true(more);
	int live, ready;
	count_pods(fx, "big-", &live, &ready);
	assert_int_equal(live, K32_CTRL_BATCH);
	assert_int_equal(ctrl_run_once(fx->ctrl, CTRL_REPLICASET, &more, &err), K32_OK);
	count_pods(fx, "big-", &live, &ready);
	assert_int_equal(live, K32_CTRL_BATCH + 8);
	assert_int_equal(ctrl_run_once(fx->ctrl, CTRL_REPLICASET, &more, &err), K32_OK);
	assert_false(more);
}

/* A pass cut short by its budget is resumed where it stopped, not restarted: a full pass
 * (key-hash order) resumes at the item it was on and keeps what was queued meanwhile; a
 * queued pass keeps its keys from that item on; without an order, a full pass again. */
static void test_queue_resume(void **state)
{
	struct fx *fx = *state;
	struct ctrl *c = fx->ctrl;
	struct ctrl_queue *q = &c->queue[0]; /* the ReplicaSet controller's */
	memset(q, 0, sizeof(*q));
	memset(&c->pass_q, 0, sizeof(c->pass_q));
	c->pass_q.full = true;
	c->pass_q.hash_order = true;
	c->item_begun = true;
	c->item_key = 500;
	ctrl_requeue_rest(c, CTRL_REPLICASET);
	assert_true(q->full);
	assert_true(q->resume);
	assert_int_equal(q->from, 500);
	/* keys still collect while a resume waits; a whole-pass request ends the resume */
	ctrl_enqueue(c, CTRL_REPLICASET, "default", "web");
	assert_int_equal(q->n, 1);
	assert_int_equal(q->keys[0], ctrl_key_hash("default", "web"));
	ctrl_enqueue(c, CTRL_REPLICASET, NULL, NULL);
	assert_true(q->full);
	assert_false(q->resume);
	/* a queued pass: the keys from the cut item on go back */
	memset(q, 0, sizeof(*q));
	memset(&c->pass_q, 0, sizeof(c->pass_q));
	c->pass_q.hash_order = true;
	c->pass_q.n = 3;
	c->pass_q.keys[0] = 100;
	c->pass_q.keys[1] = 300;
	c->pass_q.keys[2] = 700;
	c->item_key = 300;
	ctrl_requeue_rest(c, CTRL_REPLICASET);
	assert_false(q->full);
	assert_int_equal(q->n, 2);
	assert_int_equal(q->keys[0], 300);
	assert_int_equal(q->keys[1], 700);
	/* a list from the API (name order) cannot be resumed by hash */
	memset(q, 0, sizeof(*q));
	c->pass_q.hash_order = false;
	ctrl_requeue_rest(c, CTRL_REPLICASET);
	assert_true(q->full);
	assert_false(q->resume);
	/* the next pass takes the resume and sorts the keys it serves */
	memset(q, 0, sizeof(*q));
	q->full = q->resume = true;
	q->from = 42;
	q->n = 2;
	q->keys[0] = 9;
	q->keys[1] = 3;
	c->cfg.no_task = false; /* else every pass is a whole one */
	ctrl_queue_take(c, CTRL_REPLICASET, false);
	c->cfg.no_task = true;
	assert_true(c->pass_q.full && c->pass_q.resume);
	assert_int_equal(c->pass_q.from, 42);
	assert_int_equal(c->pass_q.keys[0], 3);
	assert_int_equal(c->pass_q.keys[1], 9);
	assert_false(q->full || q->resume || q->n);
	memset(&c->pass_q, 0, sizeof(c->pass_q));
}

/* With the informers: more ReplicaSets than the work queue holds, each wanting a pod, so
 * passes are full ones cut by the budget and resumed; none is skipped (a skipped one would
 * wait for the hour's resync). */
static void test_task_resume(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	ctrl_stop(fx->ctrl);
	struct ctrl_config cc = {
	    .enable = CTRL_REPLICASET, .resync_s = 3600, .sched_resync_s = 3600};
	if (ctrl_start(&cc, fx->kc, &fx->ctrl, &err))
		fail_msg("ctrl_start: %s", err.msg);
	enum { SETS = K32_CTRL_QUEUE_LEN + 44 };
	for (int i = 0; i < SETS; i++) {
		int code = reqf(
		    fx, "POST", "/apis/apps/v1/namespaces/default/replicasets",
		    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
		    "\"r%d\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":"
		    "\"r%d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"r%d\"}},"
		    "\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"hello.wasm\"}]}}}}",
		    i, i, i);
		must(code, 201, fx, "rs");
	}
	int live = 0, ready = 0;
	uint64_t deadline = k32_now_us() + 60 * 1000000ull;
	while (k32_now_us() < deadline) {
		count_pods(fx, "r", &live, &ready);
		if (live >= SETS)
			break;
		k32_plat()->sleep_us(20000);
	}
	assert_int_equal(live, SETS);
	/* and no ReplicaSet got two */
	cJSON *l = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
	const cJSON *rs;
	int ok = 0;
	deadline = k32_now_us() + 30 * 1000000ull;
	do {
		cJSON_Delete(l);
		l = get(fx, "/apis/apps/v1/namespaces/default/replicasets");
		ok = 0;
		cJSON_ArrayForEach(rs, cJSON_GetObjectItem(l, "items")) ok +=
		    ctrl_jint(rs, "status.replicas", 0) == 1;
		if (ok == SETS)
			break;
		k32_plat()->sleep_us(20000);
	} while (k32_now_us() < deadline);
	cJSON_Delete(l);
	assert_int_equal(ok, SETS);
}

/* The scheduler keeps its copy of the nodes between passes and copies again only the nodes
 * whose resourceVersion moved: a node given room after a pass is seen by the next. */
static void test_sched_nodes_refresh(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	ctrl_stop(fx->ctrl);
	struct ctrl_config cc = {
	    .enable = CTRL_SCHEDULER, .resync_s = 3600, .sched_resync_s = 3600};
	if (ctrl_start(&cc, fx->kc, &fx->ctrl, &err))
		fail_msg("ctrl_start: %s", err.msg);
	node_add(fx, "n0", "1Mi", 0, NULL, NULL, NULL); /* never has room: stays in the copy */
	node_add(fx, "n1", "1Mi", 1, NULL, NULL, NULL);
	pod_add(fx, "default", "p1", NULL, NULL, NULL);
	char buf[64];
	uint64_t deadline = k32_now_us() + 20 * 1000000ull;
	while (k32_now_us() < deadline &&
	       strcmp(pod_node(fx, "default", "p1", buf, sizeof(buf)), "n1"))
		k32_plat()->sleep_us(10000);
	assert_string_equal(pod_node(fx, "default", "p1", buf, sizeof(buf)), "n1");
	/* n1 full: p2 waits; then n1 gets a second slot */
	pod_add(fx, "default", "p2", NULL, NULL, NULL);
	k32_plat()->sleep_us(100000);
	assert_string_equal(pod_node(fx, "default", "p2", buf, sizeof(buf)), "");
	must(reqf(fx, "PATCH", "/api/v1/nodes/n1/status",
		  "{\"status\":{\"allocatable\":{\"memory\":\"1Mi\",\"pods\":\"2\"}}}"),
	     200, fx, "n1 status");
	deadline = k32_now_us() + 20 * 1000000ull;
	while (k32_now_us() < deadline &&
	       strcmp(pod_node(fx, "default", "p2", buf, sizeof(buf)), "n1"))
		k32_plat()->sleep_us(10000);
	assert_string_equal(pod_node(fx, "default", "p2", buf, sizeof(buf)), "n1");
}

/* Writes the API refuses (the store is full) are counted and retried, not fatal. */
static void test_write_errors(void **state)
{
	(void)state;
	struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	struct store_config sc = {.max_objects = 10};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &fx.api, &err), K32_OK);
	k32_buf_init(&fx.out, k32_default_allocator(), 1 << 20, "test response");
	struct ctrl_config cc = {.no_task = true, .enable = CTRL_REPLICASET};
	assert_int_equal(kclient_inproc_new(fx.api, NULL, &fx.kc, &err), K32_OK);
	assert_int_equal(ctrl_start(&cc, fx.kc, &fx.ctrl, &err), K32_OK);
	must(req(&fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, &fx,
	     "rs");
	must(req(&fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale",
		 "{\"spec\":{\"replicas\":9}}"),
	     200, &fx, "scale");
	assert_int_equal(ctrl_run_once(fx.ctrl, CTRL_ALL, NULL, &err), K32_OK);
	struct ctrl_stats st;
	ctrl_get_stats(fx.ctrl, &st);
	assert_true(st.write_errors > 0);
	assert_true(st.writes > st.write_errors);
	/* each refusal is logged at WARN with the method, the object and the server's answer */
	static struct k32_log_line lines[64];
	size_t nl, warned = 0;
	for (uint64_t seq = 0; (nl = k32_log_read(seq, lines, 64, NULL)) > 0;
	     seq = lines[nl - 1].seq)
		for (size_t i = 0; i < nl; i++)
			if (lines[i].level == K32_LOG_WARN && !strcmp(lines[i].component, "ctrl") &&
			    strstr(lines[i].text,
				   "POST /api/v1/namespaces/default/pods refused: HTTP ") &&
			    strstr(lines[i].text, "K32_STORE_MAX_OBJECTS"))
				warned++;
	assert_true(warned > 0);
	int live, ready;
	count_pods(&fx, "web-", &live, &ready);
	assert_true(live > 0 && live < 9);
	ctrl_stop(fx.ctrl);
	kclient_free(fx.kc);
	k32_buf_fini(&fx.out);
	api_server_free(fx.api);
	store_close(fx.store);
	/* bad arguments */
	struct ctrl *c = NULL;
	assert_int_equal(ctrl_start(NULL, NULL, &c, &err), K32_ERR_INVALID_ARGS);
	assert_null(c);
	ctrl_stop(NULL);
}

/* A client over the test's in-process one that answers every write with code (while it is
 * not 0) as a full store does (429 and a Status), and counts the writes it saw. */
struct fault_kc {
	struct kclient base;
	struct kclient *inner;
	int code;
	int writes;
};

static k32_status_t fault_request(struct kclient *kc, const char *method, const char *target,
				  const char *ctype, const void *body, size_t len, int *out_code,
				  struct k32_buf *out, struct k32_err *err)
{
	struct fault_kc *f = (struct fault_kc *)kc;
	if (strcmp(method, "GET")) {
		f->writes++;
		if (f->code) {
			*out_code = f->code;
			return k32_buf_append_str(out,
						  "{\"kind\":\"Status\",\"code\":429,\"message\":"
						  "\"store: full (test)\"}",
						  err);
		}
	}
	return kclient_do(f->inner, method, target, ctype, body, len, out_code, out, err);
}

static k32_status_t fault_watch(struct kclient *kc, const char *target, kclient_line_fn fn,
				void *ctx, struct k32_err *err)
{
	return kclient_watch(((struct fault_kc *)kc)->inner, target, fn, ctx, err);
}

static void fault_free(struct kclient *kc)
{
	(void)kc;
}

static const struct kclient_ops fault_ops = {fault_request, fault_watch, fault_free, "fault"};

/* A write refused (429, a full store) backs its object off: the retries come
 * K32_CTRL_BACKOFF_INITIAL_MS, then twice, four times that later on the (fake) clock, passes
 * in between leave it alone (no spinning), and once the API takes writes again the next
 * retry recovers and the back-off is forgotten. */
static void test_write_backoff(void **state)
{
	struct fx *fx = *state;
	struct k32_err err;
	struct fault_kc f = {{&fault_ops}, fx->kc, 429, 0};
	struct ctrl *c = NULL;
	struct ctrl_config cc = {.no_task = true,
				 .enable = CTRL_REPLICASET,
				 .now_us = fx_now,
				 .wall_s = fx_wall,
				 .clock_ctx = fx};
	assert_int_equal(ctrl_start(&cc, &f.base, &c, &err), K32_OK);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", rs_body), 201, fx,
	     "rs");
	const uint64_t ms = 1000, t0 = fx->now_us;
	uint64_t delay = K32_CTRL_BACKOFF_INITIAL_MS * ms, at = t0;
	assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
	assert_true(f.writes > 0); /* the pod creations, refused */
	for (int retry = 0; retry < 3; retry++) {
		int before = f.writes;
		/* every pass before the back-off ends leaves the ReplicaSet alone */
		for (uint64_t t = at; t < at + delay; t += delay / 4) {
			fx->now_us = t;
			assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
			assert_int_equal(f.writes, before);
		}
		fx->now_us = at + delay - 1;
		assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
		assert_int_equal(f.writes, before);
		at += delay;
		fx->now_us = at;
		assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
		assert_true(f.writes > before); /* retried once due, refused again */
		delay *= 2;
	}
	struct ctrl_stats st;
	ctrl_get_stats(c, &st);
	assert_int_equal(st.write_errors, (uint64_t)f.writes);
	/* the store has room again: the next retry creates the pods */
	f.code = 0;
	fx->now_us = at + delay;
	assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
	int live, ready;
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 3);
	/* forgotten: a scale-up right now is acted on at once */
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale",
		 "{\"spec\":{\"replicas\":4}}"),
	     200, fx, "scale");
	assert_int_equal(ctrl_run_once(c, CTRL_REPLICASET, NULL, &err), K32_OK);
	count_pods(fx, "web-", &live, &ready);
	assert_int_equal(live, 4);
	ctrl_get_stats(c, &st);
	assert_true(st.writes > st.write_errors);
	ctrl_stop(c);
}

/* Every cJSON allocation a controller turn makes fails once in turn (the API's own
 * included): nothing crashes, the failures are retried, and the cluster still converges. */
static void test_alloc_failures(void **state)
{
	struct fx *fx = *state;
	struct k32_heap heap;
	struct k32_allocator ha;
	node_add(fx, "n1", "1Mi", 50, NULL, NULL, NULL);
	must(reqf(fx, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy_fmt, 10,
		  "a.wasm"),
	     201, fx, "deployment");
	job_create(fx, "j", 1, 1, 1);
	k32_heap_init(&heap, 0);
	ha = k32_heap_allocator(&heap);
	uint32_t n, hit = 0;
	for (n = 1; n < 20000; n += (n < 400 ? 1 : 37)) {
		k32_heap_fail_nth(&heap, n);
		uint32_t before = heap.stats.failures;
		k32_json_use_allocator(&ha);
		struct k32_err err;
		bool more;
		ctrl_run_once(fx->ctrl, CTRL_ALL, &more, &err); /* may report a failed read */
		k32_json_use_allocator(NULL);
		k32_heap_fail_nth(&heap, 0);
		if (heap.stats.failures == before)
			break; /* the turn made fewer than n allocations */
		hit++;
	}
	assert_true(hit > 100);
	print_message("alloc failures injected: %u (turn of %u allocations)\n", hit, n);
	/* the objects whose writes failed back off: time passes */
	fx->now_us += (uint64_t)K32_CTRL_BACKOFF_MAX_MS * 1000u + 1;
	rollout(fx, false);
	assert_true(deploy_done(fx));
}

/* Events the controllers record go through the client, so they also sweep expired ones
 * (older than K32_API_EVENT_TTL_S): on the first Event they make, then at most once per
 * K32_CTRL_EVENT_SWEEP_S (a sweep lists every Event: paced by time, not per Event made). */
static void test_event_sweep(void **state)
{
	struct fx *fx = *state;
	char old[32];
	ctrl_fmt_time(fx->wall_s - K32_API_EVENT_TTL_S - 60, old, sizeof(old));
	must(reqf(fx, "POST", "/api/v1/namespaces/default/events",
		  "{\"metadata\":{\"name\":\"stale.1\"},\"involvedObject\":{\"kind\":\"Pod\","
		  "\"name\":\"x\",\"namespace\":\"default\"},\"reason\":\"Old\",\"message\":"
		  "\"m\",\"type\":\"Normal\",\"lastTimestamp\":\"%s\"}",
		  old),
	     201, fx, "old event");
	char body[1024];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
		 "\"ev\"},\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":{\"app\":"
		 "\"ev\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"ev\"}},\"spec\":{"
		 "\"containers\":[{\"name\":\"main\",\"image\":\"hello.wasm\"}]}}}}",
		 K32_CTRL_BATCH);
	must(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets", body), 201, fx, "rs");
	must(req(fx, "GET", "/api/v1/namespaces/default/events/stale.1", NULL), 200, fx, "before");
	run(fx, CTRL_REPLICASET); /* K32_CTRL_BATCH pods, as many SuccessfulCreate Events */
	must(req(fx, "GET", "/api/v1/namespaces/default/events/stale.1", NULL), 404, fx, "swept");
	must(req(fx, "GET",
		 "/api/v1/namespaces/default/events?fieldSelector=reason%3DSuccessfulCreate", NULL),
	     200, fx, "recent");
	cJSON *l = cJSON_Parse(k32_buf_cstr(&fx->out));
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")) >= K32_CTRL_BATCH - 1);
	cJSON_Delete(l);
	/* the next sweep comes K32_CTRL_EVENT_SWEEP_S later, however many Events are made */
	must(reqf(fx, "POST", "/api/v1/namespaces/default/events",
		  "{\"metadata\":{\"name\":\"stale.2\"},\"involvedObject\":{\"kind\":\"Pod\","
		  "\"name\":\"x\",\"namespace\":\"default\"},\"reason\":\"Old\",\"message\":"
		  "\"m\",\"type\":\"Normal\",\"lastTimestamp\":\"%s\"}",
		  old),
	     201, fx, "old event 2");
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/ev/scale",
		 "{\"spec\":{\"replicas\":0}}"),
	     200, fx, "scale down");
	run(fx, CTRL_REPLICASET); /* SuccessfulDelete Events */
	must(req(fx, "GET", "/api/v1/namespaces/default/events/stale.2", NULL), 200, fx, "kept");
	fx->now_us += (uint64_t)K32_CTRL_EVENT_SWEEP_S * 1000000u;
	must(req(fx, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/ev/scale",
		 "{\"spec\":{\"replicas\":1}}"),
	     200, fx, "scale up");
	run(fx, CTRL_REPLICASET);
	must(req(fx, "GET", "/api/v1/namespaces/default/events/stale.2", NULL), 404, fx, "swept 2");
}

/* The Device controller (ctrl_dev.c) as CTRL_DEVICE: a Device gets its driver pod
 * on its node with status.driverPod; a second Device on the same (node, bus, channel,
 * address) is refused (Ready=False Conflict); deleting the Device takes the pod with it. */
static void test_device_controller(void **state)
{
	struct fx *fx = *state;
	static const char *devs[] = {"envpro", "twin"};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(
		    reqf(fx, "POST", "/apis/kube32.io/v1alpha1/namespaces/default/devices",
			 "{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":\"Device\",\"metadata\":{"
			 "\"name\":\"%s\"},\"spec\":{\"node\":\"cardputer-1\",\"model\":\"bme688\","
			 "\"bus\":0,\"muxChannel\":2,\"address\":119}}",
			 devs[i]),
		    201);
		fx->wall_s += 1; /* envpro is the older one */
	}
	run(fx, CTRL_DEVICE);
	cJSON *pod = get(fx, "/api/v1/namespaces/default/pods/bme688-envpro");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(pod, "spec.nodeName")),
			    "cardputer-1");
	const cJSON *an = k32_json_find(pod, "metadata.annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(an, "kube32.io/device")),
			    "envpro");
	cJSON_Delete(pod);
	cJSON *d = get(fx, "/apis/kube32.io/v1alpha1/namespaces/default/devices/envpro");
	assert_string_equal(cJSON_GetStringValue(k32_json_find(d, "status.driverPod")),
			    "bme688-envpro");
	cJSON_Delete(d);
	d = get(fx, "/apis/kube32.io/v1alpha1/namespaces/default/devices/twin");
	const cJSON *c = cJSON_GetArrayItem(k32_json_find(d, "status.conditions"), 0);
	assert_non_null(c);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason")), "Conflict");
	cJSON_Delete(d);
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/pods/bme688-twin", NULL), 404);
	struct ctrl_stats st;
	ctrl_get_stats(fx->ctrl, &st);
	assert_int_equal((int)st.device_pods_created, 1);
	/* the Device goes: its driver pod is deleted (graceful: the kubelet finishes it) */
	assert_int_equal(
	    req(fx, "DELETE", "/apis/kube32.io/v1alpha1/namespaces/default/devices/envpro", NULL),
	    200);
	run(fx, CTRL_DEVICE);
	int code = req(fx, "GET", "/api/v1/namespaces/default/pods/bme688-envpro", NULL);
	if (code == 200) {
		pod = cJSON_Parse(k32_buf_cstr(&fx->out));
		assert_non_null(k32_json_find(pod, "metadata.deletionTimestamp"));
		cJSON_Delete(pod);
	} else {
		assert_int_equal(code, 404);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantity),
	    cmocka_unit_test(test_time_and_hardware),
	    cmocka_unit_test(test_sched_table),
	    cmocka_unit_test_setup_teardown(test_sched_fit_accumulates, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_queue, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_backoff, fx_setup, fx_teardown),
	    cmocka_unit_test(test_schedq_table),
	    cmocka_unit_test_setup_teardown(test_sched_spread_and_empty, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_device_hardware, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_rs_scale, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_deploy_rollout_undo, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_deploy_deadline, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_deploy_recreate, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_daemonset, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_job_complete, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_job_backoff, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_cronjob, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_node_lifecycle, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_device_controller, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_gc_background, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_gc_foreground_orphan, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_namespace_finalizer, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_task_triggers, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_heartbeat_filter, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_pod_sched_filter, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_batch_limit, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_resume, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_task_resume, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sched_nodes_refresh, fx_setup, fx_teardown),
	    cmocka_unit_test(test_write_errors),
	    cmocka_unit_test_setup_teardown(test_node_many, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_write_backoff, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_event_sweep, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_failures, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
