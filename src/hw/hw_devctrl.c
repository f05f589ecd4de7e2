/*
 * hw_devctrl.c - the Device controller: one reconcile pass over kube32.io/v1alpha1 Devices
 * through the in-process API client (see hw.h, "the Device controller").
 *
 * Why one bounded pass and not a watch loop here: src/ctrl owns the controller loop (its
 * watches, back-off and kicks); this file is the Device-specific reconcile it calls, so it
 * can also run from a test or the simulator's console. Devices are ordered by
 * creationTimestamp so the older of two Devices on one address keeps it.
 *
 * Context: the controller's thread. Memory: the list responses (k32_buf) and a parsed copy
 * (cJSON) per pass, K32_HW_CTRL_BATCH Devices at most; freed before returning.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "hw/hw_int.h"

#define LIST_MAX_BYTES (4u << 20)

static k32_status_t call(struct api_server *api, const char *method, const char *target,
			 const char *ct, const char *body, int *code, struct k32_buf *out,
			 struct k32_err *err)
{
	k32_buf_reset(out);
	return api_do(api, method, target, ct, body, body ? strlen(body) : 0, code, out, err);
}

static const char *sval(const cJSON *o, const char *path)
{
	const cJSON *it = k32_json_find(o, path);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

bool hw_rfc3339_parse(const char *s, uint64_t *out)
{
	int y, mo, d, h, mi, se;
	char t, z;
	if (!s || sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%2d%c", &y, &mo, &d, &t, &h, &mi, &se, &z) != 8 ||
	    (t != 'T' && t != 't') || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || se > 60)
		return false;
	if (z == '.') { /* fractions: digits, then Z */
		const char *f = s + 20;
		while (*f >= '0' && *f <= '9')
			f++;
		if (f == s + 20 || *f != 'Z' || f[1])
			return false;
	} else if (z != 'Z' || s[20]) {
		return false;
	}
	/* days from civil (proleptic Gregorian) */
	int64_t yy = y - (mo <= 2);
	int64_t era = yy / 400;
	int64_t yoe = yy - era * 400;
	int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;
	*out = (uint64_t)days * 86400 + (uint64_t)(h * 3600 + mi * 60 + se);
	return true;
}

/* The Device's Ready condition: status and reason (NULLs when absent). */
static void ready_of(const cJSON *dev, const char **status, const char **reason)
{
	*status = *reason = NULL;
	const cJSON *c;
	cJSON_ArrayForEach(c, k32_json_find(dev, "status.conditions"))
	{
		const char *type = sval(c, "type");
		if (type && !strcmp(type, "Ready")) {
			*status = sval(c, "status");
			*reason = sval(c, "reason");
		}
	}
}

static k32_status_t patch_status(struct api_server *api, const struct hw_device *d,
				 const char *body, struct k32_buf *out, struct k32_err *err)
{
	char target[256];
	int code = 0;
	snprintf(target, sizeof(target), "/apis/kube32.io/v1alpha1/namespaces/%s/devices/%s/status",
		 d->ns, d->name);
	k32_status_t st =
	    call(api, "PATCH", target, "application/merge-patch+json", body, &code, out, err);
	if (st == K32_OK && code != 200 && code != 404)
		st = k32_err_set(err, K32_ERR_IO, "hw",
				 "Device %s/%s: status patch answered %d: %.80s", d->ns, d->name,
				 code, k32_buf_cstr(out));
	return st;
}

static k32_status_t set_ready_false(struct api_server *api, const struct hw_device *d,
				    const char *reason, const char *msg, uint64_t wall_s,
				    struct k32_buf *out, struct k32_err *err)
{
	char t[24], body[768];
	hw_rfc3339(wall_s, t);
	snprintf(body, sizeof(body),
		 "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
		 "\"reason\":\"%s\",\"message\":\"%s\",\"lastTransitionTime\":\"%s\"}]}}",
		 reason, msg, t);
	return patch_status(api, d, body, out, err);
}

/* Indices of items sorted by creationTimestamp, then name (insertion sort; n is bounded). */
static void order(const cJSON **items, int n, int *idx)
{
	for (int i = 0; i < n; i++) {
		int j = i;
		const char *ti = sval(items[i], "metadata.creationTimestamp");
		const char *ni = sval(items[i], "metadata.name");
		while (j > 0) {
			const cJSON *o = items[idx[j - 1]];
			const char *to = sval(o, "metadata.creationTimestamp");
			const char *no = sval(o, "metadata.name");
			int c = strcmp(to ? to : "", ti ? ti : "");
			if (c < 0 || (c == 0 && strcmp(no ? no : "", ni ? ni : "") <= 0))
				break;
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
}

static bool pod_exists(const cJSON *pods, const char *ns, const char *name)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		const char *pn = sval(p, "metadata.name"), *pns = sval(p, "metadata.namespace");
		if (pn && pns && !strcmp(pn, name) && !strcmp(pns, ns))
			return true;
	}
	return false;
}

/* Seconds without a status update after which a Device is Stale (before the grace): three
 * poll intervals, but at least two heartbeats of unchanged readings. */
static uint64_t stale_after_s(const struct hw_device *d)
{
	uint64_t polls = 3ull * d->poll_ms / 1000;
	uint64_t beats = 2ull * K32_HW_STATUS_HEARTBEAT_S;
	return polls > beats ? polls : beats;
}

/* Reconciles one Device (already known not to conflict). */
static k32_status_t reconcile(struct api_server *api, const cJSON *obj, const struct hw_device *d,
			      const cJSON *pods, uint64_t wall_s, uint32_t grace_s,
			      const char *mem_limit, struct hw_devctrl_stats *out,
			      struct k32_buf *buf, struct k32_err *err)
{
	char pod[HW_NAME_LEN], target[256];
	int code = 0;
	k32_status_t st = K32_OK;
	hw_device_pod_name(d, pod, sizeof(pod));
	if (!pod_exists(pods, d->ns, pod)) {
		struct k32_buf manifest;
		k32_buf_init(&manifest, k32_default_allocator(), 4096, "driver pod manifest");
		st = hw_device_pod_manifest(d, mem_limit, &manifest, err);
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", d->ns);
		if (st == K32_OK)
			st = call(api, "POST", target, NULL, k32_buf_cstr(&manifest), &code, buf,
				  err);
		k32_buf_fini(&manifest);
		if (st != K32_OK)
			return st;
		if (code == 201)
			out->created++;
		else if (code != 409)
			return k32_err_set(
			    err, K32_ERR_IO, "hw",
			    "Device %s/%s: creating driver pod %s answered %d: %.80s", d->ns,
			    d->name, pod, code, k32_buf_cstr(buf));
	}
	const char *have = sval(obj, "status.driverPod");
	if (!have || strcmp(have, pod)) {
		char body[160];
		snprintf(body, sizeof(body), "{\"status\":{\"driverPod\":\"%s\"}}", pod);
		if ((st = patch_status(api, d, body, buf, err)))
			return st;
		out->updated++;
	}
	const char *rs, *reason;
	uint64_t last;
	ready_of(obj, &rs, &reason);
	if (rs && !strcmp(rs, "True") &&
	    hw_rfc3339_parse(sval(obj, "status.lastReadTime"), &last) &&
	    wall_s > last + stale_after_s(d) + grace_s) {
		char msg[192];
		snprintf(msg, sizeof(msg),
			 "no reading since %llu s (3 poll intervals or 2 heartbeats, + %u s); is "
			 "node %s up?",
			 (unsigned long long)(wall_s - last), (unsigned)grace_s, d->node);
		if ((st = set_ready_false(api, d, "Stale", msg, wall_s, buf, err)))
			return st;
		out->stale++;
		out->updated++;
	}
	return K32_OK;
}

static k32_status_t delete_orphans(struct api_server *api, const cJSON *devs, const cJSON *pods,
				   struct hw_devctrl_stats *out, struct k32_buf *buf,
				   struct k32_err *err)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		const cJSON *labels = k32_json_find(p, "metadata.labels");
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels, "kube32.io/device");
		const char *dev = cJSON_IsString(l) ? l->valuestring : NULL;
		const char *ns = sval(p, "metadata.namespace"), *name = sval(p, "metadata.name");
		if (!dev || !ns || !name || sval(p, "metadata.deletionTimestamp"))
			continue;
		bool found = false;
		const cJSON *d;
		cJSON_ArrayForEach(d, devs)
		{
			const char *dn = sval(d, "metadata.name"),
				   *dns = sval(d, "metadata.namespace");
			if (dn && dns && !strcmp(dn, dev) && !strcmp(dns, ns))
				found = true;
		}
		if (found)
			continue;
		char target[256];
		int code = 0;
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
		k32_status_t st = call(api, "DELETE", target, NULL, NULL, &code, buf, err);
		if (st)
			return st;
		if (code == 200 || code == 202)
			out->deleted++;
	}
	return K32_OK;
}

k32_status_t hw_devctrl_run_once(struct api_server *api, uint64_t wall_s, uint32_t grace_s,
				 const char *mem_limit, struct hw_devctrl_stats *out,
				 struct k32_err *err)
{
	struct k32_buf dl, pl, buf;
	cJSON *devs = NULL, *pods = NULL;
	int code = 0;
	char target[128];
	k32_status_t st;
	memset(out, 0, sizeof(*out));
	k32_buf_init(&dl, k32_default_allocator(), LIST_MAX_BYTES, "device list");
	k32_buf_init(&pl, k32_default_allocator(), LIST_MAX_BYTES, "driver pod list");
	k32_buf_init(&buf, k32_default_allocator(), 1 << 16, "device controller response");

	snprintf(target, sizeof(target), "/apis/kube32.io/v1alpha1/devices?limit=%d",
		 K32_HW_CTRL_BATCH);
	if ((st = call(api, "GET", target, NULL, NULL, &code, &dl, err)))
		goto out;
	if (code != 200) {
		st = k32_err_set(err, K32_ERR_IO, "hw", "listing Devices answered %d: %.80s", code,
				 k32_buf_cstr(&dl));
		goto out;
	}
	if ((st = call(api, "GET", "/api/v1/pods?labelSelector=kube32.io%2Fdevice", NULL, NULL,
		       &code, &pl, err)))
		goto out;
	if (code != 200) {
		st = k32_err_set(err, K32_ERR_IO, "hw", "listing driver pods answered %d", code);
		goto out;
	}
	if ((st = k32_json_parse(k32_buf_cstr(&dl), dl.len, &devs, err)) ||
	    (st = k32_json_parse(k32_buf_cstr(&pl), pl.len, &pods, err)))
		goto out;
	const cJSON *ditems = k32_json_find(devs, "items"), *pitems = k32_json_find(pods, "items");
	const cJSON *items[K32_HW_CTRL_BATCH];
	int n = 0, idx[K32_HW_CTRL_BATCH];
	const cJSON *it;
	cJSON_ArrayForEach(it, ditems)
	{
		if (n < K32_HW_CTRL_BATCH)
			items[n++] = it;
	}
	order(items, n, idx);
	struct hw_device *ok =
	    k32_calloc(k32_default_allocator(), (size_t)(n ? n : 1) * sizeof(struct hw_device));
	if (!ok) {
		st = k32_err_set(err, K32_ERR_NO_MEMORY, "hw",
				 "Device controller: no memory for %d Devices", n);
		goto out;
	}
	size_t nok = 0;
	for (int k = 0; k < n && st == K32_OK; k++) {
		const cJSON *obj = items[idx[k]];
		struct hw_device d;
		out->devices++;
		if (hw_device_parse(obj, &d, NULL) != K32_OK)
			continue; /* the API server validated it; nothing to do for a stranger */
		int c = hw_device_conflict(ok, nok, &d);
		if (c >= 0) {
			const char *rs, *reason;
			ready_of(obj, &rs, &reason);
			out->conflicts++;
			if (!reason || strcmp(reason, "Conflict")) {
				char msg[320];
				snprintf(msg, sizeof(msg),
					 "Device %s/%s already uses node %s bus %u channel %d "
					 "address 0x%02x; delete one of them",
					 ok[c].ns, ok[c].name, d.node, (unsigned)d.bus,
					 d.mux_channel == HW_MUX_NONE ? -1 : (int)d.mux_channel,
					 (unsigned)d.addr);
				st = set_ready_false(api, &d, "Conflict", msg, wall_s, &buf, err);
				out->updated++;
				struct api_event_ref ref = {"kube32.io/v1alpha1", "Device", d.ns,
							    d.name, d.uid[0] ? d.uid : NULL};
				if (st == K32_OK)
					st = api_event_record(api, &ref, "Warning", "Conflict", msg,
							      "device-controller", err);
			}
			continue;
		}
		ok[nok++] = d;
		st = reconcile(api, obj, &d, pitems, wall_s, grace_s, mem_limit, out, &buf, err);
	}
	k32_free(k32_default_allocator(), ok, (size_t)(n ? n : 1) * sizeof(struct hw_device));
	/* only with the whole list in hand can a pod be called an orphan */
	const char *cont = sval(devs, "metadata.continue");
	if (st == K32_OK && (!cont || !cont[0]))
		st = delete_orphans(api, ditems, pitems, out, &buf, err);
out:
	cJSON_Delete(devs);
	cJSON_Delete(pods);
	k32_buf_fini(&dl);
	k32_buf_fini(&pl);
	k32_buf_fini(&buf);
	return st;
}
