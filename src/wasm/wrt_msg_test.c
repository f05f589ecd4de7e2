/*
 * wrt_msg_test.c - the Wasm loader's and linker's messages end whole (issue #17: "...link
 * it"). Two drivers:
 *
 * - A table of link and instantiation failures with hostile names (imports whose module and
 *   field names are 5000 bytes, export lookups of 3000-byte names) and the limits a pod meets
 *   (memory, table, data and element segments): each message has the row's fixed words, ends
 *   with the row's last words (its advice), does not end with "..." and does not fill
 *   K32_ERR_MSG_LEN.
 * - A sweep over the test modules (the .wat files of testdata, compiled by wat2wasm): each
 *   truncated at every length and with every byte replaced by 0x00, 0x7F, 0x80 and 0xFF goes
 *   through the decoder, validator and compiler; every refusal's message must be whole. The
 *   sweep reaches most of the loader's messages with real inputs (the count of distinct
 *   messages it met is checked, so a sweep that stops reaching them fails).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/k32_alloc.h"
#include "base/k32_hostcall.h"
#include "wasm/wrt.h"

static struct k32_heap heap;
static struct k32_allocator alloc;

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !memcmp(s + n - t, tail, t);
}

/* Why err's message is not whole, or NULL. */
static const char *not_whole(const struct k32_err *err)
{
	if (!err->msg[0])
		return "is empty";
	if (strlen(err->msg) + 1 >= sizeof(err->msg))
		return "fills K32_ERR_MSG_LEN (cut?)";
	if (ends_with(err->msg, "..."))
		return "ends with \"...\"";
	return NULL;
}

/* ---- a module builder for names of any length -------------------------------------------- */

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
		uint8_t b = v & 0x7F;
		v >>= 7;
		mb_u8(m, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static void mb_bytes(struct mb *m, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mb_u8(m, ((const uint8_t *)p)[i]);
}

static void mb_name(struct mb *m, const char *s)
{
	mb_leb(m, (uint32_t)strlen(s));
	mb_bytes(m, s, strlen(s));
}

static void mb_section(struct mb *m, uint8_t id, const struct mb *body)
{
	mb_u8(m, id);
	mb_leb(m, (uint32_t)body->n);
	mb_bytes(m, body->b, body->n);
}

/* A module importing module.field as a function of type (i32) -> (), exporting nothing. */
static struct mb import_module(const char *module, const char *field)
{
	static const uint8_t hdr[] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	struct mb m = {0}, s = {0};
	mb_bytes(&m, hdr, sizeof(hdr));
	mb_bytes(&s, (const uint8_t[]){1, 0x60, 1, 0x7F, 0}, 5);
	mb_section(&m, 1, &s);
	s.n = 0;
	mb_leb(&s, 1);
	mb_name(&s, module);
	mb_name(&s, field);
	mb_bytes(&s, (const uint8_t[]){0, 0}, 2);
	mb_section(&m, 2, &s);
	free(s.b);
	return m;
}

/* A module with one memory of min pages (and optionally a table of n elements). */
static struct mb memory_module(uint32_t pages, uint32_t table)
{
	static const uint8_t hdr[] = {0, 'a', 's', 'm', 1, 0, 0, 0};
	struct mb m = {0}, s = {0};
	mb_bytes(&m, hdr, sizeof(hdr));
	if (table) {
		mb_bytes(&s, (const uint8_t[]){1, 0x70, 0}, 3);
		mb_leb(&s, table);
		mb_section(&m, 4, &s);
		s.n = 0;
	}
	mb_bytes(&s, (const uint8_t[]){1, 0}, 2);
	mb_leb(&s, pages);
	mb_section(&m, 5, &s);
	free(s.b);
	return m;
}

static k32_status_t host_nop(struct k32_hostcall *call)
{
	(void)call;
	return K32_OK;
}

static char long_a[5001], long_b[5001];

/* ---- link and instantiation ---------------------------------------------------------------- */

enum mkind { IMPORT, IMPORT_TYPE, MEMORY, TABLE, EXPORT, EXPORT_KIND };

struct lcase {
	const char *tag;
	enum mkind kind;
	k32_status_t want;
	const char *has;
	const char *tail;
};

static const struct lcase lcases[] = {
    {"unknown import", IMPORT, K32_ERR_NOT_FOUND, "unknown import aaaaaaaaaaaa",
     "no host function or instance export of that name; link it before instantiating"},
    {"import type", IMPORT_TYPE, K32_ERR_WRONG_TYPE, "incompatible import type for",
     "(kind, signature, limits or mutability differ)"},
    {"memory limit", MEMORY, K32_ERR_NO_RESOURCES, "needs 196608 bytes of linear memory",
     "raise wrt_limits.mem_bytes (a pod: resources.limits.memory) or shrink the module"},
    {"table limit", TABLE, K32_ERR_NO_RESOURCES, "needs 5000 elements, limit is 16",
     "raise wrt_limits.table_elems (K32_WASM_DEFAULT_TABLE_ELEMS)"},
    {"no export", EXPORT, K32_ERR_NOT_FOUND, "no export named 'aaaaaaaaaaaa", "'"},
    {"no export (2)", EXPORT_KIND, K32_ERR_NOT_FOUND, "no export named 'bbbbbbbbbbbb", "'"},
};

static void test_link_messages(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(lcases) / sizeof(lcases[0]); i++) {
		const struct lcase *c = &lcases[i];
		struct mb mod = c->kind == IMPORT || c->kind == IMPORT_TYPE
				    ? import_module(long_a, c->kind == IMPORT ? long_b : "f")
				: c->kind == TABLE  ? memory_module(1, 5000)
				: c->kind == MEMORY ? memory_module(3, 0)
						    : memory_module(1, 0);
		struct wrt_module *m = NULL;
		struct wrt_instance *inst = NULL;
		struct k32_err err = {0};
		assert_int_equal(wrt_module_load(&alloc, mod.b, mod.n, NULL, &m, &err), K32_OK);
		struct wrt_linker lk;
		wrt_linker_init(&lk);
		/* a host function of that module name but another signature */
		const struct k32_hostfn_def defs[] = {{long_a, "f", "ii:i", host_nop, NULL}};
		if (c->kind == IMPORT_TYPE)
			assert_int_equal(wrt_linker_add_host(&lk, defs, 1, &err), K32_OK);
		struct wrt_limits lim;
		wrt_limits_default(&lim);
		lim.mem_bytes = 128 * 1024;
		lim.table_elems = 16;
		k32_status_t st = wrt_instance_new(m, &lk, &lim, &alloc, NULL, &inst, &err);
		if (c->kind == EXPORT || c->kind == EXPORT_KIND) {
			assert_int_equal(st, K32_OK);
			uint32_t fn;
			st = wrt_export_func(inst, c->kind == EXPORT ? long_a : long_b, &fn, &err);
		}
		const char *why = not_whole(&err);
		if (st != c->want)
			fail_msg("%s: got %d, want %d: %s", c->tag, st, c->want, err.msg);
		if (why)
			fail_msg("%s: message %s: %s", c->tag, why, err.msg);
		if (!strstr(err.msg, c->has))
			fail_msg("%s: message lacks \"%s\": %s", c->tag, c->has, err.msg);
		if (!ends_with(err.msg, c->tail))
			fail_msg("%s: message does not end with \"%s\": %s", c->tag, c->tail,
				 err.msg);
		wrt_instance_free(inst);
		wrt_module_free(m);
		free(mod.b);
	}
}

/* ---- the sweep ---------------------------------------------------------------------------- */

static const char *const sweep_modules[] = {
    "t_exec.wasm",    "t_fbr.wasm",	   "t_opt.wasm",
    "t_watch.wasm",   "t_oob_data.wasm",   "t_missing_import.wasm",
    "t_big_mem.wasm", "t_start_trap.wasm",
};

static uint8_t *read_testdata(const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", WRT_TESTDATA, name);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	assert_true(n > 0);
	uint8_t *b = malloc((size_t)n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return b;
}

/* Distinct messages met, by their words before " at byte" and after the offset. */
#define MAX_SEEN 512
static char seen[MAX_SEEN][K32_ERR_MSG_LEN];
static size_t nseen;

static void note(const char *msg)
{
	char key[K32_ERR_MSG_LEN];
	const char *at = strstr(msg, " at byte ");
	const char *rest = at ? strchr(at + 9, ':') : NULL;
	snprintf(key, sizeof(key), "%.*s%s", at ? (int)(at - msg) : (int)strlen(msg), msg,
		 rest ? rest : "");
	for (size_t i = 0; i < nseen; i++)
		if (!strcmp(seen[i], key))
			return;
	if (nseen < MAX_SEEN)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
}

static void load_one(const uint8_t *b, size_t n, const char *name, size_t pos)
{
	struct wrt_module *m = NULL;
	struct k32_err err = {0};
	if (wrt_module_load(&alloc, b, n, NULL, &m, &err) == K32_OK) {
		wrt_module_free(m);
		return;
	}
	const char *why = not_whole(&err);
	if (why)
		fail_msg("%s changed at %zu: message %s: %s", name, pos, why, err.msg);
	note(err.msg);
}

static void test_loader_sweep(void **state)
{
	(void)state;
	static const uint8_t with[] = {0x00, 0x7F, 0x80, 0xFF};
	size_t loads = 0;
	for (size_t f = 0; f < sizeof(sweep_modules) / sizeof(sweep_modules[0]); f++) {
		size_t n;
		uint8_t *b = read_testdata(sweep_modules[f], &n);
		uint8_t *w = malloc(n);
		assert_non_null(w);
		for (size_t i = 0; i < n; i++) {
			load_one(b, i, sweep_modules[f], i); /* truncated */
			for (size_t k = 0; k < sizeof(with); k++) {
				if (b[i] == with[k])
					continue;
				memcpy(w, b, n);
				w[i] = with[k];
				load_one(w, n, sweep_modules[f], i);
				loads++;
			}
		}
		free(w);
		free(b);
	}
	if (getenv("K32_MSG_VERBOSE"))
		for (size_t i = 0; i < nseen; i++)
			printf("%s\n", seen[i]);
	printf("wrt_msg_test: %zu loads, %zu distinct messages, all whole\n", loads, nseen);
	/* the sweep reaches the loader's messages (40 distinct ones when this was written) */
	assert_true(nseen >= 30);
}

static int setup(void **state)
{
	(void)state;
	k32_heap_init(&heap, 0);
	alloc = k32_heap_allocator(&heap);
	memset(long_a, 'a', sizeof(long_a) - 1);
	memset(long_b, 'b', sizeof(long_b) - 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(heap.stats.cur_bytes, 0); /* nothing leaked */
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_link_messages),
	    cmocka_unit_test(test_loader_sweep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
