/*
 * wrt_test.c - unit tests of the Wasm runtime: decoder, validator, compiler/interpreter,
 * every trap, every limit, host functions, NaN canonicalisation, accounting, allocation
 * failure, and constant native stack use. Built and run once per dispatch variant
 * (wrt_test_goto, wrt_test_switch).
 *
 * Test modules are .wat files in testdata/ compiled by wat2wasm at build time (into
 * WRT_TESTDATA), plus modules assembled here byte by byte for malformed input and for the
 * 20,000-instruction function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "base/k32_alloc.h"
#include "platform/k32_platform.h"
#include "wasm/wrt.h"

/* ---- helpers ------------------------------------------------------------------------ */

struct file {
	uint8_t *b;
	size_t len;
};

static struct file read_testdata(const char *name)
{
	char path[512];
	struct file f = {NULL, 0};
	snprintf(path, sizeof(path), "%s/%s", WRT_TESTDATA, name);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	assert_true(n > 0);
	f.b = malloc((size_t)n);
	assert_non_null(f.b);
	assert_int_equal(fread(f.b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	f.len = (size_t)n;
	return f;
}

/* A tiny module builder: one type, one function exported as "f", optional memory. */
struct mb {
	uint8_t *b;
	size_t n, cap;
};

static void mb_u8(struct mb *m, uint8_t v)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->b = realloc(m->b, m->cap);
		assert_non_null(m->b);
	}
	m->b[m->n++] = v;
}

static void mb_leb(struct mb *m, uint32_t v)
{
	do {
		uint8_t byte = v & 0x7F;
		v >>= 7;
		mb_u8(m, (uint8_t)(byte | (v ? 0x80 : 0)));
	} while (v);
}

static void mb_bytes(struct mb *m, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mb_u8(m, p[i]);
}

static void mb_section(struct mb *m, uint8_t id, const struct mb *content)
{
	mb_u8(m, id);
	mb_leb(m, (uint32_t)content->n);
	mb_bytes(m, content->b, content->n);
}

/* sig: the function type after 0x60 (e.g. {0, 1, 0x7F}); body: locals vector + code + end. */
static struct mb build_module(const uint8_t *sig, size_t siglen, const uint8_t *body,
			      size_t bodylen, bool memory)
{
	struct mb m = {0}, s = {0};
	static const uint8_t hdr[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	mb_bytes(&m, hdr, 8);
	mb_u8(&s, 1);
	mb_u8(&s, 0x60);
	mb_bytes(&s, sig, siglen);
	mb_section(&m, 1, &s);
	s.n = 0;
	mb_bytes(&s, (const uint8_t[]){1, 0}, 2);
	mb_section(&m, 3, &s);
	if (memory) {
		s.n = 0;
		mb_bytes(&s, (const uint8_t[]){1, 0, 1}, 3);
		mb_section(&m, 5, &s);
	}
	s.n = 0;
	mb_bytes(&s, (const uint8_t[]){1, 1, 'f', 0, 0}, 5);
	mb_section(&m, 7, &s);
	s.n = 0;
	mb_u8(&s, 1);
	mb_leb(&s, (uint32_t)bodylen);
	mb_bytes(&s, body, bodylen);
	mb_section(&m, 10, &s);
	free(s.b);
	return m;
}

static struct k32_heap heap;
static struct k32_allocator alloc;

static int setup(void **state)
{
	(void)state;
	k32_heap_init(&heap, 0);
	alloc = k32_heap_allocator(&heap);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(heap.stats.cur_bytes, 0); /* nothing leaked */
	return 0;
}

/* ---- host functions for t_exec.wat --------------------------------------------------- */

static k32_status_t host_add3(struct k32_hostcall *c)
{
	c->results[0] = (uint32_t)(c->args[0] + c->args[1] + c->args[2]);
	return K32_OK;
}

static k32_status_t host_peek(struct k32_hostcall *c)
{
	const uint8_t *p = k32_hostcall_mem(c, c->args[0], 1);
	if (!p)
		return k32_err_set(c->err, K32_ERR_TRAP, "test", "peek: pointer %llu out of range",
				   (unsigned long long)c->args[0]);
	c->results[0] = *p;
	return K32_OK;
}

static k32_status_t host_fail(struct k32_hostcall *c)
{
	(void)c;
	return K32_ERR_NO_RESOURCES;
}

static const struct k32_hostfn_def host_defs[] = {
    {"host", "add3", "iii:i", host_add3, NULL},
    {"host", "peek", "i:i", host_peek, NULL},
    {"host", "fail", ":", host_fail, NULL},
};

struct rt {
	struct file f;
	struct wrt_module *mod;
	struct wrt_instance *inst;
	struct k32_err err;
};

static k32_status_t rt_open(struct rt *rt, const char *file, const struct wrt_limits *lim)
{
	struct wrt_linker lk;
	memset(rt, 0, sizeof(*rt));
	rt->f = read_testdata(file);
	k32_status_t st = wrt_module_load(&alloc, rt->f.b, rt->f.len, NULL, &rt->mod, &rt->err);
	if (st)
		return st;
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, host_defs, 3, &rt->err);
	return wrt_instance_new(rt->mod, &lk, lim, &alloc, rt, &rt->inst, &rt->err);
}

static void rt_close(struct rt *rt)
{
	wrt_instance_free(rt->inst);
	wrt_module_free(rt->mod);
	free(rt->f.b);
}

static k32_status_t call(struct rt *rt, const char *name, const uint64_t *args, uint32_t nargs,
			 uint64_t *res, uint32_t nres)
{
	uint32_t fn;
	assert_int_equal(wrt_export_func(rt->inst, name, &fn, &rt->err), K32_OK);
	return wrt_invoke(rt->inst, fn, args, nargs, res, nres, &rt->err);
}

static struct wrt_limits test_limits(void)
{
	struct wrt_limits lim;
	wrt_limits_default(&lim);
	lim.canonical_nan = true;
	return lim;
}

/* wrt_load_opts.scratch: the module's allocator holds what the module keeps and nothing more
 * (a kubelet charges it to the pod); the loader's working memory comes from the scratch
 * allocator and is all given back, on success and on failure alike. */
static void test_load_scratch(void **state)
{
	(void)state;
	struct file f = read_testdata("t_exec.wasm");
	struct k32_heap sh;
	k32_heap_init(&sh, 0);
	struct k32_allocator sa = k32_heap_allocator(&sh);
	struct wrt_load_opts lo;
	wrt_load_opts_default(&lo);
	lo.copy_bytes = true;
	lo.scratch = &sa;
	struct wrt_module *m = NULL;
	struct k32_err err;
	assert_int_equal(wrt_module_load(&alloc, f.b, f.len, &lo, &m, &err), K32_OK);
	assert_int_equal(sh.stats.cur_bytes, 0);
	assert_true(sh.stats.peak_bytes > 0); /* the validator's stacks were there */
	assert_int_equal(heap.stats.cur_bytes, wrt_module_bytes(m));
	/* the same module loaded with one allocator keeps the same bytes */
	struct wrt_module *m1 = NULL;
	assert_int_equal(wrt_module_load(&alloc, f.b, f.len, &lo, &m1, &err), K32_OK);
	assert_int_equal(wrt_module_bytes(m1), wrt_module_bytes(m));
	wrt_module_free(m1);
	wrt_module_free(m);
	/* an allocator that refuses the module's code: NO_MEMORY, nothing left anywhere */
	struct k32_heap tight;
	k32_heap_init(&tight, 600);
	struct k32_allocator ta = k32_heap_allocator(&tight);
	assert_int_equal(wrt_module_load(&ta, f.b, f.len, &lo, &m, &err), K32_ERR_NO_MEMORY);
	assert_int_equal(tight.stats.cur_bytes, 0);
	assert_int_equal(sh.stats.cur_bytes, 0);
	free(f.b);
}

/* ---- decoder: malformed binaries ----------------------------------------------------- */

struct bad_case {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	k32_status_t want;
	const char *msg; /* substring of the error message */
};

#define BYTES(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
#define HDR	   0, 'a', 's', 'm', 1, 0, 0, 0

static const struct bad_case malformed_cases[] = {
    {"empty", (const uint8_t *)"", 0, K32_ERR_CORRUPT, "magic header"},
    {"bad magic", BYTES(0, 'a', 's', 'n', 1, 0, 0, 0), K32_ERR_CORRUPT, "magic header"},
    {"bad version", BYTES(0, 'a', 's', 'm', 2, 0, 0, 0), K32_ERR_CORRUPT, "version"},
    {"truncated section", BYTES(HDR, 1, 5, 1, 0x60), K32_ERR_CORRUPT, "length out of bounds"},
    {"truncated type", BYTES(HDR, 1, 2, 1, 0x60), K32_ERR_CORRUPT, "byte 12"},
    {"leb too long", BYTES(HDR, 1, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), K32_ERR_CORRUPT,
     "too long"},
    {"leb too large", BYTES(HDR, 1, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F), K32_ERR_CORRUPT, "too large"},
    {"section order", BYTES(HDR, 3, 1, 0, 1, 1, 0), K32_ERR_CORRUPT, "after last section"},
    {"unknown section", BYTES(HDR, 13, 0), K32_ERR_CORRUPT, "section id"},
    {"bad utf8 name", BYTES(HDR, 0, 2, 1, 0xFF), K32_ERR_CORRUPT, "UTF-8"},
    {"func without code", BYTES(HDR, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0), K32_ERR_CORRUPT,
     "inconsistent"},
    {"bad type form", BYTES(HDR, 1, 4, 1, 0x61, 0, 0), K32_ERR_CORRUPT, "0x60"},
    {"section too long", BYTES(HDR, 1, 9, 0), K32_ERR_CORRUPT, "section"},
    {"v128 type", BYTES(HDR, 1, 5, 1, 0x60, 1, 0x7B, 0), K32_ERR_NOT_SUPPORTED, "SIMD"},
    {"two memories", BYTES(HDR, 5, 5, 2, 0, 1, 0, 1), K32_ERR_INVALID_ARGS, "multiple memories"},
    {"memory too big", BYTES(HDR, 5, 5, 1, 0, 0x81, 0x80, 0x04), K32_ERR_INVALID_ARGS,
     "65536 pages"},
};

static void test_malformed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(malformed_cases) / sizeof(malformed_cases[0]); i++) {
		const struct bad_case *c = &malformed_cases[i];
		struct wrt_module *m = (struct wrt_module *)1;
		struct k32_err err = {0};
		k32_status_t st = wrt_module_load(&alloc, c->bytes, c->len, NULL, &m, &err);
		if (st != c->want || !strstr(err.msg, c->msg))
			fail_msg("%s: got %d '%s', want %d '%s'", c->name, st, err.msg, c->want,
				 c->msg);
		assert_null(m);
		assert_non_null(strstr(err.msg, "at byte"));
	}
}

/* ---- validator: invalid function bodies ---------------------------------------------- */

struct body_case {
	const char *name;
	const uint8_t *sig;
	size_t siglen;
	const uint8_t *body;
	size_t bodylen;
	k32_status_t want;
	const char *msg;
};

#define SIG_V_I 0, 1, 0x7F
#define SIG_V_V 0, 0

static const struct body_case invalid_cases[] = {
    {"result type", BYTES(SIG_V_I), BYTES(0, 0x42, 0, 0x0B), K32_ERR_INVALID_ARGS, "type mismatch"},
    {"empty stack", BYTES(SIG_V_I), BYTES(0, 0x6A, 0x0B), K32_ERR_INVALID_ARGS, "type mismatch"},
    {"leftover value", BYTES(SIG_V_V), BYTES(0, 0x41, 1, 0x0B), K32_ERR_INVALID_ARGS,
     "type mismatch"},
    {"unknown local", BYTES(SIG_V_I), BYTES(0, 0x20, 5, 0x0B), K32_ERR_INVALID_ARGS,
     "unknown local"},
    {"unknown label", BYTES(SIG_V_V), BYTES(0, 0x0C, 3, 0x0B), K32_ERR_INVALID_ARGS,
     "unknown label"},
    {"unknown function", BYTES(SIG_V_V), BYTES(0, 0x10, 9, 0x0B), K32_ERR_INVALID_ARGS,
     "unknown function"},
    {"no memory", BYTES(SIG_V_I), BYTES(0, 0x41, 0, 0x28, 2, 0, 0x0B), K32_ERR_INVALID_ARGS,
     "unknown memory"},
    {"else without if", BYTES(SIG_V_V), BYTES(0, 0x05, 0x0B), K32_ERR_INVALID_ARGS, "else without"},
    {"select mixed", BYTES(SIG_V_I), BYTES(0, 0x41, 1, 0x42, 1, 0x41, 0, 0x1B, 0x0B),
     K32_ERR_INVALID_ARGS, "type mismatch"},
    {"if without else", BYTES(SIG_V_I), BYTES(0, 0x41, 1, 0x04, 0x7F, 0x41, 1, 0x0B, 0x0B),
     K32_ERR_INVALID_ARGS, "type mismatch"},
    {"missing end", BYTES(SIG_V_V), BYTES(0, 0x01), K32_ERR_CORRUPT, "unexpected end"},
    {"bytes after end", BYTES(SIG_V_V), BYTES(0, 0x0B, 0x01), K32_ERR_CORRUPT, "size mismatch"},
    {"illegal opcode", BYTES(SIG_V_V), BYTES(0, 0xFF, 0x0B), K32_ERR_CORRUPT, "illegal opcode"},
    {"simd opcode", BYTES(SIG_V_V), BYTES(0, 0xFD, 0, 0x0B), K32_ERR_NOT_SUPPORTED, "SIMD"},
    {"too many locals", BYTES(SIG_V_V), BYTES(1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x7F, 0x0B),
     K32_ERR_NO_RESOURCES, "K32_WASM_MAX_LOCALS"},
};

static void test_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++) {
		const struct body_case *c = &invalid_cases[i];
		struct mb mod = build_module(c->sig, c->siglen, c->body, c->bodylen, false);
		struct wrt_module *m = NULL;
		struct k32_err err = {0};
		k32_status_t st = wrt_module_load(&alloc, mod.b, mod.n, NULL, &m, &err);
		if (st != c->want || !strstr(err.msg, c->msg))
			fail_msg("%s: got %d '%s', want %d '%s'", c->name, st, err.msg, c->want,
				 c->msg);
		assert_null(m);
		free(mod.b);
	}
}

/* The loader's scratch grows on demand: nesting and operand heights up to the limits load
 * (the one-value block types survive the control stack moving), one more is refused. */
struct deep_case {
	const char *name;
	uint32_t n;   /* repetitions */
	uint8_t kind; /* 0: n nested blocks, 1: n nested (result i32) blocks, 2: n operands */
	k32_status_t want;
	const char *msg;
};

static const struct deep_case deep_cases[] = {
    {"blocks at the limit", K32_WASM_MAX_BLOCK_DEPTH - 1, 0, K32_OK, ""},
    {"blocks over the limit", K32_WASM_MAX_BLOCK_DEPTH, 0, K32_ERR_NO_RESOURCES,
     "K32_WASM_MAX_BLOCK_DEPTH"},
    {"result blocks", 300, 1, K32_OK, ""},
    {"operands at the limit", K32_WASM_MAX_OPERANDS, 2, K32_OK, ""},
    {"operands over the limit", K32_WASM_MAX_OPERANDS + 1, 2, K32_ERR_NO_RESOURCES,
     "K32_WASM_MAX_OPERANDS"},
};

static void test_deep_bodies(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(deep_cases) / sizeof(deep_cases[0]); i++) {
		const struct deep_case *c = &deep_cases[i];
		uint8_t *body = malloc((size_t)c->n * 4 + 8);
		assert_non_null(body);
		size_t k = 0;
		body[k++] = 0; /* no locals */
		for (uint32_t j = 0; j < c->n; j++) {
			if (c->kind == 2) {
				body[k++] = 0x41; /* i32.const 1 */
				body[k++] = 1;
			} else {
				body[k++] = 0x02; /* block */
				body[k++] = c->kind ? 0x7F : 0x40;
			}
		}
		if (c->kind == 1) {
			body[k++] = 0x41;
			body[k++] = 1;
		}
		for (uint32_t j = 0; j < c->n; j++)
			body[k++] = c->kind == 2 ? 0x1A : 0x0B; /* drop or end */
		if (c->kind == 1)
			body[k++] = 0x1A;
		body[k++] = 0x0B;
		struct mb mod = build_module(BYTES(SIG_V_V), body, k, false);
		struct wrt_module *m = NULL;
		struct k32_err err = {0};
		k32_status_t st = wrt_module_load(&alloc, mod.b, mod.n, NULL, &m, &err);
		if (st != c->want || !strstr(err.msg, c->msg))
			fail_msg("%s: got %d '%s', want %d '%s'", c->name, st, err.msg, c->want,
				 c->msg);
		wrt_module_free(m);
		free(mod.b);
		free(body);
	}
}

/* Every prefix of a valid module is rejected cleanly; nothing crashes or leaks. */
static void test_truncated(void **state)
{
	(void)state;
	struct file f = read_testdata("t_exec.wasm");
	for (size_t n = 0; n < f.len; n++) {
		struct wrt_module *m = NULL;
		struct k32_err err = {0};
		k32_status_t st = wrt_module_load(&alloc, f.b, n, NULL, &m, &err);
		if (st == K32_OK) { /* a prefix ending at a section boundary can be valid */
			wrt_module_free(m);
			continue;
		}
		assert_int_not_equal(err.msg[0], 0);
	}
	/* and every single-byte corruption either loads or fails cleanly */
	for (size_t n = 8; n < f.len; n++) {
		uint8_t save = f.b[n];
		f.b[n] ^= 0x5A;
		struct wrt_module *m = NULL;
		struct k32_err err = {0};
		if (wrt_module_load(&alloc, f.b, f.len, NULL, &m, &err) == K32_OK)
			wrt_module_free(m);
		f.b[n] = save;
	}
	free(f.b);
}

/* ---- execution ------------------------------------------------------------------------ */

struct exec_case {
	const char *fn;
	uint32_t nargs;
	uint64_t args[3];
	uint32_t nres;
	uint64_t res[2];
};

static const struct exec_case exec_cases[] = {
    {"add", 2, {2, 3}, 1, {5}},
    {"add", 2, {0xFFFFFFFF, 1}, 1, {0}},
    {"sub64", 2, {1, 2}, 1, {0xFFFFFFFFFFFFFFFFull}},
    {"div_s", 2, {(uint32_t)-7, 2}, 1, {(uint32_t)-3}},
    {"rem_s", 2, {0x80000000u, 0xFFFFFFFFu}, 1, {0}},
    {"div_u64", 2, {100, 7}, 1, {14}},
    {"trunc", 1, {0x40490FDB /* 3.14159f */}, 1, {3}},
    {"trunc_sat", 1, {0x7FF8000000000000ull /* NaN */}, 1, {0}},
    {"trunc_sat", 1, {0x41F0000000000000ull /* 2^32 */}, 1, {0xFFFFFFFFu}},
    {"ext8", 1, {0x80}, 1, {0xFFFFFF80u}},
    {"fmin", 2, {0x8000000000000000ull, 0}, 1, {0x8000000000000000ull}},
    {"load8", 1, {0}, 1, {'k'}},
    {"size", 0, {0}, 1, {1}},
    {"call_ind", 1, {1}, 1, {1}},
    {"call_ind2", 3, {20, 22, 0}, 1, {42}},
    {"swap", 2, {1, 2}, 2, {2, 1}},
    {"fac", 1, {20}, 1, {2432902008176640000ull}},
    {"depth", 1, {100}, 1, {100}},
    {"count", 1, {1000}, 1, {1000}},
    {"switch", 1, {0}, 1, {10}},
    {"switch", 1, {1}, 1, {11}},
    {"switch", 1, {2}, 1, {12}},
    {"switch", 1, {99}, 1, {12}},
    {"host_add", 1, {10}, 1, {15}},
    {"host_peek", 1, {17}, 1, {'u'}},
};

static void test_exec(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	for (size_t i = 0; i < sizeof(exec_cases) / sizeof(exec_cases[0]); i++) {
		const struct exec_case *c = &exec_cases[i];
		uint64_t res[2] = {0, 0};
		k32_status_t st = call(&rt, c->fn, c->args, c->nargs, res, c->nres);
		if (st != K32_OK)
			fail_msg("%s: status %d: %s", c->fn, st, rt.err.msg);
		for (uint32_t k = 0; k < c->nres; k++)
			if (res[k] != c->res[k])
				fail_msg("%s#%zu: result %u is 0x%llx, want 0x%llx", c->fn, i, k,
					 (unsigned long long)res[k], (unsigned long long)c->res[k]);
	}
	/* globals keep state across calls; store then load; funcref results */
	uint64_t r[1], a[2] = {100, 0xABCD};
	assert_int_equal(call(&rt, "glob", NULL, 0, r, 1), K32_OK);
	assert_int_equal(r[0], 8);
	assert_int_equal(call(&rt, "glob", NULL, 0, r, 1), K32_OK);
	assert_int_equal(r[0], 9);
	assert_int_equal(call(&rt, "store", a, 2, NULL, 0), K32_OK);
	assert_int_equal(call(&rt, "load", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 0xABCD);
	a[0] = 0;
	assert_int_equal(call(&rt, "tab_get", a, 1, r, 1), K32_OK);
	assert_true(r[0] != 0);
	a[0] = 3;
	assert_int_equal(call(&rt, "tab_get", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 0);
	/* wrong argument count is refused */
	assert_int_equal(call(&rt, "add", a, 1, r, 1), K32_ERR_INVALID_ARGS);
	rt_close(&rt);
}

/* Each compiler fold (t_opt.wat) must give plain Wasm results, metered and not. */
static const struct exec_case fold_cases[] = {
    {"load_add", 1, {0xFFFFFFF2u}, 1, {3}},
    {"load_add", 1, {0}, 1, {0}},
    {"load_scaled", 1, {0x40000000u}, 1, {2}},
    {"load_scaled", 1, {1}, 1, {6}},
    {"store_scaled", 2, {0x40000001u, 0xAB}, 1, {0xAB}},
    {"store_imm", 1, {8}, 1, {0xFFFFFFFFFFFFFFFEull}},
    {"sel_max_s", 2, {5, 0xFFFFFFFFu}, 1, {5}},
    {"sel_max_s", 2, {0xFFFFFFFEu, 3}, 1, {3}},
    {"sel_lt_u_imm", 2, {99, 7}, 1, {7}},
    {"sel_lt_u_imm", 2, {100, 7}, 1, {100}},
    {"sel_not_ge_u", 2, {1, 2}, 1, {1}},
    {"sel_not_ge_u", 2, {0xFFFFFFFFu, 2}, 1, {2}},
    {"sel_self", 2, {4, 9}, 1, {9}},
    {"sel_self", 2, {9, 4}, 1, {9}},
    {"zero_local", 1, {3}, 1, {6}},
    {"zero_local", 1, {0}, 1, {0}},
    {"zero_in_loop", 1, {3}, 1, {6}},
    {"step_while", 2, {3, 10}, 1, {18}},
    {"step_while", 2, {3, 0}, 1, {0}},
    {"step_do", 2, {3, 10}, 1, {18}},
    {"step_do", 2, {5, 0xFFFFFFF0u}, 1, {0}},
    {"step_double", 1, {1}, 1, {7128}},
    {"step_down", 2, {12, 0xFFFFFFFDu}, 1, {4}},
    {"find5", 1, {0}, 1, {2}},
    {"find5", 1, {2}, 1, {2}},
    {"rsub", 1, {3}, 1, {7}},
    {"rsub", 1, {11}, 1, {0xFFFFFFFFu}},
    {"crc_mask", 1, {5}, 1, {0xEDB88320u}},
    {"crc_mask", 1, {4}, 1, {0}},
    {"count_down", 2, {4, 0xFFFFFFFFu}, 1, {10}},
    {"count_down", 2, {6, 0xFFFFFFFEu}, 1, {12}},
    {"count_down_k3", 1, {5}, 1, {15}},
    {"count_down_k3", 1, {0}, 1, {0}},
    {"fib_iter", 1, {10}, 1, {55}},
    {"fib_iter", 1, {1}, 1, {1}},
    {"two_incs", 1, {5}, 1, {10015}},
    {"swap_brif", 1, {5}, 1, {10}},
    {"swap_k3", 1, {5}, 1, {10}},
    {"swap_k3", 1, {0}, 1, {0}},
    {"swap_k2", 1, {4}, 1, {6}},
    {"swap_k2", 1, {0xFFFFFFFFu}, 1, {0}},
    {"ld8_brif", 1, {1}, 1, {1}},
    {"ld8_brif", 1, {60000}, 1, {0}},
    {"ld8_eq", 1, {2}, 1, {1}},
    {"ld8_eq", 1, {3}, 1, {0}},
    {"ld8_if_ne_a", 1, {0}, 1, {9}},
    {"ld8_if_ne_a", 1, {1}, 1, {7}},
    {"not_lt", 1, {3}, 1, {0}},
    {"not_lt", 1, {7}, 1, {1}},
    {"not_lt", 1, {0xFFFFFFFFu}, 1, {0}},
    {"const_first", 1, {11}, 1, {1}},
    {"const_first", 1, {10}, 1, {0}},
    {"const_first", 1, {0xFFFFFFFFu}, 1, {1}},
    {"fconst", 1, {0x3F800000u}, 1, {0x40A00000u}},
    {"dconst", 1, {0x3FF0000000000000ull}, 1, {0x3FEC000000000000ull}},
    {"pending_get", 1, {5}, 1, {0xFFFFFFA1u}},
    {"tee", 1, {4}, 1, {24}},
    {"while_if", 1, {10}, 1, {55}},
    {"while_if", 1, {0}, 1, {0}},
    {"while_br_if", 1, {5}, 1, {10}},
    {"while_br_if", 1, {0}, 1, {0}},
    {"br_value", 1, {1}, 1, {40}},
    {"br_value", 1, {2}, 1, {7}},
    {"br_value", 1, {3}, 1, {99}},
    {"sel", 1, {5}, 1, {3}},
    {"sel", 1, {20}, 1, {20}},
    {"while_nested", 1, {3}, 1, {306}},
    {"while_nested", 1, {0}, 1, {0}},
    {"while_skip", 1, {3}, 1, {10}},
    {"while_skip", 1, {20}, 1, {10010}},
    /* bytes 0..15 are non-zero here (the data segment, then store_imm's -2 at 8) */
    {"while_load", 1, {0}, 1, {16}},
    {"while_load", 1, {3}, 1, {16}},
    {"while_load", 1, {16}, 1, {16}},
    {"zscan", 1, {0}, 1, {0}},
    {"while_inner", 1, {5}, 1, {36}},
    {"while_inner", 1, {4}, 1, {35}},
    {"while_inner", 1, {0}, 1, {11}},
    {"while_inner2", 1, {5}, 1, {10}},
    {"while_inner2", 1, {0}, 1, {0}},
    {"while_inner2", 1, {100}, 1, {82}},
    {"br_next", 1, {0}, 1, {7}},
    {"br_next", 1, {1}, 1, {5}},
};

static void test_compiler_folds(void **state)
{
	(void)state;
	for (int metered = 0; metered < 2; metered++) {
		struct wrt_limits lim = test_limits();
		struct rt rt;
		struct wrt_load_opts lo;
		struct wrt_linker lk;
		memset(&rt, 0, sizeof(rt));
		wrt_load_opts_default(&lo);
		lo.gas_metering = metered;
		lo.copy_bytes = metered; /* the metered round: bytes scribbled over after load */
		lim.gas_enabled = metered;
		rt.f = read_testdata("t_opt.wasm");
		assert_int_equal(wrt_module_load(&alloc, rt.f.b, rt.f.len, &lo, &rt.mod, &rt.err),
				 K32_OK);
		if (lo.copy_bytes) /* data segment, export and function names were copied */
			memset(rt.f.b, 0xA5, rt.f.len);
		wrt_linker_init(&lk);
		assert_int_equal(
		    wrt_instance_new(rt.mod, &lk, &lim, &alloc, NULL, &rt.inst, &rt.err), K32_OK);
		for (size_t i = 0; i < sizeof(fold_cases) / sizeof(fold_cases[0]); i++) {
			const struct exec_case *c = &fold_cases[i];
			uint64_t res[2] = {0, 0};
			k32_status_t st = call(&rt, c->fn, c->args, c->nargs, res, c->nres);
			if (st != K32_OK || res[0] != c->res[0])
				fail_msg("%s#%zu (metered %d): status %d '%s', result 0x%llx, want "
					 "0x%llx",
					 c->fn, i, metered, st, rt.err.msg,
					 (unsigned long long)res[0], (unsigned long long)c->res[0]);
		}
		/* a trap in a loop test's load repeated at the back-edge: same message as the
		 * first iteration's (address 65535 + 1 is out of bounds either way) */
		char first[sizeof(rt.err.msg)];
		uint64_t a1 = 65535, a2 = 60000, r = 0;
		assert_int_equal(call(&rt, "zscan", &a1, 1, &r, 1), K32_ERR_TRAP);
		snprintf(first, sizeof(first), "%s", rt.err.msg);
		assert_non_null(strstr(first, "at byte"));
		assert_non_null(strstr(first, "'zscan'"));
		assert_int_equal(call(&rt, "zscan", &a2, 1, &r, 1), K32_ERR_TRAP);
		assert_string_equal(rt.err.msg, first);
		/* a fused byte load keeps the load's trap: address, size and location */
		uint64_t far = 65536;
		assert_int_equal(call(&rt, "ld8_brif", &far, 1, &r, 1), K32_ERR_TRAP);
		assert_non_null(strstr(rt.err.msg, "address 65536 + 1 bytes"));
		assert_non_null(strstr(rt.err.msg, "'ld8_brif' at byte"));
		rt_close(&rt);
	}
}

/* Float compares fused into br_if and if (FBR_*), also under i32.eqz: every kind, both types,
 * slot and immediate forms, against C's own compare, NaN and signed zeros included. */
static bool fcmp_c(int kind, double a, double b)
{
	switch (kind) {
	case 0:
		return a == b;
	case 1:
		return a != b;
	case 2:
		return a < b;
	case 3:
		return a > b;
	case 4:
		return a <= b;
	default:
		return a >= b;
	}
}

static void test_float_branches(void **state)
{
	(void)state;
	static const char *const kinds[6] = {"eq", "ne", "lt", "gt", "le", "ge"};
	static const char *const forms[4] = {"br", "nbr", "if", "nif"};
	const double vals[][2] = {{1, 2},   {2, 1},	{2, 2},	     {1.5, 7},	     {NAN, 1},
				  {1, NAN}, {NAN, NAN}, {-0.0, 0.0}, {INFINITY, 1.5}};
	struct wrt_limits lim = test_limits();
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_fbr.wasm", &lim), K32_OK);
	int checked = 0;
	for (int f64 = 0; f64 < 2; f64++)
		for (int k = 0; k < 6; k++)
			for (int imm = 0; imm < 2; imm++)
				for (int fm = 0; fm < 4; fm++)
					for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]);
					     v++) {
						char name[32];
						snprintf(name, sizeof(name), "%s_%s_%s%s",
							 forms[fm], f64 ? "f64" : "f32", kinds[k],
							 imm ? "_i" : "");
						double a = vals[v][0], b = imm ? 1.5 : vals[v][1];
						uint64_t args[2], res = 99;
						if (f64) {
							memcpy(&args[0], &a, 8);
							memcpy(&args[1], &b, 8);
						} else {
							float fa = (float)a, fb = (float)b;
							uint32_t ba, bb;
							memcpy(&ba, &fa, 4);
							memcpy(&bb, &fb, 4);
							args[0] = ba;
							args[1] = bb;
						}
						bool want = fcmp_c(k, a, b) != (fm == 1 || fm == 3);
						k32_status_t st = call(&rt, name, args, 2, &res, 1);
						if (st != K32_OK || res != (want ? 1u : 0u))
							fail_msg(
							    "%s(%g, %g): status %d '%s', got %llu, "
							    "want %d",
							    name, a, b, st, rt.err.msg,
							    (unsigned long long)res, want);
						checked++;
					}
	assert_int_equal(checked, 2 * 6 * 2 * 4 * 9);
	rt_close(&rt);
}

/* ---- traps ---------------------------------------------------------------------------- */

struct trap_case {
	const char *fn;
	uint32_t nargs;
	uint64_t args[3];
	const char *msg; /* substrings: what ... */
	const char *how; /* ... and how much */
};

static const struct trap_case trap_cases[] = {
    {"unreach", 0, {0}, "unreachable", "unreachable"},
    {"div_s", 2, {1, 0}, "integer divide by zero", "divide"},
    {"div_s", 2, {0x80000000u, 0xFFFFFFFFu}, "integer overflow", "-2147483648"},
    {"div_u64", 2, {1, 0}, "integer divide by zero", "divide"},
    {"trunc", 1, {0x7FC00000u}, "invalid conversion to integer", "NaN"},
    {"trunc", 1, {0x4F000000u /* 2^31 */}, "integer overflow", "2.14748e+09"},
    {"load", 1, {65534}, "out of bounds memory access", "address 65534 + 4 bytes"},
    {"load", 1, {0xFFFFFFFFu}, "out of bounds memory access", "memory is 65536 bytes"},
    {"fill", 3, {65000, 0, 1000}, "out of bounds memory access", "65000"},
    {"call_ind", 1, {0}, "indirect call type mismatch", "index 0"},
    {"call_ind", 1, {3}, "uninitialized element", "3"},
    {"call_ind", 1, {9}, "undefined element", "table size 4"},
    {"tab_get", 1, {4}, "out of bounds table access", "table size 4"},
    {"host_peek", 1, {70000}, "peek: pointer 70000 out of range", "70000"},
    {"host_fail", 0, {0}, "host function host.fail failed", "NO_RESOURCES"},
    {"depth", 1, {100000}, "call stack exhausted", "of 256 frames"},
    {"forever", 0, {0}, "out of gas", "after 100000000 units"},
};

static void test_traps(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	for (size_t i = 0; i < sizeof(trap_cases) / sizeof(trap_cases[0]); i++) {
		const struct trap_case *c = &trap_cases[i];
		uint64_t res[2];
		uint32_t fn, np, nr;
		const uint8_t *types;
		assert_int_equal(wrt_export_func(rt.inst, c->fn, &fn, &rt.err), K32_OK);
		wrt_func_type(rt.inst, fn, &np, &nr, &types);
		k32_status_t st = wrt_invoke(rt.inst, fn, c->args, c->nargs, res, nr, &rt.err);
		if (st != K32_ERR_TRAP || !strstr(rt.err.msg, c->msg) ||
		    !strstr(rt.err.msg, c->how))
			fail_msg("%s#%zu: got %d '%s', want trap '%s' with '%s'", c->fn, i, st,
				 rt.err.msg, c->msg, c->how);
		/* where: wasm traps name the function (name section) and the byte offset */
		if (strncmp(c->fn, "host_", 5) && !strstr(rt.err.msg, "at byte"))
			fail_msg("%s: no location in '%s'", c->fn, rt.err.msg);
		/* the instance stays usable after a trap */
		uint64_t a[2] = {40, 2}, r[1];
		assert_int_equal(call(&rt, "add", a, 2, r, 1), K32_OK);
		assert_int_equal(r[0], 42);
	}
	/* the trap names the function from the name section */
	uint64_t a[2] = {1, 0}, r[1];
	assert_int_equal(call(&rt, "div_s", a, 2, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "in func["));
	assert_int_equal(call(&rt, "forever", NULL, 0, NULL, 0), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "'forever'"));
	rt_close(&rt);
}

/* ---- limits --------------------------------------------------------------------------- */

static void test_limit_memory_bytes(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	lim.mem_bytes = 3072; /* a driver's 3 KiB: less than one page */
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	uint64_t len, a[1] = {3068}, r[1];
	assert_non_null(wrt_memory(rt.inst, &len));
	assert_int_equal(len, 3072);
	assert_int_equal(call(&rt, "load", a, 1, r, 1), K32_OK);
	a[0] = 3069;
	assert_int_equal(call(&rt, "load", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "address 3069 + 4 bytes, memory is 3072 bytes"));
	a[0] = 1;
	assert_int_equal(call(&rt, "grow", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 0xFFFFFFFFu); /* cannot grow past the byte limit */
	assert_int_equal(call(&rt, "size", NULL, 0, r, 1), K32_OK);
	assert_int_equal(r[0], 1);
	struct wrt_stats s;
	wrt_instance_stats(rt.inst, &s);
	assert_int_equal(s.memory_bytes, 3072);
	rt_close(&rt);

	/* a module asking for more than the limit fails, naming both numbers */
	lim.mem_bytes = 65536;
	assert_int_equal(rt_open(&rt, "t_big_mem.wasm", &lim), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(rt.err.msg, "131072"));
	assert_non_null(strstr(rt.err.msg, "65536"));
	rt_close(&rt);

	/* a data segment past the real size traps at instantiation */
	lim.mem_bytes = 4096;
	assert_int_equal(rt_open(&rt, "t_oob_data.wasm", &lim), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "memory is 4096 bytes"));
	rt_close(&rt);

	/* growing within the limit works and zero-fills */
	lim.mem_bytes = 3 * 65536;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	a[0] = 2;
	assert_int_equal(call(&rt, "grow", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 1);
	a[0] = 3 * 65536 - 4;
	assert_int_equal(call(&rt, "load", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 0);
	a[0] = 1;
	assert_int_equal(call(&rt, "grow", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 0xFFFFFFFFu);
	rt_close(&rt);
}

static void test_limit_stack(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	uint64_t a[1] = {1000}, r[1];
	lim.frames = 2000;
	lim.stack_bytes = 64 * 1024;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "depth", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 1000);
	struct wrt_stats s;
	wrt_instance_stats(rt.inst, &s);
	assert_int_equal(s.max_depth, 1000);
	rt_close(&rt);

	/* frame limit */
	lim.frames = 100;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "depth", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "call stack exhausted: depth 100 of 100 frames"));
	rt_close(&rt);

	/* value stack limit (bytes) */
	lim.frames = 2000;
	lim.stack_bytes = 1024;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "depth", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "of 128 stack slots"));
	rt_close(&rt);
}

static void test_limit_gas(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	uint64_t a[1] = {1000}, r[1];
	struct wrt_stats s;
	lim.gas = 500;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "out of gas after 500 units"));
	assert_non_null(strstr(rt.err.msg, "at byte"));
	a[0] = 10;
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_OK); /* budget is per call */
	assert_int_equal(r[0], 10);
	wrt_instance_stats(rt.inst, &s);
	assert_true(s.gas_used > 10 && s.gas_used < 500);
	assert_int_equal(call(&rt, "forever_rotated", NULL, 0, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "out of gas after 500 units"));
	rt_close(&rt);

	/* a budget smaller than the entry region: charged before the first op (no GAS op in
	 * the code any more), trapped with a location */
	lim.gas = 1;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	a[0] = 3;
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "out of gas after 1 units"));
	assert_non_null(strstr(rt.err.msg, "'count' at byte"));
	rt_close(&rt);
	lim.gas = 500;

	/* metering off: the same loop runs to the end */
	lim.gas_enabled = false;
	a[0] = 100000;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_OK);
	assert_int_equal(r[0], 100000);
	rt_close(&rt);
}

/* ---- the watch: stopping a call from outside (struct wrt_watch) ---- */

struct watch_fx {
	_Atomic uint32_t stop;
	uint32_t checks;      /* check calls */
	uint32_t stop_after;  /* check answers TIMED_OUT from this call on (0: never) */
	uint32_t seen_stop;   /* the stop value of the last check */
	uint32_t host_calls;  /* host "tick" calls */
	uint32_t set_stop_at; /* the tick of this number sets stop (0: none) */
	bool host_cancel;     /* tick itself ends the call with CANCELED */
};

static k32_status_t watch_check_fn(void *ctx, uint32_t stop, struct k32_err *err)
{
	struct watch_fx *w = ctx;
	w->checks++;
	w->seen_stop = stop;
	if (stop)
		return k32_err_set(err, K32_ERR_CANCELED, "test", "stopped (%u)", stop);
	if (w->stop_after && w->checks >= w->stop_after)
		return k32_err_set(err, K32_ERR_TIMED_OUT, "test", "deadline exceeded");
	return K32_OK;
}

static k32_status_t host_tick(struct k32_hostcall *c)
{
	struct watch_fx *w = c->instance_user;
	w->host_calls++;
	if (w->host_cancel)
		return k32_err_set(c->err, K32_ERR_CANCELED, "test", "wait cut short");
	if (w->set_stop_at && w->host_calls == w->set_stop_at)
		w->stop = 7;
	c->results[0] = 0;
	return K32_OK;
}

static const struct k32_hostfn_def watch_defs[] = {{"host", "tick", ":i", host_tick, NULL}};

static void watch_open(struct rt *rt, struct wrt_limits *lim, struct watch_fx *w)
{
	struct wrt_linker lk;
	memset(rt, 0, sizeof(*rt));
	rt->f = read_testdata("t_watch.wasm");
	assert_int_equal(wrt_module_load(&alloc, rt->f.b, rt->f.len, NULL, &rt->mod, &rt->err),
			 K32_OK);
	wrt_linker_init(&lk);
	assert_int_equal(wrt_linker_add_host(&lk, watch_defs, 1, &rt->err), K32_OK);
	assert_int_equal(wrt_instance_new(rt->mod, &lk, lim, &alloc, w, &rt->inst, &rt->err),
			 K32_OK);
}

static void test_watch(void **state)
{
	(void)state;
	struct watch_fx w;
	struct wrt_watch watch = {.stop = &w.stop, .check = watch_check_fn, .ctx = &w};
	struct wrt_limits lim = test_limits();
	lim.watch = &watch;
	struct rt rt;
	uint64_t r[1];
	static const char *const loops[] = {"spin", "calls"};

	/* metering off: a loop (and a loop of calls) reaches a check point every
	 * K32_WASM_CHECK_GAS units and stops when check says so, with where it was */
	for (int metered = 0; metered < 2; metered++) {
		for (size_t i = 0; i < 2; i++) {
			memset(&w, 0, sizeof(w));
			w.stop_after = 5;
			lim.gas_enabled = metered;
			lim.gas = UINT64_MAX; /* a "huge budget" pod */
			watch_open(&rt, &lim, &w);
			assert_int_equal(call(&rt, loops[i], NULL, 0, NULL, 0), K32_ERR_TIMED_OUT);
			assert_int_equal(w.checks, 5); /* one per K32_WASM_CHECK_GAS units */
			assert_non_null(strstr(rt.err.msg, "deadline exceeded (in "));
			assert_non_null(strstr(rt.err.msg, "at byte"));
			rt_close(&rt);
		}
	}
	lim.gas_enabled = false;

	/* a stop set before the call: it does not start (the first check point) */
	memset(&w, 0, sizeof(w));
	watch_open(&rt, &lim, &w);
	w.stop = 3;
	assert_int_equal(call(&rt, "spin", NULL, 0, NULL, 0), K32_ERR_CANCELED);
	assert_int_equal(w.checks, 1);
	assert_int_equal(w.seen_stop, 3);
	assert_non_null(strstr(rt.err.msg, "stopped (3)"));
	/* the instance stays usable once the stop is withdrawn */
	w.stop = 0;
	w.set_stop_at = 4;
	/* a stop set by another party while a host call ran is seen when it returns, not a
	 * slice later: the 4th tick sets it, the call ends right after it */
	assert_int_equal(call(&rt, "host_loop", NULL, 0, r, 1), K32_ERR_CANCELED);
	assert_int_equal(w.host_calls, 4);
	assert_int_equal(w.seen_stop, 7);

	/* a host function's own CANCELED (a wait cut short) ends the call with that status and
	 * message, not a trap */
	w.stop = 0;
	w.host_cancel = true;
	assert_int_equal(call(&rt, "host_loop", NULL, 0, r, 1), K32_ERR_CANCELED);
	assert_non_null(strstr(rt.err.msg, "wait cut short"));
	rt_close(&rt);

	/* without a check function a stop ends the call with CANCELED */
	memset(&w, 0, sizeof(w));
	struct wrt_watch bare = {.stop = &w.stop};
	lim.watch = &bare;
	watch_open(&rt, &lim, &w);
	w.set_stop_at = 2;
	assert_int_equal(call(&rt, "host_loop", NULL, 0, r, 1), K32_ERR_CANCELED);
	assert_non_null(strstr(rt.err.msg, "call interrupted (stop 7)"));
	rt_close(&rt);

	/* slices change no gas accounting: a budget of exactly what a long loop uses is
	 * enough, one unit less runs out */
	lim.watch = &watch;
	lim.gas_enabled = true;
	lim.gas = 1000000000ull;
	memset(&w, 0, sizeof(w));
	uint64_t a[1] = {300000};
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_OK);
	struct wrt_stats s;
	wrt_instance_stats(rt.inst, &s);
	uint64_t used = s.gas_used;
	assert_true(used > 2 * K32_WASM_CHECK_GAS); /* it crossed slices */
	rt_close(&rt);
	lim.gas = used;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_OK);
	wrt_instance_stats(rt.inst, &s);
	assert_int_equal(s.gas_used, used);
	rt_close(&rt);
	lim.gas = used - 1;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "out of gas"));
	wrt_instance_stats(rt.inst, &s);
	assert_int_equal(s.gas_used, used - 1);
	rt_close(&rt);
}

static void test_limit_table(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	lim.table_elems = 2;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(rt.err.msg, "table 0 needs 4 elements, limit is 2"));
	rt_close(&rt);
}

/* ---- linking, start, NaN, accounting, op counts -------------------------------------- */

static void test_linking(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_bad_import.wasm", &lim), K32_ERR_WRONG_TYPE);
	assert_non_null(strstr(rt.err.msg, "host.add3"));
	rt_close(&rt);
	assert_int_equal(rt_open(&rt, "t_missing_import.wasm", &lim), K32_ERR_NOT_FOUND);
	assert_non_null(strstr(rt.err.msg, "host.nope"));
	rt_close(&rt);
	assert_int_equal(rt_open(&rt, "t_start_trap.wasm", &lim), K32_ERR_TRAP);
	assert_non_null(strstr(rt.err.msg, "unreachable"));
	rt_close(&rt);
}

static void test_nan_and_stats(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	lim.count_ops = true;
	struct rt rt;
	assert_int_equal(rt_open(&rt, "t_exec.wasm", &lim), K32_OK);
	uint64_t a[2] = {0, 0}, r[1];
	assert_int_equal(call(&rt, "fdiv", a, 2, r, 1), K32_OK);
	assert_int_equal(r[0], 0x7FC00000u); /* canonical NaN, whatever the FPU made */
	a[0] = 50;
	assert_int_equal(call(&rt, "count", a, 1, r, 1), K32_OK);
	struct wrt_stats s;
	wrt_instance_stats(rt.inst, &s);
	size_t code, wasm;
	wrt_module_code_size(rt.mod, &code, &wasm);
	assert_true(code > 0 && wasm > 0 && s.code_bytes == code);
	assert_int_equal(s.memory_bytes, 65536);
	assert_true(s.stack_bytes >= lim.stack_bytes);
	assert_true(s.table_bytes == 4 * 8);
	assert_true(s.runtime_bytes > 0 && s.module_bytes > code);
	const uint64_t *counts = wrt_op_counts(rt.inst);
	assert_non_null(counts);
	uint64_t total = 0;
	bool saw_loop = false;
	for (uint32_t i = 0; i < wrt_op_count(); i++) {
		total += counts[i];
		/* count(50)'s loop is one fused add-compare-branch op per iteration */
		if (counts[i] >= 50 && !strncmp(wrt_op_name(i), "ADDBR_", 6))
			saw_loop = true;
	}
	assert_true(total >= 50 && total < 200);
	assert_true(saw_loop);
	rt_close(&rt);
}

/* ---- allocation failure: every failing allocation is clean --------------------------- */

static void test_alloc_failures(void **state)
{
	(void)state;
	struct wrt_limits lim = test_limits();
	unsigned failures = 0;
	for (uint32_t n = 1; n < 500; n++) {
		struct rt rt;
		k32_heap_fail_nth(&heap, n);
		k32_status_t st = rt_open(&rt, "t_exec.wasm", &lim);
		k32_heap_fail_nth(&heap, 0);
		if (st == K32_OK) {
			uint64_t a[2] = {1, 2}, r[1];
			assert_int_equal(call(&rt, "add", a, 2, r, 1), K32_OK);
			assert_int_equal(r[0], 3);
			rt_close(&rt);
			break;
		}
		assert_int_equal(st, K32_ERR_NO_MEMORY);
		assert_non_null(strstr(rt.err.msg, "out of memory"));
		rt_close(&rt);
		assert_int_equal(heap.stats.cur_bytes, 0);
		failures++;
	}
	assert_true(failures >= 5);
}

/* ---- constant native stack: long function and deep recursion on a small stack -------- */

#if defined(__SANITIZE_ADDRESS__)
#define SMALL_STACK (256 * 1024) /* sanitizer frames are several times larger */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMALL_STACK (256 * 1024)
#endif
#endif
#ifndef SMALL_STACK
#define SMALL_STACK (8 * 1024) /* the platform raises it to PTHREAD_STACK_MIN if lower */
#endif

struct small_job {
	struct mb big;	     /* the 20,000-instruction module */
	k32_status_t st_big; /* its status */
	uint64_t big_res;    /* its result */
	k32_status_t st_deep;
	uint64_t deep_res;
	struct file exec;
};

static void small_stack_task(void *arg)
{
	struct small_job *j = arg;
	struct k32_err err;
	struct wrt_module *m = NULL;
	struct wrt_instance *inst = NULL;
	struct wrt_limits lim;
	wrt_limits_default(&lim);
	j->st_big = wrt_module_load(&alloc, j->big.b, j->big.n, NULL, &m, &err);
	if (!j->st_big)
		j->st_big = wrt_instance_new(m, NULL, &lim, &alloc, NULL, &inst, &err);
	if (!j->st_big)
		j->st_big = wrt_invoke(inst, 0, NULL, 0, &j->big_res, 1, &err);
	wrt_instance_free(inst);
	wrt_module_free(m);

	struct wrt_linker lk;
	wrt_linker_init(&lk);
	wrt_linker_add_host(&lk, host_defs, 3, &err);
	lim.frames = 1100;
	lim.stack_bytes = 64 * 1024;
	inst = NULL;
	j->st_deep = wrt_module_load(&alloc, j->exec.b, j->exec.len, NULL, &m, &err);
	if (!j->st_deep)
		j->st_deep = wrt_instance_new(m, &lk, &lim, &alloc, NULL, &inst, &err);
	uint32_t fn;
	uint64_t a[1] = {1000};
	if (!j->st_deep)
		j->st_deep = wrt_export_func(inst, "depth", &fn, &err);
	if (!j->st_deep)
		j->st_deep = wrt_invoke(inst, fn, a, 1, &j->deep_res, 1, &err);
	wrt_instance_free(inst);
	wrt_module_free(m);
}

static void test_small_native_stack(void **state)
{
	(void)state;
	struct small_job j;
	memset(&j, 0, sizeof(j));
	/* body: i32.const 1, then 9,999 x (i32.const 1; i32.add), end: 20,000 instructions */
	struct mb body = {0};
	mb_u8(&body, 0);
	mb_bytes(&body, (const uint8_t[]){0x41, 1}, 2);
	for (int i = 0; i < 9999; i++)
		mb_bytes(&body, (const uint8_t[]){0x41, 1, 0x6A}, 3);
	mb_u8(&body, 0x0B);
	j.big = build_module(BYTES(SIG_V_I), body.b, body.n, false);
	free(body.b);
	j.exec = read_testdata("t_exec.wasm");
	struct k32_task *task;
	struct k32_err err;
	assert_int_equal(k32_plat()->task_create(&task, "wrt-small", small_stack_task, &j,
						 SMALL_STACK, -1, &err),
			 K32_OK);
	k32_plat()->task_join(task);
	assert_int_equal(j.st_big, K32_OK);
	assert_int_equal(j.big_res, 10000);
	assert_int_equal(j.st_deep, K32_OK);
	assert_int_equal(j.deep_res, 1000);
	free(j.big.b);
	free(j.exec.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_load_scratch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deep_bodies, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_compiler_folds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_float_branches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_traps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit_memory_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit_stack, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit_gas, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit_table, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_linking, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nan_and_stats, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_small_native_stack, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
