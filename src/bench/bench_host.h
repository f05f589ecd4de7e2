/*
 * bench_host.h - the bench pod in-process: the host functions a kubelet offers the pod
 * (module "kube32": k32_time_us, k32_time_ms, k32_log and the k32_http_* calls), so tools
 * and tests can load apps/bench/bench.wasm through wrt.h without a kubelet, call its run and
 * hostcall exports, and drive its k32_http handler with a request target.
 *
 * Context: one pod per thread; the request is the instance's user pointer.
 */
#ifndef BENCH_HOST_H
#define BENCH_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_hostcall.h"
#include "base/k32_status.h"

struct wrt_module;
struct wrt_instance;

/* One request to the pod's k32_http (the instance's user pointer). */
struct bench_http_req {
	const char *target; /* "/run?k=crc32&n=4&r=5"; NULL outside a request */
	char body[512];	    /* the response body (NUL-terminated, cut at 511 bytes) */
	uint32_t body_len;  /* bytes in body */
};

/* The host functions above (table of bench_host_count entries), and the same table with
 * k32_time_us replaced by a counter (bench_pod_opts.counter_clock). */
extern const struct k32_hostfn_def bench_host_fns[];
extern const struct k32_hostfn_def bench_host_fns_counter[];
extern const size_t bench_host_count;

/* A loaded bench pod: module + instance + its exports. */
struct bench_pod {
	struct wrt_module *mod;
	struct wrt_instance *inst;
	uint32_t run_fn;	   /* run(k, n, r) */
	uint32_t hostcall_fn;	   /* hostcall(n) */
	uint32_t http_fn;	   /* k32_http(method, path_len, body_len) */
	struct bench_http_req req; /* the current request */
};

struct bench_pod_opts {
	bool metered;	      /* gas compiled in and charged (the default budget is not used:
				 gas is effectively unlimited, to measure the charging) */
	bool count_ops;	      /* wrt count_ops mode */
	uint64_t mem_bytes;   /* linear memory cap (24 KiB on the boards) */
	uint32_t stack_bytes; /* value stack; 0: the runtime default */
	uint64_t gas;	      /* gas per call when metered; 0: effectively unlimited */
	bool counter_clock;   /* k32_time_us returns a counter (1, 2, ...) instead of reading
				 the clock: the host call's cost is then the crossing alone */
};

/* Loads bytes (kept by the module until bench_pod_close) and instantiates it.
 * @retval K32_OK, or the wrt_module_load / wrt_instance_new / wrt_export_func status with
 * err saying which step failed. */
k32_status_t bench_pod_open(struct bench_pod *p, const uint8_t *bytes, size_t len,
			    const struct bench_pod_opts *opts, struct k32_err *err);
void bench_pod_close(struct bench_pod *p);

/* Calls run / hostcall; K32_ERR_TRAP etc. from wrt_invoke. */
k32_status_t bench_pod_run(struct bench_pod *p, uint32_t k, uint32_t n, uint32_t reps,
			   uint32_t *out_sum, struct k32_err *err);
k32_status_t bench_pod_hostcall(struct bench_pod *p, uint32_t n, uint32_t *out_ok,
				struct k32_err *err);
/* GET target through k32_http: the status it returned; the body is in p->req.body. */
k32_status_t bench_pod_get(struct bench_pod *p, const char *target, int32_t *out_status,
			   struct k32_err *err);

#endif /* BENCH_HOST_H */
