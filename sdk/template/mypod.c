/*
 * mypod - a pod to start from: k32_init says hello, k32_tick counts and logs every fifth
 * tick with k32_logf, k32_http answers with the count.
 *
 *   kubectl logs mypod
 *   curl -H 'X-Kube32-Pod: default/mypod' http://127.0.0.1:7000/hello
 */
#include "k32_klet.h"

static uint32_t ticks;

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	k32_logf(K32_LOG_INFO, "mypod: started at %lld ms", (long long)k32_time_ms());
	return 0;
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	ticks++;
	if (ticks % 5 == 0)
		k32_logf(K32_LOG_INFO, "mypod: tick %u (0x%04x)", ticks, ticks);
	return 200; /* ms until the next tick */
}

K32_EXPORT(k32_http) int32_t k32_http(uint32_t method, uint32_t path_len, uint32_t body_len)
{
	(void)method;
	(void)path_len;
	(void)body_len;
	char path[64], out[128];
	int32_t n = k32_http_path(path, sizeof(path));
	if (n < 0)
		n = 0;
	int32_t len = k32_snprintf(out, sizeof(out), "mypod: %u ticks, you asked for %.*s\n", ticks,
				   (int)n, path);
	if (len > (int32_t)sizeof(out) - 1)
		len = (int32_t)sizeof(out) - 1;
	k32_http_write(out, (uint32_t)len);
	return 200;
}
