/*
 * wrt_load.c - wrt_module_load: decode, validate and compile a Wasm 2.0 binary module (no
 * SIMD) in one pass, and free it. This file holds the entry point, the error helpers, the
 * module's chunked storage, and what the module keeps after the load; the stages are in
 * wrt_decode.c, wrt_validate.c, wrt_compile.c and wrt_optimise.c (see wrt_ld.h).
 *
 * Context: any thread; allocates only from the caller's allocator; frees all on failure.
 */
#include "wasm/wrt_ld.h"

#include <stdio.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------------------- */

k32_status_t wrt_ld_fail(struct wrt_ld *ld, k32_status_t st, size_t off, const char *what,
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

void wrt_ld_malformed(struct wrt_ld *ld, size_t off, const char *what)
{
	wrt_ld_fail(ld, K32_ERR_CORRUPT, off, what, NULL);
}

void wrt_ld_invalid(struct wrt_ld *ld, size_t off, const char *what)
{
	wrt_ld_fail(ld, K32_ERR_INVALID_ARGS, off, what, NULL);
}

void wrt_ld_limit_hit(struct wrt_ld *ld, size_t off, const char *what, const char *name)
{
	wrt_ld_fail(ld, K32_ERR_NO_RESOURCES, off, what, name);
}

void wrt_ld_no_memory(struct wrt_ld *ld, size_t off)
{
	wrt_ld_fail(ld, K32_ERR_NO_MEMORY, off, "out of memory while loading",
		    "the allocator refused; raise the pod's memory pool (resources.limits.memory)");
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

void *wrt_ld_alloc(struct wrt_ld *ld, size_t len)
{
	if (ld->st)
		return NULL;
	void *p = wrt_mod_alloc(ld->m, len ? len : 1);
	if (!p)
		wrt_ld_no_memory(ld, ld->pos);
	return p;
}

void wrt_load_opts_default(struct wrt_load_opts *opts)
{
	opts->gas_metering = true;
	opts->copy_bytes = false;
	opts->scratch = NULL;
}

/* A copy of n bytes of the module in module storage (opts.copy_bytes). */
static const void *own_copy(struct wrt_ld *ld, const void *p, size_t n)
{
	if (!n)
		return p == NULL ? NULL : "";
	void *c = wrt_ld_alloc(ld, n);
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
				wrt_ld_no_memory(ld, 0);
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
	const struct k32_allocator *a = &ld->scratch;
	if (ld->v_cap)
		k32_free(a, ld->vv, wrt_ld_operands_bytes(ld->v_cap));
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
	ld.scratch = opts->scratch ? *opts->scratch : *alloc;
	ld.b = bytes;
	ld.end = len;
	ld.err = err;
	if (wrt_ld_grow_operands(&ld) && wrt_ld_grow_ctl(&ld))
		ld.declared = wrt_ld_alloc(&ld, 1);
	if (!ld.st)
		wrt_ld_sections(&ld, len);
	ld_free_scratch(&ld);
	if (!ld.st && opts->copy_bytes)
		own_bytes(&ld);
	if (!ld.st && ld.ncode) {
		/* the code at its exact size, in the module's storage */
		uint32_t *c = k32_alloc(alloc, (size_t)ld.ncode * 4);
		if (c) {
			memcpy(c, ld.code, (size_t)ld.ncode * 4);
			m->code = c;
			m->code_words = ld.ncode;
			m->bytes += (size_t)ld.ncode * 4;
		} else {
			wrt_ld_no_memory(&ld, 0);
		}
	}
	k32_free(&ld.scratch, ld.code, (size_t)ld.code_cap * 4);
	if (!ld.st && ld.nsm)
		pack_srcmap(&ld);
	k32_free(&ld.scratch, ld.sm, (size_t)ld.sm_cap * sizeof(*ld.sm));
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
