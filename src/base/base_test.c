/*
 * base_test.c - unit tests for src/base: status, allocators, buffers, strings, CRC-32, JSON
 * and the log ring. Failure paths are exercised with the heap's fault injection: every
 * allocation of an operation is made to fail in turn, and each run must return a clean
 * status and leave no bytes allocated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/k32_alloc.h"
#include "base/k32_base64.h"
#include "base/k32_buf.h"
#include "base/k32_crc32.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "base/k32_prom.h"
#include "base/k32_status.h"

/* ---- status ---------------------------------------------------------------------------- */

static void test_status_names(void **state)
{
	static const struct {
		k32_status_t st;
		const char *name;
	} cases[] = {
	    {K32_OK, "OK"},
	    {K32_ERR_NO_MEMORY, "NO_MEMORY"},
	    {K32_ERR_NO_RESOURCES, "NO_RESOURCES"},
	    {K32_ERR_PEER_CLOSED, "PEER_CLOSED"},
	    {K32_ERR_COMPACTED, "COMPACTED"},
	    {K32_ERR_TRAP, "TRAP"},
	    {-9999, "UNKNOWN"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(k32_status_name(cases[i].st), cases[i].name);
	/* Zircon's values, which kobj and pods rely on. */
	assert_int_equal(K32_ERR_INVALID_ARGS, -10);
	assert_int_equal(K32_ERR_ACCESS_DENIED, -30);
}

static void test_err_set_truncates(void **state)
{
	struct k32_err err;
	char long_name[400];

	(void)state;
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(k32_err_set(&err, K32_ERR_NOT_FOUND, "test", "no %s", long_name),
			 K32_ERR_NOT_FOUND);
	assert_int_equal(err.status, K32_ERR_NOT_FOUND);
	assert_string_equal(err.module, "test");
	assert_int_equal(strlen(err.msg), K32_ERR_MSG_LEN - 1);
	/* a cut shows: the message ends with "..." rather than mid-word */
	assert_string_equal(err.msg + K32_ERR_MSG_LEN - 4, "...");
	/* a clipped name keeps the message and its advice whole */
	assert_int_equal(k32_err_set(&err, K32_ERR_NOT_FOUND, "test",
				     "no pod %s on node %s: create it first", K32_CLIP(long_name),
				     K32_CLIP("n1")),
			 K32_ERR_NOT_FOUND);
	assert_true(strlen(err.msg) < K32_ERR_MSG_LEN - 1);
	assert_non_null(strstr(err.msg, "no pod xxx"));
	assert_non_null(strstr(err.msg, "x...x"));
	assert_non_null(strstr(err.msg, "xxx on node n1: create it first"));
	assert_int_equal(k32_err_set(NULL, K32_ERR_IO, "t", "ignored"), K32_ERR_IO);
	k32_err_clear(&err);
	assert_int_equal(err.status, K32_OK);
	assert_string_equal(err.msg, "");
}

/* ---- arena ----------------------------------------------------------------------------- */

static void test_arena(void **state)
{
	_Alignas(8) uint8_t region[256];
	struct k32_arena arena;
	struct k32_allocator a;
	uint8_t *p1, *p2, *p3;

	(void)state;
	k32_arena_init(&arena, region, sizeof(region));
	a = k32_arena_allocator(&arena);
	p1 = k32_alloc(&a, 10);
	assert_non_null(p1);
	assert_int_equal((uintptr_t)p1 % K32_ALLOC_ALIGN, 0);
	assert_int_equal(arena.stats.cur_bytes, 16);
	p2 = k32_alloc(&a, 100);
	assert_non_null(p2);
	assert_int_equal((uintptr_t)p2 % K32_ALLOC_ALIGN, 0);
	/* The last block grows in place. */
	memset(p2, 0xAB, 100);
	p3 = k32_realloc(&a, p2, 100, 120);
	assert_ptr_equal(p3, p2);
	assert_int_equal(arena.stats.cur_bytes, 16 + 120);
	/* Freeing the last block returns its bytes. */
	k32_free(&a, p3, 120);
	assert_int_equal(arena.stats.cur_bytes, 16);
	/* Growing an older block copies it to the end. */
	memset(p1, 0x5A, 10);
	p2 = k32_realloc(&a, p1, 10, 40);
	assert_non_null(p2);
	assert_ptr_not_equal(p2, p1);
	assert_int_equal(p2[9], 0x5A);
	/* Exhaustion is a clean NULL and is counted. */
	assert_null(k32_alloc(&a, 1000));
	assert_int_equal(arena.stats.failures, 1);
	assert_int_equal(arena.stats.peak_bytes, 136);
	k32_arena_reset(&arena);
	assert_int_equal(arena.stats.cur_bytes, 0);
	assert_int_equal(arena.stats.peak_bytes, 136);
	/* After a reset the whole region is usable again. */
	assert_non_null(k32_alloc(&a, 256));
	assert_null(k32_alloc(&a, 8));
}

static void test_arena_unaligned_region(void **state)
{
	_Alignas(8) uint8_t region[64];
	struct k32_arena arena;
	struct k32_allocator a;
	void *p;

	(void)state;
	k32_arena_init(&arena, region + 3, sizeof(region) - 3);
	a = k32_arena_allocator(&arena);
	p = k32_alloc(&a, 8);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % K32_ALLOC_ALIGN, 0);
	assert_true(arena.cap <= sizeof(region) - 3);
}

/* ---- pool ------------------------------------------------------------------------------ */

static void test_pool(void **state)
{
	_Alignas(8) uint8_t region[4 * 24];
	struct k32_pool pool;
	struct k32_err err;
	void *blocks[4];

	(void)state;
	assert_int_equal(k32_pool_init(&pool, region, sizeof(region), 20, &err), K32_OK);
	assert_int_equal(pool.block_len, 24);
	assert_int_equal(pool.block_count, 4);
	for (int i = 0; i < 4; i++) {
		blocks[i] = k32_pool_get(&pool);
		assert_non_null(blocks[i]);
		assert_true(k32_pool_owns(&pool, blocks[i]));
	}
	assert_null(k32_pool_get(&pool));
	assert_int_equal(pool.stats.failures, 1);
	assert_int_equal(pool.stats.cur_bytes, 96);
	k32_pool_put(&pool, blocks[2]);
	assert_ptr_equal(k32_pool_get(&pool), blocks[2]);
	assert_false(k32_pool_owns(&pool, (uint8_t *)blocks[0] + 1));
	for (int i = 0; i < 4; i++)
		k32_pool_put(&pool, blocks[i]);
	assert_int_equal(pool.free_count, 4);
	assert_int_equal(pool.stats.cur_bytes, 0);
	assert_int_equal(pool.stats.peak_bytes, 96);
}

static void test_pool_bad_init(void **state)
{
	uint8_t region[16];
	struct k32_pool pool;
	struct k32_err err;

	(void)state;
	assert_int_equal(k32_pool_init(&pool, region, sizeof(region), 0, &err),
			 K32_ERR_INVALID_ARGS);
	assert_int_equal(k32_pool_init(&pool, region, sizeof(region), 64, &err),
			 K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "holds no block"));
}

static void test_pool_allocator_view(void **state)
{
	_Alignas(8) uint8_t region[2 * 32];
	struct k32_pool pool;
	struct k32_allocator a;
	void *p;

	(void)state;
	assert_int_equal(k32_pool_init(&pool, region, sizeof(region), 32, NULL), K32_OK);
	a = k32_pool_allocator(&pool);
	assert_null(k32_alloc(&a, 33)); /* larger than a block */
	p = k32_alloc(&a, 32);
	assert_non_null(p);
	assert_ptr_equal(k32_realloc(&a, p, 32, 16), p);
	k32_free(&a, p, 16);
	assert_int_equal(pool.free_count, 2);
}

/* ---- heap ------------------------------------------------------------------------------ */

static void test_heap_limit_and_faults(void **state)
{
	struct k32_heap heap;
	struct k32_allocator a;
	void *p, *q;

	(void)state;
	k32_heap_init(&heap, 100);
	a = k32_heap_allocator(&heap);
	p = k32_alloc(&a, 60);
	assert_non_null(p);
	assert_null(k32_alloc(&a, 41)); /* 60 + 41 > 100 */
	assert_int_equal(heap.stats.failures, 1);
	q = k32_realloc(&a, p, 60, 100);
	assert_non_null(q);
	assert_int_equal(heap.stats.cur_bytes, 100);
	q = k32_realloc(&a, q, 100, 10); /* shrinking always works */
	assert_non_null(q);
	assert_int_equal(heap.stats.cur_bytes, 10);
	k32_heap_fail_nth(&heap, 2);
	p = k32_alloc(&a, 1);
	assert_non_null(p);
	assert_null(k32_alloc(&a, 1));
	assert_int_equal(heap.stats.failures, 2);
	k32_free(&a, p, 1);
	k32_free(&a, q, 10);
	assert_int_equal(heap.stats.cur_bytes, 0);
	assert_int_equal(heap.stats.peak_bytes, 100);
}

/* ---- buffer and strings ---------------------------------------------------------------- */

static void test_buf_cap(void **state)
{
	struct k32_heap heap;
	struct k32_allocator a;
	struct k32_buf buf;
	struct k32_err err;

	(void)state;
	k32_heap_init(&heap, 0);
	a = k32_heap_allocator(&heap);
	k32_buf_init(&buf, &a, 10, "test body");
	assert_string_equal(k32_buf_cstr(&buf), "");
	assert_int_equal(k32_buf_append_str(&buf, "hello", &err), K32_OK);
	assert_int_equal(k32_buf_printf(&buf, &err, "%d", 1234), K32_OK);
	assert_string_equal(k32_buf_cstr(&buf), "hello1234");
	/* One byte left: a two-byte append fails and leaves the buffer unchanged. */
	assert_int_equal(k32_buf_append(&buf, "ab", 2, &err), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(err.msg, "test body"));
	assert_non_null(strstr(err.msg, "limit of 10 bytes"));
	assert_string_equal(k32_buf_cstr(&buf), "hello1234");
	assert_int_equal(k32_buf_printf(&buf, &err, "%s", "xy"), K32_ERR_NO_RESOURCES);
	assert_int_equal(k32_buf_append(&buf, "!", 1, &err), K32_OK);
	assert_int_equal(buf.len, 10);
	k32_buf_consume(&buf, 5);
	assert_string_equal(k32_buf_cstr(&buf), "1234!");
	k32_buf_consume(&buf, 50);
	assert_int_equal(buf.len, 0);
	k32_buf_fini(&buf);
	assert_int_equal(heap.stats.cur_bytes, 0);
}

static void test_buf_out_of_memory(void **state)
{
	struct k32_heap heap;
	struct k32_allocator a;
	struct k32_buf buf;
	struct k32_err err;

	(void)state;
	k32_heap_init(&heap, 0);
	a = k32_heap_allocator(&heap);
	k32_buf_init(&buf, &a, 1 << 20, "log");
	assert_int_equal(k32_buf_append_str(&buf, "first", &err), K32_OK);
	k32_heap_fail_nth(&heap, 1);
	char big[200];
	memset(big, 'z', sizeof(big));
	assert_int_equal(k32_buf_append(&buf, big, sizeof(big), &err), K32_ERR_NO_MEMORY);
	assert_string_equal(k32_buf_cstr(&buf), "first");
	k32_buf_fini(&buf);
	assert_int_equal(heap.stats.cur_bytes, 0);
}

static void test_str_views(void **state)
{
	struct k32_str head, tail;
	uint64_t v;
	char small[4];

	(void)state;
	assert_true(k32_str_cut(k32_str_from("key=value"), '=', &head, &tail));
	assert_true(k32_str_eq_cstr(head, "key"));
	assert_true(k32_str_eq_cstr(tail, "value"));
	assert_false(k32_str_cut(k32_str_from("novalue"), '=', &head, &tail));
	assert_true(k32_str_eq_cstr(head, "novalue"));
	assert_int_equal(tail.len, 0);
	assert_true(k32_str_eq_cstr(k32_str_trim(k32_str_from(" \t x y\t ")), "x y"));
	assert_true(k32_str_has_prefix(k32_str_from("/api/v1"), "/api"));
	assert_false(k32_str_has_prefix(k32_str_from("/ap"), "/api"));

	static const struct {
		const char *in;
		bool ok;
		uint64_t val;
	} nums[] = {
	    {"0", true, 0},
	    {"18446744073709551615", true, UINT64_MAX},
	    {"18446744073709551616", false, 0},
	    {"", false, 0},
	    {"12a", false, 0},
	    {"-1", false, 0},
	};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		v = 0;
		assert_int_equal(k32_str_to_u64(k32_str_from(nums[i].in), &v), nums[i].ok);
		if (nums[i].ok)
			assert_true(v == nums[i].val);
	}
	assert_false(k32_str_copy(k32_str_from("abcdef"), small, sizeof(small)));
	assert_string_equal(small, "abc");
	assert_true(k32_str_copy(k32_str_from("ab"), small, sizeof(small)));
}

/* ---- CRC-32 ---------------------------------------------------------------------------- */

static void test_crc32(void **state)
{
	static const struct {
		const char *in;
		uint32_t crc;
	} cases[] = {
	    {"", 0x00000000u},
	    {"a", 0xE8B7BE43u},
	    {"123456789", 0xCBF43926u},
	    {"The quick brown fox jumps over the lazy dog", 0x414FA339u},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(k32_crc32(0, cases[i].in, strlen(cases[i].in)), cases[i].crc);
	/* Incremental use gives the same result. */
	uint32_t c = k32_crc32(0, "1234", 4);
	assert_int_equal(k32_crc32(c, "56789", 5), 0xCBF43926u);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void test_json_getters(void **state)
{
	static const char doc[] = "{\"metadata\":{\"name\":\"web\",\"gen\":3},"
				  "\"spec\":{\"replicas\":\"two\",\"paused\":true,\"f\":1.5,"
				  "\"list\":[1],\"nothing\":null}}";
	static const struct {
		const char *path;
		char kind; /* s string, i int, b bool, o object, a array */
		k32_status_t want;
		const char *msg_part;
	} cases[] = {
	    {"metadata.name", 's', K32_OK, NULL},
	    {"metadata.gen", 'i', K32_OK, NULL},
	    {"spec.paused", 'b', K32_OK, NULL},
	    {"spec", 'o', K32_OK, NULL},
	    {"spec.list", 'a', K32_OK, NULL},
	    {"spec.replicas", 'i', K32_ERR_WRONG_TYPE,
	     "spec.replicas: expected an integer, found a string"},
	    {"spec.f", 'i', K32_ERR_WRONG_TYPE, "spec.f: expected an integer, found 1.5"},
	    {"metadata.namespace", 's', K32_ERR_NOT_FOUND,
	     "metadata.namespace: required field is missing"},
	    {"spec.nothing", 's', K32_ERR_NOT_FOUND, "required field is missing"},
	    {"metadata.name.x", 's', K32_ERR_NOT_FOUND, NULL},
	    {"spec.paused", 's', K32_ERR_WRONG_TYPE, "expected a string, found a boolean"},
	    {"spec.list", 'o', K32_ERR_WRONG_TYPE, "expected an object, found an array"},
	    {"spec", 'a', K32_ERR_WRONG_TYPE, "expected an array, found an object"},
	    {"metadata.gen", 'b', K32_ERR_WRONG_TYPE, "expected a boolean, found a number"},
	};
	cJSON *root;
	struct k32_err err;

	(void)state;
	assert_int_equal(k32_json_parse(doc, strlen(doc), &root, &err), K32_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s;
		int64_t n;
		bool b;
		const cJSON *j;
		k32_status_t st = K32_ERR_INTERNAL;

		k32_err_clear(&err);
		switch (cases[i].kind) {
		case 's':
			st = k32_json_get_str(root, cases[i].path, &s, &err);
			break;
		case 'i':
			st = k32_json_get_i64(root, cases[i].path, &n, &err);
			break;
		case 'b':
			st = k32_json_get_bool(root, cases[i].path, &b, &err);
			break;
		case 'o':
			st = k32_json_get_obj(root, cases[i].path, &j, &err);
			break;
		case 'a':
			st = k32_json_get_arr(root, cases[i].path, &j, &err);
			break;
		}
		if (st != cases[i].want)
			fail_msg("case %zu (%s): got %s, want %s (%s)", i, cases[i].path,
				 k32_status_name(st), k32_status_name(cases[i].want), err.msg);
		if (cases[i].msg_part && !strstr(err.msg, cases[i].msg_part))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg,
				 cases[i].msg_part);
	}

	const char *s;
	int64_t n;
	bool b;
	assert_int_equal(k32_json_get_str(root, "metadata.name", &s, &err), K32_OK);
	assert_string_equal(s, "web");
	assert_int_equal(k32_json_get_i64(root, "metadata.gen", &n, &err), K32_OK);
	assert_int_equal(n, 3);
	assert_int_equal(k32_json_get_str_opt(root, "metadata.uid", "none", &s, &err), K32_OK);
	assert_string_equal(s, "none");
	assert_int_equal(k32_json_get_i64_opt(root, "spec.nothing", 7, &n, &err), K32_OK);
	assert_int_equal(n, 7);
	assert_int_equal(k32_json_get_bool_opt(root, "spec.x", true, &b, &err), K32_OK);
	assert_true(b);
	assert_int_equal(k32_json_get_i64_opt(root, "spec.replicas", 1, &n, &err),
			 K32_ERR_WRONG_TYPE);
	cJSON_Delete(root);
}

static void test_json_malformed(void **state)
{
	static const struct {
		const char *doc;
		k32_status_t want;
		const char *msg_part;
	} cases[] = {
	    {"{\"a\":1}", K32_OK, NULL},
	    {"  [1,2]  \n", K32_OK, NULL},
	    {"", K32_ERR_INVALID_ARGS, "empty JSON"},
	    {"{\"a\":}", K32_ERR_INVALID_ARGS, "malformed JSON at byte 5"},
	    {"{\"a\":1} x", K32_ERR_INVALID_ARGS, "unexpected data after the JSON value at byte 8"},
	    {"{\"a\":\"[[[[\"}", K32_OK, NULL},
	};
	cJSON *root;
	struct k32_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k32_status_t st = k32_json_parse(cases[i].doc, strlen(cases[i].doc), &root, &err);

		if (st != cases[i].want)
			fail_msg("case %zu: got %s (%s)", i, k32_status_name(st), err.msg);
		if (cases[i].msg_part && !strstr(err.msg, cases[i].msg_part))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg,
				 cases[i].msg_part);
		if (st == K32_OK)
			cJSON_Delete(root);
		else
			assert_null(root);
	}
}

/* Issue 12: "s\u0000zz" was stored as "s" (cJSON ends strings at NUL) and bytes that are
 * not UTF-8 were stored and served back. Every string is checked before cJSON sees it. */
static void test_json_bad_strings(void **state)
{
	static const struct {
		const char *doc;
		size_t len; /* 0: strlen (for docs holding a raw NUL) */
		k32_status_t want;
		const char *field; /* expected out_field */
		const char *msg_part;
	} cases[] = {
	    {"{\"metadata\":{\"name\":\"s\\u0000zz\"}}", 0, K32_ERR_INVALID_ARGS, "metadata.name",
	     "metadata.name: the string holds a NUL character (\\u0000) at byte 22"},
	    {"{\"stringData\":{\"k\":\"ab\\u0000cd\"}}", 0, K32_ERR_INVALID_ARGS, "stringData.k",
	     "NUL"},
	    {"{\"data\":{\"k\\u0000\":\"v\"}}", 0, K32_ERR_INVALID_ARGS, "data",
	     "a key of data: the key holds a NUL"},
	    {"{\"a\":[\"x\",{\"b\":\"\xff\"}]}", 0, K32_ERR_INVALID_ARGS, "a[1].b",
	     "a[1].b: the string holds invalid UTF-8 at byte 16"},
	    {"{\"spec\":{\"containers\":[{\"name\":\"c\xc3\"}]}}", 0, K32_ERR_INVALID_ARGS,
	     "spec.containers[0].name", "invalid UTF-8"},
	    {"{\"s\":\"\xed\xa0\x80\"}", 0, K32_ERR_INVALID_ARGS, "s", "invalid UTF-8"},
	    {"{\"s\":\"\xc0\xaf\"}", 0, K32_ERR_INVALID_ARGS, "s", "invalid UTF-8"},
	    {"{\"s\":\"\xf4\x90\x80\x80\"}", 0, K32_ERR_INVALID_ARGS, "s", "invalid UTF-8"},
	    {"{\"s\":\"a\0b\"}", 9, K32_ERR_INVALID_ARGS, "s", "NUL"},
	    {"\"\\u0000\"", 0, K32_ERR_INVALID_ARGS, "", "(top level)"},
	    /* fine: escaped backslash then "u0000", real UTF-8, other escapes */
	    {"{\"s\":\"\\\\u0000\"}", 0, K32_OK, "", NULL},
	    {"{\"s\":\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80\"}", 0, K32_OK, "", NULL},
	    {"{\"s\":\"\\u00e9\\ud83d\\ude00\\u0001\"}", 0, K32_OK, "", NULL},
	};
	cJSON *root;
	struct k32_err err;
	char field[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].doc);
		k32_status_t st =
		    k32_json_check_strings(cases[i].doc, len, field, sizeof(field), &err);

		if (st != cases[i].want)
			fail_msg("case %zu: got %s (%s)", i, k32_status_name(st), err.msg);
		if (strcmp(field, cases[i].field))
			fail_msg("case %zu: field '%s', want '%s'", i, field, cases[i].field);
		if (cases[i].msg_part && !strstr(err.msg, cases[i].msg_part))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg,
				 cases[i].msg_part);
		/* the parser refuses the same documents */
		st = k32_json_parse(cases[i].doc, len, &root, &err);
		if (st != cases[i].want)
			fail_msg("case %zu: parse got %s (%s)", i, k32_status_name(st), err.msg);
		if (st == K32_OK)
			cJSON_Delete(root);
	}
	size_t at = 0;
	assert_int_equal(k32_utf8_check("ab\xe2\x82", 4, &at), K32_UTF8_INVALID);
	assert_int_equal(at, 2);
	assert_int_equal(k32_utf8_check("a\0", 2, &at), K32_UTF8_NUL);
	assert_int_equal(at, 1);
	assert_int_equal(k32_utf8_check("\xc3\xa9", 2, NULL), K32_UTF8_OK);
}

static void test_json_depth_limit(void **state)
{
	char doc[2 * (K32_JSON_MAX_DEPTH + 1) + 1];
	size_t n = 0;
	cJSON *root;
	struct k32_err err;

	(void)state;
	for (int i = 0; i < K32_JSON_MAX_DEPTH + 1; i++)
		doc[n++] = '[';
	for (int i = 0; i < K32_JSON_MAX_DEPTH + 1; i++)
		doc[n++] = ']';
	doc[n] = '\0';
	assert_int_equal(k32_json_parse(doc, n, &root, &err), K32_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.msg, "K32_JSON_MAX_DEPTH"));
	/* Exactly at the limit parses. */
	assert_int_equal(k32_json_parse(doc + 1, n - 2, &root, &err), K32_OK);
	cJSON_Delete(root);
}

static void test_json_allocation_faults(void **state)
{
	static const char doc[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":"
				  "{\"app\":\"web\",\"tier\":\"x\"}},\"spec\":{\"n\":[1,2,3]}}";
	struct k32_heap heap;
	struct k32_allocator a;
	struct k32_err err;
	cJSON *root = NULL;
	uint32_t n;

	(void)state;
	k32_heap_init(&heap, 0);
	a = k32_heap_allocator(&heap);
	k32_json_use_allocator(&a);
	/* Fail the 1st, 2nd, ... allocation until parsing succeeds; each failure must be a
	 * clean status with every byte returned. */
	for (n = 1; n < 1000; n++) {
		k32_heap_fail_nth(&heap, n);
		k32_status_t st = k32_json_parse(doc, strlen(doc), &root, &err);

		if (st == K32_OK)
			break;
		/* out of memory is reported as such (a server answers 5xx), never as bad JSON */
		assert_int_equal(st, K32_ERR_NO_MEMORY);
		assert_non_null(strstr(err.msg, "out of memory"));
		assert_null(root);
		assert_int_equal(heap.stats.cur_bytes, 0);
	}
	assert_true(n > 5); /* the document needs many allocations; each one was failed once */
	assert_non_null(root);
	assert_true(heap.stats.cur_bytes > 0);
	cJSON_Delete(root);
	assert_int_equal(heap.stats.cur_bytes, 0);
	k32_heap_fail_nth(&heap, 0);
	/* and bad JSON with memory to spare is still bad JSON */
	assert_int_equal(k32_json_parse("{\"a\":", 5, &root, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "malformed JSON at byte"));
	k32_json_use_allocator(NULL);
}

/* ---- log ring -------------------------------------------------------------------------- */

static void test_log_ring(void **state)
{
	struct k32_log_line lines[K32_LOG_RING_LINES];
	uint64_t dropped;
	uint64_t first_seq;
	size_t n;

	(void)state;
	k32_log_set_stderr(false);
	k32_log_set_level(K32_LOG_INFO);
	n = k32_log_read(0, lines, K32_LOG_RING_LINES, NULL);
	first_seq = n ? lines[n - 1].seq : 0;

	K32_LOGD("test", "dropped below the level");
	K32_LOGI("test", "line %d", 1);
	n = k32_log_read(first_seq, lines, K32_LOG_RING_LINES, &dropped);
	assert_int_equal(n, 1);
	assert_int_equal(dropped, 0);
	assert_string_equal(lines[0].text, "line 1");
	assert_string_equal(lines[0].component, "test");
	assert_int_equal(lines[0].level, K32_LOG_INFO);

	/* Overflow the ring: the oldest lines are dropped and counted. */
	for (int i = 0; i < K32_LOG_RING_LINES + 10; i++)
		K32_LOGW("ring", "overflow %d", i);
	n = k32_log_read(first_seq, lines, K32_LOG_RING_LINES, &dropped);
	assert_int_equal(n, K32_LOG_RING_LINES);
	assert_int_equal(dropped, 11);
	assert_string_equal(lines[n - 1].text, "overflow 73");

	/* Long lines are truncated, not overflowed. */
	char longtext[K32_LOG_LINE_LEN * 2];
	memset(longtext, 'q', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	K32_LOGE("test", "%s", longtext);
	n = k32_log_read(lines[n - 1].seq, lines, 1, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(strlen(lines[0].text), K32_LOG_LINE_LEN - 1);
	assert_string_equal(lines[0].text + K32_LOG_LINE_LEN - 4, "...");
}

/* The log's clock: lines carry its reading and their formatted form the seconds since it was
 * set, as stderr shows them; without a clock the line has no time. */
static uint64_t fake_now_us;
static uint64_t fake_clock(void)
{
	return fake_now_us;
}

static void test_log_clock(void **state)
{
	(void)state;
	struct k32_log_line l;
	char out[K32_LOG_LINE_LEN + 64];
	k32_log_set_stderr(false);
	k32_log_set_level(K32_LOG_INFO);
	K32_LOGI("test", "before the clock");
	struct k32_log_line all[K32_LOG_RING_LINES];
	size_t n = k32_log_read(0, all, K32_LOG_RING_LINES, NULL);
	assert_true(n > 0);
	uint64_t last = all[n - 1].seq;
	fake_now_us = 7000000000ull; /* the platform's epoch is arbitrary */
	k32_log_set_clock(fake_clock);
	fake_now_us += 2500123;
	K32_LOGW("kclient", "watch ended: %s", "relisting");
	assert_int_equal(k32_log_read(last, &l, 1, NULL), 1);
	last = l.seq;
	assert_int_equal(l.time_us, 7002500123ull);
	assert_int_equal(k32_log_format(&l, out, sizeof(out)),
			 strlen("[    2.500123] WARN  kclient: watch ended: relisting\n"));
	assert_string_equal(out, "[    2.500123] WARN  kclient: watch ended: relisting\n");
	/* an hour and more: the seconds widen, nothing is cut */
	fake_now_us += 4000ull * 1000000 + 7;
	K32_LOGE("api", "x");
	assert_int_equal(k32_log_read(last, &l, 1, NULL), 1);
	k32_log_format(&l, out, sizeof(out));
	assert_string_equal(out, "[ 4002.500130] ERROR api: x\n");
	/* a short buffer is cut and terminated; the length needed is returned */
	char small[8];
	assert_int_equal(k32_log_format(&l, small, sizeof(small)), strlen(out));
	assert_string_equal(small, "[ 4002.");
	/* no clock: no time */
	k32_log_set_clock(NULL);
	K32_LOGI("api", "y");
	assert_int_equal(k32_log_read(l.seq, &l, 1, NULL), 1);
	assert_int_equal(l.time_us, 0);
	k32_log_format(&l, out, sizeof(out));
	assert_string_equal(out, "INFO  api: y\n");
}

/* k32_clip: short parts unchanged, long ones keep their start and end around "...", at
 * exactly K32_MSG_CLIP_LEN bytes, whatever the input's length. */
static void test_clip(void **state)
{
	(void)state;
	char out[K32_CLIP_BUF], in[300];
	assert_string_equal(k32_clip(out, "ticker-5d8f7c9b4-x2k7q"), "ticker-5d8f7c9b4-x2k7q");
	assert_string_equal(k32_clip(out, NULL), "");
	assert_string_equal(k32_clip(out, ""), "");
	/* bytes without a NUL after them (a name inside a module) */
	assert_string_equal(k32_clip_mem(out, sizeof(out), "host.add3XYZ", 9), "host.add3");
	assert_string_equal(k32_clip_mem(out, 12, "0123456789abcdefXYZ", 16), "012345...ef");
	for (size_t n = 0; n < sizeof(in) - 1; n++) {
		for (size_t i = 0; i < n; i++)
			in[i] = (char)('a' + i % 26);
		in[n] = 0;
		k32_clip(out, in);
		if (n <= K32_MSG_CLIP_LEN) {
			assert_string_equal(out, in);
			continue;
		}
		assert_int_equal(strlen(out), K32_MSG_CLIP_LEN);
		assert_non_null(strstr(out, "..."));
		assert_memory_equal(out, in, 10);			     /* its start */
		assert_string_equal(out + K32_MSG_CLIP_LEN - 5, in + n - 5); /* its end */
	}
}

static void test_base64(void **state)
{
	(void)state;
	/* RFC 4648 section 10's vectors, both ways. */
	static const char *const vec[][2] = {{"", ""},
					     {"f", "Zg=="},
					     {"fo", "Zm8="},
					     {"foo", "Zm9v"},
					     {"foob", "Zm9vYg=="},
					     {"fooba", "Zm9vYmE="},
					     {"foobar", "Zm9vYmFy"}};
	char enc[16];
	uint8_t dec[16];
	size_t n;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t len = strlen(vec[i][0]);
		assert_int_equal(k32_base64_len(len), strlen(vec[i][1]));
		k32_base64_encode((const uint8_t *)vec[i][0], len, enc);
		assert_string_equal(enc, vec[i][1]);
		assert_true(k32_base64_valid(enc));
		assert_int_equal(k32_base64_decode(enc, dec, sizeof(dec), &n), K32_OK);
		assert_int_equal(n, len);
		assert_memory_equal(dec, vec[i][0], len);
	}
	/* all 256 byte values survive the round trip */
	uint8_t all[256], back[256 + 3];
	char text[k32_base64_len(256) + 1];
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	k32_base64_encode(all, sizeof(all), text);
	assert_int_equal(k32_base64_decode(text, back, sizeof(back), &n), K32_OK);
	assert_int_equal(n, 256);
	assert_memory_equal(back, all, 256);
	/* canonical form only for valid(); decode is lenient about line breaks */
	static const struct {
		const char *text;
		bool valid;
		k32_status_t dec;
	} cases[] = {{"Zm9v\nYmFy", false, K32_OK},
		     {"Zm9vYg", false, K32_OK},
		     {"Zm9v=Yg=", false, K32_OK},
		     {"Zm9vYg===", false, K32_OK},
		     {"Zm9v!mFy", false, K32_ERR_INVALID_ARGS},
		     {"Zm9vYmFy", true, K32_OK}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(k32_base64_valid(cases[i].text), cases[i].valid);
		assert_int_equal(k32_base64_decode(cases[i].text, dec, sizeof(dec), &n),
				 cases[i].dec);
	}
	assert_int_equal(k32_base64_decode("Zm9vYmFy", dec, 5, &n), K32_ERR_BUFFER_TOO_SMALL);
	assert_int_equal(k32_base64_decode("Zm9vYmFy", dec, 6, &n), K32_OK);
	assert_memory_equal(dec, "foobar", 6);
}

/* Prometheus text: families, escaped labels, cumulative histogram buckets. */
static void test_prom(void **state)
{
	(void)state;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 4096, "prom");
	char labels[64] = "";
	assert_true(k32_prom_label(labels, sizeof(labels), "verb", "GET"));
	assert_true(k32_prom_label(labels, sizeof(labels), "path", "a\"b\\c\nd"));
	assert_string_equal(labels, "verb=\"GET\",path=\"a\\\"b\\\\c\\nd\"");
	char small[16] = "";
	assert_false(k32_prom_label(small, sizeof(small), "key", "a value too long"));
	assert_string_equal(small, ""); /* unchanged when it does not fit */
	assert_int_equal(k32_prom_family(&b, "x_total", "counter", "Things.", NULL), K32_OK);
	assert_int_equal(k32_prom_sample(&b, "x_total", labels, 3, NULL), K32_OK);
	assert_int_equal(k32_prom_sample(&b, "y", "", 0.25, NULL), K32_OK);
	static const double le[] = {0.001, 0.01, 0.1};
	struct k32_prom_hist h = {.le = le, .n = 3};
	k32_prom_hist_observe(&h, 500);	   /* 0.0005 s */
	k32_prom_hist_observe(&h, 5000);   /* 0.005 s */
	k32_prom_hist_observe(&h, 5000);   /* 0.005 s */
	k32_prom_hist_observe(&h, 900000); /* 0.9 s: only +Inf */
	assert_int_equal(k32_prom_hist_write(&b, "lat_seconds", "verb=\"GET\"", &h, NULL), K32_OK);
	assert_string_equal(k32_buf_cstr(&b), "# HELP x_total Things.\n"
					      "# TYPE x_total counter\n"
					      "x_total{verb=\"GET\",path=\"a\\\"b\\\\c\\nd\"} 3\n"
					      "y 0.25\n"
					      "lat_seconds_bucket{verb=\"GET\",le=\"0.001\"} 1\n"
					      "lat_seconds_bucket{verb=\"GET\",le=\"0.01\"} 3\n"
					      "lat_seconds_bucket{verb=\"GET\",le=\"0.1\"} 3\n"
					      "lat_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 4\n"
					      "lat_seconds_sum{verb=\"GET\"} 0.9105\n"
					      "lat_seconds_count{verb=\"GET\"} 4\n");
	k32_buf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_names),
	    cmocka_unit_test(test_err_set_truncates),
	    cmocka_unit_test(test_arena),
	    cmocka_unit_test(test_arena_unaligned_region),
	    cmocka_unit_test(test_pool),
	    cmocka_unit_test(test_pool_bad_init),
	    cmocka_unit_test(test_pool_allocator_view),
	    cmocka_unit_test(test_heap_limit_and_faults),
	    cmocka_unit_test(test_buf_cap),
	    cmocka_unit_test(test_buf_out_of_memory),
	    cmocka_unit_test(test_str_views),
	    cmocka_unit_test(test_crc32),
	    cmocka_unit_test(test_json_getters),
	    cmocka_unit_test(test_json_malformed),
	    cmocka_unit_test(test_json_bad_strings),
	    cmocka_unit_test(test_json_depth_limit),
	    cmocka_unit_test(test_json_allocation_faults),
	    cmocka_unit_test(test_log_ring),
	    cmocka_unit_test(test_log_clock),
	    cmocka_unit_test(test_base64),
	    cmocka_unit_test(test_clip),
	    cmocka_unit_test(test_prom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
