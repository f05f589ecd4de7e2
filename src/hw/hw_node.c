/*
 * hw_node.c - the node side of driver pods: binding a pod to its Device and routing the
 * host functions' callbacks into that Device's status publisher (see hw.h, "node side").
 *
 * Context: the kubelet's worker task, which also runs the pods' ticks; the callbacks run
 * inside those ticks, so no lock is needed.
 */
#include <stdio.h>

#include "base/k32_log.h"
#include "hw/hw_int.h"

static uint64_t node_now(const struct hw_node *n)
{
	return n->cfg.now_us ? n->cfg.now_us(n->cfg.clock_ud) : k32_now_us();
}

static uint64_t node_wall(const struct hw_node *n)
{
	return n->cfg.wall_s ? n->cfg.wall_s(n->cfg.clock_ud) : k32_plat()->wall_s();
}

static void on_publish(void *user, uint32_t index, const struct hw_grant *dev,
		       const struct hw_readings *r, uint64_t time_us)
{
	struct hw_node_pod *s = user;
	(void)index;
	(void)dev;
	hw_devstatus_readings(&s->status, r, time_us, node_wall(s->node));
}

static void on_condition(void *user, uint32_t index, const struct hw_grant *dev, bool ready,
			 const char *reason, size_t reason_len, const char *msg, size_t msg_len)
{
	struct hw_node_pod *s = user;
	(void)index;
	(void)dev;
	hw_devstatus_condition(&s->status, ready, reason, reason_len, msg, msg_len,
			       node_wall(s->node));
}

static void on_log(void *user, uint32_t level, const char *msg, size_t len)
{
	struct hw_node_pod *s = user;
	const struct hw_node_config *c = &s->node->cfg;
	if (c->log) {
		c->log(c->log_ctx, s->pod_name, level, msg, len);
		return;
	}
	static const enum k32_log_level map[4] = {K32_LOG_ERROR, K32_LOG_WARN, K32_LOG_INFO,
						  K32_LOG_DEBUG};
	k32_log(map[level > 3 ? 3 : level], "driver", "%s: %.*s", s->pod_name, (int)len, msg);
}

static uint64_t on_now(void *user)
{
	struct hw_node_pod *s = user;
	return node_now(s->node);
}

static void on_sleep(void *user, uint64_t us)
{
	struct hw_node_pod *s = user;
	if (s->node->cfg.sleep_us)
		s->node->cfg.sleep_us(s->node->cfg.clock_ud, us);
	else
		k32_plat()->sleep_us(us);
}

void hw_node_init(struct hw_node *n, const struct hw_node_config *cfg)
{
	memset(n, 0, sizeof(*n));
	n->cfg = *cfg;
	memcpy(n->host.bus, cfg->bus, sizeof(n->host.bus));
	n->ops = (struct hw_host_ops){on_publish, on_condition, on_log, on_now, on_sleep};
	n->host.ops = &n->ops;
}

k32_status_t hw_node_bind(struct hw_node *n, struct hw_node_pod *slot, const cJSON *device,
			  const char *pod_name, struct k32_err *err)
{
	if (slot->bound)
		hw_node_unbind(slot); /* re-bound without an unbind: leave the node's list first */
	memset(slot, 0, sizeof(*slot));
	k32_status_t st = hw_device_parse(device, &slot->dev, err);
	if (st != K32_OK)
		return st;
	if (slot->dev.bus >= K32_HW_MAX_BUSES || !n->host.bus[slot->dev.bus])
		return k32_err_set(err, K32_ERR_NOT_FOUND, "hw",
				   "Device %s/%s: bus %u does not exist on node %s; check spec.bus "
				   "against the board profile",
				   slot->dev.ns, slot->dev.name, (unsigned)slot->dev.bus,
				   slot->dev.node);
	for (const struct hw_node_pod *o = n->bound; o; o = o->next) {
		if (o != slot && !strcmp(o->dev.ns, slot->dev.ns) &&
		    !strcmp(o->dev.name, slot->dev.name))
			return k32_err_set(
			    err, K32_ERR_ALREADY_EXISTS, "hw",
			    "Device %s/%s is already driven by pod %s on node %s; one "
			    "driver pod per Device (delete one of them)",
			    slot->dev.ns, slot->dev.name, o->pod_name, slot->dev.node);
	}
	slot->node = n;
	snprintf(slot->pod_name, sizeof(slot->pod_name), "%s", pod_name);
	hw_device_grant(&slot->dev, &slot->grant);
	hw_pod_init(&slot->pod, &n->host, &slot->grant, 1, slot);
	hw_devstatus_init(&slot->status, slot->dev.poll_ms, n->cfg.min_interval_ms);
	slot->bound = true;
	slot->next = n->bound;
	n->bound = slot;
	return K32_OK;
}

void hw_node_unbind(struct hw_node_pod *slot)
{
	if (slot->bound && slot->node) {
		for (struct hw_node_pod **pp = &slot->node->bound; *pp; pp = &(*pp)->next) {
			if (*pp == slot) {
				*pp = slot->next;
				break;
			}
		}
	}
	slot->next = NULL;
	slot->bound = false;
	slot->pod.ngrants = 0; /* a late call from the instance reaches nothing */
}

void hw_node_pod_failed(struct hw_node_pod *slot, const char *reason, const char *msg)
{
	if (!slot->bound)
		return;
	hw_devstatus_condition(&slot->status, false, reason, strlen(reason), msg, strlen(msg),
			       node_wall(slot->node));
}

bool hw_node_pod_due(struct hw_node_pod *slot)
{
	return slot->bound &&
	       hw_devstatus_due(&slot->status, node_now(slot->node), node_wall(slot->node));
}

k32_status_t hw_node_pod_patch(struct hw_node_pod *slot, struct k32_buf *out, struct k32_err *err)
{
	return hw_devstatus_patch(&slot->status, slot->pod_name, node_now(slot->node), out, err);
}

bool hw_node_pod_event(struct hw_node_pod *slot, const char *component, struct k32_buf *out,
		       struct k32_err *err)
{
	return slot->bound && hw_devstatus_event(&slot->status, &slot->dev, component,
						 node_wall(slot->node), out, err);
}
