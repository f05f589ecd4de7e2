/*
 * sim.c - board profiles, simulated boards, and the adapter that lets the control plane
 * (src/cplane) read an in-process board's logs and stats directly. See sim.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#include "k32/boards/cardputer.h"
#include "k32/boards/devkit.h"

#include "platform/k32_platform.h"

/* ---- profiles ------------------------------------------------------------------------------ */

/*
 * Each board's kernel objects (struct kobj_limits, src/kobj): sized for its RAM, with the
 * simulator's compile-time ceilings (65536-byte messages and sockets: an owner's share of
 * chunks and region bytes must hold one of each, so those shares stay at their defaults and
 * the pools run out first). A field left 0 takes the K32_KOBJ_* default: the host board's
 * pools are the simulator's full ones (2.8 MB, a 2 MiB region). The pod pool, interpreter
 * stack, pod count and hardware come from the board headers the board build compiles in
 * (include/k32/boards/), so the simulator enforces what a board runs with.
 */
static struct klet_profile profiles[] = {
    /* the control-plane board: a pod pool carved from its 2 MB PSRAM; kobj ~0.4 MB */
    {.name = "devkit",
     .pod_pool_bytes = K32_DEVKIT_POD_POOL_BYTES,
     .interp_stack = K32_DEVKIT_INTERP_STACK_BYTES,
     .max_pods = K32_DEVKIT_MAX_PODS,
     .hardware = K32_DEVKIT_HARDWARE,
     .kobj = {.channels = 32,
	      .messages = 128,
	      .msg_chunks = 128,
	      .sockets = 16,
	      .fifos = 8,
	      .events = 64,
	      .eventpairs = 16,
	      .ports = 16,
	      .port_observers = 64,
	      .user_packets = 64,
	      .timers = 16,
	      .vmos = 16,
	      .names = 32,
	      .accounts = 32,
	      .sleepers = 16,
	      .region_bytes = 256 * 1024}},
    /* the worker: pod pool reserved at boot, interpreter stack, 3 I2C devices;
     * kobj under 100 KB for its 8 pods (an event port each, as many again for their use) */
    {.name = "cardputer",
     .pod_pool_bytes = K32_CARDPUTER_POD_POOL_BYTES,
     .interp_stack = K32_CARDPUTER_INTERP_STACK_BYTES,
     .max_pods = K32_CARDPUTER_MAX_PODS,
     .hardware = K32_CARDPUTER_HARDWARE,
     .kobj = {.channels = 16,
	      .messages = 64,
	      .msg_chunks = 32,
	      .sockets = 8,
	      .fifos = 4,
	      .events = 32,
	      .eventpairs = 8,
	      .ports = 16,
	      .port_observers = 32,
	      .user_packets = 32,
	      .timers = 8,
	      .vmos = 8,
	      .names = 16,
	      .accounts = 24,
	      .sleepers = 12,
	      .region_bytes = 32 * 1024},
     .pod_http_conns = 16,
     .pod_http_conns_per_client = 8},
    /* development: configurable; kobj: the simulator's defaults */
    {.name = "host",
     .pod_pool_bytes = 4 * 1024 * 1024,
     .interp_stack = 64 * 1024,
     .max_pods = 32,
     .hardware = ""},
};

const struct klet_profile *sim_profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

size_t sim_profile_ram_bytes(const struct klet_profile *p)
{
	/* the reference boards: ESP32-S3 with 512 KiB SRAM; the devkit adds 2 MiB of PSRAM */
	if (!strcmp(p->name, "devkit"))
		return K32_DEVKIT_SRAM_BYTES + K32_DEVKIT_PSRAM_BYTES;
	if (!strcmp(p->name, "cardputer"))
		return K32_CARDPUTER_SRAM_BYTES + K32_CARDPUTER_PSRAM_BYTES;
	return 0;
}

void sim_profile_set_host(size_t pool, size_t stack)
{
	if (pool)
		profiles[2].pod_pool_bytes = pool;
	if (stack)
		profiles[2].interp_stack = stack;
}

/* ---- the control plane's view of a board ------------------------------------------------ */

static const char *board_name(void *node)
{
	return klet_node_name(node);
}

static k32_status_t board_logs(void *node, const char *ns, const char *pod, bool previous,
			       int64_t tail_lines, bool timestamps, uint64_t *inout_seq,
			       struct k32_buf *out, struct k32_err *err)
{
	return klet_pod_logs(node, ns, pod, previous, tail_lines, timestamps, inout_seq, out, err);
}

static k32_status_t board_stats(void *node, struct k32_buf *out, struct k32_err *err)
{
	return klet_stats_json(node, out, err);
}

static const struct cplane_node_ops board_ops = {
    .name = board_name, .logs = board_logs, .stats = board_stats};

k32_status_t sim_board_attach(struct cplane *cp, struct klet *k, struct k32_err *err)
{
	return cplane_node_attach(cp, &board_ops, k, err);
}

void sim_board_detach(struct cplane *cp, struct klet *k)
{
	cplane_node_detach(cp, k);
}

/* ---- boards ------------------------------------------------------------------------------ */

k32_status_t sim_board_start(const struct sim_board_config *cfg, struct klet **out,
			     struct k32_err *err)
{
	const char *tokens[1] = {cfg->cluster_token};
	struct klet_config kc = {
	    .node_name = cfg->name,
	    .pod_http_tokens = tokens,
	    .pod_http_token_count = cfg->cluster_token ? 1 : 0,
	    .profile = cfg->profile,
	    .api_host = cfg->api_host,
	    .api_port = cfg->api_port,
	    .api_tls = cfg->ca_file != NULL,
	    .ca_file = cfg->ca_file,
	    .token = cfg->token,
	    .image_dir = cfg->image_dir,
	    .pod_http_port = cfg->pod_port,
	    .console_ext = cfg->console_ext,
	    .console_ext_ctx = cfg->console_ext_ctx,
	    .hw_node = cfg->hw_node,
	    .lease_renew_ms = cfg->lease_renew_ms,
	    /* a board never gives up on its control plane: it registers in the background */
	    .join_retry = true,
	    .join_spread_ms = cfg->join_spread_ms,
	    .watch_timeout_s = cfg->watch_timeout_s,
	    .alloc = cfg->alloc,
	};
	struct klet *k = NULL;
	/* the board's tasks (kubelet, pod server, and what they start) share the pool's
	 * threads: a thousand boards in one process (k32_platform.h, task_share_threads) */
	k32_plat()->task_share_threads(true);
	k32_status_t st = klet_new(&kc, &k, err);
	if (!st)
		st = klet_start(k, err);
	k32_plat()->task_share_threads(false);
	if (st) {
		klet_free(k);
		return st;
	}
	*out = k;
	return K32_OK;
}
