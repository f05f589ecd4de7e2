/*
 * hw_sim_cmd_fuzz.c - libFuzzer target for the simulator's command line (hw_sim_command, the
 * lines a user sends to kube32-sim's console or POST /console): the input is cut into lines
 * at '\n' (at most 16), each run against a fresh simulated cardputer bus (a PCA9548A with a
 * BME688, a Mini Scales and an RFID 2 reader), and after each line the three devices are read
 * over the bus as their drivers would, so values set by a line (extreme temperatures, raw ADC
 * words, faults, cards) go through the devices' own code too. An answer must be text that
 * ends with a newline; a refused line must say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t vclock;

static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

static const struct hw_sim_bus_config buses[] = {{"cardputer-1", 0, true, 0x70}};
static const struct hw_sim_dev_config devs[] = {
    {"envpro", "cardputer-1", 0, 2, 0x77, HW_MODEL_BME688},
    {"scale", "cardputer-1", 0, 1, 0x26, HW_MODEL_MINISCALE},
    {"tag", "cardputer-1", 0, 0, 0x28, HW_MODEL_MFRC522},
};

/* Reads each device the way its driver does; any status is fine, a crash is not. */
static void probe(struct hw_bus *bus)
{
	static const uint8_t trig[2] = {0x74, 0x4D}, d0 = 0x1D, w = 0x10, ver = 0x37;
	uint8_t r[17];
	hw_bus_xfer(bus, 2, 0x77, trig, 2, NULL, 0, NULL);
	vclock += 200000;
	hw_bus_xfer(bus, 2, 0x77, &d0, 1, r, sizeof(r), NULL);
	hw_bus_xfer(bus, 1, 0x26, &w, 1, r, 4, NULL);
	hw_bus_xfer(bus, 0, 0x28, &ver, 1, r, 1, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hw_sim *sim;
	struct k32_err err;
	vclock = 1000000;
	struct hw_sim_config cfg = {buses, 1, devs, 3, vnow, NULL};
	if (hw_sim_new(k32_default_allocator(), &cfg, &sim, &err) != K32_OK)
		abort();
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	struct hw_bus bus;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	if (hw_sim_backend(sim, "cardputer-1", 0, &ops, &ctx) ||
	    hw_bus_init(&bus, 0, ops, ctx, &bc, &err))
		abort();
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 4096, "fuzz answer");
	char line[512];
	size_t pos = 0;
	for (int n = 0; n < 16 && pos < size; n++) {
		size_t end = pos;
		while (end < size && data[end] != '\n')
			end++;
		size_t len = end - pos < sizeof(line) - 1 ? end - pos : sizeof(line) - 1;
		memcpy(line, data + pos, len);
		line[len] = 0;
		pos = end + 1;
		k32_buf_reset(&out);
		k32_err_clear(&err);
		k32_status_t st = hw_sim_command(sim, line, &out, &err);
		if (st == K32_OK) {
			const char *s = k32_buf_cstr(&out);
			if (out.len && s[out.len - 1] != '\n')
				abort(); /* every answer line ends with a newline */
			if (strlen(s) != out.len)
				abort(); /* text only */
		} else if (!err.msg[0]) {
			abort(); /* a refusal says why */
		}
		probe(&bus);
	}
	k32_buf_fini(&out);
	hw_bus_fini(&bus);
	hw_sim_free(sim);
	return 0;
}
