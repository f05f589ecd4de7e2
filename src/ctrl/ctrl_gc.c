/*
 * ctrl_gc.c - the garbage collector (ownerReferences) and namespace finalisation.
 *
 * What the API already does (src/api/api_crud.c), so this does not: deleting a Deployment,
 * ReplicaSet, DaemonSet or Job with propagationPolicy Background or Foreground deletes its
 * dependents at once (up to K32_API_MAX_CASCADE levels), Orphan strips their
 * ownerReferences, and deleting a namespace deletes its contents then the namespace.
 *
 * What the GC adds, per pass over the kinds that may be dependents (pods, replicasets,
 * daemonsets, deployments, jobs, configmaps, secrets, devices):
 *   - background: an object whose every owner (looked up by kind, name and uid) is gone is
 *     deleted; one whose owners are partly gone loses the dangling references. Owners of
 *     any kind are followed (a ConfigMap owned by a Pod, a Pod owned by a Deployment), and
 *     chains longer than the API's cascade are finished over passes. Owner kinds the GC
 *     does not know are left alone.
 *   - foreground: an object being deleted with the finalizer foregroundDeletion has its
 *     dependents deleted; when none is left the finalizer is removed (the API then
 *     completes the deletion).
 *   - orphan: an object being deleted with the finalizer orphan has the references to it
 *     removed from its dependents, then the finalizer.
 * Namespace finalisation: a Terminating namespace has what is left in it deleted (the API's
 * janitor purges it too, K32_API_NS_PURGE_DELAY_MS after the deletion; whichever comes
 * first); once it is empty the "kubernetes" finalizer is removed from metadata.finalizers
 * and spec.finalizers, so the API deletes the namespace.
 *
 * Owner look-ups are cached for the pass (K32_CTRL_BATCH entries). An object found with its
 * owners gone is acted on only when a pass K32_CTRL_GC_CONFIRM_S later finds it so again:
 * the API removes an owner deleted with propagationPolicy Orphan a moment before it strips
 * the dependents' references, and the GC must not collect them in between.
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <string.h>

struct gc_kind {
	const char *api_version;
	const char *kind;
	const char *prefix; /* "/api/v1" or "/apis/<g>/<v>" */
	const char *plural;
	bool namespaced;
};

/* clang-format off */
static const struct gc_kind gc_kinds[] = {
	{"v1", "Pod", "/api/v1", "pods", true},
	{"apps/v1", "ReplicaSet", "/apis/apps/v1", "replicasets", true},
	{"apps/v1", "DaemonSet", "/apis/apps/v1", "daemonsets", true},
	{"apps/v1", "Deployment", "/apis/apps/v1", "deployments", true},
	{"batch/v1", "Job", "/apis/batch/v1", "jobs", true},
	{"batch/v1", "CronJob", "/apis/batch/v1", "cronjobs", true},
	{"apps/v1", "ControllerRevision", "/apis/apps/v1", "controllerrevisions", true},
	{"v1", "ConfigMap", "/api/v1", "configmaps", true},
	{"v1", "Secret", "/api/v1", "secrets", true},
	{"kube32.io/v1alpha1", "Device", "/apis/kube32.io/v1alpha1", "devices", true},
	{"v1", "Node", "/api/v1", "nodes", false},
	{"v1", "Namespace", "/api/v1", "namespaces", false},
};
/* clang-format on */

#define GC_DEPENDENT_KINDS 10 /* the first rows may be dependents */
#define GC_NS_KINDS	   10 /* and are what a namespace holds, with events and leases */

static const struct gc_kind *gc_kind_find(const char *api_version, const char *kind)
{
	for (size_t i = 0; i < sizeof(gc_kinds) / sizeof(gc_kinds[0]); i++)
		if (api_version && kind && !strcmp(gc_kinds[i].api_version, api_version) &&
		    !strcmp(gc_kinds[i].kind, kind))
			return &gc_kinds[i];
	return NULL;
}

static void gc_obj_path(const struct gc_kind *k, const char *ns, const char *name, char *out,
			size_t cap)
{
	if (k->namespaced)
		snprintf(out, cap, "%s/namespaces/%s/%s/%s", k->prefix, ns, k->plural, name);
	else
		snprintf(out, cap, "%s/%s/%s", k->prefix, k->plural, name);
}

struct gc_cache {
	char uid[K32_CTRL_BATCH][40];
	bool alive[K32_CTRL_BATCH];
	unsigned count;
};

struct gc_pass {
	struct gc_cache cache;
	const struct gc_kind *kind; /* of the objects being listed */
	cJSON *finalizing;	    /* objects being deleted with GC finalizers (copies) */
};

/* 1: owner alive, 0: gone, -1: unknown kind or lookup failure (leave alone). */
static int gc_owner_alive(struct ctrl *c, struct gc_pass *gp, const cJSON *ref, const char *ns)
{
	const char *uid = ctrl_jstr(ref, "uid");
	const char *name = ctrl_jstr(ref, "name");
	const struct gc_kind *k =
	    gc_kind_find(ctrl_jstr(ref, "apiVersion"), ctrl_jstr(ref, "kind"));
	if (!uid || !name || !k)
		return -1;
	for (unsigned i = 0; i < gp->cache.count; i++)
		if (!strcmp(gp->cache.uid[i], uid))
			return gp->cache.alive[i];
	char path[700];
	gc_obj_path(k, ns, name, path, sizeof(path));
	/* the informers' caches answer for the kinds they hold, without a request */
	char cu[64];
	int cached = ctrl_cache_uid(c, path, cu, sizeof(cu));
	if (cached >= 0)
		return cached && !strcmp(cu, uid);
	cJSON *o = NULL;
	struct k32_err err;
	k32_status_t st = ctrl_get(c, path, &o, &err);
	int alive = -1;
	if (st == K32_OK) {
		const char *u = ctrl_jstr(o, "metadata.uid");
		alive = u && !strcmp(u, uid);
	} else if (st == K32_ERR_NOT_FOUND) {
		alive = 0;
	}
	cJSON_Delete(o);
	if (alive >= 0 && gp->cache.count < K32_CTRL_BATCH) {
		snprintf(gp->cache.uid[gp->cache.count], sizeof(gp->cache.uid[0]), "%s", uid);
		gp->cache.alive[gp->cache.count++] = alive;
	}
	return alive;
}

static bool gc_has_finalizer(const cJSON *o, const char *f)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, k32_json_find(o, "metadata.finalizers"))
	{
		if (cJSON_IsString(x) && !strcmp(x->valuestring, f))
			return true;
	}
	return false;
}

/* Merge-patches metadata.<field> of the object at path with value (taken). */
static void gc_patch_meta(struct ctrl *c, const char *path, const char *field, cJSON *value)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *md = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
	if (!md || !value) {
		cJSON_Delete(value);
		cJSON_Delete(patch);
		return;
	}
	cJSON_AddItemToObject(md, field, value);
	ctrl_write(c, "PATCH", path, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
}

/*
 * True when uid was already found dangling K32_CTRL_GC_CONFIRM_S ago (and still is: the
 * caller re-checked the owners in this pass); else remembers it and asks for a pass then.
 */
static bool gc_confirmed(struct ctrl *c, const char *uid)
{
	uint64_t now = ctrl_now_us(c), wait = (uint64_t)K32_CTRL_GC_CONFIRM_S * 1000000u;
	struct ctrl_gc_suspect *free_slot = NULL;
	if (!uid)
		return false;
	for (unsigned i = 0; i < K32_CTRL_BATCH; i++) {
		struct ctrl_gc_suspect *s = &c->gc_suspects[i];
		if (!s->since_us) {
			free_slot = free_slot ? free_slot : s;
			continue;
		}
		if (strcmp(s->uid, uid))
			continue;
		s->seen = true;
		if (now - s->since_us >= wait) {
			s->since_us = 0;
			return true;
		}
		ctrl_requeue(c, (wait - (now - s->since_us)) / 1000000u + 1);
		return false;
	}
	if (free_slot) {
		snprintf(free_slot->uid, sizeof(free_slot->uid), "%s", uid);
		free_slot->since_us = now ? now : 1;
		free_slot->seen = true;
	}
	ctrl_requeue(c, K32_CTRL_GC_CONFIRM_S);
	return false;
}

static bool gc_item(struct ctrl *c, cJSON *o, void *ctx)
{
	struct gc_pass *gp = ctx;
	if (ctrl_deleting(o)) {
		if (gc_has_finalizer(o, "foregroundDeletion") || gc_has_finalizer(o, "orphan")) {
			cJSON *d = cJSON_Duplicate(o, true);
			if (d) {
				/* remember its kind for the finalizer step */
				cJSON_AddStringToObject(d, "apiVersion", gp->kind->api_version);
				cJSON_AddStringToObject(d, "kind", gp->kind->kind);
				cJSON_AddItemToArray(gp->finalizing, d);
			}
		}
		return true;
	}
	const cJSON *refs = k32_json_find(o, "metadata.ownerReferences");
	int n = cJSON_GetArraySize(refs);
	if (n == 0)
		return true;
	const char *ns = ctrl_jstr(o, "metadata.namespace");
	int gone = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, refs)
	{
		int a = gc_owner_alive(c, gp, r, ns ? ns : "");
		gone += a == 0;
	}
	if (gone == 0 || !gc_confirmed(c, ctrl_jstr(o, "metadata.uid")))
		return true;
	if (!ctrl_charge(c))
		return false;
	char path[700];
	gc_obj_path(gp->kind, ns ? ns : "", ctrl_jstr(o, "metadata.name"), path, sizeof(path));
	if (gone == n) {
		cJSON *body = cJSON_CreateObject();
		if (body)
			cJSON_AddStringToObject(body, "propagationPolicy", "Background");
		ctrl_write(c, "DELETE", path, NULL, body, NULL);
		cJSON_Delete(body);
		return true;
	}
	cJSON *keep = cJSON_CreateArray();
	cJSON_ArrayForEach(r, refs)
	{
		if (keep && gc_owner_alive(c, gp, r, ns ? ns : "") != 0)
			cJSON_AddItemToArray(keep, cJSON_Duplicate(r, true));
	}
	gc_patch_meta(c, path, "ownerReferences", keep);
	return true;
}

struct gc_deps {
	const char *uid;
	bool orphan;		    /* strip the reference instead of deleting */
	const struct gc_kind *kind; /* of the dependents being listed */
	int left;		    /* dependents still there */
};

static bool gc_dep(struct ctrl *c, cJSON *o, void *ctx)
{
	struct gc_deps *gd = ctx;
	const cJSON *refs = k32_json_find(o, "metadata.ownerReferences");
	const cJSON *r;
	bool mine = false;
	cJSON_ArrayForEach(r, refs)
	{
		const char *u = ctrl_jstr(r, "uid");
		mine |= u && !strcmp(u, gd->uid);
	}
	if (!mine)
		return true;
	gd->left++;
	if (!gd->orphan && ctrl_deleting(o))
		return true;
	if (!ctrl_charge(c))
		return false;
	char path[700];
	gc_obj_path(gd->kind, ctrl_jstr(o, "metadata.namespace"), ctrl_jstr(o, "metadata.name"),
		    path, sizeof(path));
	if (gd->orphan) {
		cJSON *keep = cJSON_CreateArray();
		cJSON_ArrayForEach(r, refs)
		{
			const char *u = ctrl_jstr(r, "uid");
			if (keep && (!u || strcmp(u, gd->uid)))
				cJSON_AddItemToArray(keep, cJSON_Duplicate(r, true));
		}
		gc_patch_meta(c, path, "ownerReferences", keep);
		gd->left--;
	} else {
		cJSON *body = cJSON_CreateObject();
		if (body)
			cJSON_AddStringToObject(body, "propagationPolicy", "Foreground");
		/* still counted: the finalizer goes on a pass that finds it gone (a bound pod
		 * stays until its kubelet confirms) */
		ctrl_write(c, "DELETE", path, NULL, body, NULL);
		cJSON_Delete(body);
	}
	return true;
}

/* Handles one object being deleted with foregroundDeletion or orphan. */
static void gc_finalize(struct ctrl *c, const cJSON *o)
{
	const struct gc_kind *k = gc_kind_find(ctrl_jstr(o, "apiVersion"), ctrl_jstr(o, "kind"));
	const char *uid = ctrl_jstr(o, "metadata.uid");
	const char *ns = ctrl_jstr(o, "metadata.namespace");
	if (!k || !uid)
		return;
	bool orphan = gc_has_finalizer(o, "orphan");
	const char *fin = orphan ? "orphan" : "foregroundDeletion";
	int left = 0;
	for (size_t i = 0; i < GC_DEPENDENT_KINDS; i++) {
		struct gc_deps gd = {uid, orphan, &gc_kinds[i], 0};
		char path[400];
		if (ns && ns[0])
			snprintf(path, sizeof(path), "%s/namespaces/%s/%s", gc_kinds[i].prefix, ns,
				 gc_kinds[i].plural);
		else
			snprintf(path, sizeof(path), "%s/%s", gc_kinds[i].prefix,
				 gc_kinds[i].plural);
		if (ctrl_list(c, path, gc_dep, &gd))
			return;
		left += gd.left;
	}
	if (left > 0 || !ctrl_charge(c))
		return;
	cJSON *keep = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, k32_json_find(o, "metadata.finalizers"))
	{
		if (keep && cJSON_IsString(f) && strcmp(f->valuestring, fin))
			cJSON_AddItemToArray(keep, cJSON_Duplicate(f, true));
	}
	char path[700];
	gc_obj_path(k, ns ? ns : "", ctrl_jstr(o, "metadata.name"), path, sizeof(path));
	gc_patch_meta(c, path, "finalizers", keep);
}

void ctrl_gc_pass(struct ctrl *c)
{
	struct gc_pass *gp = ctrl_zalloc(sizeof(*gp));
	if (!gp) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "gc: out of memory");
		return;
	}
	for (unsigned i = 0; i < K32_CTRL_BATCH; i++)
		c->gc_suspects[i].seen = false;
	gp->finalizing = cJSON_CreateArray();
	for (size_t i = 0; gp->finalizing && i < GC_DEPENDENT_KINDS; i++) {
		char path[200];
		gp->kind = &gc_kinds[i];
		snprintf(path, sizeof(path), "%s/%s", gc_kinds[i].prefix, gc_kinds[i].plural);
		if (ctrl_list(c, path, gc_item, gp))
			break;
	}
	const cJSON *o;
	cJSON_ArrayForEach(o, gp->finalizing)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		gc_finalize(c, o);
	}
	/* suspects no longer dangling (owner back, object gone) are forgotten, unless the
	 * scan stopped early and did not get to them */
	for (unsigned i = 0; !c->more && !c->perr.status && i < K32_CTRL_BATCH; i++)
		if (!c->gc_suspects[i].seen)
			c->gc_suspects[i].since_us = 0;
	cJSON_Delete(gp->finalizing);
	ctrl_free(gp, sizeof(*gp));
}

/* ---- namespaces ------------------------------------------------------------------------ */

struct ns_left {
	const char *plural;
	int left;
};

static bool ns_item(struct ctrl *c, cJSON *o, void *ctx)
{
	struct ns_left *nl = ctx;
	nl->left++;
	if (ctrl_deleting(o) && strcmp(nl->plural, "pods"))
		return true; /* waiting for its own finalizers */
	if (!ctrl_charge(c))
		return false;
	char path[700];
	const struct gc_kind *k = NULL;
	for (size_t i = 0; i < GC_NS_KINDS; i++)
		if (!strcmp(gc_kinds[i].plural, nl->plural))
			k = &gc_kinds[i];
	if (k)
		gc_obj_path(k, ctrl_jstr(o, "metadata.namespace"), ctrl_jstr(o, "metadata.name"),
			    path, sizeof(path));
	else if (!strcmp(nl->plural, "leases"))
		snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
			 ctrl_jstr(o, "metadata.namespace"), ctrl_jstr(o, "metadata.name"));
	else
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events/%s",
			 ctrl_jstr(o, "metadata.namespace"), ctrl_jstr(o, "metadata.name"));
	cJSON *body = cJSON_CreateObject();
	if (body)
		cJSON_AddNumberToObject(body, "gracePeriodSeconds", 0);
	int code = ctrl_write(c, "DELETE", path, NULL, body, NULL);
	cJSON_Delete(body);
	/* gone now unless a finalizer holds it */
	if ((code == 200 || code == 404) &&
	    cJSON_GetArraySize(k32_json_find(o, "metadata.finalizers")) == 0)
		nl->left--;
	return true;
}

static void ns_finalize(struct ctrl *c, const cJSON *ns)
{
	const char *name = ctrl_jstr(ns, "metadata.name");
	if (!name)
		return;
	int left = 0;
	for (size_t i = 0; i < GC_NS_KINDS + 2; i++) {
		char path[400];
		struct ns_left nl = {NULL, 0};
		if (i < GC_NS_KINDS) {
			nl.plural = gc_kinds[i].plural;
			snprintf(path, sizeof(path), "%s/namespaces/%s/%s", gc_kinds[i].prefix,
				 name, nl.plural);
		} else if (i == GC_NS_KINDS) {
			nl.plural = "leases";
			snprintf(path, sizeof(path),
				 "/apis/coordination.k8s.io/v1/namespaces/%s/leases", name);
		} else {
			nl.plural = "events";
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", name);
		}
		if (ctrl_list(c, path, ns_item, &nl))
			return;
		left += nl.left;
	}
	if (left > 0)
		return;
	bool meta_k = false, spec_k = false;
	const cJSON *f;
	cJSON_ArrayForEach(f, k32_json_find(ns, "metadata.finalizers"))
	{
		meta_k |= cJSON_IsString(f) && !strcmp(f->valuestring, "kubernetes");
	}
	cJSON_ArrayForEach(f, k32_json_find(ns, "spec.finalizers"))
	{
		spec_k |= cJSON_IsString(f) && !strcmp(f->valuestring, "kubernetes");
	}
	if ((!meta_k && !spec_k) || !ctrl_charge(c))
		return;
	cJSON *patch = cJSON_CreateObject();
	for (int pass = 0; patch && pass < 2; pass++) {
		const char *where = pass ? "spec" : "metadata";
		if (!(pass ? spec_k : meta_k))
			continue;
		cJSON *obj = cJSON_AddObjectToObject(patch, where);
		cJSON *keep = obj ? cJSON_AddArrayToObject(obj, "finalizers") : NULL;
		cJSON_ArrayForEach(
		    f, cJSON_GetObjectItem(cJSON_GetObjectItem(ns, where), "finalizers"))
		{
			if (keep && cJSON_IsString(f) && strcmp(f->valuestring, "kubernetes"))
				cJSON_AddItemToArray(keep, cJSON_Duplicate(f, true));
		}
	}
	char path[320];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s", name);
	if (patch)
		ctrl_write(c, "PATCH", path, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
}

void ctrl_ns_pass(struct ctrl *c)
{
	cJSON *list = ctrl_list_array(c, "/api/v1/namespaces", NULL);
	const cJSON *ns;
	cJSON_ArrayForEach(ns, list)
	{
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		if (ctrl_deleting(ns))
			ns_finalize(c, ns);
	}
	cJSON_Delete(list);
}
