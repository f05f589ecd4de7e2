/*
 * wrt_ld.h - the Wasm loader's private state, shared by its stages (not part of wrt.h).
 *
 * The loader is one pass over the binary: sections are decoded in order, and each function
 * body is validated and compiled instruction by instruction in the same pass. The code is
 * split by stage, each stage its own file working on the one struct wrt_ld:
 *
 *   wrt_load.c      wrt_module_load/free: the entry point, errors, module storage, and
 *                   what the module keeps after the load (owned bytes, packed source map)
 *   wrt_decode.c    binary readers (LEB128, names, types, limits), constant expressions,
 *                   the sections in order (the code section calls the compiler per body)
 *   wrt_validate.c  the spec's validation stacks: operand types (with each operand's
 *                   compile-time home, local or constant), control frames, block types,
 *                   labels and their branch targets
 *   wrt_compile.c   code emission and the per-instruction compiler (body_op, one function
 *                   per opcode group), with the peepholes that only look at the last op
 *   wrt_optimise.c  compare-and-branch fusion and loop rotation, which rewrite the code
 *                   just emitted (see docs/wasm-runtime.md, "Design")
 *
 * Errors: decoding stops at the first error; ld->st latches it and every reader returns 0
 * after that, so loops check ld->st. Messages carry the byte offset and the rule broken.
 * Malformed binaries give K32_ERR_CORRUPT, invalid modules K32_ERR_INVALID_ARGS.
 */
#ifndef WRT_LD_H
#define WRT_LD_H

#include "wasm/wrt_int.h"

#define WRT_T_UNKNOWN 0

enum { CTL_BLOCK, CTL_LOOP, CTL_IF, CTL_ELSE, CTL_FUNC };

/*
 * What a loop's leading exit test is, for loop rotation (wrt_optimise.c): the back-edge
 * repeats that test instead of jumping back to it.
 */
enum wrt_loop_head {
	WRT_HEAD_NONE,	    /* no leading test (head_pc is WRT_NO_INDEX) */
	WRT_HEAD_IF,	    /* `loop { if (c) { ...; br 1 } }`: an if whose then-arm loops */
	WRT_HEAD_EXIT,	    /* `loop { br_if exit (!c); ...; br 0 }`: a br_if out of the loop */
	WRT_HEAD_BLOCK_END, /* a br_if to the end of a block inside the loop: both ways stay */
};

/*
 * The i32 compares in WRT_CMP32 order, which is also the order of their Wasm bytes
 * (i32.eq 0x46 .. i32.ge_u 0x4F). Each fused family (BR_, ADDBR_, SELECT_, RADDBR_) is a run
 * of 2 * WRT_CMP__COUNT ops from its _EQ op: the compare's index times two, plus one for
 * the _I (immediate) variant; wrt_ld_fused_op builds one, wrt_ld_is_br_cmp tests for BR_.
 */
enum wrt_cmp {
#define WRT_X_CMP_INDEX(name, op, type, inv) WRT_CMP_##name,
	WRT_CMP32(WRT_X_CMP_INDEX)
#undef WRT_X_CMP_INDEX
	    WRT_CMP__COUNT
};
_Static_assert(WRT_OP_BR_GE_U_I == WRT_OP_BR_EQ + 2 * WRT_CMP__COUNT - 1 &&
		   WRT_OP_ADDBR_GE_U_I == WRT_OP_ADDBR_EQ + 2 * WRT_CMP__COUNT - 1 &&
		   WRT_OP_SELECT_GE_U_I == WRT_OP_SELECT_EQ + 2 * WRT_CMP__COUNT - 1 &&
		   WRT_OP_RADDBR_GE_U_I == WRT_OP_RADDBR_EQ + 2 * WRT_CMP__COUNT - 1,
	       "fused compare families are runs of (op, op_I) pairs in WRT_CMP32 order");

/* The op of family `base` (WRT_OP_BR_EQ, ..._ADDBR_EQ, ...) for compare cmp, _I if imm. */
static inline uint32_t wrt_ld_fused_op(uint32_t base, uint32_t cmp, bool imm)
{
	return base + 2u * cmp + (imm ? 1u : 0u);
}

/* Whether op is a fused compare-and-branch BR_<cmp>[_I]. */
static inline bool wrt_ld_is_br_cmp(uint32_t op)
{
	return op >= WRT_OP_BR_EQ && op < WRT_OP_BR_EQ + 2u * WRT_CMP__COUNT;
}

struct wrt_ctl {
	uint8_t kind;		/* CTL_* */
	bool unreachable;	/* rest of this block is unreachable */
	bool dead;		/* pushed in unreachable code: nothing emitted for it */
	uint8_t single;		/* storage for a one-value block type */
	uint32_t height;	/* type-stack height at entry, params excluded */
	uint32_t np, nr;	/* params, results */
	const uint8_t *params;	/* param types */
	const uint8_t *results; /* result types */
	uint32_t label_pc;	/* loop: word index of its header */
	uint32_t patch;		/* chain of forward references to the end, WRT_NO_INDEX ends */
	uint32_t else_pos;	/* if: word of BR_IFZ's offset, WRT_NO_INDEX if none */
	uint32_t loop_gas_pos;	/* loop: the gas region it started in, WRT_NO_INDEX if none */
	uint32_t loop_gas_base; /* loop: that region's count when the loop began */
	uint32_t gas_entry;	/* the open GAS immediate when the block began */
	uint32_t body_pc;	/* loop: first word after the header (and its GAS op) */
	uint32_t head_pc;	/* loop: its leading exit test (if or br_if), else WRT_NO_INDEX */
	uint32_t head_pre;	/* loop: start of the load the test reads (== head_pc if none) */
	uint32_t head_target;	/* loop: ctl index that test jumps to */
	uint8_t head_kind;	/* loop: enum wrt_loop_head */
	bool head_taken;	/* loop, HEAD_BLOCK_END: that block's end only the branch reaches */
	uint32_t head_else;	/* loop with an if test: that if's else_pos word */
	uint32_t
	    head_else_pc; /* loop with an if test: where that test's false path goes, once known */
	uint32_t head_of; /* if: the loop whose leading test it is, WRT_NO_INDEX if none */
};

struct wrt_ld {
	struct wrt_module *m;
	struct k32_allocator scratch; /* working memory (wrt_load_opts.scratch) */
	const uint8_t *b;	      /* module bytes */
	size_t pos, end;	      /* cursor and end of the current section or body */
	k32_status_t st;	      /* first error */
	struct k32_err *err;
	/* validator (scratch grown on demand up to the K32_WASM_* limits: see grow_operands) */
	uint32_t v_cap;	     /* operands vt, vk, vv, vhi hold (one allocation) */
	uint32_t ctl_cap;    /* entries ctl holds */
	uint8_t *vt;	     /* operand types */
	uint32_t vh, vmax;   /* height, highest height in this function */
	struct wrt_ctl *ctl; /* control stack */
	uint32_t cd;	     /* control depth */
	uint8_t *locals;     /* local types of the current function */
	uint32_t nlocals, locals_cap;
	uint8_t *declared;  /* bitmap: functions ref.func may name */
	uint32_t datacount; /* from the data count section */
	/* compiler */
	uint32_t *code; /* all functions' code */
	uint32_t ncode, code_cap;
	struct wrt_srcmap *sm; /* trap source map */
	uint32_t nsm, sm_cap;
	uint32_t gas_pos;	       /* word of the open GAS immediate, WRT_NO_INDEX if none */
	uint8_t *vk;		       /* per operand: VK_HOME, VK_LOCAL or VK_CONST */
	uint32_t *vv;		       /* local index or constant (low word) */
	uint32_t *vhi;		       /* constant high word */
	uint32_t last_start;	       /* first word of the last result-producing op */
	uint32_t last_end;	       /* ncode after it; WRT_NO_INDEX: no peephole */
	uint32_t last_h;	       /* operand its result is home to */
	int8_t last_cmp;	       /* i32 compare (WRT_CMP32 index) or -1 */
	uint32_t last_a, last_b;       /* its operands (b: slot or immediate) */
	bool last_imm;		       /* b is an immediate */
	uint32_t prev_start, prev_end; /* the result-producing op before the last one */
	uint32_t wr_start, wr_end; /* last op retargeted to write a local (wr_end: ncode after) */
	uint32_t wr_local;	   /* that local */
	uint32_t ld_start, ld_end; /* the last load emitted (a loop test's prefix), words */
	uint32_t fwd_br;	   /* the last plain BR to a block end (w0), WRT_NO_INDEX if none */
	const struct wrt_functype *ftype; /* current function's type */
	uint32_t body_pc; /* ncode where the body's first op goes (after the entry GAS op) */
	uint32_t cp_start, cp_end;   /* the last COPY into a local (cp_end: ncode after it) */
	uint32_t inc_start, inc_end; /* the last in-place `x += k` (I32_ADD_I x, x, k) */
};

/* Where an operand's value is: in its home slot (nlocals + height), in a local, or a constant. */
enum { VK_HOME, VK_LOCAL, VK_CONST };

/* ---- wrt_load.c ---- */

k32_status_t wrt_ld_fail(struct wrt_ld *ld, k32_status_t st, size_t off, const char *what,
			 const char *detail);

void wrt_ld_malformed(struct wrt_ld *ld, size_t off, const char *what);

void wrt_ld_invalid(struct wrt_ld *ld, size_t off, const char *what);

void wrt_ld_limit_hit(struct wrt_ld *ld, size_t off, const char *what, const char *name);

void wrt_ld_no_memory(struct wrt_ld *ld, size_t off);

void *wrt_ld_alloc(struct wrt_ld *ld, size_t len);

/* ---- wrt_decode.c ---- */

uint8_t wrt_ld_rd_u8(struct wrt_ld *ld);

uint64_t wrt_ld_rd_leb(struct wrt_ld *ld, unsigned bits, bool sign);

uint32_t wrt_ld_rd_u32(struct wrt_ld *ld);

/* A vector count: each element takes at least one byte, so it cannot exceed what is left. */
uint32_t wrt_ld_rd_count(struct wrt_ld *ld, uint32_t limit, const char *limit_name);

bool wrt_ld_is_numtype(uint8_t t);

bool wrt_ld_is_reftype(uint8_t t);

uint8_t wrt_ld_rd_valtype(struct wrt_ld *ld);

uint8_t wrt_ld_rd_reftype(struct wrt_ld *ld);

void wrt_ld_sections(struct wrt_ld *ld, size_t len);

/* ---- wrt_validate.c ---- */

uint32_t wrt_ld_home(struct wrt_ld *ld, uint32_t i);

size_t wrt_ld_operands_bytes(uint32_t cap);

bool wrt_ld_grow_operands(struct wrt_ld *ld);

bool wrt_ld_grow_ctl(struct wrt_ld *ld);

void wrt_ld_push(struct wrt_ld *ld, uint8_t t);

void wrt_ld_push_lazy(struct wrt_ld *ld, uint8_t t, uint8_t kind, uint32_t lo, uint32_t hi);

uint8_t wrt_ld_pop(struct wrt_ld *ld, size_t off);

uint8_t wrt_ld_pop_expect(struct wrt_ld *ld, uint8_t want, size_t off);

void wrt_ld_pop_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n, size_t off);

void wrt_ld_push_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n);

/* Puts operand i in its home slot (emits a copy or a constant load if it is not there). */
void wrt_ld_materialize(struct wrt_ld *ld, uint32_t i);

void wrt_ld_materialize_range(struct wrt_ld *ld, uint32_t from, uint32_t to);

bool wrt_ld_any_lazy(struct wrt_ld *ld, uint32_t from, uint32_t to);

/* The slot operand i can be read from (constants are materialized first). */
uint32_t wrt_ld_opnd(struct wrt_ld *ld, uint32_t i);

/* Records the instruction just emitted (from start) as writing operand i's home slot. */
void wrt_ld_result_at(struct wrt_ld *ld, uint32_t start, uint32_t i);

bool wrt_ld_fresh_result(struct wrt_ld *ld, uint32_t i);

void wrt_ld_set_unreachable(struct wrt_ld *ld);

void wrt_ld_push_ctl(struct wrt_ld *ld, uint8_t kind, const uint8_t *params, uint32_t np,
		     const uint8_t *results, uint32_t nr, size_t off);

/* Reads a block type; for a single value type the result points at *single. */
void wrt_ld_rd_blocktype(struct wrt_ld *ld, uint8_t *single, const uint8_t **params, uint32_t *np,
			 const uint8_t **results, uint32_t *nr);

void wrt_ld_label_types(struct wrt_ctl *c, const uint8_t **ts, uint32_t *n);

/*
 * Gas a back-edge to loop c charges: the instructions of the loop from its start up to here
 * (at least 1, the branch itself). A loop has no GAS op of its own: the region it starts in
 * also counts its body, so the first iteration is paid on entry and each back-edge pays the
 * next one.
 */
uint32_t wrt_ld_back_edge_gas(struct wrt_ld *ld, struct wrt_ctl *c);

void wrt_ld_emit_target(struct wrt_ld *ld, struct wrt_ctl *c, bool with_gas);

uint32_t wrt_ld_rd_label(struct wrt_ld *ld, size_t off);

/* ---- wrt_compile.c ---- */

void wrt_ld_emit(struct wrt_ld *ld, uint32_t w);

/* An op word: the op in the low 16 bits, a slot in the high 16. */
void wrt_ld_emit_op(struct wrt_ld *ld, uint32_t op, uint32_t slot);

void wrt_ld_srcmap(struct wrt_ld *ld, size_t wasm_off);

struct wrt_ctl *wrt_ld_top(struct wrt_ld *ld);

bool wrt_ld_live(struct wrt_ld *ld);

/* Code after a label may be reached from elsewhere: no peephole may look back across it. */
void wrt_ld_label_here(struct wrt_ld *ld);

/* Per enum wrt_cmp: the inverse compare (a < b: a >= b). */
extern const uint8_t wrt_cmp_inverse[WRT_CMP__COUNT];

/* Per enum wrt_cmp: the same compare with its operands swapped (a < b: b > a). */
extern const uint8_t wrt_cmp_swapped[WRT_CMP__COUNT];

void wrt_ld_compile_func(struct wrt_ld *ld, struct wrt_func *f, size_t body_end);

/* ---- wrt_optimise.c ---- */

/*
 * Whether the op just before word `at` is `x = x + imm` or `x = x + y` (y a slot) retargeted
 * to local x == slot: then returns the first op of the add-compare-branch family that can
 * fuse it (ADDBR_EQ for an immediate, RADDBR_EQ for a slot) and sets *add to the immediate
 * or y; else returns 0.
 */
uint32_t wrt_ld_add_before(struct wrt_ld *ld, uint32_t at, uint32_t slot, uint32_t *add);

/*
 * A float compare just emitted producing operand i, or the i32.eqz (I32_EQ_I x, 0) of one
 * just before it into the same temporary: returns the compare's first word and sets *cond
 * (WRT_FC_*), else WRT_NO_INDEX.
 */
uint32_t wrt_ld_fcmp_fusable(struct wrt_ld *ld, uint32_t i, uint32_t *cond);

/* Whether some open loop took the test at word pc as its leading test (loop rotation reads
 * that test's words later, so they must stay as they are). */
bool wrt_ld_loop_head_at(struct wrt_ld *ld, uint32_t pc);

/*
 * Turns the `i32.load8_u` (plain or _A) at word s, which ends at ncode, into the fused
 * byte-load-and-branch LD8BR_EQ/NE[_A] on imm (its words stay; the branch words follow).
 */
void wrt_ld_fuse_ld8_branch(struct wrt_ld *ld, uint32_t s, bool eq, uint32_t imm, struct wrt_ctl *c,
			    bool with_gas);

/* The load8_u at word s is a plain or _A byte load ending at word end. */
bool wrt_ld_is_ld8(struct wrt_ld *ld, uint32_t s, uint32_t end);

/* Tries to fuse the compare just emitted (producing operand i) into a branch. */
bool wrt_ld_fuse_cmp_branch(struct wrt_ld *ld, uint32_t i, bool inverse, struct wrt_ctl *c,
			    bool with_gas);

/* Remembers that the conditional branch at test_pc is the first thing loop ctl[li] does. */
void wrt_ld_note_loop_head(struct wrt_ld *ld, uint32_t li, uint32_t test_pc,
			   enum wrt_loop_head kind, uint32_t target);

/*
 * Loop rotation for `br` back to a loop whose first instruction is its exit test (while
 * loops: clang's `loop { if (c) { ...; br 1 } }` and `loop { br_if exit (!c); ...; br 0 }`):
 * instead of jumping back to the test, repeat it here, jumping into the body when the loop
 * continues. Saves one dispatch per iteration. Only from the loop header's gas region (the
 * repeated test charges the region like a fused back-edge).
 */
bool wrt_ld_rotate_back_edge(struct wrt_ld *ld, struct wrt_ctl *c);

#endif /* WRT_LD_H */
