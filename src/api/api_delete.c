/*
 * api_delete.c - delete and deletecollection, and the pod subresources binding, eviction and
 * log.
 *
 * Deletion: an object with finalizers gets deletionTimestamp and stays until they are
 * removed (api_crud.c finishes the deletion when an update drops the last one); a pod bound
 * to a node is deleted gracefully (deletionTimestamp + deletionGracePeriodSeconds, then its
 * kubelet deletes it with grace 0); a namespace turns Terminating and the namespace janitor
 * (a task of its own, bottom of this file) deletes its contents K32_API_NS_PURGE_DELAY_MS
 * later, then the namespace (unless it has finalizers: a controller removes those).
 * Background deletion deletes dependents (ownerReferences.uid) right away by the same rules
 * (removed, or marked when they have finalizers or are bound pods), up to
 * K32_API_MAX_CASCADE levels (the recursion carries its depth); Orphan strips their
 * ownerReferences; Foreground marks the owner (deletionTimestamp, finalizer
 * foregroundDeletion), deletes the dependents, and removes the owner once none is left (or
 * leaves that to the garbage collector of src/ctrl when some remain).
 *
 * Context: the http loop (or a worker) or an api_do caller; the store serialises writes.
 */
#include "api/api_srv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"

/* ---- delete ---------------------------------------------------------------------------- */

/* The kind whose objects the owner kind owns (Deployment: ReplicaSets; ReplicaSet,
 * DaemonSet, Job: Pods), or NULL for kinds the API does not cascade. */
static const struct api_resource *api_dependents_of(const struct api_resource *owner)
{
	const struct api_strategy *ks = owner->strategy;
	if (!ks->dependents.plural)
		return NULL;
	return api_registry_find(ks->dependents.group, ks->dependents.version,
				 ks->dependents.plural);
}

static k32_status_t api_mark_deleting(struct api_server *api, const struct api_resource *res,
				      struct store_obj *old, cJSON *oldj, int64_t grace,
				      struct store_obj **out, struct api_fail *f);

/*
 * Whether deleting obj (of kind res) must go through deletionTimestamp rather than remove it
 * at once: it has finalizers (their controllers remove them), or it is a pod bound to a node
 * (its kubelet stops it, then deletes it with grace 0).
 */
static bool api_needs_marking(const struct api_resource *res, const cJSON *obj)
{
	if (cJSON_GetArraySize(k32_json_find(obj, "metadata.finalizers")) > 0)
		return true;
	return res->strategy->graceful_on_node && api_jstr(obj, "spec.nodeName");
}

/* The grace period a deletion without one gives obj: a pod's terminationGracePeriodSeconds
 * (30 when unset), -1 (none) for other kinds. */
static int64_t api_default_grace(const struct api_resource *res, const cJSON *obj)
{
	if (!res->strategy->graceful_on_node)
		return -1;
	const cJSON *g = k32_json_find(obj, "spec.terminationGracePeriodSeconds");
	return cJSON_IsNumber(g) && g->valuedouble >= 0 ? (int64_t)g->valuedouble : 30;
}

/*
 * Orphans (strips ownerReferences to uid) or deletes the dependents of owner uid. Deleted
 * dependents follow the same rules as a direct delete: those with finalizers or bound to a
 * node are marked (deletionTimestamp) and finished by their finalizers or kubelet.
 */
static void api_cascade(struct api_server *api, const struct api_resource *owner, const char *ns,
			const char *uid, const char *policy, int depth)
{
	const struct api_resource *dres = api_dependents_of(owner);
	if (!dres)
		return;
	struct api_filter *flt = api_zalloc(sizeof(*flt));
	/* the dependents' failures (dropped): on the heap, not 2.6 KB more per cascade level */
	struct api_fail *f = api_zalloc(sizeof(*f));
	if (!flt || !f) {
		api_free(flt, sizeof(*flt));
		api_free(f, sizeof(*f));
		return;
	}
	flt->owner_uid = uid;
	struct store_list_opts opts = {.filter = api_store_filter, .filter_ctx = flt};
	struct store_list list;
	struct store_key key;
	struct k32_err err;
	memset(&list, 0, sizeof(list));
	api_key(dres, ns, "", &key);
	if (store_list(api->store, &key, &opts, &list, &err) == K32_OK) {
		for (uint32_t i = 0; i < list.count; i++) {
			cJSON *j = api_parse_obj(list.items[i]);
			const char *name = api_jstr(j, "metadata.name");
			api_fail_clear(f);
			if (name && !strcmp(policy, "Orphan")) {
				cJSON *refs = cJSON_GetObjectItem(
				    cJSON_GetObjectItem(j, "metadata"), "ownerReferences");
				cJSON *r = refs ? refs->child : NULL;
				while (r) {
					cJSON *next = r->next;
					const char *u = api_jstr(r, "uid");
					if (u && !strcmp(u, uid))
						cJSON_Delete(cJSON_DetachItemViaPointer(refs, r));
					r = next;
				}
				struct store_obj *so = NULL;
				if (api_put_obj_marked(api, dres, j, false, list.items[i]->mod_rev,
						       true, &so, f) == K32_OK)
					store_obj_unref(api->store, so);
			} else if (name && api_jstr(j, "metadata.deletionTimestamp")) {
				/* already going: its finalizers or its kubelet finish it */
			} else if (name && api_needs_marking(dres, j)) {
				struct store_obj *so = NULL;
				if (api_mark_deleting(api, dres, list.items[i], j,
						      api_default_grace(dres, j), &so, f) == K32_OK)
					store_obj_unref(api->store, so);
			} else if (name) {
				struct store_obj *prev = NULL;
				api_delete_now(api, dres, ns, name, 0, policy, depth + 1, &prev, f);
				store_obj_unref(api->store, prev);
			}
			cJSON_Delete(j);
		}
	}
	store_list_fini(api->store, &list);
	api_free(flt, sizeof(*flt));
	api_free(f, sizeof(*f));
}

k32_status_t api_delete_now(struct api_server *api, const struct api_resource *res, const char *ns,
			    const char *name, uint64_t expect_rev, const char *policy, int depth,
			    struct store_obj **out_prev, struct api_fail *f)
{
	struct store_key key;
	struct k32_err err;
	k32_err_clear(&err);
	api_key(res, ns, name, &key);
	*out_prev = NULL;
	k32_status_t st = store_delete(api->store, &key, expect_rev, out_prev, NULL, &err);
	api_health_note_write(api, st, &err);
	if (st)
		return api_store_err(f, res, name, st, &err);
	api_rbac_note_write(api, res);
	if (depth < K32_API_MAX_CASCADE && *out_prev) {
		cJSON *j = api_parse_obj(*out_prev);
		const char *uid = api_jstr(j, "metadata.uid");
		if (uid)
			api_cascade(api, res, ns, uid, policy ? policy : "Background", depth);
		cJSON_Delete(j);
	}
	return K32_OK;
}

/* Deletes everything in namespace ns (bounded by the store's own limits). */
void api_purge_namespace(struct api_server *api, const char *ns)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t n = api_registry_list(all, API_REGISTRY_MAX);
	for (size_t i = 0; i < n; i++) {
		const struct api_resource *r = all[i];
		if (!r->namespaced || !(r->verbs & API_VERB_DELETE))
			continue;
		struct store_list list;
		struct store_key key;
		struct k32_err err;
		memset(&list, 0, sizeof(list));
		api_key(r, ns, "", &key);
		struct store_list_opts opts = {0};
		if (store_list(api->store, &key, &opts, &list, &err) == K32_OK) {
			for (uint32_t k = 0; k < list.count; k++) {
				const char *kstr = store_obj_key(list.items[k]);
				const char *nm = strrchr(kstr, '/');
				struct store_key dk;
				api_key(r, ns, nm ? nm + 1 : "", &dk);
				store_delete(api->store, &dk, 0, NULL, NULL, &err);
			}
			if (list.count)
				api_rbac_note_write(api, r);
		}
		store_list_fini(api->store, &list);
	}
}

struct api_delopts {
	char policy[32];
	int64_t grace; /* -1: default */
	char pre_uid[40];
	char pre_rv[24];
	bool dry;
};

static k32_status_t api_delopts_parse(const struct api_req *rq, struct api_delopts *o,
				      struct api_fail *f)
{
	char v[32];
	memset(o, 0, sizeof(*o));
	o->grace = -1;
	snprintf(o->policy, sizeof(o->policy), "Background");
	o->dry = api_dry_run(rq);
	if (api_q(rq, "propagationPolicy", v, sizeof(v)) && v[0])
		snprintf(o->policy, sizeof(o->policy), "%s", v);
	if (api_q(rq, "gracePeriodSeconds", v, sizeof(v)) && v[0])
		o->grace = strtoll(v, NULL, 10);
	if (rq->body_len) {
		cJSON *b = NULL;
		k32_status_t st = api_decode_body(rq, &b, f);
		if (st)
			return st;
		const char *p = api_jstr(b, "propagationPolicy");
		if (p)
			snprintf(o->policy, sizeof(o->policy), "%s", p);
		const cJSON *g = cJSON_GetObjectItem(b, "gracePeriodSeconds");
		if (cJSON_IsNumber(g))
			o->grace = (int64_t)g->valuedouble;
		const char *u = api_jstr(b, "preconditions.uid");
		const char *r = api_jstr(b, "preconditions.resourceVersion");
		if (u)
			snprintf(o->pre_uid, sizeof(o->pre_uid), "%s", u);
		if (r)
			snprintf(o->pre_rv, sizeof(o->pre_rv), "%s", r);
		const cJSON *dr = cJSON_GetObjectItem(b, "dryRun");
		if (cJSON_IsArray(dr) && cJSON_GetArraySize(dr))
			o->dry = true;
		cJSON_Delete(b);
	}
	if (strcmp(o->policy, "Background") && strcmp(o->policy, "Foreground") &&
	    strcmp(o->policy, "Orphan"))
		return api_fail_set(
		    f, 400, "BadRequest",
		    "propagationPolicy \"%s\" is not one of Background, Foreground, Orphan",
		    K32_CLIP(o->policy));
	return K32_OK;
}

/* Marks old as being deleted (deletionTimestamp, optional grace, Terminating phase). */
static k32_status_t api_mark_deleting(struct api_server *api, const struct api_resource *res,
				      struct store_obj *old, cJSON *oldj, int64_t grace,
				      struct store_obj **out, struct api_fail *f)
{
	cJSON *upd = cJSON_Duplicate(oldj, true);
	if (!upd)
		return api_fail_set(f, 500, "InternalError", "out of memory");
	cJSON *md = api_meta(upd);
	if (!api_jstr(upd, "metadata.deletionTimestamp")) {
		char ts[32];
		api_format_time(api_now_s() + (grace > 0 ? (uint64_t)grace : 0), ts, sizeof(ts));
		api_set_str(md, "deletionTimestamp", ts);
	}
	if (grace >= 0)
		api_set_num(md, "deletionGracePeriodSeconds", (double)grace);
	if (res->strategy->is_namespace) {
		cJSON *st = cJSON_GetObjectItem(upd, "status");
		if (!st)
			st = cJSON_AddObjectToObject(upd, "status");
		api_set_str(st, "phase", "Terminating");
	}
	k32_status_t st = api_put_obj_marked(api, res, upd, false, old->mod_rev, true, out, f);
	cJSON_Delete(upd);
	return st;
}

/* Does an object of kind dres in ns still name uid among its owners? */
static bool api_has_dependents(struct api_server *api, const struct api_resource *dres,
			       const char *ns, const char *uid)
{
	struct api_filter *flt = api_zalloc(sizeof(*flt));
	struct store_list list;
	struct store_key key;
	struct k32_err err;
	bool any = true; /* when in doubt (out of memory), keep the owner: the GC finishes */
	if (!flt)
		return any;
	flt->owner_uid = uid;
	struct store_list_opts opts = {.filter = api_store_filter, .filter_ctx = flt, .limit = 1};
	memset(&list, 0, sizeof(list));
	api_key(dres, ns, "", &key);
	if (store_list(api->store, &key, &opts, &list, &err) == K32_OK)
		any = list.count > 0;
	store_list_fini(api->store, &list);
	api_free(flt, sizeof(*flt));
	return any;
}

/* Drops foregroundDeletion from name's finalizers; with none left the deletion completes.
 * *out: the last version (the deleted one when it went). */
static k32_status_t api_foreground_finish(struct api_server *api, const struct api_resource *res,
					  const char *ns, const char *name, struct store_obj **out,
					  struct api_fail *f)
{
	struct store_obj *old = NULL;
	k32_status_t st = api_get_obj(api, res, ns, name, &old, f);
	if (st)
		return st;
	cJSON *j = api_parse_obj(old);
	cJSON *fins = j ? cJSON_GetObjectItemCaseSensitive(
			      cJSON_GetObjectItemCaseSensitive(j, "metadata"), "finalizers")
			: NULL;
	cJSON *c = cJSON_IsArray(fins) ? fins->child : NULL;
	while (c) {
		cJSON *next = c->next;
		if (cJSON_IsString(c) && !strcmp(c->valuestring, "foregroundDeletion"))
			cJSON_Delete(cJSON_DetachItemViaPointer(fins, c));
		c = next;
	}
	if (!j)
		st = api_fail_set(f, 500, "InternalError", "stored %s %s does not parse", res->kind,
				  name);
	else if (cJSON_GetArraySize(fins) == 0)
		st = api_delete_now(api, res, ns, name, old->mod_rev, "Background",
				    K32_API_MAX_CASCADE, out, f);
	else
		st = api_put_obj_marked(api, res, j, false, old->mod_rev, true, out, f);
	cJSON_Delete(j);
	store_obj_unref(api->store, old);
	return st;
}

/*
 * Foreground deletion (propagationPolicy=Foreground) of an owner: deletionTimestamp and the
 * foregroundDeletion finalizer first, then its dependents (those that own others in turn the
 * same way, K32_API_MAX_CASCADE levels), and the owner itself only once none of them is
 * left. When some remain (a finalizer of theirs), the garbage collector (src/ctrl/ctrl_gc.c)
 * removes the finalizer later and the deletion completes then. *out: the owner's last
 * version (marked, or deleted).
 */
static k32_status_t api_foreground(struct api_server *api, const struct api_resource *res,
				   const char *ns, const char *name, int depth,
				   struct store_obj **out, struct api_fail *f)
{
	struct store_obj *old = NULL, *marked = NULL;
	char uid[64] = "";
	*out = NULL;
	k32_status_t st = api_get_obj(api, res, ns, name, &old, f);
	if (st)
		return st;
	cJSON *j = api_parse_obj(old);
	cJSON *md = j ? api_meta(j) : NULL;
	if (!md) {
		store_obj_unref(api->store, old);
		cJSON_Delete(j);
		return api_fail_set(f, 500, "InternalError", "out of memory");
	}
	snprintf(uid, sizeof(uid), "%s", api_jstr(md, "uid") ? api_jstr(md, "uid") : "");
	cJSON *fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	if (!cJSON_IsArray(fins)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
		fins = cJSON_AddArrayToObject(md, "finalizers");
	}
	bool have = false;
	const cJSON *c;
	cJSON_ArrayForEach(c, fins) have =
	    have || (cJSON_IsString(c) && !strcmp(c->valuestring, "foregroundDeletion"));
	if (fins && !have)
		cJSON_AddItemToArray(fins, cJSON_CreateString("foregroundDeletion"));
	if (!api_jstr(md, "deletionTimestamp")) {
		char ts[32];
		api_format_time(api_now_s(), ts, sizeof(ts));
		api_set_str(md, "deletionTimestamp", ts);
		api_set_num(md, "deletionGracePeriodSeconds", 0);
	}
	st = api_put_obj_marked(api, res, j, false, old->mod_rev, true, &marked, f);
	cJSON_Delete(j);
	store_obj_unref(api->store, old);
	if (st)
		return st;
	const struct api_resource *dres = api_dependents_of(res);
	if (dres && uid[0]) {
		struct api_filter *flt = api_zalloc(sizeof(*flt));
		/* the dependents' failures (dropped): on the heap, not 2.6 KB more per level */
		struct api_fail *df = api_zalloc(sizeof(*df));
		struct store_list list;
		struct store_key key;
		struct k32_err err;
		memset(&list, 0, sizeof(list));
		if (flt && df) {
			flt->owner_uid = uid;
			struct store_list_opts opts = {.filter = api_store_filter,
						       .filter_ctx = flt};
			api_key(dres, ns, "", &key);
			if (store_list(api->store, &key, &opts, &list, &err) != K32_OK)
				list.count = 0;
		}
		for (uint32_t i = 0; i < list.count; i++) {
			const char *k = store_obj_key(list.items[i]);
			const char *dn = strrchr(k, '/');
			struct store_obj *prev = NULL;
			if (!dn)
				continue;
			api_fail_clear(df);
			if (api_dependents_of(dres) && depth + 1 < K32_API_MAX_CASCADE) {
				api_foreground(api, dres, ns, dn + 1, depth + 1, &prev, df);
				store_obj_unref(api->store, prev);
				continue;
			}
			/* a dependent with finalizers, or a pod on a node, is deleted the way
			 * DELETE would (marked; its finalizers or kubelet finish it) */
			cJSON *dj = api_parse_obj(list.items[i]);
			bool fin = cJSON_GetArraySize(k32_json_find(dj, "metadata.finalizers")) > 0;
			bool bound =
			    dres->strategy->graceful_on_node && api_jstr(dj, "spec.nodeName");
			if (dj && (fin || bound) && !api_jstr(dj, "metadata.deletionTimestamp")) {
				const cJSON *g =
				    k32_json_find(dj, "spec.terminationGracePeriodSeconds");
				int64_t grace = !bound		    ? -1
						: cJSON_IsNumber(g) ? (int64_t)g->valuedouble
								    : 30;
				api_mark_deleting(api, dres, list.items[i], dj, grace, &prev, df);
			} else if (dj && !fin && !bound) {
				api_delete_now(api, dres, ns, dn + 1, 0, "Foreground", depth + 1,
					       &prev, df);
			}
			cJSON_Delete(dj);
			store_obj_unref(api->store, prev);
		}
		store_list_fini(api->store, &list);
		api_free(flt, sizeof(*flt));
		api_free(df, sizeof(*df));
	}
	if (dres && uid[0] && api_has_dependents(api, dres, ns, uid)) {
		*out = marked; /* the GC finishes it */
		return K32_OK;
	}
	st = api_foreground_finish(api, res, ns, name, out, f);
	if (st == K32_OK) {
		store_obj_unref(api->store, marked);
	} else {
		*out = marked;
		st = K32_OK; /* marked: the GC finishes it */
		api_fail_clear(f);
	}
	return st;
}

/*
 * One attempt of a DELETE: read, check the client's preconditions, write. A store Conflict
 * (someone wrote the object between the read and the write: a controller, a kubelet) is
 * returned as K32_ERR_CONFLICT for the caller to retry with a fresh read; a precondition the
 * client sent that fails is K32_ERR_BAD_STATE (409 in f, not retried).
 */
static k32_status_t api_delete_once(struct api_server *api, struct api_req *rq, struct api_out *out,
				    const struct api_delopts *o, struct api_fail *f)
{
	struct store_obj *old = NULL, *so = NULL;
	cJSON *oldj = NULL;
	char why[API_WHY_LEN];
	k32_status_t st = api_get_obj(api, rq->res, rq->ns, rq->name, &old, f);
	if (st)
		goto out;
	oldj = api_parse_obj(old);
	if (!oldj) {
		st = api_fail_set(f, 500, "InternalError", "stored object does not parse");
		goto out;
	}
	if (!api_authorize(rq->who, "delete", rq->res, "", rq->ns, rq->name, oldj, why,
			   sizeof(why))) {
		st = api_fail_forbidden(f, rq->res, rq->name, why);
		goto out;
	}
	char rv[24];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)old->mod_rev);
	const char *uid = api_jstr(oldj, "metadata.uid");
	if ((o->pre_uid[0] && (!uid || strcmp(o->pre_uid, uid))) ||
	    (o->pre_rv[0] && strcmp(o->pre_rv, rv))) {
		api_fail_set(f, 409, "Conflict",
			     "Precondition failed: UID in precondition: %s, UID in object meta: %s "
			     "(resourceVersion %s, stored %s)",
			     o->pre_uid[0] ? o->pre_uid : "<none>", uid ? uid : "", o->pre_rv, rv);
		st = K32_ERR_BAD_STATE;
		goto out;
	}
	if (rq->res->strategy->is_namespace &&
	    (!strcmp(rq->name, "default") || !strcmp(rq->name, "kube-system") ||
	     !strcmp(rq->name, "kube-public"))) {
		st = api_fail_forbidden(f, rq->res, rq->name, "this namespace may not be deleted");
		goto out;
	}
	if (o->dry) {
		api_out_obj(rq, out, 200, old);
		goto out;
	}
	bool has_fin = cJSON_GetArraySize(k32_json_find(oldj, "metadata.finalizers")) > 0;
	bool bound_pod = rq->res->strategy->graceful_on_node && api_jstr(oldj, "spec.nodeName") &&
			 o->grace != 0 && !api_jstr(oldj, "metadata.deletionTimestamp");
	if (rq->res->strategy->is_namespace) {
		if ((st = api_mark_deleting(api, rq->res, old, oldj, -1, &so, f)))
			goto out;
		api_out_obj(rq, out, 200, so);
		/* the contents go asynchronously, as with kube's namespace controller, so that
		 * `kubectl delete -f` of a namespace and its objects finds them still there */
		api_ns_janitor_kick(api);
		goto out;
	}
	if (!strcmp(o->policy, "Foreground") && api_dependents_of(rq->res)) {
		if ((st = api_foreground(api, rq->res, rq->ns, rq->name, 0, &so, f)))
			goto out;
		api_out_obj(rq, out, 200, so ? so : old);
		goto out;
	}
	if (has_fin || bound_pod) {
		int64_t grace = o->grace;
		if (bound_pod && grace < 0)
			grace = api_default_grace(rq->res, oldj);
		if ((st = api_mark_deleting(api, rq->res, old, oldj, grace, &so, f)))
			goto out;
		api_out_obj(rq, out, 200, so);
		goto out;
	}
	struct store_obj *prev = NULL;
	st = api_delete_now(api, rq->res, rq->ns, rq->name, old->mod_rev, o->policy, 0, &prev, f);
	if (!st)
		api_out_obj(rq, out, 200, prev ? prev : old);
	store_obj_unref(api->store, prev);
out:
	store_obj_unref(api->store, so);
	store_obj_unref(api->store, old);
	cJSON_Delete(oldj);
	return st;
}

void api_delete(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail;
	struct api_delopts o;
	api_fail_clear(f);
	k32_status_t st = api_delopts_parse(rq, &o, f);
	/* kube-apiserver retries its read-check-write while the store reports a conflict; the
	 * client sees 409 only for a precondition of its own (checked again on each read) */
	for (uint32_t attempt = 1; !st; attempt++) {
		st = api_delete_once(api, rq, out, &o, f);
		if (st != K32_ERR_CONFLICT || attempt >= K32_API_WRITE_RETRIES)
			break;
		api_fail_clear(f);
		st = K32_OK;
	}
	if (st)
		api_out_fail(out, f);
}

void api_delete_collection(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail;
	struct api_delopts o;
	struct api_filter *flt = api_zalloc(sizeof(*flt));
	/* each item's failure (dropped): on the heap, not 2.6 KB more of the task's stack */
	struct api_fail *df = api_zalloc(sizeof(*df));
	struct store_list list;
	memset(&list, 0, sizeof(list));
	api_fail_clear(f);
	if (!flt || !df) {
		api_free(flt, sizeof(*flt));
		api_free(df, sizeof(*df));
		api_fail_set(f, 500, "InternalError", "out of memory");
		api_out_fail(out, f);
		return;
	}
	char why[API_WHY_LEN];
	if (!api_authorize(rq->who, "deletecollection", rq->res, "", rq->ns, NULL, NULL, why,
			   sizeof(why))) {
		api_fail_forbidden(f, rq->res, "", why);
		goto out_fail;
	}
	if (api_delopts_parse(rq, &o, f) || api_filter_init(rq, flt, f))
		goto out_fail;
	struct store_list_opts opts = {0};
	if (flt->has_l || flt->has_f) {
		opts.filter = api_store_filter;
		opts.filter_ctx = flt;
	}
	struct store_key key;
	struct k32_err err;
	api_key(rq->res, rq->ns, "", &key);
	k32_status_t st = store_list(api->store, &key, &opts, &list, &err);
	if (st) {
		api_store_err(f, rq->res, "", st, &err);
		goto out_fail;
	}
	uint32_t deleted = 0;
	for (uint32_t i = 0; !o.dry && i < list.count; i++) {
		const char *k = store_obj_key(list.items[i]);
		const char *nm = strrchr(k, '/');
		char ns[64] = "";
		if (rq->res->namespaced) {
			/* key: /<group>/<resource>/<ns>/<name> */
			const char *p = k;
			for (int s = 0; s < 2 && p; s++)
				p = strchr(p + 1, '/');
			if (p && nm && nm > p)
				snprintf(ns, sizeof(ns), "%.*s", (int)(nm - p - 1), p + 1);
		}
		struct store_obj *prev = NULL;
		api_fail_clear(df);
		if (api_delete_now(api, rq->res, ns, nm ? nm + 1 : "", 0, o.policy, 0, &prev, df) ==
		    K32_OK)
			deleted++;
		store_obj_unref(api->store, prev);
	}
	char name[32];
	snprintf(name, sizeof(name), "%u deleted", (unsigned)deleted);
	api_out_status_ok(out, 200, rq->res->plural, name);
	goto out;
out_fail:
	api_out_fail(out, f);
out:
	store_list_fini(api->store, &list);
	api_free(flt, sizeof(*flt));
	api_free(df, sizeof(*df));
}

/* ---- pod subresources ------------------------------------------------------------------ */

void api_binding(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
	cJSON *b = NULL, *pod = NULL;
	struct store_obj *old = NULL, *so = NULL;
	char why[API_WHY_LEN];
	api_fail_clear(f);
	if (api_decode_body(rq, &b, f) || api_get_obj(api, rq->res, rq->ns, rq->name, &old, f))
		goto out_fail;
	const char *node = api_jstr(b, "target.name");
	if (!node || !node[0]) {
		api_fail_add_cause(f, "FieldValueRequired", "target.name", "Required value");
		api_fail_invalid(f, "Binding", rq->name);
		goto out_fail;
	}
	pod = api_parse_obj(old);
	if (!pod) {
		api_fail_set(f, 500, "InternalError", "stored pod does not parse");
		goto out_fail;
	}
	if (!api_authorize(rq->who, "create", rq->res, "binding", rq->ns, rq->name, pod, why,
			   sizeof(why))) {
		api_fail_forbidden(f, rq->res, rq->name, why);
		goto out_fail;
	}
	const char *cur = api_jstr(pod, "spec.nodeName");
	if (cur && cur[0]) {
		api_fail_set(f, 409, "Conflict",
			     "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is "
			     "already assigned to node \"%s\"",
			     rq->name, K32_CLIP(rq->name), K32_CLIP(cur));
		goto out_fail;
	}
	cJSON *spec = cJSON_GetObjectItem(pod, "spec");
	if (!spec)
		spec = cJSON_AddObjectToObject(pod, "spec");
	api_set_str(spec, "nodeName", node);
	if (api_put_obj(api, rq->res, pod, false, old->mod_rev, &so, f))
		goto out_fail;
	api_out_status_ok(out, 201, "pods", rq->name);
	goto out;
out_fail:
	api_out_fail(out, f);
out:
	cJSON_Delete(b);
	cJSON_Delete(pod);
	store_obj_unref(api->store, old);
	store_obj_unref(api->store, so);
}

void api_log(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
	struct store_obj *o = NULL;
	api_fail_clear(f);
	if (api_get_obj(api, rq->res, rq->ns, rq->name, &o, f)) {
		api_out_fail(out, f);
		return;
	}
	cJSON *pod = api_parse_obj(o);
	store_obj_unref(api->store, o);
	char container[64] = "";
	const cJSON *cs = k32_json_find(pod, "spec.containers");
	if (!api_q(rq, "container", container, sizeof(container)) || !container[0]) {
		if (cJSON_GetArraySize(cs) > 1) {
			api_fail_set(f, 400, "BadRequest",
				     "a container name must be specified for pod %s", rq->name);
			goto out_fail;
		}
		const char *c0 = api_jstr(cJSON_GetArrayItem(cs, 0), "name");
		snprintf(container, sizeof(container), "%s", c0 ? c0 : "");
	}
	const char *phase = api_jstr(pod, "status.phase");
	if (!phase || !strcmp(phase, "Pending")) {
		api_fail_set(
		    f, 400, "BadRequest",
		    "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating",
		    container, rq->name);
		goto out_fail;
	}
	/* logs live on the node; the control plane keeps none (a log hook fetches them) */
	if (api->log_fn) {
		struct k32_err err;
		char query[512];
		int code = 200;
		const char *node = api_jstr(pod, "spec.nodeName");
		k32_str_copy(rq->query, query, sizeof(query));
		k32_err_clear(&err);
		k32_buf_reset(out->body);
		k32_status_t st = api->log_fn(api->log_ctx, rq->ns, rq->name, container,
					      node ? node : "", query, out->body, &code, &err);
		if (st) {
			api_fail_set(f, 500, "InternalError", "reading logs of pod %s: %s",
				     rq->name, err.msg);
			goto out_fail;
		}
		out->code = code;
		snprintf(out->ctype, sizeof(out->ctype), "text/plain");
		cJSON_Delete(pod);
		return;
	}
	api_out_text(out, 200, "text/plain", "", 0);
	cJSON_Delete(pod);
	return;
out_fail:
	cJSON_Delete(pod);
	api_out_fail(out, f);
}

void api_eviction(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	/* no PodDisruptionBudgets: an eviction is a delete with the Eviction's deleteOptions */
	struct api_fail *f = &rq->fail;
	cJSON *ev = NULL;
	char *opts = NULL;
	api_fail_clear(f);
	if (rq->body_len && api_decode_body(rq, &ev, f)) {
		api_out_fail(out, f);
		return;
	}
	const cJSON *dopt = cJSON_GetObjectItem(ev, "deleteOptions");
	if (cJSON_IsObject(dopt))
		opts = cJSON_PrintUnformatted(dopt);
	cJSON_Delete(ev);
	rq->body = (const uint8_t *)(opts ? opts : "");
	rq->body_len = opts ? strlen(opts) : 0;
	snprintf(rq->ctype, sizeof(rq->ctype), "application/json");
	api_delete(api, rq, out);
	cJSON_free(opts);
	rq->body = NULL;
	rq->body_len = 0;
	if (out->code == 200)
		api_out_status_ok(out, 201, "pods", rq->name);
}

/* ---- namespace janitor ----------------------------------------------------------------- */

/* One pass: every namespace Terminating for at least K32_API_NS_PURGE_DELAY_MS has its
 * contents deleted, then (without finalizers) goes itself. Returns whether any namespace is
 * still Terminating (the janitor then looks again later). */
static bool api_ns_janitor_pass(struct api_server *api, uint64_t now_s)
{
	const struct api_resource *nsres = api_registry_find("", "v1", "namespaces");
	struct store_list list;
	struct store_key key;
	struct store_list_opts opts = {0};
	struct k32_err err;
	bool pending = false;
	memset(&list, 0, sizeof(list));
	api_key(nsres, "", "", &key);
	if (store_list(api->store, &key, &opts, &list, &err) != K32_OK)
		return true;
	for (uint32_t i = 0; i < list.count; i++) {
		cJSON *j = api_parse_obj(list.items[i]);
		const char *phase = api_jstr(j, "status.phase");
		const char *dts = api_jstr(j, "metadata.deletionTimestamp");
		const char *name = api_jstr(j, "metadata.name");
		uint64_t dt;
		if (!j || !phase || strcmp(phase, "Terminating") || !name) {
			cJSON_Delete(j);
			continue;
		}
		uint64_t delay_s = (K32_API_NS_PURGE_DELAY_MS + 999) / 1000;
		if (!dts || !api_parse_time(dts, &dt) || dt + delay_s > now_s) {
			pending = true;
			cJSON_Delete(j);
			continue;
		}
		api_purge_namespace(api, name);
		if (cJSON_GetArraySize(k32_json_find(j, "metadata.finalizers")) == 0) {
			struct store_obj *prev = NULL;
			/* its failure record off the stack (2.8 KB; the pass runs on request paths)
			 */
			struct api_fail *f = api_zalloc(sizeof(*f));
			if (f)
				api_delete_now(api, nsres, "", name, 0, "Background", 0, &prev, f);
			else
				pending = true; /* out of memory: the next pass deletes it */
			api_free(f, sizeof(*f));
			store_obj_unref(api->store, prev);
		} else {
			pending = true; /* a controller removes the finalizers */
		}
		cJSON_Delete(j);
	}
	store_list_fini(api->store, &list);
	return pending;
}

static void api_ns_janitor_main(void *arg)
{
	struct api_server *api = arg;
	const struct k32_platform_ops *pl = k32_plat();
	bool pending = true; /* a namespace may have been left Terminating by a crash */
	pl->mutex_lock(&api->jmu);
	while (!api->jstop) {
		int64_t deadline =
		    pending || api->jkick
			? k32_deadline_after((int64_t)K32_API_NS_PURGE_DELAY_MS * 1000)
			: K32_FOREVER;
		if (!api->jkick)
			pl->cond_wait(&api->jcond, &api->jmu, deadline);
		if (api->jstop)
			break;
		api->jkick = false;
		pl->mutex_unlock(&api->jmu);
		pending = api_ns_janitor_pass(api, pl->wall_s());
		pl->mutex_lock(&api->jmu);
	}
	pl->mutex_unlock(&api->jmu);
}

void api_ns_janitor_kick(struct api_server *api)
{
	const struct k32_platform_ops *pl = k32_plat();
	if (!api->janitor) {
		/* no janitor task (start failed): purge now */
		api_ns_janitor_pass(api, pl->wall_s() + 3600);
		return;
	}
	pl->mutex_lock(&api->jmu);
	api->jkick = true;
	pl->cond_signal(&api->jcond);
	pl->mutex_unlock(&api->jmu);
}

k32_status_t api_ns_janitor_start(struct api_server *api, struct k32_err *err)
{
	const struct k32_platform_ops *pl = k32_plat();
	pl->mutex_init(&api->jmu);
	pl->cond_init(&api->jcond);
	return pl->task_create(&api->janitor, "api-ns", api_ns_janitor_main, api, 0, -1, err);
}

void api_ns_janitor_stop(struct api_server *api)
{
	const struct k32_platform_ops *pl = k32_plat();
	if (!api->janitor)
		return;
	pl->mutex_lock(&api->jmu);
	api->jstop = true;
	pl->cond_signal(&api->jcond);
	pl->mutex_unlock(&api->jmu);
	pl->task_join(api->janitor);
	api->janitor = NULL;
	pl->cond_fini(&api->jcond);
	pl->mutex_fini(&api->jmu);
}
