/*
 * api_discovery.c - /version, /api, /apis and the per-group-version resource lists.
 *
 * kubectl 1.32 asks for aggregated discovery first (apidiscovery.k8s.io/v2, then v2beta1)
 * and falls back to the legacy documents; both are built here from the registry. The
 * caller must answer aggregated bodies with the exact Content-Type API_CT_DISC_V2 (or
 * v2beta1): labelled plain JSON, kubectl silently finds no resources (kubectl-api.md §0.3).
 * Every function returns a fresh cJSON tree the caller frees (NULL when out of memory).
 */
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

static const char *const api_verb_names[] = {"create", "delete", "deletecollection", "get",
					     "list",   "patch",	 "update",	     "watch"};

static cJSON *api_verbs_json(uint32_t verbs)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < 8; i++)
		if (verbs & (1u << i))
			cJSON_AddItemToArray(arr, cJSON_CreateString(api_verb_names[i]));
	return arr;
}

static cJSON *api_short_names_json(const struct api_resource *r)
{
	cJSON *arr = cJSON_CreateArray();
	const char *p = r->short_names;
	while (arr && *p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char tmp[16];
		if (n < sizeof(tmp)) {
			memcpy(tmp, p, n);
			tmp[n] = 0;
			cJSON_AddItemToArray(arr, cJSON_CreateString(tmp));
		}
		if (!e)
			break;
		p = e + 1;
	}
	return arr;
}

cJSON *api_discovery_version(void)
{
	cJSON *v = cJSON_CreateObject();
	if (!v)
		return NULL;
	cJSON_AddStringToObject(v, "major", "1");
	cJSON_AddStringToObject(v, "minor", "32");
	cJSON_AddStringToObject(v, "gitVersion", "v1.32.0-kube32");
	cJSON_AddStringToObject(v, "gitCommit", "kube32");
	cJSON_AddStringToObject(v, "gitTreeState", "clean");
	cJSON_AddStringToObject(v, "buildDate", "2026-01-01T00:00:00Z");
	cJSON_AddStringToObject(v, "goVersion", "go1.23 (kube32 is C)");
	cJSON_AddStringToObject(v, "compiler", "gc");
	cJSON_AddStringToObject(v, "platform", "linux/amd64");
	return v;
}

enum api_disc_fmt api_discovery_pick(const char *accept)
{
	if (!accept)
		return API_DISC_LEGACY;
	const char *v2 = strstr(accept, "as=APIGroupDiscoveryList");
	if (!v2)
		return API_DISC_LEGACY;
	/* the first aggregated entry in the Accept list is the client's preference */
	const char *p2 = strstr(accept, "v=v2;");
	const char *pb = strstr(accept, "v=v2beta1");
	if (p2 && (!pb || p2 < pb))
		return API_DISC_V2;
	if (pb)
		return API_DISC_V2BETA1;
	return API_DISC_LEGACY;
}

/* One responseKind object. */
static cJSON *api_gvk(const char *g, const char *v, const char *k)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "group", g);
	cJSON_AddStringToObject(o, "version", v);
	cJSON_AddStringToObject(o, "kind", k);
	return o;
}

struct api_sub_desc {
	uint32_t bit;
	const char *name;
	const char *g, *v, *k; /* k NULL = the resource's own kind */
	uint32_t verbs;
};

/* clang-format off */
static const struct api_sub_desc api_subs[] = {
	{API_SUB_STATUS,   "status",   NULL, NULL, NULL, API_VERB_GET | API_VERB_PATCH | API_VERB_UPDATE},
	{API_SUB_SCALE,    "scale",    "autoscaling", "v1", "Scale", API_VERB_GET | API_VERB_PATCH | API_VERB_UPDATE},
	{API_SUB_BINDING,  "binding",  "", "v1", "Binding", API_VERB_CREATE},
	{API_SUB_EVICTION, "eviction", "policy", "v1", "Eviction", API_VERB_CREATE},
	{API_SUB_LOG,      "log",      "", "v1", "Pod", API_VERB_GET},
	{API_SUB_TOKEN,    "token",    "authentication.k8s.io", "v1", "TokenRequest", API_VERB_CREATE},
};
/* clang-format on */

static cJSON *api_agg_resource(const struct api_resource *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "resource", r->plural);
	api_json_put(o, "responseKind", api_gvk(r->group, r->version, r->kind));
	cJSON_AddStringToObject(o, "scope", r->namespaced ? "Namespaced" : "Cluster");
	cJSON_AddStringToObject(o, "singularResource", r->singular);
	api_json_put(o, "verbs", api_verbs_json(r->verbs));
	if (r->short_names[0])
		api_json_put(o, "shortNames", api_short_names_json(r));
	if (r->in_all) {
		cJSON *c = cJSON_AddArrayToObject(o, "categories");
		cJSON_AddItemToArray(c, cJSON_CreateString("all"));
	}
	cJSON *subs = NULL;
	for (size_t i = 0; i < sizeof(api_subs) / sizeof(api_subs[0]); i++) {
		const struct api_sub_desc *d = &api_subs[i];
		if (!(r->subresources & d->bit))
			continue;
		if (!subs)
			subs = cJSON_AddArrayToObject(o, "subresources");
		cJSON *s = cJSON_CreateObject();
		if (!s || !subs)
			break;
		cJSON_AddStringToObject(s, "subresource", d->name);
		api_json_put(s, "responseKind",
			     d->k ? api_gvk(d->g, d->v, d->k)
				  : api_gvk(r->group, r->version, r->kind));
		api_json_put(s, "verbs", api_verbs_json(d->verbs));
		cJSON_AddItemToArray(subs, s);
	}
	return o;
}

/* Distinct group names in registry order (core "" first). */
static size_t api_groups(const struct api_resource *const *all, size_t count, const char **out,
			 size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		bool seen = false;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(out[k], all[i]->group))
				seen = true;
		if (!seen && n < cap)
			out[n++] = all[i]->group;
	}
	return n;
}

/* Distinct versions of group in registry order (the first is the preferred one). */
static size_t api_group_versions(const struct api_resource *const *all, size_t count,
				 const char *group, const char **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		if (strcmp(all[i]->group, group))
			continue;
		bool seen = false;
		for (size_t k = 0; k < n; k++)
			seen = seen || !strcmp(out[k], all[i]->version);
		if (!seen && n < cap)
			out[n++] = all[i]->version;
	}
	return n;
}

static cJSON *api_agg_group(const struct api_resource *const *all, size_t count, const char *group)
{
	const char *vers[K32_API_CRD_MAX_VERSIONS + 1];
	size_t nv = api_group_versions(all, count, group, vers, K32_API_CRD_MAX_VERSIONS + 1);
	cJSON *g = cJSON_CreateObject();
	if (!g)
		return NULL;
	cJSON *md = cJSON_AddObjectToObject(g, "metadata");
	cJSON_AddStringToObject(md, "name", group);
	cJSON *versions = cJSON_AddArrayToObject(g, "versions");
	for (size_t v = 0; versions && v < nv; v++) {
		cJSON *ver = cJSON_CreateObject();
		cJSON_AddItemToArray(versions, ver);
		cJSON_AddStringToObject(ver, "version", vers[v]);
		cJSON *res = cJSON_AddArrayToObject(ver, "resources");
		for (size_t i = 0; res && i < count; i++)
			if (!strcmp(all[i]->group, group) && !strcmp(all[i]->version, vers[v]))
				cJSON_AddItemToArray(res, api_agg_resource(all[i]));
		cJSON_AddStringToObject(ver, "freshness", "Current");
	}
	return g;
}

static cJSON *api_legacy_group(const struct api_resource *const *all, size_t count,
			       const char *group)
{
	char gv[96];
	const char *vers[K32_API_CRD_MAX_VERSIONS + 1];
	size_t nv = api_group_versions(all, count, group, vers, K32_API_CRD_MAX_VERSIONS + 1);
	if (!nv)
		return NULL;
	cJSON *g = cJSON_CreateObject();
	if (!g)
		return NULL;
	cJSON_AddStringToObject(g, "name", group);
	cJSON *vs = cJSON_AddArrayToObject(g, "versions");
	for (size_t v = 0; vs && v < nv; v++) {
		snprintf(gv, sizeof(gv), "%s/%s", group, vers[v]);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "groupVersion", gv);
		cJSON_AddStringToObject(e, "version", vers[v]);
		cJSON_AddItemToArray(vs, e);
		if (v == 0)
			api_json_put(g, "preferredVersion", cJSON_Duplicate(e, true));
	}
	return g;
}

cJSON *api_discovery_group(const char *group)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	if (!group[0])
		return NULL;
	cJSON *g = api_legacy_group(all, count, group);
	if (g) {
		cJSON_AddStringToObject(g, "kind", "APIGroup");
		cJSON_AddStringToObject(g, "apiVersion", "v1");
	}
	return g;
}

cJSON *api_discovery_root(bool core, enum api_disc_fmt fmt, const char *server_addr)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	const char *groups[API_REGISTRY_MAX];
	size_t n = api_groups(all, count, groups, API_REGISTRY_MAX);
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	if (fmt != API_DISC_LEGACY) {
		cJSON_AddStringToObject(root, "kind", "APIGroupDiscoveryList");
		cJSON_AddStringToObject(root, "apiVersion",
					fmt == API_DISC_V2 ? "apidiscovery.k8s.io/v2"
							   : "apidiscovery.k8s.io/v2beta1");
		api_json_put(root, "metadata", cJSON_CreateObject());
		cJSON *items = cJSON_AddArrayToObject(root, "items");
		for (size_t i = 0; items && i < n; i++)
			if (core == !groups[i][0])
				cJSON_AddItemToArray(items, api_agg_group(all, count, groups[i]));
		return root;
	}
	if (core) {
		cJSON_AddStringToObject(root, "kind", "APIVersions");
		cJSON *vs = cJSON_AddArrayToObject(root, "versions");
		cJSON_AddItemToArray(vs, cJSON_CreateString("v1"));
		cJSON *cidrs = cJSON_AddArrayToObject(root, "serverAddressByClientCIDRs");
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "clientCIDR", "0.0.0.0/0");
		cJSON_AddStringToObject(c, "serverAddress", server_addr ? server_addr : "");
		cJSON_AddItemToArray(cidrs, c);
		return root;
	}
	cJSON_AddStringToObject(root, "kind", "APIGroupList");
	cJSON_AddStringToObject(root, "apiVersion", "v1");
	cJSON *gs = cJSON_AddArrayToObject(root, "groups");
	for (size_t i = 0; gs && i < n; i++)
		if (groups[i][0])
			cJSON_AddItemToArray(gs, api_legacy_group(all, count, groups[i]));
	return root;
}

cJSON *api_discovery_group_version(const char *group, const char *version)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	bool served = false;
	for (size_t i = 0; i < count && !served; i++)
		served = !strcmp(all[i]->group, group) && !strcmp(all[i]->version, version);
	if (!served)
		return NULL;
	char gv[96];
	snprintf(gv, sizeof(gv), "%s%s%s", group, group[0] ? "/" : "", version);
	cJSON *l = cJSON_CreateObject();
	if (!l)
		return NULL;
	cJSON_AddStringToObject(l, "kind", "APIResourceList");
	cJSON_AddStringToObject(l, "apiVersion", "v1");
	cJSON_AddStringToObject(l, "groupVersion", gv);
	cJSON *res = cJSON_AddArrayToObject(l, "resources");
	for (size_t i = 0; res && i < count; i++) {
		const struct api_resource *r = all[i];
		if (strcmp(r->group, group) || strcmp(r->version, version))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", r->plural);
		cJSON_AddStringToObject(o, "singularName", r->singular);
		cJSON_AddBoolToObject(o, "namespaced", r->namespaced);
		cJSON_AddStringToObject(o, "kind", r->kind);
		api_json_put(o, "verbs", api_verbs_json(r->verbs));
		if (r->short_names[0])
			api_json_put(o, "shortNames", api_short_names_json(r));
		if (r->in_all) {
			cJSON *c = cJSON_AddArrayToObject(o, "categories");
			cJSON_AddItemToArray(c, cJSON_CreateString("all"));
		}
		cJSON_AddItemToArray(res, o);
		for (size_t k = 0; k < sizeof(api_subs) / sizeof(api_subs[0]); k++) {
			const struct api_sub_desc *d = &api_subs[k];
			if (!(r->subresources & d->bit))
				continue;
			char name[64];
			snprintf(name, sizeof(name), "%s/%s", r->plural, d->name);
			cJSON *s = cJSON_CreateObject();
			cJSON_AddStringToObject(s, "name", name);
			cJSON_AddStringToObject(s, "singularName", "");
			cJSON_AddBoolToObject(s, "namespaced", r->namespaced);
			if (d->k) {
				cJSON_AddStringToObject(s, "group", d->g);
				cJSON_AddStringToObject(s, "version", d->v);
			}
			cJSON_AddStringToObject(s, "kind", d->k ? d->k : r->kind);
			api_json_put(s, "verbs", api_verbs_json(d->verbs));
			cJSON_AddItemToArray(res, s);
		}
	}
	return l;
}
