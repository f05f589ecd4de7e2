/*
 * kobj_port.c - ports (packet queues) and wait_async observers.
 *
 * An observer (struct kobj_port_obs, pool K32_KOBJ_MAX_PORT_OBSERVERS) is taken at
 * wait_async time and embeds the packet it will deliver, so firing it under the source
 * object's lock only links memory it already owns onto the port queue: delivery never
 * allocates and never fails. The observer holds a reference on the port; if the port died
 * meanwhile the observer just returns to its pool. User packets come from a node-wide pool
 * (K32_KOBJ_MAX_USER_PACKETS) with a per-port budget (K32_KOBJ_PORT_USER_BUDGET).
 *
 * Port waiters sit on the port's own observer list; each queued packet wakes exactly one.
 * Lock order: source object lock -> port lock.
 */
#include <inttypes.h>

#include "kobj/kobj_int.h"

enum { ENTRY_USER = 1, ENTRY_OBS = 2 };

struct kobj_port_entry {
	struct kobj_port_entry *next;
	struct kobj_account *acct;	  /* who is charged for it (packet or observer) */
	const struct kobj_object *source; /* object that fired (compared, never dereferenced) */
	uint8_t kind;			  /* ENTRY_* */
	struct kobj_packet pkt;
};

struct kobj_port_obs {
	struct kobj_obs obs;	      /* on the source object's list (first: pool link) */
	struct kobj_port_entry entry; /* the packet it delivers */
	struct kobj_object *port;     /* holds a reference */
	uint32_t opts;
};

struct kobj_port {
	struct kobj_object hdr;
	struct kobj_core core;
	struct kobj_port_entry *head, *tail;
	uint32_t count; /* packets queued */
	uint32_t users; /* user packets queued (budget) */
};

#define PORT_RIGHTS (KOBJ_RIGHTS_BASIC | KOBJ_RIGHTS_IO)

void kobj_port_setup(struct kobj_node *n, struct kobj_carve *c)
{
	const struct kobj_limits *lim = &n->lim;
	size_t pe = sizeof(struct kobj_port), oe = sizeof(struct kobj_port_obs),
	       ue = sizeof(struct kobj_port_entry);
	kobj_pool_setup_at(&n->port_pool, kobj_carve(c, lim->ports, pe), pe, lim->ports,
			   "K32_KOBJ_MAX_PORTS", offsetof(struct kobj_port, core));
	kobj_pool_setup(&n->obs_pool, kobj_carve(c, lim->port_observers, oe), oe,
			lim->port_observers, "K32_KOBJ_MAX_PORT_OBSERVERS");
	kobj_pool_setup(&n->user_pool, kobj_carve(c, lim->user_packets, ue), ue, lim->user_packets,
			"K32_KOBJ_MAX_USER_PACKETS");
}

static inline struct kobj_port *pt(struct kobj_object *o)
{
	return (struct kobj_port *)o;
}

static struct kobj_port_obs *obs_of_entry(struct kobj_port_entry *e)
{
	return (struct kobj_port_obs *)((uint8_t *)e - offsetof(struct kobj_port_obs, entry));
}

/* Returns a dequeued (or never queued) entry to its pool. */
static void entry_free(struct kobj_node *n, struct kobj_port_entry *e)
{
	struct kobj_account *acct = e->acct;
	if (e->kind == ENTRY_USER) {
		kobj_pool_put(&n->user_pool, e);
		kobj_release(acct, KOBJ_CHARGE_PACKETS, 1u);
	} else {
		struct kobj_port_obs *po = obs_of_entry(e);
		struct kobj_object *port = po->port;
		kobj_pool_put(&n->obs_pool, po);
		kobj_release(acct, KOBJ_CHARGE_OBSERVERS, 1u);
		kobj_unref(port, KOBJ_REF_OTHER);
	}
}

/* Appends e and wakes one port waiter. Port lock held. */
static void enqueue_locked(struct kobj_port *p, struct kobj_port_entry *e)
{
	e->next = NULL;
	if (p->tail)
		p->tail->next = e;
	else
		p->head = e;
	p->tail = e;
	p->count++;
	if (p->count == 1)
		atomic_store_explicit(&p->hdr.signals, KOBJ_SIG_READABLE, memory_order_release);
	struct kobj_obs *o = atomic_load_explicit(&p->hdr.obs, memory_order_relaxed);
	if (o) {
		/* One packet releases exactly one waiter: the oldest (list tail). */
		while (o->next)
			o = o->next;
		struct kobj_wait_node *n = (struct kobj_wait_node *)o;
		kobj_obs_unlink(&p->hdr, o);
		n->fired = 1;
		n->observed = KOBJ_SIG_READABLE;
		kobj_waiter_wake(n->w);
	}
}

static struct kobj_port_entry *dequeue_locked(struct kobj_port *p)
{
	struct kobj_port_entry *e = p->head;
	if (!e)
		return NULL;
	p->head = e->next;
	if (!p->head)
		p->tail = NULL;
	p->count--;
	if (e->kind == ENTRY_USER)
		p->users--;
	if (p->count == 0)
		atomic_store_explicit(&p->hdr.signals, 0u, memory_order_release);
	return e;
}

void kobj_port_obs_fire(struct kobj_obs *o, uint32_t observed)
{
	struct kobj_port_obs *po = (struct kobj_port_obs *)o;
	struct kobj_port *p = pt(po->port);
	po->entry.pkt.signal.observed = observed;
	po->entry.pkt.signal.count = 1;
	if (po->opts & KOBJ_WAIT_ASYNC_TIMESTAMP)
		po->entry.pkt.signal.timestamp = (uint64_t)kobj_now_ns();
	kobj_lock(&p->core.lock);
	if (p->hdr.closed) {
		kobj_unlock(&p->core.lock);
		entry_free(p->core.node, &po->entry);
		return;
	}
	enqueue_locked(p, &po->entry);
	kobj_unlock(&p->core.lock);
}

void kobj_port_obs_cancel(struct kobj_obs *o)
{
	struct kobj_port_obs *po = (struct kobj_port_obs *)o;
	entry_free(po->port->core->node, &po->entry);
}

static void port_on_zero(struct kobj_object *obj)
{
	struct kobj_port *p = pt(obj);
	kobj_lock(&p->core.lock);
	struct kobj_port_entry *e = p->head;
	p->head = p->tail = NULL;
	p->count = p->users = 0;
	atomic_store_explicit(&p->hdr.signals, 0u, memory_order_release);
	kobj_unlock(&p->core.lock);
	while (e) {
		struct kobj_port_entry *next = e->next;
		entry_free(p->core.node, e);
		e = next;
	}
}

static void port_destroy(struct kobj_object *obj)
{
	kobj_pool_put(&obj->core->node->port_pool, obj);
}

static uint32_t port_queued(struct kobj_object *obj)
{
	return pt(obj)->count;
}

static uint32_t port_capacity(struct kobj_object *obj)
{
	/* user packets + signal packets of armed observers */
	return K32_KOBJ_PORT_USER_BUDGET + obj->core->node->lim.port_observers;
}

const struct kobj_type_ops kobj_port_ops = {
    .on_zero_handles = port_on_zero,
    .destroy = port_destroy,
    .default_rights = PORT_RIGHTS,
    .queued = port_queued,
    .capacity = port_capacity,
};

k32_status_t kobj_port_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out)
{
	if (opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: port_create opts 0x%" PRIx32 ", must be 0", owner->name,
				 opts);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_PORT, 1, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_port *p = kobj_pool_get(&owner->node->port_pool);
	if (!p)
		return kobj_pool_empty(owner, KOBJ_TYPE_PORT, acct);
	kobj_core_init(&p->core, owner->node, 1u, acct);
	kobj_object_init(&p->hdr, KOBJ_TYPE_PORT, &p->core, 0);
	p->head = p->tail = NULL;
	p->count = p->users = 0;
	return kobj_handle_install(owner, &p->hdr, PORT_RIGHTS, out);
}

k32_status_t kobj_object_wait_async(struct kobj_owner *owner, kobj_handle_t h, kobj_handle_t port,
				    uint64_t key, uint32_t signals, uint32_t opts)
{
	struct kobj_object *obj = NULL, *pobj = NULL;
	k32_status_t st = kobj_lookup(owner, h, 0, KOBJ_RIGHT_WAIT, &obj);
	if (st != K32_OK)
		return st;
	st = kobj_lookup(owner, port, KOBJ_TYPE_PORT, KOBJ_RIGHT_WRITE, &pobj);
	if (st != K32_OK)
		return st;
	if (obj->type == KOBJ_TYPE_PORT)
		return K32_ERR_NOT_SUPPORTED;
	if (opts & ~KOBJ_WAIT_ASYNC_TIMESTAMP)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: wait_async opts 0x%" PRIx32 " unknown", owner->name, opts);
	struct kobj_account *acct;
	st = kobj_charge(owner, KOBJ_CHARGE_OBSERVERS, 1u, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_port_obs *po = kobj_pool_get(&owner->node->obs_pool);
	if (!po) {
		kobj_release(acct, KOBJ_CHARGE_OBSERVERS, 1u);
		return kobj_fail(owner, K32_ERR_NO_MEMORY,
				 "%s: all K32_KOBJ_MAX_PORT_OBSERVERS=%" PRIu32
				 " observers of node %s armed or "
				 "queued; drain ports or raise the limit",
				 owner->name, owner->node->lim.port_observers, owner->node->name);
	}
	memset(po, 0, sizeof(*po));
	po->entry.acct = acct;
	po->obs.kind = KOBJ_OBS_PORT;
	po->obs.mask = signals;
	po->obs.owner = owner;
	po->obs.handle = h;
	po->entry.kind = ENTRY_OBS;
	po->entry.source = obj;
	po->entry.pkt.key = key;
	po->entry.pkt.type = KOBJ_PKT_TYPE_SIGNAL_ONE;
	po->entry.pkt.signal.trigger = signals;
	po->port = pobj;
	po->opts = opts;
	kobj_ref_other(pobj);
	kobj_lock(&obj->core->lock);
	uint32_t sig = kobj_sig(obj);
	if (sig & signals)
		kobj_port_obs_fire(&po->obs, sig);
	else
		kobj_obs_link(obj, &po->obs);
	kobj_unlock(&obj->core->lock);
	return K32_OK;
}

k32_status_t kobj_port_queue(struct kobj_owner *owner, kobj_handle_t h,
			     const struct kobj_packet *pkt)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_PORT, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (!pkt)
		return K32_ERR_INVALID_ARGS;
	struct kobj_port *p = pt(obj);
	struct kobj_account *acct;
	st = kobj_charge(owner, KOBJ_CHARGE_PACKETS, 1u, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_port_entry *e = kobj_pool_get(&owner->node->user_pool);
	if (!e) {
		kobj_release(acct, KOBJ_CHARGE_PACKETS, 1u);
		return kobj_fail(owner, K32_ERR_NO_MEMORY,
				 "%s: all K32_KOBJ_MAX_USER_PACKETS=%" PRIu32
				 " user packets of node %s queued; drain ports or raise the limit",
				 owner->name, owner->node->lim.user_packets, owner->node->name);
	}
	e->kind = ENTRY_USER;
	e->acct = acct;
	e->source = NULL;
	e->pkt = *pkt;
	e->pkt.type = KOBJ_PKT_TYPE_USER;
	kobj_lock(&p->core.lock);
	if (p->users >= K32_KOBJ_PORT_USER_BUDGET) {
		kobj_unlock(&p->core.lock);
		kobj_pool_put(&owner->node->user_pool, e);
		kobj_release(acct, KOBJ_CHARGE_PACKETS, 1u);
		return kobj_fail(owner, K32_ERR_SHOULD_WAIT,
				 "%s: port holds K32_KOBJ_PORT_USER_BUDGET=%u user packets; wait "
				 "for the reader",
				 owner->name, (unsigned)K32_KOBJ_PORT_USER_BUDGET);
	}
	p->users++;
	enqueue_locked(p, e);
	kobj_unlock(&p->core.lock);
	return K32_OK;
}

k32_status_t kobj_port_wait(struct kobj_owner *owner, kobj_handle_t h, kobj_time_t deadline,
			    struct kobj_packet *out)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_PORT, KOBJ_RIGHT_READ, &obj);
	if (st != K32_OK)
		return st;
	if (!out)
		return K32_ERR_INVALID_ARGS;
	struct kobj_port *p = pt(obj);
	bool last_try = false;
	for (;;) {
		/* Each turn re-checks h under the wait gate (kobj_int.h): a close from another
		 * thread either finds this turn's observer or makes the turn end CANCELED. */
		if (KOBJ_UNLIKELY(!kobj_gate_enter(owner, &h, &obj, 1)))
			return K32_ERR_CANCELED;
		kobj_lock(&p->core.lock);
		struct kobj_port_entry *e = dequeue_locked(p);
		if (e) {
			kobj_unlock(&p->core.lock);
			kobj_gate_leave(owner);
			*out = e->pkt;
			entry_free(owner->node, e);
			return K32_OK;
		}
		if (deadline <= 0 || last_try) {
			kobj_unlock(&p->core.lock);
			kobj_gate_leave(owner);
			return K32_ERR_TIMED_OUT;
		}
		struct kobj_waiter w;
		struct kobj_wait_node n;
		atomic_init(&w.state, KOBJ_W_WAITING);
		memset(&n, 0, sizeof(n));
		n.obs.kind = KOBJ_OBS_WAIT;
		n.obs.mask = KOBJ_SIG_READABLE;
		n.obs.owner = owner;
		n.obs.handle = h;
		n.w = &w;
		n.obj = obj;
		kobj_ref_other(obj);
		kobj_obs_link(obj, &n.obs);
		kobj_unlock(&p->core.lock);
		kobj_gate_leave(owner);
		st = kobj_waiter_block(owner->node, &w, deadline);
		kobj_lock(&p->core.lock);
		if (n.obs.linked)
			kobj_obs_unlink(obj, &n.obs);
		kobj_unlock(&p->core.lock);
		kobj_unref(obj, KOBJ_REF_OTHER);
		if (n.obs.canceled)
			return K32_ERR_CANCELED;
		if (st == K32_ERR_TIMED_OUT && !n.fired)
			last_try = true;
	}
}

k32_status_t kobj_port_cancel(struct kobj_owner *owner, kobj_handle_t h, kobj_handle_t source,
			      uint64_t key)
{
	struct kobj_object *pobj = NULL, *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_PORT, KOBJ_RIGHT_WRITE, &pobj);
	if (st != K32_OK)
		return st;
	st = kobj_lookup(owner, source, 0, KOBJ_RIGHT_WAIT, &obj);
	if (st != K32_OK)
		return st;
	uint32_t removed = 0;
	kobj_lock(&obj->core->lock);
	struct kobj_obs *o = atomic_load_explicit(&obj->obs, memory_order_relaxed), *next;
	for (; o; o = next) {
		next = o->next;
		struct kobj_port_obs *po = (struct kobj_port_obs *)o;
		if (o->kind != KOBJ_OBS_PORT || po->port != pobj || po->entry.pkt.key != key)
			continue;
		kobj_obs_unlink(obj, o);
		kobj_port_obs_cancel(o);
		removed++;
	}
	kobj_unlock(&obj->core->lock);

	struct kobj_port *p = pt(pobj);
	struct kobj_port_entry *drop = NULL, **link;
	kobj_lock(&p->core.lock);
	for (link = &p->head; *link;) {
		struct kobj_port_entry *e = *link;
		if (e->kind == ENTRY_OBS && e->source == obj && e->pkt.key == key) {
			*link = e->next;
			p->count--;
			e->next = drop;
			drop = e;
			removed++;
		} else {
			link = &e->next;
		}
	}
	p->tail = NULL;
	for (struct kobj_port_entry *e = p->head; e; e = e->next)
		p->tail = e;
	if (p->count == 0)
		atomic_store_explicit(&p->hdr.signals, 0u, memory_order_release);
	kobj_unlock(&p->core.lock);
	while (drop) {
		struct kobj_port_entry *after = drop->next;
		entry_free(owner->node, drop);
		drop = after;
	}
	return removed ? K32_OK : K32_ERR_NOT_FOUND;
}
