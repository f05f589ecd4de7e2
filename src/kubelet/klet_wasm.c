/*
 * klet_wasm.c - the Wasm pod provider: runs a pod's container as a Wasm module in the
 * kube32 runtime (wrt.h), with every byte from the node's pod pool.
 *
 * Images: spec.containers[0].image "[registry/path/]NAME[.wasm][:TAG][@sha256:HEX]" is the
 * file <image_dir>/NAME.wasm on the node (its "SD card"; images/sd/ of a simulated board),
 * else ConfigMap NAME.wasm; a tag is that ConfigMap's key TAG, a digest checks the bytes
 * (klet_image.c). A missing one is K32_ERR_NOT_FOUND (ErrImagePull) saying where it looked.
 *
 * Start: read the module (pool), load (decode, validate, compile with gas metering), link
 * the host tables, instantiate with the pod's limits (linear memory = limits.memory or
 * K32_POD_MEM_DEFAULT, value stack = kube32.io/stack-bytes, K32_KLET_POD_FRAMES
 * frames, gas per call unless kube32.io/execution-budget is "off"), then call k32_init.
 * Exports used (sdk/k32_klet.h documents them):
 *   k32_init() -> i32?          once; < 0 fails the container (restart with back-off)
 *   k32_tick() -> i32?          on schedule; >= 0 ms until the next (0: the pod's period)
 *   k32_http(method, path_len, body_len) -> i32   an HTTP status; the request is read and
 *                               the response written with the k32_http_* imports
 *   k32_event(type, key i64, observed) -> i32?   one packet of the pod's event port
 *   _start()                    WASI command: run to completion once (Jobs)
 * Imports offered: module "kube32": the kobj kx_* table, k32_log, k32_time_us, k32_time_ms,
 * k32_sleep_ms, k32_http_path, k32_http_body, k32_http_write, k32_http_header,
 * k32_event_port, k32_event_packet, plus the
 * config's extra tables; module "wasi_snapshot_preview1": fd_write (fd 1 and 2 to the
 * log), proc_exit, clock_time_get, random_get, args_* and environ_* (empty), fd_close,
 * fd_seek, fd_fdstat_get.
 *
 * Events: a module exporting k32_event gets a kobj port in its own handle table before
 * k32_init (k32_event_port() names it). The pod arms its objects onto it with
 * kx_object_wait_async, or queues user packets with kx_port_queue; the port is the bounded
 * queue (kobj's per-port and per-owner budgets). kw_run takes at most
 * K32_KLET_EVENTS_PER_RUN packets off it per pass, without blocking (deadline 0), and calls
 * k32_event for each under the gas budget: a trap or a negative result ends the container
 * (as a trapping k32_http does), running out of budget drops that packet with a log line and
 * the pod runs on (as an HTTP request gets 504). A deleted pod's last call is K32_EVENT_NODE /
 * K32_EVENT_KEY_STOP (kw_stopping).
 *
 * Context: every function here runs with the kubelet's run lock held.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kubelet/klet_int.h"

#include "base/k32_json.h"
#include "base/k32_log.h"
#include "hw/hw.h"
#include "kmeta/kmeta.h"
#include "kobj/kobj.h"
#include "wasm/wrt.h"

/* Method codes of k32_http (sdk/k32_klet.h). */
static const char *const http_methods[] = {"GET",    "HEAD",  "POST",	"PUT",
					   "DELETE", "PATCH", "OPTIONS"};

struct kw_pod {
	struct klet *k;
	struct klet_pod *pod;
	const struct k32_allocator *a;
	uint8_t *bytes; /* the module file, until the load (which copies what it keeps) */
	size_t len;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	struct kobj_owner owner; /* the pod's kobj handle table */
	bool owner_inited;
	uint32_t f_init, f_tick, f_http, f_start, f_event;
	bool has_init, has_tick, has_http, has_start, has_event;
	bool tick_result, init_result, event_result; /* the export returns an i32 */
	kobj_handle_t port;			     /* the event port (in owner), or 0 */
	const struct kobj_packet *pkt;		     /* during k32_event */
	bool start_done;
	uint32_t tick_ms;
	uint64_t next_tick_us;
	bool exited; /* proc_exit was called */
	int32_t exit_code;
	const struct klet_http_req *req; /* during k32_http */
	struct klet_http_resp *resp;
	struct hw_node_pod *hw; /* bound to a Device (annotation kube32.io/device), or NULL */
	struct hw_pod *hw_none; /* on a node with buses, a pod bound to none: no grants */
	bool hw_crashed;	/* DriverCrash recorded, not yet sent */
	/* the running call (kw_invoke): its name and wall-clock deadline, and the watch that
	 * stops it (the pod's stop word; kw_watch_check also ends it at the deadline) */
	struct wrt_watch watch;
	const char *call;     /* "k32_tick", ... (static) */
	uint32_t deadline_ms; /* per call (kube32.io/call-deadline-ms) */
	uint32_t frames;      /* call depth (kube32.io/call-depth), for the trap's advice */
	uint32_t stack_bytes; /* value stack (kube32.io/stack-bytes), likewise */
	uint64_t deadline_us; /* monotonic end of the running call */
};

/* Every kubelet passes itself as the notify arg, so one function serves them all. */
/* Shared by every kubelet of the process (kube32-sim's boards): set by each klet_start while
 * other boards' workers may already read it, so atomic (the value is the same function). */
static _Atomic(klet_notify_fn) kw_notify;

/* ---- host functions ------------------------------------------------------------------------ */

static struct kw_pod *kw_of(struct k32_hostcall *c)
{
	return c->instance_user;
}

static k32_status_t h_log(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t len = (uint32_t)c->args[2];
	const uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[1], len);
	if (!p)
		return k32_err_set(c->err, K32_ERR_TRAP, KLET_MOD,
				   "k32_log: [%" PRIu32 ", +%" PRIu32
				   ") is outside the pod's %llu bytes of memory",
				   (uint32_t)c->args[1], len, (unsigned long long)c->mem_len);
	klet_pod_log(w->pod, (const char *)p, len);
	return K32_OK;
}

static k32_status_t h_time_us(struct k32_hostcall *c)
{
	c->results[0] = k32_now_us();
	return K32_OK;
}

static k32_status_t h_time_ms(struct k32_hostcall *c)
{
	c->results[0] = k32_now_us() / 1000;
	return K32_OK;
}

/*
 * Whether the running call must end: a stop request (deletion, shutdown) or its deadline.
 * K32_OK: go on. The interpreter calls it at its check points (struct wrt_watch); the host
 * functions that wait call it when their wait ends early.
 */
static k32_status_t kw_watch_check(void *ctx, uint32_t stop, struct k32_err *err)
{
	struct kw_pod *w = ctx;
	if (stop)
		return k32_err_set(err, K32_ERR_CANCELED, KLET_MOD, "%s stopped: %s", w->call,
				   stop == KLET_STOP_SHUTDOWN ? "the node is shutting down"
							      : "the pod was deleted");
	if (k32_now_us() >= w->deadline_us)
		return k32_err_set(err, K32_ERR_TIMED_OUT, KLET_MOD,
				   "deadline exceeded: %s ran past its deadline of %" PRIu32
				   " ms (annotation " KLET_ANN_CALL_DEADLINE ", at most %" PRIu32
				   " ms); return sooner (keep state between ticks) or raise it",
				   w->call, w->deadline_ms,
				   (uint32_t)K32_KLET_CALL_DEADLINE_MAX_MS);
	return K32_OK;
}

/* k32_sleep_ms(ms <= 10): sleeps, but never past the call's deadline, and wakes at once on
 * a stop request; then the call ends (a deadline or stop is not the pod's to ignore). */
static k32_status_t h_sleep_ms(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t ms = (uint32_t)c->args[0];
	if (ms > 10) {
		c->results[0] = (uint32_t)-1; /* EINVAL: longer waits are tick delays */
		return K32_OK;
	}
	uint64_t until = k32_now_us() + (uint64_t)ms * 1000;
	bool capped = until >= w->deadline_us;
	uint32_t stop = klet_pod_sleep(w->pod, capped ? w->deadline_us : until);
	if (stop || capped) {
		k32_status_t st = kw_watch_check(w, stop, c->err);
		if (st)
			return st;
	}
	c->results[0] = 0;
	return K32_OK;
}

/* k32_http_path(buf, cap) -> length, or -6 (ENOSPC) / -20 (not in a request) */
static k32_status_t h_http_path(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t cap = (uint32_t)c->args[1];
	if (!w->req) {
		c->results[0] = (uint32_t)-20;
		return K32_OK;
	}
	uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[0], cap);
	if (!p) {
		c->results[0] = (uint32_t)-1;
		return K32_OK;
	}
	if (w->req->target.len > cap) {
		c->results[0] = (uint32_t)-6;
		return K32_OK;
	}
	memcpy(p, w->req->target.p, w->req->target.len);
	c->results[0] = (uint32_t)w->req->target.len;
	return K32_OK;
}

/* k32_http_body(buf, cap, offset) -> bytes copied */
static k32_status_t h_http_body(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t cap = (uint32_t)c->args[1], off = (uint32_t)c->args[2];
	if (!w->req) {
		c->results[0] = (uint32_t)-20;
		return K32_OK;
	}
	uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[0], cap);
	if (!p) {
		c->results[0] = (uint32_t)-1;
		return K32_OK;
	}
	size_t n = off < w->req->body_len ? w->req->body_len - off : 0;
	if (n > cap)
		n = cap;
	memcpy(p, w->req->body + off, n);
	c->results[0] = (uint32_t)n;
	return K32_OK;
}

/* k32_http_write(ptr, len) -> 0 or -6 when the response is over its limit */
static k32_status_t h_http_write(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t len = (uint32_t)c->args[1];
	if (!w->resp) {
		c->results[0] = (uint32_t)-20;
		return K32_OK;
	}
	const uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[0], len);
	if (!p) {
		c->results[0] = (uint32_t)-1;
		return K32_OK;
	}
	c->results[0] = k32_buf_append(&w->resp->body, p, len, NULL) ? (uint32_t)-6 : 0;
	return K32_OK;
}

/* k32_http_header(name, nlen, value, vlen): only Content-Type is kept for now */
static k32_status_t h_http_header(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t nl = (uint32_t)c->args[1], vl = (uint32_t)c->args[3];
	if (!w->resp) {
		c->results[0] = (uint32_t)-20;
		return K32_OK;
	}
	const uint8_t *n = k32_hostcall_mem(c, (uint32_t)c->args[0], nl);
	const uint8_t *v = k32_hostcall_mem(c, (uint32_t)c->args[2], vl);
	if (!n || !v || memchr(v, '\n', vl) || memchr(v, '\r', vl)) {
		c->results[0] = (uint32_t)-1;
		return K32_OK;
	}
	if (nl == 12 && !strncmp((const char *)n, "Content-Type", 12) &&
	    vl < sizeof(w->resp->content_type)) {
		memcpy(w->resp->content_type, v, vl);
		w->resp->content_type[vl] = 0;
	}
	c->results[0] = 0;
	return K32_OK;
}

/* k32_event_port() -> the pod's event port handle, or 0 */
static k32_status_t h_event_port(struct k32_hostcall *c)
{
	c->results[0] = kw_of(c)->port;
	return K32_OK;
}

_Static_assert(sizeof(struct kobj_packet) == 48, "kx_packet_t of sdk/k32.h is 48 bytes");

/* k32_event_packet(out, len) -> 48, -6 (ENOSPC) for len < 48, -20 outside k32_event */
static k32_status_t h_event_packet(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t len = (uint32_t)c->args[1];
	if (!w->pkt) {
		c->results[0] = (uint32_t)-20;
		return K32_OK;
	}
	if (len < sizeof(*w->pkt)) {
		c->results[0] = (uint32_t)-6;
		return K32_OK;
	}
	uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[0], sizeof(*w->pkt));
	if (!p) {
		c->results[0] = (uint32_t)-1;
		return K32_OK;
	}
	/* kobj's packet and sdk/k32.h's kx_packet_t share one little-endian layout */
	memcpy(p, w->pkt, sizeof(*w->pkt));
	c->results[0] = (uint32_t)sizeof(*w->pkt);
	return K32_OK;
}

/* ---- WASI subset ---------------------------------------------------------------------------- */

#define WASI_EBADF  8
#define WASI_EFAULT 21
#define WASI_EINVAL 28
#define WASI_ESPIPE 70

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* Wasm is little-endian, like every host kube32 runs on */
}

static k32_status_t w_fd_write(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	uint32_t fd = (uint32_t)c->args[0], iovs = (uint32_t)c->args[1], n = (uint32_t)c->args[2];
	uint8_t *out = k32_hostcall_mem(c, (uint32_t)c->args[3], 4);
	uint8_t *v = k32_hostcall_mem(c, iovs, (uint64_t)n * 8);
	if (!out || !v) {
		c->results[0] = WASI_EFAULT;
		return K32_OK;
	}
	if (fd != 1 && fd != 2) {
		c->results[0] = WASI_EBADF;
		return K32_OK;
	}
	uint32_t total = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ptr, len;
		memcpy(&ptr, v + i * 8, 4);
		memcpy(&len, v + i * 8 + 4, 4);
		const uint8_t *p = k32_hostcall_mem(c, ptr, len);
		if (!p) {
			c->results[0] = WASI_EFAULT;
			return K32_OK;
		}
		/* one log line per text line */
		uint32_t s = 0;
		for (uint32_t j = 0; j < len; j++) {
			if (p[j] == '\n') {
				klet_pod_log(w->pod, (const char *)p + s, j - s);
				s = j + 1;
			}
		}
		if (s < len)
			klet_pod_log(w->pod, (const char *)p + s, len - s);
		total += len;
	}
	put32(out, total);
	c->results[0] = 0;
	return K32_OK;
}

static k32_status_t w_proc_exit(struct k32_hostcall *c)
{
	struct kw_pod *w = kw_of(c);
	w->exited = true;
	w->exit_code = (int32_t)(uint32_t)c->args[0];
	return k32_err_set(c->err, K32_ERR_TRAP, KLET_MOD, "proc_exit(%" PRId32 ")", w->exit_code);
}

static k32_status_t w_clock_time_get(struct k32_hostcall *c)
{
	uint8_t *out = k32_hostcall_mem(c, (uint32_t)c->args[2], 8);
	if (!out) {
		c->results[0] = WASI_EFAULT;
		return K32_OK;
	}
	uint64_t ns = (uint32_t)c->args[0] == 0 ? k32_plat()->wall_s() * 1000000000ull
						: k32_now_us() * 1000ull;
	memcpy(out, &ns, 8);
	c->results[0] = 0;
	return K32_OK;
}

static k32_status_t w_random_get(struct k32_hostcall *c)
{
	uint32_t len = (uint32_t)c->args[1];
	uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[0], len);
	if (!p) {
		c->results[0] = WASI_EFAULT;
		return K32_OK;
	}
	c->results[0] = k32_plat()->random(p, len) ? WASI_EINVAL : 0;
	return K32_OK;
}

/* args_sizes_get / environ_sizes_get: zero of each */
static k32_status_t w_sizes_get(struct k32_hostcall *c)
{
	uint8_t *a = k32_hostcall_mem(c, (uint32_t)c->args[0], 4);
	uint8_t *b = k32_hostcall_mem(c, (uint32_t)c->args[1], 4);
	if (!a || !b) {
		c->results[0] = WASI_EFAULT;
		return K32_OK;
	}
	put32(a, 0);
	put32(b, 0);
	c->results[0] = 0;
	return K32_OK;
}

static k32_status_t w_get_none(struct k32_hostcall *c)
{
	c->results[0] = 0;
	return K32_OK;
}

static k32_status_t w_fd_close(struct k32_hostcall *c)
{
	c->results[0] = WASI_EBADF;
	return K32_OK;
}

static k32_status_t w_fd_seek(struct k32_hostcall *c)
{
	c->results[0] = WASI_ESPIPE;
	return K32_OK;
}

static k32_status_t w_fd_fdstat_get(struct k32_hostcall *c)
{
	uint32_t fd = (uint32_t)c->args[0];
	uint8_t *p = k32_hostcall_mem(c, (uint32_t)c->args[1], 24);
	if (!p) {
		c->results[0] = WASI_EFAULT;
		return K32_OK;
	}
	if (fd > 2) {
		c->results[0] = WASI_EBADF;
		return K32_OK;
	}
	memset(p, 0, 24);
	p[0] = 2;      /* character device */
	p[8] = 1 << 6; /* rights: fd_write */
	c->results[0] = 0;
	return K32_OK;
}

#define W "wasi_snapshot_preview1"
static const struct k32_hostfn_def klet_hostfns[] = {
    {"kube32", "k32_log", "iii:", h_log, NULL},
    {"kube32", "k32_time_us", ":I", h_time_us, NULL},
    {"kube32", "k32_time_ms", ":I", h_time_ms, NULL},
    {"kube32", "k32_sleep_ms", "i:i", h_sleep_ms, NULL},
    {"kube32", "k32_http_path", "ii:i", h_http_path, NULL},
    {"kube32", "k32_http_body", "iii:i", h_http_body, NULL},
    {"kube32", "k32_http_write", "ii:i", h_http_write, NULL},
    {"kube32", "k32_http_header", "iiii:i", h_http_header, NULL},
    {"kube32", "k32_event_port", ":i", h_event_port, NULL},
    {"kube32", "k32_event_packet", "ii:i", h_event_packet, NULL},
    {W, "fd_write", "iiii:i", w_fd_write, NULL},
    {W, "proc_exit", "i:", w_proc_exit, NULL},
    {W, "clock_time_get", "iIi:i", w_clock_time_get, NULL},
    {W, "random_get", "ii:i", w_random_get, NULL},
    {W, "args_sizes_get", "ii:i", w_sizes_get, NULL},
    {W, "args_get", "ii:i", w_get_none, NULL},
    {W, "environ_sizes_get", "ii:i", w_sizes_get, NULL},
    {W, "environ_get", "ii:i", w_get_none, NULL},
    {W, "fd_close", "i:i", w_fd_close, NULL},
    {W, "fd_seek", "iIii:i", w_fd_seek, NULL},
    {W, "fd_fdstat_get", "ii:i", w_fd_fdstat_get, NULL},
};
#undef W

static struct kobj_owner *owner_of(void *user)
{
	return &((struct kw_pod *)user)->owner;
}

static const struct kobj_pod_env kw_env = {.owner_of = owner_of};
static struct k32_hostfn_def kw_kobj[KOBJ_POD_HOSTFN_COUNT];
static bool kw_ready;

/*
 * The kobj calls that can block, wrapped: kobj knows nothing of the kubelet, so its waits
 * cannot be woken by a stop request or the call's deadline. The wrapper passes the pod's own
 * deadline through, but cut to the call's deadline and, for waits that may be repeated
 * (nothing happens twice), into pieces of K32_KLET_WAIT_CHECK_MS between which it looks
 * at the stop word. kx_channel_call (which writes before it waits) is only cut to the call's
 * deadline: repeating it would send its message twice.
 */
struct kw_wait_fn {
	const char *name;   /* the kobj host function */
	uint32_t nargs;	    /* its arguments (as its signature in kobj_pod.c) */
	uint32_t arg;	    /* index of its deadline argument (kobj_time_t, monotonic ns) */
	bool repeat;	    /* the wait may be cut into pieces */
	k32_hostcall_fn fn; /* kobj's function */
	void *ctx;	    /* and its ctx */
};
static struct kw_wait_fn kw_waits[] = {
    {"kx_object_wait_one", 4, 2, true, NULL, NULL},
    {"kx_object_wait_many", 3, 2, true, NULL, NULL},
    {"kx_port_wait", 3, 1, true, NULL, NULL},
    {"kx_channel_call", 6, 2, false, NULL, NULL},
};
#define KW_WAIT_MAX_ARGS 6

/* Bytes of "where the module came from" in messages: "ConfigMap NS/FILE", names clipped. */
#define KW_SRC_LEN (16 + 2 * K32_CLIP_BUF)

static k32_status_t kw_wait(struct k32_hostcall *c)
{
	const struct kw_wait_fn *wf = c->ctx;
	struct kw_pod *w = kw_of(c);
	int64_t want = (int64_t)c->args[wf->arg]; /* the pod's deadline: 0 polls */
	int64_t cut = w->deadline_us > (uint64_t)(INT64_MAX / 1000)
			  ? INT64_MAX
			  : (int64_t)w->deadline_us * 1000;
	/* kobj's call sees a copy of the arguments with the deadline replaced */
	uint64_t args[KW_WAIT_MAX_ARGS];
	memcpy(args, c->args, wf->nargs * sizeof(args[0]));
	struct k32_hostcall sub = *c;
	sub.args = args;
	sub.ctx = wf->ctx;
	for (;;) {
		int64_t d = want < cut ? want : cut;
		int64_t piece = kobj_deadline_after((int64_t)K32_KLET_WAIT_CHECK_MS * 1000000);
		if (wf->repeat && piece < d)
			d = piece;
		args[wf->arg] = (uint64_t)d;
		k32_status_t st = wf->fn(&sub);
		if (st || d == want || (int32_t)(uint32_t)c->results[0] != K32_ERR_TIMED_OUT)
			return st; /* done, failed, or the pod's own deadline came */
		/* one of our cuts: a stop request or the call's deadline ends the call */
		st = kw_watch_check(w, atomic_load(klet_pod_stop_word(w->pod)), c->err);
		if (st)
			return st;
		if (!wf->repeat)
			return K32_OK; /* not reached: a non-repeated wait is cut at the deadline */
	}
}

/* The hardware host functions see the pod's hw slot; a pod bound to no Device sees a
 * hw_pod without grants (every bus call answers K32_EPERM, publishing goes nowhere). */
static struct hw_pod *hw_pod_of(void *user)
{
	struct kw_pod *w = user;
	return w && w->hw ? &w->hw->pod : w ? w->hw_none : NULL;
}

static const struct hw_pod_env kw_hw_env = {.pod_of = hw_pod_of};
static struct k32_hostfn_def kw_hw[HW_HOSTFN_COUNT];

/* Sends what the Device's status publisher owes: the merge patch of devices/<name>/status
 * when one is due, and the Warning Event of a new failure. Worker thread; errors are
 * logged (the next due patch carries the state again). */
static void kw_hw_flush(struct kw_pod *w)
{
	struct klet *k = w->k;
	struct hw_node_pod *slot = w->hw;
	if (!slot || !slot->bound)
		return;
	struct k32_buf b, out;
	k32_buf_init(&b, k->alloc, K32_KLET_HW_MSG_BYTES, "device status");
	k32_buf_init(&out, k->alloc, K32_KLET_HW_MSG_BYTES, "device status answer");
	struct k32_err e;
	char target[K32_HTTP_PATH_LEN];
	int code = 0;
	if (hw_node_pod_event(slot, "kubelet", &b, &e)) {
		klet_msgf(target, sizeof(target), "/api/v1/namespaces/%s/events", slot->dev.ns);
		if (kclient_call(k->kc, "POST", target, NULL, k32_buf_cstr(&b), &code, &out, &e) ||
		    code / 100 != 2)
			K32_LOGW(KLET_MOD, "device %s/%s: posting its event failed (%d): %s",
				 K32_CLIP(slot->dev.ns), K32_CLIP(slot->dev.name), code,
				 code ? "" : e.msg);
	}
	k32_buf_reset(&b);
	if (hw_node_pod_due(slot)) {
		if (hw_node_pod_patch(slot, &b, &e)) {
			K32_LOGW(KLET_MOD, "device %s/%s: status patch: %s", K32_CLIP(slot->dev.ns),
				 K32_CLIP(slot->dev.name), e.msg);
		} else {
			klet_msgf(target, sizeof(target),
				  "/apis/kube32.io/v1alpha1/namespaces/%s/devices/%s/status",
				  slot->dev.ns, slot->dev.name);
			if (kclient_call(k->kc, "PATCH", target, "application/merge-patch+json",
					 k32_buf_cstr(&b), &code, &out, &e) ||
			    code != 200)
				K32_LOGW(
				    KLET_MOD,
				    "device %s/%s: PATCH of its status answered %d%s%s (retried "
				    "with the next update)",
				    K32_CLIP(slot->dev.ns), K32_CLIP(slot->dev.name), code,
				    code ? "" : ": ", code ? "" : e.msg);
		}
	}
	k32_buf_fini(&b);
	k32_buf_fini(&out);
}

/* GETs the pod's Device and binds the pod's hw slot to it. */
static k32_status_t kw_hw_bind(struct kw_pod *w, const struct klet_run_spec *s, struct k32_err *err)
{
	struct klet *k = w->k;
	if (!k->cfg.hw_node)
		return k32_err_set(err, K32_ERR_NOT_SUPPORTED, KLET_MOD,
				   "the pod drives Device %s (annotation kube32.io/device) but "
				   "node %s has no I2C buses; schedule it on a board with hardware",
				   K32_CLIP(s->device), K32_CLIP(s->node));
	w->hw = k32_calloc(w->a, sizeof(*w->hw));
	if (!w->hw)
		return k32_err_set(
		    err, K32_ERR_NO_MEMORY, KLET_MOD,
		    "the pod's Device binding (%zu bytes) does not fit node %s's pod "
		    "pool; stop a pod",
		    sizeof(*w->hw), K32_CLIP(s->node));
	struct k32_buf b;
	k32_buf_init(&b, k->alloc, K32_KLET_HW_DEVICE_BYTES, "device");
	char target[K32_HTTP_PATH_LEN];
	klet_msgf(target, sizeof(target), "/apis/kube32.io/v1alpha1/namespaces/%s/devices/%s",
		  s->ns, s->device);
	int code = 0;
	k32_status_t st = kclient_call(k->kc, "GET", target, NULL, NULL, &code, &b, err);
	if (!st && code != 200)
		st = k32_err_set(err, code == 404 ? K32_ERR_NOT_FOUND : K32_ERR_IO, KLET_MOD,
				 "GET Device %s/%s answered %d; create the Device first",
				 K32_CLIP(s->ns), K32_CLIP(s->device), code);
	cJSON *dev = NULL;
	if (!st)
		st = k32_json_parse((const char *)b.data, b.len, &dev, err);
	if (!st)
		st = hw_node_bind(k->cfg.hw_node, w->hw, dev, s->name, err);
	if (st == K32_ERR_NOT_FOUND)
		st = K32_ERR_IO; /* not an image problem: CreateContainerError, not ErrImagePull */
	cJSON_Delete(dev);
	k32_buf_fini(&b);
	return st;
}

/* ---- provider ---------------------------------------------------------------------------- */

static void kw_init(void *ctx, struct klet *k, klet_notify_fn notify, void *arg)
{
	(void)ctx;
	(void)k;
	(void)arg;
	atomic_store_explicit(&kw_notify, notify, memory_order_release);
	if (!kw_ready) {
		kobj_pod_hostfns(&kw_env, kw_kobj, KOBJ_POD_HOSTFN_COUNT);
		for (size_t i = 0; i < KOBJ_POD_HOSTFN_COUNT; i++) {
			for (size_t j = 0; j < sizeof(kw_waits) / sizeof(kw_waits[0]); j++) {
				if (strcmp(kw_kobj[i].name, kw_waits[j].name))
					continue;
				if (strcspn(kw_kobj[i].sig, ":") != kw_waits[j].nargs) {
					/* kobj changed the signature: fix kw_waits */
					K32_LOGE(KLET_MOD,
						 "%s: signature %s, kw_waits says %" PRIu32 " args",
						 kw_waits[j].name, kw_kobj[i].sig,
						 kw_waits[j].nargs);
					continue;
				}
				kw_waits[j].fn = kw_kobj[i].fn;
				kw_waits[j].ctx = kw_kobj[i].ctx;
				kw_kobj[i].fn = kw_wait;
				kw_kobj[i].ctx = &kw_waits[j];
			}
		}
		hw_hostfns(&kw_hw_env, kw_hw, HW_HOSTFN_COUNT);
		kw_ready = true;
	}
}

static void kw_exit(struct kw_pod *w, int32_t code, const char *reason, const char *msg)
{
	/* any thread (a k32_http trap is on the pod server's): the condition is recorded here
	 * and sent by the worker when it stops the container (kw_free) */
	if (w->hw && w->hw->bound && code) {
		hw_node_pod_failed(w->hw, "DriverCrash", msg && msg[0] ? msg : reason);
		w->hw_crashed = true;
	}
	struct klet_exit ex = {.code = code, .reason = reason, .message = msg};
	/* the pod's own kubelet is the notify arg (klet passes itself) */
	atomic_load_explicit(&kw_notify, memory_order_acquire)(w->k, w->pod, &ex);
}

/* Calls export f as `call` under the pod's wall-clock deadline (and its stop word). */
static k32_status_t kw_invoke(struct kw_pod *w, const char *call, uint32_t f, const uint64_t *args,
			      uint32_t nargs, uint64_t *r, uint32_t nr, struct k32_err *e)
{
	w->call = call;
	w->deadline_us = k32_now_us() + (uint64_t)w->deadline_ms * 1000;
	const struct hw_pod *hp = w->hw ? &w->hw->pod : w->hw_none;
	struct hw_pod_stats before = {0};
	if (hp)
		before = hp->stats;
	k32_status_t st = wrt_invoke(w->inst, f, args, nargs, r, nr, e);
	struct wrt_stats ws;
	wrt_instance_stats(w->inst, &ws);
	struct klet_call_counts d = {.gas_used = ws.gas_used};
	if (st == K32_ERR_TRAP) {
		d.traps = 1;
		/* the interpreter's one out-of-gas message (wrt_exec.c) */
		d.out_of_gas = strstr(e->msg, "out of gas") != NULL;
	} else if (st == K32_ERR_TIMED_OUT) {
		d.deadlines = 1;
	}
	if (hp) {
		d.i2c_ok = hp->stats.i2c_ok - before.i2c_ok;
		d.i2c_errors = hp->stats.i2c_errors - before.i2c_errors;
	}
	klet_pod_calls_add(w->k, w->pod, &d);
	return st;
}

/*
 * The trap "call stack exhausted" says which of the pod's two stack limits ran out (the
 * interpreter's message names frames and slots, not the pod's knobs): this adds the
 * annotation to raise, its value now and its ceiling. Recursion past the ceiling is a bug in
 * the module, which the advice says too.
 */
static const char *kw_stack_advice(const struct kw_pod *w, const char *msg, char *out, size_t cap)
{
	unsigned depth = 0, frames = 0;
	const char *d = strstr(msg, "depth ");
	bool out_of_frames =
	    d && sscanf(d, "depth %u of %u frames", &depth, &frames) == 2 && depth + 1 >= frames;
	char trap[K32_ERR_MSG_LEN];
	int n;
	/* the trap is clipped to leave room for the advice after it (under 90 and 110 bytes
	 * with the numbers); cap is KLET_MSG_LEN, K32_ERR_MSG_LEN + 64 */
	if (out_of_frames)
		n = snprintf(out, cap,
			     "%s; raise annotation " KMETA_ANN_CALL_DEPTH " (now %" PRIu32
			     " frames, at most %u) or recurse less",
			     k32_clip_to(trap, cap - 90, msg), w->frames,
			     (unsigned)K32_KLET_POD_FRAMES_MAX);
	else
		n = snprintf(out, cap,
			     "%s; raise annotation " KMETA_ANN_STACK_BYTES " (now %" PRIu32
			     ", at most %u) or use fewer locals and less recursion",
			     k32_clip_to(trap, cap - 110, msg), w->stack_bytes,
			     (unsigned)K32_POD_STACK_BYTES_MAX);
	return n > 0 && (size_t)n < cap ? out : msg;
}

/* A call that failed (not proc_exit) ends the container: past its deadline with reason
 * DeadlineExceeded, stopped by a request as killed (137), anything else as Error. */
static void kw_fail(struct kw_pod *w, k32_status_t st, const char *msg)
{
	if (st == K32_ERR_CANCELED) {
		/* the pod is going (deleted, node stopping): no driver crash to report */
		struct klet_exit ex = {.code = 137, .reason = "Error", .message = msg};
		kw_notify(w->k, w->pod, &ex);
		return;
	}
	char m[KLET_MSG_LEN];
	if (st == K32_ERR_TRAP && strstr(msg, "call stack exhausted"))
		msg = kw_stack_advice(w, msg, m, sizeof(m));
	kw_exit(w, 1, st == K32_ERR_TIMED_OUT ? "DeadlineExceeded" : "Error", msg);
}

static void kw_free(struct kw_pod *w)
{
	if (w->hw) {
		if (w->hw_crashed)
			kw_hw_flush(w); /* DriverCrash and its Event, before the restart */
		if (w->hw->bound)
			hw_node_unbind(w->hw);
		k32_free(w->a, w->hw, sizeof(*w->hw));
	}
	if (w->hw_none)
		k32_free(w->a, w->hw_none, sizeof(*w->hw_none));
	if (w->inst)
		wrt_instance_free(w->inst);
	if (w->mod)
		wrt_module_free(w->mod);
	if (w->owner_inited)
		kobj_owner_fini(&w->owner);
	if (w->bytes)
		k32_free(w->a, w->bytes, w->len + 1);
	k32_free(w->a, w, sizeof(*w));
}

static bool fn_returns_i32(struct wrt_instance *inst, uint32_t f)
{
	uint32_t np, nr;
	const uint8_t *types;
	return !wrt_func_type(inst, f, &np, &nr, &types) && nr == 1 && types[np] == WRT_I32;
}

static bool fn_sig(struct wrt_instance *inst, uint32_t f, uint32_t want_params)
{
	uint32_t np, nr;
	const uint8_t *types;
	if (wrt_func_type(inst, f, &np, &nr, &types) || np != want_params || nr > 1)
		return false;
	for (uint32_t i = 0; i < np + nr; i++)
		if (types[i] != WRT_I32)
			return false;
	return true;
}

/* k32_event(i32 type, i64 key, i32 observed) with an i32 result or none. */
static bool fn_event_sig(struct wrt_instance *inst, uint32_t f)
{
	uint32_t np, nr;
	const uint8_t *types;
	return !wrt_func_type(inst, f, &np, &nr, &types) && np == 3 && nr <= 1 &&
	       types[0] == WRT_I32 && types[1] == WRT_I64 && types[2] == WRT_I32 &&
	       (nr == 0 || types[3] == WRT_I32);
}

/* The message for a pod that does not fit the pool. */
static k32_status_t no_fit(struct klet *k, const struct klet_run_spec *s, const char *what,
			   size_t need, struct k32_err *err)
{
	size_t used, limit;
	klet_pool_usage(k, &used, &limit);
	size_t free_b = limit > used ? limit - used : 0;
	char m[K32_ERR_MSG_LEN + 64];
	int n = snprintf(m, sizeof(m),
			 "pod %s/%s does not fit node %s's pod pool: %s needs %zu bytes, the "
			 "pool has %zu of %zu bytes free; lower resources.limits.memory or stop a "
			 "pod",
			 K32_CLIP(s->ns), K32_CLIP(s->name), K32_CLIP(s->node), what, need, free_b,
			 limit);
	if (n >= 0 && (size_t)n < K32_ERR_MSG_LEN)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, KLET_MOD, "%s", m);
	/* too long for the error's buffer: the short form, whose advice still ends whole */
	return k32_err_set(err, K32_ERR_NO_RESOURCES, KLET_MOD,
			   "does not fit node %s's pod pool: needs %zu bytes, %zu of %zu free; "
			   "lower resources.limits.memory or stop a pod",
			   K32_CLIP(s->node), need, free_b, limit);
}

/* "SRC: WHY" (the loader's message, which ends with its advice), WHY clipped in its middle
 * when both do not fit. src is at most KW_SRC_LEN bytes. */
static k32_status_t kw_src_err(struct k32_err *err, k32_status_t st, const char *src,
			       const char *why)
{
	char w[K32_ERR_MSG_LEN];
	size_t room = K32_ERR_MSG_LEN - strlen(src) - 2;
	return k32_err_set(err, st, KLET_MOD, "%s: %s", src, k32_clip_to(w, room, why));
}

/*
 * Why instantiating the module (from src: a file or "ConfigMap NS/NAME") failed, in the pod
 * author's terms, with the fix whole: an import the node does not provide is a link error
 * (K32_ERR_NOT_SUPPORTED from KLET_LINK_MOD: reason LinkError, not ErrImagePull: the image
 * was found); a data
 * segment past the memory limit names the limit to raise and to what.
 */
static k32_status_t instance_fail(const struct klet_run_spec *s, const char *src, uint64_t mem,
				  k32_status_t st, struct k32_err *err)
{
	char why[K32_ERR_MSG_LEN];
	snprintf(why, sizeof(why), "%s", err->msg);
	char name[K32_CLIP_BUF];
	char *imp = strstr(why, "import ");
	unsigned long long from = 0, to = 0;
	const char *seg = strstr(why, "writes [");
	if ((st == K32_ERR_NOT_FOUND || st == K32_ERR_WRONG_TYPE) && imp) {
		/* the loader's "unknown import M.F: ..." or "incompatible import type for M.F" */
		char *mf = imp + 7;
		if (!strncmp(mf, "type for ", 9))
			mf += 9;
		mf[strcspn(mf, ": (")] = 0; /* "module.field" */
		if (st == K32_ERR_WRONG_TYPE)
			return k32_err_set(
			    err, K32_ERR_NOT_SUPPORTED, KLET_LINK_MOD,
			    "%s: import %s does not have the type of node %s's host "
			    "function (sdk/k32.h and k32_klet.h give the signatures)",
			    src, k32_clip(name, mf), K32_CLIP(s->node));
		return k32_err_set(err, K32_ERR_NOT_SUPPORTED, KLET_LINK_MOD,
				   "%s: import %s is not a host function of node %s (sdk/k32.h and "
				   "k32_klet.h list them)",
				   src, k32_clip(name, mf), K32_CLIP(s->node));
	}
	const char *needs = strstr(why, "module needs ");
	if (needs && sscanf(needs, "module needs %llu bytes", &to) == 1 && to > mem)
		seg = needs; /* its initial memory is over the limit */
	else if (!(st == K32_ERR_TRAP && seg &&
		   sscanf(seg, "writes [%llu, %llu)", &from, &to) == 2 && to > mem))
		seg = NULL;
	if (seg)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, KLET_MOD,
				   "%s needs %llu bytes of linear memory, the limit is %llu: raise "
				   "resources.limits.memory to at least %llu",
				   src, to, (unsigned long long)mem, to);
	return kw_src_err(err, st, src, why);
}

static k32_status_t kw_start(void *ctx, struct klet_pod *pod, const struct klet_run_spec *s,
			     struct k32_err *err)
{
	(void)ctx;
	struct klet *k = pod->k;
	const struct k32_allocator *a = klet_pod_allocator(pod);
	char path[K32_HTTP_PATH_LEN + 64];
	struct klet_image_ref *ref = &k->start_ref; /* under this kubelet's run lock */
	char src[KW_SRC_LEN];			    /* where the module came from, for messages */
	k32_status_t st = klet_image_ref_parse(s->image, ref, err);
	if (!st)
		st = klet_image_file_path(s->image_dir, ref, path, sizeof(path), err);
	if (st)
		return st;
	if (!strcmp(ref->tag, "latest"))
		ref->tag[0] = 0; /* ":latest" is the untagged module, as an image without a tag */
	const struct k32_platform_ops *pl = k32_plat();
	uint64_t mem = s->mem_limit ? s->mem_limit : K32_POD_MEM_DEFAULT;
	size_t used, limit;
	klet_pool_usage(k, &used, &limit);
	if (limit && mem + s->stack_bytes > limit - (used < limit ? used : limit))
		return no_fit(k, s, "its memory limit plus stack", (size_t)(mem + s->stack_bytes),
			      err);
	struct kw_pod *w = k32_calloc(a, sizeof(*w));
	if (!w)
		return no_fit(k, s, "the pod record", sizeof(*w), err);
	w->k = k;
	w->pod = pod;
	w->a = a;
	w->tick_ms = s->tick_ms ? s->tick_ms : K32_KLET_TICK_DEFAULT_MS;
	w->deadline_ms = s->deadline_ms ? s->deadline_ms : K32_KLET_CALL_DEADLINE_MS;
	w->watch.stop = klet_pod_stop_word(pod);
	w->watch.check = kw_watch_check;
	w->watch.ctx = w;
	/* a tag names a version of the module store; the image directory holds one file per
	 * module (the untagged one, or the one a digest names) */
	bool from_file = !ref->tag[0] && pl->file_exists(path);
	if (from_file) {
		st = pl->file_read_all(path, a, K32_KLET_IMAGE_MAX_BYTES, &w->bytes, &w->len, err);
		if (st) {
			w->bytes = NULL;
			if (st == K32_ERR_NO_MEMORY)
				st = no_fit(k, s, "the module file", K32_KLET_IMAGE_MAX_BYTES, err);
			goto out_free;
		}
		char hex[65];
		snprintf(src, sizeof(src), "image file %s", K32_CLIP(ref->file));
		if (ref->sha256[0])
			klet_image_sha256(w->bytes, w->len, hex);
		if (ref->sha256[0] && strcmp(hex, ref->sha256)) {
			/* not this file: the module store may hold those bytes */
			k32_free(a, w->bytes, w->len + 1);
			w->bytes = NULL;
			w->len = 0;
			from_file = false;
		}
	}
	if (!from_file) {
		/* not on the node's SD card: the cluster's module store */
		const char *file = strrchr(path, '/') + 1;
		struct k32_err why;
		const char *from_ns = s->ns;
		st = klet_module_fetch(pod, file, ref, a, &w->bytes, &w->len, &from_ns, &why);
		if (st == K32_ERR_NOT_FOUND &&
		    (ref->tag[0] || ref->sha256[0] || !strncmp(why.msg, "ConfigMap ", 10))) {
			/* the version is missing: the store's message says which and what there
			 * is (the image itself is in the pod's spec: a digest would crowd it out)
			 */
			w->bytes = NULL;
			*err = why;
			goto out_free;
		}
		if (st == K32_ERR_NOT_FOUND) {
			/* the file's name, not its long path nor the image (the status shows
			 * it): four clipped names and the sentence fit K32_ERR_MSG_LEN */
			w->bytes = NULL;
			k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
				    "module not found: no file %s in node %s's image directory, "
				    "no ConfigMap %s in %s or kube-system",
				    K32_CLIP(file), K32_CLIP(s->node), K32_CLIP(file),
				    K32_CLIP(s->ns));
			goto out_free;
		}
		if (st) {
			w->bytes = NULL;
			*err = why;
			goto out_free;
		}
		/* messages name where the module really came from */
		snprintf(src, sizeof(src), "ConfigMap %s/%s", K32_CLIP(from_ns), K32_CLIP(file));
	}
	/*
	 * The module lives in the pod's pool, what the pod is charged for; the loader's working
	 * memory (the validator's operand and block stacks, sized up to K32_WASM_MAX_OPERANDS and
	 * _BLOCK_DEPTH, the code while it grows) comes from the node's heap for the moment of the
	 * load. (Until issue 13's RAM work the module itself was loaded on the node heap and the
	 * same number of pool bytes reserved for it: its kept bytes took RAM twice.) The loader
	 * copies what it keeps of the file (copy_bytes), so the file's bytes go back to the pool
	 * right after the load.
	 */
	struct wrt_load_opts lo;
	wrt_load_opts_default(&lo);
	lo.copy_bytes = true;
	lo.scratch = k->alloc;
	st = wrt_module_load(a, w->bytes, w->len, &lo, &w->mod, err);
	if (st == K32_ERR_NO_MEMORY) {
		size_t need = w->len;
		k32_free(a, w->bytes, w->len + 1);
		w->bytes = NULL;
		w->len = 0;
		st = no_fit(k, s, "its compiled module", need, err);
		goto out_free;
	}
	if (st) {
		char why[K32_ERR_MSG_LEN];
		snprintf(why, sizeof(why), "%s", err->msg);
		kw_src_err(err, st, src, why);
		goto out_free;
	}
	k32_free(a, w->bytes, w->len + 1);
	w->bytes = NULL;
	w->len = 0;
	kobj_owner_init(&w->owner, k->kobj, klet_pod_ref(pod), K32_KLET_POD_HANDLES);
	w->owner_inited = true;
	/* The linker is needed only while instantiating (~650 B on a 64-bit host): from the
	 * node's heap for that moment, like the loader's scratch, not the pod's for its life. */
	struct wrt_linker *lk = k32_alloc(k->alloc, sizeof(*lk));
	if (!lk) {
		st = k32_err_set(
		    err, K32_ERR_NO_MEMORY, KLET_MOD,
		    "pod %s/%s: no %zu bytes of the node's heap for linking its module; "
		    "stop a pod",
		    K32_CLIP(s->ns), K32_CLIP(s->name), sizeof(*lk));
		goto out_free;
	}
	wrt_linker_init(lk);
	st = wrt_linker_add_host(lk, klet_hostfns, sizeof(klet_hostfns) / sizeof(klet_hostfns[0]),
				 err);
	if (!st)
		st = wrt_linker_add_host(lk, kw_kobj, KOBJ_POD_HOSTFN_COUNT, err);
	if (!st && k->cfg.extra_hostfns)
		st = wrt_linker_add_host(lk, k->cfg.extra_hostfns, k->cfg.extra_hostfn_count, err);
	if (!st && k->cfg.hw_node)
		st = wrt_linker_add_host(lk, kw_hw, HW_HOSTFN_COUNT, err);
	if (!st && s->device && s->device[0]) {
		st = kw_hw_bind(w, s, err);
	} else if (!st && k->cfg.hw_node) {
		w->hw_none = k32_calloc(a, sizeof(*w->hw_none));
		if (w->hw_none)
			hw_pod_init(w->hw_none, NULL, NULL, 0, w);
		else
			st = no_fit(k, s, "its (empty) hardware record", sizeof(*w->hw_none), err);
	}
	if (!st) {
		struct wrt_limits lim;
		wrt_limits_default(&lim);
		lim.mem_bytes = mem;
		lim.stack_bytes = s->stack_bytes ? s->stack_bytes : K32_KLET_POD_STACK_BYTES;
		lim.frames = s->frames ? s->frames : K32_KLET_POD_FRAMES;
		w->frames = lim.frames;
		w->stack_bytes = lim.stack_bytes;
		lim.gas = s->gas ? s->gas : K32_KLET_POD_GAS;
		lim.gas_enabled = !s->gas_off;
		lim.canonical_nan = true;
		lim.watch = &w->watch; /* interruptible and deadlined, gas or not */
		w->call = "the module's start function";
		w->deadline_us = k32_now_us() + (uint64_t)w->deadline_ms * 1000;
		st = wrt_instance_new(w->mod, lk, &lim, a, w, &w->inst, err);
		if (st == K32_ERR_NO_MEMORY)
			st = no_fit(k, s, "instantiating the module (linear memory, stacks)",
				    (size_t)(mem + lim.stack_bytes), err);
		else if (st)
			st = instance_fail(s, src, mem, st, err);
	}
	k32_free(k->alloc, lk, sizeof(*lk));
	if (st)
		goto out_free;
	w->has_init = !wrt_export_func(w->inst, "k32_init", &w->f_init, NULL) &&
		      fn_sig(w->inst, w->f_init, 0);
	w->has_tick = !wrt_export_func(w->inst, "k32_tick", &w->f_tick, NULL) &&
		      fn_sig(w->inst, w->f_tick, 0);
	w->has_http = !wrt_export_func(w->inst, "k32_http", &w->f_http, NULL) &&
		      fn_sig(w->inst, w->f_http, 3) && fn_returns_i32(w->inst, w->f_http);
	w->has_start = !wrt_export_func(w->inst, "_start", &w->f_start, NULL) &&
		       fn_sig(w->inst, w->f_start, 0);
	w->has_event = !wrt_export_func(w->inst, "k32_event", &w->f_event, NULL) &&
		       fn_event_sig(w->inst, w->f_event);
	w->init_result = w->has_init && fn_returns_i32(w->inst, w->f_init);
	w->tick_result = w->has_tick && fn_returns_i32(w->inst, w->f_tick);
	w->event_result = w->has_event && fn_returns_i32(w->inst, w->f_event);
	if (!w->has_init && !w->has_tick && !w->has_http && !w->has_start && !w->has_event) {
		st = k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				 "%s exports none of k32_init, k32_tick, k32_http, k32_event, "
				 "_start (with the signatures of sdk/k32_klet.h): nothing to run",
				 src);
		goto out_free;
	}
	if (w->has_event && kobj_port_create(&w->owner, 0, &w->port)) {
		st = k32_err_set(err, K32_ERR_NO_RESOURCES, KLET_MOD,
				 "the module exports k32_event but its event port could not be "
				 "made: %s",
				 k32_clip_to((char[K32_ERR_MSG_LEN - 64]){0}, K32_ERR_MSG_LEN - 64,
					     kobj_owner_last_error(&w->owner)));
		w->port = KOBJ_HANDLE_INVALID;
		goto out_free;
	}
	klet_pod_set_priv(pod, w);
	klet_pod_set_events(pod, w->has_event);
	w->next_tick_us = k32_now_us() + (uint64_t)w->tick_ms * 1000;
	if (w->has_init) {
		uint64_t r = 0;
		struct k32_err e;
		k32_err_clear(&e);
		k32_status_t ist =
		    kw_invoke(w, "k32_init", w->f_init, NULL, 0, &r, w->init_result ? 1 : 0, &e);
		if (ist == K32_ERR_TRAP && w->exited) {
			kw_exit(w, w->exit_code, w->exit_code ? "Error" : "Completed", "");
		} else if (ist) {
			kw_fail(w, ist, e.msg);
		} else if ((int32_t)(uint32_t)r < 0) {
			char m[64];
			snprintf(m, sizeof(m), "k32_init returned %" PRId32, (int32_t)(uint32_t)r);
			kw_exit(w, 1, "Error", m);
		}
	}
	return K32_OK;
out_free:
	kw_free(w);
	return st;
}

static void kw_stop(void *ctx, struct klet_pod *pod)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	if (w)
		kw_free(w);
	klet_pod_set_priv(pod, NULL);
	klet_pod_set_events(pod, false);
}

/*
 * Calls k32_event for one packet (type: the packet's, or K32_EVENT_NODE). Returns false when
 * the container ended (the exit is notified); out of budget drops the packet and returns true.
 */
static bool kw_event_call(struct kw_pod *w, const struct kobj_packet *pkt, uint32_t type)
{
	uint64_t args[3] = {type, pkt->key,
			    type == KOBJ_PKT_TYPE_SIGNAL_ONE ? pkt->signal.observed : 0};
	uint64_t r = 0;
	struct k32_err e;
	k32_err_clear(&e);
	w->pkt = pkt;
	k32_status_t st =
	    kw_invoke(w, "k32_event", w->f_event, args, 3, &r, w->event_result ? 1 : 0, &e);
	w->pkt = NULL;
	if (st == K32_ERR_TRAP && w->exited) {
		kw_exit(w, w->exit_code, w->exit_code ? "Error" : "Completed", "");
		return false;
	}
	if (st == K32_ERR_TRAP && strstr(e.msg, "out of gas")) {
		char line[K32_KLET_LOG_LINE_MAX];
		int n = snprintf(line, sizeof(line),
				 "k32_event (type %" PRIu32
				 ", key %llu) ran out of its execution budget; the "
				 "event is dropped: %s",
				 type, (unsigned long long)pkt->key, e.msg);
		klet_pod_log(w->pod, line, n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1);
		klet_pod_events_count(w->pod, 0, 1);
		return true;
	}
	if (st) {
		kw_fail(w, st, e.msg);
		return false;
	}
	klet_pod_events_count(w->pod, 1, 0);
	if (w->event_result && (int32_t)(uint32_t)r < 0) {
		char m[96];
		snprintf(m, sizeof(m), "k32_event (type %" PRIu32 ", key %llu) returned %" PRId32,
			 type, (unsigned long long)pkt->key, (int32_t)(uint32_t)r);
		kw_exit(w, 1, "Error", m);
		return false;
	}
	return true;
}

/* The next poll of the event ports: on a grid shared by every pod (and kubelet), so one
 * worker wake-up per K32_KLET_EVENT_POLL_MS serves all the pods with events. */
static uint64_t kw_next_poll(uint64_t now)
{
	const uint64_t period = K32_KLET_EVENT_POLL_MS * 1000ull;
	return (now / period + 1) * period;
}

/*
 * Delivers up to K32_KLET_EVENTS_PER_RUN packets of the event port. *out_next: when to look
 * again (at once when the budget was spent with packets possibly left, else after the poll
 * period). Returns false when the container ended; *out_ran says whether k32_event ran.
 */
static bool kw_events(struct kw_pod *w, uint64_t *out_next, bool *out_ran)
{
	uint32_t n = 0;
	for (; n < K32_KLET_EVENTS_PER_RUN; n++) {
		struct kobj_packet pkt;
		k32_status_t st = kobj_port_wait(&w->owner, w->port, 0, &pkt);
		if (st == K32_ERR_TIMED_OUT)
			break;
		if (st) {
			/* the pod closed its port (or replaced the handle): no more events */
			char line[K32_KLET_LOG_LINE_MAX];
			int len = snprintf(line, sizeof(line),
					   "event port %u is gone (%s): k32_event is not called "
					   "again until the container restarts",
					   (unsigned)w->port, k32_status_name(st));
			klet_pod_log(w->pod, line,
				     len < (int)sizeof(line) ? (size_t)len : sizeof(line) - 1);
			w->port = KOBJ_HANDLE_INVALID;
			klet_pod_set_events(w->pod, false);
			return true;
		}
		*out_ran = true;
		if (!kw_event_call(w, &pkt, pkt.type))
			return false;
	}
	uint64_t now = k32_now_us();
	*out_next = n == K32_KLET_EVENTS_PER_RUN ? now : kw_next_poll(now);
	return true;
}

/* The deleted pod's last event: K32_EVENT_NODE, K32_EVENT_KEY_STOP. */
static void kw_stopping(void *ctx, struct klet_pod *pod)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	if (!w || !w->has_event || w->exited)
		return;
	struct kobj_packet pkt;
	memset(&pkt, 0, sizeof(pkt));
	pkt.key = 1;	  /* K32_EVENT_KEY_STOP */
	pkt.type = 0x100; /* K32_EVENT_NODE */
	kw_event_call(w, &pkt, pkt.type);
}

/* One k32_tick; false when the container ended. */
static bool kw_tick(struct kw_pod *w)
{
	struct k32_err e;
	k32_err_clear(&e);
	uint64_t r = 0;
	k32_status_t st =
	    kw_invoke(w, "k32_tick", w->f_tick, NULL, 0, &r, w->tick_result ? 1 : 0, &e);
	if (st == K32_ERR_TRAP && w->exited) {
		kw_exit(w, w->exit_code, w->exit_code ? "Error" : "Completed", "");
		return false;
	}
	if (st) {
		kw_fail(w, st, e.msg);
		return false;
	}
	int32_t ms = w->tick_result ? (int32_t)(uint32_t)r : 0;
	if (ms < 0) {
		char m[64];
		snprintf(m, sizeof(m), "k32_tick returned %" PRId32, ms);
		kw_exit(w, 1, "Error", m);
		return false;
	}
	w->next_tick_us = k32_now_us() + (uint64_t)(ms ? (uint32_t)ms : w->tick_ms) * 1000;
	kw_hw_flush(w);
	return true;
}

static void kw_run(void *ctx, struct klet_pod *pod, uint64_t now, uint64_t *out_next)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	*out_next = UINT64_MAX;
	if (!w)
		return;
	struct k32_err e;
	k32_err_clear(&e);
	if (w->has_start && !w->has_init && !w->has_tick) {
		if (w->start_done)
			return;
		w->start_done = true;
		k32_status_t st = kw_invoke(w, "_start", w->f_start, NULL, 0, NULL, 0, &e);
		if (st == K32_ERR_TRAP && w->exited)
			kw_exit(w, w->exit_code, w->exit_code ? "Error" : "Completed", "");
		else if (st)
			kw_fail(w, st, e.msg);
		else
			kw_exit(w, 0, "Completed", "");
		return;
	}
	uint64_t next = UINT64_MAX;
	bool ran = false;
	if (w->has_event && w->port && !kw_events(w, &next, &ran))
		return;
	if (w->has_tick && now >= w->next_tick_us) {
		ran = true;
		if (!kw_tick(w))
			return;
	}
	if (w->has_tick && w->next_tick_us < next)
		next = w->next_tick_us;
	*out_next = next;
	if (ran)
		klet_events_kick(w->k, w->pod); /* what it did may be other pods' events */
}

static k32_status_t kw_http(void *ctx, struct klet_pod *pod, const struct klet_http_req *req,
			    struct klet_http_resp *resp)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	if (!w || !w->has_http)
		return K32_ERR_NOT_SUPPORTED;
	uint32_t m = 0;
	while (m < sizeof(http_methods) / sizeof(http_methods[0]) &&
	       strcmp(req->method, http_methods[m]))
		m++;
	uint64_t args[3] = {m, req->target.len, req->body_len}, r = 0;
	struct k32_err e;
	k32_err_clear(&e);
	w->req = req;
	w->resp = resp;
	k32_status_t st = kw_invoke(w, "k32_http", w->f_http, args, 3, &r, 1, &e);
	w->req = NULL;
	w->resp = NULL;
	if (st == K32_ERR_TRAP && w->exited) {
		kw_exit(w, w->exit_code, w->exit_code ? "Error" : "Completed", "");
		return K32_ERR_TRAP;
	}
	if (st) {
		k32_buf_reset(&resp->body);
		k32_buf_append_str(&resp->body, e.msg, NULL);
		if (st == K32_ERR_TRAP && strstr(e.msg, "out of gas"))
			return K32_ERR_TIMED_OUT; /* the request's budget: the pod keeps running */
		kw_fail(w, st, e.msg);
		return K32_ERR_TRAP;
	}
	int32_t code = (int32_t)(uint32_t)r;
	resp->status = code >= 100 && code <= 599 ? code : 500;
	return K32_OK;
}

/* Whether kw_run would call into the pod now: a tick due or a packet on the event port. */
static bool kw_pending(void *ctx, struct klet_pod *pod, uint64_t now, uint64_t *out_next)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	if (!w || (w->has_start && !w->has_init && !w->has_tick))
		return true;
	if (w->has_tick && now >= w->next_tick_us)
		return true;
	uint64_t next = UINT64_MAX;
	if (w->has_event && w->port) {
		struct kobj_info info;
		/* an error (the pod closed its port) is kw_events' to report */
		if (kobj_object_get_info(&w->owner, w->port, &info) || info.queued)
			return true;
		next = kw_next_poll(now);
	}
	if (w->has_tick && w->next_tick_us < next)
		next = w->next_tick_us;
	*out_next = next;
	return false;
}

static void kw_stats(void *ctx, struct klet_pod *pod, struct klet_pod_mem *out)
{
	(void)ctx;
	struct kw_pod *w = klet_pod_priv(pod);
	memset(out, 0, sizeof(*out));
	if (!w || !w->inst)
		return;
	struct wrt_stats ws;
	wrt_instance_stats(w->inst, &ws);
	out->code_bytes = ws.module_bytes + w->len;
	out->memory_bytes = ws.memory_bytes;
	out->stack_bytes = ws.stack_bytes;
	out->runtime_bytes = ws.runtime_bytes + ws.table_bytes + sizeof(*w);
}

const struct klet_provider_ops klet_wasm_provider = {
    .init = kw_init,
    .start = kw_start,
    .stop = kw_stop,
    .run = kw_run,
    .http = kw_http,
    .stats = kw_stats,
    .stopping = kw_stopping,
    .pending = kw_pending,
};
