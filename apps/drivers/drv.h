/*
 * drv.h - small helpers shared by the driver pods (freestanding C; compiled both to wasm32
 * and natively for the unit tests). Everything is static inline so a driver carries only
 * what it uses.
 */
#ifndef DRV_H
#define DRV_H

#include <stdint.h>

#include "k32.h"

#define DRV_LIT(s) (s), (uint32_t)(sizeof(s) - 1)

/* Ready-condition bookkeeping: report a change once, not every tick. */
struct drv_cond {
	int32_t last; /* 1 = Ready/Reading reported, else the last error code reported, 0 none */
};

static inline uint32_t drv_strlen(const char *s)
{
	uint32_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* Decimal parameter of device 0, or def when absent or malformed. */
static inline uint32_t drv_param_u32(const char *key, uint32_t key_len, uint32_t def)
{
	char buf[12];
	int32_t n = k32_device_param(0, key, key_len, buf, sizeof(buf));
	if (n <= 0 || n > 10)
		return def;
	uint32_t v = 0;
	for (int32_t i = 0; i < n; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return def;
		v = v * 10u + (uint32_t)(buf[i] - '0');
	}
	return v;
}

/* Reports Ready=True/Reading once after a run of errors (or at the first reading). */
static inline void drv_ready(struct drv_cond *c)
{
	if (c->last == 1)
		return;
	c->last = 1;
	k32_device_condition(0, 1, DRV_LIT("Reading"), DRV_LIT("readings are fresh"));
}

/* Reports Ready=False for an I2C error code, once per distinct code. */
static inline void drv_fail(struct drv_cond *c, int32_t code)
{
	if (c->last == code)
		return;
	c->last = code;
	if (code == K32_ENODEV)
		k32_device_condition(0, 0, DRV_LIT("NotFound"),
				     DRV_LIT("no ACK at the device address: absent, unpowered or "
					     "on another mux channel"));
	else if (code == K32_EPERM)
		k32_device_condition(0, 0, DRV_LIT("NotGranted"),
				     DRV_LIT("the pod is not bound to this bus/channel/address"));
	else if (code == K32_ETIMEDOUT)
		k32_device_condition(0, 0, DRV_LIT("BusError"),
				     DRV_LIT("I2C transfer timed out; check wiring"));
	else
		k32_device_condition(0, 0, DRV_LIT("BusError"),
				     DRV_LIT("I2C data NACK or bus error; retrying"));
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
