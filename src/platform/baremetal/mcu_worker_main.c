/*
 * mcu_worker_main.c - the worker-node image of `make mcu` (a cardputer's firmware minus
 * ESP-IDF): the kubelet with the Wasm provider, kobj, the hw layer and the console, booted
 * against the bare-metal platform port. Linked to measure what a worker costs on the board
 * (scripts/mcu.sh's size table); it has no network here, so it stops at the first API call.
 */
#include <stdio.h>

#include "base/k32_log.h"
#include "kubelet/klet.h"
#include "platform/baremetal/k32_baremetal.h"
#include "platform/k32_platform.h"

int main(void)
{
	k32_log_set_clock(k32_plat()->now_us); /* log lines carry the tick clock */
	static const struct klet_profile profile = {.name = K32_BOARD_NAME,
						    .pod_pool_bytes = K32_BOARD_POD_POOL_BYTES,
						    .interp_stack = K32_BOARD_INTERP_STACK_BYTES,
						    .max_pods = K32_KLET_MAX_PODS,
						    .hardware = K32_BOARD_HARDWARE};
	struct klet_config cfg = {.node_name = "board-1",
				  .profile = &profile,
				  .api_host = "10.0.0.1",
				  .api_port = 6443,
				  .image_dir = "/sd/images"};
	struct klet *k;
	struct k32_err err;
	if (klet_new(&cfg, &k, &err) != K32_OK || klet_start(k, &err) != K32_OK) {
		printf("K32_MCU worker: %s\n", err.msg);
		return 1;
	}
	k32_baremetal_run_tasks();
	klet_stop(k);
	klet_free(k);
	return 0;
}
