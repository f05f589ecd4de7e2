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

/* Decimal parameter of device 0: def when absent or malformed (not 1..9 digits), at most
 * max. Not inlined: every driver reads a few. */
static __attribute__((noinline)) uint32_t drv_param_u32(const char *key, uint32_t key_len,
							uint32_t def, uint32_t max)
{
	char buf[12];
	int32_t n = k32_device_param(0, key, key_len, buf, sizeof(buf));
	if (n <= 0 || n > 9)
		return def;
	uint32_t v = 0;
	for (int32_t i = 0; i < n; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return def;
		v = v * 10u + (uint32_t)(buf[i] - '0');
	}
	return v < max ? v : max;
}

static inline void drv_hex(char *out, const uint8_t *b, uint32_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (uint32_t i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
}

#endif /* DRV_H */
