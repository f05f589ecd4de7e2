/*
 * hw_host_test.c - the "kube32" driver host functions called as the runtime calls them (a
 * struct k32_hostcall over a byte array standing for linear memory), over the simulator:
 * grants (a pod without Devices reaches nothing), pointer checks, device info and params,
 * time and bounded sleep, rate-limited logs, staged readings published as one update.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "hw/hw_int.h"

static uint64_t vclock;
static uint64_t vnow(void *ud)
{
	(void)ud;
	return vclock;
}

/* embedder callbacks */
static struct hw_readings got;
static uint32_t got_n, got_idx, publishes, conditions, logs;
static bool cond_ready;
static char cond_reason[32];
static char cond_msg[256];

static void on_publish(void *user, uint32_t index, const struct hw_grant *dev,
		       const struct hw_readings *r, uint64_t time_us)
{
	(void)user;
	(void)dev;
	(void)time_us;
	got = *r;
	got_n = r->n;
	got_idx = index;
	publishes++;
}

static void on_condition(void *user, uint32_t index, const struct hw_grant *dev, bool ready,
			 const char *reason, size_t reason_len, const char *msg, size_t msg_len)
{
	(void)user;
	(void)index;
	(void)dev;
	(void)msg;
	(void)msg_len;
	cond_ready = ready;
	snprintf(cond_reason, sizeof(cond_reason), "%.*s", (int)reason_len, reason);
	snprintf(cond_msg, sizeof(cond_msg), "%.*s", (int)msg_len, msg);
	conditions++;
}

static void on_log(void *user, uint32_t level, const char *msg, size_t len)
{
	(void)user;
	(void)level;
	(void)msg;
	(void)len;
	logs++;
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

static const struct hw_sim_bus_config buses[] = {{"n1", 0, true, 0x70}};
static const struct hw_sim_dev_config devs[] = {
    {"env", "n1", 0, 2, 0x77, HW_MODEL_BME688},
    {"scale", "n1", 0, 1, 0x26, HW_MODEL_MINISCALE},
};
static const struct hw_param env_params[] = {{"heaterTempC", "320"}, {"pollIntervalMs", "3000"}};

struct fix {
	struct hw_sim *sim;
	struct hw_bus bus;
	struct hw_host host;
	struct hw_grant grants[1];
	struct hw_pod pod;
	uint8_t mem[1024];
	uint64_t args[8], results[2];
	struct k32_err err;
	struct k32_hostcall call;
};

static int setup(void **state)
{
	static struct fix f;
	memset(&f, 0, sizeof(f));
	vclock = 5000000;
	got_n = publishes = conditions = logs = 0;
	struct hw_sim_config cfg = {buses, 1, devs, 2, vnow, NULL};
	assert_int_equal(hw_sim_new(k32_default_allocator(), &cfg, &f.sim, &f.err), K32_OK);
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	assert_int_equal(hw_sim_backend(f.sim, "n1", 0, &ops, &ctx), K32_OK);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	assert_int_equal(hw_bus_init(&f.bus, 0, ops, ctx, &bc, &f.err), K32_OK);
	f.host.bus[0] = &f.bus;
	f.host.ops = &host_ops;
	f.grants[0] = (struct hw_grant){.bus = 0,
					.mux_channel = 2,
					.addr = 0x77,
					.model = "bme688",
					.name = "env",
					.params = env_params,
					.nparams = 2};
	hw_pod_init(&f.pod, &f.host, f.grants, 1, NULL);
	f.call.instance_user = &f.pod;
	f.call.mem = f.mem;
	f.call.mem_len = sizeof(f.mem);
	f.call.args = f.args;
	f.call.results = f.results;
	f.call.err = &f.err;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	hw_bus_fini(&f->bus);
	hw_sim_free(f->sim);
	return 0;
}

static const struct k32_hostfn_def *fn(const char *name)
{
	for (size_t i = 0; i < HW_HOSTFN_COUNT; i++)
		if (!strcmp(hw_hostfn_table[i].name, name))
			return &hw_hostfn_table[i];
	fail_msg("no host function %s", name);
	return NULL;
}

/* Calls name with up to 8 args; returns the i32 result. */
static int32_t callfn(struct fix *f, const char *name, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		f->args[i] = va_arg(ap, uint64_t);
	va_end(ap);
	f->results[0] = 0xDEAD;
	assert_int_equal(fn(name)->fn(&f->call), K32_OK);
	return (int32_t)(uint32_t)f->results[0];
}

#define U(x) ((uint64_t)(x))

static void test_i2c_grants(void **state)
{
	struct fix *f = *state;
	f->mem[100] = 0xD0;
	assert_int_equal(
	    callfn(f, "k32_i2c_write_read", 7, U(0), U(2), U(0x77), U(100), U(1), U(200), U(1)),
	    HW_OK);
	assert_int_equal(f->mem[200], 0x61);
	static const struct {
		uint32_t bus, ch, addr;
	} denied[] = {
	    {0, 1, 0x26}, {0, 2, 0x76}, {0, 3, 0x77}, {1, 2, 0x77}, {0, HW_MUX_NONE, 0x77}};
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
		assert_int_equal(callfn(f, "k32_i2c_write_read", 7, U(denied[i].bus),
					U(denied[i].ch), U(denied[i].addr), U(100), U(1), U(200),
					U(1)),
				 HW_EPERM);
	assert_int_equal(f->pod.stats.denied, 5);
	/* pointer and length checks */
	static const struct {
		uint64_t w, wlen, r, rlen;
	} bad[] = {{1020, 8, 200, 1},  {100, 1, 1024, 1},  {100, 1, 0xFFFFFFFF, 2},
		   {100, 129, 200, 1}, {100, 1, 200, 129}, {2000, 0, 200, 1}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(callfn(f, "k32_i2c_write_read", 7, U(0), U(2), U(0x77), bad[i].w,
					bad[i].wlen, bad[i].r, bad[i].rlen),
				 HW_EINVAL);
	/* device gone: ENODEV; bus error: EIO */
	assert_int_equal(hw_sim_set_value(f->sim, "env", "present", 0, &f->err), K32_OK);
	assert_int_equal(
	    callfn(f, "k32_i2c_write_read", 7, U(0), U(2), U(0x77), U(100), U(1), U(200), U(1)),
	    HW_ENODEV);
	assert_int_equal(hw_sim_set_value(f->sim, "env", "present", 1, &f->err), K32_OK);
	assert_int_equal(hw_sim_inject(f->sim, "n1", 0, 0x77, HW_XFER_BUS_ERROR, 1, &f->err),
			 K32_OK);
	assert_int_equal(
	    callfn(f, "k32_i2c_write_read", 7, U(0), U(2), U(0x77), U(100), U(1), U(200), U(1)),
	    HW_EIO);
	assert_int_equal(f->pod.stats.i2c_errors, 2);
	/* a grant on a bus the node lacks */
	f->grants[0].bus = 3;
	assert_int_equal(
	    callfn(f, "k32_i2c_write_read", 7, U(3), U(2), U(0x77), U(100), U(1), U(200), U(1)),
	    HW_ENODEV);
}

/* The node's own Ready condition: NotFound / BusError on failed transfers (once per
 * distinct failure), Reading on the publish after one, nothing for a refused triple. */
static void test_auto_conditions(void **state)
{
	struct fix *f = *state;
	f->mem[100] = 0xD0;
	static const struct {
		const char *fault;	 /* set before the transfer */
		int32_t want;		 /* the transfer's result */
		bool publish;		 /* then k32_publish(0) */
		uint32_t new_conditions; /* conditions reported by this step */
		const char *reason;	 /* the last one's reason */
		bool ready;
	} steps[] = {
	    {NULL, HW_OK, false, 0, "", false},			/* a good transfer says nothing */
	    {NULL, HW_OK, true, 1, "Reading", true},		/* the first publish: Reading */
	    {NULL, HW_OK, true, 0, "Reading", true},		/* unchanged: not again */
	    {"absent", HW_ENODEV, false, 1, "NotFound", false}, /* address NACK */
	    {"absent", HW_ENODEV, false, 0, "NotFound", false}, /* same failure: once */
	    {"bus-error", HW_EIO, false, 1, "BusError", false}, /* another failure */
	    {"timeout", HW_ETIMEDOUT, false, 1, "BusError", false},
	    {NULL, HW_OK, true, 1, "Reading", true},	     /* back */
	    {"denied", HW_EPERM, false, 0, "Reading", true}, /* not its Device: no condition */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint32_t ch = 2, before = conditions;
		bool absent = steps[i].fault && !strcmp(steps[i].fault, "absent");
		assert_int_equal(
		    hw_sim_set_value(f->sim, "env", "present", absent ? 0 : 1, &f->err), K32_OK);
		if (steps[i].fault && !strcmp(steps[i].fault, "bus-error"))
			assert_int_equal(
			    hw_sim_inject(f->sim, "n1", 0, 0x77, HW_XFER_BUS_ERROR, 1, &f->err),
			    K32_OK);
		if (steps[i].fault && !strcmp(steps[i].fault, "timeout"))
			assert_int_equal(
			    hw_sim_inject(f->sim, "n1", 0, 0x77, HW_XFER_TIMEOUT, 1, &f->err),
			    K32_OK);
		if (steps[i].fault && !strcmp(steps[i].fault, "denied"))
			ch = 3;
		assert_int_equal(callfn(f, "k32_i2c_write_read", 7, U(0), U(ch), U(0x77), U(100),
					U(1), U(200), U(1)),
				 steps[i].want);
		if (steps[i].publish)
			assert_true(callfn(f, "k32_publish", 1, U(0)) >= 0);
		assert_int_equal(conditions - before, steps[i].new_conditions);
		if (conditions) {
			assert_string_equal(cond_reason, steps[i].reason);
			assert_true(cond_ready == steps[i].ready);
			/* the message names the address and fits the Device status whole */
			assert_true(strlen(cond_msg) < sizeof(((struct hw_devstatus *)0)->message));
			if (!steps[i].ready)
				assert_non_null(strstr(cond_msg, "at 0x77 (bus 0, mux channel 2)"));
		}
	}
	/* a driver's own condition stands until its next publish, which says Reading again */
	memcpy(f->mem, "WrongChip", 9);
	assert_int_equal(callfn(f, "k32_device_condition", 6, U(0), U(0), U(0), U(9), U(20), U(0)),
			 HW_OK);
	assert_string_equal(cond_reason, "WrongChip");
	assert_true(callfn(f, "k32_publish", 1, U(0)) >= 0);
	assert_string_equal(cond_reason, "Reading");
	assert_true(cond_ready);
	/* the longest message (bus 15, no mux) still fits the Device status */
	f->grants[0].bus = 15;
	f->grants[0].mux_channel = HW_MUX_NONE;
	hw_pod_xfer_failed(&f->pod, 0, HW_ENODEV);
	assert_non_null(strstr(cond_msg, "(bus 15, mux channel none)"));
	assert_true(strlen(cond_msg) < sizeof(((struct hw_devstatus *)0)->message));
	hw_pod_xfer_failed(&f->pod, 0, HW_EIO);
	assert_true(strlen(cond_msg) < sizeof(((struct hw_devstatus *)0)->message));
	f->grants[0].bus = 0;
	f->grants[0].mux_channel = 2;
	/* a Device index the pod lacks, or a code that is no bus failure: no condition */
	uint32_t before = conditions;
	hw_pod_xfer_failed(&f->pod, 1, HW_ENODEV);
	hw_pod_published(&f->pod, 1);
	hw_pod_xfer_failed(&f->pod, 0, HW_EINVAL);
	assert_int_equal(conditions, before);
}

static void test_unbound_pod(void **state)
{
	struct fix *f = *state;
	struct hw_pod lone;
	hw_pod_init(&lone, &f->host, NULL, 0, NULL);
	f->call.instance_user = &lone;
	f->mem[100] = 0x00;
	for (uint32_t ch = 0; ch < 8; ch++)
		for (uint32_t addr = 0; addr < 0x80; addr += 0x11)
			assert_int_equal(callfn(f, "k32_i2c_write_read", 7, U(0), U(ch), U(addr),
						U(100), U(1), U(200), U(1)),
					 HW_EPERM);
	assert_int_equal(
	    callfn(f, "k32_i2c_write_read", 7, U(0), U(1), U(0x26), U(100), U(1), U(200), U(4)),
	    HW_EPERM);
	assert_int_equal(callfn(f, "k32_device_get", 3, U(0), U(0), U(40)), HW_ENOENT);
	assert_int_equal(callfn(f, "k32_publish", 1, U(0)), HW_ENOENT);
	struct hw_bus_stats st;
	hw_bus_get_stats(&f->bus, &st);
	assert_int_equal(st.xfers, 0); /* nothing reached the bus */
	/* no pod at all: the call traps */
	f->call.instance_user = NULL;
	f->args[0] = 0;
	assert_int_equal(fn("k32_publish")->fn(&f->call), K32_ERR_BAD_STATE);
	assert_non_null(strstr(f->err.msg, "hw_pod"));
}

static void test_device_info(void **state)
{
	struct fix *f = *state;
	assert_int_equal(callfn(f, "k32_device_get", 3, U(0), U(64), U(40)), HW_OK);
	static const uint8_t want[16] = {0, 0, 0, 0, 2, 0, 0, 0, 0x77, 0, 0, 0, 0, 0, 0, 0};
	assert_memory_equal(f->mem + 64, want, 16);
	assert_string_equal((char *)f->mem + 80, "bme688");
	assert_int_equal(callfn(f, "k32_device_get", 3, U(1), U(64), U(40)), HW_ENOENT);
	assert_int_equal(callfn(f, "k32_device_get", 3, U(0), U(64), U(39)), HW_ENOSPC);
	assert_int_equal(callfn(f, "k32_device_get", 3, U(0), U(1000), U(40)), HW_EINVAL);
	memcpy(f->mem, "heaterTempC", 11);
	assert_int_equal(callfn(f, "k32_device_param", 5, U(0), U(0), U(11), U(300), U(16)), 3);
	assert_string_equal((char *)f->mem + 300, "320");
	assert_int_equal(callfn(f, "k32_device_param", 5, U(0), U(0), U(11), U(300), U(2)),
			 HW_ENOSPC);
	assert_int_equal(callfn(f, "k32_device_param", 5, U(0), U(0), U(6), U(300), U(16)),
			 HW_ENOENT);
	assert_int_equal(callfn(f, "k32_device_param", 5, U(1), U(0), U(11), U(300), U(16)),
			 HW_ENOENT);
	assert_int_equal(callfn(f, "k32_device_param", 5, U(0), U(0), U(11), U(1020), U(16)),
			 HW_EINVAL);
	/* k32_device_param_u32: the number, def when absent or malformed, capped at max */
	static const struct {
		const char *key;
		uint32_t idx, def, max, want;
	} nums[] = {{"heaterTempC", 0, 1, 1000, 320},
		    {"heaterTempC", 0, 1, 100, 100},
		    {"nosuch", 0, 7, 100, 7},
		    {"heaterTempC", 1, 9, 1000, 9},
		    {"pollIntervalMs", 0, 5, 1u << 31, 3000}};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		size_t kl = strlen(nums[i].key);
		memcpy(f->mem, nums[i].key, kl);
		assert_int_equal(callfn(f, "k32_device_param_u32", 5, U(nums[i].idx), U(0), U(kl),
					U(nums[i].def), U(nums[i].max)),
				 nums[i].want);
	}
	/* a key outside memory: def, no trap */
	assert_int_equal(callfn(f, "k32_device_param_u32", 5, U(0), U(1020), U(11), U(42), U(99)),
			 42);
	static const struct {
		const char *v;
		uint32_t want;
	} vals[] = {{"0", 0},	    {"17", 17},	      {"999999999", 1000}, {"1000000000", 5},
		    {"", 5},	    {"-1", 5},	      {"12a", 5},	   {" 1", 5},
		    {"0000001", 1}, {"4294967295", 5}};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		assert_int_equal(hw_param_u32(vals[i].v, 5, 1000), vals[i].want);
	assert_int_equal(hw_param_u32(NULL, 5, 1000), 5);
	/* pollIntervalMs: spec.params first, else spec.pollIntervalMs, else none */
	static const struct {
		uint32_t nparams, poll_ms;
		int32_t want;
		const char *value;
	} polls[] = {{2, 500, 4, "3000"}, {1, 500, 3, "500"}, {1, 0, HW_ENOENT, NULL}};
	memcpy(f->mem, "pollIntervalMs", 14);
	for (size_t i = 0; i < sizeof(polls) / sizeof(polls[0]); i++) {
		f->grants[0].nparams = polls[i].nparams;
		f->grants[0].poll_ms = polls[i].poll_ms;
		memset(f->mem + 300, 0, 16);
		assert_int_equal(callfn(f, "k32_device_param", 5, U(0), U(0), U(14), U(300), U(16)),
				 polls[i].want);
		if (polls[i].value)
			assert_string_equal((char *)f->mem + 300, polls[i].value);
	}
}

static void test_time_sleep_log(void **state)
{
	struct fix *f = *state;
	f->results[0] = 0;
	assert_int_equal(fn("k32_time_us")->fn(&f->call), K32_OK);
	assert_int_equal(f->results[0], 5000000);
	assert_int_equal(fn("k32_time_ms")->fn(&f->call), K32_OK);
	assert_int_equal(f->results[0], 5000);
	assert_int_equal(callfn(f, "k32_sleep_ms", 1, U(10)), HW_OK);
	assert_int_equal(vclock, 5010000);
	assert_int_equal(callfn(f, "k32_sleep_ms", 1, U(11)), HW_EINVAL);
	assert_int_equal(vclock, 5010000);
	memcpy(f->mem, "hello", 5);
	for (int i = 0; i < K32_HW_LOG_PER_S + 5; i++) {
		f->args[0] = 2;
		f->args[1] = 0;
		f->args[2] = 5;
		assert_int_equal(fn("k32_log")->fn(&f->call), K32_OK);
	}
	assert_int_equal(logs, K32_HW_LOG_PER_S);
	assert_int_equal(f->pod.stats.log_dropped, 5);
	vclock += 1000000;
	assert_int_equal(fn("k32_log")->fn(&f->call), K32_OK);
	assert_int_equal(logs, K32_HW_LOG_PER_S + 1);
	f->args[1] = 5000; /* outside memory: dropped, no trap */
	assert_int_equal(fn("k32_log")->fn(&f->call), K32_OK);
	assert_int_equal(logs, K32_HW_LOG_PER_S + 1);
}

static uint64_t f64(double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return u;
}

static void test_readings(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *key;
		double v;
		int dec;
		int32_t st;
		const char *want;
	} cases[] = {
	    {"temperature_c", 23.64, 2, HW_OK, "23.64"},
	    {"pressure_pa", 99987, 0, HW_OK, "99987"},
	    {"humidity_pct", 41.955, 3, HW_OK, "41.955"},
	    {"gas_ohm", 117400, 0, HW_OK, "117400"},
	    {"temperature_c", 23.65, 2, HW_OK, "23.65"}, /* replaces */
	    {"neg", -0.001, 2, HW_OK, "0.00"},
	    {"Bad", 1, 0, HW_EINVAL, NULL},
	    {"", 1, 0, HW_EINVAL, NULL},
	    {"x", 1, 10, HW_EINVAL, NULL},
	    {"x", 1e300, 0, HW_EINVAL, NULL},
	    {"a_very_long_key_name_here_x", 1, 0, HW_EINVAL, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].key);
		memcpy(f->mem, cases[i].key, n);
		assert_int_equal(
		    callfn(f, "k32_reading_f64", 4, U(0), U(n), f64(cases[i].v), U(cases[i].dec)),
		    cases[i].st);
	}
	double nan = 0.0 / 0.0;
	memcpy(f->mem, "x", 1);
	assert_int_equal(callfn(f, "k32_reading_f64", 4, U(0), U(1), f64(nan), U(0)), HW_EINVAL);
	memcpy(f->mem, "uid", 3);
	memcpy(f->mem + 10, "5A3C910E", 8);
	assert_int_equal(callfn(f, "k32_reading_str", 4, U(0), U(3), U(10), U(8)), HW_OK);
	memcpy(f->mem + 10, "a\"b", 3);
	assert_int_equal(callfn(f, "k32_reading_str", 4, U(0), U(3), U(10), U(3)), HW_EINVAL);
	memset(f->mem + 10, 'A', 40);
	assert_int_equal(callfn(f, "k32_reading_str", 4, U(0), U(3), U(10), U(40)), HW_ENOSPC);
	assert_int_equal(callfn(f, "k32_publish", 1, U(0)), 6);
	assert_int_equal(publishes, 1);
	assert_int_equal(got_n, 6);
	for (size_t i = 1; i < 6; i++)
		assert_string_equal(hw_readings_get(&got, cases[i].key), cases[i].want);
	assert_string_equal(hw_readings_get(&got, "uid"), "5A3C910E");
	const char *k = NULL, *v = NULL, *last = NULL;
	size_t pairs = 0;
	for (size_t o = 0; (o = hw_readings_next(&got, o, &k, &v)) != 0; pairs++)
		last = k;
	assert_int_equal(pairs, 6);
	assert_string_equal(last, "uid"); /* staged last */
	/* staging is cleared; a publish of nothing is an empty update */
	assert_int_equal(callfn(f, "k32_publish", 1, U(0)), 0);
	assert_int_equal(got_n, 0);
	assert_int_equal(callfn(f, "k32_publish", 1, U(1)), HW_ENOENT);
	/* the stage holds K32_HW_MAX_READINGS keys */
	for (int i = 0; i < K32_HW_MAX_READINGS + 1; i++) {
		f->mem[0] = 'k';
		f->mem[1] = (uint8_t)('a' + i);
		assert_int_equal(callfn(f, "k32_reading_f64", 4, U(0), U(2), f64(i), U(0)),
				 i < K32_HW_MAX_READINGS ? HW_OK : HW_ENOSPC);
	}
	/* conditions (the first publish above reported Reading) */
	memcpy(f->mem, "NotFound", 8);
	memcpy(f->mem + 20, "no ACK", 6);
	uint32_t before = conditions;
	assert_int_equal(callfn(f, "k32_device_condition", 6, U(0), U(0), U(0), U(8), U(20), U(6)),
			 HW_OK);
	assert_int_equal(conditions, before + 1);
	assert_false(cond_ready);
	assert_string_equal(cond_reason, "NotFound");
	assert_int_equal(callfn(f, "k32_device_condition", 6, U(0), U(1), U(0), U(0), U(20), U(6)),
			 HW_EINVAL);
	assert_int_equal(callfn(f, "k32_device_condition", 6, U(4), U(1), U(0), U(8), U(20), U(6)),
			 HW_ENOENT);
}

/* The packed reading set: set, replace, limits, lookup, equality. */
static void test_readings_packed(void **state)
{
	(void)state;
	struct hw_readings a, b;
	hw_readings_clear(&a);
	hw_readings_clear(&b);
	char longv[K32_HW_READING_VALUE_LEN + 1], longk[K32_HW_READING_KEY_LEN + 1];
	memset(longv, '9', sizeof(longv));
	memset(longk, 'k', sizeof(longk));
	static const struct {
		const char *key, *value;
		int32_t st;
		uint8_t n; /* pairs after */
	} steps[] = {
	    {"present", "false", HW_OK, 1}, {"uid", "", HW_OK, 2},   {"present", "true", HW_OK, 2},
	    {"uid", "5A3C910E", HW_OK, 2},  {"", "x", HW_ENOSPC, 2}, {"sak", "8", HW_OK, 3},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(hw_readings_set(&a, steps[i].key, strlen(steps[i].key),
						 steps[i].value, strlen(steps[i].value)),
				 steps[i].st);
		assert_int_equal(a.n, steps[i].n);
	}
	assert_string_equal(hw_readings_get(&a, "present"), "true");
	assert_string_equal(hw_readings_get(&a, "uid"), "5A3C910E");
	assert_null(hw_readings_get(&a, "atqa"));
	assert_int_equal(a.len, strlen("present") + strlen("true") + strlen("uid") +
				    strlen("5A3C910E") + strlen("sak") + 1 + 6);
	/* too long a key or value, or an embedded NUL: refused, a unchanged */
	struct hw_readings before = a;
	assert_int_equal(hw_readings_set(&a, "x", 1, longv, K32_HW_READING_VALUE_LEN), HW_ENOSPC);
	assert_int_equal(hw_readings_set(&a, longk, K32_HW_READING_KEY_LEN, "1", 1), HW_ENOSPC);
	assert_int_equal(hw_readings_set(&a, "x", 1, "a\0b", 3), HW_ENOSPC);
	assert_true(hw_readings_equal(&a, &before));
	/* the same set in another order is equal; a changed value is not */
	assert_int_equal(hw_readings_set(&b, "sak", 3, "8", 1), HW_OK);
	assert_int_equal(hw_readings_set(&b, "uid", 3, "5A3C910E", 8), HW_OK);
	assert_false(hw_readings_equal(&a, &b));
	assert_int_equal(hw_readings_set(&b, "present", 7, "true", 4), HW_OK);
	assert_true(hw_readings_equal(&a, &b));
	assert_int_equal(hw_readings_set(&b, "present", 7, "fals", 4), HW_OK);
	assert_false(hw_readings_equal(&a, &b));
	/* K32_HW_MAX_READINGS pairs, or K32_HW_READINGS_BYTES, whichever comes first */
	hw_readings_clear(&a);
	int32_t st = HW_OK;
	size_t added = 0;
	char key[8];
	while (st == HW_OK) {
		snprintf(key, sizeof(key), "k%zu", added);
		st = hw_readings_set(&a, key, strlen(key), longv, K32_HW_READING_VALUE_LEN - 1);
		added += st == HW_OK;
	}
	assert_int_equal(st, HW_ENOSPC);
	assert_true(added == K32_HW_MAX_READINGS ||
		    a.len + strlen(key) + K32_HW_READING_VALUE_LEN + 1 > K32_HW_READINGS_BYTES);
	assert_true(a.len <= K32_HW_READINGS_BYTES);
}

static void test_table(void **state)
{
	(void)state;
	struct hw_pod_env env = {NULL};
	struct k32_hostfn_def defs[HW_HOSTFN_COUNT];
	assert_int_equal(hw_hostfns(&env, defs, HW_HOSTFN_COUNT), HW_HOSTFN_COUNT);
	assert_int_equal(hw_hostfns(&env, defs, 3), 3);
	for (size_t i = 0; i < HW_HOSTFN_COUNT; i++) {
		assert_string_equal(hw_hostfn_table[i].module, "kube32");
		assert_ptr_equal(defs[i < 3 ? i : 0].ctx, &env);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_i2c_grants, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_auto_conditions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unbound_pod, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_device_info, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_time_sleep_log, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_readings, setup, teardown),
	    cmocka_unit_test(test_readings_packed),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
