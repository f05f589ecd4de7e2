/*
 * console.h - the node console: the K32_CMD: line protocol of a node's serial console (the
 * benchmarks page, "Repeating the measurements"), as a portable module. The embedder feeds
 * it bytes (a UART, stdin, a socket) and gives it a write function; it answers each command
 * line with result lines.
 *
 * Commands and their answers:
 *
 *   K32_CMD:BENCH:crc32:4:5
 *     K32_BENCH kernel=crc32 n=4 runs=5 us_min=.. us_total=.. sum=..
 *   K32_CMD:BENCH:hostcall:100000
 *     K32_BENCH hostcall calls=100000 us=..
 *   K32_CMD:TASKS
 *     K32_TASK name=.. run_ms=.. up_ms=.. busy=..% state=..   (one per platform task)
 *     K32_TASKS count=N cores=C uptime_ms=..
 *   K32_CMD:HELP
 *     K32_HELP <usage>                                         (one per command)
 *
 * Lines that do not start with "K32_CMD:" are ignored (the console also carries the node's
 * log). A bad command answers one line "K32_ERR <what failed, the value, what to do>".
 * Fields are separated by ':'; a line is at most K32_CON_LINE_MAX bytes (a longer one is
 * answered with K32_ERR once and skipped to its newline); "\r\n" and "\n" both end a line.
 *
 * The command table is the caller's: con_builtin_cmds holds BENCH, TASKS and HELP, and an
 * embedder can pass its own table (its entries' fn get the parsed fields).
 *
 * Context: one struct con per console, used from one task at a time; con_feed runs commands
 * synchronously on the caller's task (BENCH keeps it busy for the whole run). Nothing is
 * allocated; the line buffer lives in struct con.
 */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_buf.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

#define CON_PREFIX "K32_CMD:"

struct con;

/* Receives each output line, with its '\n'. */
typedef void (*con_write_fn)(void *user, const char *s, size_t len);

/* A parsed command line: the command name and its ':'-separated fields (views into the
 * line). */
struct con_args {
	struct k32_str name;		       /* "BENCH" */
	struct k32_str argv[K32_CON_MAX_ARGS]; /* fields after it */
	uint32_t argc;			       /* number of fields */
};

/* One command. fn writes its answer with con_print; on failure it returns a status and
 * sets err, and the console writes "K32_ERR <err->msg>". */
struct con_cmd {
	const char *name;  /* upper case, matched exactly */
	uint32_t min_args; /* fields required */
	uint32_t max_args; /* fields allowed */
	const char *usage; /* "BENCH:<kernel>:<n>:<runs>" for HELP and errors */
	k32_status_t (*fn)(struct con *c, const struct con_args *a, struct k32_err *err);
};

struct con {
	const struct con_cmd *cmds;	 /* the command table */
	size_t ncmds;			 /* its entries */
	con_write_fn write;		 /* where answers go */
	void *user;			 /* passed to write */
	char line[K32_CON_LINE_MAX + 1]; /* the line being received */
	size_t len;			 /* bytes in line */
	bool overflow;			 /* the current line passed K32_CON_LINE_MAX */
	uint32_t lines;			 /* commands executed (including failed ones) */
	uint32_t errors;		 /* K32_ERR lines written */
};

/* The built-in commands: BENCH, TASKS, HELP. */
extern const struct con_cmd con_builtin_cmds[];
extern const size_t con_builtin_count;

/* Sets up c with a command table (kept by pointer) and an output function. */
void con_init(struct con *c, const struct con_cmd *cmds, size_t ncmds, con_write_fn write,
	      void *user);

/* Feeds len received bytes; every complete line is handled as it ends. Never fails: bad
 * input is answered with K32_ERR lines. */
void con_feed(struct con *c, const char *data, size_t len);

/*
 * Handles one line (without its newline).
 * @retval K32_OK               a command ran, or the line was not a command (ignored)
 * @retval K32_ERR_INVALID_ARGS a malformed line or wrong field count (K32_ERR written)
 * @retval K32_ERR_NOT_FOUND    an unknown command (K32_ERR written)
 * @retval other                the command's own failure (K32_ERR written)
 */
k32_status_t con_exec(struct con *c, const char *line, size_t len);

/*
 * Splits a line "K32_CMD:NAME:f1:f2" into name and fields, without running it.
 * @retval K32_OK               parsed
 * @retval K32_ERR_NOT_FOUND    the line does not start with K32_CMD: (not for us)
 * @retval K32_ERR_INVALID_ARGS empty command name, a name with characters outside A-Z0-9_,
 *                              more than K32_CON_MAX_ARGS fields, a line longer than
 *                              K32_CON_LINE_MAX or with a control character (err says which)
 */
k32_status_t con_parse(const char *line, size_t len, struct con_args *out, struct k32_err *err);

/* Writes one formatted answer line (a '\n' is added; cut at K32_CON_LINE_MAX bytes). */
void con_print(struct con *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a decimal field (at most max). False for anything else. */
bool con_arg_u32(struct k32_str s, uint32_t max, uint32_t *out);

#endif /* CONSOLE_H */
