/*
 * api_crd_sync.c - keeps the registry of custom resources equal to the CRDs in the store.
 *
 * Called when the server starts (the CRDs of a restarted server come back from its WAL with
 * their resources) and after every successful write to customresourcedefinitions. A
 * resource that no CRD serves any more has its objects deleted (kube-apiserver's
 * customresourcecleanup finalizer does the same before the CRD goes); watchers of them get
 * DELETED events. A server stopped between a CRD's deletion and that cleanup keeps the
 * orphaned objects in its store, unserved, until a CRD of the same name comes back.
 * Context: the request's thread; reads the store, writes the registry (api_crd.c).
 */
#include "api/api_crd.h"
#include "api/api_srv.h"

#include <string.h>

#include "store/store.h"

_Static_assert(sizeof(((struct api_req *)0)->group) > K32_API_CRD_GROUP_LEN,
	       "the router's group buffer must hold K32_API_CRD_GROUP_LEN");
_Static_assert(sizeof(((struct api_req *)0)->version) > K32_API_CRD_VERSION_LEN,
	       "the router's version buffer must hold K32_API_CRD_VERSION_LEN");

/* Deletes every object of group/plural, in every namespace. */
static void api_crd_cleanup(struct api_server *api, const struct api_crd_gone *g)
{
	struct store_key key = {.group = g->group, .resource = g->plural, .ns = "", .name = ""};
	struct store_list list;
	struct store_list_opts opts = {0};
	struct k32_err err;
	memset(&list, 0, sizeof(list));
	if (store_list(api->store, &key, &opts, &list, &err) != K32_OK) {
		store_list_fini(api->store, &list);
		return;
	}
	for (uint32_t i = 0; i < list.count; i++) {
		cJSON *j = api_parse_obj(list.items[i]);
		const char *ns = api_jstr(j, "metadata.namespace");
		const char *name = api_jstr(j, "metadata.name");
		if (name) {
			struct store_key dk = {.group = g->group,
					       .resource = g->plural,
					       .ns = ns ? ns : "",
					       .name = name};
			store_delete(api->store, &dk, 0, NULL, NULL, &err);
		}
		cJSON_Delete(j);
	}
	store_list_fini(api->store, &list);
}

void api_crd_sync(struct api_server *api, bool cascade)
{
	const struct api_resource *crdres =
	    api_registry_find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
	struct store_key key;
	struct store_list list;
	struct store_list_opts opts = {.limit = K32_API_MAX_CRDS};
	struct k32_err err;
	cJSON *crds[K32_API_MAX_CRDS];
	size_t n = 0;
	/* the retired rows (API_CRD_ROWS of them, ~9 KB): on the heap, not on the stack of the
	 * task that changed a CRD (make mcu's stack check: an informer's 16 KiB on a board) */
	struct api_crd_gone *gone = api_zalloc(sizeof(*gone) * API_CRD_ROWS);
	if (!gone)
		return; /* out of memory: keep the rows as they are */
	memset(&list, 0, sizeof(list));
	api_key(crdres, "", "", &key);
	if (store_list(api->store, &key, &opts, &list, &err) != K32_OK) {
		store_list_fini(api->store, &list);
		api_free(gone, sizeof(*gone) * API_CRD_ROWS);
		return; /* keep the rows as they are rather than drop every custom resource */
	}
	for (uint32_t i = 0; i < list.count && n < K32_API_MAX_CRDS; i++) {
		cJSON *j = api_parse_obj(list.items[i]);
		if (j)
			crds[n++] = j;
	}
	store_list_fini(api->store, &list);
	size_t ngone = api_crd_install((const cJSON *const *)crds, n, gone, API_CRD_ROWS);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(crds[i]);
	for (size_t i = 0; cascade && i < ngone; i++)
		api_crd_cleanup(api, &gone[i]);
	api_free(gone, sizeof(*gone) * API_CRD_ROWS);
}
