/*
 * kclient.c - the client interface's dispatch and its HTTP(S) implementation over
 * src/http's client.
 *
 * Requests share one kept-alive http_client under a mutex (the controllers make one request
 * at a time; a second thread waits). A watch holds its own http_client for the length of
 * the stream, because a stream holds its connection. A watch that ended cleanly (the server
 * closed it at timeoutSeconds) parks its client, connection open, for the next watch: a
 * kubelet that re-watches every few seconds keeps one watch connection (no new TCP and TLS
 * handshake, no allocation per watch); a failed one is freed.
 */
#include "kclient/kclient.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"
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

k32_status_t kclient_call(struct kclient *c, const char *method, const char *target,
			  const char *content_type, const char *body, int *out_code,
			  struct k32_buf *out, struct k32_err *err)
{
	k32_buf_reset(out);
	return kclient_do(c, method, target, content_type, body, body ? strlen(body) : 0, out_code,
			  out, err);
}

k32_status_t kclient_answer_err(struct k32_err *err, const char *mod, const char *what, int code,
				const struct k32_buf *answer)
{
	/* "WHAT: API server answered NNN: " and the server's message, whole or clipped in its
	 * middle (k32_clip_to) to what the error holds */
	char m[K32_ERR_MSG_LEN - 80];
	cJSON *j = NULL;
	const char *msg = NULL;
	if (answer && answer->len &&
	    !k32_json_parse((const char *)answer->data, answer->len, &j, NULL))
		msg = cJSON_GetStringValue(cJSON_GetObjectItem(j, "message"));
	if (msg)
		k32_clip_to(m, sizeof(m), msg);
	else /* not a Status: its first bytes */
		snprintf(m, sizeof(m), "%.*s",
			 (int)(answer && answer->len < sizeof(m) ? answer->len : sizeof(m) - 1),
			 answer && answer->data ? (const char *)answer->data : "");
	cJSON_Delete(j);
	k32_status_t st = code == 401 || code == 403 ? K32_ERR_ACCESS_DENIED
			  : code == 404		     ? K32_ERR_NOT_FOUND
			  : code == 409		     ? K32_ERR_CONFLICT
			  : code == 410		     ? K32_ERR_COMPACTED
						     : K32_ERR_IO;
	return k32_err_set(err, st, mod, "%s: API server answered %d: %s", what, code, m);
}

void kclient_backoff_init(struct kclient_backoff *b, uint32_t min_ms, uint32_t max_ms)
{
	b->min_ms = min_ms ? min_ms : 1;
	b->max_ms = max_ms < b->min_ms ? b->min_ms : max_ms;
	b->next_ms = b->min_ms;
}

uint32_t kclient_backoff_next(struct kclient_backoff *b)
{
	uint32_t pause = b->next_ms, r = 0;
	if (pause / 2 && !k32_plat()->random(&r, sizeof(r)))
		pause -= r % (pause / 2 + 1);
	b->next_ms = b->next_ms > b->max_ms / 2 ? b->max_ms : b->next_ms * 2;
	return pause;
}

void kclient_backoff_reset(struct kclient_backoff *b)
{
	b->next_ms = b->min_ms;
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
	uint32_t watch_idle_s;
	const struct k32_allocator *alloc; /* this struct's (cfg.alloc: its clients') */
	struct k32_mutex lock;		   /* cli, parked */
	struct http_client *cli;
	struct http_client *parked; /* a finished watch's client, its connection kept */
	_Atomic uint32_t failures;  /* requests that got no answer (kclient_failures) */
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
	} else {
		h->failures++;
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
	k32_mutex_lock(&h->lock);
	struct http_client *cli = h->parked;
	h->parked = NULL;
	k32_mutex_unlock(&h->lock);
	k32_status_t st = cli ? K32_OK : http_client_new(&h->cfg, &cli, err);
	if (st)
		return st;
	struct http_client_request rq = {.method = "GET",
					 .target = t,
					 .headers = "Accept: application/json\r\n",
					 .tick_us = (int64_t)K32_KCLIENT_WATCH_TICK_MS * 1000,
					 /* idle timeout: bookmarks come every K32_API_BOOKMARK_S */
					 .timeout_us = (int64_t)h->watch_idle_s * 1000000};
	struct kc_http_watch w = {.fn = fn, .ctx = ctx};
	int code = 0;
	st = http_client_stream(cli, &rq, true, kc_http_line, &w, &code, err);
	if (!st && code == 200) {
		/* ended cleanly: its connection stays open for the next watch */
		k32_mutex_lock(&h->lock);
		if (!h->parked) {
			h->parked = cli;
			cli = NULL;
		}
		k32_mutex_unlock(&h->lock);
	}
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
	http_client_free(h->parked);
	k32_plat()->mutex_fini(&h->lock);
	k32_free(h->alloc, h, sizeof(*h));
}

static const struct kclient_ops kc_http_ops = {
    .request = kc_http_request, .watch = kc_http_watch, .free = kc_http_free, .name = "http"};

uint32_t kclient_failures(const struct kclient *c)
{
	return c && c->ops == &kc_http_ops ? ((const struct kc_http *)c)->failures : 0;
}

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
	const struct k32_allocator *alloc = cfg->alloc ? cfg->alloc : k32_default_allocator();
	struct kc_http *h = k32_calloc(alloc, sizeof(*h));
	if (!h)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KC_MOD,
				   "out of memory for a %zu-byte HTTP client", sizeof(*h));
	h->base.ops = &kc_http_ops;
	h->alloc = alloc;
	snprintf(h->host, sizeof(h->host), "%s", host);
	snprintf(h->ca_file, sizeof(h->ca_file), "%s", cfg->ca_file ? cfg->ca_file : "");
	snprintf(h->token, sizeof(h->token), "%s", cfg->bearer_token ? cfg->bearer_token : "");
	http_client_config_init(&h->cfg);
	h->cfg.host = h->host;
	h->cfg.port = port;
	h->cfg.tls = tls;
	h->cfg.ca_file = h->ca_file[0] ? h->ca_file : NULL;
	h->cfg.bearer_token = h->token[0] ? h->token : NULL;
	h->cfg.max_response_bytes =
	    cfg->max_response_bytes ? cfg->max_response_bytes : K32_CTRL_RESP_BYTES;
	h->cfg.accept_gzip = !cfg->no_gzip;
	h->cfg.alloc = alloc;
	h->watch_idle_s = cfg->watch_idle_s ? cfg->watch_idle_s : K32_KCLIENT_WATCH_IDLE_S;
	if (cfg->timeout_us > 0)
		h->cfg.timeout_us = cfg->timeout_us;
	k32_plat()->mutex_init(&h->lock);
	*out = &h->base;
	return K32_OK;
}
