/*
 * api_srv.h - internals of the API server proper (router, CRUD, watch, auth, events), the
 * part of src/api that needs the store and the http layer. Pure helpers live in api_int.h.
 *
 * A request is turned into a struct api_req (method, decoded path split into group,
 * version, namespace, resource, name, subresource; the raw query; Accept and Content-Type;
 * the body; the caller's identity) and answered into a struct api_out (code, content type,
 * body buffer). Only watch needs the http response itself (to become a stream).
 */
#ifndef API_SRV_H
#define API_SRV_H

#include <stdatomic.h>

#include "api/api.h"
#include "base/k32_prom.h"
#include "api/api_int.h"
#include "kmeta/kmeta.h"
#include "platform/k32_platform.h"

#define API_TOKEN_LEN 64 /* hex characters of a generated token */

struct api_identity {
	char user[K32_API_USER_LEN]; /* "admin", "system:node:n1", "system:serviceaccount:ns:n" */
	char node[64];		     /* node name for node identities, "" otherwise */
	bool admin;		     /* member of system:masters */
	/* the groups, comma-separated, system:authenticated included for every
	 * authenticated identity ("" for anonymous) */
	char groups[K32_API_GROUPS_LEN];
	/* the server whose RBAC objects decide what this identity may do (set for every
	 * identity the server resolves; NULL: only admin and node rules apply) */
	struct api_server *rbac;
	/* allocated by api_http_authenticate for this request (a ServiceAccount's, verified
	 * there once); api_http_handler takes it over and frees it */
	bool owned;
};

struct api_token {
	char token[API_TOKEN_LEN + 1];
	struct api_identity id;
};

struct api_req;
struct api_out;

/* Compressed renderings of recent lists (api_cache.c). */
struct api_cache_entry {
	uint64_t rev;			      /* store revision the list was read at */
	uint64_t used;			      /* tick of the last use (LRU) */
	char key[K32_API_LIST_CACHE_KEY_LEN]; /* group/plural/namespace?raw query */
	uint8_t *data;			      /* len bytes of gzip (cap allocated) */
	size_t len, cap;
};
struct api_list_cache {
	struct k32_mutex mu;
	uint64_t tick, hits, misses;
	struct api_cache_entry e[K32_API_LIST_CACHE_ENTRIES];
};
void api_cache_init(struct api_list_cache *c);
void api_cache_fini(struct api_list_cache *c);
/* The cache key of rq's list into key (false when it does not fit: do not cache). */
bool api_cache_key(const struct api_req *rq, char *key, size_t cap);
/* The entry of key at exactly rev into out (replacing its content); false on a miss. */
bool api_cache_get(struct api_list_cache *c, const char *key, uint64_t rev, struct k32_buf *out);
/* Keeps a copy of data as key's rendering at rev (nothing when too big or out of memory). */
void api_cache_put(struct api_list_cache *c, const char *key, uint64_t rev, const void *data,
		   size_t len);

/* What /metrics reports of the requests (api_metrics.c). */
enum api_mverb {
	API_MV_GET,
	API_MV_LIST,
	API_MV_WATCH,
	API_MV_POST,
	API_MV_PUT,
	API_MV_PATCH,
	API_MV_APPLY,
	API_MV_DELETE,
	API_MV_DELETECOLLECTION,
	API_MV_OTHER,
	API_MV_COUNT
};
struct api_metric_series {
	const struct api_resource *res; /* NULL for non-resource paths */
	const char *sub;		/* static: the subresource, "" or "other" */
	uint16_t code;			/* HTTP status */
	uint8_t verb;			/* enum api_mverb */
	uint64_t count;
};
struct api_metrics {
	struct k32_mutex mu;
	struct api_metric_series series[K32_API_METRICS_SERIES];
	uint32_t nseries;
	uint64_t dropped; /* requests whose series did not fit */
	struct k32_prom_hist latency[API_MV_COUNT];
};
void api_metrics_init(struct api_metrics *m);
void api_metrics_fini(struct api_metrics *m);
/* Counts one answered request (code 0: it became a watch stream) that took us. */
void api_metrics_record(struct api_metrics *m, const struct api_req *rq, int code, uint64_t us);
/* GET /metrics: the Prometheus text of the requests, watches and the store. */
void api_metrics_serve(struct api_server *api, struct api_out *out);

struct api_server {
	struct store *store;
	_Atomic(struct http_server *) http; /* for waking watch streams; may be NULL; set
					     * after the server started, read by its threads */
	bool auth;			    /* tokens required */
	char tokens_path[300];
	char server_addr[64];
	struct k32_mutex mu; /* guards tokens and series */
	struct api_token tokens[K32_API_MAX_TOKENS];
	size_t token_count;
	struct api_identity admin; /* identity of in-process calls */
	struct kmeta_event_series series[K32_API_EVENT_SERIES_MAX];
	uint32_t name_seq;	  /* for generated names */
	uint32_t events_recorded; /* api_event_record calls (GC every 32) */
	/* Events' count and value bytes as of the last api_events_make_room scan plus the
	 * Events created since (under mu): a scan runs only when this passes a bound, not for
	 * every Event (deletes by others only make it high, which a scan corrects) */
	bool ev_known;
	uint64_t ev_count, ev_bytes;
	struct k32_task *janitor; /* namespace janitor task (NULL: purge synchronously) */
	struct k32_mutex jmu;	  /* guards jkick, jstop */
	struct k32_cond jcond;	  /* wakes the janitor */
	bool jkick;		  /* a namespace was marked Terminating */
	bool jstop;		  /* api_server_free is stopping the janitor */
	uint32_t bookmark_s;	  /* seconds between BOOKMARK events */
	api_log_fn log_fn;	  /* pod logs, or NULL */
	void *log_ctx;
	struct api_list_cache lists;   /* gzip renderings of plain lists (api_cache.c) */
	struct api_metrics metrics;    /* what /metrics reports (api_metrics.c) */
	_Atomic bool store_unwritable; /* the last store write failed for I/O (api_health.c) */
	char store_fault[160];	       /* its message (guarded by mu) */
	uint8_t sa_key[32];	       /* HMAC-SHA256 key of ServiceAccount tokens (api_token.c) */
	/* RBAC's objects, parsed once and shared by the checks until one of them is written
	 * (api_rbac.c): rbac_gen counts those writes, the snapshot names the count it was
	 * read at */
	_Atomic uint32_t rbac_gen; /* 32-bit atomics only: boards have no 64-bit ones */
	struct k32_mutex rbac_mu;  /* guards rbac_snap */
	struct api_rbac_snap *rbac_snap;
	_Atomic uint32_t rbac_builds, rbac_hits, rbac_uncached; /* api_rbac_cache_stats */
};

struct api_req {
	const char *method;
	char path[512];	      /* decoded path, no query */
	struct k32_str query; /* raw query */
	char accept[512];     /* Accept header (truncated) */
	char ctype[128];      /* Content-Type header, "" when absent */
	const uint8_t *body;
	size_t body_len;
	const struct api_identity *who;
	struct http_response *http; /* NULL for in-process calls */
	/* route */
	const struct api_resource *res;
	char group[64], version[16];
	char ns[64];		  /* from the URL */
	char name[254];		  /* from the URL */
	char sub[24];		  /* subresource */
	bool table;		  /* Accept asks for a Table */
	bool gzip;		  /* the client takes Content-Encoding: gzip */
	char user_agent[64];	  /* User-Agent (truncated; "" in-process): default field manager */
	struct api_warnings warn; /* Warning headers of the answer (fieldValidation=Warn) */
	struct api_identity as;	  /* the impersonated identity (rq->who points here) */
	char upgrade[32];	  /* Upgrade header (port-forward's SPDY/3.1), "" when absent */
	char stream_protocol[96]; /* X-Stream-Protocol-Version, "" when absent */
	char ws_key[32];	  /* Sec-WebSocket-Key (port-forward over WebSocket) */
	char ws_version[8];	  /* Sec-WebSocket-Version */
	char ws_protocol[160];	  /* Sec-WebSocket-Protocol: the subprotocols offered */
	/* The request's failure (2.6 KB): the request path's handlers (api_serve, api_route,
	 * api_crud, api_delete, ...) fill it and report it at once instead of keeping one on
	 * their task's stack each; a handler does not hold it across a call to another. */
	struct api_fail fail;
};

struct api_out {
	int code;
	char ctype[96];
	struct k32_buf *body;
	bool gzip; /* body is gzip-compressed (sent with Content-Encoding: gzip) */
};

/* Zeroed block from the default heap (NULL when out of memory); api_free takes its size. */
static inline void *api_zalloc(size_t len)
{
	return k32_calloc(k32_default_allocator(), len);
}
static inline void api_free(void *p, size_t len)
{
	k32_free(k32_default_allocator(), p, len);
}

/* Most bytes of fieldManager (kube-apiserver's limit too). */
#define API_FIELD_MANAGER_MAX 128

/* Every query parameter of rq checked against its kind and limit (api_query.c); a 400
 * naming the parameter and its limit otherwise. Run before any handler reads the query. */
k32_status_t api_query_check(const struct api_req *rq, struct api_fail *f);
/* Query parameter name into buf (decoded); false when absent. name must be listed in
 * api_query.c and cap must exceed its limit (else false, logged as a bug). */
bool api_q(const struct api_req *rq, const char *name, char *buf, size_t cap);
/* A boolean query parameter; dflt when absent. */
bool api_q_bool(const struct api_req *rq, const char *name, bool dflt);

/* Answer helpers. */
void api_out_json(struct api_out *out, int code, cJSON *j); /* frees j */
void api_out_text(struct api_out *out, int code, const char *ctype, const char *text, size_t len);
void api_out_fail(struct api_out *out, const struct api_fail *f);
void api_out_status_ok(struct api_out *out, int code, const char *kind, const char *name);

/* Store access with API errors. */
void api_key(const struct api_resource *res, const char *ns, const char *name,
	     struct store_key *key);
k32_status_t api_get_obj(struct api_server *api, const struct api_resource *res, const char *ns,
			 const char *name, struct store_obj **out, struct api_fail *f);
cJSON *api_parse_obj(const struct store_obj *o);
k32_status_t api_store_err(struct api_fail *f, const struct api_resource *res, const char *name,
			   k32_status_t st, const struct k32_err *err);
/* Writes obj (create, or update with expect_rev); stamps resourceVersion. Essential as
 * api_write_essential(res, "") says (Leases). */
k32_status_t api_put_obj(struct api_server *api, const struct api_resource *res, cJSON *obj,
			 bool create, uint64_t expect_rev, struct store_obj **out,
			 struct api_fail *f);
/* api_put_obj with the store's essential mark given (store_value.essential). */
k32_status_t api_put_obj_marked(struct api_server *api, const struct api_resource *res, cJSON *obj,
				bool create, uint64_t expect_rev, bool essential,
				struct store_obj **out, struct api_fail *f);
/* Whether a write of res (subresource sub, "" for none) may use the store's reserve
 * (K32_STORE_RESERVE_PCT): coordination.k8s.io Leases and nodes/status, so nodes stay Ready
 * when the store is full for everything else. A DELETE's writes pass true themselves. */
bool api_write_essential(const struct api_resource *res, const char *sub);
/* Before an Event of len bytes is created: evicts the oldest Events when they would pass
 * K32_API_EVENTS_OBJECTS_PCT or K32_API_EVENTS_BYTES_PCT of the store's limits (at most
 * K32_API_EVENT_GC_BATCH per call). *out_evicted (may be NULL) counts them. */
k32_status_t api_events_make_room(struct api_server *api, size_t len, uint32_t *out_evicted,
				  struct k32_err *err);
/* events.k8s.io/v1 Events are a view of the core/v1 ones, stored once (api_events_v1.c).
 * api_events_v1: whether res is events.k8s.io's events. api_event_to_v1/_to_core rename
 * an Event's fields in place. api_parse_view parses a stored object as res shows it.
 * api_event_append_v1 appends a stored Event to b in the events.k8s.io shape. */
bool api_events_v1(const struct api_resource *res);
void api_event_to_v1(cJSON *e);
void api_event_to_core(cJSON *e);
cJSON *api_parse_view(const struct api_resource *res, const struct store_obj *o);
k32_status_t api_event_append_v1(struct k32_buf *b, const struct store_obj *o, struct k32_err *err);
/* Deletes one object now (cascading to dependents by policy). */
k32_status_t api_delete_now(struct api_server *api, const struct api_resource *res, const char *ns,
			    const char *name, uint64_t expect_rev, const char *policy, int depth,
			    struct store_obj **out_prev, struct api_fail *f);

/* Authorization: may who do verb on res (ns/name; obj the object involved, may be NULL)? */
bool api_authorize(const struct api_identity *who, const char *verb, const struct api_resource *res,
		   const char *sub, const char *ns, const char *name, const cJSON *obj, char *why,
		   size_t cap);

/* ---- RBAC (api_rbac.c) and ServiceAccount tokens (api_token.c) -------------------------- */

/* What a request asks, as RBAC rules name it. */
struct api_rbac_attrs {
	const char *verb;     /* get, list, watch, create, update, patch, delete, ... */
	const char *group;    /* API group ("" core); resource requests only */
	const char *resource; /* plural; NULL for a non-resource request */
	const char *sub;      /* subresource or "" */
	const char *ns;	      /* namespace or "" (cluster scope) */
	const char *name;     /* object name or "" */
	const char *path;     /* non-resource requests: the URL path */
};

/* Whether one PolicyRule (JSON) allows a: verbs, apiGroups, resources ("pods", "pods/log",
 * "*", "*\/log"), resourceNames, nonResourceURLs ("/metrics", "/logs/ *" prefixes, "*"). */
bool api_rbac_rule_allows(const cJSON *rule, const struct api_rbac_attrs *a);
/* Whether a binding's subject (JSON) names who (binding_ns: the RoleBinding's namespace, the
 * default of a ServiceAccount subject's namespace; "" for ClusterRoleBindings). */
bool api_rbac_subject_matches(const cJSON *subject, const struct api_identity *who,
			      const char *binding_ns);
/* Whether the RBAC objects of api allow who a; when not, why holds kube-apiserver's words
 * ("User \"u\" cannot list resource \"pods\" in API group \"\" in the namespace \"x\""). */
bool api_rbac_allowed(struct api_server *api, const struct api_identity *who,
		      const struct api_rbac_attrs *a, char *why, size_t cap);
/* The router's gate for identities that are neither admin nor node: false (with out a 403)
 * when RBAC does not allow the request rq routed to (rq->res NULL: a non-resource path). */
bool api_rbac_gate(struct api_server *api, struct api_req *rq, struct api_out *out);
/* SelfSubjectAccessReview and SelfSubjectRulesReview of a non-admin, non-node caller. */
void api_rbac_ssar(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj);
void api_rbac_ssrr(struct api_server *api, struct api_req *rq, struct api_out *out, cJSON *obj);
/* Impersonation: may who impersonate the user (and the comma-separated groups)? 403 in f. */
k32_status_t api_rbac_may_impersonate(struct api_server *api, const struct api_identity *who,
				      const char *user, const char *groups, struct api_fail *f);
/* Creates the default ClusterRoles (cluster-admin, admin, edit, view) if absent; one that
 * cannot be created (a store too small) is logged and skipped, never fatal. */
void api_rbac_bootstrap(struct api_server *api);
/* Brings every aggregated ClusterRole's rules up to date (after a ClusterRole write). */
void api_rbac_aggregate(struct api_server *api);
/* An RBAC object (res of rbac.authorization.k8s.io) was written or deleted: the cached
 * snapshot is stale. No-op for other kinds. Called after the store committed. */
void api_rbac_note_write(struct api_server *api, const struct api_resource *res);
/* The snapshot cache: set up and torn down with the server; its counters (tests). */
void api_rbac_cache_init(struct api_server *api);
void api_rbac_cache_fini(struct api_server *api);
struct api_rbac_cache_stats {
	uint64_t builds;   /* snapshots read from the store */
	uint64_t hits;	   /* checks served by a current snapshot */
	uint64_t uncached; /* checks that walked the store (too many objects to cache) */
};
void api_rbac_cache_stats(const struct api_server *api, struct api_rbac_cache_stats *out);
/* ServiceAccount tokens verified since start (api_token_identity calls): tests check a
 * request verifies its token once. */
uint64_t api_token_verifications(void);

/* Claims of a verified ServiceAccount token. */
struct api_sa_claims {
	char ns[64];
	char name[254];
	char uid[40];
	char pod[254]; /* bound pod name, "" when not bound to a pod */
	char pod_uid[40];
	uint64_t exp, iat;
};
/* The server's audience: what a token must name to authenticate here. */
#define API_SA_AUDIENCE "https://kubernetes.default.svc"
/* Signs claims into tok (cap >= K32_API_SA_TOKEN_LEN + 1) with key, audiences aud[0..naud). */
k32_status_t api_token_sign(const uint8_t key[32], const struct api_sa_claims *c,
			    const char *const *aud, size_t naud, char *tok, size_t cap,
			    struct k32_err *err);
/* Verifies tok (len bytes, not NUL-terminated) against key at now_s: form, signature,
 * expiry, audience (API_SA_AUDIENCE must be one), claims. INVALID_ARGS with why filled. */
k32_status_t api_token_verify(const uint8_t key[32], const char *tok, size_t len, uint64_t now_s,
			      struct api_sa_claims *out, char *why, size_t cap);
/* Loads (or creates, first start) the signing key <data_dir>/sa.key; random in memory
 * without a data dir. */
k32_status_t api_token_key_load(struct api_server *api, const char *data_dir, struct k32_err *err);
/* The identity of a ServiceAccount token: verified, and the ServiceAccount (and bound pod)
 * still exists with the uid the token names. false (why filled) otherwise. */
bool api_token_identity(struct api_server *api, const char *tok, size_t len,
			struct api_identity *id, char *why, size_t cap);
/* POST .../serviceaccounts/NAME/token: a TokenRequest answered with a signed token. */
void api_token_request(struct api_server *api, struct api_req *rq, struct api_out *out);
/* Creates the ServiceAccount "default" in ns if absent. */
void api_token_default_sa(struct api_server *api, const char *ns);
/* The groups of a ServiceAccount user in ns into buf. */
void api_sa_groups(const char *ns, char *buf, size_t cap);

/* NodeRestriction of a node's writes of its own Node, old (NULL on create) to upd: it may not
 * set, change or remove node-restriction.kubernetes.io/ and node-role.kubernetes.io/ labels,
 * change its kube32.io/board label, nor raise (add, remove) a resource of its capacity or
 * allocatable. 403 in f. K32_OK for anyone but a node writing nodes. */
k32_status_t api_node_restrict(const struct api_identity *who, const struct api_resource *res,
			       const cJSON *old, const cJSON *upd, struct api_fail *f);

/* ---- shared by api_crud.c and api_delete.c ---------------------------------------------- */

/* List filter: label and field selectors, or dependents of one owner. */
struct api_filter {
	struct api_selector lsel, fsel;
	bool has_l, has_f;
	const char *owner_uid;		/* dependents of this owner only (cascades) */
	const struct api_resource *res; /* the view filtered (NULL: as stored) */
};

bool api_store_filter(void *ctx, const struct store_obj *o);
k32_status_t api_filter_init(const struct api_req *rq, struct api_filter *flt, struct api_fail *f);
/* Decodes the body (JSON or protobuf) by Content-Type; 400/415 in f. */
k32_status_t api_decode_body(const struct api_req *rq, cJSON **out, struct api_fail *f);
bool api_dry_run(const struct api_req *rq);
/* fieldValidation of rq into *out: Warn when absent or empty (kube-apiserver's default),
 * Ignore, Strict; another value is a 400 naming the three. */
k32_status_t api_field_validation(const struct api_req *rq, enum api_field_validation *out,
				  struct api_fail *f);
/* String at a dotted path, or NULL. */
const char *api_jstr(const cJSON *o, const char *path);
/* obj's metadata object (created if absent; NULL when out of memory). */
cJSON *api_meta(cJSON *obj);
void api_set_str(cJSON *o, const char *key, const char *v);
void api_set_num(cJSON *o, const char *key, double v);
/* Answers the stored object (a Table of it when asked). */
void api_out_obj(struct api_req *rq, struct api_out *out, int code, const struct store_obj *o);
/* Namespace janitor (api_delete.c): deletes what Terminating namespaces contain. */
k32_status_t api_ns_janitor_start(struct api_server *api, struct k32_err *err);
void api_ns_janitor_kick(struct api_server *api);
void api_ns_janitor_stop(struct api_server *api);
void api_purge_namespace(struct api_server *api, const char *ns);
/* Verbs in api_delete.c. */
void api_delete(struct api_server *api, struct api_req *rq, struct api_out *out);
void api_delete_collection(struct api_server *api, struct api_req *rq, struct api_out *out);
void api_binding(struct api_server *api, struct api_req *rq, struct api_out *out);
void api_log(struct api_server *api, struct api_req *rq, struct api_out *out);
void api_eviction(struct api_server *api, struct api_req *rq, struct api_out *out);

/* Routes rq->path (an /api or /apis resource path) into rq->res, ns, name, sub. */
bool api_route_target(struct api_req *rq, struct api_fail *f);

/* The CRUD entry points (api_crud.c). */
void api_crud(struct api_server *api, struct api_req *rq, struct api_out *out);
/* Watch (api_watch.c): turns the response into a stream. */
void api_watch(struct api_server *api, struct api_req *rq, struct api_out *out);

/* Health endpoints (api_health.c). */
/* Whether path is /healthz, /livez, /readyz or one of their checks (open to anonymous). */
bool api_health_path(const char *path);
/* Answers a health request (rq->path is one of api_health_path's). */
void api_health(struct api_server *api, struct api_req *rq, struct api_out *out);
/* Records the outcome of a store write: an I/O failure marks the store unwritable, a
 * success clears it; other failures (conflicts, limits) are ignored. */
void api_health_note_write(struct api_server *api, k32_status_t st, const struct k32_err *err);

/* Wall-clock helpers. */
uint64_t api_now_s(void);
void api_new_uid(char *buf, size_t cap);

/* ---- pods/proxy, services/proxy, the kubernetes Service (api_proxy.c) ------------------ */

/* A proxy request's target, from its path. */
struct api_proxy_target {
	bool service;	  /* services/NAME/proxy, else pods/NAME/proxy */
	bool portforward; /* pods/NAME/portforward */
	char ns[64];
	char name[254];
	char port[64];				 /* services: "" or a port name or number */
	char target[K32_API_PROXY_PATH_MAX + 1]; /* "/rest?query", encoded for a request line */
};
/*
 * Whether path (decoded, as in struct api_req) is a pods/NAME/proxy[/...],
 * services/[SCHEME:]NAME[:PORT]/proxy[/...] or pods/NAME/portforward request; when it is,
 * *t is filled, or f set (400/414) when it is malformed. query: the raw query, forwarded.
 */
bool api_proxy_parse(const char *path, struct k32_str query, struct api_proxy_target *t,
		     struct api_fail *f);
/* One HTTP request to a pod's handler. */
struct api_pod_request {
	const char *method, *target; /* target: "/path?query", fit for a request line */
	const char *ctype;	     /* Content-Type or NULL/"" */
	const void *body;
	size_t body_len;
};
/* Sends prq to pod ns/pod through its node's pod server ip:port (header X-Kube32-Pod), within
 * K32_SVC_FORWARD_TIMEOUT_MS and K32_API_PROXY_BODY_MAX: K32_OK with the pod's status (502
 * for one outside 100-599), Content-Type (into rct, rcap bytes, left as is when absent) and
 * body (appended to answer); else the client's failure (TIMED_OUT ...) and err says why. The
 * one forward of pods/proxy, services/proxy and the port-forward tunnel. */
k32_status_t api_pod_forward(const char *ns, const char *pod, const char *ip, uint16_t port,
			     const struct api_pod_request *prq, int *status, char *rct, size_t rcap,
			     struct k32_buf *answer, struct k32_err *err);
/* Answers a proxy request into out (true), or returns false when rq is not one. */
bool api_proxy_route(struct api_server *api, struct api_req *rq, struct api_out *out);
/* The WebSocket subprotocol of port-forward: SPDY frames in binary messages (KEP 4006). */
#define API_PF_WS_PROTOCOL "SPDY/3.1+portforward.k8s.io"
/* pods/portforward: when rq asks for a SPDY/3.1 portforward.k8s.io upgrade, or a WebSocket
 * one with subprotocol API_PF_WS_PROTOCOL, turns the response into the tunnel to pod ns/pod
 * at ip:port (api_portforward.c) and returns true (also when it answers a refusal: a bad
 * WebSocket key or version, too many tunnels). */
bool api_portforward_start(const struct api_req *rq, struct api_out *out, const char *ns,
			   const char *pod, const char *node, const char *ip, uint16_t port);
/* The tunnel's SPDY session without the connection (tests, the fuzz target). */
struct api_pf;
/* Sends one HTTP request to the pod: the status; the answer's body into answer and its
 * Content-Type into rct (rcap bytes). */
typedef int (*api_pf_forward_fn)(void *ctx, const struct api_pf *s, const char *method,
				 const char *target, const char *ctype, const void *body,
				 size_t body_len, char *rct, size_t rcap, struct k32_buf *answer);
struct api_pf *api_pf_new(const char *ns, const char *pod, const char *node, const char *ip,
			  uint16_t port);
void api_pf_free(struct api_pf *s);
void api_pf_set_forward(struct api_pf *s, api_pf_forward_fn fn, void *ctx);
/* Feeds the client's bytes; false: the tunnel ends (GOAWAY, input over its bound). */
bool api_pf_input(struct api_pf *s, const void *data, size_t len);
/* The frames to send (the caller sends and resets it). */
struct k32_buf *api_pf_output(struct api_pf *s);
/* The session speaks WebSocket (frames from a client in, binary frames out) around SPDY. */
void api_pf_set_websocket(struct api_pf *s);
/* Tunnels served since start over plain SPDY and over WebSocket (/metrics). */
void api_portforward_counts(uint64_t *spdy, uint64_t *websocket);
/* Creating a Service when K32_SVC_MAX exist: 403 naming the limit (other kinds: K32_OK). */
k32_status_t api_service_room(struct api_server *api, const struct api_resource *res,
			      struct api_fail *f);
/* Writes the `kubernetes` Service and its Endpoints (the API server at port). */
void api_service_bootstrap(struct api_server *api, uint16_t port);

#endif /* API_SRV_H */
