/*
 * k32_config.h - every limit and switch of kube32, in one place.
 *
 * Each limit is an #ifndef default, so a board profile (or -D on the command line) overrides
 * it. Each comment says what it bounds, the bytes per unit where that matters, and the hard
 * ceiling and why. Hitting a limit returns K32_ERR_NO_RESOURCES (or OUT_OF_RANGE) with a
 * message that names it; nothing grows silently.
 *
 * Subsystems keep their limits in their own section below, in the order of the layout.
 */
#ifndef K32_CONFIG_H
#define K32_CONFIG_H

/* ==== base ============================================================================== */

/* Bytes of the message in struct k32_err. 160 holds a full sentence with two names and two
 * numbers; the struct lives on callers' stacks, so keep it small (hard ceiling 512). */
#ifndef K32_ERR_MSG_LEN
#define K32_ERR_MSG_LEN 160
#endif

/* Alignment of every block an arena, pool or heap hands out. 8 covers int64/double on both
 * the ESP32 (Xtensa) and x86-64. */
#ifndef K32_ALLOC_ALIGN
#define K32_ALLOC_ALIGN 8
#endif

/* Lines kept in the log ring for console and `kubectl logs`-style readers. Bytes: count *
 * K32_LOG_LINE_LEN. */
#ifndef K32_LOG_RING_LINES
#define K32_LOG_RING_LINES 64
#endif

/* Bytes of one log line in the ring, including the header; longer lines are truncated. */
#ifndef K32_LOG_LINE_LEN
#define K32_LOG_LINE_LEN 160
#endif

/* Nesting depth the JSON helpers accept when parsing (cJSON recurses per level, so this
 * bounds native stack use on the board). */
#ifndef K32_JSON_MAX_DEPTH
#define K32_JSON_MAX_DEPTH 32
#endif

/* ==== platform ========================================================================== */

/* Named tasks the platform tracks for the TASKS listing (per-task CPU time). */
#ifndef K32_PLAT_MAX_TASKS
#define K32_PLAT_MAX_TASKS 64
#endif

/* Bytes of a task name, including the terminating NUL (FreeRTOS configMAX_TASK_NAME_LEN is
 * 16 by default). */
#ifndef K32_PLAT_TASK_NAME_LEN
#define K32_PLAT_TASK_NAME_LEN 16
#endif

/* ==== wasm ============================================================================== */

/* ==== kobj ============================================================================== */

/* ==== store ============================================================================= */

/* ==== http ============================================================================== */

/* ==== api =============================================================================== */

/* ==== ctrl / kubelet / hw =============================================================== */

_Static_assert(K32_ERR_MSG_LEN >= 64 && K32_ERR_MSG_LEN <= 512, "K32_ERR_MSG_LEN out of range");
_Static_assert((K32_ALLOC_ALIGN & (K32_ALLOC_ALIGN - 1)) == 0, "K32_ALLOC_ALIGN must be a power of 2");

#endif /* K32_CONFIG_H */
