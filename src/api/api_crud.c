/*
 * api_crud.c - get, list, create, update and patch, with the status and scale
 * subresources, and the dispatch of every resource request.
 *
 * Objects are stored as JSON text whose key order is normalised (apiVersion, kind,
 * metadata first; in metadata name, namespace, uid, resourceVersion first) so the
 * resourceVersion slot the store stamps is found at a fixed, validated position: no user
 * string can precede it. Reads answer the stored text as is; only Table output, selectors
 * and writes parse it.
 *
 * Write rules (kubectl-api.md section 25): a PUT whose resourceVersion differs from the
 * stored one is a Conflict; a write that changes nothing keeps the resourceVersion and
 * emits no event; the main resource ignores status and the status subresource ignores
 * everything else (for kinds with a status subresource); generation is bumped when spec
 * changes; dryRun=All validates and answers without storing.
 *
 * Deletion and the pod subresources live in api_delete.c.
 *
 * Context: the http loop task or an api_do caller; the store serialises writes.
 */
#include "api/api_crd.h"
#include "api/api_srv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"
#include "kmeta/kmeta.h"

#define API_RV_SENTINEL "~K32RV~"

/* ---- store helpers --------------------------------------------------------------------- */

void api_key(const struct api_resource *res, const char *ns, const char *name,
	     struct store_key *key)
{
	/* events.k8s.io Events are stored once, as core/v1 ones (api_events_v1.c) */
	key->group = api_events_v1(res) ? "" : res->group;
	key->resource = res->plural;
	key->ns = res->namespaced && ns ? ns : "";
	key->name = name;
}

k32_status_t api_store_err(struct api_fail *f, const struct api_resource *res, const char *name,
			   k32_status_t st, const struct k32_err *err)
{
	switch (st) {
	case K32_ERR_NOT_FOUND:
		return api_fail_not_found(f, res, name);
	case K32_ERR_ALREADY_EXISTS:
		return api_fail_already_exists(f, res, name);
	case K32_ERR_CONFLICT:
		return api_fail_conflict(f, res, name);
	case K32_ERR_OUT_OF_RANGE:
		return api_fail_set(f, 413, "RequestEntityTooLarge", "%s",
				    err ? err->msg : "object too large");
	case K32_ERR_NO_RESOURCES:
		f->retry_after_s = 10;
		return api_fail_set(f, 429, "TooManyRequests", "%s",
				    err ? err->msg : "store limit reached");
	case K32_ERR_COMPACTED:
		return api_fail_set(f, 410, "Expired", "%s",
				    err ? err->msg : "too old resource version");
	case K32_ERR_INVALID_ARGS:
		return api_fail_set(f, 400, "BadRequest", "%s", err ? err->msg : "bad request");
	default:
		return api_fail_set(f, 500, "InternalError", "store: %s",
				    err ? err->msg : "failure");
	}
}

k32_status_t api_get_obj(struct api_server *api, const struct api_resource *res, const char *ns,
			 const char *name, struct store_obj **out, struct api_fail *f)
{
	struct store_key key;
	struct k32_err err;
	api_key(res, ns, name, &key);
	k32_err_clear(&err);
	k32_status_t st = store_get(api->store, &key, out, &err);
	if (st)
		return api_store_err(f, res, name, st, &err);
	return K32_OK;
}

cJSON *api_parse_obj(const struct store_obj *o)
{
	return cJSON_ParseWithLength(store_obj_data(o), o->len);
}

/* Moves key of src to the end of dst, keeping its name: items are re-linked, never
 * copied, so this cannot fail (dst may be a container on the stack). */
static void api_move_first(cJSON *dst, cJSON *src, const char *key)
{
	cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(src, key);
	if (it)
		cJSON_AddItemToArray(dst, it);
}

/* Moves every item of src to the end of dst (same re-linking). */
static void api_move_all(cJSON *dst, cJSON *src)
{
	while (src->child)
		cJSON_AddItemToArray(dst, cJSON_DetachItemViaPointer(src, src->child));
}

/* Reorders obj (in place) so the resourceVersion slot precedes any user string. Allocates
 * only the sentinel string; false (obj unusable) when that fails or metadata is missing. */
static bool api_normalise(cJSON *obj)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON nm = {0}, no = {0};
	nm.type = no.type = cJSON_Object;
	if (!cJSON_IsObject(md))
		return false;
	api_move_first(&nm, md, "name");
	api_move_first(&nm, md, "namespace");
	api_move_first(&nm, md, "uid");
	cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
	bool ok = cJSON_AddStringToObject(&nm, "resourceVersion", API_RV_SENTINEL) != NULL;
	api_move_all(&nm, md);
	api_move_all(md, &nm);
	api_move_first(&no, obj, "apiVersion");
	api_move_first(&no, obj, "kind");
	api_move_first(&no, obj, "metadata");
	api_move_all(&no, obj);
	api_move_all(obj, &no);
	return ok;
}

bool api_write_essential(const struct api_resource *res, const char *sub)
{
	if (!strcmp(res->group, "coordination.k8s.io") && !strcmp(res->plural, "leases"))
		return true;
	return !strcmp(res->group, "") && !strcmp(res->plural, "nodes") && sub &&
	       !strcmp(sub, "status");
}

k32_status_t api_put_obj(struct api_server *api, const struct api_resource *res, cJSON *obj,
			 bool create, uint64_t expect_rev, struct store_obj **out,
			 struct api_fail *f)
{
	return api_put_obj_marked(api, res, obj, create, expect_rev, api_write_essential(res, ""),
				  out, f);
}

k32_status_t api_put_obj_marked(struct api_server *api, const struct api_resource *res, cJSON *obj,
				bool create, uint64_t expect_rev, bool essential,
				struct store_obj **out, struct api_fail *f)
{
	if (api_events_v1(res))
		api_event_to_core(obj);
	if (!api_normalise(obj))
		return api_fail_set(f, 500, "InternalError", "preparing %s: out of memory",
				    res->kind);
	char *text = cJSON_PrintUnformatted(obj);
	if (!text)
		return api_fail_set(f, 500, "InternalError", "serialising %s: out of memory",
				    res->kind);
	static const char pat[] = "\"resourceVersion\":\"" API_RV_SENTINEL "\"";
	char *hit = strstr(text, pat);
	size_t len = strlen(text);
	struct store_value val = {
	    .data = text, .len = len, .rv_off = STORE_NO_STAMP, .essential = essential};
	if (hit) {
		char *s = hit + sizeof("\"resourceVersion\":\"") - 1;
		size_t sl = sizeof(API_RV_SENTINEL) - 1;
		memmove(s, s + sl, len - (size_t)(s - text) - sl + 1);
		val.len = len - sl;
		val.rv_off = (size_t)(s - text);
	}
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	struct store_key key;
	struct k32_err err;
	k32_err_clear(&err);
	api_key(res, ns ? ns : "", name ? name : "", &key);
	if (create && !strcmp(res->plural, "events"))
		/* best effort: should it fail, the store's own limits still hold */
		api_events_make_room(api, val.len, NULL, NULL);
	k32_status_t st = create ? store_create(api->store, &key, &val, out, &err)
				 : store_update(api->store, &key, &val, expect_rev, out, &err);
	api_health_note_write(api, st, &err);
	cJSON_free(text);
	if (st)
		return api_store_err(f, res, name ? name : "", st, &err);
	api_rbac_note_write(api, res); /* RBAC's cached snapshot is stale */
	return K32_OK;
}

/* ---- request decoding ------------------------------------------------------------------ */

k32_status_t api_decode_body(const struct api_req *rq, cJSON **out, struct api_fail *f)
{
	*out = NULL;
	if (rq->body_len >= 4 && !memcmp(rq->body, API_PB_MAGIC, 4))
		return api_pb_decode(rq->body, rq->body_len, out, f);
	if (strstr(rq->ctype, "protobuf"))
		return api_fail_set(f, 400, "BadRequest",
				    "a protobuf body must start with the \"k8s\\0\" magic");
	if (strstr(rq->ctype, "yaml") && !strstr(rq->ctype, "apply-patch"))
		return api_fail_set(
		    f, 415, "UnsupportedMediaType",
		    "the body of type %s is not supported: send application/json (kubectl does)",
		    K32_CLIP(rq->ctype));
	if (rq->ctype[0] && !strstr(rq->ctype, "json") && !strstr(rq->ctype, "apply-patch") &&
	    !strstr(rq->ctype, "*/*"))
		return api_fail_set(f, 415, "UnsupportedMediaType",
				    "the body of type %s is not supported: send application/json",
				    K32_CLIP(rq->ctype));
	struct k32_err err;
	char field[sizeof(f->causes[0].field)];
	k32_err_clear(&err);
	/* NUL and bytes that are not UTF-8 are refused here, where the body enters, naming the
	 * field: cJSON would cut a string at NUL and store the rest as sent */
	if (k32_json_check_strings((const char *)rq->body, rq->body_len, field, sizeof(field),
				   &err)) {
		api_fail_set(f, 400, "BadRequest", "the request body is not valid: %s", err.msg);
		api_fail_add_cause(f, "FieldValueInvalid", field[0] ? field : "<body>",
				   "strings must be UTF-8 without NUL");
		return K32_ERR_INVALID_ARGS;
	}
	k32_status_t st = k32_json_parse((const char *)rq->body, rq->body_len, out, &err);
	if (st) {
		*out = NULL;
		if (st == K32_ERR_NO_MEMORY) { /* the server's trouble, not the client's body */
			f->retry_after_s = 1;
			return api_fail_set(f, 500, "InternalError", "%s", err.msg);
		}
		if (strstr(rq->ctype, "apply-patch"))
			return api_fail_set(f, 415, "UnsupportedMediaType",
					    "apply patch: kube32 reads the YAML body only in its "
					    "JSON form (as kubectl sends it): %s",
					    err.msg);
		return api_fail_set(f, 400, "BadRequest", "the request body is not valid JSON: %s",
				    err.msg);
	}
	return K32_OK;
}

bool api_dry_run(const struct api_req *rq)
{
	char v[K32_HTTP_QUERY_TYPED_MAX + 1];
	return api_q(rq, "dryRun", v, sizeof(v)) && !strcmp(v, "All");
}

k32_status_t api_field_validation(const struct api_req *rq, enum api_field_validation *out,
				  struct api_fail *f)
{
	char v[K32_HTTP_QUERY_TYPED_MAX + 1];
	*out = API_FV_WARN;
	if (!api_q(rq, "fieldValidation", v, sizeof(v)) || !v[0] || !strcmp(v, "Warn"))
		return K32_OK;
	if (!strcmp(v, "Strict"))
		*out = API_FV_STRICT;
	else if (!strcmp(v, "Ignore"))
		*out = API_FV_IGNORE;
	else /* api_query_check refused other values before any handler ran */
		return api_fail_set(f, 400, "BadRequest",
				    "fieldValidation: invalid value \"%s\": must be one of "
				    "Strict, Warn or Ignore",
				    K32_CLIP(v));
	return K32_OK;
}

const char *api_jstr(const cJSON *o, const char *path)
{
	return kmeta_jstr(o, path);
}

cJSON *api_meta(cJSON *obj)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (cJSON_IsObject(md))
		return md;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
	return cJSON_AddObjectToObject(obj, "metadata");
}

void api_set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v);
}

void api_set_num(cJSON *o, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddNumberToObject(o, key, v);
}

static void api_set_type(cJSON *obj, const struct api_resource *res)
{
	char av[API_VERSION_LEN];
	/* a custom object is stored at its CRD's storage version, whichever version wrote it */
	if (!api_crd_storage_api_version(res, av, sizeof(av)))
		api_resource_api_version(res, av, sizeof(av));
	api_set_str(obj, "apiVersion", av);
	api_set_str(obj, "kind", res->kind);
}

/* ---- responses ------------------------------------------------------------------------- */

static void api_out_cjson_obj(struct api_req *rq, struct api_out *out, int code, cJSON *obj);

void api_out_obj(struct api_req *rq, struct api_out *out, int code, const struct store_obj *o)
{
	if (api_events_v1(rq->res)) {
		cJSON *j = api_parse_view(rq->res, o);
		if (j)
			api_out_cjson_obj(rq, out, code, j);
		else
			api_out_json(out, 500, NULL);
		return;
	}
	if (rq->table) {
		cJSON *j = api_parse_obj(o);
		const cJSON *objs[] = {j};
		char rv[24];
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)o->mod_rev);
		cJSON *t = j ? api_table_build(rq->res, objs, 1, api_now_s(), rv, true) : NULL;
		cJSON_Delete(j);
		snprintf(out->ctype, sizeof(out->ctype), "%s", API_CT_TABLE);
		api_out_json(out, code, t);
		return;
	}
	/* a custom object asked for at another served version: its apiVersion rewritten */
	char head[API_CRD_VIEW_HEAD_LEN];
	size_t skip = api_crd_view_head(rq->res, store_obj_data(o), o->len, head, sizeof(head));
	if (skip) {
		api_out_text(out, code, "application/json", head, strlen(head));
		if (!k32_buf_append(out->body, store_obj_data(o) + skip, o->len - skip, NULL))
			return;
		/* too large: answered below as any object of that size is */
	}
	api_out_text(out, code, "application/json", store_obj_data(o), o->len);
}

static void api_out_cjson_obj(struct api_req *rq, struct api_out *out, int code, cJSON *obj)
{
	char av[API_VERSION_LEN];
	if (obj && api_crd_storage_api_version(rq->res, av, sizeof(av))) {
		/* a custom object (stored at its storage version) answered at the version asked */
		api_resource_api_version(rq->res, av, sizeof(av));
		cJSON_ReplaceItemInObjectCaseSensitive(obj, "apiVersion", cJSON_CreateString(av));
	}
	if (rq->table) {
		const cJSON *objs[] = {obj};
		cJSON *t = api_table_build(rq->res, objs, 1, api_now_s(), NULL, true);
		cJSON_Delete(obj);
		snprintf(out->ctype, sizeof(out->ctype), "%s", API_CT_TABLE);
		api_out_json(out, code, t);
		return;
	}
	out->ctype[0] = 0;
	api_out_json(out, code, obj);
}

/* ---- list ------------------------------------------------------------------------------ */

static bool api_filter_obj(const struct api_filter *flt, const cJSON *j)
{
	if (!j)
		return false;
	if (flt->has_l &&
	    !api_label_selector_match(&flt->lsel, k32_json_find(j, "metadata.labels")))
		return false;
	if (flt->has_f && !api_field_selector_match(&flt->fsel, j))
		return false;
	if (flt->owner_uid) {
		const cJSON *r;
		bool owned = false;
		cJSON_ArrayForEach(r, k32_json_find(j, "metadata.ownerReferences"))
		{
			const char *u = api_jstr(r, "uid");
			owned = owned || (u && !strcmp(u, flt->owner_uid));
		}
		if (!owned)
			return false;
	}
	return true;
}

/* The top-level "metadata":{...} of a stored object (normalised: apiVersion and kind, both
 * server-set, are the only keys before it). false if not found. */
static bool api_meta_span(const char *d, size_t len, const char **out, size_t *out_len)
{
	static const char key[] = "\"metadata\":";
	const char *p = strstr(d, key);
	if (!p || (size_t)(p - d) > 256)
		return false;
	p += sizeof(key) - 1;
	int depth = 0;
	bool in_str = false;
	for (const char *q = p; q < d + len; q++) {
		if (in_str) {
			if (*q == '\\')
				q++;
			else if (*q == '"')
				in_str = false;
		} else if (*q == '"') {
			in_str = true;
		} else if (*q == '{') {
			depth++;
		} else if (*q == '}' && --depth == 0) {
			*out = p;
			*out_len = (size_t)(q - p) + 1;
			return true;
		}
	}
	return false;
}

/* Whether flt looks only at metadata (labels, owners, metadata.* fields). */
static bool api_filter_meta_only(const struct api_filter *flt)
{
	for (size_t i = 0; flt->has_f && i < flt->fsel.term_count; i++)
		if (strncmp(flt->fsel.terms[i].key, "metadata.", 9))
			return false;
	return true;
}

bool api_store_filter(void *ctx, const struct store_obj *o)
{
	const struct api_filter *flt = ctx;
	const char *m;
	size_t mlen;
	if (api_filter_meta_only(flt) && api_meta_span(store_obj_data(o), o->len, &m, &mlen)) {
		/* parse only the metadata (a third of a pod) under a stack wrapper */
		cJSON *md = cJSON_ParseWithLength(m, mlen);
		if (!md)
			return false;
		cJSON wrap = {0};
		wrap.type = cJSON_Object;
		md->string = (char *)"metadata";
		md->type |= cJSON_StringIsConst;
		cJSON_AddItemToArray(&wrap, md);
		bool ok = api_filter_obj(flt, &wrap);
		cJSON_DetachItemViaPointer(&wrap, md);
		cJSON_Delete(md);
		return ok;
	}
	cJSON *j = api_parse_view(flt->res, o);
	bool ok = api_filter_obj(flt, j);
	cJSON_Delete(j);
	return ok;
}

/* Parses labelSelector/fieldSelector of rq into flt. */
k32_status_t api_filter_init(const struct api_req *rq, struct api_filter *flt, struct api_fail *f)
{
	char *buf = api_zalloc(K32_API_SELECTOR_LEN + 1);
	k32_status_t st = K32_OK;
	memset(flt, 0, sizeof(*flt));
	flt->res = rq->res;
	if (!buf)
		return api_fail_set(f, 500, "InternalError", "out of memory parsing selectors");
	if (api_q(rq, "labelSelector", buf, K32_API_SELECTOR_LEN + 1) && buf[0]) {
		st = api_label_selector_parse(buf, &flt->lsel, f);
		flt->has_l = flt->lsel.term_count > 0;
	}
	if (!st && api_q(rq, "fieldSelector", buf, K32_API_SELECTOR_LEN + 1) && buf[0]) {
		st = api_field_selector_parse(buf, rq->res, &flt->fsel, f);
		flt->has_f = flt->fsel.term_count > 0;
	}
	api_free(buf, K32_API_SELECTOR_LEN + 1);
	return st;
}

/*
 * Compresses the rendered list in b, keeps it in the cache under key at rev, and puts the
 * compressed bytes in b. Leaves b plain (the http layer may still compress it) when gzip
 * fails or the copy cannot be made.
 */
static bool api_list_gzip(struct api_server *api, const char *key, uint64_t rev, struct k32_buf *b)
{
	struct k32_buf z;
	bool ok;
	k32_buf_init(&z, k32_default_allocator(), b->len - 1, "gzip list");
	ok = http_gzip(b->data, b->len, &z, NULL) == K32_OK;
	if (ok) {
		api_cache_put(&api->lists, key, rev, z.data, z.len);
		k32_buf_reset(b);
		ok = k32_buf_append(b, z.data, z.len, NULL) == K32_OK;
	}
	k32_buf_fini(&z);
	return ok;
}

static void api_list(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
	struct api_filter *flt = api_zalloc(sizeof(*flt));
	struct store_list list;
	char tok[STORE_CONTINUE_LEN], v[32];
	memset(&list, 0, sizeof(list));
	api_fail_clear(f);
	if (!flt) {
		api_fail_set(f, 500, "InternalError", "out of memory");
		api_out_fail(out, f);
		return;
	}
	if (api_filter_init(rq, flt, f)) {
		api_out_fail(out, f);
		goto out_free;
	}
	struct store_list_opts opts = {0};
	if (api_q(rq, "limit", v, sizeof(v)) && v[0]) {
		char *end;
		unsigned long l = strtoul(v, &end, 10);
		if (*end || v[0] == '-') {
			api_fail_set(f, 400, "BadRequest",
				     "limit=%s: expected a non-negative integer", v);
			api_out_fail(out, f);
			goto out_free;
		}
		opts.limit = l > 100000 ? 100000 : (uint32_t)l;
	}
	if (api_q(rq, "continue", tok, sizeof(tok)) && tok[0])
		opts.continue_token = tok;
	/* resourceVersionMatch=Exact: read at that revision (410 once it left the history) */
	if (api_q(rq, "resourceVersionMatch", v, sizeof(v)) && !strcmp(v, "Exact") &&
	    api_q(rq, "resourceVersion", v, sizeof(v)) && v[0]) {
		char *end;
		opts.rev = strtoull(v, &end, 10);
		if (*end || !opts.rev) {
			api_fail_set(
			    f, 400, "BadRequest",
			    "resourceVersion=%s: expected a revision from a list or an object", v);
			api_out_fail(out, f);
			goto out_free;
		}
	}
	if (flt->has_l || flt->has_f) {
		opts.filter = api_store_filter;
		opts.filter_ctx = flt;
	}
	/* A plain list for a gzip client, read at the current revision: the same answer as
	 * last time while the store has not moved (api_cache.c). */
	char ckey[K32_API_LIST_CACHE_KEY_LEN];
	bool cache = rq->gzip && !rq->table && !opts.rev && !opts.continue_token &&
		     api_cache_key(rq, ckey, sizeof(ckey));
	if (cache && api_cache_get(&api->lists, ckey, store_rev(api->store), out->body)) {
		out->code = 200;
		out->gzip = true;
		snprintf(out->ctype, sizeof(out->ctype), "application/json");
		goto out_free;
	}
	struct store_key key;
	struct k32_err err;
	k32_err_clear(&err);
	api_key(rq->res, rq->ns, "", &key);
	k32_status_t st = store_list(api->store, &key, &opts, &list, &err);
	if (st) {
		if (st == K32_ERR_OUT_OF_RANGE)
			api_fail_set(f, 504, "Timeout", "Too large resource version: %s", err.msg);
		else if (st == K32_ERR_COMPACTED)
			api_fail_set(f, 410, "Expired",
				     "The provided continue parameter is too old to display a "
				     "consistent list result. You can start a new list without the "
				     "continue parameter. (%s)",
				     err.msg);
		else
			api_store_err(f, rq->res, "", st, &err);
		api_out_fail(out, f);
		goto out_fini;
	}
	char rv[24];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)list.rev);
	if (rq->table) {
		size_t objs_len = (list.count ? list.count : 1) * sizeof(const cJSON *);
		const cJSON **objs = api_zalloc(objs_len);
		for (uint32_t i = 0; objs && i < list.count; i++)
			objs[i] = api_parse_view(rq->res, list.items[i]);
		cJSON *t =
		    objs ? api_table_build(rq->res, objs, list.count, api_now_s(), rv, true) : NULL;
		for (uint32_t i = 0; objs && i < list.count; i++)
			cJSON_Delete((cJSON *)objs[i]);
		api_free(objs, objs_len);
		if (t && list.continue_token[0])
			cJSON_AddStringToObject(cJSON_GetObjectItem(t, "metadata"), "continue",
						list.continue_token);
		snprintf(out->ctype, sizeof(out->ctype), "%s", API_CT_TABLE);
		api_out_json(out, 200, t);
		goto out_fini;
	}
	/* plain list: the stored texts, concatenated (no parse) */
	char av[API_VERSION_LEN];
	api_resource_api_version(rq->res, av, sizeof(av));
	struct k32_buf *b = out->body;
	k32_buf_reset(b);
	k32_err_clear(&err);
	st = k32_buf_printf(
	    b, &err,
	    "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%s\"",
	    rq->res->kind, av, rv);
	if (!st && list.continue_token[0]) {
		cJSON *ts = cJSON_CreateString(list.continue_token);
		char *tj = ts ? cJSON_PrintUnformatted(ts) : NULL;
		st = tj ? k32_buf_printf(b, &err, ",\"continue\":%s", tj) : K32_ERR_NO_MEMORY;
		cJSON_free(tj);
		cJSON_Delete(ts);
	}
	if (!st)
		st = k32_buf_append_str(b, "},\"items\":[", &err);
	for (uint32_t i = 0; !st && i < list.count; i++) {
		if (i)
			st = k32_buf_append(b, ",", 1, &err);
		if (!st && api_events_v1(rq->res))
			st = api_event_append_v1(b, list.items[i], &err);
		else if (!st) {
			const char *d = store_obj_data(list.items[i]);
			size_t dl = list.items[i]->len;
			char head[API_CRD_VIEW_HEAD_LEN];
			size_t skip = api_crd_view_head(rq->res, d, dl, head, sizeof(head));
			if (skip)
				st = k32_buf_append_str(b, head, &err);
			if (!st)
				st = k32_buf_append(b, d + skip, dl - skip, &err);
		}
	}
	if (!st)
		st = k32_buf_append_str(b, "]}", &err);
	if (st) {
		api_fail_set(f, 500, "InternalError",
			     "the list does not fit in the response (%s); use limit and continue",
			     err.msg);
		api_out_fail(out, f);
		goto out_fini;
	}
	out->code = 200;
	snprintf(out->ctype, sizeof(out->ctype), "application/json");
	if (cache && b->len >= K32_HTTP_GZIP_MIN_BYTES)
		out->gzip = api_list_gzip(api, ckey, list.rev, b);
out_fini:
	store_list_fini(api->store, &list);
out_free:
	api_free(flt, sizeof(*flt));
}

/* ---- create ---------------------------------------------------------------------------- */

static k32_status_t api_check_type(const struct api_req *rq, const cJSON *obj, struct api_fail *f)
{
	const char *kind = api_jstr(obj, "kind");
	const char *av = api_jstr(obj, "apiVersion");
	char want[API_VERSION_LEN];
	api_resource_api_version(rq->res, want, sizeof(want));
	if (kind && kind[0] && strcmp(kind, rq->res->kind))
		return api_fail_set(f, 400, "BadRequest",
				    "the body is a %s, but the URL is for %s (%s)", K32_CLIP(kind),
				    rq->res->plural, rq->res->kind);
	if (av && av[0] && strcmp(av, want))
		return api_fail_set(
		    f, 400, "BadRequest",
		    "the API version in the data (%s) does not match the expected API version (%s)",
		    K32_CLIP(av), want);
	return K32_OK;
}

static k32_status_t api_ns_usable(struct api_server *api, const char *ns, struct api_fail *f)
{
	const struct api_resource *nsres = api_registry_find("", "v1", "namespaces");
	struct store_obj *o = NULL;
	k32_status_t st = api_get_obj(api, nsres, "", ns, &o, f);
	if (st)
		return st;
	cJSON *j = api_parse_obj(o);
	const char *phase = api_jstr(j, "status.phase");
	if (phase && !strcmp(phase, "Terminating"))
		st = api_fail_forbidden(
		    f, nsres, ns,
		    "unable to create new content in namespace because it is being terminated");
	cJSON_Delete(j);
	store_obj_unref(api->store, o);
	return st;
}

static k32_status_t api_prepare_new(struct api_server *api, struct api_req *rq, cJSON *obj,
				    struct api_fail *f)
{
	enum api_field_validation fv;
	k32_status_t st = api_check_type(rq, obj, f);
	if (st)
		return st;
	if ((st = api_field_validation(rq, &fv, f)) ||
	    (st = api_dedupe_fields(rq->res, obj, fv, &rq->warn, f)) ||
	    (st = api_check_unknown_fields(rq->res, obj, fv, &rq->warn, f)))
		return st;
	api_set_type(obj, rq->res);
	cJSON *md = api_meta(obj);
	if (!md)
		return api_fail_set(f, 500, "InternalError", "out of memory");
	const char *bns = api_jstr(md, "namespace");
	if (rq->res->namespaced) {
		if (bns && bns[0] && rq->ns[0] && strcmp(bns, rq->ns))
			return api_fail_set(f, 400, "BadRequest",
					    "the namespace of the provided object (%s) does not "
					    "match the namespace sent on the request (%s)",
					    K32_CLIP(bns), rq->ns);
		if (!rq->ns[0] && !(bns && bns[0]))
			return api_fail_set(f, 400, "BadRequest",
					    "%s is namespaced: create it under /namespaces/<ns>/%s",
					    rq->res->kind, rq->res->plural);
		if (rq->ns[0])
			api_set_str(md, "namespace", rq->ns);
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "namespace");
	}
	const char *name = api_jstr(md, "name");
	const char *gen = api_jstr(md, "generateName");
	if ((!name || !name[0]) && gen && gen[0]) {
		static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
		uint8_t r[5];
		char nm[260];
		if (k32_plat()->random(r, sizeof(r)) != K32_OK)
			for (size_t i = 0; i < 5; i++)
				r[i] = (uint8_t)(++api->name_seq * 7 + i);
		snprintf(nm, sizeof(nm), "%.247s%c%c%c%c%c", gen, alnum[r[0] % 27],
			 alnum[r[1] % 27], alnum[r[2] % 27], alnum[r[3] % 27], alnum[r[4] % 27]);
		api_set_str(md, "name", nm);
	}
	st = api_default(rq->res, obj, f);
	if (st)
		return st;
	st = api_validate(rq->res, obj, f);
	if (st)
		return st;
	char uid[40], ts[32];
	api_new_uid(uid, sizeof(uid));
	api_format_time(api_now_s(), ts, sizeof(ts));
	api_set_str(md, "uid", uid);
	api_set_str(md, "creationTimestamp", ts);
	cJSON_DeleteItemFromObjectCaseSensitive(md, "deletionTimestamp");
	cJSON_DeleteItemFromObjectCaseSensitive(md, "deletionGracePeriodSeconds");
	cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
	cJSON_DeleteItemFromObjectCaseSensitive(md, "selfLink");
	if (rq->res->strategy->generation)
		api_set_num(md, "generation", 1);
	else
		cJSON_DeleteItemFromObjectCaseSensitive(md, "generation");
	return K32_OK;
}

static void api_create(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
	cJSON *obj = NULL;
	char why[API_WHY_LEN];
	api_fail_clear(f);
	if (api_decode_body(rq, &obj, f))
		goto out_fail;
	if (!cJSON_IsObject(obj)) {
		api_fail_set(f, 400, "BadRequest", "the request body must be a JSON object");
		goto out_fail;
	}
	if (api_prepare_new(api, rq, obj, f))
		goto out_fail;
	const char *name = api_jstr(obj, "metadata.name");
	const char *ns = api_jstr(obj, "metadata.namespace");
	if (!api_authorize(rq->who, "create", rq->res, "", ns, name, obj, why, sizeof(why))) {
		api_fail_forbidden(f, rq->res, name, why);
		goto out_fail;
	}
	if (api_node_restrict(rq->who, rq->res, NULL, obj, f))
		goto out_fail;
	if (rq->res->namespaced && api_ns_usable(api, ns, f))
		goto out_fail;
	if (api_service_room(api, rq->res, f)) /* K32_SVC_MAX (api_proxy.c) */
		goto out_fail;
	if (api_dry_run(rq)) {
		api_out_cjson_obj(rq, out, 201, obj);
		return;
	}
	struct store_obj *so = NULL;
	if (api_put_obj(api, rq->res, obj, true, 0, &so, f))
		goto out_fail;
	cJSON_Delete(obj);
	api_out_obj(rq, out, 201, so);
	store_obj_unref(api->store, so);
	return;
out_fail:
	cJSON_Delete(obj);
	api_out_fail(out, f);
}

/* ---- update / patch -------------------------------------------------------------------- */

/* Carries the server-owned metadata of old into upd and bumps generation on spec change. */
static void api_carry_meta(const struct api_resource *res, const cJSON *old, cJSON *upd)
{
	cJSON *md = api_meta(upd);
	const cJSON *omd = cJSON_GetObjectItemCaseSensitive(old, "metadata");
	static const char *const keep[] = {
	    "uid",  "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
	    "name", "namespace"};
	for (size_t i = 0; md && i < sizeof(keep) / sizeof(keep[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(omd, keep[i]);
		cJSON_DeleteItemFromObjectCaseSensitive(md, keep[i]);
		if (v)
			api_json_put(md, keep[i], cJSON_Duplicate(v, true));
	}
	cJSON_DeleteItemFromObjectCaseSensitive(md, "selfLink");
	if (res->strategy->generation) {
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(omd, "generation");
		double gen = cJSON_IsNumber(g) ? g->valuedouble : 1;
		if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, "spec"),
				   cJSON_GetObjectItemCaseSensitive(upd, "spec"), true))
			gen += 1;
		api_set_num(md, "generation", gen);
	}
	api_set_type(upd, res);
}

/* Whether two versions are equal ignoring resourceVersion. */
static bool api_same(const cJSON *a, const cJSON *b)
{
	cJSON *x = cJSON_Duplicate(a, true), *y = cJSON_Duplicate(b, true);
	bool same = false;
	if (x && y) {
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(x, "metadata"),
							"resourceVersion");
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(y, "metadata"),
							"resourceVersion");
		same = cJSON_Compare(x, y, true);
	}
	cJSON_Delete(x);
	cJSON_Delete(y);
	return same;
}

static cJSON *api_scale_of(const struct api_resource *res, const cJSON *o, uint64_t rv)
{
	cJSON *s = cJSON_CreateObject();
	if (!s)
		return NULL;
	cJSON_AddStringToObject(s, "kind", "Scale");
	cJSON_AddStringToObject(s, "apiVersion", "autoscaling/v1");
	cJSON *md = cJSON_AddObjectToObject(s, "metadata");
	static const char *const keys[][2] = {{"name", "metadata.name"},
					      {"namespace", "metadata.namespace"},
					      {"uid", "metadata.uid"},
					      {"creationTimestamp", "metadata.creationTimestamp"}};
	for (size_t i = 0; i < 4; i++) {
		const char *v = api_jstr(o, keys[i][1]);
		if (v)
			cJSON_AddStringToObject(md, keys[i][0], v);
	}
	char rvs[24];
	snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
	cJSON_AddStringToObject(md, "resourceVersion", rvs);
	/* a custom resource's paths come from its CRD's scale subresource */
	char sp[64] = "spec.replicas", stp[64] = "status.replicas", selp[64] = "";
	bool custom = api_crd_scale_paths(res, sp, stp, selp, sizeof(sp));
	const cJSON *rep = k32_json_find(o, sp);
	cJSON *spec = cJSON_AddObjectToObject(s, "spec");
	double unset = custom ? 0 : 1; /* kube-apiserver's defaults: Deployments have 1 */
	cJSON_AddNumberToObject(spec, "replicas", cJSON_IsNumber(rep) ? rep->valuedouble : unset);
	cJSON *st = cJSON_AddObjectToObject(s, "status");
	const cJSON *cur = k32_json_find(o, stp);
	cJSON_AddNumberToObject(st, "replicas", cJSON_IsNumber(cur) ? cur->valuedouble : 0);
	char sel[256];
	const cJSON *ml = k32_json_find(o, "spec.selector.matchLabels");
	if (custom && selp[0] && cJSON_IsString(k32_json_find(o, selp)))
		cJSON_AddStringToObject(st, "selector", k32_json_find(o, selp)->valuestring);
	else if (!custom && ml && api_selector_from_match_labels(ml, sel, sizeof(sel)))
		cJSON_AddStringToObject(st, "selector", sel);
	return s;
}

enum api_write_kind {
	API_WRITE_PUT,
	API_WRITE_PATCH,
};

/* The field manager of a write: fieldManager, else the User-Agent's product, else kube32. */
static void api_manager(const struct api_req *rq, char *buf, size_t cap)
{
	if (api_q(rq, "fieldManager", buf, cap) && buf[0])
		return;
	size_t n = strcspn(rq->user_agent, "/ ");
	if (n)
		snprintf(buf, cap, "%.*s", (int)n, rq->user_agent);
	else
		snprintf(buf, cap, "kube32");
}

struct api_ssa_buf {
	struct api_ssa_ctx cx;
	char manager[API_FIELD_MANAGER_MAX + 1], api_version[API_VERSION_LEN], time[32];
};

static void api_ssa_ctx_init(const struct api_req *rq, struct api_ssa_buf *b)
{
	api_manager(rq, b->manager, sizeof(b->manager));
	api_resource_api_version(rq->res, b->api_version, sizeof(b->api_version));
	api_format_time(api_now_s(), b->time, sizeof(b->time));
	b->cx.manager = b->manager;
	b->cx.api_version = b->api_version;
	b->cx.time = b->time;
	b->cx.force = api_q_bool(rq, "force", false);
	b->cx.skip_status = (rq->res->subresources & API_SUB_STATUS) != 0;
}

/* ---- one write: the generic core and the object, status and scale strategies ----------- */

/* One attempt of a PUT or PATCH of an existing object. Every cJSON here is owned by the
 * attempt and freed once, in api_write_end, whatever path the attempt took. */
struct api_write {
	struct api_server *api;
	struct api_req *rq;
	const struct api_write_strategy *ws;
	enum api_write_kind wk;
	enum api_patch_type pt;
	const cJSON *body; /* the client's object or patch (not owned) */
	bool ssa;	   /* server-side apply with field ownership */
	enum api_field_validation fv;
	struct api_ssa_buf sb;
	struct store_obj *old; /* the stored version */
	cJSON *oldj;	       /* old, parsed */
	cJSON *input;	       /* what the client edited, after its change */
	cJSON *upd;	       /* the new version */
};

/* What a write to one target of an object does differently, as kube-apiserver's generic
 * store with its StatusREST and ScaleREST: the view the client edits (and is answered
 * with), whether the edited view gets the object's field checks, how the edited view
 * becomes the new version, and whether the new version is validated. */
struct api_write_strategy {
	/* the view of an object the client edits and is answered with; NULL: the object */
	cJSON *(*view)(const struct api_resource *res, const cJSON *o, uint64_t rv);
	bool check_fields; /* type, duplicate and unknown-field checks of the edited view */
	/* w->upd from w->oldj and w->input (which it may take) */
	k32_status_t (*compose)(struct api_write *w, struct api_fail *f);
	/* a status write keeps the stored spec and metadata: validating them again would
	 * only lock out the status of an object stored before a rule was added (the kubelet
	 * could not fail a pod whose limits it refuses), as kube-apiserver's status
	 * strategies validate the status, not the spec */
	bool validate;
};

/* A conflict the client caused (a stale resourceVersion, an apply field conflict) is its
 * answer; only a concurrent writer's conflict at the store is retried. */
static k32_status_t api_no_retry(k32_status_t st)
{
	return st == K32_ERR_CONFLICT ? K32_ERR_BAD_STATE : st;
}

static k32_status_t api_oom(struct api_fail *f)
{
	return api_fail_set(f, 500, "InternalError", "out of memory");
}

/* The object itself: the client's version, keeping the stored status when status is a
 * subresource (written only through it). */
static k32_status_t api_compose_object(struct api_write *w, struct api_fail *f)
{
	w->upd = w->input;
	w->input = NULL;
	if (w->rq->res->subresources & API_SUB_STATUS) {
		cJSON_DeleteItemFromObjectCaseSensitive(w->upd, "status");
		const cJSON *os = cJSON_GetObjectItemCaseSensitive(w->oldj, "status");
		if (os)
			api_json_put(w->upd, "status", cJSON_Duplicate(os, true));
	}
	(void)f;
	return K32_OK;
}

/* /status: the stored object with the client's status. */
static k32_status_t api_compose_status(struct api_write *w, struct api_fail *f)
{
	w->upd = cJSON_Duplicate(w->oldj, true);
	if (!w->upd)
		return api_oom(f);
	cJSON *ns = cJSON_DetachItemFromObjectCaseSensitive(w->input, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(w->upd, "status");
	if (ns)
		api_json_put(w->upd, "status", ns);
	return K32_OK;
}

/* /scale: the stored object with the Scale's spec.replicas. */
static k32_status_t api_compose_scale(struct api_write *w, struct api_fail *f)
{
	const cJSON *r = k32_json_find(w->input, "spec.replicas");
	w->upd = cJSON_Duplicate(w->oldj, true);
	if (!cJSON_IsNumber(r) || r->valuedouble < 0) {
		api_fail_add_cause(f, "FieldValueInvalid", "spec.replicas",
				   "Invalid value: must be a non-negative integer");
		return api_no_retry(api_fail_invalid(f, "Scale", w->rq->name));
	}
	if (!w->upd)
		return api_oom(f);
	char sp[64], stp[64], selp[64];
	if (api_crd_scale_paths(w->rq->res, sp, stp, selp, sizeof(sp))) {
		if (!api_crd_set_number(w->upd, sp, r->valuedouble))
			return api_oom(f);
		return K32_OK;
	}
	cJSON *spec = cJSON_GetObjectItem(w->upd, "spec");
	if (spec)
		api_set_num(spec, "replicas", r->valuedouble);
	return K32_OK;
}

static const struct api_write_strategy api_write_object = {
    .view = NULL, .check_fields = true, .compose = api_compose_object, .validate = true};
static const struct api_write_strategy api_write_status = {
    .view = NULL, .check_fields = true, .compose = api_compose_status, .validate = false};
static const struct api_write_strategy api_write_scale = {
    .view = api_scale_of, .check_fields = false, .compose = api_compose_scale, .validate = true};

/* The strategy of a write to sub ("", "status" or "scale"; the router allows no other). */
static const struct api_write_strategy *api_write_strategy_of(const char *sub)
{
	if (!strcmp(sub, "scale"))
		return &api_write_scale;
	if (!strcmp(sub, "status"))
		return &api_write_status;
	return &api_write_object;
}

/* Server-side apply of an object that does not exist creates it. */
static k32_status_t api_apply_create(struct api_write *w, struct api_out *out, struct api_fail *f)
{
	struct api_req *rq = w->rq;
	char why[API_WHY_LEN];
	struct store_obj *so = NULL;
	cJSON *obj = cJSON_Duplicate(w->body, true);
	if (!obj)
		return api_oom(f);
	k32_status_t st = api_prepare_new(w->api, rq, obj, f);
	if (!st)
		st = api_ssa_create(obj, w->body, &w->sb.cx, f);
	if (!st &&
	    !api_authorize(rq->who, "create", rq->res, "", rq->ns, rq->name, obj, why, sizeof(why)))
		st = api_fail_forbidden(f, rq->res, rq->name, why);
	if (!st)
		st = api_node_restrict(rq->who, rq->res, NULL, obj, f);
	if (!st && rq->res->namespaced)
		st = api_ns_usable(w->api, rq->ns, f);
	if (!st && api_dry_run(rq)) {
		api_out_cjson_obj(rq, out, 201, obj); /* takes obj */
		return K32_OK;
	}
	if (!st)
		st = api_put_obj(w->api, rq->res, obj, true, 0, &so, f);
	cJSON_Delete(obj);
	if (!st) {
		api_out_obj(rq, out, 201, so);
		store_obj_unref(w->api->store, so);
	}
	return st;
}

/* w->input: the client's object (PUT) or the patched view (PATCH), checked as the strategy
 * says, and carrying no resourceVersion but the stored one. */
static k32_status_t api_write_edit(struct api_write *w, struct api_fail *f)
{
	struct api_req *rq = w->rq;
	const struct api_write_strategy *ws = w->ws;
	k32_status_t st = K32_OK;
	if (w->wk == API_WRITE_PUT) {
		w->input = cJSON_Duplicate(w->body, true);
		if (!w->input)
			return api_oom(f);
		const char *bname = api_jstr(w->input, "metadata.name");
		if (bname && strcmp(bname, rq->name))
			return api_fail_set(
			    f, 400, "BadRequest",
			    "the name of the object (%s) does not match the name on the URL (%s)",
			    K32_CLIP(bname), rq->name);
		if (ws->check_fields &&
		    ((st = api_check_type(rq, w->input, f)) ||
		     (st = api_dedupe_fields(rq->res, w->input, w->fv, &rq->warn, f)) ||
		     (st = api_check_unknown_fields(rq->res, w->input, w->fv, &rq->warn, f))))
			return st;
	} else {
		w->input = ws->view ? ws->view(rq->res, w->oldj, w->old->mod_rev)
				    : cJSON_Duplicate(w->oldj, true);
		if (!w->input)
			return api_oom(f);
		if (w->ssa)
			st = api_ssa_apply(&w->input, w->body, &w->sb.cx, f);
		else
			st = api_patch_apply(w->pt == API_PATCH_APPLY ? API_PATCH_STRATEGIC : w->pt,
					     &w->input, w->body, f);
		if (st)
			return api_no_retry(st); /* the patch's own fault (or a field conflict) */
		if (ws->check_fields &&
		    (st = api_check_unknown_fields(rq->res, w->input, w->fv, &rq->warn, f)))
			return st;
	}
	/* optimistic concurrency: a resourceVersion in the input must be the stored one */
	const char *irv = api_jstr(w->input, "metadata.resourceVersion");
	char cur_rv[24];
	snprintf(cur_rv, sizeof(cur_rv), "%llu", (unsigned long long)w->old->mod_rev);
	if (irv && irv[0] && strcmp(irv, cur_rv))
		return api_no_retry(api_fail_conflict(f, rq->res, rq->name));
	return K32_OK;
}

/* Server-owned metadata, defaults, validation, node authorization and field ownership of
 * w->upd; every failure is the client's answer. */
static k32_status_t api_write_check(struct api_write *w, struct api_fail *f)
{
	struct api_req *rq = w->rq;
	k32_status_t st;
	api_carry_meta(rq->res, w->oldj, w->upd);
	if ((st = api_default(rq->res, w->upd, f)) ||
	    ((w->ws->validate || rq->res->strategy == &api_strategy_custom) /* schema: status too */
	     && (st = api_validate(rq->res, w->upd, f))) ||
	    (st = api_node_restrict(rq->who, rq->res, w->oldj, w->upd, f)) ||
	    (st = api_rbac_update_check(rq->res, w->oldj, w->upd, f)))
		return api_no_retry(st);
	/* field ownership: apply did its own; any other write is an Update of its manager */
	if (!w->ssa && (st = api_ssa_update(w->oldj, w->upd, &w->sb.cx, rq->sub, f)))
		return api_no_retry(st);
	return K32_OK;
}

/* Stores w->upd (unless unchanged or a dry run), completes a deletion whose last finalizer
 * went, and answers with the new version in the strategy's view. A pod bound to a node
 * and deleted with a grace period is not: its kubelet completes that deletion (grace 0) once
 * its container is stopped, and its status writes meanwhile must not remove it first. */
static k32_status_t api_write_commit(struct api_write *w, struct api_out *out, struct api_fail *f)
{
	struct api_req *rq = w->rq;
	const struct api_write_strategy *ws = w->ws;
	const cJSON *fins = k32_json_find(w->upd, "metadata.finalizers");
	const cJSON *grace = k32_json_find(w->upd, "metadata.deletionGracePeriodSeconds");
	bool kubelet_stopping = rq->res->strategy->graceful_on_node &&
				api_jstr(w->upd, "spec.nodeName") && cJSON_IsNumber(grace) &&
				grace->valuedouble > 0;
	bool finish_delete = api_jstr(w->upd, "metadata.deletionTimestamp") &&
			     cJSON_GetArraySize(fins) == 0 && !kubelet_stopping;
	if (api_same(w->oldj, w->upd) || api_dry_run(rq)) {
		if (ws->view)
			api_out_json(out, 200, ws->view(rq->res, w->upd, w->old->mod_rev));
		else if (api_dry_run(rq))
			api_out_cjson_obj(rq, out, 200, cJSON_Duplicate(w->upd, true));
		else
			api_out_obj(rq, out, 200, w->old);
		return K32_OK;
	}
	struct store_obj *so = NULL;
	k32_status_t st = api_put_obj_marked(w->api, rq->res, w->upd, false, w->old->mod_rev,
					     api_write_essential(rq->res, rq->sub), &so, f);
	if (st)
		return st; /* a store Conflict here is retried by the caller */
	if (finish_delete) {
		/* the last finalizer went: the deletion completes now */
		struct store_obj *gone = NULL;
		st = api_delete_now(w->api, rq->res, rq->ns, rq->name, so->mod_rev, "Background", 0,
				    &gone, f);
		store_obj_unref(w->api->store, gone);
		if (st && st != K32_ERR_NOT_FOUND) {
			store_obj_unref(w->api->store, so);
			return api_no_retry(st);
		}
		api_fail_clear(f);
	}
	if (ws->view) {
		cJSON *nj = api_parse_obj(so);
		out->ctype[0] = 0;
		api_out_json(out, 200, nj ? ws->view(rq->res, nj, so->mod_rev) : NULL);
		cJSON_Delete(nj);
	} else {
		api_out_obj(rq, out, 200, so);
	}
	store_obj_unref(w->api->store, so);
	return K32_OK;
}

static void api_write_end(struct api_write *w)
{
	cJSON_Delete(w->input);
	cJSON_Delete(w->upd);
	cJSON_Delete(w->oldj);
	store_obj_unref(w->api->store, w->old);
}

/* One attempt of an update or patch; returns K32_ERR_CONFLICT (f filled) to retry. */
static k32_status_t api_update_once(struct api_server *api, struct api_req *rq, struct api_out *out,
				    enum api_write_kind wk, enum api_patch_type pt,
				    const cJSON *body, struct api_fail *f)
{
	struct api_write w = {.api = api,
			      .rq = rq,
			      .ws = api_write_strategy_of(rq->sub),
			      .wk = wk,
			      .pt = pt,
			      .body = body,
			      .ssa = pt == API_PATCH_APPLY && !rq->sub[0]};
	char why[API_WHY_LEN];
	api_ssa_ctx_init(rq, &w.sb);
	memset(&rq->warn, 0, sizeof(rq->warn)); /* a retried attempt warns afresh */
	if (api_field_validation(rq, &w.fv, f))
		return K32_ERR_BAD_STATE; /* not retried */
	k32_status_t st = api_get_obj(api, rq->res, rq->ns, rq->name, &w.old, f);
	if (st == K32_ERR_NOT_FOUND && w.ssa) {
		api_fail_clear(f);
		return api_apply_create(&w, out, f);
	}
	if (st)
		return st;
	w.oldj = api_parse_view(rq->res, w.old);
	if (!w.oldj) {
		st = api_fail_set(f, 500, "InternalError", "stored %s %s does not parse",
				  rq->res->kind, rq->name);
	} else if (!api_authorize(rq->who, wk == API_WRITE_PUT ? "update" : "patch", rq->res,
				  rq->sub, rq->ns, rq->name, w.oldj, why, sizeof(why))) {
		st = api_fail_forbidden(f, rq->res, rq->name, why);
	} else if (!(st = api_write_edit(&w, f)) && !(st = w.ws->compose(&w, f)) &&
		   !(st = api_write_check(&w, f))) {
		st = api_write_commit(&w, out, f);
	}
	api_write_end(&w);
	return st;
}

static void api_update(struct api_server *api, struct api_req *rq, struct api_out *out,
		       enum api_write_kind wk)
{
	/* the request's own failure record: a 2.8 KB struct api_fail stays off the stack */
	struct api_fail *f = &rq->fail;
	cJSON *body = NULL;
	enum api_patch_type pt = API_PATCH_MERGE;
	api_fail_clear(f);
	if (wk == API_WRITE_PATCH) {
		if (strstr(rq->ctype, "application/json-patch+json"))
			pt = API_PATCH_JSON;
		else if (strstr(rq->ctype, "application/merge-patch+json"))
			pt = API_PATCH_MERGE;
		else if (strstr(rq->ctype, "application/strategic-merge-patch+json"))
			pt = API_PATCH_STRATEGIC;
		else if (strstr(rq->ctype, "application/apply-patch"))
			pt = API_PATCH_APPLY;
		else {
			api_fail_set(f, 415, "UnsupportedMediaType",
				     "the body of the request was in an unknown format - accepted "
				     "media types include: application/json-patch+json, "
				     "application/merge-patch+json, application/apply-patch+yaml, "
				     "application/strategic-merge-patch+json (got \"%s\")",
				     K32_CLIP(rq->ctype));
			api_out_fail(out, f);
			return;
		}
		char fm[API_FIELD_MANAGER_MAX + 1];
		if (pt == API_PATCH_APPLY &&
		    !(api_q(rq, "fieldManager", fm, sizeof(fm)) && fm[0])) {
			api_fail_set(f, 400, "BadRequest",
				     "PATCH %s: fieldManager is required for apply requests; add "
				     "?fieldManager=NAME (kubectl sends --field-manager, default "
				     "\"kubectl\")",
				     rq->path);
			api_out_fail(out, f);
			return;
		}
	}
	if (api_decode_body(rq, &body, f)) {
		api_out_fail(out, f);
		return;
	}
	if (wk == API_WRITE_PUT && !cJSON_IsObject(body)) {
		cJSON_Delete(body);
		api_fail_set(f, 400, "BadRequest", "the request body must be a JSON object");
		api_out_fail(out, f);
		return;
	}
	k32_status_t st = K32_ERR_CONFLICT;
	/* a conflict with a concurrent writer (not a stale client version) is retried */
	for (int attempt = 0; attempt < K32_API_WRITE_RETRIES && st == K32_ERR_CONFLICT;
	     attempt++) {
		api_fail_clear(f);
		k32_buf_reset(out->body);
		st = api_update_once(api, rq, out, wk, pt, body, f);
		if (st == K32_ERR_CONFLICT &&
		    (wk == API_WRITE_PUT && api_jstr(body, "metadata.resourceVersion")))
			break;
	}
	cJSON_Delete(body);
	if (st)
		api_out_fail(out, f);
}

static void api_get(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail; /* off the stack (2.8 KB) */
	struct store_obj *o = NULL;
	api_fail_clear(f);
	if (api_get_obj(api, rq->res, rq->ns, rq->name, &o, f)) {
		api_out_fail(out, f);
		return;
	}
	if (!strcmp(rq->sub, "scale")) {
		cJSON *j = api_parse_obj(o);
		api_out_json(out, 200, j ? api_scale_of(rq->res, j, o->mod_rev) : NULL);
		cJSON_Delete(j);
	} else {
		api_out_obj(rq, out, 200, o);
	}
	store_obj_unref(api->store, o);
}

void api_crud(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail *f = &rq->fail;
	const char *m = rq->method;
	const struct api_resource *res = rq->res;
	bool named = rq->name[0] != 0;
	uint32_t need = 0;
	api_fail_clear(f);
	if (res->namespaced && !rq->ns[0] && named)
		goto ns_required;
	if (!strcmp(m, "GET")) {
		bool watch = api_q_bool(rq, "watch", false);
		need = watch ? API_VERB_WATCH : named ? API_VERB_GET : API_VERB_LIST;
		if (!(res->verbs & need))
			goto not_allowed;
		if (watch) {
			api_watch(api, rq, out);
		} else if (!strcmp(rq->sub, "log")) {
			api_log(api, rq, out);
		} else if (named) {
			if (rq->sub[0] && strcmp(rq->sub, "status") && strcmp(rq->sub, "scale"))
				goto not_allowed;
			api_get(api, rq, out);
		} else {
			api_list(api, rq, out);
		}
		return;
	}
	if (!strcmp(m, "POST")) {
		if (named && !strcmp(rq->sub, "binding")) {
			api_binding(api, rq, out);
			return;
		}
		if (named && !strcmp(rq->sub, "eviction")) {
			api_eviction(api, rq, out);
			return;
		}
		if (named || !(res->verbs & API_VERB_CREATE))
			goto not_allowed;
		if (res->namespaced && !rq->ns[0])
			goto ns_required;
		api_create(api, rq, out);
		return;
	}
	if (!strcmp(m, "PUT") || !strcmp(m, "PATCH")) {
		bool put = m[1] == 'U';
		if (!named || !(res->verbs & (put ? API_VERB_UPDATE : API_VERB_PATCH)) ||
		    (rq->sub[0] && strcmp(rq->sub, "status") && strcmp(rq->sub, "scale")))
			goto not_allowed;
		api_update(api, rq, out, put ? API_WRITE_PUT : API_WRITE_PATCH);
		return;
	}
	if (!strcmp(m, "DELETE")) {
		if (rq->sub[0])
			goto not_allowed;
		if (named && (res->verbs & API_VERB_DELETE)) {
			api_delete(api, rq, out);
			return;
		}
		if (!named && (res->verbs & API_VERB_DELETECOLLECTION)) {
			api_delete_collection(api, rq, out);
			return;
		}
	}
ns_required:
	api_fail_set(f, 404, "NotFound",
		     "the server could not find the requested resource: %s is namespaced, use "
		     "/namespaces/<ns>/%s",
		     res->plural, res->plural);
	api_out_fail(out, f);
	return;
not_allowed:
	api_fail_set(f, 405, "MethodNotAllowed",
		     "the server does not allow this method on the requested resource (%s %s%s%s)",
		     m, res->plural, rq->sub[0] ? "/" : "", rq->sub);
	api_out_fail(out, f);
}
