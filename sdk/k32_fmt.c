/*
 * k32_fmt.c - formatted text for pods without a C library: k32_snprintf / k32_vsnprintf and
 * k32_logf (k32_klet.h). Linked into every pod by k32_add_pod; wasm-ld drops it from a pod
 * that does not call it. The subset: %d %i %u %x %X %c %s %p %%, the length modifiers l and
 * ll (64-bit), a width with the flags 0 and -, and a precision for %s (%.Ns or %.*s).
 * Anything else is copied as written, so a wrong format shows in the log instead of
 * reading past the arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "k32_klet.h"

struct out {
	char *buf;
	uint32_t cap; /* bytes of buf, the NUL included */
	uint32_t len; /* bytes the whole text needs (may exceed cap - 1) */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void put_pad(struct out *o, const char *s, uint32_t n, uint32_t width, int left, char pad)
{
	uint32_t fill = width > n ? width - n : 0;
	if (!left)
		while (fill--)
			put(o, pad);
	for (uint32_t i = 0; i < n; i++)
		put(o, s[i]);
	if (left)
		while (fill--)
			put(o, ' ');
}

static void put_num(struct out *o, uint64_t v, int neg, unsigned base, int upper, uint32_t width,
		    int left, char pad)
{
	char tmp[24];
	uint32_t n = 0;
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		tmp[sizeof(tmp) - 1 - n++] = digits[v % base];
		v /= base;
	} while (v);
	if (neg) {
		if (pad == '0') { /* the sign before the zeros: -0042 */
			put(o, '-');
			width = width ? width - 1 : 0;
		} else {
			tmp[sizeof(tmp) - 1 - n++] = '-';
		}
	}
	put_pad(o, tmp + sizeof(tmp) - n, n, width, left, pad);
}

int32_t k32_vsnprintf(char *buf, uint32_t cap, const char *fmt, va_list ap)
{
	struct out o = {buf, cap, 0};
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			put(&o, *p);
			continue;
		}
		const char *start = p++;
		int left = 0, lng = 0;
		char pad = ' ';
		uint32_t width = 0, prec = UINT32_MAX;
		for (; *p == '-' || *p == '0'; p++) {
			if (*p == '-')
				left = 1;
			else
				pad = '0';
		}
		for (; *p >= '0' && *p <= '9'; p++)
			width = width * 10 + (uint32_t)(*p - '0');
		if (*p == '.') {
			p++;
			prec = 0;
			if (*p == '*') {
				int v = va_arg(ap, int);
				prec = v < 0 ? 0 : (uint32_t)v;
				p++;
			}
			for (; *p >= '0' && *p <= '9'; p++)
				prec = prec * 10 + (uint32_t)(*p - '0');
		}
		for (; *p == 'l' && lng < 2; p++)
			lng++;
		if (left)
			pad = ' ';
		switch (*p) {
		case 'd':
		case 'i': {
			int64_t v = lng == 2 ? va_arg(ap, long long)
				    : lng    ? va_arg(ap, long)
					     : va_arg(ap, int);
			uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			put_num(&o, m, v < 0, 10, 0, width, left, pad);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			uint64_t v = lng == 2 ? va_arg(ap, unsigned long long)
				     : lng    ? va_arg(ap, unsigned long)
					      : va_arg(ap, unsigned);
			put_num(&o, v, 0, *p == 'u' ? 10 : 16, *p == 'X', width, left, pad);
			break;
		}
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_num(&o, (uint64_t)(uintptr_t)va_arg(ap, void *), 0, 16, 0, 0, 0, ' ');
			break;
		case 'c': {
			char c = (char)va_arg(ap, int);
			put_pad(&o, &c, 1, width, left, ' ');
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			uint32_t n = 0;
			while (n < prec && s[n])
				n++;
			put_pad(&o, s, n, width, left, ' ');
			break;
		}
		case '%':
			put(&o, '%');
			break;
		default: /* not in the subset: copied as written */
			for (const char *q = start; q <= p && *q; q++)
				put(&o, *q);
			if (!*p)
				p--;
			break;
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = 0;
	return (int32_t)o.len;
}

int32_t k32_snprintf(char *buf, uint32_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int32_t n = k32_vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

#if defined(__wasm__)
int32_t k32_logf(uint32_t level, const char *fmt, ...)
{
	char line[K32_LOGF_MAX];
	va_list ap;
	va_start(ap, fmt);
	int32_t n = k32_vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	uint32_t len = (uint32_t)n;
	if (len >= sizeof(line)) {
		/* too long for one line: say so at the end instead of ending mid-word unseen */
		len = sizeof(line) - 1;
		line[len - 3] = line[len - 2] = line[len - 1] = '.';
	}
	k32_log(level, line, len);
	return n;
}
#endif
