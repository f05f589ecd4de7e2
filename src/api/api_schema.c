/*
 * api_schema.c - the openAPIV3Schema of a CRD version: checked when the CRD is written,
 * applied to every custom object written (pruning, defaults, validation).
 *
 * Supported keywords (the structural subset kube-apiserver requires, without CEL):
 * type (object, array, string, integer, number, boolean), properties, additionalProperties
 * (schema or boolean), items, required, enum, nullable, default, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern (see
 * api_pattern.c), minItems, maxItems, minProperties, maxProperties,
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
 * x-kubernetes-embedded-resource; description, format, title, example and the list/map
 * markers are kept and not enforced. allOf, anyOf, oneOf, not, $ref and
 * x-kubernetes-validations (CEL) are refused when the CRD is written, with a message
 * naming them.
 *
 * Both walks (over a schema alone, and over an object with its schema) keep an explicit
 * stack of at most K32_API_CRD_SCHEMA_DEPTH frames: no recursion, bounded memory whatever
 * the input. Messages follow kube-apiserver's (`spec.size: Invalid value: 20: spec.size in
 * body should be less than or equal to 10`).
 * Reentrant; allocates only through cJSON (defaults copied into objects).
 */
#include "api/api_crd.h"
#include "base/k32_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SCHEMA_PATH_LEN 256

static const cJSON *kw(const cJSON *s, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(s, k);
}

static bool kw_true(const cJSON *s, const char *k)
{
	return cJSON_IsTrue(kw(s, k));
}

static const char *kw_type(const cJSON *s)
{
	return cJSON_GetStringValue(kw(s, "type"));
}

/* The schema of child key of an object node under s (NULL: not declared / free-form). */
static const cJSON *schema_prop(const cJSON *s, const char *key)
{
	const cJSON *p = kw(kw(s, "properties"), key);
	if (cJSON_IsObject(p))
		return p;
	const cJSON *ap = kw(s, "additionalProperties");
	return cJSON_IsObject(ap) ? ap : NULL;
}

/* Whether key is declared for an object under s (or s keeps unknown fields). */
static bool schema_keeps(const cJSON *s, const char *key, bool root)
{
	if (root &&
	    (!strcmp(key, "apiVersion") || !strcmp(key, "kind") || !strcmp(key, "metadata")))
		return true;
	if (kw_true(s, "x-kubernetes-embedded-resource") &&
	    (!strcmp(key, "apiVersion") || !strcmp(key, "kind") || !strcmp(key, "metadata")))
		return true;
	if (kw_true(s, "x-kubernetes-preserve-unknown-fields"))
		return true;
	const cJSON *ap = kw(s, "additionalProperties");
	if (cJSON_IsObject(ap) || cJSON_IsTrue(ap))
		return true;
	return kw(kw(s, "properties"), key) != NULL;
}

/* ---- the object walk ------------------------------------------------------------------- */

enum walk_op { WALK_PRUNE, WALK_DEFAULT, WALK_VALIDATE };

struct walk_frame {
	const cJSON *schema;
	cJSON *node;
	cJSON *next; /* next child of node to visit */
	int index;   /* its index when node is an array */
	size_t plen; /* path length of node */
};

struct walk {
	enum walk_op op;
	const struct api_resource *res;
	enum api_field_validation mode;
	struct api_warnings *w;
	struct api_fail *f;
	k32_status_t st;
	char path[SCHEMA_PATH_LEN];
	struct walk_frame stack[K32_API_CRD_SCHEMA_DEPTH + 1];
};

/* A value as kube-apiserver quotes it in "Invalid value: X" (strings quoted, cut). */
static void show_value(const cJSON *v, char *buf, size_t cap)
{
	if (cJSON_IsString(v))
		snprintf(buf, cap, "\"%s\"", K32_CLIP(v->valuestring));
	else if (cJSON_IsNumber(v))
		snprintf(buf, cap, "%.17g", v->valuedouble);
	else if (cJSON_IsBool(v))
		snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNull(v))
		snprintf(buf, cap, "null");
	else
		snprintf(buf, cap, "%s", cJSON_IsArray(v) ? "[...]" : "{...}");
}

static const char *json_type_of(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsNumber(v))
		return v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9.007e15
			   ? "integer"
			   : "number";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "null";
}

static bool type_ok(const char *want, const cJSON *v)
{
	const char *have = json_type_of(v);
	if (!strcmp(want, have))
		return true;
	return !strcmp(want, "number") && !strcmp(have, "integer");
}

/* UTF-8 characters of s (as Go's utf8.RuneCountInString counts for min/maxLength). */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static void cause(struct walk *w, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cause(struct walk *w, const char *reason, const char *fmt, ...)
{
	char msg[224];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_fail_add_cause(w->f, reason, w->path[0] ? w->path : "<root>", "%s", msg);
}

/* The checks of one value against its schema; false: do not look inside it. */
static bool validate_node(struct walk *w, const cJSON *s, const cJSON *v)
{
	char val[64], lim[64], msg[320];
	const char *p = w->path[0] ? w->path : "<root>";
	if (cJSON_IsNull(v) && kw_true(s, "nullable"))
		return false;
	show_value(v, val, sizeof(val));
	if (kw_true(s, "x-kubernetes-int-or-string")) {
		if (!type_ok("integer", v) && !cJSON_IsString(v)) {
			snprintf(msg, sizeof(msg), "%s in body must be of type integer-or-string",
				 K32_CLIP(p));
			cause(w, "FieldValueTypeInvalid", "Invalid value: %s: %s", val, msg);
		}
		return false;
	}
	const char *t = kw_type(s);
	if (t && !type_ok(t, v)) {
		snprintf(msg, sizeof(msg), "%s in body must be of type %s: \"%s\"", K32_CLIP(p), t,
			 json_type_of(v));
		cause(w, "FieldValueTypeInvalid", "Invalid value: %s: %s", val, msg);
		return false;
	}
	const cJSON *en = kw(s, "enum");
	if (cJSON_IsArray(en)) {
		bool found = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, en)
		{
			found = found || cJSON_Compare(e, v, true);
		}
		if (!found) {
			char list[160] = "";
			size_t off = 0;
			cJSON_ArrayForEach(e, en)
			{
				char one[64];
				show_value(e, one, sizeof(one));
				int n = snprintf(list + off, sizeof(list) - off, "%s%s",
						 off ? ", " : "", one);
				if (n < 0 || (size_t)n >= sizeof(list) - off)
					break;
				off += (size_t)n;
			}
			cause(w, "FieldValueNotSupported",
			      "Unsupported value: %s: supported values: %s", val, list);
		}
	}
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;
		const cJSON *mn = kw(s, "minimum"), *mx = kw(s, "maximum");
		bool exmn = kw_true(s, "exclusiveMinimum"), exmx = kw_true(s, "exclusiveMaximum");
		if (cJSON_IsNumber(mn) && (x < mn->valuedouble || (exmn && x == mn->valuedouble))) {
			show_value(mn, lim, sizeof(lim));
			snprintf(msg, sizeof(msg), "%s in body should be greater than %s%s",
				 K32_CLIP(p), exmn ? "" : "or equal to ", lim);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
		if (cJSON_IsNumber(mx) && (x > mx->valuedouble || (exmx && x == mx->valuedouble))) {
			show_value(mx, lim, sizeof(lim));
			snprintf(msg, sizeof(msg), "%s in body should be less than %s%s",
				 K32_CLIP(p), exmx ? "" : "or equal to ", lim);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
		const cJSON *mo = kw(s, "multipleOf");
		if (cJSON_IsNumber(mo) && mo->valuedouble > 0) {
			double q = x / mo->valuedouble;
			if (fabs(q - floor(q + 0.5)) > 1e-9) {
				show_value(mo, lim, sizeof(lim));
				snprintf(msg, sizeof(msg), "%s in body should be a multiple of %s",
					 K32_CLIP(p), lim);
				cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
			}
		}
	}
	if (cJSON_IsString(v)) {
		size_t n = utf8_chars(v->valuestring);
		const cJSON *mn = kw(s, "minLength"), *mx = kw(s, "maxLength");
		if (cJSON_IsNumber(mn) && (double)n < mn->valuedouble) {
			snprintf(msg, sizeof(msg), "%s in body should be at least %.0f chars long",
				 K32_CLIP(p), mn->valuedouble);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
		if (cJSON_IsNumber(mx) && (double)n > mx->valuedouble) {
			snprintf(msg, sizeof(msg), "may not be more than %.0f bytes",
				 mx->valuedouble);
			cause(w, "FieldValueTooLong", "Too long: %s", msg);
		}
		const char *re = cJSON_GetStringValue(kw(s, "pattern"));
		struct api_pattern pat;
		char why[96];
		if (re && api_pattern_compile(re, &pat, why, sizeof(why)) &&
		    !api_pattern_match(&pat, v->valuestring)) {
			snprintf(msg, sizeof(msg), "%s in body should match '%s'", K32_CLIP(p),
				 K32_CLIP(re));
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
	}
	if (cJSON_IsArray(v)) {
		int n = cJSON_GetArraySize(v);
		const cJSON *mn = kw(s, "minItems"), *mx = kw(s, "maxItems");
		if (cJSON_IsNumber(mn) && n < mn->valuedouble) {
			snprintf(msg, sizeof(msg), "%s in body should have at least %.0f items",
				 K32_CLIP(p), mn->valuedouble);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
		if (cJSON_IsNumber(mx) && n > mx->valuedouble) {
			snprintf(lim, sizeof(lim), "%d", n);
			snprintf(msg, sizeof(msg), "must have at most %.0f items", mx->valuedouble);
			cause(w, "FieldValueTooMany", "Too many: %s: %s", lim, msg);
		}
	}
	if (cJSON_IsObject(v)) {
		const cJSON *r;
		cJSON_ArrayForEach(r, kw(s, "required"))
		{
			if (!cJSON_IsString(r) || kw(v, r->valuestring))
				continue;
			size_t plen = strlen(w->path);
			snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s", plen ? "." : "",
				 r->valuestring);
			cause(w, "FieldValueRequired", "Required value");
			w->path[plen] = 0;
		}
		int n = cJSON_GetArraySize(v);
		const cJSON *mn = kw(s, "minProperties"), *mx = kw(s, "maxProperties");
		if (cJSON_IsNumber(mn) && n < mn->valuedouble) {
			snprintf(msg, sizeof(msg),
				 "%s in body should have at least %.0f properties", K32_CLIP(p),
				 mn->valuedouble);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
		if (cJSON_IsNumber(mx) && n > mx->valuedouble) {
			snprintf(msg, sizeof(msg), "%s in body should have at most %.0f properties",
				 K32_CLIP(p), mx->valuedouble);
			cause(w, "FieldValueInvalid", "Invalid value: %s: %s", val, msg);
		}
	}
	return cJSON_IsObject(v) || cJSON_IsArray(v);
}

/* Pruning of one object node; false when the walk must stop (Strict refused). */
static bool prune_node(struct walk *w, const cJSON *s, cJSON *v, bool root)
{
	if (!cJSON_IsObject(v) || kw_true(s, "x-kubernetes-int-or-string"))
		return cJSON_IsArray(v);
	cJSON *c = v->child;
	while (c) {
		cJSON *next = c->next;
		if (c->string && !schema_keeps(s, c->string, root)) {
			size_t plen = strlen(w->path);
			if (w->mode == API_FV_STRICT) {
				w->st = api_fail_set(
				    w->f, 400, "BadRequest",
				    "%s in version \"%s\" cannot be handled as a %s: "
				    "strict decoding error: unknown field \"%s%s%s\"",
				    w->res->kind, w->res->version, w->res->kind, K32_CLIP(w->path),
				    plen ? "." : "", K32_CLIP(c->string));
				return false;
			}
			if (w->mode == API_FV_WARN)
				api_warn(w->w, "unknown field \"%s%s%s\"", K32_CLIP(w->path),
					 plen ? "." : "", K32_CLIP(c->string));
			cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
		}
		c = next;
	}
	return true;
}

/* Defaults of the absent properties of one object node. */
static bool default_node(const cJSON *s, cJSON *v)
{
	if (!cJSON_IsObject(v))
		return cJSON_IsArray(v);
	const cJSON *p;
	cJSON_ArrayForEach(p, kw(s, "properties"))
	{
		const cJSON *d = kw(p, "default");
		if (d && p->string && !kw(v, p->string))
			api_json_put(v, p->string, cJSON_Duplicate(d, true));
	}
	return true;
}

static bool walk_visit(struct walk *w, const cJSON *s, cJSON *v, bool root)
{
	switch (w->op) {
	case WALK_PRUNE:
		return prune_node(w, s, v, root);
	case WALK_DEFAULT:
		return default_node(s, v);
	case WALK_VALIDATE:
		return validate_node(w, s, v);
	}
	return false;
}

static void walk_run(struct walk *w, const cJSON *schema, cJSON *obj)
{
	w->path[0] = 0;
	w->st = K32_OK;
	if (!cJSON_IsObject(schema) || !obj)
		return;
	size_t depth = 0;
	if (!walk_visit(w, schema, obj, true))
		return;
	w->stack[0] = (struct walk_frame){schema, obj, obj->child, 0, 0};
	for (;;) {
		struct walk_frame *fr = &w->stack[depth];
		cJSON *c = fr->next;
		if (!c) {
			if (depth == 0)
				return;
			depth--;
			w->path[w->stack[depth].plen] = 0;
			continue;
		}
		fr->next = c->next;
		int idx = fr->index++;
		w->path[fr->plen] = 0;
		const cJSON *cs;
		if (cJSON_IsArray(fr->node)) {
			cs = kw(fr->schema, "items");
			snprintf(w->path + fr->plen, sizeof(w->path) - fr->plen, "[%d]", idx);
		} else {
			if (depth == 0 && c->string &&
			    (!strcmp(c->string, "metadata") || !strcmp(c->string, "apiVersion") ||
			     !strcmp(c->string, "kind")))
				continue; /* server-owned; checked by the common metadata rules */
			cs = c->string ? schema_prop(fr->schema, c->string) : NULL;
			snprintf(w->path + fr->plen, sizeof(w->path) - fr->plen, "%s%s",
				 fr->plen ? "." : "", c->string ? c->string : "");
		}
		if (!cJSON_IsObject(cs))
			continue; /* undeclared (kept only when the schema preserves it) */
		bool inside = walk_visit(w, cs, c, false);
		if (w->st)
			return;
		if (!inside || !c->child || depth + 1 > K32_API_CRD_SCHEMA_DEPTH)
			continue;
		depth++;
		w->stack[depth] = (struct walk_frame){cs, c, c->child, 0, strlen(w->path)};
	}
}

k32_status_t api_schema_prune(const struct api_resource *res, const cJSON *schema, cJSON *obj,
			      enum api_field_validation mode, struct api_warnings *w,
			      struct api_fail *f)
{
	struct walk wk = {.op = WALK_PRUNE, .res = res, .mode = mode, .w = w, .f = f};
	walk_run(&wk, schema, obj);
	return wk.st;
}

void api_schema_default(const cJSON *schema, cJSON *obj)
{
	struct walk wk = {.op = WALK_DEFAULT};
	walk_run(&wk, schema, obj);
}

void api_schema_validate(const cJSON *schema, const cJSON *obj, struct api_fail *f)
{
	struct walk wk = {.op = WALK_VALIDATE, .f = f};
	/* the validating walk never changes obj */
	walk_run(&wk, schema, (cJSON *)(uintptr_t)obj);
}

/* ---- the schema check ------------------------------------------------------------------ */

struct check_frame {
	const cJSON *schema;
	const cJSON *next_prop; /* next entry of properties to visit */
	int stage;		/* 0 properties, 1 items, 2 additionalProperties, 3 done */
	size_t plen;
};

static void check_cause(struct api_fail *f, const char *path, const char *reason, const char *what)
{
	api_fail_add_cause(f, reason, path, "%s", what);
}

static bool is_count(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble == floor(v->valuedouble);
}

/* The rules of one schema object (not of its children). */
static void check_one(const cJSON *s, const char *path, bool root, struct api_fail *f)
{
	static const char *const refused[] = {"allOf", "anyOf", "oneOf",
					      "not",   "$ref",	"x-kubernetes-validations"};
	char msg[200];
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (kw(s, refused[i])) {
			snprintf(
			    msg, sizeof(msg),
			    "Forbidden: %s is not supported by kube32's CRD schemas (supported: "
			    "type, properties, items, required, enum, bounds, lengths, pattern, "
			    "default; docs/api-reference.md)",
			    refused[i]);
			check_cause(f, path, "FieldValueForbidden", msg);
		}
	const char *t = kw_type(s);
	const cJSON *tj = kw(s, "type");
	bool ios = kw_true(s, "x-kubernetes-int-or-string");
	bool keep = kw_true(s, "x-kubernetes-preserve-unknown-fields");
	if (tj && !t)
		check_cause(f, path, "FieldValueInvalid", "Invalid value: type must be a string");
	else if (t && strcmp(t, "object") && strcmp(t, "array") && strcmp(t, "string") &&
		 strcmp(t, "integer") && strcmp(t, "number") && strcmp(t, "boolean")) {
		snprintf(msg, sizeof(msg),
			 "Unsupported value: \"%s\": supported values: \"array\", \"boolean\", "
			 "\"integer\", \"number\", \"object\", \"string\"",
			 K32_CLIP(t));
		check_cause(f, path, "FieldValueNotSupported", msg);
	} else if (!t && !ios && !keep)
		check_cause(f, path, "FieldValueRequired",
			    "Required value: must not be empty for specified object fields");
	if (root && t && strcmp(t, "object"))
		check_cause(f, path, "FieldValueInvalid",
			    "Invalid value: the root schema must be of type object");
	if (t && !strcmp(t, "array") && !cJSON_IsObject(kw(s, "items")))
		check_cause(f, path, "FieldValueRequired",
			    "Required value: items must be a schema for type array");
	const cJSON *ap = kw(s, "additionalProperties");
	if (ap && !cJSON_IsObject(ap) && !cJSON_IsBool(ap))
		check_cause(f, path, "FieldValueInvalid",
			    "Invalid value: additionalProperties must be a schema or a boolean");
	if (cJSON_IsObject(ap) && kw(s, "properties"))
		check_cause(
		    f, path, "FieldValueForbidden",
		    "Forbidden: additionalProperties and properties are mutually exclusive");
	if (kw(s, "properties") && !cJSON_IsObject(kw(s, "properties")))
		check_cause(f, path, "FieldValueInvalid",
			    "Invalid value: properties must be an object");
	if (kw_true(s, "uniqueItems"))
		check_cause(f, path, "FieldValueForbidden",
			    "Forbidden: uniqueItems cannot be set to true since the runtime "
			    "complexity becomes quadratic");
	static const char *const nums[] = {"minimum", "maximum", "multipleOf"};
	for (size_t i = 0; i < 3; i++)
		if (kw(s, nums[i]) && !cJSON_IsNumber(kw(s, nums[i]))) {
			snprintf(msg, sizeof(msg), "Invalid value: %s must be a number", nums[i]);
			check_cause(f, path, "FieldValueInvalid", msg);
		}
	static const char *const counts[] = {"minLength", "maxLength",	   "minItems",
					     "maxItems",  "minProperties", "maxProperties"};
	for (size_t i = 0; i < 6; i++)
		if (kw(s, counts[i]) && !is_count(kw(s, counts[i]))) {
			snprintf(msg, sizeof(msg),
				 "Invalid value: %s must be a non-negative integer", counts[i]);
			check_cause(f, path, "FieldValueInvalid", msg);
		}
	const cJSON *en = kw(s, "enum");
	if (en && !cJSON_IsArray(en))
		check_cause(f, path, "FieldValueInvalid", "Invalid value: enum must be a list");
	const cJSON *rq = kw(s, "required"), *r;
	if (rq && !cJSON_IsArray(rq))
		check_cause(f, path, "FieldValueInvalid",
			    "Invalid value: required must be a list of field names");
	cJSON_ArrayForEach(r, rq)
	{
		if (!cJSON_IsString(r)) {
			check_cause(f, path, "FieldValueInvalid",
				    "Invalid value: required must be a list of field names");
			break;
		}
	}
	const cJSON *pj = kw(s, "pattern");
	if (pj) {
		const char *re = cJSON_GetStringValue(pj);
		char why[120];
		struct api_pattern pat;
		if (!re)
			check_cause(f, path, "FieldValueInvalid",
				    "Invalid value: pattern must be a string");
		else if (strlen(re) > K32_API_CRD_PATTERN_LEN) {
			snprintf(msg, sizeof(msg),
				 "Too long: pattern is %zu bytes, the limit is %d "
				 "(K32_API_CRD_PATTERN_LEN); shorten the pattern",
				 strlen(re), K32_API_CRD_PATTERN_LEN);
			check_cause(f, path, "FieldValueTooLong", msg);
		} else if (!api_pattern_compile(re, &pat, why, sizeof(why))) {
			snprintf(msg, sizeof(msg), "Invalid value: \"%s\": %s", K32_CLIP(re), why);
			check_cause(f, path, "FieldValueInvalid", msg);
		}
	}
}

void api_schema_check(const cJSON *schema, const char *prefix, struct api_fail *f)
{
	if (!cJSON_IsObject(schema)) {
		api_fail_add_cause(f, "FieldValueRequired", prefix,
				   "Required value: a structural schema is required (type: object "
				   "with properties)");
		return;
	}
	struct check_frame stack[K32_API_CRD_SCHEMA_DEPTH + 1];
	char path[SCHEMA_PATH_LEN];
	size_t depth = 0, nodes = 1;
	snprintf(path, sizeof(path), "%s", prefix);
	check_one(schema, path, true, f);
	stack[0] = (struct check_frame){
	    schema, kw(schema, "properties") ? kw(schema, "properties")->child : NULL, 0,
	    strlen(path)};
	for (;;) {
		struct check_frame *fr = &stack[depth];
		const cJSON *child = NULL;
		path[fr->plen] = 0;
		if (fr->stage == 0) {
			if (fr->next_prop && cJSON_IsObject(kw(fr->schema, "properties"))) {
				child = fr->next_prop;
				fr->next_prop = child->next;
				snprintf(path + fr->plen, sizeof(path) - fr->plen,
					 ".properties[%s]", child->string ? child->string : "");
			} else {
				fr->stage = 1;
			}
		}
		if (!child && fr->stage == 1) {
			fr->stage = 2;
			child = kw(fr->schema, "items");
			if (cJSON_IsArray(child)) {
				api_fail_add_cause(
				    f, "FieldValueForbidden", path,
				    "Forbidden: items must be a schema object, not a "
				    "list of schemas");
				child = NULL;
			}
			snprintf(path + fr->plen, sizeof(path) - fr->plen, ".items");
		}
		if (!child && fr->stage == 2) {
			fr->stage = 3;
			child = kw(fr->schema, "additionalProperties");
			if (!cJSON_IsObject(child))
				child = NULL;
			snprintf(path + fr->plen, sizeof(path) - fr->plen, ".additionalProperties");
		}
		if (!child) {
			if (fr->stage < 3)
				continue;
			if (depth == 0)
				return;
			depth--;
			continue;
		}
		if (!cJSON_IsObject(child)) {
			api_fail_add_cause(f, "FieldValueInvalid", path,
					   "Invalid value: must be a schema object");
			continue;
		}
		if (++nodes > K32_API_CRD_SCHEMA_NODES) {
			api_fail_add_cause(f, "FieldValueTooMany", prefix,
					   "Too many: the schema has more than %d schemas "
					   "(K32_API_CRD_SCHEMA_NODES); split the kind or drop "
					   "fields",
					   K32_API_CRD_SCHEMA_NODES);
			return;
		}
		if (depth + 1 >= K32_API_CRD_SCHEMA_DEPTH) {
			api_fail_add_cause(f, "FieldValueTooMany", path,
					   "Too many: the schema nests deeper than %d levels "
					   "(K32_API_CRD_SCHEMA_DEPTH); flatten it",
					   K32_API_CRD_SCHEMA_DEPTH);
			return;
		}
		check_one(child, path, false, f);
		depth++;
		const cJSON *props = kw(child, "properties");
		stack[depth] = (struct check_frame){
		    child, cJSON_IsObject(props) ? props->child : NULL, 0, strlen(path)};
	}
}
