/*
 * http_gzip.c - Content-Encoding: gzip for responses (zlib's deflate), the Accept-Encoding
 * test that decides it, and the client's inflate of such answers.
 *
 * Memory is bounded by the window and hash sizes in k32_config.h (K32_HTTP_GZIP_WINDOW_BITS,
 * K32_HTTP_GZIP_MEM_LEVEL): deflate needs (1 << (wbits + 2)) + (1 << (mlevel + 9)) bytes,
 * 32 KiB with the defaults (12, 5), taken from the C library for the call and freed at its
 * end. The output goes straight into the caller's capped k32_buf in slices, so nothing is
 * copied twice and a body that does not shrink is detected and refused.
 */
#include <string.h>

#include "http/http_int.h"

#if K32_HTTP_GZIP
#include <zlib.h>
#endif

#define GZIP_MOD "http"

/* Does the Accept-Encoding list name gzip (or *) with a q other than 0? */
bool http_accepts_gzip(struct k32_str list)
{
	struct k32_str rest = list, item;
	while (rest.len) {
		bool more = k32_str_cut(rest, ',', &item, &rest);
		struct k32_str coding, params;
		if (!k32_str_cut(item, ';', &coding, &params))
			params = (struct k32_str){"", 0};
		coding = k32_str_trim(coding);
		bool named =
		    http_str_ieq(coding, "gzip") || (coding.len == 1 && coding.p[0] == '*');
		if (named) {
			/* q=0, q=0.0, q=0.000: refused; any other q (or none) accepts */
			params = k32_str_trim(params);
			if (params.len >= 2 && (params.p[0] == 'q' || params.p[0] == 'Q') &&
			    params.p[1] == '=') {
				size_t i = 2;
				bool zero = i < params.len && params.p[i] == '0';
				for (i = 3; zero && i < params.len; i++)
					zero = params.p[i] == '.' || params.p[i] == '0';
				if (zero)
					return false;
			}
			return true;
		}
		if (!more)
			break;
	}
	return false;
}

bool http_request_accepts_gzip(const struct http_request *req)
{
	if (!K32_HTTP_GZIP) /* built without zlib: every answer goes uncompressed */
		return false;
	for (size_t i = 0; i < req->header_count; i++) {
		const struct http_header *h = &req->headers[i];
		if (http_str_ieq(h->name, "Accept-Encoding") && http_accepts_gzip(h->value))
			return true;
	}
	return false;
}

#if K32_HTTP_GZIP
/*
 * Room for the next slice of output, at most up to out's max_len: when under 512 bytes are
 * left, out first grows by `grow` bytes (capped at max_len). 0 when out is at max_len; *st
 * is set (and 0 returned) when growing failed.
 */
static size_t out_room(struct k32_buf *out, size_t grow, k32_status_t *st, struct k32_err *err)
{
	size_t room = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
	if (room < 512 && out->len < out->max_len) {
		if (grow > out->max_len - out->len)
			grow = out->max_len - out->len;
		*st = k32_buf_reserve(out, grow, err);
		if (*st)
			return 0;
		room = out->cap - out->len - 1;
	}
	return room > out->max_len - out->len ? out->max_len - out->len : room;
}

k32_status_t http_gzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err)
{
	z_stream z;
	size_t start = out->len;
	k32_status_t st = K32_OK;

	if (len > (size_t)UINT32_MAX)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, GZIP_MOD,
				   "gzip: %zu bytes is over zlib's 4 GiB per call; send it plain",
				   len);
	memset(&z, 0, sizeof(z));
	/* 16 + window bits: a gzip header and trailer instead of zlib's */
	int zr = deflateInit2(&z, K32_HTTP_GZIP_LEVEL, Z_DEFLATED, 16 + K32_HTTP_GZIP_WINDOW_BITS,
			      K32_HTTP_GZIP_MEM_LEVEL, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK)
		return k32_err_set(err, zr == Z_MEM_ERROR ? K32_ERR_NO_MEMORY : K32_ERR_INTERNAL,
				   GZIP_MOD, "gzip: deflateInit2 failed (%d); send the body plain",
				   zr);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	for (;;) {
		/* Slices of at most 16 KiB: never far past need. */
		size_t room = out_room(out, out->cap < 16384 ? 4096 : 16384, &st, err);
		if (st)
			break;
		if (room == 0) {
			st = k32_err_set(err, K32_ERR_NO_RESOURCES, GZIP_MOD,
					 "gzip: %s is full at %zu bytes; send the body plain",
					 out->what, out->max_len);
			break;
		}
		z.next_out = out->data + out->len;
		z.avail_out = (uInt)room;
		zr = deflate(&z, Z_FINISH);
		out->len += room - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			st = k32_err_set(err, K32_ERR_INTERNAL, GZIP_MOD,
					 "gzip: deflate failed (%d); send the body plain", zr);
			break;
		}
	}
	deflateEnd(&z);
	if (st) {
		out->len = start;
	}
	if (out->data)
		out->data[out->len] = '\0';
	return st;
}

k32_status_t http_gunzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err)
{
	z_stream z;
	size_t start = out->len;
	k32_status_t st = K32_OK;

	if (len > (size_t)UINT32_MAX)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, GZIP_MOD,
				   "gunzip: %zu bytes is over zlib's 4 GiB per call", len);
	memset(&z, 0, sizeof(z));
	int zr = inflateInit2(&z, 16 + MAX_WBITS); /* gzip only, any window */
	if (zr != Z_OK)
		return k32_err_set(err, zr == Z_MEM_ERROR ? K32_ERR_NO_MEMORY : K32_ERR_INTERNAL,
				   GZIP_MOD, "gunzip: inflateInit2 failed (%d)", zr);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	for (;;) {
		/* Doubling: an inflated body may be many times its input. */
		size_t room = out_room(out, out->cap < 16384 ? 4096 : out->cap, &st, err);
		if (st)
			break;
		if (room == 0) {
			st = k32_err_set(err, K32_ERR_NO_RESOURCES, GZIP_MOD,
					 "gunzip: the inflated %s passes its limit of %zu bytes",
					 out->what, out->max_len);
			break;
		}
		z.next_out = out->data + out->len;
		z.avail_out = (uInt)room;
		zr = inflate(&z, Z_NO_FLUSH);
		out->len += room - z.avail_out;
		if (zr == Z_STREAM_END) {
			if (z.avail_in)
				st = k32_err_set(err, K32_ERR_CORRUPT, GZIP_MOD,
						 "gunzip: %u bytes after the gzip member; the "
						 "sender's body is not one gzip stream",
						 z.avail_in);
			break;
		}
		if (zr == Z_BUF_ERROR && z.avail_in == 0) {
			st = k32_err_set(err, K32_ERR_CORRUPT, GZIP_MOD,
					 "gunzip: the gzip stream is truncated after %zu bytes",
					 len);
			break;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			st = k32_err_set(
			    err, zr == Z_MEM_ERROR ? K32_ERR_NO_MEMORY : K32_ERR_CORRUPT, GZIP_MOD,
			    "gunzip: not a valid gzip stream (%s)", z.msg ? z.msg : "zlib error");
			break;
		}
	}
	inflateEnd(&z);
	if (st)
		out->len = start;
	if (out->data)
		out->data[out->len] = '\0';
	return st;
}

#else /* !K32_HTTP_GZIP: a board build without zlib */

k32_status_t http_gzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err)
{
	(void)in;
	(void)out;
	return k32_err_set(err, K32_ERR_NOT_SUPPORTED, GZIP_MOD,
			   "gzip of %zu bytes: built without zlib (K32_HTTP_GZIP=0); send it plain",
			   len);
}

k32_status_t http_gunzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err)
{
	(void)in;
	(void)out;
	return k32_err_set(err, K32_ERR_NOT_SUPPORTED, GZIP_MOD,
			   "gunzip of %zu bytes: built without zlib (K32_HTTP_GZIP=0)", len);
}

#endif /* K32_HTTP_GZIP */
