/*
 * api_fuzz.c - libFuzzer target for the API layer's parsers: label and field selectors,
 * merge / strategic merge / JSON patches, protobuf request bodies, and defaulting +
 * validation + strict field checks of arbitrary objects.
 *
 * Input layout: byte 0 picks the parser (mod 7); for patches the rest is "document NUL
 * patch" (strategic ones also run server-side apply and Update ownership tracking on it); for
 * validation byte 1 picks the kind and, in its high bits, the fieldValidation mode, and the
 * body goes in as a request body does (string checks for NUL and UTF-8, then the parser;
 * every string that passes must be UTF-8). Protobuf bodies must decode to UTF-8 strings. Every path
 * must return a status (never crash, leak or read out of bounds) whatever the bytes.
 */
#include <stdint.h>
#include <string.h>

#include "api/api_int.h"
#include "base/k32_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_text(const uint8_t *p, size_t n)
{
	char *s = cJSON_malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* Traps when a string (key or value) of j is not UTF-8: what the body checks let through
 * must never hold a byte a client could not decode. Depth is bounded by the parsers. */
static void all_strings_utf8(const cJSON *j, int depth)
{
	if (!j || depth > K32_JSON_MAX_DEPTH + K32_API_MAX_DEPTH)
		return;
	if (j->string && k32_utf8_check(j->string, strlen(j->string), NULL))
		__builtin_trap();
	if (cJSON_IsString(j) && j->valuestring &&
	    k32_utf8_check(j->valuestring, strlen(j->valuestring), NULL))
		__builtin_trap();
	for (const cJSON *c = j->child; c; c = c->next)
		all_strings_utf8(c, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_fail f;
	static struct api_selector sel;
	if (size < 1)
		return 0;
	api_fail_clear(&f);
	uint8_t which = data[0] % 7;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	size_t count;
	const struct api_resource *all = api_registry_all(&count);
	switch (which) {
	case 0:
	case 1: {
		char *s = dup_text(p, n);
		if (!s)
			return 0;
		cJSON *obj = cJSON_Parse(
		    "{\"metadata\":{\"name\":\"a\",\"labels\":{\"a\":\"b\"}},"
		    "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\"}}");
		if (which == 0) {
			if (api_label_selector_parse(s, &sel, &f) == K32_OK)
				api_label_selector_match(
				    &sel, cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"),
							      "labels"));
		} else if (api_field_selector_parse(s, api_registry_find("", "v1", "pods"), &sel,
						    &f) == K32_OK) {
			api_field_selector_match(&sel, obj);
		}
		cJSON_Delete(obj);
		cJSON_free(s);
		break;
	}
	case 2:
	case 3:
	case 4: {
		const uint8_t *nul = memchr(p, 0, n);
		size_t dl = nul ? (size_t)(nul - p) : n;
		char *d = dup_text(p, dl);
		char *q = dup_text(nul ? nul + 1 : p + n, nul ? n - dl - 1 : 0);
		cJSON *doc = d ? cJSON_Parse(d) : NULL;
		cJSON *patch = q ? cJSON_Parse(q) : NULL;
		if (doc && patch) {
			enum api_patch_type t = which == 2   ? API_PATCH_MERGE
						: which == 3 ? API_PATCH_STRATEGIC
							     : API_PATCH_JSON;
			cJSON *before = which == 3 ? cJSON_Duplicate(doc, true) : NULL;
			api_patch_apply(t, &doc, patch, &f);
			if (before) {
				/* field ownership over the same pair: apply patch as a config
				 * (managedFields, fieldsV1 keys and all may be anything), then an
				 * Update from before to the patched document */
				static const struct api_ssa_ctx cx = {
				    "fz", "v1", "2026-01-01T00:00:00Z", false, true};
				struct api_ssa_ctx fcx = cx;
				cJSON *live = cJSON_Duplicate(before, true);
				fcx.force = n & 1;
				api_fail_clear(&f);
				if (live && cJSON_IsObject(patch))
					api_ssa_apply(&live, patch, &fcx, &f);
				cJSON_Delete(live);
				api_fail_clear(&f);
				if (cJSON_IsObject(doc))
					api_ssa_update(before, doc, &cx, "", &f);
				cJSON_Delete(api_ssa_fields(patch, false));
				cJSON_Delete(before);
			}
		}
		cJSON_Delete(doc);
		cJSON_Delete(patch);
		cJSON_free(d);
		cJSON_free(q);
		break;
	}
	case 5: {
		cJSON *out = NULL;
		if (api_pb_decode(p, n, &out, &f) == K32_OK) {
			all_strings_utf8(out, 0);
			cJSON_Delete(out);
		}
		break;
	}
	default: {
		if (n < 1)
			return 0;
		const struct api_resource *res = &all[p[0] % count];
		char *s = NULL;
		cJSON *obj = NULL;
		char field[64];
		/* the body's way in: strings checked (NUL, UTF-8), then parsed; the two must
		 * agree, and what parses holds UTF-8 only */
		k32_status_t cs =
		    k32_json_check_strings((const char *)p + 1, n - 1, field, sizeof(field), NULL);
		if (k32_json_parse((const char *)p + 1, n - 1, &obj, NULL) == K32_OK) {
			if (cs != K32_OK)
				__builtin_trap();
			all_strings_utf8(obj, 0);
		}
		if (cJSON_IsObject(obj)) {
			struct api_warnings w = {0};
			/* Warn drops what Strict refuses: the rest must then pass Strict */
			enum api_field_validation fv = (enum api_field_validation)(p[0] / 16 % 3);
			if (api_check_unknown_fields(res, obj, fv, &w, &f) == K32_OK &&
			    fv != API_FV_STRICT &&
			    api_check_unknown_fields(res, obj, API_FV_STRICT, &w, &f) != K32_OK)
				__builtin_trap();
			api_fail_clear(&f);
			if (cJSON_GetObjectItem(obj, "metadata") == NULL ||
			    cJSON_IsObject(cJSON_GetObjectItem(obj, "metadata")))
				api_default(res, obj, &f);
			api_validate(res, obj, &f);
			const cJSON *objs[] = {obj};
			cJSON_Delete(api_table_build(res, objs, 1, 1700000000, "1", true));
		}
		cJSON_Delete(obj);
		cJSON_free(s);
		break;
	}
	}
	return 0;
}
