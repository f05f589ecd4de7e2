/*
 * api_registry.c - the table of served kinds.
 *
 * One static row per resource, in discovery order: core/v1 first, then the groups in the
 * order /apis lists them. Everything else in the API layer (discovery, OpenAPI, routing,
 * field selectors, Table output) reads this table, and each row points at its kind's
 * strategy (defaults, validation, node access, printer, deletion; api_validate.c), so
 * adding a kind is one row and one strategy.
 * Read-only; any thread.
 */
#include "api/api_crd.h"
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

#define V_STD  (API_VERBS_ALL)
#define V_NOWR (API_VERB_CREATE)

/* clang-format off */
static const struct api_resource api_resources[] = {
	{"", "v1", "Namespace", "namespaces", "namespace", false, API_VERBS_ALL & ~API_VERB_DELETECOLLECTION,
	 API_SUB_STATUS, "ns", false, "status.phase",
	 "Namespace provides a scope for names. Deleting one deletes everything in it.",
	 &api_strategy_namespace},
	{"", "v1", "Node", "nodes", "node", false, V_STD, API_SUB_STATUS, "no", false,
	 "spec.unschedulable",
	 "Node is a board in the cluster; its kubelet registers it and renews its Lease.",
	 &api_strategy_node},
	{"", "v1", "Pod", "pods", "pod", true, V_STD,
	 API_SUB_STATUS | API_SUB_BINDING | API_SUB_EVICTION | API_SUB_LOG, "po", true,
	 "spec.nodeName,status.phase,spec.restartPolicy,spec.schedulerName,"
	 "spec.serviceAccountName,status.podIP,status.nominatedNodeName",
	 "Pod is a WebAssembly module run by a node's interpreter, with memory and gas limits.",
	 &api_strategy_pod},
	{"", "v1", "ConfigMap", "configmaps", "configmap", true, V_STD, 0, "cm", false, "",
	 "ConfigMap holds configuration data for pods to consume.",
	 &api_strategy_configmap},
	{"", "v1", "Secret", "secrets", "secret", true, V_STD, 0, "", false, "type",
	 "Secret holds secret data of a certain type.",
	 &api_strategy_secret},
	{"", "v1", "Event", "events", "event", true, V_STD, 0, "ev", false,
	 "involvedObject.kind,involvedObject.apiVersion,involvedObject.name,"
	 "involvedObject.namespace,involvedObject.uid,involvedObject.resourceVersion,"
	 "involvedObject.fieldPath,reason,reportingComponent,source,type",
	 "Event is a report of an event somewhere in the cluster.",
	 &api_strategy_event},
	{"", "v1", "Service", "services", "service", true, V_STD, API_SUB_STATUS, "svc", true,
	 "spec.clusterIP,spec.type",
	 "Service names a set of pods by selector; kube32 routes to its ready pods through "
	 "any node's pod server (X-Kube32-Service) and services/proxy.",
	 &api_strategy_service},
	{"", "v1", "Endpoints", "endpoints", "endpoints", true, V_STD, 0, "ep", false, "",
	 "Endpoints is the set of a Service's ready pods, each reached at its node's pod server.",
	 &api_strategy_endpoints},
	{"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true, V_STD,
	 API_SUB_TOKEN, "sa", false, "",
	 "ServiceAccount is an identity for processes; its tokens come from TokenRequest.",
	 &api_strategy_service_account},
	{"apps", "v1", "Deployment", "deployments", "deployment", true, V_STD,
	 API_SUB_STATUS | API_SUB_SCALE, "deploy", true, "",
	 "Deployment enables declarative updates for Pods and ReplicaSets.",
	 &api_strategy_deployment},
	{"apps", "v1", "ReplicaSet", "replicasets", "replicaset", true, V_STD,
	 API_SUB_STATUS | API_SUB_SCALE, "rs", true, "status.replicas",
	 "ReplicaSet ensures that a specified number of pod replicas are running at any time.",
	 &api_strategy_replicaset},
	{"apps", "v1", "DaemonSet", "daemonsets", "daemonset", true, V_STD, API_SUB_STATUS, "ds",
	 true, "",
	 "DaemonSet represents the configuration of a daemon set: one pod per matching node.",
	 &api_strategy_daemonset},
	{"apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision", true,
	 V_STD, 0, "", false, "",
	 "ControllerRevision is an immutable snapshot of a controller's state (a DaemonSet's "
	 "template): its history for rollout history and undo.",
	 &api_strategy_controllerrevision},
	{"batch", "v1", "Job", "jobs", "job", true, V_STD, API_SUB_STATUS, "", true,
	 "status.successful", "Job represents the configuration of a single job.",
	 &api_strategy_job},
	{"batch", "v1", "CronJob", "cronjobs", "cronjob", true, V_STD, API_SUB_STATUS, "cj", true,
	 "", "CronJob represents the configuration of a single cron job: a Job made on a schedule.",
	 &api_strategy_cronjob},
	{"discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice", true, V_STD,
	 0, "", false, "addressType",
	 "EndpointSlice is a subset of a Service's endpoints (one node's pod server per slice).",
	 &api_strategy_endpointslice},
	{"coordination.k8s.io", "v1", "Lease", "leases", "lease", true, V_STD, 0, "", false, "",
	 "Lease defines a lease concept (node heartbeats, leader election).",
	 &api_strategy_lease},
	{"events.k8s.io", "v1", "Event", "events", "event", true, V_STD, 0, "ev", false,
	 "regarding.kind,regarding.apiVersion,regarding.name,regarding.namespace,"
	 "regarding.uid,reason,reportingController,type",
	 "Event is a report of an event somewhere in the cluster.",
	 &api_strategy_event},
	{"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", false,
	 V_STD, 0, "", false, "",
	 "ClusterRole is a cluster-level set of PolicyRules, bound by (Cluster)RoleBindings.",
	 &api_strategy_cluster_role},
	{"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
	 "clusterrolebinding", false, V_STD, 0, "", false, "",
	 "ClusterRoleBinding grants a ClusterRole's permissions cluster-wide to subjects.",
	 &api_strategy_cluster_role_binding},
	{"rbac.authorization.k8s.io", "v1", "Role", "roles", "role", true, V_STD, 0, "", false, "",
	 "Role is a namespaced set of PolicyRules, bound by a RoleBinding.",
	 &api_strategy_role},
	{"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", true,
	 V_STD, 0, "", false, "",
	 "RoleBinding grants a Role's or ClusterRole's permissions in its namespace to subjects.",
	 &api_strategy_role_binding},
	{"authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
	 "selfsubjectaccessreview", false, V_NOWR, 0, "", false, "",
	 "SelfSubjectAccessReview checks whether the current user can perform an action.",
	 &api_strategy_access_review},
	{"authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
	 "selfsubjectrulesreview", false, V_NOWR, 0, "", false, "",
	 "SelfSubjectRulesReview enumerates the actions the current user can perform.",
	 &api_strategy_access_review},
	{"authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews",
	 "selfsubjectreview", false, V_NOWR, 0, "", false, "",
	 "SelfSubjectReview returns the user information of the caller (kubectl auth whoami).",
	 &api_strategy_self_review},
	{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
	 "customresourcedefinition", false, V_STD, API_SUB_STATUS, "crd,crds", false, "",
	 "CustomResourceDefinition represents a resource that should be exposed on the API server.",
	 &api_strategy_crd},
	{"kube32.io", "v1alpha1", "Device", "devices", "device", true, V_STD, API_SUB_STATUS,
	 "dev", false, "spec.node,spec.model",
	 "Device is an I2C peripheral on a node's bus, read by a driver pod.",
	 &api_strategy_device},
};
/* clang-format on */

#define API_RES_COUNT (sizeof(api_resources) / sizeof(api_resources[0]))
_Static_assert(API_RES_COUNT <= API_REGISTRY_STATIC_MAX, "raise API_REGISTRY_STATIC_MAX");

size_t api_registry_list(const struct api_resource **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < API_RES_COUNT && n < cap; i++)
		out[n++] = &api_resources[i];
	return n + api_crd_rows(out + n, cap - n);
}

const struct api_resource *api_registry_all(size_t *out_count)
{
	*out_count = API_RES_COUNT;
	return api_resources;
}

const struct api_resource *api_registry_find(const char *group, const char *version,
					     const char *plural)
{
	for (size_t i = 0; i < API_RES_COUNT; i++) {
		const struct api_resource *r = &api_resources[i];
		if (!strcmp(r->group, group) && !strcmp(r->version, version) &&
		    !strcmp(r->plural, plural))
			return r;
	}
	return api_crd_find(group, version, plural);
}

const struct api_resource *api_registry_find_kind(const char *api_version, const char *kind)
{
	const char *slash = strchr(api_version, '/');
	size_t glen = slash ? (size_t)(slash - api_version) : 0;
	const char *ver = slash ? slash + 1 : api_version;
	for (size_t i = 0; i < API_RES_COUNT; i++) {
		const struct api_resource *r = &api_resources[i];
		if (strcmp(r->kind, kind) || strcmp(r->version, ver))
			continue;
		if (strlen(r->group) == glen && !strncmp(r->group, api_version, glen))
			return r;
	}
	return api_crd_find_kind(api_version, glen, ver, kind);
}

const char *api_resource_api_version(const struct api_resource *res, char *buf, size_t cap)
{
	if (res->group[0])
		snprintf(buf, cap, "%s/%s", res->group, res->version);
	else
		snprintf(buf, cap, "%s", res->version);
	return buf;
}

const char *api_resource_qualified(const struct api_resource *res, char *buf, size_t cap)
{
	if (res->group[0])
		snprintf(buf, cap, "%s.%s", res->plural, res->group);
	else
		snprintf(buf, cap, "%s", res->plural);
	return buf;
}

bool api_resource_has_field(const struct api_resource *res, const char *field)
{
	if (!strcmp(field, "metadata.name"))
		return true;
	if (!strcmp(field, "metadata.namespace"))
		return res->namespaced;
	size_t flen = strlen(field);
	const char *p = res->fields;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == flen && !strncmp(p, field, n))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}
