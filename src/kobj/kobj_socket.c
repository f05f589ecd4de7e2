/*
 * kobj_socket.c - sockets (stream and datagram byte pipes) and fifos (fixed-size elements).
 *
 * Both are a pair of halves sharing one lock; each half owns the ring its reader drains, and
 * a writer fills its peer's ring. The two rings of a pair are one block of the kobj region
 * (K32_KOBJ_REGION_BYTES), taken at create time. Copies happen under the pair's lock: the
 * ring is shared by writer and reader, and the lock is held for the memcpy only.
 *
 * Datagrams are stored as a 4-byte length followed by the bytes. WRITABLE on a half means
 * its peer's ring has room (stream: >= 1 byte; datagram: > 4 bytes; fifo: >= 1 element).
 */
#include "kobj/kobj_int.h"

struct kobj_ring {
	struct kobj_object hdr;
	uint8_t *buf;	    /* ring storage (this half reads it) */
	uint32_t cap;	    /* bytes */
	uint32_t rpos;	    /* read position */
	uint32_t count;	    /* bytes queued */
	uint32_t elem;	    /* fifo element size (0 for sockets) */
	uint8_t dgram;	    /* datagram socket */
	uint8_t shut_write; /* this half may no longer write */
	uint16_t pad;
	uint32_t rx_thr; /* sockets: READ_THRESHOLD at >= this many bytes queued here (0 off) */
	uint32_t tx_thr; /* sockets: WRITE_THRESHOLD at >= this many bytes free in the peer */
};

struct kobj_ring_pair {
	struct kobj_core core;
	struct kobj_ring r[2];
	uint8_t *mem;	  /* region block holding both rings */
	uint32_t mem_len; /* its size */
};

#define SOCK_RIGHTS                                                                                \
	(KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO | KOBJ_RIGHT_SIGNAL | KOBJ_RIGHT_SIGNAL_PEER |         \
	 KOBJ_RIGHT_GET_PROPERTY | KOBJ_RIGHT_SET_PROPERTY)
#define FIFO_RIGHTS                                                                                \
	(KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO | KOBJ_RIGHT_SIGNAL | KOBJ_RIGHT_SIGNAL_PEER)

/* Sockets and fifos: one pool each. */
void kobj_socket_setup(struct kobj_node *n, struct kobj_carve *c)
{
	size_t e = sizeof(struct kobj_ring_pair);
	kobj_pool_setup(&n->sock_pool, kobj_carve(c, n->lim.sockets, e), e, n->lim.sockets,
			"K32_KOBJ_MAX_SOCKETS");
	kobj_pool_setup(&n->fifo_pool, kobj_carve(c, n->lim.fifos, e), e, n->lim.fifos,
			"K32_KOBJ_MAX_FIFOS");
}

static inline struct kobj_ring *rg(struct kobj_object *o)
{
	return (struct kobj_ring *)o;
}

static struct kobj_ring_pair *pair_of(struct kobj_object *obj)
{
	struct kobj_ring *first = rg(obj) - obj->side;
	return (struct kobj_ring_pair *)((uint8_t *)first - offsetof(struct kobj_ring_pair, r));
}

/* ---- ring primitives (lock held) --------------------------------------------------------- */

static void ring_put(struct kobj_ring *r, const uint8_t *src, uint32_t len)
{
	uint32_t w = r->rpos + r->count;
	if (w >= r->cap)
		w -= r->cap;
	uint32_t first = r->cap - w < len ? r->cap - w : len;
	memcpy(r->buf + w, src, first);
	if (len > first)
		memcpy(r->buf, src + first, len - first);
	r->count += len;
}

/* Copies len bytes starting `skip` bytes past the read position. */
static void ring_peek(const struct kobj_ring *r, uint32_t skip, uint8_t *dst, uint32_t len)
{
	uint32_t p = r->rpos + skip;
	if (p >= r->cap)
		p -= r->cap;
	uint32_t first = r->cap - p < len ? r->cap - p : len;
	memcpy(dst, r->buf + p, first);
	if (len > first)
		memcpy(dst + first, r->buf, len - first);
}

static void ring_drop(struct kobj_ring *r, uint32_t len)
{
	r->rpos += len;
	if (r->rpos >= r->cap)
		r->rpos -= r->cap;
	r->count -= len;
	if (r->count == 0)
		r->rpos = 0;
}

/* Room needed for WRITABLE on the writer of ring r. */
static uint32_t writable_min(const struct kobj_ring *r)
{
	if (r->elem)
		return r->elem;
	return r->dgram ? 5u : 1u;
}

/*
 * Socket thresholds: re-derives READ_THRESHOLD / WRITE_THRESHOLD on x. Lock held. A socket
 * with no threshold set skips it with one test.
 */
static void thresholds_slow(struct kobj_ring *x)
{
	struct kobj_ring *pr = rg(x->hdr.peer);
	uint32_t want = 0;
	if (x->rx_thr && x->count >= x->rx_thr)
		want |= KOBJ_SIG_SOCKET_READ_THRESHOLD;
	if (x->tx_thr && !x->shut_write && !x->hdr.peer->closed && pr->cap - pr->count >= x->tx_thr)
		want |= KOBJ_SIG_SOCKET_WRITE_THRESHOLD;
	uint32_t have =
	    kobj_sig(&x->hdr) & (KOBJ_SIG_SOCKET_READ_THRESHOLD | KOBJ_SIG_SOCKET_WRITE_THRESHOLD);
	if (want != have)
		kobj_signal_locked(&x->hdr, have & ~want, want & ~have);
}

static inline void update_thresholds(struct kobj_ring *x)
{
	struct kobj_ring *pr = rg(x->hdr.peer);
	if (KOBJ_UNLIKELY((x->rx_thr | x->tx_thr | pr->rx_thr | pr->tx_thr) != 0)) {
		thresholds_slow(x);
		if (!x->hdr.peer->closed)
			thresholds_slow(pr);
	}
}

k32_status_t kobj_socket_threshold(struct kobj_object *obj, uint32_t prop, const uint32_t *set,
				   uint32_t *get)
{
	struct kobj_ring *x = rg(obj);
	k32_status_t st = K32_OK;
	kobj_lock(&obj->core->lock);
	uint32_t *field = prop == KOBJ_PROP_SOCKET_RX_THRESHOLD ? &x->rx_thr : &x->tx_thr;
	/* rx counts this half's ring, tx the peer's; both have the same capacity. */
	if (set && *set > x->cap)
		st = K32_ERR_INVALID_ARGS;
	else if (set)
		*field = *set;
	else
		*get = *field;
	if (set && st == K32_OK)
		thresholds_slow(x);
	kobj_unlock(&obj->core->lock);
	return st;
}

/* Re-derives WRITABLE on `w` (the writer into its peer's ring). Lock held. */
static void update_writable(struct kobj_ring *w)
{
	struct kobj_ring *pr = rg(w->hdr.peer);
	bool can =
	    !w->shut_write && !w->hdr.peer->closed && pr->cap - pr->count >= writable_min(pr);
	bool has = (kobj_sig(&w->hdr) & KOBJ_SIG_WRITABLE) != 0;
	if (can != has)
		kobj_signal_locked(&w->hdr, can ? 0 : KOBJ_SIG_WRITABLE,
				   can ? KOBJ_SIG_WRITABLE : 0);
}

static void ring_on_zero(struct kobj_object *obj)
{
	struct kobj_ring *r = rg(obj);
	kobj_lock(&obj->core->lock);
	r->count = r->rpos = 0;
	if (!obj->peer->closed) {
		kobj_signal_locked(obj->peer, KOBJ_SIG_WRITABLE, KOBJ_SIG_PEER_CLOSED);
		if (obj->type == KOBJ_TYPE_SOCKET)
			thresholds_slow(rg(obj->peer)); /* no more WRITE_THRESHOLD */
	}
	kobj_unlock(&obj->core->lock);
}

static void ring_destroy(struct kobj_object *obj)
{
	struct kobj_ring_pair *p = pair_of(obj);
	struct kobj_node *n = p->core.node;
	kobj_region_give(n, p->core.acct, p->mem, p->mem_len);
	kobj_pool_put(obj->type == KOBJ_TYPE_SOCKET ? &n->sock_pool : &n->fifo_pool, p);
}

static uint32_t ring_queued(struct kobj_object *obj)
{
	struct kobj_ring *r = rg(obj);
	return r->elem ? r->count / r->elem : r->count;
}

static uint32_t ring_capacity(struct kobj_object *obj)
{
	struct kobj_ring *r = rg(obj);
	return r->elem ? r->cap / r->elem : r->cap;
}

const struct kobj_type_ops kobj_socket_ops = {
    .on_zero_handles = ring_on_zero,
    .destroy = ring_destroy,
    .default_rights = SOCK_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL,
    .peer_signals = KOBJ_SIG_USER_ALL,
    .queued = ring_queued,
    .capacity = ring_capacity,
};

const struct kobj_type_ops kobj_fifo_ops = {
    .on_zero_handles = ring_on_zero,
    .destroy = ring_destroy,
    .default_rights = FIFO_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL,
    .peer_signals = KOBJ_SIG_USER_ALL,
    .queued = ring_queued,
    .capacity = ring_capacity,
};

static k32_status_t pair_create(struct kobj_owner *owner, uint8_t type, uint32_t cap, uint32_t elem,
				uint8_t dgram, uint32_t rights, kobj_handle_t *out0,
				kobj_handle_t *out1)
{
	bool sock = type == KOBJ_TYPE_SOCKET;
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, type, 2, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_pool *pool = sock ? &owner->node->sock_pool : &owner->node->fifo_pool;
	struct kobj_ring_pair *p = kobj_pool_get(pool);
	if (!p)
		return kobj_pool_empty(owner, type, acct);
	p->mem_len = 2 * cap;
	st = kobj_region_take(owner, p->mem_len, sock ? "socket rings" : "fifo rings", &p->mem);
	if (st != K32_OK) {
		kobj_pool_put(pool, p);
		kobj_release(acct, KOBJ_CHARGE_OBJECTS + type - 1u, 1u);
		return st;
	}
	kobj_core_init(&p->core, owner->node, 2u, acct);
	for (int i = 0; i < 2; i++) {
		struct kobj_ring *r = &p->r[i];
		kobj_object_init(&r->hdr, type, &p->core, KOBJ_SIG_WRITABLE);
		r->hdr.side = (uint8_t)i;
		r->hdr.peer = &p->r[!i].hdr;
		r->buf = p->mem + (size_t)i * cap;
		r->cap = cap;
		r->rpos = r->count = 0;
		r->elem = elem;
		r->dgram = dgram;
		r->shut_write = 0;
		r->pad = 0;
		r->rx_thr = r->tx_thr = 0;
	}
	kobj_handle_install(owner, &p->r[0].hdr, rights, out0);
	kobj_handle_install(owner, &p->r[1].hdr, rights, out1);
	return K32_OK;
}

/* ---- socket ------------------------------------------------------------------------------ */

k32_status_t kobj_socket_create(struct kobj_owner *owner, uint32_t opts, uint32_t cap,
				kobj_handle_t *out0, kobj_handle_t *out1)
{
	if (opts & ~KOBJ_SOCKET_DATAGRAM)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: socket_create opts 0x%" PRIx32 " unknown", owner->name, opts);
	if (cap == 0)
		cap = K32_KOBJ_SOCKET_DEFAULT_CAP;
	if (cap < K32_KOBJ_SOCKET_MIN_CAP || cap > K32_KOBJ_SOCKET_MAX_CAP)
		return kobj_fail(
		    owner, K32_ERR_OUT_OF_RANGE,
		    "%s: socket capacity %" PRIu32 " outside K32_KOBJ_SOCKET_MIN_CAP=%u.."
		    "K32_KOBJ_SOCKET_MAX_CAP=%u",
		    owner->name, cap, K32_KOBJ_SOCKET_MIN_CAP, K32_KOBJ_SOCKET_MAX_CAP);
	return pair_create(owner, KOBJ_TYPE_SOCKET, cap, 0, (opts & KOBJ_SOCKET_DATAGRAM) != 0,
			   SOCK_RIGHTS, out0, out1);
}

k32_status_t kobj_socket_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       const void *buf, uint32_t len, uint32_t *out_actual)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_SOCKET, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (opts != 0 || (len && !buf))
		return K32_ERR_INVALID_ARGS;
	struct kobj_ring *w = rg(obj), *r = rg(obj->peer);
	uint32_t n = 0;
	kobj_lock(&obj->core->lock);
	if (w->shut_write) {
		st = K32_ERR_BAD_STATE;
		goto out_unlock;
	}
	if (obj->peer->closed) {
		st = K32_ERR_PEER_CLOSED;
		goto out_unlock;
	}
	uint32_t room = r->cap - r->count;
	bool was_empty = r->count == 0;
	if (r->dgram) {
		if (len > r->cap - 4) {
			kobj_unlock(&obj->core->lock);
			return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
					 "%s: datagram of %" PRIu32
					 " bytes can never fit a %" PRIu32 "-byte socket "
					 "ring (4 bytes go to its length)",
					 owner->name, len, r->cap);
		}
		if (len + 4 > room) {
			st = K32_ERR_SHOULD_WAIT;
			goto out_unlock;
		}
		ring_put(r, (const uint8_t *)&len, 4);
		ring_put(r, buf, len);
		n = len;
	} else {
		if (room == 0) {
			st = K32_ERR_SHOULD_WAIT;
			goto out_unlock;
		}
		n = len < room ? len : room;
		ring_put(r, buf, n);
	}
	if (was_empty && r->count)
		kobj_signal_locked(&r->hdr, 0, KOBJ_SIG_READABLE);
	update_writable(w);
	update_thresholds(w);
out_unlock:
	kobj_unlock(&obj->core->lock);
	if (out_actual)
		*out_actual = n;
	return st;
}

k32_status_t kobj_socket_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts, void *buf,
			      uint32_t cap, uint32_t *out_actual)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_SOCKET, KOBJ_RIGHT_READ, &obj);
	if (st != K32_OK)
		return st;
	if ((opts & ~KOBJ_SOCKET_PEEK) || (cap && !buf))
		return K32_ERR_INVALID_ARGS;
	struct kobj_ring *r = rg(obj);
	uint32_t n = 0;
	kobj_lock(&obj->core->lock);
	if (r->count == 0) {
		st = (obj->peer->closed || rg(obj->peer)->shut_write) ? K32_ERR_PEER_CLOSED
								      : K32_ERR_SHOULD_WAIT;
		goto out_unlock;
	}
	if (r->dgram) {
		uint32_t dlen;
		ring_peek(r, 0, (uint8_t *)&dlen, 4);
		n = dlen < cap ? dlen : cap;
		ring_peek(r, 4, buf, n);
		if (!(opts & KOBJ_SOCKET_PEEK))
			ring_drop(r, 4 + dlen);
	} else {
		n = r->count < cap ? r->count : cap;
		ring_peek(r, 0, buf, n);
		if (!(opts & KOBJ_SOCKET_PEEK))
			ring_drop(r, n);
	}
	if (r->count == 0)
		kobj_signal_locked(obj, KOBJ_SIG_READABLE, 0);
	if (!obj->peer->closed)
		update_writable(rg(obj->peer));
	update_thresholds(r);
out_unlock:
	kobj_unlock(&obj->core->lock);
	if (out_actual)
		*out_actual = n;
	return st;
}

k32_status_t kobj_socket_shutdown(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_SOCKET, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (opts != KOBJ_SOCKET_SHUTDOWN_WRITE)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: socket_shutdown opts 0x%" PRIx32
				 "; only SHUTDOWN_WRITE (1) exists",
				 owner->name, opts);
	kobj_lock(&obj->core->lock);
	rg(obj)->shut_write = 1;
	kobj_signal_locked(obj, KOBJ_SIG_WRITABLE, KOBJ_SIG_SOCKET_WRITE_DISABLED);
	if (!obj->peer->closed)
		kobj_signal_locked(obj->peer, 0, KOBJ_SIG_SOCKET_PEER_WRITE_DISABLED);
	update_thresholds(rg(obj));
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

/* ---- fifo -------------------------------------------------------------------------------- */

k32_status_t kobj_fifo_create(struct kobj_owner *owner, uint32_t elem_count, uint32_t elem_size,
			      uint32_t opts, kobj_handle_t *out0, kobj_handle_t *out1)
{
	if (opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: fifo_create opts 0x%" PRIx32 ", must be 0", owner->name,
				 opts);
	if (elem_count == 0 || elem_size == 0 || (elem_count & (elem_count - 1)) ||
	    (elem_size & 3u) || elem_size > K32_KOBJ_FIFO_MAX_BYTES ||
	    elem_count > K32_KOBJ_FIFO_MAX_BYTES / elem_size)
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: fifo of %" PRIu32 " x %" PRIu32
				 " bytes: count must be a power of 2, size a "
				 "multiple of 4, product <= K32_KOBJ_FIFO_MAX_BYTES=%u",
				 owner->name, elem_count, elem_size, K32_KOBJ_FIFO_MAX_BYTES);
	return pair_create(owner, KOBJ_TYPE_FIFO, elem_count * elem_size, elem_size, 0, FIFO_RIGHTS,
			   out0, out1);
}

k32_status_t kobj_fifo_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t elem_size,
			     const void *data, uint32_t count, uint32_t *out_actual)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_FIFO, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	struct kobj_ring *w = rg(obj), *r = rg(obj->peer);
	if (elem_size != w->elem || count == 0)
		return K32_ERR_OUT_OF_RANGE;
	if (!data)
		return K32_ERR_INVALID_ARGS;
	uint32_t n = 0;
	kobj_lock(&obj->core->lock);
	if (obj->peer->closed) {
		st = K32_ERR_PEER_CLOSED;
		goto out_unlock;
	}
	uint32_t room = (r->cap - r->count) / elem_size;
	if (room == 0) {
		st = K32_ERR_SHOULD_WAIT;
		goto out_unlock;
	}
	n = count < room ? count : room;
	bool was_empty = r->count == 0;
	ring_put(r, data, n * elem_size);
	if (was_empty)
		kobj_signal_locked(&r->hdr, 0, KOBJ_SIG_READABLE);
	update_writable(w);
out_unlock:
	kobj_unlock(&obj->core->lock);
	if (out_actual)
		*out_actual = n;
	return st;
}

k32_status_t kobj_fifo_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t elem_size,
			    void *data, uint32_t count, uint32_t *out_actual)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_FIFO, KOBJ_RIGHT_READ, &obj);
	if (st != K32_OK)
		return st;
	struct kobj_ring *r = rg(obj);
	if (elem_size != r->elem || count == 0)
		return K32_ERR_OUT_OF_RANGE;
	if (!data)
		return K32_ERR_INVALID_ARGS;
	uint32_t n = 0;
	kobj_lock(&obj->core->lock);
	if (r->count == 0) {
		st = obj->peer->closed ? K32_ERR_PEER_CLOSED : K32_ERR_SHOULD_WAIT;
		goto out_unlock;
	}
	uint32_t have = r->count / elem_size;
	n = count < have ? count : have;
	ring_peek(r, 0, data, n * elem_size);
	ring_drop(r, n * elem_size);
	if (r->count == 0)
		kobj_signal_locked(obj, KOBJ_SIG_READABLE, 0);
	if (!obj->peer->closed)
		update_writable(rg(obj->peer));
out_unlock:
	kobj_unlock(&obj->core->lock);
	if (out_actual)
		*out_actual = n;
	return st;
}
