/*
 * http_ws.c - WebSocket handshake key and frame codec (RFC 6455); see http_ws.h.
 *
 * The reader is a small state machine over the frame header (gathered byte by byte, at most
 * HTTP_WS_HEAD_MAX) and the payload (passed on in the pieces the socket gave, never held),
 * so its memory is the struct alone whatever the peer sends.
 */
#include "http/http_ws.h"

#include <inttypes.h>
#include <mbedtls/sha1.h>
#include <string.h>
#include <strings.h>

#include "base/k32_base64.h"
#include "k32/k32_config.h"

/* The GUID RFC 6455 4.2.2 appends to the key before hashing. */
static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

k32_status_t http_ws_accept_key(const char *key, char out[HTTP_WS_ACCEPT_LEN + 1],
				struct k32_err *err)
{
	out[0] = 0;
	size_t kl = key ? strlen(key) : 0;
	uint8_t raw[20];
	size_t raw_len = 0;
	if (kl != 24 || !k32_base64_valid(key) ||
	    k32_base64_decode(key, raw, sizeof(raw), &raw_len) || raw_len != 16)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "http",
				   "Sec-WebSocket-Key must be the base64 of 16 bytes (24 "
				   "characters), got %zu characters",
				   kl);
	char joined[24 + sizeof(ws_guid)];
	memcpy(joined, key, 24);
	memcpy(joined + 24, ws_guid, sizeof(ws_guid));
	uint8_t digest[20];
	if (mbedtls_sha1_ret((const unsigned char *)joined, 24 + sizeof(ws_guid) - 1, digest))
		return k32_err_set(err, K32_ERR_INTERNAL, "http",
				   "SHA-1 of the WebSocket key failed");
	k32_base64_encode(digest, sizeof(digest), out);
	return K32_OK;
}

bool http_ws_list_has(const char *list, const char *token, bool fold)
{
	size_t tl = strlen(token);
	const char *p = list;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ',')
			e++;
		const char *t = e;
		while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if ((size_t)(t - p) == tl &&
		    (fold ? !strncasecmp(p, token, tl) : !strncmp(p, token, tl)))
			return true;
		p = e;
	}
	return false;
}

void http_ws_mask(uint8_t *p, size_t n, const uint8_t key[4], uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= key[(off + i) & 3];
}

size_t http_ws_frame_head(uint8_t out[HTTP_WS_HEAD_MAX], uint8_t opcode, bool fin, uint64_t len,
			  const uint8_t *mask)
{
	uint8_t mbit = mask ? 0x80 : 0;
	size_t n = 2;
	out[0] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0f));
	if (len < 126) {
		out[1] = (uint8_t)(mbit | len);
	} else if (len <= 0xffff) {
		out[1] = mbit | 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		n = 4;
	} else {
		out[1] = mbit | 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		n = 10;
	}
	if (mask) {
		memcpy(out + n, mask, 4);
		n += 4;
	}
	return n;
}

size_t http_ws_close_frame(uint8_t *out, uint16_t code, const char *reason)
{
	size_t rl = reason ? strlen(reason) : 0;
	if (rl > HTTP_WS_CONTROL_MAX - 2)
		rl = HTTP_WS_CONTROL_MAX - 2;
	size_t n = http_ws_frame_head(out, HTTP_WS_OP_CLOSE, true, 2 + rl, NULL);
	out[n] = (uint8_t)(code >> 8);
	out[n + 1] = (uint8_t)code;
	if (rl)
		memcpy(out + n + 2, reason, rl);
	return n + 2 + rl;
}

void http_ws_reader_init(struct http_ws_reader *r, bool server)
{
	memset(r, 0, sizeof(*r));
	r->server = server;
}

static k32_status_t ws_fail(struct http_ws_reader *r, struct k32_err *err, k32_status_t st,
			    uint16_t code, const char *what)
{
	r->close_code = code;
	return k32_err_set(err, st, "http", "WebSocket: %s", what);
}

/* Header bytes the current frame needs, from its first two. */
static size_t ws_head_need(const struct http_ws_reader *r)
{
	uint8_t l7 = r->head[1] & 0x7f;
	return 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + ((r->head[1] & 0x80) ? 4 : 0);
}

static bool ws_close_code_ok(uint16_t c)
{
	/* 1004-1006 and 1015 are never sent; 1016-2999 are unassigned; 3000-4999 are
	 * registered or private */
	return (c >= 1000 && c <= 1014 && c != 1004 && c != 1005 && c != 1006) ||
	       (c >= 3000 && c <= 4999);
}

/* The whole header is in r->head: checks it and starts the payload. */
static k32_status_t ws_frame_begin(struct http_ws_reader *r, struct k32_err *err)
{
	uint8_t b0 = r->head[0], b1 = r->head[1];
	bool masked = b1 & 0x80;
	if (b0 & 0x70)
		return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
			       "a frame sets reserved bits (RSV1-3) with no extension agreed");
	uint8_t op = b0 & 0x0f;
	bool control = op & 0x08;
	if (op != HTTP_WS_OP_CONT && op != HTTP_WS_OP_TEXT && op != HTTP_WS_OP_BINARY &&
	    op != HTTP_WS_OP_CLOSE && op != HTTP_WS_OP_PING && op != HTTP_WS_OP_PONG)
		return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
			       "a frame uses a reserved opcode");
	if (masked != r->server)
		return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
			       r->server ? "a client's frame is not masked"
					 : "a server's frame is masked");
	uint64_t len = b1 & 0x7f;
	size_t at = 2;
	if (len == 126) {
		len = ((uint64_t)r->head[2] << 8) | r->head[3];
		at = 4;
		if (len < 126)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a frame length is not in its shortest encoding");
	} else if (len == 127) {
		len = 0;
		for (int i = 0; i < 8; i++)
			len = (len << 8) | r->head[2 + i];
		at = 10;
		if (len >> 63)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a 64-bit frame length has its top bit set");
		if (len <= 0xffff)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a frame length is not in its shortest encoding");
	}
	if (control) {
		if (!(b0 & 0x80))
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a control frame is fragmented");
		if (len > HTTP_WS_CONTROL_MAX)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a control frame carries over 125 bytes");
	} else {
		if (op == HTTP_WS_OP_CONT && !r->msg_opcode)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a continuation frame with no message begun");
		if (op != HTTP_WS_OP_CONT && r->msg_opcode)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a new message begins before the last one ended");
		if (len > K32_HTTP_WS_FRAME_MAX) {
			r->close_code = HTTP_WS_CLOSE_TOO_BIG;
			return k32_err_set(err, K32_ERR_OUT_OF_RANGE, "http",
					   "WebSocket: a frame of %" PRIu64
					   " bytes is over K32_HTTP_WS_FRAME_MAX (%u); send "
					   "smaller frames",
					   len, (unsigned)K32_HTTP_WS_FRAME_MAX);
		}
		uint64_t total = (op == HTTP_WS_OP_CONT ? r->msg_len : 0) + len;
		if (total > K32_HTTP_WS_MESSAGE_MAX) {
			r->close_code = HTTP_WS_CLOSE_TOO_BIG;
			return k32_err_set(err, K32_ERR_OUT_OF_RANGE, "http",
					   "WebSocket: a message of %" PRIu64
					   "+ bytes is over K32_HTTP_WS_MESSAGE_MAX (%u); send "
					   "smaller messages",
					   total, (unsigned)K32_HTTP_WS_MESSAGE_MAX);
		}
		if (op != HTTP_WS_OP_CONT)
			r->msg_opcode = op;
		r->msg_len = total;
	}
	r->opcode = op;
	r->fin = b0 & 0x80;
	if (masked)
		memcpy(r->mask, r->head + at, 4);
	else
		memset(r->mask, 0, 4);
	r->left = len;
	r->done = 0;
	r->ctrl_len = 0;
	r->in_payload = true;
	return K32_OK;
}

/* The current frame's payload is all passed on: ends it. */
static k32_status_t ws_frame_end(struct http_ws_reader *r, const struct http_ws_sink *sink,
				 struct k32_err *err)
{
	r->in_payload = false;
	r->head_len = 0;
	if (!(r->opcode & 0x08)) {
		if (r->fin) {
			r->msg_opcode = 0;
			r->msg_len = 0;
		}
		return K32_OK;
	}
	uint16_t code = 0;
	const uint8_t *reason = r->ctrl;
	size_t rl = r->ctrl_len;
	if (r->opcode == HTTP_WS_OP_CLOSE) {
		r->closed = true;
		if (r->ctrl_len == 1)
			return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
				       "a CLOSE frame carries 1 byte (a code is 2)");
		if (r->ctrl_len >= 2) {
			code = (uint16_t)((r->ctrl[0] << 8) | r->ctrl[1]);
			reason += 2;
			rl -= 2;
			if (!ws_close_code_ok(code))
				return ws_fail(r, err, K32_ERR_CORRUPT, HTTP_WS_CLOSE_PROTOCOL,
					       "a CLOSE frame carries a code that may not be sent");
		}
	}
	uint16_t stop = sink->control ? sink->control(sink->ctx, r->opcode, reason, rl, code) : 0;
	if (stop) {
		r->close_code = stop;
		return k32_err_set(err, K32_ERR_CANCELED, "http", "WebSocket: closing with code %u",
				   (unsigned)stop);
	}
	return K32_OK;
}

k32_status_t http_ws_read(struct http_ws_reader *r, uint8_t *in, size_t len,
			  const struct http_ws_sink *sink, struct k32_err *err)
{
	size_t i = 0;
	while (i < len) {
		if (r->closed) {
			r->close_code = HTTP_WS_CLOSE_PROTOCOL;
			return k32_err_set(err, K32_ERR_CANCELED, "http",
					   "WebSocket: %zu bytes came after the peer's CLOSE",
					   len - i);
		}
		if (!r->in_payload) {
			r->head[r->head_len++] = in[i++];
			if (r->head_len < 2 || r->head_len < ws_head_need(r))
				continue;
			k32_status_t st = ws_frame_begin(r, err);
			if (st)
				return st;
			if (r->left)
				continue;
			/* an empty frame: a data frame still tells its message's end */
			if (!(r->opcode & 0x08) && sink->data) {
				uint16_t stop =
				    sink->data(sink->ctx, r->msg_opcode, in + i, 0, r->fin);
				if (stop) {
					r->close_code = stop;
					return k32_err_set(err, K32_ERR_CANCELED, "http",
							   "WebSocket: closing with code %u",
							   (unsigned)stop);
				}
			}
			st = ws_frame_end(r, sink, err);
			if (st)
				return st;
			continue;
		}
		size_t n = len - i;
		if (n > r->left)
			n = (size_t)r->left;
		if (r->server)
			http_ws_mask(in + i, n, r->mask, r->done);
		if (r->opcode & 0x08) {
			/* fits: a control payload is at most HTTP_WS_CONTROL_MAX (checked) */
			memcpy(r->ctrl + r->ctrl_len, in + i, n);
			r->ctrl_len = (uint8_t)(r->ctrl_len + n);
		} else if (sink->data) {
			uint16_t stop =
			    sink->data(sink->ctx, r->msg_opcode, in + i, n, r->fin && n == r->left);
			if (stop) {
				r->close_code = stop;
				return k32_err_set(err, K32_ERR_CANCELED, "http",
						   "WebSocket: closing with code %u",
						   (unsigned)stop);
			}
		}
		r->left -= n;
		r->done += n;
		i += n;
		if (!r->left) {
			k32_status_t st = ws_frame_end(r, sink, err);
			if (st)
				return st;
		}
	}
	return K32_OK;
}
