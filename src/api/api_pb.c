/*
 * api_pb.c - decoder for the protobuf request bodies kubectl 1.32 sends.
 *
 * kubectl's typed clients (create namespace|configmap|secret|deployment, auth can-i) POST
 * `application/vnd.kubernetes.protobuf`: the magic "k8s\0", then runtime.Unknown
 * {1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType}, where raw is
 * the object's own message. This file turns those messages into the JSON object they stand
 * for, driven by field tables (field number -> JSON name and type) transcribed from the
 * upstream generated.proto field numbers (kubectl-api.md appendix A; batch/v1 JobSpec from
 * upstream's generated.proto, for `kubectl create job`; CronJobSpec likewise, for `kubectl
 * create cronjob`). Unknown fields are
 * skipped by wire type. Empty strings, zero numbers, false and an empty Time are dropped
 * (Go sends non-pointer fields even when empty). Nesting is bounded by K32_API_MAX_DEPTH.
 * Answers are always JSON. Reentrant; allocates only cJSON nodes.
 */
#include "api/api_int.h"
#include "base/k32_json.h"

#include <stdio.h>
#include <string.h>

enum pb_type {
	PB_STR,	     /* string */
	PB_BYTES64,  /* bytes, base64 in JSON */
	PB_INT,	     /* varint (int32/int64) */
	PB_BOOL,     /* varint 0/1 */
	PB_MSG,	     /* nested message (desc) */
	PB_REP_STR,  /* repeated string */
	PB_REP_MSG,  /* repeated message */
	PB_MAP_SS,   /* map<string,string> */
	PB_MAP_SB,   /* map<string,bytes> (values base64) */
	PB_MAP_SQ,   /* map<string,Quantity> */
	PB_TIME,     /* meta.v1.Time {1 seconds, 2 nanos} as RFC 3339 */
	PB_INTORSTR, /* IntOrString {1 type, 2 intVal, 3 strVal} */
};

struct pb_field {
	uint32_t num;
	const char *name;
	enum pb_type type;
	const struct pb_field *sub; /* PB_MSG / PB_REP_MSG: fields of the message, {0}-ended */
};

/* clang-format off */
static const struct pb_field pb_owner_ref[] = {
	{1, "kind", PB_STR, NULL}, {3, "name", PB_STR, NULL}, {4, "uid", PB_STR, NULL},
	{5, "apiVersion", PB_STR, NULL}, {6, "controller", PB_BOOL, NULL},
	{7, "blockOwnerDeletion", PB_BOOL, NULL}, {0}};
static const struct pb_field pb_meta[] = {
	{1, "name", PB_STR, NULL}, {2, "generateName", PB_STR, NULL},
	{3, "namespace", PB_STR, NULL}, {5, "uid", PB_STR, NULL},
	{6, "resourceVersion", PB_STR, NULL}, {7, "generation", PB_INT, NULL},
	{8, "creationTimestamp", PB_TIME, NULL}, {9, "deletionTimestamp", PB_TIME, NULL},
	{10, "deletionGracePeriodSeconds", PB_INT, NULL}, {11, "labels", PB_MAP_SS, NULL},
	{12, "annotations", PB_MAP_SS, NULL}, {13, "ownerReferences", PB_REP_MSG, pb_owner_ref},
	{14, "finalizers", PB_REP_STR, NULL}, {0}};
static const struct pb_field pb_ns_spec[] = {{1, "finalizers", PB_REP_STR, NULL}, {0}};
static const struct pb_field pb_namespace[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_ns_spec}, {0}};
static const struct pb_field pb_configmap[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "data", PB_MAP_SS, NULL},
	{3, "binaryData", PB_MAP_SB, NULL}, {4, "immutable", PB_BOOL, NULL}, {0}};
static const struct pb_field pb_secret[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "data", PB_MAP_SB, NULL}, {3, "type", PB_STR, NULL},
	{4, "stringData", PB_MAP_SS, NULL}, {5, "immutable", PB_BOOL, NULL}, {0}};
static const struct pb_field pb_sel_req[] = {
	{1, "key", PB_STR, NULL}, {2, "operator", PB_STR, NULL}, {3, "values", PB_REP_STR, NULL},
	{0}};
static const struct pb_field pb_label_selector[] = {
	{1, "matchLabels", PB_MAP_SS, NULL}, {2, "matchExpressions", PB_REP_MSG, pb_sel_req},
	{0}};
static const struct pb_field pb_env[] = {
	{1, "name", PB_STR, NULL}, {2, "value", PB_STR, NULL}, {0}};
static const struct pb_field pb_port[] = {
	{1, "name", PB_STR, NULL}, {2, "hostPort", PB_INT, NULL},
	{3, "containerPort", PB_INT, NULL}, {4, "protocol", PB_STR, NULL},
	{5, "hostIP", PB_STR, NULL}, {0}};
static const struct pb_field pb_resources[] = {
	{1, "limits", PB_MAP_SQ, NULL}, {2, "requests", PB_MAP_SQ, NULL}, {0}};
static const struct pb_field pb_mount[] = {
	{1, "name", PB_STR, NULL}, {2, "readOnly", PB_BOOL, NULL}, {3, "mountPath", PB_STR, NULL},
	{4, "subPath", PB_STR, NULL}, {0}};
static const struct pb_field pb_container[] = {
	{1, "name", PB_STR, NULL}, {2, "image", PB_STR, NULL}, {3, "command", PB_REP_STR, NULL},
	{4, "args", PB_REP_STR, NULL}, {5, "workingDir", PB_STR, NULL},
	{6, "ports", PB_REP_MSG, pb_port}, {7, "env", PB_REP_MSG, pb_env},
	{8, "resources", PB_MSG, pb_resources}, {9, "volumeMounts", PB_REP_MSG, pb_mount},
	{13, "terminationMessagePath", PB_STR, NULL}, {14, "imagePullPolicy", PB_STR, NULL},
	{16, "stdin", PB_BOOL, NULL}, {17, "stdinOnce", PB_BOOL, NULL}, {18, "tty", PB_BOOL, NULL},
	{20, "terminationMessagePolicy", PB_STR, NULL}, {0}};
static const struct pb_field pb_volume[] = {{1, "name", PB_STR, NULL}, {0}};
static const struct pb_field pb_pod_spec[] = {
	{1, "volumes", PB_REP_MSG, pb_volume}, {2, "containers", PB_REP_MSG, pb_container},
	{3, "restartPolicy", PB_STR, NULL}, {4, "terminationGracePeriodSeconds", PB_INT, NULL},
	{5, "activeDeadlineSeconds", PB_INT, NULL}, {6, "dnsPolicy", PB_STR, NULL},
	{7, "nodeSelector", PB_MAP_SS, NULL}, {8, "serviceAccountName", PB_STR, NULL},
	{10, "nodeName", PB_STR, NULL}, {11, "hostNetwork", PB_BOOL, NULL},
	{12, "hostPID", PB_BOOL, NULL}, {13, "hostIPC", PB_BOOL, NULL},
	{16, "hostname", PB_STR, NULL}, {17, "subdomain", PB_STR, NULL},
	{19, "schedulerName", PB_STR, NULL}, {20, "initContainers", PB_REP_MSG, pb_container},
	{0}};
static const struct pb_field pb_template[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_pod_spec}, {0}};
static const struct pb_field pb_rolling[] = {
	{1, "maxUnavailable", PB_INTORSTR, NULL}, {2, "maxSurge", PB_INTORSTR, NULL}, {0}};
static const struct pb_field pb_strategy[] = {
	{1, "type", PB_STR, NULL}, {2, "rollingUpdate", PB_MSG, pb_rolling}, {0}};
static const struct pb_field pb_deploy_spec[] = {
	{1, "replicas", PB_INT, NULL}, {2, "selector", PB_MSG, pb_label_selector},
	{3, "template", PB_MSG, pb_template}, {4, "strategy", PB_MSG, pb_strategy},
	{5, "minReadySeconds", PB_INT, NULL}, {6, "revisionHistoryLimit", PB_INT, NULL},
	{7, "paused", PB_BOOL, NULL}, {9, "progressDeadlineSeconds", PB_INT, NULL}, {0}};
static const struct pb_field pb_deployment[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_deploy_spec}, {0}};
static const struct pb_field pb_job_spec[] = {
	{1, "parallelism", PB_INT, NULL}, {2, "completions", PB_INT, NULL},
	{3, "activeDeadlineSeconds", PB_INT, NULL}, {4, "selector", PB_MSG, pb_label_selector},
	{5, "manualSelector", PB_BOOL, NULL}, {6, "template", PB_MSG, pb_template},
	{7, "backoffLimit", PB_INT, NULL}, {8, "ttlSecondsAfterFinished", PB_INT, NULL},
	{9, "completionMode", PB_STR, NULL}, {10, "suspend", PB_BOOL, NULL}, {0}};
static const struct pb_field pb_job[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_job_spec}, {0}};
static const struct pb_field pb_job_template[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_job_spec}, {0}};
static const struct pb_field pb_cronjob_spec[] = {
	{1, "schedule", PB_STR, NULL}, {2, "startingDeadlineSeconds", PB_INT, NULL},
	{3, "concurrencyPolicy", PB_STR, NULL}, {4, "suspend", PB_BOOL, NULL},
	{5, "jobTemplate", PB_MSG, pb_job_template}, {6, "successfulJobsHistoryLimit", PB_INT, NULL},
	{7, "failedJobsHistoryLimit", PB_INT, NULL}, {8, "timeZone", PB_STR, NULL}, {0}};
static const struct pb_field pb_cronjob[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_cronjob_spec}, {0}};
static const struct pb_field pb_res_attr[] = {
	{1, "namespace", PB_STR, NULL}, {2, "verb", PB_STR, NULL}, {3, "group", PB_STR, NULL},
	{4, "version", PB_STR, NULL}, {5, "resource", PB_STR, NULL},
	{6, "subresource", PB_STR, NULL}, {7, "name", PB_STR, NULL}, {0}};
static const struct pb_field pb_nonres_attr[] = {
	{1, "path", PB_STR, NULL}, {2, "verb", PB_STR, NULL}, {0}};
static const struct pb_field pb_ssar_spec[] = {
	{1, "resourceAttributes", PB_MSG, pb_res_attr},
	{2, "nonResourceAttributes", PB_MSG, pb_nonres_attr}, {0}};
static const struct pb_field pb_ssar[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_ssar_spec}, {0}};
static const struct pb_field pb_ssr[] = {{1, "metadata", PB_MSG, pb_meta}, {0}};
static const struct pb_field pb_ssrr_spec[] = {{1, "namespace", PB_STR, NULL}, {0}};
static const struct pb_field pb_ssrr[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_ssrr_spec}, {0}};

/* core/v1 Service (kubectl create service): ServiceSpec and ServicePort */
static const struct pb_field pb_svc_port[] = {
	{1, "name", PB_STR, NULL}, {2, "protocol", PB_STR, NULL}, {3, "port", PB_INT, NULL},
	{4, "targetPort", PB_INTORSTR, NULL}, {5, "nodePort", PB_INT, NULL},
	{6, "appProtocol", PB_STR, NULL}, {0}};
static const struct pb_field pb_svc_spec[] = {
	{1, "ports", PB_REP_MSG, pb_svc_port}, {2, "selector", PB_MAP_SS, NULL},
	{3, "clusterIP", PB_STR, NULL}, {4, "type", PB_STR, NULL},
	{5, "externalIPs", PB_REP_STR, NULL}, {7, "sessionAffinity", PB_STR, NULL},
	{10, "externalName", PB_STR, NULL}, {0}};
static const struct pb_field pb_service[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_svc_spec}, {0}};

/* rbac.authorization.k8s.io/v1 (kubectl create role|clusterrole|rolebinding|clusterrolebinding) */
static const struct pb_field pb_policy_rule[] = {
	{1, "verbs", PB_REP_STR, NULL}, {2, "apiGroups", PB_REP_STR, NULL},
	{3, "resources", PB_REP_STR, NULL}, {4, "resourceNames", PB_REP_STR, NULL},
	{5, "nonResourceURLs", PB_REP_STR, NULL}, {0}};
static const struct pb_field pb_aggregation[] = {
	{1, "clusterRoleSelectors", PB_REP_MSG, pb_label_selector}, {0}};
static const struct pb_field pb_role[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "rules", PB_REP_MSG, pb_policy_rule},
	{3, "aggregationRule", PB_MSG, pb_aggregation}, {0}};
static const struct pb_field pb_subject[] = {
	{1, "kind", PB_STR, NULL}, {2, "apiGroup", PB_STR, NULL}, {3, "name", PB_STR, NULL},
	{4, "namespace", PB_STR, NULL}, {0}};
static const struct pb_field pb_role_ref[] = {
	{1, "apiGroup", PB_STR, NULL}, {2, "kind", PB_STR, NULL}, {3, "name", PB_STR, NULL}, {0}};
static const struct pb_field pb_role_binding[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "subjects", PB_REP_MSG, pb_subject},
	{3, "roleRef", PB_MSG, pb_role_ref}, {0}};
/* core/v1 ServiceAccount and authentication/v1 TokenRequest (kubectl create sa|token) */
static const struct pb_field pb_object_ref[] = {
	{1, "kind", PB_STR, NULL}, {2, "namespace", PB_STR, NULL}, {3, "name", PB_STR, NULL},
	{4, "uid", PB_STR, NULL}, {5, "apiVersion", PB_STR, NULL},
	{6, "resourceVersion", PB_STR, NULL}, {7, "fieldPath", PB_STR, NULL}, {0}};
static const struct pb_field pb_local_ref[] = {{1, "name", PB_STR, NULL}, {0}};
static const struct pb_field pb_service_account[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "secrets", PB_REP_MSG, pb_object_ref},
	{3, "imagePullSecrets", PB_REP_MSG, pb_local_ref},
	{4, "automountServiceAccountToken", PB_BOOL, NULL}, {0}};
static const struct pb_field pb_bound_ref[] = {
	{1, "kind", PB_STR, NULL}, {2, "apiVersion", PB_STR, NULL}, {3, "name", PB_STR, NULL},
	{4, "uid", PB_STR, NULL}, {0}};
static const struct pb_field pb_token_spec[] = {
	{1, "audiences", PB_REP_STR, NULL}, {3, "boundObjectRef", PB_MSG, pb_bound_ref},
	{4, "expirationSeconds", PB_INT, NULL}, {0}};
static const struct pb_field pb_token_request[] = {
	{1, "metadata", PB_MSG, pb_meta}, {2, "spec", PB_MSG, pb_token_spec}, {0}};

static const struct { const char *kind; const struct pb_field *fields; } pb_kinds[] = {
	{"Role", pb_role}, {"ClusterRole", pb_role}, {"RoleBinding", pb_role_binding},
	{"ClusterRoleBinding", pb_role_binding}, {"ServiceAccount", pb_service_account},
	{"TokenRequest", pb_token_request},
	{"Service", pb_service},
	{"Namespace", pb_namespace}, {"ConfigMap", pb_configmap}, {"Secret", pb_secret},
	{"Deployment", pb_deployment}, {"Job", pb_job}, {"CronJob", pb_cronjob},
	{"SelfSubjectAccessReview", pb_ssar},
	{"SelfSubjectRulesReview", pb_ssrr}, {"SelfSubjectReview", pb_ssr},
};
/* clang-format on */

struct pb_reader {
	const uint8_t *p;
	const uint8_t *end;
};

static bool pb_varint(struct pb_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return false;
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* Reads a tag; for wire type 2 also the length-delimited bytes. */
static bool pb_field_next(struct pb_reader *r, uint32_t *num, uint32_t *wt, uint64_t *ival,
			  struct pb_reader *sub)
{
	uint64_t tag;
	if (!pb_varint(r, &tag))
		return false;
	*num = (uint32_t)(tag >> 3);
	*wt = (uint32_t)(tag & 7);
	switch (*wt) {
	case 0:
		return pb_varint(r, ival);
	case 1:
		if (r->end - r->p < 8)
			return false;
		r->p += 8;
		return true;
	case 5:
		if (r->end - r->p < 4)
			return false;
		r->p += 4;
		return true;
	case 2: {
		uint64_t len;
		if (!pb_varint(r, &len) || len > (uint64_t)(r->end - r->p))
			return false;
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		return true;
	}
	default:
		return false;
	}
}

/* The string s holds, as a cJSON string. A NUL (cJSON would cut the string there) or bytes
 * that are not UTF-8 are refused with a 400 naming field; NULL then, or when out of memory
 * (f says which). */
static cJSON *pb_string(struct pb_reader *s, const char *field, struct api_fail *f)
{
	size_t n = (size_t)(s->end - s->p);
	size_t at = 0;
	enum k32_utf8_fault fault = k32_utf8_check((const char *)s->p, n, &at);
	if (fault) {
		api_fail_set(
		    f, 400, "BadRequest",
		    "protobuf body: field %s holds %s at byte %zu of its %zu; strings must "
		    "be UTF-8 without NUL",
		    field, k32_utf8_fault_name(fault), at, n);
		api_fail_add_cause(f, "FieldValueInvalid", field,
				   "strings must be UTF-8 without NUL");
		return NULL;
	}
	char stackbuf[256];
	char *tmp = n < sizeof(stackbuf) ? stackbuf : cJSON_malloc(n + 1);
	cJSON *j = NULL;
	if (tmp) {
		memcpy(tmp, s->p, n);
		tmp[n] = 0;
		j = cJSON_CreateString(tmp);
		if (tmp != stackbuf)
			cJSON_free(tmp);
	}
	if (!j)
		api_fail_set(f, 500, "InternalError", "protobuf body: out of memory");
	return j;
}

static k32_status_t pb_bad(struct api_fail *f, const char *what)
{
	return api_fail_set(f, 400, "BadRequest",
			    "protobuf body: %s; send the object as application/json instead", what);
}

/* Decodes a map entry {1 key, 2 value}. */
static k32_status_t pb_map_entry(struct pb_reader *e, enum pb_type type, const char *name,
				 cJSON *map, struct api_fail *f)
{
	struct pb_reader key = {0}, val = {0};
	bool have_key = false;
	while (e->p < e->end) {
		uint32_t num, wt;
		uint64_t iv;
		struct pb_reader sub = {0};
		if (!pb_field_next(e, &num, &wt, &iv, &sub))
			return pb_bad(f, "truncated map entry");
		if (num == 1 && wt == 2) {
			key = sub;
			have_key = true;
		} else if (num == 2 && wt == 2) {
			val = sub;
		}
	}
	if (!have_key)
		return pb_bad(f, "map entry without a key");
	cJSON *k = pb_string(&key, name, f);
	if (!k)
		return api_status_for_code(f->code);
	cJSON *v = NULL;
	if (type == PB_MAP_SS) {
		v = val.p ? pb_string(&val, name, f) : cJSON_CreateString("");
	} else if (type == PB_MAP_SB) {
		v = api_b64_string(val.p, val.p ? (size_t)(val.end - val.p) : 0);
	} else { /* Quantity {1 string} */
		struct pb_reader q = val;
		v = NULL;
		while (q.p && q.p < q.end) {
			uint32_t num, wt;
			uint64_t iv;
			struct pb_reader sub = {0};
			if (!pb_field_next(&q, &num, &wt, &iv, &sub))
				break;
			if (num == 1 && wt == 2) {
				cJSON_Delete(v);
				v = pb_string(&sub, name, f);
				if (!v)
					break;
			}
		}
		if (!v && !f->code)
			v = cJSON_CreateString("0");
	}
	if (!v) {
		cJSON_Delete(k);
		if (f->code)
			return api_status_for_code(f->code);
		return api_fail_set(f, 500, "InternalError", "protobuf body: out of memory");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(map, k->valuestring);
	api_json_put(map, k->valuestring, v);
	cJSON_Delete(k);
	return K32_OK;
}

static cJSON *pb_time(struct pb_reader *s)
{
	int64_t secs = 0;
	while (s->p < s->end) {
		uint32_t num, wt;
		uint64_t iv = 0;
		struct pb_reader sub = {0};
		if (!pb_field_next(s, &num, &wt, &iv, &sub))
			return NULL;
		if (num == 1 && wt == 0)
			secs = (int64_t)iv;
	}
	if (secs <= 0)
		return NULL;
	char buf[32];
	api_format_time((uint64_t)secs, buf, sizeof(buf));
	return cJSON_CreateString(buf);
}

static cJSON *pb_intorstr(struct pb_reader *s, const char *name, struct api_fail *f)
{
	uint64_t type = 0, ival = 0;
	cJSON *str = NULL;
	while (s->p < s->end) {
		uint32_t num, wt;
		uint64_t iv = 0;
		struct pb_reader sub = {0};
		if (!pb_field_next(s, &num, &wt, &iv, &sub))
			break;
		if (num == 1 && wt == 0)
			type = iv;
		else if (num == 2 && wt == 0)
			ival = iv;
		else if (num == 3 && wt == 2) {
			cJSON_Delete(str);
			str = pb_string(&sub, name, f);
			if (!str)
				return NULL;
		}
	}
	if (type == 1 && str)
		return str;
	cJSON_Delete(str);
	return cJSON_CreateNumber((double)(int32_t)ival);
}

static const struct pb_field *pb_find(const struct pb_field *fields, uint32_t num)
{
	for (const struct pb_field *fd = fields; fd->num; fd++)
		if (fd->num == num)
			return fd;
	return NULL;
}

static k32_status_t pb_decode_msg(struct pb_reader *r, const struct pb_field *fields, cJSON *out,
				  int depth, struct api_fail *f)
{
	if (depth > K32_API_MAX_DEPTH)
		return pb_bad(f, "nested deeper than K32_API_MAX_DEPTH");
	while (r->p < r->end) {
		uint32_t num, wt;
		uint64_t iv = 0;
		struct pb_reader sub = {0};
		if (!pb_field_next(r, &num, &wt, &iv, &sub))
			return pb_bad(f, "truncated or malformed field");
		const struct pb_field *fd = pb_find(fields, num);
		if (!fd)
			continue;
		bool len_type = fd->type != PB_INT && fd->type != PB_BOOL;
		if (len_type != (wt == 2))
			return pb_bad(f, "field has the wrong wire type");
		cJSON *v = NULL;
		switch (fd->type) {
		case PB_STR:
			if (sub.end > sub.p && !(v = pb_string(&sub, fd->name, f)))
				return api_status_for_code(f->code);
			break;
		case PB_BYTES64:
			v = api_b64_string(sub.p, (size_t)(sub.end - sub.p));
			break;
		case PB_INT:
			if (iv)
				v = cJSON_CreateNumber((double)(int64_t)iv);
			break;
		case PB_BOOL:
			if (iv)
				v = cJSON_CreateTrue();
			break;
		case PB_TIME:
			v = pb_time(&sub);
			break;
		case PB_INTORSTR:
			v = pb_intorstr(&sub, fd->name, f);
			if (!v && f->code)
				return api_status_for_code(f->code);
			break;
		case PB_MSG: {
			cJSON *m = cJSON_GetObjectItemCaseSensitive(out, fd->name);
			if (!m)
				m = cJSON_AddObjectToObject(out, fd->name);
			if (!m)
				return api_fail_set(f, 500, "InternalError",
						    "protobuf body: out of memory");
			k32_status_t st = pb_decode_msg(&sub, fd->sub, m, depth + 1, f);
			if (st)
				return st;
			continue;
		}
		case PB_REP_STR:
		case PB_REP_MSG: {
			cJSON *arr = cJSON_GetObjectItemCaseSensitive(out, fd->name);
			if (!arr)
				arr = cJSON_AddArrayToObject(out, fd->name);
			cJSON *item = fd->type == PB_REP_STR ? pb_string(&sub, fd->name, f)
							     : cJSON_CreateObject();
			if (!arr || !item) {
				cJSON_Delete(item);
				if (f->code)
					return api_status_for_code(f->code);
				return api_fail_set(f, 500, "InternalError",
						    "protobuf body: out of memory");
			}
			cJSON_AddItemToArray(arr, item);
			if (fd->type == PB_REP_MSG) {
				k32_status_t st = pb_decode_msg(&sub, fd->sub, item, depth + 1, f);
				if (st)
					return st;
			}
			continue;
		}
		case PB_MAP_SS:
		case PB_MAP_SB:
		case PB_MAP_SQ: {
			cJSON *map = cJSON_GetObjectItemCaseSensitive(out, fd->name);
			if (!map)
				map = cJSON_AddObjectToObject(out, fd->name);
			if (!map)
				return api_fail_set(f, 500, "InternalError",
						    "protobuf body: out of memory");
			k32_status_t st = pb_map_entry(&sub, fd->type, fd->name, map, f);
			if (st)
				return st;
			continue;
		}
		}
		if (v) {
			cJSON_DeleteItemFromObjectCaseSensitive(out, fd->name);
			api_json_put(out, fd->name, v);
		}
	}
	return K32_OK;
}

k32_status_t api_pb_decode(const uint8_t *body, size_t len, cJSON **out, struct api_fail *f)
{
	*out = NULL;
	if (len < 4 || memcmp(body, API_PB_MAGIC, 4))
		return pb_bad(f, "missing the \"k8s\\0\" magic prefix");
	struct pb_reader r = {body + 4, body + len};
	struct pb_reader raw = {0};
	char api_version[API_VERSION_LEN] = "", kind[64] = "";
	while (r.p < r.end) {
		uint32_t num, wt;
		uint64_t iv;
		struct pb_reader sub = {0};
		if (!pb_field_next(&r, &num, &wt, &iv, &sub))
			return pb_bad(f, "truncated runtime.Unknown envelope");
		if (num == 1 && wt == 2) {
			while (sub.p < sub.end) {
				struct pb_reader s2 = {0};
				if (!pb_field_next(&sub, &num, &wt, &iv, &s2))
					return pb_bad(f, "truncated typeMeta");
				size_t n = (size_t)(s2.end - s2.p);
				char *dst = num == 1 ? api_version : num == 2 ? kind : NULL;
				if (dst && wt == 2 && n < 64) {
					if (k32_utf8_check((const char *)s2.p, n, NULL))
						return pb_bad(f,
							      "typeMeta apiVersion or kind is not "
							      "UTF-8 without NUL");
					memcpy(dst, s2.p, n);
					dst[n] = 0;
				}
			}
		} else if (num == 2 && wt == 2) {
			raw = sub;
		} else if (num == 3 && wt == 2 && sub.end > sub.p) {
			return pb_bad(f, "contentEncoding is not supported");
		}
	}
	const struct pb_field *fields = NULL;
	for (size_t i = 0; i < sizeof(pb_kinds) / sizeof(pb_kinds[0]); i++)
		if (!strcmp(pb_kinds[i].kind, kind))
			fields = pb_kinds[i].fields;
	if (!fields)
		return api_fail_set(
		    f, 415, "UnsupportedMediaType",
		    "protobuf body of kind \"%.60s\" is not supported by kube32 (Namespace, "
		    "ConfigMap, Secret, Service, Deployment, Job, CronJob, ServiceAccount, "
		    "TokenRequest, RBAC kinds, SelfSubjectAccessReview, SelfSubjectRulesReview, "
		    "SelfSubjectReview are); send application/json",
		    kind);
	cJSON *obj = cJSON_CreateObject();
	if (!obj)
		return api_fail_set(f, 500, "InternalError", "protobuf body: out of memory");
	cJSON_AddStringToObject(obj, "apiVersion", api_version);
	cJSON_AddStringToObject(obj, "kind", kind);
	k32_status_t st = raw.p ? pb_decode_msg(&raw, fields, obj, 0, f) : K32_OK;
	if (st) {
		cJSON_Delete(obj);
		return st;
	}
	*out = obj;
	return K32_OK;
}
