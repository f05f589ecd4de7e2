/*
 * api.h - the Kubernetes API server of kube32 (the layer kubectl talks to).
 *
 * An api_server turns HTTP requests into store operations, following the Kubernetes REST
 * conventions that kubectl 1.32 and python3-kubernetes rely on (kubectl-api.md): discovery
 * (/version, /api, /apis, aggregated v2), OpenAPI v3, CRUD on the served kinds with
 * defaulting, validation, label/field selectors, limit/continue, patches (merge, strategic,
 * JSON), subresources (status, scale, binding, eviction, log), watch as chunked JSON lines
 * (Table rows for `kubectl get -w`), Table output, Status errors, protobuf request bodies,
 * bearer-token authentication with admin and per-node identities (NodeRestriction) and
 * SelfSubjectAccessReview. The store holds objects as JSON text; the server never copies
 * them to answer a plain list or get.
 *
 * Wiring (see cmd/kube32-server): open a store, api_server_new, then start an http_server
 * with handler api_http_handler, authenticate api_http_authenticate and ctx the api_server,
 * and tell the api_server about it with api_server_attach_http (watch streams need it to
 * be woken). Stop the http server before api_server_free.
 *
 * Context: api_http_* run on the http server's threads (its loop task or handler workers,
 * several at once); api_do (the in-process client for controllers and tests),
 * api_event_record and the in-process watch may be called from any thread. They share only
 * the store (thread-safe) and state under an internal mutex (tokens, event series); writes
 * race safely through the store's resourceVersion preconditions. Watch stream callbacks
 * run on the loop task.
 */
#ifndef API_H
#define API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_buf.h"
#include "base/k32_status.h"
#include "http/http.h"
#include "k32/k32_config.h"
#include "store/store.h"

struct api_server;

/*
 * Optional source of pod logs (GET .../pods/<name>/log): the control plane keeps none, so
 * whoever can reach the node's kubelet (the simulator, a log proxy) fills out with the text
 * for the query (container, tailLines, timestamps, sinceSeconds, limitBytes, previous) and
 * sets *out_code (200, or 404/400 with a plain message). Called on the http loop task: it
 * must not block for long. follow=true is answered with what the hook returns, then ends.
 */
typedef k32_status_t (*api_log_fn)(void *ctx, const char *ns, const char *pod,
				   const char *container, const char *node, const char *query,
				   struct k32_buf *out, int *out_code, struct k32_err *err);

struct api_config {
	struct store *store;	 /* required; not owned */
	const char *data_dir;	 /* tokens file <data_dir>/tokens (created with an admin
				  * token if absent); NULL: no authentication (tests) */
	const char *server_addr; /* "127.0.0.1:6443" for legacy /api discovery; may be NULL */
	bool bootstrap;		 /* create default, kube-system, kube-public, kube-node-lease */
	uint32_t bookmark_s;	 /* seconds between watch BOOKMARKs; 0: K32_API_BOOKMARK_S */
	api_log_fn log_fn;	 /* optional: pod logs (see api_log_fn) */
	void *log_ctx;		 /* passed to log_fn */
};

/*
 * Creates the API server. Loads (or creates) the tokens file, with bootstrap creates the
 * standard namespaces, and starts the namespace janitor task (it deletes the contents of
 * Terminating namespaces; it sleeps when there are none).
 * @retval K32_OK, K32_ERR_INVALID_ARGS (no store), K32_ERR_IO (tokens file),
 *         K32_ERR_NO_MEMORY, or a store error from bootstrap.
 */
k32_status_t api_server_new(const struct api_config *cfg, struct api_server **out,
			    struct k32_err *err);

/* Stops the janitor and frees the server. The http server using it must be stopped first.
 * NULL is ignored. */
void api_server_free(struct api_server *api);

/* Tells the api server which http server carries its watch streams (for wake-ups). */
void api_server_attach_http(struct api_server *api, struct http_server *srv);

/* http_server_config.handler / .authenticate (ctx = the api_server). Thread-safe. */
void api_http_handler(void *ctx, struct http_request *req, struct http_response *resp);
bool api_http_authenticate(void *ctx, struct http_request *req, struct http_response *resp);
/* For a handler that answers a request api_http_authenticate passed without calling
 * api_http_handler: frees the identity it allocated for the request (a ServiceAccount's). */
void api_http_release_identity(struct http_request *req);

/* The admin bearer token (from the tokens file); "" when auth is off. */
const char *api_server_admin_token(const struct api_server *api);

/*
 * Adds (or finds) the per-node identity "system:node:<node>" in the tokens file and
 * returns its token in out (cap >= 65). The node may then write only its own Node and
 * Lease and the pods bound to it.
 */
k32_status_t api_server_node_token(struct api_server *api, const char *node, char *out, size_t cap,
				   struct k32_err *err);

/*
 * In-process request as the admin identity (controllers, tests, the CLI inside the
 * simulator). method "GET"/"POST"/...; target is path and query ("/api/v1/pods?limit=5");
 * content_type may be NULL (JSON). The response body (JSON, always) is appended to out;
 * *out_code gets the HTTP status. Watches are not available here (400).
 */
k32_status_t api_do(struct api_server *api, const char *method, const char *target,
		    const char *content_type, const void *body, size_t body_len, int *out_code,
		    struct k32_buf *out, struct k32_err *err);

/*
 * api_do as the identity of token (a line of the tokens file, or one from
 * api_server_node_token); NULL token is the admin. ACCESS_DENIED for an unknown token.
 */
k32_status_t api_do_as(struct api_server *api, const char *token, const char *method,
		       const char *target, const char *content_type, const void *body,
		       size_t body_len, int *out_code, struct k32_buf *out, struct k32_err *err);

/*
 * In-process watch for controllers: the same events as GET target&watch=true over HTTP
 * (selectors, resourceVersion semantics, synthetic ADDED without a revision), one JSON line
 * {"type":...,"object":...} per api_watch_next, appended to out (with its '\n').
 * target: "/apis/apps/v1/namespaces/ns/deployments?labelSelector=a%3Db&resourceVersion=N".
 * @retval K32_OK             one event appended
 * @retval K32_ERR_SHOULD_WAIT / K32_ERR_TIMED_OUT  nothing by the deadline (K32_NO_WAIT,
 *                            absolute microseconds, K32_FOREVER)
 * @retval K32_ERR_COMPACTED  the watch fell behind (or started too old): close, relist
 * @retval K32_ERR_CANCELED   api_watch_cancel was called
 * Context: one thread per watch at a time; api_watch_cancel from any thread.
 */
struct api_watch;
k32_status_t api_watch_open(struct api_server *api, const char *target, struct api_watch **out,
			    struct k32_err *err);
k32_status_t api_watch_next(struct api_watch *w, struct k32_buf *out, int64_t deadline_us,
			    struct k32_err *err);
void api_watch_cancel(struct api_watch *w);
void api_watch_close(struct api_watch *w);

/* The object an event is about. */
struct api_event_ref {
	const char *api_version; /* "v1", "apps/v1" */
	const char *kind;	 /* "Pod" */
	const char *ns;		 /* namespace of the object ("" for cluster-scoped) */
	const char *name;
	const char *uid; /* may be NULL */
};

/*
 * Records a core/v1 Event (type "Normal"/"Warning", reason CamelCase, message text) from
 * component. Repeats of the same (object, type, reason, message) within
 * K32_API_EVENT_SERIES_S seconds update the existing Event (count + 1, lastTimestamp)
 * instead of creating another one. Any thread.
 */
k32_status_t api_event_record(struct api_server *api, const struct api_event_ref *ref,
			      const char *type, const char *reason, const char *message,
			      const char *component, struct k32_err *err);

/*
 * Deletes Events (core/v1 and events.k8s.io/v1) whose last occurrence is older than
 * K32_API_EVENT_TTL_S at wall time now_s, at most K32_API_EVENT_GC_BATCH per call;
 * *out_deleted (may be NULL) counts them. api_event_record runs it every 32 new events;
 * a controller may also call it on a timer. Any thread.
 */
k32_status_t api_events_gc(struct api_server *api, uint64_t now_s, uint32_t *out_deleted,
			   struct k32_err *err);

#endif /* API_H */
