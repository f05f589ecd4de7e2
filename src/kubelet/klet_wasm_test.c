/*
 * klet_wasm_test.c - the Wasm provider end to end inside one process: a kubelet with the
 * real provider, reached by an in-process API server over HTTP, runs the small .wat modules
 * of testdata/ (compiled by wat2wasm at build time into KLET_TEST_IMAGES):
 * init/tick/log, HTTP (echo, out of budget -> 504, trap -> 500 and a restart), traps ->
 * CrashLoopBackOff with the trap message, k32_init failure, an endless loop stopped by the
 * execution budget, WASI commands (exit 0 -> Succeeded, proc_exit(3) -> Failed), a missing
 * image, and a pod that does not fit the pod pool. The good pod keeps running throughout.
 */
#include "kubelet/klet_testfx.h"

#include "base/k32_base64.h"
#include "kobj/kobj.h"
#include "kubelet/klet_int.h"

#include <stdlib.h>

static const struct klet_profile prof = {.name = "host",
					 .pod_pool_bytes = 1024 * 1024,
					 .interp_stack = 28 * 1024,
					 .max_pods = 24,
					 .hardware = ""};

/* test_stop(key): what t_event.wat calls on the node's stop event */
static _Atomic int stop_calls;
static _Atomic int stop_key;

static k32_status_t h_test_stop(struct k32_hostcall *c)
{
	stop_key = (int)(uint32_t)c->args[0];
	stop_calls++;
	return K32_OK;
}

static const struct k32_hostfn_def test_fns[] = {
    {"kube32", "test_stop", "i:", h_test_stop, NULL},
};

struct wfx {
	struct fx_cp cp;
	struct klet *k;
	struct http_client *pc; /* client of the pod HTTP server */
};

/* A kubelet on an in-process control plane; retry_ms, when not 0, is its start back-off
 * (initial and maximum) instead of the fixture's 50-200 ms. */
static int setup_with(void **state, uint32_t retry_ms)
{
	static struct wfx t;
	memset(&t, 0, sizeof(t));
	fx_cp_start(&t.cp);
	struct klet_config c;
	fx_klet_config(&c, &t.cp, "wasm-node", &prof);
	if (retry_ms)
		c.backoff_initial_ms = c.backoff_max_ms = retry_ms;
	c.image_dir = KLET_TEST_IMAGES;
	c.lease_renew_ms = 200; /* test_hostile_pods sees renewals while pods misbehave */
	c.extra_hostfns = test_fns;
	c.extra_hostfn_count = sizeof(test_fns) / sizeof(test_fns[0]);
	struct k32_err err;
	if (klet_new(&c, &t.k, &err) || klet_start(t.k, &err))
		fail_msg("kubelet: %s", err.msg);
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.port = klet_pod_http_port(t.k);
	cc.bearer_token = FX_POD_TOKEN; /* for /stats; pod routes need none */
	if (http_client_new(&cc, &t.pc, &err))
		fail_msg("client: %s", err.msg);
	*state = &t;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 0);
}

/* A failed start is not retried within any test's life (an hour): the state it leaves stays
 * until the pod is deleted, whatever the machine's load. */
static int setup_no_retry(void **state)
{
	return setup_with(state, 3600u * 1000u);
}

static int teardown(void **state)
{
	struct wfx *t = *state;
	http_client_free(t->pc);
	klet_free(t->k);
	fx_cp_stop(&t->cp);
	return 0;
}

static int pod_get(struct wfx *t, const char *pod, const char *target, struct k32_buf *out)
{
	char hdr[160];
	snprintf(hdr, sizeof(hdr), "X-Kube32-Pod: default/%s\r\n", pod);
	struct http_client_request rq = {.method = "GET", .target = target, .headers = hdr};
	struct http_client_response r;
	struct k32_err err;
	assert_int_equal(http_client_do(t->pc, &rq, &r, &err), K32_OK);
	int status = r.status;
	k32_buf_reset(out);
	k32_buf_append(out, r.body.data ? r.body.data : (const uint8_t *)"", r.body.len, NULL);
	struct k32_str ct;
	if (http_client_response_header(&r, "Content-Type", &ct))
		k32_buf_printf(out, NULL, "|%.*s", (int)ct.len, ct.p);
	http_client_response_fini(&r);
	return status;
}

static int pod_post(struct wfx *t, const char *pod, const char *target, const char *body)
{
	char hdr[160];
	snprintf(hdr, sizeof(hdr), "X-Kube32-Pod: default/%s\r\n", pod);
	struct http_client_request rq = {.method = "POST",
					 .target = target,
					 .headers = hdr,
					 .content_type = "text/plain",
					 .body = body,
					 .body_len = strlen(body)};
	struct http_client_response r;
	struct k32_err err;
	assert_int_equal(http_client_do(t->pc, &rq, &r, &err), K32_OK);
	int status = r.status;
	http_client_response_fini(&r);
	return status;
}

static void logs(struct wfx *t, const char *pod, bool prev, struct k32_buf *out)
{
	struct k32_err err;
	k32_buf_reset(out);
	if (klet_pod_logs(t->k, "default", pod, prev, -1, false, NULL, out, &err))
		fail_msg("logs %s: %s", pod, err.msg);
}

static bool ticked(struct wfx *t, const char *pod, int n)
{
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
	bool ok = false;
	for (int i = 0; i < 500 && !ok; i++) {
		logs(t, pod, false, &b);
		int count = 0;
		for (const char *s = k32_buf_cstr(&b); (s = strstr(s, "tick")); s++)
			count++;
		ok = count >= n;
		if (!ok)
			k32_plat()->sleep_us(10000);
	}
	k32_buf_fini(&b);
	return ok;
}

/* Waits (a bound, not a timing assertion) until the pod's current log has `want`. */
static bool log_has(struct wfx *t, const char *pod, const char *want)
{
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
	bool ok = false;
	for (int i = 0; i < 500 && !ok; i++) {
		struct k32_err err;
		k32_buf_reset(&b);
		ok = !klet_pod_logs(t->k, "default", pod, false, -1, false, NULL, &b, &err) &&
		     strstr(k32_buf_cstr(&b), want);
		if (!ok)
			k32_plat()->sleep_us(10000);
	}
	if (!ok)
		print_error("log of %s has no \"%s\":\n%s\n", pod, want, k32_buf_cstr(&b));
	k32_buf_fini(&b);
	return ok;
}

/* The value of one sample of GET /metrics ("name{labels}"), or -1 when it is absent. */
static double metric(struct wfx *t, const char *sample)
{
	struct http_client_request rq = {.method = "GET", .target = "/metrics"};
	struct http_client_response r;
	struct k32_err err;
	assert_int_equal(http_client_do(t->pc, &rq, &r, &err), K32_OK);
	assert_int_equal(r.status, 200);
	char *text = calloc(1, r.body.len + 1);
	assert_non_null(text);
	memcpy(text, r.body.data, r.body.len);
	http_client_response_fini(&r);
	double v = -1;
	size_t n = strlen(sample);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, sample, n) && l[n] == ' ')
			v = strtod(l + n + 1, NULL);
	free(text);
	return v;
}

/* The pod's "events" counters in GET /stats. */
static void event_counts(struct wfx *t, const char *pod, int *delivered, int *over)
{
	struct http_client_request rq = {.method = "GET", .target = "/stats"};
	struct http_client_response r;
	struct k32_err err;
	cJSON *j = NULL;
	assert_int_equal(http_client_do(t->pc, &rq, &r, &err), K32_OK);
	assert_int_equal(k32_json_parse((const char *)r.body.data, r.body.len, &j, &err), K32_OK);
	http_client_response_fini(&r);
	const cJSON *p;
	*delivered = *over = -1;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "pods"))
	{
		if (strcmp(fx_str(p, "name"), pod))
			continue;
		*delivered = (int)k32_json_find(p, "events.delivered")->valuedouble;
		*over = (int)k32_json_find(p, "events.overBudget")->valuedouble;
	}
	cJSON_Delete(j);
}

static bool last_msg_has(const cJSON *pod, const void *arg)
{
	const char *m = fx_str(fx_cs(pod), "lastState.terminated.message");
	return m && strstr(m, arg);
}

/* Waits (a bound, not a timing assertion) until an Event with this reason names the pod and,
 * when msg is not NULL, its message has msg. Events are written once and stay: a stable
 * record of what the kubelet saw, where a status can already have moved on. */
static bool event_has(struct wfx *t, const char *pod, const char *reason, const char *msg)
{
	for (int i = 0; i < 500; i++) {
		int code;
		cJSON *l = fx_do(&t->cp, "GET", "/api/v1/namespaces/default/events", NULL, &code);
		const cJSON *e;
		bool found = false;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(l, "items"))
		{
			const char *n = fx_str(e, "involvedObject.name"), *r = fx_str(e, "reason");
			const char *m = fx_str(e, "message");
			found = found || (n && r && !strcmp(n, pod) && !strcmp(r, reason) &&
					  (!msg || (m && strstr(m, msg))));
		}
		cJSON_Delete(l);
		if (found)
			return true;
		k32_plat()->sleep_us(10000);
	}
	return false;
}

/* Whether an Event with this reason names the pod. */
static bool event_for(struct wfx *t, const char *pod, const char *reason)
{
	return event_has(t, pod, reason, NULL);
}

/*
 * A pull that failed: ErrImagePull for the first attempt, ImagePullBackOff from the first
 * retry on (50 ms later with the fixture's back-off). Either one carries the same message;
 * polling for ErrImagePull alone raced the retry. That the first attempt said ErrImagePull is
 * checked on its Event (event_has), which stays.
 */
static bool pull_failed(const cJSON *pod, const void *arg)
{
	(void)arg;
	return fx_waiting_is(pod, "ErrImagePull") || fx_waiting_is(pod, "ImagePullBackOff");
}

static void test_ok_pod(void **state)
{
	struct wfx *t = *state;
	fx_pod_create(&t->cp, "ok", "wasm-node", "t_ok.wasm", "Always", "64Ki", NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "ok", fx_ready, NULL));
	assert_true(ticked(t, "ok", 3));
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	logs(t, "ok", false, &b);
	assert_true(!strncmp(k32_buf_cstr(&b), "hello from k32_init\ntick\n", 25));
	assert_int_equal(pod_get(t, "ok", "/", &b), 200);
	assert_string_equal(k32_buf_cstr(&b), "ok|text/plain; charset=utf-8");
	k32_buf_fini(&b);
	/* /stats: the pool and the pod's bytes by kind */
	struct http_client_request rq = {.method = "GET", .target = "/stats"};
	struct http_client_response r;
	struct k32_err err;
	assert_int_equal(http_client_do(t->pc, &rq, &r, &err), K32_OK);
	assert_int_equal(r.status, 200);
	cJSON *j = NULL;
	assert_int_equal(k32_json_parse((const char *)r.body.data, r.body.len, &j, &err), K32_OK);
	http_client_response_fini(&r);
	assert_int_equal((int)k32_json_find(j, "pool.limitBytes")->valuedouble, 1024 * 1024);
	const cJSON *pod = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "pods"), 0);
	assert_string_equal(fx_str(pod, "name"), "ok");
	assert_string_equal(fx_str(pod, "state"), "running");
	assert_int_equal((int)k32_json_find(pod, "memory.linearBytes")->valuedouble, 65536);
	assert_true(k32_json_find(pod, "memory.codeBytes")->valuedouble > 0);
	assert_true(k32_json_find(pod, "memory.stackBytes")->valuedouble >= 4096);
	double pool = k32_json_find(pod, "memory.poolBytes")->valuedouble;
	assert_true(pool >= 65536 + 4096 &&
		    pool <= k32_json_find(j, "pool.usedBytes")->valuedouble);
	cJSON_Delete(j);
}

static void test_http(void **state)
{
	struct wfx *t = *state;
	fx_pod_create(&t->cp, "echo", "wasm-node", "registry.example/pods/t_http", "Always", NULL,
		      ",\"annotations\":{\"kube32.io/execution-budget\":\"200000\"}");
	cJSON_Delete(fx_wait_pod(&t->cp, "echo", fx_ready, NULL));
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	assert_int_equal(pod_get(t, "echo", "/a/b?c=1", &b), 200);
	assert_string_equal(k32_buf_cstr(&b), "/a/b?c=1|application/x-echo");
	/* out of budget: 504, and the pod keeps running */
	assert_int_equal(pod_get(t, "echo", "/spin", &b), 504);
	assert_non_null(strstr(k32_buf_cstr(&b), "out of gas"));
	assert_int_equal(pod_get(t, "echo", "/again", &b), 200);
	/* a trap: 500, and the pod restarts */
	assert_int_equal(pod_get(t, "echo", "/trap", &b), 500);
	assert_non_null(strstr(k32_buf_cstr(&b), "out of bounds"));
	cJSON *p = fx_wait_pod(&t->cp, "echo", last_msg_has, "out of bounds");
	cJSON_Delete(p);
	k32_buf_fini(&b);
	/* /metrics counted both failures and the gas, across the restart */
#define ECHO "{node=\"wasm-node\",namespace=\"default\",pod=\"echo\""
	assert_true(metric(t, "kube32_pod_call_failures_total" ECHO ",reason=\"out_of_gas\"}") ==
		    1);
	assert_true(metric(t, "kube32_pod_call_failures_total" ECHO ",reason=\"trap\"}") == 1);
	assert_true(metric(t, "kube32_pod_call_failures_total" ECHO ",reason=\"deadline\"}") == 0);
	/* the out-of-gas call alone used its whole budget */
	assert_true(metric(t, "kube32_pod_gas_used_total" ECHO "}") >= 200000);
	assert_true(metric(t, "kube32_pod_i2c_transactions_total" ECHO ",outcome=\"error\"}") == 0);
#undef ECHO
}

static void test_trap_crashloop(void **state)
{
	struct wfx *t = *state;
	fx_pod_create(&t->cp, "trap", "wasm-node", "t_trap", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "trap", fx_waiting_is, "CrashLoopBackOff");
	const char *m = fx_str(fx_cs(p), "lastState.terminated.message");
	assert_non_null(strstr(m, "unreachable"));
	assert_int_equal((int)k32_json_find(fx_cs(p), "lastState.terminated.exitCode")->valuedouble,
			 1);
	cJSON_Delete(p);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	logs(t, "trap", true, &b);
	assert_non_null(strstr(k32_buf_cstr(&b), "Error: "));
	assert_non_null(strstr(k32_buf_cstr(&b), "unreachable"));
	k32_buf_fini(&b);
}

static void test_failures(void **state)
{
	struct wfx *t = *state;
	static const struct {
		const char *name, *image, *annot, *msg;
	} cases[] = {
	    {"initfail", "t_init_fail.wasm", NULL, "k32_init returned -5"},
	    {"loop", "t_loop.wasm", ",\"annotations\":{\"kube32.io/execution-budget\":\"100000\"}",
	     "out of gas"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fx_pod_create(&t->cp, cases[i].name, "wasm-node", cases[i].image, "Always", NULL,
			      cases[i].annot);
		cJSON_Delete(fx_wait_pod(&t->cp, cases[i].name, last_msg_has, cases[i].msg));
	}
}

struct term_want {
	const char *phase;
	int code;
};

static bool term_is(const cJSON *pod, const void *arg)
{
	const struct term_want *w = arg;
	const cJSON *c = k32_json_find(fx_cs(pod), "state.terminated.exitCode");
	const char *ph = fx_str(pod, "status.phase");
	return c && ph && !strcmp(ph, w->phase) && (int)c->valuedouble == w->code;
}

static void test_wasi_jobs(void **state)
{
	struct wfx *t = *state;
	static const struct term_want ok = {"Succeeded", 0}, three = {"Failed", 3};
	fx_pod_create(&t->cp, "job", "wasm-node", "t_job.wasm", "Never", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "job", term_is, &ok));
	fx_pod_create(&t->cp, "exit3", "wasm-node", "t_wasi.wasm", "Never", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "exit3", term_is, &three));
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	logs(t, "job", false, &b);
	assert_string_equal(k32_buf_cstr(&b), "job done\nsecond line\n");
	logs(t, "exit3", false, &b);
	assert_string_equal(k32_buf_cstr(&b), "exiting with 3\n");
	k32_buf_fini(&b);
}

/* A status message ends whole: shorter than the error buffer (a message that fills it was
 * cut) and ending in its last words (the advice), not mid-word. */
static void assert_whole(const char *m, const char *tail)
{
	size_t n = m ? strlen(m) : 0, t = strlen(tail);
	if (!m || n >= K32_ERR_MSG_LEN - 1 || n < t || strcmp(m + n - t, tail))
		fail_msg("message cut or changed: \"%s\" (%zu bytes, buffer %d) should end with "
			 "\"%s\"",
			 m ? m : "(none)", n, K32_ERR_MSG_LEN, tail);
}

static void test_start_errors(void **state)
{
	struct wfx *t = *state;
	fx_pod_create(&t->cp, "nosuch", "wasm-node", "nosuch.wasm", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "nosuch", pull_failed, NULL);
	assert_true(event_has(t, "nosuch", "Failed", "Error: ErrImagePull: module not found"));
	const char *m = fx_str(fx_cs(p), "state.waiting.message");
	assert_non_null(strstr(m, "module not found: no file nosuch.wasm in node "
				  "wasm-node's image directory, no ConfigMap nosuch.wasm in "
				  "default or kube-system"));
	assert_whole(m, "in default or kube-system");
	cJSON_Delete(p);
	/* a memory limit over the pool: both numbers in the message */
	fx_pod_create(&t->cp, "huge", "wasm-node", "t_big.wasm", "Always", "2Mi", NULL);
	p = fx_wait_pod(&t->cp, "huge", fx_waiting_is, "CreateContainerError");
	m = fx_str(fx_cs(p), "state.waiting.message");
	assert_non_null(strstr(m, "does not fit node wasm-node's pod pool"));
	assert_non_null(strstr(m, "2101248 bytes")); /* 2 MiB + the 4 KiB stack */
	assert_non_null(strstr(m, "of 1048576 bytes free"));
	/* the advice ends whole, whatever the names' lengths */
	assert_whole(m, "lower resources.limits.memory or stop a pod");
	cJSON_Delete(p);
	/* a module whose initial memory is over its limit is refused with both numbers */
	fx_pod_create(&t->cp, "capped", "wasm-node", "t_big.wasm", "Always", "8Ki", NULL);
	p = fx_wait_pod(&t->cp, "capped", fx_waiting_is, "CreateContainerError");
	m = fx_str(fx_cs(p), "state.waiting.message");
	assert_non_null(strstr(m, "262144 bytes of linear memory"));
	assert_whole(m, "raise resources.limits.memory to at least 262144");
	cJSON_Delete(p);
	/* bad image names */
	char path[64];
	struct k32_err err;
	assert_int_equal(klet_image_path("/d", "../x.wasm", path, sizeof(path), &err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(klet_image_path("/d", "reg/:v1", path, sizeof(path), &err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(klet_image_path("/d", "reg/a/hello:v2", path, sizeof(path), &err), K32_OK);
	assert_string_equal(path, "/d/hello.wasm");
}

/* A pod whose limits do not parse, written past the API server's validation (straight into
 * the store, as a pod from before that check would be): the kubelet never runs it with a
 * guessed value (tick-ms "-5" used to run with a period of ~4.29e9 ms) but fails it, with
 * the field, the value and the range in its status. */
static void test_invalid_limits_refused(void **state)
{
	struct wfx *t = *state;
	static const char pod[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"badtick\","
	    "\"namespace\":\"default\",\"uid\":\"u-badtick\",\"annotations\":{"
	    "\"kube32.io/tick-ms\":\"-5\"}},\"spec\":{\"nodeName\":\"wasm-node\","
	    "\"restartPolicy\":\"Always\",\"containers\":[{\"name\":\"main\",\"image\":"
	    "\"t_ok.wasm\"}]},\"status\":{\"phase\":\"Pending\"}}";
	struct store_key key = {
	    .group = "", .resource = "pods", .ns = "default", .name = "badtick"};
	struct store_value val = {.data = pod, .len = sizeof(pod) - 1, .rv_off = STORE_NO_STAMP};
	struct k32_err err;
	assert_int_equal(store_create(t->cp.store, &key, &val, NULL, &err), K32_OK);
	cJSON *p = fx_wait_pod(&t->cp, "badtick", fx_phase_is, "Failed");
	assert_string_equal(fx_str(p, "status.reason"), "InvalidPodSpec");
	const char *m = fx_str(p, "status.message");
	assert_non_null(m);
	assert_non_null(strstr(m, "metadata.annotations[kube32.io/tick-ms]"));
	assert_non_null(strstr(m, "\"-5\""));
	assert_non_null(strstr(m, "from 1 to 86400000"));
	cJSON_Delete(p);
}

static void test_module_store(void **state)
{
	struct wfx *t = *state;
	/* a module that is not on the node's image directory but in a ConfigMap */
	uint8_t *mod;
	size_t len;
	struct k32_err err;
	assert_int_equal(k32_plat()->file_read_all(KLET_TEST_IMAGES "/t_ok.wasm",
						   k32_default_allocator(), 1 << 20, &mod, &len,
						   &err),
			 K32_OK);
	char b64[4096];
	assert_true(k32_base64_len(len) < sizeof(b64));
	k32_base64_encode(mod, len, b64);
	k32_free(k32_default_allocator(), mod, len + 1);
	char body[4500];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
		 "\"stored.wasm\",\"namespace\":\"kube-system\"},\"binaryData\":{\"stored.wasm\":"
		 "\"%s\"}}",
		 b64);
	int code;
	cJSON_Delete(
	    fx_do(&t->cp, "POST", "/api/v1/namespaces/kube-system/configmaps", body, &code));
	assert_int_equal(code, 201);
	fx_pod_create(&t->cp, "stored", "wasm-node", "stored.wasm", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "stored", fx_ready, NULL));
	assert_true(ticked(t, "stored", 2));
	/* bad base64 is a clear error */
	cJSON_Delete(fx_do(&t->cp, "POST", "/api/v1/namespaces/default/configmaps",
			   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
			   "\"broken.wasm\"},\"data\":{\"broken.wasm\":\"not a module\"}}",
			   &code));
	assert_int_equal(code, 201);
	fx_pod_create(&t->cp, "broken", "wasm-node", "broken.wasm", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "broken", fx_waiting_is, "CreateContainerError");
	assert_non_null(strstr(fx_str(fx_cs(p), "state.waiting.message"), "broken.wasm"));
	cJSON_Delete(p);

	/* versions: ConfigMap ver.wasm keeps the module of tag v1 under key v1; a tag or digest
	 * picks it, a missing one is ErrImagePull naming the keys there are */
	char hex[65], img[160];
	assert_int_equal(k32_plat()->file_read_all(KLET_TEST_IMAGES "/t_ok.wasm",
						   k32_default_allocator(), 1 << 20, &mod, &len,
						   &err),
			 K32_OK);
	klet_image_sha256(mod, len, hex);
	k32_free(k32_default_allocator(), mod, len + 1);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
		 "\"ver.wasm\"},\"binaryData\":{\"v1\":\"%s\"},\"data\":{\"notes\":\"x\"}}",
		 b64);
	cJSON_Delete(fx_do(&t->cp, "POST", "/api/v1/namespaces/default/configmaps", body, &code));
	assert_int_equal(code, 201);
	static const struct {
		const char *pod, *image_fmt, *reason, *msg, *tail;
	} vc[] = {
	    {"ver-v1", "reg.example/ver.wasm:v1", NULL, NULL, NULL},
	    {"ver-sha", "ver.wasm@sha256:%s", NULL, NULL, NULL},
	    {"ver-v9", "ver.wasm:v9", "ErrImagePull",
	     "ConfigMap default/ver.wasm has no key v9 (the tag); its keys: v1, notes",
	     "its keys: v1, notes"},
	    {"ver-bad",
	     "ver.wasm:v1@sha256:"
	     "00000000000000000000000000000000000000000000000000000000000000ff",
	     "ErrImagePull", "ConfigMap default/ver.wasm key v1 is sha256:",
	     "not the image's sha256:000000000000...; upload that module under the key or fix the "
	     "digest"},
	    {"ver-none", "ver.wasm", "ErrImagePull", "has no key ver.wasm (the untagged module)",
	     "its keys: v1, notes"},
	};

	for (size_t i = 0; i < sizeof(vc) / sizeof(vc[0]); i++) {
		snprintf(img, sizeof(img), vc[i].image_fmt, hex);
		fx_pod_create(&t->cp, vc[i].pod, "wasm-node", img, "Always", NULL, NULL);
		p = fx_wait_pod(&t->cp, vc[i].pod, vc[i].reason ? pull_failed : fx_ready, NULL);
		if (vc[i].reason && !event_has(t, vc[i].pod, "Failed", "Error: ErrImagePull: "))
			fail_msg("%s: no Failed event with ErrImagePull", img);
		if (vc[i].msg && !strstr(fx_str(fx_cs(p), "state.waiting.message"), vc[i].msg))
			fail_msg("%s: message \"%s\" lacks \"%s\"", img,
				 fx_str(fx_cs(p), "state.waiting.message"), vc[i].msg);
		if (vc[i].tail)
			assert_whole(fx_str(fx_cs(p), "state.waiting.message"), vc[i].tail);
		cJSON_Delete(p);
		char target[128];
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", vc[i].pod);
		cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
		assert_true(fx_gone_pred(&t->cp, vc[i].pod));
	}
	/* the parser */
	struct klet_image_ref ref;
	assert_int_equal(klet_image_ref_parse("r.io/a/hello:v2@sha256:"
					      "0123456789abcdef0123456789abcdef0123456789abcdef012"
					      "3456789abcdef",
					      &ref, &err),
			 K32_OK);
	assert_string_equal(ref.file, "hello.wasm");
	assert_string_equal(ref.tag, "v2");
	assert_int_equal(strlen(ref.sha256), 64);
	assert_int_equal(klet_image_ref_parse("hello.wasm@sha256:abc", &ref, &err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(klet_image_ref_parse("hello.wasm:-x", &ref, &err), K32_ERR_INVALID_ARGS);
	assert_int_equal(klet_image_ref_parse("hello.wasm:v$", &ref, &err), K32_ERR_INVALID_ARGS);
}

static void test_node_unaffected(void **state)
{
	struct wfx *t = *state;
	/* after every failure above, the first pod still runs and answers */
	cJSON *p = fx_wait_pod(&t->cp, "ok", fx_ready, NULL);
	assert_int_equal((int)cJSON_GetObjectItem(fx_cs(p), "restartCount")->valuedouble, 0);
	cJSON_Delete(p);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	assert_int_equal(pod_get(t, "ok", "/", &b), 200);
	k32_buf_fini(&b);
	/* deleting pods returns their bytes to the pool */
	struct klet_stats before, after;
	klet_get_stats(t->k, &before);
	int code;
	cJSON_Delete(fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/ok", NULL, &code));
	assert_true(fx_gone_pred(&t->cp, "ok"));
	klet_get_stats(t->k, &after);
	assert_true(after.pool_bytes < before.pool_bytes);
}

static bool last_reason_is(const cJSON *pod, const void *arg)
{
	const char *r = fx_str(fx_cs(pod), "lastState.terminated.reason");
	return r && !strcmp(r, arg);
}

/* Polls until the pod is gone from the API, at most bound_ms (a bound far above what it
 * takes, far below the 10 s the stopped call could otherwise have run). */
static bool gone_within(struct wfx *t, const char *pod, int bound_ms)
{
	char target[256];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", pod);
	for (int i = 0; i < bound_ms / 10; i++) {
		int code;
		cJSON_Delete(fx_do(&t->cp, "GET", target, NULL, &code));
		if (code == 404)
			return true;
		k32_plat()->sleep_us(10000);
	}
	return false;
}

/*
 * Hostile pods beside a neighbour (issue 11): a pod that sleeps in its tick, one that loops
 * with metering off, one that loops with a huge budget and one that waits forever on a
 * kobj port are each stopped at their call deadline with reason DeadlineExceeded (status,
 * Event, log) and restarted; meanwhile the node renews its Lease and the neighbour answers
 * every request. Then the same pods with the largest deadline are deleted while they run:
 * the deletion interrupts them, so it completes long before that deadline.
 */
static void test_hostile_pods(void **state)
{
	struct wfx *t = *state;
	static const struct {
		const char *name, *image, *budget;
	} hostile[] = {
	    {"sleeper", "t_sleeper", NULL},
	    {"spin-off", "t_loop", "off"},
	    {"spin-huge", "t_loop", "10000000000"},
	    {"waiter", "t_waiter", NULL},
	};
	const size_t n = sizeof(hostile) / sizeof(hostile[0]);
	fx_pod_create(&t->cp, "neighbour", "wasm-node", "t_ok.wasm", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "neighbour", fx_ready, NULL));
	struct klet_stats before;
	klet_get_stats(t->k, &before);
	char meta[200];
	for (size_t i = 0; i < n; i++) {
		snprintf(meta, sizeof(meta),
			 ",\"annotations\":{\"" KLET_ANN_CALL_DEADLINE "\":\"100\"%s%s%s}",
			 hostile[i].budget ? ",\"kube32.io/execution-budget\":\"" : "",
			 hostile[i].budget ? hostile[i].budget : "", hostile[i].budget ? "\"" : "");
		fx_pod_create(&t->cp, hostile[i].name, "wasm-node", hostile[i].image, "Always",
			      NULL, meta);
	}
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "b");
	for (size_t i = 0; i < n; i++) {
		cJSON *p = fx_wait_pod(&t->cp, hostile[i].name, last_reason_is, "DeadlineExceeded");
		const char *m = fx_str(fx_cs(p), "lastState.terminated.message");
		assert_non_null(strstr(m, "deadline exceeded: k32_tick ran past its deadline of "
					  "100 ms (annotation kube32.io/call-deadline-ms"));
		cJSON_Delete(p);
		assert_true(event_for(t, hostile[i].name, "DeadlineExceeded"));
		assert_true(log_has(t, hostile[i].name, "DeadlineExceeded: deadline exceeded"));
		/* the neighbour answers every request while they run */
		for (int r = 0; r < 5; r++)
			assert_int_equal(pod_get(t, "neighbour", "/", &b), 200);
	}
	/* the Lease went on meanwhile (the node task never waits on pod code) */
	struct klet_stats after;
	for (int i = 0; i < 500; i++) {
		klet_get_stats(t->k, &after);
		if (after.lease_renewals > before.lease_renewals)
			break;
		k32_plat()->sleep_us(10000);
	}
	assert_true(after.lease_renewals > before.lease_renewals);
	cJSON *p = fx_wait_pod(&t->cp, "neighbour", fx_ready, NULL);
	assert_int_equal((int)cJSON_GetObjectItem(fx_cs(p), "restartCount")->valuedouble, 0);
	cJSON_Delete(p);

	/* deletion interrupts a running call: with the largest deadline (10 s) the pods would
	 * otherwise hold the interpreter that long */
	for (size_t i = 0; i < n; i++) {
		int code;
		char target[200];
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s",
			 hostile[i].name);
		cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
		assert_true(gone_within(t, hostile[i].name, 10000));
		snprintf(meta, sizeof(meta),
			 ",\"annotations\":{\"" KLET_ANN_CALL_DEADLINE "\":\"10000\"%s%s%s}",
			 hostile[i].budget ? ",\"kube32.io/execution-budget\":\"" : "",
			 hostile[i].budget ? hostile[i].budget : "", hostile[i].budget ? "\"" : "");
		fx_pod_create(&t->cp, hostile[i].name, "wasm-node", hostile[i].image, "Always",
			      NULL, meta);
		cJSON_Delete(fx_wait_pod(&t->cp, hostile[i].name, fx_ready, NULL));
		/* its first tick is due 1 s after the start: wait until it is in it */
		k32_plat()->sleep_us(1300000);
		cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
		assert_true(code == 200 || code == 202);
		assert_true(gone_within(t, hostile[i].name, 5000));
		assert_int_equal(pod_get(t, "neighbour", "/", &b), 200);
	}
	k32_buf_fini(&b);
	int code;
	cJSON_Delete(
	    fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/neighbour", NULL, &code));
	assert_true(fx_gone_pred(&t->cp, "neighbour"));
}

/* The call deadline annotation is checked where it enters (kmeta, in the API server): a value
 * the kubelet could not run, or one over the board-wide maximum, is a 422 naming the field,
 * and such a pod never reaches the node. */
static void test_deadline_annotation(void **state)
{
	struct wfx *t = *state;
	static const char *const bad[] = {"-5", "0", "5s", "1e3", " 5", "10001", "4294967297"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char body[512];
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
			 "\"bad-deadline\",\"annotations\":{\"" KLET_ANN_CALL_DEADLINE
			 "\":\"%s\"}},"
			 "\"spec\":{\"nodeName\":\"wasm-node\",\"containers\":[{\"name\":\"main\","
			 "\"image\":\"t_ok.wasm\"}]}}",
			 bad[i]);
		int code;
		cJSON *j = fx_do(&t->cp, "POST", "/api/v1/namespaces/default/pods", body, &code);
		const char *m = fx_str(j, "message");
		if (code != 422 || !m || !strstr(m, KLET_ANN_CALL_DEADLINE))
			fail_msg("deadline \"%s\": HTTP %d, %s", bad[i], code,
				 m ? m : "(no message)");
		cJSON_Delete(j);
	}
}

static size_t pool_used(struct klet *k)
{
	struct klet_stats st;
	klet_get_stats(k, &st);
	return st.pool_bytes;
}

static bool started_or_failed(const cJSON *pod, const void *arg)
{
	(void)arg;
	const char *r = fx_str(fx_cs(pod), "state.waiting.reason");
	return fx_ready(pod, NULL) || (r && !strcmp(r, "CreateContainerError"));
}

/*
 * Fault injection: the pod pool refuses its Nth allocation for N = 1, 2, ... while a pod
 * starts. Every run ends Running or with a clean CreateContainerError naming the pool, and
 * once the pod is deleted the pool is back to where it was: nothing leaks on any path.
 * The kubelet runs with setup_no_retry: the fault fires once, so a retried start would
 * succeed and turn a failed run into a Running one before the test looked (it then stopped at
 * N = 1, with the early failures never exercised).
 */
static void test_pool_faults(void **state)
{
	struct wfx *t = *state;
	size_t base = pool_used(t->k);
	bool ran = false;
	int n;
	for (n = 1; n <= 64 && !ran; n++) {
		k32_mutex_lock(&t->k->run_lock);
		k32_heap_fail_nth(&t->k->pool, (uint32_t)n);
		k32_mutex_unlock(&t->k->run_lock);
		char name[32];
		snprintf(name, sizeof(name), "fault-%d", n);
		fx_pod_create(&t->cp, name, "wasm-node", "t_ok.wasm", "Always", "64Ki", NULL);
		cJSON *p = fx_wait_pod(&t->cp, name, started_or_failed, NULL);
		ran = fx_ready(p, NULL);
		if (!ran) {
			const char *m = fx_str(fx_cs(p), "state.waiting.message");
			assert_non_null(strstr(m, "pod pool"));
		}
		cJSON_Delete(p);
		k32_mutex_lock(&t->k->run_lock);
		k32_heap_fail_nth(&t->k->pool, 0);
		k32_mutex_unlock(&t->k->run_lock);
		char target[128];
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", name);
		int code;
		cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
		assert_true(fx_gone_pred(&t->cp, name));
		/* the kubelet frees the runtime before it deletes the pod object */
		assert_int_equal(pool_used(t->k), base);
	}
	assert_true(ran);   /* enough allocations succeeded in the end */
	assert_true(n > 3); /* and the early failures were exercised */
}

static bool restarts_at_least(const cJSON *pod, const void *arg)
{
	const cJSON *r = k32_json_find(fx_cs(pod), "restartCount");
	return r && fx_ready(pod, NULL) && (int)r->valuedouble >= *(const int *)arg;
}

/* k32_event: a kobj timer and channel armed onto the event port, a user packet, the
 * budget (dropped, the pod runs on), a negative result and a trap (the container fails),
 * a closed port, and the stop event of a deleted pod. */
static void test_events(void **state)
{
	struct wfx *t = *state;
	fx_pod_create(&t->cp, "ev", "wasm-node", "t_event.wasm", "Always", NULL,
		      ",\"annotations\":{\"kube32.io/execution-budget\":\"200000\"}");
	cJSON_Delete(fx_wait_pod(&t->cp, "ev", fx_ready, NULL));
	assert_true(log_has(t, "ev", "port ok\nbad-state ok\n"));
	/* the timer fires on kobj's timer thread: found by the worker's poll */
	assert_true(log_has(t, "ev", "timer\n"));
	/* the HTTP handler writes into a channel whose other end is armed: key 7 */
	assert_int_equal(pod_post(t, "ev", "/m", "hello"), 200);
	assert_true(log_has(t, "ev", "msg:hello\n"));
	/* a user packet queued on the port; its payload through k32_event_packet */
	assert_int_equal(pod_post(t, "ev", "/user", ""), 200);
	assert_true(log_has(t, "ev", "\npayload\n"));
	/* out of budget: that event is dropped and said so; the pod runs on */
	assert_int_equal(pod_post(t, "ev", "/m", "spin"), 200);
	assert_true(log_has(t, "ev", "ran out of its execution budget; the event is dropped"));
	assert_int_equal(pod_post(t, "ev", "/m", "again"), 200);
	assert_true(log_has(t, "ev", "msg:again\n"));
	int delivered, over;
	event_counts(t, "ev", &delivered, &over);
	assert_int_equal(delivered, 4); /* timer, hello, payload, again */
	assert_int_equal(over, 1);
	cJSON *p = fx_wait_pod(&t->cp, "ev", fx_ready, NULL);
	assert_int_equal((int)k32_json_find(fx_cs(p), "restartCount")->valuedouble, 0);
	cJSON_Delete(p);
	/* a negative result, then a trap: the container fails with the reason, and restarts */
	static const struct {
		const char *body, *msg;
		int restarts;
	} fails[] = {
	    {"neg", "k32_event (type 1, key 7) returned -3", 1},
	    {"trap", "unreachable", 2},
	};
	for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
		assert_int_equal(pod_post(t, "ev", "/m", fails[i].body), 200);
		cJSON_Delete(fx_wait_pod(&t->cp, "ev", last_msg_has, fails[i].msg));
		cJSON_Delete(fx_wait_pod(&t->cp, "ev", restarts_at_least, &fails[i].restarts));
	}
	/* the pod closes its own port: said once in its log, no more events */
	assert_true(log_has(t, "ev", "timer\n")); /* the new container armed everything again */
	assert_int_equal(pod_post(t, "ev", "/m", "close"), 200);
	assert_true(log_has(t, "ev", "is gone (BAD_HANDLE)"));
	/* a void k32_event, in a module with no k32_tick: the packet k32_init queued */
	fx_pod_create(&t->cp, "evvoid", "wasm-node", "t_event_void.wasm", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "evvoid", fx_ready, NULL));
	assert_true(log_has(t, "evvoid", "void event 3\n"));
	/* deletion: the last call is the node's stop event (key K32_EVENT_KEY_STOP = 1) */
	stop_calls = 0;
	int code;
	cJSON_Delete(fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/ev", NULL, &code));
	assert_true(fx_gone_pred(&t->cp, "ev"));
	/* the port is closed, but the stop event is a direct call, not a packet */
	assert_int_equal(stop_calls, 1);
	assert_int_equal(stop_key, 1);
}

/*
 * Each board is its own machine. Two kubelets in one process (kube32-sim's boards): every
 * kobj port of wasm-node is taken, so an event pod there fails to start with the limit's
 * name (CreateContainerError) and starts once ports are free again; meanwhile an event pod
 * on the second board starts at once, its ports untouched, and that board's pool has the
 * size its profile gives (4 ports), not the process default. Before per-board instances the
 * 16 ports of the process were shared by every board.
 */
static void test_event_port_exhausted(void **state)
{
	struct wfx *t = *state;
	static struct klet_profile prof2;
	prof2 = prof;
	prof2.kobj.ports = 4;
	struct klet_config c;
	fx_klet_config(&c, &t->cp, "wasm-node-2", &prof2);
	c.image_dir = KLET_TEST_IMAGES;
	c.extra_hostfns = test_fns;
	c.extra_hostfn_count = sizeof(test_fns) / sizeof(test_fns[0]);
	struct klet *k2 = NULL;
	struct k32_err err;
	if (klet_new(&c, &k2, &err) || klet_start(k2, &err))
		fail_msg("second kubelet: %s", err.msg);
	assert_int_equal(kobj_node_limits(klet_kobj(k2))->ports, 4);
	assert_int_equal(kobj_node_limits(klet_kobj(t->k))->ports, K32_KOBJ_MAX_PORTS);
	enum { OWNERS = 16 };
	static struct kobj_owner owners[OWNERS]; /* each may take only its share of the pool */
	int held = 0, inited = 0;
	k32_status_t st = K32_OK;
	for (int i = 0; i < OWNERS && st != K32_ERR_NO_MEMORY; i++, inited++) {
		kobj_owner_init(&owners[i], klet_kobj(t->k), "test ports", 0);
		kobj_handle_t h;
		while ((st = kobj_port_create(&owners[i], 0, &h)) == K32_OK)
			held++;
	}
	assert_int_equal(st, K32_ERR_NO_MEMORY); /* the node-wide pool, not one owner's share */
	assert_true(held > 0);
	struct kobj_stats ks;
	kobj_stats_get(klet_kobj(t->k), &ks); /* every port of wasm-node (evvoid holds one) */
	assert_int_equal(ks.in_use[KOBJ_TYPE_PORT], K32_KOBJ_MAX_PORTS);
	fx_pod_create(&t->cp, "ev2", "wasm-node", "t_event.wasm", "Always", NULL, NULL);
	fx_pod_create(&t->cp, "ev3", "wasm-node-2", "t_event.wasm", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "ev2", fx_waiting_is, "CreateContainerError");
	const char *m = fx_str(fx_cs(p), "state.waiting.message");
	assert_non_null(strstr(m, "exports k32_event but its event port could not be made"));
	assert_non_null(strstr(m, "K32_KOBJ_MAX_PORTS=16 ports of node wasm-node in use"));
	cJSON_Delete(p);
	/* the other board's pod runs: its own pool, with wasm-node's all taken */
	cJSON_Delete(fx_wait_pod(&t->cp, "ev3", fx_ready, NULL));
	kobj_stats_get(klet_kobj(k2), &ks);
	assert_int_equal(ks.in_use[KOBJ_TYPE_PORT], 1); /* ev3's event port */
	for (int i = 0; i < inited; i++)
		kobj_owner_fini(&owners[i]);
	cJSON_Delete(fx_wait_pod(&t->cp, "ev2", fx_ready, NULL));
	assert_true(log_has(t, "ev2", "port ok\n"));
	int code;
	cJSON_Delete(fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/ev2", NULL, &code));
	cJSON_Delete(fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/ev3", NULL, &code));
	assert_true(fx_gone_pred(&t->cp, "ev2"));
	assert_true(fx_gone_pred(&t->cp, "ev3"));
	klet_free(k2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok_pod),
	    cmocka_unit_test(test_http),
	    cmocka_unit_test(test_trap_crashloop),
	    cmocka_unit_test(test_failures),
	    cmocka_unit_test(test_wasi_jobs),
	    cmocka_unit_test(test_start_errors),
	    cmocka_unit_test(test_module_store),
	    cmocka_unit_test(test_node_unaffected),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_event_port_exhausted),
	    cmocka_unit_test(test_invalid_limits_refused),
	};
	const struct CMUnitTest faults[] = {
	    cmocka_unit_test(test_pool_faults),
	};
	const struct CMUnitTest hostile[] = {
	    cmocka_unit_test(test_hostile_pods),
	    cmocka_unit_test(test_deadline_annotation),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	rc |= cmocka_run_group_tests(faults, setup_no_retry, teardown);
	return rc | cmocka_run_group_tests(hostile, setup, teardown);
}
