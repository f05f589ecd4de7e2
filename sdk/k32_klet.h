/*
 * k32_klet.h - the kubelet half of the kube32 pod SDK: the exports the kubelet calls and the
 * imports it offers every pod (module "kube32"). Include it in pod code (freestanding C,
 * clang --target=wasm32); build with k32_add_pod (sdk/k32_pod.cmake).
 *
 * A pod is reactive. The kubelet calls, each call under the pod's execution budget (gas,
 * unless the annotation kube32.io/execution-budget is "off"; a number sets it):
 *
 *   int32_t k32_init(void)   once after the module is instantiated. < 0 fails the container
 *                            (exit code 1, then a restart with back-off per restartPolicy).
 *   int32_t k32_tick(void)   on a schedule: >= 0 is the delay in ms before the next tick
 *                            (0: the pod's period, annotation kube32.io/tick-ms, default
 *                            1000); < 0 fails the container. A void k32_tick also works.
 *   int32_t k32_http(uint32_t method, uint32_t path_len, uint32_t body_len)
 *                            one request from the node's pod HTTP server (port 7000, header
 *                            X-Kube32-Pod: <namespace>/<name>). method is K32_HTTP_GET...;
 *                            read the target with k32_http_path and the body with
 *                            k32_http_body, write the response body with k32_http_write;
 *                            return the HTTP status. A trap answers 500 and restarts the
 *                            pod; running out of budget answers 504 and the pod runs on.
 *   int32_t k32_event(uint32_t type, uint64_t key, uint32_t observed)
 *                            one packet from the pod's event port (k32_event_port(), a kobj
 *                            port the kubelet makes for every pod exporting k32_event):
 *                            type K32_EVENT_SIGNAL: an object the pod armed with
 *                              kx_object_wait_async(h, k32_event_port(), key, signals, 0)
 *                              asserted one of those signals (a channel message, socket
 *                              or fifo data, a timer firing, a peer's user signal, a
 *                              peer closing); observed is every signal active then. The
 *                              observer is one-shot: arm it again to hear more.
 *                            type K32_EVENT_USER: a user packet queued on the port with
 *                              kx_port_queue (by the pod itself, or by a pod or service it
 *                              gave a duplicate of the port handle); observed is 0.
 *                            type K32_EVENT_NODE: from the kubelet; key K32_EVENT_KEY_STOP
 *                              is the last call before a deleted pod is stopped.
 *                            k32_event_packet copies the whole 48-byte packet (a user
 *                            packet's 32 payload bytes, a signal's count and timestamp).
 *                            At most K32_KLET_EVENTS_PER_RUN (8) calls per pass of the
 *                            node's worker; packets from other threads (timers) are seen
 *                            within K32_KLET_EVENT_POLL_MS (20 ms). < 0 fails the container;
 *                            a trap fails it (restart per restartPolicy); running out of
 *                            budget drops that one event, logs why, and the pod runs on.
 *   void _start(void)        a WASI-style command: run once to completion (Jobs; use
 *                            restartPolicy Never or OnFailure). Its exit code is 0, or the
 *                            value given to WASI proc_exit.
 *
 * A trap (out of bounds, unreachable, out of gas, stack exhausted) ends the container with
 * exit code 1 and the trap message as its termination message and last log line.
 *
 * Images: spec.containers[0].image "NAME.wasm" (or "NAME", "registry/NAME:TAG") is the file
 * NAME.wasm in the node's image directory.
 *
 * Memory: resources.limits.memory caps linear memory in bytes (the module's initial pages
 * must fit the limit; a page past it is never granted); the value stack is
 * kube32.io/stack-bytes (default 4 KiB). All of it comes from the node's pod pool.
 *
 * Status codes of these imports (hardware.md section 6): 0 or a length on success,
 * K32_EINVAL for a buffer outside linear memory, K32_ENOSPC for a buffer too small,
 * K32_EBADSTATE for an HTTP call outside k32_http or k32_event_packet outside k32_event.
 */
#ifndef K32_KLET_SDK_H
#define K32_KLET_SDK_H

#include <stdint.h>

#include "k32.h"

#if defined(__wasm__)
#define K32_EXPORT(name) __attribute__((export_name(#name)))
#else
#define K32_EXPORT(name)
#endif

#ifndef K32_EINVAL
#define K32_EINVAL (-1)
#endif
#ifndef K32_ENOSPC
#define K32_ENOSPC (-6)
#endif
#define K32_EBADSTATE (-20)

/* k32_http method codes */
enum {
	K32_HTTP_GET = 0,
	K32_HTTP_HEAD = 1,
	K32_HTTP_POST = 2,
	K32_HTTP_PUT = 3,
	K32_HTTP_DELETE = 4,
	K32_HTTP_PATCH = 5,
	K32_HTTP_OPTIONS = 6,
	K32_HTTP_OTHER = 7,
};

/* k32_event types (a packet's type; the first two are kobj's KX_PKT_TYPE_*). */
enum {
	K32_EVENT_USER = 0,	/* KX_PKT_TYPE_USER: queued with kx_port_queue */
	K32_EVENT_SIGNAL = 1,	/* KX_PKT_TYPE_SIGNAL_ONE: an armed object's signal */
	K32_EVENT_NODE = 0x100, /* from the kubelet; key is a K32_EVENT_KEY_* */
};
/* K32_EVENT_NODE keys. */
#define K32_EVENT_KEY_STOP 1u /* the pod was deleted: it is stopped after this call */

/* Log levels of k32_log (the kubelet keeps the text; the level is advisory). */
enum { K32_LOG_ERR = 0, K32_LOG_WARN = 1, K32_LOG_INFO = 2, K32_LOG_DEBUG = 3 };

/* One line to the pod's log (kubectl logs); a trailing newline is dropped. */
K32_IMPORT(k32_log) void k32_log(uint32_t level, const char *msg, uint32_t len);
/*
 * Formatted text without a C library (sdk/k32_fmt.c, linked by k32_add_pod): the subset
 * %d %i %u %x %X %c %s %p %% with l / ll (64-bit), a width with flags 0 and -, and %.Ns /
 * %.*s. k32_snprintf writes at most cap bytes (NUL included) and returns the length the
 * whole text needs. k32_logf logs one line of at most K32_LOGF_MAX - 1 bytes (a longer one
 * ends in "...") and returns the whole length.
 */
#ifndef K32_LOGF_MAX
#define K32_LOGF_MAX 160
#endif
int32_t k32_snprintf(char *buf, uint32_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int32_t k32_logf(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic time since the node booted. */
K32_IMPORT(k32_time_us) int64_t k32_time_us(void);
K32_IMPORT(k32_time_ms) int64_t k32_time_ms(void);
/* Busy wait of at most 10 ms (it stalls the node's interpreter task): K32_EINVAL past it;
 * longer waits are tick delays. */
K32_IMPORT(k32_sleep_ms) int32_t k32_sleep_ms(uint32_t ms);

/* Copies the request target (path and query) into buf: its length, or K32_ENOSPC. */
K32_IMPORT(k32_http_path) int32_t k32_http_path(char *buf, uint32_t cap);
/* Copies up to cap body bytes from offset: the count copied (0 at the end). */
K32_IMPORT(k32_http_body) int32_t k32_http_body(void *buf, uint32_t cap, uint32_t offset);
/* Appends to the response body: 0, or K32_ENOSPC past K32_KLET_POD_HTTP_BODY_MAX (16 KiB). */
K32_IMPORT(k32_http_write) int32_t k32_http_write(const void *data, uint32_t len);
/* Sets a response header (Content-Type is honoured; others are ignored for now). */
K32_IMPORT(k32_http_header)
int32_t k32_http_header(const char *name, uint32_t name_len, const char *value, uint32_t value_len);

/* The pod's event port (a kobj port handle with the port's rights), or KX_HANDLE_INVALID when
 * the module exports no k32_event. Arm objects onto it with kx_object_wait_async. */
K32_IMPORT(k32_event_port) kx_handle_t k32_event_port(void);
/* Copies the packet being delivered (only inside k32_event) into out: 48, K32_ENOSPC when len
 * is under 48, K32_EBADSTATE outside k32_event. */
K32_IMPORT(k32_event_packet) int32_t k32_event_packet(kx_packet_t *out, uint32_t len);

#endif /* K32_KLET_SDK_H */
