/*
 * kobj_channel.c - channels: bidirectional message pipes that carry bytes and handles.
 *
 * Storage. A channel pair is one pool block (shared lock + two endpoints, ~104 B on 32-bit).
 * A queued message is a header from the message pool (K32_KOBJ_MAX_MESSAGES) holding the
 * first K32_KOBJ_MSG_INLINE_BYTES inline and the handles in flight; longer messages chain
 * chunks from the chunk pool. Bytes are copied once on write (outside the channel lock) and
 * once on read (outside the lock); the lock covers only linking and signal updates.
 *
 * Each endpoint's queue is bounded (K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS / _BYTES): a write into a
 * full queue returns SHOULD_WAIT and deasserts WRITABLE on the writer until the reader drains
 * one message (a deliberate deviation from Zircon, whose channels are always writable).
 */
#include <inttypes.h>

#include "kobj/kobj_int.h"

struct kobj_chunk {
	struct kobj_chunk *next;
	uint8_t data[K32_KOBJ_MSG_CHUNK_BYTES];
};

struct kobj_msg_handle {
	struct kobj_object *obj;
	uint32_t rights;
};

struct kobj_msg {
	struct kobj_msg *next;	   /* queue link (free-list link when free) */
	struct kobj_chunk *chunks; /* bytes past the inline part */
	struct kobj_account *acct; /* the writer's account (charged one message) */
	uint32_t len;		   /* bytes */
	uint32_t nh;		   /* handles */
	struct kobj_msg_handle h[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES];
	uint8_t inl[K32_KOBJ_MSG_INLINE_BYTES];
};

struct kobj_channel {
	struct kobj_object hdr;
	struct kobj_msg *head, *tail; /* messages queued for this endpoint to read */
	uint32_t count;		      /* messages queued */
	uint32_t bytes;		      /* bytes queued */
};

struct kobj_channel_pair {
	struct kobj_core core;
	struct kobj_channel ep[2];
};

/* The memory target: a channel endpoint with an empty queue under 128 bytes on a
 * 32-bit target (it is 52: a 104-byte pair; see src/kobj/kobj_layout.sh). */
_Static_assert(sizeof(void *) > 4 || sizeof(struct kobj_channel_pair) <= 2 * 128,
	       "a channel endpoint must stay under 128 bytes on 32-bit targets");

#define CH_RIGHTS (KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO | KOBJ_RIGHT_SIGNAL | KOBJ_RIGHT_SIGNAL_PEER)

void kobj_channel_setup(struct kobj_node *n, struct kobj_carve *c)
{
	const struct kobj_limits *lim = &n->lim;
	size_t pe = sizeof(struct kobj_channel_pair), me = sizeof(struct kobj_msg),
	       ce = sizeof(struct kobj_chunk);
	kobj_pool_setup(&n->chan_pool, kobj_carve(c, lim->channels, pe), pe, lim->channels,
			"K32_KOBJ_MAX_CHANNELS");
	kobj_pool_setup(&n->msg_pool, kobj_carve(c, lim->messages, me), me, lim->messages,
			"K32_KOBJ_MAX_MESSAGES");
	kobj_pool_setup(&n->chunk_pool, kobj_carve(c, lim->msg_chunks, ce), ce, lim->msg_chunks,
			"K32_KOBJ_MSG_CHUNKS");
	/* the cycle guard's scratch: what a walk has seen and still has to visit */
	n->walk_seen = kobj_carve(c, 2 * lim->channels, sizeof(struct kobj_object *));
	n->walk_stack = kobj_carve(c, 2 * lim->channels, sizeof(struct kobj_object *));
}

static inline struct kobj_channel *ch(struct kobj_object *o)
{
	return (struct kobj_channel *)o;
}

/* Frees a message; its handles (if release) are dropped as closed. */
static void msg_free(struct kobj_node *node, struct kobj_msg *m, bool release)
{
	struct kobj_chunk *c = m->chunks, *next;
	kobj_release(m->acct, KOBJ_CHARGE_MESSAGES, 1u);
	if (KOBJ_UNLIKELY(c != NULL)) {
		uint32_t n = 0;
		for (; c; c = next, n++) {
			next = c->next;
			kobj_pool_put(&node->chunk_pool, c);
		}
		kobj_release(m->acct, KOBJ_CHARGE_CHUNKS, n);
	}
	if (release)
		for (uint32_t i = 0; i < m->nh; i++)
			kobj_unref(m->h[i].obj, KOBJ_REF_HANDLE);
	kobj_pool_put(&node->msg_pool, m);
}

static void ch_on_zero(struct kobj_object *obj)
{
	struct kobj_channel *c = ch(obj);
	kobj_lock(&obj->core->lock);
	struct kobj_msg *m = c->head;
	c->head = c->tail = NULL;
	c->count = c->bytes = 0;
	if (!obj->peer->closed)
		kobj_signal_locked(obj->peer, KOBJ_SIG_WRITABLE, KOBJ_SIG_PEER_CLOSED);
	kobj_unlock(&obj->core->lock);
	while (m) {
		struct kobj_msg *next = m->next;
		msg_free(obj->core->node, m, true);
		m = next;
	}
}

static void ch_destroy(struct kobj_object *obj)
{
	struct kobj_channel *first = ch(obj) - obj->side;
	kobj_pool_put(&obj->core->node->chan_pool,
		      (uint8_t *)first - offsetof(struct kobj_channel_pair, ep));
}

static uint32_t ch_queued(struct kobj_object *obj)
{
	return ch(obj)->count;
}

static uint32_t ch_capacity(struct kobj_object *obj)
{
	(void)obj;
	return K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS;
}

const struct kobj_type_ops kobj_channel_ops = {
    .on_zero_handles = ch_on_zero,
    .destroy = ch_destroy,
    .default_rights = CH_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL,
    .peer_signals = KOBJ_SIG_USER_ALL,
    .queued = ch_queued,
    .capacity = ch_capacity,
};

k32_status_t kobj_channel_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out0,
				 kobj_handle_t *out1)
{
	if (opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: channel_create opts 0x%" PRIx32 ", must be 0", owner->name,
				 opts);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_CHANNEL, 2, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_channel_pair *p = kobj_pool_get(&owner->node->chan_pool);
	if (!p)
		return kobj_pool_empty(owner, KOBJ_TYPE_CHANNEL, acct);
	kobj_core_init(&p->core, owner->node, 2u, acct);
	for (int i = 0; i < 2; i++) {
		kobj_object_init(&p->ep[i].hdr, KOBJ_TYPE_CHANNEL, &p->core, KOBJ_SIG_WRITABLE);
		p->ep[i].hdr.side = (uint8_t)i;
		p->ep[i].hdr.peer = &p->ep[!i].hdr;
		p->ep[i].head = p->ep[i].tail = NULL;
		p->ep[i].count = p->ep[i].bytes = 0;
	}
	kobj_handle_install(owner, &p->ep[0].hdr, CH_RIGHTS, out0);
	kobj_handle_install(owner, &p->ep[1].hdr, CH_RIGHTS, out1);
	return K32_OK;
}

/* Drops every listed handle that is live (the sender loses them whatever happens), except
 * the channel's own handle, which stays usable. */
static void close_list(struct kobj_owner *owner, kobj_handle_t self, const kobj_handle_t *handles,
		       uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (handles[i] != self)
			kobj_handle_close(owner, handles[i]);
}

/*
 * Cycle guard. A channel endpoint sent into a queue that it can itself reach (its queue holds
 * an endpoint whose queue holds ... the destination) would keep the whole ring alive with no
 * handle left outside: a leak no teardown could undo. Writes that carry channel endpoints are
 * serialised by the instance's xfer_lock (only they add such edges) and walk the graph,
 * bounded by the channel pool, with the instance's scratch arrays, before enqueueing. Lock
 * order: xfer_lock -> pair locks (one at a time).
 */
static bool reaches(struct kobj_node *n, struct kobj_object *from, const struct kobj_object *target)
{
	uint32_t top = 0, seen = 0, cap = 2 * n->lim.channels;
	struct kobj_object **stack = n->walk_stack, **walk_seen = n->walk_seen;
	stack[top++] = from;
	walk_seen[seen++] = from;
	while (top) {
		struct kobj_object *e = stack[--top];
		if (e == target)
			return true;
		kobj_lock(&e->core->lock);
		for (struct kobj_msg *m = ch(e)->head; m; m = m->next) {
			for (uint32_t i = 0; i < m->nh; i++) {
				struct kobj_object *f = m->h[i].obj;
				uint32_t k;
				if (f->type != KOBJ_TYPE_CHANNEL)
					continue;
				for (k = 0; k < seen && walk_seen[k] != f; k++) {
				}
				if (k < seen || seen == cap)
					continue;
				walk_seen[seen++] = f;
				stack[top++] = f;
			}
		}
		kobj_unlock(&e->core->lock);
	}
	return false;
}

/* Chunks a message of len bytes needs past its inline part. */
static inline uint32_t chunks_for(uint32_t len)
{
	return len <= K32_KOBJ_MSG_INLINE_BYTES
		   ? 0u
		   : (len - K32_KOBJ_MSG_INLINE_BYTES + K32_KOBJ_MSG_CHUNK_BYTES - 1u) /
			 K32_KOBJ_MSG_CHUNK_BYTES;
}

/* Copies len bytes into a fresh message (header + chunks) charged to acct (released with it,
 * also when this fails). NULL when a pool is spent. */
static struct kobj_msg *msg_build(struct kobj_node *node, const uint8_t *src, uint32_t len,
				  struct kobj_account *acct)
{
	struct kobj_msg *m = kobj_pool_get(&node->msg_pool);
	if (!m) {
		kobj_release(acct, KOBJ_CHARGE_MESSAGES, 1u);
		if (len > K32_KOBJ_MSG_INLINE_BYTES)
			kobj_release(acct, KOBJ_CHARGE_CHUNKS, chunks_for(len));
		return NULL;
	}
	m->next = NULL;
	m->chunks = NULL;
	m->acct = acct;
	m->len = len;
	m->nh = 0;
	uint32_t n = len < K32_KOBJ_MSG_INLINE_BYTES ? len : K32_KOBJ_MSG_INLINE_BYTES;
	if (n)
		memcpy(m->inl, src, n);
	struct kobj_chunk **link = &m->chunks;
	for (uint32_t off = n, got = 0; off < len; got++) {
		struct kobj_chunk *c = kobj_pool_get(&node->chunk_pool);
		if (!c) {
			kobj_release(acct, KOBJ_CHARGE_CHUNKS, chunks_for(len) - got);
			msg_free(node, m, false); /* releases the message and the `got` chunks */
			return NULL;
		}
		uint32_t k =
		    len - off < K32_KOBJ_MSG_CHUNK_BYTES ? len - off : K32_KOBJ_MSG_CHUNK_BYTES;
		memcpy(c->data, src + off, k);
		c->next = NULL;
		*link = c;
		link = &c->next;
		off += k;
	}
	return m;
}

static void msg_copy_out(const struct kobj_msg *m, uint8_t *dst)
{
	uint32_t n = m->len < K32_KOBJ_MSG_INLINE_BYTES ? m->len : K32_KOBJ_MSG_INLINE_BYTES;
	if (n)
		memcpy(dst, m->inl, n);
	const struct kobj_chunk *c = m->chunks;
	for (uint32_t off = n; off < m->len; c = c->next) {
		uint32_t k = m->len - off < K32_KOBJ_MSG_CHUNK_BYTES ? m->len - off
								     : K32_KOBJ_MSG_CHUNK_BYTES;
		memcpy(dst + off, c->data, k);
		off += k;
	}
}

static inline bool queue_full(const struct kobj_channel *c)
{
	return c->count >= K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS ||
	       c->bytes >= K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES;
}

/* Validates the handle list: live, TRANSFER, not the channel itself, no repeats. */
static k32_status_t check_list(struct kobj_owner *owner, kobj_handle_t self,
			       const kobj_handle_t *handles, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct kobj_object *o;
		if (handles[i] == self)
			return kobj_fail(owner, K32_ERR_NOT_SUPPORTED,
					 "%s: channel_write lists the channel's own handle",
					 owner->name);
		k32_status_t st = kobj_lookup(owner, handles[i], 0, KOBJ_RIGHT_TRANSFER, &o);
		if (st != K32_OK)
			return kobj_fail(
			    owner, st, "%s: channel_write handle #%" PRIu32 " (0x%" PRIx32 "): %s",
			    owner->name, i, handles[i],
			    st == K32_ERR_ACCESS_DENIED ? "no TRANSFER right"
							: "not a live handle");
		for (uint32_t j = 0; j < i; j++)
			if (handles[j] == handles[i])
				return kobj_fail(owner, K32_ERR_BAD_HANDLE,
						 "%s: channel_write lists handle 0x%" PRIx32
						 " twice",
						 owner->name, handles[i]);
	}
	return K32_OK;
}

k32_status_t kobj_channel_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
				const void *bytes, uint32_t len, const kobj_handle_t *handles,
				uint32_t handle_count)
{
	struct kobj_object *obj = NULL;
	bool xfer = false;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_CHANNEL, KOBJ_RIGHT_WRITE, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK || opts != 0 || handle_count)) {
		if (st == K32_OK && opts != 0)
			st = K32_ERR_INVALID_ARGS;
		if (st == K32_OK && handle_count > K32_KOBJ_CHANNEL_MAX_MSG_HANDLES)
			st = kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				       "%s: message with %" PRIu32 " handles, limit "
				       "K32_KOBJ_CHANNEL_MAX_MSG_HANDLES=%u",
				       owner->name, handle_count, K32_KOBJ_CHANNEL_MAX_MSG_HANDLES);
		if (st == K32_OK && !handles)
			st = K32_ERR_INVALID_ARGS;
		if (st == K32_OK)
			st = check_list(owner, h, handles, handle_count);
		for (uint32_t i = 0; st == K32_OK && i < handle_count; i++) {
			struct kobj_object *x = kobj_handle_obj(owner, handles[i]);
			if (x->type != KOBJ_TYPE_CHANNEL)
				continue;
			if (!xfer) {
				kobj_lock(&owner->node->xfer_lock);
				xfer = true;
			}
			if (x == obj || reaches(owner->node, x, obj->peer))
				st = kobj_fail(owner, K32_ERR_NOT_SUPPORTED,
					       "%s: channel_write of handle 0x%" PRIx32
					       " would put a channel "
					       "inside its own queue (a cycle that could never be "
					       "freed)",
					       owner->name, handles[i]);
		}
		if (st != K32_OK) {
			if (xfer)
				kobj_unlock(&owner->node->xfer_lock);
			if (handles && handle_count <= 64)
				close_list(owner, h, handles, handle_count);
			return st;
		}
	}
	if (KOBJ_UNLIKELY(len > K32_KOBJ_CHANNEL_MAX_MSG_BYTES || (len && !bytes))) {
		if (xfer)
			kobj_unlock(&owner->node->xfer_lock);
		close_list(owner, h, handles, handle_count);
		if (len && !bytes)
			return K32_ERR_INVALID_ARGS;
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: message of %" PRIu32
				 " bytes, limit K32_KOBJ_CHANNEL_MAX_MSG_BYTES=%u",
				 owner->name, len, K32_KOBJ_CHANNEL_MAX_MSG_BYTES);
	}
	struct kobj_account *acct;
	st = kobj_charge(owner, KOBJ_CHARGE_MESSAGES, 1u, &acct);
	if (KOBJ_UNLIKELY(len > K32_KOBJ_MSG_INLINE_BYTES) && st == K32_OK) {
		/* Bytes past the inline part sit in chunks: the owner's buffered-memory share. */
		st = kobj_charge(owner, KOBJ_CHARGE_CHUNKS, chunks_for(len), &acct);
		if (st != K32_OK)
			kobj_release(acct, KOBJ_CHARGE_MESSAGES, 1u);
	}
	if (KOBJ_UNLIKELY(st != K32_OK)) {
		/* Over a share while the peer's queue is full anyway: the writer must wait for
		 * the reader first, so that is what it is told (SHOULD_WAIT, WRITABLE off). */
		struct kobj_channel *pq = ch(obj->peer);
		kobj_lock(&obj->core->lock);
		if (!obj->peer->closed &&
		    (queue_full(pq) || pq->bytes + len > K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES)) {
			kobj_signal_locked(obj, KOBJ_SIG_WRITABLE, 0);
			st = K32_ERR_SHOULD_WAIT;
		}
		kobj_unlock(&obj->core->lock);
		if (xfer)
			kobj_unlock(&owner->node->xfer_lock);
		close_list(owner, h, handles, handle_count);
		return st;
	}
	struct kobj_msg *m = msg_build(owner->node, bytes, len, acct);
	if (KOBJ_UNLIKELY(!m)) {
		if (xfer)
			kobj_unlock(&owner->node->xfer_lock);
		close_list(owner, h, handles, handle_count);
		return kobj_fail(
		    owner, K32_ERR_NO_MEMORY,
		    "%s: channel message pool of node %s spent (K32_KOBJ_MAX_MESSAGES=%" PRIu32
		    ", K32_KOBJ_MSG_CHUNKS=%" PRIu32 "); drain readers or raise the limits",
		    owner->name, owner->node->name, owner->node->lim.messages,
		    owner->node->lim.msg_chunks);
	}
	for (uint32_t i = 0; i < handle_count; i++) {
		m->h[i].obj = kobj_handle_obj(owner, handles[i]);
		m->h[i].rights = kobj_handle_rights(owner, handles[i]);
		kobj_handle_detach(owner, handles[i]);
	}
	m->nh = handle_count;

	struct kobj_object *peer = obj->peer;
	struct kobj_channel *pc = ch(peer);
	kobj_lock(&obj->core->lock);
	if (KOBJ_UNLIKELY(peer->closed)) {
		st = K32_ERR_PEER_CLOSED;
	} else if (KOBJ_UNLIKELY(queue_full(pc) ||
				 pc->bytes + len > K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES)) {
		kobj_signal_locked(obj, KOBJ_SIG_WRITABLE, 0);
		st = K32_ERR_SHOULD_WAIT;
	} else {
		if (pc->tail)
			pc->tail->next = m;
		else
			pc->head = m;
		pc->tail = m;
		pc->count++;
		pc->bytes += len;
		if (pc->count == 1)
			kobj_signal_locked(peer, 0, KOBJ_SIG_READABLE);
		if (queue_full(pc))
			kobj_signal_locked(obj, KOBJ_SIG_WRITABLE, 0);
	}
	kobj_unlock(&obj->core->lock);
	if (xfer)
		kobj_unlock(&owner->node->xfer_lock);
	if (KOBJ_UNLIKELY(st != K32_OK))
		msg_free(owner->node, m, true);
	return st;
}

/* Unlinks m (which is in c's queue, prev its predecessor or NULL). Lock held. */
static void dequeue_locked(struct kobj_channel *c, struct kobj_msg *prev, struct kobj_msg *m)
{
	struct kobj_object *obj = &c->hdr;
	if (prev)
		prev->next = m->next;
	else
		c->head = m->next;
	if (c->tail == m)
		c->tail = prev;
	c->count--;
	c->bytes -= m->len;
	if (c->count == 0)
		kobj_signal_locked(obj, KOBJ_SIG_READABLE, 0);
	/* The writer regains WRITABLE as soon as the queue has room again. */
	if (!obj->peer->closed && !(kobj_sig(obj->peer) & KOBJ_SIG_WRITABLE) && !queue_full(c))
		kobj_signal_locked(obj->peer, 0, KOBJ_SIG_WRITABLE);
}

/* Copies m out and installs its handles (room checked), then frees it. */
static void deliver(struct kobj_owner *owner, struct kobj_msg *m, void *bytes,
		    kobj_handle_t *handles)
{
	if (m->len)
		msg_copy_out(m, bytes);
	for (uint32_t i = 0; i < m->nh; i++)
		kobj_handle_install(owner, m->h[i].obj, m->h[i].rights, &handles[i]);
	msg_free(owner->node, m, false);
}

k32_status_t kobj_channel_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       void *bytes, kobj_handle_t *handles, uint32_t bytes_cap,
			       uint32_t handles_cap, uint32_t *out_actual_bytes,
			       uint32_t *out_actual_handles)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_CHANNEL, KOBJ_RIGHT_READ, &obj);
	if (KOBJ_UNLIKELY(st != K32_OK))
		return st;
	if (KOBJ_UNLIKELY(opts & ~KOBJ_CHANNEL_READ_MAY_DISCARD))
		return K32_ERR_INVALID_ARGS;
	struct kobj_channel *c = ch(obj);
	kobj_lock(&obj->core->lock);
	struct kobj_msg *m = c->head;
	if (!m) {
		bool gone = obj->peer->closed;
		kobj_unlock(&obj->core->lock);
		return gone ? K32_ERR_PEER_CLOSED : K32_ERR_SHOULD_WAIT;
	}
	if (out_actual_bytes)
		*out_actual_bytes = m->len;
	if (out_actual_handles)
		*out_actual_handles = m->nh;
	if (KOBJ_UNLIKELY(m->len > bytes_cap || m->nh > handles_cap || (m->len && !bytes) ||
			  (m->nh && !handles))) {
		if (opts & KOBJ_CHANNEL_READ_MAY_DISCARD) {
			dequeue_locked(c, NULL, m);
			kobj_unlock(&obj->core->lock);
			msg_free(owner->node, m, true);
		} else {
			kobj_unlock(&obj->core->lock);
		}
		return K32_ERR_BUFFER_TOO_SMALL;
	}
	if (KOBJ_UNLIKELY(m->nh && !kobj_owner_has_room(owner, m->nh))) {
		kobj_unlock(&obj->core->lock);
		return kobj_fail(owner, K32_ERR_NO_RESOURCES,
				 "%s: message carries %" PRIu32
				 " handles but the table has %" PRIu32 " free of "
				 "K32_KOBJ_MAX_HANDLES=%" PRIu32 "; message kept",
				 owner->name, m->nh, owner->cap - owner->used, owner->cap);
	}
	dequeue_locked(c, NULL, m);
	kobj_unlock(&obj->core->lock);
	deliver(owner, m, bytes, handles);
	return K32_OK;
}

/* Looks for the reply whose first 4 bytes are txid; removes it if it fits. */
static k32_status_t take_reply(struct kobj_owner *owner, struct kobj_object *obj, uint32_t txid,
			       const struct kobj_channel_call_args *a, uint32_t *ab, uint32_t *ah)
{
	struct kobj_channel *c = ch(obj);
	struct kobj_msg *m, *prev = NULL;
	kobj_lock(&obj->core->lock);
	for (m = c->head; m; prev = m, m = m->next) {
		uint32_t id;
		if (m->len < 4)
			continue;
		memcpy(&id, m->inl, 4);
		if (id == txid)
			break;
	}
	if (!m) {
		bool gone = obj->peer->closed;
		kobj_unlock(&obj->core->lock);
		return gone ? K32_ERR_PEER_CLOSED : K32_ERR_SHOULD_WAIT;
	}
	if (ab)
		*ab = m->len;
	if (ah)
		*ah = m->nh;
	if (m->len > a->rd_num_bytes || m->nh > a->rd_num_handles) {
		dequeue_locked(c, prev, m);
		kobj_unlock(&obj->core->lock);
		msg_free(owner->node, m, true);
		return K32_ERR_BUFFER_TOO_SMALL;
	}
	if (m->nh && !kobj_owner_has_room(owner, m->nh)) {
		dequeue_locked(c, prev, m);
		kobj_unlock(&obj->core->lock);
		msg_free(owner->node, m, true);
		return K32_ERR_NO_RESOURCES;
	}
	dequeue_locked(c, prev, m);
	kobj_unlock(&obj->core->lock);
	deliver(owner, m, a->rd_bytes, a->rd_handles);
	return K32_OK;
}

k32_status_t kobj_channel_call(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       kobj_time_t deadline, const struct kobj_channel_call_args *args,
			       uint32_t *out_actual_bytes, uint32_t *out_actual_handles)
{
	struct kobj_object *obj = NULL;
	uint32_t txid;
	k32_status_t st =
	    kobj_lookup(owner, h, KOBJ_TYPE_CHANNEL, KOBJ_RIGHT_READ | KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (!args || args->wr_num_bytes < 4 || !args->wr_bytes || opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: channel_call needs a request of at least 4 bytes (txid)",
				 owner->name);
	memcpy(&txid, args->wr_bytes, 4);
	st = kobj_channel_write(owner, h, 0, args->wr_bytes, args->wr_num_bytes, args->wr_handles,
				args->wr_num_handles);
	if (st != K32_OK)
		return st;
	for (;;) {
		st = take_reply(owner, obj, txid, args, out_actual_bytes, out_actual_handles);
		if (st != K32_ERR_SHOULD_WAIT)
			return st;
		uint32_t seen = 0;
		if (kobj_sig(obj) & KOBJ_SIG_READABLE) {
			/* Queued messages belong to other calls: poll gently until ours comes. */
			if (deadline != KOBJ_TIME_INFINITE && kobj_now_ns() >= deadline)
				return K32_ERR_TIMED_OUT;
			k32_plat()->sleep_us(20);
			continue;
		}
		st = kobj_object_wait_one(owner, h, KOBJ_SIG_READABLE | KOBJ_SIG_PEER_CLOSED,
					  deadline, &seen);
		if (st != K32_OK)
			return st;
	}
}
