/*
 * api_query.c - the query parameters the API server understands, checked once per request.
 *
 * Every parameter a handler reads is listed here with its kind and the most bytes it may
 * have once decoded. api_query_check runs before any handler, so a value that is too long,
 * badly encoded or of the wrong kind is a 400 naming the parameter and its limit, never a
 * parameter silently taken as absent (a label selector dropped that way once turned
 * `kubectl delete -l <long selector>` into "delete everything"). api_q then refuses to read
 * a parameter into a buffer smaller than its limit, so the two cannot drift apart.
 * Parameters not listed are ignored, as kube-apiserver ignores parameters it does not know.
 */
#include <stdio.h>
#include <string.h>

#include "api/api_srv.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "store/store.h"

static const char *const dry_run_values[] = {"All", NULL};
static const char *const field_validation_values[] = {"Strict", "Warn", "Ignore", NULL};
static const char *const propagation_values[] = {"Orphan", "Background", "Foreground", NULL};
static const char *const rv_match_values[] = {"Exact", "NotOlderThan", NULL};

#define API_Q_SMALL K32_HTTP_QUERY_TYPED_MAX

/* clang-format off */
static const struct http_qspec api_query_specs[] = {
	{"labelSelector",        HTTP_Q_TEXT,   K32_API_SELECTOR_LEN - 1, "K32_API_SELECTOR_LEN - 1", NULL},
	{"fieldSelector",        HTTP_Q_TEXT,   K32_API_SELECTOR_LEN - 1, "K32_API_SELECTOR_LEN - 1", NULL},
	{"continue",             HTTP_Q_TEXT,   STORE_CONTINUE_LEN - 1, "STORE_CONTINUE_LEN - 1", NULL},
	{"limit",                HTTP_Q_UINT,   20, NULL, NULL},
	{"resourceVersion",      HTTP_Q_TEXT,   API_Q_SMALL, "K32_HTTP_QUERY_TYPED_MAX", NULL},
	{"resourceVersionMatch", HTTP_Q_CHOICE, API_Q_SMALL, NULL, rv_match_values},
	{"watch",                HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"allowWatchBookmarks",  HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"sendInitialEvents",    HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"timeoutSeconds",       HTTP_Q_UINT,   10, NULL, NULL},
	{"timeout",              HTTP_Q_TEXT,   API_Q_SMALL, "K32_HTTP_QUERY_TYPED_MAX", NULL},
	{"dryRun",               HTTP_Q_CHOICE, API_Q_SMALL, NULL, dry_run_values},
	{"fieldValidation",      HTTP_Q_CHOICE, API_Q_SMALL, NULL, field_validation_values},
	{"fieldManager",         HTTP_Q_TEXT,   API_FIELD_MANAGER_MAX, "API_FIELD_MANAGER_MAX", NULL},
	{"force",                HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"propagationPolicy",    HTTP_Q_CHOICE, API_Q_SMALL, NULL, propagation_values},
	{"gracePeriodSeconds",   HTTP_Q_UINT,   18, NULL, NULL},
	{"orphanDependents",     HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	/* pods/log (served with the control plane's help, src/cplane/cplane_logs.c) */
	{"container",            HTTP_Q_TEXT,   63, NULL, NULL},
	{"follow",               HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"previous",             HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"timestamps",           HTTP_Q_BOOL,   API_Q_SMALL, NULL, NULL},
	{"tailLines",            HTTP_Q_UINT,   18, NULL, NULL},
	{"limitBytes",           HTTP_Q_UINT,   18, NULL, NULL},
	{"sinceSeconds",         HTTP_Q_UINT,   18, NULL, NULL},
	{"sinceTime",            HTTP_Q_TEXT,   API_Q_SMALL, "K32_HTTP_QUERY_TYPED_MAX", NULL},
	{"insecureSkipTLSVerifyBackend", HTTP_Q_BOOL, API_Q_SMALL, NULL, NULL},
	/* /healthz, /livez, /readyz (api_health.c): "?verbose" has no value */
	{"verbose",              HTTP_Q_TEXT,   API_Q_SMALL, "K32_HTTP_QUERY_TYPED_MAX", NULL},
};
/* clang-format on */

#define API_QUERY_SPEC_COUNT (sizeof(api_query_specs) / sizeof(api_query_specs[0]))

k32_status_t api_query_check(const struct api_req *rq, struct api_fail *f)
{
	struct http_qfault fault;
	if (http_query_check(rq->query, api_query_specs, API_QUERY_SPEC_COUNT, &fault) == K32_OK)
		return K32_OK;
	char msg[sizeof(f->message)];
	http_qfault_message(&fault, msg, sizeof(msg));
	return api_fail_set(f, 400, "BadRequest", "%s", msg);
}

bool api_q(const struct api_req *rq, const char *name, char *buf, size_t cap)
{
	const struct http_qspec *spec =
	    http_qspec_find(api_query_specs, API_QUERY_SPEC_COUNT, name);
	if (!spec || cap <= spec->max_len) {
		/* A handler reading a parameter that is not listed, or into a buffer smaller than
		 * the checked limit, would turn a valid value into "absent": refuse loudly. */
		k32_log(K32_LOG_ERROR, "api",
			"api_q(%s): %s (cap %zu); list it in api_query.c with its limit", name,
			spec ? "buffer smaller than the parameter's limit" : "parameter not listed",
			cap);
		buf[0] = 0;
		return false;
	}
	return http_query_get(rq->query, name, buf, cap, NULL) == K32_OK;
}

bool api_q_bool(const struct api_req *rq, const char *name, bool dflt)
{
	char v[API_Q_SMALL + 1];
	if (!api_q(rq, name, v, sizeof(v)))
		return dflt;
	/* Go's strconv.ParseBool (the value was checked on entry); a parameter given without a
	 * value counts as true, as Kubernetes' query conversion takes it */
	if (!v[0] || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "T") || !strcmp(v, "true") ||
	    !strcmp(v, "TRUE") || !strcmp(v, "True"))
		return true;
	return false;
}
