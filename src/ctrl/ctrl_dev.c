/*
 * ctrl_dev.c - the Device controller (kube32.io/v1alpha1 Device), an ordinary controller of
 * the ctrl task: reads Devices and driver pods like the others (informer caches, else the
 * API), writes through ctrl_write, records Events through the client.
 *
 * For each Device, oldest first (so the older of two Devices on one address keeps it):
 *   - refuse it (Ready=False "Conflict", naming the other, and a Warning Event once) when an
 *     older Device sits on the same (node, bus, muxChannel, address);
 *   - otherwise create its driver pod (hw_device_pod_manifest, labelled kube32.io/device)
 *     if missing, record status.driverPod, and mark it Ready=False "Stale" when
 *     status.lastReadTime is older than three poll intervals (at least two heartbeats) plus
 *     K32_CTRL_DEVICE_STALE_GRACE_S: the node stopped reporting, so the kubelet's own
 *     NoReading cannot arrive.
 * Driver pods whose Device is gone are deleted, only when the pass saw every Device. At most
 * K32_CTRL_DEVICE_BATCH Devices per pass. What a Device means on the node (bus, models,
 * manifest) stays in src/hw, which knows nothing of the API.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_log.h"
#include "hw/hw.h"

#define DEV_API "kube32.io/v1alpha1"

static bool dev_collect(struct ctrl *c, cJSON *item, void *ctx)
{
	(void)c;
	cJSON *arr = ctx;
	cJSON *d = cJSON_Duplicate(item, true);
	if (d)
		cJSON_AddItemToArray(arr, d);
	return d != NULL;
}

/* Driver pods: those labelled kube32.io/device. */
static bool dev_collect_pod(struct ctrl *c, cJSON *item, void *ctx)
{
	if (!ctrl_label(k32_json_find(item, "metadata.labels"), "kube32.io/device"))
		return true;
	return dev_collect(c, item, ctx);
}

/* The driver pods (label kube32.io/device): from the pods cache's label index, else a list
 * of every pod. */
static k32_status_t ctrl_dev_driver_pods(struct ctrl *c, cJSON *pods)
{
	if (ctrl_cache_index(c, "/api/v1/pods", CTRL_IDX_LABEL, NULL, dev_collect, pods) == 0)
		return K32_OK;
	return ctrl_list(c, "/api/v1/pods", dev_collect_pod, pods);
}

static bool dev_pod_exists(const cJSON *pods, const char *ns, const char *name)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		const char *pn = ctrl_jstr(p, "metadata.name"),
			   *pns = ctrl_jstr(p, "metadata.namespace");
		if (pn && pns && !strcmp(pn, name) && !strcmp(pns, ns))
			return true;
	}
	return false;
}

/* Seconds without a status update after which a Device is Stale (before the grace). */
static uint64_t dev_stale_after_s(const struct hw_device *d)
{
	uint64_t polls = 3ull * d->poll_ms / 1000;
	uint64_t beats = 2ull * K32_HW_STATUS_HEARTBEAT_S;
	return polls > beats ? polls : beats;
}

static void dev_status_target(const struct hw_device *d, char *out, size_t cap)
{
	snprintf(out, cap, "/apis/" DEV_API "/namespaces/%s/devices/%s/status", d->ns, d->name);
}

/* Ready=False with reason and message (one budget unit charged by the caller). */
static int dev_set_ready_false(struct ctrl *c, const struct hw_device *d, const char *reason,
			       const char *msg)
{
	char target[600], now[32];
	ctrl_fmt_time(ctrl_wall_s(c), now, sizeof(now));
	cJSON *patch = cJSON_CreateObject();
	cJSON *st = cJSON_AddObjectToObject(patch, "status");
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	cJSON *cd = cJSON_CreateObject();
	if (!patch || !st || !conds || !cd) {
		cJSON_Delete(patch);
		cJSON_Delete(cd);
		return 0;
	}
	cJSON_AddItemToArray(conds, cd);
	cJSON_AddStringToObject(cd, "type", "Ready");
	cJSON_AddStringToObject(cd, "status", "False");
	cJSON_AddStringToObject(cd, "reason", reason);
	cJSON_AddStringToObject(cd, "message", msg);
	cJSON_AddStringToObject(cd, "lastTransitionTime", now);
	dev_status_target(d, target, sizeof(target));
	int code = ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
	return code;
}

static void dev_created(struct ctrl *c)
{
	k32_mutex_lock(&c->lock);
	c->stats.device_pods_created++;
	k32_mutex_unlock(&c->lock);
}

/* Reconciles one Device (already known not to conflict). */
static void dev_reconcile(struct ctrl *c, const cJSON *obj, const struct hw_device *d,
			  const cJSON *pods)
{
	char pod[HW_NAME_LEN], target[600];
	hw_device_pod_name(d, pod, sizeof(pod));
	if (!dev_pod_exists(pods, d->ns, pod)) {
		if (!ctrl_charge(c))
			return;
		struct k32_buf manifest;
		struct k32_err err;
		k32_buf_init(&manifest, k32_default_allocator(), 4096, "driver pod manifest");
		cJSON *body = NULL;
		if (hw_device_pod_manifest(d, K32_CTRL_DRIVER_POD_MEM, &manifest, &err) == K32_OK)
			body = cJSON_ParseWithLength(k32_buf_cstr(&manifest), manifest.len);
		else
			k32_log(K32_LOG_WARN, "ctrl", "Device %s/%s: no driver pod manifest: %s",
				d->ns, d->name, err.msg);
		k32_buf_fini(&manifest);
		if (!body)
			return;
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", d->ns);
		int code = ctrl_write(c, "POST", target, NULL, body, NULL);
		cJSON_Delete(body);
		if (code == 201)
			dev_created(c);
		else if (code != 409)
			return;
	}
	const char *have = ctrl_jstr(obj, "status.driverPod");
	if ((!have || strcmp(have, pod)) && ctrl_charge(c)) {
		cJSON *patch = cJSON_CreateObject();
		cJSON *st = cJSON_AddObjectToObject(patch, "status");
		if (st && cJSON_AddStringToObject(st, "driverPod", pod)) {
			dev_status_target(d, target, sizeof(target));
			ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
		}
		cJSON_Delete(patch);
	}
	const char *rs = ctrl_cond_status(obj, "Ready");
	uint64_t last, wall = ctrl_wall_s(c);
	uint64_t limit = dev_stale_after_s(d) + K32_CTRL_DEVICE_STALE_GRACE_S;
	if (rs && !strcmp(rs, "True") &&
	    ctrl_parse_time(ctrl_jstr(obj, "status.lastReadTime"), &last) && wall > last + limit &&
	    ctrl_charge(c)) {
		char msg[192];
		snprintf(msg, sizeof(msg),
			 "no reading since %" PRIu64 " s (3 poll intervals or 2 heartbeats, + %u "
			 "s); is node %s up?",
			 wall - last, (unsigned)K32_CTRL_DEVICE_STALE_GRACE_S, d->node);
		dev_set_ready_false(c, d, "Stale", msg);
	}
}

/* Deletes driver pods whose Device is gone. */
static void dev_delete_orphans(struct ctrl *c, const cJSON *devs, const cJSON *pods)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		const char *dev =
		    ctrl_label(k32_json_find(p, "metadata.labels"), "kube32.io/device");
		const char *ns = ctrl_jstr(p, "metadata.namespace");
		if (!dev || !ns || ctrl_deleting(p))
			continue;
		bool found = false;
		const cJSON *d;
		cJSON_ArrayForEach(d, devs)
		{
			const char *dn = ctrl_jstr(d, "metadata.name"),
				   *dns = ctrl_jstr(d, "metadata.namespace");
			if (dn && dns && !strcmp(dn, dev) && !strcmp(dns, ns))
				found = true;
		}
		if (found)
			continue;
		if (!ctrl_charge(c))
			return;
		ctrl_pod_delete(c, p, -1, false);
	}
}

void ctrl_dev_pass(struct ctrl *c)
{
	cJSON *devs = cJSON_CreateArray(), *pods = cJSON_CreateArray();
	struct hw_device *ok = ctrl_zalloc(K32_CTRL_DEVICE_BATCH * sizeof(struct hw_device));
	if (!devs || !pods || !ok) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl",
			    "Device controller: out of memory for %u Devices",
			    (unsigned)K32_CTRL_DEVICE_BATCH);
		goto out;
	}
	if (ctrl_list(c, "/apis/" DEV_API "/devices", dev_collect, devs) ||
	    ctrl_dev_driver_pods(c, pods))
		goto out;
	ctrl_sort_by_age(devs);
	int total = cJSON_GetArraySize(devs);
	size_t nok = 0;
	int seen = 0;
	const cJSON *obj;
	cJSON_ArrayForEach(obj, devs)
	{
		if (seen++ >= K32_CTRL_DEVICE_BATCH)
			break;
		struct hw_device d;
		if (hw_device_parse(obj, &d, NULL) != K32_OK)
			continue; /* the API server validated it; nothing to do for a stranger */
		int other = hw_device_conflict(ok, nok, &d);
		if (other < 0) {
			ok[nok++] = d;
			hw_device_rebase(&ok[nok - 1]);
			dev_reconcile(c, obj, &d, pods);
			continue;
		}
		const char *reason = ctrl_jstr(
		    ctrl_cond_find(k32_json_find(obj, "status.conditions"), "Ready"), "reason");
		if ((reason && !strcmp(reason, "Conflict")) || !ctrl_charge(c))
			continue;
		char msg[320];
		snprintf(msg, sizeof(msg),
			 "Device %s/%s already uses node %s bus %u channel %d address 0x%02x; "
			 "delete one of them",
			 ok[other].ns, ok[other].name, d.node, (unsigned)d.bus,
			 d.mux_channel == HW_MUX_NONE ? -1 : (int)d.mux_channel, (unsigned)d.addr);
		if (dev_set_ready_false(c, &d, "Conflict", msg) == 200)
			ctrl_obj_event(c, obj, DEV_API, "Device", "Warning", "Conflict", msg);
	}
	/* only with every Device in hand can a pod be called an orphan */
	if (total <= K32_CTRL_DEVICE_BATCH)
		dev_delete_orphans(c, devs, pods);
	else
		c->more = true;
out:
	ctrl_free(ok, K32_CTRL_DEVICE_BATCH * sizeof(struct hw_device));
	cJSON_Delete(devs);
	cJSON_Delete(pods);
}
