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

/* The kernel's short name ("crc32"); "?" for an unknown index. */
const char *bench_kernel_name(uint32_t kernel);
/* The kernel named by the len bytes at name, or BENCH_KERNEL_COUNT if none is. */
uint32_t bench_kernel_find(const char *name, uint32_t len);
/* The argument of K32_CMD:BENCH and the pod's /run?n=: crc32 counts KiB (at most 8), every
 * other kernel its n. bench_default_arg gives the page's size (crc32 4, fib 15, ...). */
uint32_t bench_default_arg(uint32_t kernel);
uint32_t bench_arg_to_n(uint32_t kernel, uint32_t arg);

/* Reads the node's microsecond clock n times through a host call (the pod imports
 * kube32.k32_time_us, the import every kubelet offers; natively it calls bench_clock_fn).
 * Returns how many readings did not go backwards: n when the clock is monotonic, so the
 * native and pod results can be compared. */
uint32_t bench_hostcall(uint32_t n);

/* Natively, the clock bench_hostcall reads. Pods get kube32.k32_time_us instead. */
extern int64_t (*bench_clock_fn)(void);

#endif /* BENCH_KERNELS_H */
