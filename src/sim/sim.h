/*
 * sim.h - the simulator's wiring: board profiles, an in-process control plane (store +
 * API server + HTTPS + the controllers of src/ctrl when they are built) and simulated
 * boards (one kubelet each, talking HTTP to the API server as a real board does).
 *
 * kube32-sim is a thin main() over this; kube32-server repeats the control-plane half by
 * hand today and could use sim_cp_start and sim_write_kubeconfig instead.
 *
 * The control plane serves the API with one addition the bare API server lacks: pods/log.
 * The API server answers GET .../pods/P/log itself (auth, the pod, its container, the
 * "waiting to start" error) with an empty body, since it keeps no logs; the control plane
 * here wraps its handler and fills the body from the kubelet of the pod's node: directly
 * for a board in this process (follow=true streams new lines every 250 ms), or with an
 * HTTP GET to the node's pod server /containerLogs/... (daemonEndpoints port, InternalIP)
 * for a board in another process (no follow there: the current lines, then the end).
 *
 * Context: start/stop from the main thread. Nothing here handles signals.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
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

/* ---- control plane ------------------------------------------------------------------------ */

struct sim_cp;

struct sim_cp_config {
	const char *data_dir;	 /* store, pki/, tokens (created); required */
	bool memory_store;	 /* keep objects in memory only (tests) */
	const char *host;	 /* bind address, "127.0.0.1" */
	uint16_t port;		 /* 0 picks a free port */
	bool tls;		 /* HTTPS (kubectl needs it to send the token) */
	bool controllers;	 /* start src/ctrl's scheduler and controllers if built */
	uint32_t node_grace_s;	 /* node lifecycle: lease silence before NotReady (0: default) */
	uint32_t pod_eviction_s; /* NotReady to eviction (0: default) */
};

k32_status_t sim_cp_start(const struct sim_cp_config *cfg, struct sim_cp **out,
			  struct k32_err *err);
/* Stops the HTTP server (ending every watch and log stream), the controllers, the API
 * server and the store. Boards of this process must be stopped AFTER it or before it,
 * never concurrently. NULL is ignored. */
void sim_cp_stop(struct sim_cp *cp);

uint16_t sim_cp_port(const struct sim_cp *cp);
/* CA file for clients (NULL over plain HTTP). */
const char *sim_cp_ca_file(const struct sim_cp *cp);
struct api_server *sim_cp_api(struct sim_cp *cp);
/* Whether the controllers run. */
bool sim_cp_has_controllers(const struct sim_cp *cp);
/* A node's token (system:node:<node>), created in the tokens file when new. */
k32_status_t sim_cp_node_token(struct sim_cp *cp, const char *node, char *out, size_t cap,
			       struct k32_err *err);
/* Lets the log proxy reach an in-process kubelet directly (kept by pointer until
 * sim_cp_detach_klet or sim_cp_stop). At most SIM_MAX_LOCAL_BOARDS. */
#define SIM_MAX_LOCAL_BOARDS 64
k32_status_t sim_cp_attach_klet(struct sim_cp *cp, struct klet *k, struct k32_err *err);
void sim_cp_detach_klet(struct sim_cp *cp, struct klet *k);

/* Writes a kubeconfig (cluster "kube32", user "admin" with token, context "kube32",
 * namespace default) for scheme://host:port, embedding ca_file when non-NULL. */
k32_status_t sim_write_kubeconfig(const char *path, const char *scheme, const char *host,
				  uint16_t port, const char *ca_file, const char *token,
				  struct k32_err *err);
/* The admin token. */
const char *sim_cp_admin_token(const struct sim_cp *cp);

/* ---- boards -------------------------------------------------------------------------------- */

struct sim_board_config {
	const char *name;		    /* node name */
	const struct klet_profile *profile; /* required */
	const char *api_host;		    /* "127.0.0.1" */
	uint16_t api_port;
	const char *ca_file;   /* NULL: plain HTTP */
	const char *token;     /* node token */
	const char *image_dir; /* the board's "SD card" */
	uint16_t pod_port;     /* pod HTTP server port (0: free port) */
	/* console commands beyond PODS/MEM/TASKS (klet_config.console_ext); may be NULL */
	k32_status_t (*console_ext)(void *ctx, const char *cmd, struct k32_buf *out);
	void *console_ext_ctx;
	struct hw_node *hw_node; /* its I2C buses (sim_hw_node), NULL: none */
	uint32_t lease_renew_ms; /* 0: the kubelet's default */
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
