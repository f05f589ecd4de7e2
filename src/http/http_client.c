/*
 * http_client.c - a blocking HTTP/1.1 client over the platform sockets, plain or TLS.
 *
 * One connection per client, opened lazily and kept alive between requests. The socket is
 * non-blocking; every wait is a poll on it with the remaining time of the call's deadline,
 * so no call blocks past its timeout. A request on a reused connection that fails before
 * any response byte arrived (the server closed an idle keep-alive connection) is retried
 * once on a new connection: that is safe because the server saw nothing of it.
 *
 * Responses are parsed with the same incremental parser as the server (http_parse.c);
 * bodies are de-chunked into a capped buffer or handed to a callback, raw or as lines.
 * Not supported: HEAD, 1xx interim responses other than being skipped by http-parser,
 * redirects, compression, proxies.
 *
 * Context: one thread at a time per client.
 */
#include "http/http_int.h"

#include <stdio.h>
#include <string.h>

#define CLIENT_MAX_HEAD (64 * 1024) /* response status line + headers */

struct http_client {
	char host[64];
	char server_name[128];
	char *token; /* bearer token copy, or NULL */
	size_t token_len;
	uint16_t port;
	bool tls_on;
	int64_t timeout_us;
	size_t max_response_bytes;
	const struct k32_allocator *alloc;
	struct http_tls_client *tlscfg; /* TLS configuration (CA), when tls_on */
	k32_sock_t sock;		/* K32_SOCK_INVALID when not connected */
	struct http_tls_conn *tls;
	struct k32_buf in; /* raw response bytes */
	bool reused;	   /* the connection already carried a request */
	bool gzip;	   /* cfg.accept_gzip */
};

void http_client_config_init(struct http_client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->timeout_us = (int64_t)K32_HTTP_CLIENT_TIMEOUT_MS * 1000;
	cfg->max_response_bytes = K32_HTTP_MAX_RESPONSE_BYTES;
}

k32_status_t http_client_new(const struct http_client_config *cfg, struct http_client **out,
			     struct k32_err *err)
{
	const struct k32_allocator *a = cfg->alloc ? cfg->alloc : k32_default_allocator();
	struct http_client *c;
	k32_status_t st;

	if (!cfg->host || strlen(cfg->host) >= sizeof(c->host) || cfg->port == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "client needs a host (under 64 bytes) and a port; got %s:%u",
				   cfg->host ? cfg->host : "(null)", cfg->port);
	if (cfg->server_name && strlen(cfg->server_name) >= sizeof(c->server_name))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "server_name longer than %zu bytes", sizeof(c->server_name) - 1);
	c = k32_calloc(a, sizeof(*c));
	if (!c)
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD, "no memory for a client");
	c->alloc = a;
	c->sock = K32_SOCK_INVALID;
	snprintf(c->host, sizeof(c->host), "%s", cfg->host);
	snprintf(c->server_name, sizeof(c->server_name), "%s",
		 cfg->server_name ? cfg->server_name : cfg->host);
	c->port = cfg->port;
	c->tls_on = cfg->tls;
	c->timeout_us =
	    cfg->timeout_us > 0 ? cfg->timeout_us : (int64_t)K32_HTTP_CLIENT_TIMEOUT_MS * 1000;
	c->max_response_bytes =
	    cfg->max_response_bytes ? cfg->max_response_bytes : K32_HTTP_MAX_RESPONSE_BYTES;
	c->gzip = cfg->accept_gzip && K32_HTTP_GZIP; /* without zlib: ask for plain answers */
	k32_buf_init(&c->in, a, CLIENT_MAX_HEAD + 2 * HTTP_READ_CHUNK, "response input");
	if (cfg->bearer_token) {
		c->token_len = strlen(cfg->bearer_token);
		if (strchr(cfg->bearer_token, '\r') || strchr(cfg->bearer_token, '\n')) {
			http_client_free(c);
			return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
					   "bearer token contains CR or LF");
		}
		c->token = k32_alloc(a, c->token_len + 1);
		if (!c->token) {
			http_client_free(c);
			return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
					   "no memory for the bearer token");
		}
		memcpy(c->token, cfg->bearer_token, c->token_len + 1);
	}
	if (cfg->tls) {
		st = http_tls_client_new(cfg->ca_file, a, &c->tlscfg, err);
		if (st != K32_OK) {
			http_client_free(c);
			return st;
		}
	}
	*out = c;
	return K32_OK;
}

static void disconnect(struct http_client *c)
{
	if (c->tls) {
		http_tls_close_notify(c->tls);
		http_tls_conn_free(c->tls);
		c->tls = NULL;
	}
	if (c->sock != K32_SOCK_INVALID)
		k32_plat()->sock_close(c->sock);
	c->sock = K32_SOCK_INVALID;
	c->reused = false;
	k32_buf_fini(&c->in);
	k32_buf_init(&c->in, c->alloc, CLIENT_MAX_HEAD + 2 * HTTP_READ_CHUNK, "response input");
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	disconnect(c);
	k32_buf_fini(&c->in);
	if (c->token)
		k32_free(c->alloc, c->token, c->token_len + 1);
	http_tls_client_free(c->tlscfg);
	k32_free(c->alloc, c, sizeof(*c));
}

/* Waits for events on the socket until deadline. */
static k32_status_t wait_sock(struct http_client *c, uint32_t events, int64_t deadline,
			      const char *what, struct k32_err *err)
{
	struct k32_pollfd p = {c->sock, events, 0};
	int64_t now = (int64_t)k32_now_us();
	size_t ready = 0;
	k32_status_t st;

	if (now >= deadline)
		goto timed_out;
	st = k32_plat()->poll(&p, 1, deadline - now, &ready);
	if (st != K32_OK)
		return k32_err_set(err, st, HTTP_MOD, "poll failed while %s", what);
	if (ready > 0)
		return K32_OK;
timed_out:
	return k32_err_set(err, K32_ERR_TIMED_OUT, HTTP_MOD,
			   "timed out %s %s:%u; raise the timeout or check the server", what,
			   c->host, c->port);
}

static k32_status_t connect_now(struct http_client *c, int64_t deadline, struct k32_err *err)
{
	int64_t left = deadline - (int64_t)k32_now_us();
	k32_status_t st;

	if (left <= 0)
		return k32_err_set(err, K32_ERR_TIMED_OUT, HTTP_MOD,
				   "timed out before connecting to %s:%u", c->host, c->port);
	st = k32_plat()->tcp_connect(c->host, c->port, left, &c->sock, err);
	if (st != K32_OK)
		return st;
	st = k32_plat()->sock_set_nonblock(c->sock, true);
	if (st == K32_OK && c->tls_on)
		st = http_tls_conn_new_client(c->tlscfg, c->sock, c->server_name, &c->tls, err);
	while (st == K32_OK && c->tls) {
		uint32_t want = 0;

		st = http_tls_handshake(c->tls, &want, err);
		if (st == K32_OK)
			break;
		if (st != K32_ERR_SHOULD_WAIT)
			break;
		st = wait_sock(c, want, deadline, "in the TLS handshake with", err);
	}
	if (st != K32_OK)
		disconnect(c);
	return st;
}

static k32_status_t send_all(struct http_client *c, const void *data, size_t len, int64_t deadline,
			     struct k32_err *err)
{
	const uint8_t *p = data;

	while (len > 0) {
		size_t n = 0, chunk = len;
		uint32_t want = K32_POLL_OUT;
		k32_status_t st;

		if (c->tls) {
			if (chunk > 16384)
				chunk = 16384;
			for (;;) {
				st = http_tls_write(c->tls, p, chunk, &n, &want, err);
				if (st != K32_ERR_SHOULD_WAIT)
					break;
				st = wait_sock(c, want, deadline, "sending to", err);
				if (st != K32_OK)
					return st;
			}
		} else {
			st = k32_plat()->sock_send(c->sock, p, chunk, &n);
			if (st == K32_ERR_SHOULD_WAIT) {
				st = wait_sock(c, K32_POLL_OUT, deadline, "sending to", err);
				if (st != K32_OK)
					return st;
				continue;
			}
		}
		if (st != K32_OK)
			return k32_err_set(err, st, HTTP_MOD, "send to %s:%u failed (%s)", c->host,
					   c->port, k32_status_name(st));
		p += n;
		len -= n;
	}
	return K32_OK;
}

/* Reads some bytes into c->in. PEER_CLOSED at end of stream. */
static k32_status_t recv_some(struct http_client *c, int64_t deadline, struct k32_err *err)
{
	for (;;) {
		size_t n = 0;
		uint32_t want = K32_POLL_IN;
		k32_status_t st = k32_buf_reserve(&c->in, HTTP_READ_CHUNK, NULL);

		if (st != K32_OK)
			return k32_err_set(err, K32_ERR_NO_RESOURCES, HTTP_MOD,
					   "response head from %s:%u over %d bytes", c->host,
					   c->port, CLIENT_MAX_HEAD);
		if (c->tls)
			st = http_tls_read(c->tls, c->in.data + c->in.len, HTTP_READ_CHUNK, &n,
					   &want, NULL);
		else
			st = k32_plat()->sock_recv(c->sock, c->in.data + c->in.len, HTTP_READ_CHUNK,
						   &n);
		if (st == K32_OK) {
			c->in.len += n;
			c->in.data[c->in.len] = 0;
			return K32_OK;
		}
		if (st != K32_ERR_SHOULD_WAIT)
			return st == K32_ERR_PEER_CLOSED
				   ? K32_ERR_PEER_CLOSED
				   : k32_err_set(err, st, HTTP_MOD,
						 "receive from %s:%u failed (%s)", c->host, c->port,
						 k32_status_name(st));
		st = wait_sock(c, want, deadline, "waiting for the response from", err);
		if (st != K32_OK)
			return st;
	}
}

static k32_status_t send_request(struct http_client *c, const struct http_client_request *req,
				 bool gzip, int64_t deadline, struct k32_err *err)
{
	struct k32_buf head;
	k32_status_t st;

	if (!req->method || !req->target || req->target[0] != '/' ||
	    strpbrk(req->target, " \r\n") || strpbrk(req->method, " \r\n"))
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, HTTP_MOD,
		    "bad request line: method and a target starting with '/' without spaces");
	k32_buf_init(&head, c->alloc, 64 * 1024, "request head");
	st = k32_buf_printf(&head, err, "%s %s HTTP/1.1\r\nHost: %s:%u\r\nUser-Agent: kube32\r\n",
			    req->method, req->target, c->host, c->port);
	if (st == K32_OK && c->token)
		st = k32_buf_printf(&head, err, "Authorization: Bearer %s\r\n", c->token);
	if (st == K32_OK && req->content_type)
		st = k32_buf_printf(&head, err, "Content-Type: %s\r\n", req->content_type);
	if (st == K32_OK && (req->body_len > 0 || strcmp(req->method, "GET") != 0))
		st = k32_buf_printf(&head, err, "Content-Length: %zu\r\n", req->body_len);
	if (st == K32_OK && gzip)
		st = k32_buf_append_str(&head, "Accept-Encoding: gzip\r\n", err);
	if (st == K32_OK && req->headers)
		st = k32_buf_append_str(&head, req->headers, err);
	if (st == K32_OK)
		st = k32_buf_append(&head, "\r\n", 2, err);
	if (st == K32_OK)
		st = send_all(c, head.data, head.len, deadline, err);
	if (st == K32_OK && req->body_len > 0)
		st = send_all(c, req->body, req->body_len, deadline, err);
	k32_buf_fini(&head);
	return st;
}

/* State of one response read. */
struct reader {
	struct http_client *c;
	struct http_msgp mp;
	bool lines;
	http_client_data_fn on_data;
	void *ctx;
	struct k32_buf line; /* partial line in lines mode */
	bool gzip;	     /* ask for Content-Encoding: gzip (whole responses only) */
	/* on_data asked to stop with this status: later pieces are dropped while the bytes
	 * already received are parsed, so a response that was complete anyway (a watch's one
	 * ERROR line, answered with a Content-Length) leaves the connection usable */
	k32_status_t stopped;
	bool kept; /* stopped, but the response was whole: the connection stays */
};

static k32_status_t deliver(void *ctx, const uint8_t *data, size_t len)
{
	struct reader *r = ctx;

	if (r->stopped)
		return K32_OK;
	if (!r->lines) {
		r->stopped = r->on_data(r->ctx, data, len);
		return K32_OK;
	}
	while (len > 0) {
		const uint8_t *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len;
		k32_status_t st = k32_buf_append(&r->line, data, take, NULL);

		if (st != K32_OK)
			return K32_ERR_NO_RESOURCES;
		if (!nl)
			break;
		if (r->line.len > 0 && r->line.data[r->line.len - 1] == '\r')
			r->line.len--;
		st = r->on_data(r->ctx, r->line.data ? r->line.data : (const uint8_t *)"",
				r->line.len);
		k32_buf_reset(&r->line);
		if (st != K32_OK) {
			r->stopped = st;
			return K32_OK;
		}
		data += take + 1;
		len -= take + 1;
	}
	return K32_OK;
}

/*
 * Sends req and reads its response. body: whole-body buffer, or NULL for streaming through
 * r. *out_got_bytes tells whether any response byte arrived (for the retry decision).
 */
static k32_status_t exchange(struct http_client *c, const struct http_client_request *req,
			     struct reader *r, struct k32_buf *body, struct k32_buf *headers,
			     int *out_status, bool idle_timeout, bool *out_got_bytes,
			     struct k32_err *err)
{
	int64_t tmo = req->timeout_us > 0 ? req->timeout_us : c->timeout_us;
	int64_t deadline = (int64_t)k32_now_us() + tmo;
	bool status_told = false;
	k32_status_t st;

	*out_got_bytes = false;
	if (c->sock == K32_SOCK_INVALID) {
		st = connect_now(c, deadline, err);
		if (st != K32_OK)
			return st;
	}
	st = send_request(c, req, r->gzip, deadline, err);
	if (st != K32_OK)
		return st;
	k32_buf_reset(&c->in);
	http_msgp_init(&r->mp, HTTP_RESPONSE, &c->in, CLIENT_MAX_HEAD,
		       body ? c->max_response_bytes : SIZE_MAX, body);
	if (!body) {
		r->mp.on_data = deliver;
		r->mp.data_ctx = r;
	}
	for (;;) {
		int64_t until = deadline;

		if (!body && req->tick_us > 0 && (int64_t)k32_now_us() + req->tick_us < deadline)
			until = (int64_t)k32_now_us() + req->tick_us;
		st = recv_some(c, until, err);
		if (st == K32_ERR_TIMED_OUT && until < deadline) {
			/* A quiet spell in a stream: let the caller stop it. */
			k32_err_clear(err);
			st = r->on_data(r->ctx, NULL, 0);
			if (st != K32_OK)
				return st;
			continue;
		}
		if (st == K32_ERR_PEER_CLOSED) {
			if (c->in.len == 0 && !r->mp.begun)
				return k32_err_set(err, K32_ERR_PEER_CLOSED, HTTP_MOD,
						   "%s:%u closed the connection without answering",
						   c->host, c->port);
			st = http_msgp_eof(&r->mp, err);
			disconnect(c);
			if (st != K32_OK)
				return st;
			break;
		}
		if (st != K32_OK)
			return st;
		*out_got_bytes = true;
		if (idle_timeout)
			deadline = (int64_t)k32_now_us() + tmo;
		st = http_msgp_feed(&r->mp, err);
		if (st != K32_OK) {
			if (r->mp.error_status == 413)
				return k32_err_set(
				    err, K32_ERR_NO_RESOURCES, HTTP_MOD,
				    "response body from %s:%u over %zu bytes (max_response_bytes)",
				    c->host, c->port, c->max_response_bytes);
			if (r->mp.error_status)
				return k32_err_set(err, K32_ERR_CORRUPT, HTTP_MOD,
						   "response from %s:%u does not parse: %s",
						   c->host, c->port, err ? err->msg : "");
			return st;
		}
		if (r->mp.headers_done && !status_told) {
			status_told = true;
			if (out_status)
				*out_status = (int)r->mp.p.status_code;
			if (headers) {
				for (uint32_t i = 0; i < r->mp.header_count; i++) {
					const struct http_hdr_off *h = &r->mp.hdr[i];
					struct k32_str n =
					    http_msgp_str(&r->mp, h->name_off, h->name_len);
					struct k32_str v = k32_str_trim(
					    http_msgp_str(&r->mp, h->val_off, h->val_len));

					k32_buf_printf(headers, NULL, "%.*s: %.*s\r\n", (int)n.len,
						       n.p, (int)v.len, v.p);
				}
			}
		}
		if (r->mp.complete)
			break;
		if (r->stopped)
			return r->stopped; /* mid-response: run() drops the connection */
	}
	if (out_status)
		*out_status = (int)r->mp.p.status_code;
	if (r->lines && r->line.len > 0 && !r->stopped) {
		r->stopped = r->on_data(r->ctx, r->line.data, r->line.len);
		k32_buf_reset(&r->line);
	}
	if (c->sock != K32_SOCK_INVALID) {
		if (!http_should_keep_alive(&r->mp.p))
			disconnect(c);
		else
			c->reused = true;
	}
	r->kept = r->stopped != K32_OK;
	return r->stopped;
}

static k32_status_t run(struct http_client *c, const struct http_client_request *req,
			struct reader *r, struct k32_buf *body, struct k32_buf *headers,
			int *out_status, bool idle_timeout, struct k32_err *err)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		bool was_reused = c->reused && c->sock != K32_SOCK_INVALID;
		bool got = false;
		k32_status_t st =
		    exchange(c, req, r, body, headers, out_status, idle_timeout, &got, err);

		if (st == K32_OK || (r && r->kept))
			return st;
		disconnect(c);
		if (!was_reused || got || st == K32_ERR_TIMED_OUT)
			return st;
		/* The server dropped the idle connection: retry once on a fresh one. */
		if (body)
			k32_buf_reset(body);
		if (headers)
			k32_buf_reset(headers);
	}
	return K32_ERR_INTERNAL;
}

k32_status_t http_client_do(struct http_client *c, const struct http_client_request *req,
			    struct http_client_response *out, struct k32_err *err)
{
	struct reader r;

	memset(&r, 0, sizeof(r));
	r.c = c;
	out->status = 0;
	k32_buf_init(&out->headers, c->alloc, CLIENT_MAX_HEAD, "response headers");
	k32_buf_init(&out->body, c->alloc, c->max_response_bytes, "response body");
	r.gzip = c->gzip;
	k32_status_t st = run(c, req, &r, &out->body, &out->headers, &out->status, false, err);
	struct k32_str ce;
	if (st == K32_OK && r.gzip && http_client_response_header(out, "Content-Encoding", &ce) &&
	    http_str_ieq(ce, "gzip")) {
		/* inflated here, as Go's transport does when it asked for gzip itself */
		struct k32_buf plain;
		k32_buf_init(&plain, c->alloc, c->max_response_bytes, "response body");
		st = http_gunzip(out->body.data, out->body.len, &plain, err);
		k32_buf_fini(&out->body);
		out->body = plain;
	}
	return st;
}

bool http_client_response_header(const struct http_client_response *resp, const char *name,
				 struct k32_str *out_value)
{
	struct k32_str rest = {(const char *)resp->headers.data, resp->headers.len};

	while (rest.len > 0) {
		struct k32_str line, tail, n, v;

		if (!k32_str_cut(rest, '\n', &line, &tail))
			tail.len = 0;
		rest = tail;
		if (line.len > 0 && line.p[line.len - 1] == '\r')
			line.len--;
		if (k32_str_cut(line, ':', &n, &v) && http_str_ieq(n, name)) {
			if (out_value)
				*out_value = k32_str_trim(v);
			return true;
		}
	}
	return false;
}

void http_client_response_fini(struct http_client_response *resp)
{
	k32_buf_fini(&resp->headers);
	k32_buf_fini(&resp->body);
}

k32_status_t http_client_stream(struct http_client *c, const struct http_client_request *req,
				bool lines, http_client_data_fn on_data, void *ctx, int *out_status,
				struct k32_err *err)
{
	struct reader r;
	k32_status_t st;

	if (!on_data)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD, "stream needs on_data");
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.lines = lines;
	r.on_data = on_data;
	r.ctx = ctx;
	k32_buf_init(&r.line, c->alloc, K32_HTTP_CLIENT_MAX_LINE, "stream line");
	st = run(c, req, &r, NULL, NULL, out_status, true, err);
	k32_buf_fini(&r.line);
	return st;
}
