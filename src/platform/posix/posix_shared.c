/*
 * posix_shared.c - shared threads: many tasks (fibers) on a few OS threads. See
 * posix_shared.h for what a shared task is and where it gives up its thread.
 *
 * Pieces:
 *   - the scheduler lock S guards every fiber's state, the run queue (FIFO), the sleepers
 *     (waiting fibers with a deadline) and every condition's fiber-waiter list;
 *   - pool threads take the oldest ready fiber and switch to it (swapcontext); a fiber
 *     switches back when it waits, yields or ends, and the pool thread then finishes the
 *     hand-off (queues a fiber woken meanwhile, frees an ended one). A fiber never holds S
 *     across a switch, so every lock is released by the context that took it;
 *   - one poller thread (epoll) wakes fibers waiting on sockets; registrations carry the
 *     fiber's slot and wait generation, so a late event for a finished wait is ignored;
 *   - one monitor thread adds a pool thread when ready fibers waited K32_PLAT_SHARED_STALL_MS
 *     while every pool thread was busy (a pod's call computing until its deadline).
 * Idle, every thread sleeps: pool threads until the earliest sleeper's deadline, the poller
 * and the monitor until something happens.
 *
 * Thread-local state is read through a volatile function pointer: a fiber may resume on
 * another OS thread, and a compiler may otherwise keep a thread-local's address (or errno's)
 * across the switch. For the same reason no function here reads errno after a switch
 * without calling a non-inlined helper.
 */
#define _GNU_SOURCE
#include "platform/posix/posix_shared.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SHARED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARED_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SHARED_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHARED_TSAN 1
#endif
#endif

#ifdef SHARED_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
				     size_t *size_old);
#endif
#ifdef SHARED_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#if defined(SHARED_ASAN) || defined(SHARED_TSAN)
#define SHARED_STACK_SCALE 4u /* sanitizers' frames are larger */
#else
#define SHARED_STACK_SCALE 1u
#endif

enum fstate { F_READY, F_RUNNING, F_WAITING, F_DONE };

struct fiber {
	ucontext_t ctx;
	void *map; /* the stack mapping: a guard page, then the stack */
	size_t map_len;
	k32_task_fn fn;
	void *arg;
	uint32_t slot;
	enum fstate state;
	/* Switched out, or about to be: the pool thread that ran it has not finished the
	 * hand-off, so a waker only marks it ready and that pool thread queues it. */
	bool parking;
	bool timed_out;	  /* the last wait ended at its deadline */
	uint32_t gen;	  /* wait generation: epoll registrations carry it */
	int64_t deadline; /* of the current wait; -1: none */
	int sleeper;	  /* index in sleepers[]; -1: not there */
	struct fiber *rnext;
	struct posix_cond *wcond; /* condition it waits on, if any */
	struct fiber *wnext, *wprev;
	_Atomic uint64_t cpu_us; /* CPU time used, up to its last switch out */
	uint64_t cpu_in;	 /* its thread's CPU time at the last switch in */
	ucontext_t *sched_ctx;	 /* the pool thread's context it returns to */
#ifdef SHARED_ASAN
	void *fake;
	const void *sched_bottom;
	size_t sched_size;
#endif
#ifdef SHARED_TSAN
	void *tsan;
	void *sched_tsan;
#endif
};

static pthread_mutex_t S = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv; /* idle pool threads */
static pthread_cond_t mon_cv;  /* the monitor */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_errno;
static struct fiber *rq_head, *rq_tail;
static struct fiber *sleepers[K32_PLAT_HOST_MAX_TASKS];
static size_t nsleepers;
static int64_t next_deadline = -1; /* no later than the earliest sleeper's (may be stale) */
static struct fiber *by_slot[K32_PLAT_HOST_MAX_TASKS];
static unsigned pool_threads, idle_threads;
static uint64_t dispatches;
static int epfd = -1;

struct sched_tls {
	bool shared_for_thread;
	struct fiber *cur;
	ucontext_t ctx; /* the pool thread's own context */
#ifdef SHARED_TSAN
	void *tsan;
#endif
};
static __thread struct sched_tls tls;
static struct sched_tls *tls_get_impl(void)
{
	return &tls;
}
static struct sched_tls *(*volatile tls_get)(void) = tls_get_impl;

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void timed_wait(pthread_cond_t *cv, int64_t deadline_us)
{
	if (deadline_us < 0) {
		pthread_cond_wait(cv, &S);
		return;
	}
	struct timespec ts = {(time_t)(deadline_us / 1000000),
			      (long)(deadline_us % 1000000) * 1000};
	pthread_cond_timedwait(cv, &S, &ts);
}

bool fiber_current(void)
{
	return tls_get()->cur != NULL;
}

bool shared_wanted(void)
{
	struct sched_tls *t = tls_get();
	return t->shared_for_thread || t->cur;
}

void shared_set_for_thread(bool on)
{
	tls_get()->shared_for_thread = on;
}

/* ---- queues (S held) ------------------------------------------------------------------ */

static void ready_push_locked(struct fiber *f)
{
	f->state = F_READY;
	f->rnext = NULL;
	if (rq_tail)
		rq_tail->rnext = f;
	else
		rq_head = f;
	rq_tail = f;
	if (idle_threads)
		pthread_cond_signal(&pool_cv);
	else
		pthread_cond_signal(&mon_cv); /* every pool thread busy: the monitor watches */
}

static struct fiber *ready_pop_locked(void)
{
	struct fiber *f = rq_head;
	if (f) {
		rq_head = f->rnext;
		if (!rq_head)
			rq_tail = NULL;
	}
	return f;
}

static void sleeper_add_locked(struct fiber *f)
{
	f->sleeper = (int)nsleepers;
	sleepers[nsleepers++] = f;
	if (next_deadline < 0 || f->deadline < next_deadline) {
		next_deadline = f->deadline;
		if (idle_threads)
			pthread_cond_signal(&pool_cv); /* an idle thread re-arms its timer */
	}
}

static void sleeper_remove_locked(struct fiber *f)
{
	if (f->sleeper < 0)
		return;
	struct fiber *last = sleepers[--nsleepers];
	sleepers[f->sleeper] = last;
	last->sleeper = f->sleeper;
	f->sleeper = -1;
}

static void cond_unlink_locked(struct fiber *f)
{
	struct posix_cond *c = f->wcond;
	if (!c)
		return;
	if (f->wprev)
		f->wprev->wnext = f->wnext;
	else
		atomic_store(&c->fibers, f->wnext);
	if (f->wnext)
		f->wnext->wprev = f->wprev;
	f->wcond = NULL;
	f->wnext = f->wprev = NULL;
}

/* Ends f's wait (it runs again soon). */
static void wake_locked(struct fiber *f, bool timed_out)
{
	if (f->state != F_WAITING)
		return;
	sleeper_remove_locked(f);
	cond_unlink_locked(f);
	f->timed_out = timed_out;
	f->gen++;
	if (f->parking)
		f->state = F_READY; /* its pool thread queues it when the switch is done */
	else
		ready_push_locked(f);
}

/* Wakes the sleepers whose deadline has passed; returns the next deadline (-1: none). */
static int64_t expire_locked(int64_t now)
{
	if (next_deadline < 0 || now < next_deadline)
		return next_deadline;
	int64_t next = -1;
	for (size_t i = 0; i < nsleepers;) {
		struct fiber *f = sleepers[i];
		if (f->deadline <= now) {
			wake_locked(f, true); /* moves the last sleeper into slot i */
			continue;
		}
		if (next < 0 || f->deadline < next)
			next = f->deadline;
		i++;
	}
	next_deadline = next;
	return next;
}

/* ---- switching ------------------------------------------------------------------------ */

/* From a fiber to its pool thread. S is not held; the fiber's state says why it left. */
static void switch_out(struct fiber *f, bool dying)
{
	uint64_t c = thread_cpu();
	atomic_store(&f->cpu_us, atomic_load(&f->cpu_us) + (c - f->cpu_in));
#ifdef SHARED_ASAN
	__sanitizer_start_switch_fiber(dying ? NULL : &f->fake, f->sched_bottom, f->sched_size);
#else
	(void)dying;
#endif
#ifdef SHARED_TSAN
	__tsan_switch_to_fiber(f->sched_tsan, 0);
#endif
	swapcontext(&f->ctx, f->sched_ctx);
	/* resumed, perhaps on another OS thread */
#ifdef SHARED_ASAN
	__sanitizer_finish_switch_fiber(f->fake, &f->sched_bottom, &f->sched_size);
#endif
	f->cpu_in = thread_cpu();
}

static void fiber_entry(void)
{
	struct fiber *f = tls_get()->cur;
#ifdef SHARED_ASAN
	__sanitizer_finish_switch_fiber(NULL, &f->sched_bottom, &f->sched_size);
#endif
	f->cpu_in = thread_cpu();
	f->fn(f->arg);
	pthread_mutex_lock(&S);
	f->state = F_DONE;
	f->parking = true;
	pthread_mutex_unlock(&S);
	switch_out(f, true);
	abort(); /* an ended fiber is never resumed */
}

static void fiber_free(struct fiber *f)
{
#ifdef SHARED_TSAN
	__tsan_destroy_fiber(f->tsan);
#endif
	munmap(f->map, f->map_len);
	free(f);
}

/* Runs f on this pool thread until it switches back (S not held). */
static void run_fiber(struct fiber *f)
{
	struct sched_tls *t = tls_get();
	t->cur = f;
	f->sched_ctx = &t->ctx;
#ifdef SHARED_TSAN
	f->sched_tsan = t->tsan;
	__tsan_switch_to_fiber(f->tsan, 0);
#endif
#ifdef SHARED_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, (char *)f->map + sysconf(_SC_PAGESIZE),
				       f->map_len - (size_t)sysconf(_SC_PAGESIZE));
#endif
	swapcontext(&t->ctx, &f->ctx);
#ifdef SHARED_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	t->cur = NULL;
}

static void *pool_main(void *unused)
{
	(void)unused;
#ifdef SHARED_TSAN
	tls_get()->tsan = __tsan_get_current_fiber();
#endif
	pthread_mutex_lock(&S);
	for (;;) {
		int64_t next = expire_locked((int64_t)mono_us());
		struct fiber *f = ready_pop_locked();
		if (!f) {
			idle_threads++;
			timed_wait(&pool_cv, next);
			idle_threads--;
			continue;
		}
		f->state = F_RUNNING;
		f->parking = false;
		dispatches++;
		if (rq_head && !idle_threads)
			pthread_cond_signal(
			    &mon_cv); /* more waiting, none idle: watch for a stall */
		pthread_mutex_unlock(&S);
		run_fiber(f);
		pthread_mutex_lock(&S);
		f->parking = false;
		if (f->state == F_READY) {
			ready_push_locked(f); /* it yielded, or was woken while switching out */
		} else if (f->state == F_DONE) {
			by_slot[f->slot] = NULL;
			pthread_mutex_unlock(&S);
			fiber_free(f);
			pthread_mutex_lock(&S);
		}
	}
	return NULL;
}

static bool pool_thread_start_locked(void)
{
	pthread_t th;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	int rc = pthread_create(&th, &a, pool_main, NULL);
	pthread_attr_destroy(&a);
	if (rc)
		return false;
	pthread_detach(th);
#ifdef __linux__
	char name[16];
	snprintf(name, sizeof(name), "k32-shared-%u", pool_threads);
	pthread_setname_np(th, name);
#endif
	pool_threads++;
	return true;
}

/* Adds a pool thread when ready fibers have waited a whole stall period with every pool
 * thread busy; sleeps while some pool thread is idle or nothing is ready. */
static void *monitor_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&S);
	for (;;) {
		if (!rq_head || idle_threads) {
			pthread_cond_wait(&mon_cv, &S);
			continue;
		}
		uint64_t seen = dispatches;
		timed_wait(&mon_cv, (int64_t)mono_us() + K32_PLAT_SHARED_STALL_MS * 1000);
		if (rq_head && !idle_threads && dispatches == seen &&
		    pool_threads < K32_PLAT_SHARED_THREADS_MAX)
			pool_thread_start_locked();
	}
	return NULL;
}

/* Wakes the fibers whose sockets became ready. */
static void *poller_main(void *unused)
{
	(void)unused;
	struct epoll_event ev[64];
	for (;;) {
		int n = epoll_wait(epfd, ev, 64, -1);
		if (n <= 0)
			continue; /* EINTR */
		pthread_mutex_lock(&S);
		for (int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)(ev[i].data.u64 >> 32);
			uint32_t gen = (uint32_t)ev[i].data.u64;
			struct fiber *f = slot < K32_PLAT_HOST_MAX_TASKS ? by_slot[slot] : NULL;
			if (f && f->gen == gen)
				wake_locked(f, false);
		}
		pthread_mutex_unlock(&S);
	}
	return NULL;
}

static void shared_init(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&pool_cv, &a);
	pthread_cond_init(&mon_cv, &a);
	pthread_condattr_destroy(&a);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		init_errno = errno;
		return;
	}
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 128 * 1024);
	int rc = pthread_create(&th, &at, poller_main, NULL);
	if (!rc) {
		pthread_detach(th);
#ifdef __linux__
		pthread_setname_np(th, "k32-shared-io");
#endif
		rc = pthread_create(&th, &at, monitor_main, NULL);
	}
	pthread_attr_destroy(&at);
	if (rc) {
		init_errno = rc;
		return;
	}
	pthread_detach(th);
#ifdef __linux__
	pthread_setname_np(th, "k32-shared-mon");
#endif
	pthread_mutex_lock(&S);
	for (unsigned i = 0; i < K32_PLAT_SHARED_THREADS; i++)
		if (!pool_thread_start_locked() && !pool_threads)
			init_errno = EAGAIN;
	pthread_mutex_unlock(&S);
}

k32_status_t fiber_spawn(uint32_t slot, size_t stack_bytes, k32_task_fn fn, void *arg,
			 struct fiber **out, struct k32_err *err)
{
	pthread_once(&init_once, shared_init);
	if (init_errno)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "platform",
				   "shared threads: cannot start the pool: %s",
				   strerror(init_errno));
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t stack = stack_bytes ? stack_bytes : K32_PLAT_SHARED_STACK_BYTES;
	if (stack < 64 * 1024)
		stack = 64 * 1024; /* a TLS handshake's frames, as on a pthread */
	stack = (stack * SHARED_STACK_SCALE + page - 1) / page * page;
	struct fiber *f = calloc(1, sizeof(*f));
	if (!f)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "platform",
				   "shared task: no memory for its %zu-byte record", sizeof(*f));
	f->map_len = stack + page;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (f->map == MAP_FAILED) {
		int e = errno;
		free(f);
		return k32_err_set(err, K32_ERR_NO_MEMORY, "platform",
				   "shared task: cannot map its %zu-byte stack: %s", stack,
				   strerror(e));
	}
	mprotect(f->map, page, PROT_NONE); /* guard: an overflow faults, not corrupts */
	f->fn = fn;
	f->arg = arg;
	f->slot = slot;
	f->deadline = -1;
	f->sleeper = -1;
	getcontext(&f->ctx);
	f->ctx.uc_stack.ss_sp = (char *)f->map + page;
	f->ctx.uc_stack.ss_size = stack;
	f->ctx.uc_link = NULL;
	makecontext(&f->ctx, fiber_entry, 0);
#ifdef SHARED_TSAN
	f->tsan = __tsan_create_fiber(0);
#endif
	pthread_mutex_lock(&S);
	by_slot[slot] = f;
	ready_push_locked(f);
	pthread_mutex_unlock(&S);
	*out = f;
	return K32_OK;
}

uint64_t fiber_cpu_us(struct fiber *f)
{
	return atomic_load(&f->cpu_us);
}

uint64_t fiber_self_cpu_us(void)
{
	struct fiber *f = tls_get()->cur;
	return atomic_load(&f->cpu_us) + (thread_cpu() - f->cpu_in);
}

/* ---- blocking points ------------------------------------------------------------------ */

/* Puts the running fiber to wait (on c if not NULL, until deadline if >= 0); S held on
 * entry, released before the switch. */
static void wait_locked(struct fiber *f, struct posix_cond *c, int64_t deadline_us)
{
	f->state = F_WAITING;
	f->parking = true;
	f->timed_out = false;
	f->deadline = deadline_us;
	if (c) {
		struct fiber *head = atomic_load(&c->fibers);
		f->wcond = c;
		f->wprev = NULL;
		f->wnext = head;
		if (head)
			head->wprev = f;
		atomic_store(&c->fibers, f);
	}
	if (deadline_us >= 0)
		sleeper_add_locked(f);
}

void fiber_yield(void)
{
	struct fiber *f = tls_get()->cur;
	pthread_mutex_lock(&S);
	f->state = F_READY;
	f->parking = true;
	pthread_mutex_unlock(&S);
	switch_out(f, false);
}

void fiber_sleep_until(int64_t deadline_us)
{
	struct fiber *f = tls_get()->cur;
	pthread_mutex_lock(&S);
	wait_locked(f, NULL, deadline_us < 0 ? 0 : deadline_us);
	pthread_mutex_unlock(&S);
	switch_out(f, false);
}

void fiber_mutex_lock(pthread_mutex_t *m)
{
	/* A holder is running on another pool thread (a short section) or is parked at a
	 * blocking point with the lock held (a request under run_lock): yield a few times,
	 * then sleep in growing steps, never holding the pool thread. */
	uint64_t pause = 50;
	for (unsigned tries = 0;; tries++) {
		if (pthread_mutex_trylock(m) == 0)
			return;
		if (tries < 8) {
			fiber_yield();
			continue;
		}
		fiber_sleep_until((int64_t)(mono_us() + pause));
		if (pause < 2000)
			pause *= 2;
	}
}

k32_status_t fiber_cond_wait(struct posix_cond *c, pthread_mutex_t *m, int64_t deadline_us)
{
	struct fiber *f = tls_get()->cur;
	pthread_mutex_lock(&S);
	wait_locked(f, c, deadline_us);
	pthread_mutex_unlock(&S);
	pthread_mutex_unlock(m);
	switch_out(f, false);
	fiber_mutex_lock(m);
	return f->timed_out ? K32_ERR_TIMED_OUT : K32_OK;
}

void shared_cond_wake(struct posix_cond *c, bool all)
{
	if (!atomic_load(&c->fibers))
		return;
	pthread_mutex_lock(&S);
	struct fiber *f;
	while ((f = atomic_load(&c->fibers)) != NULL) {
		wake_locked(f, false);
		if (!all)
			break;
	}
	pthread_mutex_unlock(&S);
}

static __attribute__((noinline)) int poll_now(struct pollfd *fds, nfds_t n, int *out_errno)
{
	int rc;
	do {
		rc = poll(fds, n, 0);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		*out_errno = errno;
	return rc;
}

/* Registers fds[i] for f's current wait; a descriptor another fiber watches already is
 * registered through a duplicate (epoll keys on the descriptor). */
static __attribute__((noinline)) bool io_register(const struct pollfd *p, uint64_t key, int *out_fd)
{
	struct epoll_event ev = {0};
	ev.events = EPOLLONESHOT | ((p->events & POLLIN) ? EPOLLIN : 0u) |
		    ((p->events & POLLOUT) ? EPOLLOUT : 0u);
	ev.data.u64 = key;
	*out_fd = -1;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, p->fd, &ev) == 0) {
		*out_fd = p->fd;
		return true;
	}
	if (errno != EEXIST)
		return false;
	int d = dup(p->fd);
	if (d < 0)
		return false;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, d, &ev) != 0) {
		close(d);
		return false;
	}
	*out_fd = d;
	return true;
}

#define POLL_REG_STACK 32

int fiber_poll(struct pollfd *fds, nfds_t n, int64_t deadline_us, int *out_errno)
{
	struct fiber *f = tls_get()->cur;
	int small[POLL_REG_STACK];
	int *reg = n <= POLL_REG_STACK ? small : malloc(n * sizeof(int));
	if (!reg) {
		*out_errno = ENOMEM;
		return -1;
	}
	int rc;
	for (;;) {
		rc = poll_now(fds, n, out_errno);
		if (rc != 0 || (deadline_us >= 0 && (int64_t)mono_us() >= deadline_us))
			break;
		pthread_mutex_lock(&S);
		wait_locked(f, NULL, deadline_us);
		uint64_t key = ((uint64_t)f->slot << 32) | f->gen;
		pthread_mutex_unlock(&S);
		bool ok = true;
		for (nfds_t i = 0; i < n; i++) {
			reg[i] = -1;
			if (fds[i].fd >= 0 && ok)
				ok = io_register(&fds[i], key, &reg[i]);
		}
		if (!ok) {
			/* cannot watch it (not a socket?): look again after a short pause */
			pthread_mutex_lock(&S);
			if (f->state == F_WAITING) {
				sleeper_remove_locked(f);
				f->deadline = (int64_t)mono_us() + 1000;
				sleeper_add_locked(f);
			}
			pthread_mutex_unlock(&S);
		}
		switch_out(f, false);
		for (nfds_t i = 0; i < n; i++) {
			if (reg[i] < 0)
				continue;
			epoll_ctl(epfd, EPOLL_CTL_DEL, reg[i], NULL);
			if (reg[i] != fds[i].fd)
				close(reg[i]);
		}
	}
	if (reg != small)
		free(reg);
	return rc;
}
