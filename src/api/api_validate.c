/*
 * api_validate.c - defaulting, validation and strict field checking per kind.
 *
 * api_default fills what the API server defaults upstream and what clients rely on (a new
 * pod is Pending; a Deployment has 1 replica and a RollingUpdate strategy; a Secret's
 * stringData is folded into base64 data). api_validate collects every problem as a field
 * cause and answers one 422 Invalid naming them all, in upstream's message form
 * (`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain ...`).
 * api_check_unknown_fields implements fieldValidation (Strict refuses, Warn and Ignore drop)
 * for the fields this server knows (kubectl sends Strict by default). Reentrant; allocates only
 * through cJSON.
 */
#include "api/api_crd.h"
#include "api/api_int.h"
#include "base/k32_base64.h"
#include "base/k32_json.h"
#include "kmeta/kmeta.h"

#include <stdio.h>
#include <string.h>

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *obj_child(cJSON *o, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsObject(c))
		return c;
	if (c)
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	return cJSON_AddObjectToObject(o, key);
}

static void set_default_str(cJSON *o, const char *key, const char *v)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsString(c) || !c->valuestring[0]) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		cJSON_AddStringToObject(o, key, v);
	}
}

static void set_default_num(cJSON *o, const char *key, double v)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(c)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		cJSON_AddNumberToObject(o, key, v);
	}
}

/* ---- base64 ---------------------------------------------------------------------------- */

cJSON *api_b64_string(const uint8_t *in, size_t len)
{
	size_t out_len = k32_base64_len(len);
	char stackbuf[256];
	char *out = out_len < sizeof(stackbuf) ? stackbuf : cJSON_malloc(out_len + 1);
	if (!out)
		return NULL;
	k32_base64_encode(in, len, out);
	cJSON *s = cJSON_CreateString(out);
	if (out != stackbuf)
		cJSON_free(out);
	return s;
}

/* ---- defaulting ------------------------------------------------------------------------ */

static void default_pod_spec(cJSON *spec)
{
	if (!spec)
		return;
	set_default_str(spec, "restartPolicy", "Always");
	set_default_str(spec, "dnsPolicy", "ClusterFirst");
	set_default_str(spec, "schedulerName", "default-scheduler");
	set_default_num(spec, "terminationGracePeriodSeconds", 30);
	cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
	{
		if (!cJSON_IsObject(c))
			continue;
		set_default_str(c, "imagePullPolicy", "IfNotPresent");
		set_default_str(c, "terminationMessagePath", "/dev/termination-log");
		set_default_str(c, "terminationMessagePolicy", "File");
		cJSON *p;
		cJSON_ArrayForEach(
		    p, cJSON_GetObjectItemCaseSensitive(c, "ports")) if (cJSON_IsObject(p))
		    set_default_str(p, "protocol", "TCP");
	}
}

static void default_workload(cJSON *obj, bool replicas)
{
	cJSON *spec = obj_child(obj, "spec");
	if (!spec)
		return;
	if (replicas)
		set_default_num(spec, "replicas", 1);
	cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	default_pod_spec(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"));
	/* a selector-less workload selects its template's labels (apps/v1 requires one, so
	 * validation reports it; this only fills matchLabels when the template has labels) */
}

static void default_pod(cJSON *obj)
{
	default_pod_spec(obj_child(obj, "spec"));
	cJSON *st = obj_child(obj, "status");
	if (st) {
		set_default_str(st, "phase", "Pending");
		set_default_str(st, "qosClass", "BestEffort");
	}
}

static void default_deployment(cJSON *obj)
{
	default_workload(obj, true);
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	cJSON *strat = obj_child(spec, "strategy");
	if (strat) {
		set_default_str(strat, "type", "RollingUpdate");
		const char *type = jstr(strat, "type");
		if (type && !strcmp(type, "RollingUpdate")) {
			cJSON *ru = obj_child(strat, "rollingUpdate");
			if (ru && !cJSON_GetObjectItem(ru, "maxUnavailable"))
				cJSON_AddStringToObject(ru, "maxUnavailable", "25%");
			if (ru && !cJSON_GetObjectItem(ru, "maxSurge"))
				cJSON_AddStringToObject(ru, "maxSurge", "25%");
		}
	}
	set_default_num(spec, "revisionHistoryLimit", 10);
	set_default_num(spec, "progressDeadlineSeconds", 600);
}

static void default_replicaset(cJSON *obj)
{
	default_workload(obj, true);
}

static void default_daemonset(cJSON *obj)
{
	default_workload(obj, false);
	cJSON *us = obj_child(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "updateStrategy");
	if (us)
		set_default_str(us, "type", "RollingUpdate");
}

static void default_job(cJSON *obj)
{
	default_workload(obj, false);
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	set_default_num(spec, "completions", 1);
	set_default_num(spec, "parallelism", 1);
	set_default_num(spec, "backoffLimit", 6);
}

static void default_cronjob(cJSON *obj)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec))
		return;
	set_default_str(spec, "concurrencyPolicy", "Allow");
	if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(spec, "suspend"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "suspend");
		cJSON_AddFalseToObject(spec, "suspend");
	}
	set_default_num(spec, "successfulJobsHistoryLimit", 3);
	set_default_num(spec, "failedJobsHistoryLimit", 1);
	cJSON *jspec = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(spec, "jobTemplate"), "spec");
	if (cJSON_IsObject(jspec)) {
		set_default_num(jspec, "completions", 1);
		set_default_num(jspec, "parallelism", 1);
		set_default_num(jspec, "backoffLimit", 6);
		default_pod_spec(obj_child(obj_child(jspec, "template"), "spec"));
	}
}

static void default_namespace(cJSON *obj)
{
	cJSON *st = obj_child(obj, "status");
	if (st)
		set_default_str(st, "phase", "Active");
}

static void default_secret(cJSON *obj)
{
	set_default_str(obj, "type", "Opaque");
	cJSON *sd = cJSON_GetObjectItemCaseSensitive(obj, "stringData");
	if (cJSON_IsObject(sd)) {
		cJSON *data = obj_child(obj, "data");
		cJSON *e;
		cJSON_ArrayForEach(e, sd)
		{
			if (!cJSON_IsString(e) || !data)
				continue;
			cJSON_DeleteItemFromObjectCaseSensitive(data, e->string);
			cJSON *v =
			    api_b64_string((const uint8_t *)e->valuestring, strlen(e->valuestring));
			api_json_put(data, e->string, v);
		}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "stringData");
}

static void default_device(cJSON *obj)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const char *model = jstr(spec, "model");
	if (cJSON_IsObject(spec))
		set_default_num(spec, "pollIntervalMs",
				model && !strcmp(model, "rfid") ? 200 : 3000);
	if (cJSON_IsObject(spec))
		set_default_num(spec, "bus", 0);
}

k32_status_t api_default(const struct api_resource *res, cJSON *obj, struct api_fail *f)
{
	cJSON *md = obj_child(obj, "metadata");
	if (!md)
		return api_fail_set(f, 500, "InternalError", "defaulting %s: out of memory",
				    res->kind);
	if (res->strategy->defaults)
		res->strategy->defaults(obj);
	api_crd_default(res, obj);
	return K32_OK;
}

/* ---- validation ------------------------------------------------------------------------ */

static void cause_invalid(struct api_fail *f, const char *field, const char *value, const char *why)
{
	api_fail_add_cause(f, "FieldValueInvalid", field, "Invalid value: \"%s\": %s",
			   K32_CLIP(value), why);
}

/* kmeta's report of a quantity or kube32.io/ annotation that does not parse or is out of
 * range: one 422 cause naming the field, the value and the allowed range. */
static void cause_kmeta(void *f, const char *field, const char *value, const char *why)
{
	cause_invalid(f, field, value, why);
}

static void cause_required(struct api_fail *f, const char *field)
{
	api_fail_add_cause(f, "FieldValueRequired", field, "Required value");
}

static void validate_labels(struct api_fail *f, const cJSON *labels, const char *field)
{
	const cJSON *l;
	char path[64];
	if (labels && !cJSON_IsObject(labels)) {
		/* An array here has members without keys: reject it before reading any key. */
		api_fail_add_cause(
		    f, "FieldValueTypeInvalid", field,
		    "Invalid value: must be an object of string keys to string values");
		return;
	}
	cJSON_ArrayForEach(l, labels)
	{
		const char *why = api_check_label_key(l->string);
		snprintf(path, sizeof(path), "%s", field);
		if (why) {
			cause_invalid(f, path, l->string, why);
			continue;
		}
		if (!cJSON_IsString(l)) {
			api_fail_add_cause(f, "FieldValueTypeInvalid", path,
					   "Invalid value: label %s must be a string", l->string);
			continue;
		}
		why = api_check_label_value(l->valuestring);
		if (why)
			cause_invalid(f, path, l->valuestring, why);
	}
}

/* A path segment name (the RBAC kinds', as kube-apiserver's ValidatePathSegmentName, and
 * no control byte or space, which no request line or log carries); NULL if fine. */
static const char *api_check_path_segment(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return "must be non-empty";
	if (n > 253)
		return "must be no more than 253 characters";
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "may not be '.' or '..'";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '/' || c == '%' || c <= 0x20 || c == 0x7f)
			return "may not contain '/', '%', spaces or control characters";
	}
	return NULL;
}

static void validate_meta(const struct api_resource *res, const cJSON *obj, struct api_fail *f)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *name = jstr(md, "name");
	if (!name || !name[0]) {
		api_fail_add_cause(f, "FieldValueRequired", "metadata.name",
				   "Required value: name or generateName is required");
	} else {
		const char *why = res->strategy->name_is_label ? api_check_dns_label(name)
				  : res->strategy->name_is_path_segment
				      ? api_check_path_segment(name)
				      : api_check_dns_subdomain(name);
		if (why)
			cause_invalid(f, "metadata.name", name, why);
	}
	validate_labels(f, cJSON_GetObjectItemCaseSensitive(md, "labels"), "metadata.labels");
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	const cJSON *a;
	size_t total = 0;
	if (ann && !cJSON_IsObject(ann)) {
		api_fail_add_cause(
		    f, "FieldValueTypeInvalid", "metadata.annotations",
		    "Invalid value: must be an object of string keys to string values");
		ann = NULL;
	}
	cJSON_ArrayForEach(a, ann)
	{
		if (!cJSON_IsString(a)) {
			api_fail_add_cause(f, "FieldValueTypeInvalid", "metadata.annotations",
					   "Invalid value: annotation %s must be a string",
					   a->string);
			continue;
		}
		if (api_check_label_key(a->string))
			cause_invalid(f, "metadata.annotations", a->string,
				      api_check_label_key(a->string));
		total += strlen(a->string) + strlen(a->valuestring);
	}
	if (total > 256 * 1024)
		api_fail_add_cause(f, "FieldValueTooLong", "metadata.annotations",
				   "Too long: must have at most 262144 bytes");
}

static bool validate_containers(struct api_fail *f, const cJSON *list, const char *field,
				bool required)
{
	char path[96];
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
		if (required)
			cause_required(f, field);
		return false;
	}
	int i = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, list)
	{
		const char *name = jstr(c, "name");
		snprintf(path, sizeof(path), "%s[%d].name", field, i);
		if (!name || !name[0])
			cause_required(f, path);
		else if (api_check_dns_label(name))
			cause_invalid(f, path, name, api_check_dns_label(name));
		for (const cJSON *d = list->child; d && d != c; d = d->next)
			if (name && jstr(d, "name") && !strcmp(jstr(d, "name"), name))
				api_fail_add_cause(f, "FieldValueDuplicate", path,
						   "Duplicate value: \"%s\"", name);
		snprintf(path, sizeof(path), "%s[%d].image", field, i);
		const char *image = jstr(c, "image");
		if (!image || !image[0])
			cause_required(f, path);
		const char *pp = jstr(c, "imagePullPolicy");
		if (pp && strcmp(pp, "Always") && strcmp(pp, "IfNotPresent") &&
		    strcmp(pp, "Never")) {
			snprintf(path, sizeof(path), "%s[%d].imagePullPolicy", field, i);
			api_fail_add_cause(f, "FieldValueNotSupported", path,
					   "Unsupported value: \"%s\": supported values: "
					   "\"Always\", \"IfNotPresent\", \"Never\"",
					   pp);
		}
		i++;
	}
	return true;
}

static void validate_pod_spec(struct api_fail *f, const cJSON *spec, const char *field, bool job)
{
	char path[96];
	if (!cJSON_IsObject(spec)) {
		cause_required(f, field);
		return;
	}
	snprintf(path, sizeof(path), "%s.containers", field);
	validate_containers(f, cJSON_GetObjectItemCaseSensitive(spec, "containers"), path, true);
	snprintf(path, sizeof(path), "%s.initContainers", field);
	validate_containers(f, cJSON_GetObjectItemCaseSensitive(spec, "initContainers"), path,
			    false);
	kmeta_pod_quantities(spec, field, NULL, cause_kmeta, f);
	const char *rp = jstr(spec, "restartPolicy");
	snprintf(path, sizeof(path), "%s.restartPolicy", field);
	if (job && rp && strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
		api_fail_add_cause(
		    f, "FieldValueNotSupported", path,
		    "Unsupported value: \"%s\": supported values: \"OnFailure\", \"Never\"", rp);
	else if (job && !rp)
		cause_required(f, path);
	else if (rp && strcmp(rp, "Always") && strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
		api_fail_add_cause(f, "FieldValueNotSupported", path,
				   "Unsupported value: \"%s\": supported values: \"Always\", "
				   "\"OnFailure\", \"Never\"",
				   rp);
}

static void validate_replicas(struct api_fail *f, const cJSON *spec)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(spec, "replicas");
	if (r && (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > 1e9 ||
		  r->valuedouble != (double)(long long)r->valuedouble))
		api_fail_add_cause(f, "FieldValueInvalid", "spec.replicas",
				   "Invalid value: must be a non-negative integer");
}

static void validate_workload(struct api_fail *f, const cJSON *obj, bool job)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec)) {
		cause_required(f, "spec");
		return;
	}
	validate_replicas(f, spec);
	const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	const cJSON *tlabels = k32_json_find(tmpl, "metadata.labels");
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
	if (!job && (!cJSON_IsObject(sel) ||
		     (cJSON_GetArraySize(ml) == 0 && cJSON_GetArraySize(me) == 0))) {
		cause_required(f, "spec.selector");
	} else if (ml && !cJSON_IsObject(ml)) {
		validate_labels(f, ml, "spec.selector.matchLabels");
	} else if (cJSON_IsObject(ml)) {
		validate_labels(f, ml, "spec.selector.matchLabels");
		const cJSON *l;
		cJSON_ArrayForEach(l, ml)
		{
			const char *tv = jstr(tlabels, l->string);
			if (!tv || !cJSON_IsString(l) || strcmp(tv, l->valuestring)) {
				api_fail_add_cause(
				    f, "FieldValueInvalid", "spec.template.metadata.labels",
				    "Invalid value: `selector` does not match template `labels`");
				break;
			}
		}
	}
	validate_labels(f, tlabels, "spec.template.metadata.labels");
	kmeta_pod_annotations(k32_json_find(tmpl, "metadata.annotations"),
			      "spec.template.metadata.annotations", NULL, cause_kmeta, f);
	validate_pod_spec(f, cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), "spec.template.spec",
			  job);
}

static bool api_config_key_ok(const char *k)
{
	if (!k[0] || strlen(k) > 253 || !strcmp(k, ".") || !strcmp(k, ".."))
		return false;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

static void validate_data(struct api_fail *f, const cJSON *obj, const char *field, bool b64)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(obj, field);
	const cJSON *e;
	char path[80];
	if (data && !cJSON_IsObject(data)) {
		api_fail_add_cause(f, "FieldValueTypeInvalid", field,
				   "Invalid value: must be an object of strings");
		return;
	}
	cJSON_ArrayForEach(e, data)
	{
		snprintf(path, sizeof(path), "%s[%s]", field, e->string);
		if (!api_config_key_ok(e->string))
			cause_invalid(f, path, e->string,
				      "a valid config key must consist of alphanumeric characters, "
				      "'-', '_' or '.'");
		else if (!cJSON_IsString(e))
			api_fail_add_cause(f, "FieldValueTypeInvalid", path,
					   "Invalid value: must be a string");
		else if (b64 && !k32_base64_valid(e->valuestring))
			cause_invalid(f, path, "<secret>", "illegal base64 data");
	}
}

static void validate_device(struct api_fail *f, const cJSON *obj)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec)) {
		cause_required(f, "spec");
		return;
	}
	const char *node = jstr(spec, "node");
	if (!node || !node[0])
		cause_required(f, "spec.node");
	const char *model = jstr(spec, "model");
	if (!model)
		cause_required(f, "spec.model");
	else if (strcmp(model, "bme688") && strcmp(model, "miniscale") && strcmp(model, "rfid"))
		api_fail_add_cause(f, "FieldValueNotSupported", "spec.model",
				   "Unsupported value: \"%s\": supported values: \"bme688\", "
				   "\"miniscale\", \"rfid\"",
				   model);
	/* clang-format off */
	static const struct { const char *k; long lo, hi; bool req; } nums[] = {
		{"bus", 0, 7, false}, {"muxChannel", 0, 7, false}, {"address", 0x08, 0x77, true},
		{"pollIntervalMs", 10, 3600000, false},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, nums[i].k);
		char path[48];
		snprintf(path, sizeof(path), "spec.%s", nums[i].k);
		if (!v) {
			if (nums[i].req)
				cause_required(f, path);
			continue;
		}
		if (!cJSON_IsNumber(v) || v->valuedouble < nums[i].lo ||
		    v->valuedouble > nums[i].hi)
			api_fail_add_cause(f, "FieldValueInvalid", path,
					   "Invalid value: must be an integer between %ld and %ld",
					   nums[i].lo, nums[i].hi);
	}
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(spec, "params");
	const cJSON *p;
	if (params && !cJSON_IsObject(params)) {
		api_fail_add_cause(
		    f, "FieldValueTypeInvalid", "spec.params",
		    "Invalid value: must be an object of string keys to string values");
		params = NULL;
	}
	cJSON_ArrayForEach(p, params)
	{
		if (!cJSON_IsString(p))
			api_fail_add_cause(f, "FieldValueTypeInvalid", "spec.params",
					   "Invalid value: param %s must be a string", p->string);
	}
}

static void validate_pod(const cJSON *obj, struct api_fail *f)
{
	validate_pod_spec(f, cJSON_GetObjectItemCaseSensitive(obj, "spec"), "spec", false);
	kmeta_pod_annotations(k32_json_find(obj, "metadata.annotations"), "metadata.annotations",
			      NULL, cause_kmeta, f);
}

static void validate_app(const cJSON *obj, struct api_fail *f)
{
	validate_workload(f, obj, false);
}

static void validate_job(const cJSON *obj, struct api_fail *f)
{
	validate_workload(f, obj, true);
}

/* A non-negative integer field of spec, if present. */
static void validate_spec_count(struct api_fail *f, const cJSON *spec, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);
	char path[64];
	snprintf(path, sizeof(path), "spec.%s", key);
	if (v && (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2147483647.0 ||
		  v->valuedouble != (double)(long long)v->valuedouble))
		api_fail_add_cause(f, "FieldValueInvalid", path,
				   "Invalid value: must be a non-negative integer");
}

static void validate_cronjob(const cJSON *obj, struct api_fail *f)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const char *name = jstr(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
	/* its Jobs are named <name>-<minutes since 1970> (11 more bytes), within 63 */
	if (name && strlen(name) > 52)
		api_fail_add_cause(f, "FieldValueInvalid", "metadata.name",
				   "Invalid value: \"%s\": must be no more than 52 characters",
				   K32_CLIP(name));
	if (!cJSON_IsObject(spec)) {
		cause_required(f, "spec");
		return;
	}
	const char *sched = jstr(spec, "schedule");
	struct kmeta_cron cron;
	char why[160];
	if (!sched)
		cause_required(f, "spec.schedule");
	else if (!kmeta_cron_parse(sched, &cron, why, sizeof(why)))
		cause_invalid(f, "spec.schedule", sched, why);
	else if (!kmeta_cron_next(&cron, 0))
		cause_invalid(f, "spec.schedule", sched, "the schedule matches no date");
	const char *tz = jstr(spec, "timeZone");
	if (cJSON_GetObjectItemCaseSensitive(spec, "timeZone") &&
	    !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(spec, "timeZone")) &&
	    (!tz || (strcmp(tz, "UTC") && strcmp(tz, "Etc/UTC"))))
		api_fail_add_cause(f, "FieldValueNotSupported", "spec.timeZone",
				   "Unsupported value: \"%s\": supported values: \"UTC\", "
				   "\"Etc/UTC\" (kube32 boards keep no time zone database)",
				   K32_CLIP(tz));
	const char *cp = jstr(spec, "concurrencyPolicy");
	if (cp && strcmp(cp, "Allow") && strcmp(cp, "Forbid") && strcmp(cp, "Replace"))
		api_fail_add_cause(f, "FieldValueNotSupported", "spec.concurrencyPolicy",
				   "Unsupported value: \"%s\": supported values: \"Allow\", "
				   "\"Forbid\", \"Replace\"",
				   K32_CLIP(cp));
	const cJSON *susp = cJSON_GetObjectItemCaseSensitive(spec, "suspend");
	if (susp && !cJSON_IsBool(susp))
		api_fail_add_cause(f, "FieldValueTypeInvalid", "spec.suspend",
				   "Invalid value: must be true or false");
	validate_spec_count(f, spec, "startingDeadlineSeconds");
	validate_spec_count(f, spec, "successfulJobsHistoryLimit");
	validate_spec_count(f, spec, "failedJobsHistoryLimit");
	const cJSON *jt = cJSON_GetObjectItemCaseSensitive(spec, "jobTemplate");
	if (!cJSON_IsObject(jt)) {
		cause_required(f, "spec.jobTemplate");
		return;
	}
	/* the template is a Job's: validated as one, its causes' fields put under
	 * spec.jobTemplate (validate_workload names them from the Job's spec) */
	size_t first = f->cause_count;
	validate_workload(f, jt, true);
	for (size_t i = first; i < f->cause_count && i < K32_API_MAX_CAUSES; i++) {
		char field[sizeof(f->causes[i].field)];
		snprintf(field, sizeof(field), "spec.jobTemplate.%s", f->causes[i].field);
		snprintf(f->causes[i].field, sizeof(f->causes[i].field), "%s", field);
	}
}

static void validate_controllerrevision(const cJSON *obj, struct api_fail *f)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(obj, "revision");
	if (!r)
		cause_required(f, "revision");
	else if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > 9.0e15 ||
		 r->valuedouble != (double)(long long)r->valuedouble)
		api_fail_add_cause(f, "FieldValueInvalid", "revision",
				   "Invalid value: must be a non-negative integer");
}

static void validate_configmap(const cJSON *obj, struct api_fail *f)
{
	validate_data(f, obj, "data", false);
	validate_data(f, obj, "binaryData", true);
}

static void validate_secret(const cJSON *obj, struct api_fail *f)
{
	validate_data(f, obj, "data", true);
}

static void validate_device_obj(const cJSON *obj, struct api_fail *f)
{
	validate_device(f, obj);
}

k32_status_t api_validate(const struct api_resource *res, const cJSON *obj, struct api_fail *f)
{
	f->cause_count = 0;
	validate_meta(res, obj, f);
	if (res->strategy->validate)
		res->strategy->validate(obj, f);
	api_crd_validate(res, obj, f);
	if (!f->cause_count)
		return K32_OK;
	char kind[96];
	snprintf(kind, sizeof(kind), "%s%s%s", res->kind,
		 res->strategy == &api_strategy_custom ? "." : "",
		 res->strategy == &api_strategy_custom ? res->group : "");
	return api_fail_invalid(f, kind, jstr(cJSON_GetObjectItem(obj, "metadata"), "name"));
}

/* ---- strict field checking ------------------------------------------------------------- */

/* clang-format off */
static const char known_meta[] =
	"name,generateName,namespace,selfLink,uid,resourceVersion,generation,creationTimestamp,"
	"deletionTimestamp,deletionGracePeriodSeconds,labels,annotations,ownerReferences,"
	"finalizers,managedFields";
static const char known_podspec[] =
	"volumes,initContainers,containers,ephemeralContainers,restartPolicy,"
	"terminationGracePeriodSeconds,activeDeadlineSeconds,dnsPolicy,nodeSelector,"
	"serviceAccountName,serviceAccount,automountServiceAccountToken,nodeName,hostNetwork,"
	"hostPID,hostIPC,shareProcessNamespace,securityContext,imagePullSecrets,hostname,"
	"subdomain,affinity,schedulerName,tolerations,hostAliases,priorityClassName,priority,"
	"dnsConfig,readinessGates,runtimeClassName,enableServiceLinks,preemptionPolicy,overhead,"
	"topologySpreadConstraints,setHostnameAsFQDN,os,hostUsers,schedulingGates,"
	"resourceClaims,resources";
static const char known_container[] =
	"name,image,command,args,workingDir,ports,envFrom,env,resources,resizePolicy,"
	"restartPolicy,volumeMounts,volumeDevices,livenessProbe,readinessProbe,startupProbe,"
	"lifecycle,terminationMessagePath,terminationMessagePolicy,imagePullPolicy,"
	"securityContext,stdin,stdinOnce,tty";
static const char known_deploy_spec[] =
	"replicas,selector,template,strategy,minReadySeconds,revisionHistoryLimit,paused,"
	"progressDeadlineSeconds";
static const char known_rs_spec[] = "replicas,minReadySeconds,selector,template";
static const char known_ds_spec[] =
	"selector,template,updateStrategy,minReadySeconds,revisionHistoryLimit";
static const char known_job_spec[] =
	"parallelism,completions,activeDeadlineSeconds,podFailurePolicy,successPolicy,"
	"backoffLimit,backoffLimitPerIndex,maxFailedIndexes,selector,manualSelector,template,"
	"ttlSecondsAfterFinished,completionMode,suspend,podReplacementPolicy,managedBy";
static const char known_cronjob_spec[] =
	"schedule,timeZone,startingDeadlineSeconds,concurrencyPolicy,suspend,jobTemplate,"
	"successfulJobsHistoryLimit,failedJobsHistoryLimit";
static const char known_device_spec[] =
	"node,bus,muxChannel,address,model,pollIntervalMs,params";
/* clang-format on */

static bool api_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && !strncmp(p, name, n))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* What one walk over an object's unknown fields does with them. */
struct api_uf {
	const struct api_resource *res;
	enum api_field_validation mode;
	struct api_warnings *w;
	struct api_fail *f;
};

/* The fields of o (an object, else nothing) not in list: Strict fails on the first, the
 * other modes remove each (Warn naming it). prefix is the path of o ("spec."). */
static k32_status_t api_unknown(const struct api_uf *u, cJSON *o, const char *list,
				const char *prefix)
{
	if (!cJSON_IsObject(o))
		return K32_OK;
	cJSON *c = o->child;
	while (c) {
		cJSON *next = c->next;
		if (c->string && !api_in_list(list, c->string)) {
			if (u->mode == API_FV_STRICT)
				return api_fail_set(
				    u->f, 400, "BadRequest",
				    "%s in version \"%s\" cannot be handled as a %s: "
				    "strict decoding error: unknown field \"%s%s\"",
				    u->res->kind, u->res->version, u->res->kind, K32_CLIP(prefix),
				    K32_CLIP(c->string));
			if (u->mode == API_FV_WARN)
				api_warn(u->w, "unknown field \"%s%s\"", K32_CLIP(prefix),
					 K32_CLIP(c->string));
			cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
		}
		c = next;
	}
	return K32_OK;
}

static k32_status_t api_unknown_podspec(const struct api_uf *u, cJSON *spec, const char *prefix)
{
	char path[96];
	k32_status_t st = api_unknown(u, spec, known_podspec, prefix);
	const char *lists[] = {"containers", "initContainers"};
	for (size_t k = 0; !st && k < 2; k++) {
		int i = 0;
		cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[k]))
		{
			snprintf(path, sizeof(path), "%s%s[%d].", prefix, lists[k], i++);
			st = api_unknown(u, c, known_container, path);
			if (st)
				break;
		}
	}
	return st;
}

k32_status_t api_check_unknown_fields(const struct api_resource *res, cJSON *obj,
				      enum api_field_validation mode, struct api_warnings *w,
				      struct api_fail *f)
{
	const struct api_uf u = {res, mode, w, f};
	const struct api_strategy *ks = res->strategy;
	k32_status_t st = ks->top_fields ? api_unknown(&u, obj, ks->top_fields, "")
					 : api_crd_prune(res, obj, mode, w, f);
	if (st)
		return st;
	st = api_unknown(&u, cJSON_GetObjectItemCaseSensitive(obj, "metadata"), known_meta,
			 "metadata.");
	if (st)
		return st;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (ks->spec_is_pod)
		return api_unknown_podspec(&u, spec, "spec.");
	if (!ks->spec_fields)
		return K32_OK;
	st = api_unknown(&u, spec, ks->spec_fields, "spec.");
	if (st || !ks->spec_has_template)
		return st;
	cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	st = api_unknown(&u, cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), known_meta,
			 "spec.template.metadata.");
	if (st)
		return st;
	return api_unknown_podspec(&u, cJSON_GetObjectItemCaseSensitive(tmpl, "spec"),
				   "spec.template.spec.");
}

/* ---- duplicate fields ------------------------------------------------------------------ */

static k32_status_t api_dedupe_rec(const struct api_uf *u, cJSON *o, char *path, size_t plen,
				   int depth)
{
	if (depth > K32_API_MAX_DEPTH)
		return K32_OK; /* parsing already bounds depth; nothing deeper to check */
	if (cJSON_IsObject(o)) {
		cJSON *c = o->child;
		while (c) {
			cJSON *next = c->next;
			bool dup = false;
			for (cJSON *d = next; d && !dup; d = d->next)
				dup = d->string && c->string && !strcmp(d->string, c->string);
			if (dup && u->mode == API_FV_STRICT)
				return api_fail_set(
				    u->f, 400, "BadRequest",
				    "%s in version \"%s\" cannot be handled as a %s: strict "
				    "decoding error: duplicate field \"%s%s\"",
				    u->res->kind, u->res->version, u->res->kind, path, c->string);
			if (dup) { /* like Go's decoder: the last one wins */
				if (u->mode == API_FV_WARN)
					api_warn(u->w, "duplicate field \"%s%s\"", path, c->string);
				cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
			} else {
				size_t n = strlen(path);
				snprintf(path + n, plen - n, "%s.", c->string ? c->string : "");
				k32_status_t st = api_dedupe_rec(u, c, path, plen, depth + 1);
				path[n] = 0;
				if (st)
					return st;
			}
			c = next;
		}
	} else if (cJSON_IsArray(o)) {
		cJSON *c;
		cJSON_ArrayForEach(c, o)
		{
			k32_status_t st = api_dedupe_rec(u, c, path, plen, depth + 1);
			if (st)
				return st;
		}
	}
	return K32_OK;
}

k32_status_t api_dedupe_fields(const struct api_resource *res, cJSON *obj,
			       enum api_field_validation mode, struct api_warnings *w,
			       struct api_fail *f)
{
	const struct api_uf u = {res, mode, w, f};
	char path[192] = "";
	return api_dedupe_rec(&u, obj, path, sizeof(path), 0);
}

/* ---- per-kind strategies --------------------------------------------------------------- */

#define TOP_STD "apiVersion,kind,metadata,spec,status"

/* clang-format off */
const struct api_strategy api_strategy_namespace = {
	.defaults = default_namespace, .top_fields = TOP_STD, .generation = true,
	.name_is_label = true,
	.printer = &api_printer_namespace,
	.is_namespace = true,
};
const struct api_strategy api_strategy_node = {
	.top_fields = TOP_STD, .generation = true,
	.node_access = API_NODE_SELF, .node_restricted = true,
	.printer = &api_printer_node,
};
const struct api_strategy api_strategy_pod = {
	.defaults = default_pod, .validate = validate_pod, .top_fields = TOP_STD,
	.spec_is_pod = true, .generation = true, .node_access = API_NODE_BOUND_POD,
	.printer = &api_printer_pod,
	.graceful_on_node = true,
};
const struct api_strategy api_strategy_configmap = {
	.validate = validate_configmap,
	.top_fields = "apiVersion,kind,metadata,data,binaryData,immutable",
	.printer = &api_printer_configmap,
};
const struct api_strategy api_strategy_secret = {
	.defaults = default_secret, .validate = validate_secret,
	.top_fields = "apiVersion,kind,metadata,data,stringData,type,immutable",
	.printer = &api_printer_secret,
};
const struct api_strategy api_strategy_event = {
	.top_fields = NULL, /* two versions with many fields: not checked */
	.node_access = API_NODE_NO_DELETE,
	.printer = &api_printer_event,
};
const struct api_strategy api_strategy_deployment = {
	.defaults = default_deployment, .validate = validate_app, .top_fields = TOP_STD,
	.spec_fields = known_deploy_spec, .spec_has_template = true, .generation = true,
	.printer = &api_printer_deployment,
	.dependents = {"apps", "v1", "replicasets"},
};
const struct api_strategy api_strategy_replicaset = {
	.defaults = default_replicaset, .validate = validate_app, .top_fields = TOP_STD,
	.spec_fields = known_rs_spec, .spec_has_template = true, .generation = true,
	.printer = &api_printer_replicaset,
	.dependents = {"", "v1", "pods"},
};
const struct api_strategy api_strategy_daemonset = {
	.defaults = default_daemonset, .validate = validate_app, .top_fields = TOP_STD,
	.spec_fields = known_ds_spec, .spec_has_template = true, .generation = true,
	.printer = &api_printer_daemonset,
	.dependents = {"", "v1", "pods"},
};
const struct api_strategy api_strategy_job = {
	.defaults = default_job, .validate = validate_job, .top_fields = TOP_STD,
	.spec_fields = known_job_spec, .spec_has_template = true, .generation = true,
	.printer = &api_printer_job,
	.dependents = {"", "v1", "pods"},
};
const struct api_strategy api_strategy_cronjob = {
	.defaults = default_cronjob, .validate = validate_cronjob, .top_fields = TOP_STD,
	.spec_fields = known_cronjob_spec, .generation = true,
	.printer = &api_printer_cronjob,
	.dependents = {"batch", "v1", "jobs"},
};
const struct api_strategy api_strategy_controllerrevision = {
	.validate = validate_controllerrevision,
	.top_fields = "apiVersion,kind,metadata,data,revision",
	.printer = &api_printer_controllerrevision,
};
const struct api_strategy api_strategy_lease = {
	.top_fields = TOP_STD, .generation = true, .node_access = API_NODE_SELF_LEASE,
	.printer = &api_printer_lease,
};
const struct api_strategy api_strategy_access_review = {
	.top_fields = NULL, .generation = true, .node_access = API_NODE_ALL,
	.printer = &api_printer_default,
	.review = true,
};
const struct api_strategy api_strategy_self_review = {
	.top_fields = NULL, .generation = true,
	.printer = &api_printer_default,
	.review = true,
};
const struct api_strategy api_strategy_device = {
	.defaults = default_device, .validate = validate_device_obj, .top_fields = TOP_STD,
	.spec_fields = known_device_spec, .generation = true,
	.node_access = API_NODE_STATUS_OF_NODE,
	.printer = &api_printer_device,
};
/* clang-format on */
