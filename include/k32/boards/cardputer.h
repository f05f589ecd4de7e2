/*
 * boards/cardputer.h - the worker board: M5Stack Cardputer (ESP32-S3, 512 KiB SRAM, no PSRAM),
 * three I2C devices (BME688, Mini Scales, RFID 2) behind a PCA9548A.
 *
 * Two parts. The K32_CARDPUTER_* values are the board's profile; kube32-sim reads them for
 * its simulated cardputers (src/sim/sim.c), so the simulator enforces what the board build
 * compiles in. The second part applies only when this is the board being built
 * (cmake -DK32_BOARD=cardputer defines K32_BOARD_CARDPUTER): it sets every limit of
 * k32_config.h that differs from the simulator's defaults.
 *
 * RAM plan (checked below and by scripts/mcu-size.sh on the linked image):
 *   SRAM 512 KiB = static RAM of the image (.data + .bss, at most STATIC_RAM_MAX)
 *                + kube32's heap at the pods stage (HEAP_PLANNED: pod pool, interpreter
 *                  stack, other task stacks, the node heap of the boot report)
 *                + what ESP-IDF, Wi-Fi, lwIP and one TLS session need (SYSTEM_RESERVE,
 *                  160 KiB, issue 13's acceptance figure).
 */
#ifndef K32_BOARDS_CARDPUTER_H
#define K32_BOARDS_CARDPUTER_H

#define K32_CARDPUTER_SRAM_BYTES	   (512u * 1024u)
#define K32_CARDPUTER_PSRAM_BYTES	   0u
#define K32_CARDPUTER_SYSTEM_RESERVE_BYTES (160u * 1024u)
/* the pod pool reserved at boot: three driver pods and room for a small user pod */
#define K32_CARDPUTER_POD_POOL_BYTES (80u * 1024u)
/* native stack of the interpreter task: 352 B under a host call (docs/benchmarks.md,
 * "Native stack") plus the host functions' own frames */
#define K32_CARDPUTER_INTERP_STACK_BYTES (16u * 1024u)
#define K32_CARDPUTER_MAX_PODS		 8u
#define K32_CARDPUTER_HARDWARE		 "i2c:bme688,i2c:miniscale,i2c:rfid"
/* the node heap besides the pool and the interpreter stack (the kubelet's record and pod
 * table, kobj's pools, API clients, pod server, log rings, the module loader's scratch),
 * measured by `make mcu` (scripts/mcu.sh ram_measure: kube32-sim built with these limits,
 * --boot-report cardputer --boot-devices): its peak from boot to the three driver pods
 * running was 170,127 B on 2026-12-03, on a 64-bit host (the board's 32-bit pointers need
 * less); make mcu fails when the peak outgrows this */
#define K32_CARDPUTER_NODE_HEAP_BYTES (176u * 1024u)
/* task stacks besides the interpreter's (make mcu's worst static paths in brackets): node
 * task 12 KiB (4.5 KB), watcher 8 KiB (2.3 KB), HTTP server loop 8 KiB (6.1 KB), two pod
 * request routers 8 KiB each (5.6 KB), kobj timer and console 2 KiB each (0.2 KB) */
#define K32_CARDPUTER_TASK_STACKS_BYTES ((12u + 8u + 8u + 2u * 8u + 2u + 2u) * 1024u)
#define K32_CARDPUTER_HEAP_PLANNED_BYTES                                                           \
	(K32_CARDPUTER_POD_POOL_BYTES + K32_CARDPUTER_INTERP_STACK_BYTES +                         \
	 K32_CARDPUTER_NODE_HEAP_BYTES + K32_CARDPUTER_TASK_STACKS_BYTES)
/* what is left for .data + .bss */
#define K32_CARDPUTER_STATIC_RAM_MAX                                                               \
	(K32_CARDPUTER_SRAM_BYTES - K32_CARDPUTER_SYSTEM_RESERVE_BYTES -                           \
	 K32_CARDPUTER_HEAP_PLANNED_BYTES)

_Static_assert(K32_CARDPUTER_HEAP_PLANNED_BYTES + K32_CARDPUTER_SYSTEM_RESERVE_BYTES +
		       32u * 1024u <=
		   K32_CARDPUTER_SRAM_BYTES + K32_CARDPUTER_PSRAM_BYTES,
	       "cardputer: planned heap + system reserve leave under 32 KiB of SRAM for static "
	       "RAM; lower the pod pool or the stacks in include/k32/boards/cardputer.h");

#endif /* K32_BOARDS_CARDPUTER_H */

#if defined(K32_BOARD_CARDPUTER) && !defined(K32_BOARD_LIMITS_SET)
#define K32_BOARD_LIMITS_SET	     1
#define K32_BOARD_NAME		     "cardputer"
#define K32_BOARD_SRAM_BYTES	     K32_CARDPUTER_SRAM_BYTES
#define K32_BOARD_PSRAM_BYTES	     K32_CARDPUTER_PSRAM_BYTES
#define K32_BOARD_HEAP_PLANNED_BYTES K32_CARDPUTER_HEAP_PLANNED_BYTES
#define K32_BOARD_STATIC_RAM_MAX     K32_CARDPUTER_STATIC_RAM_MAX
#define K32_BOARD_INTERP_STACK_BYTES K32_CARDPUTER_INTERP_STACK_BYTES
#define K32_BOARD_POD_POOL_BYTES     K32_CARDPUTER_POD_POOL_BYTES
#define K32_BOARD_HARDWARE	     K32_CARDPUTER_HARDWARE
#include "k32/boards/mcu_limits.h"
#define K32_KLET_MAX_PODS K32_CARDPUTER_MAX_PODS
#endif
