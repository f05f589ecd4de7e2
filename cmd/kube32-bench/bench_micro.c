/*
 * bench_micro.c - the rows of `kube32-bench micro`: the zircon-benchmarks list of
 * docs/kobj.md section 7 run against kube32's objects (native caller, N), each next to its
 * Linux equivalent measured in the same run. Linux system calls are used directly here on
 * purpose: this is the Linux comparison tool (see bench.h).
 *
 * Cross-thread rows run twice: both threads pinned to core 0 (SameCore) and one thread on
 * each core (CrossCore). kube32 waiters spin before sleeping only in the CrossCore runs, for
 * --spin-ns (default 10 us: on this kind of VM a cross-vCPU wake-up costs 40-80 us, so a
 * longer spin pays); SameCore runs use kobj_node_set_spin_ns(bench_kobj_node, 0), since spinning
 * cannot help when the peer needs this very core.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kobj/kobj.h"
#include "base/k32_alloc.h"
#include "platform/k32_platform.h"

static struct kobj_owner O; /* the benchmark thread's table */
static struct kobj_owner S; /* the helper thread's table */
static uint8_t buf_a[65536], buf_b[65536];

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) != 0) {                                                                    \
			fprintf(stderr, "kube32-bench: %s failed at %s:%d: %s\n", #x, __FILE__,    \
				__LINE__, kobj_owner_last_error(&O));                              \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

struct kobj_node *bench_kobj_node;

int bench_micro_setup(void)
{
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	if (kobj_node_new(k32_default_allocator(), "bench", &lim, &bench_kobj_node, NULL) != K32_OK)
		return -1;
	kobj_owner_init(&O, bench_kobj_node, "bench", 0);
	kobj_owner_init(&S, bench_kobj_node, "bench-helper", 0);
	memset(buf_a, 0x5a, sizeof(buf_a));
	return 0;
}

/* ---- trivial floors ---------------------------------------------------------------------- */

static void __attribute__((noinline)) empty_fn(void)
{
	__asm__ volatile("");
}
static void (*volatile empty_ptr)(void) = empty_fn;

static void b_null(struct brun *r)
{
	for (uint64_t i = 0; i < r->iters; i++)
		empty_ptr();
}

static void b_time(struct brun *r)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < r->iters; i++)
		s += (uint64_t)kobj_now_ns();
	bench_keep(s);
}

static void l_time(struct brun *r)
{
	uint64_t s = 0;
	struct timespec ts;
	for (uint64_t i = 0; i < r->iters; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s += (uint64_t)ts.tv_nsec;
	}
	bench_keep(s);
}

static void b_time_thread(struct brun *r)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < r->iters; i++)
		s += k32_plat()->thread_cpu_us();
	bench_keep(s);
}

static void l_time_thread(struct brun *r)
{
	uint64_t s = 0;
	struct timespec ts;
	for (uint64_t i = 0; i < r->iters; i++) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		s += (uint64_t)ts.tv_nsec;
	}
	bench_keep(s);
}

static void l_syscall_null(struct brun *r)
{
	for (uint64_t i = 0; i < r->iters; i++)
		bench_keep((uint64_t)syscall(SYS_getppid));
}

/* ---- channels ---------------------------------------------------------------------------- */

/* Objects made per paused batch: within one owner's share of the smallest pools (ports and
 * fifos: K32_KOBJ_OWNER_POOL_PCT of 16). */
#define BATCH 8

static void b_channel_create(struct brun *r)
{
	kobj_handle_t h[BATCH][2];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			CHECK(kobj_channel_create(&O, 0, &h[k][0], &h[k][1]));
		bench_pause(r);
		for (unsigned k = 0; k < n; k++) {
			kobj_handle_close(&O, h[k][0]);
			kobj_handle_close(&O, h[k][1]);
		}
		bench_resume(r);
		i += n;
	}
}

static void l_pipe_create(struct brun *r)
{
	int fd[BATCH][2];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			CHECK(pipe2(fd[k], O_CLOEXEC));
		bench_pause(r);
		for (unsigned k = 0; k < n; k++) {
			close(fd[k][0]);
			close(fd[k][1]);
		}
		bench_resume(r);
		i += n;
	}
}

/* How many messages of `size` fit a channel queue (and a 1 MiB pipe). */
static unsigned batch_for(uint64_t size)
{
	uint64_t n = K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES / (size ? size : 1);
	if (n > K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS)
		n = K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS;
	return n ? (unsigned)n : 1;
}

static void b_channel_write(struct brun *r)
{
	kobj_handle_t c0, c1;
	uint32_t len = (uint32_t)r->arg, nb, nh;
	unsigned batch = batch_for(len);
	CHECK(kobj_channel_create(&O, 0, &c0, &c1));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		for (unsigned k = 0; k < n; k++)
			CHECK(kobj_channel_write(&O, c0, 0, buf_a, len, NULL, 0));
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			CHECK(
			    kobj_channel_read(&O, c1, 0, buf_b, NULL, sizeof(buf_b), 0, &nb, &nh));
		bench_resume(r);
		i += n;
	}
	kobj_handle_close(&O, c0);
	kobj_handle_close(&O, c1);
}

static void b_channel_read(struct brun *r)
{
	kobj_handle_t c0, c1;
	uint32_t len = (uint32_t)r->arg, nb, nh;
	unsigned batch = batch_for(len);
	CHECK(kobj_channel_create(&O, 0, &c0, &c1));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			CHECK(kobj_channel_write(&O, c0, 0, buf_a, len, NULL, 0));
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			CHECK(
			    kobj_channel_read(&O, c1, 0, buf_b, NULL, sizeof(buf_b), 0, &nb, &nh));
		i += n;
	}
	kobj_handle_close(&O, c0);
	kobj_handle_close(&O, c1);
}

static void b_channel_write_read(struct brun *r)
{
	kobj_handle_t c0, c1;
	uint32_t len = (uint32_t)r->arg, nb, nh;
	CHECK(kobj_channel_create(&O, 0, &c0, &c1));
	for (uint64_t i = 0; i < r->iters; i++) {
		CHECK(kobj_channel_write(&O, c0, 0, buf_a, len, NULL, 0));
		CHECK(kobj_channel_read(&O, c1, 0, buf_b, NULL, sizeof(buf_b), 0, &nb, &nh));
	}
	kobj_handle_close(&O, c0);
	kobj_handle_close(&O, c1);
}

static void big_pipe(int fd[2])
{
	CHECK(pipe2(fd, O_CLOEXEC));
	fcntl(fd[1], F_SETPIPE_SZ, 1 << 20);
}

static void full_write(int fd, const void *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n <= 0) {
			perror("write");
			exit(1);
		}
		p = (const uint8_t *)p + n;
		len -= (size_t)n;
	}
}

static void full_read(int fd, void *p, size_t len)
{
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n <= 0) {
			perror("read");
			exit(1);
		}
		p = (uint8_t *)p + n;
		len -= (size_t)n;
	}
}

static void l_pipe_write(struct brun *r)
{
	int fd[2];
	size_t len = r->arg;
	unsigned batch = batch_for(len);
	big_pipe(fd);
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		for (unsigned k = 0; k < n; k++)
			full_write(fd[1], buf_a, len);
		bench_pause(r);
		full_read(fd[0], buf_b, len * n > sizeof(buf_b) ? 0 : len * n);
		for (unsigned k = 0; len * n > sizeof(buf_b) && k < n; k++)
			full_read(fd[0], buf_b, len);
		bench_resume(r);
		i += n;
	}
	close(fd[0]);
	close(fd[1]);
}

static void l_pipe_read(struct brun *r)
{
	int fd[2];
	size_t len = r->arg;
	unsigned batch = batch_for(len);
	big_pipe(fd);
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			full_write(fd[1], buf_a, len);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			full_read(fd[0], buf_b, len);
		i += n;
	}
	close(fd[0]);
	close(fd[1]);
}

static void l_pipe_write_read(struct brun *r)
{
	int fd[2];
	size_t len = r->arg;
	big_pipe(fd);
	for (uint64_t i = 0; i < r->iters; i++) {
		full_write(fd[1], buf_a, len);
		full_read(fd[0], buf_b, len);
	}
	close(fd[0]);
	close(fd[1]);
}

/* ---- events and handles ------------------------------------------------------------------ */

static void b_event_create(struct brun *r)
{
	kobj_handle_t h[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			CHECK(kobj_event_create(&O, 0, &h[k]));
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_close(&O, h[k]);
		bench_resume(r);
		i += n;
	}
}

static void l_eventfd_create(struct brun *r)
{
	int fd[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			fd[k] = eventfd(0, EFD_CLOEXEC);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			close(fd[k]);
		bench_resume(r);
		i += n;
	}
}

static void b_event_close(struct brun *r)
{
	kobj_handle_t h[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			CHECK(kobj_event_create(&O, 0, &h[k]));
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_close(&O, h[k]);
		i += n;
	}
}

static void l_eventfd_close(struct brun *r)
{
	int fd[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			fd[k] = eventfd(0, EFD_CLOEXEC);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			close(fd[k]);
		i += n;
	}
}

static void b_event_signal(struct brun *r)
{
	kobj_handle_t e;
	CHECK(kobj_event_create(&O, 0, &e));
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_signal(&O, e, 0, 0);
	kobj_handle_close(&O, e);
}

static void b_event_signal_set(struct brun *r)
{
	kobj_handle_t e;
	CHECK(kobj_event_create(&O, 0, &e));
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_signal(&O, e, (i & 1) ? KOBJ_SIG_SIGNALED : 0,
				   (i & 1) ? 0 : KOBJ_SIG_SIGNALED);
	kobj_handle_close(&O, e);
}

static void l_fcntl_getfl(struct brun *r)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	for (uint64_t i = 0; i < r->iters; i++)
		bench_keep((uint64_t)fcntl(fd, F_GETFL));
	close(fd);
}

static void l_eventfd_write(struct brun *r)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t one = 1, v;
	for (uint64_t i = 0; i < r->iters; i++) {
		if (i & 1) {
			if (read(fd, &v, 8) != 8)
				exit(1);
		} else if (write(fd, &one, 8) != 8) {
			exit(1);
		}
	}
	close(fd);
}

static void b_duplicate(struct brun *r)
{
	kobj_handle_t e, d[BATCH];
	CHECK(kobj_event_create(&O, 0, &e));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_duplicate(&O, e, KOBJ_RIGHT_SAME_RIGHTS, &d[k]);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_close(&O, d[k]);
		bench_resume(r);
		i += n;
	}
	kobj_handle_close(&O, e);
}

static void l_dup(struct brun *r)
{
	int fd = eventfd(0, EFD_CLOEXEC), d[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++)
			d[k] = dup(fd);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			close(d[k]);
		bench_resume(r);
		i += n;
	}
	close(fd);
}

static void b_close_dup(struct brun *r)
{
	kobj_handle_t e, d[BATCH];
	CHECK(kobj_event_create(&O, 0, &e));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_duplicate(&O, e, KOBJ_RIGHT_SAME_RIGHTS, &d[k]);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_close(&O, d[k]);
		i += n;
	}
	kobj_handle_close(&O, e);
}

static void l_close_dup(struct brun *r)
{
	int fd = eventfd(0, EFD_CLOEXEC), d[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			d[k] = dup(fd);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			close(d[k]);
		i += n;
	}
	close(fd);
}

static void b_replace(struct brun *r)
{
	kobj_handle_t e, d[BATCH], out;
	CHECK(kobj_event_create(&O, 0, &e));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_duplicate(&O, e, KOBJ_RIGHT_SAME_RIGHTS, &d[k]);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++) {
			kobj_handle_replace(&O, d[k], KOBJ_RIGHT_SAME_RIGHTS, &out);
			d[k] = out;
		}
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			kobj_handle_close(&O, d[k]);
		bench_resume(r);
		i += n;
	}
	kobj_handle_close(&O, e);
}

static void l_dup2(struct brun *r)
{
	int fd = eventfd(0, EFD_CLOEXEC), d[BATCH];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			d[k] = dup(fd);
		bench_resume(r);
		for (unsigned k = 0; k < n; k++)
			dup2(fd, d[k]);
		bench_pause(r);
		for (unsigned k = 0; k < n; k++)
			close(d[k]);
		bench_resume(r);
		i += n;
	}
	close(fd);
}

static void b_wait_signaled(struct brun *r)
{
	kobj_handle_t e;
	uint32_t obs;
	CHECK(kobj_event_create(&O, 0, &e));
	CHECK(kobj_object_signal(&O, e, 0, KOBJ_SIG_SIGNALED));
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_wait_one(&O, e, KOBJ_SIG_SIGNALED, 0, &obs);
	kobj_handle_close(&O, e);
}

static void l_poll_signaled(struct brun *r)
{
	int fd = eventfd(1, EFD_CLOEXEC);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	for (uint64_t i = 0; i < r->iters; i++)
		bench_keep((uint64_t)poll(&p, 1, 0));
	close(fd);
}

static void b_wait_many_signaled(struct brun *r)
{
	struct kobj_wait_item it[4];
	for (int k = 0; k < 4; k++) {
		CHECK(kobj_event_create(&O, 0, &it[k].handle));
		it[k].waitfor = KOBJ_SIG_SIGNALED;
	}
	CHECK(kobj_object_signal(&O, it[0].handle, 0, KOBJ_SIG_SIGNALED));
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_wait_many(&O, it, 4, 0);
	for (int k = 0; k < 4; k++)
		kobj_handle_close(&O, it[k].handle);
}

static void l_poll_many_signaled(struct brun *r)
{
	struct pollfd p[4];
	for (int k = 0; k < 4; k++) {
		p[k].fd = eventfd(k == 0, EFD_CLOEXEC);
		p[k].events = POLLIN;
	}
	for (uint64_t i = 0; i < r->iters; i++)
		bench_keep((uint64_t)poll(p, 4, 0));
	for (int k = 0; k < 4; k++)
		close(p[k].fd);
}

/* ---- other creates ----------------------------------------------------------------------- */

enum { C_EVENTPAIR, C_FIFO, C_PORT, C_VMO, C_SOCKET };

static void b_create(struct brun *r)
{
	kobj_handle_t h[BATCH][2];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++) {
			h[k][1] = KOBJ_HANDLE_INVALID;
			switch (r->arg) {
			case C_EVENTPAIR:
				CHECK(kobj_eventpair_create(&O, 0, &h[k][0], &h[k][1]));
				break;
			case C_FIFO:
				CHECK(kobj_fifo_create(&O, 2, 2048, 0, &h[k][0], &h[k][1]));
				break;
			case C_PORT:
				CHECK(kobj_port_create(&O, 0, &h[k][0]));
				break;
			case C_VMO:
				CHECK(kobj_vmo_create(&O, 65536, 0, &h[k][0]));
				break;
			default:
				CHECK(kobj_socket_create(&O, 0, 0, &h[k][0], &h[k][1]));
				break;
			}
		}
		bench_pause(r);
		for (unsigned k = 0; k < n; k++) {
			kobj_handle_close(&O, h[k][0]);
			kobj_handle_close(&O, h[k][1]);
		}
		bench_resume(r);
		i += n;
	}
}

static void l_create(struct brun *r)
{
	int fd[BATCH][2];
	for (uint64_t i = 0; i < r->iters;) {
		unsigned n = (unsigned)(r->iters - i < BATCH ? r->iters - i : BATCH);
		for (unsigned k = 0; k < n; k++) {
			fd[k][1] = -1;
			switch (r->arg) {
			case C_EVENTPAIR:
			case C_SOCKET:
				socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd[k]);
				break;
			case C_FIFO:
				CHECK(pipe2(fd[k], O_CLOEXEC));
				break;
			case C_PORT:
				fd[k][0] = epoll_create1(EPOLL_CLOEXEC);
				break;
			default:
				fd[k][0] = memfd_create("vmo", MFD_CLOEXEC);
				CHECK(ftruncate(fd[k][0], 65536));
				break;
			}
		}
		bench_pause(r);
		for (unsigned k = 0; k < n; k++) {
			close(fd[k][0]);
			if (fd[k][1] >= 0)
				close(fd[k][1]);
		}
		bench_resume(r);
		i += n;
	}
}

/* ---- sockets and fifos ------------------------------------------------------------------- */

static void b_socket_io(struct brun *r, bool time_write)
{
	kobj_handle_t s0, s1;
	uint32_t len = (uint32_t)r->arg, n;
	unsigned batch = (unsigned)(65536u / len);
	CHECK(kobj_socket_create(&O, 0, 65536, &s0, &s1));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned m = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		if (!time_write)
			bench_pause(r);
		for (unsigned k = 0; k < m; k++)
			CHECK(kobj_socket_write(&O, s0, 0, buf_a, len, &n));
		if (time_write)
			bench_pause(r);
		else
			bench_resume(r);
		for (unsigned k = 0; k < m; k++)
			CHECK(kobj_socket_read(&O, s1, 0, buf_b, len, &n));
		if (time_write)
			bench_resume(r);
		i += m;
	}
	kobj_handle_close(&O, s0);
	kobj_handle_close(&O, s1);
}

static void b_socket_write(struct brun *r)
{
	b_socket_io(r, true);
}

static void b_socket_read(struct brun *r)
{
	b_socket_io(r, false);
}

static void l_socketpair_io(struct brun *r, bool time_write)
{
	int fd[2];
	size_t len = r->arg;
	unsigned batch = (unsigned)(65536u / len);
	int sz = 1 << 20;
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd);
	setsockopt(fd[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	for (uint64_t i = 0; i < r->iters;) {
		unsigned m = (unsigned)(r->iters - i < batch ? r->iters - i : batch);
		if (!time_write)
			bench_pause(r);
		for (unsigned k = 0; k < m; k++)
			full_write(fd[0], buf_a, len);
		if (time_write)
			bench_pause(r);
		else
			bench_resume(r);
		for (unsigned k = 0; k < m; k++)
			full_read(fd[1], buf_b, len);
		if (time_write)
			bench_resume(r);
		i += m;
	}
	close(fd[0]);
	close(fd[1]);
}

static void l_socket_write(struct brun *r)
{
	l_socketpair_io(r, true);
}

static void l_socket_read(struct brun *r)
{
	l_socketpair_io(r, false);
}

static void b_fifo_write_read(struct brun *r)
{
	kobj_handle_t f0, f1;
	uint32_t n;
	CHECK(kobj_fifo_create(&O, 64, 16, 0, &f0, &f1));
	for (uint64_t i = 0; i < r->iters; i++) {
		kobj_fifo_write(&O, f0, 16, buf_a, 4, &n);
		kobj_fifo_read(&O, f1, 16, buf_b, 4, &n);
	}
	kobj_handle_close(&O, f0);
	kobj_handle_close(&O, f1);
}

static void l_pipe_64(struct brun *r)
{
	struct brun r2 = *r;
	r2.arg = 64;
	l_pipe_write_read(&r2);
	r->paused_ns = r2.paused_ns;
}

/* ---- threads ----------------------------------------------------------------------------- */

static void task_exit(void *arg)
{
	(void)arg;
}

static void b_thread_create_join(struct brun *r)
{
	for (uint64_t i = 0; i < r->iters; i++) {
		struct k32_task *t;
		struct k32_err err;
		if (k32_plat()->task_create(&t, "bench", task_exit, NULL, 0, -1, &err) != K32_OK) {
			r->skip = "platform task_create failed";
			return;
		}
		k32_plat()->task_join(t);
	}
}

static void *pthread_exit_fn(void *arg)
{
	return arg;
}

static void l_thread_create_join(struct brun *r)
{
	for (uint64_t i = 0; i < r->iters; i++) {
		pthread_t t;
		pthread_create(&t, NULL, pthread_exit_fn, NULL);
		pthread_join(t, NULL);
	}
}

/* ---- round trips ------------------------------------------------------------------------- */

/* The helper side of kube32 round trips (runs on the helper's owner S). */
struct rt {
	int kind;	     /* RT_* */
	kobj_handle_t h, h2; /* helper's handles */
	int fd_in, fd_out;   /* Linux: pipes or eventfds */
	atomic_uint *futex_a, *futex_b;
	pthread_mutex_t *mu;
	pthread_cond_t *cv_a, *cv_b;
	int *turn;
	uint64_t iters;
	atomic_uint *ring_a, *ring_b;
};

enum {
	RT_CHANNEL,
	RT_CHANNEL_PORT,
	RT_FIDL,
	RT_PORT,
	RT_EVENTPAIR,
	RT_PIPE,
	RT_EVENTFD,
	RT_FUTEX,
	RT_CONDVAR,
	RT_SPSC
};

/*
 * A FIDL-like protocol for the RoundTrip_Fidl rows: what Zircon's RoundTrip_Fidl measures on
 * top of channels (a sync proxy call against an async-loop binding) is the encoding, the
 * transaction id, the dispatch by method ordinal and the decoding. Messages start with
 * FIDL's 16-byte header {txid, flags[3], magic, ordinal}; the method is
 * Sensor.Read(u32 channel, u32 oversample) -> (i32 status, u32 value, i64 timestamp).
 */
struct fidl_hdr {
	uint32_t txid;
	uint8_t flags[3];
	uint8_t magic;
	uint64_t ordinal;
};
struct fidl_read_req {
	struct fidl_hdr hdr;
	uint32_t channel, oversample;
};
struct fidl_read_resp {
	struct fidl_hdr hdr;
	int32_t status;
	uint32_t value;
	int64_t timestamp;
};
#define FIDL_MAGIC	  1u
#define ORD_SENSOR_READ	  0x3a1c5e0f2b7d9e41ull
#define ORD_SENSOR_RESET  0x7c2e4d9a1f3b5c60ull
#define ORD_SENSOR_CONFIG 0x1e9b7a3c5d2f4e88ull

typedef uint32_t (*fidl_handler)(const uint8_t *body, uint32_t len, uint8_t *out);

static uint32_t h_sensor_read(const uint8_t *body, uint32_t len, uint8_t *out)
{
	struct fidl_read_req q;
	struct fidl_read_resp p;
	if (len != sizeof(q))
		return 0;
	memcpy(&q, body - sizeof(q.hdr), sizeof(q));
	p.status = q.channel < 8 ? 0 : -14;
	p.value = q.channel * 1000u + q.oversample;
	p.timestamp = 0;
	memcpy(out + sizeof(struct fidl_hdr), &p.status, sizeof(p) - sizeof(p.hdr));
	return sizeof(p);
}

static uint32_t h_unused(const uint8_t *body, uint32_t len, uint8_t *out)
{
	(void)body;
	(void)out;
	return len;
}

/* The binding's dispatch table (a generated binding switches on the ordinal the same way). */
static const struct {
	uint64_t ordinal;
	fidl_handler fn;
} fidl_methods[] = {
    {ORD_SENSOR_RESET, h_unused},
    {ORD_SENSOR_CONFIG, h_unused},
    {ORD_SENSOR_READ, h_sensor_read},
};

/* Decodes, dispatches and answers one request; returns false on a malformed message. */
static bool fidl_dispatch(kobj_handle_t ch, const uint8_t *msg, uint32_t len)
{
	struct fidl_hdr hdr;
	uint8_t out[64];
	if (len < sizeof(hdr))
		return false;
	memcpy(&hdr, msg, sizeof(hdr));
	if (hdr.magic != FIDL_MAGIC)
		return false;
	for (size_t i = 0; i < sizeof(fidl_methods) / sizeof(fidl_methods[0]); i++) {
		if (fidl_methods[i].ordinal != hdr.ordinal)
			continue;
		uint32_t n = fidl_methods[i].fn(msg + sizeof(hdr), len, out);
		if (n < sizeof(hdr))
			return false;
		memcpy(out, &hdr, sizeof(hdr)); /* same txid and ordinal */
		return kobj_channel_write(&S, ch, 0, out, n, NULL, 0) == K32_OK;
	}
	return false;
}

static void kube_server(void *arg)
{
	struct rt *a = arg;
	if (a->kind == RT_FIDL) {
		/* The async-loop binding: arm the channel on the port, wait, drain, dispatch. */
		uint8_t msg[64];
		uint32_t nb, nh;
		struct kobj_packet pkt;
		for (uint64_t done = 0; done < a->iters;) {
			k32_status_t st =
			    kobj_channel_read(&S, a->h, 0, msg, NULL, sizeof(msg), 0, &nb, &nh);
			if (st == K32_OK) {
				if (!fidl_dispatch(a->h, msg, nb))
					return;
				done++;
			} else if (st == K32_ERR_SHOULD_WAIT) {
				kobj_object_wait_async(&S, a->h, a->h2, 7,
						       KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED, 0);
				kobj_port_wait(&S, a->h2, KOBJ_TIME_INFINITE, &pkt);
			} else {
				return;
			}
		}
		return;
	}
	uint8_t b[64];
	uint32_t nb, nh, obs;
	struct kobj_packet pkt;
	for (uint64_t i = 0; i < a->iters; i++) {
		switch (a->kind) {
		case RT_CHANNEL:
			while (kobj_channel_read(&S, a->h, 0, b, NULL, 64, 0, &nb, &nh) ==
			       K32_ERR_SHOULD_WAIT)
				kobj_object_wait_one(&S, a->h,
						     KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED,
						     KOBJ_TIME_INFINITE, &obs);
			kobj_channel_write(&S, a->h, 0, b, nb, NULL, 0);
			break;
		case RT_CHANNEL_PORT:
			while (kobj_channel_read(&S, a->h, 0, b, NULL, 64, 0, &nb, &nh) ==
			       K32_ERR_SHOULD_WAIT) {
				kobj_object_wait_async(&S, a->h, a->h2, 1, KOBJ_SIG_READABLE, 0);
				kobj_port_wait(&S, a->h2, KOBJ_TIME_INFINITE, &pkt);
			}
			kobj_channel_write(&S, a->h, 0, b, nb, NULL, 0);
			break;
		case RT_PORT:
			/* h: my port (receive), h2: the client's port (send). */
			kobj_port_wait(&S, a->h, KOBJ_TIME_INFINITE, &pkt);
			kobj_port_queue(&S, a->h2, &pkt);
			break;
		case RT_EVENTPAIR:
			kobj_object_wait_one(&S, a->h, KOBJ_SIG_SIGNALED, KOBJ_TIME_INFINITE, &obs);
			kobj_object_signal(&S, a->h, KOBJ_SIG_SIGNALED, 0);
			kobj_object_signal_peer(&S, a->h, 0, KOBJ_SIG_SIGNALED);
			break;
		}
	}
}

static void *linux_server(void *arg)
{
	struct rt *a = arg;
	uint8_t b[64];
	uint64_t v;
	for (uint64_t i = 0; i < a->iters; i++) {
		switch (a->kind) {
		case RT_PIPE:
			full_read(a->fd_in, b, 4);
			full_write(a->fd_out, b, 4);
			break;
		case RT_EVENTFD:
			full_read(a->fd_in, &v, 8);
			full_write(a->fd_out, &v, 8);
			break;
		case RT_FUTEX:
			while (atomic_load(a->futex_a) == 0)
				syscall(SYS_futex, a->futex_a, FUTEX_WAIT_PRIVATE, 0, NULL, NULL,
					0);
			atomic_store(a->futex_a, 0);
			atomic_store(a->futex_b, 1);
			syscall(SYS_futex, a->futex_b, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			break;
		case RT_CONDVAR:
			pthread_mutex_lock(a->mu);
			while (*a->turn != 1)
				pthread_cond_wait(a->cv_a, a->mu);
			*a->turn = 0;
			pthread_cond_signal(a->cv_b);
			pthread_mutex_unlock(a->mu);
			break;
		case RT_SPSC:
			while (atomic_load_explicit(a->ring_a, memory_order_acquire) == 0)
				__builtin_ia32_pause();
			atomic_store_explicit(a->ring_a, 0, memory_order_relaxed);
			atomic_store_explicit(a->ring_b, 1, memory_order_release);
			break;
		}
	}
	return NULL;
}

static int helper_core(uint64_t place)
{
	return place == PLACE_SAME_CORE ? 0 : 1;
}

/* kube32 round trip of `kind` at placement r->arg & 1. */
static void kube_rt(struct brun *r, int kind)
{
	kobj_handle_t c, p = KOBJ_HANDLE_INVALID, sh, sh2 = KOBJ_HANDLE_INVALID;
	struct rt a = {.kind = kind, .iters = r->iters};
	struct k32_task *t;
	struct k32_err err;
	uint8_t b[64];
	uint32_t nb, nh, obs;
	struct kobj_packet pkt = {.key = 1};
	int place = (int)(r->arg & 1);
	bool call = (r->arg & 2) != 0;

	kobj_node_set_spin_ns(bench_kobj_node, place == PLACE_SAME_CORE ? 0 : bench_cross_spin_ns);
	bench_pause(r);
	switch (kind) {
	case RT_CHANNEL:
	case RT_CHANNEL_PORT:
	case RT_FIDL:
		CHECK(kobj_channel_create(&O, 0, &c, &sh));
		CHECK(kobj_handle_transfer(&O, sh, &S, &a.h));
		if (kind == RT_CHANNEL_PORT || kind == RT_FIDL) {
			CHECK(kobj_port_create(&S, 0, &a.h2));
			CHECK(kobj_port_create(&O, 0, &p));
		}
		break;
	case RT_PORT:
		CHECK(kobj_port_create(&O, 0, &c));
		CHECK(kobj_port_create(&O, 0, &p));
		CHECK(kobj_handle_duplicate(&O, c, KOBJ_RIGHT_SAME_RIGHTS, &sh));
		CHECK(kobj_handle_transfer(&O, sh, &S, &a.h2)); /* helper sends to c */
		CHECK(kobj_handle_duplicate(&O, p, KOBJ_RIGHT_SAME_RIGHTS, &sh2));
		CHECK(kobj_handle_transfer(&O, sh2, &S, &a.h)); /* helper receives on p */
		break;
	default:
		CHECK(kobj_eventpair_create(&O, 0, &c, &sh));
		CHECK(kobj_handle_transfer(&O, sh, &S, &a.h));
		break;
	}
	if (k32_plat()->task_create(&t, "rt-server", kube_server, &a, 0, helper_core(r->arg & 1),
				    &err) != K32_OK) {
		r->skip = "task_create failed";
		return;
	}
	bench_resume(r);
	memset(b, 1, 4);
	struct kobj_channel_call_args ca = {
	    .wr_bytes = b, .wr_num_bytes = 4, .rd_bytes = buf_b, .rd_num_bytes = 64};
	struct fidl_read_req fq = {.hdr = {.magic = FIDL_MAGIC, .ordinal = ORD_SENSOR_READ},
				   .channel = 3,
				   .oversample = 4};
	struct fidl_read_resp fp;
	struct kobj_channel_call_args fca = {.wr_bytes = &fq,
					     .wr_num_bytes = sizeof(fq),
					     .rd_bytes = &fp,
					     .rd_num_bytes = sizeof(fp)};
	for (uint64_t i = 0; i < r->iters; i++) {
		switch (kind) {
		case RT_FIDL:
			/* The sync proxy: encode, call (txid matched by channel_call), decode. */
			fq.hdr.txid = (uint32_t)i + 1u;
			fq.channel = (uint32_t)i & 7u;
			if (kobj_channel_call(&O, c, 0, KOBJ_TIME_INFINITE, &fca, &nb, &nh) !=
				K32_OK ||
			    nb != sizeof(fp) || fp.hdr.txid != fq.hdr.txid ||
			    fp.hdr.ordinal != ORD_SENSOR_READ || fp.hdr.magic != FIDL_MAGIC ||
			    fp.status != 0 || fp.value != fq.channel * 1000u + 4u) {
				r->skip = "FIDL-like call failed";
				i = r->iters;
			}
			break;
		case RT_CHANNEL:
			if (call) {
				kobj_channel_call(&O, c, 0, KOBJ_TIME_INFINITE, &ca, &nb, &nh);
				break;
			}
			kobj_channel_write(&O, c, 0, b, 4, NULL, 0);
			while (kobj_channel_read(&O, c, 0, buf_b, NULL, 64, 0, &nb, &nh) ==
			       K32_ERR_SHOULD_WAIT)
				kobj_object_wait_one(&O, c,
						     KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED,
						     KOBJ_TIME_INFINITE, &obs);
			break;
		case RT_CHANNEL_PORT:
			kobj_channel_write(&O, c, 0, b, 4, NULL, 0);
			while (kobj_channel_read(&O, c, 0, buf_b, NULL, 64, 0, &nb, &nh) ==
			       K32_ERR_SHOULD_WAIT) {
				kobj_object_wait_async(&O, c, p, 1, KOBJ_SIG_READABLE, 0);
				kobj_port_wait(&O, p, KOBJ_TIME_INFINITE, &pkt);
			}
			break;
		case RT_PORT:
			kobj_port_queue(&O, p, &pkt);
			kobj_port_wait(&O, c, KOBJ_TIME_INFINITE, &pkt);
			break;
		default:
			kobj_object_signal_peer(&O, c, 0, KOBJ_SIG_SIGNALED);
			kobj_object_wait_one(&O, c, KOBJ_SIG_SIGNALED, KOBJ_TIME_INFINITE, &obs);
			kobj_object_signal(&O, c, KOBJ_SIG_SIGNALED, 0);
			break;
		}
	}
	bench_pause(r);
	k32_plat()->task_join(t);
	kobj_handle_close(&S, a.h);
	kobj_handle_close(&S, a.h2);
	kobj_handle_close(&O, c);
	kobj_handle_close(&O, p);
	bench_resume(r);
	kobj_node_set_spin_ns(bench_kobj_node, K32_KOBJ_SPIN_NS);
}

static void linux_rt(struct brun *r, int kind)
{
	int p1[2] = {-1, -1}, p2[2] = {-1, -1};
	struct rt a = {.kind = kind, .iters = r->iters};
	atomic_uint fa = 0, fb = 0, ra = 0, rb = 0;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t ca = PTHREAD_COND_INITIALIZER, cb = PTHREAD_COND_INITIALIZER;
	int turn = 0;
	uint8_t b[8] = {1};
	uint64_t one = 1;
	bench_pause(r);
	if (kind == RT_PIPE) {
		CHECK(pipe2(p1, O_CLOEXEC));
		CHECK(pipe2(p2, O_CLOEXEC));
	} else if (kind == RT_EVENTFD) {
		p1[0] = p1[1] = eventfd(0, EFD_CLOEXEC);
		p2[0] = p2[1] = eventfd(0, EFD_CLOEXEC);
	}
	a.fd_in = p1[0];
	a.fd_out = p2[1];
	a.futex_a = &fa;
	a.futex_b = &fb;
	a.mu = &mu;
	a.cv_a = &ca;
	a.cv_b = &cb;
	a.turn = &turn;
	a.ring_a = &ra;
	a.ring_b = &rb;
	pthread_t t;
	pthread_attr_t attr;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(helper_core(r->arg & 1), &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	pthread_create(&t, &attr, linux_server, &a);
	pthread_attr_destroy(&attr);
	bench_resume(r);
	for (uint64_t i = 0; i < r->iters; i++) {
		switch (kind) {
		case RT_PIPE:
			full_write(p1[1], b, 4);
			full_read(p2[0], b, 4);
			break;
		case RT_EVENTFD:
			full_write(p1[1], &one, 8);
			full_read(p2[0], &one, 8);
			break;
		case RT_FUTEX:
			atomic_store(&fa, 1);
			syscall(SYS_futex, &fa, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			while (atomic_load(&fb) == 0)
				syscall(SYS_futex, &fb, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
			atomic_store(&fb, 0);
			break;
		case RT_CONDVAR:
			pthread_mutex_lock(&mu);
			turn = 1;
			pthread_cond_signal(&ca);
			while (turn != 0)
				pthread_cond_wait(&cb, &mu);
			pthread_mutex_unlock(&mu);
			break;
		case RT_SPSC:
			atomic_store_explicit(&ra, 1, memory_order_release);
			while (atomic_load_explicit(&rb, memory_order_acquire) == 0)
				__builtin_ia32_pause();
			atomic_store_explicit(&rb, 0, memory_order_relaxed);
			break;
		}
	}
	bench_pause(r);
	pthread_join(t, NULL);
	if (kind == RT_PIPE) {
		close(p1[0]);
		close(p1[1]);
		close(p2[0]);
		close(p2[1]);
	} else if (kind == RT_EVENTFD) {
		close(p1[0]);
		close(p2[0]);
	}
	bench_resume(r);
}

static void b_rt_channel(struct brun *r)
{
	kube_rt(r, RT_CHANNEL);
}
static void b_rt_channel_port(struct brun *r)
{
	kube_rt(r, RT_CHANNEL_PORT);
}
static void b_rt_fidl(struct brun *r)
{
	kube_rt(r, RT_FIDL);
}
static void b_rt_port(struct brun *r)
{
	kube_rt(r, RT_PORT);
}
static void b_rt_eventpair(struct brun *r)
{
	kube_rt(r, RT_EVENTPAIR);
}
static void l_rt_pipe(struct brun *r)
{
	linux_rt(r, RT_PIPE);
}
static void l_rt_eventfd(struct brun *r)
{
	linux_rt(r, RT_EVENTFD);
}
static void l_rt_futex(struct brun *r)
{
	linux_rt(r, RT_FUTEX);
}
static void l_rt_condvar(struct brun *r)
{
	linux_rt(r, RT_CONDVAR);
}
static void b_rt_spsc(struct brun *r)
{
	if ((r->arg & 1) == PLACE_SAME_CORE) {
		r->skip = "a spinning ring needs two cores";
		return;
	}
	linux_rt(r, RT_SPSC);
}

/* ---- ChannelMultiProcess: a writer loop against a reader on another thread ------------ */

struct drain {
	kobj_handle_t h;
	int fd;
	uint64_t count;
	uint32_t len;
};

static void kube_drainer(void *arg)
{
	struct drain *d = arg;
	uint8_t b[1024];
	uint32_t nb, nh;
	for (uint64_t got = 0; got < d->count;) {
		k32_status_t st = kobj_channel_read(&S, d->h, 0, b, NULL, sizeof(b), 0, &nb, &nh);
		if (st == K32_OK)
			got++;
		else if (st == K32_ERR_SHOULD_WAIT)
			kobj_object_wait_one(&S, d->h, KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED,
					     KOBJ_TIME_INFINITE, NULL);
		else
			break;
	}
}

static void *linux_drainer(void *arg)
{
	struct drain *d = arg;
	for (uint64_t got = 0; got < d->count; got++)
		full_read(d->fd, buf_b, d->len); /* only the drainer uses buf_b meanwhile */
	return NULL;
}

/* Writer loop, reader on the helper; back-pressure (SHOULD_WAIT + wait WRITABLE) counted. */
static void b_channel_mt_write(struct brun *r)
{
	kobj_handle_t c, sh;
	struct drain d = {.count = r->iters, .len = 64};
	struct k32_task *t;
	struct k32_err err;
	int place = (int)(r->arg & 1);
	kobj_node_set_spin_ns(bench_kobj_node, place == PLACE_SAME_CORE ? 0 : bench_cross_spin_ns);
	bench_pause(r);
	CHECK(kobj_channel_create(&O, 0, &c, &sh));
	CHECK(kobj_handle_transfer(&O, sh, &S, &d.h));
	if (k32_plat()->task_create(&t, "drain", kube_drainer, &d, 0, helper_core(r->arg & 1),
				    &err) != K32_OK) {
		r->skip = "task_create failed";
		return;
	}
	bench_resume(r);
	for (uint64_t i = 0; i < r->iters;) {
		k32_status_t st = kobj_channel_write(&O, c, 0, buf_a, 64, NULL, 0);
		if (st == K32_OK)
			i++;
		else
			kobj_object_wait_one(&O, c, KOBJ_SIG_WRITABLE | KOBJ_SIG_PEER_CLOSED,
					     KOBJ_TIME_INFINITE, NULL);
	}
	bench_pause(r);
	k32_plat()->task_join(t);
	kobj_handle_close(&S, d.h);
	kobj_handle_close(&O, c);
	bench_resume(r);
	kobj_node_set_spin_ns(bench_kobj_node, K32_KOBJ_SPIN_NS);
}

static void l_pipe_mt_write(struct brun *r)
{
	int fd[2];
	uint32_t len = (uint32_t)(r->arg >> 8) ? (uint32_t)(r->arg >> 8) : 64u;
	struct drain d = {.count = r->iters, .len = len};
	pthread_t t;
	pthread_attr_t attr;
	cpu_set_t set;
	bench_pause(r);
	CHECK(pipe2(fd, O_CLOEXEC));
	d.fd = fd[0];
	CPU_ZERO(&set);
	CPU_SET(helper_core(r->arg & 1), &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	pthread_create(&t, &attr, linux_drainer, &d);
	pthread_attr_destroy(&attr);
	bench_resume(r);
	for (uint64_t i = 0; i < r->iters; i++)
		full_write(fd[1], buf_a, len);
	bench_pause(r);
	pthread_join(t, NULL);
	close(fd[0]);
	close(fd[1]);
	bench_resume(r);
}

/* For the pod section's ChannelMultiProcess rows (r->arg = size << 8 | placement). */
void bench_linux_pipe_mt_write(struct brun *r)
{
	l_pipe_mt_write(r);
}

/*
 * ChannelMultiProcess/Read's Linux side: reads of `size`-byte messages already in a pipe; the
 * writes that queue each batch (as many as the 64 KiB pipe holds) are excluded, as the Zircon
 * row excludes its helper's batch.
 */
void bench_linux_pipe_read_batch(struct brun *r)
{
	int fd[2];
	uint32_t len = (uint32_t)(r->arg >> 8);
	uint64_t per = 65536u / len ? 65536u / len : 1u;
	bench_pause(r);
	CHECK(pipe2(fd, O_CLOEXEC));
	for (uint64_t i = 0; i < r->iters;) {
		uint64_t k = r->iters - i < per ? r->iters - i : per;
		for (uint64_t j = 0; j < k; j++)
			full_write(fd[1], buf_a, len);
		bench_resume(r);
		for (uint64_t j = 0; j < k; j++)
			full_read(fd[0], buf_b, len);
		bench_pause(r);
		i += k;
	}
	close(fd[0]);
	close(fd[1]);
	bench_resume(r);
}

/* ---- the list ---------------------------------------------------------------------------- */

#define SC PLACE_SAME_CORE
#define XC PLACE_CROSS_CORE
/* clang-format off */
const struct brow bench_micro_rows[] = {
	{"Null", b_null, 0, 0, "syscall getppid", l_syscall_null, false},
	{"TimeGetMonotonic", b_time, 0, 0, "clock_gettime(MONOTONIC)", l_time, false},
	{"TimeGetThread", b_time_thread, 0, 0, "clock_gettime(THREAD_CPUTIME)", l_time_thread, false},
	{"Channel/Create", b_channel_create, 0, 0, "pipe2", l_pipe_create, false},
	{"Channel/Write/64", b_channel_write, 64, 64, "pipe write", l_pipe_write, false},
	{"Channel/Write/1024", b_channel_write, 1024, 1024, "pipe write", l_pipe_write, false},
	{"Channel/Write/32k", b_channel_write, 32768, 32768, "pipe write", l_pipe_write, false},
	{"Channel/Write/64k", b_channel_write, 65536, 65536, "pipe write", l_pipe_write, false},
	{"Channel/Read/64", b_channel_read, 64, 64, "pipe read", l_pipe_read, false},
	{"Channel/Read/1024", b_channel_read, 1024, 1024, "pipe read", l_pipe_read, false},
	{"Channel/Read/32k", b_channel_read, 32768, 32768, "pipe read", l_pipe_read, false},
	{"Channel/Read/64k", b_channel_read, 65536, 65536, "pipe read", l_pipe_read, false},
	{"Channel/WriteRead/64", b_channel_write_read, 64, 64, "pipe write+read", l_pipe_write_read, false},
	{"Channel/WriteRead/4096", b_channel_write_read, 4096, 4096, "pipe write+read", l_pipe_write_read, false},
	{"Event/Create", b_event_create, 0, 0, "eventfd", l_eventfd_create, false},
	{"Event/Close", b_event_close, 0, 0, "close(eventfd)", l_eventfd_close, false},
	{"Event/Signal", b_event_signal, 0, 0, "fcntl(F_GETFL)", l_fcntl_getfl, false},
	{"Event/SignalSetClear", b_event_signal_set, 0, 0, "eventfd write/read", l_eventfd_write, false},
	{"Event/Duplicate", b_duplicate, 0, 0, "dup", l_dup, false},
	{"Event/Replace", b_replace, 0, 0, "dup2 onto open fd", l_dup2, false},
	{"Handle/Close", b_close_dup, 0, 0, "close(dup fd)", l_close_dup, false},
	{"WaitItems/WaitForAlreadySignaledEvent", b_wait_signaled, 0, 0, "poll(1 fd, 0)", l_poll_signaled, false},
	{"WaitItems/WaitForManyWithAlreadySignaledEvent", b_wait_many_signaled, 0, 0, "poll(4 fds, 0)", l_poll_many_signaled, false},
	{"EventPair/Create", b_create, C_EVENTPAIR, 0, "socketpair", l_create, false},
	{"Fifo/Create", b_create, C_FIFO, 0, "pipe2", l_create, false},
	{"Port/Create/0", b_create, C_PORT, 0, "epoll_create1", l_create, false},
	{"Vmo/Create/64k", b_create, C_VMO, 0, "memfd_create+ftruncate", l_create, false},
	{"Socket/Create", b_create, C_SOCKET, 0, "socketpair", l_create, false},
	{"Socket/Write/64", b_socket_write, 64, 64, "socketpair write", l_socket_write, false},
	{"Socket/Write/1024", b_socket_write, 1024, 1024, "socketpair write", l_socket_write, false},
	{"Socket/Write/32k", b_socket_write, 32768, 32768, "socketpair write", l_socket_write, false},
	{"Socket/Read/64", b_socket_read, 64, 64, "socketpair read", l_socket_read, false},
	{"Socket/Read/1024", b_socket_read, 1024, 1024, "socketpair read", l_socket_read, false},
	{"Socket/Read/32k", b_socket_read, 32768, 32768, "socketpair read", l_socket_read, false},
	{"Fifo/WriteRead/4x16", b_fifo_write_read, 0, 64, "pipe write+read 64", l_pipe_64, false},
	{"Thread/CreateAndJoin", b_thread_create_join, 0, 0, "pthread_create+join", l_thread_create_join, true},
	{"ChannelMultiThread/Write/64/SameCore", b_channel_mt_write, SC, 64, "pipe write, reader thread", l_pipe_mt_write, true},
	{"ChannelMultiThread/Write/64/CrossCore", b_channel_mt_write, XC, 64, "pipe write, reader thread", l_pipe_mt_write, true},
	{"RoundTrip_BasicChannel/SameCore", b_rt_channel, SC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_BasicChannel/CrossCore", b_rt_channel, XC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_ChannelCall/SameCore", b_rt_channel, SC | 2, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_ChannelCall/CrossCore", b_rt_channel, XC | 2, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_ChannelPort/SameCore", b_rt_channel_port, SC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_ChannelPort/CrossCore", b_rt_channel_port, XC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_Fidl/SameCore", b_rt_fidl, SC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_Fidl/CrossCore", b_rt_fidl, XC, 0, "pipe round trip", l_rt_pipe, true},
	{"RoundTrip_Port/SameCore", b_rt_port, SC, 0, "eventfd round trip", l_rt_eventfd, true},
	{"RoundTrip_Port/CrossCore", b_rt_port, XC, 0, "eventfd round trip", l_rt_eventfd, true},
	{"RoundTrip_EventPair/SameCore", b_rt_eventpair, SC, 0, "futex round trip", l_rt_futex, true},
	{"RoundTrip_EventPair/CrossCore", b_rt_eventpair, XC, 0, "futex round trip", l_rt_futex, true},
	{"RoundTrip_EventPairVsCondvar/SameCore", b_rt_eventpair, SC, 0, "pthread condvar round trip", l_rt_condvar, true},
	{"RoundTrip_EventPairVsCondvar/CrossCore", b_rt_eventpair, XC, 0, "pthread condvar round trip", l_rt_condvar, true},
	{"RoundTrip_SpscRing/CrossCore", b_rt_spsc, XC, 0, NULL, NULL, true},
};
/* clang-format on */
const unsigned bench_micro_count = sizeof(bench_micro_rows) / sizeof(bench_micro_rows[0]);
