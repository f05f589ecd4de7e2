/*
 * hello - the example pod: k32_init logs a greeting, k32_tick counts (and logs every tenth
 * tick), k32_http answers every request with the tick count and the path it was asked for.
 *
 *   kubectl run hello --image=hello.wasm        (or apps/examples/hello-deployment.yaml)
 *   curl -H 'X-Kube32-Pod: default/hello' http://127.0.0.1:7000/any/path
 */
#include "k32_klet.h"

static uint32_t ticks;
static char line[160];
static char path[128];

static uint32_t put(char *dst, uint32_t at, const char *s)
{
	while (*s && at < sizeof(line) - 1)
		dst[at++] = *s++;
	return at;
}

static uint32_t put_u32(char *dst, uint32_t at, uint32_t v)
{
	char tmp[10];
	uint32_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && at < sizeof(line) - 1)
		dst[at++] = tmp[--n];
	return at;
}

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	uint32_t n = put(line, 0, "hello from kube32: k32_init");
	k32_log(K32_LOG_INFO, line, n);
	return 0;
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	ticks++;
	if (ticks % 10 == 1) {
		uint32_t n = put(line, 0, "tick ");
		n = put_u32(line, n, ticks);
		k32_log(K32_LOG_INFO, line, n);
	}
	return 0; /* the pod's period (kube32.io/tick-ms, default 1000 ms) */
}

K32_EXPORT(k32_http)
int32_t k32_http(uint32_t method, uint32_t path_len, uint32_t body_len)
{
	(void)method;
	(void)path_len;
	(void)body_len;
	int32_t pl = k32_http_path(path, sizeof(path) - 1);
	if (pl < 0)
		pl = 0;
	path[pl] = 0;
	uint32_t n = put(line, 0, "hello from kube32: ticks=");
	n = put_u32(line, n, ticks);
	n = put(line, n, " path=");
	n = put(line, n, path);
	n = put(line, n, "\n");
	k32_http_write(line, n);
	return 200;
}
