/*
 * http_util.c - pure helpers: header lookup, percent-decoding, query strings, reason
 * phrases and response building. No state, no allocation except through a response's
 * own capped buffers. Context: any thread (response helpers: the thread owning resp).
 */
#include "http/http_int.h"

#include <stdio.h>
#include <string.h>

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

bool http_str_ieq(struct k32_str a, const char *b)
{
	size_t n = strlen(b);

	if (a.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (lower((unsigned char)a.p[i]) != lower((unsigned char)b[i]))
			return false;
	}
	return true;
}

bool http_request_header(const struct http_request *req, const char *name,
			 struct k32_str *out_value)
{
	for (size_t i = 0; i < req->header_count; i++) {
		if (http_str_ieq(req->headers[i].name, name)) {
			if (out_value)
				*out_value = req->headers[i].value;
			return true;
		}
	}
	return false;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

k32_status_t http_url_decode(struct k32_str in, bool plus_is_space, char *out, size_t cap,
			     size_t *out_len)
{
	size_t o = 0;

	if (cap == 0)
		return K32_ERR_BUFFER_TOO_SMALL;
	for (size_t i = 0; i < in.len; i++) {
		int c = (unsigned char)in.p[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= in.len)
				return K32_ERR_INVALID_ARGS;
			hi = hexval((unsigned char)in.p[i + 1]);
			lo = hexval((unsigned char)in.p[i + 2]);
			if (hi < 0 || lo < 0)
				return K32_ERR_INVALID_ARGS;
			c = hi * 16 + lo;
			if (c == 0)
				return K32_ERR_INVALID_ARGS;
			i += 2;
		} else if (c == '+' && plus_is_space) {
			c = ' ';
		}
		if (o + 1 >= cap)
			return K32_ERR_BUFFER_TOO_SMALL;
		out[o++] = (char)c;
	}
	out[o] = 0;
	if (out_len)
		*out_len = o;
	return K32_OK;
}

bool http_query_next(struct k32_str *rest, struct k32_str *out_key, struct k32_str *out_value)
{
	while (rest->len > 0) {
		struct k32_str pair, tail;

		k32_str_cut(*rest, '&', &pair, &tail);
		*rest = tail;
		if (pair.len == 0)
			continue;
		if (!k32_str_cut(pair, '=', out_key, out_value)) {
			*out_key = pair;
			out_value->p = pair.p + pair.len;
			out_value->len = 0;
		}
		return true;
	}
	return false;
}

k32_status_t http_query_get(struct k32_str query, const char *name, char *out, size_t cap,
			    size_t *out_len)
{
	struct k32_str rest = query, key, val;
	size_t name_len = strlen(name);

	while (http_query_next(&rest, &key, &val)) {
		char kbuf[K32_HTTP_QUERY_KEY_MAX + 1];
		size_t klen;

		if (http_url_decode(key, true, kbuf, sizeof(kbuf), &klen) != K32_OK)
			continue;
		if (klen == name_len && memcmp(kbuf, name, klen) == 0)
			return http_url_decode(val, true, out, cap, out_len);
	}
	return K32_ERR_NOT_FOUND;
}

/* The length of in once percent-decoded; false on a bad escape or an encoded NUL. */
static bool http_url_decoded_len(struct k32_str in, size_t *out_len)
{
	size_t n = 0;
	for (size_t i = 0; i < in.len; i++, n++) {
		if (in.p[i] != '%')
			continue;
		if (i + 2 >= in.len)
			return false;
		int hi = hexval((unsigned char)in.p[i + 1]),
		    lo = hexval((unsigned char)in.p[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		i += 2;
	}
	*out_len = n;
	return true;
}

static void http_qfault_show(struct http_qfault *fault, struct k32_str raw)
{
	size_t n = raw.len < sizeof(fault->shown) - 4 ? raw.len : sizeof(fault->shown) - 4;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)raw.p[i];
		fault->shown[o++] = (char)(c >= 0x20 && c < 0x7f && c != '"' ? c : '?');
	}
	if (n < raw.len) {
		memcpy(fault->shown + o, "...", 3);
		o += 3;
	}
	fault->shown[o] = 0;
}

static bool http_parse_bool(const char *v)
{
	static const char *const ok[] = {"1", "t", "T", "true",	 "TRUE",  "True",
					 "0", "f", "F", "false", "FALSE", "False"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(v, ok[i]))
			return true;
	return false;
}

static bool http_qvalue_ok(const struct http_qspec *spec, const char *v)
{
	switch (spec->kind) {
	case HTTP_Q_TEXT:
		return true;
	case HTTP_Q_BOOL: /* a parameter given without a value ("?watch") reads as true */
		return !v[0] || http_parse_bool(v);
	case HTTP_Q_UINT: /* "" reads as absent */
		for (const char *c = v; *c; c++)
			if (*c < '0' || *c > '9')
				return false;
		return true;
	case HTTP_Q_CHOICE:
		for (const char *const *c = spec->choices; c && *c; c++)
			if (!strcmp(v, *c))
				return true;
		return false;
	}
	return false;
}

const struct http_qspec *http_qspec_find(const struct http_qspec *specs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(specs[i].name, name))
			return &specs[i];
	return NULL;
}

k32_status_t http_query_check(struct k32_str query, const struct http_qspec *specs, size_t n,
			      struct http_qfault *fault)
{
	struct k32_str rest = query, key, val;
	memset(fault, 0, sizeof(*fault));
	while (http_query_next(&rest, &key, &val)) {
		char kbuf[K32_HTTP_QUERY_KEY_MAX + 1];
		size_t klen;
		if (http_url_decode(key, true, kbuf, sizeof(kbuf), &klen) != K32_OK) {
			fault->kind = HTTP_QF_KEY;
			fault->len = key.len;
			http_qfault_show(fault, key);
			return K32_ERR_INVALID_ARGS;
		}
		const struct http_qspec *spec = http_qspec_find(specs, n, kbuf);
		if (!spec)
			continue;
		fault->spec = spec;
		size_t vlen;
		if (!http_url_decoded_len(val, &vlen)) {
			fault->kind = HTTP_QF_ENCODING;
			fault->len = val.len;
			http_qfault_show(fault, val);
			return K32_ERR_INVALID_ARGS;
		}
		if (vlen > spec->max_len) {
			fault->kind = HTTP_QF_TOO_LONG;
			fault->len = vlen;
			http_qfault_show(fault, val);
			return K32_ERR_INVALID_ARGS;
		}
		if (spec->kind != HTTP_Q_TEXT) {
			/* typed values are short: their max_len is a small constant */
			char v[K32_HTTP_QUERY_TYPED_MAX + 1];
			if (vlen > K32_HTTP_QUERY_TYPED_MAX ||
			    http_url_decode(val, true, v, sizeof(v), NULL) != K32_OK ||
			    !http_qvalue_ok(spec, v)) {
				fault->kind = HTTP_QF_TYPE;
				fault->len = vlen;
				http_qfault_show(fault, val);
				return K32_ERR_INVALID_ARGS;
			}
		}
	}
	fault->spec = NULL;
	return K32_OK;
}

void http_qfault_message(const struct http_qfault *fault, char *buf, size_t cap)
{
	const struct http_qspec *s = fault->spec;
	switch (fault->kind) {
	case HTTP_QF_NONE:
		snprintf(buf, cap, "query is valid");
		return;
	case HTTP_QF_KEY:
		snprintf(buf, cap,
			 "query parameter name \"%s\" is not valid percent-encoding or is over %d "
			 "bytes; fix the request's query string",
			 fault->shown, K32_HTTP_QUERY_KEY_MAX);
		return;
	case HTTP_QF_ENCODING:
		snprintf(
		    buf, cap,
		    "query parameter %s=\"%s\" is not valid percent-encoding (every %% must be "
		    "followed by two hex digits, and %%00 is not allowed)",
		    s->name, fault->shown);
		return;
	case HTTP_QF_TOO_LONG:
		snprintf(
		    buf, cap,
		    "query parameter %s=\"%s\" is %zu bytes long, over the limit of %zu%s%s%s; "
		    "shorten it (the request was not carried out)",
		    s->name, fault->shown, fault->len, s->max_len, s->limit_name ? " (" : "",
		    s->limit_name ? s->limit_name : "", s->limit_name ? ")" : "");
		return;
	case HTTP_QF_TYPE:
		break;
	}
	char allowed[160] = "";
	switch (s->kind) {
	case HTTP_Q_BOOL:
		snprintf(allowed, sizeof(allowed), "true or false");
		break;
	case HTTP_Q_UINT:
		snprintf(allowed, sizeof(allowed), "a non-negative integer of at most %zu digits",
			 s->max_len);
		break;
	case HTTP_Q_CHOICE: {
		size_t o = 0;
		for (const char *const *c = s->choices; c && *c && o < sizeof(allowed); c++) {
			int w = snprintf(allowed + o, sizeof(allowed) - o, "%s%s",
					 c == s->choices ? "" : ", ", *c);
			if (w < 0)
				break;
			o += (size_t)w;
		}
		break;
	}
	case HTTP_Q_TEXT:
		break;
	}
	snprintf(buf, cap, "query parameter %s=\"%s\" is not valid: expected %s", s->name,
		 fault->shown, allowed);
}

const char *http_status_reason(int status)
{
	/* clang-format off */
	switch (status) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default:  return "Unknown";
	}
	/* clang-format on */
}

static bool has_crlf(const char *s)
{
	return strchr(s, '\r') || strchr(s, '\n');
}

k32_status_t http_response_header(struct http_response *resp, const char *name, const char *value)
{
	size_t before = resp->headers.len;
	k32_status_t st;

	if (!name || !value || !*name || has_crlf(name) || has_crlf(value) || strchr(name, ':'))
		return K32_ERR_INVALID_ARGS;
	st = k32_buf_printf(&resp->headers, NULL, "%s: %s\r\n", name, value);
	if (st != K32_OK) {
		resp->headers.len = before;
		if (resp->headers.data)
			resp->headers.data[before] = 0;
	}
	return st;
}

k32_status_t http_response_set(struct http_response *resp, int status, const char *content_type,
			       const void *body, size_t len)
{
	k32_status_t st;

	resp->status = status;
	if (content_type) {
		st = http_response_header(resp, "Content-Type", content_type);
		if (st != K32_OK)
			return st;
	}
	k32_buf_reset(&resp->body);
	if (len == 0)
		return K32_OK;
	return k32_buf_append(&resp->body, body, len, NULL);
}
