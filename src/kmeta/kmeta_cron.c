/*
 * kmeta_cron.c - CronJob schedules: the five-field cron grammar Kubernetes accepts
 * (minute hour day-of-month month day-of-week; "*", "?", lists, ranges, steps, month and
 * weekday names, the @yearly ... @hourly descriptors) and the next time one fires, in UTC.
 *
 * Semantics follow what kube-controller-manager's cron library does: day-of-week is 0-6
 * (Sunday 0); "a/n" means a to the field's maximum in steps of n; when both day fields are
 * restricted (neither is "*" or "?"), a day matches if either does, otherwise both must.
 * Parsing walks the string once with no allocation; kmeta_cron_next advances field by field
 * (month, day, hour, minute) so it takes at most a few thousand steps even for a schedule
 * that fires once in four years, and gives up (0) after K32_CRON_SEARCH_YEARS.
 */
#include "kmeta/kmeta.h"

#include <stdio.h>
#include <string.h>

struct cron_field {
	const char *name;
	int lo, hi;
	const char *const *names; /* names for lo.., or NULL */
	bool question;		  /* "?" allowed (the day fields) */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
					  "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct cron_field fields[5] = {
    {"minute", 0, 59, NULL, false},	    {"hour", 0, 23, NULL, false},
    {"day of month", 1, 31, NULL, true},    {"month", 1, 12, month_names, false},
    {"day of week", 0, 6, day_names, true},
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A number or (where the field has them) a three-letter name at *p, advancing *p. */
static bool cron_value(const struct cron_field *f, const char **p, const char *end, int *out)
{
	const char *s = *p;
	if (s < end && *s >= '0' && *s <= '9') {
		int v = 0;
		while (s < end && *s >= '0' && *s <= '9') {
			if (v > 1000)
				return false;
			v = v * 10 + (*s++ - '0');
		}
		*out = v;
		*p = s;
		return true;
	}
	if (f->names && end - s >= 3) {
		for (int i = 0; i <= f->hi - f->lo; i++) {
			const char *n = f->names[i];
			if (lower(s[0]) == n[0] && lower(s[1]) == n[1] && lower(s[2]) == n[2]) {
				*out = f->lo + i;
				*p = s + 3;
				return true;
			}
		}
	}
	return false;
}

/* One field's text [s, end) into a bit set; *star when it is "*" or "?" (or "*" / "?" with
 * step 1), which the day rule needs. */
static bool cron_field_parse(const struct cron_field *f, const char *s, const char *end,
			     uint64_t *bits, bool *star, char *why, size_t cap)
{
	*bits = 0;
	*star = false;
	const char *p = s;
	while (p <= end) {
		const char *part_end = memchr(p, ',', (size_t)(end - p));
		if (!part_end)
			part_end = end;
		int a, b, step = 1;
		bool all = false, single = false;
		const char *q = p;
		if (q < part_end && (*q == '*' || (*q == '?' && f->question))) {
			all = true;
			a = f->lo;
			b = f->hi;
			q++;
		} else if (cron_value(f, &q, part_end, &a)) {
			b = a;
			single = true;
			if (q < part_end && *q == '-') {
				q++;
				if (!cron_value(f, &q, part_end, &b)) {
					snprintf(why, cap, "%s: \"%.*s\" is not a range", f->name,
						 (int)(part_end - p), p);
					return false;
				}
				single = false;
			}
		} else {
			snprintf(why, cap, "%s: \"%.*s\" is not a value, a range or \"*\"", f->name,
				 (int)(part_end - p), p);
			return false;
		}
		if (q < part_end && *q == '/') {
			q++;
			if (!cron_value(&fields[0], &q, part_end, &step) || step < 1) {
				snprintf(why, cap, "%s: the step in \"%.*s\" must be a number >= 1",
					 f->name, (int)(part_end - p), p);
				return false;
			}
			if (single)
				b = f->hi; /* "a/n": from a to the field's maximum */
		}
		if (q != part_end) {
			snprintf(why, cap, "%s: unexpected \"%.*s\" in \"%.*s\"", f->name,
				 (int)(part_end - q), q, (int)(part_end - p), p);
			return false;
		}
		if (a < f->lo || b > f->hi || a > b) {
			snprintf(why, cap, "%s: \"%.*s\" is outside %d-%d", f->name,
				 (int)(part_end - p), p, f->lo, f->hi);
			return false;
		}
		for (int v = a; v <= b; v += step)
			*bits |= 1ull << v;
		if (all && step == 1)
			*star = true;
		p = part_end + 1;
	}
	return true;
}

bool kmeta_cron_parse(const char *s, struct kmeta_cron *out, char *why, size_t why_cap)
{
	static const struct {
		const char *name, *expr;
	} descriptors[] = {
	    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
	    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},	  {"@midnight", "0 0 * * *"},
	    {"@hourly", "0 * * * *"},
	};
	memset(out, 0, sizeof(*out));
	if (!s || !*s) {
		snprintf(why, why_cap,
			 "the schedule is empty: five fields are needed, e.g. "
			 "\"*/5 * * * *\"");
		return false;
	}
	if (strlen(s) > K32_CRON_SCHEDULE_MAX) {
		snprintf(why, why_cap, "the schedule is %zu bytes long, over the limit of %d",
			 strlen(s), K32_CRON_SCHEDULE_MAX);
		return false;
	}
	if (!strncmp(s, "TZ=", 3) || !strncmp(s, "CRON_TZ=", 8)) {
		snprintf(why, why_cap,
			 "a time zone in the schedule is not supported: use "
			 "spec.timeZone");
		return false;
	}
	if (s[0] == '@') {
		for (size_t i = 0; i < sizeof(descriptors) / sizeof(descriptors[0]); i++)
			if (!strcmp(s, descriptors[i].name))
				return kmeta_cron_parse(descriptors[i].expr, out, why, why_cap);
		snprintf(why, why_cap,
			 "\"%.40s\" is not a descriptor kube32 knows (@yearly, @annually, "
			 "@monthly, @weekly, @daily, @midnight, @hourly)",
			 s);
		return false;
	}
	const char *p = s;
	uint64_t bits[5];
	bool star[5];
	int n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if (n == 5) {
			snprintf(why, why_cap, "more than five fields in \"%.60s\"", s);
			return false;
		}
		if (!cron_field_parse(&fields[n], p, e, &bits[n], &star[n], why, why_cap))
			return false;
		n++;
		p = e;
	}
	if (n != 5) {
		snprintf(why, why_cap,
			 "%d field%s in \"%.60s\": five are needed (minute hour day-of-month month "
			 "day-of-week)",
			 n, n == 1 ? "" : "s", s);
		return false;
	}
	out->minutes = bits[0];
	out->hours = (uint32_t)bits[1];
	out->mdays = (uint32_t)bits[2];
	out->months = (uint16_t)bits[3];
	out->wdays = (uint8_t)bits[4];
	out->mday_star = star[2];
	out->wday_star = star[4];
	return true;
}

static bool cron_day_matches(const struct kmeta_cron *c, int64_t days, int mday)
{
	bool dom = c->mdays & (1u << mday);
	int wd = (int)((days % 7 + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
	bool dow = c->wdays & (1u << wd);
	if (c->mday_star || c->wday_star)
		return dom && dow;
	return dom || dow;
}

static void cron_next_month(int *y, int *m)
{
	if (++*m > 12) {
		*m = 1;
		++*y;
	}
}

uint64_t kmeta_cron_next(const struct kmeta_cron *c, uint64_t after_s)
{
	uint64_t t = after_s - after_s % 60 + 60; /* the first whole minute after */
	int64_t days = (int64_t)(t / 86400);
	int y, m, d;
	kmeta_civil_from_days(days, &y, &m, &d);
	int hour = (int)(t % 86400 / 3600), min = (int)(t % 3600 / 60);
	int last_year = y + K32_CRON_SEARCH_YEARS;
	while (y <= last_year) {
		if (!(c->months & (1u << m))) {
			cron_next_month(&y, &m);
			d = 1;
			hour = min = 0;
			continue;
		}
		days = kmeta_days_from_civil(y, m, d);
		bool today = cron_day_matches(c, days, d);
		while (today && hour < 24 && !(c->hours & (1u << hour))) {
			hour++;
			min = 0;
		}
		while (today && hour < 24 && min < 60 && !(c->minutes & (1ull << min)))
			min++;
		if (today && hour < 24 && min < 60)
			return (uint64_t)days * 86400 + (uint64_t)hour * 3600 + (uint64_t)min * 60;
		if (today && hour < 24) { /* no minute left in this hour: the next hour */
			hour++;
			min = 0;
			continue;
		}
		/* not this day, or no hour left in it: the next day */
		if (++d > kmeta_days_in_month(y, m)) {
			d = 1;
			cron_next_month(&y, &m);
		}
		hour = min = 0;
	}
	return 0;
}
