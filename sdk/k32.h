/*
 * k32.h - the kube32 pod SDK: what a Wasm pod (C compiled with clang --target=wasm32) may
 * import from its node. Include it in pod code; it needs no kube32 source and no libc.
 *
 * Every function is a Wasm import from module "kube32". Pointers are pod (linear-memory)
 * addresses; the node checks every pointer and length and answers a bad one with
 * K32_ERR_INVALID_ARGS. Statuses are Zircon's values (K32_OK = 0, errors negative).
 *
 * Sections: kobj (kernel objects, below); hw (drivers) is added by the hardware module in
 * its own section.
 */
#ifndef K32_SDK_H
#define K32_SDK_H

#include <stdint.h>

#if defined(__wasm__)
#define K32_IMPORT(name) __attribute__((import_module("kube32"), import_name(#name)))
#else
#define K32_IMPORT(name)
#endif

/* ==== kobj: kernel objects ================================================================
 * Handles, channels, sockets, events, event pairs, ports, fifos, timers, VMOs. The model,
 * signals, rights and every status are described in docs/kobj.md of the kube32 tree.
 */

typedef uint32_t kx_handle_t;
typedef int32_t kx_status_t;
typedef int64_t kx_time_t; /* monotonic nanoseconds */

#define KX_HANDLE_INVALID 0u
#define KX_TIME_INFINITE  INT64_MAX

/* Status codes (Zircon values). */
#define KX_OK			0
#define KX_ERR_NOT_SUPPORTED	(-2)
#define KX_ERR_NO_RESOURCES	(-3)
#define KX_ERR_NO_MEMORY	(-4)
#define KX_ERR_INVALID_ARGS	(-10)
#define KX_ERR_BAD_HANDLE	(-11)
#define KX_ERR_WRONG_TYPE	(-12)
#define KX_ERR_OUT_OF_RANGE	(-14)
#define KX_ERR_BUFFER_TOO_SMALL (-15)
#define KX_ERR_BAD_STATE	(-20)
#define KX_ERR_TIMED_OUT	(-21)
#define KX_ERR_SHOULD_WAIT	(-22)
#define KX_ERR_CANCELED		(-23)
#define KX_ERR_PEER_CLOSED	(-24)
#define KX_ERR_NOT_FOUND	(-25)
#define KX_ERR_ACCESS_DENIED	(-30)

/* Rights. */
#define KX_RIGHT_DUPLICATE    (1u << 0)
#define KX_RIGHT_TRANSFER     (1u << 1)
#define KX_RIGHT_READ	      (1u << 2)
#define KX_RIGHT_WRITE	      (1u << 3)
#define KX_RIGHT_MAP	      (1u << 5)
#define KX_RIGHT_GET_PROPERTY (1u << 6)
#define KX_RIGHT_SET_PROPERTY (1u << 7)
#define KX_RIGHT_SIGNAL	      (1u << 12)
#define KX_RIGHT_SIGNAL_PEER  (1u << 13)
#define KX_RIGHT_WAIT	      (1u << 14)
#define KX_RIGHT_INSPECT      (1u << 15)
#define KX_RIGHT_SAME_RIGHTS  (1u << 31)

/* Signals. */
#define KX_SIG_READABLE			  (1u << 0)
#define KX_SIG_WRITABLE			  (1u << 1)
#define KX_SIG_PEER_CLOSED		  (1u << 2)
#define KX_SIG_SIGNALED			  (1u << 3)
#define KX_SIG_SOCKET_PEER_WRITE_DISABLED (1u << 4)
#define KX_SIG_SOCKET_WRITE_DISABLED	  (1u << 5)
#define KX_SIG_SOCKET_READ_THRESHOLD	  (1u << 10)
#define KX_SIG_SOCKET_WRITE_THRESHOLD	  (1u << 11)
#define KX_SIG_HANDLE_CLOSED		  (1u << 23)
#define KX_SIG_USER(n)			  (1u << (24 + (n)))

/* Options. */
#define KX_CHANNEL_READ_MAY_DISCARD 1u
#define KX_SOCKET_STREAM	    0u
#define KX_SOCKET_DATAGRAM	    1u
#define KX_SOCKET_PEEK		    (1u << 3)
#define KX_SOCKET_SHUTDOWN_WRITE    1u
#define KX_WAIT_ASYNC_TIMESTAMP	    2u
#define KX_CLOCK_MONOTONIC	    0u
#define KX_PKT_TYPE_USER	    0u
#define KX_PKT_TYPE_SIGNAL_ONE	    1u

/* Properties (kx_object_get_property / _set_property). */
#define KX_PROP_NAME		    3u	/* char[KX_MAX_NAME_LEN]; any object */
#define KX_PROP_SOCKET_RX_THRESHOLD 12u /* uint32_t bytes; READ_THRESHOLD at >= this queued */
#define KX_PROP_SOCKET_TX_THRESHOLD 13u /* uint32_t bytes; WRITE_THRESHOLD at >= this free */
#define KX_PROP_TIMER_SLACK	    32u /* int64_t ns >= 0; how late a timer may fire */
#define KX_MAX_NAME_LEN		    32u

/* Object types reported by kx_object_get_info. */
enum {
	KX_TYPE_CHANNEL = 1,
	KX_TYPE_SOCKET,
	KX_TYPE_EVENT,
	KX_TYPE_EVENTPAIR,
	KX_TYPE_PORT,
	KX_TYPE_FIFO,
	KX_TYPE_TIMER,
	KX_TYPE_VMO,
};

/* Port packet: 48 bytes. */
typedef struct {
	uint64_t key;
	uint32_t type;
	int32_t status;
	union {
		uint8_t user[32];
		struct {
			uint32_t trigger;
			uint32_t observed;
			uint64_t count;
			uint64_t timestamp;
			uint64_t reserved;
		} signal;
	};
} kx_packet_t;

/* kx_object_wait_many item: 12 bytes. */
typedef struct {
	kx_handle_t handle;
	uint32_t waitfor;
	uint32_t pending;
} kx_wait_item_t;

/* kx_object_get_info result: 32 bytes. */
typedef struct {
	uint32_t type;
	uint32_t rights;
	uint32_t signals;
	uint32_t handles;
	uint32_t queued;
	uint32_t capacity; /* most `queued` can reach (0: not a queue) */
	uint64_t timer_fired;
} kx_info_t;

/* kx_channel_call arguments: 32 bytes; the request's first 4 bytes are its txid. */
typedef struct {
	const void *wr_bytes;
	const kx_handle_t *wr_handles;
	void *rd_bytes;
	kx_handle_t *rd_handles;
	uint32_t wr_num_bytes;
	uint32_t wr_num_handles;
	uint32_t rd_num_bytes;
	uint32_t rd_num_handles;
} kx_channel_call_args_t;

/* Empty imports: the cost of crossing into the node (benchmarks). */
K32_IMPORT(kx_null) void kx_null(void);
K32_IMPORT(kx_null8)
uint32_t kx_null8(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);
K32_IMPORT(kx_clock_get_monotonic) kx_time_t kx_clock_get_monotonic(void);

K32_IMPORT(kx_handle_close) kx_status_t kx_handle_close(kx_handle_t h);
K32_IMPORT(kx_handle_duplicate)
kx_status_t kx_handle_duplicate(kx_handle_t h, uint32_t rights, kx_handle_t *out);
K32_IMPORT(kx_handle_replace)
kx_status_t kx_handle_replace(kx_handle_t h, uint32_t rights, kx_handle_t *out);

K32_IMPORT(kx_object_signal)
kx_status_t kx_object_signal(kx_handle_t h, uint32_t clear, uint32_t set);
K32_IMPORT(kx_object_signal_peer)
kx_status_t kx_object_signal_peer(kx_handle_t h, uint32_t clear, uint32_t set);
K32_IMPORT(kx_object_wait_one)
kx_status_t kx_object_wait_one(kx_handle_t h, uint32_t signals, kx_time_t deadline,
			       uint32_t *observed);
K32_IMPORT(kx_object_wait_many)
kx_status_t kx_object_wait_many(kx_wait_item_t *items, uint32_t count, kx_time_t deadline);
K32_IMPORT(kx_object_wait_async)
kx_status_t kx_object_wait_async(kx_handle_t h, kx_handle_t port, uint64_t key, uint32_t signals,
				 uint32_t opts);
K32_IMPORT(kx_object_get_info) kx_status_t kx_object_get_info(kx_handle_t h, kx_info_t *out);
/* NOT_FOUND for an unknown property, WRONG_TYPE for a threshold on a non-socket,
 * BUFFER_TOO_SMALL for a name read into fewer than KX_MAX_NAME_LEN bytes. */
K32_IMPORT(kx_object_get_property)
kx_status_t kx_object_get_property(kx_handle_t h, uint32_t prop, void *value, uint32_t size);
K32_IMPORT(kx_object_set_property)
kx_status_t kx_object_set_property(kx_handle_t h, uint32_t prop, const void *value, uint32_t size);

K32_IMPORT(kx_channel_create)
kx_status_t kx_channel_create(uint32_t opts, kx_handle_t *out0, kx_handle_t *out1);
K32_IMPORT(kx_channel_write)
kx_status_t kx_channel_write(kx_handle_t h, uint32_t opts, const void *bytes, uint32_t num_bytes,
			     const kx_handle_t *handles, uint32_t num_handles);
K32_IMPORT(kx_channel_read)
kx_status_t kx_channel_read(kx_handle_t h, uint32_t opts, void *bytes, kx_handle_t *handles,
			    uint32_t bytes_cap, uint32_t handles_cap, uint32_t *actual_bytes,
			    uint32_t *actual_handles);
K32_IMPORT(kx_channel_call)
kx_status_t kx_channel_call(kx_handle_t h, uint32_t opts, kx_time_t deadline,
			    const kx_channel_call_args_t *args, uint32_t *actual_bytes,
			    uint32_t *actual_handles);

K32_IMPORT(kx_socket_create)
kx_status_t kx_socket_create(uint32_t opts, uint32_t capacity, kx_handle_t *out0,
			     kx_handle_t *out1);
K32_IMPORT(kx_socket_write)
kx_status_t kx_socket_write(kx_handle_t h, uint32_t opts, const void *buf, uint32_t len,
			    uint32_t *actual);
K32_IMPORT(kx_socket_read)
kx_status_t kx_socket_read(kx_handle_t h, uint32_t opts, void *buf, uint32_t cap, uint32_t *actual);
K32_IMPORT(kx_socket_shutdown) kx_status_t kx_socket_shutdown(kx_handle_t h, uint32_t opts);

K32_IMPORT(kx_event_create) kx_status_t kx_event_create(uint32_t opts, kx_handle_t *out);
K32_IMPORT(kx_eventpair_create)
kx_status_t kx_eventpair_create(uint32_t opts, kx_handle_t *out0, kx_handle_t *out1);

K32_IMPORT(kx_port_create) kx_status_t kx_port_create(uint32_t opts, kx_handle_t *out);
K32_IMPORT(kx_port_queue) kx_status_t kx_port_queue(kx_handle_t h, const kx_packet_t *pkt);
K32_IMPORT(kx_port_wait)
kx_status_t kx_port_wait(kx_handle_t h, kx_time_t deadline, kx_packet_t *out);
K32_IMPORT(kx_port_cancel)
kx_status_t kx_port_cancel(kx_handle_t h, kx_handle_t source, uint64_t key);

K32_IMPORT(kx_fifo_create)
kx_status_t kx_fifo_create(uint32_t elem_count, uint32_t elem_size, uint32_t opts,
			   kx_handle_t *out0, kx_handle_t *out1);
K32_IMPORT(kx_fifo_write)
kx_status_t kx_fifo_write(kx_handle_t h, uint32_t elem_size, const void *data, uint32_t count,
			  uint32_t *actual);
K32_IMPORT(kx_fifo_read)
kx_status_t kx_fifo_read(kx_handle_t h, uint32_t elem_size, void *data, uint32_t count,
			 uint32_t *actual);

K32_IMPORT(kx_timer_create)
kx_status_t kx_timer_create(uint32_t opts, uint32_t clock_id, kx_handle_t *out);
K32_IMPORT(kx_timer_set)
kx_status_t kx_timer_set(kx_handle_t h, kx_time_t deadline, int64_t slack, int64_t period);
K32_IMPORT(kx_timer_cancel) kx_status_t kx_timer_cancel(kx_handle_t h);

K32_IMPORT(kx_vmo_create) kx_status_t kx_vmo_create(uint64_t size, uint32_t opts, kx_handle_t *out);
K32_IMPORT(kx_vmo_read)
kx_status_t kx_vmo_read(kx_handle_t h, void *buf, uint64_t offset, uint32_t len);
K32_IMPORT(kx_vmo_write)
kx_status_t kx_vmo_write(kx_handle_t h, const void *buf, uint64_t offset, uint32_t len);
K32_IMPORT(kx_vmo_get_size) kx_status_t kx_vmo_get_size(kx_handle_t h, uint64_t *out_size);

#if defined(__wasm32__)
_Static_assert(sizeof(kx_packet_t) == 48, "kx_packet_t layout");
_Static_assert(sizeof(kx_channel_call_args_t) == 32, "kx_channel_call_args_t layout");
_Static_assert(sizeof(kx_info_t) == 32, "kx_info_t layout");
#endif

/* ==== end of kobj ========================================================================= */

/* ==== hardware / drivers (owned by src/hw; hardware.md section 6) ============================
 * What a driver pod imports to talk to its Devices. Results are >= 0 on success and one of
 * the K32_E* codes below otherwise (these are NOT the KX_ERR_* values of the kobj section).
 * Pointers are checked against the pod's linear memory: a bad one gives K32_EINVAL, never a
 * trap. A pod reaches only the (bus, mux_channel, addr) triples of the Devices the kubelet
 * bound it to; anything else is K32_EPERM.
 *
 * A driver is reactive: the node calls the exported k32_init once, then k32_tick each time
 * the delay the previous tick returned (ms) has passed. Long waits are tick delays, not
 * sleeps: k32_sleep_ms stalls the interpreter task that serves every driver on the node.
 */

#define K32_EINVAL	 (-1) /* bad argument, buffer outside linear memory */
#define K32_EPERM	 (-2) /* (bus, channel, addr) not granted to this pod */
#define K32_ENODEV	 (-3) /* address NACK: device absent or channel off */
#define K32_EIO		 (-4) /* data NACK, arbitration loss, bus error */
#define K32_ETIMEDOUT	 (-5) /* transfer or bus-lock wait timed out */
#define K32_ENOSPC	 (-6) /* output buffer too small */
#define K32_ENOENT	 (-7) /* no such device index or parameter */
#define K32_MUX_NONE	 0xFFFFFFFFu
#define K32_I2C_MAX	 128 /* max wlen and rlen */
#define K32_SLEEP_MAX_MS 10

#if defined(__wasm__)
#define K32_EXPORT(name) __attribute__((export_name(#name)))
#else
#define K32_EXPORT(name)
#endif

typedef struct {	      /* 40 bytes, little-endian, 4-byte aligned */
	uint32_t bus;	      /* platform bus index */
	uint32_t mux_channel; /* 0..7 or K32_MUX_NONE */
	uint32_t addr;	      /* 7-bit address */
	uint32_t flags;	      /* reserved, 0 */
	char model[24];	      /* NUL-terminated, e.g. "bme688" */
} k32_device_info;

/* One I2C transaction: write wlen bytes, repeated START, read rlen bytes (either may be 0).
 * The node takes the bus lock and selects mux_channel when it differs from the cached one. */
K32_IMPORT(k32_i2c_write_read)
int32_t k32_i2c_write_read(uint32_t bus, uint32_t mux_channel, uint32_t addr, const void *wbuf,
			   uint32_t wlen, void *rbuf, uint32_t rlen);
/* Device `index` of this pod (0 = its first Device). K32_ENOENT past the last. */
K32_IMPORT(k32_device_get)
int32_t k32_device_get(uint32_t index, k32_device_info *out, uint32_t out_len);
/* spec.params[key] of Device `index` into buf (NUL-terminated when it fits): its length. */
K32_IMPORT(k32_device_param)
int32_t k32_device_param(uint32_t index, const char *key, uint32_t key_len, char *buf,
			 uint32_t buf_len);
/* spec.params[key] of Device `index` as a number: def when absent or not 1..9 decimal digits
 * (or the key is unreadable), else the value, at most max. Never an error. */
K32_IMPORT(k32_device_param_u32)
uint32_t k32_device_param_u32(uint32_t index, const char *key, uint32_t key_len, uint32_t def,
			      uint32_t max);
K32_IMPORT(k32_time_us) int64_t k32_time_us(void); /* monotonic since node boot */
K32_IMPORT(k32_time_ms) int64_t k32_time_ms(void);
/* At most K32_SLEEP_MAX_MS, else K32_EINVAL. */
K32_IMPORT(k32_sleep_ms) int32_t k32_sleep_ms(uint32_t ms);
/* level 0 error .. 3 debug; rate-limited, reaches kubectl logs. */
K32_IMPORT(k32_log) void k32_log(uint32_t level, const char *msg, uint32_t len);
/* Stages key := v printed with `decimals` digits (0: integer, exact up to 2^53). */
K32_IMPORT(k32_reading_f64)
int32_t k32_reading_f64(const char *key, uint32_t key_len, double v, int32_t decimals);
K32_IMPORT(k32_reading_str)
int32_t k32_reading_str(const char *key, uint32_t key_len, const char *v, uint32_t v_len);
/* Device `index`'s readings := the staged set (one status update); returns how many. */
K32_IMPORT(k32_publish) int32_t k32_publish(uint32_t device_index);
/* Sets the Device's Ready condition (reason e.g. "WrongChip"). The node keeps the common
 * ones itself: a failed k32_i2c_write_read to a Device sets Ready=False "NotFound" (address
 * NACK) or "BusError" (data NACK, bus error, timeout), with the bus, channel and address in
 * the message; the next k32_publish sets Ready=True "Reading". A condition set here stands
 * until the driver's next publish. */
K32_IMPORT(k32_device_condition)
int32_t k32_device_condition(uint32_t device_index, uint32_t ready, const char *reason,
			     uint32_t reason_len, const char *msg, uint32_t msg_len);

/* Exported by every driver:
 *   K32_EXPORT(k32_init) int32_t k32_init(void);   < 0: failed, restarted with back-off
 *   K32_EXPORT(k32_tick) int32_t k32_tick(void);   >= 0: ms to the next tick; < 0: error */

#if defined(__wasm32__)
_Static_assert(sizeof(k32_device_info) == 40, "k32_device_info layout");
#endif

/* ==== end of hardware / drivers =========================================================== */

#endif /* K32_SDK_H */
