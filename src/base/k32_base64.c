/* k32_base64.c - see k32_base64.h. */
#include "base/k32_base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 6-bit value of an alphabet character, -1 for anything else. */
static int sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

void k32_base64_encode(const uint8_t *in, size_t len, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[o++] = alphabet[(v >> 18) & 63];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
	}
	out[o] = 0;
}

bool k32_base64_valid(const char *s)
{
	size_t n = 0, pad = 0;
	for (; s[n]; n++) {
		if (s[n] == '=')
			pad++;
		else if (pad || sextet((unsigned char)s[n]) < 0)
			return false;
	}
	return n % 4 == 0 && pad <= 2;
}

k32_status_t k32_base64_decode(const char *in, uint8_t *out, size_t cap, size_t *out_len)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;
	*out_len = 0;
	for (const char *p = in; *p && *p != '='; p++) {
		if (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
			continue;
		int v = sextet((unsigned char)*p);
		if (v < 0)
			return K32_ERR_INVALID_ARGS;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return K32_ERR_BUFFER_TOO_SMALL;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	*out_len = n;
	return K32_OK;
}
