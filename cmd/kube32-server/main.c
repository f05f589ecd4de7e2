/*
 * kube32-server - the control plane on its own (src/cplane): store + API server over HTTPS
 * + the scheduler and controllers + the pods/log and metrics.k8s.io proxies to the boards'
 * kubelets. The boards join it over the network (kube32-sim --join, or real boards).
 *
 *   kube32-server [--data-dir DIR] [--port N] [--host ADDR] [--kubeconfig PATH]
 *                 [--port-file PATH] [--insecure-http] [--handler-threads N]
 *                 [--no-tls-park] [--[no-]controllers] [--node-grace S] [--pod-eviction S]
 *                 [--store-accept-log-loss] [--store-max-bytes N] [--store-max-objects N]
 *   kube32-server --controllers-only --server URL (--token T | --token-file F)
 *                 [--ca-file CA] [--node-grace S] [--pod-eviction S]
 *
 * Opens (or creates) the store in DIR (store.log / store.snap / store.closed), the TLS material in
 * DIR/pki and the tokens file DIR/tokens, serves on ADDR:N (127.0.0.1:6443 by default; port 0 picks
 * a free one, written to --port-file), writes an admin kubeconfig (certificate- authority-data and
 * the admin token; DIR/admin.kubeconfig by default) and runs until SIGTERM or SIGINT, then stops
 * cleanly: the http server (closing every watch), the API server, the store (its log is already
 * fsynced).
 *
 * Requests are handled on --handler-threads tasks (default KUBE32_SERVER_HANDLER_THREADS,
 * 2: the API handlers are thread-safe, and a list or an fsynced write then does not hold up
 * the other connections; 0 handles them on the http loop task). --no-tls-park keeps every
 * TLS connection's mbedTLS record buffers for its whole life (see http.h, MEMORY); both
 * exist so tests/e2e/bench_api.py can measure the difference.
 *
 * --controllers starts the scheduler and controllers; --no-controllers serves the bare API
 * (no scheduler: pods stay Pending unless they name a node; nothing writes Events,
 * ReplicaSets or pods on its own), which tests/e2e/kubectl_e2e.sh, crash_e2e.py and
 * bench_api.py ask for. The default is KUBE32_SERVER_CONTROLLERS (1: they run).
 *
 * --controllers-only runs the scheduler and controllers alone, in this process, against the
 * control plane at URL (one started with --no-controllers), as kube-controller-manager and
 * kube-scheduler do: over HTTPS through src/kclient, with the admin token (from the
 * kubeconfig the server wrote, or DIR/tokens) and the server's CA (DIR/pki/ca.crt). Every
 * read and write goes through the server's authentication, validation and admission.
 *
 * The store's limits default to K32_SERVER_STORE_MAX_BYTES (128 MiB) and
 * K32_SERVER_STORE_MAX_OBJECTS (131,072), sized for 1,000 boards x 10 pods with their events
 * (a board's own control plane keeps K32_STORE_MAX_BYTES, 2 MiB); --store-max-bytes (a number
 * of bytes, or with a Ki/Mi/Gi suffix) and --store-max-objects change them. Memory is used as
 * objects arrive, not at start.
 *
 * SIGTERM and SIGINT reach it through the platform's stop request (stop_watch/stop_wait: a
 * self-pipe here; a board has no signals), so the main thread sleeps until then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"
#include "cplane/cplane.h"
#include "ctrl/ctrl.h"
#include "kclient/kclient.h"
#include "platform/k32_platform.h"

/* Whether the controllers run when neither --controllers nor --no-controllers is given. */
#ifndef KUBE32_SERVER_CONTROLLERS
#define KUBE32_SERVER_CONTROLLERS 1
#endif

/* Handler tasks by default (this machine and the control-plane board have two cores). */
#define KUBE32_SERVER_HANDLER_THREADS 2

/* Bounds of --store-max-bytes and --store-max-objects: below, bootstrap and a node barely
 * fit; above, the index (8 bytes a slot) and a snapshot (written from one buffer of about
 * the live bytes) stop being reasonable for one process. */
#define KUBE32_SERVER_STORE_MIN_BYTES	     (256u * 1024)
#define KUBE32_SERVER_STORE_MAX_BYTES_CEIL   (4ull * 1024 * 1024 * 1024)
#define KUBE32_SERVER_STORE_MIN_OBJECTS	     256
#define KUBE32_SERVER_STORE_MAX_OBJECTS_CEIL (1u << 24)

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: kube32-server [--data-dir DIR] [--port N] [--host ADDR] [--kubeconfig PATH]\n"
	    "                     [--port-file PATH] [--insecure-http] [--handler-threads N]\n"
	    "                     [--no-tls-park] [--[no-]controllers] [--node-grace S]\n"
	    "                     [--pod-eviction S] [--store-accept-log-loss]\n"
	    "                     [--store-max-bytes N] [--store-max-objects N]\n"
	    "  --data-dir DIR     store, certificates, tokens (default ./kube32-data)\n"
	    "  --port N           port to serve on; 0 picks a free one (default 6443)\n"
	    "  --host ADDR        address to bind (default 127.0.0.1)\n"
	    "  --kubeconfig PATH  where to write the admin kubeconfig (default "
	    "DIR/admin.kubeconfig)\n"
	    "  --port-file PATH   write the bound port there once serving\n"
	    "  --insecure-http    serve plain HTTP (kubectl then sends no token: tests only)\n"
	    "  --handler-threads N  tasks that run API handlers, 0..16; 0: on the http loop task\n"
	    "                     (default 2)\n"
	    "  --no-tls-park      keep idle TLS connections' record buffers (~33 KiB each)\n"
	    "  --store-accept-log-loss  open the store although its log is missing or short\n"
	    "                     (acknowledged writes lost; the store refuses without it)\n"
	    "  --store-max-bytes N  live object bytes the store keeps, N or N with Ki/Mi/Gi\n"
	    "                     (default %uMi, K32_SERVER_STORE_MAX_BYTES: 1,000 boards x 10 "
	    "pods)\n"
	    "  --store-max-objects N  objects the store keeps (default %u,\n"
	    "                     K32_SERVER_STORE_MAX_OBJECTS)\n"
	    "  --controllers      run the scheduler and controllers%s\n"
	    "  --no-controllers   no scheduler or controllers: the bare API server%s\n"
	    "  --node-grace S     seconds of Lease silence before a node is NotReady (default 40)\n"
	    "  --pod-eviction S   seconds from NotReady to evicting its pods (default 30)\n"
	    "  --controllers-only run only the scheduler and controllers, against --server\n"
	    "  --server URL       with --controllers-only: https://HOST:PORT of the control plane\n"
	    "  --token T          with --controllers-only: the admin token (or --token-file F)\n"
	    "  --ca-file CA       with --controllers-only over https: the server's pki/ca.crt\n",
	    (unsigned)(K32_SERVER_STORE_MAX_BYTES / (1024 * 1024)),
	    (unsigned)K32_SERVER_STORE_MAX_OBJECTS, KUBE32_SERVER_CONTROLLERS ? " (default)" : "",
	    KUBE32_SERVER_CONTROLLERS ? "" : " (default)");
}

/* Reads the first line of path (a token) into out; false with a message when it cannot. */
static bool read_token_file(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f || !fgets(out, (int)cap, f)) {
		fprintf(stderr, "kube32-server: --token-file %s: cannot read a token\n", path);
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	out[strcspn(out, "\r\n \t")] = 0;
	return out[0] != 0;
}

/* --controllers-only: the scheduler and controllers against a remote control plane. */
static int run_controllers_only(const char *url, const char *token, const char *ca_file,
				long node_grace, long pod_eviction)
{
	struct k32_err err;
	k32_err_clear(&err);
	struct kclient_http_config kc = {.url = url, .ca_file = ca_file, .bearer_token = token};
	struct kclient *client = NULL;
	if (kclient_http_new(&kc, &client, &err)) {
		fprintf(stderr, "kube32-server: --server %s: %s\n", url, err.msg);
		return 2;
	}
	/* one request first, so a wrong URL, CA or token fails here with its reason */
	struct k32_buf out;
	int code = 0;
	k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "version answer");
	k32_status_t st = kclient_do(client, "GET", "/api/v1/namespaces/default", NULL, NULL, 0,
				     &code, &out, &err);
	k32_buf_fini(&out);
	if (st || code != 200) {
		fprintf(stderr,
			"kube32-server: control plane %s: %s (HTTP %d); check --server, --ca-file "
			"and the admin --token\n",
			url, st ? err.msg : "refused", code);
		kclient_free(client);
		return 1;
	}
	struct ctrl_config cc = {.node_grace_s = (uint32_t)node_grace,
				 .pod_eviction_s = (uint32_t)pod_eviction};
	struct ctrl *c = NULL;
	if (ctrl_start(&cc, client, &c, &err)) {
		fprintf(stderr, "kube32-server: starting the controllers: %s\n", err.msg);
		kclient_free(client);
		return 1;
	}
	int rc = 0;
	if (k32_plat()->stop_watch(&err)) {
		fprintf(stderr, "kube32-server: cannot watch for SIGTERM/SIGINT: %s\n", err.msg);
		rc = 1;
	} else {
		fprintf(stderr,
			"kube32-server: scheduler and controllers running against %s (controllers "
			"only)\n",
			url);
		k32_plat()->stop_wait(K32_FOREVER);
		fprintf(stderr, "kube32-server: stopping\n");
	}
	ctrl_stop(c);
	kclient_free(client);
	return rc;
}

/* Parses N, NKi, NMi or NGi into *out within [min, max]; false (message printed) otherwise. */
static bool parse_size(const char *flag, const char *v, unsigned long long min,
		       unsigned long long max, unsigned long long *out)
{
	static const struct {
		const char *suffix;
		unsigned long long mult;
	} units[] = {{"", 1}, {"Ki", 1024}, {"Mi", 1024 * 1024}, {"Gi", 1024 * 1024 * 1024}};
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	if (end != v && v[0] != '-')
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix) && n <= max / units[i].mult &&
			    n * units[i].mult >= min) {
				*out = n * units[i].mult;
				return true;
			}
	fprintf(stderr, "kube32-server: %s %s: expected %llu..%llu (a number, or with Ki/Mi/Gi)\n",
		flag, v, min, max);
	return false;
}

int main(int argc, char **argv)
{
	k32_log_set_clock(k32_plat()->now_us); /* log lines carry the time since start */
	const char *data_dir = "./kube32-data", *host = "127.0.0.1", *kubeconfig = NULL;
	const char *port_file = NULL;
	long port = 6443, threads = KUBE32_SERVER_HANDLER_THREADS;
	long node_grace = 0, pod_eviction = 0;
	bool tls = true, tls_park = true, controllers = KUBE32_SERVER_CONTROLLERS;
	bool accept_log_loss = false;
	unsigned long long store_bytes = K32_SERVER_STORE_MAX_BYTES;
	unsigned long long store_objects = K32_SERVER_STORE_MAX_OBJECTS;
	bool controllers_only = false;
	const char *server_url = NULL, *token = NULL, *token_file = NULL, *ca_file = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--data-dir") && v) {
			data_dir = v;
			i++;
		} else if (!strcmp(a, "--port") && v) {
			char *end;
			port = strtol(v, &end, 10);
			if (*end || port < 0 || port > 65535) {
				fprintf(stderr, "kube32-server: --port %s: expected 0..65535\n", v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--host") && v) {
			host = v;
			i++;
		} else if (!strcmp(a, "--kubeconfig") && v) {
			kubeconfig = v;
			i++;
		} else if (!strcmp(a, "--port-file") && v) {
			port_file = v;
			i++;
		} else if (!strcmp(a, "--handler-threads") && v) {
			char *end;
			threads = strtol(v, &end, 10);
			if (*end || threads < 0 || threads > K32_HTTP_MAX_HANDLER_THREADS) {
				fprintf(stderr,
					"kube32-server: --handler-threads %s: expected 0..%d "
					"(K32_HTTP_MAX_HANDLER_THREADS)\n",
					v, K32_HTTP_MAX_HANDLER_THREADS);
				return 2;
			}
			i++;
		} else if ((!strcmp(a, "--node-grace") || !strcmp(a, "--pod-eviction")) && v) {
			char *end;
			long s = strtol(v, &end, 10);
			if (*end || s < 0 || s > 86400) {
				fprintf(stderr, "kube32-server: %s %s: expected 0..86400 seconds\n",
					a, v);
				return 2;
			}
			*(!strcmp(a, "--node-grace") ? &node_grace : &pod_eviction) = s;
			i++;
		} else if (!strcmp(a, "--no-controllers") || !strcmp(a, "--controllers")) {
			controllers = !strcmp(a, "--controllers");
		} else if (!strcmp(a, "--store-max-bytes") && v) {
			if (!parse_size(a, v, KUBE32_SERVER_STORE_MIN_BYTES,
					KUBE32_SERVER_STORE_MAX_BYTES_CEIL, &store_bytes))
				return 2;
			i++;
		} else if (!strcmp(a, "--store-max-objects") && v) {
			if (!parse_size(a, v, KUBE32_SERVER_STORE_MIN_OBJECTS,
					KUBE32_SERVER_STORE_MAX_OBJECTS_CEIL, &store_objects))
				return 2;
			i++;
		} else if (!strcmp(a, "--store-accept-log-loss")) {
			accept_log_loss = true;
		} else if (!strcmp(a, "--controllers-only")) {
			controllers_only = true;
		} else if (!strcmp(a, "--server") && v) {
			server_url = v;
			i++;
		} else if (!strcmp(a, "--token") && v) {
			token = v;
			i++;
		} else if (!strcmp(a, "--token-file") && v) {
			token_file = v;
			i++;
		} else if (!strcmp(a, "--ca-file") && v) {
			ca_file = v;
			i++;
		} else if (!strcmp(a, "--no-tls-park")) {
			tls_park = false;
		} else if (!strcmp(a, "--insecure-http")) {
			tls = false;
		} else {
			usage();
			return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
		}
	}
	if (controllers_only || server_url) {
		char tok[256];
		if (!controllers_only || !server_url) {
			fprintf(stderr, "kube32-server: --controllers-only and --server URL go "
					"together\n");
			return 2;
		}
		if (token_file) {
			if (!read_token_file(token_file, tok, sizeof(tok)))
				return 2;
			token = tok;
		}
		if (!token) {
			fprintf(stderr, "kube32-server: --controllers-only needs the admin token "
					"(--token T or --token-file F)\n");
			return 2;
		}
		return run_controllers_only(server_url, token, ca_file, node_grace, pod_eviction);
	}
	struct k32_err err;
	k32_err_clear(&err);
	const struct k32_platform_ops *plat = k32_plat();
	struct cplane_config cfg;
	cplane_config_init(&cfg);
	cfg.data_dir = data_dir;
	cfg.accept_log_loss = accept_log_loss;
	cfg.store_bytes = (size_t)store_bytes;
	cfg.store_objects = (uint32_t)store_objects;
	cfg.host = host;
	cfg.port = (uint16_t)port;
	cfg.tls = tls;
	cfg.controllers = controllers;
	cfg.node_grace_s = (uint32_t)node_grace;
	cfg.pod_eviction_s = (uint32_t)pod_eviction;
	cfg.handler_threads = (uint32_t)threads;
	cfg.tls_park = tls_park;
	/* armed before anything serves: a SIGTERM that comes as soon as the API answers is a stop
	 * request (stop_wait returns at once), not the default action killing the process */
	if (plat->stop_watch(&err)) {
		fprintf(stderr, "kube32-server: cannot watch for SIGTERM/SIGINT: %s\n", err.msg);
		return 1;
	}
	struct cplane *cp = NULL;
	if (cplane_start(&cfg, &cp, &err)) {
		fprintf(stderr,
			"kube32-server: starting the control plane on %s:%ld (data %s): %s\n", host,
			port, data_dir, err.msg);
		return 1;
	}
	uint16_t bound = cplane_port(cp);
	char kc_default[512];
	if (!kubeconfig) {
		snprintf(kc_default, sizeof(kc_default), "%s/admin.kubeconfig", data_dir);
		kubeconfig = kc_default;
	}
	int rc = 0;
	if (cplane_write_kubeconfig(kubeconfig, tls ? "https" : "http", host, bound,
				    cplane_ca_file(cp), cplane_admin_token(cp), &err)) {
		fprintf(stderr, "kube32-server: writing %s: %s\n", kubeconfig, err.msg);
		rc = 1;
		goto out_stop;
	}
	if (port_file) {
		char p[16];
		int n = snprintf(p, sizeof(p), "%u\n", (unsigned)bound);
		if (plat->file_write_atomic(port_file, p, (size_t)n, &err)) {
			fprintf(stderr, "kube32-server: writing %s: %s\n", port_file, err.msg);
			rc = 1;
			goto out_stop;
		}
	}
	fprintf(stderr, "kube32-server: serving on %s://%s:%u (%s), data in %s, kubeconfig %s\n",
		tls ? "https" : "http", host, (unsigned)bound,
		cplane_has_controllers(cp) ? "scheduler and controllers running" : "no controllers",
		data_dir, kubeconfig);
	plat->stop_wait(K32_FOREVER); /* SIGTERM or SIGINT */
	fprintf(stderr, "kube32-server: stopping\n");
out_stop:
	cplane_stop(cp);
	return rc;
}
