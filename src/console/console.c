/*
 * console.c - the K32_CMD: line protocol (see console.h): line assembly with a bounded
 * buffer, the parser, dispatch through the caller's command table, and the built-in BENCH,
 * TASKS and HELP commands. BENCH runs the kernels of src/bench natively on the caller's task,
 * timed with the platform clock; TASKS reads k32_plat()->task_list.
 */
#include "console.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_line.h"
#include "platform/k32_platform.h"

#define CON_MOD "console"

void con_init(struct con *c, const struct con_cmd *cmds, size_t ncmds, con_write_fn write,
	      void *user)
{
	memset(c, 0, sizeof(*c));
	c->cmds = cmds;
	c->ncmds = ncmds;
	c->write = write;
	c->user = user;
}

void con_print(struct con *c, const char *fmt, ...)
{
	char buf[K32_CON_LINE_MAX + 2];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, K32_CON_LINE_MAX + 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n > K32_CON_LINE_MAX ? K32_CON_LINE_MAX : (size_t)n;
	buf[len++] = '\n';
	if (c->write)
		c->write(c->user, buf, len);
}

static bool name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

k32_status_t con_parse(const char *line, size_t len, struct con_args *out, struct k32_err *err)
{
	const size_t plen = sizeof(CON_PREFIX) - 1;

	memset(out, 0, sizeof(*out));
	if (len < plen || memcmp(line, CON_PREFIX, plen) != 0)
		return k32_err_set(err, K32_ERR_NOT_FOUND, CON_MOD,
				   "not a command: a command line starts with " CON_PREFIX);
	if (len > K32_CON_LINE_MAX)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "line of %zu bytes is longer than K32_CON_LINE_MAX (%d)", len,
				   K32_CON_LINE_MAX);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
					   "control character 0x%02x at byte %zu: send plain text",
					   (unsigned char)line[i], i);
	}
	struct k32_str rest = {line + plen, len - plen}, field;
	bool more = k32_str_cut(rest, ':', &field, &rest);
	if (field.len == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "empty command name after " CON_PREFIX ": try " CON_PREFIX
				   "HELP");
	for (size_t i = 0; i < field.len; i++) {
		if (!name_char(field.p[i]))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
					   "command name \"%.*s\" has a character outside A-Z, 0-9 "
					   "and _: try " CON_PREFIX "HELP",
					   (int)(field.len > 32 ? 32 : field.len), field.p);
	}
	out->name = field;
	while (more) {
		if (out->argc == K32_CON_MAX_ARGS)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
					   "more than K32_CON_MAX_ARGS (%d) fields after %.*s",
					   K32_CON_MAX_ARGS, (int)out->name.len, out->name.p);
		more = k32_str_cut(rest, ':', &field, &rest);
		out->argv[out->argc++] = field;
	}
	return K32_OK;
}

static const struct con_cmd *find_cmd(const struct con *c, struct k32_str name)
{
	for (size_t i = 0; i < c->ncmds; i++) {
		if (k32_str_eq_cstr(name, c->cmds[i].name))
			return &c->cmds[i];
	}
	return NULL;
}

static k32_status_t fail(struct con *c, k32_status_t st, const struct k32_err *err)
{
	c->errors++;
	con_print(c, "K32_ERR %s", err->msg);
	return st;
}

k32_status_t con_exec(struct con *c, const char *line, size_t len)
{
	struct con_args a;
	struct k32_err err;
	k32_status_t st;

	while (len && line[len - 1] == '\r')
		len--;
	k32_err_clear(&err);
	st = con_parse(line, len, &a, &err);
	if (st == K32_ERR_NOT_FOUND)
		return K32_OK; /* log text, not a command */
	c->lines++;
	if (st)
		return fail(c, st, &err);
	const struct con_cmd *cmd = find_cmd(c, a.name);
	if (!cmd) {
		k32_err_set(&err, K32_ERR_NOT_FOUND, CON_MOD,
			    "unknown command %.*s: try " CON_PREFIX "HELP", (int)a.name.len,
			    a.name.p);
		return fail(c, K32_ERR_NOT_FOUND, &err);
	}
	if (a.argc < cmd->min_args || a.argc > cmd->max_args) {
		k32_err_set(&err, K32_ERR_INVALID_ARGS, CON_MOD,
			    "%s takes %" PRIu32 " to %" PRIu32 " fields, got %" PRIu32
			    ": usage " CON_PREFIX "%s",
			    cmd->name, cmd->min_args, cmd->max_args, a.argc, cmd->usage);
		return fail(c, K32_ERR_INVALID_ARGS, &err);
	}
	st = cmd->fn(c, &a, &err);
	if (st)
		return fail(c, st, &err);
	return K32_OK;
}

void con_feed(struct con *c, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char ch = data[i];

		if (ch == '\n') {
			if (c->overflow) {
				struct k32_err err;

				c->lines++;
				k32_err_set(&err, K32_ERR_INVALID_ARGS, CON_MOD,
					    "line longer than K32_CON_LINE_MAX (%d bytes): skipped",
					    K32_CON_LINE_MAX);
				/* only command lines are answered */
				if (c->len >= sizeof(CON_PREFIX) - 1 &&
				    !memcmp(c->line, CON_PREFIX, sizeof(CON_PREFIX) - 1))
					fail(c, K32_ERR_INVALID_ARGS, &err);
			} else {
				con_exec(c, c->line, c->len);
			}
			c->len = 0;
			c->overflow = false;
			continue;
		}
		if (c->len < K32_CON_LINE_MAX)
			c->line[c->len++] = ch;
		else
			c->overflow = true;
	}
}

bool con_arg_u32(struct k32_str s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (!k32_str_to_u64(s, &v) || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* ---- built-in commands ------------------------------------------------------------------ */

static int64_t con_clock(void)
{
	return (int64_t)k32_now_us();
}

static k32_status_t cmd_bench(struct con *c, const struct con_args *a, struct k32_err *err)
{
	char line[BENCH_LINE_MAX + 1];
	struct k32_str k = a->argv[0];

	if (k32_str_eq_cstr(k, "hostcall")) {
		uint32_t calls;

		if (a->argc != 2 || !con_arg_u32(a->argv[1], K32_CON_BENCH_MAX_CALLS, &calls))
			return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
					   "BENCH:hostcall wants one count from 0 to %u: usage "
					   "K32_CMD:BENCH:hostcall:100000",
					   K32_CON_BENCH_MAX_CALLS);
		bench_clock_fn = con_clock;
		uint64_t t0 = k32_now_us();
		uint32_t ok = bench_hostcall(calls);
		uint64_t us = k32_now_us() - t0;
		if (ok != calls)
			return k32_err_set(err, K32_ERR_INTERNAL, CON_MOD,
					   "the platform clock went backwards %" PRIu32
					   " times in %" PRIu32 " reads",
					   calls - ok, calls);
		bench_line_format_hostcall(line, sizeof(line), calls, us);
		con_print(c, "%s", line);
		return K32_OK;
	}
	uint32_t kernel = bench_kernel_find(k.p, (uint32_t)k.len);
	if (kernel >= BENCH_KERNEL_COUNT)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "unknown kernel \"%.*s\": use fib, crc32, sieve, sort, mandel, "
				   "json or hostcall",
				   (int)(k.len > 32 ? 32 : k.len), k.p);
	uint32_t arg = bench_default_arg(kernel), runs = 5;
	if (a->argc >= 2 && !con_arg_u32(a->argv[1], UINT32_MAX, &arg))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "BENCH:%s: size \"%.*s\" is not a number (%s takes %s)",
				   bench_kernel_name(kernel),
				   (int)(a->argv[1].len > 16 ? 16 : a->argv[1].len), a->argv[1].p,
				   bench_kernel_name(kernel),
				   kernel == BENCH_CRC32 ? "KiB, at most 8" : "n");
	if (a->argc >= 3 && (!con_arg_u32(a->argv[2], K32_CON_BENCH_MAX_RUNS, &runs) || runs == 0))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "BENCH:%s: runs must be 1 to K32_CON_BENCH_MAX_RUNS (%u)",
				   bench_kernel_name(kernel), K32_CON_BENCH_MAX_RUNS);
	if (a->argc > 3)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, CON_MOD,
				   "BENCH:<kernel> takes at most a size and a run count: usage "
				   "K32_CMD:BENCH:crc32:4:5");
	struct bench_result r;
	bench_measure(kernel, arg, runs, con_clock, &r);
	bench_line_format(line, sizeof(line), &r);
	con_print(c, "%s", line);
	return K32_OK;
}

static k32_status_t cmd_tasks(struct con *c, const struct con_args *a, struct k32_err *err)
{
	static struct k32_task_info rows[K32_PLAT_MAX_TASKS]; /* one console task at a time */
	size_t count = 0;
	uint64_t now = k32_now_us();

	(void)a;
	(void)err;
	k32_plat()->task_list(rows, K32_PLAT_MAX_TASKS, &count);
	size_t shown = count < K32_PLAT_MAX_TASKS ? count : K32_PLAT_MAX_TASKS;
	for (size_t i = 0; i < shown; i++) {
		uint64_t up = now > rows[i].started_us ? now - rows[i].started_us : 0;
		double busy = up ? 100.0 * (double)rows[i].cpu_us / (double)up : 0.0;

		con_print(c, "K32_TASK name=%.*s run_ms=%llu up_ms=%llu busy=%.1f%% state=%s",
			  (int)K32_PLAT_TASK_NAME_LEN, rows[i].name,
			  (unsigned long long)(rows[i].cpu_us / 1000u),
			  (unsigned long long)(up / 1000u), busy,
			  rows[i].running ? "running" : "done");
	}
	con_print(c, "K32_TASKS count=%zu cores=%u now_ms=%llu", count, k32_plat()->core_count(),
		  (unsigned long long)(now / 1000u));
	return K32_OK;
}

static k32_status_t cmd_help(struct con *c, const struct con_args *a, struct k32_err *err)
{
	(void)a;
	(void)err;
	for (size_t i = 0; i < c->ncmds; i++)
		con_print(c, "K32_HELP " CON_PREFIX "%s", c->cmds[i].usage);
	return K32_OK;
}

const struct con_cmd con_builtin_cmds[] = {
    {"BENCH", 1, 3,
     "BENCH:<fib|crc32|sieve|sort|mandel|json>[:<n>[:<runs>]] or BENCH:hostcall:<calls>",
     cmd_bench},
    {"TASKS", 0, 0, "TASKS (platform tasks: CPU time run_ms and busy share since start)",
     cmd_tasks},
    {"HELP", 0, 0, "HELP (this list)", cmd_help},
};
const size_t con_builtin_count = sizeof(con_builtin_cmds) / sizeof(con_builtin_cmds[0]);
