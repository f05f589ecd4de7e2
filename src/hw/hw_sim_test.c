/*
 * hw_sim_test.c - the simulated devices at the register level, against hardware.md's worked
 * examples: BME688 (calibration, integer compensation, forced mode timing, raw mode bytes,
 * inversion of physical values), Mini Scales (value registers, tare, gap, filters),
 * MFRC522 (CRC_A check values, card state machine frames for 4- and 7-byte UIDs, Transceive
 * through the registers, timer, FIFO).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "hw/hw_int.h"

static uint64_t vclock;
static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

static const struct hw_sim_bus_config buses[] = {{"n1", 0, true, 0x70}};
static const struct hw_sim_dev_config devs[] = {
    {"env", "n1", 0, 2, 0x77, HW_MODEL_BME688},
    {"scale", "n1", 0, 1, 0x26, HW_MODEL_MINISCALE},
    {"tag", "n1", 0, 0, 0x28, HW_MODEL_MFRC522},
};

struct fix {
	struct hw_sim *sim;
	struct hw_bus bus;
	struct k32_err err;
};

static int setup(void **state)
{
	static struct fix f;
	memset(&f, 0, sizeof(f));
	vclock = 1000000;
	struct hw_sim_config cfg = {buses, 1, devs, 3, vnow, NULL};
	assert_int_equal(hw_sim_new(k32_default_allocator(), &cfg, &f.sim, &f.err), K32_OK);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(f.sim, "n1", 0, &ops, &ctx), K32_OK);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	assert_int_equal(hw_bus_init(&f.bus, 0, ops, ctx, &bc, &f.err), K32_OK);
	assert_int_equal(hw_bus_mux_reset(&f.bus, &f.err), K32_OK);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	hw_bus_fini(&f->bus);
	hw_sim_free(f->sim);
	return 0;
}

/* ---- BME688 ---- */
static void bme_w(struct fix *f, const uint8_t *w, size_t n)
{
	assert_int_equal(hw_bus_xfer(&f->bus, 2, 0x77, w, n, NULL, 0, &f->err), K32_OK);
}

static void bme_r(struct fix *f, uint8_t reg, uint8_t *r, size_t n)
{
	assert_int_equal(hw_bus_xfer(&f->bus, 2, 0x77, &reg, 1, r, n, &f->err), K32_OK);
}

static void test_bme688_calib_and_comp(void **state)
{
	struct fix *f = *state;
	uint8_t regs[256] = {0};
	bme_r(f, 0x8A, &regs[0x8A], 23);
	bme_r(f, 0xE1, &regs[0xE1], 14);
	bme_r(f, 0x00, &regs[0x00], 5);
	bme_r(f, 0xD0, &regs[0xD0], 1);
	bme_r(f, 0xF0, &regs[0xF0], 1);
	assert_int_equal(regs[0xD0], 0x61);
	assert_int_equal(regs[0xF0], 0x01);
	struct hw_bme688_calib c;
	hw_bme688_calib_parse(regs, &c);
	assert_int_equal(c.t1, 26120);
	assert_int_equal(c.t2, 26410);
	assert_int_equal(c.t3, 3);
	assert_int_equal(c.p1, 36200);
	assert_int_equal(c.p2, -10530);
	assert_int_equal(c.p3, 88);
	assert_int_equal(c.p4, 7050);
	assert_int_equal(c.p5, -150);
	assert_int_equal(c.p6, 30);
	assert_int_equal(c.p7, 25);
	assert_int_equal(c.p8, -620);
	assert_int_equal(c.p9, -3400);
	assert_int_equal(c.p10, 30);
	assert_int_equal(c.h1, 760);
	assert_int_equal(c.h2, 1010);
	assert_int_equal(c.h3, 0);
	assert_int_equal(c.h4, 45);
	assert_int_equal(c.h5, 20);
	assert_int_equal(c.h6, 120);
	assert_int_equal(c.h7, -100);
	assert_int_equal(c.gh1, -25);
	assert_int_equal(c.gh2, -6000);
	assert_int_equal(c.gh3, 18);
	assert_int_equal(c.res_heat_val, 40);
	assert_int_equal(c.res_heat_range, 1);

	static const struct {
		uint32_t t, p, h, g, rg;
		int32_t t_fine, tx100;
		uint32_t pa, hx1000, gas;
	} cases[] = {
	    {493000, 355000, 20500, 600, 9, 121039, 2364, 99987, 41955, 117400},
	    {455000, 372000, 26000, 300, 4, 59773, 1167, 95121, 75760, 4735200},
	};
	for (size_t i = 0; i < 2; i++) {
		int32_t tf;
		assert_int_equal(hw_bme688_comp_t(&c, cases[i].t, &tf), cases[i].tx100);
		assert_int_equal(tf, cases[i].t_fine);
		assert_int_equal(hw_bme688_comp_p(&c, cases[i].p, tf), cases[i].pa);
		assert_int_equal(hw_bme688_comp_h(&c, cases[i].h, tf), cases[i].hx1000);
		assert_int_equal(hw_bme688_comp_g(cases[i].g, cases[i].rg), cases[i].gas);
	}
}

static void test_bme688_forced_raw(void **state)
{
	struct fix *f = *state;
	static const uint8_t want[2][17] = {
	    {0x80, 0x00, 0x56, 0xAB, 0x80, 0x78, 0x5C, 0x80, 0x50, 0x14, 0x00, 0x00, 0x00, 0x00,
	     0x00, 0x96, 0x39},
	    {0x80, 0x00, 0x5A, 0xD2, 0x00, 0x6F, 0x15, 0x80, 0x65, 0x90, 0x00, 0x00, 0x00, 0x00,
	     0x00, 0x4B, 0x34},
	};
	static const uint32_t raw[2][5] = {{493000, 355000, 20500, 600, 9},
					   {455000, 372000, 26000, 300, 4}};
	/* the worked example's configuration writes */
	static const uint8_t cfg1[] = {0x72, 0x01, 0x74, 0x4C, 0x75, 0x00};
	static const uint8_t cfg2[] = {0x5A, 0x79, 0x64, 0x65};
	static const uint8_t cfg3[] = {0x70, 0x00, 0x71, 0x20};
	static const uint8_t spi_page[] = {0x73, 0x00};
	bme_w(f, cfg1, sizeof(cfg1));
	bme_w(f, cfg2, sizeof(cfg2));
	bme_w(f, cfg3, sizeof(cfg3));
	bme_w(f, spi_page, sizeof(spi_page));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(hw_sim_bme688_set_raw(f->sim, "env", raw[i][0], raw[i][1],
						       raw[i][2], raw[i][3], raw[i][4], &f->err),
				 K32_OK);
		static const uint8_t trig[] = {0x74, 0x4D};
		bme_w(f, trig, 2);
		uint8_t st;
		bme_r(f, 0x1D, &st, 1);
		assert_int_equal(st, 0x60); /* measuring + gas_measuring, new_data cleared */
		vclock += 19034 + 148000 - 1;
		bme_r(f, 0x1D, &st, 1);
		assert_int_equal(st & 0x80, 0);
		vclock += 1;
		uint8_t r[17];
		bme_r(f, 0x1D, r, 17);
		assert_memory_equal(r, want[i], 17);
		uint8_t meas;
		bme_r(f, 0x74, &meas, 1);
		assert_int_equal(meas, 0x4C); /* back to sleep */
	}
	/* without run_gas: gas_valid_r and heat_stab_r clear, and no heater time */
	static const uint8_t nogas[] = {0x71, 0x00, 0x74, 0x4D};
	bme_w(f, nogas, 4);
	vclock += 19034;
	uint8_t r[17];
	bme_r(f, 0x1D, r, 17);
	assert_int_equal(r[0], 0x80);
	assert_int_equal(r[16] & 0x30, 0);
	/* heater fault: gas valid, heat not stable */
	assert_int_equal(hw_sim_set_value(f->sim, "env", "heater_fault", 1, &f->err), K32_OK);
	bme_w(f, cfg3, 4);
	static const uint8_t trig[] = {0x74, 0x4D};
	bme_w(f, trig, 2);
	vclock += 200000;
	bme_r(f, 0x1D, r, 17);
	assert_int_equal(r[16] & 0x30, 0x20);
	/* soft reset keeps calibration, clears control */
	static const uint8_t reset[] = {0xE0, 0xB6};
	bme_w(f, reset, 2);
	uint8_t v[2];
	bme_r(f, 0x74, v, 1);
	assert_int_equal(v[0], 0);
	bme_r(f, 0x8A, v, 2);
	assert_int_equal(v[0], 0x2A);
	assert_int_equal(v[1], 0x67);
}

static void test_bme688_inversion(void **state)
{
	struct fix *f = *state;
	static const struct {
		double t, p, h, r;
	} cases[] = {
	    {23.64, 99987, 41.955, 117400}, {11.67, 95121, 75.76, 4735200},
	    {-10.0, 80000, 5.0, 20000},	    {40.5, 105000, 95.0, 50000000},
	    {0.0, 101325, 50.0, 3000},
	};
	uint8_t regs[256] = {0};
	bme_r(f, 0x8A, &regs[0x8A], 23);
	bme_r(f, 0xE1, &regs[0xE1], 14);
	bme_r(f, 0x00, &regs[0x00], 5);
	struct hw_bme688_calib c;
	hw_bme688_calib_parse(regs, &c);
	static const uint8_t cfg[] = {0x72, 0x01, 0x74, 0x4C, 0x5A, 0x79, 0x64, 0x65, 0x71, 0x20};
	bme_w(f, cfg, sizeof(cfg));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(
		    hw_sim_set_value(f->sim, "env", "temperature_c", cases[i].t, &f->err), K32_OK);
		assert_int_equal(
		    hw_sim_set_value(f->sim, "env", "pressure_pa", cases[i].p, &f->err), K32_OK);
		assert_int_equal(
		    hw_sim_set_value(f->sim, "env", "humidity_pct", cases[i].h, &f->err), K32_OK);
		assert_int_equal(hw_sim_set_value(f->sim, "env", "gas_ohm", cases[i].r, &f->err),
				 K32_OK);
		static const uint8_t trig[] = {0x74, 0x4D};
		bme_w(f, trig, 2);
		vclock += 200000;
		uint8_t r[17];
		bme_r(f, 0x1D, r, 17);
		uint32_t adc_p = (uint32_t)(r[2] << 12 | r[3] << 4 | r[4] >> 4);
		uint32_t adc_t = (uint32_t)(r[5] << 12 | r[6] << 4 | r[7] >> 4);
		uint32_t adc_h = (uint32_t)(r[8] << 8 | r[9]);
		uint32_t adc_g = (uint32_t)(r[15] << 2 | r[16] >> 6);
		int32_t tf;
		int32_t t = hw_bme688_comp_t(&c, adc_t, &tf);
		assert_int_equal(t, (int32_t)lround(cases[i].t * 100));
		uint32_t p = hw_bme688_comp_p(&c, adc_p, tf);
		assert_true(fabs((double)p - cases[i].p) <= 2.0);
		uint32_t h = hw_bme688_comp_h(&c, adc_h, tf);
		assert_true(fabs((double)h - cases[i].h * 1000) <= 30.0);
		double g = hw_bme688_comp_g(adc_g, r[16] & 15);
		assert_true(fabs(g - cases[i].r) / cases[i].r < 0.01);
	}
	/* out of range values are refused with a message */
	assert_int_equal(hw_sim_set_value(f->sim, "env", "temperature_c", 200, &f->err),
			 K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(f->err.msg, "temperature_c"));
	assert_int_equal(hw_sim_set_value(f->sim, "env", "nonsense", 1, &f->err),
			 K32_ERR_NOT_FOUND);
	assert_int_equal(hw_sim_set_value(f->sim, "nobody", "present", 1, &f->err),
			 K32_ERR_NOT_FOUND);
	assert_int_equal(hw_sim_bme688_set_raw(f->sim, "scale", 1, 1, 1, 1, 1, &f->err),
			 K32_ERR_WRONG_TYPE);
	assert_int_equal(hw_sim_bme688_set_raw(f->sim, "env", 1u << 20, 1, 1, 1, 1, &f->err),
			 K32_ERR_INVALID_ARGS);
}

/* ---- Mini Scales ---- */
static void sc_w(struct fix *f, const uint8_t *w, size_t n, k32_status_t want)
{
	assert_int_equal(hw_bus_xfer(&f->bus, 1, 0x26, w, n, NULL, 0, &f->err), want);
}

static void sc_r(struct fix *f, uint8_t reg, uint8_t *r, size_t n)
{
	assert_int_equal(hw_bus_xfer(&f->bus, 1, 0x26, &reg, 1, r, n, &f->err), K32_OK);
}

static void test_miniscale_example(void **state)
{
	struct fix *f = *state;
	uint8_t r[16];
	sc_r(f, 0x00, r, 4); /* power-up sample: offset := 8 400 000 */
	static const uint8_t off[][2] = {{0x80, 0}, {0x81, 0}, {0x82, 0}};
	for (int i = 0; i < 3; i++)
		sc_w(f, off[i], 2, K32_OK);
	assert_int_equal(hw_sim_set_value(f->sim, "scale", "weight_g", 250, &f->err), K32_OK);
	vclock += 200000;
	static const uint8_t raw[] = {0x20, 0xB3, 0x81, 0x00};
	static const uint8_t wf[] = {0x00, 0x00, 0x7A, 0x43};
	static const uint8_t w100[] = {0xA8, 0x61, 0x00, 0x00};
	static const uint8_t gap[] = {0x00, 0x00, 0xC8, 0x43};
	sc_r(f, 0x00, r, 4);
	assert_memory_equal(r, raw, 4);
	sc_r(f, 0x02, r, 4); /* any offset in the block gives the value from byte 0 */
	assert_memory_equal(r, raw, 4);
	sc_r(f, 0x10, r, 4);
	assert_memory_equal(r, wf, 4);
	sc_r(f, 0x60, r, 4);
	assert_memory_equal(r, w100, 4);
	sc_r(f, 0x70, r, 16);
	assert_string_equal((char *)r, "250.00");
	sc_r(f, 0x40, r, 4);
	assert_memory_equal(r, gap, 4);
	sc_r(f, 0xFE, r, 1);
	assert_int_equal(r[0], 4);
	sc_r(f, 0x20, r, 1);
	assert_int_equal(r[0], 1);
	/* tare: the load becomes zero */
	static const uint8_t tare[] = {0x50, 1};
	sc_w(f, tare, 2, K32_OK);
	vclock += 100000;
	sc_r(f, 0x60, r, 4);
	assert_int_equal(r[0] | r[1] << 8, 0);
	/* gap 800: 100 g more reads 50 g */
	static const uint8_t gap800[] = {0x40, 0x00, 0x00, 0x48, 0x44};
	sc_w(f, gap800, 5, K32_OK);
	assert_int_equal(hw_sim_set_value(f->sim, "scale", "weight_g", 350, &f->err), K32_OK);
	vclock += 100000;
	sc_r(f, 0x60, r, 4);
	assert_int_equal(r[0] | r[1] << 8, 5000);
	/* refused writes: bootloader, read-only value, out-of-range window */
	static const uint8_t boot[] = {0xFD, 1}, ro[] = {0x00, 1}, win[] = {0x81, 51};
	sc_w(f, boot, 2, K32_ERR_IO);
	sc_w(f, ro, 2, K32_ERR_IO);
	sc_w(f, win, 2, K32_ERR_IO);
}

static void test_miniscale_filters(void **state)
{
	struct fix *f = *state;
	uint8_t r[4];
	sc_r(f, 0x10, r, 4); /* power-up with default filters */
	assert_int_equal(hw_sim_set_value(f->sim, "scale", "weight_g", 100, &f->err), K32_OK);
	vclock += 300000;
	sc_r(f, 0x10, r, 4);
	float w;
	memcpy(&w, r, 4);
	assert_true(w > 0.0f && w < 99.0f); /* still settling */
	vclock += 5000000;
	sc_r(f, 0x10, r, 4);
	memcpy(&w, r, 4);
	assert_true(fabsf(w - 100.0f) < 0.05f);
	/* the button tares */
	assert_int_equal(hw_sim_set_value(f->sim, "scale", "button", 1, &f->err), K32_OK);
	sc_r(f, 0x20, r, 1);
	assert_int_equal(r[0], 0);
	vclock += 5000000;
	sc_r(f, 0x10, r, 4);
	memcpy(&w, r, 4);
	assert_true(fabsf(w) < 0.05f);
	double v;
	assert_int_equal(hw_sim_get_value(f->sim, "scale", "raw_adc", &v, &f->err), K32_OK);
	assert_true(fabs(v - 8440000) < 1);
}

/* ---- MFRC522 ---- */
static void test_crc_a(void **state)
{
	(void)state;
	static const struct {
		uint8_t in[2];
		size_t n;
		uint8_t lo, hi;
	} cases[] = {{{0x08}, 1, 0xB6, 0xDD},
		     {{0x50, 0x00}, 2, 0x57, 0xCD},
		     {{0x04}, 1, 0xDA, 0x17},
		     {{0x00}, 1, 0xFE, 0x51}};
	for (size_t i = 0; i < 4; i++) {
		uint16_t c = hw_crc_a(cases[i].in, cases[i].n, 0x6363);
		assert_int_equal(c & 0xFF, cases[i].lo);
		assert_int_equal(c >> 8, cases[i].hi);
	}
}

static void test_card_frames(void **state)
{
	(void)state;
	struct hw_mfrc522 d;
	hw_mfrc522_reset(&d);
	uint8_t out[16];
	static const uint8_t wupa = 0x52, reqa = 0x26;
	assert_int_equal(hw_card_frame(&d, &wupa, 1, 7, out, sizeof(out)), 0); /* no card */

	/* 4-byte UID 5A 3C 91 0E */
	d.card = HW_CARD_IDLE;
	memcpy(d.uid, "\x5A\x3C\x91\x0E", 4);
	d.uid_len = 4;
	d.atqa = 0x0004;
	d.sak = 0x08;
	assert_int_equal(hw_card_frame(&d, &wupa, 1, 7, out, sizeof(out)), 2);
	assert_int_equal(out[0], 0x04);
	assert_int_equal(out[1], 0x00);
	static const uint8_t ac1[] = {0x93, 0x20};
	assert_int_equal(hw_card_frame(&d, ac1, 2, 0, out, sizeof(out)), 5);
	assert_memory_equal(out, "\x5A\x3C\x91\x0E\xF9", 5);
	static const uint8_t sel1[] = {0x93, 0x70, 0x5A, 0x3C, 0x91, 0x0E, 0xF9, 0x6B, 0x18};
	assert_int_equal(hw_card_frame(&d, sel1, 9, 0, out, sizeof(out)), 3);
	assert_memory_equal(out, "\x08\xB6\xDD", 3);
	assert_int_equal(d.card, HW_CARD_ACTIVE);
	static const uint8_t hlta[] = {0x50, 0x00, 0x57, 0xCD};
	assert_int_equal(hw_card_frame(&d, hlta, 4, 0, out, sizeof(out)), 0);
	assert_int_equal(d.card, HW_CARD_HALT);
	assert_int_equal(hw_card_frame(&d, &reqa, 1, 7, out, sizeof(out)), 0); /* halted */
	assert_int_equal(hw_card_frame(&d, &wupa, 1, 7, out, sizeof(out)), 2);
	/* a bad select drops a woken card back to HALT */
	static const uint8_t badsel[] = {0x93, 0x70, 0x5A, 0x3C, 0x91, 0x0F, 0xF9, 0x6B, 0x18};
	assert_int_equal(hw_card_frame(&d, badsel, 9, 0, out, sizeof(out)), 0);
	assert_int_equal(d.card, HW_CARD_HALT);

	/* 7-byte UID 04 5B 2C 7A 91 3E 80 */
	hw_mfrc522_reset(&d);
	d.card = HW_CARD_IDLE;
	memcpy(d.uid, "\x04\x5B\x2C\x7A\x91\x3E\x80", 7);
	d.uid_len = 7;
	d.atqa = 0x0044;
	d.sak = 0x00;
	assert_int_equal(hw_card_frame(&d, &reqa, 1, 7, out, sizeof(out)), 2);
	assert_int_equal(out[0], 0x44);
	assert_int_equal(hw_card_frame(&d, ac1, 2, 0, out, sizeof(out)), 5);
	assert_memory_equal(out, "\x88\x04\x5B\x2C\xFB", 5);
	static const uint8_t s1[] = {0x93, 0x70, 0x88, 0x04, 0x5B, 0x2C, 0xFB, 0x8F, 0x12};
	assert_int_equal(hw_card_frame(&d, s1, 9, 0, out, sizeof(out)), 3);
	assert_memory_equal(out, "\x04\xDA\x17", 3);
	static const uint8_t ac2[] = {0x95, 0x20};
	assert_int_equal(hw_card_frame(&d, ac2, 2, 0, out, sizeof(out)), 5);
	assert_memory_equal(out, "\x7A\x91\x3E\x80\x55", 5);
	static const uint8_t s2[] = {0x95, 0x70, 0x7A, 0x91, 0x3E, 0x80, 0x55, 0x2F, 0x35};
	assert_int_equal(hw_card_frame(&d, s2, 9, 0, out, sizeof(out)), 3);
	assert_memory_equal(out, "\x00\xFE\x51", 3);
	assert_int_equal(d.card, HW_CARD_ACTIVE);
	/* anything else in ACTIVE: silent, back to IDLE */
	assert_int_equal(hw_card_frame(&d, ac1, 2, 0, out, sizeof(out)), 0);
	assert_int_equal(d.card, HW_CARD_IDLE);
}

static void rf_w(struct fix *f, uint8_t reg, uint8_t v)
{
	uint8_t w[2] = {reg, v};
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, w, 2, NULL, 0, &f->err), K32_OK);
}

static uint8_t rf_r(struct fix *f, uint8_t reg)
{
	uint8_t v;
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, &reg, 1, &v, 1, &f->err), K32_OK);
	return v;
}

/* One Transceive as a driver does it; returns the answer length or -1 on timeout. */
static int rf_transceive(struct fix *f, const uint8_t *frame, size_t n, uint8_t bits, uint8_t *ans)
{
	rf_w(f, 0x01, 0x00);
	rf_w(f, 0x04, 0x7F);
	rf_w(f, 0x0A, 0x80);
	uint8_t w[17] = {0x09};
	memcpy(w + 1, frame, n);
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, w, n + 1, NULL, 0, &f->err), K32_OK);
	rf_w(f, 0x0D, bits);
	rf_w(f, 0x01, 0x0C);
	rf_w(f, 0x0D, (uint8_t)(0x80 | bits));
	for (int i = 0; i < 10; i++) {
		uint8_t irq = rf_r(f, 0x04);
		if (irq & 0x30) {
			uint8_t len = rf_r(f, 0x0A);
			uint8_t reg = 0x09;
			assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, &reg, 1, ans, len, &f->err),
					 K32_OK);
			return len;
		}
		if (irq & 0x01)
			return -1;
		vclock += 5000;
	}
	return -2;
}

static void test_rfid_registers(void **state)
{
	struct fix *f = *state;
	/* init as M5Stack's library does */
	rf_w(f, 0x01, 0x0F);
	assert_int_equal(rf_r(f, 0x01) & 0x10, 0);
	assert_int_equal(rf_r(f, 0x11), 0x3F);
	rf_w(f, 0x2A, 0x80);
	rf_w(f, 0x2B, 0xA9);
	rf_w(f, 0x2C, 0x03);
	rf_w(f, 0x2D, 0xE8);
	rf_w(f, 0x15, 0x40);
	rf_w(f, 0x11, 0x3D);
	uint8_t ans[16];
	static const uint8_t wupa = 0x52;
	/* antenna off: no answer even with a card */
	static const uint8_t uid4[] = {0x5A, 0x3C, 0x91, 0x0E};
	assert_int_equal(hw_sim_rfid_place(f->sim, "tag", uid4, 4, 0, 0, &f->err), K32_OK);
	assert_int_equal(rf_transceive(f, &wupa, 1, 7, ans), -1);
	rf_w(f, 0x14, 0x83);
	assert_int_equal(rf_transceive(f, &wupa, 1, 7, ans), 2);
	assert_int_equal(ans[0], 0x04);
	assert_int_equal(rf_r(f, 0x0C) & 7, 0);
	static const uint8_t ac1[] = {0x93, 0x20};
	assert_int_equal(rf_transceive(f, ac1, 2, 0, ans), 5);
	assert_memory_equal(ans, "\x5A\x3C\x91\x0E\xF9", 5);
	/* CRC through the coprocessor */
	rf_w(f, 0x01, 0x00);
	rf_w(f, 0x05, 0x04);
	rf_w(f, 0x0A, 0x80);
	uint8_t crcw[8] = {0x09, 0x93, 0x70, 0x5A, 0x3C, 0x91, 0x0E, 0xF9};
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, crcw, 8, NULL, 0, &f->err), K32_OK);
	rf_w(f, 0x01, 0x03);
	assert_int_equal(rf_r(f, 0x05) & 0x04, 0x04);
	assert_int_equal(rf_r(f, 0x22), 0x6B);
	assert_int_equal(rf_r(f, 0x21), 0x18);
	static const uint8_t sel1[] = {0x93, 0x70, 0x5A, 0x3C, 0x91, 0x0E, 0xF9, 0x6B, 0x18};
	assert_int_equal(rf_transceive(f, sel1, 9, 0, ans), 3);
	assert_int_equal(ans[0], 0x08);
	static const uint8_t hlta[] = {0x50, 0x00, 0x57, 0xCD};
	assert_int_equal(rf_transceive(f, hlta, 4, 0, ans), -1); /* success is a timeout */
	/* card removed: timeout; the timer fires only after 25 ms of simulated time */
	assert_int_equal(hw_sim_rfid_remove(f->sim, "tag", &f->err), K32_OK);
	rf_w(f, 0x04, 0x7F);
	rf_w(f, 0x0A, 0x80);
	uint8_t w2[2] = {0x09, 0x52};
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, w2, 2, NULL, 0, &f->err), K32_OK);
	rf_w(f, 0x0D, 0x07);
	rf_w(f, 0x01, 0x0C);
	rf_w(f, 0x0D, 0x87);
	assert_int_equal(rf_r(f, 0x04), 0x40);
	vclock += 24000;
	assert_int_equal(rf_r(f, 0x04), 0x40);
	vclock += 2000;
	assert_int_equal(rf_r(f, 0x04), 0x41);
	/* FIFO: 64 bytes, then overflow; flush clears it */
	rf_w(f, 0x0A, 0x80);
	uint8_t big[66];
	memset(big, 0xEE, sizeof(big));
	big[0] = 0x09;
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, big, 66, NULL, 0, &f->err), K32_OK);
	assert_int_equal(rf_r(f, 0x0A), 64);
	assert_int_equal(rf_r(f, 0x06) & 0x10, 0x10);
	rf_w(f, 0x0A, 0x80);
	assert_int_equal(rf_r(f, 0x0A), 0);
	assert_int_equal(rf_r(f, 0x06) & 0x10, 0);
	/* version and a bad register number */
	assert_int_equal(rf_r(f, 0x37), 0x92);
	uint8_t badreg = 0x40, v;
	assert_int_equal(hw_bus_xfer(&f->bus, 0, 0x28, &badreg, 1, &v, 1, &f->err), K32_ERR_IO);
	/* placement errors */
	static const uint8_t uid5[5] = {1, 2, 3, 4, 5}, tagged[4] = {0x88, 1, 2, 3};
	assert_int_equal(hw_sim_rfid_place(f->sim, "tag", uid5, 5, 0, 0, &f->err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(hw_sim_rfid_place(f->sim, "tag", tagged, 4, 0, 0, &f->err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(hw_sim_rfid_place(f->sim, "env", uid4, 4, 0, 0, &f->err),
			 K32_ERR_WRONG_TYPE);
}

/* ---- robustness: a pod may send any bytes to a device it was granted ---- */
static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static void test_random_traffic(void **state)
{
	struct fix *f = *state;
	static const struct {
		uint32_t ch;
		uint8_t addr;
	} targets[] = {{2, 0x77}, {1, 0x26}, {0, 0x28}, {3, 0x77}, {HW_MUX_NONE, 0x10}};
	static const uint8_t uid7[] = {0x04, 0x5B, 0x2C, 0x7A, 0x91, 0x3E, 0x80};
	uint8_t w[K32_HW_I2C_MAX], r[K32_HW_I2C_MAX];
	unsigned ok = 0;
	for (int i = 0; i < 200000; i++) {
		uint32_t t = rnd() % 5;
		size_t wlen = rnd() % 4 == 0 ? rnd() % (K32_HW_I2C_MAX + 1) : rnd() % 4;
		size_t rlen = rnd() % 3 == 0 ? rnd() % (K32_HW_I2C_MAX + 1) : rnd() % 18;
		for (size_t k = 0; k < wlen; k++)
			w[k] = (uint8_t)(k == 0 && rnd() % 2 ? rnd() % 0x40 : rnd());
		k32_status_t st =
		    hw_bus_xfer(&f->bus, targets[t].ch, targets[t].addr, w, wlen, r, rlen, &f->err);
		assert_true(st == K32_OK || st == K32_ERR_NOT_FOUND || st == K32_ERR_IO);
		ok += st == K32_OK;
		vclock += rnd() % 50000;
		switch (rnd() % 500) {
		case 0:
			hw_sim_rfid_place(f->sim, "tag", uid7, rnd() % 2 ? 7 : 4, 0, 0, &f->err);
			break;
		case 1:
			hw_sim_rfid_remove(f->sim, "tag", &f->err);
			break;
		case 2:
			hw_sim_set_value(f->sim, "scale", "weight_g", (double)(rnd() % 5000),
					 &f->err);
			break;
		case 3:
			hw_sim_set_value(f->sim, "env", "temperature_c", (double)(rnd() % 80) - 20,
					 &f->err);
			break;
		default:
			break;
		}
	}
	assert_true(ok > 10000); /* the devices did answer */
	/* and still work afterwards: the chip id reads back */
	static const uint8_t reset[] = {0xE0, 0xB6};
	assert_int_equal(hw_bus_xfer(&f->bus, 2, 0x77, reset, 2, NULL, 0, &f->err), K32_OK);
	uint8_t reg = 0xD0, id = 0;
	assert_int_equal(hw_bus_xfer(&f->bus, 2, 0x77, &reg, 1, &id, 1, &f->err), K32_OK);
	assert_int_equal(id, 0x61);
}

/* ---- the console command line ---- */
static void test_commands(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *line;
		k32_status_t st;
		const char *out; /* substring of the answer or of the error */
	} cases[] = {
	    {"hw list", K32_OK, "env          n1               0   2 0x77 bme688    yes"},
	    {"hw set scale weight_g 125.5", K32_OK, "ok: scale weight_g = 125.5"},
	    {"hw get scale weight_g", K32_OK, "scale weight_g = 125.5"},
	    {"hw set env temperature_c 300", K32_ERR_INVALID_ARGS, "outside"},
	    {"hw set env temperature_c abc", K32_ERR_INVALID_ARGS, "must be a number"},
	    {"hw set nobody present 0", K32_ERR_NOT_FOUND, "no device named nobody"},
	    {"hw set env temprature_c 30", K32_ERR_NOT_FOUND,
	     "has no value \"temprature_c\"; its values: temperature_c pressure_pa humidity_pct "
	     "gas_ohm heater_fault present"},
	    {"hw set scale weigth_g 1", K32_ERR_NOT_FOUND,
	     "its values: weight_g zero_point sensitivity noise button present"},
	    {"hw raw env 493000 355000 20500 600 9", K32_OK, "raw words set"},
	    {"hw raw env 1 2 3", K32_ERR_INVALID_ARGS, "usage"},
	    {"rfid place tag 5A3C910E", K32_OK, "ok: card 5A3C910E on tag"},
	    {"rfid place tag 045B2C7A913E80", K32_OK, "on tag"},
	    {"rfid place tag 5A3C91", K32_ERR_INVALID_ARGS, "8 or 14 hex digits"},
	    {"rfid place tag 5A3C91ZZ", K32_ERR_INVALID_ARGS, "hex digits"},
	    {"rfid place env 5A3C910E", K32_ERR_WRONG_TYPE, "not a rfid"},
	    {"rfid remove tag", K32_OK, "removed"},
	    {"hw fault n1 0 0x77 bus-error 2", K32_OK, "next 2 transactions"},
	    {"hw fault n1 0 any none", K32_OK, "next 0"},
	    {"hw fault n1 0 0x77 melt", K32_ERR_INVALID_ARGS, "unknown kind"},
	    {"hw fault n9 0 any timeout", K32_ERR_NOT_FOUND, "no bus"},
	    {"hw", K32_ERR_INVALID_ARGS, "usage"},
	    {"reboot", K32_ERR_INVALID_ARGS, "unknown command"},
	    {"", K32_ERR_INVALID_ARGS, "usage"},
	};
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 4096, "command output");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k32_buf_reset(&out);
		k32_err_clear(&f->err);
		k32_status_t st = hw_sim_command(f->sim, cases[i].line, &out, &f->err);
		if (st != cases[i].st ||
		    !strstr(st ? f->err.msg : k32_buf_cstr(&out), cases[i].out))
			fail_msg("%s: got %d \"%s\" / \"%s\"", cases[i].line, st,
				 k32_buf_cstr(&out), f->err.msg);
	}
	/* the commands took effect */
	double v;
	assert_int_equal(hw_sim_get_value(f->sim, "tag", "card_state", &v, &f->err), K32_OK);
	assert_true(v == HW_CARD_ABSENT);
	k32_buf_fini(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bme688_calib_and_comp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bme688_forced_raw, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bme688_inversion, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_miniscale_example, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_miniscale_filters, setup, teardown),
	    cmocka_unit_test(test_crc_a),
	    cmocka_unit_test(test_card_frames),
	    cmocka_unit_test_setup_teardown(test_rfid_registers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_random_traffic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
