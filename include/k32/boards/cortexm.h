/*
 * boards/cortexm.h - a generic Cortex-M4F board for the emulator: QEMU's mps2-an386 machine
 * (make test-mcu), given the cardputer's 512 KiB of SRAM so the images compare, no radio and
 * no OS (src/platform/baremetal). Its three I2C devices are the simulated ones of src/hw.
 *
 * Like cardputer.h: K32_CORTEXM_* is the profile; the second part sets k32_config.h's
 * limits when it is the board being built (cmake -DK32_BOARD=cortexm).
 */
#ifndef K32_BOARDS_CORTEXM_H
#define K32_BOARDS_CORTEXM_H

#define K32_CORTEXM_SRAM_BYTES	(512u * 1024u)
#define K32_CORTEXM_PSRAM_BYTES 0u
/* no radio, no TLS: the C library's heap bookkeeping and the main stack */
#define K32_CORTEXM_SYSTEM_RESERVE_BYTES (32u * 1024u)
#define K32_CORTEXM_POD_POOL_BYTES	 (96u * 1024u)
#define K32_CORTEXM_INTERP_STACK_BYTES	 (16u * 1024u)
#define K32_CORTEXM_MAX_PODS		 4u
#define K32_CORTEXM_HARDWARE		 "i2c:bme688,i2c:miniscale,i2c:rfid"
#define K32_CORTEXM_NODE_HEAP_BYTES	 (96u * 1024u)
#define K32_CORTEXM_HEAP_PLANNED_BYTES                                                             \
	(K32_CORTEXM_POD_POOL_BYTES + K32_CORTEXM_INTERP_STACK_BYTES + K32_CORTEXM_NODE_HEAP_BYTES)
#define K32_CORTEXM_STATIC_RAM_MAX                                                                 \
	(K32_CORTEXM_SRAM_BYTES - K32_CORTEXM_SYSTEM_RESERVE_BYTES - K32_CORTEXM_HEAP_PLANNED_BYTES)

_Static_assert(K32_CORTEXM_HEAP_PLANNED_BYTES + K32_CORTEXM_SYSTEM_RESERVE_BYTES + 32u * 1024u <=
		   K32_CORTEXM_SRAM_BYTES,
	       "cortexm: planned heap + reserve leave under 32 KiB of SRAM for static RAM");

#endif /* K32_BOARDS_CORTEXM_H */

#if defined(K32_BOARD_CORTEXM) && !defined(K32_BOARD_LIMITS_SET)
#define K32_BOARD_LIMITS_SET	     1
#define K32_BOARD_NAME		     "cortexm"
#define K32_BOARD_SRAM_BYTES	     K32_CORTEXM_SRAM_BYTES
#define K32_BOARD_PSRAM_BYTES	     K32_CORTEXM_PSRAM_BYTES
#define K32_BOARD_HEAP_PLANNED_BYTES K32_CORTEXM_HEAP_PLANNED_BYTES
#define K32_BOARD_STATIC_RAM_MAX     K32_CORTEXM_STATIC_RAM_MAX
#define K32_BOARD_INTERP_STACK_BYTES K32_CORTEXM_INTERP_STACK_BYTES
#define K32_BOARD_POD_POOL_BYTES     K32_CORTEXM_POD_POOL_BYTES
#define K32_BOARD_HARDWARE	     K32_CORTEXM_HARDWARE
#define K32_KLET_MAX_PODS	     K32_CORTEXM_MAX_PODS
#include "k32/boards/mcu_limits.h"
#endif
