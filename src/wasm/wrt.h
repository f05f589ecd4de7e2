/*
 * wrt.h - the kube32 Wasm runtime: load (decode, validate, compile), link, instantiate,
 * invoke. Wasm 2.0 core without SIMD.
 *
 * Life cycle:
 *
 *   struct wrt_module *mod;
 *   wrt_module_load(alloc, bytes, len, &load_opts, &mod, &err);   decode + validate + compile
 *   struct wrt_linker lk; wrt_linker_init(&lk);
 *   wrt_linker_add_host(&lk, defs, ndefs, &err);                  host functions (k32_hostcall.h)
 *   wrt_linker_add_instance(&lk, "env", other_inst, &err);        exports of another instance
 *   struct wrt_instance *inst;
 *   wrt_instance_new(mod, &lk, &limits, alloc, user, &inst, &err);  link, init, run start
 *   uint32_t fn; wrt_export_func(inst, "run", &fn, &err);
 *   wrt_invoke(inst, fn, args, nargs, results, nresults, &err);    K32_ERR_TRAP on a trap
 *   wrt_instance_free(inst); wrt_module_free(mod);
 *
 * Ownership: the module keeps pointers into `bytes` (data segments, names): the caller keeps
 * the bytes valid and unchanged until wrt_module_free. Compiled code belongs to the module
 * and is shared by its instances; a module must outlive its instances. An instance whose
 * exports another instance imports (memory, table, global, function) must outlive it.
 * Everything is allocated from the struct k32_allocator passed in; failure is a clean
 * K32_ERR_NO_MEMORY and nothing leaks.
 *
 * Values cross the API as raw 64-bit slots: i32 zero-extended, i64 as is, f32/f64 by bit
 * pattern (f32 in the low 32 bits), references as an opaque non-zero word or 0 for null.
 *
 * Traps: wrt_invoke returns K32_ERR_TRAP with err->msg naming what (e.g. "out of bounds
 * memory access"), where (function name from the name section, else func[N], and the byte
 * offset in the module) and how much (address and size, depth and limit, gas budget). After a
 * trap the instance stays usable: stacks are reset on the next call, memory and globals
 * keep whatever the trapped code wrote (as the spec requires).
 *
 * Context: an instance runs on one thread at a time; calls are not re-entrant (a host
 * function may not call wrt_invoke on the instance that called it: K32_ERR_BAD_STATE).
 * Native stack use of wrt_invoke is constant (Wasm frames live on the instance's frame
 * stack), whatever the function length or call depth.
 */
#ifndef WRT_H
#define WRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_hostcall.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

struct wrt_module;
struct wrt_instance;

/* Value types, by their Wasm binary encoding. */
enum {
	WRT_I32 = 0x7F,
	WRT_I64 = 0x7E,
	WRT_F32 = 0x7D,
	WRT_F64 = 0x7C,
	WRT_FUNCREF = 0x70,
	WRT_EXTERNREF = 0x6F,
};

/* Export and import kinds, by their Wasm binary encoding. */
enum {
	WRT_EXTERN_FUNC = 0,
	WRT_EXTERN_TABLE = 1,
	WRT_EXTERN_MEMORY = 2,
	WRT_EXTERN_GLOBAL = 3,
};

struct wrt_load_opts {
	bool gas_metering; /* compile gas charges into the code (default true); without them
			      instances of this module cannot be metered */
	bool copy_bytes;   /* copy what the module keeps of its bytes (data segments, import,
			      export and function names) into module storage, so the caller
			      may free the bytes right after the load (default false: the
			      module points into them, which costs nothing while the caller
			      keeps them anyway) */
	/* where the loader's working memory comes from (the validator's stacks, the code and
	 * source map while they grow; all of it freed before the load returns), so that the
	 * module's allocator holds only what the module keeps: a kubelet loads a pod's module
	 * into the pod's pool with the scratch on the node heap. NULL: the module's allocator */
	const struct k32_allocator *scratch;
};

/* Fills opts with the defaults (gas metering compiled in, bytes not copied). */
void wrt_load_opts_default(struct wrt_load_opts *opts);

/*
 * Decodes, validates and compiles a binary module.
 * @retval K32_OK             *out_mod is the module (free with wrt_module_free)
 * @retval K32_ERR_CORRUPT    malformed binary; err says the byte offset and the rule
 * @retval K32_ERR_INVALID_ARGS module fails validation; err says offset and rule
 * @retval K32_ERR_NO_RESOURCES a K32_WASM_* limit is exceeded (err names it)
 * @retval K32_ERR_NOT_SUPPORTED SIMD or another feature outside Wasm 2.0 core
 * @retval K32_ERR_NO_MEMORY  the allocator refused
 * Context: thread; may take time proportional to the module size. Does not block.
 */
k32_status_t wrt_module_load(const struct k32_allocator *alloc, const uint8_t *bytes, size_t len,
			     const struct wrt_load_opts *opts, struct wrt_module **out_mod,
			     struct k32_err *err);

/* Frees a module (NULL is ignored). Its instances must be freed first. */
void wrt_module_free(struct wrt_module *mod);

/* Bytes the module holds (compiled code, tables of types, functions, names, trap map). */
size_t wrt_module_bytes(const struct wrt_module *mod);
/* Bytes of compiled code alone, and bytes of Wasm code-section bodies it came from. */
void wrt_module_code_size(const struct wrt_module *mod, size_t *out_compiled, size_t *out_wasm);

/* ---- linking ----------------------------------------------------------------------------- */

/* Where imports are looked up: host function tables first, then named instances. */
struct wrt_linker {
	const struct k32_hostfn_def *host[K32_WASM_LINKER_HOST_TABLES]; /* host tables */
	size_t host_count[K32_WASM_LINKER_HOST_TABLES];			/* entries in each */
	uint32_t nhost;							/* tables in use */
	const char *inst_name[K32_WASM_LINKER_INSTANCES];		/* import module name */
	struct wrt_instance *inst[K32_WASM_LINKER_INSTANCES];		/* its exports */
	uint32_t ninst;							/* instances in use */
};

void wrt_linker_init(struct wrt_linker *lk);
/* Adds a host function table (kept by pointer). K32_ERR_NO_RESOURCES when
 * K32_WASM_LINKER_HOST_TABLES tables are already added. */
k32_status_t wrt_linker_add_host(struct wrt_linker *lk, const struct k32_hostfn_def *defs,
				 size_t count, struct k32_err *err);
/* Makes inst's exports importable under module name `name` (kept by pointer). A later
 * entry with the same name shadows an earlier one. K32_ERR_NO_RESOURCES when full. */
k32_status_t wrt_linker_add_instance(struct wrt_linker *lk, const char *name,
				     struct wrt_instance *inst, struct k32_err *err);

/* ---- instances --------------------------------------------------------------------------- */

/*
 * How a running call is stopped from outside (wrt_limits.watch; NULL: only by its gas).
 *
 * Check points: code compiled with gas (wrt_load_opts.gas_metering, the default and what
 * the kubelet uses) charges gas at function entries and loop back-edges, metered or not
 * (lim.gas_enabled only decides whether the budget can run out). The interpreter keeps at
 * most K32_WASM_CHECK_GAS units in its counter at a time; when they are used up, the next
 * charge takes the slow path, which refills the counter and calls check. So a call reaches
 * a check point after at most K32_WASM_CHECK_GAS units of work (plus one straight-line
 * block), whether it loops or recurses, and the hot path pays nothing it did not pay
 * before. A host call that returns while *stop is nonzero is a check point too (a host
 * function that waits should itself wake when stop is set: see the kubelet's k32_sleep_ms).
 * Code compiled without gas has no charges: only host call returns are check points.
 *
 * check(ctx, stop, err) runs on the calling thread with the value of *stop: K32_OK goes on;
 * any other status ends the call with that status (check fills err: what stopped it and
 * why; the interpreter appends where). With check NULL, a nonzero stop ends the call with
 * K32_ERR_CANCELED. A host function that returns K32_ERR_CANCELED or K32_ERR_TIMED_OUT
 * with err set to that same status (a wait cut short by the embedder) ends the call with it
 * too, instead of a trap. The instance keeps the pointer: the watch must outlive it.
 */
struct wrt_watch {
	const _Atomic uint32_t *stop; /* required; nonzero: stop at the next check point (any
				       * thread may set it) */
	k32_status_t (*check)(void *ctx, uint32_t stop, struct k32_err *err);
	void *ctx; /* for check */
};

struct wrt_limits {
	uint64_t mem_bytes;   /* linear memory cap in bytes (accesses checked against the real
				 size, which is min(pages * 64 KiB, mem_bytes)) */
	uint32_t stack_bytes; /* value stack (locals + operands), 8 bytes a slot */
	uint32_t frames;      /* call depth */
	uint32_t table_elems; /* elements per table */
	uint64_t gas;	      /* gas per wrt_invoke (one unit per Wasm instruction) */
	bool gas_enabled;     /* meter (default true); false runs unmetered */
	bool canonical_nan;   /* canonicalise NaN results of float arithmetic (pods: true) */
	bool count_ops;	      /* count executed ops by type (slower; see wrt_op_counts) */
	const struct wrt_watch *watch; /* stops a running call from outside (NULL: none) */
};

/* Defaults from k32_config.h (K32_WASM_DEFAULT_*). */
void wrt_limits_default(struct wrt_limits *lim);

/*
 * Links imports through lk, allocates memory, tables, globals and stacks within lim,
 * applies element and data segments and runs the start function.
 * @retval K32_OK               *out_inst is ready
 * @retval K32_ERR_NOT_FOUND    an import is missing (err: module, name)
 * @retval K32_ERR_WRONG_TYPE   an import has the wrong kind, signature or limits
 * @retval K32_ERR_NO_RESOURCES the module asks more than lim allows (err names both numbers)
 * @retval K32_ERR_NO_MEMORY    the allocator refused
 * @retval K32_ERR_TRAP         a segment was out of bounds or the start function trapped
 *                              (segments applied before it stay applied, per the spec).
 *                              *out_inst is STILL SET: the instance is failed (wrt_invoke on
 *                              it returns K32_ERR_BAD_STATE) but shared tables may point at
 *                              its functions; free it once its importers are gone.
 * user is handed to host functions as call->instance_user.
 */
k32_status_t wrt_instance_new(const struct wrt_module *mod, const struct wrt_linker *lk,
			      const struct wrt_limits *lim, const struct k32_allocator *alloc,
			      void *user, struct wrt_instance **out_inst, struct k32_err *err);
void wrt_instance_free(struct wrt_instance *inst);

/* Looks up an export by name: its kind and index in the instance's index space. */
k32_status_t wrt_export_find(const struct wrt_instance *inst, const char *name, uint8_t *out_kind,
			     uint32_t *out_index, struct k32_err *err);
/* The same with a name of len bytes (names may hold any UTF-8, NUL included). */
k32_status_t wrt_export_find_n(const struct wrt_instance *inst, const char *name, size_t len,
			       uint8_t *out_kind, uint32_t *out_index, struct k32_err *err);
/* Looks up an exported function. K32_ERR_NOT_FOUND / K32_ERR_WRONG_TYPE. */
k32_status_t wrt_export_func(const struct wrt_instance *inst, const char *name, uint32_t *out_func,
			     struct k32_err *err);
/* The signature of function func: counts and value types (params then results). */
k32_status_t wrt_func_type(const struct wrt_instance *inst, uint32_t func, uint32_t *out_nparams,
			   uint32_t *out_nresults, const uint8_t **out_types);
/* Reads an exported global's type and value. */
k32_status_t wrt_export_global(const struct wrt_instance *inst, const char *name, uint8_t *out_type,
			       uint64_t *out_val, struct k32_err *err);

/*
 * Calls function func with nargs argument slots and receives nresults result slots (both
 * must match the signature exactly). Gas (if enabled) restarts at lim.gas for each call.
 * @retval K32_OK               results written
 * @retval K32_ERR_TRAP         the code trapped; err says what, where and how much
 * @retval K32_ERR_INVALID_ARGS bad index or counts
 * @retval K32_ERR_BAD_STATE    called re-entrantly from a host function of this instance
 * @retval other                lim.watch's check stopped it (its status, e.g. CANCELED or
 *                              TIMED_OUT; err has its message and where the call was)
 */
k32_status_t wrt_invoke(struct wrt_instance *inst, uint32_t func, const uint64_t *args,
			uint32_t nargs, uint64_t *results, uint32_t nresults, struct k32_err *err);

/* Linear memory 0 of the instance (NULL/0 if none). Valid until the next memory.grow. */
uint8_t *wrt_memory(struct wrt_instance *inst, uint64_t *out_len);

/* Per-instance accounting, in bytes, plus the last invocation's gas. */
struct wrt_stats {
	size_t code_bytes;    /* compiled code of the module (shared by its instances) */
	size_t module_bytes;  /* everything the module holds, code included */
	size_t memory_bytes;  /* linear memory allocated */
	size_t stack_bytes;   /* value stack + frame stack */
	size_t table_bytes;   /* tables */
	size_t runtime_bytes; /* instance structures: functions, globals, segments */
	uint64_t gas_used;    /* gas used by the last wrt_invoke */
	uint32_t max_depth;   /* deepest call depth reached */
};
void wrt_instance_stats(const struct wrt_instance *inst, struct wrt_stats *out);

/* With lim.count_ops: executed internal ops so far, by op (indices < wrt_op_count()). */
uint32_t wrt_op_count(void);
const char *wrt_op_name(uint32_t op);
const uint64_t *wrt_op_counts(const struct wrt_instance *inst);

#endif /* WRT_H */
