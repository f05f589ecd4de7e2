/*
 * wrt_inst.c - linking, instantiation, invocation and accounting.
 *
 * An instance is one allocation for its fixed structures (function, table and global index
 * spaces, own function instances, segment state) plus one each for linear memory, every
 * table, every element segment's references, the value stack, the frame stack and the op
 * counters. All come from the allocator the embedder passes, and all sizes are checked
 * against struct wrt_limits before allocating.
 *
 * Imported memories, tables, globals and functions are referenced, not copied: the
 * exporting instance must outlive the importer (the spec runner and the kubelet keep them
 * in creation order).
 *
 * Context: one thread per instance at a time.
 */
#include "wasm/wrt_int.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#if defined(WRT_DEFAULT_SWITCH)
k32_status_t (*const wrt_exec_default)(struct wrt_instance *, const struct wrt_funcinst *,
				       wrt_slot *, struct k32_err *) = wrt_exec_switch;
#else
k32_status_t (*const wrt_exec_default)(struct wrt_instance *, const struct wrt_funcinst *,
				       wrt_slot *, struct k32_err *) = wrt_exec_goto;
#endif

bool wrt_functype_eq(const struct wrt_functype *a, const struct wrt_functype *b)
{
	return a->nparams == b->nparams && a->nresults == b->nresults &&
	       !memcmp(a->types, b->types, a->nparams + a->nresults);
}

void wrt_func_label(const struct wrt_funcinst *fn, char *buf, size_t len)
{
	const struct wrt_module *m = fn->inst->mod;
	if (fn->func && fn->func->name) {
		/* a name too long for buf keeps its start and end around "...", never a cut */
		size_t n = fn->func->name_len, keep = len > 12 ? len - 1 - 2 - 3 : 0;
		if (n + 3 <= len || !keep)
			snprintf(buf, len, "'%.*s'", (int)n, fn->func->name);
		else
			snprintf(buf, len, "'%.*s...%.*s'", (int)(keep - keep / 3), fn->func->name,
				 (int)(keep / 3), fn->func->name + n - keep / 3);
		return;
	}
	for (uint32_t i = 0; fn->func && i < m->nexports; i++) { /* no name section: an export */
		const struct wrt_export *e = &m->exports[i];
		if (e->kind == WRT_EXTERN_FUNC && e->index == fn->index) {
			snprintf(buf, len, "func[%" PRIu32 "] '%.*s'", fn->index,
				 (int)(e->name_len > 32 ? 32 : e->name_len), e->name);
			return;
		}
	}
	if (fn->host)
		snprintf(buf, len, "host %s.%s", fn->host->module, fn->host->name);
	else
		snprintf(buf, len, "func[%" PRIu32 "]", fn->index);
}

/* One zigzag LEB128 delta of the packed source map (wrt_load.c writes them). */
static int64_t srcmap_delta(const uint8_t *p, uint32_t len, uint32_t *pos)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (*pos < len && shift < 64) {
		uint8_t b = p[(*pos)++];
		v |= (uint64_t)(b & 0x7Fu) << shift;
		shift += 7;
		if (!(b & 0x80u))
			break;
	}
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* The source map is packed as (code word, wasm offset) pairs, each a zigzag LEB128 delta
 * from the previous pair: 2-3 bytes an entry instead of 8. Only traps read it, once. */
uint32_t wrt_srcmap_find(const struct wrt_module *m, uint32_t code_word)
{
	int64_t code = 0, wasm = 0, best_code = -1;
	uint32_t pos = 0, best = 0;
	while (pos < m->srcmap_len) {
		code += srcmap_delta(m->srcmap, m->srcmap_len, &pos);
		wasm += srcmap_delta(m->srcmap, m->srcmap_len, &pos);
		if (code <= (int64_t)code_word && code >= best_code) {
			best_code = code;
			best = (uint32_t)wasm;
		}
	}
	return best;
}

k32_status_t wrt_memory_grow(struct wrt_memory *mem, uint32_t delta, uint32_t *out_old)
{
	uint32_t old = mem->pages;
	if ((uint64_t)old + delta > mem->max_pages)
		return K32_ERR_NO_RESOURCES;
	uint32_t pages = old + delta;
	uint64_t len = (uint64_t)pages * WRT_PAGE;
	if (len > mem->limit)
		len = mem->limit;
	if (len > mem->alloc_len) {
		if (len > SIZE_MAX)
			return K32_ERR_NO_RESOURCES;
		uint8_t *p =
		    k32_realloc(&mem->alloc, mem->data, (size_t)mem->alloc_len, (size_t)len);
		if (!p)
			return K32_ERR_NO_MEMORY;
		memset(p + mem->alloc_len, 0, (size_t)(len - mem->alloc_len));
		mem->data = p;
		mem->alloc_len = len;
	}
	mem->len = len;
	mem->pages = pages;
	*out_old = old;
	return K32_OK;
}

k32_status_t wrt_table_grow(struct wrt_table *tab, uint32_t delta, uint64_t init, uint32_t *out_old)
{
	uint32_t old = tab->size;
	if ((uint64_t)old + delta > tab->max)
		return K32_ERR_NO_RESOURCES;
	uint32_t n = old + delta;
	if (delta) {
		uint64_t *p = k32_realloc(&tab->alloc, tab->elems, (size_t)old * 8, (size_t)n * 8);
		if (!p)
			return K32_ERR_NO_MEMORY;
		tab->elems = p;
	}
	for (uint32_t i = old; i < n; i++)
		tab->elems[i] = init;
	tab->size = n;
	*out_old = old;
	return K32_OK;
}

k32_status_t wrt_host_failed(const struct wrt_funcinst *fn, k32_status_t st, struct k32_err *err)
{
	/* a wait the embedder's watch cut short (struct wrt_watch): the call ends with that
	 * status and the host's message, not as a trap */
	if ((st == K32_ERR_CANCELED || st == K32_ERR_TIMED_OUT) && err && err->status == st)
		return st;
	if (st != K32_ERR_TRAP || !err || err->status != K32_ERR_TRAP)
		k32_err_set(err, K32_ERR_TRAP, "wasm", "host function %s.%s failed: %s",
			    K32_CLIP(fn->host->module), K32_CLIP(fn->host->name),
			    k32_status_name(st));
	return K32_ERR_TRAP;
}

k32_status_t wrt_call_host(struct wrt_instance *inst, const struct wrt_funcinst *fn, wrt_slot *args,
			   struct k32_err *err)
{
	uint64_t res[K32_WASM_MAX_HOST_RESULTS];
	struct k32_hostcall call;
	call.ctx = fn->host->ctx;
	call.instance_user = inst->user;
	call.mem = inst->mem ? inst->mem->data : NULL;
	call.mem_len = inst->mem ? inst->mem->len : 0;
	call.args = args;
	call.results = res;
	call.err = err;
	k32_status_t st = fn->host->fn(&call);
	if (st != K32_OK)
		return wrt_host_failed(fn, st, err);
	memcpy(args, res, (size_t)fn->type->nresults * 8);
	return K32_OK;
}

/* ---- linker ---------------------------------------------------------------------------- */

void wrt_linker_init(struct wrt_linker *lk)
{
	memset(lk, 0, sizeof(*lk));
}

k32_status_t wrt_linker_add_host(struct wrt_linker *lk, const struct k32_hostfn_def *defs,
				 size_t count, struct k32_err *err)
{
	if (lk->nhost >= K32_WASM_LINKER_HOST_TABLES)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "wasm",
				   "linker holds %u host tables already "
				   "(K32_WASM_LINKER_HOST_TABLES); merge tables",
				   K32_WASM_LINKER_HOST_TABLES);
	lk->host[lk->nhost] = defs;
	lk->host_count[lk->nhost] = count;
	lk->nhost++;
	return K32_OK;
}

k32_status_t wrt_linker_add_instance(struct wrt_linker *lk, const char *name,
				     struct wrt_instance *inst, struct k32_err *err)
{
	if (lk->ninst >= K32_WASM_LINKER_INSTANCES)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "wasm",
				   "linker holds %u instances already (K32_WASM_LINKER_INSTANCES)",
				   K32_WASM_LINKER_INSTANCES);
	lk->inst_name[lk->ninst] = name;
	lk->inst[lk->ninst] = inst;
	lk->ninst++;
	return K32_OK;
}

static bool name_eq(const char *s, const char *p, uint32_t len)
{
	return strlen(s) == len && !memcmp(s, p, len);
}

static uint8_t sig_letter_type(char c)
{
	switch (c) {
	case 'i':
		return WRT_I32;
	case 'I':
		return WRT_I64;
	case 'f':
		return WRT_F32;
	case 'F':
		return WRT_F64;
	default:
		return 0;
	}
}

/* Whether a host signature string ("ii:i") equals a function type. */
static bool sig_matches(const char *sig, const struct wrt_functype *ft)
{
	const char *colon = strchr(sig, ':');
	if (!colon)
		return false;
	size_t np = (size_t)(colon - sig), nr = strlen(colon + 1);
	if (np != ft->nparams || nr != ft->nresults)
		return false;
	for (size_t i = 0; i < np; i++)
		if (sig_letter_type(sig[i]) != ft->types[i])
			return false;
	for (size_t i = 0; i < nr; i++)
		if (sig_letter_type(colon[1 + i]) != ft->types[np + i])
			return false;
	return true;
}

static const struct wrt_export *find_export(const struct wrt_module *m, const char *name,
					    uint32_t len)
{
	for (uint32_t i = 0; i < m->nexports; i++) {
		const struct wrt_export *e = &m->exports[i];
		if (e->name_len == len && !memcmp(e->name, name, len))
			return e;
	}
	return NULL;
}

static bool limits_match(uint32_t have_min, uint32_t have_max, bool have_has_max,
			 const struct wrt_limits_decl *want)
{
	if (have_min < want->min)
		return false;
	if (want->has_max && (!have_has_max || have_max > want->max))
		return false;
	return true;
}

static k32_status_t link_import(struct wrt_instance *inst, const struct wrt_linker *lk,
				const struct wrt_import *im, struct wrt_funcinst *host_slot,
				struct k32_err *err)
{
	const struct wrt_module *m = inst->mod;
	/* host functions */
	for (uint32_t t = 0; lk && t < lk->nhost; t++) {
		for (size_t i = 0; i < lk->host_count[t]; i++) {
			const struct k32_hostfn_def *d = &lk->host[t][i];
			if (!name_eq(d->module, im->module, im->module_len) ||
			    !name_eq(d->name, im->name, im->name_len))
				continue;
			if (im->kind != WRT_EXTERN_FUNC)
				goto incompatible;
			const struct wrt_functype *ft =
			    &m->types[m->types[m->funcs[im->index].type].canon];
			if (!sig_matches(d->sig, ft) || ft->nresults > K32_WASM_MAX_HOST_RESULTS)
				goto incompatible;
			host_slot->type = ft;
			host_slot->inst = inst;
			host_slot->host = d;
			host_slot->index = im->index;
			host_slot->nparams = ft->nparams;
			inst->funcs[im->index] = host_slot;
			return K32_OK;
		}
	}
	/* exports of named instances; later entries shadow earlier ones */
	for (uint32_t k = lk ? lk->ninst : 0; k > 0; k--) {
		struct wrt_instance *src = lk->inst[k - 1];
		if (!name_eq(lk->inst_name[k - 1], im->module, im->module_len))
			continue;
		const struct wrt_export *e = find_export(src->mod, im->name, im->name_len);
		if (!e)
			break;
		if (e->kind != im->kind)
			goto incompatible;
		switch (im->kind) {
		case WRT_EXTERN_FUNC: {
			struct wrt_funcinst *f = src->funcs[e->index];
			if (!wrt_functype_eq(f->type, &m->types[m->funcs[im->index].type]))
				goto incompatible;
			inst->funcs[im->index] = f;
			return K32_OK;
		}
		case WRT_EXTERN_TABLE: {
			struct wrt_table *t = src->tables[e->index];
			const struct wrt_table_decl *want = &m->tables[im->index];
			const struct wrt_table_decl *decl =
			    &src->mod->tables[e->index < src->mod->ntables ? e->index : 0];
			bool has_max = decl->lim.has_max;
			if (t->type != want->type ||
			    !limits_match(t->size, decl->lim.max, has_max, &want->lim))
				goto incompatible;
			inst->tables[im->index] = t;
			return K32_OK;
		}
		case WRT_EXTERN_MEMORY: {
			struct wrt_memory *mem = src->mem;
			const struct wrt_limits_decl *decl = &src->mod->mem;
			if (!limits_match(mem->pages, decl->max, decl->has_max, &m->mem))
				goto incompatible;
			inst->mem = mem;
			return K32_OK;
		}
		case WRT_EXTERN_GLOBAL: {
			struct wrt_global *g = src->globals[e->index];
			const struct wrt_global_decl *want = &m->globals[im->index];
			if (g->type != want->type || g->mut != want->mut)
				goto incompatible;
			inst->globals[im->index] = g;
			return K32_OK;
		}
		}
	}
	/* the module's names clipped (k32_clip_mem): the advice after them stays whole */
	return k32_err_set(
	    err, K32_ERR_NOT_FOUND, "wasm",
	    "unknown import %s.%s: no host function or instance export of that "
	    "name; link it before instantiating",
	    k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, im->module, im->module_len),
	    k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, im->name, im->name_len));
incompatible:
	return k32_err_set(
	    err, K32_ERR_WRONG_TYPE, "wasm",
	    "incompatible import type for %s.%s (kind, signature, limits or mutability differ)",
	    k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, im->module, im->module_len),
	    k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, im->name, im->name_len));
}

/* ---- instantiation --------------------------------------------------------------------- */

void wrt_limits_default(struct wrt_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->mem_bytes = K32_WASM_DEFAULT_MEM_BYTES;
	lim->stack_bytes = K32_WASM_DEFAULT_STACK_BYTES;
	lim->frames = K32_WASM_DEFAULT_FRAMES;
	lim->table_elems = K32_WASM_DEFAULT_TABLE_ELEMS;
	lim->gas = K32_WASM_DEFAULT_GAS;
	lim->gas_enabled = true;
	lim->canonical_nan = true;
	lim->count_ops = false;
}

/* Sizes of the instance's fixed block, in order. */
struct wrt_layout {
	size_t funcs, own_funcs, tables, own_tables, globals, own_globals, elem_items, elem_dropped,
	    data_dropped, total;
};

static size_t up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void layout(const struct wrt_module *m, struct wrt_layout *l)
{
	size_t off = up8(sizeof(struct wrt_instance));
	l->funcs = off;
	off += up8((size_t)m->nfuncs * sizeof(void *));
	l->own_funcs = off;
	off += up8((size_t)m->nfuncs * sizeof(struct wrt_funcinst));
	l->tables = off;
	off += up8((size_t)m->ntables * sizeof(void *));
	l->own_tables = off;
	off += up8((size_t)m->ntables * sizeof(struct wrt_table));
	l->globals = off;
	off += up8((size_t)m->nglobals * sizeof(void *));
	l->own_globals = off;
	off += up8((size_t)m->nglobals * sizeof(struct wrt_global));
	l->elem_items = off;
	off += up8((size_t)m->nelems * sizeof(uint64_t *));
	l->elem_dropped = off;
	off += up8((size_t)m->nelems);
	l->data_dropped = off;
	off += up8((size_t)m->ndatas);
	l->total = off;
}

static uint64_t const_value(struct wrt_instance *inst, const struct wrt_global_decl *g)
{
	switch (g->op) {
	case 0x23:
		return inst->globals[g->imm]->val;
	case 0xD0:
		return 0;
	case 0xD2:
		return (uint64_t)(uintptr_t)inst->funcs[g->imm];
	default:
		return g->imm;
	}
}

void wrt_instance_free(struct wrt_instance *inst)
{
	if (!inst)
		return;
	const struct wrt_module *m = inst->mod;
	struct k32_allocator a = inst->alloc;
	struct wrt_layout l;
	layout(m, &l);
	if (inst->own_mem.data)
		k32_free(&a, inst->own_mem.data, (size_t)inst->own_mem.alloc_len);
	for (uint32_t i = m->ntable_imports; i < m->ntables; i++) {
		struct wrt_table *t = &inst->own_tables[i];
		k32_free(&a, t->elems, (size_t)t->size * 8);
	}
	for (uint32_t i = 0; i < m->nelems; i++)
		k32_free(&a, inst->elem_items[i], (size_t)m->elems[i].count * 8);
	k32_free(&a, inst->stack, (size_t)inst->stack_slots * sizeof(wrt_slot));
	k32_free(&a, inst->frames, (size_t)inst->nframes_cap * sizeof(struct wrt_frame));
	k32_free(&a, inst->op_counts, (size_t)WRT_OP__COUNT * 8);
	k32_free(&a, inst, l.total);
}

static k32_status_t oom(struct k32_err *err, const char *what, size_t n)
{
	return k32_err_set(err, K32_ERR_NO_MEMORY, "wasm",
			   "out of memory allocating %s (%zu bytes); raise the pod's memory pool "
			   "(resources.limits.memory)",
			   what, n);
}

static k32_status_t inst_memory(struct wrt_instance *inst, struct k32_err *err)
{
	const struct wrt_module *m = inst->mod;
	uint64_t limit = inst->lim.mem_bytes;
	uint64_t allowed_pages = (limit + WRT_PAGE - 1) / WRT_PAGE;
	if (allowed_pages > WRT_MAX_PAGES)
		allowed_pages = WRT_MAX_PAGES;
	if (m->mem.min > allowed_pages)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "wasm",
				   "module needs %llu bytes of linear memory (%" PRIu32
				   " pages), limit is "
				   "%llu bytes; raise wrt_limits.mem_bytes (a pod: "
				   "resources.limits.memory) or shrink the module",
				   (unsigned long long)m->mem.min * WRT_PAGE, m->mem.min,
				   (unsigned long long)limit);
	struct wrt_memory *mem = &inst->own_mem;
	mem->alloc = inst->alloc;
	mem->limit = limit;
	mem->max_pages =
	    m->mem.has_max && m->mem.max < allowed_pages ? m->mem.max : (uint32_t)allowed_pages;
	mem->pages = m->mem.min;
	uint64_t len = (uint64_t)m->mem.min * WRT_PAGE;
	if (len > limit)
		len = limit;
	if (len) {
		mem->data = k32_alloc(&inst->alloc, (size_t)len);
		if (!mem->data)
			return oom(err, "linear memory", (size_t)len);
		memset(mem->data, 0, (size_t)len);
	}
	mem->len = mem->alloc_len = len;
	inst->mem = mem;
	inst->runtime_bytes += 0;
	return K32_OK;
}

static k32_status_t inst_tables(struct wrt_instance *inst, struct k32_err *err)
{
	const struct wrt_module *m = inst->mod;
	for (uint32_t i = m->ntable_imports; i < m->ntables; i++) {
		const struct wrt_table_decl *d = &m->tables[i];
		struct wrt_table *t = &inst->own_tables[i];
		if (d->lim.min > inst->lim.table_elems)
			return k32_err_set(err, K32_ERR_NO_RESOURCES, "wasm",
					   "table %" PRIu32 " needs %" PRIu32
					   " elements, limit is %" PRIu32
					   "; raise wrt_limits.table_elems "
					   "(K32_WASM_DEFAULT_TABLE_ELEMS)",
					   i, d->lim.min, inst->lim.table_elems);
		t->alloc = inst->alloc;
		t->type = d->type;
		t->max = d->lim.has_max && d->lim.max < inst->lim.table_elems
			     ? d->lim.max
			     : inst->lim.table_elems;
		if (d->lim.min) {
			t->elems = k32_alloc(&inst->alloc, (size_t)d->lim.min * 8);
			if (!t->elems)
				return oom(err, "a table", (size_t)d->lim.min * 8);
			memset(t->elems, 0, (size_t)d->lim.min * 8);
		}
		t->size = d->lim.min;
		inst->tables[i] = t;
	}
	return K32_OK;
}

static k32_status_t inst_segments(struct wrt_instance *inst, struct k32_err *err)
{
	const struct wrt_module *m = inst->mod;
	for (uint32_t i = 0; i < m->nelems; i++) {
		const struct wrt_elem *e = &m->elems[i];
		if (e->count) {
			inst->elem_items[i] = k32_alloc(&inst->alloc, (size_t)e->count * 8);
			if (!inst->elem_items[i])
				return oom(err, "an element segment", (size_t)e->count * 8);
		}
		for (uint32_t k = 0; k < e->count; k++)
			inst->elem_items[i][k] = const_value(inst, &e->items[k]);
		inst->elem_dropped[i] = e->mode == 2;
	}
	for (uint32_t i = 0; i < m->nelems; i++) {
		const struct wrt_elem *e = &m->elems[i];
		if (e->mode != 0)
			continue;
		struct wrt_table *t = inst->tables[e->table];
		uint64_t off = (uint32_t)const_value(inst, &e->offset);
		if (off + e->count > t->size)
			return k32_err_set(err, K32_ERR_TRAP, "wasm",
					   "out of bounds table access: element segment %" PRIu32
					   " writes "
					   "[%llu, %llu) into a table of %" PRIu32,
					   i, (unsigned long long)off,
					   (unsigned long long)(off + e->count), t->size);
		if (e->count)
			memcpy(t->elems + off, inst->elem_items[i], (size_t)e->count * 8);
		inst->elem_dropped[i] = true;
	}
	for (uint32_t i = 0; i < m->ndatas; i++) {
		const struct wrt_data *d = &m->datas[i];
		if (d->mode != 0)
			continue;
		struct wrt_memory *mem = inst->mem;
		uint64_t off = (uint32_t)const_value(inst, &d->offset);
		if (off + d->len > mem->len)
			return k32_err_set(
			    err, K32_ERR_TRAP, "wasm",
			    "out of bounds memory access: data segment %" PRIu32 " writes "
			    "[%llu, %llu), memory is %llu bytes",
			    i, (unsigned long long)off, (unsigned long long)(off + d->len),
			    (unsigned long long)mem->len);
		if (d->len)
			memcpy(mem->data + off, d->bytes, d->len);
		inst->data_dropped[i] = true;
	}
	return K32_OK;
}

static k32_status_t inst_setup(struct wrt_instance *inst, const struct wrt_linker *lk,
			       struct k32_err *err)
{
	const struct wrt_module *m = inst->mod;
	k32_status_t st;
	for (uint32_t i = 0; i < m->nimports; i++) {
		const struct wrt_import *im = &m->imports[i];
		struct wrt_funcinst *slot =
		    im->kind == WRT_EXTERN_FUNC ? &inst->own_funcs[im->index] : NULL;
		st = link_import(inst, lk, im, slot, err);
		if (st)
			return st;
	}
	for (uint32_t i = m->nfunc_imports; i < m->nfuncs; i++) {
		struct wrt_funcinst *f = &inst->own_funcs[i];
		const struct wrt_func *d = &m->funcs[i];
		f->type = &m->types[m->types[d->type].canon];
		f->inst = inst;
		f->func = d;
		f->code = m->code + d->code_off;
		f->index = i;
		f->nparams = f->type->nparams;
		f->nlocals = d->nlocals;
		f->max_slots = d->max_slots;
		f->body = f->code;
		f->entry_gas = d->entry_gas; /* charged by the CALL or wrt_invoke, not an op */
		inst->funcs[i] = f;
	}
	if (m->nmems && !m->nmem_imports) {
		st = inst_memory(inst, err);
		if (st)
			return st;
	}
	st = inst_tables(inst, err);
	if (st)
		return st;
	for (uint32_t i = m->nglobal_imports; i < m->nglobals; i++) {
		struct wrt_global *g = &inst->own_globals[i];
		g->type = m->globals[i].type;
		g->mut = m->globals[i].mut;
		g->val = const_value(inst, &m->globals[i]);
		inst->globals[i] = g;
	}
	size_t slots = inst->lim.stack_bytes / sizeof(wrt_slot);
	inst->stack = k32_alloc(&inst->alloc, slots * sizeof(wrt_slot));
	if (!inst->stack && slots)
		return oom(err, "the value stack", slots * sizeof(wrt_slot));
	inst->stack_slots = (uint32_t)slots;
	inst->frames = k32_alloc(&inst->alloc, (size_t)inst->lim.frames * sizeof(struct wrt_frame));
	if (!inst->frames && inst->lim.frames)
		return oom(err, "the frame stack",
			   (size_t)inst->lim.frames * sizeof(struct wrt_frame));
	inst->nframes_cap = inst->lim.frames;
	if (inst->lim.count_ops && !K32_WASM_COUNT_OPS)
		return k32_err_set(
		    err, K32_ERR_NOT_SUPPORTED, "wasm",
		    "count_ops: this build has no op-counting interpreter "
		    "(K32_WASM_COUNT_OPS=0, a board build); count ops in a host tool");
	if (inst->lim.count_ops) {
		inst->op_counts = k32_alloc(&inst->alloc, (size_t)WRT_OP__COUNT * 8);
		if (!inst->op_counts)
			return oom(err, "op counters", (size_t)WRT_OP__COUNT * 8);
		memset(inst->op_counts, 0, (size_t)WRT_OP__COUNT * 8);
	}
	st = inst_segments(inst, err);
	if (st)
		return st;
	if (m->start != WRT_NO_INDEX) {
		uint64_t none;
		st = wrt_invoke(inst, m->start, NULL, 0, &none, 0, err);
		if (st)
			return st;
	}
	return K32_OK;
}

k32_status_t wrt_instance_new(const struct wrt_module *mod, const struct wrt_linker *lk,
			      const struct wrt_limits *lim, const struct k32_allocator *alloc,
			      void *user, struct wrt_instance **out_inst, struct k32_err *err)
{
	struct wrt_limits dflt;
	struct wrt_layout l;
	*out_inst = NULL;
	if (!mod || !alloc)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "wasm",
				   "wrt_instance_new: NULL module or allocator");
	if (!lim) {
		wrt_limits_default(&dflt);
		lim = &dflt;
	}
	if (lim->watch && !lim->watch->stop)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "wasm",
				   "wrt_instance_new: lim.watch has no stop word");
	layout(mod, &l);
	uint8_t *blk = k32_alloc(alloc, l.total);
	if (!blk)
		return oom(err, "the instance", l.total);
	memset(blk, 0, l.total);
	struct wrt_instance *inst = (struct wrt_instance *)blk;
	inst->mod = mod;
	inst->alloc = *alloc;
	inst->lim = *lim;
	inst->user = user;
	inst->funcs = (struct wrt_funcinst **)(blk + l.funcs);
	inst->own_funcs = (struct wrt_funcinst *)(blk + l.own_funcs);
	inst->tables = (struct wrt_table **)(blk + l.tables);
	inst->own_tables = (struct wrt_table *)(blk + l.own_tables);
	inst->globals = (struct wrt_global **)(blk + l.globals);
	inst->own_globals = (struct wrt_global *)(blk + l.own_globals);
	inst->elem_items = (uint64_t **)(blk + l.elem_items);
	inst->elem_dropped = (bool *)(blk + l.elem_dropped);
	inst->data_dropped = (bool *)(blk + l.data_dropped);
	inst->runtime_bytes = l.total;
	k32_status_t st = inst_setup(inst, lk, err);
	if (st == K32_ERR_TRAP) {
		/* Segments applied before the trap stay applied (spec): shared tables may now
		 * point at this instance's functions, so it is handed back, marked failed. */
		inst->failed = true;
		*out_inst = inst;
		return st;
	}
	if (st) {
		wrt_instance_free(inst);
		return st;
	}
	*out_inst = inst;
	return K32_OK;
}

/* ---- exports and invocation ------------------------------------------------------------ */

k32_status_t wrt_export_find_n(const struct wrt_instance *inst, const char *name, size_t len,
			       uint8_t *out_kind, uint32_t *out_index, struct k32_err *err)
{
	const struct wrt_export *e =
	    len <= UINT32_MAX ? find_export(inst->mod, name, (uint32_t)len) : NULL;
	if (!e)
		return k32_err_set(err, K32_ERR_NOT_FOUND, "wasm", "no export named '%s'",
				   k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, name, len));
	*out_kind = e->kind;
	*out_index = e->index;
	return K32_OK;
}

k32_status_t wrt_export_find(const struct wrt_instance *inst, const char *name, uint8_t *out_kind,
			     uint32_t *out_index, struct k32_err *err)
{
	const struct wrt_export *e = find_export(inst->mod, name, (uint32_t)strlen(name));
	if (!e)
		return k32_err_set(err, K32_ERR_NOT_FOUND, "wasm", "no export named '%s'",
				   K32_CLIP(name));
	*out_kind = e->kind;
	*out_index = e->index;
	return K32_OK;
}

k32_status_t wrt_export_func(const struct wrt_instance *inst, const char *name, uint32_t *out_func,
			     struct k32_err *err)
{
	uint8_t kind;
	k32_status_t st = wrt_export_find(inst, name, &kind, out_func, err);
	if (st)
		return st;
	if (kind != WRT_EXTERN_FUNC)
		return k32_err_set(err, K32_ERR_WRONG_TYPE, "wasm",
				   "export '%s' is not a function (kind %u)", K32_CLIP(name), kind);
	return K32_OK;
}

k32_status_t wrt_func_type(const struct wrt_instance *inst, uint32_t func, uint32_t *out_nparams,
			   uint32_t *out_nresults, const uint8_t **out_types)
{
	if (func >= inst->mod->nfuncs)
		return K32_ERR_INVALID_ARGS;
	const struct wrt_functype *ft = inst->funcs[func]->type;
	*out_nparams = ft->nparams;
	*out_nresults = ft->nresults;
	*out_types = ft->types;
	return K32_OK;
}

k32_status_t wrt_export_global(const struct wrt_instance *inst, const char *name, uint8_t *out_type,
			       uint64_t *out_val, struct k32_err *err)
{
	uint8_t kind;
	uint32_t idx;
	k32_status_t st = wrt_export_find(inst, name, &kind, &idx, err);
	if (st)
		return st;
	if (kind != WRT_EXTERN_GLOBAL)
		return k32_err_set(err, K32_ERR_WRONG_TYPE, "wasm", "export '%s' is not a global",
				   K32_CLIP(name));
	*out_type = inst->globals[idx]->type;
	*out_val = inst->globals[idx]->val;
	return K32_OK;
}

k32_status_t wrt_invoke(struct wrt_instance *inst, uint32_t func, const uint64_t *args,
			uint32_t nargs, uint64_t *results, uint32_t nresults, struct k32_err *err)
{
	if (func >= inst->mod->nfuncs)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "wasm",
				   "function index %" PRIu32 " out of range (module has %" PRIu32
				   ")",
				   func, inst->mod->nfuncs);
	const struct wrt_funcinst *fn = inst->funcs[func];
	const struct wrt_functype *ft = fn->type;
	if (nargs != ft->nparams || nresults != ft->nresults)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "wasm",
				   "function %" PRIu32 " takes %" PRIu32
				   " args and returns %" PRIu32 " results, called with %" PRIu32
				   " and %" PRIu32,
				   func, ft->nparams, ft->nresults, nargs, nresults);
	if (inst->failed)
		return k32_err_set(err, K32_ERR_BAD_STATE, "wasm",
				   "instance failed to instantiate (trap); only free it");
	if (inst->running)
		return k32_err_set(err, K32_ERR_BAD_STATE, "wasm",
				   "re-entrant call into a running instance (from a host "
				   "function); not supported");
	uint32_t need = ft->nparams > ft->nresults ? ft->nparams : ft->nresults;
	if (need > inst->stack_slots)
		return k32_err_set(err, K32_ERR_TRAP, "wasm",
				   "call stack exhausted: %" PRIu32
				   " argument slots, value stack holds %" PRIu32,
				   need, inst->stack_slots);
	const struct wrt_watch *w = inst->lim.watch;
	uint32_t stop = w ? atomic_load_explicit(w->stop, memory_order_relaxed) : 0;
	if (stop) {
		/* stopped before it starts (the loop's own check points come later) */
		k32_status_t why = w->check
				       ? w->check(w->ctx, stop, err)
				       : k32_err_set(err, K32_ERR_CANCELED, "wasm",
						     "call interrupted (stop %" PRIu32 ")", stop);
		if (why)
			return why;
	}
	wrt_slot *base = inst->stack;
	if (nargs)
		memcpy(base, args, (size_t)nargs * 8);
	inst->running = true;
	k32_status_t st;
	if (!fn->func) {
		st = wrt_call_host(inst, fn, base, err);
#if K32_WASM_COUNT_OPS
	} else if (inst->lim.count_ops && inst->op_counts) {
		st = wrt_exec_count(inst, fn, base, err);
#endif
	} else {
		st = wrt_exec_default(inst, fn, base, err);
	}
	inst->running = false;
	if (st == K32_OK && nresults)
		memcpy(results, base, (size_t)nresults * 8);
	return st;
}

uint8_t *wrt_memory(struct wrt_instance *inst, uint64_t *out_len)
{
	*out_len = inst->mem ? inst->mem->len : 0;
	return inst->mem ? inst->mem->data : NULL;
}

void wrt_instance_stats(const struct wrt_instance *inst, struct wrt_stats *out)
{
	const struct wrt_module *m = inst->mod;
	memset(out, 0, sizeof(*out));
	out->code_bytes = (size_t)m->code_words * 4;
	out->module_bytes = m->bytes;
	out->memory_bytes = (size_t)inst->own_mem.alloc_len;
	out->stack_bytes =
	    (size_t)inst->stack_slots * 8 + (size_t)inst->nframes_cap * sizeof(struct wrt_frame);
	for (uint32_t i = m->ntable_imports; i < m->ntables; i++)
		out->table_bytes += (size_t)inst->own_tables[i].size * 8;
	out->runtime_bytes = inst->runtime_bytes;
	for (uint32_t i = 0; i < m->nelems; i++)
		out->runtime_bytes += (size_t)m->elems[i].count * 8;
	if (inst->op_counts)
		out->runtime_bytes += (size_t)WRT_OP__COUNT * 8;
	out->gas_used = inst->gas_used;
	out->max_depth = inst->max_depth;
}

/* clang-format off */
static const char *const wrt_op_names[WRT_OP__COUNT] = {
#define WRT_N_UN(name) [WRT_OP_##name] = #name,
#define WRT_N_UNF(name) [WRT_OP_##name] = #name,
#define WRT_N_SPECIAL(name) [WRT_OP_##name] = #name,
#define WRT_N_DIVOP(name) [WRT_OP_##name] = #name, [WRT_OP_##name##_I] = #name "_I",
#define WRT_N_BINF(name) [WRT_OP_##name] = #name, [WRT_OP_##name##_I] = #name "_I",
#define WRT_N_BIN(name) [WRT_OP_##name] = #name, [WRT_OP_##name##_I] = #name "_I",
#define WRT_X_NUM(name, byte, sig, kind, tin, tout, expr) WRT_N_##kind(name)
#define WRT_NM_LD(name) [WRT_OP_##name] = #name, [WRT_OP_##name##_A] = #name "_A", [WRT_OP_##name##_S] = #name "_S",
#define WRT_NM_ST(name) [WRT_OP_##name] = #name, [WRT_OP_##name##_I] = #name "_I", \
	[WRT_OP_##name##_A] = #name "_A", [WRT_OP_##name##_AI] = #name "_AI", \
	[WRT_OP_##name##_S] = #name "_S", [WRT_OP_##name##_SI] = #name "_SI",
#define WRT_X_MEM(name, byte, sig, size, align, kind) WRT_NM_##kind(name)
#define WRT_X_INT(name, comment) [WRT_OP_##name] = #name,
#define WRT_X_CMP(name, op, type, inv) [WRT_OP_BR_##name] = "BR_" #name, \
	[WRT_OP_BR_##name##_I] = "BR_" #name "_I",
#define WRT_X_ACMP(name, op, type, inv)                                                            \
	[WRT_OP_ADDBR_##name] = "ADDBR_" #name, [WRT_OP_ADDBR_##name##_I] = "ADDBR_" #name "_I",
#define WRT_X_SCMP(name, op, type, inv)                                                            \
	[WRT_OP_SELECT_##name] = "SELECT_" #name, [WRT_OP_SELECT_##name##_I] = "SELECT_" #name "_I",
#define WRT_X_RCMP(name, op, type, inv)                                                            \
	[WRT_OP_RADDBR_##name] = "RADDBR_" #name, [WRT_OP_RADDBR_##name##_I] = "RADDBR_" #name "_I",
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

uint32_t wrt_op_count(void)
{
	return WRT_OP__COUNT;
}

const char *wrt_op_name(uint32_t op)
{
	return op < WRT_OP__COUNT ? wrt_op_names[op] : "?";
}

const uint64_t *wrt_op_counts(const struct wrt_instance *inst)
{
	return inst->op_counts;
}
