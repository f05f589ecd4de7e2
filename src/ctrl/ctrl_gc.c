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
 *
 * Change events, not walks (as kube-controller-manager's GC works from its graph): the
 * informers hand over (ctrl_gc_note) the owners deleted, the objects being deleted with
 * foregroundDeletion or orphan, and the namespaces Terminating. A pass works from those
 * notes: a deleted owner's dependents come from the informers' owner index (the kinds
 * without an informer: one list of the owner's namespace), a finalizing object or a
 * Terminating namespace is read and handled, and looked at again K32_CTRL_GC_RECHECK_S later
 * while it waits on its dependents or contents. Both controllers walk their kinds whole
 * (what the notes cannot see: references that are not the controller's, kinds without
 * informers, changes lost in a watch gap) on a periodic resync (cfg.resync_s since the last
 * walk), after an informer relisted, when a note did not fit (K32_CTRL_GC_NOTES), and always
 * without informers (cfg.no_task, cfg.no_cache).
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

static void gc_walk(struct ctrl *c)
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

static void ns_walk(struct ctrl *c)
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

/* ---- change events ----------------------------------------------------------------------- */

enum {
	CTRL_GC_NOTE_OWNER_GONE = 1, /* an owner was deleted: its dependents may dangle */
	CTRL_GC_NOTE_FINALIZING,     /* being deleted with foregroundDeletion or orphan */
	CTRL_GC_NOTE_NS,	     /* a Terminating namespace */
};

static uint32_t gc_note_bit(uint8_t what)
{
	return what == CTRL_GC_NOTE_NS ? CTRL_NAMESPACE : CTRL_GC;
}

void ctrl_gc_note(struct ctrl *c, const char *resource, const cJSON *obj, bool deleted)
{
	uint8_t what = 0, kind = 0;
	if (!strcmp(resource, "namespaces")) {
		if (!deleted && ctrl_deleting(obj))
			what = CTRL_GC_NOTE_NS;
	} else {
		for (size_t i = 0; i < GC_DEPENDENT_KINDS; i++)
			if (!strcmp(gc_kinds[i].plural, resource))
				kind = (uint8_t)i, what = CTRL_GC_NOTE_OWNER_GONE;
		if (what && !deleted)
			what = ctrl_deleting(obj) && (gc_has_finalizer(obj, "foregroundDeletion") ||
						      gc_has_finalizer(obj, "orphan"))
				   ? CTRL_GC_NOTE_FINALIZING
				   : 0;
	}
	uint32_t bit = gc_note_bit(what);
	if (!what || !(c->cfg.enable & bit))
		return;
	const char *uid = ctrl_jstr(obj, "metadata.uid");
	const char *ns = ctrl_jstr(obj, "metadata.namespace");
	const char *name = ctrl_jstr(obj, "metadata.name");
	ns = ns ? ns : "";
	struct ctrl_gc_note n = {.at_us = ctrl_now_us(c), .what = what, .kind = kind};
	bool fits = uid && name && strlen(uid) < sizeof(n.uid) && strlen(ns) < sizeof(n.ns) &&
		    strlen(name) < sizeof(n.name);
	if (fits) {
		snprintf(n.uid, sizeof(n.uid), "%s", uid);
		snprintf(n.ns, sizeof(n.ns), "%s", ns);
		snprintf(n.name, sizeof(n.name), "%s", name);
		n.at_us += !n.at_us;
	}
	k32_mutex_lock(&c->lock);
	struct ctrl_gc_note *slot = NULL;
	for (unsigned i = 0; fits && i < K32_CTRL_GC_NOTES; i++) {
		struct ctrl_gc_note *x = &c->gc_notes[i];
		if (x->at_us && x->what == what && !strcmp(x->uid, n.uid)) {
			slot = x; /* noted already: look at once */
			break;
		}
		if (!x->at_us && !slot)
			slot = x;
	}
	if (slot)
		*slot = n;
	else
		c->gc_notes_over |= bit; /* lost: the next pass walks */
	k32_mutex_unlock(&c->lock);
}

/* Whether controller bit's pass walks its kinds whole (see the top of this file). */
static bool gc_walk_due(struct ctrl *c, uint32_t bit, uint64_t now)
{
	unsigned w = bit == CTRL_GC ? 0 : 1;
	k32_mutex_lock(&c->lock);
	bool over = (c->gc_notes_over & bit) != 0;
	c->gc_notes_over &= ~bit;
	uint64_t restarts = c->stats.watch_restarts;
	k32_mutex_unlock(&c->lock);
	return c->cfg.no_task || c->cfg.no_cache || over || !c->gc_walked[w] ||
	       restarts != c->gc_restarts[w] ||
	       now - c->gc_walk_us[w] >= (uint64_t)c->cfg.resync_s * 1000000u;
}

/* After a walk: finished (not cut by the budget, no read failure) it counts as the resync
 * and the notes it covered go; cut short, the next pass walks again. */
static void gc_walk_done(struct ctrl *c, uint32_t bit, uint64_t now, uint64_t restarts)
{
	unsigned w = bit == CTRL_GC ? 0 : 1;
	k32_mutex_lock(&c->lock);
	if (c->more || c->perr.status) {
		c->gc_notes_over |= bit;
	} else {
		c->gc_walked[w] = true;
		c->gc_walk_us[w] = now;
		c->gc_restarts[w] = restarts;
		for (unsigned i = 0; i < K32_CTRL_GC_NOTES; i++)
			if (c->gc_notes[i].at_us && gc_note_bit(c->gc_notes[i].what) == bit &&
			    c->gc_notes[i].at_us <= now)
				c->gc_notes[i].at_us = 0;
	}
	k32_mutex_unlock(&c->lock);
}

/* Takes controller bit's notes due by now out of the table (into out, up to cap); sets
 * *next to the earliest one left (UINT64_MAX: none). */
static unsigned gc_notes_take(struct ctrl *c, uint32_t bit, uint64_t now, struct ctrl_gc_note *out,
			      unsigned cap, uint64_t *next)
{
	unsigned n = 0;
	*next = UINT64_MAX;
	k32_mutex_lock(&c->lock);
	for (unsigned i = 0; i < K32_CTRL_GC_NOTES; i++) {
		struct ctrl_gc_note *x = &c->gc_notes[i];
		if (!x->at_us || gc_note_bit(x->what) != bit)
			continue;
		if (x->at_us <= now && n < cap) {
			out[n++] = *x;
			x->at_us = 0;
		} else if (x->at_us < *next) {
			*next = x->at_us;
		}
	}
	k32_mutex_unlock(&c->lock);
	return n;
}

/* Puts a note back to be looked at again at at_us (and asks for a pass then). */
static void gc_note_again(struct ctrl *c, const struct ctrl_gc_note *n, uint64_t at_us)
{
	struct ctrl_gc_note again = *n;
	again.at_us = at_us ? at_us : 1;
	k32_mutex_lock(&c->lock);
	struct ctrl_gc_note *slot = NULL;
	for (unsigned i = 0; i < K32_CTRL_GC_NOTES && !slot; i++)
		if (!c->gc_notes[i].at_us ||
		    (c->gc_notes[i].what == n->what && !strcmp(c->gc_notes[i].uid, n->uid)))
			slot = &c->gc_notes[i];
	if (slot && slot->at_us && slot->at_us < again.at_us)
		again.at_us = slot->at_us; /* a newer event of the same: the sooner */
	if (slot)
		*slot = again;
	else
		c->gc_notes_over |= gc_note_bit(n->what);
	k32_mutex_unlock(&c->lock);
	uint64_t now = ctrl_now_us(c);
	ctrl_requeue(c, again.at_us > now ? (again.at_us - now + 999999u) / 1000000u : 0);
}

/* The dependents of one owner uid (copies), and whether the list is whole. */
struct gc_collect {
	const char *uid;
	cJSON *deps;
};

static bool gc_collect_dep(struct ctrl *c, cJSON *o, void *ctx)
{
	(void)c;
	struct gc_collect *gc = ctx;
	const cJSON *r;
	cJSON_ArrayForEach(r, k32_json_find(o, "metadata.ownerReferences"))
	{
		const char *u = ctrl_jstr(r, "uid");
		if (u && !strcmp(u, gc->uid)) {
			cJSON_AddItemToArray(gc->deps, cJSON_Duplicate(o, true));
			break;
		}
	}
	return true;
}

/* An owner was deleted: its dependents of every kind, each handled as a walk would (its
 * owners checked, collected once confirmed). False when nothing is left to wait for. */
static bool gc_owner_gone(struct ctrl *c, struct gc_pass *gp, const struct ctrl_gc_note *n)
{
	bool waiting = false;
	for (size_t i = 0; i < GC_DEPENDENT_KINDS && !c->perr.status; i++) {
		struct gc_collect gcl = {n->uid, cJSON_CreateArray()};
		if (!gcl.deps)
			return true;
		char path[400];
		snprintf(path, sizeof(path), "%s/%s", gc_kinds[i].prefix, gc_kinds[i].plural);
		/* the owner index (controller references) of a cached kind; else the API, the
		 * owner's namespace only */
		if (ctrl_cache_index(c, path, CTRL_IDX_OWNER, n->uid, gc_collect_dep, &gcl) < 0) {
			snprintf(path, sizeof(path), "%s/namespaces/%s/%s", gc_kinds[i].prefix,
				 n->ns, gc_kinds[i].plural);
			ctrl_list(c, path, gc_collect_dep, &gcl);
		}
		gp->kind = &gc_kinds[i];
		cJSON *d;
		cJSON_ArrayForEach(d, gcl.deps)
		{
			/* one being deleted is on its way: nothing to wait for */
			if (ctrl_deleting(d))
				continue;
			waiting = true;
			if (!gc_item(c, d, gp))
				break;
		}
		cJSON_Delete(gcl.deps);
	}
	return waiting;
}

/* An object being deleted with a GC finalizer: its dependents handled, the finalizer removed
 * once they are gone. False when it is done (gone, or the finalizer removed). */
static bool gc_finalizing(struct ctrl *c, const struct ctrl_gc_note *n)
{
	const struct gc_kind *k = &gc_kinds[n->kind];
	char path[400];
	gc_obj_path(k, n->ns, n->name, path, sizeof(path));
	cJSON *o = NULL;
	struct k32_err err;
	if (ctrl_get(c, path, &o, &err))
		return err.status != K32_ERR_NOT_FOUND; /* a failed read: again later */
	const char *uid = ctrl_jstr(o, "metadata.uid");
	bool pending = ctrl_deleting(o) && uid && !strcmp(uid, n->uid) &&
		       (gc_has_finalizer(o, "foregroundDeletion") || gc_has_finalizer(o, "orphan"));
	if (pending) {
		cJSON_AddStringToObject(o, "apiVersion", k->api_version);
		cJSON_AddStringToObject(o, "kind", k->kind);
		gc_finalize(c, o);
	}
	cJSON_Delete(o);
	return pending;
}

void ctrl_gc_pass(struct ctrl *c)
{
	uint64_t now = ctrl_now_us(c);
	k32_mutex_lock(&c->lock);
	uint64_t restarts = c->stats.watch_restarts;
	k32_mutex_unlock(&c->lock);
	if (gc_walk_due(c, CTRL_GC, now)) {
		gc_walk(c);
		gc_walk_done(c, CTRL_GC, now, restarts);
		return;
	}
	struct gc_pass *gp = ctrl_zalloc(sizeof(*gp));
	struct ctrl_gc_note *notes = ctrl_zalloc(sizeof(*notes) * K32_CTRL_GC_NOTES);
	if (!gp || !notes) {
		ctrl_free(gp, sizeof(*gp));
		ctrl_free(notes, sizeof(*notes) * K32_CTRL_GC_NOTES);
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "gc: out of memory");
		return;
	}
	uint64_t next;
	unsigned n = gc_notes_take(c, CTRL_GC, now, notes, K32_CTRL_GC_NOTES, &next);
	uint64_t recheck = now + (uint64_t)K32_CTRL_GC_RECHECK_S * 1000000u;
	for (unsigned i = 0; i < n; i++) {
		if (c->budget == 0 || c->perr.status) {
			gc_note_again(c, &notes[i], now); /* not reached: at once */
			continue;
		}
		bool again = notes[i].what == CTRL_GC_NOTE_FINALIZING
				 ? gc_finalizing(c, &notes[i])
				 : gc_owner_gone(c, gp, &notes[i]);
		if (again) /* cut by the budget: at once; else when its dependents may be gone */
			gc_note_again(c, &notes[i], c->more ? now : recheck);
	}
	if (next != UINT64_MAX)
		ctrl_requeue(c, next > now ? (next - now + 999999u) / 1000000u : 0);
	ctrl_free(notes, sizeof(*notes) * K32_CTRL_GC_NOTES);
	ctrl_free(gp, sizeof(*gp));
}

void ctrl_ns_pass(struct ctrl *c)
{
	uint64_t now = ctrl_now_us(c);
	k32_mutex_lock(&c->lock);
	uint64_t restarts = c->stats.watch_restarts;
	k32_mutex_unlock(&c->lock);
	if (gc_walk_due(c, CTRL_NAMESPACE, now)) {
		ns_walk(c);
		gc_walk_done(c, CTRL_NAMESPACE, now, restarts);
		return;
	}
	struct ctrl_gc_note *notes = ctrl_zalloc(sizeof(*notes) * K32_CTRL_GC_NOTES);
	if (!notes) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "namespaces: out of memory");
		return;
	}
	uint64_t next;
	unsigned n = gc_notes_take(c, CTRL_NAMESPACE, now, notes, K32_CTRL_GC_NOTES, &next);
	for (unsigned i = 0; i < n; i++) {
		if (c->budget == 0 || c->perr.status) {
			gc_note_again(c, &notes[i], now);
			continue;
		}
		char path[128];
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s", notes[i].name);
		cJSON *ns = NULL;
		struct k32_err err;
		k32_status_t st = ctrl_get(c, path, &ns, &err);
		const char *uid = st ? NULL : ctrl_jstr(ns, "metadata.uid");
		/* a failed read, or still Terminating after this look: again later */
		if ((st && st != K32_ERR_NOT_FOUND) ||
		    (!st && ctrl_deleting(ns) && uid && !strcmp(uid, notes[i].uid))) {
			if (!st)
				ns_finalize(c, ns);
			gc_note_again(c, &notes[i],
				      now + (uint64_t)K32_CTRL_GC_RECHECK_S * 1000000u);
		}
		cJSON_Delete(ns);
	}
	if (next != UINT64_MAX)
		ctrl_requeue(c, next > now ? (next - now + 999999u) / 1000000u : 0);
	ctrl_free(notes, sizeof(*notes) * K32_CTRL_GC_NOTES);
}
