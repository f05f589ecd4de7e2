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
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

struct fx {
	struct store *store;
	struct api_server *api;
	struct k32_buf out;
};

static int fx_setup(void **state)
{
	static struct fx fx;
	struct k32_err err;
	memset(&fx, 0, sizeof(fx));
	k32_log_set_stderr(false);
	struct store_config sc = {.data_dir = NULL, .history_events = 64};
	assert_int_equal(store_open(&sc, &fx.store, &err), K32_OK);
	struct api_config ac = {.store = fx.store, .bootstrap = true};
	if (api_server_new(&ac, &fx.api, &err))
		fail_msg("api_server_new: %s", err.msg);
	k32_buf_init(&fx.out, k32_default_allocator(), 1 << 20, "test response");
	*state = &fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	k32_buf_fini(&fx->out);
	api_server_free(fx->api);
	store_close(fx->store);
	return 0;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_strings, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
