/*
 * kobj_core.c - the parts every object shares: spinlock slow path, fixed pools, the byte
 * region, handle tables, reference counting with the zero-handle work list, signals,
 * observers, waiters, wait_one / wait_many, object_signal(_peer) and get_info.
 *
 * Waiting. A waiter links one kobj_wait_node per object (on its stack: no pool) and then
 * spins for a short budget, then sleeps on a mutex + condition variable initialised only at
 * that point. A waker runs under the object's lock: it unlinks the node and exchanges the
 * waiter state to DONE; only if the waiter was SLEEPING does it touch the mutex and signal.
 * Before returning, a waiter takes the lock of every object it registered on, so no waker can
 * still be touching its stack (wakers act only while holding that lock).
 *
 * Context: any thread; see kobj.h for the handle-table rule.
 */
#include "kobj/kobj_int.h"

#include "base/k32_alloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static void sleepers_fini(struct kobj_node *n);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void kobj_lock_slow(struct kobj_lock *l)
{
	unsigned spins = 0;
	for (;;) {
		while (atomic_load_explicit(&l->v, memory_order_relaxed)) {
			cpu_relax();
			/* The holder may be preempted on this very core: let it run. */
			if (++spins >= 256) {
				k32_plat()->task_yield();
				spins = 0;
			}
		}
		if (!atomic_exchange_explicit(&l->v, 1u, memory_order_acquire))
			return;
	}
}

/* ---- pools ------------------------------------------------------------------------------- */

/* A free block's link to the next free block, stored at the pool's link offset. */
static inline void *link_get(const struct kobj_pool *p, const void *blk)
{
	void *next;
	memcpy(&next, (const uint8_t *)blk + p->link_off, sizeof(next));
	return next;
}

static inline void link_set(const struct kobj_pool *p, void *blk, void *next)
{
	memcpy((uint8_t *)blk + p->link_off, &next, sizeof(next));
}

void kobj_pool_setup_at(struct kobj_pool *p, void *base, size_t elem, uint32_t count,
			const char *limit_name, size_t link_off)
{
	/* No block is written here: kobj_pool_get takes never-used blocks in address order. */
	atomic_init(&p->lock.v, 0u);
	p->free = NULL;
	p->base = base;
	p->elem = elem;
	p->fresh = 0;
	p->used = 0;
	p->cap = count;
	p->limit_name = limit_name;
	p->link_off = (uint32_t)link_off;
}

void kobj_pool_setup(struct kobj_pool *p, void *base, size_t elem, uint32_t count,
		     const char *limit_name)
{
	kobj_pool_setup_at(p, base, elem, count, limit_name, 0);
}

void *kobj_pool_get(struct kobj_pool *p)
{
	kobj_lock(&p->lock);
	uint8_t *blk = p->free;
	if (blk) {
		p->free = link_get(p, blk);
		p->used++;
	} else if (p->fresh < p->cap) {
		blk = p->base + (size_t)p->fresh * p->elem;
		p->fresh++;
		p->used++;
	}
	kobj_unlock(&p->lock);
	return blk;
}

void kobj_pool_put(struct kobj_pool *p, void *blk)
{
	kobj_lock(&p->lock);
	link_set(p, blk, p->free);
	p->free = blk;
	p->used--;
	kobj_unlock(&p->lock);
}

uint32_t kobj_pool_used(struct kobj_pool *p)
{
	kobj_lock(&p->lock);
	uint32_t n = p->used;
	kobj_unlock(&p->lock);
	return n;
}

/*
 * The region: one byte array per instance shared by socket rings and VMOs, first fit over a
 * small sorted table of live blocks (one per socket pair, fifo pair and VMO, so a scan is
 * bounded). Allocation happens at create time only, never on a data path.
 */
k32_status_t kobj_region_alloc(struct kobj_node *n, uint32_t len, uint8_t **out)
{
	uint32_t need = (len + 15u) & ~15u, pos = 0, i;
	if (need < len)
		return K32_ERR_NO_MEMORY;
	kobj_lock(&n->region_lock);
	struct kobj_region_blk *blk = n->region_blk;
	if (n->region_nblk == n->region_blocks)
		goto out_full;
	for (i = 0; i < n->region_nblk; i++) {
		if (blk[i].off - pos >= need)
			break;
		pos = blk[i].off + blk[i].len;
	}
	if (i == n->region_nblk && n->lim.region_bytes - pos < need)
		goto out_full;
	memmove(&blk[i + 1], &blk[i], (n->region_nblk - i) * sizeof(blk[0]));
	blk[i].off = pos;
	blk[i].len = need;
	n->region_nblk++;
	n->region_bytes += need;
	kobj_unlock(&n->region_lock);
	*out = n->region + pos;
	memset(*out, 0, len);
	return K32_OK;
out_full:
	kobj_unlock(&n->region_lock);
	return K32_ERR_NO_MEMORY;
}

void kobj_region_free(struct kobj_node *n, uint8_t *p, uint32_t len)
{
	uint32_t off = (uint32_t)(p - n->region);
	(void)len;
	kobj_lock(&n->region_lock);
	struct kobj_region_blk *blk = n->region_blk;
	for (uint32_t i = 0; i < n->region_nblk; i++) {
		if (blk[i].off == off) {
			n->region_bytes -= blk[i].len;
			memmove(&blk[i], &blk[i + 1], (n->region_nblk - i - 1) * sizeof(blk[0]));
			n->region_nblk--;
			break;
		}
	}
	kobj_unlock(&n->region_lock);
}

k32_status_t kobj_region_take(struct kobj_owner *owner, uint32_t len, const char *what,
			      uint8_t **out)
{
	struct kobj_node *n = owner->node;
	struct kobj_account *a;
	k32_status_t st = kobj_charge(owner, KOBJ_CHARGE_REGION_BYTES, len, &a);
	if (st != K32_OK)
		return st;
	if (kobj_region_alloc(n, len, out) != K32_OK) {
		kobj_release(a, KOBJ_CHARGE_REGION_BYTES, len);
		return kobj_fail(
		    owner, K32_ERR_NO_MEMORY,
		    "%s: kobj region of node %s full (K32_KOBJ_REGION_BYTES=%" PRIu32 ", %" PRIu32
		    " in use) for %" PRIu32 " bytes of %s; close sockets/fifos/VMOs or raise the "
		    "limit",
		    owner->name, n->name, n->lim.region_bytes, kobj_region_used(n), len, what);
	}
	return K32_OK;
}

void kobj_region_give(struct kobj_node *n, struct kobj_account *acct, uint8_t *p, uint32_t len)
{
	kobj_region_free(n, p, len);
	kobj_release(acct, KOBJ_CHARGE_REGION_BYTES, len);
}

uint32_t kobj_region_used(struct kobj_node *n)
{
	kobj_lock(&n->region_lock);
	uint32_t b = n->region_bytes;
	kobj_unlock(&n->region_lock);
	return b;
}

/* ---- module ------------------------------------------------------------------------------ */

const struct kobj_type_ops *const kobj_type_ops[KOBJ_TYPE_COUNT] = {
    [KOBJ_TYPE_CHANNEL] = &kobj_channel_ops, [KOBJ_TYPE_SOCKET] = &kobj_socket_ops,
    [KOBJ_TYPE_EVENT] = &kobj_event_ops,     [KOBJ_TYPE_EVENTPAIR] = &kobj_eventpair_ops,
    [KOBJ_TYPE_PORT] = &kobj_port_ops,	     [KOBJ_TYPE_FIFO] = &kobj_fifo_ops,
    [KOBJ_TYPE_TIMER] = &kobj_timer_ops,     [KOBJ_TYPE_VMO] = &kobj_vmo_ops,
};

void kobj_node_stats_types(struct kobj_node *n, struct kobj_stats *st)
{
	st->in_use[KOBJ_TYPE_CHANNEL] = kobj_pool_used(&n->chan_pool);
	st->messages = kobj_pool_used(&n->msg_pool);
	st->chunks = kobj_pool_used(&n->chunk_pool);
	st->in_use[KOBJ_TYPE_SOCKET] = kobj_pool_used(&n->sock_pool);
	st->in_use[KOBJ_TYPE_FIFO] = kobj_pool_used(&n->fifo_pool);
	st->in_use[KOBJ_TYPE_EVENT] = kobj_pool_used(&n->event_pool);
	st->in_use[KOBJ_TYPE_EVENTPAIR] = kobj_pool_used(&n->epair_pool);
	st->in_use[KOBJ_TYPE_PORT] = kobj_pool_used(&n->port_pool);
	st->port_observers = kobj_pool_used(&n->obs_pool);
	st->port_user_packets = kobj_pool_used(&n->user_pool);
	st->in_use[KOBJ_TYPE_TIMER] = kobj_pool_used(&n->timer_pool);
	st->in_use[KOBJ_TYPE_VMO] = kobj_pool_used(&n->vmo_pool);
}

void kobj_stats_get(struct kobj_node *n, struct kobj_stats *out)
{
	memset(out, 0, sizeof(*out));
	kobj_node_stats_types(n, out);
	out->vmo_bytes = kobj_region_used(n);
	out->names = kobj_names_used(n);
	out->accounts = kobj_pool_used(&n->account_pool);
}

void kobj_limits_default(struct kobj_limits *lim)
{
	*lim = (struct kobj_limits){
	    .handles = K32_KOBJ_MAX_HANDLES,
	    .channels = K32_KOBJ_MAX_CHANNELS,
	    .messages = K32_KOBJ_MAX_MESSAGES,
	    .msg_chunks = K32_KOBJ_MSG_CHUNKS,
	    .sockets = K32_KOBJ_MAX_SOCKETS,
	    .fifos = K32_KOBJ_MAX_FIFOS,
	    .events = K32_KOBJ_MAX_EVENTS,
	    .eventpairs = K32_KOBJ_MAX_EVENTPAIRS,
	    .ports = K32_KOBJ_MAX_PORTS,
	    .port_observers = K32_KOBJ_MAX_PORT_OBSERVERS,
	    .user_packets = K32_KOBJ_MAX_USER_PACKETS,
	    .timers = K32_KOBJ_MAX_TIMERS,
	    .vmos = K32_KOBJ_MAX_VMOS,
	    .names = K32_KOBJ_MAX_NAMES,
	    .accounts = K32_KOBJ_MAX_ACCOUNTS,
	    .sleepers = K32_KOBJ_MAX_SLEEPERS,
	    .region_bytes = K32_KOBJ_REGION_BYTES,
	    .owner_pool_pct = K32_KOBJ_OWNER_POOL_PCT,
	    .owner_max_messages = K32_KOBJ_OWNER_MAX_MESSAGES,
	    .owner_max_observers = K32_KOBJ_OWNER_MAX_OBSERVERS,
	    .owner_max_packets = K32_KOBJ_OWNER_MAX_PACKETS,
	    .owner_max_msg_chunks = K32_KOBJ_OWNER_MAX_MSG_CHUNKS,
	    .owner_max_region_bytes = K32_KOBJ_OWNER_MAX_REGION_BYTES,
	};
}

void *kobj_carve(struct kobj_carve *c, uint32_t count, size_t elem)
{
	c->off = (c->off + 15u) & ~(size_t)15u;
	void *p = c->base ? c->base + c->off : NULL;
	c->off += (size_t)count * elem;
	return p;
}

/* A limit's field, its name in k32_config.h, and its range. */
#define LIMIT(f, cfg, lo, hi)                                                                      \
	{                                                                                          \
		offsetof(struct kobj_limits, f), #f, cfg, lo, hi                                   \
	}
static const struct {
	size_t off;
	const char *field, *config;
	uint32_t lo, hi;
} limit_range[] = {
    LIMIT(handles, "K32_KOBJ_MAX_HANDLES", 1, K32_KOBJ_MAX_HANDLES),
    LIMIT(channels, "K32_KOBJ_MAX_CHANNELS", 1, 1u << 16),
    LIMIT(messages, "K32_KOBJ_MAX_MESSAGES", 1, 1u << 20),
    LIMIT(msg_chunks, "K32_KOBJ_MSG_CHUNKS", 1, 1u << 20),
    LIMIT(sockets, "K32_KOBJ_MAX_SOCKETS", 1, 1u << 16),
    LIMIT(fifos, "K32_KOBJ_MAX_FIFOS", 1, 1u << 16),
    LIMIT(events, "K32_KOBJ_MAX_EVENTS", 1, 1u << 16),
    LIMIT(eventpairs, "K32_KOBJ_MAX_EVENTPAIRS", 1, 1u << 16),
    LIMIT(ports, "K32_KOBJ_MAX_PORTS", 1, 1u << 16),
    LIMIT(port_observers, "K32_KOBJ_MAX_PORT_OBSERVERS", 1, 1u << 20),
    LIMIT(user_packets, "K32_KOBJ_MAX_USER_PACKETS", 1, 1u << 20),
    LIMIT(timers, "K32_KOBJ_MAX_TIMERS", 1, 1u << 16),
    LIMIT(vmos, "K32_KOBJ_MAX_VMOS", 1, 1u << 16),
    LIMIT(names, "K32_KOBJ_MAX_NAMES", 1, 1u << 12),
    LIMIT(accounts, "K32_KOBJ_MAX_ACCOUNTS", 1, 1u << 16),
    LIMIT(sleepers, "K32_KOBJ_MAX_SLEEPERS", 1, 1u << 12),
    LIMIT(region_bytes, "K32_KOBJ_REGION_BYTES", 4096, 1u << 30),
    LIMIT(owner_pool_pct, "K32_KOBJ_OWNER_POOL_PCT", 1, 100),
    LIMIT(owner_max_messages, "K32_KOBJ_OWNER_MAX_MESSAGES", 1, 1u << 20),
    LIMIT(owner_max_observers, "K32_KOBJ_OWNER_MAX_OBSERVERS", 1, 1u << 20),
    LIMIT(owner_max_packets, "K32_KOBJ_OWNER_MAX_PACKETS", 1, 1u << 20),
    LIMIT(owner_max_msg_chunks, "K32_KOBJ_OWNER_MAX_MSG_CHUNKS",
	  (K32_KOBJ_CHANNEL_MAX_MSG_BYTES + K32_KOBJ_MSG_CHUNK_BYTES - 1) /
	      K32_KOBJ_MSG_CHUNK_BYTES,
	  1u << 20),
    LIMIT(owner_max_region_bytes, "K32_KOBJ_OWNER_MAX_REGION_BYTES", 2 * K32_KOBJ_SOCKET_MAX_CAP,
	  1u << 30),
};

/* Checks every limit; on failure err (may be NULL) names the field, value and range. */
static k32_status_t limits_check(const struct kobj_limits *lim, struct k32_err *err)
{
	for (size_t i = 0; i < sizeof(limit_range) / sizeof(limit_range[0]); i++) {
		uint32_t v;
		memcpy(&v, (const uint8_t *)lim + limit_range[i].off, sizeof(v));
		if (v < limit_range[i].lo || v > limit_range[i].hi) {
			if (err)
				k32_err_set(err, K32_ERR_INVALID_ARGS, "kobj",
					    "kobj limit %s (%s) = %" PRIu32 " is outside %" PRIu32
					    "..%" PRIu32 "; fix the board profile",
					    limit_range[i].field, limit_range[i].config, v,
					    limit_range[i].lo, limit_range[i].hi);
			return K32_ERR_INVALID_ARGS;
		}
	}
	return K32_OK;
}

/* The node header, then every pool (c->base NULL: count only). */
static void node_layout(struct kobj_node *n, struct kobj_carve *c)
{
	const struct kobj_limits *lim = &n->lim;
	(void)kobj_carve(c, 1, sizeof(struct kobj_node));
	kobj_channel_setup(n, c);
	kobj_socket_setup(n, c);
	kobj_event_setup(n, c);
	kobj_port_setup(n, c);
	kobj_timer_setup(n, c);
	kobj_vmo_setup(n, c);
	n->region = kobj_carve(c, lim->region_bytes, 1);
	n->region_blocks = lim->sockets + lim->fifos + lim->vmos;
	n->region_blk = kobj_carve(c, n->region_blocks, sizeof(struct kobj_region_blk));
	n->names = kobj_carve(c, lim->names, sizeof(struct kobj_name_ent));
	n->sleepers = kobj_carve(c, lim->sleepers, sizeof(struct kobj_sleeper));
	void *acc = kobj_carve(c, lim->accounts, sizeof(struct kobj_account));
	kobj_pool_setup_at(&n->account_pool, acc, sizeof(struct kobj_account), lim->accounts,
			   "K32_KOBJ_MAX_ACCOUNTS", offsetof(struct kobj_account, next));
}

size_t kobj_node_bytes(const struct kobj_limits *lim)
{
	if (limits_check(lim, NULL))
		return 0;
	static const struct kobj_node zero;
	struct kobj_node probe = zero;
	probe.lim = *lim;
	struct kobj_carve c = {.base = NULL, .off = 0};
	node_layout(&probe, &c);
	return (c.off + 15u) & ~(size_t)15u;
}

/* An owner's share of a pool: owner_pool_pct of it, at least one. */
static uint32_t share(const struct kobj_limits *lim, uint32_t pool)
{
	uint32_t v = (uint32_t)((uint64_t)pool * lim->owner_pool_pct / 100u);
	return v ? v : 1u;
}

k32_status_t kobj_node_init(void *mem, size_t mem_bytes, const char *name,
			    const struct kobj_limits *lim, struct kobj_node **out,
			    struct k32_err *err)
{
	struct k32_err tmp;
	if (!err)
		err = &tmp;
	k32_status_t st = limits_check(lim, err);
	if (st)
		return st;
	size_t need = kobj_node_bytes(lim);
	if (!mem || ((uintptr_t)mem & 7u) || mem_bytes < need)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "kobj",
				   "kobj node %s: %zu bytes at %p given, %zu bytes 8-byte aligned "
				   "needed for its limits; give more or lower the limits",
				   name ? name : "?", mem_bytes, mem, need);
	struct kobj_node *n = mem;
	memset(n, 0, sizeof(*n));
	n->lim = *lim;
	snprintf(n->name, sizeof(n->name), "%s", name ? name : "node");
	atomic_init(&n->spin_ns, K32_KOBJ_SPIN_NS);
	n->core_count = k32_plat()->core_count();
	if (n->core_count < 1)
		n->core_count = 1;
	atomic_init(&n->owners_made, 0u);
	atomic_init(&n->region_lock.v, 0u);
	atomic_init(&n->names_lock.v, 0u);
	atomic_init(&n->sleeper_lock.v, 0u);
	atomic_init(&n->xfer_lock.v, 0u);
	atomic_init(&n->svc_start_lock.v, 0u);
	struct kobj_carve c = {.base = mem, .off = 0};
	node_layout(n, &c);
	/* the name table is searched linearly, so it starts zeroed (40 B a name) */
	memset(n->names, 0, (size_t)lim->names * sizeof(struct kobj_name_ent));
	const uint32_t charge[KOBJ_CHARGE_COUNT] = {
	    [KOBJ_CHARGE_MESSAGES] = lim->owner_max_messages,
	    [KOBJ_CHARGE_OBSERVERS] = lim->owner_max_observers,
	    [KOBJ_CHARGE_PACKETS] = lim->owner_max_packets,
	    [KOBJ_CHARGE_CHUNKS] = lim->owner_max_msg_chunks,
	    [KOBJ_CHARGE_REGION_BYTES] = lim->owner_max_region_bytes,
	    [KOBJ_CHARGE_NAMES] = share(lim, lim->names),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_CHANNEL - 1] = share(lim, lim->channels),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_SOCKET - 1] = share(lim, lim->sockets),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_EVENT - 1] = share(lim, lim->events),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_EVENTPAIR - 1] = share(lim, lim->eventpairs),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_PORT - 1] = share(lim, lim->ports),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_FIFO - 1] = share(lim, lim->fifos),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_TIMER - 1] = share(lim, lim->timers),
	    [KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_VMO - 1] = share(lim, lim->vmos),
	};
	memcpy(n->charge_limit, charge, sizeof(charge));
	n->magic = KOBJ_NODE_MAGIC;
	*out = n;
	return K32_OK;
}

k32_status_t kobj_node_fini(struct kobj_node *n)
{
	if (!n || n->magic != KOBJ_NODE_MAGIC)
		return K32_OK;
	struct kobj_stats st;
	kobj_stats_get(n, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		if (st.in_use[t])
			return K32_ERR_BAD_STATE;
	kobj_timer_stop(n, true);
	sleepers_fini(n);
	n->magic = 0;
	return K32_OK;
}

k32_status_t kobj_node_new(const struct k32_allocator *a, const char *name,
			   const struct kobj_limits *lim, struct kobj_node **out,
			   struct k32_err *err)
{
	size_t bytes = kobj_node_bytes(lim);
	if (!bytes)
		return kobj_node_init(NULL, 0, name, lim, out, err); /* names the bad limit */
	void *mem = k32_alloc(a, bytes);
	if (!mem)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "kobj",
				   "kobj node %s: no %zu bytes for its pools; lower the board's "
				   "kobj limits",
				   name ? name : "?", bytes);
	k32_status_t st = kobj_node_init(mem, bytes, name, lim, out, err);
	if (st)
		k32_free(a, mem, bytes);
	return st;
}

k32_status_t kobj_node_free(const struct k32_allocator *a, struct kobj_node *n)
{
	if (!n)
		return K32_OK;
	size_t bytes = kobj_node_bytes(&n->lim);
	k32_status_t st = kobj_node_fini(n);
	if (st)
		return st;
	k32_free(a, n, bytes);
	return K32_OK;
}

const char *kobj_node_name(const struct kobj_node *n)
{
	return n->name;
}

const struct kobj_limits *kobj_node_limits(const struct kobj_node *n)
{
	return &n->lim;
}

kobj_time_t kobj_now_ns(void)
{
	return (kobj_time_t)(k32_now_us() * 1000u);
}

kobj_time_t kobj_deadline_after(int64_t ns)
{
	if (ns < 0)
		return KOBJ_TIME_INFINITE;
	kobj_time_t now = kobj_now_ns();
	if (ns > KOBJ_TIME_INFINITE - now)
		return KOBJ_TIME_INFINITE;
	return now + ns;
}

void kobj_node_set_spin_ns(struct kobj_node *n, uint32_t ns)
{
	atomic_store(&n->spin_ns, ns);
}

k32_status_t kobj_fail(struct kobj_owner *owner, k32_status_t st, const char *fmt, ...)
{
	va_list ap;
	owner->last_err.status = st;
	owner->last_err.module = "kobj";
	va_start(ap, fmt);
	vsnprintf(owner->last_err.msg, sizeof(owner->last_err.msg), fmt, ap);
	va_end(ap);
	return st;
}

/* ---- objects and references -------------------------------------------------------------- */

void kobj_object_init(struct kobj_object *obj, uint8_t type, struct kobj_core *core,
		      uint32_t signals)
{
	atomic_init(&obj->signals, signals);
	atomic_init(&obj->refs, KOBJ_REF_HANDLE);
	obj->core = core;
	atomic_init(&obj->obs, NULL);
	obj->peer = NULL;
	obj->next_dead = NULL;
	obj->type = type;
	obj->side = 0;
	obj->closed = 0;
	obj->named = 0;
}

static _Thread_local struct kobj_object *dead_head;
static _Thread_local bool dead_busy;

static void names_drop(struct kobj_node *n, struct kobj_object *obj);

static void release_half(struct kobj_object *obj)
{
	if (atomic_fetch_sub_explicit(&obj->core->live, 1u, memory_order_acq_rel) == 1u) {
		struct kobj_account *a = obj->core->acct;
		if (KOBJ_UNLIKELY(obj->named))
			names_drop(obj->core->node, obj);
		if (obj->peer && KOBJ_UNLIKELY(obj->peer->named))
			names_drop(obj->core->node, obj->peer);
		unsigned kind = KOBJ_CHARGE_OBJECTS + obj->type - 1u;
		kobj_type_ops[obj->type]->destroy(obj); /* the block is gone after this */
		kobj_release(a, kind, 1u);
	}
}

static void zero_handles(struct kobj_object *obj)
{
	kobj_lock(&obj->core->lock);
	obj->closed = 1;
	kobj_obs_cancel_all_locked(obj);
	kobj_unlock(&obj->core->lock);
	if (kobj_type_ops[obj->type]->on_zero_handles)
		kobj_type_ops[obj->type]->on_zero_handles(obj);
	kobj_unref(obj, KOBJ_REF_OTHER);
}

void kobj_unref(struct kobj_object *obj, uint32_t amount)
{
	uint32_t old, now;
	if (amount == KOBJ_REF_HANDLE) {
		old = atomic_load_explicit(&obj->refs, memory_order_relaxed);
		do {
			now = old - KOBJ_REF_HANDLE;
			/* The last handle keeps the object alive while on_zero_handles runs. */
			if (KOBJ_HANDLES(old) == 1u)
				now += KOBJ_REF_OTHER;
		} while (!atomic_compare_exchange_weak_explicit(
		    &obj->refs, &old, now, memory_order_acq_rel, memory_order_relaxed));
		if (KOBJ_LIKELY(KOBJ_HANDLES(old) != 1u))
			return;
		/* Deferred through a per-thread list: a message can hold the last handle of a
		 * channel whose queue holds more handles; a loop, not recursion. */
		obj->next_dead = dead_head;
		dead_head = obj;
		if (dead_busy)
			return;
		dead_busy = true;
		while ((obj = dead_head) != NULL) {
			dead_head = obj->next_dead;
			zero_handles(obj);
		}
		dead_busy = false;
		return;
	}
	old = atomic_fetch_sub_explicit(&obj->refs, amount, memory_order_acq_rel);
	if (old == amount)
		release_half(obj);
}

/* ---- owner accounts ------------------------------------------------------------------------ */

/* Per type: its pool's limit name and what it holds (for messages). */
static const struct {
	const char *limit;
	size_t lim_off;
	const char *what;
} type_pool[KOBJ_TYPE_COUNT] = {
    [KOBJ_TYPE_CHANNEL] = {"K32_KOBJ_MAX_CHANNELS", offsetof(struct kobj_limits, channels),
			   "channels"},
    [KOBJ_TYPE_SOCKET] = {"K32_KOBJ_MAX_SOCKETS", offsetof(struct kobj_limits, sockets), "sockets"},
    [KOBJ_TYPE_EVENT] = {"K32_KOBJ_MAX_EVENTS", offsetof(struct kobj_limits, events), "events"},
    [KOBJ_TYPE_EVENTPAIR] = {"K32_KOBJ_MAX_EVENTPAIRS", offsetof(struct kobj_limits, eventpairs),
			     "event pairs"},
    [KOBJ_TYPE_PORT] = {"K32_KOBJ_MAX_PORTS", offsetof(struct kobj_limits, ports), "ports"},
    [KOBJ_TYPE_FIFO] = {"K32_KOBJ_MAX_FIFOS", offsetof(struct kobj_limits, fifos), "fifos"},
    [KOBJ_TYPE_TIMER] = {"K32_KOBJ_MAX_TIMERS", offsetof(struct kobj_limits, timers), "timers"},
    [KOBJ_TYPE_VMO] = {"K32_KOBJ_MAX_VMOS", offsetof(struct kobj_limits, vmos), "VMOs"},
};

static uint32_t type_pool_size(const struct kobj_node *n, unsigned t)
{
	uint32_t v;
	memcpy(&v, (const uint8_t *)&n->lim + type_pool[t].lim_off, sizeof(v));
	return v;
}

static const char *const charge_name[KOBJ_CHARGE_OBJECTS] = {
    "K32_KOBJ_OWNER_MAX_MESSAGES",     "K32_KOBJ_OWNER_MAX_OBSERVERS",
    "K32_KOBJ_OWNER_MAX_PACKETS",      "K32_KOBJ_OWNER_MAX_MSG_CHUNKS",
    "K32_KOBJ_OWNER_MAX_REGION_BYTES", "K32_KOBJ_OWNER_POOL_PCT of K32_KOBJ_MAX_NAMES"};
static const char *const charge_what[KOBJ_CHARGE_OBJECTS] = {
    "channel messages still queued",
    "wait_async observers armed or queued",
    "user packets queued",
    "message chunks queued (bytes past the inline part)",
    "bytes of socket/fifo rings and VMOs",
    "object names set"};

static struct kobj_account *account_get(struct kobj_node *n)
{
	struct kobj_account *a = kobj_pool_get(&n->account_pool);
	if (a) {
		a->node = n;
		for (unsigned k = 0; k < KOBJ_CHARGE_COUNT; k++) {
			atomic_store(&a->released[k], 0u);
			a->final[k] = 0;
		}
		atomic_store(&a->freed, 0u);
		atomic_store(&a->dead, 0u);
	}
	return a;
}

/* Returns the account to its pool once the owner is gone and every charge is released. */
void kobj_account_try_free(struct kobj_account *a)
{
	for (unsigned k = 0; k < KOBJ_CHARGE_COUNT; k++)
		if (atomic_load(&a->released[k]) != a->final[k])
			return;
	if (atomic_exchange(&a->freed, 1u) != 0)
		return;
	kobj_pool_put(&a->node->account_pool, a);
}

k32_status_t kobj_charge_fail(struct kobj_owner *owner, unsigned kind, uint32_t in_use, uint32_t n)
{
	if (kind < KOBJ_CHARGE_OBJECTS)
		return kobj_fail(owner, K32_ERR_NO_RESOURCES,
				 "%s: %" PRIu32 " %s + %" PRIu32 " more, limit %s=%" PRIu32
				 "; drain or close them or raise "
				 "the limit",
				 owner->name, in_use, charge_what[kind], n, charge_name[kind],
				 owner->node->charge_limit[kind]);
	unsigned t = kind - KOBJ_CHARGE_OBJECTS + 1u;
	if (t >= KOBJ_TYPE_COUNT)
		return K32_ERR_NO_RESOURCES;
	return kobj_fail(
	    owner, K32_ERR_NO_RESOURCES,
	    "%s: %" PRIu32 " %s alive, its share is %" PRIu32 " (K32_KOBJ_OWNER_POOL_PCT=%" PRIu32
	    "%% of %s=%" PRIu32 "); close some or raise the limit",
	    owner->name, in_use, type_pool[t].what,
	    owner->node->charge_limit[KOBJ_CHARGE_OBJECTS + t - 1u],
	    owner->node->lim.owner_pool_pct, type_pool[t].limit, type_pool_size(owner->node, t));
}

k32_status_t kobj_admit(struct kobj_owner *owner, uint8_t type, uint32_t handles,
			struct kobj_account **acct)
{
	*acct = NULL;
	if (KOBJ_UNLIKELY(!kobj_owner_has_room(owner, handles)))
		return kobj_fail(owner, K32_ERR_NO_RESOURCES,
				 "%s: handle table full (%" PRIu32
				 " of K32_KOBJ_MAX_HANDLES=%" PRIu32 "); close "
				 "handles or raise the limit",
				 owner->name, owner->used, owner->cap);
	return kobj_charge(owner, KOBJ_CHARGE_OBJECTS + type - 1u, 1u, acct);
}

k32_status_t kobj_pool_empty(struct kobj_owner *owner, uint8_t type, struct kobj_account *acct)
{
	kobj_release(acct, KOBJ_CHARGE_OBJECTS + type - 1u, 1u);
	return kobj_fail(owner, K32_ERR_NO_MEMORY,
			 "%s: all %s=%" PRIu32
			 " %s of node %s in use; close some or raise the limit",
			 owner->name, type_pool[type].limit, type_pool_size(owner->node, type),
			 type_pool[type].what, owner->node->name);
}

/* The owner is going: publish its charges; the account lives until they are released. */
static void account_close(struct kobj_owner *owner)
{
	struct kobj_account *a = owner->acct;
	if (!a)
		return;
	owner->acct = NULL;
	for (unsigned k = 0; k < KOBJ_CHARGE_COUNT; k++)
		a->final[k] = owner->charged[k];
	atomic_store(&a->dead, 1u);
	kobj_account_try_free(a);
}

/* ---- handle tables ----------------------------------------------------------------------- */

void kobj_owner_init(struct kobj_owner *owner, struct kobj_node *node, const char *name,
		     uint32_t cap)
{
	if (cap == 0 || cap > node->lim.handles)
		cap = node->lim.handles;
	owner->node = node;
	owner->name = name ? name : "owner";
	owner->cap = cap;
	owner->used = 0;
	owner->torn_down = false;
	owner->last_err.status = K32_OK;
	owner->last_err.module = "kobj";
	owner->last_err.msg[0] = '\0';
	owner->acct = account_get(node);
	for (unsigned k = 0; k < KOBJ_CHARGE_COUNT; k++)
		owner->charged[k] = 0;
	/* Each table starts its generations at a different point, so a handle value copied
	 * from another owner's table almost never names a live slot here (BAD_HANDLE). */
	uint32_t seed = (atomic_fetch_add(&node->owners_made, 1u) + 1u) * 0x9e3779b1u;
	for (uint32_t i = 0; i < K32_KOBJ_MAX_HANDLES; i++) {
		uint32_t gen = (seed + i * 0x2545u) & KOBJ_GEN_MASK;
		atomic_init(&owner->slots[i].obj, NULL);
		atomic_init(&owner->slots[i].gen, gen ? gen : 1);
		atomic_init(&owner->slots[i].rights, (i + 1 < cap) ? i + 2 : 0);
	}
	owner->free_head = 1;
	atomic_init(&owner->gate, 0u);
}

uint32_t kobj_owner_handle_count(const struct kobj_owner *owner)
{
	return owner->used;
}

const char *kobj_owner_last_error(const struct kobj_owner *owner)
{
	return owner->last_err.msg;
}

bool kobj_owner_has_room(const struct kobj_owner *owner, uint32_t n)
{
	return !owner->torn_down && owner->cap - owner->used >= n;
}

k32_status_t kobj_handle_install(struct kobj_owner *owner, struct kobj_object *obj, uint32_t rights,
				 kobj_handle_t *out)
{
	if (KOBJ_UNLIKELY(owner->free_head == 0 || owner->torn_down)) {
		kobj_unref(obj, KOBJ_REF_HANDLE);
		return kobj_fail(owner, K32_ERR_NO_RESOURCES,
				 "%s: handle table full (%" PRIu32
				 " of K32_KOBJ_MAX_HANDLES=%" PRIu32 "); close "
				 "handles or raise the limit",
				 owner->name, owner->used, owner->cap);
	}
	uint32_t idx = owner->free_head - 1;
	struct kobj_slot *s = &owner->slots[idx];
	owner->free_head = KOBJ_LD(s->rights);
	KOBJ_ST(s->obj, obj);
	KOBJ_ST(s->rights, rights);
	owner->used++;
	*out = (KOBJ_LD(s->gen) << KOBJ_SLOT_BITS) | idx;
	return K32_OK;
}

static inline uint32_t gen_next(uint32_t gen)
{
	gen = (gen + 1u) & KOBJ_GEN_MASK;
	return gen ? gen : 1u;
}

/* Lets a wait that the owner's thread is registering finish, so the cancellation that follows
 * finds its observer (see kobj_gate_enter). Called after the slot's generation changed. */
static void gate_pass(struct kobj_owner *owner)
{
	unsigned spins = 0;
	while (KOBJ_UNLIKELY(atomic_load_explicit(&owner->gate, memory_order_seq_cst) != 0)) {
		cpu_relax();
		if (++spins >= 256) {
			k32_plat()->task_yield();
			spins = 0;
		}
	}
}

static void slot_free(struct kobj_owner *owner, uint32_t idx)
{
	struct kobj_slot *s = &owner->slots[idx];
	KOBJ_ST(s->obj, NULL);
	atomic_store_explicit(&s->gen, gen_next(KOBJ_LD(s->gen)), memory_order_seq_cst);
	atomic_store_explicit(&s->rights, owner->free_head, memory_order_release);
	owner->free_head = idx + 1;
	owner->used--;
	gate_pass(owner);
}

/* Cancels observers registered through (owner, h). */
static void cancel_for_handle(struct kobj_object *obj, const struct kobj_owner *owner,
			      kobj_handle_t h)
{
	if (KOBJ_LIKELY(atomic_load_explicit(&obj->obs, memory_order_relaxed) == NULL))
		return;
	kobj_lock(&obj->core->lock);
	struct kobj_obs *o = atomic_load_explicit(&obj->obs, memory_order_relaxed), *next;
	for (; o; o = next) {
		next = o->next;
		if (o->owner != owner || o->handle != h)
			continue;
		kobj_obs_unlink(obj, o);
		o->canceled = 1;
		if (o->kind == KOBJ_OBS_WAIT)
			kobj_waiter_wake(((struct kobj_wait_node *)o)->w);
		else
			kobj_port_obs_cancel(o);
	}
	kobj_unlock(&obj->core->lock);
}

void kobj_handle_detach(struct kobj_owner *owner, kobj_handle_t h)
{
	struct kobj_object *obj = kobj_handle_obj(owner, h);
	slot_free(owner, h & KOBJ_SLOT_MASK);
	cancel_for_handle(obj, owner, h);
}

k32_status_t kobj_handle_close(struct kobj_owner *owner, kobj_handle_t h)
{
	struct kobj_object *obj = NULL;
	if (h == KOBJ_HANDLE_INVALID)
		return K32_OK;
	k32_status_t st = kobj_lookup(owner, h, 0, 0, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	slot_free(owner, h & KOBJ_SLOT_MASK);
	cancel_for_handle(obj, owner, h);
	kobj_unref(obj, KOBJ_REF_HANDLE);
	return K32_OK;
}

static k32_status_t reduce_rights(struct kobj_owner *owner, uint32_t have, uint32_t want,
				  uint32_t *out)
{
	if (want == KOBJ_RIGHT_SAME_RIGHTS) {
		*out = have;
		return K32_OK;
	}
	if (KOBJ_UNLIKELY(want & ~have))
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: rights 0x%" PRIx32
				 " are not a subset of the handle's 0x%" PRIx32,
				 owner->name, want, have);
	*out = want;
	return K32_OK;
}

k32_status_t kobj_handle_duplicate(struct kobj_owner *owner, kobj_handle_t h, uint32_t rights,
				   kobj_handle_t *out)
{
	struct kobj_object *obj = NULL;
	uint32_t r = 0;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_DUPLICATE, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	st = reduce_rights(owner, kobj_handle_rights(owner, h), rights, &r);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	atomic_fetch_add_explicit(&obj->refs, KOBJ_REF_HANDLE, memory_order_relaxed);
	return kobj_handle_install(owner, obj, r, out);
}

k32_status_t kobj_handle_replace(struct kobj_owner *owner, kobj_handle_t h, uint32_t rights,
				 kobj_handle_t *out)
{
	struct kobj_object *obj = NULL;
	uint32_t r = 0;
	k32_status_t st = kobj_lookup(owner, h, 0, 0, &obj);
	if (st != K32_OK)
		return st;
	st = reduce_rights(owner, kobj_handle_rights(owner, h), rights, &r);
	if (st != K32_OK) {
		kobj_handle_close(owner, h);
		return st;
	}
	/* Same slot, new generation: the old value goes stale in one step. */
	uint32_t idx = h & KOBJ_SLOT_MASK;
	struct kobj_slot *s = &owner->slots[idx];
	atomic_store_explicit(&s->gen, gen_next(KOBJ_LD(s->gen)), memory_order_seq_cst);
	KOBJ_ST(s->rights, r);
	gate_pass(owner);
	cancel_for_handle(obj, owner, h);
	*out = (KOBJ_LD(s->gen) << KOBJ_SLOT_BITS) | idx;
	return K32_OK;
}

k32_status_t kobj_handle_transfer(struct kobj_owner *from, kobj_handle_t h, struct kobj_owner *to,
				  kobj_handle_t *out)
{
	struct kobj_object *obj;
	k32_status_t st = kobj_lookup(from, h, 0, 0, &obj);
	if (st != K32_OK)
		return st;
	if (to->node != from->node)
		return kobj_fail(from, K32_ERR_INVALID_ARGS,
				 "%s: cannot transfer a handle to %s of another node (%s, %s); "
				 "objects never leave their node",
				 from->name, to->name, from->node->name, to->node->name);
	if (!kobj_owner_has_room(to, 1))
		return kobj_fail(from, K32_ERR_NO_RESOURCES,
				 "%s: handle table full (%" PRIu32
				 " of K32_KOBJ_MAX_HANDLES=%" PRIu32 "); close "
				 "handles or raise the limit",
				 to->name, to->used, to->cap);
	uint32_t rights = kobj_handle_rights(from, h);
	kobj_handle_detach(from, h);
	return kobj_handle_install(to, obj, rights, out);
}

void kobj_owner_fini(struct kobj_owner *owner)
{
	for (uint32_t i = 0; i < owner->cap; i++) {
		struct kobj_slot *s = &owner->slots[i];
		if (KOBJ_LD(s->obj))
			kobj_handle_close(owner, (KOBJ_LD(s->gen) << KOBJ_SLOT_BITS) | i);
	}
	owner->torn_down = true;
	owner->free_head = 0;
	account_close(owner);
}

k32_status_t kobj_object_get_info(struct kobj_owner *owner, kobj_handle_t h, struct kobj_info *out)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_INSPECT, &obj);
	if (st != K32_OK)
		return st;
	memset(out, 0, sizeof(*out));
	out->type = obj->type;
	out->rights = kobj_handle_rights(owner, h);
	kobj_lock(&obj->core->lock);
	out->signals = kobj_sig(obj);
	out->handles = KOBJ_HANDLES(atomic_load(&obj->refs));
	if (kobj_type_ops[obj->type]->queued)
		out->queued = kobj_type_ops[obj->type]->queued(obj);
	if (kobj_type_ops[obj->type]->capacity)
		out->capacity = kobj_type_ops[obj->type]->capacity(obj);
	kobj_unlock(&obj->core->lock);
	if (obj->type == KOBJ_TYPE_TIMER) {
		extern uint64_t kobj_timer_fired(struct kobj_object * obj);
		out->timer_fired = kobj_timer_fired(obj);
	}
	return K32_OK;
}

/* ---- names and properties ---------------------------------------------------------------- */

/*
 * Object names: a small pool (K32_KOBJ_MAX_NAMES) searched linearly, so an unnamed object
 * costs nothing (one flag byte in its header). Charged to the owner that set the name,
 * released when the name is removed or the object destroyed.
 */
static int name_find(const struct kobj_node *n, const struct kobj_object *obj)
{
	for (uint32_t i = 0; i < n->lim.names; i++)
		if (n->names[i].obj == obj)
			return (int)i;
	return -1;
}

/* names_lock held. */
static void name_free(struct kobj_node *n, int i)
{
	struct kobj_account *a = n->names[i].acct;
	((struct kobj_object *)n->names[i].obj)->named = 0;
	n->names[i].obj = NULL;
	n->names[i].acct = NULL;
	n->names_used--;
	kobj_release(a, KOBJ_CHARGE_NAMES, 1u);
}

static void names_drop(struct kobj_node *n, struct kobj_object *obj)
{
	kobj_lock(&n->names_lock);
	int i = name_find(n, obj);
	if (i >= 0)
		name_free(n, i);
	kobj_unlock(&n->names_lock);
}

static k32_status_t name_set(struct kobj_owner *owner, struct kobj_object *obj, const char *v,
			     uint32_t size)
{
	struct kobj_node *n = obj->core->node;
	uint32_t len = 0;
	while (len < size && len < KOBJ_MAX_NAME_LEN - 1 && v[len])
		len++;
	kobj_lock(&n->names_lock);
	int i = obj->named ? name_find(n, obj) : -1;
	if (len == 0) {
		if (i >= 0)
			name_free(n, i);
		kobj_unlock(&n->names_lock);
		return K32_OK;
	}
	if (i < 0) {
		kobj_unlock(&n->names_lock);
		struct kobj_account *a;
		k32_status_t st = kobj_charge(owner, KOBJ_CHARGE_NAMES, 1u, &a);
		if (st != K32_OK)
			return st;
		kobj_lock(&n->names_lock);
		i = name_find(n, NULL);
		if (i < 0) {
			kobj_unlock(&n->names_lock);
			kobj_release(a, KOBJ_CHARGE_NAMES, 1u);
			return kobj_fail(owner, K32_ERR_NO_MEMORY,
					 "%s: all K32_KOBJ_MAX_NAMES=%" PRIu32
					 " object names of node %s in use; clear some or raise the "
					 "limit",
					 owner->name, n->lim.names, n->name);
		}
		n->names[i].obj = obj;
		n->names[i].acct = a;
		obj->named = 1;
		n->names_used++;
	}
	memcpy(n->names[i].name, v, len);
	n->names[i].name[len] = '\0';
	kobj_unlock(&n->names_lock);
	return K32_OK;
}

static void name_get(const struct kobj_object *obj, char *out)
{
	struct kobj_node *n = obj->core->node;
	out[0] = '\0';
	kobj_lock(&n->names_lock);
	int i = obj->named ? name_find(n, obj) : -1;
	if (i >= 0)
		memcpy(out, n->names[i].name, KOBJ_MAX_NAME_LEN);
	kobj_unlock(&n->names_lock);
}

uint32_t kobj_names_used(struct kobj_node *n)
{
	kobj_lock(&n->names_lock);
	uint32_t c = n->names_used;
	kobj_unlock(&n->names_lock);
	return c;
}

static k32_status_t property(struct kobj_owner *owner, kobj_handle_t h, uint32_t prop, void *get,
			     const void *set, uint32_t size)
{
	struct kobj_object *obj = NULL;
	k32_status_t st =
	    kobj_lookup(owner, h, 0, set ? KOBJ_RIGHT_SET_PROPERTY : KOBJ_RIGHT_GET_PROPERTY, &obj);
	if (st != K32_OK)
		return st;
	switch (prop) {
	case KOBJ_PROP_NAME:
		if (set)
			return name_set(owner, obj, set, size);
		if (!get)
			return K32_ERR_INVALID_ARGS;
		if (size < KOBJ_MAX_NAME_LEN)
			return kobj_fail(owner, K32_ERR_BUFFER_TOO_SMALL,
					 "%s: get_property(NAME) into %" PRIu32 " bytes, needs "
					 "KOBJ_MAX_NAME_LEN=%u",
					 owner->name, size, KOBJ_MAX_NAME_LEN);
		name_get(obj, get);
		return K32_OK;
	case KOBJ_PROP_SOCKET_RX_THRESHOLD:
	case KOBJ_PROP_SOCKET_TX_THRESHOLD: {
		if (obj->type != KOBJ_TYPE_SOCKET)
			return kobj_fail(owner, K32_ERR_WRONG_TYPE,
					 "%s: socket threshold property %" PRIu32
					 " on an object of type %u",
					 owner->name, prop, obj->type);
		if (size != sizeof(uint32_t))
			return kobj_fail(
			    owner, K32_ERR_INVALID_ARGS,
			    "%s: socket threshold property takes 4 bytes, not %" PRIu32,
			    owner->name, size);
		uint32_t v = 0;
		if (set)
			memcpy(&v, set, sizeof(v));
		st = kobj_socket_threshold(obj, prop, set ? &v : NULL, &v);
		if (st != K32_OK)
			return kobj_fail(
			    owner, st, "%s: socket threshold %" PRIu32 " over the ring's capacity",
			    owner->name, v);
		if (get)
			memcpy(get, &v, sizeof(v));
		return K32_OK;
	}
	case KOBJ_PROP_TIMER_SLACK: {
		if (obj->type != KOBJ_TYPE_TIMER)
			return kobj_fail(owner, K32_ERR_WRONG_TYPE,
					 "%s: timer slack property on an object of type %u",
					 owner->name, obj->type);
		if (size != sizeof(int64_t))
			return kobj_fail(
			    owner, K32_ERR_INVALID_ARGS,
			    "%s: timer slack property takes 8 bytes (int64_t ns), not %" PRIu32,
			    owner->name, size);
		int64_t v = 0;
		if (set)
			memcpy(&v, set, sizeof(v));
		st = kobj_timer_slack(obj, set ? &v : NULL, &v);
		if (st != K32_OK)
			return kobj_fail(owner, st, "%s: timer slack %lld ns must be >= 0",
					 owner->name, (long long)v);
		if (get)
			memcpy(get, &v, sizeof(v));
		return K32_OK;
	}
	default:
		return kobj_fail(owner, K32_ERR_NOT_FOUND,
				 "%s: no property %" PRIu32 " (NAME=3, SOCKET_RX_THRESHOLD=12, "
				 "SOCKET_TX_THRESHOLD=13, TIMER_SLACK=32)",
				 owner->name, prop);
	}
}

k32_status_t kobj_object_get_property(struct kobj_owner *owner, kobj_handle_t h, uint32_t prop,
				      void *value, uint32_t size)
{
	if (!value)
		return K32_ERR_INVALID_ARGS;
	return property(owner, h, prop, value, NULL, size);
}

k32_status_t kobj_object_set_property(struct kobj_owner *owner, kobj_handle_t h, uint32_t prop,
				      const void *value, uint32_t size)
{
	static const char empty[1] = {'\0'};
	if (!value && size)
		return K32_ERR_INVALID_ARGS;
	return property(owner, h, prop, NULL, value ? value : empty, size);
}

/* ---- observers and signals --------------------------------------------------------------- */

void kobj_obs_link(struct kobj_object *obj, struct kobj_obs *o)
{
	struct kobj_obs *head = atomic_load_explicit(&obj->obs, memory_order_relaxed);
	o->prev = NULL;
	o->next = head;
	if (head)
		head->prev = o;
	atomic_store_explicit(&obj->obs, o, memory_order_relaxed);
	o->linked = 1;
}

void kobj_obs_unlink(struct kobj_object *obj, struct kobj_obs *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else
		atomic_store_explicit(&obj->obs, o->next, memory_order_relaxed);
	if (o->next)
		o->next->prev = o->prev;
	o->next = o->prev = NULL;
	o->linked = 0;
}

static void obs_fire(struct kobj_object *obj, struct kobj_obs *o, uint32_t sig)
{
	kobj_obs_unlink(obj, o);
	if (o->kind == KOBJ_OBS_WAIT) {
		struct kobj_wait_node *n = (struct kobj_wait_node *)o;
		n->observed = sig;
		n->fired = 1;
		kobj_waiter_wake(n->w);
	} else {
		kobj_port_obs_fire(o, sig);
	}
}

void kobj_signal_locked(struct kobj_object *obj, uint32_t clear, uint32_t set)
{
	uint32_t old = atomic_load_explicit(&obj->signals, memory_order_relaxed);
	uint32_t now = (old & ~clear) | set;
	if (now != old)
		atomic_store_explicit(&obj->signals, now, memory_order_release);
	struct kobj_obs *o = atomic_load_explicit(&obj->obs, memory_order_relaxed), *next;
	if (KOBJ_LIKELY(o == NULL) || now == old)
		return;
	for (; o; o = next) {
		next = o->next;
		if (o->mask & now)
			obs_fire(obj, o, now);
	}
}

void kobj_obs_cancel_all_locked(struct kobj_object *obj)
{
	struct kobj_obs *o;
	while ((o = atomic_load_explicit(&obj->obs, memory_order_relaxed)) != NULL) {
		kobj_obs_unlink(obj, o);
		o->canceled = 1;
		if (o->kind == KOBJ_OBS_WAIT)
			kobj_waiter_wake(((struct kobj_wait_node *)o)->w);
		else
			kobj_port_obs_cancel(o);
	}
}

k32_status_t kobj_object_signal(struct kobj_owner *owner, kobj_handle_t h, uint32_t clear,
				uint32_t set)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_SIGNAL, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	const struct kobj_type_ops *ops = kobj_type_ops[obj->type];
	uint32_t allowed = ops->user_signals;
	if (obj->type == KOBJ_TYPE_TIMER && (set & KOBJ_SIG_SIGNALED))
		allowed &= ~KOBJ_SIG_SIGNALED; /* a timer's SIGNALED is only cleared by hand */
	if (KOBJ_UNLIKELY((clear | set) & ~allowed))
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: object_signal bits 0x%" PRIx32
				 " not allowed on type %u (allowed 0x%" PRIx32 ")",
				 owner->name, (clear | set) & ~allowed, obj->type, allowed);
	if (!(clear | set))
		return K32_OK;
	kobj_lock(&obj->core->lock);
	kobj_signal_locked(obj, clear, set);
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

k32_status_t kobj_object_signal_peer(struct kobj_owner *owner, kobj_handle_t h, uint32_t clear,
				     uint32_t set)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_SIGNAL_PEER, &obj);
	if (st != K32_OK)
		return st;
	uint32_t allowed = kobj_type_ops[obj->type]->peer_signals;
	if (!obj->peer)
		return K32_ERR_NOT_SUPPORTED;
	if ((clear | set) & ~allowed)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: signal_peer bits 0x%" PRIx32
				 " not allowed on type %u (allowed 0x%" PRIx32 ")",
				 owner->name, (clear | set) & ~allowed, obj->type, allowed);
	kobj_lock(&obj->core->lock);
	if (obj->peer->closed) {
		kobj_unlock(&obj->core->lock);
		return K32_ERR_PEER_CLOSED;
	}
	kobj_signal_locked(obj->peer, clear, set);
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

/* ---- waiters ----------------------------------------------------------------------------- */

/* ---- sleepers and deferred wake-ups ----------------------------------------------------- */

_Thread_local unsigned kobj_tls_depth;
_Thread_local unsigned kobj_tls_nwake;
static _Thread_local struct kobj_sleeper *wake_q[16];

/* A sleeper of the instance: a returned one, else the next never-used one, whose mutex and
 * condition are made now (so an instance whose waits never sleep writes none). */
static struct kobj_sleeper *sleeper_get(struct kobj_node *n)
{
	kobj_lock(&n->sleeper_lock);
	struct kobj_sleeper *sl = n->sleeper_free;
	bool fresh = false;
	if (sl) {
		n->sleeper_free = sl->next;
	} else if (n->sleepers_fresh < n->lim.sleepers) {
		sl = &n->sleepers[n->sleepers_fresh++];
		fresh = true;
	}
	kobj_unlock(&n->sleeper_lock);
	if (fresh) {
		k32_plat()->mutex_init(&sl->m);
		k32_plat()->cond_init(&sl->c);
	}
	return sl;
}

static void sleeper_put(struct kobj_node *n, struct kobj_sleeper *sl)
{
	kobj_lock(&n->sleeper_lock);
	sl->next = n->sleeper_free;
	n->sleeper_free = sl;
	kobj_unlock(&n->sleeper_lock);
}

/* Node teardown (no thread waits on the instance any more). */
static void sleepers_fini(struct kobj_node *n)
{
	for (uint32_t i = 0; i < n->sleepers_fresh; i++) {
		k32_plat()->cond_fini(&n->sleepers[i].c);
		k32_plat()->mutex_fini(&n->sleepers[i].m);
	}
	n->sleepers_fresh = 0;
	n->sleeper_free = NULL;
}

static void sleeper_kick(struct kobj_sleeper *sl)
{
	const struct k32_platform_ops *p = k32_plat();
	/* Lock/unlock orders this after the waiter's check of its state (no lost wake-up);
	 * the signal itself needs no lock. */
	p->mutex_lock(&sl->m);
	p->mutex_unlock(&sl->m);
	p->cond_signal(&sl->c); /* one waiter per sleeper */
}

void kobj_flush_wakes(void)
{
	while (kobj_tls_nwake) {
		struct kobj_sleeper *sl = wake_q[--kobj_tls_nwake];
		sleeper_kick(sl);
	}
}

void kobj_waiter_wake(struct kobj_waiter *w)
{
	int old = atomic_exchange_explicit(&w->state, KOBJ_W_DONE, memory_order_acq_rel);
	if (old != KOBJ_W_SLEEPING)
		return;
	if (kobj_tls_nwake < sizeof(wake_q) / sizeof(wake_q[0]))
		wake_q[kobj_tls_nwake++] = w->sl;
	else
		sleeper_kick(w->sl); /* queue full: wake now, under the lock (rare) */
}

static int64_t deadline_us(kobj_time_t deadline)
{
	if (deadline == KOBJ_TIME_INFINITE)
		return K32_FOREVER;
	if (deadline <= 0)
		return 0;
	if (deadline > KOBJ_TIME_INFINITE - 999)
		return K32_FOREVER;
	return (deadline + 999) / 1000;
}

k32_status_t kobj_waiter_block(struct kobj_node *n, struct kobj_waiter *w, kobj_time_t deadline)
{
	uint32_t budget = atomic_load_explicit(&n->spin_ns, memory_order_relaxed);
	if (budget && n->core_count > 1) {
		kobj_time_t start = kobj_now_ns();
		for (unsigned i = 1;; i++) {
			if (atomic_load_explicit(&w->state, memory_order_acquire) == KOBJ_W_DONE)
				return K32_OK;
			cpu_relax();
			if ((i & 63u) == 0) {
				kobj_time_t now = kobj_now_ns();
				if (now - start >= (kobj_time_t)budget || now >= deadline)
					break;
			}
		}
	}
	const struct k32_platform_ops *p = k32_plat();
	struct kobj_sleeper *sl = sleeper_get(n);
	if (KOBJ_UNLIKELY(!sl)) {
		/* All K32_KOBJ_MAX_SLEEPERS in use: poll (correct, slower). */
		while (atomic_load(&w->state) != KOBJ_W_DONE) {
			if (deadline != KOBJ_TIME_INFINITE && kobj_now_ns() >= deadline)
				return K32_ERR_TIMED_OUT;
			p->sleep_us(100);
		}
		return K32_OK;
	}
	k32_status_t res = K32_OK;
	int expect = KOBJ_W_WAITING;
	int64_t dl = deadline_us(deadline);
	p->mutex_lock(&sl->m);
	w->sl = sl;
	if (atomic_compare_exchange_strong(&w->state, &expect, KOBJ_W_SLEEPING)) {
		while (atomic_load(&w->state) != KOBJ_W_DONE) {
			if (p->cond_wait(&sl->c, &sl->m, dl) == K32_ERR_TIMED_OUT &&
			    atomic_load(&w->state) != KOBJ_W_DONE) {
				res = K32_ERR_TIMED_OUT;
				break;
			}
		}
	}
	p->mutex_unlock(&sl->m);
	sleeper_put(n, sl);
	return res;
}

static void node_init(struct kobj_wait_node *n, struct kobj_waiter *w, struct kobj_object *obj,
		      const struct kobj_owner *owner, kobj_handle_t h, uint32_t mask)
{
	memset(n, 0, sizeof(*n));
	n->obs.kind = KOBJ_OBS_WAIT;
	n->obs.mask = mask;
	n->obs.owner = owner;
	n->obs.handle = h;
	n->w = w;
	n->obj = obj;
}

k32_status_t kobj_object_wait_one(struct kobj_owner *owner, kobj_handle_t h, uint32_t signals,
				  kobj_time_t deadline, uint32_t *out_observed)
{
	struct kobj_object *obj = NULL;
	uint32_t sig, dummy;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_WAIT, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	if (!out_observed)
		out_observed = &dummy;
	if (KOBJ_UNLIKELY(obj->type == KOBJ_TYPE_PORT))
		return K32_ERR_NOT_SUPPORTED;
	/* Fast path: already active. No lock, no scheduler. The slot is read again after the
	 * signal word: if another thread closed h meanwhile, the word may be that of a dead
	 * object, so the wait counts as canceled. */
	sig = kobj_sig(obj);
	if (KOBJ_LIKELY(sig & signals)) {
		if (KOBJ_UNLIKELY(KOBJ_LD(owner->slots[h & KOBJ_SLOT_MASK].gen) !=
				  (h >> KOBJ_SLOT_BITS))) {
			*out_observed = KOBJ_SIG_HANDLE_CLOSED;
			return K32_ERR_CANCELED;
		}
		*out_observed = sig;
		return K32_OK;
	}
	if (deadline <= 0) {
		*out_observed = sig;
		return K32_ERR_TIMED_OUT;
	}

	struct kobj_waiter w;
	struct kobj_wait_node n;
	atomic_init(&w.state, KOBJ_W_WAITING);
	node_init(&n, &w, obj, owner, h, signals);
	if (KOBJ_UNLIKELY(!kobj_gate_enter(owner, &h, &obj, 1))) {
		*out_observed = KOBJ_SIG_HANDLE_CLOSED; /* closed by another thread just now */
		return K32_ERR_CANCELED;
	}
	kobj_ref_other(obj);
	kobj_lock(&obj->core->lock);
	sig = kobj_sig(obj);
	if (sig & signals) {
		kobj_unlock(&obj->core->lock);
		kobj_gate_leave(owner);
		kobj_unref(obj, KOBJ_REF_OTHER);
		*out_observed = sig;
		return K32_OK;
	}
	kobj_obs_link(obj, &n.obs);
	kobj_unlock(&obj->core->lock);
	kobj_gate_leave(owner);

	st = kobj_waiter_block(owner->node, &w, deadline);

	kobj_lock(&obj->core->lock);
	if (n.obs.linked)
		kobj_obs_unlink(obj, &n.obs);
	sig = kobj_sig(obj);
	kobj_unlock(&obj->core->lock);
	kobj_unref(obj, KOBJ_REF_OTHER);

	if (n.obs.canceled) {
		*out_observed = sig | KOBJ_SIG_HANDLE_CLOSED;
		return K32_ERR_CANCELED;
	}
	if (n.fired) {
		*out_observed = n.observed;
		return K32_OK;
	}
	*out_observed = sig;
	return (sig & signals) ? K32_OK : K32_ERR_TIMED_OUT;
}

k32_status_t kobj_object_wait_many(struct kobj_owner *owner, struct kobj_wait_item *items,
				   uint32_t count, kobj_time_t deadline)
{
	struct kobj_object *objs[K32_KOBJ_WAIT_MANY_MAX];
	struct kobj_wait_node nodes[K32_KOBJ_WAIT_MANY_MAX];
	struct kobj_waiter w;
	uint32_t i, linked = 0;
	bool any = false, canceled = false;
	k32_status_t st;

	if (count > K32_KOBJ_WAIT_MANY_MAX)
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: wait_many of %" PRIu32
				 " items, limit K32_KOBJ_WAIT_MANY_MAX=%u; use a "
				 "port for more",
				 owner->name, count, K32_KOBJ_WAIT_MANY_MAX);
	if (count > 0 && !items)
		return K32_ERR_INVALID_ARGS;
	for (i = 0; i < count; i++) {
		st = kobj_lookup(owner, items[i].handle, 0, KOBJ_RIGHT_WAIT, &objs[i]);
		if (st != K32_OK)
			return st;
		if (objs[i]->type == KOBJ_TYPE_PORT)
			return K32_ERR_NOT_SUPPORTED;
	}
	for (i = 0; i < count; i++) {
		items[i].pending = kobj_sig(objs[i]);
		any |= (items[i].pending & items[i].waitfor) != 0;
	}
	if (any) {
		/* As in wait_one: a handle closed meanwhile by another thread cancels. */
		for (i = 0; i < count; i++)
			if (KOBJ_UNLIKELY(
				KOBJ_LD(owner->slots[items[i].handle & KOBJ_SLOT_MASK].gen) !=
				(items[i].handle >> KOBJ_SLOT_BITS))) {
				items[i].pending = KOBJ_SIG_HANDLE_CLOSED;
				return K32_ERR_CANCELED;
			}
		return K32_OK;
	}
	if (deadline <= 0 || count == 0) {
		if (count == 0 && deadline > 0 && deadline != KOBJ_TIME_INFINITE) {
			/* Zircon allows a pure sleep with zero items. */
			kobj_time_t now;
			while ((now = kobj_now_ns()) < deadline)
				k32_plat()->sleep_us((uint64_t)(deadline - now) / 1000u + 1u);
		}
		return K32_ERR_TIMED_OUT;
	}

	kobj_handle_t hs[K32_KOBJ_WAIT_MANY_MAX];
	for (i = 0; i < count; i++)
		hs[i] = items[i].handle;
	if (KOBJ_UNLIKELY(!kobj_gate_enter(owner, hs, objs, count))) {
		/* Another thread closed one of them just now: it is canceled, as if it had been
		 * closed while we slept. */
		for (i = 0; i < count; i++) {
			struct kobj_object *o = NULL;
			items[i].pending =
			    kobj_lookup(owner, hs[i], 0, 0, &o) == K32_OK && o == objs[i]
				? kobj_sig(o)
				: KOBJ_SIG_HANDLE_CLOSED;
		}
		return K32_ERR_CANCELED;
	}
	atomic_init(&w.state, KOBJ_W_WAITING);
	for (i = 0; i < count; i++) {
		struct kobj_object *obj = objs[i];
		node_init(&nodes[i], &w, obj, owner, items[i].handle, items[i].waitfor);
		kobj_ref_other(obj);
		kobj_lock(&obj->core->lock);
		uint32_t sig = kobj_sig(obj);
		if (sig & items[i].waitfor) {
			kobj_unlock(&obj->core->lock);
			kobj_unref(obj, KOBJ_REF_OTHER);
			any = true;
			break;
		}
		kobj_obs_link(obj, &nodes[i].obs);
		kobj_unlock(&obj->core->lock);
		linked++;
	}
	kobj_gate_leave(owner);
	st = any ? K32_OK : kobj_waiter_block(owner->node, &w, deadline);
	for (i = 0; i < linked; i++) {
		struct kobj_object *obj = objs[i];
		kobj_lock(&obj->core->lock);
		if (nodes[i].obs.linked)
			kobj_obs_unlink(obj, &nodes[i].obs);
		kobj_unlock(&obj->core->lock);
		canceled |= nodes[i].obs.canceled != 0;
	}
	any = false;
	for (i = 0; i < count; i++) {
		items[i].pending = kobj_sig(objs[i]);
		if (i < linked && nodes[i].fired)
			items[i].pending |= nodes[i].observed;
		if (i < linked && nodes[i].obs.canceled)
			items[i].pending |= KOBJ_SIG_HANDLE_CLOSED;
		any |= (items[i].pending & items[i].waitfor) != 0;
	}
	for (i = 0; i < linked; i++)
		kobj_unref(objs[i], KOBJ_REF_OTHER);
	if (canceled)
		return K32_ERR_CANCELED;
	(void)st;
	return any ? K32_OK : K32_ERR_TIMED_OUT;
}
