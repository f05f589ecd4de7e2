/*
 * mcu_cplane_main.c - the control-plane image of `make mcu` (the devkit's firmware minus
 * ESP-IDF): store, API server, controllers and scheduler, booted against the bare-metal
 * platform port. Linked to measure what a control plane costs on the board (scripts/mcu.sh's
 * size table); it has no network or file system here, so it stops at the first of them.
 */
#include <stdio.h>

#include "base/k32_log.h"
#include "cplane/cplane.h"
#include "platform/baremetal/k32_baremetal.h"
#include "platform/k32_platform.h"

int main(void)
{
	k32_log_set_clock(k32_plat()->now_us); /* log lines carry the tick clock */
	struct cplane_config cfg;
	struct cplane *cp;
	struct k32_err err;
	cplane_config_init(&cfg);
	cfg.data_dir = "/sd/kube32";
	cfg.memory_store = true;
	cfg.host = "0.0.0.0";
	cfg.port = 6443;
	if (cplane_start(&cfg, &cp, &err) != K32_OK) {
		printf("K32_MCU control plane: %s\n", err.msg);
		return 1;
	}
	k32_baremetal_run_tasks();
	cplane_stop(cp);
	return 0;
}
