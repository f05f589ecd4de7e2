/*
 * k32_log.c - leveled, tagged logging into a bounded ring and stderr.
 *
 * The ring is a static array of K32_LOG_RING_LINES lines indexed by sequence number; the
 * newest line overwrites the oldest. A spinlock (C11 atomic_flag) guards the copy in and out:
 * it is held for a memcpy of one line, so spinning is cheaper than a platform mutex and keeps
 * base independent of the platform layer. Formatting happens outside the lock.
 */
#include "base/k32_log.h"

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

static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

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
	atomic_store(&log_clock, now_us);
}

void k32_log(enum k32_log_level level, const char *component, const char *fmt, ...)
{
	struct k32_log_line line;
	uint64_t (*clock)(void) = atomic_load(&log_clock);
	va_list ap;

	if ((int)level < atomic_load(&min_level))
		return;
	if ((unsigned)level > K32_LOG_ERROR)
		level = K32_LOG_ERROR;
	line.level = level;
	line.time_us = clock ? clock() : 0;
	snprintf(line.component, sizeof(line.component), "%s", component ? component : "-");
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
		fprintf(stderr, "%-5s %s: %s\n", level_names[level], line.component, line.text);
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
