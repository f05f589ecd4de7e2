/*
 * kmeta_fuzz.c - libFuzzer target for kmeta's parsers: the input as a quantity, a plain
 * integer and an RFC 3339 time, and as a Pod object whose limits and annotations are read.
 * Checks: an accepted quantity is at most INT64_MAX and is also valid to the grammar-only
 * reader; an accepted time formats back to a string that parses to the same second (for
 * whole-second UTC inputs); pod limits are always within k32_config.h's ranges; selectors,
 * conditions and owner references of any shape are read without a crash; a CronJob schedule
 * that parses fires on a whole minute after its start; the input as a pods/log query gives
 * options in range or a whole refusal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmeta/kmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a query "k=v&k2&..." (no decoding) for the log options reader. */
static bool q_get(void *ctx, const char *name, char *buf, size_t cap)
{
	const char *q = ctx;
	size_t n = strlen(name);
	while (q && *q) {
		const char *end = strchr(q, '&');
		size_t len = end ? (size_t)(end - q) : strlen(q);
		if (len >= n && !strncmp(q, name, n) && (len == n || q[n] == '=')) {
			size_t vl = len == n ? 0 : len - n - 1;
			if (vl >= cap)
				vl = cap - 1;
			memcpy(buf, q + n + (len == n ? 0 : 1), vl);
			buf[vl] = 0;
			return true;
		}
		q = end ? end + 1 : NULL;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[4096];
	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;

	uint64_t v;
	const char *why = NULL;
	if (kmeta_quantity_bytes(s, &v, &why)) {
		bool neg;
		if (v > INT64_MAX || !kmeta_quantity_valid(s, &neg, NULL))
			abort();
	} else if (!why) {
		abort();
	}
	(void)kmeta_parse_uint(s, 0, UINT64_MAX, &v);

	if (kmeta_rfc3339_parse(s, &v)) {
		char out[KMETA_RFC3339_LEN];
		uint64_t back;
		kmeta_rfc3339(v, out);
		if (v < 253402300800ull && (!kmeta_rfc3339_parse(out, &back) || back != v))
			abort();
	}

	/* a cron schedule: an accepted one gives a next time on a whole minute after the start,
	 * and the why of a refused one is a finished string */
	struct kmeta_cron cr;
	char cwhy[160];
	cwhy[0] = 0;
	if (kmeta_cron_parse(s, &cr, cwhy, sizeof(cwhy))) {
		uint64_t start = 1796312430; /* 2026-12-03T15:40:30Z */
		uint64_t next = kmeta_cron_next(&cr, start);
		if (next && (next <= start || next % 60 != 0))
			abort();
	} else if (!cwhy[0] || !memchr(cwhy, 0, sizeof(cwhy))) {
		abort();
	}

	/* log options: numbers in range, a refusal says why in a whole message */
	struct kmeta_log_opts lo;
	char lmsg[K32_ERR_MSG_LEN];
	if (kmeta_log_opts_parse(q_get, s, &lo, lmsg, sizeof(lmsg))) {
		if (!lmsg[0] || strlen(lmsg) >= sizeof(lmsg) - 1)
			abort();
	} else if (lo.tail_lines < -1 || lo.limit_bytes < -1 ||
		   lo.since_seconds >= 1000000000000000000ull ||
		   lo.after_seq >= 1000000000000000000ull || (!lo.has_since && lo.since_seconds)) {
		abort();
	}

	cJSON *pod = cJSON_ParseWithLength(s, size);
	if (pod) {
		struct kmeta_pod_limits lim;
		char msg[160];
		kmeta_pod_limits(pod, &lim, msg, sizeof(msg));
		if (lim.mem_bytes < 1 || lim.mem_bytes > K32_POD_MEM_MAX ||
		    lim.stack_bytes < K32_POD_STACK_BYTES_MIN ||
		    lim.stack_bytes > K32_POD_STACK_BYTES_MAX || lim.tick_ms < 1 ||
		    lim.tick_ms > K32_POD_TICK_MS_MAX || lim.frames > K32_KLET_POD_FRAMES_MAX ||
		    lim.call_deadline_ms > K32_POD_CALL_DEADLINE_MS_MAX ||
		    (!lim.gas_off && (lim.gas < 1 || lim.gas > K32_POD_GAS_MAX)) ||
		    !memchr(msg, 0, sizeof(msg)))
			abort();
		/* the object readers take any shape without crashing */
		(void)kmeta_label_selector_matches(k32_json_find(pod, "spec.selector"),
						   k32_json_find(pod, "metadata.labels"));
		(void)kmeta_cond_status(pod, "Ready");
		(void)kmeta_controller_uid(pod);
		cJSON_Delete(pod);
	}
	return 0;
}
