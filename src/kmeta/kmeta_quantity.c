/*
 * kmeta_quantity.c - Kubernetes resource quantities, exactly as the API defines them.
 *
 * The grammar, checked against the published documentation of k8s.io/apimachinery's
 * resource.Quantity (the API reference's "Quantity" definition):
 *
 *   quantity        ::= signedNumber suffix
 *   signedNumber    ::= number | sign number          sign ::= "+" | "-"
 *   number          ::= digits | digits "." digits | digits "." | "." digits
 *   suffix          ::= binarySI | decimalExponent | decimalSI
 *   binarySI        ::= Ki | Mi | Gi | Ti | Pi | Ei            (powers of 1024)
 *   decimalSI       ::= m | "" | k | M | G | T | P | E         (milli .. exa)
 *   decimalExponent ::= "e" signedNumber | "E" signedNumber
 *
 * What follows from it, and what this file does:
 *  - Suffixes are case-sensitive. The decimal kilo is lower-case "k"; "K" is no suffix, so
 *    "24K" is refused (the old kubelet read it as 24000, the scheduler refused it); so is
 *    "24Kb" and anything with white space.
 *  - "E" alone is exa (10^18); "E" or "e" followed by a signed integer is an exponent
 *    ("1.5e3" = 1500). Kubernetes reads the exponent as a 32-bit integer: so does this.
 *  - No quantity is above 2^63-1 in Kubernetes; here a value above INT64_MAX is refused
 *    rather than capped, so "8Ei" or "1e19" cannot silently become something else.
 *  - A fractional byte count rounds up, as Quantity.Value() does: "1500m" is 2 bytes,
 *    "0.1" is 1, "1.5Ki" is 1536.
 *
 * The arithmetic is integer only (the MCU has no fast double, and doubles lose bytes above
 * 2^53): the digits are read once, the decimal point is moved by the decimal exponent, the
 * integer part is accumulated with overflow checks and the fraction (its first 18 digits,
 * plus whether any later digit is non-zero) is multiplied by the binary factor by repeated
 * doubling, which needs no 128-bit product.
 */
#include "kmeta/kmeta.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A parsed quantity: value = 0.DIGITS * 10^point10 * 2^pow2, DIGITS without leading zeros. */
struct quantity {
	bool negative;
	const char *ip, *fp; /* the mantissa's digits before and after its '.' */
	size_t nint, nfrac;
	size_t ndigits;	 /* nint + nfrac */
	int64_t point10; /* the decimal point's position within the digits, after scaling */
	unsigned pow2;	 /* 0, 10, 20, ... 60 */
};

/* The i-th digit of the mantissa (i < ndigits), skipping its '.'. */
static unsigned digit_at(const struct quantity *q, size_t i)
{
	return (unsigned)((i < q->nint ? q->ip[i] : q->fp[i - q->nint]) - '0');
}

/* Reads "[+-]digits" into *out (|value| < 2^31). Returns the end, or NULL. */
static const char *parse_exponent(const char *p, int64_t *out)
{
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (*p < '0' || *p > '9')
		return NULL;
	int64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT32_MAX)
			return NULL;
	}
	*out = neg ? -v : v;
	return p;
}

static bool fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return false;
}

#define WHY_SYNTAX                                                                                 \
	"not a quantity: suffixes are Ki Mi Gi Ti Pi Ei, m k M G T P E or e<N>, case-sensitive "   \
	"('k', not 'K')"

static bool parse(const char *s, struct quantity *q, const char **why)
{
	memset(q, 0, sizeof(*q));
	if (!s || !*s)
		return fail(why, WHY_SYNTAX);
	const char *p = s;
	if (*p == '+' || *p == '-')
		q->negative = *p++ == '-';
	q->ip = p;
	for (; *p >= '0' && *p <= '9'; p++)
		q->nint++;
	q->fp = p;
	if (*p == '.')
		for (q->fp = ++p; *p >= '0' && *p <= '9'; p++)
			q->nfrac++;
	if (!q->nint && !q->nfrac)
		return fail(why, WHY_SYNTAX);
	int64_t exp10 = 0;
	static const struct {
		const char *suffix;
		int exp10;
		unsigned pow2;
	} suffixes[] = {
	    {"", 0, 0},	   {"m", -3, 0},  {"k", 3, 0},	 {"M", 6, 0},	{"G", 9, 0},
	    {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},	 {"Ki", 0, 10}, {"Mi", 0, 20},
	    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
	};
	bool known = false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]) && !known; i++) {
		if (!strcmp(p, suffixes[i].suffix)) {
			exp10 = suffixes[i].exp10;
			q->pow2 = suffixes[i].pow2;
			known = true;
		}
	}
	if (!known && (*p == 'e' || *p == 'E')) {
		const char *end = parse_exponent(p + 1, &exp10);
		known = end && !*end;
	}
	if (!known)
		return fail(why, WHY_SYNTAX);
	/* drop leading zeros: the point moves with them */
	q->ndigits = q->nint + q->nfrac;
	int64_t point = (int64_t)q->nint;
	while (q->ndigits && digit_at(q, 0) == 0) {
		if (q->nint) {
			q->ip++;
			q->nint--;
		} else {
			q->fp++;
			q->nfrac--;
		}
		q->ndigits--;
		point--;
	}
	q->point10 = point + exp10;
	return true;
}

/* 10^n for n <= 18. */
static uint64_t pow10u(unsigned n)
{
	uint64_t v = 1;
	while (n--)
		v *= 10;
	return v;
}

bool kmeta_quantity_valid(const char *s, bool *negative, const char **why)
{
	struct quantity q;
	if (!parse(s, &q, why))
		return false;
	if (negative)
		*negative = q.negative && q.ndigits;
	return true;
}

/* The value of s times 10^shift10 (0: units, 3: thousandths), rounded up; see
 * kmeta_quantity_bytes. */
static bool quantity_scaled(const char *s, int64_t shift10, uint64_t *out, const char **why)
{
	struct quantity q;
	if (!parse(s, &q, why))
		return false;
	q.point10 += shift10;
	if (!q.ndigits) { /* zero, whatever its sign or suffix */
		*out = 0;
		return true;
	}
	if (q.negative)
		return fail(why, "must be a non-negative quantity");
	static const char *const too_big = "must be at most 2^63-1 (Kubernetes' largest quantity)";
	/* the first digit is non-zero: 20 digits before the point are over 2^63 already */
	if (q.point10 > 19)
		return fail(why, too_big);
	uint64_t whole = 0;
	for (int64_t i = 0; i < q.point10; i++) {
		unsigned d = (size_t)i < q.ndigits ? digit_at(&q, (size_t)i) : 0;
		if (whole > (UINT64_MAX - d) / 10)
			return fail(why, too_big);
		whole = whole * 10 + d;
	}
	/* the fraction: its first 18 digits as frac / 10^18, and whether any later one is set */
	enum { FRAC_DIGITS = 18 };
	uint64_t frac = 0;
	bool rest = false;
	for (int64_t j = 0; j < FRAC_DIGITS; j++) {
		int64_t i = q.point10 + j;
		unsigned d = i >= 0 && (size_t)i < q.ndigits ? digit_at(&q, (size_t)i) : 0;
		frac = frac * 10 + d;
	}
	int64_t first_rest = q.point10 + FRAC_DIGITS;
	for (size_t i = first_rest > 0 ? (size_t)first_rest : 0; i < q.ndigits && !rest; i++)
		rest = digit_at(&q, i) != 0;
	/* whole * 2^pow2 + ceil(0.frac * 2^pow2), by doubling: carry out of the fraction */
	const uint64_t one = pow10u(FRAC_DIGITS);
	for (unsigned b = 0; b < q.pow2; b++) {
		if (whole > INT64_MAX / 2)
			return fail(why, too_big);
		frac *= 2; /* < 2 * 10^18 < 2^64 */
		whole = whole * 2 + (frac >= one);
		if (frac >= one)
			frac -= one;
	}
	if (frac || rest)
		whole++; /* round up, as Quantity.Value() */
	if (whole > INT64_MAX)
		return fail(why, too_big);
	*out = whole;
	return true;
}

bool kmeta_quantity_bytes(const char *s, uint64_t *out, const char **why)
{
	return quantity_scaled(s, 0, out, why);
}

bool kmeta_quantity_milli(const char *s, uint64_t *out, const char **why)
{
	return quantity_scaled(s, 3, out, why);
}

const char *kmeta_quantity_format_bytes(uint64_t bytes, char *out, size_t cap)
{
	static const char suffix[][3] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	size_t i = 0;
	while (bytes && i + 1 < sizeof(suffix) / sizeof(suffix[0]) && bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(out, cap, "%" PRIu64 "%s", bytes, suffix[i]);
	return out;
}

bool kmeta_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}
