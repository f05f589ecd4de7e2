/*
 * k32_buf.c - capped growable buffer and string views.
 */
#include "base/k32_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void k32_buf_init(struct k32_buf *buf, const struct k32_allocator *alloc, size_t max_len,
		  const char *what)
{
	buf->data = NULL;
	buf->len = 0;
	buf->cap = 0;
	buf->max_len = max_len;
	buf->what = what ? what : "buffer";
	buf->alloc = alloc;
}

void k32_buf_fini(struct k32_buf *buf)
{
	k32_free(buf->alloc, buf->data, buf->cap);
	buf->data = NULL;
	buf->len = 0;
	buf->cap = 0;
}

void k32_buf_reset(struct k32_buf *buf)
{
	buf->len = 0;
	if (buf->data)
		buf->data[0] = '\0';
}

k32_status_t k32_buf_reserve(struct k32_buf *buf, size_t extra, struct k32_err *err)
{
	size_t need;
	size_t new_cap;
	uint8_t *p;

	if (extra > buf->max_len || buf->len > buf->max_len - extra)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, "base",
				   "%s would grow to %zu bytes, over its limit of %zu bytes",
				   buf->what, buf->len + extra, buf->max_len);
	need = buf->len + extra + 1; /* + NUL */
	if (need <= buf->cap)
		return K32_OK;
	new_cap = buf->cap ? buf->cap : 64;
	while (new_cap < need)
		new_cap *= 2;
	if (new_cap > buf->max_len + 1)
		new_cap = buf->max_len + 1;
	p = k32_realloc(buf->alloc, buf->data, buf->cap, new_cap);
	if (!p)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "base",
				   "%s: out of memory growing to %zu bytes", buf->what, new_cap);
	buf->data = p;
	buf->cap = new_cap;
	return K32_OK;
}

k32_status_t k32_buf_append(struct k32_buf *buf, const void *data, size_t len, struct k32_err *err)
{
	k32_status_t st = k32_buf_reserve(buf, len, err);

	if (st != K32_OK)
		return st;
	if (len)
		memcpy(buf->data + buf->len, data, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
	return K32_OK;
}

k32_status_t k32_buf_append_str(struct k32_buf *buf, const char *s, struct k32_err *err)
{
	return k32_buf_append(buf, s, strlen(s), err);
}

k32_status_t k32_buf_printf(struct k32_buf *buf, struct k32_err *err, const char *fmt, ...)
{
	va_list ap;
	int n;
	k32_status_t st;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "base", "%s: bad format string",
				   buf->what);
	st = k32_buf_reserve(buf, (size_t)n, err);
	if (st != K32_OK)
		return st;
	va_start(ap, fmt);
	vsnprintf((char *)buf->data + buf->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t)n;
	return K32_OK;
}

void k32_buf_consume(struct k32_buf *buf, size_t n)
{
	if (n >= buf->len) {
		k32_buf_reset(buf);
		return;
	}
	memmove(buf->data, buf->data + n, buf->len - n);
	buf->len -= n;
	buf->data[buf->len] = '\0';
}

const char *k32_buf_cstr(const struct k32_buf *buf)
{
	return buf->data ? (const char *)buf->data : "";
}

/* ---- string views ---------------------------------------------------------------------- */

struct k32_str k32_str_from(const char *cstr)
{
	struct k32_str s = {cstr, cstr ? strlen(cstr) : 0};

	return s;
}

bool k32_str_eq(struct k32_str a, struct k32_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool k32_str_eq_cstr(struct k32_str a, const char *cstr)
{
	return k32_str_eq(a, k32_str_from(cstr));
}

bool k32_str_has_prefix(struct k32_str s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.len >= n && (n == 0 || memcmp(s.p, prefix, n) == 0);
}

bool k32_str_cut(struct k32_str s, char sep, struct k32_str *out_head, struct k32_str *out_tail)
{
	const char *hit = s.len ? memchr(s.p, sep, s.len) : NULL;

	if (!hit) {
		*out_head = s;
		out_tail->p = s.p ? s.p + s.len : NULL;
		out_tail->len = 0;
		return false;
	}
	out_head->p = s.p;
	out_head->len = (size_t)(hit - s.p);
	out_tail->p = hit + 1;
	out_tail->len = s.len - out_head->len - 1;
	return true;
}

struct k32_str k32_str_trim(struct k32_str s)
{
	while (s.len && (s.p[0] == ' ' || s.p[0] == '\t')) {
		s.p++;
		s.len--;
	}
	while (s.len && (s.p[s.len - 1] == ' ' || s.p[s.len - 1] == '\t'))
		s.len--;
	return s;
}

bool k32_str_to_u64(struct k32_str s, uint64_t *out)
{
	uint64_t v = 0;

	if (s.len == 0)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned d = (unsigned)(s.p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool k32_str_copy(struct k32_str s, char *dst, size_t cap)
{
	size_t n;

	if (cap == 0)
		return false;
	n = s.len < cap - 1 ? s.len : cap - 1;
	if (n)
		memcpy(dst, s.p, n);
	dst[n] = '\0';
	return n == s.len;
}
