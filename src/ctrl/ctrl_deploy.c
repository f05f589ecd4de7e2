/*
 * ctrl_deploy.c - the Deployment controller: rolls pod templates out through ReplicaSets.
 *
 * Per Deployment (not being deleted): its ReplicaSets are those whose controller
 * ownerReference is the Deployment. The new ReplicaSet is the one whose template equals
 * spec.template once its pod-template-hash label is removed (so `kubectl rollout undo`,
 * which copies an old ReplicaSet's template back, revives that ReplicaSet); if none, one
 * is created as "<deployment>-<hash>" with 0 replicas, the pod-template-hash label in its
 * selector and template, and revision max+1. A revived old ReplicaSet gets revision max+1.
 * The Deployment carries the new ReplicaSet's revision in the annotation
 * deployment.kubernetes.io/revision.
 *
 * RollingUpdate follows Kubernetes' rolloutRolling: scale the new ReplicaSet up while the
 * sum of all spec.replicas stays within replicas + maxSurge; otherwise scale old ones down,
 * first their unavailable pods, then as long as the available pods stay at least
 * replicas - maxUnavailable (percentages: surge rounds up, unavailable down; both 0 means
 * maxUnavailable 1). Recreate scales the old ones to 0 and the new one up once no old pod
 * is left. When the rollout is complete, old ReplicaSets with no replicas beyond
 * spec.revisionHistoryLimit are deleted, oldest revision first. spec.paused stops scaling.
 *
 * Status: observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas,
 * unavailableReplicas, and the conditions kubectl rollout status reads: Available
 * (MinimumReplicasAvailable / MinimumReplicasUnavailable) and Progressing
 * (NewReplicaSetAvailable when complete, else ReplicaSetUpdated, or False with
 * ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds).
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPLOY_REVISION "deployment.kubernetes.io/revision"
#define DEPLOY_HASH	"pod-template-hash"

static int64_t dp_revision(const cJSON *o)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(k32_json_find(o, "metadata.annotations"),
							  DEPLOY_REVISION);
	return cJSON_IsString(a) ? strtoll(a->valuestring, NULL, 10) : 0;
}

/* An int-or-percent field against total; round_up for surge. */
static int64_t dp_int_or_pct(const cJSON *v, int64_t total, bool round_up, int64_t dflt)
{
	if (cJSON_IsNumber(v))
		return (int64_t)v->valuedouble;
	if (!cJSON_IsString(v))
		return dflt;
	char *end = NULL;
	long long pct = strtoll(v->valuestring, &end, 10);
	if (!end || *end != '%')
		return strtoll(v->valuestring, NULL, 10);
	int64_t x = total * pct;
	return round_up ? (x + 99) / 100 : x / 100;
}

/*
 * Drops what Kubernetes' typed comparison does not see: null members (kubectl sends
 * "creationTimestamp": null in templates), then empty objects and arrays (omitempty).
 * Depth is bounded by the parser's K32_JSON_MAX_DEPTH; the guard keeps it so.
 */
static void dp_normalise(cJSON *o, int depth)
{
	if (depth > K32_JSON_MAX_DEPTH)
		return;
	cJSON *it = o ? o->child : NULL;
	while (it) {
		cJSON *next = it->next;
		if (cJSON_IsObject(it) || cJSON_IsArray(it))
			dp_normalise(it, depth + 1);
		bool empty = (cJSON_IsObject(it) || cJSON_IsArray(it)) && !it->child;
		if (cJSON_IsObject(o) && (cJSON_IsNull(it) || empty))
			cJSON_Delete(cJSON_DetachItemViaPointer(o, it));
		it = next;
	}
}

/* True when rs's template, without the hash label, equals tmpl (as Kubernetes'
 * EqualIgnoreHash: null and empty members do not count). */
static bool dp_template_equal(const cJSON *rs, const cJSON *tmpl)
{
	cJSON *t = cJSON_Duplicate(k32_json_find(rs, "spec.template"), true);
	if (!t)
		return false;
	cJSON *labels = (cJSON *)k32_json_find(t, "metadata.labels");
	cJSON_DeleteItemFromObjectCaseSensitive(labels, DEPLOY_HASH);
	cJSON *want = cJSON_Duplicate(tmpl, true);
	cJSON *wl = want ? (cJSON *)k32_json_find(want, "metadata.labels") : NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(wl, DEPLOY_HASH);
	dp_normalise(t, 0);
	dp_normalise(want, 0);
	bool eq = want && cJSON_Compare(t, want, true);
	cJSON_Delete(t);
	cJSON_Delete(want);
	return eq;
}

static void dp_annotate(struct ctrl *c, const char *target, const char *key, int64_t value)
{
	char v[24];
	snprintf(v, sizeof(v), "%lld", (long long)value);
	cJSON *patch = cJSON_CreateObject();
	cJSON *md = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
	cJSON *an = md ? cJSON_AddObjectToObject(md, "annotations") : NULL;
	if (an && cJSON_AddStringToObject(an, key, v) && ctrl_charge(c))
		ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
}

/* Creates the new ReplicaSet (0 replicas) for d's template; returns the HTTP code. */
static int dp_create_rs(struct ctrl *c, const cJSON *d, int64_t revision)
{
	const char *ns = ctrl_jstr(d, "metadata.namespace");
	const char *name = ctrl_jstr(d, "metadata.name");
	char hash[16], rsname[CTRL_NAME_LEN], target[320];
	cJSON *tmpl = cJSON_Duplicate(k32_json_find(d, "spec.template"), true);
	cJSON *sel = cJSON_Duplicate(k32_json_find(d, "spec.selector"), true);
	cJSON *rs = cJSON_CreateObject();
	int code = 0;
	if (!tmpl || !sel || !rs)
		goto out;
	ctrl_hash_json(tmpl, hash, sizeof(hash));
	snprintf(rsname, sizeof(rsname), "%.200s-%s", name, hash);
	cJSON *tmd = cJSON_GetObjectItem(tmpl, "metadata");
	if (!tmd)
		tmd = cJSON_AddObjectToObject(tmpl, "metadata");
	cJSON *tl = cJSON_GetObjectItem(tmd, "labels");
	if (!tl)
		tl = cJSON_AddObjectToObject(tmd, "labels");
	cJSON_DeleteItemFromObjectCaseSensitive(tl, DEPLOY_HASH);
	cJSON_AddStringToObject(tl, DEPLOY_HASH, hash);
	cJSON *ml = cJSON_GetObjectItem(sel, "matchLabels");
	if (!ml)
		ml = cJSON_AddObjectToObject(sel, "matchLabels");
	cJSON_DeleteItemFromObjectCaseSensitive(ml, DEPLOY_HASH);
	cJSON_AddStringToObject(ml, DEPLOY_HASH, hash);
	cJSON_AddStringToObject(rs, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(rs, "kind", "ReplicaSet");
	cJSON *md = cJSON_AddObjectToObject(rs, "metadata");
	cJSON_AddStringToObject(md, "name", rsname);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddItemToObject(md, "labels", cJSON_Duplicate(tl, true));
	cJSON *an = cJSON_AddObjectToObject(md, "annotations");
	char rev[24];
	snprintf(rev, sizeof(rev), "%lld", (long long)revision);
	cJSON_AddStringToObject(an, DEPLOY_REVISION, rev);
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(k32_json_find(d, "metadata.annotations"),
							   "kubernetes.io/change-cause");
	if (cJSON_IsString(cc))
		cJSON_AddStringToObject(an, "kubernetes.io/change-cause", cc->valuestring);
	cJSON_AddItemToObject(md, "ownerReferences", ctrl_owner_ref(d, "apps/v1", "Deployment"));
	cJSON *spec = cJSON_AddObjectToObject(rs, "spec");
	cJSON_AddNumberToObject(spec, "replicas", 0);
	cJSON_AddNumberToObject(spec, "minReadySeconds",
				(double)ctrl_jint(d, "spec.minReadySeconds", 0));
	cJSON_AddItemToObject(spec, "selector", sel);
	sel = NULL;
	cJSON_AddItemToObject(spec, "template", tmpl);
	tmpl = NULL;
	snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/replicasets", ns);
	if (ctrl_charge(c))
		code = ctrl_write(c, "POST", target, NULL, rs, NULL);
out:
	cJSON_Delete(tmpl);
	cJSON_Delete(sel);
	cJSON_Delete(rs);
	return code;
}

/*
 * The ReplicaSet named for d's template exists but is not d's (left by a deletion with
 * --cascade=orphan, then the Deployment re-created): adopt it when it has no controller
 * and the same template, as Kubernetes does.
 */
static void dp_adopt(struct ctrl *c, const cJSON *d)
{
	char hash[16], target[700];
	ctrl_hash_json(k32_json_find(d, "spec.template"), hash, sizeof(hash));
	snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/replicasets/%.200s-%s",
		 ctrl_jstr(d, "metadata.namespace"), ctrl_jstr(d, "metadata.name"), hash);
	cJSON *rs = NULL;
	struct k32_err err;
	if (ctrl_get(c, target, &rs, &err) == K32_OK && !ctrl_controller_uid(rs) &&
	    dp_template_equal(rs, k32_json_find(d, "spec.template")) && ctrl_charge(c)) {
		cJSON *patch = cJSON_CreateObject();
		cJSON *md = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
		if (md) {
			cJSON_AddItemToObject(md, "ownerReferences",
					      ctrl_owner_ref(d, "apps/v1", "Deployment"));
			ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
		}
		cJSON_Delete(patch);
	}
	cJSON_Delete(rs);
}

static void dp_scale(struct ctrl *c, const cJSON *d, const cJSON *rs, int64_t replicas)
{
	if (ctrl_jint(rs, "spec.replicas", 1) == replicas || !ctrl_charge(c))
		return;
	char target[400];
	snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/replicasets/%s",
		 ctrl_jstr(rs, "metadata.namespace"), ctrl_jstr(rs, "metadata.name"));
	cJSON *patch = cJSON_CreateObject();
	cJSON *spec = patch ? cJSON_AddObjectToObject(patch, "spec") : NULL;
	int code = 0;
	if (spec && cJSON_AddNumberToObject(spec, "replicas", (double)replicas))
		code = ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
	if (code == 200) {
		int64_t from = ctrl_jint(rs, "spec.replicas", 1);
		char msg[400];
		snprintf(msg, sizeof(msg), "Scaled %s replica set %.250s from %lld to %lld",
			 replicas > from ? "up" : "down", ctrl_jstr(rs, "metadata.name"),
			 (long long)from, (long long)replicas);
		ctrl_obj_event(c, d, "apps/v1", "Deployment", "Normal", "ScalingReplicaSet", msg);
	}
}

/* Rolling update: one step (scale up new, or else scale down old). */
static void dp_rolling(struct ctrl *c, const cJSON *d, const cJSON *newrs, cJSON *rss)
{
	int64_t replicas = ctrl_jint(d, "spec.replicas", 1);
	const cJSON *ru = k32_json_find(d, "spec.strategy.rollingUpdate");
	int64_t surge = dp_int_or_pct(cJSON_GetObjectItem(ru, "maxSurge"), replicas, true, 0);
	int64_t unavail =
	    dp_int_or_pct(cJSON_GetObjectItem(ru, "maxUnavailable"), replicas, false, 0);
	if (!ru) {
		surge = (replicas * 25 + 99) / 100;
		unavail = replicas * 25 / 100;
	}
	if (surge == 0 && unavail == 0)
		unavail = 1;
	int64_t total = 0, avail_all = 0;
	bool old_active = false;
	const cJSON *rs;
	cJSON_ArrayForEach(rs, rss)
	{
		total += ctrl_jint(rs, "spec.replicas", 1);
		avail_all += ctrl_jint(rs, "status.availableReplicas", 0);
		if (rs != newrs && (ctrl_jint(rs, "spec.replicas", 1) > 0 ||
				    ctrl_jint(rs, "status.replicas", 0) > 0))
			old_active = true;
	}
	int64_t newcur = ctrl_jint(newrs, "spec.replicas", 1);
	if (!old_active) {
		dp_scale(c, d, newrs, replicas);
		return;
	}
	/* scale up within replicas + maxSurge */
	if (newcur < replicas && total < replicas + surge) {
		int64_t up = replicas + surge - total;
		dp_scale(c, d, newrs, newcur + up < replicas ? newcur + up : replicas);
		return;
	}
	if (newcur > replicas) {
		dp_scale(c, d, newrs, replicas);
		return;
	}
	/* scale down old: unhealthy first, then keeping replicas - maxUnavailable available */
	int64_t min_avail = replicas - unavail;
	int64_t new_unavail = newcur - ctrl_jint(newrs, "status.availableReplicas", 0);
	if (new_unavail < 0)
		new_unavail = 0;
	int64_t max_down = total - min_avail - new_unavail;
	if (max_down <= 0)
		return;
	ctrl_sort_by_age(rss);
	size_t tlen = (size_t)(cJSON_GetArraySize(rss) + 1) * sizeof(int64_t);
	int64_t *target = ctrl_zalloc(tlen);
	int64_t i = 0;
	if (!target)
		return;
	cJSON_ArrayForEach(rs, rss)
	{
		int64_t cur = ctrl_jint(rs, "spec.replicas", 1);
		int64_t unhealthy = cur - ctrl_jint(rs, "status.availableReplicas", 0);
		int64_t down = unhealthy < max_down ? unhealthy : max_down;
		target[i] = cur;
		if (rs != newrs && down > 0) {
			target[i] -= down;
			max_down -= down;
		}
		i++;
	}
	int64_t down2 = avail_all - min_avail;
	i = 0;
	cJSON_ArrayForEach(rs, rss)
	{
		int64_t down = target[i] < down2 ? target[i] : down2;
		if (rs != newrs && down > 0) {
			target[i] -= down;
			down2 -= down;
		}
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(rs, rss)
	{
		if (rs != newrs)
			dp_scale(c, d, rs, target[i]);
		i++;
	}
	ctrl_free(target, tlen);
}

/* True when a pod of an old ReplicaSet still exists, terminating ones included (Recreate
 * starts the new pods only once the old ones are gone, as Kubernetes does); true on a read
 * failure too. */
static bool dp_old_pods_left(struct ctrl *c, const cJSON *d, const cJSON *newrs, const cJSON *rss)
{
	char path[400];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods",
		 ctrl_jstr(d, "metadata.namespace"));
	cJSON *pods = ctrl_list_array(c, path, NULL);
	if (!pods)
		return true;
	bool left = false;
	const cJSON *p, *rs;
	cJSON_ArrayForEach(p, pods)
	{
		const char *cu = ctrl_controller_uid(p);
		cJSON_ArrayForEach(rs, rss)
		{
			const char *u = ctrl_jstr(rs, "metadata.uid");
			if (rs != newrs && cu && u && !strcmp(cu, u) && !ctrl_pod_terminal(p))
				left = true;
		}
	}
	cJSON_Delete(pods);
	return left;
}

static void dp_recreate(struct ctrl *c, const cJSON *d, const cJSON *newrs, const cJSON *rss)
{
	bool old_pods = false;
	const cJSON *rs;
	cJSON_ArrayForEach(rs, rss)
	{
		if (rs == newrs)
			continue;
		if (ctrl_jint(rs, "spec.replicas", 1) > 0)
			dp_scale(c, d, rs, 0);
		if (ctrl_jint(rs, "spec.replicas", 1) > 0 ||
		    ctrl_jint(rs, "status.replicas", 0) > 0)
			old_pods = true;
	}
	if (!old_pods && !dp_old_pods_left(c, d, newrs, rss))
		dp_scale(c, d, newrs, ctrl_jint(d, "spec.replicas", 1));
}

static void dp_cleanup(struct ctrl *c, const cJSON *d, const cJSON *newrs, const cJSON *rss)
{
	int64_t limit = ctrl_jint(d, "spec.revisionHistoryLimit", 10);
	int64_t idle = 0;
	const cJSON *rs;
	cJSON_ArrayForEach(rs, rss)
	{
		if (rs != newrs && ctrl_jint(rs, "spec.replicas", 1) == 0 &&
		    ctrl_jint(rs, "status.replicas", 0) == 0 && !ctrl_deleting(rs))
			idle++;
	}
	while (idle > limit) {
		const cJSON *oldest = NULL;
		cJSON_ArrayForEach(rs, rss)
		{
			if (rs == newrs || ctrl_jint(rs, "spec.replicas", 1) != 0 ||
			    ctrl_jint(rs, "status.replicas", 0) != 0 || ctrl_deleting(rs) ||
			    cJSON_GetObjectItem(rs, "_k32gone"))
				continue;
			if (!oldest || dp_revision(rs) < dp_revision(oldest))
				oldest = rs;
		}
		if (!oldest || !ctrl_charge(c))
			break;
		char target[400];
		snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/replicasets/%s",
			 ctrl_jstr(oldest, "metadata.namespace"),
			 ctrl_jstr(oldest, "metadata.name"));
		ctrl_write(c, "DELETE", target, NULL, NULL, NULL);
		cJSON_AddTrueToObject((cJSON *)oldest, "_k32gone");
		idle--;
	}
}

/*
 * Progressing while a rollout is under way: True/ReplicaSetUpdated with lastUpdateTime
 * bumped whenever the counts move; False/ProgressDeadlineExceeded (which makes `kubectl
 * rollout status` fail) once nothing moved for spec.progressDeadlineSeconds.
 */
static void dp_progress(struct ctrl *c, const cJSON *d, cJSON *st, const char *rsname)
{
	static const char *const counts[] = {"replicas", "updatedReplicas", "readyReplicas",
					     "availableReplicas"};
	char msg[400];
	bool moved = false;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		moved |= ctrl_jint(cJSON_GetObjectItem(d, "status"), counts[i], 0) !=
			 ctrl_jint(st, counts[i], 0);
	cJSON *cd = ctrl_cond_find(cJSON_GetObjectItem(st, "conditions"), "Progressing");
	const char *reason = ctrl_jstr(cd, "reason");
	if (!moved && reason && !strcmp(reason, "ProgressDeadlineExceeded"))
		return; /* stays until something moves */
	snprintf(msg, sizeof(msg), "ReplicaSet \"%.300s\" is progressing.", rsname);
	bool changed = ctrl_cond_set(c, st, "Progressing", "True", "ReplicaSetUpdated", msg, true);
	cd = ctrl_cond_find(cJSON_GetObjectItem(st, "conditions"), "Progressing");
	char now[32];
	uint64_t wall = ctrl_wall_s(c);
	ctrl_fmt_time(wall, now, sizeof(now));
	if (moved && !changed && cd)
		cJSON_ReplaceItemInObject(cd, "lastUpdateTime", cJSON_CreateString(now));
	if (moved || changed)
		return;
	int64_t deadline = ctrl_jint(d, "spec.progressDeadlineSeconds", 600);
	uint64_t since = 0;
	if (!ctrl_parse_time(ctrl_jstr(cd, "lastUpdateTime"), &since))
		return;
	if (wall < since + (uint64_t)deadline) {
		ctrl_requeue(c, since + (uint64_t)deadline - wall);
		return;
	}
	snprintf(msg, sizeof(msg), "ReplicaSet \"%.300s\" has timed out progressing.", rsname);
	ctrl_cond_set(c, st, "Progressing", "False", "ProgressDeadlineExceeded", msg, true);
}

static void dp_status(struct ctrl *c, const cJSON *d, const cJSON *newrs, const cJSON *rss)
{
	int64_t replicas = ctrl_jint(d, "spec.replicas", 1);
	int64_t sum_spec = 0, sum_st = 0, ready = 0, avail = 0;
	const cJSON *rs;
	cJSON_ArrayForEach(rs, rss)
	{
		sum_spec += ctrl_jint(rs, "spec.replicas", 1);
		sum_st += ctrl_jint(rs, "status.replicas", 0);
		ready += ctrl_jint(rs, "status.readyReplicas", 0);
		avail += ctrl_jint(rs, "status.availableReplicas", 0);
	}
	int64_t updated = newrs ? ctrl_jint(newrs, "status.replicas", 0) : 0;
	const cJSON *ru = k32_json_find(d, "spec.strategy.rollingUpdate");
	int64_t unavail = dp_int_or_pct(cJSON_GetObjectItem(ru, "maxUnavailable"), replicas, false,
					replicas * 25 / 100);
	const char *stype = ctrl_jstr(d, "spec.strategy.type");
	if (stype && !strcmp(stype, "Recreate"))
		unavail = 0;
	cJSON *st = cJSON_CreateObject();
	if (!st)
		return;
	int64_t gen = ctrl_jint(d, "metadata.generation", 1);
	cJSON_AddNumberToObject(st, "observedGeneration", (double)gen);
	cJSON_AddNumberToObject(st, "replicas", (double)sum_st);
	cJSON_AddNumberToObject(st, "updatedReplicas", (double)updated);
	cJSON_AddNumberToObject(st, "readyReplicas", (double)ready);
	cJSON_AddNumberToObject(st, "availableReplicas", (double)avail);
	cJSON_AddNumberToObject(st, "unavailableReplicas",
				(double)(sum_spec > avail ? sum_spec - avail : 0));
	/* conditions start from the stored ones so unchanged times are kept */
	cJSON *conds = cJSON_Duplicate(k32_json_find(d, "status.conditions"), true);
	cJSON_AddItemToObject(st, "conditions", conds ? conds : cJSON_CreateArray());
	if (avail >= replicas - unavail)
		ctrl_cond_set(c, st, "Available", "True", "MinimumReplicasAvailable",
			      "Deployment has minimum availability.", true);
	else
		ctrl_cond_set(c, st, "Available", "False", "MinimumReplicasUnavailable",
			      "Deployment does not have minimum availability.", true);
	char msg[400];
	const char *rsname = newrs ? ctrl_jstr(newrs, "metadata.name") : "";
	bool complete = newrs && updated == replicas && sum_st == replicas && avail == replicas;
	if (complete) {
		snprintf(msg, sizeof(msg), "ReplicaSet \"%.300s\" has successfully progressed.",
			 rsname);
		ctrl_cond_set(c, st, "Progressing", "True", "NewReplicaSetAvailable", msg, true);
	} else {
		dp_progress(c, d, st, rsname);
	}
	char target[400];
	snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/deployments/%s/status",
		 ctrl_jstr(d, "metadata.namespace"), ctrl_jstr(d, "metadata.name"));
	ctrl_status_write(c, target, d, st);
	cJSON_Delete(st);
}

static void dp_sync(struct ctrl *c, const cJSON *d)
{
	const char *ns = ctrl_jstr(d, "metadata.namespace");
	const char *name = ctrl_jstr(d, "metadata.name");
	const char *uid = ctrl_jstr(d, "metadata.uid");
	if (!ns || !name || !uid || ctrl_deleting(d))
		return;
	char path[400];
	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/replicasets", ns);
	cJSON *rss = ctrl_list_array(c, path, uid);
	if (!rss)
		return;
	const cJSON *tmpl = k32_json_find(d, "spec.template");
	const cJSON *newrs = NULL, *rs;
	int64_t max_rev = 0;
	cJSON_ArrayForEach(rs, rss)
	{
		if (dp_revision(rs) > max_rev)
			max_rev = dp_revision(rs);
		if (!newrs && !ctrl_deleting(rs) && dp_template_equal(rs, tmpl))
			newrs = rs;
	}
	if (!newrs) {
		/* the new ReplicaSet's watch event brings the next pass, which scales it */
		if (dp_create_rs(c, d, max_rev + 1) == 409)
			dp_adopt(c, d);
		cJSON_Delete(rss);
		return;
	}
	char target[700];
	int64_t rev = dp_revision(newrs);
	if (rev < max_rev) {
		snprintf(target, sizeof(target), "%s/%s", path, ctrl_jstr(newrs, "metadata.name"));
		dp_annotate(c, target, DEPLOY_REVISION, max_rev + 1);
		rev = max_rev + 1;
	}
	if (dp_revision(d) != rev) {
		snprintf(target, sizeof(target), "/apis/apps/v1/namespaces/%s/deployments/%s", ns,
			 name);
		dp_annotate(c, target, DEPLOY_REVISION, rev);
	}
	if (!cJSON_IsTrue(k32_json_find(d, "spec.paused"))) {
		const char *stype = ctrl_jstr(d, "spec.strategy.type");
		if (stype && !strcmp(stype, "Recreate")) {
			dp_recreate(c, d, newrs, rss);
		} else {
			dp_rolling(c, d, newrs, rss);
		}
	}
	dp_status(c, d, newrs, rss);
	int64_t replicas = ctrl_jint(d, "spec.replicas", 1);
	if (ctrl_jint(newrs, "status.availableReplicas", 0) == replicas &&
	    ctrl_jint(newrs, "status.replicas", 0) == replicas)
		dp_cleanup(c, d, newrs, rss);
	cJSON_Delete(rss);
}

void ctrl_deploy_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_work(c, "/apis/apps/v1/deployments");
	const cJSON *d;
	cJSON_ArrayForEach(d, list)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		if (!ctrl_item_begin(c, d))
			continue; /* backing off */
		dp_sync(c, d);
		ctrl_item_end(c);
	}
	cJSON_Delete(list);
}
