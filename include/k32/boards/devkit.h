/*
 * boards/devkit.h - the control-plane board: an ESP32-S3 devkit with 512 KiB SRAM and 2 MiB
 * of PSRAM. The pod pool lives in PSRAM; everything else in SRAM.
 *
 * Like cardputer.h: the K32_DEVKIT_* profile values are read by kube32-sim for its simulated
 * devkits; the second part sets k32_config.h's limits when the devkit is the board being
 * built (cmake -DK32_BOARD=devkit).
 */
#ifndef K32_BOARDS_DEVKIT_H
#define K32_BOARDS_DEVKIT_H

#define K32_DEVKIT_SRAM_BYTES		(512u * 1024u)
#define K32_DEVKIT_PSRAM_BYTES		(2u * 1024u * 1024u)
#define K32_DEVKIT_SYSTEM_RESERVE_BYTES (160u * 1024u)
#define K32_DEVKIT_POD_POOL_BYTES	(1024u * 1024u) /* in PSRAM */
#define K32_DEVKIT_INTERP_STACK_BYTES	(16u * 1024u)
#define K32_DEVKIT_MAX_PODS		16u
#define K32_DEVKIT_HARDWARE		""
/* the control plane's heap (store objects, watch history, API caches) goes to PSRAM too;
 * the SRAM part of the heap: stacks and connection buffers */
#define K32_DEVKIT_NODE_HEAP_BYTES   (96u * 1024u)
#define K32_DEVKIT_TASK_STACKS_BYTES (6u * 8u * 1024u)
#define K32_DEVKIT_HEAP_PLANNED_BYTES                                                              \
	(K32_DEVKIT_INTERP_STACK_BYTES + K32_DEVKIT_NODE_HEAP_BYTES + K32_DEVKIT_TASK_STACKS_BYTES)
#define K32_DEVKIT_STATIC_RAM_MAX                                                                  \
	(K32_DEVKIT_SRAM_BYTES - K32_DEVKIT_SYSTEM_RESERVE_BYTES - K32_DEVKIT_HEAP_PLANNED_BYTES)

_Static_assert(K32_DEVKIT_HEAP_PLANNED_BYTES + K32_DEVKIT_SYSTEM_RESERVE_BYTES + 32u * 1024u <=
		   K32_DEVKIT_SRAM_BYTES,
	       "devkit: planned SRAM heap + system reserve leave under 32 KiB of SRAM for static "
	       "RAM; lower the stacks in include/k32/boards/devkit.h");
_Static_assert(K32_DEVKIT_POD_POOL_BYTES <= K32_DEVKIT_PSRAM_BYTES,
	       "devkit: the pod pool must fit in PSRAM");

#endif /* K32_BOARDS_DEVKIT_H */

#if defined(K32_BOARD_DEVKIT) && !defined(K32_BOARD_LIMITS_SET)
#define K32_BOARD_LIMITS_SET	     1
#define K32_BOARD_NAME		     "devkit"
#define K32_BOARD_SRAM_BYTES	     K32_DEVKIT_SRAM_BYTES
#define K32_BOARD_PSRAM_BYTES	     K32_DEVKIT_PSRAM_BYTES
#define K32_BOARD_HEAP_PLANNED_BYTES K32_DEVKIT_HEAP_PLANNED_BYTES
#define K32_BOARD_STATIC_RAM_MAX     K32_DEVKIT_STATIC_RAM_MAX
#define K32_BOARD_INTERP_STACK_BYTES K32_DEVKIT_INTERP_STACK_BYTES
#define K32_BOARD_POD_POOL_BYTES     K32_DEVKIT_POD_POOL_BYTES
#define K32_BOARD_HARDWARE	     K32_DEVKIT_HARDWARE
/* the control plane serves every kubectl and kubelet of the cluster */
#define K32_HTTP_MAX_CONNS	    24
#define K32_HTTP_STREAM_BUF_BYTES   (16u * 1024u)
#define K32_HTTP_MAX_BODY_BYTES	    (256u * 1024u)
#define K32_HTTP_MAX_RESPONSE_BYTES (256u * 1024u)
#define K32_KLET_MAX_PODS	    K32_DEVKIT_MAX_PODS
#include "k32/boards/mcu_limits.h"
#endif
