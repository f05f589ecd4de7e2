/*
 * wrt_validate.c - the loader's validation stacks, with the spec's algorithm: an operand
 * type stack and a control stack, both explicit arrays grown on demand up to named limits,
 * no recursion. While code is reachable, the type-stack height is also the run-time stack
 * height, so each operand also records where its value is (its home slot, a local, or a
 * constant not yet materialized), and every branch gets its target and stack adjustment
 * resolved here; unreachable code is validated but not emitted.
 */
#include "wasm/wrt_ld.h"

#include <stdio.h>
#include <string.h>

/* ---- type stack and virtual operand stack ------------------------------------------ */

uint32_t wrt_ld_home(struct wrt_ld *ld, uint32_t i)
{
	return ld->nlocals + i;
}

/*
 * The loader's scratch starts small and doubles on demand up to K32_WASM_MAX_OPERANDS
 * operands and K32_WASM_MAX_BLOCK_DEPTH blocks: a driver needs a few hundred bytes where
 * the limits would take 130 KiB. The four operand arrays share one allocation
 * (vv, vhi: 4 bytes an operand; vt, vk: 1 byte).
 */
#define WRT_LD_OPERANDS0 64
#define WRT_LD_BLOCKS0	 16

size_t wrt_ld_operands_bytes(uint32_t cap)
{
	return (size_t)cap * 10;
}

bool wrt_ld_grow_operands(struct wrt_ld *ld)
{
	uint32_t cap = ld->v_cap ? ld->v_cap * 2 : WRT_LD_OPERANDS0;
	if (cap > K32_WASM_MAX_OPERANDS)
		cap = K32_WASM_MAX_OPERANDS;
	uint8_t *p = k32_alloc(&ld->scratch, wrt_ld_operands_bytes(cap));
	if (!p) {
		wrt_ld_no_memory(ld, ld->pos);
		return false;
	}
	uint32_t *vv = (uint32_t *)(void *)p, *vhi = vv + cap;
	uint8_t *vt = (uint8_t *)(vhi + cap), *vk = vt + cap;
	if (ld->v_cap) {
		memcpy(vv, ld->vv, (size_t)ld->v_cap * 4);
		memcpy(vhi, ld->vhi, (size_t)ld->v_cap * 4);
		memcpy(vt, ld->vt, ld->v_cap);
		memcpy(vk, ld->vk, ld->v_cap);
		k32_free(&ld->scratch, ld->vv, wrt_ld_operands_bytes(ld->v_cap));
	}
	ld->vv = vv;
	ld->vhi = vhi;
	ld->vt = vt;
	ld->vk = vk;
	ld->v_cap = cap;
	return true;
}

bool wrt_ld_grow_ctl(struct wrt_ld *ld)
{
	uint32_t cap = ld->ctl_cap ? ld->ctl_cap * 2 : WRT_LD_BLOCKS0;
	if (cap > K32_WASM_MAX_BLOCK_DEPTH)
		cap = K32_WASM_MAX_BLOCK_DEPTH;
	struct wrt_ctl *n = k32_alloc(&ld->scratch, sizeof(*n) * cap);
	if (!n) {
		wrt_ld_no_memory(ld, ld->pos);
		return false;
	}
	if (ld->ctl_cap) {
		memcpy(n, ld->ctl, sizeof(*n) * ld->ctl_cap);
		/* a one-value block type points at its own entry's storage */
		for (uint32_t i = 0; i < ld->ctl_cap; i++)
			if (ld->ctl[i].results == &ld->ctl[i].single)
				n[i].results = &n[i].single;
		k32_free(&ld->scratch, ld->ctl, sizeof(*n) * ld->ctl_cap);
	}
	ld->ctl = n;
	ld->ctl_cap = cap;
	return true;
}

void wrt_ld_push(struct wrt_ld *ld, uint8_t t)
{
	if (ld->st)
		return;
	if (ld->vh >= K32_WASM_MAX_OPERANDS) {
		wrt_ld_limit_hit(ld, ld->pos, "operand stack too deep", "K32_WASM_MAX_OPERANDS");
		return;
	}
	if (ld->nlocals + ld->vh >= WRT_MAX_SLOTS) {
		wrt_ld_limit_hit(ld, ld->pos,
				 "function frame exceeds 65535 slots (locals + operands)",
				 "WRT_MAX_SLOTS");
		return;
	}
	if (ld->vh >= ld->v_cap && !wrt_ld_grow_operands(ld))
		return;
	ld->vt[ld->vh] = t;
	ld->vk[ld->vh] = VK_HOME;
	ld->vh++;
	if (ld->vh > ld->vmax)
		ld->vmax = ld->vh;
}

void wrt_ld_push_lazy(struct wrt_ld *ld, uint8_t t, uint8_t kind, uint32_t lo, uint32_t hi)
{
	wrt_ld_push(ld, t);
	if (ld->st)
		return;
	ld->vk[ld->vh - 1] = kind;
	ld->vv[ld->vh - 1] = lo;
	ld->vhi[ld->vh - 1] = hi;
}

uint8_t wrt_ld_pop(struct wrt_ld *ld, size_t off)
{
	struct wrt_ctl *c = wrt_ld_top(ld);
	if (ld->st)
		return WRT_T_UNKNOWN;
	if (ld->vh == c->height) {
		if (c->unreachable)
			return WRT_T_UNKNOWN;
		wrt_ld_invalid(ld, off, "type mismatch (operand stack underflow)");
		return WRT_T_UNKNOWN;
	}
	return ld->vt[--ld->vh];
}

uint8_t wrt_ld_pop_expect(struct wrt_ld *ld, uint8_t want, size_t off)
{
	uint8_t t = wrt_ld_pop(ld, off);
	if (!ld->st && t != want && t != WRT_T_UNKNOWN && want != WRT_T_UNKNOWN)
		wrt_ld_invalid(ld, off, "type mismatch");
	return t;
}

void wrt_ld_pop_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n, size_t off)
{
	for (uint32_t i = n; i > 0 && !ld->st; i--)
		wrt_ld_pop_expect(ld, ts[i - 1], off);
}

void wrt_ld_push_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		wrt_ld_push(ld, ts[i]);
}

/* Puts operand i in its home slot (emits a copy or a constant load if it is not there). */
void wrt_ld_materialize(struct wrt_ld *ld, uint32_t i)
{
	if (ld->vk[i] == VK_LOCAL) {
		wrt_ld_emit_op(ld, WRT_OP_COPY, wrt_ld_home(ld, i));
		wrt_ld_emit(ld, ld->vv[i]);
	} else if (ld->vk[i] == VK_CONST) {
		if (ld->vhi[i] == 0) {
			wrt_ld_emit_op(ld, WRT_OP_CONST32, wrt_ld_home(ld, i));
			wrt_ld_emit(ld, ld->vv[i]);
		} else {
			wrt_ld_emit_op(ld, WRT_OP_CONST64, wrt_ld_home(ld, i));
			wrt_ld_emit(ld, ld->vv[i]);
			wrt_ld_emit(ld, ld->vhi[i]);
		}
	}
	ld->vk[i] = VK_HOME;
}

void wrt_ld_materialize_range(struct wrt_ld *ld, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (ld->vk[i] != VK_HOME)
			wrt_ld_materialize(ld, i);
}

bool wrt_ld_any_lazy(struct wrt_ld *ld, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (ld->vk[i] != VK_HOME)
			return true;
	return false;
}

/* The slot operand i can be read from (constants are materialized first). */
uint32_t wrt_ld_opnd(struct wrt_ld *ld, uint32_t i)
{
	if (ld->vk[i] == VK_LOCAL)
		return ld->vv[i];
	if (ld->vk[i] == VK_CONST)
		wrt_ld_materialize(ld, i);
	return wrt_ld_home(ld, i);
}

/* Records the instruction just emitted (from start) as writing operand i's home slot. */
void wrt_ld_result_at(struct wrt_ld *ld, uint32_t start, uint32_t i)
{
	ld->prev_start = ld->last_start;
	ld->prev_end = ld->last_end;
	ld->last_start = start;
	ld->last_end = ld->ncode;
	ld->last_h = i;
	ld->last_cmp = -1;
}

bool wrt_ld_fresh_result(struct wrt_ld *ld, uint32_t i)
{
	return ld->last_end == ld->ncode && ld->last_h == i && ld->vk[i] == VK_HOME;
}

void wrt_ld_set_unreachable(struct wrt_ld *ld)
{
	struct wrt_ctl *c = wrt_ld_top(ld);
	ld->vh = c->height;
	c->unreachable = true;
}

void wrt_ld_push_ctl(struct wrt_ld *ld, uint8_t kind, const uint8_t *params, uint32_t np,
		     const uint8_t *results, uint32_t nr, size_t off)
{
	if (ld->st)
		return;
	if (ld->cd >= K32_WASM_MAX_BLOCK_DEPTH) {
		wrt_ld_limit_hit(ld, off, "blocks nested too deep", "K32_WASM_MAX_BLOCK_DEPTH");
		return;
	}
	if (ld->cd >= ld->ctl_cap && !wrt_ld_grow_ctl(ld))
		return;
	bool dead = ld->cd ? !wrt_ld_live(ld) : false;
	struct wrt_ctl *c = &ld->ctl[ld->cd++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->dead = dead;
	c->height = ld->vh;
	c->params = params;
	c->np = np;
	c->nr = nr;
	c->results = results;
	c->patch = WRT_NO_INDEX;
	c->else_pos = WRT_NO_INDEX;
	c->label_pc = WRT_NO_INDEX;
	c->loop_gas_pos = WRT_NO_INDEX;
	c->gas_entry = ld->gas_pos;
	c->body_pc = WRT_NO_INDEX;
	c->head_pc = WRT_NO_INDEX;
	c->head_pre = WRT_NO_INDEX;
	c->head_else_pc = WRT_NO_INDEX;
	c->head_of = WRT_NO_INDEX;
	wrt_ld_push_types(ld, params, np);
	wrt_ld_label_here(ld);
}

/* Reads a block type; for a single value type the result points at *single. */
void wrt_ld_rd_blocktype(struct wrt_ld *ld, uint8_t *single, const uint8_t **params, uint32_t *np,
			 const uint8_t **results, uint32_t *nr)
{
	size_t off = ld->pos;
	*np = *nr = 0;
	*params = *results = NULL;
	if (ld->pos >= ld->end) {
		wrt_ld_malformed(ld, off, "unexpected end");
		return;
	}
	uint8_t b = ld->b[ld->pos];
	if (b == 0x40) {
		ld->pos++;
		return;
	}
	if (wrt_ld_is_numtype(b) || wrt_ld_is_reftype(b) || b == 0x7B) {
		*single = wrt_ld_rd_valtype(ld);
		*results = single;
		*nr = 1;
		return;
	}
	int64_t x = (int64_t)wrt_ld_rd_leb(ld, 33, true);
	if (ld->st)
		return;
	if (x < 0) {
		wrt_ld_malformed(ld, off, "malformed block type");
		return;
	}
	if ((uint64_t)x >= ld->m->ntypes) {
		wrt_ld_invalid(ld, off, "unknown type");
		return;
	}
	const struct wrt_functype *ft = &ld->m->types[x];
	*params = ft->types;
	*np = ft->nparams;
	*results = ft->types + ft->nparams;
	*nr = ft->nresults;
}

void wrt_ld_label_types(struct wrt_ctl *c, const uint8_t **ts, uint32_t *n)
{
	if (c->kind == CTL_LOOP) {
		*ts = c->params;
		*n = c->np;
	} else {
		*ts = c->results;
		*n = c->nr;
	}
}

/*
 * Emits the offset word naming c as a branch target (resolved for loops, chained for forward
 * targets) and, if with_gas, the gas word after it: a back-edge taken from inside the loop
 * header's own region charges that region's count so far and jumps past the header's GAS op.
 */
/*
 * Gas a back-edge to loop c charges: the instructions of the loop from its start up to here
 * (at least 1, the branch itself). A loop has no GAS op of its own: the region it starts in
 * also counts its body, so the first iteration is paid on entry and each back-edge pays the
 * next one.
 */
uint32_t wrt_ld_back_edge_gas(struct wrt_ld *ld, struct wrt_ctl *c)
{
	if (!ld->m->metered || ld->gas_pos == WRT_NO_INDEX)
		return 0;
	if (ld->gas_pos == c->loop_gas_pos && ld->code[ld->gas_pos] > c->loop_gas_base)
		return ld->code[ld->gas_pos] - c->loop_gas_base;
	return 1 + ld->code[ld->gas_pos]; /* (not expected) a conservative charge */
}

void wrt_ld_emit_target(struct wrt_ld *ld, struct wrt_ctl *c, bool with_gas)
{
	uint32_t gas = 0;
	if (c->kind == CTL_LOOP) {
		if (with_gas)
			gas = wrt_ld_back_edge_gas(ld, c);
		wrt_ld_emit(ld, c->label_pc - ld->ncode);
	} else {
		uint32_t pos = ld->ncode;
		wrt_ld_emit(ld, c->patch);
		if (!ld->st)
			c->patch = pos;
	}
	if (with_gas)
		wrt_ld_emit(ld, gas);
}

uint32_t wrt_ld_rd_label(struct wrt_ld *ld, size_t off)
{
	uint32_t l = wrt_ld_rd_u32(ld);
	if (!ld->st && l >= ld->cd) {
		wrt_ld_invalid(ld, off, "unknown label");
		return 0;
	}
	return l;
}
