/*
 * proxy_fuzz.c - libFuzzer target for the proxy paths and the Endpoints reader.
 *
 * Byte 0 picks (mod 3): 0 a path, 1 an Endpoints body, 2 the bytes a port-forward client
 * sends (SPDY frames into an api_pf session whose forward is a canned echo: every frame sequence
 * must be taken or end the tunnel, never crash or leak). A path is "path NUL query": whatever
 * api_proxy_parse accepts must have a target with no byte a request line cannot carry and
 * within K32_API_PROXY_PATH_MAX, and names of object-name characters only. An Endpoints body
 * is JSON: every endpoint kmeta_endpoints_pick returns must have a plain host, a port and
 * names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_srv.h"
#include "kmeta/kmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f)
			__builtin_trap();
}

static int echo_forward(void *ctx, const struct api_pf *s, const char *method, const char *target,
			const char *ctype, const void *body, size_t body_len, char *rct,
			size_t rcap, struct k32_buf *answer)
{
	(void)ctx;
	(void)s;
	(void)ctype;
	(void)body;
	(void)rct;
	(void)rcap;
	if (!method[0] || target[0] != '/' || body_len > K32_API_PROXY_BODY_MAX)
		__builtin_trap();
	k32_buf_append(answer, "ok", 2, NULL);
	return 200;
}

static void feed_tunnel(const uint8_t *data, size_t size)
{
	struct api_pf *s = api_pf_new("default", "p", "n", "127.0.0.1", 1);
	if (!s)
		return;
	api_pf_set_forward(s, echo_forward, NULL);
	/* in pieces of varying size, as a socket hands them over */
	size_t off = 0, step = 1;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		if (!api_pf_input(s, data + off, n))
			break;
		k32_buf_reset(api_pf_output(s));
		off += n;
		step = step * 3 % 61 + 1;
	}
	api_pf_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 1 && data[0] % 3 == 2) {
		feed_tunnel(data + 1, size - 1);
		return 0;
	}
	if (size < 1 || size > 4096)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	if (data[0] % 3 == 0) {
		size_t pl = strlen(s);
		const char *q = pl + 1 < size - 1 ? s + pl + 1 : "";
		struct api_proxy_target t;
		struct api_fail f;
		api_fail_clear(&f);
		if (api_proxy_parse(s, k32_str_from(q), &t, &f) && !f.code && !t.portforward) {
			if (strlen(t.target) > K32_API_PROXY_PATH_MAX || t.target[0] != '/')
				__builtin_trap();
			check_plain(t.target);
			check_plain(t.ns);
			check_plain(t.name);
		}
	} else {
		cJSON *j = cJSON_ParseWithLength(s, size - 1);
		struct kmeta_endpoint ep;
		uint32_t n = kmeta_endpoints_pick(j, data[0], &ep);
		if (n > K32_SVC_ENDPOINTS_MAX)
			__builtin_trap();
		if (n && (!kmeta_host_ok(ep.ip) || !ep.port || !ep.pod[0] || !ep.node[0]))
			__builtin_trap();
		cJSON_Delete(j);
	}
	free(s);
	return 0;
}
