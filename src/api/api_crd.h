/*
 * api_crd.h - CustomResourceDefinitions (apiextensions.k8s.io/v1) and the structural
 * schemas of their custom resources, inside the API layer (src/api/).
 *
 *   api_schema.c  a CRD version's openAPIV3Schema: checked for structure and size when the
 *                 CRD is written; applied to custom objects: unknown fields pruned (or
 *                 refused under fieldValidation=Strict), defaults filled, values validated
 *                 (type, enum, bounds, lengths, items, properties, required, pattern) into
 *                 422 causes worded as kube-apiserver's. Every walk is iterative, with an
 *                 explicit stack of at most K32_API_CRD_SCHEMA_DEPTH levels.
 *   api_pattern.c the `pattern` keyword: a bounded regular-expression matcher (Thompson
 *                 NFA, no backtracking: time linear in the input, memory fixed).
 *   api_crd.c     the CRD kind's strategy, and the registry of the resources the established
 *                 CRDs serve (one row per served version), read by routing, discovery,
 *                 OpenAPI and Table output next to the static rows of api_registry.c.
 *
 * The registry of custom resources is process-wide (api_registry.c's static table is too):
 * api_crd_sync rebuilds it from one server's store, at start and after every CRD write. One
 * API server per process serves CRDs (kube32-server runs one; a test that starts a second
 * server re-syncs it from the second store).
 * Context: any thread; the registry is guarded by one mutex, the schemas are reference
 * counted so a request keeps the version it started with while a CRD is replaced.
 */
#ifndef API_CRD_H
#define API_CRD_H

#include "api/api_int.h"

struct api_server;

/* ---- schemas (api_schema.c) ------------------------------------------------------------ */

/* Checks that schema (a CRD version's openAPIV3Schema) is structural and within the
 * limits (K32_API_CRD_SCHEMA_DEPTH levels, K32_API_CRD_SCHEMA_NODES schemas, patterns
 * the matcher can run). Adds one cause per problem to f, fields under prefix
 * ("spec.versions[0].schema.openAPIV3Schema"). */
void api_schema_check(const cJSON *schema, const char *prefix, struct api_fail *f);

/* Fields of obj its schema does not declare (apiVersion, kind, metadata are always kept):
 * Strict answers 400 "strict decoding error: unknown field ..."; Warn and Ignore remove
 * them (Warn adding a warning to w, which may be NULL). res names the kind in messages. */
k32_status_t api_schema_prune(const struct api_resource *res, const cJSON *schema, cJSON *obj,
			      enum api_field_validation mode, struct api_warnings *w,
			      struct api_fail *f);
/* Fills the schema's defaults into obj where a field is absent (top-down). */
void api_schema_default(const cJSON *schema, cJSON *obj);
/* Adds a 422 cause to f for each value of obj the schema refuses. */
void api_schema_validate(const cJSON *schema, const cJSON *obj, struct api_fail *f);

/* ---- patterns (api_pattern.c) ---------------------------------------------------------- */

/* A compiled pattern: at most K32_API_CRD_PATTERN_STATES instructions. */
struct api_pattern {
	uint16_t count;
	struct api_pattern_ins {
		uint8_t op;	 /* API_PI_* */
		uint8_t neg;	 /* CLASS: negated */
		uint16_t x, y;	 /* jump targets; CHAR: the byte; CLASS: first range */
		uint16_t ranges; /* CLASS: range count */
	} ins[K32_API_CRD_PATTERN_STATES];
	uint16_t nranges;
	uint8_t lo[K32_API_CRD_PATTERN_STATES], hi[K32_API_CRD_PATTERN_STATES];
};

/* Compiles re (ECMA-262 subset: literals, ., [classes], \d \w \s \D \W \S and escapes,
 * groups, |, * + ? {m,n}, ^ $); false with why filled when it is outside the subset or
 * the limits. */
bool api_pattern_compile(const char *re, struct api_pattern *p, char *why, size_t cap);
/* Whether s contains a match of p (unanchored unless p has ^ / $, as Go's regexp). */
bool api_pattern_match(const struct api_pattern *p, const char *s);

/* ---- the registry of custom resources (api_crd.c) -------------------------------------- */

/* Strategy of every custom resource (the schema lives in the registry, per row). */
extern const struct api_strategy api_strategy_custom;
/* Strategy of CustomResourceDefinition itself. */
extern const struct api_strategy api_strategy_crd;

/* Rows the registry can hold (every served version of every CRD). */
#define API_CRD_ROWS (K32_API_MAX_CRDS * K32_API_CRD_MAX_VERSIONS)

/* A resource that went away with its CRD (its objects are to be deleted). */
struct api_crd_gone {
	char group[K32_API_CRD_GROUP_LEN + 1];
	char plural[64];
};
/* Makes the rows those of crds (every served version of each), keeping the rows that stay
 * (their version entries replaced) and retiring the others; the (group, plural) pairs no
 * row serves any more go into gone (at most gone_cap); returns how many. */
size_t api_crd_install(const cJSON *const *crds, size_t n, struct api_crd_gone *gone,
		       size_t gone_cap);
/* How many CRDs the rows serve (distinct group/plural). */
size_t api_crd_count(void);

/* Rebuilds the custom rows from api's store. After a CRD write (cascade true), the
 * objects of every resource that is gone are deleted from the store. */
void api_crd_sync(struct api_server *api, bool cascade);
/* Pointers to the active custom rows into out (at most cap); returns how many. */
size_t api_crd_rows(const struct api_resource **out, size_t cap);
/* The active custom row of group/version/plural, or of apiVersion + kind; NULL if none. */
const struct api_resource *api_crd_find(const char *group, const char *version, const char *plural);
const struct api_resource *api_crd_find_kind(const char *group, size_t glen, const char *version,
					     const char *kind);

/* A custom row's version entry (spec.versions[i] of its CRD: schema, columns,
 * subresources), held until released even if the CRD changes meanwhile. NULL if res is
 * not a custom row. */
struct api_crd_ref;
struct api_crd_ref *api_crd_acquire(const struct api_resource *res);
const cJSON *api_crd_version(const struct api_crd_ref *ref);
void api_crd_release(struct api_crd_ref *ref);

/* Versions (conversion strategy None, as kube-apiserver without a webhook): the apiVersion
 * a custom object of res is stored with ("group/STORAGE") into buf, or NULL when res is not
 * a custom row. */
const char *api_crd_storage_api_version(const struct api_resource *res, char *buf, size_t cap);
/* A stored custom object's text served at res's version: when its leading
 * {"apiVersion":"..." member names another version, writes {"apiVersion":"group/VERSION"
 * into head (cap bytes; API_CRD_VIEW_HEAD_LEN is enough) and returns how many bytes of data
 * it replaces; 0 when the text is served as it is (or res is not a custom row). */
#define API_CRD_VIEW_HEAD_LEN (K32_API_CRD_GROUP_LEN + K32_API_CRD_VERSION_LEN + 24)
size_t api_crd_view_head(const struct api_resource *res, const char *data, size_t len, char *head,
			 size_t cap);

/* The hooks of custom rows in the generic paths (no-ops for other rows). */
k32_status_t api_crd_prune(const struct api_resource *res, cJSON *obj,
			   enum api_field_validation mode, struct api_warnings *w,
			   struct api_fail *f);
void api_crd_default(const struct api_resource *res, cJSON *obj);
void api_crd_validate(const struct api_resource *res, const cJSON *obj, struct api_fail *f);
/* The /scale paths of a custom row (".spec.replicas" without the dot) into the buffers;
 * false if the row has no scale subresource. */
bool api_crd_scale_paths(const struct api_resource *res, char *spec, char *status, char *sel,
			 size_t cap);
/* Sets the number at a dotted path of obj, creating the objects on the way. */
bool api_crd_set_number(cJSON *obj, const char *path, double v);
/* The Table of custom objects: Name, the additionalPrinterColumns (or Age). */
cJSON *api_crd_table(const struct api_resource *res, const cJSON *const *objs, size_t count,
		     uint64_t now_s, const char *rv, bool with_columns);
/* Adds the OpenAPI v3 component schemas of the custom rows of group/version to schemas. */
void api_crd_openapi(const char *group, const char *version, cJSON *schemas);

#endif /* API_CRD_H */
