/*
 * kobj_pod.c - the kx_* host functions (import module "kube32") for Wasm pods.
 *
 * Each function: find the pod's handle table, check every pointer and length against the
 * pod's linear memory (k32_hostcall_mem, overflow-safe), check out-pointers BEFORE acting so
 * a created handle is never lost, call the kobj_* function with pointers into linear memory
 * (so bytes move once, between linear memory and the object), write out-values
 * little-endian, and return the status as the i32 result. A host function itself only fails
 * (traps the pod) when the embedder gave it no handle table.
 *
 * Context: the calling pod's task. A blocking kx_* call blocks that task inside the host
 * call; kobj_owner_fini on the pod's table from another task wakes it with CANCELED.
 */
#include "kobj/kobj_int.h"

#define ARG(i)	(call->args[i])
#define ARGU(i) ((uint32_t)call->args[i])
#define ARGI(i) ((int64_t)call->args[i])

static struct kobj_owner *owner_of(struct k32_hostcall *call)
{
	const struct kobj_pod_env *env = call->ctx;
	if (env && env->owner_of)
		return env->owner_of(call->instance_user);
	return call->instance_user;
}

static k32_status_t ret(struct k32_hostcall *call, k32_status_t st)
{
	call->results[0] = (uint64_t)(uint32_t)st;
	return K32_OK;
}

static k32_status_t no_owner(struct k32_hostcall *call)
{
	return k32_err_set(call->err, K32_ERR_BAD_STATE, "kobj",
			   "kx_* call from an instance with no kobj handle table; the embedder "
			   "must set instance_user (or a kobj_pod_env hook)");
}

/* Pod address of n bytes, or NULL. A NULL pointer is fine only when n == 0. */
static uint8_t *mem(struct k32_hostcall *call, uint64_t ptr, uint64_t n)
{
	return k32_hostcall_mem(call, ptr, n);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ---- the common shapes --------------------------------------------------------------------- */

/*
 * The three shapes most kx_* functions share, so each of those is one line below: a call that
 * only returns a status; a create of one handle whose out-pointer is argument `out`; a create
 * of a pair whose two out-pointers are arguments `out` and `out + 1`. Out-pointers are checked
 * before the object is made, so a created handle is never lost. The `_do` adapters take the
 * raw argument slots (A32 / A64 read them) and inline into the shape, so the generated code is
 * what the hand-written functions were.
 */
#define A32(i) ((uint32_t)a[i])
#define A64(i) ((int64_t)a[i])

typedef k32_status_t (*kx_status_fn)(struct kobj_owner *o, const uint64_t *a);
typedef k32_status_t (*kx_make1_fn)(struct kobj_owner *o, const uint64_t *a, kobj_handle_t *h);
typedef k32_status_t (*kx_make2_fn)(struct kobj_owner *o, const uint64_t *a, kobj_handle_t *h0,
				    kobj_handle_t *h1);

static inline k32_status_t shape_status(struct k32_hostcall *call, kx_status_fn fn)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	return ret(call, fn(o, call->args));
}

static inline k32_status_t shape_make1(struct k32_hostcall *call, unsigned out, kx_make1_fn fn)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	kobj_handle_t h;
	uint8_t *p = mem(call, ARG(out), 4);
	if (!p)
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = fn(o, call->args, &h);
	if (st == K32_OK)
		put32(p, h);
	return ret(call, st);
}

static inline k32_status_t shape_make2(struct k32_hostcall *call, unsigned out, kx_make2_fn fn)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	kobj_handle_t h0, h1;
	uint8_t *p0 = mem(call, ARG(out), 4), *p1 = mem(call, ARG(out + 1), 4);
	if (!p0 || !p1)
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = fn(o, call->args, &h0, &h1);
	if (st == K32_OK) {
		put32(p0, h0);
		put32(p1, h1);
	}
	return ret(call, st);
}

/* clang-format off */
#define KX_STATUS(name, expr)                                                                     \
	static k32_status_t name##_do(struct kobj_owner *o, const uint64_t *a) { return expr; }  \
	static k32_status_t name(struct k32_hostcall *call) { return shape_status(call, name##_do); }
#define KX_MAKE1(name, out, expr)                                                                 \
	static k32_status_t name##_do(struct kobj_owner *o, const uint64_t *a, kobj_handle_t *h)  \
	{ return expr; }                                                                          \
	static k32_status_t name(struct k32_hostcall *call) { return shape_make1(call, out, name##_do); }
#define KX_MAKE2(name, out, expr)                                                                 \
	static k32_status_t name##_do(struct kobj_owner *o, const uint64_t *a, kobj_handle_t *h0, \
				      kobj_handle_t *h1) { return expr; }                         \
	static k32_status_t name(struct k32_hostcall *call) { return shape_make2(call, out, name##_do); }

KX_STATUS(kx_handle_close, kobj_handle_close(o, A32(0)))
KX_STATUS(kx_object_signal, kobj_object_signal(o, A32(0), A32(1), A32(2)))
KX_STATUS(kx_object_signal_peer, kobj_object_signal_peer(o, A32(0), A32(1), A32(2)))
KX_STATUS(kx_object_wait_async, kobj_object_wait_async(o, A32(0), A32(1), a[2], A32(3), A32(4)))
KX_STATUS(kx_socket_shutdown, kobj_socket_shutdown(o, A32(0), A32(1)))
KX_STATUS(kx_port_cancel, kobj_port_cancel(o, A32(0), A32(1), a[2]))
KX_STATUS(kx_timer_set, kobj_timer_set(o, A32(0), A64(1), A64(2), A64(3)))
KX_STATUS(kx_timer_cancel, kobj_timer_cancel(o, A32(0)))
KX_MAKE1(kx_handle_duplicate, 2, kobj_handle_duplicate(o, A32(0), A32(1), h))
KX_MAKE1(kx_handle_replace, 2, kobj_handle_replace(o, A32(0), A32(1), h))
KX_MAKE1(kx_event_create, 1, kobj_event_create(o, A32(0), h))
KX_MAKE1(kx_port_create, 1, kobj_port_create(o, A32(0), h))
KX_MAKE1(kx_timer_create, 2, kobj_timer_create(o, A32(0), A32(1), h))
KX_MAKE1(kx_vmo_create, 2, kobj_vmo_create(o, a[0], A32(1), h))
KX_MAKE2(kx_channel_create, 1, kobj_channel_create(o, A32(0), h0, h1))
KX_MAKE2(kx_eventpair_create, 1, kobj_eventpair_create(o, A32(0), h0, h1))
KX_MAKE2(kx_socket_create, 2, kobj_socket_create(o, A32(0), A32(1), h0, h1))
KX_MAKE2(kx_fifo_create, 3, kobj_fifo_create(o, A32(0), A32(1), A32(2), h0, h1))
/* clang-format on */

/* ---- misc -------------------------------------------------------------------------------- */

static k32_status_t kx_null(struct k32_hostcall *call)
{
	(void)call;
	return K32_OK;
}

static k32_status_t kx_null8(struct k32_hostcall *call)
{
	uint32_t sum = 0;
	for (int i = 0; i < 8; i++)
		sum += ARGU(i);
	call->results[0] = sum;
	return K32_OK;
}

static k32_status_t kx_clock_get_monotonic(struct k32_hostcall *call)
{
	call->results[0] = (uint64_t)kobj_now_ns();
	return K32_OK;
}

/* ---- handles ----------------------------------------------------------------------------- */

static k32_status_t kx_object_wait_one(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint32_t observed = 0;
	uint8_t *out = NULL;
	if (ARG(3) != 0) {
		out = mem(call, ARG(3), 4);
		if (!out)
			return ret(call, K32_ERR_INVALID_ARGS);
	}
	k32_status_t st = kobj_object_wait_one(o, ARGU(0), ARGU(1), ARGI(2), &observed);
	if (out)
		put32(out, observed);
	return ret(call, st);
}

/* items: count x {u32 handle, u32 waitfor, u32 pending}. */
static k32_status_t kx_object_wait_many(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	struct kobj_wait_item items[K32_KOBJ_WAIT_MANY_MAX];
	uint32_t n = ARGU(1);
	if (n > K32_KOBJ_WAIT_MANY_MAX)
		return ret(call, kobj_object_wait_many(o, NULL, n, 0)); /* OUT_OF_RANGE + detail */
	uint8_t *p = mem(call, ARG(0), (uint64_t)n * 12u);
	if (!p)
		return ret(call, K32_ERR_INVALID_ARGS);
	for (uint32_t i = 0; i < n; i++) {
		items[i].handle = get32(p + i * 12);
		items[i].waitfor = get32(p + i * 12 + 4);
		items[i].pending = 0;
	}
	k32_status_t st = kobj_object_wait_many(o, items, n, ARGI(2));
	for (uint32_t i = 0; i < n; i++)
		put32(p + i * 12 + 8, items[i].pending);
	return ret(call, st);
}

/* out: 32 bytes {type, rights, signals, handles, queued, capacity, u64 timer_fired}. */
static k32_status_t kx_object_get_info(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	struct kobj_info info;
	uint8_t *out = mem(call, ARG(1), 32);
	if (!out)
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = kobj_object_get_info(o, ARGU(0), &info);
	if (st == K32_OK) {
		put32(out, info.type);
		put32(out + 4, info.rights);
		put32(out + 8, info.signals);
		put32(out + 12, info.handles);
		put32(out + 16, info.queued);
		put32(out + 20, info.capacity);
		put64(out + 24, info.timer_fired);
	}
	return ret(call, st);
}

/* (h, prop, value, size): the value moves straight between pod memory and the object. */
static k32_status_t kx_object_get_property(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint8_t *v = mem(call, ARG(2), ARGU(3));
	if (!v || !ARGU(3))
		return ret(call, K32_ERR_INVALID_ARGS);
	return ret(call, kobj_object_get_property(o, ARGU(0), ARGU(1), v, ARGU(3)));
}

static k32_status_t kx_object_set_property(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	const uint8_t *v = mem(call, ARG(2), ARGU(3));
	if (!v)
		return ret(call, K32_ERR_INVALID_ARGS);
	return ret(call,
		   kobj_object_set_property(o, ARGU(0), ARGU(1), ARGU(3) ? v : NULL, ARGU(3)));
}

/* ---- channel ----------------------------------------------------------------------------- */

static k32_status_t kx_channel_write(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	kobj_handle_t hs[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES];
	uint32_t len = ARGU(3), nh = ARGU(5);
	const uint8_t *bytes = mem(call, ARG(2), len);
	if (!bytes)
		return ret(call, K32_ERR_INVALID_ARGS);
	if (nh > K32_KOBJ_CHANNEL_MAX_MSG_HANDLES)
		return ret(call, kobj_fail(o, K32_ERR_OUT_OF_RANGE,
					   "%s: message with %" PRIu32 " handles, limit "
					   "K32_KOBJ_CHANNEL_MAX_MSG_HANDLES=%u",
					   o->name, nh, K32_KOBJ_CHANNEL_MAX_MSG_HANDLES));
	if (nh) {
		const uint8_t *hp = mem(call, ARG(4), (uint64_t)nh * 4u);
		if (!hp)
			return ret(call, K32_ERR_INVALID_ARGS);
		memcpy(hs, hp, (size_t)nh * 4u);
	}
	return ret(call, kobj_channel_write(o, ARGU(0), ARGU(1), bytes, len, nh ? hs : NULL, nh));
}

static k32_status_t kx_channel_read(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	kobj_handle_t hs[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES];
	uint32_t cap_b = ARGU(4), cap_h = ARGU(5), ab = 0, ah = 0;
	uint8_t *bytes = mem(call, ARG(2), cap_b);
	uint8_t *hp = mem(call, ARG(3), (uint64_t)cap_h * 4u);
	uint8_t *pab = ARG(6) ? mem(call, ARG(6), 4) : NULL;
	uint8_t *pah = ARG(7) ? mem(call, ARG(7), 4) : NULL;
	if (!bytes || !hp || (ARG(6) && !pab) || (ARG(7) && !pah))
		return ret(call, K32_ERR_INVALID_ARGS);
	if (cap_h > K32_KOBJ_CHANNEL_MAX_MSG_HANDLES)
		cap_h = K32_KOBJ_CHANNEL_MAX_MSG_HANDLES;
	k32_status_t st = kobj_channel_read(o, ARGU(0), ARGU(1), bytes, hs, cap_b, cap_h, &ab, &ah);
	if (st == K32_OK && ah)
		memcpy(hp, hs, (size_t)ah * 4u);
	if (pab)
		put32(pab, ab);
	if (pah)
		put32(pah, ah);
	return ret(call, st);
}

/* args: 32 bytes {wr_bytes, wr_handles, rd_bytes, rd_handles, wr_num_bytes, wr_num_handles,
 * rd_num_bytes, rd_num_handles}, all u32 pod addresses / counts. */
static k32_status_t kx_channel_call(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	kobj_handle_t wh[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES], rh[K32_KOBJ_CHANNEL_MAX_MSG_HANDLES];
	const uint8_t *a = mem(call, ARG(3), 32);
	uint8_t *pab = ARG(4) ? mem(call, ARG(4), 4) : NULL;
	uint8_t *pah = ARG(5) ? mem(call, ARG(5), 4) : NULL;
	if (!a || (ARG(4) && !pab) || (ARG(5) && !pah))
		return ret(call, K32_ERR_INVALID_ARGS);
	struct kobj_channel_call_args ca;
	uint32_t wb = get32(a), whp = get32(a + 4), rb = get32(a + 8), rhp = get32(a + 12);
	ca.wr_num_bytes = get32(a + 16);
	ca.wr_num_handles = get32(a + 20);
	ca.rd_num_bytes = get32(a + 24);
	ca.rd_num_handles = get32(a + 28);
	if (ca.wr_num_handles > K32_KOBJ_CHANNEL_MAX_MSG_HANDLES)
		return ret(call, K32_ERR_OUT_OF_RANGE);
	ca.wr_bytes = mem(call, wb, ca.wr_num_bytes);
	ca.rd_bytes = mem(call, rb, ca.rd_num_bytes);
	const uint8_t *whb = mem(call, whp, (uint64_t)ca.wr_num_handles * 4u);
	uint8_t *rhb = mem(call, rhp, (uint64_t)ca.rd_num_handles * 4u);
	if (!ca.wr_bytes || !ca.rd_bytes || !whb || !rhb)
		return ret(call, K32_ERR_INVALID_ARGS);
	memcpy(wh, whb, (size_t)ca.wr_num_handles * 4u);
	ca.wr_handles = wh;
	ca.rd_handles = rh;
	if (ca.rd_num_handles > K32_KOBJ_CHANNEL_MAX_MSG_HANDLES)
		ca.rd_num_handles = K32_KOBJ_CHANNEL_MAX_MSG_HANDLES;
	uint32_t ab = 0, ah = 0;
	k32_status_t st = kobj_channel_call(o, ARGU(0), ARGU(1), ARGI(2), &ca, &ab, &ah);
	if (st == K32_OK && ah)
		memcpy(rhb, rh, (size_t)ah * 4u);
	if (pab)
		put32(pab, ab);
	if (pah)
		put32(pah, ah);
	return ret(call, st);
}

/* ---- socket ------------------------------------------------------------------------------ */

/* (h, opts, buf, len, actual_ptr) for socket_write / socket_read. */
static k32_status_t socket_io(struct k32_hostcall *call, bool write)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint32_t len = ARGU(3), actual = 0;
	uint8_t *buf = mem(call, ARG(2), len);
	uint8_t *pa = ARG(4) ? mem(call, ARG(4), 4) : NULL;
	if (!buf || (ARG(4) && !pa))
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = write ? kobj_socket_write(o, ARGU(0), ARGU(1), buf, len, &actual)
				: kobj_socket_read(o, ARGU(0), ARGU(1), buf, len, &actual);
	if (pa)
		put32(pa, actual);
	return ret(call, st);
}

static k32_status_t kx_socket_write(struct k32_hostcall *call)
{
	return socket_io(call, true);
}

static k32_status_t kx_socket_read(struct k32_hostcall *call)
{
	return socket_io(call, false);
}

/* ---- event, event pair, port ------------------------------------------------------------- */

/* Packets are 48 bytes in pod memory, the layout of struct kobj_packet. */
_Static_assert(sizeof(struct kobj_packet) == 48, "port packet must be 48 bytes");

static k32_status_t kx_port_queue(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	struct kobj_packet pkt;
	const uint8_t *p = mem(call, ARG(1), sizeof(pkt));
	if (!p)
		return ret(call, K32_ERR_INVALID_ARGS);
	memcpy(&pkt, p, sizeof(pkt));
	return ret(call, kobj_port_queue(o, ARGU(0), &pkt));
}

static k32_status_t kx_port_wait(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	struct kobj_packet pkt;
	uint8_t *p = mem(call, ARG(2), sizeof(pkt));
	if (!p)
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = kobj_port_wait(o, ARGU(0), ARGI(1), &pkt);
	if (st == K32_OK)
		memcpy(p, &pkt, sizeof(pkt));
	return ret(call, st);
}

/* ---- fifo -------------------------------------------------------------------------------- */

/* (h, elem_size, data, count, actual_ptr) */
static k32_status_t fifo_io(struct k32_hostcall *call, bool write)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint32_t es = ARGU(1), count = ARGU(3), actual = 0;
	uint8_t *data = mem(call, ARG(2), (uint64_t)es * count);
	uint8_t *pa = ARG(4) ? mem(call, ARG(4), 4) : NULL;
	if (!data || (ARG(4) && !pa))
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = write ? kobj_fifo_write(o, ARGU(0), es, data, count, &actual)
				: kobj_fifo_read(o, ARGU(0), es, data, count, &actual);
	if (pa)
		put32(pa, actual);
	return ret(call, st);
}

static k32_status_t kx_fifo_write(struct k32_hostcall *call)
{
	return fifo_io(call, true);
}

static k32_status_t kx_fifo_read(struct k32_hostcall *call)
{
	return fifo_io(call, false);
}

/* ---- timer ------------------------------------------------------------------------------- */

/* ---- vmo --------------------------------------------------------------------------------- */

/* (h, buf, off:i64, len) */
static k32_status_t vmo_io(struct k32_hostcall *call, bool write)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint32_t len = ARGU(3);
	uint8_t *buf = mem(call, ARG(1), len);
	if (!buf)
		return ret(call, K32_ERR_INVALID_ARGS);
	return ret(call, write ? kobj_vmo_write(o, ARGU(0), buf, ARG(2), len)
			       : kobj_vmo_read(o, ARGU(0), buf, ARG(2), len));
}

static k32_status_t kx_vmo_read(struct k32_hostcall *call)
{
	return vmo_io(call, false);
}

static k32_status_t kx_vmo_write(struct k32_hostcall *call)
{
	return vmo_io(call, true);
}

static k32_status_t kx_vmo_get_size(struct k32_hostcall *call)
{
	struct kobj_owner *o = owner_of(call);
	if (!o)
		return no_owner(call);
	uint64_t size;
	uint8_t *out = mem(call, ARG(1), 8);
	if (!out)
		return ret(call, K32_ERR_INVALID_ARGS);
	k32_status_t st = kobj_vmo_get_size(o, ARGU(0), &size);
	if (st == K32_OK)
		put64(out, size);
	return ret(call, st);
}

/* ---- the table --------------------------------------------------------------------------- */

/* clang-format off */
#define KX(name, sig) {"kube32", #name, sig, name, NULL}
const struct k32_hostfn_def kobj_pod_hostfn_table[KOBJ_POD_HOSTFN_COUNT] = {
	KX(kx_null, ":"),
	KX(kx_null8, "iiiiiiii:i"),
	KX(kx_clock_get_monotonic, ":I"),
	KX(kx_handle_close, "i:i"),
	KX(kx_handle_duplicate, "iii:i"),
	KX(kx_handle_replace, "iii:i"),
	KX(kx_object_signal, "iii:i"),
	KX(kx_object_signal_peer, "iii:i"),
	KX(kx_object_wait_one, "iiIi:i"),
	KX(kx_object_wait_many, "iiI:i"),
	KX(kx_object_wait_async, "iiIii:i"),
	KX(kx_object_get_info, "ii:i"),
	KX(kx_object_get_property, "iiii:i"),
	KX(kx_object_set_property, "iiii:i"),
	KX(kx_channel_create, "iii:i"),
	KX(kx_channel_write, "iiiiii:i"),
	KX(kx_channel_read, "iiiiiiii:i"),
	KX(kx_channel_call, "iiIiii:i"),
	KX(kx_socket_create, "iiii:i"),
	KX(kx_socket_write, "iiiii:i"),
	KX(kx_socket_read, "iiiii:i"),
	KX(kx_socket_shutdown, "ii:i"),
	KX(kx_event_create, "ii:i"),
	KX(kx_eventpair_create, "iii:i"),
	KX(kx_port_create, "ii:i"),
	KX(kx_port_queue, "ii:i"),
	KX(kx_port_wait, "iIi:i"),
	KX(kx_port_cancel, "iiI:i"),
	KX(kx_fifo_create, "iiiii:i"),
	KX(kx_fifo_write, "iiiii:i"),
	KX(kx_fifo_read, "iiiii:i"),
	KX(kx_timer_create, "iii:i"),
	KX(kx_timer_set, "iIII:i"),
	KX(kx_timer_cancel, "i:i"),
	KX(kx_vmo_create, "Iii:i"),
	KX(kx_vmo_read, "iiIi:i"),
	KX(kx_vmo_write, "iiIi:i"),
	KX(kx_vmo_get_size, "ii:i"),
};
/* clang-format on */

size_t kobj_pod_hostfns(const struct kobj_pod_env *env, struct k32_hostfn_def *out, size_t cap)
{
	size_t n = 0;
	for (; n < KOBJ_POD_HOSTFN_COUNT && n < cap; n++) {
		out[n] = kobj_pod_hostfn_table[n];
		out[n].ctx = (void *)env;
	}
	return n;
}
