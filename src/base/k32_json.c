/*
 * k32_json.c - cJSON with kube32's allocator, a depth limit and typed getters.
 *
 * cJSON's hooks are malloc(size)/free(ptr), without the size that a k32_allocator needs on
 * free, so each block carries an 8-byte header holding its size. The depth limit is checked
 * by a linear pre-scan before cJSON (which recurses once per nesting level) sees the text.
 */
#include "base/k32_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Bytes in front of each cJSON block: its size and the allocator it came from, so a block
 * is freed to its own allocator whichever thread frees it. 16 keeps 8-byte alignment. */
#define JSON_HDR 16

struct json_hdr {
	size_t len;			   /* bytes asked for by cJSON */
	const struct k32_allocator *alloc; /* where the block came from */
};

_Static_assert(sizeof(struct json_hdr) <= JSON_HDR, "JSON block header too small");

/* The calling thread's allocator for cJSON (NULL: the default heap). Per thread, so a test
 * or a component that routes its own parsing through a limited allocator does not capture
 * the allocations of other threads. */
static _Thread_local const struct k32_allocator *json_alloc;
/* Allocations refused on this thread: a parse that fails while it grows ran out of memory
 * (cJSON itself reports that as a syntax error). */
static _Thread_local uint32_t json_refused;

static void *json_malloc(size_t len)
{
	const struct k32_allocator *a = json_alloc ? json_alloc : k32_default_allocator();
	struct json_hdr hdr = {len, a};
	uint8_t *p;

	if (len > SIZE_MAX - JSON_HDR) {
		json_refused++;
		return NULL;
	}
	p = k32_alloc(a, len + JSON_HDR);
	if (!p) {
		json_refused++;
		return NULL;
	}
	memcpy(p, &hdr, sizeof(hdr));
	return p + JSON_HDR;
}

static void json_free(void *ptr)
{
	uint8_t *p = ptr;
	struct json_hdr hdr;

	if (!p)
		return;
	p -= JSON_HDR;
	memcpy(&hdr, p, sizeof(hdr));
	k32_free(hdr.alloc, p, hdr.len + JSON_HDR);
}

static void json_install_hooks(void)
{
	static bool installed;
	cJSON_Hooks hooks = {json_malloc, json_free};

	/* Racing first callers all install the same two pointers; the flag only saves work. */
	if (!__atomic_exchange_n(&installed, true, __ATOMIC_ACQ_REL))
		cJSON_InitHooks(&hooks);
}

/*
 * The hooks must be in place before the first cJSON block is made: a block made by cJSON's
 * default malloc and freed through json_free (which reads a header it never had) corrupts the
 * heap. Installing them lazily on the first parse raced with other threads' cJSON calls
 * (kube32-sim --join crashed in node registration), so they are installed before main runs;
 * k32_json_init is the explicit form for a platform without constructors.
 */
void k32_json_init(void)
{
	json_install_hooks();
}

__attribute__((constructor)) static void json_hooks_at_start(void)
{
	json_install_hooks();
}

void k32_json_use_allocator(const struct k32_allocator *alloc)
{
	json_alloc = alloc;
	json_install_hooks();
}

/* Deepest nesting of objects and arrays in text, ignoring brackets inside strings; stops
 * early once past limit. */
static size_t json_depth(const char *text, size_t len, size_t limit, size_t *out_at)
{
	size_t depth = 0;
	size_t max = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max) {
				max = depth;
				if (max > limit) {
					*out_at = i;
					return max;
				}
			}
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return max;
}

/* Bytes of the valid UTF-8 sequence at p[0..n) (1..4), or 0 when it is not one: a stray
 * continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, or a cut. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* U+D800..DFFF are surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

enum k32_utf8_fault k32_utf8_check(const char *s, size_t len, size_t *out_at)
{
	const uint8_t *p = (const uint8_t *)s;

	for (size_t i = 0; i < len;) {
		size_t n;

		if (p[i] == 0) {
			if (out_at)
				*out_at = i;
			return K32_UTF8_NUL;
		}
		n = utf8_seq(p + i, len - i);
		if (!n) {
			if (out_at)
				*out_at = i;
			return K32_UTF8_INVALID;
		}
		i += n;
	}
	return K32_UTF8_OK;
}

const char *k32_utf8_fault_name(enum k32_utf8_fault fault)
{
	switch (fault) {
	case K32_UTF8_NUL:
		return "a NUL character";
	case K32_UTF8_INVALID:
		return "invalid UTF-8";
	default:
		return "nothing wrong";
	}
}

/* One open object or array while k32_json_check_strings walks the text. */
struct json_frame {
	uint32_t key_off; /* objects: offset of the current key's text */
	uint16_t key_len; /* its length (0: no key read yet) */
	bool array;	  /* an array (index counts) or an object (key names) */
	uint32_t index;	  /* arrays: the element being read */
};

/* The dotted path of the value being read (without the innermost key when in_key) into
 * out: "spec.containers[0].name". Keys are shown as sent (escapes left as they are). */
static void json_frames_path(const char *text, const struct json_frame *fr, size_t depth,
			     bool in_key, char *out, size_t cap)
{
	size_t n = 0;

	if (!out || !cap)
		return;
	out[0] = 0;
	for (size_t k = 0; k < depth && n < cap; k++) {
		int w;

		if (k == depth - 1 && in_key)
			break;
		if (fr[k].array)
			w = snprintf(out + n, cap - n, "[%" PRIu32 "]", fr[k].index);
		else if (fr[k].key_len)
			w = snprintf(out + n, cap - n, "%s%.*s", n ? "." : "", (int)fr[k].key_len,
				     text + fr[k].key_off);
		else
			w = 0;
		if (w < 0)
			break;
		n += (size_t)w;
	}
	if (n >= cap)
		out[cap - 1] = 0;
}

k32_status_t k32_json_check_strings(const char *text, size_t len, char *out_field, size_t cap,
				    struct k32_err *err)
{
	struct json_frame fr[K32_JSON_MAX_DEPTH + 1];
	size_t depth = 0;
	bool expect_key = false;
	const uint8_t *p = (const uint8_t *)text;

	if (out_field && cap)
		out_field[0] = 0;
	for (size_t i = 0; text && i < len; i++) {
		uint8_t c = p[i];
		enum k32_utf8_fault fault = K32_UTF8_OK;
		size_t j;
		bool is_key;
		char field[128];

		if (c == '{' || c == '[') {
			if (depth > K32_JSON_MAX_DEPTH)
				return K32_OK; /* too deep: the parser refuses it */
			fr[depth].array = c == '[';
			fr[depth].index = 0;
			fr[depth].key_len = 0;
			depth++;
			expect_key = c == '{';
			continue;
		}
		if ((c == '}' || c == ']') && depth > 0) {
			depth--;
			expect_key = false;
			continue;
		}
		if (c == ',' && depth > 0) {
			if (fr[depth - 1].array)
				fr[depth - 1].index++;
			else
				expect_key = true;
			continue;
		}
		if (c != '"')
			continue;
		is_key = depth > 0 && !fr[depth - 1].array && expect_key;
		for (j = i + 1; j < len && p[j] != '"';) {
			if (p[j] == '\\') {
				if (j + 5 < len && p[j + 1] == 'u' &&
				    !memcmp(p + j + 2, "0000", 4)) {
					fault = K32_UTF8_NUL;
					break;
				}
				j += 2; /* \uXXXX: the hex digits are plain bytes */
				continue;
			}
			if (p[j] == 0) {
				fault = K32_UTF8_NUL;
				break;
			}
			size_t n = utf8_seq(p + j, len - j);
			if (!n) {
				fault = K32_UTF8_INVALID;
				break;
			}
			j += n;
		}
		if (fault) {
			json_frames_path(text, fr, depth, is_key, field, sizeof(field));
			if (out_field && cap)
				snprintf(out_field, cap, "%s", field);
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, "json",
			    "%s%s: %s holds %s%s at byte %zu of %zu; strings must "
			    "be UTF-8 without NUL",
			    is_key ? "a key of " : "", field[0] ? field : "(top level)",
			    is_key ? "the key" : "the string", k32_utf8_fault_name(fault),
			    fault == K32_UTF8_NUL ? " (\\u0000)" : "", j, len);
		}
		if (is_key && j - (i + 1) <= UINT16_MAX && i + 1 <= UINT32_MAX) {
			fr[depth - 1].key_off = (uint32_t)(i + 1);
			fr[depth - 1].key_len = (uint16_t)(j - (i + 1));
			expect_key = false;
		} else if (is_key) {
			fr[depth - 1].key_len = 0;
			expect_key = false;
		}
		i = j; /* the closing quote (the loop steps past it) */
	}
	return K32_OK;
}

k32_status_t k32_json_parse(const char *text, size_t len, cJSON **out, struct k32_err *err)
{
	const char *end = NULL;
	size_t at = 0;
	cJSON *root;

	*out = NULL;
	json_install_hooks();
	if (!text || len == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "json",
				   "empty JSON document; send an object or array");
	if (json_depth(text, len, K32_JSON_MAX_DEPTH, &at) > K32_JSON_MAX_DEPTH)
		return k32_err_set(
		    err, K32_ERR_OUT_OF_RANGE, "json",
		    "JSON nested deeper than %d levels at byte %zu (K32_JSON_MAX_DEPTH)",
		    K32_JSON_MAX_DEPTH, at);
	if (k32_json_check_strings(text, len, NULL, 0, err) != K32_OK)
		return K32_ERR_INVALID_ARGS;
	uint32_t refused = json_refused;
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;

		/* cJSON reports an allocation failure as a parse error where it failed: the
		 * refusal count tells them apart, so a server out of memory answers 5xx, not 4xx */
		if (json_refused != refused)
			return k32_err_set(err, K32_ERR_NO_MEMORY, "json",
					   "out of memory parsing %zu bytes of JSON (at byte %zu); "
					   "retry later or send a smaller document",
					   len, off);
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "json",
				   "malformed JSON at byte %zu of %zu", off, len);
	}
	while (end && (size_t)(end - text) < len &&
	       (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n' || *end == '\0'))
		end++;
	if (end && (size_t)(end - text) < len) {
		size_t off = (size_t)(end - text);

		cJSON_Delete(root);
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "json",
				   "unexpected data after the JSON value at byte %zu", off);
	}
	*out = root;
	return K32_OK;
}

const cJSON *k32_json_find(const cJSON *obj, const char *path)
{
	const char *seg = path;
	char name[64];

	while (obj && seg && *seg) {
		const char *dot = strchr(seg, '.');
		size_t n = dot ? (size_t)(dot - seg) : strlen(seg);

		if (n >= sizeof(name) || !cJSON_IsObject(obj))
			return NULL;
		memcpy(name, seg, n);
		name[n] = '\0';
		obj = cJSON_GetObjectItemCaseSensitive(obj, name);
		seg = dot ? dot + 1 : NULL;
	}
	return obj;
}

const char *k32_json_type_name(const cJSON *item)
{
	if (!item || cJSON_IsInvalid(item))
		return "nothing";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "a raw value";
}

/* Looks up path; NOT_FOUND (when required) or the item. */
static k32_status_t json_lookup(const cJSON *obj, const char *path, bool required,
				const cJSON **out, struct k32_err *err)
{
	const cJSON *item = k32_json_find(obj, path);

	*out = NULL;
	if (!item || cJSON_IsNull(item)) {
		if (required)
			return k32_err_set(err, K32_ERR_NOT_FOUND, "json",
					   "%s: required field is missing", path);
		return K32_OK;
	}
	*out = item;
	return K32_OK;
}

static k32_status_t json_wrong_type(const char *path, const char *want, const cJSON *item,
				    struct k32_err *err)
{
	return k32_err_set(err, K32_ERR_WRONG_TYPE, "json", "%s: expected %s, found %s", path, want,
			   k32_json_type_name(item));
}

static k32_status_t json_str(const cJSON *obj, const char *path, bool required, const char *dflt,
			     const char **out, struct k32_err *err)
{
	const cJSON *item;
	k32_status_t st = json_lookup(obj, path, required, &item, err);

	*out = dflt;
	if (st != K32_OK || !item)
		return st;
	if (!cJSON_IsString(item))
		return json_wrong_type(path, "a string", item, err);
	*out = item->valuestring;
	return K32_OK;
}

static k32_status_t json_i64(const cJSON *obj, const char *path, bool required, int64_t dflt,
			     int64_t *out, struct k32_err *err)
{
	const cJSON *item;
	k32_status_t st = json_lookup(obj, path, required, &item, err);
	double d;

	*out = dflt;
	if (st != K32_OK || !item)
		return st;
	if (!cJSON_IsNumber(item))
		return json_wrong_type(path, "an integer", item, err);
	d = item->valuedouble;
	/* 2^63 is exactly representable; anything at or above it does not fit an int64. */
	if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
		return k32_err_set(err, K32_ERR_WRONG_TYPE, "json",
				   "%s: expected an integer, found %g", path, d);
	*out = (int64_t)d;
	return K32_OK;
}

static k32_status_t json_bool(const cJSON *obj, const char *path, bool required, bool dflt,
			      bool *out, struct k32_err *err)
{
	const cJSON *item;
	k32_status_t st = json_lookup(obj, path, required, &item, err);

	*out = dflt;
	if (st != K32_OK || !item)
		return st;
	if (!cJSON_IsBool(item))
		return json_wrong_type(path, "a boolean", item, err);
	*out = cJSON_IsTrue(item);
	return K32_OK;
}

k32_status_t k32_json_get_str(const cJSON *obj, const char *path, const char **out,
			      struct k32_err *err)
{
	return json_str(obj, path, true, NULL, out, err);
}

k32_status_t k32_json_get_str_opt(const cJSON *obj, const char *path, const char *dflt,
				  const char **out, struct k32_err *err)
{
	return json_str(obj, path, false, dflt, out, err);
}

k32_status_t k32_json_get_i64(const cJSON *obj, const char *path, int64_t *out, struct k32_err *err)
{
	return json_i64(obj, path, true, 0, out, err);
}

k32_status_t k32_json_get_i64_opt(const cJSON *obj, const char *path, int64_t dflt, int64_t *out,
				  struct k32_err *err)
{
	return json_i64(obj, path, false, dflt, out, err);
}

k32_status_t k32_json_get_bool(const cJSON *obj, const char *path, bool *out, struct k32_err *err)
{
	return json_bool(obj, path, true, false, out, err);
}

k32_status_t k32_json_get_bool_opt(const cJSON *obj, const char *path, bool dflt, bool *out,
				   struct k32_err *err)
{
	return json_bool(obj, path, false, dflt, out, err);
}

static k32_status_t json_container(const cJSON *obj, const char *path, bool want_obj,
				   const cJSON **out, struct k32_err *err)
{
	const cJSON *item;
	k32_status_t st = json_lookup(obj, path, true, &item, err);

	if (st != K32_OK)
		return st;
	if (want_obj ? !cJSON_IsObject(item) : !cJSON_IsArray(item)) {
		*out = NULL;
		return json_wrong_type(path, want_obj ? "an object" : "an array", item, err);
	}
	*out = item;
	return K32_OK;
}

k32_status_t k32_json_get_obj(const cJSON *obj, const char *path, const cJSON **out,
			      struct k32_err *err)
{
	return json_container(obj, path, true, out, err);
}

k32_status_t k32_json_get_arr(const cJSON *obj, const char *path, const cJSON **out,
			      struct k32_err *err)
{
	return json_container(obj, path, false, out, err);
}
