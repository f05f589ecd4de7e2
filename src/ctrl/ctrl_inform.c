/*
 * ctrl_inform.c - informers: one watch-fed cache per kind the controllers read (pods,
 * nodes, replicasets, deployments, daemonsets, jobs, namespaces, devices), as client-go's
 * shared informers.
 *
 * Each informer runs on its own task: it lists its kind through the client (paged), then
 * watches from the list's resourceVersion, applying every event to the cache and marking
 * the controllers that read the kind dirty (with the filters below, so a heartbeat or a
 * running pod's status does not wake the scheduler). A watch that ends normally resumes
 * from the last resourceVersion it saw; one that is too old (410 / COMPACTED) or fails
 * relists. Passes then read the kind from memory (ctrl_list), not from the API.
 *
 * The cache is an array of the parsed objects sorted by (namespace, name), so the objects
 * of one namespace are one binary-searched range (the namespace index); a list with
 * fieldSelector=spec.nodeName=N filters that range. A pass reads under the informer's lock;
 * the informer task takes the lock only to swap one entry, so a pass never waits on the
 * network. Until the first list arrived (or with no_task, or past
 * K32_CTRL_CACHE_MAX_OBJECTS) ctrl_list reads through the API as before.
 *
 * Memory: the cached objects (cJSON, ~3x their JSON size) plus one pointer pair each; one
 * watch event parsed at a time per informer.
 */
#include "ctrl/ctrl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"

static const struct {
	const char *prefix, *resource;
	uint32_t mask;
} ctrl_inf_defs[CTRL_INFORMER_COUNT] = {
    {"/api/v1", "pods",
     CTRL_SCHEDULER | CTRL_REPLICASET | CTRL_DAEMONSET | CTRL_JOB | CTRL_GC | CTRL_DEVICE |
	 CTRL_ENDPOINTS},
    {"/api/v1", "nodes", CTRL_SCHEDULER | CTRL_DAEMONSET | CTRL_NODE_LIFECYCLE | CTRL_ENDPOINTS},
    {"/apis/apps/v1", "replicasets", CTRL_REPLICASET | CTRL_DEPLOYMENT | CTRL_GC},
    {"/apis/apps/v1", "deployments", CTRL_DEPLOYMENT | CTRL_GC},
    {"/apis/apps/v1", "daemonsets", CTRL_DAEMONSET | CTRL_GC},
    {"/apis/batch/v1", "jobs", CTRL_JOB | CTRL_GC | CTRL_CRONJOB},
    {"/apis/batch/v1", "cronjobs", CTRL_CRONJOB | CTRL_GC},
    {"/api/v1", "namespaces", CTRL_NAMESPACE},
    {"/apis/kube32.io/v1alpha1", "devices", CTRL_DEVICE},
    {"/api/v1", "services", CTRL_ENDPOINTS},
};

/* ---- event filters --------------------------------------------------------------------- */

/* Drops heartbeat-only fields of a node so two versions can be compared. */
static void ctrl_node_strip(cJSON *n)
{
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(n, "metadata"),
						"resourceVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(n, "metadata"),
						"managedFields");
	cJSON *cond;
	cJSON_ArrayForEach(cond, (cJSON *)k32_json_find(n, "status.conditions"))
	{
		cJSON_DeleteItemFromObjectCaseSensitive(cond, "lastHeartbeatTime");
	}
}

bool ctrl_node_changed(const cJSON *obj, const cJSON *prev)
{
	if (!obj || !prev)
		return true;
	cJSON *a = cJSON_Duplicate(obj, true);
	cJSON *b = cJSON_Duplicate(prev, true);
	bool changed = true;
	if (a && b) {
		ctrl_node_strip(a);
		ctrl_node_strip(b);
		changed = !cJSON_Compare(a, b, true);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return changed;
}

static bool ctrl_ev_bound(const cJSON *p)
{
	const char *n = ctrl_jstr(p, "spec.nodeName");
	return n && n[0];
}

bool ctrl_pod_sched_relevant(const cJSON *obj, const cJSON *prev)
{
	if (!obj)
		return true; /* deleted: its room is free */
	bool pending = !ctrl_ev_bound(obj) && !ctrl_deleting(obj) && !ctrl_pod_terminal(obj);
	bool freed =
	    ctrl_pod_terminal(obj) && ctrl_ev_bound(obj) && (!prev || !ctrl_pod_terminal(prev));
	return pending || freed;
}

/* The controllers one change (obj NULL: deleted; prev NULL: new) marks dirty. */
static uint32_t ctrl_inf_event_mask(const struct ctrl_informer *inf, const cJSON *obj,
				    const cJSON *prev)
{
	uint32_t m = inf->mask;
	if (!strcmp(inf->resource, "nodes") && obj && prev && !ctrl_node_changed(obj, prev))
		return 0;
	if (!strcmp(inf->resource, "pods") && !ctrl_pod_sched_relevant(obj, prev))
		m &= ~(uint32_t)CTRL_SCHEDULER;
	/* the GC cares about deletions and objects being deleted; a pod owns nothing, so its
	 * deletion leaves nothing to collect: only its own deletion finalizers concern it */
	if ((m & CTRL_GC) && obj && !ctrl_deleting(obj))
		m &= ~(uint32_t)CTRL_GC;
	if ((m & CTRL_GC) && !strcmp(inf->resource, "pods") &&
	    (!obj || !k32_json_find(obj, "metadata.finalizers")))
		m &= ~(uint32_t)CTRL_GC;
	return m;
}

/* The controller ownerReference of o (kind and name), or false. */
static bool ctrl_inf_owner(const cJSON *o, const char **kind, const char **name)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, k32_json_find(o, "metadata.ownerReferences"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItem(r, "controller"))) {
			*kind = ctrl_jstr(r, "kind");
			*name = ctrl_jstr(r, "name");
			return *kind && *name;
		}
	}
	return false;
}

static size_t ctrl_inf_lower(const struct ctrl_informer *inf, const char *ns, const char *name);
static size_t ctrl_inf_upper_ns(const struct ctrl_informer *inf, const char *ns);

/* Queues, for an orphan pod o, the ReplicaSets of its namespace whose selector matches its
 * labels (those that may adopt it, as client-go's GetPodReplicaSets): the namespace's
 * ReplicaSets, not every one; every ReplicaSet when their cache cannot answer. */
static void ctrl_inf_enqueue_adopters(struct ctrl *c, const cJSON *o)
{
	struct ctrl_informer *rs = NULL;
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++)
		if (!strcmp(c->inf[i].resource, "replicasets") && c->inf[i].task)
			rs = &c->inf[i];
	const char *ns = ctrl_jstr(o, "metadata.namespace");
	const cJSON *labels = k32_json_find(o, "metadata.labels");
	uint32_t keys[16];
	size_t n = 0;
	bool full = !rs || !ns;
	if (!full) {
		k32_mutex_lock(&rs->lock);
		full = !rs->synced;
		size_t hi = full ? 0 : ctrl_inf_upper_ns(rs, ns);
		for (size_t i = full ? 0 : ctrl_inf_lower(rs, ns, NULL); i < hi && !full; i++) {
			const cJSON *r = rs->objs[i];
			if (!ctrl_selector_matches(k32_json_find(r, "spec.selector"), labels))
				continue;
			if (n == sizeof(keys) / sizeof(keys[0]))
				full = true;
			else
				keys[n++] = ctrl_key_hash(ns, ctrl_jstr(r, "metadata.name"));
		}
		k32_mutex_unlock(&rs->lock);
	}
	if (full) {
		ctrl_enqueue(c, CTRL_REPLICASET, NULL, NULL);
		return;
	}
	k32_mutex_lock(&c->lock);
	for (size_t i = 0; i < n; i++)
		ctrl_enqueue_key_locked(c, CTRL_REPLICASET, keys[i]);
	k32_mutex_unlock(&c->lock);
}

/* Queues what one changed object concerns for the ReplicaSet and Deployment passes, and
 * returns the mask without the controllers it does not concern at all (a pod owned by a
 * DaemonSet wakes no ReplicaSet pass). o: the object now, or as it was when deleted. */
static uint32_t ctrl_inf_enqueue(struct ctrl_informer *inf, const cJSON *o, uint32_t m)
{
	struct ctrl *c = inf->c;
	const char *ns = ctrl_jstr(o, "metadata.namespace"), *kind = NULL, *name = NULL;
	bool owned = ctrl_inf_owner(o, &kind, &name);
	if (!strcmp(inf->resource, "pods")) {
		if (!owned)
			ctrl_inf_enqueue_adopters(c, o); /* an orphan: adoptable */
		else if (!strcmp(kind, "ReplicaSet"))
			ctrl_enqueue(c, CTRL_REPLICASET, ns, name);
		else
			m &= ~(uint32_t)CTRL_REPLICASET;
		/* a DaemonSet or Job adopts no orphan: only its own pods concern it */
		if (owned && !strcmp(kind, "DaemonSet"))
			ctrl_enqueue(c, CTRL_DAEMONSET, ns, name);
		else
			m &= ~(uint32_t)CTRL_DAEMONSET;
		if (owned && !strcmp(kind, "Job"))
			ctrl_enqueue(c, CTRL_JOB, ns, name);
		else
			m &= ~(uint32_t)CTRL_JOB;
		if (!ctrl_label(k32_json_find(o, "metadata.labels"), "kube32.io/device"))
			m &= ~(uint32_t)CTRL_DEVICE;
	} else if (!strcmp(inf->resource, "replicasets")) {
		ctrl_enqueue(c, CTRL_REPLICASET, ns, ctrl_jstr(o, "metadata.name"));
		if (!owned)
			ctrl_enqueue(c, CTRL_DEPLOYMENT, NULL, NULL);
		else if (!strcmp(kind, "Deployment"))
			ctrl_enqueue(c, CTRL_DEPLOYMENT, ns, name);
		else
			m &= ~(uint32_t)CTRL_DEPLOYMENT;
	} else if (!strcmp(inf->resource, "deployments")) {
		ctrl_enqueue(c, CTRL_DEPLOYMENT, ns, ctrl_jstr(o, "metadata.name"));
	} else if (!strcmp(inf->resource, "daemonsets")) {
		ctrl_enqueue(c, CTRL_DAEMONSET, ns, ctrl_jstr(o, "metadata.name"));
	} else if (!strcmp(inf->resource, "jobs")) {
		ctrl_enqueue(c, CTRL_JOB, ns, ctrl_jstr(o, "metadata.name"));
	} else if (!strcmp(inf->resource, "nodes")) {
		ctrl_enqueue(c, m & CTRL_DAEMONSET, NULL, NULL); /* every DaemonSet */
	}
	return m;
}

/* ---- the sorted cache ------------------------------------------------------------------ */

static const char *ctrl_inf_ns(const cJSON *o)
{
	const char *ns = ctrl_jstr(o, "metadata.namespace");
	return ns ? ns : "";
}

static const char *ctrl_inf_name(const cJSON *o)
{
	const char *n = ctrl_jstr(o, "metadata.name");
	return n ? n : "";
}

static int ctrl_inf_cmp(const char *ns, const char *name, const cJSON *o)
{
	int r = strcmp(ns, ctrl_inf_ns(o));
	return r ? r : strcmp(name, ctrl_inf_name(o));
}

/* First index whose (ns, name) >= (ns, name); name NULL: first of namespace ns. */
static size_t ctrl_inf_lower(const struct ctrl_informer *inf, const char *ns, const char *name)
{
	size_t lo = 0, hi = inf->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const cJSON *o = inf->objs[mid];
		int r = name ? ctrl_inf_cmp(ns, name, o) : strcmp(ns, ctrl_inf_ns(o));
		if (r > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index past namespace ns. */
static size_t ctrl_inf_upper_ns(const struct ctrl_informer *inf, const char *ns)
{
	size_t lo = 0, hi = inf->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ns, ctrl_inf_ns(inf->objs[mid])) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the pods informer's scheduler view ---- */

static bool ctrl_pod_pending(const cJSON *p)
{
	const char *n = ctrl_jstr(p, "spec.nodeName");
	return !(n && n[0]) && !ctrl_pod_terminal(p);
}

/* Adds (sign 1) or takes back (-1) what pod p uses on its node. */
static void ctrl_use_apply(struct ctrl_informer *inf, const cJSON *p, int sign)
{
	const char *node = ctrl_jstr(p, "spec.nodeName");
	if (!node || !node[0] || ctrl_pod_terminal(p))
		return;
	struct ctrl_node_use *slot = NULL;
	if (sign > 0) {
		void *t = inf->use;
		slot = ctrl_name_slot(&t, &inf->use_n, &inf->use_cap, sizeof(*slot),
				      inf->c->cfg.max_nodes, node, NULL);
		inf->use = t;
	} else {
		slot = ctrl_name_find(inf->use, inf->use_n, sizeof(*slot), node, NULL);
	}
	if (!slot) {
		if (sign > 0)
			inf->use_full = true; /* more nodes than the table: the scheduler adds up */
		return;
	}
	uint64_t m = ctrl_pod_memory(p);
	if (sign > 0) {
		slot->mem += m;
		slot->pods++;
	} else {
		slot->mem = slot->mem > m ? slot->mem - m : 0;
		slot->pods = slot->pods ? slot->pods - 1 : 0;
		if (!slot->pods) { /* a node with no pod left leaves the table */
			size_t i = (size_t)(slot - inf->use);
			memmove(&inf->use[i], &inf->use[i + 1],
				(inf->use_n - i - 1) * sizeof(inf->use[0]));
			inf->use_n--;
		}
	}
}

static void ctrl_pend_add(struct ctrl_informer *inf, cJSON *p)
{
	if (!inf->pend || !ctrl_pod_pending(p))
		return;
	inf->pend[inf->pend_n++] = p; /* room: pend has cap entries, pend_n <= n */
}

static void ctrl_pend_del(struct ctrl_informer *inf, const cJSON *p)
{
	for (size_t i = 0; inf->pend && i < inf->pend_n; i++)
		if (inf->pend[i] == p) {
			inf->pend[i] = inf->pend[--inf->pend_n];
			return;
		}
}

static bool ctrl_inf_is_pods(const struct ctrl_informer *inf)
{
	return !strcmp(inf->resource, "pods");
}

/* Pod p enters (sign 1) or leaves (-1) the cache. */
static void ctrl_sched_view(struct ctrl_informer *inf, cJSON *p, int sign)
{
	if (!ctrl_inf_is_pods(inf))
		return;
	ctrl_use_apply(inf, p, sign);
	if (sign > 0)
		ctrl_pend_add(inf, p);
	else
		ctrl_pend_del(inf, p);
}

static void ctrl_inf_clear(struct ctrl_informer *inf)
{
	for (size_t i = 0; i < inf->n; i++)
		cJSON_Delete(inf->objs[i]);
	ctrl_free(inf->objs, inf->cap * sizeof(cJSON *));
	for (unsigned k = 0; k < CTRL_IDX_COUNT; k++) {
		ctrl_free(inf->idx[k].e, inf->cap * sizeof(struct ctrl_index_ent));
		inf->idx[k].e = NULL;
		inf->idx[k].n = 0;
	}
	ctrl_free(inf->pend, inf->cap * sizeof(cJSON *));
	ctrl_free(inf->use, inf->use_cap * sizeof(struct ctrl_node_use));
	inf->objs = NULL;
	inf->pend = NULL;
	inf->use = NULL;
	inf->n = inf->cap = inf->pend_n = inf->use_n = inf->use_cap = 0;
	inf->use_full = false;
}

/* ---- the indexes ---- */

static uint32_t ctrl_str_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h | 1u; /* 0 is "no controller" in the owner index */
}

/* The key of o in index k as a string (NULL: o is not in that index; "" for the owner
 * index's orphans). The key index is hashed from namespace and name instead. */
static const char *ctrl_idx_key(const struct ctrl_informer *inf, unsigned k, const cJSON *o)
{
	switch (k) {
	case CTRL_IDX_OWNER: {
		const char *uid = ctrl_controller_uid(o);
		return uid ? uid : "";
	}
	case CTRL_IDX_NODE: {
		const char *n = ctrl_inf_is_pods(inf) ? ctrl_jstr(o, "spec.nodeName") : NULL;
		return n && n[0] ? n : NULL;
	}
	case CTRL_IDX_LABEL:
		return ctrl_inf_is_pods(inf)
			   ? ctrl_label(k32_json_find(o, "metadata.labels"), "kube32.io/device")
			   : NULL;
	default:
		return NULL;
	}
}

/* The hash o is filed under in index k; false when it is not in that index. */
static bool ctrl_idx_hash(const struct ctrl_informer *inf, unsigned k, const cJSON *o, uint32_t *h)
{
	if (k == CTRL_IDX_KEY) {
		*h = ctrl_key_hash(ctrl_inf_ns(o), ctrl_inf_name(o));
		return true;
	}
	const char *key = ctrl_idx_key(inf, k, o);
	if (!key)
		return false;
	*h = key[0] ? ctrl_str_hash(key) : 0;
	return true;
}

/* First entry of index x at or after (h, obj). */
static size_t ctrl_idx_lower(const struct ctrl_index *x, uint32_t h, const cJSON *obj)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ctrl_index_ent *e = &x->e[mid];
		if (e->h < h || (e->h == h && (uintptr_t)e->obj < (uintptr_t)obj))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Files obj in every index it belongs to (room for one more entry each is there). */
static void ctrl_idx_add(struct ctrl_informer *inf, cJSON *obj)
{
	for (unsigned k = 0; k < CTRL_IDX_COUNT; k++) {
		struct ctrl_index *x = &inf->idx[k];
		uint32_t h;
		if (!x->e || !ctrl_idx_hash(inf, k, obj, &h))
			continue;
		size_t i = ctrl_idx_lower(x, h, obj);
		memmove(&x->e[i + 1], &x->e[i], (x->n - i) * sizeof(x->e[0]));
		x->e[i].h = h;
		x->e[i].obj = obj;
		x->n++;
	}
}

/* Takes obj out of every index (obj unchanged since ctrl_idx_add). */
static void ctrl_idx_del(struct ctrl_informer *inf, const cJSON *obj)
{
	for (unsigned k = 0; k < CTRL_IDX_COUNT; k++) {
		struct ctrl_index *x = &inf->idx[k];
		uint32_t h;
		if (!x->e || !ctrl_idx_hash(inf, k, obj, &h))
			continue;
		size_t i = ctrl_idx_lower(x, h, obj);
		if (i < x->n && x->e[i].obj == obj) {
			memmove(&x->e[i], &x->e[i + 1], (x->n - i - 1) * sizeof(x->e[0]));
			x->n--;
		}
	}
}

/* Calls fn per object of the run of hash h in index k that is in namespace ns (all when
 * "") and whose key is key (NULL: any, for the key index); false when fn stopped. */
static bool ctrl_idx_each(struct ctrl *c, struct ctrl_informer *inf, unsigned k, uint32_t h,
			  const char *ns, const char *key, ctrl_item_fn fn, void *ctx)
{
	const struct ctrl_index *x = &inf->idx[k];
	for (size_t i = ctrl_idx_lower(x, h, NULL); x->e && i < x->n && x->e[i].h == h; i++) {
		cJSON *o = x->e[i].obj;
		if (ns[0] && strcmp(ctrl_inf_ns(o), ns))
			continue;
		const char *ok = key ? ctrl_idx_key(inf, k, o) : NULL;
		if (key && (!ok || strcmp(ok, key)))
			continue; /* a hash collision */
		if (!fn(c, o, ctx))
			return false;
	}
	return true;
}

/* Room for one more entry (lock held); false past the limit or out of memory. */
static bool ctrl_inf_grow(struct ctrl_informer *inf)
{
	if (inf->n < inf->cap)
		return true;
	if (inf->cap >= K32_CTRL_CACHE_MAX_OBJECTS)
		return false;
	size_t cap = inf->cap ? inf->cap * 2 : 64;
	if (cap > K32_CTRL_CACHE_MAX_OBJECTS)
		cap = K32_CTRL_CACHE_MAX_OBJECTS;
	bool pods = ctrl_inf_is_pods(inf);
	cJSON **a = ctrl_zalloc(cap * sizeof(cJSON *));
	cJSON **pd = pods ? ctrl_zalloc(cap * sizeof(cJSON *)) : NULL;
	struct ctrl_index_ent *ix[CTRL_IDX_COUNT] = {NULL};
	bool ok = a && (!pods || pd);
	for (unsigned k = 0; k < CTRL_IDX_COUNT && ok; k++) {
		if (!pods && (k == CTRL_IDX_NODE || k == CTRL_IDX_LABEL))
			continue;
		ix[k] = ctrl_zalloc(cap * sizeof(struct ctrl_index_ent));
		ok = ix[k] != NULL;
	}
	if (!ok) {
		ctrl_free(a, cap * sizeof(cJSON *));
		ctrl_free(pd, cap * sizeof(cJSON *));
		for (unsigned k = 0; k < CTRL_IDX_COUNT; k++)
			ctrl_free(ix[k], cap * sizeof(struct ctrl_index_ent));
		return false;
	}
	if (inf->n)
		memcpy(a, inf->objs, inf->n * sizeof(cJSON *));
	if (pd && inf->pend_n)
		memcpy(pd, inf->pend, inf->pend_n * sizeof(cJSON *));
	for (unsigned k = 0; k < CTRL_IDX_COUNT; k++) {
		struct ctrl_index *x = &inf->idx[k];
		if (x->n)
			memcpy(ix[k], x->e, x->n * sizeof(struct ctrl_index_ent));
		ctrl_free(x->e, inf->cap * sizeof(struct ctrl_index_ent));
		x->e = ix[k];
	}
	ctrl_free(inf->objs, inf->cap * sizeof(cJSON *));
	ctrl_free(inf->pend, inf->cap * sizeof(cJSON *));
	inf->objs = a;
	inf->pend = pd;
	inf->cap = cap;
	return true;
}

/* Puts obj (taken) in place of its namesake, or inserts it; *prev gets the old one (the
 * caller deletes it). False when there is no room (obj is deleted). Lock held. */
static bool ctrl_inf_put(struct ctrl_informer *inf, cJSON *obj, cJSON **prev)
{
	const char *ns = ctrl_inf_ns(obj), *name = ctrl_inf_name(obj);
	size_t i = ctrl_inf_lower(inf, ns, name);
	*prev = NULL;
	if (i < inf->n && !ctrl_inf_cmp(ns, name, inf->objs[i])) {
		*prev = inf->objs[i];
		inf->objs[i] = obj;
		ctrl_idx_del(inf, *prev);
		ctrl_idx_add(inf, obj);
		ctrl_sched_view(inf, *prev, -1);
		ctrl_sched_view(inf, obj, 1);
		return true;
	}
	if (!ctrl_inf_grow(inf)) {
		cJSON_Delete(obj);
		return false;
	}
	memmove(&inf->objs[i + 1], &inf->objs[i], (inf->n - i) * sizeof(cJSON *));
	inf->objs[i] = obj;
	inf->n++;
	ctrl_idx_add(inf, obj);
	ctrl_sched_view(inf, obj, 1);
	return true;
}

/* Removes the namesake of obj; returns it (the caller deletes it) or NULL. Lock held. */
static cJSON *ctrl_inf_remove(struct ctrl_informer *inf, const cJSON *obj)
{
	const char *ns = ctrl_inf_ns(obj), *name = ctrl_inf_name(obj);
	size_t i = ctrl_inf_lower(inf, ns, name);
	if (i >= inf->n || ctrl_inf_cmp(ns, name, inf->objs[i]))
		return NULL;
	cJSON *old = inf->objs[i];
	memmove(&inf->objs[i], &inf->objs[i + 1], (inf->n - i - 1) * sizeof(cJSON *));
	inf->n--;
	ctrl_idx_del(inf, old);
	ctrl_sched_view(inf, old, -1);
	return old;
}

/* ---- the informer task ----------------------------------------------------------------- */

static bool ctrl_inf_stopping(struct ctrl *c)
{
	return atomic_load(&c->inf_stop);
}

static void ctrl_inf_mark(struct ctrl *c, uint32_t mask)
{
	if (!mask)
		return;
	k32_mutex_lock(&c->lock);
	c->dirty |= mask;
	k32_plat()->cond_signal(&c->cond);
	k32_mutex_unlock(&c->lock);
}

/* After a relist: every controller of the kind reconciles everything. */
static void ctrl_inf_mark_full(struct ctrl *c, uint32_t mask)
{
	ctrl_enqueue(c, mask & CTRL_REPLICASET, NULL, NULL);
	ctrl_enqueue(c, mask & CTRL_DEPLOYMENT, NULL, NULL);
	ctrl_enqueue(c, mask & CTRL_DAEMONSET, NULL, NULL);
	ctrl_enqueue(c, mask & CTRL_JOB, NULL, NULL);
	ctrl_inf_mark(c, mask);
}

/* Notes that the cache now holds revision rv (a decimal string; lock held). */
static void ctrl_inf_applied(struct ctrl_informer *inf, const char *rv)
{
	uint64_t r = rv ? strtoull(rv, NULL, 10) : 0;
	if (r > inf->applied_rv) {
		inf->applied_rv = r;
		k32_plat()->cond_broadcast(&inf->applied);
	}
}

/* Lists the kind into a fresh cache and swaps it in. */
/* What one relist builds and the page requests it makes: on the heap, not on the informer
 * task's stack (a board's is 16 KiB, and the in-process API path runs below it). */
struct ctrl_relist_scratch {
	struct ctrl_informer fresh;
	char token[CTRL_CONTINUE_LEN * 3 + 1];
	char target[CTRL_CONTINUE_LEN * 3 + 1 + 256];
};

/* not inlined: its frame then stays off the watch path of ctrl_inf_main */
static k32_status_t __attribute__((noinline))
ctrl_inf_relist(struct ctrl_informer *inf, struct k32_err *err)
{
	struct ctrl *c = inf->c;
	struct ctrl_relist_scratch *sc = ctrl_zalloc(sizeof(*sc));
	if (!sc)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "ctrl",
				   "listing %s for the cache: out of memory (%zu bytes)",
				   inf->resource, sizeof(*sc));
	struct ctrl_informer *fresh = &sc->fresh;
	fresh->c = c;
	fresh->resource = inf->resource;
	char *token = sc->token, *target = sc->target;
	char rv[sizeof(inf->rv)] = "";
	bool overflow = false;
	k32_status_t st = K32_OK;
	for (;;) {
		snprintf(target, sizeof(sc->target), "%s/%s?limit=%u%s%s", inf->prefix,
			 inf->resource, (unsigned)K32_CTRL_LIST_PAGE, token[0] ? "&continue=" : "",
			 token);
		cJSON *list = NULL;
		st = ctrl_get(c, target, &list, err);
		if (st)
			break;
		if (!token[0]) {
			const char *v = ctrl_jstr(list, "metadata.resourceVersion");
			snprintf(rv, sizeof(rv), "%s", v ? v : "");
		}
		cJSON *items = cJSON_GetObjectItem(list, "items");
		while (items && items->child) {
			cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
			cJSON *prev = NULL;
			if (!overflow && !ctrl_inf_put(fresh, it, &prev))
				overflow = true;
			else if (overflow)
				cJSON_Delete(it);
			cJSON_Delete(prev);
		}
		const char *cont = ctrl_jstr(list, "metadata.continue");
		bool more = cont && cont[0];
		if (more)
			ctrl_url_encode(cont, token, sizeof(sc->token));
		cJSON_Delete(list);
		if (!more || ctrl_inf_stopping(c))
			break;
	}
	if (st) {
		ctrl_inf_clear(fresh);
		ctrl_free(sc, sizeof(*sc));
		return st;
	}
	if (overflow) {
		k32_log(K32_LOG_WARN, "ctrl",
			"cache of %s: more than K32_CTRL_CACHE_MAX_OBJECTS (%u) objects; the "
			"controllers list %s through the API instead (raise the limit if the "
			"memory is there)",
			inf->resource, (unsigned)K32_CTRL_CACHE_MAX_OBJECTS, inf->resource);
		ctrl_inf_clear(fresh);
	}
	k32_mutex_lock(&inf->lock);
	ctrl_inf_clear(inf);
	inf->objs = fresh->objs;
	memcpy(inf->idx, fresh->idx, sizeof(inf->idx));
	inf->pend = fresh->pend;
	inf->pend_n = fresh->pend_n;
	inf->use = fresh->use;
	inf->use_n = fresh->use_n;
	inf->use_cap = fresh->use_cap;
	inf->use_full = fresh->use_full;
	inf->n = fresh->n;
	inf->cap = fresh->cap;
	inf->synced = !overflow;
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	ctrl_inf_applied(inf, rv);
	k32_mutex_unlock(&inf->lock);
	ctrl_inf_mark_full(c, inf->mask);
	ctrl_free(sc, sizeof(*sc));
	return K32_OK;
}

/* One watch line: applies it to the cache. */
static k32_status_t ctrl_inf_line(void *arg, const char *line, size_t len)
{
	struct ctrl_informer *inf = arg;
	struct ctrl *c = inf->c;
	if (ctrl_inf_stopping(c))
		return K32_ERR_CANCELED;
	if (!line)
		return K32_OK;
	cJSON *ev = cJSON_ParseWithLength(line, len);
	if (!ev)
		return K32_ERR_CORRUPT; /* relist: we may have missed what it said */
	const char *type = ctrl_jstr(ev, "type");
	cJSON *obj = cJSON_DetachItemFromObjectCaseSensitive(ev, "object");
	k32_status_t st = K32_OK;
	if (!type || !obj) {
		st = K32_ERR_CORRUPT;
	} else if (!strcmp(type, "ERROR")) {
		st = ctrl_jint(obj, "code", 0) == 410 ? K32_ERR_COMPACTED : K32_ERR_IO;
	} else {
		const char *v = ctrl_jstr(obj, "metadata.resourceVersion");
		k32_mutex_lock(&inf->lock);
		if (v)
			snprintf(inf->rv, sizeof(inf->rv), "%s", v);
		k32_mutex_unlock(&inf->lock);
		if (strcmp(type, "BOOKMARK")) {
			bool deleted = !strcmp(type, "DELETED");
			cJSON *prev = NULL;
			bool room = true;
			k32_mutex_lock(&inf->lock);
			if (deleted)
				prev = ctrl_inf_remove(inf, obj);
			else if (inf->synced)
				room = ctrl_inf_put(inf, obj, &prev);
			if (!room)
				inf->synced = false; /* reads go to the API; relist below */
			ctrl_inf_applied(inf, v);
			k32_mutex_unlock(&inf->lock);
			/* the filters look at obj after it went into the cache: nothing else
			 * changes a cached object, and only this task replaces or frees it */
			uint32_t m =
			    room ? ctrl_inf_event_mask(inf, deleted ? NULL : obj, prev) : inf->mask;
			if (room && (m & (CTRL_GC | CTRL_NAMESPACE)))
				ctrl_gc_note(c, inf->resource, obj, deleted);
			if (!room) {
				ctrl_inf_mark_full(c, m);
			} else if (m) {
				/* what it concerns before and after (a pod may change owner) */
				uint32_t mq = ctrl_inf_enqueue(inf, obj, m);
				if (prev)
					mq |= ctrl_inf_enqueue(inf, prev, m);
				m = mq;
			}
			if (deleted || !inf->synced)
				cJSON_Delete(obj);
			obj = NULL;
			cJSON_Delete(prev);
			ctrl_inf_mark(c, m);
			if (!room)
				st = K32_ERR_NO_RESOURCES;
		}
	}
	cJSON_Delete(obj);
	cJSON_Delete(ev);
	return st;
}

static void ctrl_inf_pause(struct ctrl *c, uint64_t s)
{
	for (uint64_t t = 0; t < s * 20 && !ctrl_inf_stopping(c); t++)
		k32_plat()->sleep_us(50000);
}

static void ctrl_inf_main(void *arg)
{
	struct ctrl_informer *inf = arg;
	struct ctrl *c = inf->c;
	bool relist = true;
	while (!ctrl_inf_stopping(c)) {
		struct k32_err err;
		k32_err_clear(&err);
		if (relist) {
			if (ctrl_inf_relist(inf, &err)) {
				k32_log(K32_LOG_WARN, "ctrl",
					"listing %s for the cache: %s; again in %us", inf->resource,
					err.msg, (unsigned)K32_CTRL_INFORMER_RETRY_S);
				ctrl_inf_pause(c, K32_CTRL_INFORMER_RETRY_S);
				continue;
			}
			relist = false;
		}
		/* the target lives in the informer, not on this task's stack (16 KiB on a board,
		 * and the watch path below it is the task's deepest) */
		k32_mutex_lock(&inf->lock);
		snprintf(inf->watch_target, sizeof(inf->watch_target), "%s/%s?resourceVersion=%s",
			 inf->prefix, inf->resource, inf->rv[0] ? inf->rv : "0");
		k32_mutex_unlock(&inf->lock);
		k32_status_t st = kclient_watch(c->kc, inf->watch_target, ctrl_inf_line, inf, &err);
		if (ctrl_inf_stopping(c))
			break;
		if (st == K32_OK)
			continue; /* the server ended the stream: resume from the last revision */
		k32_mutex_lock(&c->lock);
		c->stats.watch_restarts++;
		k32_mutex_unlock(&c->lock);
		k32_log(st == K32_ERR_COMPACTED ? K32_LOG_INFO : K32_LOG_WARN, "ctrl",
			"watch on %s restarts with a relist: %s", inf->resource,
			err.msg[0] ? err.msg : k32_status_name(st));
		relist = true;
		if (st != K32_ERR_COMPACTED)
			ctrl_inf_pause(c, K32_CTRL_INFORMER_RETRY_S);
	}
}

/* ---- public to the package --------------------------------------------------------------- */

k32_status_t ctrl_informers_start(struct ctrl *c, struct k32_err *err)
{
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &c->inf[i];
		inf->c = c;
		inf->prefix = ctrl_inf_defs[i].prefix;
		inf->resource = ctrl_inf_defs[i].resource;
		inf->mask = ctrl_inf_defs[i].mask;
		k32_plat()->mutex_init(&inf->lock);
		k32_plat()->cond_init(&inf->applied);
		inf->lock_ready = true;
	}
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &c->inf[i];
		if (!(inf->mask & c->cfg.enable))
			continue;
		char name[24];
		snprintf(name, sizeof(name), "k32-inf-%.12s", inf->resource);
		k32_status_t st = k32_plat()->task_create(&inf->task, name, ctrl_inf_main, inf,
							  K32_CTRL_INFORMER_STACK_BYTES, -1, err);
		if (st)
			return st;
	}
	return K32_OK;
}

void ctrl_informers_stop(struct ctrl *c)
{
	atomic_store(&c->inf_stop, true);
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &c->inf[i];
		if (inf->task)
			k32_plat()->task_join(inf->task);
		inf->task = NULL;
		if (inf->lock_ready) {
			ctrl_inf_clear(inf);
			k32_plat()->cond_fini(&inf->applied);
			k32_plat()->mutex_fini(&inf->lock);
			inf->lock_ready = false;
		}
	}
}

/* The informer serving path ("/api/v1/pods", "/api/v1/namespaces/ns/pods", optionally
 * "?fieldSelector=spec.nodeName%3DN"), with the namespace (cap CTRL_NAME_LEN) and node
 * filter it asks for; NULL when no cache can answer it. */
static struct ctrl_informer *ctrl_inf_route(struct ctrl *c, const char *path, char *ns, char *node)
{
	ns[0] = node[0] = 0;
	const char *q = strchr(path, '?');
	size_t plen = q ? (size_t)(q - path) : strlen(path);
	if (q) {
		static const char fs[] = "?fieldSelector=spec.nodeName%3D";
		size_t fl = sizeof(fs) - 1;
		if (strncmp(q, fs, fl) || strchr(q + fl, '&') || strchr(q + fl, '%') ||
		    strlen(q + fl) >= CTRL_NAME_LEN)
			return NULL;
		snprintf(node, CTRL_NAME_LEN, "%s", q + fl);
	}
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &c->inf[i];
		if (!inf->task)
			continue; /* not started (no_task, or no enabled controller reads it) */
		size_t pl = strlen(inf->prefix), rl = strlen(inf->resource);
		if (plen <= pl || strncmp(path, inf->prefix, pl) || path[pl] != '/')
			continue;
		const char *rest = path + pl + 1;
		size_t rlen = plen - pl - 1;
		if (rlen >= 11 && !strncmp(rest, "namespaces/", 11)) {
			const char *nsb = rest + 11;
			const char *slash = memchr(nsb, '/', rlen - 11);
			if (!slash || (size_t)(slash - nsb) >= CTRL_NAME_LEN)
				continue;
			size_t tail = rlen - (size_t)(slash + 1 - rest);
			if (tail != rl || strncmp(slash + 1, inf->resource, rl))
				continue;
			memcpy(ns, nsb, (size_t)(slash - nsb));
			ns[slash - nsb] = 0;
		} else if (rlen != rl || strncmp(rest, inf->resource, rl)) {
			continue;
		}
		if (node[0] && strcmp(inf->resource, "pods"))
			return NULL;
		return inf;
	}
	return NULL;
}

int ctrl_cache_list(struct ctrl *c, const char *path, ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN], node[CTRL_NAME_LEN];
	if (c->cfg.no_cache)
		return -1;
	struct ctrl_informer *inf = ctrl_inf_route(c, path, ns, node);
	if (!inf)
		return -1;
	k32_mutex_lock(&inf->lock);
	if (!inf->synced) {
		k32_mutex_unlock(&inf->lock);
		return -1;
	}
	if (node[0]) {
		/* a node's pods: the node index (its run is in pointer order, not by name) */
		if (inf->idx[CTRL_IDX_NODE].e)
			ctrl_idx_each(c, inf, CTRL_IDX_NODE, ctrl_str_hash(node), ns, node, fn,
				      ctx);
		k32_mutex_unlock(&inf->lock);
		return 0;
	}
	size_t lo = ns[0] ? ctrl_inf_lower(inf, ns, NULL) : 0;
	size_t hi = ns[0] ? ctrl_inf_upper_ns(inf, ns) : inf->n;
	for (size_t i = lo; i < hi && i < inf->n; i++)
		if (!fn(c, inf->objs[i], ctx))
			break;
	k32_mutex_unlock(&inf->lock);
	return 0;
}

int ctrl_cache_uid(struct ctrl *c, const char *path, char *uid, size_t cap)
{
	char ns[CTRL_NAME_LEN], node[CTRL_NAME_LEN], coll[700];
	const char *slash = strrchr(path, '/');
	if (c->cfg.no_cache || !slash || strchr(path, '?') ||
	    (size_t)(slash - path) >= sizeof(coll))
		return -1;
	memcpy(coll, path, (size_t)(slash - path));
	coll[slash - path] = 0;
	struct ctrl_informer *inf = ctrl_inf_route(c, coll, ns, node);
	if (!inf)
		return -1;
	int r = -1;
	k32_mutex_lock(&inf->lock);
	if (inf->synced) {
		size_t i = ctrl_inf_lower(inf, ns, slash + 1);
		r = i < inf->n && !ctrl_inf_cmp(ns, slash + 1, inf->objs[i]);
		if (r) {
			const char *u = ctrl_jstr(inf->objs[i], "metadata.uid");
			snprintf(uid, cap, "%s", u ? u : "");
		}
	}
	k32_mutex_unlock(&inf->lock);
	return r;
}

/* The synced informer of path (a collection, no query), locked; NULL: ask the API. */
static struct ctrl_informer *ctrl_inf_lock_path(struct ctrl *c, const char *path, char *ns)
{
	char node[CTRL_NAME_LEN];
	if (c->cfg.no_cache || strchr(path, '?'))
		return NULL;
	struct ctrl_informer *inf = ctrl_inf_route(c, path, ns, node);
	if (!inf)
		return NULL;
	k32_mutex_lock(&c->lock);
	uint64_t want = inf->want_rv;
	k32_mutex_unlock(&c->lock);
	k32_mutex_lock(&inf->lock);
	/* not older than this controller's own writes (ctrl_cache_note_write) */
	int64_t deadline = 0;
	while (inf->synced && inf->applied_rv < want && !ctrl_inf_stopping(c)) {
		if (!deadline)
			deadline = k32_deadline_after((int64_t)K32_CTRL_CACHE_WAIT_MS * 1000);
		if (k32_plat()->cond_wait(&inf->applied, &inf->lock, deadline) ==
			K32_ERR_TIMED_OUT &&
		    inf->applied_rv < want) {
			k32_mutex_unlock(&inf->lock);
			k32_mutex_lock(&c->lock);
			c->stats.cache_lags++; /* the API answers instead */
			k32_mutex_unlock(&c->lock);
			return NULL;
		}
	}
	if (!inf->synced) {
		k32_mutex_unlock(&inf->lock);
		return NULL;
	}
	return inf;
}

/* The informer of the kind target names (a collection, an object or its subresource). */
static struct ctrl_informer *ctrl_inf_of_target(struct ctrl *c, const char *target)
{
	for (unsigned i = 0; i < CTRL_INFORMER_COUNT; i++) {
		struct ctrl_informer *inf = &c->inf[i];
		size_t pl = inf->task ? strlen(inf->prefix) : 0;
		if (!pl || strncmp(target, inf->prefix, pl) || target[pl] != '/')
			continue;
		const char *rest = target + pl + 1;
		if (!strncmp(rest, "namespaces/", 11)) {
			const char *slash = strchr(rest + 11, '/');
			if (!slash)
				continue; /* a Namespace itself */
			rest = slash + 1;
		}
		size_t rl = strlen(inf->resource);
		if (!strncmp(rest, inf->resource, rl) &&
		    (rest[rl] == 0 || rest[rl] == '/' || rest[rl] == '?'))
			return inf;
	}
	return NULL;
}

void ctrl_cache_note_write(struct ctrl *c, const char *target, const cJSON *ans)
{
	const char *v = ctrl_jstr(ans, "metadata.resourceVersion");
	struct ctrl_informer *inf = v ? ctrl_inf_of_target(c, target) : NULL;
	if (!inf)
		return;
	uint64_t r = strtoull(v, NULL, 10);
	/* not inf->lock: the write may come from a callback that holds it */
	k32_mutex_lock(&c->lock);
	if (r > inf->want_rv)
		inf->want_rv = r;
	k32_mutex_unlock(&c->lock);
}

int ctrl_cache_index(struct ctrl *c, const char *path, enum ctrl_index_kind k, const char *key,
		     ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN];
	if (k == CTRL_IDX_KEY || k >= CTRL_IDX_COUNT)
		return -1;
	struct ctrl_informer *inf = ctrl_inf_lock_path(c, path, ns);
	if (!inf)
		return -1;
	int r = -1;
	if (inf->idx[k].e || !inf->n) {
		if (key) {
			ctrl_idx_each(c, inf, k, key[0] ? ctrl_str_hash(key) : 0, ns, key, fn, ctx);
		} else {
			const struct ctrl_index *x = &inf->idx[k];
			for (size_t i = 0; i < x->n; i++)
				if ((!ns[0] || !strcmp(ctrl_inf_ns(x->e[i].obj), ns)) &&
				    !fn(c, x->e[i].obj, ctx))
					break;
		}
		r = 0;
	}
	k32_mutex_unlock(&inf->lock);
	return r;
}

int ctrl_cache_list_owned(struct ctrl *c, const char *path, const char *owner_uid, bool orphans,
			  ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN];
	struct ctrl_informer *inf = ctrl_inf_lock_path(c, path, ns);
	if (!inf)
		return -1;
	if (ctrl_idx_each(c, inf, CTRL_IDX_OWNER, ctrl_str_hash(owner_uid), ns, owner_uid, fn,
			  ctx) &&
	    orphans)
		ctrl_idx_each(c, inf, CTRL_IDX_OWNER, 0, ns, "", fn, ctx);
	k32_mutex_unlock(&inf->lock);
	return 0;
}

int ctrl_cache_keys(struct ctrl *c, const char *path, const uint32_t *hashes, size_t count,
		    ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN];
	struct ctrl_informer *inf = ctrl_inf_lock_path(c, path, ns);
	if (!inf)
		return -1;
	for (size_t i = 0; i < count; i++)
		if (!ctrl_idx_each(c, inf, CTRL_IDX_KEY, hashes[i], ns, NULL, fn, ctx))
			break;
	k32_mutex_unlock(&inf->lock);
	return 0;
}

int ctrl_cache_keys_from(struct ctrl *c, const char *path, const uint32_t *sorted, size_t count,
			 uint32_t from, ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN];
	struct ctrl_informer *inf = ctrl_inf_lock_path(c, path, ns);
	if (!inf)
		return -1;
	if (!inf->idx[CTRL_IDX_KEY].e && inf->n) {
		k32_mutex_unlock(&inf->lock); /* no key index (out of memory): list */
		return -1;
	}
	bool go = true;
	for (size_t i = 0; go && i < count && sorted[i] < from; i++)
		go = ctrl_idx_each(c, inf, CTRL_IDX_KEY, sorted[i], ns, NULL, fn, ctx);
	const struct ctrl_index *x = &inf->idx[CTRL_IDX_KEY];
	for (size_t i = ctrl_idx_lower(x, from, NULL); go && x->e && i < x->n; i++) {
		cJSON *o = x->e[i].obj;
		if (!ns[0] || !strcmp(ctrl_inf_ns(o), ns))
			go = fn(c, o, ctx);
	}
	k32_mutex_unlock(&inf->lock);
	return 0;
}

int ctrl_cache_pending(struct ctrl *c)
{
	char ns[CTRL_NAME_LEN], node[CTRL_NAME_LEN];
	struct ctrl_informer *inf =
	    c->cfg.no_cache ? NULL : ctrl_inf_route(c, "/api/v1/pods", ns, node);
	if (!inf)
		return -1;
	k32_mutex_lock(&inf->lock);
	int n = inf->synced ? (int)inf->pend_n : -1;
	k32_mutex_unlock(&inf->lock);
	return n;
}

int ctrl_cache_sched(struct ctrl *c,
		     void (*usage)(void *ctx, const char *node, uint64_t mem, uint32_t pods),
		     ctrl_item_fn fn, void *ctx)
{
	char ns[CTRL_NAME_LEN], node[CTRL_NAME_LEN];
	if (c->cfg.no_cache)
		return -1;
	struct ctrl_informer *inf = ctrl_inf_route(c, "/api/v1/pods", ns, node);
	if (!inf)
		return -1;
	k32_mutex_lock(&inf->lock);
	if (!inf->synced || inf->use_full) {
		k32_mutex_unlock(&inf->lock);
		return -1;
	}
	for (size_t i = 0; i < inf->use_n; i++)
		if (inf->use[i].pods)
			usage(ctx, inf->use[i].name, inf->use[i].mem, inf->use[i].pods);
	for (size_t i = 0; i < inf->pend_n; i++)
		if (!fn(c, inf->pend[i], ctx))
			break;
	k32_mutex_unlock(&inf->lock);
	return 0;
}
