/*
 * crashy - an example pod that fails on purpose: it ticks every 100 ms and, on its third
 * tick, reads far outside its linear memory. The runtime traps it; the kubelet records the
 * trap message (kubectl describe, kubectl logs --previous) and restarts it with back-off
 * until it shows CrashLoopBackOff.
 */
#include "k32_klet.h"

static uint32_t ticks;

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	static const char msg[] = "crashy: started, will trap on tick 3";
	k32_log(K32_LOG_INFO, msg, sizeof(msg) - 1);
	return 0;
}

K32_EXPORT(k32_tick) int32_t k32_tick(void)
{
	if (++ticks == 3) {
		volatile uint32_t *far = (volatile uint32_t *)0x7ffffff0u;
		return (int32_t)*far; /* out of bounds: a trap */
	}
	return 100;
}
