/*
 * ctrl.h - the scheduler and the controllers of the kube32 control plane.
 *
 * One struct ctrl runs, on one platform task ("k32-ctrl"), the scheduler and the
 * controllers: ReplicaSet, Deployment (through ReplicaSets), DaemonSet, Job, node lifecycle
 * (Lease heartbeats), garbage collector (ownerReferences), namespace finalisation and the
 * kube32.io Device controller. They are clients of the API through the client interface
 * (src/kclient): in the control plane's process over the API server's in-process entry
 * points, or from another process over HTTPS (kube32-server --controllers-only), and every
 * read and write passes authentication, validation, defaulting and admission. They never
 * see the store. docs/controllers.md says what each one does and how it differs from
 * Kubernetes.
 *
 * Informers: ctrl_start starts one task per kind the enabled controllers read (pods, nodes,
 * replicasets, deployments, daemonsets, jobs, namespaces, devices), each keeping a
 * watch-fed cache of that kind (list, then watch from its resourceVersion; relist on 410).
 * Passes read those kinds from the caches (by namespace, or by node for a node's pods)
 * instead of listing the API; Leases, Events and single objects are still read from the
 * API. A change marks the controllers that read that kind dirty and wakes the task, which
 * runs a pass of each dirty controller. A Node update that changes only heartbeat times
 * triggers nothing. Without a change each controller still runs every
 * resync_s (30 s), the scheduler every sched_resync_s (5 min: a pod that fits nowhere is
 * retried only after a pod or node change or then), node lifecycle every node_monitor_s.
 * A pass acts on at most K32_CTRL_BATCH objects; when it had more it stays dirty and runs
 * again on the next loop turn, after the other controllers had theirs.
 *
 * What a node advertises and a pod asks for (the scheduler's inputs beyond Kubernetes):
 *   - memory: the pod's need is K32_CTRL_POD_OVERHEAD_BYTES (code, interpreter stack and
 *     runtime tables) plus, per container, resources.limits.memory (else
 *     resources.requests.memory, else K32_POD_MEM_DEFAULT, what the kubelet gives a pod
 *     without a limit), a Kubernetes quantity ("24Ki", "1Mi", "64k", "1M", "4096"). The node offers
 * status.allocatable.memory (else status.capacity.memory; absent: unlimited) minus the needs of the
 * non-terminal pods already bound to it.
 *   - pods: status.allocatable.pods (else capacity.pods; absent: 110).
 *   - hardware: a pod asks with the annotation (or label) "kube32.io/hardware", a comma
 *     list of items "<bus>:<model>" or "<bus>" (e.g. "i2c:bme688", "i2c"); "none" or empty
 *     asks nothing. Label values may not hold ':' so in a label write "i2c.bme688" (the first
 *     '.' or '_' is read as ':'). A node has the items of its annotation "kube32.io/hardware"
 *     (same syntax, e.g. "i2c:bme688,i2c:miniscale,i2c:rfid") plus "i2c:<model>" for each
 *     kube32.io Device whose spec.node names it. A pod item "i2c" is met by any "i2c:..." item.
 *   - readiness: a node whose Ready condition is False or Unknown counts as tainted
 *     node.kubernetes.io/not-ready:NoSchedule; a node with no Ready condition yet counts as
 *     ready (the node lifecycle controller marks it Unknown if no Lease arrives within
 *     node_grace_s). spec.unschedulable counts as the taint
 *     node.kubernetes.io/unschedulable:NoSchedule (DaemonSet pods tolerate it).
 *
 * Heartbeats: a kubelet renews Lease kube-node-lease/<node name> (spec.renewTime) as in
 * Kubernetes. The controller remembers, per node, when it last saw the lease's renewTime or
 * the node's Ready lastHeartbeatTime change (on its own clock, so boards' clocks may drift);
 * silent for node_grace_s -> Ready=Unknown + taints node.kubernetes.io/unreachable
 * (NoSchedule, NoExecute); pods there that do not tolerate it are deleted (grace 0: the
 * kubelet cannot confirm) pod_eviction_s later and their controllers recreate them.
 *
 * Context: ctrl_start/ctrl_stop from one thread (the one that owns the client).
 * ctrl_run_once and ctrl_kick from any thread. Memory: from the default allocator through
 * cJSON and k32_buf; between passes the informers' caches (every object of the cached
 * kinds, parsed; at most K32_CTRL_CACHE_MAX_OBJECTS per kind) with their indexes, per-node
 * tables grown with the nodes up to cfg.max_nodes, and the back-off table.
 */
#ifndef CTRL_H
#define CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_status.h"
#include "k32/k32_config.h"
#include "kclient/kclient.h"

struct ctrl;

/* One bit per controller (ctrl_config.enable, ctrl_run_once's mask). */
enum ctrl_kind {
	CTRL_SCHEDULER = 1u << 0,
	CTRL_REPLICASET = 1u << 1,
	CTRL_DEPLOYMENT = 1u << 2,
	CTRL_DAEMONSET = 1u << 3,
	CTRL_JOB = 1u << 4,
	CTRL_NODE_LIFECYCLE = 1u << 5,
	CTRL_GC = 1u << 6,
	CTRL_NAMESPACE = 1u << 7,
	CTRL_DEVICE = 1u << 8, /* kube32.io Devices: driver pods, Stale, conflicts */
	CTRL_CRONJOB = 1u << 9,
	CTRL_ENDPOINTS = 1u << 10, /* Services' Endpoints and EndpointSlices (ctrl_endpoints.c) */
	CTRL_ALL = 0x7ffu,
};

/* Clock functions a test can replace (ctx = ctrl_config.clock_ctx). */
typedef uint64_t (*ctrl_clock_fn)(void *ctx);

/* Every field may be left 0/NULL for its default. */
struct ctrl_config {
	uint32_t enable;	 /* CTRL_* bits to run; 0: CTRL_ALL */
	bool no_task;		 /* true: start no task and no informers (passes list the API);
				  * the caller drives passes with ctrl_run_once (tests) */
	uint32_t resync_s;	 /* 0: K32_CTRL_RESYNC_S (30) */
	uint32_t sched_resync_s; /* 0: K32_CTRL_SCHED_RESYNC_S (300) */
	uint32_t node_monitor_s; /* 0: K32_CTRL_NODE_MONITOR_S (5) */
	uint32_t node_grace_s;	 /* lease silence before NotReady; 0: K32_CTRL_NODE_GRACE_S (40) */
	uint32_t pod_eviction_s; /* NotReady to eviction; 0: K32_CTRL_POD_EVICTION_S (30);
				  * UINT32_MAX: never evict */
	ctrl_clock_fn now_us;	 /* monotonic microseconds; NULL: k32_now_us */
	ctrl_clock_fn wall_s;	 /* UTC seconds (condition times, minReadySeconds); NULL: the
				  * platform's wall clock */
	void *clock_ctx;	 /* passed to now_us and wall_s */
	bool no_cache;		 /* passes list through the API even when the informers'
				  * caches could answer (they still ring the doorbell): what
				  * the controllers did before the caches (ctrl-scale-bench) */
	size_t task_stack_bytes; /* stack of task k32-ctrl; 0: the platform default (an
				  * ESP32 port wants ~12 KiB: list pages are parsed on it) */
	uint32_t max_nodes;	 /* nodes node lifecycle and the scheduler's per-node sums
				  * track (tables grow with the nodes up to it); 0:
				  * K32_CTRL_MAX_NODES (4,096 on a host, 64 on a board) */
};

/* Counters since ctrl_start (any thread may read them through ctrl_get_stats). */
struct ctrl_stats {
	uint64_t passes;	      /* controller passes run */
	uint64_t writes;	      /* API writes made (create, update, patch, delete, binding) */
	uint64_t write_errors;	      /* API writes answered with an error (retried next pass) */
	uint64_t bound;		      /* pods bound by the scheduler */
	uint64_t unschedulable;	      /* scheduling attempts that found no node */
	uint64_t evicted;	      /* pods deleted by node lifecycle */
	uint64_t watch_restarts;      /* informer watches restarted with a relist */
	uint64_t device_pods_created; /* driver pods created by the Device controller */
	uint64_t last_pass_us;	      /* monotonic time of the last pass */
	uint64_t pass_cpu_us[11];     /* CPU time spent in passes, per controller (bit index of
				       * enum ctrl_kind: [0] scheduler ... [9] CronJob, [10]
				       * endpoints) */
	uint64_t cache_lags;	      /* cache reads that waited K32_CTRL_CACHE_WAIT_MS for the
				       * controllers' own writes and went to the API instead */
};

/*
 * Creates the controllers and, unless cfg->no_task, starts their informers and task
 * "k32-ctrl", which runs a first pass of every enabled controller at once (reading through
 * the API until the caches have their first list).
 * client: how they reach the API (kclient_inproc_new or kclient_http_new; not owned; must
 * outlive ctrl_stop). It should carry the admin identity.
 * @retval K32_OK               *out is the running control plane
 * @retval K32_ERR_INVALID_ARGS client or out NULL
 * @retval K32_ERR_NO_MEMORY    allocation failed (nothing left allocated)
 * @retval K32_ERR_NO_RESOURCES no task slot (K32_PLAT_MAX_TASKS)
 * Context: does not block on the API; may be called before the http server starts.
 */
k32_status_t ctrl_start(const struct ctrl_config *cfg, struct kclient *client, struct ctrl **out,
			struct k32_err *err);

/* Stops the task and the informers (waits for the pass in progress to end) and frees
 * everything. Call before freeing the client (and the API server behind it). NULL is
 * ignored. */
void ctrl_stop(struct ctrl *c);

/*
 * Runs one pass of each controller in mask (CTRL_* bits, intersected with cfg->enable), in
 * the order node lifecycle, Deployment, ReplicaSet, DaemonSet, Job, scheduler, GC,
 * namespace (so one call can go from a new Deployment to bound pods), in the caller's thread
 * (serialised with the task's passes). For tests and the CLI: drive the cluster without timers.
 * *out_more (may be NULL) is set true when a controller stopped at K32_CTRL_BATCH and has
 * more to do.
 * @retval K32_OK every pass ran (individual API failures are counted in write_errors and
 *         retried next pass, not returned)
 * @retval K32_ERR_* a pass could not read what it needs (err says which request)
 */
k32_status_t ctrl_run_once(struct ctrl *c, uint32_t mask, bool *out_more, struct k32_err *err);

/* Marks the controllers in mask dirty and wakes the task (e.g. after a bulk import). */
void ctrl_kick(struct ctrl *c, uint32_t mask);

/* Copies the counters. */
void ctrl_get_stats(struct ctrl *c, struct ctrl_stats *out);

#endif /* CTRL_H */
