/*
 * klet_int.h - what the kubelet's own files share: the kubelet and pod records, the log
 * ring, the API client helpers.
 *
 * Locks (never taken in the other order):
 *   run_lock  serialises provider calls that touch a pod's runtime (start, stop, run,
 *             http, stats) and the pod pool heap, like a board's single interpreter task;
 *   lock      the pod table, every pod's desired and observed state, the log rings.
 * A provider's notify and klet_pod_log take `lock` briefly, so they may be called with
 * run_lock held. The worker never holds `lock` across a provider call or an HTTP request.
 *
 * Tasks: the worker (exec task) makes every provider call, pod HTTP requests included
 * (queued to it by the pod server's routers, klet_http.c); the node task sends the Lease,
 * Node status, pod status and Events and never takes run_lock; the watcher records desired
 * state and sets a deleted pod's stop word (klet_pod_stop_word), which its running call
 * sees at its next check point. Each task has its own HTTP client.
 */
#ifndef KLET_INT_H
#define KLET_INT_H

#include "kubelet/klet.h"
#include "kmeta/kmeta.h"

#include "base/k32_json.h"
#include "http/http.h"
#include "kclient/kclient.h"
#include "platform/k32_platform.h"

#define KLET_MOD      "kubelet"
#define KLET_LINK_MOD "kubelet-link" /* err.module of a link error: reason LinkError */

/* Bytes of names kept per pod (Kubernetes allows 253; kube32 pods keep them short). */
#define KLET_NS_LEN    64
#define KLET_NAME_LEN  128
#define KLET_UID_LEN   48
#define KLET_IMAGE_LEN 256 /* a reference with a registry path, a tag and a digest fits */
#define KLET_MSG_LEN   (K32_ERR_MSG_LEN + 64)

/* A bounded ring of log lines. Entry: seq (8) | wall seconds (8) | len (2) | text. */
struct klet_ring {
	uint8_t *buf;	  /* K32_KLET_LOG_RING_BYTES bytes */
	size_t head;	  /* offset of the oldest entry */
	size_t used;	  /* bytes in use */
	uint32_t lines;	  /* entries in the ring */
	uint64_t dropped; /* lines evicted to make room */
};

enum klet_cstate {
	KLET_C_WAITING = 0, /* not running: creating, back-off, image pull error */
	KLET_C_RUNNING,
	KLET_C_TERMINATED,
};

enum klet_restart {
	KLET_RESTART_ALWAYS = 0,
	KLET_RESTART_ON_FAILURE,
	KLET_RESTART_NEVER,
};

/* A terminated container, as containerStatuses reports it. */
struct klet_term {
	bool set;		    /* there is one */
	int32_t code;		    /* exit code */
	char reason[32];	    /* "Error", "Completed" */
	char message[KLET_MSG_LEN]; /* trap message */
	uint64_t started_s;	    /* wall seconds */
	uint64_t finished_s;
};

/* An Event about a pod, queued under lock by a transition and sent by the worker. */
#define KLET_EVENT_QUEUE K32_KLET_EVENT_QUEUE
struct klet_event {
	char ns[KLET_NS_LEN];
	char name[KLET_NAME_LEN];
	char uid[KLET_UID_LEN];
	const char *type;   /* "Normal" / "Warning" (static) */
	const char *reason; /* "Started", "BackOff", ... (static) */
	char message[KLET_MSG_LEN];
};

/* What a pod's calls did, summed over all its containers (klet_pod_calls_add). */
struct klet_call_counts {
	uint64_t gas_used;   /* gas its metered calls used */
	uint64_t traps;	     /* calls that trapped (out of gas included) */
	uint64_t out_of_gas; /* of those, calls that ran out of gas */
	uint64_t deadlines;  /* calls stopped past their wall-clock deadline */
	uint64_t i2c_ok;     /* I2C transactions done (driver pods) */
	uint64_t i2c_errors; /* I2C transactions that failed on the bus */
};

struct klet_pod {
	struct klet *k; /* owner */
	bool used;	/* slot in use */
	uint32_t gen;	/* bumped when the slot is reused (HTTP re-check) */
	/* desired (from the API) */
	char ns[KLET_NS_LEN];
	char name[KLET_NAME_LEN];
	char ref[KLET_NS_LEN + KLET_NAME_LEN]; /* "ns/name" */
	char uid[KLET_UID_LEN];
	char container[64];
	char image[KLET_IMAGE_LEN];
	enum klet_restart restart;
	uint64_t mem_limit; /* bytes, 0 = none */
	uint64_t gas;	    /* per call */
	bool gas_off;
	uint32_t stack_bytes;
	uint32_t frames; /* annotation kube32.io/call-depth (0: default) */
	uint32_t tick_ms;
	char device[64];       /* annotation kube32.io/device ("" none) */
	uint32_t deadline_ms;  /* annotation kube32.io/call-deadline-ms (or the default) */
	_Atomic uint32_t stop; /* KLET_STOP_*: the running call stops (klet_pod_stop_word) */
	bool deleting;	       /* deletionTimestamp seen: stop, then delete with grace 0 */
	bool gone;	       /* deleted from the API: stop and forget */
	bool seen;	       /* marked during a relist */
	/* observed */
	bool started; /* the provider holds a runtime for it */
	bool done;    /* terminal: Succeeded or Failed, never started again */
	enum klet_cstate state;
	char wait_reason[32]; /* ContainerCreating, CrashLoopBackOff, ErrImagePull, ... */
	char wait_msg[KLET_MSG_LEN];
	struct klet_term term;	  /* state terminated (valid when state == TERMINATED) */
	struct klet_term last;	  /* lastState.terminated */
	uint32_t restarts;	  /* restartCount */
	uint32_t start_failures;  /* consecutive failed starts (image pull back-off) */
	uint64_t pod_start_s;	  /* status.startTime */
	uint64_t run_start_s;	  /* state.running.startedAt */
	uint64_t run_start_us;	  /* monotonic, for the back-off reset */
	uint64_t next_start_us;	  /* when a waiting container may start */
	uint32_t backoff_ms;	  /* next crash back-off; 0 = none yet */
	uint64_t next_run_us;	  /* when provider run is due; UINT64_MAX never */
	bool exit_pending;	  /* notify reported an exit the worker has not handled */
	struct klet_term exit;	  /* that exit */
	bool dirty;		  /* status may have changed */
	uint64_t retry_status_us; /* status write failed: retry then */
	char *last_status;	  /* the last status JSON sent (k->alloc), or NULL */
	size_t last_status_len;
	/* provider */
	void *priv;
	struct k32_allocator alloc; /* counting view of the pool */
	size_t mem_cur;		    /* pool bytes the pod holds */
	size_t mem_peak;
	struct klet_pod_mem mem_snap; /* bytes by kind and pool bytes as of the last provider call
				       * (read by other threads under `lock`: klet_snapshot) */
	uint64_t cpu_us;	      /* CPU time spent in provider calls for this pod */
	uint64_t cpu_prev_us;	      /* cpu_us at the last rate sample */
	uint64_t cpu_prev_at_us;      /* monotonic time of that sample (0: none yet) */
	uint64_t cpu_nanocores;	      /* CPU rate over the last sample window */
	/* events (klet_pod_set_events, klet_pod_events_count) */
	bool events;		   /* takes packets from other owners: kicked by klet_events_kick */
	uint64_t events_delivered; /* event handler calls that returned */
	uint64_t events_over_budget;   /* calls that ran out of budget (packet dropped) */
	struct klet_call_counts calls; /* over the pod's life, every container (/metrics) */
	/* logs: both rings are allocated when the pod is admitted and freed with its slot
	 * (buf NULL: a slot not in use, a pod that was already finished, or a rejected one) */
	struct klet_ring log;  /* current container */
	struct klet_ring prev; /* previous container */
	bool rejected;	       /* not admitted (no memory for its log rings): phase Failed */
	uint64_t log_seq;      /* last sequence number given to a line */
};

/* A pod HTTP request handed by a pod-server router to the exec task (klet_http.c). The
 * router owns req and resp and waits (on http_cv) until the job is DONE, or withdraws it
 * while it is still QUEUED; the exec task touches them only while the job is RUNNING. */
enum klet_job_state { KLET_JOB_FREE, KLET_JOB_QUEUED, KLET_JOB_RUNNING, KLET_JOB_DONE };
struct klet_http_job {
	enum klet_job_state state;
	uint32_t seq; /* arrival order: the exec task takes the oldest first */
	struct klet_pod *p;
	uint32_t gen; /* p's generation when routed */
	const struct klet_http_req *req;
	struct klet_http_resp *resp;
	k32_status_t st; /* the call's status (DONE) */
};

/* The call the exec task is making, so a request that cannot wait says what holds it. */
struct klet_exec_busy {
	bool on;
	char ref[KLET_NS_LEN + KLET_NAME_LEN]; /* the pod */
	const char *entry;		       /* "k32_tick", "k32_http", ... (static) */
	uint32_t deadline_ms;		       /* the call's deadline */
	uint64_t until_us;		       /* when its deadline passes */
};

struct klet {
	struct klet_image_ref start_ref; /* kw_start's parse of the image: starts run one at a
					  * time per kubelet (its run lock), not per process */
	struct klet_config cfg;		 /* strings below point at the copies */
	char node[KLET_NAME_LEN];
	char api_host[64];
	char ca_file[K32_HTTP_PATH_LEN];
	char token[128];
	char node_ip[64];
	/* RFC 3339 time this kubelet first posted its node conditions: their lastTransitionTime
	 * from then on (the statuses it posts never change while it runs), so a status update
	 * that only renews the heartbeat changes nothing the controllers compare */
	char conditions_since[32];
	char image_dir[K32_HTTP_PATH_LEN];
	char pod_http_host[64];
	struct klet_profile profile;
	char profile_name[32];
	char hardware[256];
	const struct klet_provider_ops *ops;
	void *ops_ctx;
	const struct k32_allocator *alloc;     /* node-lifetime allocations (default heap) */
	const struct k32_allocator *log_alloc; /* pods' log rings (cfg.log_alloc or alloc) */
	uint32_t max_pods;

	struct k32_mutex lock;	  /* see the top of this file */
	struct k32_cond cv;	  /* worker, node task and watcher wake-up */
	struct k32_cond sleep_cv; /* a pod sleeping in a host call (klet_pod_sleep), with lock */
	struct k32_mutex run_lock;

	bool started;		    /* klet_start succeeded */
	_Atomic bool stopping;	    /* klet_stop(_begin) was called (read by every task) */
	struct k32_task *worker;    /* the exec task: every call into a pod */
	struct k32_task *watcher;   /* the pod list + watch */
	struct k32_task *node_task; /* Lease, Node status, pod status, Events */
	struct http_server *pod_srv;
	/* The API client (src/kclient over HTTP(S)): one kept-alive connection for requests,
	 * the worker's and the node task's (modules, deletion, Device status; Lease, Node and
	 * pod status, Events) and the watcher's list, one at a time; one for the pod watch. */
	struct kclient *kc;
	bool registered; /* the Node and its Lease exist (under lock) */

	struct kobj_node *kobj; /* the node's kernel objects (klet_kobj.c), from the profile */
	/* bearer tokens the pod server accepts on node endpoints (klet_http.c) */
	char pod_tokens[K32_KLET_POD_HTTP_TOKENS][128];
	uint32_t pod_token_count;

	struct k32_heap pool; /* the pod pool */
	struct k32_allocator pool_alloc;

	uint64_t next_lease_us;
	uint64_t next_node_status_us;
	char lease_rv[32];
	struct klet_stats stats;
	struct k32_mem_stats pool_snap; /* the pool's counters as of the last provider call */
	struct klet_event events[KLET_EVENT_QUEUE]; /* Events waiting for the worker to send */
	uint32_t nevents;
	uint32_t event_seq; /* makes Event names unique (worker only) */
	struct kmeta_event_series event_series[K32_KLET_EVENT_SERIES]; /* node task only */
	uint32_t log_followers; /* /containerLogs?follow=true streams open (under lock) */

	/* pod HTTP requests queued to the exec task, and what it runs (klet_http.c; lock) */
	struct k32_cond http_cv; /* a job became DONE, or the node stops (with lock) */
	struct klet_http_job http_jobs[K32_KLET_POD_HTTP_QUEUE];
	uint32_t http_seq;
	struct klet_exec_busy busy;
	bool http_closing; /* klet_http_stop began: queued requests are answered 503 */

	struct klet_pod *pods; /* max_pods slots */
	struct klet_svc *svc;  /* Service routing of the pod server (klet_svc.c) */
};

/* klet.c */
/* snprintf for messages whose truncation is acceptable (names are cut, never overflow). */
void klet_msgf(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void klet_wake(struct klet *k);
/* Finds a used, not-gone pod by namespace and name (lock held). */
struct klet_pod *klet_pod_find_locked(struct klet *k, const char *ns, const char *name);
/* An HTTP(S) client of this kubelet's API server, as the node (its token, CA), answers
 * capped at K32_HTTP_MAX_RESPONSE_BYTES, timeout_us per request. */
k32_status_t klet_kclient_new(struct klet *k, int64_t timeout_us, struct kclient **out,
			      struct k32_err *err);

/* klet_log.c */
/* Empties r and allocates its K32_KLET_LOG_RING_BYTES (K32_ERR_NO_MEMORY: r->buf is NULL). */
k32_status_t klet_ring_init(struct klet_ring *r, const struct k32_allocator *a);
/* Frees r's bytes (none is fine) and leaves it empty. */
void klet_ring_fini(struct klet_ring *r, const struct k32_allocator *a);
void klet_ring_reset(struct klet_ring *r);
/* A ring without bytes (buf NULL) takes nothing: the line is counted in dropped. */
void klet_ring_append(struct klet_ring *r, uint64_t seq, uint64_t wall_s, const char *text,
		      size_t len);
/* Moves src's lines into dst (dst's lines are dropped), leaving src empty. */
void klet_ring_move(struct klet_ring *dst, struct klet_ring *src);
k32_status_t klet_ring_read(const struct klet_ring *r, int64_t tail_lines, bool timestamps,
			    uint64_t *inout_seq, struct k32_buf *out, struct k32_err *err);

/* After a provider call, with run_lock held: copies the pool's counters and p's bytes into
 * the snapshots other threads read under `lock` (so nobody outside provider calls ever
 * waits for run_lock, which a long tick may hold). p may be NULL. Takes `lock`. */
void klet_snapshot(struct klet *k, struct klet_pod *p);
/* Adds the CPU time of one provider call to p (lock not held; takes it). */
void klet_pod_cpu_add(struct klet *k, struct klet_pod *p, uint64_t cpu_us);
/* Adds one provider call's counts to p's (lock not held; takes it). */
void klet_pod_calls_add(struct klet *k, struct klet_pod *p, const struct klet_call_counts *d);

/* klet_http.c: the exec task's side of pod HTTP requests */
/* Runs the pod HTTP requests queued now (oldest first), each under run_lock. Exec task. */
void klet_http_serve(struct klet *k);
/* Whether a request waits for the exec task (lock held). */
bool klet_http_queued_locked(const struct klet *k);
/* The exec task starts (entry non-NULL) or ends (entry NULL) a call into p: what a
 * request that cannot wait is told holds the interpreter. Takes `lock`. */
void klet_exec_busy(struct klet *k, const struct klet_pod *p, const char *entry);

/* klet_kobj.c: the node's kobj instance, made in klet_new, freed in klet_free (after every
 * pod's handle table is gone) */
k32_status_t klet_kobj_new(struct klet *k, struct k32_err *err);
void klet_kobj_free(struct klet *k);

/* klet_http.c */
k32_status_t klet_http_start(struct klet *k, struct k32_err *err);
void klet_http_stop(struct klet *k);
/* Answers req as a request with X-Kube32-Pod: hv (klet_svc.c serves a Service's local pod). */
void klet_http_pod_request(struct klet *k, struct k32_str hv, struct http_request *req,
			   struct http_response *resp);
/* klet_svc.c: X-Kube32-Service routing; init/fini with the pod server */
k32_status_t klet_svc_init(struct klet *k, struct k32_err *err);
void klet_svc_fini(struct klet *k);
/* API requests of the Service lookups that got no answer. */
uint32_t klet_svc_api_failures(struct klet *k);
void klet_svc_request(struct klet *k, struct k32_str hv, struct http_request *req,
		      struct http_response *resp);

/* GET /metrics of the pod server: the node's and its pods' figures in Prometheus' text
 * format (klet_metrics.c). Takes the state lock one pod at a time. */
k32_status_t klet_metrics_text(struct klet *k, struct k32_buf *b, struct k32_err *err);
/* klet_image.c: the SHA-256 of bytes as 64 lower-case hex digits (and a NUL). */
void klet_image_sha256(const uint8_t *bytes, size_t len, char hex[65]);
/* The keys of a module ConfigMap (binaryData, then data) as "a, b, c" in out, whole keys
 * only ("a, b, ..." when they do not all fit). */
void klet_image_versions(const cJSON *cm, char *out, size_t cap);

/* The Node status this kubelet posts at now_s (registration and every
 * K32_KLET_NODE_STATUS_S): capacity, conditions (lastHeartbeatTime now_s, lastTransitionTime
 * the first post's), addresses, endpoints, nodeInfo. NULL when out of memory. */
cJSON *klet_node_status_json(struct klet *k, uint64_t now_s);

#endif /* KLET_INT_H */
