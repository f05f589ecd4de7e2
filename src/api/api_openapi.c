/*
 * api_openapi.c - OpenAPI v3 documents for `kubectl apply` validation and `kubectl explain`.
 *
 * /openapi/v3 is an index of group-version documents. Each document carries, per served
 * kind, a PATCH operation tagged with x-kubernetes-group-version-kind and a fieldValidation
 * parameter: that is what makes kubectl 1.32 trust the server to validate (it then sends
 * fieldValidation=Strict and skips the protobuf /openapi/v2 it would otherwise need;
 * kubectl-api.md section 4). components.schemas describe the kinds for explain; they are
 * written below in a compact notation, one property per line:
 *     "name type description"   type: s string, i integer, b boolean, m map of strings,
 *                               [s list of strings, @X reference to schema X,
 *                               [@X list of X, o free-form object, q int-or-string
 * Schema names follow upstream (io.k8s.api.core.v1.Pod) so explain prints familiar text.
 * Returns fresh cJSON trees; read-only tables; any thread.
 */
#include "api/api_crd.h"
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

struct api_schema {
	const char *name;  /* short name; the full name is the prefix + name */
	const char *gvk;   /* "group/version/Kind" of a top-level kind, or NULL */
	const char *desc;  /* description */
	const char *props; /* properties, one per line (see above) */
};

#define META                                                                                       \
	"apiVersion s APIVersion defines the versioned schema of this representation of an "       \
	"object.\n"                                                                                \
	"kind s Kind is a string value representing the REST resource this object represents.\n"   \
	"metadata @ObjectMeta Standard object's metadata.\n"

/* clang-format off */
static const struct api_schema api_schemas[] = {
	{"ObjectMeta", NULL, "ObjectMeta is metadata that all persisted resources must have.",
	 "name s Name must be unique within a namespace.\n"
	 "generateName s Optional prefix used by the server to generate a unique name.\n"
	 "namespace s Namespace defines the space within which each name must be unique.\n"
	 "uid s UID is the unique in time and space value for this object.\n"
	 "resourceVersion s An opaque value that represents the internal version of this object.\n"
	 "generation i A sequence number representing a specific generation of the desired state.\n"
	 "creationTimestamp s Server time when this object was created (RFC 3339).\n"
	 "deletionTimestamp s RFC 3339 date and time at which this resource will be deleted.\n"
	 "deletionGracePeriodSeconds i Seconds allowed for graceful termination.\n"
	 "labels m Map of string keys and values used to organize and categorize objects.\n"
	 "annotations m Unstructured key value map stored with a resource.\n"
	 "ownerReferences [@OwnerReference Objects depended on by this object.\n"
	 "finalizers [s Must be empty before the object is deleted from the registry.\n"},
	{"OwnerReference", NULL, "OwnerReference contains enough information to let you identify an owning object.",
	 "apiVersion s API version of the referent.\nkind s Kind of the referent.\n"
	 "name s Name of the referent.\nuid s UID of the referent.\n"
	 "controller b If true, this reference points to the managing controller.\n"
	 "blockOwnerDeletion b If true, the owner cannot be deleted before this object.\n"},
	{"LabelSelector", NULL, "A label selector is a label query over a set of resources.",
	 "matchLabels m A map of {key,value} pairs.\n"
	 "matchExpressions [@LabelSelectorRequirement A list of label selector requirements.\n"},
	{"LabelSelectorRequirement", NULL, "A selector that contains values, a key, and an operator.",
	 "key s The label key that the selector applies to.\n"
	 "operator s In, NotIn, Exists or DoesNotExist.\nvalues [s An array of string values.\n"},
	{"Condition", NULL, "A condition of an object.",
	 "type s Type of condition.\nstatus s Status of the condition, one of True, False, Unknown.\n"
	 "reason s Unique, one-word, CamelCase reason for the condition's last transition.\n"
	 "message s Human-readable message indicating details about last transition.\n"
	 "lastTransitionTime s Last time the condition transitioned from one status to another.\n"
	 "observedGeneration i The .metadata.generation that the condition was set based upon.\n"},
	{"Pod", "/v1/Pod", "Pod is a WebAssembly module run by a node's interpreter, with a memory limit, an execution budget (gas) and a bounded stack.",
	 META "spec @PodSpec Specification of the desired behavior of the pod.\n"
	 "status @PodStatus Most recently observed status of the pod.\n"},
	{"PodSpec", NULL, "PodSpec is a description of a pod.",
	 "containers [@Container List of containers (Wasm modules) belonging to the pod.\n"
	 "initContainers [@Container Modules run to completion before the containers start.\n"
	 "restartPolicy s Restart policy for all containers: Always, OnFailure, Never.\n"
	 "nodeName s Request to schedule this pod onto a specific node.\n"
	 "nodeSelector m Labels a node must have for the pod to fit.\n"
	 "terminationGracePeriodSeconds i Seconds the pod needs to terminate gracefully.\n"
	 "schedulerName s Scheduler that dispatches the pod.\n"
	 "serviceAccountName s Name of the ServiceAccount to use to run this pod.\n"
	 "dnsPolicy s DNS policy (accepted for compatibility).\n"
	 "tolerations [o The pod's tolerations.\n"},
	{"Container", NULL, "A single application module to run within a pod.",
	 "name s Name of the container specified as a DNS_LABEL.\n"
	 "image s Module image name: a .wasm file in the node's image directory or the cluster.\n"
	 "command [s Entrypoint array.\nargs [s Arguments to the entrypoint.\n"
	 "env [@EnvVar List of environment variables to set in the container.\n"
	 "ports [@ContainerPort List of ports to expose from the container.\n"
	 "resources @ResourceRequirements Compute resources (memory limit in bytes of linear memory, cpu as gas budget).\n"
	 "volumeMounts [@VolumeMount Volumes to mount into the container.\n"
	 "imagePullPolicy s Always, Never, IfNotPresent.\n"},
	{"EnvVar", NULL, "EnvVar represents an environment variable present in a Container.",
	 "name s Name of the environment variable.\nvalue s Value of the variable.\n"},
	{"ContainerPort", NULL, "ContainerPort represents a network port in a single container.",
	 "name s Name of the port.\ncontainerPort i Number of port to expose.\n"
	 "protocol s Protocol for port. Defaults to TCP.\n"},
	{"VolumeMount", NULL, "VolumeMount describes a mounting of a Volume within a container.",
	 "name s Must match the Name of a Volume.\nmountPath s Path within the container.\n"
	 "readOnly b Mounted read-only if true.\n"},
	{"ResourceRequirements", NULL, "ResourceRequirements describes the compute resource requirements.",
	 "limits m Maximum amount of compute resources allowed.\n"
	 "requests m Minimum amount of compute resources required.\n"},
	{"PodStatus", NULL, "PodStatus represents information about the status of a pod.",
	 "phase s Pending, Running, Succeeded, Failed or Unknown.\n"
	 "conditions [@Condition Current service state of pod.\n"
	 "hostIP s IP address of the host to which the pod is assigned.\n"
	 "podIP s IP address allocated to the pod.\n"
	 "startTime s RFC 3339 time at which the pod was acknowledged by the kubelet.\n"
	 "containerStatuses [o The status of each container.\n"
	 "qosClass s The Quality of Service class assigned to the pod.\n"
	 "reason s A brief CamelCase message indicating why the pod is in this state.\n"
	 "message s A human readable message indicating why the pod is in this condition.\n"},
	{"PodTemplateSpec", NULL, "PodTemplateSpec describes the data a pod should have when created from a template.",
	 "metadata @ObjectMeta Standard object's metadata.\n"
	 "spec @PodSpec Specification of the desired behavior of the pod.\n"},
	{"Deployment", "apps/v1/Deployment", "Deployment enables declarative updates for Pods and ReplicaSets.",
	 META "spec @DeploymentSpec Specification of the desired behavior of the Deployment.\n"
	 "status @DeploymentStatus Most recently observed status of the Deployment.\n"},
	{"DeploymentSpec", NULL, "DeploymentSpec is the specification of the desired behavior of the Deployment.",
	 "replicas i Number of desired pods. Defaults to 1.\n"
	 "selector @LabelSelector Label selector for pods.\n"
	 "template @PodTemplateSpec Template describes the pods that will be created.\n"
	 "strategy o The deployment strategy to use to replace existing pods with new ones.\n"
	 "minReadySeconds i Minimum seconds a pod must be ready to count as available.\n"
	 "revisionHistoryLimit i The number of old ReplicaSets to retain.\n"
	 "paused b Indicates that the deployment is paused.\n"
	 "progressDeadlineSeconds i Maximum time in seconds for a deployment to make progress.\n"},
	{"DeploymentStatus", NULL, "DeploymentStatus is the most recently observed status of the Deployment.",
	 "observedGeneration i The generation observed by the deployment controller.\n"
	 "replicas i Total number of non-terminated pods targeted by this deployment.\n"
	 "updatedReplicas i Pods that have the desired template spec.\n"
	 "readyReplicas i Pods with a Ready condition.\n"
	 "availableReplicas i Pods available for at least minReadySeconds.\n"
	 "unavailableReplicas i Pods still required for 100% available capacity.\n"
	 "conditions [@Condition Latest available observations of the deployment's state.\n"},
	{"ReplicaSet", "apps/v1/ReplicaSet", "ReplicaSet ensures that a specified number of pod replicas are running at any given time.",
	 META "spec @ReplicaSetSpec Spec defines the desired behavior of the ReplicaSet.\n"
	 "status @ReplicaSetStatus Most recently observed status of the ReplicaSet.\n"},
	{"ReplicaSetSpec", NULL, "ReplicaSetSpec is the specification of a ReplicaSet.",
	 "replicas i Number of desired pods.\nselector @LabelSelector Label query over pods.\n"
	 "template @PodTemplateSpec The object that describes the pod created on shortage.\n"
	 "minReadySeconds i Minimum seconds a pod must be ready to count as available.\n"},
	{"ReplicaSetStatus", NULL, "ReplicaSetStatus represents the current status of a ReplicaSet.",
	 "replicas i The most recently observed number of replicas.\n"
	 "readyReplicas i The number of ready replicas.\n"
	 "availableReplicas i The number of available replicas.\n"
	 "observedGeneration i The most recent generation observed.\n"},
	{"DaemonSet", "apps/v1/DaemonSet", "DaemonSet represents the configuration of a daemon set: one pod per matching node.",
	 META "spec @DaemonSetSpec The desired behavior of this daemon set.\n"
	 "status @DaemonSetStatus The current status of this daemon set.\n"},
	{"DaemonSetSpec", NULL, "DaemonSetSpec is the specification of a daemon set.",
	 "selector @LabelSelector Label query over pods that are managed by the daemon set.\n"
	 "template @PodTemplateSpec An object that describes the pod that will be created.\n"
	 "updateStrategy o An update strategy to replace existing DaemonSet pods with new pods.\n"
	 "minReadySeconds i Minimum seconds a pod must be ready to count as available.\n"},
	{"DaemonSetStatus", NULL, "DaemonSetStatus represents the current status of a daemon set.",
	 "desiredNumberScheduled i Nodes that should be running the daemon pod.\n"
	 "currentNumberScheduled i Nodes running at least one daemon pod.\n"
	 "numberReady i Nodes with a ready daemon pod.\n"
	 "numberAvailable i Nodes with an available daemon pod.\n"
	 "updatedNumberScheduled i Nodes running the updated daemon pod.\n"},
	{"Job", "batch/v1/Job", "Job represents the configuration of a single job.",
	 META "spec @JobSpec Specification of the desired behavior of a job.\n"
	 "status @JobStatus Current status of a job.\n"},
	{"JobSpec", NULL, "JobSpec describes how the job execution will look like.",
	 "parallelism i Maximum desired number of pods running at any given time.\n"
	 "completions i Desired number of successfully finished pods.\n"
	 "backoffLimit i Number of retries before marking this job failed.\n"
	 "activeDeadlineSeconds i Duration in seconds the job may be active.\n"
	 "template @PodTemplateSpec Describes the pod that will be created when executing a job.\n"
	 "selector @LabelSelector A label query over pods.\n"},
	{"JobStatus", NULL, "JobStatus represents the current state of a Job.",
	 "active i Pending and running pods.\nsucceeded i Pods which reached phase Succeeded.\n"
	 "failed i Pods which reached phase Failed.\nstartTime s When the job started.\n"
	 "completionTime s When the job completed.\n"
	 "conditions [@Condition The latest available observations of an object's current state.\n"},
	{"ControllerRevision", "apps/v1/ControllerRevision", "ControllerRevision implements an immutable snapshot of state data.",
	 META "data o Data is the serialized representation of the state (for a DaemonSet, the patch that restores its template).\n"
	 "revision i Revision indicates the revision of the state represented by Data.\n"},
	{"CronJob", "batch/v1/CronJob", "CronJob represents the configuration of a single cron job.",
	 META "spec @CronJobSpec Specification of the desired behavior of a cron job, including the schedule.\n"
	 "status @CronJobStatus Current status of a cron job.\n"},
	{"CronJobSpec", NULL, "CronJobSpec describes how the job execution will look like and when it will actually run.",
	 "schedule s The schedule in Cron format (five fields, UTC), e.g. \"*/5 * * * *\" or \"@daily\".\n"
	 "timeZone s The time zone name for the given schedule; kube32 supports UTC only.\n"
	 "startingDeadlineSeconds i Deadline in seconds for starting the job if it misses its scheduled time.\n"
	 "concurrencyPolicy s How to treat concurrent executions of a Job: Allow, Forbid or Replace.\n"
	 "suspend b Suspends subsequent executions; does not apply to already started executions.\n"
	 "jobTemplate @JobTemplateSpec Specifies the job that will be created when executing a CronJob.\n"
	 "successfulJobsHistoryLimit i The number of successful finished jobs to retain (default 3).\n"
	 "failedJobsHistoryLimit i The number of failed finished jobs to retain (default 1).\n"},
	{"CronJobStatus", NULL, "CronJobStatus represents the current state of a cron job.",
	 "active [@ObjectReference A list of pointers to currently running jobs.\n"
	 "lastScheduleTime s Information when was the last time the job was successfully scheduled.\n"
	 "lastSuccessfulTime s Information when was the last time the job successfully completed.\n"},
	{"JobTemplateSpec", NULL, "JobTemplateSpec describes the data a Job should have when created from a template.",
	 "metadata @ObjectMeta Standard object's metadata of the jobs created from this template.\n"
	 "spec @JobSpec Specification of the desired behavior of the job.\n"},
	{"Namespace", "/v1/Namespace", "Namespace provides a scope for Names.",
	 META "spec o Spec defines the behavior of the Namespace.\n"
	 "status @NamespaceStatus Status describes the current status of a Namespace.\n"},
	{"NamespaceStatus", NULL, "NamespaceStatus is information about the current status of a Namespace.",
	 "phase s Phase is the current lifecycle phase of the namespace: Active or Terminating.\n"},
	{"Node", "/v1/Node", "Node is a board in the cluster; its kubelet registers it and renews its Lease.",
	 META "spec @NodeSpec Spec defines the behavior of a node.\n"
	 "status @NodeStatus Most recently observed status of the node.\n"},
	{"NodeSpec", NULL, "NodeSpec describes the attributes that a node is created with.",
	 "unschedulable b Controls node schedulability of new pods.\n"
	 "podCIDR s Pod IP range assigned to the node.\ntaints [o The node's taints.\n"},
	{"NodeStatus", NULL, "NodeStatus is information about the current status of a node.",
	 "capacity m Total resources of the node (pod pool bytes, hardware).\n"
	 "allocatable m Resources of a node available for scheduling.\n"
	 "conditions [@Condition Conditions is an array of current observed node conditions.\n"
	 "addresses [o List of addresses reachable to the node.\n"
	 "nodeInfo o Set of ids/uuids to uniquely identify the node (board profile, versions).\n"},
	{"ConfigMap", "/v1/ConfigMap", "ConfigMap holds configuration data for pods to consume.",
	 META "data m Configuration data (UTF-8 strings).\n"
	 "binaryData m Binary configuration data (base64).\n"
	 "immutable b If set to true, the data cannot be updated.\n"},
	{"Secret", "/v1/Secret", "Secret holds secret data of a certain type.",
	 META "data m Secret data, base64 encoded.\n"
	 "stringData m Write-only convenience field: merged into data on write.\n"
	 "type s Used to facilitate programmatic handling of secret data.\n"
	 "immutable b If set to true, the data cannot be updated.\n"},
	{"Event", "/v1/Event", "Event is a report of an event somewhere in the cluster.",
	 META "involvedObject @ObjectReference The object that this event is about.\n"
	 "reason s Short, machine understandable string that gives the reason for the transition.\n"
	 "message s A human-readable description of the status of this operation.\n"
	 "type s Type of this event (Normal, Warning).\n"
	 "count i The number of times this event has occurred.\n"
	 "firstTimestamp s The time at which the event was first recorded.\n"
	 "lastTimestamp s The time at which the most recent occurrence was recorded.\n"
	 "eventTime s Time when this Event was first observed.\n"
	 "source o The component reporting this event.\n"
	 "reportingComponent s Name of the controller that emitted this Event.\n"
	 "reportingInstance s ID of the controller instance.\n"},
	{"ObjectReference", NULL, "ObjectReference contains enough information to let you inspect or modify the referred object.",
	 "apiVersion s API version of the referent.\nkind s Kind of the referent.\n"
	 "name s Name of the referent.\nnamespace s Namespace of the referent.\n"
	 "uid s UID of the referent.\nfieldPath s A piece of an object.\n"},
	{"EventsV1Event", "events.k8s.io/v1/Event", "Event is a report of an event somewhere in the cluster.",
	 META "regarding @ObjectReference The object this Event is about.\n"
	 "reason s Why the action was taken.\nnote s A human-readable description.\n"
	 "type s Normal or Warning.\naction s What action was taken/failed.\n"
	 "eventTime s Time when this Event was first observed.\n"
	 "series o Data about the Event series this event represents.\n"
	 "reportingController s Name of the controller that emitted this Event.\n"
	 "reportingInstance s ID of the controller instance.\n"},
	{"Service", "/v1/Service", "Service names a set of pods by selector; kube32 routes to its ready pods through any node's pod server (header X-Kube32-Service: <namespace>/<name>) and the API server's services/proxy.",
	 META "spec @ServiceSpec Spec defines the behavior of a service.\n"
	 "status @ServiceStatus Most recently observed status of the service.\n"},
	{"ServiceSpec", NULL, "ServiceSpec describes the attributes that a user creates on a service.",
	 "ports [@ServicePort The list of ports that are exposed by this service.\n"
	 "selector m Route service traffic to pods with label keys and values matching this selector.\n"
	 "type s ClusterIP (the only type kube32 serves).\n"
	 "clusterIP s Unset or None: kube32 allocates no cluster IPs.\n"
	 "sessionAffinity s None (requests are balanced round-robin).\n"
	 "internalTrafficPolicy s Cluster.\n"},
	{"ServicePort", NULL, "ServicePort contains information on service's port.",
	 "name s The name of this port within the service (required with more than one port).\n"
	 "protocol s TCP.\n"
	 "port i The port that will be exposed by this service.\n"
	 "targetPort q Number or name of the port to access on the pods (a kube32 pod answers on its one HTTP handler).\n"
	 "appProtocol s The application protocol for this port.\n"},
	{"ServiceStatus", NULL, "ServiceStatus represents the current status of a service.",
	 "loadBalancer o Empty: kube32 has no load balancers.\n"
	 "conditions [@Condition Current service state.\n"},
	{"Endpoints", "/v1/Endpoints", "Endpoints is the set of a Service's ready pods; each address is the pod's node's pod server.",
	 META "subsets [@EndpointSubset The set of all endpoints, one subset per node pod server.\n"},
	{"EndpointSubset", NULL, "EndpointSubset is a group of addresses with a common set of ports.",
	 "addresses [@EndpointAddress Ready addresses (the node's pod server, per pod).\n"
	 "notReadyAddresses [@EndpointAddress Addresses of pods that are not ready.\n"
	 "ports [@EndpointPort Port numbers available on the related addresses (the node's pod server port).\n"},
	{"EndpointAddress", NULL, "EndpointAddress is a single address of an endpoint.",
	 "ip s The node's pod server address (InternalIP).\n"
	 "hostname s The hostname of this endpoint.\n"
	 "nodeName s The node hosting this endpoint.\n"
	 "targetRef @ObjectReference Reference to the pod providing the endpoint.\n"},
	{"EndpointPort", NULL, "EndpointPort is a tuple that describes a single port.",
	 "name s The name of this port (the Service port's name).\n"
	 "port i The port number of the endpoint (the node's pod server port).\n"
	 "protocol s TCP.\n"
	 "appProtocol s The application protocol for this port.\n"},
	{"EndpointSlice", "discovery.k8s.io/v1/EndpointSlice", "EndpointSlice represents a subset of the endpoints that implement a service (kube32: one node's pod server per slice).",
	 META "addressType s IPv4, IPv6 or FQDN.\n"
	 "endpoints [@SliceEndpoint A list of unique endpoints in this slice.\n"
	 "ports [@SliceEndpointPort The ports exposed by each endpoint (the node's pod server port).\n"},
	{"SliceEndpoint", NULL, "Endpoint represents a single logical backend implementing a service.",
	 "addresses [s Addresses of this endpoint (the node's pod server address).\n"
	 "conditions @SliceEndpointConditions The current state of the endpoint.\n"
	 "nodeName s The name of the Node hosting this endpoint.\n"
	 "targetRef @ObjectReference Reference to the pod providing the endpoint.\n"
	 "zone s The name of the zone this endpoint exists in.\n"},
	{"SliceEndpointConditions", NULL, "EndpointConditions represents the current condition of an endpoint.",
	 "ready b The endpoint is ready to receive traffic.\n"
	 "serving b The endpoint is serving.\n"
	 "terminating b The endpoint is terminating.\n"},
	{"SliceEndpointPort", NULL, "EndpointPort represents a Port used by an EndpointSlice.",
	 "name s The name of this port.\n"
	 "protocol s TCP.\n"
	 "port i The port number of the endpoint.\n"
	 "appProtocol s The application protocol for this port.\n"},
	{"Lease", "coordination.k8s.io/v1/Lease", "Lease defines a lease concept.",
	 META "spec @LeaseSpec Specification of the Lease.\n"},
	{"LeaseSpec", NULL, "LeaseSpec is a specification of a Lease.",
	 "holderIdentity s Identity of the holder of a current lease.\n"
	 "leaseDurationSeconds i Duration that candidates for a lease need to wait to force acquire it.\n"
	 "acquireTime s When the current lease was acquired.\n"
	 "renewTime s When the current holder of a lease has last updated the lease.\n"
	 "leaseTransitions i The number of transitions of a lease between holders.\n"},
	{"Device", "kube32.io/v1alpha1/Device", "Device is an I2C peripheral on a node's bus, read by a driver pod that the Device controller creates.",
	 META "spec @DeviceSpec Where the device is and which driver reads it.\n"
	 "status @DeviceStatus The latest readings and the driver's state.\n"},
	{"DeviceSpec", NULL, "DeviceSpec names a device on a node's I2C bus.",
	 "node s Node whose kubelet owns the bus.\n"
	 "bus i Platform bus index (Cardputer Grove port = 0).\n"
	 "muxChannel i Optional multiplexer channel 0..7; absent means directly on the bus.\n"
	 "address i 7-bit I2C address (0x08..0x77).\n"
	 "model s bme688, miniscale or rfid: selects the driver image.\n"
	 "pollIntervalMs i Milliseconds between readings (rfid default 200, others 3000).\n"
	 "params m Driver parameters, read with k32_device_param.\n"},
	{"DeviceStatus", NULL, "DeviceStatus reports the driver pod and the latest readings.",
	 "driverPod s Name of the driver pod.\n"
	 "readings m Latest readings as decimal strings (e.g. temperature_c).\n"
	 "lastReadTime s RFC 3339 time of the latest reading, stamped by the kubelet.\n"
	 "conditions [@Condition Ready with reasons Reading, NotFound, BusError, NoReading, DriverCrash.\n"},
	/* RBAC and ServiceAccounts (api_rbac.c, api_token.c) */
	{"ServiceAccount", "/v1/ServiceAccount", "ServiceAccount binds together a name understood by users and by RBAC, and the tokens TokenRequest issues for it.",
	 META "secrets [@ObjectReference Kept for compatibility; kube32 issues no Secret-based tokens.\n"
	 "imagePullSecrets [o Kept for compatibility.\n"
	 "automountServiceAccountToken b Kept for compatibility (pods get no token file).\n"},
	{"PolicyRule", NULL, "PolicyRule holds information that describes a policy rule.",
	 "verbs [s Verbs that apply to all the resources of the rule; '*' is all.\n"
	 "apiGroups [s API groups of the resources; '' is the core group, '*' all.\n"
	 "resources [s Resources, 'pods/log' for a subresource, '*' all.\n"
	 "resourceNames [s Optional allow list of names; empty allows every name.\n"
	 "nonResourceURLs [s Partial URLs ('/metrics', '/logs/*'); ClusterRoles only.\n"},
	{"Role", "rbac.authorization.k8s.io/v1/Role", "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.",
	 META "rules [@PolicyRule Rules holds all the PolicyRules for this Role.\n"},
	{"ClusterRole", "rbac.authorization.k8s.io/v1/ClusterRole", "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.",
	 META "rules [@PolicyRule Rules holds all the PolicyRules for this ClusterRole.\n"
	 "aggregationRule o Accepted and stored; kube32 does not aggregate.\n"},
	{"Subject", NULL, "Subject names a user, group or service account.",
	 "kind s User, Group or ServiceAccount.\napiGroup s rbac.authorization.k8s.io for User and Group, '' for ServiceAccount.\n"
	 "name s Name of the object being referenced.\n"
	 "namespace s Namespace of a ServiceAccount (default: the RoleBinding's).\n"},
	{"RoleRef", NULL, "RoleRef contains information that points to the role being used.",
	 "apiGroup s rbac.authorization.k8s.io.\nkind s Role or ClusterRole.\nname s Name of the role.\n"},
	{"RoleBinding", "rbac.authorization.k8s.io/v1/RoleBinding", "RoleBinding grants the permissions of a Role or ClusterRole to subjects within its namespace.",
	 META "subjects [@Subject The users, groups and service accounts bound.\n"
	 "roleRef @RoleRef The Role or ClusterRole bound.\n"},
	{"ClusterRoleBinding", "rbac.authorization.k8s.io/v1/ClusterRoleBinding", "ClusterRoleBinding grants the permissions of a ClusterRole cluster-wide.",
	 META "subjects [@Subject The users, groups and service accounts bound.\n"
	 "roleRef @RoleRef The ClusterRole bound.\n"},
};
/* clang-format on */

#define API_SCHEMA_COUNT (sizeof(api_schemas) / sizeof(api_schemas[0]))

static void api_schema_full_name(const struct api_schema *s, char *buf, size_t cap)
{
	const char *prefix = "io.k8s.api.core.v1.";
	if (!strcmp(s->name, "ObjectMeta") || !strcmp(s->name, "OwnerReference") ||
	    !strncmp(s->name, "LabelSelector", 13) || !strcmp(s->name, "Condition"))
		prefix = "io.k8s.apimachinery.pkg.apis.meta.v1.";
	else if (s->gvk && !strncmp(s->gvk, "apps/", 5))
		prefix = "io.k8s.api.apps.v1.";
	else if (!strncmp(s->name, "Deployment", 10) || !strncmp(s->name, "ReplicaSet", 10) ||
		 !strncmp(s->name, "DaemonSet", 9))
		prefix = "io.k8s.api.apps.v1.";
	else if (!strncmp(s->name, "Job", 3) || !strncmp(s->name, "CronJob", 7))
		prefix = "io.k8s.api.batch.v1.";
	else if (!strncmp(s->name, "Lease", 5))
		prefix = "io.k8s.api.coordination.v1.";
	else if (!strncmp(s->name, "Device", 6))
		prefix = "io.kube32.v1alpha1.";
	else if ((s->gvk && !strncmp(s->gvk, "rbac.", 5)) || !strcmp(s->name, "PolicyRule") ||
		 !strcmp(s->name, "Subject") || !strcmp(s->name, "RoleRef"))
		prefix = "io.k8s.api.rbac.v1.";
	if (!strncmp(s->name, "Slice", 5) || !strcmp(s->name, "EndpointSlice")) {
		/* discovery.k8s.io's Endpoint and EndpointPort (core/v1 has an EndpointPort) */
		snprintf(buf, cap, "io.k8s.api.discovery.v1.%s",
			 strncmp(s->name, "Slice", 5) ? s->name : s->name + 5);
		return;
	}
	if (!strcmp(s->name, "EventsV1Event")) {
		snprintf(buf, cap, "io.k8s.api.events.v1.Event");
		return;
	}
	snprintf(buf, cap, "%s%s", prefix, s->name);
}

static const struct api_schema *api_schema_find(const char *name, size_t n)
{
	for (size_t i = 0; i < API_SCHEMA_COUNT; i++)
		if (strlen(api_schemas[i].name) == n && !strncmp(api_schemas[i].name, name, n))
			return &api_schemas[i];
	return NULL;
}

static cJSON *api_ref(const char *name, size_t n)
{
	char full[128];
	const struct api_schema *s = api_schema_find(name, n);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (!s)
		return o;
	api_schema_full_name(s, full, sizeof(full));
	char ref[160];
	snprintf(ref, sizeof(ref), "#/components/schemas/%s", full);
	cJSON *all = cJSON_AddArrayToObject(o, "allOf");
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "$ref", ref);
	cJSON_AddItemToArray(all, r);
	return o;
}

/* Schema object for one type code (without the leading '['). */
static cJSON *api_type_schema(const char *t, size_t n)
{
	if (t[0] == '@')
		return api_ref(t + 1, n - 1);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	switch (t[0]) {
	case 's':
		cJSON_AddStringToObject(o, "type", "string");
		break;
	case 'i':
		cJSON_AddStringToObject(o, "type", "integer");
		cJSON_AddStringToObject(o, "format", "int64");
		break;
	case 'b':
		cJSON_AddStringToObject(o, "type", "boolean");
		break;
	case 'm': {
		cJSON_AddStringToObject(o, "type", "object");
		cJSON *ap = cJSON_AddObjectToObject(o, "additionalProperties");
		cJSON_AddStringToObject(ap, "type", "string");
		cJSON_AddStringToObject(ap, "default", "");
		break;
	}
	case 'q':
		cJSON_AddBoolToObject(o, "x-kubernetes-int-or-string", true);
		break;
	default:
		cJSON_AddStringToObject(o, "type", "object");
		cJSON_AddBoolToObject(o, "x-kubernetes-preserve-unknown-fields", true);
		break;
	}
	return o;
}

static cJSON *api_schema_json(const struct api_schema *s)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "description", s->desc);
	cJSON_AddStringToObject(o, "type", "object");
	cJSON *props = cJSON_AddObjectToObject(o, "properties");
	const char *p = s->props;
	while (props && *p) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		const char *sp1 = memchr(p, ' ', (size_t)(eol - p));
		const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
		if (!sp2)
			break;
		char name[48], desc[256];
		snprintf(name, sizeof(name), "%.*s", (int)(sp1 - p), p);
		snprintf(desc, sizeof(desc), "%.*s", (int)(eol - sp2 - 1), sp2 + 1);
		const char *t = sp1 + 1;
		size_t tn = (size_t)(sp2 - t);
		cJSON *prop;
		if (t[0] == '[') {
			prop = cJSON_CreateObject();
			cJSON_AddStringToObject(prop, "type", "array");
			api_json_put(prop, "items", api_type_schema(t + 1, tn - 1));
		} else {
			prop = api_type_schema(t, tn);
		}
		if (prop) {
			cJSON_AddStringToObject(prop, "description", desc);
			api_json_put(props, name, prop);
		}
		p = *eol ? eol + 1 : eol;
	}
	if (s->gvk) {
		char g[64], v[16], k[48];
		const char *a = strchr(s->gvk, '/');
		const char *b = a ? strchr(a + 1, '/') : NULL;
		if (a && b) {
			snprintf(g, sizeof(g), "%.*s", (int)(a - s->gvk), s->gvk);
			snprintf(v, sizeof(v), "%.*s", (int)(b - a - 1), a + 1);
			snprintf(k, sizeof(k), "%s", b + 1);
			cJSON *arr = cJSON_AddArrayToObject(o, "x-kubernetes-group-version-kind");
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "group", g);
			cJSON_AddStringToObject(e, "version", v);
			cJSON_AddStringToObject(e, "kind", k);
			cJSON_AddItemToArray(arr, e);
		}
	}
	return o;
}

cJSON *api_openapi_index(void)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	cJSON *idx = cJSON_CreateObject();
	cJSON *paths = idx ? cJSON_AddObjectToObject(idx, "paths") : NULL;
	for (size_t i = 0; paths && i < count; i++) {
		char key[96], url[128];
		if (all[i]->group[0])
			snprintf(key, sizeof(key), "apis/%s/%s", all[i]->group, all[i]->version);
		else
			snprintf(key, sizeof(key), "api/%s", all[i]->version);
		if (cJSON_GetObjectItemCaseSensitive(paths, key))
			continue;
		snprintf(url, sizeof(url), "/openapi/v3/%s?hash=kube32v1", key);
		cJSON *e = cJSON_AddObjectToObject(paths, key);
		cJSON_AddStringToObject(e, "serverRelativeURL", url);
	}
	return idx;
}

static cJSON *api_op(const struct api_resource *r, const char *action, bool validation)
{
	cJSON *op = cJSON_CreateObject();
	if (!op)
		return NULL;
	char id[96];
	snprintf(id, sizeof(id), "%s%s", action, r->kind);
	cJSON_AddStringToObject(op, "operationId", id);
	cJSON_AddStringToObject(op, "x-kubernetes-action", action);
	cJSON *gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
	cJSON_AddStringToObject(gvk, "group", r->group);
	cJSON_AddStringToObject(gvk, "version", r->version);
	cJSON_AddStringToObject(gvk, "kind", r->kind);
	cJSON *params = cJSON_AddArrayToObject(op, "parameters");
	static const char *const names[] = {"dryRun", "fieldManager", "fieldValidation"};
	for (size_t i = 0; validation && params && i < 3; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", names[i]);
		cJSON_AddStringToObject(p, "in", "query");
		cJSON *sch = cJSON_AddObjectToObject(p, "schema");
		cJSON_AddStringToObject(sch, "type", "string");
		cJSON_AddBoolToObject(p, "uniqueItems", true);
		cJSON_AddItemToArray(params, p);
	}
	cJSON *resp = cJSON_AddObjectToObject(op, "responses");
	cJSON *ok = cJSON_AddObjectToObject(resp, "200");
	cJSON_AddStringToObject(ok, "description", "OK");
	return op;
}

cJSON *api_openapi_group_version(const char *group, const char *version)
{
	const struct api_resource *all[API_REGISTRY_MAX];
	size_t count = api_registry_list(all, API_REGISTRY_MAX);
	bool served = false;
	for (size_t i = 0; i < count; i++)
		if (!strcmp(all[i]->group, group) && !strcmp(all[i]->version, version))
			served = true;
	if (!served)
		return NULL;
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	cJSON_AddStringToObject(doc, "openapi", "3.0.0");
	cJSON *info = cJSON_AddObjectToObject(doc, "info");
	cJSON_AddStringToObject(info, "title", "kube32");
	cJSON_AddStringToObject(info, "version", "v1.32.0-kube32");
	cJSON *paths = cJSON_AddObjectToObject(doc, "paths");
	for (size_t i = 0; paths && i < count; i++) {
		const struct api_resource *r = all[i];
		if (strcmp(r->group, group) || strcmp(r->version, version))
			continue;
		char path[192], gv[96];
		if (r->group[0])
			snprintf(gv, sizeof(gv), "/apis/%s/%s", r->group, r->version);
		else
			snprintf(gv, sizeof(gv), "/api/%s", r->version);
		if (!(r->verbs & API_VERB_GET)) {
			snprintf(path, sizeof(path), "%s/%s", gv, r->plural);
			cJSON *item = cJSON_AddObjectToObject(paths, path);
			api_json_put(item, "post", api_op(r, "post", true));
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s%s/{name}", gv,
			 r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
		cJSON *item = cJSON_AddObjectToObject(paths, path);
		api_json_put(item, "get", api_op(r, "get", false));
		api_json_put(item, "put", api_op(r, "put", true));
		api_json_put(item, "patch", api_op(r, "patch", true));
		api_json_put(item, "delete", api_op(r, "delete", false));
		snprintf(path, sizeof(path), "%s/%s%s", gv,
			 r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
		item = cJSON_AddObjectToObject(paths, path);
		api_json_put(item, "get", api_op(r, "list", false));
		api_json_put(item, "post", api_op(r, "post", true));
	}
	cJSON *comp = cJSON_AddObjectToObject(doc, "components");
	cJSON *schemas = comp ? cJSON_AddObjectToObject(comp, "schemas") : NULL;
	for (size_t i = 0; schemas && i < API_SCHEMA_COUNT; i++) {
		char full[128];
		api_schema_full_name(&api_schemas[i], full, sizeof(full));
		api_json_put(schemas, full, api_schema_json(&api_schemas[i]));
	}
	if (schemas)
		api_crd_openapi(group, version, schemas);
	return doc;
}
