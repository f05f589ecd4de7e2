/*
 * sim_boot.c - the platform's free memory at each boot stage of a simulated board (issue 8,
 * "Memory": the reference page's "Free memory in bytes at each stage of boot").
 *
 * A board's RAM budget is its profile's (sim_profile_ram_bytes: the cardputer's 512 KiB of
 * SRAM; the devkit's 512 KiB SRAM + 2 MiB PSRAM, one figure since the simulator has one
 * heap). What is used is what kube32's own accounting sees:
 *   - reserved at boot, as the board does before any service starts: the pod pool and the
 *     interpreter stack of the profile;
 *   - the board's node heap: the kubelet gets a counting heap of its own (klet_config.alloc:
 *     its state, API clients, pod server, kernel objects, its pods' log rings, the module
 *     loader's scratch), so the figure is the board's alone, not the control
 *     plane's that runs in the same process (it used to be the default heap's growth, which
 *     counted the API server's and the store's work for the board's pods too); its peak
 *     (the high-water mark since boot, a module's load scratch included) is printed too;
 *   - on the control-plane board (devkit), the default heap's growth: the store, the API
 *     server, the controllers.
 * Not counted (said in the report's note): the native stacks of the tasks, what mbedTLS and
 * the C library allocate for themselves (they do not use kube32's allocators), the kubelet's
 * cJSON trees (cJSON's allocator is per thread, and the board's tasks share threads with
 * nothing to tell them apart: they are short-lived, 2.5 KB live at the pods stage), and the
 * simulated devices (the board's world, not its memory). Sizes are the build's: a 64-bit
 * host has twice the board's pointers and size_t, so a board needs less than this reports.
 *
 * The control plane's stages (store, API server, controllers) are the devkit's: it is the
 * control-plane board. A worker profile (cardputer, host) gets a control plane too, so that
 * its kubelet can register, but its stages start counting after it (their memory is the
 * devkit's, not the worker's).
 */
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#include "base/k32_json.h"
#include "platform/k32_platform.h"

#define SIM_BOOT_MOD "sim-boot"
/* How long the pods stage waits for its pods to run. */
#define SIM_BOOT_PODS_WAIT_US 30000000ull
/* Pause before the steady figure, so the pods have ticked and reported their status. */
#define SIM_BOOT_SETTLE_US 1000000ull

struct boot {
	const struct sim_boot_config *cfg;
	const struct klet_profile *p;
	bool cp_role;	 /* the control-plane board (devkit) */
	size_t heap0;	 /* default heap at the start */
	size_t base;	 /* what is not the board's (a worker's control plane) */
	size_t reserved; /* pod pool + interpreter stack */
	size_t budget;
	struct k32_heap node_heap; /* the board's (klet_config.alloc) */
	struct k32_buf *out;
	k32_status_t st;
};

static size_t heap_now(void)
{
	const struct k32_heap *h = k32_default_allocator()->ud;
	return __atomic_load_n(&h->stats.cur_bytes, __ATOMIC_RELAXED);
}

static void report(struct boot *b, const char *stage)
{
	size_t now = heap_now();
	size_t grown = now > b->heap0 + b->base ? now - b->heap0 - b->base : 0;
	size_t node = __atomic_load_n(&b->node_heap.stats.cur_bytes, __ATOMIC_RELAXED);
	size_t peak = __atomic_load_n(&b->node_heap.stats.peak_bytes, __ATOMIC_RELAXED);
	/* a worker's control plane is another board's: only the devkit counts the default heap */
	size_t used = b->reserved + node + (b->cp_role ? grown : 0);
	if (b->st)
		return;
	if (b->budget)
		b->st =
		    k32_buf_printf(b->out, NULL,
				   "K32_BOOT profile=%s role=%s stage=%s used=%zu free=%lld "
				   "budget=%zu node_heap=%zu node_heap_peak=%zu\n",
				   b->p->name, b->cp_role ? "control-plane" : "worker", stage, used,
				   (long long)b->budget - (long long)used, b->budget, node, peak);
	else
		b->st = k32_buf_printf(b->out, NULL,
				       "K32_BOOT profile=%s role=%s stage=%s used=%zu free=- "
				       "budget=- node_heap=%zu node_heap_peak=%zu\n",
				       b->p->name, b->cp_role ? "control-plane" : "worker", stage,
				       used, node, peak);
}

static void on_stage(void *ctx, enum cplane_stage s)
{
	struct boot *b = ctx;
	static const char *const names[] = {"store", "api", "controllers"};
	if (b->cp_role)
		report(b, names[s]);
}

/* Creates cfg->pods pods of cfg->image pinned to the board. */
static k32_status_t make_pods(struct cplane *cp, const struct sim_boot_config *cfg,
			      const char *node, struct k32_err *err)
{
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 64 * 1024, "boot pods");
	k32_status_t st = K32_OK;
	for (uint32_t i = 0; i < cfg->pods && !st; i++) {
		char body[600];
		int code = 0;
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
			 "\"boot-%u\"},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":"
			 "\"main\",\"image\":\"%s\",\"resources\":{\"limits\":{\"memory\":\"%s\"}}}"
			 "]}}",
			 (unsigned)i, node, cfg->image, cfg->pod_memory ? cfg->pod_memory : "24Ki");
		k32_buf_reset(&b);
		st = api_do(cplane_api(cp), "POST", "/api/v1/namespaces/default/pods",
			    "application/json", body, strlen(body), &code, &b, err);
		if (!st && code != 201)
			st = k32_err_set(err, K32_ERR_IO, SIM_BOOT_MOD,
					 "boot report: creating pod boot-%u: HTTP %d %s",
					 (unsigned)i, code, k32_buf_cstr(&b));
	}
	k32_buf_fini(&b);
	return st;
}

/* The profile's three simulated I2C devices as Devices (apps/drivers/devices-cardputer.yaml):
 * the Device controller makes one driver pod for each. */
static k32_status_t make_devices(struct cplane *cp, const char *node, struct k32_err *err)
{
	static const char *const devs[] = {
	    "\"name\":\"envpro\"},\"spec\":{\"node\":\"%s\",\"model\":\"bme688\",\"bus\":0,"
	    "\"muxChannel\":2,\"address\":119,\"pollIntervalMs\":1000",
	    "\"name\":\"scale\"},\"spec\":{\"node\":\"%s\",\"model\":\"miniscale\",\"bus\":0,"
	    "\"muxChannel\":1,\"address\":38",
	    "\"name\":\"tag\"},\"spec\":{\"node\":\"%s\",\"model\":\"rfid\",\"bus\":0,"
	    "\"muxChannel\":0,\"address\":40"};
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 64 * 1024, "boot devices");
	k32_status_t st = K32_OK;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]) && !st; i++) {
		char spec[300], body[512];
		int code = 0;
		snprintf(spec, sizeof(spec), devs[i], node);
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":\"Device\",\"metadata\":{"
			 "%s}}",
			 spec);
		k32_buf_reset(&b);
		st = api_do(cplane_api(cp), "POST",
			    "/apis/kube32.io/v1alpha1/namespaces/default/devices",
			    "application/json", body, strlen(body), &code, &b, err);
		if (!st && code != 201)
			st = k32_err_set(err, K32_ERR_IO, SIM_BOOT_MOD,
					 "boot report: creating Device %zu: HTTP %d %s", i, code,
					 k32_buf_cstr(&b));
	}
	k32_buf_fini(&b);
	return st;
}

k32_status_t sim_boot_report(const struct sim_boot_config *cfg, struct k32_buf *out,
			     struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	struct boot b = {.cfg = cfg, .out = out};
	b.p = sim_profile_find(cfg->profile);
	if (!b.p)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_BOOT_MOD,
				   "boot report: unknown profile \"%s\"; use devkit, cardputer or "
				   "host",
				   cfg->profile);
	b.cp_role = !strcmp(b.p->name, "devkit");
	b.budget = sim_profile_ram_bytes(b.p);
	b.reserved = b.p->pod_pool_bytes + b.p->interp_stack;
	k32_heap_init(&b.node_heap, 0);
	struct k32_allocator node_alloc = k32_heap_allocator(&b.node_heap);
	struct sim_hw *hw = NULL;
	uint32_t want = cfg->devices ? 3 : cfg->pods;
	if (cfg->devices) {
		char hwname[64];
		snprintf(hwname, sizeof(hwname), "%s-1", b.p->name);
		k32_status_t hst = sim_hw_new(hwname, b.p, &hw, err);
		if (hst)
			return hst;
	}
	b.heap0 = heap_now();
	report(&b, "platform");

	struct cplane_config cc;
	cplane_config_init(&cc);
	cc.data_dir = cfg->data_dir;
	cc.memory_store = true;
	cc.tls = cfg->tls;
	cc.on_stage = on_stage;
	cc.stage_ctx = &b;
	struct cplane *cp = NULL;
	k32_status_t st = cplane_start(&cc, &cp, err);
	if (st) {
		sim_hw_free(hw);
		return st;
	}
	if (!b.cp_role)
		b.base = heap_now() - b.heap0; /* the control plane lives on another board */

	char node[64], tok[128];
	snprintf(node, sizeof(node), "%s-1", b.p->name);
	struct klet *k = NULL;
	st = cplane_node_token(cp, node, tok, sizeof(tok), err);
	struct sim_board_config bc = {.name = node,
				      .profile = b.p,
				      .api_port = cplane_port(cp),
				      .ca_file = cplane_ca_file(cp),
				      .token = tok,
				      .image_dir = cfg->image_dir,
				      .hw_node = hw ? sim_hw_node(hw) : NULL,
				      .alloc = &node_alloc};
	if (!st)
		st = sim_board_start(&bc, &k, err);
	if (st)
		goto out;
	report(&b, "kubelet");
	st = cfg->devices ? make_devices(cp, node, err) : make_pods(cp, cfg, node, err);
	uint64_t until = k32_now_us() + SIM_BOOT_PODS_WAIT_US;
	struct klet_stats ks = {0};
	while (!st) {
		klet_get_stats(k, &ks);
		if (ks.running >= want)
			break;
		if (k32_now_us() > until) {
			st = k32_err_set(err, K32_ERR_TIMED_OUT, SIM_BOOT_MOD,
					 "boot report: %u of %u pods of %s running after 30 s on "
					 "%s; is the image in %s, do they fit its pod pool "
					 "(--boot-pods)?",
					 (unsigned)ks.running, (unsigned)want,
					 cfg->devices ? "the drivers" : cfg->image, node,
					 cfg->image_dir);
			break;
		}
		pl->sleep_us(20000);
	}
	if (st)
		goto out;
	pl->sleep_us(SIM_BOOT_SETTLE_US);
	klet_get_stats(k, &ks);
	report(&b, "pods");
	if (!b.st)
		b.st = k32_buf_printf(
		    out, NULL,
		    "K32_BOOT_END profile=%s pods=%u image=%s pool_used=%zu pool_size=%zu "
		    "node_heap_peak=%zu ptr_bytes=%zu counted=node-heap+pod-pool+interp-stack%s "
		    "not_counted=task-stacks,mbedtls,libc,cjson\n",
		    b.p->name, (unsigned)ks.running, cfg->devices ? "drivers" : cfg->image,
		    ks.pool_bytes, ks.pool_limit, b.node_heap.stats.peak_bytes, sizeof(void *),
		    b.cp_role ? "+default-heap" : "");
	st = b.st;
	if (st)
		k32_err_set(err, st, SIM_BOOT_MOD, "boot report: the output buffer is full");
out:
	if (k)
		klet_stop_begin(k);
	cplane_stop(cp);
	klet_free(k);
	sim_hw_free(hw);
	return st;
}
