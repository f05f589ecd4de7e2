/*
 * api_select.c - label and field selectors: parser and matcher.
 *
 * Grammar (Kubernetes labels.Parse, the subset clients send): requirements joined by commas,
 * each one of `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` (exists), `!k`
 * (does not exist). Field selectors allow only `=`, `==`, `!=` and only the fields the
 * resource declares (api_registry.c). The parsed selector lives entirely inside struct
 * api_selector (tokens copied into its text buffer), so parsing never allocates; the
 * K32_API_* limits bound its size. Reentrant.
 */
#include "api/api_int.h"

#include <stdio.h>
#include <string.h>

static bool api_is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Name part of a qualified name: 63 chars, alphanumeric at both ends, [-_.] inside. */
static const char *api_check_qualified_part(const char *s, size_t n)
{
	if (n == 0)
		return "name part must be non-empty";
	if (n > 63)
		return "name part must be no more than 63 characters";
	if (!api_is_alnum(s[0]) || !api_is_alnum(s[n - 1]))
		return "name part must consist of alphanumeric characters, '-', '_' or '.', and "
		       "must start and end with an alphanumeric character";
	for (size_t i = 0; i < n; i++)
		if (!api_is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return "name part must consist of alphanumeric characters, '-', '_' or "
			       "'.', and must start and end with an alphanumeric character";
	return NULL;
}

const char *api_check_label_key(const char *s)
{
	if (!s)
		return "key must be a string (labels and annotations are objects, not arrays)";
	const char *slash = strchr(s, '/');
	if (slash) {
		char prefix[254];
		size_t pl = (size_t)(slash - s);
		if (pl == 0 || pl >= sizeof(prefix))
			return "prefix part must be a DNS-1123 subdomain of at most 253 characters";
		memcpy(prefix, s, pl);
		prefix[pl] = 0;
		if (api_check_dns_subdomain(prefix))
			return "prefix part must be a lowercase RFC 1123 subdomain";
		return api_check_qualified_part(slash + 1, strlen(slash + 1));
	}
	return api_check_qualified_part(s, strlen(s));
}

const char *api_check_label_value(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return NULL;
	if (n > 63)
		return "must be no more than 63 characters";
	if (api_check_qualified_part(s, n))
		return "a valid label must be an empty string or consist of alphanumeric "
		       "characters, '-', '_' or '.', and must start and end with an alphanumeric "
		       "character";
	return NULL;
}

const char *api_check_dns_label(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63)
		return "must be no more than 63 characters and non-empty";
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return "a lowercase RFC 1123 label must consist of lower case alphanumeric "
			       "characters or '-', and must start and end with an alphanumeric "
			       "character";
	}
	if (s[0] == '-' || s[n - 1] == '-')
		return "a lowercase RFC 1123 label must consist of lower case alphanumeric "
		       "characters or '-', and must start and end with an alphanumeric character";
	return NULL;
}

const char *api_check_dns_subdomain(const char *s)
{
	static const char msg[] =
	    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
	    "'-' or '.', and must start and end with an alphanumeric character";
	size_t n = strlen(s);
	if (n == 0)
		return "must be non-empty";
	if (n > 253)
		return "must be no more than 253 characters";
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return msg;
		if (c == '.' && (i == 0 || s[i - 1] == '.' || s[i - 1] == '-' || s[i + 1] == '-'))
			return msg;
	}
	if (s[0] == '-' || s[0] == '.' || s[n - 1] == '-' || s[n - 1] == '.')
		return msg;
	return NULL;
}

/* ---- parsing --------------------------------------------------------------------------- */

struct api_sel_parse {
	struct api_selector *sel;
	size_t used; /* bytes of sel->text used */
	struct api_fail *f;
	const char *what; /* "label" or "field" */
};

static const char *api_sel_skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Copies [p, p+n) trimmed into the text buffer; returns the copy or NULL. */
static const char *api_sel_store(struct api_sel_parse *ps, const char *p, size_t n)
{
	while (n && (p[0] == ' ' || p[0] == '\t')) {
		p++;
		n--;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (ps->used + n + 1 > sizeof(ps->sel->text))
		return NULL;
	char *dst = ps->sel->text + ps->used;
	memcpy(dst, p, n);
	dst[n] = 0;
	ps->used += n + 1;
	return dst;
}

static k32_status_t api_sel_bad(struct api_sel_parse *ps, const char *req, size_t n,
				const char *why)
{
	return api_fail_set(ps->f, 400, "BadRequest",
			    "unable to parse requirement: %s selector \"%s\": %s", ps->what,
			    k32_clip_mem((char[K32_CLIP_BUF]){0}, K32_CLIP_BUF, req, n), why);
}

static struct api_sel_term *api_sel_new_term(struct api_sel_parse *ps)
{
	if (ps->sel->term_count >= K32_API_MAX_SELECTOR_TERMS)
		return NULL;
	struct api_sel_term *t = &ps->sel->terms[ps->sel->term_count++];
	memset(t, 0, sizeof(*t));
	return t;
}

/* Finds a set operator " in " / " notin " followed by "(": returns its start or NULL. */
static const char *api_sel_find_setop(const char *p, const char *end, bool *out_notin,
				      const char **out_paren)
{
	for (const char *q = p; q < end; q++) {
		if (*q != ' ' && *q != '\t')
			continue;
		const char *w = api_sel_skip_ws(q, end);
		bool notin = (size_t)(end - w) > 5 && !strncmp(w, "notin", 5);
		bool in = !notin && (size_t)(end - w) > 2 && !strncmp(w, "in", 2);
		if (!in && !notin)
			continue;
		const char *a = api_sel_skip_ws(w + (notin ? 5 : 2), end);
		if (a < end && *a == '(') {
			*out_notin = notin;
			*out_paren = a;
			return q;
		}
	}
	return NULL;
}

static k32_status_t api_sel_parse_values(struct api_sel_parse *ps, struct api_sel_term *t,
					 const char *req, size_t rn, const char *open,
					 const char *end)
{
	const char *close = memchr(open, ')', (size_t)(end - open));
	if (!close || api_sel_skip_ws(close + 1, end) != end)
		return api_sel_bad(ps, req, rn, "expected a closing ')' at the end of the set");
	const char *p = open + 1;
	while (p <= close) {
		const char *c = memchr(p, ',', (size_t)(close - p));
		const char *e = c ? c : close;
		if (t->value_count >= K32_API_MAX_SELECTOR_VALUES)
			return api_sel_bad(
			    ps, req, rn,
			    "too many values in the set (limit K32_API_MAX_SELECTOR_VALUES)");
		const char *v = api_sel_store(ps, p, (size_t)(e - p));
		if (!v)
			return api_sel_bad(ps, req, rn,
					   "selector too long (limit K32_API_SELECTOR_LEN)");
		const char *why = api_check_label_value(v);
		if (why)
			return api_sel_bad(ps, req, rn, why);
		t->values[t->value_count++] = v;
		p = e + 1;
	}
	if (t->value_count == 0 || (t->value_count == 1 && !t->values[0][0]))
		return api_sel_bad(ps, req, rn,
				   "for 'in', 'notin' operators, values set can't be empty");
	return K32_OK;
}

static k32_status_t api_sel_parse_req(struct api_sel_parse *ps, const char *req, size_t rn,
				      bool label)
{
	const char *end = req + rn;
	const char *p = api_sel_skip_ws(req, end);
	struct api_sel_term *t = api_sel_new_term(ps);
	if (!t)
		return api_sel_bad(ps, req, rn,
				   "too many requirements (limit K32_API_MAX_SELECTOR_TERMS)");
	if (p == end)
		return api_sel_bad(ps, req, rn, "empty requirement");
	bool notin = false;
	const char *paren = NULL;
	const char *setop = label ? api_sel_find_setop(p, end, &notin, &paren) : NULL;
	const char *op = NULL;
	size_t oplen = 0;
	if (setop) {
		t->op = notin ? API_SEL_NOTIN : API_SEL_IN;
		t->key = api_sel_store(ps, p, (size_t)(setop - p));
		if (!t->key)
			return api_sel_bad(ps, req, rn,
					   "selector too long (limit K32_API_SELECTOR_LEN)");
		k32_status_t st = api_sel_parse_values(ps, t, req, rn, paren, end);
		if (st)
			return st;
	} else if ((op = memchr(p, '!', (size_t)(end - p))) && op + 1 < end && op[1] == '=') {
		t->op = API_SEL_NEQ;
		oplen = 2;
	} else if ((op = memchr(p, '=', (size_t)(end - p)))) {
		t->op = API_SEL_EQ;
		oplen = (op + 1 < end && op[1] == '=') ? 2 : 1;
	} else if (label && *p == '!') {
		t->op = API_SEL_NOTEXISTS;
		t->key = api_sel_store(ps, p + 1, (size_t)(end - p - 1));
	} else if (label) {
		t->op = API_SEL_EXISTS;
		t->key = api_sel_store(ps, p, (size_t)(end - p));
	} else {
		return api_sel_bad(ps, req, rn, "expected one of '=', '==', '!='");
	}
	if (op) {
		t->key = api_sel_store(ps, p, (size_t)(op - p));
		const char *v =
		    t->key ? api_sel_store(ps, op + oplen, (size_t)(end - op - oplen)) : NULL;
		if (!v)
			return api_sel_bad(ps, req, rn,
					   "selector too long (limit K32_API_SELECTOR_LEN)");
		if (label && (strchr(v, '=') || strchr(v, '!')))
			return api_sel_bad(ps, req, rn, "unexpected operator in the value");
		if (label) {
			const char *why = api_check_label_value(v);
			if (why)
				return api_sel_bad(ps, req, rn, why);
		}
		t->values[0] = v;
		t->value_count = 1;
	}
	if (!t->key)
		return api_sel_bad(ps, req, rn, "selector too long (limit K32_API_SELECTOR_LEN)");
	if (!t->key[0])
		return api_sel_bad(ps, req, rn, "the key is empty");
	if (label) {
		const char *why = api_check_label_key(t->key);
		if (why)
			return api_sel_bad(ps, req, rn, why);
	}
	return K32_OK;
}

static k32_status_t api_sel_parse_all(const char *s, struct api_selector *out, struct api_fail *f,
				      bool label)
{
	struct api_sel_parse ps = {.sel = out, .f = f, .what = label ? "label" : "field"};
	out->term_count = 0;
	if (!s)
		return K32_OK;
	size_t n = strlen(s);
	if (n >= K32_API_SELECTOR_LEN)
		return api_fail_set(f, 400, "BadRequest",
				    "%s selector is %zu bytes, limit is %d (K32_API_SELECTOR_LEN); "
				    "use a shorter selector",
				    ps.what, n, K32_API_SELECTOR_LEN - 1);
	const char *p = s, *end = s + n;
	if (api_sel_skip_ws(p, end) == end)
		return K32_OK;
	while (p <= end) {
		/* a requirement ends at a comma outside parentheses */
		const char *q = p;
		int depth = 0;
		while (q < end && (*q != ',' || depth)) {
			if (*q == '(')
				depth++;
			else if (*q == ')' && depth)
				depth--;
			q++;
		}
		k32_status_t st = api_sel_parse_req(&ps, p, (size_t)(q - p), label);
		if (st)
			return st;
		p = q + 1;
	}
	return K32_OK;
}

k32_status_t api_label_selector_parse(const char *s, struct api_selector *out, struct api_fail *f)
{
	return api_sel_parse_all(s, out, f, true);
}

k32_status_t api_field_selector_parse(const char *s, const struct api_resource *res,
				      struct api_selector *out, struct api_fail *f)
{
	k32_status_t st = api_sel_parse_all(s, out, f, false);
	if (st)
		return st;
	for (size_t i = 0; i < out->term_count; i++) {
		if (!api_resource_has_field(res, out->terms[i].key))
			return api_fail_set(f, 400, "BadRequest",
					    "field label not supported: %s (resource %s supports "
					    "metadata.name%s%s%s)",
					    K32_CLIP(out->terms[i].key), res->plural,
					    res->namespaced ? ", metadata.namespace" : "",
					    res->fields[0] ? ", " : "", res->fields);
	}
	return K32_OK;
}

/* ---- matching -------------------------------------------------------------------------- */

bool api_label_selector_match(const struct api_selector *sel, const cJSON *labels)
{
	for (size_t i = 0; i < sel->term_count; i++) {
		const struct api_sel_term *t = &sel->terms[i];
		const cJSON *v = labels ? cJSON_GetObjectItemCaseSensitive(labels, t->key) : NULL;
		const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
		bool in = false;
		for (size_t k = 0; s && k < t->value_count; k++)
			if (!strcmp(s, t->values[k]))
				in = true;
		switch (t->op) {
		case API_SEL_EQ:
		case API_SEL_IN:
			if (!in)
				return false;
			break;
		case API_SEL_NEQ:
		case API_SEL_NOTIN:
			if (in)
				return false;
			break;
		case API_SEL_EXISTS:
			if (!s)
				return false;
			break;
		case API_SEL_NOTEXISTS:
			if (s)
				return false;
			break;
		}
	}
	return true;
}

const char *api_field_value(const cJSON *obj, const char *path, char *buf, size_t cap)
{
	if (!strcmp(path, "source"))
		path = "source.component";
	const cJSON *cur = obj;
	const char *p = path;
	char seg[64];
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(seg))
			return "";
		memcpy(seg, p, n);
		seg[n] = 0;
		cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
		p = dot ? dot + 1 : p + n;
	}
	if (!cur)
		return "";
	if (cJSON_IsString(cur))
		return cur->valuestring;
	if (cJSON_IsBool(cur))
		return cJSON_IsTrue(cur) ? "true" : "false";
	if (cJSON_IsNumber(cur)) {
		snprintf(buf, cap, "%lld", (long long)cur->valuedouble);
		return buf;
	}
	return "";
}

bool api_field_selector_match(const struct api_selector *sel, const cJSON *obj)
{
	char buf[32];
	for (size_t i = 0; i < sel->term_count; i++) {
		const struct api_sel_term *t = &sel->terms[i];
		const char *v = api_field_value(obj, t->key, buf, sizeof(buf));
		bool eq = !strcmp(v, t->values[0]);
		/* spec.unschedulable and other booleans: absent means false */
		if (!eq && !v[0] && !strcmp(t->values[0], "false") &&
		    !strcmp(t->key, "spec.unschedulable"))
			eq = true;
		if ((t->op == API_SEL_EQ) != eq)
			return false;
	}
	return true;
}

bool api_selector_from_match_labels(const cJSON *match_labels, char *buf, size_t cap)
{
	size_t off = 0;
	buf[0] = 0;
	const cJSON *it;
	if (!cJSON_IsObject(match_labels))
		return match_labels == NULL;
	cJSON_ArrayForEach(it, match_labels)
	{
		if (!cJSON_IsString(it))
			continue;
		int n = snprintf(buf + off, cap - off, "%s%s=%s", off ? "," : "", it->string,
				 it->valuestring);
		if (n < 0 || (size_t)n >= cap - off)
			return false;
		off += (size_t)n;
	}
	return true;
}
