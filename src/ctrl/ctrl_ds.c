/*
 * ctrl_ds.c - the DaemonSet controller: one pod per matching node.
 *
 * A node should run a DaemonSet's pod when it matches the template's nodeSelector and
 * required node affinity and every NoSchedule/NoExecute taint is tolerated by the
 * template's tolerations plus the ones Kubernetes adds to daemon pods
 * (node.kubernetes.io/not-ready and unreachable NoExecute, unschedulable NoSchedule).
 * Pods are pinned as Kubernetes pins them: the node affinity of the pod is replaced by one
 * term with matchFields metadata.name In [<node>], and the scheduler binds them (so memory
 * and hardware fit still apply). Pods carry the label controller-revision-hash (a hash of
 * the template); RollingUpdate deletes out-of-date pods while fewer than maxUnavailable
 * (default 1) pods are unavailable, and the next pass creates their replacements. Failed
 * pods and pods on nodes that no longer match or exist are deleted.
 *
 * Status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled, numberReady,
 * numberAvailable, numberUnavailable, updatedNumberScheduled, observedGeneration.
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DS_HASH "controller-revision-hash"

/* The node a daemon pod is for: spec.nodeName, else its matchFields metadata.name value. */
static const char *ds_pod_node(const cJSON *pod)
{
	const char *n = ctrl_jstr(pod, "spec.nodeName");
	if (n && n[0])
		return n;
	const cJSON *terms =
	    k32_json_find(pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
			       "Execution.nodeSelectorTerms");
	const cJSON *t, *f;
	cJSON_ArrayForEach(t, terms)
	{
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(t, "matchFields"))
		{
			const char *key = ctrl_jstr(f, "key");
			const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "values"), 0);
			if (key && !strcmp(key, "metadata.name") && cJSON_IsString(v))
				return v->valuestring;
		}
	}
	return NULL;
}

/* The template's tolerations plus the daemon defaults (a new array). */
static cJSON *ds_tolerations(const cJSON *spec)
{
	static const char *const defaults[][2] = {
	    {"node.kubernetes.io/not-ready", "NoExecute"},
	    {"node.kubernetes.io/unreachable", "NoExecute"},
	    {"node.kubernetes.io/unschedulable", "NoSchedule"},
	};
	cJSON *tol = cJSON_Duplicate(cJSON_GetObjectItem(spec, "tolerations"), true);
	if (!cJSON_IsArray(tol)) {
		cJSON_Delete(tol);
		tol = cJSON_CreateArray();
	}
	for (size_t i = 0; tol && i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if (ctrl_tolerates(tol, defaults[i][0], "", defaults[i][1]))
			continue;
		cJSON *t = cJSON_CreateObject();
		if (!t)
			break;
		cJSON_AddStringToObject(t, "key", defaults[i][0]);
		cJSON_AddStringToObject(t, "operator", "Exists");
		cJSON_AddStringToObject(t, "effect", defaults[i][1]);
		cJSON_AddItemToArray(tol, t);
	}
	return tol;
}

static bool ds_should_run(const cJSON *spec, const cJSON *tol, const cJSON *node)
{
	if (!ctrl_node_affinity_matches(spec, node))
		return false;
	const cJSON *t;
	cJSON_ArrayForEach(t, k32_json_find(node, "spec.taints"))
	{
		const char *key = ctrl_jstr(t, "key");
		const char *eff = ctrl_jstr(t, "effect");
		if (!key || !eff || (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute")))
			continue;
		if (!ctrl_tolerates(tol, key, ctrl_jstr(t, "value"), eff))
			return false;
	}
	return true;
}

/* Extra spec fields of a daemon pod for node: pinned affinity and tolerations. */
static cJSON *ds_pod_spec_extra(const cJSON *spec, const char *node)
{
	cJSON *x = cJSON_CreateObject();
	if (!x)
		return NULL;
	cJSON *aff = cJSON_Duplicate(cJSON_GetObjectItem(spec, "affinity"), true);
	if (!cJSON_IsObject(aff)) {
		cJSON_Delete(aff);
		aff = cJSON_CreateObject();
	}
	cJSON_DeleteItemFromObjectCaseSensitive(aff, "nodeAffinity");
	cJSON *na = cJSON_AddObjectToObject(aff, "nodeAffinity");
	cJSON *req =
	    na ? cJSON_AddObjectToObject(na, "requiredDuringSchedulingIgnoredDuringExecution")
	       : NULL;
	cJSON *terms = req ? cJSON_AddArrayToObject(req, "nodeSelectorTerms") : NULL;
	cJSON *term = cJSON_CreateObject();
	cJSON *mf = term ? cJSON_AddArrayToObject(term, "matchFields") : NULL;
	cJSON *r = cJSON_CreateObject();
	if (!terms || !mf || !r) {
		cJSON_Delete(term);
		cJSON_Delete(r);
		cJSON_Delete(aff);
		cJSON_Delete(x);
		return NULL;
	}
	cJSON_AddItemToArray(terms, term);
	cJSON_AddItemToArray(mf, r);
	cJSON_AddStringToObject(r, "key", "metadata.name");
	cJSON_AddStringToObject(r, "operator", "In");
	cJSON *vals = cJSON_AddArrayToObject(r, "values");
	cJSON_AddItemToArray(vals, cJSON_CreateString(node));
	cJSON_AddItemToObject(x, "affinity", aff);
	cJSON_AddItemToObject(x, "tolerations", ds_tolerations(spec));
	return x;
}

static void ds_sync(struct ctrl *c, const cJSON *ds, const cJSON *nodes)
{
	const char *ns = ctrl_jstr(ds, "metadata.namespace");
	const char *name = ctrl_jstr(ds, "metadata.name");
	const char *uid = ctrl_jstr(ds, "metadata.uid");
	if (!ns || !name || !uid || ctrl_deleting(ds))
		return;
	char path[400];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	cJSON *pods = ctrl_list_array(c, path, uid);
	if (!pods)
		return;
	ctrl_sort_by_age(pods);
	const cJSON *tmpl = k32_json_find(ds, "spec.template");
	const cJSON *spec = cJSON_GetObjectItem(tmpl, "spec");
	cJSON *tol = ds_tolerations(spec);
	char hash[16];
	/* the template's ControllerRevision (made or renumbered), whose hash labels its pods */
	ctrl_ds_revision(c, ds, hash, sizeof(hash));
	cJSON *extra_labels = cJSON_CreateObject();
	if (extra_labels)
		cJSON_AddStringToObject(extra_labels, DS_HASH, hash);
	int64_t desired = 0, current = 0, missched = 0, ready = 0, updated = 0, unavail_now = 0;
	const cJSON *node, *p;
	/* pods for nodes that are gone, failed pods: delete */
	cJSON_ArrayForEach(p, pods)
	{
		if (ctrl_deleting(p))
			continue;
		const char *pn = ds_pod_node(p);
		bool exists = false;
		cJSON_ArrayForEach(node, nodes)
		{
			const char *nn = ctrl_jstr(node, "metadata.name");
			if (pn && nn && !strcmp(pn, nn))
				exists = true;
		}
		const char *phase = ctrl_jstr(p, "status.phase");
		if ((!exists || (phase && !strcmp(phase, "Failed"))) && ctrl_charge(c))
			ctrl_pod_delete(c, p, exists ? -1 : 0, true);
	}
	cJSON_ArrayForEach(node, nodes)
	{
		const char *nn = ctrl_jstr(node, "metadata.name");
		if (!nn)
			continue;
		bool run = ds_should_run(spec, tol, node);
		desired += run;
		int on = 0;
		cJSON_ArrayForEach(p, pods)
		{
			const char *pn = ds_pod_node(p);
			if (ctrl_deleting(p) || ctrl_pod_terminal(p) || !pn || strcmp(pn, nn))
				continue;
			on++;
			if (!run || on > 1) {
				missched += !run;
				if (ctrl_charge(c))
					ctrl_pod_delete(c, p, -1, true);
				continue;
			}
			current++;
			const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
			    k32_json_find(p, "metadata.labels"), DS_HASH);
			bool up = cJSON_IsString(hl) && !strcmp(hl->valuestring, hash);
			updated += up;
			if (ctrl_pod_ready(p))
				ready++;
			else
				unavail_now++;
		}
		if (run && on == 0) {
			unavail_now++;
			if (ctrl_charge(c)) {
				cJSON *x = ds_pod_spec_extra(spec, nn);
				if (x)
					ctrl_pod_create(c, ns, name, tmpl, extra_labels,
							ctrl_owner_ref(ds, "apps/v1", "DaemonSet"),
							x);
				cJSON_Delete(x);
			}
		}
	}
	/* rolling update: replace out-of-date pods within maxUnavailable */
	const char *stype = ctrl_jstr(ds, "spec.updateStrategy.type");
	if (!stype || !strcmp(stype, "RollingUpdate")) {
		const cJSON *mu =
		    k32_json_find(ds, "spec.updateStrategy.rollingUpdate.maxUnavailable");
		int64_t max_unavail = cJSON_IsNumber(mu) ? (int64_t)mu->valuedouble : 1;
		if (cJSON_IsString(mu))
			max_unavail = desired * strtoll(mu->valuestring, NULL, 10) / 100;
		if (max_unavail < 1)
			max_unavail = 1;
		cJSON_ArrayForEach(p, pods)
		{
			if (unavail_now >= max_unavail)
				break;
			const cJSON *hl = cJSON_GetObjectItemCaseSensitive(
			    k32_json_find(p, "metadata.labels"), DS_HASH);
			if (ctrl_deleting(p) || ctrl_pod_terminal(p) ||
			    (cJSON_IsString(hl) && !strcmp(hl->valuestring, hash)))
				continue;
			if (!ctrl_charge(c))
				break;
			ctrl_pod_delete(c, p, -1, true);
			unavail_now++;
		}
	}
	cJSON *st = cJSON_CreateObject();
	if (st) {
		cJSON_AddNumberToObject(st, "desiredNumberScheduled", (double)desired);
		cJSON_AddNumberToObject(st, "currentNumberScheduled", (double)current);
		cJSON_AddNumberToObject(st, "numberMisscheduled", (double)missched);
		cJSON_AddNumberToObject(st, "numberReady", (double)ready);
		cJSON_AddNumberToObject(st, "numberAvailable", (double)ready);
		cJSON_AddNumberToObject(st, "numberUnavailable",
					(double)(desired > ready ? desired - ready : 0));
		cJSON_AddNumberToObject(st, "updatedNumberScheduled", (double)updated);
		cJSON_AddNumberToObject(st, "observedGeneration",
					(double)ctrl_jint(ds, "metadata.generation", 1));
		snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/daemonsets/%s/status", ns,
			 name);
		ctrl_status_write(c, path, ds, st);
		cJSON_Delete(st);
	}
	cJSON_Delete(extra_labels);
	cJSON_Delete(tol);
	cJSON_Delete(pods);
}

void ctrl_ds_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_work(c, "/apis/apps/v1/daemonsets");
	if (!list || cJSON_GetArraySize(list) == 0) {
		cJSON_Delete(list);
		return;
	}
	cJSON *nodes = ctrl_list_array(c, "/api/v1/nodes", NULL);
	const cJSON *ds;
	cJSON_ArrayForEach(ds, list)
	{
		if (!nodes)
			break;
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		if (!ctrl_item_begin(c, ds))
			continue; /* backing off */
		ds_sync(c, ds, nodes);
		ctrl_item_end(c);
	}
	cJSON_Delete(nodes);
	cJSON_Delete(list);
}
