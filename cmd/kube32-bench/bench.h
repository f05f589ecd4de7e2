/*
 * bench.h - the micro-benchmark harness of kube32-bench (a Google-Benchmark-style runner).
 *
 * kube32-bench is a Linux program: besides kube32's objects it measures the Linux
 * equivalents (pipe, socketpair, eventfd, futex, condvar, pthread) in the same run, so it
 * includes Linux headers directly. That is deliberate and confined to cmd/kube32-bench/.
 *
 * A benchmark function runs r->iters iterations. Work that must not be timed (draining what a
 * Write benchmark wrote, creating what a Close benchmark closes) is bracketed with
 * bench_pause / bench_resume, which subtract it from both the wall and the CPU time. Such
 * work is batched so the clock reads are amortised.
 */
#ifndef KUBE32_BENCH_H
#define KUBE32_BENCH_H

#include <stdbool.h>
#include <stdint.h>

struct brun {
	uint64_t iters;	    /* iterations to run */
	uint64_t arg;	    /* the row's argument (message size, placement) */
	uint64_t paused_ns; /* wall time spent paused */
	uint64_t pause_t0;  /* when the current pause began */
	const char *skip;   /* set by a benchmark that cannot run here (reason) */
};

typedef void (*bench_fn)(struct brun *r);

/* One line of the table: a kube32 measurement and its Linux equivalent. */
struct brow {
	const char *name;	/* "Channel/Write/64" */
	bench_fn fn;		/* kube32 side */
	uint64_t arg;		/* passed in r->arg */
	uint64_t bytes;		/* bytes per iteration (for bytes/second), 0 = none */
	const char *linux_name; /* "pipe write" or NULL */
	bench_fn linux_fn;	/* Linux side or NULL */
	bool threads;		/* uses a second thread (fewer iterations suffice) */
};

uint64_t bench_now_ns(void);
void bench_pause(struct brun *r);
void bench_resume(struct brun *r);
/* Keeps the compiler from dropping a value. */
static inline void bench_keep(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

/* Spin budget kube32 waiters use in CrossCore rows (--spin-ns). */
extern uint32_t bench_cross_spin_ns;

/* Pins the calling thread to a core (-1: any). */
void bench_pin(int core);

/* Placements for round-trip rows (r->arg). */
enum { PLACE_SAME_CORE = 0, PLACE_CROSS_CORE = 1 };

/* The rows (bench_micro.c) and the pod rows (bench_pod.c, empty when no Wasm runtime). */
extern const struct brow bench_micro_rows[];
extern const unsigned bench_micro_count;
extern const struct brow bench_pod_rows[];
extern const unsigned bench_pod_count;
/* Linux sides of the pod section's ChannelMultiProcess rows (bench_micro.c; r->arg is
 * message size << 8 | placement): a pipe writer against a reader thread, and reads of a
 * batch already queued in a pipe. */
void bench_linux_pipe_mt_write(struct brun *r);
void bench_linux_pipe_read_batch(struct brun *r);
/* Prepares kobj (the instance, owners); returns 0 on success. */
int bench_micro_setup(void);
/* The benchmarks' kobj instance (made by bench_micro_setup). */
extern struct kobj_node *bench_kobj_node;
int bench_pod_setup(char *why, unsigned why_len);

#endif /* KUBE32_BENCH_H */
