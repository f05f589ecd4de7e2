/*
 * kclient.c - the client interface's dispatch and its HTTP(S) implementation over
 * src/http's client.
 *
 * Requests share one kept-alive http_client under a mutex (the controllers make one request
 * at a time; a second thread waits). Each watch opens its own http_client for the length of
 * the stream, because a stream holds its connection; it is freed when the watch returns.
 */
#include "kclient/kclient.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"
#include "http/http.h"
#include "platform/k32_platform.h"

#define KC_MOD "kclient"

k32_status_t kclient_do(struct kclient *c, const char *method, const char *target,
			const char *content_type, const void *body, size_t body_len, int *out_code,
			struct k32_buf *out, struct k32_err *err)
{
	*out_code = 0;
	return c->ops->request(c, method, target, content_type, body, body_len, out_code, out, err);
}

k32_status_t kclient_watch(struct kclient *c, const char *target, kclient_line_fn on_line,
			   void *ctx, struct k32_err *err)
{
	return c->ops->watch(c, target, on_line, ctx, err);
}

const char *kclient_name(const struct kclient *c)
{
	return c->ops->name;
}

void kclient_free(struct kclient *c)
{
	if (c)
		c->ops->free(c);
}

bool kclient_parse_url(const char *url, bool *tls, char *host, size_t cap, uint16_t *port)
{
	const char *p = url;
	if (!p)
		return false;
	if (!strncmp(p, "https://", 8)) {
		*tls = true;
		p += 8;
	} else if (!strncmp(p, "http://", 7)) {
		*tls = false;
		p += 7;
	} else {
		return false;
	}
	const char *colon = strrchr(p, ':');
	if (!colon || colon == p || (size_t)(colon - p) >= cap)
		return false;
	char *end;
	long n = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || (*end && strcmp(end, "/")) || n <= 0 || n > 65535)
		return false;
	memcpy(host, p, (size_t)(colon - p));
	host[colon - p] = 0;
	*port = (uint16_t)n;
	return true;
}

/* ---- HTTP ------------------------------------------------------------------------------ */

struct kc_http {
	struct kclient base;
	struct http_client_config cfg; /* strings below */
	char host[256];
	char ca_file[512];
	char token[256];
	struct k32_mutex lock; /* cli */
	struct http_client *cli;
};

static k32_status_t kc_http_request(struct kclient *base, const char *method, const char *target,
				    const char *ctype, const void *body, size_t body_len,
				    int *out_code, struct k32_buf *out, struct k32_err *err)
{
	struct kc_http *h = (struct kc_http *)base;
	struct http_client_request rq = {.method = method,
					 .target = target,
					 .content_type =
					     body ? (ctype ? ctype : "application/json") : NULL,
					 .headers = "Accept: application/json\r\n",
					 .body = body,
					 .body_len = body_len};
	struct http_client_response resp;
	k32_mutex_lock(&h->lock);
	k32_status_t st = h->cli ? K32_OK : http_client_new(&h->cfg, &h->cli, err);
	if (!st)
		st = http_client_do(h->cli, &rq, &resp, err);
	k32_mutex_unlock(&h->lock);
	if (!st) {
		*out_code = resp.status;
		st = k32_buf_append(out, resp.body.data, resp.body.len, err);
	}
	if (h->cli)
		http_client_response_fini(&resp);
	return st;
}

/* An ERROR event (410 Gone: the revision is compacted) reaches on_line as a line: the
 * caller relists on it, as it does on K32_ERR_COMPACTED from the in-process watch. */
struct kc_http_watch {
	kclient_line_fn fn;
	void *ctx;
};

static k32_status_t kc_http_line(void *arg, const uint8_t *data, size_t len)
{
	struct kc_http_watch *w = arg;
	return w->fn(w->ctx, (const char *)data, data ? len : 0);
}

static k32_status_t kc_http_watch(struct kclient *base, const char *target, kclient_line_fn fn,
				  void *ctx, struct k32_err *err)
{
	struct kc_http *h = (struct kc_http *)base;
	char t[1024];
	int n = snprintf(t, sizeof(t), "%s%cwatch=true&allowWatchBookmarks=true", target,
			 strchr(target, '?') ? '&' : '?');
	if (n < 0 || (size_t)n >= sizeof(t))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KC_MOD,
				   "watch target %.80s...: over %zu bytes", target, sizeof(t) - 40);
	struct http_client *cli = NULL;
	k32_status_t st = http_client_new(&h->cfg, &cli, err);
	if (st)
		return st;
	struct http_client_request rq = {.method = "GET",
					 .target = t,
					 .headers = "Accept: application/json\r\n",
					 .tick_us = (int64_t)K32_KCLIENT_WATCH_TICK_MS * 1000,
					 /* idle timeout: bookmarks come every K32_API_BOOKMARK_S */
					 .timeout_us = (int64_t)K32_KCLIENT_WATCH_IDLE_S * 1000000};
	struct kc_http_watch w = {.fn = fn, .ctx = ctx};
	int code = 0;
	st = http_client_stream(cli, &rq, true, kc_http_line, &w, &code, err);
	http_client_free(cli);
	if (!st && code == 410)
		return k32_err_set(err, K32_ERR_COMPACTED, KC_MOD,
				   "watch %.100s: resourceVersion too old (410): relist", target);
	if (!st && code != 200)
		return k32_err_set(err, K32_ERR_IO, KC_MOD, "watch %.100s: HTTP %d", target, code);
	return st;
}

static void kc_http_free(struct kclient *base)
{
	struct kc_http *h = (struct kc_http *)base;
	http_client_free(h->cli);
	k32_plat()->mutex_fini(&h->lock);
	k32_free(k32_default_allocator(), h, sizeof(*h));
}

static const struct kclient_ops kc_http_ops = {
    .request = kc_http_request, .watch = kc_http_watch, .free = kc_http_free, .name = "http"};

k32_status_t kclient_http_new(const struct kclient_http_config *cfg, struct kclient **out,
			      struct k32_err *err)
{
	*out = NULL;
	bool tls = false;
	uint16_t port = 0;
	char host[256];
	if (!cfg || !kclient_parse_url(cfg->url, &tls, host, sizeof(host), &port))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KC_MOD,
				   "server URL \"%.100s\": expected https://HOST:PORT or "
				   "http://HOST:PORT",
				   cfg && cfg->url ? cfg->url : "");
	if (tls && (!cfg->ca_file || !cfg->ca_file[0]))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KC_MOD,
				   "server %s is https: give its CA file (pki/ca.crt)", cfg->url);
	struct kc_http *h = k32_calloc(k32_default_allocator(), sizeof(*h));
	if (!h)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KC_MOD,
				   "out of memory for a %zu-byte HTTP client", sizeof(*h));
	h->base.ops = &kc_http_ops;
	snprintf(h->host, sizeof(h->host), "%s", host);
	snprintf(h->ca_file, sizeof(h->ca_file), "%s", cfg->ca_file ? cfg->ca_file : "");
	snprintf(h->token, sizeof(h->token), "%s", cfg->bearer_token ? cfg->bearer_token : "");
	http_client_config_init(&h->cfg);
	h->cfg.host = h->host;
	h->cfg.port = port;
	h->cfg.tls = tls;
	h->cfg.ca_file = h->ca_file[0] ? h->ca_file : NULL;
	h->cfg.bearer_token = h->token[0] ? h->token : NULL;
	h->cfg.max_response_bytes = K32_CTRL_RESP_BYTES;
	h->cfg.accept_gzip = true;
	if (cfg->timeout_us > 0)
		h->cfg.timeout_us = cfg->timeout_us;
	k32_plat()->mutex_init(&h->lock);
	*out = &h->base;
	return K32_OK;
}
