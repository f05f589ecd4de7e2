/*
 * http_util.c - pure helpers: header lookup, percent-decoding, query strings, reason
 * phrases and response building. No state, no allocation except through a response's
 * own capped buffers. Context: any thread (response helpers: the thread owning resp).
 */
#include "http/http_int.h"

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
		char kbuf[128];
		size_t klen;

		if (http_url_decode(key, true, kbuf, sizeof(kbuf), &klen) != K32_OK)
			continue;
		if (klen == name_len && memcmp(kbuf, name, klen) == 0)
			return http_url_decode(val, true, out, cap, out_len);
	}
	return K32_ERR_NOT_FOUND;
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
