/*
 * kobj_event.c - events and event pairs: objects with a signal word and nothing else.
 *
 * An event carries SIGNALED and the user bits, changed by object_signal. An event pair is
 * two such halves sharing one lock; object_signal_peer changes the other half, and closing
 * the last handle of one half asserts PEER_CLOSED on the other (the liveness token between
 * a pod and the runtime).
 */
#include "kobj/kobj_int.h"

struct kobj_event {
	struct kobj_object hdr;
	struct kobj_core core;
};

struct kobj_eventpair {
	struct kobj_core core;
	struct kobj_object half[2];
};

#define EV_RIGHTS (KOBJ_RIGHTS_BASIC | KOBJ_RIGHT_SIGNAL)
#define EP_RIGHTS (KOBJ_RIGHTS_BASIC | KOBJ_RIGHT_SIGNAL | KOBJ_RIGHT_SIGNAL_PEER)

void kobj_event_setup(struct kobj_node *n, struct kobj_carve *c)
{
	size_t ee = sizeof(struct kobj_event), pe = sizeof(struct kobj_eventpair);
	kobj_pool_setup_at(&n->event_pool, kobj_carve(c, n->lim.events, ee), ee, n->lim.events,
			   "K32_KOBJ_MAX_EVENTS", offsetof(struct kobj_event, core));
	kobj_pool_setup(&n->epair_pool, kobj_carve(c, n->lim.eventpairs, pe), pe, n->lim.eventpairs,
			"K32_KOBJ_MAX_EVENTPAIRS");
}

static void ev_destroy(struct kobj_object *obj)
{
	kobj_pool_put(&obj->core->node->event_pool, obj);
}

static void ep_on_zero(struct kobj_object *obj)
{
	kobj_lock(&obj->core->lock);
	if (!obj->peer->closed)
		kobj_signal_locked(obj->peer, 0, KOBJ_SIG_PEER_CLOSED);
	kobj_unlock(&obj->core->lock);
}

static void ep_destroy(struct kobj_object *obj)
{
	kobj_pool_put(&obj->core->node->epair_pool,
		      (struct kobj_eventpair *)((uint8_t *)(obj - obj->side) -
						offsetof(struct kobj_eventpair, half)));
}

const struct kobj_type_ops kobj_event_ops = {
    .destroy = ev_destroy,
    .default_rights = EV_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL | KOBJ_SIG_SIGNALED,
};

const struct kobj_type_ops kobj_eventpair_ops = {
    .on_zero_handles = ep_on_zero,
    .destroy = ep_destroy,
    .default_rights = EP_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL | KOBJ_SIG_SIGNALED,
    .peer_signals = KOBJ_SIG_USER_ALL | KOBJ_SIG_SIGNALED,
};

k32_status_t kobj_event_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out)
{
	if (opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: event_create opts 0x%" PRIx32 ", must be 0", owner->name,
				 opts);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_EVENT, 1, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_event *e = kobj_pool_get(&owner->node->event_pool);
	if (!e)
		return kobj_pool_empty(owner, KOBJ_TYPE_EVENT, acct);
	kobj_core_init(&e->core, owner->node, 1u, acct);
	kobj_object_init(&e->hdr, KOBJ_TYPE_EVENT, &e->core, 0);
	return kobj_handle_install(owner, &e->hdr, EV_RIGHTS, out);
}

k32_status_t kobj_eventpair_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out0,
				   kobj_handle_t *out1)
{
	if (opts != 0)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: eventpair_create opts 0x%" PRIx32 ", must be 0", owner->name,
				 opts);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_EVENTPAIR, 2, &acct);
	if (st != K32_OK)
		return st;
	struct kobj_eventpair *p = kobj_pool_get(&owner->node->epair_pool);
	if (!p)
		return kobj_pool_empty(owner, KOBJ_TYPE_EVENTPAIR, acct);
	kobj_core_init(&p->core, owner->node, 2u, acct);
	for (int i = 0; i < 2; i++) {
		kobj_object_init(&p->half[i], KOBJ_TYPE_EVENTPAIR, &p->core, 0);
		p->half[i].side = (uint8_t)i;
		p->half[i].peer = &p->half[!i];
	}
	kobj_handle_install(owner, &p->half[0], EP_RIGHTS, out0);
	kobj_handle_install(owner, &p->half[1], EP_RIGHTS, out1);
	return K32_OK;
}
