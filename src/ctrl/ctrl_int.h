/*
 * ctrl_int.h - what the files of src/ctrl share: the struct ctrl, the API request helpers,
 * JSON/label/quantity/time helpers, and one pass function per controller.
 *
 * A pass runs with c->run_lock held (one pass at a time, whether from the task or from
 * ctrl_run_once). It reads through ctrl_get/ctrl_list and writes through ctrl_write, each
 * of which is an api_do. A pass spends one unit of c->budget per object it acts on; when
 * the budget is gone it sets c->more and returns, and runs again on the next turn.
 */
#ifndef CTRL_INT_H
#define CTRL_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_json.h"
#include "ctrl/ctrl.h"
#include "kclient/kclient.h"
#include "kmeta/kmeta.h"
#include "platform/k32_platform.h"

#define CTRL_COUNT	    11			     /* controllers (bits of enum ctrl_kind) */
#define CTRL_INFORMER_COUNT 10			     /* kinds cached and watched (ctrl_inform.c) */
#define CTRL_CONTINUE_LEN   (K32_STORE_KEY_MAX + 24) /* a list's continue token */
#define CTRL_NAME_LEN	    254			     /* DNS-1123 subdomain plus NUL */
#define CTRL_SCHEDULER_NAME "default-scheduler"
#define CTRL_QUEUES	    4 /* controllers with a work queue (ctrl_queue_of) */

/* Heartbeat memory for one node (node lifecycle). */
struct ctrl_node_health {
	char name[CTRL_NAME_LEN];
	char beat[80];		 /* last seen lease renewTime + Ready lastHeartbeatTime */
	uint64_t beat_us;	 /* ctrl clock when beat last changed */
	uint64_t unreachable_us; /* ctrl clock when marked unreachable; 0: reachable */
	bool seen;		 /* found in this pass (for forgetting deleted nodes) */
};

/* Tables sorted by name whose entries begin with char name[CTRL_NAME_LEN] (node
 * lifecycle's health table, the pods cache's per-node use): one binary search for both. */
_Static_assert(offsetof(struct ctrl_node_health, name) == 0, "ctrl_name_find needs name first");

/* The entry named name in table (count entries of size bytes, sorted by name); NULL when
 * absent. *at (may be NULL) gets the index where it is or would go. */
void *ctrl_name_find(const void *table, size_t count, size_t size, const char *name, size_t *at);

/* The entry named name, inserted zeroed (with its name) at its place when absent, growing
 * the table by doubling up to max entries (ctrl_zalloc). *created (may be NULL) says it was
 * inserted. NULL when name is too long, the table holds max entries, or out of memory. */
void *ctrl_name_slot(void **table, size_t *count, size_t *cap, size_t size, size_t max,
		     const char *name, bool *created);

/* An object the GC found with its owners gone, waiting K32_CTRL_GC_CONFIRM_S. */
struct ctrl_gc_suspect {
	char uid[40];
	uint64_t since_us; /* ctrl clock when first found; 0: free slot */
	bool seen;	   /* found again in this pass */
};

/* What one change event gave the GC or the namespace controller to look at (ctrl_gc_note). */
struct ctrl_gc_note {
	uint64_t at_us; /* look not before (ctrl clock); 0: free slot */
	uint8_t what;	/* CTRL_GC_NOTE_* (ctrl_gc.c) */
	uint8_t kind;	/* the object's row in ctrl_gc.c's kind table */
	char uid[40];
	char ns[64];
	char name[64];
};

/*
 * The informers' indexes (as client-go's Indexers): besides the cache itself, sorted by
 * (namespace, name) so a namespace is one range, each informer keeps these, so a pass
 * reaches the objects one change concerns without walking its whole kind:
 */
enum ctrl_index_kind {
	CTRL_IDX_KEY,	/* every kind: hash of "namespace/name" (the work queues' look-up) */
	CTRL_IDX_OWNER, /* every kind: uid of the controller ownerReference; the objects with
			 * no controller are indexed under "" (what an owner may adopt) */
	CTRL_IDX_NODE,	/* pods: spec.nodeName (bound pods only) */
	CTRL_IDX_LABEL, /* pods: the value of label kube32.io/device (driver pods only) */
	CTRL_IDX_COUNT,
};

/* One index entry: the hash of the object's key (FNV-1a) and the object. An index is an
 * array sorted by (hash, object pointer): a key is one binary-searched run, and a hash
 * collision is told apart by comparing the key itself. */
struct ctrl_index_ent {
	uint32_t h;
	cJSON *obj;
};

struct ctrl_index {
	struct ctrl_index_ent *e; /* cap entries (the informer's cap) */
	size_t n;
};

/* What the bound, non-terminal pods of one node use (the pods informer keeps these sums as
 * the pods change, so the scheduler does not add up every pod on every pass). */
struct ctrl_node_use {
	char name[CTRL_NAME_LEN];
	uint64_t mem; /* ctrl_pod_memory sum */
	uint32_t pods;
};
_Static_assert(offsetof(struct ctrl_node_use, name) == 0, "ctrl_name_find needs name first");

/* One watch-fed cache (ctrl_inform.c). objs is sorted by (namespace, name). */
struct ctrl_informer {
	struct ctrl *c;
	const char *prefix;   /* "/api/v1", "/apis/apps/v1" */
	const char *resource; /* "pods" */
	uint32_t mask;	      /* controllers this kind triggers */
	struct k32_task *task;
	struct k32_mutex lock; /* everything below */
	bool lock_ready;
	cJSON **objs;
	size_t n, cap;
	struct ctrl_index idx[CTRL_IDX_COUNT];
	/* pods only: the pending pods (unbound, not terminal; unordered) and the use of each
	 * node, sorted by name (at most cfg.max_nodes; past it use_full: the scheduler then
	 * adds up itself) */
	cJSON **pend;
	size_t pend_n;
	struct ctrl_node_use *use;
	size_t use_n, use_cap;
	bool use_full;
	bool synced;	     /* objs mirrors the server as of rv: ctrl_list may read it */
	char rv[32];	     /* last resourceVersion seen */
	uint64_t applied_rv; /* revision of the last event applied (or of the list) */
	uint64_t want_rv;    /* revision of the controllers' last write of this kind; under c->lock
			      * (writes also come from ctrl_list callbacks, which hold inf->lock) */
	struct k32_cond applied; /* signalled when applied_rv moves */
	char watch_target[256];	 /* the watch request's target (the informer task only) */
};

/* Objects a controller's next pass must reconcile (hashes of "ns/name"), as client-go's
 * work queue; full: every object (a resync, a relist, an orphan, an overflow). A full pass
 * from the cache goes in key-hash order; one cut short by its budget is resumed, not
 * restarted: resume (with full) means the objects whose hash is at least from, plus keys
 * (still collected meanwhile), so a cluster built 32 writes a pass costs each object once
 * instead of every object per pass. */
struct ctrl_queue {
	uint32_t keys[K32_CTRL_QUEUE_LEN];
	uint32_t n;
	bool full;
	bool resume;	 /* with full: only from (and keys) on */
	bool hash_order; /* pass_q only: the pass's list came in key-hash order */
	uint32_t from;
};

/* A work item backing off after a failed write (ctrl_item_begin/end), as an entry of
 * client-go's rate-limited work queue. */
struct ctrl_backoff {
	uint64_t at_us;	   /* retry not before (ctrl clock); 0: free slot */
	uint32_t bit;	   /* its controller (CTRL_*) */
	uint32_t key;	   /* ctrl_key_hash of its object (whole: unused) */
	uint32_t failures; /* in a row: the delay is K32_CTRL_BACKOFF_INITIAL_MS << (failures-1) */
	bool whole;	   /* the controller's whole pass (no item, or the table was full) */
	bool fired;	   /* at_us passed and the item was queued: waiting for its attempt */
};

struct ctrl {
	struct ctrl_config cfg;	   /* defaults filled in */
	struct kclient *kc;	   /* not owned */
	struct k32_task *task;	   /* NULL with no_task */
	struct k32_mutex lock;	   /* dirty, stop, stats, series */
	struct k32_cond cond;	   /* wakes the task */
	struct k32_mutex run_lock; /* one pass at a time */
	uint32_t dirty;		   /* CTRL_* bits with work */
	uint32_t full;		   /* CTRL_* bits whose next pass reconciles everything */
	struct ctrl_queue queue[CTRL_QUEUES]; /* ReplicaSet, Deployment, DaemonSet, Job: filled
					       * by the informers and ended back-offs */
	struct ctrl_queue pass_q;	      /* the queue the current pass works from */
	bool stop;			      /* ctrl_stop asked */
	atomic_bool inf_stop;		      /* informers: stop */
	uint64_t due_us[CTRL_COUNT];	      /* next periodic pass per controller (ctrl clock) */
	struct ctrl_informer inf[CTRL_INFORMER_COUNT];
	struct ctrl_stats stats;
	struct ctrl_node_health *nodes; /* node lifecycle's table, sorted by name, grown up to
					 * cfg.max_nodes (nodes_cap entries) */
	size_t nodes_n, nodes_cap;
	uint32_t nodes_unmonitored; /* nodes past cfg.max_nodes in the last pass */
	uint64_t nodes_cap_log_us;  /* last WARN about them */
	struct ctrl_gc_suspect gc_suspects[K32_CTRL_BATCH];
	/* the GC's and the namespace controller's change events (c->lock) and their walks:
	 * [0] GC, [1] namespaces (ctrl_gc.c) */
	struct ctrl_gc_note gc_notes[K32_CTRL_GC_NOTES];
	uint32_t gc_notes_over;	 /* CTRL_GC / CTRL_NAMESPACE: a note was lost: walk */
	uint64_t gc_walk_us[2];	 /* last whole walk (ctrl clock) */
	uint64_t gc_restarts[2]; /* stats.watch_restarts at that walk */
	bool gc_walked[2];	 /* a whole walk finished since ctrl_start */
	struct kmeta_event_series series[K32_CTRL_EVENT_SERIES]; /* Events to count up (lock) */
	uint64_t events_sweep_us; /* last sweep of expired Events (ctrl clock) */
	bool events_swept;	  /* a sweep ran (the first Event made sweeps at once) */
	struct ctrl_backoff backoff[K32_CTRL_BACKOFF_ITEMS]; /* under c->lock */
	uint32_t pass_bit;	    /* the controller whose pass runs (run_lock held) */
	uint32_t item_key;	    /* ctrl_item_begin's object */
	bool item_begun;	    /* ctrl_item_begin succeeded in this pass (item_key valid) */
	bool item_active;	    /* between ctrl_item_begin and ctrl_item_end */
	bool item_failed;	    /* a write of the current item failed */
	bool pass_failed;	    /* a write outside any item failed in this pass */
	uint64_t orphan_scan_us;    /* node lifecycle: last scan for pods of deleted nodes */
	uint64_t requeue_us;	    /* the current pass wants to run again by then (0: no) */
	uint32_t budget;	    /* actions left in the current pass */
	bool more;		    /* the current pass stopped at the budget */
	struct k32_err perr;	    /* first read failure of the current pass */
	struct ctrl_schedq *schedq; /* the scheduler's pending pods (NULL until one) */
	uint32_t sched_fp;	    /* fingerprint of nodes and their room after the last pass */
	cJSON *sched_nodes;	    /* the scheduler's copy of the nodes (kept between passes) */
	uint32_t sched_pass;	    /* scheduler passes so far (marks entries seen) */
	uint64_t sched_full_log_us; /* last warning that the queue was full */
};

/* ---- the scheduling queue (ctrl_schedq.c) ---------------------------------------------- */

/* What the scheduler remembers of one pending pod. */
struct ctrl_schedq_ent {
	uint64_t key;	    /* ctrl_schedq_key(uid); 0: free slot */
	uint64_t tried_us;  /* last attempt (ctrl clock; 0: never tried) */
	uint64_t retry_us;  /* backoff: not tried again before this */
	uint64_t parked_us; /* when it last failed (0: active) */
	uint64_t event_us;  /* when its FailedScheduling event was last written */
	uint32_t attempts;  /* failed attempts in a row */
	uint32_t fp;	    /* the cluster's fingerprint when it failed */
	uint32_t msg_hash;  /* CRC-32 of the last FailedScheduling message written */
	uint32_t seen;	    /* the scheduler pass that last saw the pod pending */
};
struct ctrl_schedq;

uint64_t ctrl_schedq_key(const char *uid);
/* The entry of key; with create, a new zeroed one when absent (NULL when the queue holds
 * K32_CTRL_SCHED_QUEUE_MAX pods or memory is out). *qp is allocated on first use. */
struct ctrl_schedq_ent *ctrl_schedq_find(struct ctrl_schedq **qp, uint64_t key, bool create);
void ctrl_schedq_remove(struct ctrl_schedq *q, uint64_t key);
/* Drops every entry not seen in pass (its pod was bound, deleted or finished). */
void ctrl_schedq_sweep(struct ctrl_schedq *q, uint32_t pass);
void ctrl_schedq_each(struct ctrl_schedq *q, void (*fn)(struct ctrl_schedq_ent *e, void *ctx),
		      void *ctx);
uint32_t ctrl_schedq_count(const struct ctrl_schedq *q);
void ctrl_schedq_free(struct ctrl_schedq *q);

/* ---- memory (the default allocator; every size is passed back on free) ---------------- */

static inline void *ctrl_zalloc(size_t len)
{
	return k32_calloc(k32_default_allocator(), len);
}

static inline void ctrl_free(void *p, size_t len)
{
	if (p)
		k32_free(k32_default_allocator(), p, len);
}

/* ---- clock ---------------------------------------------------------------------------- */

uint64_t ctrl_now_us(struct ctrl *c);
uint64_t ctrl_wall_s(struct ctrl *c);
/* RFC 3339 UTC "2006-01-02T15:04:05Z" (buf >= 32). */
void ctrl_fmt_time(uint64_t s, char *buf, size_t cap);
/* Parses RFC 3339 (fractions and Z/offset accepted); false if malformed. */
bool ctrl_parse_time(const char *s, uint64_t *out_s);

/* ---- API requests ------------------------------------------------------------------- */

/*
 * One api_do. body may be NULL. *out_code gets the HTTP status; *out (may be NULL) the
 * parsed answer (cJSON_Delete it). Returns K32_OK whenever the API answered (check the
 * code), an error only when the request could not be made or the answer not parsed.
 */
k32_status_t ctrl_do(struct ctrl *c, const char *method, const char *target, const char *ctype,
		     const char *body, int *out_code, cJSON **out, struct k32_err *err);

/* GET target: K32_OK with *out on 200; NOT_FOUND on 404; another error otherwise. */
k32_status_t ctrl_get(struct ctrl *c, const char *target, cJSON **out, struct k32_err *err);

/*
 * A write (POST/PUT/PATCH/DELETE) with a JSON body (may be NULL), counted in the stats
 * (the caller charges the pass budget with ctrl_charge first). Returns the HTTP code (0
 * when the request failed). Answers >= 400, except 404 to a DELETE, are counted in
 * write_errors, logged at WARN, and back off the current work item (ctrl_item_begin) or,
 * outside one, the controller's whole pass: retried after K32_CTRL_BACKOFF_INITIAL_MS,
 * doubling per failure in a row up to K32_CTRL_BACKOFF_MAX_MS, never at once.
 */
int ctrl_write(struct ctrl *c, const char *method, const char *target, const char *ctype,
	       const cJSON *body, cJSON **out);

/* Called per item of a list; return false to stop listing. item is owned by the list. */
typedef bool (*ctrl_item_fn)(struct ctrl *c, cJSON *item, void *ctx);

/* Lists path (may carry a query, e.g. a fieldSelector) page by page (K32_CTRL_LIST_PAGE), calling
 * fn per item. Records a failure in c->perr and returns it. */
k32_status_t ctrl_list(struct ctrl *c, const char *path, ctrl_item_fn fn, void *ctx);

/* Lists path into a new array (detached items), optionally only the objects whose
 * controller ownerReference has uid owner_uid (NULL: all). NULL on failure (c->perr). */
cJSON *ctrl_list_array(struct ctrl *c, const char *path, const char *owner_uid);

/* The controller's work for this pass from path (the list of its kind): every object on a
 * full pass, else only those queued by change events. NULL on failure (c->perr). */
cJSON *ctrl_list_work(struct ctrl *c, const char *path);
/* Queues ns/name for the next pass of controller bit (CTRL_REPLICASET, CTRL_DEPLOYMENT,
 * CTRL_DAEMONSET or CTRL_JOB; others ignore it; name NULL: a full pass). Any thread. */
void ctrl_enqueue(struct ctrl *c, uint32_t bit, const char *ns, const char *name);
/* Takes the queue of bit for the pass about to run (full when want_full); run_lock held. */
void ctrl_queue_take(struct ctrl *c, uint32_t bit, bool want_full);
/* After a pass of bit cut short by its budget: queues what it did not reach (a full pass
 * resumes at the last item begun; a queued one keeps its keys from that item on); a full
 * pass when the list had no key-hash order. run_lock held. */
void ctrl_requeue_rest(struct ctrl *c, uint32_t bit);

/* ctrl_list_array of the objects controlled by owner_uid plus those with no controller (what
 * an owner may adopt), NULL on failure (c->perr). */
cJSON *ctrl_list_claimable(struct ctrl *c, const char *path, const char *owner_uid);

/*
 * Work items and their back-off (client-go's rate-limited work queue). A pass brackets its
 * work on one object with ctrl_item_begin / ctrl_item_end:
 *     if (!ctrl_item_begin(c, obj)) continue;   (backing off: its retry brings it back)
 *     ... reconcile obj, ctrl_write ...
 *     ctrl_item_end(c);                         (a failed write arms the back-off, none
 *                                                forgets it)
 * When the back-off ends the object is queued for its controller (ctrl_enqueue) and the
 * controller woken. A change event does not cut a back-off short. Writes outside an item
 * back off the controller's whole pass (ctrl_run_mask skips it until then).
 */
bool ctrl_item_begin(struct ctrl *c, const cJSON *obj);
void ctrl_item_end(struct ctrl *c);
/* The earliest back-off end not yet fired (UINT64_MAX: none); fires the ended ones:
 * queues their objects and returns their controllers in *out_dirty (and in *out_full the
 * ones with a whole-pass back-off). c->lock held. */
uint64_t ctrl_backoff_fire(struct ctrl *c, uint64_t now, uint32_t *out_dirty, uint32_t *out_full);
/* True when controller bit's whole pass is backing off at now (the pass is skipped). */
bool ctrl_backoff_pass_blocked(struct ctrl *c, uint32_t bit, uint64_t now);
/* After a pass of bit: arms (a write outside an item failed) or forgets its whole-pass
 * back-off. */
void ctrl_backoff_pass_done(struct ctrl *c, uint32_t bit);
/* Queues object hash key for controller bit (as ctrl_enqueue). c->lock held. */
void ctrl_enqueue_key_locked(struct ctrl *c, uint32_t bit, uint32_t key);

/* Asks for the current controller to run again within s seconds (a back-off expiring). */
void ctrl_requeue(struct ctrl *c, uint64_t s);

/* True when the pass may act on one more object (and charges it); false sets c->more. */
bool ctrl_charge(struct ctrl *c);

/* ---- JSON helpers -------------------------------------------------------------------- */

const char *ctrl_jstr(const cJSON *o, const char *path); /* string or NULL */
/* The string value of key in a labels/annotations map (keys hold dots: no path split). */
const char *ctrl_label(const cJSON *map, const char *key);
int64_t ctrl_jint(const cJSON *o, const char *path, int64_t dflt);
/* The uid of o's ownerReference with controller=true, or NULL. */
const char *ctrl_controller_uid(const cJSON *o);
/* A new ownerReferences array holding one controller reference to owner. */
cJSON *ctrl_owner_ref(const cJSON *owner, const char *api_version, const char *kind);
/* The condition of type in conds (an array), or NULL. */
cJSON *ctrl_cond_find(const cJSON *conds, const char *type);
/* Status string of condition type in o.status.conditions ("True"/...), or NULL. */
const char *ctrl_cond_status(const cJSON *o, const char *type);
/*
 * Sets condition type in array conds (created in status if absent) to st/reason/msg, keeping
 * lastTransitionTime when the status does not change. with_update adds lastUpdateTime
 * (Deployment style). Returns true when anything changed.
 */
bool ctrl_cond_set(struct ctrl *c, cJSON *status, const char *type, const char *st,
		   const char *reason, const char *msg, bool with_update);
/* True when a pod is Ready (condition Ready True) and not being deleted. */
bool ctrl_pod_ready(const cJSON *pod);
/* True when pod phase is Succeeded or Failed. */
bool ctrl_pod_terminal(const cJSON *pod);
/* True when o has metadata.deletionTimestamp. */
bool ctrl_deleting(const cJSON *o);
/* Pod's memory need in bytes: K32_CTRL_POD_OVERHEAD_BYTES plus, per container,
 * limits.memory, else requests.memory, else K32_POD_MEM_DEFAULT (kmeta_container_memory). */
uint64_t ctrl_pod_memory(const cJSON *pod);
/* Sorts a JSON array in place by metadata.creationTimestamp then name (oldest first). */
void ctrl_sort_by_age(cJSON *arr);
/* CRC-32 of the unformatted JSON of o, as 8..10 lowercase base-36-ish chars (out >= 16). */
void ctrl_hash_json(const cJSON *o, char *out, size_t cap);
/* Percent-encodes s into out (query values). */
void ctrl_url_encode(const char *s, char *out, size_t cap);

/* ---- quantities, labels, taints ---------------------------------------------------- */

/* LabelSelector {matchLabels, matchExpressions} against labels; NULL selector matches
 * nothing (as an RS with no selector selects nothing). */
bool ctrl_selector_matches(const cJSON *selector, const cJSON *labels);
/* A NodeSelectorTerm's matchExpressions/matchFields against a node. */
bool ctrl_node_term_matches(const cJSON *term, const cJSON *node);
/* nodeSelector and required node affinity of pod spec against node. */
bool ctrl_node_affinity_matches(const cJSON *spec, const cJSON *node);
/* True when tolerations (array) tolerate taint {key, value, effect}. */
bool ctrl_tolerates(const cJSON *tolerations, const char *key, const char *value,
		    const char *effect);
/* The hardware items of a request/offer string; see ctrl.h. True when every item of
 * want is met by have (comma lists). */
bool ctrl_hardware_met(const char *want, const char *have, char *missing, size_t cap);

/* True when a Node changed more than heartbeat times (lastHeartbeatTime,
 * resourceVersion): only those mark the node readers dirty. prev NULL: new. */
bool ctrl_node_changed(const cJSON *obj, const cJSON *prev);
/* True when a Pod change can change what the scheduler decides: a pending pod added or
 * changed, a bound pod that finished (Succeeded/Failed), a pod deleted (obj NULL). Status
 * updates of running pods are not (they would re-run every unschedulable pod for nothing). */
bool ctrl_pod_sched_relevant(const cJSON *obj, const cJSON *prev);

/* ---- informers (ctrl_inform.c) ------------------------------------------------------ */

/* Starts one task per cached kind that an enabled controller reads. */
k32_status_t ctrl_informers_start(struct ctrl *c, struct k32_err *err);
/* Stops the tasks (within K32_KCLIENT_WATCH_TICK_MS) and frees the caches. */
void ctrl_informers_stop(struct ctrl *c);
/* Serves a list from the cache: calls fn per object (under the cache's lock: fn must not
 * keep or change item, nor list the same kind). -1 when no synced cache can answer path
 * (the caller then asks the API). */
int ctrl_cache_list(struct ctrl *c, const char *path, ctrl_item_fn fn, void *ctx);

/* ctrl_cache_list of the objects at path (a collection, no query) controlled by owner_uid,
 * plus those with no controller when orphans, through the owner index. -1: ask the API. */
int ctrl_cache_list_owned(struct ctrl *c, const char *path, const char *owner_uid, bool orphans,
			  ctrl_item_fn fn, void *ctx);

/*
 * Calls fn per cached object at path (a collection: ".../pods" or ".../namespaces/NS/pods";
 * no query) whose key in index k is key: CTRL_IDX_OWNER with a controller uid ("" for the
 * objects with no controller), CTRL_IDX_NODE with a node name, CTRL_IDX_LABEL with a
 * kube32.io/device value; key NULL: every object the index holds (e.g. every driver pod).
 * Under the cache's lock, as ctrl_cache_list. Costs the objects found plus a binary
 * search, whatever the size of the kind. -1: no synced cache holds that
 * index for path (the caller asks the API, e.g. ctrl_list with a selector).
 * Example (the pods of node n1): ctrl_cache_index(c, "/api/v1/pods", CTRL_IDX_NODE, "n1",
 * fn, ctx). A kind gets an informer by a row in ctrl_inf_defs (ctrl_inform.c).
 */
int ctrl_cache_index(struct ctrl *c, const char *path, enum ctrl_index_kind k, const char *key,
		     ctrl_item_fn fn, void *ctx);

/* ctrl_cache_list of the objects at path whose ctrl_key_hash(namespace, name) is one of
 * hashes (count of them; a hash collision may add an object). -1: ask the API. */
int ctrl_cache_keys(struct ctrl *c, const char *path, const uint32_t *hashes, size_t count,
		    ctrl_item_fn fn, void *ctx);

/* After a successful write to target (answer ans): reads of that kind's cache wait until
 * the cache holds the answer's resourceVersion, so a pass never acts on a cache older than
 * its own writes (a ReplicaSet counting its pods before its creates arrived would create
 * them again). Up to K32_CTRL_CACHE_WAIT_MS; then that read goes to the API. */
void ctrl_cache_note_write(struct ctrl *c, const char *target, const cJSON *ans);

/* ctrl_cache_keys in key-hash order over the hashes below from (sorted ascending), then
 * every object whose hash is from or more (from 0: every object of path). -1: ask the API. */
int ctrl_cache_keys_from(struct ctrl *c, const char *path, const uint32_t *sorted, size_t count,
			 uint32_t from, ctrl_item_fn fn, void *ctx);

/* The work queues' key of an object: FNV-1a of "namespace/name" (ns NULL: ""). */
uint32_t ctrl_key_hash(const char *ns, const char *name);

/* Pending pods (unbound, not terminal) in the pods cache; -1 when no synced cache. */
int ctrl_cache_pending(struct ctrl *c);

/* The scheduler's inputs from the pods cache: usage(ctx, node, mem, pods) per node with
 * bound pods, then fn per pending pod (lock held, as ctrl_cache_list). -1: list the pods. */
int ctrl_cache_sched(struct ctrl *c,
		     void (*usage)(void *ctx, const char *node, uint64_t mem, uint32_t pods),
		     ctrl_item_fn fn, void *ctx);

/* The uid of the object at path (".../namespaces/NS/RESOURCE/NAME" or ".../RESOURCE/NAME")
 * from the cache: 1 found (uid copied, cap >= 40), 0 absent from a synced cache, -1 no
 * cache can answer (ask the API). */
int ctrl_cache_uid(struct ctrl *c, const char *path, char *uid, size_t cap);

/* ---- events ------------------------------------------------------------------------- */

/* The object an Event is about. */
struct ctrl_event_ref {
	const char *api_version; /* "v1", "apps/v1" */
	const char *kind;	 /* "Pod" */
	const char *ns;		 /* "" for cluster-scoped */
	const char *name;
	const char *uid; /* may be NULL */
};

/* Records a core/v1 Event through the client; a repeat within K32_API_EVENT_SERIES_S of
 * the same (object, type, reason, message) counts up the existing one. */
k32_status_t ctrl_event_record(struct ctrl *c, const struct ctrl_event_ref *ref, const char *type,
			       const char *reason, const char *msg, const char *component,
			       struct k32_err *err);

/* ---- passes (one per controller; run with run_lock held) --------------------------- */

void ctrl_sched_pass(struct ctrl *c);
void ctrl_rs_pass(struct ctrl *c);
void ctrl_deploy_pass(struct ctrl *c);
void ctrl_ds_pass(struct ctrl *c);
void ctrl_job_pass(struct ctrl *c);
/* ctrl_revision.c: the DaemonSet's ControllerRevision for its current template (created, or
 * an earlier one renumbered as the newest after an undo; history trimmed to
 * spec.revisionHistoryLimit); its controller-revision-hash into hash (the template's own hash
 * when the revisions cannot be read: false). */
bool ctrl_ds_revision(struct ctrl *c, const cJSON *ds, char *hash, size_t cap);
/* ctrl_cron.c */
void ctrl_cron_pass(struct ctrl *c);
void ctrl_node_pass(struct ctrl *c);
/* Frees node lifecycle's table (ctrl_stop). */
void ctrl_node_fini(struct ctrl *c);
/* Frees the scheduler's copy of the nodes (ctrl_stop). */
void ctrl_sched_fini(struct ctrl *c);
void ctrl_gc_pass(struct ctrl *c);
void ctrl_ns_pass(struct ctrl *c);
/* An informer's change event that concerns the GC or the namespace controller (resource:
 * the informer's, "replicasets"; obj the object now, or as it was when deleted). Any
 * informer task; takes c->lock. */
void ctrl_gc_note(struct ctrl *c, const char *resource, const cJSON *obj, bool deleted);
/* ctrl_dev.c */
void ctrl_dev_pass(struct ctrl *c);
/* ctrl_endpoints.c */
void ctrl_endpoints_pass(struct ctrl *c);

/* Merge-patches status fields want (an object) onto target (a /status path) when any
 * differs from obj's status (a missing number counts as 0); one budget unit. */
void ctrl_status_write(struct ctrl *c, const char *target, const cJSON *obj, cJSON *want);

/* Creates a pod from template tmpl (spec.template) in ns, named by generateName prefix, with
 * extra labels (object, may be NULL), owned by owner_refs (taken), and records
 * SuccessfulCreate on the owner. Returns the HTTP code. */
int ctrl_pod_create(struct ctrl *c, const char *ns, const char *prefix, const cJSON *tmpl,
		    const cJSON *extra_labels, cJSON *owner_refs, const cJSON *extra_spec);
/* Deletes a pod (grace < 0: the pod's own); owner_event records SuccessfulDelete on its
 * controller. Returns the HTTP code. */
int ctrl_pod_delete(struct ctrl *c, const cJSON *pod, int64_t grace, bool owner_event);
/* Records an event about obj (component "<kind>-controller"). */
void ctrl_obj_event(struct ctrl *c, const cJSON *obj, const char *api_version, const char *kind,
		    const char *type, const char *reason, const char *msg);
/* Records an event about the object an ownerReference names (component "<kind>-controller"). */
void ctrl_owner_event(struct ctrl *c, const char *ns, const cJSON *ref, const char *type,
		      const char *reason, const char *msg);

#endif /* CTRL_INT_H */
