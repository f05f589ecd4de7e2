/*
 * cplane.h - the control plane as one piece: the object store, the API server over HTTP(S),
 * the scheduler and controllers of src/ctrl (when built and asked for), and what the bare
 * API server lacks for kubectl: the body of pods/log (`kubectl logs`, -f included) and the
 * metrics.k8s.io group (`kubectl top`), both fetched from the kubelets. kube32-server and
 * kube32-sim (src/sim) are thin mains over it; a control-plane board's firmware will be too.
 *
 * Logs and metrics come from the node that runs the pod:
 *   - a node in this process (attached with cplane_node_attach) is asked directly through
 *     its struct cplane_node_ops: no HTTP, and `logs -f` sends new lines every
 *     K32_CPLANE_LOG_FOLLOW_MS;
 *   - any other node through its pod server (the Node's
 *     status.daemonEndpoints.kubeletEndpoint.Port at its InternalIP): GET
 *     /containerLogs/<ns>/<pod>/<container> and GET /stats. `logs -f` for such a node polls
 *     /containerLogs?afterSeq=N every K32_CPLANE_LOG_FOLLOW_MS from one relay task (started
 *     with the first such stream, at most K32_CPLANE_MAX_REMOTE_FOLLOWS streams at once), so
 *     the HTTP loop never waits on a board.
 * The API server has already authorised and answered GET .../pods/P/log (the pod, its
 * container, "waiting to start") with an empty body; only then is the body filled.
 *
 * Context: cplane_start / cplane_stop from one thread (the main task). cplane_node_attach
 * and _detach from any thread; a node must be detached (or the control plane stopped)
 * before it is freed. Nothing here handles signals.
 */
#ifndef CPLANE_H
#define CPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "base/k32_buf.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

struct cplane;
struct store;

/* Boot stages reported to cplane_config.on_stage, in order (what has just come up). */
enum cplane_stage {
	CPLANE_STAGE_STORE,	  /* the store is open (replayed) */
	CPLANE_STAGE_API,	  /* the API server serves HTTP(S) */
	CPLANE_STAGE_CONTROLLERS, /* the scheduler and controllers run (skipped without them) */
};
typedef void (*cplane_stage_fn)(void *ctx, enum cplane_stage stage);

struct cplane_config {
	const char *data_dir;	  /* store, pki/, tokens (created); required */
	bool memory_store;	  /* keep objects in memory only (tests) */
	bool accept_log_loss;	  /* open the store despite a lost log (store_config) */
	size_t store_bytes;	  /* store_config.max_bytes; 0: K32_STORE_MAX_BYTES (a board's) */
	uint32_t store_objects;	  /* store_config.max_objects; 0: K32_STORE_MAX_OBJECTS */
	const char *host;	  /* bind address; NULL: "127.0.0.1" */
	uint16_t port;		  /* 0 picks a free port */
	bool tls;		  /* HTTPS (kubectl sends its token only over HTTPS) */
	bool controllers;	  /* start src/ctrl's scheduler and controllers (if built) */
	uint32_t node_grace_s;	  /* node lifecycle: Lease silence before NotReady (0: default) */
	uint32_t pod_eviction_s;  /* NotReady to eviction (0: default) */
	uint32_t handler_threads; /* the HTTP server's handler tasks (see http.h) */
	bool tls_park;		  /* idle TLS connections free their record buffers (http.h) */
	cplane_stage_fn on_stage; /* optional: called on the starting thread after each stage */
	void *stage_ctx;	  /* passed to on_stage */
};

/* Fills cfg: 127.0.0.1, port 0, HTTPS, controllers on, the http defaults for the rest. */
void cplane_config_init(struct cplane_config *cfg);

/*
 * Opens the store, starts the API server and its HTTP server, then the controllers.
 * @retval K32_OK  *out runs; stop it with cplane_stop
 * @retval K32_ERR_INVALID_ARGS  no data_dir
 * other statuses of store_open, api_server_new, http_server_start, ctrl_start (err says
 * which part failed)
 * Context: main task; may block (TLS key generation on first start, the store's replay).
 */
k32_status_t cplane_start(const struct cplane_config *cfg, struct cplane **out,
			  struct k32_err *err);

/*
 * Stops the HTTP server (ending every watch and log stream), the log relay, the
 * controllers, the API server and the store. Nodes attached from this process must have
 * stopped talking to it or be stopped after (klet_stop_begin first is the usual order).
 * NULL is ignored.
 */
void cplane_stop(struct cplane *cp);

uint16_t cplane_port(const struct cplane *cp);
/* CA file for clients (NULL over plain HTTP). */
const char *cplane_ca_file(const struct cplane *cp);
struct api_server *cplane_api(struct cplane *cp);
struct store *cplane_store(struct cplane *cp);
/* Whether the controllers run. */
bool cplane_has_controllers(const struct cplane *cp);
/* The admin token (system:admin). */
const char *cplane_admin_token(const struct cplane *cp);
/* A node's token (system:node:<node>), created in the tokens file when new. */
k32_status_t cplane_node_token(struct cplane *cp, const char *node, char *out, size_t cap,
			       struct k32_err *err);

/* ---- nodes in this process ------------------------------------------------------------- */

/*
 * What the control plane asks of a node in its own process (a kubelet, through src/sim's
 * adapter). Called on the HTTP server's tasks with the control plane's node lock held:
 * must not block for long and must not call back into the control plane.
 */
struct cplane_node_ops {
	/* The node's name (stable while attached). */
	const char *(*name)(void *node);
	/* A pod's log lines appended to out, as klet_pod_logs: previous container, last
	 * tail_lines (< 0: all), RFC 3339 stamps; *inout_seq (may be NULL): only lines after
	 * it, updated to the last line given. K32_ERR_NOT_FOUND: no such pod (or no previous
	 * container); K32_ERR_NO_RESOURCES: out is full (what fitted was appended). */
	k32_status_t (*logs)(void *node, const char *ns, const char *pod, bool previous,
			     int64_t tail_lines, bool timestamps, uint64_t *inout_seq,
			     struct k32_buf *out, struct k32_err *err);
	/* The node's stats object (the JSON of the pod server's GET /stats) into out. */
	k32_status_t (*stats)(void *node, struct k32_buf *out, struct k32_err *err);
};

/*
 * Lets the log proxy and metrics reach a node of this process directly (kept by pointer
 * until cplane_node_detach or cplane_stop).
 * @retval K32_ERR_NO_RESOURCES  K32_CPLANE_MAX_LOCAL_NODES already attached (the node is
 *                               then reached through its pod server like a remote one)
 */
k32_status_t cplane_node_attach(struct cplane *cp, const struct cplane_node_ops *ops, void *node,
				struct k32_err *err);
/* Forgets node (its open log streams end at their next poll). Unknown nodes are ignored. */
void cplane_node_detach(struct cplane *cp, void *node);

/* ---- kubeconfig ------------------------------------------------------------------------- */

/*
 * Writes a kubeconfig (cluster "kube32", user "admin" with token, context "kube32",
 * namespace default) for scheme://host:port, embedding ca_file (certificate-authority-data)
 * when non-NULL; atomically (file_write_atomic).
 * @retval K32_ERR_NOT_FOUND / IO  ca_file unreadable, path unwritable
 */
k32_status_t cplane_write_kubeconfig(const char *path, const char *scheme, const char *host,
				     uint16_t port, const char *ca_file, const char *token,
				     struct k32_err *err);

#endif /* CPLANE_H */
