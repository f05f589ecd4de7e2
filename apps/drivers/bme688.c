/*
 * bme688.c - driver pod for the Bosch BME688 (M5Stack ENV Pro unit): temperature, pressure,
 * humidity and gas resistance, with Bosch's integer compensation computed in Wasm
 * (hardware.md section 1).
 *
 * Forced mode, reactive: k32_init reads the chip id and the calibration block and writes the
 * configuration (T x2, P x4, H x1, filter off, heater set point 0 at heaterTempC for
 * heaterDurationMs); each k32_tick either triggers a measurement and returns the measurement
 * time as its delay, or reads the 17 data bytes, compensates, publishes and returns the rest
 * of the poll interval. Every compensation step is its own non-inlined function so no frame
 * grows with the formulas (the reference page's lesson about stack use); temperature needs
 * 64-bit intermediates, the rest is 32-bit two's complement with wrapping multiplies.
 *
 * Params (spec.params): heaterTempC (default 320), heaterDurationMs (150), ambientC (25),
 * pollIntervalMs (3000).
 */
#include "drv.h"

#define NOINLINE __attribute__((noinline))

/*
 * The calibration block kept as the sensor sends it (hardware.md section 1): 0x8A..0xA0 at
 * [0, 23), 0xE1..0xEE at [23, 37), 0x00..0x04 at [37, 42). The compensation steps read each
 * parameter where it lies (a little-endian pair compiles to one 16-bit load), so there is no
 * parse step and no second copy.
 */
enum { CAL_8A = 0, CAL_E1 = 23, CAL_00 = 37, CAL_LEN = 42 };
struct bme_calib {
	uint8_t b[CAL_LEN];
};
#define CAL_U16(c, i)	  ((uint16_t)((c)->b[i] | (c)->b[(i) + 1] << 8))
#define CAL_S16(c, i)	  ((int16_t)CAL_U16(c, i))
#define CAL_S8(c, i)	  ((int8_t)(c)->b[i])
#define T1(c)		  CAL_U16(c, CAL_E1 + 8)
#define T2(c)		  CAL_S16(c, CAL_8A + 0)
#define T3(c)		  CAL_S8(c, CAL_8A + 2)
#define P1(c)		  CAL_U16(c, CAL_8A + 4)
#define P2(c)		  CAL_S16(c, CAL_8A + 6)
#define P3(c)		  CAL_S8(c, CAL_8A + 8)
#define P4(c)		  CAL_S16(c, CAL_8A + 10)
#define P5(c)		  CAL_S16(c, CAL_8A + 12)
#define P6(c)		  CAL_S8(c, CAL_8A + 15) /* P6 and P7 are stored swapped */
#define P7(c)		  CAL_S8(c, CAL_8A + 14)
#define P8(c)		  CAL_S16(c, CAL_8A + 18)
#define P9(c)		  CAL_S16(c, CAL_8A + 20)
#define P10(c)		  ((c)->b[CAL_8A + 22])
#define H1(c)		  ((uint16_t)((c)->b[CAL_E1 + 2] << 4 | ((c)->b[CAL_E1 + 1] & 0x0F)))
#define H2(c)		  ((uint16_t)((c)->b[CAL_E1 + 0] << 4 | (c)->b[CAL_E1 + 1] >> 4))
#define H3(c)		  CAL_S8(c, CAL_E1 + 3)
#define H4(c)		  CAL_S8(c, CAL_E1 + 4)
#define H5(c)		  CAL_S8(c, CAL_E1 + 5)
#define H6(c)		  ((c)->b[CAL_E1 + 6])
#define H7(c)		  CAL_S8(c, CAL_E1 + 7)
#define GH1(c)		  CAL_S8(c, CAL_E1 + 12)
#define GH2(c)		  CAL_S16(c, CAL_E1 + 10)
#define GH3(c)		  CAL_S8(c, CAL_E1 + 13)
#define RES_HEAT_VAL(c)	  CAL_S8(c, CAL_00 + 0)
#define RES_HEAT_RANGE(c) (((c)->b[CAL_00 + 2] >> 4) & 3)

struct bme_sample {
	int32_t t_x100;	  /* 0.01 degC */
	uint32_t p_pa;	  /* Pa */
	uint32_t h_x1000; /* 0.001 %RH */
	uint32_t gas_ohm; /* Ohm */
	uint8_t status;	  /* 0x1D: new_data etc. */
	uint8_t gas_bits; /* 0x2D[5:4]: gas_valid, heat_stab */
};

static struct bme_calib cal;
static k32_device_info dev;
static uint32_t poll_ms, meas_ms;
static uint8_t triggered, retries;

/* ---- maths (pure; unit-tested natively against hardware.md's worked example) ---------------- */

static int32_t mul32(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a * (uint32_t)b);
}

static int32_t add32(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* 0.01 degC; *t_fine feeds pressure and humidity. */
static NOINLINE int32_t comp_temperature(const struct bme_calib *c, uint32_t adc_t, int32_t *t_fine)
{
	int64_t v1 = ((int64_t)adc_t >> 3) - ((int64_t)T1(c) << 1);
	int64_t v2 = (v1 * T2(c)) >> 11;
	int64_t v3 = ((((v1 >> 1) * (v1 >> 1)) >> 12) * ((int64_t)T3(c) << 4)) >> 14;
	*t_fine = (int32_t)(v2 + v3);
	return (int32_t)(((int64_t)*t_fine * 5 + 128) >> 8);
}

/* The pressure offset term b (before the division). */
static NOINLINE int32_t press_offset(const struct bme_calib *c, int32_t a)
{
	int32_t b = mul32(mul32(a >> 2, a >> 2) >> 11, P6(c)) >> 2;
	b = add32(b, mul32(a, P5(c)) * 2);
	return add32(b >> 2, (int32_t)((uint32_t)P4(c) << 16));
}

/* The pressure scale term (the divisor). */
static NOINLINE int32_t press_scale(const struct bme_calib *c, int32_t a)
{
	a = add32(mul32(mul32(a >> 2, a >> 2) >> 13, (int32_t)P3(c) * 32) >> 3,
		  mul32(P2(c), a) >> 1) >>
	    18;
	return mul32(32768 + a, P1(c)) >> 15;
}

/* The final non-linear correction of a pressure estimate p. */
static NOINLINE int32_t press_correct(const struct bme_calib *c, int32_t p)
{
	int32_t c1 = mul32(P9(c), mul32(p >> 3, p >> 3) >> 13) >> 12;
	int32_t c2 = mul32(p >> 2, P8(c)) >> 13;
	int32_t c3 = mul32(mul32(mul32(p >> 8, p >> 8), p >> 8), P10(c)) >> 17;
	int32_t sum = add32(add32(add32(c1, c2), c3), (int32_t)P7(c) * 128);
	return add32(p, sum >> 4);
}

/* Pa. */
static NOINLINE uint32_t comp_pressure(const struct bme_calib *c, uint32_t adc_p, int32_t t_fine)
{
	int32_t a = (t_fine >> 1) - 64000;
	int32_t b = press_offset(c, a);
	int32_t s = press_scale(c, a);
	if (s == 0)
		return 0;
	int32_t p = (int32_t)((uint32_t)(1048576 - (int32_t)adc_p - (b >> 12)) * 3125u);
	if (p >= 0x40000000)
		p = (int32_t)((uint32_t)(p / s) << 1);
	else
		p = (int32_t)((uint32_t)p << 1) / s;
	return (uint32_t)press_correct(c, p);
}

/* 0.001 %RH, clamped to 0..100000. Products wrap as Wasm's i32.mul does (extreme raw words
 * overflow them; natively too, without undefined behaviour). */
static NOINLINE uint32_t comp_humidity(const struct bme_calib *c, uint32_t adc_h, int32_t t_fine)
{
	int32_t ts = (int32_t)(((int64_t)t_fine * 5 + 128) >> 8);
	int32_t a = (int32_t)adc_h - (int32_t)H1(c) * 16 - (mul32(ts, H3(c)) / 100 >> 1);
	int32_t b = mul32(H2(c), add32(add32(mul32(ts, H4(c)) / 100,
					     (mul32(ts, mul32(ts, H5(c)) / 100) >> 6) / 100),
				       16384)) >>
		    10;
	int32_t cc = mul32(a, b);
	int32_t d = (((int32_t)H6(c) << 7) + mul32(ts, H7(c)) / 100) >> 4;
	int32_t e = mul32(cc >> 14, cc >> 14) >> 10;
	int32_t h = mul32(add32(cc, mul32(d, e) >> 1) >> 10, 1000) >> 12;
	return (uint32_t)(h > 100000 ? 100000 : h < 0 ? 0 : h);
}

/* Ohm (BME688 formula; integer results come in 100 Ohm steps). */
static NOINLINE uint32_t comp_gas(uint32_t adc_g, uint32_t range)
{
	uint32_t v1 = 262144u >> (range & 15);
	int32_t v2 = 4096 + ((int32_t)adc_g - 512) * 3;
	if (v2 <= 0)
		return 0;
	return (10000u * v1) / (uint32_t)v2 * 100u;
}

/* res_heat code for a target heater temperature (capped at 400 degC) at ambient amb_c. */
static NOINLINE uint8_t heater_res(const struct bme_calib *c, int32_t target_c, int32_t amb_c)
{
	if (target_c > 400)
		target_c = 400;
	int32_t a = ((amb_c * GH3(c)) / 1000) * 256;
	int32_t b = (GH1(c) + 784) * ((((GH2(c) + 154009) * target_c * 5) / 100 + 3276800) / 10);
	int32_t d = (a + b / 2) / (RES_HEAT_RANGE(c) + 4);
	int32_t e = 131 * RES_HEAT_VAL(c) + 65536;
	return (uint8_t)(((((d / e) - 250) * 34) + 50) / 100);
}

/* gas_wait code: a 6-bit count times 1, 4, 16 or 64 ms; >= 4032 ms saturates. */
static uint8_t heater_dur(uint32_t ms)
{
	if (ms >= 4032)
		return 0xFF;
	uint8_t factor = 0;
	while (ms > 63) {
		ms /= 4;
		factor++;
	}
	return (uint8_t)(ms + factor * 64u);
}

/* Bosch's measurement time estimate in ms (rounded up) for osrs codes and a heater time. */
static uint32_t meas_time_ms(uint8_t osrs_t, uint8_t osrs_p, uint8_t osrs_h, uint32_t heat_ms)
{
	static const uint8_t cycles[6] = {0, 1, 2, 4, 8, 16};
	uint32_t us =
	    (cycles[osrs_t] + cycles[osrs_p] + cycles[osrs_h]) * 1963u + 477u * 9u + 1000u;
	return (us + 999u) / 1000u + heat_ms;
}

/* Decodes the 17 bytes read from 0x1D into a compensated sample. */
static NOINLINE void decode(const struct bme_calib *c, const uint8_t *r, struct bme_sample *s)
{
	uint32_t adc_p = (uint32_t)r[2] << 12 | (uint32_t)r[3] << 4 | (uint32_t)r[4] >> 4;
	uint32_t adc_t = (uint32_t)r[5] << 12 | (uint32_t)r[6] << 4 | (uint32_t)r[7] >> 4;
	uint32_t adc_h = (uint32_t)r[8] << 8 | r[9];
	uint32_t adc_g = (uint32_t)r[15] << 2 | (uint32_t)r[16] >> 6;
	int32_t t_fine;
	s->status = r[0];
	s->gas_bits = (uint8_t)((r[16] >> 4) & 3);
	s->t_x100 = comp_temperature(c, adc_t, &t_fine);
	s->p_pa = comp_pressure(c, adc_p, t_fine);
	s->h_x1000 = comp_humidity(c, adc_h, t_fine);
	s->gas_ohm = comp_gas(adc_g, r[16] & 15);
}

/* ---- I/O ------------------------------------------------------------------------------------- */

/* One transaction with the sensor (a failure's condition is reported by the node). */
static int32_t xfer(const uint8_t *w, uint32_t wlen, uint8_t *r, uint32_t rlen)
{
	return k32_i2c_write_read(dev.bus, dev.mux_channel, dev.addr, w, wlen, r, rlen);
}

static int32_t rd(uint8_t reg, uint8_t *buf, uint32_t n)
{
	return xfer(&reg, 1, buf, n);
}

static NOINLINE void publish(const struct bme_sample *s)
{
	k32_reading_f64(DRV_LIT("temperature_c"), (double)s->t_x100 / 100.0, 2);
	k32_reading_f64(DRV_LIT("pressure_pa"), (double)s->p_pa, 0);
	k32_reading_f64(DRV_LIT("humidity_pct"), (double)s->h_x1000 / 1000.0, 3);
	if (s->gas_bits == 3)
		k32_reading_f64(DRV_LIT("gas_ohm"), (double)s->gas_ohm, 0);
	k32_reading_str(DRV_LIT("gas_valid"), s->gas_bits == 3 ? "true" : "false",
			s->gas_bits == 3 ? 4 : 5);
	k32_publish(0);
}

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	uint8_t id = 0;
	int32_t e;

	if (k32_device_get(0, &dev, sizeof(dev)) != 0)
		return K32_ENOENT; /* bound to no Device: the kubelet says so */
	e = rd(0xD0, &id, 1);
	if (e == 0 && id != 0x61) {
		k32_device_condition(0, 0, DRV_LIT("WrongChip"),
				     DRV_LIT("chip_id (0xD0) is not 0x61: not a BME68x; check "
					     "spec.address and spec.model"));
		return K32_ENODEV;
	}
	if (e == 0)
		e = rd(0x8A, cal.b + CAL_8A, CAL_E1 - CAL_8A);
	if (e == 0)
		e = rd(0xE1, cal.b + CAL_E1, CAL_00 - CAL_E1);
	if (e == 0)
		e = rd(0x00, cal.b + CAL_00, CAL_LEN - CAL_00);
	if (e != 0)
		return e;
	uint32_t heat_c = k32_device_param_u32(0, DRV_LIT("heaterTempC"), 320, 400);
	uint32_t heat_ms = k32_device_param_u32(0, DRV_LIT("heaterDurationMs"), 150, 4032);
	uint32_t amb_c = k32_device_param_u32(0, DRV_LIT("ambientC"), 25, 85);
	poll_ms = k32_device_param_u32(0, DRV_LIT("pollIntervalMs"), 3000, 3600000);
	uint8_t dur = heater_dur(heat_ms);
	static const uint8_t mult[4] = {1, 4, 16, 64};
	meas_ms = meas_time_ms(2, 3, 1, (uint32_t)(dur & 0x3F) * mult[dur >> 6]);
	/* one transaction of (register, value) pairs: T x2, P x4 (sleep), H x1, filter off,
	 * heater set point 0 and its duration, heater on, run_gas with set point 0 */
	uint8_t c[14] = {0x72, 0x01, 0x74, 0x4C, 0x75, 0x00, 0x5A,
			 0,    0x64, 0,	   0x70, 0x00, 0x71, 0x20};
	c[7] = heater_res(&cal, (int32_t)heat_c, (int32_t)amb_c);
	c[9] = dur;
	triggered = 0;
	return xfer(c, sizeof(c), 0, 0);
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	static const uint8_t trig[2] = {0x74, 0x4D};
	if (!triggered) {
		if (xfer(trig, 2, 0, 0) != 0)
			return (int32_t)poll_ms;
		triggered = 1;
		retries = 0;
		return (int32_t)meas_ms + 1;
	}
	uint8_t r[17];
	if (rd(0x1D, r, sizeof(r)) != 0) {
		triggered = 0;
		return (int32_t)poll_ms;
	}
	if (!(r[0] & 0x80) && retries < 5) {
		retries++;
		return 10; /* not done yet */
	}
	triggered = 0;
	if (!(r[0] & 0x80)) {
		k32_log(1, DRV_LIT("bme688: no new data (0x1D bit 7) after the measurement time"));
		return (int32_t)poll_ms;
	}
	struct bme_sample s;
	decode(&cal, r, &s);
	publish(&s);
	return poll_ms > meas_ms ? (int32_t)(poll_ms - meas_ms) : 1;
}
