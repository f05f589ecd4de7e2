/*
 * http_parse.c - incremental HTTP/1.x message parsing over http-parser, with our limits.
 *
 * http-parser is fed the raw bytes of the input buffer that it has not seen. Its data
 * callbacks hand out pointers into that buffer; the request target and the headers are kept
 * as offsets (a callback may come in several pieces when the bytes arrived in several reads:
 * the pieces are contiguous in the buffer, so a piece extends the previous one). The
 * parser is paused in on_message_complete, so bytes of a pipelined next message stay in
 * the buffer, unparsed. Body pieces are copied out at once and their bytes dropped from
 * the buffer, so a large body never sits twice in memory.
 *
 * Limits: the head (request line and headers) may not pass max_header_bytes (431), nor
 * K32_HTTP_MAX_HEADERS lines (431); the body may not pass max_body_bytes (413, checked
 * against a declared Content-Length before any body byte is read). http-parser's own
 * header limit (80 KiB, compiled into Debian's library) is above ours.
 */
#include "http/http_int.h"

#include <string.h>

static struct http_msgp *mp_of(http_parser *p)
{
	return p->data;
}

static uint32_t off_of(struct http_msgp *mp, const char *at)
{
	return (uint32_t)((const uint8_t *)at - mp->in->data);
}

static void keep_to(struct http_msgp *mp, uint32_t off, uint32_t len)
{
	if (off + len > mp->head_keep)
		mp->head_keep = off + len;
}

static int on_begin(http_parser *p)
{
	mp_of(p)->begun = true;
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct http_msgp *mp = mp_of(p);

	if (mp->url_len == 0)
		mp->url_off = off_of(mp, at);
	mp->url_len += (uint32_t)len;
	keep_to(mp, mp->url_off, mp->url_len);
	return 0;
}

static int too_many_headers(struct http_msgp *mp)
{
	mp->error_status = 431;
	return -1;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct http_msgp *mp = mp_of(p);
	struct http_hdr_off *h;

	if (mp->header_count == 0 || mp->in_value) {
		if (mp->header_count >= K32_HTTP_MAX_HEADERS)
			return too_many_headers(mp);
		h = &mp->hdr[mp->header_count++];
		h->name_off = off_of(mp, at);
		h->name_len = 0;
		h->val_off = h->name_off;
		h->val_len = 0;
		mp->in_value = false;
	}
	h = &mp->hdr[mp->header_count - 1];
	h->name_len += (uint32_t)len;
	keep_to(mp, h->name_off, h->name_len);
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct http_msgp *mp = mp_of(p);
	struct http_hdr_off *h;

	if (mp->header_count == 0)
		return 0; /* cannot happen: http-parser sends a field first */
	h = &mp->hdr[mp->header_count - 1];
	if (!mp->in_value) {
		h->val_off = off_of(mp, at);
		h->val_len = 0;
		mp->in_value = true;
	}
	h->val_len += (uint32_t)len;
	keep_to(mp, h->val_off, h->val_len);
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct http_msgp *mp = mp_of(p);

	mp->headers_done = true;
	if (mp->head_keep > mp->max_header_bytes) {
		/* The whole head arrived in one read, so the incremental check did not fire. */
		mp->error_status = 431;
		return -1;
	}
	if (p->http_major != 1) {
		mp->error_status = 505;
		return -1;
	}
	if ((p->flags & F_CONTENTLENGTH) && p->content_length > mp->max_body_bytes) {
		mp->error_status = 413;
		return -1;
	}
	if (mp->body && (p->flags & F_CONTENTLENGTH) && p->content_length > 0) {
		/* Reserve up front, but at most HTTP_BODY_PRERESERVE: a client that declares
		 * 3 MiB and then trickles must not make the server hold 3 MiB at once. */
		size_t want = p->content_length < HTTP_BODY_PRERESERVE ? (size_t)p->content_length
								       : HTTP_BODY_PRERESERVE;

		if (k32_buf_reserve(mp->body, want, NULL) != K32_OK) {
			mp->error_status = 413;
			return -1;
		}
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct http_msgp *mp = mp_of(p);

	if (len > mp->max_body_bytes - mp->body_len) {
		mp->error_status = 413;
		return -1;
	}
	mp->body_len += len;
	if (mp->body) {
		if (k32_buf_append(mp->body, at, len, NULL) != K32_OK) {
			mp->error_status = 413;
			return -1;
		}
		return 0;
	}
	if (mp->on_data) {
		k32_status_t st = mp->on_data(mp->data_ctx, (const uint8_t *)at, len);

		if (st != K32_OK) {
			mp->data_status = st;
			return -1;
		}
	}
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct http_msgp *mp = mp_of(p);

	mp->complete = true;
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings parse_settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_msgp_init(struct http_msgp *mp, enum http_parser_type type, struct k32_buf *in,
		    size_t max_header_bytes, size_t max_body_bytes, struct k32_buf *body)
{
	memset(mp, 0, offsetof(struct http_msgp, hdr));
	mp->header_count = 0;
	http_parser_init(&mp->p, type);
	mp->p.data = mp;
	mp->in = in;
	mp->max_header_bytes = max_header_bytes;
	mp->max_body_bytes = max_body_bytes;
	mp->body = body;
	mp->in_value = false;
	mp->begun = false;
	mp->headers_done = false;
	mp->complete = false;
	mp->error_status = 0;
	mp->data_status = K32_OK;
	mp->body_len = 0;
	mp->on_data = NULL;
	mp->data_ctx = NULL;
}

/* Drops body bytes the parser has passed: [head_keep, parsed). */
static void compact(struct http_msgp *mp)
{
	size_t drop;

	if (!mp->headers_done || mp->parsed <= mp->head_keep)
		return;
	drop = mp->parsed - mp->head_keep;
	memmove(mp->in->data + mp->head_keep, mp->in->data + mp->parsed, mp->in->len - mp->parsed);
	mp->in->len -= drop;
	mp->in->data[mp->in->len] = 0;
	mp->parsed = mp->head_keep;
}

static k32_status_t parse_error(struct http_msgp *mp, struct k32_err *err)
{
	enum http_errno e = HTTP_PARSER_ERRNO(&mp->p);

	if (mp->data_status != K32_OK)
		return k32_err_set(err, mp->data_status, HTTP_MOD,
				   "body consumer stopped the response (%s)",
				   k32_status_name(mp->data_status));
	if (mp->error_status == 431)
		return k32_err_set(
		    err, K32_ERR_OUT_OF_RANGE, HTTP_MOD,
		    "request head over %zu bytes or %d header lines (max_header_bytes, "
		    "K32_HTTP_MAX_HEADERS); send fewer or shorter headers",
		    mp->max_header_bytes, K32_HTTP_MAX_HEADERS);
	if (mp->error_status == 505) {
		mp->error_status = 400;
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "HTTP/%u.%u is not supported; use HTTP/1.1", mp->p.http_major,
				   mp->p.http_minor);
	}
	if (mp->error_status == 413)
		return k32_err_set(err, K32_ERR_OUT_OF_RANGE, HTTP_MOD,
				   "body over %zu bytes (max_body_bytes); send a smaller body",
				   mp->max_body_bytes);
	mp->error_status = 400;
	return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
			   "malformed HTTP message at byte %zu: %s (%s)", mp->parsed,
			   http_errno_description(e), http_errno_name(e));
}

k32_status_t http_msgp_feed(struct http_msgp *mp, struct k32_err *err)
{
	while (!mp->complete && mp->parsed < mp->in->len) {
		size_t avail = mp->in->len - mp->parsed;
		size_t n = http_parser_execute(&mp->p, &parse_settings,
					       (const char *)mp->in->data + mp->parsed, avail);
		enum http_errno e = HTTP_PARSER_ERRNO(&mp->p);

		mp->parsed += n;
		if (e == HPE_PAUSED) {
			/* Only on_message_complete pauses; leave it paused. */
			break;
		}
		if (e != HPE_OK)
			return parse_error(mp, err);
		if (mp->p.upgrade) {
			/* Upgrade requests are not supported: the request is complete here. */
			mp->complete = true;
			break;
		}
		compact(mp);
		if (n == 0)
			break;
	}
	if (!mp->complete && !mp->headers_done && mp->parsed > mp->max_header_bytes) {
		mp->error_status = 431;
		return parse_error(mp, err);
	}
	compact(mp);
	return K32_OK;
}

k32_status_t http_msgp_eof(struct http_msgp *mp, struct k32_err *err)
{
	enum http_errno e;

	if (mp->complete)
		return K32_OK;
	http_parser_execute(&mp->p, &parse_settings, NULL, 0);
	e = HTTP_PARSER_ERRNO(&mp->p);
	if (e != HPE_OK && e != HPE_PAUSED)
		return parse_error(mp, err);
	if (!mp->complete)
		return k32_err_set(
		    err, K32_ERR_PEER_CLOSED, HTTP_MOD,
		    "connection closed before the message was complete (%zu bytes parsed)",
		    mp->parsed);
	return K32_OK;
}

struct k32_str http_msgp_str(const struct http_msgp *mp, uint32_t off, uint32_t len)
{
	struct k32_str s = {(const char *)mp->in->data + off, len};

	return s;
}
