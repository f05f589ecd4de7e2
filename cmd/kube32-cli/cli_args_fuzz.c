/*
 * cli_args_fuzz.c - libFuzzer harness for kube32-cli's argument parsers (cli_args.h). The
 * first byte picks the parser; the rest, split at NUL bytes, is argv (at most 32 arguments).
 * Every parser must return CLI_OK, CLI_USAGE or CLI_HELP, with a NUL-terminated message on
 * CLI_USAGE, whatever the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"

#define FUZZ_MAX_ARGS  32
#define FUZZ_MAX_BYTES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[FUZZ_MAX_BYTES + 1];
	if (size < 1 || size > FUZZ_MAX_BYTES)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = 0;
	char *argv[FUZZ_MAX_ARGS];
	int argc = 0;
	for (size_t at = 0; at < size - 1 && argc < FUZZ_MAX_ARGS;) {
		argv[argc++] = buf + at;
		at += strlen(buf + at) + 1;
	}
	char msg[CLI_MSG_LEN];
	msg[0] = 0;
	int rc;
	union {
		struct cli_deploy d;
		struct cli_console c;
		struct cli_logs l;
		struct cli_get g;
		struct cli_delete x;
		struct cli_top t;
		struct cli_status s;
	} o;
	char *moved[64];
	int nmoved = 0;
	switch (data[0] % 8) {
	case 0:
		rc = cli_parse_deploy(argc, argv, &o.d, msg, sizeof(msg));
		if (rc == CLI_OK && (!o.d.file || !o.d.name || !cli_valid_name(o.d.name)))
			abort();
		break;
	case 1:
		rc = cli_parse_console(argc, argv, &o.c, msg, sizeof(msg));
		if (rc == CLI_OK && (strncmp(o.c.line, "K32_CMD:", 8) || !strchr(o.c.line, '\n')))
			abort();
		break;
	case 2:
		rc = cli_parse_logs(argc, argv, &o.l, msg, sizeof(msg));
		if (rc == CLI_OK && (!o.l.pod || o.l.tail < -1))
			abort();
		break;
	case 3:
		rc = cli_parse_get(argc, argv, &o.g, msg, sizeof(msg));
		break;
	case 4:
		rc = cli_parse_delete(argc, argv, &o.x, msg, sizeof(msg));
		break;
	case 5:
		rc = cli_parse_top(argc, argv, &o.t, msg, sizeof(msg));
		break;
	case 6:
		rc = cli_parse_status(argc, argv, &o.s, msg, sizeof(msg));
		break;
	default:
		/* the global options move after the command: nothing lost, nothing added */
		rc = cli_hoist_globals(argc, argv, moved, 64, &nmoved, msg, sizeof(msg));
		if (rc == CLI_OK && (nmoved < 1 || nmoved > argc || moved[0][0] == '-'))
			abort();
		break;
	}
	if (rc != CLI_OK && rc != CLI_USAGE && rc != CLI_HELP)
		abort();
	if (rc == CLI_USAGE && (!msg[0] || !memchr(msg, 0, sizeof(msg))))
		abort();
	return 0;
}
