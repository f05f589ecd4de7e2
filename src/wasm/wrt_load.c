/*
 * wrt_load.c - decode, validate and compile a Wasm 2.0 binary module (no SIMD) in one pass.
 *
 * Sections are decoded in order; each function body is validated with the spec's algorithm
 * (operand type stack + control stack, both explicit arrays with named limits, no recursion)
 * and compiled in the same pass into the word code described in wrt_ops.h. While code is
 * reachable, the validator's type-stack height is also the run-time stack height, so every
 * branch gets its target and stack adjustment resolved here; unreachable code is validated
 * but not emitted.
 *
 * Gas: a GAS op opens each straight-line region (function entry, loop header, if/else arms,
 * merge points after block ends that are branch targets); its immediate counts the Wasm
 * instructions up to the next such point.
 *
 * Errors: decoding stops at the first error; ld->st latches it and every reader returns 0
 * after that, so loops check ld->st. Messages carry the byte offset and the rule broken.
 * Malformed binaries give K32_ERR_CORRUPT, invalid modules K32_ERR_INVALID_ARGS.
 *
 * Context: any thread; allocates only from the caller's allocator; frees all on failure.
 */
#include "wasm/wrt_int.h"

#include <stdio.h>

#define WRT_T_UNKNOWN 0

enum { CTL_BLOCK, CTL_LOOP, CTL_IF, CTL_ELSE, CTL_FUNC };

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
	uint8_t head_kind;	/* loop: 1 = if test, 2 = br_if exit, 3 = br_if to the end of a
				 * block inside the loop, 0 = none */
	bool head_taken;	/* loop, kind 3: that block's end is only reached by the branch */
	uint32_t head_else;	/* loop with an if test: that if's else_pos word */
	uint32_t
	    head_else_pc; /* loop with an if test: where that test's false path goes, once known */
	uint32_t head_of; /* if: the loop whose leading test it is, WRT_NO_INDEX if none */
};

struct wrt_ld {
	struct wrt_module *m;
	const uint8_t *b; /* module bytes */
	size_t pos, end;  /* cursor and end of the current section or body */
	k32_status_t st;  /* first error */
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

/* ---- errors -------------------------------------------------------------------------- */

static k32_status_t ld_fail(struct wrt_ld *ld, k32_status_t st, size_t off, const char *what,
			    const char *detail)
{
	if (ld->st)
		return ld->st;
	ld->st = st;
	k32_err_set(ld->err, st, "wasm", "%s at byte %zu: %s%s%s",
		    st == K32_ERR_CORRUPT ? "malformed module" : "invalid module", off, what,
		    detail ? ": " : "", detail ? detail : "");
	return st;
}

static void malformed(struct wrt_ld *ld, size_t off, const char *what)
{
	ld_fail(ld, K32_ERR_CORRUPT, off, what, NULL);
}

static void invalid(struct wrt_ld *ld, size_t off, const char *what)
{
	ld_fail(ld, K32_ERR_INVALID_ARGS, off, what, NULL);
}

static void limit_hit(struct wrt_ld *ld, size_t off, const char *what, const char *name)
{
	ld_fail(ld, K32_ERR_NO_RESOURCES, off, what, name);
}

static void no_memory(struct wrt_ld *ld, size_t off)
{
	ld_fail(ld, K32_ERR_NO_MEMORY, off, "out of memory while loading",
		"the allocator refused; raise the pod's memory pool");
}

/* ---- module storage -------------------------------------------------------------------- */

#define WRT_CHUNK_BYTES 488 /* + the 24-byte header: 512-byte chunks */

void *wrt_mod_alloc(struct wrt_module *m, size_t len)
{
	struct wrt_chunk *c = m->chunks;
	len = (len + 7) & ~(size_t)7;
	if (!c || c->len - c->used < len) {
		/* small chunks: a driver's structures take 1-2 KiB, so a bigger first chunk
		 * would be mostly empty. A request over a quarter chunk gets a chunk of its
		 * own size, linked behind the current one, which stays open for small ones. */
		bool own =
		    c && (len > WRT_CHUNK_BYTES / 4 || c->len - c->used > WRT_CHUNK_BYTES / 4);
		size_t clen = sizeof(*c) + (len > WRT_CHUNK_BYTES || own ? len : WRT_CHUNK_BYTES);
		clen = (clen + 7) & ~(size_t)7;
		struct wrt_chunk *n = k32_alloc(&m->alloc, clen);
		if (!n)
			return NULL;
		n->len = clen;
		n->used = (sizeof(*n) + 7) & ~(size_t)7;
		if (own) {
			n->next = c->next;
			c->next = n;
		} else {
			n->next = m->chunks;
			m->chunks = n;
		}
		c = n;
		m->bytes += clen;
	}
	void *p = (uint8_t *)c + c->used;
	c->used += len;
	memset(p, 0, len);
	return p;
}

static void *ld_alloc(struct wrt_ld *ld, size_t len)
{
	if (ld->st)
		return NULL;
	void *p = wrt_mod_alloc(ld->m, len ? len : 1);
	if (!p)
		no_memory(ld, ld->pos);
	return p;
}

/* ---- readers --------------------------------------------------------------------------- */

static uint8_t rd_u8(struct wrt_ld *ld)
{
	if (ld->st)
		return 0;
	if (ld->pos >= ld->end) {
		malformed(ld, ld->pos, "unexpected end of section or function");
		return 0;
	}
	return ld->b[ld->pos++];
}

static uint64_t rd_leb(struct wrt_ld *ld, unsigned bits, bool sign)
{
	uint64_t r = 0;
	unsigned shift = 0, maxb = (bits + 6) / 7;
	uint8_t byte = 0;
	for (unsigned i = 0; i < maxb; i++) {
		if (ld->st)
			return 0;
		if (ld->pos >= ld->end) {
			malformed(ld, ld->pos, "unexpected end (LEB128 integer runs past the end)");
			return 0;
		}
		byte = ld->b[ld->pos++];
		if (i == maxb - 1) {
			unsigned used = bits - 7 * i;
			uint8_t mask = (uint8_t)((0x7Fu >> used) << used);
			if (byte & 0x80) {
				malformed(ld, ld->pos - 1, "integer representation too long");
				return 0;
			}
			if (!sign && (byte & mask)) {
				malformed(ld, ld->pos - 1, "integer too large");
				return 0;
			}
			if (sign) {
				bool neg = (byte >> (used - 1)) & 1;
				if ((byte & mask) != (neg ? mask : 0)) {
					malformed(ld, ld->pos - 1, "integer too large");
					return 0;
				}
			}
		}
		r |= (uint64_t)(byte & 0x7F) << shift;
		shift += 7;
		if (!(byte & 0x80))
			break;
	}
	if (sign && shift < 64 && (byte & 0x40))
		r |= ~0ull << shift;
	return r;
}

static uint32_t rd_u32(struct wrt_ld *ld)
{
	return (uint32_t)rd_leb(ld, 32, false);
}

/* A vector count: each element takes at least one byte, so it cannot exceed what is left. */
static uint32_t rd_count(struct wrt_ld *ld, uint32_t limit, const char *limit_name)
{
	size_t off = ld->pos;
	uint32_t n = rd_u32(ld);
	if (ld->st)
		return 0;
	if (n > ld->end - ld->pos) {
		malformed(ld, off, "length out of bounds (vector count larger than its section)");
		return 0;
	}
	if (n > limit) {
		limit_hit(ld, off, "too many entries", limit_name);
		return 0;
	}
	return n;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		uint32_t cp, need;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			need = 1;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			need = 2;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			need = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i <= need)
			return false;
		for (uint32_t k = 1; k <= need; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += need + 1;
	}
	return true;
}

static const char *rd_name(struct wrt_ld *ld, uint32_t *out_len)
{
	size_t off = ld->pos;
	uint32_t n = rd_u32(ld);
	*out_len = 0;
	if (ld->st)
		return "";
	if (n > ld->end - ld->pos) {
		malformed(ld, off, "unexpected end (name length out of bounds)");
		return "";
	}
	const char *s = (const char *)ld->b + ld->pos;
	if (!utf8_valid(ld->b + ld->pos, n)) {
		malformed(ld, off, "malformed UTF-8 encoding");
		return "";
	}
	ld->pos += n;
	*out_len = n;
	return s;
}

static bool is_numtype(uint8_t t)
{
	return t == WRT_I32 || t == WRT_I64 || t == WRT_F32 || t == WRT_F64;
}

static bool is_reftype(uint8_t t)
{
	return t == WRT_FUNCREF || t == WRT_EXTERNREF;
}

static uint8_t rd_valtype(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	uint8_t t = rd_u8(ld);
	if (ld->st)
		return 0;
	if (t == 0x7B) {
		ld_fail(ld, K32_ERR_NOT_SUPPORTED, off, "v128 (SIMD) is not supported",
			"build the pod without -msimd128");
		return 0;
	}
	if (!is_numtype(t) && !is_reftype(t)) {
		malformed(ld, off, "malformed value type");
		return 0;
	}
	return t;
}

static uint8_t rd_reftype(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	uint8_t t = rd_u8(ld);
	if (!ld->st && !is_reftype(t))
		malformed(ld, off, "malformed reference type");
	return t;
}

static void rd_limits(struct wrt_ld *ld, struct wrt_limits_decl *l, uint32_t max_allowed,
		      const char *what)
{
	size_t off = ld->pos;
	uint8_t flags = rd_u8(ld);
	if (ld->st)
		return;
	if (flags > 1) {
		malformed(ld, off, "integer too large (limits flags must be 0 or 1)");
		return;
	}
	l->min = rd_u32(ld);
	l->has_max = flags == 1;
	l->max = l->has_max ? rd_u32(ld) : WRT_NO_INDEX;
	if (ld->st)
		return;
	if (l->min > max_allowed || (l->has_max && l->max > max_allowed)) {
		invalid(ld, off, what);
		return;
	}
	if (l->has_max && l->min > l->max)
		invalid(ld, off, "size minimum must not be greater than maximum");
}

/* ---- constant expressions ------------------------------------------------------------ */

static void rd_const(struct wrt_ld *ld, struct wrt_global_decl *g, uint8_t type,
		     uint32_t nglobals_visible)
{
	struct wrt_module *m = ld->m;
	size_t off = ld->pos;
	uint8_t op = rd_u8(ld);
	uint8_t got = 0;
	g->op = op;
	switch (op) {
	case 0x41:
		g->imm = (uint32_t)rd_leb(ld, 32, true);
		got = WRT_I32;
		break;
	case 0x42:
		g->imm = rd_leb(ld, 64, true);
		got = WRT_I64;
		break;
	case 0x43:
		for (int i = 0; i < 4; i++)
			g->imm |= (uint64_t)rd_u8(ld) << (8 * i);
		got = WRT_F32;
		break;
	case 0x44:
		for (int i = 0; i < 8; i++)
			g->imm |= (uint64_t)rd_u8(ld) << (8 * i);
		got = WRT_F64;
		break;
	case 0x23: {
		uint32_t x = rd_u32(ld);
		if (ld->st)
			return;
		if (x >= nglobals_visible) {
			invalid(ld, off, "unknown global");
			return;
		}
		if (m->globals[x].mut) {
			invalid(ld, off,
				"constant expression required (global.get of a mutable global)");
			return;
		}
		g->imm = x;
		got = m->globals[x].type;
		break;
	}
	case 0xD0:
		got = rd_reftype(ld);
		break;
	case 0xD2: {
		uint32_t x = rd_u32(ld);
		if (ld->st)
			return;
		if (x >= m->nfuncs) {
			invalid(ld, off, "unknown function");
			return;
		}
		ld->declared[x / 8] |= (uint8_t)(1u << (x % 8));
		g->imm = x;
		got = WRT_FUNCREF;
		break;
	}
	default:
		if (!ld->st)
			invalid(ld, off, "constant expression required");
		return;
	}
	size_t eoff = ld->pos;
	uint8_t e = rd_u8(ld);
	if (ld->st)
		return;
	if (e != 0x0B) {
		if (eoff >= ld->end)
			malformed(ld, eoff, "unexpected end");
		else
			invalid(ld, eoff,
				"constant expression required (one instruction, then end)");
		return;
	}
	if (got != type)
		invalid(ld, off, "type mismatch (constant expression)");
}

/* ---- sections -------------------------------------------------------------------------- */

static void sec_types(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_TYPES, "K32_WASM_MAX_TYPES");
	m->types = ld_alloc(ld, (size_t)n * sizeof(*m->types));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		if (rd_u8(ld) != 0x60) {
			malformed(
			    ld, off,
			    "integer representation too long (function type must start with 0x60)");
			return;
		}
		uint32_t np = rd_count(ld, K32_WASM_MAX_PARAMS, "K32_WASM_MAX_PARAMS");
		size_t ppos = ld->pos;
		for (uint32_t k = 0; k < np; k++)
			rd_valtype(ld);
		uint32_t nr = rd_count(ld, K32_WASM_MAX_PARAMS, "K32_WASM_MAX_PARAMS");
		size_t rpos = ld->pos;
		for (uint32_t k = 0; k < nr; k++)
			rd_valtype(ld);
		uint8_t *t = ld_alloc(ld, np + nr);
		if (ld->st)
			return;
		memcpy(t, ld->b + ppos, np);
		memcpy(t + np, ld->b + rpos, nr);
		struct wrt_functype *ft = &m->types[i];
		ft->nparams = np;
		ft->nresults = nr;
		ft->types = t;
		ft->canon = i;
		for (uint32_t j = 0; j < i; j++) {
			if (wrt_functype_eq(ft, &m->types[j])) {
				ft->canon = j;
				break;
			}
		}
		m->ntypes = i + 1;
	}
}

static void sec_imports(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->imports = ld_alloc(ld, (size_t)n * sizeof(*m->imports));
	/* Count first so the per-kind arrays are allocated once. */
	size_t save = ld->pos;
	uint32_t counts[4] = {0, 0, 0, 0};
	for (int pass = 0; pass < 2 && !ld->st; pass++) {
		ld->pos = save;
		if (pass == 1) {
			m->funcs = ld_alloc(ld, (size_t)counts[0] * sizeof(*m->funcs));
			m->tables = ld_alloc(ld, (size_t)counts[1] * sizeof(*m->tables));
			m->globals = ld_alloc(ld, (size_t)counts[3] * sizeof(*m->globals));
		}
		for (uint32_t i = 0; i < n && !ld->st; i++) {
			struct wrt_import *im = &m->imports[i];
			im->module = rd_name(ld, &im->module_len);
			im->name = rd_name(ld, &im->name_len);
			size_t off = ld->pos;
			im->kind = rd_u8(ld);
			if (ld->st)
				return;
			switch (im->kind) {
			case WRT_EXTERN_FUNC: {
				uint32_t t = rd_u32(ld);
				if (!ld->st && t >= m->ntypes)
					invalid(ld, off, "unknown type");
				if (pass == 1) {
					im->index = m->nfuncs++;
					m->funcs[im->index].type = t;
					m->funcs[im->index].code_off = WRT_NO_INDEX;
				}
				break;
			}
			case WRT_EXTERN_TABLE: {
				struct wrt_table_decl td;
				td.type = rd_reftype(ld);
				rd_limits(ld, &td.lim, 0xFFFFFFFFu, "table size");
				if (pass == 1) {
					im->index = m->ntables++;
					m->tables[im->index] = td;
				}
				break;
			}
			case WRT_EXTERN_MEMORY: {
				struct wrt_limits_decl l;
				rd_limits(ld, &l, WRT_MAX_PAGES,
					  "memory size must be at most 65536 pages (4GiB)");
				if (pass == 1) {
					if (m->nmems) {
						invalid(ld, off, "multiple memories");
						return;
					}
					im->index = m->nmems++;
					m->mem = l;
				}
				break;
			}
			case WRT_EXTERN_GLOBAL: {
				uint8_t t = rd_valtype(ld);
				size_t moff = ld->pos;
				uint8_t mut = rd_u8(ld);
				if (!ld->st && mut > 1)
					malformed(ld, moff, "malformed mutability");
				if (pass == 1) {
					im->index = m->nglobals++;
					m->globals[im->index].type = t;
					m->globals[im->index].mut = mut == 1;
				}
				break;
			}
			default:
				malformed(ld, off, "malformed import kind");
				return;
			}
			if (pass == 0)
				counts[im->kind]++;
		}
	}
	m->nimports = n;
	m->nfunc_imports = m->nfuncs;
	m->ntable_imports = m->ntables;
	m->nmem_imports = m->nmems;
	m->nglobal_imports = m->nglobals;
}

static void grow_array(struct wrt_ld *ld, void **arr, size_t elem, uint32_t old_n, uint32_t add)
{
	void *p = ld_alloc(ld, elem * ((size_t)old_n + add));
	if (!p)
		return;
	if (old_n)
		memcpy(p, *arr, elem * old_n);
	*arr = p; /* the old block stays in the chunk until the module is freed */
}

static void sec_funcs(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_FUNCS, "K32_WASM_MAX_FUNCS");
	if ((uint64_t)n + m->nfuncs > K32_WASM_MAX_FUNCS) {
		limit_hit(ld, ld->pos, "too many functions", "K32_WASM_MAX_FUNCS");
		return;
	}
	grow_array(ld, (void **)&m->funcs, sizeof(*m->funcs), m->nfuncs, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		uint32_t t = rd_u32(ld);
		if (!ld->st && t >= m->ntypes)
			invalid(ld, off, "unknown type");
		m->funcs[m->nfuncs].type = t;
		m->funcs[m->nfuncs].code_off = WRT_NO_INDEX;
		m->nfuncs++;
	}
}

static void sec_tables(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	grow_array(ld, (void **)&m->tables, sizeof(*m->tables), m->ntables, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_table_decl *td = &m->tables[m->ntables];
		td->type = rd_reftype(ld);
		rd_limits(ld, &td->lim, 0xFFFFFFFFu, "table size");
		m->ntables++;
	}
}

static void sec_mems(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		struct wrt_limits_decl l;
		rd_limits(ld, &l, WRT_MAX_PAGES, "memory size must be at most 65536 pages (4GiB)");
		if (ld->st)
			return;
		if (m->nmems) {
			invalid(ld, off, "multiple memories");
			return;
		}
		m->mem = l;
		m->nmems++;
	}
}

static void sec_globals(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	grow_array(ld, (void **)&m->globals, sizeof(*m->globals), m->nglobals, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_global_decl *g = &m->globals[m->nglobals];
		g->type = rd_valtype(ld);
		size_t moff = ld->pos;
		uint8_t mut = rd_u8(ld);
		if (!ld->st && mut > 1) {
			malformed(ld, moff, "malformed mutability");
			return;
		}
		g->mut = mut == 1;
		rd_const(ld, g, g->type, m->nglobal_imports);
		m->nglobals++;
	}
}

static void sec_exports(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->exports = ld_alloc(ld, (size_t)n * sizeof(*m->exports));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_export *e = &m->exports[i];
		size_t noff = ld->pos;
		e->name = rd_name(ld, &e->name_len);
		size_t off = ld->pos;
		e->kind = rd_u8(ld);
		e->index = rd_u32(ld);
		if (ld->st)
			return;
		uint32_t lim[4] = {m->nfuncs, m->ntables, m->nmems, m->nglobals};
		static const char *const unknown[4] = {"unknown function", "unknown table",
						       "unknown memory", "unknown global"};
		if (e->kind > 3) {
			malformed(ld, off, "malformed export kind");
			return;
		}
		if (e->index >= lim[e->kind]) {
			invalid(ld, off, unknown[e->kind]);
			return;
		}
		if (e->kind == WRT_EXTERN_FUNC)
			ld->declared[e->index / 8] |= (uint8_t)(1u << (e->index % 8));
		for (uint32_t j = 0; j < i; j++) {
			if (m->exports[j].name_len == e->name_len &&
			    !memcmp(m->exports[j].name, e->name, e->name_len)) {
				invalid(ld, noff, "duplicate export name");
				return;
			}
		}
		m->nexports = i + 1;
	}
}

static void sec_start(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t off = ld->pos;
	m->start = rd_u32(ld);
	if (ld->st)
		return;
	if (m->start >= m->nfuncs) {
		invalid(ld, off, "unknown function (start)");
		return;
	}
	const struct wrt_functype *ft = &m->types[m->funcs[m->start].type];
	if (ft->nparams || ft->nresults)
		invalid(ld, off, "start function must take and return nothing");
}

static void sec_elems(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->elems = ld_alloc(ld, (size_t)n * sizeof(*m->elems));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_elem *e = &m->elems[i];
		size_t off = ld->pos;
		uint32_t flags = rd_u32(ld);
		if (ld->st)
			return;
		if (flags > 7) {
			malformed(ld, off, "malformed elements segment kind");
			return;
		}
		e->mode = (flags & 1) ? ((flags & 2) ? 2 : 1) : 0;
		e->type = WRT_FUNCREF;
		e->table = 0;
		if (e->mode == 0) {
			if (flags & 2)
				e->table = rd_u32(ld);
			if (!ld->st && e->table >= m->ntables) {
				invalid(ld, off, "unknown table");
				return;
			}
			rd_const(ld, &e->offset, WRT_I32, m->nglobal_imports);
		}
		bool exprs = flags & 4;
		if (flags & 3) {
			size_t koff = ld->pos;
			if (exprs) {
				e->type = rd_reftype(ld);
			} else if (rd_u8(ld) != 0x00 && !ld->st) {
				malformed(ld, koff, "malformed element kind");
				return;
			}
		}
		e->count = rd_count(ld, K32_WASM_MAX_ENTRIES * 10u, "K32_WASM_MAX_ENTRIES");
		e->items = ld_alloc(ld, (size_t)e->count * sizeof(*e->items));
		for (uint32_t k = 0; k < e->count && !ld->st; k++) {
			if (exprs) {
				rd_const(ld, &e->items[k], e->type, m->nglobal_imports);
				continue;
			}
			size_t xoff = ld->pos;
			uint32_t x = rd_u32(ld);
			if (!ld->st && x >= m->nfuncs) {
				invalid(ld, xoff, "unknown function");
				return;
			}
			ld->declared[x / 8] |= (uint8_t)(1u << (x % 8));
			e->items[k].op = 0xD2;
			e->items[k].imm = x;
		}
		if (!ld->st && e->mode == 0 && m->tables[e->table].type != e->type)
			invalid(ld, off, "type mismatch (element type differs from table type)");
		m->nelems = i + 1;
	}
}

static void sec_datacount(struct wrt_ld *ld)
{
	ld->datacount = rd_u32(ld);
	ld->m->has_datacount = true;
}

static void sec_datas(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t coff = ld->pos;
	uint32_t n = rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	if (!ld->st && m->has_datacount && n != ld->datacount) {
		malformed(ld, coff, "data count and data section have inconsistent lengths");
		return;
	}
	m->datas = ld_alloc(ld, (size_t)n * sizeof(*m->datas));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_data *d = &m->datas[i];
		size_t off = ld->pos;
		uint32_t flags = rd_u32(ld);
		if (ld->st)
			return;
		if (flags > 2) {
			malformed(ld, off, "malformed data segment kind");
			return;
		}
		d->mode = flags == 1 ? 1 : 0;
		if (flags != 1) {
			uint32_t mi = flags == 2 ? rd_u32(ld) : 0;
			if (!ld->st && mi >= m->nmems) {
				invalid(ld, off, "unknown memory");
				return;
			}
			rd_const(ld, &d->offset, WRT_I32, m->nglobal_imports);
		}
		size_t loff = ld->pos;
		uint32_t len = rd_u32(ld);
		if (ld->st)
			return;
		if (len > ld->end - ld->pos) {
			malformed(ld, loff, "unexpected end of section or function (data length)");
			return;
		}
		d->bytes = ld->b + ld->pos;
		d->len = len;
		ld->pos += len;
		m->ndatas = i + 1;
	}
}

/* ---- code emission ------------------------------------------------------------------- */

static void emit(struct wrt_ld *ld, uint32_t w)
{
	if (ld->st)
		return;
	if (ld->ncode == ld->code_cap) {
		uint32_t ncap = ld->code_cap ? ld->code_cap * 2 : 1024;
		uint32_t *p = k32_realloc(&ld->m->alloc, ld->code, (size_t)ld->code_cap * 4,
					  (size_t)ncap * 4);
		if (!p) {
			no_memory(ld, ld->pos);
			return;
		}
		ld->code = p;
		ld->code_cap = ncap;
	}
	ld->code[ld->ncode++] = w;
}

/* An op word: the op in the low 16 bits, a slot in the high 16. */
static void emit_op(struct wrt_ld *ld, uint32_t op, uint32_t slot)
{
	emit(ld, op | (slot << 16));
}

static void srcmap(struct wrt_ld *ld, size_t wasm_off)
{
	if (ld->st)
		return;
	if (ld->nsm == ld->sm_cap) {
		uint32_t ncap = ld->sm_cap ? ld->sm_cap * 2 : 256;
		struct wrt_srcmap *p =
		    k32_realloc(&ld->m->alloc, ld->sm, (size_t)ld->sm_cap * sizeof(*p),
				(size_t)ncap * sizeof(*p));
		if (!p) {
			no_memory(ld, ld->pos);
			return;
		}
		ld->sm = p;
		ld->sm_cap = ncap;
	}
	ld->sm[ld->nsm].code = ld->ncode;
	ld->sm[ld->nsm].wasm = (uint32_t)wasm_off;
	ld->nsm++;
}

static struct wrt_ctl *top(struct wrt_ld *ld)
{
	return &ld->ctl[ld->cd - 1];
}

static bool live(struct wrt_ld *ld)
{
	struct wrt_ctl *c = top(ld);
	return !c->dead && !c->unreachable;
}

/* Code after a label may be reached from elsewhere: no peephole may look back across it. */
static void label_here(struct wrt_ld *ld)
{
	ld->last_end = WRT_NO_INDEX;
	ld->wr_end = WRT_NO_INDEX;
	ld->cp_end = WRT_NO_INDEX;
	ld->inc_end = WRT_NO_INDEX;
}

/*
 * Whether the op just before word `at` is `x = x + imm` or `x = x + y` (y a slot) retargeted
 * to local x == slot: then returns the first op of the add-compare-branch family that can
 * fuse it (ADDBR_EQ for an immediate, RADDBR_EQ for a slot) and sets *add to the immediate
 * or y; else returns 0.
 */
static uint32_t add_before(struct wrt_ld *ld, uint32_t at, uint32_t slot, uint32_t *add)
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
 * Opens a new straight-line region: a GAS op whose count later instructions increment.
 * fresh: always a new one (loop headers), else an empty region's op is reused.
 */
static void gas_leader(struct wrt_ld *ld, size_t wasm_off, bool fresh)
{
	label_here(ld);
	if (!ld->m->metered || !live(ld))
		return;
	if (!fresh && ld->gas_pos != WRT_NO_INDEX && ld->gas_pos == ld->ncode - 1)
		return; /* nothing since the last one: reuse it */
	srcmap(ld, wasm_off);
	emit(ld, WRT_OP_GAS);
	emit(ld, 0);
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

/* ---- type stack and virtual operand stack ------------------------------------------ */

/* Where an operand's value is: in its home slot (nlocals + height), in a local, or a constant. */
enum { VK_HOME, VK_LOCAL, VK_CONST };

static uint32_t home(struct wrt_ld *ld, uint32_t i)
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

static size_t operands_bytes(uint32_t cap)
{
	return (size_t)cap * 10;
}

static bool grow_operands(struct wrt_ld *ld)
{
	uint32_t cap = ld->v_cap ? ld->v_cap * 2 : WRT_LD_OPERANDS0;
	if (cap > K32_WASM_MAX_OPERANDS)
		cap = K32_WASM_MAX_OPERANDS;
	uint8_t *p = k32_alloc(&ld->m->alloc, operands_bytes(cap));
	if (!p) {
		no_memory(ld, ld->pos);
		return false;
	}
	uint32_t *vv = (uint32_t *)(void *)p, *vhi = vv + cap;
	uint8_t *vt = (uint8_t *)(vhi + cap), *vk = vt + cap;
	if (ld->v_cap) {
		memcpy(vv, ld->vv, (size_t)ld->v_cap * 4);
		memcpy(vhi, ld->vhi, (size_t)ld->v_cap * 4);
		memcpy(vt, ld->vt, ld->v_cap);
		memcpy(vk, ld->vk, ld->v_cap);
		k32_free(&ld->m->alloc, ld->vv, operands_bytes(ld->v_cap));
	}
	ld->vv = vv;
	ld->vhi = vhi;
	ld->vt = vt;
	ld->vk = vk;
	ld->v_cap = cap;
	return true;
}

static bool grow_ctl(struct wrt_ld *ld)
{
	uint32_t cap = ld->ctl_cap ? ld->ctl_cap * 2 : WRT_LD_BLOCKS0;
	if (cap > K32_WASM_MAX_BLOCK_DEPTH)
		cap = K32_WASM_MAX_BLOCK_DEPTH;
	struct wrt_ctl *n = k32_alloc(&ld->m->alloc, sizeof(*n) * cap);
	if (!n) {
		no_memory(ld, ld->pos);
		return false;
	}
	if (ld->ctl_cap) {
		memcpy(n, ld->ctl, sizeof(*n) * ld->ctl_cap);
		/* a one-value block type points at its own entry's storage */
		for (uint32_t i = 0; i < ld->ctl_cap; i++)
			if (ld->ctl[i].results == &ld->ctl[i].single)
				n[i].results = &n[i].single;
		k32_free(&ld->m->alloc, ld->ctl, sizeof(*n) * ld->ctl_cap);
	}
	ld->ctl = n;
	ld->ctl_cap = cap;
	return true;
}

static void push(struct wrt_ld *ld, uint8_t t)
{
	if (ld->st)
		return;
	if (ld->vh >= K32_WASM_MAX_OPERANDS) {
		limit_hit(ld, ld->pos, "operand stack too deep", "K32_WASM_MAX_OPERANDS");
		return;
	}
	if (ld->nlocals + ld->vh >= WRT_MAX_SLOTS) {
		limit_hit(ld, ld->pos, "function frame exceeds 65535 slots (locals + operands)",
			  "WRT_MAX_SLOTS");
		return;
	}
	if (ld->vh >= ld->v_cap && !grow_operands(ld))
		return;
	ld->vt[ld->vh] = t;
	ld->vk[ld->vh] = VK_HOME;
	ld->vh++;
	if (ld->vh > ld->vmax)
		ld->vmax = ld->vh;
}

static void push_lazy(struct wrt_ld *ld, uint8_t t, uint8_t kind, uint32_t lo, uint32_t hi)
{
	push(ld, t);
	if (ld->st)
		return;
	ld->vk[ld->vh - 1] = kind;
	ld->vv[ld->vh - 1] = lo;
	ld->vhi[ld->vh - 1] = hi;
}

static uint8_t pop(struct wrt_ld *ld, size_t off)
{
	struct wrt_ctl *c = top(ld);
	if (ld->st)
		return WRT_T_UNKNOWN;
	if (ld->vh == c->height) {
		if (c->unreachable)
			return WRT_T_UNKNOWN;
		invalid(ld, off, "type mismatch (operand stack underflow)");
		return WRT_T_UNKNOWN;
	}
	return ld->vt[--ld->vh];
}

static uint8_t pop_expect(struct wrt_ld *ld, uint8_t want, size_t off)
{
	uint8_t t = pop(ld, off);
	if (!ld->st && t != want && t != WRT_T_UNKNOWN && want != WRT_T_UNKNOWN)
		invalid(ld, off, "type mismatch");
	return t;
}

static void pop_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n, size_t off)
{
	for (uint32_t i = n; i > 0 && !ld->st; i--)
		pop_expect(ld, ts[i - 1], off);
}

static void push_types(struct wrt_ld *ld, const uint8_t *ts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		push(ld, ts[i]);
}

/* Puts operand i in its home slot (emits a copy or a constant load if it is not there). */
static void materialize(struct wrt_ld *ld, uint32_t i)
{
	if (ld->vk[i] == VK_LOCAL) {
		emit_op(ld, WRT_OP_COPY, home(ld, i));
		emit(ld, ld->vv[i]);
	} else if (ld->vk[i] == VK_CONST) {
		if (ld->vhi[i] == 0) {
			emit_op(ld, WRT_OP_CONST32, home(ld, i));
			emit(ld, ld->vv[i]);
		} else {
			emit_op(ld, WRT_OP_CONST64, home(ld, i));
			emit(ld, ld->vv[i]);
			emit(ld, ld->vhi[i]);
		}
	}
	ld->vk[i] = VK_HOME;
}

static void materialize_range(struct wrt_ld *ld, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (ld->vk[i] != VK_HOME)
			materialize(ld, i);
}

static bool any_lazy(struct wrt_ld *ld, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (ld->vk[i] != VK_HOME)
			return true;
	return false;
}

/* The slot operand i can be read from (constants are materialized first). */
static uint32_t opnd(struct wrt_ld *ld, uint32_t i)
{
	if (ld->vk[i] == VK_LOCAL)
		return ld->vv[i];
	if (ld->vk[i] == VK_CONST)
		materialize(ld, i);
	return home(ld, i);
}

/* Records the instruction just emitted (from start) as writing operand i's home slot. */
static void result_at(struct wrt_ld *ld, uint32_t start, uint32_t i)
{
	ld->prev_start = ld->last_start;
	ld->prev_end = ld->last_end;
	ld->last_start = start;
	ld->last_end = ld->ncode;
	ld->last_h = i;
	ld->last_cmp = -1;
}

static bool fresh_result(struct wrt_ld *ld, uint32_t i)
{
	return ld->last_end == ld->ncode && ld->last_h == i && ld->vk[i] == VK_HOME;
}

static void set_unreachable(struct wrt_ld *ld)
{
	struct wrt_ctl *c = top(ld);
	ld->vh = c->height;
	c->unreachable = true;
}

static void push_ctl(struct wrt_ld *ld, uint8_t kind, const uint8_t *params, uint32_t np,
		     const uint8_t *results, uint32_t nr, size_t off)
{
	if (ld->st)
		return;
	if (ld->cd >= K32_WASM_MAX_BLOCK_DEPTH) {
		limit_hit(ld, off, "blocks nested too deep", "K32_WASM_MAX_BLOCK_DEPTH");
		return;
	}
	if (ld->cd >= ld->ctl_cap && !grow_ctl(ld))
		return;
	bool dead = ld->cd ? !live(ld) : false;
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
	push_types(ld, params, np);
	label_here(ld);
}

/* Reads a block type; for a single value type the result points at *single. */
static void rd_blocktype(struct wrt_ld *ld, uint8_t *single, const uint8_t **params, uint32_t *np,
			 const uint8_t **results, uint32_t *nr)
{
	size_t off = ld->pos;
	*np = *nr = 0;
	*params = *results = NULL;
	if (ld->pos >= ld->end) {
		malformed(ld, off, "unexpected end");
		return;
	}
	uint8_t b = ld->b[ld->pos];
	if (b == 0x40) {
		ld->pos++;
		return;
	}
	if (is_numtype(b) || is_reftype(b) || b == 0x7B) {
		*single = rd_valtype(ld);
		*results = single;
		*nr = 1;
		return;
	}
	int64_t x = (int64_t)rd_leb(ld, 33, true);
	if (ld->st)
		return;
	if (x < 0) {
		malformed(ld, off, "malformed block type");
		return;
	}
	if ((uint64_t)x >= ld->m->ntypes) {
		invalid(ld, off, "unknown type");
		return;
	}
	const struct wrt_functype *ft = &ld->m->types[x];
	*params = ft->types;
	*np = ft->nparams;
	*results = ft->types + ft->nparams;
	*nr = ft->nresults;
}

static void label_types(struct wrt_ctl *c, const uint8_t **ts, uint32_t *n)
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
static uint32_t back_edge_gas(struct wrt_ld *ld, struct wrt_ctl *c)
{
	if (!ld->m->metered || ld->gas_pos == WRT_NO_INDEX)
		return 0;
	if (ld->gas_pos == c->loop_gas_pos && ld->code[ld->gas_pos] > c->loop_gas_base)
		return ld->code[ld->gas_pos] - c->loop_gas_base;
	return 1 + ld->code[ld->gas_pos]; /* (not expected) a conservative charge */
}

static void emit_target(struct wrt_ld *ld, struct wrt_ctl *c, bool with_gas)
{
	uint32_t gas = 0;
	if (c->kind == CTL_LOOP) {
		if (with_gas)
			gas = back_edge_gas(ld, c);
		emit(ld, c->label_pc - ld->ncode);
	} else {
		uint32_t pos = ld->ncode;
		emit(ld, c->patch);
		if (!ld->st)
			c->patch = pos;
	}
	if (with_gas)
		emit(ld, gas);
}

static uint32_t rd_label(struct wrt_ld *ld, size_t off)
{
	uint32_t l = rd_u32(ld);
	if (!ld->st && l >= ld->cd) {
		invalid(ld, off, "unknown label");
		return 0;
	}
	return l;
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

/* i32 comparisons in WRT_CMP32 order are the Wasm bytes 0x46..0x4F; their inverses. */
static const uint8_t wrt_cmp_inverse[10] = {1, 0, 8, 9, 6, 7, 4, 5, 2, 3};
/* ... and the same compares with their operands swapped (a < b is b > a). */
static const uint8_t wrt_cmp_swapped[10] = {0, 1, 4, 5, 2, 3, 8, 9, 6, 7};

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
		pop_expect(ld, sig_type(p[-1]), off);
	if (ld->st)
		return;
	uint32_t e = ld->vh; /* first operand */
	bool lv = live(ld);
	uint32_t start = ld->ncode;
	if (lv && nin == 1) {
		if (byte == 0x45 && fresh_result(ld, e) && ld->last_cmp >= 0) {
			/* i32.eqz of a fresh i32 compare: invert the compare instead */
			uint32_t inv = wrt_cmp_inverse[ld->last_cmp];
			uint32_t iop = wrt_num_by_byte[0x46 + inv].op + (ld->last_imm ? 1u : 0u);
			ld->code[ld->last_start] = (ld->code[ld->last_start] & 0xFFFF0000u) | iop;
			ld->last_cmp = (int8_t)inv;
			push(ld, WRT_I32);
			return;
		}
		uint32_t a = opnd(ld, e);
		start = ld->ncode;
		if (byte == 0x45) { /* i32.eqz is i32.eq with 0, so it can fuse and invert */
			emit_op(ld, WRT_OP_I32_EQ_I, home(ld, e));
			emit(ld, a);
			emit(ld, 0);
			push(ld, WRT_I32);
			result_at(ld, start, e);
			ld->last_cmp = 0;
			ld->last_a = a;
			ld->last_b = 0;
			ld->last_imm = true;
			return;
		}
		emit_op(ld, ni->op, home(ld, e));
		emit(ld, a);
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
			uint32_t b = opnd(ld, ib), imm = ld->vv[ia];
			start = ld->ncode;
			emit_op(ld, WRT_OP_I32_RSUB_I, home(ld, e));
			emit(ld, b);
			emit(ld, imm);
			ld->last_a = b;
			ld->last_b = imm;
			ld->last_imm = true;
		} else if (intop && imm_fits(ld, ib, t)) {
			uint32_t a = opnd(ld, ia);
			uint32_t iop = ni->op + 1u, imm = ld->vv[ib];
			if (byte == 0x6B) { /* i32.sub x, k is i32.add x, -k (mod 2^32) */
				iop = WRT_OP_I32_ADD_I;
				imm = 0u - imm;
			}
			start = ld->ncode;
			emit_op(ld, iop, home(ld, e));
			emit(ld, a);
			emit(ld, imm);
			if (t == WRT_F64)
				emit(ld, ld->vhi[ib]);
			ld->last_a = a;
			ld->last_b = imm;
			ld->last_imm = true;
		} else {
			uint32_t a = opnd(ld, ia);
			uint32_t b = opnd(ld, ib);
			start = ld->ncode;
			emit_op(ld, ni->op, home(ld, e));
			emit(ld, a | (b << 16));
			ld->last_a = a;
			ld->last_b = b;
			ld->last_imm = false;
		}
	}
	for (const char *p = colon + 1; *p; p++)
		push(ld, sig_type(*p));
	if (lv) {
		int8_t cmp = byte >= 0x46 && byte <= 0x4F ? (int8_t)(byte - 0x46) : -1;
		uint32_t a = ld->last_a, b = ld->last_b;
		bool imm = ld->last_imm;
		result_at(ld, start, e);
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
		invalid(ld, off, "unknown memory 0");
}

static void zero_byte(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	if (rd_u8(ld) != 0 && !ld->st)
		malformed(ld, off, "zero byte expected");
}

static uint32_t rd_table(struct wrt_ld *ld, size_t off)
{
	uint32_t t = rd_u32(ld);
	if (!ld->st && t >= ld->m->ntables) {
		invalid(ld, off, "unknown table");
		return 0;
	}
	return t;
}

/* Bulk op: n operands already popped start at entry vh; they go to home slots. */
static void emit_base_op(struct wrt_ld *ld, uint32_t op, uint32_t n, size_t off, bool traps)
{
	if (!live(ld))
		return;
	materialize_range(ld, ld->vh, ld->vh + n);
	if (traps)
		srcmap(ld, off);
	emit_op(ld, op, home(ld, ld->vh));
}

static void op_fc(struct wrt_ld *ld, size_t off)
{
	struct wrt_module *m = ld->m;
	uint32_t sub = rd_u32(ld);
	if (ld->st)
		return;
	if (sub < 8) {
		simple_op(ld, &wrt_fc_by_sub[sub], 0, off);
		return;
	}
	bool lv = live(ld);
	switch (sub) {
	case 8: { /* memory.init */
		uint32_t d = rd_u32(ld);
		zero_byte(ld);
		need_mem(ld, off);
		if (!ld->st && !m->has_datacount)
			invalid(ld, off, "data count section required");
		if (!ld->st && d >= ld->datacount)
			invalid(ld, off, "unknown data segment");
		pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_MEMORY_INIT, 3, off, true);
		if (lv)
			emit(ld, d);
		return;
	}
	case 9: { /* data.drop */
		uint32_t d = rd_u32(ld);
		if (!ld->st && !m->has_datacount)
			invalid(ld, off, "data count section required");
		if (!ld->st && d >= ld->datacount)
			invalid(ld, off, "unknown data segment");
		if (lv) {
			emit(ld, WRT_OP_DATA_DROP);
			emit(ld, d);
		}
		return;
	}
	case 10: /* memory.copy */
	case 11: /* memory.fill */
		zero_byte(ld);
		if (sub == 10)
			zero_byte(ld);
		need_mem(ld, off);
		pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, sub == 10 ? WRT_OP_MEMORY_COPY : WRT_OP_MEMORY_FILL, 3, off, true);
		return;
	case 12: { /* table.init elem table */
		uint32_t e = rd_u32(ld);
		uint32_t t = rd_table(ld, off);
		if (!ld->st && e >= m->nelems)
			invalid(ld, off, "unknown elem segment");
		if (!ld->st && m->elems[e].type != m->tables[t].type)
			invalid(ld, off, "type mismatch (element segment and table types differ)");
		pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_TABLE_INIT, 3, off, true);
		if (lv) {
			emit(ld, e);
			emit(ld, t);
		}
		return;
	}
	case 13: { /* elem.drop */
		uint32_t e = rd_u32(ld);
		if (!ld->st && e >= m->nelems)
			invalid(ld, off, "unknown elem segment");
		if (lv) {
			emit(ld, WRT_OP_ELEM_DROP);
			emit(ld, e);
		}
		return;
	}
	case 14: { /* table.copy dst src */
		uint32_t d = rd_table(ld, off);
		uint32_t s = rd_table(ld, off);
		if (!ld->st && m->tables[d].type != m->tables[s].type)
			invalid(ld, off, "type mismatch (table.copy between different types)");
		pop_types(ld, (const uint8_t[]){WRT_I32, WRT_I32, WRT_I32}, 3, off);
		emit_base_op(ld, WRT_OP_TABLE_COPY, 3, off, true);
		if (lv) {
			emit(ld, d);
			emit(ld, s);
		}
		return;
	}
	case 15: { /* table.grow */
		uint32_t t = rd_table(ld, off);
		pop_expect(ld, WRT_I32, off);
		pop_expect(ld, ld->st ? 0 : m->tables[t].type, off);
		emit_base_op(ld, WRT_OP_TABLE_GROW, 2, off, false);
		if (lv)
			emit(ld, t);
		push(ld, WRT_I32);
		return;
	}
	case 16: { /* table.size */
		uint32_t t = rd_table(ld, off);
		if (lv) {
			emit_op(ld, WRT_OP_TABLE_SIZE, home(ld, ld->vh));
			emit(ld, t);
		}
		push(ld, WRT_I32);
		return;
	}
	case 17: { /* table.fill */
		uint32_t t = rd_table(ld, off);
		pop_expect(ld, WRT_I32, off);
		pop_expect(ld, ld->st ? 0 : m->tables[t].type, off);
		pop_expect(ld, WRT_I32, off);
		emit_base_op(ld, WRT_OP_TABLE_FILL, 3, off, true);
		if (lv)
			emit(ld, t);
		return;
	}
	default:
		malformed(ld, off, "illegal opcode (unknown 0xFC sub-opcode)");
	}
}

/* Fallthrough or branch into a label: the block's values must sit in their home slots. */
static void op_end(struct wrt_ld *ld, size_t off)
{
	struct wrt_ctl *c = top(ld);
	pop_types(ld, c->results, c->nr, off);
	if (ld->st)
		return;
	if (ld->vh != c->height) {
		invalid(ld, off, "type mismatch (values left on the stack at end of block)");
		return;
	}
	if (c->kind == CTL_IF &&
	    (c->np != c->nr || (c->np && memcmp(c->params, c->results, c->np)))) {
		invalid(ld, off, "type mismatch (if without else must leave its params)");
		return;
	}
	if (live(ld))
		materialize_range(ld, c->height, c->height + c->nr);
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
	label_here(ld);
	if (c->kind == CTL_FUNC) {
		if (!c->dead) { /* also when unreachable: branches to the end land here */
			emit_op(ld, WRT_OP_RETURN, c->nr);
			emit(ld, home(ld, 0));
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
	push_types(ld, res, nr);
	if (was_target)
		gas_leader(ld, off, false);
}

/*
 * A float compare just emitted producing operand i, or the i32.eqz (I32_EQ_I x, 0) of one
 * just before it into the same temporary: returns the compare's first word and sets *cond
 * (WRT_FC_*), else WRT_NO_INDEX.
 */
static uint32_t fcmp_fusable(struct wrt_ld *ld, uint32_t i, uint32_t *cond)
{
	static const uint8_t masks[6] = {
	    WRT_FC_EQ, WRT_FC_EQ | WRT_FC_NOT, WRT_FC_LT,
	    WRT_FC_GT, WRT_FC_LT | WRT_FC_EQ,  WRT_FC_GT | WRT_FC_EQ}; /* eq ne lt gt le ge */
	if (!fresh_result(ld, i))
		return WRT_NO_INDEX;
	uint32_t s = ld->last_start, op = ld->code[s] & 0xFFFFu, neg = 0;
	if (op == WRT_OP_I32_EQ_I && ld->code[s + 2] == 0 && ld->prev_start != WRT_NO_INDEX &&
	    ld->prev_end == s && ld->code[s + 1] == home(ld, i) &&
	    (ld->code[ld->prev_start] >> 16) == home(ld, i)) {
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
static bool loop_head_at(struct wrt_ld *ld, uint32_t pc)
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
static void fuse_ld8_branch(struct wrt_ld *ld, uint32_t s, bool eq, uint32_t imm, struct wrt_ctl *c,
			    bool with_gas)
{
	bool a = (ld->code[s] & 0xFFFFu) == WRT_OP_I32_LOAD8_U_A;
	uint32_t op = a ? (eq ? WRT_OP_LD8BR_EQ_A : WRT_OP_LD8BR_NE_A)
			: (eq ? WRT_OP_LD8BR_EQ : WRT_OP_LD8BR_NE);
	ld->code[s] = (ld->code[s] & 0xFFFF0000u) | op;
	ld->ld_start = ld->ld_end = WRT_NO_INDEX;
	label_here(ld);
	emit(ld, imm);
	emit_target(ld, c, with_gas);
	if (!with_gas)
		emit(ld, 0);
}

/* The load8_u at word s is a plain or _A byte load ending at word end. */
static bool is_ld8(struct wrt_ld *ld, uint32_t s, uint32_t end)
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
	label_here(ld);
	emit_op(ld,
		f64 ? (imm ? WRT_OP_FBR_F64_I : WRT_OP_FBR_F64)
		    : (imm ? WRT_OP_FBR_F32_I : WRT_OP_FBR_F32),
		a);
	emit(ld, b0);
	if (f64 && imm)
		emit(ld, b1);
	emit(ld, cond);
	emit_target(ld, c, with_gas);
	if (!with_gas)
		emit(ld, 0);
}

/* Tries to fuse the compare just emitted (producing operand i) into a branch. */
static bool fuse_cmp_branch(struct wrt_ld *ld, uint32_t i, bool inverse, struct wrt_ctl *c,
			    bool with_gas)
{
	uint32_t fcond, fs = fcmp_fusable(ld, i, &fcond);
	if (fs != WRT_NO_INDEX) {
		fuse_fcmp_branch(ld, fs, inverse ? fcond ^ WRT_FC_NOT : fcond, c, with_gas);
		return true;
	}
	if (!fresh_result(ld, i) || ld->last_cmp < 0)
		return false;
	uint32_t cmp = (uint32_t)ld->last_cmp;
	if (inverse)
		cmp = wrt_cmp_inverse[cmp];
	uint32_t a = ld->last_a, b = ld->last_b;
	bool imm = ld->last_imm;
	uint32_t ps = ld->prev_start;
	if (imm && cmp <= 1 && ps != WRT_NO_INDEX && ld->prev_end == ld->last_start &&
	    is_ld8(ld, ps, ld->prev_end) && (ld->code[ps] >> 16) == a && a == home(ld, i) &&
	    !loop_head_at(ld, ld->last_start)) {
		/* a byte just loaded into a temporary, compared with a constant: one op */
		ld->ncode = ld->last_start; /* drop the compare */
		fuse_ld8_branch(ld, ps, cmp == 0, b, c, with_gas);
		return true;
	}
	uint32_t add = 0, fam = add_before(ld, ld->last_start, a, &add);
	if (!fam && !imm) {
		/* `i += k; br_if (n == i)`: the added local is the second operand; swap */
		fam = add_before(ld, ld->last_start, b, &add);
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
		label_here(ld);
		emit_op(ld, fam + 2 * cmp + (imm ? 1u : 0u), a);
		emit(ld, add);
		emit(ld, b);
		emit_target(ld, c, with_gas);
		if (!with_gas)
			emit(ld, 0);
		return true;
	}
	ld->ncode = ld->last_start; /* drop the compare */
	label_here(ld);
	emit_op(ld, WRT_OP_BR_EQ + 2 * cmp + (imm ? 1u : 0u), a);
	emit(ld, b);
	emit_target(ld, c, with_gas);
	if (!with_gas)
		emit(ld, 0); /* the fused ops always carry a gas word */
	return true;
}

/* br / br_if to c: label values are operands [h - n, h); cond (br_if) was operand h. */
/* Remembers that the conditional branch at test_pc is the first thing loop ctl[li] does. */
static void note_loop_head(struct wrt_ld *ld, uint32_t li, uint32_t test_pc, uint8_t kind,
			   uint32_t target)
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
	if (kind == 2 && target == li)
		return; /* a continue, not a test */
	if (kind == 2 && target > li)
		kind = 3; /* to the end of a block that starts with the loop */
	if (pre != test_pc && ld->wr_end == test_pc &&
	    (ld->code[ld->wr_start] & 0xFFFFu) == WRT_OP_I32_ADD_I)
		return; /* that add may still fuse into the test (ADDBR) */
	l->head_pc = test_pc;
	l->head_pre = pre;
	l->head_kind = kind;
	l->head_target = target;
	l->head_else = kind == 1 ? ld->ctl[target].else_pos : WRT_NO_INDEX;
	l->head_else_pc = WRT_NO_INDEX;
	if (kind == 1 || kind == 3)
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
	if (cmp_op < WRT_OP_BR_EQ || cmp_op >= WRT_OP_BR_EQ + 20)
		return 0;
	uint32_t k = (cmp_op - WRT_OP_BR_EQ) / 2, imm = (cmp_op - WRT_OP_BR_EQ) % 2;
	uint32_t fam = add_before(ld, ld->ncode, *a, add);
	if (!fam && !imm) {
		fam = add_before(ld, ld->ncode, *b, add);
		if (!fam)
			return 0;
		uint32_t t = *a;
		*a = *b;
		*b = t;
		k = wrt_cmp_swapped[k];
	}
	return fam ? fam + 2 * k + imm : 0;
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
static bool rotate_back_edge(struct wrt_ld *ld, struct wrt_ctl *c)
{
	if (c->kind != CTL_LOOP || c->head_pc == WRT_NO_INDEX || c->np)
		return false;
	uint8_t next = ld->pos < ld->end ? ld->b[ld->pos] : 0;
	bool jump_else = false; /* after the test, jump to where its false path goes */
	if (c->head_kind == 1) {
		/* either the if is the innermost block, in its then-arm, and this br ends the
		 * arm (the code after this instruction is where the test's false path goes), or
		 * that place is already known */
		struct wrt_ctl *hif = &ld->ctl[c->head_target];
		bool here = c->head_target < ld->cd && top(ld) == hif && hif->kind == CTL_IF &&
			    hif->else_pos == c->head_else && (next == 0x05 || next == 0x0B);
		if (!here && c->head_else_pc == WRT_NO_INDEX)
			return false;
		jump_else = !here;
	} else if (c->head_kind == 3) {
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
	} else if (op >= WRT_OP_BR_EQ && op < WRT_OP_BR_EQ + 20) {
		uint32_t k = (op - WRT_OP_BR_EQ) / 2, imm = (op - WRT_OP_BR_EQ) % 2;
		inv = WRT_OP_BR_EQ + 2u * wrt_cmp_inverse[k] + imm;
		len = 4;
	} else {
		return false;
	}
	bool k3 = c->head_kind == 3;
	uint32_t k3_top = c->head_taken ? op : inv; /* kind 3: the repeated test's op */
	if (k3 && (op == WRT_OP_BR_IFZ || (k3_top == WRT_OP_BR_IFZ && ld->m->metered)))
		return false; /* BR_IFZ has no gas word */
	if (!k3 && c->head_pre != c->head_pc && op == WRT_OP_BR_IF && ld->m->metered)
		return false;
	if (c->head_pre != c->head_pc) {
		/* repeat the load or add the test reads too; a load keeps its trap location
		 * (ops without a source-map entry do not trap) */
		uint32_t wasm = WRT_NO_INDEX;
		for (uint32_t i = ld->nsm; i > 0 && ld->sm[i - 1].code >= c->head_pre; i--)
			if (ld->sm[i - 1].code == c->head_pre)
				wasm = ld->sm[i - 1].wasm;
		if (wasm != WRT_NO_INDEX)
			srcmap(ld, wasm);
		for (uint32_t i = c->head_pre; i < c->head_pc; i++)
			emit(ld, ld->code[i]);
	}
	uint32_t gas = back_edge_gas(ld, c);
	uint32_t body = c->head_pc + len;
	if (k3) {
		/* both ways stay in the loop: the test to where it went (the end of a block
		 * inside the loop) or on into the body; the likelier one is the branch */
		uint32_t t = c->head_else_pc;
		uint32_t to = c->head_taken ? t : body, fall = c->head_taken ? body : t;
		uint32_t add = 0, fam = add_before(ld, ld->ncode, w0 >> 16, &add);
		uint32_t ta = w0 >> 16, tb = ld->code[c->head_pc + 1], fop;
		if (k3_top == WRT_OP_BR_IF && fam) {
			/* `x += k; br_if x`: add, test non-zero, branch */
			ld->ncode = ld->wr_start;
			emit(ld, (w0 & 0xFFFF0000u) | (fam + WRT_OP_ADDBR_NE_I - WRT_OP_ADDBR_EQ));
			emit(ld, add);
			emit(ld, 0);
			emit(ld, to - ld->ncode);
			emit(ld, gas);
		} else if (op != WRT_OP_BR_IF && op != WRT_OP_BR_IFZ &&
			   (fop = addbr_for_test(ld, k3_top, &ta, &tb, &add)) != 0) {
			/* `i += k; br_if (i == n)` repeated: add, compare, branch */
			ld->ncode = ld->wr_start;
			emit_op(ld, fop, ta);
			emit(ld, add);
			emit(ld, tb);
			emit(ld, to - ld->ncode);
			emit(ld, gas);
		} else {
			emit(ld, (w0 & 0xFFFF0000u) | k3_top);
			if (op != WRT_OP_BR_IF)
				emit(ld, ld->code[c->head_pc + 1]);
			emit(ld, to - ld->ncode);
			if (k3_top != WRT_OP_BR_IFZ)
				emit(ld, gas);
		}
		emit(ld, WRT_OP_BR);
		emit(ld, fall - ld->ncode);
		emit(ld, gas);
		label_here(ld);
		return true;
	}
	uint32_t add = 0, fam = add_before(ld, ld->ncode, w0 >> 16, &add);
	uint32_t ga = w0 >> 16, gb = ld->code[c->head_pc + 1], gop;
	if (op == WRT_OP_BR_IFZ && fam) {
		/* count-down loop `if (x) { ...; x += k; br }`: add, test non-zero, branch */
		ld->ncode = ld->wr_start;
		emit(ld, (w0 & 0xFFFF0000u) | (fam + WRT_OP_ADDBR_NE_I - WRT_OP_ADDBR_EQ));
		emit(ld, add);
		emit(ld, 0);
		emit(ld, body - ld->ncode);
		emit(ld, gas);
	} else if (inv == WRT_OP_BR_IFZ) {
		/* a br_if head tested "non-zero exits": continue when zero (BR_IFZ has no gas
		 * word, so keep the plain back-edge when metering) */
		if (ld->m->metered)
			return false;
		emit(ld, (w0 & 0xFFFF0000u) | inv);
		emit(ld, body - ld->ncode);
	} else if (inv == WRT_OP_BR_IF) {
		emit(ld, (w0 & 0xFFFF0000u) | inv);
		emit(ld, body - ld->ncode);
		emit(ld, gas);
	} else if ((gop = addbr_for_test(ld, inv, &ga, &gb, &add)) != 0) {
		/* the loop's `x += k` (or `x += y`) before the back-edge joins the repeated test
		 * (x may be either operand of a slot-slot compare) */
		ld->ncode = ld->wr_start;
		emit_op(ld, gop, ga);
		emit(ld, add);
		emit(ld, gb);
		emit(ld, body - ld->ncode);
		emit(ld, gas);
	} else if (ld8br_op(ld, c, inv, w0)) {
		/* the repeated load of a byte and its test against a constant: one op */
		uint32_t at = ld->ncode - (c->head_pc - c->head_pre);
		ld->code[at] = (ld->code[at] & 0xFFFF0000u) | ld8br_op(ld, c, inv, w0);
		emit(ld, ld->code[c->head_pc + 1]);
		emit(ld, body - ld->ncode);
		emit(ld, gas);
	} else {
		emit(ld, (w0 & 0xFFFF0000u) | inv);
		emit(ld, ld->code[c->head_pc + 1]);
		emit(ld, body - ld->ncode);
		emit(ld, gas);
	}
	if (c->head_kind == 2) { /* falling through leaves the loop: go where its test went */
		ld->fwd_br = ld->ncode;
		emit(ld, WRT_OP_BR);
		emit_target(ld, &ld->ctl[c->head_target], true);
	} else if (jump_else) {
		/* the test's false path stays in the loop (the code after the if): this jump
		 * closes the iteration, so it charges the back-edge too (found by the fuzzer:
		 * with 0 here `loop { x++; if (x == 5) { br loop } ...; br loop }` never ran
		 * out of gas) */
		emit(ld, WRT_OP_BR);
		emit(ld, c->head_else_pc - ld->ncode);
		emit(ld, gas);
	}
	label_here(ld);
	return true;
}

static void emit_branch(struct wrt_ld *ld, bool cond, struct wrt_ctl *c, uint32_t n, uint32_t h)
{
	uint32_t dst = home(ld, c->height);
	uint32_t src = home(ld, h - n);
	bool lazy = any_lazy(ld, h - n, h);
	uint32_t test_pc = ld->ncode;
	if (cond && !lazy && (n == 0 || dst == src) && fresh_result(ld, h) && ld->last_cmp >= 0)
		test_pc = ld->last_start;
	if (cond && n == 0)
		note_loop_head(ld, ld->cd - 1, test_pc, 2, (uint32_t)(c - ld->ctl));
	if (cond && !lazy && (n == 0 || dst == src) && fuse_cmp_branch(ld, h, false, c, true))
		return;
	if (!cond && n == 0 && rotate_back_edge(ld, c))
		return;
	if (!cond && n == 0 && ld->cp_end == ld->ncode) {
		/* `local.set x (local.get y); br L`: move and jump in one op (loop phis) */
		uint32_t x = ld->code[ld->cp_start] >> 16, y = ld->code[ld->cp_start + 1];
		ld->ncode = ld->cp_start;
		emit_op(ld, WRT_OP_BR_SETL, x);
		emit_target(ld, c, true);
		emit(ld, y);
		label_here(ld);
		return;
	}
	if (!cond && n == 1 && (ld->vk[h - 1] != VK_HOME || dst != src) &&
	    (ld->vk[h - 1] != VK_CONST || ld->vhi[h - 1] == 0)) {
		/* one value into the label's slot and jump: a constant, a local or a temp */
		bool k = ld->vk[h - 1] == VK_CONST;
		uint32_t v = k ? ld->vv[h - 1] : opnd(ld, h - 1);
		emit_op(ld, k ? WRT_OP_BR_SET : WRT_OP_BR_SETL, dst);
		emit_target(ld, c, true);
		emit(ld, v);
		label_here(ld);
		return;
	}
	if (cond && n == 0 && fresh_result(ld, h) && is_ld8(ld, ld->last_start, ld->ncode) &&
	    !loop_head_at(ld, ld->ncode)) {
		/* br_if on a byte just loaded (`if (p[i])`): load, test non-zero, branch */
		fuse_ld8_branch(ld, ld->last_start, false, 0, c, true);
		return;
	}
	uint32_t add = 0, fam = 0;
	if (cond && n == 0 && ld->vk[h] == VK_LOCAL)
		fam = add_before(ld, ld->ncode, ld->vv[h], &add);
	if (fam) {
		/* `x += k (or y); br_if x` (count-down loops): add, test non-zero, branch */
		uint32_t x = ld->vv[h];
		ld->ncode = ld->wr_start;
		label_here(ld);
		emit_op(ld, fam + (WRT_OP_ADDBR_NE_I - WRT_OP_ADDBR_EQ), x);
		emit(ld, add);
		emit(ld, 0);
		emit_target(ld, c, true);
		label_here(ld);
		return;
	}
	materialize_range(ld, h - n, h);
	uint32_t cs = cond ? opnd(ld, h) : 0;
	if (n == 0 || dst == src) {
		if (!cond && c->kind != CTL_LOOP)
			ld->fwd_br = ld->ncode;
		emit_op(ld, cond ? WRT_OP_BR_IF : WRT_OP_BR, cs);
		emit_target(ld, c, true);
	} else if (!cond) {
		emit_op(ld, WRT_OP_BR_MOVE, n);
		emit_target(ld, c, true);
		emit(ld, dst | (src << 16));
	} else {
		emit_op(ld, WRT_OP_BR_IF_MOVE, cs);
		emit_target(ld, c, true);
		emit(ld, dst | (src << 16));
		emit(ld, n);
	}
	label_here(ld);
}

static void op_local_set(struct wrt_ld *ld, uint32_t x, size_t off, bool tee)
{
	uint8_t t = ld->locals[x];
	pop_expect(ld, t, off);
	if (ld->st)
		return;
	uint32_t e = ld->vh;
	if (live(ld)) {
		bool hazard = false;
		for (uint32_t i = 0; i < e; i++)
			if (ld->vk[i] == VK_LOCAL && ld->vv[i] == x)
				hazard = true;
		if (!hazard && fresh_result(ld, e)) {
			/* retarget the op that computed the value: it writes x directly */
			uint32_t s = ld->last_start, is = ld->inc_start, ie = ld->inc_end;
			ld->code[s] = (ld->code[s] & 0xFFFFu) | (x << 16);
			label_here(ld);
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
					materialize(ld, i);
			if (ld->vk[e] == VK_CONST && ld->vv[e] == 0 && ld->vhi[e] == 0 &&
			    x >= ld->ftype->nparams && ld->cd == 1 && ld->ncode == ld->body_pc) {
				/* a declared local set to zero before the body's first op (clang's
				 * `i32.const 0; local.set n` prologue): every call zeroes the
				 * declared locals, and nothing ran yet that could have written it
				 */
			} else if (ld->vk[e] == VK_CONST) {
				if (ld->vhi[e] == 0) {
					emit_op(ld, WRT_OP_CONST32, x);
					emit(ld, ld->vv[e]);
				} else {
					emit_op(ld, WRT_OP_CONST64, x);
					emit(ld, ld->vv[e]);
					emit(ld, ld->vhi[e]);
				}
			} else {
				uint32_t s = opnd(ld, e);
				if (s != x) {
					ld->cp_start = ld->ncode;
					emit_op(ld, WRT_OP_COPY, x);
					emit(ld, s);
					ld->cp_end = ld->ncode;
				}
			}
		}
	}
	if (tee)
		push_lazy(ld, t, VK_LOCAL, x, 0);
}

static void op_block(struct wrt_ld *ld, uint8_t op, size_t off)
{
	struct wrt_module *m = ld->m;
	uint8_t single = 0;
	const uint8_t *ps, *rs;
	uint32_t np, nr;
	bool lv = live(ld);
	rd_blocktype(ld, &single, &ps, &np, &rs, &nr);
	uint32_t end_idx = ld->vh; /* entries below this (params included) go home */
	if (op == 0x04) {
		pop_expect(ld, WRT_I32, off);
		end_idx = ld->vh;
	}
	uint32_t cond = ld->vh;
	pop_types(ld, ps, np, off);
	if (ld->st)
		return;
	/* every operand of the enclosing frame goes home: code inside may set locals, and
	 * both arms of an if must find the params in the same slots */
	uint32_t from = top(ld)->height;
	bool fuse = false;
	if (lv) {
		bool lazy = any_lazy(ld, from, end_idx);
		uint32_t fc;
		fuse = op == 0x04 && !lazy && fresh_result(ld, cond) &&
		       (ld->last_cmp >= 0 || fcmp_fusable(ld, cond, &fc) != WRT_NO_INDEX);
		if (!fuse)
			materialize_range(ld, from, end_idx);
	}
	uint32_t saved_end = ld->last_end;
	push_ctl(ld, op == 0x02 ? CTL_BLOCK : op == 0x03 ? CTL_LOOP : CTL_IF, ps, np, rs, nr, off);
	if (ld->st)
		return;
	struct wrt_ctl *c = top(ld);
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
			fuse_cmp_branch(ld, cond, true, c, false);
			c->else_pos = c->patch; /* the fused branch's offset word */
			c->patch = WRT_NO_INDEX;
		} else {
			uint32_t cs = opnd(ld, cond);
			test_pc = ld->ncode;
			emit_op(ld, WRT_OP_BR_IFZ, cs);
			c->else_pos = ld->ncode;
			emit(ld, WRT_NO_INDEX);
		}
		note_loop_head(ld, ld->cd - 2, test_pc, 1, ld->cd - 1);
		/* no new gas region: the then-arm is charged with the region before the if
		 * (an over-charge by the arm's length when it is skipped) */
		label_here(ld);
		return;
	}
	if (op == 0x03) {
		label_here(ld);
		c->label_pc = ld->ncode; /* no GAS op: see back_edge_gas() */
		if (m->metered && ld->gas_pos != WRT_NO_INDEX) {
			c->loop_gas_pos = ld->gas_pos;
			c->loop_gas_base = ld->code[ld->gas_pos];
		}
		c->body_pc = ld->ncode;
	}
}

/* Validates and compiles one instruction. Returns false after the function's final end. */
static bool body_op(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t off = ld->pos;
	uint8_t op = rd_u8(ld);
	if (ld->st)
		return false;
	bool lv = live(ld);
	if (lv && ld->gas_pos != WRT_NO_INDEX)
		ld->code[ld->gas_pos]++;
	if (op >= 0x45 && op <= 0xC4) {
		simple_op(ld, &wrt_num_by_byte[op], op, off);
		return true;
	}
	if (op >= 0x28 && op <= 0x3E) {
		const struct wrt_meminfo *mi = &wrt_mem_by_byte[op];
		uint32_t align = rd_u32(ld);
		uint32_t moff = rd_u32(ld);
		need_mem(ld, off);
		if (!ld->st && align > mi->align) {
			invalid(ld, off, "alignment must not be larger than natural");
			return false;
		}
		bool store = op >= 0x36;
		pop_types(ld, (const uint8_t[]){WRT_I32, sig_type(mi->sig[1])}, store ? 2 : 1, off);
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (lv) {
			/* a fresh i32.add of a slot and an immediate folds into the address */
			bool fold = fresh_result(ld, e) &&
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
					(ld->code[ps] >> 16) == home(ld, e) && base == home(ld, e);
				if (scale) {
					base = ld->code[ps + 1];
					shift = ld->code[ps + 2] & 31;
					ld->ncode = ps;
				}
			}
			uint32_t a = fold ? base : opnd(ld, e);
			uint8_t vt = sig_type(mi->sig[1]);
			/* store immediates are 32 bits, sign-extended for 64-bit stores */
			bool vimm = store && imm_fits(ld, e + 1,
						      vt == WRT_F32   ? WRT_I32
						      : vt == WRT_F64 ? WRT_I64
								      : vt);
			uint32_t v = store ? (vimm ? ld->vv[e + 1] : opnd(ld, e + 1)) : 0;
			uint32_t op = mi->op;
			if (store)
				op +=
				    scale ? (vimm ? 5u : 4u) : (vimm ? 1u : 0u) + (fold ? 2u : 0u);
			else
				op += scale ? 2u : fold ? 1u : 0u;
			uint32_t start = ld->ncode;
			srcmap(ld, off);
			emit_op(ld, op, store ? a : home(ld, e));
			emit(ld, store ? v : a);
			emit(ld, moff);
			if (fold)
				emit(ld, add);
			if (scale)
				emit(ld, shift);
			label_here(ld);
			ld->ld_start = store ? WRT_NO_INDEX : start;
			ld->ld_end = store ? WRT_NO_INDEX : ld->ncode;
			if (!store) {
				push(ld, sig_type(mi->sig[2]));
				result_at(ld, start, e);
			}
		} else if (!store) {
			push(ld, sig_type(mi->sig[2]));
		}
		return true;
	}
	switch (op) {
	case 0x00: /* unreachable */
		if (lv) {
			srcmap(ld, off);
			emit(ld, WRT_OP_UNREACHABLE);
		}
		set_unreachable(ld);
		break;
	case 0x01: /* nop */
		break;
	case 0x02: /* block */
	case 0x03: /* loop */
	case 0x04: /* if */
		op_block(ld, op, off);
		break;
	case 0x05: { /* else */
		struct wrt_ctl *c = top(ld);
		if (c->kind != CTL_IF) {
			invalid(ld, off, "else without matching if");
			return false;
		}
		pop_types(ld, c->results, c->nr, off);
		if (!ld->st && ld->vh != c->height)
			invalid(ld, off, "type mismatch (values left on the stack at else)");
		if (ld->st)
			return false;
		if (!c->dead) {
			if (!c->unreachable) {
				materialize_range(ld, c->height, c->height + c->nr);
				emit(ld, WRT_OP_BR);
				emit_target(ld, c, true);
			}
			patch_chain(ld, c->else_pos, ld->ncode);
			c->else_pos = WRT_NO_INDEX;
			if (c->head_of != WRT_NO_INDEX)
				ld->ctl[c->head_of].head_else_pc = ld->ncode;
		}
		c->kind = CTL_ELSE;
		c->unreachable = false;
		push_types(ld, c->params, c->np);
		label_here(ld);
		break;
	}
	case 0x0B: /* end */
		op_end(ld, off);
		return ld->cd > 0 && !ld->st;
	case 0x0C:   /* br */
	case 0x0D: { /* br_if */
		uint32_t l = rd_label(ld, off);
		if (ld->st)
			return false;
		struct wrt_ctl *c = &ld->ctl[ld->cd - 1 - l];
		const uint8_t *ts;
		uint32_t n;
		label_types(c, &ts, &n);
		if (op == 0x0D)
			pop_expect(ld, WRT_I32, off);
		uint32_t h = ld->vh;
		pop_types(ld, ts, n, off);
		if (ld->st)
			return false;
		if (lv)
			emit_branch(ld, op == 0x0D, c, n, h);
		if (op == 0x0C)
			set_unreachable(ld);
		else
			push_types(ld, ts, n);
		break;
	}
	case 0x0E: { /* br_table */
		uint32_t n = rd_count(ld, K32_WASM_MAX_BR_TABLE, "K32_WASM_MAX_BR_TABLE");
		size_t lpos = ld->pos;
		uint32_t dl = 0;
		for (uint32_t i = 0; i <= n && !ld->st; i++)
			dl = rd_label(ld, off); /* the last one read is the default */
		size_t after = ld->pos;
		pop_expect(ld, WRT_I32, off);
		if (ld->st)
			return false;
		const uint8_t *dts;
		uint32_t arity;
		label_types(&ld->ctl[ld->cd - 1 - dl], &dts, &arity);
		uint32_t h = ld->vh;
		struct wrt_ctl *cur = top(ld);
		if (lv && h - cur->height >= arity) {
			materialize_range(ld, h - arity, h);
			uint32_t is = opnd(ld, h);
			emit_op(ld, WRT_OP_BR_TABLE, is);
			emit(ld, n);
			emit(ld, arity | (home(ld, h - arity) << 16));
		}
		ld->pos = lpos;
		for (uint32_t i = 0; i <= n && !ld->st; i++) {
			struct wrt_ctl *c = &ld->ctl[ld->cd - 1 - rd_u32(ld)];
			const uint8_t *ts;
			uint32_t cn;
			label_types(c, &ts, &cn);
			if (cn != arity) {
				invalid(ld, off,
					"type mismatch (br_table labels of different arity)");
				return false;
			}
			for (uint32_t k = 0; k < cn; k++) {
				uint32_t depth = cn - k; /* from the top */
				if (h - cur->height < depth) {
					if (cur->unreachable)
						continue;
					invalid(ld, off, "type mismatch (br_table operands)");
					return false;
				}
				uint8_t have = ld->vt[h - depth];
				if (have != ts[k] && have != WRT_T_UNKNOWN) {
					invalid(ld, off, "type mismatch (br_table operands)");
					return false;
				}
			}
			if (lv) { /* entry: offset, gas (back-edges), destination slot */
				emit_target(ld, c, true);
				emit(ld, home(ld, c->height));
			}
		}
		ld->pos = after;
		pop_types(ld, dts, arity, off);
		set_unreachable(ld);
		break;
	}
	case 0x0F: { /* return */
		const struct wrt_functype *ft = ld->ftype;
		pop_types(ld, ft->types + ft->nparams, ft->nresults, off);
		if (ld->st)
			return false;
		if (lv) {
			materialize_range(ld, ld->vh, ld->vh + ft->nresults);
			emit_op(ld, WRT_OP_RETURN, ft->nresults);
			emit(ld, home(ld, ld->vh));
		}
		set_unreachable(ld);
		break;
	}
	case 0x10: { /* call */
		uint32_t f = rd_u32(ld);
		if (!ld->st && f >= m->nfuncs) {
			invalid(ld, off, "unknown function");
			return false;
		}
		if (ld->st)
			return false;
		const struct wrt_functype *ft = &m->types[m->funcs[f].type];
		pop_types(ld, ft->types, ft->nparams, off);
		if (ld->st)
			return false;
		if (lv) {
			materialize_range(ld, ld->vh, ld->vh + ft->nparams);
			srcmap(ld, off);
			emit_op(ld, WRT_OP_CALL, home(ld, ld->vh));
			emit(ld, f);
			label_here(ld);
		}
		push_types(ld, ft->types + ft->nparams, ft->nresults);
		break;
	}
	case 0x11: { /* call_indirect */
		uint32_t ti = rd_u32(ld);
		uint32_t tab = rd_table(ld, off);
		if (!ld->st && ti >= m->ntypes)
			invalid(ld, off, "unknown type");
		if (!ld->st && m->tables[tab].type != WRT_FUNCREF)
			invalid(ld, off, "type mismatch (call_indirect needs a funcref table)");
		if (ld->st)
			return false;
		pop_expect(ld, WRT_I32, off);
		const struct wrt_functype *ft = &m->types[ti];
		pop_types(ld, ft->types, ft->nparams, off);
		if (ld->st)
			return false;
		if (lv) {
			uint32_t e = ld->vh;
			materialize_range(ld, e, e + ft->nparams);
			uint32_t is = opnd(ld, e + ft->nparams);
			srcmap(ld, off);
			emit_op(ld, WRT_OP_CALL_INDIRECT, home(ld, e));
			emit(ld, ti);
			emit(ld, tab);
			emit(ld, is);
			label_here(ld);
		}
		push_types(ld, ft->types + ft->nparams, ft->nresults);
		break;
	}
	case 0x1A: /* drop */
		pop(ld, off);
		break;
	case 0x1B:   /* select */
	case 0x1C: { /* select t */
		uint8_t t = 0;
		if (op == 0x1C) {
			size_t coff = ld->pos;
			uint32_t n = rd_u32(ld);
			if (!ld->st && n != 1) {
				invalid(ld, coff, "invalid result arity (select takes one type)");
				return false;
			}
			t = rd_valtype(ld);
		}
		pop_expect(ld, WRT_I32, off);
		uint8_t t1 = pop_expect(ld, t, off);
		uint8_t t2 = pop_expect(ld, t, off);
		if (ld->st)
			return false;
		if (op == 0x1B) {
			if ((t1 && !is_numtype(t1)) || (t2 && !is_numtype(t2)) ||
			    (t1 && t2 && t1 != t2)) {
				invalid(ld, off, "type mismatch (select operands)");
				return false;
			}
			t = t1 ? t1 : t2;
		}
		uint32_t e = ld->vh;
		if (lv && fresh_result(ld, e + 2) && ld->last_cmp >= 0 && ld->vk[e] != VK_CONST &&
		    ld->vk[e + 1] != VK_CONST) {
			/* select on a fresh i32 compare: one op compares and selects (the values
			 * are slots, so reading them emits nothing after the compare) */
			uint32_t a = opnd(ld, e), b = opnd(ld, e + 1);
			uint32_t cmp = (uint32_t)ld->last_cmp, ca = ld->last_a, cb = ld->last_b;
			bool imm = ld->last_imm;
			ld->ncode = ld->last_start; /* drop the compare */
			label_here(ld);
			uint32_t start = ld->ncode;
			emit_op(ld, WRT_OP_SELECT_EQ + 2 * cmp + (imm ? 1u : 0u), home(ld, e));
			emit(ld, a | (b << 16));
			emit(ld, ca);
			emit(ld, cb);
			push(ld, t);
			result_at(ld, start, e);
		} else if (lv) {
			uint32_t a = opnd(ld, e), b = opnd(ld, e + 1), c = opnd(ld, e + 2);
			uint32_t start = ld->ncode;
			emit_op(ld, WRT_OP_SELECT, home(ld, e));
			emit(ld, a | (b << 16));
			emit(ld, c);
			push(ld, t);
			result_at(ld, start, e);
		} else {
			push(ld, t);
		}
		break;
	}
	case 0x20:   /* local.get */
	case 0x21:   /* local.set */
	case 0x22: { /* local.tee */
		uint32_t x = rd_u32(ld);
		if (!ld->st && x >= ld->nlocals) {
			invalid(ld, off, "unknown local");
			return false;
		}
		if (ld->st)
			return false;
		if (op == 0x20)
			push_lazy(ld, ld->locals[x], VK_LOCAL, x, 0);
		else
			op_local_set(ld, x, off, op == 0x22);
		break;
	}
	case 0x23:   /* global.get */
	case 0x24: { /* global.set */
		uint32_t x = rd_u32(ld);
		if (!ld->st && x >= m->nglobals) {
			invalid(ld, off, "unknown global");
			return false;
		}
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (op == 0x23) {
			uint32_t start = ld->ncode;
			if (lv) {
				emit_op(ld, WRT_OP_GLOBAL_GET, home(ld, e));
				emit(ld, x);
			}
			push(ld, m->globals[x].type);
			if (lv)
				result_at(ld, start, e);
		} else {
			if (!m->globals[x].mut) {
				invalid(ld, off, "global is immutable");
				return false;
			}
			pop_expect(ld, m->globals[x].type, off);
			if (lv && !ld->st) {
				uint32_t s = opnd(ld, ld->vh);
				emit_op(ld, WRT_OP_GLOBAL_SET, s);
				emit(ld, x);
			}
		}
		break;
	}
	case 0x25:   /* table.get */
	case 0x26: { /* table.set */
		uint32_t t = rd_table(ld, off);
		if (ld->st)
			return false;
		if (op == 0x25) {
			pop_expect(ld, WRT_I32, off);
			emit_base_op(ld, WRT_OP_TABLE_GET, 1, off, true);
			if (lv)
				emit(ld, t);
			push(ld, m->tables[t].type);
		} else {
			pop_expect(ld, m->tables[t].type, off);
			pop_expect(ld, WRT_I32, off);
			emit_base_op(ld, WRT_OP_TABLE_SET, 2, off, true);
			if (lv)
				emit(ld, t);
		}
		break;
	}
	case 0x3F:   /* memory.size */
	case 0x40: { /* memory.grow */
		zero_byte(ld);
		need_mem(ld, off);
		if (op == 0x40)
			pop_expect(ld, WRT_I32, off);
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (lv) {
			uint32_t a = op == 0x40 ? opnd(ld, e) : 0;
			uint32_t start = ld->ncode;
			emit_op(ld, op == 0x3F ? WRT_OP_MEMORY_SIZE : WRT_OP_MEMORY_GROW,
				home(ld, e));
			if (op == 0x40)
				emit(ld, a);
			push(ld, WRT_I32);
			result_at(ld, start, e);
		} else {
			push(ld, WRT_I32);
		}
		break;
	}
	case 0x41: { /* i32.const */
		uint32_t v = (uint32_t)rd_leb(ld, 32, true);
		push_lazy(ld, WRT_I32, VK_CONST, v, 0);
		break;
	}
	case 0x42:   /* i64.const */
	case 0x44: { /* f64.const */
		uint64_t v = 0;
		if (op == 0x42) {
			v = rd_leb(ld, 64, true);
		} else {
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)rd_u8(ld) << (8 * i);
		}
		push_lazy(ld, op == 0x42 ? WRT_I64 : WRT_F64, VK_CONST, (uint32_t)v,
			  (uint32_t)(v >> 32));
		break;
	}
	case 0x43: { /* f32.const */
		uint32_t v = 0;
		for (int i = 0; i < 4; i++)
			v |= (uint32_t)rd_u8(ld) << (8 * i);
		push_lazy(ld, WRT_F32, VK_CONST, v, 0);
		break;
	}
	case 0xD0: { /* ref.null */
		uint8_t t = rd_reftype(ld);
		push_lazy(ld, t, VK_CONST, 0, 0);
		break;
	}
	case 0xD1: { /* ref.is_null */
		uint8_t t = pop(ld, off);
		if (!ld->st && t != WRT_T_UNKNOWN && !is_reftype(t)) {
			invalid(ld, off, "type mismatch (ref.is_null of a number)");
			return false;
		}
		if (ld->st)
			return false;
		uint32_t e = ld->vh;
		if (lv) {
			uint32_t a = opnd(ld, e);
			uint32_t start = ld->ncode;
			emit_op(ld, WRT_OP_REF_IS_NULL, home(ld, e));
			emit(ld, a);
			push(ld, WRT_I32);
			result_at(ld, start, e);
		} else {
			push(ld, WRT_I32);
		}
		break;
	}
	case 0xD2: { /* ref.func */
		uint32_t x = rd_u32(ld);
		if (!ld->st && x >= m->nfuncs) {
			invalid(ld, off, "unknown function");
			return false;
		}
		if (!ld->st && !(ld->declared[x / 8] & (1u << (x % 8)))) {
			invalid(ld, off, "undeclared function reference");
			return false;
		}
		if (lv) {
			emit_op(ld, WRT_OP_REF_FUNC, home(ld, ld->vh));
			emit(ld, x);
		}
		push(ld, WRT_FUNCREF);
		break;
	}
	case 0xFC:
		op_fc(ld, off);
		break;
	case 0xFD:
		ld_fail(ld, K32_ERR_NOT_SUPPORTED, off, "SIMD instructions are not supported",
			"build the pod without -msimd128");
		return false;
	default:
		malformed(ld, off, "illegal opcode");
		return false;
	}
	return !ld->st;
}

static void compile_func(struct wrt_ld *ld, struct wrt_func *f, size_t body_end)
{
	struct wrt_module *m = ld->m;
	const struct wrt_functype *ft = &m->types[f->type];
	ld->ftype = ft;
	/* locals */
	uint32_t ngroups = rd_count(ld, K32_WASM_MAX_LOCALS, "K32_WASM_MAX_LOCALS");
	uint64_t total = ft->nparams;
	size_t lpos = ld->pos;
	for (uint32_t i = 0; i < ngroups && !ld->st; i++) {
		size_t off = ld->pos;
		total += rd_u32(ld);
		rd_valtype(ld);
		if (!ld->st && total > 0xFFFFFFFFull) {
			malformed(ld, off, "too many locals");
			return;
		}
		if (!ld->st && total > K32_WASM_MAX_LOCALS) {
			limit_hit(ld, off, "too many locals", "K32_WASM_MAX_LOCALS");
			return;
		}
	}
	if (ld->st)
		return;
	if (total >= ld->locals_cap) {
		uint32_t ncap = (uint32_t)total + 64;
		uint8_t *p = k32_realloc(&m->alloc, ld->locals, ld->locals_cap, ncap);
		if (!p) {
			no_memory(ld, ld->pos);
			return;
		}
		ld->locals = p;
		ld->locals_cap = ncap;
	}
	memcpy(ld->locals, ft->types, ft->nparams);
	ld->nlocals = ft->nparams;
	ld->pos = lpos;
	for (uint32_t i = 0; i < ngroups; i++) {
		uint32_t n = rd_u32(ld);
		uint8_t t = rd_valtype(ld);
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
	label_here(ld);
	push_ctl(ld, CTL_FUNC, NULL, 0, ft->types + ft->nparams, ft->nresults, ld->pos);
	gas_leader(ld, ld->pos, true);
	ld->body_pc = ld->ncode;
	while (body_op(ld))
		;
	if (ld->st)
		return;
	if (ld->cd != 0) {
		malformed(ld, ld->pos, "END opcode expected");
		return;
	}
	if (ld->pos != body_end)
		malformed(ld, ld->pos, "section size mismatch (bytes after the function's end)");
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

static void sec_code(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t coff = ld->pos;
	uint32_t n = rd_count(ld, K32_WASM_MAX_FUNCS, "K32_WASM_MAX_FUNCS");
	if (ld->st)
		return;
	if (n != m->nfuncs - m->nfunc_imports) {
		malformed(ld, coff, "function and code section have inconsistent lengths");
		return;
	}
	size_t sec_end = ld->end;
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		uint32_t len = rd_u32(ld);
		if (ld->st)
			return;
		if (len > sec_end - ld->pos) {
			malformed(ld, off, "unexpected end of section or function (body size)");
			return;
		}
		struct wrt_func *f = &m->funcs[m->nfunc_imports + i];
		f->wasm_off = (uint32_t)ld->pos;
		ld->end = ld->pos + len;
		m->wasm_code_bytes += len;
		compile_func(ld, f, ld->end);
		ld->end = sec_end;
	}
}

static void sec_names(struct wrt_ld *ld, size_t start, size_t end)
{
	struct wrt_module *m = ld->m;
	struct wrt_ld sub = *ld; /* lenient: a bad name section is ignored */
	struct k32_err scratch;
	sub.err = &scratch;
	sub.st = K32_OK;
	sub.pos = start;
	sub.end = end;
	while (sub.pos < end && !sub.st) {
		uint8_t id = rd_u8(&sub);
		uint32_t len = rd_u32(&sub);
		if (sub.st || len > end - sub.pos)
			return;
		size_t next = sub.pos + len;
		if (id == 1) {
			size_t save_end = sub.end;
			sub.end = next;
			uint32_t n = rd_u32(&sub);
			for (uint32_t i = 0; i < n && !sub.st; i++) {
				uint32_t idx = rd_u32(&sub);
				uint32_t nlen;
				const char *s = rd_name(&sub, &nlen);
				if (!sub.st && idx < m->nfuncs) {
					m->funcs[idx].name = s;
					m->funcs[idx].name_len = nlen;
				}
			}
			sub.end = save_end;
		}
		sub.pos = next;
	}
}

/* Section id to its required position (custom sections excluded). */
static int sec_rank(uint8_t id)
{
	static const int8_t rank[13] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 10};
	return rank[id];
}

void wrt_load_opts_default(struct wrt_load_opts *opts)
{
	opts->gas_metering = true;
	opts->copy_bytes = false;
}

/* A copy of n bytes of the module in module storage (opts.copy_bytes). */
static const void *own_copy(struct wrt_ld *ld, const void *p, size_t n)
{
	if (!n)
		return p == NULL ? NULL : "";
	void *c = ld_alloc(ld, n);
	if (c)
		memcpy(c, p, n);
	return c;
}

/* opts.copy_bytes: every pointer the module keeps into the input goes to module storage. */
static void own_bytes(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	for (uint32_t i = 0; i < m->nimports && !ld->st; i++) {
		struct wrt_import *im = &m->imports[i];
		im->module = own_copy(ld, im->module, im->module_len);
		im->name = own_copy(ld, im->name, im->name_len);
	}
	for (uint32_t i = 0; i < m->nexports && !ld->st; i++)
		m->exports[i].name = own_copy(ld, m->exports[i].name, m->exports[i].name_len);
	for (uint32_t i = 0; i < m->nfuncs && !ld->st; i++)
		if (m->funcs[i].name)
			m->funcs[i].name = own_copy(ld, m->funcs[i].name, m->funcs[i].name_len);
	for (uint32_t i = 0; i < m->ndatas && !ld->st; i++)
		m->datas[i].bytes = own_copy(ld, m->datas[i].bytes, m->datas[i].len);
}

static uint32_t put_delta(uint8_t *p, uint32_t pos, int64_t d)
{
	uint64_t v = ((uint64_t)d << 1) ^ (d < 0 ? ~(uint64_t)0 : 0); /* zigzag */
	do {
		uint8_t b = (uint8_t)(v & 0x7Fu);
		v >>= 7;
		if (p)
			p[pos] = (uint8_t)(b | (v ? 0x80u : 0u));
		pos++;
	} while (v);
	return pos;
}

/* Packs the source map into the module (see wrt_srcmap_find): two passes, size then bytes. */
static void pack_srcmap(struct wrt_ld *ld)
{
	uint8_t *out = NULL;
	uint32_t len = 0;
	for (int pass = 0; pass < 2; pass++) {
		int64_t code = 0, wasm = 0;
		uint32_t pos = 0;
		for (uint32_t i = 0; i < ld->nsm; i++) {
			pos = put_delta(out, pos, (int64_t)ld->sm[i].code - code);
			pos = put_delta(out, pos, (int64_t)ld->sm[i].wasm - wasm);
			code = ld->sm[i].code;
			wasm = ld->sm[i].wasm;
		}
		if (pass == 0) {
			len = pos;
			out = k32_alloc(&ld->m->alloc, len);
			if (!out) {
				no_memory(ld, 0);
				return;
			}
		}
	}
	ld->m->srcmap = out;
	ld->m->srcmap_len = len;
	ld->m->bytes += len;
}

static void ld_free_scratch(struct wrt_ld *ld)
{
	const struct k32_allocator *a = &ld->m->alloc;
	if (ld->v_cap)
		k32_free(a, ld->vv, operands_bytes(ld->v_cap));
	if (ld->ctl_cap)
		k32_free(a, ld->ctl, sizeof(*ld->ctl) * ld->ctl_cap);
	k32_free(a, ld->locals, ld->locals_cap);
	ld->vk = NULL;
	ld->vv = NULL;
	ld->vhi = NULL;
	ld->vt = NULL;
	ld->ctl = NULL;
	ld->locals = NULL;
	ld->v_cap = ld->ctl_cap = 0;
}

static void ld_sections(struct wrt_ld *ld, size_t len)
{
	struct wrt_module *m = ld->m;
	static const uint8_t hdr[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	size_t names_start = 0, names_end = 0;
	if (len < 4 || memcmp(ld->b, hdr, 4)) {
		malformed(ld, 0, "magic header not detected");
		return;
	}
	if (len < 8 || memcmp(ld->b + 4, hdr + 4, 4)) {
		malformed(ld, 4, "unknown binary version");
		return;
	}
	ld->pos = 8;
	int last = 0;
	bool have_funcs = false, have_code = false;
	while (ld->pos < len && !ld->st) {
		size_t off = ld->pos;
		ld->end = len;
		uint8_t id = rd_u8(ld);
		uint32_t slen = rd_u32(ld);
		if (ld->st)
			return;
		if (id > 12) {
			malformed(ld, off, "malformed section id");
			return;
		}
		if (slen > len - ld->pos) {
			malformed(ld, off, "section size mismatch (length out of bounds)");
			return;
		}
		size_t send = ld->pos + slen;
		ld->end = send;
		if (id == 0) {
			uint32_t nlen;
			const char *name = rd_name(ld, &nlen);
			if (!ld->st && nlen == 4 && !memcmp(name, "name", 4)) {
				names_start = ld->pos;
				names_end = send;
			}
			ld->pos = send;
			continue;
		}
		int r = sec_rank(id);
		if (r <= last) {
			malformed(ld, off,
				  "unexpected content after last section (section out of order or "
				  "repeated)");
			return;
		}
		last = r;
		switch (id) {
		case 1:
			sec_types(ld);
			break;
		case 2:
			sec_imports(ld);
			break;
		case 3:
			sec_funcs(ld);
			have_funcs = true;
			break;
		case 4:
			sec_tables(ld);
			break;
		case 5:
			sec_mems(ld);
			break;
		case 6:
			sec_globals(ld);
			break;
		case 7:
			sec_exports(ld);
			break;
		case 8:
			sec_start(ld);
			break;
		case 9:
			sec_elems(ld);
			break;
		case 10:
			sec_code(ld);
			have_code = true;
			break;
		case 11:
			if (!have_code && m->nfuncs > m->nfunc_imports) {
				malformed(ld, off,
					  "function and code section have inconsistent lengths");
				return;
			}
			sec_datas(ld);
			break;
		case 12:
			sec_datacount(ld);
			break;
		}
		if (!ld->st && ld->pos != send)
			malformed(ld, ld->pos, "section size mismatch");
		/* declared[] (ref.func targets) is sized once the function count is known */
		if ((id == 2 || id == 3) && !ld->st)
			ld->declared = ld_alloc(ld, m->nfuncs / 8 + 1);
	}
	(void)have_funcs;
	if (ld->st)
		return;
	if (!have_code && m->nfuncs > m->nfunc_imports) {
		malformed(ld, len, "function and code section have inconsistent lengths");
		return;
	}
	if (m->has_datacount && ld->datacount != m->ndatas) {
		malformed(ld, len, "data count and data section have inconsistent lengths");
		return;
	}
	if (names_end)
		sec_names(ld, names_start, names_end);
}

k32_status_t wrt_module_load(const struct k32_allocator *alloc, const uint8_t *bytes, size_t len,
			     const struct wrt_load_opts *opts, struct wrt_module **out_mod,
			     struct k32_err *err)
{
	struct wrt_load_opts dflt;
	struct wrt_ld ld;
	*out_mod = NULL;
	if (!alloc || (!bytes && len))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "wasm",
				   "wrt_module_load: NULL allocator or bytes");
	if (!opts) {
		wrt_load_opts_default(&dflt);
		opts = &dflt;
	}
	struct wrt_module *m = k32_alloc(alloc, sizeof(*m));
	if (!m)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "wasm",
				   "out of memory allocating the module (%zu bytes)", sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->alloc = *alloc;
	m->bytes = sizeof(*m);
	m->start = WRT_NO_INDEX;
	m->metered = opts->gas_metering;
	memset(&ld, 0, sizeof(ld));
	ld.m = m;
	ld.b = bytes;
	ld.end = len;
	ld.err = err;
	if (grow_operands(&ld) && grow_ctl(&ld))
		ld.declared = ld_alloc(&ld, 1);
	if (!ld.st)
		ld_sections(&ld, len);
	ld_free_scratch(&ld);
	if (!ld.st && opts->copy_bytes)
		own_bytes(&ld);
	if (!ld.st && ld.ncode) {
		/* shrink code and source map to their exact size */
		uint32_t *c =
		    k32_realloc(alloc, ld.code, (size_t)ld.code_cap * 4, (size_t)ld.ncode * 4);
		if (c) {
			ld.code = c;
			ld.code_cap = ld.ncode;
		}
	}
	m->code = ld.code;
	m->code_words = ld.code_cap;
	m->bytes += (size_t)ld.code_cap * 4;
	if (!ld.st && ld.nsm)
		pack_srcmap(&ld);
	k32_free(alloc, ld.sm, (size_t)ld.sm_cap * sizeof(*ld.sm));
	if (ld.st) {
		wrt_module_free(m);
		return ld.st;
	}
	*out_mod = m;
	return K32_OK;
}

void wrt_module_free(struct wrt_module *m)
{
	if (!m)
		return;
	struct k32_allocator a = m->alloc;
	k32_free(&a, m->code, (size_t)m->code_words * 4);
	k32_free(&a, m->srcmap, m->srcmap_len);
	struct wrt_chunk *c = m->chunks;
	while (c) {
		struct wrt_chunk *next = c->next;
		k32_free(&a, c, c->len);
		c = next;
	}
	k32_free(&a, m, sizeof(*m));
}

size_t wrt_module_bytes(const struct wrt_module *m)
{
	return m->bytes;
}

void wrt_module_code_size(const struct wrt_module *m, size_t *out_compiled, size_t *out_wasm)
{
	*out_compiled = (size_t)m->code_words * 4;
	*out_wasm = m->wasm_code_bytes;
}
