/*
 * k32_base64.h - base64 (RFC 4648, standard alphabet) for what Kubernetes carries as base64:
 * Secret data, ConfigMap binaryData (pod modules), kubeconfig certificate data.
 *
 * No allocation: the caller sizes the output with k32_base64_len / k32_base64_max_decoded.
 * Context: any thread; pure functions.
 */
#ifndef K32_BASE64_H
#define K32_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_status.h"

/* Characters of the encoding of n bytes, padding included, the NUL not. */
static inline size_t k32_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* The most bytes text of text_len characters can decode to. */
static inline size_t k32_base64_max_decoded(size_t text_len)
{
	return text_len / 4 * 3 + 3;
}

/* Writes k32_base64_len(len) characters and a NUL to out. */
void k32_base64_encode(const uint8_t *in, size_t len, char *out);

/*
 * Whether s is canonical base64 as Kubernetes checks a Secret's data: a multiple of four
 * characters, '=' only as the last one or two, nothing else outside the alphabet.
 */
bool k32_base64_valid(const char *s);

/*
 * Decodes the NUL-terminated text in into out (cap bytes), setting *out_len. Line breaks and
 * spaces are skipped (PEM and kubeconfig files wrap), the first '=' ends the data.
 * K32_ERR_INVALID_ARGS for a character outside the alphabet, K32_ERR_BUFFER_TOO_SMALL when
 * the bytes do not fit in cap.
 */
k32_status_t k32_base64_decode(const char *in, uint8_t *out, size_t cap, size_t *out_len);

#endif
