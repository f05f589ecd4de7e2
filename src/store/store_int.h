/*
 * store_int.h - what the store's own files share: the embedded backend's state, the log
 * record codec and the key helpers. Not for other modules (they use store.h).
 *
 * Files: store.c (front end: key checks, dispatch through store_backend_ops), store_mem.c
 * (embedded backend: sorted index, history ring, watchers, writes, lists), store_wal.c
 * (record codec, log append, replay, snapshots).
 *
 * Locks of the embedded backend, in the order they are taken:
 *   write_mu  serialises writers; held across the log append and fsync, so readers (who
 *             only take mu) are never stalled by the disk. Holding write_mu alone is enough
 *             to read the index, because only writers change it.
 *   mu        guards the index, rev, the history ring and the watcher list; writers take it
 *             only to publish a committed change (no I/O under it).
 *   alloc_mu  leaf lock around the caller's allocator (which need not be thread-safe); it
 *             lets any thread drop the last reference of a version.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/k32_platform.h"
#include "store/store.h"

/* ---- log record format (store_wal.c has the full description) ------------------------ */

#define STORE_REC_MAGIC	   0x4C32334Bu /* "K32L" as little-endian bytes */
#define STORE_REC_HDR	   12u	       /* magic, len, crc */
#define STORE_REC_FIXED	   24u	       /* type, flags, key_len, val_len, rev, aux */
#define STORE_REC_OVERHEAD (STORE_REC_HDR + STORE_REC_FIXED)
/* Largest payload a record may declare; anything larger is corrupt. */
#define STORE_REC_MAX_PAYLOAD (STORE_REC_FIXED + K32_STORE_KEY_MAX + K32_STORE_VALUE_MAX)

enum store_rec_type {
	STORE_REC_PUT = 1,	  /* key = value; rev = mod_rev, aux = create_rev */
	STORE_REC_DELETE = 2,	  /* key removed at rev; aux 0 */
	STORE_REC_SNAP_BEGIN = 3, /* snapshot header: rev = snapshot revision, aux = objects */
	STORE_REC_SNAP_END = 4,	  /* snapshot trailer: same rev and aux as the header */
	STORE_REC_LOG_BEGIN = 5,  /* first record of a log, and in a snapshot the log it
				   * expects: rev = the snapshot revision the log continues
				   * from, aux = the log's sequence number (1, 2, ...) */
	STORE_REC_CLOSED = 6,	  /* the only record of store.closed: rev = the revision at the
				   * last clean close, aux = the log's sequence number then */
};

/* One decoded record; key and val point into the parsed buffer. */
struct store_rec {
	uint8_t type;	    /* enum store_rec_type */
	uint16_t key_len;   /* bytes of key */
	uint32_t val_len;   /* bytes of val */
	uint64_t rev;	    /* see enum store_rec_type */
	uint64_t aux;	    /* see enum store_rec_type */
	const char *key;    /* key bytes (not NUL-terminated) */
	const uint8_t *val; /* value bytes */
};

/*
 * Decodes the record at buf[0..len). On K32_OK *out_used is its size. On a fault, *out_fault
 * is a static phrase ("torn header", "CRC mismatch", ...):
 * @retval K32_ERR_OUT_OF_RANGE  the buffer ends inside the record (torn write)
 * @retval K32_ERR_CORRUPT       the bytes are not a valid record
 * Pure; never reads outside buf. This is the fuzzed entry point.
 */
k32_status_t store_rec_parse(const uint8_t *buf, size_t len, struct store_rec *out,
			     size_t *out_used, const char **out_fault);

/*
 * Writes the header, fixed fields and key of a record into out (room for STORE_REC_OVERHEAD +
 * key_len bytes); the value follows it in the file. The CRC covers val. Returns bytes
 * written to out.
 */
size_t store_rec_encode_head(uint8_t *out, uint8_t type, const char *key, uint16_t key_len,
			     const void *val, uint32_t val_len, uint64_t rev, uint64_t aux);

/* ---- key helpers (store.c) ------------------------------------------------------------ */

/*
 * Formats "/<group>/<resource>/<ns>/<name>" (object) or "/<group>/<resource>/[<ns>/]"
 * (prefix) into buf (K32_STORE_KEY_MAX + 1 bytes). INVALID_ARGS names the bad part.
 */
k32_status_t store_key_format(const struct store_key *key, bool prefix, char *buf, size_t *out_len,
			      struct k32_err *err);

/* memcmp order, shorter first on a tie: the index order. */
int store_key_cmp(const char *a, size_t a_len, const char *b, size_t b_len);

/* ---- embedded backend ----------------------------------------------------------------- */

/* One slot of the history ring: the event of revision rev. */
struct store_hist {
	uint64_t rev;		/* revision of the change */
	struct store_obj *obj;	/* reference: new version (DELETED: the deleted one) */
	struct store_obj *prev; /* reference: replaced/deleted version; NULL for ADDED */
	uint32_t type;		/* enum store_event_type */
	uint32_t bytes;		/* bytes of prev (0 for ADDED), counted in hist_bytes */
};

struct store_mwatch {
	struct store_watch base;   /* ops pointer; must be first */
	struct store_mem *m;	   /* owning backend */
	struct store_mwatch *next; /* intrusive list of m->watchers */
	struct store_mwatch *prev; /* ditto */
	uint64_t next_rev;	   /* next revision to examine */
	uint32_t pending;	   /* matching events at >= next_rev not yet taken */
	k32_status_t closed;	   /* K32_OK, K32_ERR_COMPACTED or K32_ERR_CANCELED */
	store_notify_fn notify;	   /* may be NULL */
	void *notify_ctx;	   /* passed to notify */
	uint16_t prefix_len;	   /* bytes of prefix */
	char prefix[];		   /* prefix + NUL */
};

/* A writer waiting for the fsync that covers its record (on its stack). */
struct store_waiter {
	k32_status_t status;	   /* result, once done */
	bool done;		   /* set by the fsync leader (under write_mu) */
	bool want_obj;		   /* the writer wants a reference to out_obj */
	struct store_obj *out_obj; /* PUT: a reference to the new version, taken at publish */
};

/* A write appended to the log, waiting for its fsync before it is published. */
struct store_pend {
	uint64_t rev;		     /* its revision */
	uint8_t type;		     /* STORE_REC_PUT or STORE_REC_DELETE */
	struct store_obj *obj;	     /* PUT: the new version; DELETE: the deleted one (a ref) */
	struct store_waiter *waiter; /* who to tell */
	bool create;		     /* PUT of a key absent when it was checked */
	size_t add_bytes;	     /* bytes its new version adds */
	size_t sub_bytes;	     /* bytes of the version it replaces or deletes */
};

struct store_mem {
	const struct k32_allocator *base; /* the caller's allocator */
	struct k32_allocator alloc;	  /* base wrapped in alloc_mu (what everything uses) */
	struct k32_mem_stats mem;	  /* bytes through alloc (guarded by alloc_mu) */
	struct k32_mutex alloc_mu;	  /* leaf lock of alloc */
	struct k32_mutex write_mu;	  /* serialises writers */
	struct k32_mutex mu;		  /* guards the state below */
	struct k32_cond cond;		  /* broadcast on commit and cancel */

	/* limits in force */
	uint32_t max_objects;	  /* K32_STORE_MAX_OBJECTS or config */
	size_t max_bytes;	  /* K32_STORE_MAX_BYTES or config */
	uint32_t reserve_objects; /* of max_objects, for essential writes only */
	size_t reserve_bytes;	  /* of max_bytes, for essential writes only */
	uint32_t watch_queue;	  /* K32_STORE_WATCH_QUEUE or config */
	size_t history_limit;	  /* K32_STORE_HISTORY_BYTES or config */
	size_t rotate_bytes;	  /* K32_STORE_LOG_ROTATE_BYTES or config */

	/* index: sorted by key */
	struct store_obj **idx; /* idx_count live versions, one reference each */
	uint32_t idx_count;	/* live objects */
	uint32_t idx_cap;	/* slots allocated (<= max_objects) */
	size_t obj_bytes;	/* bytes of the live versions */
	uint64_t rev;		/* current revision */

	/* history ring: events of revisions (compact_rev, rev] at ring[r % ring_cap] */
	struct store_hist *ring; /* ring_cap slots */
	uint32_t ring_cap;	 /* K32_STORE_HISTORY_EVENTS or config */
	uint64_t compact_rev;	 /* revisions <= this are gone from history */
	size_t hist_bytes;	 /* sum of ring[].bytes */

	/* watchers */
	struct store_mwatch *watchers; /* list head */
	uint32_t watcher_count;	       /* open watchers */

	/* persistence (log == NULL: memory only) */
	char *log_path;			/* <dir>/store.log */
	char *snap_path;		/* <dir>/store.snap */
	size_t log_path_len;		/* bytes allocated for log_path */
	size_t snap_path_len;		/* bytes allocated for snap_path */
	struct k32_file *log;		/* the open log */
	uint64_t log_bytes;		/* its size */
	bool broken;			/* a failed write could not be undone: refuse writes */
	uint32_t snapshots;		/* snapshots written since open */
	uint64_t log_writes;		/* writes appended since open */
	uint64_t log_syncs;		/* fsyncs since open */
	struct k32_prom_hist sync_hist; /* their durations (write_mu) */
	/* group commit (under write_mu): writes appended but not yet synced, in rev order */
	struct store_pend *pend;   /* K32_STORE_GROUP_MAX slots (persistent stores only) */
	uint32_t pend_count;	   /* entries in pend */
	uint32_t pend_creates;	   /* PUTs of keys absent from the index among them */
	size_t pend_add_bytes;	   /* bytes their new versions add */
	size_t pend_sub_bytes;	   /* bytes of the versions they replace or delete */
	bool syncing;		   /* a writer is in file_sync (write_mu released) */
	uint64_t synced_bytes;	   /* log bytes covered by the last good fsync */
	struct k32_cond sync_cond; /* broadcast when a group commit ends (with write_mu) */
	struct k32_err sync_err;   /* why the last failed fsync failed */
	char *mark_path;	   /* <dir>/store.closed (see store_wal.c) */
	size_t mark_path_len;	   /* bytes allocated for mark_path */
	uint64_t log_seq;	   /* sequence number of the current log (0: none yet / legacy) */
	bool log_stale;		   /* a snapshot expects log_seq but the log file was not yet
				    * replaced: writes retry the replacement first */
	bool accept_log_loss;	   /* store_config.accept_log_loss */
	bool opened;		   /* the load succeeded: close may write store.closed */
	/* set by store_wal_replay, read by store_wal_load */
	bool log_hdr_found;	/* the log began with a LOG_BEGIN record */
	uint64_t log_hdr_seq;	/* its sequence number */
	uint64_t log_hdr_base;	/* its base revision */
	const char *tail_fault; /* why replay stopped before the end (NULL: it did not) */
};

/* Size of the block of a version. */
static inline size_t store_obj_size(const struct store_obj *obj)
{
	return sizeof(*obj) + (size_t)obj->key_len + 1 + (size_t)obj->len + 1;
}

/* Allocates a version with refs 1; copies key and value (value with the revision stamped in
 * at rv_off unless STORE_NO_STAMP). NULL when the allocator refuses. */
struct store_obj *store_mem_obj_new(struct store_mem *m, const char *key, size_t key_len,
				    const void *val, size_t val_len, size_t rv_off,
				    uint64_t mod_rev, uint64_t create_rev);
void store_mem_obj_unref(struct store_mem *m, struct store_obj *obj);

/* Index helpers (caller holds write_mu or mu). Returns the slot of key, or the insertion
 * point with *out_found false. */
uint32_t store_mem_find(const struct store_mem *m, const char *key, size_t key_len,
			bool *out_found);
/* Grows the index to hold `more` beyond idx_count (under mu). NO_RESOURCES at max_objects,
 * NO_MEMORY. */
k32_status_t store_mem_reserve(struct store_mem *m, uint32_t more, struct k32_err *err);

/* store_wal.c: open-time load (snapshot, then log replay with tail repair). */
k32_status_t store_wal_load(struct store_mem *m, struct k32_err *err);
/* Loads a snapshot image onto an empty m (every check failing is K32_ERR_CORRUPT). */
k32_status_t store_wal_load_snapshot(struct store_mem *m, const uint8_t *data, size_t len,
				     struct k32_err *err);
/* Replays log records in data[0..len) onto m; *out_good is the length of the valid prefix.
 * A LOG_BEGIN record at offset 0 is noted in m->log_hdr_*. A bad tail is left out (its
 * fault in m->tail_fault; store_wal_load decides whether that is acceptable); a bad record
 * followed by valid ones is CORRUPT. */
k32_status_t store_wal_replay(struct store_mem *m, const uint8_t *data, size_t len,
			      size_t *out_good, struct k32_err *err);
/* Appends one record (no fsync: store_mem's group commit syncs); on failure truncates back
 * (or marks m->broken). */
k32_status_t store_wal_append(struct store_mem *m, uint8_t type, const char *key, uint16_t key_len,
			      const void *val, uint32_t val_len, uint64_t rev, uint64_t aux,
			      struct k32_err *err);
/* Writes a snapshot of the index that expects log sequence log_seq + 1, then replaces the
 * log with a new one holding only its LOG_BEGIN record (caller holds write_mu). */
k32_status_t store_wal_rotate(struct store_mem *m, struct k32_err *err);
/* Retries the log replacement after a snapshot whose new log could not be made. */
k32_status_t store_wal_log_replace(struct store_mem *m, struct k32_err *err);
/* Records a clean close in store.closed (the revision the log must reach on next open). */
void store_wal_mark_closed(struct store_mem *m);

/* store_mem.c: the embedded backend's ops and constructor. */
extern const struct store_backend_ops store_mem_ops;
k32_status_t store_mem_open(const struct store_config *cfg, struct store_mem **out,
			    struct k32_err *err);

#endif /* STORE_INT_H */
