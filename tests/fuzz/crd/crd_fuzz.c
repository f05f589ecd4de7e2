/*
 * crd_fuzz.c - libFuzzer target for CRD schemas and patterns (api_schema.c, api_pattern.c).
 *
 * Input layout: byte 0 picks the path (mod 3); the rest is "A NUL B".
 *   0: A is an openAPIV3Schema, B an object: the schema is checked; when it passes, the
 *      object is pruned (fieldValidation mode: A's length mod 3), defaulted and validated
 *      the way a custom object's write is.
 *   1: A is a pattern, B a string: compiled, and when that succeeds, matched.
 *   2: A is a whole CustomResourceDefinition: defaulted and validated by its strategy.
 * Every path must finish (no crash, leak, overflow or unbounded time) whatever the bytes:
 * the walks are iterative with a fixed stack and the matcher runs in O(input x states).
 */
#include <stdint.h>
#include <string.h>

#include "api/api_crd.h"
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

static const struct api_resource fuzz_res = {
    .group = "fuzz.io", .version = "v1", .kind = "Fuzz", .plural = "fuzzes"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t which = data[0] % 3;
	data++;
	size--;
	const uint8_t *nul = memchr(data, 0, size);
	size_t alen = nul ? (size_t)(nul - data) : size;
	char *a = dup_text(data, alen);
	char *b = nul ? dup_text(nul + 1, size - alen - 1) : dup_text(data, 0);
	struct api_fail f;
	api_fail_clear(&f);
	if (!a || !b)
		goto out;
	if (which == 1) {
		static struct api_pattern p;
		char why[128];
		if (api_pattern_compile(a, &p, why, sizeof(why)))
			(void)api_pattern_match(&p, b);
		goto out;
	}
	cJSON *ja = NULL;
	if (k32_json_parse(a, alen, &ja, NULL) != K32_OK)
		goto out;
	if (which == 2) {
		const struct api_resource *crd =
		    api_registry_find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
		if (cJSON_IsObject(ja) && api_default(crd, ja, &f) == K32_OK)
			(void)api_validate(crd, ja, &f);
		cJSON_Delete(ja);
		goto out;
	}
	api_schema_check(ja, "schema", &f);
	cJSON *jb = NULL;
	if (!f.cause_count && k32_json_parse(b, strlen(b), &jb, NULL) == K32_OK) {
		struct api_warnings w = {0};
		enum api_field_validation mode = (enum api_field_validation)(alen % 3);
		if (api_schema_prune(&fuzz_res, ja, jb, mode, &w, &f) == K32_OK) {
			api_schema_default(ja, jb);
			api_fail_clear(&f);
			api_schema_validate(ja, jb, &f);
		}
		cJSON_Delete(jb);
	}
	cJSON_Delete(ja);
out:
	cJSON_free(a);
	cJSON_free(b);
	return 0;
}
