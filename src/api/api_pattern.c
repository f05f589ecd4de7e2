/*
 * api_pattern.c - the `pattern` keyword of CRD schemas, in bounded time and memory.
 *
 * kube-apiserver runs patterns with Go's regexp (RE2: no backtracking). This is the same
 * idea at board size: the pattern is compiled into at most K32_API_CRD_PATTERN_STATES
 * instructions of a Thompson NFA and run as a Pike VM over the input's bytes, so matching
 * takes O(input x states) steps and fixed memory whatever the pattern or the input (no
 * catastrophic backtracking). The compiler is a recursive-descent parser whose recursion is
 * bounded by K32_API_CRD_PATTERN_NEST group levels.
 * Subset: literals, `.`, classes `[a-z_]` `[^...]`, escapes \d \w \s \D \W \S \. \\ \t \n
 * \r and escaped punctuation, groups `(...)` `(?:...)`, `|`, `*` `+` `?` `{m}` `{m,}`
 * `{m,n}` (greedy; a trailing `?` for laziness is accepted: it changes no match result),
 * anchors `^` `$` (whole input). Bytes, not runes: `.` matches one byte of UTF-8.
 * Refused with a reason: backreferences, lookarounds, flags `(?i)`, Unicode classes \p,
 * word boundaries \b.
 * Reentrant, no allocation.
 */
#include "api/api_crd.h"

#include <stdio.h>
#include <string.h>

enum {
	PI_CHAR,
	PI_ANY,
	PI_CLASS,
	PI_SPLIT, /* x preferred, y */
	PI_JMP,
	PI_BOL,
	PI_EOL,
	PI_MATCH,
};

struct pc {
	struct api_pattern *p;
	const char *s; /* next character */
	char *why;
	size_t cap;
	bool bad;
};

static bool pc_fail(struct pc *c, const char *what)
{
	if (!c->bad)
		snprintf(c->why, c->cap, "%s", what);
	c->bad = true;
	return false;
}

static int pc_emit(struct pc *c, uint8_t op, uint16_t x, uint16_t y)
{
	struct api_pattern *p = c->p;
	if (p->count >= K32_API_CRD_PATTERN_STATES) {
		pc_fail(c, "the pattern needs more matcher states than K32_API_CRD_PATTERN_STATES "
			   "allows; simplify it (fewer repetitions {m,n})");
		return -1;
	}
	p->ins[p->count] = (struct api_pattern_ins){op, 0, x, y, 0};
	return p->count++;
}

static bool is_jump(uint8_t op)
{
	return op == PI_SPLIT || op == PI_JMP;
}

/* Makes room for n instructions at `at`, moving [at, count) up. Jumps inside the moved
 * code to `at` or beyond follow it; jumps from before `at` to `at` keep pointing at the
 * new instructions (they wrap the moved code). */
static bool pc_insert(struct pc *c, uint16_t at, uint16_t n)
{
	struct api_pattern *p = c->p;
	if (p->count + n > K32_API_CRD_PATTERN_STATES)
		return pc_fail(c, "the pattern needs more matcher states than "
				  "K32_API_CRD_PATTERN_STATES allows; simplify it");
	for (uint16_t i = 0; i < p->count; i++) {
		struct api_pattern_ins *in = &p->ins[i];
		if (!is_jump(in->op))
			continue;
		bool inside = i >= at;
		if (in->x != UINT16_MAX && (inside ? in->x >= at : in->x > at))
			in->x = (uint16_t)(in->x + n);
		if (in->op == PI_SPLIT && in->y != UINT16_MAX &&
		    (inside ? in->y >= at : in->y > at))
			in->y = (uint16_t)(in->y + n);
	}
	memmove(&p->ins[at + n], &p->ins[at], (size_t)(p->count - at) * sizeof(p->ins[0]));
	p->count = (uint16_t)(p->count + n);
	return true;
}

/* Appends a copy of [s, e) whose internal jumps are moved along. */
static bool pc_copy(struct pc *c, uint16_t s, uint16_t e)
{
	struct api_pattern *p = c->p;
	uint16_t len = (uint16_t)(e - s), base = p->count;
	if (p->count + len > K32_API_CRD_PATTERN_STATES)
		return pc_fail(c, "the pattern needs more matcher states than "
				  "K32_API_CRD_PATTERN_STATES allows; use smaller {m,n} counts");
	for (uint16_t i = 0; i < len; i++) {
		struct api_pattern_ins in = p->ins[s + i];
		if (is_jump(in.op)) {
			if (in.x >= s && in.x <= e)
				in.x = (uint16_t)(in.x - s + base);
			if (in.op == PI_SPLIT && in.y >= s && in.y <= e)
				in.y = (uint16_t)(in.y - s + base);
		}
		p->ins[p->count++] = in;
	}
	return true;
}

static bool pc_range(struct pc *c, uint8_t lo, uint8_t hi)
{
	struct api_pattern *p = c->p;
	if (p->nranges >= K32_API_CRD_PATTERN_STATES)
		return pc_fail(c, "the pattern's character classes have too many ranges "
				  "(K32_API_CRD_PATTERN_STATES)");
	p->lo[p->nranges] = lo;
	p->hi[p->nranges] = hi;
	p->nranges++;
	return true;
}

/* The ranges of \d \w \s (upper case: negated, reported through *neg). */
static bool pc_class_escape(struct pc *c, char e, bool *neg)
{
	char l = (char)(e | 0x20);
	if (l != 'd' && l != 'w' && l != 's')
		return false;
	*neg = e != l;
	if (l == 'd')
		return pc_range(c, '0', '9');
	if (l == 'w')
		return pc_range(c, 'a', 'z') && pc_range(c, 'A', 'Z') && pc_range(c, '0', '9') &&
		       pc_range(c, '_', '_');
	return pc_range(c, ' ', ' ') && pc_range(c, '\t', '\r');
}

/* The byte an escape stands for (\. \t ...), or -1 if it is not a plain escape. */
static int pc_escape_byte(char e)
{
	switch (e) {
	case 't':
		return '\t';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 'f':
		return '\f';
	case 'v':
		return '\v';
	default:
		break;
	}
	if (strchr(".\\+*?()[]{}|^$-/ #&~,:;<>=!@%'\"_`", e) && e)
		return (unsigned char)e;
	return -1;
}

static bool pc_class(struct pc *c)
{
	int at = pc_emit(c, PI_CLASS, 0, 0);
	if (at < 0)
		return false;
	struct api_pattern_ins *in = &c->p->ins[at];
	in->x = c->p->nranges;
	if (*c->s == '^') {
		in->neg = 1;
		c->s++;
	}
	bool first = true;
	while (*c->s && (*c->s != ']' || first)) {
		first = false;
		int lo;
		if (*c->s == '\\') {
			bool neg;
			uint16_t before = c->p->nranges;
			if (!c->s[1])
				return pc_fail(c, "the pattern ends inside an escape");
			if (pc_class_escape(c, c->s[1], &neg)) {
				if (neg)
					return pc_fail(c,
						       "negated classes (\\D \\W \\S) inside [...] "
						       "are not supported");
				c->s += 2;
				continue;
			}
			if (c->bad || c->p->nranges != before)
				return false;
			lo = pc_escape_byte(c->s[1]);
			if (lo < 0)
				return pc_fail(c, "unsupported escape in a character class");
			c->s += 2;
		} else {
			if (c->s[0] == '[' && c->s[1] == ':')
				return pc_fail(c, "POSIX classes [:name:] are not supported");
			lo = (unsigned char)*c->s++;
		}
		int hi = lo;
		if (c->s[0] == '-' && c->s[1] && c->s[1] != ']') {
			c->s++;
			if (*c->s == '\\') {
				hi = c->s[1] ? pc_escape_byte(c->s[1]) : -1;
				if (hi < 0)
					return pc_fail(c,
						       "unsupported escape in a character range");
				c->s += 2;
			} else {
				hi = (unsigned char)*c->s++;
			}
			if (hi < lo)
				return pc_fail(c, "a character range is out of order");
		}
		if (!pc_range(c, (uint8_t)lo, (uint8_t)hi))
			return false;
	}
	if (*c->s != ']')
		return pc_fail(c, "missing closing ]");
	c->s++;
	in = &c->p->ins[at];
	in->ranges = (uint16_t)(c->p->nranges - in->x);
	return true;
}

static bool pc_alt(struct pc *c, int nest);

static bool pc_atom(struct pc *c, int nest)
{
	char ch = *c->s;
	if (ch == '(') {
		c->s++;
		if (c->s[0] == '?') {
			if (c->s[1] != ':')
				return pc_fail(c, "flags, lookarounds and named groups (?...) are "
						  "not supported; use (?:...) or (...)");
			c->s += 2;
		}
		if (nest + 1 > K32_API_CRD_PATTERN_NEST)
			return pc_fail(c, "groups nest deeper than K32_API_CRD_PATTERN_NEST");
		if (!pc_alt(c, nest + 1))
			return false;
		if (*c->s != ')')
			return pc_fail(c, "missing closing )");
		c->s++;
		return true;
	}
	if (ch == '[') {
		c->s++;
		return pc_class(c);
	}
	c->s++;
	if (ch == '.')
		return pc_emit(c, PI_ANY, 0, 0) >= 0;
	if (ch == '^')
		return pc_emit(c, PI_BOL, 0, 0) >= 0;
	if (ch == '$')
		return pc_emit(c, PI_EOL, 0, 0) >= 0;
	if (ch == '\\') {
		char e = *c->s;
		if (!e)
			return pc_fail(c, "the pattern ends inside an escape");
		c->s++;
		int at = c->p->count;
		bool neg;
		if (pc_emit(c, PI_CLASS, c->p->nranges, 0) < 0)
			return false;
		if (pc_class_escape(c, e, &neg)) {
			c->p->ins[at].neg = neg;
			c->p->ins[at].ranges = (uint16_t)(c->p->nranges - c->p->ins[at].x);
			return true;
		}
		if (c->bad)
			return false;
		c->p->count--; /* not a class: a plain byte */
		int b = pc_escape_byte(e);
		if (b < 0)
			return pc_fail(c, e >= '1' && e <= '9'
					      ? "backreferences are not supported"
					      : "unsupported escape (\\b, \\p and the like are not "
						"supported)");
		return pc_emit(c, PI_CHAR, (uint16_t)b, 0) >= 0;
	}
	if (ch == '*' || ch == '+' || ch == '?' || ch == '{')
		return pc_fail(c, "a repetition operator has nothing to repeat");
	return pc_emit(c, PI_CHAR, (uint8_t)ch, 0) >= 0;
}

static bool pc_number(struct pc *c, int *out)
{
	int n = 0, digits = 0;
	while (*c->s >= '0' && *c->s <= '9') {
		n = n * 10 + (*c->s++ - '0');
		if (++digits > 4)
			return pc_fail(c, "a repetition count is too large");
	}
	*out = n;
	return digits > 0;
}

/* One atom and its repetition operators. */
static bool pc_repeat(struct pc *c, int nest)
{
	uint16_t start = c->p->count;
	if (!pc_atom(c, nest))
		return false;
	for (;;) {
		char q = *c->s;
		uint16_t end = c->p->count;
		if (q == '*' || q == '?') {
			/* L: SPLIT body, out; body; [JMP L for *]; out */
			c->s++;
			if (!pc_insert(c, start, 1))
				return false;
			c->p->ins[start] =
			    (struct api_pattern_ins){PI_SPLIT, 0, (uint16_t)(start + 1), 0, 0};
			if (q == '*' && pc_emit(c, PI_JMP, start, 0) < 0)
				return false;
			c->p->ins[start].y = c->p->count;
		} else if (q == '+') {
			/* body; SPLIT start, out */
			c->s++;
			if (pc_emit(c, PI_SPLIT, start, (uint16_t)(end + 1)) < 0)
				return false;
		} else if (q == '{') {
			const char *save = c->s++;
			int m, n;
			if (!pc_number(c, &m)) {
				if (c->bad)
					return false;
				c->s = save; /* a literal { as Go's RE2 reads it */
				return true;
			}
			n = m;
			if (*c->s == ',') {
				c->s++;
				if (!pc_number(c, &n)) {
					if (c->bad)
						return false;
					n = -1;
				}
			}
			if (*c->s != '}')
				return pc_fail(c, "a repetition {m,n} is not closed");
			c->s++;
			if (n >= 0 && n < m)
				return pc_fail(c, "a repetition {m,n} has n < m");
			/* m copies required, then n-m optional ones or a star */
			uint16_t len = (uint16_t)(end - start);
			if (m == 0) {
				/* turn the first copy itself into the optional/star part */
				if (n == 0) {
					c->p->count = start;
					continue;
				}
			}
			int extra = n < 0 ? 1 : n - m;
			for (int i = 1; i < m; i++)
				if (!pc_copy(c, start, end))
					return false;
			uint16_t patch[64];
			int np = 0;
			for (int i = 0; i < extra; i++) {
				uint16_t s0 = c->p->count;
				if (m == 0 && i == 0) {
					/* the atom already emitted is the first optional copy */
					if (!pc_insert(c, start, 1))
						return false;
					c->p->ins[start] = (struct api_pattern_ins){
					    PI_SPLIT, 0, (uint16_t)(start + 1), UINT16_MAX, 0};
					s0 = start;
				} else {
					uint16_t from = m == 0 ? (uint16_t)(start + 1) : start;
					if (pc_emit(c, PI_SPLIT, (uint16_t)(s0 + 1), UINT16_MAX) <
						0 ||
					    !pc_copy(c, from, (uint16_t)(from + len)))
						return false;
				}
				if (n < 0) {
					if (pc_emit(c, PI_JMP, s0, 0) < 0)
						return false;
				}
				if (np < 64)
					patch[np++] = s0;
				else
					return pc_fail(c, "a repetition count is too large");
			}
			for (int i = 0; i < np; i++)
				c->p->ins[patch[i]].y = c->p->count;
		} else {
			return true;
		}
		if (*c->s == '?')
			c->s++; /* lazy: same set of matches */
	}
}

static bool pc_concat(struct pc *c, int nest)
{
	while (*c->s && *c->s != '|' && *c->s != ')')
		if (!pc_repeat(c, nest))
			return false;
	return true;
}

static bool pc_alt(struct pc *c, int nest)
{
	uint16_t start = c->p->count;
	if (!pc_concat(c, nest))
		return false;
	while (*c->s == '|') {
		c->s++;
		/* SPLIT A, B; A; JMP out; B */
		if (!pc_insert(c, start, 1))
			return false;
		c->p->ins[start] =
		    (struct api_pattern_ins){PI_SPLIT, 0, (uint16_t)(start + 1), 0, 0};
		int j = pc_emit(c, PI_JMP, UINT16_MAX, 0);
		if (j < 0)
			return false;
		c->p->ins[start].y = c->p->count;
		if (!pc_concat(c, nest))
			return false;
		c->p->ins[j].x = c->p->count;
	}
	return true;
}

bool api_pattern_compile(const char *re, struct api_pattern *p, char *why, size_t cap)
{
	struct pc c = {p, re, why, cap, false};
	memset(p, 0, sizeof(*p));
	if (why && cap)
		why[0] = 0;
	if (strlen(re) > K32_API_CRD_PATTERN_LEN)
		return pc_fail(&c, "the pattern is longer than K32_API_CRD_PATTERN_LEN");
	if (!pc_alt(&c, 0))
		return false;
	if (*c.s == ')')
		return pc_fail(&c, "unexpected )");
	return pc_emit(&c, PI_MATCH, 0, 0) >= 0;
}

/* ---- the Pike VM ----------------------------------------------------------------------- */

struct pv_list {
	uint16_t n;
	uint16_t pc[K32_API_CRD_PATTERN_STATES];
};

static bool pv_class(const struct api_pattern *p, const struct api_pattern_ins *in, uint8_t ch)
{
	bool hit = false;
	for (uint16_t r = 0; r < in->ranges && !hit; r++)
		hit = ch >= p->lo[in->x + r] && ch <= p->hi[in->x + r];
	return hit != (in->neg != 0);
}

/* Adds pc and everything reachable from it without reading a byte; true if MATCH is. */
static bool pv_add(const struct api_pattern *p, struct pv_list *l, uint16_t *mark, uint16_t gen,
		   uint16_t pc, size_t at, size_t len)
{
	/* each state is expanded once per generation and pushes at most two */
	uint16_t stack[2 * K32_API_CRD_PATTERN_STATES + 2];
	size_t sp = 0;
	bool matched = false;
	stack[sp++] = pc;
	while (sp) {
		uint16_t i = stack[--sp];
		if (i >= p->count || mark[i] == gen)
			continue;
		mark[i] = gen;
		const struct api_pattern_ins *in = &p->ins[i];
		switch (in->op) {
		case PI_JMP:
			stack[sp++] = in->x;
			break;
		case PI_SPLIT:
			stack[sp++] = in->y;
			stack[sp++] = in->x;
			break;
		case PI_BOL:
			if (at == 0)
				stack[sp++] = (uint16_t)(i + 1);
			break;
		case PI_EOL:
			if (at == len)
				stack[sp++] = (uint16_t)(i + 1);
			break;
		case PI_MATCH:
			matched = true;
			break;
		default:
			l->pc[l->n++] = i;
			break;
		}
	}
	return matched;
}

bool api_pattern_match(const struct api_pattern *p, const char *s)
{
	struct pv_list a, b, *cur = &a, *nxt = &b;
	uint16_t mark[K32_API_CRD_PATTERN_STATES];
	size_t len = strlen(s);
	uint16_t gen = 1;
	memset(mark, 0, sizeof(mark));
	cur->n = 0;
	if (!p->count)
		return false;
	for (size_t at = 0;; at++) {
		/* unanchored search: a new thread starts at every position */
		if (pv_add(p, cur, mark, gen, 0, at, len))
			return true;
		if (at == len)
			return false;
		uint8_t ch = (uint8_t)s[at];
		nxt->n = 0;
		if (++gen == 0) {
			memset(mark, 0, sizeof(mark));
			gen = 1;
		}
		bool matched = false;
		for (uint16_t k = 0; k < cur->n; k++) {
			const struct api_pattern_ins *in = &p->ins[cur->pc[k]];
			bool ok = in->op == PI_ANY    ? ch != '\n'
				  : in->op == PI_CHAR ? ch == in->x
						      : pv_class(p, in, ch);
			if (ok &&
			    pv_add(p, nxt, mark, gen, (uint16_t)(cur->pc[k] + 1), at + 1, len))
				matched = true;
		}
		if (matched)
			return true;
		struct pv_list *t = cur;
		cur = nxt;
		nxt = t;
	}
}
