/*
 * wrt_exec.c - the interpreter: one dispatch loop over the word code of wrt_ops.h.
 *
 * This file is compiled more than once: with WRT_DISPATCH_GOTO (computed goto, GCC/clang:
 * the fast path) it defines wrt_exec_goto; without it, a portable switch (wrt_exec_switch,
 * the reference); with WRT_COUNT_OPS, the switch plus a counter per executed op
 * (wrt_exec_count, for --count-ops and bench_ops). Both dispatch variants are tested.
 *
 * Invariants: sp points one past the top operand; fp[0..nlocals) are the current function's
 * locals; Wasm calls push a struct wrt_frame on inst->frames (bounded by lim.frames) and
 * never recurse natively, so the native stack use of this function is constant. Stack
 * space for a callee (its max_slots) is checked at the call, so ops inside a function need
 * no overflow check. Linear memory is little-endian, as on x86-64 and the ESP32.
 *
 * Context: called from wrt_invoke and instantiation (start function) only.
 */
#include "wasm/wrt_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#if defined(WRT_COUNT_OPS)
#define WRT_EXEC_NAME wrt_exec_count
#elif defined(WRT_DISPATCH_GOTO)
#define WRT_EXEC_NAME wrt_exec_goto
#else
#define WRT_EXEC_NAME wrt_exec_switch
#endif

#define WRT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* clang-format off */
#define TYPE_U32 uint32_t
#define TYPE_S32 int32_t
#define TYPE_U64 uint64_t
#define TYPE_S64 int64_t
#define TYPE_F32 float
#define TYPE_F64 double
#define GET_U32(s) ((uint32_t)(s))
#define GET_S32(s) ((int32_t)(uint32_t)(s))
#define GET_U64(s) ((uint64_t)(s))
#define GET_S64(s) ((int64_t)(s))
#define GET_F32(s) wrt_f32_from((uint32_t)(s))
#define GET_F64(s) wrt_f64_from(s)
#define SET_U32(s, v) ((s) = (uint64_t)(uint32_t)(v))
#define SET_U64(s, v) ((s) = (uint64_t)(v))
#define SET_F32(s, v) ((s) = wrt_f32_bits(v))
#define SET_F64(s, v) ((s) = wrt_f64_bits(v))
/* Immediates of NAME_I ops: integers sign-extended from w2; f32 bits in w2; f64 in w2, w3. */
#define IMM_U32 ((uint32_t)pc[2])
#define IMM_S32 ((int32_t)pc[2])
#define IMM_U64 ((uint64_t)(int64_t)(int32_t)pc[2])
#define IMM_S64 ((int64_t)(int32_t)pc[2])
#define IMM_F32 wrt_f32_from(pc[2])
#define IMM_F64 wrt_f64_from((uint64_t)pc[2] | ((uint64_t)pc[3] << 32))
#define ILEN_U32 3
#define ILEN_S32 3
#define ILEN_U64 3
#define ILEN_S64 3
#define ILEN_F32 3
#define ILEN_F64 4
#define CANON_F32(r) ((canon && (r) != (r)) ? wrt_f32_from(0x7FC00000u) : (r))
#define CANON_F64(r) ((canon && (r) != (r)) ? wrt_f64_from(0x7FF8000000000000ull) : (r))
/* clang-format on */

#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
#define OP(name) L_##name
#define NEXT()	 goto *labels[*pc & 0xFFFFu]
#else
#define OP(name) case WRT_OP_##name
#define NEXT()	 goto dispatch
#endif

/* Trap with a message: what (printf-style), then where. Out of line: the slow path. */
static k32_status_t __attribute__((noinline, cold))
trap(struct k32_err *err, const struct wrt_funcinst *fn, const uint32_t *pc, const char *fmt, ...)
{
	char what[160]; /* the longest trap text (out of gas, its budget and both knobs) whole */
	char where[48];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	wrt_func_label(fn, where, sizeof(where));
	const struct wrt_module *m = fn->inst->mod;
	uint32_t off = wrt_srcmap_find(m, (uint32_t)(pc - m->code));
	return k32_err_set(err, K32_ERR_TRAP, "wasm", "%s (in %s at byte %" PRIu32 ")", what, where,
			   off);
}

static k32_status_t __attribute__((noinline, cold))
trap_mem(struct k32_err *err, const struct wrt_funcinst *fn, const uint32_t *pc, uint64_t ea,
	 uint64_t n, uint64_t len)
{
	return trap(err, fn, pc,
		    "out of bounds memory access: address %llu + %llu bytes, memory is %llu bytes",
		    (unsigned long long)ea, (unsigned long long)n, (unsigned long long)len);
}

static k32_status_t __attribute__((noinline, cold))
trap_table(struct k32_err *err, const struct wrt_funcinst *fn, const uint32_t *pc, uint64_t i,
	   uint64_t n, uint32_t size)
{
	return trap(err, fn, pc, "out of bounds table access: index %llu + %llu, table size %u",
		    (unsigned long long)i, (unsigned long long)n, size);
}

/*
 * Gas in slices (see struct wrt_watch in wrt.h): the loop's counter `gas` holds at most
 * K32_WASM_CHECK_GAS units; the rest of the budget waits in `reserve`. A charge that takes
 * the counter below zero lands in slice_next, which moves the overdraft and the next slice
 * from the reserve and asks the watch whether to go on. Unmetered, the reserve never runs
 * out. So the hot path is the one compare-and-branch per charge that metering always had.
 */
struct slice {
	uint64_t reserve;     /* budget not yet in the counter (metered) */
	bool metered;	      /* the budget can run out */
	bool out_of_gas;      /* set when the reserve could not pay the overdraft */
	k32_status_t stopped; /* the watch's status when it stopped the call */
	const struct wrt_watch *watch;
};

/* A watch check point. K32_OK: go on; else the call stops with that status (err set). */
static k32_status_t __attribute__((noinline, cold))
watch_check(const struct wrt_watch *w, struct k32_err *err)
{
	uint32_t stop = atomic_load_explicit(w->stop, memory_order_relaxed);
	if (w->check)
		return w->check(w->ctx, stop, err);
	if (stop)
		return k32_err_set(err, K32_ERR_CANCELED, "wasm",
				   "call interrupted (stop %" PRIu32 ")", stop);
	return K32_OK;
}

/* The counter went below zero: the next slice, or -1 to stop (out of gas or the watch). */
static int64_t __attribute__((noinline, cold))
slice_next(struct slice *s, int64_t gas, struct k32_err *err)
{
	uint64_t over = (uint64_t)-gas;
	if (s->metered) {
		if (over > s->reserve) {
			s->reserve = 0;
			s->out_of_gas = true;
			return -1;
		}
		s->reserve -= over;
	}
	if (s->watch && s->watch->stop) {
		k32_status_t st = watch_check(s->watch, err);
		if (st) {
			s->stopped = st;
			return -1;
		}
	}
	uint64_t load = K32_WASM_CHECK_GAS;
	if (s->metered) {
		if (load > s->reserve)
			load = s->reserve;
		s->reserve -= load;
	}
	return (int64_t)load;
}

/* The watch stopped the call: append where it was to the check's message. */
static k32_status_t __attribute__((noinline, cold))
stopped_at(struct k32_err *err, const struct wrt_funcinst *fn, const uint32_t *pc, k32_status_t st)
{
	if (!err)
		return st;
	char where[48];
	wrt_func_label(fn, where, sizeof(where));
	const struct wrt_module *m = fn->inst->mod;
	uint32_t off = wrt_srcmap_find(m, (uint32_t)(pc - m->code));
	size_t n = strlen(err->msg);
	if (n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, " (in %s at byte %" PRIu32 ")", where,
			 off);
	return st;
}

k32_status_t WRT_EXEC_NAME(struct wrt_instance *inst, const struct wrt_funcinst *fn, wrt_slot *base,
			   struct k32_err *err)
{
#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
	/* clang-format off */
	static const void *const labels[WRT_OP__COUNT] = {
#define WRT_L_UN(name) [WRT_OP_##name] = &&L_##name,
#define WRT_L_UNF(name) [WRT_OP_##name] = &&L_##name,
#define WRT_L_SPECIAL(name) [WRT_OP_##name] = &&L_##name,
#define WRT_L_BINF(name) [WRT_OP_##name] = &&L_##name, [WRT_OP_##name##_I] = &&L_##name##_I,
#define WRT_L_DIVOP(name) [WRT_OP_##name] = &&L_##name, [WRT_OP_##name##_I] = &&L_##name##_I,
#define WRT_L_BIN(name) [WRT_OP_##name] = &&L_##name, [WRT_OP_##name##_I] = &&L_##name##_I,
#define WRT_X_NUM(name, byte, sig, kind, tin, tout, expr) WRT_L_##kind(name)
#define WRT_LM_LD(name) [WRT_OP_##name] = &&L_##name, [WRT_OP_##name##_A] = &&L_##name##_A, [WRT_OP_##name##_S] = &&L_##name##_S,
#define WRT_LM_ST(name) [WRT_OP_##name] = &&L_##name, [WRT_OP_##name##_I] = &&L_##name##_I, \
	[WRT_OP_##name##_A] = &&L_##name##_A, [WRT_OP_##name##_AI] = &&L_##name##_AI, \
	[WRT_OP_##name##_S] = &&L_##name##_S, [WRT_OP_##name##_SI] = &&L_##name##_SI,
#define WRT_X_MEM(name, byte, sig, size, align, kind) WRT_LM_##kind(name)
#define WRT_X_INT(name, comment) [WRT_OP_##name] = &&L_##name,
#define WRT_X_CMP(name, op, type, inv) [WRT_OP_BR_##name] = &&L_BR_##name, \
	[WRT_OP_BR_##name##_I] = &&L_BR_##name##_I,
#define WRT_X_ACMP(name, op, type, inv)                                                            \
	[WRT_OP_ADDBR_##name] = &&L_ADDBR_##name, [WRT_OP_ADDBR_##name##_I] = &&L_ADDBR_##name##_I,
#define WRT_X_SCMP(name, op, type, inv)                                                            \
	[WRT_OP_SELECT_##name] = &&L_SELECT_##name, [WRT_OP_SELECT_##name##_I] = &&L_SELECT_##name##_I,
#define WRT_X_RCMP(name, op, type, inv)                                                            \
	[WRT_OP_RADDBR_##name] = &&L_RADDBR_##name, [WRT_OP_RADDBR_##name##_I] = &&L_RADDBR_##name##_I,
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
	};
	/* clang-format on */
#endif
#if defined(WRT_COUNT_OPS)
	uint64_t *counts = inst->op_counts;
#endif
	const bool canon = inst->lim.canonical_nan;
	struct wrt_frame *frames = inst->frames;
	const uint32_t nframes = inst->nframes_cap;
	wrt_slot *const stack_end = inst->stack + inst->stack_slots;
	uint32_t depth = 0, max_depth = inst->max_depth;
	const uint64_t budget =
	    inst->lim.gas > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : inst->lim.gas;
	const bool metered = inst->lim.gas_enabled && fn->inst->mod->metered;
	struct slice slice = {
	    .reserve = metered ? budget : 0, .metered = metered, .watch = inst->lim.watch};
	/* the first slice (no call here: a call before the loop costs GCC its per-handler
	 * dispatch jumps, measured); a stop already requested is wrt_invoke's to see */
	uint64_t first = metered && budget < K32_WASM_CHECK_GAS ? budget : K32_WASM_CHECK_GAS;
	slice.reserve -= metered ? first : 0;
	int64_t gas = (int64_t)first;
	const struct wrt_funcinst *cur = fn;
	const struct wrt_funcinst *callee;
	struct wrt_instance *ci = fn->inst;
	struct wrt_global **globals = ci->globals;
	uint8_t *mem = NULL;
	uint64_t mem_len = 0;
	k32_status_t st = K32_OK;
	wrt_slot *fp = base;
	const uint32_t *pc;
	uint32_t call_base = 0;
	const uint32_t *call_ret = NULL;

#define LOAD_CTX()                                                                                 \
	do {                                                                                       \
		globals = ci->globals;                                                             \
		mem = ci->mem ? ci->mem->data : NULL;                                              \
		mem_len = ci->mem ? ci->mem->len : 0;                                              \
	} while (0)
/* Operand fields of the current instruction (see wrt_ops.h). */
#define HI0 (pc[0] >> 16)
#define LO1 (pc[1] & 0xFFFFu)
#define HI1 (pc[1] >> 16)
#define TRAP(...)                                                                                  \
	do {                                                                                       \
		st = trap(err, cur, pc, __VA_ARGS__);                                              \
		goto out;                                                                          \
	} while (0)
/*
 * Charges g units, then dispatches the next op: pc must already point at it. Each handler
 * keeps the shape it had (subtract, branch to one shared cold label, dispatch), so GCC still
 * gives every handler its own indirect jump; a call per site would make it merge them into
 * one and cost ~1.5x (measured). The shared label refills the slice and dispatches pc.
 */
#define CHARGE_NEXT(g)                                                                             \
	do {                                                                                       \
		gas -= (int64_t)(g);                                                               \
		if (WRT_UNLIKELY(gas < 0))                                                         \
			goto slice_end;                                                            \
		NEXT();                                                                            \
	} while (0)
/*
 * A taken branch: charges g units and moves pc by off (both read from the op at pc), then
 * dispatches. The charge comes first, as it did before slices: the hot path is subtract,
 * compare-and-branch, move, dispatch. Only the cold path (the slice is used up) moves pc
 * itself before the shared label, so no register has to keep the old pc or the gas word
 * across the move (sieve +3.4 % instructions when pc moved first, measured).
 */
#define CHARGE_JUMP(g, off)                                                                        \
	do {                                                                                       \
		gas -= (int64_t)(g);                                                               \
		if (WRT_UNLIKELY(gas < 0)) {                                                       \
			pc += (off);                                                               \
			goto slice_end;                                                            \
		}                                                                                  \
		pc += (off);                                                                       \
		NEXT();                                                                            \
	} while (0)

	LOAD_CTX();
	pc = fn->code;
	if (WRT_UNLIKELY(fp + fn->func->max_slots > stack_end)) {
		st = k32_err_set(err, K32_ERR_TRAP, "wasm",
				 "call stack exhausted: entry needs %" PRIu32
				 " slots, value stack holds %" PRIu32 " "
				 "(%" PRIu32 " bytes); raise kube32.io/stack-bytes (kube32-wasm "
				 "--stack)",
				 fn->func->max_slots, inst->stack_slots, inst->stack_slots * 8);
		goto out;
	}
	for (uint32_t i = fn->type->nparams; i < fn->func->nlocals; i++)
		fp[i] = 0;
	pc = fn->code;
	gas -=
	    (int64_t)fn->entry_gas; /* the entry region (see wrt_compile.c wrt_ld_compile_func) */
	if (WRT_UNLIKELY(gas < 0))
		goto slice_end;

#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
	NEXT();
#else
dispatch:
#if defined(WRT_COUNT_OPS)
	counts[*pc & 0xFFFFu]++;
#endif
	switch (*pc & 0xFFFFu) {
#endif

	/* ---- numeric ops, generated from the list ---- */
#define WRT_H_UN(name, tin, tout, expr)                                                            \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[pc[1]]);                                               \
		SET_##tout(fp[HI0], expr);                                                         \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}
#define WRT_H_UNF(name, tin, tout, expr)                                                           \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[pc[1]]);                                               \
		TYPE_##tout r = (expr);                                                            \
		SET_##tout(fp[HI0], CANON_##tout(r));                                              \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}
#define WRT_H_BIN(name, tin, tout, expr)                                                           \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[LO1]);                                                 \
		TYPE_##tin b = GET_##tin(fp[HI1]);                                                 \
		SET_##tout(fp[HI0], expr);                                                         \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(name##_I) :                                                                             \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[pc[1]]);                                               \
		TYPE_##tin b = IMM_##tin;                                                          \
		SET_##tout(fp[HI0], expr);                                                         \
		pc += ILEN_##tin;                                                                  \
		NEXT();                                                                            \
	}
#define WRT_H_BINF(name, tin, tout, expr)                                                          \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[LO1]);                                                 \
		TYPE_##tin b = GET_##tin(fp[HI1]);                                                 \
		TYPE_##tout r = (expr);                                                            \
		SET_##tout(fp[HI0], CANON_##tout(r));                                              \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(name##_I) :                                                                             \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[pc[1]]);                                               \
		TYPE_##tin b = IMM_##tin;                                                          \
		TYPE_##tout r = (expr);                                                            \
		SET_##tout(fp[HI0], CANON_##tout(r));                                              \
		pc += ILEN_##tin;                                                                  \
		NEXT();                                                                            \
	}
#define WRT_H_SPECIAL(name, tin, tout, expr)
#define WRT_H_DIVOP(name, tin, tout, expr)
#define WRT_X(name, byte, sig, kind, tin, tout, expr) WRT_H_##kind(name, tin, tout, expr)
	WRT_NUMERIC(WRT_X)
	WRT_NUMERIC_FC(WRT_X)
#undef WRT_X

	/* ---- fused i32 compare and branch ---- */
#define WRT_H_CMP(name, cop, type, inv)                                                            \
	OP(BR_##name) :                                                                            \
	{                                                                                          \
		if (GET_##type(fp[HI0]) cop GET_##type(fp[pc[1]])) {                               \
			CHARGE_JUMP(pc[3], 2 + (int32_t)pc[2]);                                    \
		} else {                                                                           \
			pc += 4;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}                                                                                          \
	OP(BR_##name##_I) :                                                                        \
	{                                                                                          \
		if (GET_##type(fp[HI0]) cop GET_##type(pc[1])) {                                   \
			CHARGE_JUMP(pc[3], 2 + (int32_t)pc[2]);                                    \
		} else {                                                                           \
			pc += 4;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}
	WRT_CMP32(WRT_H_CMP)

	/* ---- fused i32 add-immediate, compare and branch (counted loops) ---- */
#define WRT_H_ACMP(name, cop, type, inv)                                                           \
	OP(ADDBR_##name) :                                                                         \
	{                                                                                          \
		uint32_t v = (uint32_t)fp[HI0] + pc[1];                                            \
		fp[HI0] = v;                                                                       \
		if (GET_##type(v) cop GET_##type(fp[pc[2]])) {                                     \
			CHARGE_JUMP(pc[4], 3 + (int32_t)pc[3]);                                    \
		} else {                                                                           \
			pc += 5;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}                                                                                          \
	OP(ADDBR_##name##_I) :                                                                     \
	{                                                                                          \
		uint32_t v = (uint32_t)fp[HI0] + pc[1];                                            \
		fp[HI0] = v;                                                                       \
		if (GET_##type(v) cop GET_##type(pc[2])) {                                         \
			CHARGE_JUMP(pc[4], 3 + (int32_t)pc[3]);                                    \
		} else {                                                                           \
			pc += 5;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}
	WRT_CMP32(WRT_H_ACMP)

	/* ---- the same with the increment in a slot (w1): `j += i` loops ---- */
#define WRT_H_RCMP(name, cop, type, inv)                                                           \
	OP(RADDBR_##name) :                                                                        \
	{                                                                                          \
		uint32_t v = (uint32_t)fp[HI0] + (uint32_t)fp[pc[1]];                              \
		fp[HI0] = v;                                                                       \
		if (GET_##type(v) cop GET_##type(fp[pc[2]])) {                                     \
			CHARGE_JUMP(pc[4], 3 + (int32_t)pc[3]);                                    \
		} else {                                                                           \
			pc += 5;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}                                                                                          \
	OP(RADDBR_##name##_I) :                                                                    \
	{                                                                                          \
		uint32_t v = (uint32_t)fp[HI0] + (uint32_t)fp[pc[1]];                              \
		fp[HI0] = v;                                                                       \
		if (GET_##type(v) cop GET_##type(pc[2])) {                                         \
			CHARGE_JUMP(pc[4], 3 + (int32_t)pc[3]);                                    \
		} else {                                                                           \
			pc += 5;                                                                   \
		}                                                                                  \
		NEXT();                                                                            \
	}
	WRT_CMP32(WRT_H_RCMP)

	/* ---- fused i32 compare and select: w1 a | b << 16 (values), w2 the compared slot,
	 * w3 the other slot (SELECT_<cmp>) or an immediate (SELECT_<cmp>_I) ---- */
#define WRT_H_SCMP(name, cop, type, inv)                                                           \
	OP(SELECT_##name) :                                                                        \
	{                                                                                          \
		bool c = GET_##type(fp[pc[2]]) cop GET_##type(fp[pc[3]]);                          \
		fp[HI0] = c ? fp[LO1] : fp[HI1];                                                   \
		pc += 4;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(SELECT_##name##_I) :                                                                    \
	{                                                                                          \
		bool c = GET_##type(fp[pc[2]]) cop GET_##type(pc[3]);                              \
		fp[HI0] = c ? fp[LO1] : fp[HI1];                                                   \
		pc += 4;                                                                           \
		NEXT();                                                                            \
	}
	WRT_CMP32(WRT_H_SCMP)

	/* ---- integer division: explicit traps ---- */
#define DIV_CHECK(b)                                                                               \
	if (WRT_UNLIKELY((b) == 0))                                                                \
		TRAP("integer divide by zero");
#define DIV_OPS(name, T, expr, ovf)                                                                \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##T a = GET_##T(fp[LO1]), b = GET_##T(fp[HI1]);                               \
		DIV_CHECK(b);                                                                      \
		ovf;                                                                               \
		SET_U64(fp[HI0], expr);                                                            \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(name##_I) :                                                                             \
	{                                                                                          \
		TYPE_##T a = GET_##T(fp[pc[1]]), b = GET_##T((uint64_t)(int64_t)(int32_t)pc[2]);   \
		DIV_CHECK(b);                                                                      \
		ovf;                                                                               \
		SET_U64(fp[HI0], expr);                                                            \
		pc += 3;                                                                           \
		NEXT();                                                                            \
	}
#define OVF32                                                                                      \
	if (WRT_UNLIKELY(a == INT32_MIN && b == -1))                                               \
		TRAP("integer overflow: -2147483648 / -1");
#define OVF64                                                                                      \
	if (WRT_UNLIKELY(a == INT64_MIN && b == -1))                                               \
		TRAP("integer overflow: -9223372036854775808 / -1");
#define NOCHECK (void)0
	DIV_OPS(I32_DIV_S, S32, (uint32_t)(a / b), OVF32)
	DIV_OPS(I32_DIV_U, U32, a / b, NOCHECK)
	DIV_OPS(I32_REM_S, S32, b == -1 ? 0 : (uint32_t)(a % b), NOCHECK)
	DIV_OPS(I32_REM_U, U32, a % b, NOCHECK)
	DIV_OPS(I64_DIV_S, S64, (uint64_t)(a / b), OVF64)
	DIV_OPS(I64_DIV_U, U64, a / b, NOCHECK)
	DIV_OPS(I64_REM_S, S64, b == -1 ? 0 : (uint64_t)(a % b), NOCHECK)
	DIV_OPS(I64_REM_U, U64, a % b, NOCHECK)

	/* ---- float to int truncation: NaN and overflow trap ---- */
#define TRUNC(name, tin, tout, lo_ok, hi, ctype)                                                   \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(fp[pc[1]]);                                               \
		if (WRT_UNLIKELY(a != a))                                                          \
			TRAP("invalid conversion to integer: NaN");                                \
		if (WRT_UNLIKELY(!((lo_ok) && a < (hi))))                                          \
			TRAP("integer overflow: %g does not fit " #ctype, (double)a);              \
		SET_##tout(fp[HI0], (ctype)a);                                                     \
		pc += 2;                                                                           \
		NEXT();                                                                            \
	}
	TRUNC(I32_TRUNC_F32_S, F32, U32, a >= -2147483648.0f, 2147483648.0f, int32_t)
	TRUNC(I32_TRUNC_F32_U, F32, U32, a > -1.0f, 4294967296.0f, uint32_t)
	TRUNC(I32_TRUNC_F64_S, F64, U32, a > -2147483649.0, 2147483648.0, int32_t)
	TRUNC(I32_TRUNC_F64_U, F64, U32, a > -1.0, 4294967296.0, uint32_t)
	TRUNC(I64_TRUNC_F32_S, F32, U64, a >= -9223372036854775808.0f, 9223372036854775808.0f,
	      int64_t)
	TRUNC(I64_TRUNC_F32_U, F32, U64, a > -1.0f, 18446744073709551616.0f, uint64_t)
	TRUNC(I64_TRUNC_F64_S, F64, U64, a >= -9223372036854775808.0, 9223372036854775808.0,
	      int64_t)
	TRUNC(I64_TRUNC_F64_U, F64, U64, a > -1.0, 18446744073709551616.0, uint64_t)

	/* ---- loads and stores: bounds-checked against the real memory size ---- */
#define MEM_CHECK(ea, n)                                                                           \
	if (WRT_UNLIKELY((ea) + (n) > mem_len)) {                                                  \
		st = trap_mem(err, cur, pc, ea, n, mem_len);                                       \
		goto out;                                                                          \
	}
#define LOAD(name, n, ctype, conv)                                                                 \
	OP(name) :                                                                                 \
	{                                                                                          \
		uint64_t ea = (uint64_t)(uint32_t)fp[pc[1]] + pc[2];                               \
		MEM_CHECK(ea, n);                                                                  \
		ctype v;                                                                           \
		memcpy(&v, mem + ea, n);                                                           \
		fp[HI0] = conv;                                                                    \
		pc += 3;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(name##_A) :                                                                             \
	{                                                                                          \
		uint64_t ea = (uint64_t)(uint32_t)((uint32_t)fp[pc[1]] + pc[3]) + pc[2];           \
		MEM_CHECK(ea, n);                                                                  \
		ctype v;                                                                           \
		memcpy(&v, mem + ea, n);                                                           \
		fp[HI0] = conv;                                                                    \
		pc += 4;                                                                           \
		NEXT();                                                                            \
	}                                                                                          \
	OP(name##_S) :                                                                             \
	{                                                                                          \
		uint64_t ea =                                                                      \
		    (uint64_t)(uint32_t)(((uint32_t)fp[pc[1]] << pc[4]) + pc[3]) + pc[2];          \
		MEM_CHECK(ea, n);                                                                  \
		ctype v;                                                                           \
		memcpy(&v, mem + ea, n);                                                           \
		fp[HI0] = conv;                                                                    \
		pc += 5;                                                                           \
		NEXT();                                                                            \
	}
	LOAD(I32_LOAD, 4, uint32_t, v)
	LOAD(I64_LOAD, 8, uint64_t, v)
	LOAD(F32_LOAD, 4, uint32_t, v)
	LOAD(F64_LOAD, 8, uint64_t, v)
	LOAD(I32_LOAD8_S, 1, int8_t, (uint64_t)(uint32_t)(int32_t)v)
	LOAD(I32_LOAD8_U, 1, uint8_t, v)
	LOAD(I32_LOAD16_S, 2, int16_t, (uint64_t)(uint32_t)(int32_t)v)
	LOAD(I32_LOAD16_U, 2, uint16_t, v)
	LOAD(I64_LOAD8_S, 1, int8_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD8_U, 1, uint8_t, v)
	LOAD(I64_LOAD16_S, 2, int16_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD16_U, 2, uint16_t, v)
	LOAD(I64_LOAD32_S, 4, int32_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD32_U, 4, uint32_t, v)
/* value: a slot (plain, _A) or a sign-extended immediate (_I, _AI) */
#define STORE_BODY(n, ctype, addr, val, len)                                                       \
	{                                                                                          \
		uint64_t ea = (addr) + pc[2];                                                      \
		MEM_CHECK(ea, n);                                                                  \
		ctype v = (ctype)(val);                                                            \
		memcpy(mem + ea, &v, n);                                                           \
		pc += len;                                                                         \
		NEXT();                                                                            \
	}
#define ADDR_PLAIN ((uint64_t)(uint32_t)fp[HI0])
#define ADDR_ADD   ((uint64_t)(uint32_t)((uint32_t)fp[HI0] + pc[3]))
#define ADDR_SCALE ((uint64_t)(uint32_t)(((uint32_t)fp[HI0] << pc[4]) + pc[3]))
#define VAL_SLOT   (fp[pc[1]])
#define VAL_IMM	   ((uint64_t)(int64_t)(int32_t)pc[1])
#define STORE(name, n, ctype)                                                                      \
	OP(name)                                                                                   \
	    : STORE_BODY(n, ctype, ADDR_PLAIN, VAL_SLOT, 3) OP(name##_I)                           \
	    : STORE_BODY(n, ctype, ADDR_PLAIN, VAL_IMM, 3) OP(name##_A)                            \
	    : STORE_BODY(n, ctype, ADDR_ADD, VAL_SLOT, 4) OP(name##_AI)                            \
	    : STORE_BODY(n, ctype, ADDR_ADD, VAL_IMM, 4) OP(name##_S)                              \
	    : STORE_BODY(n, ctype, ADDR_SCALE, VAL_SLOT, 5) OP(name##_SI)                          \
	    : STORE_BODY(n, ctype, ADDR_SCALE, VAL_IMM, 5)
	STORE(I32_STORE, 4, uint32_t)
	STORE(I64_STORE, 8, uint64_t)
	STORE(F32_STORE, 4, uint32_t)
	STORE(F64_STORE, 8, uint64_t)
	STORE(I32_STORE8, 1, uint8_t)
	STORE(I32_STORE16, 2, uint16_t)
	STORE(I64_STORE8, 1, uint8_t)
	STORE(I64_STORE16, 2, uint16_t)
	STORE(I64_STORE32, 4, uint32_t)

	/* ---- control ---- */
	OP(UNREACHABLE) :
	{
		TRAP("unreachable executed");
	}
	OP(GAS) :
	{
		CHARGE_JUMP(pc[1], 2);
	}
	OP(BR) :
	{
		CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
	}
	OP(BR_MOVE) :
	{
		uint32_t n = HI0, dst = pc[3] & 0xFFFFu, src = pc[3] >> 16;
		for (uint32_t i = 0; i < n; i++)
			fp[dst + i] = fp[src + i];
		CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
	}
	OP(BR_SET) :
	{
		fp[HI0] = pc[3];
		CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
	}
	OP(BR_SETL) :
	{
		fp[HI0] = fp[pc[3]];
		CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
	}
	OP(BR_IF) :
	{
		if ((uint32_t)fp[HI0]) {
			CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
		} else {
			pc += 3;
		}
		NEXT();
	}
	OP(BR_IF_MOVE) :
	{
		if ((uint32_t)fp[HI0]) {
			uint32_t n = pc[4], dst = pc[3] & 0xFFFFu, src = pc[3] >> 16;
			for (uint32_t i = 0; i < n; i++)
				fp[dst + i] = fp[src + i];
			CHARGE_JUMP(pc[2], 1 + (int32_t)pc[1]);
		} else {
			pc += 5;
		}
		NEXT();
	}
	OP(BR_IFZ) :
	{
		if (!(uint32_t)fp[HI0])
			pc += 1 + (int32_t)pc[1];
		else
			pc += 2;
		NEXT();
	}
	OP(BR_TABLE) :
	{
		uint32_t n = pc[1], arity = pc[2] & 0xFFFFu, src = pc[2] >> 16;
		uint32_t idx = (uint32_t)fp[HI0];
		if (idx > n)
			idx = n;
		const uint32_t *e = pc + 3 + 3 * idx;
		uint32_t dst = e[2];
		if (dst != src)
			for (uint32_t i = 0; i < arity; i++)
				fp[dst + i] = fp[src + i];
		pc = e + (int32_t)e[0];
		CHARGE_NEXT(e[1]);
	}
	OP(RETURN) :
	{
		uint32_t n = HI0, src = pc[1];
		for (uint32_t i = 0; i < n; i++)
			fp[i] = fp[src + i];
		if (depth == 0)
			goto out;
		depth--;
		pc = frames[depth].ret_pc;
		fp = frames[depth].fp;
		cur = frames[depth].fn;
		if (cur->inst != ci) {
			ci = cur->inst;
			LOAD_CTX();
		}
		NEXT();
	}
	OP(CALL) :
	{
		callee = ci->funcs[pc[1]];
		call_base = HI0;
		call_ret = pc + ((pc[0] & 0xFFFFu) == WRT_OP_CALL ? 2 : 4);
		goto do_call;
	}
	OP(CALL_INDIRECT) :
	{
		const struct wrt_module *m = ci->mod;
		const struct wrt_functype *want = &m->types[m->types[pc[1]].canon];
		const struct wrt_table *tab = ci->tables[pc[2]];
		uint32_t idx = (uint32_t)fp[pc[3]];
		if (WRT_UNLIKELY(idx >= tab->size))
			TRAP("undefined element: index %u, table size %u", idx, tab->size);
		callee = (const struct wrt_funcinst *)(uintptr_t)tab->elems[idx];
		if (WRT_UNLIKELY(!callee))
			TRAP("uninitialized element %u", idx);
		if (WRT_UNLIKELY(callee->type != want && !wrt_functype_eq(callee->type, want)))
			TRAP("indirect call type mismatch at table index %u", idx);
		call_base = HI0;
		call_ret = pc + ((pc[0] & 0xFFFFu) == WRT_OP_CALL ? 2 : 4);
		goto do_call;
	}
	OP(COPY) :
	{
		fp[HI0] = fp[pc[1]];
		pc += 2;
		NEXT();
	}
	OP(SELECT) :
	{
		fp[HI0] = (uint32_t)fp[pc[2]] ? fp[LO1] : fp[HI1];
		pc += 3;
		NEXT();
	}
	OP(GLOBAL_GET) :
	{
		fp[HI0] = globals[pc[1]]->val;
		pc += 2;
		NEXT();
	}
	OP(GLOBAL_SET) :
	{
		globals[pc[1]]->val = fp[HI0];
		pc += 2;
		NEXT();
	}
	OP(CONST32) :
	{
		fp[HI0] = pc[1];
		pc += 2;
		NEXT();
	}
	OP(CONST64) :
	{
		fp[HI0] = (uint64_t)pc[1] | ((uint64_t)pc[2] << 32);
		pc += 3;
		NEXT();
	}
	OP(MEMORY_SIZE) :
	{
		fp[HI0] = ci->mem->pages;
		pc += 1;
		NEXT();
	}
	OP(MEMORY_GROW) :
	{
		uint32_t old;
		if (wrt_memory_grow(ci->mem, (uint32_t)fp[pc[1]], &old) == K32_OK)
			fp[HI0] = old;
		else
			fp[HI0] = 0xFFFFFFFFu;
		LOAD_CTX();
		pc += 2;
		NEXT();
	}
	OP(MEMORY_INIT) :
	{
		wrt_slot *o = fp + HI0;
		const struct wrt_data *d = &ci->mod->datas[pc[1]];
		uint64_t dst = (uint32_t)o[0], s = (uint32_t)o[1], n = (uint32_t)o[2];
		uint64_t dlen = ci->data_dropped[pc[1]] ? 0 : d->len;
		if (WRT_UNLIKELY(s + n > dlen || dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, dst, n, mem_len);
			goto out;
		}
		if (n)
			memcpy(mem + dst, d->bytes + s, (size_t)n); /* n <= mem_len: fits */
		pc += 2;
		NEXT();
	}
	OP(DATA_DROP) :
	{
		ci->data_dropped[pc[1]] = true;
		pc += 2;
		NEXT();
	}
	OP(MEMORY_COPY) :
	{
		wrt_slot *o = fp + HI0;
		uint64_t dst = (uint32_t)o[0], s = (uint32_t)o[1], n = (uint32_t)o[2];
		if (WRT_UNLIKELY(s + n > mem_len || dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, s + n > mem_len ? s : dst, n, mem_len);
			goto out;
		}
		if (n)
			memmove(mem + dst, mem + s, (size_t)n); /* n <= mem_len */
		pc += 1;
		NEXT();
	}
	OP(MEMORY_FILL) :
	{
		wrt_slot *o = fp + HI0;
		uint64_t dst = (uint32_t)o[0], n = (uint32_t)o[2];
		uint8_t v = (uint8_t)o[1];
		if (WRT_UNLIKELY(dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, dst, n, mem_len);
			goto out;
		}
		if (n)
			memset(mem + dst, v, (size_t)n); /* n <= mem_len */
		pc += 1;
		NEXT();
	}
	OP(TABLE_GET) :
	{
		wrt_slot *o = fp + HI0;
		const struct wrt_table *tab = ci->tables[pc[1]];
		uint32_t i = (uint32_t)o[0];
		if (WRT_UNLIKELY(i >= tab->size)) {
			st = trap_table(err, cur, pc, i, 1, tab->size);
			goto out;
		}
		o[0] = tab->elems[i];
		pc += 2;
		NEXT();
	}
	OP(TABLE_SET) :
	{
		wrt_slot *o = fp + HI0;
		struct wrt_table *tab = ci->tables[pc[1]];
		uint32_t i = (uint32_t)o[0];
		if (WRT_UNLIKELY(i >= tab->size)) {
			st = trap_table(err, cur, pc, i, 1, tab->size);
			goto out;
		}
		tab->elems[i] = o[1];
		pc += 2;
		NEXT();
	}
	OP(TABLE_INIT) :
	{
		wrt_slot *o = fp + HI0;
		uint32_t e = pc[1];
		struct wrt_table *tab = ci->tables[pc[2]];
		uint64_t dst = (uint32_t)o[0], s = (uint32_t)o[1], n = (uint32_t)o[2];
		uint64_t elen = ci->elem_dropped[e] ? 0 : ci->mod->elems[e].count;
		if (WRT_UNLIKELY(s + n > elen || dst + n > tab->size)) {
			st = trap_table(err, cur, pc, dst, n, tab->size);
			goto out;
		}
		if (n)
			memcpy(tab->elems + dst, ci->elem_items[e] + s,
			       (size_t)n * 8); /* n <= size */
		pc += 3;
		NEXT();
	}
	OP(ELEM_DROP) :
	{
		ci->elem_dropped[pc[1]] = true;
		pc += 2;
		NEXT();
	}
	OP(TABLE_COPY) :
	{
		wrt_slot *o = fp + HI0;
		struct wrt_table *td = ci->tables[pc[1]];
		const struct wrt_table *ts = ci->tables[pc[2]];
		uint64_t dst = (uint32_t)o[0], s = (uint32_t)o[1], n = (uint32_t)o[2];
		if (WRT_UNLIKELY(s + n > ts->size || dst + n > td->size)) {
			st = trap_table(err, cur, pc, s + n > ts->size ? s : dst, n,
					s + n > ts->size ? ts->size : td->size);
			goto out;
		}
		if (n)
			memmove(td->elems + dst, ts->elems + s, (size_t)n * 8); /* n <= size */
		pc += 3;
		NEXT();
	}
	OP(TABLE_GROW) :
	{
		wrt_slot *o = fp + HI0;
		struct wrt_table *tab = ci->tables[pc[1]];
		uint32_t old;
		if (wrt_table_grow(tab, (uint32_t)o[1], o[0], &old) == K32_OK)
			o[0] = old;
		else
			o[0] = 0xFFFFFFFFu;
		pc += 2;
		NEXT();
	}
	OP(TABLE_SIZE) :
	{
		fp[HI0] = ci->tables[pc[1]]->size;
		pc += 2;
		NEXT();
	}
	OP(TABLE_FILL) :
	{
		wrt_slot *o = fp + HI0;
		struct wrt_table *tab = ci->tables[pc[1]];
		uint64_t i = (uint32_t)o[0], n = (uint32_t)o[2];
		uint64_t v = o[1];
		if (WRT_UNLIKELY(i + n > tab->size)) {
			st = trap_table(err, cur, pc, i, n, tab->size);
			goto out;
		}
		for (uint64_t k = 0; k < n; k++)
			tab->elems[i + k] = v;
		pc += 2;
		NEXT();
	}
	OP(REF_IS_NULL) :
	{
		fp[HI0] = fp[pc[1]] == 0;
		pc += 2;
		NEXT();
	}
	/* ---- a loop's repeated test on a byte it loads (`while (*p != c)`, rotated) ---- */
#define LD8BR(name, cop, addr, len)                                                                \
	OP(name) :                                                                                 \
	{                                                                                          \
		uint64_t ea = (addr) + pc[2];                                                      \
		MEM_CHECK(ea, 1);                                                                  \
		uint32_t v = mem[ea];                                                              \
		fp[HI0] = v;                                                                       \
		if (v cop pc[len - 3]) {                                                           \
			CHARGE_JUMP(pc[len - 1], (len - 2) + (int32_t)pc[len - 2]);                \
		} else {                                                                           \
			pc += len;                                                                 \
		}                                                                                  \
		NEXT();                                                                            \
	}
#define LD8_ADDR   ((uint64_t)(uint32_t)fp[pc[1]])
#define LD8_ADDR_A ((uint64_t)(uint32_t)((uint32_t)fp[pc[1]] + pc[3]))
	LD8BR(LD8BR_EQ, ==, LD8_ADDR, 6)
	LD8BR(LD8BR_NE, !=, LD8_ADDR, 6)
	LD8BR(LD8BR_EQ_A, ==, LD8_ADDR_A, 7)
	LD8BR(LD8BR_NE_A, !=, LD8_ADDR_A, 7)
	/* ---- float compare and branch: a mask of <, ==, > (NaN sets none), maybe negated ---- */
#define FBR(name, T, bexpr, ci)                                                                    \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##T a = GET_##T(fp[HI0]), b = (bexpr);                                        \
		uint32_t r = (a < b ? WRT_FC_LT : 0u) | (a == b ? WRT_FC_EQ : 0u) |                \
			     (a > b ? WRT_FC_GT : 0u);                                             \
		if (((r & pc[ci]) != 0) != ((pc[ci] & WRT_FC_NOT) != 0)) {                         \
			CHARGE_JUMP(pc[ci + 2], (ci + 1) + (int32_t)pc[ci + 1]);                   \
		} else {                                                                           \
			pc += ci + 3;                                                              \
		}                                                                                  \
		NEXT();                                                                            \
	}
	FBR(FBR_F32, F32, GET_F32(fp[pc[1]]), 2)
	FBR(FBR_F32_I, F32, wrt_f32_from(pc[1]), 2)
	FBR(FBR_F64, F64, GET_F64(fp[pc[1]]), 2)
	FBR(FBR_F64_I, F64, wrt_f64_from((uint64_t)pc[1] | ((uint64_t)pc[2] << 32)), 3)
	OP(ADD2_I) :
	{
		SET_U32(fp[HI0], (uint32_t)fp[HI0] + pc[1]);
		SET_U32(fp[pc[2]], (uint32_t)fp[pc[2]] + pc[3]);
		pc += 4;
		NEXT();
	}
	OP(I32_RSUB_I) :
	{
		SET_U32(fp[HI0], pc[2] - (uint32_t)fp[pc[1]]);
		pc += 3;
		NEXT();
	}
	OP(REF_FUNC) :
	{
		fp[HI0] = (uint64_t)(uintptr_t)ci->funcs[pc[1]];
		pc += 2;
		NEXT();
	}
#if !(defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS))
default:
	st = k32_err_set(err, K32_ERR_INTERNAL, "wasm", "bad compiled op %" PRIu32 ": runtime bug",
			 pc[0] & 0xFFFFu);
	goto out;
}
#endif

do_call:
{
	wrt_slot *nfp = fp + call_base;
	if (WRT_UNLIKELY(!callee->func)) {
		/* host call: args are read and results written straight on the value stack
		 * (results just above the args, then moved down); no copy, no allocation */
		const struct k32_hostfn_def *hd = callee->host;
		uint32_t np = callee->nparams, nr = callee->type->nresults;
		struct k32_hostcall hc;
		if (WRT_UNLIKELY(nfp + np + nr > stack_end))
			TRAP("call stack exhausted: host call needs %u slots above %u of %u",
			     np + nr, (uint32_t)(nfp - inst->stack), inst->stack_slots);
		hc.ctx = hd->ctx;
		hc.instance_user = ci->user;
		hc.mem = mem;
		hc.mem_len = mem_len;
		hc.args = nfp;
		hc.results = nfp + np;
		hc.err = err;
		k32_status_t hs = hd->fn(&hc);
		if (WRT_UNLIKELY(hs != K32_OK)) {
			st = wrt_host_failed(callee, hs, err);
			goto out;
		}
		for (uint32_t i = 0; i < nr; i++)
			nfp[i] = nfp[np + i];
		LOAD_CTX();
		pc = call_ret;
		if (WRT_UNLIKELY(inst->lim.watch &&
				 atomic_load_explicit(inst->lim.watch->stop, memory_order_relaxed)))
			goto host_check;
		NEXT();
	}
	if (WRT_UNLIKELY(depth + 1 >= nframes || nfp + callee->max_slots > stack_end))
		TRAP("call stack exhausted: depth %u of %u frames, %u of %u stack slots", depth + 1,
		     nframes, (uint32_t)(nfp - inst->stack), inst->stack_slots);
	frames[depth].ret_pc = call_ret;
	frames[depth].fp = fp;
	frames[depth].fn = cur;
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	fp = nfp;
	for (uint32_t i = callee->nparams; i < callee->nlocals; i++)
		fp[i] = 0;
	pc = callee->body;
	cur = callee;
	if (WRT_UNLIKELY(callee->inst != ci)) {
		ci = callee->inst;
		LOAD_CTX();
	}
	CHARGE_NEXT(callee->entry_gas); /* the entry region: one dispatch less than a GAS op */
}

/* clang-format off */
slice_end:
	/* the slice is used up (or the budget): refill and ask the watch, then dispatch pc */
	gas = slice_next(&slice, gas, err);
	if (WRT_UNLIKELY(gas < 0))
		goto out_stop;
	NEXT();

host_check:
	/* a stop request came while a host function ran: a check point */
	slice.stopped = watch_check(inst->lim.watch, err);
	if (slice.stopped)
		goto out_stop;
	NEXT();

out_stop:
	if (!slice.out_of_gas) {
		st = stopped_at(err, cur, pc, slice.stopped);
		goto out;
	}
	st = trap(err, cur, pc,
		  "out of gas after %llu units: raise kube32.io/execution-budget "
		  "(kube32-cli --budget, kube32-wasm --gas)",
		  (unsigned long long)budget);
out:
	inst->gas_used = metered ? budget - slice.reserve - (uint64_t)(gas < 0 ? 0 : gas) : 0;
	inst->max_depth = max_depth;
	return st;
/* clang-format on */
}
