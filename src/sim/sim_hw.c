/*
 * sim_hw.c - a simulated board's I2C hardware for kube32-sim: the hw_sim devices of the
 * board's profile on its bus 0, the hw_node the kubelet binds driver pods to, and the
 * console commands (hw ..., rfid ...) that change the simulated physical values.
 *
 * The cardputer profile carries hardware.md's set: a PCA9548A (PaHUB, 0x70) on bus 0 with
 * an RFID 2 (MFRC522, 0x28) on channel 0, M5Stack Mini Scales (0x26) on channel 1 and a
 * BME688 ENV Pro (0x77) on channel 2. The device names (tag, scale, envpro) are what the
 * console commands and the demo Devices use.
 */
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#include "base/k32_alloc.h"
#include "hw/hw.h"

struct sim_hw {
	char node[HW_NAME_LEN]; /* hw_sim keeps names by pointer */
	struct hw_sim_bus_config bus_cfg;
	struct hw_sim_dev_config devs[3];
	struct hw_sim *sim;
	struct hw_bus bus;
	bool bus_inited;
	struct hw_node node_hw;
};

bool sim_profile_has_hw(const struct klet_profile *p)
{
	return p && p->hardware && p->hardware[0];
}

k32_status_t sim_hw_new(const char *node, const struct klet_profile *profile, struct sim_hw **out,
			struct k32_err *err)
{
	*out = NULL;
	if (!sim_profile_has_hw(profile))
		return k32_err_set(err, K32_ERR_NOT_SUPPORTED, "sim",
				   "board %s: profile %s has no I2C devices to simulate", node,
				   profile ? profile->name : "(none)");
	if (strlen(node) >= HW_NAME_LEN)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "sim",
				   "board name %s is over %d characters", node, HW_NAME_LEN - 1);
	const struct k32_allocator *a = k32_default_allocator();
	struct sim_hw *h = k32_calloc(a, sizeof(*h));
	if (!h)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "sim",
				   "board %s: no memory for its hardware (%zu bytes)", node,
				   sizeof(*h));
	snprintf(h->node, sizeof(h->node), "%s", node);
	h->bus_cfg = (struct hw_sim_bus_config){h->node, 0, true, 0x70};
	h->devs[0] = (struct hw_sim_dev_config){"envpro", h->node, 0, 2, 0x77, HW_MODEL_BME688};
	h->devs[1] = (struct hw_sim_dev_config){"scale", h->node, 0, 1, 0x26, HW_MODEL_MINISCALE};
	h->devs[2] = (struct hw_sim_dev_config){"tag", h->node, 0, 0, 0x28, HW_MODEL_MFRC522};
	struct hw_sim_config sc = {&h->bus_cfg, 1, h->devs, 3, NULL, NULL};
	k32_status_t st = hw_sim_new(a, &sc, &h->sim, err);
	const struct hw_bus_backend_ops *ops = NULL;
	void *ctx = NULL;
	if (!st && hw_sim_backend(h->sim, h->node, 0, &ops, &ctx))
		st = k32_err_set(err, K32_ERR_INTERNAL, "sim", "board %s: no simulated bus 0",
				 h->node);
	struct hw_bus_config bc = {.has_mux = true, .mux_addr = 0x70};
	if (!st)
		st = hw_bus_init(&h->bus, 0, ops, ctx, &bc, err);
	if (!st) {
		h->bus_inited = true;
		st = hw_bus_mux_reset(&h->bus, err);
	}
	if (st) {
		sim_hw_free(h);
		return st;
	}
	struct hw_node_config nc = {.bus = {&h->bus}, .min_interval_ms = 1000};
	hw_node_init(&h->node_hw, &nc);
	*out = h;
	return K32_OK;
}

struct hw_node *sim_hw_node(struct sim_hw *h)
{
	return h ? &h->node_hw : NULL;
}

struct hw_sim *sim_hw_sim(struct sim_hw *h)
{
	return h ? h->sim : NULL;
}

k32_status_t sim_hw_console(void *ctx, const char *cmd, struct k32_buf *out)
{
	struct sim_hw *h = ctx;
	if (!h || (strncmp(cmd, "hw", 2) && strncmp(cmd, "rfid ", 5)))
		return K32_ERR_NOT_SUPPORTED;
	char line[256];
	size_t n = strlen(cmd);
	while (n && (cmd[n - 1] == '\n' || cmd[n - 1] == '\r' || cmd[n - 1] == ' '))
		n--;
	if (n >= sizeof(line)) {
		k32_buf_printf(out, NULL, "K32_ERR hw: command over %zu characters\n",
			       sizeof(line) - 1);
		return K32_OK;
	}
	memcpy(line, cmd, n);
	line[n] = 0;
	struct k32_err err;
	k32_status_t st = hw_sim_command(h->sim, line, out, &err);
	if (st)
		k32_buf_printf(out, NULL, "K32_ERR %s\n", err.msg);
	else
		k32_buf_printf(out, NULL, "K32_END HW\n");
	return K32_OK;
}

void sim_hw_free(struct sim_hw *h)
{
	if (!h)
		return;
	if (h->bus_inited)
		hw_bus_fini(&h->bus);
	if (h->sim)
		hw_sim_free(h->sim);
	k32_free(k32_default_allocator(), h, sizeof(*h));
}
