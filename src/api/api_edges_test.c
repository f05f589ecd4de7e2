/*
 * api_edges_test.c - the API server at its edges (issue 12): hostile strings in bodies,
 * field validation (Strict / Warn / Ignore), DELETE preconditions under concurrent writes,
 * NodeRestriction of labels and capacity, impersonation, health checks and the tokens file.
 * Each table case is a request and the answer it must get; the API runs over a memory store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "http/http.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct http_server *srv; /* plain HTTP on 127.0.0.1, port 0, with bearer tokens */
	uint16_t port;
	char dir[64];		       /* data dir: the tokens file */
	char admin[API_TOKEN_LEN + 1]; /* the admin's token */
	struct k32_buf out;
};

static int fx_setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/k32-apiedges-XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	struct store_config sc = {.data_dir = NULL, .history_events = 64};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true, .data_dir = fx.dir};
	if (api_server_new(&ac, &fx.api, &err))
		fail_msg("api_server_new: %s", err.msg);
	snprintf(fx.admin, sizeof(fx.admin), "%s", api_server_admin_token(fx.api));
	struct http_server_config hc;
	http_server_config_init(&hc);
	hc.handler = api_http_handler;
	hc.authenticate = api_http_authenticate;
	hc.ctx = fx.api;
	assert_int_equal(http_server_start(&hc, &fx.srv, &err), K32_OK);
	api_server_attach_http(fx.api, fx.srv);
	fx.port = http_server_port(fx.srv);
	k32_buf_init(&fx.out, k32_default_allocator(), 1 << 20, "test response");
	*state = &fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	char path[96];
	http_server_stop(fx->srv);
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	snprintf(path, sizeof(path), "%s/tokens", fx->dir);
	unlink(path);
	rmdir(fx->dir);
	return 0;
}

/* One request over HTTP with token (NULL: none) and extra header lines (may be NULL); the
 * answer's body goes to fx->out and its header block to hdrs (cap bytes, may be NULL). */
static int hreq(struct fx *fx, const char *token, const char *method, const char *target,
		const char *ctype, const char *body, const char *extra, char *hdrs, size_t cap)
{
	struct http_client_config cc;
	struct http_client *c = NULL;
	struct http_client_response r;
	struct k32_err err;
	http_client_config_init(&cc);
	cc.port = fx->port;
	cc.bearer_token = token;
	assert_int_equal(http_client_new(&cc, &c, &err), K32_OK);
	struct http_client_request rq = {.method = method,
					 .target = target,
					 .content_type = ctype,
					 .headers = extra,
					 .body = body,
					 .body_len = body ? strlen(body) : 0,
					 .timeout_us = 5000000};
	if (http_client_do(c, &rq, &r, &err))
		fail_msg("%s %s: %s", method, target, err.msg);
	k32_buf_reset(&fx->out);
	k32_buf_append(&fx->out, r.body.data, r.body.len, NULL);
	if (hdrs)
		snprintf(hdrs, cap, "%.*s", (int)r.headers.len, (const char *)r.headers.data);
	int status = r.status;
	http_client_response_fini(&r);
	http_client_free(c);
	return status;
}

/* Runs one request (body of len bytes; 0: strlen) as token (NULL: admin); returns the code. */
static int reqn(struct fx *fx, const char *token, const char *method, const char *target,
		const char *ctype, const void *body, size_t len)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&fx->out);
	if (body && !len)
		len = strlen(body);
	assert_int_equal(
	    api_do_as(fx->api, token, method, target, ctype, body, len, &code, &fx->out, &err),
	    K32_OK);
	return code;
}

static int req(struct fx *fx, const char *method, const char *target, const char *body)
{
	const char *ct = NULL;
	if (!strcmp(method, "PATCH"))
		ct = "application/merge-patch+json";
	else if (body)
		ct = "application/json";
	return reqn(fx, NULL, method, target, ct, body, 0);
}

static bool out_has(struct fx *fx, const char *part)
{
	return part && strstr(k32_buf_cstr(&fx->out), part) != NULL;
}

#define EXPECT(fx, want, call)                                                                     \
	do {                                                                                       \
		int code_ = (call);                                                                \
		if (code_ != (want))                                                               \
			fail_msg("%s: HTTP %d, want %d: %s", #call, code_, want,                   \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

/* ---- strings: NUL and invalid UTF-8 ---------------------------------------------------- */

/* A ConfigMap "pb" {data: {b: "t\0o"}} as kubectl's protobuf client would send it. */
static const uint8_t pb_cm_nul[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 'v',  '1',	0x12, 0x09, 'C',  'o',
    'n',  'f',	'i',  'g',  'M',  'a',	'p',  0x12, 0x2b, 0x0a, 0x17, 0x0a, 0x03, 'c',
    'f',  'g',	0x12, 0x00, 0x1a, 0x04, 'd',  'e',  'm',  'o',	0x22, 0x00, 0x2a, 0x00,
    0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, 'a',  0x12, 0x01, '1',
    0x12, 0x08, 0x0a, 0x01, 'b',  0x12, 0x03, 't',  0x00, 'o',	0x1a, 0x00, 0x22, 0x00,
};

static void test_strings(void **state)
{
	struct fx *fx = *state;
	static const struct {
		const char *method, *target, *body;
		int want;
		const char *part; /* in the answer */
	} cases[] = {
	    /* the name "s\u0000zz" was stored as "s" */
	    {"POST", "/api/v1/namespaces/default/configmaps",
	     "{\"metadata\":{\"name\":\"s\\u0000zz\"}}", 400, "\"field\":\"metadata.name\""},
	    /* a Secret's stringData was cut at the NUL */
	    {"POST", "/api/v1/namespaces/default/secrets",
	     "{\"metadata\":{\"name\":\"sec\"},\"stringData\":{\"pw\":\"ab\\u0000cd\"}}", 400,
	     "stringData.pw: the string holds a NUL character"},
	    /* bytes that are not UTF-8 were stored and served back */
	    {"POST", "/api/v1/namespaces/default/configmaps",
	     "{\"metadata\":{\"name\":\"u\"},\"data\":{\"k\":\"caf\xe9\"}}", 400,
	     "data.k: the string holds invalid UTF-8"},
	    {"POST", "/api/v1/namespaces/default/configmaps",
	     "{\"metadata\":{\"name\":\"u\",\"labels\":{\"a\xc0\xaf\":\"x\"}}}", 400,
	     "a key of metadata.labels"},
	    /* an existing object: PUT and PATCH are checked the same way */
	    {"POST", "/api/v1/namespaces/default/configmaps",
	     "{\"metadata\":{\"name\":\"ok\"},\"data\":{\"k\":\"gr\xc3\xbc\xc3\x9f\"}}", 201,
	     "gr\xc3\xbc\xc3\x9f"},
	    {"PUT", "/api/v1/namespaces/default/configmaps/ok",
	     "{\"metadata\":{\"name\":\"ok\"},\"data\":{\"k\":\"a\\u0000\"}}", 400,
	     "\"field\":\"data.k\""},
	    {"PATCH", "/api/v1/namespaces/default/configmaps/ok", "{\"data\":{\"k\":\"\xff\"}}",
	     400, "\"field\":\"data.k\""},
	    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	     "{\"spec\":{\"resourceAttributes\":{\"verb\":\"get\\u0000x\"}}}", 400,
	     "spec.resourceAttributes.verb"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = req(fx, cases[i].method, cases[i].target, cases[i].body);
		if (code != cases[i].want || !out_has(fx, cases[i].part))
			fail_msg("case %zu: HTTP %d (want %d, with '%s'): %s", i, code,
				 cases[i].want, cases[i].part, k32_buf_cstr(&fx->out));
	}
	/* nothing of the refused writes was stored */
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/default/configmaps/s", NULL));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/default/secrets/sec", NULL));
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/configmaps/ok", NULL));
	assert_true(out_has(fx, "gr\xc3\xbc\xc3\x9f"));
	/* protobuf bodies too */
	EXPECT(fx, 201,
	       req(fx, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"demo\"}}"));
	EXPECT(fx, 400,
	       reqn(fx, NULL, "POST", "/api/v1/namespaces/demo/configmaps",
		    "application/vnd.kubernetes.protobuf", pb_cm_nul, sizeof(pb_cm_nul)));
	assert_true(out_has(fx, "field data holds a NUL character"));
	EXPECT(fx, 404, req(fx, "GET", "/api/v1/namespaces/demo/configmaps/cfg", NULL));
}

/* ---- fieldValidation ------------------------------------------------------------------- */

static const char deploy[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},"
    "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":"
    "{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":"
    "\"hello.wasm\"}]}}}}";

static void test_field_validation(void **state)
{
	struct fx *fx = *state;
	static const char dp[] = "/apis/apps/v1/namespaces/default/deployments";
	static const char web[] = "/apis/apps/v1/namespaces/default/deployments/web";
	static const char put_body[] =
	    "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"bogus\":3,\"selector\":{\"matchLabels\":"
	    "{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"hello.wasm\"}]}}}}";
	static const struct {
		const char *method, *target, *ctype, *body;
		int want;
		const char *warning; /* the Warning header wanted ("" none) */
		const char *part;    /* in the answer ("" any) */
	} cases[] = {
	    /* absent = Warn: created, the field dropped, a Warning header */
	    {"POST", "/api/v1/namespaces/default/configmaps", "application/json",
	     "{\"metadata\":{\"name\":\"c1\"},\"bogus\":1,\"data\":{\"k\":\"v\"}}", 201,
	     "Warning: 299 - \"unknown field \\\"bogus\\\"\"", ""},
	    {"POST", dp, "application/json", deploy, 201, "", ""},
	    /* the case: a patch without fieldValidation stored spec.bogus */
	    {"PATCH", web, "application/merge-patch+json", "{\"spec\":{\"bogus\":1}}", 200,
	     "Warning: 299 - \"unknown field \\\"spec.bogus\\\"\"", ""},
	    {"PATCH", web, "application/strategic-merge-patch+json",
	     "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"m\",\"imag\":\"x\"}]}}"
	     "}}",
	     200, "unknown field \\\"spec.template.spec.containers[0].imag\\\"", ""},
	    {"PATCH", web, "application/json-patch+json",
	     "[{\"op\":\"add\",\"path\":\"/spec/bogus\",\"value\":2}]", 200,
	     "unknown field \\\"spec.bogus\\\"", ""},
	    {"PUT", web, "application/json", put_body, 200, "unknown field \\\"spec.bogus\\\"", ""},
	    /* Ignore: dropped silently */
	    {"PATCH", "/apis/apps/v1/namespaces/default/deployments/web?fieldValidation=Ignore",
	     "application/merge-patch+json", "{\"spec\":{\"bogus\":1}}", 200, "", ""},
	    /* Strict: refused */
	    {"PATCH", "/apis/apps/v1/namespaces/default/deployments/web?fieldValidation=Strict",
	     "application/merge-patch+json", "{\"spec\":{\"bogus\":1}}", 400, "",
	     "strict decoding error: unknown field \\\"spec.bogus\\\""},
	    {"PUT", "/apis/apps/v1/namespaces/default/deployments/web?fieldValidation=Strict",
	     "application/json", put_body, 400, "", "unknown field \\\"spec.bogus\\\""},
	    /* duplicates warn too */
	    {"POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn",
	     "application/json",
	     "{\"metadata\":{\"name\":\"c2\"},\"data\":{\"k\":\"1\",\"k\":\"2\"}}", 201,
	     "Warning: 299 - \"duplicate field \\\"data.k\\\"\"", "\"k\":\"2\""},
	};
	char hdrs[2048];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = hreq(fx, fx->admin, cases[i].method, cases[i].target, cases[i].ctype,
				cases[i].body, NULL, hdrs, sizeof(hdrs));
		bool warned = strstr(hdrs, "Warning:") != NULL;
		if (code != cases[i].want || !out_has(fx, cases[i].part) ||
		    (cases[i].warning[0] ? !strstr(hdrs, cases[i].warning) : warned))
			fail_msg("case %zu: HTTP %d (want %d, warning '%s', body with '%s'):\n%s%s",
				 i, code, cases[i].want, cases[i].warning, cases[i].part, hdrs,
				 k32_buf_cstr(&fx->out));
		/* nothing unknown was stored, so kubectl edit's strict decoding works */
		if (i == 0)
			continue; /* web is created by case 1 */
		EXPECT(fx, 200, req(fx, "GET", web, NULL));
		assert_false(out_has(fx, "bogus"));
		assert_false(out_has(fx, "imag\""));
	}
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/configmaps/c1", NULL));
	assert_false(out_has(fx, "bogus"));
	assert_true(out_has(fx, "\"data\":{\"k\":\"v\"}"));
}

/* ---- DELETE under a concurrent writer -------------------------------------------------- */

/* Interposed wall clock: when armed, the first reading of it (api_mark_deleting asks for
 * the deletionTimestamp after reading the pod and before writing it) first writes the pod's
 * status the way its kubelet would, so the delete's write meets a newer version. */
static struct {
	const struct k32_platform_ops *real;
	struct k32_platform_ops ops;
	struct fx *fx;
	bool armed;
	int races; /* writes done from the hook */
} race;

static uint64_t race_wall_s(void)
{
	if (race.armed) {
		char body[96];
		struct k32_err err;
		int code = 0;
		race.armed = false;
		snprintf(body, sizeof(body), "{\"status\":{\"message\":\"tick %d\"}}", race.races);
		k32_buf_reset(&race.fx->out);
		if (api_do(race.fx->api, "PATCH", "/api/v1/namespaces/default/pods/p/status",
			   "application/merge-patch+json", body, strlen(body), &code, &race.fx->out,
			   &err) == K32_OK &&
		    code == 200)
			race.races++;
	}
	return race.real->wall_s();
}

static void test_delete_conflict(void **state)
{
	struct fx *fx = *state;
	static const char pod[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\","
				  "\"containers\":[{\"name\":"
				  "\"m\",\"image\":\"hello.wasm\"}]}}";
	char body[160];
	race.real = k32_plat();
	race.ops = *race.real;
	race.ops.wall_s = race_wall_s;
	race.fx = fx;
	k32_plat_set_ops(&race.ops);

	/* no precondition: the store's conflict is retried, the pod is marked deleted */
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/default/pods", pod));
	race.armed = true;
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/default/pods/p", NULL));
	assert_int_equal(race.races, 1);
	assert_true(out_has(fx, "\"deletionTimestamp\""));
	assert_true(out_has(fx, "tick 0")); /* the retry read the kubelet's write */

	/* a uid precondition still holds after the concurrent write: retried, 200 */
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0", NULL));
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/default/pods", pod));
	cJSON *j = cJSON_Parse(k32_buf_cstr(&fx->out));
	char uid[64], rv[32];
	snprintf(uid, sizeof(uid), "%s", cJSON_GetStringValue(k32_json_find(j, "metadata.uid")));
	snprintf(rv, sizeof(rv), "%s",
		 cJSON_GetStringValue(k32_json_find(j, "metadata.resourceVersion")));
	cJSON_Delete(j);
	snprintf(body, sizeof(body), "{\"preconditions\":{\"uid\":\"%s\"}}", uid);
	race.armed = true;
	EXPECT(fx, 200, req(fx, "DELETE", "/api/v1/namespaces/default/pods/p", body));
	assert_int_equal(race.races, 2);

	/* a resourceVersion precondition the concurrent write made stale: 409 for the client */
	EXPECT(fx, 200,
	       req(fx, "DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0", NULL));
	EXPECT(fx, 201, req(fx, "POST", "/api/v1/namespaces/default/pods", pod));
	j = cJSON_Parse(k32_buf_cstr(&fx->out));
	snprintf(rv, sizeof(rv), "%s",
		 cJSON_GetStringValue(k32_json_find(j, "metadata.resourceVersion")));
	cJSON_Delete(j);
	snprintf(body, sizeof(body), "{\"preconditions\":{\"resourceVersion\":\"%s\"}}", rv);
	race.armed = true;
	EXPECT(fx, 409, req(fx, "DELETE", "/api/v1/namespaces/default/pods/p", body));
	assert_true(out_has(fx, "Precondition failed"));
	assert_int_equal(race.races, 3);
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/pods/p", NULL));
	assert_false(out_has(fx, "deletionTimestamp"));
	k32_plat_set_ops(race.real);
}

/* ---- health checks --------------------------------------------------------------------- */

/* A disk that is full while disk_full is set: appends fail as write(2) does with ENOSPC. */
static struct {
	const struct k32_platform_ops *real;
	struct k32_platform_ops ops;
	bool disk_full;
} disk;

static k32_status_t full_append(struct k32_file *f, const void *data, size_t len,
				struct k32_err *err)
{
	if (disk.disk_full)
		return k32_err_set(err, K32_ERR_IO, "test",
				   "appending %zu bytes: No space left on device", len);
	return disk.real->file_append(f, data, len, err);
}

static void test_health(void **state)
{
	struct fx *fx = *state;
	static const struct {
		const char *target;
		const char *token; /* "admin" for the admin's, NULL for none */
		int want;
		const char *body; /* exact answer ("" any) */
	} cases[] = {
	    /* anonymous clients get the health checks (kube-apiserver serves them) ... */
	    {"/healthz", NULL, 200, "ok"},
	    {"/livez", NULL, 200, "ok"},
	    {"/readyz", NULL, 200, "ok"},
	    {"/readyz?verbose", NULL, 200,
	     "[+]ping ok\n[+]store-writable ok\nreadyz check passed\n"},
	    {"/livez?verbose=1", NULL, 200, "[+]ping ok\nlivez check passed\n"},
	    {"/readyz/store-writable", NULL, 200, "ok"},
	    {"/livez/store-writable", NULL, 404, ""},
	    {"/healthz/ping?verbose", "admin", 200, "[+]ping ok\nhealthz check passed\n"},
	    /* ... and nothing else */
	    {"/api/v1/namespaces", NULL, 401, ""},
	    {"/healthzz", NULL, 401, ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = hreq(fx, cases[i].token ? fx->admin : NULL, "GET", cases[i].target, NULL,
				NULL, NULL, NULL, 0);
		if (code != cases[i].want ||
		    (cases[i].body[0] && strcmp(k32_buf_cstr(&fx->out), cases[i].body)))
			fail_msg("case %zu %s: HTTP %d (want %d '%s'): '%s'", i, cases[i].target,
				 code, cases[i].want, cases[i].body, k32_buf_cstr(&fx->out));
	}

	/* a store on a disk that fills up: /readyz fails while writes fail */
	char dir[96];
	struct store *st = NULL;
	struct api_server *api = NULL;
	struct k32_err err;
	struct k32_buf out;
	int code = 0;
	snprintf(dir, sizeof(dir), "%s/store", fx->dir);
	struct store_config sc = {.data_dir = dir};
	assert_int_equal(store_open(&sc, &st, &err), K32_OK);
	struct api_config ac = {.store = st, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &api, &err), K32_OK);
	k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "test response");
	disk.real = k32_plat();
	disk.ops = *disk.real;
	disk.ops.file_append = full_append;
	k32_plat_set_ops(&disk.ops);
	static const char cm[] = "{\"metadata\":{\"name\":\"c\"}}";
	assert_int_equal(api_do(api, "GET", "/readyz", NULL, NULL, 0, &code, &out, &err), K32_OK);
	assert_int_equal(code, 200);
	disk.disk_full = true;
	assert_int_equal(api_do(api, "POST", "/api/v1/namespaces/default/configmaps",
				"application/json", cm, strlen(cm), &code, &out, &err),
			 K32_OK);
	assert_int_equal(code, 500);
	assert_int_equal(api_do(api, "GET", "/readyz", NULL, NULL, 0, &code, &out, &err), K32_OK);
	assert_int_equal(code, 500);
	if (!strstr(k32_buf_cstr(&out), "[-]store-writable failed: ") ||
	    !strstr(k32_buf_cstr(&out), "No space left on device") ||
	    !strstr(k32_buf_cstr(&out), "readyz check failed"))
		fail_msg("readyz: %s", k32_buf_cstr(&out));
	assert_int_equal(api_do(api, "GET", "/healthz", NULL, NULL, 0, &code, &out, &err), K32_OK);
	assert_int_equal(code, 500);
	assert_int_equal(api_do(api, "GET", "/livez", NULL, NULL, 0, &code, &out, &err), K32_OK);
	assert_int_equal(code, 200); /* a full disk is no reason to restart the server */
	/* space again: the check's probe write succeeds and /readyz passes by itself */
	disk.disk_full = false;
	assert_int_equal(api_do(api, "GET", "/readyz?verbose", NULL, NULL, 0, &code, &out, &err),
			 K32_OK);
	if (code != 200)
		fail_msg("readyz after the disk has room: %d %s", code, k32_buf_cstr(&out));
	assert_int_equal(api_do(api, "POST", "/api/v1/namespaces/default/configmaps",
				"application/json", cm, strlen(cm), &code, &out, &err),
			 K32_OK);
	assert_int_equal(code, 201);
	k32_plat_set_ops(disk.real);
	k32_buf_fini(&out);
	api_server_free(api);
	store_close(st);
	char rm[160];
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	assert_int_equal(system(rm), 0);
}

/* ---- the tokens file ------------------------------------------------------------------- */

static void test_tokens_file(void **state)
{
	struct fx *fx = *state;
	static const struct {
		const char *text;
		const char *error; /* part of the startup error, NULL: starts */
	} cases[] = {
	    {"", "holds no identity (empty or only comments); add a line"},
	    {"# kube32 static tokens\n\n", "holds no identity"},
	    {"t1,system:node:n1,n1,\"system:nodes\"\n", "no identity is in group system:masters"},
	    {"t1,,x,\"system:masters\"\n", "line 1: expected token,user,uid"},
	    {"t 1,admin,admin,\"system:masters\"\n", "line 1: expected"},
	    {"t1,admin,admin,\"system:masters\"\nt1,bob,bob,\"\"\n",
	     "line 2: the token of user bob"},
	    {"t1,admin,admin,\"system:masters\"\r\n", NULL},
	    {"# c\nt1,admin,admin,\"system:masters\"\nt2,system:node:n1,n1,\"system:nodes\"\n",
	     NULL},
	};
	char dir[96], path[128];
	snprintf(dir, sizeof(dir), "%s/tk", fx->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/tokens", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(cases[i].text, f);
		fclose(f);
		struct api_config ac = {.store = fx->store, .data_dir = dir};
		struct api_server *api = NULL;
		struct k32_err err;
		k32_err_clear(&err);
		k32_status_t st = api_server_new(&ac, &api, &err);
		if (!cases[i].error) {
			if (st)
				fail_msg("case %zu: %s", i, err.msg);
			assert_string_equal(api_server_admin_token(api), "t1");
			api_server_free(api);
		} else if (st == K32_OK || !strstr(err.msg, cases[i].error)) {
			fail_msg("case %zu: %s, message '%s' (want '%s')", i, k32_status_name(st),
				 err.msg, cases[i].error);
		}
	}
	unlink(path);
	rmdir(dir);
}

/* ---- NodeRestriction: labels and capacity ---------------------------------------------- */

static void test_node_restriction(void **state)
{
	struct fx *fx = *state;
	char tok[API_TOKEN_LEN + 1];
	struct k32_err err;
	assert_int_equal(api_server_node_token(fx->api, "n1", tok, sizeof(tok), &err), K32_OK);
	static const char n1[] = "/api/v1/nodes/n1";
	static const char st[] = "/api/v1/nodes/n1/status";
	static const char mp[] = "application/merge-patch+json";
	static const struct {
		bool admin; /* as the admin, else as node n1 */
		const char *method, *target, *body;
		int want;
		const char *part;
	} cases[] = {
	    /* registering: a restricted label at creation is refused, the board label is fine */
	    {false, "POST", "/api/v1/nodes",
	     "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"node-role.kubernetes.io/control-plane\":"
	     "\"\"}}}",
	     403, "node-role.kubernetes.io/"},
	    {false, "POST", "/api/v1/nodes",
	     "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kube32.io/board\":\"cardputer\"}},"
	     "\"status\":{\"capacity\":{\"cpu\":\"1\",\"memory\":\"81920\",\"pods\":\"8\"},"
	     "\"allocatable\":{\"cpu\":\"1\",\"memory\":\"80Ki\",\"pods\":\"8\"}}}",
	     201, ""},
	    /* the cases */
	    {false, "PATCH", n1,
	     "{\"metadata\":{\"labels\":{\"node-restriction.kubernetes.io/pool\":\"a\"}}}", 403,
	     "node-restriction.kubernetes.io/"},
	    {false, "PATCH", n1,
	     "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/master\":\"\"}}}", 403,
	     "NodeRestriction"},
	    {false, "PATCH", st, "{\"status\":{\"allocatable\":{\"memory\":\"64Mi\"}}}", 403,
	     "may not raise status.allocatable.memory from 80Ki to 64Mi"},
	    {false, "PATCH", st, "{\"status\":{\"capacity\":{\"pods\":\"9\"}}}", 403,
	     "status.capacity.pods"},
	    {false, "PATCH", st, "{\"status\":{\"capacity\":{\"pods\":null}}}", 403, "remove"},
	    {false, "PATCH", st, "{\"status\":{\"capacity\":{\"gpu\":\"1\"}}}", 403, "add"},
	    {false, "PATCH", n1, "{\"metadata\":{\"labels\":{\"kube32.io/board\":\"host\"}}}", 403,
	     "kube32.io/board"},
	    /* what a kubelet does stays allowed: its own labels, the same or less capacity */
	    {false, "PATCH", n1, "{\"metadata\":{\"labels\":{\"example.com/zone\":\"a\"}}}", 200,
	     ""},
	    {false, "PATCH", st,
	     "{\"status\":{\"allocatable\":{\"memory\":\"70000\"},\"conditions\":[{\"type\":"
	     "\"Ready\",\"status\":\"True\"}]}}",
	     200, ""},
	    /* the admin sets the role label and may raise capacity; the node may not remove it */
	    {true, "PATCH", n1,
	     "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker\":\"\"}}}", 200, ""},
	    {false, "PATCH", n1,
	     "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/worker\":null}}}", 403,
	     "node-role.kubernetes.io/"},
	    {false, "PUT", n1,
	     "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kube32.io/board\":\"cardputer\"}}}", 403,
	     "node-role.kubernetes.io/"},
	    {true, "PATCH", st, "{\"status\":{\"capacity\":{\"pods\":\"16\"}}}", 200, ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ct = !strcmp(cases[i].method, "PATCH") ? mp : "application/json";
		int code = reqn(fx, cases[i].admin ? NULL : tok, cases[i].method, cases[i].target,
				ct, cases[i].body, 0);
		if (code != cases[i].want || !out_has(fx, cases[i].part))
			fail_msg("case %zu: HTTP %d (want %d, with '%s'): %s", i, code,
				 cases[i].want, cases[i].part, k32_buf_cstr(&fx->out));
	}
	/* a board's profile bounds what its node may claim, even when it first registers */
	char tok2[API_TOKEN_LEN + 1];
	assert_int_equal(api_server_node_token(fx->api, "n2", tok2, sizeof(tok2), &err), K32_OK);
	int code = reqn(fx, tok2, "POST", "/api/v1/nodes", "application/json",
			"{\"metadata\":{\"name\":\"n2\",\"labels\":{\"kube32.io/board\":"
			"\"cardputer\"}},\"status\":{\"capacity\":{\"memory\":\"1Mi\","
			"\"pods\":\"8\"}}}",
			0);
	if (code != 403 || !out_has(fx, "a cardputer board gives pods at most 81920"))
		fail_msg("n2 registering 1Mi on a cardputer: HTTP %d %s", code,
			 k32_buf_cstr(&fx->out));
	code = reqn(fx, tok2, "POST", "/api/v1/nodes", "application/json",
		    "{\"metadata\":{\"name\":\"n2\",\"labels\":{\"kube32.io/board\":"
		    "\"cardputer\"}},\"status\":{\"capacity\":{\"memory\":\"80Ki\","
		    "\"pods\":\"9\"}}}",
		    0);
	if (code != 403 || !out_has(fx, "status.capacity.pods"))
		fail_msg("n2 registering 9 pods on a cardputer: HTTP %d %s", code,
			 k32_buf_cstr(&fx->out));
	EXPECT(fx, 200, req(fx, "GET", n1, NULL));
	assert_false(out_has(fx, "node-restriction.kubernetes.io"));
	assert_false(out_has(fx, "64Mi"));
	assert_true(out_has(fx, "\"kube32.io/board\":\"cardputer\""));
	assert_true(out_has(fx, "\"pods\":\"16\""));
}

/* ---- impersonation --------------------------------------------------------------------- */

static void test_impersonation(void **state)
{
	struct fx *fx = *state;
	char tok[API_TOKEN_LEN + 1];
	struct k32_err err;
	assert_int_equal(api_server_node_token(fx->api, "n1", tok, sizeof(tok), &err), K32_OK);
	static const char ssar[] = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
	static const char ssr[] = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
	static const char can_get_pods[] =
	    "{\"spec\":{\"resourceAttributes\":{\"verb\":\"get\",\"resource\":\"pods\","
	    "\"namespace\":\"default\"}}}";
	static const char can_create_cm[] =
	    "{\"spec\":{\"resourceAttributes\":{\"verb\":\"create\",\"resource\":\"configmaps\","
	    "\"namespace\":\"default\"}}}";
	static const char cm[] = "{\"metadata\":{\"name\":\"imp\"}}";
	static const struct {
		bool node; /* the caller: node n1's token, else the admin's */
		const char *headers;
		const char *method, *target, *body;
		int want;
		const char *part;
	} cases[] = {
	    /* the issue: --as was ignored and auth can-i answered for the caller */
	    {false, "Impersonate-User: jane\r\n", "POST", ssar, can_create_cm, 201,
	     "\"allowed\":false"},
	    {false, "Impersonate-User: jane\r\n", "POST", "/api/v1/namespaces/default/configmaps",
	     cm, 403, "User \\\"jane\\\" cannot create"},
	    {false, "Impersonate-User: system:node:n1\r\nImpersonate-Group: system:nodes\r\n",
	     "POST", ssar, can_get_pods, 201, "\"allowed\":true"},
	    {false, "Impersonate-User: system:node:n1\r\n", "POST", ssar, can_create_cm, 201,
	     "\"allowed\":false"},
	    {false, "impersonate-user: system:node:n1\r\n", "POST", ssr, "{}", 201,
	     "\"username\":\"system:node:n1\""},
	    {false,
	     "Impersonate-User: ops\r\nImpersonate-Group: dev\r\nImpersonate-Group: "
	     "system:masters\r\n",
	     "POST", "/api/v1/namespaces/default/configmaps", cm, 201, ""},
	    {false, NULL, "POST", ssar, can_create_cm, 201, "\"allowed\":true"},
	    /* only the admin may impersonate */
	    {true, "Impersonate-User: admin\r\nImpersonate-Group: system:masters\r\n", "DELETE",
	     "/api/v1/namespaces/default/configmaps/imp", NULL, 403, "cannot impersonate"},
	    {true, "Impersonate-User: jane\r\n", "POST", ssr, "{}", 403, "cannot impersonate"},
	    /* groups without a user */
	    {false, "Impersonate-Group: system:masters\r\n", "POST", ssr, "{}", 400,
	     "without a user"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = hreq(fx, cases[i].node ? tok : fx->admin, cases[i].method,
				cases[i].target, cases[i].body ? "application/json" : NULL,
				cases[i].body, cases[i].headers, NULL, 0);
		if (code != cases[i].want || !out_has(fx, cases[i].part))
			fail_msg("case %zu: HTTP %d (want %d, with '%s'): %s", i, code,
				 cases[i].want, cases[i].part, k32_buf_cstr(&fx->out));
	}
	/* the admin's impersonated create went in; the node's impersonated delete did not */
	EXPECT(fx, 200, req(fx, "GET", "/api/v1/namespaces/default/configmaps/imp", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_strings, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_field_validation, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_delete_conflict, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_node_restriction, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_impersonation, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_health, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_tokens_file, fx_setup, fx_teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	/* no message anywhere in the suite was cut (issue 17; api_msg_test drives them all) */
	if (api_fail_cut_count())
		fprintf(stderr, "%zu API messages were cut (api_fail_cut_count)\n",
			api_fail_cut_count());
	return failed || api_fail_cut_count() != 0;
}
