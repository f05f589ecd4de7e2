/*
 * wrt_optimise.c - the loader's rewrites of code just emitted, in the same pass: fusion of a
 * compare (or a byte load, or an `x += k`) with the branch that tests it into one op, and
 * rotation of while loops (the back-edge repeats the loop's exit test instead of jumping to
 * it). Fused ops are listed in wrt_ops.h; the fused family of an i32 compare is its
 * WRT_CMP32 index (enum wrt_cmp) over a base op (BR_EQ, ADDBR_EQ, RADDBR_EQ).
 */
#include "wasm/wrt_ld.h"

#include <stdio.h>
#include <string.h>

/*
 * Whether the op just before word `at` is `x = x + imm` or `x = x + y` (y a slot) retargeted
 * to local x == slot: then returns the first op of the add-compare-branch family that can
 * fuse it (ADDBR_EQ for an immediate, RADDBR_EQ for a slot) and sets *add to the immediate
 * or y; else returns 0.
 */
uint32_t wrt_ld_add_before(struct wrt_ld *ld, uint32_t at, uint32_t slot, uint32_t *add)
{
	if (ld->wr_end != at || ld->wr_local != slot)
		return 0;
	uint32_t op = ld->code[ld->wr_start] & 0xFFFFu, w1 = ld->code[ld->wr_start + 1];
	if (op == WRT_OP_I32_ADD_I && w1 == slot) {
		*add = ld->code[ld->wr_start + 2];
		return WRT_OP_ADDBR_EQ;
	}
	if (op == WRT_OP_I32_ADD && ((w1 & 0xFFFFu) == slot || (w1 >> 16) == slot)) {
		*add = (w1 & 0xFFFFu) == slot ? w1 >> 16 : w1 & 0xFFFFu;
		return WRT_OP_RADDBR_EQ;
	}
	return 0;
}

/*
 * A float compare just emitted producing operand i, or the i32.eqz (I32_EQ_I x, 0) of one
 * just before it into the same temporary: returns the compare's first word and sets *cond
 * (WRT_FC_*), else WRT_NO_INDEX.
 */
uint32_t wrt_ld_fcmp_fusable(struct wrt_ld *ld, uint32_t i, uint32_t *cond)
{
	static const uint8_t masks[6] = {
	    WRT_FC_EQ, WRT_FC_EQ | WRT_FC_NOT, WRT_FC_LT,
	    WRT_FC_GT, WRT_FC_LT | WRT_FC_EQ,  WRT_FC_GT | WRT_FC_EQ}; /* eq ne lt gt le ge */
	if (!wrt_ld_fresh_result(ld, i))
		return WRT_NO_INDEX;
	uint32_t s = ld->last_start, op = ld->code[s] & 0xFFFFu, neg = 0;
	if (op == WRT_OP_I32_EQ_I && ld->code[s + 2] == 0 && ld->prev_start != WRT_NO_INDEX &&
	    ld->prev_end == s && ld->code[s + 1] == wrt_ld_home(ld, i) &&
	    (ld->code[ld->prev_start] >> 16) == wrt_ld_home(ld, i)) {
		s = ld->prev_start;
		op = ld->code[s] & 0xFFFFu;
		neg = WRT_FC_NOT;
	}
	if (op < WRT_OP_F32_EQ || op > WRT_OP_F64_GE_I)
		return WRT_NO_INDEX;
	*cond = masks[((op - WRT_OP_F32_EQ) >> 1) % 6] ^ neg;
	return s;
}

/* Whether some open loop took the test at word pc as its leading test (loop rotation reads
 * that test's words later, so they must stay as they are). */
bool wrt_ld_loop_head_at(struct wrt_ld *ld, uint32_t pc)
{
	for (uint32_t i = 0; i < ld->cd; i++)
		if (ld->ctl[i].kind == CTL_LOOP && ld->ctl[i].head_pc == pc)
			return true;
	return false;
}

/*
 * Turns the `i32.load8_u` (plain or _A) at word s, which ends at ncode, into the fused
 * byte-load-and-branch LD8BR_EQ/NE[_A] on imm (its words stay; the branch words follow).
 */
void wrt_ld_fuse_ld8_branch(struct wrt_ld *ld, uint32_t s, bool eq, uint32_t imm, struct wrt_ctl *c,
			    bool with_gas)
{
	bool a = (ld->code[s] & 0xFFFFu) == WRT_OP_I32_LOAD8_U_A;
	uint32_t op = a ? (eq ? WRT_OP_LD8BR_EQ_A : WRT_OP_LD8BR_NE_A)
			: (eq ? WRT_OP_LD8BR_EQ : WRT_OP_LD8BR_NE);
	ld->code[s] = (ld->code[s] & 0xFFFF0000u) | op;
	ld->ld_start = ld->ld_end = WRT_NO_INDEX;
	wrt_ld_label_here(ld);
	wrt_ld_emit(ld, imm);
	wrt_ld_emit_target(ld, c, with_gas);
	if (!with_gas)
		wrt_ld_emit(ld, 0);
}

/* The load8_u at word s is a plain or _A byte load ending at word end. */
bool wrt_ld_is_ld8(struct wrt_ld *ld, uint32_t s, uint32_t end)
{
	uint32_t op = ld->code[s] & 0xFFFFu;
	return (op == WRT_OP_I32_LOAD8_U && end == s + 3) ||
	       (op == WRT_OP_I32_LOAD8_U_A && end == s + 4);
}

/* Tries to fuse the float compare at word s (see fcmp_fusable) into a branch. */
static void fuse_fcmp_branch(struct wrt_ld *ld, uint32_t s, uint32_t cond, struct wrt_ctl *c,
			     bool with_gas)
{
	uint32_t op = ld->code[s] & 0xFFFFu, idx = op - WRT_OP_F32_EQ;
	bool f64 = idx >= 12, imm = idx & 1;
	uint32_t a, b0, b1 = 0;
	if (imm) {
		a = ld->code[s + 1];
		b0 = ld->code[s + 2];
		if (f64)
			b1 = ld->code[s + 3];
	} else {
		a = ld->code[s + 1] & 0xFFFFu;
		b0 = ld->code[s + 1] >> 16;
	}
	ld->ncode = s; /* drop the compare (and its i32.eqz) */
	wrt_ld_label_here(ld);
	wrt_ld_emit_op(ld,
		       f64 ? (imm ? WRT_OP_FBR_F64_I : WRT_OP_FBR_F64)
			   : (imm ? WRT_OP_FBR_F32_I : WRT_OP_FBR_F32),
		       a);
	wrt_ld_emit(ld, b0);
	if (f64 && imm)
		wrt_ld_emit(ld, b1);
	wrt_ld_emit(ld, cond);
	wrt_ld_emit_target(ld, c, with_gas);
	if (!with_gas)
		wrt_ld_emit(ld, 0);
}

/* Tries to fuse the compare just emitted (producing operand i) into a branch. */
bool wrt_ld_fuse_cmp_branch(struct wrt_ld *ld, uint32_t i, bool inverse, struct wrt_ctl *c,
			    bool with_gas)
{
	uint32_t fcond, fs = wrt_ld_fcmp_fusable(ld, i, &fcond);
	if (fs != WRT_NO_INDEX) {
		fuse_fcmp_branch(ld, fs, inverse ? fcond ^ WRT_FC_NOT : fcond, c, with_gas);
		return true;
	}
	if (!wrt_ld_fresh_result(ld, i) || ld->last_cmp < 0)
		return false;
	uint32_t cmp = (uint32_t)ld->last_cmp;
	if (inverse)
		cmp = wrt_cmp_inverse[cmp];
	uint32_t a = ld->last_a, b = ld->last_b;
	bool imm = ld->last_imm;
	uint32_t ps = ld->prev_start;
	if (imm && cmp <= 1 && ps != WRT_NO_INDEX && ld->prev_end == ld->last_start &&
	    wrt_ld_is_ld8(ld, ps, ld->prev_end) && (ld->code[ps] >> 16) == a &&
	    a == wrt_ld_home(ld, i) && !wrt_ld_loop_head_at(ld, ld->last_start)) {
		/* a byte just loaded into a temporary, compared with a constant: one op */
		ld->ncode = ld->last_start; /* drop the compare */
		wrt_ld_fuse_ld8_branch(ld, ps, cmp == 0, b, c, with_gas);
		return true;
	}
	uint32_t add = 0, fam = wrt_ld_add_before(ld, ld->last_start, a, &add);
	if (!fam && !imm) {
		/* `i += k; br_if (n == i)`: the added local is the second operand; swap */
		fam = wrt_ld_add_before(ld, ld->last_start, b, &add);
		if (fam) {
			uint32_t t = a;
			a = b;
			b = t;
			cmp = wrt_cmp_swapped[cmp];
		}
	}
	if (fam) {
		/* x += k (or x += y) just before: one op adds, compares and branches */
		ld->ncode = ld->wr_start;
		wrt_ld_label_here(ld);
		wrt_ld_emit_op(ld, wrt_ld_fused_op(fam, cmp, imm), a);
		wrt_ld_emit(ld, add);
		wrt_ld_emit(ld, b);
		wrt_ld_emit_target(ld, c, with_gas);
		if (!with_gas)
			wrt_ld_emit(ld, 0);
		return true;
	}
	ld->ncode = ld->last_start; /* drop the compare */
	wrt_ld_label_here(ld);
	wrt_ld_emit_op(ld, wrt_ld_fused_op(WRT_OP_BR_EQ, cmp, imm), a);
	wrt_ld_emit(ld, b);
	wrt_ld_emit_target(ld, c, with_gas);
	if (!with_gas)
		wrt_ld_emit(ld, 0); /* the fused ops always carry a gas word */
	return true;
}

/* Remembers that the conditional branch at test_pc is the first thing loop ctl[li] does. */
void wrt_ld_note_loop_head(struct wrt_ld *ld, uint32_t li, uint32_t test_pc,
			   enum wrt_loop_head kind, uint32_t target)
{
	/* blocks between the loop and the test emit no code: look through them */
	while (li < ld->cd && li > 0 && ld->ctl[li].kind == CTL_BLOCK)
		li--;
	if (li >= ld->cd || ld->st)
		return;
	struct wrt_ctl *l = &ld->ctl[li];
	if (l->kind != CTL_LOOP || l->np)
		return;
	/* the test may read a load that is the loop's first op (`while (p[i] != c)`) */
	uint32_t pre = test_pc;
	if (l->body_pc != test_pc) {
		if (ld->ld_start != l->body_pc || ld->ld_end != test_pc)
			return;
		pre = ld->ld_start;
	}
	if (kind == WRT_HEAD_EXIT && target == li)
		return; /* a continue, not a test */
	if (kind == WRT_HEAD_EXIT && target > li)
		kind = WRT_HEAD_BLOCK_END; /* to the end of a block that starts with the loop */
	if (pre != test_pc && ld->wr_end == test_pc &&
	    (ld->code[ld->wr_start] & 0xFFFFu) == WRT_OP_I32_ADD_I)
		return; /* that add may still fuse into the test (ADDBR) */
	l->head_pc = test_pc;
	l->head_pre = pre;
	l->head_kind = (uint8_t)kind;
	l->head_target = target;
	l->head_else = kind == WRT_HEAD_IF ? ld->ctl[target].else_pos : WRT_NO_INDEX;
	l->head_else_pc = WRT_NO_INDEX;
	if (kind == WRT_HEAD_IF || kind == WRT_HEAD_BLOCK_END)
		ld->ctl[target].head_of = li;
}

/*
 * For a repeated test `cmp_op a, b` (BR_<cmp>[_I]) just after `x += k` (or `x += y`) on a or,
 * for a slot b, on b (then the operands and the compare are swapped): the fused
 * add-compare-branch op, its operands in *a, *b and the increment in *add; else 0.
 */
static uint32_t addbr_for_test(struct wrt_ld *ld, uint32_t cmp_op, uint32_t *a, uint32_t *b,
			       uint32_t *add)
{
	if (!wrt_ld_is_br_cmp(cmp_op))
		return 0;
	uint32_t k = (cmp_op - WRT_OP_BR_EQ) / 2, imm = (cmp_op - WRT_OP_BR_EQ) % 2;
	uint32_t fam = wrt_ld_add_before(ld, ld->ncode, *a, add);
	if (!fam && !imm) {
		fam = wrt_ld_add_before(ld, ld->ncode, *b, add);
		if (!fam)
			return 0;
		uint32_t t = *a;
		*a = *b;
		*b = t;
		k = wrt_cmp_swapped[k];
	}
	return fam ? wrt_ld_fused_op(fam, k, imm) : 0;
}

/*
 * For a rotated back-edge that repeats `i32.load8_u` (plain or with an added immediate) and
 * then tests the loaded byte against a constant with == or !=: the fused op (LD8BR_*), or 0.
 */
static uint32_t ld8br_op(struct wrt_ld *ld, const struct wrt_ctl *c, uint32_t inv, uint32_t w0)
{
	uint32_t n = c->head_pc - c->head_pre;
	if (!n || (inv != WRT_OP_BR_EQ_I && inv != WRT_OP_BR_NE_I))
		return 0;
	uint32_t lw = ld->code[c->head_pre], lop = lw & 0xFFFFu;
	if ((lw >> 16) != (w0 >> 16))
		return 0; /* the test reads something else than the loaded byte */
	bool eq = inv == WRT_OP_BR_EQ_I;
	if (lop == WRT_OP_I32_LOAD8_U && n == 3)
		return eq ? WRT_OP_LD8BR_EQ : WRT_OP_LD8BR_NE;
	if (lop == WRT_OP_I32_LOAD8_U_A && n == 4)
		return eq ? WRT_OP_LD8BR_EQ_A : WRT_OP_LD8BR_NE_A;
	return 0;
}

/*
 * Loop rotation for `br` back to a loop whose first instruction is its exit test (while
 * loops: clang's `loop { if (c) { ...; br 1 } }` and `loop { br_if exit (!c); ...; br 0 }`):
 * instead of jumping back to the test, repeat it here, jumping into the body when the loop
 * continues. Saves one dispatch per iteration. Only from the loop header's gas region (the
 * repeated test charges the region like a fused back-edge).
 */
bool wrt_ld_rotate_back_edge(struct wrt_ld *ld, struct wrt_ctl *c)
{
	if (c->kind != CTL_LOOP || c->head_pc == WRT_NO_INDEX || c->np)
		return false;
	uint8_t next = ld->pos < ld->end ? ld->b[ld->pos] : 0;
	bool jump_else = false; /* after the test, jump to where its false path goes */
	if (c->head_kind == WRT_HEAD_IF) {
		/* either the if is the innermost block, in its then-arm, and this br ends the
		 * arm (the code after this instruction is where the test's false path goes), or
		 * that place is already known */
		struct wrt_ctl *hif = &ld->ctl[c->head_target];
		bool here = c->head_target < ld->cd && wrt_ld_top(ld) == hif &&
			    hif->kind == CTL_IF && hif->else_pos == c->head_else &&
			    (next == 0x05 || next == 0x0B);
		if (!here && c->head_else_pc == WRT_NO_INDEX)
			return false;
		jump_else = !here;
	} else if (c->head_kind == WRT_HEAD_BLOCK_END) {
		if (c->head_else_pc == WRT_NO_INDEX)
			return false; /* the block the test jumps to has not ended yet */
	} else if (c->head_target >= ld->cd) {
		return false;
	}
	uint32_t w0 = ld->code[c->head_pc];
	uint32_t op = w0 & 0xFFFFu, len, inv;
	if (op == WRT_OP_BR_IFZ) {
		inv = WRT_OP_BR_IF;
		len = 2;
	} else if (op == WRT_OP_BR_IF) {
		inv = WRT_OP_BR_IFZ;
		len = 3;
	} else if (wrt_ld_is_br_cmp(op)) {
		uint32_t k = (op - WRT_OP_BR_EQ) / 2, imm = (op - WRT_OP_BR_EQ) % 2;
		inv = wrt_ld_fused_op(WRT_OP_BR_EQ, wrt_cmp_inverse[k], imm);
		len = 4;
	} else {
		return false;
	}
	bool to_block = c->head_kind == WRT_HEAD_BLOCK_END;
	uint32_t block_op = c->head_taken ? op : inv; /* to_block: the repeated test's op */
	if (to_block && (op == WRT_OP_BR_IFZ || (block_op == WRT_OP_BR_IFZ && ld->m->metered)))
		return false; /* BR_IFZ has no gas word */
	if (!to_block && c->head_pre != c->head_pc && op == WRT_OP_BR_IF && ld->m->metered)
		return false;
	if (c->head_pre != c->head_pc) {
		/* repeat the load or add the test reads too; a load keeps its trap location
		 * (ops without a source-map entry do not trap) */
		uint32_t wasm = WRT_NO_INDEX;
		for (uint32_t i = ld->nsm; i > 0 && ld->sm[i - 1].code >= c->head_pre; i--)
			if (ld->sm[i - 1].code == c->head_pre)
				wasm = ld->sm[i - 1].wasm;
		if (wasm != WRT_NO_INDEX)
			wrt_ld_srcmap(ld, wasm);
		for (uint32_t i = c->head_pre; i < c->head_pc; i++)
			wrt_ld_emit(ld, ld->code[i]);
	}
	uint32_t gas = wrt_ld_back_edge_gas(ld, c);
	uint32_t body = c->head_pc + len;
	if (to_block) {
		/* both ways stay in the loop: the test to where it went (the end of a block
		 * inside the loop) or on into the body; the likelier one is the branch */
		uint32_t t = c->head_else_pc;
		uint32_t to = c->head_taken ? t : body, fall = c->head_taken ? body : t;
		uint32_t add = 0, fam = wrt_ld_add_before(ld, ld->ncode, w0 >> 16, &add);
		uint32_t ta = w0 >> 16, tb = ld->code[c->head_pc + 1], fop;
		if (block_op == WRT_OP_BR_IF && fam) {
			/* `x += k; br_if x`: add, test non-zero, branch */
			ld->ncode = ld->wr_start;
			wrt_ld_emit(ld,
				    (w0 & 0xFFFF0000u) | wrt_ld_fused_op(fam, WRT_CMP_NE, true));
			wrt_ld_emit(ld, add);
			wrt_ld_emit(ld, 0);
			wrt_ld_emit(ld, to - ld->ncode);
			wrt_ld_emit(ld, gas);
		} else if (op != WRT_OP_BR_IF && op != WRT_OP_BR_IFZ &&
			   (fop = addbr_for_test(ld, block_op, &ta, &tb, &add)) != 0) {
			/* `i += k; br_if (i == n)` repeated: add, compare, branch */
			ld->ncode = ld->wr_start;
			wrt_ld_emit_op(ld, fop, ta);
			wrt_ld_emit(ld, add);
			wrt_ld_emit(ld, tb);
			wrt_ld_emit(ld, to - ld->ncode);
			wrt_ld_emit(ld, gas);
		} else {
			wrt_ld_emit(ld, (w0 & 0xFFFF0000u) | block_op);
			if (op != WRT_OP_BR_IF)
				wrt_ld_emit(ld, ld->code[c->head_pc + 1]);
			wrt_ld_emit(ld, to - ld->ncode);
			if (block_op != WRT_OP_BR_IFZ)
				wrt_ld_emit(ld, gas);
		}
		wrt_ld_emit(ld, WRT_OP_BR);
		wrt_ld_emit(ld, fall - ld->ncode);
		wrt_ld_emit(ld, gas);
		wrt_ld_label_here(ld);
		return true;
	}
	uint32_t add = 0, fam = wrt_ld_add_before(ld, ld->ncode, w0 >> 16, &add);
	uint32_t ga = w0 >> 16, gb = ld->code[c->head_pc + 1], gop;
	if (op == WRT_OP_BR_IFZ && fam) {
		/* count-down loop `if (x) { ...; x += k; br }`: add, test non-zero, branch */
		ld->ncode = ld->wr_start;
		wrt_ld_emit(ld, (w0 & 0xFFFF0000u) | wrt_ld_fused_op(fam, WRT_CMP_NE, true));
		wrt_ld_emit(ld, add);
		wrt_ld_emit(ld, 0);
		wrt_ld_emit(ld, body - ld->ncode);
		wrt_ld_emit(ld, gas);
	} else if (inv == WRT_OP_BR_IFZ) {
		/* a br_if head tested "non-zero exits": continue when zero (BR_IFZ has no gas
		 * word, so keep the plain back-edge when metering) */
		if (ld->m->metered)
			return false;
		wrt_ld_emit(ld, (w0 & 0xFFFF0000u) | inv);
		wrt_ld_emit(ld, body - ld->ncode);
	} else if (inv == WRT_OP_BR_IF) {
		wrt_ld_emit(ld, (w0 & 0xFFFF0000u) | inv);
		wrt_ld_emit(ld, body - ld->ncode);
		wrt_ld_emit(ld, gas);
	} else if ((gop = addbr_for_test(ld, inv, &ga, &gb, &add)) != 0) {
		/* the loop's `x += k` (or `x += y`) before the back-edge joins the repeated test
		 * (x may be either operand of a slot-slot compare) */
		ld->ncode = ld->wr_start;
		wrt_ld_emit_op(ld, gop, ga);
		wrt_ld_emit(ld, add);
		wrt_ld_emit(ld, gb);
		wrt_ld_emit(ld, body - ld->ncode);
		wrt_ld_emit(ld, gas);
	} else if (ld8br_op(ld, c, inv, w0)) {
		/* the repeated load of a byte and its test against a constant: one op */
		uint32_t at = ld->ncode - (c->head_pc - c->head_pre);
		ld->code[at] = (ld->code[at] & 0xFFFF0000u) | ld8br_op(ld, c, inv, w0);
		wrt_ld_emit(ld, ld->code[c->head_pc + 1]);
		wrt_ld_emit(ld, body - ld->ncode);
		wrt_ld_emit(ld, gas);
	} else {
		wrt_ld_emit(ld, (w0 & 0xFFFF0000u) | inv);
		wrt_ld_emit(ld, ld->code[c->head_pc + 1]);
		wrt_ld_emit(ld, body - ld->ncode);
		wrt_ld_emit(ld, gas);
	}
	if (c->head_kind ==
	    WRT_HEAD_EXIT) { /* falling through leaves the loop: go where its test went */
		ld->fwd_br = ld->ncode;
		wrt_ld_emit(ld, WRT_OP_BR);
		wrt_ld_emit_target(ld, &ld->ctl[c->head_target], true);
	} else if (jump_else) {
		/* the test's false path stays in the loop (the code after the if): this jump
		 * closes the iteration, so it charges the back-edge too (found by the fuzzer:
		 * with 0 here `loop { x++; if (x == 5) { br loop } ...; br loop }` never ran
		 * out of gas) */
		wrt_ld_emit(ld, WRT_OP_BR);
		wrt_ld_emit(ld, c->head_else_pc - ld->ncode);
		wrt_ld_emit(ld, gas);
	}
	wrt_ld_label_here(ld);
	return true;
}
