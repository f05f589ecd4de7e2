/*
 * k32_buf.h - a growable byte buffer with a hard cap, and string views.
 *
 * A k32_buf grows through its allocator (doubling) but never beyond max_len: an append that
 * would pass it fails with K32_ERR_NO_RESOURCES naming the cap, and the buffer is unchanged.
 * The content is always NUL-terminated (the NUL is not counted in len) so it can be handed to
 * C string functions.
 *
 * A k32_str is a non-owning (pointer, length) view; it is not NUL-terminated.
 * Context: no locks; one owner per buffer.
 */
#ifndef K32_BUF_H
#define K32_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_status.h"

struct k32_buf {
	uint8_t *data;			   /* len bytes + NUL; NULL until the first append */
	size_t len;			   /* bytes used */
	size_t cap;			   /* bytes allocated (including room for the NUL) */
	size_t max_len;			   /* hard cap on len */
	const char *what;		   /* name used in errors ("response body") */
	const struct k32_allocator *alloc; /* where data comes from */
};

/* Empty buffer; allocates nothing yet. what names the buffer in error messages. */
void k32_buf_init(struct k32_buf *buf, const struct k32_allocator *alloc, size_t max_len,
		  const char *what);
/* Frees the data. The buffer can be reused after k32_buf_init. */
void k32_buf_fini(struct k32_buf *buf);
/* Empties the buffer, keeping its allocation. */
void k32_buf_reset(struct k32_buf *buf);
/* Makes room for extra more bytes. NO_RESOURCES past max_len; NO_MEMORY if the allocator
 * refuses. */
k32_status_t k32_buf_reserve(struct k32_buf *buf, size_t extra, struct k32_err *err);
k32_status_t k32_buf_append(struct k32_buf *buf, const void *data, size_t len, struct k32_err *err);
k32_status_t k32_buf_append_str(struct k32_buf *buf, const char *s, struct k32_err *err);
k32_status_t k32_buf_printf(struct k32_buf *buf, struct k32_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Removes the first n bytes (n <= len), moving the rest down. */
void k32_buf_consume(struct k32_buf *buf, size_t n);
/* The content as a C string ("" when empty). */
const char *k32_buf_cstr(const struct k32_buf *buf);

/* ---- string views ---------------------------------------------------------------------- */

struct k32_str {
	const char *p; /* first byte; may be NULL when len is 0 */
	size_t len;    /* bytes */
};

struct k32_str k32_str_from(const char *cstr);
bool k32_str_eq(struct k32_str a, struct k32_str b);
bool k32_str_eq_cstr(struct k32_str a, const char *cstr);
bool k32_str_has_prefix(struct k32_str s, const char *prefix);
/* Splits s at the first sep: *head before it, *tail after; false (head = s, tail empty)
 * when sep is absent. */
bool k32_str_cut(struct k32_str s, char sep, struct k32_str *out_head, struct k32_str *out_tail);
/* Removes leading and trailing spaces and tabs. */
struct k32_str k32_str_trim(struct k32_str s);
/* Parses a whole decimal uint64; false on empty input, junk or overflow. */
bool k32_str_to_u64(struct k32_str s, uint64_t *out);
/* Copies into dst (cap bytes incl. NUL); false if it had to truncate. */
bool k32_str_copy(struct k32_str s, char *dst, size_t cap);

#endif /* K32_BUF_H */
