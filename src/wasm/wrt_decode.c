/*
 * wrt_decode.c - the loader's decoding stage: readers for the binary format (bytes, LEB128,
 * names, value types, limits), constant expressions, and the sections in order. The code
 * section hands each function body to the compiler (wrt_compile.c), which validates and
 * compiles it in the same pass.
 */
#include "wasm/wrt_ld.h"

#include <stdio.h>
#include <string.h>

/* ---- readers --------------------------------------------------------------------------- */

uint8_t wrt_ld_rd_u8(struct wrt_ld *ld)
{
	if (ld->st)
		return 0;
	if (ld->pos >= ld->end) {
		wrt_ld_malformed(ld, ld->pos, "unexpected end of section or function");
		return 0;
	}
	return ld->b[ld->pos++];
}

uint64_t wrt_ld_rd_leb(struct wrt_ld *ld, unsigned bits, bool sign)
{
	uint64_t r = 0;
	unsigned shift = 0, maxb = (bits + 6) / 7;
	uint8_t byte = 0;
	for (unsigned i = 0; i < maxb; i++) {
		if (ld->st)
			return 0;
		if (ld->pos >= ld->end) {
			wrt_ld_malformed(ld, ld->pos,
					 "unexpected end (LEB128 integer runs past the end)");
			return 0;
		}
		byte = ld->b[ld->pos++];
		if (i == maxb - 1) {
			unsigned used = bits - 7 * i;
			uint8_t mask = (uint8_t)((0x7Fu >> used) << used);
			if (byte & 0x80) {
				wrt_ld_malformed(ld, ld->pos - 1,
						 "integer representation too long");
				return 0;
			}
			if (!sign && (byte & mask)) {
				wrt_ld_malformed(ld, ld->pos - 1, "integer too large");
				return 0;
			}
			if (sign) {
				bool neg = (byte >> (used - 1)) & 1;
				if ((byte & mask) != (neg ? mask : 0)) {
					wrt_ld_malformed(ld, ld->pos - 1, "integer too large");
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

uint32_t wrt_ld_rd_u32(struct wrt_ld *ld)
{
	return (uint32_t)wrt_ld_rd_leb(ld, 32, false);
}

/* A vector count: each element takes at least one byte, so it cannot exceed what is left. */
uint32_t wrt_ld_rd_count(struct wrt_ld *ld, uint32_t limit, const char *limit_name)
{
	size_t off = ld->pos;
	uint32_t n = wrt_ld_rd_u32(ld);
	if (ld->st)
		return 0;
	if (n > ld->end - ld->pos) {
		wrt_ld_malformed(ld, off,
				 "length out of bounds (vector count larger than its section)");
		return 0;
	}
	if (n > limit) {
		wrt_ld_limit_hit(ld, off, "too many entries", limit_name);
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
	uint32_t n = wrt_ld_rd_u32(ld);
	*out_len = 0;
	if (ld->st)
		return "";
	if (n > ld->end - ld->pos) {
		wrt_ld_malformed(ld, off, "unexpected end (name length out of bounds)");
		return "";
	}
	const char *s = (const char *)ld->b + ld->pos;
	if (!utf8_valid(ld->b + ld->pos, n)) {
		wrt_ld_malformed(ld, off, "malformed UTF-8 encoding");
		return "";
	}
	ld->pos += n;
	*out_len = n;
	return s;
}

bool wrt_ld_is_numtype(uint8_t t)
{
	return t == WRT_I32 || t == WRT_I64 || t == WRT_F32 || t == WRT_F64;
}

bool wrt_ld_is_reftype(uint8_t t)
{
	return t == WRT_FUNCREF || t == WRT_EXTERNREF;
}

uint8_t wrt_ld_rd_valtype(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	uint8_t t = wrt_ld_rd_u8(ld);
	if (ld->st)
		return 0;
	if (t == 0x7B) {
		wrt_ld_fail(ld, K32_ERR_NOT_SUPPORTED, off, "v128 (SIMD) is not supported",
			    "build the pod without -msimd128");
		return 0;
	}
	if (!wrt_ld_is_numtype(t) && !wrt_ld_is_reftype(t)) {
		wrt_ld_malformed(ld, off, "malformed value type");
		return 0;
	}
	return t;
}

uint8_t wrt_ld_rd_reftype(struct wrt_ld *ld)
{
	size_t off = ld->pos;
	uint8_t t = wrt_ld_rd_u8(ld);
	if (!ld->st && !wrt_ld_is_reftype(t))
		wrt_ld_malformed(ld, off, "malformed reference type");
	return t;
}

static void rd_limits(struct wrt_ld *ld, struct wrt_limits_decl *l, uint32_t max_allowed,
		      const char *what)
{
	size_t off = ld->pos;
	uint8_t flags = wrt_ld_rd_u8(ld);
	if (ld->st)
		return;
	if (flags > 1) {
		wrt_ld_malformed(ld, off, "integer too large (limits flags must be 0 or 1)");
		return;
	}
	l->min = wrt_ld_rd_u32(ld);
	l->has_max = flags == 1;
	l->max = l->has_max ? wrt_ld_rd_u32(ld) : WRT_NO_INDEX;
	if (ld->st)
		return;
	if (l->min > max_allowed || (l->has_max && l->max > max_allowed)) {
		wrt_ld_invalid(ld, off, what);
		return;
	}
	if (l->has_max && l->min > l->max)
		wrt_ld_invalid(ld, off, "size minimum must not be greater than maximum");
}

/* ---- constant expressions ------------------------------------------------------------ */

static void rd_const(struct wrt_ld *ld, struct wrt_global_decl *g, uint8_t type,
		     uint32_t nglobals_visible)
{
	struct wrt_module *m = ld->m;
	size_t off = ld->pos;
	uint8_t op = wrt_ld_rd_u8(ld);
	uint8_t got = 0;
	g->op = op;
	switch (op) {
	case 0x41:
		g->imm = (uint32_t)wrt_ld_rd_leb(ld, 32, true);
		got = WRT_I32;
		break;
	case 0x42:
		g->imm = wrt_ld_rd_leb(ld, 64, true);
		got = WRT_I64;
		break;
	case 0x43:
		for (int i = 0; i < 4; i++)
			g->imm |= (uint64_t)wrt_ld_rd_u8(ld) << (8 * i);
		got = WRT_F32;
		break;
	case 0x44:
		for (int i = 0; i < 8; i++)
			g->imm |= (uint64_t)wrt_ld_rd_u8(ld) << (8 * i);
		got = WRT_F64;
		break;
	case 0x23: {
		uint32_t x = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (x >= nglobals_visible) {
			wrt_ld_invalid(ld, off, "unknown global");
			return;
		}
		if (m->globals[x].mut) {
			wrt_ld_invalid(
			    ld, off,
			    "constant expression required (global.get of a mutable global)");
			return;
		}
		g->imm = x;
		got = m->globals[x].type;
		break;
	}
	case 0xD0:
		got = wrt_ld_rd_reftype(ld);
		break;
	case 0xD2: {
		uint32_t x = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (x >= m->nfuncs) {
			wrt_ld_invalid(ld, off, "unknown function");
			return;
		}
		ld->declared[x / 8] |= (uint8_t)(1u << (x % 8));
		g->imm = x;
		got = WRT_FUNCREF;
		break;
	}
	default:
		if (!ld->st)
			wrt_ld_invalid(ld, off, "constant expression required");
		return;
	}
	size_t eoff = ld->pos;
	uint8_t e = wrt_ld_rd_u8(ld);
	if (ld->st)
		return;
	if (e != 0x0B) {
		if (eoff >= ld->end)
			wrt_ld_malformed(ld, eoff, "unexpected end");
		else
			wrt_ld_invalid(ld, eoff,
				       "constant expression required (one instruction, then end)");
		return;
	}
	if (got != type)
		wrt_ld_invalid(ld, off, "type mismatch (constant expression)");
}

/* ---- sections -------------------------------------------------------------------------- */

static void sec_types(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_TYPES, "K32_WASM_MAX_TYPES");
	m->types = wrt_ld_alloc(ld, (size_t)n * sizeof(*m->types));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		if (wrt_ld_rd_u8(ld) != 0x60) {
			wrt_ld_malformed(
			    ld, off,
			    "integer representation too long (function type must start with 0x60)");
			return;
		}
		uint32_t np = wrt_ld_rd_count(ld, K32_WASM_MAX_PARAMS, "K32_WASM_MAX_PARAMS");
		size_t ppos = ld->pos;
		for (uint32_t k = 0; k < np; k++)
			wrt_ld_rd_valtype(ld);
		uint32_t nr = wrt_ld_rd_count(ld, K32_WASM_MAX_PARAMS, "K32_WASM_MAX_PARAMS");
		size_t rpos = ld->pos;
		for (uint32_t k = 0; k < nr; k++)
			wrt_ld_rd_valtype(ld);
		uint8_t *t = wrt_ld_alloc(ld, np + nr);
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
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->imports = wrt_ld_alloc(ld, (size_t)n * sizeof(*m->imports));
	/* Count first so the per-kind arrays are allocated once. */
	size_t save = ld->pos;
	uint32_t counts[4] = {0, 0, 0, 0};
	for (int pass = 0; pass < 2 && !ld->st; pass++) {
		ld->pos = save;
		if (pass == 1) {
			m->funcs = wrt_ld_alloc(ld, (size_t)counts[0] * sizeof(*m->funcs));
			m->tables = wrt_ld_alloc(ld, (size_t)counts[1] * sizeof(*m->tables));
			m->globals = wrt_ld_alloc(ld, (size_t)counts[3] * sizeof(*m->globals));
		}
		for (uint32_t i = 0; i < n && !ld->st; i++) {
			struct wrt_import *im = &m->imports[i];
			im->module = rd_name(ld, &im->module_len);
			im->name = rd_name(ld, &im->name_len);
			size_t off = ld->pos;
			im->kind = wrt_ld_rd_u8(ld);
			if (ld->st)
				return;
			switch (im->kind) {
			case WRT_EXTERN_FUNC: {
				uint32_t t = wrt_ld_rd_u32(ld);
				if (!ld->st && t >= m->ntypes)
					wrt_ld_invalid(ld, off, "unknown type");
				if (pass == 1) {
					im->index = m->nfuncs++;
					m->funcs[im->index].type = t;
					m->funcs[im->index].code_off = WRT_NO_INDEX;
				}
				break;
			}
			case WRT_EXTERN_TABLE: {
				struct wrt_table_decl td;
				td.type = wrt_ld_rd_reftype(ld);
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
						wrt_ld_invalid(ld, off, "multiple memories");
						return;
					}
					im->index = m->nmems++;
					m->mem = l;
				}
				break;
			}
			case WRT_EXTERN_GLOBAL: {
				uint8_t t = wrt_ld_rd_valtype(ld);
				size_t moff = ld->pos;
				uint8_t mut = wrt_ld_rd_u8(ld);
				if (!ld->st && mut > 1)
					wrt_ld_malformed(ld, moff, "malformed mutability");
				if (pass == 1) {
					im->index = m->nglobals++;
					m->globals[im->index].type = t;
					m->globals[im->index].mut = mut == 1;
				}
				break;
			}
			default:
				wrt_ld_malformed(ld, off, "malformed import kind");
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
	void *p = wrt_ld_alloc(ld, elem * ((size_t)old_n + add));
	if (!p)
		return;
	if (old_n)
		memcpy(p, *arr, elem * old_n);
	*arr = p; /* the old block stays in the chunk until the module is freed */
}

static void sec_funcs(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_FUNCS, "K32_WASM_MAX_FUNCS");
	if ((uint64_t)n + m->nfuncs > K32_WASM_MAX_FUNCS) {
		wrt_ld_limit_hit(ld, ld->pos, "too many functions", "K32_WASM_MAX_FUNCS");
		return;
	}
	grow_array(ld, (void **)&m->funcs, sizeof(*m->funcs), m->nfuncs, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		uint32_t t = wrt_ld_rd_u32(ld);
		if (!ld->st && t >= m->ntypes)
			wrt_ld_invalid(ld, off, "unknown type");
		m->funcs[m->nfuncs].type = t;
		m->funcs[m->nfuncs].code_off = WRT_NO_INDEX;
		m->nfuncs++;
	}
}

static void sec_tables(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	grow_array(ld, (void **)&m->tables, sizeof(*m->tables), m->ntables, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_table_decl *td = &m->tables[m->ntables];
		td->type = wrt_ld_rd_reftype(ld);
		rd_limits(ld, &td->lim, 0xFFFFFFFFu, "table size");
		m->ntables++;
	}
}

static void sec_mems(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		struct wrt_limits_decl l;
		rd_limits(ld, &l, WRT_MAX_PAGES, "memory size must be at most 65536 pages (4GiB)");
		if (ld->st)
			return;
		if (m->nmems) {
			wrt_ld_invalid(ld, off, "multiple memories");
			return;
		}
		m->mem = l;
		m->nmems++;
	}
}

static void sec_globals(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	grow_array(ld, (void **)&m->globals, sizeof(*m->globals), m->nglobals, n);
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_global_decl *g = &m->globals[m->nglobals];
		g->type = wrt_ld_rd_valtype(ld);
		size_t moff = ld->pos;
		uint8_t mut = wrt_ld_rd_u8(ld);
		if (!ld->st && mut > 1) {
			wrt_ld_malformed(ld, moff, "malformed mutability");
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
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->exports = wrt_ld_alloc(ld, (size_t)n * sizeof(*m->exports));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_export *e = &m->exports[i];
		size_t noff = ld->pos;
		e->name = rd_name(ld, &e->name_len);
		size_t off = ld->pos;
		e->kind = wrt_ld_rd_u8(ld);
		e->index = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		uint32_t lim[4] = {m->nfuncs, m->ntables, m->nmems, m->nglobals};
		static const char *const unknown[4] = {"unknown function", "unknown table",
						       "unknown memory", "unknown global"};
		if (e->kind > 3) {
			wrt_ld_malformed(ld, off, "malformed export kind");
			return;
		}
		if (e->index >= lim[e->kind]) {
			wrt_ld_invalid(ld, off, unknown[e->kind]);
			return;
		}
		if (e->kind == WRT_EXTERN_FUNC)
			ld->declared[e->index / 8] |= (uint8_t)(1u << (e->index % 8));
		for (uint32_t j = 0; j < i; j++) {
			if (m->exports[j].name_len == e->name_len &&
			    !memcmp(m->exports[j].name, e->name, e->name_len)) {
				wrt_ld_invalid(ld, noff, "duplicate export name");
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
	m->start = wrt_ld_rd_u32(ld);
	if (ld->st)
		return;
	if (m->start >= m->nfuncs) {
		wrt_ld_invalid(ld, off, "unknown function (start)");
		return;
	}
	const struct wrt_functype *ft = &m->types[m->funcs[m->start].type];
	if (ft->nparams || ft->nresults)
		wrt_ld_invalid(ld, off, "start function must take and return nothing");
}

static void sec_elems(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	m->elems = wrt_ld_alloc(ld, (size_t)n * sizeof(*m->elems));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_elem *e = &m->elems[i];
		size_t off = ld->pos;
		uint32_t flags = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (flags > 7) {
			wrt_ld_malformed(ld, off, "malformed elements segment kind");
			return;
		}
		e->mode = (flags & 1) ? ((flags & 2) ? 2 : 1) : 0;
		e->type = WRT_FUNCREF;
		e->table = 0;
		if (e->mode == 0) {
			if (flags & 2)
				e->table = wrt_ld_rd_u32(ld);
			if (!ld->st && e->table >= m->ntables) {
				wrt_ld_invalid(ld, off, "unknown table");
				return;
			}
			rd_const(ld, &e->offset, WRT_I32, m->nglobal_imports);
		}
		bool exprs = flags & 4;
		if (flags & 3) {
			size_t koff = ld->pos;
			if (exprs) {
				e->type = wrt_ld_rd_reftype(ld);
			} else if (wrt_ld_rd_u8(ld) != 0x00 && !ld->st) {
				wrt_ld_malformed(ld, koff, "malformed element kind");
				return;
			}
		}
		e->count = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES * 10u, "K32_WASM_MAX_ENTRIES");
		e->items = wrt_ld_alloc(ld, (size_t)e->count * sizeof(*e->items));
		for (uint32_t k = 0; k < e->count && !ld->st; k++) {
			if (exprs) {
				rd_const(ld, &e->items[k], e->type, m->nglobal_imports);
				continue;
			}
			size_t xoff = ld->pos;
			uint32_t x = wrt_ld_rd_u32(ld);
			if (!ld->st && x >= m->nfuncs) {
				wrt_ld_invalid(ld, xoff, "unknown function");
				return;
			}
			ld->declared[x / 8] |= (uint8_t)(1u << (x % 8));
			e->items[k].op = 0xD2;
			e->items[k].imm = x;
		}
		if (!ld->st && e->mode == 0 && m->tables[e->table].type != e->type)
			wrt_ld_invalid(ld, off,
				       "type mismatch (element type differs from table type)");
		m->nelems = i + 1;
	}
}

static void sec_datacount(struct wrt_ld *ld)
{
	ld->datacount = wrt_ld_rd_u32(ld);
	ld->m->has_datacount = true;
}

static void sec_datas(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t coff = ld->pos;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_ENTRIES, "K32_WASM_MAX_ENTRIES");
	if (!ld->st && m->has_datacount && n != ld->datacount) {
		wrt_ld_malformed(ld, coff, "data count and data section have inconsistent lengths");
		return;
	}
	m->datas = wrt_ld_alloc(ld, (size_t)n * sizeof(*m->datas));
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		struct wrt_data *d = &m->datas[i];
		size_t off = ld->pos;
		uint32_t flags = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (flags > 2) {
			wrt_ld_malformed(ld, off, "malformed data segment kind");
			return;
		}
		d->mode = flags == 1 ? 1 : 0;
		if (flags != 1) {
			uint32_t mi = flags == 2 ? wrt_ld_rd_u32(ld) : 0;
			if (!ld->st && mi >= m->nmems) {
				wrt_ld_invalid(ld, off, "unknown memory");
				return;
			}
			rd_const(ld, &d->offset, WRT_I32, m->nglobal_imports);
		}
		size_t loff = ld->pos;
		uint32_t len = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (len > ld->end - ld->pos) {
			wrt_ld_malformed(ld, loff,
					 "unexpected end of section or function (data length)");
			return;
		}
		d->bytes = ld->b + ld->pos;
		d->len = len;
		ld->pos += len;
		m->ndatas = i + 1;
	}
}

static void sec_code(struct wrt_ld *ld)
{
	struct wrt_module *m = ld->m;
	size_t coff = ld->pos;
	uint32_t n = wrt_ld_rd_count(ld, K32_WASM_MAX_FUNCS, "K32_WASM_MAX_FUNCS");
	if (ld->st)
		return;
	if (n != m->nfuncs - m->nfunc_imports) {
		wrt_ld_malformed(ld, coff, "function and code section have inconsistent lengths");
		return;
	}
	size_t sec_end = ld->end;
	for (uint32_t i = 0; i < n && !ld->st; i++) {
		size_t off = ld->pos;
		uint32_t len = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (len > sec_end - ld->pos) {
			wrt_ld_malformed(ld, off,
					 "unexpected end of section or function (body size)");
			return;
		}
		struct wrt_func *f = &m->funcs[m->nfunc_imports + i];
		f->wasm_off = (uint32_t)ld->pos;
		ld->end = ld->pos + len;
		m->wasm_code_bytes += len;
		wrt_ld_compile_func(ld, f, ld->end);
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
		uint8_t id = wrt_ld_rd_u8(&sub);
		uint32_t len = wrt_ld_rd_u32(&sub);
		if (sub.st || len > end - sub.pos)
			return;
		size_t next = sub.pos + len;
		if (id == 1) {
			size_t save_end = sub.end;
			sub.end = next;
			uint32_t n = wrt_ld_rd_u32(&sub);
			for (uint32_t i = 0; i < n && !sub.st; i++) {
				uint32_t idx = wrt_ld_rd_u32(&sub);
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

void wrt_ld_sections(struct wrt_ld *ld, size_t len)
{
	struct wrt_module *m = ld->m;
	static const uint8_t hdr[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	size_t names_start = 0, names_end = 0;
	if (len < 4 || memcmp(ld->b, hdr, 4)) {
		wrt_ld_malformed(ld, 0, "magic header not detected");
		return;
	}
	if (len < 8 || memcmp(ld->b + 4, hdr + 4, 4)) {
		wrt_ld_malformed(ld, 4, "unknown binary version");
		return;
	}
	ld->pos = 8;
	int last = 0;
	bool have_funcs = false, have_code = false;
	while (ld->pos < len && !ld->st) {
		size_t off = ld->pos;
		ld->end = len;
		uint8_t id = wrt_ld_rd_u8(ld);
		uint32_t slen = wrt_ld_rd_u32(ld);
		if (ld->st)
			return;
		if (id > 12) {
			wrt_ld_malformed(ld, off, "malformed section id");
			return;
		}
		if (slen > len - ld->pos) {
			wrt_ld_malformed(ld, off, "section size mismatch (length out of bounds)");
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
			wrt_ld_malformed(
			    ld, off,
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
				wrt_ld_malformed(
				    ld, off, "function and code section have inconsistent lengths");
				return;
			}
			sec_datas(ld);
			break;
		case 12:
			sec_datacount(ld);
			break;
		}
		if (!ld->st && ld->pos != send)
			wrt_ld_malformed(ld, ld->pos, "section size mismatch");
		/* declared[] (ref.func targets) is sized once the function count is known */
		if ((id == 2 || id == 3) && !ld->st)
			ld->declared = wrt_ld_alloc(ld, m->nfuncs / 8 + 1);
	}
	(void)have_funcs;
	if (ld->st)
		return;
	if (!have_code && m->nfuncs > m->nfunc_imports) {
		wrt_ld_malformed(ld, len, "function and code section have inconsistent lengths");
		return;
	}
	if (m->has_datacount && ld->datacount != m->ndatas) {
		wrt_ld_malformed(ld, len, "data count and data section have inconsistent lengths");
		return;
	}
	if (names_end)
		sec_names(ld, names_start, names_end);
}
