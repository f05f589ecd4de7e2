/*
 * http_int.h - what the files of src/http share: the incremental message parser over
 * http-parser, the TLS glue over mbedTLS and the transport (plain or TLS) both sides use.
 *
 * The message parser works on a caller-owned input buffer of raw bytes (struct k32_buf).
 * Views of the request line and headers are kept as offsets into that buffer, so it may be
 * reallocated while a request arrives. Body bytes are copied out (to a body buffer or a
 * callback) as the parser passes them and then removed from the input buffer, so the input
 * buffer never holds more than the head plus one read.
 *
 * Context: a parser, a transport or a TLS connection belongs to one thread at a time.
 */
#ifndef K32_HTTP_INT_H
#define K32_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

#include "http/http.h"
#include "platform/k32_platform.h"

#define HTTP_MOD "http"

/* Bytes read from a socket at a time (and spare room kept in an input buffer). */
#define HTTP_READ_CHUNK 4096

/* Bytes of a declared request body reserved before any of it arrived (the rest grows as it
 * comes, doubling). */
#define HTTP_BODY_PRERESERVE (64 * 1024)

/* One header as offsets into the input buffer. */
struct http_hdr_off {
	uint32_t name_off;
	uint32_t name_len;
	uint32_t val_off;
	uint32_t val_len;
};

/* Body sink for a message: NULL body buffer means every body piece goes to on_data. */
typedef k32_status_t (*http_msgp_data_fn)(void *ctx, const uint8_t *data, size_t len);

struct http_msgp {
	http_parser p;	    /* http-parser state; p.data points back here */
	struct k32_buf *in; /* raw input bytes (caller-owned) */
	size_t parsed;	    /* bytes of in already given to the parser */
	size_t head_keep;   /* end of the last url/header byte: bytes before it stay */
	uint32_t url_off;   /* request target (requests only) */
	uint32_t url_len;
	uint32_t header_count; /* entries used in hdr */
	struct http_hdr_off hdr[K32_HTTP_MAX_HEADERS];
	bool in_value;		   /* last header callback was a value */
	bool begun;		   /* first byte of the message seen */
	bool headers_done;	   /* on_headers_complete ran */
	bool complete;		   /* on_message_complete ran (parser paused) */
	int error_status;	   /* server: 400, 413 or 431 to answer; 0 when fine */
	k32_status_t data_status;  /* status returned by on_data, if it stopped the parse */
	size_t max_header_bytes;   /* limit on request line + headers */
	size_t max_body_bytes;	   /* limit on the de-chunked body */
	size_t body_len;	   /* body bytes seen so far */
	struct k32_buf *body;	   /* body destination, or NULL */
	http_msgp_data_fn on_data; /* used when body is NULL */
	void *data_ctx;
};

/*
 * Starts a message of type HTTP_REQUEST or HTTP_RESPONSE over in (bytes from *parsed on are
 * new). Keeps in's existing bytes: a pipelined next request may already be there.
 */
void http_msgp_init(struct http_msgp *mp, enum http_parser_type type, struct k32_buf *in,
		    size_t max_header_bytes, size_t max_body_bytes, struct k32_buf *body);

/*
 * Feeds the bytes of in not yet parsed. Returns K32_OK (check mp->complete), or an error:
 * INVALID_ARGS / OUT_OF_RANGE / NO_RESOURCES with mp->error_status set (400, 413, 431) and a
 * message in err, or whatever on_data returned.
 */
k32_status_t http_msgp_feed(struct http_msgp *mp, struct k32_err *err);

/* Tells the parser the peer closed (ends a read-until-close response body). */
k32_status_t http_msgp_eof(struct http_msgp *mp, struct k32_err *err);

/* View of a header / the url of a parsed message. */
struct k32_str http_msgp_str(const struct http_msgp *mp, uint32_t off, uint32_t len);

/* Bytes of in that belong to the finished message (drop them before the next one). */
static inline size_t http_msgp_consumed(const struct http_msgp *mp)
{
	return mp->parsed;
}

/* Case-insensitive comparison of a view with a C string. */
bool http_str_ieq(struct k32_str a, const char *b);

/* ---- TLS ------------------------------------------------------------------------------- */

struct http_tls_server; /* shared config: certificate, key, RNG */
struct http_tls_conn;	/* one mbedTLS session */

/* Loads (or creates) the material of data_dir and builds a server configuration. */
k32_status_t http_tls_server_new(const char *data_dir, const char *const *names, size_t name_count,
				 const struct k32_allocator *alloc, struct http_tls_server **out,
				 struct http_tls_files *out_files, struct k32_err *err);
void http_tls_server_free(struct http_tls_server *ts);

/* A client configuration trusting the PEM file ca_file. */
struct http_tls_client;
k32_status_t http_tls_client_new(const char *ca_file, const struct k32_allocator *alloc,
				 struct http_tls_client **out, struct k32_err *err);
void http_tls_client_free(struct http_tls_client *tc);

/* A session over a non-blocking (server) or blocking-with-poll (client) socket. */
k32_status_t http_tls_conn_new_server(struct http_tls_server *ts, k32_sock_t sock,
				      struct http_tls_conn **out, struct k32_err *err);
k32_status_t http_tls_conn_new_client(struct http_tls_client *tc, k32_sock_t sock,
				      const char *server_name, struct http_tls_conn **out,
				      struct k32_err *err);
void http_tls_conn_free(struct http_tls_conn *tls);

/*
 * Non-blocking steps. Each returns K32_OK (done / *out_len bytes moved), SHOULD_WAIT with
 * *out_want set to K32_POLL_IN or K32_POLL_OUT, PEER_CLOSED, or IO with detail.
 */
k32_status_t http_tls_handshake(struct http_tls_conn *tls, uint32_t *out_want, struct k32_err *err);
k32_status_t http_tls_read(struct http_tls_conn *tls, void *buf, size_t cap, size_t *out_len,
			   uint32_t *out_want, struct k32_err *err);
/* Same rule as mbedtls_ssl_write: after SHOULD_WAIT, call again with the same data and len. */
k32_status_t http_tls_write(struct http_tls_conn *tls, const void *buf, size_t len, size_t *out_len,
			    uint32_t *out_want, struct k32_err *err);
/*
 * Parking: while a server session is idle between records (a quiet watch, a keep-alive
 * connection between requests) its two record buffers (MBEDTLS_SSL_IN/OUT_BUFFER_LEN,
 * ~16.6 KiB each in Debian's build) are freed, keeping only the bytes before the message
 * (the read counter, header, explicit IV) and the pointer offsets; the next read, write or
 * close_notify allocates them again (mbedTLS's calloc) and restores them byte for byte, so
 * the record layer cannot tell. Debian's mbedTLS 2.28 has neither
 * MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH nor MBEDTLS_PLATFORM_MEMORY, and context serialization
 * works for DTLS only, so this is the one way to shed them. true when parked (now or
 * already); false when the session is mid-record or the build cannot park (mbedTLS 3.x,
 * variable buffers: ESP-IDF's CONFIG_MBEDTLS_DYNAMIC_BUFFER does the same inside mbedTLS).
 * A failed re-allocation makes the next call return NO_MEMORY (the connection closes).
 */
bool http_tls_park(struct http_tls_conn *tls);
bool http_tls_parked(const struct http_tls_conn *tls);
/* Sends close_notify, best effort. */
void http_tls_close_notify(struct http_tls_conn *tls);

#endif /* K32_HTTP_INT_H */
