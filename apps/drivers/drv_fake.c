/*
 * drv_fake.c - see drv_fake.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drv_fake.h"

struct drv_fake drv_fake;

static uint64_t vnow(void *ud)
{
	(void)ud;
	return drv_fake.clock_us;
}

static void on_condition(void *user, uint32_t index, const struct hw_grant *dev, bool ready,
			 const char *reason, size_t reason_len, const char *msg, size_t msg_len)
{
	(void)user;
	(void)index;
	(void)dev;
	(void)msg;
	(void)msg_len;
	drv_fake.ready = ready;
	snprintf(drv_fake.reason, sizeof(drv_fake.reason), "%.*s", (int)reason_len, reason);
	drv_fake.conditions++;
}

static const struct hw_host_ops fake_ops = {.condition = on_condition};

void drv_fake_setup(enum hw_model model, uint32_t ch, uint8_t addr, const struct hw_param *params,
		    uint32_t nparams)
{
	memset(&drv_fake, 0, sizeof(drv_fake));
	drv_fake.clock_us = 1000000;
	static struct hw_sim_bus_config bus = {"node", 0, true, 0x70};
	static struct hw_sim_dev_config dev;
	dev = (struct hw_sim_dev_config){"dev", "node", 0, ch, addr, model};
	struct hw_sim_config cfg = {&bus, 1, &dev, 1, vnow, NULL};
	struct k32_err err;
	if (hw_sim_new(k32_default_allocator(), &cfg, &drv_fake.sim, &err) != K32_OK) {
		fprintf(stderr, "drv_fake: %s\n", err.msg);
		return;
	}
	const struct hw_bus_backend_ops *ops;
	void *ctx;
	hw_sim_backend(drv_fake.sim, "node", 0, &ops, &ctx);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	hw_bus_init(&drv_fake.bus, 0, ops, ctx, &bc, &err);
	hw_bus_mux_reset(&drv_fake.bus, &err);
	drv_fake.info.bus = 0;
	drv_fake.info.mux_channel = ch;
	drv_fake.info.addr = addr;
	snprintf(drv_fake.info.model, sizeof(drv_fake.info.model), "%s", hw_model_name(model));
	drv_fake.params = params;
	drv_fake.nparams = nparams;
	drv_fake.granted = true;
	drv_fake.grant = (struct hw_grant){.bus = 0, .mux_channel = ch, .addr = addr};
	drv_fake.host.ops = &fake_ops;
	hw_pod_init(&drv_fake.pod, &drv_fake.host, &drv_fake.grant, 1, NULL);
}

void drv_fake_teardown(void)
{
	hw_bus_fini(&drv_fake.bus);
	hw_sim_free(drv_fake.sim);
	drv_fake.sim = NULL;
}

const char *drv_fake_reading(const char *key)
{
	return hw_readings_get(&drv_fake.pub, key);
}

k32_status_t drv_fake_xfer(const void *w, size_t wlen, void *r, size_t rlen)
{
	return hw_bus_xfer(&drv_fake.bus, drv_fake.info.mux_channel, drv_fake.info.addr, w, wlen, r,
			   rlen, NULL);
}

int32_t k32_i2c_write_read(uint32_t bus, uint32_t mux_channel, uint32_t addr, const void *wbuf,
			   uint32_t wlen, void *rbuf, uint32_t rlen)
{
	if (!drv_fake.granted || bus != drv_fake.info.bus ||
	    mux_channel != drv_fake.info.mux_channel || addr != drv_fake.info.addr)
		return K32_EPERM;
	if (wlen > K32_I2C_MAX || rlen > K32_I2C_MAX)
		return K32_EINVAL;
	drv_fake.xfers++;
	int32_t code = hw_status_to_driver(
	    hw_bus_xfer(&drv_fake.bus, mux_channel, addr, wbuf, wlen, rbuf, rlen, NULL));
	if (code != 0)
		hw_pod_xfer_failed(&drv_fake.pod, 0, code);
	return code;
}

int32_t k32_device_get(uint32_t index, k32_device_info *out, uint32_t out_len)
{
	if (index != 0)
		return K32_ENOENT;
	if (out_len < sizeof(*out))
		return K32_ENOSPC;
	*out = drv_fake.info;
	return 0;
}

int32_t k32_device_param(uint32_t index, const char *key, uint32_t key_len, char *buf,
			 uint32_t buf_len)
{
	if (index != 0)
		return K32_ENOENT;
	for (uint32_t i = 0; i < drv_fake.nparams; i++) {
		const struct hw_param *p = &drv_fake.params[i];
		if (strlen(p->key) != key_len || memcmp(p->key, key, key_len))
			continue;
		uint32_t n = (uint32_t)strlen(p->value);
		if (n > buf_len)
			return K32_ENOSPC;
		memcpy(buf, p->value, n);
		if (n < buf_len)
			buf[n] = 0;
		return (int32_t)n;
	}
	return K32_ENOENT;
}

uint32_t k32_device_param_u32(uint32_t index, const char *key, uint32_t key_len, uint32_t def,
			      uint32_t max)
{
	char buf[16];
	int32_t n = k32_device_param(index, key, key_len, buf, sizeof(buf) - 1);
	if (n < 0)
		return hw_param_u32(NULL, def, max);
	buf[n] = 0;
	return hw_param_u32(buf, def, max);
}

int64_t k32_time_us(void)
{
	return (int64_t)drv_fake.clock_us;
}

int64_t k32_time_ms(void)
{
	return (int64_t)(drv_fake.clock_us / 1000);
}

int32_t k32_sleep_ms(uint32_t ms)
{
	if (ms > K32_SLEEP_MAX_MS)
		return K32_EINVAL;
	drv_fake.clock_us += (uint64_t)ms * 1000;
	return 0;
}

void k32_log(uint32_t level, const char *msg, uint32_t len)
{
	(void)level;
	(void)msg;
	(void)len;
}

static int32_t stage(const char *key, uint32_t key_len, const char *v, size_t n)
{
	return hw_readings_set(&drv_fake.staged, key, key_len, v, n); /* 0 or K32_ENOSPC */
}

int32_t k32_reading_f64(const char *key, uint32_t key_len, double v, int32_t decimals)
{
	char buf[64];
	if (!isfinite(v) || decimals < 0 || decimals > 9)
		return K32_EINVAL;
	int n = snprintf(buf, sizeof(buf), "%.*f", (int)decimals, v);
	return stage(key, key_len, buf, (size_t)n);
}

int32_t k32_reading_str(const char *key, uint32_t key_len, const char *v, uint32_t v_len)
{
	return stage(key, key_len, v, v_len);
}

int32_t k32_publish(uint32_t device_index)
{
	if (device_index != 0)
		return K32_ENOENT;
	drv_fake.pub = drv_fake.staged;
	hw_readings_clear(&drv_fake.staged);
	drv_fake.publishes++;
	hw_pod_published(&drv_fake.pod, 0);
	return (int32_t)drv_fake.pub.n;
}

int32_t k32_device_condition(uint32_t device_index, uint32_t ready, const char *reason,
			     uint32_t reason_len, const char *msg, uint32_t msg_len)
{
	(void)msg;
	(void)msg_len;
	if (device_index != 0)
		return K32_ENOENT;
	drv_fake.ready = ready != 0;
	snprintf(drv_fake.reason, sizeof(drv_fake.reason), "%.*s", (int)reason_len, reason);
	drv_fake.conditions++;
	drv_fake.pod.cond[0] = 2; /* as hw_host: the node's next own condition is sent again */
	return 0;
}
