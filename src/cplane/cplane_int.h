/*
 * cplane_int.h - what the control plane's files share: the struct, the node table, the log
 * proxy (cplane_logs.c) and metrics.k8s.io (cplane_metrics.c).
 *
 * Locking: cp->mu guards the table of local nodes and the remote follow slots; it is never
 * held across network I/O. The relay task owns each slot's HTTP client.
 */
#ifndef CPLANE_INT_H
#define CPLANE_INT_H

#include "cplane/cplane.h"

#include "base/k32_json.h"
#include "http/http.h"
#include "platform/k32_platform.h"

#define CPLANE_MOD "cplane"

struct ctrl;
struct kclient;

struct cplane_node {
	const struct cplane_node_ops *ops; /* NULL: free entry */
	void *node;
};

/* One `logs -f` of a pod on a node in another process, polled by the relay task. */
struct cplane_follow {
	struct cplane *cp;   /* owner */
	bool used;	     /* slot taken (set by the loop, cleared by the relay) */
	bool closed;	     /* the stream ended; the relay frees the slot */
	http_stream_id_t id; /* the stream to wake */
	char node[128];	     /* the node's name (for its token) */
	char ip[64];	     /* the node's pod server */
	uint16_t port;
	char ns[64];
	char pod[128];
	uint64_t seq;		 /* last line sequence number relayed */
	int64_t tail;		 /* tailLines of the first poll (< 0: all) */
	bool ts;		 /* timestamps */
	bool started;		 /* first poll done */
	int fails;		 /* polls failed in a row */
	k32_status_t end;	 /* K32_OK while it goes on; the status to end the stream with */
	struct k32_buf pending;	 /* lines fetched, not yet written to the stream */
	struct http_client *cli; /* relay task only */
};

struct cplane {
	struct store *store;
	struct api_server *api;
	struct http_server *srv;
	bool tls;
	struct ctrl *ctrl;
	struct kclient *ctrl_client; /* the controllers' in-process client */
	struct k32_mutex mu;	     /* nodes, follows, relay */
	struct cplane_node nodes[K32_CPLANE_MAX_LOCAL_NODES]; /* nodes of this process */
	struct cplane_follow follows[K32_CPLANE_MAX_REMOTE_FOLLOWS];
	struct k32_task *relay;	  /* remote follow poller, started with the first stream */
	struct k32_cond relay_cv; /* wakes the relay (new stream, stop) */
	bool relay_stop;
};

/* A Kubernetes Status failure as the whole response. */
void cplane_status_fail(struct http_response *resp, int code, const char *reason, const char *msg);
/* The local node named name (cp->mu held), or NULL. */
struct cplane_node *cplane_node_find_locked(struct cplane *cp, const char *name);
/* Writes wall seconds s as RFC 3339 ("2026-01-31T12:00:00Z"). */
void cplane_fmt_time(uint64_t s, char *out, size_t cap);
/* A Node's pod server address (InternalIP, else 127.0.0.1) and port (0: none published). */
void cplane_node_endpoint(const cJSON *node, char *ip, size_t ipcap, uint16_t *port);
/*
 * GET target from node's pod server with the cluster's credentials: the admin token, and if
 * the node answers 401 (a board that joined with its node token trusts that one) once more
 * with the node's token. r is filled as by http_client_do (fini it on K32_OK).
 */
k32_status_t cplane_node_get(struct cplane *cp, struct http_client *c, const char *node,
			     const char *target, struct http_client_response *r,
			     struct k32_err *err);

/* cplane_logs.c */
bool cplane_log_path(struct k32_str path, char *ns, size_t nscap, char *name, size_t namecap);
void cplane_log_filter(struct k32_buf *body, const char *cutoff, bool keep_ts, int64_t limit);
void cplane_serve_log(struct cplane *cp, struct http_request *req, struct http_response *resp,
		      const char *ns, const char *name);
/* Ends the relay task (before the HTTP server stops: the relay wakes its streams), then,
 * once the server has stopped and closed every stream, frees the follow slots. */
void cplane_relay_stop(struct cplane *cp);
void cplane_relay_free(struct cplane *cp);

/* cplane_metrics.c */
#define CPLANE_METRICS_PREFIX "/apis/metrics.k8s.io/v1beta1"
void cplane_discovery_add_metrics(struct http_response *resp);
void cplane_serve_metrics(struct cplane *cp, struct http_request *req, struct http_response *resp);

#endif /* CPLANE_INT_H */
