/*
 * hw.h - kube32 hardware: I2C buses with a lock and a PCA9548A multiplexer, the simulated
 * devices behind them (BME688, M5Stack Mini Scales, MFRC522 RFID 2 with cards), and the host
 * functions driver pods import from module "kube32" (hardware.md sections 0, 4 and 6).
 *
 * Layers, bottom up:
 *
 *   hw_bus_backend_ops   one section-0 transaction (START, addr+W, wlen bytes, repeated START,
 *                        addr+R, rlen bytes, STOP). The simulator (hw_sim) is the backend in
 *                        kube32-sim; on the board it will be ESP-IDF's i2c_master driver
 *                        (i2c_master_transmit_receive per device handle, cached by address).
 *   struct hw_bus        the bus lock (one transaction at a time across tasks and cores), the
 *                        mux channel cache (the control byte is rewritten only when it changes
 *                        and forgotten after any error) and the mapping of backend results to
 *                        k32_status_t.
 *   hw_host / hw_pod     the "kube32" host functions: k32_i2c_write_read restricted to the
 *                        (bus, mux channel, address) triples granted to the pod, time, bounded
 *                        sleep, log, staged readings published as one update.
 *
 * Status mapping (the transaction call): address NACK -> K32_ERR_NOT_FOUND, data NACK and bus
 * error -> K32_ERR_IO, transfer or lock timeout -> K32_ERR_TIMED_OUT, bad argument ->
 * K32_ERR_INVALID_ARGS. Drivers see hardware.md's K32_E* codes (hw_status_to_driver).
 *
 * Context: hw_bus_xfer may block up to the lock timeout plus the transfer timeout; call it
 * from a task, never from an ISR. hw_sim functions are thread-safe (one mutex per simulator).
 */
#ifndef HW_H
#define HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/k32_alloc.h"
#include "base/k32_buf.h"
#include "base/k32_hostcall.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"
#include "platform/k32_platform.h"

/* Driver-facing result codes (hardware.md section 6; sdk/k32.h spells them K32_E*). */
enum {
	HW_OK = 0,
	HW_EINVAL = -1,	   /* bad argument, buffer outside linear memory */
	HW_EPERM = -2,	   /* (bus, channel, addr) not granted to this pod */
	HW_ENODEV = -3,	   /* address NACK: device absent or channel off */
	HW_EIO = -4,	   /* data NACK, arbitration loss, bus error */
	HW_ETIMEDOUT = -5, /* transfer or bus-lock wait timed out */
	HW_ENOSPC = -6,	   /* output buffer too small */
	HW_ENOENT = -7,	   /* no such device index or parameter */
};

#define HW_MUX_NONE 0xFFFFFFFFu /* device sits directly on the bus */

/* Maps a k32_status_t of the transaction call to the driver's code above. */
int32_t hw_status_to_driver(k32_status_t st);

/* ---- bus backend ------------------------------------------------------------------------ */

/* What one transaction ended with, as the wire saw it. */
enum hw_xfer_result {
	HW_XFER_OK = 0,
	HW_XFER_NACK_ADDR, /* nobody acknowledged the address */
	HW_XFER_NACK_DATA, /* the device refused a written byte */
	HW_XFER_TIMEOUT,   /* clock stretched too long / controller timed out */
	HW_XFER_BUS_ERROR, /* arbitration lost, stuck line, two devices answering */
};

struct hw_bus_backend_ops {
	/*
	 * One section-0 transaction to 7-bit addr: write w[0..wlen), then (rlen > 0) a repeated
	 * START and read r[0..rlen). wlen == rlen == 0 is an address probe. Must not block
	 * longer than timeout_ms. Called with the bus lock held.
	 */
	enum hw_xfer_result (*xfer)(void *ctx, uint8_t addr, const uint8_t *w, size_t wlen,
				    uint8_t *r, size_t rlen, uint32_t timeout_ms);
};

/* ---- bus ---------------------------------------------------------------------------------- */

struct hw_bus_config {
	bool has_mux;		  /* a PCA9548A sits on the bus */
	uint8_t mux_addr;	  /* its address, 0x70..0x77 */
	uint32_t lock_timeout_ms; /* wait for the bus lock; 0 = K32_HW_LOCK_TIMEOUT_MS */
	uint32_t xfer_timeout_ms; /* per transfer; 0 = K32_HW_XFER_TIMEOUT_MS */
};

struct hw_bus_stats {
	uint64_t xfers;	     /* device transactions attempted */
	uint64_t mux_writes; /* control-byte writes to the mux (cache misses) */
	uint64_t nack_addr;  /* results by kind */
	uint64_t nack_data;
	uint64_t timeouts;
	uint64_t bus_errors;
	uint64_t lock_timeouts; /* the lock was not free within lock_timeout_ms */
};

/* Caller-owned; initialise with hw_bus_init. */
struct hw_bus {
	struct k32_mutex mu;		      /* guards busy and the fields below */
	struct k32_cond cv;		      /* signalled when busy clears */
	bool busy;			      /* a transaction holds the bus */
	const struct hw_bus_backend_ops *ops; /* the wire */
	void *ctx;			      /* backend context */
	uint32_t index;			      /* platform bus number */
	struct hw_bus_config cfg;	      /* timeouts resolved */
	int16_t mux_cached;		      /* control byte last written, -1 = unknown */
	struct hw_bus_stats stats;	      /* counters, under mu */
};

/* Initialises bus. K32_ERR_INVALID_ARGS if ops is NULL or the mux address is not 0x70..0x77. */
k32_status_t hw_bus_init(struct hw_bus *bus, uint32_t index, const struct hw_bus_backend_ops *ops,
			 void *ctx, const struct hw_bus_config *cfg, struct k32_err *err);
void hw_bus_fini(struct hw_bus *bus);

/*
 * Boot-time: writes 0x00 to the mux (nothing connected) and caches it. K32_OK when the bus
 * has no mux. Errors as hw_bus_xfer.
 */
k32_status_t hw_bus_mux_reset(struct hw_bus *bus, struct k32_err *err);

/*
 * The single transaction call: takes the bus lock (waiting up to lock_timeout_ms), selects
 * mux_channel (0..7, or HW_MUX_NONE) on the bus's mux when the cached control byte differs
 * (its own write transaction, taking effect at its STOP), then runs the transfer and releases
 * the lock. Any error forgets the cached control byte, so the next call rewrites it.
 * @retval K32_OK               done; r holds rlen bytes
 * @retval K32_ERR_INVALID_ARGS addr > 0x7F or the mux's own address, wlen/rlen over
 *                              K32_HW_I2C_MAX, NULL buffer with a length, channel > 7 or a
 *                              channel on a bus without mux
 * @retval K32_ERR_NOT_FOUND    address NACK (device absent or on another channel)
 * @retval K32_ERR_IO           data NACK or bus error (mux select included)
 * @retval K32_ERR_TIMED_OUT    transfer timeout, or the lock was busy too long
 * Context: task; blocks at most lock + transfer timeouts.
 */
k32_status_t hw_bus_xfer(struct hw_bus *bus, uint32_t mux_channel, uint32_t addr, const void *w,
			 size_t wlen, void *r, size_t rlen, struct k32_err *err);

/* Copies the counters. */
void hw_bus_get_stats(struct hw_bus *bus, struct hw_bus_stats *out);

/* ---- simulator ---------------------------------------------------------------------------- */

enum hw_model {
	HW_MODEL_BME688 = 0, /* Bosch BME688 (ENV Pro unit), 0x76/0x77 */
	HW_MODEL_MINISCALE,  /* M5Stack Unit Mini Scales, 0x26 */
	HW_MODEL_MFRC522,    /* M5Stack RFID 2 (MFRC522-compatible), 0x28 */
};

/* "bme688", "miniscale", "rfid"; NULL for an unknown value. */
const char *hw_model_name(enum hw_model model);
/* Parses a model name (also "mfrc522"). K32_ERR_NOT_FOUND if unknown. */
k32_status_t hw_model_parse(const char *name, enum hw_model *out);

struct hw_sim_bus_config {
	const char *node; /* board (Node name), e.g. "cardputer-1"; kept by pointer */
	uint32_t bus;	  /* platform bus index on that board */
	bool has_mux;	  /* a PCA9548A is on the bus */
	uint8_t mux_addr; /* its address (0x70..0x77) */
};

struct hw_sim_dev_config {
	const char *name;     /* unique device name, e.g. "envpro"; kept by pointer */
	const char *node;     /* board it sits on */
	uint32_t bus;	      /* bus index */
	uint32_t mux_channel; /* 0..7 behind the bus's mux, or HW_MUX_NONE */
	uint8_t addr;	      /* 7-bit address */
	enum hw_model model;
};

/* A clock in microseconds: tests give a virtual one, kube32-sim the platform's. */
typedef uint64_t (*hw_clock_fn)(void *ud);

struct hw_sim_config {
	const struct hw_sim_bus_config *buses; /* every simulated bus */
	size_t nbuses;
	const struct hw_sim_dev_config *devs; /* every simulated device */
	size_t ndevs;
	hw_clock_fn now_us; /* NULL: k32_now_us */
	void *clock_ud;
};

struct hw_sim;

/*
 * Builds a simulator from cfg (copied, names kept by pointer). Devices start powered with
 * their defaults: BME688 with the calibration block of hardware.md's worked example and 25 C,
 * 101325 Pa, 40 %RH, 100 kOhm; scale empty (zero point 8 400 000, 400 counts/g); RFID reader
 * with no card.
 * @retval K32_ERR_OUT_OF_RANGE over K32_HW_SIM_MAX_DEVICES / _BUSES
 * @retval K32_ERR_INVALID_ARGS a device on an unknown bus, a channel without mux, addr > 0x7F
 * @retval K32_ERR_ALREADY_EXISTS two devices with one name or one (node, bus, channel, addr)
 * @retval K32_ERR_NO_MEMORY
 */
k32_status_t hw_sim_new(const struct k32_allocator *alloc, const struct hw_sim_config *cfg,
			struct hw_sim **out, struct k32_err *err);
void hw_sim_free(struct hw_sim *sim);

/* The backend of (node, bus): ops and ctx for hw_bus_init. K32_ERR_NOT_FOUND if unknown. */
k32_status_t hw_sim_backend(struct hw_sim *sim, const char *node, uint32_t bus,
			    const struct hw_bus_backend_ops **out_ops, void **out_ctx);

/*
 * Changes a physical value of device `name` while the simulator runs. Keys:
 *   bme688:    temperature_c, pressure_pa, humidity_pct, gas_ohm (the ADC words are derived
 *              by inverting Bosch's integer compensation); heater_fault (1: heat_stab_r = 0)
 *   miniscale: weight_g (true load), zero_point (raw counts at no load), sensitivity
 *              (counts per gram), noise (sigma, counts), button (1 pressed; the press tares)
 *   all:       present (0 makes the device NACK its address, 1 brings it back)
 * @retval K32_ERR_NOT_FOUND    no such device or key for its model
 * @retval K32_ERR_INVALID_ARGS value out of the physical range (message says it)
 */
k32_status_t hw_sim_set_value(struct hw_sim *sim, const char *name, const char *key, double value,
			      struct k32_err *err);
/* Reads back a value set above (or a derived one: bme688 adc_t, adc_p, adc_h, adc_g,
 * gas_range; miniscale raw_adc, offset, gap). */
k32_status_t hw_sim_get_value(struct hw_sim *sim, const char *name, const char *key, double *out,
			      struct k32_err *err);

/* BME688 raw mode: the next measurements report these ADC words as they are. */
k32_status_t hw_sim_bme688_set_raw(struct hw_sim *sim, const char *name, uint32_t adc_t,
				   uint32_t adc_p, uint32_t adc_h, uint32_t adc_g,
				   uint32_t gas_range, struct k32_err *err);

/* Places a card with a 4- or 7-byte UID on RFID reader `name` (replacing any card). atqa
 * and sak 0 pick the defaults (04 00 / 08 for 4 bytes, 44 00 / 00 for 7). */
k32_status_t hw_sim_rfid_place(struct hw_sim *sim, const char *name, const uint8_t *uid,
			       size_t uid_len, uint16_t atqa, uint8_t sak, struct k32_err *err);
/* Removes the card (all its state is discarded). K32_OK when none was there. */
k32_status_t hw_sim_rfid_remove(struct hw_sim *sim, const char *name, struct k32_err *err);

/*
 * Injects faults: the next `count` transactions on (node, bus) addressed to addr (0xFF: any
 * address, the mux included) end with `kind` instead of reaching the device.
 */
k32_status_t hw_sim_inject(struct hw_sim *sim, const char *node, uint32_t bus, uint8_t addr,
			   enum hw_xfer_result kind, uint32_t count, struct k32_err *err);

/* Devices in the simulator, and the config of device i (false when i is out of range). */
size_t hw_sim_device_count(struct hw_sim *sim);
bool hw_sim_device_info(struct hw_sim *sim, size_t i, struct hw_sim_dev_config *out,
			bool *out_present);

/*
 * One console (or HTTP) command line for the simulator, its answer appended to out:
 *   hw list                                   devices: name node bus channel address model
 *   hw set <device> <key> <value>             hw_sim_set_value
 *   hw get <device> <key>                     hw_sim_get_value
 *   hw raw <device> <adc_t> <adc_p> <adc_h> <adc_g> <range>   BME688 raw words
 *   hw fault <node> <bus> <addr|any> <nack-addr|nack-data|timeout|bus-error|none> [count]
 *   rfid place <device> <uid-hex>             4- or 7-byte UID, e.g. 5A3C910E
 *   rfid remove <device>
 * Numbers may be decimal or 0x-hex. K32_ERR_INVALID_ARGS with a usage line for a bad command;
 * the simulator's own statuses otherwise.
 */
k32_status_t hw_sim_command(struct hw_sim *sim, const char *line, struct k32_buf *out,
			    struct k32_err *err);

/* Counters: transactions the simulated mux of (node, bus) received (control writes). */
uint64_t hw_sim_mux_writes(struct hw_sim *sim, const char *node, uint32_t bus);

/* ---- host functions for driver pods --------------------------------------------------------- */

struct hw_param {
	const char *key;   /* spec.params key */
	const char *value; /* its value */
};

/* One Device granted to a pod (the kubelet fills these from the pod's Devices). */
struct hw_grant {
	uint32_t bus;		       /* platform bus index */
	uint32_t mux_channel;	       /* 0..7 or HW_MUX_NONE */
	uint32_t addr;		       /* 7-bit address */
	uint32_t flags;		       /* reserved, 0 */
	char model[24];		       /* "bme688", NUL-terminated */
	const char *name;	       /* Device name (for messages); may be NULL */
	const struct hw_param *params; /* spec.params, kept by pointer */
	uint32_t nparams;
	uint32_t poll_ms; /* spec.pollIntervalMs (0: none): k32_device_param answers the key
			     "pollIntervalMs" with it when spec.params has no such key */
};

/*
 * A set of readings, packed: "key\0value\0" pairs in kv[0..len), at most
 * K32_HW_MAX_READINGS of them, keys shorter than K32_HW_READING_KEY_LEN (e.g.
 * "temperature_c"), values shorter than K32_HW_READING_VALUE_LEN (a decimal string or text).
 */
struct hw_readings {
	uint16_t len; /* bytes used in kv */
	uint8_t n;    /* pairs */
	char kv[K32_HW_READINGS_BYTES];
};

void hw_readings_clear(struct hw_readings *r);
/* key := value (replacing the key's earlier value). HW_OK, or HW_ENOSPC when a limit above
 * or K32_HW_READINGS_BYTES would be passed (r unchanged then). */
int32_t hw_readings_set(struct hw_readings *r, const char *key, size_t key_len, const char *value,
			size_t value_len);
/* The value of key, or NULL. */
const char *hw_readings_get(const struct hw_readings *r, const char *key);
/* Iteration: for (size_t o = 0; (o = hw_readings_next(r, o, &k, &v)) != 0;) ... ; returns
 * the offset after the pair at off, 0 past the last one. */
size_t hw_readings_next(const struct hw_readings *r, size_t off, const char **key,
			const char **value);
/* Whether a and b hold the same keys with the same values (in any order). */
bool hw_readings_equal(const struct hw_readings *a, const struct hw_readings *b);

/* Callbacks the embedder (kubelet, tests) provides. Each gets the pod's user pointer. */
struct hw_host_ops {
	/* k32_publish: the staged readings as one update for grant `index`. Must not block. */
	void (*publish)(void *user, uint32_t index, const struct hw_grant *dev,
			const struct hw_readings *readings, uint64_t time_us);
	/* k32_device_condition. May be NULL (ignored). */
	void (*condition)(void *user, uint32_t index, const struct hw_grant *dev, bool ready,
			  const char *reason, size_t reason_len, const char *msg, size_t msg_len);
	/* k32_log (already rate-limited). NULL: k32_log with component "driver". */
	void (*log)(void *user, uint32_t level, const char *msg, size_t len);
	/* Clock and sleep; NULL: the platform's. A simulator with a virtual clock advances it
	 * in sleep_us. */
	uint64_t (*now_us)(void *user);
	void (*sleep_us)(void *user, uint64_t us);
};

/* The node's hardware: its buses and callbacks. Caller-owned, shared by all driver pods. */
struct hw_host {
	struct hw_bus *bus[K32_HW_MAX_BUSES]; /* by platform index; NULL = none */
	const struct hw_host_ops *ops;
};

struct hw_pod_stats {
	uint64_t i2c_ok;	 /* transactions done */
	uint64_t i2c_errors;	 /* transactions that failed on the bus */
	uint64_t denied;	 /* k32_i2c_write_read outside the grants (K32_EPERM) */
	uint64_t publishes;	 /* k32_publish calls that reached the embedder */
	uint64_t log_dropped;	 /* log lines over K32_HW_LOG_PER_S */
	int32_t last_i2c_status; /* last transaction's driver code */
};

/* Per driver pod; caller-owned (the kubelet's pod record), set up with hw_pod_init. */
struct hw_pod {
	const struct hw_host *host;    /* node hardware */
	void *user;		       /* passed to the callbacks */
	const struct hw_grant *grants; /* the pod's Devices, kept by pointer */
	uint32_t ngrants;
	/* the node's own Ready condition per Device (first K32_HW_POD_AUTO_COND of them): 0 none
	 * reported, 1 Ready/Reading, 2 set by the driver, else the failed transfer's code */
	int8_t cond[K32_HW_POD_AUTO_COND];
	struct hw_readings staged; /* readings since the last publish */
	uint64_t log_window_us;	   /* start of the current 1 s log window */
	uint32_t log_count;	   /* lines in it */
	struct hw_pod_stats stats;
};

void hw_pod_init(struct hw_pod *pod, const struct hw_host *host, const struct hw_grant *grants,
		 uint32_t ngrants, void *user);

/*
 * The node keeps each Device's Ready condition itself, so a driver need not carry the code
 * and the messages: a transfer to Device `index` that fails with an address NACK reports
 * Ready=False "NotFound", a data NACK, bus error or timeout Ready=False "BusError" (each once
 * per distinct failure, the message naming the bus, channel and address), and a k32_publish
 * after a failure (or the first one) Ready=True "Reading". A driver's own
 * k32_device_condition (e.g. "WrongChip") stands until its next publish. The host functions
 * call these; a test double of the imports (apps/drivers/drv_fake.c) calls them too.
 */
void hw_pod_xfer_failed(struct hw_pod *pod, uint32_t index, int32_t code);
void hw_pod_published(struct hw_pod *pod, uint32_t index);

/* How the host functions find the calling pod (as kobj_pod_env does for kobj). */
struct hw_pod_env {
	/* Returns the hw_pod of an instance; NULL hook: instance_user is the struct hw_pod. */
	struct hw_pod *(*pod_of)(void *instance_user);
};

#define HW_HOSTFN_COUNT 12

/* Fills out with the "kube32" driver host functions bound to env (may be NULL; kept by
 * pointer); returns how many were written (HW_HOSTFN_COUNT when cap allows). */
size_t hw_hostfns(const struct hw_pod_env *env, struct k32_hostfn_def *out, size_t cap);

/* k32_device_param_u32's reading of a param value: def when v is NULL or not 1..9 decimal
 * digits, else the number, at most max. */
uint32_t hw_param_u32(const char *v, uint32_t def, uint32_t max);

/* The table bound to env = NULL (instance_user is the struct hw_pod). */
extern const struct k32_hostfn_def hw_hostfn_table[HW_HOSTFN_COUNT];

/* ---- the Device resource (hardware.md section 7): kubelet and controller helpers ---------------
 *
 * What the kubelet and the Device controller need, kept here so they stay thin: parsing a
 * kube32.io/v1alpha1 Device into a grant, the driver pod a controller creates for it, the
 * duplicate check, and a per-Device status publisher that turns k32_publish/condition
 * calls into JSON merge patches for devices/<name>/status, at most one per min interval
 * (at once when a string reading such as uid or present changes), with Ready=False
 * "NoReading" after three silent poll intervals. Context: one thread per object; no locks.
 */
#define HW_DEVICE_MAX_PARAMS 8	/* spec.params entries kept */
#define HW_DEVICE_PARAM_LEN  32 /* bytes of a param key or value, NUL included */
#define HW_NAME_LEN	     64 /* Kubernetes names here: 63 + NUL */

struct hw_device {
	char name[HW_NAME_LEN]; /* metadata.name */
	char ns[HW_NAME_LEN];	/* metadata.namespace ("default" when absent) */
	char uid[HW_NAME_LEN];	/* metadata.uid ("" when absent) */
	char node[HW_NAME_LEN]; /* spec.node */
	char model[24];		/* spec.model */
	uint32_t bus;		/* spec.bus (0) */
	uint32_t mux_channel;	/* spec.muxChannel or HW_MUX_NONE */
	uint32_t addr;		/* spec.address */
	uint32_t poll_ms;	/* spec.pollIntervalMs (rfid 200, bme688 3000, miniscale 1000) */
	struct hw_param params[HW_DEVICE_MAX_PARAMS]; /* point into store below */
	uint32_t nparams;
	uint32_t store_len;			/* bytes used in store */
	char store[K32_HW_DEVICE_PARAMS_BYTES]; /* "key\0value\0" pairs */
};

/*
 * Parses a Device object. K32_ERR_INVALID_ARGS (err names the field) for a missing node,
 * model or address, an unknown model, values out of range, or params that do not fit
 * (HW_DEVICE_MAX_PARAMS, HW_DEVICE_PARAM_LEN, K32_HW_DEVICE_PARAMS_BYTES). The params point
 * into the struct: a copy of it must call hw_device_rebase.
 */
k32_status_t hw_device_parse(const cJSON *obj, struct hw_device *out, struct k32_err *err);

/* Points a copied hw_device's params at its own store. */
void hw_device_rebase(struct hw_device *d);

/* The grant for a pod bound to d (params point into d, which must outlive the grant). */
void hw_device_grant(const struct hw_device *d, struct hw_grant *out);

/* Name of the driver pod of d: "<model>-<device name>", cut to 63 bytes. */
void hw_device_pod_name(const struct hw_device *d, char *out, size_t cap);

/*
 * The driver pod manifest (JSON) for d, appended to out: bound to spec.node, image
 * "<model>.wasm", owned by the Device (controller reference; uid when known), labels
 * kube32.io/device and kube32.io/driver, annotation kube32.io/hardware "i2c:<model>", a
 * value stack of K32_HW_DRIVER_STACK_BYTES and K32_HW_DRIVER_FRAMES frames
 * (kube32.io/stack-bytes, kube32.io/call-depth) and a memory limit of
 * K32_HW_DRIVER_MEM_BYTES, or mem_limit (a quantity such as "2Ki": the most the caller
 * lets a driver pod have) when that is smaller. NULL mem_limit: no cap.
 */
k32_status_t hw_device_pod_manifest(const struct hw_device *d, const char *mem_limit,
				    struct k32_buf *out, struct k32_err *err);

/* Index in devs[0..n) of a Device other than d (by namespace/name) on d's (node, bus,
 * muxChannel, address), or -1. The controller refuses d then. */
int hw_device_conflict(const struct hw_device *devs, size_t n, const struct hw_device *d);

/* Per-Device status publisher. Caller-owned; hw_devstatus_init first. */
struct hw_devstatus {
	struct hw_readings cur;	   /* latest readings */
	struct hw_readings sent;   /* as last sent (for nulls) */
	uint64_t last_read_us;	   /* when readings last arrived (0: never) */
	uint64_t last_read_wall_s; /* the same on the wall clock (lastReadTime) */
	uint64_t last_sent_us;	   /* when a patch was last produced (0: never) */
	uint32_t poll_ms;	   /* the Device's poll interval */
	uint32_t min_interval_ms;  /* at most one update per this (default 1000) */
	bool dirty;		   /* something to send */
	bool urgent;		   /* a string reading or the condition changed */
	bool ready;		   /* Ready condition */
	char reason[32];   /* its reason (Reading, NotFound, BusError, NoReading, DriverCrash) */
	char message[128]; /* its message */
	uint64_t transition_wall_s; /* lastTransitionTime */
	bool have_cond;		    /* a condition was set */
	bool event_pending;	    /* a Warning Event is owed for the last failure */
};

void hw_devstatus_init(struct hw_devstatus *st, uint32_t poll_ms, uint32_t min_interval_ms);
/* k32_publish: the readings as one update. */
void hw_devstatus_readings(struct hw_devstatus *st, const struct hw_readings *r, uint64_t now_us,
			   uint64_t wall_s);
/* k32_device_condition, or the kubelet's own (reason "DriverCrash" when the pod traps). */
void hw_devstatus_condition(struct hw_devstatus *st, bool ready, const char *reason,
			    size_t reason_len, const char *msg, size_t msg_len, uint64_t wall_s);
/*
 * Whether an update is due at now_us: readings or a condition changed and the min interval
 * has passed (at once when urgent). Also turns Ready False/"NoReading" when no readings came
 * for three poll intervals.
 */
bool hw_devstatus_due(struct hw_devstatus *st, uint64_t now_us, uint64_t wall_s);
/*
 * Appends the merge patch for devices/<name>/status: {"status":{"readings":{...},
 * "lastReadTime":..., "conditions":[Ready], "driverPod":...}} (readings dropped since the last
 * patch are sent as null) and marks it sent at now_us. driver_pod may be NULL.
 */
k32_status_t hw_devstatus_patch(struct hw_devstatus *st, const char *driver_pod, uint64_t now_us,
				struct k32_buf *out, struct k32_err *err);

/*
 * When the Device just went Ready=False (NotFound, BusError, DriverCrash, NoReading...), appends
 * a core/v1 Event about it (type Warning, the condition's reason and message, involvedObject
 * the Device, source component) for POST /api/v1/namespaces/<ns>/events and returns true, once
 * per failure; false when none is owed.
 */
bool hw_devstatus_event(struct hw_devstatus *st, const struct hw_device *d, const char *component,
			uint64_t wall_s, struct k32_buf *out, struct k32_err *err);

/* RFC 3339 UTC ("2025-01-01T12:00:03Z") of wall seconds; out must hold 21 bytes. */
void hw_rfc3339(uint64_t wall_s, char *out);

/* ---- node side: driver pods bound to Devices (hw_node.c) ---------------------------------
 *
 * The kubelet's glue in one place: a struct hw_node holds the node's buses and clocks; each
 * driver pod gets a struct hw_node_pod (inside the kubelet's own pod record) bound to its
 * Device with hw_node_bind. The host functions' callbacks then land in that slot's status
 * publisher, and the kubelet asks hw_node_pod_patch for the next devices/<name>/status merge
 * patch whenever hw_node_pod_due says one is due. Link hw_hostfns() with a hw_pod_env whose
 * pod_of returns &slot->pod. Context: the kubelet's worker (one thread per node).
 */
struct hw_node_config {
	struct hw_bus *bus[K32_HW_MAX_BUSES];	 /* the node's buses by index (NULL: none) */
	hw_clock_fn now_us;			 /* monotonic clock; NULL: platform */
	uint64_t (*wall_s)(void *ud);		 /* wall clock for timestamps; NULL: platform */
	void (*sleep_us)(void *ud, uint64_t us); /* k32_sleep_ms; NULL: platform */
	void *clock_ud;
	/* a driver's k32_log line (already rate-limited), for the pod's log; NULL: k32_log */
	void (*log)(void *ctx, const char *pod, uint32_t level, const char *msg, size_t len);
	void *log_ctx;
	uint32_t min_interval_ms; /* status updates per Device at most this often (1000) */
};

struct hw_node_pod;

struct hw_node {
	struct hw_node_config cfg;
	struct hw_host host; /* buses + the callbacks below */
	struct hw_host_ops ops;
	struct hw_node_pod *bound; /* slots bound now (list through hw_node_pod.next) */
};

struct hw_node_pod {
	struct hw_node *node;
	struct hw_device dev;	    /* the Device (owns the params) */
	struct hw_grant grant;	    /* its triple */
	struct hw_pod pod;	    /* what the host functions see */
	struct hw_devstatus status; /* what goes to devices/<name>/status */
	char pod_name[HW_NAME_LEN]; /* the driver pod */
	bool bound;
	struct hw_node_pod *next; /* the node's next bound slot */
};

void hw_node_init(struct hw_node *n, const struct hw_node_config *cfg);
/*
 * Binds slot to the Device object `device` for driver pod pod_name: parses it, grants its
 * (bus, channel, address), and resets the status publisher. One driver per Device: a second
 * pod naming a Device that a bound slot of this node already drives is refused. slot must be
 * zeroed (calloc) or unbound.
 * @retval K32_ERR_INVALID_ARGS   the Device does not parse (err names the field)
 * @retval K32_ERR_NOT_FOUND      its bus does not exist on this node
 * @retval K32_ERR_ALREADY_EXISTS another pod on this node drives the Device (err names it)
 */
k32_status_t hw_node_bind(struct hw_node *n, struct hw_node_pod *slot, const cJSON *device,
			  const char *pod_name, struct k32_err *err);
void hw_node_unbind(struct hw_node_pod *slot);
/* The driver trapped or exited with an error: Ready=False with reason (e.g. "DriverCrash"). */
void hw_node_pod_failed(struct hw_node_pod *slot, const char *reason, const char *msg);
/* Whether a status update is due now. */
bool hw_node_pod_due(struct hw_node_pod *slot);
/* The Warning Event owed for the slot's last failure (see hw_devstatus_event). */
bool hw_node_pod_event(struct hw_node_pod *slot, const char *component, struct k32_buf *out,
		       struct k32_err *err);
/* Appends the merge patch for devices/<dev.name>/status in namespace dev.ns. */
k32_status_t hw_node_pod_patch(struct hw_node_pod *slot, struct k32_buf *out, struct k32_err *err);

#endif /* HW_H */
