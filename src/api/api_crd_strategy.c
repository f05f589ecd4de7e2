/*
 * api_crd_strategy.c - what CustomResourceDefinition and custom objects do differently in
 * the generic create and update paths (struct api_strategy).
 *
 * A CRD is checked as kube-apiserver checks it (name = plural.group, a group with a dot,
 * DNS-label names, scope, one storage version, a structural schema per version, printer
 * columns, scale paths) plus kube32's bounds (K32_API_MAX_CRDS, K32_API_CRD_MAX_VERSIONS,
 * the schema limits, K32_API_CRD_MAX_COLUMNS), each refused with a 422 cause naming the
 * field, the value and the limit. Its status is set on every write: kube32 accepts the
 * names and establishes the CRD at once (no conflicts can remain: they are refused).
 * Reentrant; reads the registry of custom rows (api_crd.c) for the count and conflicts.
 */
#include "api/api_crd.h"
#include "base/k32_json.h"
#include "platform/k32_platform.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *sget(const cJSON *o, const char *path)
{
	return cJSON_GetStringValue(k32_json_find(o, path));
}

/* ---- defaults and status --------------------------------------------------------------- */

/* The condition of type t in conds, keeping its lastTransitionTime if it was True. */
static void set_condition(cJSON *conds, const cJSON *old, const char *t, const char *reason,
			  const char *msg, const char *now)
{
	const char *since = NULL;
	const cJSON *c;
	cJSON_ArrayForEach(c, old)
	{
		const char *ty = sget(c, "type"), *st = sget(c, "status");
		if (ty && !strcmp(ty, t) && st && !strcmp(st, "True"))
			since = sget(c, "lastTransitionTime");
	}
	cJSON *n = cJSON_CreateObject();
	if (!n)
		return;
	cJSON_AddStringToObject(n, "type", t);
	cJSON_AddStringToObject(n, "status", "True");
	cJSON_AddStringToObject(n, "lastTransitionTime", since ? since : now);
	cJSON_AddStringToObject(n, "reason", reason);
	cJSON_AddStringToObject(n, "message", msg);
	cJSON_AddItemToArray(conds, n);
}

static void crd_defaults(cJSON *obj)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
	const char *kind = sget(names, "kind");
	if (cJSON_IsObject(names) && kind && kind[0]) {
		char buf[80];
		if (!sget(names, "singular")) {
			size_t i = 0;
			for (; kind[i] && i + 1 < sizeof(buf); i++)
				buf[i] = (char)tolower((unsigned char)kind[i]);
			buf[i] = 0;
			cJSON_AddStringToObject(names, "singular", buf);
		}
		if (!sget(names, "listKind")) {
			snprintf(buf, sizeof(buf), "%.70sList", kind);
			cJSON_AddStringToObject(names, "listKind", buf);
		}
	}
	if (cJSON_IsObject(spec) && !cJSON_GetObjectItemCaseSensitive(spec, "conversion")) {
		cJSON *cv = cJSON_AddObjectToObject(spec, "conversion");
		cJSON_AddStringToObject(cv, "strategy", "None");
	}
	/* status: names accepted, established; storedVersions keeps every version ever stored */
	cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(obj, "status");
	cJSON *st = cJSON_AddObjectToObject(obj, "status");
	if (!st) {
		cJSON_Delete(old);
		return;
	}
	char now[32];
	api_format_time(k32_plat()->wall_s(), now, sizeof(now));
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(old, "conditions");
	set_condition(conds, oc, "NamesAccepted", "NoConflicts", "no conflicts found", now);
	set_condition(conds, oc, "Established", "InitialNamesAccepted",
		      "the initial names have been accepted", now);
	if (names)
		api_json_put(st, "acceptedNames", cJSON_Duplicate(names, true));
	cJSON *sv = cJSON_DetachItemFromObjectCaseSensitive(old, "storedVersions");
	if (!cJSON_IsArray(sv)) {
		cJSON_Delete(sv);
		sv = cJSON_CreateArray();
	}
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions"))
	{
		const char *name = sget(v, "name");
		if (!name || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
			continue;
		bool have = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, sv)
		{
			const char *s = cJSON_GetStringValue(e);
			have = have || (s && !strcmp(s, name));
		}
		if (!have)
			cJSON_AddItemToArray(sv, cJSON_CreateString(name));
	}
	api_json_put(st, "storedVersions", sv);
	cJSON_Delete(old);
}

/* ---- validation ------------------------------------------------------------------------ */

static void bad(struct api_fail *f, const char *field, const char *value, const char *why)
{
	api_fail_add_cause(f, "FieldValueInvalid", field, "Invalid value: \"%.60s\": %s",
			   value ? value : "", why);
}

static void required(struct api_fail *f, const char *field)
{
	api_fail_add_cause(f, "FieldValueRequired", field, "Required value");
}

/* A lowercase RFC 1123 label of at most 63 characters; NULL if s is one. */
static bool is_label(const char *s)
{
	return s && !api_check_dns_label(s);
}

static void validate_columns(const cJSON *cols, const char *prefix, struct api_fail *f)
{
	char field[96];
	int n = cJSON_GetArraySize(cols), i = 0;
	if (n > K32_API_CRD_MAX_COLUMNS) {
		snprintf(field, sizeof(field), "%.40s.additionalPrinterColumns", prefix);
		api_fail_add_cause(f, "FieldValueTooMany", field,
				   "Too many: %d: must have at most %d columns "
				   "(K32_API_CRD_MAX_COLUMNS); drop some or mark them priority 1",
				   n, K32_API_CRD_MAX_COLUMNS);
		return;
	}
	const cJSON *c;
	cJSON_ArrayForEach(c, cols)
	{
		const char *name = sget(c, "name"), *type = sget(c, "type"),
			   *jp = sget(c, "jsonPath");
		snprintf(field, sizeof(field), "%.40s.additionalPrinterColumns[%d]", prefix, i++);
		size_t fl = strlen(field);
		if (!name || !name[0]) {
			snprintf(field + fl, sizeof(field) - fl, ".name");
			required(f, field);
		}
		field[fl] = 0;
		if (!type ||
		    (strcmp(type, "integer") && strcmp(type, "number") && strcmp(type, "string") &&
		     strcmp(type, "boolean") && strcmp(type, "date"))) {
			snprintf(field + fl, sizeof(field) - fl, ".type");
			api_fail_add_cause(
			    f, "FieldValueNotSupported", field,
			    "Unsupported value: \"%.40s\": supported values: "
			    "\"boolean\", \"date\", \"integer\", \"number\", \"string\"",
			    type ? type : "");
		}
		field[fl] = 0;
		if (!jp || jp[0] != '.') {
			snprintf(field + fl, sizeof(field) - fl, ".jsonPath");
			bad(f, field, jp, "must be a simple JSON path starting with '.'");
		}
	}
}

static void validate_version(const cJSON *v, int i, struct api_fail *f)
{
	char field[96];
	const char *name = sget(v, "name");
	snprintf(field, sizeof(field), "spec.versions[%d].name", i);
	if (!name || !name[0])
		required(f, field);
	else if (!is_label(name) || strlen(name) > K32_API_CRD_VERSION_LEN ||
		 !isalpha((unsigned char)name[0]))
		api_fail_add_cause(
		    f, "FieldValueInvalid", field,
		    "Invalid value: \"%.40s\": a version must be a DNS-1035 label of "
		    "at most %d characters (K32_API_CRD_VERSION_LEN), such as v1",
		    name, K32_API_CRD_VERSION_LEN);
	snprintf(field, sizeof(field), "spec.versions[%d]", i);
	const cJSON *schema = k32_json_find(v, "schema.openAPIV3Schema");
	char sfield[96];
	snprintf(sfield, sizeof(sfield), "spec.versions[%d].schema.openAPIV3Schema", i);
	api_schema_check(schema, sfield, f);
	validate_columns(cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns"), field, f);
	const cJSON *sc = k32_json_find(v, "subresources.scale");
	if (sc) {
		static const char *const keys[] = {"specReplicasPath", "statusReplicasPath",
						   "labelSelectorPath"};
		static const char *const roots[] = {".spec.", ".status.", ".status."};
		for (size_t k = 0; k < 3; k++) {
			const char *p = sget(sc, keys[k]);
			snprintf(sfield, sizeof(sfield), "spec.versions[%d].subresources.scale.%s",
				 i, keys[k]);
			if (!p && k < 2)
				required(f, sfield);
			else if (p && (strncmp(p, roots[k], strlen(roots[k])) || strchr(p, '[') ||
				       strlen(p) >= 64))
				bad(f, sfield, p,
				    k == 0
					? "should be a json path under .spec (at most 63 bytes)"
					: "should be a json path under .status (at most 63 bytes)");
		}
	}
}

static void crd_validate(const cJSON *obj, struct api_fail *f)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const char *group = sget(spec, "group"), *plural = sget(spec, "names.plural");
	const char *kind = sget(spec, "names.kind"), *singular = sget(spec, "names.singular");
	const char *scope = sget(spec, "scope"), *name = sget(obj, "metadata.name");
	char want[160];
	if (!group || !group[0])
		required(f, "spec.group");
	else if (api_check_dns_subdomain(group) || !strchr(group, '.'))
		bad(f, "spec.group", group, "should be a domain with at least one dot");
	else if (strlen(group) > K32_API_CRD_GROUP_LEN)
		api_fail_add_cause(f, "FieldValueTooLong", "spec.group",
				   "Too long: \"%.40s...\" is %zu bytes, the limit is %d "
				   "(K32_API_CRD_GROUP_LEN); use a shorter domain",
				   group, strlen(group), K32_API_CRD_GROUP_LEN);
	if (!plural || !plural[0])
		required(f, "spec.names.plural");
	else if (!is_label(plural))
		bad(f, "spec.names.plural", plural,
		    "a lowercase RFC 1123 label must consist of "
		    "lower case alphanumeric characters or '-'");
	if (singular && singular[0] && !is_label(singular))
		bad(f, "spec.names.singular", singular,
		    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
		    "characters or '-'");
	if (!kind || !kind[0])
		required(f, "spec.names.kind");
	else {
		bool ok = strlen(kind) < 64 && isalpha((unsigned char)kind[0]);
		for (const char *k = kind; ok && *k; k++)
			ok = isalnum((unsigned char)*k);
		if (!ok)
			bad(f, "spec.names.kind", kind,
			    "may have mixed case, but should otherwise match: [a-zA-Z][a-zA-Z0-9]* "
			    "(at most 63 characters)");
	}
	const cJSON *sn;
	int i = 0;
	cJSON_ArrayForEach(sn, k32_json_find(spec, "names.shortNames"))
	{
		char field[48];
		snprintf(field, sizeof(field), "spec.names.shortNames[%d]", i++);
		if (!is_label(cJSON_GetStringValue(sn)) || strlen(sn->valuestring) > 15)
			bad(f, field, cJSON_GetStringValue(sn),
			    "a lowercase RFC 1123 label of at most 15 characters");
	}
	if (plural && group) {
		snprintf(want, sizeof(want), "%s.%s", plural, group);
		if (!name || strcmp(name, want))
			bad(f, "metadata.name", name, "must be spec.names.plural+\".\"+spec.group");
	}
	if (!scope)
		required(f, "spec.scope");
	else if (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))
		api_fail_add_cause(f, "FieldValueNotSupported", "spec.scope",
				   "Unsupported value: \"%.40s\": supported values: \"Cluster\", "
				   "\"Namespaced\"",
				   scope);
	const cJSON *vers = cJSON_GetObjectItemCaseSensitive(spec, "versions"), *v;
	int nv = cJSON_GetArraySize(vers), storage = 0;
	if (nv == 0)
		required(f, "spec.versions");
	else if (nv > K32_API_CRD_MAX_VERSIONS)
		api_fail_add_cause(f, "FieldValueTooMany", "spec.versions",
				   "Too many: %d: must have at most %d versions "
				   "(K32_API_CRD_MAX_VERSIONS); drop old versions",
				   nv, K32_API_CRD_MAX_VERSIONS);
	i = 0;
	cJSON_ArrayForEach(v, vers)
	{
		if (i >= K32_API_CRD_MAX_VERSIONS)
			break;
		storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
		for (const cJSON *w = vers->child; w != v; w = w->next) {
			const char *a = sget(w, "name"), *b = sget(v, "name");
			if (a && b && !strcmp(a, b)) {
				char field[48];
				snprintf(field, sizeof(field), "spec.versions[%d].name", i);
				api_fail_add_cause(f, "FieldValueDuplicate", field,
						   "Duplicate value: \"%.40s\"", b);
			}
		}
		validate_version(v, i++, f);
	}
	if (nv > 0 && storage != 1)
		bad(f, "spec.versions", "",
		    "must have exactly one version marked as storage version");
	if (!group || !plural || !kind)
		return;
	/* names kube32 already serves, and kube32's bound on CRDs */
	cJSON_ArrayForEach(v, vers)
	{
		const char *vn = sget(v, "name");
		const struct api_resource *r = vn ? api_registry_find(group, vn, plural) : NULL;
		if (r && r->strategy != &api_strategy_custom)
			bad(f, "spec.names.plural", plural, "the resource is built into kube32");
	}
	const struct api_resource *rows[API_CRD_ROWS];
	size_t n = api_crd_rows(rows, API_CRD_ROWS);
	bool mine = false;
	for (size_t k = 0; k < n; k++) {
		const struct api_resource *r = rows[k];
		if (strcmp(r->group, group))
			continue;
		if (!strcmp(r->plural, plural)) {
			mine = true;
			if (r->namespaced != !strcmp(scope ? scope : "", "Namespaced"))
				bad(f, "spec.scope", scope, "field is immutable");
			if (strcmp(r->kind, kind))
				bad(f, "spec.names.kind", kind,
				    "kube32 keeps the kind of an established CRD; delete and "
				    "re-create the CRD to rename it");
		} else if (!strcmp(r->kind, kind)) {
			bad(f, "spec.names.kind", kind, "the kind is already served in this group");
		}
	}
	if (!mine && api_crd_count() >= K32_API_MAX_CRDS)
		api_fail_add_cause(f, "FieldValueTooMany", "metadata.name",
				   "Too many: this server holds %zu CRDs, the limit is %d "
				   "(K32_API_MAX_CRDS); delete an unused CRD first",
				   api_crd_count(), K32_API_MAX_CRDS);
}

/* clang-format off */
const struct api_strategy api_strategy_crd = {
	.defaults = crd_defaults, .validate = crd_validate,
	.top_fields = "apiVersion,kind,metadata,spec,status",
	.spec_fields = "group,names,scope,versions,conversion,preserveUnknownFields",
	.generation = true,
	.printer = &api_printer_default,
};

/* Custom objects: the schema of their row does the work (api_crd.c hooks). */
const struct api_strategy api_strategy_custom = {
	.generation = true,
	.printer = &api_printer_default,
};
/* clang-format on */
