/*
 * boards/mcu_limits.h - the limits every board with a few hundred KiB of SRAM shares (the
 * cardputer, the QEMU Cortex-M board; the devkit's PSRAM holds its pod pool, its SRAM the
 * rest). Included by a board header when that board is built, before k32_config.h's
 * defaults, so each value here replaces the simulator's. A board header may set a limit
 * itself first (these are #ifndef too).
 *
 * Static RAM at these values, kobj: see the size table of `make mcu` (build-mcu/size.md).
 */
#ifndef K32_BOARDS_MCU_LIMITS_H
#define K32_BOARDS_MCU_LIMITS_H

/* base */
#ifndef K32_LOG_RING_LINES
#define K32_LOG_RING_LINES 32
#endif
#ifndef K32_LOG_LINE_LEN
#define K32_LOG_LINE_LEN 128
#endif
/* whole messages all the same: a longer one is stored as several lines (k32_log.c), so a
 * kubelet line keeps its advice; one static buffer of this size, off the tasks' stacks */
#ifndef K32_LOG_MSG_LEN
#define K32_LOG_MSG_LEN 384
#endif
#ifndef K32_JSON_MAX_DEPTH
#define K32_JSON_MAX_DEPTH 24
#endif

/* platform: FreeRTOS-sized task table */
#ifndef K32_PLAT_MAX_TASKS
#define K32_PLAT_MAX_TASKS 16
#endif

/* wasm: module sizes a board can hold at all */
#ifndef K32_WASM_MAX_FUNCS
#define K32_WASM_MAX_FUNCS 4096
#endif
#ifndef K32_WASM_MAX_TYPES
#define K32_WASM_MAX_TYPES 1024
#endif
#ifndef K32_WASM_MAX_LOCALS
#define K32_WASM_MAX_LOCALS 4096
#endif
#ifndef K32_WASM_MAX_OPERANDS
#define K32_WASM_MAX_OPERANDS 1024
#endif
#ifndef K32_WASM_MAX_BLOCK_DEPTH
#define K32_WASM_MAX_BLOCK_DEPTH 256
#endif
#ifndef K32_WASM_MAX_BR_TABLE
#define K32_WASM_MAX_BR_TABLE 4096
#endif
#ifndef K32_WASM_MAX_ENTRIES
#define K32_WASM_MAX_ENTRIES 4096
#endif

/* the op-counting interpreter loop only in host tools */
#ifndef K32_WASM_COUNT_OPS
#define K32_WASM_COUNT_OPS 0
#endif

/* kobj: the MCU values k32_config.h's comments name (4 KiB messages, 8 KiB queues, 64 x
 * 256 B chunks, tens of KiB of socket/VMO region) */
#ifndef K32_KOBJ_MAX_HANDLES
#define K32_KOBJ_MAX_HANDLES 32
#endif
#ifndef K32_KOBJ_MAX_CHANNELS
#define K32_KOBJ_MAX_CHANNELS 16
#endif
#ifndef K32_KOBJ_CHANNEL_MAX_MSG_BYTES
#define K32_KOBJ_CHANNEL_MAX_MSG_BYTES 4096
#endif
#ifndef K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES
#define K32_KOBJ_CHANNEL_MAX_QUEUE_BYTES 8192
#endif
#ifndef K32_KOBJ_MAX_MESSAGES
#define K32_KOBJ_MAX_MESSAGES 64
#endif
#ifndef K32_KOBJ_MSG_INLINE_BYTES
#define K32_KOBJ_MSG_INLINE_BYTES 64
#endif
#ifndef K32_KOBJ_MSG_CHUNK_BYTES
#define K32_KOBJ_MSG_CHUNK_BYTES 256
#endif
#ifndef K32_KOBJ_MSG_CHUNKS
#define K32_KOBJ_MSG_CHUNKS 64
#endif
#ifndef K32_KOBJ_MAX_SOCKETS
#define K32_KOBJ_MAX_SOCKETS 8
#endif
#ifndef K32_KOBJ_SOCKET_DEFAULT_CAP
#define K32_KOBJ_SOCKET_DEFAULT_CAP 512
#endif
#ifndef K32_KOBJ_SOCKET_MAX_CAP
#define K32_KOBJ_SOCKET_MAX_CAP 4096
#endif
#ifndef K32_KOBJ_REGION_BYTES
#define K32_KOBJ_REGION_BYTES (32u * 1024u)
#endif
#ifndef K32_KOBJ_MAX_EVENTS
#define K32_KOBJ_MAX_EVENTS 32
#endif
#ifndef K32_KOBJ_MAX_EVENTPAIRS
#define K32_KOBJ_MAX_EVENTPAIRS 8
#endif
#ifndef K32_KOBJ_MAX_PORTS
#define K32_KOBJ_MAX_PORTS 12
#endif
#ifndef K32_KOBJ_MAX_PORT_OBSERVERS
#define K32_KOBJ_MAX_PORT_OBSERVERS 32
#endif
#ifndef K32_KOBJ_MAX_USER_PACKETS
#define K32_KOBJ_MAX_USER_PACKETS 32
#endif
#ifndef K32_KOBJ_MAX_FIFOS
#define K32_KOBJ_MAX_FIFOS 4
#endif
#ifndef K32_KOBJ_FIFO_MAX_BYTES
#define K32_KOBJ_FIFO_MAX_BYTES 1024
#endif
#ifndef K32_KOBJ_MAX_TIMERS
#define K32_KOBJ_MAX_TIMERS 12
#endif
#ifndef K32_KOBJ_MAX_VMOS
#define K32_KOBJ_MAX_VMOS 8
#endif
#ifndef K32_KOBJ_OWNER_MAX_MESSAGES
#define K32_KOBJ_OWNER_MAX_MESSAGES 16
#endif
#ifndef K32_KOBJ_OWNER_MAX_OBSERVERS
#define K32_KOBJ_OWNER_MAX_OBSERVERS 16
#endif
#ifndef K32_KOBJ_OWNER_MAX_PACKETS
#define K32_KOBJ_OWNER_MAX_PACKETS 16
#endif
#ifndef K32_KOBJ_MAX_ACCOUNTS
#define K32_KOBJ_MAX_ACCOUNTS 16
#endif
#ifndef K32_KOBJ_MAX_NAMES
#define K32_KOBJ_MAX_NAMES 16
#endif
#ifndef K32_KOBJ_MAX_SLEEPERS
#define K32_KOBJ_MAX_SLEEPERS 8
#endif

/* http: a handful of connections, board-sized buffers */
#ifndef K32_HTTP_MAX_CONNS
#define K32_HTTP_MAX_CONNS 8
#endif
#ifndef K32_HTTP_MAX_HEADER_BYTES
#define K32_HTTP_MAX_HEADER_BYTES 4096
#endif
#ifndef K32_HTTP_MAX_HEADERS
#define K32_HTTP_MAX_HEADERS 32
#endif
#ifndef K32_HTTP_MAX_BODY_BYTES
#define K32_HTTP_MAX_BODY_BYTES (64u * 1024u)
#endif
#ifndef K32_HTTP_MAX_RESPONSE_BYTES
#define K32_HTTP_MAX_RESPONSE_BYTES (64u * 1024u)
#endif
#ifndef K32_HTTP_STREAM_BUF_BYTES
#define K32_HTTP_STREAM_BUF_BYTES (8u * 1024u)
#endif
#ifndef K32_HTTP_CLIENT_MAX_LINE
#define K32_HTTP_CLIENT_MAX_LINE (16u * 1024u)
#endif
#ifndef K32_HTTP_MAX_HANDLER_THREADS
#define K32_HTTP_MAX_HANDLER_THREADS 2
#endif
/* no zlib on the board (not an ESP-IDF component): answers go uncompressed */
#ifndef K32_HTTP_GZIP
#define K32_HTTP_GZIP 0
#endif
/* an AES engine on the ESP32-S3 */
#ifndef K32_HTTP_TLS_PREFER_CHACHA
#define K32_HTTP_TLS_PREFER_CHACHA 0
#endif
#ifndef K32_HTTP_PATH_LEN
#define K32_HTTP_PATH_LEN 96
#endif

/* kubelet: log rings, image size, pod HTTP */
#ifndef K32_KLET_LOG_RING_BYTES
#define K32_KLET_LOG_RING_BYTES 2048
#endif
/* the kubelet's own line about a crash ("Error: " and a whole k32_err message) whole, as on
 * the host; a pod's lines are as short as it writes them, so the ring holds as many */
#ifndef K32_KLET_LOG_LINE_MAX
#define K32_KLET_LOG_LINE_MAX 384
#endif
#ifndef K32_KLET_IMAGE_MAX_BYTES
#define K32_KLET_IMAGE_MAX_BYTES (64u * 1024u)
#endif
#ifndef K32_KLET_POD_HTTP_BODY_MAX
#define K32_KLET_POD_HTTP_BODY_MAX (4u * 1024u)
#endif
#ifndef K32_KLET_POD_MEM_DEFAULT
#define K32_KLET_POD_MEM_DEFAULT (16u * 1024u)
#endif
#ifndef K32_CTRL_POD_MEM_DEFAULT
#define K32_CTRL_POD_MEM_DEFAULT K32_KLET_POD_MEM_DEFAULT
#endif
#ifndef K32_KLET_POD_HANDLES
#define K32_KLET_POD_HANDLES 16
#endif
#ifndef K32_KLET_HW_DEVICE_BYTES
#define K32_KLET_HW_DEVICE_BYTES 4096
#endif
#ifndef K32_KLET_HW_MSG_BYTES
#define K32_KLET_HW_MSG_BYTES 2048
#endif
/* one pod request waits for the interpreter at a time (a second gets 503): two router tasks,
 * within K32_HTTP_MAX_HANDLER_THREADS (the host's 2 + 1 asked for 3, which the board's HTTP
 * server refused: a host build with the board's limits found it) */
#ifndef K32_KLET_POD_HTTP_QUEUE
#define K32_KLET_POD_HTTP_QUEUE 1
#endif
/* Events waiting for the node task: a few (each ~580 B of the kubelet's record) */
#ifndef K32_KLET_EVENT_QUEUE
#define K32_KLET_EVENT_QUEUE 4
#endif
#ifndef K32_KLET_LOG_FOLLOWERS
#define K32_KLET_LOG_FOLLOWERS 2
#endif
/* task stacks (no task over 16 KiB; large buffers live on the heap, not on stacks) */
#ifndef K32_KLET_WATCHER_STACK_BYTES
#define K32_KLET_WATCHER_STACK_BYTES (8u * 1024u)
#endif
/* nodes a control-plane board's controllers track (the host default is 4,096) */
#ifndef K32_CTRL_MAX_NODES
#define K32_CTRL_MAX_NODES 64
#endif
/* a controller informer on a control-plane board: its worst static path runs through the
 * in-process API request path (kclient_do > api_do_as > api_serve > ...); `make mcu` checks
 * it against this stack since the request's failure moved from the handlers' frames into the
 * request (struct api_req.fail) */
#ifndef K32_CTRL_INFORMER_STACK_BYTES
#define K32_CTRL_INFORMER_STACK_BYTES (16u * 1024u)
#endif
/* the control plane's log relay (an HTTP client to a kubelet): 6.3 KB worst path, TLS
 * included */
#ifndef K32_CPLANE_RELAY_STACK_BYTES
#define K32_CPLANE_RELAY_STACK_BYTES (16u * 1024u)
#endif
/* the node task (Lease, Node status, pod status, Events: cJSON and the API client) */
#ifndef K32_KLET_NODE_TASK_STACK
#define K32_KLET_NODE_TASK_STACK (12u * 1024u)
#endif

/* a board's control plane: a handful of boards, not a simulator's fleet (the host defaults
 * are sized for 1,000 boards, issue 15) */
#ifndef K32_API_MAX_TOKENS
#define K32_API_MAX_TOKENS 64
#endif
#ifndef K32_CPLANE_MAX_LOCAL_NODES
#define K32_CPLANE_MAX_LOCAL_NODES 4
#endif
#ifndef K32_SIM_MAX_BOARDS
#define K32_SIM_MAX_BOARDS 4
#endif

#endif /* K32_BOARDS_MCU_LIMITS_H */
