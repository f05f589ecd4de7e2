/*
 * mcu_drivers.c - the driver pods' run of `make test-mcu` (see mcu_drivers.h). The setup is
 * drivers_e2e_test.c's cardputer-like board: one bus with a PaHUB at 0x70, the ENV Pro
 * (BME688) at 0x77 on channel 2, the Mini Scales at 0x26 on channel 1, the RFID 2 (MFRC522)
 * at 0x28 on channel 0. Each pod gets the linear memory, value stack and frames a driver's
 * Device asks for (K32_HW_DRIVER_*) and its own counted pool; a small tick scheduler runs them
 * on a virtual clock, so both runs see the same times and the readings depend on nothing but
 * the code that computes them (the runtime, the drivers, the simulated chips).
 */
#include "mcu_drivers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_alloc.h"
#include "hw/hw.h"
#include "wasm/wrt.h"

#define MCU_DRV_PODS 3
/* each pod's share of the pod pool: the three fit in the boards' K32_*_POD_POOL_BYTES */
#define MCU_DRV_POOL_BYTES (24u * 1024u)

struct mcu_pod {
	const struct mcu_driver_blob *blob;
	struct k32_heap heap;
	struct k32_allocator alloc;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t f_tick;
	struct hw_grant grant;
	struct hw_pod hp;
	uint64_t next_us;
	struct hw_readings readings; /* as last published */
	uint32_t publishes;
	bool ready;
	char reason[32];
	bool failed;
};

static struct mcu_pod pods[MCU_DRV_PODS];
static uint64_t vclock = 1000000;

static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

static void on_publish(void *user, uint32_t index, const struct hw_grant *dev,
		       const struct hw_readings *r, uint64_t time_us)
{
	struct mcu_pod *p = user;
	(void)index;
	(void)dev;
	(void)time_us;
	p->readings = *r;
	p->publishes++;
}

static void on_condition(void *user, uint32_t index, const struct hw_grant *dev, bool ready,
			 const char *reason, size_t reason_len, const char *msg, size_t msg_len)
{
	struct mcu_pod *p = user;
	(void)index;
	(void)dev;
	(void)msg;
	(void)msg_len;
	p->ready = ready;
	snprintf(p->reason, sizeof(p->reason), "%.*s", (int)reason_len, reason);
}

static void on_log(void *user, uint32_t level, const char *msg, size_t len)
{
	(void)user;
	(void)level;
	(void)msg;
	(void)len;
}

static uint64_t h_now(void *user)
{
	(void)user;
	return vclock;
}

static void h_sleep(void *user, uint64_t us)
{
	(void)user;
	vclock += us;
}

static const struct hw_host_ops host_ops = {on_publish, on_condition, on_log, h_now, h_sleep};

static const struct hw_param bme_params[] = {
    {"heaterTempC", "320"}, {"heaterDurationMs", "150"}, {"pollIntervalMs", "1000"}};

static int pod_start(struct mcu_pod *p, const struct mcu_driver_blob *blob, uint32_t ch,
		     uint32_t addr, const struct hw_param *params, uint32_t nparams,
		     const struct wrt_linker *lk, const struct hw_host *host)
{
	struct k32_err err;
	memset(p, 0, sizeof(*p));
	p->blob = blob;
	k32_heap_init(&p->heap, MCU_DRV_POOL_BYTES);
	p->alloc = k32_heap_allocator(&p->heap);
	struct wrt_load_opts lo;
	wrt_load_opts_default(&lo);
	if (wrt_module_load(&p->alloc, blob->bytes, blob->len, &lo, &p->mod, &err) != K32_OK)
		goto fail;
	p->grant = (struct hw_grant){
	    .bus = 0, .mux_channel = ch, .addr = addr, .params = params, .nparams = nparams};
	snprintf(p->grant.model, sizeof(p->grant.model), "%s", blob->name);
	hw_pod_init(&p->hp, host, &p->grant, 1, p);
	struct wrt_limits lim;
	wrt_limits_default(&lim);
	lim.mem_bytes = K32_HW_DRIVER_MEM_BYTES;
	lim.stack_bytes = K32_HW_DRIVER_STACK_BYTES;
	lim.frames = K32_HW_DRIVER_FRAMES;
	lim.table_elems = 1;
	lim.gas = 1000000;
	if (wrt_instance_new(p->mod, lk, &lim, &p->alloc, &p->hp, &p->inst, &err) != K32_OK)
		goto fail;
	uint32_t f_init;
	uint64_t res = 0;
	if (wrt_export_func(p->inst, "k32_init", &f_init, &err) != K32_OK ||
	    wrt_export_func(p->inst, "k32_tick", &p->f_tick, &err) != K32_OK ||
	    wrt_invoke(p->inst, f_init, NULL, 0, &res, 1, &err) != K32_OK)
		goto fail;
	if ((int32_t)(uint32_t)res < 0) {
		printf("K32_DRV_FAIL pod=%s: k32_init returned %" PRId32 "\n", blob->name,
		       (int32_t)(uint32_t)res);
		return 1;
	}
	p->next_us = vclock;
	return 0;
fail:
	printf("K32_DRV_FAIL pod=%s: %s\n", blob->name, err.msg);
	return 1;
}

static void pod_stop(struct mcu_pod *p)
{
	wrt_instance_free(p->inst);
	wrt_module_free(p->mod);
	memset(p, 0, sizeof(*p));
}

/* The tick scheduler: the pod due first runs its k32_tick, which returns its next delay in
 * milliseconds; a trap stops the pod (the kubelet would restart it with back-off). */
static void run_until(uint64_t until_us)
{
	for (;;) {
		struct mcu_pod *next = NULL;
		for (int i = 0; i < MCU_DRV_PODS; i++)
			if (pods[i].inst && !pods[i].failed &&
			    (!next || pods[i].next_us < next->next_us))
				next = &pods[i];
		if (!next || next->next_us > until_us)
			break;
		if (vclock < next->next_us)
			vclock = next->next_us;
		uint64_t res = 0;
		struct k32_err err;
		if (wrt_invoke(next->inst, next->f_tick, NULL, 0, &res, 1, &err) != K32_OK) {
			printf("K32_DRV_FAIL pod=%s tick: %s\n", next->blob->name, err.msg);
			next->failed = true;
			continue;
		}
		int32_t d = (int32_t)(uint32_t)res;
		next->next_us = vclock + (uint64_t)(d < 1 ? 1000 : d) * 1000u;
	}
	if (vclock < until_us)
		vclock = until_us;
}

static void print_step(const char *step)
{
	for (int i = 0; i < MCU_DRV_PODS; i++) {
		struct mcu_pod *p = &pods[i];
		printf("K32_DRV step=%s pod=%s ready=%d reason=%s publishes=%" PRIu32, step,
		       p->blob->name, p->ready ? 1 : 0, p->reason[0] ? p->reason : "-",
		       p->publishes);
		const char *k, *v;
		for (size_t o = 0; (o = hw_readings_next(&p->readings, o, &k, &v)) != 0;)
			printf(" %s=%s", k, v);
		printf("\n");
	}
}

int mcu_drivers_run(const struct mcu_driver_blob blobs[3], mcu_heap_used_fn heap_used)
{
	static const struct hw_sim_bus_config buses[] = {{"cardputer-1", 0, true, 0x70}};
	static const struct hw_sim_dev_config devs[] = {
	    {"envpro", "cardputer-1", 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", "cardputer-1", 0, 1, 0x26, HW_MODEL_MINISCALE},
	    {"tag", "cardputer-1", 0, 0, 0x28, HW_MODEL_MFRC522},
	};
	static const uint8_t uid7[] = {0x04, 0x5B, 0x2C, 0x7A, 0x91, 0x3E, 0x80};
	static const uint8_t uid4[] = {0x5A, 0x3C, 0x91, 0x0E};
	static struct hw_bus bus;
	static struct hw_host host;
	static struct wrt_linker linker;
	struct hw_sim_config cfg = {buses, 1, devs, 3, vnow, NULL};
	struct hw_sim *sim;
	struct k32_err err;
	size_t heap0 = heap_used ? heap_used() : 0;
	if (hw_sim_new(k32_default_allocator(), &cfg, &sim, &err) != K32_OK) {
		printf("K32_DRV_FAIL simulator: %s\n", err.msg);
		return 1;
	}
	const struct hw_bus_backend_ops *bops;
	void *ctx;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	if (hw_sim_backend(sim, "cardputer-1", 0, &bops, &ctx) != K32_OK ||
	    hw_bus_init(&bus, 0, bops, ctx, &bc, &err) != K32_OK ||
	    hw_bus_mux_reset(&bus, &err) != K32_OK) {
		printf("K32_DRV_FAIL bus: %s\n", err.msg);
		hw_sim_free(sim);
		return 1;
	}
	host = (struct hw_host){.bus = {&bus}, .ops = &host_ops};
	wrt_linker_init(&linker);
	if (wrt_linker_add_host(&linker, hw_hostfn_table, HW_HOSTFN_COUNT, &err) != K32_OK) {
		printf("K32_DRV_FAIL linker: %s\n", err.msg);
		hw_sim_free(sim);
		return 1;
	}
	size_t heap_sim = heap_used ? heap_used() : 0;
	/* the worked example of hardware.md: the simulator's default calibration, raw words */
	int bad = hw_sim_bme688_set_raw(sim, "envpro", 493000, 355000, 20500, 600, 9, &err) ||
		  hw_sim_set_value(sim, "scale", "weight_g", 0, &err);
	bad = bad || pod_start(&pods[0], &blobs[0], 2, 0x77, bme_params, 3, &linker, &host) ||
	      pod_start(&pods[1], &blobs[1], 1, 0x26, NULL, 0, &linker, &host) ||
	      pod_start(&pods[2], &blobs[2], 0, 0x28, NULL, 0, &linker, &host);
	if (!bad) {
		size_t heap_pods = heap_used ? heap_used() : 0;
		bad |= hw_sim_set_value(sim, "scale", "weight_g", 250, &err) != K32_OK;
		run_until(vclock + 6000000);
		print_step("worked-example");
		/* what three running drivers hold: per pod and on the heap in all */
		for (int i = 0; i < MCU_DRV_PODS; i++) {
			struct wrt_stats s;
			wrt_instance_stats(pods[i].inst, &s);
			printf("K32_MCU drivers_pod=%s wasm=%" PRIu32 " pool_now=%" PRIu32
			       " pool_peak=%" PRIu32 " module=%" PRIu32 " memory=%" PRIu32
			       " stacks=%" PRIu32 "\n",
			       pods[i].blob->name, (uint32_t)pods[i].blob->len,
			       (uint32_t)pods[i].heap.stats.cur_bytes,
			       (uint32_t)pods[i].heap.stats.peak_bytes, (uint32_t)s.module_bytes,
			       (uint32_t)s.memory_bytes, (uint32_t)s.stack_bytes);
		}
		if (heap_used)
			printf("K32_MCU drivers_heap_sim=%" PRIu32 " drivers_heap_pods=%" PRIu32
			       "\n",
			       (uint32_t)(heap_sim - heap0), (uint32_t)(heap_pods - heap_sim));
		/* physical values change: the readings follow */
		bad |= hw_sim_set_value(sim, "envpro", "temperature_c", 21.5, &err) != K32_OK;
		bad |= hw_sim_set_value(sim, "envpro", "pressure_pa", 101000, &err) != K32_OK;
		bad |= hw_sim_set_value(sim, "envpro", "humidity_pct", 48.0, &err) != K32_OK;
		bad |= hw_sim_set_value(sim, "envpro", "gas_ohm", 80000, &err) != K32_OK;
		bad |= hw_sim_set_value(sim, "scale", "weight_g", 100, &err) != K32_OK;
		run_until(vclock + 6000000);
		print_step("values-changed");
		/* cards placed and removed */
		bad |= hw_sim_rfid_place(sim, "tag", uid7, 7, 0, 0, &err) != K32_OK;
		run_until(vclock + 1000000);
		print_step("card7-placed");
		bad |= hw_sim_rfid_remove(sim, "tag", &err) != K32_OK;
		run_until(vclock + 1000000);
		print_step("card-removed");
		bad |= hw_sim_rfid_place(sim, "tag", uid4, 4, 0, 0, &err) != K32_OK;
		run_until(vclock + 1000000);
		print_step("card4-placed");
		if (bad)
			printf("K32_DRV_FAIL simulator: %s\n", err.msg);
	}
	for (int i = 0; i < MCU_DRV_PODS; i++) {
		bad |= pods[i].failed;
		if (pods[i].mod)
			pod_stop(&pods[i]);
	}
	hw_bus_fini(&bus);
	hw_sim_free(sim);
	return bad ? 1 : 0;
}
