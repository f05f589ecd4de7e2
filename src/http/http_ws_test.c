/*
 * http_ws_test.c - the WebSocket codec (http_ws.c): RFC 6455's handshake example, frames
 * written and read back at every length encoding, a fragmented message with a PING between
 * its fragments fed whole and a byte at a time, and every rule a hostile peer can break
 * (each with the close code the RFC asks for).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/http_ws.h"
#include "k32/k32_config.h"

/* What a test sink saw. */
struct seen {
	uint8_t data[4096];
	size_t data_len;
	int messages;	     /* "last" pieces */
	uint8_t last_opcode; /* of the data pieces */
	uint8_t ctrl_op[8];  /* control frames in order */
	uint8_t ctrl[8][126];
	size_t ctrl_len[8];
	uint16_t close_code;
	int ctrl_n;
	uint16_t stop_on_text; /* a close code to answer text with, 0 to take it */
};

static uint16_t seen_data(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, bool last)
{
	struct seen *s = ctx;
	if (opcode == HTTP_WS_OP_TEXT && s->stop_on_text)
		return s->stop_on_text;
	assert_true(s->data_len + n <= sizeof(s->data));
	memcpy(s->data + s->data_len, p, n);
	s->data_len += n;
	s->last_opcode = opcode;
	if (last)
		s->messages++;
	return 0;
}

static uint16_t seen_control(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, uint16_t code)
{
	struct seen *s = ctx;
	assert_true(s->ctrl_n < 8);
	s->ctrl_op[s->ctrl_n] = opcode;
	memcpy(s->ctrl[s->ctrl_n], p, n);
	s->ctrl_len[s->ctrl_n] = n;
	s->ctrl_n++;
	if (opcode == HTTP_WS_OP_CLOSE)
		s->close_code = code;
	return 0;
}

/* Appends a client frame (masked with key) of opcode/fin/payload to out; its length. */
static size_t client_frame(uint8_t *out, uint8_t opcode, bool fin, const void *payload, size_t n)
{
	static const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
	size_t hl = http_ws_frame_head(out, opcode, fin, n, key);
	if (n)
		memcpy(out + hl, payload, n);
	http_ws_mask(out + hl, n, key, 0);
	return hl + n;
}

static k32_status_t feed(struct http_ws_reader *r, struct seen *s, uint8_t *in, size_t len,
			 size_t step, struct k32_err *err)
{
	const struct http_ws_sink sink = {.data = seen_data, .control = seen_control, .ctx = s};
	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;
		k32_status_t st = http_ws_read(r, in + off, n, &sink, err);
		if (st)
			return st;
	}
	return K32_OK;
}

static void test_accept_key(void **state)
{
	(void)state;
	char out[HTTP_WS_ACCEPT_LEN + 1];
	struct k32_err err;
	/* the example of RFC 6455 section 1.3 */
	assert_int_equal(http_ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out, &err), K32_OK);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	static const char *const bad[] = {"",
					  "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZQ===",
					  "dGhlIHNhbXBsZSBub25j!Q==", "AAAAAAAAAAAAAAAAAAAAAAAA"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(http_ws_accept_key(bad[i], out, &err), K32_ERR_INVALID_ARGS);
		assert_non_null(strstr(err.msg, "Sec-WebSocket-Key"));
	}
	assert_int_equal(http_ws_accept_key(NULL, out, &err), K32_ERR_INVALID_ARGS);
}

static void test_list_has(void **state)
{
	(void)state;
	assert_true(
	    http_ws_list_has("SPDY/3.1+portforward.k8s.io", "SPDY/3.1+portforward.k8s.io", false));
	assert_true(http_ws_list_has("v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io ",
				     "SPDY/3.1+portforward.k8s.io", false));
	assert_false(http_ws_list_has("SPDY/3.1+portforward.k8s.io.x",
				      "SPDY/3.1+portforward.k8s.io", false));
	assert_false(
	    http_ws_list_has("spdy/3.1+portforward.k8s.io", "SPDY/3.1+portforward.k8s.io", false));
	assert_true(http_ws_list_has("keep-alive, upgrade", "Upgrade", true));
	assert_false(http_ws_list_has("", "a", false));
}

/* Every length encoding, written by a server and read back by a client reader. */
static void test_lengths_round_trip(void **state)
{
	(void)state;
	static uint8_t buf[70000 + HTTP_WS_HEAD_MAX];
	static const size_t lens[] = {0, 1, 125, 126, 127, 65535, 65536, 70000};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t hl = http_ws_frame_head(buf, HTTP_WS_OP_BINARY, true, lens[i], NULL);
		assert_int_equal(hl, lens[i] < 126 ? 2 : lens[i] <= 65535 ? 4 : 10);
		for (size_t j = 0; j < lens[i]; j++)
			buf[hl + j] = (uint8_t)(j * 7);
		struct http_ws_reader r;
		http_ws_reader_init(&r, false);
		struct seen *s = test_calloc(1, sizeof(*s));
		/* the sink keeps 4 KiB: count bytes only for the long ones */
		struct k32_err err;
		if (lens[i] <= sizeof(s->data)) {
			assert_int_equal(feed(&r, s, buf, hl + lens[i], 1000, &err), K32_OK);
			assert_int_equal(s->data_len, lens[i]);
			for (size_t j = 0; j < lens[i]; j++)
				assert_int_equal(s->data[j], (uint8_t)(j * 7));
			assert_int_equal(s->messages, 1);
		} else {
			/* only the header and the first 4 KiB: the frame is half read, OK */
			assert_int_equal(feed(&r, s, buf, hl + 4000, 997, &err), K32_OK);
			assert_int_equal(s->data_len, 4000);
			assert_int_equal(s->messages, 0);
			assert_true(r.in_payload);
		}
		test_free(s);
	}
	/* the close frame: code and a reason cut to fit 125 bytes */
	char reason[300];
	memset(reason, 'r', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = 0;
	size_t n = http_ws_close_frame(buf, 1002, reason);
	assert_int_equal(n, 2 + HTTP_WS_CONTROL_MAX);
	assert_int_equal(buf[0], 0x88);
	assert_int_equal(buf[1], HTTP_WS_CONTROL_MAX);
	assert_int_equal(buf[2], 1002 >> 8);
	assert_int_equal(buf[3], 1002 & 0xff);
}

/* A message in three fragments with a PING between them, whole and a byte at a time. */
static void test_fragments_and_ping(void **state)
{
	(void)state;
	uint8_t in[512];
	size_t n = 0;
	n += client_frame(in + n, HTTP_WS_OP_BINARY, false, "hello ", 6);
	n += client_frame(in + n, HTTP_WS_OP_PING, true, "p1", 2);
	n += client_frame(in + n, HTTP_WS_OP_CONT, false, "", 0);
	n += client_frame(in + n, HTTP_WS_OP_CONT, true, "world", 5);
	n += client_frame(in + n, HTTP_WS_OP_BINARY, true, "!", 1);
	n += client_frame(in + n, HTTP_WS_OP_CLOSE, true,
			  "\x03\xe8"
			  "bye",
			  5);
	const size_t steps[] = {1, 7, n};
	for (size_t si = 0; si < 3; si++) {
		size_t step = steps[si];
		uint8_t copy[512];
		memcpy(copy, in, n);
		struct http_ws_reader r;
		http_ws_reader_init(&r, true);
		struct seen *s = test_calloc(1, sizeof(*s));
		struct k32_err err;
		assert_int_equal(feed(&r, s, copy, n, step, &err), K32_OK);
		assert_int_equal(s->data_len, 12);
		assert_memory_equal(s->data, "hello world!", 12);
		assert_int_equal(s->messages, 2);
		assert_int_equal(s->last_opcode, HTTP_WS_OP_BINARY);
		assert_int_equal(s->ctrl_n, 2);
		assert_int_equal(s->ctrl_op[0], HTTP_WS_OP_PING);
		assert_int_equal(s->ctrl_len[0], 2);
		assert_memory_equal(s->ctrl[0], "p1", 2);
		assert_int_equal(s->ctrl_op[1], HTTP_WS_OP_CLOSE);
		assert_int_equal(s->close_code, 1000);
		assert_memory_equal(s->ctrl[1], "bye", 3);
		assert_true(r.closed);
		/* anything after the CLOSE is refused */
		uint8_t more[32];
		size_t m = client_frame(more, HTTP_WS_OP_BINARY, true, "x", 1);
		assert_int_equal(feed(&r, s, more, m, m, &err), K32_ERR_CANCELED);
		test_free(s);
	}
}

/* One hostile frame sequence: the status, close code and words of the error. */
static void expect_refused(const uint8_t *in, size_t n, bool server, k32_status_t want,
			   uint16_t code, const char *words)
{
	uint8_t copy[64];
	assert_true(n <= sizeof(copy));
	memcpy(copy, in, n);
	struct http_ws_reader r;
	http_ws_reader_init(&r, server);
	struct seen *s = test_calloc(1, sizeof(*s));
	s->stop_on_text = HTTP_WS_CLOSE_UNSUPPORTED;
	struct k32_err err;
	k32_err_clear(&err);
	assert_int_equal(feed(&r, s, copy, n, 1, &err), want);
	assert_int_equal(r.close_code, code);
	if (!strstr(err.msg, words))
		fail_msg("\"%s\" lacks \"%s\"", err.msg, words);
	test_free(s);
}

static void test_hostile(void **state)
{
	(void)state;
	uint8_t f[64];
	size_t n;
	/* unmasked client frame */
	n = http_ws_frame_head(f, HTTP_WS_OP_BINARY, true, 1, NULL);
	f[n++] = 'x';
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "not masked");
	/* a masked frame to a client */
	n = client_frame(f, HTTP_WS_OP_BINARY, true, "x", 1);
	expect_refused(f, n, false, K32_ERR_CORRUPT, 1002, "is masked");
	/* RSV bits */
	n = client_frame(f, HTTP_WS_OP_BINARY, true, "x", 1);
	f[0] |= 0x40;
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "reserved bits");
	/* reserved opcodes, data and control */
	n = client_frame(f, 0x3, true, "x", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "reserved opcode");
	n = client_frame(f, 0xb, true, "x", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "reserved opcode");
	/* a fragmented control frame; one over 125 bytes (length 126 in 16 bits) */
	n = client_frame(f, HTTP_WS_OP_PING, false, "x", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "fragmented");
	uint8_t h[] = {0x89, 0x80 | 126, 0, 126, 1, 2, 3, 4};
	expect_refused(h, sizeof(h), true, K32_ERR_CORRUPT, 1002, "over 125");
	/* a continuation with no message; a new message inside a fragmented one */
	n = client_frame(f, HTTP_WS_OP_CONT, true, "x", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "no message begun");
	n = client_frame(f, HTTP_WS_OP_BINARY, false, "x", 1);
	n += client_frame(f + n, HTTP_WS_OP_BINARY, true, "y", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "before the last one ended");
	/* lengths not in their shortest form, and the 64-bit top bit */
	uint8_t l16[] = {0x82, 0x80 | 126, 0, 5, 1, 2, 3, 4};
	expect_refused(l16, sizeof(l16), true, K32_ERR_CORRUPT, 1002, "shortest");
	uint8_t l64[] = {0x82, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4};
	expect_refused(l64, sizeof(l64), true, K32_ERR_CORRUPT, 1002, "shortest");
	uint8_t top[] = {0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4};
	expect_refused(top, sizeof(top), true, K32_ERR_CORRUPT, 1002, "top bit");
	/* a frame over K32_HTTP_WS_FRAME_MAX: 1009, refused at its header */
	uint64_t big = (uint64_t)K32_HTTP_WS_FRAME_MAX + 1;
	n = http_ws_frame_head(f, HTTP_WS_OP_BINARY, true, big, (const uint8_t *)"abcd");
	expect_refused(f, n, true, K32_ERR_OUT_OF_RANGE, 1009, "K32_HTTP_WS_FRAME_MAX");
	/* CLOSE with one byte; with a code that may not be sent */
	n = client_frame(f, HTTP_WS_OP_CLOSE, true, "\x03", 1);
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "1 byte");
	n = client_frame(f, HTTP_WS_OP_CLOSE, true, "\x03\xed", 2); /* 1005 */
	expect_refused(f, n, true, K32_ERR_CORRUPT, 1002, "may not be sent");
	/* the sink refuses text */
	n = client_frame(f, HTTP_WS_OP_TEXT, true, "hi", 2);
	expect_refused(f, n, true, K32_ERR_CANCELED, 1003, "1003");
}

/* A message of many frames passes K32_HTTP_WS_MESSAGE_MAX: 1009 at the frame that does. */
static void test_message_bound(void **state)
{
	(void)state;
	struct http_ws_reader r;
	http_ws_reader_init(&r, true);
	struct seen *s = test_calloc(1, sizeof(*s));
	const struct http_ws_sink sink = {.control = seen_control, .ctx = s};
	static uint8_t payload[K32_HTTP_WS_FRAME_MAX + HTTP_WS_HEAD_MAX];
	uint64_t sent = 0;
	k32_status_t st = K32_OK;
	struct k32_err err;
	int frames = 0;
	while (st == K32_OK && frames < 100) {
		size_t len = K32_HTTP_WS_FRAME_MAX;
		size_t hl =
		    http_ws_frame_head(payload, frames ? HTTP_WS_OP_CONT : HTTP_WS_OP_BINARY, false,
				       len, (const uint8_t *)"\0\0\0\0");
		memset(payload + hl, 'a', len);
		st = http_ws_read(&r, payload, hl + len, &sink, &err);
		if (st == K32_OK)
			sent += len;
		frames++;
	}
	assert_int_equal(st, K32_ERR_OUT_OF_RANGE);
	assert_int_equal(r.close_code, 1009);
	assert_true(sent <= K32_HTTP_WS_MESSAGE_MAX);
	assert_true(sent + K32_HTTP_WS_FRAME_MAX > K32_HTTP_WS_MESSAGE_MAX);
	assert_non_null(strstr(err.msg, "K32_HTTP_WS_MESSAGE_MAX"));
	test_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accept_key),
	    cmocka_unit_test(test_list_has),
	    cmocka_unit_test(test_lengths_round_trip),
	    cmocka_unit_test(test_fragments_and_ping),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_message_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
