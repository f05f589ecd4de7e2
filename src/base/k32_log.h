/*
 * k32_log.h - logging with levels and a component tag.
 *
 * Each line goes to stderr (when enabled and at or above the stderr level) and into a
 * bounded ring of the most recent K32_LOG_RING_LINES lines, which the console and
 * `kubectl logs`-style readers page through by sequence number. A message longer than a ring
 * line (K32_LOG_LINE_LEN) but within K32_LOG_MSG_LEN (the boards: 128 and 384) is stored as
 * consecutive lines broken between words, the later ones starting with K32_LOG_CONT; one
 * longer than K32_LOG_MSG_LEN is cut and ends with "..." (callers clip names with K32_CLIP
 * so theirs fit). Logging never allocates.
 *
 * Context: any thread; the ring is guarded by a spinlock held only for a copy.
 */
#ifndef K32_LOG_H
#define K32_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "k32/k32_config.h"

enum k32_log_level {
	K32_LOG_DEBUG = 0,
	K32_LOG_INFO = 1,
	K32_LOG_WARN = 2,
	K32_LOG_ERROR = 3,
};

void k32_log(enum k32_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define K32_LOGD(comp, ...) k32_log(K32_LOG_DEBUG, comp, __VA_ARGS__)
#define K32_LOGI(comp, ...) k32_log(K32_LOG_INFO, comp, __VA_ARGS__)
#define K32_LOGW(comp, ...) k32_log(K32_LOG_WARN, comp, __VA_ARGS__)
#define K32_LOGE(comp, ...) k32_log(K32_LOG_ERROR, comp, __VA_ARGS__)

/* Lines below min_level are dropped entirely. Default K32_LOG_INFO. */
void k32_log_set_level(enum k32_log_level min_level);
/* Whether lines also go to stderr (default true); tests turn it off. */
void k32_log_set_stderr(bool on);

struct k32_log_line {
	uint64_t seq;	  /* 1 for the first line ever logged */
	uint64_t time_us; /* k32 monotonic clock when logged (0 if unknown) */
	enum k32_log_level level;
	char component[16];	     /* tag, truncated */
	char text[K32_LOG_LINE_LEN]; /* message, truncated, NUL-terminated */
};

/*
 * Copies up to cap lines with seq > after_seq, oldest first, into out; returns the number
 * copied. Lines that fell out of the ring are skipped; *out_dropped (may be NULL) counts them.
 */
size_t k32_log_read(uint64_t after_seq, struct k32_log_line *out, size_t cap,
		    uint64_t *out_dropped);

/*
 * Sets the clock the log stamps lines with (the platform's now_us: each entry point, the
 * server's, the simulator's and the boards', sets it first); NULL for none. The first
 * reading is the log's start: formatted lines show the seconds since it.
 */
void k32_log_set_clock(uint64_t (*now_us)(void));

/*
 * Formats a line as it goes to stderr, into out (cap bytes, NUL-terminated, cut if short):
 *   "[SSSSS.UUUUUU] LEVEL component: text\n"  with a clock (seconds since k32_log_set_clock)
 *   "LEVEL component: text\n"                 without one (time_us 0)
 * Returns the length the whole line needs (as snprintf).
 */
size_t k32_log_format(const struct k32_log_line *line, char *out, size_t cap);

#endif /* K32_LOG_H */
