/*
 * k32_json.h - JSON helpers over cJSON.
 *
 * cJSON is the library ESP-IDF ships, so the same code runs on a board. These helpers add
 * what cJSON lacks: allocation routed through a k32_allocator, a nesting-depth limit checked
 * before cJSON recurses (K32_JSON_MAX_DEPTH), and typed getters whose errors name the field
 * and what was wrong ("spec.replicas: expected an integer, found a string").
 *
 * Paths are dotted field names ("metadata.name"); no array indexing.
 * Context: any thread. k32_json_use_allocator sets the CALLING thread's allocator for cJSON;
 * other threads keep theirs. Each block records the allocator it came from, so an object may
 * be freed on another thread; the allocator must then be thread-safe and outlive the object.
 */
#ifndef K32_JSON_H
#define K32_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/k32_alloc.h"
#include "base/k32_status.h"

/* Routes the calling thread's cJSON allocations through alloc (which must outlive every
 * object allocated from it). NULL restores the default heap allocator. */
void k32_json_use_allocator(const struct k32_allocator *alloc);

/* Installs kube32's cJSON hooks. Done before main by a constructor; call it first thing on a
 * platform that does not run constructors, before any thread or cJSON call. */
void k32_json_init(void);

/*
 * Parses text[0..len) into *out (free with cJSON_Delete). INVALID_ARGS with the byte offset
 * on a syntax error or trailing data, or when a string breaks k32_json_check_strings (the
 * message names the field); OUT_OF_RANGE when nesting passes K32_JSON_MAX_DEPTH;
 * NO_MEMORY when the allocator refuses.
 */
k32_status_t k32_json_parse(const char *text, size_t len, cJSON **out, struct k32_err *err);

/*
 * Typed getters. path is dotted ("spec.replicas") from obj. Each returns:
 *   K32_OK and the value;
 *   K32_ERR_NOT_FOUND  "<path>: required field is missing";
 *   K32_ERR_WRONG_TYPE "<path>: expected <type>, found <type>".
 * The _opt forms return K32_OK with the default when the field is missing or null.
 */
k32_status_t k32_json_get_str(const cJSON *obj, const char *path, const char **out,
			      struct k32_err *err);
k32_status_t k32_json_get_i64(const cJSON *obj, const char *path, int64_t *out,
			      struct k32_err *err);
k32_status_t k32_json_get_bool(const cJSON *obj, const char *path, bool *out, struct k32_err *err);
k32_status_t k32_json_get_obj(const cJSON *obj, const char *path, const cJSON **out,
			      struct k32_err *err);
k32_status_t k32_json_get_arr(const cJSON *obj, const char *path, const cJSON **out,
			      struct k32_err *err);
k32_status_t k32_json_get_str_opt(const cJSON *obj, const char *path, const char *dflt,
				  const char **out, struct k32_err *err);
k32_status_t k32_json_get_i64_opt(const cJSON *obj, const char *path, int64_t dflt, int64_t *out,
				  struct k32_err *err);
k32_status_t k32_json_get_bool_opt(const cJSON *obj, const char *path, bool dflt, bool *out,
				   struct k32_err *err);

/* What k32_utf8_check found. */
enum k32_utf8_fault {
	K32_UTF8_OK = 0,
	K32_UTF8_NUL,	  /* a NUL byte (C strings would end there) */
	K32_UTF8_INVALID, /* not UTF-8: bad lead or continuation byte, overlong form,
			   * surrogate code point, past U+10FFFF, or cut short */
};

/* Checks s[0..len) is UTF-8 without NUL; on a fault, *out_at (may be NULL) is its offset. */
enum k32_utf8_fault k32_utf8_check(const char *s, size_t len, size_t *out_at);

/* Short description of a fault for messages ("a NUL character", "invalid UTF-8"). */
const char *k32_utf8_fault_name(enum k32_utf8_fault fault);

/*
 * Checks every string (keys and values) of JSON text[0..len) before cJSON decodes it:
 * cJSON ends a string at a NUL, so "s\u0000zz" would become "s", and it copies bytes that
 * are not UTF-8 as they are. Refused: a NUL (raw or escaped as \u0000) and bytes that are
 * not UTF-8 (k32_utf8_check). K32_OK when clean (or when the text is malformed elsewhere:
 * the parser reports that); INVALID_ARGS with a message naming the field
 * ("metadata.name: string holds a NUL character (\u0000) at byte 23 of 80; ...").
 * out_field (may be NULL, cap bytes) receives the field's path ("spec.containers[0].name",
 * "data" for a bad key of data, "" at top level). One linear pass; no allocation.
 */
k32_status_t k32_json_check_strings(const char *text, size_t len, char *out_field, size_t cap,
				    struct k32_err *err);

/* The item at a dotted path, or NULL. */
const cJSON *k32_json_find(const cJSON *obj, const char *path);

/* Name of an item's type for messages ("string", "number", "object", ...). */
const char *k32_json_type_name(const cJSON *item);

#endif /* K32_JSON_H */
