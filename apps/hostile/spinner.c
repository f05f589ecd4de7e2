/*
 * spinner - a hostile pod: its k32_tick loops forever without a host call. With
 * kube32.io/execution-budget "off" (or a huge budget) gas never stops it; the call deadline
 * (kube32.io/call-deadline-ms) does, and deleting it stops it at once.
 */
#include "k32_klet.h"

static const char started[] = "spinner: tick starts, never to return";
static volatile uint32_t spins; /* volatile: the loop is work the compiler must keep */

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	k32_log(K32_LOG_INFO, started, sizeof(started) - 1);
	for (;;)
		spins++;
	return 0;
}
