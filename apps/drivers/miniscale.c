/*
 * miniscale.c - driver pod for the M5Stack Unit Mini Scales (hardware.md section 2): weight in
 * grams, the raw ADC count and the button.
 *
 * The unit filters and scales on its own STM32; the driver reads the float32 weight (0x10),
 * the raw ADC (0x00) and the button (0x20) with one write-read each (a value register is
 * selected by the written byte and read from its first byte), decodes them in Wasm and
 * publishes. Params: pollIntervalMs (default 500), tareOnStart ("1": write 0x50 at init).
 */
#include "drv.h"

#define NOINLINE __attribute__((noinline))

static k32_device_info dev;
static uint32_t poll_ms;

/* ---- maths (unit-tested natively against hardware.md's example) ---------------------------- */

static uint32_t le_u32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* IEEE-754 float32, little-endian, as the unit sends its weight. */
static float le_f32(const uint8_t *b)
{
	union {
		uint32_t u;
		float f;
	} v;
	v.u = le_u32(b);
	return v.f;
}

/* Grams, rounded to 0.01 g as the unit's own text register does; NaN/inf give 0 and false. */
static int weight_ok(float w)
{
	return w == w && w < 1e7f && w > -1e7f;
}

/* ---- I/O ------------------------------------------------------------------------------------- */

static int32_t rd(uint8_t reg, uint8_t *buf, uint32_t n)
{
	return k32_i2c_write_read(dev.bus, dev.mux_channel, dev.addr, &reg, 1, buf, n);
}

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	uint8_t ver = 0;
	if (k32_device_get(0, &dev, sizeof(dev)) != 0)
		return K32_ENOENT; /* bound to no Device: the kubelet says so */
	poll_ms = k32_device_param_u32(0, DRV_LIT("pollIntervalMs"), 500, 3600000);
	int32_t e = rd(0xFE, &ver, 1);
	if (e == 0 && k32_device_param_u32(0, DRV_LIT("tareOnStart"), 0, 1) == 1) {
		static const uint8_t tare[2] = {0x50, 1};
		e = k32_i2c_write_read(dev.bus, dev.mux_channel, dev.addr, tare, 2, 0, 0);
	}
	return e; /* a failed transfer: the node set NotFound/BusError */
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	uint8_t w[4], raw[4], btn = 1;
	int32_t e = rd(0x10, w, 4);
	if (e == 0)
		e = rd(0x00, raw, 4);
	if (e == 0)
		e = rd(0x20, &btn, 1);
	if (e != 0)
		return (int32_t)poll_ms; /* the node reported the failure; retry next poll */
	float g = le_f32(w);
	if (!weight_ok(g)) {
		k32_log(1, DRV_LIT("miniscale: weight register 0x10 is not a number; skipped"));
		return (int32_t)poll_ms;
	}
	k32_reading_f64(DRV_LIT("weight_g"), (double)g, 2);
	k32_reading_f64(DRV_LIT("raw_adc"), (double)le_u32(raw), 0);
	k32_reading_f64(DRV_LIT("button"), btn == 0 ? 1.0 : 0.0, 0);
	k32_publish(0);
	return (int32_t)poll_ms;
}
