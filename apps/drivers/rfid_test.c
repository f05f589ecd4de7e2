/*
 * rfid_test.c - the rfid driver pod's source compiled natively: CRC_A and frames against
 * hardware.md's worked frames, then polls over the simulated reader with 4- and 7-byte
 * cards placed and removed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "drv_fake.h"

#include "rfid.c"

static void test_frames(void **state)
{
	(void)state;
	static const struct {
		uint8_t in[2];
		uint32_t n;
		uint16_t crc;
	} crcs[] = {{{0x08}, 1, 0xDDB6},
		    {{0x50, 0x00}, 2, 0xCD57},
		    {{0x04}, 1, 0x17DA},
		    {{0x00}, 1, 0x51FE}};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(crc_a(crcs[i].in, crcs[i].n), crcs[i].crc);
	/* the driver's constant HLTA frame carries the right CRC_A */
	assert_int_equal(crc_a(hlta_frame, 2), hlta_frame[2] | hlta_frame[3] << 8);
	uint8_t f[9];
	static const uint8_t ac4[5] = {0x5A, 0x3C, 0x91, 0x0E, 0xF9};
	static const uint8_t sel4[9] = {0x93, 0x70, 0x5A, 0x3C, 0x91, 0x0E, 0xF9, 0x6B, 0x18};
	assert_true(bcc_ok(ac4));
	select_frame(f, 0x93, ac4);
	assert_memory_equal(f, sel4, 9);
	static const uint8_t ac7a[5] = {0x88, 0x04, 0x5B, 0x2C, 0xFB};
	static const uint8_t sel7a[9] = {0x93, 0x70, 0x88, 0x04, 0x5B, 0x2C, 0xFB, 0x8F, 0x12};
	select_frame(f, 0x93, ac7a);
	assert_memory_equal(f, sel7a, 9);
	static const uint8_t ac7b[5] = {0x7A, 0x91, 0x3E, 0x80, 0x55};
	static const uint8_t sel7b[9] = {0x95, 0x70, 0x7A, 0x91, 0x3E, 0x80, 0x55, 0x2F, 0x35};
	select_frame(f, 0x95, ac7b);
	assert_memory_equal(f, sel7b, 9);
	static const uint8_t sak[3] = {0x08, 0xB6, 0xDD}, badsak[3] = {0x08, 0xB6, 0xDE};
	assert_true(sak_ok(sak, 3));
	assert_false(sak_ok(badsak, 3));
	assert_false(sak_ok(sak, 2));
	static const uint8_t badbcc[5] = {0x5A, 0x3C, 0x91, 0x0E, 0xF8};
	assert_false(bcc_ok(badbcc));
}

static void test_polls(void **state)
{
	(void)state;
	drv_fake_setup(HW_MODEL_MFRC522, 0, 0x28, NULL, 0);
	assert_int_equal(drv_init(), 0);
	assert_int_equal(drv_tick(), 200);
	assert_string_equal(drv_fake_reading("present"), "false");
	assert_string_equal(drv_fake_reading("uid"), "");
	struct k32_err err;
	static const uint8_t uid4[] = {0x5A, 0x3C, 0x91, 0x0E};
	assert_int_equal(hw_sim_rfid_place(drv_fake.sim, "dev", uid4, 4, 0, 0, &err), K32_OK);
	for (int i = 0; i < 3; i++) { /* a card left on the reader answers every poll */
		drv_fake.clock_us += 200000;
		assert_int_equal(drv_tick(), 200);
		assert_string_equal(drv_fake_reading("present"), "true");
		assert_string_equal(drv_fake_reading("uid"), "5A3C910E");
		assert_string_equal(drv_fake_reading("sak"), "8");
		assert_string_equal(drv_fake_reading("atqa"), "0004");
	}
	static const uint8_t uid7[] = {0x04, 0x5B, 0x2C, 0x7A, 0x91, 0x3E, 0x80};
	assert_int_equal(hw_sim_rfid_place(drv_fake.sim, "dev", uid7, 7, 0, 0, &err), K32_OK);
	drv_fake.clock_us += 200000;
	assert_int_equal(drv_tick(), 200);
	assert_string_equal(drv_fake_reading("uid"), "045B2C7A913E80");
	assert_string_equal(drv_fake_reading("sak"), "0");
	assert_string_equal(drv_fake_reading("atqa"), "0044");
	/* removed: still present after one missed poll, absent after two */
	assert_int_equal(hw_sim_rfid_remove(drv_fake.sim, "dev", &err), K32_OK);
	drv_fake.clock_us += 200000;
	uint64_t before = drv_fake.clock_us;
	assert_int_equal(drv_tick(), 200);
	assert_true(drv_fake.clock_us - before >= 10000); /* waited for the reader's timer */
	assert_string_equal(drv_fake_reading("present"), "true");
	drv_fake.clock_us += 200000;
	assert_int_equal(drv_tick(), 200);
	assert_string_equal(drv_fake_reading("present"), "false");
	/* reader gone: NotFound */
	assert_int_equal(hw_sim_set_value(drv_fake.sim, "dev", "present", 0, &err), K32_OK);
	assert_int_equal(drv_tick(), 200);
	assert_string_equal(drv_fake.reason, "NotFound");
	drv_fake_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames),
	    cmocka_unit_test(test_polls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
