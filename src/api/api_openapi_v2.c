/*
 * api_openapi_v2.c - /openapi/v2: the Swagger 2.0 document kubectl 1.27 and 1.28 need.
 *
 * Those kubectl versions fetch /openapi/v2 (as protobuf) before `apply`, `create -f`,
 * `replace`, `edit`, `diff` and `explain`, and stop when it is missing. The document is made
 * from the same schemas and paths as the /openapi/v3 documents (api_openapi.c): the v3
 * group-version documents are merged, `#/components/schemas/X` becomes `#/definitions/X`,
 * a reference wrapped in allOf becomes a plain $ref, and query parameters lose their schema
 * wrapper. It is served as JSON, or as protobuf when asked
 * (application/com.github.proto-openapi.spec.v2@v1.0+protobuf): the openapi_v2.Document
 * message of gnostic, written here by hand; vendor extensions and defaults are Any
 * messages holding YAML text (JSON is YAML). Nesting is bounded (API_OPENAPI_V2_DEPTH).
 */
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

#include "base/k32_json.h"

#define API_OPENAPI_V2_DEPTH 24 /* schema nesting the encoder follows */

/* ---- v3 -> v2 JSON ------------------------------------------------------------------------- */

/* Rewrites v3 idioms in place: refs, allOf-wrapped refs, parameter schemas. */
static void v2_rewrite(cJSON *o, int depth)
{
	if (!o || depth > API_OPENAPI_V2_DEPTH)
		return;
	cJSON *ref = cJSON_GetObjectItemCaseSensitive(o, "$ref");
	if (cJSON_IsString(ref) && !strncmp(ref->valuestring, "#/components/schemas/", 21)) {
		char buf[192];
		snprintf(buf, sizeof(buf), "#/definitions/%s", ref->valuestring + 21);
		cJSON_SetValuestring(ref, buf);
	}
	cJSON *all = cJSON_GetObjectItemCaseSensitive(o, "allOf");
	if (cJSON_GetArraySize(all) == 1 &&
	    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(all->child, "$ref"))) {
		cJSON *r = cJSON_DetachItemFromObjectCaseSensitive(all->child, "$ref");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "allOf");
		cJSON_AddItemToObject(o, "$ref", r);
		v2_rewrite(o, depth); /* the ref itself */
	}
	cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "in");
	cJSON *sch = cJSON_GetObjectItemCaseSensitive(o, "schema");
	if (cJSON_IsString(in) && strcmp(in->valuestring, "body") && cJSON_IsObject(sch)) {
		cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(sch, "type");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "schema");
		if (t)
			cJSON_AddItemToObject(o, "type", t);
	}
	cJSON *c;
	cJSON_ArrayForEach(c, o)
	{
		if (cJSON_IsObject(c) || cJSON_IsArray(c))
			v2_rewrite(c, depth + 1);
	}
}

cJSON *api_openapi_v2(void)
{
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	cJSON_AddStringToObject(doc, "swagger", "2.0");
	cJSON *info = cJSON_AddObjectToObject(doc, "info");
	cJSON_AddStringToObject(info, "title", "kube32");
	cJSON_AddStringToObject(info, "version", "v1.32.0-kube32");
	cJSON *paths = cJSON_AddObjectToObject(doc, "paths");
	cJSON *defs = cJSON_AddObjectToObject(doc, "definitions");
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	for (size_t i = 0; paths && defs && i < count; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(all[j]->group, all[i]->group) &&
			       !strcmp(all[j]->version, all[i]->version);
		if (seen)
			continue;
		cJSON *gv = api_openapi_group_version(all[i]->group, all[i]->version);
		if (!gv) {
			cJSON_Delete(doc);
			return NULL;
		}
		cJSON *p = cJSON_GetObjectItemCaseSensitive(gv, "paths"), *item;
		while (p && (item = p->child)) {
			cJSON_DetachItemViaPointer(p, item);
			if (cJSON_GetObjectItemCaseSensitive(paths, item->string))
				cJSON_Delete(item);
			else
				cJSON_AddItemToObject(paths, item->string, item);
		}
		cJSON *s = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(gv, "components"), "schemas");
		while (s && (item = s->child)) {
			cJSON_DetachItemViaPointer(s, item);
			if (cJSON_GetObjectItemCaseSensitive(defs, item->string))
				cJSON_Delete(item);
			else
				cJSON_AddItemToObject(defs, item->string, item);
		}
		cJSON_Delete(gv);
	}
	v2_rewrite(doc, 0);
	return doc;
}

/* ---- protobuf ------------------------------------------------------------------------------ */

/* A message being written: bytes appended to buf; a failure sticks in st. */
struct pbw {
	struct k32_buf buf;
	k32_status_t st;
	struct k32_err *err;
};

static void pbw_init(struct pbw *w, struct k32_err *err)
{
	k32_buf_init(&w->buf, k32_default_allocator(), K32_HTTP_MAX_RESPONSE_BYTES,
		     "openapi v2 protobuf");
	w->st = K32_OK;
	w->err = err;
}

static void pbw_raw(struct pbw *w, const void *p, size_t n)
{
	if (!w->st)
		w->st = k32_buf_append(&w->buf, p, n, w->err);
}

static void pbw_varint(struct pbw *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	pbw_raw(w, b, n);
}

static void pbw_bytes(struct pbw *w, uint32_t field, const void *p, size_t n)
{
	pbw_varint(w, (uint64_t)field << 3 | 2);
	pbw_varint(w, n);
	pbw_raw(w, p, n);
}

static void pbw_str(struct pbw *w, uint32_t field, const char *s)
{
	if (s && s[0])
		pbw_bytes(w, field, s, strlen(s));
}

static void pbw_bool(struct pbw *w, uint32_t field, bool v)
{
	if (v) {
		pbw_varint(w, (uint64_t)field << 3);
		pbw_varint(w, 1);
	}
}

static void pbw_int(struct pbw *w, uint32_t field, const cJSON *v)
{
	if (cJSON_IsNumber(v) && v->valuedouble >= 0) {
		pbw_varint(w, (uint64_t)field << 3);
		pbw_varint(w, (uint64_t)v->valuedouble);
	}
}

static void pbw_double(struct pbw *w, uint32_t field, const cJSON *v)
{
	if (!cJSON_IsNumber(v))
		return;
	double d = v->valuedouble;
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(bits >> (8 * i));
	pbw_varint(w, (uint64_t)field << 3 | 1);
	pbw_raw(w, b, 8);
}

/* Appends child as a length-delimited field of w, then frees child's buffer. */
static void pbw_child(struct pbw *w, uint32_t field, struct pbw *child)
{
	if (child->st && !w->st)
		w->st = child->st;
	if (!child->st)
		pbw_bytes(w, field, child->buf.data, child->buf.len);
	k32_buf_fini(&child->buf);
}

/* Any { string yaml = 2; } holding v as JSON text. */
static void pb_any(struct pbw *w, uint32_t field, const cJSON *v)
{
	char *text = cJSON_PrintUnformatted(v);
	if (!text) {
		if (!w->st)
			w->st = k32_err_set(w->err, K32_ERR_NO_MEMORY, "api",
					    "openapi v2: out of memory");
		return;
	}
	struct pbw a;
	pbw_init(&a, w->err);
	pbw_str(&a, 2, text);
	cJSON_free(text);
	pbw_child(w, field, &a);
}

/* NamedAny { name = 1; Any value = 2; } for every "x-" key of o. */
static void pb_vendor(struct pbw *w, uint32_t field, const cJSON *o)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, o)
	{
		if (!c->string || strncmp(c->string, "x-", 2))
			continue;
		struct pbw n;
		pbw_init(&n, w->err);
		pbw_str(&n, 1, c->string);
		pb_any(&n, 2, c);
		pbw_child(w, field, &n);
	}
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(jget(o, k));
}

static void pb_schema(struct pbw *w, uint32_t field, const cJSON *s, int depth);

static void pb_schema_body(struct pbw *m, const cJSON *s, int depth)
{
	pbw_str(m, 1, jstr(s, "$ref"));
	pbw_str(m, 2, jstr(s, "format"));
	pbw_str(m, 3, jstr(s, "title"));
	pbw_str(m, 4, jstr(s, "description"));
	if (jget(s, "default"))
		pb_any(m, 5, jget(s, "default"));
	pbw_double(m, 6, jget(s, "multipleOf"));
	pbw_double(m, 7, jget(s, "maximum"));
	pbw_bool(m, 8, cJSON_IsTrue(jget(s, "exclusiveMaximum")));
	pbw_double(m, 9, jget(s, "minimum"));
	pbw_bool(m, 10, cJSON_IsTrue(jget(s, "exclusiveMinimum")));
	pbw_int(m, 11, jget(s, "maxLength"));
	pbw_int(m, 12, jget(s, "minLength"));
	pbw_str(m, 13, jstr(s, "pattern"));
	pbw_int(m, 14, jget(s, "maxItems"));
	pbw_int(m, 15, jget(s, "minItems"));
	pbw_bool(m, 16, cJSON_IsTrue(jget(s, "uniqueItems")));
	pbw_int(m, 17, jget(s, "maxProperties"));
	pbw_int(m, 18, jget(s, "minProperties"));
	const cJSON *c;
	cJSON_ArrayForEach(c, jget(s, "required")) pbw_str(m, 19, cJSON_GetStringValue(c));
	cJSON_ArrayForEach(c, jget(s, "enum")) pb_any(m, 20, c);
	const cJSON *ap = jget(s, "additionalProperties");
	if (ap) { /* AdditionalPropertiesItem { Schema schema = 1; bool boolean = 2; } */
		struct pbw a;
		pbw_init(&a, m->err);
		if (cJSON_IsObject(ap))
			pb_schema(&a, 1, ap, depth + 1);
		else
			pbw_bool(&a, 2, cJSON_IsTrue(ap));
		pbw_child(m, 21, &a);
	}
	const cJSON *t = jget(s, "type");
	if (cJSON_IsString(t)) { /* TypeItem { repeated string value = 1; } */
		struct pbw ti;
		pbw_init(&ti, m->err);
		pbw_str(&ti, 1, t->valuestring);
		pbw_child(m, 22, &ti);
	}
	const cJSON *items = jget(s, "items");
	if (cJSON_IsObject(items)) { /* ItemsItem { repeated Schema schema = 1; } */
		struct pbw ii;
		pbw_init(&ii, m->err);
		pb_schema(&ii, 1, items, depth + 1);
		pbw_child(m, 23, &ii);
	}
	cJSON_ArrayForEach(c, jget(s, "allOf")) pb_schema(m, 24, c, depth + 1);
	const cJSON *props = jget(s, "properties");
	if (cJSON_IsObject(props)) { /* Properties { repeated NamedSchema = 1; } */
		struct pbw pp;
		pbw_init(&pp, m->err);
		cJSON_ArrayForEach(c, props)
		{
			struct pbw ns;
			pbw_init(&ns, m->err);
			pbw_str(&ns, 1, c->string);
			pb_schema(&ns, 2, c, depth + 1);
			pbw_child(&pp, 1, &ns);
		}
		pbw_child(m, 25, &pp);
	}
	pbw_bool(m, 27, cJSON_IsTrue(jget(s, "readOnly")));
	if (jget(s, "example"))
		pb_any(m, 30, jget(s, "example"));
	pb_vendor(m, 31, s);
}

static void pb_schema(struct pbw *w, uint32_t field, const cJSON *s, int depth)
{
	if (depth > API_OPENAPI_V2_DEPTH) {
		if (!w->st)
			w->st = k32_err_set(w->err, K32_ERR_OUT_OF_RANGE, "api",
					    "openapi v2: schema nested deeper than %d",
					    API_OPENAPI_V2_DEPTH);
		return;
	}
	struct pbw m;
	pbw_init(&m, w->err);
	pb_schema_body(&m, s, depth);
	pbw_child(w, field, &m);
}

/* ParametersItem { Parameter parameter = 1 { NonBodyParameter non_body_parameter = 2 {
 * QueryParameterSubSchema query_parameter_sub_schema = 3 } } } */
static void pb_query_param(struct pbw *w, uint32_t field, const cJSON *p)
{
	struct pbw q, nb, par, item;
	pbw_init(&q, w->err);
	pbw_bool(&q, 1, cJSON_IsTrue(jget(p, "required")));
	pbw_str(&q, 2, jstr(p, "in"));
	pbw_str(&q, 3, jstr(p, "description"));
	pbw_str(&q, 4, jstr(p, "name"));
	pbw_str(&q, 6, jstr(p, "type"));
	pbw_bool(&q, 20, cJSON_IsTrue(jget(p, "uniqueItems")));
	pb_vendor(&q, 23, p);
	pbw_init(&nb, w->err);
	pbw_child(&nb, 3, &q);
	pbw_init(&par, w->err);
	pbw_child(&par, 2, &nb);
	pbw_init(&item, w->err);
	pbw_child(&item, 1, &par);
	pbw_child(w, field, &item);
}

static void pb_operation(struct pbw *w, uint32_t field, const cJSON *op)
{
	struct pbw m;
	pbw_init(&m, w->err);
	pbw_str(&m, 3, jstr(op, "description"));
	pbw_str(&m, 5, jstr(op, "operationId"));
	const cJSON *c;
	cJSON_ArrayForEach(c, jget(op, "parameters"))
	{
		if (cJSON_IsString(jget(c, "in")) && strcmp(jstr(c, "in"), "body"))
			pb_query_param(&m, 8, c);
	}
	/* Responses { repeated NamedResponseValue response_code = 1 {
	 *   name = 1; ResponseValue value = 2 { Response response = 1 { description = 1 } } } } */
	struct pbw rs;
	pbw_init(&rs, w->err);
	cJSON_ArrayForEach(c, jget(op, "responses"))
	{
		struct pbw r, rv, nrv;
		pbw_init(&r, w->err);
		pbw_str(&r, 1, jstr(c, "description"));
		pbw_init(&rv, w->err);
		pbw_child(&rv, 1, &r);
		pbw_init(&nrv, w->err);
		pbw_str(&nrv, 1, c->string);
		pbw_child(&nrv, 2, &rv);
		pbw_child(&rs, 1, &nrv);
	}
	pbw_child(&m, 9, &rs);
	pb_vendor(&m, 13, op);
	pbw_child(w, field, &m);
}

k32_status_t api_openapi_v2_pb(const cJSON *doc, struct k32_buf *out, struct k32_err *err)
{
	struct pbw d;
	pbw_init(&d, err);
	pbw_str(&d, 1, jstr(doc, "swagger"));
	const cJSON *info = jget(doc, "info");
	struct pbw in;
	pbw_init(&in, err);
	pbw_str(&in, 1, jstr(info, "title"));
	pbw_str(&in, 2, jstr(info, "version"));
	pbw_child(&d, 2, &in);
	/* Paths { repeated NamedPathItem path = 2 { name = 1; PathItem value = 2 } } */
	static const struct {
		const char *verb;
		uint32_t field;
	} verbs[] = {{"get", 2},     {"put", 3},  {"post", 4}, {"delete", 5},
		     {"options", 6}, {"head", 7}, {"patch", 8}};
	struct pbw ps;
	pbw_init(&ps, err);
	const cJSON *p;
	cJSON_ArrayForEach(p, jget(doc, "paths"))
	{
		struct pbw item, named;
		pbw_init(&item, err);
		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			if (cJSON_IsObject(jget(p, verbs[i].verb)))
				pb_operation(&item, verbs[i].field, jget(p, verbs[i].verb));
		pbw_init(&named, err);
		pbw_str(&named, 1, p->string);
		pbw_child(&named, 2, &item);
		pbw_child(&ps, 2, &named);
	}
	pbw_child(&d, 8, &ps);
	/* Definitions { repeated NamedSchema additional_properties = 1; } */
	struct pbw defs;
	pbw_init(&defs, err);
	cJSON_ArrayForEach(p, jget(doc, "definitions"))
	{
		struct pbw ns;
		pbw_init(&ns, err);
		pbw_str(&ns, 1, p->string);
		pb_schema(&ns, 2, p, 0);
		pbw_child(&defs, 1, &ns);
	}
	pbw_child(&d, 9, &defs);
	if (!d.st)
		d.st = k32_buf_append(out, d.buf.data, d.buf.len, err);
	k32_buf_fini(&d.buf);
	return d.st;
}
