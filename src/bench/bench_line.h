/*
 * bench_line.h - the K32_BENCH result line, shared by the node console (K32_CMD:BENCH), the
 * bench pod's HTTP handler (/run, /hostcall) and the tools that read them back:
 *
 *   K32_BENCH kernel=crc32 n=4 runs=5 us_min=880 us_total=4420 sum=1234567
 *   K32_BENCH hostcall calls=100000 us=2440
 *
 * n is the argument as given (crc32: KiB, see bench_arg_to_n); sum is the kernel's checksum
 * in decimal. Freestanding C (no libc): it builds into the pod as well as natively.
 * Context: any; no allocation, no global state.
 */
#ifndef BENCH_LINE_H
#define BENCH_LINE_H

#include <stdbool.h>
#include <stdint.h>

/* Longest line bench_line_format writes, without the NUL. */
#define BENCH_LINE_MAX 128u

struct bench_result {
	uint32_t kernel;   /* enum bench_kernel */
	uint32_t arg;	   /* the size argument as given (crc32: KiB) */
	uint32_t runs;	   /* timed runs */
	uint64_t us_min;   /* fastest run */
	uint64_t us_total; /* all runs */
	uint32_t sum;	   /* checksum of the last run */
};

/* A clock in microseconds (the node's k32_time_us in a pod, the platform clock natively). */
typedef int64_t (*bench_clock_fn_t)(void);

/* Runs kernel with argument arg runs times (1 if 0), timing each run with clock. */
void bench_measure(uint32_t kernel, uint32_t arg, uint32_t runs, bench_clock_fn_t clock,
		   struct bench_result *out);

/* Writes the K32_BENCH line of r (no newline) into buf and NUL-terminates it. Returns its
 * length, or 0 if cap is too small (cap >= BENCH_LINE_MAX + 1 always suffices). */
uint32_t bench_line_format(char *buf, uint32_t cap, const struct bench_result *r);
/* The same for a host-call run: "K32_BENCH hostcall calls=N us=T". */
uint32_t bench_line_format_hostcall(char *buf, uint32_t cap, uint32_t calls, uint64_t us);

/* Parses a kernel line (len bytes, no NUL needed; a trailing \r or \n is ignored). False
 * for anything else, including unknown kernels, missing fields and numbers out of range. */
bool bench_line_parse(const char *s, uint32_t len, struct bench_result *out);
/* Parses a host-call line. */
bool bench_line_parse_hostcall(const char *s, uint32_t len, uint32_t *out_calls, uint64_t *out_us);

/* The decimal value of key in a query string "a=1&b=x" (a leading "...?" is skipped); for
 * k= use bench_query_str. False if absent or not a number below 2^32. */
bool bench_query_u32(const char *q, uint32_t len, const char *key, uint32_t *out);
/* The raw value of key: pointer into q and its length. False if absent. */
bool bench_query_str(const char *q, uint32_t len, const char *key, const char **out,
		     uint32_t *out_len);

/* Parses len bytes of decimal digits (at least one, at most max): false otherwise. */
bool bench_parse_u64(const char *s, uint32_t len, uint64_t max, uint64_t *out);

#endif /* BENCH_LINE_H */
