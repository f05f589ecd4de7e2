/*
 * sim.h - the simulator's wiring: board profiles and simulated boards (one kubelet each,
 * talking HTTP to the API server as a real board does), their simulated I2C hardware, and
 * the adapter through which the control plane (src/cplane, the same one kube32-server
 * runs) reads an in-process board's logs and stats. kube32-sim is a thin main() over this
 * and src/cplane.
 *
 * Context: start/stop from the main thread. Nothing here handles signals.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cplane/cplane.h"
#include "base/k32_status.h"
#include "kubelet/klet.h"

/* ---- board profiles (design.md section 8) ------------------------------------------------ */

/*
 * The profile named name ("devkit", "cardputer", "host"). The host profile's pool and
 * stack are host_pool_bytes / host_stack_bytes when non-zero (else 4 MiB / 64 KiB).
 * NULL for an unknown name.
 */
const struct klet_profile *sim_profile_find(const char *name);
void sim_profile_set_host(size_t host_pool_bytes, size_t host_stack_bytes);

/* ---- the boards of a kube32-sim process (sim_conf.c) --------------------------------------
 *
 * From --boards PROFILE[:COUNT],... or a board file (--config FILE): one board group a
 * line, '#' starts a comment, blank lines are ignored:
 *
 *   PROFILE [count=N] [name=NAME]   N boards of PROFILE (devkit, cardputer, host), named
 *                                   PROFILE-1, PROFILE-2, ... or NAME (only with count 1)
 *   host-pool=BYTES                 pod pool of host boards (a number, or with Ki / Mi)
 *   host-stack=BYTES                interpreter stack of host boards
 *
 * At most K32_SIM_MAX_BOARDS boards, K32_SIM_CONF_MAX_BYTES of file, K32_SIM_CONF_LINE_MAX
 * per line. Errors name the line, what was wrong and what is expected.
 */
struct sim_conf_board {
	const struct klet_profile *profile;
	char name[64]; /* node name */
};
struct sim_conf {
	struct sim_conf_board boards[K32_SIM_MAX_BOARDS];
	uint32_t count;	   /* boards */
	size_t host_pool;  /* host-pool=; 0: not set */
	size_t host_stack; /* host-stack=; 0: not set */
};
/* Parses a board file into c (zeroed by the caller; appends to its boards). */
k32_status_t sim_conf_parse(const char *text, size_t len, struct sim_conf *c, struct k32_err *err);
/* Appends the boards of a --boards spec ("cardputer:2,host:1"). */
k32_status_t sim_conf_add_spec(struct sim_conf *c, const char *spec, struct k32_err *err);
/* Appends count boards of profile (name: one board's name, or NULL for PROFILE-<n>). */
k32_status_t sim_conf_add(struct sim_conf *c, const char *profile, uint32_t count, const char *name,
			  struct k32_err *err);

/* The profile's RAM in bytes (SRAM, plus PSRAM where the board has it); 0: no budget
 * (host). */
size_t sim_profile_ram_bytes(const struct klet_profile *p);

/* ---- free memory per boot stage (sim_boot.c) ---------------------------------------------
 *
 * Boots one board of profile in this process (the control plane's stages count for the
 * devkit only: it is the control-plane board) and appends one line per stage:
 *   K32_BOOT profile=P role=control-plane|worker stage=S used=N free=N budget=N
 * with S platform (pod pool and interpreter stack reserved), store, api, controllers
 * (devkit only), kubelet, pods (cfg->pods pods of cfg->image Running), then
 *   K32_BOOT_END profile=P pods=N image=I pool_used=N pool_size=N counted=... not_counted=...
 * used = pod pool + interpreter stack + the default heap's growth; free = budget - used
 * ("-" for host). Nothing persists (memory store). Takes a few seconds.
 */
struct sim_boot_config {
	const char *profile;	/* devkit, cardputer, host */
	const char *data_dir;	/* tokens and pki (created) */
	const char *image_dir;	/* where the pods' module is */
	const char *image;	/* module of the pods stage, e.g. "hello.wasm" */
	const char *pod_memory; /* their resources.limits.memory; NULL: "24Ki" */
	uint32_t pods;		/* pods of the last stage */
	bool tls;		/* HTTPS as kube32-sim runs it */
	/* the last stage runs the board's three driver pods instead (the profile's simulated
	 * I2C devices, their Devices created; image_dir holds bme688/miniscale/rfid.wasm) */
	bool devices;
};
k32_status_t sim_boot_report(const struct sim_boot_config *cfg, struct k32_buf *out,
			     struct k32_err *err);

/* ---- the control plane's view of a board -------------------------------------------------- */

/*
 * Attaches an in-process board to the control plane (src/cplane) so that its logs (`kubectl
 * logs`, -f) and stats (`kubectl top`) are read directly instead of through its pod server.
 * Detach (or stop the control plane) before klet_free.
 * @retval K32_ERR_NO_RESOURCES  K32_CPLANE_MAX_LOCAL_NODES boards attached already
 */
k32_status_t sim_board_attach(struct cplane *cp, struct klet *k, struct k32_err *err);
void sim_board_detach(struct cplane *cp, struct klet *k);

/* ---- boards -------------------------------------------------------------------------------- */

struct sim_board_config {
	const char *name;		    /* node name */
	const struct klet_profile *profile; /* required */
	const char *api_host;		    /* "127.0.0.1" */
	uint16_t api_port;
	const char *ca_file; /* NULL: plain HTTP */
	const char *token;   /* node token */
	/* another bearer token the board's pod server accepts on /console, /stats and
	 * /containerLogs (kube32-sim: the cluster admin's, the one its kubeconfig holds);
	 * NULL: only token */
	const char *cluster_token;
	const char *image_dir; /* the board's "SD card" */
	uint16_t pod_port;     /* pod HTTP server port (0: free port) */
	/* console commands beyond PODS/MEM/TASKS (klet_config.console_ext); may be NULL */
	k32_status_t (*console_ext)(void *ctx, const char *cmd, struct k32_buf *out);
	void *console_ext_ctx;
	struct hw_node *hw_node; /* its I2C buses (sim_hw_node), NULL: none */
	uint32_t lease_renew_ms; /* 0: the kubelet's default */
	/* its first registration waits a random 0 .. join_spread_ms (klet_config) */
	uint32_t join_spread_ms;
	/* seconds its pod watch asks for (klet_config.watch_timeout_s); 0: the kubelet's
	 * K32_KLET_WATCH_TIMEOUT_S */
	uint32_t watch_timeout_s;
	/* the board's node heap (klet_config.alloc); NULL: the default heap */
	const struct k32_allocator *alloc;
};

/* ---- simulated hardware (sim_hw.c) ----------------------------------------------------------
 *
 * A board whose profile lists hardware (cardputer) gets hardware.md's devices on bus 0
 * behind a PCA9548A: envpro (BME688, mux 2, 0x77), scale (Mini Scales, mux 1, 0x26), tag
 * (RFID 2, mux 0, 0x28). sim_hw_console takes the hw_sim_command lines ("hw set envpro
 * temperature_c 30.5", "rfid place tag 5A3C910E", "hw list") as a console_ext: on stdin
 * ("cardputer-1 K32_CMD:hw list") and POST /console on the board's pod server.
 */
struct sim_hw;
struct hw_node;
struct hw_sim;
bool sim_profile_has_hw(const struct klet_profile *p);
k32_status_t sim_hw_new(const char *node, const struct klet_profile *profile, struct sim_hw **out,
			struct k32_err *err);
struct hw_node *sim_hw_node(struct sim_hw *h);
struct hw_sim *sim_hw_sim(struct sim_hw *h);
/* console_ext: K32_ERR_NOT_SUPPORTED for lines other than "hw ..." / "rfid ..." */
k32_status_t sim_hw_console(void *ctx, const char *cmd, struct k32_buf *out);
void sim_hw_free(struct sim_hw *h);

/* Creates and starts a board's kubelet (klet_new + klet_start). */
k32_status_t sim_board_start(const struct sim_board_config *cfg, struct klet **out,
			     struct k32_err *err);

#endif /* SIM_H */
