/*
 * kobj_timer.c - timers (one-shot and periodic, with slack) and the timer service thread.
 *
 * Design: one service thread ("kobj-timer", started on the first timer_create, stopped by
 * kobj_fini) keeps the armed timers in a list sorted by deadline and sleeps on a platform
 * condition variable until the earliest "latest allowed" time, min(deadline + slack). When it
 * wakes at time W it fires every timer whose deadline is <= W, so a timer never fires early
 * and at most its slack late (plus scheduling latency): slack lets nearby timers coalesce
 * into one wake-up. On the ESP32 the same loop runs as a FreeRTOS task, or is replaced by an
 * esp_timer callback with the same contract.
 *
 * Timer fields (deadline, period, slack, armed, fired) are guarded by the service mutex;
 * the signal word by the object lock. Lock order: service mutex -> object lock.
 */
#include "kobj/kobj_int.h"

struct kobj_timer {
	struct kobj_object hdr;
	struct kobj_core core;
	struct kobj_timer *next; /* armed list, sorted by deadline */
	kobj_time_t deadline;	 /* next expiry */
	int64_t slack;		 /* ns it may fire late */
	int64_t period;		 /* 0: one-shot */
	uint64_t fired;		 /* expirations so far */
	bool armed;
};

#define TIMER_RIGHTS (KOBJ_RIGHTS_BASIC | KOBJ_RIGHT_WRITE | KOBJ_RIGHT_SIGNAL)

void kobj_timer_setup(struct kobj_node *n, struct kobj_carve *c)
{
	size_t e = sizeof(struct kobj_timer);
	kobj_pool_setup_at(&n->timer_pool, kobj_carve(c, n->lim.timers, e), e, n->lim.timers,
			   "K32_KOBJ_MAX_TIMERS", offsetof(struct kobj_timer, core));
	n->armed_head = NULL;
}

static inline struct kobj_timer *tm(struct kobj_object *o)
{
	return (struct kobj_timer *)o;
}

/* Service mutex held. */
static void list_remove(struct kobj_timer *t)
{
	struct kobj_timer **link;
	for (link = &t->core.node->armed_head; *link; link = &(*link)->next) {
		if (*link == t) {
			*link = t->next;
			break;
		}
	}
	t->next = NULL;
	t->armed = false;
}

static void list_insert(struct kobj_timer *t)
{
	struct kobj_timer **link = &t->core.node->armed_head;
	while (*link && (*link)->deadline <= t->deadline)
		link = &(*link)->next;
	t->next = *link;
	*link = t;
	t->armed = true;
}

static int64_t to_us(kobj_time_t ns)
{
	if (ns == KOBJ_TIME_INFINITE)
		return K32_FOREVER;
	if (ns > KOBJ_TIME_INFINITE - 999)
		return K32_FOREVER;
	return ns <= 0 ? 0 : (ns + 999) / 1000;
}

static void service(void *arg)
{
	const struct k32_platform_ops *p = k32_plat();
	struct kobj_node *n = arg;
	p->mutex_lock(&n->svc_m);
	while (!n->svc_stop) {
		kobj_time_t wake = KOBJ_TIME_INFINITE;
		for (struct kobj_timer *t = n->armed_head; t; t = t->next) {
			kobj_time_t latest = t->deadline > KOBJ_TIME_INFINITE - t->slack
						 ? KOBJ_TIME_INFINITE
						 : t->deadline + t->slack;
			if (latest < wake)
				wake = latest;
		}
		kobj_time_t now = kobj_now_ns();
		if (wake > now) {
			p->cond_wait(&n->svc_c, &n->svc_m, to_us(wake));
			continue;
		}
		/* Fire everything due by now (coalescing the ones whose slack allowed it). */
		while (n->armed_head && n->armed_head->deadline <= now) {
			struct kobj_timer *t = n->armed_head;
			list_remove(t);
			t->fired++;
			kobj_lock(&t->core.lock);
			kobj_signal_locked(&t->hdr, 0, KOBJ_SIG_SIGNALED);
			kobj_unlock(&t->core.lock);
			if (t->period > 0) {
				int64_t behind = now - t->deadline;
				t->deadline += t->period * (behind / t->period + 1);
				list_insert(t);
			}
		}
	}
	p->mutex_unlock(&n->svc_m);
}

static k32_status_t service_start(struct kobj_owner *owner)
{
	struct kobj_node *n = owner->node;
	k32_status_t st = K32_OK;
	kobj_lock(&n->svc_start_lock);
	if (!n->svc_ready) {
		const struct k32_platform_ops *p = k32_plat();
		struct k32_err err;
		if (!n->svc_sync) {
			p->mutex_init(&n->svc_m);
			p->cond_init(&n->svc_c);
			n->svc_sync = true;
		}
		n->svc_stop = false;
		st = p->task_create(&n->svc_task, "kobj-timer", service, n, 0, -1, &err);
		if (st == K32_OK) {
			n->svc_ready = true;
		} else {
			kobj_fail(owner, st, "%s: cannot start the timer thread: %s", owner->name,
				  err.msg);
		}
	}
	kobj_unlock(&n->svc_start_lock);
	return st;
}

/* Stops the instance's service thread and, at node teardown (fini), drops its mutex and
 * condition variable. */
void kobj_timer_stop(struct kobj_node *n, bool fini)
{
	const struct k32_platform_ops *p = k32_plat();
	kobj_lock(&n->svc_start_lock);
	if (n->svc_ready) {
		p->mutex_lock(&n->svc_m);
		n->svc_stop = true;
		p->cond_signal(&n->svc_c);
		p->mutex_unlock(&n->svc_m);
		p->task_join(n->svc_task);
		n->svc_ready = false;
		n->svc_task = NULL;
	}
	if (fini && n->svc_sync) {
		p->cond_fini(&n->svc_c);
		p->mutex_fini(&n->svc_m);
		n->svc_sync = false;
	}
	kobj_unlock(&n->svc_start_lock);
}

static void timer_on_zero(struct kobj_object *obj)
{
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&obj->core->node->svc_m);
	if (tm(obj)->armed)
		list_remove(tm(obj));
	p->mutex_unlock(&obj->core->node->svc_m);
}

static void timer_destroy(struct kobj_object *obj)
{
	kobj_pool_put(&obj->core->node->timer_pool, obj);
}

uint64_t kobj_timer_fired(struct kobj_object *obj);
uint64_t kobj_timer_fired(struct kobj_object *obj)
{
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&obj->core->node->svc_m);
	uint64_t n = tm(obj)->fired;
	p->mutex_unlock(&obj->core->node->svc_m);
	return n;
}

const struct kobj_type_ops kobj_timer_ops = {
    .on_zero_handles = timer_on_zero,
    .destroy = timer_destroy,
    .default_rights = TIMER_RIGHTS,
    .user_signals = KOBJ_SIG_USER_ALL | KOBJ_SIG_SIGNALED,
};

k32_status_t kobj_timer_create(struct kobj_owner *owner, uint32_t opts, uint32_t clock_id,
			       kobj_handle_t *out)
{
	if (opts != 0 || clock_id != KOBJ_CLOCK_MONOTONIC)
		return kobj_fail(owner, K32_ERR_INVALID_ARGS,
				 "%s: timer_create opts 0x%" PRIx32 " clock %" PRIu32
				 "; only 0 and MONOTONIC (0)",
				 owner->name, opts, clock_id);
	struct kobj_account *acct;
	k32_status_t st = kobj_admit(owner, KOBJ_TYPE_TIMER, 1, &acct);
	if (st != K32_OK)
		return st;
	st = service_start(owner);
	if (st != K32_OK) {
		kobj_release(acct, KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_TIMER - 1u, 1u);
		return st;
	}
	struct kobj_timer *t = kobj_pool_get(&owner->node->timer_pool);
	if (!t)
		return kobj_pool_empty(owner, KOBJ_TYPE_TIMER, acct);
	kobj_core_init(&t->core, owner->node, 1u, acct);
	kobj_object_init(&t->hdr, KOBJ_TYPE_TIMER, &t->core, 0);
	t->next = NULL;
	t->deadline = 0;
	t->slack = t->period = 0;
	t->fired = 0;
	t->armed = false;
	return kobj_handle_install(owner, &t->hdr, TIMER_RIGHTS, out);
}

k32_status_t kobj_timer_set(struct kobj_owner *owner, kobj_handle_t h, kobj_time_t deadline,
			    int64_t slack, int64_t period)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_TIMER, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	if (slack < 0 || period < 0)
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: timer_set slack %lld / period %lld must be >= 0", owner->name,
				 (long long)slack, (long long)period);
	if (period > 0 && period < 1000)
		return kobj_fail(owner, K32_ERR_OUT_OF_RANGE,
				 "%s: timer period %lld ns under the 1 us minimum", owner->name,
				 (long long)period);
	/* kobj_fini may have stopped the service while timers stayed open: restart it. */
	st = service_start(owner);
	if (st != K32_OK)
		return st;
	struct kobj_timer *t = tm(obj);
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&obj->core->node->svc_m);
	if (t->armed)
		list_remove(t);
	kobj_lock(&t->core.lock);
	kobj_signal_locked(obj, KOBJ_SIG_SIGNALED, 0);
	kobj_unlock(&t->core.lock);
	t->deadline = deadline;
	t->slack = slack;
	t->period = period;
	list_insert(t);
	p->cond_signal(&obj->core->node->svc_c);
	p->mutex_unlock(&obj->core->node->svc_m);
	return K32_OK;
}

k32_status_t kobj_timer_slack(struct kobj_object *obj, const int64_t *set, int64_t *get)
{
	if (set && *set < 0)
		return K32_ERR_OUT_OF_RANGE;
	struct kobj_timer *t = tm(obj);
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&obj->core->node->svc_m);
	if (set) {
		t->slack = *set;
		if (t->armed)
			p->cond_signal(
			    &obj->core->node
				 ->svc_c); /* the service re-reads its latest wake-up time */
	} else {
		*get = t->slack;
	}
	p->mutex_unlock(&obj->core->node->svc_m);
	return K32_OK;
}

k32_status_t kobj_timer_cancel(struct kobj_owner *owner, kobj_handle_t h)
{
	struct kobj_object *obj = NULL;
	k32_status_t st = kobj_lookup(owner, h, KOBJ_TYPE_TIMER, KOBJ_RIGHT_WRITE, &obj);
	if (st != K32_OK)
		return st;
	struct kobj_timer *t = tm(obj);
	const struct k32_platform_ops *p = k32_plat();
	p->mutex_lock(&obj->core->node->svc_m);
	if (t->armed)
		list_remove(t);
	kobj_lock(&t->core.lock);
	kobj_signal_locked(obj, KOBJ_SIG_SIGNALED, 0);
	kobj_unlock(&t->core.lock);
	p->mutex_unlock(&obj->core->node->svc_m);
	return K32_OK;
}
