/*
 * kobj_pod_test.c - tests of the kx_* host bindings, called directly through their
 * struct k32_hostfn_def with a fake struct k32_hostcall whose "linear memory" is a byte
 * array. Checks the pointer/length validation (every pointer argument, overflow included),
 * that handles come from the pod's own table, the memory layouts of sdk/k32.h, and that
 * bad input gets a status, never a crash or a trap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/kobj.h"
#include "base/k32_alloc.h"
#include "kobj/kobj_int.h"

#define MEM_LEN 131072u
static uint8_t lm[MEM_LEN]; /* the pod's linear memory */
static struct kobj_owner pod, pod2, native;

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
static struct k32_err trap;

static const struct k32_hostfn_def *find(const char *name)
{
	for (size_t i = 0; i < KOBJ_POD_HOSTFN_COUNT; i++)
		if (!strcmp(kobj_pod_hostfn_table[i].name, name))
			return &kobj_pod_hostfn_table[i];
	fail_msg("no host function %s", name);
	return NULL;
}

static size_t nparams(const char *sig)
{
	size_t n = 0;
	while (sig[n] && sig[n] != ':')
		n++;
	return n;
}

/* Calls kx_<name> as pod `who` with the given argument slots; returns the i32 result. */
static int32_t kx_as(struct kobj_owner *who, const char *name, int nargs, ...)
{
	const struct k32_hostfn_def *d = find(name);
	uint64_t args[8] = {0}, res[1] = {0};
	va_list ap;
	assert_int_equal(nparams(d->sig), nargs);
	va_start(ap, nargs);
	for (int i = 0; i < nargs; i++)
		args[i] = va_arg(ap, uint64_t);
	va_end(ap);
	struct k32_hostcall call = {.ctx = d->ctx,
				    .instance_user = who,
				    .mem = lm,
				    .mem_len = MEM_LEN,
				    .args = args,
				    .results = res,
				    .err = &trap};
	assert_int_equal(d->fn(&call), K32_OK);
	return (int32_t)(uint32_t)res[0];
}

#define KX(name, ...)					 kx_as(&pod, "kx_" #name, PP_NARG(__VA_ARGS__), __VA_ARGS__)
#define PP_NARG(...)					 PP_NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define U(x)						 ((uint64_t)(x))

static uint32_t rd32(uint32_t addr)
{
	uint32_t v;
	memcpy(&v, lm + addr, 4);
	return v;
}

static void wr32(uint32_t addr, uint32_t v)
{
	memcpy(lm + addr, &v, 4);
}

static int setup(void **state)
{
	(void)state;
	if (test_node_new() != K32_OK)
		return -1;
	kobj_owner_init(&pod, KN, "pod p", 0);
	kobj_owner_init(&pod2, KN, "pod q", 0);
	kobj_owner_init(&native, KN, "kubelet", 0);
	memset(lm, 0, sizeof(lm));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kobj_owner_fini(&pod);
	kobj_owner_fini(&pod2);
	kobj_owner_fini(&native);
	struct kobj_stats st;
	kobj_stats_get(KN, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		assert_int_equal(st.in_use[t], 0);
	assert_int_equal(st.messages + st.chunks + st.port_observers + st.port_user_packets, 0);
	return 0;
}

static void test_table(void **state)
{
	(void)state;
	struct k32_hostfn_def defs[KOBJ_POD_HOSTFN_COUNT + 4];
	struct kobj_pod_env env = {0};
	assert_int_equal(kobj_pod_hostfns(&env, defs, 3), 3);
	assert_int_equal(kobj_pod_hostfns(&env, defs, sizeof(defs) / sizeof(defs[0])),
			 KOBJ_POD_HOSTFN_COUNT);
	for (size_t i = 0; i < KOBJ_POD_HOSTFN_COUNT; i++) {
		assert_string_equal(defs[i].module, "kube32");
		assert_memory_equal(defs[i].name, "kx_", 3);
		assert_ptr_equal(defs[i].ctx, &env);
		assert_non_null(strchr(defs[i].sig, ':'));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(defs[i].name, defs[j].name);
	}
}

static void test_channel_roundtrip(void **state)
{
	(void)state;
	/* Pod memory layout: 0: h0, 4: h1, 100: message, 1000: read buffer, 2000: sizes. */
	assert_int_equal(KX(channel_create, U(0), U(0), U(4)), K32_OK);
	uint32_t h0 = rd32(0), h1 = rd32(4);
	memcpy(lm + 100, "hello, node", 11);
	assert_int_equal(KX(channel_write, U(h0), U(0), U(100), U(11), U(0), U(0)), K32_OK);
	assert_int_equal(
	    KX(channel_read, U(h1), U(0), U(1000), U(1500), U(4), U(0), U(2000), U(2004)),
	    K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(rd32(2000), 11);
	assert_int_equal(
	    KX(channel_read, U(h1), U(0), U(1000), U(1500), U(64), U(0), U(2000), U(2004)), K32_OK);
	assert_memory_equal(lm + 1000, "hello, node", 11);
	assert_int_equal(rd32(2000), 11);
	assert_int_equal(rd32(2004), 0);
	/* Handle transfer pod -> native: the pod loses it, the kubelet gets a live one. */
	assert_int_equal(KX(event_create, U(0), U(8)), K32_OK);
	uint32_t ev = rd32(8);
	wr32(12, ev);
	kobj_handle_t n0, n1, got;
	uint32_t nb, nh;
	assert_int_equal(kobj_channel_create(&native, 0, &n0, &n1), K32_OK);
	struct kobj_object *o = NULL;
	assert_int_equal(kobj_lookup(&native, n1, 0, 0, &o), K32_OK);
	kobj_handle_detach(&native, n1);
	assert_int_equal(kobj_handle_install(&pod, o, KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO, &n1),
			 K32_OK);
	assert_int_equal(KX(channel_write, U(n1), U(0), U(100), U(2), U(12), U(1)), K32_OK);
	assert_int_equal(KX(handle_close, U(ev)), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_channel_read(&native, n0, 0, lm + 3000, &got, 64, 1, &nb, &nh),
			 K32_OK);
	assert_int_equal(nh, 1);
	/* ...and native -> pod. */
	assert_int_equal(kobj_channel_write(&native, n0, 0, "x", 1, &got, 1), K32_OK);
	assert_int_equal(
	    KX(channel_read, U(n1), U(0), U(1000), U(1100), U(64), U(1), U(2000), U(2004)), K32_OK);
	assert_int_equal(rd32(2004), 1);
	uint32_t pod_ev = rd32(1100);
	assert_int_equal(KX(object_signal, U(pod_ev), U(0), U(KOBJ_SIG_SIGNALED)), K32_OK);
	/* Limits. */
	assert_int_equal(
	    KX(channel_write, U(h0), U(0), U(0), U(K32_KOBJ_CHANNEL_MAX_MSG_BYTES + 1), U(0), U(0)),
	    K32_ERR_OUT_OF_RANGE);
	assert_int_equal(KX(channel_write, U(h0), U(0), U(MEM_LEN - 10), U(11), U(0), U(0)),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(KX(channel_write, U(h0), U(0), U(0), U(1), U(0), U(9)),
			 K32_ERR_OUT_OF_RANGE);
	/* channel_call: reply pre-queued with the same txid. */
	memcpy(lm + 200, "\x05\0\0\0req", 7);
	memcpy(lm + 300, "\x05\0\0\0rep!", 8);
	assert_int_equal(KX(channel_write, U(h1), U(0), U(300), U(8), U(0), U(0)), K32_OK);
	uint32_t args[8] = {200, 0, 400, 0, 7, 0, 64, 0};
	memcpy(lm + 500, args, sizeof(args));
	assert_int_equal(
	    KX(channel_call, U(h0), U(0), U(KOBJ_TIME_INFINITE), U(500), U(2000), U(2004)), K32_OK);
	assert_memory_equal(lm + 400, "\x05\0\0\0rep!", 8);
	assert_int_equal(rd32(2000), 8);
	args[2] = MEM_LEN - 4; /* reply buffer runs past memory */
	memcpy(lm + 500, args, sizeof(args));
	assert_int_equal(KX(channel_call, U(h0), U(0), U(0), U(500), U(0), U(0)),
			 K32_ERR_INVALID_ARGS);
}

/* Every pointer argument of every function, pointed past the end or wrapping. */
static void test_bad_pointers(void **state)
{
	(void)state;
	assert_int_equal(KX(channel_create, U(0), U(0), U(4)), K32_OK);
	assert_int_equal(KX(event_create, U(0), U(8)), K32_OK);
	assert_int_equal(KX(port_create, U(0), U(12)), K32_OK);
	assert_int_equal(KX(vmo_create, U(64), U(0), U(16)), K32_OK);
	assert_int_equal(KX(fifo_create, U(4), U(4), U(0), U(20), U(24)), K32_OK);
	assert_int_equal(KX(socket_create, U(0), U(0), U(28), U(32)), K32_OK);
	uint32_t ch = rd32(0), ev = rd32(8), port = rd32(12), vmo = rd32(16), ff = rd32(20),
		 so = rd32(28);
	uint32_t before = kobj_owner_handle_count(&pod);
	const uint64_t bad[] = {MEM_LEN - 2, MEM_LEN, 0xfffffffeu, 0xffffffffffffull};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t b = bad[i];
		const int32_t E = K32_ERR_INVALID_ARGS;
		assert_int_equal(KX(handle_duplicate, U(ev), U(KOBJ_RIGHT_SAME_RIGHTS), b), E);
		assert_int_equal(KX(object_wait_one, U(ev), U(1), U(0), b), E);
		assert_int_equal(KX(object_wait_many, b, U(2), U(0)), E);
		assert_int_equal(KX(object_get_info, U(ev), b), E);
		assert_int_equal(KX(channel_create, U(0), b, U(4)), E);
		assert_int_equal(KX(channel_create, U(0), U(0), b), E);
		assert_int_equal(KX(channel_write, U(ch), U(0), b, U(4), U(0), U(0)), E);
		assert_int_equal(KX(channel_write, U(ch), U(0), U(0), U(4), b, U(1)), E);
		assert_int_equal(KX(channel_read, U(ch), U(0), b, U(0), U(4), U(0), U(0), U(0)), E);
		assert_int_equal(KX(channel_read, U(ch), U(0), U(0), b, U(4), U(1), U(0), U(0)), E);
		assert_int_equal(KX(channel_read, U(ch), U(0), U(0), U(0), U(4), U(0), b, U(0)), E);
		assert_int_equal(KX(channel_read, U(ch), U(0), U(0), U(0), U(4), U(0), U(0), b), E);
		assert_int_equal(KX(channel_call, U(ch), U(0), U(0), b, U(0), U(0)), E);
		assert_int_equal(KX(socket_create, U(0), U(0), b, U(4)), E);
		assert_int_equal(KX(socket_write, U(so), U(0), b, U(4), U(0)), E);
		assert_int_equal(KX(socket_read, U(so), U(0), U(0), U(4), b), E);
		assert_int_equal(KX(event_create, U(0), b), E);
		assert_int_equal(KX(eventpair_create, U(0), U(0), b), E);
		assert_int_equal(KX(port_create, U(0), b), E);
		assert_int_equal(KX(port_queue, U(port), b), E);
		assert_int_equal(KX(port_wait, U(port), U(0), b), E);
		assert_int_equal(KX(fifo_create, U(4), U(4), U(0), U(0), b), E);
		assert_int_equal(KX(fifo_write, U(ff), U(4), b, U(1), U(0)), E);
		assert_int_equal(KX(fifo_read, U(ff), U(4), U(0), U(1), b), E);
		assert_int_equal(KX(timer_create, U(0), U(0), b), E);
		assert_int_equal(KX(vmo_create, U(64), U(0), b), E);
		assert_int_equal(KX(vmo_read, U(vmo), b, U(0), U(4)), E);
		assert_int_equal(KX(vmo_write, U(vmo), b, U(0), U(4)), E);
		assert_int_equal(KX(vmo_get_size, U(vmo), b), E);
		assert_int_equal(KX(handle_replace, U(ev), U(KOBJ_RIGHT_SAME_RIGHTS), b), E);
		assert_int_equal(KX(object_get_property, U(ev), U(KOBJ_PROP_NAME), b, U(32)), E);
		assert_int_equal(KX(object_set_property, U(ev), U(KOBJ_PROP_NAME), b, U(4)), E);
		assert_int_equal(
		    KX(object_set_property, U(so), U(KOBJ_PROP_SOCKET_RX_THRESHOLD), b, U(4)), E);
	}
	/* Properties through the binding: a name set from pod memory reads back; a threshold
	 * turns READ_THRESHOLD on; a short name buffer is BUFFER_TOO_SMALL. */
	memcpy(lm + 600, "sensor.ready", 13);
	assert_int_equal(KX(object_set_property, U(ev), U(KOBJ_PROP_NAME), U(600), U(12)), K32_OK);
	memset(lm + 700, 0x55, 32);
	assert_int_equal(KX(object_get_property, U(ev), U(KOBJ_PROP_NAME), U(700), U(32)), K32_OK);
	assert_string_equal((const char *)lm + 700, "sensor.ready");
	assert_int_equal(KX(object_get_property, U(ev), U(KOBJ_PROP_NAME), U(700), U(31)),
			 K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(KX(object_set_property, U(ev), U(KOBJ_PROP_NAME), U(0), U(0)), K32_OK);
	wr32(740, 1);
	assert_int_equal(
	    KX(object_set_property, U(so), U(KOBJ_PROP_SOCKET_RX_THRESHOLD), U(740), U(4)), K32_OK);
	assert_int_equal(KX(socket_write, U(rd32(32)), U(0), U(600), U(4), U(0)), K32_OK);
	assert_int_equal(KX(object_get_info, U(so), U(760)), K32_OK);
	assert_true(rd32(768) & KOBJ_SIG_SOCKET_READ_THRESHOLD);
	assert_int_equal(rd32(780), K32_KOBJ_SOCKET_DEFAULT_CAP); /* capacity */
	/* Huge lengths that would wrap a 32-bit address computation. */
	assert_int_equal(KX(fifo_write, U(ff), U(0x10000), U(16), U(0x10000), U(0)),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(KX(object_wait_many, U(0), U(0xffffffffu), U(0)), K32_ERR_OUT_OF_RANGE);
	/* No handle leaked or lost by any of that. */
	assert_int_equal(kobj_owner_handle_count(&pod), before);
	assert_int_equal(KX(handle_close, U(ev)), K32_OK);
}

static void test_foreign_handles(void **state)
{
	(void)state;
	assert_int_equal(KX(event_create, U(0), U(0)), K32_OK);
	uint32_t ev = rd32(0);
	/* The same number in another pod's table means nothing there. */
	assert_int_equal(kx_as(&pod2, "kx_object_signal", 3, U(ev), U(0), U(0)),
			 K32_ERR_BAD_HANDLE);
	assert_int_equal(kx_as(&pod2, "kx_handle_close", 1, U(ev)), K32_ERR_BAD_HANDLE);
	assert_int_equal(KX(object_signal, U(ev), U(0), U(KOBJ_SIG_USER(1))), K32_OK);
	assert_int_equal(KX(handle_close, U(0xdeadbeef)), K32_ERR_BAD_HANDLE);
	/* Wrong type through the bindings. */
	assert_int_equal(KX(channel_write, U(ev), U(0), U(0), U(0), U(0), U(0)),
			 K32_ERR_WRONG_TYPE);
}

static void test_waits_ports_info(void **state)
{
	(void)state;
	assert_int_equal(KX(event_create, U(0), U(0)), K32_OK);
	assert_int_equal(KX(event_create, U(0), U(4)), K32_OK);
	assert_int_equal(KX(port_create, U(0), U(8)), K32_OK);
	uint32_t e0 = rd32(0), e1 = rd32(4), port = rd32(8);
	assert_int_equal(KX(object_wait_one, U(e0), U(KOBJ_SIG_SIGNALED), U(0), U(100)),
			 K32_ERR_TIMED_OUT);
	assert_int_equal(KX(object_signal, U(e1), U(0), U(KOBJ_SIG_SIGNALED)), K32_OK);
	assert_int_equal(KX(object_wait_one, U(e1), U(KOBJ_SIG_SIGNALED), U(0), U(100)), K32_OK);
	assert_int_equal(rd32(100), KOBJ_SIG_SIGNALED);
	assert_int_equal(KX(object_wait_one, U(e1), U(KOBJ_SIG_SIGNALED), U(0), U(0)), K32_OK);
	/* wait_many: 12-byte items. */
	uint32_t items[6] = {e0, KOBJ_SIG_SIGNALED, 0, e1, KOBJ_SIG_SIGNALED, 0};
	memcpy(lm + 200, items, sizeof(items));
	assert_int_equal(KX(object_wait_many, U(200), U(2), U(0)), K32_OK);
	assert_int_equal(rd32(200 + 8), 0);
	assert_int_equal(rd32(200 + 20), KOBJ_SIG_SIGNALED);
	assert_int_equal(KX(object_wait_many, U(200), U(K32_KOBJ_WAIT_MANY_MAX + 1), U(0)),
			 K32_ERR_OUT_OF_RANGE);
	/* wait_async + port_wait: 48-byte packet at 300. */
	assert_int_equal(
	    KX(object_wait_async, U(e0), U(port), U(0x1122334455ull), U(KOBJ_SIG_SIGNALED), U(0)),
	    K32_OK);
	assert_int_equal(KX(port_wait, U(port), U(0), U(300)), K32_ERR_TIMED_OUT);
	assert_int_equal(KX(object_signal, U(e0), U(0), U(KOBJ_SIG_SIGNALED)), K32_OK);
	assert_int_equal(KX(port_wait, U(port), U(0), U(300)), K32_OK);
	uint64_t key;
	memcpy(&key, lm + 300, 8);
	assert_int_equal(key, 0x1122334455ull);
	assert_int_equal(rd32(308), KOBJ_PKT_TYPE_SIGNAL_ONE);
	assert_int_equal(rd32(316), KOBJ_SIG_SIGNALED); /* trigger */
	assert_int_equal(rd32(320), KOBJ_SIG_SIGNALED); /* observed */
	/* User packet round trip. */
	memset(lm + 400, 0, 48);
	memcpy(lm + 400, &(uint64_t){77}, 8);
	memcpy(lm + 416, "payload", 7);
	assert_int_equal(KX(port_queue, U(port), U(400)), K32_OK);
	assert_int_equal(KX(port_wait, U(port), U(0), U(500)), K32_OK);
	assert_memory_equal(lm + 516, "payload", 7);
	assert_int_equal(KX(port_cancel, U(port), U(e0), U(1)), K32_ERR_NOT_FOUND);
	/* get_info: 32 bytes. */
	assert_int_equal(KX(object_get_info, U(e0), U(600)), K32_OK);
	assert_int_equal(rd32(600), KOBJ_TYPE_EVENT);
	assert_int_equal(rd32(608), KOBJ_SIG_SIGNALED);
	assert_int_equal(rd32(612), 1);
	/* duplicate / replace / signal_peer through an event pair. */
	assert_int_equal(KX(eventpair_create, U(0), U(700), U(704)), K32_OK);
	assert_int_equal(KX(handle_duplicate, U(rd32(700)), U(KOBJ_RIGHT_SAME_RIGHTS), U(708)),
			 K32_OK);
	assert_int_equal(KX(handle_replace, U(rd32(708)), U(KOBJ_RIGHT_WAIT), U(712)), K32_OK);
	assert_int_equal(KX(object_signal_peer, U(rd32(700)), U(0), U(KOBJ_SIG_USER(2))), K32_OK);
	assert_int_equal(KX(object_wait_one, U(rd32(704)), U(KOBJ_SIG_USER(2)), U(0), U(0)),
			 K32_OK);
	assert_int_equal(KX(object_signal_peer, U(rd32(712)), U(0), U(1)), K32_ERR_ACCESS_DENIED);
	/* Monotonic clock and the two empty imports. */
	assert_true(KX(null8, U(1), U(2), U(3), U(4), U(5), U(6), U(7), U(8)) == 36);
}

static void test_socket_fifo_vmo_timer(void **state)
{
	(void)state;
	assert_int_equal(KX(socket_create, U(KOBJ_SOCKET_STREAM), U(256), U(0), U(4)), K32_OK);
	uint32_t s0 = rd32(0), s1 = rd32(4);
	memset(lm + 1000, 'a', 300);
	assert_int_equal(KX(socket_write, U(s0), U(0), U(1000), U(300), U(8)), K32_OK);
	assert_int_equal(rd32(8), 256); /* short write */
	assert_int_equal(KX(socket_read, U(s1), U(0), U(2000), U(300), U(8)), K32_OK);
	assert_int_equal(rd32(8), 256);
	assert_int_equal(KX(socket_shutdown, U(s0), U(KOBJ_SOCKET_SHUTDOWN_WRITE)), K32_OK);
	assert_int_equal(KX(socket_read, U(s1), U(0), U(2000), U(300), U(0)), K32_ERR_PEER_CLOSED);

	assert_int_equal(KX(fifo_create, U(8), U(8), U(0), U(12), U(16)), K32_OK);
	uint32_t f0 = rd32(12), f1 = rd32(16);
	for (uint32_t i = 0; i < 16; i++)
		wr32(3000 + i * 4, i);
	assert_int_equal(KX(fifo_write, U(f0), U(8), U(3000), U(8), U(20)), K32_OK);
	assert_int_equal(rd32(20), 8);
	assert_int_equal(KX(fifo_read, U(f1), U(8), U(4000), U(8), U(20)), K32_OK);
	assert_memory_equal(lm + 4000, lm + 3000, 64);

	assert_int_equal(KX(vmo_create, U(4096), U(0), U(24)), K32_OK);
	uint32_t v = rd32(24);
	assert_int_equal(KX(vmo_write, U(v), U(1000), U(4000), U(96)), K32_OK);
	assert_int_equal(KX(vmo_write, U(v), U(1000), U(4001), U(96)), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(KX(vmo_read, U(v), U(5000), U(4000), U(96)), K32_OK);
	assert_memory_equal(lm + 5000, lm + 1000, 96);
	assert_int_equal(KX(vmo_get_size, U(v), U(32)), K32_OK);
	assert_int_equal(rd32(32), 4096);

	assert_int_equal(KX(timer_create, U(0), U(0), U(40)), K32_OK);
	uint32_t t = rd32(40);
	uint64_t now = (uint64_t)kobj_now_ns();
	assert_int_equal(KX(timer_set, U(t), U(now + 1000000), U(0), U(0)), K32_OK);
	assert_int_equal(
	    KX(object_wait_one, U(t), U(KOBJ_SIG_SIGNALED), U(now + 5000000000ull), U(0)), K32_OK);
	assert_int_equal(KX(timer_cancel, U(t)), K32_OK);
	assert_true((uint64_t)kx_as(&pod, "kx_clock_get_monotonic", 0) != 0 || 1);
}

static struct kobj_owner *lookup_pod(void *user)
{
	return user == (void *)&lm ? &pod2 : NULL;
}

static void test_env_hook_and_no_owner(void **state)
{
	(void)state;
	struct kobj_pod_env env = {.owner_of = lookup_pod};
	struct k32_hostfn_def defs[KOBJ_POD_HOSTFN_COUNT];
	kobj_pod_hostfns(&env, defs, KOBJ_POD_HOSTFN_COUNT);
	const struct k32_hostfn_def *d = NULL;
	for (size_t i = 0; i < KOBJ_POD_HOSTFN_COUNT; i++)
		if (!strcmp(defs[i].name, "kx_event_create"))
			d = &defs[i];
	assert_non_null(d);
	uint64_t args[2] = {0, 0}, res[1];
	struct k32_hostcall call = {.ctx = d->ctx,
				    .instance_user = lm,
				    .mem = lm,
				    .mem_len = MEM_LEN,
				    .args = args,
				    .results = res,
				    .err = &trap};
	assert_int_equal(d->fn(&call), K32_OK);
	assert_int_equal((int32_t)res[0], K32_OK);
	assert_int_equal(kobj_owner_handle_count(&pod2), 1);
	/* An instance the embedder did not register: the call traps (never runs). */
	call.instance_user = &pod;
	assert_int_not_equal(d->fn(&call), K32_OK);
	assert_non_null(strstr(trap.msg, "handle table"));
	/* A pod with no memory gets INVALID_ARGS for any pointer. */
	call.instance_user = lm;
	call.mem = NULL;
	call.mem_len = 0;
	assert_int_equal(d->fn(&call), K32_OK);
	assert_int_equal((int32_t)res[0], K32_ERR_INVALID_ARGS);
}

static void test_exhausted_pool(void **state)
{
	(void)state;
	int made = 0;
	int32_t st;
	while ((st = KX(port_create, U(0), U(0))) == K32_OK)
		made++;
	/* The pod stops at its share of the port pool with NO_RESOURCES naming the share... */
	assert_int_equal(made, K32_KOBJ_MAX_PORTS * K32_KOBJ_OWNER_POOL_PCT / 100);
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&pod), "K32_KOBJ_OWNER_POOL_PCT"));
	/* ... the other pod still gets ports, up to the pool's end (then NO_MEMORY or its own
	 * share), and everything else. */
	int other = 0;
	while ((st = kx_as(&pod2, "kx_port_create", 2, U(0), U(0))) == K32_OK)
		other++;
	assert_int_equal(made + other, K32_KOBJ_MAX_PORTS);
	assert_int_equal(kx_as(&native, "kx_port_create", 2, U(0), U(0)), K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&native), "K32_KOBJ_MAX_PORTS"));
	assert_int_equal(kx_as(&pod2, "kx_event_create", 2, U(0), U(0)), K32_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test_setup_teardown(test_channel_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_pointers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_foreign_handles, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_waits_ports_info, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_fifo_vmo_timer, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_env_hook_and_no_owner, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exhausted_pool, setup, teardown),
	};
	int rc = cmocka_run_group_tests_name("kobj_pod", tests, NULL, NULL);
	kobj_node_free(k32_default_allocator(), KN);
	return rc;
}
