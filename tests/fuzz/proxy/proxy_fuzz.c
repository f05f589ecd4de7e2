/*
 * proxy_fuzz.c - libFuzzer target for the proxy paths and the Endpoints reader.
 *
 * Byte 0 picks (even: a path, odd: an Endpoints body). A path is "path NUL query": whatever
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	if (!(data[0] & 1)) {
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
