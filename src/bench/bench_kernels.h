/*
 * bench_kernels.h - the six benchmark kernels of the benchmarks page, written once and
 * compiled twice: natively (-O2, linked into the bench programs) and into the bench pod
 * (clang --target=wasm32 -Oz, freestanding). Each kernel returns a checksum so the native
 * and pod results can be compared bit for bit.
 *
 * The source uses no libc and no heap: one static scratch area serves every kernel, so the
 * pod runs in a 24 KiB linear memory (4 KiB shadow stack + 8 KiB scratch + data).
 */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <stdint.h>

enum bench_kernel {
	BENCH_FIB = 0,	  /* recursive Fibonacci, n = 15: calls */
	BENCH_CRC32 = 1,  /* bitwise CRC-32 of 4 KiB: shifts, xors, loads */
	BENCH_SIEVE = 2,  /* sieve of Eratosthenes below 4096, byte stores */
	BENCH_SORT = 3,	  /* heapsort of 1024 32-bit words */
	BENCH_MANDEL = 4, /* Mandelbrot 32 x 32, 64 iterations, float */
	BENCH_JSON = 5,	  /* format and parse 200 small JSON records */
	BENCH_KERNEL_COUNT = 6,
};

/* The default size argument of each kernel (n in /run?k=..&n=..). */
uint32_t bench_default_n(uint32_t kernel);

/* Runs kernel k with size n, reps times; returns the checksum of the last repetition
 * (0xFFFFFFFF for an unknown kernel). n is clamped to what the scratch area holds. */
uint32_t bench_run(uint32_t kernel, uint32_t n, uint32_t reps);

/* Calls the host's identity function v -> v for v = 0..n-1 (the pod imports it as
 * kube32.bench_nop; natively it is a call through bench_nop_fn). Returns the sum of the
 * answers, so the native and pod results can be compared. */
uint32_t bench_hostcall(uint32_t n);

/* Natively, the function bench_hostcall calls. Pods get kube32.bench_nop instead. */
extern uint32_t (*bench_nop_fn)(uint32_t);

#endif /* BENCH_KERNELS_H */
