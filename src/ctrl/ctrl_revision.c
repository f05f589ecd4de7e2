/*
 * ctrl_revision.c - a DaemonSet's history as ControllerRevisions (apps/v1), as
 * kube-controller-manager keeps it, so `kubectl rollout history daemonset/x` lists the
 * revisions and `kubectl rollout undo daemonset/x` restores one.
 *
 * Each template a DaemonSet has had is one ControllerRevision it controls, named
 * <daemonset>-<hash>, labelled with the template's labels and controller-revision-hash, with
 * `data` = {"spec":{"template":{<template>,"$patch":"replace"}}} (the strategic merge patch
 * kubectl applies on undo) and `revision` counting up. When the template comes back to an
 * earlier one (an undo), that revision is found by content and renumbered as the newest, as
 * upstream does, so its hash (and its pods) count as current again. Revisions past
 * spec.revisionHistoryLimit (default 10) are deleted, oldest first, never the current one.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define REV_HASH_LABEL "controller-revision-hash"

/* The template a revision records (data.spec.template without the $patch directive). */
static bool rev_same_template(const cJSON *rev, const cJSON *tmpl)
{
	const cJSON *t = k32_json_find(rev, "data.spec.template");
	if (!cJSON_IsObject(t))
		return false;
	cJSON *copy = cJSON_Duplicate(t, true);
	if (!copy)
		return false;
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "$patch");
	bool same = cJSON_Compare(copy, tmpl, true);
	cJSON_Delete(copy);
	return same;
}

static void rev_target(const cJSON *rev, char *out, size_t cap)
{
	snprintf(out, cap, "/apis/apps/v1/namespaces/%s/controllerrevisions/%s",
		 ctrl_jstr(rev, "metadata.namespace"), ctrl_jstr(rev, "metadata.name"));
}

/* Creates the revision of tmpl numbered number; true when it exists afterwards. */
static bool rev_create(struct ctrl *c, const cJSON *ds, const cJSON *tmpl, const char *hash,
		       int64_t number)
{
	const char *ns = ctrl_jstr(ds, "metadata.namespace");
	char name[CTRL_NAME_LEN], path[400];
	snprintf(name, sizeof(name), "%.200s-%s", ctrl_jstr(ds, "metadata.name"), hash);
	cJSON *rev = cJSON_CreateObject();
	cJSON *md = rev ? cJSON_AddObjectToObject(rev, "metadata") : NULL;
	cJSON *labels = md ? cJSON_AddObjectToObject(md, "labels") : NULL;
	cJSON *data = rev ? cJSON_AddObjectToObject(rev, "data") : NULL;
	cJSON *spec = data ? cJSON_AddObjectToObject(data, "spec") : NULL;
	cJSON *t = tmpl ? cJSON_Duplicate(tmpl, true) : NULL;
	bool ok = false;
	if (labels && spec && t) {
		cJSON_AddStringToObject(rev, "apiVersion", "apps/v1");
		cJSON_AddStringToObject(rev, "kind", "ControllerRevision");
		cJSON_AddStringToObject(md, "name", name);
		cJSON_AddStringToObject(md, "namespace", ns);
		const cJSON *l;
		cJSON_ArrayForEach(l, k32_json_find(tmpl, "metadata.labels"))
		{
			if (cJSON_IsString(l))
				cJSON_AddStringToObject(labels, l->string, l->valuestring);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(labels, REV_HASH_LABEL);
		cJSON_AddStringToObject(labels, REV_HASH_LABEL, hash);
		cJSON_AddItemToObject(md, "ownerReferences",
				      ctrl_owner_ref(ds, "apps/v1", "DaemonSet"));
		cJSON_AddStringToObject(t, "$patch", "replace");
		cJSON_AddItemToObject(spec, "template", t);
		t = NULL;
		cJSON_AddNumberToObject(rev, "revision", (double)number);
		snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/controllerrevisions", ns);
		int code = ctrl_charge(c) ? ctrl_write(c, "POST", path, NULL, rev, NULL) : 0;
		ok = code == 201 || code == 409;
	}
	cJSON_Delete(t);
	cJSON_Delete(rev);
	return ok;
}

bool ctrl_ds_revision(struct ctrl *c, const cJSON *ds, char *hash, size_t cap)
{
	const char *ns = ctrl_jstr(ds, "metadata.namespace");
	const char *uid = ctrl_jstr(ds, "metadata.uid");
	const cJSON *tmpl = k32_json_find(ds, "spec.template");
	ctrl_hash_json(tmpl, hash, cap);
	char path[400];
	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/controllerrevisions", ns);
	cJSON *revs = ns && uid ? ctrl_list_array(c, path, uid) : NULL;
	if (!revs)
		return false;
	int64_t max = 0;
	const cJSON *r, *cur = NULL;
	cJSON_ArrayForEach(r, revs)
	{
		int64_t n = ctrl_jint(r, "revision", 0);
		if (n > max)
			max = n;
		if (!cur && !ctrl_deleting(r) && rev_same_template(r, tmpl))
			cur = r;
	}
	bool ok = true;
	if (cur) {
		/* the template came back to this one: its hash, renumbered as the newest */
		const char *h = ctrl_label(k32_json_find(cur, "metadata.labels"), REV_HASH_LABEL);
		if (h)
			snprintf(hash, cap, "%s", h);
		if (ctrl_jint(cur, "revision", 0) < max && ctrl_charge(c)) {
			char target[600], patch[64];
			rev_target(cur, target, sizeof(target));
			snprintf(patch, sizeof(patch), "{\"revision\":%" PRId64 "}", max + 1);
			cJSON *body = cJSON_Parse(patch);
			ctrl_write(c, "PATCH", target, "application/merge-patch+json", body, NULL);
			cJSON_Delete(body);
		}
	} else {
		ok = rev_create(c, ds, tmpl, hash, max + 1);
	}
	/* history past the limit: the oldest go, never the current one */
	int64_t limit = ctrl_jint(ds, "spec.revisionHistoryLimit", 10);
	int64_t count = cJSON_GetArraySize(revs) + (cur ? 0 : 1);
	while (count > limit + 1) { /* the limit counts old revisions, not the current one */
		const cJSON *oldest = NULL;
		cJSON_ArrayForEach(r, revs)
		{
			if (r == cur || ctrl_deleting(r) ||
			    cJSON_IsTrue(cJSON_GetObjectItem(r, "k32_gone")))
				continue;
			if (!oldest ||
			    ctrl_jint(r, "revision", 0) < ctrl_jint(oldest, "revision", 0))
				oldest = r;
		}
		if (!oldest || !ctrl_charge(c))
			break;
		char target[600];
		rev_target(oldest, target, sizeof(target));
		ctrl_write(c, "DELETE", target, NULL, NULL, NULL);
		cJSON_AddTrueToObject((cJSON *)oldest, "k32_gone");
		count--;
	}
	cJSON_Delete(revs);
	return ok;
}
