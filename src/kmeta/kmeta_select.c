/*
 * kmeta_select.c - LabelSelector objects ({matchLabels, matchExpressions}) and the
 * requirements they share with node selector terms, matched as Kubernetes does.
 */
#include "kmeta/kmeta.h"

#include <string.h>

static bool in_values(const cJSON *values, const char *v)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, values)
	{
		if (cJSON_IsString(x) && !strcmp(x->valuestring, v))
			return true;
	}
	return false;
}

/* A decimal integer, optional '-' then digits only, that fits in int64. */
static bool parse_int(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t v;
	if (!kmeta_parse_uint(s + neg, 0, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

bool kmeta_requirement_matches(const char *op, const cJSON *values, const char *v)
{
	if (!op)
		return false;
	if (!strcmp(op, "In"))
		return v && in_values(values, v);
	if (!strcmp(op, "NotIn"))
		return !v || !in_values(values, v);
	if (!strcmp(op, "Exists"))
		return v != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return v == NULL;
	if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
		/* one integer value; a label that is not an integer matches neither */
		const cJSON *x = cJSON_GetArrayItem(values, 0);
		int64_t a, b;
		if (!v || cJSON_GetArraySize(values) != 1 || !cJSON_IsString(x) ||
		    !parse_int(v, &a) || !parse_int(x->valuestring, &b))
			return false;
		return op[0] == 'G' ? a > b : a < b;
	}
	return false;
}

static const char *label(const cJSON *labels, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool kmeta_label_selector_matches(const cJSON *selector, const cJSON *labels)
{
	if (!cJSON_IsObject(selector))
		return false;
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(selector, "matchLabels");
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(selector, "matchExpressions");
	if (cJSON_GetArraySize(ml) == 0 && cJSON_GetArraySize(me) == 0)
		return false;
	const cJSON *l;
	cJSON_ArrayForEach(l, ml)
	{
		const char *v = label(labels, l->string);
		if (!cJSON_IsString(l) || !v || strcmp(v, l->valuestring))
			return false;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, me)
	{
		const char *key = kmeta_jstr(e, "key");
		if (!key || !kmeta_requirement_matches(
				kmeta_jstr(e, "operator"),
				cJSON_GetObjectItemCaseSensitive(e, "values"), label(labels, key)))
			return false;
	}
	return true;
}
