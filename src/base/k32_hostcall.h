/*
 * k32_hostcall.h - the neutral contract between the Wasm runtime and whoever offers host
 * functions to pods (kobj, hw, the kubelet).
 *
 * The runtime knows nothing of kobj: a provider exports a table of struct k32_hostfn_def
 * (module, name, signature, C function, context) and the embedder links that table into an
 * instance by module, name and signature, as a wasm3 host does with m3_LinkRawFunction.
 *
 * Signature strings: parameter letters, ':' then result letters. i = i32, I = i64, f = f32,
 * F = f64. "ii:i" takes two i32 and returns one i32; ":" takes and returns nothing.
 *
 * Arguments arrive as raw 64-bit slots (i32 zero-extended, floats by bit pattern) read
 * straight from the interpreter's value stack, and results are written the same way; no
 * copy, no allocation on the crossing.
 *
 * A host function returns K32_OK, or K32_ERR_TRAP after filling call->err to trap the
 * calling pod (any other non-OK status also traps, with its name). Every pointer a pod passes
 * must be checked with k32_hostcall_mem() before use.
 */
#ifndef K32_HOSTCALL_H
#define K32_HOSTCALL_H

#include <stddef.h>
#include <stdint.h>

#include "base/k32_status.h"

struct k32_hostcall {
	void *ctx;	      /* the context bound with the function (struct k32_hostfn_def.ctx) */
	void *instance_user;  /* the per-instance user pointer the embedder set (e.g. its pod) */
	uint8_t *mem;	      /* linear memory 0 of the calling instance; NULL if it has none */
	uint64_t mem_len;     /* its current size in bytes */
	const uint64_t *args; /* parameters, one slot each */
	uint64_t *results;    /* results, one slot each */
	struct k32_err *err;  /* where a trap message goes */
};

typedef k32_status_t (*k32_hostcall_fn)(struct k32_hostcall *call);

struct k32_hostfn_def {
	const char *module; /* import module, e.g. "kube32" */
	const char *name;   /* import name, e.g. "kx_channel_write" */
	const char *sig;    /* "ii:i" form, see above */
	k32_hostcall_fn fn; /* the C function */
	void *ctx;	    /* passed back as call->ctx */
};

/*
 * Checks that [ptr, ptr + len) lies inside the caller's linear memory and returns a host
 * pointer to it, or NULL when it does not (overflow included). len 0 at any ptr <= mem_len is
 * valid and returns a non-NULL pointer when memory exists.
 */
static inline uint8_t *k32_hostcall_mem(const struct k32_hostcall *call, uint64_t ptr, uint64_t len)
{
	if (!call->mem || ptr > call->mem_len || len > call->mem_len - ptr)
		return NULL;
	return call->mem + ptr;
}

#endif /* K32_HOSTCALL_H */
