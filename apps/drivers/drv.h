/*
 * drv.h - small helpers shared by the driver pods (freestanding C; compiled both to wasm32
 * and natively for the unit tests). Everything is static inline so a driver carries only
 * what it uses.
 *
 * The Device's Ready condition is the node's job (sdk/k32.h): a failed transfer reports
 * NotFound or BusError with the bus, channel and address in the message, a publish reports
 * Reading. So a driver carries no condition code or message text of its own beyond what is
 * particular to its chip (WrongChip).
 */
#ifndef DRV_H
#define DRV_H

#include <stdint.h>

#include "k32.h"

#define DRV_LIT(s) (s), (uint32_t)(sizeof(s) - 1)

static inline void drv_hex(char *out, const uint8_t *b, uint32_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (uint32_t i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
}

#endif /* DRV_H */
