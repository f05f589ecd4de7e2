/*
 * store.h - the revisioned object store of the control plane (kine's Backend, in C).
 *
 * What it holds: Kubernetes objects as JSON text, keyed
 *
 *     /<group>/<resource>/<namespace>/<name>      core group is "", cluster-scoped ns is ""
 *
 * e.g. "//pods/default/web-0", "/apps/deployments/default/web", "//nodes//node-1". The store
 * does not interpret the JSON. One global revision (uint64, starts at 0 for an empty store)
 * counts every successful write: each create, update or delete takes the next revision, and
 * that revision is the object's resourceVersion (its mod_rev). create_rev is the revision that
 * created the object (kept across updates).
 *
 * resourceVersion in the JSON: the store can write the new revision into the stored text
 * for you. Pass, in struct store_value, the byte offset where the decimal revision goes
 * (rv_off, typically just after `"resourceVersion":"` in the serialized metadata) and the
 * store inserts the digits there under its write lock, so the stored text, the log record,
 * the watch events and later reads all carry the right resourceVersion. Pass STORE_NO_STAMP
 * to store the bytes unchanged (the object's mod_rev is still reported).
 *
 * Versions are immutable, reference-counted blocks (struct store_obj). get, list and watch
 * hand out references, never copies: read obj->data without any lock, then drop it with
 * store_obj_unref(). The history ring, lists and all watchers share the same blocks.
 *
 * Watch: every write appends one event to a bounded history ring (K32_STORE_HISTORY_EVENTS
 * events and K32_STORE_HISTORY_BYTES bytes of old versions). A watcher is only a position in that
 * ring plus a prefix: events are not copied per watcher, so 500 watchers cost 500 * sizeof(watcher)
 * (~100 bytes). A watch that starts before the ring's oldest event, or a watcher that falls
 * more than K32_STORE_WATCH_QUEUE matching events behind, gets K32_ERR_COMPACTED: the API
 * answers 410 Gone (reason Expired) and the client relists. Writers never wait for watchers.
 * A watcher is woken through its notify callback (for a poll-driven HTTP server) and/or by
 * blocking in store_watch_next() with a deadline.
 *
 * Persistence (embedded backend, data_dir set): each write is appended to
 * <data_dir>/store.log as one CRC-32-framed record and fsynced before the call returns K32_OK.
 * When the log passes K32_STORE_LOG_ROTATE_BYTES the store writes <data_dir>/store.snap
 * atomically and starts a new log. Each log begins with its sequence number, and the snapshot
 * names the log it expects; a clean close records its revision in <data_dir>/store.closed.
 * On open it loads the snapshot and replays the log. A log that is missing, emptied,
 * replaced, or shorter than the last clean close is acknowledged writes lost: open refuses
 * (K32_ERR_CORRUPT, the message says what is missing) unless cfg.accept_log_loss is set. A
 * torn tail after a crash (not a clean close) is dropped with a k32_log WARN naming the
 * offset, the fault and the last revision known durable. The record format is documented in
 * store_wal.c. A failed append or fsync is not acknowledged and leaves memory unchanged.
 * Group commit: writers that arrive while an fsync runs append their records and wait; the
 * next fsync covers them all (at most K32_STORE_GROUP_MAX writes), so concurrent writers
 * share syncs and a write is still acknowledged, and seen by readers and watchers, only
 * after the fsync that covers it.
 *
 * How the API server uses it (Kubernetes semantics):
 *  - GET: store_get; resourceVersion = obj->mod_rev.
 *  - LIST: store_list with limit/continue (the token carries the first page's revision, so
 *    all pages are one snapshot); list.rev is the list's metadata.resourceVersion; the
 *    filter callback applies label/field selectors inside the store.
 *  - WATCH: list (or not), then store_watch_open(after_rev = list.rev or the client's
 *    resourceVersion); DELETED events carry the last version (set its resourceVersion to
 *    ev.rev when writing it out); MODIFIED carries prev so a selector watch can turn a
 *    change into ADDED/DELETED; BOOKMARK's resourceVersion = store_watch_progress().
 *    K32_ERR_COMPACTED at open or from next = 410 Gone/Expired.
 *  - PUT with metadata.resourceVersion: store_update(expect_rev = it) -> Conflict (409).
 *  - DELETE with preconditions.resourceVersion: store_delete(expect_rev).
 *
 * Backends: all calls go through struct store_backend_ops (bottom of this file), so an etcd
 * backend can follow. store_open() builds the embedded memory+log backend.
 *
 * Context: every function is thread-safe (platform mutexes) unless it says otherwise. Reads
 * are not blocked by another writer's fsync (writers serialise on a separate write lock).
 * No function here blocks except writes (fsync), store_watch_next with a deadline, and
 * store_open/close (file I/O). Memory: every byte comes from the allocator given to
 * store_open (wrapped in the store's own lock, so it need not be thread-safe).
 */
#ifndef STORE_H
#define STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_prom.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

struct store;	    /* an open store (front end over one backend); opaque */
struct store_watch; /* one watcher (a backend's struct starting with the ops pointer) */

/* Which object (or, for list and watch, which set of objects). Strings are NUL-terminated,
 * must not contain '/', and the whole key must fit in K32_STORE_KEY_MAX bytes. */
struct store_key {
	const char *group;    /* API group: "" for core, "apps", "kube32.io", ... */
	const char *resource; /* plural resource name: "pods", "nodes"; never empty */
	const char *ns;	      /* namespace; "" (or NULL) for cluster-scoped objects, and in
			       * list/watch for every namespace */
	const char *name;     /* object name; required by get/create/update/delete; ignored by
			       * list and watch */
};

/*
 * One immutable version of one object. Layout in memory: this header, then the key and a NUL,
 * then the value and a NUL (so data can go straight to cJSON_Parse). Fields are read-only for
 * callers; use store_obj_key()/store_obj_data(). Hold a reference while reading.
 */
struct store_obj {
	uint64_t create_rev; /* revision that created the object */
	uint64_t mod_rev;    /* revision of this version = its resourceVersion */
	atomic_uint refs;    /* internal: reference count */
	uint32_t len;	     /* bytes of the value (JSON text), NUL not counted */
	uint16_t key_len;    /* bytes of the key, NUL not counted */
	uint16_t flags;	     /* internal */
};

static inline const char *store_obj_key(const struct store_obj *obj)
{
	return (const char *)(obj + 1);
}

/* The JSON text: obj->len bytes followed by a NUL. */
static inline const char *store_obj_data(const struct store_obj *obj)
{
	return store_obj_key(obj) + obj->key_len + 1;
}

/* No revision stamping: store the value bytes as given. */
#define STORE_NO_STAMP SIZE_MAX

/* The value of a create or update. */
struct store_value {
	const void *data; /* the object's JSON text (need not be NUL-terminated) */
	size_t len;	  /* bytes of data; at most K32_STORE_VALUE_MAX (after stamping) */
	size_t rv_off;	  /* where to insert the decimal new revision (0..len), or STORE_NO_STAMP */
	bool essential;	  /* may use the reserve (K32_STORE_RESERVE_PCT of the byte and
			   * object limits): writes that keep the cluster alive or make room
			   * (the API marks Leases, node status and a DELETE's writes) */
};

/* ---- open and close ------------------------------------------------------------------- */

struct store_config {
	const char *data_dir;		   /* directory of store.log and store.snap (created if
					    * absent); NULL: memory only, nothing persists */
	const struct k32_allocator *alloc; /* every byte the store holds; NULL: the default heap */
	size_t log_rotate_bytes;	   /* 0: K32_STORE_LOG_ROTATE_BYTES */
	uint32_t history_events;	   /* 0: K32_STORE_HISTORY_EVENTS */
	size_t history_bytes;		   /* 0: K32_STORE_HISTORY_BYTES */
	uint32_t watch_queue;		   /* 0: K32_STORE_WATCH_QUEUE */
	uint32_t max_objects;		   /* 0: K32_STORE_MAX_OBJECTS */
	size_t max_bytes;		   /* 0: K32_STORE_MAX_BYTES (live object bytes) */
	bool accept_log_loss; /* open even when the log is missing, emptied, replaced or shorter
			       * than the last clean close (acknowledged writes lost): the
			       * store starts from what is left, logged as an error */
};

/*
 * Opens the embedded backend: loads <data_dir>/store.snap, replays <data_dir>/store.log,
 * drops a torn log tail left by a crash (k32_log WARN: offset, fault, bytes dropped) and
 * truncates the file there. History starts empty at the loaded revision.
 * @retval K32_OK               *out is the store
 * @retval K32_ERR_CORRUPT      the snapshot fails its checks, or the log is missing, emptied,
 *                              replaced or shorter than the last clean close (nothing is
 *                              dropped: the message names the file, what is missing, and
 *                              cfg.accept_log_loss)
 * @retval K32_ERR_IO           a file operation failed
 * @retval K32_ERR_NO_MEMORY    the allocator refused; nothing is left allocated
 * @retval K32_ERR_NO_RESOURCES the data on disk exceeds a K32_STORE_* limit (named)
 * @retval K32_ERR_INVALID_ARGS bad config
 * Context: blocks on file I/O. cfg may be freed after the call (data_dir is copied).
 */
k32_status_t store_open(const struct store_config *cfg, struct store **out, struct k32_err *err);

/* Closes the store and frees everything. Every watcher must be closed before; references
 * still held by callers stay valid until their store_obj_unref() only if the allocator
 * outlives them (drop them first). */
void store_close(struct store *st);

/* ---- reads ---------------------------------------------------------------------------- */

/* The current revision (the newest committed write; 0 for an empty, new store). */
uint64_t store_rev(struct store *st);

/*
 * Looks up one object. *out_obj gets a reference (drop it with store_obj_unref).
 * @retval K32_ERR_NOT_FOUND    no such key
 * @retval K32_ERR_INVALID_ARGS bad key (message says which part)
 */
k32_status_t store_get(struct store *st, const struct store_key *key, struct store_obj **out_obj,
		       struct k32_err *err);

/* Drops a reference from get, list, watch or a write; NULL is ignored. Any thread. */
void store_obj_unref(struct store *st, struct store_obj *obj);

/* List filter: return true to include obj. Called with the store's read lock held, so keep
 * it short and never call store functions from it. */
typedef bool (*store_filter_fn)(void *ctx, const struct store_obj *obj);

#define STORE_CONTINUE_LEN (K32_STORE_KEY_MAX + 24)

struct store_list_opts {
	uint32_t limit;		    /* most objects to return; 0: all */
	const char *continue_token; /* NULL or "": first page; else a previous page's token */
	uint64_t rev;		    /* 0: read at the current revision; else read exactly at this
				     * revision (COMPACTED when history no longer reaches it).
				     * Ignored when continue_token is set (the token's revision
				     * is used, so every page is one consistent snapshot). */
	store_filter_fn filter;	    /* NULL: everything under the prefix */
	void *filter_ctx;	    /* passed to filter */
};

struct store_list {
	struct store_obj **items; /* count references, in key order */
	uint32_t count;		  /* objects returned */
	uint32_t cap;		  /* internal: slots allocated */
	uint64_t rev;		  /* revision the page was read at: the list's resourceVersion */
	char continue_token[STORE_CONTINUE_LEN]; /* "" on the last page; else pass it back.
						  * Form "<rev>:<last key>" (URL-safe apart from
						  * what names contain; treat as opaque) */
};

/*
 * Lists the objects under key's group/resource[/namespace] in key order, at one consistent
 * revision. With limit, returns at most limit objects that pass the filter and sets
 * continue_token when keys remain after the last one examined (a next page may then be empty).
 * Release with store_list_fini() whatever the status.
 * @retval K32_ERR_COMPACTED    opts->rev or the token's revision is older than the history
 *                              ring reaches (API: 410 Expired, "continue token too old")
 * @retval K32_ERR_OUT_OF_RANGE opts->rev is newer than the current revision
 * @retval K32_ERR_INVALID_ARGS bad key or a token that is malformed or of another prefix
 * @retval K32_ERR_NO_MEMORY    the allocator refused the result array
 */
k32_status_t store_list(struct store *st, const struct store_key *prefix,
			const struct store_list_opts *opts, struct store_list *out,
			struct k32_err *err);

/* Drops the list's references and array. Safe on a zeroed or failed list. */
void store_list_fini(struct store *st, struct store_list *list);

/* ---- writes (each fsynced before K32_OK when persistent) ------------------------------ */

/*
 * Creates key with val. *out_obj (out_obj may be NULL) gets a reference to the stored
 * version; its mod_rev == create_rev is the new revision.
 * @retval K32_ERR_ALREADY_EXISTS the key exists
 * @retval K32_ERR_NO_RESOURCES   K32_STORE_MAX_OBJECTS or K32_STORE_MAX_BYTES reached (named);
 *                                for a write not marked essential, less the reserve
 *                                (K32_STORE_RESERVE_PCT, named). A write that does not grow
 *                                the store is never refused for the reserve.
 * @retval K32_ERR_OUT_OF_RANGE   value over K32_STORE_VALUE_MAX
 * @retval K32_ERR_NO_MEMORY      allocator refused; nothing changed
 * @retval K32_ERR_IO             append or fsync failed: not written, nothing changed
 * @retval K32_ERR_BAD_STATE      an earlier I/O failure left the log unrecoverable; reopen
 */
k32_status_t store_create(struct store *st, const struct store_key *key,
			  const struct store_value *val, struct store_obj **out_obj,
			  struct k32_err *err);

/*
 * Replaces key's value. expect_rev != 0 is the optimistic-concurrency precondition: the
 * current mod_rev must equal it. create_rev is kept.
 * @retval K32_ERR_NOT_FOUND  no such key
 * @retval K32_ERR_CONFLICT   mod_rev != expect_rev (message has both); re-read and retry
 * other codes as store_create
 */
k32_status_t store_update(struct store *st, const struct store_key *key,
			  const struct store_value *val, uint64_t expect_rev,
			  struct store_obj **out_obj, struct k32_err *err);

/*
 * Deletes key. expect_rev != 0: precondition on the current mod_rev. *out_prev (may be NULL)
 * gets a reference to the deleted version; *out_rev (may be NULL) the deletion's revision.
 * @retval K32_ERR_NOT_FOUND, K32_ERR_CONFLICT, K32_ERR_IO, K32_ERR_NO_MEMORY, K32_ERR_BAD_STATE
 */
k32_status_t store_delete(struct store *st, const struct store_key *key, uint64_t expect_rev,
			  struct store_obj **out_prev, uint64_t *out_rev, struct k32_err *err);

/* ---- watch ---------------------------------------------------------------------------- */

enum store_event_type {
	STORE_EVENT_ADDED = 1,
	STORE_EVENT_MODIFIED = 2,
	STORE_EVENT_DELETED = 3,
};

struct store_event {
	enum store_event_type type;
	uint64_t rev;		/* revision of this change */
	struct store_obj *obj;	/* ADDED/MODIFIED: the new version; DELETED: the last version
				 * before deletion (its mod_rev is older than rev) */
	struct store_obj *prev; /* MODIFIED: the replaced version (for selector transitions);
				 * DELETED: same as obj; ADDED: NULL */
};

/* Wake-up callback: called from the writing thread with the store lock held, after an event
 * for this watcher (or its closing) is committed. It must not block, must not take a lock
 * that its owner holds while calling store functions, and must not call store functions:
 * set a flag, write a byte to a wake-up socket, signal a poller. */
typedef void (*store_notify_fn)(void *ctx);

/*
 * Watches key's group/resource[/namespace] for events with revision > after_rev. after_rev
 * 0 means "from now" (the current revision). A list followed by a watch from the list's rev
 * sees every change exactly once.
 * @retval K32_ERR_COMPACTED     after_rev is older than the history ring reaches, or newer
 *                              than the current revision (a client from before a
 *                              memory-only store restarted): either way, relist
 * @retval K32_ERR_NO_RESOURCES  K32_STORE_MAX_WATCHERS open
 * @retval K32_ERR_NO_MEMORY, K32_ERR_INVALID_ARGS
 * notify may be NULL. Context: any thread; does not block.
 */
k32_status_t store_watch_open(struct store *st, const struct store_key *prefix, uint64_t after_rev,
			      store_notify_fn notify, void *notify_ctx, struct store_watch **out_w,
			      struct k32_err *err);

/*
 * Takes up to cap pending events, oldest first; each holds references (release them with
 * store_events_release). Waits until deadline_us (absolute, k32_deadline_after();
 * K32_NO_WAIT: don't wait; K32_FOREVER) when none is pending.
 * @retval K32_OK              *out_count >= 1
 * @retval K32_ERR_SHOULD_WAIT none pending and deadline K32_NO_WAIT
 * @retval K32_ERR_TIMED_OUT   none pending by the deadline
 * @retval K32_ERR_COMPACTED   the watcher fell behind past K32_STORE_WATCH_QUEUE events or
 *                            the history ring; it is dead (close it; the client relists)
 * @retval K32_ERR_CANCELED    store_watch_cancel() was called
 * err is filled for COMPACTED and CANCELED only (SHOULD_WAIT and TIMED_OUT are routine).
 * Context: one thread per watcher at a time.
 */
k32_status_t store_watch_next(struct store_watch *w, struct store_event *out, size_t cap,
			      size_t *out_count, int64_t deadline_us, struct k32_err *err);

/* The revision through which this watcher has been given every matching event: the
 * resourceVersion of a BOOKMARK event. Equals store_rev() once the watcher is caught up. */
uint64_t store_watch_progress(struct store_watch *w);

/* Makes store_watch_next return K32_ERR_CANCELED (and wakes a blocked caller). Any thread. */
void store_watch_cancel(struct store_watch *w);

/* Frees the watcher. No other thread may be inside store_watch_next for it. NULL is OK. */
void store_watch_close(struct store_watch *w);

/* Drops the references of count events. */
void store_events_release(struct store *st, struct store_event *ev, size_t count);

/* ---- statistics ----------------------------------------------------------------------- */

struct store_stats {
	uint64_t rev;		 /* current revision */
	uint64_t compact_rev;	 /* watch/list reach back to revisions > compact_rev */
	uint32_t objects;	 /* live objects */
	size_t object_bytes;	 /* bytes of live versions (headers, keys, values) */
	uint32_t history_events; /* events in the ring */
	size_t history_bytes;	 /* old versions only the ring keeps alive
				  * (K32_STORE_HISTORY_BYTES) */
	uint32_t watchers;	 /* open watchers */
	uint64_t log_bytes;	 /* current log size (0 when memory only) */
	uint32_t snapshots;	 /* snapshots written since open */
	uint64_t log_writes;	 /* writes appended to the log since open */
	uint64_t log_syncs;	 /* fsyncs of the log since open (group commit: <= log_writes) */
	/* how long each of those fsyncs took (bounds STORE_FSYNC_LE: 1 ms .. 8 s, as etcd's
	 * wal_fsync_duration_seconds); count 0 when memory only */
	struct k32_prom_hist log_sync_seconds;
	uint32_t max_objects;	  /* the object limit (K32_STORE_MAX_OBJECTS or configured) */
	size_t max_bytes;	  /* the byte limit (K32_STORE_MAX_BYTES or configured) */
	uint32_t reserve_objects; /* of max_objects, kept for essential writes */
	size_t reserve_bytes;	  /* of max_bytes, kept for essential writes */
	struct k32_mem_stats mem; /* the store allocator: current and peak bytes */
};

void store_get_stats(struct store *st, struct store_stats *out);

/* ---- backend interface (kine's Backend) ----------------------------------------------- */

/*
 * A backend implements these on formatted keys (the front end validates and formats them:
 * "/<group>/<resource>/<ns>/<name>" and prefixes "/<group>/<resource>/[<ns>/]"). Semantics
 * and return codes are those of the store_ functions above. The embedded memory+log backend
 * is in store_mem.c; an etcd backend maps them onto etcd's KV and Watch (mod_revision,
 * create_revision, compaction -> K32_ERR_COMPACTED). A backend's watcher struct starts with
 * struct store_watch so the front end can dispatch.
 */
struct store_backend_ops {
	const char *name;
	void (*close)(void *be);
	uint64_t (*rev)(void *be);
	k32_status_t (*get)(void *be, const char *key, struct store_obj **out_obj,
			    struct k32_err *err);
	k32_status_t (*list)(void *be, const char *prefix, const struct store_list_opts *opts,
			     struct store_list *out, struct k32_err *err);
	void (*list_fini)(void *be, struct store_list *list);
	k32_status_t (*create)(void *be, const char *key, const struct store_value *val,
			       struct store_obj **out_obj, struct k32_err *err);
	k32_status_t (*update)(void *be, const char *key, const struct store_value *val,
			       uint64_t expect_rev, struct store_obj **out_obj,
			       struct k32_err *err);
	k32_status_t (*del)(void *be, const char *key, uint64_t expect_rev,
			    struct store_obj **out_prev, uint64_t *out_rev, struct k32_err *err);
	void (*obj_unref)(void *be, struct store_obj *obj);
	k32_status_t (*watch_open)(void *be, const char *prefix, uint64_t after_rev,
				   store_notify_fn notify, void *notify_ctx,
				   struct store_watch **out_w, struct k32_err *err);
	k32_status_t (*watch_next)(struct store_watch *w, struct store_event *out, size_t cap,
				   size_t *out_count, int64_t deadline_us, struct k32_err *err);
	uint64_t (*watch_progress)(struct store_watch *w);
	void (*watch_cancel)(struct store_watch *w);
	void (*watch_close)(struct store_watch *w);
	void (*stats)(void *be, struct store_stats *out);
};

/* The first member of every backend's watcher; callers treat it as opaque. */
struct store_watch {
	const struct store_backend_ops *ops; /* the backend that made it */
};

/*
 * Wraps an already-open backend (ops, be) as a store; store_close() then calls ops->close.
 * alloc holds the front end's few bytes (NULL: default heap).
 */
k32_status_t store_open_backend(const struct store_backend_ops *ops, void *be,
				const struct k32_allocator *alloc, struct store **out,
				struct k32_err *err);

#endif /* STORE_H */
