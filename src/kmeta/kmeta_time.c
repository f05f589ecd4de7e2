/*
 * kmeta_time.c - RFC 3339 timestamps as the Kubernetes API writes them (UTC, seconds:
 * "2006-01-02T15:04:05Z") and reads them (any offset, an optional fraction).
 *
 * Civil-date arithmetic on the proleptic Gregorian calendar in integers (days from and to
 * 1970-01-01 by 400-year eras), so no libc time function or time zone is involved: the
 * board has neither.
 */
#include "kmeta/kmeta.h"

#include <stdio.h>

void kmeta_civil_from_days(int64_t days, int *year, int *month, int *day)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t mon = mp < 10 ? mp + 3 : mp - 9;
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (int)mon;
	*year = (int)(yoe + era * 400 + (mon <= 2));
}

int64_t kmeta_days_from_civil(int year, int month, int day)
{
	int64_t yy = year - (month <= 2);
	int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
	int64_t yoe = yy - era * 400;
	int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int kmeta_days_in_month(int year, int month)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	return month == 2 && leap ? 29 : dm[month - 1];
}

void kmeta_rfc3339(uint64_t unix_s, char out[KMETA_RFC3339_LEN])
{
	int year, mon, day;
	kmeta_civil_from_days((int64_t)(unix_s / 86400), &year, &mon, &day);
	uint64_t s = unix_s % 86400;
	if (year > 9999) { /* the format has four digits of year: the last second it holds */
		snprintf(out, KMETA_RFC3339_LEN, "9999-12-31T23:59:59Z");
		return;
	}
	/* the remainders change nothing (year <= 9999, month <= 12, day <= 31): they show the
	 * compiler each field's width */
	snprintf(out, KMETA_RFC3339_LEN, "%04u-%02u-%02uT%02u:%02u:%02uZ", (unsigned)year % 10000u,
		 (unsigned)mon % 100u, (unsigned)day % 100u, (unsigned)(s / 3600),
		 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
}

/* n decimal digits at s into *out; false unless all are digits. */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool kmeta_rfc3339_parse(const char *s, uint64_t *out)
{
	int y, mo, d, h, mi, se;
	if (!s || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se))
		return false;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > kmeta_days_in_month(y, mo) || h > 23 ||
	    mi > 59 || se > 60)
		return false;
	const char *p = s + 19;
	if (*p == '.') {
		const char *f = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == f)
			return false;
	}
	int64_t offset = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return false;
		offset = (*p == '-' ? -1 : 1) * (int64_t)(oh * 3600 + om * 60);
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	int64_t days = kmeta_days_from_civil(y, mo, d);
	int64_t t = days * 86400 + h * 3600 + mi * 60 + se - offset;
	if (t < 0)
		return false;
	*out = (uint64_t)t;
	return true;
}
