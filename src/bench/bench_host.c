/*
 * bench_host.c - the bench pod in-process (see bench_host.h). The host functions mirror the
 * kubelet's (src/kubelet/klet_wasm.c) in signature and status codes, minus the pod log.
 */
#include "bench_host.h"

#include <string.h>

#include "platform/k32_platform.h"
#include "wasm/wrt.h"

#define EINVAL_	   (-1)
#define ENOSPC_	   (-6)
#define EBADSTATE_ (-20)

static k32_status_t h_time_us(struct k32_hostcall *c)
{
	c->results[0] = k32_now_us();
	return K32_OK;
}

static k32_status_t h_counter_us(struct k32_hostcall *c)
{
	static _Thread_local uint64_t counter;

	c->results[0] = ++counter;
	return K32_OK;
}

static k32_status_t h_time_ms(struct k32_hostcall *c)
{
	c->results[0] = k32_now_us() / 1000u;
	return K32_OK;
}

static k32_status_t h_log(struct k32_hostcall *c)
{
	(void)c;
	return K32_OK;
}

static k32_status_t h_http_path(struct k32_hostcall *c)
{
	struct bench_http_req *r = c->instance_user;
	uint32_t cap = (uint32_t)c->args[1];
	uint8_t *dst = k32_hostcall_mem(c, (uint32_t)c->args[0], cap);

	if (!r || !r->target) {
		c->results[0] = (uint32_t)EBADSTATE_;
		return K32_OK;
	}
	size_t n = strlen(r->target);
	if (!dst)
		c->results[0] = (uint32_t)EINVAL_;
	else if (n > cap)
		c->results[0] = (uint32_t)ENOSPC_;
	else {
		memcpy(dst, r->target, n);
		c->results[0] = (uint32_t)n;
	}
	return K32_OK;
}

static k32_status_t h_http_body(struct k32_hostcall *c)
{
	c->results[0] = 0; /* GET: no body */
	return K32_OK;
}

static k32_status_t h_http_write(struct k32_hostcall *c)
{
	struct bench_http_req *r = c->instance_user;
	uint32_t len = (uint32_t)c->args[1];
	const uint8_t *src = k32_hostcall_mem(c, (uint32_t)c->args[0], len);

	if (!r || !r->target) {
		c->results[0] = (uint32_t)EBADSTATE_;
		return K32_OK;
	}
	if (!src) {
		c->results[0] = (uint32_t)EINVAL_;
		return K32_OK;
	}
	if (len > sizeof(r->body) - 1 - r->body_len) {
		c->results[0] = (uint32_t)ENOSPC_;
		return K32_OK;
	}
	memcpy(r->body + r->body_len, src, len);
	r->body_len += len;
	r->body[r->body_len] = 0;
	c->results[0] = 0;
	return K32_OK;
}

static k32_status_t h_http_header(struct k32_hostcall *c)
{
	c->results[0] = 0;
	return K32_OK;
}

const struct k32_hostfn_def bench_host_fns[] = {
    {"kube32", "k32_time_us", ":I", h_time_us, NULL},
    {"kube32", "k32_time_ms", ":I", h_time_ms, NULL},
    {"kube32", "k32_log", "iii:", h_log, NULL},
    {"kube32", "k32_http_path", "ii:i", h_http_path, NULL},
    {"kube32", "k32_http_body", "iii:i", h_http_body, NULL},
    {"kube32", "k32_http_write", "ii:i", h_http_write, NULL},
    {"kube32", "k32_http_header", "iiii:i", h_http_header, NULL},
};
const size_t bench_host_count = sizeof(bench_host_fns) / sizeof(bench_host_fns[0]);

const struct k32_hostfn_def bench_host_fns_counter[] = {
    {"kube32", "k32_time_us", ":I", h_counter_us, NULL},
    {"kube32", "k32_time_ms", ":I", h_time_ms, NULL},
    {"kube32", "k32_log", "iii:", h_log, NULL},
    {"kube32", "k32_http_path", "ii:i", h_http_path, NULL},
    {"kube32", "k32_http_body", "iii:i", h_http_body, NULL},
    {"kube32", "k32_http_write", "ii:i", h_http_write, NULL},
    {"kube32", "k32_http_header", "iiii:i", h_http_header, NULL},
};

k32_status_t bench_pod_open(struct bench_pod *p, const uint8_t *bytes, size_t len,
			    const struct bench_pod_opts *opts, struct k32_err *err)
{
	struct wrt_load_opts lo;
	struct wrt_limits lim;
	struct wrt_linker lk;
	k32_status_t st;

	memset(p, 0, sizeof(*p));
	wrt_load_opts_default(&lo);
	lo.gas_metering = opts->metered;
	st = wrt_module_load(k32_default_allocator(), bytes, len, &lo, &p->mod, err);
	if (st)
		return st;
	wrt_linker_init(&lk);
	st = wrt_linker_add_host(&lk, opts->counter_clock ? bench_host_fns_counter : bench_host_fns,
				 bench_host_count, err);
	if (st)
		goto out_free_mod;
	wrt_limits_default(&lim);
	lim.mem_bytes = opts->mem_bytes;
	if (opts->stack_bytes)
		lim.stack_bytes = opts->stack_bytes;
	lim.gas_enabled = opts->metered;
	/* metered, never out of gas unless asked: the charging is what we time */
	lim.gas = opts->gas ? opts->gas : UINT64_MAX / 4;
	lim.canonical_nan = true;
	lim.count_ops = opts->count_ops;
	st = wrt_instance_new(p->mod, &lk, &lim, k32_default_allocator(), &p->req, &p->inst, err);
	if (st)
		goto out_free_inst;
	st = wrt_export_func(p->inst, "run", &p->run_fn, err);
	if (!st)
		st = wrt_export_func(p->inst, "hostcall", &p->hostcall_fn, err);
	if (!st)
		st = wrt_export_func(p->inst, "k32_http", &p->http_fn, err);
	if (st)
		goto out_free_inst;
	return K32_OK;
out_free_inst:
	wrt_instance_free(p->inst);
out_free_mod:
	wrt_module_free(p->mod);
	memset(p, 0, sizeof(*p));
	return st;
}

void bench_pod_close(struct bench_pod *p)
{
	wrt_instance_free(p->inst);
	wrt_module_free(p->mod);
	memset(p, 0, sizeof(*p));
}

k32_status_t bench_pod_run(struct bench_pod *p, uint32_t k, uint32_t n, uint32_t reps,
			   uint32_t *out_sum, struct k32_err *err)
{
	uint64_t args[3] = {k, n, reps};
	uint64_t res = 0;
	k32_status_t st = wrt_invoke(p->inst, p->run_fn, args, 3, &res, 1, err);

	*out_sum = (uint32_t)res;
	return st;
}

k32_status_t bench_pod_hostcall(struct bench_pod *p, uint32_t n, uint32_t *out_ok,
				struct k32_err *err)
{
	uint64_t arg = n, res = 0;
	k32_status_t st = wrt_invoke(p->inst, p->hostcall_fn, &arg, 1, &res, 1, err);

	*out_ok = (uint32_t)res;
	return st;
}

k32_status_t bench_pod_get(struct bench_pod *p, const char *target, int32_t *out_status,
			   struct k32_err *err)
{
	uint64_t args[3] = {0, strlen(target), 0};
	uint64_t res = 0;

	p->req.target = target;
	p->req.body_len = 0;
	p->req.body[0] = 0;
	k32_status_t st = wrt_invoke(p->inst, p->http_fn, args, 3, &res, 1, err);
	p->req.target = NULL;
	*out_status = (int32_t)(uint32_t)res;
	return st;
}
