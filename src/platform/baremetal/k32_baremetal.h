/*
 * k32_baremetal.h - what the bare-metal platform port (k32_platform_baremetal.c) needs from
 * the board's startup code, and what it gives the image's main.
 */
#ifndef K32_BAREMETAL_H
#define K32_BAREMETAL_H

#include <stdint.h>

/* Milliseconds since boot, advanced by the board's 1 ms tick interrupt. */
extern volatile uint32_t k32_baremetal_tick_ms;

/* Microseconds into the current millisecond (the board's timer; 0..999). */
uint32_t k32_baremetal_subtick_us(void);

/* Starts the 1 ms tick. */
void k32_baremetal_tick_start(void);

/* Monotonic microseconds since boot. */
uint64_t k32_baremetal_now_us(void);

/* Runs every queued task (job) to completion; the main loop calls it, waits do too. */
void k32_baremetal_run_tasks(void);

/* Prints why and stops the board (semihosting exit with status 3 under QEMU). */
_Noreturn void k32_baremetal_panic(const char *why);

#endif /* K32_BAREMETAL_H */
