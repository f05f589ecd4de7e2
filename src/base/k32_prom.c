/*
 * k32_prom.c - Prometheus text exposition helpers (see k32_prom.h).
 */
#include "base/k32_prom.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void k32_prom_hist_observe(struct k32_prom_hist *h, uint64_t us)
{
	double s = (double)us / 1e6;
	for (uint32_t i = 0; i < h->n && i < K32_PROM_MAX_BUCKETS; i++) {
		if (s <= h->le[i]) {
			h->bucket[i]++;
			break;
		}
	}
	h->count++;
	h->sum_us += us;
}

k32_status_t k32_prom_family(struct k32_buf *b, const char *name, const char *type,
			     const char *help, struct k32_err *err)
{
	return k32_buf_printf(b, err, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A value as Prometheus reads it: integers without a fraction, +Inf/NaN spelled out. */
static void prom_value(double v, char *buf, size_t cap)
{
	if (isnan(v))
		snprintf(buf, cap, "NaN");
	else if (isinf(v))
		snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9e15)
		snprintf(buf, cap, "%" PRId64, (int64_t)v);
	else
		snprintf(buf, cap, "%.9g", v);
}

k32_status_t k32_prom_sample(struct k32_buf *b, const char *name, const char *labels, double v,
			     struct k32_err *err)
{
	char val[40];
	prom_value(v, val, sizeof(val));
	if (labels && labels[0])
		return k32_buf_printf(b, err, "%s{%s} %s\n", name, labels, val);
	return k32_buf_printf(b, err, "%s %s\n", name, val);
}

k32_status_t k32_prom_hist_write(struct k32_buf *b, const char *name, const char *labels,
				 const struct k32_prom_hist *h, struct k32_err *err)
{
	uint64_t cum = 0;
	k32_status_t st = K32_OK;
	const char *sep = labels && labels[0] ? "," : "";
	const char *lab = labels ? labels : "";
	for (uint32_t i = 0; !st && i < h->n && i < K32_PROM_MAX_BUCKETS; i++) {
		char le[40];
		cum += h->bucket[i];
		prom_value(h->le[i], le, sizeof(le));
		st = k32_buf_printf(b, err, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", name, lab,
				    sep, le, cum);
	}
	if (!st)
		st = k32_buf_printf(b, err, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, lab,
				    sep, h->count);
	char sum[40];
	prom_value((double)h->sum_us / 1e6, sum, sizeof(sum));
	if (!st)
		st = k32_buf_printf(b, err, "%s_sum%s%s%s %s\n", name, lab[0] ? "{" : "", lab,
				    lab[0] ? "}" : "", sum);
	if (!st)
		st = k32_buf_printf(b, err, "%s_count%s%s%s %" PRIu64 "\n", name, lab[0] ? "{" : "",
				    lab, lab[0] ? "}" : "", h->count);
	return st;
}

bool k32_prom_label(char *out, size_t cap, const char *key, const char *value)
{
	size_t o = strlen(out), start = o;
	int w = snprintf(out + o, cap - o, "%s%s=\"", o ? "," : "", key);
	if (w < 0 || (size_t)w >= cap - o)
		goto too_long;
	o += (size_t)w;
	for (const char *p = value ? value : ""; *p; p++) {
		const char *esc = *p == '\\'   ? "\\\\"
				  : *p == '"'  ? "\\\""
				  : *p == '\n' ? "\\n"
					       : NULL;
		size_t n = esc ? 2 : 1;
		if (o + n + 2 > cap)
			goto too_long;
		if (esc)
			memcpy(out + o, esc, 2);
		else
			out[o] = *p;
		o += n;
	}
	if (o + 2 > cap)
		goto too_long;
	out[o++] = '"';
	out[o] = 0;
	return true;
too_long:
	out[start] = 0;
	return false;
}
