/*
 * kmeta_obj.c - reading and writing the common parts of Kubernetes objects: string fields,
 * status conditions and owner references, one way for every module.
 */
#include "kmeta/kmeta.h"

#include <string.h>

const char *kmeta_jstr(const cJSON *o, const char *path)
{
	const cJSON *it = o ? k32_json_find(o, path) : NULL;
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

cJSON *kmeta_cond_find(const cJSON *conds, const char *type)
{
	cJSON *cd;
	cJSON_ArrayForEach(cd, conds)
	{
		const char *t = kmeta_jstr(cd, "type");
		if (t && !strcmp(t, type))
			return cd;
	}
	return NULL;
}

const char *kmeta_cond_status(const cJSON *o, const char *type)
{
	return kmeta_jstr(kmeta_cond_find(k32_json_find(o, "status.conditions"), type), "status");
}

/* Sets o[key] to the string v, replacing what is there. false when out of memory. */
/* Sets o[key] to the string v; v NULL removes the key. */
static bool set_str(cJSON *o, const char *key, const char *v)
{
	if (!v) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		return true;
	}
	cJSON *s = cJSON_CreateString(v);
	if (!s)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, s);
	return cJSON_AddItemToObject(o, key, s);
}

static bool str_differs(const cJSON *o, const char *key, const char *v)
{
	const char *cur = kmeta_jstr(o, key);
	if (!v)
		return cur != NULL;
	return !cur || strcmp(cur, v);
}

bool kmeta_cond_set(cJSON *status, const char *type, const char *st, const char *reason,
		    const char *msg, const char *now, bool with_update)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conds = cJSON_AddArrayToObject(status, "conditions");
		if (!conds)
			return false;
	}
	cJSON *cd = kmeta_cond_find(conds, type);
	if (!cd) {
		cd = cJSON_CreateObject();
		if (!cd)
			return false;
		cJSON_AddItemToArray(conds, cd);
		set_str(cd, "type", type);
	}
	bool st_changed = str_differs(cd, "status", st);
	if (!st_changed && !str_differs(cd, "reason", reason) && !str_differs(cd, "message", msg))
		return false;
	set_str(cd, "status", st);
	set_str(cd, "reason", reason);
	set_str(cd, "message", msg);
	if (st_changed || !kmeta_jstr(cd, "lastTransitionTime"))
		set_str(cd, "lastTransitionTime", now);
	if (with_update)
		set_str(cd, "lastUpdateTime", now);
	return true;
}

const char *kmeta_controller_uid(const cJSON *o)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, k32_json_find(o, "metadata.ownerReferences"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")))
			return kmeta_jstr(r, "uid");
	}
	return NULL;
}

cJSON *kmeta_owner_refs(const cJSON *owner, const char *api_version, const char *kind)
{
	cJSON *arr = cJSON_CreateArray();
	cJSON *r = cJSON_CreateObject();
	if (!arr || !r) {
		cJSON_Delete(arr);
		cJSON_Delete(r);
		return NULL;
	}
	cJSON_AddItemToArray(arr, r);
	const char *name = kmeta_jstr(owner, "metadata.name");
	const char *uid = kmeta_jstr(owner, "metadata.uid");
	if (!cJSON_AddStringToObject(r, "apiVersion", api_version) ||
	    !cJSON_AddStringToObject(r, "kind", kind) ||
	    !cJSON_AddStringToObject(r, "name", name ? name : "") ||
	    !cJSON_AddStringToObject(r, "uid", uid ? uid : "") ||
	    !cJSON_AddTrueToObject(r, "controller") ||
	    !cJSON_AddTrueToObject(r, "blockOwnerDeletion")) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}
