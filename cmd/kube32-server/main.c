/*
 * kube32-server - the control plane on its own: store + API server over HTTPS.
 *
 *   kube32-server [--data-dir DIR] [--port N] [--host ADDR] [--kubeconfig PATH]
 *                 [--port-file PATH] [--insecure-http] [--handler-threads N]
 *                 [--no-tls-park]
 *
 * Opens (or creates) the store in DIR (store.log / store.snap), the TLS material in DIR/pki
 * and the tokens file DIR/tokens, serves on ADDR:N (127.0.0.1:6443 by default; port 0
 * picks a free one, written to --port-file), writes an admin kubeconfig (certificate-
 * authority-data and the admin token; DIR/admin.kubeconfig by default) and runs until
 * SIGTERM or SIGINT, then stops cleanly: the http server (closing every watch), the API
 * server, the store (its log is already fsynced).
 *
 * Requests are handled on --handler-threads tasks (default KUBE32_SERVER_HANDLER_THREADS,
 * 2: the API handlers are thread-safe, and a list or an fsynced write then does not hold up
 * the other connections; 0 handles them on the http loop task). --no-tls-park keeps every
 * TLS connection's mbedTLS record buffers for its whole life (see http.h, MEMORY); both
 * exist so tests/e2e/bench_api.py can measure the difference.
 *
 * Signal handling is here, not in src/: it is OS-specific (a board has no SIGTERM).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "platform/k32_platform.h"
#include "store/store.h"

/* Handler tasks by default (this machine and the control-plane board have two cores). */
#define KUBE32_SERVER_HANDLER_THREADS 2

static volatile sig_atomic_t k32_stop;

static void on_signal(int sig)
{
	(void)sig;
	k32_stop = 1;
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: kube32-server [--data-dir DIR] [--port N] [--host ADDR] [--kubeconfig PATH]\n"
	    "                     [--port-file PATH] [--insecure-http] [--handler-threads N]\n"
	    "                     [--no-tls-park]\n"
	    "  --data-dir DIR     store, certificates, tokens (default ./kube32-data)\n"
	    "  --port N           port to serve on; 0 picks a free one (default 6443)\n"
	    "  --host ADDR        address to bind (default 127.0.0.1)\n"
	    "  --kubeconfig PATH  where to write the admin kubeconfig (default "
	    "DIR/admin.kubeconfig)\n"
	    "  --port-file PATH   write the bound port there once serving\n"
	    "  --insecure-http    serve plain HTTP (kubectl then sends no token: tests only)\n"
	    "  --handler-threads N  tasks that run API handlers, 0..16; 0: on the http loop task\n"
	    "                     (default 2)\n"
	    "  --no-tls-park      keep idle TLS connections' record buffers (~33 KiB each)\n");
}

static void b64(const uint8_t *in, size_t len, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < len ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? t[v & 63] : '=';
	}
	out[o] = 0;
}

static k32_status_t write_kubeconfig(const char *path, const char *scheme, const char *host,
				     uint16_t port, const char *ca_file, const char *token,
				     struct k32_err *err)
{
	const struct k32_platform_ops *plat = k32_plat();
	const struct k32_allocator *a = k32_default_allocator();
	char *ca64 = NULL;
	size_t ca64_len = 0;
	uint8_t *ca = NULL;
	size_t ca_len = 0;
	if (ca_file) {
		k32_status_t st = plat->file_read_all(ca_file, a, 64 * 1024, &ca, &ca_len, err);
		if (st)
			return st;
		ca64_len = (ca_len + 2) / 3 * 4 + 1;
		ca64 = k32_alloc(a, ca64_len);
		if (!ca64) {
			k32_free(a, ca, ca_len + 1);
			return k32_err_set(err, K32_ERR_NO_MEMORY, "kube32-server",
					   "out of memory");
		}
		b64(ca, ca_len, ca64);
		k32_free(a, ca, ca_len + 1);
	}
	size_t cap = 2048 + (ca64 ? strlen(ca64) : 0);
	char *text = k32_alloc(a, cap);
	if (!text) {
		k32_free(a, ca64, ca64_len);
		return k32_err_set(err, K32_ERR_NO_MEMORY, "kube32-server", "out of memory");
	}
	int n =
	    snprintf(text, cap,
		     "apiVersion: v1\n"
		     "kind: Config\n"
		     "clusters:\n"
		     "- name: kube32\n"
		     "  cluster:\n"
		     "    server: %s://%s:%u\n"
		     "%s%s%s"
		     "users:\n"
		     "- name: admin\n"
		     "  user:\n"
		     "    token: %s\n"
		     "contexts:\n"
		     "- name: kube32\n"
		     "  context:\n"
		     "    cluster: kube32\n"
		     "    user: admin\n"
		     "    namespace: default\n"
		     "current-context: kube32\n",
		     scheme, host, (unsigned)port, ca64 ? "    certificate-authority-data: " : "",
		     ca64 ? ca64 : "", ca64 ? "\n" : "", token);
	k32_free(a, ca64, ca64_len);
	k32_status_t st = plat->file_write_atomic(path, text, (size_t)n, err);
	k32_free(a, text, cap);
	return st;
}

int main(int argc, char **argv)
{
	const char *data_dir = "./kube32-data", *host = "127.0.0.1", *kubeconfig = NULL;
	const char *port_file = NULL;
	long port = 6443, threads = KUBE32_SERVER_HANDLER_THREADS;
	bool tls = true, tls_park = true;
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
		} else if (!strcmp(a, "--no-tls-park")) {
			tls_park = false;
		} else if (!strcmp(a, "--insecure-http")) {
			tls = false;
		} else {
			usage();
			return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
		}
	}
	struct k32_err err;
	k32_err_clear(&err);
	const struct k32_platform_ops *plat = k32_plat();
	if (plat->dir_create(data_dir, &err)) {
		fprintf(stderr, "kube32-server: %s\n", err.msg);
		return 1;
	}
	struct store_config scfg = {.data_dir = data_dir};
	struct store *store = NULL;
	if (store_open(&scfg, &store, &err)) {
		fprintf(stderr, "kube32-server: opening the store in %s: %s\n", data_dir, err.msg);
		return 1;
	}
	struct api_config acfg = {.store = store, .data_dir = data_dir, .bootstrap = true};
	char addr[96];
	snprintf(addr, sizeof(addr), "%s:%ld", host, port);
	acfg.server_addr = addr;
	struct api_server *api = NULL;
	if (api_server_new(&acfg, &api, &err)) {
		fprintf(stderr, "kube32-server: %s\n", err.msg);
		store_close(store);
		return 1;
	}
	struct http_server_config hcfg;
	http_server_config_init(&hcfg);
	hcfg.host = host;
	hcfg.port = (uint16_t)port;
	hcfg.handler = api_http_handler;
	hcfg.authenticate = api_http_authenticate;
	hcfg.ctx = api;
	hcfg.tls = tls;
	hcfg.data_dir = data_dir;
	hcfg.handler_threads = (uint32_t)threads;
	hcfg.tls_park = tls_park;
	struct http_server *srv = NULL;
	if (http_server_start(&hcfg, &srv, &err)) {
		fprintf(stderr, "kube32-server: serving on %s:%ld: %s\n", host, port, err.msg);
		api_server_free(api);
		store_close(store);
		return 1;
	}
	api_server_attach_http(api, srv);
	uint16_t bound = http_server_port(srv);
	char kc_default[512];
	if (!kubeconfig) {
		snprintf(kc_default, sizeof(kc_default), "%s/admin.kubeconfig", data_dir);
		kubeconfig = kc_default;
	}
	int rc = 0;
	if (write_kubeconfig(kubeconfig, tls ? "https" : "http", host, bound,
			     http_server_ca_file(srv), api_server_admin_token(api), &err)) {
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
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fprintf(stderr, "kube32-server: serving on %s://%s:%u, data in %s, kubeconfig %s\n",
		tls ? "https" : "http", host, (unsigned)bound, data_dir, kubeconfig);
	while (!k32_stop)
		plat->sleep_us(100000);
	fprintf(stderr, "kube32-server: stopping\n");
out_stop:
	http_server_stop(srv);
	api_server_free(api);
	store_close(store);
	return rc;
}
