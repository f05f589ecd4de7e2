/*
 * kclient.h - the Kubernetes client interface: how a controller (or any API client inside
 * kube32) reads, writes and watches objects, whether the API server runs in the same
 * process or on another board.
 *
 * Two implementations, one contract:
 *   - in-process (kclient_inproc_new, library k32_kclient_api): over the API server's own
 *     request and watch entry points (api_do_as, api_watch_open), so every request passes
 *     authentication, authorization, validation and admission exactly as over HTTP, without
 *     a socket.
 *   - HTTP(S) (kclient_http_new, library k32_kclient): over src/http's client, one kept-
 *     alive connection for requests and one connection per running watch (a watch that
 *     ended cleanly leaves its connection for the next one); what the kubelet and
 *     `kube32-server --controllers-only` use against the API server.
 * Callers depend only on this header, so src/ctrl links no api and no store.
 *
 * Requests: kclient_do sends method/target/body and appends the JSON answer to out, with the
 * HTTP status in *out_code: K32_OK whenever the server answered (check the code); an error
 * status only when no answer came (connection, timeout, out of memory).
 *
 * Watches: kclient_watch streams GET target (a collection path; "watch=true" is added) as
 * one JSON line {"type":...,"object":...} per event to on_line, and calls on_line(ctx, NULL,
 * 0) after every K32_KCLIENT_WATCH_TICK_MS of silence so the caller can stop it from its
 * own thread by returning anything but K32_OK. It returns when the stream ends (K32_OK: the
 * server closed it, reconnect from the last resourceVersion), when the server says the
 * revision is too old (K32_ERR_COMPACTED: relist), or with on_line's status.
 *
 * Failures: kclient_answer_err turns an answer that is not what the caller wanted into an
 * error (the status the HTTP code means, the Status message kept whole or clipped in its
 * middle); kclient_backoff paces the retries of a caller that lost the server.
 *
 * Context: kclient_do is thread-safe (requests of several threads are serialised on one
 * connection in the HTTP client); each kclient_watch runs on its caller's thread, several
 * at once. kclient_free after every watch returned.
 */
#ifndef KCLIENT_H
#define KCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_buf.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

struct kclient;

/* One watch event line (no '\n'), or (NULL, 0) for a quiet tick. Non-OK stops the watch. */
typedef k32_status_t (*kclient_line_fn)(void *ctx, const char *line, size_t len);

/* What an implementation provides (the first member of its struct kclient). */
struct kclient_ops {
	k32_status_t (*request)(struct kclient *c, const char *method, const char *target,
				const char *content_type, const void *body, size_t body_len,
				int *out_code, struct k32_buf *out, struct k32_err *err);
	k32_status_t (*watch)(struct kclient *c, const char *target, kclient_line_fn on_line,
			      void *ctx, struct k32_err *err);
	void (*free)(struct kclient *c);
	const char *name; /* "in-process", "http" (logs) */
};

struct kclient {
	const struct kclient_ops *ops;
};

/* See the header comment. body may be NULL (body_len 0); content_type NULL: JSON. */
k32_status_t kclient_do(struct kclient *c, const char *method, const char *target,
			const char *content_type, const void *body, size_t body_len, int *out_code,
			struct k32_buf *out, struct k32_err *err);

/* kclient_do with a NUL-terminated body (NULL: none) into out emptied first: the form of
 * most callers, which build their body as a string and reuse one answer buffer. */
k32_status_t kclient_call(struct kclient *c, const char *method, const char *target,
			  const char *content_type, const char *body, int *out_code,
			  struct k32_buf *out, struct k32_err *err);

/* See the header comment. target: "/api/v1/pods?resourceVersion=12" (no watch=true). */
k32_status_t kclient_watch(struct kclient *c, const char *target, kclient_line_fn on_line,
			   void *ctx, struct k32_err *err);

/* Requests of an HTTP client that got no answer (an error status) since it was made; 0 for
 * the in-process client (its requests cannot get lost). */
uint32_t kclient_failures(const struct kclient *c);

/*
 * The error for an answer the caller did not want: err gets "WHAT: API server answered
 * CODE: MESSAGE" (MESSAGE: the Status body's message, or the body's first bytes, clipped in
 * its middle so the server's advice at its end stays) under module mod. Returns the status
 * the code means: 401/403 K32_ERR_ACCESS_DENIED, 404 K32_ERR_NOT_FOUND, 409
 * K32_ERR_CONFLICT, 410 K32_ERR_COMPACTED, anything else K32_ERR_IO.
 */
k32_status_t kclient_answer_err(struct k32_err *err, const char *mod, const char *what, int code,
				const struct k32_buf *answer);

/* Retry pauses after failures: min_ms, doubling up to max_ms, each cut by a random share of
 * up to half, so clients that lost the server together do not come back in step. */
struct kclient_backoff {
	uint32_t min_ms, max_ms;
	uint32_t next_ms; /* the next pause before its cut */
};
void kclient_backoff_init(struct kclient_backoff *b, uint32_t min_ms, uint32_t max_ms);
/* The pause to take before the next try (in [next/2, next]); doubles the next one. */
uint32_t kclient_backoff_next(struct kclient_backoff *b);
/* After a success: the next failure waits min_ms again. */
void kclient_backoff_reset(struct kclient_backoff *b);

/* "in-process" or "http". */
const char *kclient_name(const struct kclient *c);

/* Frees the client (NULL is ignored). */
void kclient_free(struct kclient *c);

/* ---- over HTTP(S) ----------------------------------------------------------------------- */

struct kclient_http_config {
	const char *url;	   /* "https://HOST:PORT" or "http://HOST:PORT" (required) */
	const char *ca_file;	   /* PEM CA of the server (required for https) */
	const char *bearer_token;  /* controllers: the admin's; a board: its node's; NULL: none */
	int64_t timeout_us;	   /* per request; 0: K32_HTTP_CLIENT_TIMEOUT_MS */
	size_t max_response_bytes; /* cap on one answer; 0: K32_CTRL_RESP_BYTES */
	/* seconds a watch may stay silent before the connection is dropped (the caller sets
	 * timeoutSeconds below it); 0: K32_KCLIENT_WATCH_IDLE_S */
	uint32_t watch_idle_s;
	/* do not ask for gzip answers (the kubelet: inflating costs a board RAM it has not) */
	bool no_gzip;
	/* the client and its connections' buffers (a board: its node heap); NULL: the default
	 * heap. Thread-safe. */
	const struct k32_allocator *alloc;
};

/*
 * Parses cfg->url and makes a client (connects lazily on the first request).
 * @retval K32_ERR_INVALID_ARGS url malformed (err says what was expected) or https without
 *                              ca_file
 * @retval K32_ERR_NO_MEMORY
 */
k32_status_t kclient_http_new(const struct kclient_http_config *cfg, struct kclient **out,
			      struct k32_err *err);

/* "https://h:p" -> tls, host (cap bytes), port. False when malformed. */
bool kclient_parse_url(const char *url, bool *tls, char *host, size_t cap, uint16_t *port);

/* ---- in-process (library k32_kclient_api, which links src/api) -------------------------- */

struct api_server;

/*
 * A client of api in this process, as the identity of token (NULL: the admin). api is not
 * owned and must outlive the client.
 */
k32_status_t kclient_inproc_new(struct api_server *api, const char *token, struct kclient **out,
				struct k32_err *err);

#endif /* KCLIENT_H */
