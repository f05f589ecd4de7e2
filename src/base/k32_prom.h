/*
 * k32_prom.h - the Prometheus text exposition format (version 0.0.4), written into a buffer.
 *
 * A scrape handler writes each metric family's HELP and TYPE lines (k32_prom_family) and
 * then its samples; histograms keep fixed bucket bounds (struct k32_prom_hist) and are
 * updated by their owner under its own lock (no 64-bit atomics: a 32-bit MCU has none).
 * Label values are escaped here (backslash, double quote, newline).
 *
 * Context: any thread; nothing here locks or allocates outside the caller's buffer.
 */
#ifndef K32_PROM_H
#define K32_PROM_H

#include <stdint.h>

#include "base/k32_buf.h"
#include "base/k32_status.h"

#define K32_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define K32_PROM_MAX_BUCKETS  16

/* A histogram of durations with bounds in seconds (ascending, at most K32_PROM_MAX_BUCKETS). */
struct k32_prom_hist {
	const double *le;		       /* upper bounds in seconds */
	uint32_t n;			       /* bounds used */
	uint64_t bucket[K32_PROM_MAX_BUCKETS]; /* observations <= le[i] (not cumulative) */
	uint64_t count;
	uint64_t sum_us;
};

/* Counts one observation of us microseconds. */
void k32_prom_hist_observe(struct k32_prom_hist *h, uint64_t us);

/* "# HELP name help" and "# TYPE name type" (type: counter, gauge, histogram). */
k32_status_t k32_prom_family(struct k32_buf *b, const char *name, const char *type,
			     const char *help, struct k32_err *err);

/* One sample "name{labels} value"; labels is "" or already formatted (k32_prom_label). */
k32_status_t k32_prom_sample(struct k32_buf *b, const char *name, const char *labels, double v,
			     struct k32_err *err);

/* The _bucket, _sum and _count samples of h, with labels (may be ""). */
k32_status_t k32_prom_hist_write(struct k32_buf *b, const char *name, const char *labels,
				 const struct k32_prom_hist *h, struct k32_err *err);

/*
 * Appends `key="value"` (value escaped) to the label text in out (cap bytes, NUL-terminated),
 * with a comma when out is not empty. false when it does not fit (out is then unchanged).
 */
bool k32_prom_label(char *out, size_t cap, const char *key, const char *value);

#endif /* K32_PROM_H */
