/*
 * kmeta_logopts.c - pods/log options (PodLogOptions) from a query: the one reader the API's
 * pods/log proxy (src/cplane) and the kubelet's /containerLogs (src/kubelet) share, so a value
 * means the same on both (`previous=1` was checked as valid and then read as false).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kmeta/kmeta.h"

/* Go's strconv.ParseBool; "" (a parameter without a value) is true. */
static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"", "1", "t", "T", "true", "TRUE", "True"};
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcmp(s, yes[i]))
			return *out = true, true;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcmp(s, no[i]))
			return *out = false, true;
	return false;
}

/* 1..18 decimal digits (fits an int64). */
static bool parse_digits(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789");
	if (!n || n > 18 || s[n])
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	*out = v;
	return true;
}

int kmeta_log_opts_parse(kmeta_query_get_fn get, void *ctx, struct kmeta_log_opts *out, char *msg,
			 size_t cap)
{
	static const struct {
		const char *name;
		bool is_bool;
		size_t off;
	} params[] = {
	    {"previous", true, offsetof(struct kmeta_log_opts, previous)},
	    {"timestamps", true, offsetof(struct kmeta_log_opts, timestamps)},
	    {"follow", true, offsetof(struct kmeta_log_opts, follow)},
	    {"tailLines", false, offsetof(struct kmeta_log_opts, tail_lines)},
	    {"limitBytes", false, offsetof(struct kmeta_log_opts, limit_bytes)},
	    {"sinceSeconds", false, offsetof(struct kmeta_log_opts, since_seconds)},
	    {"afterSeq", false, offsetof(struct kmeta_log_opts, after_seq)},
	};
	memset(out, 0, sizeof(*out));
	out->tail_lines = -1;
	out->limit_bytes = -1;
	if (msg && cap)
		msg[0] = 0;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		char v[32];
		if (!get(ctx, params[i].name, v, sizeof(v)))
			continue;
		char *field = (char *)out + params[i].off;
		uint64_t n = 0;
		bool ok = params[i].is_bool ? parse_bool(v, (bool *)field) : parse_digits(v, &n);
		if (!ok) {
			if (msg && cap)
				snprintf(msg, cap, "%s: Invalid value: \"%s\": %s", params[i].name,
					 K32_CLIP(v),
					 params[i].is_bool
					     ? "must be true or false (or 1, t, 0, f)"
					     : "must be a whole number of at most 18 digits");
			return -1;
		}
		if (params[i].is_bool)
			continue;
		if (!strcmp(params[i].name, "sinceSeconds")) {
			out->has_since = true;
			out->since_seconds = n;
		} else if (!strcmp(params[i].name, "afterSeq")) {
			out->after_seq = n;
		} else {
			*(int64_t *)(void *)field = (int64_t)n;
		}
	}
	return 0;
}
