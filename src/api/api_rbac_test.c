/*
 * api_rbac_test.c - RBAC and ServiceAccount tokens (issue 16 item 2).
 *
 * Table tests of the evaluator (one PolicyRule against request attributes; one subject
 * against an identity), of the token codec (signed, tampered, expired, foreign audience,
 * hostile forms), then the server over HTTP with bearer tokens: a ServiceAccount token bound
 * by a Role to reading pods in one namespace can get, list and watch them there and nothing
 * else (403 in kube-apiserver's words), reviews answer from RBAC, impersonation needs the
 * impersonate verb, deleting the ServiceAccount revokes its tokens.
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

/* ---- the evaluator --------------------------------------------------------------------- */

static void test_rule_table(void **state)
{
	(void)state;
	static const struct {
		const char *rule;
		struct api_rbac_attrs a;
		bool want;
	} cases[] = {
	    /* verbs, groups, resources */
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"list", "", "pods", "", "ns", "", NULL},
	     true},
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"watch", "", "pods", "", "ns", "", NULL},
	     false},
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"deletecollection", "", "pods", "", "ns", "", NULL},
	     false},
	    {"{\"verbs\":[\"*\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"deletecollection", "", "pods", "", "ns", "", NULL},
	     true},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"get", "apps", "pods", "", "ns", "x", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"*\"],\"resources\":[\"deployments\"]}",
	     {"get", "apps", "deployments", "", "ns", "x", NULL},
	     true},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"]}",
	     {"get", "", "pods", "", "ns", "x", NULL},
	     false},
	    /* subresources: pods does not cover pods/log; pods/log and * / log do; * does */
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods/log\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     true},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods/log\"]}",
	     {"get", "", "pods", "", "ns", "x", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"*/log\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     true},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"*/status\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"*\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     true},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pod\"]}",
	     {"get", "", "pods", "", "ns", "x", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"podsx/log\"]}",
	     {"get", "", "pods", "log", "ns", "x", NULL},
	     false},
	    /* resourceNames: only requests naming one; list and create never match */
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	     "\"resourceNames\":[\"a\",\"b\"]}",
	     {"get", "", "configmaps", "", "ns", "b", NULL},
	     true},
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	     "\"resourceNames\":[\"a\",\"b\"]}",
	     {"get", "", "configmaps", "", "ns", "c", NULL},
	     false},
	    {"{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	     "\"resourceNames\":[\"a\",\"b\"]}",
	     {"list", "", "configmaps", "", "ns", "", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
	     "\"resourceNames\":[]}",
	     {"get", "", "configmaps", "", "ns", "z", NULL},
	     true},
	    /* non-resource URLs: exact, prefix*, *; never for resource requests */
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics\"]}",
	     {"get", NULL, NULL, NULL, NULL, NULL, "/metrics"},
	     true},
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics\"]}",
	     {"post", NULL, NULL, NULL, NULL, NULL, "/metrics"},
	     false},
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics\"]}",
	     {"get", NULL, NULL, NULL, NULL, NULL, "/metrics/x"},
	     false},
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/logs/*\"]}",
	     {"get", NULL, NULL, NULL, NULL, NULL, "/logs/a/b"},
	     true},
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"*\"]}",
	     {"get", NULL, NULL, NULL, NULL, NULL, "/anything"},
	     true},
	    {"{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"*\"]}",
	     {"get", "", "pods", "", "ns", "", NULL},
	     false},
	    {"{\"verbs\":[\"get\"],\"apiGroups\":[\"*\"],\"resources\":[\"*\"]}",
	     {"get", NULL, NULL, NULL, NULL, NULL, "/metrics"},
	     false},
	    /* hostile shapes never allow */
	    {"{\"verbs\":\"get\",\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"get", "", "pods", "", "ns", "", NULL},
	     false},
	    {"{\"verbs\":[1,null,{}],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}",
	     {"get", "", "pods", "", "ns", "", NULL},
	     false},
	    {"[]", {"get", "", "pods", "", "ns", "", NULL}, false},
	    {"{\"verbs\":[\"get\"],\"resources\":[\"pods\"]}",
	     {"get", "", "pods", "", "ns", "", NULL},
	     false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *r = cJSON_Parse(cases[i].rule);
		assert_non_null(r);
		if (api_rbac_rule_allows(r, &cases[i].a) != cases[i].want)
			fail_msg("case %zu: %s for %s %s/%s: want %d", i, cases[i].rule,
				 cases[i].a.verb, cases[i].a.resource ? cases[i].a.resource : "",
				 cases[i].a.sub ? cases[i].a.sub : "", cases[i].want);
		cJSON_Delete(r);
	}
}

static void test_subject_table(void **state)
{
	(void)state;
	struct api_identity sa = {.user = "system:serviceaccount:app:reader"};
	api_sa_groups("app", sa.groups, sizeof(sa.groups));
	struct api_identity jane = {.user = "jane", .groups = "dev,system:authenticated"};
	static const struct {
		const char *subject;
		bool jane; /* the identity: jane, else the ServiceAccount app/reader */
		const char *binding_ns;
		bool want;
	} cases[] = {
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"app\"}", false, "",
	     true},
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"reader\"}", false, "app", true},
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"reader\"}", false, "other", false},
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"ap\"}", false, "",
	     false},
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"read\",\"namespace\":\"app\"}", false, "",
	     false},
	    {"{\"kind\":\"User\",\"name\":\"system:serviceaccount:app:reader\"}", false, "", true},
	    {"{\"kind\":\"Group\",\"name\":\"system:serviceaccounts:app\"}", false, "", true},
	    {"{\"kind\":\"Group\",\"name\":\"system:serviceaccounts:ap\"}", false, "", false},
	    {"{\"kind\":\"Group\",\"name\":\"system:serviceaccounts\"}", false, "", true},
	    {"{\"kind\":\"Group\",\"name\":\"system:authenticated\"}", true, "", true},
	    {"{\"kind\":\"Group\",\"name\":\"dev\"}", true, "", true},
	    {"{\"kind\":\"Group\",\"name\":\"de\"}", true, "", false},
	    {"{\"kind\":\"User\",\"name\":\"jane\"}", true, "", true},
	    {"{\"kind\":\"User\",\"name\":\"Jane\"}", true, "", false},
	    {"{\"kind\":\"ServiceAccount\",\"name\":\"jane\"}", true, "", false},
	    {"{\"kind\":\"Robot\",\"name\":\"jane\"}", true, "", false},
	    {"{\"kind\":\"User\",\"name\":\"\"}", true, "", false},
	    {"{\"kind\":\"User\"}", true, "", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *s = cJSON_Parse(cases[i].subject);
		assert_non_null(s);
		if (api_rbac_subject_matches(s, cases[i].jane ? &jane : &sa, cases[i].binding_ns) !=
		    cases[i].want)
			fail_msg("case %zu: %s: want %d", i, cases[i].subject, cases[i].want);
		cJSON_Delete(s);
	}
}

/* ---- the token codec --------------------------------------------------------------------- */

static void test_token_codec(void **state)
{
	(void)state;
	uint8_t key[32], other[32];
	for (size_t i = 0; i < 32; i++) {
		key[i] = (uint8_t)i;
		other[i] = (uint8_t)(i + 1);
	}
	struct api_sa_claims c = {
	    .ns = "app", .name = "reader", .uid = "u-1", .iat = 1000, .exp = 5000};
	const char *aud[] = {API_SA_AUDIENCE};
	const char *foreign[] = {"https://vault.example"};
	char tok[K32_API_SA_TOKEN_LEN + 1], tok2[K32_API_SA_TOKEN_LEN + 1];
	struct k32_err err;
	struct api_sa_claims out;
	char why[160];
	assert_int_equal(api_token_sign(key, &c, aud, 1, tok, sizeof(tok), &err), K32_OK);
	if (api_token_verify(key, tok, strlen(tok), 1001, &out, why, sizeof(why)))
		fail_msg("verify: %s", why);
	assert_string_equal(out.ns, "app");
	assert_string_equal(out.name, "reader");
	assert_string_equal(out.uid, "u-1");
	assert_true(out.exp == 5000);
	/* expired, another key, another audience, issued in the future */
	assert_int_not_equal(api_token_verify(key, tok, strlen(tok), 5000, &out, why, sizeof(why)),
			     K32_OK);
	assert_non_null(strstr(why, "expired"));
	assert_int_not_equal(
	    api_token_verify(other, tok, strlen(tok), 1001, &out, why, sizeof(why)), K32_OK);
	assert_non_null(strstr(why, "signature"));
	assert_int_not_equal(api_token_verify(key, tok, strlen(tok), 900, &out, why, sizeof(why)),
			     K32_OK);
	assert_int_equal(api_token_sign(key, &c, foreign, 1, tok2, sizeof(tok2), &err), K32_OK);
	assert_int_not_equal(
	    api_token_verify(key, tok2, strlen(tok2), 1001, &out, why, sizeof(why)), K32_OK);
	assert_non_null(strstr(why, "audiences"));
	/* every single-character change of the token is refused */
	size_t n = strlen(tok);
	for (size_t i = 0; i < n; i++) {
		memcpy(tok2, tok, n + 1);
		tok2[i] = tok2[i] == 'A' ? 'B' : 'A';
		if (!api_token_verify(key, tok2, n, 1001, &out, why, sizeof(why)))
			fail_msg("token changed at %zu was accepted", i);
	}
	/* truncations, hostile forms, a length over the bound */
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(api_token_verify(key, tok, i, 1001, &out, why, sizeof(why)),
				     K32_OK);
	static const char *const bad[] = {
	    "", ".", "..", "...", "a.b.c", "a.b.c.d", "e30.e30.", "e30.e30.====", "\x80.\xff.\x01"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(
		    api_token_verify(key, bad[i], strlen(bad[i]), 1001, &out, why, sizeof(why)),
		    K32_OK);
	static char big[K32_API_SA_TOKEN_LEN + 2];
	memset(big, 'a', sizeof(big) - 1);
	assert_int_not_equal(
	    api_token_verify(key, big, sizeof(big) - 1, 1001, &out, why, sizeof(why)), K32_OK);
	assert_non_null(strstr(why, "K32_API_SA_TOKEN_LEN"));
}

/* ---- the server --------------------------------------------------------------------------- */

struct fx {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	uint16_t port;
	char dir[64];
	char admin[API_TOKEN_LEN + 1];
	char sa[K32_API_SA_TOKEN_LEN + 1]; /* app/reader's token */
	struct k32_buf out;
};

static int fx_setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/k32-rbac-XXXXXX");
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
	snprintf(path, sizeof(path), "%s/sa.key", fx->dir);
	unlink(path);
	rmdir(fx->dir);
	return 0;
}

/* One request over HTTP as token (NULL: none) with extra header lines (may be NULL). */
static int hreq(struct fx *fx, const char *token, const char *method, const char *target,
		const char *body, const char *extra)
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
					 .content_type = !body ? NULL
							 : strcmp(method, "PATCH")
							     ? "application/json"
							     : "application/merge-patch+json",
					 .headers = extra,
					 .body = body,
					 .body_len = body ? strlen(body) : 0,
					 .timeout_us = 5000000};
	if (http_client_do(c, &rq, &r, &err))
		fail_msg("%s %s: %s", method, target, err.msg);
	k32_buf_reset(&fx->out);
	k32_buf_append(&fx->out, r.body.data, r.body.len, NULL);
	int status = r.status;
	http_client_response_fini(&r);
	http_client_free(c);
	return status;
}

static bool out_has(struct fx *fx, const char *part)
{
	return !part || strstr(k32_buf_cstr(&fx->out), part) != NULL;
}

#define EXPECT(fx, code, call)                                                                     \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		if (got_ != (code))                                                                \
			fail_msg("line %d: HTTP %d, want %d: %s", __LINE__, got_, (code),          \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

/* app/reader may read pods in app; the admin creates the objects and its token. */
static void fx_reader(struct fx *fx)
{
	static const char *const setup[][2] = {
	    {"/api/v1/namespaces", "{\"metadata\":{\"name\":\"app\"}}"},
	    {"/api/v1/namespaces", "{\"metadata\":{\"name\":\"other\"}}"},
	    {"/api/v1/namespaces/app/serviceaccounts", "{\"metadata\":{\"name\":\"reader\"}}"},
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/app/roles",
	     "{\"metadata\":{\"name\":\"pod-reader\"},\"rules\":[{\"apiGroups\":[\"\"],"
	     "\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\",\"watch\"]}]}"},
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings",
	     "{\"metadata\":{\"name\":\"rb\"},\"roleRef\":{\"apiGroup\":"
	     "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-reader\"},"
	     "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\"}]}"},
	    {"/api/v1/namespaces/app/pods",
	     "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"containers\":[{\"name\":\"c\","
	     "\"image\":\"a.wasm\"}]}}"},
	    {"/api/v1/namespaces/other/pods",
	     "{\"metadata\":{\"name\":\"p2\"},\"spec\":{\"containers\":[{\"name\":\"c\","
	     "\"image\":\"a.wasm\"}]}}"},
	};
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		EXPECT(fx, 201, hreq(fx, fx->admin, "POST", setup[i][0], setup[i][1], NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/api/v1/namespaces/app/serviceaccounts/reader/token",
		    "{\"spec\":{\"expirationSeconds\":1200}}", NULL));
	cJSON *tr = cJSON_Parse(k32_buf_cstr(&fx->out));
	const char *t = cJSON_GetStringValue(k32_json_find(tr, "status.token"));
	assert_non_null(t);
	snprintf(fx->sa, sizeof(fx->sa), "%s", t);
	assert_non_null(cJSON_GetStringValue(k32_json_find(tr, "status.expirationTimestamp")));
	cJSON_Delete(tr);
}

static void test_sa_reads_pods_in_one_namespace(void **state)
{
	struct fx *fx = *state;
	fx_reader(fx);
	static const struct {
		const char *method, *target, *body;
		int want;
		const char *part;
	} cases[] = {
	    {"GET", "/api/v1/namespaces/app/pods", NULL, 200, "\"p1\""},
	    {"GET", "/api/v1/namespaces/app/pods/p1", NULL, 200, "\"p1\""},
	    {"GET", "/api/v1/namespaces/other/pods", NULL, 403,
	     "pods is forbidden: User \\\"system:serviceaccount:app:reader\\\" cannot list "
	     "resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"other\\\""},
	    {"GET", "/api/v1/pods", NULL, 403,
	     "cannot list resource \\\"pods\\\" in API group "
	     "\\\"\\\" at the cluster scope"},
	    {"GET", "/api/v1/namespaces/app/configmaps", NULL, 403,
	     "configmaps is forbidden: User \\\"system:serviceaccount:app:reader\\\" cannot "
	     "list resource \\\"configmaps\\\""},
	    {"GET", "/api/v1/namespaces/app/pods/p1/log", NULL, 403,
	     "pods \\\"p1\\\" is forbidden: User \\\"system:serviceaccount:app:reader\\\" cannot "
	     "get resource \\\"pods/log\\\""},
	    {"DELETE", "/api/v1/namespaces/app/pods/p1", NULL, 403, "cannot delete resource"},
	    {"DELETE", "/api/v1/namespaces/app/pods", NULL, 403,
	     "cannot deletecollection resource"},
	    {"POST", "/api/v1/namespaces/app/pods",
	     "{\"metadata\":{\"name\":\"p3\"},\"spec\":{\"containers\":[{\"name\":\"c\","
	     "\"image\":\"a.wasm\"}]}}",
	     403, "cannot create resource \\\"pods\\\""},
	    {"PATCH", "/api/v1/namespaces/app/pods/p1", "{}", 403, "cannot patch resource"},
	    {"GET", "/apis/apps/v1/namespaces/app/deployments", NULL, 403,
	     "deployments.apps is forbidden: User \\\"system:serviceaccount:app:reader\\\" cannot "
	     "list resource \\\"deployments\\\" in API group \\\"apps\\\""},
	    {"GET", "/api/v1/nodes", NULL, 403, "at the cluster scope"},
	    {"POST", "/api/v1/namespaces/app/serviceaccounts/reader/token", "{}", 403,
	     "cannot create resource \\\"serviceaccounts/token\\\""},
	    {"POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
	     "{\"metadata\":{\"name\":\"x\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s."
	     "io\",\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"},\"subjects\":[{\"kind\":"
	     "\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"app\"}]}",
	     403, "cannot create resource \\\"clusterrolebindings\\\""},
	    {"GET", "/metrics", NULL, 403,
	     "forbidden: User \\\"system:serviceaccount:app:reader\\\" "
	     "cannot get path \\\"/metrics\\\""},
	    /* discovery and the version stay open */
	    {"GET", "/api/v1", NULL, 200, "\"pods\""},
	    {"GET", "/apis", NULL, 200, "rbac.authorization.k8s.io"},
	    {"GET", "/version", NULL, 200, "gitVersion"},
	    /* reviews from RBAC */
	    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	     "{\"spec\":{\"resourceAttributes\":{\"verb\":\"watch\",\"resource\":\"pods\","
	     "\"namespace\":\"app\"}}}",
	     201, "\"allowed\":true"},
	    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	     "{\"spec\":{\"resourceAttributes\":{\"verb\":\"list\",\"resource\":\"pods\","
	     "\"namespace\":\"other\"}}}",
	     201, "\"allowed\":false"},
	    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	     "{\"spec\":{\"nonResourceAttributes\":{\"verb\":\"get\",\"path\":\"/metrics\"}}}", 201,
	     "\"allowed\":false"},
	    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
	     "{\"spec\":{\"namespace\":\"app\"}}", 201, "\"resources\":[\"pods\"]"},
	    {"POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", 201,
	     "\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:app\","
	     "\"system:authenticated\"]"},
	    /* impersonation needs the impersonate verb */
	    {"GET", "/api/v1/namespaces/app/pods", NULL, 403,
	     "cannot impersonate resource \\\"users\\\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *hdr = i + 1 == sizeof(cases) / sizeof(cases[0])
				      ? "Impersonate-User: admin\r\nImpersonate-Group: "
					"system:masters\r\n"
				      : NULL;
		int code = hreq(fx, fx->sa, cases[i].method, cases[i].target, cases[i].body, hdr);
		if (code != cases[i].want || !out_has(fx, cases[i].part))
			fail_msg("case %zu %s %s: HTTP %d (want %d, with '%s'): %s", i,
				 cases[i].method, cases[i].target, code, cases[i].want,
				 cases[i].part, k32_buf_cstr(&fx->out));
	}
	/* watch: the stream starts (200) for app, 403 for other */
	EXPECT(fx, 403,
	       hreq(fx, fx->sa, "GET", "/api/v1/namespaces/other/pods?watch=1", NULL, NULL));
	assert_true(out_has(fx, "cannot watch resource \\\"pods\\\""));
	/* a ClusterRoleBinding to view widens it to every namespace */
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		    "{\"metadata\":{\"name\":\"v\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization."
		    "k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":"
		    "\"Group\",\"name\":\"system:serviceaccounts:app\"}]}",
		    NULL));
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/other/pods", NULL, NULL));
	/* past authorization: the pod has not started (no node here), so no log yet */
	EXPECT(fx, 400, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods/p1/log", NULL, NULL));
	assert_true(out_has(fx, "waiting to start"));
	EXPECT(fx, 403, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/secrets", NULL, NULL));
	/* deleting the ServiceAccount revokes its token */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "DELETE", "/api/v1/namespaces/app/serviceaccounts/reader", NULL,
		    NULL));
	EXPECT(fx, 401, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	/* a garbage or tampered token is a 401 */
	EXPECT(fx, 401, hreq(fx, "a.b.c", "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
}

static void test_escalation_and_impersonation(void **state)
{
	struct fx *fx = *state;
	fx_reader(fx);
	/* reader may manage rolebindings in app, and bind only pod-reader */
	EXPECT(
	    fx, 201,
	    hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/app/roles",
		 "{\"metadata\":{\"name\":\"binder\"},\"rules\":[{\"apiGroups\":[\"rbac."
		 "authorization.k8s.io\"],\"resources\":[\"rolebindings\"],\"verbs\":[\"create\"]},"
		 "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"roles\"],"
		 "\"verbs\":[\"bind\"],\"resourceNames\":[\"pod-reader\"]}"
		 "]}",
		 NULL));
	/* impersonation is cluster-scoped: a ClusterRole bound cluster-wide */
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    "{\"metadata\":{\"name\":\"as-jane\"},\"rules\":[{\"apiGroups\":[\"\"],"
		    "\"resources\":[\"users\"],\"verbs\":[\"impersonate\"],\"resourceNames\":"
		    "[\"jane\"]}]}",
		    NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		    "{\"metadata\":{\"name\":\"as-jane\"},\"roleRef\":{\"apiGroup\":"
		    "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"as-jane\"},"
		    "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\","
		    "\"namespace\":\"app\"}]}",
		    NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings",
		    "{\"metadata\":{\"name\":\"rb2\"},\"roleRef\":{\"apiGroup\":"
		    "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"binder\"},"
		    "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\"}]}",
		    NULL));
	static const char rb_admin[] =
	    "{\"metadata\":{\"name\":\"esc\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s."
	    "io\",\"kind\":\"ClusterRole\",\"name\":\"admin\"},\"subjects\":[{\"kind\":"
	    "\"ServiceAccount\",\"name\":\"reader\"}]}";
	EXPECT(fx, 403,
	       hreq(fx, fx->sa, "POST",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings", rb_admin,
		    NULL));
	assert_true(out_has(fx, "needs the bind verb"));
	EXPECT(fx, 201,
	       hreq(fx, fx->sa, "POST",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings",
		    "{\"metadata\":{\"name\":\"ok\"},\"roleRef\":{\"apiGroup\":"
		    "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-reader\"},"
		    "\"subjects\":[{\"kind\":\"User\",\"name\":\"jane\"}]}",
		    NULL));
	/* reader may impersonate jane (who then reads pods in app through "ok"), not bob */
	EXPECT(fx, 200,
	       hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL,
		    "Impersonate-User: jane\r\n"));
	EXPECT(fx, 201,
	       hreq(fx, fx->sa, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}",
		    "Impersonate-User: jane\r\n"));
	assert_true(out_has(fx, "\"username\":\"jane\""));
	EXPECT(fx, 403,
	       hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL,
		    "Impersonate-User: bob\r\n"));
	assert_true(out_has(fx, "users \\\"bob\\\" is forbidden"));
	EXPECT(fx, 403,
	       hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL,
		    "Impersonate-User: jane\r\nImpersonate-Group: system:masters\r\n"));
	assert_true(out_has(fx, "groups \\\"system:masters\\\" is forbidden"));
}

static void test_validation_and_bounds(void **state)
{
	struct fx *fx = *state;
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/api/v1/namespaces/default/serviceaccounts",
		    "{\"metadata\":{\"name\":\"s\"}}", NULL));
	static const struct {
		const char *target, *body, *part;
	} bad[] = {
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
	     "{\"metadata\":{\"name\":\"r\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
	     "[\"pods\"]}]}",
	     "rules[0].verbs"},
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
	     "{\"metadata\":{\"name\":\"r\"},\"rules\":[{\"nonResourceURLs\":[\"/x\"],\"verbs\":"
	     "[\"get\"]}]}",
	     "namespaced rules cannot apply to non-resource URLs"},
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
	     "{\"metadata\":{\"name\":\"r\"},\"rules\":[{\"verbs\":[\"get\",7],\"apiGroups\":"
	     "[\"\"],\"resources\":[\"pods\"]}]}",
	     "every item must be a string"},
	    {"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
	     "{\"metadata\":{\"name\":\"b\"},\"roleRef\":{\"apiGroup\":\"x\",\"kind\":\"Role\","
	     "\"name\":\"r\"}}",
	     "roleRef.apiGroup"},
	    {"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
	     "{\"metadata\":{\"name\":\"b\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io"
	     "\",\"kind\":\"Role\",\"name\":\"r\"}}",
	     "roleRef.kind"},
	    {"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
	     "{\"metadata\":{\"name\":\"b\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io"
	     "\",\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":"
	     "\"ServiceAccount\",\"name\":\"s\"}]}",
	     "subjects[0].namespace"},
	    {"/api/v1/namespaces/default/serviceaccounts/s/token",
	     "{\"spec\":{\"expirationSeconds\":10}}", "K32_API_SA_TOKEN_MIN_S"},
	    {"/api/v1/namespaces/default/serviceaccounts/s/token",
	     "{\"spec\":{\"expirationSeconds\":1e12}}", "K32_API_SA_TOKEN_MAX_S"},
	    {"/api/v1/namespaces/default/serviceaccounts/s/token",
	     "{\"spec\":{\"audiences\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}}",
	     "K32_API_SA_MAX_AUDIENCES"},
	    {"/api/v1/namespaces/default/serviceaccounts/s/token",
	     "{\"spec\":{\"boundObjectRef\":{\"kind\":\"Pod\",\"name\":\"nope\"}}}",
	     "pod nope does not exist"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int code = hreq(fx, fx->admin, "POST", bad[i].target, bad[i].body, NULL);
		if (code != 422 || !out_has(fx, bad[i].part))
			fail_msg("case %zu: HTTP %d (want 422, with '%s'): %s", i, code,
				 bad[i].part, k32_buf_cstr(&fx->out));
	}
	/* roleRef cannot change */
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		    "{\"metadata\":{\"name\":\"rr\"},\"roleRef\":{\"apiGroup\":\"rbac."
		    "authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"view\"}}",
		    NULL));
	EXPECT(fx, 422,
	       hreq(fx, fx->admin, "PATCH",
		    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/rr",
		    "{\"roleRef\":{\"name\":\"edit\"}}", NULL));
	assert_true(out_has(fx, "cannot change roleRef"));
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "PATCH",
		    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/rr",
		    "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", NULL));
	/* K32_API_RBAC_MAX_RULES + 1 rules */
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "role");
	k32_buf_printf(&b, NULL, "{\"metadata\":{\"name\":\"big\"},\"rules\":[");
	for (int i = 0; i <= K32_API_RBAC_MAX_RULES; i++)
		k32_buf_printf(
		    &b, NULL,
		    "%s{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"p%d\"]}",
		    i ? "," : "", i);
	k32_buf_printf(&b, NULL, "]}");
	EXPECT(fx, 422,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    k32_buf_cstr(&b), NULL));
	assert_true(out_has(fx, "K32_API_RBAC_MAX_RULES"));
	k32_buf_fini(&b);
	/* the default ClusterRoles and ServiceAccounts are there */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view",
		    NULL, NULL));
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "GET", "/api/v1/namespaces/kube-system/serviceaccounts/default",
		    NULL, NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"n2\"}}",
		    NULL));
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "GET", "/api/v1/namespaces/n2/serviceaccounts/default", NULL,
		    NULL));
}

/* The rules of ClusterRole name as the admin reads them (a new array; NULL if none). */
static cJSON *role_rules(struct fx *fx, const char *name)
{
	char target[160];
	snprintf(target, sizeof(target), "/apis/rbac.authorization.k8s.io/v1/clusterroles/%s",
		 name);
	EXPECT(fx, 200, hreq(fx, fx->admin, "GET", target, NULL, NULL));
	cJSON *j = cJSON_Parse(k32_buf_cstr(&fx->out));
	cJSON *r = cJSON_DetachItemFromObjectCaseSensitive(j, "rules");
	cJSON_Delete(j);
	return r;
}

/* Whether the rules grant verb on resource of group. */
static bool rules_grant(const cJSON *rules, const char *group, const char *resource,
			const char *verb)
{
	struct api_rbac_attrs a = {
	    .verb = verb, .group = group, .resource = resource, .sub = "", .ns = "", .name = ""};
	const cJSON *r;
	cJSON_ArrayForEach(r, rules)
	{
		if (api_rbac_rule_allows(r, &a))
			return true;
	}
	return false;
}

/* Aggregated ClusterRoles: the default admin >= edit >= view are unions of the
 * system:aggregate-to-* roles; a labelled role of one's own joins them, its changes and its
 * deletion follow, a matchExpressions selector works, a ServiceAccount bound to view gets
 * the new rule, and names are path segments as in kube-apiserver ("system:..." allowed,
 * "a/b" not). */
static void test_aggregation(void **state)
{
	struct fx *fx = *state;
	cJSON *view = role_rules(fx, "view"), *edit = role_rules(fx, "edit"),
	      *admin = role_rules(fx, "admin");
	cJSON *to_view = role_rules(fx, "system:aggregate-to-view");
	cJSON *to_edit = role_rules(fx, "system:aggregate-to-edit");
	assert_true(cJSON_Compare(view, to_view, true));
	assert_int_equal(cJSON_GetArraySize(edit),
			 cJSON_GetArraySize(to_edit) + cJSON_GetArraySize(to_view));
	assert_int_equal(cJSON_GetArraySize(admin), cJSON_GetArraySize(edit) + 1);
	assert_true(rules_grant(view, "", "pods", "list"));
	assert_false(rules_grant(view, "", "pods", "delete"));
	assert_true(rules_grant(edit, "", "pods", "delete"));
	assert_false(rules_grant(edit, "rbac.authorization.k8s.io", "roles", "create"));
	assert_true(rules_grant(admin, "rbac.authorization.k8s.io", "roles", "create"));
	assert_true(rules_grant(admin, "", "pods", "list"));
	cJSON_Delete(view);
	cJSON_Delete(edit);
	cJSON_Delete(admin);
	cJSON_Delete(to_view);
	cJSON_Delete(to_edit);

	/* a role of one's own labelled for view: view, edit and admin take its rule */
	fx_reader(fx);
	EXPECT(fx, 403, hreq(fx, fx->sa, "GET", "/api/v1/nodes", NULL, NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		    "{\"metadata\":{\"name\":\"readers-view\"},\"roleRef\":{\"apiGroup\":"
		    "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"view\"},"
		    "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\","
		    "\"namespace\":\"app\"}]}",
		    NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    "{\"metadata\":{\"name\":\"node-reader\",\"labels\":{\"rbac.authorization."
		    "k8s.io/aggregate-to-view\":\"true\"}},\"rules\":[{\"apiGroups\":[\"\"],"
		    "\"resources\":[\"nodes\"],\"verbs\":[\"get\",\"list\"]}]}",
		    NULL));
	static const char *const chain[] = {"view", "edit", "admin"};
	for (size_t i = 0; i < 3; i++) {
		cJSON *r = role_rules(fx, chain[i]);
		if (!rules_grant(r, "", "nodes", "list"))
			fail_msg("%s lacks the aggregated rule", chain[i]);
		assert_false(rules_grant(r, "", "nodes", "watch"));
		cJSON_Delete(r);
	}
	/* ... as a ServiceAccount bound to view sees at once */
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/nodes", NULL, NULL));
	/* changed: watch added; followed */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "PATCH",
		    "/apis/rbac.authorization.k8s.io/v1/clusterroles/node-reader",
		    "{\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],"
		    "\"verbs\":[\"get\",\"list\",\"watch\"]}]}",
		    NULL));
	cJSON *r = role_rules(fx, "admin");
	assert_true(rules_grant(r, "", "nodes", "watch"));
	cJSON_Delete(r);
	/* the label taken away: gone from view */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "PATCH",
		    "/apis/rbac.authorization.k8s.io/v1/clusterroles/node-reader",
		    "{\"metadata\":{\"labels\":{\"rbac.authorization.k8s.io/aggregate-to-view\":"
		    "null}}}",
		    NULL));
	r = role_rules(fx, "view");
	assert_false(rules_grant(r, "", "nodes", "list"));
	cJSON_Delete(r);
	EXPECT(fx, 403, hreq(fx, fx->sa, "GET", "/api/v1/nodes", NULL, NULL));
	/* an aggregated role of one's own, by matchExpressions; then the source deleted */
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    "{\"metadata\":{\"name\":\"system:monitoring\"},\"aggregationRule\":{"
		    "\"clusterRoleSelectors\":[{\"matchExpressions\":[{\"key\":\"team\","
		    "\"operator\":\"In\",\"values\":[\"ops\",\"sre\"]}]}]},\"rules\":[]}",
		    NULL));
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    "{\"metadata\":{\"name\":\"sre-nodes\",\"labels\":{\"team\":\"sre\"}},"
		    "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":"
		    "[\"get\"]}]}",
		    NULL));
	r = role_rules(fx, "system:monitoring");
	assert_int_equal(cJSON_GetArraySize(r), 1);
	assert_true(rules_grant(r, "", "nodes", "get"));
	cJSON_Delete(r);
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "DELETE",
		    "/apis/rbac.authorization.k8s.io/v1/clusterroles/sre-nodes", NULL, NULL));
	r = role_rules(fx, "system:monitoring");
	assert_int_equal(cJSON_GetArraySize(r), 0);
	cJSON_Delete(r);
	/* names: a path segment */
	EXPECT(fx, 422,
	       hreq(fx, fx->admin, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		    "{\"metadata\":{\"name\":\"a%b\"},\"rules\":[]}", NULL));
	assert_true(out_has(fx, "may not contain"));
}

/* A request over HTTP(S) verifies its ServiceAccount token once (authenticate, not again in
 * the handler); access checks share one parsed snapshot of the RBAC objects, read again
 * only after an RBAC object is written (a binding deleted: denied at once; created again:
 * allowed at once), not after other writes. */
static void test_verify_once_and_cache(void **state)
{
	struct fx *fx = *state;
	fx_reader(fx);
	struct api_rbac_cache_stats c0, c1;
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	api_rbac_cache_stats(fx->api, &c0);
	uint64_t v0 = api_token_verifications();
	for (int i = 0; i < 5; i++)
		EXPECT(fx, 200,
		       hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods/p1", NULL, NULL));
	assert_int_equal(api_token_verifications() - v0, 5);
	api_rbac_cache_stats(fx->api, &c1);
	assert_int_equal(c1.builds, c0.builds); /* nothing RBAC changed: no re-read */
	assert_true(c1.hits >= c0.hits + 5);
	assert_int_equal(c1.uncached, c0.uncached);
	/* a write of another kind keeps the snapshot */
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST", "/api/v1/namespaces/app/configmaps",
		    "{\"metadata\":{\"name\":\"c\"}}", NULL));
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	api_rbac_cache_stats(fx->api, &c0);
	assert_int_equal(c0.builds, c1.builds);
	/* the binding deleted: the next check reads again and denies */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "DELETE",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings/rb", NULL,
		    NULL));
	EXPECT(fx, 403, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	api_rbac_cache_stats(fx->api, &c1);
	assert_int_equal(c1.builds, c0.builds + 1);
	EXPECT(fx, 201,
	       hreq(fx, fx->admin, "POST",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings",
		    "{\"metadata\":{\"name\":\"rb\"},\"roleRef\":{\"apiGroup\":"
		    "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-reader\"},"
		    "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\"}]}",
		    NULL));
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	/* the role's rules changed: followed at once too */
	EXPECT(fx, 200,
	       hreq(fx, fx->admin, "PATCH",
		    "/apis/rbac.authorization.k8s.io/v1/namespaces/app/roles/pod-reader",
		    "{\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
		    "\"verbs\":[\"get\"]}]}",
		    NULL));
	EXPECT(fx, 403, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
	EXPECT(fx, 200, hreq(fx, fx->sa, "GET", "/api/v1/namespaces/app/configmaps/c", NULL, NULL));
	/* a token that does not verify: 401, and nothing allocated is left (ASan's leak check) */
	char bad[K32_API_SA_TOKEN_LEN + 1];
	snprintf(bad, sizeof(bad), "%s", fx->sa);
	bad[strlen(bad) - 2] ^= 1;
	EXPECT(fx, 401, hreq(fx, bad, "GET", "/api/v1/namespaces/app/pods", NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rule_table),
	    cmocka_unit_test(test_subject_table),
	    cmocka_unit_test(test_token_codec),
	    cmocka_unit_test_setup_teardown(test_sa_reads_pods_in_one_namespace, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_escalation_and_impersonation, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_validation_and_bounds, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_aggregation, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_verify_once_and_cache, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
