/*
 * k32_platform_baremetal.c - the platform ops for a single-core microcontroller without an
 * operating system (the Cortex-M images of `make mcu` / `make test-mcu`).
 *
 * Model: one core, no preemption. A "task" is a job: task_create queues its function and
 * k32_baremetal_run_tasks() (the main loop, and any task_yield or wait) runs queued jobs to
 * completion one after the other. Mutexes therefore never contend (nothing preempts a
 * holder) and are counters that catch a double lock; a condition wait runs the queued jobs
 * (one of which may signal) and then spins on the tick clock until its deadline. There are
 * no sockets and no files: those ops say K32_ERR_NOT_SUPPORTED, which the portable code
 * already reports as "not on this node". The clock is the board's 1 ms tick
 * (k32_baremetal_tick_ms, advanced by the SysTick handler in startup_cortexm.c) plus the
 * sub-millisecond part the board port reads from its timer.
 */
#include <stdlib.h>
#include <string.h>

#include "platform/k32_platform.h"

#include "platform/baremetal/k32_baremetal.h"

_Static_assert(sizeof(uint32_t) <= K32_PLAT_MUTEX_BYTES, "mutex storage");

volatile uint32_t k32_baremetal_tick_ms;
static uint32_t tick_hi; /* wraps of the 32-bit millisecond counter */
static uint32_t tick_last;

uint64_t k32_baremetal_now_us(void)
{
	uint32_t ms = k32_baremetal_tick_ms;
	if (ms < tick_last)
		tick_hi++;
	tick_last = ms;
	return (((uint64_t)tick_hi << 32) | ms) * 1000u + k32_baremetal_subtick_us();
}

static uint64_t bm_now_us(void)
{
	return k32_baremetal_now_us();
}

static uint64_t bm_wall_s(void)
{
	return bm_now_us() / 1000000u; /* no RTC: seconds since boot */
}

static void bm_sleep_us(uint64_t us)
{
	uint64_t until = bm_now_us() + us;
	while (bm_now_us() < until)
		k32_baremetal_run_tasks();
}

/* xorshift seeded from the clock: NOT cryptographic. A board port with a hardware RNG
 * (the ESP32's) replaces this op; the images here run no TLS. */
static k32_status_t bm_random(void *buf, size_t len)
{
	static uint32_t x;
	if (!x)
		x = (uint32_t)bm_now_us() | 1u;
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
	return K32_OK;
}

static void bm_mutex_init(struct k32_mutex *m)
{
	memset(m, 0, sizeof(*m));
}
static void bm_mutex_fini(struct k32_mutex *m)
{
	(void)m;
}
static void bm_mutex_lock(struct k32_mutex *m)
{
	uint32_t *held = (uint32_t *)(void *)m->opaque;
	if (*held)
		k32_baremetal_panic("mutex locked twice (no recursion on one core)");
	*held = 1;
}
static void bm_mutex_unlock(struct k32_mutex *m)
{
	uint32_t *held = (uint32_t *)(void *)m->opaque;
	*held = 0;
}

static void bm_cond_init(struct k32_cond *c)
{
	memset(c, 0, sizeof(*c));
}
static void bm_cond_fini(struct k32_cond *c)
{
	(void)c;
}
static k32_status_t bm_cond_wait(struct k32_cond *c, struct k32_mutex *m, int64_t deadline_us)
{
	uint32_t *signals = (uint32_t *)(void *)c->opaque;
	uint32_t seen = *signals;
	bm_mutex_unlock(m);
	for (;;) {
		k32_baremetal_run_tasks();
		if (*signals != seen)
			break;
		if (deadline_us == K32_FOREVER) {
			/* nothing else can run: a wait without deadline would never end */
			bm_mutex_lock(m);
			return K32_ERR_TIMED_OUT;
		}
		if ((int64_t)bm_now_us() >= deadline_us) {
			bm_mutex_lock(m);
			return K32_ERR_TIMED_OUT;
		}
	}
	bm_mutex_lock(m);
	return K32_OK;
}
static void bm_cond_signal(struct k32_cond *c)
{
	(*(uint32_t *)(void *)c->opaque)++;
}

/* ---- tasks: queued jobs ---- */

struct k32_task {
	char name[K32_PLAT_TASK_NAME_LEN];
	k32_task_fn fn;
	void *arg;
	uint64_t started_us;
	uint64_t cpu_us;
	bool used, queued, running, done;
};

static struct k32_task tasks[K32_PLAT_MAX_TASKS];
static unsigned run_depth;

static k32_status_t bm_task_create(struct k32_task **out, const char *name, k32_task_fn fn,
				   void *arg, size_t stack_bytes, int core, struct k32_err *err)
{
	(void)stack_bytes; /* jobs run on the main stack */
	(void)core;
	for (size_t i = 0; i < K32_PLAT_MAX_TASKS; i++) {
		struct k32_task *t = &tasks[i];
		if (t->used)
			continue;
		memset(t, 0, sizeof(*t));
		strncpy(t->name, name ? name : "task", sizeof(t->name) - 1);
		t->fn = fn;
		t->arg = arg;
		t->used = t->queued = true;
		*out = t;
		return K32_OK;
	}
	return k32_err_set(err, K32_ERR_NO_RESOURCES, "platform",
			   "task %s: all K32_PLAT_MAX_TASKS=%d task slots in use; join a task "
			   "or raise the limit",
			   name ? name : "?", (int)K32_PLAT_MAX_TASKS);
}

void k32_baremetal_run_tasks(void)
{
	if (run_depth >= 2) /* a job waiting inside a job: do not nest deeper */
		return;
	run_depth++;
	for (size_t i = 0; i < K32_PLAT_MAX_TASKS; i++) {
		struct k32_task *t = &tasks[i];
		if (!t->used || !t->queued)
			continue;
		t->queued = false;
		t->running = true;
		t->started_us = bm_now_us();
		t->fn(t->arg);
		t->cpu_us = bm_now_us() - t->started_us;
		t->running = false;
		t->done = true;
	}
	run_depth--;
}

static void bm_task_join(struct k32_task *t)
{
	while (t->queued)
		k32_baremetal_run_tasks();
	t->used = false;
}

static void bm_task_list(struct k32_task_info *out, size_t cap, size_t *out_count)
{
	size_t n = 0;
	for (size_t i = 0; i < K32_PLAT_MAX_TASKS && n < cap; i++) {
		if (!tasks[i].used)
			continue;
		memcpy(out[n].name, tasks[i].name, sizeof(out[n].name));
		out[n].cpu_us = tasks[i].cpu_us;
		out[n].started_us = tasks[i].started_us;
		out[n].running = !tasks[i].done;
		n++;
	}
	*out_count = n;
}

static void bm_task_share_threads(bool on)
{
	(void)on; /* one core, jobs run one after the other: nothing to share */
}

static void bm_task_yield(void)
{
	k32_baremetal_run_tasks();
}

static uint64_t bm_thread_cpu_us(void)
{
	return bm_now_us();
}

static unsigned bm_core_count(void)
{
	return 1;
}

/* ---- no network, no file system ---- */

static k32_status_t bm_tcp_listen(const char *host, uint16_t port, int backlog, k32_sock_t *out,
				  struct k32_err *err)
{
	(void)backlog;
	*out = K32_SOCK_INVALID;
	return k32_err_set(err, K32_ERR_NOT_SUPPORTED, "platform",
			   "listen on %s:%u: this bare-metal board has no network stack",
			   host ? host : "*", (unsigned)port);
}
static k32_status_t bm_sock_port(k32_sock_t s, uint16_t *out_port)
{
	(void)s;
	*out_port = 0;
	return K32_ERR_NOT_SUPPORTED;
}
static k32_status_t bm_tcp_accept(k32_sock_t l, k32_sock_t *out)
{
	(void)l;
	*out = K32_SOCK_INVALID;
	return K32_ERR_NOT_SUPPORTED;
}
static k32_status_t bm_tcp_connect(const char *host, uint16_t port, int64_t timeout_us,
				   k32_sock_t *out, struct k32_err *err)
{
	(void)timeout_us;
	*out = K32_SOCK_INVALID;
	return k32_err_set(err, K32_ERR_NOT_SUPPORTED, "platform",
			   "connect to %s:%u: this bare-metal board has no network stack",
			   host ? host : "?", (unsigned)port);
}
static k32_status_t bm_sock_set_nonblock(k32_sock_t s, bool on)
{
	(void)s;
	(void)on;
	return K32_ERR_NOT_SUPPORTED;
}
static k32_status_t bm_sock_send(k32_sock_t s, const void *buf, size_t len, size_t *out_sent)
{
	(void)s;
	(void)buf;
	(void)len;
	*out_sent = 0;
	return K32_ERR_NOT_SUPPORTED;
}
static k32_status_t bm_sock_recv(k32_sock_t s, void *buf, size_t cap, size_t *out_len)
{
	(void)s;
	(void)buf;
	(void)cap;
	*out_len = 0;
	return K32_ERR_NOT_SUPPORTED;
}
static void bm_sock_close(k32_sock_t s)
{
	(void)s;
}
static k32_status_t bm_poll(struct k32_pollfd *fds, size_t count, int64_t timeout_us,
			    size_t *out_ready)
{
	(void)fds;
	(void)count;
	*out_ready = 0;
	if (timeout_us > 0)
		bm_sleep_us((uint64_t)timeout_us);
	return count ? K32_ERR_NOT_SUPPORTED : K32_OK;
}

static k32_status_t no_files(const char *path, struct k32_err *err)
{
	return k32_err_set(err, K32_ERR_NOT_SUPPORTED, "platform",
			   "%s: this bare-metal board has no file system", path ? path : "?");
}
static k32_status_t bm_file_read_all(const char *path, const struct k32_allocator *alloc,
				     size_t max_len, uint8_t **out, size_t *out_len,
				     struct k32_err *err)
{
	(void)alloc;
	(void)max_len;
	*out = NULL;
	*out_len = 0;
	return no_files(path, err);
}
static k32_status_t bm_file_write_atomic(const char *path, const void *data, size_t len,
					 struct k32_err *err)
{
	(void)data;
	(void)len;
	return no_files(path, err);
}
static k32_status_t bm_file_open_append(const char *path, struct k32_file **out,
					struct k32_err *err)
{
	*out = NULL;
	return no_files(path, err);
}
static k32_status_t bm_file_append(struct k32_file *f, const void *data, size_t len,
				   struct k32_err *err)
{
	(void)f;
	(void)data;
	(void)len;
	return no_files("append", err);
}
static k32_status_t bm_file_sync(struct k32_file *f, struct k32_err *err)
{
	(void)f;
	return no_files("sync", err);
}
static k32_status_t bm_file_size(struct k32_file *f, uint64_t *out_len)
{
	(void)f;
	*out_len = 0;
	return K32_ERR_NOT_SUPPORTED;
}
static k32_status_t bm_file_truncate(struct k32_file *f, uint64_t len, struct k32_err *err)
{
	(void)f;
	(void)len;
	return no_files("truncate", err);
}
static void bm_file_close(struct k32_file *f)
{
	(void)f;
}
static k32_status_t bm_file_remove(const char *path, struct k32_err *err)
{
	(void)path;
	(void)err;
	return K32_OK; /* absent is OK, and nothing is ever present */
}
static k32_status_t bm_dir_create(const char *path, struct k32_err *err)
{
	return no_files(path, err);
}
static bool bm_file_exists(const char *path)
{
	(void)path;
	return false;
}

static k32_status_t bm_stop_watch(struct k32_err *err)
{
	(void)err;
	return K32_OK;
}
static bool bm_stop_wait(int64_t deadline_us)
{
	while (deadline_us != K32_FOREVER && (int64_t)bm_now_us() < deadline_us)
		k32_baremetal_run_tasks();
	return false; /* nobody asks a board to stop */
}

static const struct k32_platform_ops baremetal_ops = {
    .now_us = bm_now_us,
    .wall_s = bm_wall_s,
    .sleep_us = bm_sleep_us,
    .random = bm_random,
    .mutex_init = bm_mutex_init,
    .mutex_fini = bm_mutex_fini,
    .mutex_lock = bm_mutex_lock,
    .mutex_unlock = bm_mutex_unlock,
    .cond_init = bm_cond_init,
    .cond_fini = bm_cond_fini,
    .cond_wait = bm_cond_wait,
    .cond_signal = bm_cond_signal,
    .cond_broadcast = bm_cond_signal,
    .task_create = bm_task_create,
    .task_join = bm_task_join,
    .task_list = bm_task_list,
    .task_yield = bm_task_yield,
    .task_share_threads = bm_task_share_threads,
    .thread_cpu_us = bm_thread_cpu_us,
    .core_count = bm_core_count,
    .tcp_listen = bm_tcp_listen,
    .sock_port = bm_sock_port,
    .tcp_accept = bm_tcp_accept,
    .tcp_connect = bm_tcp_connect,
    .sock_set_nonblock = bm_sock_set_nonblock,
    .sock_send = bm_sock_send,
    .sock_recv = bm_sock_recv,
    .sock_close = bm_sock_close,
    .poll = bm_poll,
    .file_read_all = bm_file_read_all,
    .file_write_atomic = bm_file_write_atomic,
    .file_open_append = bm_file_open_append,
    .file_append = bm_file_append,
    .file_sync = bm_file_sync,
    .file_size = bm_file_size,
    .file_truncate = bm_file_truncate,
    .file_close = bm_file_close,
    .file_remove = bm_file_remove,
    .dir_create = bm_dir_create,
    .file_exists = bm_file_exists,
    .stop_watch = bm_stop_watch,
    .stop_wait = bm_stop_wait,
};

const struct k32_platform_ops *k32_plat_native(void)
{
	return &baremetal_ops;
}
