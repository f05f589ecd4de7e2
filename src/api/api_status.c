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

#include "base/k32_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Messages that did not fit their buffer since start (a sizing bug: the table test
 * api_msg_test and the API suites assert it stays 0). */
static atomic_size_t api_msg_cuts;

size_t api_fail_cut_count(void)
{
	return atomic_load(&api_msg_cuts);
}

/* After a vsnprintf of n bytes into buf[cap]: a message that did not fit ends with "..." so
 * the cut shows, and is counted and logged (its start names the path to fix). */
static void api_msg_fit(char *buf, size_t cap, int n)
{
	if (n >= 0 && (size_t)n < cap)
		return;
	atomic_fetch_add(&api_msg_cuts, 1);
	if (cap >= 4)
		memcpy(buf + cap - 4, "...", 4);
	K32_LOGW("api", "a message was cut at %zu of %d bytes (a sizing bug): %.60s", cap - 1, n,
		 buf);
}

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
	int n = vsnprintf(w->text[w->count - 1], K32_API_WARNING_LEN, fmt, ap);
	va_end(ap);
	api_msg_fit(w->text[w->count - 1], K32_API_WARNING_LEN, n);
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
	int n = vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	api_msg_fit(f->message, sizeof(f->message), n);
	return api_status_for_code(code);
}

static void api_fail_details(struct api_fail *f, const struct api_resource *res, const char *name)
{
	k32_clip_to(f->name, sizeof(f->name), name);
	snprintf(f->kind, sizeof(f->kind), "%s", res ? res->plural : "");
	snprintf(f->group, sizeof(f->group), "%s", res ? res->group : "");
}

k32_status_t api_fail_not_found(struct api_fail *f, const struct api_resource *res,
				const char *name)
{
	char q[API_QUALIFIED_LEN];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(f, 404, "NotFound", "%s \"%s\" not found", q, f->name);
}

k32_status_t api_fail_already_exists(struct api_fail *f, const struct api_resource *res,
				     const char *name)
{
	char q[API_QUALIFIED_LEN];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(f, 409, "AlreadyExists", "%s \"%s\" already exists", q, f->name);
}

k32_status_t api_fail_conflict(struct api_fail *f, const struct api_resource *res, const char *name)
{
	char q[API_QUALIFIED_LEN];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	return api_fail_set(
	    f, 409, "Conflict",
	    "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
	    "apply your changes to the latest version and try again",
	    q, f->name);
}

k32_status_t api_fail_forbidden(struct api_fail *f, const struct api_resource *res,
				const char *name, const char *why)
{
	char q[API_QUALIFIED_LEN];
	api_resource_qualified(res, q, sizeof(q));
	api_fail_details(f, res, name);
	/* the reason always whole: the resource and the name whole when they fit with it, else
	 * clipped (details.name keeps the name), else the name left to details.name */
	size_t fixed = strlen(why) + sizeof("\"\" is forbidden: ");
	size_t room = fixed < sizeof(f->message) ? sizeof(f->message) - fixed : 0;
	if (name && name[0] && strlen(q) + strlen(f->name) < room)
		return api_fail_set(f, 403, "Forbidden", "%s \"%s\" is forbidden: %s", q, f->name,
				    why);
	if (name && name[0] && strlen(q) + K32_MSG_CLIP_LEN < room)
		return api_fail_set(f, 403, "Forbidden", "%s \"%s\" is forbidden: %s", q,
				    K32_CLIP(f->name), why);
	if (name && name[0] && 2 * K32_MSG_CLIP_LEN < room)
		return api_fail_set(f, 403, "Forbidden", "%s \"%s\" is forbidden: %s", K32_CLIP(q),
				    K32_CLIP(f->name), why);
	if (strlen(q) + strlen("is forbidden: ") + strlen(why) >= sizeof(f->message))
		return api_fail_set(f, 403, "Forbidden", "%s is forbidden: %s", K32_CLIP(q), why);
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
	k32_clip_to(c->field, sizeof(c->field), field); /* a deep path keeps its ends */
	va_start(ap, fmt);
	int n = vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	api_msg_fit(c->message, sizeof(c->message), n);
}

/* Bytes "FIELD: MESSAGE" of cause i takes in the 422 message, with its separator. */
static size_t cause_len(const struct api_fail *f, size_t i)
{
	return (i ? 2 : 0) + strlen(f->causes[i].field) + 2 + strlen(f->causes[i].message);
}

k32_status_t api_fail_invalid(struct api_fail *f, const char *kind, const char *name)
{
	size_t n = f->cause_count < K32_API_MAX_CAUSES ? f->cause_count : K32_API_MAX_CAUSES;
	const size_t cap = sizeof(f->message);
	/* details.name whole (a legal name always fits it; a longer one is clipped in the
	 * middle); kubectl prints the causes from details.causes under it */
	k32_clip_to(f->name, sizeof(f->name), name);
	k32_clip_to(f->kind, sizeof(f->kind), kind);
	size_t all = strlen(f->kind) + strlen(f->name) + 16 + (n > 1 ? 2 : 0);
	for (size_t i = 0; i < n; i++)
		all += cause_len(f, i);
	/* the message keeps whole causes only: when they do not all fit, the name is clipped
	 * first, then the causes that do not fit are counted in a tail that says where they are */
	const char *shown_name = f->name;
	char clipped[K32_CLIP_BUF];
	if (all >= cap || f->cause_count > K32_API_MAX_CAUSES)
		shown_name = k32_clip(clipped, f->name);
	int off = snprintf(f->message, cap, "%s \"%s\" is invalid: %s", f->kind, shown_name,
			   n > 1 ? "[" : "");
	static const size_t tail_room =
	    sizeof(", and 99 more in details.causes, and 99999 more (K32_API_MAX_CAUSES=99)]");
	size_t shown = 0;
	for (; shown < n && off > 0; shown++) {
		size_t need = cause_len(f, shown);
		bool last = shown + 1 == n && f->cause_count <= K32_API_MAX_CAUSES;
		if ((size_t)off + need + (last ? 2 : tail_room) >= cap)
			break;
		off += snprintf(f->message + off, cap - (size_t)off, "%s%s: %s", shown ? ", " : "",
				f->causes[shown].field, f->causes[shown].message);
	}
	if (shown < n && off > 0 && (size_t)off < cap) /* kept causes the message has no room for */
		off += snprintf(f->message + off, cap - (size_t)off, "%s%zu more in details.causes",
				shown ? ", and " : "", n - shown);
	if (f->cause_count > K32_API_MAX_CAUSES && off > 0 && (size_t)off < cap)
		off += snprintf(f->message + off, cap - (size_t)off,
				", and %zu more (K32_API_MAX_CAUSES=%d)", f->cause_count - n,
				K32_API_MAX_CAUSES);
	if (n > 1 && off > 0 && (size_t)off < cap)
		off += snprintf(f->message + off, cap - (size_t)off, "]");
	api_msg_fit(f->message, cap, off);
	f->code = 422;
	f->reason = "Invalid";
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
