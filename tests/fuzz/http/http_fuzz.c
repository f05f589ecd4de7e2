/*
 * http_fuzz.c - fuzz target for HTTP message parsing (src/http/http_parse.c) and the
 * request helpers. The input is split into reads at points chosen by its first byte (so
 * the incremental paths run: header names and values cut across reads, bodies compacted),
 * parsed as a pipeline of up to 8 requests with a small body limit; then the same bytes are
 * parsed as a response with a streaming body consumer; each request target goes through
 * the query helpers. The bytes are also read as an Accept-Encoding value, inflated as a
 * gzip body, and gzipped (which must inflate back to them). Nothing may crash, leak or read out of
 * bounds.
 *
 * Built with libFuzzer when K32_FUZZ=ON; http_fuzz_replay.c runs the seed corpus under ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "http/http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static k32_status_t sink(void *ctx, const uint8_t *d, size_t len)
{
	size_t *total = ctx;

	(void)d;
	*total += len;
	return *total > 1u << 20 ? K32_ERR_NO_RESOURCES : K32_OK;
}

static void query_helpers(struct k32_str target)
{
	struct k32_str path, query, rest, k, v;
	char out[64];

	if (!k32_str_cut(target, '?', &path, &query))
		return;
	rest = query;
	for (int i = 0; i < 64 && http_query_next(&rest, &k, &v); i++)
		http_url_decode(v, true, out, sizeof(out), NULL);
	http_query_get(query, "watch", out, sizeof(out), NULL);
	http_url_decode(path, false, out, sizeof(out), NULL);
	/* the entry check: a value it passes must then decode into a buffer of its limit + 1 */
	static const char *const choices[] = {"All", "Strict", NULL};
	static const struct http_qspec specs[] = {
	    {"watch", HTTP_Q_BOOL, 8, NULL, NULL},
	    {"limit", HTTP_Q_UINT, 6, NULL, NULL},
	    {"labelSelector", HTTP_Q_TEXT, 40, "SEL", NULL},
	    {"dryRun", HTTP_Q_CHOICE, 8, NULL, choices},
	};
	struct http_qfault fault;
	char msg[256];
	if (http_query_check(query, specs, 4, &fault) == K32_OK) {
		char sel[41];
		k32_status_t st = http_query_get(query, "labelSelector", sel, sizeof(sel), NULL);
		if (st != K32_OK && st != K32_ERR_NOT_FOUND)
			abort(); /* checked as fitting, yet did not fit: the check is wrong */
	}
	http_qfault_message(&fault, msg, sizeof(msg));
}

/* Feeds in->data[0..size) to mp in reads of `step` bytes. */
static void run(enum http_parser_type type, const uint8_t *data, size_t size, size_t step)
{
	const struct k32_allocator *a = k32_default_allocator();
	struct k32_buf in, body;
	struct http_msgp *mp = k32_calloc(a, sizeof(*mp));
	size_t off = 0, streamed = 0;
	int messages = 0;

	if (!mp)
		return;
	k32_buf_init(&in, a, 64 * 1024, "fuzz input");
	k32_buf_init(&body, a, 4096, "fuzz body");
	http_msgp_init(mp, type, &in, 2048, 4096, type == HTTP_REQUEST ? &body : NULL);
	if (type == HTTP_RESPONSE) {
		mp->on_data = sink;
		mp->data_ctx = &streamed;
	}
	while (messages < 8) {
		size_t n = size - off < step ? size - off : step;

		if (n > 0 && k32_buf_append(&in, data + off, n, NULL) != K32_OK)
			break;
		off += n;
		if (http_msgp_feed(mp, NULL) != K32_OK)
			break;
		if (mp->complete) {
			if (type == HTTP_REQUEST) {
				struct http_request req = {0};

				req.target = http_msgp_str(mp, mp->url_off, mp->url_len);
				query_helpers(req.target);
				for (uint32_t i = 0; i < mp->header_count; i++)
					http_str_ieq(http_msgp_str(mp, mp->hdr[i].name_off,
								   mp->hdr[i].name_len),
						     "authorization");
			}
			messages++;
			k32_buf_consume(&in, http_msgp_consumed(mp));
			k32_buf_reset(&body);
			http_msgp_init(mp, type, &in, 2048, 4096,
				       type == HTTP_REQUEST ? &body : NULL);
			if (type == HTTP_RESPONSE) {
				mp->on_data = sink;
				mp->data_ctx = &streamed;
			}
			continue;
		}
		if (off >= size) {
			http_msgp_eof(mp, NULL);
			break;
		}
	}
	k32_buf_fini(&in);
	k32_buf_fini(&body);
	k32_free(a, mp, sizeof(*mp));
}

/* Accept-Encoding parsing, and gzip of the bytes inflating back to them exactly. */
static void gzip_round_trip(const uint8_t *data, size_t size)
{
	static uint8_t back[1 << 16];
	struct k32_buf z;
	z_stream s;

	(void)http_accepts_gzip((struct k32_str){(const char *)data, size});
	/* the bytes as a gzip body a client inflates (capped as a response would be) */
	k32_buf_init(&z, k32_default_allocator(), 1u << 20, "fuzz gunzip");
	(void)http_gunzip(data, size, &z, NULL);
	k32_buf_fini(&z);
	if (size > sizeof(back))
		return;
	k32_buf_init(&z, k32_default_allocator(), size + 64, "fuzz gzip");
	if (http_gzip(data, size, &z, NULL) == K32_OK) {
		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)
			abort();
		s.next_in = z.data;
		s.avail_in = (uInt)z.len;
		s.next_out = back;
		s.avail_out = sizeof(back);
		if (inflate(&s, Z_FINISH) != Z_STREAM_END || sizeof(back) - s.avail_out != size ||
		    (size && memcmp(back, data, size)))
			abort(); /* what gzip wrote does not inflate to the input */
		inflateEnd(&s);
	}
	k32_buf_fini(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step;

	if (size < 1)
		return 0;
	gzip_round_trip(data + 1, size - 1);
	step = (size_t)(data[0] % 64) + 1;
	run(HTTP_REQUEST, data + 1, size - 1, step);
	run(HTTP_REQUEST, data + 1, size - 1, size);
	run(HTTP_RESPONSE, data + 1, size - 1, step);
	return 0;
}
