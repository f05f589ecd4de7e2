/*
 * kobj.h - kube32 kernel objects: handles and rights, channels, sockets, events, event pairs,
 * ports, fifos, timers and VMOs, modelled on Zircon (docs/kobj.md, shared/docs/kobj.md).
 *
 * Model. Objects live in fixed pools sized in include/k32/k32_config.h (section "kobj"). An
 * owner (a pod, or a native service) reaches them through handles in its own handle table
 * (struct kobj_owner, caller-owned storage). A handle is `generation << 8 | slot`; a stale
 * generation gives K32_ERR_BAD_HANDLE, a handle of another type K32_ERR_WRONG_TYPE, a missing
 * right K32_ERR_ACCESS_DENIED. Every object has a 32-bit signal word (Zircon's bit layout);
 * waits are level-triggered on the current state.
 *
 * Threads. Objects are safe across threads and cores: each object (or endpoint pair) has its
 * own spinlock, held only for short, non-blocking work. A handle table is used by one thread
 * at a time (a pod's task, or the native service that owns it). The one exception: another
 * thread may close handles of, or tear down, an owner whose thread is blocked in a kobj wait
 * or entering one (that is how a stopping pod is woken: its wait returns K32_ERR_CANCELED, or
 * K32_ERR_BAD_HANDLE if the close came before the wait looked its handle up).
 *
 * Blocking calls take an absolute deadline in monotonic nanoseconds (kobj_now_ns());
 * 0 polls and KOBJ_TIME_INFINITE never times out. Nothing here allocates from a heap: a full
 * pool returns K32_ERR_NO_MEMORY (global pools) or K32_ERR_NO_RESOURCES (per-owner quotas),
 * and kobj_owner_last_error() says which limit to raise.
 */
#ifndef KOBJ_H
#define KOBJ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_hostcall.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

typedef uint32_t kobj_handle_t;
typedef int64_t kobj_time_t; /* monotonic nanoseconds */

#define KOBJ_HANDLE_INVALID ((kobj_handle_t)0)
#define KOBJ_TIME_INFINITE  INT64_MAX
#define KOBJ_SLOT_BITS	    8u

/* clang-format off */
/* Rights (Zircon's bit values). */
#define KOBJ_RIGHT_NONE          0u
#define KOBJ_RIGHT_DUPLICATE     (1u << 0)
#define KOBJ_RIGHT_TRANSFER      (1u << 1)
#define KOBJ_RIGHT_READ          (1u << 2)
#define KOBJ_RIGHT_WRITE         (1u << 3)
#define KOBJ_RIGHT_MAP           (1u << 5)
#define KOBJ_RIGHT_GET_PROPERTY  (1u << 6)
#define KOBJ_RIGHT_SET_PROPERTY  (1u << 7)
#define KOBJ_RIGHT_SIGNAL        (1u << 12)
#define KOBJ_RIGHT_SIGNAL_PEER   (1u << 13)
#define KOBJ_RIGHT_WAIT          (1u << 14)
#define KOBJ_RIGHT_INSPECT       (1u << 15)
#define KOBJ_RIGHT_SAME_RIGHTS   (1u << 31)
#define KOBJ_RIGHTS_PROPERTY     (KOBJ_RIGHT_GET_PROPERTY | KOBJ_RIGHT_SET_PROPERTY)
#define KOBJ_RIGHTS_BASIC        (KOBJ_RIGHT_TRANSFER | KOBJ_RIGHT_DUPLICATE | \
				  KOBJ_RIGHT_WAIT | KOBJ_RIGHT_INSPECT | KOBJ_RIGHTS_PROPERTY)
#define KOBJ_RIGHTS_IO           (KOBJ_RIGHT_READ | KOBJ_RIGHT_WRITE)

/* Signals (Zircon's bit layout). */
#define KOBJ_SIG_NONE                 0u
#define KOBJ_SIG_READABLE             (1u << 0)
#define KOBJ_SIG_WRITABLE             (1u << 1)
#define KOBJ_SIG_PEER_CLOSED          (1u << 2)
#define KOBJ_SIG_SIGNALED             (1u << 3)
#define KOBJ_SIG_SOCKET_PEER_WRITE_DISABLED (1u << 4)
#define KOBJ_SIG_SOCKET_WRITE_DISABLED      (1u << 5)
#define KOBJ_SIG_SOCKET_READ_THRESHOLD      (1u << 10)
#define KOBJ_SIG_SOCKET_WRITE_THRESHOLD     (1u << 11)
#define KOBJ_SIG_USER_ALL             0xff000000u
#define KOBJ_SIG_USER(n)              (1u << (24 + (n)))
/* Synthetic: reported in `observed` when a wait ended because its handle was closed. */
#define KOBJ_SIG_HANDLE_CLOSED        (1u << 23)

/* Options. */
#define KOBJ_CHANNEL_READ_MAY_DISCARD 1u  /* channel_read: drop a message that does not fit */
#define KOBJ_SOCKET_STREAM            0u  /* socket_create */
#define KOBJ_SOCKET_DATAGRAM          1u
#define KOBJ_SOCKET_PEEK              (1u << 3) /* socket_read: leave the data queued */
#define KOBJ_SOCKET_SHUTDOWN_WRITE    1u  /* socket_shutdown */
#define KOBJ_WAIT_ASYNC_TIMESTAMP     2u  /* wait_async: record when the packet triggered */
#define KOBJ_VMO_PSRAM                1u  /* vmo_create: external RAM (board); one RAM here */
#define KOBJ_CLOCK_MONOTONIC          0u  /* timer_create clock */

/* Properties (Zircon's ids): kobj_object_get_property / _set_property. */
#define KOBJ_PROP_NAME                3u  /* char[KOBJ_MAX_NAME_LEN], NUL-terminated; any type */
#define KOBJ_PROP_SOCKET_RX_THRESHOLD 12u /* uint32_t bytes; sockets */
#define KOBJ_PROP_SOCKET_TX_THRESHOLD 13u /* uint32_t bytes; sockets */
#define KOBJ_PROP_TIMER_SLACK	      32u /* int64_t ns >= 0; timers (kube32's own number) */
#define KOBJ_MAX_NAME_LEN             32u /* with the NUL */

/* Port packet types. */
#define KOBJ_PKT_TYPE_USER            0u
#define KOBJ_PKT_TYPE_SIGNAL_ONE      1u
/* clang-format on */

enum kobj_type {
	KOBJ_TYPE_NONE = 0,
	KOBJ_TYPE_CHANNEL,
	KOBJ_TYPE_SOCKET,
	KOBJ_TYPE_EVENT,
	KOBJ_TYPE_EVENTPAIR,
	KOBJ_TYPE_PORT,
	KOBJ_TYPE_FIFO,
	KOBJ_TYPE_TIMER,
	KOBJ_TYPE_VMO,
	KOBJ_TYPE_COUNT,
};

/*
 * One handle-table slot. Private: use the functions below. 12 bytes on a 32-bit target. The
 * fields are atomics (relaxed: plain loads and stores) because another thread may close a
 * handle while the owner's thread looks it up at the start of a wait (see kobj_owner.gate).
 */
struct kobj_slot {
	_Atomic(struct kobj_object *) obj; /* object, or NULL when the slot is free */
	_Atomic uint32_t rights;	   /* KOBJ_RIGHT_* bits; next free slot when free */
	_Atomic uint32_t gen;		   /* generation (24 bits, never 0) */
};

struct kobj_account;

/*
 * What an owner's account charges (K32_KOBJ_OWNER_*): queued channel messages it wrote, the
 * message chunks they hold, wait_async observers, user packets, region bytes (socket and fifo
 * rings, VMOs) and, per type, the objects it created that are still alive (a pair counts once).
 */
enum {
	KOBJ_CHARGE_MESSAGES,
	KOBJ_CHARGE_OBSERVERS,
	KOBJ_CHARGE_PACKETS,
	KOBJ_CHARGE_CHUNKS,
	KOBJ_CHARGE_REGION_BYTES,
	KOBJ_CHARGE_NAMES,
	KOBJ_CHARGE_OBJECTS, /* + (type - 1) for each enum kobj_type */
	KOBJ_CHARGE_COUNT = KOBJ_CHARGE_OBJECTS + KOBJ_TYPE_COUNT - 1,
};

/* A handle table: one per pod or native service. Caller-owned; init with kobj_owner_init. */
struct kobj_owner {
	struct kobj_node *node; /* the instance its objects come from */
	const char *name;	/* for error messages ("pod bme688") */
	uint32_t free_head;	/* first free slot index + 1; 0 = table full */
	uint32_t used;		/* live handles */
	uint32_t cap;		/* usable slots (<= K32_KOBJ_MAX_HANDLES) */
	bool torn_down;		/* kobj_owner_fini ran: everything is BAD_HANDLE */
	/* Non-zero while the owner's thread registers a wait: a close from another thread
	 * waits for it, so a wait that starts as its handle closes is always canceled. */
	_Atomic uint32_t gate;
	struct k32_err last_err;   /* detail of the last failed call (limit names, values) */
	struct kobj_account *acct; /* shared-pool quota account (NULL: none left) */
	uint32_t charged[KOBJ_CHARGE_COUNT]; /* charges made so far (owner thread only) */
	struct kobj_slot slots[K32_KOBJ_MAX_HANDLES];
};

/* Port packet: 48 bytes, Zircon's layout. */
struct kobj_packet_signal {
	uint32_t trigger;   /* the signals the observer asked for */
	uint32_t observed;  /* all signals active when it fired */
	uint64_t count;	    /* 1 */
	uint64_t timestamp; /* kobj_now_ns() when it fired, with KOBJ_WAIT_ASYNC_TIMESTAMP */
	uint64_t reserved;
};
struct kobj_packet {
	uint64_t key;	/* chosen by whoever armed or queued it */
	uint32_t type;	/* KOBJ_PKT_TYPE_* */
	int32_t status; /* K32_OK */
	union {
		uint8_t user[32];
		struct kobj_packet_signal signal;
	};
};

/* One entry of kobj_object_wait_many. */
struct kobj_wait_item {
	kobj_handle_t handle; /* object to watch (needs WAIT) */
	uint32_t waitfor;     /* signals that satisfy the wait */
	uint32_t pending;     /* out: signals active on return */
};

/* kobj_object_get_info */
struct kobj_info {
	uint32_t type;	      /* enum kobj_type */
	uint32_t rights;      /* rights of this handle */
	uint32_t signals;     /* current signal word */
	uint32_t handles;     /* handles referring to the object (tables + messages) */
	uint32_t queued;      /* messages, bytes, elements or packets queued for reading */
	uint32_t capacity;    /* most `queued` can reach: channel queue messages, socket ring
			       * bytes, fifo elements, port packets (user budget + observer pool),
			       * VMO bytes (its size); 0 for the rest */
	uint64_t timer_fired; /* timers: expirations so far */
};

/* Pool occupancy, for tests and the kubelet's memory report. */
struct kobj_stats {
	uint32_t in_use[KOBJ_TYPE_COUNT]; /* objects (pairs count once) per type */
	uint32_t messages;		  /* channel message headers in use */
	uint32_t chunks;		  /* channel message chunks in use */
	uint32_t port_observers;	  /* wait_async observers in use (armed or queued) */
	uint32_t port_user_packets;	  /* user packets queued on ports */
	uint32_t vmo_bytes;		  /* bytes of the VMO region in use */
	uint32_t accounts;		  /* owner accounts in use (live owners + drained ones) */
	uint32_t names;			  /* object names set (K32_KOBJ_MAX_NAMES) */
};

/* ---- the instance: one per node (board) ----------------------------------------------------
 *
 * Every pool, quota, port, region byte, sleeper and the timer thread belong to one instance,
 * struct kobj_node, which the caller places: on a board one static buffer, in kube32-sim one
 * heap block per simulated board, so nothing one board's pods do can exhaust another board's
 * objects. Its limits are a struct kobj_limits (a board profile fills it; kobj_limits_default
 * gives the K32_KOBJ_* values of k32_config.h). Nothing in kobj is global but the code.
 *
 * Memory: kobj_node_bytes(lim) bytes at 16-byte alignment. Pool blocks are written only when
 * first handed out, so on a host the pages of blocks never used stay out of the RSS, and
 * setup writes only the node header and the name table.
 */
struct kobj_node;

struct kobj_limits {
	uint32_t handles;	 /* slots of an owner's table (<= K32_KOBJ_MAX_HANDLES) */
	uint32_t channels;	 /* K32_KOBJ_MAX_CHANNELS: channel pairs alive */
	uint32_t messages;	 /* K32_KOBJ_MAX_MESSAGES: queued channel messages */
	uint32_t msg_chunks;	 /* K32_KOBJ_MSG_CHUNKS: 512-byte message chunks */
	uint32_t sockets;	 /* K32_KOBJ_MAX_SOCKETS */
	uint32_t fifos;		 /* K32_KOBJ_MAX_FIFOS */
	uint32_t events;	 /* K32_KOBJ_MAX_EVENTS */
	uint32_t eventpairs;	 /* K32_KOBJ_MAX_EVENTPAIRS */
	uint32_t ports;		 /* K32_KOBJ_MAX_PORTS */
	uint32_t port_observers; /* K32_KOBJ_MAX_PORT_OBSERVERS */
	uint32_t user_packets;	 /* K32_KOBJ_MAX_USER_PACKETS */
	uint32_t timers;	 /* K32_KOBJ_MAX_TIMERS */
	uint32_t vmos;		 /* K32_KOBJ_MAX_VMOS */
	uint32_t names;		 /* K32_KOBJ_MAX_NAMES */
	uint32_t accounts;	 /* K32_KOBJ_MAX_ACCOUNTS: owners (+ drained ones) */
	uint32_t sleepers;	 /* K32_KOBJ_MAX_SLEEPERS: threads asleep in a wait at once */
	uint32_t region_bytes;	 /* K32_KOBJ_REGION_BYTES: socket/fifo rings and VMOs */
	/* an owner's shares (K32_KOBJ_OWNER_*) */
	uint32_t owner_pool_pct;	 /* % of each object pool (and of the names) */
	uint32_t owner_max_messages;	 /* queued messages it wrote */
	uint32_t owner_max_observers;	 /* wait_async observers */
	uint32_t owner_max_packets;	 /* user packets queued */
	uint32_t owner_max_msg_chunks;	 /* message chunks its messages hold */
	uint32_t owner_max_region_bytes; /* region bytes of what it created */
};

/* The K32_KOBJ_* values of k32_config.h. */
void kobj_limits_default(struct kobj_limits *lim);
/*
 * Bytes an instance with these limits needs (header and every pool), or 0 if a limit is out
 * of range (kobj_node_init says which).
 */
size_t kobj_node_bytes(const struct kobj_limits *lim);
/*
 * Lays an instance out in mem (8-byte aligned, mem_bytes >= kobj_node_bytes(lim); need not
 * be zeroed) and returns it in *out. name ("cardputer-1") prefixes nothing but is kept for
 * messages. Not thread-safe: call once at node start.
 * @retval K32_ERR_INVALID_ARGS  a limit is 0 or over its ceiling (err names the field)
 * @retval K32_ERR_NO_MEMORY     mem_bytes is too small (err gives both sizes)
 */
k32_status_t kobj_node_init(void *mem, size_t mem_bytes, const char *name,
			    const struct kobj_limits *lim, struct kobj_node **out,
			    struct k32_err *err);
/*
 * Stops the instance's timer thread and releases its sleepers' mutexes. Every owner of the
 * instance must be torn down first (kobj_owner_fini); then the caller may reuse or free the
 * memory.
 * @retval K32_ERR_BAD_STATE  objects are still alive (the instance is left running)
 */
k32_status_t kobj_node_fini(struct kobj_node *node);
/*
 * The same with the memory from allocator a (kube32-sim: one heap block per board; the
 * block is not written beyond the header and name table, so its untouched pages stay out of
 * the RSS). kobj_node_free finis and gives the memory back (NULL is ignored; BAD_STATE and
 * nothing freed while objects are alive).
 */
struct k32_allocator;
k32_status_t kobj_node_new(const struct k32_allocator *a, const char *name,
			   const struct kobj_limits *lim, struct kobj_node **out,
			   struct k32_err *err);
k32_status_t kobj_node_free(const struct k32_allocator *a, struct kobj_node *node);
/* The instance's name and limits. */
const char *kobj_node_name(const struct kobj_node *node);
const struct kobj_limits *kobj_node_limits(const struct kobj_node *node);
/* Monotonic nanoseconds (the clock of deadlines and timers). */
kobj_time_t kobj_now_ns(void);
/* Deadline helper: now + ns, saturating; negative ns gives KOBJ_TIME_INFINITE. */
kobj_time_t kobj_deadline_after(int64_t ns);
/* Pool occupancy of the instance right now. */
void kobj_stats_get(struct kobj_node *node, struct kobj_stats *out);
/*
 * How long a blocking wait on this instance spins before it sleeps, in nanoseconds (default
 * K32_KOBJ_SPIN_NS; 0 disables). Spinning pays only when the waker runs on another core;
 * code that knows both tasks share a core sets 0. Applies to all later waits.
 */
void kobj_node_set_spin_ns(struct kobj_node *node, uint32_t ns);

/* ---- owners and handles ------------------------------------------------------------------ */

/*
 * Prepares a handle table of `cap` slots on instance `node` (0 = the instance's handles limit;
 * larger is clamped to it). Every object the owner creates comes from node's pools and is
 * charged to its shares there.
 */
void kobj_owner_init(struct kobj_owner *owner, struct kobj_node *node, const char *name,
		     uint32_t cap);
/*
 * Teardown: closes every handle (peers see PEER_CLOSED, waits blocked on them end with
 * CANCELED, their observers are removed). Afterwards every call with this owner gives
 * BAD_HANDLE. Safe while the owner's own thread is blocked in a kobj wait.
 */
void kobj_owner_fini(struct kobj_owner *owner);
/* Live handles in the table. */
uint32_t kobj_owner_handle_count(const struct kobj_owner *owner);
/* Message of the owner's last failed call ("" if none). */
const char *kobj_owner_last_error(const struct kobj_owner *owner);

/* Closes h (INVALID is OK). BAD_HANDLE if not live. */
k32_status_t kobj_handle_close(struct kobj_owner *owner, kobj_handle_t h);
/*
 * New handle to the same object with `rights` (a subset, or KOBJ_RIGHT_SAME_RIGHTS).
 * Needs DUPLICATE. INVALID_ARGS if rights are not a subset; NO_RESOURCES if the table is full.
 */
k32_status_t kobj_handle_duplicate(struct kobj_owner *owner, kobj_handle_t h, uint32_t rights,
				   kobj_handle_t *out);
/* Like duplicate without needing DUPLICATE, and h is consumed even when it fails. */
k32_status_t kobj_handle_replace(struct kobj_owner *owner, kobj_handle_t h, uint32_t rights,
				 kobj_handle_t *out);
/*
 * Moves h from one owner's table to another's (the runtime handing an object to a pod, or a
 * service to its worker). The handle keeps its rights; observers registered through h are
 * removed. NO_RESOURCES (h untouched) if `to` is full; INVALID_ARGS (h untouched) if `to`
 * belongs to another instance (objects never cross nodes).
 */
k32_status_t kobj_handle_transfer(struct kobj_owner *from, kobj_handle_t h, struct kobj_owner *to,
				  kobj_handle_t *out);
/* Type, rights, signals, counts. Needs INSPECT. */
k32_status_t kobj_object_get_info(struct kobj_owner *owner, kobj_handle_t h, struct kobj_info *out);

/*
 * Properties. KOBJ_PROP_NAME: any object; set takes up to KOBJ_MAX_NAME_LEN - 1 bytes (longer
 * is cut), "" removes the name; get needs size >= KOBJ_MAX_NAME_LEN (else BUFFER_TOO_SMALL) and
 * gives "" for an unnamed object. Names live in a pool of K32_KOBJ_MAX_NAMES (NO_MEMORY when
 * full; an owner's share is K32_KOBJ_OWNER_POOL_PCT of it, NO_RESOURCES beyond). Socket
 * thresholds (size 4): READ_THRESHOLD is active while at least rx bytes are queued to read,
 * WRITE_THRESHOLD while the peer's ring has at least tx bytes free (and writing is possible);
 * 0 disables (the signal stays off); over the ring's capacity is INVALID_ARGS. Timer slack
 * (size 8, int64_t ns): how late the timer may fire so nearby timers coalesce; setting it
 * applies to an armed timer at once and stays until the next timer_set (whose slack argument
 * replaces it); negative is OUT_OF_RANGE. Needs GET_PROPERTY / SET_PROPERTY. NOT_FOUND for an
 * unknown property, WRONG_TYPE for a socket or timer property on another type, INVALID_ARGS
 * for a wrong size.
 */
k32_status_t kobj_object_get_property(struct kobj_owner *owner, kobj_handle_t h, uint32_t prop,
				      void *value, uint32_t size);
k32_status_t kobj_object_set_property(struct kobj_owner *owner, kobj_handle_t h, uint32_t prop,
				      const void *value, uint32_t size);

/* ---- signals and waiting ----------------------------------------------------------------- */

/*
 * Clears then sets signal bits on the object. Only USER_* bits, and SIGNALED on events,
 * event pairs and timers (timers: clear only). Needs SIGNAL. INVALID_ARGS for other bits.
 * clear = set = 0 is the cheapest validated call: it changes nothing and takes no lock.
 */
k32_status_t kobj_object_signal(struct kobj_owner *owner, kobj_handle_t h, uint32_t clear,
				uint32_t set);
/* The same on the peer of a channel, socket, fifo or event pair (USER_* bits, and SIGNALED
 * for event pairs). Needs SIGNAL_PEER. PEER_CLOSED if the peer is gone. */
k32_status_t kobj_object_signal_peer(struct kobj_owner *owner, kobj_handle_t h, uint32_t clear,
				     uint32_t set);
/*
 * Waits until any of `signals` is active. OK (observed = active signals), TIMED_OUT at the
 * deadline (0 polls), CANCELED with KOBJ_SIG_HANDLE_CLOSED in observed if h is closed
 * meanwhile. NOT_SUPPORTED on ports. Needs WAIT. out_observed may be NULL. May block.
 */
k32_status_t kobj_object_wait_one(struct kobj_owner *owner, kobj_handle_t h, uint32_t signals,
				  kobj_time_t deadline, uint32_t *out_observed);
/* Waits on up to K32_KOBJ_WAIT_MANY_MAX items (else OUT_OF_RANGE); fills each pending. */
k32_status_t kobj_object_wait_many(struct kobj_owner *owner, struct kobj_wait_item *items,
				   uint32_t count, kobj_time_t deadline);
/*
 * One-shot observer: when any of `signals` is (or becomes) active on h, one SIGNAL_ONE packet
 * with `key` is queued on `port` and the observer goes away. Needs WAIT on h and WRITE on the
 * port. NO_MEMORY when K32_KOBJ_MAX_PORT_OBSERVERS are armed or queued.
 */
k32_status_t kobj_object_wait_async(struct kobj_owner *owner, kobj_handle_t h, kobj_handle_t port,
				    uint64_t key, uint32_t signals, uint32_t opts);

/* ---- channel ----------------------------------------------------------------------------- */

k32_status_t kobj_channel_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out0,
				 kobj_handle_t *out1);
/*
 * Queues one message (bytes + handles) on the peer. The listed handles leave the caller's
 * table whether the write succeeds or not (they need TRANSFER). OUT_OF_RANGE over
 * K32_KOBJ_CHANNEL_MAX_MSG_BYTES / _MSG_HANDLES; SHOULD_WAIT when the peer's queue is full
 * (WRITABLE is then deasserted); PEER_CLOSED; NO_MEMORY when the message pool is spent;
 * NOT_SUPPORTED if the channel's own handle is listed, or if a listed channel endpoint could
 * reach this message's queue (a cycle that no close could ever free); BAD_HANDLE for a listed
 * duplicate. The channel's own handle is never consumed.
 */
k32_status_t kobj_channel_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
				const void *bytes, uint32_t len, const kobj_handle_t *handles,
				uint32_t handle_count);
/*
 * Reads the oldest message whole. BUFFER_TOO_SMALL (sizes in out_actual_*, message kept
 * unless KOBJ_CHANNEL_READ_MAY_DISCARD); SHOULD_WAIT when empty; PEER_CLOSED when empty and
 * the peer is gone; NO_RESOURCES if the handles do not fit in the table (message kept).
 */
k32_status_t kobj_channel_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       void *bytes, kobj_handle_t *handles, uint32_t bytes_cap,
			       uint32_t handles_cap, uint32_t *out_actual_bytes,
			       uint32_t *out_actual_handles);

/* Arguments of kobj_channel_call (Zircon's zx_channel_call_args). */
struct kobj_channel_call_args {
	const void *wr_bytes; /* request; its first 4 bytes are the transaction id */
	const kobj_handle_t *wr_handles;
	void *rd_bytes; /* reply buffer */
	kobj_handle_t *rd_handles;
	uint32_t wr_num_bytes; /* >= 4 */
	uint32_t wr_num_handles;
	uint32_t rd_num_bytes;
	uint32_t rd_num_handles;
};
/*
 * Writes the request, waits for the reply whose first 4 bytes equal the request's, and reads
 * it: one call instead of three. TIMED_OUT, PEER_CLOSED, BUFFER_TOO_SMALL as above.
 */
k32_status_t kobj_channel_call(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       kobj_time_t deadline, const struct kobj_channel_call_args *args,
			       uint32_t *out_actual_bytes, uint32_t *out_actual_handles);

/* ---- socket ------------------------------------------------------------------------------ */

/*
 * opts: KOBJ_SOCKET_STREAM or _DATAGRAM. cap: ring bytes per direction, 0 =
 * K32_KOBJ_SOCKET_DEFAULT_CAP, else K32_KOBJ_SOCKET_MIN_CAP.._MAX_CAP (OUT_OF_RANGE).
 */
k32_status_t kobj_socket_create(struct kobj_owner *owner, uint32_t opts, uint32_t cap,
				kobj_handle_t *out0, kobj_handle_t *out1);
/* Stream: short writes, SHOULD_WAIT only when nothing fits. Datagram: all or nothing,
 * OUT_OF_RANGE if it could never fit. BAD_STATE after shutdown(WRITE). */
k32_status_t kobj_socket_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts,
			       const void *buf, uint32_t len, uint32_t *out_actual);
/* Stream: up to cap bytes. Datagram: one datagram, truncated to cap. PEEK keeps the data.
 * SHOULD_WAIT when empty; PEER_CLOSED when empty and the peer closed or shut down. */
k32_status_t kobj_socket_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts, void *buf,
			      uint32_t cap, uint32_t *out_actual);
k32_status_t kobj_socket_shutdown(struct kobj_owner *owner, kobj_handle_t h, uint32_t opts);

/* ---- event, event pair ------------------------------------------------------------------- */

k32_status_t kobj_event_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out);
k32_status_t kobj_eventpair_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out0,
				   kobj_handle_t *out1);

/* ---- port -------------------------------------------------------------------------------- */

k32_status_t kobj_port_create(struct kobj_owner *owner, uint32_t opts, kobj_handle_t *out);
/* Queues a user packet (type forced to USER). SHOULD_WAIT when the port's budget of
 * K32_KOBJ_PORT_USER_BUDGET is queued; NO_MEMORY when the global packet pool is spent. */
k32_status_t kobj_port_queue(struct kobj_owner *owner, kobj_handle_t h,
			     const struct kobj_packet *pkt);
/* Oldest packet; each packet releases exactly one waiter. TIMED_OUT; CANCELED if h closes. */
k32_status_t kobj_port_wait(struct kobj_owner *owner, kobj_handle_t h, kobj_time_t deadline,
			    struct kobj_packet *out);
/* Removes observers (and queued packets) from `source` with `key` bound to this port.
 * NOT_FOUND if there were none. */
k32_status_t kobj_port_cancel(struct kobj_owner *owner, kobj_handle_t h, kobj_handle_t source,
			      uint64_t key);

/* ---- fifo -------------------------------------------------------------------------------- */

/* elem_count a power of two, elem_size a multiple of 4, product <= K32_KOBJ_FIFO_MAX_BYTES;
 * else OUT_OF_RANGE. */
k32_status_t kobj_fifo_create(struct kobj_owner *owner, uint32_t elem_count, uint32_t elem_size,
			      uint32_t opts, kobj_handle_t *out0, kobj_handle_t *out1);
/* Moves as many whole elements as fit; SHOULD_WAIT only when none. OUT_OF_RANGE if elem_size
 * differs from the fifo's or count is 0. */
k32_status_t kobj_fifo_write(struct kobj_owner *owner, kobj_handle_t h, uint32_t elem_size,
			     const void *data, uint32_t count, uint32_t *out_actual);
k32_status_t kobj_fifo_read(struct kobj_owner *owner, kobj_handle_t h, uint32_t elem_size,
			    void *data, uint32_t count, uint32_t *out_actual);

/* ---- timer ------------------------------------------------------------------------------- */

k32_status_t kobj_timer_create(struct kobj_owner *owner, uint32_t opts, uint32_t clock_id,
			       kobj_handle_t *out);
/*
 * Arms the timer (clearing SIGNALED): SIGNALED is asserted at `deadline` (never earlier; up
 * to `slack` ns later so timers may coalesce). period > 0 re-arms at deadline + k*period;
 * the owner clears SIGNALED with object_signal (or reads timer_fired) between ticks.
 */
k32_status_t kobj_timer_set(struct kobj_owner *owner, kobj_handle_t h, kobj_time_t deadline,
			    int64_t slack, int64_t period);
/* Disarms and clears SIGNALED. */
k32_status_t kobj_timer_cancel(struct kobj_owner *owner, kobj_handle_t h);

/* ---- vmo --------------------------------------------------------------------------------- */

/* Allocates and zeroes `size` bytes from the VMO region (NO_MEMORY when it has no room). */
k32_status_t kobj_vmo_create(struct kobj_owner *owner, uint64_t size, uint32_t opts,
			     kobj_handle_t *out);
/* OUT_OF_RANGE if off + len > size. READ / WRITE rights. */
k32_status_t kobj_vmo_read(struct kobj_owner *owner, kobj_handle_t h, void *buf, uint64_t off,
			   uint64_t len);
k32_status_t kobj_vmo_write(struct kobj_owner *owner, kobj_handle_t h, const void *buf,
			    uint64_t off, uint64_t len);
k32_status_t kobj_vmo_get_size(struct kobj_owner *owner, kobj_handle_t h, uint64_t *out_size);
/* Native only: the base pointer, pinned until kobj_vmo_return. Needs MAP. */
k32_status_t kobj_vmo_borrow(struct kobj_owner *owner, kobj_handle_t h, void **out_ptr,
			     uint64_t *out_size);
k32_status_t kobj_vmo_return(struct kobj_owner *owner, kobj_handle_t h);

/* ---- pod bindings (kobj_pod.c) ----------------------------------------------------------
 *
 * The kx_* host functions give a Wasm pod the same objects. They are a table of struct
 * k32_hostfn_def (import module "kube32") that the embedder (kubelet) links into a pod
 * instance by module, name and signature, so the Wasm runtime never depends on kobj. Each is
 * the verify half of a verify/impl pair: every (pointer, length) is checked against the
 * caller's linear memory with k32_hostcall_mem, handles come from the pod's own table, and the
 * kobj_* call copies straight between linear memory and the object (one copy). A bad pointer
 * gives K32_ERR_INVALID_ARGS as the call's result; nothing a pod passes can trap the node or
 * reach another pod's objects. Every kx_* returns an i32 status; out-values are written
 * little-endian at pod addresses. Layouts and prototypes for pod authors: sdk/k32.h.
 */
/* How the bindings find the calling pod's handle table. */
struct kobj_pod_env {
	/* Returns the owner of an instance (the instance_user the embedder set). NULL hook:
	 * instance_user itself is the struct kobj_owner. */
	struct kobj_owner *(*owner_of)(void *instance_user);
};

/* Number of kx_* functions. */
#define KOBJ_POD_HOSTFN_COUNT 38

/*
 * Fills out[0..cap) with the kx_* definitions bound to env (which may be NULL; it is kept by
 * pointer) and returns how many it wrote (KOBJ_POD_HOSTFN_COUNT when cap allows).
 */
size_t kobj_pod_hostfns(const struct kobj_pod_env *env, struct k32_hostfn_def *out, size_t cap);

/* The table bound to env = NULL (instance_user is the owner). */
extern const struct k32_hostfn_def kobj_pod_hostfn_table[KOBJ_POD_HOSTFN_COUNT];

#endif /* KOBJ_H */
