/*
 * sim_test.c - the simulator's wiring: board profiles, and a control plane (src/cplane:
 * memory store, plain HTTP on 127.0.0.1:0) with one board running a Wasm pod, checked over
 * HTTP: pods/log through the proxy (from the in-process kubelet, and through the pod
 * server as for a board in another process), --previous without a previous container,
 * follow (both ways), and the metrics.k8s.io group (discovery, pod and node metrics).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"

#include "k32/boards/cardputer.h"

#include "base/k32_json.h"
#include "hw/hw.h"
#include "http/http.h"
#include "platform/k32_platform.h"

static void test_profiles(void **state)
{
	(void)state;
	const struct klet_profile *c = sim_profile_find("cardputer");
	assert_non_null(c);
	assert_int_equal(c->pod_pool_bytes, K32_CARDPUTER_POD_POOL_BYTES);
	assert_int_equal(c->interp_stack, K32_CARDPUTER_INTERP_STACK_BYTES);
	assert_true(c->interp_stack <= 16 * 1024); /* no task stack over 16 KiB */
	assert_non_null(strstr(c->hardware, "i2c:bme688"));
	/* each board's kernel objects are sized by its profile (fields left 0: the
	 * k32_config.h defaults) */
	struct kobj_limits cl, dl;
	klet_profile_kobj_limits(c, &cl);
	klet_profile_kobj_limits(sim_profile_find("devkit"), &dl);
	assert_int_equal(cl.channels, 16);
	assert_int_equal(cl.region_bytes, 32 * 1024);
	assert_int_equal(cl.handles, K32_KOBJ_MAX_HANDLES); /* not set: the default */
	assert_int_equal(dl.channels, 32);
	assert_int_equal(dl.region_bytes, 256 * 1024);
	assert_int_equal(dl.handles, K32_KOBJ_MAX_HANDLES);
	struct kobj_limits hl;
	klet_profile_kobj_limits(sim_profile_find("host"), &hl);
	assert_int_equal(hl.region_bytes, K32_KOBJ_REGION_BYTES);
	/* each fits its board's RAM next to the pod pool; the host has the full pools */
	assert_true(kobj_node_bytes(&cl) > 0);
	assert_true(kobj_node_bytes(&cl) < 100 * 1024);
	assert_true(kobj_node_bytes(&dl) < 512 * 1024);
	assert_true(kobj_node_bytes(&hl) > 2 * 1024 * 1024);
	assert_int_equal(c->pod_http_conns, 16);
	assert_non_null(sim_profile_find("devkit"));
	assert_null(sim_profile_find("nosuch"));
	sim_profile_set_host(123456, 40000);
	assert_int_equal(sim_profile_find("host")->pod_pool_bytes, 123456);
	assert_int_equal(sim_profile_find("host")->interp_stack, 40000);
}

struct fx {
	struct cplane *cp;
	struct klet *k;
	struct http_client *c;
};

static struct fx fx;

static int do_req(const char *method, const char *target, const char *body, struct k32_buf *out)
{
	struct http_client_request rq = {.method = method,
					 .target = target,
					 .content_type = body ? "application/json" : NULL,
					 .body = body,
					 .body_len = body ? strlen(body) : 0};
	struct http_client_response r;
	struct k32_err err;
	if (http_client_do(fx.c, &rq, &r, &err))
		fail_msg("%s %s: %s", method, target, err.msg);
	int st = r.status;
	k32_buf_reset(out);
	k32_buf_append(out, r.body.data ? r.body.data : (const uint8_t *)"", r.body.len, NULL);
	http_client_response_fini(&r);
	return st;
}

static int setup(void **state)
{
	(void)state;
	struct k32_err err;
	struct cplane_config cc;
	cplane_config_init(&cc);
	cc.data_dir = SIM_TEST_DIR "/cp";
	cc.memory_store = true;
	cc.tls = false;
	cc.controllers = false;
	if (cplane_start(&cc, &fx.cp, &err))
		fail_msg("cplane_start: %s", err.msg);
	static char tok[128];
	assert_int_equal(cplane_node_token(fx.cp, "b-1", tok, sizeof(tok), &err), K32_OK);
	struct sim_board_config bc = {.name = "b-1",
				      .profile = sim_profile_find("devkit"),
				      .api_port = cplane_port(fx.cp),
				      .token = tok,
				      .image_dir = SIM_TEST_IMAGES};
	if (sim_board_start(&bc, &fx.k, &err))
		fail_msg("sim_board_start: %s", err.msg);
	assert_int_equal(sim_board_attach(fx.cp, fx.k, &err), K32_OK);
	struct http_client_config hc;
	http_client_config_init(&hc);
	hc.port = cplane_port(fx.cp);
	hc.bearer_token = cplane_admin_token(fx.cp);
	if (http_client_new(&hc, &fx.c, &err))
		fail_msg("client: %s", err.msg);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	int st = do_req("POST", "/api/v1/namespaces/default/pods",
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
			"\"spec\":{\"nodeName\":\"b-1\",\"containers\":[{\"name\":\"main\","
			"\"image\":\"t_ok.wasm\"}]}}",
			&b);
	assert_int_equal(st, 201);
	/* wait (bounded) until it logged a few ticks */
	for (int i = 0; i < 500; i++) {
		st = do_req("GET", "/api/v1/namespaces/default/pods/p/log", NULL, &b);
		if (st == 200 && strstr(k32_buf_cstr(&b), "tick\ntick\n"))
			break;
		k32_plat()->sleep_us(10000);
	}
	k32_buf_fini(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	http_client_free(fx.c);
	klet_stop_begin(fx.k);
	cplane_stop(fx.cp);
	klet_free(fx.k);
	return 0;
}

static void test_logs(void **state)
{
	(void)state;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	/* from the in-process kubelet */
	assert_int_equal(do_req("GET", "/api/v1/namespaces/default/pods/p/log", NULL, &b), 200);
	assert_true(!strncmp(k32_buf_cstr(&b), "hello from k32_init\ntick\n", 25));
	assert_int_equal(
	    do_req("GET", "/api/v1/namespaces/default/pods/p/log?tailLines=1", NULL, &b), 200);
	assert_string_equal(k32_buf_cstr(&b), "tick\n");
	/* limitBytes and sinceSeconds */
	assert_int_equal(
	    do_req("GET", "/api/v1/namespaces/default/pods/p/log?limitBytes=5", NULL, &b), 200);
	assert_string_equal(k32_buf_cstr(&b), "hello");
	assert_int_equal(
	    do_req("GET", "/api/v1/namespaces/default/pods/p/log?sinceSeconds=3600", NULL, &b),
	    200);
	assert_true(!strncmp(k32_buf_cstr(&b), "hello from k32_init\ntick\n", 25));
	assert_int_equal(
	    do_req("GET", "/api/v1/namespaces/default/pods/p/log?sinceSeconds=3600&timestamps=true",
		   NULL, &b),
	    200);
	assert_non_null(strstr(k32_buf_cstr(&b), "Z hello from k32_init\n"));
	/* no previous container: 400 with a Status */
	assert_int_equal(
	    do_req("GET", "/api/v1/namespaces/default/pods/p/log?previous=true", NULL, &b), 400);
	assert_non_null(strstr(k32_buf_cstr(&b), "previous terminated container"));
	assert_non_null(strstr(k32_buf_cstr(&b), "\"kind\":\"Status\""));
	/* as for a board in another process: through its pod server */
	sim_board_detach(fx.cp, fx.k);
	assert_int_equal(do_req("GET",
				"/api/v1/namespaces/default/pods/p/log?tailLines=2&timestamps=true",
				NULL, &b),
			 200);
	assert_non_null(strstr(k32_buf_cstr(&b), "Z tick\n"));
	struct k32_err err;
	assert_int_equal(sim_board_attach(fx.cp, fx.k, &err), K32_OK);
	/* a pod that is not there: the API server's own 404 */
	assert_int_equal(do_req("GET", "/api/v1/namespaces/default/pods/none/log", NULL, &b), 404);
	k32_buf_fini(&b);
}

struct follow {
	int lines;
};

static k32_status_t on_line(void *ctx, const uint8_t *data, size_t len)
{
	struct follow *f = ctx;
	if (len == 4 && !memcmp(data, "tick", 4))
		f->lines++;
	return f->lines >= 3 ? K32_ERR_CANCELED : K32_OK; /* enough: hang up */
}

static void test_follow(void **state)
{
	(void)state;
	struct follow f = {0};
	struct http_client_request rq = {
	    .method = "GET",
	    .target = "/api/v1/namespaces/default/pods/p/log?follow=true&tailLines=1",
	    .timeout_us = 5000000};
	int code = 0;
	struct k32_err err;
	k32_status_t st = http_client_stream(fx.c, &rq, true, on_line, &f, &code, &err);
	assert_int_equal(st, K32_ERR_CANCELED);
	assert_int_equal(code, 200);
	assert_int_equal(f.lines, 3); /* the tail line, then new ones as they come */
	/* as for a board in another process: the relay polls its pod server */
	sim_board_detach(fx.cp, fx.k);
	struct follow g = {0};
	st = http_client_stream(fx.c, &rq, true, on_line, &g, &code, &err);
	assert_int_equal(st, K32_ERR_CANCELED);
	assert_int_equal(code, 200);
	assert_int_equal(g.lines, 3);
	assert_int_equal(sim_board_attach(fx.cp, fx.k, &err), K32_OK);
}

static void test_metrics(void **state)
{
	(void)state;
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 20, "b");
	assert_int_equal(do_req("GET", "/apis", NULL, &b), 200);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"name\":\"metrics.k8s.io\""));
	assert_int_equal(do_req("GET", "/apis/metrics.k8s.io/v1beta1", NULL, &b), 200);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"kind\":\"PodMetrics\""));
	assert_int_equal(
	    do_req("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", NULL, &b), 200);
	cJSON *j = NULL;
	assert_int_equal(k32_json_parse((const char *)b.data, b.len, &j, NULL), K32_OK);
	const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "items"), 0);
	assert_string_equal(cJSON_GetStringValue(k32_json_find(it, "metadata.name")), "p");
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(it, "containers"), 0);
	const char *mem = cJSON_GetStringValue(k32_json_find(c, "usage.memory"));
	assert_true(mem && strtoull(mem, NULL, 10) >= 65536); /* its 64 KiB of linear memory */
	assert_non_null(strstr(cJSON_GetStringValue(k32_json_find(c, "usage.cpu")), "n"));
	cJSON_Delete(j);
	assert_int_equal(do_req("GET", "/apis/metrics.k8s.io/v1beta1/nodes/b-1", NULL, &b), 200);
	assert_non_null(strstr(k32_buf_cstr(&b), "\"kind\":\"NodeMetrics\""));
	assert_int_equal(do_req("GET", "/apis/metrics.k8s.io/v1beta1/nodes/nope", NULL, &b), 404);
	assert_int_equal(
	    do_req("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/x/pods/p", NULL, &b), 404);
	assert_int_equal(do_req("GET", "/apis/metrics.k8s.io/v1beta1/bogus", NULL, &b), 404);
	k32_buf_fini(&b);
}

/* Board files and --boards specs: table of text -> boards, or the error's words. */
static void test_conf(void **state)
{
	(void)state;
	static const struct {
		const char *text; /* a board file, or "spec:" + a --boards spec */
		k32_status_t st;
		const char *want; /* the board names joined by ',', or a piece of the error */
		size_t pool, stack;
	} cases[] = {
	    {"", K32_OK, "", 0, 0},
	    {"# only a comment\n\n   \n", K32_OK, "", 0, 0},
	    {"cardputer count=2\nhost name=big  # mine\nhost-pool=8Mi\nhost-stack=96Ki\n", K32_OK,
	     "cardputer-1,cardputer-2,big", 8u << 20, 96u << 10},
	    {"devkit\r\ncardputer\ncardputer count=1", K32_OK, "devkit-1,cardputer-1,cardputer-2",
	     0, 0},
	    {"spec:devkit:1,cardputer:2", K32_OK, "devkit-1,cardputer-1,cardputer-2", 0, 0},
	    {"spec:host", K32_OK, "host-1", 0, 0},
	    {"spec:cardputer:0", K32_ERR_INVALID_ARGS, "COUNT 1..", 0, 0},
	    {"spec:toaster:1", K32_ERR_INVALID_ARGS, "unknown board profile", 0, 0},
	    {"toaster\n", K32_ERR_INVALID_ARGS, "line 1: unknown board profile", 0, 0},
	    {"host\nhost count=x\n", K32_ERR_INVALID_ARGS, "line 2: count=x", 0, 0},
	    {"host count=2 name=a\n", K32_ERR_INVALID_ARGS, "names one board", 0, 0},
	    {"host name=a\ncardputer name=a\n", K32_ERR_ALREADY_EXISTS, "two boards named a", 0, 0},
	    {"host colour=red\n", K32_ERR_INVALID_ARGS, "expected count=N or name=NAME", 0, 0},
	    {"host-pool=0\n", K32_ERR_INVALID_ARGS, "host-pool=0: expected 1..", 0, 0},
	    {"host-pool=99999999999999999999\n", K32_ERR_INVALID_ARGS, "expected 1..", 0, 0},
	    {"host-pool=5Gi\n", K32_ERR_INVALID_ARGS, "expected 1..", 0, 0},
	    {"host-pool=1.5Mi\nhost-stack=64k\n", K32_OK, "", 1572864, 64000},
	    {"host-pool=512K\n", K32_ERR_INVALID_ARGS, "quantity such as", 0, 0}, /* 'k', not 'K' */
	    {"speed=9\n", K32_ERR_INVALID_ARGS, "unknown setting", 0, 0},
	    {"host count=1025\n", K32_ERR_INVALID_ARGS, "count=1..1024", 0, 0},
	    {"host count=600\ncardputer count=600\n", K32_ERR_NO_RESOURCES, "K32_SIM_MAX_BOARDS", 0,
	     0},
	    {"a b c d e f g h i\n", K32_ERR_INVALID_ARGS, "more than 8 words", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct sim_conf c;
		struct k32_err err;
		memset(&c, 0, sizeof(c));
		k32_err_clear(&err);
		const char *t = cases[i].text;
		k32_status_t st = !strncmp(t, "spec:", 5) ? sim_conf_add_spec(&c, t + 5, &err)
							  : sim_conf_parse(t, strlen(t), &c, &err);
		char names[512] = "";
		for (uint32_t b = 0; b < c.count; b++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 b ? "," : "", c.boards[b].name);
		if (st != cases[i].st ||
		    (st ? !strstr(err.msg, cases[i].want) : strcmp(names, cases[i].want)))
			fail_msg("case %zu \"%s\": status %d \"%s\" boards \"%s\", want %d \"%s\"",
				 i, t, st, err.msg, names, cases[i].st, cases[i].want);
		if (!st) {
			assert_int_equal(c.host_pool, cases[i].pool);
			assert_int_equal(c.host_stack, cases[i].stack);
		}
	}
	/* a line over K32_SIM_CONF_LINE_MAX and a NUL byte */
	static char long_line[K32_SIM_CONF_LINE_MAX + 10];
	memset(long_line, 'h', sizeof(long_line) - 1);
	static struct sim_conf c;
	struct k32_err err;
	assert_int_equal(sim_conf_parse(long_line, strlen(long_line), &c, &err),
			 K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "K32_SIM_CONF_LINE_MAX"));
	assert_int_equal(sim_conf_parse("host\0x", 6, &c, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "NUL"));
	assert_int_equal(sim_conf_parse("", K32_SIM_CONF_MAX_BYTES + 1, &c, &err),
			 K32_ERR_INVALID_ARGS);
}

/* The boot report of the devkit: every stage, in order, free falling as services start. */
static void test_boot_report(void **state)
{
	(void)state;
	struct sim_boot_config bc = {.profile = "devkit",
				     .data_dir = SIM_TEST_DIR "/boot",
				     .image_dir = SIM_TEST_IMAGES,
				     .image = "t_ok.wasm",
				     .pods = 2};
	struct k32_buf out;
	struct k32_err err;
	k32_buf_init(&out, k32_default_allocator(), 64 * 1024, "boot");
	if (sim_boot_report(&bc, &out, &err))
		fail_msg("sim_boot_report: %s", err.msg);
	static const char *const stages[] = {"platform",    "store",   "api",
					     "controllers", "kubelet", "pods"};
	const char *p = k32_buf_cstr(&out);
	long long last_free = 2621440 + 1;
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "stage=%s ", stages[i]);
		const char *l = strstr(p, want);
		if (!l) {
			if (strcmp(stages[i], "controllers")) /* absent without src/ctrl */
				fail_msg("no %s line in:\n%s", stages[i], k32_buf_cstr(&out));
			continue;
		}
		long long used = 0, free_b = 0;
		const char *u = strstr(l, "used=");
		if (!u || sscanf(u, "used=%lld free=%lld", &used, &free_b) != 2)
			fail_msg("no used= free= in: %.200s", l);
		assert_true(free_b <= last_free);
		assert_int_equal(used + free_b, 2621440); /* the devkit's SRAM + PSRAM */
		last_free = free_b;
		p = l;
	}
	assert_non_null(strstr(p, "K32_BOOT_END profile=devkit pods=2 image=t_ok.wasm"));
	/* a worker counts its own node heap (klet_config.alloc) and not its control plane's:
	 * used is the pool and interpreter stack plus that heap, which pods make grow */
	bc.profile = "cardputer";
	k32_buf_reset(&out);
	if (sim_boot_report(&bc, &out, &err))
		fail_msg("sim_boot_report cardputer: %s", err.msg);
	size_t heap_at[2] = {0, 0};
	for (size_t i = 0; i < 2; i++) {
		const char *l = strstr(k32_buf_cstr(&out), i ? "stage=pods " : "stage=kubelet ");
		assert_non_null(l);
		long long used = 0, free_b = 0;
		size_t budget = 0, heap_now = 0, peak = 0;
		if (sscanf(strstr(l, "used="),
			   "used=%lld free=%lld budget=%zu node_heap=%zu "
			   "node_heap_peak=%zu",
			   &used, &free_b, &budget, &heap_now, &peak) != 5)
			fail_msg("no used= ... node_heap_peak= in: %.300s", l);
		assert_int_equal((size_t)used, K32_CARDPUTER_POD_POOL_BYTES +
						   K32_CARDPUTER_INTERP_STACK_BYTES + heap_now);
		assert_true(heap_now > 0 && peak >= heap_now);
		heap_at[i] = heap_now;
	}
	assert_true(heap_at[1] > heap_at[0]); /* two pods: their log rings at least */
	bc.profile = "devkit";
	/* an unknown profile; a module that is not there times out with its name */
	bc.profile = "toaster";
	assert_int_equal(sim_boot_report(&bc, &out, &err), K32_ERR_INVALID_ARGS);
	k32_buf_fini(&out);
}

/* A cardputer's simulated hardware: the console lines (table: line -> expected answer). */
static void test_hw_console(void **state)
{
	(void)state;
	struct sim_hw *h = NULL;
	struct k32_err err;
	assert_int_equal(sim_hw_new("dev-1", sim_profile_find("devkit"), &h, &err),
			 K32_ERR_NOT_SUPPORTED);
	assert_null(h);
	assert_false(sim_profile_has_hw(sim_profile_find("devkit")));
	assert_true(sim_profile_has_hw(sim_profile_find("cardputer")));
	assert_int_equal(sim_hw_new("cardputer-1", sim_profile_find("cardputer"), &h, &err),
			 K32_OK);
	assert_non_null(sim_hw_node(h));
	assert_non_null(sim_hw_sim(h));
	static const struct {
		const char *line;
		k32_status_t st;
		const char *want; /* substring of the answer */
	} cases[] = {
	    {"PODS", K32_ERR_NOT_SUPPORTED, ""},
	    {"hw set envpro temperature_c 30.5\n", K32_OK, "K32_END HW"},
	    {"hw get envpro temperature_c", K32_OK, "30.5"},
	    {"hw list", K32_OK, "tag"},
	    {"rfid place tag 5A3C910E", K32_OK, "5A3C910E"},
	    {"rfid remove tag", K32_OK, "K32_END HW"},
	    {"hw set nosuch temperature_c 1", K32_OK, "K32_ERR"},
	    {"hw frobnicate", K32_OK, "K32_ERR"},
	};
	struct k32_buf out;
	k32_buf_init(&out, k32_default_allocator(), 1 << 16, "console");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k32_buf_reset(&out);
		assert_int_equal(sim_hw_console(h, cases[i].line, &out), cases[i].st);
		if (cases[i].want[0] && !strstr(k32_buf_cstr(&out), cases[i].want))
			fail_msg("\"%s\": answer \"%s\" lacks \"%s\"", cases[i].line,
				 k32_buf_cstr(&out), cases[i].want);
	}
	double v = 0;
	assert_int_equal(hw_sim_get_value(sim_hw_sim(h), "scale", "weight_g", &v, &err), K32_OK);
	k32_buf_fini(&out);
	sim_hw_free(h);
	sim_hw_free(NULL);
}

int main(void)
{
	const struct CMUnitTest plain[] = {
	    cmocka_unit_test(test_profiles),
	    cmocka_unit_test(test_hw_console),
	    cmocka_unit_test(test_conf),
	    cmocka_unit_test(test_boot_report),
	};
	const struct CMUnitTest cluster[] = {
	    cmocka_unit_test(test_logs),
	    cmocka_unit_test(test_follow),
	    cmocka_unit_test(test_metrics),
	};
	int rc = cmocka_run_group_tests(plain, NULL, NULL);
	return rc | cmocka_run_group_tests(cluster, setup, teardown);
}
