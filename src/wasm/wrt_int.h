/*
 * wrt_int.h - what the Wasm runtime's own files share: module, instance and exec state, the
 * internal opcode enum, value-slot helpers and the arithmetic helpers the op list names.
 *
 * Invariants:
 *  - A struct wrt_module is immutable after wrt_module_load; instances only read it.
 *  - Every value is one 64-bit slot (wrt_slot). i32 is stored zero-extended, f32 in the low
 *    32 bits by bit pattern, references as a pointer-sized word (0 = null).
 *  - Compiled code of all functions of a module is one array of 32-bit words (code);
 *    func->code_off indexes it. Stack heights are static: slot k of a frame is fp[k], locals
 *    first (params included), then operands.
 *  - A funcref is the address of a struct wrt_funcinst; an externref is whatever the host
 *    put there (opaque).
 */
#ifndef WRT_INT_H
#define WRT_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "wasm/wrt.h"
#include "wasm/wrt_ops.h"

typedef uint64_t wrt_slot;

/* clang-format off */
#define WRT_E_UN(name) WRT_OP_##name,
#define WRT_E_UNF(name) WRT_OP_##name,
#define WRT_E_SPECIAL(name) WRT_OP_##name,
#define WRT_E_BIN(name) WRT_OP_##name, WRT_OP_##name##_I,
#define WRT_E_BINF(name) WRT_OP_##name, WRT_OP_##name##_I,
#define WRT_E_DIVOP(name) WRT_OP_##name, WRT_OP_##name##_I,
#define WRT_EM_LD(name) WRT_OP_##name, WRT_OP_##name##_A, WRT_OP_##name##_S,
#define WRT_EM_ST(name) WRT_OP_##name, WRT_OP_##name##_I, WRT_OP_##name##_A, WRT_OP_##name##_AI, WRT_OP_##name##_S, WRT_OP_##name##_SI,
enum wrt_op {
#define WRT_X_NUM(name, byte, sig, kind, tin, tout, expr) WRT_E_##kind(name)
#define WRT_X_MEM(name, byte, sig, size, align, kind) WRT_EM_##kind(name)
#define WRT_X_INT(name, comment) WRT_OP_##name,
#define WRT_X_CMP(name, op, type, inv) WRT_OP_BR_##name, WRT_OP_BR_##name##_I,
#define WRT_X_ACMP(name, op, type, inv) WRT_OP_ADDBR_##name, WRT_OP_ADDBR_##name##_I,
#define WRT_X_SCMP(name, op, type, inv) WRT_OP_SELECT_##name, WRT_OP_SELECT_##name##_I,
#define WRT_X_RCMP(name, op, type, inv) WRT_OP_RADDBR_##name, WRT_OP_RADDBR_##name##_I,
	WRT_NUMERIC(WRT_X_NUM)
	WRT_NUMERIC_FC(WRT_X_NUM)
	WRT_MEMOPS(WRT_X_MEM)
	WRT_INTERNAL(WRT_X_INT)
	WRT_CMP32(WRT_X_CMP)
	WRT_CMP32(WRT_X_ACMP)
	WRT_CMP32(WRT_X_SCMP)
	WRT_CMP32(WRT_X_RCMP)
#undef WRT_X_NUM
#undef WRT_X_MEM
#undef WRT_X_INT
#undef WRT_X_CMP
#undef WRT_X_ACMP
#undef WRT_X_SCMP
#undef WRT_X_RCMP
	WRT_OP__COUNT
};
/* clang-format on */

/* Float compare-and-branch conditions (FBR_*): branch when (a < b, a == b, a > b as bits 0-2)
 * meets the mask, negated with WRT_FC_NOT; unordered (NaN) sets no bit, so every f32/f64
 * compare and its negation is one mask (ne = NOT eq). */
#define WRT_FC_LT  1u
#define WRT_FC_EQ  2u
#define WRT_FC_GT  4u
#define WRT_FC_NOT 8u

#define WRT_PAGE      65536u
#define WRT_MAX_PAGES 65536u
#define WRT_NO_INDEX  0xFFFFFFFFu
#define WRT_MAX_SLOTS 65535u /* frame slots: compiled operands are 16 bits */

struct wrt_functype {
	uint32_t nparams;     /* parameter count */
	uint32_t nresults;    /* result count */
	const uint8_t *types; /* params then results (value type bytes) */
	uint32_t canon;	      /* index of the first structurally equal type in the module */
};

struct wrt_limits_decl {
	uint32_t min; /* pages or elements */
	uint32_t max; /* WRT_NO_INDEX when absent */
	bool has_max; /* whether max was declared */
};

struct wrt_global_decl {
	uint8_t type; /* value type */
	bool mut;     /* mutable */
	uint8_t op;   /* init: 0x41.. const, 0x23 global.get, 0xD0 ref.null, 0xD2 ref.func */
	uint64_t imm; /* its immediate (value bits, global or function index) */
};

struct wrt_import {
	const char *module;  /* not NUL-terminated: into the module bytes */
	uint32_t module_len; /* bytes */
	const char *name;    /* ditto */
	uint32_t name_len;   /* bytes */
	uint8_t kind;	     /* WRT_EXTERN_* */
	uint32_t index;	     /* index in its kind's space (func, table, memory, global) */
};

struct wrt_export {
	const char *name;  /* into the module bytes */
	uint32_t name_len; /* bytes */
	uint8_t kind;	   /* WRT_EXTERN_* */
	uint32_t index;	   /* index in its kind's space */
};

struct wrt_func {
	uint32_t type;	    /* type index */
	uint32_t code_off;  /* first word of compiled code (defined functions) */
	uint32_t nlocals;   /* slots of params + locals */
	uint32_t max_slots; /* locals + deepest operand height */
	const char *name;   /* from the name section, NULL if none; not NUL-terminated */
	uint32_t name_len;  /* bytes */
	uint32_t wasm_off;  /* byte offset of the body in the module */
	uint32_t entry_gas; /* metered: cost of the entry region, charged by the call (no op) */
};

struct wrt_table_decl {
	uint8_t type;		    /* WRT_FUNCREF or WRT_EXTERNREF */
	struct wrt_limits_decl lim; /* elements */
};

/* Element segment: mode and contents (function indices, or init expressions). */
struct wrt_elem {
	uint8_t mode;		       /* 0 active, 1 passive, 2 declarative */
	uint8_t type;		       /* reference type */
	uint32_t table;		       /* active: table index */
	struct wrt_global_decl offset; /* active: offset expression (type i32) */
	uint32_t count;		       /* elements */
	struct wrt_global_decl *items; /* each item as a constant expression */
};

struct wrt_data {
	uint8_t mode;		       /* 0 active, 1 passive */
	struct wrt_global_decl offset; /* active: offset expression */
	const uint8_t *bytes;	       /* into the module bytes */
	uint32_t len;		       /* bytes */
};

/* Maps a compiled-code word to a Wasm byte offset (for trap messages). */
struct wrt_srcmap {
	uint32_t code; /* word index of the op */
	uint32_t wasm; /* byte offset in the module */
};

/* Chunked bump storage for the module's runtime structures. */
struct wrt_chunk {
	struct wrt_chunk *next; /* older chunk */
	size_t len;		/* bytes of this chunk, header included */
	size_t used;		/* bytes used */
};

struct wrt_module {
	struct k32_allocator alloc;	    /* where everything below came from */
	struct wrt_chunk *chunks;	    /* bump storage */
	size_t bytes;			    /* total held, for accounting */
	uint32_t ntypes;		    /* types */
	struct wrt_functype *types;	    /* ... */
	uint32_t nimports;		    /* imports */
	struct wrt_import *imports;	    /* ... */
	uint32_t nfuncs;		    /* functions, imported first */
	uint32_t nfunc_imports;		    /* imported functions */
	struct wrt_func *funcs;		    /* ... */
	uint32_t ntables, ntable_imports;   /* tables */
	struct wrt_table_decl *tables;	    /* ... */
	uint32_t nmems, nmem_imports;	    /* memories (at most 1) */
	struct wrt_limits_decl mem;	    /* memory 0 */
	uint32_t nglobals, nglobal_imports; /* globals */
	struct wrt_global_decl *globals;    /* ... */
	uint32_t nexports;		    /* exports */
	struct wrt_export *exports;	    /* ... */
	uint32_t start;			    /* start function or WRT_NO_INDEX */
	uint32_t nelems;		    /* element segments */
	struct wrt_elem *elems;		    /* ... */
	uint32_t ndatas;		    /* data segments */
	struct wrt_data *datas;		    /* ... */
	bool has_datacount;		    /* data count section present */
	uint32_t *code;			    /* compiled code of all functions */
	uint32_t code_words;		    /* its length */
	size_t wasm_code_bytes;		    /* bytes of function bodies in the binary */
	uint8_t *srcmap;		    /* trap source map, packed (wrt_srcmap_find) */
	uint32_t srcmap_len;		    /* its bytes */
	bool metered;			    /* gas ops compiled in */
};

/* A function instance: a Wasm function of some instance, or a host function. */
struct wrt_funcinst {
	const struct wrt_functype *type;   /* signature */
	struct wrt_instance *inst;	   /* owning instance */
	const struct wrt_func *func;	   /* Wasm: its definition; NULL for host */
	const uint32_t *code;		   /* Wasm: first word */
	const struct k32_hostfn_def *host; /* host: the definition */
	uint32_t index;			   /* index in the owning instance's function space */
	/* copied from the definition so a call touches one structure: */
	uint32_t nparams;     /* parameters */
	uint32_t nlocals;     /* Wasm: slots of params + locals */
	uint32_t max_slots;   /* Wasm: frame size in slots */
	uint32_t entry_gas;   /* Wasm: cost of the entry region (0 if unmetered) */
	const uint32_t *body; /* Wasm: code after the entry GAS op */
};

struct wrt_memory {
	uint8_t *data;		    /* bytes; NULL when len is 0 */
	uint64_t len;		    /* bytes accessible: min(pages * 64 KiB, limit) */
	uint64_t alloc_len;	    /* bytes allocated */
	uint32_t pages;		    /* size in pages as Wasm sees it */
	uint32_t max_pages;	    /* declared max, capped by the limit */
	uint64_t limit;		    /* byte limit of the owning instance */
	struct k32_allocator alloc; /* the owning instance's allocator */
};

struct wrt_table {
	uint64_t *elems;	    /* references */
	uint32_t size;		    /* elements */
	uint32_t max;		    /* declared max capped by the limit */
	uint8_t type;		    /* reference type */
	struct k32_allocator alloc; /* the owning instance's allocator */
};

struct wrt_global {
	uint64_t val; /* value slot */
	uint8_t type; /* value type */
	bool mut;     /* mutable */
};

struct wrt_frame {
	const uint32_t *ret_pc;	       /* caller's pc */
	wrt_slot *fp;		       /* caller's frame base */
	const struct wrt_funcinst *fn; /* caller */
};

struct wrt_instance {
	const struct wrt_module *mod;	/* its module */
	struct k32_allocator alloc;	/* where everything below came from */
	struct wrt_limits lim;		/* limits and options */
	void *user;			/* embedder's pointer */
	struct wrt_funcinst **funcs;	/* function index space */
	struct wrt_funcinst *own_funcs; /* functions defined or host-bound here */
	struct wrt_table **tables;	/* table index space */
	struct wrt_table *own_tables;	/* tables defined here */
	struct wrt_memory *mem;		/* memory 0 or NULL */
	struct wrt_memory own_mem;	/* memory defined here */
	struct wrt_global **globals;	/* global index space */
	struct wrt_global *own_globals; /* globals defined here */
	uint64_t **elem_items;		/* per element segment: its references */
	bool *elem_dropped;		/* per element segment */
	bool *data_dropped;		/* per data segment */
	wrt_slot *stack;		/* value stack */
	uint32_t stack_slots;		/* its capacity */
	struct wrt_frame *frames;	/* frame stack */
	uint32_t nframes_cap;		/* its capacity */
	uint64_t *op_counts;		/* WRT_OP__COUNT counters or NULL */
	size_t runtime_bytes;		/* instance structures */
	uint64_t gas_used;		/* last invocation */
	uint32_t max_depth;		/* deepest call depth seen */
	bool running;			/* inside wrt_invoke */
	bool failed;			/* instantiation trapped: kept only to be freed */
};

/* ---- module storage (wrt_load.c) ---- */
void *wrt_mod_alloc(struct wrt_module *mod, size_t len);

/* ---- execution (wrt_exec.c, compiled once per dispatch variant) ---- */
k32_status_t wrt_exec_goto(struct wrt_instance *inst, const struct wrt_funcinst *fn,
			   wrt_slot *args_results, struct k32_err *err);
k32_status_t wrt_exec_switch(struct wrt_instance *inst, const struct wrt_funcinst *fn,
			     wrt_slot *args_results, struct k32_err *err);
k32_status_t wrt_exec_count(struct wrt_instance *inst, const struct wrt_funcinst *fn,
			    wrt_slot *args_results, struct k32_err *err);
/* The variant this library was built with (K32_WASM_DISPATCH). */
extern k32_status_t (*const wrt_exec_default)(struct wrt_instance *, const struct wrt_funcinst *,
					      wrt_slot *, struct k32_err *);

/* ---- helpers shared by exec and instantiation (wrt_inst.c) ---- */
bool wrt_functype_eq(const struct wrt_functype *a, const struct wrt_functype *b);
/* Writes "name" or "func[N]" for trap messages. */
void wrt_func_label(const struct wrt_funcinst *fn, char *buf, size_t len);
uint32_t wrt_srcmap_find(const struct wrt_module *mod, uint32_t code_word);
k32_status_t wrt_memory_grow(struct wrt_memory *mem, uint32_t delta, uint32_t *out_old);
k32_status_t wrt_table_grow(struct wrt_table *tab, uint32_t delta, uint64_t init,
			    uint32_t *out_old);
/* Turns a host function's failure status into a trap (keeping a message it set). */
k32_status_t wrt_host_failed(const struct wrt_funcinst *fn, k32_status_t st, struct k32_err *err);
k32_status_t wrt_call_host(struct wrt_instance *inst, const struct wrt_funcinst *fn, wrt_slot *args,
			   struct k32_err *err);

/* ---- value helpers ---- */
static inline float wrt_f32_from(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline uint32_t wrt_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}
static inline double wrt_f64_from(uint64_t u)
{
	double f;
	memcpy(&f, &u, 8);
	return f;
}
static inline uint64_t wrt_f64_bits(double f)
{
	uint64_t u;
	memcpy(&u, &f, 8);
	return u;
}

static inline uint32_t wrt_clz32(uint32_t a)
{
	return a ? (uint32_t)__builtin_clz(a) : 32;
}
static inline uint32_t wrt_ctz32(uint32_t a)
{
	return a ? (uint32_t)__builtin_ctz(a) : 32;
}
static inline uint64_t wrt_clz64(uint64_t a)
{
	return a ? (uint64_t)__builtin_clzll(a) : 64;
}
static inline uint64_t wrt_ctz64(uint64_t a)
{
	return a ? (uint64_t)__builtin_ctzll(a) : 64;
}
static inline uint32_t wrt_shr_s32(uint32_t a, uint32_t b)
{
	b &= 31;
	return (a >> b) | ((a & 0x80000000u) && b ? ~(0xFFFFFFFFu >> b) : 0);
}
static inline uint64_t wrt_shr_s64(uint64_t a, uint64_t b)
{
	b &= 63;
	return (a >> b) | ((a >> 63) && b ? ~(~0ull >> b) : 0);
}
static inline uint32_t wrt_rotl32(uint32_t a, uint32_t b)
{
	b &= 31;
	return b ? (a << b) | (a >> (32 - b)) : a;
}
static inline uint32_t wrt_rotr32(uint32_t a, uint32_t b)
{
	b &= 31;
	return b ? (a >> b) | (a << (32 - b)) : a;
}
static inline uint64_t wrt_rotl64(uint64_t a, uint64_t b)
{
	b &= 63;
	return b ? (a << b) | (a >> (64 - b)) : a;
}
static inline uint64_t wrt_rotr64(uint64_t a, uint64_t b)
{
	b &= 63;
	return b ? (a >> b) | (a << (64 - b)) : a;
}
static inline float wrt_f32_abs(float a)
{
	return wrt_f32_from(wrt_f32_bits(a) & 0x7FFFFFFFu);
}
static inline float wrt_f32_neg(float a)
{
	return wrt_f32_from(wrt_f32_bits(a) ^ 0x80000000u);
}
static inline float wrt_f32_copysign(float a, float b)
{
	return wrt_f32_from((wrt_f32_bits(a) & 0x7FFFFFFFu) | (wrt_f32_bits(b) & 0x80000000u));
}
static inline double wrt_f64_abs(double a)
{
	return wrt_f64_from(wrt_f64_bits(a) & 0x7FFFFFFFFFFFFFFFull);
}
static inline double wrt_f64_neg(double a)
{
	return wrt_f64_from(wrt_f64_bits(a) ^ 0x8000000000000000ull);
}
static inline double wrt_f64_copysign(double a, double b)
{
	return wrt_f64_from((wrt_f64_bits(a) & 0x7FFFFFFFFFFFFFFFull) |
			    (wrt_f64_bits(b) & 0x8000000000000000ull));
}
static inline float wrt_f32_min(float a, float b)
{
	if (a != a || b != b)
		return a + b;
	if (a == b)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}
static inline float wrt_f32_max(float a, float b)
{
	if (a != a || b != b)
		return a + b;
	if (a == b)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}
static inline double wrt_f64_min(double a, double b)
{
	if (a != a || b != b)
		return a + b;
	if (a == b)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}
static inline double wrt_f64_max(double a, double b)
{
	if (a != a || b != b)
		return a + b;
	if (a == b)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static inline float wrt_f32_ceil(float a)
{
	return a != a ? a + a : ceilf(a); /* libm may return a signalling NaN unchanged */
}
static inline double wrt_f64_ceil(double a)
{
	return a != a ? a + a : ceil(a);
}
static inline float wrt_f32_floor(float a)
{
	return a != a ? a + a : floorf(a); /* libm may return a signalling NaN unchanged */
}
static inline double wrt_f64_floor(double a)
{
	return a != a ? a + a : floor(a);
}
static inline float wrt_f32_trunc(float a)
{
	return a != a ? a + a : truncf(a); /* libm may return a signalling NaN unchanged */
}
static inline double wrt_f64_trunc(double a)
{
	return a != a ? a + a : trunc(a);
}
static inline float wrt_f32_nearest(float a)
{
	return a != a ? a + a : nearbyintf(a); /* libm may return a signalling NaN unchanged */
}
static inline double wrt_f64_nearest(double a)
{
	return a != a ? a + a : nearbyint(a);
}

/* Saturating truncation (0xFC 0..7): NaN gives 0, out of range clamps. */
static inline uint32_t wrt_sat_i32_f64_s(double a)
{
	if (a != a)
		return 0;
	if (a <= -2147483649.0)
		return 0x80000000u;
	if (a >= 2147483648.0)
		return 0x7FFFFFFFu;
	return (uint32_t)(int32_t)a;
}
static inline uint32_t wrt_sat_i32_f64_u(double a)
{
	if (a != a || a <= -1.0)
		return 0;
	if (a >= 4294967296.0)
		return 0xFFFFFFFFu;
	return (uint32_t)a;
}
static inline uint32_t wrt_sat_i32_f32_s(float a)
{
	return wrt_sat_i32_f64_s((double)a);
}
static inline uint32_t wrt_sat_i32_f32_u(float a)
{
	return wrt_sat_i32_f64_u((double)a);
}
static inline uint64_t wrt_sat_i64_f64_s(double a)
{
	if (a != a)
		return 0;
	if (a < -9223372036854775808.0)
		return 0x8000000000000000ull;
	if (a >= 9223372036854775808.0)
		return 0x7FFFFFFFFFFFFFFFull;
	return (uint64_t)(int64_t)a;
}
static inline uint64_t wrt_sat_i64_f64_u(double a)
{
	if (a != a || a <= -1.0)
		return 0;
	if (a >= 18446744073709551616.0)
		return ~0ull;
	return (uint64_t)a;
}
static inline uint64_t wrt_sat_i64_f32_s(float a)
{
	return wrt_sat_i64_f64_s((double)a);
}
static inline uint64_t wrt_sat_i64_f32_u(float a)
{
	return wrt_sat_i64_f64_u((double)a);
}

#endif /* WRT_INT_H */
