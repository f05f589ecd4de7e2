/*
 * http_ws.h - WebSocket (RFC 6455) over an upgraded HTTP/1.1 stream: the opening handshake's
 * Sec-WebSocket-Accept and a frame codec that never allocates.
 *
 * The reader is incremental: bytes are fed as the socket hands them over, in pieces of any
 * size, and data payloads are passed on as they arrive (unmasked in the caller's buffer), so a
 * frame is never buffered whole; only a control frame (at most 125 bytes) is. Everything a
 * peer sends is checked: reserved bits and opcodes, the mask (a client must mask, a server
 * must not), minimal length encodings, fragmentation order, control frames whole and short,
 * close codes, and the bounds K32_HTTP_WS_FRAME_MAX (one frame's payload) and
 * K32_HTTP_WS_MESSAGE_MAX (one message, all its fragments). A violation returns the close
 * code to send (1002 protocol error, 1003 unsupported data, 1009 too big) and a message that
 * names the rule or the limit. Text messages are not checked for UTF-8 (their user, the
 * port-forward tunnel, takes binary messages only and refuses text).
 *
 * Context: any thread; a reader belongs to one connection.
 */
#ifndef K32_HTTP_WS_H
#define K32_HTTP_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_status.h"

/* Characters of a Sec-WebSocket-Accept value (base64 of a SHA-1), the NUL not counted. */
#define HTTP_WS_ACCEPT_LEN 28
/* The longest frame header: 2 bytes, an 8-byte length, a 4-byte mask. */
#define HTTP_WS_HEAD_MAX 14
/* The longest control frame payload (RFC 6455 5.5). */
#define HTTP_WS_CONTROL_MAX 125

/* Opcodes. */
#define HTTP_WS_OP_CONT	  0x0
#define HTTP_WS_OP_TEXT	  0x1
#define HTTP_WS_OP_BINARY 0x2
#define HTTP_WS_OP_CLOSE  0x8
#define HTTP_WS_OP_PING	  0x9
#define HTTP_WS_OP_PONG	  0xa

/* Close codes (RFC 6455 7.4.1). */
#define HTTP_WS_CLOSE_NORMAL	  1000
#define HTTP_WS_CLOSE_GOING_AWAY  1001
#define HTTP_WS_CLOSE_PROTOCOL	  1002
#define HTTP_WS_CLOSE_UNSUPPORTED 1003
#define HTTP_WS_CLOSE_TOO_BIG	  1009

/*
 * Sec-WebSocket-Accept for the client's Sec-WebSocket-Key: base64(SHA-1(key + the RFC's
 * GUID)). The key must be the base64 of 16 bytes (24 characters, "==" at the end); anything
 * else is K32_ERR_INVALID_ARGS with err saying so (the handshake is then refused, 400).
 */
k32_status_t http_ws_accept_key(const char *key, char out[HTTP_WS_ACCEPT_LEN + 1],
				struct k32_err *err);

/* Whether the comma-separated header value list (Sec-WebSocket-Protocol, Connection)
 * holds token, compared case-sensitively (subprotocols) or not (fold). */
bool http_ws_list_has(const char *list, const char *token, bool fold);

/* What the reader passes on. ctx is the sink's. Each returns 0 to go on, or the close code
 * to end the connection with (http_ws_read then returns K32_ERR_CANCELED). */
struct http_ws_sink {
	/* Payload bytes of a TEXT or BINARY message (opcode: the message's), in order, already
	 * unmasked; n may be 0; last: the message's final byte is in this piece. */
	uint16_t (*data)(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, bool last);
	/* A whole control frame: PING (answer with a PONG of the same payload), PONG, or
	 * CLOSE (code 0 when the frame had no payload; p, n: the reason). The reader takes
	 * nothing after a CLOSE. */
	uint16_t (*control)(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, uint16_t code);
	void *ctx;
};

struct http_ws_reader {
	bool server;	 /* reading a client's frames: each must be masked */
	bool closed;	 /* a CLOSE came: nothing more is read */
	bool in_payload; /* the current frame's header is whole: payload bytes come */
	uint8_t head[HTTP_WS_HEAD_MAX];
	uint8_t head_len;   /* header bytes gathered of the current frame */
	uint8_t opcode;	    /* the current frame's */
	bool fin;	    /* the current frame ends its message */
	uint8_t mask[4];    /* the current frame's mask key (zero when unmasked) */
	uint64_t left;	    /* payload bytes of the current frame still to come */
	uint64_t done;	    /* payload bytes of the current frame passed on (mask offset) */
	uint8_t msg_opcode; /* TEXT or BINARY while a fragmented message runs, else 0 */
	uint64_t msg_len;   /* bytes of the running message so far */
	uint8_t ctrl[HTTP_WS_CONTROL_MAX];
	uint8_t ctrl_len;    /* control payload gathered */
	uint16_t close_code; /* after a failed http_ws_read: the code to close with */
};

/* A reader for frames from a client (server true: masks required) or from a server. */
void http_ws_reader_init(struct http_ws_reader *r, bool server);

/*
 * Reads len bytes of the peer's stream; in is modified (payloads are unmasked in place).
 * K32_OK: all taken (a frame may be half read; feed the rest later). Otherwise the
 * connection must end: K32_ERR_CORRUPT (a protocol rule broken), K32_ERR_OUT_OF_RANGE (a
 * bound passed), K32_ERR_CANCELED (the sink asked to close, or bytes came after a CLOSE);
 * r->close_code says which close code to send and err why.
 */
k32_status_t http_ws_read(struct http_ws_reader *r, uint8_t *in, size_t len,
			  const struct http_ws_sink *sink, struct k32_err *err);

/*
 * Writes the header of a frame of len payload bytes into out and returns its length (2 to
 * HTTP_WS_HEAD_MAX). mask: NULL for a server's frame; a client passes its 4-byte key and
 * masks the payload itself with http_ws_mask.
 */
size_t http_ws_frame_head(uint8_t out[HTTP_WS_HEAD_MAX], uint8_t opcode, bool fin, uint64_t len,
			  const uint8_t *mask);

/* XORs n bytes at payload offset off with the 4-byte key (masking and unmasking alike). */
void http_ws_mask(uint8_t *p, size_t n, const uint8_t key[4], uint64_t off);

/*
 * A CLOSE frame with code and a reason (cut to fit 125 bytes) into out: its length (at most
 * 2 + HTTP_WS_CONTROL_MAX bytes: out must hold HTTP_WS_HEAD_MAX + HTTP_WS_CONTROL_MAX).
 */
size_t http_ws_close_frame(uint8_t *out, uint16_t code, const char *reason);

#endif
