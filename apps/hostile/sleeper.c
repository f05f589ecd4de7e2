/*
 * sleeper - a hostile pod: its k32_tick sleeps 10 ms at a time and never returns. Each
 * k32_sleep_ms costs one unit of gas, so the execution budget alone would let it hold its
 * node for hours; the call deadline (kube32.io/call-deadline-ms) stops it, and deleting it
 * wakes it at once. k32_http answers, so a test can see it run between its ticks.
 */
#include "k32_klet.h"

static const char started[] = "sleeper: tick starts, never to return";

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	k32_log(K32_LOG_INFO, started, sizeof(started) - 1);
	for (;;)
		k32_sleep_ms(10);
	return 0;
}
