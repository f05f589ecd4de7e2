/*
 * platform_test.c - tests for the platform ops: clock, mutex/cond with deadlines, tasks and
 * their CPU accounting, TCP over loopback, files, and replacing an op at run time (the
 * fault-injection hook other modules' tests use). Only 127.0.0.1 is used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "platform/k32_platform.h"

static const struct k32_platform_ops *P;

static void test_clock(void **state)
{
	uint64_t a, b;

	(void)state;
	a = k32_now_us();
	P->sleep_us(2000);
	b = k32_now_us();
	assert_true(b >= a + 2000);
	assert_true(P->wall_s() > 1600000000u);
	assert_true(P->core_count() >= 1);
	P->task_yield(); /* returns; nothing else to observe on one thread */
	assert_non_null(P->task_set_priority);
	P->task_set_priority(4); /* POSIX: left as is (k32_platform.h) */
	uint8_t r1[16] = {0}, r2[16] = {0};
	assert_int_equal(P->random(r1, sizeof(r1)), K32_OK);
	assert_int_equal(P->random(r2, sizeof(r2)), K32_OK);
	assert_memory_not_equal(r1, r2, sizeof(r1));
}

struct handoff {
	struct k32_mutex lock;
	struct k32_cond cond;
	int value;
	uint64_t spin_until_cpu_us;
};

static void producer(void *arg)
{
	struct handoff *h = arg;

	/* Burn some CPU so the task's CPU time is visibly non-zero. */
	while (P->thread_cpu_us() < h->spin_until_cpu_us) {
	}
	k32_mutex_lock(&h->lock);
	h->value = 42;
	P->cond_signal(&h->cond);
	k32_mutex_unlock(&h->lock);
}

static void test_mutex_cond_and_tasks(void **state)
{
	struct handoff h = {.value = 0};
	struct k32_task *t;
	struct k32_err err;
	struct k32_task_info info[K32_PLAT_MAX_TASKS];
	size_t count;
	bool found = false;

	(void)state;
	P->mutex_init(&h.lock);
	P->cond_init(&h.cond);
	h.spin_until_cpu_us = 20000;

	/* A deadline that passes with no signal is TIMED_OUT. */
	k32_mutex_lock(&h.lock);
	assert_int_equal(P->cond_wait(&h.cond, &h.lock, k32_deadline_after(1000)),
			 K32_ERR_TIMED_OUT);
	k32_mutex_unlock(&h.lock);

	assert_int_equal(P->task_create(&t, "producer", producer, &h, 64 * 1024, -1, &err), K32_OK);
	k32_mutex_lock(&h.lock);
	while (h.value == 0)
		P->cond_wait(&h.cond, &h.lock, K32_FOREVER);
	k32_mutex_unlock(&h.lock);
	assert_int_equal(h.value, 42);

	/* Wait until the task has returned, then check the TASKS row. */
	for (int i = 0; i < 5000 && !found; i++) {
		P->task_list(info, K32_PLAT_MAX_TASKS, &count);
		for (size_t j = 0; j < count && j < K32_PLAT_MAX_TASKS; j++) {
			if (strcmp(info[j].name, "producer") == 0 && !info[j].running) {
				assert_true(info[j].cpu_us >= 20000);
				found = true;
			}
		}
		if (!found)
			P->sleep_us(1000);
	}
	assert_true(found);
	P->task_join(t);
	P->task_list(info, K32_PLAT_MAX_TASKS, &count);
	for (size_t j = 0; j < count; j++)
		assert_string_not_equal(info[j].name, "producer");
	P->cond_fini(&h.cond);
	P->mutex_fini(&h.lock);
}

struct gate {
	struct k32_mutex lock;
	struct k32_cond cond;
	bool open;
};

static void wait_gate(void *arg)
{
	struct gate *g = arg;

	k32_mutex_lock(&g->lock);
	while (!g->open)
		P->cond_wait(&g->cond, &g->lock, K32_FOREVER);
	k32_mutex_unlock(&g->lock);
}

static void test_task_limit(void **state)
{
	static struct k32_task *tasks[K32_PLAT_MAX_TASKS + 1];
	struct gate g = {.open = false};
	struct k32_err err;
	size_t started = 0;
	k32_status_t st = K32_OK;

	(void)state;
	P->mutex_init(&g.lock);
	P->cond_init(&g.cond);
	while (started < K32_PLAT_MAX_TASKS + 1) {
		st = P->task_create(&tasks[started], "waiter", wait_gate, &g, 0, -1, &err);
		if (st != K32_OK)
			break;
		started++;
	}
	assert_int_equal(st, K32_ERR_NO_RESOURCES);
	assert_int_equal(started, K32_PLAT_MAX_TASKS);
	assert_non_null(strstr(err.msg, "K32_PLAT_MAX_TASKS"));
	k32_mutex_lock(&g.lock);
	g.open = true;
	P->cond_broadcast(&g.cond);
	k32_mutex_unlock(&g.lock);
	for (size_t i = 0; i < started; i++)
		P->task_join(tasks[i]);
	P->cond_fini(&g.cond);
	P->mutex_fini(&g.lock);
}

static void test_tcp_loopback(void **state)
{
	k32_sock_t lst, cli, srv;
	uint16_t port = 0;
	struct k32_err err;
	size_t n, ready;
	char buf[64];

	(void)state;
	assert_int_equal(P->tcp_listen("127.0.0.1", 0, 8, &lst, &err), K32_OK);
	assert_int_equal(P->sock_port(lst, &port), K32_OK);
	assert_true(port != 0);
	assert_int_equal(P->sock_set_nonblock(lst, true), K32_OK);
	assert_int_equal(P->tcp_accept(lst, &srv), K32_ERR_SHOULD_WAIT);
	assert_int_equal(P->tcp_connect("localhost", port, 1000000, &cli, &err), K32_OK);

	struct k32_pollfd pfd = {lst, K32_POLL_IN, 0};
	assert_int_equal(P->poll(&pfd, 1, 1000000, &ready), K32_OK);
	assert_int_equal(ready, 1);
	assert_int_equal(P->tcp_accept(lst, &srv), K32_OK);

	assert_int_equal(P->sock_send(cli, "ping", 4, &n), K32_OK);
	assert_int_equal(n, 4);
	assert_int_equal(P->sock_recv(srv, buf, sizeof(buf), &n), K32_OK);
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "ping", 4);

	/* Non-blocking receive with nothing pending. */
	assert_int_equal(P->sock_set_nonblock(srv, true), K32_OK);
	assert_int_equal(P->sock_recv(srv, buf, sizeof(buf), &n), K32_ERR_SHOULD_WAIT);
	pfd.sock = srv;
	assert_int_equal(P->poll(&pfd, 1, 0, &ready), K32_OK);
	assert_int_equal(ready, 0);

	/* Orderly close is PEER_CLOSED on the other side. */
	P->sock_close(cli);
	assert_int_equal(P->poll(&pfd, 1, 1000000, &ready), K32_OK);
	assert_int_equal(ready, 1);
	assert_int_equal(P->sock_recv(srv, buf, sizeof(buf), &n), K32_ERR_PEER_CLOSED);
	P->sock_close(srv);

	/* A second listener on the same port is refused; a closed port refuses connects. */
	assert_int_equal(P->tcp_listen("127.0.0.1", port, 8, &srv, &err), K32_ERR_ALREADY_EXISTS);
	P->sock_close(lst);
	assert_int_equal(P->tcp_connect("127.0.0.1", port, 1000000, &cli, &err),
			 K32_ERR_PEER_CLOSED);
	assert_int_equal(P->tcp_listen("not-an-ip", 0, 8, &lst, &err), K32_ERR_INVALID_ARGS);
}

static void test_files(void **state)
{
	char dir[256], path[300], log[300];
	struct k32_heap heap;
	struct k32_allocator a;
	struct k32_err err;
	struct k32_file *f;
	uint8_t *data;
	size_t len;
	uint64_t size;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/k32-platform-test-%u/a/b", (unsigned)P->now_us());
	assert_int_equal(P->dir_create(dir, &err), K32_OK);
	assert_int_equal(P->dir_create(dir, &err), K32_OK); /* idempotent */
	snprintf(path, sizeof(path), "%s/snap", dir);
	snprintf(log, sizeof(log), "%s/wal", dir);
	k32_heap_init(&heap, 0);
	a = k32_heap_allocator(&heap);

	assert_int_equal(P->file_read_all(path, &a, 100, &data, &len, &err), K32_ERR_NOT_FOUND);
	assert_false(P->file_exists(path));
	assert_int_equal(P->file_write_atomic(path, "first", 5, &err), K32_OK);
	assert_int_equal(P->file_write_atomic(path, "second!", 7, &err), K32_OK);
	assert_int_equal(P->file_read_all(path, &a, 100, &data, &len, &err), K32_OK);
	assert_int_equal(len, 7);
	assert_string_equal((char *)data, "second!");
	k32_free(&a, data, len + 1);
	assert_int_equal(P->file_read_all(path, &a, 6, &data, &len, &err), K32_ERR_OUT_OF_RANGE);
	k32_heap_fail_nth(&heap, 1);
	assert_int_equal(P->file_read_all(path, &a, 100, &data, &len, &err), K32_ERR_NO_MEMORY);
	assert_int_equal(heap.stats.cur_bytes, 0);

	assert_int_equal(P->file_open_append(log, &f, &err), K32_OK);
	assert_int_equal(P->file_append(f, "abc", 3, &err), K32_OK);
	assert_int_equal(P->file_append(f, "defg", 4, &err), K32_OK);
	assert_int_equal(P->file_sync(f, &err), K32_OK);
	assert_int_equal(P->file_size(f, &size), K32_OK);
	assert_int_equal(size, 7);
	assert_int_equal(P->file_truncate(f, 5, &err), K32_OK);
	assert_int_equal(P->file_append(f, "X", 1, &err), K32_OK); /* appends after the cut */
	P->file_close(f);
	assert_int_equal(P->file_read_all(log, &a, 100, &data, &len, &err), K32_OK);
	assert_string_equal((char *)data, "abcdeX");
	k32_free(&a, data, len + 1);

	assert_int_equal(P->file_remove(path, &err), K32_OK);
	assert_int_equal(P->file_remove(path, &err), K32_OK); /* absent is fine */
	assert_int_equal(P->file_remove(log, &err), K32_OK);
	assert_int_equal(heap.stats.cur_bytes, 0);
}

static k32_status_t failing_sync(struct k32_file *f, struct k32_err *err)
{
	(void)f;
	return k32_err_set(err, K32_ERR_IO, "test", "injected fsync failure");
}

static void test_ops_replacement(void **state)
{
	struct k32_platform_ops faulty = *k32_plat_native();
	struct k32_err err;

	(void)state;
	faulty.file_sync = failing_sync;
	k32_plat_set_ops(&faulty);
	assert_ptr_equal(k32_plat(), &faulty);
	assert_int_equal(k32_plat()->file_sync(NULL, &err), K32_ERR_IO);
	assert_string_equal(err.msg, "injected fsync failure");
	k32_plat_set_ops(NULL);
	assert_ptr_equal(k32_plat(), k32_plat_native());
}

/* stop_wait: false at its deadline with nothing asked; true once SIGTERM arrived (raised
 * here on this thread; the self-pipe makes it reach stop_wait from any thread). */
static void test_stop_request(void **state)
{
	(void)state;
	const struct k32_platform_ops *pl = k32_plat();
	struct k32_err err;
	assert_int_equal(pl->stop_watch(&err), K32_OK);
	uint64_t t0 = pl->now_us();
	assert_false(pl->stop_wait((int64_t)(t0 + 20000)));
	assert_true(pl->now_us() >= t0 + 20000);
	assert_int_equal(raise(SIGTERM), 0); /* the process survives: the handler takes it */
	assert_true(pl->stop_wait((int64_t)(pl->now_us() + 5000000)));
	/* consumed: the next wait times out again */
	assert_false(pl->stop_wait((int64_t)(pl->now_us() + 1000)));
}

/* ---- shared tasks (task_share_threads) ---- */

#define SHARED_N 300

struct crowd {
	struct k32_mutex lock;
	struct k32_cond cond;
	struct k32_cond never; /* nobody signals it */
	int arrived;	       /* tasks waiting for go */
	bool go;	       /* set by the main thread */
	int done;	       /* tasks past their sleep */
	int timeouts;	       /* cond waits that ended at their deadline */
	uint64_t cpu;	       /* a spinner's own CPU accounting */
};

static void crowd_member(void *arg)
{
	struct crowd *c = arg;

	k32_mutex_lock(&c->lock);
	/* a wait that times out (nobody signals before its deadline) */
	if (P->cond_wait(&c->never, &c->lock, k32_deadline_after(1000)) == K32_ERR_TIMED_OUT)
		c->timeouts++;
	c->arrived++;
	P->cond_broadcast(&c->cond);
	while (!c->go)
		P->cond_wait(&c->cond, &c->lock, K32_FOREVER);
	k32_mutex_unlock(&c->lock);
	P->sleep_us(500);
	P->task_yield();
	k32_mutex_lock(&c->lock);
	c->done++;
	k32_mutex_unlock(&c->lock);
}

static long os_threads(void)
{
	long n = -1;
#ifdef __linux__
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8))
			n = strtol(line + 8, NULL, 10);
	if (f)
		fclose(f);
#endif
	return n;
}

/* 300 shared tasks wait on one condition (with and without deadlines), sleep, yield and
 * contend on one mutex, on a few OS threads; an OS thread waits for and wakes them. */
static void test_shared_tasks(void **state)
{
	(void)state;
	static struct k32_task *t[SHARED_N];
	static struct crowd c;
	struct k32_err err;
	long before = os_threads();

	P->mutex_init(&c.lock);
	P->cond_init(&c.cond);
	P->cond_init(&c.never);
	P->task_share_threads(true);
	for (int i = 0; i < SHARED_N; i++)
		assert_int_equal(
		    P->task_create(&t[i], "crowd", crowd_member, &c, 16 * 1024, -1, &err), K32_OK);
	P->task_share_threads(false);
	k32_mutex_lock(&c.lock);
	while (c.arrived < SHARED_N)
		P->cond_wait(&c.cond, &c.lock, K32_FOREVER);
	assert_int_equal(c.timeouts, SHARED_N);
	/* all 300 are alive and waiting, on the pool's threads (+ poller and monitor) */
	long during = os_threads();
	if (before > 0)
		assert_true(during - before <= K32_PLAT_SHARED_THREADS_MAX + 2);
	size_t count = 0;
	struct k32_task_info info[4];
	P->task_list(info, 4, &count);
	assert_true(count >= SHARED_N);
	c.go = true;
	P->cond_broadcast(&c.cond);
	k32_mutex_unlock(&c.lock);
	for (int i = 0; i < SHARED_N; i++)
		P->task_join(t[i]);
	assert_int_equal(c.done, SHARED_N);
	P->cond_fini(&c.cond);
	P->cond_fini(&c.never);
	P->mutex_fini(&c.lock);
}

struct pingpong {
	k32_sock_t sock;
	uint16_t port;
	int rounds;
	bool ok;
};

/* Blocking sockets in shared tasks: each recv waits (parked) for the other side. */
static void pp_server(void *arg)
{
	struct pingpong *pp = arg;
	k32_sock_t c = K32_SOCK_INVALID;
	k32_status_t st;
	struct k32_pollfd pf = {pp->sock, K32_POLL_IN, 0};
	size_t ready = 0;

	P->sock_set_nonblock(pp->sock, true);
	P->poll(&pf, 1, 5000000, &ready);
	st = P->tcp_accept(pp->sock, &c);
	if (st != K32_OK)
		return;
	P->sock_set_nonblock(c, false);
	for (int i = 0; i < pp->rounds; i++) {
		char b[4];
		size_t n = 0, sent = 0;
		if (P->sock_recv(c, b, 1, &n) != K32_OK || n != 1)
			break;
		b[0]++;
		P->sock_send(c, b, 1, &sent);
	}
	P->sock_close(c);
}

static void pp_client(void *arg)
{
	struct pingpong *pp = arg;
	k32_sock_t s;
	struct k32_err err;
	char b = 0;

	if (P->tcp_connect("127.0.0.1", pp->port, 5000000, &s, &err) != K32_OK)
		return;
	for (int i = 0; i < pp->rounds; i++) {
		size_t n = 0;
		P->sock_send(s, &b, 1, &n);
		if (P->sock_recv(s, &b, 1, &n) != K32_OK || n != 1)
			break;
		b++;
	}
	pp->ok = b == 2 * pp->rounds;
	P->sock_close(s);
}

static void test_shared_sockets(void **state)
{
	(void)state;
	static struct pingpong pp = {.rounds = 50}; /* a char counts to 100 */
	struct k32_task *a, *b;
	struct k32_err err;

	assert_int_equal(P->tcp_listen("127.0.0.1", 0, 4, &pp.sock, &err), K32_OK);
	assert_int_equal(P->sock_port(pp.sock, &pp.port), K32_OK);
	P->task_share_threads(true);
	assert_int_equal(P->task_create(&a, "pp-srv", pp_server, &pp, 0, -1, &err), K32_OK);
	assert_int_equal(P->task_create(&b, "pp-cli", pp_client, &pp, 0, -1, &err), K32_OK);
	P->task_share_threads(false);
	P->task_join(b);
	P->task_join(a);
	P->sock_close(pp.sock);
	assert_true(pp.ok);
}

/* A shared task that computes without a blocking point keeps its pool thread; when every
 * pool thread is held so, the pool grows and the others still run: here the spinners spin
 * until a task that can only run on a new pool thread releases them. */
static _Atomic bool spin_release;

static void spinner(void *arg)
{
	struct crowd *c = arg;
	uint64_t c0 = P->thread_cpu_us();
	while (!atomic_load(&spin_release)) {
	}
	k32_mutex_lock(&c->lock);
	c->cpu += P->thread_cpu_us() - c0;
	k32_mutex_unlock(&c->lock);
}

static void releaser(void *arg)
{
	(void)arg;
	atomic_store(&spin_release, true);
}

static void test_shared_busy_grows_pool(void **state)
{
	(void)state;
	static struct crowd c;
	struct k32_task *sp[K32_PLAT_SHARED_THREADS + 1], *r;
	struct k32_err err;

	P->mutex_init(&c.lock);
	P->task_share_threads(true);
	for (int i = 0; i < K32_PLAT_SHARED_THREADS + 1; i++)
		assert_int_equal(P->task_create(&sp[i], "spin", spinner, &c, 0, -1, &err), K32_OK);
	assert_int_equal(P->task_create(&r, "release", releaser, NULL, 0, -1, &err), K32_OK);
	P->task_share_threads(false);
	P->task_join(r);
	for (int i = 0; i < K32_PLAT_SHARED_THREADS + 1; i++)
		P->task_join(sp[i]);
	assert_true(atomic_load(&spin_release));
	assert_true(c.cpu > 0); /* thread_cpu_us of a shared task is its own */
	P->mutex_fini(&c.lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clock),	   cmocka_unit_test(test_mutex_cond_and_tasks),
	    cmocka_unit_test(test_task_limit),	   cmocka_unit_test(test_tcp_loopback),
	    cmocka_unit_test(test_files),	   cmocka_unit_test(test_ops_replacement),
	    cmocka_unit_test(test_stop_request),   cmocka_unit_test(test_shared_tasks),
	    cmocka_unit_test(test_shared_sockets), cmocka_unit_test(test_shared_busy_grows_pool),
	};

	P = k32_plat();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
