/*
 * api_status.c - Kubernetes Status errors, and small JSON/time helpers.
 *
 * struct api_fail is filled on every error path of the API layer; the router turns it into
 * the Status body kubectl prints as `Error from server (<reason>): <message>`. Message forms
 * follow upstream (kubectl-api.md section 23) so scripts that grep them keep working.
 * Never allocates except in api_fail_to_json / api_json_append. Any thread.
 */
#include "api/api_int.h"
#include "kmeta/kmeta.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void api_fail_clear(struct api_fail *f)
{
	memset(f, 0, sizeof(*f));
}

void api_warn(struct api_warnings *w, const char *fmt, ...)
{
	va_list ap;
	if (!w)
		return;
	w->count++;
	if (w->count > K32_API_MAX_WARNINGS) {
		snprintf(w->text[K32_API_MAX_WARNINGS - 1], K32_API_WARNING_LEN,
			 "%zu more warnings (K32_API_MAX_WARNINGS is %d); send "
			 "fieldValidation=Strict to see the first one as an error",
			 w->count - K32_API_MAX_WARNINGS + 1, K32_API_MAX_WARNINGS);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(w->text[w->count - 1], K32_API_WARNING_LEN, fmt, ap);
	va_end(ap);
}

k32_status_t api_status_for_code(int code)
{
	switch (code) {
	case 0:
	case 200:
	case 201:
		return K32_OK;
	case 404:
		return K32_ERR_NOT_FOUND;
	case 409:
		return K32_ERR_CONFLICT;
	case 403:
	case 401:
		return K32_ERR_ACCESS_DENIED;
	case 410:
		return K32_ERR_COMPACTED;
	case 413:
	case 429:
		return K32_ERR_NO_RESOURCES;
	case 405:
	case 415:
		return K32_ERR_NOT_SUPPORTED;
	case 500:
		return K32_ERR_INTERNAL;
	default:
		return K32_ERR_INVALID_ARGS;
	}
}

k32_status_t api_fail_set(struct api_fail *f, int code, const char *reason, const char *fmt, ...)
{
	va_list ap;
	f->code = code;
	f->reason = reason;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	return api_status_for_code(code);
}

static void api_fail_details(struct api_fail *f, const struct api_resource *res, const char *name)
{
	snprintf(f->name, sizeof(f->name), "%s", name ? name : "");
	snprintf(f->kind, sizeof(f->kind), "%s", res ? res->plural : "");
	snprintf(f->group, sizeof(f->group), "%s", res ? res->group : "");
}

k32_status_t api_fail_not_found(struct api_fail *f, const struct api_resource *res,
				const char *name)
{
	char q[96];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(f, 404, "NotFound", "%s \"%s\" not found", q, name);
}

k32_status_t api_fail_already_exists(struct api_fail *f, const struct api_resource *res,
				     const char *name)
{
	char q[96];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(f, 409, "AlreadyExists", "%s \"%s\" already exists", q, name);
}

k32_status_t api_fail_conflict(struct api_fail *f, const struct api_resource *res, const char *name)
{
	char q[96];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(
	    f, 409, "Conflict",
	    "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
	    "apply your changes to the latest version and try again",
	    q, name);
}

k32_status_t api_fail_forbidden(struct api_fail *f, const struct api_resource *res,
				const char *name, const char *why)
{
	char q[96];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	if (name && name[0])
		return api_fail_set(f, 403, "Forbidden", "%s \"%s\" is forbidden: %s", q, name,
				    why);
	return api_fail_set(f, 403, "Forbidden", "%s is forbidden: %s", q, why);
}

void api_fail_add_cause(struct api_fail *f, const char *reason, const char *field, const char *fmt,
			...)
{
	if (f->cause_count >= K32_API_MAX_CAUSES) {
		f->cause_count++; /* counted so the message can say how many were dropped */
		return;
	}
	struct api_cause *c = &f->causes[f->cause_count++];
	va_list ap;
	snprintf(c->reason, sizeof(c->reason), "%s", reason);
	snprintf(c->field, sizeof(c->field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

k32_status_t api_fail_invalid(struct api_fail *f, const char *kind, const char *name)
{
	size_t n = f->cause_count < K32_API_MAX_CAUSES ? f->cause_count : K32_API_MAX_CAUSES;
	int off = snprintf(f->message, sizeof(f->message), "%s \"%s\" is invalid: ", kind,
			   name && name[0] ? name : "");
	if (n > 1 && off > 0 && (size_t)off < sizeof(f->message))
		off += snprintf(f->message + off, sizeof(f->message) - (size_t)off, "[");
	for (size_t i = 0; i < n && off > 0 && (size_t)off < sizeof(f->message); i++)
		off += snprintf(f->message + off, sizeof(f->message) - (size_t)off, "%s%s: %s",
				i ? ", " : "", f->causes[i].field, f->causes[i].message);
	if (f->cause_count > K32_API_MAX_CAUSES && off > 0 && (size_t)off < sizeof(f->message))
		off += snprintf(f->message + off, sizeof(f->message) - (size_t)off,
				", and %zu more (K32_API_MAX_CAUSES=%d)",
				f->cause_count - K32_API_MAX_CAUSES, K32_API_MAX_CAUSES);
	if (n > 1 && off > 0 && (size_t)off < sizeof(f->message))
		snprintf(f->message + off, sizeof(f->message) - (size_t)off, "]");
	f->code = 422;
	f->reason = "Invalid";
	snprintf(f->name, sizeof(f->name), "%s", name ? name : "");
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	return K32_ERR_INVALID_ARGS;
}

cJSON *api_fail_to_json(const struct api_fail *f)
{
	cJSON *st = cJSON_CreateObject();
	if (!st)
		return NULL;
	cJSON_AddStringToObject(st, "kind", "Status");
	cJSON_AddStringToObject(st, "apiVersion", "v1");
	api_json_put(st, "metadata", cJSON_CreateObject());
	cJSON_AddStringToObject(st, "status", "Failure");
	cJSON_AddStringToObject(st, "message", f->message);
	cJSON_AddStringToObject(st, "reason", f->reason ? f->reason : "InternalError");
	/* a 404 always has details, as kube-apiserver's do (kubectl debug dereferences them) */
	if (f->name[0] || f->kind[0] || f->cause_count || f->retry_after_s || f->code == 404) {
		cJSON *d = cJSON_AddObjectToObject(st, "details");
		if (d && f->name[0])
			cJSON_AddStringToObject(d, "name", f->name);
		if (d && f->group[0])
			cJSON_AddStringToObject(d, "group", f->group);
		if (d && f->kind[0])
			cJSON_AddStringToObject(d, "kind", f->kind);
		if (d && f->retry_after_s)
			cJSON_AddNumberToObject(d, "retryAfterSeconds", f->retry_after_s);
		size_t n =
		    f->cause_count < K32_API_MAX_CAUSES ? f->cause_count : K32_API_MAX_CAUSES;
		cJSON *arr = n && d ? cJSON_AddArrayToObject(d, "causes") : NULL;
		for (size_t i = 0; arr && i < n; i++) {
			cJSON *c = cJSON_CreateObject();
			if (!c)
				break;
			cJSON_AddStringToObject(c, "reason", f->causes[i].reason);
			cJSON_AddStringToObject(c, "message", f->causes[i].message);
			cJSON_AddStringToObject(c, "field", f->causes[i].field);
			cJSON_AddItemToArray(arr, c);
		}
	}
	cJSON_AddNumberToObject(st, "code", f->code ? f->code : 500);
	return st;
}

bool api_json_put(cJSON *o, const char *k, cJSON *v)
{
	if (o && v && cJSON_AddItemToObject(o, k, v))
		return true;
	cJSON_Delete(v);
	return false;
}

k32_status_t api_json_append(struct k32_buf *buf, const cJSON *item, struct k32_err *err)
{
	char *s = cJSON_PrintUnformatted(item);
	if (!s)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api",
				   "serialising a response: out of memory; retry later");
	k32_status_t st = k32_buf_append_str(buf, s, err);
	cJSON_free(s);
	return st;
}

/* RFC 3339 in and out: kmeta's one implementation (these names stay for api's callers). */
void api_format_time(uint64_t wall_s, char *buf, size_t cap)
{
	char t[KMETA_RFC3339_LEN];
	kmeta_rfc3339(wall_s, t);
	snprintf(buf, cap, "%s", t);
}

bool api_parse_time(const char *s, uint64_t *out_wall_s)
{
	return kmeta_rfc3339_parse(s, out_wall_s);
}

void api_format_age(uint64_t now_s, uint64_t then_s, char *buf, size_t cap)
{
	uint64_t s = now_s > then_s ? now_s - then_s : 0;
	if (s < 120)
		snprintf(buf, cap, "%llus", (unsigned long long)s);
	else if (s < 600)
		snprintf(buf, cap, "%llum%llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 3 * 3600)
		snprintf(buf, cap, "%llum", (unsigned long long)(s / 60));
	else if (s < 8 * 3600 && s % 3600 / 60)
		snprintf(buf, cap, "%lluh%llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else if (s < 48 * 3600)
		snprintf(buf, cap, "%lluh", (unsigned long long)(s / 3600));
	else if (s < 8 * 86400 && s % 86400 / 3600)
		snprintf(buf, cap, "%llud%lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	else
		snprintf(buf, cap, "%llud", (unsigned long long)(s / 86400));
}
