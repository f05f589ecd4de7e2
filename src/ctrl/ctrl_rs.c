/*
 * ctrl_rs.c - the ReplicaSet controller: keeps spec.replicas active pods per ReplicaSet.
 *
 * Per ReplicaSet (not being deleted): list the pods of its namespace whose controller
 * ownerReference is the ReplicaSet (uid); active = not being deleted and not terminal.
 * Too few: create pods from spec.template (generateName "<rs>-", ownerReferences with
 * controller=true). Too many: delete the least useful first (unbound, Pending, not Ready,
 * then Ready; newest first within a rank), as Kubernetes' ActivePods ordering does. Status:
 * replicas (active), fullyLabeledReplicas (active pods carrying every template label),
 * readyReplicas, availableReplicas (Ready for minReadySeconds), observedGeneration; written
 * through /status only when it changed. Pods are claimed as Kubernetes claims them: orphans
 * matching the selector are adopted, controlled pods that no longer match are released. Each
 * create, delete or status write costs one unit of the pass budget.
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <string.h>

/* Deletion rank: lower goes first. */
static int rs_rank(const cJSON *pod)
{
	const char *node = ctrl_jstr(pod, "spec.nodeName");
	const char *phase = ctrl_jstr(pod, "status.phase");
	if (!node || !node[0])
		return 0;
	if (!phase || !strcmp(phase, "Pending"))
		return 1;
	if (!ctrl_pod_ready(pod))
		return 2;
	return 3;
}

/* True when pod has been Ready for at least min_ready seconds (wall clock). */
static bool rs_available(struct ctrl *c, const cJSON *pod, int64_t min_ready)
{
	if (!ctrl_pod_ready(pod))
		return false;
	if (min_ready <= 0)
		return true;
	const cJSON *cd = ctrl_cond_find(k32_json_find(pod, "status.conditions"), "Ready");
	uint64_t t = 0;
	if (!ctrl_parse_time(ctrl_jstr(cd, "lastTransitionTime"), &t))
		return false;
	return t + (uint64_t)min_ready <= ctrl_wall_s(c);
}

/* True when labels hold every label of want. */
static bool rs_has_labels(const cJSON *labels, const cJSON *want)
{
	const cJSON *l;
	cJSON_ArrayForEach(l, want)
	{
		const char *v = ctrl_label(labels, l->string);
		if (!cJSON_IsString(l) || !v || strcmp(v, l->valuestring))
			return false;
	}
	return true;
}

/* Writes status fields of a workload when any differs; one budget unit. */
static void rs_status_write(struct ctrl *c, const char *target, const cJSON *obj, cJSON *want)
{
	const cJSON *cur = cJSON_GetObjectItem(obj, "status");
	bool same = true;
	const cJSON *f;
	cJSON_ArrayForEach(f, want)
	{
		const cJSON *o = cJSON_GetObjectItem(cur, f->string);
		bool zero = cJSON_IsNumber(f) && f->valuedouble == 0;
		if (o ? !cJSON_Compare(o, f, true) : !zero)
			same = false;
	}
	if (same || !ctrl_charge(c))
		return;
	cJSON *patch = cJSON_CreateObject();
	if (!patch)
		return;
	cJSON_AddItemToObject(patch, "status", cJSON_Duplicate(want, true));
	ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
}

/* Sets the ownerReferences of pod to refs (taken) with one merge patch. */
static void rs_set_refs(struct ctrl *c, const cJSON *pod, cJSON *refs)
{
	char target[600];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s",
		 ctrl_jstr(pod, "metadata.namespace"), ctrl_jstr(pod, "metadata.name"));
	cJSON *patch = cJSON_CreateObject();
	cJSON *md = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
	if (md && refs) {
		cJSON_AddItemToObject(md, "ownerReferences", refs);
		refs = NULL;
		ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	}
	cJSON_Delete(refs);
	cJSON_Delete(patch);
}

/*
 * The ReplicaSet's pods, as Kubernetes' ClaimPods: pods it controls whose labels still match
 * its selector, plus orphans (no controller) that match, which it adopts; pods it controls
 * that no longer match are released (their reference removed), so a pod relabelled out of
 * a ReplicaSet is replaced. Returns a new array (NULL on a read failure).
 */
static cJSON *rs_claim(struct ctrl *c, const cJSON *rs, const char *path)
{
	const char *uid = ctrl_jstr(rs, "metadata.uid");
	const cJSON *sel = k32_json_find(rs, "spec.selector");
	cJSON *all = ctrl_list_claimable(c, path, uid);
	cJSON *mine = all ? cJSON_CreateArray() : NULL;
	if (!mine) {
		cJSON_Delete(all);
		return NULL;
	}
	cJSON *p = all->child;
	while (p) {
		cJSON *next = p->next;
		const char *cu = ctrl_controller_uid(p);
		bool match = ctrl_selector_matches(sel, k32_json_find(p, "metadata.labels"));
		bool live = !ctrl_deleting(p);
		if (cu && !strcmp(cu, uid)) {
			if (!match && live) {
				if (ctrl_charge(c)) {
					cJSON *keep = cJSON_CreateArray();
					const cJSON *r;
					cJSON_ArrayForEach(
					    r, k32_json_find(p, "metadata.ownerReferences"))
					{
						const char *u = ctrl_jstr(r, "uid");
						if (keep && (!u || strcmp(u, uid)))
							cJSON_AddItemToArray(
							    keep, cJSON_Duplicate(r, true));
					}
					rs_set_refs(c, p, keep);
				}
			} else {
				cJSON_AddItemToArray(mine, cJSON_DetachItemViaPointer(all, p));
			}
		} else if (!cu && match && live && !ctrl_pod_terminal(p) && ctrl_charge(c)) {
			cJSON *refs =
			    cJSON_Duplicate(k32_json_find(p, "metadata.ownerReferences"), true);
			if (!cJSON_IsArray(refs)) {
				cJSON_Delete(refs);
				refs = cJSON_CreateArray();
			}
			cJSON *own = ctrl_owner_ref(rs, "apps/v1", "ReplicaSet");
			if (refs && own) {
				cJSON_AddItemToArray(refs, cJSON_DetachItemFromArray(own, 0));
				rs_set_refs(c, p, refs);
				refs = NULL;
				cJSON_AddItemToArray(mine, cJSON_DetachItemViaPointer(all, p));
			}
			cJSON_Delete(own);
			cJSON_Delete(refs);
		}
		p = next;
	}
	cJSON_Delete(all);
	return mine;
}

static void rs_sync(struct ctrl *c, const cJSON *rs)
{
	const char *ns = ctrl_jstr(rs, "metadata.namespace");
	const char *name = ctrl_jstr(rs, "metadata.name");
	const char *uid = ctrl_jstr(rs, "metadata.uid");
	if (!ns || !name || !uid || ctrl_deleting(rs))
		return;
	char path[400];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	cJSON *pods = rs_claim(c, rs, path);
	if (!pods)
		return;
	int64_t want = ctrl_jint(rs, "spec.replicas", 1);
	int64_t min_ready = ctrl_jint(rs, "spec.minReadySeconds", 0);
	const cJSON *tlabels = k32_json_find(rs, "spec.template.metadata.labels");
	int64_t active = 0, labeled = 0, ready = 0, avail = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		if (ctrl_deleting(p) || ctrl_pod_terminal(p))
			continue;
		active++;
		labeled += rs_has_labels(k32_json_find(p, "metadata.labels"), tlabels);
		ready += ctrl_pod_ready(p);
		avail += rs_available(c, p, min_ready);
	}
	if (active < want) {
		const cJSON *tmpl = k32_json_find(rs, "spec.template");
		for (int64_t i = active; i < want; i++) {
			if (!ctrl_charge(c))
				break;
			ctrl_pod_create(c, ns, name, tmpl, NULL,
					ctrl_owner_ref(rs, "apps/v1", "ReplicaSet"), NULL);
		}
	} else if (active > want) {
		/* newest first, then stable by rank: lower rank goes first */
		ctrl_sort_by_age(pods);
		int64_t left = active - want;
		for (int rank = 0; rank <= 3 && left > 0; rank++) {
			for (int i = cJSON_GetArraySize(pods) - 1; i >= 0 && left > 0; i--) {
				const cJSON *q = cJSON_GetArrayItem(pods, i);
				if (ctrl_deleting(q) || ctrl_pod_terminal(q) || rs_rank(q) != rank)
					continue;
				if (!ctrl_charge(c)) {
					left = 0;
					break;
				}
				ctrl_pod_delete(c, q, -1, true);
				left--;
			}
		}
	}
	cJSON *st = cJSON_CreateObject();
	if (st) {
		cJSON_AddNumberToObject(st, "replicas", (double)active);
		cJSON_AddNumberToObject(st, "fullyLabeledReplicas", (double)labeled);
		cJSON_AddNumberToObject(st, "readyReplicas", (double)ready);
		cJSON_AddNumberToObject(st, "availableReplicas", (double)avail);
		cJSON_AddNumberToObject(st, "observedGeneration",
					(double)ctrl_jint(rs, "metadata.generation", 1));
		snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/replicasets/%s/status",
			 ns, name);
		rs_status_write(c, path, rs, st);
		cJSON_Delete(st);
	}
	cJSON_Delete(pods);
}

void ctrl_rs_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_work(c, "/apis/apps/v1/replicasets");
	const cJSON *rs;
	cJSON_ArrayForEach(rs, list)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		if (!ctrl_item_begin(c, rs))
			continue; /* backing off */
		rs_sync(c, rs);
		ctrl_item_end(c);
	}
	cJSON_Delete(list);
}

/* Shared with the Deployment, DaemonSet and Job controllers. */
void ctrl_status_write(struct ctrl *c, const char *target, const cJSON *obj, cJSON *want)
{
	rs_status_write(c, target, obj, want);
}
