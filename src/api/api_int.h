/*
 * api_int.h - internals shared by the files of the Kubernetes API layer (src/api/).
 *
 * Division of the module:
 *   api_registry.c  the served kinds: group/version/kind, plural, scope, verbs, short names,
 *                   categories, subresources, field-selector fields, strategy.
 *   api_status.c    Kubernetes Status error objects (struct api_fail -> JSON).
 *   api_select.c    label and field selector parser + matcher.
 *   api_discovery.c /version, /api, /apis, per-group-version lists, aggregated discovery.
 *   api_openapi.c   /openapi/v3 index and per-group-version documents.
 *   api_openapi_v2.c /openapi/v2 from the same schemas, as JSON or protobuf.
 *   api_table.c     Table output (as=Table) per kind.
 *   api_validate.c  defaulting and validation per kind (422 Invalid with field causes).
 *   api_patch.c     JSON merge patch, strategic merge patch, JSON patch.
 *   api_pb.c        the protobuf request-body decoder kubectl 1.32 needs.
 * The server proper (api_srv.h; needs the store and http layers):
 *   api_server.c    HTTP glue, routing, discovery endpoints, tokens, authorization,
 *                   access/rules/self reviews, api_do.
 *   api_crud.c      get, list, create, update, patch, status and scale.
 *   api_delete.c    delete, deletecollection, cascades, namespaces, binding/eviction/log.
 *   api_watch.c     watch streams over HTTP and the in-process watch.
 *   api_events.c    the Events recorder and event GC.
 *   api_events_v1.c events.k8s.io/v1 as a view of the one (core/v1) Event store.
 *
 * Invariants: every function that can fail on client input fills a struct api_fail (HTTP
 * code, reason, message, causes) instead of aborting; nothing here recurses without a depth
 * bound (K32_API_MAX_DEPTH); strings returned from the registry are static.
 * Context: the registry is read-only after start; all other helpers are reentrant.
 */
#ifndef API_INT_H
#define API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "k32/k32_config.h"
#include "base/k32_buf.h"
#include "base/k32_status.h"

/* Limits: K32_API_* in include/k32/k32_config.h ("api" section). */

/* ---- verbs ----------------------------------------------------------------------------- */

enum {
	API_VERB_CREATE = 1u << 0,
	API_VERB_DELETE = 1u << 1,
	API_VERB_DELETECOLLECTION = 1u << 2,
	API_VERB_GET = 1u << 3,
	API_VERB_LIST = 1u << 4,
	API_VERB_PATCH = 1u << 5,
	API_VERB_UPDATE = 1u << 6,
	API_VERB_WATCH = 1u << 7,
};
#define API_VERBS_ALL 0xffu

/* Subresources a kind serves. */
enum {
	API_SUB_STATUS = 1u << 0,
	API_SUB_SCALE = 1u << 1,
	API_SUB_BINDING = 1u << 2,
	API_SUB_EVICTION = 1u << 3,
	API_SUB_LOG = 1u << 4,
	API_SUB_TOKEN = 1u << 5, /* serviceaccounts/token (TokenRequest) */
};

/* One served resource. Static, read-only. */
struct api_resource {
	const char *group;		     /* "" for core */
	const char *version;		     /* "v1" */
	const char *kind;		     /* "Pod" */
	const char *plural;		     /* "pods" (the URL segment and store key) */
	const char *singular;		     /* "pod" */
	bool namespaced;		     /* Namespaced or Cluster scope */
	uint32_t verbs;			     /* API_VERB_* */
	uint32_t subresources;		     /* API_SUB_* */
	const char *short_names;	     /* comma-separated ("po"), or "" */
	bool in_all;			     /* category "all" */
	const char *fields;		     /* comma-separated extra field-selector fields */
	const char *description;	     /* one-line description for explain */
	const struct api_strategy *strategy; /* what the kind does differently (never NULL) */
};

struct api_fail;

/* What a node may write of a kind (NodeRestriction); a node reads everything. */
enum api_node_access {
	API_NODE_NONE = 0,	 /* nothing */
	API_NODE_SELF,		 /* the object named as the node (its Node) */
	API_NODE_SELF_LEASE,	 /* the object named as the node in kube-node-lease (its Lease) */
	API_NODE_NO_DELETE,	 /* anything but delete (Events) */
	API_NODE_BOUND_POD,	 /* status and delete of pods bound to it; never create or spec */
	API_NODE_STATUS_OF_NODE, /* the status of objects whose spec.node is it (Devices) */
	API_NODE_ALL,		 /* anything (reviews of its own access) */
};

/* What one kind does differently in the generic create and update paths, as
 * kube-apiserver's per-resource strategies; reached from the kind's registry row, so a new
 * kind is one strategy and one row. NULL members: the kind has none of that. Defined in
 * api_validate.c. */
struct api_strategy {
	/* fills the server's defaults into a new or updated object (phase, replicas ...) */
	void (*defaults)(cJSON *obj);
	/* adds a field cause to f for each invalid part of obj beyond the common metadata */
	void (*validate)(const cJSON *obj, struct api_fail *f);
	/* fieldValidation: the known top-level fields (NULL: not checked), the known spec
	 * fields (NULL: spec not checked), whether spec is a pod spec and whether
	 * spec.template is a pod template (both checked down to their containers) */
	const char *top_fields;
	const char *spec_fields;
	bool spec_is_pod;
	bool spec_has_template;
	/* metadata.generation counts changes of spec */
	bool generation;
	/* the name is a DNS label (namespaces), else a DNS subdomain; or, for the RBAC kinds
	 * (whose names may hold ':' as "system:aggregate-to-view" does), any path segment:
	 * not "." or "..", no '/' or '%', at most 253 bytes */
	bool name_is_label;
	bool name_is_path_segment;
	/* what a node may write of the kind, and whether a node's write of its own object
	 * goes through api_node_restrict's label and capacity rules */
	enum api_node_access node_access;
	bool node_restricted;
	/* the Table columns of kubectl get and how a row fills them (api_table.c) */
	const struct api_printer *printer;
	/* deletion: the kind the API cascades to (group, version, plural; NULL plural: none);
	 * whether an object bound to a node (spec.nodeName) is marked and left to its kubelet
	 * with spec.terminationGracePeriodSeconds (pods); whether deleting one marks it
	 * Terminating, empties it asynchronously and spares the system ones (namespaces) */
	struct {
		const char *group, *version, *plural;
	} dependents;
	bool graceful_on_node;
	bool is_namespace;
	/* computed from the request and answered, never stored; POST only (the reviews) */
	bool review;
};

struct api_printer;
extern const struct api_printer api_printer_default, api_printer_pod, api_printer_node,
    api_printer_namespace, api_printer_deployment, api_printer_replicaset, api_printer_daemonset,
    api_printer_job, api_printer_cronjob, api_printer_controllerrevision, api_printer_configmap,
    api_printer_secret, api_printer_event, api_printer_lease, api_printer_device,
    api_printer_service_account, api_printer_role, api_printer_binding;
extern const struct api_strategy api_strategy_namespace, api_strategy_node, api_strategy_pod,
    api_strategy_configmap, api_strategy_secret, api_strategy_event, api_strategy_deployment,
    api_strategy_replicaset, api_strategy_daemonset, api_strategy_job, api_strategy_cronjob,
    api_strategy_controllerrevision, api_strategy_lease, api_strategy_access_review,
    api_strategy_self_review, api_strategy_device;
/* Service, Endpoints, EndpointSlice (api_service.c's strategies) */
extern const struct api_printer api_printer_service, api_printer_endpoints,
    api_printer_endpointslice;
extern const struct api_strategy api_strategy_service, api_strategy_endpoints,
    api_strategy_endpointslice;
/* RBAC kinds (api_rbac.c) and ServiceAccount (api_token.c). */
extern const struct api_strategy api_strategy_role, api_strategy_cluster_role,
    api_strategy_role_binding, api_strategy_cluster_role_binding, api_strategy_service_account;

/* Rows api_registry_list may return: the static ones and every custom row (api_crd.h). */
#define API_REGISTRY_STATIC_MAX 32
#define API_REGISTRY_MAX	(API_REGISTRY_STATIC_MAX + K32_API_MAX_CRDS * K32_API_CRD_MAX_VERSIONS)
/* Every served resource, the built-in ones (discovery order) then those of the established
 * CRDs, as pointers into out (at most cap); returns how many. */
size_t api_registry_list(const struct api_resource **out, size_t cap);
/* The built-in resources, in discovery order (core first). */
const struct api_resource *api_registry_all(size_t *out_count);
/* The resource served at group/version/plural, or NULL. */
const struct api_resource *api_registry_find(const char *group, const char *version,
					     const char *plural);
/* The resource of an apiVersion ("apps/v1", "v1") and kind, or NULL. */
const struct api_resource *api_registry_find_kind(const char *api_version, const char *kind);
/* "apps/v1" or "v1" into buf; returns buf. */
const char *api_resource_api_version(const struct api_resource *res, char *buf, size_t cap);
/* Bytes of a "why" an authorizer writes for a 403 (api_authorize): a user, verb, resource,
 * group and namespace (each clipped to K32_MSG_CLIP_LEN) and the advice. */
#define API_WHY_LEN 400
/* Bytes of a buffer for api_resource_api_version: a CRD's group (63) "/" its version (15). */
#define API_VERSION_LEN 80
/* Bytes of a buffer for api_resource_qualified: a CRD's plural (63) "." its group (63). */
#define API_QUALIFIED_LEN 128
/* "deployments.apps" or "pods" (as upstream messages name resources) into buf. */
const char *api_resource_qualified(const struct api_resource *res, char *buf, size_t cap);
/* Whether field is a field-selector field of res (metadata.name/namespace always are). */
bool api_resource_has_field(const struct api_resource *res, const char *field);

/* ---- Status errors --------------------------------------------------------------------- */

struct api_cause {
	char reason[24]; /* FieldValueInvalid, FieldValueRequired, ... */
	char field[64];	 /* "metadata.name" */
	char message[224];
};

/* A failure to report as a Kubernetes Status. Fixed size: filling it never allocates. */
struct api_fail {
	int code;		      /* HTTP status code (404, 409, 422, ...) */
	const char *reason;	      /* static: "NotFound", "Invalid", ... */
	char message[480];	      /* the Status message */
	char name[254];		      /* details.name: any legal name whole (kubectl prints it) */
	char kind[API_QUALIFIED_LEN]; /* details.kind (a CRD's Kind.group in a 422) */
	char group[64];		      /* details.group (a CRD's group is at most 63) */
	struct api_cause causes[K32_API_MAX_CAUSES];
	size_t cause_count;
	uint32_t retry_after_s; /* details.retryAfterSeconds for 429 (0 = absent) */
};

/* Warnings an answer carries as `Warning: 299 - "text"` headers (kube-apiserver's form;
 * kubectl prints "Warning: text"). Fixed size; filling it never allocates. */
struct api_warnings {
	char text[K32_API_MAX_WARNINGS][K32_API_WARNING_LEN];
	size_t count; /* warnings added, which may pass K32_API_MAX_WARNINGS */
};

/* Adds a warning (past K32_API_MAX_WARNINGS the last kept one says how many more came). */
void api_warn(struct api_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Messages (Status, causes, warnings) that did not fit their buffer since start: each is a
 * sizing bug (it ends with "..." and is logged); the message table test asserts 0. */
size_t api_fail_cut_count(void);
/* Clears f (code 0 means no failure). */
void api_fail_clear(struct api_fail *f);
/* Sets code, reason and a printf message; returns a k32 status matching the code. */
k32_status_t api_fail_set(struct api_fail *f, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Helpers for the common errors (message forms as upstream prints them). */
k32_status_t api_fail_not_found(struct api_fail *f, const struct api_resource *res,
				const char *name);
k32_status_t api_fail_already_exists(struct api_fail *f, const struct api_resource *res,
				     const char *name);
k32_status_t api_fail_conflict(struct api_fail *f, const struct api_resource *res,
			       const char *name);
k32_status_t api_fail_forbidden(struct api_fail *f, const struct api_resource *res,
				const char *name, const char *why);
/* Adds a field cause (ignored past K32_API_MAX_CAUSES; the message says how many). */
void api_fail_add_cause(struct api_fail *f, const char *reason, const char *field, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));
/* Turns collected causes into a 422 Invalid for kind "name". Returns INVALID_ARGS. */
k32_status_t api_fail_invalid(struct api_fail *f, const char *kind, const char *name);
/* The Status JSON of f. */
cJSON *api_fail_to_json(const struct api_fail *f);
/* The k32 status that matches an HTTP code. */
k32_status_t api_status_for_code(int code);

/* ---- selectors ------------------------------------------------------------------------- */

enum api_sel_op {
	API_SEL_EQ,
	API_SEL_NEQ,
	API_SEL_IN,
	API_SEL_NOTIN,
	API_SEL_EXISTS,
	API_SEL_NOTEXISTS,
};

struct api_sel_term {
	const char *key; /* points into the selector's text copy */
	enum api_sel_op op;
	const char *values[K32_API_MAX_SELECTOR_VALUES];
	size_t value_count;
};

struct api_selector {
	char text[K32_API_SELECTOR_LEN]; /* NUL-separated copy of the tokens */
	struct api_sel_term terms[K32_API_MAX_SELECTOR_TERMS];
	size_t term_count;
};

/* Parses a label selector (k=v, k==v, k!=v, k in (a,b), k notin (a), k, !k). "" matches all. */
k32_status_t api_label_selector_parse(const char *s, struct api_selector *out, struct api_fail *f);
/* Whether labels (a JSON object or NULL) satisfy sel. */
bool api_label_selector_match(const struct api_selector *sel, const cJSON *labels);
/* Parses a field selector (k=v, k==v, k!=v), checking each field is supported by res. */
k32_status_t api_field_selector_parse(const char *s, const struct api_resource *res,
				      struct api_selector *out, struct api_fail *f);
/* Whether obj's fields satisfy sel (missing field compares as ""). */
bool api_field_selector_match(const struct api_selector *sel, const cJSON *obj);
/* The string value of a dotted field of obj for selectors ("" if absent; numbers/bools as
 * text into buf). */
const char *api_field_value(const cJSON *obj, const char *path, char *buf, size_t cap);
/* Builds "k=v,k2=v2" from a matchLabels object into buf; false if it did not fit. */
bool api_selector_from_match_labels(const cJSON *match_labels, char *buf, size_t cap);

/* ---- JSON output helpers --------------------------------------------------------------- */

/* Adds v under key k of o, like cJSON_AddItemToObject, but frees v when that fails (the
 * key copy could not be allocated, or o or v is NULL), so a caller never leaks it. */
bool api_json_put(cJSON *o, const char *k, cJSON *v);
/* Serialises item compactly into buf (appending). */
k32_status_t api_json_append(struct k32_buf *buf, const cJSON *item, struct k32_err *err);
/* RFC 3339 UTC timestamp of wall seconds into buf (>= 21 bytes). */
void api_format_time(uint64_t wall_s, char *buf, size_t cap);
/* Parses RFC 3339 "2006-01-02T15:04:05Z" (fraction and offset tolerated); false if bad. */
bool api_parse_time(const char *s, uint64_t *out_wall_s);
/* Age as kubectl prints it ("5s", "2m10s", "3h", "4d") into buf. */
void api_format_age(uint64_t now_s, uint64_t then_s, char *buf, size_t cap);

/* ---- discovery and openapi ------------------------------------------------------------- */

/* Which discovery document a request wants. */
enum api_disc_fmt {
	API_DISC_LEGACY = 0, /* APIVersions / APIGroupList / APIResourceList */
	API_DISC_V2,	     /* aggregated apidiscovery.k8s.io/v2 */
	API_DISC_V2BETA1,    /* aggregated apidiscovery.k8s.io/v2beta1 */
};
#define API_CT_DISC_V2 "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#define API_CT_DISC_V2BETA1                                                                        \
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
#define API_CT_TABLE "application/json;as=Table;v=v1;g=meta.k8s.io"

/* The aggregated format the Accept header prefers first, or LEGACY. */
enum api_disc_fmt api_discovery_pick(const char *accept);
cJSON *api_discovery_version(void);
/* /api (legacy=false is core group only) or /apis, in fmt. server_addr for legacy /api. */
cJSON *api_discovery_root(bool core, enum api_disc_fmt fmt, const char *server_addr);
/* APIResourceList of group/version, or NULL if not served. */
cJSON *api_discovery_group_version(const char *group, const char *version);
/* APIGroup for /apis/<group>, or NULL. */
cJSON *api_discovery_group(const char *group);

/* /openapi/v3 index. */
cJSON *api_openapi_index(void);
/* /openapi/v3/api/v1 or /openapi/v3/apis/<g>/<v>; NULL if not served. */
cJSON *api_openapi_group_version(const char *group, const char *version);
/* The Swagger 2.0 document (/openapi/v2) from the same schemas and paths (api_openapi_v2.c). */
cJSON *api_openapi_v2(void);
/* doc (from api_openapi_v2) as gnostic's openapi_v2.Document protobuf, appended to out. */
k32_status_t api_openapi_v2_pb(const cJSON *doc, struct k32_buf *out, struct k32_err *err);

/* ---- Table output ---------------------------------------------------------------------- */

/* A Table for the objects (array of full objects) of res; now_s for AGE. Each row carries
 * a PartialObjectMetadata. rv is the list resourceVersion (may be NULL). */
cJSON *api_table_build(const struct api_resource *res, const cJSON *const *objs, size_t count,
		       uint64_t now_s, const char *rv, bool with_columns);
/* The PartialObjectMetadata of a Table row for o (a copy of its metadata). */
cJSON *api_table_partial_meta(const cJSON *o);

/* ---- defaulting and validation --------------------------------------------------------- */

/* An update of a RoleBinding or ClusterRoleBinding may not change its roleRef (422, as
 * kube-apiserver; delete and create it again). K32_OK for every other kind. */
k32_status_t api_rbac_update_check(const struct api_resource *res, const cJSON *old,
				   const cJSON *upd, struct api_fail *f);
/* Fills defaults of a new object of res (phase Pending, replicas 1, ...). */
k32_status_t api_default(const struct api_resource *res, cJSON *obj, struct api_fail *f);
/* Validates obj of res; on failure f holds a 422 Invalid with field causes. */
k32_status_t api_validate(const struct api_resource *res, const cJSON *obj, struct api_fail *f);
/* fieldValidation: what to do with fields this server does not know (kube-apiserver's
 * three modes; Warn when the parameter is absent). */
enum api_field_validation {
	API_FV_WARN = 0, /* drop them, one Warning header each */
	API_FV_IGNORE,	 /* drop them silently */
	API_FV_STRICT,	 /* refuse the request: 400 strict decoding error */
};

/* Unknown fields of the parts this server models (top level, metadata, workload and pod
 * specs, containers, Device spec): Strict answers 400 "strict decoding error: unknown field
 * \"spec.bogus\""; Warn and Ignore remove them from obj (as Go's decoder drops what the
 * type lacks), Warn adding `unknown field "spec.bogus"` to w (may be NULL). Fields in parts
 * not modelled (inside a probe, say) are kept. */
k32_status_t api_check_unknown_fields(const struct api_resource *res, cJSON *obj,
				      enum api_field_validation mode, struct api_warnings *w,
				      struct api_fail *f);
/* Duplicate keys anywhere in obj: Strict answers 400 "strict decoding error: duplicate field";
 * otherwise the earlier duplicates are dropped (the last one wins, as in Go), Warn adding
 * `duplicate field "x"` to w (may be NULL). */
k32_status_t api_dedupe_fields(const struct api_resource *res, cJSON *obj,
			       enum api_field_validation mode, struct api_warnings *w,
			       struct api_fail *f);
/* Base64 of in[0..len) as a new cJSON string (NULL when out of memory). */
cJSON *api_b64_string(const uint8_t *in, size_t len);
/* Checks a DNS-1123 subdomain (253, [a-z0-9.-]); NULL if fine, else the reason. */
const char *api_check_dns_subdomain(const char *s);
/* Checks a DNS-1123 label (63, [a-z0-9-]); NULL if fine, else the reason. */
const char *api_check_dns_label(const char *s);
/* Checks label key / value syntax; NULL if fine. */
const char *api_check_label_key(const char *s);
const char *api_check_label_value(const char *s);

/* ---- patches --------------------------------------------------------------------------- */

enum api_patch_type {
	API_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
	API_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
	API_PATCH_JSON,	     /* application/json-patch+json (RFC 6902) */
	API_PATCH_APPLY,     /* application/apply-patch+yaml (merged like strategic) */
};

/* Applies patch to *doc (replaced in place; the old tree is freed on success). */
k32_status_t api_patch_apply(enum api_patch_type type, cJSON **doc, const cJSON *patch,
			     struct api_fail *f);

/* The strategic-merge key of the list named list ("containers" -> "name"), or NULL. */
const char *api_patch_merge_key(const char *list);

/* ---- server-side apply, field ownership (api_ssa.c) ------------------------------------ */

struct api_ssa_ctx {
	const char *manager;	 /* fieldManager of the request */
	const char *api_version; /* "apps/v1": recorded in the entries */
	const char *time;	 /* now, RFC 3339: recorded in the entries it changes */
	bool force;		 /* force=true: take conflicting fields instead of failing */
	bool skip_status;	 /* the kind has a status subresource: apply leaves status */
};

/* The FieldsV1 field set of an object (apiVersion, kind, server-owned metadata left out). */
cJSON *api_ssa_fields(const cJSON *obj, bool skip_status);

/*
 * Applies config to *live (replaced; metadata.managedFields updated) for cx->manager.
 * 409 Conflict (f, causes FieldManagerConflict per field) when another manager owns a field
 * the config changes and !cx->force; 422 past K32_API_SSA_MAX_MANAGERS; 500 out of memory.
 */
k32_status_t api_ssa_apply(cJSON **live, const cJSON *config, const struct api_ssa_ctx *cx,
			   struct api_fail *f);

/* managedFields of an object created by an apply of config: cx->manager owns config's fields. */
k32_status_t api_ssa_create(cJSON *obj, const cJSON *config, const struct api_ssa_ctx *cx,
			    struct api_fail *f);

/*
 * After any other write of old into upd: upd's managedFields become old's with the
 * writer's "Update" entry (per subresource, "" for none) owning the fields it changed and
 * every entry losing fields no longer present. Objects without managedFields stay without.
 */
k32_status_t api_ssa_update(const cJSON *old, cJSON *upd, const struct api_ssa_ctx *cx,
			    const char *subresource, struct api_fail *f);

/* ---- protobuf ------------------------------------------------------------------------- */

/* Magic prefix of application/vnd.kubernetes.protobuf bodies. */
#define API_PB_MAGIC "k8s\0"

/* Decodes a kubectl 1.32 protobuf body (Namespace, ConfigMap, Secret, Deployment,
 * SelfSubjectAccessReview, SelfSubjectRulesReview) into the JSON object it stands for. */
k32_status_t api_pb_decode(const uint8_t *body, size_t len, cJSON **out, struct api_fail *f);

#endif /* API_INT_H */
