/*
 * hw_host.c - the "kube32" host functions for driver pods (hardware.md section 6).
 *
 * Each function is the verify half of a verify/impl pair: find the calling pod, check every
 * (pointer, length) against its linear memory with k32_hostcall_mem, check the
 * (bus, mux_channel, addr) triple against the pod's grants, then call the trusted code
 * (hw_bus_xfer, the embedder's callbacks). Results are >= 0 on success and hardware.md's
 * K32_E* codes otherwise; nothing a pod passes can trap the node or reach a device it was not
 * granted. A host function traps the pod only when the embedder gave it no hw_pod.
 *
 * Transfers go straight between linear memory and the bus (no copy): the instance runs on
 * one task and cannot grow its memory during the call.
 *
 * Context: the pod's task. k32_i2c_write_read blocks up to the bus's lock + transfer
 * timeouts; k32_sleep_ms up to K32_HW_SLEEP_MAX_MS.
 */
#include <math.h>
#include <stdio.h>

#include "base/k32_log.h"
#include "hw/hw_int.h"

#define ARGU(i) ((uint32_t)call->args[i])

void hw_pod_init(struct hw_pod *pod, const struct hw_host *host, const struct hw_grant *grants,
		 uint32_t ngrants, void *user)
{
	memset(pod, 0, sizeof(*pod));
	pod->host = host;
	pod->grants = grants;
	pod->ngrants = ngrants;
	pod->user = user;
}

static struct hw_pod *pod_of(struct k32_hostcall *call)
{
	const struct hw_pod_env *env = call->ctx;
	if (env && env->pod_of)
		return env->pod_of(call->instance_user);
	return call->instance_user;
}

static k32_status_t ret(struct k32_hostcall *call, int32_t v)
{
	call->results[0] = (uint64_t)(uint32_t)v;
	return K32_OK;
}

static k32_status_t no_pod(struct k32_hostcall *call)
{
	return k32_err_set(call->err, K32_ERR_BAD_STATE, "hw",
			   "driver host call from an instance with no hw_pod; the embedder must "
			   "set instance_user (or a hw_pod_env hook)");
}

static uint64_t now_us(const struct hw_pod *pod)
{
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->now_us)
		return ops->now_us(pod->user);
	return k32_now_us();
}

/* ---- the node's own Ready condition ---------------------------------------------------------- */

enum { COND_NONE = 0, COND_READY = 1, COND_DRIVER = 2 };

static void condition(struct hw_pod *pod, uint32_t index, bool ready, const char *reason,
		      const char *msg)
{
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->condition)
		ops->condition(pod->user, index, &pod->grants[index], ready, reason, strlen(reason),
			       msg, strlen(msg));
}

void hw_pod_xfer_failed(struct hw_pod *pod, uint32_t index, int32_t code)
{
	if (index >= pod->ngrants || index >= K32_HW_POD_AUTO_COND || code >= 0 ||
	    code == HW_EINVAL || code == HW_EPERM || pod->cond[index] == (int8_t)code)
		return;
	pod->cond[index] = (int8_t)code;
	const struct hw_grant *g = &pod->grants[index];
	char ch[16] = "none";
	if (g->mux_channel != HW_MUX_NONE)
		snprintf(ch, sizeof(ch), "%u", (unsigned)g->mux_channel);
	/* At most 120 bytes for real bus, channel and address values, so the Device status keeps
	 * all of it (hw_devstatus.message; hw_host_test checks the longest case). The buffer is
	 * larger so that no value the types allow can cut it (gcc -Wformat-truncation). */
	char msg[192];
	if (code == HW_ENODEV) {
		snprintf(
		    msg, sizeof(msg),
		    "no ACK at 0x%02x (bus %u, mux channel %s): device absent, unpowered or on "
		    "another channel; check wiring and spec.address",
		    (unsigned)g->addr, (unsigned)g->bus, ch);
		condition(pod, index, false, "NotFound", msg);
	} else {
		snprintf(msg, sizeof(msg),
			 "I2C %s at 0x%02x (bus %u, mux channel %s); retrying; check wiring and "
			 "pull-ups if it persists",
			 code == HW_ETIMEDOUT ? "timeout" : "data NACK or bus error",
			 (unsigned)g->addr, (unsigned)g->bus, ch);
		condition(pod, index, false, "BusError", msg);
	}
}

void hw_pod_published(struct hw_pod *pod, uint32_t index)
{
	if (index >= pod->ngrants || index >= K32_HW_POD_AUTO_COND ||
	    pod->cond[index] == COND_READY)
		return;
	pod->cond[index] = COND_READY;
	condition(pod, index, true, "Reading", "readings are fresh");
}

/* ---- I2C ------------------------------------------------------------------------------------ */

static k32_status_t k32_i2c_write_read(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t bus = ARGU(0), ch = ARGU(1), addr = ARGU(2), wlen = ARGU(4), rlen = ARGU(6);
	if (wlen > K32_HW_I2C_MAX || rlen > K32_HW_I2C_MAX)
		return ret(call, HW_EINVAL);
	uint8_t *w = k32_hostcall_mem(call, ARGU(3), wlen);
	uint8_t *r = k32_hostcall_mem(call, ARGU(5), rlen);
	if (!w || !r)
		return ret(call, HW_EINVAL);
	uint32_t gi = 0;
	for (; gi < pod->ngrants; gi++) {
		const struct hw_grant *g = &pod->grants[gi];
		if (g->bus == bus && g->mux_channel == ch && g->addr == addr)
			break;
	}
	if (gi == pod->ngrants) {
		pod->stats.denied++;
		return ret(call, HW_EPERM);
	}
	struct hw_bus *b = bus < K32_HW_MAX_BUSES && pod->host ? pod->host->bus[bus] : NULL;
	if (!b) {
		pod->stats.i2c_errors++;
		hw_pod_xfer_failed(pod, gi, HW_ENODEV);
		return ret(call, HW_ENODEV);
	}
	struct k32_err err;
	k32_err_clear(&err);
	k32_status_t st = hw_bus_xfer(b, ch, addr, w, wlen, r, rlen, &err);
	int32_t code = hw_status_to_driver(st);
	pod->stats.last_i2c_status = code;
	if (st == K32_OK) {
		pod->stats.i2c_ok++;
	} else {
		pod->stats.i2c_errors++;
		hw_pod_xfer_failed(pod, gi, code);
	}
	return ret(call, code);
}

/* ---- devices -------------------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static k32_status_t k32_device_get(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t idx = ARGU(0), out_len = ARGU(2);
	if (idx >= pod->ngrants)
		return ret(call, HW_ENOENT);
	if (out_len < 40)
		return ret(call, HW_ENOSPC);
	uint8_t *out = k32_hostcall_mem(call, ARGU(1), 40);
	if (!out)
		return ret(call, HW_EINVAL);
	const struct hw_grant *g = &pod->grants[idx];
	put32(out, g->bus);
	put32(out + 4, g->mux_channel);
	put32(out + 8, g->addr);
	put32(out + 12, g->flags);
	memset(out + 16, 0, 24);
	memcpy(out + 16, g->model, strnlen(g->model, 23));
	return ret(call, HW_OK);
}

/* spec.params[key] of g, else spec.pollIntervalMs for "pollIntervalMs" (printed into poll,
 * 12 bytes); NULL when neither. */
static const char *param_of(const struct hw_grant *g, const char *key, uint32_t key_len, char *poll)
{
	for (uint32_t i = 0; i < g->nparams; i++) {
		const struct hw_param *p = &g->params[i];
		if (strlen(p->key) == key_len && !memcmp(p->key, key, key_len))
			return p->value;
	}
	if (!g->poll_ms || key_len != 14 || memcmp(key, "pollIntervalMs", 14))
		return NULL;
	snprintf(poll, 12, "%u", (unsigned)g->poll_ms);
	return poll;
}

uint32_t hw_param_u32(const char *v, uint32_t def, uint32_t max)
{
	size_t n = v ? strlen(v) : 0;
	if (n == 0 || n > 9)
		return def;
	uint32_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return def;
		x = x * 10u + (uint32_t)(v[i] - '0');
	}
	return x < max ? x : max;
}

static k32_status_t k32_device_param(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t idx = ARGU(0), key_len = ARGU(2), buf_len = ARGU(4);
	const char *key = (const char *)k32_hostcall_mem(call, ARGU(1), key_len);
	char *buf = (char *)k32_hostcall_mem(call, ARGU(3), buf_len);
	if (!key || !buf)
		return ret(call, HW_EINVAL);
	if (idx >= pod->ngrants)
		return ret(call, HW_ENOENT);
	char poll[12];
	const char *v = param_of(&pod->grants[idx], key, key_len, poll);
	if (!v)
		return ret(call, HW_ENOENT);
	size_t n = strlen(v);
	if (n > INT32_MAX)
		return ret(call, HW_EINVAL);
	if (n > buf_len)
		return ret(call, HW_ENOSPC);
	memcpy(buf, v, n);
	if (n < buf_len)
		buf[n] = 0;
	return ret(call, (int32_t)n);
}

/* k32_device_param_u32(index, key, key_len, def, max): never an error, def instead. */
static k32_status_t k32_device_param_u32(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t idx = ARGU(0), key_len = ARGU(2), def = ARGU(3), max = ARGU(4);
	const char *key = (const char *)k32_hostcall_mem(call, ARGU(1), key_len);
	char poll[12];
	const char *v =
	    key && idx < pod->ngrants ? param_of(&pod->grants[idx], key, key_len, poll) : NULL;
	return ret(call, (int32_t)hw_param_u32(v, def, max));
}

/* ---- time, sleep, log ------------------------------------------------------------------------ */

static k32_status_t k32_time_us(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	call->results[0] = now_us(pod);
	return K32_OK;
}

static k32_status_t k32_time_ms(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	call->results[0] = now_us(pod) / 1000;
	return K32_OK;
}

static k32_status_t k32_sleep_ms(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t ms = ARGU(0);
	if (ms > K32_HW_SLEEP_MAX_MS)
		return ret(call, HW_EINVAL);
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->sleep_us)
		ops->sleep_us(pod->user, (uint64_t)ms * 1000);
	else
		k32_plat()->sleep_us((uint64_t)ms * 1000);
	return ret(call, HW_OK);
}

static k32_status_t k32_log_fn(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t level = ARGU(0), len = ARGU(2);
	if (len > K32_LOG_LINE_LEN - 1)
		len = K32_LOG_LINE_LEN - 1;
	const char *msg = (const char *)k32_hostcall_mem(call, ARGU(1), len);
	if (!msg)
		return K32_OK; /* a log line is not worth a trap; nothing to print */
	uint64_t now = now_us(pod);
	if (now - pod->log_window_us >= 1000000) {
		pod->log_window_us = now;
		pod->log_count = 0;
	}
	if (pod->log_count >= K32_HW_LOG_PER_S) {
		pod->stats.log_dropped++;
		return K32_OK;
	}
	pod->log_count++;
	if (level > 3)
		level = 3;
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->log) {
		ops->log(pod->user, level, msg, len);
	} else {
		static const enum k32_log_level map[4] = {K32_LOG_ERROR, K32_LOG_WARN, K32_LOG_INFO,
							  K32_LOG_DEBUG};
		k32_log(map[level], "driver", "%.*s", (int)len, msg);
	}
	return K32_OK;
}

/* ---- readings ----------------------------------------------------------------------------- */

static bool key_ok(const char *k, uint32_t n)
{
	if (n == 0 || n >= K32_HW_READING_KEY_LEN)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

void hw_readings_clear(struct hw_readings *r)
{
	r->len = 0;
	r->n = 0;
}

size_t hw_readings_next(const struct hw_readings *r, size_t off, const char **key,
			const char **value)
{
	if (off >= r->len)
		return 0;
	*key = r->kv + off;
	*value = *key + strlen(*key) + 1;
	return (size_t)(*value - r->kv) + strlen(*value) + 1;
}

const char *hw_readings_get(const struct hw_readings *r, const char *key)
{
	const char *k, *v;
	for (size_t o = 0; (o = hw_readings_next(r, o, &k, &v)) != 0;)
		if (!strcmp(k, key))
			return v;
	return NULL;
}

int32_t hw_readings_set(struct hw_readings *r, const char *key, size_t key_len, const char *value,
			size_t value_len)
{
	if (key_len == 0 || key_len >= K32_HW_READING_KEY_LEN ||
	    value_len >= K32_HW_READING_VALUE_LEN || memchr(key, 0, key_len) ||
	    memchr(value, 0, value_len))
		return HW_ENOSPC;
	/* the key's old pair, if any, is cut out first */
	size_t old_off = 0, old_len = 0;
	const char *k, *v;
	for (size_t o = 0, next; (next = hw_readings_next(r, o, &k, &v)) != 0; o = next) {
		if (strlen(k) == key_len && !memcmp(k, key, key_len)) {
			old_off = o;
			old_len = next - o;
			break;
		}
	}
	size_t need = key_len + value_len + 2;
	if (r->len - old_len + need > sizeof(r->kv) || (!old_len && r->n >= K32_HW_MAX_READINGS))
		return HW_ENOSPC;
	if (old_len) {
		memmove(r->kv + old_off, r->kv + old_off + old_len, r->len - old_off - old_len);
		r->len = (uint16_t)(r->len - old_len);
		r->n--;
	}
	char *p = r->kv + r->len;
	memcpy(p, key, key_len);
	p[key_len] = 0;
	memcpy(p + key_len + 1, value, value_len);
	p[key_len + 1 + value_len] = 0;
	r->len = (uint16_t)(r->len + need);
	r->n++;
	return HW_OK;
}

bool hw_readings_equal(const struct hw_readings *a, const struct hw_readings *b)
{
	if (a->n != b->n || a->len != b->len)
		return false;
	const char *k, *v;
	for (size_t o = 0; (o = hw_readings_next(a, o, &k, &v)) != 0;) {
		const char *w = hw_readings_get(b, k);
		if (!w || strcmp(v, w))
			return false;
	}
	return true;
}

static k32_status_t k32_reading_f64(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t key_len = ARGU(1);
	int32_t decimals = (int32_t)ARGU(3);
	double v;
	memcpy(&v, &call->args[2], sizeof(v));
	const char *key = (const char *)k32_hostcall_mem(call, ARGU(0), key_len);
	if (!key || !key_ok(key, key_len) || decimals < 0 || decimals > 9 || !isfinite(v) ||
	    fabs(v) > 1e15)
		return ret(call, HW_EINVAL);
	char buf[K32_HW_READING_VALUE_LEN + 8];
	int n = snprintf(buf, sizeof(buf), "%.*f", (int)decimals, v);
	if (n < 0 || n >= (int)sizeof(buf))
		return ret(call, HW_ENOSPC);
	if (!strcmp(buf, "-0") || (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)))
		memmove(buf, buf + 1, (size_t)n--); /* no negative zero */
	return ret(call, hw_readings_set(&pod->staged, key, key_len, buf, (size_t)n));
}

static k32_status_t k32_reading_str(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t key_len = ARGU(1), v_len = ARGU(3);
	const char *key = (const char *)k32_hostcall_mem(call, ARGU(0), key_len);
	const char *v = (const char *)k32_hostcall_mem(call, ARGU(2), v_len);
	if (!key || !v || !key_ok(key, key_len))
		return ret(call, HW_EINVAL);
	for (uint32_t i = 0; i < v_len; i++)
		if (v[i] < 0x20 || v[i] > 0x7E || v[i] == '"' || v[i] == '\\')
			return ret(call, HW_EINVAL);
	return ret(call, hw_readings_set(&pod->staged, key, key_len, v, v_len));
}

static k32_status_t k32_publish(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t idx = ARGU(0);
	if (idx >= pod->ngrants)
		return ret(call, HW_ENOENT);
	uint32_t n = pod->staged.n;
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->publish)
		ops->publish(pod->user, idx, &pod->grants[idx], &pod->staged, now_us(pod));
	pod->stats.publishes++;
	hw_readings_clear(&pod->staged);
	hw_pod_published(pod, idx);
	return ret(call, (int32_t)n);
}

static k32_status_t k32_device_condition(struct k32_hostcall *call)
{
	struct hw_pod *pod = pod_of(call);
	if (!pod)
		return no_pod(call);
	uint32_t idx = ARGU(0), ready = ARGU(1), rlen = ARGU(3), mlen = ARGU(5);
	const char *reason = (const char *)k32_hostcall_mem(call, ARGU(2), rlen);
	const char *msg = (const char *)k32_hostcall_mem(call, ARGU(4), mlen);
	if (!reason || !msg || rlen == 0 || rlen > 64 || mlen > 256)
		return ret(call, HW_EINVAL);
	if (idx >= pod->ngrants)
		return ret(call, HW_ENOENT);
	const struct hw_host_ops *ops = pod->host ? pod->host->ops : NULL;
	if (ops && ops->condition)
		ops->condition(pod->user, idx, &pod->grants[idx], ready != 0, reason, rlen, msg,
			       mlen);
	if (idx < K32_HW_POD_AUTO_COND)
		pod->cond[idx] = COND_DRIVER; /* the node's next own condition is sent again */
	return ret(call, HW_OK);
}

/* ---- the table ----------------------------------------------------------------------------- */

/* clang-format off */
const struct k32_hostfn_def hw_hostfn_table[HW_HOSTFN_COUNT] = {
	{"kube32", "k32_i2c_write_read", "iiiiiii:i", k32_i2c_write_read, NULL},
	{"kube32", "k32_device_get", "iii:i", k32_device_get, NULL},
	{"kube32", "k32_device_param", "iiiii:i", k32_device_param, NULL},
	{"kube32", "k32_device_param_u32", "iiiii:i", k32_device_param_u32, NULL},
	{"kube32", "k32_time_us", ":I", k32_time_us, NULL},
	{"kube32", "k32_time_ms", ":I", k32_time_ms, NULL},
	{"kube32", "k32_sleep_ms", "i:i", k32_sleep_ms, NULL},
	{"kube32", "k32_log", "iii:", k32_log_fn, NULL},
	{"kube32", "k32_reading_f64", "iiFi:i", k32_reading_f64, NULL},
	{"kube32", "k32_reading_str", "iiii:i", k32_reading_str, NULL},
	{"kube32", "k32_publish", "i:i", k32_publish, NULL},
	{"kube32", "k32_device_condition", "iiiiii:i", k32_device_condition, NULL},
};
/* clang-format on */

size_t hw_hostfns(const struct hw_pod_env *env, struct k32_hostfn_def *out, size_t cap)
{
	size_t n = 0;
	for (; n < HW_HOSTFN_COUNT && n < cap; n++) {
		out[n] = hw_hostfn_table[n];
		out[n].ctx = (void *)env;
	}
	return n;
}
