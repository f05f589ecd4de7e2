/*
 * bme688_test.c - the bme688 driver pod's own source compiled natively: its compensation
 * steps against hardware.md's worked example (exact integer results), its heater codes, and
 * init/tick over the simulated sensor (raw mode with the example's ADC words, then physical
 * values), including a missing device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "drv_fake.h"

#include "bme688.c"

static const uint8_t b8a[23] = {0x2A, 0x67, 0x03, 0x00, 0x68, 0x8D, 0xDE, 0xD6,
				0x58, 0x00, 0x8A, 0x1B, 0x6A, 0xFF, 0x19, 0x1E,
				0x00, 0x00, 0x94, 0xFD, 0xB8, 0xF2, 0x1E};
static const uint8_t be1[14] = {0x3F, 0x28, 0x2F, 0x00, 0x2D, 0x14, 0x78,
				0x9C, 0x08, 0x66, 0x90, 0xE8, 0xE7, 0x12};
static const uint8_t b00[5] = {0x28, 0x00, 0x10, 0x00, 0x00};

/* The calibration block as the driver reads it: the three register runs back to back. */
static void calib_parse(struct bme_calib *c, const uint8_t *a, const uint8_t *e, const uint8_t *z)
{
	memcpy(c->b + CAL_8A, a, CAL_E1 - CAL_8A);
	memcpy(c->b + CAL_E1, e, CAL_00 - CAL_E1);
	memcpy(c->b + CAL_00, z, CAL_LEN - CAL_00);
}

static void test_calib(void **state)
{
	(void)state;
	struct bme_calib cb, *c = &cb;
	calib_parse(c, b8a, be1, b00);
	const int32_t got[] = {T1(c),  T2(c),  T3(c),  P1(c),		P2(c),
			       P3(c),  P4(c),  P5(c),  P6(c),		P7(c),
			       P8(c),  P9(c),  P10(c), H1(c),		H2(c),
			       H3(c),  H4(c),  H5(c),  H6(c),		H7(c),
			       GH1(c), GH2(c), GH3(c), RES_HEAT_VAL(c), RES_HEAT_RANGE(c)};
	const int32_t want[] = {26120, 26410, 3,     36200, -10530, 88,	  7050, -150, 30,
				25,    -620,  -3400, 30,    760,    1010, 0,	45,   20,
				120,   -100,  -25,   -6000, 18,	    40,	  1};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(got[i], want[i]);
}

static void test_worked_example(void **state)
{
	(void)state;
	struct bme_calib c;
	calib_parse(&c, b8a, be1, b00);
	static const struct {
		uint8_t regs[17];
		int32_t t_fine, t;
		uint32_t p, h, g;
	} cases[] = {
	    {{0x80, 0x00, 0x56, 0xAB, 0x80, 0x78, 0x5C, 0x80, 0x50, 0x14, 0x00, 0x00, 0x00, 0x00,
	      0x00, 0x96, 0x39},
	     121039,
	     2364,
	     99987,
	     41955,
	     117400},
	    {{0x80, 0x00, 0x5A, 0xD2, 0x00, 0x6F, 0x15, 0x80, 0x65, 0x90, 0x00, 0x00, 0x00, 0x00,
	      0x00, 0x4B, 0x34},
	     59773,
	     1167,
	     95121,
	     75760,
	     4735200},
	};
	for (size_t i = 0; i < 2; i++) {
		struct bme_sample s;
		decode(&c, cases[i].regs, &s);
		assert_int_equal(s.t_x100, cases[i].t);
		assert_int_equal(s.p_pa, cases[i].p);
		assert_int_equal(s.h_x1000, cases[i].h);
		assert_int_equal(s.gas_ohm, cases[i].g);
		assert_int_equal(s.gas_bits, 3);
		assert_int_equal(s.status, 0x80);
		int32_t tf;
		uint32_t adc_t = (uint32_t)cases[i].regs[5] << 12 |
				 (uint32_t)cases[i].regs[6] << 4 | (uint32_t)cases[i].regs[7] >> 4;
		comp_temperature(&c, adc_t, &tf);
		assert_int_equal(tf, cases[i].t_fine);
	}
}

static void test_heater(void **state)
{
	(void)state;
	struct bme_calib c;
	calib_parse(&c, b8a, be1, b00);
	assert_int_equal(heater_res(&c, 320, 25), 0x79);
	int r200 = heater_res(&c, 200, 25);
	assert_true(r200 == 88 || r200 == 89);
	assert_int_equal(heater_res(&c, 500, 25), heater_res(&c, 400, 25)); /* capped */
	static const struct {
		uint32_t ms;
		uint8_t code;
	} dur[] = {{150, 0x65},	 {63, 63},     {64, 0x50},   {0, 0},
		   {4031, 0xFE}, {4032, 0xFF}, {10000, 0xFF}};
	for (size_t i = 0; i < sizeof(dur) / sizeof(dur[0]); i++)
		assert_int_equal(heater_dur(dur[i].ms), dur[i].code);
	assert_int_equal(meas_time_ms(2, 3, 1, 0), 20);
	assert_int_equal(meas_time_ms(2, 3, 1, 148), 168);
}

static const struct hw_param params[] = {
    {"heaterTempC", "320"}, {"heaterDurationMs", "150"}, {"pollIntervalMs", "3000"}};

static void run_sample(void)
{
	int32_t d = drv_tick(); /* trigger */
	assert_int_equal(d, 169);
	drv_fake.clock_us += (uint64_t)d * 1000;
	d = drv_tick(); /* read */
	assert_int_equal(d, 3000 - 168);
	drv_fake.clock_us += (uint64_t)d * 1000;
}

static void test_flow(void **state)
{
	(void)state;
	drv_fake_setup(HW_MODEL_BME688, 2, 0x77, params, 3);
	assert_int_equal(drv_init(), 0);
	/* the worked example's configuration landed in the sensor */
	static const struct {
		uint8_t reg, val;
	} regs[] = {{0x72, 0x01}, {0x74, 0x4C}, {0x75, 0x00}, {0x5A, 0x79},
		    {0x64, 0x65}, {0x70, 0x00}, {0x71, 0x20}};
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		uint8_t v = 0xEE;
		assert_int_equal(drv_fake_xfer(&regs[i].reg, 1, &v, 1), K32_OK);
		assert_int_equal(v, regs[i].val);
	}
	struct k32_err err;
	assert_int_equal(
	    hw_sim_bme688_set_raw(drv_fake.sim, "dev", 493000, 355000, 20500, 600, 9, &err),
	    K32_OK);
	run_sample();
	assert_string_equal(drv_fake_reading("temperature_c"), "23.64");
	assert_string_equal(drv_fake_reading("pressure_pa"), "99987");
	assert_string_equal(drv_fake_reading("humidity_pct"), "41.955");
	assert_string_equal(drv_fake_reading("gas_ohm"), "117400");
	assert_string_equal(drv_fake_reading("gas_valid"), "true");
	assert_true(drv_fake.ready);
	assert_string_equal(drv_fake.reason, "Reading");
	/* physical values: recovered to the driver's resolution */
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "temperature_c", 18.25, &err),
			 K32_OK);
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "pressure_pa", 100500, &err),
			 K32_OK);
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "humidity_pct", 55.5, &err), K32_OK);
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "gas_ohm", 250000, &err), K32_OK);
	run_sample();
	assert_string_equal(drv_fake_reading("temperature_c"), "18.25");
	int p = atoi(drv_fake_reading("pressure_pa"));
	assert_true(p >= 100498 && p <= 100502);
	double h = atof(drv_fake_reading("humidity_pct"));
	assert_true(h > 55.47 && h < 55.53);
	double g = atof(drv_fake_reading("gas_ohm"));
	assert_true(g > 247500 && g < 252500);
	/* the sensor disappears: NotFound, and back: Reading */
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "present", 0, &err), K32_OK);
	assert_int_equal(drv_tick(), 3000);
	assert_false(drv_fake.ready);
	assert_string_equal(drv_fake.reason, "NotFound");
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "present", 1, &err), K32_OK);
	run_sample();
	assert_true(drv_fake.ready);
	/* a bus error during a read: BusError */
	assert_int_equal(drv_tick(), 169);
	assert_int_equal(hw_sim_inject(drv_fake.sim, "node", 0, 0x77, HW_XFER_BUS_ERROR, 1, &err),
			 K32_OK);
	assert_int_equal(drv_tick(), 3000);
	assert_string_equal(drv_fake.reason, "BusError");
	drv_fake_teardown();
}

static void test_init_failures(void **state)
{
	(void)state;
	drv_fake_setup(HW_MODEL_BME688, 2, 0x77, params, 3);
	struct k32_err err;
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "present", 0, &err), K32_OK);
	assert_int_equal(drv_init(), K32_ENODEV);
	assert_string_equal(drv_fake.reason, "NotFound");
	assert_false(drv_fake.ready);
	/* outside its grants: refused, and no Device's condition changes */
	drv_fake.granted = false;
	uint32_t conds = drv_fake.conditions;
	assert_int_equal(drv_init(), K32_EPERM);
	assert_int_equal(drv_fake.conditions, conds);
	drv_fake_teardown();
	/* another chip at the address (a Mini Scales answers 0xD0 with no 0x61): WrongChip */
	drv_fake_setup(HW_MODEL_MINISCALE, 2, 0x77, params, 3);
	assert_int_equal(drv_init(), K32_ENODEV);
	assert_false(drv_fake.ready);
	assert_string_equal(drv_fake.reason, "WrongChip");
	drv_fake_teardown();
}

/* Bad input: malformed or out-of-range params fall back to defaults or are capped, and
 * raw ADC words at their extremes give bounded readings, never a trap. */
static void test_bad_input(void **state)
{
	(void)state;
	static const struct {
		struct hw_param p[3];
		uint8_t res_heat, gas_wait; /* 0x5A, 0x64 written at init */
		uint32_t poll_ms;	    /* the delay after a read */
	} cases[] = {
	    {{{"heaterTempC", "abc"}, {"heaterDurationMs", "-5"}, {"pollIntervalMs", ""}},
	     0,
	     0x65,
	     3000},
	    {{{"heaterTempC", "99999"}, {"heaterDurationMs", "99999"}, {"pollIntervalMs", "7"}},
	     1,
	     0xFF,
	     7},
	    {{{"heaterTempC", "4294967296"},
	      {"ambientC", "1000"},
	      {"pollIntervalMs", "9999999999"}},
	     2,
	     0x65,
	     3000},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		drv_fake_setup(HW_MODEL_BME688, 2, 0x77, cases[i].p, 3);
		assert_int_equal(drv_init(), 0);
		struct bme_calib c;
		uint8_t b8a[23], be1[14], b00[5], r1 = 0x8A, r2 = 0xE1, r3 = 0x00;
		assert_int_equal(drv_fake_xfer(&r1, 1, b8a, 23), K32_OK);
		assert_int_equal(drv_fake_xfer(&r2, 1, be1, 14), K32_OK);
		assert_int_equal(drv_fake_xfer(&r3, 1, b00, 5), K32_OK);
		calib_parse(&c, b8a, be1, b00);
		/* the heater code for the value the driver should have settled on */
		uint8_t want = cases[i].res_heat == 0	? heater_res(&c, 320, 25)
			       : cases[i].res_heat == 1 ? heater_res(&c, 400, 25)
							: heater_res(&c, 320, 85);
		uint8_t reg = 0x5A, v = 0;
		assert_int_equal(drv_fake_xfer(&reg, 1, &v, 1), K32_OK);
		assert_int_equal(v, want);
		reg = 0x64;
		assert_int_equal(drv_fake_xfer(&reg, 1, &v, 1), K32_OK);
		assert_int_equal(v, cases[i].gas_wait);
		int32_t d = drv_tick();
		drv_fake.clock_us += (uint64_t)d * 1000;
		d = drv_tick();
		assert_true(d == 1 || d == (int32_t)(cases[i].poll_ms - meas_ms));
		assert_non_null(drv_fake_reading("temperature_c"));
		drv_fake_teardown();
	}
	/* raw words at their extremes */
	static const uint32_t raw[][5] = {{0, 0, 0, 0, 0},
					  {0xFFFFF, 0xFFFFF, 0xFFFF, 1023, 15},
					  {0xFFFFF, 0, 0, 512, 0},
					  {0, 0xFFFFF, 0xFFFF, 0, 15}};
	drv_fake_setup(HW_MODEL_BME688, 2, 0x77, params, 3);
	assert_int_equal(drv_init(), 0);
	struct k32_err err;
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		assert_int_equal(hw_sim_bme688_set_raw(drv_fake.sim, "dev", raw[i][0], raw[i][1],
						       raw[i][2], raw[i][3], raw[i][4], &err),
				 K32_OK);
		uint32_t before = drv_fake.publishes;
		run_sample();
		assert_int_equal(drv_fake.publishes, before + 1);
		double h = atof(drv_fake_reading("humidity_pct"));
		assert_true(h >= 0 && h <= 100);
	}
	drv_fake_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_calib),	  cmocka_unit_test(test_worked_example),
	    cmocka_unit_test(test_heater),	  cmocka_unit_test(test_flow),
	    cmocka_unit_test(test_init_failures), cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
