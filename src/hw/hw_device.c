/*
 * hw_device.c - the kube32.io/v1alpha1 Device resource for the kubelet and the Device
 * controller (hardware.md section 7): parsing a Device into a grant, the driver pod manifest,
 * the duplicate check, and the status publisher that rate-limits Device status updates.
 *
 * Why a publisher here and not in the kubelet: it is the same logic on every node and it is
 * what decides how often a board talks to the control plane (at most one update per Device
 * per second, at once when a string reading such as uid changes, NoReading after three
 * silent poll intervals), so it is tested with the drivers it serves.
 *
 * Context: one thread per object; no locks, no allocation except the caller's k32_buf.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hw/hw_int.h"
#include "kmeta/kmeta.h"

static k32_status_t bad(struct k32_err *err, const char *name, const char *what)
{
	return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw", "Device %s: %s", name, what);
}

static bool copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

/*
 * Names as Kubernetes allows them (lowercase alphanumerics, '-' and '.'; a uid adds
 * uppercase hex). They go verbatim into the driver pod's JSON manifest and the status
 * patches, so anything else (a quote, a backslash, a control byte) is refused here rather
 * than escaped there.
 */
static bool name_ok(const char *s, bool uid)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '.' || (uid && *s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

static uint32_t default_poll_ms(const char *model)
{
	if (!strcmp(model, "rfid"))
		return 200;
	if (!strcmp(model, "bme688"))
		return 3000;
	return 1000;
}

k32_status_t hw_device_parse(const cJSON *obj, struct hw_device *d, struct k32_err *err)
{
	memset(d, 0, sizeof(*d));
	const cJSON *name = k32_json_find(obj, "metadata.name");
	const char *n = cJSON_IsString(name) ? name->valuestring : "(unnamed)";
	if (!cJSON_IsString(name) || !copy_str(d->name, sizeof(d->name), n))
		return bad(err, n, "metadata.name missing or longer than 63 bytes");
	const cJSON *ns = k32_json_find(obj, "metadata.namespace");
	if (!copy_str(d->ns, sizeof(d->ns), cJSON_IsString(ns) ? ns->valuestring : "default"))
		return bad(err, n, "metadata.namespace longer than 63 bytes");
	const cJSON *uid = k32_json_find(obj, "metadata.uid");
	if (!copy_str(d->uid, sizeof(d->uid), cJSON_IsString(uid) ? uid->valuestring : ""))
		return bad(err, n, "metadata.uid longer than 63 bytes");
	const cJSON *node = k32_json_find(obj, "spec.node");
	if (!cJSON_IsString(node) || !node->valuestring[0] ||
	    !copy_str(d->node, sizeof(d->node), node->valuestring))
		return bad(err, n, "spec.node missing (the Node whose kubelet owns the bus)");
	if (!name_ok(d->name, false) || !name_ok(d->ns, false) || !name_ok(d->node, false) ||
	    !name_ok(d->uid, true))
		return bad(err, n,
			   "metadata.name, metadata.namespace and spec.node must be lowercase "
			   "alphanumerics, '-' or '.' (and metadata.uid also uppercase); fix the "
			   "Device's names");
	const cJSON *model = k32_json_find(obj, "spec.model");
	enum hw_model m;
	if (!cJSON_IsString(model) || hw_model_parse(model->valuestring, &m) != K32_OK ||
	    !copy_str(d->model, sizeof(d->model), hw_model_name(m)))
		return bad(err, n, "spec.model must be bme688, miniscale or rfid");
	static const struct {
		const char *path;
		long lo, hi, dflt;
		bool req;
	} nums[] = {{"spec.bus", 0, K32_HW_MAX_BUSES - 1, 0, false},
		    {"spec.muxChannel", 0, 7, -1, false},
		    {"spec.address", 0x08, 0x77, 0, true},
		    {"spec.pollIntervalMs", 10, 3600000, 0, false}};
	long v[4];
	for (int i = 0; i < 4; i++) {
		const cJSON *it = k32_json_find(obj, nums[i].path);
		if (!it || cJSON_IsNull(it)) {
			if (nums[i].req)
				return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
						   "Device %s: %s is required", n, nums[i].path);
			v[i] = nums[i].dflt;
			continue;
		}
		if (!cJSON_IsNumber(it) || it->valuedouble != (double)(long)it->valuedouble ||
		    it->valuedouble < nums[i].lo || it->valuedouble > nums[i].hi)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "Device %s: %s must be an integer in %ld..%ld", n,
					   nums[i].path, nums[i].lo, nums[i].hi);
		v[i] = (long)it->valuedouble;
	}
	d->bus = (uint32_t)v[0];
	d->mux_channel = v[1] < 0 ? HW_MUX_NONE : (uint32_t)v[1];
	d->addr = (uint32_t)v[2];
	d->poll_ms = v[3] ? (uint32_t)v[3] : default_poll_ms(d->model);
	const cJSON *params = k32_json_find(obj, "spec.params");
	const cJSON *p;
	cJSON_ArrayForEach(p, params)
	{
		if (d->nparams == HW_DEVICE_MAX_PARAMS)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "Device %s: more than %d spec.params", n,
					   HW_DEVICE_MAX_PARAMS);
		size_t kl = p->string ? strlen(p->string) : HW_DEVICE_PARAM_LEN;
		size_t vl = cJSON_IsString(p) ? strlen(p->valuestring) : HW_DEVICE_PARAM_LEN;
		if (kl >= HW_DEVICE_PARAM_LEN || vl >= HW_DEVICE_PARAM_LEN)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "hw",
					   "Device %s: spec.params[%s] must be a string, key and "
					   "value under %d bytes",
					   n, p->string ? p->string : "?", HW_DEVICE_PARAM_LEN);
		if (d->store_len + kl + vl + 2 > sizeof(d->store))
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, "hw",
			    "Device %s: spec.params take more than %d bytes (keys and "
			    "values, one NUL each); shorten them",
			    n, K32_HW_DEVICE_PARAMS_BYTES);
		char *kp = d->store + d->store_len;
		memcpy(kp, p->string, kl + 1);
		memcpy(kp + kl + 1, p->valuestring, vl + 1);
		d->store_len += (uint32_t)(kl + vl + 2);
		d->nparams++;
	}
	hw_device_rebase(d);
	return K32_OK;
}

void hw_device_rebase(struct hw_device *d)
{
	const char *q = d->store;
	for (uint32_t i = 0; i < d->nparams; i++) {
		d->params[i].key = q;
		q += strlen(q) + 1;
		d->params[i].value = q;
		q += strlen(q) + 1;
	}
}

void hw_device_grant(const struct hw_device *d, struct hw_grant *g)
{
	memset(g, 0, sizeof(*g));
	g->bus = d->bus;
	g->mux_channel = d->mux_channel;
	g->addr = d->addr;
	snprintf(g->model, sizeof(g->model), "%s", d->model);
	g->name = d->name;
	g->params = d->params;
	g->nparams = d->nparams;
	g->poll_ms = d->poll_ms;
}

void hw_device_pod_name(const struct hw_device *d, char *out, size_t cap)
{
	char buf[2 * HW_NAME_LEN];
	snprintf(buf, sizeof(buf), "%s-%s", d->model, d->name);
	size_t n = strlen(buf);
	if (n > 63)
		n = 63;
	while (n > 0 && buf[n - 1] == '-')
		n--;
	buf[n] = 0;
	snprintf(out, cap, "%s", buf);
}

k32_status_t hw_device_pod_manifest(const struct hw_device *d, const char *mem_limit,
				    struct k32_buf *out, struct k32_err *err)
{
	uint64_t mem = K32_HW_DRIVER_MEM_BYTES, cap = 0;
	if (mem_limit && kmeta_quantity_bytes(mem_limit, &cap, NULL) && cap >= 1 && cap < mem)
		mem = cap;
	char pod[HW_NAME_LEN];
	hw_device_pod_name(d, pod, sizeof(pod));
	char owner[400] = "";
	if (d->uid[0])
		snprintf(owner, sizeof(owner),
			 ",\"ownerReferences\":[{\"apiVersion\":\"kube32.io/v1alpha1\",\"kind\":"
			 "\"Device\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
			 "\"blockOwnerDeletion\":true}]",
			 d->name, d->uid);
	return k32_buf_printf(
	    out, err,
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"%s\",\"labels\":{\"kube32.io/device\":\"%s\","
	    "\"kube32.io/driver\":\"%s\"},\"annotations\":{\"kube32.io/hardware\":\"i2c:%s\","
	    "\"kube32.io/device\":\"%s\",\"kube32.io/stack-bytes\":\"%u\",\"kube32.io/"
	    "call-depth\":\"%u\"}%s},\"spec\":{\"nodeName\":\"%s\",\"restartPolicy\":"
	    "\"Always\",\"containers\":[{\"name\":\"driver\",\"image\":\"%s.wasm\","
	    "\"resources\":{\"limits\":{\"memory\":\"%llu\"}}}]}}",
	    pod, d->ns, d->name, d->model, d->model, d->name, (unsigned)K32_HW_DRIVER_STACK_BYTES,
	    (unsigned)K32_HW_DRIVER_FRAMES, owner, d->node, d->model, (unsigned long long)mem);
}

int hw_device_conflict(const struct hw_device *devs, size_t n, const struct hw_device *d)
{
	for (size_t i = 0; i < n; i++) {
		const struct hw_device *o = &devs[i];
		if (!strcmp(o->ns, d->ns) && !strcmp(o->name, d->name))
			continue;
		if (!strcmp(o->node, d->node) && o->bus == d->bus &&
		    o->mux_channel == d->mux_channel && o->addr == d->addr)
			return (int)i;
	}
	return -1;
}

/* ---- status publisher -------------------------------------------------------------------- */

void hw_rfc3339(uint64_t wall_s, char *out)
{
	kmeta_rfc3339(wall_s, out);
}

void hw_devstatus_init(struct hw_devstatus *st, uint32_t poll_ms, uint32_t min_interval_ms)
{
	memset(st, 0, sizeof(*st));
	st->poll_ms = poll_ms ? poll_ms : 1000;
	st->min_interval_ms = min_interval_ms ? min_interval_ms : 1000;
}

static bool numeric(const char *v)
{
	if (!*v)
		return false;
	char *end;
	(void)strtod(v, &end);
	return *end == 0;
}

static void set_cond(struct hw_devstatus *st, bool ready, const char *reason, size_t rlen,
		     const char *msg, size_t mlen, uint64_t wall_s)
{
	char r[sizeof(st->reason)], m[sizeof(st->message)];
	snprintf(r, sizeof(r), "%.*s", (int)rlen, reason);
	snprintf(m, sizeof(m), "%.*s", (int)mlen, msg);
	if (st->have_cond && st->ready == ready && !strcmp(st->reason, r) &&
	    !strcmp(st->message, m))
		return;
	if (!st->have_cond || st->ready != ready)
		st->transition_wall_s = wall_s;
	st->have_cond = true;
	st->ready = ready;
	memcpy(st->reason, r, sizeof(r));
	memcpy(st->message, m, sizeof(m));
	st->dirty = true;
	st->urgent = true;
	st->event_pending = !ready;
}

void hw_devstatus_readings(struct hw_devstatus *st, const struct hw_readings *r, uint64_t now_us,
			   uint64_t wall_s)
{
	const char *k, *v;
	for (size_t o = 0; (o = hw_readings_next(r, o, &k, &v)) != 0;) {
		const char *old = hw_readings_get(&st->cur, k);
		if (!numeric(v) && (!old || strcmp(old, v)))
			st->urgent = true; /* uid, present: users watch these change */
	}
	st->cur = *r;
	st->last_read_us = now_us;
	st->last_read_wall_s = wall_s;
	st->dirty = true;
	if (!st->have_cond || !st->ready)
		set_cond(st, true, "Reading", 7, "readings are fresh", 18, wall_s);
}

void hw_devstatus_condition(struct hw_devstatus *st, bool ready, const char *reason,
			    size_t reason_len, const char *msg, size_t msg_len, uint64_t wall_s)
{
	set_cond(st, ready, reason, reason_len, msg, msg_len, wall_s);
}

static bool same_as_sent(const struct hw_devstatus *st)
{
	return hw_readings_equal(&st->cur, &st->sent);
}

bool hw_devstatus_due(struct hw_devstatus *st, uint64_t now_us, uint64_t wall_s)
{
	uint64_t silent = 3ull * st->poll_ms * 1000;
	if (st->last_read_us && st->ready && now_us - st->last_read_us > silent) {
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "no reading for %llu ms (3 poll intervals)",
				 (unsigned long long)((now_us - st->last_read_us) / 1000));
		set_cond(st, false, "NoReading", 9, msg, (size_t)n, wall_s);
	}
	if (!st->dirty)
		return false;
	if (st->urgent || !st->last_sent_us)
		return true;
	uint64_t since = now_us - st->last_sent_us;
	if (same_as_sent(st)) /* nothing new: only a heartbeat for lastReadTime */
		return since >= (uint64_t)K32_HW_STATUS_HEARTBEAT_S * 1000000;
	return since >= (uint64_t)st->min_interval_ms * 1000;
}

/* A JSON string body with escapes for ", \ and control bytes. */
static k32_status_t jstr(struct k32_buf *out, const char *s, struct k32_err *err)
{
	k32_status_t st = k32_buf_append(out, "\"", 1, err);
	for (; *s && st == K32_OK; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			st = k32_buf_printf(out, err, "\\%c", c);
		else if (c < 0x20)
			st = k32_buf_printf(out, err, "\\u%04x", c);
		else
			st = k32_buf_append(out, s, 1, err);
	}
	return st ? st : k32_buf_append(out, "\"", 1, err);
}

k32_status_t hw_devstatus_patch(struct hw_devstatus *st, const char *driver_pod, uint64_t now_us,
				struct k32_buf *out, struct k32_err *err)
{
	k32_status_t s = k32_buf_append_str(out, "{\"status\":{\"readings\":{", err);
	bool first = true;
	const char *k, *v;
	for (size_t o = 0; !s && (o = hw_readings_next(&st->cur, o, &k, &v)) != 0;) {
		s = k32_buf_printf(out, err, "%s", first ? "" : ",");
		if (!s)
			s = jstr(out, k, err);
		if (!s)
			s = k32_buf_append(out, ":", 1, err);
		if (!s)
			s = jstr(out, v, err);
		first = false;
	}
	for (size_t o = 0; !s && (o = hw_readings_next(&st->sent, o, &k, &v)) != 0;) {
		if (hw_readings_get(&st->cur, k))
			continue;
		s = k32_buf_printf(out, err, "%s", first ? "" : ",");
		if (!s)
			s = jstr(out, k, err);
		if (!s)
			s = k32_buf_append_str(out, ":null", err);
		first = false;
	}
	if (!s)
		s = k32_buf_append_str(out, "}", err);
	char t[24];
	if (!s && st->last_read_wall_s) {
		hw_rfc3339(st->last_read_wall_s, t);
		s = k32_buf_printf(out, err, ",\"lastReadTime\":\"%s\"", t);
	}
	if (!s && st->have_cond) {
		hw_rfc3339(st->transition_wall_s, t);
		s = k32_buf_printf(out, err,
				   ",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
				   "\"reason\":",
				   st->ready ? "True" : "False");
		if (!s)
			s = jstr(out, st->reason, err);
		if (!s)
			s = k32_buf_append_str(out, ",\"message\":", err);
		if (!s)
			s = jstr(out, st->message, err);
		if (!s)
			s = k32_buf_printf(out, err, ",\"lastTransitionTime\":\"%s\"}]", t);
	}
	if (!s && driver_pod) {
		s = k32_buf_append_str(out, ",\"driverPod\":", err);
		if (!s)
			s = jstr(out, driver_pod, err);
	}
	if (!s)
		s = k32_buf_append_str(out, "}}", err);
	if (s)
		return s;
	st->sent = st->cur;
	st->last_sent_us = now_us ? now_us : 1;
	st->dirty = false;
	st->urgent = false;
	return K32_OK;
}

bool hw_devstatus_event(struct hw_devstatus *st, const struct hw_device *d, const char *component,
			uint64_t wall_s, struct k32_buf *out, struct k32_err *err)
{
	if (!st->event_pending || st->ready)
		return false;
	char t[24];
	hw_rfc3339(wall_s, t);
	k32_status_t s = k32_buf_printf(
	    out, err,
	    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":"
	    "\"%s.\",\"namespace\":\"%s\"},\"involvedObject\":{\"apiVersion\":"
	    "\"kube32.io/v1alpha1\",\"kind\":\"Device\",\"name\":\"%s\",\"namespace\":"
	    "\"%s\"%s%s%s},\"type\":\"Warning\",\"reason\":",
	    d->name, d->ns, d->name, d->ns, d->uid[0] ? ",\"uid\":\"" : "", d->uid,
	    d->uid[0] ? "\"" : "");
	if (!s)
		s = jstr(out, st->reason, err);
	if (!s)
		s = k32_buf_append_str(out, ",\"message\":", err);
	if (!s)
		s = jstr(out, st->message, err);
	if (!s)
		s = k32_buf_append_str(out, ",\"source\":{\"component\":", err);
	if (!s)
		s = jstr(out, component ? component : "kubelet", err);
	if (!s)
		s = k32_buf_printf(out, err,
				   "},\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\","
				   "\"count\":1}",
				   t, t);
	if (s)
		return false;
	st->event_pending = false;
	return true;
}
