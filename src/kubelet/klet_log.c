/*
 * klet_log.c - a pod's log ring: the last K32_KLET_LOG_RING_BYTES bytes of its log lines.
 *
 * Each entry is a header (sequence number, wall seconds, length) and the text, stored
 * circularly; when a new line does not fit, whole lines are dropped from the head. A line
 * is never split across an eviction, so a reader always sees complete lines. Sequence
 * numbers grow per pod across restarts, which lets a follower (`kubectl logs -f`) ask for
 * "lines after N". Callers hold the kubelet's lock.
 */
#include <stdio.h>
#include <string.h>

#include "kubelet/klet_int.h"

#define HDR 18u /* seq 8 + wall seconds 8 + len 2 */

k32_status_t klet_ring_init(struct klet_ring *r, const struct k32_allocator *a)
{
	memset(r, 0, sizeof(*r));
	r->buf = k32_alloc(a, K32_KLET_LOG_RING_BYTES);
	return r->buf ? K32_OK : K32_ERR_NO_MEMORY;
}

void klet_ring_fini(struct klet_ring *r, const struct k32_allocator *a)
{
	k32_free(a, r->buf, K32_KLET_LOG_RING_BYTES);
	memset(r, 0, sizeof(*r));
}

void klet_ring_reset(struct klet_ring *r)
{
	r->head = 0;
	r->used = 0;
	r->lines = 0;
}

static void ring_put(struct klet_ring *r, size_t off, const void *src, size_t len)
{
	const uint8_t *s = src;
	off %= K32_KLET_LOG_RING_BYTES;
	size_t first = K32_KLET_LOG_RING_BYTES - off;
	if (first > len)
		first = len;
	memcpy(r->buf + off, s, first);
	memcpy(r->buf, s + first, len - first);
}

static void ring_get(const struct klet_ring *r, size_t off, void *dst, size_t len)
{
	uint8_t *d = dst;
	off %= K32_KLET_LOG_RING_BYTES;
	size_t first = K32_KLET_LOG_RING_BYTES - off;
	if (first > len)
		first = len;
	memcpy(d, r->buf + off, first);
	memcpy(d + first, r->buf, len - first);
}

/* Header of the entry at off. */
static void ring_hdr(const struct klet_ring *r, size_t off, uint64_t *seq, uint64_t *wall,
		     uint16_t *len)
{
	uint8_t h[HDR];
	ring_get(r, off, h, HDR);
	memcpy(seq, h, 8);
	memcpy(wall, h + 8, 8);
	memcpy(len, h + 16, 2);
}

static void ring_drop_head(struct klet_ring *r)
{
	uint64_t seq, wall;
	uint16_t len;
	ring_hdr(r, r->head, &seq, &wall, &len);
	size_t n = HDR + len;
	r->head = (r->head + n) % K32_KLET_LOG_RING_BYTES;
	r->used -= n;
	r->lines--;
	r->dropped++;
}

void klet_ring_append(struct klet_ring *r, uint64_t seq, uint64_t wall_s, const char *text,
		      size_t len)
{
	char line[K32_KLET_LOG_LINE_MAX];
	if (!r->buf) {
		r->dropped++;
		return;
	}
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len > K32_KLET_LOG_LINE_MAX) {
		memcpy(line, text, K32_KLET_LOG_LINE_MAX - 3);
		memcpy(line + K32_KLET_LOG_LINE_MAX - 3, "...", 3);
		text = line;
		len = K32_KLET_LOG_LINE_MAX;
	}
	size_t need = HDR + len;
	while (r->used + need > K32_KLET_LOG_RING_BYTES && r->lines)
		ring_drop_head(r);
	uint8_t h[HDR];
	uint16_t l16 = (uint16_t)len;
	memcpy(h, &seq, 8);
	memcpy(h + 8, &wall_s, 8);
	memcpy(h + 16, &l16, 2);
	size_t tail = r->head + r->used;
	ring_put(r, tail, h, HDR);
	ring_put(r, tail + HDR, text, len);
	r->used += need;
	r->lines++;
}

void klet_ring_move(struct klet_ring *dst, struct klet_ring *src)
{
	uint8_t *b = dst->buf;
	dst->buf = src->buf;
	dst->head = src->head;
	dst->used = src->used;
	dst->lines = src->lines;
	dst->dropped = src->dropped;
	src->buf = b;
	klet_ring_reset(src);
	src->dropped = 0;
}

k32_status_t klet_ring_read(const struct klet_ring *r, int64_t tail_lines, bool timestamps,
			    uint64_t *inout_seq, struct k32_buf *out, struct k32_err *err)
{
	uint64_t after = inout_seq ? *inout_seq : 0;
	uint32_t skip = 0;
	if (tail_lines >= 0 && (uint64_t)tail_lines < r->lines)
		skip = r->lines - (uint32_t)tail_lines;
	size_t off = r->head;
	char text[K32_KLET_LOG_LINE_MAX];
	for (uint32_t i = 0; i < r->lines; i++) {
		uint64_t seq, wall;
		uint16_t len;
		ring_hdr(r, off, &seq, &wall, &len);
		if (i >= skip && seq > after) {
			ring_get(r, off + HDR, text, len);
			k32_status_t st = K32_OK;
			if (timestamps) {
				char ts[32];
				klet_fmt_time(wall, ts, sizeof(ts));
				st = k32_buf_printf(out, err, "%s ", ts);
			}
			if (!st)
				st = k32_buf_append(out, text, len, err);
			if (!st)
				st = k32_buf_append(out, "\n", 1, err);
			if (st)
				return st;
			if (inout_seq)
				*inout_seq = seq;
		}
		off = (off + HDR + len) % K32_KLET_LOG_RING_BYTES;
	}
	return K32_OK;
}
