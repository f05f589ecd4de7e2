/*
 * api_service.c - the strategies of Service (core/v1), Endpoints (core/v1) and EndpointSlice
 * (discovery.k8s.io/v1): defaults and validation.
 *
 * kube32 has no cluster network and allocates no cluster IPs: a Service names a set of pods
 * by its selector, and is reached through any node's pod server (header
 * X-Kube32-Service: <namespace>/<name>) or the API server's services/proxy, both balanced over
 * the ready pods the endpoints controller (src/ctrl/ctrl_endpoints.c) lists in the Service's
 * Endpoints and EndpointSlices. Every endpoint is a node's pod server (its InternalIP and
 * port), carrying the pod (targetRef) and the node (nodeName). So only type ClusterIP (the
 * default) is served, with clusterIP unset or "None"; NodePort, LoadBalancer and ExternalName
 * are refused with what to do instead; every port is TCP (a pod answers HTTP).
 * Limits: K32_SVC_PORTS_MAX ports, K32_SVC_ENDPOINTS_MAX addresses in an Endpoints object,
 * K32_SVC_SLICE_ENDPOINTS_MAX endpoints in a slice (k32_config.h).
 * Read-only tables; reentrant.
 */
#include "api/api_int.h"
#include "kmeta/kmeta.h"

#include <stdio.h>
#include <string.h>

static void required(struct api_fail *f, const char *field)
{
	api_fail_add_cause(f, "FieldValueRequired", field, "Required value");
}

static void invalid(struct api_fail *f, const char *field, const char *value, const char *why)
{
	api_fail_add_cause(f, "FieldValueInvalid", field, "Invalid value: \"%s\": %s",
			   K32_CLIP(value), why);
}

/* A port number 1..65535 at o[key] (required or not); false if present and bad. */
static bool port_ok(struct api_fail *f, const cJSON *o, const char *key, const char *field,
		    bool need)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v) {
		if (need)
			required(f, field);
		return !need;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65535 ||
	    v->valuedouble != (double)(int)v->valuedouble) {
		char s[32];
		snprintf(s, sizeof(s), "%.0f", cJSON_IsNumber(v) ? v->valuedouble : 0.0);
		invalid(f, field, cJSON_IsNumber(v) ? s : "(not a number)",
			"must be between 1 and 65535, inclusive");
		return false;
	}
	return true;
}

/* A port's protocol: TCP only (absent is TCP). */
static void protocol_ok(struct api_fail *f, const cJSON *o, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "protocol");
	if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, "TCP")))
		api_fail_add_cause(f, "FieldValueNotSupported", field,
				   "Unsupported value: \"%s\": supported values: \"TCP\" (a "
				   "kube32 pod answers HTTP over TCP)",
				   K32_CLIP(cJSON_IsString(v) ? v->valuestring : "?"));
}

/* A port name: a DNS label (IANA_SVC_NAME is narrower; a label is what kubectl shows). */
static void port_name_ok(struct api_fail *f, const cJSON *o, const char *field, bool need)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "name");
	if (!v || (cJSON_IsString(v) && !v->valuestring[0])) {
		if (need)
			required(f, field);
		return;
	}
	const char *why = cJSON_IsString(v) ? api_check_dns_label(v->valuestring) : "not a string";
	if (why)
		invalid(f, field, cJSON_IsString(v) ? v->valuestring : "", why);
}

/* ---- Service --------------------------------------------------------------------------- */

static void default_service(cJSON *obj)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec))
		return;
	if (!cJSON_GetObjectItemCaseSensitive(spec, "type"))
		cJSON_AddStringToObject(spec, "type", "ClusterIP");
	if (!cJSON_GetObjectItemCaseSensitive(spec, "sessionAffinity"))
		cJSON_AddStringToObject(spec, "sessionAffinity", "None");
	if (!cJSON_GetObjectItemCaseSensitive(spec, "internalTrafficPolicy"))
		cJSON_AddStringToObject(spec, "internalTrafficPolicy", "Cluster");
	cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(spec, "ports"))
	{
		if (!cJSON_IsObject(p))
			continue;
		if (!cJSON_GetObjectItemCaseSensitive(p, "protocol"))
			cJSON_AddStringToObject(p, "protocol", "TCP");
		const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
		if (!cJSON_GetObjectItemCaseSensitive(p, "targetPort") && cJSON_IsNumber(port))
			cJSON_AddNumberToObject(p, "targetPort", port->valuedouble);
	}
	if (!cJSON_GetObjectItemCaseSensitive(obj, "status")) {
		cJSON *st = cJSON_AddObjectToObject(obj, "status");
		if (st)
			cJSON_AddObjectToObject(st, "loadBalancer");
	}
}

static void validate_service(const cJSON *obj, struct api_fail *f)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (!cJSON_IsObject(spec)) {
		required(f, "spec");
		return;
	}
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(spec, "type");
	if (type && (!cJSON_IsString(type) || strcmp(type->valuestring, "ClusterIP")))
		api_fail_add_cause(
		    f, "FieldValueNotSupported", "spec.type",
		    "Unsupported value: \"%s\": supported values: \"ClusterIP\" (no cluster "
		    "network: reach a Service through a node's pod server with header "
		    "X-Kube32-Service: NS/NAME, or kubectl port-forward)",
		    K32_CLIP(cJSON_IsString(type) ? type->valuestring : "?"));
	const cJSON *ip = cJSON_GetObjectItemCaseSensitive(spec, "clusterIP");
	if (ip && (!cJSON_IsString(ip) || (ip->valuestring[0] && strcmp(ip->valuestring, "None"))))
		invalid(f, "spec.clusterIP", cJSON_IsString(ip) ? ip->valuestring : "",
			"kube32 allocates no cluster IPs: leave it unset or \"None\"");
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
	if (sel && !cJSON_IsObject(sel)) {
		api_fail_add_cause(f, "FieldValueTypeInvalid", "spec.selector",
				   "Invalid value: must be an object of label keys to values");
	} else {
		const cJSON *l;
		cJSON_ArrayForEach(l, sel)
		{
			const char *why = api_check_label_key(l->string);
			if (!why && !cJSON_IsString(l))
				why = "must be a string";
			if (!why)
				why = api_check_label_value(l->valuestring);
			if (why)
				invalid(f, "spec.selector", l->string, why);
		}
	}
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(spec, "ports");
	int n = cJSON_GetArraySize(ports);
	if (ports && !cJSON_IsArray(ports)) {
		api_fail_add_cause(f, "FieldValueTypeInvalid", "spec.ports",
				   "Invalid value: must be a list of ports");
		return;
	}
	if (n == 0 && !(cJSON_IsString(ip) && !strcmp(ip->valuestring, "None")))
		required(f, "spec.ports");
	if (n > K32_SVC_PORTS_MAX) {
		api_fail_add_cause(f, "FieldValueTooMany", "spec.ports",
				   "Too many: %d: must have at most %d ports "
				   "(K32_SVC_PORTS_MAX); a pod answers on one HTTP handler, so "
				   "one port is usually enough",
				   n, K32_SVC_PORTS_MAX);
		return;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *p = cJSON_GetArrayItem(ports, i);
		char field[48];
		snprintf(field, sizeof(field), "spec.ports[%d]", i);
		if (!cJSON_IsObject(p)) {
			api_fail_add_cause(f, "FieldValueTypeInvalid", field,
					   "Invalid value: must be an object");
			continue;
		}
		snprintf(field, sizeof(field), "spec.ports[%d].port", i);
		port_ok(f, p, "port", field, true);
		snprintf(field, sizeof(field), "spec.ports[%d].name", i);
		port_name_ok(f, p, field, n > 1);
		snprintf(field, sizeof(field), "spec.ports[%d].protocol", i);
		protocol_ok(f, p, field);
		snprintf(field, sizeof(field), "spec.ports[%d].targetPort", i);
		const cJSON *tp = cJSON_GetObjectItemCaseSensitive(p, "targetPort");
		if (cJSON_IsString(tp)) {
			const char *why = api_check_dns_label(tp->valuestring);
			if (why || strlen(tp->valuestring) > 15)
				invalid(f, field, tp->valuestring,
					why ? why : "must be no more than 15 characters");
		} else if (tp) {
			port_ok(f, p, "targetPort", field, false);
		}
		const cJSON *np = cJSON_GetObjectItemCaseSensitive(p, "nodePort");
		if (np && !(cJSON_IsNumber(np) && np->valuedouble == 0)) {
			snprintf(field, sizeof(field), "spec.ports[%d].nodePort", i);
			api_fail_add_cause(f, "FieldValueForbidden", field,
					   "Forbidden: kube32 allocates no node ports: every "
					   "node's pod server reaches the Service already");
		}
		/* names are unique */
		const char *name =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name"));
		for (int j = 0; name && j < i; j++) {
			const char *other = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ports, j), "name"));
			if (other && !strcmp(other, name)) {
				snprintf(field, sizeof(field), "spec.ports[%d].name", i);
				api_fail_add_cause(f, "FieldValueDuplicate", field,
						   "Duplicate value: \"%s\"", K32_CLIP(name));
			}
		}
	}
}

/* ---- Endpoints ----------------------------------------------------------------------- */

static void validate_endpoints(const cJSON *obj, struct api_fail *f)
{
	const cJSON *subsets = cJSON_GetObjectItemCaseSensitive(obj, "subsets");
	if (subsets && !cJSON_IsArray(subsets)) {
		api_fail_add_cause(f, "FieldValueTypeInvalid", "subsets",
				   "Invalid value: must be a list of subsets");
		return;
	}
	int total = 0, si = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, subsets)
	{
		char field[64];
		static const char *const lists[] = {"addresses", "notReadyAddresses"};
		for (int l = 0; l < 2; l++) {
			int ai = 0;
			const cJSON *a;
			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(s, lists[l]))
			{
				snprintf(field, sizeof(field), "subsets[%d].%s[%d].ip", si,
					 lists[l], ai);
				const char *ip =
				    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "ip"));
				if (!ip)
					required(f, field);
				else if (!kmeta_host_ok(ip))
					invalid(f, field, ip,
						"must be an IP address or a host name");
				ai++;
				total++;
			}
		}
		int pi = 0;
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, "ports"))
		{
			snprintf(field, sizeof(field), "subsets[%d].ports[%d].port", si, pi);
			port_ok(f, p, "port", field, true);
			snprintf(field, sizeof(field), "subsets[%d].ports[%d].protocol", si, pi);
			protocol_ok(f, p, field);
			pi++;
		}
		if (pi > K32_SVC_PORTS_MAX) {
			snprintf(field, sizeof(field), "subsets[%d].ports", si);
			api_fail_add_cause(f, "FieldValueTooMany", field,
					   "Too many: %d: must have at most %d ports "
					   "(K32_SVC_PORTS_MAX)",
					   pi, K32_SVC_PORTS_MAX);
		}
		si++;
	}
	if (total > K32_SVC_ENDPOINTS_MAX)
		api_fail_add_cause(f, "FieldValueTooMany", "subsets",
				   "Too many: %d addresses: must have at most %d "
				   "(K32_SVC_ENDPOINTS_MAX)",
				   total, K32_SVC_ENDPOINTS_MAX);
}

/* ---- EndpointSlice --------------------------------------------------------------------- */

static void validate_endpointslice(const cJSON *obj, struct api_fail *f)
{
	const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "addressType"));
	if (!at)
		required(f, "addressType");
	else if (strcmp(at, "IPv4") && strcmp(at, "IPv6") && strcmp(at, "FQDN"))
		api_fail_add_cause(f, "FieldValueNotSupported", "addressType",
				   "Unsupported value: \"%s\": supported values: \"FQDN\", "
				   "\"IPv4\", \"IPv6\"",
				   K32_CLIP(at));
	const cJSON *eps = cJSON_GetObjectItemCaseSensitive(obj, "endpoints");
	if (eps && !cJSON_IsArray(eps)) {
		api_fail_add_cause(f, "FieldValueTypeInvalid", "endpoints",
				   "Invalid value: must be a list of endpoints");
		return;
	}
	int n = cJSON_GetArraySize(eps);
	if (n > K32_SVC_SLICE_ENDPOINTS_MAX) {
		api_fail_add_cause(f, "FieldValueTooMany", "endpoints",
				   "Too many: %d: must have at most %d endpoints "
				   "(K32_SVC_SLICE_ENDPOINTS_MAX); split them over more slices",
				   n, K32_SVC_SLICE_ENDPOINTS_MAX);
		return;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(eps, i);
		const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(e, "addresses");
		char field[48];
		snprintf(field, sizeof(field), "endpoints[%d].addresses", i);
		int na = cJSON_GetArraySize(addrs);
		if (!cJSON_IsArray(addrs) || na < 1 || na > 100) {
			api_fail_add_cause(f, "FieldValueRequired", field,
					   "Required value: must contain at least 1 address "
					   "(and at most 100)");
			continue;
		}
		const cJSON *a;
		cJSON_ArrayForEach(a, addrs)
		{
			if (!cJSON_IsString(a) || !kmeta_host_ok(a->valuestring))
				invalid(f, field, cJSON_IsString(a) ? a->valuestring : "",
					"must be an IP address or a host name");
		}
	}
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(obj, "ports");
	int np = cJSON_GetArraySize(ports);
	if (np > K32_SVC_PORTS_MAX)
		api_fail_add_cause(f, "FieldValueTooMany", "ports",
				   "Too many: %d: must have at most %d ports (K32_SVC_PORTS_MAX)",
				   np, K32_SVC_PORTS_MAX);
	for (int i = 0; i < np && np <= K32_SVC_PORTS_MAX; i++) {
		const cJSON *p = cJSON_GetArrayItem(ports, i);
		char field[48];
		snprintf(field, sizeof(field), "ports[%d].port", i);
		port_ok(f, p, "port", field, false);
		snprintf(field, sizeof(field), "ports[%d].protocol", i);
		protocol_ok(f, p, field);
	}
}

/* clang-format off */
const struct api_strategy api_strategy_service = {
	.defaults = default_service, .validate = validate_service,
	.top_fields = "apiVersion,kind,metadata,spec,status",
	.spec_fields = "ports,selector,clusterIP,clusterIPs,type,externalIPs,sessionAffinity,"
		       "loadBalancerIP,loadBalancerSourceRanges,externalName,"
		       "externalTrafficPolicy,healthCheckNodePort,publishNotReadyAddresses,"
		       "sessionAffinityConfig,ipFamilies,ipFamilyPolicy,"
		       "allocateLoadBalancerNodePorts,loadBalancerClass,internalTrafficPolicy,"
		       "trafficDistribution",
	.name_is_label = true,
	.printer = &api_printer_service,
};
const struct api_strategy api_strategy_endpoints = {
	.validate = validate_endpoints,
	.top_fields = "apiVersion,kind,metadata,subsets",
	.printer = &api_printer_endpoints,
};
const struct api_strategy api_strategy_endpointslice = {
	.validate = validate_endpointslice,
	.top_fields = "apiVersion,kind,metadata,addressType,endpoints,ports",
	.printer = &api_printer_endpointslice,
};
/* clang-format on */
