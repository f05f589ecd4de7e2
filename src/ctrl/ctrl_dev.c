/*
 * ctrl_dev.c - the Device controller (kube32.io/v1alpha1 Device) as a controller of the
 * ctrl task: one bounded hw_devctrl_run_once pass (src/hw's k32_hw_ctrl, which creates the
 * driver pods, refuses conflicting Devices, marks silent Devices Stale and deletes driver
 * pods whose Device is gone), run on Device and Pod changes and the resync period.
 */
#include "ctrl/ctrl_int.h"

#include "hw/hw.h"

void ctrl_dev_pass(struct ctrl *c)
{
	struct hw_devctrl_stats st = {0};
	struct k32_err err;
	k32_err_clear(&err);
	k32_status_t s = hw_devctrl_run_once(c->api, ctrl_wall_s(c), K32_CTRL_DEVICE_STALE_GRACE_S,
					     K32_CTRL_DRIVER_POD_MEM, &st, &err);
	k32_mutex_lock(&c->lock);
	c->stats.writes += (uint64_t)st.created + st.deleted + st.conflicts + st.stale + st.updated;
	c->stats.device_pods_created += st.created;
	k32_mutex_unlock(&c->lock);
	if (s && !c->perr.status)
		c->perr = err;
}
