/*
 * posix_shared.h - shared threads for the POSIX platform (internal to src/platform/posix).
 *
 * A "shared" task is a fiber (its own stack and context) that runs on a small pool of OS
 * threads instead of owning one: kube32-sim's boards (a kubelet's three tasks and its pod
 * server's) are shared tasks, so a thousand boards need a handful of OS threads, not four
 * thousand. A shared task gives up its OS thread at the platform's blocking points (a
 * contended mutex, a condition wait, a sleep, a poll, a socket read or write that would
 * block, a yield), never in between: a board whose task computes (a pod's call) keeps its
 * thread until its call's deadline ends it, and when every pool thread has been busy with
 * waiting work for K32_PLAT_SHARED_STALL_MS the pool grows (up to
 * K32_PLAT_SHARED_THREADS_MAX), so one busy board cannot stall the others.
 *
 * Every function here is called by k32_platform_posix.c on behalf of the platform ops; the
 * ones named fiber_* must be called from a shared task only (fiber_current() is true).
 */
#ifndef POSIX_SHARED_H
#define POSIX_SHARED_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/k32_platform.h"

struct fiber;

/* The posix k32_cond: a pthread condition for OS-thread waiters, a list of fiber waiters. */
struct posix_cond {
	pthread_cond_t pc;
	_Atomic(struct fiber *) fibers; /* waiting fibers (guarded by the scheduler's lock) */
};

/* True when the caller runs as a shared task. */
bool fiber_current(void);
/* Whether a task created now by the caller should be a shared task: the calling OS thread
 * asked for it (shared_set_for_thread) or the caller is itself a shared task. */
bool shared_wanted(void);
void shared_set_for_thread(bool on);

/* Starts fn(arg) as a shared task of stack_bytes (0: K32_PLAT_SHARED_STACK_BYTES). slot is
 * the caller's task table index (below K32_PLAT_HOST_MAX_TASKS). */
k32_status_t fiber_spawn(uint32_t slot, size_t stack_bytes, k32_task_fn fn, void *arg,
			 struct fiber **out, struct k32_err *err);
/* CPU time a shared task has used. */
uint64_t fiber_cpu_us(struct fiber *f);

/* Blocking points, from a shared task. */
void fiber_mutex_lock(pthread_mutex_t *m);
k32_status_t fiber_cond_wait(struct posix_cond *c, pthread_mutex_t *m, int64_t deadline_us);
void fiber_sleep_until(int64_t deadline_us);
void fiber_yield(void);
/* poll(2) semantics (returns the ready count, 0 on timeout, -1 with *out_errno); the fds
 * are watched without holding the OS thread. */
int fiber_poll(struct pollfd *fds, nfds_t n, int64_t deadline_us, int *out_errno);
uint64_t fiber_self_cpu_us(void);

/* Wakes fiber waiters of c (any thread). */
void shared_cond_wake(struct posix_cond *c, bool all);

#endif /* POSIX_SHARED_H */
