/*
 * cli_args.c - kube32-cli's command-line parsers (cli_args.h). Each command is a table of its
 * options (long name, short name, flag or value, where it goes in the command's struct) read
 * by one loop, then checks of the values: every message names the command, the offending
 * argument and what would be accepted.
 */
#include "cli_args.h"

#include "base/k32_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum opt_kind { OPT_FLAG, OPT_VALUE };

struct opt {
	const char *lng;    /* "--namespace" */
	const char *shrt;   /* "-n" or NULL */
	enum opt_kind kind; /* a bool flag, or a const char * value */
	size_t off;	    /* offset of the field in the command's struct */
};

/* Writes the message and returns CLI_USAGE. */
static int usage_msg(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage_msg(char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (cap)
		vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

/*
 * The common loop: options of the table into out, the rest into pos[0..max_pos) (*npos of
 * them). expect names the positionals for the "extra argument" message.
 */
static int parse_opts(const char *cmd, int argc, char **argv, const struct opt *opts, size_t nopts,
		      void *out, const char **pos, int max_pos, int *npos, const char *expect,
		      char *msg, size_t cap)
{
	*npos = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return CLI_HELP;
		const struct opt *o = NULL;
		for (size_t j = 0; j < nopts && !o; j++)
			if (!strcmp(a, opts[j].lng) || (opts[j].shrt && !strcmp(a, opts[j].shrt)))
				o = &opts[j];
		if (o && o->kind == OPT_FLAG) {
			*(bool *)((char *)out + o->off) = true;
			continue;
		}
		if (o) {
			if (i + 1 >= argc)
				return usage_msg(msg, cap, "%s: %s needs a value", cmd,
						 K32_CLIP(a));
			*(const char **)((char *)out + o->off) = argv[++i];
			continue;
		}
		if (a[0] == '-' && a[1])
			return usage_msg(msg, cap, "%s: unknown option %s (see --help)", cmd,
					 K32_CLIP(a));
		if (*npos >= max_pos)
			return usage_msg(msg, cap, "%s: expected %s, got an extra %s", cmd, expect,
					 K32_CLIP(a));
		pos[(*npos)++] = a;
	}
	return CLI_OK;
}

#define NOPTS(t) (sizeof(t) / sizeof((t)[0]))

int cli_parse_duration(const char *s, uint64_t *out_ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"", 1000}};
	uint64_t v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9' && v <= 86400000; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (p == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit))
			continue;
		if (v > 86400000 / units[i].ms)
			return -1;
		*out_ms = v * units[i].ms;
		return 0;
	}
	return -1;
}

int cli_parse_quantity(const char *s, uint64_t *out)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} t[] = {{"", 1},     {"Ki", 1024},   {"Mi", 1024 * 1024}, {"Gi", 1024ull << 20},
		 {"k", 1000}, {"M", 1000000}, {"G", 1000000000ull}};
	if (!s || *s < '0' || *s > '9')
		return -1;
	uint64_t v = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1; /* more digits than 64 bits hold */
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (size_t i = 0; i < NOPTS(t); i++) {
		if (strcmp(p, t[i].sfx))
			continue;
		if (v == 0 || v > (UINT64_MAX / 2) / t[i].mul)
			return -1;
		*out = v * t[i].mul;
		return 0;
	}
	return -1;
}

bool cli_valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > 200 || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

bool cli_valid_hardware(const char *s)
{
	if (!strcmp(s, "none"))
		return true;
	if (!*s)
		return false;
	const char *p = s;
	while (*p) {
		if (strncmp(p, "i2c:", 4))
			return false;
		p += 4;
		size_t n = strcspn(p, ",");
		if (!n)
			return false;
		p += n;
		if (*p == ',' && !*++p)
			return false; /* a trailing comma */
	}
	return true;
}

/* ---- global options, status ------------------------------------------------------------- */

int cli_hoist_globals(int argc, char **argv, char **out, int cap, int *outc, char *msg, size_t mcap)
{
	/* argv[0] is the first word after the program name */
	int i = 0, nglob = 0;
	char *glob[2];
	*outc = 0;
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return CLI_HELP;
		if (strcmp(argv[i], "--kubeconfig"))
			return usage_msg(msg, mcap,
					 "unknown option %s before the command (the one global "
					 "option is --kubeconfig PATH; see --help)",
					 K32_CLIP(argv[i]));
		if (i + 1 >= argc)
			return usage_msg(msg, mcap,
					 "--kubeconfig needs a value (a kubeconfig file)");
		if (nglob) /* given twice: the last wins, as in kubectl */
			nglob = 0;
		glob[nglob++] = argv[i];
		glob[nglob++] = argv[i + 1];
		i += 2;
	}
	if (i >= argc)
		return usage_msg(msg, mcap,
				 "expected a command (deploy, get, delete, logs, top, status or "
				 "console; see --help)");
	if (argc > cap)
		return usage_msg(msg, mcap, "too many arguments (%d)", argc);
	for (int j = i; j < argc; j++)
		out[(*outc)++] = argv[j];
	for (int j = 0; j < nglob; j++)
		out[(*outc)++] = glob[j];
	return CLI_OK;
}

int cli_parse_status(int argc, char **argv, struct cli_status *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--watch", "-w", OPT_FLAG, offsetof(struct cli_status, watch)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_status, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	const char *pos[1];
	int npos;
	return parse_opts("status", argc, argv, opts, NOPTS(opts), o, pos, 0, &npos, "no argument",
			  msg, cap);
}

/* ---- deploy -------------------------------------------------------------------------------- */

int cli_parse_deploy(int argc, char **argv, struct cli_deploy *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--name", NULL, OPT_VALUE, offsetof(struct cli_deploy, name)},
	    {"--namespace", "-n", OPT_VALUE, offsetof(struct cli_deploy, ns)},
	    {"--node", NULL, OPT_VALUE, offsetof(struct cli_deploy, node)},
	    {"--memory", NULL, OPT_VALUE, offsetof(struct cli_deploy, memory)},
	    {"--hardware", NULL, OPT_VALUE, offsetof(struct cli_deploy, hardware)},
	    {"--budget", NULL, OPT_VALUE, offsetof(struct cli_deploy, budget)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_deploy, kubeconfig)},
	    {"--dry-run", NULL, OPT_FLAG, offsetof(struct cli_deploy, dry_run)},
	    {"--no-wait", NULL, OPT_FLAG, offsetof(struct cli_deploy, no_wait)},
	    {"--timeout", NULL, OPT_VALUE, offsetof(struct cli_deploy, timeout)},
	};
	memset(o, 0, sizeof(*o));
	o->ns = "default";
	o->timeout_ms = CLI_DEPLOY_TIMEOUT_MS;
	const char *pos[1];
	int npos;
	int rc = parse_opts("deploy", argc, argv, opts, NOPTS(opts), o, pos, 1, &npos,
			    "one FILE.wasm", msg, cap);
	if (rc)
		return rc;
	if (!npos)
		return usage_msg(msg, cap, "deploy: FILE.wasm is missing (see --help)");
	o->file = pos[0];
	if (!o->name)
		return usage_msg(msg, cap,
				 "deploy: --name is required (the pod's name, e.g. --name hello)");
	if (!cli_valid_name(o->name) || !cli_valid_name(o->ns) ||
	    (o->node && !cli_valid_name(o->node)))
		return usage_msg(msg, cap,
				 "deploy: name, namespace and node must be lower-case letters, "
				 "digits, '-' or '.' (got name %s, namespace %s%s%s)",
				 K32_CLIP(o->name), K32_CLIP(o->ns), o->node ? ", node " : "",
				 K32_CLIP(o->node));
	if (o->memory && cli_parse_quantity(o->memory, &o->memory_bytes))
		return usage_msg(msg, cap,
				 "deploy: --memory %s is not a quantity: use bytes or a "
				 "Ki/Mi/Gi/k/M/G suffix, e.g. 24Ki",
				 K32_CLIP(o->memory));
	if (o->hardware && !cli_valid_hardware(o->hardware))
		return usage_msg(msg, cap,
				 "deploy: --hardware %s: expected none or "
				 "i2c:DEVICE[,i2c:DEVICE...], e.g. i2c:bme688",
				 K32_CLIP(o->hardware));
	if (o->timeout && cli_parse_duration(o->timeout, &o->timeout_ms))
		return usage_msg(msg, cap,
				 "deploy: --timeout %s: expected a duration such as 90s, 2m or "
				 "500ms (at most 24h; 0 waits without a limit)",
				 K32_CLIP(o->timeout));
	if (o->hardware && !strcmp(o->hardware, "none"))
		o->hardware = NULL;
	if (o->budget && strcmp(o->budget, "off")) {
		uint64_t g = 0;
		const char *p = o->budget;
		for (; *p >= '0' && *p <= '9' && g <= UINT64_MAX / 10 - 1; p++)
			g = g * 10 + (uint64_t)(*p - '0');
		if (p == o->budget || *p || !g)
			return usage_msg(msg, cap,
					 "deploy: --budget %s: expected off or a positive number "
					 "of gas units per call",
					 K32_CLIP(o->budget));
	}
	return CLI_OK;
}

/* ---- console ------------------------------------------------------------------------------- */

int cli_parse_console(int argc, char **argv, struct cli_console *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_console, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	const char *pos[2];
	int npos;
	int rc = parse_opts("console", argc, argv, opts, NOPTS(opts), o, pos, 2, &npos, "NODE CMD",
			    msg, cap);
	if (rc)
		return rc;
	if (npos < 2)
		return usage_msg(msg, cap,
				 "console: expected NODE CMD (CMD: PODS, MEM, TASKS or BENCH:...)");
	o->node = pos[0];
	if (!cli_valid_name(o->node))
		return usage_msg(msg, cap, "console: %s is not a node name", K32_CLIP(o->node));
	const char *c = !strncmp(pos[1], "K32_CMD:", 8) ? pos[1] + 8 : pos[1];
	if (!*c || strlen(c) > CLI_CONSOLE_CMD_MAX || strpbrk(c, "\r\n"))
		return usage_msg(msg, cap, "console: CMD must be one line of 1..%d bytes",
				 CLI_CONSOLE_CMD_MAX);
	snprintf(o->line, sizeof(o->line), "K32_CMD:%s\n", c);
	return CLI_OK;
}

/* ---- logs ---------------------------------------------------------------------------------- */

/* A count of lines: digits only, at most 10 of them. */
static bool parse_count(const char *s, int64_t *out)
{
	size_t n = strspn(s, "0123456789");
	if (!n || s[n] || n > 10)
		return false;
	*out = strtoll(s, NULL, 10);
	return true;
}

int cli_parse_logs(int argc, char **argv, struct cli_logs *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--namespace", "-n", OPT_VALUE, offsetof(struct cli_logs, ns)},
	    {"--previous", "-p", OPT_FLAG, offsetof(struct cli_logs, previous)},
	    {"--follow", "-f", OPT_FLAG, offsetof(struct cli_logs, follow)},
	    {"--tail", NULL, OPT_VALUE, offsetof(struct cli_logs, tail_arg)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_logs, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	o->ns = "default";
	o->tail = -1;
	const char *pos[1];
	int npos;
	int rc = parse_opts("logs", argc, argv, opts, NOPTS(opts), o, pos, 1, &npos, "one POD", msg,
			    cap);
	if (rc)
		return rc;
	o->pod = npos ? pos[0] : NULL;
	if (!o->pod || !cli_valid_name(o->pod) || !cli_valid_name(o->ns))
		return usage_msg(msg, cap,
				 "logs: expected POD [-n NAMESPACE] (lower-case letters, digits, "
				 "'-' or '.')");
	if (o->tail_arg && !parse_count(o->tail_arg, &o->tail))
		return usage_msg(msg, cap, "logs: --tail %s: expected a number of lines",
				 K32_CLIP(o->tail_arg));
	if (o->previous && o->follow)
		return usage_msg(msg, cap,
				 "logs: --previous and --follow do not go together (a previous "
				 "container has ended)");
	return CLI_OK;
}

/* ---- get, delete, top ---------------------------------------------------------------------- */

/* "pods"/"pod"/"po", "nodes"/"node"/"no", "modules"/"module"; 0 for anything else. */
static enum cli_kind kind_of(const char *s)
{
	static const struct {
		const char *name;
		enum cli_kind kind;
	} t[] = {{"pods", CLI_KIND_PODS},	{"pod", CLI_KIND_PODS},	     {"po", CLI_KIND_PODS},
		 {"nodes", CLI_KIND_NODES},	{"node", CLI_KIND_NODES},    {"no", CLI_KIND_NODES},
		 {"modules", CLI_KIND_MODULES}, {"module", CLI_KIND_MODULES}};
	for (size_t i = 0; i < NOPTS(t); i++)
		if (!strcmp(s, t[i].name))
			return t[i].kind;
	return 0;
}

/* Namespace checks shared by get and top. */
static int check_ns(const char *cmd, const char *ns, bool ns_given, bool all_ns, char *msg,
		    size_t cap)
{
	if (ns_given && all_ns)
		return usage_msg(msg, cap, "%s: give -n NAMESPACE or -A, not both", cmd);
	if (!cli_valid_name(ns))
		return usage_msg(
		    msg, cap, "%s: namespace %s: expected lower-case letters, digits, '-' or '.'",
		    cmd, K32_CLIP(ns));
	return CLI_OK;
}

int cli_parse_get(int argc, char **argv, struct cli_get *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--namespace", "-n", OPT_VALUE, offsetof(struct cli_get, ns)},
	    {"--all-namespaces", "-A", OPT_FLAG, offsetof(struct cli_get, all_ns)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_get, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	const char *pos[2];
	int npos;
	int rc = parse_opts("get", argc, argv, opts, NOPTS(opts), o, pos, 2, &npos,
			    "pods|nodes|modules [NAME]", msg, cap);
	if (rc)
		return rc;
	if (!npos)
		return usage_msg(msg, cap, "get: expected what to list: pods, nodes or modules");
	o->kind = kind_of(pos[0]);
	if (!o->kind)
		return usage_msg(msg, cap, "get: unknown kind %s: expected pods, nodes or modules",
				 K32_CLIP(pos[0]));
	o->name = npos > 1 ? pos[1] : NULL;
	if (o->name && !cli_valid_name(o->name))
		return usage_msg(msg, cap,
				 "get: %s is not a name (lower-case letters, digits, '-' or '.')",
				 K32_CLIP(o->name));
	bool ns_given = o->ns != NULL;
	if (!o->ns)
		o->ns = "default";
	if (o->kind == CLI_KIND_NODES && (ns_given || o->all_ns))
		return usage_msg(msg, cap, "get: nodes have no namespace: drop -n / -A");
	if (o->name && o->all_ns)
		return usage_msg(msg, cap, "get: -A lists every namespace; give -n NS for one %s",
				 K32_CLIP(o->name));
	return check_ns("get", o->ns, ns_given, o->all_ns, msg, cap);
}

int cli_parse_delete(int argc, char **argv, struct cli_delete *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--namespace", "-n", OPT_VALUE, offsetof(struct cli_delete, ns)},
	    {"--keep-module", NULL, OPT_FLAG, offsetof(struct cli_delete, keep_module)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_delete, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	o->ns = "default";
	const char *pos[2];
	int npos;
	int rc = parse_opts("delete", argc, argv, opts, NOPTS(opts), o, pos, 2, &npos, "[pod] POD",
			    msg, cap);
	if (rc)
		return rc;
	/* "delete pod NAME" as kubectl spells it, or just "delete NAME" */
	if (npos == 2 && kind_of(pos[0]) != CLI_KIND_PODS)
		return usage_msg(msg, cap,
				 "delete: only pods are deleted here (delete [pod] POD), not %s",
				 K32_CLIP(pos[0]));
	o->pod = npos ? pos[npos - 1] : NULL;
	if (!o->pod)
		return usage_msg(msg, cap, "delete: expected the POD to delete");
	if (!cli_valid_name(o->pod) || !cli_valid_name(o->ns))
		return usage_msg(msg, cap,
				 "delete: pod %s, namespace %s: expected lower-case letters, "
				 "digits, '-' or '.'",
				 K32_CLIP(o->pod), K32_CLIP(o->ns));
	return CLI_OK;
}

int cli_parse_top(int argc, char **argv, struct cli_top *o, char *msg, size_t cap)
{
	static const struct opt opts[] = {
	    {"--namespace", "-n", OPT_VALUE, offsetof(struct cli_top, ns)},
	    {"--all-namespaces", "-A", OPT_FLAG, offsetof(struct cli_top, all_ns)},
	    {"--kubeconfig", NULL, OPT_VALUE, offsetof(struct cli_top, kubeconfig)},
	};
	memset(o, 0, sizeof(*o));
	const char *pos[1];
	int npos;
	int rc = parse_opts("top", argc, argv, opts, NOPTS(opts), o, pos, 1, &npos, "pods|nodes",
			    msg, cap);
	if (rc)
		return rc;
	o->kind = npos ? kind_of(pos[0]) : 0;
	if (o->kind != CLI_KIND_PODS && o->kind != CLI_KIND_NODES)
		return usage_msg(msg, cap, "top: expected pods or nodes%s%s", npos ? ", got " : "",
				 K32_CLIP(npos ? pos[0] : ""));
	bool ns_given = o->ns != NULL;
	if (!o->ns)
		o->ns = "default";
	if (o->kind == CLI_KIND_NODES && (ns_given || o->all_ns))
		return usage_msg(msg, cap, "top: nodes have no namespace: drop -n / -A");
	return check_ns("top", o->ns, ns_given, o->all_ns, msg, cap);
}
