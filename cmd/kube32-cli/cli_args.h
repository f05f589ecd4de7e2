/*
 * cli_args.h - kube32-cli's command-line parsers: one function per command turns argv (after
 * the command word) into an options struct, or says in msg what is wrong and what to type
 * instead. They only read argv and check values: no I/O, no allocation; the strings in the
 * structs point into argv. main.c prints msg as "kube32-cli: <msg>" and exits 2.
 *
 * Shared syntax: options and positionals in any order, "--opt VALUE" (no "--opt=VALUE"),
 * "-n" for --namespace, "--kubeconfig PATH" on every command that talks to the cluster,
 * "-h"/"--help" anywhere gives CLI_HELP.
 *
 * Context: any thread; re-entrant (msg is the caller's).
 */
#ifndef KUBE32_CLI_ARGS_H
#define KUBE32_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results (also kube32-cli's exit codes where they overlap). */
#define CLI_OK	  0 /* parsed: run the command */
#define CLI_USAGE 2 /* bad usage or input: msg says why */
#define CLI_HELP  3 /* --help: print the usage, exit 0 */

/* Room for a message (callers pass at least this). */
#define CLI_MSG_LEN 512

/* The longest console command after "K32_CMD:" (the kubelet's console line limit). */
#define CLI_CONSOLE_CMD_MAX 127

/* deploy FILE.wasm --name N [--namespace NS] [--node NODE] [--memory Q] [--hardware H]
 *        [--budget off|N] [--dry-run] [--no-wait] [--kubeconfig PATH] */
struct cli_deploy {
	const char *file;	/* FILE.wasm */
	const char *name;	/* --name: the pod (and module) name */
	const char *ns;		/* --namespace / -n, default "default" */
	const char *node;	/* --node or NULL */
	const char *memory;	/* --memory as given ("24Ki") or NULL */
	uint64_t memory_bytes;	/* its value in bytes (0 when not given) */
	const char *hardware;	/* --hardware, NULL when not given or "none" */
	const char *budget;	/* --budget "off" or a positive number, or NULL */
	const char *kubeconfig; /* --kubeconfig or NULL */
	bool dry_run;		/* --dry-run */
	bool no_wait;		/* --no-wait: return once the pod is created */
	const char *timeout;	/* --timeout as given ("90s", "2m", "0": no limit), or NULL */
	uint64_t timeout_ms; /* how long deploy waits for Ready (default CLI_DEPLOY_TIMEOUT_MS) */
};

/* How long deploy waits for the pod to be Ready without --timeout. */
#define CLI_DEPLOY_TIMEOUT_MS 60000

/* console NODE CMD [--kubeconfig PATH] */
struct cli_console {
	const char *node;
	const char *kubeconfig;
	char line[CLI_CONSOLE_CMD_MAX + 16]; /* "K32_CMD:<CMD>\n" (a given K32_CMD: is kept once) */
};

/* logs POD [-n NS] [--previous|-p] [--tail N] [--follow|-f] [--kubeconfig PATH] */
struct cli_logs {
	const char *pod;
	const char *ns;
	const char *kubeconfig;
	bool previous;
	bool follow;
	const char *tail_arg; /* --tail as given, or NULL */
	int64_t tail;	      /* its value; -1: all lines */
};

/* What get / top / delete act on. */
enum cli_kind {
	CLI_KIND_PODS = 1,
	CLI_KIND_NODES,
	CLI_KIND_MODULES, /* the module store: ConfigMaps labelled kube32.io/module */
};

/* get pods|nodes|modules [NAME] [-n NS | -A] [--kubeconfig PATH] */
struct cli_get {
	enum cli_kind kind;
	const char *name; /* one object, or NULL for the list */
	const char *ns;
	bool all_ns; /* -A / --all-namespaces (pods, modules) */
	const char *kubeconfig;
};

/* delete POD [-n NS] [--keep-module] [--kubeconfig PATH]: the pod and, unless kept, the
 * module ConfigMap POD.wasm that deploy made for it */
struct cli_delete {
	const char *pod;
	const char *ns;
	bool keep_module;
	const char *kubeconfig;
};

/* top pods|nodes [-n NS | -A] [--kubeconfig PATH] */
struct cli_top {
	enum cli_kind kind; /* pods or nodes */
	const char *ns;
	bool all_ns;
	const char *kubeconfig;
};

/* status [-w|--watch] [--kubeconfig PATH]: boards, pool, pods and their endpoints, devices */
struct cli_status {
	bool watch;
	const char *kubeconfig;
};

/*
 * The global options given before the command word ("kube32-cli --kubeconfig X get pods"):
 * fills out[0..*outc) with the command word, its arguments, then the global options, so each
 * command's parser sees them as its own. out has room for cap pointers (argc is enough).
 * Returns CLI_OK, CLI_HELP (--help before any command) or CLI_USAGE with msg (no command,
 * a global option without its value, an unknown option before the command).
 */
int cli_hoist_globals(int argc, char **argv, char **out, int cap, int *outc, char *msg,
		      size_t mcap);

int cli_parse_status(int argc, char **argv, struct cli_status *out, char *msg, size_t cap);
int cli_parse_deploy(int argc, char **argv, struct cli_deploy *out, char *msg, size_t cap);
int cli_parse_console(int argc, char **argv, struct cli_console *out, char *msg, size_t cap);
int cli_parse_logs(int argc, char **argv, struct cli_logs *out, char *msg, size_t cap);
int cli_parse_get(int argc, char **argv, struct cli_get *out, char *msg, size_t cap);
int cli_parse_delete(int argc, char **argv, struct cli_delete *out, char *msg, size_t cap);
int cli_parse_top(int argc, char **argv, struct cli_top *out, char *msg, size_t cap);

/*
 * A Kubernetes memory quantity as bytes: digits with an optional Ki, Mi, Gi, k, M or G
 * suffix ("24Ki" = 24576). 0 on success; -1 for anything else (empty, sign, fraction, other
 * suffix, zero, or a value over 2^63).
 */
int cli_parse_quantity(const char *s, uint64_t *out);
/* A duration as kubectl's --timeout takes it: digits with ms, s, m or h (a plain number is
 * seconds): "90s", "2m", "500ms". 0 on success (*out_ms, 0 for "0"); -1 for anything else
 * or over a day. */
int cli_parse_duration(const char *s, uint64_t *out_ms);
/* A name kube32-cli accepts for pods, namespaces and nodes: 1..200 of a-z 0-9 '-' '.', not
 * starting or ending with '-' or '.'. */
bool cli_valid_name(const char *s);
/* "none", or "i2c:DEV[,i2c:DEV...]" with non-empty DEVs (the scheduler's kube32.io/hardware). */
bool cli_valid_hardware(const char *s);

#endif /* KUBE32_CLI_ARGS_H */
