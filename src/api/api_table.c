/*
 * api_table.c - Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
 *
 * kubectl get prints the server's columns verbatim, adding NAMESPACE (-A) and LABELS
 * (--show-labels) from each row's PartialObjectMetadata. Columns follow upstream's printers
 * so the output looks native (kubectl-api.md section 5); priority-1 columns appear only with
 * -o wide. Cells are computed here, including AGE, from the full objects.
 * Every function returns a fresh cJSON tree or NULL when out of memory. Reentrant.
 */
#include "api/api_crd.h"
#include "api/api_int.h"
#include "base/k32_json.h"
#include "kmeta/kmeta.h"

#include <stdio.h>
#include <string.h>

struct api_col {
	const char *name;
	const char *type; /* "string" or "integer" */
	int priority;	  /* 1: -o wide only */
	const char *desc;
};

#define COL_NAME                                                                                   \
	{                                                                                          \
		"Name", "string", 0, "Name must be unique within a namespace."                     \
	}
#define COL_AGE                                                                                    \
	{                                                                                          \
		"Age", "string", 0,                                                                \
		    "CreationTimestamp is a timestamp representing the server time when this "     \
		    "object was created."                                                          \
	}

/* clang-format off */
static const struct api_col cols_default[] = {COL_NAME, COL_AGE, {0}};
static const struct api_col cols_pod[] = {
	COL_NAME,
	{"Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."},
	{"Status", "string", 0, "The aggregate status of the containers in this pod."},
	{"Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	COL_AGE,
	{"IP", "string", 1, "IP address allocated to the pod."},
	{"Node", "string", 1, "Name of the Node this pod is assigned to."},
	{"Nominated Node", "string", 1, "Name of the node nominated by the scheduler."},
	{"Readiness Gates", "string", 1, "Pod readiness gates."},
	{0}};
static const struct api_col cols_node[] = {
	COL_NAME,
	{"Status", "string", 0, "The status of the node"},
	{"Roles", "string", 0, "The roles of the node"},
	COL_AGE,
	{"Version", "string", 0, "Kubelet Version reported by the node."},
	{"Internal-IP", "string", 1, "List of internal IPs for the node."},
	{"External-IP", "string", 1, "List of external IPs for the node."},
	{"OS-Image", "string", 1, "OS Image reported by the node."},
	{"Kernel-Version", "string", 1, "Kernel Version reported by the node."},
	{"Container-Runtime", "string", 1, "Container Runtime Version reported by the node."},
	{0}};
static const struct api_col cols_ns[] = {
	COL_NAME, {"Status", "string", 0, "The status of the namespace"}, COL_AGE, {0}};
static const struct api_col cols_deploy[] = {
	COL_NAME,
	{"Ready", "string", 0, "Number of the pod with ready state"},
	{"Up-to-date", "integer", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."},
	{"Available", "integer", 0, "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."},
	COL_AGE,
	{"Containers", "string", 1, "Names of each container in the template."},
	{"Images", "string", 1, "Images referenced by each container in the template."},
	{"Selector", "string", 1, "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."},
	{0}};
static const struct api_col cols_rs[] = {
	COL_NAME,
	{"Desired", "integer", 0, "Number of desired pods."},
	{"Current", "integer", 0, "The most recently observed number of replicas."},
	{"Ready", "integer", 0, "The number of ready replicas for this replica set."},
	COL_AGE,
	{"Containers", "string", 1, "Names of each container in the template."},
	{"Images", "string", 1, "Images referenced by each container in the template."},
	{"Selector", "string", 1, "Selector is a label query over pods that should match the replica count."},
	{0}};
static const struct api_col cols_ds[] = {
	COL_NAME,
	{"Desired", "integer", 0, "The total number of nodes that should be running the daemon pod."},
	{"Current", "integer", 0, "The number of nodes running at least one daemon pod and are supposed to."},
	{"Ready", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."},
	{"Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"},
	{"Available", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available."},
	{"Node Selector", "string", 0, "NodeSelector is a selector which must be true for the pod to fit on a node."},
	COL_AGE,
	{0}};
static const struct api_col cols_job[] = {
	COL_NAME,
	{"Status", "string", 0, "Status of the job."},
	{"Completions", "string", 0, "The desired number of successfully finished pods the job should be run with."},
	{"Duration", "string", 0, "Time required to complete the job."},
	COL_AGE,
	{0}};
static const struct api_col cols_cronjob[] = {
	COL_NAME,
	{"Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."},
	{"Timezone", "string", 0, "The time zone name for the given schedule."},
	{"Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions."},
	{"Active", "integer", 0, "A list of pointers to currently running jobs."},
	{"Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."},
	COL_AGE,
	{"Containers", "string", 1, "Names of each container in the template."},
	{"Images", "string", 1, "Images referenced by each container in the template."},
	{"Selector", "string", 1, "A label query over pods that should match the pod count."},
	{0}};
static const struct api_col cols_controllerrevision[] = {
	COL_NAME,
	{"Controller", "string", 0, "The controller that owns the revision (kind/name)."},
	{"Revision", "integer", 0, "Revision indicates the revision of the state represented by Data."},
	COL_AGE,
	{0}};
static const struct api_col cols_cm[] = {
	COL_NAME, {"Data", "integer", 0, "Number of entries in data and binaryData."}, COL_AGE, {0}};
static const struct api_col cols_secret[] = {
	COL_NAME,
	{"Type", "string", 0, "The type of secret"},
	{"Data", "integer", 0, "Number of entries in data."},
	COL_AGE,
	{0}};
static const struct api_col cols_sa[] = {
	COL_NAME, {"Secrets", "integer", 0, "Number of secrets of the ServiceAccount."}, COL_AGE, {0}};
static const struct api_col cols_role[] = {
	COL_NAME, {"Created At", "date", 0, "Time the role was created."}, {0}};
static const struct api_col cols_binding[] = {
	COL_NAME, {"Role", "string", 0, "The role bound (kind/name)."}, COL_AGE,
	{"Users", "string", 1, "Users bound."}, {"Groups", "string", 1, "Groups bound."},
	{"ServiceAccounts", "string", 1, "Service accounts bound (namespace/name)."}, {0}};
static const struct api_col cols_event[] = {
	{"Last Seen", "string", 0, "Time when the most recent occurrence of this event was recorded."},
	{"Type", "string", 0, "Type of this event (Normal, Warning)."},
	{"Reason", "string", 0, "Why the action was taken."},
	{"Object", "string", 0, "The object that this event is about."},
	{"Message", "string", 0, "A human-readable description of the status of this operation."},
	{0}};
static const struct api_col cols_lease[] = {
	COL_NAME, {"Holder", "string", 0, "The holder of the lease."}, COL_AGE, {0}};
static const struct api_col cols_device[] = {
	COL_NAME,
	{"Node", "string", 0, "Node whose kubelet owns the bus."},
	{"Model", "string", 0, "Device model (selects the driver image)."},
	{"Reading", "string", 0, "The most recent readings, shortened."},
	COL_AGE,
	{"Address", "string", 1, "7-bit I2C address (hex), with bus and multiplexer channel."},
	{"Ready", "string", 1, "Status of the Ready condition."},
	{"Driver", "string", 1, "Driver pod."},
	{0}};
static const struct api_col cols_svc[] = {
	COL_NAME,
	{"Type", "string", 0, "The type of the service."},
	{"Cluster-IP", "string", 0, "The IP address of the service."},
	{"External-IP", "string", 0, "The external IP address of the service."},
	{"Port(s)", "string", 0, "The ports of the service."},
	COL_AGE,
	{"Selector", "string", 1, "Route service traffic to pods with label keys and values matching this selector."},
	{0}};
static const struct api_col cols_ep[] = {
	COL_NAME, {"Endpoints", "string", 0, "Endpoints of the service (a node's pod server for each ready pod)."}, COL_AGE, {0}};
static const struct api_col cols_eps[] = {
	COL_NAME,
	{"AddressType", "string", 0, "The type of address carried by this EndpointSlice."},
	{"Ports", "string", 0, "The ports of this EndpointSlice."},
	{"Endpoints", "string", 0, "The addresses of this EndpointSlice."},
	COL_AGE,
	{0}};
/* clang-format on */

/* The string at a dotted path, or dflt when absent, not a string or empty. */
static const char *jstr(const cJSON *obj, const char *path, const char *dflt)
{
	const cJSON *it = k32_json_find(obj, path);
	return cJSON_IsString(it) && it->valuestring[0] ? it->valuestring : dflt;
}

/* The number at a dotted path, or dflt when absent or not a number. */
static long long jint(const cJSON *obj, const char *path, long long dflt)
{
	const cJSON *it = k32_json_find(obj, path);
	return cJSON_IsNumber(it) ? (long long)it->valuedouble : dflt;
}

static const cJSON *jget(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, a);
	return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

static void cell_str(cJSON *cells, const char *s)
{
	cJSON_AddItemToArray(cells, cJSON_CreateString(s));
}

static void cell_int(cJSON *cells, long long v)
{
	cJSON_AddItemToArray(cells, cJSON_CreateNumber((double)v));
}

static void cell_age(cJSON *cells, const cJSON *obj, uint64_t now_s)
{
	char buf[24];
	uint64_t t;
	if (api_parse_time(jstr(obj, "metadata.creationTimestamp", ""), &t))
		api_format_age(now_s, t, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "<unknown>");
	cell_str(cells, buf);
}

/* Condition status of type in arr ("True"/"False"/"Unknown"), or NULL. */
static const char *cond_status(const cJSON *conds, const char *type)
{
	const cJSON *c = kmeta_cond_find(conds, type);
	return c ? jstr(c, "status", "Unknown") : NULL;
}

/* Joins the string field of every element of arr with ",". */
static void join_field(const cJSON *arr, const char *field, char *buf, size_t cap)
{
	size_t off = 0;
	const cJSON *e;
	buf[0] = 0;
	cJSON_ArrayForEach(e, arr)
	{
		int n = snprintf(buf + off, cap - off, "%s%s", off ? "," : "", jstr(e, field, ""));
		if (n < 0 || (size_t)n >= cap - off)
			break;
		off += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, cap, "<none>");
}

static void row_pod(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	const cJSON *containers = jget(o, "spec", "containers");
	const cJSON *statuses = jget(o, "status", "containerStatuses");
	int total = cJSON_GetArraySize(containers), ready = 0;
	long long restarts = 0;
	const char *reason = NULL;
	const cJSON *cs;
	cJSON_ArrayForEach(cs, statuses)
	{
		if (cJSON_IsTrue(cJSON_GetObjectItem(cs, "ready")))
			ready++;
		restarts += jint(cs, "restartCount", 0);
		const char *w = jstr(cs, "state.waiting.reason", NULL);
		const char *t = jstr(cs, "state.terminated.reason", NULL);
		if (!reason && (w || t))
			reason = w ? w : t;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%d/%d", ready, total);
	cell_str(cells, buf);
	const char *status = jstr(o, "status.phase", "Pending");
	if (jstr(o, "status.reason", NULL))
		status = jstr(o, "status.reason", NULL);
	if (reason && strcmp(status, "Succeeded") && strcmp(status, "Failed"))
		status = reason;
	if (jstr(o, "metadata.deletionTimestamp", NULL))
		status = "Terminating";
	cell_str(cells, status);
	snprintf(buf, sizeof(buf), "%lld", restarts);
	cell_str(cells, buf);
	cell_age(cells, o, now_s);
	cell_str(cells, jstr(o, "status.podIP", "<none>"));
	cell_str(cells, jstr(o, "spec.nodeName", "<none>"));
	cell_str(cells, jstr(o, "status.nominatedNodeName", "<none>"));
	cell_str(cells, "<none>");
}

static void row_node(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	const char *ready = cond_status(jget(o, "status", "conditions"), "Ready");
	char buf[96];
	snprintf(buf, sizeof(buf), "%s%s",
		 !ready			   ? "Unknown"
		 : !strcmp(ready, "True")  ? "Ready"
		 : !strcmp(ready, "False") ? "NotReady"
					   : "Unknown",
		 cJSON_IsTrue(jget(o, "spec", "unschedulable")) ? ",SchedulingDisabled" : "");
	cell_str(cells, buf);
	size_t off = 0;
	const cJSON *l;
	buf[0] = 0;
	cJSON_ArrayForEach(l, jget(o, "metadata", "labels"))
	{
		static const char pfx[] = "node-role.kubernetes.io/";
		if (!l->string || strncmp(l->string, pfx, sizeof(pfx) - 1) ||
		    !l->string[sizeof(pfx) - 1])
			continue;
		int n = snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? "," : "",
				 l->string + sizeof(pfx) - 1);
		if (n < 0 || (size_t)n >= sizeof(buf) - off)
			break;
		off += (size_t)n;
	}
	cell_str(cells, buf[0] ? buf : "<none>");
	cell_age(cells, o, now_s);
	cell_str(cells, jstr(o, "status.nodeInfo.kubeletVersion", ""));
	const char *internal = "<none>", *external = "<none>";
	const cJSON *a;
	cJSON_ArrayForEach(a, jget(o, "status", "addresses"))
	{
		if (!strcmp(jstr(a, "type", ""), "InternalIP"))
			internal = jstr(a, "address", "<none>");
		if (!strcmp(jstr(a, "type", ""), "ExternalIP"))
			external = jstr(a, "address", "<none>");
	}
	cell_str(cells, internal);
	cell_str(cells, external);
	cell_str(cells, jstr(o, "status.nodeInfo.osImage", "<unknown>"));
	cell_str(cells, jstr(o, "status.nodeInfo.kernelVersion", "<unknown>"));
	cell_str(cells, jstr(o, "status.nodeInfo.containerRuntimeVersion", "<unknown>"));
}

static void cells_template(cJSON *cells, const cJSON *o)
{
	char buf[256];
	const cJSON *containers = k32_json_find(o, "spec.template.spec.containers");
	join_field(containers, "name", buf, sizeof(buf));
	cell_str(cells, buf);
	join_field(containers, "image", buf, sizeof(buf));
	cell_str(cells, buf);
	const cJSON *ml = k32_json_find(o, "spec.selector.matchLabels");
	if (!ml || !api_selector_from_match_labels(ml, buf, sizeof(buf)) || !buf[0])
		snprintf(buf, sizeof(buf), "<none>");
	cell_str(cells, buf);
}

static void row_deploy(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char buf[48];
	snprintf(buf, sizeof(buf), "%lld/%lld", jint(o, "status.readyReplicas", 0),
		 jint(o, "spec.replicas", 1));
	cell_str(cells, buf);
	cell_int(cells, jint(o, "status.updatedReplicas", 0));
	cell_int(cells, jint(o, "status.availableReplicas", 0));
	cell_age(cells, o, now_s);
	cells_template(cells, o);
}

static void row_rs(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_int(cells, jint(o, "spec.replicas", 1));
	cell_int(cells, jint(o, "status.replicas", 0));
	cell_int(cells, jint(o, "status.readyReplicas", 0));
	cell_age(cells, o, now_s);
	cells_template(cells, o);
}

static void row_ds(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char buf[256];
	cell_int(cells, jint(o, "status.desiredNumberScheduled", 0));
	cell_int(cells, jint(o, "status.currentNumberScheduled", 0));
	cell_int(cells, jint(o, "status.numberReady", 0));
	cell_int(cells, jint(o, "status.updatedNumberScheduled", 0));
	cell_int(cells, jint(o, "status.numberAvailable", 0));
	const cJSON *ns = k32_json_find(o, "spec.template.spec.nodeSelector");
	if (!ns || !api_selector_from_match_labels(ns, buf, sizeof(buf)) || !buf[0])
		snprintf(buf, sizeof(buf), "<none>");
	cell_str(cells, buf);
	cell_age(cells, o, now_s);
}

static void row_job(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	const cJSON *conds = jget(o, "status", "conditions");
	const char *complete = cond_status(conds, "Complete");
	const char *failed = cond_status(conds, "Failed");
	const char *status = "Running";
	if (complete && !strcmp(complete, "True"))
		status = "Complete";
	else if (failed && !strcmp(failed, "True"))
		status = "Failed";
	cell_str(cells, status);
	char buf[48];
	snprintf(buf, sizeof(buf), "%lld/%lld", jint(o, "status.succeeded", 0),
		 jint(o, "spec.completions", 1));
	cell_str(cells, buf);
	uint64_t a, b;
	if (api_parse_time(jstr(o, "status.startTime", ""), &a) &&
	    api_parse_time(jstr(o, "status.completionTime", ""), &b))
		api_format_age(b, a, buf, sizeof(buf));
	else if (api_parse_time(jstr(o, "status.startTime", ""), &a))
		api_format_age(now_s, a, buf, sizeof(buf));
	else
		buf[0] = 0;
	cell_str(cells, buf);
	cell_age(cells, o, now_s);
}

static void row_cronjob(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_str(cells, jstr(o, "spec.schedule", ""));
	cell_str(cells, jstr(o, "spec.timeZone", "<none>"));
	cJSON_AddItemToArray(cells,
			     cJSON_CreateBool(cJSON_IsTrue(k32_json_find(o, "spec.suspend"))));
	cell_int(cells, cJSON_GetArraySize(k32_json_find(o, "status.active")));
	char buf[48] = "<none>";
	uint64_t t;
	if (api_parse_time(jstr(o, "status.lastScheduleTime", ""), &t))
		api_format_age(now_s, t, buf, sizeof(buf));
	cell_str(cells, buf);
	cell_age(cells, o, now_s);
	char names[256] = "", images[512] = "";
	const cJSON *c;
	cJSON_ArrayForEach(c, k32_json_find(o, "spec.jobTemplate.spec.template.spec.containers"))
	{
		size_t n = strlen(names), m = strlen(images);
		snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "", jstr(c, "name", ""));
		snprintf(images + m, sizeof(images) - m, "%s%s", m ? "," : "",
			 jstr(c, "image", ""));
	}
	cell_str(cells, names);
	cell_str(cells, images);
	const cJSON *ml = k32_json_find(o, "spec.jobTemplate.spec.selector.matchLabels");
	if (!ml || !api_selector_from_match_labels(ml, buf, sizeof(buf)) || !buf[0])
		snprintf(buf, sizeof(buf), "<none>");
	cell_str(cells, buf);
}

static void row_controllerrevision(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char buf[300] = "<none>";
	const cJSON *ref;
	cJSON_ArrayForEach(ref, k32_json_find(o, "metadata.ownerReferences"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItem(ref, "controller"))) {
			char kind[64];
			snprintf(kind, sizeof(kind), "%s", jstr(ref, "kind", ""));
			for (char *p = kind; *p; p++)
				*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			snprintf(buf, sizeof(buf), "%s.%s/%s", kind, "apps", jstr(ref, "name", ""));
		}
	}
	cell_str(cells, buf);
	cell_int(cells, jint(o, "revision", 0));
	cell_age(cells, o, now_s);
}

static void row_event(cJSON *cells, const cJSON *o, uint64_t now_s, bool core)
{
	char buf[160];
	uint64_t t;
	const char *last = jstr(o, core ? "lastTimestamp" : "deprecatedLastTimestamp", NULL);
	if (!last)
		last = jstr(o, "eventTime", NULL);
	if (!last)
		last = jstr(o, "series.lastObservedTime", NULL);
	if (!last)
		last = jstr(o, "metadata.creationTimestamp", "");
	if (api_parse_time(last, &t))
		api_format_age(now_s, t, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "<unknown>");
	cell_str(cells, buf);
	cell_str(cells, jstr(o, "type", ""));
	cell_str(cells, jstr(o, "reason", ""));
	const cJSON *io = jget(o, core ? "involvedObject" : "regarding", NULL);
	char kind[48];
	snprintf(kind, sizeof(kind), "%s", jstr(io, "kind", ""));
	for (char *k = kind; *k; k++)
		if (*k >= 'A' && *k <= 'Z')
			*k = (char)(*k - 'A' + 'a');
	snprintf(buf, sizeof(buf), "%s/%s", kind, jstr(io, "name", ""));
	cell_str(cells, buf);
	cell_str(cells, jstr(o, core ? "message" : "note", ""));
}

static void row_device(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char buf[96];
	cell_str(cells, jstr(o, "spec.node", "<none>"));
	cell_str(cells, jstr(o, "spec.model", "<none>"));
	size_t off = 0;
	int shown = 0;
	const cJSON *r;
	buf[0] = 0;
	const cJSON *readings = jget(o, "status", "readings");
	/* readings is a map; given as an array its items have no key (NULL ->string) */
	if (!cJSON_IsObject(readings))
		readings = NULL;
	cJSON_ArrayForEach(r, readings)
	{
		if (!cJSON_IsString(r) || !r->string)
			continue;
		if (shown == 2) {
			snprintf(buf + off, sizeof(buf) - off, ",...");
			break;
		}
		int n = snprintf(buf + off, sizeof(buf) - off, "%s%s=%s", off ? "," : "", r->string,
				 r->valuestring);
		if (n < 0 || (size_t)n >= sizeof(buf) - off)
			break;
		off += (size_t)n;
		shown++;
	}
	cell_str(cells, buf[0] ? buf : "<none>");
	cell_age(cells, o, now_s);
	long long mux = jint(o, "spec.muxChannel", -1);
	if (mux >= 0)
		snprintf(buf, sizeof(buf), "0x%02llx (bus %lld, mux %lld)",
			 jint(o, "spec.address", 0), jint(o, "spec.bus", 0), mux);
	else
		snprintf(buf, sizeof(buf), "0x%02llx (bus %lld)", jint(o, "spec.address", 0),
			 jint(o, "spec.bus", 0));
	cell_str(cells, buf);
	const char *ready = cond_status(jget(o, "status", "conditions"), "Ready");
	cell_str(cells, ready ? ready : "Unknown");
	cell_str(cells, jstr(o, "status.driverPod", "<none>"));
}

static void row_namespace(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_str(cells, jstr(o, "status.phase", "Active"));
	cell_age(cells, o, now_s);
}

static void row_configmap(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_int(cells, cJSON_GetArraySize(jget(o, "data", NULL)) +
			    cJSON_GetArraySize(jget(o, "binaryData", NULL)));
	cell_age(cells, o, now_s);
}

static void row_secret(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_str(cells, jstr(o, "type", "Opaque"));
	cell_int(cells, cJSON_GetArraySize(jget(o, "data", NULL)));
	cell_age(cells, o, now_s);
}

static void row_lease(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_str(cells, jstr(o, "spec.holderIdentity", "<none>"));
	cell_age(cells, o, now_s);
}

static void row_sa(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_int(cells, cJSON_GetArraySize(jget(o, "secrets", NULL)));
	cell_age(cells, o, now_s);
}

static void row_role(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	(void)now_s;
	cell_str(cells, jstr(o, "metadata.creationTimestamp", ""));
}

/* The subjects of kind (names, "ns/name" for ServiceAccounts) joined by ", " into cells. */
static void cell_subjects(cJSON *cells, const cJSON *o, const char *kind)
{
	char buf[256];
	size_t n = 0;
	buf[0] = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, jget(o, "subjects", NULL))
	{
		const char *k = jstr(s, "kind", ""), *nm = jstr(s, "name", "");
		const char *ns = jstr(s, "namespace", "");
		if (strcmp(k, kind) || n + 4 >= sizeof(buf))
			continue;
		int w = snprintf(buf + n, sizeof(buf) - n, "%s%s%s%s", n ? ", " : "", ns,
				 ns[0] ? "/" : "", nm);
		n = w < 0 ? n : n + (size_t)w >= sizeof(buf) ? sizeof(buf) - 1 : n + (size_t)w;
	}
	cell_str(cells, buf);
}

static void row_binding(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char role[160];
	snprintf(role, sizeof(role), "%s/%s", jstr(o, "roleRef.kind", ""),
		 jstr(o, "roleRef.name", ""));
	cell_str(cells, role);
	cell_age(cells, o, now_s);
	cell_subjects(cells, o, "User");
	cell_subjects(cells, o, "Group");
	cell_subjects(cells, o, "ServiceAccount");
}

static void row_default(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_age(cells, o, now_s);
}

/* "a, b, c + N more..." from the list items, as upstream's endpoint columns. */
static void cell_list(cJSON *cells, const char *const *items, size_t n, size_t total)
{
	char buf[256] = "";
	size_t used = 0;
	for (size_t i = 0; i < n && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
					 items[i]);
	if (total > n && used < sizeof(buf))
		snprintf(buf + used, sizeof(buf) - used, " + %zu more...", total - n);
	cell_str(cells, total ? buf : "<none>");
}

static void row_service(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	const char *type = jstr(o, "spec.type", "ClusterIP");
	cell_str(cells, type);
	cell_str(cells, jstr(o, "spec.clusterIP", "<none>"));
	cell_str(cells, "<none>");
	char ports[160] = "";
	size_t used = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, jget(o, "spec", "ports"))
	{
		if (used >= sizeof(ports))
			break;
		used += (size_t)snprintf(ports + used, sizeof(ports) - used, "%s%lld/%s",
					 used ? "," : "", jint(p, "port", 0),
					 jstr(p, "protocol", "TCP"));
	}
	cell_str(cells, ports[0] ? ports : "<none>");
	cell_age(cells, o, now_s);
	char sel[160] = "";
	used = 0;
	cJSON_ArrayForEach(p, jget(o, "spec", "selector"))
	{
		if (used >= sizeof(sel) || !cJSON_IsString(p))
			break;
		used += (size_t)snprintf(sel + used, sizeof(sel) - used, "%s%s=%s", used ? "," : "",
					 p->string, p->valuestring);
	}
	cell_str(cells, sel[0] ? sel : "<none>");
}

static void row_endpoints(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	char txt[3][80];
	const char *items[3];
	size_t n = 0, total = 0;
	const cJSON *sub, *a, *p;
	cJSON_ArrayForEach(sub, jget(o, "subsets", NULL))
	{
		cJSON_ArrayForEach(a, jget(sub, "addresses", NULL))
		{
			cJSON_ArrayForEach(p, jget(sub, "ports", NULL))
			{
				if (n < 3) {
					snprintf(txt[n], sizeof(txt[n]), "%.63s:%lld",
						 jstr(a, "ip", ""), jint(p, "port", 0));
					items[n] = txt[n];
					n++;
				}
				total++;
			}
		}
	}
	cell_list(cells, items, n, total);
	cell_age(cells, o, now_s);
}

static void row_endpointslice(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	cell_str(cells, jstr(o, "addressType", ""));
	char ports[96] = "";
	size_t used = 0;
	const cJSON *p, *e;
	cJSON_ArrayForEach(p, jget(o, "ports", NULL))
	{
		if (used >= sizeof(ports))
			break;
		used += (size_t)snprintf(ports + used, sizeof(ports) - used, "%s%lld",
					 used ? "," : "", jint(p, "port", 0));
	}
	cell_str(cells, ports[0] ? ports : "<unset>");
	const char *items[3];
	size_t n = 0, total = 0;
	cJSON_ArrayForEach(e, jget(o, "endpoints", NULL))
	{
		const cJSON *a = cJSON_GetArrayItem(jget(e, "addresses", NULL), 0);
		if (n < 3 && cJSON_IsString(a))
			items[n++] = a->valuestring;
		total++;
	}
	cell_list(cells, items, n, total);
	cell_age(cells, o, now_s);
}

/* core/v1 and events.k8s.io/v1 Events name their fields differently */
static void row_event_core(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	row_event(cells, o, now_s, true);
}

static void row_event_new(cJSON *cells, const cJSON *o, uint64_t now_s)
{
	row_event(cells, o, now_s, false);
}

/* The Table printer of a kind: its columns and how a row fills them. */
struct api_printer {
	const struct api_col *columns;
	bool name_first; /* the first column is the object's name (format "name") */
	void (*row)(cJSON *cells, const cJSON *o, uint64_t now_s);    /* the cells after it */
	void (*row_v1)(cJSON *cells, const cJSON *o, uint64_t now_s); /* core/v1's, if other */
};

/* clang-format off */
const struct api_printer api_printer_default = {cols_default, true, row_default, NULL};
const struct api_printer api_printer_pod = {cols_pod, true, row_pod, NULL};
const struct api_printer api_printer_node = {cols_node, true, row_node, NULL};
const struct api_printer api_printer_namespace = {cols_ns, true, row_namespace, NULL};
const struct api_printer api_printer_deployment = {cols_deploy, true, row_deploy, NULL};
const struct api_printer api_printer_replicaset = {cols_rs, true, row_rs, NULL};
const struct api_printer api_printer_daemonset = {cols_ds, true, row_ds, NULL};
const struct api_printer api_printer_job = {cols_job, true, row_job, NULL};
const struct api_printer api_printer_cronjob = {cols_cronjob, true, row_cronjob, NULL};
const struct api_printer api_printer_controllerrevision = {cols_controllerrevision, true,
							   row_controllerrevision, NULL};
const struct api_printer api_printer_configmap = {cols_cm, true, row_configmap, NULL};
const struct api_printer api_printer_secret = {cols_secret, true, row_secret, NULL};
const struct api_printer api_printer_event = {cols_event, false, row_event_new, row_event_core};
const struct api_printer api_printer_lease = {cols_lease, true, row_lease, NULL};
const struct api_printer api_printer_device = {cols_device, true, row_device, NULL};
const struct api_printer api_printer_service = {cols_svc, true, row_service, NULL};
const struct api_printer api_printer_endpoints = {cols_ep, true, row_endpoints, NULL};
const struct api_printer api_printer_endpointslice = {cols_eps, true, row_endpointslice, NULL};
const struct api_printer api_printer_service_account = {cols_sa, true, row_sa, NULL};
const struct api_printer api_printer_role = {cols_role, true, row_role, NULL};
const struct api_printer api_printer_binding = {cols_binding, true, row_binding, NULL};
/* clang-format on */

static void api_table_cells(const struct api_resource *res, cJSON *cells, const cJSON *o,
			    uint64_t now_s)
{
	const struct api_printer *pr = res->strategy->printer;
	if (pr->name_first)
		cell_str(cells, jstr(o, "metadata.name", ""));
	if (pr->row_v1 && !res->group[0])
		pr->row_v1(cells, o, now_s);
	else
		pr->row(cells, o, now_s);
}

/* PartialObjectMetadata of o (a copy of its metadata). */
cJSON *api_table_partial_meta(const cJSON *o)
{
	cJSON *p = cJSON_CreateObject();
	if (!p)
		return NULL;
	cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata");
	cJSON_AddStringToObject(p, "apiVersion", "meta.k8s.io/v1");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	cJSON *copy = md ? cJSON_Duplicate(md, true) : cJSON_CreateObject();
	if (copy) {
		/* managed fields and the last-applied annotation are large and unused here */
		cJSON_DeleteItemFromObjectCaseSensitive(copy, "managedFields");
		api_json_put(p, "metadata", copy);
	}
	return p;
}

cJSON *api_table_build(const struct api_resource *res, const cJSON *const *objs, size_t count,
		       uint64_t now_s, const char *rv, bool with_columns)
{
	if (res->strategy == &api_strategy_custom) /* columns from its CRD */
		return api_crd_table(res, objs, count, now_s, rv, with_columns);
	cJSON *t = cJSON_CreateObject();
	if (!t)
		return NULL;
	cJSON_AddStringToObject(t, "kind", "Table");
	cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
	cJSON *md = cJSON_AddObjectToObject(t, "metadata");
	if (md && rv)
		cJSON_AddStringToObject(md, "resourceVersion", rv);
	cJSON *cd = cJSON_AddArrayToObject(t, "columnDefinitions");
	const struct api_printer *pr = res->strategy->printer;
	for (const struct api_col *c = pr->columns; with_columns && cd && c->name; c++) {
		cJSON *col = cJSON_CreateObject();
		if (!col)
			break;
		cJSON_AddStringToObject(col, "name", c->name);
		cJSON_AddStringToObject(col, "type", c->type);
		cJSON_AddStringToObject(col, "format",
					c == pr->columns && pr->name_first ? "name" : "");
		cJSON_AddStringToObject(col, "description", c->desc);
		cJSON_AddNumberToObject(col, "priority", c->priority);
		cJSON_AddItemToArray(cd, col);
	}
	cJSON *rows = cJSON_AddArrayToObject(t, "rows");
	for (size_t i = 0; rows && i < count; i++) {
		cJSON *row = cJSON_CreateObject();
		if (!row)
			break;
		cJSON *cells = cJSON_AddArrayToObject(row, "cells");
		if (cells)
			api_table_cells(res, cells, objs[i], now_s);
		api_json_put(row, "object", api_table_partial_meta(objs[i]));
		cJSON_AddItemToArray(rows, row);
	}
	return t;
}
