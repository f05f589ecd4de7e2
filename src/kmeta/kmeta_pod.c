/*
 * kmeta_pod.c - what a pod runs with: its memory quantities and kube32.io/ annotations,
 * each read by one strict parser with the range named in k32_config.h.
 *
 * The API server calls these to refuse a bad value with a 422 naming the field, the value
 * and the range; the kubelet calls the same functions to run the pod, so a value is never
 * read two ways (before: tick-ms "-5" ran with a period of ~4.29e9 ms, stack-bytes "4Gi"
 * became 0, "4294967297" became 1 and an execution budget of "-1" became 2^64-1).
 */
#include "kmeta/kmeta.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Bytes of a field path built here (the API's cause field holds 63). */
#define KMETA_PATH_LEN 96

static uint32_t report(kmeta_bad_fn bad, void *ctx, const char *field, const char *value,
		       const char *why)
{
	if (bad)
		bad(ctx, field, value, why);
	return 1;
}

static const char *ann_str(const cJSON *annotations, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(annotations, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A value annotation kube32.io/hardware may hold: comma-separated items such as "i2c",
 * "i2c:bme688" or "none" (the label form "i2c.bme688" too), each lower-case letters, digits
 * and '-', with at most one ':', '.' or '_' between a bus and a model. */
static bool hardware_ok(const char *s)
{
	if (strlen(s) > K32_POD_HARDWARE_MAX)
		return false;
	bool item_chars = false;
	unsigned seps = 0;
	for (const char *p = s;; p++) {
		char c = *p;
		if (c == ',' || c == 0) {
			if (!item_chars && (c == ',' || p != s))
				return false; /* an empty item: ",x", "x,,y", "x," */
			if (!c)
				return true;
			item_chars = false;
			seps = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
			item_chars = true;
		} else if (c == ':' || c == '.' || c == '_') {
			if (!item_chars || seps++ || !p[1] || p[1] == ',')
				return false;
		} else if (c != ' ') {
			return false;
		}
	}
}

uint32_t kmeta_pod_annotations(const cJSON *annotations, const char *field,
			       struct kmeta_pod_limits *lim, kmeta_bad_fn bad, void *ctx)
{
	struct kmeta_pod_limits l = {.mem_bytes = K32_POD_MEM_DEFAULT,
				     .gas = K32_KLET_POD_GAS,
				     .tick_ms = K32_KLET_TICK_DEFAULT_MS,
				     .stack_bytes = K32_KLET_POD_STACK_BYTES};
	uint32_t n = 0;
	char path[KMETA_PATH_LEN], why[200];
	const char *s;
	uint64_t v;
	if (lim)
		l.mem_bytes = lim->mem_bytes ? lim->mem_bytes : K32_POD_MEM_DEFAULT;
	if (annotations && !cJSON_IsObject(annotations))
		annotations = NULL; /* the API reports the type; nothing of it is read */

	s = ann_str(annotations, KMETA_ANN_EXECUTION_BUDGET);
	if (s && !strcmp(s, "off")) {
		l.gas_off = true;
	} else if (s && !kmeta_parse_uint(s, 1, K32_POD_GAS_MAX, &l.gas)) {
		snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_EXECUTION_BUDGET);
		snprintf(why, sizeof(why),
			 "must be \"off\" or an integer from 1 to %" PRIu64
			 " (gas per call, K32_POD_GAS_MAX)",
			 (uint64_t)K32_POD_GAS_MAX);
		n += report(bad, ctx, path, s, why);
		l.gas = K32_KLET_POD_GAS;
	}

	s = ann_str(annotations, KMETA_ANN_TICK_MS);
	if (s) {
		if (kmeta_parse_uint(s, 1, K32_POD_TICK_MS_MAX, &v)) {
			l.tick_ms = (uint32_t)v;
		} else {
			snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_TICK_MS);
			snprintf(why, sizeof(why),
				 "must be an integer from 1 to %" PRIu32
				 " (ms between ticks, K32_POD_TICK_MS_MAX)",
				 (uint32_t)K32_POD_TICK_MS_MAX);
			n += report(bad, ctx, path, s, why);
		}
	}

	s = ann_str(annotations, KMETA_ANN_STACK_BYTES);
	if (s) {
		const char *qwhy = NULL;
		if (kmeta_quantity_bytes(s, &v, &qwhy) && v >= K32_POD_STACK_BYTES_MIN &&
		    v <= K32_POD_STACK_BYTES_MAX) {
			l.stack_bytes = (uint32_t)v;
		} else {
			snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_STACK_BYTES);
			snprintf(why, sizeof(why),
				 "must be a byte quantity from %" PRIu32 " to %" PRIu32
				 " (K32_POD_STACK_BYTES_MIN..MAX) such as \"4Ki\"%s",
				 (uint32_t)K32_POD_STACK_BYTES_MIN,
				 (uint32_t)K32_POD_STACK_BYTES_MAX,
				 qwhy ? "; not a quantity (suffixes Ki, Mi, k, M, ...)" : "");
			n += report(bad, ctx, path, s, why);
		}
	}

	s = ann_str(annotations, KMETA_ANN_CALL_DEPTH);
	if (s) {
		if (kmeta_parse_uint(s, 1, K32_KLET_POD_FRAMES_MAX, &v)) {
			l.frames = (uint32_t)v;
		} else {
			snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_CALL_DEPTH);
			snprintf(why, sizeof(why),
				 "must be an integer from 1 to %" PRIu32
				 " (Wasm call frames, K32_KLET_POD_FRAMES_MAX)",
				 (uint32_t)K32_KLET_POD_FRAMES_MAX);
			n += report(bad, ctx, path, s, why);
		}
	}

	s = ann_str(annotations, KMETA_ANN_CALL_DEADLINE_MS);
	if (s) {
		if (kmeta_parse_uint(s, 1, K32_POD_CALL_DEADLINE_MS_MAX, &v)) {
			l.call_deadline_ms = (uint32_t)v;
		} else {
			snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_CALL_DEADLINE_MS);
			snprintf(why, sizeof(why),
				 "must be an integer from 1 to %" PRIu32
				 " (ms per call into the pod, K32_POD_CALL_DEADLINE_MS_MAX)",
				 (uint32_t)K32_POD_CALL_DEADLINE_MS_MAX);
			n += report(bad, ctx, path, s, why);
		}
	}

	s = ann_str(annotations, KMETA_ANN_HARDWARE);
	if (s && !hardware_ok(s)) {
		snprintf(path, sizeof(path), "%s[%s]", field, KMETA_ANN_HARDWARE);
		snprintf(why, sizeof(why),
			 "must be a comma-separated list of BUS or BUS:MODEL items such as "
			 "\"i2c:bme688\" (lower-case letters, digits, '-'), at most %" PRIu32
			 " bytes (K32_POD_HARDWARE_MAX)",
			 (uint32_t)K32_POD_HARDWARE_MAX);
		n += report(bad, ctx, path, s, why);
	}
	if (lim)
		*lim = l;
	return n;
}

/* Checks one resources.limits or resources.requests object. */
static uint32_t check_resource_list(const cJSON *list, const char *field, kmeta_bad_fn bad,
				    void *ctx)
{
	char path[KMETA_PATH_LEN], why[224];
	uint32_t n = 0;
	if (!list)
		return 0;
	if (!cJSON_IsObject(list))
		return report(bad, ctx, field, "",
			      "must be an object of resource names to quantities");
	const cJSON *q;
	cJSON_ArrayForEach(q, list)
	{
		snprintf(path, sizeof(path), "%s.%s", field, q->string);
		if (!cJSON_IsString(q)) {
			/* the kubelet and the scheduler read strings only: a number would be
			 * read by neither, so it is refused rather than silently ignored */
			n +=
			    report(bad, ctx, path, k32_json_type_name(q),
				   "must be a quantity string such as \"24Ki\" (quote it in YAML)");
			continue;
		}
		const char *qwhy = NULL;
		if (!strcmp(q->string, "memory")) {
			uint64_t b;
			if (kmeta_quantity_bytes(q->valuestring, &b, &qwhy) && b >= 1 &&
			    b <= K32_POD_MEM_MAX)
				continue;
			snprintf(why, sizeof(why),
				 "must be a byte quantity from 1 to %" PRIu64
				 " (K32_POD_MEM_MAX)%s%s",
				 (uint64_t)K32_POD_MEM_MAX, qwhy ? "; " : "", qwhy ? qwhy : "");
			n += report(bad, ctx, path, q->valuestring, why);
			continue;
		}
		bool negative = false;
		if (kmeta_quantity_valid(q->valuestring, &negative, &qwhy) && !negative)
			continue;
		n += report(bad, ctx, path, q->valuestring,
			    negative ? "must be greater than or equal to 0" : qwhy);
	}
	return n;
}

static uint32_t check_containers(const cJSON *list, const char *field, const char *key,
				 uint64_t *first_mem, kmeta_bad_fn bad, void *ctx)
{
	char path[KMETA_PATH_LEN];
	uint32_t n = 0;
	int i = 0;
	const cJSON *c;
	if (!cJSON_IsArray(list))
		return 0; /* the API reports a missing or mistyped list */
	cJSON_ArrayForEach(c, list)
	{
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
		snprintf(path, sizeof(path), "%s.%s[%d].resources.limits", field, key, i);
		n += check_resource_list(cJSON_GetObjectItemCaseSensitive(res, "limits"), path, bad,
					 ctx);
		snprintf(path, sizeof(path), "%s.%s[%d].resources.requests", field, key, i);
		n += check_resource_list(cJSON_GetObjectItemCaseSensitive(res, "requests"), path,
					 bad, ctx);
		if (first_mem && i == 0) {
			const char *m = kmeta_jstr(c, "resources.limits.memory");
			uint64_t b;
			if (m && kmeta_quantity_bytes(m, &b, NULL) && b >= 1 &&
			    b <= K32_POD_MEM_MAX)
				*first_mem = b;
		}
		i++;
	}
	return n;
}

uint32_t kmeta_pod_quantities(const cJSON *spec, const char *field, uint64_t *mem_bytes,
			      kmeta_bad_fn bad, void *ctx)
{
	if (mem_bytes)
		*mem_bytes = K32_POD_MEM_DEFAULT;
	uint32_t n = check_containers(cJSON_GetObjectItemCaseSensitive(spec, "containers"), field,
				      "containers", mem_bytes, bad, ctx);
	n += check_containers(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"), field,
			      "initContainers", NULL, bad, ctx);
	return n;
}

struct first_bad {
	char *msg;
	size_t cap;
	uint32_t count;
};

static void keep_first(void *ctx, const char *field, const char *value, const char *why)
{
	struct first_bad *fb = ctx;
	if (!fb->count++ && fb->msg && fb->cap)
		snprintf(fb->msg, fb->cap, "%s: Invalid value: \"%s\": %s", field, K32_CLIP(value),
			 why);
}

uint32_t kmeta_pod_limits(const cJSON *pod, struct kmeta_pod_limits *lim, char *msg, size_t cap)
{
	struct first_bad fb = {msg, cap, 0};
	struct kmeta_pod_limits l = {0};
	if (msg && cap)
		msg[0] = 0;
	kmeta_pod_quantities(k32_json_find(pod, "spec"), "spec", &l.mem_bytes, keep_first, &fb);
	kmeta_pod_annotations(k32_json_find(pod, "metadata.annotations"), "metadata.annotations",
			      &l, keep_first, &fb);
	if (lim)
		*lim = l;
	return fb.count;
}

uint64_t kmeta_container_memory(const cJSON *container)
{
	const char *q = kmeta_jstr(container, "resources.limits.memory");
	if (!q)
		q = kmeta_jstr(container, "resources.requests.memory");
	uint64_t b;
	if (q && kmeta_quantity_bytes(q, &b, NULL) && b >= 1 && b <= K32_POD_MEM_MAX)
		return b;
	return K32_POD_MEM_DEFAULT;
}
