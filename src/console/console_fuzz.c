/*
 * console_fuzz.c - libFuzzer target for the console: the input is fed to con_feed in two
 * pieces (split at its first byte's value) so line assembly across calls is exercised, then
 * a final newline flushes the last line. BENCH is replaced by a command that only parses its
 * fields (running kernels with fuzzed sizes would measure nothing and take long); TASKS and
 * HELP run as they are. Every output line must end with '\n' and fit K32_CON_LINE_MAX + 1.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void out(void *user, const char *s, size_t len)
{
	(void)user;
	if (len == 0 || len > K32_CON_LINE_MAX + 1 || s[len - 1] != '\n')
		abort();
}

static k32_status_t fake_bench(struct con *c, const struct con_args *a, struct k32_err *err)
{
	uint32_t v;

	for (uint32_t i = 1; i < a->argc; i++) {
		if (!con_arg_u32(a->argv[i], 1000, &v))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "fuzz",
					   "field %u: not a number", i);
	}
	con_print(c, "K32_BENCH fields=%u", a->argc);
	return K32_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct con c;
	struct con_cmd cmds[3];

	memcpy(cmds, con_builtin_cmds, sizeof(cmds));
	cmds[0].fn = fake_bench;
	con_init(&c, cmds, 3, out, NULL);
	size_t cut = size ? data[0] % (size + 1) : 0;
	con_feed(&c, (const char *)data, cut);
	con_feed(&c, (const char *)data + cut, size - cut);
	con_feed(&c, "\n", 1);
	if (c.len != 0 || c.overflow)
		abort();
	return 0;
}
