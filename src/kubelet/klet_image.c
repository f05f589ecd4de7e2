/*
 * klet_image.c - an image reference's version: "[registry/path/]NAME[.wasm][:TAG]
 * [@sha256:HEX]" picks the module file NAME.wasm, and the tag or digest picks which bytes
 * (klet.h klet_image_ref_parse). The module store keeps a version per key of ConfigMap
 * NAME.wasm: key NAME.wasm is the untagged module, key TAG the module of that tag
 * (`kubectl create configmap ticker.wasm --from-file=v1=ticker1.wasm --from-file=v2=...`);
 * a digest is checked against the SHA-256 of the bytes found.
 */
#include <ctype.h>
#include <mbedtls/sha256.h>
#include <stdio.h>
#include <string.h>

#include "klet_int.h"

static bool tag_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

k32_status_t klet_image_ref_parse(const char *image, struct klet_image_ref *out,
				  struct k32_err *err)
{
	memset(out, 0, sizeof(*out));
	const char *base = strrchr(image, '/');
	base = base ? base + 1 : image;
	const char *at = strchr(base, '@');
	size_t blen = at ? (size_t)(at - base) : strlen(base);
	const char *colon = memchr(base, ':', blen);
	size_t n = colon ? (size_t)(colon - base) : blen;
	if (at) {
		const char *d = at + 1;
		if (strncmp(d, "sha256:", 7) || strlen(d + 7) != 64 ||
		    strspn(d + 7, "0123456789abcdef") != 64)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
					   "image \"%s\": a digest is @sha256: and 64 lower-case "
					   "hex digits",
					   K32_CLIP(image));
		memcpy(out->sha256, d + 7, 64);
		out->sha256[64] = 0;
	}
	if (colon) {
		size_t tl = blen - n - 1;
		if (!tl || tl >= sizeof(out->tag) || base[n + 1] == '.' || base[n + 1] == '-')
			return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
					   "image \"%s\": a tag is 1..%zu of A-Z a-z 0-9 _ . - "
					   "(not starting with . or -)",
					   K32_CLIP(image), sizeof(out->tag) - 1);
		for (size_t i = 0; i < tl; i++)
			if (!tag_char(base[n + 1 + i]))
				return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
						   "image \"%s\": a tag is 1..%zu of A-Z a-z 0-9 "
						   "_ . -",
						   K32_CLIP(image), sizeof(out->tag) - 1);
		memcpy(out->tag, base + n + 1, tl);
		out->tag[tl] = 0;
	}
	/* NAME: A-Z a-z 0-9 _ . -, starting and ending with a letter or digit (so the file
	 * name is a plain one: no "..", no '/', no spaces or control characters) */
	bool name_ok = n && !strstr(image, "..") && isalnum((unsigned char)base[0]) &&
		       isalnum((unsigned char)base[n - 1]);
	for (size_t i = 0; name_ok && i < n; i++)
		name_ok = tag_char(base[i]);
	if (!name_ok)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, KLET_MOD,
		    "image \"%s\": expected NAME[.wasm][:TAG][@sha256:HEX], NAME "
		    "of A-Z a-z 0-9 _ . - starting and ending with a letter or digit",
		    K32_CLIP(image));
	bool ext = n > 5 && !strncmp(base + n - 5, ".wasm", 5);
	int w = snprintf(out->file, sizeof(out->file), "%.*s%s", (int)n, base, ext ? "" : ".wasm");
	if (w < 0 || (size_t)w >= sizeof(out->file))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "image \"%s\": its name is over %zu bytes; shorten it",
				   K32_CLIP(image), sizeof(out->file) - 6);
	return K32_OK;
}

k32_status_t klet_image_file_path(const char *dir, const struct klet_image_ref *ref, char *out,
				  size_t cap, struct k32_err *err)
{
	int w = snprintf(out, cap, "%s/%s", dir, ref->file);
	if (w < 0 || (size_t)w >= cap)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "module file %s: its path under %s is over %zu bytes; shorten "
				   "the image name",
				   K32_CLIP(ref->file), K32_CLIP(dir), cap - 1);
	return K32_OK;
}

k32_status_t klet_image_path(const char *dir, const char *image, char *out, size_t cap,
			     struct k32_err *err)
{
	struct klet_image_ref ref; /* one reader of image references: the parser's */
	k32_status_t st = klet_image_ref_parse(image, &ref, err);
	return st ? st : klet_image_file_path(dir, &ref, out, cap, err);
}

void klet_image_sha256(const uint8_t *bytes, size_t len, char hex[65])
{
	unsigned char d[32];
	mbedtls_sha256_ret(bytes, len, d, 0);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

void klet_image_versions(const cJSON *cm, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	static const char *const maps[] = {"binaryData", "data"};
	for (int m = 0; m < 2; m++) {
		const cJSON *kv;
		cJSON_ArrayForEach(kv, cJSON_GetObjectItem(cm, maps[m]))
		{
			const char *sep = at ? ", " : "";
			size_t need = strlen(sep) + strlen(kv->string);
			/* whole keys only: when the next does not fit (with room for ", ..."), say
			 * there are more instead of cutting it */
			if (at + need + 6 > cap) {
				if (at + 6 <= cap)
					snprintf(out + at, cap - at, "%s...", sep);
				return;
			}
			at += (size_t)snprintf(out + at, cap - at, "%s%s", sep, kv->string);
		}
	}
}
