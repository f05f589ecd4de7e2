/*
 * k32_platform.h - the only door to the operating system.
 *
 * Like SQLite's VFS: the portable core calls these functions; src/platform/<target>/ fills
 * them. posix/ is the simulator's implementation (Linux, macOS); an esp32/ port implements
 * the same header with FreeRTOS tasks, esp_timer, lwIP sockets and the VFS. Nothing outside
 * src/platform/ includes an OS header.
 *
 * Calls go through a method table (struct k32_platform_ops) so tests can replace single ops
 * at run time to inject I/O errors, short reads and clock jumps (SQLite's aSyscall[]). The
 * inline wrappers below keep call sites short. Platform calls stay on slow paths: the
 * interpreter loop and kobj fast paths never call them.
 *
 * Synchronisation objects (mutex, condition variable) are caller-owned opaque storage, so
 * creating one never allocates (Zephyr's k_mutex_init). ESP-IDF port: a FreeRTOS mutex made
 * with xSemaphoreCreateMutexStatic fits in K32_PLAT_MUTEX_BYTES; the condition variable maps
 * to a semaphore-and-waiter list. Tasks: pthreads here; xTaskCreatePinnedToCore there (core
 * affinity honoured, stack_bytes used as given; here stack_bytes 0 means the OS default).
 *
 * Context: every function is thread-safe unless it says otherwise.
 */
#ifndef K32_PLATFORM_H
#define K32_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_status.h"

/* Opaque storage sizes; the posix implementation checks them with _Static_assert. */
#define K32_PLAT_MUTEX_BYTES 64
#define K32_PLAT_COND_BYTES  64

struct k32_mutex {
	_Alignas(8) unsigned char opaque[K32_PLAT_MUTEX_BYTES];
};
struct k32_cond {
	_Alignas(8) unsigned char opaque[K32_PLAT_COND_BYTES];
};

/* Deadlines and timeouts, in microseconds of the monotonic clock (Zephyr's k_timeout_t). */
#define K32_NO_WAIT ((int64_t)0)
#define K32_FOREVER ((int64_t)-1)

/* A task (thread). Opaque; at most K32_PLAT_MAX_TASKS with their own thread exist at once
 * (see task_share_threads for the simulator's shared ones). */
struct k32_task;
typedef void (*k32_task_fn)(void *arg);

/* One row of the TASKS listing. */
struct k32_task_info {
	char name[K32_PLAT_TASK_NAME_LEN]; /* the name given at creation */
	uint64_t cpu_us;		   /* CPU time the task has used so far */
	uint64_t started_us;		   /* monotonic time it started */
	bool running;			   /* false once its function returned */
};

/* A socket. -1 is invalid. On lwIP it is the lwIP descriptor. */
typedef int k32_sock_t;
#define K32_SOCK_INVALID (-1)

/* poll() events */
#define K32_POLL_IN  0x1u /* readable, or a connection to accept */
#define K32_POLL_OUT 0x2u /* writable */
#define K32_POLL_ERR 0x4u /* error or hang-up (returned only) */

struct k32_pollfd {
	k32_sock_t sock;  /* socket to watch; K32_SOCK_INVALID entries are ignored */
	uint32_t events;  /* K32_POLL_IN | K32_POLL_OUT */
	uint32_t revents; /* filled by poll */
};

/* An open file for appending (the WAL). Opaque. */
struct k32_file;

struct k32_platform_ops {
	/* clock */
	uint64_t (*now_us)(void); /* monotonic microseconds since an arbitrary epoch */
	uint64_t (*wall_s)(void); /* UTC seconds since 1970 (for timestamps) */
	void (*sleep_us)(uint64_t us);
	k32_status_t (*random)(void *buf, size_t len); /* cryptographic quality */

	/* mutex and condition variable */
	void (*mutex_init)(struct k32_mutex *m);
	void (*mutex_fini)(struct k32_mutex *m);
	void (*mutex_lock)(struct k32_mutex *m);
	void (*mutex_unlock)(struct k32_mutex *m);
	void (*cond_init)(struct k32_cond *c);
	void (*cond_fini)(struct k32_cond *c);
	/* Waits until signalled or until the monotonic deadline (K32_FOREVER: none). Returns
	 * K32_OK or K32_ERR_TIMED_OUT. Spurious wake-ups happen: callers re-check. */
	k32_status_t (*cond_wait)(struct k32_cond *c, struct k32_mutex *m, int64_t deadline_us);
	void (*cond_signal)(struct k32_cond *c);
	void (*cond_broadcast)(struct k32_cond *c);

	/* tasks */
	k32_status_t (*task_create)(struct k32_task **out, const char *name, k32_task_fn fn,
				    void *arg, size_t stack_bytes, int core, struct k32_err *err);
	/* Waits for the task to return and frees its slot. */
	void (*task_join)(struct k32_task *task);
	/* Fills up to cap rows; *out_count is the number of live and finished-unjoined tasks. */
	void (*task_list)(struct k32_task_info *out, size_t cap, size_t *out_count);
	/* Gives the rest of the calling task's time slice to any other ready task (taskYIELD
	 * on FreeRTOS). For spin loops whose lock holder may be preempted on this core. */
	void (*task_yield)(void);
	/* Sets the calling task's priority (FreeRTOS numbers: higher runs first; the kubelet's
	 * K32_KLET_NODE_TASK_PRIO / _EXEC_TASK_PRIO). The POSIX platform leaves it: threads of
	 * one process share the CPU under SCHED_OTHER without privileges, which already keeps a
	 * busy task from starving the others. */
	void (*task_set_priority)(int prio);
	/* Tasks created from now on by the calling thread (on), and by the tasks those create,
	 * are "shared": here they run as fibers on a small pool of OS threads
	 * (K32_PLAT_SHARED_THREADS, growing to K32_PLAT_SHARED_THREADS_MAX when all are busy)
	 * and give up their thread only at the platform's blocking points (mutex, condition,
	 * sleep, poll, socket I/O, yield): kube32-sim's boards, so a thousand boards need a
	 * handful of threads. Limits per task (stack) stay; shared tasks count against
	 * K32_PLAT_HOST_MAX_TASKS, not K32_PLAT_MAX_TASKS. A board (ESP-IDF, bare metal) has
	 * nothing to share: a no-op. */
	void (*task_share_threads)(bool on);
	/* CPU time of the calling thread. */
	uint64_t (*thread_cpu_us)(void);
	/* Number of CPU cores. */
	unsigned (*core_count)(void);

	/* TCP sockets (IPv4 dotted or "localhost"; port 0 picks a free one) */
	k32_status_t (*tcp_listen)(const char *host, uint16_t port, int backlog, k32_sock_t *out,
				   struct k32_err *err);
	/* Port a socket is bound to (to learn what port 0 picked). */
	k32_status_t (*sock_port)(k32_sock_t s, uint16_t *out_port);
	/* K32_ERR_SHOULD_WAIT when a non-blocking listener has nothing pending. */
	k32_status_t (*tcp_accept)(k32_sock_t listener, k32_sock_t *out);
	/* IPv4 address of a connected socket's peer, host byte order (for per-client limits).
	 * May be NULL (callers then treat every client as one address). */
	k32_status_t (*sock_peer_addr)(k32_sock_t s, uint32_t *out_addr);
	k32_status_t (*tcp_connect)(const char *host, uint16_t port, int64_t timeout_us,
				    k32_sock_t *out, struct k32_err *err);
	k32_status_t (*sock_set_nonblock)(k32_sock_t s, bool on);
	/* Short sends and receives are normal. SHOULD_WAIT when non-blocking and not ready;
	 * PEER_CLOSED on orderly shutdown (recv of 0 bytes) or reset. */
	k32_status_t (*sock_send)(k32_sock_t s, const void *buf, size_t len, size_t *out_sent);
	k32_status_t (*sock_recv)(k32_sock_t s, void *buf, size_t cap, size_t *out_len);
	void (*sock_close)(k32_sock_t s);
	/* Waits up to timeout_us (K32_FOREVER: none); *out_ready counts entries with revents. */
	k32_status_t (*poll)(struct k32_pollfd *fds, size_t count, int64_t timeout_us,
			     size_t *out_ready);

	/* files (paths are UTF-8; the ESP-IDF port maps them under its VFS mount point) */
	/* Reads a whole file into a block from alloc (size *out_len + 1, NUL-terminated, free
	 * with k32_free(alloc, p, *out_len + 1)). NOT_FOUND if absent; OUT_OF_RANGE if larger
	 * than max_len. */
	k32_status_t (*file_read_all)(const char *path, const struct k32_allocator *alloc,
				      size_t max_len, uint8_t **out_data, size_t *out_len,
				      struct k32_err *err);
	/* Replaces path atomically: write a temporary, fsync, rename, fsync the directory. */
	k32_status_t (*file_write_atomic)(const char *path, const void *data, size_t len,
					  struct k32_err *err);
	/* Opens (creating) path for appending. */
	k32_status_t (*file_open_append)(const char *path, struct k32_file **out,
					 struct k32_err *err);
	k32_status_t (*file_append)(struct k32_file *f, const void *data, size_t len,
				    struct k32_err *err);
	/* Makes appended data durable (fdatasync/fsync). */
	k32_status_t (*file_sync)(struct k32_file *f, struct k32_err *err);
	/* Size in bytes of the open file. */
	k32_status_t (*file_size)(struct k32_file *f, uint64_t *out_len);
	/* Cuts the file to len bytes (to drop a torn tail). */
	k32_status_t (*file_truncate)(struct k32_file *f, uint64_t len, struct k32_err *err);
	void (*file_close)(struct k32_file *f);
	k32_status_t (*file_remove)(const char *path, struct k32_err *err); /* absent is OK */
	k32_status_t (*dir_create)(const char *path, struct k32_err *err);  /* with parents */
	bool (*file_exists)(const char *path);

	/* ---- stop requests (a command's main thread) ----
	 * stop_watch arms the platform's stop request: here SIGTERM and SIGINT (the handler
	 * writes to a self-pipe, so the request reaches stop_wait whichever thread the signal
	 * lands on); on ESP-IDF, a console command or a GPIO would post the same event.
	 * stop_wait blocks until a stop was requested (true) or the monotonic deadline passes
	 * (false; K32_FOREVER: none). A main that waits here wakes for nothing else: a sleep
	 * loop's wake-ups cost CPU on an idle board (and ~50 us each in this VM). */
	k32_status_t (*stop_watch)(struct k32_err *err);
	bool (*stop_wait)(int64_t deadline_us);
};

/* The ops table in force. Starts as the build's native implementation. */
const struct k32_platform_ops *k32_plat(void);

/*
 * Replaces the ops table (tests: copy k32_plat_native(), change a member, install it).
 * NULL restores the native table. Not thread-safe: call while no other task uses the
 * platform.
 */
void k32_plat_set_ops(const struct k32_platform_ops *ops);

/* The build's native implementation (posix or esp32). */
const struct k32_platform_ops *k32_plat_native(void);

/* Short forms for the hottest slow-path calls. */
static inline uint64_t k32_now_us(void)
{
	return k32_plat()->now_us();
}
static inline void k32_mutex_lock(struct k32_mutex *m)
{
	k32_plat()->mutex_lock(m);
}
static inline void k32_mutex_unlock(struct k32_mutex *m)
{
	k32_plat()->mutex_unlock(m);
}

/* Deadline helper: now + timeout, with K32_FOREVER passing through. */
static inline int64_t k32_deadline_after(int64_t timeout_us)
{
	if (timeout_us < 0)
		return K32_FOREVER;
	return (int64_t)k32_now_us() + timeout_us;
}

#endif /* K32_PLATFORM_H */
