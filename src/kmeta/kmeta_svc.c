/*
 * kmeta_svc.c - reading where a pod is reached: a Node's pod server and a Service's ready
 * endpoints (core/v1 Endpoints, as the endpoints controller writes them: one subset per node
 * pod server, its port that server's, each address naming the pod and its node).
 * The API server's proxy, the pod servers' Service routing and the control plane's log
 * proxy read them with these functions, so they agree on what an endpoint is.
 */
#include <stdio.h>
#include <string.h>

#include "kmeta/kmeta.h"

void kmeta_node_pod_server(const cJSON *node, char *ip, size_t ipcap, uint16_t *port)
{
	const cJSON *p = k32_json_find(node, "status.daemonEndpoints.kubeletEndpoint.Port");
	*port = cJSON_IsNumber(p) && p->valuedouble >= 1 && p->valuedouble <= 65535
		    ? (uint16_t)p->valuedouble
		    : 0;
	snprintf(ip, ipcap, "127.0.0.1");
	const cJSON *a;
	cJSON_ArrayForEach(a, k32_json_find(node, "status.addresses"))
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(a, "type"));
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(a, "address"));
		if (t && v && !strcmp(t, "InternalIP") && kmeta_host_ok(v) && strlen(v) < ipcap)
			snprintf(ip, ipcap, "%s", v);
	}
}

bool kmeta_host_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= KMETA_HOST_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '.' || c == ':' || c == '-'))
			return false;
	}
	return true;
}

/* A name that fits cap and holds only what object names hold. */
static bool name_copy(const char *s, char *out, size_t cap)
{
	if (!s || !s[0] || strlen(s) >= cap)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '-' ||
		      *p == '.'))
			return false;
	snprintf(out, cap, "%s", s);
	return true;
}

/* Fills out from one address of a subset whose pod server port is port; false if unusable. */
static bool endpoint_read(const cJSON *addr, uint16_t port, struct kmeta_endpoint *out)
{
	const char *ip = cJSON_GetStringValue(cJSON_GetObjectItem(addr, "ip"));
	const cJSON *ref = cJSON_GetObjectItem(addr, "targetRef");
	if (!ip || !kmeta_host_ok(ip) || !port)
		return false;
	if (!name_copy(cJSON_GetStringValue(cJSON_GetObjectItem(ref, "name")), out->pod,
		       sizeof(out->pod)) ||
	    !name_copy(cJSON_GetStringValue(cJSON_GetObjectItem(addr, "nodeName")), out->node,
		       sizeof(out->node)))
		return false;
	snprintf(out->ip, sizeof(out->ip), "%s", ip);
	out->port = port;
	return true;
}

uint32_t kmeta_endpoints_pick(const cJSON *eps, uint32_t index, struct kmeta_endpoint *out)
{
	/* two rounds: count the usable addresses, then take the one at index % count */
	uint32_t count = 0;
	struct kmeta_endpoint tmp;
	for (int round = 0; round < 2; round++) {
		uint32_t i = 0;
		if (round == 1) {
			if (!count || !out)
				return count;
			index %= count;
		}
		const cJSON *sub;
		cJSON_ArrayForEach(sub, cJSON_GetObjectItem(eps, "subsets"))
		{
			const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(sub, "ports"), 0);
			const cJSON *pn = cJSON_GetObjectItem(p, "port");
			uint16_t port =
			    cJSON_IsNumber(pn) && pn->valuedouble >= 1 && pn->valuedouble <= 65535
				? (uint16_t)pn->valuedouble
				: 0;
			const cJSON *a;
			cJSON_ArrayForEach(a, cJSON_GetObjectItem(sub, "addresses"))
			{
				if (i >= K32_SVC_ENDPOINTS_MAX)
					break;
				if (!endpoint_read(a, port, round ? out : &tmp))
					continue;
				if (round == 1 && i == index)
					return count;
				i++;
			}
		}
		count = i;
	}
	return count;
}
