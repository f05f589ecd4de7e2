/*
 * ctrl_endpoints.c - the endpoints controller: keeps each Service's Endpoints (core/v1, what
 * `kubectl describe svc` and the pod servers read) and EndpointSlices (discovery.k8s.io/v1)
 * equal to the pods its selector matches.
 *
 * kube32 has no pod network: a pod is reached at its node's pod server (the Node's InternalIP
 * and status.daemonEndpoints.kubeletEndpoint.Port) with header X-Kube32-Pod. So an endpoint
 * here is that pod server's address and port, with the pod as targetRef and the node as
 * nodeName; the Endpoints object has one subset per pod server (its ports are the Service's
 * port names with the pod server's port), and there is one EndpointSlice per pod server
 * (split every K32_SVC_SLICE_ENDPOINTS_MAX endpoints), named <service>-<hash of the server>
 * and owned by the Service. Ready pods (condition Ready, not terminating) are addresses;
 * running pods that are not ready are notReadyAddresses (slices: ready=false); finished
 * pods, pods not bound yet and pods on nodes that publish no pod server are left out.
 *
 * A Service without a selector (the API server's own `kubernetes`) is left alone: its
 * Endpoints are written by whoever made it. Endpoints this controller wrote carry the label
 * endpointslice.kubernetes.io/skip-mirror=true (as upstream's); they and the slices with
 * managed-by endpointslice-controller.k8s.io are deleted when their Service is gone.
 *
 * Reads: services, pods and nodes from the informer caches (ctrl_list); the current
 * Endpoints and slices of a Service from the API (one GET and one list per Service whose
 * pods or nodes changed). Writes only what differs; one budget unit per write; at most
 * K32_SVC_MAX Services per pass.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_crc32.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"

#define EP_MANAGED_BY_KEY "endpointslice.kubernetes.io/managed-by"
#define EP_MANAGED_BY	  "endpointslice-controller.k8s.io"
#define EP_SERVICE_NAME	  "kubernetes.io/service-name"
#define EP_SKIP_MIRROR	  "endpointslice.kubernetes.io/skip-mirror"

/* One pod the Service selects, with where it is reached. */
struct ep_entry {
	const cJSON *pod;
	const char *name;
	const char *node;
	char ip[KMETA_HOST_LEN];
	uint16_t port;
	bool ready;
	bool terminating;
};

static bool ep_collect(struct ctrl *c, cJSON *item, void *ctx)
{
	(void)c;
	cJSON *d = cJSON_Duplicate(item, true);
	if (d)
		cJSON_AddItemToArray(ctx, d);
	return d != NULL;
}

/* A Service's selector (a plain map) against labels: every pair present; an empty or absent
 * selector selects nothing (the Service's endpoints are then not managed). */
static bool ep_selects(const cJSON *sel, const cJSON *labels)
{
	if (!cJSON_IsObject(sel) || !sel->child)
		return false;
	const cJSON *kv;
	cJSON_ArrayForEach(kv, sel)
	{
		const char *v = ctrl_label(labels, kv->string);
		if (!cJSON_IsString(kv) || !v || strcmp(v, kv->valuestring))
			return false;
	}
	return true;
}

/* The nodes, copied from the cache on the first Service with a selector of a pass (a pass
 * for Services without one, or none, copies nothing), sorted by name for the look-ups. */
struct ep_nodes {
	cJSON *arr;
	const cJSON **by_name;
	size_t n;
	bool loaded;
};

static const char *ep_node_name(const cJSON *n)
{
	const char *s = ctrl_jstr(n, "metadata.name");
	return s ? s : "";
}

static int ep_node_cmp(const void *a, const void *b)
{
	return strcmp(ep_node_name(*(const cJSON *const *)a),
		      ep_node_name(*(const cJSON *const *)b));
}

static bool ep_nodes_load(struct ctrl *c, struct ep_nodes *en)
{
	if (en->loaded)
		return en->arr != NULL;
	en->loaded = true;
	en->arr = ctrl_list_array(c, "/api/v1/nodes", NULL);
	size_t count = en->arr ? (size_t)cJSON_GetArraySize(en->arr) : 0;
	en->by_name = count ? ctrl_zalloc(count * sizeof(*en->by_name)) : NULL;
	if (count && !en->by_name) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "endpoints: out of memory");
		cJSON_Delete(en->arr);
		en->arr = NULL;
		return false;
	}
	const cJSON *n;
	cJSON_ArrayForEach(n, en->arr) en->by_name[en->n++] = n;
	if (en->n > 1) /* by_name is NULL when there is no node */
		qsort(en->by_name, en->n, sizeof(*en->by_name), ep_node_cmp);
	return en->arr != NULL;
}

static void ep_nodes_free(struct ep_nodes *en)
{
	ctrl_free(en->by_name, en->n * sizeof(*en->by_name));
	cJSON_Delete(en->arr);
}

static const cJSON *ep_node_find(const struct ep_nodes *en, const char *name)
{
	size_t lo = 0, hi = en->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(ep_node_name(en->by_name[mid]), name);
		if (!r)
			return en->by_name[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int ep_entry_cmp(const void *a, const void *b)
{
	const struct ep_entry *x = a, *y = b;
	int d = strcmp(x->ip, y->ip);
	if (!d)
		d = (int)x->port - (int)y->port;
	return d ? d : strcmp(x->name, y->name);
}

/* The pods of svc with their pod servers into e (at most cap), sorted by server then name. */
static size_t ep_gather(const cJSON *svc, const cJSON *pods, const struct ep_nodes *nodes,
			struct ep_entry *e, size_t cap, size_t *dropped)
{
	const cJSON *sel = k32_json_find(svc, "spec.selector");
	size_t n = 0;
	*dropped = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, pods)
	{
		if (!ep_selects(sel, k32_json_find(p, "metadata.labels")) || ctrl_pod_terminal(p))
			continue;
		const char *node = ctrl_jstr(p, "spec.nodeName");
		const char *name = ctrl_jstr(p, "metadata.name");
		const cJSON *no = node ? ep_node_find(nodes, node) : NULL;
		if (!no || !name)
			continue;
		if (n >= cap) {
			(*dropped)++;
			continue;
		}
		struct ep_entry *x = &e[n];
		kmeta_node_pod_server(no, x->ip, sizeof(x->ip), &x->port);
		if (!x->port)
			continue; /* the node publishes no pod server: nothing reaches the pod */
		x->pod = p;
		x->name = name;
		x->node = node;
		x->terminating = ctrl_deleting(p);
		x->ready = ctrl_pod_ready(p) && !x->terminating;
		n++;
	}
	if (n > 1) /* e is NULL when the cluster has no pods: qsort wants a pointer */
		qsort(e, n, sizeof(*e), ep_entry_cmp);
	return n;
}

static cJSON *ep_target_ref(const struct ep_entry *x, const char *ns)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "kind", "Pod");
	cJSON_AddStringToObject(r, "namespace", ns);
	cJSON_AddStringToObject(r, "name", x->name);
	const char *uid = ctrl_jstr(x->pod, "metadata.uid");
	if (uid)
		cJSON_AddStringToObject(r, "uid", uid);
	return r;
}

/* The ports of a subset or slice: each Service port's name with the pod server's port. */
static cJSON *ep_ports(const cJSON *svc, uint16_t port)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *sp;
	cJSON_ArrayForEach(sp, k32_json_find(svc, "spec.ports"))
	{
		cJSON *o = cJSON_CreateObject();
		const char *nm = ctrl_jstr(sp, "name");
		if (nm && nm[0])
			cJSON_AddStringToObject(o, "name", nm);
		cJSON_AddNumberToObject(o, "port", port);
		cJSON_AddStringToObject(o, "protocol", "TCP");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The subsets of the Endpoints object: one per pod server (e is sorted by server). */
static cJSON *ep_subsets(const cJSON *svc, const struct ep_entry *e, size_t n, const char *ns)
{
	cJSON *subsets = cJSON_CreateArray();
	cJSON *cur = NULL, *ready = NULL, *unready = NULL;
	size_t addresses = 0;
	for (size_t i = 0; i < n && addresses < K32_SVC_ENDPOINTS_MAX; i++, addresses++) {
		if (!cur || strcmp(e[i].ip, e[i - 1].ip) || e[i].port != e[i - 1].port) {
			cur = cJSON_CreateObject();
			ready = cJSON_AddArrayToObject(cur, "addresses");
			unready = cJSON_AddArrayToObject(cur, "notReadyAddresses");
			cJSON_AddItemToObject(cur, "ports", ep_ports(svc, e[i].port));
			cJSON_AddItemToArray(subsets, cur);
		}
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "ip", e[i].ip);
		cJSON_AddStringToObject(a, "nodeName", e[i].node);
		cJSON_AddItemToObject(a, "targetRef", ep_target_ref(&e[i], ns));
		cJSON_AddItemToArray(e[i].ready ? ready : unready, a);
	}
	/* upstream omits empty lists */
	cJSON *s;
	cJSON_ArrayForEach(s, subsets)
	{
		if (!cJSON_GetArraySize(cJSON_GetObjectItem(s, "addresses")))
			cJSON_DeleteItemFromObject(s, "addresses");
		if (!cJSON_GetArraySize(cJSON_GetObjectItem(s, "notReadyAddresses")))
			cJSON_DeleteItemFromObject(s, "notReadyAddresses");
	}
	return subsets;
}

static const char *ep_address_type(const char *ip)
{
	if (strchr(ip, ':'))
		return "IPv6";
	for (const char *p = ip; *p; p++)
		if (!(*p == '.' || (*p >= '0' && *p <= '9')))
			return "FQDN";
	return "IPv4";
}

/* Writes ns/name's Endpoints when they differ from subsets (taken). */
static void ep_write_endpoints(struct ctrl *c, const char *ns, const char *name, cJSON *subsets,
			       size_t dropped)
{
	char path[400];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/endpoints/%s", ns, name);
	cJSON *cur = NULL;
	struct k32_err err;
	k32_status_t st = ctrl_get(c, path, &cur, &err);
	if (st && st != K32_ERR_NOT_FOUND) {
		cJSON_Delete(subsets);
		return;
	}
	const cJSON *cs = cur ? cJSON_GetObjectItem(cur, "subsets") : NULL;
	bool same_subsets = cs ? cJSON_Compare(cs, subsets, true) : !cJSON_GetArraySize(subsets);
	const char *mirror =
	    cur ? ctrl_label(k32_json_find(cur, "metadata.labels"), EP_SKIP_MIRROR) : NULL;
	if (cur && same_subsets && mirror) {
		cJSON_Delete(cur);
		cJSON_Delete(subsets);
		return;
	}
	if (!ctrl_charge(c)) {
		cJSON_Delete(cur);
		cJSON_Delete(subsets);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "Endpoints");
	cJSON *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	const char *rv = cur ? ctrl_jstr(cur, "metadata.resourceVersion") : NULL;
	if (rv)
		cJSON_AddStringToObject(md, "resourceVersion", rv);
	cJSON *labels = cJSON_AddObjectToObject(md, "labels");
	cJSON_AddStringToObject(labels, EP_SKIP_MIRROR, "true");
	if (dropped) {
		char m[96];
		snprintf(m, sizeof(m), "%zu pods past K32_SVC_ENDPOINTS_MAX (%u)", dropped,
			 (unsigned)K32_SVC_ENDPOINTS_MAX);
		cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
		cJSON_AddStringToObject(ann, "endpoints.kubernetes.io/over-capacity", "truncated");
		cJSON_AddStringToObject(ann, "kube32.io/endpoints-dropped", m);
	}
	cJSON_AddItemToObject(o, "subsets", subsets);
	if (cur) {
		ctrl_write(c, "PUT", path, "application/json", o, NULL);
	} else {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/endpoints", ns);
		ctrl_write(c, "POST", path, "application/json", o, NULL);
	}
	cJSON_Delete(o);
	cJSON_Delete(cur);
}

/* The slices svc should have (an array of complete objects). */
static cJSON *ep_slices_want(const cJSON *svc, const struct ep_entry *e, size_t n, const char *ns,
			     const char *name)
{
	cJSON *want = cJSON_CreateArray();
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && !strcmp(e[j].ip, e[i].ip) && e[j].port == e[i].port)
			j++;
		char server[KMETA_HOST_LEN + 8];
		snprintf(server, sizeof(server), "%s:%u", e[i].ip, (unsigned)e[i].port);
		uint32_t h = k32_crc32(0, (const uint8_t *)server, strlen(server));
		for (size_t k = i, part = 0; k < j; part++) {
			char sname[CTRL_NAME_LEN];
			if (part)
				snprintf(sname, sizeof(sname), "%.200s-%08" PRIx32 "-%zu", name, h,
					 part);
			else
				snprintf(sname, sizeof(sname), "%.200s-%08" PRIx32, name, h);
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "apiVersion", "discovery.k8s.io/v1");
			cJSON_AddStringToObject(o, "kind", "EndpointSlice");
			cJSON *md = cJSON_AddObjectToObject(o, "metadata");
			cJSON_AddStringToObject(md, "name", sname);
			cJSON_AddStringToObject(md, "namespace", ns);
			cJSON *labels = cJSON_AddObjectToObject(md, "labels");
			cJSON_AddStringToObject(labels, EP_SERVICE_NAME, name);
			cJSON_AddStringToObject(labels, EP_MANAGED_BY_KEY, EP_MANAGED_BY);
			cJSON_AddItemToObject(md, "ownerReferences",
					      ctrl_owner_ref(svc, "v1", "Service"));
			cJSON_AddStringToObject(o, "addressType", ep_address_type(e[i].ip));
			cJSON *eps = cJSON_AddArrayToObject(o, "endpoints");
			for (size_t m = 0; k < j && m < K32_SVC_SLICE_ENDPOINTS_MAX; m++, k++) {
				cJSON *ep = cJSON_CreateObject();
				cJSON *addrs = cJSON_AddArrayToObject(ep, "addresses");
				cJSON_AddItemToArray(addrs, cJSON_CreateString(e[k].ip));
				cJSON *cond = cJSON_AddObjectToObject(ep, "conditions");
				cJSON_AddBoolToObject(cond, "ready", e[k].ready);
				cJSON_AddBoolToObject(cond, "serving", e[k].ready);
				cJSON_AddBoolToObject(cond, "terminating", e[k].terminating);
				cJSON_AddStringToObject(ep, "nodeName", e[k].node);
				cJSON_AddItemToObject(ep, "targetRef", ep_target_ref(&e[k], ns));
				cJSON_AddItemToArray(eps, ep);
			}
			cJSON_AddItemToObject(o, "ports", ep_ports(svc, e[i].port));
			cJSON_AddItemToArray(want, o);
		}
		i = j;
	}
	return want;
}

static cJSON *ep_find_named(const cJSON *arr, const char *name)
{
	cJSON *o;
	cJSON_ArrayForEach(o, arr)
	{
		const char *n = ctrl_jstr(o, "metadata.name");
		if (n && !strcmp(n, name))
			return o;
	}
	return NULL;
}

static bool ep_slice_same(const cJSON *a, const cJSON *b)
{
	static const char *const keys[] = {"addressType", "endpoints", "ports"};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *x = cJSON_GetObjectItem(a, keys[i]),
			    *y = cJSON_GetObjectItem(b, keys[i]);
		if (!x || !y || !cJSON_Compare(x, y, true))
			return false;
	}
	return true;
}

static void ep_delete(struct ctrl *c, const char *prefix, const char *resource, const char *ns,
		      const char *name)
{
	if (!ctrl_charge(c))
		return;
	char path[400];
	snprintf(path, sizeof(path), "%s/namespaces/%s/%s/%s", prefix, ns, resource, name);
	ctrl_write(c, "DELETE", path, NULL, NULL, NULL);
}

static void ep_sync_slices(struct ctrl *c, const cJSON *svc, cJSON *want, const char *ns,
			   const char *name)
{
	char path[512], sel[300], enc[400];
	snprintf(sel, sizeof(sel), EP_SERVICE_NAME "=%s", name);
	ctrl_url_encode(sel, enc, sizeof(enc));
	snprintf(path, sizeof(path),
		 "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?labelSelector=%s", ns,
		 enc);
	cJSON *have = ctrl_list_array(c, path, NULL);
	if (!have)
		return;
	const char *uid = ctrl_jstr(svc, "metadata.uid");
	cJSON *w;
	cJSON_ArrayForEach(w, want)
	{
		const cJSON *h = ep_find_named(have, ctrl_jstr(w, "metadata.name"));
		if (h && ep_slice_same(h, w))
			continue;
		if (!ctrl_charge(c))
			break;
		if (h) {
			const char *rv = ctrl_jstr(h, "metadata.resourceVersion");
			if (rv)
				cJSON_AddStringToObject(cJSON_GetObjectItem(w, "metadata"),
							"resourceVersion", rv);
			snprintf(path, sizeof(path),
				 "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices/%s", ns,
				 ctrl_jstr(w, "metadata.name"));
			ctrl_write(c, "PUT", path, "application/json", w, NULL);
		} else {
			snprintf(path, sizeof(path),
				 "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices", ns);
			ctrl_write(c, "POST", path, "application/json", w, NULL);
		}
	}
	const cJSON *h;
	cJSON_ArrayForEach(h, have)
	{
		const char *hn = ctrl_jstr(h, "metadata.name");
		const char *mb = ctrl_label(k32_json_find(h, "metadata.labels"), EP_MANAGED_BY_KEY);
		const char *owner = ctrl_controller_uid(h);
		/* ours: managed by us, or owned by this Service */
		bool ours =
		    (mb && !strcmp(mb, EP_MANAGED_BY)) || (owner && uid && !strcmp(owner, uid));
		if (hn && ours && !ep_find_named(want, hn))
			ep_delete(c, "/apis/discovery.k8s.io/v1", "endpointslices", ns, hn);
	}
	cJSON_Delete(have);
}

static void ep_sync(struct ctrl *c, const cJSON *svc, struct ep_nodes *nodes)
{
	const char *ns = ctrl_jstr(svc, "metadata.namespace");
	const char *name = ctrl_jstr(svc, "metadata.name");
	const cJSON *sel = k32_json_find(svc, "spec.selector");
	if (!ns || !name || !cJSON_IsObject(sel) || !sel->child || ctrl_deleting(svc))
		return; /* no selector: its Endpoints are someone else's */
	if (!ep_nodes_load(c, nodes))
		return;
	char path[300];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	cJSON *pods = cJSON_CreateArray();
	if (!pods || ctrl_list(c, path, ep_collect, pods)) {
		cJSON_Delete(pods);
		return;
	}
	size_t cap = (size_t)cJSON_GetArraySize(pods);
	struct ep_entry *e = cap ? ctrl_zalloc(cap * sizeof(*e)) : NULL;
	size_t dropped = 0, n = 0;
	if (e || !cap) {
		n = ep_gather(svc, pods, nodes, e, cap, &dropped);
		ep_write_endpoints(c, ns, name, ep_subsets(svc, e, n, ns),
				   n > K32_SVC_ENDPOINTS_MAX ? n - K32_SVC_ENDPOINTS_MAX : 0);
		cJSON *want = ep_slices_want(svc, e, n, ns, name);
		if (want)
			ep_sync_slices(c, svc, want, ns, name);
		cJSON_Delete(want);
	}
	ctrl_free(e, cap * sizeof(*e));
	cJSON_Delete(pods);
	(void)dropped;
}

static bool ep_service_exists(const cJSON *svcs, const char *ns, const char *name)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, svcs)
	{
		const char *sn = ctrl_jstr(s, "metadata.name");
		const char *sns = ctrl_jstr(s, "metadata.namespace");
		if (sn && sns && !strcmp(sn, name) && !strcmp(sns, ns))
			return true;
	}
	return false;
}

/* Deletes the Endpoints and slices this controller made for Services that are gone. */
static void ep_orphans(struct ctrl *c, const cJSON *svcs)
{
	char enc[200], path[300];
	ctrl_url_encode(EP_SKIP_MIRROR "=true", enc, sizeof(enc));
	snprintf(path, sizeof(path), "/api/v1/endpoints?labelSelector=%s", enc);
	cJSON *eps = ctrl_list_array(c, path, NULL);
	const cJSON *o;
	cJSON_ArrayForEach(o, eps)
	{
		const char *ns = ctrl_jstr(o, "metadata.namespace"),
			   *n = ctrl_jstr(o, "metadata.name");
		if (ns && n && !ep_service_exists(svcs, ns, n))
			ep_delete(c, "/api/v1", "endpoints", ns, n);
	}
	cJSON_Delete(eps);
	ctrl_url_encode(EP_MANAGED_BY_KEY "=" EP_MANAGED_BY, enc, sizeof(enc));
	snprintf(path, sizeof(path), "/apis/discovery.k8s.io/v1/endpointslices?labelSelector=%s",
		 enc);
	cJSON *sl = ctrl_list_array(c, path, NULL);
	cJSON_ArrayForEach(o, sl)
	{
		const char *ns = ctrl_jstr(o, "metadata.namespace"),
			   *n = ctrl_jstr(o, "metadata.name");
		const char *svc = ctrl_label(k32_json_find(o, "metadata.labels"), EP_SERVICE_NAME);
		if (ns && n && (!svc || !ep_service_exists(svcs, ns, svc)))
			ep_delete(c, "/apis/discovery.k8s.io/v1", "endpointslices", ns, n);
	}
	cJSON_Delete(sl);
}

void ctrl_endpoints_pass(struct ctrl *c)
{
	cJSON *svcs = ctrl_list_array(c, "/api/v1/services", NULL);
	struct ep_nodes nodes = {0};
	if (!svcs)
		return;
	uint32_t done = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, svcs)
	{
		if (done >= K32_SVC_MAX) {
			K32_LOGW("ctrl",
				 "endpoints: %d Services, past K32_SVC_MAX (%u): the rest have no "
				 "endpoints until some are deleted",
				 cJSON_GetArraySize(svcs), (unsigned)K32_SVC_MAX);
			break;
		}
		if (c->budget == 0) {
			c->more = true;
			break;
		}
		ep_sync(c, s, &nodes);
		done++;
	}
	if (!c->more)
		ep_orphans(c, svcs);
	ep_nodes_free(&nodes);
	cJSON_Delete(svcs);
}
