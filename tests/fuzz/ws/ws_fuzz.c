/*
 * ws_fuzz.c - libFuzzer target for the WebSocket frame reader (http_ws.c).
 *
 * Byte 0 picks the mode. Even: the rest is a peer's byte stream (bit 1 of byte 0: read as a
 * server, masks required, or as a client), fed in pieces of varying size as a socket hands
 * them over: whatever it is, the reader must take it or refuse it with a close code the RFC
 * allows and a message, never hand on more payload than came in, never a control payload
 * over 125 bytes, never a message over K32_HTTP_WS_MESSAGE_MAX. Odd: the rest is a payload,
 * cut into fragments (sizes from its own bytes), masked and framed as a client would, with a
 * PING between fragments: the reader must give back exactly the payload, as one message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_ws.h"
#include "k32/k32_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	size_t data_bytes; /* payload handed on */
	uint64_t msg;	   /* bytes of the running message */
	uint8_t *copy;	   /* round trip: the payload as received */
	size_t copy_len, copy_cap;
	int messages, pings;
};

static uint16_t fz_data(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, bool last)
{
	struct fz *z = ctx;
	if (opcode != HTTP_WS_OP_TEXT && opcode != HTTP_WS_OP_BINARY)
		__builtin_trap();
	z->data_bytes += n;
	z->msg += n;
	if (z->msg > K32_HTTP_WS_MESSAGE_MAX)
		__builtin_trap();
	if (z->copy) {
		if (z->copy_len + n > z->copy_cap)
			__builtin_trap();
		memcpy(z->copy + z->copy_len, p, n);
		z->copy_len += n;
	}
	if (last) {
		z->msg = 0;
		z->messages++;
	}
	return 0;
}

static uint16_t fz_control(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, uint16_t code)
{
	struct fz *z = ctx;
	(void)p;
	(void)code;
	if (n > HTTP_WS_CONTROL_MAX)
		__builtin_trap();
	if (opcode == HTTP_WS_OP_PING)
		z->pings++;
	else if (opcode != HTTP_WS_OP_PONG && opcode != HTTP_WS_OP_CLOSE)
		__builtin_trap();
	return 0;
}

static void hostile(const uint8_t *data, size_t size, bool server)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return;
	memcpy(buf, data, size);
	struct http_ws_reader r;
	http_ws_reader_init(&r, server);
	struct fz z = {0};
	const struct http_ws_sink sink = {.data = fz_data, .control = fz_control, .ctx = &z};
	size_t off = 0, step = 1;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		struct k32_err err;
		k32_err_clear(&err);
		k32_status_t st = http_ws_read(&r, buf + off, n, &sink, &err);
		if (st) {
			if (r.close_code != HTTP_WS_CLOSE_PROTOCOL &&
			    r.close_code != HTTP_WS_CLOSE_TOO_BIG)
				__builtin_trap();
			if (!err.msg[0])
				__builtin_trap();
			break;
		}
		off += n;
		step = step * 5 % 97 + 1;
	}
	if (z.data_bytes > size)
		__builtin_trap();
	free(buf);
}

static void round_trip(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return;
	/* worst case: a 1-byte fragment each, with a PING frame after each */
	size_t cap = size * (1 + 2 * HTTP_WS_HEAD_MAX + 4) + 2 * HTTP_WS_HEAD_MAX;
	uint8_t *wire = malloc(cap);
	struct fz z = {0};
	z.copy = malloc(size ? size : 1);
	z.copy_cap = size;
	if (!wire || !z.copy)
		goto out;
	size_t w = 0, off = 0;
	bool first = true;
	do {
		/* the fragment's size from the payload itself: 1..32 bytes, or the rest */
		size_t n = off < size ? (size_t)(data[off] % 33) + 1 : 0;
		if (n > size - off || (off < size && data[off] == 0))
			n = size - off;
		uint8_t key[4] = {(uint8_t)off, (uint8_t)(off >> 8), 0x5a, (uint8_t)n};
		bool fin = off + n == size;
		w += http_ws_frame_head(wire + w, first ? HTTP_WS_OP_BINARY : HTTP_WS_OP_CONT, fin,
					n, key);
		memcpy(wire + w, data + off, n);
		http_ws_mask(wire + w, n, key, 0);
		w += n;
		off += n;
		first = false;
		if (!fin) { /* a PING between fragments, as a peer may send */
			w += http_ws_frame_head(wire + w, HTTP_WS_OP_PING, true, 1, key);
			wire[w] = (uint8_t)('p' ^ key[0]);
			w++;
		}
	} while (off < size);
	struct http_ws_reader r;
	http_ws_reader_init(&r, true);
	const struct http_ws_sink sink = {.data = fz_data, .control = fz_control, .ctx = &z};
	struct k32_err err;
	size_t piece = size % 7 + 1;
	for (size_t i = 0; i < w; i += piece) {
		size_t n = w - i < piece ? w - i : piece;
		if (http_ws_read(&r, wire + i, n, &sink, &err))
			__builtin_trap();
	}
	if (z.copy_len != size || (size && memcmp(z.copy, data, size)) || z.messages != 1 ||
	    r.in_payload || r.head_len)
		__builtin_trap();
out:
	free(wire);
	free(z.copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		round_trip(data + 1, size - 1);
	else
		hostile(data + 1, size - 1, !(data[0] & 2));
	return 0;
}
