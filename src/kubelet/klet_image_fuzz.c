/*
 * klet_image_fuzz.c - libFuzzer target for klet_image_ref_parse, the reader of a pod's
 * spec.containers[].image ("[registry/path/]NAME[.wasm][:TAG][@sha256:HEX]"), which comes
 * from any user who may create a pod.
 * Checks on an accepted reference: the file is NAME.wasm with no '/', no ".." and fits its
 * buffer; the tag is 1..128 of A-Z a-z 0-9 _ . - not starting with . or -; the digest is 64
 * lower-case hex digits; writing the parts back as "FILE[:TAG][@sha256:HEX]" parses to the
 * same parts. On a refusal: the error is INVALID_ARGS with a whole, NUL-terminated message
 * that ends with its rule (never cut). klet_image_path agrees with the parser.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet/klet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Says which check failed and on what, then aborts (the fuzzer keeps the input). */
static void fail(const char *why, const char *image)
{
	fprintf(stderr, "klet_image_fuzz: %s: image \"%s\"\n", why, image);
	abort();
}

static void check_tag(const char *t, const char *image)
{
	size_t n = strlen(t);
	if (n > 128 || (n && (t[0] == '.' || t[0] == '-')))
		fail("tag too long or starting with . or -", image);
	if (strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n)
		fail("tag with a character outside A-Z a-z 0-9 _ . -", image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[2048];
	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;

	struct klet_image_ref ref;
	struct k32_err err;
	k32_err_clear(&err);
	k32_status_t st = klet_image_ref_parse(s, &ref, &err);
	char path[K32_HTTP_PATH_LEN + 8];
	struct k32_err perr;
	k32_status_t pst = klet_image_path("/d", s, path, sizeof(path), &perr);
	if (st) {
		size_t m = strnlen(err.msg, sizeof(err.msg));
		if (st != K32_ERR_INVALID_ARGS || m == sizeof(err.msg) || !m)
			fail("refused with another status or no message", s);
		/* refusals name their rule at the end, whatever the image's length */
		if (m + 1 >= sizeof(err.msg))
			fail(err.msg, s);
		if (!pst)
			fail("the path resolver took what the parser refused", s);
		return 0;
	}
	size_t fl = strnlen(ref.file, sizeof(ref.file));
	if (fl == sizeof(ref.file) || fl <= 5 || strcmp(ref.file + fl - 5, ".wasm") ||
	    strchr(ref.file, '/') || strstr(ref.file, ".."))
		fail("accepted a file that is not NAME.wasm", s);
	check_tag(ref.tag, s);
	if (ref.sha256[0] &&
	    (strlen(ref.sha256) != 64 || strspn(ref.sha256, "0123456789abcdef") != 64))
		fail("accepted a digest that is not 64 hex digits", s);
	if (pst || strcmp(path + 3, ref.file) || strncmp(path, "/d/", 3))
		fail("the path resolver disagrees with the parser", s);
	/* the parts written back parse to the same parts */
	static char again[sizeof(ref.file) + sizeof(ref.tag) + sizeof(ref.sha256) + 16];
	snprintf(again, sizeof(again), "%s%s%s%s%s", ref.file, ref.tag[0] ? ":" : "", ref.tag,
		 ref.sha256[0] ? "@sha256:" : "", ref.sha256);
	struct klet_image_ref back;
	if (klet_image_ref_parse(again, &back, &err) || strcmp(back.file, ref.file) ||
	    strcmp(back.tag, ref.tag) || strcmp(back.sha256, ref.sha256))
		fail("its parts written back parse differently", s);
	return 0;
}
