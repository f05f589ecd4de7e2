/*
 * sim_conf.c - kube32-sim's board file (--config FILE) and --boards spec, parsed into one
 * fixed list of boards (no allocation). See sim.h for the format.
 *
 * The parser reads untrusted text: every line is bounded (K32_SIM_CONF_LINE_MAX), every
 * number checked against its limit, every name against its buffer; the first error stops
 * it with the line number, what was wrong and what is expected. tests/fuzz/sim_conf holds
 * its fuzz seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmeta/kmeta.h"
#include "sim/sim.h"

#define SIM_CONF_MOD "sim-conf"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* A count: digits only, 1..max. */
static bool parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
	uint64_t v;
	if (!kmeta_parse_uint(s, 1, max, &v))
		return false;
	*out = v;
	return true;
}

/* Bytes as a Kubernetes quantity ("8Mi", "96Ki", "4194304"; kmeta's one parser), 1..max. */
static bool parse_bytes(const char *s, unsigned long long max, unsigned long long *out)
{
	uint64_t v;
	if (!kmeta_quantity_bytes(s, &v, NULL) || v < 1 || v > max)
		return false;
	*out = v;
	return true;
}

k32_status_t sim_conf_add(struct sim_conf *c, const char *profile, uint32_t count, const char *name,
			  struct k32_err *err)
{
	const struct klet_profile *p = sim_profile_find(profile);
	if (!p)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				   "unknown board profile \"%.40s\": use devkit, cardputer or host",
				   profile);
	if (count < 1 || count > K32_SIM_MAX_BOARDS - c->count)
		return k32_err_set(
		    err, K32_ERR_NO_RESOURCES, SIM_CONF_MOD,
		    "%u more %s boards: at most K32_SIM_MAX_BOARDS (%d) boards in all, "
		    "%u already",
		    (unsigned)count, p->name, K32_SIM_MAX_BOARDS, (unsigned)c->count);
	if (name && count != 1)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				   "name=%.60s names one board; count is %u", name,
				   (unsigned)count);
	if (name && (!name[0] || strlen(name) >= sizeof(c->boards[0].name)))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				   "board name \"%.60s\": 1 to %zu characters", name,
				   sizeof(c->boards[0].name) - 1);
	for (uint32_t n = 0; n < count; n++) {
		struct sim_conf_board *b = &c->boards[c->count];
		b->profile = p;
		if (name) {
			snprintf(b->name, sizeof(b->name), "%s", name);
		} else {
			/* PROFILE-<n>: the next number not taken by a board of that profile */
			uint32_t seq = 1;
			for (uint32_t i = 0; i < c->count; i++)
				if (c->boards[i].profile == p)
					seq++;
			snprintf(b->name, sizeof(b->name), "%s-%u", p->name, (unsigned)seq);
		}
		for (uint32_t i = 0; i < c->count; i++)
			if (!strcmp(c->boards[i].name, b->name))
				return k32_err_set(
				    err, K32_ERR_ALREADY_EXISTS, SIM_CONF_MOD,
				    "two boards named %s; give one another name=", b->name);
		c->count++;
	}
	return K32_OK;
}

k32_status_t sim_conf_add_spec(struct sim_conf *c, const char *spec, struct k32_err *err)
{
	char buf[K32_SIM_CONF_LINE_MAX];
	if (strlen(spec) >= sizeof(buf))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				   "--boards: longer than %d characters; use --config FILE",
				   K32_SIM_CONF_LINE_MAX - 1);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = buf, *next; tok && *tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = 0;
		char *colon = strchr(tok, ':');
		unsigned long long count = 1;
		if (colon) {
			*colon = 0;
			if (!parse_count(colon + 1, K32_SIM_MAX_BOARDS, &count))
				return k32_err_set(
				    err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				    "--boards: \"%.40s:%.20s\": expected PROFILE[:COUNT] "
				    "with COUNT 1..%d",
				    tok, colon + 1, K32_SIM_MAX_BOARDS);
		}
		k32_status_t st = sim_conf_add(c, tok, (uint32_t)count, NULL, err);
		if (st)
			return st;
	}
	return K32_OK;
}

/* One line of a board file, comments and blanks removed; line is modified. */
static k32_status_t parse_line(struct sim_conf *c, char *line, unsigned lineno, struct k32_err *err)
{
	char *words[K32_SIM_CONF_MAX_WORDS];
	size_t n = 0;
	for (char *p = line; *p;) {
		while (is_blank(*p))
			*p++ = 0;
		if (!*p)
			break;
		if (n == K32_SIM_CONF_MAX_WORDS)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
					   "line %u: more than %d words", lineno,
					   K32_SIM_CONF_MAX_WORDS);
		words[n++] = p;
		while (*p && !is_blank(*p))
			p++;
	}
	if (!n)
		return K32_OK;
	char *eq = strchr(words[0], '=');
	if (eq) { /* a setting: host-pool=BYTES, host-stack=BYTES */
		*eq = 0;
		unsigned long long v;
		bool pool = !strcmp(words[0], "host-pool"), stack = !strcmp(words[0], "host-stack");
		unsigned long long max = pool ? K32_SIM_HOST_POOL_MAX : K32_SIM_HOST_STACK_MAX;
		if (n != 1 || (!pool && !stack))
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
			    "line %u: unknown setting \"%.40s\": expected host-pool= "
			    "or host-stack=, or a board line PROFILE [count=N] "
			    "[name=NAME]",
			    lineno, words[0]);
		if (!parse_bytes(eq + 1, max, &v) || !v)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
					   "line %u: %s=%.30s: expected 1..%llu bytes (a "
					   "quantity such as 96Ki or 8Mi)",
					   lineno, words[0], eq + 1, max);
		*(pool ? &c->host_pool : &c->host_stack) = (size_t)v;
		return K32_OK;
	}
	unsigned long long count = 1;
	const char *name = NULL;
	for (size_t i = 1; i < n; i++) {
		if (!strncmp(words[i], "count=", 6)) {
			if (!parse_count(words[i] + 6, K32_SIM_MAX_BOARDS, &count))
				return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
						   "line %u: %.40s: expected count=1..%d", lineno,
						   words[i], K32_SIM_MAX_BOARDS);
		} else if (!strncmp(words[i], "name=", 5)) {
			name = words[i] + 5;
		} else {
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
			    "line %u: \"%.40s\": expected count=N or name=NAME after "
			    "the profile",
			    lineno, words[i]);
		}
	}
	k32_status_t st = sim_conf_add(c, words[0], (uint32_t)count, name, err);
	if (st) {
		char m[K32_ERR_MSG_LEN];
		snprintf(m, sizeof(m), "%s", err->msg);
		k32_err_set(err, st, SIM_CONF_MOD, "line %u: %s", lineno, m);
	}
	return st;
}

k32_status_t sim_conf_parse(const char *text, size_t len, struct sim_conf *c, struct k32_err *err)
{
	char line[K32_SIM_CONF_LINE_MAX];
	unsigned lineno = 0;
	size_t i = 0;
	if (len > K32_SIM_CONF_MAX_BYTES)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
				   "board file of %zu bytes: at most K32_SIM_CONF_MAX_BYTES (%d)",
				   len, K32_SIM_CONF_MAX_BYTES);
	while (i < len) {
		size_t n = 0;
		bool comment = false;
		lineno++;
		for (; i < len && text[i] != '\n'; i++) {
			if (text[i] == '#')
				comment = true;
			if (comment)
				continue;
			if (!text[i] || n + 1 >= sizeof(line))
				return k32_err_set(err, K32_ERR_INVALID_ARGS, SIM_CONF_MOD,
						   "line %u: %s", lineno,
						   text[i] ? "longer than K32_SIM_CONF_LINE_MAX"
							   : "a NUL byte: is it a text file?");
			line[n++] = text[i];
		}
		i++; /* the newline */
		line[n] = 0;
		k32_status_t st = parse_line(c, line, lineno, err);
		if (st)
			return st;
	}
	return K32_OK;
}
