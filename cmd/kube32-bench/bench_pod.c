/*
 * bench_pod.c - the pod section of `kube32-bench micro`: the same operations issued from a
 * Wasm pod (src/kobj/testdata/kobj_pod.wat, run by the kube32 interpreter) through the kx_*
 * imports, each next to the native call, so the cost of the crossing (import dispatch,
 * linear-memory checks, pod handle table) shows per operation. The timed Wasm loops add a
 * few interpreted instructions per iteration (a local decrement and a branch), which is
 * counted in the pod figure.
 *
 * Built with the Wasm runtime when src/wasm is part of the build (KOBJ_BENCH_POD); without
 * it the section is reported as skipped.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

#ifdef KOBJ_BENCH_POD
#include "kobj/kobj.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

static struct kobj_owner P, N; /* the pod's table; the native side's */
static struct kobj_owner P2;   /* a second pod (ChannelMultiProcess) */
static struct wrt_module *mod;
static struct wrt_instance *inst, *inst2;
static struct k32_err err;
static uint8_t nbuf[256];
static uint8_t nbig[65536];

int bench_pod_setup(char *why, unsigned why_len)
{
	const struct k32_allocator *alloc = k32_default_allocator();
	uint8_t *bytes;
	size_t len;
	kobj_owner_init(&P, bench_kobj_node, "bench-pod", 0);
	kobj_owner_init(&P2, bench_kobj_node, "bench-pod-2", 0);
	kobj_owner_init(&N, bench_kobj_node, "bench-native", 0);
	if (k32_plat()->file_read_all(KOBJ_POD_WASM, alloc, 1 << 20, &bytes, &len, &err) !=
	    K32_OK) {
		snprintf(why, why_len, "cannot read %s: %s", KOBJ_POD_WASM, err.msg);
		return -1;
	}
	struct wrt_load_opts lo;
	wrt_load_opts_default(&lo);
	lo.gas_metering = false; /* loops of millions of calls; metering is measured elsewhere */
	/* The module keeps pointers into bytes (names, data): they live as long as the tool. */
	k32_status_t st = wrt_module_load(alloc, bytes, len, &lo, &mod, &err);
	struct wrt_linker lk;
	struct wrt_limits lim;
	wrt_linker_init(&lk);
	wrt_limits_default(&lim);
	lim.gas_enabled = false;
	if (st != K32_OK ||
	    wrt_linker_add_host(&lk, kobj_pod_hostfn_table, KOBJ_POD_HOSTFN_COUNT, &err) !=
		K32_OK ||
	    wrt_instance_new(mod, &lk, &lim, alloc, &P, &inst, &err) != K32_OK ||
	    wrt_instance_new(mod, &lk, &lim, alloc, &P2, &inst2, &err) != K32_OK) {
		snprintf(why, why_len, "pod module did not load: %s", err.msg);
		return -1;
	}
	return 0;
}

/* Export lookups by name, done once per name: the search is the harness's, not the pod's. */
static struct {
	const char *name;
	uint32_t f, np, nr;
} fcache[16];

static k32_status_t lookup(const char *name, uint32_t *f, uint32_t *np, uint32_t *nr)
{
	const uint8_t *types;
	unsigned i;
	for (i = 0; i < 16 && fcache[i].name; i++)
		if (fcache[i].name == name) {
			*f = fcache[i].f;
			*np = fcache[i].np;
			*nr = fcache[i].nr;
			return K32_OK;
		}
	if (wrt_export_func(inst, name, f, &err) != K32_OK ||
	    wrt_func_type(inst, *f, np, nr, &types) != K32_OK)
		return K32_ERR_NOT_FOUND;
	if (i < 16) {
		fcache[i].name = name;
		fcache[i].f = *f;
		fcache[i].np = *np;
		fcache[i].nr = *nr;
	}
	return K32_OK;
}

/* Runs export `name`(args..., n) once with n = iterations. */
static void run(struct brun *r, const char *name, uint32_t a0, uint32_t a1, int nargs)
{
	uint32_t f, np, nr;
	uint64_t args[3], res[1];
	if (lookup(name, &f, &np, &nr) != K32_OK) {
		fprintf(stderr, "kube32-bench: pod export %s: %s\n", name, err.msg);
		r->skip = "export missing";
		return;
	}
	args[0] = a0;
	args[1] = a1;
	args[nargs] = r->iters;
	if (wrt_invoke(inst, f, args, np, res, nr, &err) != K32_OK)
		r->skip = "pod trapped";
}

static void p_null(struct brun *r)
{
	run(r, "loop_null", 0, 0, 0);
}

static void p_null8(struct brun *r)
{
	run(r, "loop_null8", 0, 0, 0);
}

static void n_call8(struct brun *r)
{
	const struct k32_hostfn_def *d = &kobj_pod_hostfn_table[1]; /* kx_null8 */
	uint64_t args[8] = {1, 2, 3, 4, 5, 6, 7, 8}, res[1];
	struct k32_hostcall c = {.args = args, .results = res};
	for (uint64_t i = 0; i < r->iters; i++)
		d->fn(&c);
	bench_keep(res[0]);
}

static void p_signal(struct brun *r)
{
	kobj_handle_t e;
	kobj_event_create(&P, 0, &e);
	run(r, "loop_signal", e, 0, 1);
	kobj_handle_close(&P, e);
}

static void n_signal(struct brun *r)
{
	kobj_handle_t e;
	kobj_event_create(&N, 0, &e);
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_signal(&N, e, 0, 0);
	kobj_handle_close(&N, e);
}

static void p_wait(struct brun *r)
{
	kobj_handle_t e;
	kobj_event_create(&P, 0, &e);
	kobj_object_signal(&P, e, 0, KOBJ_SIG_SIGNALED);
	run(r, "loop_wait", e, 0, 1);
	kobj_handle_close(&P, e);
}

static void n_wait(struct brun *r)
{
	kobj_handle_t e;
	uint32_t obs;
	kobj_event_create(&N, 0, &e);
	kobj_object_signal(&N, e, 0, KOBJ_SIG_SIGNALED);
	for (uint64_t i = 0; i < r->iters; i++)
		kobj_object_wait_one(&N, e, KOBJ_SIG_SIGNALED, 0, &obs);
	kobj_handle_close(&N, e);
}

static void p_dup_close(struct brun *r)
{
	kobj_handle_t e;
	kobj_event_create(&P, 0, &e);
	run(r, "loop_dup_close", e, 0, 1);
	kobj_handle_close(&P, e);
}

static void n_dup_close(struct brun *r)
{
	kobj_handle_t e, d;
	kobj_event_create(&N, 0, &e);
	for (uint64_t i = 0; i < r->iters; i++) {
		kobj_handle_duplicate(&N, e, KOBJ_RIGHT_SAME_RIGHTS, &d);
		kobj_handle_close(&N, d);
	}
	kobj_handle_close(&N, e);
}

static void p_write_read(struct brun *r)
{
	kobj_handle_t c0, c1;
	kobj_channel_create(&P, 0, &c0, &c1);
	run(r, "loop_write_read", c0, c1, 2);
	kobj_handle_close(&P, c0);
	kobj_handle_close(&P, c1);
}

static void n_write_read(struct brun *r)
{
	kobj_handle_t c0, c1;
	uint32_t nb, nh;
	kobj_channel_create(&N, 0, &c0, &c1);
	for (uint64_t i = 0; i < r->iters; i++) {
		kobj_channel_write(&N, c0, 0, nbuf, 64, NULL, 0);
		kobj_channel_read(&N, c1, 0, nbuf + 64, NULL, 64, 0, &nb, &nh);
	}
	kobj_handle_close(&N, c0);
	kobj_handle_close(&N, c1);
}

/*
 * Write only. Each batch writes 16 messages (a full queue) on each of WCH channels, so one pod
 * entry covers 16 x WCH writes; the drain between batches is excluded. The native row has the
 * same structure (same channels, same batches), so the ratio is the crossing per write.
 */
#define WCH 4 /* 4 x 16 = 64 queued messages: the owner's share, K32_KOBJ_OWNER_MAX_MESSAGES */
_Static_assert(WCH *K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS <= K32_KOBJ_OWNER_MAX_MESSAGES,
	       "a write batch must fit the owner's message share");
static void pod_or_native_write(struct brun *r, bool pod)
{
	struct kobj_owner *o = pod ? &P : &N;
	kobj_handle_t c0[WCH], c1[WCH];
	uint32_t nb, nh, f, np, nr;
	uint64_t mlen = 0;
	uint8_t *lm = pod ? wrt_memory(inst, &mlen) : NULL;
	bench_pause(r);
	for (int c = 0; c < WCH; c++) {
		kobj_channel_create(o, 0, &c0[c], &c1[c]);
		if (lm && mlen >= 4096)
			memcpy(lm + 3072 + 4 * c, &c0[c], 4);
	}
	if (pod && (mlen < 4096 || lookup("loop_write_chs", &f, &np, &nr) != K32_OK)) {
		r->skip = "pod export loop_write_chs missing";
		return;
	}
	bench_resume(r);
	const uint64_t per = K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS;
	for (uint64_t i = 0; i < r->iters;) {
		uint64_t left = r->iters - i;
		uint64_t nch = left >= WCH * per ? WCH : (left + per - 1) / per;
		uint64_t k = left >= nch * per ? per : left / nch ? left / nch : 1;
		if (pod) {
			uint64_t args[3] = {3072, nch, k}, res[1];
			if (wrt_invoke(inst, f, args, 3, res, 0, &err) != K32_OK)
				r->skip = "pod trapped";
		} else {
			for (uint64_t c = 0; c < nch; c++)
				for (uint64_t m = 0; m < k; m++)
					kobj_channel_write(o, c0[c], 0, nbuf, 64, NULL, 0);
		}
		bench_pause(r);
		for (uint64_t c = 0; c < nch; c++)
			for (uint64_t m = 0; m < k; m++)
				if (kobj_channel_read(o, c1[c], 0, nbuf + 64, NULL, 64, 0, &nb,
						      &nh) != K32_OK)
					r->skip = "a write of the batch failed";
		bench_resume(r);
		i += nch * k;
	}
	bench_pause(r);
	for (int c = 0; c < WCH; c++) {
		kobj_handle_close(o, c0[c]);
		kobj_handle_close(o, c1[c]);
	}
	bench_resume(r);
}

static void p_write(struct brun *r)
{
	pod_or_native_write(r, true);
}

static void n_write(struct brun *r)
{
	pod_or_native_write(r, false);
}

static void n_empty(struct brun *r)
{
	const struct k32_hostfn_def *d = &kobj_pod_hostfn_table[0]; /* kx_null */
	struct k32_hostcall c = {0};
	for (uint64_t i = 0; i < r->iters; i++)
		d->fn(&c);
}

/* ---- ChannelMultiProcess: two pods, each on its own thread ------------------------------- */

/* An export call of one instance, run on the calling thread or as a helper task. */
struct pcall {
	struct wrt_instance *in;
	const char *name;
	uint64_t args[3];
	uint32_t nargs;
	int32_t result;
	k32_status_t st;
	uint32_t f;
};

static k32_status_t pcall_prepare(struct pcall *c)
{
	uint32_t np, nr;
	const uint8_t *types;
	if (wrt_export_func(c->in, c->name, &c->f, &err) != K32_OK ||
	    wrt_func_type(c->in, c->f, &np, &nr, &types) != K32_OK || np != c->nargs || nr != 1) {
		fprintf(stderr, "kube32-bench: pod export %s: %s\n", c->name, err.msg);
		return K32_ERR_NOT_FOUND;
	}
	return K32_OK;
}

static void pcall_run(void *arg)
{
	struct pcall *c = arg;
	uint64_t res[1] = {0};
	struct k32_err e;
	c->st = wrt_invoke(c->in, c->f, c->args, c->nargs, res, 1, &e);
	c->result = (int32_t)(uint32_t)res[0];
}

/* A channel between the two pods: *h1 in P (inst), *h2 in P2 (inst2). */
static void pods_channel(kobj_handle_t *h1, kobj_handle_t *h2)
{
	kobj_handle_t a, b;
	kobj_channel_create(&P, 0, &a, &b);
	kobj_handle_transfer(&P, b, &P2, h2);
	*h1 = a;
}

/*
 * ChannelMultiProcess/Write/N: pod 1 (this thread) writes N-byte messages in one loop, pod 2
 * (a helper task on the same core or the other one) reads them; the writer waits for WRITABLE
 * when the 16-message queue is full, so back-pressure and the reader's pace are in the time,
 * as contention is in Zircon's row. Timed: the writer pod's whole loop.
 */
static void p_mp_write(struct brun *r)
{
	uint32_t len = (uint32_t)(r->arg >> 8), place = (uint32_t)(r->arg & 1);
	kobj_handle_t hw, hr;
	struct k32_task *t;
	bench_pause(r);
	kobj_node_set_spin_ns(bench_kobj_node, place == PLACE_SAME_CORE ? 0 : bench_cross_spin_ns);
	pods_channel(&hw, &hr);
	struct pcall wr = {.in = inst, .name = "mp_write", .args = {hw, len, r->iters}, .nargs = 3};
	struct pcall rd = {.in = inst2, .name = "mp_read", .args = {hr, r->iters}, .nargs = 2};
	if (pcall_prepare(&wr) != K32_OK || pcall_prepare(&rd) != K32_OK ||
	    k32_plat()->task_create(&t, "pod-reader", pcall_run, &rd, 0,
				    place == PLACE_SAME_CORE ? 0 : 1, &err) != K32_OK) {
		r->skip = "pod export or task missing";
		bench_resume(r);
		return;
	}
	bench_resume(r);
	pcall_run(&wr);
	bench_pause(r);
	if (wr.st != K32_OK || wr.result != K32_OK)
		kobj_handle_close(&P, hw); /* the reader then sees PEER_CLOSED instead of waiting */
	k32_plat()->task_join(t);
	if (wr.st != K32_OK || wr.result != K32_OK || rd.st != K32_OK || rd.result != K32_OK) {
		fprintf(stderr, "kube32-bench: mp_write %d/%d, mp_read %d/%d: %s\n", (int)wr.st,
			wr.result, (int)rd.st, rd.result, kobj_owner_last_error(&P));
		r->skip = "a pod loop failed";
	}
	kobj_handle_close(&P, hw);
	kobj_handle_close(&P2, hr);
	kobj_node_set_spin_ns(bench_kobj_node, K32_KOBJ_SPIN_NS);
	bench_resume(r);
}

/*
 * ChannelMultiProcess/Read/N: pod 2 (a helper task) fills pod 1's queue with N-byte messages
 * whenever pod 1 raises USER_0, and answers with USER_1; pod 1 (this thread) then reads the
 * batch in one call. Timed: only the reader pod's call (entry into the pod once per batch:
 * 16 messages of 64 B or 1 KiB, 4 of 32 KiB, 2 of 64 KiB, bounded by the queue limits); the
 * handshake and the filling are excluded, as Zircon excludes its helper's batch.
 */
static void p_mp_read(struct brun *r)
{
	uint32_t len = (uint32_t)(r->arg >> 8), place = (uint32_t)(r->arg & 1);
	kobj_handle_t hf, hr;
	struct k32_task *t;
	struct kobj_info info;
	bench_pause(r);
	kobj_node_set_spin_ns(bench_kobj_node, place == PLACE_SAME_CORE ? 0 : bench_cross_spin_ns);
	pods_channel(&hf, &hr);
	struct pcall fill = {.in = inst, .name = "mp_fill", .args = {hf, len}, .nargs = 2};
	struct pcall rd = {.in = inst2, .name = "mp_read_batch", .args = {hr, 0}, .nargs = 2};
	if (pcall_prepare(&fill) != K32_OK || pcall_prepare(&rd) != K32_OK ||
	    k32_plat()->task_create(&t, "pod-filler", pcall_run, &fill, 0,
				    place == PLACE_SAME_CORE ? 0 : 1, &err) != K32_OK) {
		r->skip = "pod export or task missing";
		bench_resume(r);
		return;
	}
	for (uint64_t i = 0; i < r->iters;) {
		kobj_object_signal_peer(&P2, hr, 0, KOBJ_SIG_USER(0));
		if (kobj_object_wait_one(&P2, hr, KOBJ_SIG_USER(1) | KOBJ_SIG_PEER_CLOSED,
					 KOBJ_TIME_INFINITE, NULL) != K32_OK ||
		    kobj_object_get_info(&P2, hr, &info) != K32_OK || info.queued == 0) {
			r->skip = "the filler pod stopped";
			break;
		}
		kobj_object_signal(&P2, hr, KOBJ_SIG_USER(1), 0);
		uint64_t k = r->iters - i < info.queued ? r->iters - i : info.queued;
		rd.args[1] = k;
		bench_resume(r);
		pcall_run(&rd);
		bench_pause(r);
		if (rd.st != K32_OK || rd.result != K32_OK) {
			r->skip = "the reader pod failed";
			break;
		}
		/* Drain what this last batch did not need, so the next round starts empty. */
		for (uint64_t j = k; j < info.queued; j++)
			kobj_channel_read(&P2, hr, 0, nbig, NULL, sizeof(nbig), 0, NULL, NULL);
		i += k;
	}
	kobj_handle_close(&P2, hr); /* the filler sees PEER_CLOSED and returns */
	k32_plat()->task_join(t);
	kobj_handle_close(&P, hf);
	kobj_node_set_spin_ns(bench_kobj_node, K32_KOBJ_SPIN_NS);
	bench_resume(r);
}

#define MP(sz, place) (((uint64_t)(sz) << 8) | (place))
#define SC	      PLACE_SAME_CORE
#define XC	      PLACE_CROSS_CORE

/* clang-format off */
const struct brow bench_pod_rows[] = {
	{"Pod/HostCall/Null", p_null, 0, 0, "native: same C function", n_empty, false},
	{"Pod/HostCall/ManyArgs", p_null8, 0, 0, "native: same C function", n_call8, false},
	{"Pod/Event/Signal", p_signal, 0, 0, "native kobj_object_signal", n_signal, false},
	{"Pod/WaitItems/WaitForAlreadySignaledEvent", p_wait, 0, 0, "native kobj_object_wait_one", n_wait, false},
	{"Pod/Event/DuplicateAndClose", p_dup_close, 0, 0, "native duplicate+close", n_dup_close, false},
	{"Pod/Channel/Write/64", p_write, 0, 64, "native kobj_channel_write", n_write, false},
	{"Pod/Channel/WriteRead/64", p_write_read, 0, 64, "native write+read", n_write_read, false},
	{"ChannelMultiProcess/Write/64/SameCore", p_mp_write, MP(64, SC), 64, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/64/CrossCore", p_mp_write, MP(64, XC), 64, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/1024/SameCore", p_mp_write, MP(1024, SC), 1024, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/1024/CrossCore", p_mp_write, MP(1024, XC), 1024, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/32k/SameCore", p_mp_write, MP(32768, SC), 32768, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/32k/CrossCore", p_mp_write, MP(32768, XC), 32768, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/64k/SameCore", p_mp_write, MP(65536, SC), 65536, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Write/64k/CrossCore", p_mp_write, MP(65536, XC), 65536, "pipe write, reader thread", bench_linux_pipe_mt_write, true},
	{"ChannelMultiProcess/Read/64/SameCore", p_mp_read, MP(64, SC), 64, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/64/CrossCore", p_mp_read, MP(64, XC), 64, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/1024/SameCore", p_mp_read, MP(1024, SC), 1024, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/1024/CrossCore", p_mp_read, MP(1024, XC), 1024, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/32k/SameCore", p_mp_read, MP(32768, SC), 32768, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/32k/CrossCore", p_mp_read, MP(32768, XC), 32768, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/64k/SameCore", p_mp_read, MP(65536, SC), 65536, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
	{"ChannelMultiProcess/Read/64k/CrossCore", p_mp_read, MP(65536, XC), 65536, "pipe read (batch queued)", bench_linux_pipe_read_batch, true},
};
/* clang-format on */
const unsigned bench_pod_count = sizeof(bench_pod_rows) / sizeof(bench_pod_rows[0]);

#else

const struct brow bench_pod_rows[1];
const unsigned bench_pod_count = 0;

int bench_pod_setup(char *why, unsigned why_len)
{
	snprintf(why, why_len,
		 "this build has no Wasm runtime (src/wasm) linked into kube32-bench");
	return -1;
}

#endif
