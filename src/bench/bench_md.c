/*
 * bench_md.c - Markdown rows and numbers for the benchmark tools (see bench_md.h).
 */
#include "bench_md.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int put(char *buf, size_t cap, size_t *at, char c)
{
	if (*at + 1 >= cap)
		return 0;
	buf[(*at)++] = c;
	buf[*at] = 0;
	return 1;
}

static int puts_(char *buf, size_t cap, size_t *at, const char *s)
{
	while (*s) {
		if (!put(buf, cap, at, *s++))
			return 0;
	}
	return 1;
}

static int row(char *buf, size_t cap, size_t *at, const char *const *cells, size_t n, int sep)
{
	if (!put(buf, cap, at, '|'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!put(buf, cap, at, ' '))
			return 0;
		if (sep) {
			if (!puts_(buf, cap, at, "---"))
				return 0;
		} else {
			for (const char *c = cells[i] ? cells[i] : ""; *c; c++) {
				int ok = *c == '|'		      ? puts_(buf, cap, at, "\\|")
					 : (*c == '\n' || *c == '\r') ? put(buf, cap, at, ' ')
								      : put(buf, cap, at, *c);
				if (!ok)
					return 0;
			}
		}
		if (!puts_(buf, cap, at, " |"))
			return 0;
	}
	return put(buf, cap, at, '\n');
}

size_t bench_md_row(char *buf, size_t cap, const char *const *cells, size_t n, int header)
{
	size_t at = 0;

	if (cap == 0)
		return 0;
	buf[0] = 0;
	if (!row(buf, cap, &at, cells, n, 0) || (header && !row(buf, cap, &at, cells, n, 1))) {
		buf[0] = 0;
		return 0;
	}
	return at;
}

char *bench_md_num(char *buf, size_t cap, double v, int prec)
{
	char raw[64];
	size_t at = 0;

	if (cap == 0)
		return buf;
	buf[0] = 0;
	if (!isfinite(v)) {
		if (cap > 3)
			memcpy(buf, "n/a", 4);
		return buf;
	}
	if (prec < 0)
		prec = 0;
	if (prec > 6)
		prec = 6;
	int len = snprintf(raw, sizeof(raw), "%.*f", prec, v);
	if (len <= 0 || (size_t)len >= sizeof(raw))
		return buf;
	const char *p = raw;
	if (*p == '-') {
		if (!put(buf, cap, &at, '-'))
			goto out_small;
		p++;
	}
	size_t int_digits = strcspn(p, ".");
	for (size_t i = 0; p[i]; i++) {
		if (i > 0 && i < int_digits && (int_digits - i) % 3 == 0 &&
		    !put(buf, cap, &at, ','))
			goto out_small;
		if (!put(buf, cap, &at, p[i]))
			goto out_small;
	}
	return buf;
out_small:
	buf[0] = 0;
	return buf;
}
