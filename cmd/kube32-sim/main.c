/*
 * kube32-sim - a kube32 cluster in one process: a control plane (store + API server over
 * HTTPS + scheduler and controllers) and N simulated boards, each with its own kubelet
 * (talking HTTP to the API server as a real board does), pod pool, interpreter stack,
 * image directory and pod HTTP server.
 *
 *   kube32-sim [--data-dir DIR] [--port N] [--host ADDR] [--kubeconfig PATH]
 *              [--boards PROFILE:COUNT,...] [--pod-port N] [--images DIR]
 *              [--host-pool BYTES] [--host-stack BYTES] [--port-file PATH]
 *              [--control-plane-only] [--no-controllers] [--insecure-http]
 *              [--node-grace S] [--pod-eviction S]
 *   kube32-sim --join URL --token TOKEN [--ca-file FILE] [--boards ...] [--node-name N] ...
 *
 * Boards are named <profile>-<n> (cardputer-1, cardputer-2, host-1) unless --node-name
 * names a single joining board. Their pod servers listen on --pod-port, --pod-port + 1, ...
 * (7000 by default; 0 picks free ports). Every board reads modules from --images
 * (DIR/images by default), its "SD card": an image "hello.wasm" is DIR/images/hello.wasm.
 *
 * With --join the process runs boards only and joins the control plane at URL (e.g.
 * https://127.0.0.1:6443) with TOKEN: the admin token (any board name) or a node token
 * (system:node:<name>, then --node-name must be that name). --ca-file is the control
 * plane's DATA/pki/ca.crt.
 *
 * Console: each board answers the K32_CMD: line protocol (PODS, MEM, TASKS, BENCH, HELP)
 * on stdin ("K32_CMD:PODS" for the first board, "cardputer-1
 * K32_CMD:MEM" for a named one) and on its pod server (POST /console).
 *
 * Hardware: a cardputer board has hardware.md's simulated I2C devices (src/sim/sim_hw.c:
 * envpro BME688, scale Mini Scales, tag RFID 2 behind a PCA9548A on bus 0) and binds driver
 * pods (annotation kube32.io/device) to them; its console also takes the hw_sim_command
 * lines: "cardputer-1 K32_CMD:hw set envpro temperature_c 30.5", "K32_CMD:rfid place tag
 * 5A3C910E", "K32_CMD:hw list" (stdin or POST /console).
 *
 * Stops cleanly on SIGTERM/SIGINT: the API server (ending every watch), the controllers,
 * then the boards. SIGTERM and SIGINT arrive as the platform's stop request (stop_wait).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"
#include "kubelet/klet.h"
#include "platform/k32_platform.h"
#include "sim/sim.h"

#define MAX_BOARDS K32_SIM_MAX_BOARDS

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: kube32-sim [options]\n"
	    "  --data-dir DIR        store, certificates, tokens (default ./kube32-data)\n"
	    "  --port N              API server port; 0 picks a free one (default 6443)\n"
	    "  --host ADDR           address to bind (default 127.0.0.1)\n"
	    "  --kubeconfig PATH     admin kubeconfig to write (default DIR/admin.kubeconfig)\n"
	    "  --boards SPEC         boards as PROFILE:COUNT,... with profiles devkit,\n"
	    "                        cardputer, host (default devkit:1,cardputer:1)\n"
	    "  --config FILE         boards from a file: lines \"PROFILE [count=N] [name=NAME]\",\n"
	    "                        \"host-pool=BYTES\", \"host-stack=BYTES\" (instead of\n"
	    "                        --boards; see README)\n"
	    "  --pod-port N          first board's pod HTTP port, next boards +1 (default 7000;\n"
	    "                        0: free ports)\n"
	    "  --images DIR          the boards' image directory (default DIR/images)\n"
	    "  --host-pool BYTES     pod pool of host boards (default 4194304)\n"
	    "  --host-stack BYTES    interpreter stack of host boards (default 65536)\n"
	    "  --port-file PATH      write the API port there once serving\n"
	    "  --control-plane-only  no boards\n"
	    "  --no-controllers      no scheduler or controllers (pods need spec.nodeName)\n"
	    "  --insecure-http       plain HTTP API (kubectl then sends no token: tests only)\n"
	    "  --node-grace S        seconds of Lease silence before a node is NotReady\n"
	    "  --pod-eviction S      seconds from NotReady to evicting its pods\n"
	    "  --join URL            run boards only, joining the control plane at URL\n"
	    "  --token TOKEN         with --join: admin or node token\n"
	    "  --ca-file FILE        with --join over https: the control plane's pki/ca.crt\n"
	    "  --node-name NAME      with --join: name of the single board\n"
	    "  --boot-report PROFILE print the free memory after each boot stage of a PROFILE\n"
	    "                        board (K32_BOOT lines; see docs/controllers.md) and exit\n"
	    "  --boot-pods N         pods of the report's last stage (default 2)\n"
	    "  --boot-image FILE     their module, in --images (default hello.wasm)\n"
	    "  --boot-devices        the last stage runs the board's three driver pods (its\n"
	    "                        simulated I2C devices as Devices; --images: apps/drivers)\n");
}

static bool parse_num(const char *flag, const char *v, unsigned long long max,
		      unsigned long long *out)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	if (!*v || *end || n > max) {
		fprintf(stderr, "kube32-sim: %s %s: expected a number 0..%llu\n", flag, v, max);
		return false;
	}
	*out = n;
	return true;
}

/* ---- console ----------------------------------------------------------------------------- */

struct console {
	struct klet **klets;
	int n;
	_Atomic bool done; /* console_main returned (end of input): it can be joined */
};

/*
 * The boards' consoles on stdin: "K32_CMD:..." goes to the first board, "NODE K32_CMD:..."
 * to that board; answers go to stdout. Ends at end of input.
 */
static void console_main(void *arg)
{
	struct console *c = arg;
	char line[256];
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 1 << 20, "console");
	while (fgets(line, sizeof(line), stdin)) {
		const char *cmd = line;
		struct klet *k = c->n ? c->klets[0] : NULL;
		const char *sp = strchr(line, ' ');
		if (sp && strncmp(line, "K32_CMD:", 8)) {
			k = NULL;
			for (int i = 0; i < c->n; i++)
				if (strlen(klet_node_name(c->klets[i])) == (size_t)(sp - line) &&
				    !strncmp(klet_node_name(c->klets[i]), line,
					     (size_t)(sp - line)))
					k = c->klets[i];
			cmd = sp + 1;
		}
		k32_buf_reset(&out);
		if (!k)
			k32_buf_printf(&out, NULL, "K32_ERR no such board: %.*s\n",
				       sp ? (int)(sp - line) : 0, line);
		else
			klet_console_exec(k, cmd, strlen(cmd), &out);
		fputs(k32_buf_cstr(&out), stdout);
		fflush(stdout);
	}
	k32_buf_fini(&out);
	c->done = true;
}

/* A board's console_ext: the simulated hardware's hw/rfid lines. TASKS, BENCH and HELP are
 * the kubelet's (src/console). */
static k32_status_t console_board(void *ctx, const char *cmd, struct k32_buf *out)
{
	return sim_hw_console(ctx, cmd, out);
}

/* "https://host:port" -> parts. */
static bool parse_url(const char *url, bool *tls, char *host, size_t cap, uint16_t *port)
{
	const char *p = url;
	if (!strncmp(p, "https://", 8)) {
		*tls = true;
		p += 8;
	} else if (!strncmp(p, "http://", 7)) {
		*tls = false;
		p += 7;
	} else {
		return false;
	}
	const char *colon = strrchr(p, ':');
	if (!colon || (size_t)(colon - p) >= cap)
		return false;
	memcpy(host, p, (size_t)(colon - p));
	host[colon - p] = 0;
	long n = strtol(colon + 1, NULL, 10);
	if (n <= 0 || n > 65535)
		return false;
	*port = (uint16_t)n;
	return true;
}

int main(int argc, char **argv)
{
	k32_log_set_clock(k32_plat()->now_us); /* log lines carry the time since start */
	const char *data_dir = "./kube32-data", *host = "127.0.0.1", *kubeconfig = NULL;
	static const char default_boards[] = "devkit:1,cardputer:1";
	const char *boards_spec = default_boards, *images = NULL, *port_file = NULL;
	const char *join = NULL, *token = NULL, *ca_file = NULL, *node_name = NULL;
	const char *boot_report = NULL, *boot_image = "hello.wasm", *config = NULL;
	unsigned long long boot_pods = 2;
	bool boot_devices = false;
	unsigned long long port = 6443, pod_port = 7000, host_pool = 0, host_stack = 0;
	unsigned long long node_grace = 0, pod_eviction = 0;
	bool cp_only = false, controllers = true, tls = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;
		if (!strcmp(a, "--control-plane-only")) {
			cp_only = true;
			continue;
		} else if (!strcmp(a, "--no-controllers")) {
			controllers = false;
			continue;
		} else if (!strcmp(a, "--insecure-http")) {
			tls = false;
			continue;
		} else if (!strcmp(a, "--boot-devices")) {
			boot_devices = true;
			continue;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return 0;
		}
		if (!v) {
			usage();
			fprintf(stderr, "kube32-sim: %s needs a value (or is unknown; see above)\n",
				a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--data-dir"))
			data_dir = v;
		else if (!strcmp(a, "--port"))
			ok = parse_num(a, v, 65535, &port);
		else if (!strcmp(a, "--host"))
			host = v;
		else if (!strcmp(a, "--kubeconfig"))
			kubeconfig = v;
		else if (!strcmp(a, "--boards"))
			boards_spec = v;
		else if (!strcmp(a, "--config"))
			config = v;
		else if (!strcmp(a, "--pod-port"))
			ok = parse_num(a, v, 65535, &pod_port);
		else if (!strcmp(a, "--images"))
			images = v;
		else if (!strcmp(a, "--host-pool"))
			ok = parse_num(a, v, 1ull << 32, &host_pool);
		else if (!strcmp(a, "--host-stack"))
			ok = parse_num(a, v, 64ull << 20, &host_stack);
		else if (!strcmp(a, "--port-file"))
			port_file = v;
		else if (!strcmp(a, "--node-grace"))
			ok = parse_num(a, v, 86400, &node_grace);
		else if (!strcmp(a, "--pod-eviction"))
			ok = parse_num(a, v, 86400, &pod_eviction);
		else if (!strcmp(a, "--join"))
			join = v;
		else if (!strcmp(a, "--token"))
			token = v;
		else if (!strcmp(a, "--ca-file"))
			ca_file = v;
		else if (!strcmp(a, "--node-name"))
			node_name = v;
		else if (!strcmp(a, "--boot-report"))
			boot_report = v;
		else if (!strcmp(a, "--boot-pods"))
			ok = parse_num(a, v, K32_KLET_MAX_PODS, &boot_pods);
		else if (!strcmp(a, "--boot-image"))
			boot_image = v;
		else {
			usage();
			fprintf(stderr, "kube32-sim: unknown option %s (the options are above)\n",
				a);
			return 2;
		}
		if (!ok)
			return 2;
	}
	struct k32_err err;
	k32_err_clear(&err);
	const struct k32_platform_ops *pl = k32_plat();
	static struct sim_conf conf;
	if (config) {
		uint8_t *text = NULL;
		size_t len = 0;
		k32_status_t st = pl->file_read_all(config, k32_default_allocator(),
						    K32_SIM_CONF_MAX_BYTES, &text, &len, &err);
		if (!st)
			st = sim_conf_parse((const char *)text, len, &conf, &err);
		if (text)
			k32_free(k32_default_allocator(), text, len + 1);
		if (st) {
			fprintf(stderr, "kube32-sim: --config %s: %s\n", config, err.msg);
			return 2;
		}
		if (boards_spec != default_boards) {
			fprintf(stderr, "kube32-sim: --config and --boards both name the boards; "
					"give one\n");
			return 2;
		}
	} else if (!cp_only && sim_conf_add_spec(&conf, boards_spec, &err)) {
		fprintf(stderr, "kube32-sim: --boards %s: %s\n", boards_spec, err.msg);
		return 2;
	}
	/* the flags win over the file */
	sim_profile_set_host(host_pool ? (size_t)host_pool : conf.host_pool,
			     host_stack ? (size_t)host_stack : conf.host_stack);
	int nboards = cp_only ? 0 : (int)conf.count;
	struct sim_conf_board *reqs = conf.boards;
	if (node_name) {
		if (nboards != 1) {
			fprintf(stderr,
				"kube32-sim: --node-name names one board; --boards asks for %d\n",
				nboards);
			return 2;
		}
		snprintf(reqs[0].name, sizeof(reqs[0].name), "%s", node_name);
	}
	char images_default[512], kc_default[600];
	if (!images) {
		snprintf(images_default, sizeof(images_default), "%s/images", data_dir);
		images = images_default;
	}
	if (pl->dir_create(data_dir, &err) || pl->dir_create(images, &err)) {
		fprintf(stderr, "kube32-sim: %s\n", err.msg);
		return 1;
	}

	if (boot_report) {
		/* without the module its pods never run: say so now, not after the 30 s wait */
		char img_path[1024];
		snprintf(img_path, sizeof(img_path), "%s/%s", images,
			 boot_devices ? "bme688.wasm" : boot_image);
		FILE *img = fopen(img_path, "rb");
		if (!img && (boot_pods || boot_devices)) {
			fprintf(stderr,
				"kube32-sim: --boot-report: the pods' module %s is not in %s: pass "
				"--images DIR (after make: --images build/apps/%s) or "
				"--boot-pods 0\n",
				boot_devices ? "bme688.wasm" : boot_image, images,
				boot_devices ? "drivers" : "examples");
			return 2;
		}
		if (img)
			fclose(img);
		struct sim_boot_config bc = {.profile = boot_report,
					     .data_dir = data_dir,
					     .image_dir = images,
					     .image = boot_image,
					     .pods = (uint32_t)boot_pods,
					     .tls = tls,
					     .devices = boot_devices};
		struct k32_buf out;
		k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "boot report");
		k32_log_set_level(K32_LOG_WARN);
		k32_status_t st = sim_boot_report(&bc, &out, &err);
		fputs(k32_buf_cstr(&out), stdout);
		k32_buf_fini(&out);
		if (st)
			fprintf(stderr, "kube32-sim: --boot-report %s: %s\n", boot_report, err.msg);
		return st ? 1 : 0;
	}

	struct cplane *cp = NULL;
	char api_host[128];
	uint16_t api_port = 0;
	bool api_tls = tls;
	char ca_path[600] = "";
	/* armed before anything serves: a SIGTERM that comes as soon as the API answers is a stop
	 * request (stop_wait returns at once), not the default action killing the process */
	if (pl->stop_watch(&err)) {
		fprintf(stderr, "kube32-sim: cannot watch for SIGTERM/SIGINT: %s\n", err.msg);
		return 1;
	}
	if (join) {
		if (!parse_url(join, &api_tls, api_host, sizeof(api_host), &api_port)) {
			fprintf(stderr, "kube32-sim: --join %s: expected https://HOST:PORT\n",
				join);
			return 2;
		}
		if (!token) {
			fprintf(stderr, "kube32-sim: --join needs --token (the admin token of the "
					"control plane's kubeconfig, or a node token)\n");
			return 2;
		}
		if (api_tls && !ca_file) {
			fprintf(stderr,
				"kube32-sim: --join %s needs --ca-file (the control plane's "
				"DATA/pki/ca.crt)\n",
				join);
			return 2;
		}
		if (ca_file)
			snprintf(ca_path, sizeof(ca_path), "%s", ca_file);
	} else {
		struct cplane_config cc;
		cplane_config_init(&cc);
		cc.data_dir = data_dir;
		cc.handler_threads = K32_SIM_API_HANDLER_THREADS;
		/* the simulated fleet's control plane is a host's, sized as kube32-server's
		 * (1,000 boards x 10 pods); the 2 MiB default filled at ~840 boards */
		cc.store_bytes = K32_SERVER_STORE_MAX_BYTES;
		cc.store_objects = K32_SERVER_STORE_MAX_OBJECTS;
		cc.host = host;
		cc.port = (uint16_t)port;
		cc.tls = tls;
		cc.controllers = controllers;
		cc.node_grace_s = (uint32_t)node_grace;
		cc.pod_eviction_s = (uint32_t)pod_eviction;
		if (cplane_start(&cc, &cp, &err)) {
			fprintf(stderr, "kube32-sim: starting the control plane on %s:%llu: %s\n",
				host, port, err.msg);
			if (err.status == K32_ERR_ALREADY_EXISTS)
				fprintf(stderr, "kube32-sim: the API port is taken: --port N picks "
						"another (--port 0: a free one)\n");
			return 1;
		}
		snprintf(api_host, sizeof(api_host), "%s", host);
		api_port = cplane_port(cp);
		if (cplane_ca_file(cp))
			snprintf(ca_path, sizeof(ca_path), "%s", cplane_ca_file(cp));
		if (!kubeconfig) {
			snprintf(kc_default, sizeof(kc_default), "%s/admin.kubeconfig", data_dir);
			kubeconfig = kc_default;
		}
		if (cplane_write_kubeconfig(kubeconfig, tls ? "https" : "http", host, api_port,
					    cplane_ca_file(cp), cplane_admin_token(cp), &err)) {
			fprintf(stderr, "kube32-sim: writing %s: %s\n", kubeconfig, err.msg);
			cplane_stop(cp);
			return 1;
		}
		if (port_file) {
			char p[16];
			int n = snprintf(p, sizeof(p), "%u\n", (unsigned)api_port);
			if (pl->file_write_atomic(port_file, p, (size_t)n, &err)) {
				fprintf(stderr, "kube32-sim: writing %s: %s\n", port_file, err.msg);
				cplane_stop(cp);
				return 1;
			}
		}
		fprintf(stderr,
			"kube32-sim: control plane on %s://%s:%u (%s), data in %s, kubeconfig %s\n",
			tls ? "https" : "http", host, (unsigned)api_port,
			cplane_has_controllers(cp) ? "scheduler and controllers running"
						   : "no controllers: pods need spec.nodeName",
			data_dir, kubeconfig);
	}

	struct klet *klets[MAX_BOARDS] = {0};
	static struct sim_hw *hws[MAX_BOARDS];
	static struct console con;
	struct k32_task *con_task = NULL;
	int rc = 0;
	for (int i = 0; i < nboards; i++) {
		char tok[128];
		const char *btoken = token;
		if (cp) {
			if (cplane_node_token(cp, reqs[i].name, tok, sizeof(tok), &err)) {
				fprintf(stderr, "kube32-sim: token for %s: %s\n", reqs[i].name,
					err.msg);
				rc = 1;
				goto out_stop;
			}
			btoken = tok[0] ? tok : NULL;
		}
		if (sim_profile_has_hw(reqs[i].profile) &&
		    sim_hw_new(reqs[i].name, reqs[i].profile, &hws[i], &err)) {
			fprintf(stderr, "kube32-sim: board %s: its simulated I2C devices: %s\n",
				reqs[i].name, err.msg);
			rc = 1;
			goto out_stop;
		}
		struct sim_board_config bc = {
		    .name = reqs[i].name,
		    .profile = reqs[i].profile,
		    .api_host = api_host,
		    .api_port = api_port,
		    .ca_file = api_tls ? ca_path : NULL,
		    .token = btoken,
		    /* /console, /stats, /containerLogs take the admin token of the kubeconfig
		     * (a joined board: the token it joined with, its .token) */
		    .cluster_token = cp ? cplane_admin_token(cp) : NULL,
		    .image_dir = images,
		    .pod_port = pod_port ? (uint16_t)(pod_port + (unsigned long long)i) : 0,
		    .console_ext = console_board,
		    .console_ext_ctx = hws[i],
		    .hw_node = sim_hw_node(hws[i]),
		    /* a short --node-grace: renew the lease three times per grace, or healthy
		     * boards flap NotReady */
		    .lease_renew_ms =
			node_grace && node_grace < 30 ? (uint32_t)node_grace * 1000 / 3 : 0,
		    /* many boards: their first registrations spread over
		     * K32_SIM_JOIN_SPREAD_MS_PER_BOARD a board (beyond 50 boards; at most
		     * K32_KLET_JOIN_BACKOFF_MAX_MS) */
		    .join_spread_ms =
			nboards > 50 ? (uint32_t)(nboards * K32_SIM_JOIN_SPREAD_MS_PER_BOARD >
							  K32_KLET_JOIN_BACKOFF_MAX_MS
						      ? K32_KLET_JOIN_BACKOFF_MAX_MS
						      : nboards * K32_SIM_JOIN_SPREAD_MS_PER_BOARD)
				     : 0,
		    /* boards of this process's own control plane: long watches, spread over
		     * [T, 2T) by board (Kubernetes' kubelet: 30-60 min), since its stop ends
		     * them at once; joined boards keep the kubelet's short one, which bounds
		     * how long their stop waits */
		    .watch_timeout_s =
			cp ? K32_SIM_LOCAL_WATCH_S + (uint32_t)(i * 7919) % K32_SIM_LOCAL_WATCH_S
			   : 0,
		};
		if (sim_board_start(&bc, &klets[i], &err)) {
			fprintf(stderr, "kube32-sim: board %s: %s\n", reqs[i].name, err.msg);
			if (err.status == K32_ERR_ALREADY_EXISTS && bc.pod_port)
				fprintf(stderr,
					"kube32-sim: pod port %u is taken: --pod-port N moves the "
					"boards' pod servers to N, N+1, ... (--pod-port 0: free "
					"ones)\n",
					(unsigned)bc.pod_port);
			rc = 1;
			goto out_stop;
		}
		if (cp && sim_board_attach(cp, klets[i], &err))
			fprintf(stderr, "kube32-sim: %s (logs of %s go through its pod server)\n",
				err.msg, reqs[i].name);
		fprintf(stderr,
			"kube32-sim: board %s (%s): pod pool %zu bytes, interpreter stack %zu "
			"bytes, pod server 127.0.0.1:%u, images %s\n",
			reqs[i].name, reqs[i].profile->name, reqs[i].profile->pod_pool_bytes,
			reqs[i].profile->interp_stack, (unsigned)klet_pod_http_port(klets[i]),
			images);
	}
	/* the boards' consoles on stdin (joined only if input ended: it may sit in fgets until
	 * the process exits) */
	con.klets = klets;
	con.n = nboards;
	if (nboards &&
	    pl->task_create(&con_task, "sim-console", console_main, &con, 64 * 1024, -1, &err))
		fprintf(stderr, "kube32-sim: no console: %s\n", err.msg);
	if (cp)
		fprintf(stderr, "kube32-sim: ready: KUBECONFIG=%s kubectl get nodes,pods -A\n",
			kubeconfig);
	else
		fprintf(stderr, "kube32-sim: %d board(s) joined %s\n", nboards, join);
	pl->stop_wait(K32_FOREVER); /* SIGTERM or SIGINT */
	fprintf(stderr, "kube32-sim: stopping\n");
out_stop:
	if (con_task && con.done)
		pl->task_join(con_task); /* else it waits in fgets: the process exit ends it */
	/* the API server first: its stop ends the boards' watches at once */
	for (int i = 0; i < nboards; i++)
		klet_stop_begin(klets[i]);
	cplane_stop(cp);
	for (int i = 0; i < nboards; i++) {
		klet_free(klets[i]);
		sim_hw_free(hws[i]);
	}
	return rc;
}
