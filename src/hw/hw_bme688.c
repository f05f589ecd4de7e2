/*
 * hw_bme688.c - a simulated Bosch BME688, faithful at the register level (hardware.md 1).
 *
 * Over I2C: a write is (reg, value) pairs, a trailing lone byte sets the read pointer; a read
 * auto-increments from the pointer. Forced mode: writing ctrl_meas with mode 01 starts a
 * measurement that lasts Bosch's estimate (1963 us per oversampling cycle + 477 us x 9 + 1 ms,
 * plus the heater duration when run_gas is set) in simulated time; meas_status_0 shows
 * measuring / gas_measuring meanwhile; at the end the data registers are loaded, new_data_0,
 * gas_valid_r and heat_stab_r are set and the chip returns to sleep (mode bits cleared).
 *
 * The physical values (T, P, H, R_gas) are the model; ADC words are derived by inverting the
 * integer compensation by bisection (T rises with adc_T; P falls with adc_P; H rises with
 * adc_H), so a driver that implements Bosch's integer path recovers the configured values to
 * its resolution. The compensation here is written from the formulas in hardware.md, apart
 * from the driver's, so the two check each other against the worked example.
 *
 * Context: called under the simulator's mutex; never blocks.
 */
#include <math.h>
#include <stdio.h>

#include "hw/hw_int.h"

/* The calibration block of hardware.md's worked example (a plausible real part). */
static const uint8_t calib_8a[23] = {0x2A, 0x67, 0x03, 0x00, 0x68, 0x8D, 0xDE, 0xD6,
				     0x58, 0x00, 0x8A, 0x1B, 0x6A, 0xFF, 0x19, 0x1E,
				     0x00, 0x00, 0x94, 0xFD, 0xB8, 0xF2, 0x1E};
static const uint8_t calib_e1[14] = {0x3F, 0x28, 0x2F, 0x00, 0x2D, 0x14, 0x78,
				     0x9C, 0x08, 0x66, 0x90, 0xE8, 0xE7, 0x12};
static const uint8_t calib_00[5] = {0x28, 0x00, 0x10, 0x00, 0x00};

static int32_t mul32(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a * (uint32_t)b);
}

static int32_t add32(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

static uint16_t le16(const uint8_t *r, unsigned lsb)
{
	return (uint16_t)(r[lsb] | (r[lsb + 1] << 8));
}

void hw_bme688_calib_parse(const uint8_t *r, struct hw_bme688_calib *c)
{
	c->t1 = le16(r, 0xE9);
	c->t2 = (int16_t)le16(r, 0x8A);
	c->t3 = (int8_t)r[0x8C];
	c->p1 = le16(r, 0x8E);
	c->p2 = (int16_t)le16(r, 0x90);
	c->p3 = (int8_t)r[0x92];
	c->p4 = (int16_t)le16(r, 0x94);
	c->p5 = (int16_t)le16(r, 0x96);
	c->p6 = (int8_t)r[0x99];
	c->p7 = (int8_t)r[0x98];
	c->p8 = (int16_t)le16(r, 0x9C);
	c->p9 = (int16_t)le16(r, 0x9E);
	c->p10 = r[0xA0];
	c->h1 = (uint16_t)((r[0xE3] << 4) | (r[0xE2] & 0x0F));
	c->h2 = (uint16_t)((r[0xE1] << 4) | (r[0xE2] >> 4));
	c->h3 = (int8_t)r[0xE4];
	c->h4 = (int8_t)r[0xE5];
	c->h5 = (int8_t)r[0xE6];
	c->h6 = r[0xE7];
	c->h7 = (int8_t)r[0xE8];
	c->gh1 = (int8_t)r[0xED];
	c->gh2 = (int16_t)le16(r, 0xEB);
	c->gh3 = (int8_t)r[0xEE];
	c->res_heat_val = (int8_t)r[0x00];
	c->res_heat_range = (uint8_t)((r[0x02] >> 4) & 3);
}

int32_t hw_bme688_comp_t(const struct hw_bme688_calib *c, uint32_t adc_t, int32_t *out_t_fine)
{
	int64_t v1 = ((int64_t)adc_t >> 3) - ((int64_t)c->t1 << 1);
	int64_t v2 = (v1 * c->t2) >> 11;
	int64_t v3 = ((((v1 >> 1) * (v1 >> 1)) >> 12) * ((int64_t)c->t3 << 4)) >> 14;
	int32_t t_fine = (int32_t)(v2 + v3);
	*out_t_fine = t_fine;
	return (int32_t)(((int64_t)t_fine * 5 + 128) >> 8);
}

uint32_t hw_bme688_comp_p(const struct hw_bme688_calib *c, uint32_t adc_p, int32_t t_fine)
{
	int32_t a = (t_fine >> 1) - 64000;
	int32_t b = (mul32(mul32(a >> 2, a >> 2) >> 11, c->p6)) >> 2;
	b = add32(b, mul32(a, c->p5) * 2);
	b = add32(b >> 2, (int32_t)((uint32_t)c->p4 << 16));
	a = add32(mul32(mul32(a >> 2, a >> 2) >> 13, (int32_t)c->p3 * 32) >> 3,
		  mul32(c->p2, a) >> 1) >>
	    18;
	a = mul32(32768 + a, c->p1) >> 15;
	int32_t p = (int32_t)((uint32_t)(1048576 - (int32_t)adc_p - (b >> 12)) * 3125u);
	if (a == 0)
		return 0;
	if (p >= 0x40000000)
		p = (int32_t)((uint32_t)(p / a) << 1);
	else
		p = (int32_t)((uint32_t)p << 1) / a;
	int32_t c1 = mul32(c->p9, mul32(p >> 3, p >> 3) >> 13) >> 12;
	int32_t c2 = mul32(p >> 2, c->p8) >> 13;
	int32_t c3 = mul32(mul32(mul32(p >> 8, p >> 8), p >> 8), c->p10) >> 17;
	int32_t sum = add32(add32(add32(c1, c2), c3), (int32_t)c->p7 * 128);
	return (uint32_t)add32(p, sum >> 4);
}

uint32_t hw_bme688_comp_h(const struct hw_bme688_calib *c, uint32_t adc_h, int32_t t_fine)
{
	int32_t ts = (int32_t)(((int64_t)t_fine * 5 + 128) >> 8);
	int32_t a = (int32_t)adc_h - (int32_t)c->h1 * 16 - ((ts * c->h3 / 100) >> 1);
	int32_t b =
	    (c->h2 * (ts * c->h4 / 100 + ((ts * (ts * c->h5 / 100)) >> 6) / 100 + 16384)) >> 10;
	int32_t cc = mul32(a, b);
	int32_t d = (((int32_t)c->h6 << 7) + ts * c->h7 / 100) >> 4;
	int32_t e = mul32(cc >> 14, cc >> 14) >> 10;
	int32_t h = mul32(add32(cc, mul32(d, e) >> 1) >> 10, 1000) >> 12;
	if (h > 100000)
		h = 100000;
	if (h < 0)
		h = 0;
	return (uint32_t)h;
}

uint32_t hw_bme688_comp_g(uint32_t adc_g, uint32_t range)
{
	uint32_t v1 = 262144u >> (range & 15);
	int32_t v2 = 4096 + ((int32_t)adc_g - 512) * 3;
	return (10000u * v1) / (uint32_t)v2 * 100u;
}

void hw_bme688_invert(const struct hw_bme688 *d, uint32_t *adc_t, uint32_t *adc_p, uint32_t *adc_h,
		      uint32_t *adc_g, uint32_t *range)
{
	struct hw_bme688_calib c;
	hw_bme688_calib_parse(d->regs, &c);
	int32_t tf;

	/* smallest adc_T whose T_x100 reaches the target */
	int32_t want_t = (int32_t)lround(d->t_c * 100.0);
	uint32_t lo = 0, hi = (1u << 20) - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (hw_bme688_comp_t(&c, mid, &tf) >= want_t)
			hi = mid;
		else
			lo = mid + 1;
	}
	*adc_t = lo;
	hw_bme688_comp_t(&c, lo, &tf);

	/* P falls as adc_P rises: smallest adc_P whose P is at or below the target */
	uint32_t want_p = (uint32_t)lround(d->p_pa);
	lo = 0;
	hi = (1u << 20) - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (hw_bme688_comp_p(&c, mid, tf) <= want_p)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo > 0 &&
	    hw_bme688_comp_p(&c, lo - 1, tf) - want_p < want_p - hw_bme688_comp_p(&c, lo, tf))
		lo--;
	*adc_p = lo;

	uint32_t want_h = (uint32_t)lround(d->h_pct * 1000.0);
	lo = 0;
	hi = 65535;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (hw_bme688_comp_h(&c, mid, tf) >= want_h)
			hi = mid;
		else
			lo = mid + 1;
	}
	*adc_h = lo;

	/* gas: the range whose ADC word lies closest to mid-scale */
	double best = 1e30;
	*adc_g = 512;
	*range = 0;
	for (uint32_t rg = 0; rg < 16; rg++) {
		double a = 512.0 + (1e6 * (double)(262144u >> rg) / d->r_ohm - 4096.0) / 3.0;
		double dist = fabs(a - 512.0);
		if (dist < best) {
			best = dist;
			long v = lround(a);
			*adc_g = (uint32_t)(v < 0 ? 0 : v > 1023 ? 1023 : v);
			*range = rg;
		}
	}
}

void hw_bme688_reset(struct hw_bme688 *d, bool power_on)
{
	if (power_on) {
		memset(d, 0, sizeof(*d));
		memcpy(&d->regs[0x8A], calib_8a, sizeof(calib_8a));
		memcpy(&d->regs[0xE1], calib_e1, sizeof(calib_e1));
		memcpy(&d->regs[0x00], calib_00, sizeof(calib_00));
		d->regs[0xD0] = 0x61;
		d->regs[0xF0] = 0x01;
		d->t_c = 25.0;
		d->p_pa = 101325.0;
		d->h_pct = 40.0;
		d->r_ohm = 100000.0;
		return;
	}
	/* soft reset: control and data registers to 0, NVM (calibration, ids) kept */
	memset(&d->regs[0x1D], 0, 0x76 - 0x1D);
	d->measuring = false;
	d->ptr = 0;
}

static bool is_calib(unsigned reg)
{
	return reg <= 0x04 || (reg >= 0x8A && reg <= 0xA0) || (reg >= 0xE1 && reg <= 0xEE) ||
	       reg == 0xD0 || reg == 0xF0;
}

/* gas_wait code -> milliseconds */
static uint32_t gas_wait_ms(uint8_t code)
{
	static const uint32_t mult[4] = {1, 4, 16, 64};
	return (uint32_t)(code & 0x3F) * mult[code >> 6];
}

static uint32_t osrs_cycles(unsigned osrs)
{
	static const uint32_t c[8] = {0, 1, 2, 4, 8, 16, 16, 16};
	return c[osrs & 7];
}

static bool run_gas(const struct hw_bme688 *d)
{
	return ((d->regs[0x71] >> 4) & 3) == 2;
}

static void trigger(struct hw_bme688 *d, uint64_t now_us)
{
	uint8_t meas = d->regs[0x74];
	uint32_t cycles =
	    osrs_cycles(meas >> 5) + osrs_cycles((meas >> 2) & 7) + osrs_cycles(d->regs[0x72] & 7);
	uint64_t us = (uint64_t)cycles * 1963 + 477 * 9 + 1000;
	if (run_gas(d))
		us += (uint64_t)gas_wait_ms(d->regs[0x64 + (d->regs[0x71] & 0x0F) % 10]) * 1000;
	d->measuring = true;
	d->done_us = now_us + us;
	d->regs[0x1D] = (uint8_t)(0x20 | (run_gas(d) ? 0x40 : 0)); /* new_data cleared */
}

static void complete(struct hw_bme688 *d)
{
	uint32_t t, p, h, g, rg;
	if (d->raw_mode) {
		t = d->raw_t;
		p = d->raw_p;
		h = d->raw_h;
		g = d->raw_g;
		rg = d->raw_range;
	} else {
		hw_bme688_invert(d, &t, &p, &h, &g, &rg);
	}
	d->adc_t = t;
	d->adc_p = p;
	d->adc_h = h;
	d->adc_g = g;
	d->gas_range = rg;
	uint8_t *r = d->regs;
	bool gas = run_gas(d);
	unsigned sp = d->regs[0x71] & 0x0F;
	bool heat = gas && !d->heater_fault && sp < 10 && r[0x5A + sp] && r[0x64 + sp];
	r[0x1D] = 0x80;
	r[0x1E] = 0;
	r[0x1F] = (uint8_t)(p >> 12);
	r[0x20] = (uint8_t)(p >> 4);
	r[0x21] = (uint8_t)((p & 0xF) << 4);
	r[0x22] = (uint8_t)(t >> 12);
	r[0x23] = (uint8_t)(t >> 4);
	r[0x24] = (uint8_t)((t & 0xF) << 4);
	r[0x25] = (uint8_t)(h >> 8);
	r[0x26] = (uint8_t)h;
	r[0x2C] = (uint8_t)(g >> 2);
	r[0x2D] = (uint8_t)(((g & 3) << 6) | (gas ? 0x20 : 0) | (heat ? 0x10 : 0) | (rg & 0x0F));
	r[0x74] &= (uint8_t)~3; /* back to sleep */
	d->measuring = false;
}

enum hw_xfer_result hw_bme688_xfer(struct hw_bme688 *d, uint64_t now_us, const uint8_t *w,
				   size_t wlen, uint8_t *r, size_t rlen)
{
	if (d->measuring && now_us >= d->done_us)
		complete(d);
	size_t i = 0;
	for (; i + 1 < wlen; i += 2) {
		uint8_t reg = w[i], v = w[i + 1];
		if (reg == 0xE0) {
			if (v == 0xB6)
				hw_bme688_reset(d, false);
			continue;
		}
		if (is_calib(reg) || (reg >= 0x1D && reg <= 0x4F))
			continue; /* read-only; 0x73 (SPI page) lands below and is harmless */
		d->regs[reg] = v;
		if (reg == 0x74 && (v & 3) == 1)
			trigger(d, now_us);
	}
	if (i < wlen)
		d->ptr = w[i];
	for (size_t k = 0; k < rlen; k++)
		r[k] = d->regs[(uint8_t)(d->ptr + k)];
	if (rlen)
		d->ptr = (uint8_t)(d->ptr + rlen);
	return HW_XFER_OK;
}

static k32_status_t range_err(struct k32_err *err, const char *key, double v, double lo, double hi)
{
	return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
			   "bme688 %s = %g is outside the sensor's range %g..%g", key, v, lo, hi);
}

k32_status_t hw_bme688_set(struct hw_bme688 *d, const char *key, double v, struct k32_err *err)
{
	if (!strcmp(key, "temperature_c")) {
		if (!(v >= -40 && v <= 85))
			return range_err(err, key, v, -40, 85);
		d->t_c = v;
	} else if (!strcmp(key, "pressure_pa")) {
		if (!(v >= 30000 && v <= 110000))
			return range_err(err, key, v, 30000, 110000);
		d->p_pa = v;
	} else if (!strcmp(key, "humidity_pct")) {
		if (!(v >= 0 && v <= 100))
			return range_err(err, key, v, 0, 100);
		d->h_pct = v;
	} else if (!strcmp(key, "gas_ohm")) {
		if (!(v >= 2000 && v <= 1e8))
			return range_err(err, key, v, 2000, 1e8);
		d->r_ohm = v;
	} else if (!strcmp(key, "heater_fault")) {
		d->heater_fault = v != 0;
	} else {
		return K32_ERR_NOT_FOUND;
	}
	d->raw_mode = false;
	return K32_OK;
}

k32_status_t hw_bme688_get(struct hw_bme688 *d, const char *key, double *out)
{
	struct {
		const char *k;
		double v;
	} t[] = {
	    {"temperature_c", d->t_c},	 {"pressure_pa", d->p_pa},
	    {"humidity_pct", d->h_pct},	 {"gas_ohm", d->r_ohm},
	    {"adc_t", d->adc_t},	 {"adc_p", d->adc_p},
	    {"adc_h", d->adc_h},	 {"adc_g", d->adc_g},
	    {"gas_range", d->gas_range}, {"heater_fault", d->heater_fault},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcmp(t[i].k, key)) {
			*out = t[i].v;
			return K32_OK;
		}
	}
	return K32_ERR_NOT_FOUND;
}
