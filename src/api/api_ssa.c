/*
 * api_ssa.c - server-side apply with field ownership: metadata.managedFields.
 *
 * A field set is kept in the FieldsV1 form Kubernetes stores and kubectl shows: a JSON
 * object whose keys are path elements, "f:<field>" for a member, "k:{"name":"main"}" for the
 * item of a list merged by key (the strategic-merge keys of api_patch.c), "v:<json>" for a
 * member of a set list (finalizers) and "." for a list item itself; a node without children
 * is an owned leaf (a scalar, an atomic list, an empty map). Every other list is atomic.
 *
 * managedFields holds one entry per (manager, operation, subresource) with the field set it
 * owns. APPLY (api_ssa_apply): the applied configuration's field set is the manager's new
 * set; a field in it that another manager owns and whose value the configuration changes is
 * a conflict (409 with one FieldManagerConflict cause per field, worded as kube-apiserver
 * does) unless force is set, in which case the other manager loses it; fields the manager
 * applied last time and no longer applies are removed from the object unless another
 * manager owns them; then the configuration is merged in (strategic merge). UPDATE
 * (api_ssa_update, every other write of an object that has managedFields): the writer's
 * "Update" entry gains the fields whose value it changed, which every other entry loses;
 * fields that left the object leave every entry. An object that was never applied has no
 * managedFields (nothing is tracked for it, which keeps plain objects small on a board);
 * its first apply gives its present fields to the manager "before-first-apply", as
 * kube-apiserver does for objects whose ownership was never recorded.
 *
 * Recursion is bounded by K32_API_MAX_DEPTH; paths by K32_API_SSA_MAX_PATH elements. Any
 * allocation failure returns a 500 and leaves the caller's object to be discarded.
 */
#include "api/api_int.h"
#include "base/k32_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSA_BFA "before-first-apply"

struct ssa_path {
	const char *e[K32_API_SSA_MAX_PATH];
	size_t n;
};

typedef bool (*ssa_leaf_fn)(void *ctx, const struct ssa_path *p);

static bool ssa_is_leaf(const cJSON *node)
{
	return node->child == NULL;
}

/* The kind of a path element: 'f', 'k', 'v' ("x:..."), '.' or 0 for anything else (a
 * managedFields entry read back from the store is the server's own, but never trusted). */
static char ssa_kind(const char *e)
{
	if (!strcmp(e, "."))
		return '.';
	if ((e[0] == 'f' || e[0] == 'k' || e[0] == 'v') && e[1] == ':')
		return e[0];
	return 0;
}

/* Calls fn for every leaf of fs (depth-first, in key order); false from fn stops the walk. */
static bool ssa_walk(const cJSON *fs, struct ssa_path *p, ssa_leaf_fn fn, void *ctx)
{
	const cJSON *c;
	if (p->n >= K32_API_SSA_MAX_PATH)
		return true; /* deeper than any path ssa_build makes */
	cJSON_ArrayForEach(c, fs)
	{
		if (!c->string)
			continue;
		p->e[p->n++] = c->string;
		bool go = ssa_is_leaf(c) ? fn(ctx, p) : ssa_walk(c, p, fn, ctx);
		p->n--;
		if (!go)
			return false;
	}
	return true;
}

/* ---- field sets of objects ----------------------------------------------------------- */

static bool ssa_skip(const char *key, int depth, const char *parent, bool skip_status)
{
	static const char *const meta_skip[] = {"name",
						"namespace",
						"uid",
						"resourceVersion",
						"generation",
						"creationTimestamp",
						"deletionTimestamp",
						"deletionGracePeriodSeconds",
						"managedFields",
						"selfLink"};
	if (depth == 0)
		return !strcmp(key, "apiVersion") || !strcmp(key, "kind") ||
		       (skip_status && !strcmp(key, "status"));
	if (depth == 1 && parent && !strcmp(parent, "metadata"))
		for (size_t i = 0; i < sizeof(meta_skip) / sizeof(meta_skip[0]); i++)
			if (!strcmp(key, meta_skip[i]))
				return true;
	return false;
}

/* "k:{"name":"main"}" of a keyed item into buf; false when it has no usable key. */
static bool ssa_key_elem(const cJSON *item, const char *key, char *buf, size_t cap)
{
	const cJSON *kv = cJSON_GetObjectItemCaseSensitive(item, key);
	if (!kv || cJSON_IsObject(kv) || cJSON_IsArray(kv))
		return false;
	char *v = cJSON_PrintUnformatted(kv);
	if (!v)
		return false;
	cJSON *ks = cJSON_CreateString(key);
	char *kj = ks ? cJSON_PrintUnformatted(ks) : NULL;
	int n = kj ? snprintf(buf, cap, "k:{%s:%s}", kj, v) : -1;
	cJSON_free(kj);
	cJSON_Delete(ks);
	cJSON_free(v);
	return n > 0 && (size_t)n < cap;
}

static bool ssa_add(cJSON *node, const char *k, cJSON *child)
{
	if (!child)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(node, k)) { /* duplicate list key: keep first */
		cJSON_Delete(child);
		return true;
	}
	if (!cJSON_AddItemToObject(node, k, child)) {
		cJSON_Delete(child);
		return false;
	}
	return true;
}

static cJSON *ssa_build(const cJSON *v, const char *name, int depth, bool skip_status)
{
	char k[K32_API_SSA_ELEM_LEN];
	cJSON *node = cJSON_CreateObject();
	if (!node || depth > K32_API_MAX_DEPTH || depth >= K32_API_SSA_MAX_PATH - 2)
		return node;
	if (cJSON_IsObject(v)) {
		const cJSON *m;
		cJSON_ArrayForEach(m, v)
		{
			if (!m->string || ssa_skip(m->string, depth, name, skip_status))
				continue;
			cJSON *c = ssa_build(m, m->string, depth + 1, skip_status);
			/* metadata with nothing but skipped members owns nothing */
			if (c && depth == 0 && !strcmp(m->string, "metadata") && !c->child) {
				cJSON_Delete(c);
				continue;
			}
			snprintf(k, sizeof(k), "f:%s", m->string);
			if (!ssa_add(node, k, c))
				goto fail;
		}
		return node;
	}
	if (!cJSON_IsArray(v) || !name)
		return node; /* a leaf */
	const char *key = api_patch_merge_key(name);
	const cJSON *it;
	if (key) {
		cJSON_ArrayForEach(it, v)
		{
			if (!cJSON_IsObject(it) || !ssa_key_elem(it, key, k, sizeof(k)))
				continue;
			cJSON *c = ssa_build(it, NULL, depth + 1, false);
			if (!c || !cJSON_AddItemToObject(c, ".", cJSON_CreateObject()) ||
			    !ssa_add(node, k, c)) {
				cJSON_Delete(c);
				goto fail;
			}
		}
	} else if (!strcmp(name, "finalizers")) {
		cJSON_ArrayForEach(it, v)
		{
			char *j = cJSON_PrintUnformatted(it);
			int n = j ? snprintf(k, sizeof(k), "v:%s", j) : -1;
			cJSON_free(j);
			if (n <= 0 || (size_t)n >= sizeof(k))
				continue;
			if (!ssa_add(node, k, cJSON_CreateObject()))
				goto fail;
		}
	}
	return node; /* atomic lists (and empty ones) are leaves */
fail:
	cJSON_Delete(node);
	return NULL;
}

cJSON *api_ssa_fields(const cJSON *obj, bool skip_status)
{
	return ssa_build(obj, NULL, 0, skip_status);
}

/* ---- paths ----------------------------------------------------------------------------- */

/* The value at p in obj (the list item itself for "."), or NULL. */
static const cJSON *ssa_value(const cJSON *obj, const struct ssa_path *p, size_t upto)
{
	const cJSON *cur = obj;
	for (size_t i = 0; cur && i < upto; i++) {
		const char *e = p->e[i];
		char kind = ssa_kind(e);
		if (kind == '.')
			continue;
		if (!kind)
			return NULL;
		if (kind == 'f') {
			cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, e + 2)
						  : NULL;
			continue;
		}
		if (!cJSON_IsArray(cur))
			return NULL;
		cJSON *want = cJSON_Parse(e + 2);
		const cJSON *found = NULL, *it;
		if (!want)
			return NULL;
		cJSON_ArrayForEach(it, cur)
		{
			if (kind == 'v') {
				if (cJSON_Compare(it, want, true))
					found = it;
			} else if (kind == 'k' && cJSON_IsObject(it) && cJSON_IsObject(want)) {
				bool all = true;
				const cJSON *kv;
				cJSON_ArrayForEach(kv, want) all =
				    all &&
				    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(it, kv->string),
						  kv, true);
				if (all)
					found = it;
			}
			if (found)
				break;
		}
		cJSON_Delete(want);
		cur = found;
	}
	return cur;
}

/* Is p a leaf of fs? */
static bool ssa_has(const cJSON *fs, const struct ssa_path *p)
{
	const cJSON *cur = fs;
	for (size_t i = 0; cur && i < p->n; i++)
		cur = cJSON_GetObjectItemCaseSensitive(cur, p->e[i]);
	return cur && ssa_is_leaf(cur);
}

/* Adds leaf p to fs. */
static bool ssa_put(cJSON *fs, const struct ssa_path *p)
{
	cJSON *cur = fs;
	for (size_t i = 0; i < p->n; i++) {
		cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, p->e[i]);
		if (!next) {
			next = cJSON_CreateObject();
			if (!next || !cJSON_AddItemToObject(cur, p->e[i], next)) {
				cJSON_Delete(next);
				return false;
			}
		}
		cur = next;
	}
	return true;
}

/* Removes leaf p from fs and every ancestor it leaves empty. */
static void ssa_del(cJSON *fs, const struct ssa_path *p)
{
	cJSON *chain[K32_API_SSA_MAX_PATH + 1];
	chain[0] = fs;
	for (size_t i = 0; i < p->n; i++) {
		chain[i + 1] = cJSON_GetObjectItemCaseSensitive(chain[i], p->e[i]);
		if (!chain[i + 1])
			return;
	}
	if (!ssa_is_leaf(chain[p->n]))
		return;
	for (size_t i = p->n; i > 0; i--) {
		cJSON_DeleteItemFromObjectCaseSensitive(chain[i - 1], p->e[i - 1]);
		if (chain[i - 1]->child || i == 1)
			break;
	}
}

/* Appends printf output to buf at *off, never past cap (the text is cut). */
static void ssa_cat(char *buf, size_t cap, size_t *off, const char *fmt, ...)
{
	va_list ap;
	if (*off >= cap)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *off, cap - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off = *off + (size_t)n < cap ? *off + (size_t)n : cap;
}

/* ".spec.containers[name="main"].image" (kube-apiserver's fieldpath form) into buf. */
static void ssa_path_str(const struct ssa_path *p, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < p->n; i++) {
		const char *e = p->e[i];
		char kind = ssa_kind(e);
		if (kind == 'f') {
			ssa_cat(buf, cap, &off, ".%s", e + 2);
		} else if (kind == 'v') {
			ssa_cat(buf, cap, &off, "[=%s]", e + 2);
		} else if (kind == 'k') {
			cJSON *k = cJSON_Parse(e + 2);
			const cJSON *kv;
			bool first = true;
			ssa_cat(buf, cap, &off, "[");
			cJSON_ArrayForEach(kv, k)
			{
				char *v = cJSON_PrintUnformatted(kv);
				ssa_cat(buf, cap, &off, "%s%s=%s", first ? "" : ",",
					kv->string ? kv->string : "", v ? v : "");
				cJSON_free(v);
				first = false;
			}
			ssa_cat(buf, cap, &off, "]");
			cJSON_Delete(k);
		}
	}
}

/* metadata of obj, created when absent (NULL when obj is not an object or out of memory). */
static cJSON *ssa_meta(cJSON *obj)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (cJSON_IsObject(md) || !cJSON_IsObject(obj))
		return cJSON_IsObject(md) ? md : NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
	return cJSON_AddObjectToObject(obj, "metadata");
}

/* ---- managedFields entries ------------------------------------------------------------- */

static const char *ssa_str(const cJSON *e, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static bool ssa_entry_is(const cJSON *e, const char *manager, const char *op, const char *sub)
{
	return !strcmp(ssa_str(e, "manager"), manager) && !strcmp(ssa_str(e, "operation"), op) &&
	       !strcmp(ssa_str(e, "subresource"), sub ? sub : "");
}

/* The entry's field set (created empty if absent or not an object). */
static cJSON *ssa_entry_fs(cJSON *e)
{
	cJSON *fs = cJSON_GetObjectItemCaseSensitive(e, "fieldsV1");
	if (!cJSON_IsObject(fs)) {
		cJSON_DeleteItemFromObjectCaseSensitive(e, "fieldsV1");
		fs = cJSON_AddObjectToObject(e, "fieldsV1");
	}
	return fs;
}

static cJSON *ssa_entry_new(cJSON *mf, const char *manager, const char *op, const char *sub,
			    const struct api_ssa_ctx *cx)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddItemToArray(mf, e)) {
		cJSON_Delete(e);
		return NULL;
	}
	cJSON_AddStringToObject(e, "manager", manager);
	cJSON_AddStringToObject(e, "operation", op);
	cJSON_AddStringToObject(e, "apiVersion", cx->api_version);
	cJSON_AddStringToObject(e, "time", cx->time);
	cJSON_AddStringToObject(e, "fieldsType", "FieldsV1");
	if (sub && sub[0])
		cJSON_AddStringToObject(e, "subresource", sub);
	return ssa_entry_fs(e) ? e : NULL;
}

static void ssa_touch(cJSON *e, const struct api_ssa_ctx *cx)
{
	cJSON *t = cJSON_CreateString(cx->time);
	if (t && !cJSON_ReplaceItemInObjectCaseSensitive(e, "time", t) &&
	    !cJSON_AddItemToObject(e, "time", t))
		cJSON_Delete(t);
	cJSON *v = cJSON_CreateString(cx->api_version);
	if (v && !cJSON_ReplaceItemInObjectCaseSensitive(e, "apiVersion", v) &&
	    !cJSON_AddItemToObject(e, "apiVersion", v))
		cJSON_Delete(v);
}

/* Drops entries that own nothing, and anything in the array that is not an entry. */
static void ssa_prune(cJSON *mf)
{
	cJSON *e = mf->child;
	while (e) {
		cJSON *next = e->next;
		const cJSON *fs = cJSON_GetObjectItemCaseSensitive(e, "fieldsV1");
		if (!cJSON_IsObject(e) || !cJSON_IsObject(fs) || !fs->child)
			cJSON_Delete(cJSON_DetachItemViaPointer(mf, e));
		e = next;
	}
}

/* kube-apiserver's printManager: "m", "m" with subresource "s", "m" using v1 at <time>. */
static void ssa_manager_str(const cJSON *e, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "\"%s\"", ssa_str(e, "manager"));
	if (ssa_str(e, "subresource")[0] && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " with subresource \"%s\"",
			      ssa_str(e, "subresource"));
	if (!strcmp(ssa_str(e, "operation"), "Update") && n > 0 && (size_t)n < cap) {
		n += snprintf(buf + n, cap - (size_t)n, " using %s", ssa_str(e, "apiVersion"));
		if (ssa_str(e, "time")[0] && n > 0 && (size_t)n < cap)
			snprintf(buf + n, cap - (size_t)n, " at %s", ssa_str(e, "time"));
	}
}

/* ---- apply ----------------------------------------------------------------------------- */

struct ssa_conflicts {
	const cJSON *live, *config; /* the object before the apply, the configuration */
	cJSON *owner_fs;	    /* the other manager's field set */
	cJSON *found;		    /* leaves in conflict (a field set) */
	size_t count;
};

static bool ssa_conflict_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_conflicts *cc = ctx;
	const char *last = p->e[p->n - 1];
	if (ssa_kind(last) != 'f' || !ssa_has(cc->owner_fs, p))
		return true; /* presence of a list item or set member never conflicts */
	const cJSON *now = ssa_value(cc->live, p, p->n);
	const cJSON *want = ssa_value(cc->config, p, p->n);
	if (now && want && !cJSON_Compare(now, want, true)) {
		if (!ssa_put(cc->found, p))
			return false;
		cc->count++;
	}
	return true;
}

struct ssa_collect {
	cJSON *dst;		/* leaves go here (a field set) */
	const cJSON *not_in[8]; /* ... unless a leaf of one of these */
	size_t not_n;
	bool ok;
};

static bool ssa_collect_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_collect *c = ctx;
	for (size_t i = 0; i < c->not_n; i++)
		if (c->not_in[i] && ssa_has(c->not_in[i], p))
			return true;
	c->ok = ssa_put(c->dst, p);
	return c->ok;
}

struct ssa_remove {
	cJSON *obj;
	bool items; /* this pass: whole list items and set members ("." and "v:" leaves) */
};

/* Removes the field at leaf p from the object ("." removes the list item itself). */
static bool ssa_remove_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_remove *r = ctx;
	const char *last = p->e[p->n - 1];
	size_t item_at = !strcmp(last, ".") ? p->n - 1 : p->n; /* path of what goes */
	/* items go first, while their key fields still find them; then single fields */
	if (item_at == 0 || r->items != (item_at < p->n || ssa_kind(last) == 'v'))
		return true;
	const char *e = p->e[item_at - 1];
	cJSON *parent = (cJSON *)ssa_value(r->obj, p, item_at - 1);
	if (!parent)
		return true;
	if (ssa_kind(e) == 'f' && cJSON_IsObject(parent)) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, e + 2);
	} else if (cJSON_IsArray(parent)) {
		cJSON *victim = (cJSON *)ssa_value(r->obj, p, item_at);
		if (victim)
			cJSON_Delete(cJSON_DetachItemViaPointer(parent, victim));
	}
	return true;
}

struct ssa_removefs {
	cJSON *fs;
};

static bool ssa_del_leaf(void *ctx, const struct ssa_path *p)
{
	ssa_del(((struct ssa_removefs *)ctx)->fs, p);
	return true;
}

struct ssa_report {
	struct api_fail *f;
	const char *manager; /* printed manager of the entry being reported */
	char *msg;	     /* the message being built */
	size_t cap, off;
	size_t total;
};

static bool ssa_report_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_report *r = ctx;
	char path[160];
	ssa_path_str(p, path, sizeof(path));
	api_fail_add_cause(r->f, "FieldManagerConflict", path, "conflict with %s", r->manager);
	if (r->off < r->cap) {
		int n = r->total == 1 ? snprintf(r->msg + r->off, r->cap - r->off,
						 "conflict with "
						 "%s: %s",
						 r->manager, path)
				      : snprintf(r->msg + r->off, r->cap - r->off, "\n- %s", path);
		if (n > 0)
			r->off += (size_t)n;
	}
	return true;
}

static int ssa_cmp_entries(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(ssa_str(x, "manager"), ssa_str(y, "manager"));
}

/* Fills f with the 409 of kube-apiserver for the conflicts in found[i] of entries[i]. */
static k32_status_t ssa_fail_conflicts(struct api_fail *f, cJSON **entries, cJSON **found, size_t n,
				       size_t total)
{
	char msg[sizeof(f->message)];
	struct ssa_report r = {f, NULL, msg, sizeof(msg), 0, total};
	struct ssa_path p = {.n = 0};
	const cJSON *order[K32_API_SSA_MAX_MANAGERS];
	size_t idx[K32_API_SSA_MAX_MANAGERS], m = 0;
	for (size_t i = 0; i < n; i++)
		if (found[i] && found[i]->child) {
			idx[m] = i;
			order[m++] = entries[i];
		}
	/* managers in name order, as kube-apiserver sorts them */
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && ssa_cmp_entries(&order[j - 1], &order[j]) > 0; j--) {
			const cJSON *t = order[j];
			size_t ti = idx[j];
			order[j] = order[j - 1];
			idx[j] = idx[j - 1];
			order[j - 1] = t;
			idx[j - 1] = ti;
		}
	int head = total == 1
		       ? snprintf(msg, sizeof(msg), "Apply failed with 1 conflict: ")
		       : snprintf(msg, sizeof(msg), "Apply failed with %zu conflicts: ", total);
	r.off = head > 0 ? (size_t)head : 0;
	for (size_t i = 0; i < m; i++) {
		char who[200];
		ssa_manager_str(order[i], who, sizeof(who));
		r.manager = who;
		if (total > 1 && r.off < r.cap) {
			int k = snprintf(msg + r.off, r.cap - r.off,
					 "%sconflicts with %s:", i ? "\n" : "", who);
			if (k > 0)
				r.off += (size_t)k;
		}
		ssa_walk(found[idx[i]], &p, ssa_report_leaf, &r);
	}
	return api_fail_set(f, 409, "Conflict", "%s", msg);
}

k32_status_t api_ssa_apply(cJSON **live, const cJSON *config, const struct api_ssa_ctx *cx,
			   struct api_fail *f)
{
	cJSON *obj = *live;
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON *mf = cJSON_IsObject(md)
			? cJSON_DetachItemFromObjectCaseSensitive(md, "managedFields")
			: NULL;
	cJSON *newfs = NULL, *rm = NULL, *cfg = NULL;
	cJSON *entries[K32_API_SSA_MAX_MANAGERS], *found[K32_API_SSA_MAX_MANAGERS];
	size_t n = 0, total = 0;
	k32_status_t st = K32_OK;
	memset(found, 0, sizeof(found));

	if (!cJSON_IsArray(mf)) {
		cJSON_Delete(mf);
		mf = cJSON_CreateArray();
	}
	if (!mf)
		return api_fail_set(f, 500, "InternalError", "apply: out of memory");
	ssa_prune(mf);
	if (!mf->child) {
		/* never applied: what is there now belongs to before-first-apply */
		cJSON *bfa = ssa_entry_new(mf, SSA_BFA, "Update", NULL, cx);
		cJSON *fs = api_ssa_fields(obj, cx->skip_status);
		if (!bfa || !fs) {
			cJSON_Delete(fs);
			st = api_fail_set(f, 500, "InternalError", "apply: out of memory");
			goto out;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(bfa, "fieldsV1", fs);
		ssa_prune(mf);
	}
	newfs = api_ssa_fields(config, cx->skip_status);
	cfg = cJSON_Duplicate(config, true);
	if (!newfs || !cfg) {
		st = api_fail_set(f, 500, "InternalError", "apply: out of memory");
		goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(cfg, "metadata"),
						"managedFields");
	/* conflicts with every other entry */
	cJSON *mine = NULL, *e;
	cJSON_ArrayForEach(e, mf)
	{
		if (ssa_entry_is(e, cx->manager, "Apply", NULL)) {
			mine = e;
			continue;
		}
		if (n >= K32_API_SSA_MAX_MANAGERS) {
			st = api_fail_set(f, 422, "Invalid",
					  "apply: the object already has %d field managers "
					  "(K32_API_SSA_MAX_MANAGERS); remove some from "
					  "metadata.managedFields",
					  K32_API_SSA_MAX_MANAGERS);
			goto out;
		}
		struct ssa_conflicts cc = {obj, cfg, ssa_entry_fs(e), cJSON_CreateObject(), 0};
		struct ssa_path p = {.n = 0};
		entries[n] = e;
		found[n] = cc.found;
		n++;
		if (!cc.owner_fs || !cc.found || !ssa_walk(newfs, &p, ssa_conflict_leaf, &cc)) {
			st = api_fail_set(f, 500, "InternalError", "apply: out of memory");
			goto out;
		}
		total += cc.count;
	}
	if (total && !cx->force) {
		st = ssa_fail_conflicts(f, entries, found, n, total);
		goto out;
	}
	for (size_t i = 0; total && i < n; i++) { /* force: the conflicting fields move */
		struct ssa_removefs r = {ssa_entry_fs(entries[i])};
		struct ssa_path p = {.n = 0};
		ssa_walk(found[i], &p, ssa_del_leaf, &r);
	}
	/* what this manager applied before and applies no more, and nobody else owns, goes */
	if (mine) {
		struct ssa_collect c = {.dst = cJSON_CreateObject(), .ok = true};
		struct ssa_path p = {.n = 0};
		rm = c.dst;
		c.not_in[c.not_n++] = newfs;
		for (size_t i = 0; i < n && c.not_n < 8; i++)
			c.not_in[c.not_n++] =
			    cJSON_GetObjectItemCaseSensitive(entries[i], "fieldsV1");
		if (!rm || !ssa_walk(ssa_entry_fs(mine), &p, ssa_collect_leaf, &c) || !c.ok) {
			st = api_fail_set(f, 500, "InternalError", "apply: out of memory");
			goto out;
		}
		struct ssa_remove r = {obj, true};
		ssa_walk(rm, &p, ssa_remove_leaf, &r);
		r.items = false;
		ssa_walk(rm, &p, ssa_remove_leaf, &r);
	}
	/* the configuration merged in */
	st = api_patch_apply(API_PATCH_STRATEGIC, live, cfg, f);
	if (st)
		goto out;
	obj = *live;
	if (!mine)
		mine = ssa_entry_new(mf, cx->manager, "Apply", NULL, cx);
	if (!mine) {
		st = api_fail_set(f, 500, "InternalError", "apply: out of memory");
		goto out;
	}
	if (!cJSON_Compare(ssa_entry_fs(mine), newfs, true)) {
		cJSON_ReplaceItemInObjectCaseSensitive(mine, "fieldsV1", newfs);
		newfs = NULL;
		ssa_touch(mine, cx);
	}
	ssa_prune(mf);
out:
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(found[i]);
	cJSON_Delete(newfs);
	cJSON_Delete(rm);
	cJSON_Delete(cfg);
	md = ssa_meta(*live);
	if (md && mf && cJSON_AddItemToObject(md, "managedFields", mf))
		mf = NULL;
	cJSON_Delete(mf);
	return st;
}

k32_status_t api_ssa_create(cJSON *obj, const cJSON *config, const struct api_ssa_ctx *cx,
			    struct api_fail *f)
{
	cJSON *md = ssa_meta(obj);
	cJSON *mf = cJSON_CreateArray();
	cJSON *e = mf ? ssa_entry_new(mf, cx->manager, "Apply", NULL, cx) : NULL;
	cJSON *fs = api_ssa_fields(config, cx->skip_status);
	if (!md || !e || !fs) {
		cJSON_Delete(mf);
		cJSON_Delete(fs);
		return api_fail_set(f, 500, "InternalError", "apply: out of memory");
	}
	cJSON_ReplaceItemInObjectCaseSensitive(e, "fieldsV1", fs);
	ssa_prune(mf);
	cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
	if (!cJSON_AddItemToObject(md, "managedFields", mf)) {
		cJSON_Delete(mf);
		return api_fail_set(f, 500, "InternalError", "apply: out of memory");
	}
	return K32_OK;
}

/* ---- update ---------------------------------------------------------------------------- */

struct ssa_changed {
	const cJSON *old, *upd;
	cJSON *changed; /* leaves whose value the writer set or changed */
	bool ok;
};

static bool ssa_changed_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_changed *c = ctx;
	const char *last = p->e[p->n - 1];
	const cJSON *a = ssa_value(c->old, p, p->n);
	bool presence = ssa_kind(last) == '.' || ssa_kind(last) == 'v';
	if (!a || (!presence && !cJSON_Compare(a, ssa_value(c->upd, p, p->n), true)))
		c->ok = ssa_put(c->changed, p);
	return c->ok;
}

struct ssa_gone {
	const cJSON *upd;
	cJSON *gone;
	bool ok;
};

static bool ssa_gone_leaf(void *ctx, const struct ssa_path *p)
{
	struct ssa_gone *g = ctx;
	if (!ssa_value(g->upd, p, p->n))
		g->ok = ssa_put(g->gone, p);
	return g->ok;
}

k32_status_t api_ssa_update(const cJSON *old, cJSON *upd, const struct api_ssa_ctx *cx,
			    const char *subresource, struct api_fail *f)
{
	cJSON *umd = ssa_meta(upd);
	const cJSON *omf = k32_json_find(old, "metadata.managedFields");
	if (!umd)
		return api_fail_set(f, 500, "InternalError", "update: out of memory");
	/* what a client sends in managedFields is never taken as is */
	cJSON_DeleteItemFromObjectCaseSensitive(umd, "managedFields");
	if (!cJSON_IsArray(omf) || !omf->child)
		return K32_OK; /* never applied: not tracked */
	cJSON *mf = cJSON_Duplicate(omf, true);
	cJSON *newfs = api_ssa_fields(upd, false);
	struct ssa_changed ch = {old, upd, cJSON_CreateObject(), true};
	struct ssa_path p = {.n = 0};
	k32_status_t st = K32_OK;
	if (!mf || !newfs || !ch.changed || !ssa_walk(newfs, &p, ssa_changed_leaf, &ch) || !ch.ok) {
		st = api_fail_set(f, 500, "InternalError", "update: out of memory");
		goto out;
	}
	cJSON *e, *mine = NULL;
	bool touched = false;
	cJSON_ArrayForEach(e, mf)
	{
		cJSON *fs = ssa_entry_fs(e);
		if (!fs)
			continue;
		/* fields that left the object leave every entry */
		struct ssa_gone g = {upd, cJSON_CreateObject(), true};
		struct ssa_path q = {.n = 0};
		if (!g.gone || !ssa_walk(fs, &q, ssa_gone_leaf, &g) || !g.ok) {
			cJSON_Delete(g.gone);
			st = api_fail_set(f, 500, "InternalError", "update: out of memory");
			goto out;
		}
		struct ssa_removefs r = {fs};
		touched |= g.gone->child != NULL;
		ssa_walk(g.gone, &q, ssa_del_leaf, &r);
		cJSON_Delete(g.gone);
		if (ssa_entry_is(e, cx->manager, "Update", subresource)) {
			mine = e;
			continue;
		}
		/* what the writer changed, the others lose */
		r.fs = fs;
		ssa_walk(ch.changed, &q, ssa_del_leaf, &r);
	}
	if (ch.changed->child) {
		if (!mine)
			mine = ssa_entry_new(mf, cx->manager, "Update", subresource, cx);
		struct ssa_collect c = {.dst = mine ? ssa_entry_fs(mine) : NULL, .ok = true};
		struct ssa_path q = {.n = 0};
		if (!c.dst || !ssa_walk(ch.changed, &q, ssa_collect_leaf, &c) || !c.ok) {
			st = api_fail_set(f, 500, "InternalError", "update: out of memory");
			goto out;
		}
		ssa_touch(mine, cx);
		touched = true;
	}
	ssa_prune(mf);
	if (!touched) { /* nothing moved: the stored entries, byte for byte */
		cJSON_Delete(mf);
		mf = cJSON_Duplicate(omf, true);
	}
	if (mf && cJSON_AddItemToObject(umd, "managedFields", mf))
		mf = NULL;
	else
		st = api_fail_set(f, 500, "InternalError", "update: out of memory");
out:
	cJSON_Delete(mf);
	cJSON_Delete(newfs);
	cJSON_Delete(ch.changed);
	return st;
}
