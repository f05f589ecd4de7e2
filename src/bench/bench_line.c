/*
 * bench_line.c - the K32_BENCH line (see bench_line.h). Freestanding: builds into the bench
 * pod too, so it formats and parses numbers by hand.
 */
#include "bench_line.h"

#include "bench_kernels.h"

void bench_measure(uint32_t kernel, uint32_t arg, uint32_t runs, bench_clock_fn_t clock,
		   struct bench_result *out)
{
	uint32_t n = bench_arg_to_n(kernel, arg);

	if (runs == 0)
		runs = 1;
	out->kernel = kernel;
	out->arg = arg;
	out->runs = runs;
	out->us_min = UINT64_MAX;
	out->us_total = 0;
	out->sum = 0;
	for (uint32_t i = 0; i < runs; i++) {
		int64_t t0 = clock();
		out->sum = bench_run(kernel, n, 1);
		int64_t t1 = clock();
		uint64_t us = t1 > t0 ? (uint64_t)(t1 - t0) : 0;

		out->us_total += us;
		if (us < out->us_min)
			out->us_min = us;
	}
}

/* Appends s at *at; false when it does not fit with the NUL. */
static bool put_str(char *buf, uint32_t cap, uint32_t *at, const char *s)
{
	while (*s) {
		if (*at + 1 >= cap)
			return false;
		buf[(*at)++] = *s++;
	}
	buf[*at] = 0;
	return true;
}

static bool put_u64(char *buf, uint32_t cap, uint32_t *at, uint64_t v)
{
	char tmp[21];
	uint32_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v);
	if (*at + n + 1 > cap)
		return false;
	while (n)
		buf[(*at)++] = tmp[--n];
	buf[*at] = 0;
	return true;
}

uint32_t bench_line_format(char *buf, uint32_t cap, const struct bench_result *r)
{
	uint32_t at = 0;

	if (cap == 0)
		return 0;
	if (put_str(buf, cap, &at, "K32_BENCH kernel=") &&
	    put_str(buf, cap, &at, bench_kernel_name(r->kernel)) && put_str(buf, cap, &at, " n=") &&
	    put_u64(buf, cap, &at, r->arg) && put_str(buf, cap, &at, " runs=") &&
	    put_u64(buf, cap, &at, r->runs) && put_str(buf, cap, &at, " us_min=") &&
	    put_u64(buf, cap, &at, r->us_min) && put_str(buf, cap, &at, " us_total=") &&
	    put_u64(buf, cap, &at, r->us_total) && put_str(buf, cap, &at, " sum=") &&
	    put_u64(buf, cap, &at, r->sum))
		return at;
	buf[0] = 0;
	return 0;
}

uint32_t bench_line_format_hostcall(char *buf, uint32_t cap, uint32_t calls, uint64_t us)
{
	uint32_t at = 0;

	if (cap == 0)
		return 0;
	if (put_str(buf, cap, &at, "K32_BENCH hostcall calls=") && put_u64(buf, cap, &at, calls) &&
	    put_str(buf, cap, &at, " us=") && put_u64(buf, cap, &at, us))
		return at;
	buf[0] = 0;
	return 0;
}

bool bench_parse_u64(const char *s, uint32_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (uint32_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (max - d) / 10u)
			return false;
		v = v * 10u + d;
	}
	*out = v;
	return true;
}

/* Matches "word" at s[*at] followed by a space or the end; advances past the space. */
static bool expect(const char *s, uint32_t len, uint32_t *at, const char *word)
{
	uint32_t i = *at;

	while (*word) {
		if (i >= len || s[i] != *word)
			return false;
		i++;
		word++;
	}
	*at = i;
	return true;
}

/* Reads "key=value" at s[*at] up to the next space or the end. */
static bool field(const char *s, uint32_t len, uint32_t *at, const char *key, const char **val,
		  uint32_t *val_len)
{
	if (!expect(s, len, at, key) || !expect(s, len, at, "="))
		return false;
	uint32_t start = *at;

	while (*at < len && s[*at] != ' ')
		(*at)++;
	*val = s + start;
	*val_len = *at - start;
	if (*at < len)
		(*at)++; /* the space */
	return true;
}

static bool num_field(const char *s, uint32_t len, uint32_t *at, const char *key, uint64_t max,
		      uint64_t *out)
{
	const char *v;
	uint32_t vl;

	return field(s, len, at, key, &v, &vl) && bench_parse_u64(v, vl, max, out);
}

static uint32_t trim(const char *s, uint32_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	return len;
}

bool bench_line_parse(const char *s, uint32_t len, struct bench_result *out)
{
	uint32_t at = 0, klen;
	const char *k;
	uint64_t arg, runs, us_min, us_total, sum;

	len = trim(s, len);
	if (!expect(s, len, &at, "K32_BENCH ") || !field(s, len, &at, "kernel", &k, &klen))
		return false;
	out->kernel = bench_kernel_find(k, klen);
	if (out->kernel >= BENCH_KERNEL_COUNT)
		return false;
	if (!num_field(s, len, &at, "n", UINT32_MAX, &arg) ||
	    !num_field(s, len, &at, "runs", UINT32_MAX, &runs) ||
	    !num_field(s, len, &at, "us_min", UINT64_MAX, &us_min) ||
	    !num_field(s, len, &at, "us_total", UINT64_MAX, &us_total) ||
	    !num_field(s, len, &at, "sum", UINT32_MAX, &sum) || at != len)
		return false;
	out->arg = (uint32_t)arg;
	out->runs = (uint32_t)runs;
	out->us_min = us_min;
	out->us_total = us_total;
	out->sum = (uint32_t)sum;
	return true;
}

bool bench_line_parse_hostcall(const char *s, uint32_t len, uint32_t *out_calls, uint64_t *out_us)
{
	uint32_t at = 0;
	uint64_t calls, us;

	len = trim(s, len);
	if (!expect(s, len, &at, "K32_BENCH hostcall ") ||
	    !num_field(s, len, &at, "calls", UINT32_MAX, &calls) ||
	    !num_field(s, len, &at, "us", UINT64_MAX, &us) || at != len)
		return false;
	*out_calls = (uint32_t)calls;
	*out_us = us;
	return true;
}

bool bench_query_str(const char *q, uint32_t len, const char *key, const char **out,
		     uint32_t *out_len)
{
	uint32_t at = 0;

	for (uint32_t i = 0; i < len; i++) {
		if (q[i] == '?') {
			at = i + 1;
			break;
		}
	}
	while (at < len) {
		uint32_t end = at;

		while (end < len && q[end] != '&')
			end++;
		uint32_t i = at;
		const char *k = key;

		while (*k && i < end && q[i] == *k) {
			i++;
			k++;
		}
		if (!*k && i < end && q[i] == '=') {
			*out = q + i + 1;
			*out_len = end - i - 1;
			return true;
		}
		at = end + 1;
	}
	return false;
}

bool bench_query_u32(const char *q, uint32_t len, const char *key, uint32_t *out)
{
	const char *v;
	uint32_t vl;
	uint64_t n;

	if (!bench_query_str(q, len, key, &v, &vl) || !bench_parse_u64(v, vl, UINT32_MAX, &n))
		return false;
	*out = (uint32_t)n;
	return true;
}
