/*
 * api_crd.c - CustomResourceDefinition objects and the resources they serve.
 *
 * A CRD (apiextensions.k8s.io/v1) is validated by api_strategy_crd (names, scope, versions,
 * a structural schema within the limits, printer columns, subresources) and given its
 * status (NamesAccepted and Established conditions, acceptedNames, storedVersions) on every
 * write: kube32 establishes a CRD at once. api_crd_install turns the stored CRDs into
 * registry rows, one per served version, each holding a reference-counted copy of its
 * version entry (schema, columns, subresources). Custom objects go through the generic
 * paths with api_strategy_custom; the hooks below apply the row's schema (prune, default,
 * validate), its scale paths and its printer columns, and publish its OpenAPI schema.
 * Objects of every version share one store key (group/plural/ns/name): versions are served
 * with the None conversion (only apiVersion differs), as kube-apiserver does without a
 * conversion webhook: a write at any served version is stored with the storage version's
 * apiVersion (api_crd_storage_api_version), and a read, list or watch at another served
 * version gets the stored text with its apiVersion rewritten to the one asked for
 * (api_crd_view_head: only the leading apiVersion member is replaced, nothing parsed).
 * Context: any thread; rows under g_mu (api_crd.h). A row that went inactive keeps its
 * strings until the row is reused for another resource; never-used rows are taken first,
 * then the row inactive the longest, so a request still holding one sees stable text.
 */
#include "api/api_crd.h"
#include "base/k32_alloc.h"
#include "base/k32_json.h"
#include "platform/k32_platform.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api_crd_ref {
	atomic_uint refs;
	cJSON *version; /* the CRD's spec.versions[i] */
};

struct crd_row {
	bool used, active, seen;
	uint32_t idle_since; /* install count when it went inactive */
	struct api_resource res;
	char group[K32_API_CRD_GROUP_LEN + 1], version[K32_API_CRD_VERSION_LEN + 1];
	char storage[K32_API_CRD_VERSION_LEN + 1]; /* the CRD's storage version */
	char kind[64], plural[64], singular[64], shorts[96], desc[160];
	struct api_crd_ref *ref;
};

static struct crd_row g_rows[API_CRD_ROWS];
static struct k32_mutex g_mu;
static atomic_int g_init;   /* 0 none, 1 initialising, 2 ready */
static uint32_t g_installs; /* under g_mu */

static bool crd_ready(void)
{
	return atomic_load(&g_init) == 2;
}

static void crd_init(void)
{
	int expect = 0;
	if (atomic_compare_exchange_strong(&g_init, &expect, 1)) {
		k32_plat()->mutex_init(&g_mu);
		atomic_store(&g_init, 2);
	}
	while (!crd_ready())
		k32_plat()->task_yield();
}

/* ---- references ------------------------------------------------------------------------ */

static struct api_crd_ref *ref_new(const cJSON *version)
{
	struct api_crd_ref *r = k32_calloc(k32_default_allocator(), sizeof(*r));
	if (!r)
		return NULL;
	r->version = cJSON_Duplicate(version, true);
	if (!r->version) {
		k32_free(k32_default_allocator(), r, sizeof(*r));
		return NULL;
	}
	atomic_init(&r->refs, 1);
	return r;
}

void api_crd_release(struct api_crd_ref *ref)
{
	if (!ref || atomic_fetch_sub(&ref->refs, 1) != 1)
		return;
	cJSON_Delete(ref->version);
	k32_free(k32_default_allocator(), ref, sizeof(*ref));
}

static struct crd_row *row_of(const struct api_resource *res)
{
	if (!res || res->strategy != &api_strategy_custom)
		return NULL;
	return (struct crd_row *)((char *)(uintptr_t)res - offsetof(struct crd_row, res));
}

const char *api_crd_storage_api_version(const struct api_resource *res, char *buf, size_t cap)
{
	const struct crd_row *row = row_of(res);
	if (!row)
		return NULL;
	snprintf(buf, cap, "%s/%s", row->group, row->storage);
	return buf;
}

size_t api_crd_view_head(const struct api_resource *res, const char *data, size_t len, char *head,
			 size_t cap)
{
	static const char pre[] = "{\"apiVersion\":\"";
	const size_t pl = sizeof(pre) - 1;
	const struct crd_row *row = row_of(res);
	if (!row || len < pl || memcmp(data, pre, pl))
		return 0;
	const char *v = data + pl, *q = memchr(v, '"', len - pl);
	if (!q)
		return 0;
	size_t gl = strlen(row->group), vl = strlen(row->version);
	if ((size_t)(q - v) == gl + 1 + vl && !memcmp(v, row->group, gl) && v[gl] == '/' &&
	    !memcmp(v + gl + 1, row->version, vl))
		return 0; /* stored at the version asked for */
	int n = snprintf(head, cap, "%s%s/%s\"", pre, row->group, row->version);
	if (n < 0 || (size_t)n >= cap)
		return 0;
	return (size_t)(q - data) + 1;
}

struct api_crd_ref *api_crd_acquire(const struct api_resource *res)
{
	struct crd_row *row = row_of(res);
	if (!row || !crd_ready())
		return NULL;
	k32_mutex_lock(&g_mu);
	struct api_crd_ref *r = row->ref;
	if (r)
		atomic_fetch_add(&r->refs, 1);
	k32_mutex_unlock(&g_mu);
	return r;
}

const cJSON *api_crd_version(const struct api_crd_ref *ref)
{
	return ref ? ref->version : NULL;
}

/* ---- the rows -------------------------------------------------------------------------- */

static const char *sget(const cJSON *o, const char *path)
{
	const char *s = cJSON_GetStringValue(k32_json_find(o, path));
	return s ? s : "";
}

size_t api_crd_rows(const struct api_resource **out, size_t cap)
{
	size_t n = 0;
	if (!crd_ready())
		return 0;
	k32_mutex_lock(&g_mu);
	for (size_t i = 0; i < API_CRD_ROWS && n < cap; i++)
		if (g_rows[i].active)
			out[n++] = &g_rows[i].res;
	k32_mutex_unlock(&g_mu);
	return n;
}

const struct api_resource *api_crd_find(const char *group, const char *version, const char *plural)
{
	const struct api_resource *r = NULL;
	if (!crd_ready())
		return NULL;
	k32_mutex_lock(&g_mu);
	for (size_t i = 0; i < API_CRD_ROWS && !r; i++) {
		const struct crd_row *w = &g_rows[i];
		if (w->active && !strcmp(w->group, group) && !strcmp(w->version, version) &&
		    !strcmp(w->plural, plural))
			r = &w->res;
	}
	k32_mutex_unlock(&g_mu);
	return r;
}

const struct api_resource *api_crd_find_kind(const char *group, size_t glen, const char *version,
					     const char *kind)
{
	const struct api_resource *r = NULL;
	if (!crd_ready())
		return NULL;
	k32_mutex_lock(&g_mu);
	for (size_t i = 0; i < API_CRD_ROWS && !r; i++) {
		const struct crd_row *w = &g_rows[i];
		if (w->active && strlen(w->group) == glen && !strncmp(w->group, group, glen) &&
		    !strcmp(w->version, version) && !strcmp(w->kind, kind))
			r = &w->res;
	}
	k32_mutex_unlock(&g_mu);
	return r;
}

/* The active row of group/version/plural, or NULL. Under g_mu. */
static struct crd_row *row_active(const char *group, const char *version, const char *plural)
{
	for (size_t i = 0; i < API_CRD_ROWS; i++) {
		struct crd_row *w = &g_rows[i];
		if (w->active && !strcmp(w->group, group) && !strcmp(w->version, version) &&
		    !strcmp(w->plural, plural))
			return w;
	}
	return NULL;
}

/* A row to fill: a never-used one, else the one inactive the longest (a request that still
 * holds a retired row sees its text unchanged until every row has been used). */
static struct crd_row *row_spare(void)
{
	struct crd_row *idle = NULL;
	for (size_t i = 0; i < API_CRD_ROWS; i++) {
		struct crd_row *w = &g_rows[i];
		if (!w->used)
			return w;
		if (!w->active && !w->seen && (!idle || w->idle_since < idle->idle_since))
			idle = w;
	}
	return idle;
}

static void row_fill(struct crd_row *w, const cJSON *crd, const cJSON *ver)
{
	const cJSON *names = k32_json_find(crd, "spec.names");
	snprintf(w->group, sizeof(w->group), "%s", sget(crd, "spec.group"));
	snprintf(w->version, sizeof(w->version), "%s", sget(ver, "name"));
	w->storage[0] = 0;
	const cJSON *sv;
	cJSON_ArrayForEach(sv, k32_json_find(crd, "spec.versions"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sv, "storage")))
			snprintf(w->storage, sizeof(w->storage), "%s", sget(sv, "name"));
	}
	if (!w->storage[0]) /* validation wants exactly one; serve this one if none */
		snprintf(w->storage, sizeof(w->storage), "%s", w->version);
	snprintf(w->kind, sizeof(w->kind), "%s", sget(names, "kind"));
	snprintf(w->plural, sizeof(w->plural), "%s", sget(names, "plural"));
	snprintf(w->singular, sizeof(w->singular), "%s", sget(names, "singular"));
	w->shorts[0] = 0;
	size_t off = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(names, "shortNames"))
	{
		const char *v = cJSON_GetStringValue(s);
		int n = v ? snprintf(w->shorts + off, sizeof(w->shorts) - off, "%s%s",
				     off ? "," : "", v)
			  : -1;
		if (n < 0 || (size_t)n >= sizeof(w->shorts) - off) {
			w->shorts[off] = 0;
			break;
		}
		off += (size_t)n;
	}
	bool in_all = false;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(names, "categories"))
	{
		const char *v = cJSON_GetStringValue(s);
		in_all = in_all || (v && !strcmp(v, "all"));
	}
	const char *d = sget(ver, "schema.openAPIV3Schema.description");
	if (d[0])
		snprintf(w->desc, sizeof(w->desc), "%s", d);
	else
		snprintf(w->desc, sizeof(w->desc), "%s is a custom resource defined by the CRD %s.",
			 w->kind, sget(crd, "metadata.name"));
	uint32_t subs = 0;
	if (k32_json_find(ver, "subresources.status"))
		subs |= API_SUB_STATUS;
	if (k32_json_find(ver, "subresources.scale"))
		subs |= API_SUB_SCALE;
	w->res = (struct api_resource){
	    .group = w->group,
	    .version = w->version,
	    .kind = w->kind,
	    .plural = w->plural,
	    .singular = w->singular,
	    .namespaced = strcmp(sget(crd, "spec.scope"), "Cluster") != 0,
	    .verbs = API_VERBS_ALL,
	    .subresources = subs,
	    .short_names = w->shorts,
	    .in_all = in_all,
	    .fields = "",
	    .description = w->desc,
	    .strategy = &api_strategy_custom,
	};
}

static bool row_same(const struct crd_row *a, const struct crd_row *b)
{
	return !strcmp(a->group, b->group) && !strcmp(a->version, b->version) &&
	       !strcmp(a->storage, b->storage) && !strcmp(a->kind, b->kind) &&
	       !strcmp(a->plural, b->plural) && !strcmp(a->singular, b->singular) &&
	       !strcmp(a->shorts, b->shorts) && !strcmp(a->desc, b->desc) &&
	       a->res.namespaced == b->res.namespaced &&
	       a->res.subresources == b->res.subresources && a->res.in_all == b->res.in_all;
}

/* A retired row with exactly probe's text and flags (a CRD deleted and created again):
 * taken back as it is, nothing rewritten. Under g_mu. */
static struct crd_row *row_retired_same(const struct crd_row *probe)
{
	for (size_t i = 0; i < API_CRD_ROWS; i++) {
		struct crd_row *w = &g_rows[i];
		if (w->used && !w->active && !w->seen && row_same(w, probe))
			return w;
	}
	return NULL;
}

size_t api_crd_install(const cJSON *const *crds, size_t n, struct api_crd_gone *gone,
		       size_t gone_cap)
{
	size_t ngone = 0;
	crd_init();
	k32_mutex_lock(&g_mu);
	g_installs++;
	for (size_t i = 0; i < API_CRD_ROWS; i++)
		g_rows[i].seen = false;
	for (size_t c = 0; c < n; c++) {
		const cJSON *ver;
		cJSON_ArrayForEach(ver, k32_json_find(crds[c], "spec.versions"))
		{
			if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ver, "served")))
				continue;
			struct crd_row *w =
			    row_active(sget(crds[c], "spec.group"), sget(ver, "name"),
				       sget(crds[c], "spec.names.plural"));
			struct api_crd_ref *r = ref_new(ver);
			if (!r)
				continue; /* out of memory: an active row keeps its old version */
			/* an active row whose text and flags stay gets the new version entry (the
			 * schema and columns, read through references); any other change takes a
			 * fresh row, so a row's text and flags never change while it is active */
			static struct crd_row probe; /* under g_mu */
			row_fill(&probe, crds[c], ver);
			if (!w || w->seen || !row_same(w, &probe))
				w = row_retired_same(&probe);
			if (!w) {
				w = row_spare();
				if (!w) { /* more rows than API_CRD_ROWS: refused at write */
					api_crd_release(r);
					continue;
				}
				api_crd_release(w->ref);
				w->ref = NULL;
				row_fill(w, crds[c], ver);
			}
			api_crd_release(w->ref);
			w->ref = r;
			w->used = w->active = w->seen = true;
		}
	}
	for (size_t i = 0; i < API_CRD_ROWS; i++) {
		struct crd_row *w = &g_rows[i];
		if (!w->active || w->seen)
			continue;
		w->active = false;
		w->idle_since = g_installs;
		api_crd_release(w->ref);
		w->ref = NULL;
		bool other = false;
		for (size_t k = 0; k < API_CRD_ROWS; k++)
			other = other || (g_rows[k].active && !strcmp(g_rows[k].group, w->group) &&
					  !strcmp(g_rows[k].plural, w->plural));
		for (size_t k = 0; k < ngone && !other; k++)
			other =
			    !strcmp(gone[k].group, w->group) && !strcmp(gone[k].plural, w->plural);
		if (!other && ngone < gone_cap) {
			snprintf(gone[ngone].group, sizeof(gone[ngone].group), "%s", w->group);
			snprintf(gone[ngone].plural, sizeof(gone[ngone].plural), "%s", w->plural);
			ngone++;
		}
	}
	k32_mutex_unlock(&g_mu);
	return ngone;
}

size_t api_crd_count(void)
{
	size_t n = 0;
	if (!crd_ready())
		return 0;
	k32_mutex_lock(&g_mu);
	for (size_t i = 0; i < API_CRD_ROWS; i++) {
		const struct crd_row *w = &g_rows[i];
		bool first = w->active;
		for (size_t k = 0; k < i && first; k++)
			first = !(g_rows[k].active && !strcmp(g_rows[k].group, w->group) &&
				  !strcmp(g_rows[k].plural, w->plural));
		n += first;
	}
	k32_mutex_unlock(&g_mu);
	return n;
}

/* ---- the hooks of custom rows ---------------------------------------------------------- */

static const cJSON *ref_schema(const struct api_crd_ref *r)
{
	return k32_json_find(api_crd_version(r), "schema.openAPIV3Schema");
}

k32_status_t api_crd_prune(const struct api_resource *res, cJSON *obj,
			   enum api_field_validation mode, struct api_warnings *w,
			   struct api_fail *f)
{
	struct api_crd_ref *r = api_crd_acquire(res);
	k32_status_t st = K32_OK;
	if (r)
		st = api_schema_prune(res, ref_schema(r), obj, mode, w, f);
	api_crd_release(r);
	return st;
}

void api_crd_default(const struct api_resource *res, cJSON *obj)
{
	struct api_crd_ref *r = api_crd_acquire(res);
	if (r)
		api_schema_default(ref_schema(r), obj);
	api_crd_release(r);
}

void api_crd_validate(const struct api_resource *res, const cJSON *obj, struct api_fail *f)
{
	struct api_crd_ref *r = api_crd_acquire(res);
	if (r)
		api_schema_validate(ref_schema(r), obj, f);
	api_crd_release(r);
}

/* ".spec.replicas" -> "spec.replicas" into buf. */
static void path_of(const cJSON *v, const char *key, char *buf, size_t cap)
{
	const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, key));
	snprintf(buf, cap, "%s", p ? (p[0] == '.' ? p + 1 : p) : "");
}

bool api_crd_scale_paths(const struct api_resource *res, char *spec, char *status, char *sel,
			 size_t cap)
{
	struct api_crd_ref *r = api_crd_acquire(res);
	const cJSON *sc = k32_json_find(api_crd_version(r), "subresources.scale");
	if (sc) {
		path_of(sc, "specReplicasPath", spec, cap);
		path_of(sc, "statusReplicasPath", status, cap);
		path_of(sc, "labelSelectorPath", sel, cap);
	}
	api_crd_release(r);
	return sc != NULL;
}

bool api_crd_set_number(cJSON *obj, const char *path, double v)
{
	char part[64];
	cJSON *o = obj;
	while (cJSON_IsObject(o)) {
		size_t n = strcspn(path, ".");
		if (n == 0 || n >= sizeof(part))
			return false;
		memcpy(part, path, n);
		part[n] = 0;
		if (!path[n]) {
			cJSON_DeleteItemFromObjectCaseSensitive(o, part);
			return cJSON_AddNumberToObject(o, part, v) != NULL;
		}
		cJSON *c = cJSON_GetObjectItemCaseSensitive(o, part);
		if (!c)
			c = cJSON_AddObjectToObject(o, part);
		o = c;
		path += n + 1;
	}
	return false;
}

/* ---- Table ----------------------------------------------------------------------------- */

/* The value at a simple JSONPath (".a.b[0].c"); NULL if absent or beyond the subset. */
static const cJSON *json_path(const cJSON *o, const char *p)
{
	char part[64];
	if (*p == '.')
		p++;
	while (o && *p) {
		if (*p == '[') {
			char *end;
			long i = strtol(p + 1, &end, 10);
			if (*end != ']' || i < 0)
				return NULL;
			o = cJSON_GetArrayItem(o, (int)i);
			p = end + 1;
			if (*p == '.')
				p++;
			continue;
		}
		size_t n = strcspn(p, ".[");
		if (n == 0 || n >= sizeof(part))
			return NULL;
		memcpy(part, p, n);
		part[n] = 0;
		o = cJSON_GetObjectItemCaseSensitive(o, part);
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

static cJSON *cell_of(const cJSON *v, const char *type, uint64_t now_s)
{
	char buf[96];
	if (!v || cJSON_IsNull(v))
		return cJSON_CreateString("<none>");
	if (!strcmp(type, "date") && cJSON_IsString(v)) {
		uint64_t t;
		if (api_parse_time(v->valuestring, &t)) {
			api_format_age(now_s, t, buf, sizeof(buf));
			return cJSON_CreateString(buf);
		}
	}
	if ((!strcmp(type, "integer") || !strcmp(type, "number")) && cJSON_IsNumber(v))
		return cJSON_CreateNumber(v->valuedouble);
	if (!strcmp(type, "boolean") && cJSON_IsBool(v))
		return cJSON_CreateBool(cJSON_IsTrue(v));
	if (cJSON_IsString(v))
		return cJSON_CreateString(v->valuestring);
	if (cJSON_IsNumber(v)) {
		snprintf(buf, sizeof(buf), "%.17g", v->valuedouble);
		return cJSON_CreateString(buf);
	}
	if (cJSON_IsBool(v))
		return cJSON_CreateString(cJSON_IsTrue(v) ? "true" : "false");
	char *txt = cJSON_PrintUnformatted(v);
	cJSON *s = cJSON_CreateString(txt ? txt : "");
	cJSON_free(txt);
	return s;
}

static void add_column(cJSON *cd, const char *name, const char *type, const char *format,
		       const char *desc, double prio)
{
	cJSON *col = cJSON_CreateObject();
	if (!col)
		return;
	cJSON_AddStringToObject(col, "name", name);
	cJSON_AddStringToObject(col, "type", type);
	cJSON_AddStringToObject(col, "format", format);
	cJSON_AddStringToObject(col, "description", desc);
	cJSON_AddNumberToObject(col, "priority", prio);
	cJSON_AddItemToArray(cd, col);
}

cJSON *api_crd_table(const struct api_resource *res, const cJSON *const *objs, size_t count,
		     uint64_t now_s, const char *rv, bool with_columns)
{
	struct api_crd_ref *r = api_crd_acquire(res);
	const cJSON *cols =
	    cJSON_GetObjectItemCaseSensitive(api_crd_version(r), "additionalPrinterColumns");
	bool custom_cols = cJSON_GetArraySize(cols) > 0;
	cJSON *t = cJSON_CreateObject();
	if (!t) {
		api_crd_release(r);
		return NULL;
	}
	cJSON_AddStringToObject(t, "kind", "Table");
	cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
	cJSON *md = cJSON_AddObjectToObject(t, "metadata");
	if (md && rv)
		cJSON_AddStringToObject(md, "resourceVersion", rv);
	cJSON *cd = cJSON_AddArrayToObject(t, "columnDefinitions");
	const cJSON *c;
	if (with_columns && cd) {
		add_column(cd, "Name", "string", "name", "Name must be unique within a namespace.",
			   0);
		cJSON_ArrayForEach(c, cols)
		{
			const cJSON *pr = cJSON_GetObjectItemCaseSensitive(c, "priority");
			add_column(cd, sget(c, "name"), sget(c, "type"), sget(c, "format"),
				   sget(c, "description"),
				   cJSON_IsNumber(pr) ? pr->valuedouble : 0);
		}
		if (!custom_cols)
			add_column(cd, "Age", "date", "",
				   "CreationTimestamp is a timestamp representing the server time "
				   "when this object was created.",
				   0);
	}
	cJSON *rows = cJSON_AddArrayToObject(t, "rows");
	for (size_t i = 0; rows && i < count; i++) {
		cJSON *row = cJSON_CreateObject();
		if (!row)
			break;
		cJSON *cells = cJSON_AddArrayToObject(row, "cells");
		cJSON_AddItemToArray(cells, cJSON_CreateString(sget(objs[i], "metadata.name")));
		cJSON_ArrayForEach(c, cols)
		{
			cJSON_AddItemToArray(cells, cell_of(json_path(objs[i], sget(c, "jsonPath")),
							    sget(c, "type"), now_s));
		}
		if (!custom_cols)
			cJSON_AddItemToArray(
			    cells, cell_of(k32_json_find(objs[i], "metadata.creationTimestamp"),
					   "date", now_s));
		api_json_put(row, "object", api_table_partial_meta(objs[i]));
		cJSON_AddItemToArray(rows, row);
	}
	api_crd_release(r);
	return t;
}

/* ---- OpenAPI --------------------------------------------------------------------------- */

/* "com.example.v1.Widget" for group example.com (upstream's reversed-domain names). */
static void schema_name(const struct api_resource *res, char *buf, size_t cap)
{
	size_t off = 0;
	const char *g = res->group;
	const char *end = g + strlen(g);
	while (end > g && off < cap) {
		const char *dot = end;
		while (dot > g && dot[-1] != '.')
			dot--;
		int n = snprintf(buf + off, cap - off, "%.*s.", (int)(end - dot), dot);
		if (n < 0)
			break;
		off += (size_t)n;
		end = dot > g ? dot - 1 : g;
	}
	if (off < cap)
		snprintf(buf + off, cap - off, "%s.%s", res->version, res->kind);
}

void api_crd_openapi(const char *group, const char *version, cJSON *schemas)
{
	const struct api_resource *rows[API_CRD_ROWS];
	size_t n = api_crd_rows(rows, API_CRD_ROWS);
	for (size_t i = 0; i < n; i++) {
		const struct api_resource *res = rows[i];
		if (strcmp(res->group, group) || strcmp(res->version, version))
			continue;
		struct api_crd_ref *r = api_crd_acquire(res);
		cJSON *s = cJSON_Duplicate(ref_schema(r), true);
		api_crd_release(r);
		if (!s)
			s = cJSON_CreateObject();
		if (!s)
			return;
		if (!cJSON_GetObjectItemCaseSensitive(s, "description"))
			cJSON_AddStringToObject(s, "description", res->description);
		cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
		if (!props)
			props = cJSON_AddObjectToObject(s, "properties");
		static const char *const meta[][2] = {
		    {"apiVersion", "APIVersion defines the versioned schema of this representation "
				   "of an object."},
		    {"kind", "Kind is a string value representing the REST resource this object "
			     "represents."}};
		for (size_t k = 0; props && k < 2; k++) {
			cJSON_DeleteItemFromObjectCaseSensitive(props, meta[k][0]);
			cJSON *p = cJSON_AddObjectToObject(props, meta[k][0]);
			cJSON_AddStringToObject(p, "type", "string");
			cJSON_AddStringToObject(p, "description", meta[k][1]);
		}
		if (props) {
			cJSON_DeleteItemFromObjectCaseSensitive(props, "metadata");
			cJSON *m = cJSON_AddObjectToObject(props, "metadata");
			cJSON *all = cJSON_AddArrayToObject(m, "allOf");
			cJSON *ref = cJSON_CreateObject();
			cJSON_AddStringToObject(
			    ref, "$ref",
			    "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
			cJSON_AddItemToArray(all, ref);
			cJSON_AddStringToObject(m, "description", "Standard object's metadata.");
		}
		cJSON *gvks = cJSON_AddArrayToObject(s, "x-kubernetes-group-version-kind");
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "group", res->group);
		cJSON_AddStringToObject(e, "version", res->version);
		cJSON_AddStringToObject(e, "kind", res->kind);
		cJSON_AddItemToArray(gvks, e);
		char name[192];
		schema_name(res, name, sizeof(name));
		cJSON_DeleteItemFromObjectCaseSensitive(schemas, name);
		api_json_put(schemas, name, s);
	}
}
