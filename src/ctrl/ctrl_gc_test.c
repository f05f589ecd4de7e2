/*
 * ctrl_gc_test.c - the garbage collector and the namespace controller work from change
 * events: with the controller task and its informers running against an in-process API
 * server, a deleted owner's dependent is collected and a Terminating namespace emptied and
 * removed without a walk of every kind (no list of a whole kind reaches the API), and the
 * walk comes back on the periodic resync. The controllers' clock is fake (moved by the test);
 * the waits below only give the task time to run, each bounded, the condition is the
 * assertion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "platform/k32_platform.h"
#include "store/store.h"

/* A client that counts the requests the controllers make, by kind of target. */
struct count_kc {
	struct kclient base;
	struct kclient *inner;
	atomic_uint walk_lists; /* GET of a whole kind across namespaces (/api/v1/configmaps) */
	atomic_uint ns_reads;	/* GET /api/v1/namespaces/NAME */
};

static bool path_is(const char *target, const char *path)
{
	size_t n = strlen(path);
	return !strncmp(target, path, n) && (target[n] == 0 || target[n] == '?');
}

static k32_status_t count_request(struct kclient *kc, const char *method, const char *target,
				  const char *ctype, const void *body, size_t len, int *out_code,
				  struct k32_buf *out, struct k32_err *err)
{
	struct count_kc *c = (struct count_kc *)kc;
	if (!strcmp(method, "GET")) {
		/* the kinds without an informer: a walk lists them through the API */
		if (path_is(target, "/api/v1/configmaps") || path_is(target, "/api/v1/secrets"))
			c->walk_lists++;
		if (!strncmp(target, "/api/v1/namespaces/", 19) && !strchr(target + 19, '/'))
			c->ns_reads++;
	}
	return kclient_do(c->inner, method, target, ctype, body, len, out_code, out, err);
}

static k32_status_t count_watch(struct kclient *kc, const char *target, kclient_line_fn fn,
				void *ctx, struct k32_err *err)
{
	return kclient_watch(((struct count_kc *)kc)->inner, target, fn, ctx, err);
}

static void count_free(struct kclient *kc)
{
	(void)kc;
}

static const struct kclient_ops count_ops = {count_request, count_watch, count_free, "count"};

struct fx {
	struct store *store;
	struct api_server *api;
	struct kclient *inner;
	struct count_kc kc;
	struct ctrl *ctrl;
	struct k32_buf out;
	_Atomic uint64_t now_us; /* the controllers' clock */
};

static uint64_t fx_now(void *ctx)
{
	return atomic_load(&((struct fx *)ctx)->now_us);
}

static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct k32_err err;
	k32_log_set_stderr(false);
	struct store_config sc = {.data_dir = NULL};
	assert_int_equal(store_open(&sc, &fx->store, &err), K32_OK);
	struct api_config ac = {.store = fx->store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &fx->api, &err), K32_OK);
	k32_buf_init(&fx->out, k32_default_allocator(), 1 << 20, "test response");
	assert_int_equal(kclient_inproc_new(fx->api, NULL, &fx->inner, &err), K32_OK);
	fx->kc.base.ops = &count_ops;
	fx->kc.inner = fx->inner;
	atomic_store(&fx->now_us, 1000000);
	/* the GC and the namespace controller only; the resync an hour away on the fake clock */
	struct ctrl_config cc = {.enable = CTRL_GC | CTRL_NAMESPACE,
				 .resync_s = 3600,
				 .now_us = fx_now,
				 .clock_ctx = fx};
	assert_int_equal(ctrl_start(&cc, &fx->kc.base, &fx->ctrl, &err), K32_OK);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	ctrl_stop(fx->ctrl);
	kclient_free(fx->inner);
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	free(fx);
	return 0;
}

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
	return code;
}

/* Polls cond for up to 10 s of real time (the task's own waits are up to the recheck). */
static bool eventually(bool (*cond)(struct fx *fx, const void *arg), struct fx *fx, const void *arg)
{
	uint64_t deadline = k32_now_us() + 10 * 1000000ull;
	while (k32_now_us() < deadline) {
		if (cond(fx, arg))
			return true;
		k32_plat()->sleep_us(5000);
	}
	return cond(fx, arg);
}

static bool synced(struct fx *fx, const void *arg)
{
	(void)arg;
	/* the first passes finished their walks */
	k32_mutex_lock(&fx->ctrl->lock);
	bool all = fx->ctrl->gc_walked[0] && fx->ctrl->gc_walked[1];
	k32_mutex_unlock(&fx->ctrl->lock);
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &fx->ctrl->inf[i];
		if (!inf->task)
			continue;
		k32_mutex_lock(&inf->lock);
		all &= inf->synced;
		k32_mutex_unlock(&inf->lock);
	}
	return all;
}

static bool gone(struct fx *fx, const void *path)
{
	return req(fx, "GET", path, NULL) == 404;
}

/* The GC found an object with its owners gone and waits to confirm it. */
static bool suspected(struct fx *fx, const void *arg)
{
	(void)arg;
	bool any = false;
	k32_mutex_lock(&fx->ctrl->run_lock); /* the passes change the table under it */
	for (unsigned i = 0; i < K32_CTRL_BATCH; i++)
		any |= fx->ctrl->gc_suspects[i].since_us != 0;
	k32_mutex_unlock(&fx->ctrl->run_lock);
	return any;
}

static bool walked_again(struct fx *fx, const void *before)
{
	return fx->kc.walk_lists > *(const unsigned *)before;
}

static void advance_s(struct fx *fx, uint64_t s)
{
	atomic_fetch_add(&fx->now_us, s * 1000000ull);
	ctrl_kick(fx->ctrl, 0); /* wakes the task to read the new time */
}

/* A ConfigMap whose controller (a ReplicaSet: the API cascades only its pods) is deleted is
 * collected from the deletion event, K32_CTRL_GC_CONFIRM_S later, with no walk; another
 * ConfigMap is left alone. */
static void test_gc_from_events(void **state)
{
	struct fx *fx = *state;
	assert_true(eventually(synced, fx, NULL));
	unsigned walks = fx->kc.walk_lists;
	assert_int_equal(req(fx, "POST", "/apis/apps/v1/namespaces/default/replicasets",
			     "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{"
			     "\"name\":\"web\"},\"spec\":{\"replicas\":0,\"selector\":{"
			     "\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{"
			     "\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":"
			     "\"main\",\"image\":\"hello.wasm\"}]}}}}"),
			 201);
	cJSON *rs = cJSON_Parse(k32_buf_cstr(&fx->out));
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dep\","
		 "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		 "\"name\":\"web\",\"uid\":\"%s\",\"controller\":true}]}}",
		 ctrl_jstr(rs, "metadata.uid"));
	cJSON_Delete(rs);
	assert_int_equal(req(fx, "POST", "/api/v1/namespaces/default/configmaps", body), 201);
	assert_int_equal(req(fx, "POST", "/api/v1/namespaces/default/configmaps",
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
			     "\"name\":\"keep\"}}"),
			 201);
	assert_int_equal(
	    req(fx, "DELETE", "/apis/apps/v1/namespaces/default/replicasets/web", NULL), 200);
	/* found from the event, collected once confirmed */
	assert_true(eventually(suspected, fx, NULL));
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/dep", NULL), 200);
	advance_s(fx, K32_CTRL_GC_CONFIRM_S);
	assert_true(eventually(gone, fx, "/api/v1/namespaces/default/configmaps/dep"));
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/default/configmaps/keep", NULL), 200);
	assert_int_equal(fx->kc.walk_lists, walks); /* no walk of the ConfigMaps */
	/* the periodic resync walks */
	advance_s(fx, 3600);
	assert_true(eventually(walked_again, fx, &walks));
}

/* A Terminating namespace is emptied and removed from its event (read by name), with no
 * walk of the kinds it holds. */
static void test_namespace_from_events(void **state)
{
	struct fx *fx = *state;
	assert_true(eventually(synced, fx, NULL));
	unsigned walks = fx->kc.walk_lists, reads = fx->kc.ns_reads;
	assert_int_equal(req(fx, "POST", "/api/v1/namespaces",
			     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
			     "\"name\":\"t\",\"finalizers\":[\"kubernetes\"]}}"),
			 201);
	assert_int_equal(req(fx, "POST", "/api/v1/namespaces/t/configmaps",
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
			     "\"name\":\"c\"}}"),
			 201);
	assert_int_equal(req(fx, "DELETE", "/api/v1/namespaces/t", NULL), 200);
	assert_true(eventually(gone, fx, "/api/v1/namespaces/t"));
	assert_int_equal(req(fx, "GET", "/api/v1/namespaces/t/configmaps/c", NULL), 404);
	assert_true(fx->kc.ns_reads > reads); /* the event's namespace, read by name */
	assert_int_equal(fx->kc.walk_lists, walks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_gc_from_events, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_namespace_from_events, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
