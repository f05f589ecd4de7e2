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
static struct wrt_module *mod;
static struct wrt_instance *inst;
static struct k32_err err;
static uint8_t nbuf[256];

int bench_pod_setup(char *why, unsigned why_len)
{
	const struct k32_allocator *alloc = k32_default_allocator();
	uint8_t *bytes;
	size_t len;
	kobj_owner_init(&P, "bench-pod", 0);
	kobj_owner_init(&N, "bench-native", 0);
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
	    wrt_instance_new(mod, &lk, &lim, alloc, &P, &inst, &err) != K32_OK) {
		snprintf(why, why_len, "pod module did not load: %s", err.msg);
		return -1;
	}
	return 0;
}

/* Runs export `name`(args..., n) once with n = iterations. */
static void run(struct brun *r, const char *name, uint32_t a0, uint32_t a1, int nargs)
{
	uint32_t f, np, nr;
	const uint8_t *types;
	uint64_t args[3], res[1];
	if (wrt_export_func(inst, name, &f, &err) != K32_OK ||
	    wrt_func_type(inst, f, &np, &nr, &types) != K32_OK) {
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

/* Write only: the pod writes a batch of K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS, the drain is
 * excluded; the native row has the same structure. */
static void pod_or_native_write(struct brun *r, bool pod)
{
	struct kobj_owner *o = pod ? &P : &N;
	kobj_handle_t c0, c1;
	uint32_t nb, nh;
	kobj_channel_create(o, 0, &c0, &c1);
	for (uint64_t i = 0; i < r->iters;) {
		uint64_t n = r->iters - i < K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS
				 ? r->iters - i
				 : K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS;
		if (pod) {
			struct brun sub = {.iters = n};
			run(&sub, "loop_write", c0, 0, 1);
			r->skip = sub.skip;
		} else {
			for (uint64_t k = 0; k < n; k++)
				kobj_channel_write(o, c0, 0, nbuf, 64, NULL, 0);
		}
		bench_pause(r);
		for (uint64_t k = 0; k < n; k++)
			kobj_channel_read(o, c1, 0, nbuf + 64, NULL, 64, 0, &nb, &nh);
		bench_resume(r);
		i += n;
	}
	kobj_handle_close(o, c0);
	kobj_handle_close(o, c1);
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

/* clang-format off */
const struct brow bench_pod_rows[] = {
	{"Pod/HostCall/Null", p_null, 0, 0, "native: same C function", n_empty, false},
	{"Pod/HostCall/ManyArgs", p_null8, 0, 0, "native: same C function", n_call8, false},
	{"Pod/Event/Signal", p_signal, 0, 0, "native kobj_object_signal", n_signal, false},
	{"Pod/WaitItems/WaitForAlreadySignaledEvent", p_wait, 0, 0, "native kobj_object_wait_one", n_wait, false},
	{"Pod/Event/DuplicateAndClose", p_dup_close, 0, 0, "native duplicate+close", n_dup_close, false},
	{"Pod/Channel/Write/64", p_write, 0, 64, "native kobj_channel_write", n_write, false},
	{"Pod/Channel/WriteRead/64", p_write_read, 0, 64, "native write+read", n_write_read, false},
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
