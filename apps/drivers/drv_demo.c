/*
 * drv_demo.c - drivers-demo: the demo in one process, until the kubelet and the
 * simulator wire the same pieces in (see docs/hardware.md). It serves the API on
 * 127.0.0.1 (plain HTTP, no authentication: a local demo only), creates three Devices on
 * node cardputer-1 (ENV Pro on PaHUB channel 2, Mini Scales on 1, RFID 2 on 0), runs the
 * Device controller, a stand-in kubelet that runs the driver pods (the built .wasm) over the
 * simulated board in real time, and reads simulator commands from stdin:
 *
 *   build/apps/drivers/drivers-demo --port 8080 &
 *   kubectl --server http://127.0.0.1:8080 get devices -w
 *   (stdin)  hw set envpro temperature_c 30 | hw set scale weight_g 250 |
 *            rfid place tag 5A3C910E | rfid remove tag | hw list | quit
 *
 * Usage: drivers-demo [--port N] [--seconds S]   (S > 0: exit after S seconds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "ctrl/ctrl.h"
#include "hw/hw.h"
#include "wasm/wrt.h"

#define NODE "cardputer-1"
#define DEVS "/apis/kube32.io/v1alpha1/namespaces/default/devices"
#define MAXP 8

struct kpod {
	struct hw_node_pod slot;
	char name[HW_NAME_LEN];
	uint8_t *bytes;
	size_t len;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t f_tick;
	uint64_t next_us;
	bool dead;
};

static struct {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	struct hw_sim *sim;
	struct hw_bus bus;
	struct hw_node node;
	struct wrt_linker lk;
	struct k32_hostfn_def defs[HW_HOSTFN_COUNT];
	struct kpod pods[MAXP];
	int npods;
	struct k32_buf b;
	struct k32_mutex mu; /* stdin task vs main loop: only the quit flag */
	bool quit;
} D;

static struct hw_pod *pod_of(void *user)
{
	return &((struct kpod *)user)->slot.pod;
}

static const struct hw_pod_env env = {pod_of};

static int req(const char *method, const char *target, const char *ct, const char *body)
{
	int code = 0;
	struct k32_err err;
	k32_buf_reset(&D.b);
	if (api_do(D.api, method, target, ct, body, body ? strlen(body) : 0, &code, &D.b, &err))
		fprintf(stderr, "drivers-demo: %s %s: %s\n", method, target, err.msg);
	return code;
}

static bool have_pod(const char *name)
{
	for (int i = 0; i < D.npods; i++)
		if (!strcmp(D.pods[i].name, name))
			return true;
	return false;
}

/* Starts the driver pods bound to NODE that are not running yet. */
static void kubelet_sync(void)
{
	if (req("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" NODE, NULL, NULL) != 200)
		return;
	cJSON *pods = NULL;
	if (k32_json_parse(k32_buf_cstr(&D.b), D.b.len, &pods, NULL))
		return;
	const cJSON *p;
	cJSON_ArrayForEach(p, k32_json_find(pods, "items"))
	{
		const cJSON *ann = k32_json_find(p, "metadata.annotations");
		const cJSON *dn = cJSON_GetObjectItemCaseSensitive(ann, "kube32.io/device");
		const cJSON *nm = k32_json_find(p, "metadata.name");
		const cJSON *c = cJSON_GetArrayItem(k32_json_find(p, "spec.containers"), 0);
		const cJSON *img = cJSON_GetObjectItem(c, "image");
		if (!cJSON_IsString(dn) || !cJSON_IsString(nm) || !cJSON_IsString(img) ||
		    have_pod(nm->valuestring) || D.npods == MAXP)
			continue;
		struct kpod *k = &D.pods[D.npods];
		memset(k, 0, sizeof(*k));
		snprintf(k->name, sizeof(k->name), "%s", nm->valuestring);
		char target[256], path[512];
		struct k32_err err;
		snprintf(target, sizeof(target), DEVS "/%s", dn->valuestring);
		if (req("GET", target, NULL, NULL) != 200)
			continue;
		cJSON *dev = NULL;
		if (k32_json_parse(k32_buf_cstr(&D.b), D.b.len, &dev, &err) ||
		    hw_node_bind(&D.node, &k->slot, dev, k->name, &err)) {
			fprintf(stderr, "drivers-demo: %s: %s\n", k->name, err.msg);
			cJSON_Delete(dev);
			continue;
		}
		cJSON_Delete(dev);
		snprintf(path, sizeof(path), "%s/%s", K32_DRIVERS_DIR, img->valuestring);
		struct wrt_load_opts lo;
		wrt_load_opts_default(&lo);
		struct wrt_limits lim;
		wrt_limits_default(&lim);
		lim.mem_bytes = 2048;
		lim.stack_bytes = 512;
		lim.frames = 16;
		lim.table_elems = 1;
		lim.gas = 1000000;
		uint32_t f_init;
		uint64_t r = 0;
		if (k32_plat()->file_read_all(path, k32_default_allocator(), 65536, &k->bytes,
					      &k->len, &err) ||
		    wrt_module_load(k32_default_allocator(), k->bytes, k->len, &lo, &k->mod,
				    &err) ||
		    wrt_instance_new(k->mod, &D.lk, &lim, k32_default_allocator(), k, &k->inst,
				     &err) ||
		    wrt_export_func(k->inst, "k32_init", &f_init, &err) ||
		    wrt_export_func(k->inst, "k32_tick", &k->f_tick, &err) ||
		    wrt_invoke(k->inst, f_init, NULL, 0, &r, 1, &err)) {
			fprintf(stderr, "drivers-demo: %s: %s\n", k->name, err.msg);
			hw_node_pod_failed(&k->slot, "DriverCrash", err.msg);
			k->dead = true;
		}
		k->next_us = k32_now_us();
		D.npods++;
		printf("drivers-demo: started driver pod %s (%s)\n", k->name, img->valuestring);
	}
	cJSON_Delete(pods);
}

static void flush(void)
{
	struct k32_buf body;
	k32_buf_init(&body, k32_default_allocator(), 8192, "status patch");
	for (int i = 0; i < D.npods; i++) {
		struct kpod *k = &D.pods[i];
		char target[256];
		if (hw_node_pod_due(&k->slot)) {
			k32_buf_reset(&body);
			snprintf(target, sizeof(target), DEVS "/%s/status", k->slot.dev.name);
			if (!hw_node_pod_patch(&k->slot, &body, NULL))
				req("PATCH", target, "application/merge-patch+json",
				    k32_buf_cstr(&body));
		}
		k32_buf_reset(&body);
		if (hw_node_pod_event(&k->slot, "kubelet", &body, NULL))
			req("POST", "/api/v1/namespaces/default/events", NULL, k32_buf_cstr(&body));
	}
	k32_buf_fini(&body);
}

static void tick_due(void)
{
	uint64_t now = k32_now_us();
	for (int i = 0; i < D.npods; i++) {
		struct kpod *k = &D.pods[i];
		if (k->dead || k->next_us > now)
			continue;
		uint64_t r = 0;
		struct k32_err err;
		if (wrt_invoke(k->inst, k->f_tick, NULL, 0, &r, 1, &err)) {
			k->dead = true;
			hw_node_pod_failed(&k->slot, "DriverCrash", err.msg);
			continue;
		}
		int32_t d = (int32_t)(uint32_t)r;
		k->next_us = k32_now_us() + (uint64_t)(d < 1 ? 1000 : d) * 1000;
	}
}

static void stdin_task(void *arg)
{
	(void)arg;
	char line[256];
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 8192, "console");
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strcmp(line, "quit"))
			break;
		if (!line[0])
			continue;
		struct k32_err err;
		k32_buf_reset(&out);
		if (hw_sim_command(D.sim, line, &out, &err))
			printf("error: %s\n", err.msg);
		else
			fputs(k32_buf_cstr(&out), stdout);
		fflush(stdout);
	}
	k32_buf_fini(&out);
	k32_mutex_lock(&D.mu);
	D.quit = true;
	k32_mutex_unlock(&D.mu);
}

static int fail(const char *what, const struct k32_err *err)
{
	fprintf(stderr, "drivers-demo: %s: %s\n", what, err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	uint16_t port = 0;
	long seconds = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = (uint16_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atol(argv[i + 1]);
	}
	k32_log_set_stderr(false);
	struct k32_err err;
	struct store_config sc = {.data_dir = NULL, .history_events = 256};
	if (store_open(&sc, &D.store, &err))
		return fail("store", &err);
	struct api_config ac = {.store = D.store, .bootstrap = true};
	if (api_server_new(&ac, &D.api, &err))
		return fail("api", &err);
	/* the Device controller (src/ctrl), driven once a second below */
	struct kclient *kc = NULL;
	struct ctrl *ctl = NULL;
	struct ctrl_config cc = {.no_task = true, .enable = CTRL_DEVICE};
	if (kclient_inproc_new(D.api, NULL, &kc, &err) || ctrl_start(&cc, kc, &ctl, &err))
		return fail("controller", &err);
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.port = port;
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = D.api;
	if (http_server_start(&hc, &D.srv, &err))
		return fail("http", &err);
	api_server_attach_http(D.api, D.srv);
	k32_buf_init(&D.b, k32_default_allocator(), 1 << 20, "demo response");
	k32_plat()->mutex_init(&D.mu);

	static const struct hw_sim_bus_config buses[] = {{NODE, 0, true, 0x70}};
	static const struct hw_sim_dev_config sdevs[] = {
	    {"envpro", NODE, 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", NODE, 0, 1, 0x26, HW_MODEL_MINISCALE},
	    {"tag", NODE, 0, 0, 0x28, HW_MODEL_MFRC522},
	};
	struct hw_sim_config scfg = {buses, 1, sdevs, 3, NULL, NULL};
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	if (hw_sim_new(k32_default_allocator(), &scfg, &D.sim, &err) ||
	    hw_sim_backend(D.sim, NODE, 0, &ops, &ctx) ||
	    hw_bus_init(&D.bus, 0, ops, ctx, &bc, &err) || hw_bus_mux_reset(&D.bus, &err))
		return fail("simulated board", &err);
	struct hw_node_config nc = {.bus = {&D.bus}, .min_interval_ms = 1000};
	hw_node_init(&D.node, &nc);
	hw_hostfns(&env, D.defs, HW_HOSTFN_COUNT);
	wrt_linker_init(&D.lk);
	if (wrt_linker_add_host(&D.lk, D.defs, HW_HOSTFN_COUNT, &err))
		return fail("linker", &err);

	static const char *devs[] = {
	    "{\"metadata\":{\"name\":\"envpro\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"bme688\",\"address\":119,\"muxChannel\":2,\"params\":{\"heaterTempC\":\"320\","
	    "\"heaterDurationMs\":\"150\"}}}",
	    "{\"metadata\":{\"name\":\"scale\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"miniscale\",\"address\":38,\"muxChannel\":1}}",
	    "{\"metadata\":{\"name\":\"tag\"},\"spec\":{\"node\":\"" NODE "\",\"model\":"
	    "\"rfid\",\"address\":40,\"muxChannel\":0}}",
	};
	for (int i = 0; i < 3; i++)
		req("POST", DEVS, NULL, devs[i]);
	printf("drivers-demo: API on http://127.0.0.1:%u\n"
	       "  kubectl --server http://127.0.0.1:%u get devices -w\n"
	       "  stdin: hw list | hw set envpro temperature_c 30 | hw set scale weight_g 250 | "
	       "rfid place tag 5A3C910E | rfid remove tag | quit\n",
	       (unsigned)http_server_port(D.srv), (unsigned)http_server_port(D.srv));
	fflush(stdout);

	struct k32_task *in = NULL;
	if (k32_plat()->task_create(&in, "demo-stdin", stdin_task, NULL, 0, -1, &err))
		return fail("stdin task", &err);
	uint64_t start = k32_now_us(), next_ctrl = 0;
	for (;;) {
		k32_mutex_lock(&D.mu);
		bool quit = D.quit;
		k32_mutex_unlock(&D.mu);
		uint64_t now = k32_now_us();
		if (quit || (seconds > 0 && now - start > (uint64_t)seconds * 1000000))
			break;
		if (now >= next_ctrl) {
			if (ctrl_run_once(ctl, CTRL_DEVICE, NULL, &err))
				fprintf(stderr, "drivers-demo: controller: %s\n", err.msg);
			kubelet_sync();
			next_ctrl = now + 1000000;
		}
		tick_due();
		flush();
		k32_plat()->sleep_us(5000);
	}
	printf("drivers-demo: stopping\n");
	for (int i = 0; i < D.npods; i++) {
		hw_node_unbind(&D.pods[i].slot);
		wrt_instance_free(D.pods[i].inst);
		wrt_module_free(D.pods[i].mod);
		if (D.pods[i].bytes)
			k32_free(k32_default_allocator(), D.pods[i].bytes, D.pods[i].len + 1);
	}
	http_server_stop(D.srv);
	hw_bus_fini(&D.bus);
	hw_sim_free(D.sim);
	k32_buf_fini(&D.b);
	ctrl_stop(ctl);
	kclient_free(kc);
	api_server_free(D.api);
	store_close(D.store);
	/* the stdin task may still block in fgets: exit without joining it */
	fflush(stdout);
	exit(0);
}
