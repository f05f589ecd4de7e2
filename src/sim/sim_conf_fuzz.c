/*
 * sim_conf_fuzz.c - libFuzzer target for kube32-sim's board file parser (sim_conf_parse) and
 * its --boards spec parser: any input returns a status; on success every board has a known
 * profile and a NUL-terminated, non-empty name, and there are at most K32_SIM_MAX_BOARDS.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct sim_conf *c)
{
	if (c->count > K32_SIM_MAX_BOARDS)
		abort();
	for (uint32_t i = 0; i < c->count; i++)
		if (!c->boards[i].profile || !c->boards[i].name[0] ||
		    !memchr(c->boards[i].name, 0, sizeof(c->boards[i].name)))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sim_conf c;
	static char spec[K32_SIM_CONF_LINE_MAX * 2];
	struct k32_err err;

	memset(&c, 0, sizeof(c));
	if (!sim_conf_parse((const char *)data, size, &c, &err))
		check(&c);
	memset(&c, 0, sizeof(c));
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	memcpy(spec, data, n);
	spec[n] = 0;
	if (!sim_conf_add_spec(&c, spec, &err))
		check(&c);
	return 0;
}
