/*
 * klet_test.c - kubelet tests with a fake provider against an in-process API server over
 * HTTP: registration, lease, pod start and status, crash -> back-off -> CrashLoopBackOff,
 * restartPolicy, image errors, graceful deletion, logs, the pod HTTP server, bad configs.
 *
 * The fake provider's behaviour is chosen by the image name:
 *   "ok"       runs; logs "started <pod>"; HTTP answers "hello <pod>"
 *   "crash"    runs, logs "about to crash", then exits with code 2, message "boom"
 *   "exit0"    exits with code 0 ("Completed") on its first run
 *   "missing"  start fails with K32_ERR_NOT_FOUND (ErrImagePull)
 *   "nostart"  start fails with K32_ERR_NO_RESOURCES (CreateContainerError)
 *   "block"    its first run holds the exec task until the test opens the gate (a pod in
 *              a long call, without timing)
 */
#include "kubelet/klet_testfx.h"

#include <stdlib.h>

#include "kubelet/klet_int.h"

/* ---- fake provider ------------------------------------------------------------------------ */

struct fake {
	klet_notify_fn notify;
	void *arg;
	int starts;
	int stops;
	int stoppings;		  /* stopping calls: deleted pods only, never restarts */
	_Atomic int quiet_polls;  /* pending calls for image "quiet" (always nothing to do) */
	_Atomic int quiet_runs;	  /* run calls for it: must stay 0 */
	struct k32_mutex gate_mu; /* "block": in_block and open, under gate_mu */
	struct k32_cond gate_cv;
	bool in_block;		 /* a "block" pod is inside its first run */
	bool open;		 /* the gate is open: the run returns */
	_Atomic bool chatty3_go; /* "chatty3" writes its lines 2 and 3, then exits */
};

struct fake_pod {
	char image[32];
	int runs;
};

static void f_init(void *ctx, struct klet *k, klet_notify_fn n, void *arg)
{
	(void)k;
	struct fake *f = ctx;
	f->notify = n;
	f->arg = arg;
}

static k32_status_t f_start(void *ctx, struct klet_pod *pod, const struct klet_run_spec *s,
			    struct k32_err *err)
{
	struct fake *f = ctx;
	if (!strcmp(s->image, "missing"))
		return k32_err_set(err, K32_ERR_NOT_FOUND, "fake", "image missing not found");
	if (!strcmp(s->image, "nostart"))
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "fake", "does not fit: 9 > 8 bytes");
	struct fake_pod *fp = k32_calloc(klet_pod_allocator(pod), sizeof(*fp));
	if (!fp)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "fake", "pool full");
	snprintf(fp->image, sizeof(fp->image), "%s", s->image);
	klet_pod_set_priv(pod, fp);
	char line[200];
	int n = snprintf(line, sizeof(line), "started %s", klet_pod_ref(pod));
	klet_pod_log(pod, line, (size_t)n);
	f->starts++;
	return K32_OK;
}

static void f_stop(void *ctx, struct klet_pod *pod)
{
	struct fake *f = ctx;
	struct fake_pod *fp = klet_pod_priv(pod);
	k32_free(klet_pod_allocator(pod), fp, sizeof(*fp));
	klet_pod_set_priv(pod, NULL);
	f->stops++;
}

static void f_run(void *ctx, struct klet_pod *pod, uint64_t now, uint64_t *next)
{
	struct fake *f = ctx;
	struct fake_pod *fp = klet_pod_priv(pod);
	*next = UINT64_MAX;
	fp->runs++;
	if (!strcmp(fp->image, "quiet"))
		f->quiet_runs++;
	if (!strcmp(fp->image, "block")) {
		k32_mutex_lock(&f->gate_mu);
		f->in_block = fp->runs == 1;
		k32_plat()->cond_broadcast(&f->gate_cv);
		while (fp->runs == 1 && !f->open)
			k32_plat()->cond_wait(&f->gate_cv, &f->gate_mu, K32_FOREVER);
		f->in_block = false;
		k32_mutex_unlock(&f->gate_mu);
		*next = now + 1000000;
	} else if (!strcmp(fp->image, "crash")) {
		klet_pod_log(pod, "about to crash\n", 15);
		struct klet_exit ex = {.code = 2, .reason = "Error", .message = "boom"};
		f->notify(f->arg, pod, &ex);
	} else if (!strncmp(fp->image, "chatty", 6)) {
		/* a line every 20 ms; "chatty3" its first line, then, once the test says so
		 * (chatty3_go), its second and third, and it exits: it runs until the test has a
		 * follower attached, whatever the load */
		bool three = !strcmp(fp->image, "chatty3");
		if (three && fp->runs == 2 && !f->chatty3_go) {
			fp->runs--;
			*next = now + 10000;
			return;
		}
		char line[32];
		int n = snprintf(line, sizeof(line), "line %d", fp->runs);
		klet_pod_log(pod, line, (size_t)n);
		*next = now + 20000;
		if (three && fp->runs == 3) {
			struct klet_exit ex = {.code = 0, .reason = "Completed", .message = ""};
			f->notify(f->arg, pod, &ex);
		}
	} else if (!strcmp(fp->image, "exit0")) {
		struct klet_exit ex = {.code = 0, .reason = "Completed", .message = ""};
		f->notify(f->arg, pod, &ex);
	} else {
		*next = now + 1000000;
	}
}

static k32_status_t f_http(void *ctx, struct klet_pod *pod, const struct klet_http_req *req,
			   struct klet_http_resp *resp)
{
	(void)ctx;
	k32_buf_printf(&resp->body, NULL, "hello %s %s %.*s", klet_pod_ref(pod), req->method,
		       (int)req->target.len, req->target.p);
	resp->status = 200;
	return K32_OK;
}

static void f_stopping(void *ctx, struct klet_pod *pod)
{
	struct fake *f = ctx;
	assert_non_null(klet_pod_priv(pod)); /* called before stop, with the runtime */
	f->stoppings++;
}

/* "quiet" has nothing to do at each poll (every 10 ms); everything else runs. */
static bool f_pending(void *ctx, struct klet_pod *pod, uint64_t now, uint64_t *next)
{
	struct fake *f = ctx;
	struct fake_pod *fp = klet_pod_priv(pod);
	if (!fp || strcmp(fp->image, "quiet"))
		return true;
	f->quiet_polls++;
	*next = now + 10000;
	return false;
}

static const struct klet_provider_ops fake_ops = {.init = f_init,
						  .start = f_start,
						  .stop = f_stop,
						  .run = f_run,
						  .http = f_http,
						  .stopping = f_stopping,
						  .pending = f_pending};

/* ---- fixture ---------------------------------------------------------------------------- */

static const struct klet_profile prof = {.name = "host",
					 .pod_pool_bytes = 64 * 1024,
					 .interp_stack = 64 * 1024,
					 .max_pods = 24,
					 .hardware = "i2c:bme688"};

struct tfx {
	struct fx_cp cp;
	struct fake fake;
	struct klet *k;
	struct k32_heap log_heap; /* the pods' log rings (cfg.log_alloc), with fault injection */
	struct k32_allocator log_alloc;
};

/* A counter of the fake provider, read under the run lock that its writers (provider calls)
 * hold, so the read is ordered with them (TSan saw the delete test read fake.stops bare). */
static int fake_count(struct tfx *t, const int *counter)
{
	k32_mutex_lock(&t->k->run_lock);
	int v = *counter;
	k32_mutex_unlock(&t->k->run_lock);
	return v;
}

static int setup(void **state)
{
	static struct tfx t;
	memset(&t, 0, sizeof(t));
	fx_cp_start(&t.cp);
	k32_plat()->mutex_init(&t.fake.gate_mu);
	k32_plat()->cond_init(&t.fake.gate_cv);
	struct klet_config c;
	fx_klet_config(&c, &t.cp, "node-a", &prof);
	c.provider = &fake_ops;
	c.provider_ctx = &t.fake;
	c.lease_renew_ms = 50;
	k32_heap_init(&t.log_heap, 0);
	t.log_alloc = k32_heap_allocator(&t.log_heap);
	c.log_alloc = &t.log_alloc;
	struct k32_err err;
	if (klet_new(&c, &t.k, &err) || klet_start(t.k, &err))
		fail_msg("kubelet: %s", err.msg);
	/* no pod yet: no log ring either (they come with each admitted pod) */
	assert_int_equal(t.log_heap.stats.cur_bytes, 0);
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	struct tfx *t = *state;
	klet_free(t->k);
	fx_cp_stop(&t->cp);
	k32_plat()->mutex_fini(&t->fake.gate_mu);
	k32_plat()->cond_fini(&t->fake.gate_cv);
	return 0;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_register(void **state)
{
	struct tfx *t = *state;
	int code;
	cJSON *n = fx_do(&t->cp, "GET", "/api/v1/nodes/node-a", NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(fx_str(n, "status.capacity.memory"), "65536");
	assert_string_equal(fx_str(n, "status.allocatable.pods"), "24");
	const cJSON *lb = k32_json_find(n, "metadata.labels");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(lb, "kube32.io/board")),
			    "host");
	const cJSON *an = k32_json_find(n, "metadata.annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(an, "kube32.io/hardware")),
			    "i2c:bme688");
	assert_string_equal(fx_str(n, "status.nodeInfo.kubeletVersion"), "v1.32.0-kube32");
	const cJSON *addr = cJSON_GetArrayItem(k32_json_find(n, "status.addresses"), 0);
	assert_string_equal(fx_str(addr, "address"), "127.0.0.1");
	bool ready = false;
	const cJSON *c;
	cJSON_ArrayForEach(
	    c, k32_json_find(n, "status.conditions")) if (!strcmp(fx_str(c, "type"), "Ready"))
	    ready = !strcmp(fx_str(c, "status"), "True");
	assert_true(ready);
	const cJSON *port = k32_json_find(n, "status.daemonEndpoints.kubeletEndpoint.Port");
	assert_int_equal((int)port->valuedouble, klet_pod_http_port(t->k));
	cJSON_Delete(n);
}

/* A status post that only renews the heartbeat changes nothing but lastHeartbeatTime: the
 * conditions keep the first post's lastTransitionTime (a fresh one each post made every
 * Node update look like a change to the controllers: at 1,000 boards the node lifecycle
 * listed every Node and Lease ~17 times a second). */
static void test_node_status_heartbeat_only(void **state)
{
	struct tfx *t = *state;
	cJSON *a = klet_node_status_json(t->k, 1800000000u);
	cJSON *b = klet_node_status_json(t->k, 1800000600u);
	assert_non_null(a);
	assert_non_null(b);
	const cJSON *ca, *cb;
	size_t n = 0;
	cJSON_ArrayForEach(ca, cJSON_GetObjectItem(a, "conditions"))
	{
		cb = kmeta_cond_find(cJSON_GetObjectItem(b, "conditions"), fx_str(ca, "type"));
		assert_non_null(cb);
		assert_string_equal(fx_str(ca, "lastTransitionTime"),
				    fx_str(cb, "lastTransitionTime"));
		assert_string_not_equal(fx_str(ca, "lastHeartbeatTime"),
					fx_str(cb, "lastHeartbeatTime"));
		n++;
	}
	assert_int_equal(n, 4);
	/* apart from the heartbeat the two posts are the same object */
	cJSON_ArrayForEach(ca, cJSON_GetObjectItem(a, "conditions"))
	    cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)ca, "lastHeartbeatTime");
	cJSON_ArrayForEach(cb, cJSON_GetObjectItem(b, "conditions"))
	    cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)cb, "lastHeartbeatTime");
	assert_true(cJSON_Compare(a, b, true));
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void test_lease(void **state)
{
	struct tfx *t = *state;
	struct klet_stats st;
	for (int i = 0; i < 500; i++) {
		klet_get_stats(t->k, &st);
		if (st.lease_renewals >= 3)
			break;
		k32_plat()->sleep_us(10000);
	}
	assert_true(st.lease_renewals >= 3);
	int code;
	cJSON *l = fx_do(&t->cp, "GET",
			 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a",
			 NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(fx_str(l, "spec.holderIdentity"), "node-a");
	assert_int_equal((int)k32_json_find(l, "spec.leaseDurationSeconds")->valuedouble,
			 K32_KLET_LEASE_DURATION_S);
	assert_non_null(fx_str(l, "spec.renewTime"));
	cJSON_Delete(l);
}

static void test_pod_runs(void **state)
{
	struct tfx *t = *state;
	fx_pod_create(&t->cp, "p-ok", "node-a", "ok", "Always", "8Ki", NULL);
	cJSON *p = fx_wait_pod(&t->cp, "p-ok", fx_ready, NULL);
	assert_string_equal(fx_str(p, "status.phase"), "Running");
	assert_non_null(fx_str(fx_cs(p), "state.running.startedAt"));
	assert_string_equal(fx_str(p, "status.hostIP"), "127.0.0.1");
	assert_string_equal(fx_str(p, "status.podIP"), "127.0.0.1");
	const char *want[] = {"PodScheduled", "Initialized", "ContainersReady", "Ready"};
	for (int i = 0; i < 4; i++) {
		const cJSON *c = cJSON_GetArrayItem(k32_json_find(p, "status.conditions"), i);
		assert_string_equal(fx_str(c, "type"), want[i]);
		assert_string_equal(fx_str(c, "status"), "True");
	}
	assert_int_equal((int)cJSON_GetObjectItem(fx_cs(p), "restartCount")->valuedouble, 0);
	cJSON_Delete(p);
	/* the log line the provider wrote */
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
	assert_int_equal(klet_pod_logs(t->k, "default", "p-ok", false, -1, false, NULL, &b, &err),
			 K32_OK);
	assert_string_equal(k32_buf_cstr(&b), "started default/p-ok\n");
	k32_buf_reset(&b);
	assert_int_equal(klet_pod_logs(t->k, "default", "nope", false, -1, false, NULL, &b, &err),
			 K32_ERR_NOT_FOUND);
	assert_non_null(strstr(err.msg, "not on node node-a"));
	k32_buf_fini(&b);
	/* its runtime came from the pod pool */
	struct klet_stats st;
	klet_get_stats(t->k, &st);
	assert_true(st.pool_bytes > 0);
	assert_int_equal(st.pool_limit, 64 * 1024);
}

static bool crashloop(const cJSON *pod, const void *arg)
{
	(void)arg;
	const cJSON *cs = fx_cs(pod);
	const cJSON *rc = cJSON_GetObjectItem(cs, "restartCount");
	const char *r = fx_str(cs, "state.waiting.reason");
	return rc && rc->valuedouble >= 2 && r && !strcmp(r, "CrashLoopBackOff");
}

/*
 * Deletes a pod and waits until it is gone. A crash-looping pod is deleted once its test is
 * done: restarting every 200 ms it queues two Events per restart (Started, BackOff), and
 * three of them filled the kubelet's Event queue (KLET_EVENT_QUEUE, drops when full) faster
 * than the node task sent them under TSan at load ~30, so a later test's one Event
 * (test_log_ring_alloc's UnexpectedAdmissionError) was dropped (2 of 10 runs).
 */
static void pod_delete_wait(struct tfx *t, const char *name)
{
	char target[128];
	snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s", name);
	int code;
	cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
	assert_int_equal(code, 200);
	assert_true(fx_gone_pred(&t->cp, name));
}

static void test_crash_backoff(void **state)
{
	struct tfx *t = *state;
	int stoppings = fake_count(t, &t->fake.stoppings);
	fx_pod_create(&t->cp, "p-crash", "node-a", "crash", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "p-crash", crashloop, NULL);
	assert_int_equal(fake_count(t, &t->fake.stoppings), stoppings); /* no deletion */
	const cJSON *cs = fx_cs(p);
	assert_string_equal(fx_str(p, "status.phase"), "Running");
	assert_int_equal((int)k32_json_find(cs, "lastState.terminated.exitCode")->valuedouble, 2);
	assert_string_equal(fx_str(cs, "lastState.terminated.reason"), "Error");
	assert_string_equal(fx_str(cs, "lastState.terminated.message"), "boom");
	assert_non_null(strstr(fx_str(cs, "state.waiting.message"), "back-off"));
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cs, "ready")));
	cJSON_Delete(p);
	/* --previous holds the crashed container's lines, trap message included */
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
	assert_int_equal(klet_pod_logs(t->k, "default", "p-crash", true, -1, false, NULL, &b, &err),
			 K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&b), "about to crash\nError: boom\n"));
	k32_buf_reset(&b);
	assert_int_equal(klet_pod_logs(t->k, "default", "p-crash", true, 1, true, NULL, &b, &err),
			 K32_OK);
	assert_non_null(strstr(k32_buf_cstr(&b), "Z Error: boom\n")); /* timestamped, tail 1 */
	k32_buf_fini(&b);
	/* the kubelet recorded Events about it, each repeat counted up on one Event (a series,
	 * as client-go's correlator does): one Started Event whose count reaches the starts */
	bool started = false, backoff = false;
	int started_objects = 0, started_count = 0;
	for (int tries = 0; tries < 1000 && started_count < 3; tries++) {
		int code;
		cJSON *ev = fx_do(
		    &t->cp, "GET",
		    "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp-crash",
		    NULL, &code);
		assert_int_equal(code, 200);
		started_objects = started_count = 0;
		const cJSON *e;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(ev, "items"))
		{
			const char *r = fx_str(e, "reason");
			if (r && !strcmp(r, "Started")) {
				started = true;
				started_objects++;
				started_count += (int)k32_json_find(e, "count")->valuedouble;
				assert_string_equal(fx_str(e, "reportingInstance"), "node-a");
			}
			if (r && !strcmp(r, "BackOff")) {
				backoff = true;
				assert_string_equal(fx_str(e, "type"), "Warning");
				assert_string_equal(fx_str(e, "source.host"), "node-a");
			}
		}
		cJSON_Delete(ev);
		if (started_count < 3)
			k32_plat()->sleep_us(10000);
	}
	assert_true(started);
	assert_true(backoff);
	assert_int_equal(started_objects, 1);
	assert_true(started_count >= 3);
	pod_delete_wait(t, "p-crash");
}

struct policy_case {
	const char *name, *image, *policy, *phase;
	int exit_code;
};

static bool terminated_phase(const cJSON *pod, const void *arg)
{
	const struct policy_case *pc = arg;
	const char *ph = fx_str(pod, "status.phase");
	return ph && !strcmp(ph, pc->phase) &&
	       k32_json_find(fx_cs(pod), "state.terminated.exitCode");
}

static void test_restart_policy(void **state)
{
	struct tfx *t = *state;
	static const struct policy_case cases[] = {
	    {"rp-never-crash", "crash", "Never", "Failed", 2},
	    {"rp-never-ok", "exit0", "Never", "Succeeded", 0},
	    {"rp-onfail-ok", "exit0", "OnFailure", "Succeeded", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct policy_case *pc = &cases[i];
		fx_pod_create(&t->cp, pc->name, "node-a", pc->image, pc->policy, NULL, NULL);
		cJSON *p = fx_wait_pod(&t->cp, pc->name, terminated_phase, pc);
		const cJSON *cs = fx_cs(p);
		assert_int_equal((int)k32_json_find(cs, "state.terminated.exitCode")->valuedouble,
				 pc->exit_code);
		assert_int_equal((int)cJSON_GetObjectItem(cs, "restartCount")->valuedouble, 0);
		cJSON_Delete(p);
	}
	/* OnFailure restarts a failing container; Always restarts even a successful one */
	fx_pod_create(&t->cp, "rp-onfail-crash", "node-a", "crash", "OnFailure", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "rp-onfail-crash", crashloop, NULL));
	fx_pod_create(&t->cp, "rp-always-ok", "node-a", "exit0", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "rp-always-ok", crashloop, NULL);
	assert_int_equal((int)k32_json_find(fx_cs(p), "lastState.terminated.exitCode")->valuedouble,
			 0);
	cJSON_Delete(p);
	pod_delete_wait(t, "rp-onfail-crash");
	pod_delete_wait(t, "rp-always-ok");
}

static void test_start_errors(void **state)
{
	struct tfx *t = *state;
	fx_pod_create(&t->cp, "p-missing", "node-a", "missing", "Always", NULL, NULL);
	cJSON *p = fx_wait_pod(&t->cp, "p-missing", fx_waiting_is, "ImagePullBackOff");
	assert_string_equal(fx_str(p, "status.phase"), "Pending");
	assert_string_equal(fx_str(fx_cs(p), "state.waiting.message"), "image missing not found");
	cJSON_Delete(p);
	fx_pod_create(&t->cp, "p-nostart", "node-a", "nostart", "Always", NULL, NULL);
	p = fx_wait_pod(&t->cp, "p-nostart", fx_waiting_is, "CreateContainerError");
	assert_non_null(strstr(fx_str(fx_cs(p), "state.waiting.message"), "9 > 8"));
	cJSON_Delete(p);
}

static void test_delete(void **state)
{
	struct tfx *t = *state;
	fx_pod_create(&t->cp, "p-del", "node-a", "ok", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-del", fx_ready, NULL));
	int stops = fake_count(t, &t->fake.stops), stoppings = fake_count(t, &t->fake.stoppings);
	int code;
	cJSON_Delete(fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/p-del", NULL, &code));
	assert_true(code == 200 || code == 202);
	/* graceful: the kubelet tells the provider (stopping: the pod's stop event), stops
	 * it, then deletes it with grace 0 */
	assert_true(fx_gone_pred(&t->cp, "p-del"));
	assert_true(fake_count(t, &t->fake.stops) > stops);
	assert_int_equal(fake_count(t, &t->fake.stoppings), stoppings + 1);
}

static void test_pod_http(void **state)
{
	struct tfx *t = *state;
	fx_pod_create(&t->cp, "p-web", "node-a", "ok", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-web", fx_ready, NULL));
	fx_pod_create(&t->cp, "p-web-missing", "node-a", "missing", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-web-missing", fx_waiting_is, "ImagePullBackOff"));
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.port = klet_pod_http_port(t->k);
	struct http_client *c, *anon, *wrong;
	struct k32_err err;
	/* without credentials, and with a token the node does not trust */
	assert_int_equal(http_client_new(&cc, &anon, &err), K32_OK);
	cc.bearer_token = "not-the-token";
	assert_int_equal(http_client_new(&cc, &wrong, &err), K32_OK);
	cc.bearer_token = FX_POD_TOKEN;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	/* the node endpoints refuse both (401, before any work); pod routes and /healthz are
	 * open */
	static const struct {
		const char *method, *target, *hdr;
		int status;
		const char *body;
	} auth[] = {
	    {"POST", "/console", NULL, 401,
	     "/console on node node-a needs the cluster's credentials"},
	    {"GET", "/stats", NULL, 401, "needs the cluster's credentials"},
	    {"GET", "/metrics", NULL, 401, "needs the cluster's credentials"},
	    {"GET", "/containerLogs/default/p-web/main", NULL, 401, "Authorization: Bearer"},
	    {"GET", "/containerLogs/default/p-web/main?follow=true", NULL, 401, "Bearer"},
	    {"GET", "/healthz", NULL, 200, "ok"},
	    {"GET", "/hi", "X-Kube32-Pod: default/p-web\r\n", 200, "hello default/p-web"},
	};
	for (int who = 0; who < 2; who++) {
		for (size_t i = 0; i < sizeof(auth) / sizeof(auth[0]); i++) {
			struct http_client_request rq = {
			    .method = auth[i].method,
			    .target = auth[i].target,
			    .headers = auth[i].hdr,
			    .body = "K32_CMD:PODS",
			    .body_len = strcmp(auth[i].method, "POST") ? 0 : 12};
			struct http_client_response r;
			assert_int_equal(http_client_do(who ? wrong : anon, &rq, &r, &err), K32_OK);
			if (r.status != auth[i].status ||
			    !strstr(k32_buf_cstr(&r.body), auth[i].body))
				fail_msg("%s %s (%s): got %d %s", auth[i].method, auth[i].target,
					 who ? "wrong token" : "no token", r.status,
					 k32_buf_cstr(&r.body));
			struct k32_str wa;
			if (r.status == 401)
				assert_true(
				    http_client_response_header(&r, "WWW-Authenticate", &wa));
			http_client_response_fini(&r);
		}
	}
	http_client_free(anon);
	http_client_free(wrong);
	static const struct {
		const char *target, *hdr;
		int status;
		const char *body;
	} cases[] = {
	    {"/hi?x=1", "X-Kube32-Pod: default/p-web\r\n", 200, "hello default/p-web GET /hi?x=1"},
	    {"/", "X-Kube32-Pod: default/none\r\n", 404, "is not on node node-a"},
	    {"/", "X-Kube32-Pod: garbage\r\n", 404, "must be <namespace>/<name>"},
	    {"/", "X-Kube32-Pod: default/p-web-missing\r\n", 503, "is not Running"},
	    {"/healthz", NULL, 200, "ok"},
	    {"/", NULL, 400, "send X-Kube32-Pod"},
	    {"/containerLogs/default/p-web/main", NULL, 200, "started default/p-web"},
	    {"/containerLogs/default/zzz/main", NULL, 404, "not on node"},
	    {"/containerLogs/default/p-web/main?tailLines=99999999999999999999", NULL, 400,
	     "tailLines=\"99999999999999999999\" is 20 bytes long, over the limit of 18"},
	    {"/containerLogs/default/p-web/main?follow=yes", NULL, 400, "expected true or false"},
	    /* Go booleans, read by kmeta's one log-options reader: previous=1 is previous=true
	     * (p-web has no previous container), not an ignored value */
	    {"/containerLogs/default/p-web/main?previous=1", NULL, 404,
	     "previous terminated container \"main\" in pod \"p-web\" not found"},
	    {"/containerLogs/default/p-web/main?previous=False&timestamps=0", NULL, 200,
	     "started default/p-web"},
	    {"/metrics", NULL, 200,
	     "kube32_pod_running{node=\"node-a\",namespace=\"default\",pod=\"p-web\"} 1\n"},
	    {"/metrics", NULL, 200,
	     "# TYPE kube32_node_pool_bytes gauge\n"
	     "kube32_node_pool_bytes{node=\"node-a\",state=\"used\"} "},
	};
	/* the console */
	static const struct {
		const char *line, *want;
	} con[] = {
	    {"K32_CMD:PODS\n", "K32_POD default/p-web state=running restarts=0 pool_bytes="},
	    {"K32_CMD:PODS", "K32_END PODS count="},
	    {"K32_CMD:MEM", "K32_MEM region=pod_pool size=65536 used="},
	    {"K32_CMD:MEM", " peak="},
	    {"K32_CMD:MEM", " scope=node\nK32_MEM region=kobj_region size=2097152 used="},
	    {"K32_CMD:MEM", "K32_MEM region=heap size=0 used="},
	    {"K32_CMD:MEM", " free=unlimited peak="},
	    {"K32_CMD:MEM", "K32_END MEM count=3"},
	    {"K32_CMD:TASKS", "K32_TASK name=klet-node-a run_ms="},
	    {"K32_CMD:TASKS", "K32_TASKS count="},
	    {"K32_CMD:TASKS", "K32_END TASKS"},
	    {"K32_CMD:BENCH:crc32:4:5", "K32_BENCH kernel=crc32 n=4 runs=5 us_min="},
	    {"K32_CMD:BENCH:crc32:4:5", "K32_END BENCH"},
	    {"K32_CMD:NOPE", "K32_ERR"},
	    {"PODS", "K32_ERR expected K32_CMD:"},
	};
	for (size_t i = 0; i < sizeof(con) / sizeof(con[0]); i++) {
		struct http_client_request rq = {.method = "POST",
						 .target = "/console",
						 .body = con[i].line,
						 .body_len = strlen(con[i].line)};
		struct http_client_response r;
		assert_int_equal(http_client_do(c, &rq, &r, &err), K32_OK);
		if (r.status != 200 || !strstr(k32_buf_cstr(&r.body), con[i].want))
			fail_msg("console %s: got %d %s", con[i].line, r.status,
				 k32_buf_cstr(&r.body));
		http_client_response_fini(&r);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_client_request rq = {
		    .method = "GET", .target = cases[i].target, .headers = cases[i].hdr};
		struct http_client_response r;
		assert_int_equal(http_client_do(c, &rq, &r, &err), K32_OK);
		if (r.status != cases[i].status || !strstr(k32_buf_cstr(&r.body), cases[i].body))
			fail_msg("%s: got %d %s", cases[i].target, r.status, k32_buf_cstr(&r.body));
		http_client_response_fini(&r);
	}
	http_client_free(c);
	/* the server counts a closed connection until its loop sees the close: wait for it (a
	 * bound, not a timing assertion; the routers' answers make that later under TSan) */
	struct http_server_stats ss;
	for (int i = 0; i < 3000; i++) {
		http_server_get_stats(t->k->pod_srv, &ss);
		if (ss.conns_open == 0)
			break;
		k32_plat()->sleep_us(10000);
	}
	assert_int_equal(ss.conns_open, 0);
	/* one client address may hold at most K32_KLET_POD_HTTP_CONNS_PER_CLIENT connections:
	 * the one past it is refused (503), and the node keeps serving the others */
	struct http_client *many[K32_KLET_POD_HTTP_CONNS_PER_CLIENT + 1];
	cc.bearer_token = NULL;
	for (int i = 0; i <= K32_KLET_POD_HTTP_CONNS_PER_CLIENT; i++) {
		assert_int_equal(http_client_new(&cc, &many[i], &err), K32_OK);
		struct http_client_request rq = {.method = "GET", .target = "/healthz"};
		struct http_client_response r;
		k32_status_t st = http_client_do(many[i], &rq, &r, &err);
		if (i < K32_KLET_POD_HTTP_CONNS_PER_CLIENT) {
			assert_int_equal(st, K32_OK);
			assert_int_equal(r.status, 200);
			http_client_response_fini(&r);
		} else if (st == K32_OK) {
			assert_int_equal(r.status, 503);
			http_client_response_fini(&r);
		}
	}
	for (int i = 0; i <= K32_KLET_POD_HTTP_CONNS_PER_CLIENT; i++)
		http_client_free(many[i]);
}

/* A provider's pending says "nothing to do": the worker asks again when told and never
 * calls run for it. */
static void test_pending(void **state)
{
	struct tfx *t = *state;
	fx_pod_create(&t->cp, "p-quiet", "node-a", "quiet", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-quiet", fx_ready, NULL));
	int polls0 = t->fake.quiet_polls;
	for (int i = 0; i < 500 && t->fake.quiet_polls < polls0 + 3; i++)
		k32_plat()->sleep_us(10000);
	assert_true(t->fake.quiet_polls >= polls0 + 3); /* asked again at the time it gave */
	assert_int_equal(t->fake.quiet_runs, 0);
	int code;
	cJSON_Delete(
	    fx_do(&t->cp, "DELETE", "/api/v1/namespaces/default/pods/p-quiet", NULL, &code));
	assert_true(fx_gone_pred(&t->cp, "p-quiet"));
}

/* ---- /containerLogs?follow=true ------------------------------------------------------------ */

struct flw {
	struct klet *k;
	const char *target;
	int lines;	     /* "line N" lines seen */
	int want;	     /* hang up after this many (0: read to the end) */
	_Atomic bool *hold;  /* keep reading while set (the followers-limit case) */
	_Atomic int *opened; /* bumped at the first line */
	k32_status_t st;
	int code;
};

static k32_status_t flw_line(void *ctx, const uint8_t *data, size_t len)
{
	struct flw *f = ctx;
	if (!data)
		return f->hold && !*f->hold ? K32_ERR_CANCELED : K32_OK; /* a quiet tick */
	if (len > 5 && !memcmp(data, "line ", 5) && f->lines++ == 0 && f->opened)
		(*f->opened)++;
	if (f->hold)
		return *f->hold ? K32_OK : K32_ERR_CANCELED;
	return f->want && f->lines >= f->want ? K32_ERR_CANCELED : K32_OK;
}

static void flw_run(struct flw *f)
{
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.port = klet_pod_http_port(f->k);
	cc.bearer_token = FX_POD_TOKEN;
	struct http_client *c;
	struct k32_err err;
	f->st = http_client_new(&cc, &c, &err);
	if (f->st)
		return;
	struct http_client_request rq = {
	    .method = "GET", .target = f->target, .timeout_us = 5000000, .tick_us = 50000};
	f->st = http_client_stream(c, &rq, true, flw_line, f, &f->code, &err);
	http_client_free(c);
}

static void flw_task(void *arg)
{
	flw_run(arg);
}

static void test_log_follow(void **state)
{
	struct tfx *t = *state;
	/* a container that ends: the stream ends by itself after its last line. The container
	 * writes its first line and waits until the follower has read it (it was Ready only
	 * for ~300 ms before, and under load the test could miss that) */
	struct fake *fk = &t->fake;
	fk->chatty3_go = false;
	fx_pod_create(&t->cp, "p-fol3", "node-a", "chatty3", "Never", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-fol3", fx_ready, NULL));
	static _Atomic int opened3;
	opened3 = 0;
	struct flw f = {.k = t->k,
			.target = "/containerLogs/default/p-fol3/main?follow=true",
			.opened = &opened3};
	struct k32_task *ft;
	struct k32_err ferr;
	assert_int_equal(
	    k32_plat()->task_create(&ft, "follower3", flw_task, &f, 64 * 1024, -1, &ferr), K32_OK);
	for (int i = 0; i < 1000 && !opened3; i++) /* 10 s bound */
		k32_plat()->sleep_us(10000);
	assert_int_equal(opened3, 1);
	fk->chatty3_go = true;
	k32_plat()->task_join(ft);
	assert_int_equal(f.st, K32_OK);
	assert_int_equal(f.code, 200);
	assert_int_equal(f.lines, 3);
	/* a finished container: follow answers the log once */
	cJSON_Delete(fx_wait_pod(&t->cp, "p-fol3", fx_phase_is, "Succeeded"));
	struct flw g = {.k = t->k, .target = "/containerLogs/default/p-fol3/main?follow=true"};
	flw_run(&g);
	assert_int_equal(g.st, K32_OK);
	assert_int_equal(g.lines, 3);
	/* a running one: tailLines, then new lines as they come; the client hangs up */
	fx_pod_create(&t->cp, "p-fol", "node-a", "chatty", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-fol", fx_ready, NULL));
	struct flw h = {.k = t->k,
			.target = "/containerLogs/default/p-fol/main?follow=true&tailLines=1",
			.want = 5};
	flw_run(&h);
	assert_int_equal(h.st, K32_ERR_CANCELED);
	assert_int_equal(h.code, 200);
	assert_int_equal(h.lines, 5);
	/* K32_KLET_LOG_FOLLOWERS streams at once; one more gets 429 until one closes */
	static _Atomic bool hold;
	static _Atomic int opened;
	hold = true;
	opened = 0;
	struct flw fs[K32_KLET_LOG_FOLLOWERS];
	struct k32_task *tasks[K32_KLET_LOG_FOLLOWERS];
	struct k32_err err;
	for (int i = 0; i < K32_KLET_LOG_FOLLOWERS; i++) {
		fs[i] = (struct flw){.k = t->k,
				     .target = "/containerLogs/default/p-fol/main?follow=true",
				     .hold = &hold,
				     .opened = &opened};
		assert_int_equal(k32_plat()->task_create(&tasks[i], "follower", flw_task, &fs[i],
							 64 * 1024, -1, &err),
				 K32_OK);
	}
	for (int i = 0; i < 1000 && opened < K32_KLET_LOG_FOLLOWERS; i++)
		k32_plat()->sleep_us(10000);
	assert_int_equal(opened, K32_KLET_LOG_FOLLOWERS);
	struct flw over = {.k = t->k, .target = "/containerLogs/default/p-fol/main?follow=true"};
	flw_run(&over);
	assert_int_equal(over.code, 429);
	hold = false;
	for (int i = 0; i < K32_KLET_LOG_FOLLOWERS; i++) {
		k32_plat()->task_join(tasks[i]);
		assert_int_equal(fs[i].code, 200);
	}
	/* the closed streams gave their places back */
	struct flw again = {
	    .k = t->k, .target = "/containerLogs/default/p-fol/main?follow=true", .want = 1};
	for (int i = 0; i < 1000 && again.code != 200; i++) { /* 10 s bound under load */
		again.lines = 0;
		flw_run(&again);
		if (again.code != 200)
			k32_plat()->sleep_us(10000);
	}
	assert_int_equal(again.code, 200);
	assert_int_equal(again.lines, 1);
	/* a pod that is not there */
	struct flw none = {.k = t->k, .target = "/containerLogs/default/zzz/main?follow=true"};
	flw_run(&none);
	assert_int_equal(none.code, 404);
}

/* One pod request on its own client (a router test's concurrent client). */
struct preq {
	uint16_t port;
	const char *hdr;
	const char *target;
	int code;
	char retry_after[16];
	char body[600];
};

static void preq_run(struct preq *q)
{
	struct http_client_config cc;
	http_client_config_init(&cc);
	cc.port = q->port;
	struct http_client *c;
	struct k32_err err;
	q->code = 0;
	q->retry_after[0] = 0;
	q->body[0] = 0;
	if (http_client_new(&cc, &c, &err))
		return;
	struct http_client_request rq = {.method = "GET", .target = q->target, .headers = q->hdr};
	struct http_client_response r;
	if (!http_client_do(c, &rq, &r, &err)) {
		q->code = r.status;
		snprintf(q->body, sizeof(q->body), "%s", k32_buf_cstr(&r.body));
		struct k32_str ra;
		if (http_client_response_header(&r, "Retry-After", &ra))
			snprintf(q->retry_after, sizeof(q->retry_after), "%.*s", (int)ra.len, ra.p);
		http_client_response_fini(&r);
	}
	http_client_free(c);
}

static void preq_task(void *arg)
{
	preq_run(arg);
}

static void set_wait_ms(struct tfx *t, uint32_t ms)
{
	k32_mutex_lock(&t->k->lock);
	t->k->cfg.pod_http_wait_ms = ms;
	k32_mutex_unlock(&t->k->lock);
}

static uint32_t jobs_queued(struct tfx *t)
{
	uint32_t n = 0;
	k32_mutex_lock(&t->k->lock);
	for (uint32_t i = 0; i < K32_KLET_POD_HTTP_QUEUE; i++)
		n += t->k->http_jobs[i].state == KLET_JOB_QUEUED;
	k32_mutex_unlock(&t->k->lock);
	return n;
}

/*
 * Routing never waits on a pod's call (issue 11): while pod p-block holds the exec task in a
 * call that does not end until the test opens its gate, the pod server still answers
 * /healthz, answers a request for its neighbour 503 + Retry-After naming p-block when it
 * cannot be served within its bound, queues requests up to K32_KLET_POD_HTTP_QUEUE and
 * refuses one more at once (queue full); the gate opens and the queued ones are served.
 * No clock decides anything here: p-block holds until released.
 */
static void test_pod_http_routing(void **state)
{
	struct tfx *t = *state;
	struct fake *f = &t->fake;
	fx_pod_create(&t->cp, "p-nbr", "node-a", "ok", "Always", NULL, NULL);
	cJSON_Delete(fx_wait_pod(&t->cp, "p-nbr", fx_ready, NULL));
	k32_mutex_lock(&f->gate_mu);
	f->open = false;
	k32_mutex_unlock(&f->gate_mu);
	fx_pod_create(&t->cp, "p-block", "node-a", "block", "Always", NULL, NULL);
	k32_mutex_lock(&f->gate_mu);
	int64_t bound = k32_deadline_after(30 * 1000000ll); /* a bound, not a timing assertion */
	while (!f->in_block && k32_now_us() < (uint64_t)bound)
		k32_plat()->cond_wait(&f->gate_cv, &f->gate_mu, bound);
	bool in = f->in_block;
	k32_mutex_unlock(&f->gate_mu);
	assert_true(in);
	uint16_t port = klet_pod_http_port(t->k);
	const char *nbr = "X-Kube32-Pod: default/p-nbr\r\n";
	/* routing goes on: the node's own endpoint, a 404, and the neighbour's 503 */
	struct preq hz = {.port = port, .target = "/healthz"};
	preq_run(&hz);
	assert_int_equal(hz.code, 200);
	struct preq nf = {.port = port, .hdr = "X-Kube32-Pod: default/zzz\r\n", .target = "/"};
	preq_run(&nf);
	assert_int_equal(nf.code, 404);
	set_wait_ms(t, 50);
	struct preq b = {.port = port, .hdr = nbr, .target = "/b"};
	preq_run(&b);
	if (b.code != 503 ||
	    !strstr(b.body, "pod default/p-block holds node node-a's interpreter in "
			    "k32_tick/k32_event") ||
	    !strstr(b.body, "K32_KLET_POD_HTTP_WAIT_MS") || atoi(b.retry_after) < 1)
		fail_msg("busy: %d (Retry-After %s) %s", b.code, b.retry_after, b.body);
	print_message("busy: %s", b.body);
	/* the queue: K32_KLET_POD_HTTP_QUEUE requests wait, one more is refused at once */
	set_wait_ms(t, 20000);
	struct preq qs[K32_KLET_POD_HTTP_QUEUE];
	struct k32_task *tasks[K32_KLET_POD_HTTP_QUEUE];
	struct k32_err err;
	for (int i = 0; i < K32_KLET_POD_HTTP_QUEUE; i++) {
		qs[i] = (struct preq){.port = port, .hdr = nbr, .target = "/queued"};
		assert_int_equal(k32_plat()->task_create(&tasks[i], "preq", preq_task, &qs[i],
							 64 * 1024, -1, &err),
				 K32_OK);
	}
	for (int i = 0; i < 3000 && jobs_queued(t) < K32_KLET_POD_HTTP_QUEUE; i++)
		k32_plat()->sleep_us(10000); /* 30 s bound under load */
	assert_int_equal(jobs_queued(t), K32_KLET_POD_HTTP_QUEUE);
	struct preq full = {.port = port, .hdr = nbr, .target = "/full"};
	preq_run(&full);
	if (full.code != 503 || !strstr(full.body, "queue full, K32_KLET_POD_HTTP_QUEUE") ||
	    !strstr(full.body, "pod default/p-block holds") || atoi(full.retry_after) < 1)
		fail_msg("full: %d (Retry-After %s) %s", full.code, full.retry_after, full.body);
	print_message("full: %s", full.body);
	preq_run(&hz); /* a router is still free */
	assert_int_equal(hz.code, 200);
	/* the call ends: the exec task serves the queued requests */
	k32_mutex_lock(&f->gate_mu);
	f->open = true;
	k32_plat()->cond_broadcast(&f->gate_cv);
	k32_mutex_unlock(&f->gate_mu);
	for (int i = 0; i < K32_KLET_POD_HTTP_QUEUE; i++) {
		k32_plat()->task_join(tasks[i]);
		if (qs[i].code != 200 || !strstr(qs[i].body, "hello default/p-nbr GET /queued"))
			fail_msg("queued %d: %d %s", i, qs[i].code, qs[i].body);
	}
	set_wait_ms(t, 0);
	preq_run(&b);
	assert_int_equal(b.code, 200);
}

/* Whether an Event with this reason was recorded about the pod (polled: events are sent by the
 * kubelet's worker after the status; 10 s at most, a bound, not a timing assertion). */
static bool event_seen(struct fx_cp *cp, const char *pod, const char *reason)
{
	char target[256];
	snprintf(target, sizeof(target),
		 "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%%3D%s", pod);
	for (int i = 0; i < 1000; i++) {
		int code;
		cJSON *ev = fx_do(cp, "GET", target, NULL, &code);
		bool seen = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(ev, "items"))
		{
			const char *r = fx_str(e, "reason");
			seen |= r && !strcmp(r, reason);
		}
		cJSON_Delete(ev);
		if (seen)
			return true;
		k32_plat()->sleep_us(10000);
	}
	return false;
}

/*
 * A pod's log rings are taken when it is admitted and given back with it. The log heap
 * refuses its Nth allocation: the first ring (N = 1) or the second (N = 2, the first is given
 * back): the pod is rejected (phase Failed, reason UnexpectedAdmissionError, a message naming
 * the rings and what to do, a Warning event) and never started. With no fault it runs and
 * logs. Once the pods are deleted, the log heap holds nothing: no leak on any path.
 */
/* Bytes of log rings the kubelet's slots hold (lock held): with no leak, all the log heap has. */
static size_t rings_held_locked(struct klet *k)
{
	size_t n = 0;
	for (uint32_t i = 0; i < k->max_pods; i++)
		n += (k->pods[i].log.buf ? K32_KLET_LOG_RING_BYTES : 0u) +
		     (k->pods[i].prev.buf ? K32_KLET_LOG_RING_BYTES : 0u);
	return n;
}

/* Whether the kubelet still has a slot for the pod (polled after its deletion: the slot is
 * freed once the kubelet's DELETE succeeded; 10 s at most). */
static bool slot_freed(struct klet *k, const char *name)
{
	for (int i = 0; i < 1000; i++) {
		k32_mutex_lock(&k->lock);
		bool found = klet_pod_find_locked(k, "default", name) != NULL;
		k32_mutex_unlock(&k->lock);
		if (!found)
			return true;
		k32_plat()->sleep_us(10000);
	}
	return false;
}

struct log_alloc_case {
	const char *name;
	uint32_t fail_nth; /* 0: no fault */
	bool runs;
};

static void test_log_ring_alloc(void **state)
{
	struct tfx *t = *state;
	static const struct log_alloc_case cases[] = {
	    {"lr-fail-first", 1, false},
	    {"lr-fail-second", 2, false},
	    {"lr-ok", 0, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct log_alloc_case *c = &cases[i];
		k32_mutex_lock(&t->k->lock);
		k32_heap_fail_nth(&t->log_heap, c->fail_nth);
		k32_mutex_unlock(&t->k->lock);
		fx_pod_create(&t->cp, c->name, "node-a", "ok", "Always", NULL, NULL);
		cJSON *p = fx_wait_pod(&t->cp, c->name, c->runs ? fx_ready : fx_phase_is,
				       c->runs ? NULL : "Failed");
		k32_mutex_lock(&t->k->lock);
		k32_heap_fail_nth(&t->log_heap, 0);
		const struct klet_pod *kp = klet_pod_find_locked(t->k, "default", c->name);
		assert_non_null(kp);
		bool has_log = kp->log.buf != NULL, has_prev = kp->prev.buf != NULL;
		bool ever_started = kp->run_start_s != 0; /* set by every start */
		size_t held = rings_held_locked(t->k), heap = t->log_heap.stats.cur_bytes;
		k32_mutex_unlock(&t->k->lock);
		assert_int_equal(heap, held); /* a ring taken before a fault went back */
		assert_int_equal(has_log, c->runs);
		assert_int_equal(has_prev, c->runs);
		assert_int_equal(ever_started, c->runs); /* a rejected pod is never started */
		struct k32_buf b;
		struct k32_err err;
		k32_buf_init(&b, k32_default_allocator(), 1 << 16, "logs");
		assert_int_equal(
		    klet_pod_logs(t->k, "default", c->name, false, -1, false, NULL, &b, &err),
		    K32_OK);
		if (c->runs) {
			assert_string_equal(fx_str(p, "status.phase"), "Running");
			assert_null(fx_str(p, "status.reason"));
			char want[64];
			snprintf(want, sizeof(want), "started default/%s\n", c->name);
			assert_string_equal(k32_buf_cstr(&b), want);
		} else {
			assert_string_equal(fx_str(p, "status.reason"), "UnexpectedAdmissionError");
			const char *m = fx_str(p, "status.message");
			assert_non_null(m);
			assert_non_null(strstr(m, "Pod was rejected: node node-a"));
			assert_non_null(strstr(m, "K32_KLET_LOG_RING_BYTES"));
			assert_non_null(strstr(m, "delete pods"));
			assert_string_equal(fx_str(fx_cs(p), "state.waiting.reason"),
					    "UnexpectedAdmissionError");
			assert_true(event_seen(&t->cp, c->name, "UnexpectedAdmissionError"));
			assert_int_equal(b.len, 0); /* no ring, no lines */
		}
		k32_buf_fini(&b);
		cJSON_Delete(p);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char target[128];
		snprintf(target, sizeof(target), "/api/v1/namespaces/default/pods/%s",
			 cases[i].name);
		int code;
		cJSON_Delete(fx_do(&t->cp, "DELETE", target, NULL, &code));
		assert_true(code == 200 || code == 202);
		assert_true(fx_gone_pred(&t->cp, cases[i].name));
		assert_true(slot_freed(t->k, cases[i].name));
	}
	/* the rings went back with their pods */
	k32_mutex_lock(&t->k->lock);
	size_t held = rings_held_locked(t->k), heap = t->log_heap.stats.cur_bytes;
	k32_mutex_unlock(&t->k->lock);
	assert_int_equal(heap, held);
}

static void test_config_errors(void **state)
{
	(void)state;
	static const struct klet_profile p = {.name = "host", .pod_pool_bytes = 1024};
	struct {
		struct klet_config c;
		const char *msg;
	} cases[] = {
	    {{.profile = &p, .api_port = 1}, "node_name is required"},
	    {{.node_name = "n", .api_port = 1}, "board profile is required"},
	    {{.node_name = "n", .profile = &p}, "api_port is required"},
	    {{.node_name = "n", .profile = &p, .api_port = 1, .api_tls = true}, "CA file"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct klet *k = NULL;
		struct k32_err err;
		assert_int_equal(klet_new(&cases[i].c, &k, &err), K32_ERR_INVALID_ARGS);
		assert_null(k);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	/* an unreachable API server fails klet_start cleanly */
	struct klet_config c = {
	    .node_name = "n", .profile = &p, .api_port = 1, .pod_http_off = true};
	struct klet *k;
	struct k32_err err;
	assert_int_equal(klet_new(&c, &k, &err), K32_OK);
	assert_int_not_equal(klet_start(k, &err), K32_OK);
	klet_free(k);
}

static void test_ring(void **state)
{
	(void)state;
	struct klet_ring r;
	assert_int_equal(klet_ring_init(&r, k32_default_allocator()), K32_OK);
	char line[64];
	/* many more lines than fit: the oldest go, the newest stay, all whole */
	for (uint64_t i = 1; i <= 1000; i++) {
		int n = snprintf(line, sizeof(line), "line %llu\n", (unsigned long long)i);
		klet_ring_append(&r, i, 0, line, (size_t)n);
	}
	assert_true(r.dropped > 0);
	assert_true(r.used <= K32_KLET_LOG_RING_BYTES);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "ring");
	uint64_t seq = 998;
	assert_int_equal(klet_ring_read(&r, -1, false, &seq, &b, NULL), K32_OK);
	assert_string_equal(k32_buf_cstr(&b), "line 999\nline 1000\n");
	assert_int_equal(seq, 1000);
	k32_buf_reset(&b);
	assert_int_equal(klet_ring_read(&r, 1, false, NULL, &b, NULL), K32_OK);
	assert_string_equal(k32_buf_cstr(&b), "line 1000\n");
	/* an over-long line is cut and marked */
	char big[K32_KLET_LOG_LINE_MAX * 2];
	memset(big, 'x', sizeof(big));
	klet_ring_append(&r, 1001, 0, big, sizeof(big));
	k32_buf_reset(&b);
	assert_int_equal(klet_ring_read(&r, 1, false, NULL, &b, NULL), K32_OK);
	assert_int_equal(b.len, K32_KLET_LOG_LINE_MAX + 1);
	assert_memory_equal(b.data + K32_KLET_LOG_LINE_MAX - 3, "...\n", 4);
	/* a capped output buffer fails cleanly */
	struct k32_buf small;
	k32_buf_init(&small, k32_default_allocator(), 8, "small");
	struct k32_err err;
	assert_int_equal(klet_ring_read(&r, -1, false, NULL, &small, &err), K32_ERR_NO_RESOURCES);
	k32_buf_fini(&small);
	k32_buf_fini(&b);
	klet_ring_fini(&r, k32_default_allocator());
	char ts[32];
	klet_fmt_time(0, ts, sizeof(ts));
	assert_string_equal(ts, "1970-01-01T00:00:00Z");
	klet_fmt_time(1709210096, ts, sizeof(ts));
	assert_string_equal(ts, "2024-02-29T12:34:56Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register),
	    cmocka_unit_test(test_node_status_heartbeat_only),
	    cmocka_unit_test(test_lease),
	    cmocka_unit_test(test_pod_runs),
	    cmocka_unit_test(test_crash_backoff),
	    cmocka_unit_test(test_restart_policy),
	    cmocka_unit_test(test_start_errors),
	    cmocka_unit_test(test_delete),
	    cmocka_unit_test(test_pod_http),
	    cmocka_unit_test(test_pod_http_routing),
	    cmocka_unit_test(test_log_follow),
	    cmocka_unit_test(test_pending),
	    cmocka_unit_test(test_log_ring_alloc),
	};
	const struct CMUnitTest plain[] = {
	    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_ring),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	return rc | cmocka_run_group_tests(plain, NULL, NULL);
}
