/*
 * kobj_stress_test.c - two threads hammering shared objects (bounded in count and time), run
 * by `make test` and, labelled "threads", by `make test-tsan` under ThreadSanitizer.
 *
 * Thread P (producer, owner A) and thread C (consumer, owner B) share a channel, a socket, a
 * fifo and an event pair. P sends sequence-numbered messages (some carrying a fresh event
 * handle), stream bytes with a running pattern and fifo elements; C checks order and content,
 * closes received handles and answers on the event pair. Both block on back-pressure
 * (SHOULD_WAIT + wait for WRITABLE) and on empty queues (wait_one, wait_many, port waits).
 * Then a cancel race: C blocks while the main thread tears C's owner down. Afterwards every
 * pool is back to zero.
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

#define MSGS	 6000u	       /* channel messages */
#define BYTES	 (3u << 20)    /* socket stream bytes */
#define ELEMS	 20000u	       /* fifo elements */
#define TIME_CAP 20000000000ll /* 20 s hard cap per thread */

static struct kobj_owner A, B;

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
static kobj_handle_t a_ch, a_so, a_ff, a_ep, b_ch, b_so, b_ff, b_ep, b_port;
static kobj_time_t stop_at;
static int p_err, c_err;

#define FAIL(errp, ...)                                                                            \
	do {                                                                                       \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		*(errp) = __LINE__;                                                                \
		return;                                                                            \
	} while (0)

static void producer(void *arg)
{
	(void)arg;
	uint8_t buf[512];
	uint32_t seq = 0, sent = 0, elems = 0, n;
	uint8_t pat = 0;
	while ((seq < MSGS || sent < BYTES || elems < ELEMS) && kobj_now_ns() < stop_at) {
		if (seq < MSGS) {
			uint32_t len = 4 + (seq * 37u) % 300u;
			memcpy(buf, &seq, 4);
			memset(buf + 4, (int)(seq & 0xff), len - 4);
			kobj_handle_t ev = KOBJ_HANDLE_INVALID;
			if (seq % 7 == 0 && kobj_event_create(&A, 0, &ev) != K32_OK)
				FAIL(&p_err, "event_create: %s", kobj_owner_last_error(&A));
			k32_status_t st =
			    kobj_channel_write(&A, a_ch, 0, buf, len, &ev, ev ? 1 : 0);
			if (st == K32_OK) {
				seq++;
			} else if (st == K32_ERR_SHOULD_WAIT) {
				/* The event was consumed by the failed write (Zircon rule). */
				kobj_object_wait_one(&A, a_ch,
						     KOBJ_SIG_WRITABLE | KOBJ_SIG_PEER_CLOSED,
						     kobj_deadline_after(1000000), NULL);
			} else {
				FAIL(&p_err, "channel_write %d", st);
			}
		}
		if (sent < BYTES) {
			uint32_t len = 1 + (sent * 13u) % 500u;
			if (len > BYTES - sent)
				len = BYTES - sent;
			for (uint32_t i = 0; i < len; i++)
				buf[i] = (uint8_t)(pat + i);
			k32_status_t st = kobj_socket_write(&A, a_so, 0, buf, len, &n);
			if (st == K32_OK) {
				sent += n;
				pat = (uint8_t)(pat + n);
			} else if (st != K32_ERR_SHOULD_WAIT) {
				FAIL(&p_err, "socket_write %d", st);
			}
		}
		if (elems < ELEMS) {
			uint32_t el[8];
			for (uint32_t i = 0; i < 8; i++)
				el[i] = elems + i;
			k32_status_t st = kobj_fifo_write(&A, a_ff, 4, el, 8, &n);
			if (st == K32_OK)
				elems += n;
			else if (st != K32_ERR_SHOULD_WAIT)
				FAIL(&p_err, "fifo_write %d", st);
		}
		/* Ping the consumer through the event pair now and then. */
		if ((seq & 63) == 0)
			kobj_object_signal_peer(&A, a_ep, 0, KOBJ_SIG_USER(0));
	}
	if (seq < MSGS || sent < BYTES || elems < ELEMS)
		FAIL(&p_err, "producer ran out of time: %u msgs, %u bytes, %u elems", seq, sent,
		     elems);
}

static void consumer(void *arg)
{
	(void)arg;
	uint8_t buf[512];
	kobj_handle_t hs[2];
	uint32_t seq = 0, got = 0, elems = 0, nb, nh, n;
	uint8_t pat = 0;
	bool armed = false;
	struct kobj_packet pkt;
	while ((seq < MSGS || got < BYTES || elems < ELEMS) && kobj_now_ns() < stop_at) {
		bool idle = true;
		k32_status_t st = kobj_channel_read(&B, b_ch, 0, buf, hs, sizeof(buf), 2, &nb, &nh);
		if (st == K32_OK) {
			uint32_t s;
			memcpy(&s, buf, 4);
			if (s != seq || nb != 4 + (seq * 37u) % 300u)
				FAIL(&c_err, "message %u out of order (want %u) or length %u", s,
				     seq, nb);
			for (uint32_t i = 4; i < nb; i++)
				if (buf[i] != (uint8_t)(seq & 0xff))
					FAIL(&c_err, "message %u byte %u corrupt", seq, i);
			if ((seq % 7 == 0) != (nh == 1))
				FAIL(&c_err, "message %u carries %u handles", seq, nh);
			if (nh) {
				if (kobj_object_signal(&B, hs[0], 0, KOBJ_SIG_SIGNALED) != K32_OK)
					FAIL(&c_err, "received event is not usable");
				kobj_handle_close(&B, hs[0]);
			}
			seq++;
			idle = false;
		} else if (st != K32_ERR_SHOULD_WAIT) {
			FAIL(&c_err, "channel_read %d", st);
		}
		st = kobj_socket_read(&B, b_so, 0, buf, sizeof(buf), &n);
		if (st == K32_OK) {
			for (uint32_t i = 0; i < n; i++)
				if (buf[i] != (uint8_t)(pat + i))
					FAIL(&c_err, "socket byte %u corrupt", got + i);
			pat = (uint8_t)(pat + n);
			got += n;
			idle = false;
		} else if (st != K32_ERR_SHOULD_WAIT) {
			FAIL(&c_err, "socket_read %d", st);
		}
		uint32_t el[16];
		st = kobj_fifo_read(&B, b_ff, 4, el, 16, &n);
		if (st == K32_OK) {
			for (uint32_t i = 0; i < n; i++)
				if (el[i] != elems + i)
					FAIL(&c_err, "fifo element %u corrupt", elems + i);
			elems += n;
			idle = false;
		} else if (st != K32_ERR_SHOULD_WAIT) {
			FAIL(&c_err, "fifo_read %d", st);
		}
		kobj_object_signal(&B, b_ep, KOBJ_SIG_USER(0), 0);
		if (!idle)
			continue;
		/* Nothing ready: alternate wait_many and the port event loop. */
		if (seq & 1) {
			struct kobj_wait_item it[3] = {{b_ch, KOBJ_SIG_READABLE, 0},
						       {b_so, KOBJ_SIG_READABLE, 0},
						       {b_ff, KOBJ_SIG_READABLE, 0}};
			kobj_object_wait_many(&B, it, 3, kobj_deadline_after(1000000));
		} else {
			if (!armed) {
				if (kobj_object_wait_async(&B, b_ch, b_port, 1, KOBJ_SIG_READABLE,
							   0) != K32_OK)
					FAIL(&c_err, "wait_async");
				armed = true;
			}
			if (kobj_port_wait(&B, b_port, kobj_deadline_after(1000000), &pkt) ==
			    K32_OK)
				armed = false;
		}
	}
	if (seq < MSGS || got < BYTES || elems < ELEMS)
		FAIL(&c_err, "consumer ran out of time: %u msgs, %u bytes, %u elems", seq, got,
		     elems);
}

static void pools_empty(void)
{
	struct kobj_stats st;
	kobj_stats_get(KN, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		assert_int_equal(st.in_use[t], 0);
	assert_int_equal(st.messages, 0);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.port_observers, 0);
	assert_int_equal(st.port_user_packets, 0);
	assert_int_equal(st.vmo_bytes, 0);
}

static void accounts_empty(void)
{
	struct kobj_stats st;
	kobj_stats_get(KN, &st);
	assert_int_equal(st.accounts, 0);
}

static void test_two_threads(void **state)
{
	(void)state;
	assert_int_equal(test_node_new(), K32_OK);
	kobj_owner_init(&A, KN, "producer", 0);
	kobj_owner_init(&B, KN, "consumer", 0);
	kobj_handle_t x;
	assert_int_equal(kobj_channel_create(&A, 0, &a_ch, &x), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, x, &B, &b_ch), K32_OK);
	assert_int_equal(kobj_socket_create(&A, 0, 4096, &a_so, &x), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, x, &B, &b_so), K32_OK);
	assert_int_equal(kobj_fifo_create(&A, 64, 4, 0, &a_ff, &x), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, x, &B, &b_ff), K32_OK);
	assert_int_equal(kobj_eventpair_create(&A, 0, &a_ep, &x), K32_OK);
	assert_int_equal(kobj_handle_transfer(&A, x, &B, &b_ep), K32_OK);
	assert_int_equal(kobj_port_create(&B, 0, &b_port), K32_OK);
	stop_at = kobj_deadline_after(TIME_CAP);
	for (int round = 0; round < 2; round++) {
		/* Round 0: spinning waiters (cross-core); round 1: sleep at once. */
		kobj_node_set_spin_ns(KN, round == 0 ? 20000 : 0);
		struct k32_task *tp, *tc;
		struct k32_err err;
		assert_int_equal(
		    k32_plat()->task_create(&tp, "producer", producer, NULL, 0, -1, &err), K32_OK);
		assert_int_equal(
		    k32_plat()->task_create(&tc, "consumer", consumer, NULL, 0, -1, &err), K32_OK);
		k32_plat()->task_join(tp);
		k32_plat()->task_join(tc);
		assert_int_equal(p_err, 0);
		assert_int_equal(c_err, 0);
	}
	kobj_node_set_spin_ns(KN, K32_KOBJ_SPIN_NS);
	kobj_owner_fini(&A);
	kobj_owner_fini(&B);
	pools_empty();
	accounts_empty(); /* A's charges were released by B's thread */
}

/* ---- cancel race: teardown of an owner whose thread is blocked ---------------------------- */

struct blocked {
	struct kobj_owner *o;
	kobj_handle_t h;
	int mode;
	k32_status_t st;
};

static void block_fn(void *arg)
{
	struct blocked *b = arg;
	struct kobj_packet pkt;
	if (b->mode == 0) {
		b->st = kobj_object_wait_one(b->o, b->h, KOBJ_SIG_USER(5),
					     kobj_deadline_after(TIME_CAP), NULL);
	} else if (b->mode == 1) {
		struct kobj_wait_item it = {b->h, KOBJ_SIG_USER(5), 0};
		b->st = kobj_object_wait_many(b->o, &it, 1, kobj_deadline_after(TIME_CAP));
	} else {
		b->st = kobj_port_wait(b->o, b->h, kobj_deadline_after(TIME_CAP), &pkt);
	}
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

static void test_teardown_race(void **state)
{
	(void)state;
	assert_int_equal(test_node_new(), K32_OK);
	for (int i = 0; i < 150; i++) {
		struct kobj_owner *o = &B;
		kobj_owner_init(&A, KN, "keeper", 0);
		kobj_owner_init(o, KN, "victim", 0);
		kobj_handle_t e, mine;
		struct blocked b = {.o = o, .mode = i % 3};
		if (b.mode == 2) {
			assert_int_equal(kobj_port_create(o, 0, &b.h), K32_OK);
		} else {
			assert_int_equal(kobj_event_create(&A, 0, &e), K32_OK);
			assert_int_equal(
			    kobj_handle_duplicate(&A, e, KOBJ_RIGHT_SAME_RIGHTS, &mine), K32_OK);
			assert_int_equal(kobj_handle_transfer(&A, mine, o, &b.h), K32_OK);
		}
		struct kobj_object *obj = NULL;
		assert_int_equal(kobj_lookup(o, b.h, 0, 0, &obj), K32_OK);
		kobj_node_set_spin_ns(KN, (i & 4) ? 5000 : 0);
		struct k32_task *t;
		struct k32_err err;
		assert_int_equal(k32_plat()->task_create(&t, "victim", block_fn, &b, 0, -1, &err),
				 K32_OK);
		while (obs_count(obj) == 0)
			k32_plat()->sleep_us(20);
		if (i % 5 == 4 && b.mode != 2) {
			/* Sometimes the signal and the teardown race each other. */
			kobj_object_signal(&A, e, 0, KOBJ_SIG_USER(5));
		}
		kobj_owner_fini(o);
		k32_plat()->task_join(t);
		if (i % 5 == 4 && b.mode != 2)
			assert_true(b.st == K32_OK || b.st == K32_ERR_CANCELED);
		else
			assert_int_equal(b.st, K32_ERR_CANCELED);
		kobj_owner_fini(&A);
		pools_empty();
	}
	kobj_node_set_spin_ns(KN, K32_KOBJ_SPIN_NS);
}

/*
 * A wait that starts while another thread closes its handle (the wait gate, kobj_int.h): the
 * victim announces it is about to wait and waits (10 s deadline); the main thread closes the
 * handle after a varying spin, so the close lands before, during and after the wait's
 * registration. Every wait must end CANCELED (or BAD_HANDLE when the close came first),
 * never TIMED_OUT. Half the rounds keep the object alive through another handle.
 */
struct starter {
	struct kobj_owner *o;
	kobj_handle_t h;
	int mode;
	atomic_int go;
	k32_status_t st;
};

static void start_fn(void *p)
{
	struct starter *s = p;
	struct kobj_packet pkt;
	struct kobj_wait_item it = {s->h, KOBJ_SIG_USER(5), 0};
	kobj_time_t dl = kobj_deadline_after(10000000000ll);
	atomic_store(&s->go, 1);
	if (s->mode == 0)
		s->st = kobj_object_wait_one(s->o, s->h, KOBJ_SIG_USER(5), dl, NULL);
	else if (s->mode == 1)
		s->st = kobj_object_wait_many(s->o, &it, 1, dl);
	else
		s->st = kobj_port_wait(s->o, s->h, dl, &pkt);
}

static void test_wait_start_close_race(void **state)
{
	(void)state;
	assert_int_equal(test_node_new(), K32_OK);
	kobj_owner_init(&A, KN, "keeper", 0);
	kobj_owner_init(&B, KN, "victim", 0);
	int counts[3] = {0, 0, 0};
	for (int i = 0; i < 600; i++) {
		struct starter s = {.o = &B, .mode = i % 3};
		kobj_handle_t keep = KOBJ_HANDLE_INVALID;
		if (s.mode == 2)
			assert_int_equal(kobj_port_create(&B, 0, &s.h), K32_OK);
		else
			assert_int_equal(kobj_event_create(&B, 0, &s.h), K32_OK);
		if (i & 1)
			assert_int_equal(
			    kobj_handle_duplicate(&B, s.h, KOBJ_RIGHT_SAME_RIGHTS, &keep), K32_OK);
		kobj_node_set_spin_ns(KN, (i & 2) ? 5000 : 0);
		atomic_init(&s.go, 0);
		struct k32_task *t;
		struct k32_err err;
		assert_int_equal(k32_plat()->task_create(&t, "starter", start_fn, &s, 0, -1, &err),
				 K32_OK);
		while (!atomic_load(&s.go))
			;
		for (volatile int k = 0; k < (i * 37) % 2000; k++)
			;
		assert_int_equal(kobj_handle_close(&B, s.h), K32_OK);
		k32_plat()->task_join(t);
		if (s.st != K32_ERR_CANCELED && s.st != K32_ERR_BAD_HANDLE)
			fail_msg("round %d mode %d: wait ended %d, want CANCELED or BAD_HANDLE", i,
				 s.mode, (int)s.st);
		counts[s.st == K32_ERR_CANCELED]++;
		kobj_handle_close(&B, keep);
	}
	fprintf(stderr, "wait-start/close race: %d CANCELED, %d BAD_HANDLE (close first)\n",
		counts[1], counts[0]);
	kobj_node_set_spin_ns(KN, K32_KOBJ_SPIN_NS);
	kobj_owner_fini(&B);
	kobj_owner_fini(&A);
	pools_empty();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_threads),
	    cmocka_unit_test(test_teardown_race),
	    cmocka_unit_test(test_wait_start_close_race),
	};
	int rc = cmocka_run_group_tests_name("kobj_stress", tests, NULL, NULL);
	kobj_node_free(k32_default_allocator(), KN);
	return rc;
}
