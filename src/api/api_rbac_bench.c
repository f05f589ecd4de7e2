/*
 * api_rbac_bench.c - what RBAC adds to a request, in instructions (no timing): N in-process
 * GETs of one pod as the admin (no RBAC) or with a ServiceAccount token (RBAC read from the
 * store: the default ClusterRoles plus B ClusterRoleBindings and B RoleBindings of other
 * subjects, and the one RoleBinding that allows it). Run both under valgrind and compare:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null api-rbac-bench admin 200 20
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null api-rbac-bench sa 200 20
 *
 * (instructions per request = difference of the totals / N; the setup is the same.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

static struct api_server *g_api;
static struct k32_buf g_out;

static int run(const char *token, const char *method, const char *target, const char *body)
{
	struct k32_err err;
	int code = 0;
	k32_buf_reset(&g_out);
	if (api_do_as(g_api, token, method, target, body ? "application/json" : NULL, body,
		      body ? strlen(body) : 0, &code, &g_out, &err) != K32_OK)
		return -1;
	return code;
}

static void must(int code, int want, const char *what)
{
	if (code != want) {
		fprintf(stderr, "api-rbac-bench: %s: HTTP %d, want %d: %.300s\n", what, code, want,
			k32_buf_cstr(&g_out));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "admin") && strcmp(argv[1], "sa"))) {
		fprintf(stderr, "usage: api-rbac-bench admin|sa [requests] [bindings]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 200;
	int b = argc > 3 ? atoi(argv[3]) : 20;
	struct k32_err err;
	struct store *store = NULL;
	struct store_config sc = {0};
	k32_log_set_stderr(false);
	if (store_open(&sc, &store, &err))
		return 1;
	struct api_config ac = {.store = store, .bootstrap = true};
	if (api_server_new(&ac, &g_api, &err))
		return 1;
	k32_buf_init(&g_out, k32_default_allocator(), 4u << 20, "bench response");
	char body[512];
	must(run(NULL, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"app\"}}"), 201,
	     "ns");
	must(run(NULL, "POST", "/api/v1/namespaces/app/serviceaccounts",
		 "{\"metadata\":{\"name\":\"reader\"}}"),
	     201, "sa");
	must(run(NULL, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/app/roles",
		 "{\"metadata\":{\"name\":\"r\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
		 "[\"pods\"],\"verbs\":[\"get\",\"list\",\"watch\"]}]}"),
	     201, "role");
	for (int i = 0; i < b; i++) {
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"crb-%d\"},\"roleRef\":{\"apiGroup\":\"rbac."
			 "authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"view\"},"
			 "\"subjects\":[{\"kind\":\"User\",\"name\":\"user-%d\"}]}",
			 i, i);
		must(run(NULL, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
			 body),
		     201, "crb");
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"name\":\"rb-%d\"},\"roleRef\":{\"apiGroup\":\"rbac."
			 "authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"r\"},\"subjects\":[{"
			 "\"kind\":\"ServiceAccount\",\"name\":\"other-%d\"}]}",
			 i, i);
		must(run(NULL, "POST",
			 "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings", body),
		     201, "rb");
	}
	must(
	    run(NULL, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings",
		"{\"metadata\":{\"name\":\"zz\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization."
		"k8s."
		"io\",\"kind\":\"Role\",\"name\":\"r\"},\"subjects\":[{\"kind\":\"ServiceAccount\","
		"\"name\":\"reader\"}]}"),
	    201, "rb");
	must(run(NULL, "POST", "/api/v1/namespaces/app/pods",
		 "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
		 "\"image\":\"a.wasm\"}]}}"),
	     201, "pod");
	must(run(NULL, "POST", "/api/v1/namespaces/app/serviceaccounts/reader/token", "{}"), 201,
	     "token");
	cJSON *tr = cJSON_Parse(k32_buf_cstr(&g_out));
	char *tok = strdup(cJSON_GetStringValue(k32_json_find(tr, "status.token")));
	cJSON_Delete(tr);
	const char *as = strcmp(argv[1], "sa") ? NULL : tok;
	for (int i = 0; i < n; i++)
		must(run(as, "GET", "/api/v1/namespaces/app/pods/p", NULL), 200, "get");
	printf("api-rbac-bench: %d GETs as %s with %d+%d other bindings\n", n, argv[1], b, b);
	free(tok);
	k32_buf_fini(&g_out);
	api_server_free(g_api);
	store_close(store);
	return 0;
}
