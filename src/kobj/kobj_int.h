/*
 * kobj_int.h - what the kobj files share: the object header, the spinlock, observers,
 * waiters, the fixed pools and the handle lookup used on every hot path.
 *
 * Invariants:
 *  - Every object starts with struct kobj_object. Objects that come in pairs (channel,
 *    socket, event pair, fifo) share one lock and one pool block; the block returns to its
 *    pool when both halves have no reference left (struct kobj_core.live reaches 0).
 *  - obj->refs counts handles in its low 16 bits (table slots + handles in flight inside
 *    channel messages) and other references (blocked waiters, port observers) in the high
 *    16 bits. When the handle count reaches 0 the type's on_zero_handles runs (peer sees
 *    PEER_CLOSED, queues drain); when all of refs reaches 0 the half is dead.
 *  - The observer list and every mutable field of an object are guarded by *obj->lock. The
 *    signal word is written under the lock but read lock-free (the wait fast path).
 *  - Lock order: object lock -> port lock -> pool locks -> waiter mutex. Nothing blocks while
 *    holding a spinlock except the waiter mutex, which is held only for a few instructions.
 */
#ifndef KOBJ_INT_H
#define KOBJ_INT_H

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "kobj/kobj.h"
#include "platform/k32_platform.h"

#define KOBJ_LIKELY(x)	 __builtin_expect(!!(x), 1)
#define KOBJ_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define KOBJ_SLOT_MASK	((1u << KOBJ_SLOT_BITS) - 1u)
#define KOBJ_GEN_MASK	0x00ffffffu
#define KOBJ_REF_HANDLE 1u
#define KOBJ_REF_OTHER	(1u << 16)
#define KOBJ_HANDLES(r) ((r)&0xffffu)

/* Slot fields are relaxed atomics (plain loads and stores); see struct kobj_slot. */
#define KOBJ_LD(f)    atomic_load_explicit(&(f), memory_order_relaxed)
#define KOBJ_ST(f, v) atomic_store_explicit(&(f), (v), memory_order_relaxed)

/* ---- spinlock ---------------------------------------------------------------------------- */

struct kobj_lock {
	atomic_uint v; /* 0 free, 1 held */
};

void kobj_lock_slow(struct kobj_lock *l);

/*
 * Wake-ups of sleeping waiters are deferred until the thread holds no kobj lock, so no
 * system call (futex wake) ever runs under a spinlock: on a single core the woken thread
 * would otherwise preempt the waker and spin on the lock the waker still holds.
 */
extern _Thread_local unsigned kobj_tls_depth; /* kobj spinlocks held by this thread */
extern _Thread_local unsigned kobj_tls_nwake; /* deferred wake-ups queued */
void kobj_flush_wakes(void);

static inline void kobj_lock(struct kobj_lock *l)
{
	kobj_tls_depth++;
	if (KOBJ_LIKELY(!atomic_exchange_explicit(&l->v, 1u, memory_order_acquire)))
		return;
	kobj_lock_slow(l);
}

static inline void kobj_unlock(struct kobj_lock *l)
{
	atomic_store_explicit(&l->v, 0u, memory_order_release);
	if (--kobj_tls_depth == 0 && KOBJ_UNLIKELY(kobj_tls_nwake != 0))
		kobj_flush_wakes();
}

/* ---- objects ----------------------------------------------------------------------------- */

/* What a pool block shares between the halves of a pair (or holds for a single object). */
struct kobj_core {
	struct kobj_lock lock;	   /* guards both halves */
	atomic_uint live;	   /* halves with refs != 0; the block is freed at 0 */
	struct kobj_account *acct; /* the creator's account, charged one object (may be NULL) */
	struct kobj_node *node;	   /* the instance whose pools the block came from */
};

struct kobj_obs;

struct kobj_object {
	atomic_uint signals;		/* KOBJ_SIG_* word; written under lock, read lock-free */
	atomic_uint refs;		/* handles (low 16) + other references (high 16) */
	struct kobj_core *core;		/* lock and liveness of the pool block */
	_Atomic(struct kobj_obs *) obs; /* observers (waiters, port observers); changed under
					 * lock, read lock-free only as a hint */
	struct kobj_object *peer;	/* other half of a pair, NULL for single objects */
	struct kobj_object *next_dead;	/* link in the thread's zero-handle work list */
	uint8_t type;			/* enum kobj_type */
	uint8_t side;			/* 0 or 1 within a pair */
	uint8_t closed;			/* on_zero_handles ran (handle count reached 0) */
	uint8_t named;			/* has an entry in the name pool (kobj_core.c) */
};

/* Observers on an object's list. */
enum { KOBJ_OBS_WAIT = 1, KOBJ_OBS_PORT = 2 };

struct kobj_obs {
	struct kobj_obs *next, *prev;
	uint32_t mask;	  /* signals that fire it */
	uint8_t kind;	  /* KOBJ_OBS_* */
	uint8_t linked;	  /* still on the object's list */
	uint8_t canceled; /* removed because its handle closed */
	uint8_t pad;
	const struct kobj_owner *owner; /* handle it was registered through, for cancel-on-close */
	kobj_handle_t handle;
};

/*
 * What a sleeping waiter blocks on: a mutex + condition variable from a static pool
 * (K32_KOBJ_MAX_SLEEPERS), initialised once and never destroyed, so a waker may signal it
 * after dropping every lock, even after the waiter has left (a late signal is only a
 * spurious wake-up for the sleeper's next user, who re-checks its state).
 */
struct kobj_sleeper {
	struct k32_mutex m;
	struct k32_cond c;
	struct kobj_sleeper *next; /* free list */
};

/* A blocked (or spinning) thread. Lives on the waiter's stack. */
enum { KOBJ_W_WAITING = 0, KOBJ_W_DONE = 1, KOBJ_W_SLEEPING = 2 };
struct kobj_waiter {
	atomic_int state;	 /* KOBJ_W_* */
	struct kobj_sleeper *sl; /* set before state becomes SLEEPING */
};

/* A waiter's registration on one object. */
struct kobj_wait_node {
	struct kobj_obs obs;
	struct kobj_waiter *w;
	struct kobj_object *obj;
	uint32_t observed; /* signals when it fired */
	uint8_t fired;
};

/* ---- pools ------------------------------------------------------------------------------- */

/*
 * A fixed pool of `cap` blocks of `elem` bytes at `base`. Blocks are handed out lazily: from
 * the free list of returned blocks when it is not empty, else the next never-used block
 * (`fresh`, a high-water index), so the pages of blocks never used are never written (on a
 * host they stay out of the process's RSS). The bound, `used` and every limit are as with a
 * free list built at setup.
 */
struct kobj_pool {
	struct kobj_lock lock;
	void *free;		/* intrusive free list of returned blocks */
	uint8_t *base;		/* first block */
	size_t elem;		/* block size in bytes */
	uint32_t fresh;		/* blocks [fresh, cap) were never handed out */
	uint32_t used;		/* blocks handed out */
	uint32_t cap;		/* blocks in the pool */
	uint32_t link_off;	/* where a free block holds the free-list link */
	const char *limit_name; /* "K32_KOBJ_MAX_CHANNELS" */
};

void kobj_pool_setup(struct kobj_pool *p, void *base, size_t elem, uint32_t count,
		     const char *limit_name);
/* The same with the free-list link at link_off: object pools keep it off the object header,
 * so a wait's lock-free look at the signal word of an object just destroyed by another thread
 * never reads (or races with) the link. */
void kobj_pool_setup_at(struct kobj_pool *p, void *base, size_t elem, uint32_t count,
			const char *limit_name, size_t link_off);
void *kobj_pool_get(struct kobj_pool *p);
void kobj_pool_put(struct kobj_pool *p, void *blk);
uint32_t kobj_pool_used(struct kobj_pool *p);

/* ---- the instance (one per board) -----------------------------------------------------------
 *
 * Everything the objects of one node share: its limits, pools, byte region, accounts, names,
 * sleepers, cycle-guard scratch and timer service. kobj_node_init lays it out at the start
 * of the caller's memory, the pools' blocks after it; nothing here is global, so two
 * instances in one process (two simulated boards) share nothing but the code. Every object
 * reaches its instance through core->node, every owner through owner->node; an object never
 * enters a table of another instance (kobj_handle_transfer refuses it).
 */
struct kobj_timer;

struct kobj_region_blk {
	uint32_t off, len;
};

struct kobj_name_ent {
	const struct kobj_object *obj; /* NULL: free */
	struct kobj_account *acct;
	char name[KOBJ_MAX_NAME_LEN];
};

struct kobj_node {
	uint32_t magic; /* KOBJ_NODE_MAGIC while initialised */
	char name[32];	/* "cardputer-1", for messages */
	struct kobj_limits lim;
	uint32_t charge_limit[KOBJ_CHARGE_COUNT]; /* an owner's shares, from lim */
	atomic_uint spin_ns;			  /* kobj_node_set_spin_ns */
	unsigned core_count;
	atomic_uint owners_made; /* generation seeds of the handle tables */
	/* test hook of the wait gate (kobj_gate_enter); NULL except in tests */
	void (*wait_hook)(struct kobj_owner *owner, int where);
	/* object pools (kobj_<type>.c) */
	struct kobj_pool chan_pool, msg_pool, chunk_pool;
	struct kobj_pool sock_pool, fifo_pool;
	struct kobj_pool event_pool, epair_pool;
	struct kobj_pool port_pool, obs_pool, user_pool;
	struct kobj_pool timer_pool, vmo_pool;
	/* owner accounts */
	struct kobj_pool account_pool;
	/* the byte region: first fit over a sorted table of live blocks */
	uint8_t *region;
	struct kobj_region_blk *region_blk;
	uint32_t region_nblk, region_blocks, region_bytes;
	struct kobj_lock region_lock;
	/* object names */
	struct kobj_name_ent *names;
	uint32_t names_used;
	struct kobj_lock names_lock;
	/* sleepers: handed out lazily, their mutex and condition made on first use */
	struct kobj_sleeper *sleepers, *sleeper_free;
	uint32_t sleepers_fresh;
	struct kobj_lock sleeper_lock;
	/* channel cycle guard (kobj_channel.c) */
	struct kobj_lock xfer_lock;
	struct kobj_object **walk_seen;	 /* 2 x lim.channels */
	struct kobj_object **walk_stack; /* 2 x lim.channels */
	/* timer service (kobj_timer.c) */
	struct k32_mutex svc_m;
	struct k32_cond svc_c;
	struct kobj_timer *armed_head;
	struct k32_task *svc_task;
	bool svc_stop, svc_ready, svc_sync; /* svc_sync: svc_m and svc_c exist */
	struct kobj_lock svc_start_lock;
};

#define KOBJ_NODE_MAGIC 0x6b6f626au /* "kobj" */

/*
 * Carves the caller's memory: kobj_node_carve(c, n, elem) returns the next n * elem bytes
 * (16-byte aligned), or only counts them when c->base is NULL (kobj_node_bytes).
 */
struct kobj_carve {
	uint8_t *base;
	size_t off;
};
void *kobj_carve(struct kobj_carve *c, uint32_t count, size_t elem);

/* First-fit byte region for socket rings and VMO bytes. */
k32_status_t kobj_region_alloc(struct kobj_node *n, uint32_t len, uint8_t **out);
void kobj_region_free(struct kobj_node *n, uint8_t *p, uint32_t len);
uint32_t kobj_region_used(struct kobj_node *n);
uint32_t kobj_names_used(struct kobj_node *n);
/* The same, charged to the owner's K32_KOBJ_OWNER_MAX_REGION_BYTES (NO_RESOURCES over it,
 * NO_MEMORY naming the region when it has no room; `what` names the use in the message). */
k32_status_t kobj_region_take(struct kobj_owner *owner, uint32_t len, const char *what,
			      uint8_t **out);
/* Frees and releases the charge made by kobj_region_take (acct: the creator's, may be NULL). */
void kobj_region_give(struct kobj_node *n, struct kobj_account *acct, uint8_t *p, uint32_t len);

/* ---- owner accounts (kobj_core.c) ----------------------------------------------------------
 *
 * Charges are made only by the owner's thread (plain counters in struct kobj_owner); releases
 * come from any thread (atomic counters here). In use = charged - released. When the owner
 * goes, it publishes its final charge counts and the account returns to its pool when the
 * releases catch up; whoever sees that first (the owner or the last release) frees it.
 */
struct kobj_account {
	atomic_uint released[KOBJ_CHARGE_COUNT];
	uint32_t final[KOBJ_CHARGE_COUNT]; /* the owner's charges, valid once dead */
	atomic_uint dead;		   /* the owner is gone */
	atomic_uint freed;		   /* claimed for return to the pool */
	struct kobj_account *next;	   /* free list */
	struct kobj_node *node;		   /* whose pool it came from */
};

k32_status_t kobj_charge_fail(struct kobj_owner *owner, unsigned kind, uint32_t in_use, uint32_t n);
void kobj_account_try_free(struct kobj_account *a);

/* Charges n units of `kind` to the owner; NO_RESOURCES (with detail) over its quota. */
static inline k32_status_t kobj_charge(struct kobj_owner *owner, unsigned kind, uint32_t n,
				       struct kobj_account **out)
{
	struct kobj_account *a = owner->acct;
	*out = a;
	if (KOBJ_UNLIKELY(!a))
		return K32_OK;
	uint32_t in_use =
	    owner->charged[kind] - atomic_load_explicit(&a->released[kind], memory_order_relaxed);
	uint32_t limit = owner->node->charge_limit[kind];
	if (KOBJ_UNLIKELY(n > limit - in_use || in_use > limit))
		return kobj_charge_fail(owner, kind, in_use, n);
	owner->charged[kind] += n;
	return K32_OK;
}

/* Releases n units (acct may be NULL). Any thread. */
static inline void kobj_release(struct kobj_account *a, unsigned kind, uint32_t n)
{
	if (!a)
		return;
	atomic_fetch_add(&a->released[kind], n);
	if (KOBJ_UNLIKELY(atomic_load(&a->dead)))
		kobj_account_try_free(a);
}

/*
 * Create-time admission shared by every type: room for `handles` slots in the table, then one
 * object of `type` charged to the owner's share of that type's pool (released when the block
 * returns to its pool). NO_RESOURCES with detail on either.
 */
k32_status_t kobj_admit(struct kobj_owner *owner, uint8_t type, uint32_t handles,
			struct kobj_account **acct);
/* The type's pool is empty: releases the admission charge, NO_MEMORY naming the limit. */
k32_status_t kobj_pool_empty(struct kobj_owner *owner, uint8_t type, struct kobj_account *acct);

static inline void kobj_core_init(struct kobj_core *c, struct kobj_node *node, unsigned halves,
				  struct kobj_account *acct)
{
	atomic_init(&c->lock.v, 0u);
	atomic_init(&c->live, halves);
	c->acct = acct;
	c->node = node;
}

/* ---- per-type hooks ---------------------------------------------------------------------- */

struct kobj_type_ops {
	/* Last handle closed (lock not held). May release handles (they go to the work list). */
	void (*on_zero_handles)(struct kobj_object *obj);
	/* Both halves dead: return the block (and any buffers) to the pools. */
	void (*destroy)(struct kobj_object *obj);
	uint32_t default_rights;
	uint32_t user_signals; /* bits object_signal may touch */
	uint32_t peer_signals; /* bits object_signal_peer may touch (0: no peer) */
	/* Messages, bytes, elements or packets queued for reading (lock held); may be NULL. */
	uint32_t (*queued)(struct kobj_object *obj);
	/* Most `queued` can reach (kobj_info.capacity); may be NULL. */
	uint32_t (*capacity)(struct kobj_object *obj);
};

/* Socket thresholds (kobj_socket.c), for the property calls. */
k32_status_t kobj_socket_threshold(struct kobj_object *obj, uint32_t prop, const uint32_t *set,
				   uint32_t *get);
/* Timer slack (kobj_timer.c), for the property calls: set when set != NULL, else *get. */
k32_status_t kobj_timer_slack(struct kobj_object *obj, const int64_t *set, int64_t *get);
extern const struct kobj_type_ops *const kobj_type_ops[KOBJ_TYPE_COUNT];
extern const struct kobj_type_ops kobj_channel_ops, kobj_socket_ops, kobj_event_ops,
    kobj_eventpair_ops, kobj_port_ops, kobj_fifo_ops, kobj_timer_ops, kobj_vmo_ops;

/* Each type carves its pools from the instance's memory (or counts them: c->base NULL). */
void kobj_channel_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_socket_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_event_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_port_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_timer_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_vmo_setup(struct kobj_node *n, struct kobj_carve *c);
void kobj_timer_stop(struct kobj_node *n, bool fini);
void kobj_node_stats_types(struct kobj_node *n, struct kobj_stats *st);

/* ---- core helpers (kobj_core.c) ---------------------------------------------------------- */

/* Initialises a header; refs starts at one handle. */
void kobj_object_init(struct kobj_object *obj, uint8_t type, struct kobj_core *core,
		      uint32_t signals);
/* Adds/drops references. Dropping the last handle runs on_zero_handles (deferred through a
 * per-thread work list, so nested objects never recurse). */
static inline void kobj_ref_other(struct kobj_object *obj)
{
	atomic_fetch_add_explicit(&obj->refs, KOBJ_REF_OTHER, memory_order_relaxed);
}
void kobj_unref(struct kobj_object *obj, uint32_t amount);
/* Installs obj (with one handle reference already counted) in the owner's table. On failure
 * (table full) the reference is dropped and NO_RESOURCES returned. */
k32_status_t kobj_handle_install(struct kobj_owner *owner, struct kobj_object *obj, uint32_t rights,
				 kobj_handle_t *out);
/* Reserves n free slots' availability check (no change). */
bool kobj_owner_has_room(const struct kobj_owner *owner, uint32_t n);
/* Removes a slot without dropping its reference (channel transfer). Cancels observers that
 * were registered through it. */
void kobj_handle_detach(struct kobj_owner *owner, kobj_handle_t h);

/* Sets the signal word to (old & ~clear) | set and fires matching observers. Lock held. */
void kobj_signal_locked(struct kobj_object *obj, uint32_t clear, uint32_t set);
/* Removes (and cancels) every observer. Lock held. Used when the handle count reaches 0. */
void kobj_obs_cancel_all_locked(struct kobj_object *obj);
void kobj_obs_link(struct kobj_object *obj, struct kobj_obs *o);
void kobj_obs_unlink(struct kobj_object *obj, struct kobj_obs *o);
/* Wakes a waiter (lock of the object it was linked on held; the system call, if the waiter
 * sleeps, happens when this thread releases its last kobj lock). */
void kobj_waiter_wake(struct kobj_waiter *w);
/* Blocks until woken or deadline; returns K32_OK or K32_ERR_TIMED_OUT. */
k32_status_t kobj_waiter_block(struct kobj_node *n, struct kobj_waiter *w, kobj_time_t deadline);

k32_status_t kobj_fail(struct kobj_owner *owner, k32_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Port delivery, called with the source object's lock held (kobj_port.c). */
void kobj_port_obs_fire(struct kobj_obs *o, uint32_t observed);
void kobj_port_obs_cancel(struct kobj_obs *o);

/*
 * A lookup that failed on type or rights: WRONG_TYPE / ACCESS_DENIED, unless the handle was
 * closed by another thread while it was read (a slot being freed gets its generation before
 * its rights become the free-list link, released; see slot_free), which is BAD_HANDLE.
 */
static inline k32_status_t kobj_lookup_refused(struct kobj_slot *s, kobj_handle_t h,
					       struct kobj_object *obj, uint8_t type)
{
	(void)atomic_load_explicit(&s->rights, memory_order_acquire); /* pairs with slot_free */
	if (atomic_load_explicit(&s->gen, memory_order_relaxed) != (h >> KOBJ_SLOT_BITS))
		return K32_ERR_BAD_HANDLE;
	return (type && obj->type != type) ? K32_ERR_WRONG_TYPE : K32_ERR_ACCESS_DENIED;
}

/*
 * The hot path: slot index, generation, type and rights in one go. Not locked: the table
 * belongs to the calling thread (see kobj.h).
 */
static inline k32_status_t kobj_lookup(struct kobj_owner *owner, kobj_handle_t h, uint8_t type,
				       uint32_t rights, struct kobj_object **out)
{
	uint32_t idx = h & KOBJ_SLOT_MASK;
	if (KOBJ_UNLIKELY(idx >= K32_KOBJ_MAX_HANDLES))
		return K32_ERR_BAD_HANDLE;
	struct kobj_slot *s = &owner->slots[idx];
	struct kobj_object *obj = KOBJ_LD(s->obj);
	if (KOBJ_UNLIKELY(!obj || KOBJ_LD(s->gen) != (h >> KOBJ_SLOT_BITS)))
		return K32_ERR_BAD_HANDLE;
	if (KOBJ_UNLIKELY((type && obj->type != type) || (KOBJ_LD(s->rights) & rights) != rights))
		return kobj_lookup_refused(s, h, obj, type);
	*out = obj;
	return K32_OK;
}

/* Rights of a live handle (after a successful lookup). */
static inline uint32_t kobj_handle_rights(const struct kobj_owner *owner, kobj_handle_t h)
{
	return KOBJ_LD(owner->slots[h & KOBJ_SLOT_MASK].rights);
}

/* The object of a live handle (after a successful lookup). */
static inline struct kobj_object *kobj_handle_obj(const struct kobj_owner *owner, kobj_handle_t h)
{
	return KOBJ_LD(((struct kobj_owner *)owner)->slots[h & KOBJ_SLOT_MASK].obj);
}

/*
 * The wait gate. A wait's registration (reference, observer link) runs between
 * kobj_gate_enter and kobj_gate_leave on the owner's thread; a close from any thread changes
 * the slot's generation (seq_cst) and then waits while the gate is up. So either the close
 * sees the gate (and finds the registered observer to cancel once it drops), or the wait sees
 * the new generation here and ends CANCELED: a wait that starts as its handle closes can
 * never miss the cancellation, and it never touches an object whose last handle went.
 * Returns false if some item of handles[0..n) no longer names objs[i].
 *
 * The instance's wait_hook (NULL except in tests, which set it while no wait runs) is called
 * with where = 0 before the gate goes up and 1 once it is up and the handles checked, so a
 * test can put a close from another thread at exactly those points.
 */

static inline bool kobj_gate_enter(struct kobj_owner *owner, const kobj_handle_t *handles,
				   struct kobj_object *const *objs, uint32_t n)
{
	if (KOBJ_UNLIKELY(owner->node->wait_hook != NULL))
		owner->node->wait_hook(owner, 0);
	atomic_store_explicit(&owner->gate, 1u, memory_order_seq_cst);
	for (uint32_t i = 0; i < n; i++) {
		struct kobj_slot *s = &owner->slots[handles[i] & KOBJ_SLOT_MASK];
		if (atomic_load_explicit(&s->gen, memory_order_seq_cst) !=
			(handles[i] >> KOBJ_SLOT_BITS) ||
		    KOBJ_LD(s->obj) != objs[i]) {
			atomic_store_explicit(&owner->gate, 0u, memory_order_release);
			return false;
		}
	}
	if (KOBJ_UNLIKELY(owner->node->wait_hook != NULL))
		owner->node->wait_hook(owner, 1);
	return true;
}

static inline void kobj_gate_leave(struct kobj_owner *owner)
{
	atomic_store_explicit(&owner->gate, 0u, memory_order_release);
}

static inline uint32_t kobj_sig(const struct kobj_object *obj)
{
	return atomic_load_explicit(&((struct kobj_object *)obj)->signals, memory_order_acquire);
}

#endif /* KOBJ_INT_H */
