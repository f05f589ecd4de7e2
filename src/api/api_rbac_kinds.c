/*
 * api_rbac_kinds.c - what the RBAC kinds (Role, ClusterRole, RoleBinding, ClusterRoleBinding)
 * and ServiceAccount check at create and update: the shape of rules, roleRef and subjects,
 * bounded by K32_API_RBAC_MAX_RULES, K32_API_RBAC_MAX_RULE_ITEMS and
 * K32_API_RBAC_MAX_SUBJECTS (422 naming the limit). Evaluation is api_rbac.c's.
 * Reentrant; allocates nothing.
 */
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

/* A string member of o (NULL when absent or not a string). */
static const char *api_jstr(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* ---- validation of the kinds ------------------------------------------------------------ */

static void rbac_check_strs(const cJSON *rule, const char *key, size_t idx, bool required,
			    struct api_fail *f)
{
	char field[64];
	snprintf(field, sizeof(field), "rules[%zu].%s", idx, key);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(rule, key);
	if (!arr) {
		if (required)
			api_fail_add_cause(f, "FieldValueRequired", field,
					   "Required value: %s must contain at least one value",
					   key);
		return;
	}
	if (!cJSON_IsArray(arr)) {
		api_fail_add_cause(f, "FieldValueInvalid", field, "Invalid value: not a list");
		return;
	}
	int n = cJSON_GetArraySize(arr);
	if (required && n == 0)
		api_fail_add_cause(f, "FieldValueRequired", field,
				   "Required value: %s must contain at least one value", key);
	if (n > K32_API_RBAC_MAX_RULE_ITEMS)
		api_fail_add_cause(f, "FieldValueTooMany", field,
				   "Too many: %d: must have at most %d items "
				   "(K32_API_RBAC_MAX_RULE_ITEMS); split the rule",
				   n, K32_API_RBAC_MAX_RULE_ITEMS);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it)) {
			api_fail_add_cause(f, "FieldValueInvalid", field,
					   "Invalid value: every item must be a string");
			return;
		}
	}
}

static void rbac_validate_rules(const cJSON *obj, bool cluster, struct api_fail *f)
{
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(obj, "rules");
	if (!rules || cJSON_IsNull(rules))
		return;
	if (!cJSON_IsArray(rules)) {
		api_fail_add_cause(f, "FieldValueInvalid", "rules", "Invalid value: not a list");
		return;
	}
	int n = cJSON_GetArraySize(rules);
	if (n > K32_API_RBAC_MAX_RULES) {
		api_fail_add_cause(f, "FieldValueTooMany", "rules",
				   "Too many: %d: must have at most %d rules "
				   "(K32_API_RBAC_MAX_RULES); merge rules or split the role",
				   n, K32_API_RBAC_MAX_RULES);
		return;
	}
	size_t i = 0;
	const cJSON *rule;
	cJSON_ArrayForEach(rule, rules)
	{
		char field[32];
		snprintf(field, sizeof(field), "rules[%zu]", i);
		if (!cJSON_IsObject(rule)) {
			api_fail_add_cause(f, "FieldValueInvalid", field,
					   "Invalid value: not an object");
			i++;
			continue;
		}
		rbac_check_strs(rule, "verbs", i, true, f);
		rbac_check_strs(rule, "apiGroups", i, false, f);
		rbac_check_strs(rule, "resources", i, false, f);
		rbac_check_strs(rule, "resourceNames", i, false, f);
		rbac_check_strs(rule, "nonResourceURLs", i, false, f);
		bool urls = cJSON_GetArraySize(
				cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs")) > 0;
		bool ress =
		    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rule, "resources")) > 0;
		if (urls && !cluster)
			api_fail_add_cause(f, "FieldValueInvalid", field,
					   "Invalid value: namespaced rules cannot apply to "
					   "non-resource URLs");
		else if (urls && ress)
			api_fail_add_cause(f, "FieldValueInvalid", field,
					   "Invalid value: rules cannot apply to both regular "
					   "resources and non-resource URLs");
		else if (!urls && !ress)
			api_fail_add_cause(f, "FieldValueRequired", field,
					   "Required value: resource rules must supply at least "
					   "one resource (and apiGroups), or nonResourceURLs");
		else if (ress && !cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"))
			api_fail_add_cause(f, "FieldValueRequired", field,
					   "Required value: resource rules must supply at least "
					   "one api group");
		i++;
	}
}

static void validate_role(const cJSON *obj, struct api_fail *f)
{
	rbac_validate_rules(obj, false, f);
}

static void validate_cluster_role(const cJSON *obj, struct api_fail *f)
{
	rbac_validate_rules(obj, true, f);
}

static void rbac_validate_binding(const cJSON *obj, bool cluster, struct api_fail *f)
{
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(obj, "roleRef");
	const char *g = api_jstr(ref, "apiGroup");
	const char *k = api_jstr(ref, "kind");
	const char *n = api_jstr(ref, "name");
	if (!cJSON_IsObject(ref))
		api_fail_add_cause(f, "FieldValueRequired", "roleRef", "Required value");
	else {
		if (!g || strcmp(g, "rbac.authorization.k8s.io"))
			api_fail_add_cause(f, "FieldValueNotSupported", "roleRef.apiGroup",
					   "Unsupported value: \"%.60s\": supported values: "
					   "\"rbac.authorization.k8s.io\"",
					   g ? g : "");
		if (!k || (strcmp(k, "ClusterRole") && (cluster || strcmp(k, "Role"))))
			api_fail_add_cause(
			    f, "FieldValueNotSupported", "roleRef.kind",
			    "Unsupported value: \"%.60s\": supported values: %s", k ? k : "",
			    cluster ? "\"ClusterRole\"" : "\"ClusterRole\", \"Role\"");
		if (!n || !n[0])
			api_fail_add_cause(f, "FieldValueRequired", "roleRef.name",
					   "Required value");
	}
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(obj, "subjects");
	if (subs && !cJSON_IsNull(subs) && !cJSON_IsArray(subs)) {
		api_fail_add_cause(f, "FieldValueInvalid", "subjects", "Invalid value: not a list");
		return;
	}
	int count = cJSON_GetArraySize(subs);
	if (count > K32_API_RBAC_MAX_SUBJECTS) {
		api_fail_add_cause(f, "FieldValueTooMany", "subjects",
				   "Too many: %d: must have at most %d subjects "
				   "(K32_API_RBAC_MAX_SUBJECTS); bind a Group instead",
				   count, K32_API_RBAC_MAX_SUBJECTS);
		return;
	}
	size_t i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, subs)
	{
		char field[48];
		const char *sk = api_jstr(s, "kind");
		const char *sn = api_jstr(s, "name");
		const char *sns = api_jstr(s, "namespace");
		snprintf(field, sizeof(field), "subjects[%zu].kind", i);
		if (!sk ||
		    (strcmp(sk, "User") && strcmp(sk, "Group") && strcmp(sk, "ServiceAccount")))
			api_fail_add_cause(f, "FieldValueNotSupported", field,
					   "Unsupported value: \"%.60s\": supported values: "
					   "\"ServiceAccount\", \"User\", \"Group\"",
					   sk ? sk : "");
		snprintf(field, sizeof(field), "subjects[%zu].name", i);
		if (!sn || !sn[0])
			api_fail_add_cause(f, "FieldValueRequired", field, "Required value");
		if (sk && !strcmp(sk, "ServiceAccount")) {
			snprintf(field, sizeof(field), "subjects[%zu].namespace", i);
			if (cluster && (!sns || !sns[0]))
				api_fail_add_cause(f, "FieldValueRequired", field,
						   "Required value");
			else if (sns && sns[0] && api_check_dns_label(sns))
				api_fail_add_cause(f, "FieldValueInvalid", field,
						   "Invalid value: \"%.60s\": %s", sns,
						   api_check_dns_label(sns));
		}
		i++;
	}
}

static void validate_role_binding(const cJSON *obj, struct api_fail *f)
{
	rbac_validate_binding(obj, false, f);
}

static void validate_cluster_role_binding(const cJSON *obj, struct api_fail *f)
{
	rbac_validate_binding(obj, true, f);
}

k32_status_t api_rbac_update_check(const struct api_resource *res, const cJSON *old,
				   const cJSON *upd, struct api_fail *f)
{
	if (strcmp(res->group, "rbac.authorization.k8s.io") ||
	    (strcmp(res->plural, "rolebindings") && strcmp(res->plural, "clusterrolebindings")) ||
	    !old)
		return K32_OK;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(old, "roleRef");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(upd, "roleRef");
	if (a && b && cJSON_Compare(a, b, true))
		return K32_OK;
	api_fail_add_cause(f, "FieldValueInvalid", "roleRef",
			   "Invalid value: cannot change roleRef (delete the binding and create "
			   "it again)");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(upd, "metadata");
	return api_fail_invalid(f, res->kind, api_jstr(md, "name") ? api_jstr(md, "name") : "");
}

const struct api_strategy api_strategy_role = {
    .validate = validate_role,
    .top_fields = "apiVersion,kind,metadata,rules",
    .printer = &api_printer_role,
    .name_is_path_segment = true,
};
const struct api_strategy api_strategy_cluster_role = {
    .validate = validate_cluster_role,
    .top_fields = "apiVersion,kind,metadata,rules,aggregationRule",
    .printer = &api_printer_role,
    .name_is_path_segment = true,
};
const struct api_strategy api_strategy_role_binding = {
    .validate = validate_role_binding,
    .top_fields = "apiVersion,kind,metadata,subjects,roleRef",
    .printer = &api_printer_binding,
    .name_is_path_segment = true,
};
const struct api_strategy api_strategy_cluster_role_binding = {
    .validate = validate_cluster_role_binding,
    .top_fields = "apiVersion,kind,metadata,subjects,roleRef",
    .printer = &api_printer_binding,
    .name_is_path_segment = true,
};

/* ---- the ServiceAccount kind -------------------------------------------------------------- */

static void validate_service_account(const cJSON *obj, struct api_fail *f)
{
	const cJSON *am = cJSON_GetObjectItemCaseSensitive(obj, "automountServiceAccountToken");
	if (am && !cJSON_IsBool(am) && !cJSON_IsNull(am))
		api_fail_add_cause(f, "FieldValueInvalid", "automountServiceAccountToken",
				   "Invalid value: must be a boolean");
	static const char *const lists[] = {"secrets", "imagePullSecrets"};
	for (size_t i = 0; i < 2; i++) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(obj, lists[i]);
		if (l && !cJSON_IsNull(l) && !cJSON_IsArray(l))
			api_fail_add_cause(f, "FieldValueInvalid", lists[i],
					   "Invalid value: not a list");
	}
}

const struct api_strategy api_strategy_service_account = {
    .validate = validate_service_account,
    .top_fields = "apiVersion,kind,metadata,secrets,imagePullSecrets,"
		  "automountServiceAccountToken",
    .printer = &api_printer_service_account,
};
