/*
 * cplane_metrics.c - metrics.k8s.io (kubectl top) for the control plane.
 *
 * The API server does not serve the metrics group; the control plane adds it to discovery
 * and answers it from the kubelets' figures (ops->stats for nodes in this process, GET
 * /stats on the pod server for the others): a pod's memory is the bytes it holds from its
 * node's pod pool, its CPU the rate of the time spent in its calls over the last >= 10 s; a
 * node's memory is its pool in use, its CPU the sum over its pods. Runs on the HTTP
 * server's task; a remote node that does not answer costs at most
 * CPLANE_METRICS_REMOTE_TIMEOUT_US.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cplane/cplane_int.h"
#include "kmeta/kmeta.h"

#define CPLANE_METRICS_REMOTE_TIMEOUT_US 500000

static const char metrics_discovery_item[] =
    "{\"metadata\":{\"name\":\"metrics.k8s.io\"},\"versions\":[{\"version\":\"v1beta1\","
    "\"resources\":[{\"resource\":\"nodes\",\"responseKind\":{\"group\":\"metrics.k8s.io\","
    "\"version\":\"v1beta1\",\"kind\":\"NodeMetrics\"},\"scope\":\"Cluster\","
    "\"singularResource\":\"\",\"verbs\":[\"get\",\"list\"]},{\"resource\":\"pods\","
    "\"responseKind\":{\"group\":\"metrics.k8s.io\",\"version\":\"v1beta1\",\"kind\":"
    "\"PodMetrics\"},\"scope\":\"Namespaced\",\"singularResource\":\"\",\"verbs\":[\"get\","
    "\"list\"]}],\"freshness\":\"Current\"}]}";
static const char metrics_group_item[] =
    "{\"name\":\"metrics.k8s.io\",\"versions\":[{\"groupVersion\":\"metrics.k8s.io/v1beta1\","
    "\"version\":\"v1beta1\"}],\"preferredVersion\":{\"groupVersion\":"
    "\"metrics.k8s.io/v1beta1\",\"version\":\"v1beta1\"}}";
static const char metrics_resources[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":"
    "\"metrics.k8s.io/v1beta1\",\"resources\":[{\"name\":\"nodes\",\"singularName\":\"\","
    "\"namespaced\":false,\"kind\":\"NodeMetrics\",\"verbs\":[\"get\",\"list\"]},{\"name\":"
    "\"pods\",\"singularName\":\"\",\"namespaced\":true,\"kind\":\"PodMetrics\",\"verbs\":["
    "\"get\",\"list\"]}]}";

/* Adds the metrics group to a /apis answer (aggregated or legacy). */
void cplane_discovery_add_metrics(struct http_response *resp)
{
	cJSON *j = NULL;
	if (!resp->body.len ||
	    k32_json_parse((const char *)resp->body.data, resp->body.len, &j, NULL))
		return;
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(j, "kind"));
	const char *item = NULL, *list = NULL;
	if (kind && !strcmp(kind, "APIGroupDiscoveryList")) {
		item = metrics_discovery_item;
		list = "items";
	} else if (kind && !strcmp(kind, "APIGroupList")) {
		item = metrics_group_item;
		list = "groups";
	}
	cJSON *arr = list ? cJSON_GetObjectItem(j, list) : NULL;
	cJSON *add = item ? cJSON_Parse(item) : NULL;
	if (cJSON_IsArray(arr) && add) {
		cJSON_AddItemToArray(arr, add);
		add = NULL;
		char *t = cJSON_PrintUnformatted(j);
		if (t) {
			k32_buf_reset(&resp->body);
			k32_buf_append_str(&resp->body, t, NULL);
			cJSON_free(t);
		}
	}
	cJSON_Delete(add);
	cJSON_Delete(j);
}

/* Every node's stats object (klet_stats_json's format) into arr. */
static void metrics_collect(struct cplane *cp, cJSON *arr)
{
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k32_default_allocator(), K32_CPLANE_OBJ_MAX_BYTES, "stats");
	cJSON *local = cJSON_CreateArray(); /* names of the nodes answered here */
	k32_mutex_lock(&cp->mu);
	for (size_t i = 0; i < K32_CPLANE_MAX_LOCAL_NODES; i++) {
		struct cplane_node *ln = &cp->nodes[i];
		if (!ln->ops)
			continue;
		cJSON_AddItemToArray(local, cJSON_CreateString(ln->ops->name(ln->node)));
		k32_buf_reset(&b);
		cJSON *j = NULL;
		if (!ln->ops->stats(ln->node, &b, &err) &&
		    !k32_json_parse((const char *)b.data, b.len, &j, NULL))
			cJSON_AddItemToArray(arr, j);
	}
	k32_mutex_unlock(&cp->mu);
	/* boards in other processes: their pod servers */
	int code = 0;
	cJSON *nodes = NULL;
	k32_buf_reset(&b);
	if (api_do(cp->api, "GET", "/api/v1/nodes", NULL, NULL, 0, &code, &b, &err) ||
	    code != 200 || k32_json_parse((const char *)b.data, b.len, &nodes, NULL))
		goto out;
	const cJSON *n;
	cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes, "items"))
	{
		const char *name = cJSON_GetStringValue(k32_json_find(n, "metadata.name"));
		char ip[64];
		uint16_t port;
		cplane_node_endpoint(n, ip, sizeof(ip), &port);
		bool is_local = false;
		const cJSON *l;
		cJSON_ArrayForEach(l, local)
		{
			is_local |= name && !strcmp(cJSON_GetStringValue(l), name);
		}
		if (!name || is_local || !port)
			continue;
		struct http_client_config cc;
		http_client_config_init(&cc);
		cc.host = ip;
		cc.port = port;
		cc.timeout_us = CPLANE_METRICS_REMOTE_TIMEOUT_US;
		struct http_client *c = NULL;
		if (http_client_new(&cc, &c, &err))
			continue;
		/* with the cluster's credentials (the node's endpoints refuse others) */
		struct http_client_response r;
		cJSON *j = NULL;
		if (!cplane_node_get(cp, c, name, "/stats", &r, &err) && r.status == 200 &&
		    !k32_json_parse((const char *)r.body.data, r.body.len, &j, NULL))
			cJSON_AddItemToArray(arr, j);
		http_client_response_fini(&r);
		http_client_free(c);
	}
out:
	cJSON_Delete(nodes);
	cJSON_Delete(local);
	k32_buf_fini(&b);
}

static void metrics_usage(cJSON *obj, uint64_t nanocores, uint64_t bytes)
{
	char v[32];
	cJSON *u = cJSON_AddObjectToObject(obj, "usage");
	snprintf(v, sizeof(v), "%llun", (unsigned long long)nanocores);
	cJSON_AddStringToObject(u, "cpu", v);
	/* as metrics-server writes it ("80Ki"); kubectl top converts to Mi itself */
	cJSON_AddStringToObject(u, "memory", kmeta_quantity_format_bytes(bytes, v, sizeof(v)));
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *v = k32_json_find(o, path);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* GET /apis/metrics.k8s.io/v1beta1/... */
void cplane_serve_metrics(struct cplane *cp, struct http_request *req, struct http_response *resp)
{
	char path[400];
	if (http_url_decode(req->path, false, path, sizeof(path), NULL)) {
		cplane_status_fail(resp, 400, "BadRequest", "bad path");
		return;
	}
	const char *rest = path + strlen(CPLANE_METRICS_PREFIX);
	if (!*rest || !strcmp(rest, "/")) {
		http_response_set(resp, 200, "application/json", metrics_resources,
				  strlen(metrics_resources));
		return;
	}
	char ns[64] = "", one[128] = "";
	bool nodes = false;
	if (!strncmp(rest, "/nodes", 6) && (!rest[6] || rest[6] == '/')) {
		nodes = true;
		if (rest[6])
			snprintf(one, sizeof(one), "%.127s", rest + 7);
	} else if (!strcmp(rest, "/pods")) {
		/* all namespaces */
	} else if (!strncmp(rest, "/namespaces/", 12)) {
		const char *a = rest + 12, *b = strchr(a, '/');
		if (!b || (size_t)(b - a) >= sizeof(ns) || strncmp(b, "/pods", 5) ||
		    (b[5] && b[5] != '/')) {
			cplane_status_fail(resp, 404, "NotFound",
					   "the server could not find the requested resource");
			return;
		}
		memcpy(ns, a, (size_t)(b - a));
		ns[b - a] = 0;
		if (b[5])
			snprintf(one, sizeof(one), "%.127s", b + 6);
	} else {
		cplane_status_fail(resp, 404, "NotFound",
				   "the server could not find the requested resource");
		return;
	}
	cJSON *stats = cJSON_CreateArray();
	metrics_collect(cp, stats);
	char ts[32];
	cplane_fmt_time(k32_plat()->wall_s(), ts, sizeof(ts));
	cJSON *list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "kind", nodes ? "NodeMetricsList" : "PodMetricsList");
	cJSON_AddStringToObject(list, "apiVersion", "metrics.k8s.io/v1beta1");
	cJSON_AddObjectToObject(list, "metadata");
	cJSON *items = cJSON_AddArrayToObject(list, "items");
	const cJSON *st;
	cJSON_ArrayForEach(st, stats)
	{
		const char *node = cJSON_GetStringValue(cJSON_GetObjectItem(st, "node"));
		uint64_t cpu = 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(st, "pods"))
		{
			cpu += (uint64_t)jnum(p, "cpuNanocores");
			const char *pns = cJSON_GetStringValue(cJSON_GetObjectItem(p, "namespace"));
			const char *pn = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
			const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(p, "state"));
			if (nodes || !pns || !pn || !state || strcmp(state, "running") ||
			    (ns[0] && strcmp(ns, pns)) || (one[0] && strcmp(one, pn)))
				continue;
			cJSON *it = cJSON_CreateObject();
			cJSON *md = cJSON_AddObjectToObject(it, "metadata");
			cJSON_AddStringToObject(md, "name", pn);
			cJSON_AddStringToObject(md, "namespace", pns);
			cJSON_AddStringToObject(md, "creationTimestamp", ts);
			cJSON_AddStringToObject(it, "timestamp", ts);
			cJSON_AddStringToObject(it, "window", "10s");
			cJSON *cs = cJSON_AddArrayToObject(it, "containers");
			cJSON *c = cJSON_CreateObject();
			const char *cn = cJSON_GetStringValue(cJSON_GetObjectItem(p, "container"));
			cJSON_AddStringToObject(c, "name", cn ? cn : "main");
			metrics_usage(c, (uint64_t)jnum(p, "cpuNanocores"),
				      (uint64_t)jnum(p, "memory.poolBytes"));
			cJSON_AddItemToArray(cs, c);
			cJSON_AddItemToArray(items, it);
		}
		if (nodes && node && (!one[0] || !strcmp(one, node))) {
			cJSON *it = cJSON_CreateObject();
			cJSON *md = cJSON_AddObjectToObject(it, "metadata");
			cJSON_AddStringToObject(md, "name", node);
			cJSON_AddStringToObject(md, "creationTimestamp", ts);
			cJSON_AddStringToObject(it, "timestamp", ts);
			cJSON_AddStringToObject(it, "window", "10s");
			metrics_usage(it, cpu, (uint64_t)jnum(st, "pool.usedBytes"));
			cJSON_AddItemToArray(items, it);
		}
	}
	cJSON_Delete(stats);
	cJSON *out = list;
	if (one[0]) {
		cJSON *first = cJSON_DetachItemFromArray(items, 0);
		cJSON_Delete(list);
		if (!first) {
			char m[300];
			snprintf(m, sizeof(m), "%s.metrics.k8s.io \"%s\" not found",
				 nodes ? "nodemetrics" : "podmetrics", one);
			cplane_status_fail(resp, 404, "NotFound", m);
			return;
		}
		cJSON_AddStringToObject(first, "kind", nodes ? "NodeMetrics" : "PodMetrics");
		cJSON_AddStringToObject(first, "apiVersion", "metrics.k8s.io/v1beta1");
		out = first;
	}
	char *t = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	http_response_set(resp, 200, "application/json", t ? t : "{}", t ? strlen(t) : 2);
	cJSON_free(t);
}
