/*
 * kmeta_test.c - table tests of the one quantity parser against Kubernetes' grammar, of the
 * pod annotation parsers and their ranges, and of RFC 3339 time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kmeta/kmeta.h"

static void test_quantity_table(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		bool ok;
		uint64_t bytes;
	} cases[] = {
	    /* the cases */
	    {"24K", false, 0}, /* 'K' is no suffix: the decimal kilo is 'k' */
	    {"24Ki", true, 24576},
	    {"1.5e3", true, 1500},
	    {"1Ti", true, 1099511627776ull},
	    {"24Kb", false, 0},
	    {"8Ei", false, 0},		       /* 2^63: one above the ceiling */
	    {"9223372036854775808", false, 0}, /* 2^63 */
	    {"1e19", false, 0},
	    {"100000000000000000000000", false, 0},
	    /* plain and decimal SI */
	    {"0", true, 0},
	    {"65536", true, 65536},
	    {"9223372036854775807", true, 9223372036854775807ull},
	    {"24k", true, 24000},
	    {"1M", true, 1000000},
	    {"1G", true, 1000000000ull},
	    {"1T", true, 1000000000000ull},
	    {"1P", true, 1000000000000000ull},
	    {"1E", true, 1000000000000000000ull}, /* E alone is exa */
	    {"9E", true, 9000000000000000000ull},
	    {"10E", false, 0},
	    /* binary SI */
	    {"1Mi", true, 1048576},
	    {"1Gi", true, 1073741824ull},
	    {"1Pi", true, 1125899906842624ull},
	    {"1Ei", true, 1152921504606846976ull},
	    {"7Ei", true, 8070450532247928832ull},
	    {"1.5Ki", true, 1536},
	    {"1.5Gi", true, 1610612736ull},
	    {"0.5Ki", true, 512},
	    {".5Ki", true, 512},
	    {"5.", true, 5},
	    {"5.Ki", true, 5120},
	    /* rounding up, as Quantity.Value() */
	    {"1500m", true, 2},
	    {"1000m", true, 1},
	    {"0.1", true, 1},
	    {"1m", true, 1},
	    {"0.001Ki", true, 2}, /* 1.024 bytes */
	    {"1.0000000000000000000000001", true, 2},
	    {"1e-3", true, 1},
	    {"1e-1000000", true, 1},
	    /* exponents */
	    {"1E3", true, 1000},
	    {"1e+3", true, 1000},
	    {"15e-1", true, 2},
	    {"0e999999999", true, 0},
	    {"1e18", true, 1000000000000000000ull},
	    {"1e", false, 0},
	    {"1e+", false, 0},
	    {"1e3.5", false, 0},
	    {"1e99999999999", false, 0}, /* exponent beyond 32 bits */
	    /* signs */
	    {"+1Ki", true, 1024},
	    {"-1Ki", false, 0},
	    {"-0", true, 0},
	    /* everything else */
	    {"", false, 0},
	    {".", false, 0},
	    {"Ki", false, 0},
	    {" 1Ki", false, 0},
	    {"1Ki ", false, 0},
	    {"1 Ki", false, 0},
	    {"1KI", false, 0},
	    {"1ki", false, 0},
	    {"1mi", false, 0},
	    {"1Mb", false, 0},
	    {"0x10", false, 0},
	    {"1..5", false, 0},
	    {"1.5.", false, 0},
	    {"--1", false, 0},
	    {"1Kii", false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		const char *why = NULL;
		bool ok = kmeta_quantity_bytes(cases[i].in, &v, &why);
		if (ok != cases[i].ok || (ok && v != cases[i].bytes))
			fail_msg("quantity \"%s\": got %s %llu, want %s %llu", cases[i].in,
				 ok ? "ok" : "refused", (unsigned long long)v,
				 cases[i].ok ? "ok" : "refused",
				 (unsigned long long)cases[i].bytes);
		if (!ok)
			assert_non_null(why);
	}
	uint64_t v;
	assert_false(kmeta_quantity_bytes(NULL, &v, NULL));
	/* the canonical binary form (what metrics-server reports), and it parses back */
	static const struct {
		uint64_t bytes;
		const char *text;
	} fmt[] = {{0, "0"},
		   {1023, "1023"},
		   {1024, "1Ki"},
		   {65536, "64Ki"},
		   {70000, "70000"},
		   {1536, "1536"},
		   {3072, "3Ki"},
		   {3 << 20, "3Mi"},
		   {1ull << 40, "1Ti"},
		   {UINT64_MAX, "18446744073709551615"},
		   {1ull << 60, "1Ei"},
		   {(1ull << 62) * 3, "12Ei"}};
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		char buf[24];
		assert_string_equal(kmeta_quantity_format_bytes(fmt[i].bytes, buf, sizeof(buf)),
				    fmt[i].text);
		if (fmt[i].bytes < (1ull << 62)) { /* the parser's own range */
			assert_true(kmeta_quantity_bytes(buf, &v, NULL));
			assert_true(v == fmt[i].bytes);
		}
	}
	/* thousandths, for quantities that are not bytes (cpu, pods) */
	static const struct {
		const char *in;
		uint64_t milli;
	} milli[] = {{"250m", 250},    {"1", 1000},   {"1.5", 1500},	    {"2k", 2000000},
		     {"1Ki", 1024000}, {"0.0001", 1}, {"256Ki", 262144000}, {"0", 0}};
	for (size_t i = 0; i < sizeof(milli) / sizeof(milli[0]); i++) {
		assert_true(kmeta_quantity_milli(milli[i].in, &v, NULL));
		assert_int_equal(v, milli[i].milli);
	}
	assert_false(kmeta_quantity_milli("24K", &v, NULL));
	assert_false(kmeta_quantity_milli("-1", &v, NULL));
}

static void test_quantity_valid_and_uint(void **state)
{
	(void)state;
	bool neg = false;
	assert_true(kmeta_quantity_valid("250m", &neg, NULL));
	assert_false(neg);
	assert_true(kmeta_quantity_valid("-1", &neg, NULL));
	assert_true(neg);
	assert_true(kmeta_quantity_valid("-0", &neg, NULL));
	assert_false(neg);
	assert_false(kmeta_quantity_valid("2 cores", &neg, NULL));

	uint64_t v = 0;
	assert_true(kmeta_parse_uint("1000", 1, 1000, &v));
	assert_int_equal(v, 1000);
	assert_false(kmeta_parse_uint("1001", 1, 1000, &v));
	assert_false(kmeta_parse_uint("0", 1, 1000, &v));
	assert_false(kmeta_parse_uint("-5", 1, 1000, &v));
	assert_false(kmeta_parse_uint("+5", 1, 1000, &v));
	assert_false(kmeta_parse_uint(" 5", 1, 1000, &v));
	assert_false(kmeta_parse_uint("5ms", 1, 1000, &v));
	assert_false(kmeta_parse_uint("", 0, 1000, &v));
	assert_false(kmeta_parse_uint("18446744073709551616", 0, UINT64_MAX, &v));
	assert_true(kmeta_parse_uint("18446744073709551615", 0, UINT64_MAX, &v));
	assert_true(v == UINT64_MAX);
}

/* Records every bad value reported. */
struct bads {
	uint32_t n;
	char field[8][96];
	char value[8][64];
	char why[8][240];
};

static void record(void *ctx, const char *field, const char *value, const char *why)
{
	struct bads *b = ctx;
	if (b->n < 8) {
		snprintf(b->field[b->n], sizeof(b->field[0]), "%s", field);
		snprintf(b->value[b->n], sizeof(b->value[0]), "%s", value);
		snprintf(b->why[b->n], sizeof(b->why[0]), "%s", why);
	}
	b->n++;
}

static cJSON *ann1(const char *key, const char *value)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, key, value);
	return a;
}

static void test_annotations_table(void **state)
{
	(void)state;
	char big_hw[K32_POD_HARDWARE_MAX + 2];
	memset(big_hw, 'a', sizeof(big_hw) - 1);
	big_hw[sizeof(big_hw) - 1] = 0;
	static const char *const gas_over = "10000000001";
	struct {
		const char *key, *value;
		const char *range; /* a part of the message: the allowed range */
	} bad[] = {
	    {KMETA_ANN_EXECUTION_BUDGET, "-1", "from 1 to 10000000000"},
	    {KMETA_ANN_EXECUTION_BUDGET, "0", "\"off\" or an integer"},
	    {KMETA_ANN_EXECUTION_BUDGET, "1000000000000", "K32_POD_GAS_MAX"},
	    {KMETA_ANN_EXECUTION_BUDGET, gas_over, "K32_POD_GAS_MAX"},
	    {KMETA_ANN_EXECUTION_BUDGET, "Off", "\"off\""},
	    {KMETA_ANN_EXECUTION_BUDGET, "1e6", "integer"},
	    {KMETA_ANN_TICK_MS, "-5", "from 1 to 86400000"},
	    {KMETA_ANN_TICK_MS, "0", "from 1 to"},
	    {KMETA_ANN_TICK_MS, "86400001", "K32_POD_TICK_MS_MAX"},
	    {KMETA_ANN_TICK_MS, "4294967297", "from 1 to"},
	    {KMETA_ANN_TICK_MS, "10ms", "from 1 to"},
	    {KMETA_ANN_STACK_BYTES, "4Gi", "from 256 to 1048576"},
	    {KMETA_ANN_STACK_BYTES, "4294967297", "K32_POD_STACK_BYTES_MIN..MAX"},
	    {KMETA_ANN_STACK_BYTES, "4K", "not a quantity"},
	    {KMETA_ANN_STACK_BYTES, "255", "from 256"},
	    {KMETA_ANN_STACK_BYTES, "-1Ki", "from 256"},
	    {KMETA_ANN_CALL_DEPTH, "0", "from 1 to 1024"},
	    {KMETA_ANN_CALL_DEPTH, "1025", "K32_KLET_POD_FRAMES_MAX"},
	    {KMETA_ANN_CALL_DEADLINE_MS, "0", "from 1 to 10000"},
	    {KMETA_ANN_CALL_DEADLINE_MS, "10001", "K32_POD_CALL_DEADLINE_MS_MAX"},
	    {KMETA_ANN_CALL_DEADLINE_MS, "1s", "from 1 to"},
	    {KMETA_ANN_HARDWARE, "I2C:BME688", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, "i2c::bme688", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, "i2c:", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, ",i2c", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, "i2c,,spi", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, "i2c;rm -rf", "BUS:MODEL"},
	    {KMETA_ANN_HARDWARE, big_hw, "K32_POD_HARDWARE_MAX"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *a = ann1(bad[i].key, bad[i].value);
		struct bads b = {0};
		struct kmeta_pod_limits lim;
		uint32_t n = kmeta_pod_annotations(a, "metadata.annotations", &lim, record, &b);
		char want_field[96];
		snprintf(want_field, sizeof(want_field), "metadata.annotations[%s]", bad[i].key);
		if (n != 1 || b.n != 1 || strcmp(b.field[0], want_field) ||
		    strncmp(b.value[0], bad[i].value, sizeof(b.value[0]) - 1) ||
		    !strstr(b.why[0], bad[i].range))
			fail_msg("%s=\"%s\": %u reports, field %s, why %s", bad[i].key,
				 bad[i].value, n, b.field[0], b.why[0]);
		/* a bad value leaves the default in place, never a reinterpretation */
		assert_int_equal(lim.tick_ms, K32_KLET_TICK_DEFAULT_MS);
		assert_int_equal(lim.stack_bytes, K32_KLET_POD_STACK_BYTES);
		assert_true(lim.gas == K32_KLET_POD_GAS);
		assert_false(lim.gas_off);
		cJSON_Delete(a);
	}

	/* good values, each at its bounds */
	static const struct {
		const char *key, *value;
	} good[] = {
	    {KMETA_ANN_EXECUTION_BUDGET, "off"},
	    {KMETA_ANN_EXECUTION_BUDGET, "1"},
	    {KMETA_ANN_EXECUTION_BUDGET, "10000000000"},
	    {KMETA_ANN_TICK_MS, "1"},
	    {KMETA_ANN_TICK_MS, "86400000"},
	    {KMETA_ANN_STACK_BYTES, "256"},
	    {KMETA_ANN_STACK_BYTES, "1Mi"},
	    {KMETA_ANN_STACK_BYTES, "4Ki"},
	    {KMETA_ANN_CALL_DEPTH, "1024"},
	    {KMETA_ANN_CALL_DEADLINE_MS, "1"},
	    {KMETA_ANN_CALL_DEADLINE_MS, "10000"},
	    {KMETA_ANN_HARDWARE, "i2c:bme688"},
	    {KMETA_ANN_HARDWARE, "i2c:bme688, i2c:miniscale"},
	    {KMETA_ANN_HARDWARE, "none"},
	    {KMETA_ANN_HARDWARE, "i2c.bme688"},
	    {KMETA_ANN_HARDWARE, ""},
	    {"kube32.io/other", "anything"},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cJSON *a = ann1(good[i].key, good[i].value);
		struct bads b = {0};
		if (kmeta_pod_annotations(a, "metadata.annotations", NULL, record, &b))
			fail_msg("%s=\"%s\" refused: %s", good[i].key, good[i].value, b.why[0]);
		cJSON_Delete(a);
	}

	/* the values read */
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, KMETA_ANN_EXECUTION_BUDGET, "5000");
	cJSON_AddStringToObject(a, KMETA_ANN_TICK_MS, "250");
	cJSON_AddStringToObject(a, KMETA_ANN_STACK_BYTES, "2Ki");
	cJSON_AddStringToObject(a, KMETA_ANN_CALL_DEPTH, "16");
	cJSON_AddStringToObject(a, KMETA_ANN_CALL_DEADLINE_MS, "1500");
	struct kmeta_pod_limits lim;
	assert_int_equal(kmeta_pod_annotations(a, "metadata.annotations", &lim, NULL, NULL), 0);
	assert_true(lim.gas == 5000 && !lim.gas_off);
	assert_int_equal(lim.tick_ms, 250);
	assert_int_equal(lim.stack_bytes, 2048);
	assert_int_equal(lim.frames, 16);
	assert_int_equal(lim.call_deadline_ms, 1500);
	cJSON_Delete(a);

	/* nothing set: the defaults of k32_config.h */
	assert_int_equal(kmeta_pod_annotations(NULL, "metadata.annotations", &lim, NULL, NULL), 0);
	assert_true(lim.gas == K32_KLET_POD_GAS);
	assert_int_equal(lim.frames, 0);
	assert_int_equal(lim.call_deadline_ms, 0);
	assert_true(lim.mem_bytes == K32_POD_MEM_DEFAULT);
}

static void test_pod_quantities(void **state)
{
	(void)state;
	cJSON *pod = cJSON_Parse(
	    "{\"metadata\":{\"annotations\":{\"kube32.io/tick-ms\":\"-5\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":"
	    "\"24Kb\",\"cpu\":\"250m\"},\"requests\":{\"memory\":\"24K\",\"cpu\":\"-1\"}}},"
	    "{\"name\":\"b\",\"resources\":{\"limits\":{\"memory\":65536}}}],"
	    "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"memory\":\"8Gi\","
	    "\"kube32.io/x\":\"1x\"}}}]}}");
	assert_non_null(pod);
	struct bads b = {0};
	uint64_t mem = 0;
	assert_int_equal(kmeta_pod_quantities(k32_json_find(pod, "spec"), "spec", &mem, record, &b),
			 6);
	assert_string_equal(b.field[0], "spec.containers[0].resources.limits.memory");
	assert_string_equal(b.value[0], "24Kb");
	assert_non_null(strstr(b.why[0], "from 1 to 4294967296"));
	assert_string_equal(b.field[1], "spec.containers[0].resources.requests.memory");
	assert_string_equal(b.value[1], "24K");
	assert_string_equal(b.field[2], "spec.containers[0].resources.requests.cpu");
	assert_non_null(strstr(b.why[2], "greater than or equal to 0"));
	assert_string_equal(b.field[3], "spec.containers[1].resources.limits.memory");
	assert_string_equal(b.value[3], "a number");
	assert_string_equal(b.field[4], "spec.initContainers[0].resources.limits.memory");
	assert_string_equal(b.value[4], "8Gi");
	assert_string_equal(b.field[5], "spec.initContainers[0].resources.limits.kube32.io/x");
	assert_true(mem == K32_POD_MEM_DEFAULT); /* bad: the default, never a guess */

	char msg[200];
	struct kmeta_pod_limits lim;
	assert_int_equal(kmeta_pod_limits(pod, &lim, msg, sizeof(msg)), 7);
	assert_non_null(strstr(msg, "spec.containers[0].resources.limits.memory"));
	assert_non_null(strstr(msg, "\"24Kb\""));
	cJSON_Delete(pod);

	pod = cJSON_Parse("{\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":"
			  "{\"memory\":\"1.5Mi\"}}},{\"name\":\"b\"}]}}");
	assert_int_equal(kmeta_pod_limits(pod, &lim, msg, sizeof(msg)), 0);
	assert_true(lim.mem_bytes == 1572864);
	assert_string_equal(msg, "");
	const cJSON *c0 = cJSON_GetArrayItem(k32_json_find(pod, "spec.containers"), 0);
	const cJSON *c1 = cJSON_GetArrayItem(k32_json_find(pod, "spec.containers"), 1);
	assert_true(kmeta_container_memory(c0) == 1572864);
	assert_true(kmeta_container_memory(c1) == K32_POD_MEM_DEFAULT);
	cJSON_Delete(pod);

	/* requests count when there is no limit (the scheduler's rule) */
	cJSON *c = cJSON_Parse("{\"resources\":{\"requests\":{\"memory\":\"1Ti\"}}}");
	assert_true(kmeta_container_memory(c) == K32_POD_MEM_DEFAULT); /* over K32_POD_MEM_MAX */
	cJSON_Delete(c);
	c = cJSON_Parse("{\"resources\":{\"requests\":{\"memory\":\"24k\"}}}");
	assert_true(kmeta_container_memory(c) == 24000);
	cJSON_Delete(c);
}

static void test_rfc3339(void **state)
{
	(void)state;
	static const struct {
		uint64_t t;
		const char *s;
	} cases[] = {
	    {0, "1970-01-01T00:00:00Z"},
	    {951782400, "2000-02-29T00:00:00Z"},
	    {1700000000, "2023-11-14T22:13:20Z"},
	    {4102444799ull, "2099-12-31T23:59:59Z"},
	};
	char out[KMETA_RFC3339_LEN];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t t = 0;
		kmeta_rfc3339(cases[i].t, out);
		assert_string_equal(out, cases[i].s);
		assert_true(kmeta_rfc3339_parse(cases[i].s, &t));
		assert_true(t == cases[i].t);
	}
	kmeta_rfc3339(UINT64_MAX, out);
	assert_string_equal(out, "9999-12-31T23:59:59Z");
	uint64_t t = 0;
	assert_true(kmeta_rfc3339_parse("2023-11-14T22:13:20.123456Z", &t));
	assert_true(t == 1700000000);
	assert_true(kmeta_rfc3339_parse("2023-11-15T00:13:20+02:00", &t));
	assert_true(t == 1700000000);
	assert_true(kmeta_rfc3339_parse("2023-11-14T21:13:20-01:00", &t));
	assert_true(t == 1700000000);
	static const char *const bad[] = {
	    "",
	    "2023-11-14",
	    "2023-11-14T22:13:20",
	    "2023-11-14 22:13:20Z",
	    "2023-02-29T00:00:00Z",
	    "2023-13-01T00:00:00Z",
	    "2023-11-14T24:00:00Z",
	    "2023-11-14T22:13:20.Z",
	    "2023-11-14T22:13:20Zjunk",
	    "1969-12-31T23:59:59Z",
	    "1970-01-01T00:00:00+01:00",
	    "+023-11-14T22:13:20Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kmeta_rfc3339_parse(bad[i], &t))
			fail_msg("\"%s\" parsed", bad[i]);
	assert_false(kmeta_rfc3339_parse(NULL, &t));
}

static void test_jstr(void **state)
{
	(void)state;
	cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"x\",\"n\":1}}");
	assert_string_equal(kmeta_jstr(o, "metadata.name"), "x");
	assert_null(kmeta_jstr(o, "metadata.n"));
	assert_null(kmeta_jstr(o, "metadata.none"));
	assert_null(kmeta_jstr(NULL, "metadata.name"));
	cJSON_Delete(o);
}

static void test_conditions_and_owners(void **state)
{
	(void)state;
	cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"d\",\"uid\":\"u1\"},\"status\":{}}");
	cJSON *st = cJSON_GetObjectItem(o, "status");
	assert_null(kmeta_cond_status(o, "Available"));
	/* new: every field, lastTransitionTime and lastUpdateTime now */
	assert_true(kmeta_cond_set(st, "Available", "False", "MinimumReplicasUnavailable", "m1",
				   "2026-01-01T00:00:00Z", true));
	assert_string_equal(kmeta_cond_status(o, "Available"), "False");
	cJSON *cd = kmeta_cond_find(cJSON_GetObjectItem(st, "conditions"), "Available");
	assert_string_equal(kmeta_jstr(cd, "reason"), "MinimumReplicasUnavailable");
	assert_string_equal(kmeta_jstr(cd, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	/* the same again: no change, no new times */
	assert_false(kmeta_cond_set(st, "Available", "False", "MinimumReplicasUnavailable", "m1",
				    "2026-01-01T00:00:09Z", true));
	assert_string_equal(kmeta_jstr(cd, "lastUpdateTime"), "2026-01-01T00:00:00Z");
	/* a new message, same status: lastTransitionTime stays, lastUpdateTime moves */
	assert_true(kmeta_cond_set(st, "Available", "False", "MinimumReplicasUnavailable", "m2",
				   "2026-01-01T00:00:10Z", true));
	assert_string_equal(kmeta_jstr(cd, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	assert_string_equal(kmeta_jstr(cd, "lastUpdateTime"), "2026-01-01T00:00:10Z");
	/* the status flips: lastTransitionTime moves */
	assert_true(kmeta_cond_set(st, "Available", "True", "MinimumReplicasAvailable", "m3",
				   "2026-01-01T00:00:20Z", false));
	assert_string_equal(kmeta_jstr(cd, "lastTransitionTime"), "2026-01-01T00:00:20Z");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(st, "conditions")), 1);
	/* NULL reason and message: left out (a True pod condition has neither) */
	assert_true(
	    kmeta_cond_set(st, "Available", "True", NULL, NULL, "2026-01-01T00:00:30Z", false));
	assert_null(cJSON_GetObjectItem(cd, "reason"));
	assert_null(cJSON_GetObjectItem(cd, "message"));
	assert_string_equal(kmeta_jstr(cd, "lastTransitionTime"), "2026-01-01T00:00:20Z");
	assert_false(
	    kmeta_cond_set(st, "Available", "True", NULL, NULL, "2026-01-01T00:00:40Z", false));

	cJSON *refs = kmeta_owner_refs(o, "apps/v1", "Deployment");
	assert_non_null(refs);
	cJSON *pod = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");
	assert_null(kmeta_controller_uid(pod));
	cJSON_AddItemToObject(cJSON_GetObjectItem(pod, "metadata"), "ownerReferences", refs);
	assert_string_equal(kmeta_controller_uid(pod), "u1");
	const cJSON *r = cJSON_GetArrayItem(refs, 0);
	assert_string_equal(kmeta_jstr(r, "kind"), "Deployment");
	assert_string_equal(kmeta_jstr(r, "name"), "d");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "blockOwnerDeletion")));
	cJSON_Delete(pod);
	cJSON_Delete(o);
}

static void test_selectors(void **state)
{
	(void)state;
	cJSON *labels = cJSON_Parse("{\"app\":\"web\",\"tier\":\"fe\",\"gen\":\"3\"}");
	static const struct {
		const char *sel;
		bool match;
	} cases[] = {
	    {"{\"matchLabels\":{\"app\":\"web\"}}", true},
	    {"{\"matchLabels\":{\"app\":\"db\"}}", false},
	    {"{\"matchLabels\":{\"app\":1}}", false},
	    {"{}", false}, /* empty: nothing */
	    {"{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":"
	     "[\"fe\",\"be\"]}]}",
	     true},
	    {"{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":"
	     "[\"fe\"]}]}",
	     false},
	    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":"
	     "[\"a\"]}]}",
	     true},
	    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"DoesNotExist\"}]}", true},
	    {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}", true},
	    {"{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"2\"]}]}",
	     true},
	    {"{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Lt\",\"values\":[\"-1\"]}]}",
	     false},
	    {"{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"2x\"]}]}",
	     false}, /* not an integer: no match (a lax parse read 2) */
	    {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
	     false},
	    {"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Like\",\"values\":[\"w\"]}]}",
	     false},
	    {"{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\","
	     "\"operator\":\"In\",\"values\":[\"be\"]}]}",
	     false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *sel = cJSON_Parse(cases[i].sel);
		assert_non_null(sel);
		if (kmeta_label_selector_matches(sel, labels) != cases[i].match)
			fail_msg("selector %s: want %s", cases[i].sel,
				 cases[i].match ? "match" : "none");
		cJSON_Delete(sel);
	}
	assert_false(kmeta_label_selector_matches(NULL, labels));
	cJSON_Delete(labels);
}

/* Event series: a repeat within the window finds its Event, anything else is a new one; a
 * full table forgets the least recently used. */
static void test_event_series(void **state)
{
	(void)state;
	struct kmeta_event_series tab[2];
	memset(tab, 0, sizeof(tab));
	const struct kmeta_object_ref a = {"v1", "Pod", "ns1", "a", "uid-a"};
	const struct kmeta_object_ref b = {"v1", "Pod", "ns1", "b", "uid-b"};
	uint32_t ha = kmeta_event_hash(&a, "ns1", "Normal", "Started", "Started container main");
	uint32_t hb = kmeta_event_hash(&b, "ns1", "Normal", "Started", "Started container main");
	assert_true(ha != 0 && ha != hb);
	/* the message, the reason and the type are each part of the series */
	assert_true(ha != kmeta_event_hash(&a, "ns1", "Normal", "Started", "Started container x"));
	assert_true(ha !=
		    kmeta_event_hash(&a, "ns1", "Normal", "Pulled", "Started container main"));
	assert_true(ha !=
		    kmeta_event_hash(&a, "ns1", "Warning", "Started", "Started container main"));
	assert_null(kmeta_event_series_find(tab, 2, ha, "ns1", 1000));
	struct kmeta_event_series *s = kmeta_event_series_add(tab, 2, ha, "ns1", "a.1", 1000);
	assert_int_equal(s->count, 1);
	assert_ptr_equal(kmeta_event_series_find(tab, 2, ha, "ns1", 1000 + 10), s);
	assert_null(kmeta_event_series_find(tab, 2, ha, "ns2", 1010)); /* another namespace */
	/* past the window after its last occurrence: a new Event */
	assert_null(kmeta_event_series_find(tab, 2, ha, "ns1", 1010 + K32_API_EVENT_SERIES_S + 1));
	kmeta_event_series_add(tab, 2, hb, "ns1", "b.1", 1020);
	/* a third series replaces the least recently used (a, last seen at 1010) */
	kmeta_event_series_add(tab, 2, 77, "ns1", "c.1", 1030);
	assert_null(kmeta_event_series_find(tab, 2, ha, "ns1", 1031));
	assert_non_null(kmeta_event_series_find(tab, 2, hb, "ns1", 1031));
	char name[KMETA_EVENT_NAME_LEN], longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	kmeta_event_name(longname, UINT64_MAX, 0xffffffffu, name, sizeof(name));
	assert_true(strlen(name) < sizeof(name)); /* the suffix always fits */
	assert_non_null(strstr(name, ".ffffffffffffffffffff"));
}

/* CronJob schedules: the grammar (table), and next times checked against known dates. */
static void test_cron(void **state)
{
	(void)state;
	static const char *const good[] = {
	    "* * * * *",
	    "*/5 * * * *",
	    "0 3 * * MON-FRI",
	    "0 0 1 1 *",
	    "15,45 9-17 * * 1-5",
	    "0 0 ? * SUN",
	    "5/15 * * jan,Jul *",
	    "@daily",
	    "@hourly",
	    "  0   12  *  *  * ",
	    "0 0 29 2 *",
	    "59 23 31 12 6",
	};
	struct kmeta_cron c;
	char why[160];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!kmeta_cron_parse(good[i], &c, why, sizeof(why)))
			fail_msg("\"%s\" refused: %s", good[i], why);
	static const struct {
		const char *in, *why;
	} bad[] = {
	    {"", "empty"},
	    {"* * * *", "4 fields"},
	    {"* * * * * *", "more than five fields"},
	    {"60 * * * *", "minute: \"60\" is outside 0-59"},
	    {"* 24 * * *", "hour: \"24\" is outside 0-23"},
	    {"* * 0 * *", "day of month: \"0\" is outside 1-31"},
	    {"* * * 13 *", "month: \"13\" is outside 1-12"},
	    {"* * * * 7", "day of week: \"7\" is outside 0-6"},
	    {"5-1 * * * *", "outside"},
	    {"*/0 * * * *", "step"},
	    {"? * * * *", "minute: \"?\""},
	    {"1,,2 * * * *", "minute"},
	    {"a * * * *", "minute: \"a\" is not a value"},
	    {"* * * FOO *", "month"},
	    {"@every 5m", "not a descriptor"},
	    {"TZ=UTC * * * * *", "spec.timeZone"},
	    {"1-2-3 * * * *", "unexpected"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (kmeta_cron_parse(bad[i].in, &c, why, sizeof(why)))
			fail_msg("\"%s\" accepted", bad[i].in);
		if (!strstr(why, bad[i].why))
			fail_msg("\"%s\": \"%s\" does not say \"%s\"", bad[i].in, why, bad[i].why);
	}
	char long_sched[K32_CRON_SCHEDULE_MAX + 2];
	memset(long_sched, '*', sizeof(long_sched) - 1);
	long_sched[sizeof(long_sched) - 1] = 0;
	assert_false(kmeta_cron_parse(long_sched, &c, why, sizeof(why)));
	assert_non_null(strstr(why, "over the limit"));
	/* next times (Unix seconds, UTC); 2026-12-03T15:40:30Z is 1796312430, a Thursday */
	static const struct {
		const char *sched, *after, *next;
	} next[] = {
	    {"* * * * *", "2026-12-03T15:40:30Z", "2026-12-03T15:41:00Z"},
	    {"* * * * *", "2026-12-03T15:40:00Z", "2026-12-03T15:41:00Z"}, /* strictly after */
	    {"*/15 * * * *", "2026-12-03T15:40:30Z", "2026-12-03T15:45:00Z"},
	    {"0 3 * * *", "2026-12-03T15:40:30Z", "2026-12-04T03:00:00Z"},
	    {"0 9 * * MON-FRI", "2026-12-04T10:00:00Z", "2026-12-07T09:00:00Z"}, /* Fri -> Mon */
	    {"30 23 31 12 *", "2026-12-03T15:40:30Z", "2026-12-31T23:30:00Z"},
	    {"0 0 1 1 *", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
	    {"@monthly", "2026-12-03T15:40:30Z", "2027-01-01T00:00:00Z"},
	    {"0 0 29 2 *", "2026-12-03T15:40:30Z", "2028-02-29T00:00:00Z"},
	    {"0 0 29 2 *", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z"}, /* 2100 is no leap */
	    /* both day fields restricted: either matches (the 13th, or any Friday) */
	    {"0 0 13 * 5", "2026-12-03T15:40:30Z", "2026-12-04T00:00:00Z"},
	    /* day of week "*": only the 13th */
	    {"0 0 13 * *", "2026-12-03T15:40:30Z", "2026-12-13T00:00:00Z"},
	    {"59 23 * * *", "2026-12-03T23:59:00Z", "2026-12-04T23:59:00Z"},
	    {"0 0 30 2 *", "2026-12-03T15:40:30Z", NULL}, /* never */
	};
	for (size_t i = 0; i < sizeof(next) / sizeof(next[0]); i++) {
		uint64_t after, want = 0;
		assert_true(kmeta_cron_parse(next[i].sched, &c, why, sizeof(why)));
		assert_true(kmeta_rfc3339_parse(next[i].after, &after));
		if (next[i].next)
			assert_true(kmeta_rfc3339_parse(next[i].next, &want));
		uint64_t got = kmeta_cron_next(&c, after);
		if (got != want) {
			char g[KMETA_RFC3339_LEN];
			kmeta_rfc3339(got, g);
			fail_msg("\"%s\" after %s: got %s, want %s", next[i].sched, next[i].after,
				 got ? g : "never", next[i].next ? next[i].next : "never");
		}
	}
}

/* A query "k=v&k2&..." read without decoding, for the log options table. */
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

/* pods/log options: the one reader of kubelet and API (Go booleans, digits, defaults). */
static void test_log_opts(void **state)
{
	(void)state;
	static const struct {
		const char *q;
		int rc;
		int64_t tail, limit;
		bool prev, ts, follow, has_since;
		uint64_t since, after;
		const char *msg;
	} t[] = {
	    {"", 0, -1, -1, false, false, false, false, 0, 0, NULL},
	    {"tailLines=5&previous=true&timestamps=1&follow", 0, 5, -1, true, true, true, false, 0,
	     0, NULL},
	    {"previous=1&timestamps=T&follow=False", 0, -1, -1, true, true, false, false, 0, 0,
	     NULL},
	    {"limitBytes=100&sinceSeconds=30&afterSeq=7", 0, -1, 100, false, false, false, true, 30,
	     7, NULL},
	    {"tailLines=0", 0, 0, -1, false, false, false, false, 0, 0, NULL},
	    {"previous=yes", -1, 0, 0, false, false, false, false, 0, 0,
	     "previous: Invalid value: \"yes\": must be true or false (or 1, t, 0, f)"},
	    {"tailLines=-1", -1, 0, 0, false, false, false, false, 0, 0,
	     "tailLines: Invalid value: \"-1\": must be a whole number of at most 18 digits"},
	    {"limitBytes=1234567890123456789", -1, 0, 0, false, false, false, false, 0, 0,
	     "limitBytes: Invalid value"},
	    {"sinceSeconds=", -1, 0, 0, false, false, false, false, 0, 0, "sinceSeconds"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct kmeta_log_opts o;
		char msg[160];
		int rc = kmeta_log_opts_parse(q_get, (void *)t[i].q, &o, msg, sizeof(msg));
		if (rc != t[i].rc)
			fail_msg("\"%s\": rc %d (%s)", t[i].q, rc, msg);
		if (rc) {
			if (!strstr(msg, t[i].msg))
				fail_msg("\"%s\": message \"%s\" lacks \"%s\"", t[i].q, msg,
					 t[i].msg);
			continue;
		}
		if (o.tail_lines != t[i].tail || o.limit_bytes != t[i].limit ||
		    o.previous != t[i].prev || o.timestamps != t[i].ts || o.follow != t[i].follow ||
		    o.has_since != t[i].has_since || o.since_seconds != t[i].since ||
		    o.after_seq != t[i].after)
			fail_msg("\"%s\": parsed differently", t[i].q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantity_table),
	    cmocka_unit_test(test_event_series),
	    cmocka_unit_test(test_cron),
	    cmocka_unit_test(test_quantity_valid_and_uint),
	    cmocka_unit_test(test_annotations_table),
	    cmocka_unit_test(test_pod_quantities),
	    cmocka_unit_test(test_rfc3339),
	    cmocka_unit_test(test_jstr),
	    cmocka_unit_test(test_conditions_and_owners),
	    cmocka_unit_test(test_selectors),
	    cmocka_unit_test(test_log_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
