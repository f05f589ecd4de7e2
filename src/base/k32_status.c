/*
 * k32_status.c - status names and the error-detail helpers. Never allocates.
 */
#include "base/k32_status.h"

#include <stdio.h>
#include <string.h>

const char *k32_status_name(k32_status_t status)
{
	switch (status) {
	case K32_OK:
		return "OK";
	case K32_ERR_INTERNAL:
		return "INTERNAL";
	case K32_ERR_NOT_SUPPORTED:
		return "NOT_SUPPORTED";
	case K32_ERR_NO_RESOURCES:
		return "NO_RESOURCES";
	case K32_ERR_NO_MEMORY:
		return "NO_MEMORY";
	case K32_ERR_INVALID_ARGS:
		return "INVALID_ARGS";
	case K32_ERR_BAD_HANDLE:
		return "BAD_HANDLE";
	case K32_ERR_WRONG_TYPE:
		return "WRONG_TYPE";
	case K32_ERR_OUT_OF_RANGE:
		return "OUT_OF_RANGE";
	case K32_ERR_BUFFER_TOO_SMALL:
		return "BUFFER_TOO_SMALL";
	case K32_ERR_BAD_STATE:
		return "BAD_STATE";
	case K32_ERR_TIMED_OUT:
		return "TIMED_OUT";
	case K32_ERR_SHOULD_WAIT:
		return "SHOULD_WAIT";
	case K32_ERR_CANCELED:
		return "CANCELED";
	case K32_ERR_PEER_CLOSED:
		return "PEER_CLOSED";
	case K32_ERR_NOT_FOUND:
		return "NOT_FOUND";
	case K32_ERR_ALREADY_EXISTS:
		return "ALREADY_EXISTS";
	case K32_ERR_ACCESS_DENIED:
		return "ACCESS_DENIED";
	case K32_ERR_IO:
		return "IO";
	case K32_ERR_CORRUPT:
		return "CORRUPT";
	case K32_ERR_CONFLICT:
		return "CONFLICT";
	case K32_ERR_COMPACTED:
		return "COMPACTED";
	case K32_ERR_TRAP:
		return "TRAP";
	default:
		return "UNKNOWN";
	}
}

k32_status_t k32_err_vset(struct k32_err *err, k32_status_t status, const char *module,
			  const char *fmt, va_list ap)
{
	if (!err)
		return status;
	err->status = status;
	err->module = module;
	/* vsnprintf writes into the fixed buffer and truncates; it does not allocate for the
	 * conversions we use (%s %d %u %zu %llu %x %c). */
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (n >= (int)sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
	return status;
}

k32_status_t k32_err_set(struct k32_err *err, k32_status_t status, const char *module,
			 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	k32_err_vset(err, status, module, fmt, ap);
	va_end(ap);
	return status;
}

const char *k32_clip_to(char *out, size_t cap, const char *s)
{
	return k32_clip_mem(out, cap, s, s ? strlen(s) : 0);
}

const char *k32_clip_mem(char *out, size_t cap, const char *s, size_t n)
{
	if (!cap)
		return "";
	if (n < cap) {
		if (n)
			memcpy(out, s, n);
		out[n] = 0; /* s need not end with a NUL */
		return out;
	}
	if (cap < 8) { /* no room for a start, "..." and an end */
		memcpy(out, s, cap - 1);
		out[cap - 1] = 0;
		return out;
	}
	/* the start says what it is, the end tells generated names apart ("-x2k7q") and
	 * keeps a sentence's last words */
	size_t keep = cap - 1 - 3, tail = keep / 3, head = keep - tail;
	memcpy(out, s, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, s + n - tail, tail);
	out[head + 3 + tail] = 0;
	return out;
}

const char *k32_clip(char out[K32_CLIP_BUF], const char *s)
{
	return k32_clip_to(out, K32_CLIP_BUF, s);
}

void k32_err_clear(struct k32_err *err)
{
	if (!err)
		return;
	err->status = K32_OK;
	err->module = "";
	err->msg[0] = '\0';
}
