/*
 * klet.h - the kube32 kubelet: the node agent of one board.
 *
 * A kubelet talks to the API server ONLY over HTTP(S) with the http.h client, exactly as a
 * board does, so it works against a control plane in this process or in another one:
 *
 *   - registers its Node (capacity and allocatable from the board profile: the pod pool's
 *     bytes as "memory", the pod count as "pods"; the hardware it has as the annotation
 *     kube32.io/hardware and the label kube32.io/board; its addresses; nodeInfo with the
 *     kubeletVersion; daemonEndpoints.kubeletEndpoint.Port = the pod HTTP port);
 *   - renews its Lease kube-node-lease/<node> every K32_KLET_LEASE_RENEW_S seconds and
 *     reports Node status (Ready) every K32_KLET_NODE_STATUS_S seconds;
 *   - lists and watches the pods bound to it (fieldSelector spec.nodeName=<node>; a 410 or
 *     an ERROR event makes it relist);
 *   - runs each pod through a provider (struct klet_provider_ops: the Wasm provider of
 *     klet_wasm.c, or a fake one in tests), restarts it per restartPolicy with exponential
 *     back-off (K32_KLET_BACKOFF_*: 10 s doubling to 5 min; Error then CrashLoopBackOff),
 *     and writes phase, conditions and containerStatuses through the pods/status
 *     subresource (a JSON merge patch, sent only when the status changed);
 *   - finishes graceful deletion: a pod with a deletionTimestamp is stopped, then deleted
 *     with gracePeriodSeconds=0;
 *   - keeps each pod's log lines in a bounded ring (and the previous container's lines for
 *     `--previous`), read with klet_pod_logs;
 *   - serves the pod HTTP server (port K32_KLET_POD_HTTP_PORT, 7000): a request carrying
 *     `X-Kube32-Pod: <namespace>/<name>` goes to that pod's HTTP handler (404 unknown pod,
 *     503 not Running, 504 out of execution budget, 501 no handler); without the header,
 *     GET /healthz answers "ok", GET /stats the pod pool and each pod's bytes by kind
 *     (code, linear memory, stacks, runtime; JSON), and GET
 * /containerLogs/<ns>/<pod>/<container>?tailLines=N& previous=true&timestamps=true answers the
 * pod's log (what the API server's pods/log proxy in src/sim reads for pods on boards in other
 * processes).
 *
 * Threads (platform tasks) per kubelet (docs/node-tasks.md): the node task (Lease, Node
 * status, pod status, Events: never pod code), the worker or exec task (pod life cycle and
 * every call into a pod; its stack is the board's interpreter stack), the pod watch, and the
 * pod HTTP server's loop with its K32_KLET_POD_HTTP_ROUTERS routers (which queue pod
 * requests to the exec task and never call into a pod themselves). Provider calls that touch a
 * pod's runtime (start, stop, run, http, stats) are serialised by one run lock per kubelet, as a
 * board runs all its pods on one interpreter task. Each pod call has a wall-clock deadline
 * (kube32.io/call-deadline-ms) and is interrupted by the pod's deletion or the kubelet's stop
 * (klet_pod_stop_word). A provider's notify callback may be called from any of those calls and
 * never blocks.
 *
 * Memory: node-lifetime state (the pod table with its log rings) is allocated once by
 * klet_new. Every byte of a pod's runtime comes from the node's pod pool, a k32_heap with
 * the profile's byte limit, through a per-pod counting allocator (klet_pod_allocator), so
 * a pod that does not fit fails cleanly with both numbers in its message.
 */
#ifndef KLET_H
#define KLET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_buf.h"
#include "base/k32_hostcall.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"
#include "kobj/kobj.h"

struct klet;
struct klet_pod;
struct klet_image_ref;

/* What the board offers its pods (design.md section 8). */
struct klet_profile {
	const char *name;      /* "cardputer", "devkit", "host" (label kube32.io/board) */
	size_t pod_pool_bytes; /* the pod pool: every byte of every pod's runtime */
	size_t interp_stack;   /* native stack of the interpreter (worker) task, bytes */
	uint32_t max_pods;     /* pods at once (<= K32_KLET_MAX_PODS; 0: that limit) */
	const char *hardware;  /* "i2c:bme688,i2c:miniscale" or "" (annotation) */
	/* The board's kernel objects: the limits of its own kobj instance (pools, shares,
	 * handle tables, region). A field left 0 takes the K32_KOBJ_* default of k32_config.h
	 * (kobj_limits_default), so a profile names only what differs; a board header
	 * (include/k32/boards/<board>.h) can fill them from its macros. */
	struct kobj_limits kobj;
	/* The pod server: connections open at once (0: K32_KLET_POD_HTTP_CONNS) and from one
	 * client address (0: K32_KLET_POD_HTTP_CONNS_PER_CLIENT). */
	uint32_t pod_http_conns;
	uint32_t pod_http_conns_per_client;
};

/* The kobj limits of a profile: kobj_limits_default with its non-zero fields applied. */
void klet_profile_kobj_limits(const struct klet_profile *p, struct kobj_limits *out);

/* ---- the pod provider (virtual-kubelet's PodLifecycleHandler, in C) ---------------------- */

/* What a provider needs to start one container. Strings live until stop. */
struct klet_run_spec {
	const char *ns;		/* pod namespace */
	const char *name;	/* pod name */
	const char *uid;	/* pod uid */
	const char *container;	/* container name (spec.containers[0].name) */
	const char *image;	/* spec.containers[0].image */
	const char *image_dir;	/* the node's image directory ("SD card") */
	const char *node;	/* node name (for messages) */
	uint64_t mem_limit;	/* resources.limits.memory in bytes (0: none given) */
	uint64_t gas;		/* gas per call (kube32.io/execution-budget) */
	bool gas_off;		/* kube32.io/execution-budget: "off" */
	uint32_t stack_bytes;	/* Wasm value stack (kube32.io/stack-bytes) */
	uint32_t frames;	/* call depth (kube32.io/call-depth; 0: K32_KLET_POD_FRAMES) */
	uint32_t tick_ms;	/* k32_tick period (kube32.io/tick-ms) */
	bool run_to_completion; /* restartPolicy != Always (a Job's pod) */
	const char *device;	/* annotation kube32.io/device: the Device it drives ("": none) */
	uint32_t deadline_ms;	/* wall-clock deadline of each call (kube32.io/call-deadline-ms) */
};

/* The annotation of a pod's call deadline in ms (1..K32_KLET_CALL_DEADLINE_MAX_MS, which is
 * K32_POD_CALL_DEADLINE_MS_MAX; parsed by kmeta: the API answers 422 for a bad value). */
#define KLET_ANN_CALL_DEADLINE "kube32.io/call-deadline-ms"

/* Why a pod's running call must stop (klet_pod_stop_word). */
enum {
	KLET_STOP_NONE = 0,
	KLET_STOP_DELETED = 1,	/* the pod was deleted (or replaced) */
	KLET_STOP_SHUTDOWN = 2, /* the kubelet is stopping */
};

/* How a container ended, reported through klet_notify_fn. */
struct klet_exit {
	int32_t code;	     /* exit code: 0 success */
	const char *reason;  /* "Completed", "Error", "OOMKilled", ... (static string) */
	const char *message; /* trap message or detail (copied by the kubelet) */
};

/* One pod HTTP request, as a provider sees it (views valid during the call). */
struct klet_http_req {
	const char *method;    /* "GET", "POST", ... */
	struct k32_str target; /* path and query */
	const uint8_t *body;   /* body_len bytes */
	size_t body_len;
};

/* What a provider fills for an HTTP request. body is capped at K32_KLET_POD_HTTP_BODY_MAX. */
struct klet_http_resp {
	int status;	       /* HTTP status (the provider sets it; default 200) */
	char content_type[64]; /* default "text/plain" */
	struct k32_buf body;   /* response body */
};

/* A pod's runtime bytes, by kind (what `kubectl top` and the console report). */
struct klet_pod_mem {
	size_t code_bytes;    /* the loaded module: compiled code, tables, copied data (the
			       * module file itself is freed after the load) */
	size_t memory_bytes;  /* linear memory */
	size_t stack_bytes;   /* value and frame stacks */
	size_t runtime_bytes; /* instance structures, tables */
	size_t pool_bytes;    /* everything the pod holds from the pool now */
	size_t pool_peak;     /* the most it ever held */
};

/*
 * Reports that a started container ended (trapped, returned an error, exited). Any thread
 * the provider is called on; never blocks (takes a short state lock and signals the worker).
 */
typedef void (*klet_notify_fn)(void *arg, struct klet_pod *pod, const struct klet_exit *ex);

struct klet_provider_ops {
	/* Once, at klet_start: how to report exits. */
	void (*init)(void *ctx, struct klet *k, klet_notify_fn notify, void *notify_arg);
	/*
	 * Creates and starts the container (e.g. loads the module and calls k32_init). K32_OK:
	 * it runs (it may already have notified an exit). Otherwise err says why and the
	 * kubelet retries with back-off: K32_ERR_NOT_FOUND is an image that is not there
	 * (ErrImagePull / ImagePullBackOff), anything else CreateContainerError.
	 */
	k32_status_t (*start)(void *ctx, struct klet_pod *pod, const struct klet_run_spec *spec,
			      struct k32_err *err);
	/* Stops the container and frees everything it holds. Never fails. */
	void (*stop)(void *ctx, struct klet_pod *pod);
	/* Does whatever is due at now_us (ticks); *out_next_us gets when it wants to run next
	 * (UINT64_MAX: only on events). */
	void (*run)(void *ctx, struct klet_pod *pod, uint64_t now_us, uint64_t *out_next_us);
	/* Serves one HTTP request. K32_ERR_NOT_SUPPORTED: no handler (501); K32_ERR_TIMED_OUT:
	 * out of execution budget (504); K32_ERR_TRAP: the handler trapped (500, and the
	 * provider notifies the exit). May be NULL. */
	k32_status_t (*http)(void *ctx, struct klet_pod *pod, const struct klet_http_req *req,
			     struct klet_http_resp *resp);
	/* Memory by kind. May be NULL. */
	void (*stats)(void *ctx, struct klet_pod *pod, struct klet_pod_mem *out);
	/* The pod was deleted and its container is about to be stopped (never called for a
	 * restart): one last bounded call into it (the Wasm provider delivers K32_EVENT_NODE
	 * with key K32_EVENT_KEY_STOP to k32_event). An exit it notifies is ignored: the pod
	 * goes anyway. May be NULL. */
	void (*stopping)(void *ctx, struct klet_pod *pod);
	/* Whether run has anything to do at now (a tick due, an event queued). false: nothing,
	 * and *out_next_us says when to ask again; the worker then skips run and its CPU and
	 * memory accounting (a poll of a quiet pod costs one look at its queue). Called with the
	 * run lock held. May be NULL (run is always called). */
	bool (*pending)(void *ctx, struct klet_pod *pod, uint64_t now_us, uint64_t *out_next_us);
};

/* ---- configuration and life cycle ---------------------------------------------------------- */

struct hw_node;

struct klet_config {
	const char *node_name;		    /* required; DNS-1123 name */
	const struct klet_profile *profile; /* required */
	/* the API server */
	const char *api_host; /* "127.0.0.1" */
	uint16_t api_port;    /* required */
	bool api_tls;	      /* HTTPS (then ca_file is required) */
	const char *ca_file;  /* PEM CA of the API server */
	const char *token;    /* bearer token (a node token); NULL: none */
	/* the node */
	const char *node_ip;	   /* InternalIP address, "127.0.0.1" by default */
	const char *image_dir;	   /* where modules are looked up; required for the Wasm provider */
	const char *pod_http_host; /* bind address of the pod server ("127.0.0.1") */
	uint16_t pod_http_port;	   /* 0 picks a free port (see klet_pod_http_port) */
	bool pod_http_off;	   /* no pod HTTP server (some unit tests) */
	/* how long a pod request waits for the exec task, ms; 0: K32_KLET_POD_HTTP_WAIT_MS */
	uint32_t pod_http_wait_ms;
	/* Bearer tokens the pod server accepts on its node endpoints (/console, /stats,
	 * /containerLogs) besides the node's own token (which the control plane that issued it
	 * sends); e.g. the cluster admin's. At most K32_KLET_POD_HTTP_TOKENS; copied. */
	const char *const *pod_http_tokens;
	size_t pod_http_token_count;
	/* the provider; NULL ops: the Wasm provider (klet_wasm_provider) */
	const struct klet_provider_ops *provider;
	void *provider_ctx;
	/* extra host function tables linked into every Wasm pod (e.g. the hw drivers') */
	const struct k32_hostfn_def *extra_hostfns;
	size_t extra_hostfn_count;
	/* the node's I2C buses (src/hw): a pod annotated kube32.io/device is bound to its
	 * Device (hw_node_bind), gets the "kube32" hardware host functions, and its readings
	 * go to devices/<name>/status. NULL: no hardware (such pods fail to start). */
	struct hw_node *hw_node;
	/* console commands beyond PODS, MEM and TASKS (e.g. BENCH): cmd is what follows
	 * "K32_CMD:"; return K32_ERR_NOT_SUPPORTED for a command it does not know */
	k32_status_t (*console_ext)(void *ctx, const char *cmd, struct k32_buf *out);
	void *console_ext_ctx;
	/* where a pod's two log rings (K32_KLET_LOG_RING_BYTES each) come from, taken when the
	 * pod is admitted and given back with it; NULL: the default heap (tests pass a k32_heap
	 * with fault injection). Used under the kubelet's lock only. */
	const struct k32_allocator *log_alloc;
	/* the node heap: the kubelet's own state, its API clients and pod server, the kernel
	 * objects, the pods' log rings (unless log_alloc), the loader's scratch; NULL: the
	 * default heap. kube32-sim's boot report passes a counting heap of its own, so the
	 * figure is one board's and not the control plane's that shares the process. (cJSON's
	 * trees use the thread's allocator, k32_json.h: not this one.) */
	const struct k32_allocator *alloc;
	/* true: klet_start does not wait for the API server; the node task registers the Node
	 * (and its Lease), retrying with exponential backoff and jitter
	 * (K32_KLET_JOIN_BACKOFF_MIN_MS .. _MAX_MS) and logging once per change of what went
	 * wrong, and the watcher starts once it is registered. false: klet_start registers and
	 * fails if it cannot. */
	bool join_retry;
	/* with join_retry: the first attempt waits a random 0 .. join_spread_ms, so a fleet
	 * that starts at once (a simulator's thousand boards) does not hand its API server a
	 * thousand TLS handshakes in the same second (0: at once) */
	uint32_t join_spread_ms;
	/* timings; 0 = the K32_KLET_* default (tests shorten them) */
	uint32_t lease_renew_ms;
	uint32_t backoff_initial_ms;
	uint32_t backoff_max_ms;
	uint32_t watch_timeout_s;
};

/*
 * Checks cfg and allocates the kubelet (node-lifetime state, the pod pool heap). Copies
 * every string. Contacts nobody yet.
 * @retval K32_ERR_INVALID_ARGS missing node name, profile or API port; err says which
 * @retval K32_ERR_NO_MEMORY
 */
k32_status_t klet_new(const struct klet_config *cfg, struct klet **out, struct k32_err *err);

/*
 * Registers the Node (creating it or updating its status), writes the first Lease, starts
 * the pod HTTP server, the watch and the worker. Blocks for the registration requests.
 * @retval K32_ERR_IO / TIMED_OUT / PEER_CLOSED  the API server is unreachable
 * @retval K32_ERR_ACCESS_DENIED  the token may not write this Node (err has the Status)
 * @retval K32_ERR_IO             the pod HTTP port is taken
 */
k32_status_t klet_start(struct klet *k, struct k32_err *err);

/*
 * Stops the tasks (the watch ends within watch_timeout_s, or at once when the API server
 * stops first), stops every pod and frees their runtimes. Pods stay bound in the API (a
 * board that reboots picks them up again). Safe to call twice.
 */
void klet_stop(struct klet *k);
/* Tells the kubelet's tasks to stop without waiting for them (e.g. before the control
 * plane of this process goes away, so the end of its watch is not reported as an error).
 * klet_stop or klet_free must still follow. Any thread. */
void klet_stop_begin(struct klet *k);
/* Stops (if needed) and frees. NULL is ignored. */
void klet_free(struct klet *k);

/* The pod HTTP server's port (0 before start or when off). */
uint16_t klet_pod_http_port(const struct klet *k);
/* The node's own kobj instance (its pods' kernel objects; sized by profile.kobj). */
struct kobj_node *klet_kobj(struct klet *k);
/* The node name. */
const char *klet_node_name(const struct klet *k);

/*
 * Copies a pod's log into out: previous selects the previous container's ring, tail_lines
 * < 0 means all, timestamps prefixes each line with its RFC 3339 time and a space.
 * *inout_seq (may be NULL): on input only lines with a sequence number above it are given;
 * on output the last sequence number given (for following a log).
 * @retval K32_ERR_NOT_FOUND  no such pod on this node
 */
k32_status_t klet_pod_logs(struct klet *k, const char *ns, const char *name, bool previous,
			   int64_t tail_lines, bool timestamps, uint64_t *inout_seq,
			   struct k32_buf *out, struct k32_err *err);

/* Writes wall seconds s as RFC 3339 ("2026-01-31T12:00:00Z") into out. */
void klet_fmt_time(uint64_t s, char *out, size_t cap);

/*
 * Runs one console line ("K32_CMD:PODS", "K32_CMD:MEM", "K32_CMD:TASKS", or what the
 * console_ext hook knows) and appends the answer lines, the last one "K32_END <cmd>" (or a
 * single "K32_ERR ..." line). Fails only when out is full. Any thread.
 */
k32_status_t klet_console_exec(struct klet *k, const char *line, size_t len, struct k32_buf *out);

/* Counters for tests and the console. */
struct klet_stats {
	uint32_t pods;		 /* pods in the table */
	uint32_t running;	 /* containers running */
	uint64_t status_writes;	 /* pods/status patches sent */
	uint64_t lease_renewals; /* Lease updates sent */
	uint64_t relists;	 /* list calls (first one included) */
	uint64_t api_errors;	 /* failed API calls */
	uint64_t events_sent;	 /* Events recorded (Started, BackOff, Failed, Killing) */
	uint64_t events_dropped; /* Events dropped: the queue was full or the write failed */
	size_t pool_bytes;	 /* pod pool in use */
	size_t pool_peak;	 /* its peak */
	size_t pool_limit;	 /* its size */
};
void klet_get_stats(struct klet *k, struct klet_stats *out);

/*
 * Appends the node's resource figures as JSON (what GET /stats serves and the
 * metrics.k8s.io view in src/sim reads): {"node","board","pool":{usedBytes,peakBytes,
 * limitBytes},"pods":[{namespace,name,container,state,restarts,cpuMicros (total),
 * cpuNanocores (rate over the last >= 10 s window between two calls),memory:{codeBytes,
 * linearBytes,stackBytes,runtimeBytes,poolBytes,poolPeakBytes},events:{delivered,
 * overBudget}}]}.
 * Context: takes the run lock: waits for a running tick.
 */
k32_status_t klet_stats_json(struct klet *k, struct k32_buf *out, struct k32_err *err);

/* ---- for providers ------------------------------------------------------------------------ */

/* The provider's per-pod state (NULL until set). */
void *klet_pod_priv(const struct klet_pod *pod);
void klet_pod_set_priv(struct klet_pod *pod, void *priv);
/* The pod's counting allocator over the node's pod pool (valid from start to stop; use it
 * only inside provider calls, which hold the run lock). */
const struct k32_allocator *klet_pod_allocator(struct klet_pod *pod);
/* "namespace/name", for messages. */
const char *klet_pod_ref(const struct klet_pod *pod);
/* Appends one line to the pod's log ring (a trailing newline is dropped; a line over
 * K32_KLET_LOG_LINE_MAX is cut). Any thread; never blocks for long. */
void klet_pod_log(struct klet_pod *pod, const char *text, size_t len);
/*
 * The cluster's module store: a module not in the node's image directory may be kept as a
 * ConfigMap named file_name (e.g. "hello.wasm", made with `kubectl create configmap
 * hello.wasm --from-file=hello.wasm`) whose binaryData (or data) holds the key file_name, in
 * the pod's namespace or else in kube-system. Reads it over the kubelet's API connection
 * into a block of *out_len + 1 bytes from alloc; *out_ns (may be NULL) is the namespace it
 * came from. want (may be NULL: the untagged module) picks a version: want->tag the key of
 * that name (else key file_name), want->sha256 the bytes of that
 * SHA-256 (among all keys when no tag is given); a version not there is K32_ERR_NOT_FOUND
 * whose message lists the keys the ConfigMap has.
 * @retval K32_ERR_NOT_FOUND   neither ConfigMap has it (err says where it looked)
 * @retval K32_ERR_NO_MEMORY   alloc refused; K32_ERR_CORRUPT bad base64
 * Context: the kubelet's worker only (a provider's start).
 */
k32_status_t klet_module_fetch(struct klet_pod *pod, const char *file_name,
			       const struct klet_image_ref *want, const struct k32_allocator *alloc,
			       uint8_t **out, size_t *out_len, const char **out_ns,
			       struct k32_err *err);
/*
 * Events (sdk/k32_klet.h k32_event). A provider marks a pod that takes packets from other
 * owners and threads (the Wasm provider: a module exporting k32_event, with its event port);
 * klet_events_kick then makes the run of every such started pod due now and wakes the
 * worker, so that a packet one pod caused (a channel write in a tick, an event or an HTTP
 * request) reaches the other pods' handlers at once rather than at their next poll
 * (K32_KLET_EVENT_POLL_MS). except (may be NULL) is left alone (the caller's own pod).
 * Any thread; take `lock` briefly (callable with the run lock held).
 */
void klet_pod_set_events(struct klet_pod *pod, bool on);
void klet_events_kick(struct klet *k, const struct klet_pod *except);
/* Counts event handler calls: delivered, and those that ran out of budget (the packet was
 * dropped); /stats reports them per pod. Any thread; takes `lock`. */
void klet_pod_events_count(struct klet_pod *pod, uint32_t delivered, uint32_t over_budget);

/*
 * Interruption (docs/node-tasks.md). The pod's stop word: KLET_STOP_* set by the watch task
 * (deletion) or klet_stop (shutdown), read by the pod's running call at its check points
 * (the Wasm provider makes it the stop of its struct wrt_watch). Valid as long as the pod.
 */
const _Atomic uint32_t *klet_pod_stop_word(struct klet_pod *pod);
/*
 * Sleeps until the monotonic time until_us or until the pod's stop word is set, whichever
 * comes first; returns the stop word (KLET_STOP_NONE: it slept to until_us). A provider's
 * host function calls it (k32_sleep_ms), inside a provider call.
 */
uint32_t klet_pod_sleep(struct klet_pod *pod, uint64_t until_us);

/* The node's pod pool: bytes in use and its size (for messages). */
void klet_pool_usage(struct klet *k, size_t *out_used, size_t *out_limit);

/* ---- the Wasm provider (klet_wasm.c) ------------------------------------------------------- */

/*
 * The provider that runs pods as Wasm modules: image "NAME[.wasm][:TAG]" (any registry/path
 * prefix ignored) is the file <image_dir>/NAME.wasm, else the cluster's module store
 * (klet_module_fetch: ConfigMap NAME.wasm). Links the kobj kx_* functions, the
 * kubelet's "kube32" functions (k32_log, k32_time_us, k32_time_ms, k32_sleep_ms, the HTTP
 * calls of sdk/k32_klet.h), the extra tables of the config, and a WASI subset
 * (wasi_snapshot_preview1: fd_write to the log, proc_exit, clock_time_get, random_get,
 * args_* and environ_* empty). Calls k32_init, then k32_tick on its schedule and k32_event
 * for each packet of the pod's event port (sdk/k32_klet.h); a module with only `_start` runs
 * it to completion. ctx is NULL.
 */
extern const struct klet_provider_ops klet_wasm_provider;

/* An image reference's parts: the module file NAME.wasm, and the version it asks for. */
struct klet_image_ref {
	char file[K32_HTTP_PATH_LEN]; /* "NAME.wasm" (registry path dropped) */
	char tag[129];		      /* ":TAG", or "" */
	char sha256[65];	      /* "@sha256:HEX" as 64 hex digits, or "" */
};

/* Parses "[registry/path/]NAME[.wasm][:TAG][@sha256:HEX]". K32_ERR_INVALID_ARGS for a NAME
 * that is not A-Z a-z 0-9 _ . - from a letter or digit to one, "..", a bad tag (A-Z a-z 0-9
 * _ . -, at most 128) or a digest that is not 64 hex. */
k32_status_t klet_image_ref_parse(const char *image, struct klet_image_ref *out,
				  struct k32_err *err);

/* Resolves an image name to its module file's path under dir ("DIR/NAME.wasm"), parsed by
 * klet_image_ref_parse (so K32_ERR_INVALID_ARGS for what it refuses, or a path over cap). */
k32_status_t klet_image_path(const char *dir, const char *image, char *out, size_t cap,
			     struct k32_err *err);
/* The path of a parsed reference's module file under dir. */
k32_status_t klet_image_file_path(const char *dir, const struct klet_image_ref *ref, char *out,
				  size_t cap, struct k32_err *err);

#endif /* KLET_H */
