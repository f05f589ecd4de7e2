/*
 * api_portforward.c - `kubectl port-forward pod/NAME LOCAL:PORT`: the SPDY/3.1 tunnel of
 * pods/portforward (X-Stream-Protocol-Version portforward.k8s.io), carrying HTTP to the pod's
 * handler.
 *
 * kubectl upgrades POST .../pods/NAME/portforward to SPDY/3.1 and, for every connection to
 * its local port, opens two streams: an error stream (which it half-closes at once) and a
 * data stream carrying the connection's bytes. A kube32 pod answers HTTP only, so the data
 * stream's bytes are read as one HTTP/1.1 request (request line, headers, Content-Length
 * body), forwarded to the pod's node's pod server with X-Kube32-Pod (as pods/proxy), and the
 * pod's answer written back with "Connection: close", then the stream is closed: a client
 * makes one request per connection (curl does). The error stream is closed empty (no
 * error). SYN_STREAM header blocks (zlib with SPDY's dictionary) are not read: a stream that
 * the client closes before sending anything is the error stream, any other carries data;
 * replies carry an empty header block (a zlib stream of stored blocks, which needs no
 * dictionary). PING is answered, GOAWAY ends the tunnel, SETTINGS and WINDOW_UPDATE are
 * ignored (answers are far below the 64 KiB window).
 *
 * kubectl 1.31+ first asks for the same SPDY tunnelled in WebSocket: GET with "Upgrade:
 * websocket" and subprotocol SPDY/3.1+portforward.k8s.io (KEP 4006). The tunnel then carries
 * the very same SPDY frames as a byte stream cut into WebSocket binary messages (masked by
 * the client, as RFC 6455 wants), so the session below is shared: the WebSocket layer
 * (http_ws.c) unwraps what comes, and what goes is wrapped in binary frames. PING is
 * answered with PONG, CLOSE with CLOSE, a text message or a protocol error closes with the
 * RFC's code. Older kubectl (1.27-1.30) asks for plain SPDY, served as before. Which of the
 * two served is counted (kube32_apiserver_portforward_tunnels_total{protocol} on /metrics)
 * and logged.
 *
 * Bounds: K32_API_PORTFORWARD_TUNNELS tunnels at once (429 past it),
 * K32_API_PORTFORWARD_STREAMS open streams per tunnel (RST_STREAM REFUSED past it),
 * K32_API_PROXY_BODY_MAX bytes of request per stream (413) and of frame input buffered,
 * K32_SVC_FORWARD_TIMEOUT_MS per forward, K32_HTTP_WS_FRAME_MAX and K32_HTTP_WS_MESSAGE_MAX
 * bytes of a WebSocket frame and message. The forward runs in the stream's pull on the
 * server's loop task (a pod call is milliseconds; the timeout bounds a dead node).
 */
#include "api/api_srv.h"
#include "http/http.h"
#include "http/http_ws.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"

static _Atomic uint32_t pf_tunnels;
/* tunnels served since start, by protocol (0 SPDY, 1 WebSocket): /metrics */
/* 32-bit: a board has no 64-bit atomics (make mcu links no libatomic) */
static _Atomic uint32_t pf_served[2];

struct pf_stream {
	uint32_t id;	    /* 0: free */
	bool got_data;	    /* bytes came: the data stream */
	struct k32_buf req; /* the HTTP request read so far */
};

struct api_pf {
	char ns[64];
	char pod[254];
	char node[254];
	char ip[64];
	uint16_t port;
	bool z_started;	       /* the reply header blocks' zlib stream has its header */
	api_pf_forward_fn fwd; /* sends one request to the pod (pf_forward; tests replace it) */
	void *fwd_ctx;
	struct k32_buf in;  /* frame bytes not parsed yet */
	struct k32_buf out; /* frames not yet accepted by the connection */
	struct pf_stream st[K32_API_PORTFORWARD_STREAMS];
	/* WebSocket (kubectl 1.31+): the SPDY bytes above travel in binary messages */
	bool ws;
	bool ws_closed;		   /* our CLOSE is queued: nothing more goes */
	struct http_ws_reader wsr; /* the client's frames */
	struct k32_buf wire;	   /* frames to send (out wrapped, PONGs, our CLOSE) */
};

/* ---- frames ------------------------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void ctrl_head(uint8_t h[8], uint16_t type, uint8_t flags, uint32_t len)
{
	h[0] = 0x80;
	h[1] = 3;
	h[2] = (uint8_t)(type >> 8);
	h[3] = (uint8_t)type;
	h[4] = flags;
	h[5] = (uint8_t)(len >> 16);
	h[6] = (uint8_t)(len >> 8);
	h[7] = (uint8_t)len;
}

static void pf_data(struct api_pf *s, uint32_t id, bool fin, const void *data, size_t len)
{
	/* frames of at most 16 KiB */
	do {
		size_t n = len > 16384 ? 16384 : len;
		uint8_t h[8];
		put32(h, id & 0x7fffffffu);
		h[4] = (fin && n == len) ? 1 : 0;
		h[5] = (uint8_t)(n >> 16);
		h[6] = (uint8_t)(n >> 8);
		h[7] = (uint8_t)n;
		k32_buf_append(&s->out, h, 8, NULL);
		if (n)
			k32_buf_append(&s->out, data, n, NULL);
		data = (const uint8_t *)data + n;
		len -= n;
	} while (len);
}

/* SYN_REPLY with an empty header block: the zlib stream (no dictionary) of stored blocks
 * holding the header count 0. */
static void pf_syn_reply(struct api_pf *s, uint32_t id)
{
	static const uint8_t zhead[] = {0x78, 0x01};
	/* a stored block with the 4 bytes, then an empty one: the sync flush after which a
	 * reader hands the bytes over without reading past the frame */
	static const uint8_t block[] = {0x00, 0x04, 0x00, 0xfb, 0xff, 0,    0,
					0,    0,    0x00, 0x00, 0x00, 0xff, 0xff};
	size_t zlen = (s->z_started ? 0 : sizeof(zhead)) + sizeof(block);
	uint8_t h[12];
	ctrl_head(h, 2, 0, (uint32_t)(4 + zlen));
	put32(h + 8, id & 0x7fffffffu);
	k32_buf_append(&s->out, h, 12, NULL);
	if (!s->z_started)
		k32_buf_append(&s->out, zhead, sizeof(zhead), NULL);
	k32_buf_append(&s->out, block, sizeof(block), NULL);
	s->z_started = true;
}

static void pf_rst(struct api_pf *s, uint32_t id, uint32_t code)
{
	uint8_t h[16];
	ctrl_head(h, 3, 0, 8);
	put32(h + 8, id & 0x7fffffffu);
	put32(h + 12, code);
	k32_buf_append(&s->out, h, 16, NULL);
}

static struct pf_stream *pf_find(struct api_pf *s, uint32_t id)
{
	for (size_t i = 0; i < K32_API_PORTFORWARD_STREAMS; i++)
		if (s->st[i].id == id)
			return &s->st[i];
	return NULL;
}

static void pf_drop(struct pf_stream *st)
{
	k32_buf_fini(&st->req);
	st->id = 0;
	st->got_data = false;
}

/* ---- one HTTP request over a data stream -------------------------------------------------- */

/* Answers the stream with status and text, then closes it. */
static void pf_answer(struct api_pf *s, struct pf_stream *st, int status, const char *ctype,
		      const void *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, http_status_reason(status), ctype, len);
	pf_data(s, st->id, false, head, (size_t)n);
	if (len)
		pf_data(s, st->id, false, body, len);
	pf_data(s, st->id, true, NULL, 0);
	pf_drop(st);
}

static void pf_text(struct api_pf *s, struct pf_stream *st, int status, const char *msg)
{
	pf_answer(s, st, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Case-insensitive header value of name in the block [h, end), or false. */
static bool pf_header(const char *h, const char *end, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	while (h < end) {
		const char *eol = memchr(h, '\n', (size_t)(end - h));
		if (!eol)
			eol = end;
		if ((size_t)(eol - h) > nl && h[nl] == ':' && !strncasecmp(h, name, nl)) {
			const char *v = h + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			size_t vl = (size_t)(eol - v);
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
				vl--;
			if (vl >= cap)
				return false;
			memcpy(out, v, vl);
			out[vl] = 0;
			return true;
		}
		h = eol + 1;
	}
	return false;
}

/* When st holds a whole request, forwards it and answers. fin: the client sent all. */
static void pf_try_request(struct api_pf *s, struct pf_stream *st, bool fin)
{
	const char *d = (const char *)st->req.data;
	size_t len = st->req.len;
	const char *eoh = NULL;
	for (size_t i = 0; d && i + 4 <= len && !eoh; i++)
		if (!memcmp(d + i, "\r\n\r\n", 4))
			eoh = d + i;
	if (!eoh) {
		if (fin)
			pf_text(s, st, 400, "kube32 port-forward: expected an HTTP request\n");
		return;
	}
	const char *sp1 = memchr(d, ' ', (size_t)(eoh - d));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eoh - sp1 - 1)) : NULL;
	char method[16], target[K32_API_PROXY_PATH_MAX + 1], clen[24] = "", ctype[96] = "";
	if (!sp1 || !sp2 || (size_t)(sp1 - d) >= sizeof(method) ||
	    (size_t)(sp2 - sp1 - 1) >= sizeof(target) || sp2 == sp1 + 1 || sp1[1] != '/') {
		pf_text(s, st, 400,
			"kube32 port-forward: a pod answers HTTP/1.1 requests only (request line "
			"METHOD /path HTTP/1.1, target within K32_API_PROXY_PATH_MAX)\n");
		return;
	}
	memcpy(method, d, (size_t)(sp1 - d));
	method[sp1 - d] = 0;
	bool token = method[0] != 0;
	for (const char *p = method; *p; p++)
		token &= *p >= 'A' && *p <= 'Z';
	if (!token) {
		pf_text(s, st, 400, "kube32 port-forward: bad request method\n");
		return;
	}
	memcpy(target, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	target[sp2 - sp1 - 1] = 0;
	for (const char *p = target; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			pf_text(s, st, 400, "kube32 port-forward: bad request target\n");
			return;
		}
	const char *hs = memchr(d, '\n', (size_t)(eoh - d));
	hs = hs ? hs + 1 : eoh;
	size_t body_len = 0;
	if (pf_header(hs, eoh + 2, "Content-Length", clen, sizeof(clen))) {
		char *e = NULL;
		unsigned long long v = strtoull(clen, &e, 10);
		if (!clen[0] || (e && *e) || v > K32_API_PROXY_BODY_MAX) {
			pf_text(s, st, 413,
				"kube32 port-forward: Content-Length missing digits or over "
				"K32_API_PROXY_BODY_MAX\n");
			return;
		}
		body_len = (size_t)v;
	}
	pf_header(hs, eoh + 2, "Content-Type", ctype, sizeof(ctype));
	const char *body = eoh + 4;
	if ((size_t)(d + len - body) < body_len) {
		if (fin)
			pf_text(s, st, 400, "kube32 port-forward: the body ended early\n");
		return;
	}
	char rct[96] = "text/plain; charset=utf-8";
	struct k32_buf answer;
	k32_buf_init(&answer, k32_default_allocator(), K32_API_PROXY_BODY_MAX, "tunnel answer");
	int status =
	    s->fwd(s->fwd_ctx, s, method, target, ctype, body, body_len, rct, sizeof(rct), &answer);
	pf_answer(s, st, status >= 100 && status <= 599 ? status : 502, rct,
		  answer.data ? answer.data : (const uint8_t *)"", answer.len);
	k32_buf_fini(&answer);
}

/* The HTTP forward to the pod's node's pod server (api_pod_forward, as pods/proxy): the
 * pod's status, or 502/504 with why. */
static int pf_forward(void *ctx, const struct api_pf *s, const char *method, const char *target,
		      const char *ctype, const void *body, size_t body_len, char *rct, size_t rcap,
		      struct k32_buf *answer)
{
	(void)ctx;
	struct k32_err err;
	k32_err_clear(&err);
	const struct api_pod_request prq = {
	    .method = method, .target = target, .ctype = ctype, .body = body, .body_len = body_len};
	int status = 0;
	k32_status_t st =
	    api_pod_forward(s->ns, s->pod, s->ip, s->port, &prq, &status, rct, rcap, answer, &err);
	if (!st)
		return status;
	k32_buf_reset(answer);
	k32_buf_printf(answer, NULL,
		       "kube32 port-forward: pod %s/%s at node %s's pod server "
		       "http://%s:%u: %s\n",
		       s->ns, s->pod, s->node, s->ip, (unsigned)s->port, err.msg);
	return st == K32_ERR_TIMED_OUT ? 504 : 502;
}

/* ---- the frame loop ----------------------------------------------------------------------- */

/* Handles every whole frame in s->in; false: end the tunnel. */
static bool pf_frames(struct api_pf *s)
{
	size_t off = 0;
	bool go_on = true;
	while (go_on && s->in.len - off >= 8) {
		const uint8_t *f = s->in.data + off;
		uint32_t len = ((uint32_t)f[5] << 16) | ((uint32_t)f[6] << 8) | f[7];
		uint8_t flags = f[4];
		if (s->in.len - off - 8 < len)
			break;
		const uint8_t *p = f + 8;
		if (f[0] & 0x80) {
			uint16_t type = (uint16_t)((f[2] << 8) | f[3]);
			if (type == 1 && len >= 10) { /* SYN_STREAM */
				uint32_t id = be32(p) & 0x7fffffffu;
				struct pf_stream *st = pf_find(s, 0);
				if (!st || !id || pf_find(s, id)) {
					pf_rst(s, id, 3); /* REFUSED_STREAM */
				} else {
					st->id = id;
					k32_buf_init(&st->req, k32_default_allocator(),
						     K32_API_PROXY_BODY_MAX + 8192,
						     "tunnel request");
					pf_syn_reply(s, id);
					if (flags & 1) { /* closed at once: the error stream */
						pf_data(s, id, true, NULL, 0);
						pf_drop(st);
					}
				}
			} else if (type == 3 && len >= 4) { /* RST_STREAM */
				struct pf_stream *st = pf_find(s, be32(p) & 0x7fffffffu);
				if (st && st->id)
					pf_drop(st);
			} else if (type == 6 && len == 4) { /* PING: echoed */
				k32_buf_append(&s->out, f, 12, NULL);
			} else if (type == 7) { /* GOAWAY */
				go_on = false;
			}
		} else {
			uint32_t id = be32(f) & 0x7fffffffu;
			struct pf_stream *st = id ? pf_find(s, id) : NULL;
			bool fin = flags & 1;
			if (st && len) {
				st->got_data = true;
				if (k32_buf_append(&st->req, p, len, NULL)) {
					pf_text(s, st, 413,
						"kube32 port-forward: the request is over "
						"K32_API_PROXY_BODY_MAX\n");
				} else {
					pf_try_request(s, st, fin);
				}
			} else if (st && fin && !st->got_data) {
				/* the error stream's close: close ours, no error */
				pf_data(s, id, true, NULL, 0);
				pf_drop(st);
			} else if (st && fin) {
				pf_try_request(s, st, true);
			}
		}
		off += 8 + len;
	}
	k32_buf_consume(&s->in, off);
	return go_on;
}

static k32_status_t pf_pull(void *ctx, struct http_stream *hs, uint32_t events)
{
	(void)events;
	struct api_pf *s = ctx;
	uint8_t tmp[2048];
	size_t n;
	bool go_on = true;
	while (go_on && (n = http_stream_read(hs, tmp, sizeof(tmp))) > 0)
		go_on = api_pf_input(s, tmp, n);
	struct k32_buf *o = api_pf_output(s);
	if (o->len) {
		k32_status_t st = http_stream_write(hs, o->data, o->len);
		if (st == K32_OK)
			k32_buf_reset(o);
		else if (st != K32_ERR_SHOULD_WAIT)
			return st;
	}
	return go_on ? K32_OK : K32_ERR_CANCELED;
}

static void pf_close(void *ctx, k32_status_t why)
{
	(void)why;
	api_pf_free(ctx);
	atomic_fetch_sub(&pf_tunnels, 1);
}

/* ---- the session, as tests and the fuzz target drive it --------------------------------- */

struct api_pf *api_pf_new(const char *ns, const char *pod, const char *node, const char *ip,
			  uint16_t port)
{
	struct api_pf *s = api_zalloc(sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->pod, sizeof(s->pod), "%s", pod);
	snprintf(s->node, sizeof(s->node), "%s", node);
	snprintf(s->ip, sizeof(s->ip), "%s", ip);
	s->port = port;
	s->fwd = pf_forward;
	k32_buf_init(&s->in, k32_default_allocator(), K32_API_PROXY_BODY_MAX + 16384,
		     "tunnel input");
	k32_buf_init(&s->out, k32_default_allocator(), 4 * K32_API_PROXY_BODY_MAX, "tunnel output");
	k32_buf_init(&s->wire, k32_default_allocator(), 4 * K32_API_PROXY_BODY_MAX + 65536,
		     "tunnel frames");
	return s;
}

void api_pf_free(struct api_pf *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < K32_API_PORTFORWARD_STREAMS; i++)
		if (s->st[i].id)
			pf_drop(&s->st[i]);
	k32_buf_fini(&s->in);
	k32_buf_fini(&s->out);
	k32_buf_fini(&s->wire);
	api_free(s, sizeof(*s));
}

void api_pf_set_forward(struct api_pf *s, api_pf_forward_fn fn, void *ctx)
{
	s->fwd = fn;
	s->fwd_ctx = ctx;
}

/* The client's SPDY bytes (plain, or unwrapped from WebSocket); false ends the tunnel. */
static bool pf_spdy_input(struct api_pf *s, const void *data, size_t len)
{
	if (k32_buf_append(&s->in, data, len, NULL)) {
		K32_LOGW("api", "port-forward to %s/%s: a frame is over %u bytes; closing", s->ns,
			 s->pod, (unsigned)(K32_API_PROXY_BODY_MAX + 16384));
		return false;
	}
	return pf_frames(s);
}

/* ---- WebSocket ---------------------------------------------------------------------------- */

/* Moves the SPDY bytes waiting in s->out into binary frames on the wire. */
static void pf_ws_flush(struct api_pf *s)
{
	size_t off = 0;
	while (off < s->out.len && !s->ws_closed) {
		size_t n = s->out.len - off;
		if (n > 65536)
			n = 65536;
		uint8_t h[HTTP_WS_HEAD_MAX];
		size_t hl = http_ws_frame_head(h, HTTP_WS_OP_BINARY, true, n, NULL);
		k32_buf_append(&s->wire, h, hl, NULL);
		k32_buf_append(&s->wire, s->out.data + off, n, NULL);
		off += n;
	}
	k32_buf_reset(&s->out);
}

static void pf_ws_close(struct api_pf *s, uint16_t code, const char *reason)
{
	if (s->ws_closed)
		return;
	pf_ws_flush(s);
	uint8_t f[HTTP_WS_HEAD_MAX + HTTP_WS_CONTROL_MAX];
	k32_buf_append(&s->wire, f, http_ws_close_frame(f, code, reason), NULL);
	s->ws_closed = true;
}

static uint16_t pf_ws_data(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, bool last)
{
	(void)last;
	struct api_pf *s = ctx;
	if (opcode != HTTP_WS_OP_BINARY)
		return HTTP_WS_CLOSE_UNSUPPORTED; /* the tunnel is binary SPDY */
	return pf_spdy_input(s, p, n) ? 0 : HTTP_WS_CLOSE_NORMAL;
}

static uint16_t pf_ws_control(void *ctx, uint8_t opcode, const uint8_t *p, size_t n, uint16_t code)
{
	(void)code;
	struct api_pf *s = ctx;
	if (opcode == HTTP_WS_OP_CLOSE)
		return HTTP_WS_CLOSE_NORMAL; /* answered by the caller's CLOSE */
	if (opcode == HTTP_WS_OP_PING && !s->ws_closed) {
		pf_ws_flush(s);
		uint8_t h[HTTP_WS_HEAD_MAX];
		k32_buf_append(&s->wire, h, http_ws_frame_head(h, HTTP_WS_OP_PONG, true, n, NULL),
			       NULL);
		if (n)
			k32_buf_append(&s->wire, p, n, NULL);
	}
	return 0;
}

/* The client's WebSocket bytes; false ends the tunnel (our CLOSE is queued). */
static bool pf_ws_input(struct api_pf *s, const void *data, size_t len)
{
	const struct http_ws_sink sink = {.data = pf_ws_data, .control = pf_ws_control, .ctx = s};
	uint8_t tmp[2048]; /* the reader unmasks in place */
	size_t off = 0;
	while (off < len && !s->ws_closed) {
		size_t n = len - off < sizeof(tmp) ? len - off : sizeof(tmp);
		memcpy(tmp, (const uint8_t *)data + off, n);
		struct k32_err err;
		k32_err_clear(&err);
		if (http_ws_read(&s->wsr, tmp, n, &sink, &err)) {
			if (s->wsr.close_code != HTTP_WS_CLOSE_NORMAL)
				K32_LOGW("api", "port-forward to %s/%s over WebSocket: %s", s->ns,
					 s->pod, err.msg);
			pf_ws_close(s, s->wsr.close_code,
				    s->wsr.close_code == HTTP_WS_CLOSE_NORMAL ? "" : err.msg);
			return false;
		}
		off += n;
	}
	pf_ws_flush(s);
	return !s->ws_closed;
}

bool api_pf_input(struct api_pf *s, const void *data, size_t len)
{
	return s->ws ? pf_ws_input(s, data, len) : pf_spdy_input(s, data, len);
}

struct k32_buf *api_pf_output(struct api_pf *s)
{
	return s->ws ? &s->wire : &s->out;
}

void api_pf_set_websocket(struct api_pf *s)
{
	s->ws = true;
	http_ws_reader_init(&s->wsr, true);
}

void api_portforward_counts(uint64_t *spdy, uint64_t *websocket)
{
	*spdy = atomic_load(&pf_served[0]);
	*websocket = atomic_load(&pf_served[1]);
}

static const struct http_stream_ops pf_ops = {.pull = pf_pull, .close = pf_close};

/* What the request asks for: 0 SPDY, 1 WebSocket, -1 neither (not ours to answer). */
static int pf_protocol(const struct api_req *rq)
{
	if (!strncasecmp(rq->upgrade, "SPDY/3.1", 8) &&
	    strstr(rq->stream_protocol, "portforward.k8s.io"))
		return 0;
	if (!strcasecmp(rq->upgrade, "websocket") &&
	    http_ws_list_has(rq->ws_protocol, API_PF_WS_PROTOCOL, false))
		return 1;
	return -1;
}

bool api_portforward_start(const struct api_req *rq, struct api_out *out, const char *ns,
			   const char *pod, const char *node, const char *ip, uint16_t port)
{
	int proto = rq->http ? pf_protocol(rq) : -1;
	if (proto < 0)
		return false;
	struct api_fail f;
	api_fail_clear(&f);
	char accept[HTTP_WS_ACCEPT_LEN + 1] = "";
	if (proto == 1) {
		struct k32_err err;
		k32_err_clear(&err);
		if (strcmp(rq->ws_version, "13")) {
			api_fail_set(&f, 400, "BadRequest",
				     "port-forward: Sec-WebSocket-Version \"%.8s\" is not 13, the "
				     "only version kube32 speaks",
				     rq->ws_version);
			http_response_header(rq->http, "Sec-WebSocket-Version", "13");
			api_out_fail(out, &f);
			return true;
		}
		if (http_ws_accept_key(rq->ws_key, accept, &err)) {
			api_fail_set(&f, 400, "BadRequest", "port-forward: %s", err.msg);
			api_out_fail(out, &f);
			return true;
		}
	}
	if (atomic_fetch_add(&pf_tunnels, 1) >= K32_API_PORTFORWARD_TUNNELS) {
		atomic_fetch_sub(&pf_tunnels, 1);
		api_fail_set(&f, 429, "TooManyRequests",
			     "port-forward: %u tunnels are open already "
			     "(K32_API_PORTFORWARD_TUNNELS); close one",
			     (unsigned)K32_API_PORTFORWARD_TUNNELS);
		api_out_fail(out, &f);
		return true;
	}
	struct api_pf *s = api_pf_new(ns, pod, node, ip, port);
	if (!s) {
		atomic_fetch_sub(&pf_tunnels, 1);
		api_fail_set(&f, 500, "InternalError", "port-forward: out of memory");
		api_out_fail(out, &f);
		return true;
	}
	http_response_header(rq->http, "Connection", "Upgrade");
	if (proto == 1) {
		api_pf_set_websocket(s);
		http_response_header(rq->http, "Upgrade", "websocket");
		http_response_header(rq->http, "Sec-WebSocket-Accept", accept);
		http_response_header(rq->http, "Sec-WebSocket-Protocol", API_PF_WS_PROTOCOL);
	} else {
		http_response_header(rq->http, "Upgrade", "SPDY/3.1");
		http_response_header(rq->http, "X-Stream-Protocol-Version", "portforward.k8s.io");
	}
	if (http_response_upgrade(rq->http, &pf_ops, s, NULL)) {
		api_pf_free(s);
		atomic_fetch_sub(&pf_tunnels, 1);
		api_fail_set(&f, 500, "InternalError", "port-forward: cannot upgrade");
		api_out_fail(out, &f);
		return true;
	}
	atomic_fetch_add(&pf_served[proto], 1);
	K32_LOGI("api", "port-forward to pod %s/%s (node %s, http://%s:%u) over %s", ns, pod, node,
		 ip, (unsigned)port, proto ? "WebSocket (" API_PF_WS_PROTOCOL ")" : "SPDY/3.1");
	out->code = 0; /* the response became the tunnel */
	return true;
}
