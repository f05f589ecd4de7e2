/*
 * kobj_pod_wasm_test.c - end-to-end: a real Wasm pod (testdata/kobj_pod.wat, run by the
 * kube32 Wasm runtime) calls the kx_* imports linked from kobj_pod_hostfn_table. The pod
 * echoes messages a native service sends it, serves through its port event loop, passes
 * handles, and probes bad pointers, which come back as statuses without trapping. Built only
 * when the Wasm runtime (src/wasm) is part of the build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/kobj.h"
#include "base/k32_alloc.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

static struct kobj_owner pod, svc;

/* The test's kobj instance (kube32-sim makes one per board). */
static struct kobj_node *KN;

static k32_status_t test_node_new(void)
{
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	if (KN && kobj_node_free(k32_default_allocator(), KN) != K32_OK)
		return K32_ERR_BAD_STATE; /* an earlier test leaked an object */
	KN = NULL;
	return kobj_node_new(k32_default_allocator(), "test-node", &lim, &KN, NULL);
}
static struct wrt_module *mod;
static struct wrt_instance *inst;
static struct k32_err err;
static uint8_t *bytes; /* the module keeps pointers into it until wrt_module_free */
static size_t len;

static int setup(void **state)
{
	(void)state;
	const struct k32_allocator *alloc = k32_default_allocator();
	if (test_node_new() != K32_OK)
		return -1;
	kobj_owner_init(&pod, KN, "pod echo", 0);
	kobj_owner_init(&svc, KN, "kubelet", 0);
	if (k32_plat()->file_read_all(KOBJ_POD_WASM, alloc, 1 << 20, &bytes, &len, &err) !=
	    K32_OK) {
		fprintf(stderr, "cannot read %s: %s\n", KOBJ_POD_WASM, err.msg);
		return -1;
	}
	k32_status_t st = wrt_module_load(alloc, bytes, len, NULL, &mod, &err);
	if (st != K32_OK) {
		fprintf(stderr, "load: %s\n", err.msg);
		return -1;
	}
	struct wrt_linker lk;
	struct wrt_limits lim;
	wrt_linker_init(&lk);
	wrt_limits_default(&lim);
	if (wrt_linker_add_host(&lk, kobj_pod_hostfn_table, KOBJ_POD_HOSTFN_COUNT, &err) !=
		K32_OK ||
	    wrt_instance_new(mod, &lk, &lim, alloc, &pod, &inst, &err) != K32_OK) {
		fprintf(stderr, "instantiate: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wrt_instance_free(inst);
	wrt_module_free(mod);
	k32_free(k32_default_allocator(), bytes, len + 1);
	kobj_owner_fini(&pod);
	kobj_owner_fini(&svc);
	struct kobj_stats st;
	kobj_stats_get(KN, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		assert_int_equal(st.in_use[t], 0);
	assert_int_equal(st.messages + st.port_observers + st.port_user_packets, 0);
	return 0;
}

/* Calls export `name` with up to 3 i32 arguments; returns its i32 result (0 if none). */
static int32_t call(const char *name, unsigned nargs, uint32_t a0, uint32_t a1)
{
	uint32_t f, np, nr;
	const uint8_t *types;
	uint64_t args[3] = {a0, a1, 0}, res[1] = {0};
	assert_int_equal(wrt_export_func(inst, name, &f, &err), K32_OK);
	assert_int_equal(wrt_func_type(inst, f, &np, &nr, &types), K32_OK);
	assert_int_equal(np, nargs);
	k32_status_t st = wrt_invoke(inst, f, args, nargs, res, nr, &err);
	if (st != K32_OK)
		fail_msg("%s trapped: %s", name, err.msg);
	return (int32_t)(uint32_t)res[0];
}

/* Gives the pod one end of a fresh channel; returns the service's end. */
static kobj_handle_t channel_to_pod(kobj_handle_t *pod_end)
{
	kobj_handle_t s, p;
	assert_int_equal(kobj_channel_create(&svc, 0, &s, &p), K32_OK);
	assert_int_equal(kobj_handle_transfer(&svc, p, &pod, pod_end), K32_OK);
	return s;
}

static void test_echo(void **state)
{
	(void)state;
	kobj_handle_t pe, s = channel_to_pod(&pe);
	uint8_t got[64];
	uint32_t n, nh;
	assert_int_equal(call("echo", 1, pe, 0), K32_ERR_SHOULD_WAIT);
	assert_int_equal(kobj_channel_write(&svc, s, 0, "ping", 4, NULL, 0), K32_OK);
	assert_int_equal(call("echo", 1, pe, 0), K32_OK);
	assert_int_equal(kobj_channel_read(&svc, s, 0, got, NULL, sizeof(got), 0, &n, &nh), K32_OK);
	assert_int_equal(n, 7);
	assert_memory_equal(got, "re:ping", 7);
	/* The pod's event loop: wait_async on its port, port_wait, read, write. */
	kobj_handle_t port;
	assert_int_equal(kobj_port_create(&pod, 0, &port), K32_OK);
	assert_int_equal(kobj_channel_write(&svc, s, 0, "loop", 4, NULL, 0), K32_OK);
	assert_int_equal(call("serve_once", 2, pe, port), K32_OK);
	assert_int_equal(kobj_channel_read(&svc, s, 0, got, NULL, sizeof(got), 0, &n, &nh), K32_OK);
	assert_memory_equal(got, "loop", 4);
	/* The service hangs up: the pod sees PEER_CLOSED. */
	kobj_handle_close(&svc, s);
	assert_int_equal(call("echo", 1, pe, 0), K32_ERR_PEER_CLOSED);
}

static void test_bad_input_from_pod(void **state)
{
	(void)state;
	kobj_handle_t pe, s = channel_to_pod(&pe);
	uint32_t before = kobj_owner_handle_count(&pod);
	assert_int_equal(call("bad_write", 1, pe, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(call("bad_handles", 1, pe, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(call("bad_out", 0, 0, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_owner_handle_count(&pod), before);
	/* A handle of the service's table means nothing in the pod's. */
	assert_int_equal(call("echo", 1, s, 0), K32_ERR_BAD_HANDLE);
	assert_int_equal(call("signal", 2, 0x12345678u, 0), K32_ERR_BAD_HANDLE);
	kobj_handle_close(&svc, s);
}

static void test_handles_cross_the_boundary(void **state)
{
	(void)state;
	kobj_handle_t pe, s = channel_to_pod(&pe), got;
	uint32_t n, nh;
	int32_t ev = call("make_event", 0, 0, 0);
	assert_true(ev > 0);
	assert_int_equal(call("signal", 2, (uint32_t)ev, KOBJ_SIG_USER(1)), K32_OK);
	assert_int_equal(call("send_handle", 2, pe, (uint32_t)ev), K32_OK);
	/* The pod lost it; the service got a live event with the pod's signal on it. */
	assert_int_equal(call("signal", 2, (uint32_t)ev, 0), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_channel_read(&svc, s, 0, NULL, &got, 0, 1, &n, &nh), K32_OK);
	assert_int_equal(nh, 1);
	assert_int_equal(kobj_object_wait_one(&svc, got, KOBJ_SIG_USER(1), 0, NULL), K32_OK);
	kobj_handle_close(&svc, got);
	kobj_handle_close(&svc, s);
}

/* A second instance of the same module, bound to another pod's table. */
static struct wrt_instance *instance_for(struct kobj_owner *owner)
{
	struct wrt_linker lk;
	struct wrt_limits lim;
	struct wrt_instance *i2 = NULL;
	wrt_linker_init(&lk);
	wrt_limits_default(&lim);
	assert_int_equal(
	    wrt_linker_add_host(&lk, kobj_pod_hostfn_table, KOBJ_POD_HOSTFN_COUNT, &err), K32_OK);
	assert_int_equal(
	    wrt_instance_new(mod, &lk, &lim, k32_default_allocator(), owner, &i2, &err), K32_OK);
	return i2;
}

/*
 * Per-pod quotas through the runtime: a pod creating ports without end stops at its share of
 * the port pool, and a pod flooding a channel with large messages stops at its share of the
 * message chunks, each with NO_RESOURCES as the import's result (no trap); another pod and
 * the native service keep creating and writing.
 */
static void test_pod_quotas(void **state)
{
	(void)state;
	struct kobj_owner other;
	kobj_owner_init(&other, KN, "pod other", 0);
	struct wrt_instance *inst2 = instance_for(&other);
	const int32_t share = K32_KOBJ_MAX_PORTS * K32_KOBJ_OWNER_POOL_PCT / 100;
	int32_t made = call("make_ports", 0, 0, 0);
	assert_int_equal(made, share);
	assert_int_equal(call("status44", 0, 0, 0), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&pod), "K32_KOBJ_OWNER_POOL_PCT"));
	/* The other pod (same module, its own table) and the service still create ports. */
	struct wrt_instance *keep = inst;
	inst = inst2;
	int32_t port = call("make_port", 0, 0, 0);
	inst = keep;
	assert_false(port >= -64 && port <= 0); /* a handle, not a status */
	kobj_handle_t p;
	assert_int_equal(kobj_port_create(&svc, 0, &p), K32_OK);
	kobj_handle_close(&svc, p);

	/* Buffered memory: 60000-byte messages (117 chunks past the inline part each), flooded
	 * into channel after channel (each until its queue is full: SHOULD_WAIT) until the pod's
	 * chunk share is spent (NO_RESOURCES). */
	const uint32_t len = 60000;
	const int32_t per =
	    (int32_t)((len - K32_KOBJ_MSG_INLINE_BYTES + K32_KOBJ_MSG_CHUNK_BYTES - 1) /
		      K32_KOBJ_MSG_CHUNK_BYTES);
	kobj_handle_t sv[6], pe[6];
	int32_t sent = 0, st = K32_ERR_SHOULD_WAIT;
	for (int i = 0; i < 6; i++)
		sv[i] = channel_to_pod(&pe[i]);
	for (int i = 0; i < 6 && st == K32_ERR_SHOULD_WAIT; i++) {
		sent += call("flood", 2, pe[i], len);
		st = call("status44", 0, 0, 0);
	}
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_int_equal(sent, K32_KOBJ_OWNER_MAX_MSG_CHUNKS / per);
	assert_non_null(strstr(kobj_owner_last_error(&pod), "K32_KOBJ_OWNER_MAX_MSG_CHUNKS"));
	/* The other pod floods its own channel: its share is its own. */
	kobj_handle_t s2, p2, pe2;
	assert_int_equal(kobj_channel_create(&svc, 0, &s2, &p2), K32_OK);
	assert_int_equal(kobj_handle_transfer(&svc, p2, &other, &pe2), K32_OK);
	inst = inst2;
	assert_true(call("flood", 2, pe2, len) > 0);
	inst = keep;
	for (int i = 0; i < 6; i++)
		kobj_handle_close(&svc, sv[i]);
	kobj_handle_close(&svc, s2);
	wrt_instance_free(inst2);
	kobj_owner_fini(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_echo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_input_from_pod, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_handles_cross_the_boundary, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pod_quotas, setup, teardown),
	};
	int rc = cmocka_run_group_tests_name("kobj_pod_wasm", tests, NULL, NULL);
	kobj_node_free(k32_default_allocator(), KN);
	return rc;
}
