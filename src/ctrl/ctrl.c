/*
 * ctrl.c - the control plane's loop: store watches as doorbells, dirty bits, periodic
 * resyncs, and the one task that runs the passes.
 *
 * Threads: the store's writers call ctrl_watch_notify (store lock held: it only sets an
 * atomic flag and signals c->cond under c->lock, which is never held across a store or
 * API call). The task drains the watches (events are looked at only to decide which
 * controllers to mark dirty; Node updates that change nothing but heartbeat times are
 * dropped, and pod changes wake the scheduler only when a pod is pending or a bound pod
 * finished), then runs each controller that is dirty or due, with c->run_lock held.
 * ctrl_run_once takes the same run_lock, so a test or CLI pass never overlaps the task's.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_log.h"

/* Passes run in this order, so one turn can go Deployment -> ReplicaSet -> pods -> bound. */
static const uint32_t ctrl_order[CTRL_COUNT] = {
    CTRL_NODE_LIFECYCLE, CTRL_DEPLOYMENT, CTRL_REPLICASET, CTRL_DAEMONSET, CTRL_JOB,
    CTRL_SCHEDULER,	 CTRL_GC,	  CTRL_NAMESPACE,  CTRL_DEVICE,
};

static void (*const ctrl_pass_fn[CTRL_COUNT])(struct ctrl *c) = {
    ctrl_node_pass,  ctrl_deploy_pass, ctrl_rs_pass, ctrl_ds_pass,  ctrl_job_pass,
    ctrl_sched_pass, ctrl_gc_pass,     ctrl_ns_pass, ctrl_dev_pass,
};

static unsigned ctrl_bit_index(uint32_t bit)
{
	unsigned i = 0;
	while (i < 31 && !(bit & (1u << i)))
		i++;
	return i;
}

static uint64_t ctrl_default_now(void *ctx)
{
	(void)ctx;
	return k32_now_us();
}

static uint64_t ctrl_default_wall(void *ctx)
{
	(void)ctx;
	return k32_plat()->wall_s();
}

uint64_t ctrl_now_us(struct ctrl *c)
{
	return c->cfg.now_us(c->cfg.clock_ctx);
}

uint64_t ctrl_wall_s(struct ctrl *c)
{
	return c->cfg.wall_s(c->cfg.clock_ctx);
}

/* Period of controller bit in microseconds. */
static uint64_t ctrl_period_us(const struct ctrl *c, uint32_t bit)
{
	uint32_t s = c->cfg.resync_s;
	if (bit == CTRL_SCHEDULER)
		s = c->cfg.sched_resync_s;
	else if (bit == CTRL_NODE_LIFECYCLE)
		s = c->cfg.node_monitor_s;
	return (uint64_t)s * 1000000u;
}

/* ---- watches --------------------------------------------------------------------------- */

static void ctrl_watch_notify(void *ctx)
{
	struct ctrl_watch *w = ctx;
	struct ctrl *c = w->c;
	atomic_store(&w->pending, true);
	k32_mutex_lock(&c->lock);
	k32_plat()->cond_signal(&c->cond);
	k32_mutex_unlock(&c->lock);
}

static const struct {
	const char *group, *resource;
	uint32_t mask;
} ctrl_watch_defs[CTRL_WATCH_COUNT] = {
    {"", "pods",
     CTRL_SCHEDULER | CTRL_REPLICASET | CTRL_DAEMONSET | CTRL_JOB | CTRL_GC | CTRL_DEVICE},
    {"", "nodes", CTRL_SCHEDULER | CTRL_DAEMONSET | CTRL_NODE_LIFECYCLE},
    {"apps", "replicasets", CTRL_REPLICASET | CTRL_DEPLOYMENT | CTRL_GC},
    {"apps", "deployments", CTRL_DEPLOYMENT | CTRL_GC},
    {"apps", "daemonsets", CTRL_DAEMONSET | CTRL_GC},
    {"batch", "jobs", CTRL_JOB | CTRL_GC},
    {"", "namespaces", CTRL_NAMESPACE},
    {"kube32.io", "devices", CTRL_DEVICE},
};

static k32_status_t ctrl_watch_open(struct ctrl *c, unsigned i, struct k32_err *err)
{
	struct ctrl_watch *w = &c->watches[i];
	struct store_key key = {.group = w->group, .resource = w->resource, .ns = "", .name = ""};
	atomic_store(&w->pending, false);
	return store_watch_open(c->store, &key, 0, ctrl_watch_notify, w, &w->w, err);
}

/* Drops heartbeat-only fields of a node so two versions can be compared. */
static void ctrl_node_strip(cJSON *n)
{
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(n, "metadata"),
						"resourceVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(n, "metadata"),
						"managedFields");
	cJSON *cond;
	cJSON_ArrayForEach(cond, (cJSON *)k32_json_find(n, "status.conditions"))
	{
		cJSON_DeleteItemFromObjectCaseSensitive(cond, "lastHeartbeatTime");
	}
}

bool ctrl_node_changed(const struct store_event *ev)
{
	if (ev->type != STORE_EVENT_MODIFIED || !ev->prev)
		return true;
	cJSON *a = cJSON_Parse(store_obj_data(ev->obj));
	cJSON *b = cJSON_Parse(store_obj_data(ev->prev));
	bool changed = true;
	if (a && b) {
		ctrl_node_strip(a);
		ctrl_node_strip(b);
		changed = !cJSON_Compare(a, b, true);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return changed;
}

/* Whether a parsed pod is bound (spec.nodeName set) / terminal (Succeeded or Failed). */
static bool ctrl_ev_bound(const cJSON *p)
{
	const char *n = ctrl_jstr(p, "spec.nodeName");
	return n && n[0];
}

bool ctrl_pod_sched_relevant(const struct store_event *ev)
{
	if (ev->type == STORE_EVENT_DELETED)
		return true; /* its room is free */
	cJSON *a = cJSON_Parse(store_obj_data(ev->obj));
	cJSON *b = ev->type == STORE_EVENT_MODIFIED && ev->prev
		       ? cJSON_Parse(store_obj_data(ev->prev))
		       : NULL;
	bool rel = true;
	if (a) {
		bool pending = !ctrl_ev_bound(a) && !ctrl_deleting(a) && !ctrl_pod_terminal(a);
		bool freed =
		    ctrl_pod_terminal(a) && ctrl_ev_bound(a) && (!b || !ctrl_pod_terminal(b));
		rel = pending || freed;
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return rel;
}

/* Takes pending events of every watch; returns the controllers to mark dirty. */
static uint32_t ctrl_watch_drain(struct ctrl *c)
{
	uint32_t dirty = 0;
	for (unsigned i = 0; i < CTRL_WATCH_COUNT; i++) {
		struct ctrl_watch *w = &c->watches[i];
		if (!w->w) {
			struct k32_err oerr;
			if (ctrl_watch_open(c, i, &oerr) == K32_OK)
				dirty |= CTRL_ALL;
			continue;
		}
		if (!atomic_exchange(&w->pending, false))
			continue;
		for (;;) {
			struct store_event ev[K32_CTRL_WATCH_BATCH];
			size_t n = 0;
			struct k32_err err;
			k32_status_t st =
			    store_watch_next(w->w, ev, K32_CTRL_WATCH_BATCH, &n, K32_NO_WAIT, &err);
			if (st == K32_ERR_SHOULD_WAIT)
				break;
			if (st) {
				/* COMPACTED (we fell behind) or CANCELED: reopen from now and
				 * treat everything as changed */
				k32_log(K32_LOG_INFO, "ctrl", "watch on %s restarts: %s",
					w->resource, err.msg);
				store_watch_close(w->w);
				w->w = NULL;
				k32_mutex_lock(&c->lock);
				c->stats.watch_restarts++;
				k32_mutex_unlock(&c->lock);
				if (ctrl_watch_open(c, i, &err))
					k32_log(K32_LOG_WARN, "ctrl",
						"cannot reopen the watch on %s (%s); the %" PRIu32
						"s resync "
						"still runs",
						w->resource, err.msg, c->cfg.resync_s);
				dirty |= CTRL_ALL;
				break;
			}
			for (size_t k = 0; k < n; k++) {
				uint32_t m = w->mask;
				if (!strcmp(w->resource, "nodes") && !ctrl_node_changed(&ev[k]))
					m = 0;
				/* the scheduler cares about pending pods and freed room only */
				if (!strcmp(w->resource, "pods") &&
				    !ctrl_pod_sched_relevant(&ev[k]))
					m &= ~(uint32_t)CTRL_SCHEDULER;
				/* the GC cares about deletions and objects being deleted */
				if ((m & CTRL_GC) && ev[k].type != STORE_EVENT_DELETED &&
				    !strstr(store_obj_data(ev[k].obj), "\"deletionTimestamp\""))
					m &= ~(uint32_t)CTRL_GC;
				dirty |= m;
			}
			store_events_release(c->store, ev, n);
			if (n < K32_CTRL_WATCH_BATCH)
				break;
		}
	}
	return dirty;
}

/* ---- passes ---------------------------------------------------------------------------- */

/* Runs the passes in mask; returns the controllers that want another turn. */
static uint32_t ctrl_run_mask(struct ctrl *c, uint32_t mask, k32_status_t *out_st,
			      struct k32_err *err)
{
	uint32_t again = 0;
	k32_status_t first = K32_OK;
	k32_mutex_lock(&c->run_lock);
	for (unsigned k = 0; k < CTRL_COUNT; k++) {
		uint32_t bit = ctrl_order[k];
		if (!(mask & bit & c->cfg.enable))
			continue;
		c->budget = K32_CTRL_BATCH;
		c->more = false;
		c->requeue_us = 0;
		k32_err_clear(&c->perr);
		ctrl_pass_fn[k](c);
		uint64_t now = ctrl_now_us(c);
		k32_mutex_lock(&c->lock);
		c->stats.passes++;
		c->stats.last_pass_us = now;
		uint64_t due = now + ctrl_period_us(c, bit);
		if (c->requeue_us && c->requeue_us < due)
			due = c->requeue_us;
		c->due_us[ctrl_bit_index(bit)] = due;
		k32_mutex_unlock(&c->lock);
		if (c->more)
			again |= bit;
		if (c->perr.status && !first) {
			first = c->perr.status;
			if (err)
				*err = c->perr;
		}
	}
	k32_mutex_unlock(&c->run_lock);
	if (out_st)
		*out_st = first;
	return again;
}

static void ctrl_task_main(void *arg)
{
	struct ctrl *c = arg;
	for (;;) {
		uint32_t trig = c->store ? ctrl_watch_drain(c) : 0;
		uint64_t now = ctrl_now_us(c);
		uint32_t run = 0;
		k32_mutex_lock(&c->lock);
		if (c->stop) {
			k32_mutex_unlock(&c->lock);
			break;
		}
		c->dirty |= trig;
		for (unsigned i = 0; i < CTRL_COUNT; i++)
			if (now >= c->due_us[i])
				c->dirty |= 1u << i;
		run = c->dirty & c->cfg.enable;
		c->dirty = 0;
		k32_mutex_unlock(&c->lock);
		uint32_t again = 0;
		if (run)
			again = ctrl_run_mask(c, run, NULL, NULL);
		k32_mutex_lock(&c->lock);
		c->dirty |= again;
		bool pending = c->dirty != 0;
		for (unsigned i = 0; i < CTRL_WATCH_COUNT && !pending; i++)
			pending = atomic_load(&c->watches[i].pending);
		if (!pending && !c->stop) {
			now = ctrl_now_us(c);
			uint64_t next = UINT64_MAX;
			for (unsigned i = 0; i < CTRL_COUNT; i++)
				if ((c->cfg.enable & (1u << i)) && c->due_us[i] < next)
					next = c->due_us[i];
			int64_t wait = next > now ? (int64_t)(next - now) : 0;
			if (wait > 0)
				k32_plat()->cond_wait(&c->cond, &c->lock, k32_deadline_after(wait));
		}
		k32_mutex_unlock(&c->lock);
	}
}

/* ---- public ---------------------------------------------------------------------------- */

k32_status_t ctrl_start(const struct ctrl_config *cfg, struct api_server *api, struct store *store,
			struct ctrl **out, struct k32_err *err)
{
	if (!api || !out)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "ctrl",
				   "ctrl_start: api and out are required");
	*out = NULL;
	struct ctrl *c = k32_calloc(k32_default_allocator(), sizeof(*c));
	if (!c)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "ctrl",
				   "ctrl_start: out of memory for %zu bytes of controller state",
				   sizeof(*c));
	if (cfg)
		c->cfg = *cfg;
	if (!c->cfg.enable)
		c->cfg.enable = CTRL_ALL;
	if (!c->cfg.resync_s)
		c->cfg.resync_s = K32_CTRL_RESYNC_S;
	if (!c->cfg.sched_resync_s)
		c->cfg.sched_resync_s = K32_CTRL_SCHED_RESYNC_S;
	if (!c->cfg.node_monitor_s)
		c->cfg.node_monitor_s = K32_CTRL_NODE_MONITOR_S;
	if (!c->cfg.node_grace_s)
		c->cfg.node_grace_s = K32_CTRL_NODE_GRACE_S;
	if (!c->cfg.pod_eviction_s)
		c->cfg.pod_eviction_s = K32_CTRL_POD_EVICTION_S;
	if (!c->cfg.now_us)
		c->cfg.now_us = ctrl_default_now;
	if (!c->cfg.wall_s)
		c->cfg.wall_s = ctrl_default_wall;
	c->api = api;
	c->store = c->cfg.no_task ? NULL : store;
	k32_plat()->mutex_init(&c->lock);
	k32_plat()->mutex_init(&c->run_lock);
	k32_plat()->cond_init(&c->cond);
	for (unsigned i = 0; i < CTRL_WATCH_COUNT; i++) {
		c->watches[i].group = ctrl_watch_defs[i].group;
		c->watches[i].resource = ctrl_watch_defs[i].resource;
		c->watches[i].mask = ctrl_watch_defs[i].mask;
		c->watches[i].c = c;
	}
	c->dirty = CTRL_ALL;
	k32_status_t st = K32_OK;
	for (unsigned i = 0; c->store && i < CTRL_WATCH_COUNT && !st; i++)
		st = ctrl_watch_open(c, i, err);
	if (!st && !c->cfg.no_task)
		st = k32_plat()->task_create(&c->task, "k32-ctrl", ctrl_task_main, c,
					     c->cfg.task_stack_bytes, -1, err);
	if (st) {
		ctrl_stop(c);
		return st;
	}
	*out = c;
	return K32_OK;
}

void ctrl_stop(struct ctrl *c)
{
	if (!c)
		return;
	if (c->task) {
		k32_mutex_lock(&c->lock);
		c->stop = true;
		k32_plat()->cond_signal(&c->cond);
		k32_mutex_unlock(&c->lock);
		k32_plat()->task_join(c->task);
	}
	for (unsigned i = 0; i < CTRL_WATCH_COUNT; i++)
		store_watch_close(c->watches[i].w);
	k32_plat()->cond_fini(&c->cond);
	k32_plat()->mutex_fini(&c->run_lock);
	k32_plat()->mutex_fini(&c->lock);
	ctrl_schedq_free(c->schedq);
	k32_free(k32_default_allocator(), c, sizeof(*c));
}

k32_status_t ctrl_run_once(struct ctrl *c, uint32_t mask, bool *out_more, struct k32_err *err)
{
	k32_status_t st = K32_OK;
	uint32_t again = ctrl_run_mask(c, mask, &st, err);
	if (out_more)
		*out_more = again != 0;
	if (again) {
		k32_mutex_lock(&c->lock);
		c->dirty |= again;
		k32_mutex_unlock(&c->lock);
	}
	return st;
}

void ctrl_kick(struct ctrl *c, uint32_t mask)
{
	k32_mutex_lock(&c->lock);
	c->dirty |= mask & CTRL_ALL;
	k32_plat()->cond_signal(&c->cond);
	k32_mutex_unlock(&c->lock);
}

void ctrl_get_stats(struct ctrl *c, struct ctrl_stats *out)
{
	k32_mutex_lock(&c->lock);
	*out = c->stats;
	k32_mutex_unlock(&c->lock);
}
