/*
 * console_stdio.c - `k32-console`: the node console on standard input and output, as a
 * board's UART task would run it: every K32_CMD: line read is answered on stdout; other
 * lines are ignored. For the benchmarks page and for trying the protocol by hand:
 *
 *   printf 'K32_CMD:BENCH:crc32:4:5\nK32_CMD:TASKS\n' | k32-console
 *
 * Exit 0 at the end of input, 1 if any command failed.
 */
#include <stdio.h>
#include <string.h>

#include "console.h"
#include "platform/k32_platform.h"

static void out(void *user, const char *s, size_t len)
{
	(void)user;
	fwrite(s, 1, len, stdout);
	fflush(stdout);
}

static struct con c;

/* The console task, as on a board: reads lines and answers them. */
static void console_task(void *arg)
{
	char buf[512];

	(void)arg;
	/* line by line, so an interactive user gets each answer at once */
	while (fgets(buf, sizeof(buf), stdin))
		con_feed(&c, buf, strlen(buf));
	con_feed(&c, "\n", 1); /* a last line without its newline */
}

int main(void)
{
	struct k32_task *t;
	struct k32_err err;

	con_init(&c, con_builtin_cmds, con_builtin_count, out, NULL);
	if (k32_plat()->task_create(&t, "console", console_task, NULL, 64 * 1024, -1, &err)) {
		fprintf(stderr, "k32-console: starting the console task: %s\n", err.msg);
		return 1;
	}
	k32_plat()->task_join(t);
	return c.errors ? 1 : 0;
}
