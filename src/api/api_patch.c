/*
 * api_patch.c - JSON merge patch (RFC 7386), strategic merge patch, JSON patch (RFC 6902).
 *
 * Strategic merge: like merge patch, except that lists of the built-in types with a merge
 * key are merged item by item (containers/env/volumes... by name, volumeMounts by mountPath,
 * ports by containerPort, conditions by type, ownerReferences by uid), finalizers are merged
 * as a set, and the directives kubectl sends are honoured: `$setElementOrder/<list>` (order
 * of the result; never stored), `$patch: delete|replace|merge`, `$retainKeys`,
 * `$deleteFromPrimitiveList/<list>`. Other lists are atomic (replaced), as upstream does for
 * tolerations, args, command.
 *
 * Every patch is applied to a copy, so a failing patch leaves the document unchanged.
 * Nesting is bounded by K32_API_MAX_DEPTH (the recursion carries its depth). Reentrant.
 */
#include "api/api_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const struct { const char *list; const char *key; } api_merge_keys[] = {
	{"containers", "name"}, {"initContainers", "name"}, {"ephemeralContainers", "name"},
	{"env", "name"}, {"volumes", "name"}, {"imagePullSecrets", "name"},
	{"volumeMounts", "mountPath"}, {"volumeDevices", "devicePath"},
	{"ports", "containerPort"}, {"conditions", "type"}, {"ownerReferences", "uid"},
	{"hostAliases", "ip"}, {"addresses", "type"},
};
/* clang-format on */

const char *api_patch_merge_key(const char *list)
{
	for (size_t i = 0; i < sizeof(api_merge_keys) / sizeof(api_merge_keys[0]); i++)
		if (!strcmp(api_merge_keys[i].list, list))
			return api_merge_keys[i].key;
	return NULL;
}

/* Puts v under key k of o (replacing an existing key); on failure (the key copy could not
 * be allocated) v is freed and false returned, so no caller leaks it. */
static bool api_obj_put(cJSON *o, const char *k, cJSON *v)
{
	bool ok = cJSON_GetObjectItemCaseSensitive(o, k)
		      ? cJSON_ReplaceItemInObjectCaseSensitive(o, k, v)
		      : cJSON_AddItemToObject(o, k, v);
	if (!ok)
		cJSON_Delete(v);
	return ok;
}

static bool api_is_directive(const char *k)
{
	return k && k[0] == '$';
}

/* A deep copy of v without directive keys (at any depth). */
static cJSON *api_copy_clean(const cJSON *v, int depth)
{
	if (depth > K32_API_MAX_DEPTH)
		return NULL;
	if (cJSON_IsObject(v)) {
		cJSON *o = cJSON_CreateObject();
		const cJSON *c;
		cJSON_ArrayForEach(c, v)
		{
			if (!o || api_is_directive(c->string) || cJSON_IsNull(c))
				continue;
			cJSON *cc = api_copy_clean(c, depth + 1);
			if (!cc) {
				cJSON_Delete(o);
				return NULL;
			}
			if (!api_obj_put(o, c->string, cc)) {
				cJSON_Delete(o);
				return NULL;
			}
		}
		return o;
	}
	if (cJSON_IsArray(v)) {
		cJSON *a = cJSON_CreateArray();
		const cJSON *c;
		cJSON_ArrayForEach(c, v)
		{
			cJSON *cc = a ? api_copy_clean(c, depth + 1) : NULL;
			if (!cc) {
				cJSON_Delete(a);
				return NULL;
			}
			cJSON_AddItemToArray(a, cc);
		}
		return a;
	}
	return cJSON_Duplicate(v, false);
}

static k32_status_t api_patch_depth(struct api_fail *f)
{
	return api_fail_set(
	    f, 400, "BadRequest",
	    "patch nests deeper than %d levels (K32_API_MAX_DEPTH); flatten the patch",
	    K32_API_MAX_DEPTH);
}

static k32_status_t api_patch_nomem(struct api_fail *f)
{
	return api_fail_set(f, 500, "InternalError",
			    "applying a patch: out of memory; retry later");
}

static k32_status_t api_merge_obj(cJSON *target, const cJSON *patch, bool smp, int depth,
				  struct api_fail *f);

/* Item of list whose merge key equals that of item, or NULL. */
static cJSON *api_find_by_key(cJSON *list, const char *key, const cJSON *item)
{
	const cJSON *kv = cJSON_GetObjectItemCaseSensitive(item, key);
	cJSON *c;
	if (!kv)
		return NULL;
	cJSON_ArrayForEach(c, list)
	{
		const cJSON *ck = cJSON_GetObjectItemCaseSensitive(c, key);
		if (ck && cJSON_Compare(ck, kv, true))
			return c;
	}
	return NULL;
}

static k32_status_t api_merge_list(cJSON *target, const char *name, const cJSON *patch, int depth,
				   struct api_fail *f)
{
	const char *key = api_patch_merge_key(name);
	cJSON *cur = cJSON_GetObjectItemCaseSensitive(target, name);
	bool primitive_set = !strcmp(name, "finalizers");
	if ((!key && !primitive_set) || !cJSON_IsArray(cur)) {
		cJSON *copy = api_copy_clean(patch, depth);
		if (!copy)
			return api_patch_nomem(f);
		/* a list item `{"$patch":"replace"}` marker alone is dropped by copy_clean */
		if (!api_obj_put(target, name, copy))
			return api_patch_nomem(f);
		return K32_OK;
	}
	const cJSON *item;
	cJSON_ArrayForEach(item, patch)
	{
		if (primitive_set) {
			bool have = false;
			const cJSON *c;
			cJSON_ArrayForEach(c, cur) have = have || cJSON_Compare(c, item, true);
			if (!have)
				if (!cJSON_AddItemToArray(cur, cJSON_Duplicate(item, true)))
					return api_patch_nomem(f);
			continue;
		}
		if (!cJSON_IsObject(item))
			return api_fail_set(f, 400, "BadRequest",
					    "strategic merge patch: list %s holds a non-object "
					    "item; items need the merge key \"%s\"",
					    name, key);
		const cJSON *pd = cJSON_GetObjectItemCaseSensitive(item, "$patch");
		if (cJSON_IsString(pd) && !strcmp(pd->valuestring, "replace")) {
			cJSON *copy = api_copy_clean(patch, depth);
			if (!copy)
				return api_patch_nomem(f);
			if (!api_obj_put(target, name, copy))
				return api_patch_nomem(f);
			return K32_OK;
		}
		cJSON *match = api_find_by_key(cur, key, item);
		if (cJSON_IsString(pd) && !strcmp(pd->valuestring, "delete")) {
			if (match)
				cJSON_Delete(cJSON_DetachItemViaPointer(cur, match));
			continue;
		}
		if (match) {
			k32_status_t st = api_merge_obj(match, item, true, depth + 1, f);
			if (st)
				return st;
		} else {
			cJSON *copy = api_copy_clean(item, depth);
			if (!copy)
				return api_patch_nomem(f);
			cJSON_AddItemToArray(cur, copy);
		}
	}
	return K32_OK;
}

/* Applies `$setElementOrder/<name>`: listed items first, in that order; the rest after.
 * Items are re-linked through a container on the stack, so this never allocates. */
static void api_set_order(cJSON *target, const char *name, const cJSON *order)
{
	cJSON *cur = cJSON_GetObjectItemCaseSensitive(target, name);
	const char *key = api_patch_merge_key(name);
	if (!cJSON_IsArray(cur) || !cJSON_IsArray(order))
		return;
	cJSON sorted = {0};
	sorted.type = cJSON_Array;
	const cJSON *o;
	cJSON_ArrayForEach(o, order)
	{
		cJSON *m = NULL, *c;
		if (key && cJSON_IsObject(o)) {
			m = api_find_by_key(cur, key, o);
		} else {
			cJSON_ArrayForEach(c, cur)
			{
				if (cJSON_Compare(c, o, true)) {
					m = c;
					break;
				}
			}
		}
		if (m)
			cJSON_AddItemToArray(&sorted, cJSON_DetachItemViaPointer(cur, m));
	}
	while (cur->child)
		cJSON_AddItemToArray(&sorted, cJSON_DetachItemViaPointer(cur, cur->child));
	while (sorted.child)
		cJSON_AddItemToArray(cur, cJSON_DetachItemViaPointer(&sorted, sorted.child));
}

static k32_status_t api_merge_obj(cJSON *target, const cJSON *patch, bool smp, int depth,
				  struct api_fail *f)
{
	if (depth > K32_API_MAX_DEPTH)
		return api_patch_depth(f);
	const cJSON *p;
	if (smp) {
		const cJSON *pd = cJSON_GetObjectItemCaseSensitive(patch, "$patch");
		if (cJSON_IsString(pd) && !strcmp(pd->valuestring, "replace")) {
			while (target->child)
				cJSON_Delete(cJSON_DetachItemViaPointer(target, target->child));
		}
	}
	cJSON_ArrayForEach(p, patch)
	{
		const char *k = p->string;
		if (smp && api_is_directive(k)) {
			static const char dfpl[] = "$deleteFromPrimitiveList/";
			if (!strncmp(k, dfpl, sizeof(dfpl) - 1)) {
				cJSON *cur =
				    cJSON_GetObjectItemCaseSensitive(target, k + sizeof(dfpl) - 1);
				const cJSON *v;
				cJSON_ArrayForEach(v, p)
				{
					cJSON *c = cur ? cur->child : NULL;
					while (c) {
						cJSON *next = c->next;
						if (cJSON_Compare(c, v, true))
							cJSON_Delete(
							    cJSON_DetachItemViaPointer(cur, c));
						c = next;
					}
				}
			} else if (strcmp(k, "$patch") && strcmp(k, "$retainKeys") &&
				   strncmp(k, "$setElementOrder/", 17)) {
				return api_fail_set(
				    f, 400, "BadRequest",
				    "strategic merge patch: unknown directive \"%s\"", K32_CLIP(k));
			}
			continue;
		}
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, k);
			continue;
		}
		cJSON *cur = cJSON_GetObjectItemCaseSensitive(target, k);
		if (cJSON_IsObject(p)) {
			const cJSON *pd =
			    smp ? cJSON_GetObjectItemCaseSensitive(p, "$patch") : NULL;
			if (cJSON_IsString(pd) && !strcmp(pd->valuestring, "delete")) {
				cJSON_DeleteItemFromObjectCaseSensitive(target, k);
				continue;
			}
			if (!cJSON_IsObject(cur)) {
				cJSON_DeleteItemFromObjectCaseSensitive(target, k);
				cur = cJSON_AddObjectToObject(target, k);
				if (!cur)
					return api_patch_nomem(f);
			}
			k32_status_t st = api_merge_obj(cur, p, smp, depth + 1, f);
			if (st)
				return st;
			continue;
		}
		if (smp && cJSON_IsArray(p)) {
			k32_status_t st = api_merge_list(target, k, p, depth + 1, f);
			if (st)
				return st;
			continue;
		}
		cJSON *copy = cJSON_Duplicate(p, true);
		if (!copy)
			return api_patch_nomem(f);
		if (!api_obj_put(target, k, copy))
			return api_patch_nomem(f);
	}
	if (smp) {
		cJSON_ArrayForEach(p, patch)
		{
			if (p->string && !strncmp(p->string, "$setElementOrder/", 17))
				api_set_order(target, p->string + 17, p);
		}
		const cJSON *rk = cJSON_GetObjectItemCaseSensitive(patch, "$retainKeys");
		if (cJSON_IsArray(rk)) {
			cJSON *c = target->child;
			while (c) {
				cJSON *next = c->next;
				bool keep = false;
				const cJSON *r;
				cJSON_ArrayForEach(r, rk) keep =
				    keep ||
				    (cJSON_IsString(r) && !strcmp(r->valuestring, c->string));
				if (!keep)
					cJSON_Delete(cJSON_DetachItemViaPointer(target, c));
				c = next;
			}
		}
	}
	return K32_OK;
}

/* ---- JSON patch (RFC 6902) ------------------------------------------------------------- */

/* Decodes the next reference token of a JSON pointer into tok. Returns the rest or NULL. */
static const char *api_ptr_next(const char *p, char *tok, size_t cap, bool *ok)
{
	size_t n = 0;
	*ok = true;
	if (*p != '/') {
		*ok = false;
		return NULL;
	}
	p++;
	while (*p && *p != '/') {
		char c = *p++;
		if (c == '~') {
			if (*p == '0')
				c = '~';
			else if (*p == '1')
				c = '/';
			else {
				*ok = false;
				return NULL;
			}
			p++;
		}
		if (n + 1 >= cap) {
			*ok = false;
			return NULL;
		}
		tok[n++] = c;
	}
	tok[n] = 0;
	return p;
}

static bool api_parse_index(const char *tok, int size, bool allow_end, int *out)
{
	if (allow_end && !strcmp(tok, "-")) {
		*out = size;
		return true;
	}
	if (!tok[0] || (tok[0] == '0' && tok[1]))
		return false;
	long v = 0;
	for (const char *q = tok; *q; q++) {
		if (*q < '0' || *q > '9')
			return false;
		v = v * 10 + (*q - '0');
		if (v > 1000000)
			return false;
	}
	if (v > size || (!allow_end && v == size))
		return false;
	*out = (int)v;
	return true;
}

/* Resolves the parent container of path; *out_tok gets the last token. */
static k32_status_t api_ptr_parent(cJSON *doc, const char *path, cJSON **out_parent, char *tok,
				   size_t cap, struct api_fail *f)
{
	cJSON *cur = doc;
	const char *p = path;
	int depth = 0;
	bool ok;
	for (;;) {
		const char *rest = api_ptr_next(p, tok, cap, &ok);
		if (!ok)
			return api_fail_set(f, 422, "Invalid", "json patch: invalid path \"%s\"",
					    K32_CLIP(path));
		if (!*rest) {
			*out_parent = cur;
			return K32_OK;
		}
		if (++depth > K32_API_MAX_DEPTH)
			return api_patch_depth(f);
		cJSON *next = NULL;
		int idx;
		if (cJSON_IsObject(cur))
			next = cJSON_GetObjectItemCaseSensitive(cur, tok);
		else if (cJSON_IsArray(cur) &&
			 api_parse_index(tok, cJSON_GetArraySize(cur), false, &idx))
			next = cJSON_GetArrayItem(cur, idx);
		if (!next)
			return api_fail_set(f, 422, "Invalid",
					    "json patch: path \"%s\" does not exist (at \"%s\")",
					    K32_CLIP(path), K32_CLIP(tok));
		cur = next;
		p = rest;
	}
}

static cJSON *api_ptr_get(cJSON *doc, const char *path, struct api_fail *f)
{
	char tok[128];
	cJSON *parent;
	if (!path[0])
		return doc;
	if (api_ptr_parent(doc, path, &parent, tok, sizeof(tok), f))
		return NULL;
	int idx;
	cJSON *v = NULL;
	if (cJSON_IsObject(parent))
		v = cJSON_GetObjectItemCaseSensitive(parent, tok);
	else if (cJSON_IsArray(parent) &&
		 api_parse_index(tok, cJSON_GetArraySize(parent), false, &idx))
		v = cJSON_GetArrayItem(parent, idx);
	if (!v)
		api_fail_set(f, 422, "Invalid", "json patch: path \"%s\" does not exist",
			     K32_CLIP(path));
	return v;
}

/* Removes the value at path and returns it detached (NULL + f on error). */
static cJSON *api_ptr_detach(cJSON *doc, const char *path, struct api_fail *f)
{
	char tok[128];
	cJSON *parent;
	if (!path[0]) {
		api_fail_set(f, 422, "Invalid", "json patch: cannot remove the whole document");
		return NULL;
	}
	if (api_ptr_parent(doc, path, &parent, tok, sizeof(tok), f))
		return NULL;
	int idx;
	cJSON *v = NULL;
	if (cJSON_IsObject(parent))
		v = cJSON_DetachItemFromObjectCaseSensitive(parent, tok);
	else if (cJSON_IsArray(parent) &&
		 api_parse_index(tok, cJSON_GetArraySize(parent), false, &idx))
		v = cJSON_DetachItemFromArray(parent, idx);
	if (!v)
		api_fail_set(f, 422, "Invalid", "json patch: path \"%s\" does not exist",
			     K32_CLIP(path));
	return v;
}

/* Inserts val before index idx (< size). Debian's cJSON 1.7.15 cJSON_InsertItemInArray
 * refuses some valid arrays, so the items are re-linked by hand through detach/add. */
static void api_array_insert(cJSON *arr, int idx, cJSON *val)
{
	cJSON tail = {0};
	tail.type = cJSON_Array;
	while (cJSON_GetArraySize(arr) > idx)
		cJSON_AddItemToArray(&tail, cJSON_DetachItemFromArray(arr, idx));
	cJSON_AddItemToArray(arr, val);
	while (tail.child)
		cJSON_AddItemToArray(arr, cJSON_DetachItemViaPointer(&tail, tail.child));
}

/* Adds val (owned) at path; replaces the whole doc when path is "". */
static k32_status_t api_ptr_add(cJSON **doc, const char *path, cJSON *val, bool replace,
				struct api_fail *f)
{
	char tok[128];
	cJSON *parent;
	if (!path[0]) {
		cJSON_Delete(*doc);
		*doc = val;
		return K32_OK;
	}
	k32_status_t st = api_ptr_parent(*doc, path, &parent, tok, sizeof(tok), f);
	if (st)
		goto out_free;
	if (cJSON_IsObject(parent)) {
		bool has = cJSON_GetObjectItemCaseSensitive(parent, tok) != NULL;
		if (replace && !has) {
			st = api_fail_set(f, 422, "Invalid",
					  "json patch: replace of missing path \"%s\"",
					  K32_CLIP(path));
			goto out_free;
		}
		if (!api_obj_put(parent, tok, val))
			return api_patch_nomem(f);
		return K32_OK;
	}
	int idx, size = cJSON_GetArraySize(parent);
	if (!cJSON_IsArray(parent) || !api_parse_index(tok, size, !replace, &idx)) {
		st = api_fail_set(f, 422, "Invalid", "json patch: path \"%s\" does not exist",
				  K32_CLIP(path));
		goto out_free;
	}
	if (replace)
		cJSON_ReplaceItemInArray(parent, idx, val);
	else if (idx == size)
		cJSON_AddItemToArray(parent, val);
	else
		api_array_insert(parent, idx, val);
	return K32_OK;
out_free:
	cJSON_Delete(val);
	return st;
}

static k32_status_t api_json_patch(cJSON **doc, const cJSON *ops, struct api_fail *f)
{
	if (!cJSON_IsArray(ops))
		return api_fail_set(f, 400, "BadRequest",
				    "json patch: body must be an array of operations, found %s",
				    cJSON_IsObject(ops) ? "an object" : "another value");
	const cJSON *op;
	int i = 0;
	cJSON_ArrayForEach(op, ops)
	{
		const cJSON *jo = cJSON_GetObjectItemCaseSensitive(op, "op");
		const cJSON *jp = cJSON_GetObjectItemCaseSensitive(op, "path");
		const cJSON *jv = cJSON_GetObjectItemCaseSensitive(op, "value");
		const cJSON *jf = cJSON_GetObjectItemCaseSensitive(op, "from");
		if (!cJSON_IsString(jo) || !cJSON_IsString(jp))
			return api_fail_set(
			    f, 400, "BadRequest",
			    "json patch: operation %d needs string \"op\" and \"path\"", i);
		const char *o = jo->valuestring, *path = jp->valuestring;
		k32_status_t st = K32_OK;
		if (!strcmp(o, "add") || !strcmp(o, "replace")) {
			if (!jv)
				return api_fail_set(
				    f, 400, "BadRequest",
				    "json patch: operation %d (%s) has no \"value\"", i,
				    K32_CLIP(o));
			cJSON *v = cJSON_Duplicate(jv, true);
			if (!v)
				return api_patch_nomem(f);
			st = api_ptr_add(doc, path, v, o[0] == 'r', f);
		} else if (!strcmp(o, "remove")) {
			cJSON *v = api_ptr_detach(*doc, path, f);
			if (!v)
				return api_status_for_code(f->code);
			cJSON_Delete(v);
		} else if (!strcmp(o, "test")) {
			cJSON *v = api_ptr_get(*doc, path, f);
			if (!v)
				return api_status_for_code(f->code);
			if (!jv || !cJSON_Compare(v, jv, true))
				return api_fail_set(
				    f, 422, "Invalid",
				    "json patch: test operation %d failed at \"%s\"", i,
				    K32_CLIP(path));
		} else if (!strcmp(o, "move") || !strcmp(o, "copy")) {
			if (!cJSON_IsString(jf))
				return api_fail_set(f, 400, "BadRequest",
						    "json patch: operation %d (%s) has no \"from\"",
						    i, K32_CLIP(o));
			cJSON *v;
			if (o[0] == 'm') {
				v = api_ptr_detach(*doc, jf->valuestring, f);
			} else {
				cJSON *src = api_ptr_get(*doc, jf->valuestring, f);
				v = src ? cJSON_Duplicate(src, true) : NULL;
			}
			if (!v)
				return f->code ? api_status_for_code(f->code) : api_patch_nomem(f);
			st = api_ptr_add(doc, path, v, false, f);
		} else {
			return api_fail_set(f, 400, "BadRequest",
					    "json patch: operation %d has unknown op \"%s\" (add, "
					    "remove, replace, move, copy, test)",
					    i, K32_CLIP(o));
		}
		if (st)
			return st;
		i++;
	}
	return K32_OK;
}

k32_status_t api_patch_apply(enum api_patch_type type, cJSON **doc, const cJSON *patch,
			     struct api_fail *f)
{
	cJSON *work = cJSON_Duplicate(*doc, true);
	if (!work)
		return api_patch_nomem(f);
	k32_status_t st;
	if (type == API_PATCH_JSON) {
		st = api_json_patch(&work, patch, f);
	} else if (!cJSON_IsObject(patch)) {
		st = api_fail_set(f, 400, "BadRequest", "%s patch: body must be a JSON object",
				  type == API_PATCH_MERGE ? "merge" : "strategic merge");
	} else {
		if (!cJSON_IsObject(work)) {
			cJSON_Delete(work);
			work = cJSON_CreateObject();
			if (!work)
				return api_patch_nomem(f);
		}
		st = api_merge_obj(work, patch, type != API_PATCH_MERGE, 0, f);
	}
	if (st) {
		cJSON_Delete(work);
		return st;
	}
	cJSON_Delete(*doc);
	*doc = work;
	return K32_OK;
}
