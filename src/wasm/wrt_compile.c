/*
 * wrt_compile.c - the loader's compiler: validates and compiles one instruction at a time
 * into the word code described in wrt_ops.h (body_op dispatches to one function per opcode
 * group), with the peepholes that look only at the last op emitted.
 *
 * Gas: a GAS op opens each straight-line region (function entry, loop header, if/else arms,
 * merge points after block ends that are branch targets); its immediate counts the Wasm
 * instructions up to the next such point.
 */
#include "wasm/wrt_ld.h"

#include <stdio.h>
#include <string.h>

/* ---- code emission ------------------------------------------------------------------- */

void wrt_ld_emit(struct wrt_ld *ld, uint32_t w)
{
	if (ld->st)
		return;
	if (ld->ncode == ld->code_cap) {
		uint32_t ncap = ld->code_cap ? ld->code_cap * 2 : 1024;
		uint32_t *p =
		    k32_realloc(&ld->scratch, ld->code, (size_t)ld->code_cap * 4, (size_t)ncap * 4);
		if (!p) {
			wrt_ld_no_memory(ld, ld->pos);
			return;
		}
		ld->code = p;
		ld->code_cap = ncap;
	}
	ld->code[ld->ncode++] = w;
}

/* An op word: the op in the low 16 bits, a slot in the high 16. */
void wrt_ld_emit_op(struct wrt_ld *ld, uint32_t op, uint32_t slot)
{
	wrt_ld_emit(ld, op | (slot << 16));
}

void wrt_ld_srcmap(struct wrt_ld *ld, size_t wasm_off)
{
	if (ld->st)
		return;
	if (ld->nsm == ld->sm_cap) {
		uint32_t ncap = ld->sm_cap ? ld->sm_cap * 2 : 256;
		struct wrt_srcmap *p =
		    k32_realloc(&ld->scratch, ld->sm, (size_t)ld->sm_cap * sizeof(*p),
				(size_t)ncap * sizeof(*p));
		if (!p) {
			wrt_ld_no_memory(ld, ld->pos);
			return;
		}
		ld->sm = p;
		ld->sm_cap = ncap;
	}
	ld->sm[ld->nsm].code = ld->ncode;
	ld->sm[ld->nsm].wasm = (uint32_t)wasm_off;
	ld->nsm++;
}

struct wrt_ctl *wrt_ld_top(struct wrt_ld *ld)
{
	return &ld->ctl[ld->cd - 1];
}

bool wrt_ld_live(struct wrt_ld *ld)
{
	struct wrt_ctl *c = wrt_ld_top(ld);
	return !c->dead && !c->unreachable;
}

/* Code after a label may be reached from elsewhere: no peephole may look back across it. */
void wrt_ld_label_here(struct wrt_ld *ld)
{
	ld->last_end = WRT_NO_INDEX;
	ld->wr_end = WRT_NO_INDEX;
	ld->cp_end = WRT_NO_INDEX;
	ld->inc_end = WRT_NO_INDEX;
}

/*
 * Opens a new straight-line region: a GAS op whose count later instructions increment.
 * fresh: always a new one (loop headers), else an empty region's op is reused.
 */
static void gas_leader(struct wrt_ld *ld, size_t wasm_off, bool fresh)
{
	wrt_ld_label_here(ld);
	if (!ld->m->metered || !wrt_ld_live(ld))
		return;
	if (!fresh && ld->gas_pos != WRT_NO_INDEX && ld->gas_pos == ld->ncode - 1)
		return; /* nothing since the last one: reuse it */
	wrt_ld_srcmap(ld, wasm_off);
	wrt_ld_emit(ld, WRT_OP_GAS);
	wrt_ld_emit(ld, 0);
	ld->gas_pos = ld->ncode - 1;
}

/* Resolves every word of a forward-reference chain to target (offsets relative to the word). */
static void patch_chain(struct wrt_ld *ld, uint32_t head, uint32_t target)
{
	while (head != WRT_NO_INDEX && !ld->st) {
		uint32_t next = ld->code[head];
		ld->code[head] = target - head;
		head = next;
	}
}

/* ---- function bodies ------------------------------------------------------------------- */

struct wrt_numinfo {
	uint16_t op;	 /* enum wrt_op */
	const char *sig; /* "ii:i" */
	bool has_imm;	 /* a NAME_I variant exists (binary ops) */
};

/* clang-format off */
#define WRT_HASI_BIN 1
#define WRT_HASI_BINF 1
#define WRT_HASI_UN 0
#define WRT_HASI_UNF 0
#define WRT_HASI_SPECIAL 0
#define WRT_HASI_DIVOP 1
static const struct wrt_numinfo wrt_num_by_byte[256] = {
#define WRT_X(name, byte, sig, kind, tin, tout, expr) \
	[byte] = {WRT_OP_##name, sig, WRT_HASI_##kind},
	WRT_NUMERIC(WRT_X)
#undef WRT_X
};
static const struct wrt_numinfo wrt_fc_by_sub[8] = {
#define WRT_X(name, byte, sig, kind, tin, tout, expr) [byte] = {WRT_OP_##name, sig, 0},
	WRT_NUMERIC_FC(WRT_X)
#undef WRT_X
};
struct wrt_meminfo {
	uint16_t op;
	const char *sig;
	uint8_t align;
};
static const struct wrt_meminfo wrt_mem_by_byte[0x3F] = {
#define WRT_X(name, byte, sig, size, align, kind) [byte] = {WRT_OP_##name, sig, align},
	WRT_MEMOPS(WRT_X)
#undef WRT_X
};
/* clang-format on */

/* clang-format off */
const uint8_t wrt_cmp_inverse[WRT_CMP__COUNT] = {
#define WRT_X(name, op, type, inv) [WRT_CMP_##name] = WRT_CMP_##inv,
	WRT_CMP32(WRT_X)
#undef WRT_X
};
const uint8_t wrt_cmp_swapped[WRT_CMP__COUNT] = {
	[WRT_CMP_EQ] = WRT_CMP_EQ,     [WRT_CMP_NE] = WRT_CMP_NE,
	[WRT_CMP_LT_S] = WRT_CMP_GT_S, [WRT_CMP_LT_U] = WRT_CMP_GT_U,
	[WRT_CMP_GT_S] = WRT_CMP_LT_S, [WRT_CMP_GT_U] = WRT_CMP_LT_U,
	[WRT_CMP_LE_S] = WRT_CMP_GE_S, [WRT_CMP_LE_U] = WRT_CMP_GE_U,
	[WRT_CMP_GE_S] = WRT_CMP_LE_S, [WRT_CMP_GE_U] = WRT_CMP_LE_U,
};
/* clang-format on */

static uint8_t sig_type(char c)
{
	switch (c) {
	case 'i':
		return WRT_I32;
	case 'I':
		return WRT_I64;
	case 'f':
		return WRT_F32;
	default:
		return WRT_F64;
	}
}

static bool commutes(uint32_t byte)
{
	switch (byte) {
	case 0x46: /* i32.eq */
	case 0x47: /* i32.ne */
	case 0x6A: /* i32.add */
	case 0x6C: /* i32.mul */
	case 0x71: /* i32.and */
	case 0x72: /* i32.or */
	case 0x73: /* i32.xor */
	case 0x51: /* i64.eq */
	case 0x52: /* i64.ne */
	case 0x7C: /* i64.add */
	case 0x7E: /* i64.mul */
	case 0x83: /* i64.and */
	case 0x84: /* i64.or */
	case 0x85: /* i64.xor */
	case 0x5B: /* f32.eq */
	case 0x5C: /* f32.ne */
	case 0x61: /* f64.eq */
	case 0x62: /* f64.ne */
	case 0x92: /* f32.add (NaN payloads may differ: the spec allows any NaN) */
	case 0x94: /* f32.mul */
	case 0xA0: /* f64.add */
	case 0xA2: /* f64.mul */
		return true;
	default:
		return false;
	}
}

/* The op computing the same with its operands swapped (0 if none): commutative ops map to
 * themselves, ordered compares to their mirror (lt <-> gt, le <-> ge). */
static uint32_t swapped(uint32_t byte)
{
	if (commutes(byte))
		return byte;
	switch (byte) {
	case 0x48:
	case 0x49:
	case 0x53:
	case 0x54: /* lt -> gt */
	case 0x4C:
	case 0x4D:
	case 0x57:
	case 0x58: /* le -> ge */
		return byte + 2;
	case 0x4A:
	case 0x4B:
	case 0x55:
	case 0x56: /* gt -> lt */
	case 0x4E:
	case 0x4F:
	case 0x59:
	case 0x5A: /* ge -> le */
		return byte - 2;
	case 0x5D: /* float lt, le -> gt, ge */
	case 0x5F:
	case 0x63:
	case 0x65:
		return byte + 1;
	case 0x5E: /* float gt, ge -> lt, le */
	case 0x60:
	case 0x64:
	case 0x66:
		return byte - 1;
	default:
		return 0;
	}
}

/* Whether constant operand i fits a NAME_I immediate for an op on type t. */
static bool imm_fits(struct wrt_ld *ld, uint32_t i, uint8_t t)
{
	if (ld->vk[i] != VK_CONST)
		return false;
	if (t == WRT_I32 || t == WRT_F32 || t == WRT_F64)
		return true;
	return ld->vhi[i] == (((int32_t)ld->vv[i] < 0) ? 0xFFFFFFFFu : 0);
}

/*
 * Validates a numeric op against its "ab:c" signature and emits it with slot operands.
 * byte: its Wasm byte (0 for 0xFC ops), for commutativity and compare fusion.
 */
static void simple_op(struct wrt_ld *ld, const struct wrt_numinfo *ni, uint32_t byte, size_t off)
{
	const char *sig = ni->sig;
	const char *colon = strchr(sig, ':');
	uint32_t nin = (uint32_t)(colon - sig);
	for (const char *p = colon; p > sig && !ld->st; p--)
		wrt_ld_pop_expect(ld, sig_type(p[-1]), off);
	if (ld->st)
		return;
	uint32_t e = ld->vh; /* first operand */
	bool lv = wrt_ld_live(ld);
	uint32_t start = ld->ncode;
	if (lv && nin == 1) {
		if (byte == 0x45 && wrt_ld_fresh_result(ld, e) && ld->last_cmp >= 0) {
			/* i32.eqz of a fresh i32 compare: invert the compare instead */
			uint32_t inv = wrt_cmp_inverse[ld->last_cmp];
			uint32_t iop = wrt_num_by_byte[0x46 + inv].op + (ld->last_imm ? 1u : 0u);
			ld->code[ld->last_start] = (ld->code[ld->last_start] & 0xFFFF0000u) | iop;
			ld->last_cmp = (int8_t)inv;
			wrt_ld_push(ld, WRT_I32);
			return;
		}
		uint32_t a = wrt_ld_opnd(ld, e);
		start = ld->ncode;
		if (byte == 0x45) { /* i32.eqz is i32.eq with 0, so it can fuse and invert */
			wrt_ld_emit_op(ld, WRT_OP_I32_EQ_I, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a);
			wrt_ld_emit(ld, 0);
			wrt_ld_push(ld, WRT_I32);
			wrt_ld_result_at(ld, start, e);
			ld->last_cmp = 0;
			ld->last_a = a;
			ld->last_b = 0;
			ld->last_imm = true;
			return;
		}
		wrt_ld_emit_op(ld, ni->op, wrt_ld_home(ld, e));
		wrt_ld_emit(ld, a);
	} else if (lv) {
		uint32_t ia = e, ib = e + 1;
		uint8_t t = sig_type(sig[0]);
		bool intop = ni->has_imm; /* a NAME_I form exists */
		if (intop && !imm_fits(ld, ib, t) && imm_fits(ld, ia, t)) {
			uint32_t sw = swapped(byte);
			if (sw) {
				ia = e + 1;
				ib = e;
				byte = sw;
				ni = &wrt_num_by_byte[sw];
			}
		}
		if (byte == 0x6B && !imm_fits(ld, ib, t) && imm_fits(ld, ia, t)) {
			/* i32.sub from a constant (`0 - x`): one op, no constant load */
			uint32_t b = wrt_ld_opnd(ld, ib), imm = ld->vv[ia];
			start = ld->ncode;
			wrt_ld_emit_op(ld, WRT_OP_I32_RSUB_I, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, b);
			wrt_ld_emit(ld, imm);
			ld->last_a = b;
			ld->last_b = imm;
			ld->last_imm = true;
		} else if (intop && imm_fits(ld, ib, t)) {
			uint32_t a = wrt_ld_opnd(ld, ia);
			uint32_t iop = ni->op + 1u, imm = ld->vv[ib];
			if (byte == 0x6B) { /* i32.sub x, k is i32.add x, -k (mod 2^32) */
				iop = WRT_OP_I32_ADD_I;
				imm = 0u - imm;
			}
			start = ld->ncode;
			wrt_ld_emit_op(ld, iop, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a);
			wrt_ld_emit(ld, imm);
			if (t == WRT_F64)
				wrt_ld_emit(ld, ld->vhi[ib]);
			ld->last_a = a;
			ld->last_b = imm;
			ld->last_imm = true;
		} else {
			uint32_t a = wrt_ld_opnd(ld, ia);
			uint32_t b = wrt_ld_opnd(ld, ib);
			start = ld->ncode;
			wrt_ld_emit_op(ld, ni->op, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a | (b << 16));
			ld->last_a = a;
			ld->last_b = b;
			ld->last_imm = false;
		}
	}
	for (const char *p = colon + 1; *p; p++)
		wrt_ld_push(ld, sig_type(*p));
	if (lv) {
		int8_t cmp = byte >= 0x46 && byte <= 0x4F ? (int8_t)(byte - 0x46) : -1;
		uint32_t a = ld->last_a, b = ld->last_b;
		bool imm = ld->last_imm;
		wrt_ld_result_at(ld, start, e);
		ld->last_cmp = cmp;
		ld->last_a = a;
		ld->last_b = b;
		ld->last_imm = imm;
		/* a loop test may read it: non-trapping adds and masks can be repeated */
		uint32_t eop = ld->code[start] & 0xFFFFu;
		if (eop == WRT_OP_I32_ADD || eop == WRT_OP_I32_ADD_I || eop == WRT_OP_I32_AND ||
		    eop == WRT_OP_I32_AND_I) {
			ld->ld_start = start;
			ld->ld_end = ld->ncode;
		}
	}
}

static void need_mem(struct wrt_ld *ld, size_t off)
{
	if (!ld->st && ld->m->nmems == 0)
		wrt_ld_invalid(ld, off, "unknown memory 0");
}

static void zero_byte(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	if (wrt_ld_rd_u8(ld) != 0 && !ld->st)
		wrt_ld_malformed(ld, off, "zero byte expected");
}

static uint32_t rd_table(struct wrt_ld *ld, size_t off)
{
	uint32_t t = wrt_ld_rd_u32(ld);
	if (!ld->st && t >= ld->m->ntables) {
		wrt_ld_invalid(ld, off, "unknown table");
		return 0;
	}
	return t;
}

/* Bulk op: n operands already popped start at entry vh; they go to home slots. */
static void emit_base_op(struct wrt_ld *ld, uint32_t op, uint32_t n, size_t off, bool traps)
{
	if (!wrt_ld_live(ld))
		return;
	wrt_ld_materialize_range(ld, ld->vh, ld->vh + n);
	if (traps)
		wrt_ld_srcmap(ld, off);
	wrt_ld_emit_op(ld, op, wrt_ld_home(ld, ld->vh));
}

static void op_fc(struct wrt_ld *ld, size_t off)
{
	struct wrt_module *m = ld->m;
	uint32_t sub = wrt_ld_rd_u32(ld);
	if (ld->st)
		return;
	if (sub < 8) {
		simple_op(ld, &wrt_fc_by_sub[sub], 0, off);
		return;
	}
	bool lv = wrt_ld_live(ld);
	switch (sub) {
	case 8: { /* memory.init */
		uint32_t d = wrt_ld_rd_u32(ld);
		zero_byte(ld);
		need_mem(ld, off);
		if (!ld->st && !m->has_datacount)
			wrt_ld_invalid(ld, off, "data count section required");
		if (!ld->st && d >= ld->datacount)
			wrt_ld_invalid(ld, off, "unknown data segment");
		wrt_ld_pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_MEMORY_INIT, 3, off, true);
		if (lv)
			wrt_ld_emit(ld, d);
		return;
	}
	case 9: { /* data.drop */
		uint32_t d = wrt_ld_rd_u32(ld);
		if (!ld->st && !m->has_datacount)
			wrt_ld_invalid(ld, off, "data count section required");
		if (!ld->st && d >= ld->datacount)
			wrt_ld_invalid(ld, off, "unknown data segment");
		if (lv) {
			wrt_ld_emit(ld, WRT_OP_DATA_DROP);
			wrt_ld_emit(ld, d);
		}
		return;
	}
	case 10: /* memory.copy */
	case 11: /* memory.fill */
		zero_byte(ld);
		if (sub == 10)
			zero_byte(ld);
		need_mem(ld, off);
		wrt_ld_pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, sub == 10 ? WRT_OP_MEMORY_COPY : WRT_OP_MEMORY_FILL, 3, off, true);
		return;
	case 12: { /* table.init elem table */
		uint32_t e = wrt_ld_rd_u32(ld);
		uint32_t t = rd_table(ld, off);
		if (!ld->st && e >= m->nelems)
			wrt_ld_invalid(ld, off, "unknown elem segment");
		if (!ld->st && m->elems[e].type != m->tables[t].type)
			wrt_ld_invalid(ld, off,
				       "type mismatch (element segment and table types differ)");
		wrt_ld_pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_TABLE_INIT, 3, off, true);
		if (lv) {
			wrt_ld_emit(ld, e);
			wrt_ld_emit(ld, t);
		}
		return;
	}
	case 13: { /* elem.drop */
		uint32_t e = wrt_ld_rd_u32(ld);
		if (!ld->st && e >= m->nelems)
			wrt_ld_invalid(ld, off, "unknown elem segment");
		if (lv) {
			wrt_ld_emit(ld, WRT_OP_ELEM_DROP);
			wrt_ld_emit(ld, e);
		}
		return;
	}
	case 14: { /* table.copy dst src */
		uint32_t d = rd_table(ld, off);
		uint32_t s = rd_table(ld, off);
		if (!ld->st && m->tables[d].type != m->tables[s].type)
			wrt_ld_invalid(ld, off,
				       "type mismatch (table.copy between different types)");
		wrt_ld_pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_TABLE_COPY, 3, off, true);
		if (lv) {
			wrt_ld_emit(ld, d);
			wrt_ld_emit(ld, s);
		}
		return;
	}
	case 15: { /* table.grow */
		uint32_t t = rd_table(ld, off);
		wrt_ld_pop_expect(ld, WRT_I32, off);
		wrt_ld_pop_expect(ld, ld->st ? 0 : m->tables[t].type, off);
		emit_base_op(ld, WRT_OP_TABLE_GROW, 2, off, false);
		if (lv)
			wrt_ld_emit(ld, t);
		wrt_ld_push(ld, WRT_I32);
		return;
	}
	case 16: { /* table.size */
		uint32_t t = rd_table(ld, off);
		if (lv) {
			wrt_ld_emit_op(ld, WRT_OP_TABLE_SIZE, wrt_ld_home(ld, ld->vh));
			wrt_ld_emit(ld, t);
		}
		wrt_ld_push(ld, WRT_I32);
		return;
	}
	case 17: { /* table.fill */
		uint32_t t = rd_table(ld, off);
		wrt_ld_pop_expect(ld, WRT_I32, off);
		wrt_ld_pop_expect(ld, ld->st ? 0 : m->tables[t].type, off);
		wrt_ld_pop_expect(ld, WRT_I32, off);
		emit_base_op(ld, WRT_OP_TABLE_FILL, 3, off, true);
		if (lv)
			wrt_ld_emit(ld, t);
		return;
	}
	default:
		wrt_ld_malformed(ld, off, "illegal opcode (unknown 0xFC sub-opcode)");
	}
}

/* Fallthrough or branch into a label: the block's values must sit in their home slots. */
static void op_end(struct wrt_ld *ld, size_t off)
{
	struct wrt_ctl *c = wrt_ld_top(ld);
	wrt_ld_pop_types(ld, c->results, c->nr, off);
	if (ld->st)
		return;
	if (ld->vh != c->height) {
		wrt_ld_invalid(ld, off, "type mismatch (values left on the stack at end of block)");
		return;
	}
	if (c->kind == CTL_IF &&
	    (c->np != c->nr || (c->np && memcmp(c->params, c->results, c->np)))) {
		wrt_ld_invalid(ld, off, "type mismatch (if without else must leave its params)");
		return;
	}
	if (wrt_ld_live(ld))
		wrt_ld_materialize_range(ld, c->height, c->height + c->nr);
	/* A new gas region starts only where another region flows in: a block, if or loop
	 * inside which a region began (a nested loop). Code after it otherwise continues the
	 * region it started in (if/else arms are charged together, an over-charge bounded by
	 * the skipped arm), and a loop's tail is charged on entry with its header region. */
	bool was_target =
	    c->kind == CTL_LOOP ? ld->gas_pos != c->loop_gas_pos : ld->gas_pos != c->gas_entry;
	if (!c->dead) {
		/* the block's last op is a br to this end, the very next word: drop it */
		uint32_t br = ld->fwd_br;
		if (br != WRT_NO_INDEX && br + 3 == ld->ncode && c->patch == br + 1 &&
		    ld->code[br] == WRT_OP_BR && ld->code[br + 2] == 0) {
			c->patch = ld->code[br + 1];
			ld->ncode = br;
			ld->ld_start = ld->ld_end = WRT_NO_INDEX;
			ld->fwd_br = WRT_NO_INDEX;
		}
		if (c->kind == CTL_IF && c->head_of != WRT_NO_INDEX)
			ld->ctl[c->head_of].head_else_pc = ld->ncode;
		if (c->kind == CTL_BLOCK && c->head_of != WRT_NO_INDEX) {
			/* the end a kind-3 loop test jumps to; a back-edge can now jump there */
			ld->ctl[c->head_of].head_else_pc = ld->ncode;
			ld->ctl[c->head_of].head_taken = c->unreachable;
		}
		if (c->else_pos != WRT_NO_INDEX)
			patch_chain(ld, c->else_pos, ld->ncode);
		patch_chain(ld, c->patch, ld->ncode);
	}
	wrt_ld_label_here(ld);
	if (c->kind == CTL_FUNC) {
		if (!c->dead) { /* also when unreachable: branches to the end land here */
			wrt_ld_emit_op(ld, WRT_OP_RETURN, c->nr);
			wrt_ld_emit(ld, wrt_ld_home(ld, 0));
		}
		ld->cd--;
		return;
	}
	const uint8_t *res = c->results;
	uint32_t nr = c->nr;
	uint8_t single = c->single;
	if (res == &c->single)
		res = &single;
	ld->cd--;
	wrt_ld_push_types(ld, res, nr);
	if (was_target)
		gas_leader(ld, off, false);
}

/* br / br_if to c: label values are operands [h - n, h); cond (br_if) was operand h. */
static void emit_branch(struct wrt_ld *ld, bool cond, struct wrt_ctl *c, uint32_t n, uint32_t h)
{
	uint32_t dst = wrt_ld_home(ld, c->height);
	uint32_t src = wrt_ld_home(ld, h - n);
	bool lazy = wrt_ld_any_lazy(ld, h - n, h);
	uint32_t test_pc = ld->ncode;
	if (cond && !lazy && (n == 0 || dst == src) && wrt_ld_fresh_result(ld, h) &&
	    ld->last_cmp >= 0)
		test_pc = ld->last_start;
	if (cond && n == 0)
		wrt_ld_note_loop_head(ld, ld->cd - 1, test_pc, WRT_HEAD_EXIT,
				      (uint32_t)(c - ld->ctl));
	if (cond && !lazy && (n == 0 || dst == src) &&
	    wrt_ld_fuse_cmp_branch(ld, h, false, c, true))
		return;
	if (!cond && n == 0 && wrt_ld_rotate_back_edge(ld, c))
		return;
	if (!cond && n == 0 && ld->cp_end == ld->ncode) {
		/* `local.set x (local.get y); br L`: move and jump in one op (loop phis) */
		uint32_t x = ld->code[ld->cp_start] >> 16, y = ld->code[ld->cp_start + 1];
		ld->ncode = ld->cp_start;
		wrt_ld_emit_op(ld, WRT_OP_BR_SETL, x);
		wrt_ld_emit_target(ld, c, true);
		wrt_ld_emit(ld, y);
		wrt_ld_label_here(ld);
		return;
	}
	if (!cond && n == 1 && (ld->vk[h - 1] != VK_HOME || dst != src) &&
	    (ld->vk[h - 1] != VK_CONST || ld->vhi[h - 1] == 0)) {
		/* one value into the label's slot and jump: a constant, a local or a temp */
		bool k = ld->vk[h - 1] == VK_CONST;
		uint32_t v = k ? ld->vv[h - 1] : wrt_ld_opnd(ld, h - 1);
		wrt_ld_emit_op(ld, k ? WRT_OP_BR_SET : WRT_OP_BR_SETL, dst);
		wrt_ld_emit_target(ld, c, true);
		wrt_ld_emit(ld, v);
		wrt_ld_label_here(ld);
		return;
	}
	if (cond && n == 0 && wrt_ld_fresh_result(ld, h) &&
	    wrt_ld_is_ld8(ld, ld->last_start, ld->ncode) && !wrt_ld_loop_head_at(ld, ld->ncode)) {
		/* br_if on a byte just loaded (`if (p[i])`): load, test non-zero, branch */
		wrt_ld_fuse_ld8_branch(ld, ld->last_start, false, 0, c, true);
		return;
	}
	uint32_t add = 0, fam = 0;
	if (cond && n == 0 && ld->vk[h] == VK_LOCAL)
		fam = wrt_ld_add_before(ld, ld->ncode, ld->vv[h], &add);
	if (fam) {
		/* `x += k (or y); br_if x` (count-down loops): add, test non-zero, branch */
		uint32_t x = ld->vv[h];
		ld->ncode = ld->wr_start;
		wrt_ld_label_here(ld);
		wrt_ld_emit_op(ld, wrt_ld_fused_op(fam, WRT_CMP_NE, true), x);
		wrt_ld_emit(ld, add);
		wrt_ld_emit(ld, 0);
		wrt_ld_emit_target(ld, c, true);
		wrt_ld_label_here(ld);
		return;
	}
	wrt_ld_materialize_range(ld, h - n, h);
	uint32_t cs = cond ? wrt_ld_opnd(ld, h) : 0;
	if (n == 0 || dst == src) {
		if (!cond && c->kind != CTL_LOOP)
			ld->fwd_br = ld->ncode;
		wrt_ld_emit_op(ld, cond ? WRT_OP_BR_IF : WRT_OP_BR, cs);
		wrt_ld_emit_target(ld, c, true);
	} else if (!cond) {
		wrt_ld_emit_op(ld, WRT_OP_BR_MOVE, n);
		wrt_ld_emit_target(ld, c, true);
		wrt_ld_emit(ld, dst | (src << 16));
	} else {
		wrt_ld_emit_op(ld, WRT_OP_BR_IF_MOVE, cs);
		wrt_ld_emit_target(ld, c, true);
		wrt_ld_emit(ld, dst | (src << 16));
		wrt_ld_emit(ld, n);
	}
	wrt_ld_label_here(ld);
}

static void op_local_set(struct wrt_ld *ld, uint32_t x, size_t off, bool tee)
{
	uint8_t t = ld->locals[x];
	wrt_ld_pop_expect(ld, t, off);
	if (ld->st)
		return;
	uint32_t e = ld->vh;
	if (wrt_ld_live(ld)) {
		bool hazard = false;
		for (uint32_t i = 0; i < e; i++)
			if (ld->vk[i] == VK_LOCAL && ld->vv[i] == x)
				hazard = true;
		if (!hazard && wrt_ld_fresh_result(ld, e)) {
			/* retarget the op that computed the value: it writes x directly */
			uint32_t s = ld->last_start, is = ld->inc_start, ie = ld->inc_end;
			ld->code[s] = (ld->code[s] & 0xFFFFu) | (x << 16);
			wrt_ld_label_here(ld);
			ld->wr_start = s;
			ld->wr_end = ld->ncode;
			ld->wr_local = x;
			if ((ld->code[s] & 0xFFFFu) == WRT_OP_I32_ADD_I && ld->code[s + 1] == x) {
				if (ie == s && ld->ncode == s + 3) {
					/* two increments in a row (`p++; q++`): one op */
					uint32_t k = ld->code[s + 2];
					ld->code[is] = (ld->code[is] & 0xFFFF0000u) | WRT_OP_ADD2_I;
					ld->code[is + 1] = ld->code[is + 2];
					ld->code[is + 2] = x;
					ld->code[is + 3] = k;
					ld->ncode = is + 4;
					ld->wr_end = WRT_NO_INDEX;
					if (ld->ld_start != WRT_NO_INDEX && ld->ld_start >= is)
						ld->ld_start = ld->ld_end = WRT_NO_INDEX;
				} else {
					ld->inc_start = s;
					ld->inc_end = ld->ncode;
				}
			}
		} else {
			for (uint32_t i = 0; i < e; i++)
				if (ld->vk[i] == VK_LOCAL && ld->vv[i] == x)
					wrt_ld_materialize(ld, i);
			if (ld->vk[e] == VK_CONST && ld->vv[e] == 0 && ld->vhi[e] == 0 &&
			    x >= ld->ftype->nparams && ld->cd == 1 && ld->ncode == ld->body_pc) {
				/* a declared local set to zero before the body's first op (clang's
				 * `i32.const 0; local.set n` prologue): every call zeroes the
				 * declared locals, and nothing ran yet that could have written it
				 */
			} else if (ld->vk[e] == VK_CONST) {
				if (ld->vhi[e] == 0) {
					wrt_ld_emit_op(ld, WRT_OP_CONST32, x);
					wrt_ld_emit(ld, ld->vv[e]);
				} else {
					wrt_ld_emit_op(ld, WRT_OP_CONST64, x);
					wrt_ld_emit(ld, ld->vv[e]);
					wrt_ld_emit(ld, ld->vhi[e]);
				}
			} else {
				uint32_t s = wrt_ld_opnd(ld, e);
				if (s != x) {
					ld->cp_start = ld->ncode;
					wrt_ld_emit_op(ld, WRT_OP_COPY, x);
					wrt_ld_emit(ld, s);
					ld->cp_end = ld->ncode;
				}
			}
		}
	}
	if (tee)
		wrt_ld_push_lazy(ld, t, VK_LOCAL, x, 0);
}

static void op_block(struct wrt_ld *ld, uint8_t op, size_t off)
{
	struct wrt_module *m = ld->m;
	uint8_t single = 0;
	const uint8_t *ps, *rs;
	uint32_t np, nr;
	bool lv = wrt_ld_live(ld);
	wrt_ld_rd_blocktype(ld, &single, &ps, &np, &rs, &nr);
	uint32_t end_idx = ld->vh; /* entries below this (params included) go home */
	if (op == 0x04) {
		wrt_ld_pop_expect(ld, WRT_I32, off);
		end_idx = ld->vh;
	}
	uint32_t cond = ld->vh;
	wrt_ld_pop_types(ld, ps, np, off);
	if (ld->st)
		return;
	/* every operand of the enclosing frame goes home: code inside may set locals, and
	 * both arms of an if must find the params in the same slots */
	uint32_t from = wrt_ld_top(ld)->height;
	bool fuse = false;
	if (lv) {
		bool lazy = wrt_ld_any_lazy(ld, from, end_idx);
		uint32_t fc;
		fuse = op == 0x04 && !lazy && wrt_ld_fresh_result(ld, cond) &&
		       (ld->last_cmp >= 0 || wrt_ld_fcmp_fusable(ld, cond, &fc) != WRT_NO_INDEX);
		if (!fuse)
			wrt_ld_materialize_range(ld, from, end_idx);
	}
	uint32_t saved_end = ld->last_end;
	wrt_ld_push_ctl(ld,
			op == 0x02   ? CTL_BLOCK
			: op == 0x03 ? CTL_LOOP
				     : CTL_IF,
			ps, np, rs, nr, off);
	if (ld->st)
		return;
	struct wrt_ctl *c = wrt_ld_top(ld);
	if (rs == &single) {
		c->single = single;
		c->results = &c->single;
	}
	if (!lv)
		return;
	if (op == 0x04) {
		uint32_t test_pc;
		if (fuse) {
			ld->last_end =
			    saved_end; /* push_ctl ended tracking; the compare is fresh */
			test_pc = ld->last_start;
			wrt_ld_fuse_cmp_branch(ld, cond, true, c, false);
			c->else_pos = c->patch; /* the fused branch's offset word */
			c->patch = WRT_NO_INDEX;
		} else {
			uint32_t cs = wrt_ld_opnd(ld, cond);
			test_pc = ld->ncode;
			wrt_ld_emit_op(ld, WRT_OP_BR_IFZ, cs);
			c->else_pos = ld->ncode;
			wrt_ld_emit(ld, WRT_NO_INDEX);
		}
		wrt_ld_note_loop_head(ld, ld->cd - 2, test_pc, WRT_HEAD_IF, ld->cd - 1);
		/* no new gas region: the then-arm is charged with the region before the if
		 * (an over-charge by the arm's length when it is skipped) */
		wrt_ld_label_here(ld);
		return;
	}
	if (op == 0x03) {
		wrt_ld_label_here(ld);
		c->label_pc = ld->ncode; /* no GAS op: see wrt_ld_back_edge_gas() */
		if (m->metered && ld->gas_pos != WRT_NO_INDEX) {
			c->loop_gas_pos = ld->gas_pos;
			c->loop_gas_base = ld->code[ld->gas_pos];
		}
		c->body_pc = ld->ncode;
	}
}

/* Control instructions: unreachable, nop, block, loop, if, else, end. */
static bool op_control(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	switch (op) {
	case 0x00: /* unreachable */
		if (lv) {
			wrt_ld_srcmap(ld, off);
			wrt_ld_emit(ld, WRT_OP_UNREACHABLE);
		}
		wrt_ld_set_unreachable(ld);
		break;
	case 0x01: /* nop */
		break;
	case 0x02: /* block */
	case 0x03: /* loop */
	case 0x04: /* if */
		op_block(ld, op, off);
		break;
	case 0x05: { /* else */
		struct wrt_ctl *c = wrt_ld_top(ld);
		if (c->kind != CTL_IF) {
			wrt_ld_invalid(ld, off, "else without matching if");
			return false;
		}
		wrt_ld_pop_types(ld, c->results, c->nr, off);
		if (!ld->st && ld->vh != c->height)
			wrt_ld_invalid(ld, off, "type mismatch (values left on the stack at else)");
		if (ld->st)
			return false;
		if (!c->dead) {
			if (!c->unreachable) {
				wrt_ld_materialize_range(ld, c->height, c->height + c->nr);
				wrt_ld_emit(ld, WRT_OP_BR);
				wrt_ld_emit_target(ld, c, true);
			}
			patch_chain(ld, c->else_pos, ld->ncode);
			c->else_pos = WRT_NO_INDEX;
			if (c->head_of != WRT_NO_INDEX)
				ld->ctl[c->head_of].head_else_pc = ld->ncode;
		}
		c->kind = CTL_ELSE;
		c->unreachable = false;
		wrt_ld_push_types(ld, c->params, c->np);
		wrt_ld_label_here(ld);
		break;
	}
	case 0x0B: /* end */
		op_end(ld, off);
		return ld->cd > 0 && !ld->st;
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Branches: br, br_if, br_table, return. */
static bool op_branch(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	switch (op) {
	case 0x0C:   /* br */
	case 0x0D: { /* br_if */
		uint32_t l = wrt_ld_rd_label(ld, off);
		if (ld->st)
			return false;
		struct wrt_ctl *c = &ld->ctl[ld->cd - 1 - l];
		const uint8_t *ts;
		uint32_t n;
		wrt_ld_label_types(c, &ts, &n);
		if (op == 0x0D)
			wrt_ld_pop_expect(ld, WRT_I32, off);
		uint32_t h = ld->vh;
		wrt_ld_pop_types(ld, ts, n, off);
		if (ld->st)
			return false;
		if (lv)
			emit_branch(ld, op == 0x0D, c, n, h);
		if (op == 0x0C)
			wrt_ld_set_unreachable(ld);
		else
			wrt_ld_push_types(ld, ts, n);
		break;
	}
	case 0x0E: { /* br_table */
		uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_BR_TABLE, "K32_WASM_MAX_BR_TABLE");
		size_t lpos = ld->pos;
		uint32_t dl = 0;
		for (uint32_t i = 0; i <= n && !ld->st; i++)
			dl = wrt_ld_rd_label(ld, off); /* the last one read is the default */
		size_t after = ld->pos;
		wrt_ld_pop_expect(ld, WRT_I32, off);
		if (ld->st)
			return false;
		const uint8_t *dts;
		uint32_t arity;
		wrt_ld_label_types(&ld->ctl[ld->cd - 1 - dl], &dts, &arity);
		uint32_t h = ld->vh;
		struct wrt_ctl *cur = wrt_ld_top(ld);
		if (lv && h - cur->height >= arity) {
			wrt_ld_materialize_range(ld, h - arity, h);
			uint32_t is = wrt_ld_opnd(ld, h);
			wrt_ld_emit_op(ld, WRT_OP_BR_TABLE, is);
			wrt_ld_emit(ld, n);
			wrt_ld_emit(ld, arity | (wrt_ld_home(ld, h - arity) << 16));
		}
		ld->pos = lpos;
		for (uint32_t i = 0; i <= n && !ld->st; i++) {
			struct wrt_ctl *c = &ld->ctl[ld->cd - 1 - wrt_ld_rd_u32(ld)];
			const uint8_t *ts;
			uint32_t cn;
			wrt_ld_label_types(c, &ts, &cn);
			if (cn != arity) {
				wrt_ld_invalid(
				    ld, off, "type mismatch (br_table labels of different arity)");
				return false;
			}
			for (uint32_t k = 0; k < cn; k++) {
				uint32_t depth = cn - k; /* from the top */
				if (h - cur->height < depth) {
					if (cur->unreachable)
						continue;
					wrt_ld_invalid(ld, off,
						       "type mismatch (br_table operands)");
					return false;
				}
				uint8_t have = ld->vt[h - depth];
				if (have != ts[k] && have != WRT_T_UNKNOWN) {
					wrt_ld_invalid(ld, off,
						       "type mismatch (br_table operands)");
					return false;
				}
			}
			if (lv) { /* entry: offset, gas (back-edges), destination slot */
				wrt_ld_emit_target(ld, c, true);
				wrt_ld_emit(ld, wrt_ld_home(ld, c->height));
			}
		}
		ld->pos = after;
		wrt_ld_pop_types(ld, dts, arity, off);
		wrt_ld_set_unreachable(ld);
		break;
	}
	case 0x0F: { /* return */
		const struct wrt_functype *ft = ld->ftype;
		wrt_ld_pop_types(ld, ft->types + ft->nparams, ft->nresults, off);
		if (ld->st)
			return false;
		if (lv) {
			wrt_ld_materialize_range(ld, ld->vh, ld->vh + ft->nresults);
			wrt_ld_emit_op(ld, WRT_OP_RETURN, ft->nresults);
			wrt_ld_emit(ld, wrt_ld_home(ld, ld->vh));
		}
		wrt_ld_set_unreachable(ld);
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Calls: call, call_indirect. */
static bool op_call(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	struct wrt_module *m = ld->m;
	switch (op) {
	case 0x10: { /* call */
		uint32_t f = wrt_ld_rd_u32(ld);
		if (!ld->st && f >= m->nfuncs) {
			wrt_ld_invalid(ld, off, "unknown function");
			return false;
		}
		if (ld->st)
			return false;
		const struct wrt_functype *ft = &m->types[m->funcs[f].type];
		wrt_ld_pop_types(ld, ft->types, ft->nparams, off);
		if (ld->st)
			return false;
		if (lv) {
			wrt_ld_materialize_range(ld, ld->vh, ld->vh + ft->nparams);
			wrt_ld_srcmap(ld, off);
			wrt_ld_emit_op(ld, WRT_OP_CALL, wrt_ld_home(ld, ld->vh));
			wrt_ld_emit(ld, f);
			wrt_ld_label_here(ld);
		}
		wrt_ld_push_types(ld, ft->types + ft->nparams, ft->nresults);
		break;
	}
	case 0x11: { /* call_indirect */
		uint32_t ti = wrt_ld_rd_u32(ld);
		uint32_t tab = rd_table(ld, off);
		if (!ld->st && ti >= m->ntypes)
			wrt_ld_invalid(ld, off, "unknown type");
		if (!ld->st && m->tables[tab].type != WRT_FUNCREF)
			wrt_ld_invalid(ld, off,
				       "type mismatch (call_indirect needs a funcref table)");
		if (ld->st)
			return false;
		wrt_ld_pop_expect(ld, WRT_I32, off);
		const struct wrt_functype *ft = &m->types[ti];
		wrt_ld_pop_types(ld, ft->types, ft->nparams, off);
		if (ld->st)
			return false;
		if (lv) {
			uint32_t e = ld->vh;
			wrt_ld_materialize_range(ld, e, e + ft->nparams);
			uint32_t is = wrt_ld_opnd(ld, e + ft->nparams);
			wrt_ld_srcmap(ld, off);
			wrt_ld_emit_op(ld, WRT_OP_CALL_INDIRECT, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, ti);
			wrt_ld_emit(ld, tab);
			wrt_ld_emit(ld, is);
			wrt_ld_label_here(ld);
		}
		wrt_ld_push_types(ld, ft->types + ft->nparams, ft->nresults);
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Parametric instructions: drop, select, typed select. */
static bool op_parametric(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	switch (op) {
	case 0x1A: /* drop */
		wrt_ld_pop(ld, off);
		break;
	case 0x1B:   /* select */
	case 0x1C: { /* select t */
		uint8_t t = 0;
		if (op == 0x1C) {
			size_t coff = ld->pos;
			uint32_t n = wrt_ld_rd_u32(ld);
			if (!ld->st && n != 1) {
				wrt_ld_invalid(ld, coff,
					       "invalid result arity (select takes one type)");
				return false;
			}
			t = wrt_ld_rd_valtype(ld);
		}
		wrt_ld_pop_expect(ld, WRT_I32, off);
		uint8_t t1 = wrt_ld_pop_expect(ld, t, off);
		uint8_t t2 = wrt_ld_pop_expect(ld, t, off);
		if (ld->st)
			return false;
		if (op == 0x1B) {
			if ((t1 && !wrt_ld_is_numtype(t1)) || (t2 && !wrt_ld_is_numtype(t2)) ||
			    (t1 && t2 && t1 != t2)) {
				wrt_ld_invalid(ld, off, "type mismatch (select operands)");
				return false;
			}
			t = t1 ? t1 : t2;
		}
		uint32_t e = ld->vh;
		if (lv && wrt_ld_fresh_result(ld, e + 2) && ld->last_cmp >= 0 &&
		    ld->vk[e] != VK_CONST && ld->vk[e + 1] != VK_CONST) {
			/* select on a fresh i32 compare: one op compares and selects (the values
			 * are slots, so reading them emits nothing after the compare) */
			uint32_t a = wrt_ld_opnd(ld, e), b = wrt_ld_opnd(ld, e + 1);
			uint32_t cmp = (uint32_t)ld->last_cmp, ca = ld->last_a, cb = ld->last_b;
			bool imm = ld->last_imm;
			ld->ncode = ld->last_start; /* drop the compare */
			wrt_ld_label_here(ld);
			uint32_t start = ld->ncode;
			wrt_ld_emit_op(ld, wrt_ld_fused_op(WRT_OP_SELECT_EQ, cmp, imm),
				       wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a | (b << 16));
			wrt_ld_emit(ld, ca);
			wrt_ld_emit(ld, cb);
			wrt_ld_push(ld, t);
			wrt_ld_result_at(ld, start, e);
		} else if (lv) {
			uint32_t a = wrt_ld_opnd(ld, e), b = wrt_ld_opnd(ld, e + 1),
				 c = wrt_ld_opnd(ld, e + 2);
			uint32_t start = ld->ncode;
			wrt_ld_emit_op(ld, WRT_OP_SELECT, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a | (b << 16));
			wrt_ld_emit(ld, c);
			wrt_ld_push(ld, t);
			wrt_ld_result_at(ld, start, e);
		} else {
			wrt_ld_push(ld, t);
		}
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Variable instructions: local.get/set/tee, global.get/set. */
static bool op_variable(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	struct wrt_module *m = ld->m;
	switch (op) {
	case 0x20:   /* local.get */
	case 0x21:   /* local.set */
	case 0x22: { /* local.tee */
		uint32_t x = wrt_ld_rd_u32(ld);
		if (!ld->st && x >= ld->nlocals) {
			wrt_ld_invalid(ld, off, "unknown local");
			return false;
		}
		if (ld->st)
			return false;
		if (op == 0x20)
			wrt_ld_push_lazy(ld, ld->locals[x], VK_LOCAL, x, 0);
		else
			op_local_set(ld, x, off, op == 0x22);
		break;
	}
	case 0x23:   /* global.get */
	case 0x24: { /* global.set */
		uint32_t x = wrt_ld_rd_u32(ld);
		if (!ld->st && x >= m->nglobals) {
			wrt_ld_invalid(ld, off, "unknown global");
			return false;
		}
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (op == 0x23) {
			uint32_t start = ld->ncode;
			if (lv) {
				wrt_ld_emit_op(ld, WRT_OP_GLOBAL_GET, wrt_ld_home(ld, e));
				wrt_ld_emit(ld, x);
			}
			wrt_ld_push(ld, m->globals[x].type);
			if (lv)
				wrt_ld_result_at(ld, start, e);
		} else {
			if (!m->globals[x].mut) {
				wrt_ld_invalid(ld, off, "global is immutable");
				return false;
			}
			wrt_ld_pop_expect(ld, m->globals[x].type, off);
			if (lv && !ld->st) {
				uint32_t s = wrt_ld_opnd(ld, ld->vh);
				wrt_ld_emit_op(ld, WRT_OP_GLOBAL_SET, s);
				wrt_ld_emit(ld, x);
			}
		}
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Table instructions with a single-byte opcode: table.get, table.set (the rest are 0xFC). */
static bool op_table(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	struct wrt_module *m = ld->m;
	switch (op) {
	case 0x25:   /* table.get */
	case 0x26: { /* table.set */
		uint32_t t = rd_table(ld, off);
		if (ld->st)
			return false;
		if (op == 0x25) {
			wrt_ld_pop_expect(ld, WRT_I32, off);
			emit_base_op(ld, WRT_OP_TABLE_GET, 1, off, true);
			if (lv)
				wrt_ld_emit(ld, t);
			wrt_ld_push(ld, m->tables[t].type);
		} else {
			wrt_ld_pop_expect(ld, m->tables[t].type, off);
			wrt_ld_pop_expect(ld, WRT_I32, off);
			emit_base_op(ld, WRT_OP_TABLE_SET, 2, off, true);
			if (lv)
				wrt_ld_emit(ld, t);
		}
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* memory.size and memory.grow (loads and stores: op_load_store; bulk memory: op_fc). */
static bool op_memory(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	switch (op) {
	case 0x3F:   /* memory.size */
	case 0x40: { /* memory.grow */
		zero_byte(ld);
		need_mem(ld, off);
		if (op == 0x40)
			wrt_ld_pop_expect(ld, WRT_I32, off);
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (lv) {
			uint32_t a = op == 0x40 ? wrt_ld_opnd(ld, e) : 0;
			uint32_t start = ld->ncode;
			wrt_ld_emit_op(ld, op == 0x3F ? WRT_OP_MEMORY_SIZE : WRT_OP_MEMORY_GROW,
				       wrt_ld_home(ld, e));
			if (op == 0x40)
				wrt_ld_emit(ld, a);
			wrt_ld_push(ld, WRT_I32);
			wrt_ld_result_at(ld, start, e);
		} else {
			wrt_ld_push(ld, WRT_I32);
		}
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Constants: i32/i64/f32/f64.const (lazy operands: nothing is emitted until used). */
static bool op_const(struct wrt_ld *ld, uint8_t op)
{
	switch (op) {
	case 0x41: { /* i32.const */
		uint32_t v = (uint32_t)wrt_ld_rd_leb(ld, 32, true);
		wrt_ld_push_lazy(ld, WRT_I32, VK_CONST, v, 0);
		break;
	}
	case 0x42:   /* i64.const */
	case 0x44: { /* f64.const */
		uint64_t v = 0;
		if (op == 0x42) {
			v = wrt_ld_rd_leb(ld, 64, true);
		} else {
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)wrt_ld_rd_u8(ld) << (8 * i);
		}
		wrt_ld_push_lazy(ld, op == 0x42 ? WRT_I64 : WRT_F64, VK_CONST, (uint32_t)v,
				 (uint32_t)(v >> 32));
		break;
	}
	case 0x43: { /* f32.const */
		uint32_t v = 0;
		for (int i = 0; i < 4; i++)
			v |= (uint32_t)wrt_ld_rd_u8(ld) << (8 * i);
		wrt_ld_push_lazy(ld, WRT_F32, VK_CONST, v, 0);
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Reference instructions: ref.null, ref.is_null, ref.func. */
static bool op_ref(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	struct wrt_module *m = ld->m;
	switch (op) {
	case 0xD0: { /* ref.null */
		uint8_t t = wrt_ld_rd_reftype(ld);
		wrt_ld_push_lazy(ld, t, VK_CONST, 0, 0);
		break;
	}
	case 0xD1: { /* ref.is_null */
		uint8_t t = wrt_ld_pop(ld, off);
		if (!ld->st && t != WRT_T_UNKNOWN && !wrt_ld_is_reftype(t)) {
			wrt_ld_invalid(ld, off, "type mismatch (ref.is_null of a number)");
			return false;
		}
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (lv) {
			uint32_t a = wrt_ld_opnd(ld, e);
			uint32_t start = ld->ncode;
			wrt_ld_emit_op(ld, WRT_OP_REF_IS_NULL, wrt_ld_home(ld, e));
			wrt_ld_emit(ld, a);
			wrt_ld_push(ld, WRT_I32);
			wrt_ld_result_at(ld, start, e);
		} else {
			wrt_ld_push(ld, WRT_I32);
		}
		break;
	}
	case 0xD2: { /* ref.func */
		uint32_t x = wrt_ld_rd_u32(ld);
		if (!ld->st && x >= m->nfuncs) {
			wrt_ld_invalid(ld, off, "unknown function");
			return false;
		}
		if (!ld->st && !(ld->declared[x / 8] & (1u << (x % 8)))) {
			wrt_ld_invalid(ld, off, "undeclared function reference");
			return false;
		}
		if (lv) {
			wrt_ld_emit_op(ld, WRT_OP_REF_FUNC, wrt_ld_home(ld, ld->vh));
			wrt_ld_emit(ld, x);
		}
		wrt_ld_push(ld, WRT_FUNCREF);
		break;
	}
	default: /* body_op dispatches only this group's opcodes here */
		break;
	}
	return !ld->st;
}

/* Validates and compiles a load or a store (0x28..0x3E), folding a fresh address add. */
static bool op_load_store(struct wrt_ld *ld, uint8_t op, size_t off, bool lv)
{
	const struct wrt_meminfo *mi = &wrt_mem_by_byte[op];
	uint32_t align = wrt_ld_rd_u32(ld);
	uint32_t moff = wrt_ld_rd_u32(ld);
	need_mem(ld, off);
	if (!ld->st && align > mi->align) {
		wrt_ld_invalid(ld, off, "alignment must not be larger than natural");
		return false;
	}
	bool store = op >= 0x36;
	wrt_ld_pop_types(ld, (const uint8_t[]){WRT_I32, sig_type(mi->sig[1])}, store ? 2 : 1, off);
	if (ld->st)
		return false;
	uint32_t e = ld->vh;
	if (lv) {
		/* a fresh i32.add of a slot and an immediate folds into the address */
		bool fold = wrt_ld_fresh_result(ld, e) &&
			    (ld->code[ld->last_start] & 0xFFFFu) == WRT_OP_I32_ADD_I;
		uint32_t base = 0, add = 0, shift = 0;
		bool scale = false;
		if (fold) {
			base = ld->code[ld->last_start + 1];
			add = ld->code[ld->last_start + 2];
			ld->ncode = ld->last_start;
			/* and an i32.shl by a constant just before it: a scaled index */
			uint32_t ps = ld->prev_start;
			scale = ld->prev_end == ld->last_start && ps != WRT_NO_INDEX &&
				(ld->code[ps] & 0xFFFFu) == WRT_OP_I32_SHL_I &&
				(ld->code[ps] >> 16) == wrt_ld_home(ld, e) &&
				base == wrt_ld_home(ld, e);
			if (scale) {
				base = ld->code[ps + 1];
				shift = ld->code[ps + 2] & 31;
				ld->ncode = ps;
			}
		}
		uint32_t a = fold ? base : wrt_ld_opnd(ld, e);
		uint8_t vt = sig_type(mi->sig[1]);
		/* store immediates are 32 bits, sign-extended for 64-bit stores */
		bool vimm = store && imm_fits(ld, e + 1,
					      vt == WRT_F32   ? WRT_I32
					      : vt == WRT_F64 ? WRT_I64
							      : vt);
		uint32_t v = store ? (vimm ? ld->vv[e + 1] : wrt_ld_opnd(ld, e + 1)) : 0;
		uint32_t op = mi->op;
		if (store)
			op += scale ? (vimm ? 5u : 4u) : (vimm ? 1u : 0u) + (fold ? 2u : 0u);
		else
			op += scale ? 2u : fold ? 1u : 0u;
		uint32_t start = ld->ncode;
		wrt_ld_srcmap(ld, off);
		wrt_ld_emit_op(ld, op, store ? a : wrt_ld_home(ld, e));
		wrt_ld_emit(ld, store ? v : a);
		wrt_ld_emit(ld, moff);
		if (fold)
			wrt_ld_emit(ld, add);
		if (scale)
			wrt_ld_emit(ld, shift);
		wrt_ld_label_here(ld);
		ld->ld_start = store ? WRT_NO_INDEX : start;
		ld->ld_end = store ? WRT_NO_INDEX : ld->ncode;
		if (!store) {
			wrt_ld_push(ld, sig_type(mi->sig[2]));
			wrt_ld_result_at(ld, start, e);
		}
	} else if (!store) {
		wrt_ld_push(ld, sig_type(mi->sig[2]));
	}
	return true;
}

/*
 * Validates and compiles one instruction: charges it to the open gas region, then hands it
 * to its opcode group. Returns false after the function's final end or an error.
 */
static bool body_op(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	uint8_t op = wrt_ld_rd_u8(ld);
	if (ld->st)
		return false;
	bool lv = wrt_ld_live(ld);
	if (lv && ld->gas_pos != WRT_NO_INDEX)
		ld->code[ld->gas_pos]++;
	if (op >= 0x45 && op <= 0xC4) {
		simple_op(ld, &wrt_num_by_byte[op], op, off);
		return true;
	}
	if (op >= 0x28 && op <= 0x3E)
		return op_load_store(ld, op, off, lv);
	switch (op) {
	case 0x00:
	case 0x01:
	case 0x02:
	case 0x03:
	case 0x04:
	case 0x05:
	case 0x0B:
		return op_control(ld, op, off, lv);
	case 0x0C:
	case 0x0D:
	case 0x0E:
	case 0x0F:
		return op_branch(ld, op, off, lv);
	case 0x10:
	case 0x11:
		return op_call(ld, op, off, lv);
	case 0x1A:
	case 0x1B:
	case 0x1C:
		return op_parametric(ld, op, off, lv);
	case 0x20:
	case 0x21:
	case 0x22:
	case 0x23:
	case 0x24:
		return op_variable(ld, op, off, lv);
	case 0x25:
	case 0x26:
		return op_table(ld, op, off, lv);
	case 0x3F:
	case 0x40:
		return op_memory(ld, op, off, lv);
	case 0x41:
	case 0x42:
	case 0x43:
	case 0x44:
		return op_const(ld, op);
	case 0xD0:
	case 0xD1:
	case 0xD2:
		return op_ref(ld, op, off, lv);
	case 0xFC:
		op_fc(ld, off);
		break;
	case 0xFD:
		wrt_ld_fail(ld, K32_ERR_NOT_SUPPORTED, off, "SIMD instructions are not supported",
			    "build the pod without -msimd128");
		return false;
	default:
		wrt_ld_malformed(ld, off, "illegal opcode");
		return false;
	}
	return !ld->st;
}

void wrt_ld_compile_func(struct wrt_ld *ld, struct wrt_func *f, size_t body_end)
{
	struct wrt_module *m = ld->m;
	const struct wrt_functype *ft = &m->types[f->type];
	ld->ftype = ft;
	/* locals */
	uint32_t ngroups = wrt_ld_rd_count(ld, K32_WASM_MAX_LOCALS, "K32_WASM_MAX_LOCALS");
	uint64_t total = ft->nparams;
	size_t lpos = ld->pos;
	for (uint32_t i = 0; i < ngroups && !ld->st; i++) {
		size_t off = ld->pos;
		total += wrt_ld_rd_u32(ld);
		wrt_ld_rd_valtype(ld);
		if (!ld->st && total > 0xFFFFFFFFull) {
			wrt_ld_malformed(ld, off, "too many locals");
			return;
		}
		if (!ld->st && total > K32_WASM_MAX_LOCALS) {
			wrt_ld_limit_hit(ld, off, "too many locals", "K32_WASM_MAX_LOCALS");
			return;
		}
	}
	if (ld->st)
		return;
	if (total >= ld->locals_cap) {
		uint32_t ncap = (uint32_t)total + 64;
		uint8_t *p = k32_realloc(&ld->scratch, ld->locals, ld->locals_cap, ncap);
		if (!p) {
			wrt_ld_no_memory(ld, ld->pos);
			return;
		}
		ld->locals = p;
		ld->locals_cap = ncap;
	}
	memcpy(ld->locals, ft->types, ft->nparams);
	ld->nlocals = ft->nparams;
	ld->pos = lpos;
	for (uint32_t i = 0; i < ngroups; i++) {
		uint32_t n = wrt_ld_rd_u32(ld);
		uint8_t t = wrt_ld_rd_valtype(ld);
		memset(ld->locals + ld->nlocals, t, n);
		ld->nlocals += n;
	}
	f->nlocals = ld->nlocals;
	f->code_off = ld->ncode;
	ld->vh = ld->vmax = 0;
	ld->cd = 0;
	ld->gas_pos = WRT_NO_INDEX;
	ld->last_start = WRT_NO_INDEX;
	ld->prev_start = WRT_NO_INDEX;
	ld->prev_end = WRT_NO_INDEX;
	ld->ld_start = ld->ld_end = WRT_NO_INDEX;
	ld->fwd_br = WRT_NO_INDEX;
	wrt_ld_label_here(ld);
	wrt_ld_push_ctl(ld, CTL_FUNC, NULL, 0, ft->types + ft->nparams, ft->nresults, ld->pos);
	gas_leader(ld, ld->pos, true);
	ld->body_pc = ld->ncode;
	while (body_op(ld))
		;
	if (ld->st)
		return;
	if (ld->cd != 0) {
		wrt_ld_malformed(ld, ld->pos, "END opcode expected");
		return;
	}
	if (ld->pos != body_end)
		wrt_ld_malformed(ld, ld->pos,
				 "section size mismatch (bytes after the function's end)");
	f->max_slots = ld->nlocals + ld->vmax;
	uint32_t s = f->code_off;
	if (!ld->st && m->metered && ld->ncode >= s + 2 && ld->code[s] == WRT_OP_GAS) {
		/* the entry region's GAS op leaves the code: calls and wrt_invoke charge its
		 * count from f->entry_gas (8 bytes less per function). Branches are relative
		 * and none targets the entry op, so the body moves down as it is; its source
		 * map entries move with it (the GAS op's own stays at the entry). */
		f->entry_gas = ld->code[s + 1];
		memmove(ld->code + s, ld->code + s + 2, (size_t)(ld->ncode - s - 2) * 4);
		ld->ncode -= 2;
		for (uint32_t i = ld->nsm; i > 0 && ld->sm[i - 1].code > s; i--)
			ld->sm[i - 1].code -= 2;
	}
}
