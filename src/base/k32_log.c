/*
 * k32_log.c - leveled, tagged logging into a bounded ring and stderr.
 *
 * The ring is a static array of K32_LOG_RING_LINES lines indexed by sequence number; the
 * newest line overwrites the oldest. A spinlock (C11 atomic_flag) guards the copy in and out:
 * it is held for a memcpy of one line, so spinning is cheaper than a platform mutex and keeps
 * base independent of the platform layer. Formatting happens outside the lock.
 *
 * A board keeps short ring lines (K32_LOG_LINE_LEN 128) but whole messages (K32_LOG_MSG_LEN
 * 384): a longer message is formatted into one static buffer (not onto the caller's task
 * stack) and stored as consecutive lines broken between words, each continuation starting
 * with K32_LOG_CONT, so its advice is never cut. There the lock is also held while
 * formatting: the boards' platform runs its tasks to completion (no preemption), so nothing
 * ever spins on it.
 */
#include "base/k32_log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static struct k32_log_line ring[K32_LOG_RING_LINES];
static uint64_t next_seq = 1;
static atomic_flag ring_lock = ATOMIC_FLAG_INIT;
static _Atomic int min_level = K32_LOG_INFO;
static _Atomic bool to_stderr = true;
static uint64_t (*_Atomic log_clock)(void);
/* the clock's first reading: formatted times count from it. Written before log_clock and
 * read after it (a 64-bit atomic is a library call on a 32-bit board) */
static uint64_t log_epoch_us;

static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

/* What every line of one message shares. */
struct log_head {
	uint64_t time_us;
	enum k32_log_level level;
	char component[sizeof(((struct k32_log_line *)0)->component)];
};

static void ring_lock_take(void)
{
	while (atomic_flag_test_and_set_explicit(&ring_lock, memory_order_acquire)) {
	}
}

static void ring_lock_give(void)
{
	atomic_flag_clear_explicit(&ring_lock, memory_order_release);
}

void k32_log_set_level(enum k32_log_level level)
{
	atomic_store(&min_level, (int)level);
}

void k32_log_set_stderr(bool on)
{
	atomic_store(&to_stderr, on);
}

void k32_log_set_clock(uint64_t (*now_us)(void))
{
	log_epoch_us = now_us ? now_us() : 0;
	atomic_store(&log_clock, now_us);
}

/* The one line format, to a stream (f) or a buffer (out, cap): stderr and k32_log_format
 * cannot disagree. */
static int log_emit(FILE *f, char *out, size_t cap, uint64_t time_us, enum k32_log_level lv,
		    const char *component, const char *text)
{
	unsigned level = (unsigned)lv <= K32_LOG_ERROR ? (unsigned)lv : K32_LOG_ERROR;
	if (!time_us)
		return f ? fprintf(f, "%-5s %s: %s\n", level_names[level], component, text)
			 : snprintf(out, cap, "%-5s %s: %s\n", level_names[level], component, text);
	uint64_t epoch = log_epoch_us;
	uint64_t since = time_us > epoch ? time_us - epoch : 0;
	uint64_t s = since / 1000000;
	uint32_t us = (uint32_t)(since % 1000000);
	return f ? fprintf(f, "[%5" PRIu64 ".%06" PRIu32 "] %-5s %s: %s\n", s, us,
			   level_names[level], component, text)
		 : snprintf(out, cap, "[%5" PRIu64 ".%06" PRIu32 "] %-5s %s: %s\n", s, us,
			    level_names[level], component, text);
}

size_t k32_log_format(const struct k32_log_line *line, char *out, size_t cap)
{
	int n = log_emit(NULL, out, cap, line->time_us, line->level, line->component, line->text);
	return n < 0 ? 0 : (size_t)n;
}

#if K32_LOG_MSG_LEN > K32_LOG_LINE_LEN
static char msg_buf[K32_LOG_MSG_LEN]; /* guarded by ring_lock */

/* Bytes of the next piece of a message of left bytes at p that a line with room bytes of
 * text holds: all of it, or up to the last blank that keeps the piece over half a line (a
 * word longer than that is broken where the line ends). */
static size_t piece_len(const char *p, size_t left, size_t room)
{
	if (left <= room)
		return left;
	for (size_t i = room; i > room / 2; i--)
		if (p[i] == ' ')
			return i;
	return room;
}

/* The message in msg_buf as lines sharing head; ring_lock held. */
static void store_pieces(const struct log_head *head, int n)
{
	const char *p = msg_buf;
	size_t left = strlen(msg_buf);
	bool first = true;
	if (n >= (int)sizeof(msg_buf)) /* cut even here: say so rather than end mid-word */
		memcpy(msg_buf + sizeof(msg_buf) - 4, "...", 4);
	do {
		size_t pre = first ? 0 : sizeof(K32_LOG_CONT) - 1;
		size_t take = piece_len(p, left, K32_LOG_LINE_LEN - 1 - pre);
		struct k32_log_line *l = &ring[next_seq % K32_LOG_RING_LINES];
		l->seq = next_seq++;
		l->time_us = head->time_us;
		l->level = head->level;
		memcpy(l->component, head->component, sizeof(l->component));
		memcpy(l->text, K32_LOG_CONT, pre);
		memcpy(l->text + pre, p, take);
		l->text[pre + take] = 0;
		p += take;
		left -= take;
		while (left && *p == ' ') {
			p++;
			left--;
		}
		first = false;
	} while (left);
}
#endif

void k32_log(enum k32_log_level level, const char *component, const char *fmt, ...)
{
	uint64_t (*clock)(void) = atomic_load(&log_clock);
	va_list ap;

	if ((int)level < atomic_load(&min_level))
		return;
	if ((unsigned)level > K32_LOG_ERROR)
		level = K32_LOG_ERROR;
	struct log_head head = {.level = level, .time_us = clock ? clock() : 0};
	/* a clock that starts at 0 (a board's tick): known all the same */
	if (clock && !head.time_us)
		head.time_us = 1;
	snprintf(head.component, sizeof(head.component), "%s", component ? component : "-");
#if K32_LOG_MSG_LEN > K32_LOG_LINE_LEN
	ring_lock_take();
	msg_buf[0] = 0;
	va_start(ap, fmt);
	int n = vsnprintf(msg_buf, sizeof(msg_buf), fmt, ap);
	va_end(ap);
	store_pieces(&head, n);
	if (atomic_load(&to_stderr)) /* still under the lock: msg_buf is shared */
		log_emit(stderr, NULL, 0, head.time_us, level, head.component, msg_buf);
	ring_lock_give();
#else
	struct k32_log_line line = {.level = level, .time_us = head.time_us};
	memcpy(line.component, head.component, sizeof(line.component));
	va_start(ap, fmt);
	int n = vsnprintf(line.text, sizeof(line.text), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line.text)) /* cut: say so rather than end mid-word */
		memcpy(line.text + sizeof(line.text) - 4, "...", 4);

	ring_lock_take();
	line.seq = next_seq++;
	ring[line.seq % K32_LOG_RING_LINES] = line;
	ring_lock_give();

	if (atomic_load(&to_stderr))
		log_emit(stderr, NULL, 0, line.time_us, level, line.component, line.text);
#endif
}

size_t k32_log_read(uint64_t after_seq, struct k32_log_line *out, size_t cap, uint64_t *out_dropped)
{
	size_t n = 0;
	uint64_t oldest;
	uint64_t last;

	ring_lock_take();
	last = next_seq - 1;
	oldest = last >= K32_LOG_RING_LINES ? last - K32_LOG_RING_LINES + 1 : 1;
	if (out_dropped)
		*out_dropped = after_seq + 1 < oldest ? oldest - (after_seq + 1) : 0;
	if (after_seq + 1 > oldest)
		oldest = after_seq + 1;
	for (uint64_t s = oldest; s <= last && n < cap; s++)
		out[n++] = ring[s % K32_LOG_RING_LINES];
	ring_lock_give();
	return n;
}
