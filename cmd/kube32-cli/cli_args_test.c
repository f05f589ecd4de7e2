/*
 * cli_args_test.c - kube32-cli's argument parsers, table-driven: each row is a command line
 * (split at spaces; "" for an empty argument), the result, and either the parsed fields or a
 * piece of the error message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args.h"

#define MAX_ARGS 16

/* Splits line at spaces into argv (in buf); "''" is an empty argument. */
static int split(const char *line, char *buf, size_t cap, char **argv)
{
	int argc = 0;
	snprintf(buf, cap, "%s", line);
	for (char *p = strtok(buf, " "); p && argc < MAX_ARGS; p = strtok(NULL, " "))
		argv[argc++] = strcmp(p, "''") ? p : p + 2;
	return argc;
}

static void expect_msg(const char *args, int rc, int want_rc, const char *msg, const char *want)
{
	if (rc != want_rc)
		fail_msg("[%s]: result %d, expected %d (message: %s)", args, rc, want_rc, msg);
	if (want && !strstr(msg, want))
		fail_msg("[%s]: message \"%s\" lacks \"%s\"", args, msg, want);
}

static void test_quantity(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int rc;
		uint64_t bytes;
	} cases[] = {
	    {"24Ki", 0, 24576},
	    {"65536", 0, 65536},
	    {"1Mi", 0, 1048576},
	    {"2Gi", 0, 2147483648ull},
	    {"3k", 0, 3000},
	    {"4M", 0, 4000000},
	    {"5G", 0, 5000000000ull},
	    {"", -1, 0},
	    {"0", -1, 0},
	    {"0Ki", -1, 0},
	    {"-1", -1, 0},
	    {"+1", -1, 0},
	    {"1.5Ki", -1, 0},
	    {"12Qi", -1, 0},
	    {"Ki", -1, 0},
	    {"24ki", -1, 0},
	    {"24Ki ", -1, 0},
	    {"9223372036854775807", 0, 9223372036854775807ull},
	    {"9223372036854775808", -1, 0},
	    {"99999999999999999999999", -1, 0},
	    {"9007199254740992Ki", -1, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0;
		int rc = cli_parse_quantity(cases[i].in, &v);
		if (rc != cases[i].rc || (rc == 0 && v != cases[i].bytes))
			fail_msg("quantity \"%s\": rc %d value %llu", cases[i].in, rc,
				 (unsigned long long)v);
	}
	assert_int_equal(cli_parse_quantity(NULL, &(uint64_t){0}), -1);
}

static void test_names(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool name, hw;
	} cases[] = {
	    {"hello", true, false},
	    {"a.b-c9", true, false},
	    {"", false, false},
	    {"-x", false, false},
	    {"x-", false, false},
	    {".x", false, false},
	    {"Hello", false, false},
	    {"a_b", false, false},
	    {"none", true, true},
	    {"i2c:bme688", false, true},
	    {"i2c:bme688,i2c:rfid", false, true},
	    {"i2c:", false, false},
	    {"i2c:a,", false, false},
	    {"i2c:a,,i2c:b", false, false},
	    {"spi:x", false, false},
	    {"i2c:a,spi:b", false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cli_valid_name(cases[i].s) != cases[i].name)
			fail_msg("name \"%s\"", cases[i].s);
		if (cli_valid_hardware(cases[i].s) != cases[i].hw)
			fail_msg("hardware \"%s\"", cases[i].s);
	}
	char longname[202];
	memset(longname, 'a', 201);
	longname[201] = 0;
	assert_false(cli_valid_name(longname));
	longname[200] = 0;
	assert_true(cli_valid_name(longname));
	assert_false(cli_valid_name(NULL));
}

static void test_deploy(void **state)
{
	(void)state;
	static const struct {
		const char *args;
		int rc;
		const char *msg; /* part of the message (errors) */
		const char *ns, *node, *hw, *budget;
		uint64_t mem;
		bool dry;
	} cases[] = {
	    {"p.wasm --name p", CLI_OK, NULL, "default", NULL, NULL, NULL, 0, false},
	    {"--name p -n dev --node host-1 --memory 24Ki p.wasm --dry-run", CLI_OK, NULL, "dev",
	     "host-1", NULL, NULL, 24576, true},
	    {"p.wasm --name p --hardware i2c:bme688,i2c:rfid --budget off", CLI_OK, NULL, "default",
	     NULL, "i2c:bme688,i2c:rfid", "off", 0, false},
	    {"p.wasm --name p --hardware none --budget 5000", CLI_OK, NULL, "default", NULL, NULL,
	     "5000", 0, false},
	    {"p.wasm --name p --help", CLI_HELP, NULL, NULL, NULL, NULL, NULL, 0, false},
	    {"-h", CLI_HELP, NULL, NULL, NULL, NULL, NULL, 0, false},
	    {"", CLI_USAGE, "deploy: FILE.wasm is missing", NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm", CLI_USAGE, "deploy: --name is required (the pod's name, e.g. --name hello)",
	     NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm q.wasm --name p", CLI_USAGE,
	     "deploy: expected one FILE.wasm, got an extra q.wasm", NULL, NULL, NULL, NULL, 0,
	     false},
	    {"p.wasm --name", CLI_USAGE, "deploy: --name needs a value", NULL, NULL, NULL, NULL, 0,
	     false},
	    {"p.wasm --name p --force", CLI_USAGE, "deploy: unknown option --force (see --help)",
	     NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm --name P", CLI_USAGE,
	     "must be lower-case letters, digits, '-' or '.' (got "
	     "name P, namespace default)",
	     NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm --name p -n Bad_NS", CLI_USAGE, "namespace Bad_NS", NULL, NULL, NULL, NULL, 0,
	     false},
	    {"p.wasm --name p --node -x", CLI_USAGE, "node -x", NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm --name p --memory 12Qi", CLI_USAGE,
	     "deploy: --memory 12Qi is not a quantity: use bytes or a Ki/Mi/Gi/k/M/G suffix, e.g. "
	     "24Ki",
	     NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm --name p --memory ''", CLI_USAGE, "--memory  is not a quantity", NULL, NULL,
	     NULL, NULL, 0, false},
	    {"p.wasm --name p --hardware spi:x", CLI_USAGE,
	     "deploy: --hardware spi:x: expected none or i2c:DEVICE[,i2c:DEVICE...], e.g. "
	     "i2c:bme688",
	     NULL, NULL, NULL, NULL, 0, false},
	    {"p.wasm --name p --budget 0", CLI_USAGE,
	     "deploy: --budget 0: expected off or a positive number of gas units per call", NULL,
	     NULL, NULL, NULL, 0, false},
	    {"p.wasm --name p --budget -5", CLI_USAGE, "--budget -5", NULL, NULL, NULL, NULL, 0,
	     false},
	    {"p.wasm --name p --budget 12x", CLI_USAGE, "--budget 12x", NULL, NULL, NULL, NULL, 0,
	     false},
	    {"p.wasm --name p --budget 99999999999999999999999", CLI_USAGE, "--budget 9999", NULL,
	     NULL, NULL, NULL, 0, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512], msg[CLI_MSG_LEN] = "";
		char *argv[MAX_ARGS];
		int argc = split(cases[i].args, buf, sizeof(buf), argv);
		struct cli_deploy o;
		int rc = cli_parse_deploy(argc, argv, &o, msg, sizeof(msg));
		expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
		if (rc != CLI_OK)
			continue;
		assert_string_equal(o.name, "p");
		assert_string_equal(o.file, "p.wasm");
		assert_string_equal(o.ns, cases[i].ns);
		if (cases[i].node)
			assert_string_equal(o.node, cases[i].node);
		else
			assert_null(o.node);
		if (cases[i].hw)
			assert_string_equal(o.hardware, cases[i].hw);
		else
			assert_null(o.hardware);
		if (cases[i].budget)
			assert_string_equal(o.budget, cases[i].budget);
		else
			assert_null(o.budget);
		assert_int_equal(o.memory_bytes, cases[i].mem);
		assert_int_equal(o.dry_run, cases[i].dry);
	}
}

static void test_console(void **state)
{
	(void)state;
	char long_cmd[200];
	snprintf(long_cmd, sizeof(long_cmd), "n %0*d", CLI_CONSOLE_CMD_MAX + 1, 0);
	char max_cmd[200];
	snprintf(max_cmd, sizeof(max_cmd), "n %0*d", CLI_CONSOLE_CMD_MAX, 0);
	const struct {
		const char *args;
		int rc;
		const char *msg;  /* errors */
		const char *line; /* the console line */
	} cases[] = {
	    {"host-1 TASKS", CLI_OK, NULL, "K32_CMD:TASKS\n"},
	    {"host-1 K32_CMD:MEM --kubeconfig k", CLI_OK, NULL, "K32_CMD:MEM\n"},
	    {"--kubeconfig k host-1 BENCH:crc32:4:5", CLI_OK, NULL, "K32_CMD:BENCH:crc32:4:5\n"},
	    {max_cmd, CLI_OK, NULL, NULL},
	    {"host-1", CLI_USAGE, "console: expected NODE CMD (CMD: PODS, MEM, TASKS or BENCH:...)",
	     NULL},
	    {"", CLI_USAGE, "console: expected NODE CMD", NULL},
	    {"host-1 TASKS MEM", CLI_USAGE, "console: expected NODE CMD, got an extra MEM", NULL},
	    {"host-1 TASKS --kubeconfig", CLI_USAGE, "console: --kubeconfig needs a value", NULL},
	    {"host-1 TASKS -x", CLI_USAGE, "console: unknown option -x (see --help)", NULL},
	    {"Host_1 TASKS", CLI_USAGE, "console: Host_1 is not a node name", NULL},
	    {"host-1 K32_CMD:", CLI_USAGE, "console: CMD must be one line of 1..127 bytes", NULL},
	    {"host-1 ''", CLI_USAGE, "CMD must be one line", NULL},
	    {long_cmd, CLI_USAGE, "CMD must be one line of 1..127 bytes", NULL},
	    {"host-1 TASKS --help", CLI_HELP, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512], msg[CLI_MSG_LEN] = "";
		char *argv[MAX_ARGS];
		int argc = split(cases[i].args, buf, sizeof(buf), argv);
		struct cli_console o;
		int rc = cli_parse_console(argc, argv, &o, msg, sizeof(msg));
		expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
		if (rc == CLI_OK && cases[i].line)
			assert_string_equal(o.line, cases[i].line);
	}
	/* a CMD with a newline in it (not splittable at spaces: built by hand) */
	char a0[] = "host-1", a1[] = "TASKS\nMEM";
	char *argv[] = {a0, a1};
	struct cli_console o;
	char msg[CLI_MSG_LEN];
	assert_int_equal(cli_parse_console(2, argv, &o, msg, sizeof(msg)), CLI_USAGE);
	assert_non_null(strstr(msg, "one line"));
}

static void test_logs(void **state)
{
	(void)state;
	static const struct {
		const char *args;
		int rc;
		const char *msg;
		const char *ns;
		bool prev, follow;
		int64_t tail;
	} cases[] = {
	    {"hi", CLI_OK, NULL, "default", false, false, -1},
	    {"hi -n dev --previous --tail 3", CLI_OK, NULL, "dev", true, false, 3},
	    {"-f hi --tail 0", CLI_OK, NULL, "default", false, true, 0},
	    {"--follow -p hi", CLI_USAGE, "logs: --previous and --follow do not go together", NULL,
	     false, false, 0},
	    {"", CLI_USAGE, "logs: expected POD [-n NAMESPACE]", NULL, false, false, 0},
	    {"hi ho", CLI_USAGE, "logs: expected one POD, got an extra ho", NULL, false, false, 0},
	    {"Hi", CLI_USAGE, "logs: expected POD", NULL, false, false, 0},
	    {"hi -n X", CLI_USAGE, "lower-case letters", NULL, false, false, 0},
	    {"hi --tail", CLI_USAGE, "logs: --tail needs a value", NULL, false, false, 0},
	    {"hi --tail -1", CLI_USAGE, "logs: --tail -1: expected a number of lines", NULL, false,
	     false, 0},
	    {"hi --tail 3x", CLI_USAGE, "--tail 3x", NULL, false, false, 0},
	    {"hi --tail 12345678901", CLI_USAGE, "--tail 12345678901", NULL, false, false, 0},
	    {"hi --since 1h", CLI_USAGE, "logs: unknown option --since (see --help)", NULL, false,
	     false, 0},
	    {"hi --help", CLI_HELP, NULL, NULL, false, false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512], msg[CLI_MSG_LEN] = "";
		char *argv[MAX_ARGS];
		int argc = split(cases[i].args, buf, sizeof(buf), argv);
		struct cli_logs o;
		int rc = cli_parse_logs(argc, argv, &o, msg, sizeof(msg));
		expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
		if (rc != CLI_OK)
			continue;
		assert_string_equal(o.pod, "hi");
		assert_string_equal(o.ns, cases[i].ns);
		assert_int_equal(o.previous, cases[i].prev);
		assert_int_equal(o.follow, cases[i].follow);
		assert_int_equal(o.tail, cases[i].tail);
	}
}

static void test_get_delete_top(void **state)
{
	(void)state;
	static const struct {
		char cmd; /* 'g'et, 'd'elete, 't'op */
		const char *args;
		int rc;
		const char *msg;
		enum cli_kind kind;
		const char *name, *ns;
		bool all, keep;
	} cases[] = {
	    {'g', "pods", CLI_OK, NULL, CLI_KIND_PODS, NULL, "default", false, false},
	    {'g', "po -A", CLI_OK, NULL, CLI_KIND_PODS, NULL, "default", true, false},
	    {'g', "pod hi -n dev", CLI_OK, NULL, CLI_KIND_PODS, "hi", "dev", false, false},
	    {'g', "nodes", CLI_OK, NULL, CLI_KIND_NODES, NULL, "default", false, false},
	    {'g', "node host-1", CLI_OK, NULL, CLI_KIND_NODES, "host-1", "default", false, false},
	    {'g', "modules --all-namespaces", CLI_OK, NULL, CLI_KIND_MODULES, NULL, "default", true,
	     false},
	    {'g', "", CLI_USAGE, "get: expected what to list: pods, nodes or modules", 0, NULL,
	     NULL, false, false},
	    {'g', "deployments", CLI_USAGE,
	     "get: unknown kind deployments: expected pods, nodes or modules", 0, NULL, NULL, false,
	     false},
	    {'g', "pods a b", CLI_USAGE, "get: expected pods|nodes|modules [NAME], got an extra b",
	     0, NULL, NULL, false, false},
	    {'g', "pods Hi", CLI_USAGE, "get: Hi is not a name", 0, NULL, NULL, false, false},
	    {'g', "nodes -n x", CLI_USAGE, "get: nodes have no namespace", 0, NULL, NULL, false,
	     false},
	    {'g', "pods -n x -A", CLI_USAGE, "get: give -n NAMESPACE or -A, not both", 0, NULL,
	     NULL, false, false},
	    {'g', "pods hi -A", CLI_USAGE, "get: -A lists every namespace", 0, NULL, NULL, false,
	     false},
	    {'g', "pods -n Bad", CLI_USAGE, "get: namespace Bad", 0, NULL, NULL, false, false},
	    {'g', "pods -o wide", CLI_USAGE, "get: unknown option -o", 0, NULL, NULL, false, false},
	    {'d', "hi", CLI_OK, NULL, 0, "hi", "default", false, false},
	    {'d', "pod hi -n dev --keep-module", CLI_OK, NULL, 0, "hi", "dev", false, true},
	    {'d', "po hi", CLI_OK, NULL, 0, "hi", "default", false, false},
	    {'d', "", CLI_USAGE, "delete: expected the POD to delete", 0, NULL, NULL, false, false},
	    {'d', "node n1", CLI_USAGE, "delete: only pods are deleted here", 0, NULL, NULL, false,
	     false},
	    {'d', "pod a b", CLI_USAGE, "delete: expected [pod] POD, got an extra b", 0, NULL, NULL,
	     false, false},
	    {'d', "Hi", CLI_USAGE, "delete: pod Hi, namespace default", 0, NULL, NULL, false,
	     false},
	    {'t', "pods", CLI_OK, NULL, CLI_KIND_PODS, NULL, "default", false, false},
	    {'t', "pods -A", CLI_OK, NULL, CLI_KIND_PODS, NULL, "default", true, false},
	    {'t', "nodes", CLI_OK, NULL, CLI_KIND_NODES, NULL, "default", false, false},
	    {'t', "", CLI_USAGE, "top: expected pods or nodes", 0, NULL, NULL, false, false},
	    {'t', "modules", CLI_USAGE, "top: expected pods or nodes, got modules", 0, NULL, NULL,
	     false, false},
	    {'t', "nodes -A", CLI_USAGE, "top: nodes have no namespace", 0, NULL, NULL, false,
	     false},
	    {'t', "pods x", CLI_USAGE, "top: expected pods|nodes, got an extra x", 0, NULL, NULL,
	     false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512], msg[CLI_MSG_LEN] = "";
		char *argv[MAX_ARGS];
		int argc = split(cases[i].args, buf, sizeof(buf), argv);
		int rc;
		if (cases[i].cmd == 'g') {
			struct cli_get o;
			rc = cli_parse_get(argc, argv, &o, msg, sizeof(msg));
			expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
			if (rc)
				continue;
			assert_int_equal(o.kind, cases[i].kind);
			if (cases[i].name)
				assert_string_equal(o.name, cases[i].name);
			else
				assert_null(o.name);
			assert_string_equal(o.ns, cases[i].ns);
			assert_int_equal(o.all_ns, cases[i].all);
		} else if (cases[i].cmd == 'd') {
			struct cli_delete o;
			rc = cli_parse_delete(argc, argv, &o, msg, sizeof(msg));
			expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
			if (rc)
				continue;
			assert_string_equal(o.pod, cases[i].name);
			assert_string_equal(o.ns, cases[i].ns);
			assert_int_equal(o.keep_module, cases[i].keep);
		} else {
			struct cli_top o;
			rc = cli_parse_top(argc, argv, &o, msg, sizeof(msg));
			expect_msg(cases[i].args, rc, cases[i].rc, msg, cases[i].msg);
			if (rc)
				continue;
			assert_int_equal(o.kind, cases[i].kind);
			assert_string_equal(o.ns, cases[i].ns);
			assert_int_equal(o.all_ns, cases[i].all);
		}
	}
}

/* A message longer than the caller's buffer is cut, never overflows. */
/* Global options before the command move after it; the command's parser then takes them. */
static void test_globals(void **state)
{
	(void)state;
	static const struct {
		const char *args;
		int rc;
		const char *want; /* the reordered line, or a piece of the message */
	} t[] = {
	    {"--kubeconfig X get pods", CLI_OK, "get pods --kubeconfig X"},
	    {"get pods --kubeconfig X", CLI_OK, "get pods --kubeconfig X"},
	    {"--kubeconfig A --kubeconfig B status -w", CLI_OK, "status -w --kubeconfig B"},
	    {"status", CLI_OK, "status"},
	    {"--kubeconfig", CLI_USAGE, "--kubeconfig needs a value"},
	    {"--kubeconfig X", CLI_USAGE, "expected a command"},
	    {"-n foo get pods", CLI_USAGE, "unknown option -n before the command"},
	    {"--help", CLI_HELP, NULL},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[256], msg[CLI_MSG_LEN] = "", *argv[MAX_ARGS], *out[MAX_ARGS];
		int argc = split(t[i].args, buf, sizeof(buf), argv), outc = 0;
		int rc = cli_hoist_globals(argc, argv, out, MAX_ARGS, &outc, msg, sizeof(msg));
		if (rc != CLI_OK) {
			expect_msg(t[i].args, rc, t[i].rc, msg, t[i].want);
			continue;
		}
		assert_int_equal(t[i].rc, CLI_OK);
		char line[256] = "";
		for (int j = 0; j < outc; j++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s",
				 j ? " " : "", out[j]);
		assert_string_equal(line, t[i].want);
	}
	/* the reordered line parses as the command's own */
	char buf[128], msg[CLI_MSG_LEN], *argv[MAX_ARGS], *out[MAX_ARGS];
	int argc = split("--kubeconfig K status --watch", buf, sizeof(buf), argv), outc = 0;
	assert_int_equal(cli_hoist_globals(argc, argv, out, MAX_ARGS, &outc, msg, sizeof(msg)),
			 CLI_OK);
	struct cli_status st;
	assert_int_equal(cli_parse_status(outc - 1, out + 1, &st, msg, sizeof(msg)), CLI_OK);
	assert_true(st.watch);
	assert_string_equal(st.kubeconfig, "K");
	struct cli_deploy d;
	argc = split("deploy p.wasm --name p --no-wait", buf, sizeof(buf), argv);
	expect_msg("deploy --no-wait", cli_parse_deploy(argc - 1, argv + 1, &d, msg, sizeof(msg)),
		   CLI_OK, msg, NULL);
	assert_true(d.no_wait);
	argc = split("deploy p.wasm --name p", buf, sizeof(buf), argv);
	assert_int_equal(cli_parse_deploy(argc - 1, argv + 1, &d, msg, sizeof(msg)), CLI_OK);
	assert_false(d.no_wait);
	assert_int_equal(d.timeout_ms, CLI_DEPLOY_TIMEOUT_MS);
	argc = split("deploy p.wasm --name p --timeout 2m", buf, sizeof(buf), argv);
	assert_int_equal(cli_parse_deploy(argc - 1, argv + 1, &d, msg, sizeof(msg)), CLI_OK);
	assert_int_equal(d.timeout_ms, 120000);
	argc = split("deploy p.wasm --name p --timeout 1.5s", buf, sizeof(buf), argv);
	expect_msg("deploy --timeout 1.5s",
		   cli_parse_deploy(argc - 1, argv + 1, &d, msg, sizeof(msg)), CLI_USAGE, msg,
		   "deploy: --timeout 1.5s: expected a duration such as 90s, 2m or 500ms (at most "
		   "24h; 0 waits without a limit)");
	argc = split("status extra", buf, sizeof(buf), argv);
	expect_msg("status extra", cli_parse_status(argc - 1, argv + 1, &st, msg, sizeof(msg)),
		   CLI_USAGE, msg, "status: expected no argument, got an extra extra");
}

/* kubectl's --timeout durations: ms, s, m, h, a plain number is seconds, at most a day. */
static void test_duration(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int rc;
		uint64_t ms;
	} t[] = {
	    {"90s", 0, 90000},	  {"2m", 0, 120000},
	    {"500ms", 0, 500},	  {"1h", 0, 3600000},
	    {"45", 0, 45000},	  {"0", 0, 0},
	    {"24h", 0, 86400000}, {"25h", -1, 0},
	    {"", -1, 0},	  {"s", -1, 0},
	    {"1.5s", -1, 0},	  {"-1s", -1, 0},
	    {"10d", -1, 0},	  {"99999999999999999999s", -1, 0},
	    {"1s ", -1, 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t ms = 12345;
		int rc = cli_parse_duration(t[i].in, &ms);
		if (rc != t[i].rc || (!rc && ms != t[i].ms))
			fail_msg("duration \"%s\": rc %d ms %llu, want rc %d ms %llu", t[i].in, rc,
				 (unsigned long long)ms, t[i].rc, (unsigned long long)t[i].ms);
	}
}

/* Every usage error whose message carries what the user typed, given 600 bytes of it (X):
 * the message fits CLI_MSG_LEN with room to spare and ends with its advice (the value is
 * clipped around "..."). */
static void test_long_values_whole(void **state)
{
	(void)state;
	enum { DEPLOY, CONSOLE, LOGS, GET, DELETE, TOP, GLOBAL };
	static const struct {
		int cmd;
		const char *args; /* X: the long value */
		const char *tail;
	} t[] = {
	    {DEPLOY, "p.wasm --name p --memory X", "e.g. 24Ki"},
	    {DEPLOY, "p.wasm --name p --hardware X", "e.g. i2c:bme688"},
	    {DEPLOY, "p.wasm --name p --timeout X", "0 waits without a limit)"},
	    {DEPLOY, "p.wasm --name p --budget X", "of gas units per call"},
	    {DEPLOY, "p.wasm --name X", "namespace default)"},
	    {DEPLOY, "p.wasm --name p -X", "(see --help)"},
	    {DEPLOY, "p.wasm X --name p", "got an extra aaaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaa"},
	    {DEPLOY, "p.wasm --name p --memory", "--memory needs a value"},
	    {CONSOLE, "X TASKS", "is not a node name"},
	    {LOGS, "p --tail X", "expected a number of lines"},
	    {GET, "X", "expected pods, nodes or modules"},
	    {GET, "pods X", "(lower-case letters, digits, '-' or '.')"},
	    {GET, "pods -n X", "expected lower-case letters, digits, '-' or '.'"},
	    {DELETE, "X p", "(delete [pod] POD), not aaaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaa"},
	    {DELETE, "pod X", "expected lower-case letters, digits, '-' or '.'"},
	    {TOP, "X", ", got aaaaaaaaaaaaaaaaaaaaaaaaa...aaaaaaaaaaaa"},
	    {GLOBAL, "-X status", "(the one global option is --kubeconfig PATH; see --help)"},
	};
	static char line[1024], buf[1024];
	char x[601], msg[CLI_MSG_LEN], *argv[MAX_ARGS];
	memset(x, 'a', sizeof(x) - 1);
	x[sizeof(x) - 1] = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *at = strchr(t[i].args, 'X');
		snprintf(line, sizeof(line), "%.*s%s%s", (int)(at ? at - t[i].args : 0), t[i].args,
			 at ? x : "", at ? at + 1 : t[i].args);
		int argc = split(line, buf, sizeof(buf), argv), rc = -1;
		struct cli_deploy d;
		struct cli_console c;
		struct cli_logs l;
		struct cli_get g;
		struct cli_delete del;
		struct cli_top tp;
		char *out[MAX_ARGS];
		int outc;
		msg[0] = 0;
		switch (t[i].cmd) {
		case DEPLOY:
			rc = cli_parse_deploy(argc, argv, &d, msg, sizeof(msg));
			break;
		case CONSOLE:
			rc = cli_parse_console(argc, argv, &c, msg, sizeof(msg));
			break;
		case LOGS:
			rc = cli_parse_logs(argc, argv, &l, msg, sizeof(msg));
			break;
		case GET:
			rc = cli_parse_get(argc, argv, &g, msg, sizeof(msg));
			break;
		case DELETE:
			rc = cli_parse_delete(argc, argv, &del, msg, sizeof(msg));
			break;
		case TOP:
			rc = cli_parse_top(argc, argv, &tp, msg, sizeof(msg));
			break;
		default:
			rc = cli_hoist_globals(argc, argv, out, MAX_ARGS, &outc, msg, sizeof(msg));
		}
		size_t n = strlen(msg), tl = strlen(t[i].tail);
		if (rc != CLI_USAGE || n >= sizeof(msg) / 2 || n < tl ||
		    strcmp(msg + n - tl, t[i].tail))
			fail_msg(
			    "[%.40s...]: rc %d, message (%zu bytes) \"%s\" should end with \"%s\"",
			    line, rc, n, msg, t[i].tail);
	}
}

static void test_short_buffer(void **state)
{
	(void)state;
	char a0[] = "p.wasm";
	char *argv[] = {a0};
	char msg[8];
	memset(msg, 'x', sizeof(msg));
	struct cli_deploy o;
	assert_int_equal(cli_parse_deploy(1, argv, &o, msg, sizeof(msg)), CLI_USAGE);
	assert_int_equal(strlen(msg), sizeof(msg) - 1);
	assert_int_equal(cli_parse_deploy(1, argv, &o, NULL, 0), CLI_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantity),	 cmocka_unit_test(test_names),
	    cmocka_unit_test(test_deploy),	 cmocka_unit_test(test_console),
	    cmocka_unit_test(test_logs),	 cmocka_unit_test(test_get_delete_top),
	    cmocka_unit_test(test_short_buffer), cmocka_unit_test(test_globals),
	    cmocka_unit_test(test_duration),	 cmocka_unit_test(test_long_values_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
