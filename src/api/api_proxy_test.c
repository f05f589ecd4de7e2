/*
 * api_proxy_test.c - the proxy paths (api_proxy_parse) with ordinary and hostile input, the
 * Service strategy's validation, and kmeta_endpoints_pick's round-robin over an Endpoints
 * object as the endpoints controller writes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_int.h"
#include "api/api_srv.h"
#include "base/k32_log.h"
#include "http/http_ws.h"
#include "kmeta/kmeta.h"
#include "store/store.h"

static bool parse(const char *path, const char *query, struct api_proxy_target *t,
		  struct api_fail *f)
{
	api_fail_clear(f);
	return api_proxy_parse(path, k32_str_from(query), t, f);
}

static void test_parse_ok(void **state)
{
	(void)state;
	struct api_proxy_target t;
	struct api_fail f;
	assert_true(parse("/api/v1/namespaces/default/pods/web-1/proxy/a/b", "x=1", &t, &f));
	assert_int_equal(f.code, 0);
	assert_false(t.service);
	assert_string_equal(t.ns, "default");
	assert_string_equal(t.name, "web-1");
	assert_string_equal(t.target, "/a/b?x=1");
	assert_true(parse("/api/v1/namespaces/default/pods/web-1/proxy", "", &t, &f));
	assert_string_equal(t.target, "/");
	assert_true(parse("/api/v1/namespaces/ns1/services/web:http/proxy/", "", &t, &f));
	assert_int_equal(f.code, 0);
	assert_true(t.service);
	assert_string_equal(t.name, "web");
	assert_string_equal(t.port, "http");
	assert_true(parse("/api/v1/namespaces/ns1/services/http:web:80/proxy/q", "", &t, &f));
	assert_int_equal(f.code, 0);
	assert_string_equal(t.name, "web");
	assert_string_equal(t.port, "80");
	assert_true(parse("/api/v1/namespaces/ns1/pods/p/portforward", "", &t, &f));
	assert_true(t.portforward);
	/* not proxy requests at all */
	assert_false(parse("/api/v1/namespaces/default/pods/web-1", "", &t, &f));
	assert_false(parse("/api/v1/namespaces/default/pods/web-1/log", "", &t, &f));
	assert_false(parse("/api/v1/namespaces/default/configmaps/c/proxy/", "", &t, &f));
	assert_false(parse("/apis/apps/v1/namespaces/d/deployments/x/proxy", "", &t, &f));
	assert_false(parse("/api/v1/namespaces/default/services/s/portforward", "", &t, &f));
}

static void test_parse_hostile(void **state)
{
	(void)state;
	struct api_proxy_target t;
	struct api_fail f;
	/* CR LF, spaces and '%' in the decoded path are encoded again: no header injection */
	assert_true(parse("/api/v1/namespaces/d/pods/p/proxy/a\r\nX-Evil: 1 %", "", &t, &f));
	assert_int_equal(f.code, 0);
	assert_string_equal(t.target, "/a%0D%0AX-Evil:%201%20%25");
	assert_null(strchr(t.target, '\r'));
	/* a query with a raw control byte or space is refused */
	assert_true(parse("/api/v1/namespaces/d/pods/p/proxy/", "a=\r\n", &t, &f));
	assert_int_equal(f.code, 400);
	assert_true(parse("/api/v1/namespaces/d/pods/p/proxy/", "a= b", &t, &f));
	assert_int_equal(f.code, 400);
	/* names that are not object names */
	assert_true(parse("/api/v1/namespaces/d/pods/P\r\nX/proxy/", "", &t, &f));
	assert_int_equal(f.code, 400);
	assert_true(parse("/api/v1/namespaces/d/services/a:b:c:d/proxy/", "", &t, &f));
	assert_int_equal(f.code, 400);
	assert_true(parse("/api/v1/namespaces/d/services/https:web:443/proxy/", "", &t, &f));
	assert_int_equal(f.code, 400);
	assert_non_null(strstr(f.message, "https"));
	assert_true(parse("/api/v1/namespaces/d/services/web:/proxy/", "", &t, &f));
	assert_int_equal(f.code, 0);
	assert_string_equal(t.port, "");
	assert_true(parse("/api/v1/namespaces/d/services/:/proxy/", "", &t, &f));
	assert_int_equal(f.code, 400);
	/* a namespace with a slash trick or upper case is not a proxy path */
	assert_false(parse("/api/v1/namespaces/D/pods/p/proxy/", "", &t, &f));
	assert_false(parse("/api/v1/namespaces//pods/p/proxy/", "", &t, &f));
	/* over the forwarded-target bound: 414 naming the limit */
	char path[1200];
	int n = snprintf(path, sizeof(path), "/api/v1/namespaces/d/pods/p/proxy/");
	memset(path + n, 'a', K32_API_PROXY_PATH_MAX);
	path[n + K32_API_PROXY_PATH_MAX] = 0;
	assert_true(parse(path, "", &t, &f));
	assert_int_equal(f.code, 414);
	assert_non_null(strstr(f.message, "K32_API_PROXY_PATH_MAX"));
	/* encoding can triple the length: the bound holds after it */
	n = snprintf(path, sizeof(path), "/api/v1/namespaces/d/pods/p/proxy/");
	memset(path + n, ' ', K32_API_PROXY_PATH_MAX / 2);
	path[n + K32_API_PROXY_PATH_MAX / 2] = 0;
	assert_true(parse(path, "", &t, &f));
	assert_int_equal(f.code, 414);
	/* a name over 300 bytes */
	n = snprintf(path, sizeof(path), "/api/v1/namespaces/d/services/");
	memset(path + n, 'a', 400);
	snprintf(path + n + 400, sizeof(path) - (size_t)n - 400, "/proxy/");
	assert_true(parse(path, "", &t, &f));
	assert_int_equal(f.code, 400);
}

static const char eps_json[] =
    "{\"subsets\":[{\"addresses\":[{\"ip\":\"10.0.0.1\",\"nodeName\":\"n1\",\"targetRef\":"
    "{\"name\":\"a\"}},{\"ip\":\"10.0.0.1\",\"nodeName\":\"n1\",\"targetRef\":{\"name\":\"b\"}}],"
    "\"ports\":[{\"port\":7001}]},{\"addresses\":[{\"ip\":\"10.0.0.2\",\"nodeName\":\"n2\","
    "\"targetRef\":{\"name\":\"c\"}},{\"ip\":\"bad ip\\r\\n\",\"nodeName\":\"n2\",\"targetRef\":"
    "{\"name\":\"evil\"}},{\"ip\":\"10.0.0.2\",\"nodeName\":\"n2\"}],\"ports\":[{\"port\":7002}]},"
    "{\"addresses\":[{\"ip\":\"10.0.0.3\",\"nodeName\":\"n3\",\"targetRef\":{\"name\":\"d\"}}],"
    "\"ports\":[{\"port\":70000}]}]}";

static void test_endpoints_pick(void **state)
{
	(void)state;
	cJSON *eps = cJSON_Parse(eps_json);
	assert_non_null(eps);
	struct kmeta_endpoint ep;
	/* three usable: a, b (n1:7001), c (n2:7002); the bad ip, the one without a pod and
	 * the port out of range are skipped */
	assert_int_equal(kmeta_endpoints_pick(eps, 0, NULL), 3);
	const char *want[] = {"a", "b", "c", "a", "b", "c"};
	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(kmeta_endpoints_pick(eps, i, &ep), 3);
		assert_string_equal(ep.pod, want[i]);
	}
	kmeta_endpoints_pick(eps, 2, &ep);
	assert_string_equal(ep.node, "n2");
	assert_string_equal(ep.ip, "10.0.0.2");
	assert_int_equal(ep.port, 7002);
	assert_int_equal(kmeta_endpoints_pick(NULL, 0, &ep), 0);
	cJSON_Delete(eps);
}

static void validate(const char *json, struct api_fail *f)
{
	const struct api_resource *r = api_registry_find("", "v1", "services");
	assert_non_null(r);
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	api_fail_clear(f);
	if (r->strategy->defaults)
		r->strategy->defaults(o);
	api_validate(r, o, f);
	cJSON_Delete(o);
}

static void test_service_validation(void **state)
{
	(void)state;
	struct api_fail f;
	validate("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
		 "\"namespace\":\"d\"},\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":[{"
		 "\"port\":80,\"targetPort\":\"http\"}]}}",
		 &f);
	assert_int_equal(f.cause_count, 0);
	validate("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
		 "\"namespace\":\"d\"},\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":0},"
		 "{\"port\":80,\"protocol\":\"UDP\"}]}}",
		 &f);
	assert_int_equal(f.code, 422);
	assert_non_null(strstr(f.message, "spec.type"));
	assert_non_null(strstr(f.message, "spec.ports[0].port"));
	validate(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
	    "\"namespace\":\"d\"},\"spec\":{\"ports\":[{\"port\":1,\"name\":\"a\"},{\"port\":2,"
	    "\"name\":\"b\"},{\"port\":3,\"name\":\"c\"},{\"port\":4,\"name\":\"d\"},{\"port\":5,"
	    "\"name\":\"e\"},{\"port\":6,\"name\":\"f\"},{\"port\":7,\"name\":\"g\"},{\"port\":8,"
	    "\"name\":\"h\"},{\"port\":9,\"name\":\"i\"}]}}",
	    &f);
	assert_int_equal(f.code, 422);
	assert_non_null(strstr(f.message, "K32_SVC_PORTS_MAX"));
}

/* ---- the port-forward tunnel's SPDY session ---------------------------------------------- */

static int fake_calls;

static int fake_forward(void *ctx, const struct api_pf *s, const char *method, const char *target,
			const char *ctype, const void *body, size_t body_len, char *rct,
			size_t rcap, struct k32_buf *answer)
{
	(void)ctx;
	(void)s;
	(void)ctype;
	fake_calls++;
	snprintf(rct, rcap, "text/plain");
	k32_buf_printf(answer, NULL, "%s %s %.*s", method, target, (int)body_len,
		       (const char *)body);
	return 201;
}

static size_t frame(uint8_t *out, bool ctrl, uint32_t type_or_id, uint8_t flags, const void *data,
		    size_t len)
{
	if (ctrl) {
		out[0] = 0x80;
		out[1] = 3;
		out[2] = (uint8_t)(type_or_id >> 8);
		out[3] = (uint8_t)type_or_id;
	} else {
		out[0] = (uint8_t)(type_or_id >> 24);
		out[1] = (uint8_t)(type_or_id >> 16);
		out[2] = (uint8_t)(type_or_id >> 8);
		out[3] = (uint8_t)type_or_id;
	}
	out[4] = flags;
	out[5] = (uint8_t)(len >> 16);
	out[6] = (uint8_t)(len >> 8);
	out[7] = (uint8_t)len;
	if (len)
		memcpy(out + 8, data, len);
	return 8 + len;
}

static size_t syn_stream(uint8_t *out, uint32_t id, uint8_t flags)
{
	/* stream id, associated id, priority, and a header block the session does not read */
	uint8_t p[18] = {(uint8_t)(id >> 24),
			 (uint8_t)(id >> 16),
			 (uint8_t)(id >> 8),
			 (uint8_t)id,
			 0,
			 0,
			 0,
			 0,
			 0,
			 0,
			 0x78,
			 0xbb,
			 1,
			 2,
			 3,
			 4,
			 5,
			 6};
	return frame(out, true, 1, flags, p, sizeof(p));
}

/* Whether out holds a frame starting with the 8-byte head h (data compared too when given). */
static bool has_frame(const struct k32_buf *out, const uint8_t *h, size_t hl)
{
	for (size_t i = 0; i + hl <= out->len; i++)
		if (!memcmp(out->data + i, h, hl))
			return true;
	return false;
}

/* Whether text (NUL-terminated) occurs in out. */
static bool has_text(const struct k32_buf *out, const char *text)
{
	return has_frame(out, (const uint8_t *)text, strlen(text));
}

static void test_portforward_session(void **state)
{
	(void)state;
	struct api_pf *s = api_pf_new("default", "web-1", "n1", "127.0.0.1", 1);
	assert_non_null(s);
	api_pf_set_forward(s, fake_forward, NULL);
	uint8_t buf[512];
	size_t n = 0;
	fake_calls = 0;
	/* the error stream: opened, closed at once by the client; closed empty by us */
	n += syn_stream(buf + n, 1, 0);
	n += frame(buf + n, false, 1, 1, NULL, 0);
	assert_true(api_pf_input(s, buf, n));
	struct k32_buf *out = api_pf_output(s);
	static const uint8_t reply1[] = {0x80, 3, 0, 2, 0, 0, 0, 20, 0, 0, 0, 1, 0x78, 0x01};
	assert_true(has_frame(out, reply1, sizeof(reply1)));
	static const uint8_t fin1[] = {0, 0, 0, 1, 1, 0, 0, 0};
	assert_true(has_frame(out, fin1, sizeof(fin1)));
	k32_buf_reset(out);
	/* the data stream: a request split over two frames, fed a byte at a time */
	n = syn_stream(buf, 3, 0);
	static const char r1[] = "POST /p?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n";
	n += frame(buf + n, false, 3, 0, r1, sizeof(r1) - 1);
	n += frame(buf + n, false, 3, 0, "abc", 3);
	for (size_t i = 0; i < n; i++)
		assert_true(api_pf_input(s, buf + i, 1));
	assert_int_equal(fake_calls, 1);
	/* the second reply continues the zlib stream: no zlib header again */
	static const uint8_t reply3[] = {0x80, 3, 0, 2, 0, 0, 0, 18, 0, 0, 0, 3, 0x00, 0x04};
	assert_true(has_frame(out, reply3, sizeof(reply3)));
	assert_true(has_text(out, "HTTP/1.1 201 Created"));
	assert_true(has_text(out, "POST /p?x=1 abc"));
	static const uint8_t fin3[] = {0, 0, 0, 3, 1, 0, 0, 0};
	assert_true(has_frame(out, fin3, sizeof(fin3)));
	k32_buf_reset(out);
	/* not HTTP: 400, never forwarded */
	n = syn_stream(buf, 5, 0);
	n += frame(buf + n, false, 5, 1, "\x16\x03\x01\r\n\r\n", 7);
	assert_true(api_pf_input(s, buf, n));
	assert_int_equal(fake_calls, 1);
	assert_true(has_text(out, "HTTP/1.1 400"));
	k32_buf_reset(out);
	/* a body longer than K32_API_PROXY_BODY_MAX is refused by its Content-Length */
	n = syn_stream(buf, 7, 0);
	char big[96];
	int bl = snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nContent-Length: %u\r\n\r\n",
			  (unsigned)K32_API_PROXY_BODY_MAX + 1);
	n += frame(buf + n, false, 7, 0, big, (size_t)bl);
	assert_true(api_pf_input(s, buf, n));
	assert_true(has_text(out, "HTTP/1.1 413"));
	k32_buf_reset(out);
	/* PING is echoed */
	static const uint8_t ping_id[4] = {0, 0, 0, 9};
	n = frame(buf, true, 6, 0, ping_id, 4);
	assert_true(api_pf_input(s, buf, n));
	assert_int_equal(out->len, 12);
	assert_memory_equal(out->data, buf, 12);
	k32_buf_reset(out);
	/* past K32_API_PORTFORWARD_STREAMS open streams: refused with RST_STREAM */
	n = 0;
	for (uint32_t i = 0; i <= K32_API_PORTFORWARD_STREAMS; i++)
		n += syn_stream(buf + n, 101 + 2 * i, 0);
	assert_true(api_pf_input(s, buf, n));
	static const uint8_t rst[] = {0x80, 3, 0, 3, 0, 0, 0, 8};
	assert_true(has_frame(out, rst, sizeof(rst)));
	/* GOAWAY ends the tunnel */
	static const uint8_t ga[8] = {0};
	n = frame(buf, true, 7, 0, ga, 8);
	assert_false(api_pf_input(s, buf, n));
	api_pf_free(s);
}

/* A client's WebSocket frame (masked) around payload; its length. */
static size_t ws_frame(uint8_t *out, uint8_t opcode, const void *payload, size_t n)
{
	static const uint8_t key[4] = {0xa1, 0x02, 0xf3, 0x44};
	size_t hl = http_ws_frame_head(out, opcode, true, n, key);
	memcpy(out + hl, payload, n);
	http_ws_mask(out + hl, n, key, 0);
	return hl + n;
}

/* The SPDY bytes of the binary frames in wire (a server's, unmasked), into spdy; false when
 * a frame is not binary. The control frames' opcodes go to ops (at most 4). */
static bool ws_unwrap(const struct k32_buf *wire, struct k32_buf *spdy, uint8_t ops[4], int *nops)
{
	struct http_ws_reader r;
	http_ws_reader_init(&r, false);
	*nops = 0;
	size_t off = 0;
	while (off < wire->len) {
		const uint8_t *f = wire->data + off;
		assert_true(wire->len - off >= 2);
		uint64_t len = f[1] & 0x7f;
		size_t hl = 2;
		if (len == 126) {
			len = ((uint64_t)f[2] << 8) | f[3];
			hl = 4;
		} else if (len == 127) {
			len = 0;
			for (int i = 0; i < 8; i++)
				len = (len << 8) | f[2 + i];
			hl = 10;
		}
		assert_false(f[1] & 0x80); /* a server never masks */
		assert_true(f[0] & 0x80);  /* whole frames */
		uint8_t op = f[0] & 0x0f;
		if (op == HTTP_WS_OP_BINARY)
			k32_buf_append(spdy, f + hl, (size_t)len, NULL);
		else if (*nops < 4)
			ops[(*nops)++] = op;
		off += hl + (size_t)len;
	}
	return off == wire->len;
}

/* The same session inside WebSocket, as kubectl 1.31+ speaks it: SPDY frames cut across
 * binary messages at arbitrary points, PING answered, text and CLOSE end the tunnel. */
static void test_portforward_websocket(void **state)
{
	(void)state;
	struct api_pf *s = api_pf_new("default", "web-1", "n1", "127.0.0.1", 1);
	assert_non_null(s);
	api_pf_set_forward(s, fake_forward, NULL);
	api_pf_set_websocket(s);
	fake_calls = 0;
	uint8_t spdy[512], wire[1024];
	size_t n = 0;
	n += syn_stream(spdy + n, 1, 0);
	n += frame(spdy + n, false, 1, 1, NULL, 0);
	n += syn_stream(spdy + n, 3, 0);
	static const char rq[] = "GET /pf HTTP/1.1\r\nHost: a\r\n\r\n";
	n += frame(spdy + n, false, 3, 0, rq, sizeof(rq) - 1);
	/* three binary messages cut mid-frame, a PING between them */
	size_t w = 0, cut1 = 5, cut2 = n - 9;
	w += ws_frame(wire + w, HTTP_WS_OP_BINARY, spdy, cut1);
	w += ws_frame(wire + w, HTTP_WS_OP_PING, "k", 1);
	w += ws_frame(wire + w, HTTP_WS_OP_BINARY, spdy + cut1, cut2 - cut1);
	w += ws_frame(wire + w, HTTP_WS_OP_BINARY, spdy + cut2, n - cut2);
	for (size_t i = 0; i < w; i++) /* a byte at a time */
		assert_true(api_pf_input(s, wire + i, 1));
	assert_int_equal(fake_calls, 1);
	struct k32_buf got;
	k32_buf_init(&got, k32_default_allocator(), 1 << 16, "spdy");
	uint8_t ops[4];
	int nops;
	assert_true(ws_unwrap(api_pf_output(s), &got, ops, &nops));
	assert_int_equal(nops, 1);
	assert_int_equal(ops[0], HTTP_WS_OP_PONG);
	static const uint8_t reply1[] = {0x80, 3, 0, 2, 0, 0, 0, 20, 0, 0, 0, 1, 0x78, 0x01};
	assert_true(has_frame(&got, reply1, sizeof(reply1)));
	assert_true(has_text(&got, "HTTP/1.1 201 Created"));
	assert_true(has_text(&got, "GET /pf "));
	k32_buf_reset(api_pf_output(s));
	/* the client's CLOSE: answered with CLOSE 1000, the tunnel ends */
	static const uint8_t bye[2] = {0x03, 0xe8};
	w = ws_frame(wire, HTTP_WS_OP_CLOSE, bye, 2);
	assert_false(api_pf_input(s, wire, w));
	k32_buf_reset(&got);
	assert_true(ws_unwrap(api_pf_output(s), &got, ops, &nops));
	assert_int_equal(nops, 1);
	assert_int_equal(ops[0], HTTP_WS_OP_CLOSE);
	const struct k32_buf *o = api_pf_output(s);
	assert_int_equal(o->data[o->len - 2], 0x03);
	assert_int_equal(o->data[o->len - 1], 0xe8);
	api_pf_free(s);

	/* a text message: CLOSE 1003; an unmasked frame: CLOSE 1002 naming the rule */
	s = api_pf_new("default", "web-1", "n1", "127.0.0.1", 1);
	api_pf_set_websocket(s);
	w = ws_frame(wire, HTTP_WS_OP_TEXT, "hi", 2);
	assert_false(api_pf_input(s, wire, w));
	o = api_pf_output(s);
	assert_int_equal(o->data[0], 0x88);
	assert_int_equal((o->data[2] << 8) | o->data[3], HTTP_WS_CLOSE_UNSUPPORTED);
	api_pf_free(s);
	s = api_pf_new("default", "web-1", "n1", "127.0.0.1", 1);
	api_pf_set_websocket(s);
	w = http_ws_frame_head(wire, HTTP_WS_OP_BINARY, true, 1, NULL);
	wire[w++] = 0;
	assert_false(api_pf_input(s, wire, w));
	o = api_pf_output(s);
	assert_int_equal((o->data[2] << 8) | o->data[3], HTTP_WS_CLOSE_PROTOCOL);
	assert_true(has_text(o, "not masked"));
	api_pf_free(s);
	k32_buf_fini(&got);
}

/* The K32_SVC_MAX-th Service is the last one created; the next is 403 naming the limit. */
static void test_service_limit(void **state)
{
	(void)state;
	k32_log_set_stderr(false);
	struct store *store;
	struct api_server *api;
	struct k32_err err;
	struct store_config sc = {.data_dir = NULL, .history_events = 16};
	assert_int_equal(store_open(&sc, &store, &err), K32_OK);
	struct api_config ac = {.store = store, .bootstrap = true};
	assert_int_equal(api_server_new(&ac, &api, &err), K32_OK);
	struct k32_buf b;
	k32_buf_init(&b, k32_default_allocator(), 1 << 16, "resp");
	char body[160];
	int code = 0;
	for (unsigned i = 0; i <= K32_SVC_MAX; i++) {
		int n = snprintf(body, sizeof(body),
				 "{\"metadata\":{\"name\":\"s%u\"},\"spec\":{\"ports\":[{\"port\":"
				 "80}]}}",
				 i);
		k32_buf_reset(&b);
		assert_int_equal(api_do(api, "POST", "/api/v1/namespaces/default/services",
					"application/json", body, (size_t)n, &code, &b, &err),
				 K32_OK);
		assert_int_equal(code, i < K32_SVC_MAX ? 201 : 403);
	}
	assert_non_null(strstr(k32_buf_cstr(&b), "K32_SVC_MAX"));
	k32_buf_fini(&b);
	api_server_free(api);
	store_close(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_ok),
	    cmocka_unit_test(test_parse_hostile),
	    cmocka_unit_test(test_endpoints_pick),
	    cmocka_unit_test(test_service_validation),
	    cmocka_unit_test(test_portforward_session),
	    cmocka_unit_test(test_portforward_websocket),
	    cmocka_unit_test(test_service_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
