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

#include <stdarg.h>
#include <stdio.h>

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
#define SET_U32(s, v) ((s) = (uint32_t)(v))
#define SET_U64(s, v) ((s) = (uint64_t)(v))
#define SET_F32(s, v) ((s) = wrt_f32_bits(v))
#define SET_F64(s, v) ((s) = wrt_f64_bits(v))
#define CANON_F32(r) ((canon && (r) != (r)) ? wrt_f32_from(0x7FC00000u) : (r))
#define CANON_F64(r) ((canon && (r) != (r)) ? wrt_f64_from(0x7FF8000000000000ull) : (r))
/* clang-format on */

#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
#define OP(name) L_##name
#define NEXT()	 goto *labels[*pc++]
#else
#define OP(name) case WRT_OP_##name
#define NEXT()	 goto dispatch
#endif

/* Trap with a message: what (printf-style), then where. Out of line: the slow path. */
static k32_status_t __attribute__((noinline, cold))
trap(struct k32_err *err, const struct wrt_funcinst *fn, const uint32_t *pc, const char *fmt, ...)
{
	char what[112];
	char where[48];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	wrt_func_label(fn, where, sizeof(where));
	const struct wrt_module *m = fn->inst->mod;
	uint32_t off = wrt_srcmap_find(m, (uint32_t)(pc - 1 - m->code));
	return k32_err_set(err, K32_ERR_TRAP, "wasm", "%s (in %s at byte %u)", what, where, off);
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

k32_status_t WRT_EXEC_NAME(struct wrt_instance *inst, const struct wrt_funcinst *fn, wrt_slot *base,
			   struct k32_err *err)
{
#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
	/* clang-format off */
	static const void *const labels[WRT_OP__COUNT] = {
#define WRT_X_NUM(name, byte, sig, kind, tin, tout, expr) [WRT_OP_##name] = &&L_##name,
#define WRT_X_MEM(name, byte, sig, size, align) [WRT_OP_##name] = &&L_##name,
#define WRT_X_INT(name, nimm, comment) [WRT_OP_##name] = &&L_##name,
		WRT_NUMERIC(WRT_X_NUM)
		WRT_NUMERIC_FC(WRT_X_NUM)
		WRT_MEMOPS(WRT_X_MEM)
		WRT_INTERNAL(WRT_X_INT)
#undef WRT_X_NUM
#undef WRT_X_MEM
#undef WRT_X_INT
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
	int64_t gas = metered ? (int64_t)budget : INT64_MAX;
	const struct wrt_funcinst *cur = fn;
	const struct wrt_funcinst *callee;
	struct wrt_instance *ci = fn->inst;
	struct wrt_global **globals = ci->globals;
	uint8_t *mem = NULL;
	uint64_t mem_len = 0;
	k32_status_t st = K32_OK;
	wrt_slot *fp = base, *sp;
	const uint32_t *pc;

#define LOAD_CTX()                                                                                 \
	do {                                                                                       \
		globals = ci->globals;                                                             \
		mem = ci->mem ? ci->mem->data : NULL;                                              \
		mem_len = ci->mem ? ci->mem->len : 0;                                              \
	} while (0)

	LOAD_CTX();
	if (WRT_UNLIKELY(fp + fn->func->max_slots > stack_end)) {
		st = k32_err_set(err, K32_ERR_TRAP, "wasm",
				 "call stack exhausted: entry needs %u slots, value stack holds %u "
				 "(%u bytes); raise --stack",
				 fn->func->max_slots, inst->stack_slots, inst->stack_slots * 8);
		goto out;
	}
	for (uint32_t i = fn->type->nparams; i < fn->func->nlocals; i++)
		fp[i] = 0;
	sp = fp + fn->func->nlocals;
	pc = fn->code;

#if defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS)
	NEXT();
#else
dispatch:
#if defined(WRT_COUNT_OPS)
	counts[*pc]++;
#endif
	switch (*pc++) {
#endif

	/* ---- numeric ops, generated from the list ---- */
#define WRT_H_UN(name, tin, tout, expr)                                                            \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(sp[-1]);                                                  \
		SET_##tout(sp[-1], expr);                                                          \
		NEXT();                                                                            \
	}
#define WRT_H_UNF(name, tin, tout, expr)                                                           \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(sp[-1]);                                                  \
		TYPE_##tout r = (expr);                                                            \
		SET_##tout(sp[-1], CANON_##tout(r));                                               \
		NEXT();                                                                            \
	}
#define WRT_H_BIN(name, tin, tout, expr)                                                           \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin b = GET_##tin(sp[-1]);                                                  \
		TYPE_##tin a = GET_##tin(sp[-2]);                                                  \
		sp--;                                                                              \
		SET_##tout(sp[-1], expr);                                                          \
		NEXT();                                                                            \
	}
#define WRT_H_BINF(name, tin, tout, expr)                                                          \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin b = GET_##tin(sp[-1]);                                                  \
		TYPE_##tin a = GET_##tin(sp[-2]);                                                  \
		TYPE_##tout r = (expr);                                                            \
		sp--;                                                                              \
		SET_##tout(sp[-1], CANON_##tout(r));                                               \
		NEXT();                                                                            \
	}
#define WRT_H_SPECIAL(name, tin, tout, expr)
#define WRT_X(name, byte, sig, kind, tin, tout, expr) WRT_H_##kind(name, tin, tout, expr)
	WRT_NUMERIC(WRT_X)
	WRT_NUMERIC_FC(WRT_X)
#undef WRT_X

	/* ---- integer division: explicit traps ---- */
#define DIV_CHECK(b)                                                                               \
	if (WRT_UNLIKELY((b) == 0)) {                                                              \
		st = trap(err, cur, pc, "integer divide by zero");                                 \
		goto out;                                                                          \
	}
	OP(I32_DIV_S) :
	{
		int32_t b = GET_S32(sp[-1]), a = GET_S32(sp[-2]);
		DIV_CHECK(b);
		if (WRT_UNLIKELY(a == INT32_MIN && b == -1)) {
			st = trap(err, cur, pc, "integer overflow: -2147483648 / -1");
			goto out;
		}
		sp--;
		SET_U32(sp[-1], (uint32_t)(a / b));
		NEXT();
	}
	OP(I32_DIV_U) :
	{
		uint32_t b = GET_U32(sp[-1]), a = GET_U32(sp[-2]);
		DIV_CHECK(b);
		sp--;
		SET_U32(sp[-1], a / b);
		NEXT();
	}
	OP(I32_REM_S) :
	{
		int32_t b = GET_S32(sp[-1]), a = GET_S32(sp[-2]);
		DIV_CHECK(b);
		sp--;
		SET_U32(sp[-1], b == -1 ? 0 : (uint32_t)(a % b));
		NEXT();
	}
	OP(I32_REM_U) :
	{
		uint32_t b = GET_U32(sp[-1]), a = GET_U32(sp[-2]);
		DIV_CHECK(b);
		sp--;
		SET_U32(sp[-1], a % b);
		NEXT();
	}
	OP(I64_DIV_S) :
	{
		int64_t b = GET_S64(sp[-1]), a = GET_S64(sp[-2]);
		DIV_CHECK(b);
		if (WRT_UNLIKELY(a == INT64_MIN && b == -1)) {
			st = trap(err, cur, pc, "integer overflow: -9223372036854775808 / -1");
			goto out;
		}
		sp--;
		sp[-1] = (uint64_t)(a / b);
		NEXT();
	}
	OP(I64_DIV_U) :
	{
		uint64_t b = sp[-1], a = sp[-2];
		DIV_CHECK(b);
		sp--;
		sp[-1] = a / b;
		NEXT();
	}
	OP(I64_REM_S) :
	{
		int64_t b = GET_S64(sp[-1]), a = GET_S64(sp[-2]);
		DIV_CHECK(b);
		sp--;
		sp[-1] = b == -1 ? 0 : (uint64_t)(a % b);
		NEXT();
	}
	OP(I64_REM_U) :
	{
		uint64_t b = sp[-1], a = sp[-2];
		DIV_CHECK(b);
		sp--;
		sp[-1] = a % b;
		NEXT();
	}

	/* ---- float to int truncation: NaN and overflow trap ---- */
#define TRUNC(name, tin, tout, lo_ok, hi, ctype)                                                   \
	OP(name) :                                                                                 \
	{                                                                                          \
		TYPE_##tin a = GET_##tin(sp[-1]);                                                  \
		if (WRT_UNLIKELY(a != a)) {                                                        \
			st = trap(err, cur, pc, "invalid conversion to integer: NaN");             \
			goto out;                                                                  \
		}                                                                                  \
		if (WRT_UNLIKELY(!((lo_ok) && a < (hi)))) {                                        \
			st = trap(err, cur, pc, "integer overflow: %g does not fit " #ctype,       \
				  (double)a);                                                      \
			goto out;                                                                  \
		}                                                                                  \
		SET_##tout(sp[-1], (ctype)a);                                                      \
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
#define LOAD(name, n, ctype, conv)                                                                 \
	OP(name) :                                                                                 \
	{                                                                                          \
		uint64_t ea = (uint64_t)(uint32_t)sp[-1] + *pc;                                    \
		if (WRT_UNLIKELY(ea + (n) > mem_len)) {                                            \
			st = trap_mem(err, cur, pc, ea, n, mem_len);                               \
			goto out;                                                                  \
		}                                                                                  \
		ctype v;                                                                           \
		memcpy(&v, mem + ea, n);                                                           \
		sp[-1] = conv;                                                                     \
		pc++;                                                                              \
		NEXT();                                                                            \
	}
	LOAD(I32_LOAD, 4, uint32_t, v)
	LOAD(I64_LOAD, 8, uint64_t, v)
	LOAD(F32_LOAD, 4, uint32_t, v)
	LOAD(F64_LOAD, 8, uint64_t, v)
	LOAD(I32_LOAD8_S, 1, int8_t, (uint32_t)(int32_t)v)
	LOAD(I32_LOAD8_U, 1, uint8_t, v)
	LOAD(I32_LOAD16_S, 2, int16_t, (uint32_t)(int32_t)v)
	LOAD(I32_LOAD16_U, 2, uint16_t, v)
	LOAD(I64_LOAD8_S, 1, int8_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD8_U, 1, uint8_t, v)
	LOAD(I64_LOAD16_S, 2, int16_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD16_U, 2, uint16_t, v)
	LOAD(I64_LOAD32_S, 4, int32_t, (uint64_t)(int64_t)v)
	LOAD(I64_LOAD32_U, 4, uint32_t, v)
#define STORE(name, n, ctype)                                                                      \
	OP(name) :                                                                                 \
	{                                                                                          \
		uint64_t ea = (uint64_t)(uint32_t)sp[-2] + *pc;                                    \
		if (WRT_UNLIKELY(ea + (n) > mem_len)) {                                            \
			st = trap_mem(err, cur, pc, ea, n, mem_len);                               \
			goto out;                                                                  \
		}                                                                                  \
		ctype v = (ctype)sp[-1];                                                           \
		memcpy(mem + ea, &v, n);                                                           \
		sp -= 2;                                                                           \
		pc++;                                                                              \
		NEXT();                                                                            \
	}
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
		st = trap(err, cur, pc, "unreachable executed");
		goto out;
	}
	OP(GAS) :
	{
		gas -= (int64_t)*pc++;
		if (WRT_UNLIKELY(gas < 0)) {
			st = trap(err, cur, pc - 1,
				  "out of gas: budget of %llu units used up; raise --gas or turn "
				  "metering off",
				  (unsigned long long)budget);
			goto out;
		}
		NEXT();
	}
	OP(BR) :
	{
		pc += (int32_t)*pc;
		NEXT();
	}
	OP(BR_MOVE) :
	{
		uint32_t dst = pc[1], n = pc[2];
		wrt_slot *src = sp - n;
		for (uint32_t i = 0; i < n; i++)
			fp[dst + i] = src[i];
		sp = fp + dst + n;
		pc += (int32_t)*pc;
		NEXT();
	}
	OP(BR_IF) :
	{
		if ((uint32_t) * --sp)
			pc += (int32_t)*pc;
		else
			pc++;
		NEXT();
	}
	OP(BR_IF_MOVE) :
	{
		if ((uint32_t) * --sp) {
			uint32_t dst = pc[1], n = pc[2];
			wrt_slot *src = sp - n;
			for (uint32_t i = 0; i < n; i++)
				fp[dst + i] = src[i];
			sp = fp + dst + n;
			pc += (int32_t)*pc;
		} else {
			pc += 3;
		}
		NEXT();
	}
	OP(BR_IFZ) :
	{
		if (!(uint32_t) * --sp)
			pc += (int32_t)*pc;
		else
			pc++;
		NEXT();
	}
	OP(BR_TABLE) :
	{
		uint32_t n = pc[0], arity = pc[1], src = pc[2];
		uint32_t idx = (uint32_t) * --sp;
		if (idx > n)
			idx = n;
		const uint32_t *e = pc + 3 + 2 * idx;
		uint32_t dst = e[1];
		if (dst != src) {
			for (uint32_t i = 0; i < arity; i++)
				fp[dst + i] = fp[src + i];
			sp = fp + dst + arity;
		}
		pc = e + (int32_t)e[0];
		NEXT();
	}
	OP(RETURN) :
	{
		uint32_t n = *pc;
		wrt_slot *src = sp - n;
		for (uint32_t i = 0; i < n; i++)
			fp[i] = src[i];
		sp = fp + n;
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
		callee = ci->funcs[*pc++];
		goto do_call;
	}
	OP(CALL_INDIRECT) :
	{
		const struct wrt_module *m = ci->mod;
		const struct wrt_functype *want = &m->types[m->types[pc[0]].canon];
		const struct wrt_table *tab = ci->tables[pc[1]];
		uint32_t idx = (uint32_t) * --sp;
		pc += 2;
		if (WRT_UNLIKELY(idx >= tab->size)) {
			st = trap(err, cur, pc, "undefined element: index %u, table size %u", idx,
				  tab->size);
			goto out;
		}
		callee = (const struct wrt_funcinst *)(uintptr_t)tab->elems[idx];
		if (WRT_UNLIKELY(!callee)) {
			st = trap(err, cur, pc, "uninitialized element %u", idx);
			goto out;
		}
		if (WRT_UNLIKELY(callee->type != want && !wrt_functype_eq(callee->type, want))) {
			st = trap(err, cur, pc, "indirect call type mismatch at table index %u",
				  idx);
			goto out;
		}
		goto do_call;
	}
	OP(DROP) :
	{
		sp--;
		NEXT();
	}
	OP(SELECT) :
	{
		uint32_t c = (uint32_t)sp[-1];
		sp -= 2;
		if (!c)
			sp[-1] = sp[0];
		NEXT();
	}
	OP(LOCAL_GET) :
	{
		*sp++ = fp[*pc++];
		NEXT();
	}
	OP(LOCAL_SET) :
	{
		fp[*pc++] = *--sp;
		NEXT();
	}
	OP(LOCAL_TEE) :
	{
		fp[*pc++] = sp[-1];
		NEXT();
	}
	OP(GLOBAL_GET) :
	{
		*sp++ = globals[*pc++]->val;
		NEXT();
	}
	OP(GLOBAL_SET) :
	{
		globals[*pc++]->val = *--sp;
		NEXT();
	}
	OP(CONST32) :
	{
		*sp++ = *pc++;
		NEXT();
	}
	OP(CONST64) :
	{
		*sp++ = (uint64_t)pc[0] | ((uint64_t)pc[1] << 32);
		pc += 2;
		NEXT();
	}
	OP(MEMORY_SIZE) :
	{
		*sp++ = ci->mem->pages;
		NEXT();
	}
	OP(MEMORY_GROW) :
	{
		uint32_t old;
		if (wrt_memory_grow(ci->mem, (uint32_t)sp[-1], &old) == K32_OK)
			sp[-1] = old;
		else
			sp[-1] = 0xFFFFFFFFu;
		LOAD_CTX();
		NEXT();
	}
	OP(MEMORY_INIT) :
	{
		const struct wrt_data *d = &ci->mod->datas[*pc];
		uint64_t n = (uint32_t)sp[-1], s = (uint32_t)sp[-2], dst = (uint32_t)sp[-3];
		uint64_t dlen = ci->data_dropped[*pc] ? 0 : d->len;
		sp -= 3;
		pc++;
		if (WRT_UNLIKELY(s + n > dlen || dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, dst, n, mem_len);
			goto out;
		}
		if (n)
			memcpy(mem + dst, d->bytes + s, n);
		NEXT();
	}
	OP(DATA_DROP) :
	{
		ci->data_dropped[*pc++] = true;
		NEXT();
	}
	OP(MEMORY_COPY) :
	{
		uint64_t n = (uint32_t)sp[-1], s = (uint32_t)sp[-2], dst = (uint32_t)sp[-3];
		sp -= 3;
		if (WRT_UNLIKELY(s + n > mem_len || dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, s + n > mem_len ? s : dst, n, mem_len);
			goto out;
		}
		if (n)
			memmove(mem + dst, mem + s, n);
		NEXT();
	}
	OP(MEMORY_FILL) :
	{
		uint64_t n = (uint32_t)sp[-1], dst = (uint32_t)sp[-3];
		uint8_t v = (uint8_t)sp[-2];
		sp -= 3;
		if (WRT_UNLIKELY(dst + n > mem_len)) {
			st = trap_mem(err, cur, pc, dst, n, mem_len);
			goto out;
		}
		if (n)
			memset(mem + dst, v, n);
		NEXT();
	}
	OP(TABLE_GET) :
	{
		const struct wrt_table *tab = ci->tables[*pc++];
		uint32_t i = (uint32_t)sp[-1];
		if (WRT_UNLIKELY(i >= tab->size)) {
			st = trap_table(err, cur, pc, i, 1, tab->size);
			goto out;
		}
		sp[-1] = tab->elems[i];
		NEXT();
	}
	OP(TABLE_SET) :
	{
		struct wrt_table *tab = ci->tables[*pc++];
		uint32_t i = (uint32_t)sp[-2];
		if (WRT_UNLIKELY(i >= tab->size)) {
			st = trap_table(err, cur, pc, i, 1, tab->size);
			goto out;
		}
		tab->elems[i] = sp[-1];
		sp -= 2;
		NEXT();
	}
	OP(TABLE_INIT) :
	{
		uint32_t e = pc[0];
		struct wrt_table *tab = ci->tables[pc[1]];
		uint64_t n = (uint32_t)sp[-1], s = (uint32_t)sp[-2], dst = (uint32_t)sp[-3];
		uint64_t elen = ci->elem_dropped[e] ? 0 : ci->mod->elems[e].count;
		sp -= 3;
		pc += 2;
		if (WRT_UNLIKELY(s + n > elen || dst + n > tab->size)) {
			st = trap_table(err, cur, pc, dst, n, tab->size);
			goto out;
		}
		if (n)
			memcpy(tab->elems + dst, ci->elem_items[e] + s, n * 8);
		NEXT();
	}
	OP(ELEM_DROP) :
	{
		ci->elem_dropped[*pc++] = true;
		NEXT();
	}
	OP(TABLE_COPY) :
	{
		struct wrt_table *td = ci->tables[pc[0]];
		const struct wrt_table *ts = ci->tables[pc[1]];
		uint64_t n = (uint32_t)sp[-1], s = (uint32_t)sp[-2], dst = (uint32_t)sp[-3];
		sp -= 3;
		pc += 2;
		if (WRT_UNLIKELY(s + n > ts->size || dst + n > td->size)) {
			st = trap_table(err, cur, pc, s + n > ts->size ? s : dst, n,
					s + n > ts->size ? ts->size : td->size);
			goto out;
		}
		if (n)
			memmove(td->elems + dst, ts->elems + s, n * 8);
		NEXT();
	}
	OP(TABLE_GROW) :
	{
		struct wrt_table *tab = ci->tables[*pc++];
		uint32_t old;
		uint64_t init = sp[-2];
		sp--;
		if (wrt_table_grow(tab, (uint32_t)sp[0], init, &old) == K32_OK)
			sp[-1] = old;
		else
			sp[-1] = 0xFFFFFFFFu;
		NEXT();
	}
	OP(TABLE_SIZE) :
	{
		*sp++ = ci->tables[*pc++]->size;
		NEXT();
	}
	OP(TABLE_FILL) :
	{
		struct wrt_table *tab = ci->tables[*pc++];
		uint64_t n = (uint32_t)sp[-1], i = (uint32_t)sp[-3];
		uint64_t v = sp[-2];
		sp -= 3;
		if (WRT_UNLIKELY(i + n > tab->size)) {
			st = trap_table(err, cur, pc, i, n, tab->size);
			goto out;
		}
		for (uint64_t k = 0; k < n; k++)
			tab->elems[i + k] = v;
		NEXT();
	}
	OP(REF_IS_NULL) :
	{
		sp[-1] = sp[-1] == 0;
		NEXT();
	}
	OP(REF_FUNC) :
	{
		*sp++ = (uint64_t)(uintptr_t)ci->funcs[*pc++];
		NEXT();
	}
#if !(defined(WRT_DISPATCH_GOTO) && !defined(WRT_COUNT_OPS))
default:
	st = k32_err_set(err, K32_ERR_INTERNAL, "wasm", "bad compiled op %u: runtime bug", pc[-1]);
	goto out;
}
#endif

do_call:
{
	const struct wrt_functype *ft = callee->type;
	if (!callee->func) {
		st = wrt_call_host(ci, callee, sp - ft->nparams, err);
		if (WRT_UNLIKELY(st != K32_OK))
			goto out;
		sp += (int32_t)ft->nresults - (int32_t)ft->nparams;
		LOAD_CTX();
		NEXT();
	}
	wrt_slot *nfp = sp - ft->nparams;
	if (WRT_UNLIKELY(depth + 1 >= nframes || nfp + callee->func->max_slots > stack_end)) {
		st = trap(err, cur, pc,
			  "call stack exhausted: depth %u of %u frames, %u of %u stack slots",
			  depth + 1, nframes, (uint32_t)(sp - inst->stack), inst->stack_slots);
		goto out;
	}
	frames[depth].ret_pc = pc;
	frames[depth].fp = fp;
	frames[depth].fn = cur;
	depth++;
	if (depth > max_depth)
		max_depth = depth;
	fp = nfp;
	for (uint32_t i = ft->nparams; i < callee->func->nlocals; i++)
		fp[i] = 0;
	sp = fp + callee->func->nlocals;
	pc = callee->code;
	cur = callee;
	if (callee->inst != ci) {
		ci = callee->inst;
		LOAD_CTX();
	}
	NEXT();
}

out : inst->gas_used = metered ? budget - (uint64_t)(gas < 0 ? 0 : gas) : 0;
if (gas < 0)
	inst->gas_used = budget;
inst->max_depth = max_depth;
return st;
}
