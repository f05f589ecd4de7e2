/*
 * drv_bench.c - `make bench` line for the driver pods: CPU time per tick of each driver as
 * Wasm in the runtime over the simulated devices, and what the rfid pod's 5 Hz polling costs
 * of one core (card present and absent). The reader's 10 ms "no answer" wait is a k32_sleep_ms
 * that the benchmark's host functions count on a virtual clock, as in the simulator it is a
 * sleep, not CPU.
 *
 * Usage: drivers-bench [ticks]   (default 2000 per case)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"
#include "wasm/wrt.h"

static uint64_t vclock = 1000000;

static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
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

static void h_log(void *user, uint32_t level, const char *msg, size_t len)
{
	(void)user;
	(void)level;
	(void)msg;
	(void)len;
}

static const struct hw_host_ops ops = {NULL, NULL, h_log, h_now, h_sleep};

struct pod {
	uint8_t *bytes;
	size_t len;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t f_tick;
	struct hw_grant grant;
	struct hw_pod hp;
};

static int start(struct pod *p, const char *name, const struct wrt_linker *lk,
		 const struct hw_host *host, uint32_t ch, uint32_t addr)
{
	char path[512];
	struct k32_err err;
	const struct k32_allocator *a = k32_default_allocator();
	snprintf(path, sizeof(path), "%s/%s.wasm", K32_DRIVERS_DIR, name);
	if (k32_plat()->file_read_all(path, a, 65536, &p->bytes, &p->len, &err) != K32_OK) {
		fprintf(stderr, "drivers-bench: %s (build the pods: needs clang and wasm-ld)\n",
			err.msg);
		return -1;
	}
	struct wrt_load_opts lo;
	wrt_load_opts_default(&lo);
	if (wrt_module_load(a, p->bytes, p->len, &lo, &p->mod, &err) != K32_OK)
		goto fail;
	p->grant = (struct hw_grant){.bus = 0, .mux_channel = ch, .addr = addr};
	snprintf(p->grant.model, sizeof(p->grant.model), "%s", name);
	hw_pod_init(&p->hp, host, &p->grant, 1, p);
	struct wrt_limits lim;
	wrt_limits_default(&lim);
	lim.mem_bytes = 2048;
	lim.stack_bytes = 512;
	lim.frames = 16;
	lim.table_elems = 1;
	if (wrt_instance_new(p->mod, lk, &lim, a, &p->hp, &p->inst, &err) != K32_OK)
		goto fail;
	uint32_t f_init;
	uint64_t r = 0;
	if (wrt_export_func(p->inst, "k32_init", &f_init, &err) != K32_OK ||
	    wrt_export_func(p->inst, "k32_tick", &p->f_tick, &err) != K32_OK ||
	    wrt_invoke(p->inst, f_init, NULL, 0, &r, 1, &err) != K32_OK)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "drivers-bench: %s: %s\n", name, err.msg);
	return -1;
}

/* Mean CPU microseconds per tick over n ticks (each followed by its delay on the clock). */
static double cpu_per_tick(struct pod *p, int n, uint64_t *xfers)
{
	struct k32_err err;
	uint64_t ok0 = p->hp.stats.i2c_ok;
	uint64_t t0 = k32_plat()->thread_cpu_us();
	for (int i = 0; i < n; i++) {
		uint64_t r = 0;
		if (wrt_invoke(p->inst, p->f_tick, NULL, 0, &r, 1, &err) != K32_OK) {
			fprintf(stderr, "drivers-bench: tick: %s\n", err.msg);
			return -1;
		}
		vclock += (uint64_t)(uint32_t)r * 1000;
	}
	uint64_t t1 = k32_plat()->thread_cpu_us();
	*xfers = (p->hp.stats.i2c_ok - ok0) / (uint64_t)n;
	return (double)(t1 - t0) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	if (n < 10)
		n = 10;
	static const struct hw_sim_bus_config buses[] = {{"cardputer-1", 0, true, 0x70}};
	static const struct hw_sim_dev_config devs[] = {
	    {"envpro", "cardputer-1", 0, 2, 0x77, HW_MODEL_BME688},
	    {"scale", "cardputer-1", 0, 1, 0x26, HW_MODEL_MINISCALE},
	    {"tag", "cardputer-1", 0, 0, 0x28, HW_MODEL_MFRC522},
	};
	struct hw_sim_config cfg = {buses, 1, devs, 3, vnow, NULL};
	struct hw_sim *sim;
	struct k32_err err;
	if (hw_sim_new(k32_default_allocator(), &cfg, &sim, &err) != K32_OK)
		return fprintf(stderr, "drivers-bench: %s\n", err.msg), 1;
	const struct hw_bus_backend_ops *bops;
	void *ctx;
	hw_sim_backend(sim, "cardputer-1", 0, &bops, &ctx);
	struct hw_bus bus;
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	hw_bus_init(&bus, 0, bops, ctx, &bc, &err);
	hw_bus_mux_reset(&bus, &err);
	struct hw_host host = {.bus = {&bus}, .ops = &ops};
	struct wrt_linker lk;
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, hw_hostfn_table, HW_HOSTFN_COUNT, &err);
	static struct pod pods[3];
	if (start(&pods[0], "bme688", &lk, &host, 2, 0x77) ||
	    start(&pods[1], "miniscale", &lk, &host, 1, 0x26) ||
	    start(&pods[2], "rfid", &lk, &host, 0, 0x28))
		return 1;

	uint64_t x;
	printf("%-34s %12s %10s\n", "case", "cpu us/tick", "i2c/tick");
	double b = cpu_per_tick(&pods[0], n, &x);
	printf("%-34s %12.2f %10llu\n", "bme688 (trigger + read, averaged)", b,
	       (unsigned long long)x);
	double m = cpu_per_tick(&pods[1], n, &x);
	printf("%-34s %12.2f %10llu\n", "miniscale", m, (unsigned long long)x);
	double absent = cpu_per_tick(&pods[2], n, &x);
	printf("%-34s %12.2f %10llu\n", "rfid, no card", absent, (unsigned long long)x);
	static const uint8_t uid4[] = {0x5A, 0x3C, 0x91, 0x0E};
	static const uint8_t uid7[] = {0x04, 0x5B, 0x2C, 0x7A, 0x91, 0x3E, 0x80};
	hw_sim_rfid_place(sim, "tag", uid4, 4, 0, 0, &err);
	double c4 = cpu_per_tick(&pods[2], n, &x);
	printf("%-34s %12.2f %10llu\n", "rfid, 4-byte UID card", c4, (unsigned long long)x);
	hw_sim_rfid_place(sim, "tag", uid7, 7, 0, 0, &err);
	double c7 = cpu_per_tick(&pods[2], n, &x);
	printf("%-34s %12.2f %10llu\n", "rfid, 7-byte UID card", c7, (unsigned long long)x);
	double worst = absent > c7 ? absent : c7;
	printf("rfid at 5 Hz: %.4f %% of one core (worst case above; target < 1 %%)\n",
	       worst * 5.0 / 1e6 * 100.0);
	printf("bme688 every 3 s + miniscale every 0.5 s: %.4f %% of one core\n",
	       (b * 2 / 3.0 + m * 2.0) / 1e6 * 100.0);
	for (int i = 0; i < 3; i++) {
		wrt_instance_free(pods[i].inst);
		wrt_module_free(pods[i].mod);
		k32_free(k32_default_allocator(), pods[i].bytes, pods[i].len + 1);
	}
	hw_bus_fini(&bus);
	hw_sim_free(sim);
	return 0;
}
