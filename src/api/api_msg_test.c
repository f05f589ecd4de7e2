/*
 * api_msg_test.c - the API server's error messages end whole (issue #17: no status, event or
 * error message cut mid-word). Every row drives one message path of the server (404, 409,
 * 422 with its causes, 400 for bodies and query parameters, 403 from RBAC and NodeRestriction,
 * 405, 415, 413) with the longest legal names (namespace 63 bytes, object names 253, a
 * ServiceAccount user of 337) and hostile over-long values (1000 bytes where a name or value
 * goes), and asserts the Status message and every cause message: has the row's fixed words,
 * ends with the row's last words (its advice), does not end with "...", does not fill its
 * buffer; and that no message anywhere was cut (api_fail_cut_count stays 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "store/store.h"

/* the longest legal names: a namespace (DNS label, 63), an object (DNS subdomain, 253); a
 * second object name; a hostile value (1000 bytes of 'h') */
static char ns63[64], name253[254], other253[254], hostile[1001];
/* hostile values at a query parameter's length limit: 31 (K32_HTTP_QUERY_TYPED_MAX), 63 (a
 * container), 500 (a selector) */
static char h31[32], h63[64], h500[501];
/* the longest ServiceAccount that gets a token: its user name system:serviceaccount:NS:NAME
 * fills K32_API_USER_LEN - 1 (here with the 63-byte namespace) */
static char sa_name[K32_API_USER_LEN];
/* a CRD at the limits: plural 63, group 63 (K32_API_CRD_GROUP_LEN) */
static char plural63[64], group63[64];

struct fx {
	struct store *store;
	struct api_server *api;
	char dir[64];
	char sa[K32_API_SA_TOKEN_LEN + 1];
	char node[API_TOKEN_LEN + 1];
	struct k32_buf out, body, target, ctype;
};

enum who { ADMIN, SA, NODE };

struct mrow {
	const char *tag;
	enum who who;
	const char *method;
	const char
	    *target; /* @S namespace, @N name253, @O other253, @H hostile, @P plural, @G group */
	const char *ctype; /* NULL: JSON (merge patch for PATCH) */
	const char *body;  /* NULL: none; the same expansions */
	int code;
	const char *has;  /* a fixed part of the message */
	const char *tail; /* its last words: the advice */
};

#define CM(NAME)                                                                                   \
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" NAME "\"}}"

static const struct mrow rows[] = {
    /* 404 */
    {"notfound", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps/@O", NULL, NULL, 404,
     "configmaps \"", "\" not found"},
    {"notfound-crd", ADMIN, "GET", "/apis/@G/v1/namespaces/@S/@P/@O", NULL, NULL, 400,
     "makes the key longer than K32_STORE_KEY_MAX", "shorten the name"},
    {"notfound-crd2", ADMIN, "GET", "/apis/@G/v1/namespaces/@S/@P/@P", NULL, NULL, 404,
     "@P.@G \"@P\" not found", "\" not found"},
    {"notfound-path", ADMIN, "GET", "/apis/@N/@S/@S", NULL, NULL, 404,
     "the server could not find the requested resource", ")"},
    {"cluster-scoped", ADMIN, "GET", "/api/v1/namespaces/@S/nodes/@N", NULL, NULL, 404,
     "nodes is cluster-scoped", "drop the namespaces/@S part"},
    /* 409 */
    {"exists", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL, CM("@N"), 409,
     "configmaps \"", "\" already exists"},
    {"conflict", ADMIN, "PUT", "/api/v1/namespaces/@S/configmaps/@N", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"@N\","
     "\"resourceVersion\":\"1\"}}",
     409, "Operation cannot be fulfilled on configmaps", "to the latest version and try again"},
    {"precondition", ADMIN, "DELETE", "/api/v1/namespaces/@S/configmaps/@N", NULL,
     "{\"preconditions\":{\"uid\":\"@H\"}}", 409, "Precondition failed: UID in precondition", ")"},
    {"bound", ADMIN, "POST", "/api/v1/namespaces/@S/pods/@N/binding", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"@N\"},"
     "\"target\":{\"kind\":\"Node\",\"name\":\"@O\"}}",
     409, "is already assigned to node", "\""},
    /* 422 */
    {"badname", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL, CM("@H"), 422,
     "is invalid: metadata.name: Invalid value:", NULL},
    {"manycauses", ADMIN, "POST", "/api/v1/namespaces/@S/services", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"@N\"},\"spec\":{"
     "\"type\":\"@H\",\"ports\":[{\"name\":\"@H\",\"port\":0,\"protocol\":\"@H\"},"
     "{\"name\":\"@H\",\"port\":-1,\"protocol\":\"@H\",\"nodePort\":3}]}}",
     422, "Service \"", NULL},
    {"scale", ADMIN, "PUT", "/apis/apps/v1/namespaces/@S/deployments/@N/scale", NULL,
     "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":\"@N\"},"
     "\"spec\":{\"replicas\":-1}}",
     422, "Scale \"", "must be a non-negative integer"},
    {"crd-schema", ADMIN, "POST", "/apis/@G/v1/namespaces/@S/@P", NULL,
     "{\"apiVersion\":\"@G/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"@N\"},"
     "\"spec\":{\"size\":\"@H\",\"mode\":\"@H\"}}",
     422, "is invalid", NULL},
    {"jsonpatch-path", ADMIN, "PATCH", "/api/v1/namespaces/@S/configmaps/@N",
     "application/json-patch+json", "[{\"op\":\"replace\",\"path\":\"/data/@H\",\"value\":\"x\"}]",
     422, "json patch: path", "\")"},
    /* 400: bodies */
    {"name-mismatch", ADMIN, "PUT", "/api/v1/namespaces/@S/configmaps/@N", NULL, CM("@H"), 400,
     "does not match the name on the URL", ")"},
    {"ns-mismatch", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
     "\"namespace\":\"@H\"}}",
     400, "does not match the namespace sent on the request", ")"},
    {"apiversion", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL,
     "{\"apiVersion\":\"@H\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}", 400,
     "does not match the expected API version", ")"},
    {"kind", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"@H\",\"metadata\":{\"name\":\"a\"}}", 400,
     "but the URL is for configmaps", ")"},
    {"strict", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps?fieldValidation=Strict", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"@H\":1}}", 400,
     "strict decoding error: unknown field", "\""},
    {"jsonpatch-op", ADMIN, "PATCH", "/api/v1/namespaces/@S/configmaps/@N",
     "application/json-patch+json", "[{\"op\":\"@H\",\"path\":\"/data\"}]", 400, "has unknown op",
     "(add, remove, replace, move, copy, test)"},
    {"smp-directive", ADMIN, "PATCH", "/api/v1/namespaces/@S/configmaps/@N",
     "application/strategic-merge-patch+json", "{\"$@H\":\"x\"}", 400,
     "strategic merge patch: unknown directive", "\""},
    {"apply-manager", ADMIN, "PATCH", "/api/v1/namespaces/@S/configmaps/@N",
     "application/apply-patch+yaml", CM("@N"), 400, "fieldManager is required",
     "default \"kubectl\")"},
    {"ctype", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", "application/@H", CM("a"), 415,
     "is not supported", "send application/json"},
    {"patch-ctype", ADMIN, "PATCH", "/api/v1/namespaces/@S/configmaps/@N", "text/@H", "{}", 415,
     "the body of the request was in an unknown format", "\")"},
    {"exec", ADMIN, "POST", "/api/v1/namespaces/@S/pods/@N/exec", NULL, NULL, 400,
     "is not supported by kube32", "/proxy/"},
    {"logs-container", ADMIN, "GET", "/api/v1/namespaces/@S/pods/@N/log?container=@6", NULL, NULL,
     400, "container \"", "ContainerCreating"},
    /* 400: query parameters (the generic length check, then each parameter's own) */
    {"query-long", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?limit=1&continue=@H", NULL, NULL,
     400, "query parameter continue=", "shorten it (the request was not carried out)"},
    {"limit", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?limit=99999999999999999999", NULL,
     NULL, 0, "", NULL},
    {"rv", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?resourceVersion=@3", NULL, NULL, 0, "",
     NULL},
    {"fieldvalidation", ADMIN, "POST", "/api/v1/namespaces/@S/configmaps?fieldValidation=@3", NULL,
     CM("a"), 400, "fieldValidation", NULL},
    {"labelselector", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?labelSelector=a%20in%20(@5",
     NULL, NULL, 400, "unable to parse requirement", NULL},
    {"fieldselector", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?fieldSelector=@5%3Dx", NULL,
     NULL, 400, "field label not supported", ")"},
    {"propagation", ADMIN, "DELETE", "/api/v1/namespaces/@S/configmaps/@N?propagationPolicy=@3",
     NULL, NULL, 400, "propagationPolicy", NULL},
    {"continue", ADMIN, "GET", "/api/v1/namespaces/@S/configmaps?limit=1&continue=@5", NULL, NULL,
     0, "", NULL},
    /* 503: a pod's HTTP handler through the API (its node publishes no pod server) */
    {"proxy", ADMIN, "GET", "/api/v1/namespaces/@S/pods/@N/proxy/", NULL, NULL, 503,
     "publishes no pod server", "it runs without one or has not registered"},
    /* 503: the pod's node publishes a pod server that refuses the connection (port 1) */
    {"proxy-reach", ADMIN, "GET", "/api/v1/namespaces/@S/pods/@O/proxy/", NULL, NULL, 503,
     "(header X-Kube32-Pod: @S/other-", NULL},
    /* 400: port-forward without an upgrade this server tunnels */
    {"portforward", ADMIN, "GET", "/api/v1/namespaces/@S/pods/@O/portforward", NULL, NULL, 400,
     "pods/portforward: kube32 tunnels SPDY/3.1", "at pods/<name>/proxy (kubectl get --raw)"},
    /* 405 */
    {"method", ADMIN, "PUT", "/api/v1/namespaces/@S/configmaps", NULL, CM("a"), 405,
     "does not allow this method", ")"},
    /* 403: RBAC (a ServiceAccount of the longest names) and NodeRestriction */
    {"token-user", ADMIN, "POST", "/api/v1/namespaces/@S/serviceaccounts/@N/token", NULL,
     "{\"spec\":{}}", 422, "over K32_API_USER_LEN", "use a shorter ServiceAccount name"},
    {"rbac-list", SA, "GET", "/api/v1/namespaces/@S/pods", NULL, NULL, 403,
     "pods is forbidden: User \"system:serviceaccount:", "in the namespace \"@S\""},
    {"rbac-get", SA, "GET", "/api/v1/namespaces/@S/configmaps/@N", NULL, NULL, 403,
     "is forbidden: User \"system:serviceaccount:", "in the namespace \"@S\""},
    {"rbac-path", SA, "GET", "/@N/@S/@S", NULL, NULL, 403, "forbidden: User", "\""},
    {"node-other", NODE, "PUT", "/api/v1/nodes/@O", NULL,
     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@O\"}}", 403,
     "is forbidden", NULL},
    {"node-label", NODE, "PATCH", "/api/v1/nodes/@S", NULL,
     "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/x\":\"y\"}}}", 403, "is forbidden",
     "(NodeRestriction); the admin may"},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Appends s with the row's expansions into b. */
static void expand(struct k32_buf *b, const char *s)
{
	struct k32_err err;
	k32_buf_reset(b);
	for (; *s; s++) {
		const char *with = NULL;
		if (s[0] == '@' && s[1]) {
			switch (s[1]) {
			case 'S':
				with = ns63;
				break;
			case 'N':
				with = name253;
				break;
			case 'O':
				with = other253;
				break;
			case 'H':
				with = hostile;
				break;
			case 'P':
				with = plural63;
				break;
			case 'G':
				with = group63;
				break;
			case 'A':
				with = sa_name;
				break;
			case '3':
				with = h31;
				break;
			case '6':
				with = h63;
				break;
			case '5':
				with = h500;
				break;
			}
		}
		if (with) {
			assert_int_equal(k32_buf_append_str(b, with, &err), K32_OK);
			s++;
		} else {
			assert_int_equal(k32_buf_append(b, s, 1, &err), K32_OK);
		}
	}
}

static int req(struct fx *fx, enum who who, const char *method, const char *target,
	       const char *ctype, const char *body)
{
	struct k32_err err;
	int code = 0;
	expand(&fx->target, target);
	if (body)
		expand(&fx->body, body);
	if (ctype) {
		expand(&fx->ctype, ctype);
		ctype = k32_buf_cstr(&fx->ctype);
	}
	if (!ctype && body)
		ctype =
		    !strcmp(method, "PATCH") ? "application/merge-patch+json" : "application/json";
	k32_buf_reset(&fx->out);
	const char *tok = who == SA ? fx->sa : who == NODE ? fx->node : NULL;
	k32_status_t st = api_do_as(fx->api, tok, method, k32_buf_cstr(&fx->target), ctype,
				    body ? k32_buf_cstr(&fx->body) : NULL, body ? fx->body.len : 0,
				    &code, &fx->out, &err);
	if (st)
		fail_msg("%s %.80s: %s", method, k32_buf_cstr(&fx->target), err.msg);
	return code;
}

#define EXPECT(fx, want, call)                                                                     \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		if (got_ != (want))                                                                \
			fail_msg("line %d: HTTP %d, want %d: %.600s", __LINE__, got_, (want),      \
				 k32_buf_cstr(&(fx)->out));                                        \
	} while (0)

static void fill(char *out, size_t n, const char *head, char pad, const char *end)
{
	size_t h = strlen(head), e = strlen(end);
	memcpy(out, head, h);
	memset(out + h, pad, n - h - e);
	memcpy(out + n - e, end, e);
	out[n] = 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !memcmp(s + n - t, tail, t);
}

/* Why a message is not whole (empty, filling its buffer of cap bytes, ending in "..."), or
 * NULL when it is. */
static const char *not_whole(const char *m, size_t cap)
{
	if (!m || !m[0])
		return "is empty";
	if (strlen(m) + 1 >= cap)
		return "fills its buffer (cut?)";
	if (ends_with(m, "..."))
		return "ends with \"...\"";
	return NULL;
}

static void check_whole(const char *tag, const char *what, const char *m, size_t cap)
{
	const char *why = not_whole(m, cap);
	if (why)
		fail_msg("%s: %s %s: %s", tag, what, why, m ? m : "");
}

static int fx_setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	fill(ns63, 63, "ns-", 'n', "-end");
	fill(name253, 253, "name-", 'a', ".end");
	fill(other253, 253, "other-", 'o', ".end");
	fill(hostile, 1000, "h", 'h', "h");
	fill(h31, 31, "h", 'h', "h");
	fill(h63, 63, "h", 'h', "h");
	fill(h500, 500, "h", 'h', "h");
	fill(plural63, 63, "w", 'w', "s");
	fill(group63, 63, "g", 'g', ".example.io");
	fill(sa_name, K32_API_USER_LEN - 1 - strlen("system:serviceaccount::") - 63, "sa-", 's',
	     "-end");
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/k32-msgs-XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	struct store_config sc = {.history_events = 64};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true, .data_dir = fx.dir};
	if (api_server_new(&ac, &fx.api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx.out, k32_default_allocator(), 1 << 20, "test response");
	k32_buf_init(&fx.body, k32_default_allocator(), 1 << 16, "test body");
	k32_buf_init(&fx.target, k32_default_allocator(), 1 << 14, "test target");
	k32_buf_init(&fx.ctype, k32_default_allocator(), 1 << 12, "test content type");
	*state = &fx;

	/* the namespace, a ConfigMap, a Deployment, a bound pod and a node of the longest names */
	EXPECT(
	    &fx, 201,
	    req(&fx, ADMIN, "POST", "/api/v1/namespaces", NULL,
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"@S\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/configmaps", NULL, CM("@N")));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/serviceaccounts", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
		   "\"@A\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/serviceaccounts", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
		   "\"@N\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/serviceaccounts/@A/token", NULL,
		   "{\"spec\":{\"expirationSeconds\":3600}}"));
	cJSON *tr = cJSON_Parse(k32_buf_cstr(&fx.out));
	const char *t = cJSON_GetStringValue(k32_json_find(tr, "status.token"));
	assert_non_null(t);
	snprintf(fx.sa, sizeof(fx.sa), "%s", t);
	cJSON_Delete(tr);
	/* a node's identity keeps 63 bytes of its name; a longer one gets no token */
	assert_int_equal(api_server_node_token(fx.api, name253, fx.node, sizeof(fx.node), &err),
			 K32_ERR_OUT_OF_RANGE);
	check_whole("node-token", "k32_err", err.msg, sizeof(err.msg));
	assert_true(ends_with(err.msg, "use a shorter node name"));
	assert_int_equal(api_server_node_token(fx.api, ns63, fx.node, sizeof(fx.node), &err),
			 K32_OK);
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/nodes", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@S\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/nodes", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@N\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/nodes", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@O\"}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/apis/apps/v1/namespaces/@S/deployments", NULL,
		   "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
		   "\"@N\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{"
		   "\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":"
		   "\"c\",\"image\":\"t.wasm\"}]}}}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/pods", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"@N\"},"
		   "\"spec\":{\"nodeName\":\"@N\",\"containers\":[{\"name\":\"c\",\"image\":"
		   "\"t.wasm\"}]}}"));
	/* node @O publishes a pod server on loopback port 1, where nothing listens; pod @O runs
	 * there */
	EXPECT(&fx, 200,
	       req(&fx, ADMIN, "PUT", "/api/v1/nodes/@O/status", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"@O\"},"
		   "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":"
		   "\"127.0.0.1\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":1}}}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/api/v1/namespaces/@S/pods", NULL,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"@O\"},"
		   "\"spec\":{\"nodeName\":\"@O\",\"containers\":[{\"name\":\"c\",\"image\":"
		   "\"t.wasm\"}]}}"));
	EXPECT(&fx, 201,
	       req(&fx, ADMIN, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		   NULL,
		   "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		   "\"CustomResourceDefinition\",\"metadata\":{\"name\":\"@P.@G\"},\"spec\":{"
		   "\"group\":\"@G\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"@P\","
		   "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
		   "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
		   "\"properties\":{\"spec\":{\"type\":\"object\",\"required\":[\"count\"],"
		   "\"properties\":{\"size\":{\"type\":\"string\",\"maxLength\":8,"
		   "\"pattern\":\"^[a-z]+$\"},\"mode\":{\"type\":\"string\",\"enum\":[\"fast\","
		   "\"slow\"]},\"count\":{\"type\":\"integer\",\"minimum\":1}}}}}}}]}}"));
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	char path[96];
	k32_buf_fini(&fx->out);
	k32_buf_fini(&fx->body);
	k32_buf_fini(&fx->target);
	k32_buf_fini(&fx->ctype);
	api_server_free(fx->api);
	store_close(fx->store);
	snprintf(path, sizeof(path), "%s/tokens", fx->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sa.key", fx->dir);
	unlink(path);
	rmdir(fx->dir);
	return 0;
}

/* Reports a failed row and goes on with the next (every failing path shows in one run). */
#define FAILED(...)                                                                                \
	do {                                                                                       \
		print_error(__VA_ARGS__);                                                          \
		print_error("\n");                                                                 \
		failures++;                                                                        \
		goto next;                                                                         \
	} while (0)

static void test_messages_end_whole(void **state)
{
	struct fx *fx = *state;
	struct api_fail sizes;
	size_t cuts = api_fail_cut_count();
	bool verbose = getenv("K32_MSG_VERBOSE") != NULL;
	int failures = 0;
	const char *why;
	struct k32_buf want;
	k32_buf_init(&want, k32_default_allocator(), 1 << 14, "test want");
	for (size_t i = 0; i < NROWS; i++) {
		const struct mrow *r = &rows[i];
		int code = req(fx, r->who, r->method, r->target, r->ctype, r->body);
		cJSON *st = cJSON_Parse(k32_buf_cstr(&fx->out));
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(st, "message"));
		if (verbose)
			printf("%-16s %d %s\n", r->tag, code, msg ? msg : k32_buf_cstr(&fx->out));
		if (!r->code) { /* any answer, as long as a message it carries is whole */
			if (msg && (why = not_whole(msg, sizeof(sizes.message))))
				FAILED("%s: message %s: %s", r->tag, why, msg);
			goto next;
		}
		if (code != r->code)
			FAILED("%s: HTTP %d, want %d: %.600s", r->tag, code, r->code,
			       k32_buf_cstr(&fx->out));
		if ((why = not_whole(msg, sizeof(sizes.message))))
			FAILED("%s: message %s: %s", r->tag, why, msg ? msg : "");
		expand(&want, r->has);
		if (!strstr(msg, k32_buf_cstr(&want)))
			FAILED("%s: message lacks \"%s\": %s", r->tag, k32_buf_cstr(&want), msg);
		if (r->tail) {
			expand(&want, r->tail);
			if (!ends_with(msg, k32_buf_cstr(&want)))
				FAILED("%s: message does not end with \"%s\": %s", r->tag,
				       k32_buf_cstr(&want), msg);
		}
		const cJSON *c;
		cJSON_ArrayForEach(c, k32_json_find(st, "details.causes"))
		{
			const char *cm = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
			const char *cf = cJSON_GetStringValue(cJSON_GetObjectItem(c, "field"));
			if (verbose)
				printf("%-16s   cause %s: %s\n", "", cf, cm);
			if ((why = not_whole(cm, sizeof(sizes.causes[0].message))))
				FAILED("%s: cause %s: %s", r->tag, why, cm ? cm : "");
			if ((why = not_whole(cf, sizeof(sizes.causes[0].field))))
				FAILED("%s: cause field %s: %s", r->tag, why, cf ? cf : "");
			/* a 422's message lists whole causes (or counts those it has no room for)
			 */
			if (r->code == 422 && !strstr(msg, cm) &&
			    !strstr(msg, "more in details.causes"))
				FAILED("%s: cause \"%s\" neither in the message nor counted: %s",
				       r->tag, cm, msg);
		}
		const char *dn = cJSON_GetStringValue(k32_json_find(st, "details.name"));
		if (dn && !strstr(dn, "...") && !strstr(k32_buf_cstr(&fx->target), dn) &&
		    !strstr(k32_buf_cstr(&fx->body), dn))
			FAILED("%s: details.name \"%s\" is not the request's name", r->tag, dn);
	next:
		cJSON_Delete(st);
		if (api_fail_cut_count() != cuts) {
			cuts = api_fail_cut_count();
			print_error("%s: a message was cut (api_fail_cut_count %zu)\n", r->tag,
				    cuts);
			failures++;
		}
	}
	k32_buf_fini(&want);
	if (failures)
		fail_msg("%d failures over %zu message paths (above)", failures, NROWS);
}

/* The 422 builder keeps whole causes only, whatever their number and length. */
static void test_invalid_keeps_whole_causes(void **state)
{
	(void)state;
	static struct api_fail f;
	size_t cuts = api_fail_cut_count();
	for (int n = 1; n <= K32_API_MAX_CAUSES + 3; n++) {
		api_fail_clear(&f);
		for (int i = 0; i < n; i++)
			api_fail_add_cause(&f, "FieldValueInvalid", "spec.ports[0].protocol",
					   "Unsupported value: \"%s\": supported values: \"TCP\"",
					   K32_CLIP(hostile));
		api_fail_invalid(&f, "Service", hostile);
		check_whole("invalid", "message", f.message, sizeof(f.message));
		assert_true(ends_with(f.message, n == 1 ? "supported values: \"TCP\"" : "]"));
		if (n > K32_API_MAX_CAUSES)
			assert_non_null(strstr(f.message, "K32_API_MAX_CAUSES="));
		/* details.name: a hostile name clipped in the middle to the longest legal one */
		assert_int_equal(strlen(f.name), 253);
		assert_non_null(strstr(f.name, "..."));
	}
	assert_int_equal(api_fail_cut_count(), cuts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_messages_end_whole),
	    cmocka_unit_test(test_invalid_keeps_whole_causes),
	};
	return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
