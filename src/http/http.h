/*
 * http.h - a small HTTP/1.1 server and client over the platform sockets, with TLS.
 *
 * SERVER. One event-loop task per server (Redis's ae model): poll() over the listener, a
 * wake socket and every connection, all non-blocking. Requests are parsed with Debian's
 * http-parser; a complete request is handed to the handler ON THE LOOP TASK (unless
 * handler_threads is set, below), which fills a struct http_response (status, headers, body)
 * and returns. Handlers must therefore not
 * block for long (a store write with its fsync is fine; waiting for an event is not: use a
 * stream). A slow or half-open client costs only its connection slot: nothing ever blocks
 * on its socket, and it is closed when a timeout expires:
 *   header_timeout_us  first byte of a request to the end of its headers (slow-loris),
 *   body_timeout_us    end of headers to the end of the body,
 *   write_timeout_us   a response (not a stream) makes no write progress for this long,
 *   idle_timeout_us    keep-alive connection with no request in progress.
 * Keep-alive is the default for HTTP/1.1 (and for 1.0 with "Connection: keep-alive").
 * Pipelining works: requests are answered one after the other, in order; bytes of the
 * next request wait in the connection's input buffer while the current one is answered.
 *
 * Limits (each named in k32_config.h, overridable per server in struct http_server_config):
 *   - request line + headers over max_header_bytes, or more than K32_HTTP_MAX_HEADERS
 *     header lines: 431, connection closed;
 *   - body (Content-Length or chunked, after de-chunking) over max_body_bytes: 413,
 *     connection closed (a declared Content-Length is refused before the body is read);
 *   - a syntax error (http-parser error): 400, connection closed;
 *   - connections: see ADMISSION;
 *   - a response body over max_response_bytes: the handler's append fails (k32_buf cap).
 *
 * ADMISSION. Who gets a connection slot, a TLS session and buffers. A connection is
 * unauthenticated from accept until one of its requests passes cfg.authenticate with an
 * identity (req->identity set; without the hook, every request counts as authenticated).
 *   - an unauthenticated connection is closed after its first answer (a 401 closes);
 *   - deadlines: the TLS handshake must end within handshake_timeout_us of accept, and the
 *     first request's head within first_request_timeout_us of the handshake (or accept);
 *   - at most max_unauth_per_addr unauthenticated connections per client address, and
 *     max_conns less reserved_auth_pct percent in all: past either, a new client closes the oldest
 *     unauthenticated connection (of its address first), so a flood of idle or half-open
 *     connections delays a real client by one accept, never locks it out, and an
 *     authenticated client always finds room;
 *   - at most max_conns_per_addr connections per address, authenticated or not;
 *   - TLS memory: a connection gets its TLS session (two record buffers, ~27 KiB) only when
 *     its first byte arrives and fewer than max_handshakes are handshaking (else it waits,
 *     unpolled, within its handshake deadline); idle sessions park their buffers (tls_park);
 *   - a client refused (its address at max_conns_per_addr, or nothing to evict) is told why:
 *     over TLS a 503 after the handshake when a slot is free, else a fatal TLS alert; over
 *     plain HTTP a 503. Never plain text inside a TLS handshake.
 * Counters in struct http_server_stats (conns_evicted, conns_refused, handshakes, ...).
 *
 * HANDLER THREADS. With cfg.handler_threads = N > 0, complete requests go to a queue served
 * by N handler tasks instead of running on the loop: handler and authenticate then run
 * concurrently on those tasks (they must be thread-safe), so a slow handler (an fsync)
 * holds up only its own connection and two cores can serve requests. The handler task also
 * sends the answer (encrypting it, over TLS) as far as the socket takes it, so a big list
 * over HTTPS does not queue behind the loop, and runs the steps of TLS handshakes (~5 ms of
 * ECDHE and ECDSA each on this machine), so a connecting client stalls no other. The loop
 * keeps the rest of the socket I/O, parsing, error answers and every stream callback (pull,
 * close). mbedTLS is then used from several tasks, each session by one at a time; the
 * shared configuration's CTR-DRBG locks itself (Debian builds MBEDTLS_THREADING_C). 0 (the
 * default) keeps everything on the loop task, with no locking needed in the handler.
 *
 * STREAMS (watch, logs -f). A handler may turn its response into a chunked stream with
 * http_response_stream(): the server sends the status and headers with
 * "Transfer-Encoding: chunked", then calls ops->pull on the loop task whenever there is
 * something to do (the producer woke it with http_server_stream_wake() from any thread, the
 * connection drained its output, or the stream's timer expired). pull writes chunks with
 * http_stream_write() and returns K32_OK to stay open, or any other status to end the
 * stream (the server flushes, sends the terminating chunk and goes on with keep-alive).
 * ops->close is called exactly once, on the loop task, when the stream ends for any reason
 * (pull ended it, the client went away or timed out writing, the server stops); after that
 * the stream id is dead and wakes with it are ignored, so a producer that races with the
 * close is harmless. No thread per stream: a stream is a connection slot plus an output
 * buffer that exists only while data waits to be sent.
 *
 * MEMORY. Fixed at start: ~3.9 KiB of server state plus 36 bytes per max_conns (slot 16,
 * poll entry 12, connection pointer 8). Per connection: one struct of 296 bytes (measured
 * on x86-64) while idle or while a stream is quiet: the input buffer, parse state and output
 * buffers are allocated only while a request is being read or a response or chunk is
 * being written, and freed after (http_test measures 500 open streams at 296 bytes each).
 * While reading a request: + input buffer (up to max_header_bytes + 8 KiB) + ~1.2 KiB parse
 * state + the body. A TLS connection adds mbedTLS's session: two record buffers of ~16.6 KiB
 * (MBEDTLS_SSL_IN/OUT_BUFFER_LEN; Debian's mbedTLS 2.28 has no
 * MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH) plus ~1.4 KiB of context, keys and cipher state. With
 * cfg.tls_park (default) an idle session (between requests, a quiet stream) frees the two
 * buffers and gets them back for its next record (http_int.h, parking), so a quiet watch
 * over TLS costs ~2.5 KiB in all: tests/e2e/bench_api.py --tls measures 500 HTTPS watches
 * at +1.25 MiB RSS (+12 MiB without parking, +0.6 MiB over plain HTTP). What parking cannot
 * shed: mbedTLS 2.28's context serialization (mbedtls_ssl_context_save) is DTLS-only,
 * MBEDTLS_PLATFORM_MEMORY is off (no allocator hook), and the max_fragment_length extension
 * only shrinks records when the client asks (Go's crypto/tls, kubectl's, never does). On a
 * board, ESP-IDF's mbedTLS (CONFIG_MBEDTLS_DYNAMIC_BUFFER, CONFIG_MBEDTLS_SSL_IN/
 * OUT_CONTENT_LEN) frees and sizes the buffers itself; parking then compiles out.
 * Everything comes from the server's allocator except mbedTLS's own allocations, which use
 * the C library.
 *
 * TLS. With cfg.tls the server, on first start, creates <data_dir>/pki/ with a self-signed
 * CA (ECDSA P-256, ca.crt / ca.key) and a serving certificate signed by it (server.crt /
 * server.key, SAN 127.0.0.1, localhost and cfg.tls_names), and reuses them on later starts
 * (a serving certificate whose SAN list lacks a configured name is re-issued from the same
 * CA). TLS 1.2 (Debian's mbedTLS 2.28 has no 1.3). http_server_ca_file() gives the CA path
 * for a kubeconfig's certificate-authority(-data).
 *
 * AUTH. The server extracts "Authorization: Bearer <token>" into req->bearer_token (empty
 * when absent or another scheme). An optional cfg.authenticate callback runs before the
 * handler; it may set req->identity, or fill the response (e.g. a 401 Status) and return
 * false to skip the handler.
 *
 * CLIENT. Blocking, one connection per struct http_client, reused with keep-alive and
 * re-opened transparently when the server closed it between requests. Plain or TLS
 * (verifying the server against a CA file). Every call has a timeout. Whole responses
 * (Content-Length, chunked or until close) into a capped buffer, or streamed to a callback
 * chunk by chunk or line by line, with an optional tick while a stream is quiet. Whole
 * responses may come gzip-compressed (cfg.accept_gzip). No HEAD, redirects or proxies.
 *
 * GZIP. A whole answer (not a stream) with a 2xx status and cfg.gzip_min_bytes or more, to a
 * request whose Accept-Encoding takes gzip (kubectl's does), is sent with
 * "Content-Encoding: gzip" (and "Vary: Accept-Encoding"), compressed on the task that ran
 * the handler, in the bounded memory of http_gzip() below. A handler that sets its own
 * Content-Encoding header (e.g. serving a body it compressed and cached) is left alone.
 * Compressing costs CPU too (~4 us per KiB at level 1 here, a little more than mbedTLS's
 * encryption of the same bytes): it pays on a slow link, or with a cached compressed body.
 *
 * Context: http_server_start/stop from any one thread; http_server_stream_wake from any
 * thread; handler and authenticate on the loop task (or on handler tasks, see above);
 * stream ops and error_body on the loop task only. A client is used by one thread at a
 * time. Nothing here aborts on bad input or allocation failure.
 */
#ifndef K32_HTTP_H
#define K32_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_alloc.h"
#include "base/k32_buf.h"
#include "base/k32_status.h"
#include "k32/k32_config.h"

struct http_server;
struct http_stream;

/* Names a stream across threads: connection slot and generation. 0 is never valid. */
typedef uint32_t http_stream_id_t;

/* One request header as received (name case kept; compare case-insensitively). */
struct http_header {
	struct k32_str name;  /* field name */
	struct k32_str value; /* value, leading/trailing blanks removed */
};

/*
 * A parsed request. Every view points into connection buffers that live until the
 * handler (or authenticate) returns; copy what must outlive it.
 */
struct http_request {
	const char *method;		   /* "GET", "POST", ... (static string) */
	struct k32_str target;		   /* raw request target: path and query, as sent */
	struct k32_str path;		   /* raw (still percent-encoded) path, no query */
	struct k32_str query;		   /* raw query without '?'; empty when none */
	const struct http_header *headers; /* header_count entries, in arrival order */
	size_t header_count;
	const uint8_t *body; /* body_len bytes (de-chunked), NUL-terminated; never NULL */
	size_t body_len;
	struct k32_str bearer_token;	/* token of "Authorization: Bearer X"; empty if none */
	void *identity;			/* set by cfg.authenticate; NULL otherwise */
	bool tls;			/* arrived over TLS */
	bool keep_alive;		/* the server will keep the connection after answering */
	uint8_t http_major, http_minor; /* protocol version of the request */
	uint64_t conn_seq;		/* connection number (1, 2, ...), for logs */
	struct http_server *server;	/* the server (for http_server_stream_wake etc.) */
};

/*
 * What a handler fills. The server passes it with status 200, no headers and an empty body.
 * headers holds extra header lines, each "Name: value\r\n" (use http_response_header);
 * the server adds Content-Length (or Transfer-Encoding) and Connection itself, so the
 * handler must not add those. body is capped at max_response_bytes; the handler appends to it
 * directly (e.g. k32_buf_append, k32_buf_printf). Both buffers belong to the server and are reused.
 */
struct http_response {
	int status;		/* HTTP status code, 100..599 */
	struct k32_buf headers; /* extra header lines, capped at K32_HTTP_MAX_RESP_HEADER_BYTES */
	struct k32_buf body;	/* response body, capped at max_response_bytes */
	bool close;		/* set to close the connection after this response */
	struct http_stream *stream_; /* internal: set by http_response_stream */
};

/* Handler: called on the loop task for each complete request. Fill resp; return nothing. */
typedef void (*http_handler_fn)(void *ctx, struct http_request *req, struct http_response *resp);

/*
 * Optional authentication hook, called on the loop task before the handler. Return true to
 * go on to the handler (optionally after setting req->identity); false to answer with resp
 * as filled (e.g. status 401 and a Status body) without calling the handler.
 */
typedef bool (*http_auth_fn)(void *ctx, struct http_request *req, struct http_response *resp);

/*
 * Optional hook for the answers the server makes itself (400 malformed, 413 body too large,
 * 431 head too large), so they can carry the API's error format (e.g. a Kubernetes Status).
 * Called on the loop task with resp->status preset and empty headers and body; detail is a
 * one-line reason. The connection is closed after the answer whatever resp->close says, and
 * http_response_stream is refused here. Without the hook the body is text/plain detail.
 */
typedef void (*http_error_fn)(void *ctx, int status, const char *detail,
			      struct http_response *resp);

struct http_server_config {
	const char *host;	   /* address to bind: "127.0.0.1" (default), "0.0.0.0" */
	uint16_t port;		   /* 0 picks a free port (see http_server_port) */
	http_handler_fn handler;   /* required */
	http_auth_fn authenticate; /* optional */
	void *ctx;		   /* passed to handler and authenticate */
	/* TLS */
	bool tls;		      /* serve HTTPS (needs data_dir) */
	const char *data_dir;	      /* certificates go to <data_dir>/pki/ (created if absent) */
	const char *const *tls_names; /* extra SAN entries (DNS names or IPv4), tls_name_count */
	size_t tls_name_count;	      /* at most K32_HTTP_MAX_TLS_NAMES */
	/* limits; http_server_config_init sets the k32_config.h defaults */
	uint32_t max_conns;	   /* K32_HTTP_MAX_CONNS */
	size_t max_header_bytes;   /* K32_HTTP_MAX_HEADER_BYTES */
	size_t max_body_bytes;	   /* K32_HTTP_MAX_BODY_BYTES */
	size_t max_response_bytes; /* K32_HTTP_MAX_RESPONSE_BYTES */
	size_t stream_buf_bytes;   /* K32_HTTP_STREAM_BUF_BYTES: buffered stream output cap */
	int64_t header_timeout_us; /* K32_HTTP_HEADER_TIMEOUT_MS */
	int64_t body_timeout_us;   /* K32_HTTP_BODY_TIMEOUT_MS */
	int64_t write_timeout_us;  /* K32_HTTP_WRITE_TIMEOUT_MS */
	int64_t idle_timeout_us;   /* K32_HTTP_IDLE_TIMEOUT_MS */
	const struct k32_allocator *alloc; /* thread-safe allocator; NULL: the default heap */
	http_error_fn error_body;	   /* optional, see http_error_fn; ctx as above */
	uint32_t handler_threads;	   /* K32_HTTP_HANDLER_THREADS; see HANDLER THREADS */
	bool tls_park; /* K32_HTTP_TLS_PARK: idle TLS connections free their record buffers */
	size_t gzip_min_bytes; /* K32_HTTP_GZIP_MIN_BYTES; 0: never compress (see GZIP) */
	/* admission (see ADMISSION); http_server_config_init sets the k32_config.h defaults */
	uint32_t max_conns_per_addr;	  /* K32_HTTP_MAX_CONNS_PER_ADDR */
	uint32_t max_unauth_per_addr;	  /* K32_HTTP_MAX_UNAUTH_PER_ADDR */
	uint32_t reserved_auth_pct;	  /* K32_HTTP_RESERVED_AUTH_PCT (0..90) */
	uint32_t max_handshakes;	  /* K32_HTTP_MAX_HANDSHAKES */
	int64_t handshake_timeout_us;	  /* K32_HTTP_HANDSHAKE_TIMEOUT_MS */
	int64_t first_request_timeout_us; /* K32_HTTP_FIRST_REQUEST_TIMEOUT_MS */
};

struct http_server_stats {
	uint32_t conns_open;	 /* connections now open */
	uint32_t conns_peak;	 /* most open at once */
	uint32_t streams_open;	 /* streaming responses now open */
	uint64_t conns_accepted; /* total accepted */
	uint64_t conns_refused;	 /* refused (503 or TLS alert, see ADMISSION) */
	uint64_t conns_evicted;	 /* unauthenticated connections closed to admit a newer one */
	uint32_t unauth_open;	 /* unauthenticated connections now open */
	uint32_t handshakes;	 /* TLS sessions in handshake now (<= max_handshakes) */
	uint64_t requests;	 /* requests handed to the handler or authenticate */
	uint32_t jobs_waiting;	 /* requests and handshake steps queued for handler tasks */
	uint64_t hs_steps;	 /* TLS handshake steps run on handler tasks (taken first) */
	uint64_t errors_4xx;	 /* requests refused by the server itself (400/413/431) */
	uint64_t timeouts;	 /* connections closed by a timeout */
	uint32_t tls_parked;	 /* TLS connections idle with their record buffers freed now */
	uint64_t tls_parks;	 /* total times a TLS connection was parked */
	uint64_t gzip_responses; /* answers the server compressed itself (see GZIP) */
	uint64_t gzip_in_bytes;	 /* their bytes before compression */
	uint64_t gzip_out_bytes; /* and after */
	size_t mem_bytes;	 /* bytes the server holds from its allocator now */
	size_t mem_peak_bytes;	 /* highest mem_bytes */
};

/* Fills cfg with host 127.0.0.1, port 0, plain HTTP and every k32_config.h default. */
void http_server_config_init(struct http_server_config *cfg);

/*
 * Binds, prepares TLS material (creating it on first start) and starts the loop task.
 * @retval K32_OK               *out is running; stop it with http_server_stop
 * @retval K32_ERR_INVALID_ARGS missing handler, tls without data_dir, a zero limit
 * @retval K32_ERR_IO           bind/listen failed, a certificate file unreadable/unwritable
 * @retval K32_ERR_CORRUPT      a stored key or certificate does not parse
 * @retval K32_ERR_NO_MEMORY    the allocator refused
 * Context: may block (key generation, file I/O). err gets the detail.
 */
k32_status_t http_server_start(const struct http_server_config *cfg, struct http_server **out,
			       struct k32_err *err);

/*
 * Stops the loop, closes every connection (calling each open stream's close with
 * K32_ERR_CANCELED), joins the task and frees everything. NULL is ignored.
 * Context: not from a handler or stream callback.
 */
void http_server_stop(struct http_server *srv);

/* The port actually bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *srv);

/* Path of the CA certificate (PEM) clients should trust; NULL when serving plain HTTP. */
const char *http_server_ca_file(const struct http_server *srv);

/* Snapshot of the counters. Any thread. */
void http_server_get_stats(struct http_server *srv, struct http_server_stats *out);

/* ---- request helpers (pure functions, any thread) ------------------------------------- */

/* Finds the first header named name (case-insensitive). false when absent. */
bool http_request_header(const struct http_request *req, const char *name,
			 struct k32_str *out_value);

/*
 * Percent-decodes in into out (cap bytes, NUL-terminated); plus_is_space turns '+' into ' '
 * (query strings). *out_len (may be NULL) gets the decoded length.
 * @retval K32_ERR_INVALID_ARGS   a '%' not followed by two hex digits, or a decoded NUL
 * @retval K32_ERR_BUFFER_TOO_SMALL  out cannot hold the result and its NUL
 */
k32_status_t http_url_decode(struct k32_str in, bool plus_is_space, char *out, size_t cap,
			     size_t *out_len);

/*
 * Iterates a raw query string "a=1&b=x%20y&c": each call takes the next non-empty pair off
 * *rest and returns its raw key and raw value (value empty when there is no '='). Decode
 * with http_url_decode(..., true, ...). false when nothing is left.
 */
bool http_query_next(struct k32_str *rest, struct k32_str *out_key, struct k32_str *out_value);

/*
 * Decoded value of the first parameter whose decoded key equals name.
 * @retval K32_ERR_NOT_FOUND  no such parameter
 * other statuses as http_url_decode.
 */
k32_status_t http_query_get(struct k32_str query, const char *name, char *out, size_t cap,
			    size_t *out_len);

/*
 * Query parameters a server understands, checked once where a request enters so that no
 * handler ever sees a value that did not fit its buffer (and mistakes it for an absent one:
 * a label selector dropped that way once made a delete match everything).
 */
enum http_qkind {
	HTTP_Q_TEXT,   /* any text up to max_len decoded bytes */
	HTTP_Q_BOOL,   /* Go's strconv.ParseBool: 1 t T true TRUE True 0 f F false FALSE False,
			* or no value at all (true) */
	HTTP_Q_UINT,   /* decimal digits, at most max_len of them; "" reads as absent */
	HTTP_Q_CHOICE, /* one of choices (exact, case-sensitive) */
};
struct http_qspec {
	const char *name;
	enum http_qkind kind;
	size_t max_len;		/* decoded bytes allowed (the handler's buffer holds max_len+1) */
	const char *limit_name; /* the k32_config.h name of max_len, or NULL when fixed */
	const char *const *choices; /* HTTP_Q_CHOICE: NULL-terminated list */
};
enum http_qfault_kind {
	HTTP_QF_NONE,
	HTTP_QF_KEY,	  /* a parameter name that is not valid percent-encoding or too long */
	HTTP_QF_ENCODING, /* a value with a bad %-escape or an encoded NUL */
	HTTP_QF_TOO_LONG, /* a value longer than its spec's max_len */
	HTTP_QF_TYPE,	  /* a value that is not of its spec's kind */
};
struct http_qfault {
	enum http_qfault_kind kind;
	const struct http_qspec *spec; /* NULL for HTTP_QF_KEY */
	size_t len;		       /* decoded (or raw, when undecodable) length */
	char shown[52];		       /* the start of the value or key, for the message */
};

/*
 * Checks every parameter of query whose name is in specs (n entries); names not listed are
 * left alone (Kubernetes ignores parameters it does not know). Every occurrence of a repeated
 * parameter is checked. K32_OK, or K32_ERR_INVALID_ARGS with *fault describing the first
 * offending parameter (format it with http_qfault_message).
 */
k32_status_t http_query_check(struct k32_str query, const struct http_qspec *specs, size_t n,
			      struct http_qfault *fault);
/* One sentence for fault that names the parameter, the value and the limit (into buf). */
void http_qfault_message(const struct http_qfault *fault, char *buf, size_t cap);
/* The spec named name in specs, or NULL. */
const struct http_qspec *http_qspec_find(const struct http_qspec *specs, size_t n,
					 const char *name);

/* Reason phrase of a status code ("Not Found"); "Unknown" for unlisted codes. */
const char *http_status_reason(int status);

/* Does this Accept-Encoding value take gzip ("gzip", "x, gzip;q=0.5", "*"; not q=0)? */
bool http_accepts_gzip(struct k32_str accept_encoding);

/* Does any Accept-Encoding header of req take gzip? */
bool http_request_accepts_gzip(const struct http_request *req);

/*
 * Appends in[0..len) to out as one gzip member (RFC 1952), level K32_HTTP_GZIP_LEVEL with a
 * window of 2^K32_HTTP_GZIP_WINDOW_BITS and hash memory K32_HTTP_GZIP_MEM_LEVEL: ~32 KiB of
 * zlib state with the defaults, from the C library, freed before returning. Any thread.
 * @retval K32_ERR_NO_RESOURCES  out's max_len was reached (out is unchanged): send it plain
 * @retval K32_ERR_NO_MEMORY     zlib or out could not allocate (out is unchanged)
 */
k32_status_t http_gzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err);

/*
 * Appends the inflated bytes of one gzip member in[0..len) to out (~40 KiB of zlib state,
 * from the C library, freed before returning). Any thread.
 * @retval K32_ERR_CORRUPT       not gzip, a bad checksum, truncated, or bytes after the member
 * @retval K32_ERR_NO_RESOURCES  the inflated bytes pass out's max_len (a "zip bomb" stops there)
 * @retval K32_ERR_NO_MEMORY     zlib or out could not allocate
 * out is unchanged on any failure.
 */
k32_status_t http_gunzip(const void *in, size_t len, struct k32_buf *out, struct k32_err *err);

/* ---- response helpers (loop task) ------------------------------------------------------ */

/*
 * Appends "name: value\r\n" to resp->headers. INVALID_ARGS if name or value holds CR/LF
 * (header injection); NO_RESOURCES past K32_HTTP_MAX_RESP_HEADER_BYTES.
 */
k32_status_t http_response_header(struct http_response *resp, const char *name, const char *value);

/* Sets status, Content-Type and the body (copied) in one call. */
k32_status_t http_response_set(struct http_response *resp, int status, const char *content_type,
			       const void *body, size_t len);

/* ---- streams (loop task unless noted) -------------------------------------------------- */

/* Why pull was called (bit set). */
#define HTTP_STREAM_EV_START	0x1u  /* first call, right after the headers were queued */
#define HTTP_STREAM_EV_WAKE	0x2u  /* http_server_stream_wake was called since last pull */
#define HTTP_STREAM_EV_WRITABLE 0x4u  /* output drained after http_stream_write said SHOULD_WAIT */
#define HTTP_STREAM_EV_TIMER	0x8u  /* the deadline of http_stream_set_timer passed */
#define HTTP_STREAM_EV_READABLE 0x10u /* upgraded streams: client bytes wait (http_stream_read) */

struct http_stream_ops {
	/* Write chunks with http_stream_write. K32_OK keeps the stream open; any other
	 * status ends it (use K32_ERR_CANCELED for "done"). Must not block. */
	k32_status_t (*pull)(void *ctx, struct http_stream *s, uint32_t events);
	/* Exactly once, when the stream ended: why is the status pull returned, or
	 * K32_ERR_PEER_CLOSED (client gone), K32_ERR_TIMED_OUT (client not reading),
	 * K32_ERR_CANCELED (server stopping). ctx may be freed here. */
	void (*close)(void *ctx, k32_status_t why);
};

/*
 * Turns resp into a chunked stream: status and resp->headers are sent, resp->body is
 * ignored, then ops->pull runs with HTTP_STREAM_EV_START. *out_id (may be NULL) names the
 * stream for http_server_stream_wake; it is valid as soon as this returns, and a wake that
 * arrives before the first pull is kept. ops must outlive the stream.
 * @retval K32_ERR_BAD_STATE     called twice for one response
 * @retval K32_ERR_INVALID_ARGS  ops or ops->pull missing, or not from a handler (the
 *                               authenticate hook may stream; the error hook may not)
 * If this fails, the response is sent as a normal one and close is never called.
 */
k32_status_t http_response_stream(struct http_response *resp, const struct http_stream_ops *ops,
				  void *ctx, http_stream_id_t *out_id);

/*
 * Turns resp into an upgraded connection (status 101; the handler sets the Upgrade and
 * Connection headers): as http_response_stream, but with no Transfer-Encoding, writes sent
 * as raw bytes, and what the client sends after the request handed to pull
 * (HTTP_STREAM_EV_READABLE, read with http_stream_read). The connection closes when the
 * stream ends. Used by the API server's port-forward tunnel.
 */
k32_status_t http_response_upgrade(struct http_response *resp, const struct http_stream_ops *ops,
				   void *ctx, http_stream_id_t *out_id);
/* Takes up to cap of the client's bytes of an upgraded stream (0: none waiting). */
size_t http_stream_read(struct http_stream *s, void *buf, size_t cap);

/*
 * Queues data as one chunk (len 0 is a no-op).
 * @retval K32_ERR_SHOULD_WAIT  buffered output is already at stream_buf_bytes: nothing was
 *                              queued; pull is called again with HTTP_STREAM_EV_WRITABLE
 * @retval K32_ERR_NO_MEMORY    allocator refused (the stream should end)
 * @retval K32_ERR_BAD_STATE    the stream is already ending (pull returned non-OK)
 * A client that went away is noticed by the loop, which then calls close.
 */
k32_status_t http_stream_write(struct http_stream *s, const void *data, size_t len);

/* Calls pull with HTTP_STREAM_EV_TIMER at deadline_us (monotonic); K32_FOREVER cancels. */
void http_stream_set_timer(struct http_stream *s, int64_t deadline_us);

/*
 * Asks the loop to call the stream's pull with HTTP_STREAM_EV_WAKE soon. Any thread; never
 * blocks for long (a mutex and one byte written to a loopback socket, coalesced). A dead or
 * unknown id is ignored. Returns K32_ERR_NOT_FOUND for a dead id (informational).
 */
k32_status_t http_server_stream_wake(struct http_server *srv, http_stream_id_t id);

/* ---- TLS material (used by the server; exposed for tools and tests) ------------------- */

struct http_tls_files {
	char ca_crt[K32_HTTP_PATH_LEN];	    /* <data_dir>/pki/ca.crt */
	char ca_key[K32_HTTP_PATH_LEN];	    /* <data_dir>/pki/ca.key */
	char server_crt[K32_HTTP_PATH_LEN]; /* <data_dir>/pki/server.crt */
	char server_key[K32_HTTP_PATH_LEN]; /* <data_dir>/pki/server.key */
};

/*
 * Creates (first start) or loads and checks the CA and serving certificate under
 * <data_dir>/pki/; names are extra SANs besides 127.0.0.1 and localhost. *out_created
 * (may be NULL) tells whether anything was generated. Blocks (key generation ~10 ms).
 */
k32_status_t http_tls_ensure(const char *data_dir, const char *const *names, size_t name_count,
			     struct http_tls_files *out, bool *out_created, struct k32_err *err);

/* ---- client ----------------------------------------------------------------------------- */

struct http_client;

struct http_client_config {
	const char *host; /* "127.0.0.1" or "localhost" */
	uint16_t port;
	bool tls;	     /* HTTPS */
	const char *ca_file; /* PEM CA to verify the server with (required for tls) */
	/* Name checked against the certificate; NULL: host. mbedTLS 2.28 matches DNS names
	 * only, so for an IPv4 host "localhost" is checked (every serving certificate made by
	 * http_tls_ensure carries it); the chain must still lead to ca_file. */
	const char *server_name;
	const char *bearer_token; /* sent as "Authorization: Bearer ..." when non-NULL */
	/* per call: connect + send + the whole response; default K32_HTTP_CLIENT_TIMEOUT_MS */
	int64_t timeout_us;
	size_t max_response_bytes; /* cap on a whole response body; K32_HTTP_MAX_RESPONSE_BYTES */
	const struct k32_allocator *alloc; /* NULL: the default heap */
	/* http_client_do sends "Accept-Encoding: gzip" and inflates a gzip answer before
	 * returning it (the body is then the plain bytes, capped at max_response_bytes; the
	 * headers still say Content-Encoding: gzip). Streams never ask. Default false. */
	bool accept_gzip;
};

/* Fills cfg with 127.0.0.1, no TLS, no token and the config defaults (host/port to set). */
void http_client_config_init(struct http_client_config *cfg);

/* Creates a client (copies the strings; connects lazily on the first request). */
k32_status_t http_client_new(const struct http_client_config *cfg, struct http_client **out,
			     struct k32_err *err);
/* Closes the connection and frees the client. NULL is ignored. */
void http_client_free(struct http_client *c);

/* One request. body may be NULL when body_len is 0. */
struct http_client_request {
	const char *method;	  /* "GET", "POST", "PUT", "PATCH", "DELETE" */
	const char *target;	  /* path and query, e.g. "/api/v1/pods?watch=true" */
	const char *content_type; /* NULL: no Content-Type header */
	const char *headers;	  /* extra raw lines, each "Name: value\r\n"; NULL for none */
	const void *body;
	size_t body_len;
	int64_t timeout_us; /* 0: the client's timeout_us */
	int64_t tick_us;    /* streams only: call on_data(ctx, NULL, 0) after this much silence */
};

/* A whole response. Free with http_client_response_fini. */
struct http_client_response {
	int status;		/* status code */
	struct k32_buf headers; /* the raw header block, "Name: value\r\n" lines */
	struct k32_buf body;	/* de-chunked body (NUL-terminated) */
};

/*
 * Sends req and reads the whole response into *out (initialised here; fini it even on
 * error). Reuses the kept-alive connection, reconnecting once if the server had closed it.
 * @retval K32_OK                 *out holds any status code the server sent
 * @retval K32_ERR_TIMED_OUT      the call's timeout passed
 * @retval K32_ERR_IO / PEER_CLOSED  connect, TLS or socket failure
 * @retval K32_ERR_CORRUPT        the response did not parse
 * @retval K32_ERR_NO_RESOURCES   body over max_response_bytes
 */
k32_status_t http_client_do(struct http_client *c, const struct http_client_request *req,
			    struct http_client_response *out, struct k32_err *err);

/* Finds a response header (case-insensitive). */
bool http_client_response_header(const struct http_client_response *resp, const char *name,
				 struct k32_str *out_value);
void http_client_response_fini(struct http_client_response *resp);

/*
 * Called with each piece of a streamed body: a whole line without its '\n' (lines mode;
 * a last line without '\n' too) or each received block (raw mode); and with (NULL, 0) after
 * each req->tick_us of silence when tick_us > 0, so a caller (a kubelet shutting down) can
 * end a quiet stream from its own thread by returning non-OK. Return K32_OK to go on,
 * anything else to stop: http_client_stream then returns that status, keeping the
 * connection when the response had already arrived whole (a watch answered with one ERROR
 * line: the relist that follows needs no new TLS handshake), else closing it.
 */
typedef k32_status_t (*http_client_data_fn)(void *ctx, const uint8_t *data, size_t len);

/*
 * Sends req and streams the response body to on_data. *out_status (may be NULL) gets the
 * status code as soon as headers arrive; non-2xx bodies are streamed too. req->timeout_us
 * here bounds the wait for the response headers and for each following piece (idle
 * timeout), not the whole stream; lines are capped at K32_HTTP_CLIENT_MAX_LINE bytes
 * (NO_RESOURCES past it).
 * @retval K32_OK  the stream ended normally (terminating chunk or close)
 * other statuses as http_client_do, or whatever on_data returned.
 */
k32_status_t http_client_stream(struct http_client *c, const struct http_client_request *req,
				bool lines, http_client_data_fn on_data, void *ctx, int *out_status,
				struct k32_err *err);

#endif /* K32_HTTP_H */
