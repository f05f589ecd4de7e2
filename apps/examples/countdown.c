/*
 * countdown - a run-to-completion pod (a Job's module): _start logs 3, 2, 1, done and
 * returns, so the container ends with exit code 0 and the pod Succeeds.
 */
#include "k32_klet.h"

K32_EXPORT(_start) void _start(void)
{
	static const char *const lines[] = {"3", "2", "1", "countdown: done"};
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t n = 0;
		while (lines[i][n])
			n++;
		k32_log(K32_LOG_INFO, lines[i], n);
	}
}
