/*
 * k32_platform_posix.c - the POSIX implementation of k32_platform.h (Linux; macOS where the
 * calls exist). This is the simulator's OS layer and the only file above libc that includes
 * OS headers.
 *
 * Divisions: clock, mutex/cond, tasks (a fixed table of K32_PLAT_HOST_MAX_TASKS slots so the
 * TASKS listing needs no allocation), TCP sockets, files.
 *
 * ESP-IDF port notes, per division: clock -> esp_timer_get_time(); mutex -> a static
 * FreeRTOS mutex; cond -> a counting semaphore plus a waiter count; tasks ->
 * xTaskCreatePinnedToCore with uxTaskGetSystemState() for run-time counters; sockets -> lwIP
 * (same BSD calls, select instead of poll); files -> the VFS over SPIFFS/FAT, where rename is
 * atomic on FAT only when the target is removed first (the port must keep a .tmp recovery
 * step on start).
 */
#define _GNU_SOURCE
#include "platform/k32_platform.h"
#include "platform/posix/posix_shared.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(pthread_mutex_t) <= K32_PLAT_MUTEX_BYTES, "K32_PLAT_MUTEX_BYTES too small");
_Static_assert(sizeof(struct posix_cond) <= K32_PLAT_COND_BYTES, "K32_PLAT_COND_BYTES too small");

#define PLAT "platform"

/* ---- clock ----------------------------------------------------------------------------- */

static uint64_t ts_to_us(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000u + (uint64_t)ts->tv_nsec / 1000u;
}

static uint64_t posix_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_to_us(&ts);
}

static uint64_t posix_wall_s(void)
{
	return (uint64_t)time(NULL);
}

static void posix_sleep_us(uint64_t us)
{
	if (fiber_current()) {
		fiber_sleep_until((int64_t)(posix_now_us() + us));
		return;
	}
	struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static k32_status_t posix_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return K32_ERR_IO;
		}
		p += n;
		len -= (size_t)n;
	}
	return K32_OK;
}

/* ---- mutex and condition variable ------------------------------------------------------ */

static void posix_mutex_init(struct k32_mutex *m)
{
	pthread_mutex_init((pthread_mutex_t *)m->opaque, NULL);
}

static void posix_mutex_fini(struct k32_mutex *m)
{
	pthread_mutex_destroy((pthread_mutex_t *)m->opaque);
}

static void posix_mutex_lock(struct k32_mutex *m)
{
	if (fiber_current())
		fiber_mutex_lock((pthread_mutex_t *)m->opaque);
	else
		pthread_mutex_lock((pthread_mutex_t *)m->opaque);
}

static void posix_mutex_unlock(struct k32_mutex *m)
{
	pthread_mutex_unlock((pthread_mutex_t *)m->opaque);
}

static void posix_cond_init(struct k32_cond *c)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	/* Deadlines are on the monotonic clock, so a wall-clock jump cannot stretch a wait. */
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&((struct posix_cond *)c->opaque)->pc, &attr);
	atomic_init(&((struct posix_cond *)c->opaque)->fibers, NULL);
	pthread_condattr_destroy(&attr);
}

static void posix_cond_fini(struct k32_cond *c)
{
	pthread_cond_destroy(&((struct posix_cond *)c->opaque)->pc);
}

static k32_status_t posix_cond_wait(struct k32_cond *c, struct k32_mutex *m, int64_t deadline_us)
{
	struct posix_cond *pc = (struct posix_cond *)c->opaque;
	struct timespec ts;
	int rc;

	if (fiber_current())
		return fiber_cond_wait(pc, (pthread_mutex_t *)m->opaque, deadline_us);
	if (deadline_us < 0) {
		pthread_cond_wait(&pc->pc, (pthread_mutex_t *)m->opaque);
		return K32_OK;
	}
	ts.tv_sec = (time_t)(deadline_us / 1000000);
	ts.tv_nsec = (long)(deadline_us % 1000000) * 1000;
	rc = pthread_cond_timedwait(&pc->pc, (pthread_mutex_t *)m->opaque, &ts);
	return rc == ETIMEDOUT ? K32_ERR_TIMED_OUT : K32_OK;
}

static void posix_cond_signal(struct k32_cond *c)
{
	pthread_cond_signal(&((struct posix_cond *)c->opaque)->pc);
	shared_cond_wake((struct posix_cond *)c->opaque, false);
}

static void posix_cond_broadcast(struct k32_cond *c)
{
	pthread_cond_broadcast(&((struct posix_cond *)c->opaque)->pc);
	shared_cond_wake((struct posix_cond *)c->opaque, true);
}

/* ---- tasks ----------------------------------------------------------------------------- */

struct k32_task {
	bool used;    /* slot taken (until joined) */
	bool running; /* fn has not returned yet */
	pthread_t thread;
	struct fiber *fiber; /* a shared task (posix_shared.h); NULL: its own thread */
	char name[K32_PLAT_TASK_NAME_LEN];
	k32_task_fn fn;
	void *arg;
	uint64_t started_us;
	uint64_t final_cpu_us; /* CPU time recorded when fn returned */
};

/* Tasks with their own OS thread count against K32_PLAT_MAX_TASKS (as on a board); shared
 * tasks (the simulator's boards) only against the table's K32_PLAT_HOST_MAX_TASKS. */
static struct k32_task tasks[K32_PLAT_HOST_MAX_TASKS];
static size_t thread_tasks;
static pthread_mutex_t tasks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct posix_cond tasks_done; /* a shared task ended (task_join of one waits here) */
static pthread_once_t tasks_once = PTHREAD_ONCE_INIT;

static uint64_t posix_thread_cpu_us(void)
{
	struct timespec ts;

	if (fiber_current())
		return fiber_self_cpu_us();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts_to_us(&ts);
}

static void posix_task_set_priority(int prio)
{
	(void)prio; /* see k32_platform.h: no priorities for unprivileged threads here */
}

static void posix_task_yield(void)
{
	if (fiber_current())
		fiber_yield();
	else
		sched_yield();
}

static void *task_trampoline(void *p)
{
	struct k32_task *t = p;
	uint64_t cpu;

	t->fn(t->arg);
	cpu = posix_thread_cpu_us();
	pthread_mutex_lock(&tasks_lock);
	t->final_cpu_us = cpu;
	t->running = false;
	pthread_mutex_unlock(&tasks_lock);
	return NULL;
}

static void tasks_lock_any(void)
{
	if (fiber_current())
		fiber_mutex_lock(&tasks_lock);
	else
		pthread_mutex_lock(&tasks_lock);
}

static void shared_task_main(void *p)
{
	struct k32_task *t = p;

	t->fn(t->arg);
	uint64_t cpu = fiber_self_cpu_us();
	tasks_lock_any();
	t->final_cpu_us = cpu;
	t->running = false;
	pthread_cond_broadcast(&tasks_done.pc);
	shared_cond_wake(&tasks_done, true);
	pthread_mutex_unlock(&tasks_lock);
}

/* One heap for all tasks, as on a board (see K32_PLAT_MALLOC_ARENAS); and as many open
 * descriptors as the hard limit allows (a simulator's thousand boards hold ~8 each). */
static void tasks_setup(void)
{
#if defined(__GLIBC__) && K32_PLAT_MALLOC_ARENAS > 0
	mallopt(M_ARENA_MAX, K32_PLAT_MALLOC_ARENAS);
#endif
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&tasks_done.pc, &attr);
	pthread_condattr_destroy(&attr);
	atomic_init(&tasks_done.fibers, NULL);
}

static void posix_task_share_threads(bool on)
{
	shared_set_for_thread(on);
}

static k32_status_t posix_task_create(struct k32_task **out, const char *name, k32_task_fn fn,
				      void *arg, size_t stack_bytes, int core, struct k32_err *err)
{
	pthread_once(&tasks_once, tasks_setup);
	struct k32_task *t = NULL;
	pthread_attr_t attr;
	int rc;
	bool shared = shared_wanted();

	*out = NULL;
	tasks_lock_any();
	if (shared || thread_tasks < K32_PLAT_MAX_TASKS) {
		for (size_t i = 0; i < K32_PLAT_HOST_MAX_TASKS; i++) {
			if (!tasks[i].used) {
				t = &tasks[i];
				break;
			}
		}
	}
	if (!t) {
		pthread_mutex_unlock(&tasks_lock);
		if (shared)
			return k32_err_set(err, K32_ERR_NO_RESOURCES, PLAT,
					   "task \"%s\": all %d task slots in use "
					   "(K32_PLAT_HOST_MAX_TASKS); run fewer boards or raise "
					   "the limit",
					   name, K32_PLAT_HOST_MAX_TASKS);
		return k32_err_set(err, K32_ERR_NO_RESOURCES, PLAT,
				   "task \"%s\": all %d task slots in use (K32_PLAT_MAX_TASKS); "
				   "join finished tasks or raise the limit",
				   name, K32_PLAT_MAX_TASKS);
	}
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->running = true;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "task");
	t->fn = fn;
	t->arg = arg;
	t->started_us = posix_now_us();
	if (!shared)
		thread_tasks++;
	pthread_mutex_unlock(&tasks_lock);

	if (shared) {
		(void)core; /* a shared task runs on whichever pool thread is free */
		k32_status_t st = fiber_spawn((uint32_t)(t - tasks), stack_bytes, shared_task_main,
					      t, &t->fiber, err);
		if (st != K32_OK) {
			tasks_lock_any();
			t->used = false;
			pthread_mutex_unlock(&tasks_lock);
			return st;
		}
		*out = t;
		return K32_OK;
	}
	pthread_attr_init(&attr);
	if (stack_bytes) {
		if (stack_bytes < (size_t)PTHREAD_STACK_MIN)
			stack_bytes = (size_t)PTHREAD_STACK_MIN;
		pthread_attr_setstacksize(&attr, stack_bytes);
	}
#ifdef __linux__
	if (core >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((unsigned)core, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
#else
	(void)core;
#endif
	rc = pthread_create(&t->thread, &attr, task_trampoline, t);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		tasks_lock_any();
		t->used = false;
		thread_tasks--;
		pthread_mutex_unlock(&tasks_lock);
		return k32_err_set(err, K32_ERR_NO_RESOURCES, PLAT,
				   "task \"%s\": cannot start a thread: %s", name, strerror(rc));
	}
#ifdef __linux__
	pthread_setname_np(t->thread, t->name);
#endif
	*out = t;
	return K32_OK;
}

static void posix_task_join(struct k32_task *t)
{
	if (!t)
		return;
	if (t->fiber) {
		tasks_lock_any();
		while (t->running) {
			if (fiber_current())
				fiber_cond_wait(&tasks_done, &tasks_lock, K32_FOREVER);
			else
				pthread_cond_wait(&tasks_done.pc, &tasks_lock);
		}
		t->used = false;
		pthread_mutex_unlock(&tasks_lock);
		return;
	}
	pthread_join(t->thread, NULL);
	tasks_lock_any();
	t->used = false;
	thread_tasks--;
	pthread_mutex_unlock(&tasks_lock);
}

static void posix_task_list(struct k32_task_info *out, size_t cap, size_t *out_count)
{
	size_t n = 0;

	tasks_lock_any();
	for (size_t i = 0; i < K32_PLAT_HOST_MAX_TASKS; i++) {
		struct k32_task *t = &tasks[i];

		if (!t->used)
			continue;
		if (n < cap) {
			struct k32_task_info *info = &out[n];
			uint64_t cpu = t->final_cpu_us;

			if (t->running && t->fiber) {
				cpu = fiber_cpu_us(t->fiber);
			} else if (t->running) {
				clockid_t cid;
				struct timespec ts;

				if (pthread_getcpuclockid(t->thread, &cid) == 0 &&
				    clock_gettime(cid, &ts) == 0)
					cpu = ts_to_us(&ts);
			}
			memcpy(info->name, t->name, sizeof(info->name));
			info->cpu_us = cpu;
			info->started_us = t->started_us;
			info->running = t->running;
		}
		n++;
	}
	pthread_mutex_unlock(&tasks_lock);
	*out_count = n;
}

static unsigned posix_core_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1u;
}

/* ---- sockets --------------------------------------------------------------------------- */

static k32_status_t resolve_ipv4(const char *host, uint16_t port, struct sockaddr_in *sa,
				 struct k32_err *err)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (!host || !*host || strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, PLAT,
		    "address \"%s\" is not an IPv4 address; use dotted form or localhost", host);
	return K32_OK;
}

static void sock_tune(int fd)
{
	int one = 1;

	/* Request/response traffic: send small writes at once. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
#ifdef SO_NOSIGPIPE
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
}

static k32_status_t posix_tcp_listen(const char *host, uint16_t port, int backlog, k32_sock_t *out,
				     struct k32_err *err)
{
	struct sockaddr_in sa;
	int one = 1;
	int fd;
	k32_status_t st = resolve_ipv4(host, port, &sa, err);

	*out = K32_SOCK_INVALID;
	if (st != K32_OK)
		return st;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, PLAT, "socket(): %s",
				   strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return k32_err_set(err, e == EADDRINUSE ? K32_ERR_ALREADY_EXISTS : K32_ERR_IO, PLAT,
				   "cannot listen on %s:%u: %s; pick another port",
				   host ? host : "127.0.0.1", port, strerror(e));
	}
	if (listen(fd, backlog > 0 ? backlog : 16) != 0) {
		int e = errno;

		close(fd);
		return k32_err_set(err, K32_ERR_IO, PLAT, "listen(): %s", strerror(e));
	}
	*out = fd;
	return K32_OK;
}

static k32_status_t posix_sock_port(k32_sock_t s, uint16_t *out_port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(s, (struct sockaddr *)&sa, &len) != 0)
		return K32_ERR_IO;
	*out_port = ntohs(sa.sin_port);
	return K32_OK;
}

static k32_status_t posix_sock_peer_addr(k32_sock_t s, uint32_t *out_addr)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	*out_addr = 0;
	if (getpeername(s, (struct sockaddr *)&ss, &len) != 0)
		return K32_ERR_IO;
	if (ss.ss_family == AF_INET) {
		*out_addr = ntohl(((const struct sockaddr_in *)&ss)->sin_addr.s_addr);
		return K32_OK;
	}
	return K32_ERR_NOT_SUPPORTED;
}

static k32_status_t posix_tcp_accept(k32_sock_t listener, k32_sock_t *out)
{
	int fd;

	do {
		fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		*out = K32_SOCK_INVALID;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return K32_ERR_SHOULD_WAIT;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			return K32_ERR_NO_RESOURCES;
		return K32_ERR_IO;
	}
	sock_tune(fd);
	*out = fd;
	return K32_OK;
}

static k32_status_t posix_sock_set_nonblock(k32_sock_t s, bool on)
{
	int flags = fcntl(s, F_GETFL, 0);

	if (flags < 0)
		return K32_ERR_IO;
	flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
	return fcntl(s, F_SETFL, flags) == 0 ? K32_OK : K32_ERR_IO;
}

static k32_status_t posix_tcp_connect(const char *host, uint16_t port, int64_t timeout_us,
				      k32_sock_t *out, struct k32_err *err)
{
	struct sockaddr_in sa;
	int fd;
	int rc;
	k32_status_t st = resolve_ipv4(host, port, &sa, err);

	*out = K32_SOCK_INVALID;
	if (st != K32_OK)
		return st;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, PLAT, "socket(): %s",
				   strerror(errno));
	posix_sock_set_nonblock(fd, true);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc != 0 && errno == EINPROGRESS) {
		struct pollfd p = {fd, POLLOUT, 0};
		int ms = timeout_us < 0 ? -1 : (int)((timeout_us + 999) / 1000);
		int so_err = 0;
		socklen_t len = sizeof(so_err);

		if (fiber_current()) {
			int e = 0;
			rc = fiber_poll(&p, 1, timeout_us < 0 ? -1 : k32_deadline_after(timeout_us),
					&e);
		} else {
			do {
				rc = poll(&p, 1, ms);
			} while (rc < 0 && errno == EINTR);
		}
		if (rc == 0) {
			close(fd);
			return k32_err_set(err, K32_ERR_TIMED_OUT, PLAT,
					   "connect to %s:%u timed out after %lld ms", host, port,
					   (long long)(timeout_us / 1000));
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_err, &len);
		errno = so_err;
		rc = so_err ? -1 : 0;
	}
	if (rc != 0) {
		int e = errno;

		close(fd);
		return k32_err_set(err, e == ECONNREFUSED ? K32_ERR_PEER_CLOSED : K32_ERR_IO, PLAT,
				   "connect to %s:%u: %s; is the server running?", host, port,
				   strerror(e));
	}
	posix_sock_set_nonblock(fd, false);
	sock_tune(fd);
	*out = fd;
	return K32_OK;
}

static k32_status_t errno_to_sock_status(int e)
{
	if (e == EAGAIN || e == EWOULDBLOCK)
		return K32_ERR_SHOULD_WAIT;
	if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
		return K32_ERR_PEER_CLOSED;
	return K32_ERR_IO;
}

/* One send or recv (flags: MSG_DONTWAIT from a shared task); the errno of a failure in
 * *out_errno. Not inlined: a shared task may resume on another thread between two calls,
 * and errno's address is per thread. */
static __attribute__((noinline)) ssize_t sock_io(k32_sock_t s, void *buf, size_t len, bool out,
						 int flags, int *out_errno)
{
	ssize_t n;

	do {
		n = out ? send(s, buf, len, MSG_NOSIGNAL | flags) : recv(s, buf, len, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		*out_errno = errno;
	return n;
}

static __attribute__((noinline)) bool sock_is_blocking(k32_sock_t s)
{
	int flags = fcntl(s, F_GETFL, 0);

	return flags >= 0 && !(flags & O_NONBLOCK);
}

/* A send or recv; from a shared task, a blocking socket's wait parks the task, not its
 * thread. */
static ssize_t sock_io_wait(k32_sock_t s, void *buf, size_t len, bool out, int *out_errno)
{
	if (!fiber_current())
		return sock_io(s, buf, len, out, 0, out_errno);
	for (;;) {
		ssize_t n = sock_io(s, buf, len, out, MSG_DONTWAIT, out_errno);

		if (n >= 0 || (*out_errno != EAGAIN && *out_errno != EWOULDBLOCK) ||
		    !sock_is_blocking(s))
			return n;
		struct pollfd p = {s, out ? POLLOUT : POLLIN, 0};
		int e = 0;

		if (fiber_poll(&p, 1, -1, &e) < 0) {
			*out_errno = e;
			return -1;
		}
	}
}

static k32_status_t posix_sock_send(k32_sock_t s, const void *buf, size_t len, size_t *out_sent)
{
	ssize_t n;
	int e = 0;

	*out_sent = 0;
	n = sock_io_wait(s, (void *)buf, len, true, &e);
	if (n < 0)
		return errno_to_sock_status(e);
	*out_sent = (size_t)n;
	return K32_OK;
}

static k32_status_t posix_sock_recv(k32_sock_t s, void *buf, size_t cap, size_t *out_len)
{
	ssize_t n;
	int e = 0;

	*out_len = 0;
	n = sock_io_wait(s, buf, cap, false, &e);
	if (n < 0)
		return errno_to_sock_status(e);
	if (n == 0 && cap > 0)
		return K32_ERR_PEER_CLOSED;
	*out_len = (size_t)n;
	return K32_OK;
}

static void posix_sock_close(k32_sock_t s)
{
	if (s >= 0)
		close(s);
}

/* Sockets watched in one poll call at most. Up to POSIX_POLL_STACK of them are converted on
 * the stack (512 B: a kubelet or client task with a board-sized 16 KiB stack polls one or
 * two); a server with more connections open takes a heap array for the call. */
#define POSIX_POLL_MAX	 8192
#define POSIX_POLL_STACK 64

static k32_status_t posix_poll(struct k32_pollfd *fds, size_t count, int64_t timeout_us,
			       size_t *out_ready)
{
	struct pollfd small[POSIX_POLL_STACK];
	struct pollfd *pfds = small;
	int ms;
	int rc;
	size_t ready = 0;

	*out_ready = 0;
	if (count > POSIX_POLL_MAX)
		return K32_ERR_OUT_OF_RANGE;
	if (count > POSIX_POLL_STACK) {
		pfds = malloc(count * sizeof(*pfds));
		if (!pfds)
			return K32_ERR_NO_MEMORY;
	}
	for (size_t i = 0; i < count; i++) {
		pfds[i].fd = fds[i].sock;
		pfds[i].events = (short)(((fds[i].events & K32_POLL_IN) ? POLLIN : 0) |
					 ((fds[i].events & K32_POLL_OUT) ? POLLOUT : 0));
		pfds[i].revents = 0;
		fds[i].revents = 0;
	}
	ms = timeout_us < 0 ? -1 : (int)((timeout_us + 999) / 1000);
	if (fiber_current()) {
		int e = 0;

		rc = fiber_poll(pfds, (nfds_t)count, k32_deadline_after(timeout_us), &e);
	} else {
		do {
			rc = poll(pfds, (nfds_t)count, ms);
		} while (rc < 0 && errno == EINTR);
	}
	if (rc < 0) {
		if (pfds != small)
			free(pfds);
		return K32_ERR_IO;
	}
	for (size_t i = 0; i < count; i++) {
		uint32_t r = 0;

		if (pfds[i].revents & POLLIN)
			r |= K32_POLL_IN;
		if (pfds[i].revents & POLLOUT)
			r |= K32_POLL_OUT;
		if (pfds[i].revents & (POLLERR | POLLHUP | POLLNVAL))
			r |= K32_POLL_ERR;
		fds[i].revents = r;
		if (r)
			ready++;
	}
	if (pfds != small)
		free(pfds);
	*out_ready = ready;
	return K32_OK;
}

/* ---- files ----------------------------------------------------------------------------- */

struct k32_file {
	int fd;
};

static k32_status_t file_errno(struct k32_err *err, const char *what, const char *path)
{
	int e = errno;
	k32_status_t st = K32_ERR_IO;

	if (e == ENOENT)
		st = K32_ERR_NOT_FOUND;
	else if (e == EACCES || e == EPERM || e == EROFS)
		st = K32_ERR_ACCESS_DENIED;
	else if (e == ENOSPC || e == EDQUOT)
		st = K32_ERR_NO_RESOURCES;
	return k32_err_set(err, st, PLAT, "%s %s: %s", what, path, strerror(e));
}

static k32_status_t write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return K32_ERR_IO;
		}
		p += n;
		len -= (size_t)n;
	}
	return K32_OK;
}

static k32_status_t posix_file_read_all(const char *path, const struct k32_allocator *alloc,
					size_t max_len, uint8_t **out_data, size_t *out_len,
					struct k32_err *err)
{
	struct stat stbuf;
	uint8_t *data;
	size_t len;
	size_t got = 0;
	int fd;

	*out_data = NULL;
	*out_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return file_errno(err, "cannot open", path);
	if (fstat(fd, &stbuf) != 0) {
		k32_status_t st = file_errno(err, "cannot stat", path);

		close(fd);
		return st;
	}
	len = (size_t)stbuf.st_size;
	if (len > max_len) {
		close(fd);
		return k32_err_set(err, K32_ERR_OUT_OF_RANGE, PLAT,
				   "%s is %zu bytes, more than the %zu allowed", path, len,
				   max_len);
	}
	data = k32_alloc(alloc, len + 1);
	if (!data) {
		close(fd);
		return k32_err_set(err, K32_ERR_NO_MEMORY, PLAT,
				   "no memory for the %zu bytes of %s", len + 1, path);
	}
	while (got < len) {
		ssize_t n = read(fd, data + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the file shrank under us: return what is there */
		got += (size_t)n;
	}
	close(fd);
	if (got < len) {
		uint8_t *shrunk = k32_realloc(alloc, data, len + 1, got + 1);

		if (shrunk)
			data = shrunk;
		else
			got = len; /* keep the size the block was allocated with */
	}
	data[got] = '\0';
	*out_data = data;
	*out_len = got;
	return K32_OK;
}

static k32_status_t fsync_parent_dir(const char *path)
{
	char dir[512];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return K32_ERR_IO;
	fsync(fd);
	close(fd);
	return K32_OK;
}

static k32_status_t posix_file_write_atomic(const char *path, const void *data, size_t len,
					    struct k32_err *err)
{
	char tmp[512];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, PLAT, "path too long: %s", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return file_errno(err, "cannot create", tmp);
	if (write_all(fd, data, len) != K32_OK || fsync(fd) != 0) {
		k32_status_t st = file_errno(err, "cannot write", tmp);

		close(fd);
		unlink(tmp);
		return st;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		k32_status_t st = file_errno(err, "cannot rename onto", path);

		unlink(tmp);
		return st;
	}
	fsync_parent_dir(path);
	return K32_OK;
}

static k32_status_t posix_file_open_append(const char *path, struct k32_file **out,
					   struct k32_err *err)
{
	struct k32_file *f;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	*out = NULL;
	if (fd < 0)
		return file_errno(err, "cannot open for appending", path);
	f = malloc(sizeof(*f));
	if (!f) {
		close(fd);
		return k32_err_set(err, K32_ERR_NO_MEMORY, PLAT, "no memory to open %s", path);
	}
	f->fd = fd;
	fsync_parent_dir(path); /* make the new directory entry durable too */
	*out = f;
	return K32_OK;
}

static k32_status_t posix_file_append(struct k32_file *f, const void *data, size_t len,
				      struct k32_err *err)
{
	if (write_all(f->fd, data, len) != K32_OK)
		return file_errno(err, "cannot append to", "file");
	return K32_OK;
}

static k32_status_t posix_file_sync(struct k32_file *f, struct k32_err *err)
{
	if (fdatasync(f->fd) != 0)
		return file_errno(err, "cannot sync", "file");
	return K32_OK;
}

static k32_status_t posix_file_size(struct k32_file *f, uint64_t *out_len)
{
	struct stat stbuf;

	if (fstat(f->fd, &stbuf) != 0)
		return K32_ERR_IO;
	*out_len = (uint64_t)stbuf.st_size;
	return K32_OK;
}

static k32_status_t posix_file_truncate(struct k32_file *f, uint64_t len, struct k32_err *err)
{
	if (ftruncate(f->fd, (off_t)len) != 0 || fsync(f->fd) != 0)
		return file_errno(err, "cannot truncate", "file");
	return K32_OK;
}

static void posix_file_close(struct k32_file *f)
{
	if (!f)
		return;
	close(f->fd);
	free(f);
}

static k32_status_t posix_file_remove(const char *path, struct k32_err *err)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return file_errno(err, "cannot remove", path);
	return K32_OK;
}

static k32_status_t posix_dir_create(const char *path, struct k32_err *err)
{
	char buf[512];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, PLAT, "bad directory path \"%s\"",
				   path);
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char saved = buf[i];

		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return file_errno(err, "cannot create directory", buf);
		buf[i] = saved;
	}
	return K32_OK;
}

static bool posix_file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* ---- stop requests ---------------------------------------------------------------------- */

/* The self-pipe: the signal handler writes a byte (async-signal-safe), stop_wait polls the
 * read end. Both ends non-blocking, so a burst of signals never blocks the handler. */
static int stop_pipe[2] = {-1, -1};

static void posix_on_stop_signal(int sig)
{
	(void)sig;
	int saved = errno;
	const char b = 1;
	ssize_t n = write(stop_pipe[1], &b, 1);
	(void)n; /* a full pipe already holds a request */
	errno = saved;
}

static k32_status_t posix_stop_watch(struct k32_err *err)
{
	if (stop_pipe[0] < 0) {
		if (pipe(stop_pipe) != 0)
			return k32_err_set(err, K32_ERR_IO, "platform", "stop_watch: pipe: %s",
					   strerror(errno));
		for (int i = 0; i < 2; i++) {
			fcntl(stop_pipe[i], F_SETFL, fcntl(stop_pipe[i], F_GETFL) | O_NONBLOCK);
			fcntl(stop_pipe[i], F_SETFD, FD_CLOEXEC);
		}
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = posix_on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		return k32_err_set(err, K32_ERR_IO, "platform", "stop_watch: sigaction: %s",
				   strerror(errno));
	return K32_OK;
}

static bool posix_stop_wait(int64_t deadline_us)
{
	if (stop_pipe[0] < 0)
		return false; /* nothing armed: nothing can ask */
	for (;;) {
		int timeout_ms = -1;
		if (deadline_us != K32_FOREVER) {
			int64_t left = deadline_us - (int64_t)posix_now_us();
			if (left <= 0)
				timeout_ms = 0;
			else
				timeout_ms =
				    left / 1000 > 1000000 ? 1000000 : (int)((left + 999) / 1000);
		}
		struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};
		int r = poll(&p, 1, timeout_ms);
		if (r > 0) {
			char b;
			while (read(stop_pipe[0], &b, 1) == 1) {
			}
			return true;
		}
		if (r == 0 && timeout_ms >= 0 && deadline_us != K32_FOREVER &&
		    (int64_t)posix_now_us() >= deadline_us)
			return false;
		/* EINTR, or a capped timeout that has not reached the deadline: wait on */
	}
}

/* ---- the table ------------------------------------------------------------------------- */

static const struct k32_platform_ops posix_ops = {
    .now_us = posix_now_us,
    .wall_s = posix_wall_s,
    .sleep_us = posix_sleep_us,
    .random = posix_random,
    .mutex_init = posix_mutex_init,
    .mutex_fini = posix_mutex_fini,
    .mutex_lock = posix_mutex_lock,
    .mutex_unlock = posix_mutex_unlock,
    .cond_init = posix_cond_init,
    .cond_fini = posix_cond_fini,
    .cond_wait = posix_cond_wait,
    .cond_signal = posix_cond_signal,
    .cond_broadcast = posix_cond_broadcast,
    .task_create = posix_task_create,
    .task_join = posix_task_join,
    .task_list = posix_task_list,
    .task_yield = posix_task_yield,
    .task_set_priority = posix_task_set_priority,
    .task_share_threads = posix_task_share_threads,
    .thread_cpu_us = posix_thread_cpu_us,
    .core_count = posix_core_count,
    .tcp_listen = posix_tcp_listen,
    .sock_port = posix_sock_port,
    .sock_peer_addr = posix_sock_peer_addr,
    .tcp_accept = posix_tcp_accept,
    .tcp_connect = posix_tcp_connect,
    .sock_set_nonblock = posix_sock_set_nonblock,
    .sock_send = posix_sock_send,
    .sock_recv = posix_sock_recv,
    .sock_close = posix_sock_close,
    .poll = posix_poll,
    .file_read_all = posix_file_read_all,
    .file_write_atomic = posix_file_write_atomic,
    .file_open_append = posix_file_open_append,
    .file_append = posix_file_append,
    .file_sync = posix_file_sync,
    .file_size = posix_file_size,
    .file_truncate = posix_file_truncate,
    .file_close = posix_file_close,
    .file_remove = posix_file_remove,
    .dir_create = posix_dir_create,
    .file_exists = posix_file_exists,
    .stop_watch = posix_stop_watch,
    .stop_wait = posix_stop_wait,
};

const struct k32_platform_ops *k32_plat_native(void)
{
	return &posix_ops;
}
