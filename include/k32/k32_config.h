/*
 * k32_config.h - every limit and switch of kube32, in one place.
 *
 * Each limit is an #ifndef default, so a board profile (or -D on the command line) overrides
 * it. Each comment says what it bounds, the bytes per unit where that matters, and the hard
 * ceiling and why. Hitting a limit returns K32_ERR_NO_RESOURCES (or OUT_OF_RANGE) with a
 * message that names it; nothing grows silently.
 *
 * Subsystems keep their limits in their own section below, in the order of the layout.
 */
#ifndef K32_CONFIG_H
#define K32_CONFIG_H

/* ==== board profile ====================================================================== */

/* One build option picks the board (cmake -DK32_BOARD=cardputer|devkit|cortexm defines
 * K32_BOARD_<NAME>); its header sets every limit below that differs on that board, before
 * the defaults here fill in the rest. Without one: the simulator's limits. */
#if defined(K32_BOARD_CARDPUTER)
#include "k32/boards/cardputer.h"
#elif defined(K32_BOARD_DEVKIT)
#include "k32/boards/devkit.h"
#elif defined(K32_BOARD_CORTEXM)
#include "k32/boards/cortexm.h"
#endif

/* ==== base ============================================================================== */

/* Bytes of the message in struct k32_err. 256 holds the longest kubelet sentence (a pod that
 * does not fit the pool: three names, three numbers and the advice) with each name clipped
 * to K32_MSG_CLIP_LEN; 160 cut such sentences inside their advice. The struct lives on
 * callers' stacks, so keep it small (hard ceiling 512). */
#ifndef K32_ERR_MSG_LEN
#define K32_ERR_MSG_LEN 256
#endif

/* Bytes (without the NUL) a user-supplied part of a message keeps: a longer name, path or
 * value keeps its start and its end around "..." (k32_clip), so the message's own words and
 * its advice after it always fit K32_ERR_MSG_LEN. */
#ifndef K32_MSG_CLIP_LEN
#define K32_MSG_CLIP_LEN 40
#endif

/* Alignment of every block an arena, pool or heap hands out. 8 covers int64/double on both
 * the ESP32 (Xtensa) and x86-64. */
#ifndef K32_ALLOC_ALIGN
#define K32_ALLOC_ALIGN 8
#endif

/* Lines kept in the log ring for console and `kubectl logs`-style readers. Bytes: count *
 * K32_LOG_LINE_LEN. */
#ifndef K32_LOG_RING_LINES
#define K32_LOG_RING_LINES 64
#endif

/* Bytes of one log line in the ring, including the NUL. 384 holds a kubelet line ("node N:
 * pod NS/NAME: " and a whole K32_ERR_MSG_LEN message); a longer line is cut and ends with
 * "..." so the cut shows. */
#ifndef K32_LOG_LINE_LEN
#define K32_LOG_LINE_LEN 384
#endif

/* Bytes of one whole log message, including the NUL: the longest kubelet line (a node and a
 * pod clipped to K32_MSG_CLIP_LEN around a whole K32_ERR_MSG_LEN message). When it is over
 * K32_LOG_LINE_LEN (the boards keep 128-byte ring lines), a longer message is stored as
 * several lines broken between words, each continuation starting with K32_LOG_CONT, and
 * formatted in one static buffer of this size rather than on the caller's stack. */
#ifndef K32_LOG_MSG_LEN
#define K32_LOG_MSG_LEN K32_LOG_LINE_LEN
#endif
/* What a continuation line of a message stored in pieces starts with. */
#ifndef K32_LOG_CONT
#define K32_LOG_CONT "  "
#endif

/* Nesting depth the JSON helpers accept when parsing (cJSON recurses per level, so this
 * bounds native stack use on the board). */
#ifndef K32_JSON_MAX_DEPTH
#define K32_JSON_MAX_DEPTH 32
#endif

/* ==== kmeta: the Kubernetes object layer (quantities, pod annotations; src/kmeta) ======= */

/* Linear memory of a pod without resources.limits.memory: what the kubelet gives it and what
 * the scheduler counts for it (one name, so the two cannot disagree). */
#ifndef K32_POD_MEM_DEFAULT
#define K32_POD_MEM_DEFAULT (64u * 1024u)
#endif
/* Largest memory quantity a pod may ask for: a wasm32 linear memory addresses at most 4 GiB.
 * The API server answers 422 above it; a node with less memory simply does not fit it. */
#ifndef K32_POD_MEM_MAX
#define K32_POD_MEM_MAX (4ull << 30)
#endif
/* Range of annotation kube32.io/execution-budget (gas per call, or "off"). 1e10 is 500 times
 * the default K32_KLET_POD_GAS; the per-call wall-clock deadline bounds a call whatever its
 * budget. */
#ifndef K32_POD_GAS_MAX
#define K32_POD_GAS_MAX 10000000000ull
#endif
/* Range of annotation kube32.io/tick-ms (period of k32_tick): 1 ms .. one day. */
#ifndef K32_POD_TICK_MS_MAX
#define K32_POD_TICK_MS_MAX 86400000u
#endif
/* Range of annotation kube32.io/stack-bytes (the pod's Wasm value stack): at least 32 value
 * slots; at most 1 MiB (twice the SRAM of the reference board). */
#ifndef K32_POD_STACK_BYTES_MIN
#define K32_POD_STACK_BYTES_MIN 256u
#endif
#ifndef K32_POD_STACK_BYTES_MAX
#define K32_POD_STACK_BYTES_MAX (1024u * 1024u)
#endif
/* Range of the per-call wall-clock deadline annotation (kube32.io/call-deadline-ms): 1 ms ..
 * 10 s, the board-wide maximum a pod may ask for (the kubelet's K32_KLET_CALL_DEADLINE_MAX_MS
 * is this value: one pod holds the interpreter task at most that long, below the 30 s grace
 * period; docs/node-tasks.md). */
#ifndef K32_POD_CALL_DEADLINE_MS_MAX
#define K32_POD_CALL_DEADLINE_MS_MAX 10000u
#endif
/* Bytes of annotation kube32.io/hardware ("i2c:bme688,i2c:miniscale"): what the scheduler
 * compares against a node's hardware list (its buffers hold 255 bytes). */
#ifndef K32_POD_HARDWARE_MAX
#define K32_POD_HARDWARE_MAX 255u
#endif
_Static_assert(K32_POD_STACK_BYTES_MIN >= 64 && K32_POD_STACK_BYTES_MIN <= K32_POD_STACK_BYTES_MAX,
	       "K32_POD_STACK_BYTES_MIN out of range");
_Static_assert(K32_POD_MEM_DEFAULT >= 1 && K32_POD_MEM_DEFAULT <= K32_POD_MEM_MAX,
	       "K32_POD_MEM_DEFAULT out of range");

/* ==== platform ========================================================================== */

/* Named tasks the platform tracks for the TASKS listing (per-task CPU time). */
#ifndef K32_PLAT_MAX_TASKS
#define K32_PLAT_MAX_TASKS 64
#endif

/* The host (posix) platform's task table: tasks with their own thread stay within
 * K32_PLAT_MAX_TASKS; shared tasks (task_share_threads: kube32-sim's boards, ~5 each) fill
 * the rest. 8192 slots of ~80 bytes. */
#ifndef K32_PLAT_HOST_MAX_TASKS
#define K32_PLAT_HOST_MAX_TASKS 8192
#endif
/* Shared tasks' pool: OS threads at start, the most it grows to, and how long ready tasks
 * wait with every pool thread busy (a pod's call computing until its deadline) before it
 * grows by one; a shared task's stack when its creator gives none (mapped, so only the
 * pages a task touches cost memory). */
#ifndef K32_PLAT_SHARED_THREADS
#define K32_PLAT_SHARED_THREADS 4
#endif
#ifndef K32_PLAT_SHARED_THREADS_MAX
#define K32_PLAT_SHARED_THREADS_MAX 32
#endif
#ifndef K32_PLAT_SHARED_STALL_MS
#define K32_PLAT_SHARED_STALL_MS 20
#endif
#ifndef K32_PLAT_SHARED_STACK_BYTES
#define K32_PLAT_SHARED_STACK_BYTES (256 * 1024)
#endif
_Static_assert(K32_PLAT_HOST_MAX_TASKS >= K32_PLAT_MAX_TASKS && K32_PLAT_HOST_MAX_TASKS < (1 << 24),
	       "K32_PLAT_HOST_MAX_TASKS out of range");
_Static_assert(K32_PLAT_SHARED_THREADS >= 1 &&
		   K32_PLAT_SHARED_THREADS <= K32_PLAT_SHARED_THREADS_MAX,
	       "K32_PLAT_SHARED_THREADS out of range");

/* Bytes of a task name, including the terminating NUL (FreeRTOS configMAX_TASK_NAME_LEN is
 * 16 by default). */
#ifndef K32_PLAT_TASK_NAME_LEN
#define K32_PLAT_TASK_NAME_LEN 16
#endif

/* POSIX only: glibc malloc arenas for the whole process (mallopt M_ARENA_MAX, set before the
 * first task starts). glibc gives threads their own arenas (up to 8 per core), each keeping
 * its own partly used pages: ~180 KiB of RSS in kube32-sim with 7 tasks. A board has one
 * heap; 1 does the same here. 0: glibc's default. */
#ifndef K32_PLAT_MALLOC_ARENAS
#define K32_PLAT_MALLOC_ARENAS 1
#endif

/* ==== wasm ============================================================================== */

/* Functions (imported + defined) a module may declare. 24 bytes of module state each. */
#ifndef K32_WASM_MAX_FUNCS
#define K32_WASM_MAX_FUNCS 100000
#endif

/* Function types a module may declare; parameters and results per type. The spec's own
 * implementation limit is 1000 each; a slot is 8 bytes of value stack. */
#ifndef K32_WASM_MAX_TYPES
#define K32_WASM_MAX_TYPES 100000
#endif
#ifndef K32_WASM_MAX_PARAMS
#define K32_WASM_MAX_PARAMS 1000
#endif

/* Locals (params included) per function: each is one 8-byte slot on the value stack. */
#ifndef K32_WASM_MAX_LOCALS
#define K32_WASM_MAX_LOCALS 50000
#endif

/* Nesting depth of blocks in one function (validator control stack, ~40 bytes an entry,
 * allocated once per load). */
#ifndef K32_WASM_MAX_BLOCK_DEPTH
#define K32_WASM_MAX_BLOCK_DEPTH 1024
#endif

/* Operand stack height per function. The loader's validator/compiler keeps 10 bytes per
 * entry (type, where the value lives, constant), allocated once per load: 40 KiB at 4096. */
#ifndef K32_WASM_MAX_OPERANDS
#define K32_WASM_MAX_OPERANDS 4096
#endif

/* br_table targets per instruction (8 bytes of compiled code each). */
#ifndef K32_WASM_MAX_BR_TABLE
#define K32_WASM_MAX_BR_TABLE 65536
#endif

/* Imports, exports, globals, tables, element and data segments per module. */
#ifndef K32_WASM_MAX_ENTRIES
#define K32_WASM_MAX_ENTRIES 100000
#endif

/* Results a host function may return (copied through a native array of this size). */
#ifndef K32_WASM_MAX_HOST_RESULTS
#define K32_WASM_MAX_HOST_RESULTS 16
#endif

/* Host tables and named instances one struct wrt_linker holds. */
#ifndef K32_WASM_LINKER_HOST_TABLES
#define K32_WASM_LINKER_HOST_TABLES 8
#endif
#ifndef K32_WASM_LINKER_INSTANCES
#define K32_WASM_LINKER_INSTANCES 32
#endif

/* Default per-instance limits (struct wrt_limits); the kubelet sets them per pod. */
/* Linear memory in bytes (a pod's resources.limits.memory); 4 GiB is the Wasm32 ceiling. */
#ifndef K32_WASM_DEFAULT_MEM_BYTES
#define K32_WASM_DEFAULT_MEM_BYTES (64u * 1024u)
#endif
/* Value stack bytes (8 per slot). */
#ifndef K32_WASM_DEFAULT_STACK_BYTES
#define K32_WASM_DEFAULT_STACK_BYTES (16u * 1024u)
#endif
/* Call depth (24 bytes a frame). */
#ifndef K32_WASM_DEFAULT_FRAMES
#define K32_WASM_DEFAULT_FRAMES 256
#endif
/* Elements per table (8 bytes each). */
#ifndef K32_WASM_DEFAULT_TABLE_ELEMS
#define K32_WASM_DEFAULT_TABLE_ELEMS 1024
#endif
/* Gas per invocation (one unit per Wasm instruction). */
#ifndef K32_WASM_DEFAULT_GAS
#define K32_WASM_DEFAULT_GAS 100000000ull
#endif
/* Gas units between two interrupt check points of a running call (wrt.h struct wrt_watch):
 * the interpreter's gas counter holds at most this many, and its refill (one atomic load
 * and the watch's check, which reads the clock) is the only cost of interruptibility. At
 * ~1 ns a unit on a PC and ~50 ns on an ESP32-S3 this is ~65 us and ~3 ms between checks,
 * far inside the 100 ms promise; smaller costs more refills, larger answers later. */
#ifndef K32_WASM_CHECK_GAS
#define K32_WASM_CHECK_GAS 65536u
#endif
_Static_assert(K32_WASM_CHECK_GAS >= 1024 && K32_WASM_CHECK_GAS <= (1u << 30),
	       "K32_WASM_CHECK_GAS out of range");

/* 1: the op-counting interpreter loop (wrt_limits.count_ops: kube32-wasm --count-ops, the
 * benchmarks' op counts) is linked, 31.8 KB of text on a Cortex-M4; 0 (board builds): it is
 * not, and an instance asking for count_ops gets NOT_SUPPORTED. */
#ifndef K32_WASM_COUNT_OPS
#define K32_WASM_COUNT_OPS 1
#endif

_Static_assert(K32_WASM_MAX_PARAMS <= 65535 && K32_WASM_MAX_LOCALS < (1 << 24),
	       "wasm slot indices must fit compiled immediates");
_Static_assert(K32_WASM_MAX_BLOCK_DEPTH >= 16 && K32_WASM_MAX_HOST_RESULTS >= 1,
	       "wasm limits too small");

/* ==== kobj ============================================================================== */

/* Handle slots per owner table (pod or native service). 12 bytes per slot on a 32-bit target.
 * Hard ceiling 256: the slot index is the low 8 bits of a handle. Full: NO_RESOURCES. */
#ifndef K32_KOBJ_MAX_HANDLES
#define K32_KOBJ_MAX_HANDLES 64
#endif

/* Channel pairs alive at once (both endpoints count as one). 96 B per pair on 32-bit. */
#ifndef K32_KOBJ_MAX_CHANNELS
#define K32_KOBJ_MAX_CHANNELS 64
#endif

/* Bytes in one channel message. Zircon: 65536. MCU profiles use 4096; the simulator keeps
 * 65536 so the Zircon-sized benchmarks run. */
#ifndef K32_KOBJ_CHANNEL_MAX_MSG_BYTES
#define K32_KOBJ_CHANNEL_MAX_MSG_BYTES 65536
#endif

/* Handles in one channel message (Zircon: 64). Each costs 8 B in the message header. */
#ifndef K32_KOBJ_CHANNEL_MAX_MSG_HANDLES
#define K32_KOBJ_CHANNEL_MAX_MSG_HANDLES 8
#endif

/* Messages queued on one endpoint; the writer gets SHOULD_WAIT beyond it. */
#ifndef K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS
#define K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS 16
#endif

/* Bytes queued on one endpoint. MCU: 8192. The simulator allows two 64 KiB messages. */
#ifndef K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES
#define K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES 131072
#endif

/* Message headers in the node (all channels). Header: 24 B + 8 B per handle + inline bytes. */
#ifndef K32_KOBJ_MAX_MESSAGES
#define K32_KOBJ_MAX_MESSAGES 256
#endif

/* Bytes carried inside the message header; longer messages add chunks. */
#ifndef K32_KOBJ_MSG_INLINE_BYTES
#define K32_KOBJ_MSG_INLINE_BYTES 128
#endif

/* Bytes per message chunk, and chunks in the node (all channels). 1024 x 512 B = 512 KiB in
 * the simulator; MCU profiles use e.g. 64 x 256 B. */
#ifndef K32_KOBJ_MSG_CHUNK_BYTES
#define K32_KOBJ_MSG_CHUNK_BYTES 512
#endif
#ifndef K32_KOBJ_MSG_CHUNKS
#define K32_KOBJ_MSG_CHUNKS 1024
#endif

/* Socket pairs alive at once. The rings come from the socket ring region below. */
#ifndef K32_KOBJ_MAX_SOCKETS
#define K32_KOBJ_MAX_SOCKETS 32
#endif

/* Ring bytes per direction: default, and the range socket_create accepts (spec: 256 B to
 * 64 KiB). */
#ifndef K32_KOBJ_SOCKET_DEFAULT_CAP
#define K32_KOBJ_SOCKET_DEFAULT_CAP 1024
#endif
#ifndef K32_KOBJ_SOCKET_MIN_CAP
#define K32_KOBJ_SOCKET_MIN_CAP 256
#endif
#ifndef K32_KOBJ_SOCKET_MAX_CAP
#define K32_KOBJ_SOCKET_MAX_CAP 65536
#endif

/* Bytes for all socket rings and VMOs together (one first-fit region; a socket takes 2 x cap).
 * Simulator: 2 MiB; MCU profiles: tens of KiB. Exhausted: NO_MEMORY. */
#ifndef K32_KOBJ_REGION_BYTES
#define K32_KOBJ_REGION_BYTES (2u * 1024u * 1024u)
#endif

/* Events and event pairs alive at once (a pair counts once). */
#ifndef K32_KOBJ_MAX_EVENTS
#define K32_KOBJ_MAX_EVENTS 128
#endif
#ifndef K32_KOBJ_MAX_EVENTPAIRS
#define K32_KOBJ_MAX_EVENTPAIRS 32
#endif

/* Ports alive at once. */
#ifndef K32_KOBJ_MAX_PORTS
#define K32_KOBJ_MAX_PORTS 16
#endif

/* wait_async observers armed or queued, node-wide. Each embeds its 48 B packet (96 B). */
#ifndef K32_KOBJ_MAX_PORT_OBSERVERS
#define K32_KOBJ_MAX_PORT_OBSERVERS 128
#endif

/* User packets one port may hold (port_queue gets SHOULD_WAIT beyond), and node-wide. */
#ifndef K32_KOBJ_PORT_USER_BUDGET
#define K32_KOBJ_PORT_USER_BUDGET 16
#endif
#ifndef K32_KOBJ_MAX_USER_PACKETS
#define K32_KOBJ_MAX_USER_PACKETS 128
#endif

/* Fifo pairs alive at once, and bytes of one fifo's ring (Zircon: 4096). */
#ifndef K32_KOBJ_MAX_FIFOS
#define K32_KOBJ_MAX_FIFOS 16
#endif
#ifndef K32_KOBJ_FIFO_MAX_BYTES
#define K32_KOBJ_FIFO_MAX_BYTES 4096
#endif

/* Timers alive at once (served by one timer thread). */
#ifndef K32_KOBJ_MAX_TIMERS
#define K32_KOBJ_MAX_TIMERS 32
#endif

/* VMOs alive at once; their bytes come from K32_KOBJ_REGION_BYTES. */
#ifndef K32_KOBJ_MAX_VMOS
#define K32_KOBJ_MAX_VMOS 32
#endif

/* Items in one wait_many (Zircon keeps a small fixed cap too; use a port for more). */
#ifndef K32_KOBJ_WAIT_MANY_MAX
#define K32_KOBJ_WAIT_MANY_MAX 8
#endif

/* Per-owner shares of the node-wide pools, so one pod cannot starve the others: channel
 * messages it wrote that are still queued, wait_async observers it armed (armed or queued),
 * user packets it queued. Beyond them its calls get NO_RESOURCES naming the limit. An account
 * outlives its owner until what it charged is drained; K32_KOBJ_MAX_ACCOUNTS accounts exist
 * (owners made beyond it run without quotas). 124 B each on a 32-bit target. */
#ifndef K32_KOBJ_OWNER_MAX_MESSAGES
#define K32_KOBJ_OWNER_MAX_MESSAGES 64
#endif
#ifndef K32_KOBJ_OWNER_MAX_OBSERVERS
#define K32_KOBJ_OWNER_MAX_OBSERVERS 32
#endif
#ifndef K32_KOBJ_OWNER_MAX_PACKETS
#define K32_KOBJ_OWNER_MAX_PACKETS 32
#endif
/* Buffered memory one owner may hold: message chunks of its queued channel messages (the
 * bytes past K32_KOBJ_MSG_INLINE_BYTES, K32_KOBJ_MSG_CHUNK_BYTES each; half the chunk pool,
 * two full queues of maximal messages, so a writer at a full queue meets SHOULD_WAIT before
 * its share) and region bytes of the sockets, fifos and VMOs it created (a quarter of the
 * region). */
#ifndef K32_KOBJ_OWNER_MAX_MSG_CHUNKS
#define K32_KOBJ_OWNER_MAX_MSG_CHUNKS (K32_KOBJ_MSG_CHUNKS / 2)
#endif
#ifndef K32_KOBJ_OWNER_MAX_REGION_BYTES
#define K32_KOBJ_OWNER_MAX_REGION_BYTES (K32_KOBJ_REGION_BYTES / 4)
#endif
/* Objects one owner may have created and still alive, per type, in percent of that type's pool
 * (K32_KOBJ_MAX_CHANNELS, _SOCKETS, ...; at least one); a pair counts once. */
#ifndef K32_KOBJ_OWNER_POOL_PCT
#define K32_KOBJ_OWNER_POOL_PCT 50
#endif
#ifndef K32_KOBJ_MAX_ACCOUNTS
#define K32_KOBJ_MAX_ACCOUNTS 64
#endif
/* Objects that can carry a name (KOBJ_PROP_NAME) at once: 40 B each on a 32-bit target, an
 * unnamed object costs nothing. */
#ifndef K32_KOBJ_MAX_NAMES
#define K32_KOBJ_MAX_NAMES 64
#endif

/* Threads that can sleep in kobj waits at once; each owns a platform mutex + condition
 * variable for the node's lifetime (~128 B here, far less on FreeRTOS). Beyond it waiters
 * poll every 100 us (correct, slower). */
#ifndef K32_KOBJ_MAX_SLEEPERS
#define K32_KOBJ_MAX_SLEEPERS 64
#endif

/* Nanoseconds a blocking wait spins before sleeping (pays when the waker is on the other
 * core; kobj_set_spin_ns changes it at run time). */
#ifndef K32_KOBJ_SPIN_NS
#define K32_KOBJ_SPIN_NS 2000
#endif

_Static_assert(K32_KOBJ_MAX_HANDLES >= 4 && K32_KOBJ_MAX_HANDLES <= 256,
	       "K32_KOBJ_MAX_HANDLES: 4..256 (8 slot bits)");
_Static_assert(K32_KOBJ_CHANNEL_MAX_MSG_HANDLES <= 64,
	       "K32_KOBJ_CHANNEL_MAX_MSG_HANDLES over Zircon's 64");
_Static_assert(K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES >= K32_KOBJ_CHANNEL_MAX_MSG_BYTES,
	       "a channel queue must hold one maximal message");
_Static_assert(K32_KOBJ_MSG_CHUNK_BYTES >= 64, "K32_KOBJ_MSG_CHUNK_BYTES too small");
_Static_assert(K32_KOBJ_WAIT_MANY_MAX >= 1 && K32_KOBJ_WAIT_MANY_MAX <= 64,
	       "K32_KOBJ_WAIT_MANY_MAX: 1..64");
_Static_assert((K32_KOBJ_SOCKET_MIN_CAP & (K32_KOBJ_SOCKET_MIN_CAP - 1)) == 0,
	       "socket caps are powers of 2");
_Static_assert(K32_KOBJ_OWNER_MAX_MSG_CHUNKS >=
		   (K32_KOBJ_CHANNEL_MAX_MSG_BYTES + K32_KOBJ_MSG_CHUNK_BYTES - 1) /
		       K32_KOBJ_MSG_CHUNK_BYTES,
	       "K32_KOBJ_OWNER_MAX_MSG_CHUNKS must let an owner queue one maximal message");
_Static_assert(K32_KOBJ_OWNER_MAX_REGION_BYTES >= 2 * K32_KOBJ_SOCKET_MAX_CAP,
	       "K32_KOBJ_OWNER_MAX_REGION_BYTES must hold one socket of the largest capacity");
_Static_assert(K32_KOBJ_OWNER_POOL_PCT >= 1 && K32_KOBJ_OWNER_POOL_PCT <= 100,
	       "K32_KOBJ_OWNER_POOL_PCT: 1..100");

/* ==== store ============================================================================= */

/* Bytes of a store key "/<group>/<resource>/<ns>/<name>" (Kubernetes names are at most 253,
 * namespaces 63). Bounds the stack buffers of the store and its continue tokens; ceiling
 * 1024 (keys sit on the stack of every write). */
#ifndef K32_STORE_KEY_MAX
#define K32_STORE_KEY_MAX 384
#endif

/* Bytes of one object's JSON text (ConfigMaps and Secrets are the big ones; Kubernetes caps
 * them near 1 MiB). Ceiling 16 MiB: a log record's length is checked against it on replay. */
#ifndef K32_STORE_VALUE_MAX
#define K32_STORE_VALUE_MAX (1024 * 1024)
#endif

/* Live objects in the embedded store. The index costs 8 bytes per slot (a sorted array of
 * pointers that grows by doubling up to this); each object ~32 bytes + key + value. */
#ifndef K32_STORE_MAX_OBJECTS
#define K32_STORE_MAX_OBJECTS 8192
#endif

/* Bytes of live object versions (headers, keys, values) the embedded store keeps. The
 * control plane's whole budget is 4 MiB RSS; 10 nodes + 100 pods + events take ~300 KiB. */
#ifndef K32_STORE_MAX_BYTES
#define K32_STORE_MAX_BYTES (2 * 1024 * 1024)
#endif

/* Percent of the store's byte and object limits kept for essential writes (struct
 * store_value.essential; the API marks Lease writes, node status writes and the writes a
 * DELETE makes): when the rest is full, nodes still renew their Leases and report status,
 * and objects can still be deleted to make room. Any other write that would grow the store
 * into the reserve is refused with K32_ERR_NO_RESOURCES (API: 429, naming the limit).
 * 5 % of a board's 2 MiB is ~100 KiB: a Lease renewal adds nothing, a node status write a
 * few hundred bytes, marking an object deleted ~60. */
#ifndef K32_STORE_RESERVE_PCT
#define K32_STORE_RESERVE_PCT 5
#endif

/* The store limits of kube32-server on Linux (a Raspberry Pi or a PC), its
 * --store-max-bytes and --store-max-objects defaults; a board keeps K32_STORE_MAX_BYTES and
 * K32_STORE_MAX_OBJECTS. Sized for 1,000 boards x 10 pods with their events: a pod as a
 * ReplicaSet makes it is ~1.7 KiB stored, each of its four Events ~0.65 KiB, a board's
 * Node and Lease ~2.1 KiB. Measured (build/src/api/api-fill-bench): 45,522 pods on 4,553
 * nodes fit, every pod's Events kept up to 13,150 pods (then Events hit their share,
 * K32_API_EVENTS_*_PCT, and the oldest go). Memory is used only as objects arrive (the
 * index grows by doubling, 8 bytes per slot). */
#ifndef K32_SERVER_STORE_MAX_BYTES
#define K32_SERVER_STORE_MAX_BYTES (128u * 1024 * 1024)
#endif
#ifndef K32_SERVER_STORE_MAX_OBJECTS
#define K32_SERVER_STORE_MAX_OBJECTS 131072
#endif

/* Events in the watch history ring (32 bytes each, allocated at open). Watches and
 * continued lists reach back this many revisions; older ones get K32_ERR_COMPACTED. */
#ifndef K32_STORE_HISTORY_EVENTS
#define K32_STORE_HISTORY_EVENTS 1024
#endif

/* Bytes of old object versions (replaced or deleted ones, which only the history ring keeps
 * alive) the ring may hold; the oldest events go first when it is passed. Live versions are
 * not counted here (K32_STORE_MAX_BYTES bounds them). */
#ifndef K32_STORE_HISTORY_BYTES
#define K32_STORE_HISTORY_BYTES (512 * 1024)
#endif

/* Matching events a watcher may have pending (not yet taken) before it is closed with
 * K32_ERR_COMPACTED. Costs nothing per event (watchers share the ring); it bounds how far a
 * slow client can hold history back. At most K32_STORE_HISTORY_EVENTS is useful. */
#ifndef K32_STORE_WATCH_QUEUE
#define K32_STORE_WATCH_QUEUE 256
#endif

/* Watchers open at once (~100 bytes each). */
#ifndef K32_STORE_MAX_WATCHERS
#define K32_STORE_MAX_WATCHERS 1024
#endif

/* Log size that triggers a snapshot and a fresh log. A snapshot holds every live object, so
 * it is written from one buffer of about the live bytes; replay on start reads the log
 * whole. Logs past 4x this (snapshots failing) refuse writes with K32_ERR_IO. */
/* Writes one log fsync may cover (group commit, store.h): writers that arrive while an fsync
 * runs append and wait for the next one. Bytes: 24 per slot, one array per store. A writer
 * past it waits for the running fsync. The wait is bounded by one fsync: no timer. */
#ifndef K32_STORE_GROUP_MAX
#define K32_STORE_GROUP_MAX 64
#endif

#ifndef K32_STORE_LOG_ROTATE_BYTES
#define K32_STORE_LOG_ROTATE_BYTES (1024 * 1024)
#endif

_Static_assert(K32_STORE_KEY_MAX >= 64 && K32_STORE_KEY_MAX <= 1024,
	       "K32_STORE_KEY_MAX out of range");
_Static_assert(K32_STORE_VALUE_MAX > 0 && K32_STORE_VALUE_MAX <= 16 * 1024 * 1024,
	       "K32_STORE_VALUE_MAX out of range");
_Static_assert(K32_STORE_HISTORY_EVENTS >= 16, "K32_STORE_HISTORY_EVENTS too small");
_Static_assert(K32_STORE_RESERVE_PCT >= 0 && K32_STORE_RESERVE_PCT <= 50,
	       "K32_STORE_RESERVE_PCT: 0..50");
_Static_assert(K32_SERVER_STORE_MAX_OBJECTS >= K32_STORE_MAX_OBJECTS,
	       "K32_SERVER_STORE_MAX_OBJECTS below a board's");

/* ==== http ============================================================================== */

/* Connections one HTTP server holds at once (watches included); when full, a new client
 * closes the oldest unauthenticated one or is refused (see the admission limits below). Bytes: ~40
 * per slot fixed (slot, poll entry) + ~250 per open idle connection
 * (+~35 KiB with TLS). Ceiling 65534 (16-bit slot index in a stream id), and the posix poll
 * op takes at most 8192 sockets. 4096 on the host: a 1,000-board fleet holds two each (one
 * for requests, one for its watch; issue 15) and leaves room for users and controllers. */
#ifndef K32_HTTP_MAX_CONNS
#define K32_HTTP_MAX_CONNS 4096
#endif

/* Admission (http.h, ADMISSION): limits on connections that have not (yet) made an
 * authenticated request, so unauthenticated clients can never lock authenticated ones out.
 * A connection is "unauthenticated" from accept until a request of it passes the server's
 * authenticate hook with an identity; it is closed after its first answer otherwise.
 *
 * Connections from one client address (IPv4), authenticated or not. Every kube32-sim board
 * and local tool connects from 127.0.0.1, so the host default is the whole table; a board's
 * pod server sets a few. Over it the new client gets a 503 (over TLS, after the handshake)
 * or, with no room at all, a TLS alert. */
#ifndef K32_HTTP_MAX_CONNS_PER_ADDR
#define K32_HTTP_MAX_CONNS_PER_ADDR K32_HTTP_MAX_CONNS
#endif

/* Unauthenticated connections from one address. A newer one from that address closes its
 * oldest unauthenticated connection, so a flood from one address cannot hold more than this
 * many slots, handshakes or buffers, and cannot keep a later client of any address out. */
#ifndef K32_HTTP_MAX_UNAUTH_PER_ADDR
#define K32_HTTP_MAX_UNAUTH_PER_ADDR 32
#endif

/* An unauthenticated connection that has received nothing (since accept, or since its
 * handshake) for this long may be closed to admit a newer one from its address past
 * K32_HTTP_MAX_UNAUTH_PER_ADDR. Younger ones are left alone, so a burst of real clients from
 * one host (500 watches opened at once, a simulator's boards) is not cut down while its
 * first bytes are on the way; the global bound below still holds them all. */
#ifndef K32_HTTP_IDLE_EVICT_MS
#define K32_HTTP_IDLE_EVICT_MS 2000
#endif

/* Percent of a server's connection slots unauthenticated connections may never take: room
 * kept for authenticated clients (unauthenticated ones are at most max_conns minus this
 * share, at least 1; past that a new client closes the oldest unauthenticated connection,
 * whatever its address). A percentage so it scales with each server's max_conns. */
#ifndef K32_HTTP_RESERVED_AUTH_PCT
#define K32_HTTP_RESERVED_AUTH_PCT 10
#endif

/* TLS handshakes in progress at once. A session in handshake holds its two record buffers,
 * ~27 KiB together with Debian's mbedTLS (measured: 1,000 unfinished handshakes took
 * ~27 MiB); a connection gets its session only when its first byte arrives and only while
 * fewer than this many are handshaking, so 32 bound handshakes to ~0.9 MiB. A control-plane
 * board (a few hundred KiB for everything) sets 2 (~54 KiB). */
#ifndef K32_HTTP_MAX_HANDSHAKES
#define K32_HTTP_MAX_HANDSHAKES 32
#endif

/* When all K32_HTTP_MAX_HANDSHAKES are busy, a handshake that has lasted this long gives its
 * slot to a new one (its connection is closed): a stalled handshake (a client that sent half
 * a ClientHello) cannot hold a slot for the whole handshake timeout. A real one needs a few
 * round trips and ~5 ms of CPU. */
#ifndef K32_HTTP_HANDSHAKE_STALL_MS
#define K32_HTTP_HANDSHAKE_STALL_MS 1000
#endif

/* From accept to the end of the TLS handshake (waiting for a handshake slot included). A
 * kubectl handshake takes ~5 ms of CPU; the rest is the network. */
#ifndef K32_HTTP_HANDSHAKE_TIMEOUT_MS
#define K32_HTTP_HANDSHAKE_TIMEOUT_MS 10000
#endif

/* From accept (plain) or the end of the handshake (TLS) to the end of the first request's
 * head. Later requests of an authenticated connection have K32_HTTP_IDLE_TIMEOUT_MS. */
#ifndef K32_HTTP_FIRST_REQUEST_TIMEOUT_MS
#define K32_HTTP_FIRST_REQUEST_TIMEOUT_MS 5000
#endif

/* Bytes of a request line plus headers; over it the server answers 431 and closes. It is also
 * what an input buffer may hold before the body. Ceiling 1 MiB. */
/* Bytes of a query parameter's name once decoded; a longer name is refused with a 400. */
#ifndef K32_HTTP_QUERY_KEY_MAX
#define K32_HTTP_QUERY_KEY_MAX 127
#endif

/* Bytes of a typed query value (boolean, integer, one of a list) once decoded. */
#ifndef K32_HTTP_QUERY_TYPED_MAX
#define K32_HTTP_QUERY_TYPED_MAX 31
#endif

#ifndef K32_HTTP_MAX_HEADER_BYTES
#define K32_HTTP_MAX_HEADER_BYTES 16384
#endif

/* Header lines in one request (431 past it). Bytes: 32 per header while a request is read. */
#ifndef K32_HTTP_MAX_HEADERS
#define K32_HTTP_MAX_HEADERS 64
#endif

/* Bytes of a request body after de-chunking; 413 past it (the API's documented 3 MiB, like
 * the kube-apiserver's request size limit). */
#ifndef K32_HTTP_MAX_BODY_BYTES
#define K32_HTTP_MAX_BODY_BYTES (3u * 1024u * 1024u)
#endif

/* Bytes of one whole (non-streamed) response body, server and client side. */
#ifndef K32_HTTP_MAX_RESPONSE_BYTES
#define K32_HTTP_MAX_RESPONSE_BYTES (16u * 1024u * 1024u)
#endif

/* Bytes of extra response header lines a handler may add. */
#ifndef K32_HTTP_MAX_RESP_HEADER_BYTES
#define K32_HTTP_MAX_RESP_HEADER_BYTES 2048
#endif

/* Bytes a stream may have queued but unsent before http_stream_write says SHOULD_WAIT. */
#ifndef K32_HTTP_STREAM_BUF_BYTES
#define K32_HTTP_STREAM_BUF_BYTES (64u * 1024u)
#endif

/* Milliseconds from a request's first byte to the end of its headers (slow-loris guard). */
#ifndef K32_HTTP_HEADER_TIMEOUT_MS
#define K32_HTTP_HEADER_TIMEOUT_MS 10000
#endif

/* Milliseconds from the end of the headers to the end of the body. */
#ifndef K32_HTTP_BODY_TIMEOUT_MS
#define K32_HTTP_BODY_TIMEOUT_MS 60000
#endif

/* Milliseconds a response (or a stream with queued data) may make no write progress. */
#ifndef K32_HTTP_WRITE_TIMEOUT_MS
#define K32_HTTP_WRITE_TIMEOUT_MS 30000
#endif

/* Milliseconds a kept-alive connection may sit with no request (Go's client keeps 90 s). */
#ifndef K32_HTTP_IDLE_TIMEOUT_MS
#define K32_HTTP_IDLE_TIMEOUT_MS 120000
#endif

/* Default per-call timeout of the HTTP client, in milliseconds. */
#ifndef K32_HTTP_CLIENT_TIMEOUT_MS
#define K32_HTTP_CLIENT_TIMEOUT_MS 30000
#endif

/* Longest line the client's line-streaming mode delivers (one watch event). */
#ifndef K32_HTTP_CLIENT_MAX_LINE
#define K32_HTTP_CLIENT_MAX_LINE (4u * 1024u * 1024u)
#endif

/* Extra subject-alternative names on the serving certificate. */
#ifndef K32_HTTP_MAX_TLS_NAMES
#define K32_HTTP_MAX_TLS_NAMES 8
#endif

/* Handler tasks of an HTTP server by default: 0 runs handlers on the event-loop task (no
 * locking needed in them); N > 0 runs them on N tasks so a slow handler (an fsync) does not
 * hold up other connections. Each task: a thread stack plus ~2.5 KiB of scratch. */
#ifndef K32_HTTP_HANDLER_THREADS
#define K32_HTTP_HANDLER_THREADS 0
#endif

/* 1: an idle TLS connection (a quiet watch, keep-alive between requests) gives its two
 * mbedTLS record buffers back (~33 KiB with Debian's mbedTLS 2.28) until its next record;
 * 0 keeps them for the connection's life. See http_int.h (parking). */
#ifndef K32_HTTP_TLS_PARK
#define K32_HTTP_TLS_PARK 1
#endif

/* 1: the TLS server prefers ChaCha20-Poly1305 (faster than AES-GCM in software mbedTLS);
 * 0: AES-GCM first (a board with an AES engine). See http_tls.c. */
#ifndef K32_HTTP_TLS_PREFER_CHACHA
#define K32_HTTP_TLS_PREFER_CHACHA 1
#endif

/* Most handler tasks one server may start (each is a platform task; K32_PLAT_MAX_TASKS). */
#ifndef K32_HTTP_MAX_HANDLER_THREADS
#define K32_HTTP_MAX_HANDLER_THREADS 16
#endif

/* 1: Content-Encoding: gzip through zlib (answers to clients that accept it, the client's
 * own requests); 0: built without zlib (ESP-IDF has no zlib component): answers go
 * uncompressed and the client does not ask for gzip. cmake -DK32_HTTP_GZIP=OFF; boards 0. */
#ifndef K32_HTTP_GZIP
#define K32_HTTP_GZIP 1
#endif

/* Answers of this many bytes or more are sent gzip-compressed to clients whose
 * Accept-Encoding takes gzip (kubectl, python3-kubernetes); 0 never compresses. Below ~1 KiB
 * the gzip header and the CPU outweigh the bytes saved. */
#ifndef K32_HTTP_GZIP_MIN_BYTES
#define K32_HTTP_GZIP_MIN_BYTES 1024
#endif

/* zlib level of those answers: 1 (fastest; a pod list shrinks ~10x already) .. 9. */
#ifndef K32_HTTP_GZIP_LEVEL
#define K32_HTTP_GZIP_LEVEL 1
#endif

/* Deflate's window (2^bits bytes, 9..15) and hash memory level (1..9): zlib takes
 * (1 << (bits + 2)) + (1 << (level + 9)) bytes per compression, 32 KiB with 12 and 5
 * (256 KiB with zlib's own 15 and 8). JSON objects repeat within a few KiB, so a 4 KiB
 * window loses little (a 64 KiB pod list: 10% larger than with 32 KiB). */
#ifndef K32_HTTP_GZIP_WINDOW_BITS
#define K32_HTTP_GZIP_WINDOW_BITS 12
#endif
#ifndef K32_HTTP_GZIP_MEM_LEVEL
#define K32_HTTP_GZIP_MEM_LEVEL 5
#endif

/* Bytes of a certificate or key path (data_dir + "/pki/server.key"). */
#ifndef K32_HTTP_PATH_LEN
#define K32_HTTP_PATH_LEN 256
#endif

_Static_assert(K32_HTTP_MAX_CONNS >= 1 && K32_HTTP_MAX_CONNS <= 65534,
	       "K32_HTTP_MAX_CONNS out of range");
_Static_assert(K32_HTTP_RESERVED_AUTH_PCT >= 0 && K32_HTTP_RESERVED_AUTH_PCT <= 90,
	       "K32_HTTP_RESERVED_AUTH_PCT out of range 0..90");
_Static_assert(K32_HTTP_MAX_UNAUTH_PER_ADDR >= 1 && K32_HTTP_MAX_CONNS_PER_ADDR >= 1 &&
		   K32_HTTP_MAX_HANDSHAKES >= 1,
	       "K32_HTTP admission limits must be at least 1");
_Static_assert(K32_HTTP_MAX_HEADER_BYTES >= 256 && K32_HTTP_MAX_HEADER_BYTES <= 1048576,
	       "K32_HTTP_MAX_HEADER_BYTES out of range");
_Static_assert(K32_HTTP_GZIP_LEVEL >= 1 && K32_HTTP_GZIP_LEVEL <= 9,
	       "K32_HTTP_GZIP_LEVEL out of range");
_Static_assert(K32_HTTP_GZIP_WINDOW_BITS >= 9 && K32_HTTP_GZIP_WINDOW_BITS <= 15,
	       "K32_HTTP_GZIP_WINDOW_BITS out of range");
_Static_assert(K32_HTTP_GZIP_MEM_LEVEL >= 1 && K32_HTTP_GZIP_MEM_LEVEL <= 9,
	       "K32_HTTP_GZIP_MEM_LEVEL out of range");

/* ==== api =============================================================================== */

/* Plain-JSON list answers kept gzip-compressed with their store revision, for clients that
 * take gzip, and served again while the store has not moved (api_cache.c). Each entry takes
 * up to K32_API_LIST_CACHE_MAX_BYTES (compressed; larger lists are not kept) plus its key.
 * 1..64 entries. */
/* Distinct (verb, resource, subresource, code) series of apiserver_request_total that
 * /metrics keeps; requests past them are counted in kube32_apiserver_request_series_dropped. */
#ifndef K32_API_METRICS_SERIES
#define K32_API_METRICS_SERIES 128
#endif

#ifndef K32_API_LIST_CACHE_ENTRIES
#define K32_API_LIST_CACHE_ENTRIES 4
#endif
#ifndef K32_API_LIST_CACHE_MAX_BYTES
#define K32_API_LIST_CACHE_MAX_BYTES (64u * 1024u)
#endif
/* Bytes of a cache key: group/plural/namespace?raw query (longer queries are not cached). */
#ifndef K32_API_LIST_CACHE_KEY_LEN
#define K32_API_LIST_CACHE_KEY_LEN 256
#endif
_Static_assert(K32_API_LIST_CACHE_ENTRIES >= 1 && K32_API_LIST_CACHE_ENTRIES <= 64,
	       "K32_API_LIST_CACHE_ENTRIES out of range");

/* Server-side apply (api_ssa.c): path elements of one owned field (deeper fields are not
 * tracked), bytes of one element ("k:{"name":"main"}"), and field managers one object may
 * have (an apply past it is 422). */
#ifndef K32_API_SSA_MAX_PATH
#define K32_API_SSA_MAX_PATH 24
#endif
#ifndef K32_API_SSA_ELEM_LEN
#define K32_API_SSA_ELEM_LEN 192
#endif
#ifndef K32_API_SSA_MAX_MANAGERS
#define K32_API_SSA_MAX_MANAGERS 16
#endif

/* Requirements in one label or field selector ("a=b,c in (d)" is 2). Bytes: 88 per term in
 * struct api_selector, which lives in a request or a watch. Ceiling 64. */
#ifndef K32_API_MAX_SELECTOR_TERMS
#define K32_API_MAX_SELECTOR_TERMS 16
#endif

/* Values in one `in (...)` / `notin (...)` set. Bytes: 8 per value per term. */
#ifndef K32_API_MAX_SELECTOR_VALUES
#define K32_API_MAX_SELECTOR_VALUES 8
#endif

/* Bytes of one selector string (the parsed tokens are copied into a buffer this size). */
#ifndef K32_API_SELECTOR_LEN
#define K32_API_SELECTOR_LEN 512
#endif

/* Field causes kept in one 422 Invalid answer; more are counted in the message. Bytes: ~330
 * per cause in struct api_fail, which lives on the request path's stack. */
#ifndef K32_API_MAX_CAUSES
#define K32_API_MAX_CAUSES 6
#endif

/* Attempts of an update, patch or delete whose store write met a concurrent writer (a
 * Conflict the client did not cause: its own resourceVersion or precondition is never
 * retried); each re-reads the object. Past it the client gets the 409. */
#ifndef K32_API_WRITE_RETRIES
#define K32_API_WRITE_RETRIES 8
#endif

/* Warning headers one answer carries (fieldValidation=Warn: one per unknown or duplicate
 * field dropped; past the limit the last one counts the rest) and bytes of each. They live
 * in the request (K32_API_MAX_WARNINGS * K32_API_WARNING_LEN bytes, ~640). */
#ifndef K32_API_MAX_WARNINGS
#define K32_API_MAX_WARNINGS 4
#endif
#ifndef K32_API_WARNING_LEN
#define K32_API_WARNING_LEN 160
#endif

/* Nesting depth patches and protobuf bodies may have (the appliers recurse once per level;
 * JSON parsing is bounded separately by K32_JSON_MAX_DEPTH). */
#ifndef K32_API_MAX_DEPTH
#define K32_API_MAX_DEPTH 24
#endif

/* Identities in <data-dir>/tokens (admin, nodes, ...). Bytes: ~560 each, fixed (user,
 * node, groups). The host's API server holds a token per board of a 1,000-board fleet plus
 * its users (boards: 64, boards/mcu_limits.h). */
#ifndef K32_API_MAX_TOKENS
#define K32_API_MAX_TOKENS 2048
#endif

/* RBAC and ServiceAccounts (api_rbac.c, api_token.c). A user name ("system:serviceaccount:
 * NS:NAME" for a service account) and an identity's groups (comma-separated) are held in
 * fixed fields of each identity: a token for a ServiceAccount whose user name would not fit
 * is refused (422) naming K32_API_USER_LEN. Roles and bindings are checked at create and
 * update: at most K32_API_RBAC_MAX_RULES rules per Role or ClusterRole, at most
 * K32_API_RBAC_MAX_RULE_ITEMS strings in each list of a rule, at most
 * K32_API_RBAC_MAX_SUBJECTS subjects per binding (422 naming the limit). A request of a
 * user that is neither the admin nor a node reads at most K32_API_RBAC_MAX_BINDINGS
 * ClusterRoleBindings and as many RoleBindings of its namespace (a denial past that says
 * the bound was reached). */
#ifndef K32_API_USER_LEN
#define K32_API_USER_LEN 160
#endif
#ifndef K32_API_GROUPS_LEN
#define K32_API_GROUPS_LEN 256
#endif
#ifndef K32_API_RBAC_MAX_RULES
#define K32_API_RBAC_MAX_RULES 32
#endif
#ifndef K32_API_RBAC_MAX_RULE_ITEMS
#define K32_API_RBAC_MAX_RULE_ITEMS 32
#endif
#ifndef K32_API_RBAC_MAX_SUBJECTS
#define K32_API_RBAC_MAX_SUBJECTS 32
#endif
#ifndef K32_API_RBAC_MAX_BINDINGS
#define K32_API_RBAC_MAX_BINDINGS 256
#endif
/* ClusterRoles read when aggregating (aggregationRule.clusterRoleSelectors); past it the
 * others' rules are left out, with a warning. */
/* RBAC objects (the four kinds together) the API server keeps parsed in its snapshot, shared
 * by every access check until one is written; with more, each check reads the bindings from
 * the store instead (slower, same answers). */
#ifndef K32_API_RBAC_CACHE_OBJECTS
#define K32_API_RBAC_CACHE_OBJECTS 1024
#endif
#ifndef K32_API_RBAC_MAX_CLUSTERROLES
#define K32_API_RBAC_MAX_CLUSTERROLES 256
#endif
/* Passes over the ClusterRoles one aggregation runs at most (a chain admin <- edit <- view
 * takes three); roles that aggregate each other stop there, with a warning. */
#ifndef K32_API_RBAC_AGGREGATE_PASSES
#define K32_API_RBAC_AGGREGATE_PASSES 8
#endif
/* ServiceAccount tokens (TokenRequest, kubectl create token): HMAC-SHA256-signed JWTs of at
 * most K32_API_SA_TOKEN_LEN characters (a longer bearer token is refused before any
 * decoding), valid for expirationSeconds between K32_API_SA_TOKEN_MIN_S and
 * K32_API_SA_TOKEN_MAX_S (default K32_API_SA_TOKEN_DEFAULT_S), with at most
 * K32_API_SA_MAX_AUDIENCES audiences. */
#ifndef K32_API_SA_TOKEN_LEN
#define K32_API_SA_TOKEN_LEN 1024
#endif
#ifndef K32_API_SA_TOKEN_MIN_S
#define K32_API_SA_TOKEN_MIN_S 600
#endif
#ifndef K32_API_SA_TOKEN_DEFAULT_S
#define K32_API_SA_TOKEN_DEFAULT_S 3600
#endif
#ifndef K32_API_SA_TOKEN_MAX_S
#define K32_API_SA_TOKEN_MAX_S (365u * 86400u)
#endif
#ifndef K32_API_SA_MAX_AUDIENCES
#define K32_API_SA_MAX_AUDIENCES 4
#endif
_Static_assert(K32_API_USER_LEN >= 64 && K32_API_USER_LEN <= 400, "K32_API_USER_LEN out of range");
_Static_assert(K32_API_SA_TOKEN_LEN >= 256 && K32_API_SA_TOKEN_LEN <= 8192,
	       "K32_API_SA_TOKEN_LEN out of range");
_Static_assert(K32_API_SA_TOKEN_MIN_S <= K32_API_SA_TOKEN_DEFAULT_S &&
		   K32_API_SA_TOKEN_DEFAULT_S <= K32_API_SA_TOKEN_MAX_S,
	       "K32_API_SA_TOKEN_*_S out of order");

/* Event series remembered for de-duplication (count++ instead of a new Event). Bytes: ~200
 * each, fixed; the least recently used series is forgotten first. */
#ifndef K32_API_EVENT_SERIES_MAX
#define K32_API_EVENT_SERIES_MAX 64
#endif

/* Seconds within which a repeated event joins its series (kube's recorder uses 10 min). */
#ifndef K32_API_EVENT_SERIES_S
#define K32_API_EVENT_SERIES_S 600
#endif

/* Seconds an Event is kept after its last occurrence (kube-apiserver's --event-ttl is 1 h);
 * api_events_gc deletes older ones, at most K32_API_EVENT_GC_BATCH per call. */
#ifndef K32_API_EVENT_TTL_S
#define K32_API_EVENT_TTL_S 3600
#endif

/* Events one api_events_gc call deletes at most (bounded work per call). */
#ifndef K32_API_EVENT_GC_BATCH
#define K32_API_EVENT_GC_BATCH 64
#endif

/* Percent of the store's object limit (K32_STORE_MAX_OBJECTS, or the configured one) and of
 * its byte limit (value bytes) that Events (core and events.k8s.io together) may take,
 * besides their TTL: creating an Event past either evicts the least recently written ones
 * (at most K32_API_EVENT_GC_BATCH per new Event), so a busy cluster's Events cannot fill
 * the store. A board: 3,276 Events or 819 KiB (~1,300 Events); kube32-server: 52,428 Events
 * or 51 MiB (api-fill-bench: the Events of 13,150 pods). */
#ifndef K32_API_EVENTS_OBJECTS_PCT
#define K32_API_EVENTS_OBJECTS_PCT 40
#endif
#ifndef K32_API_EVENTS_BYTES_PCT
#define K32_API_EVENTS_BYTES_PCT 40
#endif
_Static_assert(K32_API_EVENTS_OBJECTS_PCT >= 1 && K32_API_EVENTS_OBJECTS_PCT <= 90,
	       "K32_API_EVENTS_OBJECTS_PCT: 1..90");
_Static_assert(K32_API_EVENTS_BYTES_PCT >= 1 && K32_API_EVENTS_BYTES_PCT <= 90,
	       "K32_API_EVENTS_BYTES_PCT: 1..90");

/* Store events one watch stream takes per pull. Bytes: 32 per event per open watch. */
#ifndef K32_API_WATCH_BATCH
#define K32_API_WATCH_BATCH 8
#endif

/* Seconds between BOOKMARK events on watches that allow them. */
#ifndef K32_API_BOOKMARK_S
#define K32_API_BOOKMARK_S 60
#endif

/* Milliseconds between a namespace turning Terminating and the deletion of its contents
 * (kube's namespace controller is asynchronous too: `kubectl delete -f` of a namespace and
 * its objects must still find the objects). */
#ifndef K32_API_NS_PURGE_DELAY_MS
#define K32_API_NS_PURGE_DELAY_MS 1000
#endif

/* Owner levels a cascading delete follows (Deployment > ReplicaSet > Pod is 2). */
#ifndef K32_API_MAX_CASCADE
#define K32_API_MAX_CASCADE 4
#endif

/* CustomResourceDefinitions (api_crd.c, api_schema.c, api_pattern.c). CRDs a server holds;
 * served versions per CRD (the registry keeps K32_API_MAX_CRDS * K32_API_CRD_MAX_VERSIONS
 * rows of ~700 bytes each, fixed). A CRD past either is refused with a 422 naming the limit. */
#ifndef K32_API_MAX_CRDS
#define K32_API_MAX_CRDS 16
#endif
#ifndef K32_API_CRD_MAX_VERSIONS
#define K32_API_CRD_MAX_VERSIONS 4
#endif
/* Bytes of a CRD's spec.group and of a version's name (the router's group and version
 * buffers hold these). */
#ifndef K32_API_CRD_GROUP_LEN
#define K32_API_CRD_GROUP_LEN 63
#endif
#ifndef K32_API_CRD_VERSION_LEN
#define K32_API_CRD_VERSION_LEN 15
#endif
/* Nesting levels of an openAPIV3Schema (properties, items, additionalProperties each add
 * one): the schema walks keep an explicit stack of this many frames (~300 bytes each), no
 * recursion. */
#ifndef K32_API_CRD_SCHEMA_DEPTH
#define K32_API_CRD_SCHEMA_DEPTH 12
#endif
/* Schema objects in one version's openAPIV3Schema (the schema's size). */
#ifndef K32_API_CRD_SCHEMA_NODES
#define K32_API_CRD_SCHEMA_NODES 512
#endif
/* additionalPrinterColumns per version. */
#ifndef K32_API_CRD_MAX_COLUMNS
#define K32_API_CRD_MAX_COLUMNS 8
#endif
/* A schema `pattern`: bytes of its text and instructions of its compiled matcher (a
 * Thompson NFA run without backtracking: time O(input x states), memory ~8 bytes per
 * state on the stack). Longer or richer patterns are refused when the CRD is written. */
#ifndef K32_API_CRD_PATTERN_LEN
#define K32_API_CRD_PATTERN_LEN 128
#endif
#ifndef K32_API_CRD_PATTERN_STATES
#define K32_API_CRD_PATTERN_STATES 192
#endif
/* Group levels `((...))` a pattern may nest (its compiler recurses once per level). */
#ifndef K32_API_CRD_PATTERN_NEST
#define K32_API_CRD_PATTERN_NEST 8
#endif
_Static_assert(K32_API_MAX_CRDS >= 1 && K32_API_MAX_CRDS <= 256, "K32_API_MAX_CRDS: 1..256");
_Static_assert(K32_API_CRD_MAX_VERSIONS >= 1 && K32_API_CRD_MAX_VERSIONS <= 16,
	       "K32_API_CRD_MAX_VERSIONS: 1..16");
_Static_assert(K32_API_CRD_SCHEMA_DEPTH >= 2 && K32_API_CRD_SCHEMA_DEPTH <= 32,
	       "K32_API_CRD_SCHEMA_DEPTH: 2..32");
_Static_assert(K32_API_CRD_PATTERN_STATES >= 16 && K32_API_CRD_PATTERN_STATES <= 1024,
	       "K32_API_CRD_PATTERN_STATES: 16..1024");

_Static_assert(K32_API_MAX_SELECTOR_TERMS >= 1 && K32_API_MAX_SELECTOR_TERMS <= 64,
	       "K32_API_MAX_SELECTOR_TERMS out of range");
_Static_assert(K32_API_SELECTOR_LEN >= 64 && K32_API_SELECTOR_LEN <= 8192,
	       "K32_API_SELECTOR_LEN out of range");
_Static_assert(K32_API_MAX_CAUSES >= 1 && K32_API_MAX_CAUSES <= 32,
	       "K32_API_MAX_CAUSES out of range");
_Static_assert(K32_API_WRITE_RETRIES >= 1 && K32_API_WRITE_RETRIES <= 64,
	       "K32_API_WRITE_RETRIES out of range");
_Static_assert(K32_API_MAX_WARNINGS >= 1 && K32_API_MAX_WARNINGS <= 16,
	       "K32_API_MAX_WARNINGS out of range");
_Static_assert(K32_API_WARNING_LEN >= 64 && K32_API_WARNING_LEN <= 512,
	       "K32_API_WARNING_LEN out of range");
_Static_assert(K32_API_MAX_DEPTH >= 8 && K32_API_MAX_DEPTH <= 64, "K32_API_MAX_DEPTH out of range");
_Static_assert(K32_API_WATCH_BATCH >= 1 && K32_API_WATCH_BATCH <= 256,
	       "K32_API_WATCH_BATCH out of range");

/* ==== hw: I2C buses, simulated devices, driver host functions ========================== */

/* I2C buses per node (hw_host). Bytes: ~200 per bus (lock, cache, counters). The ESP32-S3
 * has two I2C controllers; 4 leaves room for bit-banged buses. */
#ifndef K32_HW_MAX_BUSES
#define K32_HW_MAX_BUSES 4
#endif

/* Largest write or read phase of one transaction (hardware.md section 6, K32_I2C_MAX).
 * Bounds the host's copy buffers (2 x this on the caller's stack). */
#ifndef K32_HW_I2C_MAX
#define K32_HW_I2C_MAX 128
#endif

/* Default wait for the bus lock and per-transfer timeout, in milliseconds. */
#ifndef K32_HW_LOCK_TIMEOUT_MS
#define K32_HW_LOCK_TIMEOUT_MS 50
#endif
#ifndef K32_HW_XFER_TIMEOUT_MS
#define K32_HW_XFER_TIMEOUT_MS 20
#endif

/* Longest k32_sleep_ms a driver may ask: it stalls the interpreter task (longer waits are
 * tick delays). */
#ifndef K32_HW_SLEEP_MAX_MS
#define K32_HW_SLEEP_MAX_MS 10
#endif

/* Readings staged per driver pod before k32_publish, and the size of a key and a value
 * (NUL included). They are kept packed ("key\0value\0" pairs) in K32_HW_READINGS_BYTES,
 * three times per driver pod (staged, latest, last sent): bme688's five readings take 88 B,
 * rfid's four 49 B. */
#ifndef K32_HW_READINGS_BYTES
#define K32_HW_READINGS_BYTES 160
#endif
#ifndef K32_HW_MAX_READINGS
#define K32_HW_MAX_READINGS 8
#endif
#ifndef K32_HW_READING_KEY_LEN
#define K32_HW_READING_KEY_LEN 24
#endif
#ifndef K32_HW_READING_VALUE_LEN
#define K32_HW_READING_VALUE_LEN 32
#endif

/* Bytes of a Device's spec.params kept per driver pod, packed ("key\0value\0"; each key and
 * value under 32 bytes, at most 8 pairs). The demo's bme688 params take 57 B. */
#ifndef K32_HW_DEVICE_PARAMS_BYTES
#define K32_HW_DEVICE_PARAMS_BYTES 192
#endif
/* What a driver pod asks for (hw_device_pod_manifest; measured in drv_e2e_test, which runs
 * the three drivers with exactly these): linear memory (256 B shadow stack + data: bme688
 * ends at 638 B, rfid 494, miniscale 412), Wasm value stack (they need 249..256 B) and call
 * frames (depth 4 at most). The controller's own memory setting caps the first. */
#ifndef K32_HW_DRIVER_MEM_BYTES
#define K32_HW_DRIVER_MEM_BYTES 768
#endif
#ifndef K32_HW_DRIVER_STACK_BYTES
#define K32_HW_DRIVER_STACK_BYTES 512
#endif
#ifndef K32_HW_DRIVER_FRAMES
#define K32_HW_DRIVER_FRAMES 8
#endif
/* Devices per driver pod whose Ready condition the node keeps itself (NotFound / BusError on
 * a failed transfer, Reading on publish; see hw_pod_xfer_failed). One byte each. */
#ifndef K32_HW_POD_AUTO_COND
#define K32_HW_POD_AUTO_COND 4
#endif
/* k32_log lines a driver pod may write per second; the rest are counted and dropped. */
#ifndef K32_HW_LOG_PER_S
#define K32_HW_LOG_PER_S 20
#endif

/* Simulator: devices and buses in one hw_sim (all nodes together). Bytes: ~400 per device. */
#ifndef K32_HW_SIM_MAX_DEVICES
#define K32_HW_SIM_MAX_DEVICES 32
#endif
#ifndef K32_HW_SIM_MAX_BUSES
#define K32_HW_SIM_MAX_BUSES 16
#endif

/* Seconds between Device status updates whose readings did not change (a heartbeat that
 * refreshes lastReadTime); changed readings go at most once a second, string changes at
 * once. The Device controller's Stale threshold is at least twice this. */
#ifndef K32_HW_STATUS_HEARTBEAT_S
#define K32_HW_STATUS_HEARTBEAT_S 10
#endif

_Static_assert(K32_HW_MAX_BUSES >= 1 && K32_HW_MAX_BUSES <= 16, "K32_HW_MAX_BUSES out of range");
_Static_assert(K32_HW_I2C_MAX >= 32 && K32_HW_I2C_MAX <= 1024, "K32_HW_I2C_MAX out of range");
_Static_assert(K32_HW_SLEEP_MAX_MS >= 1 && K32_HW_SLEEP_MAX_MS <= 100,
	       "K32_HW_SLEEP_MAX_MS out of range");
_Static_assert(K32_HW_MAX_READINGS >= 4 && K32_HW_MAX_READINGS <= 32,
	       "K32_HW_MAX_READINGS out of range");
_Static_assert(K32_HW_READING_KEY_LEN >= 16 && K32_HW_READING_VALUE_LEN >= 24,
	       "K32_HW_READING_* too small");
_Static_assert(K32_HW_SIM_MAX_DEVICES >= 1 && K32_HW_SIM_MAX_DEVICES <= 256,
	       "K32_HW_SIM_MAX_DEVICES out of range");

/* ==== ctrl / kubelet / hw =============================================================== */

/* ---- kubelet (src/kubelet) ---- */

/* Native stack of the kubelet's watcher task (pod watch, Lease, status; cJSON parses on it).
 * Boards: 8 KiB (include/k32/boards/mcu_limits.h); no task stack on a board exceeds 16 KiB. */
#ifndef K32_KLET_WATCHER_STACK_BYTES
#define K32_KLET_WATCHER_STACK_BYTES (64u * 1024u)
#endif

/* Pods one kubelet runs at once (slots in a static table, ~9 KiB each with both log rings).
 * A board profile lowers it (the cardputer: 8). Ceiling 256: pod slots are scanned linearly. */
#ifndef K32_KLET_MAX_PODS
#define K32_KLET_MAX_PODS 32
#endif
/* Seconds between Lease renewals in kube-node-lease (Kubernetes: 10). */
#ifndef K32_KLET_LEASE_RENEW_S
#define K32_KLET_LEASE_RENEW_S 10
#endif
/* leaseDurationSeconds written into the Lease (Kubernetes: 40; node lifecycle reads it). */
#ifndef K32_KLET_LEASE_DURATION_S
#define K32_KLET_LEASE_DURATION_S 40
#endif
/* Seconds between unconditional Node status reports (Ready heartbeat; Kubernetes: 300). */
/* A joining board (klet_config.join_retry) that cannot register waits this long before its
 * second attempt, doubling up to the maximum (each wait cut by a random share of up to
 * half). */
#ifndef K32_KLET_JOIN_BACKOFF_MIN_MS
#define K32_KLET_JOIN_BACKOFF_MIN_MS 500
#endif
#ifndef K32_KLET_JOIN_BACKOFF_MAX_MS
#define K32_KLET_JOIN_BACKOFF_MAX_MS 30000
#endif
_Static_assert(K32_KLET_JOIN_BACKOFF_MIN_MS >= 1 &&
		   K32_KLET_JOIN_BACKOFF_MIN_MS <= K32_KLET_JOIN_BACKOFF_MAX_MS,
	       "K32_KLET_JOIN_BACKOFF_MIN_MS out of range");
#ifndef K32_KLET_NODE_STATUS_S
#define K32_KLET_NODE_STATUS_S 60
#endif
/* First restart back-off of a crashed container, doubled per crash (Kubernetes: 10 s). */
#ifndef K32_KLET_BACKOFF_INITIAL_MS
#define K32_KLET_BACKOFF_INITIAL_MS 10000
#endif
/* Back-off ceiling (Kubernetes: 5 min). */
#ifndef K32_KLET_BACKOFF_MAX_MS
#define K32_KLET_BACKOFF_MAX_MS 300000
#endif
/* A container that ran this long without crashing has its back-off reset (Kubernetes: 10 min). */
#ifndef K32_KLET_BACKOFF_RESET_S
#define K32_KLET_BACKOFF_RESET_S 600
#endif
/* Seconds a pod watch asks the API server to keep open before the kubelet re-watches
 * (bounds how long a stop waits for a remote control plane). */
#ifndef K32_KLET_WATCH_TIMEOUT_S
#define K32_KLET_WATCH_TIMEOUT_S 5
#endif
/* Bytes of a CronJob's spec.schedule (five cron fields, or a descriptor such as @daily). */
#ifndef K32_CRON_SCHEDULE_MAX
#define K32_CRON_SCHEDULE_MAX 128
#endif
/* Years ahead the next time of a schedule is looked for: "0 0 29 2 *" (a leap day) needs up
 * to 8 (2096 -> 2104); one that matches no day at all ("0 0 30 2 *") is refused by the API
 * for not firing within them. */
#ifndef K32_CRON_SEARCH_YEARS
#define K32_CRON_SEARCH_YEARS 8
#endif
/* Missed schedules a CronJob controller counts back before it gives up on catching up (as
 * kube-controller-manager: past 100, a Warning TooManyMissedTimes and only the latest runs). */
#ifndef K32_CRON_MISSED_MAX
#define K32_CRON_MISSED_MAX 100
#endif

/* Events about pods a kubelet queues for its node task to send (~580 bytes each, in the
 * kubelet's record); when full a new one is dropped and counted (events_dropped). Hosts: 64,
 * so a burst (many pods failing at once while the node task is slow, as under ASan in CI)
 * keeps its Events; boards: 4. */
#ifndef K32_KLET_EVENT_QUEUE
#define K32_KLET_EVENT_QUEUE 64
#endif
_Static_assert(K32_KLET_EVENT_QUEUE >= 1 && K32_KLET_EVENT_QUEUE <= 256,
	       "K32_KLET_EVENT_QUEUE must be 1..256");
/* Event series a kubelet remembers, so a repeated Event about a pod (a crash loop's BackOff,
 * each restart's Started) counts up its existing Event (PATCH count) instead of adding one,
 * as client-go's correlator does; the least recently used is forgotten first. ~200 bytes
 * each, in the kubelet's record. */
#ifndef K32_KLET_EVENT_SERIES
#define K32_KLET_EVENT_SERIES 8
#endif
/* Bytes of one pod's log ring (and as much again for the previous container's lines).
 * Oldest lines are dropped first. Ceiling 64 KiB: offsets are 16-bit in places. */
#ifndef K32_KLET_LOG_RING_BYTES
#define K32_KLET_LOG_RING_BYTES 4096
#endif
/* Bytes of one log line (longer lines are cut and marked with "..."); 384 holds the
 * kubelet's own line about a crash ("Error: " and a whole KLET_MSG_LEN message). */
#ifndef K32_KLET_LOG_LINE_MAX
#define K32_KLET_LOG_LINE_MAX 384
#endif
/* Default period of k32_tick in ms (annotation kube32.io/tick-ms overrides it per pod). */
#ifndef K32_KLET_TICK_DEFAULT_MS
#define K32_KLET_TICK_DEFAULT_MS 1000
#endif
/* Port of the node's pod HTTP server (design.md section 7). */
#ifndef K32_KLET_POD_HTTP_PORT
#define K32_KLET_POD_HTTP_PORT 7000
#endif
/* Connections the pod server keeps open at once (a profile may lower it: 36 B of server
 * state each, ~300 B per open connection). */
#ifndef K32_KLET_POD_HTTP_CONNS
#define K32_KLET_POD_HTTP_CONNS 64
#endif
/* Connections one client address may hold on the pod server, so one client cannot take all
 * of K32_KLET_POD_HTTP_CONNS. */
#ifndef K32_KLET_POD_HTTP_CONNS_PER_CLIENT
#define K32_KLET_POD_HTTP_CONNS_PER_CLIENT 16
#endif
/* Bearer tokens the pod server accepts on its node endpoints besides the node's own
 * (klet_config.pod_http_tokens): 128 B each in the kubelet. */
#ifndef K32_KLET_POD_HTTP_TOKENS
#define K32_KLET_POD_HTTP_TOKENS 4
#endif
/* Bytes of a pod HTTP request body and of the response a pod writes. */
#ifndef K32_KLET_POD_HTTP_BODY_MAX
#define K32_KLET_POD_HTTP_BODY_MAX (16u * 1024u)
#endif
/* ---- Services (api_service.c, ctrl_endpoints.c, klet_svc.c, api_proxy.c) ---- */
/* Services in the cluster (all namespaces): creating one past it is 403 naming the limit. */
#ifndef K32_SVC_MAX
#define K32_SVC_MAX 256
#endif
/* Ports of one Service (spec.ports). */
#ifndef K32_SVC_PORTS_MAX
#define K32_SVC_PORTS_MAX 8
#endif
/* Endpoints in one EndpointSlice (upstream's --max-endpoints-per-slice defaults to 100); a
 * node group with more is split over several slices. */
#ifndef K32_SVC_SLICE_ENDPOINTS_MAX
#define K32_SVC_SLICE_ENDPOINTS_MAX 100
#endif
/* Ready endpoints one Service routes to (the Endpoints object keeps at most this many
 * addresses, as upstream's 1000 cap; the rest are counted in an annotation). */
#ifndef K32_SVC_ENDPOINTS_MAX
#define K32_SVC_ENDPOINTS_MAX 256
#endif
/* Services whose endpoints one pod server remembers at once (round-robin position and the
 * endpoints read, K32_KLET_SVC_CACHE_MS long). */
#ifndef K32_KLET_SVC_CACHE
#define K32_KLET_SVC_CACHE 8
#endif
/* How long a pod server reuses a Service's endpoints before reading them again. */
#ifndef K32_KLET_SVC_CACHE_MS
#define K32_KLET_SVC_CACHE_MS 1000
#endif
/* Timeout of one request a pod server or the API server forwards to a node's pod server. */
#ifndef K32_SVC_FORWARD_TIMEOUT_MS
#define K32_SVC_FORWARD_TIMEOUT_MS 5000
#endif
/* Endpoints one Service request tries (the next one after a node that cannot be reached). */
#ifndef K32_SVC_FORWARD_TRIES
#define K32_SVC_FORWARD_TRIES 3
#endif
/* Bytes of a request body and of a response the API server's pods/proxy and services/proxy
 * relay (a pod answers at most K32_KLET_POD_HTTP_BODY_MAX anyway). */
#ifndef K32_API_PROXY_BODY_MAX
#define K32_API_PROXY_BODY_MAX (64u * 1024u)
#endif
/* Bytes of the path (and query) a proxy request forwards to a pod. */
#ifndef K32_API_PROXY_PATH_MAX
#define K32_API_PROXY_PATH_MAX 384
#endif
/* Payload bytes of one WebSocket frame a peer may send (http_ws.c; the reader streams
 * payloads and holds none, so this bounds a frame's length field, not memory); past it the
 * connection closes with 1009. kubectl writes a frame per tunnelled write (32 KiB at most). */
#ifndef K32_HTTP_WS_FRAME_MAX
#define K32_HTTP_WS_FRAME_MAX (128u * 1024u)
#endif
/* Payload bytes of one WebSocket message, all its fragments together; past it 1009. */
#ifndef K32_HTTP_WS_MESSAGE_MAX
#define K32_HTTP_WS_MESSAGE_MAX (1024u * 1024u)
#endif
/* kubectl port-forward tunnels (SPDY/3.1, plain or in WebSocket, api_portforward.c) open at
 * once; past it 429. */
#ifndef K32_API_PORTFORWARD_TUNNELS
#define K32_API_PORTFORWARD_TUNNELS 4
#endif
/* Streams one tunnel holds open at once (two per forwarded connection); past it the new
 * stream is refused (RST_STREAM). */
#ifndef K32_API_PORTFORWARD_STREAMS
#define K32_API_PORTFORWARD_STREAMS 8
#endif
/* pods/proxy and services/proxy requests the API server relays at once (each holds one
 * handler task for up to K32_SVC_FORWARD_TIMEOUT_MS); past it 429. */
#ifndef K32_API_PROXY_CONCURRENT
#define K32_API_PROXY_CONCURRENT 4
#endif

/* Bytes of a failed forward's cause kept in the 503/504 that reports it (clipped in the
 * middle, so the Status message's advice after it always fits). */
#ifndef K32_API_PROXY_ERR_CLIP
#define K32_API_PROXY_ERR_CLIP 100
#endif
/* Bytes of one module file read from the image directory. */
#ifndef K32_KLET_IMAGE_MAX_BYTES
#define K32_KLET_IMAGE_MAX_BYTES (1024u * 1024u)
#endif
/* Wasm value stack of a pod (annotation kube32.io/stack-bytes overrides it). */
#ifndef K32_KLET_POD_STACK_BYTES
#define K32_KLET_POD_STACK_BYTES (4u * 1024u)
#endif
/* Wasm call depth of a pod. */
#ifndef K32_KLET_POD_FRAMES
#define K32_KLET_POD_FRAMES 128
#endif
/* Highest call depth a pod may ask for with annotation kube32.io/call-depth (larger values
 * are cut to it; small ones shrink the frame stack, e.g. the hw driver pods ask for 16). */
#ifndef K32_KLET_POD_FRAMES_MAX
#define K32_KLET_POD_FRAMES_MAX 1024
#endif
/* Gas per call into a pod (k32_init, one k32_tick, one HTTP request; annotation
 * kube32.io/execution-budget: "off" or a number overrides it). */
#ifndef K32_KLET_POD_GAS
#define K32_KLET_POD_GAS 20000000ull
#endif
/* kobj handles per pod (each slot 12-24 bytes in the pod's handle table). */
#ifndef K32_KLET_POD_HANDLES
#define K32_KLET_POD_HANDLES 32
#endif
/* A driver pod's Device as fetched at start, and one status patch or Event (node heap). */
#ifndef K32_KLET_HW_DEVICE_BYTES
#define K32_KLET_HW_DEVICE_BYTES 16384
#endif
#ifndef K32_KLET_HW_MSG_BYTES
#define K32_KLET_HW_MSG_BYTES 8192
#endif
/* k32_event calls per pod per worker pass (each under the pod's gas budget): a pod with a
 * full event port cannot hold the interpreter task from the others; what is left waits for
 * the next pass, which is due at once. The queue itself is the pod's kobj port (at most
 * K32_KOBJ_PORT_USER_BUDGET user packets plus one packet per armed observer). */
#ifndef K32_KLET_EVENTS_PER_RUN
#define K32_KLET_EVENTS_PER_RUN 8
#endif
/* How often the worker looks at the event port of a pod that exports k32_event, in ms: the
 * latency bound for packets from other threads (kobj timers, native services); packets a pod
 * of this node causes (a tick, an event, an HTTP request) are looked at right after it. kobj
 * ports cannot be waited on by another owner, hence the poll (one port lookup per pod). */
#ifndef K32_KLET_EVENT_POLL_MS
#define K32_KLET_EVENT_POLL_MS 20
#endif
/* /containerLogs?follow=true streams open at once on one pod server (each holds a buffer of
 * up to K32_KLET_LOG_RING_BYTES + 1 KiB from the node heap while lines wait for the client),
 * and how often a stream looks for new lines, in ms. */
#ifndef K32_KLET_LOG_FOLLOWERS
#define K32_KLET_LOG_FOLLOWERS 4
#endif
#ifndef K32_KLET_LOG_FOLLOW_MS
#define K32_KLET_LOG_FOLLOW_MS 200
#endif

/*
 * The node's tasks (docs/node-tasks.md). Each kubelet runs:
 *   node task  Lease, Node status, pod status patches and Events: never runs pod code, so a
 *              pod can never delay the node's heartbeat (on the board: a FreeRTOS task of
 *              higher priority than the interpreter task);
 *   exec task  the interpreter task: every call into a pod (its stack is the profile's
 *              interp_stack: cardputer 28 KiB);
 *   watch task the list + watch of the node's pods (marks deletions and interrupts the pod);
 *   pod server the HTTP server's loop task (src/http).
 * Stacks in bytes (the POSIX platform raises them to PTHREAD_STACK_MIN; cJSON and the HTTP
 * client with mbedTLS run on the node and watch tasks, hence their size). Priorities are
 * FreeRTOS numbers set by each task (platform task_set_priority; higher runs first, so the
 * node task preempts a pod's call; the POSIX platform leaves them: Linux threads of one
 * process share the CPU fairly, which gives the same separation).
 */
#ifndef K32_KLET_NODE_TASK_STACK
#define K32_KLET_NODE_TASK_STACK (64 * 1024)
#endif
/* Sanitizer builds multiply the stack the simulator gives a board's interpreter task by
 * this (their frames are several times a board build's); 1 otherwise. */
#ifndef K32_SANITIZER_STACK_SCALE
#define K32_SANITIZER_STACK_SCALE 1
#endif
/* the watch task's stack is K32_KLET_WATCHER_STACK_BYTES (above; 8 KiB on the boards) */
#ifndef K32_KLET_NODE_TASK_PRIO
#define K32_KLET_NODE_TASK_PRIO 6
#endif
#ifndef K32_KLET_EXEC_TASK_PRIO
#define K32_KLET_EXEC_TASK_PRIO 4
#endif
/*
 * Wall-clock deadline of one call into a pod (k32_init, one k32_tick, one k32_http, one
 * k32_event), in ms: sleeps (k32_sleep_ms) and kobj waits count against it and never
 * last past it; a pod that passes it is stopped (reason DeadlineExceeded) and restarted by
 * its restartPolicy. Per pod: annotation kube32.io/call-deadline-ms (KLET_ANN_CALL_DEADLINE),
 * a whole number from 1 to K32_KLET_CALL_DEADLINE_MAX_MS. The maximum bounds how long one
 * pod can hold the interpreter task (its neighbours' ticks and requests wait that long at
 * worst); it is below the 30 s default grace period so a deleted pod's last call fits.
 */
#ifndef K32_KLET_CALL_DEADLINE_MS
#define K32_KLET_CALL_DEADLINE_MS 1000
#endif
#ifndef K32_KLET_CALL_DEADLINE_MAX_MS
#define K32_KLET_CALL_DEADLINE_MAX_MS K32_POD_CALL_DEADLINE_MS_MAX
#endif
/*
 * Pod HTTP requests and the exec task (klet_http.c, docs/node-tasks.md). The pod server
 * routes on its own tasks (K32_KLET_POD_HTTP_ROUTERS, never a pod's call); a request for a
 * pod is queued to the exec task, the board's one interpreter. At most
 * K32_KLET_POD_HTTP_QUEUE requests wait (or run) at once per node: one more is answered 503
 * with Retry-After at once (queue full). A request waits at most K32_KLET_POD_HTTP_WAIT_MS
 * for the exec task to take it: when the call running then cannot end within that (its
 * deadline is further), or the time passes, it is answered 503 with Retry-After naming the
 * pod and the call that hold the interpreter. The default waits for any call's deadline
 * (K32_KLET_CALL_DEADLINE_MAX_MS), so a neighbour is served, late, rather than refused.
 * Routers: one per queued request plus one, so routing (/healthz, node endpoints, 404s,
 * 503s) always finds a free task. Each router is a platform task (the boards have 16,
 * K32_PLAT_MAX_TASKS): a kubelet then has 7 (exec, node, watch, the server's loop, 3
 * routers); routers only route and wait, pod code runs on the exec task's stack.
 */
#ifndef K32_KLET_POD_HTTP_QUEUE
#define K32_KLET_POD_HTTP_QUEUE 2
#endif
#ifndef K32_KLET_POD_HTTP_WAIT_MS
#define K32_KLET_POD_HTTP_WAIT_MS K32_KLET_CALL_DEADLINE_MAX_MS
#endif
#ifndef K32_KLET_POD_HTTP_ROUTERS
#define K32_KLET_POD_HTTP_ROUTERS (K32_KLET_POD_HTTP_QUEUE + 1)
#endif
_Static_assert(K32_KLET_POD_HTTP_QUEUE >= 1 && K32_KLET_POD_HTTP_QUEUE <= 32,
	       "K32_KLET_POD_HTTP_QUEUE must be 1..32");
_Static_assert(K32_KLET_POD_HTTP_ROUTERS > K32_KLET_POD_HTTP_QUEUE,
	       "K32_KLET_POD_HTTP_ROUTERS must exceed K32_KLET_POD_HTTP_QUEUE (a free router)");
_Static_assert(K32_KLET_POD_HTTP_ROUTERS <= K32_HTTP_MAX_HANDLER_THREADS,
	       "K32_KLET_POD_HTTP_ROUTERS over K32_HTTP_MAX_HANDLER_THREADS: the pod server "
	       "could not start; lower K32_KLET_POD_HTTP_QUEUE or raise the HTTP limit");
_Static_assert(K32_KLET_POD_HTTP_WAIT_MS >= 1 && K32_KLET_POD_HTTP_WAIT_MS <= 25000,
	       "K32_KLET_POD_HTTP_WAIT_MS must be 1..25000");
/* A pod's blocking kobj wait (kx_object_wait_one, _many, kx_port_wait) is cut into pieces
 * of this many ms, between which the kubelet looks for a stop request (deletion, shutdown):
 * kobj waits know nothing of the kubelet. A waiting pod costs one wake-up per piece. */
#ifndef K32_KLET_WAIT_CHECK_MS
#define K32_KLET_WAIT_CHECK_MS 20
#endif
_Static_assert(K32_KLET_CALL_DEADLINE_MS >= 1 &&
		   K32_KLET_CALL_DEADLINE_MS <= K32_KLET_CALL_DEADLINE_MAX_MS,
	       "K32_KLET_CALL_DEADLINE_MS must be within 1..K32_KLET_CALL_DEADLINE_MAX_MS");
_Static_assert(K32_KLET_CALL_DEADLINE_MAX_MS <= 25000,
	       "K32_KLET_CALL_DEADLINE_MAX_MS must leave room in the 30 s grace period");
_Static_assert(K32_KLET_WAIT_CHECK_MS >= 1 && K32_KLET_WAIT_CHECK_MS <= 100,
	       "K32_KLET_WAIT_CHECK_MS must be 1..100 (the stop promise is 100 ms)");
_Static_assert(K32_KLET_NODE_TASK_STACK >= 8192 && K32_KLET_WATCHER_STACK_BYTES >= 8192,
	       "kubelet task stacks under 8 KiB");
_Static_assert(K32_KLET_NODE_TASK_PRIO > K32_KLET_EXEC_TASK_PRIO,
	       "the node task must run before pod code (K32_KLET_NODE_TASK_PRIO)");

_Static_assert(K32_KLET_EVENTS_PER_RUN >= 1 && K32_KLET_EVENTS_PER_RUN <= 256,
	       "K32_KLET_EVENTS_PER_RUN out of range");
_Static_assert(K32_KLET_EVENT_POLL_MS >= 1 && K32_KLET_EVENT_POLL_MS <= 10000,
	       "K32_KLET_EVENT_POLL_MS out of range");
_Static_assert(K32_KLET_LOG_FOLLOWERS >= 1 && K32_KLET_LOG_FOLLOWERS <= 64,
	       "K32_KLET_LOG_FOLLOWERS out of range");
_Static_assert(K32_KLET_LOG_FOLLOW_MS >= 10 && K32_KLET_LOG_FOLLOW_MS <= 10000,
	       "K32_KLET_LOG_FOLLOW_MS out of range");
_Static_assert(K32_KLET_MAX_PODS >= 1 && K32_KLET_MAX_PODS <= 256,
	       "K32_KLET_MAX_PODS out of range");
_Static_assert(K32_KLET_LOG_RING_BYTES >= 512 && K32_KLET_LOG_RING_BYTES <= 65536,
	       "K32_KLET_LOG_RING_BYTES out of range");
_Static_assert(K32_KLET_LOG_LINE_MAX >= 32 && K32_KLET_LOG_LINE_MAX * 2 <= K32_KLET_LOG_RING_BYTES,
	       "K32_KLET_LOG_LINE_MAX out of range");
_Static_assert(K32_KLET_BACKOFF_INITIAL_MS <= K32_KLET_BACKOFF_MAX_MS,
	       "K32_KLET_BACKOFF_INITIAL_MS above K32_KLET_BACKOFF_MAX_MS");
_Static_assert(K32_KLET_POD_HANDLES >= 1 && K32_KLET_POD_HANDLES <= K32_KOBJ_MAX_HANDLES,
	       "K32_KLET_POD_HANDLES out of range");

/* ---- end kubelet ---- */

/* ---- kclient (the client interface, src/kclient) ---- */

/* A watch calls its line callback with (NULL, 0) after this much silence, so its owner can
 * stop it from its own thread: bounds how long stopping a controller process takes. */
#ifndef K32_KCLIENT_WATCH_TICK_MS
#define K32_KCLIENT_WATCH_TICK_MS 250
#endif

/* Seconds a watch over HTTP may stay silent (no event, no BOOKMARK) before the client
 * drops the connection and the informer reconnects; above K32_API_BOOKMARK_S. */
#ifndef K32_KCLIENT_WATCH_IDLE_S
#define K32_KCLIENT_WATCH_IDLE_S 150
#endif

_Static_assert(K32_KCLIENT_WATCH_TICK_MS >= 10 && K32_KCLIENT_WATCH_TICK_MS <= 10000,
	       "K32_KCLIENT_WATCH_TICK_MS out of range");

/* ---- end kclient ---- */

/* ---- ctrl (scheduler and controllers, src/ctrl) ---- */

/* Objects one controller pass acts on (binds, creates, deletes, status writes) before it
 * yields to the other controllers; it stays dirty and continues on the next loop turn
 * (Redis dictRehash-style bounded work). Ceiling 1024: a pass holds its page in memory. */
#ifndef K32_CTRL_BATCH
#define K32_CTRL_BATCH 32
#endif

/* Objects per list request a controller makes (limit=, then continue=). Bounds the JSON a
 * pass holds at once: about page * object size (a pod is ~1.5 KiB). */
#ifndef K32_CTRL_LIST_PAGE
#define K32_CTRL_LIST_PAGE 64
#endif

/* Bytes of one API answer a controller accepts (a list page). Over it the pass fails with
 * K32_ERR_NO_RESOURCES naming this limit; lower K32_CTRL_LIST_PAGE. */
#ifndef K32_CTRL_RESP_BYTES
#define K32_CTRL_RESP_BYTES (1024 * 1024)
#endif

/* Seconds between passes of a controller when nothing it reads changed. */
/* Device controller: extra silence (beyond three poll intervals) before a Device is Stale,
 * and the memory limit of the driver pods it creates (a cardputer runs three in 80 KiB). */
#ifndef K32_CTRL_DEVICE_STALE_GRACE_S
#define K32_CTRL_DEVICE_STALE_GRACE_S 10
#endif
#ifndef K32_CTRL_DRIVER_POD_MEM
#define K32_CTRL_DRIVER_POD_MEM "2Ki"
#endif
#ifndef K32_CTRL_RESYNC_S
#define K32_CTRL_RESYNC_S 30
#endif

/* Seconds between scheduler passes without a pod or node change (unschedulable retry). */
/*
 * The scheduling queue (ctrl_schedq.c), after kube-scheduler's: a pod that fits nowhere is
 * parked and tried again only when a node or the room on one changes (then after its
 * backoff, which doubles from the initial value to the max per failed attempt), or after
 * K32_CTRL_SCHED_PARK_MAX_S parked. Its FailedScheduling event is written again only when the
 * message changes or K32_CTRL_SCHED_EVENT_INTERVAL_S have passed. The queue remembers at
 * most K32_CTRL_SCHED_QUEUE_MAX pending pods (56 bytes each, allocated as pods arrive);
 * pods past it wait for the periodic pass.
 */
#ifndef K32_CTRL_SCHED_BACKOFF_INITIAL_MS
#define K32_CTRL_SCHED_BACKOFF_INITIAL_MS 1000
#endif
#ifndef K32_CTRL_SCHED_BACKOFF_MAX_MS
#define K32_CTRL_SCHED_BACKOFF_MAX_MS 10000
#endif
#ifndef K32_CTRL_SCHED_PARK_MAX_S
#define K32_CTRL_SCHED_PARK_MAX_S 300
#endif
#ifndef K32_CTRL_SCHED_EVENT_INTERVAL_S
#define K32_CTRL_SCHED_EVENT_INTERVAL_S 300
#endif
#ifndef K32_CTRL_SCHED_QUEUE_MAX
#define K32_CTRL_SCHED_QUEUE_MAX 16384
#endif

#ifndef K32_CTRL_SCHED_RESYNC_S
#define K32_CTRL_SCHED_RESYNC_S 300
#endif

/* Seconds between node lifecycle checks of Lease ages (they trigger no pass themselves). */
#ifndef K32_CTRL_NODE_MONITOR_S
#define K32_CTRL_NODE_MONITOR_S 5
#endif

/* Seconds a node's Lease may stay unrenewed before the node goes Ready=Unknown with the
 * node.kubernetes.io/unreachable taints (Kubernetes' node-monitor-grace-period is 40 s). */
#ifndef K32_CTRL_NODE_GRACE_S
#define K32_CTRL_NODE_GRACE_S 40
#endif

/* Seconds after a node went unreachable before its pods that do not tolerate it are
 * deleted so their controllers recreate them elsewhere (Kubernetes: 300 via default
 * tolerations; a board cluster wants its pods back sooner). */
#ifndef K32_CTRL_POD_EVICTION_S
#define K32_CTRL_POD_EVICTION_S 30
#endif

/* Seconds a Job waits before replacing its first failed pod; doubles per further failure up
 * to K32_CTRL_JOB_BACKOFF_MAX_S (Kubernetes: 10 s and 6 min), so a crashing module does not
 * spin the board. */
#ifndef K32_CTRL_JOB_BACKOFF_S
#define K32_CTRL_JOB_BACKOFF_S 10
#endif
#ifndef K32_CTRL_JOB_BACKOFF_MAX_S
#define K32_CTRL_JOB_BACKOFF_MAX_S 360
#endif

/* Seconds the garbage collector waits between finding an object whose owners are gone and
 * deleting it, re-checking then: an owner deleted with propagationPolicy Orphan is removed
 * just before its dependents lose their references, and this keeps the GC out of that
 * window (Kubernetes re-checks with a live read for the same reason). */
#ifndef K32_CTRL_GC_CONFIRM_S
#define K32_CTRL_GC_CONFIRM_S 2
#endif

/* Change events the garbage collector and the namespace controller keep to work from (an
 * owner deleted, an object being deleted with a GC finalizer, a Terminating namespace),
 * about 180 bytes each; past it they walk their kinds as on a resync. */
#ifndef K32_CTRL_GC_NOTES
#define K32_CTRL_GC_NOTES 16
#endif

/* Seconds between the GC's or the namespace controller's re-checks of what they wait on (an
 * owner's dependents going, a namespace emptying): what no change event of theirs reports. */
#ifndef K32_CTRL_GC_RECHECK_S
#define K32_CTRL_GC_RECHECK_S 2
#endif
_Static_assert(K32_CTRL_GC_NOTES >= 1 && K32_CTRL_GC_NOTES <= 1024,
	       "K32_CTRL_GC_NOTES out of range (1..1024: the notes are scanned per event)");
_Static_assert(K32_CTRL_GC_RECHECK_S >= 1 && K32_CTRL_GC_RECHECK_S <= 3600,
	       "K32_CTRL_GC_RECHECK_S out of range (1..3600)");

/* Bytes the scheduler adds to every pod's memory limit for what the kubelet takes from the
 * pool besides linear memory (Kubernetes' pod overhead): the module's compiled code, the
 * interpreter value stack (K32_KLET_POD_STACK_BYTES) and runtime tables. Measured for
 * apps/examples/hello.wasm on the cardputer profile: 6309 code + 7168 stack + 2824 runtime
 * = 16301 bytes; larger modules need more (the kubelet then refuses the pod at start). */
#ifndef K32_CTRL_POD_OVERHEAD_BYTES
#define K32_CTRL_POD_OVERHEAD_BYTES (16u * 1024u)
#endif

/* Back-off of a controller's work item (one object; or the whole pass of a controller
 * that has no per-object items) whose write the API refused or that failed on the way
 * (429/507 from a full store included): retried after the initial delay, doubled per
 * further failure up to the max, as client-go's rate-limited work queue; a success forgets
 * it. K32_CTRL_BACKOFF_ITEMS items are remembered (24 bytes each, in struct ctrl); past it
 * the controller backs off as a whole. */
#ifndef K32_CTRL_BACKOFF_INITIAL_MS
#define K32_CTRL_BACKOFF_INITIAL_MS 500
#endif
#ifndef K32_CTRL_BACKOFF_MAX_MS
#define K32_CTRL_BACKOFF_MAX_MS 60000
#endif
#ifndef K32_CTRL_BACKOFF_ITEMS
#define K32_CTRL_BACKOFF_ITEMS 128
#endif
_Static_assert(K32_CTRL_BACKOFF_INITIAL_MS >= 1 &&
		   K32_CTRL_BACKOFF_INITIAL_MS <= K32_CTRL_BACKOFF_MAX_MS,
	       "K32_CTRL_BACKOFF_INITIAL_MS out of range");
_Static_assert(K32_CTRL_BACKOFF_ITEMS >= 1 && K32_CTRL_BACKOFF_ITEMS <= 65536,
	       "K32_CTRL_BACKOFF_ITEMS out of range");

/* Seconds between the controllers' sweeps of their expired Events (older than
 * K32_API_EVENT_TTL_S): one paged list of the Events per period, not per Event made, so
 * recording an Event costs the same however many there are. */
#ifndef K32_CTRL_EVENT_SWEEP_S
#define K32_CTRL_EVENT_SWEEP_S 600
#endif

/* Nodes node lifecycle monitors and the pods cache keeps per-node sums for (the default of
 * ctrl_config.max_nodes). The tables grow with the nodes present (~130 bytes a node for
 * heartbeats, ~270 for the sums), so the bound costs nothing until reached; past it the
 * nodes not monitored are counted in one WARN per pass naming this limit, and the scheduler
 * adds up the pods itself. Boards override it (include/k32/boards/mcu_limits.h: 64). */
#ifndef K32_CTRL_MAX_NODES
#define K32_CTRL_MAX_NODES 4096
#endif

/* Bytes of a FailedScheduling message (reasons per node count plus per-node details). */
#ifndef K32_CTRL_MSG_LEN
#define K32_CTRL_MSG_LEN 768
#endif

/* Devices the Device controller (src/ctrl/ctrl_dev.c) reconciles per pass; with more, the
 * oldest this many are reconciled and no driver pod is called an orphan (the pass cannot
 * see every Device). Bytes: ~900 per Device (a parsed hw_device) per pass, default heap. */
#ifndef K32_CTRL_DEVICE_BATCH
#define K32_CTRL_DEVICE_BATCH 64
#endif

_Static_assert(K32_CTRL_DEVICE_BATCH >= 1 && K32_CTRL_DEVICE_BATCH <= 1024,
	       "K32_CTRL_DEVICE_BATCH out of range");

/* Objects (ReplicaSets, Deployments) a change event can queue for the next pass of their
 * controller (4 bytes each); past it that pass reconciles every object, as a resync does. */
#ifndef K32_CTRL_QUEUE_LEN
#define K32_CTRL_QUEUE_LEN 256
#endif

/* Recent Events the controllers remember so a repeat counts up the existing Event (as
 * K32_API_EVENT_SERIES_MAX does for the API's own) instead of creating another. */
#ifndef K32_CTRL_EVENT_SERIES
#define K32_CTRL_EVENT_SERIES 32
#endif

_Static_assert(K32_CTRL_SCHED_BACKOFF_INITIAL_MS >= 1 &&
		   K32_CTRL_SCHED_BACKOFF_INITIAL_MS <= K32_CTRL_SCHED_BACKOFF_MAX_MS,
	       "K32_CTRL_SCHED_BACKOFF_INITIAL_MS out of range");
_Static_assert(K32_CTRL_SCHED_QUEUE_MAX >= 8 && K32_CTRL_SCHED_QUEUE_MAX <= (1 << 20),
	       "K32_CTRL_SCHED_QUEUE_MAX out of range");

/* Objects one controller cache (informer) holds per kind (pods, nodes, ...): past it the
 * cache is dropped and that kind is read through paged lists again (logged at WARN naming
 * this limit; raise it if the cluster is that big and the memory is there). */
#ifndef K32_CTRL_CACHE_MAX_OBJECTS
#define K32_CTRL_CACHE_MAX_OBJECTS 20000
#endif

/* How long a controller's read of its cache waits for the cache to hold the controller's
 * own last write of that kind (read-your-writes, as client-go's expectations give); past it
 * that read goes to the API. */
#ifndef K32_CTRL_CACHE_WAIT_MS
#define K32_CTRL_CACHE_WAIT_MS 1000
#endif

/* Stack of each informer task (one per watched kind). It parses one watch event at a time
 * and, with the in-process client, runs the API server's whole request path for its relists
 * (api_serve and api_crud frames: ~16 KB at -O2, several times that under ASan at -O0, which
 * overflowed 32 KiB), so the host default is generous: Linux commits stack pages lazily.
 * Boards set their own (include/k32/boards/mcu_limits.h). */
#ifndef K32_CTRL_INFORMER_STACK_BYTES
#define K32_CTRL_INFORMER_STACK_BYTES (256u * 1024u)
#endif

/* Seconds an informer waits before re-listing after its watch failed (not a normal end). */
#ifndef K32_CTRL_INFORMER_RETRY_S
#define K32_CTRL_INFORMER_RETRY_S 1
#endif

_Static_assert(K32_CTRL_CACHE_MAX_OBJECTS >= 16 && K32_CTRL_CACHE_MAX_OBJECTS <= 1000000,
	       "K32_CTRL_CACHE_MAX_OBJECTS out of range");

_Static_assert(K32_CTRL_CACHE_WAIT_MS >= 1 && K32_CTRL_CACHE_WAIT_MS <= 60000,
	       "K32_CTRL_CACHE_WAIT_MS out of range");
_Static_assert(K32_CTRL_BATCH >= 1 && K32_CTRL_BATCH <= 1024, "K32_CTRL_BATCH out of range");
_Static_assert(K32_CTRL_LIST_PAGE >= 1 && K32_CTRL_LIST_PAGE <= 500,
	       "K32_CTRL_LIST_PAGE out of range");
_Static_assert(K32_CTRL_MAX_NODES >= 1 && K32_CTRL_MAX_NODES <= 4096,
	       "K32_CTRL_MAX_NODES out of range");
_Static_assert(K32_CTRL_MSG_LEN >= 128 && K32_CTRL_MSG_LEN <= 4096,
	       "K32_CTRL_MSG_LEN out of range");

/* ---- cplane (the control plane as one piece, src/cplane) ---- */

/* Nodes of the control plane's own process whose logs and stats it reads directly (one
 * pointer pair, 16 bytes, each in struct cplane). More boards in one process still work:
 * theirs go through their pod servers. */
#ifndef K32_CPLANE_MAX_LOCAL_NODES
#define K32_CPLANE_MAX_LOCAL_NODES 1024
#endif
/* `kubectl logs -f` streams of pods on nodes in other processes open at once (a ~0.4 KiB
 * slot each in struct cplane, plus the pending lines while a client is slow). One more is
 * refused with 503 naming this limit. */
#ifndef K32_CPLANE_MAX_REMOTE_FOLLOWS
#define K32_CPLANE_MAX_REMOTE_FOLLOWS 8
#endif
/* How often a followed log looks for new lines (in-process: the stream's timer; other
 * processes: the relay task's poll of /containerLogs?afterSeq=N). */
#ifndef K32_CPLANE_LOG_FOLLOW_MS
#define K32_CPLANE_LOG_FOLLOW_MS 250
#endif
/* Polls of a node's pod server failing in a row before a followed log ends. */
#ifndef K32_CPLANE_LOG_FOLLOW_FAILS
#define K32_CPLANE_LOG_FOLLOW_FAILS 8
#endif
/* Bytes of log lines a followed log holds for a client that has not taken them yet (the
 * kubelet's whole ring fits: K32_KLET_LOG_RING_BYTES); past half of it, no new poll. */
#ifndef K32_CPLANE_LOG_PENDING_BYTES
#define K32_CPLANE_LOG_PENDING_BYTES (64u * 1024u)
#endif
/* Stack of the log relay task (an HTTP client request and its parsing). */
#ifndef K32_CPLANE_RELAY_STACK_BYTES
#define K32_CPLANE_RELAY_STACK_BYTES (32u * 1024u)
#endif
/* Largest object (a Pod, a Node, a node's /stats) the log proxy and metrics read. */
#ifndef K32_CPLANE_OBJ_MAX_BYTES
#define K32_CPLANE_OBJ_MAX_BYTES (1u << 20)
#endif
/* Largest CA certificate file embedded in a kubeconfig. */
#ifndef K32_CPLANE_CA_MAX_BYTES
#define K32_CPLANE_CA_MAX_BYTES (64u * 1024u)
#endif

_Static_assert(K32_CPLANE_MAX_LOCAL_NODES >= 1 && K32_CPLANE_MAX_LOCAL_NODES <= 1024,
	       "K32_CPLANE_MAX_LOCAL_NODES out of range");
_Static_assert(K32_CPLANE_MAX_REMOTE_FOLLOWS >= 1 && K32_CPLANE_MAX_REMOTE_FOLLOWS <= 256,
	       "K32_CPLANE_MAX_REMOTE_FOLLOWS out of range");
_Static_assert(K32_CPLANE_LOG_FOLLOW_MS >= 10 && K32_CPLANE_LOG_FOLLOW_MS <= 10000,
	       "K32_CPLANE_LOG_FOLLOW_MS out of range");
_Static_assert(K32_CPLANE_LOG_FOLLOW_FAILS >= 1, "K32_CPLANE_LOG_FOLLOW_FAILS out of range");
_Static_assert(K32_CPLANE_LOG_PENDING_BYTES >= 4096, "K32_CPLANE_LOG_PENDING_BYTES too small");
_Static_assert(K32_CPLANE_RELAY_STACK_BYTES >= 16384, "K32_CPLANE_RELAY_STACK_BYTES too small");

/* ---- end cplane ---- */

/* ---- sim (kube32-sim's boards, src/sim) ---- */

/* Boards one kube32-sim process runs (a kubelet, pod pool and pod server each; the board
 * list is a fixed array of 72 bytes per board). */
#ifndef K32_SIM_MAX_BOARDS
#define K32_SIM_MAX_BOARDS 1024
#endif
/* Handler tasks of kube32-sim's API server (http.h, HANDLER THREADS; kube32-server's
 * --handler-threads default is 2). On the loop task (0) every fsynced write and every TLS
 * handshake of a thousand boards queued behind each other and the listen backlog filled
 * (issue 15); on handler tasks writes that arrive together share one fsync (group commit)
 * and handshakes run beside requests. */
#ifndef K32_SIM_API_HANDLER_THREADS
#if K32_HTTP_MAX_HANDLER_THREADS < 8 /* kube32-sim built with a board's limits (make mcu) */
#define K32_SIM_API_HANDLER_THREADS K32_HTTP_MAX_HANDLER_THREADS
#else
#define K32_SIM_API_HANDLER_THREADS 8
#endif
#endif
/* Beyond 50 boards in one kube32-sim, their first registrations spread over this many
 * milliseconds a board (at most K32_KLET_JOIN_BACKOFF_MAX_MS): two TLS handshakes and three
 * fsynced writes each. At 10 ms a board, 1,000 boards asked for ~200 handshakes a second
 * on a loaded 2-core machine, the queue passed the kubelet's 10 s timeouts and most first
 * attempts were thrown away (1,231 handshake timeouts). */
#ifndef K32_SIM_JOIN_SPREAD_MS_PER_BOARD
#define K32_SIM_JOIN_SPREAD_MS_PER_BOARD 25
#endif
/* Shortest pod watch (timeoutSeconds) of a board run by kube32-sim's own control plane;
 * boards spread theirs over [this, 2 x this). With the kubelet's 5 s (which bounds a joined
 * board's stop) 1,000 boards re-watched ~200 times a second, their resourceVersions fell
 * out of the store's history between BOOKMARKs and each re-watch relisted: 318 watches and
 * 119 lists a second at idle (issue 15). */
#ifndef K32_SIM_LOCAL_WATCH_S
#define K32_SIM_LOCAL_WATCH_S 300
#endif
/* A board file (--config): bytes in all, bytes per line, words per line. */
#ifndef K32_SIM_CONF_MAX_BYTES
#define K32_SIM_CONF_MAX_BYTES (64 * 1024)
#endif
#ifndef K32_SIM_CONF_LINE_MAX
#define K32_SIM_CONF_LINE_MAX 256
#endif
#ifndef K32_SIM_CONF_MAX_WORDS
#define K32_SIM_CONF_MAX_WORDS 8
#endif
/* Largest host-pool= and host-stack= (the host profile is for development, not a board). */
#ifndef K32_SIM_HOST_POOL_MAX
#define K32_SIM_HOST_POOL_MAX (1ull << 32)
#endif
#ifndef K32_SIM_HOST_STACK_MAX
#define K32_SIM_HOST_STACK_MAX (64ull << 20)
#endif

_Static_assert(K32_SIM_MAX_BOARDS >= 1 && K32_SIM_MAX_BOARDS <= K32_CPLANE_MAX_LOCAL_NODES,
	       "K32_SIM_MAX_BOARDS out of range (each board is attached to the control plane)");
_Static_assert(K32_SIM_LOCAL_WATCH_S >= 1 && K32_SIM_LOCAL_WATCH_S <= 3600,
	       "K32_SIM_LOCAL_WATCH_S out of range 1..3600");
_Static_assert(K32_SIM_API_HANDLER_THREADS <= K32_HTTP_MAX_HANDLER_THREADS,
	       "K32_SIM_API_HANDLER_THREADS above K32_HTTP_MAX_HANDLER_THREADS");
_Static_assert(K32_SIM_CONF_LINE_MAX >= 64 && K32_SIM_CONF_LINE_MAX <= 4096,
	       "K32_SIM_CONF_LINE_MAX out of range");
_Static_assert(K32_SIM_CONF_MAX_WORDS >= 3, "K32_SIM_CONF_MAX_WORDS too small");

/* ---- end sim ---- */

/* ---- console (node console line protocol, src/console) ---- */

/* Longest K32_CMD: line, bytes without the newline. A longer line is answered with one error
 * and skipped up to its newline. The buffer is static in struct con (one per console). */
#ifndef K32_CON_LINE_MAX
#define K32_CON_LINE_MAX 256
#endif
/* Most ':'-separated fields after the command name. */
#ifndef K32_CON_MAX_ARGS
#define K32_CON_MAX_ARGS 8
#endif
/* Most calls of K32_CMD:BENCH:hostcall:<n> and runs of K32_CMD:BENCH:<kernel>:<n>:<runs>: the
 * console task is busy for their whole duration. */
#ifndef K32_CON_BENCH_MAX_CALLS
#define K32_CON_BENCH_MAX_CALLS 10000000u
#endif
#ifndef K32_CON_BENCH_MAX_RUNS
#define K32_CON_BENCH_MAX_RUNS 100u
#endif

_Static_assert(K32_CON_LINE_MAX >= 32 && K32_CON_LINE_MAX <= 4096, "K32_CON_LINE_MAX out of range");
_Static_assert(K32_CON_MAX_ARGS >= 4 && K32_CON_MAX_ARGS <= 32, "K32_CON_MAX_ARGS out of range");

/* ---- end console ---- */

_Static_assert(K32_ERR_MSG_LEN >= 64 && K32_ERR_MSG_LEN <= 512, "K32_ERR_MSG_LEN out of range");
_Static_assert(K32_MSG_CLIP_LEN >= 8 && K32_MSG_CLIP_LEN * 4 < K32_ERR_MSG_LEN,
	       "K32_MSG_CLIP_LEN: three clipped names and the sentence must fit K32_ERR_MSG_LEN");
_Static_assert(K32_LOG_LINE_LEN >= 16, "K32_LOG_LINE_LEN out of range");
_Static_assert(K32_LOG_MSG_LEN >= K32_LOG_LINE_LEN && K32_LOG_MSG_LEN <= 1024,
	       "K32_LOG_MSG_LEN: at least a ring line, at most 1024");
_Static_assert(K32_LOG_MSG_LEN >= 2 * K32_MSG_CLIP_LEN + K32_ERR_MSG_LEN + 24,
	       "K32_LOG_MSG_LEN: a kubelet line (node, pod and a whole k32_err message) must fit");
_Static_assert((K32_ALLOC_ALIGN & (K32_ALLOC_ALIGN - 1)) == 0,
	       "K32_ALLOC_ALIGN must be a power of 2");

/* ==== board RAM plan ===================================================================== */

#ifdef K32_BOARD_NAME
/* The pools this header sizes that the node takes from its heap at boot (the kobj socket/VMO
 * region and message chunks, kobj_limits at most these; the kubelet's two log rings per pod)
 * must fit the heap the board header plans; scripts/mcu_size.py checks the linked image's
 * .data + .bss against K32_BOARD_STATIC_RAM_MAX, what SRAM leaves after that heap. */
_Static_assert(K32_KOBJ_REGION_BYTES + K32_KOBJ_MSG_CHUNKS * K32_KOBJ_MSG_CHUNK_BYTES +
		       K32_KLET_MAX_PODS * 2u * K32_KLET_LOG_RING_BYTES <=
		   K32_BOARD_HEAP_PLANNED_BYTES,
	       "board: the kobj region, message chunks and pod log rings outgrow the heap the "
	       "board header plans (K32_BOARD_HEAP_PLANNED_BYTES); lower them in its header");
_Static_assert(K32_BOARD_STATIC_RAM_MAX >= 16u * 1024u,
	       "board: the planned heap and system reserve leave under 16 KiB for static RAM");
/* K32_BOARD_HOST_STACKS: a host build with a board's limits (scripts/mcu.sh's RAM measure:
 * the kubelet's heap with the board's sizes) keeps host-sized task stacks, since 64-bit frames
 * and glibc's printf need more; the boards' own stacks are checked on the Arm images. */
#ifndef K32_BOARD_HOST_STACKS
_Static_assert(K32_BOARD_INTERP_STACK_BYTES <= 16u * 1024u &&
		   K32_KLET_WATCHER_STACK_BYTES <= 16u * 1024u &&
		   K32_KLET_NODE_TASK_STACK <= 16u * 1024u,
	       "board: no task stack over 16 KiB (issue 13); move large buffers to the heap");
#endif
#endif

#endif /* K32_CONFIG_H */
