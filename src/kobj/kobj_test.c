/*
 * kobj_test.c - unit tests of the kernel objects: every operation, every error code, the
 * limits, peer-closed cases, waits (including cross-thread wake and cancel) and owner
 * teardown. Each test starts from kobj_init (which fails if an earlier test leaked an object)
 * and ends by checking that every pool is back to zero.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/kobj.h"
#include "kobj/kobj_int.h"
#include "base/k32_alloc.h"

static struct kobj_owner A, B;
static struct kobj_node *N; /* the instance of the test (a fresh one each) */

/* kobj_owner_init on the test's instance. */
static void kobj_owner_init_t(struct kobj_owner *o, const char *name, uint32_t cap)
{
	kobj_owner_init(o, N, name, cap);
}

static void pools_empty(void)
{
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		assert_int_equal(st.in_use[t], 0);
	assert_int_equal(st.messages, 0);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.port_observers, 0);
	assert_int_equal(st.port_user_packets, 0);
	assert_int_equal(st.vmo_bytes, 0);
}

static int setup(void **state)
{
	(void)state;
	struct k32_err err;
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	if (kobj_node_new(k32_default_allocator(), "board-a", &lim, &N, &err) != K32_OK)
		return -1;
	kobj_owner_init_t(&A, "pod a", 0);
	kobj_owner_init_t(&B, "pod b", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kobj_owner_fini(&A);
	kobj_owner_fini(&B);
	pools_empty();
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	assert_int_equal(st.accounts, 0); /* every owner gone and drained */
	assert_int_equal(kobj_node_free(k32_default_allocator(), N), K32_OK);
	N = NULL;
	return 0;
}

static struct kobj_object *obj_of(struct kobj_owner *o, kobj_handle_t h)
{
	struct kobj_object *obj = NULL;
	assert_int_equal(kobj_lookup(o, h, 0, 0, &obj), K32_OK);
	return obj;
}

static uint32_t obs_count(struct kobj_object *obj)
{
	uint32_t n = 0;
	kobj_lock(&obj->core->lock);
	for (struct kobj_obs *o = atomic_load(&obj->obs); o; o = o->next)
		n++;
	kobj_unlock(&obj->core->lock);
	return n;
}

static uint32_t sig_of(struct kobj_owner *o, kobj_handle_t h)
{
	struct kobj_info info;
	assert_int_equal(kobj_object_get_info(o, h, &info), K32_OK);
	return info.signals;
}

/* ---- handles and rights ------------------------------------------------------------------ */

static void test_handle_basics(void **state)
{
	(void)state;
	kobj_handle_t ev, d1, d2, r;
	struct kobj_info info;
	assert_int_equal(kobj_event_create(&A, 0, &ev), K32_OK);
	assert_int_not_equal(ev, KOBJ_HANDLE_INVALID);
	assert_int_equal(kobj_owner_handle_count(&A), 1);

	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &d1), K32_OK);
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_WAIT | KOBJ_RIGHT_INSPECT, &d2),
			 K32_OK);
	assert_int_equal(kobj_object_get_info(&A, d2, &info), K32_OK);
	assert_int_equal(info.rights, KOBJ_RIGHT_WAIT | KOBJ_RIGHT_INSPECT);
	assert_int_equal(info.type, KOBJ_TYPE_EVENT);
	assert_int_equal(info.handles, 3);
	/* Not a subset: INVALID_ARGS; no DUPLICATE right: ACCESS_DENIED. */
	assert_int_equal(kobj_handle_duplicate(&A, d2, KOBJ_RIGHT_WAIT, &r), K32_ERR_ACCESS_DENIED);
	kobj_handle_t d3;
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_DUPLICATE, &d3), K32_OK);
	assert_int_equal(kobj_handle_duplicate(&A, d3, KOBJ_RIGHT_WAIT, &r), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(kobj_owner_last_error(&A), "not a subset"));
	/* Missing SIGNAL right. */
	assert_int_equal(kobj_object_signal(&A, d2, 0, KOBJ_SIG_USER(0)), K32_ERR_ACCESS_DENIED);
	assert_int_equal(kobj_handle_close(&A, d3), K32_OK);

	/* Close, stale handle, double close, INVALID. */
	assert_int_equal(kobj_handle_close(&A, d1), K32_OK);
	assert_int_equal(kobj_handle_close(&A, d1), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_object_signal(&A, d1, 0, 0), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_handle_close(&A, KOBJ_HANDLE_INVALID), K32_OK);

	/* Reuse of the slot gets a new generation; the old value stays stale. */
	kobj_handle_t again;
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &again), K32_OK);
	assert_int_equal(again & KOBJ_SLOT_MASK, d1 & KOBJ_SLOT_MASK);
	assert_int_not_equal(again, d1);
	assert_int_equal(kobj_handle_close(&A, d1), K32_ERR_BAD_HANDLE);

	/* Replace: the old value is stale, the new one has the reduced rights. */
	assert_int_equal(kobj_handle_replace(&A, again, KOBJ_RIGHT_WAIT, &r), K32_OK);
	assert_int_equal(kobj_handle_close(&A, again), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_object_get_info(&A, r, &info), K32_ERR_ACCESS_DENIED);
	/* Replace with rights that are not a subset consumes the handle anyway. */
	assert_int_equal(kobj_handle_replace(&A, r, KOBJ_RIGHT_SIGNAL, &d3), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_handle_close(&A, r), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_handle_replace(&A, r, KOBJ_RIGHT_SAME_RIGHTS, &d3),
			 K32_ERR_BAD_HANDLE);

	assert_int_equal(kobj_handle_close(&A, d2), K32_OK);
	assert_int_equal(kobj_handle_close(&A, ev), K32_OK);
	assert_int_equal(kobj_owner_handle_count(&A), 0);
	pools_empty();
}

static void test_bad_handle_values(void **state)
{
	(void)state;
	kobj_handle_t ev;
	assert_int_equal(kobj_event_create(&A, 0, &ev), K32_OK);
	const kobj_handle_t bad[] = {
	    0xffffffffu, 0x000000ffu, (kobj_handle_t)K32_KOBJ_MAX_HANDLES,
	    ev + 1,	 ev ^ 0x200u, ev + (1u << KOBJ_SLOT_BITS),
	    0x12345678u,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t obs;
		assert_int_equal(kobj_object_signal(&A, bad[i], 0, 0), K32_ERR_BAD_HANDLE);
		assert_int_equal(kobj_object_wait_one(&A, bad[i], 1, 0, &obs), K32_ERR_BAD_HANDLE);
		assert_int_equal(kobj_handle_close(&A, bad[i]), K32_ERR_BAD_HANDLE);
	}
	/* A handle value from another owner's table means nothing in this one. */
	assert_int_equal(kobj_object_signal(&B, ev, 0, 0), K32_ERR_BAD_HANDLE);
	/* Wrong type. */
	uint8_t b[4] = {0};
	uint32_t n;
	assert_int_equal(kobj_channel_write(&A, ev, 0, b, 4, NULL, 0), K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_socket_read(&A, ev, 0, b, 4, &n), K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_fifo_read(&A, ev, 4, b, 1, &n), K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_timer_cancel(&A, ev), K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_vmo_read(&A, ev, b, 0, 1), K32_ERR_WRONG_TYPE);
	struct kobj_packet pkt = {0};
	assert_int_equal(kobj_port_queue(&A, ev, &pkt), K32_ERR_WRONG_TYPE);
	kobj_handle_close(&A, ev);
}

static void test_table_full(void **state)
{
	(void)state;
	struct kobj_owner small;
	kobj_handle_t h[8], x, y;
	kobj_owner_init_t(&small, "pod tiny", 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(kobj_event_create(&small, 0, &h[i]), K32_OK);
	assert_int_equal(kobj_event_create(&small, 0, &x), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&small), "K32_KOBJ_MAX_HANDLES"));
	assert_int_equal(kobj_handle_duplicate(&small, h[0], KOBJ_RIGHT_SAME_RIGHTS, &x),
			 K32_ERR_NO_RESOURCES);
	assert_int_equal(kobj_channel_create(&small, 0, &x, &y), K32_ERR_NO_RESOURCES);
	kobj_handle_close(&small, h[3]);
	assert_int_equal(kobj_channel_create(&small, 0, &x, &y), K32_ERR_NO_RESOURCES);
	kobj_owner_fini(&small);
	assert_int_equal(kobj_owner_handle_count(&small), 0);
	assert_int_equal(kobj_event_create(&small, 0, &x), K32_ERR_NO_RESOURCES);
	pools_empty();
}

/* Each operation with a handle that lacks exactly the right it needs. */
static void test_rights_table(void **state)
{
	(void)state;
	kobj_handle_t c0, c1, s0, s1, f0, f1, p, v, t, e, ep0, ep1;
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	assert_int_equal(kobj_socket_create(&A, 0, 0, &s0, &s1), K32_OK);
	assert_int_equal(kobj_fifo_create(&A, 4, 4, 0, &f0, &f1), K32_OK);
	assert_int_equal(kobj_port_create(&A, 0, &p), K32_OK);
	assert_int_equal(kobj_vmo_create(&A, 64, 0, &v), K32_OK);
	assert_int_equal(kobj_timer_create(&A, 0, KOBJ_CLOCK_MONOTONIC, &t), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_eventpair_create(&A, 0, &ep0, &ep1), K32_OK);
	struct {
		const char *name;
		kobj_handle_t src;
		uint32_t drop;
	} rows[] = {
	    {"channel_write", c0, KOBJ_RIGHT_WRITE}, {"channel_read", c0, KOBJ_RIGHT_READ},
	    {"socket_write", s0, KOBJ_RIGHT_WRITE},  {"socket_read", s0, KOBJ_RIGHT_READ},
	    {"fifo_write", f0, KOBJ_RIGHT_WRITE},    {"fifo_read", f0, KOBJ_RIGHT_READ},
	    {"port_queue", p, KOBJ_RIGHT_WRITE},     {"port_wait", p, KOBJ_RIGHT_READ},
	    {"vmo_write", v, KOBJ_RIGHT_WRITE},	     {"vmo_read", v, KOBJ_RIGHT_READ},
	    {"vmo_borrow", v, KOBJ_RIGHT_MAP},	     {"timer_set", t, KOBJ_RIGHT_WRITE},
	    {"signal", e, KOBJ_RIGHT_SIGNAL},	     {"signal_peer", ep0, KOBJ_RIGHT_SIGNAL_PEER},
	    {"wait_one", e, KOBJ_RIGHT_WAIT},	     {"get_info", e, KOBJ_RIGHT_INSPECT},
	    {"duplicate", e, KOBJ_RIGHT_DUPLICATE},  {"wait_async", e, KOBJ_RIGHT_WAIT},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		kobj_handle_t all, h, out;
		struct kobj_info info;
		uint8_t buf[16] = {0};
		uint32_t n, nh;
		struct kobj_packet pkt = {0};
		void *ptr;
		assert_int_equal(
		    kobj_handle_duplicate(&A, rows[i].src, KOBJ_RIGHT_SAME_RIGHTS, &all), K32_OK);
		assert_int_equal(kobj_object_get_info(&A, all, &info), K32_OK);
		assert_true(info.rights & rows[i].drop);
		assert_int_equal(kobj_handle_replace(&A, all, info.rights & ~rows[i].drop, &h),
				 K32_OK);
		k32_status_t st = K32_OK;
		const char *nm = rows[i].name;
		if (!strcmp(nm, "channel_write"))
			st = kobj_channel_write(&A, h, 0, buf, 4, NULL, 0);
		else if (!strcmp(nm, "channel_read"))
			st = kobj_channel_read(&A, h, 0, buf, NULL, 16, 0, &n, &nh);
		else if (!strcmp(nm, "socket_write"))
			st = kobj_socket_write(&A, h, 0, buf, 4, &n);
		else if (!strcmp(nm, "socket_read"))
			st = kobj_socket_read(&A, h, 0, buf, 4, &n);
		else if (!strcmp(nm, "fifo_write"))
			st = kobj_fifo_write(&A, h, 4, buf, 1, &n);
		else if (!strcmp(nm, "fifo_read"))
			st = kobj_fifo_read(&A, h, 4, buf, 1, &n);
		else if (!strcmp(nm, "port_queue"))
			st = kobj_port_queue(&A, h, &pkt);
		else if (!strcmp(nm, "port_wait"))
			st = kobj_port_wait(&A, h, 0, &pkt);
		else if (!strcmp(nm, "vmo_write"))
			st = kobj_vmo_write(&A, h, buf, 0, 4);
		else if (!strcmp(nm, "vmo_read"))
			st = kobj_vmo_read(&A, h, buf, 0, 4);
		else if (!strcmp(nm, "vmo_borrow"))
			st = kobj_vmo_borrow(&A, h, &ptr, NULL);
		else if (!strcmp(nm, "timer_set"))
			st = kobj_timer_set(&A, h, KOBJ_TIME_INFINITE, 0, 0);
		else if (!strcmp(nm, "signal"))
			st = kobj_object_signal(&A, h, 0, KOBJ_SIG_USER(1));
		else if (!strcmp(nm, "signal_peer"))
			st = kobj_object_signal_peer(&A, h, 0, KOBJ_SIG_USER(1));
		else if (!strcmp(nm, "wait_one"))
			st = kobj_object_wait_one(&A, h, KOBJ_SIG_SIGNALED, 0, &n);
		else if (!strcmp(nm, "get_info"))
			st = kobj_object_get_info(&A, h, &info);
		else if (!strcmp(nm, "duplicate"))
			st = kobj_handle_duplicate(&A, h, KOBJ_RIGHT_SAME_RIGHTS, &out);
		else if (!strcmp(nm, "wait_async"))
			st = kobj_object_wait_async(&A, h, p, 1, KOBJ_SIG_SIGNALED, 0);
		if (st != K32_ERR_ACCESS_DENIED)
			fail_msg("%s without right 0x%x gave %d, want ACCESS_DENIED", nm,
				 rows[i].drop, st);
		kobj_handle_close(&A, h);
	}
	/* wait_async needs WRITE on the port. */
	kobj_handle_t ro;
	assert_int_equal(kobj_handle_duplicate(&A, p, KOBJ_RIGHT_READ, &ro), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, e, ro, 1, KOBJ_SIG_SIGNALED, 0),
			 K32_ERR_ACCESS_DENIED);
	/* channel transfer needs TRANSFER on each listed handle. */
	kobj_handle_t nt;
	assert_int_equal(kobj_handle_duplicate(&A, e, KOBJ_RIGHT_WAIT, &nt), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, "x", 1, &nt, 1), K32_ERR_ACCESS_DENIED);
	assert_int_equal(kobj_handle_close(&A, nt), K32_ERR_BAD_HANDLE); /* consumed */
}

/* ---- channel ----------------------------------------------------------------------------- */

static void test_channel_basic(void **state)
{
	(void)state;
	kobj_handle_t c0, c1;
	uint8_t msg[64], got[64];
	uint32_t n, nh;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	assert_int_equal(kobj_channel_create(&A, 1, &c0, &c1), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	assert_int_equal(sig_of(&A, c0), KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 64, 0, &n, &nh),
			 K32_ERR_SHOULD_WAIT);
	assert_int_equal(kobj_channel_write(&A, c0, 0, msg, 64, NULL, 0), K32_OK);
	assert_int_equal(sig_of(&A, c1), KOBJ_SIG_WRITABLE | KOBJ_SIG_READABLE);
	/* Too small: sizes reported, message kept. */
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 10, 0, &n, &nh),
			 K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(n, 64);
	assert_int_equal(nh, 0);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 64, 0, &n, &nh), K32_OK);
	assert_int_equal(n, 64);
	assert_memory_equal(got, msg, 64);
	assert_int_equal(sig_of(&A, c1), KOBJ_SIG_WRITABLE);
	/* MAY_DISCARD drops the oversize message. */
	assert_int_equal(kobj_channel_write(&A, c0, 0, msg, 64, NULL, 0), K32_OK);
	assert_int_equal(
	    kobj_channel_read(&A, c1, KOBJ_CHANNEL_READ_MAY_DISCARD, got, NULL, 8, 0, &n, &nh),
	    K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 64, 0, &n, &nh),
			 K32_ERR_SHOULD_WAIT);
	/* Zero-length message. */
	assert_int_equal(kobj_channel_write(&A, c1, 0, NULL, 0, NULL, 0), K32_OK);
	assert_int_equal(kobj_channel_read(&A, c0, 0, NULL, NULL, 0, 0, &n, &nh), K32_OK);
	assert_int_equal(n, 0);
	/* Limits and bad args. */
	assert_int_equal(
	    kobj_channel_write(&A, c0, 0, msg, K32_KOBJ_CHANNEL_MAX_MSG_BYTES + 1, NULL, 0),
	    K32_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_CHANNEL_MAX_MSG_BYTES"));
	assert_int_equal(kobj_channel_write(&A, c0, 1, msg, 4, NULL, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_channel_write(&A, c0, 0, NULL, 4, NULL, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_channel_read(&A, c0, 0x80, got, NULL, 4, 0, &n, &nh),
			 K32_ERR_INVALID_ARGS);
	/* Peer closed: write fails, queued messages still readable, then PEER_CLOSED. */
	assert_int_equal(kobj_channel_write(&A, c0, 0, msg, 8, NULL, 0), K32_OK);
	assert_int_equal(kobj_handle_close(&A, c0), K32_OK);
	assert_true(sig_of(&A, c1) & KOBJ_SIG_PEER_CLOSED);
	assert_false(sig_of(&A, c1) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_channel_write(&A, c1, 0, msg, 8, NULL, 0), K32_ERR_PEER_CLOSED);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 64, 0, &n, &nh), K32_OK);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 64, 0, &n, &nh),
			 K32_ERR_PEER_CLOSED);
	assert_int_equal(kobj_handle_close(&A, c1), K32_OK);
	pools_empty();
}

static void test_channel_large_and_queue_limits(void **state)
{
	(void)state;
	static uint8_t big[K32_KOBJ_CHANNEL_MAX_MSG_BYTES], got[K32_KOBJ_CHANNEL_MAX_MSG_BYTES];
	kobj_handle_t c0, c1;
	uint32_t n, nh;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	const uint32_t sizes[] = {1, 127, 128, 129, 512, 1000, 4096, 32768, sizeof(big)};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(kobj_channel_write(&A, c0, 0, big, sizes[i], NULL, 0), K32_OK);
		memset(got, 0, sizes[i]);
		assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, sizeof(got), 0, &n, &nh),
				 K32_OK);
		assert_int_equal(n, sizes[i]);
		assert_memory_equal(got, big, sizes[i]);
	}
	/* Count limit: SHOULD_WAIT and WRITABLE deasserted; one read restores it. */
	for (int i = 0; i < K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS; i++)
		assert_int_equal(kobj_channel_write(&A, c0, 0, big, 4, NULL, 0), K32_OK);
	assert_false(sig_of(&A, c0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_channel_write(&A, c0, 0, big, 4, NULL, 0), K32_ERR_SHOULD_WAIT);
	struct kobj_info info;
	assert_int_equal(kobj_object_get_info(&A, c1, &info), K32_OK);
	assert_int_equal(info.queued, K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 4, 0, &n, &nh), K32_OK);
	assert_true(sig_of(&A, c0) & KOBJ_SIG_WRITABLE);
	while (kobj_channel_read(&A, c1, 0, got, NULL, 4, 0, &n, &nh) == K32_OK) {
	}
	/* Byte limit: two maximal messages fill the 128 KiB queue. */
	uint32_t fit = K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES / K32_KOBJ_CHANNEL_MAX_MSG_BYTES;
	for (uint32_t i = 0; i < fit; i++)
		assert_int_equal(kobj_channel_write(&A, c0, 0, big, sizeof(big), NULL, 0), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, big, 1, NULL, 0), K32_ERR_SHOULD_WAIT);
	assert_false(sig_of(&A, c0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, sizeof(got), 0, &n, &nh), K32_OK);
	assert_true(sig_of(&A, c0) & KOBJ_SIG_WRITABLE);
	/* Closing with queued chunked messages frees every chunk. */
	kobj_handle_close(&A, c0);
	kobj_handle_close(&A, c1);
	pools_empty();
}

static void test_channel_handles(void **state)
{
	(void)state;
	kobj_handle_t c0, c1, ev, ev2, got[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES + 1];
	uint32_t n, nh;
	uint8_t buf[8];
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &ev), K32_OK);
	assert_int_equal(kobj_object_signal(&A, ev, 0, KOBJ_SIG_USER(3)), K32_OK);
	/* Move A -> B: the sender loses the handle, the reader gets a live one. */
	struct kobj_owner *rd = &B;
	kobj_handle_t b0, b1;
	assert_int_equal(kobj_channel_create(&A, 0, &b0, &b1), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, "hi", 2, &ev, 1), K32_OK);
	assert_int_equal(kobj_handle_close(&A, ev), K32_ERR_BAD_HANDLE);
	/* Move c1 itself to B through b0 / b1, then B reads the event from it. */
	assert_int_equal(kobj_channel_write(&A, b0, 0, NULL, 0, &c1, 1), K32_OK);
	kobj_handle_t bc1;
	assert_int_equal(kobj_channel_read(&A, b1, 0, NULL, &bc1, 0, 1, &n, &nh), K32_OK);
	assert_int_equal(nh, 1);
	(void)rd;
	assert_int_equal(kobj_channel_read(&A, bc1, 0, buf, got, 8, 0, &n, &nh),
			 K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(nh, 1);
	assert_int_equal(kobj_channel_read(&A, bc1, 0, buf, got, 8, 1, &n, &nh), K32_OK);
	assert_int_equal(sig_of(&A, got[0]) & KOBJ_SIG_USER(3), KOBJ_SIG_USER(3));
	ev = got[0];

	/* Errors consume every listed handle. */
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &ev2), K32_OK);
	kobj_handle_t self[2] = {ev2, c0};
	assert_int_equal(kobj_channel_write(&A, c0, 0, NULL, 0, self, 2), K32_ERR_NOT_SUPPORTED);
	assert_int_equal(kobj_handle_close(&A, ev2), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &ev2), K32_OK);
	kobj_handle_t twice[2] = {ev2, ev2};
	assert_int_equal(kobj_channel_write(&A, c0, 0, NULL, 0, twice, 2), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_handle_close(&A, ev2), K32_ERR_BAD_HANDLE);
	kobj_handle_t many[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES + 1];
	for (int i = 0; i <= K32_KOBJ_CHANNEL_MAX_MSG_HANDLES; i++)
		assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &many[i]),
				 K32_OK);
	assert_int_equal(
	    kobj_channel_write(&A, c0, 0, NULL, 0, many, K32_KOBJ_CHANNEL_MAX_MSG_HANDLES + 1),
	    K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_owner_handle_count(&A), 5); /* c0, b0, b1, bc1, ev */
	/* Full queue and closed peer consume them too. */
	assert_int_equal(kobj_handle_duplicate(&A, ev, KOBJ_RIGHT_SAME_RIGHTS, &ev2), K32_OK);
	assert_int_equal(kobj_handle_close(&A, bc1), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, NULL, 0, &ev2, 1), K32_ERR_PEER_CLOSED);
	assert_int_equal(kobj_handle_close(&A, ev2), K32_ERR_BAD_HANDLE);
	struct kobj_info info;
	assert_int_equal(kobj_object_get_info(&A, ev, &info), K32_OK);
	assert_int_equal(info.handles, 1);

	/* Reader's table full: NO_RESOURCES and the message stays queued. */
	struct kobj_owner tiny;
	kobj_owner_init_t(&tiny, "pod tiny", 4);
	kobj_handle_t t0, t1, tev, x;
	assert_int_equal(kobj_channel_create(&tiny, 0, &t0, &t1), K32_OK);
	assert_int_equal(kobj_event_create(&tiny, 0, &tev), K32_OK);
	assert_int_equal(kobj_event_create(&tiny, 0, &x), K32_OK);
	kobj_handle_t pair[2];
	assert_int_equal(kobj_handle_duplicate(&tiny, tev, KOBJ_RIGHT_SAME_RIGHTS, &pair[0]),
			 K32_ERR_NO_RESOURCES);
	pair[0] = tev;
	pair[1] = x;
	assert_int_equal(kobj_channel_write(&tiny, t0, 0, NULL, 0, pair, 2), K32_OK);
	assert_int_equal(kobj_event_create(&tiny, 0, &tev), K32_OK);
	assert_int_equal(kobj_channel_read(&tiny, t1, 0, NULL, got, 0, 2, &n, &nh),
			 K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&tiny), "message kept"));
	kobj_handle_close(&tiny, tev);
	assert_int_equal(kobj_channel_read(&tiny, t1, 0, NULL, got, 0, 2, &n, &nh), K32_OK);
	assert_int_equal(nh, 2);
	kobj_owner_fini(&tiny);
	kobj_handle_close(&A, ev);
}

/* A channel end inside a message inside a channel ... closes without recursion; cycles are
 * refused. */
static void test_channel_nested_close(void **state)
{
	(void)state;
	kobj_handle_t c0, c1, inner0, inner1, ev;
	assert_int_equal(kobj_channel_create(&A, 0, &inner0, &inner1), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &ev), K32_OK);
	assert_int_equal(kobj_channel_write(&A, inner0, 0, "e", 1, &ev, 1), K32_OK);
	kobj_handle_close(&A, inner0);
	/* Each round: a new channel whose queue holds the previous reader end. */
	for (int depth = 0; depth < 30; depth++) {
		assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
		assert_int_equal(kobj_channel_write(&A, c0, 0, "n", 1, &inner1, 1), K32_OK);
		kobj_handle_close(&A, c0);
		inner1 = c1;
	}
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	assert_int_equal(st.in_use[KOBJ_TYPE_CHANNEL], 31);
	assert_int_equal(kobj_owner_handle_count(&A), 1);
	kobj_handle_close(&A, inner1);
	pools_empty();

	/* Cycles: an end into its own queue, or into a queue it can reach. */
	kobj_handle_t a0, a1, b0, b1;
	assert_int_equal(kobj_channel_create(&A, 0, &a0, &a1), K32_OK);
	assert_int_equal(kobj_channel_write(&A, a0, 0, NULL, 0, &a1, 1), K32_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(kobj_owner_last_error(&A), "cycle"));
	assert_int_equal(kobj_handle_close(&A, a1), K32_ERR_BAD_HANDLE); /* consumed */
	assert_int_equal(kobj_handle_close(&A, a0), K32_OK);
	assert_int_equal(kobj_channel_create(&A, 0, &a0, &a1), K32_OK);
	assert_int_equal(kobj_channel_create(&A, 0, &b0, &b1), K32_OK);
	assert_int_equal(kobj_channel_write(&A, b0, 0, NULL, 0, &a1, 1), K32_OK); /* a1 in b1 */
	assert_int_equal(kobj_channel_write(&A, a0, 0, NULL, 0, &b1, 1), K32_ERR_NOT_SUPPORTED);
	kobj_handle_close(&A, a0);
	kobj_handle_close(&A, b0);
	pools_empty();
}

static void test_channel_pools_exhausted(void **state)
{
	(void)state;
	struct kobj_owner big;
	kobj_handle_t h0, h1;
	kobj_owner_init_t(&big, "pod big", 0);
	int made = 0;
	k32_status_t st;
	while ((st = kobj_channel_create(&big, 0, &h0, &h1)) == K32_OK)
		made++;
	if (made == K32_KOBJ_MAX_CHANNELS) {
		assert_int_equal(st, K32_ERR_NO_MEMORY);
		assert_non_null(strstr(kobj_owner_last_error(&big), "K32_KOBJ_MAX_CHANNELS"));
	} else {
		assert_int_equal(st, K32_ERR_NO_RESOURCES); /* table smaller than the pool */
	}
	kobj_owner_fini(&big);
	/* Message pool: several owners each fill queues up to their share until the node-wide
	 * pool is spent (NO_MEMORY naming it). */
	enum { NO = K32_KOBJ_MAX_MESSAGES / K32_KOBJ_OWNER_MAX_MESSAGES + 1 };
	struct kobj_owner w[NO];
	int msgs = 0;
	for (int k = 0; k < NO; k++)
		kobj_owner_init_t(&w[k], "pod writer", 0);
	st = K32_OK;
	for (int k = 0; k < NO && st != K32_ERR_NO_MEMORY; k++) {
		st = K32_OK;
		for (int c = 0; c < K32_KOBJ_MAX_HANDLES / 2 && st == K32_OK; c++) {
			if (kobj_channel_create(&w[k], 0, &h0, &h1) != K32_OK)
				break;
			for (int i = 0; i < K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS; i++) {
				st = kobj_channel_write(&w[k], h0, 0, "abc", 3, NULL, 0);
				if (st != K32_OK)
					break;
				msgs++;
			}
		}
	}
	assert_int_equal(msgs, K32_KOBJ_MAX_MESSAGES);
	assert_int_equal(st, K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&w[NO - 1]), "K32_KOBJ_MAX_MESSAGES"));
	for (int k = 0; k < NO; k++)
		kobj_owner_fini(&w[k]);
	pools_empty();
}

static void test_channel_call_local(void **state)
{
	(void)state;
	kobj_handle_t c0, c1;
	uint8_t req[8] = {7, 0, 0, 0, 'p', 'i', 'n', 'g'};
	uint8_t rep[8] = {7, 0, 0, 0, 'p', 'o', 'n', 'g'};
	uint8_t other[8] = {9, 0, 0, 0, 'x', 'x', 'x', 'x'};
	uint8_t got[8];
	uint32_t n, nh;
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	/* The reply is already queued (written by the "server" end) behind another txid. */
	assert_int_equal(kobj_channel_write(&A, c1, 0, other, 8, NULL, 0), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c1, 0, rep, 8, NULL, 0), K32_OK);
	struct kobj_channel_call_args a = {
	    .wr_bytes = req, .wr_num_bytes = 8, .rd_bytes = got, .rd_num_bytes = 8};
	assert_int_equal(kobj_channel_call(&A, c0, 0, kobj_deadline_after(1000000000), &a, &n, &nh),
			 K32_OK);
	assert_memory_equal(got, rep, 8);
	/* The request reached the server end; the other reply is still queued. */
	assert_int_equal(kobj_channel_read(&A, c1, 0, got, NULL, 8, 0, &n, &nh), K32_OK);
	assert_memory_equal(got, req, 8);
	/* No reply: TIMED_OUT (the unrelated message stays). */
	assert_int_equal(kobj_channel_call(&A, c0, 0, kobj_deadline_after(2000000), &a, &n, &nh),
			 K32_ERR_TIMED_OUT);
	a.wr_num_bytes = 3;
	assert_int_equal(kobj_channel_call(&A, c0, 0, 0, &a, &n, &nh), K32_ERR_INVALID_ARGS);
	kobj_handle_close(&A, c1);
	a.wr_num_bytes = 8;
	assert_int_equal(kobj_channel_call(&A, c0, 0, KOBJ_TIME_INFINITE, &a, &n, &nh),
			 K32_ERR_PEER_CLOSED);
	kobj_handle_close(&A, c0);
}

/* ---- socket ------------------------------------------------------------------------------ */

static void test_socket_stream(void **state)
{
	(void)state;
	kobj_handle_t s0, s1;
	uint8_t data[600], got[600];
	uint32_t n;
	for (int i = 0; i < 600; i++)
		data[i] = (uint8_t)(i * 13);
	assert_int_equal(kobj_socket_create(&A, 0, 100, &s0, &s1), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_socket_create(&A, 0, K32_KOBJ_SOCKET_MAX_CAP * 2, &s0, &s1),
			 K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_socket_create(&A, 4, 0, &s0, &s1), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_socket_create(&A, KOBJ_SOCKET_STREAM, 256, &s0, &s1), K32_OK);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 10, &n), K32_ERR_SHOULD_WAIT);
	/* Short write: only 256 fit. */
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 600, &n), K32_OK);
	assert_int_equal(n, 256);
	assert_false(sig_of(&A, s0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 1, &n), K32_ERR_SHOULD_WAIT);
	/* Peek leaves it; partial reads wrap the ring. */
	assert_int_equal(kobj_socket_read(&A, s1, KOBJ_SOCKET_PEEK, got, 10, &n), K32_OK);
	assert_int_equal(n, 10);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 200, &n), K32_OK);
	assert_int_equal(n, 200);
	assert_memory_equal(got, data, 200);
	assert_true(sig_of(&A, s0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data + 256, 344, &n), K32_OK);
	assert_int_equal(n, 200);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 600, &n), K32_OK);
	assert_int_equal(n, 256);
	assert_memory_equal(got, data + 200, 256);
	/* Shutdown(WRITE): BAD_STATE for the writer, PEER_CLOSED for the reader once empty. */
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 5, &n), K32_OK);
	assert_int_equal(kobj_socket_shutdown(&A, s0, 2), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_socket_shutdown(&A, s0, KOBJ_SOCKET_SHUTDOWN_WRITE), K32_OK);
	assert_true(sig_of(&A, s0) & KOBJ_SIG_SOCKET_WRITE_DISABLED);
	assert_true(sig_of(&A, s1) & KOBJ_SIG_SOCKET_PEER_WRITE_DISABLED);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 5, &n), K32_ERR_BAD_STATE);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 600, &n), K32_OK);
	assert_int_equal(n, 5);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 600, &n), K32_ERR_PEER_CLOSED);
	/* The other direction still works. */
	assert_int_equal(kobj_socket_write(&A, s1, 0, data, 5, &n), K32_OK);
	kobj_handle_close(&A, s0);
	assert_true(sig_of(&A, s1) & KOBJ_SIG_PEER_CLOSED);
	assert_int_equal(kobj_socket_write(&A, s1, 0, data, 5, &n), K32_ERR_PEER_CLOSED);
	kobj_handle_close(&A, s1);
	pools_empty();
}

static void test_socket_datagram(void **state)
{
	(void)state;
	kobj_handle_t s0, s1;
	uint8_t data[300], got[300];
	uint32_t n;
	memset(data, 0x5a, sizeof(data));
	assert_int_equal(kobj_socket_create(&A, KOBJ_SOCKET_DATAGRAM, 256, &s0, &s1), K32_OK);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 253, &n), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 100, &n), K32_OK);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data + 1, 100, &n), K32_OK);
	/* 208 used; a 60-byte datagram needs 64: all or nothing. */
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 60, &n), K32_ERR_SHOULD_WAIT);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 40, &n), K32_OK);
	/* Truncating read drops the rest of that datagram. */
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 10, &n), K32_OK);
	assert_int_equal(n, 10);
	assert_int_equal(kobj_socket_read(&A, s1, KOBJ_SOCKET_PEEK, got, 300, &n), K32_OK);
	assert_int_equal(n, 100);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 300, &n), K32_OK);
	assert_int_equal(n, 100);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 300, &n), K32_OK);
	assert_int_equal(n, 40);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 300, &n), K32_ERR_SHOULD_WAIT);
	kobj_handle_close(&A, s0);
	kobj_handle_close(&A, s1);
}

static void test_region_exhausted(void **state)
{
	(void)state;
	struct kobj_owner o[4];
	kobj_handle_t v[4], s0, s1, extra;
	/* Four owners fill the region with one quarter-VMO each (an owner's region share is a
	 * quarter), then A's socket cannot get its rings: NO_MEMORY naming the region. */
	uint32_t chunk = K32_KOBJ_REGION_BYTES / 4;
	for (int i = 0; i < 4; i++) {
		kobj_owner_init_t(&o[i], "pod vmo", 0);
		assert_int_equal(kobj_vmo_create(&o[i], chunk, 0, &v[i]), K32_OK);
	}
	assert_int_equal(kobj_socket_create(&A, 0, 0, &s0, &s1), K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_REGION_BYTES"));
	assert_int_equal(kobj_vmo_create(&A, 16, 0, &extra), K32_ERR_NO_MEMORY);
	/* Freeing one in the middle makes room (first fit). */
	kobj_handle_close(&o[1], v[1]);
	assert_int_equal(kobj_socket_create(&A, 0, 0, &s0, &s1), K32_OK);
	assert_int_equal(kobj_vmo_create(&A, K32_KOBJ_REGION_BYTES + 1ull, 0, &extra),
			 K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_vmo_create(&A, 0, 0, &extra), K32_ERR_OUT_OF_RANGE);
	/* An owner at its region share gets NO_RESOURCES naming the share, not the region. */
	assert_int_equal(kobj_vmo_create(&o[0], 16, 0, &extra), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&o[0]), "K32_KOBJ_OWNER_MAX_REGION_BYTES"));
	for (int i = 0; i < 4; i++)
		kobj_owner_fini(&o[i]);
}

/* Per-owner object shares (K32_KOBJ_OWNER_POOL_PCT of each pool) and buffered-memory shares
 * (message chunks, region bytes): the greedy owner gets NO_RESOURCES naming its share, others
 * keep working, and what it created stays charged to it wherever its handles went. */
static void test_owner_object_and_memory_quotas(void **state)
{
	(void)state;
	struct kobj_owner x;
	static kobj_handle_t ev[K32_KOBJ_MAX_EVENTS];
	kobj_handle_t e, moved, s0, s1, a0, a1;
	uint32_t made = 0, n, nh;
	k32_status_t st;
	kobj_owner_init_t(&x, "pod greedy", 0);
	const uint32_t share = K32_KOBJ_MAX_EVENTS * K32_KOBJ_OWNER_POOL_PCT / 100u;
	while (made < K32_KOBJ_MAX_EVENTS && (st = kobj_event_create(&x, 0, &ev[made])) == K32_OK)
		made++;
	assert_int_equal(made, share < K32_KOBJ_MAX_HANDLES ? share : K32_KOBJ_MAX_HANDLES);
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	if (share < K32_KOBJ_MAX_HANDLES)
		assert_non_null(strstr(kobj_owner_last_error(&x), "K32_KOBJ_OWNER_POOL_PCT"));
	/* Another owner still creates events. */
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	/* Moving a handle away does not un-charge its creator; destroying the object does. */
	if (share < K32_KOBJ_MAX_HANDLES) {
		assert_int_equal(kobj_handle_transfer(&x, ev[0], &B, &moved), K32_OK);
		assert_int_equal(kobj_event_create(&x, 0, &ev[0]), K32_ERR_NO_RESOURCES);
		assert_int_equal(kobj_handle_close(&B, moved), K32_OK);
		assert_int_equal(kobj_event_create(&x, 0, &ev[0]), K32_OK);
	}
	for (uint32_t i = 0; i < made; i++)
		assert_int_equal(kobj_handle_close(&x, ev[i]), K32_OK);
	kobj_handle_close(&A, e);

	/* Ports: a small pool (16): two owners take half each, a third finds the pool empty. */
	kobj_handle_t px[K32_KOBJ_MAX_PORTS], pb[K32_KOBJ_MAX_PORTS], pa;
	uint32_t nx = 0, nb = 0;
	while (nx < K32_KOBJ_MAX_PORTS && kobj_port_create(&x, 0, &px[nx]) == K32_OK)
		nx++;
	while (nb < K32_KOBJ_MAX_PORTS && kobj_port_create(&B, 0, &pb[nb]) == K32_OK)
		nb++;
	assert_int_equal(nx, K32_KOBJ_MAX_PORTS * K32_KOBJ_OWNER_POOL_PCT / 100u);
	assert_int_equal(nx + nb, K32_KOBJ_MAX_PORTS);
	assert_int_equal(kobj_port_create(&A, 0, &pa), K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_MAX_PORTS"));
	for (uint32_t i = 0; i < nb; i++)
		kobj_handle_close(&B, pb[i]);

	/* Message chunks: x fills channels with maximal messages (each channel until its queue
	 * is full, SHOULD_WAIT) until its chunk share is spent (NO_RESOURCES). */
	static uint8_t big[K32_KOBJ_CHANNEL_MAX_MSG_BYTES];
	kobj_handle_t cx[8], cr[8];
	memset(big, 0x3c, sizeof(big));
	for (int i = 0; i < 8; i++) {
		assert_int_equal(kobj_channel_create(&A, 0, &cx[i], &cr[i]), K32_OK);
		assert_int_equal(kobj_handle_transfer(&A, cx[i], &x, &cx[i]), K32_OK);
	}
	assert_int_equal(kobj_channel_create(&A, 0, &a0, &a1), K32_OK);
	const uint32_t per = (K32_KOBJ_CHANNEL_MAX_MSG_BYTES - K32_KOBJ_MSG_INLINE_BYTES +
			      K32_KOBJ_MSG_CHUNK_BYTES - 1) /
			     K32_KOBJ_MSG_CHUNK_BYTES;
	uint32_t sent = 0;
	st = K32_ERR_SHOULD_WAIT;
	for (int i = 0; i < 8 && st == K32_ERR_SHOULD_WAIT; i++)
		while ((st = kobj_channel_write(&x, cx[i], 0, big, sizeof(big), NULL, 0)) == K32_OK)
			sent++;
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_int_equal(sent, K32_KOBJ_OWNER_MAX_MSG_CHUNKS / per);
	assert_non_null(strstr(kobj_owner_last_error(&x), "K32_KOBJ_OWNER_MAX_MSG_CHUNKS"));
	/* A can still queue a maximal message. */
	assert_int_equal(kobj_channel_write(&A, a0, 0, big, sizeof(big), NULL, 0), K32_OK);
	/* Reading one of x's messages gives its chunks back. */
	assert_int_equal(kobj_channel_read(&A, cr[0], 0, big, NULL, sizeof(big), 0, &n, &nh),
			 K32_OK);
	assert_int_equal(kobj_channel_write(&x, cx[0], 0, big, sizeof(big), NULL, 0), K32_OK);
	for (int i = 0; i < 8; i++)
		kobj_handle_close(&A, cr[i]);

	/* Region bytes: sockets of the largest capacity until x's region share is spent. */
	uint32_t socks = 0;
	kobj_handle_t sk[2 * 16];
	while (socks < 16 &&
	       (st = kobj_socket_create(&x, 0, K32_KOBJ_SOCKET_MAX_CAP, &sk[2 * socks],
					&sk[2 * socks + 1])) == K32_OK)
		socks++;
	assert_int_equal(socks, K32_KOBJ_OWNER_MAX_REGION_BYTES / (2u * K32_KOBJ_SOCKET_MAX_CAP));
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&x), "K32_KOBJ_OWNER_MAX_REGION_BYTES"));
	assert_int_equal(kobj_socket_create(&A, 0, K32_KOBJ_SOCKET_MAX_CAP, &s0, &s1), K32_OK);
	kobj_handle_close(&A, s0);
	kobj_handle_close(&A, s1);
	kobj_handle_close(&A, a0);
	kobj_handle_close(&A, a1);
	kobj_owner_fini(&x);
	pools_empty();
}

/* ---- event, event pair ------------------------------------------------------------------- */

static void test_event_signals(void **state)
{
	(void)state;
	kobj_handle_t e, p0, p1;
	assert_int_equal(kobj_event_create(&A, 1, &e), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED | KOBJ_SIG_USER(7)),
			 K32_OK);
	assert_int_equal(sig_of(&A, e), KOBJ_SIG_SIGNALED | KOBJ_SIG_USER(7));
	assert_int_equal(kobj_object_signal(&A, e, KOBJ_SIG_SIGNALED, 0), K32_OK);
	assert_int_equal(sig_of(&A, e), KOBJ_SIG_USER(7));
	assert_int_equal(kobj_object_signal(&A, e, 0, KOBJ_SIG_READABLE), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_object_signal(&A, e, 0, 0), K32_OK);
	assert_int_equal(kobj_object_signal_peer(&A, e, 0, KOBJ_SIG_USER(0)),
			 K32_ERR_ACCESS_DENIED);

	assert_int_equal(kobj_eventpair_create(&A, 3, &p0, &p1), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_eventpair_create(&A, 0, &p0, &p1), K32_OK);
	assert_int_equal(kobj_object_signal_peer(&A, p0, 0, KOBJ_SIG_SIGNALED), K32_OK);
	assert_int_equal(sig_of(&A, p1), KOBJ_SIG_SIGNALED);
	assert_int_equal(sig_of(&A, p0), 0);
	assert_int_equal(kobj_object_signal_peer(&A, p0, 0, KOBJ_SIG_WRITABLE),
			 K32_ERR_INVALID_ARGS);
	kobj_handle_close(&A, p1);
	assert_int_equal(sig_of(&A, p0), KOBJ_SIG_PEER_CLOSED);
	assert_int_equal(kobj_object_signal_peer(&A, p0, 0, KOBJ_SIG_USER(1)), K32_ERR_PEER_CLOSED);
	kobj_handle_close(&A, p0);
	kobj_handle_close(&A, e);
	/* Event pool limit. */
	struct kobj_owner o[3];
	kobj_handle_t h;
	int made = 0;
	k32_status_t st = K32_OK;
	for (int k = 0; k < 3 && st == K32_OK; k++) {
		kobj_owner_init_t(&o[k], "pod many", 0);
		for (int i = 0; i < K32_KOBJ_MAX_HANDLES; i++) {
			st = kobj_event_create(&o[k], 0, &h);
			if (st != K32_OK)
				break;
			made++;
		}
	}
	assert_int_equal(made, K32_KOBJ_MAX_EVENTS);
	assert_int_equal(st, K32_ERR_NO_MEMORY);
	for (int k = 0; k < 3; k++)
		kobj_owner_fini(&o[k]);
	pools_empty();
}

/* ---- waits ------------------------------------------------------------------------------- */

static void test_wait_basic(void **state)
{
	(void)state;
	kobj_handle_t e, e2, p, c0, c1;
	uint32_t obs = 0;
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &e2), K32_OK);
	assert_int_equal(kobj_port_create(&A, 0, &p), K32_OK);
	assert_int_equal(kobj_object_wait_one(&A, e, KOBJ_SIG_SIGNALED, 0, &obs),
			 K32_ERR_TIMED_OUT);
	assert_int_equal(
	    kobj_object_wait_one(&A, e, KOBJ_SIG_SIGNALED, kobj_deadline_after(1000000), &obs),
	    K32_ERR_TIMED_OUT);
	assert_int_equal(obs, 0);
	assert_int_equal(kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED), K32_OK);
	assert_int_equal(kobj_object_wait_one(&A, e, KOBJ_SIG_SIGNALED, 0, &obs), K32_OK);
	assert_int_equal(obs, KOBJ_SIG_SIGNALED);
	assert_int_equal(kobj_object_wait_one(&A, e, KOBJ_SIG_SIGNALED, 0, NULL), K32_OK);
	assert_int_equal(kobj_object_wait_one(&A, p, 1, 0, &obs), K32_ERR_NOT_SUPPORTED);
	/* wait_many */
	struct kobj_wait_item items[K32_KOBJ_WAIT_MANY_MAX + 1];
	memset(items, 0, sizeof(items));
	for (int i = 0; i <= K32_KOBJ_WAIT_MANY_MAX; i++) {
		items[i].handle = e2;
		items[i].waitfor = KOBJ_SIG_SIGNALED;
	}
	assert_int_equal(kobj_object_wait_many(&A, items, K32_KOBJ_WAIT_MANY_MAX + 1, 0),
			 K32_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_WAIT_MANY_MAX"));
	assert_int_equal(kobj_object_wait_many(&A, items, 4, kobj_deadline_after(1000000)),
			 K32_ERR_TIMED_OUT);
	items[2].handle = e;
	assert_int_equal(kobj_object_wait_many(&A, items, 4, 0), K32_OK);
	assert_int_equal(items[2].pending, KOBJ_SIG_SIGNALED);
	assert_int_equal(items[0].pending, 0);
	items[1].handle = p;
	assert_int_equal(kobj_object_wait_many(&A, items, 4, 0), K32_ERR_NOT_SUPPORTED);
	items[1].handle = 0x4242;
	assert_int_equal(kobj_object_wait_many(&A, items, 4, 0), K32_ERR_BAD_HANDLE);
	assert_int_equal(kobj_object_wait_many(&A, NULL, 1, 0), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_object_wait_many(&A, NULL, 0, kobj_deadline_after(100000)),
			 K32_ERR_TIMED_OUT);
	/* Channel: readable after a write, peer-closed after close. */
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, "a", 1, NULL, 0), K32_OK);
	assert_int_equal(kobj_object_wait_one(&A, c1, KOBJ_SIG_READABLE, 0, &obs), K32_OK);
	kobj_handle_close(&A, c0);
	assert_int_equal(kobj_object_wait_one(&A, c1, KOBJ_SIG_PEER_CLOSED, 0, &obs), K32_OK);
	assert_int_equal(obs, KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED);
	kobj_handle_close(&A, c1);
	kobj_handle_close(&A, e);
	kobj_handle_close(&A, e2);
	kobj_handle_close(&A, p);
	pools_empty();
}

struct waiter_arg {
	struct kobj_owner *owner;
	kobj_handle_t h, h2;
	uint32_t signals;
	k32_status_t st;
	uint32_t observed;
	int mode; /* 0 wait_one, 1 wait_many, 2 port_wait */
	struct kobj_packet pkt;
};

static void waiter_fn(void *p)
{
	struct waiter_arg *a = p;
	if (a->mode == 0) {
		a->st = kobj_object_wait_one(a->owner, a->h, a->signals,
					     kobj_deadline_after(10000000000), &a->observed);
	} else if (a->mode == 1) {
		struct kobj_wait_item it[2] = {{a->h, a->signals, 0}, {a->h2, a->signals, 0}};
		a->st = kobj_object_wait_many(a->owner, it, 2, kobj_deadline_after(10000000000));
		a->observed = it[0].pending | it[1].pending;
	} else {
		a->st = kobj_port_wait(a->owner, a->h, kobj_deadline_after(10000000000), &a->pkt);
	}
}

static struct k32_task *start_waiter(struct waiter_arg *a, struct kobj_object *obj,
				     uint32_t expect_obs)
{
	struct k32_task *t;
	struct k32_err err;
	assert_int_equal(k32_plat()->task_create(&t, "waiter", waiter_fn, a, 0, -1, &err), K32_OK);
	/* Wait until the waiter is registered (its node is on the list). */
	for (int i = 0; i < 100000 && obs_count(obj) < expect_obs; i++)
		k32_plat()->sleep_us(50);
	assert_true(obs_count(obj) >= expect_obs);
	return t;
}

static void test_wait_cross_thread(void **state)
{
	(void)state;
	kobj_handle_t e, e2, c0, c1, p;
	struct waiter_arg a = {.owner = &B, .signals = KOBJ_SIG_SIGNALED};
	assert_int_equal(kobj_event_create(&B, 0, &e), K32_OK);
	assert_int_equal(kobj_event_create(&B, 0, &e2), K32_OK);
	struct kobj_object *eo = obj_of(&B, e), *e2o = obj_of(&B, e2);
	/* Spin-free and spinning variants both wake. */
	for (int spin = 0; spin < 2; spin++) {
		kobj_node_set_spin_ns(N, spin ? 2000000 : 0);
		a.h = e;
		a.mode = 0;
		struct k32_task *t = start_waiter(&a, eo, 1);
		assert_int_equal(kobj_object_signal(&B, e, 0, KOBJ_SIG_SIGNALED), K32_OK);
		k32_plat()->task_join(t);
		assert_int_equal(a.st, K32_OK);
		assert_true(a.observed & KOBJ_SIG_SIGNALED);
		kobj_object_signal(&B, e, KOBJ_SIG_SIGNALED, 0);
	}
	kobj_node_set_spin_ns(N, K32_KOBJ_SPIN_NS);
	/* wait_many woken by the second item. */
	a.mode = 1;
	a.h = e;
	a.h2 = e2;
	struct k32_task *t = start_waiter(&a, e2o, 1);
	assert_int_equal(kobj_object_signal(&B, e2, 0, KOBJ_SIG_SIGNALED), K32_OK);
	k32_plat()->task_join(t);
	assert_int_equal(a.st, K32_OK);
	assert_int_equal(obs_count(eo), 0);
	/* Closing the handle from another thread cancels the wait. */
	a.mode = 0;
	a.h = e;
	t = start_waiter(&a, eo, 1);
	assert_int_equal(kobj_handle_close(&B, e), K32_OK);
	k32_plat()->task_join(t);
	assert_int_equal(a.st, K32_ERR_CANCELED);
	assert_true(a.observed & KOBJ_SIG_HANDLE_CLOSED);
	/* Channel write wakes a reader waiting for READABLE. */
	assert_int_equal(kobj_channel_create(&B, 0, &c0, &c1), K32_OK);
	a.h = c1;
	a.signals = KOBJ_SIG_READABLE;
	t = start_waiter(&a, obj_of(&B, c1), 1);
	assert_int_equal(kobj_channel_write(&B, c0, 0, "z", 1, NULL, 0), K32_OK);
	k32_plat()->task_join(t);
	assert_int_equal(a.st, K32_OK);
	/* port_wait woken by a user packet, then cancelled by close. */
	assert_int_equal(kobj_port_create(&B, 0, &p), K32_OK);
	a.mode = 2;
	a.h = p;
	t = start_waiter(&a, obj_of(&B, p), 1);
	struct kobj_packet pkt = {.key = 99};
	assert_int_equal(kobj_port_queue(&B, p, &pkt), K32_OK);
	k32_plat()->task_join(t);
	assert_int_equal(a.st, K32_OK);
	assert_int_equal(a.pkt.key, 99);
	t = start_waiter(&a, obj_of(&B, p), 1);
	kobj_owner_fini(&B); /* teardown while the owner's thread is blocked */
	k32_plat()->task_join(t);
	assert_int_equal(a.st, K32_ERR_CANCELED);
	kobj_owner_fini(&A);
	pools_empty();
}

/*
 * A wait that starts while another thread closes its handle. The wait runs on this thread; the
 * wait hook (kobj_int.h) starts the closing thread at one of two points: before the wait gate
 * goes up (the close then completes before the wait registers) or right after (the close must
 * then wait for the registration and cancel it). Either way the wait ends CANCELED with
 * HANDLE_CLOSED, never TIMED_OUT (without the gate the first case slept to its deadline, and
 * with an infinite deadline forever). Table: wait_one / wait_many / port_wait x both points x
 * with another handle keeping the object alive or not.
 */
static struct {
	struct kobj_owner *owner;
	kobj_handle_t h;
	int where; /* hook point that starts the closer */
	int fired;
	struct k32_task *closer;
	atomic_int closed; /* the closer's kobj_handle_close returned */
	k32_status_t close_st;
} race;

static void closer_fn(void *p)
{
	(void)p;
	race.close_st = kobj_handle_close(race.owner, race.h);
	atomic_store(&race.closed, 1);
}

static void race_hook(struct kobj_owner *owner, int where)
{
	struct k32_err err;
	if (owner != race.owner || where != race.where || race.fired)
		return;
	race.fired = 1;
	assert_int_equal(
	    k32_plat()->task_create(&race.closer, "closer", closer_fn, NULL, 0, -1, &err), K32_OK);
	if (where == 0) {
		k32_plat()->task_join(race.closer); /* closed before the wait registers */
		race.closer = NULL;
		assert_int_equal(atomic_load(&race.closed), 1);
	} else {
		/* The gate is up: the closer changed the slot and now waits for us. */
		k32_plat()->sleep_us(3000);
		assert_int_equal(atomic_load(&race.closed), 0);
	}
}

static void test_wait_start_races_close(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++)
		for (int where = 0; where < 2; where++)
			for (int keep = 0; keep < 2; keep++) {
				kobj_handle_t h, other, keeper = KOBJ_HANDLE_INVALID;
				if (mode == 2)
					assert_int_equal(kobj_port_create(&B, 0, &h), K32_OK);
				else
					assert_int_equal(kobj_event_create(&B, 0, &h), K32_OK);
				assert_int_equal(kobj_event_create(&B, 0, &other), K32_OK);
				if (keep)
					assert_int_equal(
					    kobj_handle_duplicate(&B, h, KOBJ_RIGHT_SAME_RIGHTS,
								  &keeper),
					    K32_OK);
				race.owner = &B;
				race.h = h;
				race.where = where;
				race.fired = 0;
				race.closer = NULL;
				atomic_store(&race.closed, 0);
				N->wait_hook = race_hook;
				kobj_time_t dl = kobj_deadline_after(3000000000);
				k32_status_t st;
				uint32_t obs = 0;
				struct kobj_packet pkt;
				if (mode == 0) {
					st = kobj_object_wait_one(&B, h, KOBJ_SIG_SIGNALED, dl,
								  &obs);
				} else if (mode == 1) {
					struct kobj_wait_item it[2] = {
					    {other, KOBJ_SIG_SIGNALED, 0},
					    {h, KOBJ_SIG_SIGNALED, 0}};
					st = kobj_object_wait_many(&B, it, 2, dl);
					obs = it[1].pending;
				} else {
					st = kobj_port_wait(&B, h, dl, &pkt);
					obs = KOBJ_SIG_HANDLE_CLOSED;
				}
				N->wait_hook = NULL;
				if (race.closer)
					k32_plat()->task_join(race.closer);
				assert_int_equal(race.fired, 1);
				assert_int_equal(race.close_st, K32_OK);
				if (st != K32_ERR_CANCELED)
					fail_msg(
					    "mode %d where %d keep %d: status %d, want CANCELED",
					    mode, where, keep, (int)st);
				assert_true(obs & KOBJ_SIG_HANDLE_CLOSED);
				kobj_handle_close(&B, other);
				kobj_handle_close(&B, keeper);
				pools_empty();
			}
}

/* ---- port -------------------------------------------------------------------------------- */

static void test_port(void **state)
{
	(void)state;
	kobj_handle_t p, e, c0, c1;
	struct kobj_packet pkt, got;
	assert_int_equal(kobj_port_create(&A, 1, &p), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_port_create(&A, 0, &p), K32_OK);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_ERR_TIMED_OUT);
	assert_int_equal(kobj_port_wait(&A, p, kobj_deadline_after(1000000), &got),
			 K32_ERR_TIMED_OUT);
	assert_int_equal(kobj_port_wait(&A, p, 0, NULL), K32_ERR_INVALID_ARGS);
	/* User packets: FIFO, budget. */
	memset(&pkt, 0, sizeof(pkt));
	for (int i = 0; i < K32_KOBJ_PORT_USER_BUDGET; i++) {
		pkt.key = (uint64_t)i;
		pkt.user[0] = (uint8_t)i;
		pkt.type = 77; /* forced to USER */
		assert_int_equal(kobj_port_queue(&A, p, &pkt), K32_OK);
	}
	assert_int_equal(kobj_port_queue(&A, p, &pkt), K32_ERR_SHOULD_WAIT);
	assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_PORT_USER_BUDGET"));
	assert_int_equal(kobj_port_queue(&A, p, NULL), K32_ERR_INVALID_ARGS);
	for (int i = 0; i < K32_KOBJ_PORT_USER_BUDGET; i++) {
		assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_OK);
		assert_int_equal(got.key, (uint64_t)i);
		assert_int_equal(got.type, KOBJ_PKT_TYPE_USER);
		assert_int_equal(got.user[0], i);
	}
	/* wait_async: fires once when the signal comes, carrying observed signals. */
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(
	    kobj_object_wait_async(&A, e, p, 5, KOBJ_SIG_SIGNALED, KOBJ_WAIT_ASYNC_TIMESTAMP),
	    K32_OK);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_ERR_TIMED_OUT);
	assert_int_equal(kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED | KOBJ_SIG_USER(2)),
			 K32_OK);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_OK);
	assert_int_equal(got.key, 5);
	assert_int_equal(got.type, KOBJ_PKT_TYPE_SIGNAL_ONE);
	assert_int_equal(got.signal.trigger, KOBJ_SIG_SIGNALED);
	assert_int_equal(got.signal.observed, KOBJ_SIG_SIGNALED | KOBJ_SIG_USER(2));
	assert_int_equal(got.signal.count, 1);
	assert_true(got.signal.timestamp > 0);
	/* One-shot: no second packet. */
	kobj_object_signal(&A, e, KOBJ_SIG_SIGNALED, 0);
	kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_ERR_TIMED_OUT);
	/* Already active: queued at once. */
	assert_int_equal(kobj_object_wait_async(&A, e, p, 6, KOBJ_SIG_SIGNALED, 0), K32_OK);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_OK);
	assert_int_equal(got.key, 6);
	assert_int_equal(got.signal.timestamp, 0);
	/* Errors. */
	assert_int_equal(kobj_object_wait_async(&A, p, p, 1, 1, 0), K32_ERR_NOT_SUPPORTED);
	assert_int_equal(kobj_object_wait_async(&A, e, e, 1, 1, 0), K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_object_wait_async(&A, e, p, 1, 1, 0x10), K32_ERR_INVALID_ARGS);
	/* port_cancel removes armed observers and queued packets of (source, key). */
	kobj_object_signal(&A, e, KOBJ_SIG_SIGNALED, 0);
	assert_int_equal(kobj_object_wait_async(&A, e, p, 8, KOBJ_SIG_SIGNALED, 0), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, e, p, 9, KOBJ_SIG_USER(0), 0), K32_OK);
	assert_int_equal(kobj_port_cancel(&A, p, e, 8), K32_OK);
	assert_int_equal(kobj_port_cancel(&A, p, e, 8), K32_ERR_NOT_FOUND);
	kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED | KOBJ_SIG_USER(0));
	assert_int_equal(kobj_port_cancel(&A, p, e, 9), K32_OK); /* the queued packet */
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_ERR_TIMED_OUT);
	/* Closing the observed handle removes its observers; queued packets stay. */
	assert_int_equal(kobj_channel_create(&A, 0, &c0, &c1), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, c1, p, 10, KOBJ_SIG_READABLE, 0), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, c1, p, 11, KOBJ_SIG_USER(5), 0), K32_OK);
	assert_int_equal(kobj_channel_write(&A, c0, 0, "q", 1, NULL, 0), K32_OK);
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	assert_int_equal(st.port_observers, 2);
	kobj_handle_close(&A, c1);
	kobj_stats_get(N, &st);
	assert_int_equal(st.port_observers, 1); /* the queued one */
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_OK);
	assert_int_equal(got.key, 10);
	/* Peer closed fires observers waiting for PEER_CLOSED. */
	kobj_handle_t d0, d1;
	assert_int_equal(kobj_channel_create(&A, 0, &d0, &d1), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, d1, p, 12, KOBJ_SIG_PEER_CLOSED, 0), K32_OK);
	kobj_handle_close(&A, d0);
	assert_int_equal(kobj_port_wait(&A, p, 0, &got), K32_OK);
	assert_int_equal(got.key, 12);
	/* A port closed with armed observers and queued packets returns them all. */
	assert_int_equal(kobj_object_wait_async(&A, e, p, 13, KOBJ_SIG_USER(6), 0), K32_OK);
	assert_int_equal(kobj_object_wait_async(&A, e, p, 14, KOBJ_SIG_SIGNALED, 0), K32_OK);
	assert_int_equal(kobj_port_queue(&A, p, &pkt), K32_OK);
	kobj_handle_close(&A, p);
	kobj_object_signal(&A, e, 0, KOBJ_SIG_USER(6)); /* fires into the dead port */
	kobj_handle_close(&A, e);
	kobj_handle_close(&A, c0);
	kobj_handle_close(&A, d1);
	pools_empty();
}

static void test_port_observer_pool(void **state)
{
	(void)state;
	/* Several owners share an event and a port; each may arm K32_KOBJ_OWNER_MAX_OBSERVERS,
	 * together they spend the node-wide pool. */
	enum { N = K32_KOBJ_MAX_PORT_OBSERVERS / K32_KOBJ_OWNER_MAX_OBSERVERS + 1 };
	struct kobj_owner o[N];
	kobj_handle_t p[N], e[N], ap, ae;
	assert_int_equal(kobj_port_create(&A, 0, &ap), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &ae), K32_OK);
	uint32_t armed = 0;
	k32_status_t st = K32_OK;
	for (int k = 0; k < N; k++) {
		kobj_handle_t dp, de;
		kobj_owner_init_t(&o[k], "pod many", 0);
		assert_int_equal(kobj_handle_duplicate(&A, ap, KOBJ_RIGHT_SAME_RIGHTS, &dp),
				 K32_OK);
		assert_int_equal(kobj_handle_duplicate(&A, ae, KOBJ_RIGHT_SAME_RIGHTS, &de),
				 K32_OK);
		assert_int_equal(kobj_handle_transfer(&A, dp, &o[k], &p[k]), K32_OK);
		assert_int_equal(kobj_handle_transfer(&A, de, &o[k], &e[k]), K32_OK);
		for (uint32_t i = 0; i <= K32_KOBJ_OWNER_MAX_OBSERVERS; i++) {
			st = kobj_object_wait_async(&o[k], e[k], p[k], i, KOBJ_SIG_USER(0), 0);
			if (st != K32_OK)
				break;
			armed++;
		}
		if (armed < K32_KOBJ_MAX_PORT_OBSERVERS) {
			assert_int_equal(st, K32_ERR_NO_RESOURCES); /* this owner's share */
			assert_non_null(
			    strstr(kobj_owner_last_error(&o[k]), "K32_KOBJ_OWNER_MAX_OBSERVERS"));
		}
	}
	assert_int_equal(armed, K32_KOBJ_MAX_PORT_OBSERVERS);
	assert_int_equal(st, K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&o[N - 1]), "K32_KOBJ_MAX_PORT_OBSERVERS"));
	/* Firing the event queues every packet; draining releases every share. */
	assert_int_equal(kobj_object_signal(&A, ae, 0, KOBJ_SIG_USER(0)), K32_OK);
	struct kobj_packet pkt;
	uint32_t got = 0;
	while (kobj_port_wait(&A, ap, 0, &pkt) == K32_OK)
		got++;
	assert_int_equal(got, K32_KOBJ_MAX_PORT_OBSERVERS);
	for (int k = 0; k < N; k++)
		kobj_owner_fini(&o[k]);
	kobj_handle_close(&A, ae);
	kobj_handle_close(&A, ap);
	pools_empty();
}

static uint32_t accounts_in_use(void)
{
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	return st.accounts;
}

/* Per-owner shares of the node-wide pools: messages, user packets; accounts outlive their
 * owner until drained. */
static void test_owner_quotas(void **state)
{
	(void)state;
	struct kobj_owner x;
	kobj_handle_t c[8][2], xc[8], p, px;
	uint32_t n, nh;
	uint8_t b[8];
	uint32_t base = accounts_in_use();
	kobj_owner_init_t(&x, "pod greedy", 0);
	assert_int_equal(accounts_in_use(), base + 1);
	/* x writes into channels whose read ends A holds. */
	for (int i = 0; i < 8; i++) {
		assert_int_equal(kobj_channel_create(&A, 0, &c[i][0], &c[i][1]), K32_OK);
		assert_int_equal(kobj_handle_transfer(&A, c[i][0], &x, &xc[i]), K32_OK);
	}
	uint32_t sent = 0;
	k32_status_t st = K32_OK;
	for (int i = 0; i < 8 && st == K32_OK; i++)
		for (int k = 0; k < K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS; k++) {
			st = kobj_channel_write(&x, xc[i], 0, "m", 1, NULL, 0);
			if (st != K32_OK)
				break;
			sent++;
		}
	assert_int_equal(sent, K32_KOBJ_OWNER_MAX_MESSAGES);
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&x), "K32_KOBJ_OWNER_MAX_MESSAGES"));
	/* Another owner is not affected. */
	assert_int_equal(kobj_channel_write(&A, c[7][1], 0, "a", 1, NULL, 0), K32_OK);
	/* Reading one of x's messages gives x one unit back. */
	assert_int_equal(kobj_channel_read(&A, c[0][1], 0, b, NULL, 8, 0, &n, &nh), K32_OK);
	assert_int_equal(kobj_channel_write(&x, xc[0], 0, "m", 1, NULL, 0), K32_OK);
	/* Over the share into an empty queue: NO_RESOURCES; into a full one the writer is told
	 * to wait for the reader (SHOULD_WAIT, WRITABLE off), which is what it must do first. */
	assert_int_equal(kobj_channel_write(&x, xc[5], 0, "m", 1, NULL, 0), K32_ERR_NO_RESOURCES);
	assert_int_equal(kobj_channel_write(&x, xc[0], 0, "m", 1, NULL, 0), K32_ERR_SHOULD_WAIT);
	assert_int_equal(sig_of(&x, xc[0]) & KOBJ_SIG_WRITABLE, 0);
	/* User packets. */
	assert_int_equal(kobj_port_create(&A, 0, &p), K32_OK);
	kobj_handle_t dp;
	assert_int_equal(kobj_handle_duplicate(&A, p, KOBJ_RIGHT_SAME_RIGHTS, &dp), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, dp, &x, &px), K32_OK);
	struct kobj_packet pkt = {.key = 1};
	uint32_t queued = 0;
	while ((st = kobj_port_queue(&x, px, &pkt)) == K32_OK)
		queued++;
	/* The port's own budget (16) comes first here; a second port shows the owner's share. */
	assert_int_equal(queued, K32_KOBJ_PORT_USER_BUDGET);
	assert_int_equal(st, K32_ERR_SHOULD_WAIT);
	kobj_handle_t p2, dp2, px2;
	assert_int_equal(kobj_port_create(&A, 0, &p2), K32_OK);
	assert_int_equal(kobj_handle_duplicate(&A, p2, KOBJ_RIGHT_SAME_RIGHTS, &dp2), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, dp2, &x, &px2), K32_OK);
	while ((st = kobj_port_queue(&x, px2, &pkt)) == K32_OK)
		queued++;
	assert_int_equal(queued, K32_KOBJ_OWNER_MAX_PACKETS);
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(kobj_owner_last_error(&x), "K32_KOBJ_OWNER_MAX_PACKETS"));
	/* x goes away; its messages and packets stay queued at A, so its account stays. */
	kobj_owner_fini(&x);
	assert_int_equal(accounts_in_use(), base + 1);
	for (int i = 0; i < 8; i++)
		kobj_handle_close(&A, c[i][1]);
	assert_int_equal(accounts_in_use(), base + 1); /* the packets */
	kobj_handle_close(&A, p);
	kobj_handle_close(&A, p2);
	assert_int_equal(accounts_in_use(), base);
	pools_empty();
}

/* ---- properties ---------------------------------------------------------------------------- */

static void test_properties(void **state)
{
	(void)state;
	kobj_handle_t e, s0, s1, ro;
	char name[KOBJ_MAX_NAME_LEN];
	uint32_t v;
	struct kobj_stats st;
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_socket_create(&A, 0, 256, &s0, &s1), K32_OK);
	/* Names: unset reads "", set/get, cut at KOBJ_MAX_NAME_LEN - 1, "" removes. */
	assert_int_equal(kobj_object_get_property(&A, e, KOBJ_PROP_NAME, name, sizeof(name)),
			 K32_OK);
	assert_string_equal(name, "");
	assert_int_equal(kobj_object_set_property(&A, e, KOBJ_PROP_NAME, "bme688.ready", 12),
			 K32_OK);
	assert_int_equal(kobj_object_get_property(&A, e, KOBJ_PROP_NAME, name, sizeof(name)),
			 K32_OK);
	assert_string_equal(name, "bme688.ready");
	const char *longname = "0123456789abcdefghijklmnopqrstuvwxyz";
	assert_int_equal(kobj_object_set_property(&A, e, KOBJ_PROP_NAME, longname, 36), K32_OK);
	assert_int_equal(kobj_object_get_property(&A, e, KOBJ_PROP_NAME, name, sizeof(name)),
			 K32_OK);
	assert_int_equal(strlen(name), KOBJ_MAX_NAME_LEN - 1);
	kobj_stats_get(N, &st);
	assert_int_equal(st.names, 1);
	/* A name set on one half of a pair goes when the pair does; a closed event frees its. */
	assert_int_equal(kobj_object_set_property(&A, s1, KOBJ_PROP_NAME, "rx", 2), K32_OK);
	kobj_stats_get(N, &st);
	assert_int_equal(st.names, 2);
	assert_int_equal(kobj_object_set_property(&A, e, KOBJ_PROP_NAME, "", 0), K32_OK);
	kobj_stats_get(N, &st);
	assert_int_equal(st.names, 1);
	/* Error table. */
	assert_int_equal(kobj_handle_duplicate(&A, e, KOBJ_RIGHT_WAIT, &ro), K32_OK);
	const struct {
		kobj_handle_t h;
		uint32_t prop, size;
		int set;
		k32_status_t want;
	} rows[] = {
	    {e, KOBJ_PROP_NAME, 8, 0, K32_ERR_BUFFER_TOO_SMALL},
	    {e, 99, 4, 0, K32_ERR_NOT_FOUND},
	    {e, 99, 4, 1, K32_ERR_NOT_FOUND},
	    {e, KOBJ_PROP_SOCKET_RX_THRESHOLD, 4, 1, K32_ERR_WRONG_TYPE},
	    {s0, KOBJ_PROP_SOCKET_RX_THRESHOLD, 2, 1, K32_ERR_INVALID_ARGS},
	    {s0, KOBJ_PROP_SOCKET_TX_THRESHOLD, 8, 0, K32_ERR_INVALID_ARGS},
	    {ro, KOBJ_PROP_NAME, KOBJ_MAX_NAME_LEN, 0, K32_ERR_ACCESS_DENIED},
	    {ro, KOBJ_PROP_NAME, 1, 1, K32_ERR_ACCESS_DENIED},
	    {0x7777u, KOBJ_PROP_NAME, 4, 1, K32_ERR_BAD_HANDLE},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t buf[KOBJ_MAX_NAME_LEN] = {'x', 0};
		k32_status_t got =
		    rows[i].set
			? kobj_object_set_property(&A, rows[i].h, rows[i].prop, buf, rows[i].size)
			: kobj_object_get_property(&A, rows[i].h, rows[i].prop, buf, rows[i].size);
		if (got != rows[i].want)
			fail_msg("row %zu: %d, want %d", i, (int)got, (int)rows[i].want);
	}
	/* Timer slack: 0 at creation, set/get, timer_set's slack argument replaces it. */
	kobj_handle_t t;
	int64_t slack = -1;
	assert_int_equal(kobj_timer_create(&A, 0, 0, &t), K32_OK);
	assert_int_equal(kobj_object_get_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 8), K32_OK);
	assert_int_equal(slack, 0);
	slack = 500000;
	assert_int_equal(kobj_object_set_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 8), K32_OK);
	slack = 0;
	assert_int_equal(kobj_object_get_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 8), K32_OK);
	assert_int_equal(slack, 500000);
	assert_int_equal(kobj_timer_set(&A, t, KOBJ_TIME_INFINITE, 7000, 0), K32_OK);
	assert_int_equal(kobj_object_get_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 8), K32_OK);
	assert_int_equal(slack, 7000);
	slack = -1;
	assert_int_equal(kobj_object_set_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 8),
			 K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_object_set_property(&A, t, KOBJ_PROP_TIMER_SLACK, &slack, 4),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_object_set_property(&A, e, KOBJ_PROP_TIMER_SLACK, &slack, 8),
			 K32_ERR_WRONG_TYPE);
	assert_int_equal(kobj_timer_cancel(&A, t), K32_OK);
	assert_int_equal(kobj_handle_close(&A, t), K32_OK);
	/* Thresholds: over capacity refused; READ_THRESHOLD follows bytes queued on s1. */
	v = 257;
	assert_int_equal(kobj_object_set_property(&A, s1, KOBJ_PROP_SOCKET_RX_THRESHOLD, &v, 4),
			 K32_ERR_INVALID_ARGS);
	v = 100;
	assert_int_equal(kobj_object_set_property(&A, s1, KOBJ_PROP_SOCKET_RX_THRESHOLD, &v, 4),
			 K32_OK);
	v = 0;
	assert_int_equal(kobj_object_get_property(&A, s1, KOBJ_PROP_SOCKET_RX_THRESHOLD, &v, 4),
			 K32_OK);
	assert_int_equal(v, 100);
	uint8_t data[256] = {0}, got[256];
	uint32_t n;
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 60, &n), K32_OK);
	assert_int_equal(sig_of(&A, s1) & KOBJ_SIG_SOCKET_READ_THRESHOLD, 0);
	assert_int_equal(sig_of(&A, s1) & KOBJ_SIG_READABLE, KOBJ_SIG_READABLE);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 40, &n), K32_OK);
	assert_int_equal(sig_of(&A, s1) & KOBJ_SIG_SOCKET_READ_THRESHOLD,
			 KOBJ_SIG_SOCKET_READ_THRESHOLD);
	assert_int_equal(kobj_object_wait_one(&A, s1, KOBJ_SIG_SOCKET_READ_THRESHOLD, 0, NULL),
			 K32_OK);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 1, &n), K32_OK);
	assert_int_equal(sig_of(&A, s1) & KOBJ_SIG_SOCKET_READ_THRESHOLD, 0);
	/* WRITE_THRESHOLD on s0 follows the room in s1's ring (256 - 99 queued = 157). */
	v = 150;
	assert_int_equal(kobj_object_set_property(&A, s0, KOBJ_PROP_SOCKET_TX_THRESHOLD, &v, 4),
			 K32_OK);
	assert_int_equal(sig_of(&A, s0) & KOBJ_SIG_SOCKET_WRITE_THRESHOLD,
			 KOBJ_SIG_SOCKET_WRITE_THRESHOLD);
	assert_int_equal(kobj_socket_write(&A, s0, 0, data, 10, &n), K32_OK);
	assert_int_equal(sig_of(&A, s0) & KOBJ_SIG_SOCKET_WRITE_THRESHOLD, 0);
	assert_int_equal(kobj_socket_read(&A, s1, 0, got, 200, &n), K32_OK);
	assert_int_equal(sig_of(&A, s0) & KOBJ_SIG_SOCKET_WRITE_THRESHOLD,
			 KOBJ_SIG_SOCKET_WRITE_THRESHOLD);
	/* 0 disables; shutdown and a closed peer take WRITE_THRESHOLD away. */
	assert_int_equal(kobj_socket_shutdown(&A, s0, KOBJ_SOCKET_SHUTDOWN_WRITE), K32_OK);
	assert_int_equal(sig_of(&A, s0) & KOBJ_SIG_SOCKET_WRITE_THRESHOLD, 0);
	/* get_info: capacity of each type. */
	struct kobj_info info;
	assert_int_equal(kobj_object_get_info(&A, s1, &info), K32_OK);
	assert_int_equal(info.capacity, 256);
	assert_int_equal(kobj_object_get_info(&A, e, &info), K32_OK);
	assert_int_equal(info.capacity, 0);
	kobj_handle_close(&A, e);
	kobj_handle_close(&A, ro);
	kobj_handle_close(&A, s0);
	kobj_handle_close(&A, s1);
	kobj_stats_get(N, &st);
	assert_int_equal(st.names, 0);
	/* The name pool: an owner's share (NO_RESOURCES), then NO_MEMORY when the pool is spent. */
	const uint32_t share = K32_KOBJ_MAX_NAMES * K32_KOBJ_OWNER_POOL_PCT / 100u;
	struct kobj_owner c;
	kobj_owner_init_t(&c, "pod third", 0);
	struct kobj_owner *who[3] = {&A, &B, &c};
	uint32_t named[3] = {0, 0, 0};
	k32_status_t r[3] = {K32_OK, K32_OK, K32_OK};
	for (int k = 0; k < 3; k++) {
		kobj_handle_t h;
		while (named[k] < K32_KOBJ_MAX_HANDLES - 1 &&
		       kobj_event_create(who[k], 0, &h) == K32_OK &&
		       (r[k] = kobj_object_set_property(who[k], h, KOBJ_PROP_NAME, "n", 1)) ==
			   K32_OK)
			named[k]++;
	}
	if (share < K32_KOBJ_MAX_HANDLES - 1 && 2 * share <= K32_KOBJ_MAX_NAMES) {
		assert_int_equal(named[0], share);
		assert_int_equal(r[0], K32_ERR_NO_RESOURCES);
		assert_non_null(strstr(kobj_owner_last_error(&A), "K32_KOBJ_MAX_NAMES"));
		assert_int_equal(named[0] + named[1] + named[2], K32_KOBJ_MAX_NAMES);
		assert_int_equal(r[2], K32_ERR_NO_MEMORY);
	}
	kobj_owner_fini(&c);
	kobj_owner_fini(&A);
	kobj_owner_fini(&B);
	kobj_owner_init_t(&A, "pod a", 0);
	kobj_owner_init_t(&B, "pod b", 0);
	kobj_stats_get(N, &st);
	assert_int_equal(st.names, 0);
	pools_empty();
}

/* ---- fifo -------------------------------------------------------------------------------- */

static void test_fifo(void **state)
{
	(void)state;
	kobj_handle_t f0, f1;
	uint32_t data[16], got[16], n;
	for (int i = 0; i < 16; i++)
		data[i] = 0x1000u + (uint32_t)i;
	const struct {
		uint32_t count, size;
		k32_status_t want;
	} rows[] = {
	    {0, 4, K32_ERR_OUT_OF_RANGE},
	    {3, 4, K32_ERR_OUT_OF_RANGE},
	    {4, 6, K32_ERR_OUT_OF_RANGE},
	    {4, 0, K32_ERR_OUT_OF_RANGE},
	    {2048, 4, K32_ERR_OUT_OF_RANGE},
	    {1024, 4, K32_OK},
	    {2, 2048, K32_OK},
	    {1, 4096, K32_OK},
	    {1, 8192, K32_ERR_OUT_OF_RANGE},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		k32_status_t st = kobj_fifo_create(&A, rows[i].count, rows[i].size, 0, &f0, &f1);
		assert_int_equal(st, rows[i].want);
		if (st == K32_OK) {
			kobj_handle_close(&A, f0);
			kobj_handle_close(&A, f1);
		}
	}
	assert_int_equal(kobj_fifo_create(&A, 4, 4, 1, &f0, &f1), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_fifo_create(&A, 8, 8, 0, &f0, &f1), K32_OK);
	assert_int_equal(kobj_fifo_read(&A, f1, 8, got, 1, &n), K32_ERR_SHOULD_WAIT);
	assert_int_equal(kobj_fifo_write(&A, f0, 4, data, 1, &n), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_fifo_write(&A, f0, 8, data, 0, &n), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_fifo_write(&A, f0, 8, NULL, 1, &n), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_fifo_write(&A, f0, 8, data, 5, &n), K32_OK);
	assert_int_equal(n, 5);
	assert_int_equal(kobj_fifo_write(&A, f0, 8, data + 10, 5, &n), K32_OK);
	assert_int_equal(n, 3); /* short: 8 slots */
	assert_false(sig_of(&A, f0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_fifo_write(&A, f0, 8, data, 1, &n), K32_ERR_SHOULD_WAIT);
	assert_int_equal(kobj_fifo_read(&A, f1, 8, got, 2, &n), K32_OK);
	assert_int_equal(n, 2);
	assert_memory_equal(got, data, 16);
	assert_true(sig_of(&A, f0) & KOBJ_SIG_WRITABLE);
	assert_int_equal(kobj_fifo_read(&A, f1, 8, got, 8, &n), K32_OK);
	assert_int_equal(n, 6);
	assert_memory_equal(got, data + 4, 6 * 4);
	assert_memory_equal(got + 6, data + 10, 6 * 4);
	assert_int_equal(kobj_fifo_read(&A, f1, 4, got, 1, &n), K32_ERR_OUT_OF_RANGE);
	kobj_handle_close(&A, f0);
	assert_int_equal(kobj_fifo_read(&A, f1, 8, got, 1, &n), K32_ERR_PEER_CLOSED);
	assert_int_equal(kobj_fifo_write(&A, f1, 8, data, 1, &n), K32_ERR_PEER_CLOSED);
	kobj_handle_close(&A, f1);
	pools_empty();
}

/* ---- timer ------------------------------------------------------------------------------- */

static void test_timer(void **state)
{
	(void)state;
	kobj_handle_t t, t2;
	uint32_t obs;
	struct kobj_info info;
	assert_int_equal(kobj_timer_create(&A, 0, 5, &t), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_timer_create(&A, 0, KOBJ_CLOCK_MONOTONIC, &t), K32_OK);
	assert_int_equal(kobj_timer_set(&A, t, 0, -1, 0), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_timer_set(&A, t, 0, 0, 10), K32_ERR_OUT_OF_RANGE);
	/* One-shot: never early. */
	kobj_time_t dl = kobj_deadline_after(3000000);
	assert_int_equal(kobj_timer_set(&A, t, dl, 1000000, 0), K32_OK);
	assert_int_equal(
	    kobj_object_wait_one(&A, t, KOBJ_SIG_SIGNALED, kobj_deadline_after(5000000000), &obs),
	    K32_OK);
	assert_true(kobj_now_ns() >= dl);
	/* Cancel clears SIGNALED; a far deadline does not fire. */
	assert_int_equal(kobj_timer_cancel(&A, t), K32_OK);
	assert_int_equal(sig_of(&A, t), 0);
	assert_int_equal(kobj_timer_set(&A, t, kobj_deadline_after(60000000000), 0, 0), K32_OK);
	assert_int_equal(
	    kobj_object_wait_one(&A, t, KOBJ_SIG_SIGNALED, kobj_deadline_after(2000000), &obs),
	    K32_ERR_TIMED_OUT);
	/* Set SIGNALED by hand is refused; clearing is allowed. */
	assert_int_equal(kobj_object_signal(&A, t, 0, KOBJ_SIG_SIGNALED), K32_ERR_INVALID_ARGS);
	/* Periodic: counts ticks; the owner clears SIGNALED between them. */
	assert_int_equal(kobj_timer_create(&A, 0, KOBJ_CLOCK_MONOTONIC, &t2), K32_OK);
	assert_int_equal(kobj_timer_set(&A, t2, kobj_deadline_after(1000000), 0, 1000000), K32_OK);
	for (int tick = 0; tick < 3; tick++) {
		assert_int_equal(kobj_object_wait_one(&A, t2, KOBJ_SIG_SIGNALED,
						      kobj_deadline_after(5000000000), &obs),
				 K32_OK);
		assert_int_equal(kobj_object_signal(&A, t2, KOBJ_SIG_SIGNALED, 0), K32_OK);
	}
	assert_int_equal(kobj_object_get_info(&A, t2, &info), K32_OK);
	assert_true(info.timer_fired >= 3);
	/* Closing an armed timer disarms it. */
	kobj_handle_close(&A, t2);
	kobj_handle_close(&A, t);
	pools_empty();
}

/* ---- vmo --------------------------------------------------------------------------------- */

static void test_vmo(void **state)
{
	(void)state;
	kobj_handle_t v, v2;
	uint8_t buf[100], got[100];
	uint64_t size;
	void *ptr;
	memset(buf, 0xab, sizeof(buf));
	assert_int_equal(kobj_vmo_create(&A, 4096, 0x8, &v), K32_ERR_INVALID_ARGS);
	assert_int_equal(kobj_vmo_create(&A, 4096, KOBJ_VMO_PSRAM, &v), K32_OK);
	assert_int_equal(kobj_vmo_get_size(&A, v, &size), K32_OK);
	assert_int_equal(size, 4096);
	assert_int_equal(kobj_vmo_read(&A, v, got, 4000, 96), K32_OK);
	for (int i = 0; i < 96; i++)
		assert_int_equal(got[i], 0); /* zeroed */
	assert_int_equal(kobj_vmo_write(&A, v, buf, 4000, 96), K32_OK);
	assert_int_equal(kobj_vmo_write(&A, v, buf, 4000, 97), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_vmo_read(&A, v, got, UINT64_MAX, 2), K32_ERR_OUT_OF_RANGE);
	assert_int_equal(kobj_vmo_read(&A, v, NULL, 0, 2), K32_ERR_INVALID_ARGS);
	/* Shared through a duplicate (same bytes). */
	assert_int_equal(kobj_handle_duplicate(&A, v, KOBJ_RIGHT_READ | KOBJ_RIGHT_INSPECT, &v2),
			 K32_OK);
	assert_int_equal(kobj_vmo_read(&A, v2, got, 4000, 96), K32_OK);
	assert_memory_equal(got, buf, 96);
	assert_int_equal(kobj_vmo_write(&A, v2, buf, 0, 1), K32_ERR_ACCESS_DENIED);
	/* Borrow pins it past the last handle close. */
	assert_int_equal(kobj_vmo_return(&A, v), K32_ERR_BAD_STATE);
	assert_int_equal(kobj_vmo_borrow(&A, v, &ptr, &size), K32_OK);
	assert_int_equal(((uint8_t *)ptr)[4000], 0xab);
	assert_int_equal(kobj_vmo_return(&A, v), K32_OK);
	kobj_handle_close(&A, v2);
	kobj_handle_close(&A, v);
	pools_empty();
}

/* ---- teardown ---------------------------------------------------------------------------- */

/* Moves a handle between owners, as the runtime does when it hands objects to a pod. */
static kobj_handle_t move_to(struct kobj_owner *from, kobj_handle_t h, struct kobj_owner *to)
{
	kobj_handle_t out;
	assert_int_equal(kobj_handle_transfer(from, h, to, &out), K32_OK);
	assert_int_equal(kobj_handle_close(from, h), K32_ERR_BAD_HANDLE);
	return out;
}

static void test_transfer_errors(void **state)
{
	(void)state;
	struct kobj_owner tiny;
	kobj_handle_t e, x, out;
	kobj_owner_init_t(&tiny, "pod tiny", 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(kobj_event_create(&tiny, 0, &x), K32_OK);
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, e, &tiny, &out), K32_ERR_NO_RESOURCES);
	assert_int_equal(kobj_object_signal(&A, e, 0, KOBJ_SIG_SIGNALED), K32_OK); /* kept */
	assert_int_equal(kobj_handle_transfer(&A, 0x777, &tiny, &out), K32_ERR_BAD_HANDLE);
	kobj_owner_fini(&tiny);
	assert_int_equal(kobj_handle_transfer(&A, e, &tiny, &out), K32_ERR_NO_RESOURCES);
	assert_int_equal(kobj_handle_transfer(&A, e, &B, &out), K32_OK);
	assert_int_equal(kobj_object_wait_one(&B, out, KOBJ_SIG_SIGNALED, 0, NULL), K32_OK);
}

static void test_owner_teardown(void **state)
{
	(void)state;
	kobj_handle_t a0, a1, ep0, ep1, s0, s1, f0, f1, port, vmo, timer, ev;
	/* A keeps one end of each pair; B gets the other plus objects of its own. */
	assert_int_equal(kobj_channel_create(&A, 0, &a0, &a1), K32_OK);
	assert_int_equal(kobj_eventpair_create(&A, 0, &ep0, &ep1), K32_OK);
	assert_int_equal(kobj_socket_create(&A, 0, 0, &s0, &s1), K32_OK);
	assert_int_equal(kobj_fifo_create(&A, 4, 4, 0, &f0, &f1), K32_OK);
	a1 = move_to(&A, a1, &B);
	ep1 = move_to(&A, ep1, &B);
	s1 = move_to(&A, s1, &B);
	f1 = move_to(&A, f1, &B);
	/* B's queue holds a message carrying an event handle; B has armed observers, a queued
	 * packet, a VMO and an armed timer. */
	assert_int_equal(kobj_event_create(&A, 0, &ev), K32_OK);
	assert_int_equal(kobj_channel_write(&A, a0, 0, "m", 1, &ev, 1), K32_OK);
	assert_int_equal(kobj_port_create(&B, 0, &port), K32_OK);
	assert_int_equal(kobj_object_wait_async(&B, s1, port, 1, KOBJ_SIG_READABLE, 0), K32_OK);
	assert_int_equal(kobj_object_wait_async(&B, a1, port, 2, KOBJ_SIG_READABLE, 0), K32_OK);
	assert_int_equal(kobj_port_queue(&B, port, &(struct kobj_packet){.key = 3}), K32_OK);
	assert_int_equal(kobj_vmo_create(&B, 1000, 0, &vmo), K32_OK);
	assert_int_equal(kobj_timer_create(&B, 0, KOBJ_CLOCK_MONOTONIC, &timer), K32_OK);
	assert_int_equal(kobj_timer_set(&B, timer, kobj_deadline_after(60000000000), 0, 0), K32_OK);

	/* A waits (another thread) for PEER_CLOSED on its channel end while B is torn down. */
	struct waiter_arg w = {.owner = &A, .h = a0, .signals = KOBJ_SIG_PEER_CLOSED, .mode = 0};
	struct k32_task *t = start_waiter(&w, obj_of(&A, a0), 1);
	kobj_owner_fini(&B);
	k32_plat()->task_join(t);
	assert_int_equal(w.st, K32_OK);
	assert_true(w.observed & KOBJ_SIG_PEER_CLOSED);
	assert_int_equal(kobj_owner_handle_count(&B), 0);
	assert_int_equal(kobj_object_signal(&B, vmo, 0, 0), K32_ERR_BAD_HANDLE);
	assert_true(sig_of(&A, ep0) & KOBJ_SIG_PEER_CLOSED);
	assert_true(sig_of(&A, s0) & KOBJ_SIG_PEER_CLOSED);
	assert_true(sig_of(&A, f0) & KOBJ_SIG_PEER_CLOSED);
	uint32_t n;
	assert_int_equal(kobj_channel_write(&A, a0, 0, "x", 1, NULL, 0), K32_ERR_PEER_CLOSED);
	assert_int_equal(kobj_socket_write(&A, s0, 0, "x", 1, &n), K32_ERR_PEER_CLOSED);
	/* Everything B alone held is back in the pools already. */
	struct kobj_stats st;
	kobj_stats_get(N, &st);
	assert_int_equal(st.in_use[KOBJ_TYPE_PORT], 0);
	assert_int_equal(st.in_use[KOBJ_TYPE_VMO], 0);
	assert_int_equal(st.in_use[KOBJ_TYPE_TIMER], 0);
	assert_int_equal(st.in_use[KOBJ_TYPE_EVENT], 0); /* the one inside B's queue */
	assert_int_equal(st.messages, 0);
	assert_int_equal(st.port_observers, 0);
	assert_int_equal(st.port_user_packets, 0);
	kobj_owner_fini(&A);
	pools_empty();
}

static void test_node_fini_refuses_live_objects(void **state)
{
	(void)state;
	kobj_handle_t e;
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	assert_int_equal(kobj_node_fini(N), K32_ERR_BAD_STATE);
	kobj_handle_close(&A, e);
	/* still usable: the refused fini changed nothing */
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	kobj_handle_close(&A, e);
}

/* ---- instances: each board its own machine ------------------------------------------------ */

/* Creates one object of type t in o (a pair counts as one). */
static k32_status_t make_one(struct kobj_owner *o, int t)
{
	kobj_handle_t h0, h1;
	switch (t) {
	case KOBJ_TYPE_CHANNEL:
		return kobj_channel_create(o, 0, &h0, &h1);
	case KOBJ_TYPE_SOCKET:
		return kobj_socket_create(o, KOBJ_SOCKET_STREAM, 0, &h0, &h1);
	case KOBJ_TYPE_EVENT:
		return kobj_event_create(o, 0, &h0);
	case KOBJ_TYPE_EVENTPAIR:
		return kobj_eventpair_create(o, 0, &h0, &h1);
	case KOBJ_TYPE_PORT:
		return kobj_port_create(o, 0, &h0);
	case KOBJ_TYPE_FIFO:
		return kobj_fifo_create(o, 4, 4, 0, &h0, &h1);
	case KOBJ_TYPE_TIMER:
		return kobj_timer_create(o, 0, KOBJ_CLOCK_MONOTONIC, &h0);
	default:
		return kobj_vmo_create(o, 16, 0, &h0);
	}
}

/* Pods of one node create objects of type t, one pod after the other (each up to its share
 * or its table), until the node's pool is empty (NO_MEMORY) or every pod is full. Returns
 * how many they made; *out_last is the status that ended it. */
static uint32_t fill_type(struct kobj_owner *pods, int npods, int t, k32_status_t *out_last,
			  int *out_pod)
{
	uint32_t made = 0;
	k32_status_t st = K32_OK;
	int i;
	for (i = 0; i < npods; i++) {
		while ((st = make_one(&pods[i], t)) == K32_OK)
			made++;
		if (st == K32_ERR_NO_MEMORY)
			break;
		assert_int_equal(st, K32_ERR_NO_RESOURCES); /* its share or its table: next pod */
	}
	*out_last = st;
	*out_pod = i < npods ? i : npods - 1;
	return made;
}

static uint32_t pool_size(const struct kobj_limits *lim, int t)
{
	const uint32_t size[KOBJ_TYPE_COUNT] = {
	    [KOBJ_TYPE_CHANNEL] = lim->channels, [KOBJ_TYPE_SOCKET] = lim->sockets,
	    [KOBJ_TYPE_EVENT] = lim->events,	 [KOBJ_TYPE_EVENTPAIR] = lim->eventpairs,
	    [KOBJ_TYPE_PORT] = lim->ports,	 [KOBJ_TYPE_FIFO] = lim->fifos,
	    [KOBJ_TYPE_TIMER] = lim->timers,	 [KOBJ_TYPE_VMO] = lim->vmos,
	};
	return size[t];
}

/*
 * Two boards in one process (kube32-sim): the pods of board-a use up every object of every
 * type of their instance; the pods of board-b still create every object of theirs, and an
 * object never moves from one instance to the other. Before per-board instances, two event
 * pods on two boards took the 16 ports of both.
 */
static void test_two_nodes_share_nothing(void **state)
{
	(void)state;
	enum { PODS = 16 };
	static struct kobj_owner pa[PODS], pb[PODS];
	struct kobj_node *M = NULL;
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	assert_int_equal(kobj_node_new(k32_default_allocator(), "board-b", &lim, &M, NULL), K32_OK);
	for (int i = 0; i < PODS; i++) {
		kobj_owner_init(&pa[i], N, "pod on a", 0);
		kobj_owner_init(&pb[i], M, "pod on b", 0);
	}
	k32_status_t last;
	int pod;
	for (int t = 1; t < KOBJ_TYPE_COUNT; t++) {
		uint32_t a = fill_type(pa, PODS, t, &last, &pod);
		assert_int_equal(last, K32_ERR_NO_MEMORY); /* board-a's pool is empty */
		assert_int_equal(a, pool_size(&lim, t));
		assert_non_null(strstr(kobj_owner_last_error(&pa[pod]), "of node board-a in use"));
	}
	struct kobj_stats sa, sb;
	kobj_stats_get(N, &sa);
	kobj_stats_get(M, &sb);
	for (int t = 1; t < KOBJ_TYPE_COUNT; t++) {
		assert_int_equal(sa.in_use[t], pool_size(&lim, t));
		assert_int_equal(sb.in_use[t], 0);
	}
	/* board-b: everything it has, with board-a full */
	for (int t = 1; t < KOBJ_TYPE_COUNT; t++) {
		uint32_t b = fill_type(pb, PODS, t, &last, &pod);
		assert_int_equal(b, pool_size(&lim, t));
	}
	/* ports, the resource of the original report, named with board-b's own numbers */
	kobj_handle_t h;
	assert_int_equal(kobj_port_create(&pb[PODS - 1], 0, &h), K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&pb[PODS - 1]), "K32_KOBJ_MAX_PORTS=16"));
	assert_non_null(strstr(kobj_owner_last_error(&pb[PODS - 1]), "board-b"));
	/* no handle crosses: transfer to another instance is refused and leaves h in place */
	kobj_handle_t e, out;
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_ERR_NO_MEMORY); /* a is full */
	for (int i = 0; i < PODS; i++)
		kobj_owner_fini(&pa[i]);
	assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
	kobj_owner_fini(&pb[0]);
	assert_int_equal(kobj_handle_transfer(&A, e, &pb[0], &out), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(kobj_owner_last_error(&A), "another node"));
	assert_int_equal(kobj_handle_close(&A, e), K32_OK);
	/* board-b refuses to go while its objects live, then goes */
	assert_int_equal(kobj_node_fini(M), K32_ERR_BAD_STATE);
	for (int i = 1; i < PODS; i++)
		kobj_owner_fini(&pb[i]);
	kobj_stats_get(M, &sb);
	assert_int_equal(sb.accounts, 0);
	assert_int_equal(kobj_node_free(k32_default_allocator(), M), K32_OK);
}

/* A board's limits come from its profile: pools, shares, tables and the region are sized
 * from struct kobj_limits, and the messages give the instance's own values. */
static void test_node_limits(void **state)
{
	(void)state;
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	lim.handles = 6;
	lim.ports = 4;
	lim.events = 10;
	lim.vmos = 4;
	lim.region_bytes = 8192;
	lim.owner_pool_pct = 50;
	struct kobj_node *T = NULL;
	assert_int_equal(kobj_node_new(k32_default_allocator(), "tiny", &lim, &T, NULL), K32_OK);
	assert_true(kobj_node_bytes(&lim) < kobj_node_bytes(kobj_node_limits(N)));
	assert_string_equal(kobj_node_name(T), "tiny");
	assert_int_equal(kobj_node_limits(T)->ports, 4);
	struct kobj_owner x, y, z;
	kobj_owner_init(&x, T, "pod x", 0);
	kobj_owner_init(&y, T, "pod y", 100); /* clamped to the instance's 6 handles */
	kobj_owner_init(&z, T, "pod z", 0);
	kobj_handle_t h;
	int made = 0;
	while (kobj_port_create(&x, 0, &h) == K32_OK)
		made++;
	assert_int_equal(made, 2); /* 50 % of 4 */
	assert_non_null(strstr(kobj_owner_last_error(&x),
			       "its share is 2 (K32_KOBJ_OWNER_POOL_PCT=50% of "
			       "K32_KOBJ_MAX_PORTS=4)"));
	assert_int_equal(kobj_port_create(&y, 0, &h), K32_OK);
	assert_int_equal(kobj_port_create(&y, 0, &h), K32_OK);
	assert_int_equal(kobj_port_create(&z, 0, &h), K32_ERR_NO_MEMORY);
	assert_non_null(strstr(kobj_owner_last_error(&z), "all K32_KOBJ_MAX_PORTS=4 ports of node "
							  "tiny in use"));
	/* the table: 6 slots (y holds 2 ports; 4 more events fit, then the table is full) */
	made = 0;
	while (kobj_event_create(&y, 0, &h) == K32_OK)
		made++;
	assert_int_equal(made, 4);
	assert_non_null(strstr(kobj_owner_last_error(&y), "K32_KOBJ_MAX_HANDLES=6"));
	/* the region: 8 KiB */
	assert_int_equal(kobj_vmo_create(&z, 8193, 0, &h), K32_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(kobj_owner_last_error(&z), "K32_KOBJ_REGION_BYTES=8192"));
	assert_int_equal(kobj_vmo_create(&z, 4096, 0, &h), K32_OK);
	assert_int_equal(kobj_vmo_create(&x, 4096, 0, &h), K32_OK);
	assert_int_equal(kobj_vmo_create(&y, 16, 0, &h), K32_ERR_NO_RESOURCES); /* y's table */
	assert_int_equal(kobj_vmo_create(&z, 16, 0, &h), K32_ERR_NO_MEMORY);	/* region full */
	assert_non_null(strstr(kobj_owner_last_error(&z), "kobj region of node tiny full"));
	kobj_owner_fini(&x);
	kobj_owner_fini(&y);
	kobj_owner_fini(&z);
	assert_int_equal(kobj_node_free(k32_default_allocator(), T), K32_OK);
}

/* Limits out of range are refused with the field, its value and the range; too little
 * memory with both sizes. */
static void test_node_limits_refused(void **state)
{
	(void)state;
	struct kobj_limits lim;
	struct kobj_node *T = NULL;
	struct k32_err err;
	kobj_limits_default(&lim);
	lim.ports = 0;
	assert_int_equal(kobj_node_bytes(&lim), 0);
	assert_int_equal(kobj_node_new(k32_default_allocator(), "bad", &lim, &T, &err),
			 K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "ports (K32_KOBJ_MAX_PORTS) = 0 is outside 1.."));
	kobj_limits_default(&lim);
	lim.handles = K32_KOBJ_MAX_HANDLES + 1;
	assert_int_equal(kobj_node_new(k32_default_allocator(), "bad", &lim, &T, &err),
			 K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "handles (K32_KOBJ_MAX_HANDLES)"));
	kobj_limits_default(&lim);
	static _Alignas(16) uint8_t small[4096];
	assert_int_equal(kobj_node_init(small, sizeof(small), "small", &lim, &T, &err),
			 K32_ERR_NO_MEMORY);
	assert_non_null(strstr(err.msg, "4096 bytes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_handle_basics, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_handle_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rights_table, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_basic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_large_and_queue_limits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_handles, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_nested_close, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_pools_exhausted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_channel_call_local, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_stream, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_datagram, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_region_exhausted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_event_signals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_basic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_cross_thread, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wait_start_races_close, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_observer_pool, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_quotas, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_object_and_memory_quotas, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_properties, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timer, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vmo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_transfer_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_teardown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_node_fini_refuses_live_objects, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_nodes_share_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_node_limits, setup, teardown),
	    cmocka_unit_test(test_node_limits_refused),
	};
	return cmocka_run_group_tests_name("kobj", tests, NULL, NULL);
}
