/*
 * miniscale_test.c - the miniscale driver pod's source compiled natively: decoding against
 * hardware.md's example bytes, then init/tick over the simulated unit (weight changes,
 * button, missing unit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "drv_fake.h"

#include "miniscale.c"

static void test_decode(void **state)
{
	(void)state;
	static const uint8_t raw[] = {0x20, 0xB3, 0x81, 0x00}, w[] = {0x00, 0x00, 0x7A, 0x43},
			     gap[] = {0x00, 0x00, 0xC8, 0x43}, w100[] = {0xA8, 0x61, 0x00, 0x00};
	assert_int_equal(le_u32(raw), 8500000);
	assert_true(le_f32(w) == 250.0f);
	assert_true(le_f32(gap) == 400.0f);
	assert_int_equal(le_u32(w100), 25000);
	static const uint8_t nan[] = {0x00, 0x00, 0xC0, 0x7F};
	assert_false(weight_ok(le_f32(nan)));
	assert_true(weight_ok(-3.5f));
}

static void test_flow(void **state)
{
	(void)state;
	static const struct hw_param params[] = {{"pollIntervalMs", "500"}};
	drv_fake_setup(HW_MODEL_MINISCALE, 1, 0x26, params, 1);
	assert_int_equal(drv_init(), 0);
	/* filters off, as in hardware.md's example */
	static const uint8_t off[3][2] = {{0x80, 0}, {0x81, 0}, {0x82, 0}};
	for (int i = 0; i < 3; i++)
		assert_int_equal(drv_fake_xfer(off[i], 2, NULL, 0), K32_OK);
	struct k32_err err;
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "weight_g", 250, &err), K32_OK);
	drv_fake.clock_us += 200000;
	assert_int_equal(drv_tick(), 500);
	assert_string_equal(drv_fake_reading("weight_g"), "250.00");
	assert_string_equal(drv_fake_reading("raw_adc"), "8500000");
	assert_string_equal(drv_fake_reading("button"), "0");
	assert_true(drv_fake.ready);
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "button", 1, &err), K32_OK);
	drv_fake.clock_us += 500000;
	assert_int_equal(drv_tick(), 500);
	assert_string_equal(drv_fake_reading("button"), "1");
	assert_string_equal(drv_fake_reading("weight_g"), "0.00"); /* the button tared */
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "button", 0, &err), K32_OK);
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "weight_g", 262.34, &err), K32_OK);
	drv_fake.clock_us += 500000;
	assert_int_equal(drv_tick(), 500);
	assert_string_equal(drv_fake_reading("weight_g"), "12.34");
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "present", 0, &err), K32_OK);
	assert_int_equal(drv_tick(), 500);
	assert_string_equal(drv_fake.reason, "NotFound");
	drv_fake_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode),
	    cmocka_unit_test(test_flow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
