/*
 * ctrl.c - the control plane's loop: dirty bits, periodic resyncs, and the one task that
 * runs the passes.
 *
 * Threads: the informer tasks (ctrl_inform.c) apply watch events to their caches and mark
 * the controllers that read the kind dirty under c->lock, signalling c->cond (Node updates
 * that change nothing but heartbeat times mark nothing, and pod changes wake the scheduler
 * only when a pod is pending or a bound pod finished). c->lock is never held across an API
 * call. The task runs each controller that is dirty or due, with c->run_lock held.
 * ctrl_run_once takes the same run_lock, so a test or CLI pass never overlaps the task's.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_log.h"

/* Passes run in this order, so one turn can go CronJob -> Job, Deployment -> ReplicaSet ->
 * pods -> bound. ctrl_pass_fn is in the same order. */
static const uint32_t ctrl_order[CTRL_COUNT] = {
    CTRL_NODE_LIFECYCLE, CTRL_CRONJOB, CTRL_DEPLOYMENT, CTRL_REPLICASET, CTRL_DAEMONSET, CTRL_JOB,
    CTRL_SCHEDULER,	 CTRL_GC,      CTRL_NAMESPACE,	CTRL_DEVICE,	 CTRL_ENDPOINTS,
};

static void (*const ctrl_pass_fn[CTRL_COUNT])(struct ctrl *c) = {
    ctrl_node_pass, ctrl_cron_pass, ctrl_deploy_pass,	 ctrl_rs_pass,
    ctrl_ds_pass,   ctrl_job_pass,  ctrl_sched_pass,	 ctrl_gc_pass,
    ctrl_ns_pass,   ctrl_dev_pass,  ctrl_endpoints_pass,
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

/* ---- passes ---------------------------------------------------------------------------- */

/* Runs the passes in mask; returns the controllers that want another turn. */
static uint32_t ctrl_run_mask(struct ctrl *c, uint32_t mask, uint32_t full, k32_status_t *out_st,
			      struct k32_err *err)
{
	uint32_t again = 0;
	k32_status_t first = K32_OK;
	k32_mutex_lock(&c->run_lock);
	for (unsigned k = 0; k < CTRL_COUNT; k++) {
		uint32_t bit = ctrl_order[k];
		if (!(mask & bit & c->cfg.enable))
			continue;
		/* a pass whose writes failed waits out its back-off (the queue stays) */
		if (ctrl_backoff_pass_blocked(c, bit, ctrl_now_us(c))) {
			/* not due again before its resync: the back-off's end wakes it */
			k32_mutex_lock(&c->lock);
			c->due_us[ctrl_bit_index(bit)] = ctrl_now_us(c) + ctrl_period_us(c, bit);
			k32_mutex_unlock(&c->lock);
			continue;
		}
		c->budget = K32_CTRL_BATCH;
		c->more = false;
		c->requeue_us = 0;
		c->pass_bit = bit;
		c->pass_failed = false;
		c->item_active = false;
		k32_err_clear(&c->perr);
		ctrl_queue_take(c, bit, (full & bit) != 0);
		uint64_t cpu0 = k32_plat()->thread_cpu_us();
		ctrl_pass_fn[k](c);
		ctrl_item_end(c); /* a pass that left an item open */
		ctrl_backoff_pass_done(c, bit);
		uint64_t cpu = k32_plat()->thread_cpu_us() - cpu0;
		/* a pass cut short by its budget goes on where it stopped (the queue it took
		 * is spent) */
		if (c->more)
			ctrl_requeue_rest(c, bit);
		uint64_t now = ctrl_now_us(c);
		k32_mutex_lock(&c->lock);
		c->stats.passes++;
		c->stats.last_pass_us = now;
		c->stats.pass_cpu_us[ctrl_bit_index(bit)] += cpu;
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
		uint64_t now = ctrl_now_us(c);
		uint32_t run = 0;
		k32_mutex_lock(&c->lock);
		if (c->stop) {
			k32_mutex_unlock(&c->lock);
			break;
		}
		for (unsigned i = 0; i < CTRL_COUNT; i++)
			if (now >= c->due_us[i])
				c->dirty |= c->full |= 1u << i; /* a resync: every object */
		/* ended back-offs: their items are queued, their controllers run */
		uint32_t bo_dirty = 0, bo_full = 0;
		ctrl_backoff_fire(c, now, &bo_dirty, &bo_full);
		c->dirty |= bo_dirty;
		c->full |= bo_full;
		run = c->dirty & c->cfg.enable;
		uint32_t full = c->full & run;
		c->dirty = 0;
		c->full &= ~run;
		k32_mutex_unlock(&c->lock);
		uint32_t again = 0;
		if (run)
			again = ctrl_run_mask(c, run, full, NULL, NULL);
		k32_mutex_lock(&c->lock);
		c->dirty |= again;
		bool pending = c->dirty != 0;
		if (!pending && !c->stop) {
			now = ctrl_now_us(c);
			uint64_t next = UINT64_MAX;
			for (unsigned i = 0; i < CTRL_COUNT; i++)
				if ((c->cfg.enable & (1u << i)) && c->due_us[i] < next)
					next = c->due_us[i];
			uint32_t d = 0, f = 0;
			uint64_t bo = ctrl_backoff_fire(c, now, &d, &f);
			c->dirty |= d;
			c->full |= f;
			if (d)
				next = now; /* one ended meanwhile: run at once */
			else if (bo < next)
				next = bo;
			int64_t wait = next > now ? (int64_t)(next - now) : 0;
			if (wait > 0)
				k32_plat()->cond_wait(&c->cond, &c->lock, k32_deadline_after(wait));
		}
		k32_mutex_unlock(&c->lock);
	}
}

/* ---- public ---------------------------------------------------------------------------- */

k32_status_t ctrl_start(const struct ctrl_config *cfg, struct kclient *client, struct ctrl **out,
			struct k32_err *err)
{
	if (!client || !out)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "ctrl",
				   "ctrl_start: client and out are required");
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
	if (!c->cfg.max_nodes)
		c->cfg.max_nodes = K32_CTRL_MAX_NODES;
	if (!c->cfg.now_us)
		c->cfg.now_us = ctrl_default_now;
	if (!c->cfg.wall_s)
		c->cfg.wall_s = ctrl_default_wall;
	c->kc = client;
	k32_plat()->mutex_init(&c->lock);
	k32_plat()->mutex_init(&c->run_lock);
	k32_plat()->cond_init(&c->cond);
	atomic_init(&c->inf_stop, false);
	c->dirty = CTRL_ALL;
	c->full = CTRL_ALL;
	k32_status_t st = K32_OK;
	if (!c->cfg.no_task)
		st = ctrl_informers_start(c, err);
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
	ctrl_informers_stop(c);
	k32_plat()->cond_fini(&c->cond);
	k32_plat()->mutex_fini(&c->run_lock);
	k32_plat()->mutex_fini(&c->lock);
	ctrl_schedq_free(c->schedq);
	ctrl_node_fini(c);
	ctrl_sched_fini(c);
	k32_free(k32_default_allocator(), c, sizeof(*c));
}

k32_status_t ctrl_run_once(struct ctrl *c, uint32_t mask, bool *out_more, struct k32_err *err)
{
	k32_status_t st = K32_OK;
	uint32_t again = ctrl_run_mask(c, mask, CTRL_ALL, &st, err);
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
	c->full |= mask & CTRL_ALL;
	k32_plat()->cond_signal(&c->cond);
	k32_mutex_unlock(&c->lock);
}

void ctrl_get_stats(struct ctrl *c, struct ctrl_stats *out)
{
	k32_mutex_lock(&c->lock);
	*out = c->stats;
	k32_mutex_unlock(&c->lock);
}
