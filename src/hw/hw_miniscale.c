/*
 * hw_miniscale.c - a simulated M5Stack Unit Mini Scales (HX711 behind an STM32F030,
 * firmware v4 register set; hardware.md section 2).
 *
 * "Value registers": the first written byte selects a value; further written bytes are its
 * new content; a read returns the selected value from its first byte (extra bytes read 0).
 * The HX711 samples every 100 ms of simulated time: raw = clamp(Z + L*S + noise, 0, 2^24-1);
 * w = (raw - offset) / gap (negated with polarity 1); optionally four first-order low-pass
 * stages standing in for the unit's 4th-order 1 Hz filter; then a trimmed mean of the last N
 * values (min and max dropped) when N > 0, else an EMA. Samples are computed lazily when the
 * unit is accessed, at most 64 per access (enough to settle every filter), so simulated hours
 * cost nothing.
 *
 * Context: called under the simulator's mutex; never blocks.
 */
#include <math.h>
#include <stdio.h>

#include "hw/hw_int.h"

#define SAMPLE_US   100000u
#define MAX_CATCHUP 64u
#define LP_ALPHA    0.4665f /* 1 - exp(-2*pi*1 Hz / 10 Hz) */

void hw_miniscale_reset(struct hw_miniscale *d)
{
	memset(d, 0, sizeof(*d));
	d->zero = 8400000.0;
	d->sens = 400.0;
	d->gap = 400.0f;
	d->filter_on = 1;
	d->window = 10;
	d->alpha = 10;
	d->i2c_addr = 0x26;
	d->rng = 0x2545F491u;
}

static double gauss(struct hw_miniscale *d)
{
	/* sum of 12 uniforms minus 6: approximately N(0, 1), deterministic */
	double s = 0;
	for (int i = 0; i < 12; i++) {
		d->rng = d->rng * 1664525u + 1013904223u;
		s += (double)(d->rng >> 8) / 16777216.0;
	}
	return s - 6.0;
}

static void sample(struct hw_miniscale *d)
{
	double raw = d->zero + d->load_g * d->sens + (d->noise > 0 ? d->noise * gauss(d) : 0);
	if (raw < 0)
		raw = 0;
	if (raw > 16777215.0)
		raw = 16777215.0;
	d->raw = (int32_t)lround(raw);
	if (!d->have_offset) {
		d->offset = d->raw;
		d->have_offset = true;
	}
	float gap = fabsf(d->gap - 1.0f) <= 0.05f ? 1.0f : d->gap;
	if (gap == 0.0f)
		gap = 1.0f;
	float w = (float)(d->raw - d->offset) / gap;
	if (d->polarity)
		w = -w;
	if (d->filter_on) {
		for (int i = 0; i < 4; i++) {
			d->lp[i] += LP_ALPHA * (w - d->lp[i]);
			w = d->lp[i];
		}
	}
	if (d->window > 0) {
		uint32_t n = d->window > 50 ? 50 : d->window;
		d->hist[d->hist_pos % n] = w;
		d->hist_pos = (d->hist_pos + 1) % n;
		if (d->nhist < n)
			d->nhist++;
		float sum = 0, mn = d->hist[0], mx = d->hist[0];
		for (uint32_t i = 0; i < d->nhist; i++) {
			sum += d->hist[i];
			mn = fminf(mn, d->hist[i]);
			mx = fmaxf(mx, d->hist[i]);
		}
		if (d->nhist > 2)
			d->weight = (sum - mn - mx) / (float)(d->nhist - 2);
		else
			d->weight = sum / (float)d->nhist;
	} else {
		d->ema += ((float)d->alpha / 100.0f) * (w - d->ema);
		d->weight = d->alpha ? d->ema : w;
	}
}

static void advance(struct hw_miniscale *d, uint64_t now_us)
{
	if (!d->have_offset) {
		sample(d);
		d->next_sample_us = now_us + SAMPLE_US;
		return;
	}
	uint32_t n = 0;
	while (now_us >= d->next_sample_us && n < MAX_CATCHUP) {
		sample(d);
		d->next_sample_us += SAMPLE_US;
		n++;
	}
	if (now_us >= d->next_sample_us) /* skipped samples would not change a settled value */
		d->next_sample_us = now_us + SAMPLE_US;
}

static void filters_reset(struct hw_miniscale *d)
{
	memset(d->lp, 0, sizeof(d->lp));
	d->nhist = 0;
	d->hist_pos = 0;
	d->ema = 0;
}

static void tare(struct hw_miniscale *d)
{
	d->offset = d->raw;
	filters_reset(d);
	d->weight = 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static size_t value(struct hw_miniscale *d, uint8_t sel, uint8_t *v)
{
	uint32_t u;
	switch (sel) {
	case 0x00:
		put32(v, (uint32_t)d->raw);
		return 4;
	case 0x10:
		memcpy(&u, &d->weight, 4);
		put32(v, u);
		return 4;
	case 0x20:
		v[0] = d->button ? 0 : 1;
		return 1;
	case 0x30:
		memcpy(v, d->rgb, 3);
		return 3;
	case 0x40:
		memcpy(&u, &d->gap, 4);
		put32(v, u);
		return 4;
	case 0x60:
		put32(v, (uint32_t)(int32_t)(d->weight * 100.0f));
		return 4;
	case 0x70:
		memset(v, 0, 16);
		snprintf((char *)v, 16, "%.2f", (double)d->weight);
		return 16;
	case 0x80:
		v[0] = d->filter_on;
		return 1;
	case 0x81:
		v[0] = d->window;
		return 1;
	case 0x82:
		v[0] = d->alpha;
		return 1;
	case 0x90:
		v[0] = d->polarity;
		return 1;
	case 0xFE:
		v[0] = 4;
		return 1;
	case 0xFF:
		v[0] = d->i2c_addr;
		return 1;
	default:
		return 0;
	}
}

/* The block base that a register number belongs to (0x00..0x0F all select 0x00...). */
static uint8_t base_of(uint8_t reg)
{
	if (reg >= 0xFD)
		return reg;
	if (reg >= 0x80 && reg <= 0x82)
		return reg;
	return (uint8_t)(reg & 0xF0);
}

static enum hw_xfer_result write_value(struct hw_miniscale *d, uint8_t sel, const uint8_t *v,
				       size_t n)
{
	float f;
	uint32_t u;
	switch (sel) {
	case 0x30:
		memcpy(d->rgb, v, n < 3 ? n : 3);
		return HW_XFER_OK;
	case 0x40:
		if (n < 4)
			return HW_XFER_OK; /* the firmware waits for all four bytes */
		u = (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 |
		    (uint32_t)v[3] << 24;
		memcpy(&f, &u, 4);
		if (isfinite(f) && f != 0.0f)
			d->gap = f;
		return HW_XFER_OK;
	case 0x50:
		if (v[0] == 1)
			tare(d);
		return HW_XFER_OK;
	case 0x80:
		d->filter_on = v[0] ? 1 : 0;
		filters_reset(d);
		return HW_XFER_OK;
	case 0x81:
		if (v[0] > 50)
			return HW_XFER_NACK_DATA;
		d->window = v[0];
		filters_reset(d);
		return HW_XFER_OK;
	case 0x82:
		if (v[0] > 99)
			return HW_XFER_NACK_DATA;
		d->alpha = v[0];
		filters_reset(d);
		return HW_XFER_OK;
	case 0x90:
		d->polarity = v[0] ? 1 : 0;
		return HW_XFER_OK;
	case 0xFF:
		if (v[0] < 1 || v[0] > 127)
			return HW_XFER_NACK_DATA;
		d->i2c_addr = v[0];
		return HW_XFER_OK;
	default: /* read-only values and 0xFD (bootloader): refused */
		return HW_XFER_NACK_DATA;
	}
}

enum hw_xfer_result hw_miniscale_xfer(struct hw_miniscale *d, uint64_t now_us, const uint8_t *w,
				      size_t wlen, uint8_t *r, size_t rlen)
{
	advance(d, now_us);
	if (wlen) {
		d->sel = base_of(w[0]);
		if (wlen > 1) {
			enum hw_xfer_result res = write_value(d, d->sel, w + 1, wlen - 1);
			if (res != HW_XFER_OK)
				return res;
		}
	}
	if (rlen) {
		uint8_t v[16];
		size_t n = value(d, d->sel, v);
		for (size_t i = 0; i < rlen; i++)
			r[i] = i < n ? v[i] : 0;
	}
	return HW_XFER_OK;
}

k32_status_t hw_miniscale_set(struct hw_miniscale *d, uint64_t now_us, const char *key, double v,
			      struct k32_err *err)
{
	advance(d, now_us);
	if (!strcmp(key, "weight_g")) {
		if (!(v >= -5000 && v <= 50000))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "miniscale weight_g = %g outside -5000..50000 g", v);
		d->load_g = v;
	} else if (!strcmp(key, "zero_point")) {
		if (!(v >= 0 && v <= 16777215))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "miniscale zero_point = %g outside 0..16777215", v);
		d->zero = v;
	} else if (!strcmp(key, "sensitivity")) {
		if (!(v > 0 && v <= 100000))
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, "hw",
			    "miniscale sensitivity = %g outside (0, 100000] counts/g", v);
		d->sens = v;
	} else if (!strcmp(key, "noise")) {
		if (!(v >= 0 && v <= 100000))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "miniscale noise = %g outside 0..100000 counts", v);
		d->noise = v;
	} else if (!strcmp(key, "button")) {
		bool pressed = v != 0;
		if (pressed && !d->button)
			tare(d); /* the unit tares on its button */
		d->button = pressed;
	} else {
		return K32_ERR_NOT_FOUND;
	}
	return K32_OK;
}

k32_status_t hw_miniscale_get(struct hw_miniscale *d, uint64_t now_us, const char *key, double *out)
{
	advance(d, now_us);
	if (!strcmp(key, "weight_g"))
		*out = d->load_g;
	else if (!strcmp(key, "zero_point"))
		*out = d->zero;
	else if (!strcmp(key, "sensitivity"))
		*out = d->sens;
	else if (!strcmp(key, "noise"))
		*out = d->noise;
	else if (!strcmp(key, "button"))
		*out = d->button;
	else if (!strcmp(key, "raw_adc"))
		*out = d->raw;
	else if (!strcmp(key, "offset"))
		*out = d->offset;
	else if (!strcmp(key, "gap"))
		*out = d->gap;
	else if (!strcmp(key, "filtered_g"))
		*out = d->weight;
	else
		return K32_ERR_NOT_FOUND;
	return K32_OK;
}
