/*
 * http_server.c - the HTTP/1.1 server: one event-loop task, non-blocking sockets, poll.
 *
 * Connections live in a slot table of max_conns entries (struct http_slot, 16 bytes each,
 * fixed at start). A connection struct is allocated at accept and freed at close; its
 * input buffer, request state and output buffers exist only while in use, so an idle
 * keep-alive connection or a quiet watch stream costs one struct http_conn.
 *
 * Admission (http.h, ADMISSION): every connection starts unauthenticated (counted in
 * unauth_count, its address in c->addr) and becomes trusted when a request passes
 * authenticate with an identity. Before a new connection gets a slot, admit() closes the
 * oldest unauthenticated connection of its address (past max_unauth_per_addr) or of any
 * address (past unauth_max: max_conns less reserved_auth_pct), preferring ones not mid-handshake;
 * only when nothing can be closed is the client refused (503, after the handshake over TLS; a TLS
 * alert when no slot is free at all). A TLS connection gets its mbedTLS session only when its first
 * byte arrives and fewer than max_handshakes sessions are handshaking; until then it costs its
 * struct and is not polled while it waits. The scans are over the slot table (max_conns entries)
 * per accepted connection: ~1,000 compares, cheap beside a handshake.
 *
 * Connection states:
 *   HANDSHAKE  TLS handshake in progress, or waiting for its first byte or a handshake slot
 *              (handshake timeout from accept)
 *   READ       reading a request (idle timeout before its first byte, header timeout to the
 *              end of the head, body timeout to the end of the body)
 *   WRITE      sending a whole response (write timeout on no progress)
 *   STREAM     a chunked stream: pull runs when woken, drained or its timer fires; the
 *              socket is still read so a client that leaves is noticed at once *   LINGER     after
 * an error answer (400/413/431): the response is flushed, then input is read and dropped until the
 * client closes, no input came for 500 ms, or 2 s pass, so the client sees the answer instead of a
 * reset caused by request bytes still unread when the socket is closed (Apache's lingering close)
 *
 * Waking streams from other threads: each slot carries a generation and a woken flag,
 * guarded by srv->mu. A stream id is (generation << 16) | (slot + 1); the generation moves
 * on whenever a stream ends or a connection closes, so a stale id never reaches a new
 * stream. The waker sets the flag and, if the loop was not already signalled, writes one
 * byte to a loopback TCP pair (made at start with the platform's tcp ops: listen on
 * 127.0.0.1 port 0, connect, accept) whose read end is in the poll set.
 *
 * Handlers, authenticate and stream ops run on the loop task with srv->mu NOT held, so they
 * may call http_server_stream_wake.
 */
#include "http/http_int.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_log.h"

#define ACCEPT_BATCH	  64	  /* connections accepted per loop turn */
#define DRIVE_STEPS	  64	  /* state-machine steps per connection per turn */
#define LINGER_US	  2000000 /* LINGER state limit */
#define LINGER_QUIET_US	  500000  /* LINGER ends once output is sent and input is quiet this long */
#define TLS_RECORD_MAX	  16384	  /* bytes handed to one mbedtls_ssl_write */
#define HTTP_COALESCE_MAX TLS_RECORD_MAX /* head + body up to this go out as one write */
#define SLOT_NONE	  0xffffu

enum conn_state {
	CS_HANDSHAKE,
	CS_READ,
	CS_WRITE,
	CS_STREAM,
	CS_LINGER,
	CS_HANDLER,
};

enum drive_result {
	DR_AGAIN,  /* progress made: run the state machine again */
	DR_WAIT,   /* blocked on the socket: wait for poll */
	DR_CLOSED, /* the connection was closed and freed */
};

struct http_conn;

struct http_stream {
	struct http_conn *conn;		   /* owner */
	const struct http_stream_ops *ops; /* NULL: no stream requested */
	void *ctx;			   /* producer state */
	uint32_t events;		   /* HTTP_STREAM_EV_* waiting for pull */
	int64_t timer_us;		   /* K32_FOREVER: none */
	bool blocked;			   /* write said SHOULD_WAIT: wait for the drain */
	bool ending;			   /* terminating chunk queued */
	bool chunked;			   /* HTTP/1.1 chunked; false: raw bytes then close */
	bool upgraded;			   /* 101: raw both ways, client bytes to pull */
	k32_status_t why;		   /* status that ended it */
};

/* The request being read: parser, header offsets and body. */
struct http_reqstate {
	struct http_msgp mp;
	struct k32_buf body;
	bool head_seen; /* headers_done was handled (deadline moved, Expect answered) */
};

struct http_conn {
	struct http_server *srv;
	k32_sock_t sock;
	uint16_t slot;		    /* index in srv->slots */
	uint8_t state;		    /* enum conn_state */
	bool keep_alive;	    /* keep the connection after the current response */
	bool tls_ready;		    /* handshake done (close_notify allowed) */
	bool peer_eof;		    /* LINGER: the client closed its side */
	bool again;		    /* DRIVE_STEPS ran out with work left: drive next turn */
	bool park_counted;	    /* counted in stats.tls_parked */
	struct http_conn *job_next; /* link in the job or done queue (CS_HANDLER) */
	k32_status_t job_status;    /* result of queueing the handler's answer / handshake */
	bool job_handshake;	    /* the job is a TLS handshake step, not a request */
	uint32_t tls_want;	    /* poll events the TLS layer asked for (0: none) */
	size_t tls_pending_len;	    /* length of a TLS write to repeat after SHOULD_WAIT */
	uint64_t seq;		    /* connection number */
	int64_t deadline_us;	    /* when the current timeout expires (K32_FOREVER: none) */
	int64_t linger_end_us;	    /* LINGER: hard end */
	struct k32_buf in;	    /* raw input, allocated while needed */
	struct k32_buf out;	    /* status line, headers, chunks */
	struct k32_buf out2;	    /* a whole response body, sent after out */
	size_t out_off;		    /* bytes of out already sent */
	size_t out2_off;	    /* bytes of out2 already sent */
	struct http_reqstate *rs;   /* request being read, or NULL */
	struct http_tls_conn *tls;  /* TLS session, or NULL */
	struct http_stream st;	    /* the stream, when state is CS_STREAM */
	uint32_t addr;		    /* client IPv4 address (0: unknown) */
	bool trusted;		    /* a request passed authenticate with an identity */
	bool auth_ok;		    /* handle_request: this request did (read by finish_request) */
	bool first_head;	    /* the head of a first request arrived */
	bool hs_counted;	    /* holds one of srv->hs_count (session in handshake) */
	bool hs_waiting;	    /* HANDSHAKE without a session: waiting for a handshake slot */
	const char *refuse;	    /* not NULL: answer 503 with this reason and close */
	int64_t admit_deadline_us;  /* unauthenticated: end of the handshake / first head */
	uint32_t turn;		    /* srv->turn when accepted */
	bool evict;	       /* close at the end of this turn (its handshake slot is taken) */
	int64_t idle_since_us; /* accept, or the end of its handshake (see evict_class) */
	int64_t hs_start_us;   /* when its session started handshaking */
};

struct http_slot {
	struct http_conn *conn; /* NULL when free */
	uint16_t gen;		/* moves on at every close and stream end */
	bool stream_live;	/* a stream with id (gen, slot) exists */
	bool woken;		/* http_server_stream_wake called since the last collect */
};

/* Scratch a request is handled with: the loop has one, each handler task one. */
struct http_hctx {
	struct http_header hdrs[K32_HTTP_MAX_HEADERS]; /* the request's header views */
	struct http_response resp;		       /* the response being built */
	struct http_server *srv;
	struct k32_task *task; /* handler task, or NULL (loop) */
};

struct http_server {
	struct http_server_config cfg; /* copy; strings below */
	char host[64];
	char data_dir[K32_HTTP_PATH_LEN];
	const struct k32_allocator *base_alloc; /* the caller's allocator */
	struct k32_allocator alloc;		/* counting wrapper over base_alloc */
	atomic_size_t mem_bytes;
	atomic_size_t mem_peak;
	k32_sock_t listener;
	k32_sock_t wake_r; /* read end of the wake pair (in the poll set) */
	k32_sock_t wake_w; /* write end, used by wakers under mu */
	uint16_t port;
	struct http_tls_server *tls;
	struct http_tls_files files;
	struct k32_task *task;
	struct k32_mutex mu; /* guards slots[].gen/stream_live/woken, signalled, stop, stats */
	bool signalled;	     /* a wake byte is in flight */
	bool stop;	     /* the loop should exit */
	bool any_woken;	     /* some slot has woken set */
	int64_t accept_pause_until; /* accept failed for lack of descriptors: wait until then */
	bool poll_failed;	    /* the poll error was logged once */
	struct http_slot *slots;    /* cfg.max_conns entries */
	uint16_t *free_slots;	    /* stack of free slot indexes */
	uint32_t free_count;
	struct k32_pollfd *pfds;	/* cfg.max_conns + 2 */
	struct http_conn **pconns;	/* connection of pfds[i] */
	struct http_server_stats stats; /* under mu */
	uint64_t conn_seq;
	struct http_hctx lctx;	    /* scratch of the loop (inline handling, error answers) */
	struct http_hctx *workers;  /* worker_count handler tasks' scratch */
	uint32_t worker_count;	    /* cfg.handler_threads */
	struct k32_cond job_cond;   /* signals handler tasks (with mu) */
	struct http_conn *job_head; /* requests waiting for a handler task (under mu) */
	struct http_conn *job_tail;
	/* TLS handshake steps waiting for a handler task (under mu). When both queues hold
	 * jobs, handler tasks take from them in turn (hs_job_next): a client's handshake does
	 * not wait behind every queued fsynced write, nor a reconnect storm's handshakes
	 * starve the requests (strict priority did: 1,000 boards' Lease renewals timed out) */
	struct http_conn *hs_job_head;
	struct http_conn *hs_job_tail;
	bool hs_job_later;	     /* both queues busy: the next take is a request's turn */
	struct http_conn *done_head; /* handled, waiting for the loop (under mu) */
	bool workers_stop;	     /* handler tasks should exit (under mu) */
	uint32_t unauth_count;	     /* unauthenticated connections (loop task; stats mirror) */
	uint32_t hs_count;	     /* sessions in handshake (loop task; stats mirror) */
	uint32_t unauth_max;	     /* unauthenticated connections at most (reserved_auth_pct) */
	uint32_t turn;		     /* loop turns (a connection's first poll: see evict_class) */
};

static k32_status_t conn_queue_error(struct http_conn *c, int status, const char *detail);

/* ---- counting allocator ------------------------------------------------------------------ */

static void *count_alloc(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct http_server *srv = ud;
	void *r = srv->base_alloc->fn(srv->base_alloc->ud, ptr, old_len, new_len);

	if (new_len == 0) {
		if (ptr)
			atomic_fetch_sub(&srv->mem_bytes, old_len);
		return r;
	}
	if (r) {
		size_t cur;

		if (new_len >= old_len)
			cur = atomic_fetch_add(&srv->mem_bytes, new_len - old_len) + new_len -
			      old_len;
		else
			cur = atomic_fetch_sub(&srv->mem_bytes, old_len - new_len) -
			      (old_len - new_len);
		if (cur > atomic_load(&srv->mem_peak))
			atomic_store(&srv->mem_peak, cur);
	}
	return r;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static const struct k32_platform_ops *pl(void)
{
	return k32_plat();
}

static void stat_add(struct http_server *srv, uint64_t *field, int64_t delta)
{
	k32_mutex_lock(&srv->mu);
	*field = (uint64_t)((int64_t)*field + delta);
	k32_mutex_unlock(&srv->mu);
}

static int64_t after(int64_t timeout_us)
{
	if (timeout_us <= 0)
		return K32_FOREVER;
	return (int64_t)k32_now_us() + timeout_us;
}

static size_t out_pending(const struct http_conn *c)
{
	return (c->out.len - c->out_off) + (c->out2.len - c->out2_off);
}

static http_stream_id_t make_id(uint16_t gen, uint16_t slot)
{
	return ((uint32_t)gen << 16) | (uint32_t)(slot + 1u);
}

/* ---- socket I/O (plain or TLS) ------------------------------------------------------------ */

static k32_status_t conn_recv(struct http_conn *c, void *buf, size_t cap, size_t *out_len)
{
	uint32_t want = 0;
	k32_status_t st;

	if (!c->tls)
		return pl()->sock_recv(c->sock, buf, cap, out_len);
	st = http_tls_read(c->tls, buf, cap, out_len, &want, NULL);
	if (st == K32_ERR_SHOULD_WAIT && want == K32_POLL_OUT)
		c->tls_want = K32_POLL_OUT;
	return st;
}

/* Sends queued output. K32_OK when all of it went, SHOULD_WAIT, or an error. */
static k32_status_t conn_flush(struct http_conn *c)
{
	bool progress = false;
	k32_status_t st = K32_OK;

	while (out_pending(c) > 0) {
		struct k32_buf *b = c->out.len > c->out_off ? &c->out : &c->out2;
		size_t *off = b == &c->out ? &c->out_off : &c->out2_off;
		size_t len = b->len - *off, sent = 0;

		if (c->tls) {
			uint32_t want = 0;

			if (c->tls_pending_len)
				len = c->tls_pending_len;
			else if (len > TLS_RECORD_MAX)
				len = TLS_RECORD_MAX;
			st = http_tls_write(c->tls, b->data + *off, len, &sent, &want, NULL);
			if (st == K32_ERR_SHOULD_WAIT) {
				c->tls_pending_len = len;
				c->tls_want = want;
				break;
			}
			c->tls_pending_len = 0;
		} else {
			st = pl()->sock_send(c->sock, b->data + *off, len, &sent);
		}
		if (st != K32_OK)
			break;
		*off += sent;
		progress = true;
	}
	if (progress && c->state != CS_LINGER)
		c->deadline_us = after(c->srv->cfg.write_timeout_us);
	if (out_pending(c) == 0) {
		k32_buf_fini(&c->out);
		k32_buf_fini(&c->out2);
		k32_buf_init(&c->out, &c->srv->alloc, SIZE_MAX / 2, "response head");
		k32_buf_init(&c->out2, &c->srv->alloc, SIZE_MAX / 2, "response body");
		c->out_off = 0;
		c->out2_off = 0;
		return K32_OK;
	}
	return st;
}

/* ---- slots and connections --------------------------------------------------------------- */

static void stream_end(struct http_conn *c, k32_status_t why)
{
	struct http_server *srv = c->srv;
	struct http_stream *st = &c->st;
	const struct http_stream_ops *ops = st->ops;

	if (!ops)
		return;
	k32_mutex_lock(&srv->mu);
	srv->slots[c->slot].stream_live = false;
	srv->slots[c->slot].woken = false;
	srv->slots[c->slot].gen++;
	srv->stats.streams_open--;
	k32_mutex_unlock(&srv->mu);
	st->ops = NULL;
	if (ops->close)
		ops->close(st->ctx, why);
}

static void reqstate_free(struct http_conn *c)
{
	if (!c->rs)
		return;
	k32_buf_fini(&c->rs->body);
	k32_free(&c->srv->alloc, c->rs, sizeof(*c->rs));
	c->rs = NULL;
}

static void conn_close(struct http_conn *c, k32_status_t why)
{
	struct http_server *srv = c->srv;

	stream_end(c, why);
	if (c->tls) {
		if (c->tls_ready)
			http_tls_close_notify(c->tls);
		http_tls_conn_free(c->tls);
	}
	pl()->sock_close(c->sock);
	reqstate_free(c);
	k32_buf_fini(&c->in);
	k32_buf_fini(&c->out);
	k32_buf_fini(&c->out2);
	k32_mutex_lock(&srv->mu);
	srv->slots[c->slot].conn = NULL;
	srv->slots[c->slot].gen++;
	srv->slots[c->slot].woken = false;
	srv->free_slots[srv->free_count++] = c->slot;
	srv->stats.conns_open--;
	if (c->park_counted)
		srv->stats.tls_parked--;
	if (!c->trusted)
		srv->stats.unauth_open = --srv->unauth_count;
	if (c->hs_counted)
		srv->stats.handshakes = --srv->hs_count;
	k32_mutex_unlock(&srv->mu);
	k32_free(&srv->alloc, c, sizeof(*c));
}

/* ---- admission (see the top of the file) --------------------------------------------------- */

/*
 * How readily an unauthenticated connection is closed to admit a newer one (lower first):
 *   0  answered and closing anyway (WRITE, LINGER)
 *   1  idle: nothing received since accept, or since its handshake, for
 *      K32_HTTP_IDLE_EVICT_MS (and through a poll: bytes already there are read first)
 *   2  active: handshaking, waiting for a handshake slot, or in the middle of its request
 * -1: not closable here (authenticated, or a handler task holds it).
 */
static int evict_class(const struct http_conn *c)
{
	const struct http_server *srv = c->srv;

	if (c->trusted || c->state == CS_HANDLER)
		return -1;
	if (c->state == CS_WRITE || c->state == CS_LINGER)
		return 0;
	if (c->turn != srv->turn &&
	    (int64_t)k32_now_us() - c->idle_since_us >= (int64_t)K32_HTTP_IDLE_EVICT_MS * 1000 &&
	    ((c->state == CS_HANDSHAKE && !c->tls && !c->hs_waiting) ||
	     (c->state == CS_READ && !c->rs && c->in.len == 0)))
		return 1;
	return 2;
}

/* Closes the oldest unauthenticated connection of class max_class or lower (of addr only,
 * when same_addr), lowest class first. false when there is none. */
static bool evict_oldest(struct http_server *srv, uint32_t addr, bool same_addr, int max_class)
{
	struct http_conn *best = NULL;
	int best_class = 3;

	for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
		struct http_conn *c = srv->slots[i].conn;
		int k;

		if (!c || (same_addr && c->addr != addr))
			continue;
		k = evict_class(c);
		if (k < 0 || k > max_class)
			continue;
		if (!best || k < best_class || (k == best_class && c->seq < best->seq)) {
			best = c;
			best_class = k;
		}
	}
	if (!best)
		return false;
	stat_add(srv, &srv->stats.conns_evicted, 1);
	conn_close(best, K32_ERR_CANCELED);
	return true;
}

/*
 * Makes room for a new connection from addr (closing older unauthenticated ones). NULL to
 * admit it; otherwise the reason it is refused (it still gets a slot if one is free, to be
 * told so in a 503). Past max_unauth_per_addr only an idle or closing connection of the
 * address is closed (none: admitted all the same, the global bound still holds); past the
 * global bound any unauthenticated connection the loop holds, the oldest idle first.
 */
static const char *admit(struct http_server *srv, uint32_t addr)
{
	const struct http_server_config *cfg = &srv->cfg;
	uint32_t total = 0, unauth = 0;

	for (uint32_t i = 0; i < cfg->max_conns; i++) {
		const struct http_conn *c = srv->slots[i].conn;

		if (c && c->addr == addr) {
			total++;
			unauth += !c->trusted;
		}
	}
	if (total >= cfg->max_conns_per_addr && !evict_oldest(srv, addr, true, 2))
		return "connections from this address at max_conns_per_addr "
		       "(K32_HTTP_MAX_CONNS_PER_ADDR); close some or retry later";
	if (unauth >= cfg->max_unauth_per_addr)
		(void)evict_oldest(srv, addr, true, 1);
	if ((srv->unauth_count >= srv->unauth_max || srv->free_count == 0) &&
	    !evict_oldest(srv, 0, false, 2))
		return "server at max_conns (K32_HTTP_MAX_CONNS) with no unauthenticated "
		       "connection to close; retry later";
	return NULL;
}

/*
 * No slot at all: refuse without one. Plain HTTP gets a short 503; a TLS client a fatal
 * alert record (internal_error), which a TLS client reports as the server refusing, where
 * plain text would be a protocol error inside its handshake. Best effort: the ClientHello
 * already here is read first so the close does not turn into a reset over unread bytes.
 */
static void refuse_now(struct http_server *srv, k32_sock_t sock)
{
	static const char busy[] =
	    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 55\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
	    "server at max_conns (K32_HTTP_MAX_CONNS); retry later\r\n";
	/* TLS record: alert (21), TLS 1.2, 2 bytes: fatal (2), internal_error (80) */
	static const uint8_t alert[] = {21, 3, 3, 0, 2, 2, 80};
	uint8_t scratch[512];
	size_t n;

	stat_add(srv, &srv->stats.conns_refused, 1);
	if (srv->tls) {
		for (int i = 0;
		     i < 8 && pl()->sock_recv(sock, scratch, sizeof(scratch), &n) == K32_OK; i++)
			;
		pl()->sock_send(sock, alert, sizeof(alert), &n);
	} else {
		pl()->sock_send(sock, busy, sizeof(busy) - 1, &n);
	}
	pl()->sock_close(sock);
}

/*
 * All handshake slots busy: marks the oldest unauthenticated handshake older than
 * K32_HTTP_HANDSHAKE_STALL_MS to be closed at the end of this turn (closing it here could
 * free a connection the loop is about to drive). true if one was marked.
 */
static bool hs_evict_stalled(struct http_server *srv)
{
	int64_t now = (int64_t)k32_now_us();
	struct http_conn *old = NULL;

	for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
		struct http_conn *c = srv->slots[i].conn;

		if (!c || !c->hs_counted || c->trusted || c->evict || c->state == CS_HANDLER ||
		    now - c->hs_start_us < (int64_t)K32_HTTP_HANDSHAKE_STALL_MS * 1000)
			continue;
		if (!old || c->hs_start_us < old->hs_start_us)
			old = c;
	}
	if (old)
		old->evict = true;
	return old != NULL;
}

/* Gives c a TLS session if a handshake slot is free (else it waits, unpolled). */
static bool hs_begin(struct http_conn *c)
{
	struct http_server *srv = c->srv;

	if (srv->hs_count >= srv->cfg.max_handshakes) {
		(void)hs_evict_stalled(srv);
		c->hs_waiting = true;
		return false;
	}
	c->hs_waiting = false;
	if (http_tls_conn_new_server(srv->tls, c->sock, &c->tls, NULL) != K32_OK)
		return false; /* no memory: the caller closes */
	c->hs_counted = true;
	c->hs_start_us = (int64_t)k32_now_us();
	k32_mutex_lock(&srv->mu);
	srv->stats.handshakes = ++srv->hs_count;
	k32_mutex_unlock(&srv->mu);
	return true;
}

static void hs_end(struct http_conn *c)
{
	struct http_server *srv = c->srv;

	if (!c->hs_counted)
		return;
	c->hs_counted = false;
	k32_mutex_lock(&srv->mu);
	srv->stats.handshakes = --srv->hs_count;
	k32_mutex_unlock(&srv->mu);
}

static void conn_new(struct http_server *srv, k32_sock_t sock)
{
	struct http_conn *c;
	const char *refuse;
	uint32_t addr = 0;
	uint16_t slot;

	if (pl()->sock_set_nonblock(sock, true) != K32_OK) {
		pl()->sock_close(sock);
		return;
	}
	if (pl()->sock_peer_addr)
		(void)pl()->sock_peer_addr(sock, &addr);
	refuse = admit(srv, addr);
	k32_mutex_lock(&srv->mu);
	if (srv->free_count == 0) {
		k32_mutex_unlock(&srv->mu);
		refuse_now(srv, sock);
		return;
	}
	slot = srv->free_slots[--srv->free_count];
	k32_mutex_unlock(&srv->mu);

	c = k32_calloc(&srv->alloc, sizeof(*c));
	if (!c) {
		pl()->sock_close(sock);
		k32_mutex_lock(&srv->mu);
		srv->free_slots[srv->free_count++] = slot;
		k32_mutex_unlock(&srv->mu);
		return;
	}
	c->srv = srv;
	c->sock = sock;
	c->slot = slot;
	c->addr = addr;
	c->refuse = refuse;
	c->seq = ++srv->conn_seq;
	c->turn = srv->turn;
	k32_buf_init(&c->in, &srv->alloc, srv->cfg.max_header_bytes + 2 * HTTP_READ_CHUNK,
		     "request input");
	k32_buf_init(&c->out, &srv->alloc, SIZE_MAX / 2, "response head");
	k32_buf_init(&c->out2, &srv->alloc, SIZE_MAX / 2, "response body");
	c->st.conn = c;
	c->st.timer_us = K32_FOREVER;
	if (srv->tls) {
		/* the session comes with the first byte (hs_begin) */
		c->state = CS_HANDSHAKE;
		c->deadline_us = after(srv->cfg.handshake_timeout_us);
	} else {
		c->state = CS_READ;
		c->deadline_us = after(srv->cfg.first_request_timeout_us);
	}
	c->admit_deadline_us = c->deadline_us;
	c->idle_since_us = (int64_t)k32_now_us();
	k32_mutex_lock(&srv->mu);
	srv->slots[slot].conn = c;
	srv->slots[slot].woken = false;
	srv->slots[slot].stream_live = false;
	srv->stats.conns_open++;
	srv->stats.conns_accepted++;
	srv->stats.unauth_open = ++srv->unauth_count;
	if (refuse)
		srv->stats.conns_refused++;
	if (srv->stats.conns_open > srv->stats.conns_peak)
		srv->stats.conns_peak = srv->stats.conns_open;
	k32_mutex_unlock(&srv->mu);
	if (refuse && !srv->tls && conn_queue_error(c, 503, refuse) != K32_OK)
		conn_close(c, K32_ERR_NO_MEMORY);
}

/* ---- requests ------------------------------------------------------------------------------ */

static struct k32_str hdr_value(const struct http_msgp *mp, const char *name)
{
	for (uint32_t i = 0; i < mp->header_count; i++) {
		const struct http_hdr_off *h = &mp->hdr[i];

		if (http_str_ieq(http_msgp_str(mp, h->name_off, h->name_len), name))
			return k32_str_trim(http_msgp_str(mp, h->val_off, h->val_len));
	}
	return (struct k32_str){"", 0};
}

static bool ieq_prefix(struct k32_str s, const char *prefix)
{
	size_t n = strlen(prefix);
	struct k32_str head = {s.p, n};

	return s.len >= n && http_str_ieq(head, prefix);
}

static void build_request(struct http_conn *c, struct http_hctx *hc, struct http_request *req)
{
	struct http_server *srv = c->srv;
	struct http_msgp *mp = &c->rs->mp;
	struct k32_str q;

	memset(req, 0, sizeof(*req));
	req->method = http_method_str((enum http_method)mp->p.method);
	req->target = http_msgp_str(mp, mp->url_off, mp->url_len);
	if (k32_str_cut(req->target, '?', &req->path, &q))
		req->query = q;
	else
		req->query = (struct k32_str){req->target.p + req->target.len, 0};
	for (uint32_t i = 0; i < mp->header_count; i++) {
		const struct http_hdr_off *h = &mp->hdr[i];
		struct http_header *hd = &hc->hdrs[i];

		hd->name = http_msgp_str(mp, h->name_off, h->name_len);
		hd->value = k32_str_trim(http_msgp_str(mp, h->val_off, h->val_len));
		if (ieq_prefix(hd->name, "authorization") && hd->name.len == 13 &&
		    ieq_prefix(hd->value, "bearer ")) {
			struct k32_str tok = {hd->value.p + 7, hd->value.len - 7};

			req->bearer_token = k32_str_trim(tok);
		}
	}
	req->headers = hc->hdrs;
	req->header_count = mp->header_count;
	req->body = c->rs->body.data ? c->rs->body.data : (const uint8_t *)"";
	req->body_len = c->rs->body.len;
	req->tls = c->tls != NULL;
	req->keep_alive = c->keep_alive;
	req->http_major = (uint8_t)mp->p.http_major;
	req->http_minor = (uint8_t)mp->p.http_minor;
	req->conn_seq = c->seq;
	req->server = srv;
	if (!req->bearer_token.p)
		req->bearer_token = (struct k32_str){"", 0};
}

static void resp_reset(struct http_response *r, struct http_conn *c)
{
	r->status = 200;
	r->close = false;
	k32_buf_reset(&r->headers);
	k32_buf_reset(&r->body);
	c->st.ops = NULL;
	c->st.ctx = NULL;
	c->st.events = 0;
	r->stream_ = &c->st;
}

/* Queues the head (and takes the body) of r for c. */
static k32_status_t queue_response(struct http_conn *c, struct http_response *r, bool head_only,
				   bool minor0)
{
	struct http_server *srv = c->srv;
	bool stream = c->st.ops != NULL;
	bool no_body = r->status < 200 || r->status == 204 || r->status == 304;
	k32_status_t st;
	int status = r->status;

	if (status < 100 || status > 599)
		status = 500;
	if (r->close)
		c->keep_alive = false;
	if (stream && minor0)
		c->keep_alive = false;
	bool upgraded = stream && c->st.upgraded;
	if (upgraded)
		c->keep_alive = true; /* no "Connection: close": the handler sent Upgrade */
	st = k32_buf_printf(&c->out, NULL, "HTTP/1.1 %d %s\r\n%s", status,
			    http_status_reason(status), k32_buf_cstr(&r->headers));
	if (st == K32_OK && stream && !minor0 && !upgraded)
		st = k32_buf_append_str(&c->out, "Transfer-Encoding: chunked\r\n", NULL);
	if (st == K32_OK && !stream && !no_body)
		st = k32_buf_printf(&c->out, NULL, "Content-Length: %zu\r\n", r->body.len);
	if (st == K32_OK && !c->keep_alive)
		st = k32_buf_append_str(&c->out, "Connection: close\r\n", NULL);
	else if (st == K32_OK && minor0)
		st = k32_buf_append_str(&c->out, "Connection: keep-alive\r\n", NULL);
	if (st == K32_OK)
		st = k32_buf_append(&c->out, "\r\n", 2, NULL);
	if (upgraded)
		c->keep_alive = false; /* the connection ends with the tunnel */
	if (st != K32_OK)
		return st;
	if (!stream && !head_only && !no_body && r->body.len > 0 &&
	    c->out.len + r->body.len <= HTTP_COALESCE_MAX) {
		/* A small body goes right after the head: one TLS record and one send, not two
		 * (a cached gzip list of 100 pods is ~5 KiB). */
		st = k32_buf_append(&c->out, r->body.data, r->body.len, NULL);
		if (st != K32_OK)
			return st;
	} else if (!stream && !head_only && !no_body && r->body.len > 0) {
		/* Hand the body buffer over instead of copying it. */
		k32_buf_fini(&c->out2);
		c->out2 = r->body;
		c->out2_off = 0;
		k32_buf_init(&r->body, &srv->alloc, srv->cfg.max_response_bytes, "response body");
	}
	return K32_OK;
}

static void start_stream(struct http_conn *c, bool minor0)
{
	struct http_stream *st = &c->st;

	/* |=: with handler tasks a wake may already have been collected (it stays pending). */
	st->events |= HTTP_STREAM_EV_START;
	st->timer_us = K32_FOREVER;
	st->blocked = false;
	st->ending = false;
	st->chunked = !minor0 && !st->upgraded;
	st->why = K32_OK;
	if (st->upgraded && c->in.len > 0)
		st->events |= HTTP_STREAM_EV_READABLE; /* sent right behind the request */
	c->state = CS_STREAM;
	c->deadline_us = K32_FOREVER;
}

static bool req_minor0(const struct http_conn *c)
{
	return c->rs->mp.p.http_major == 1 && c->rs->mp.p.http_minor == 0;
}

/* Has the handler set a Content-Encoding of its own (e.g. a cached gzip body)? */
static bool has_content_encoding(const struct k32_buf *headers)
{
	const char *h = k32_buf_cstr(headers);
	while (h && *h) {
		const char *eol = strstr(h, "\r\n");
		size_t n = eol ? (size_t)(eol - h) : strlen(h);
		if (n >= 17 && http_str_ieq((struct k32_str){h, 17}, "Content-Encoding:"))
			return true;
		h = eol ? eol + 2 : NULL;
	}
	return false;
}

/*
 * Compresses a whole answer of gzip_min_bytes or more for a client whose Accept-Encoding
 * takes gzip. The compressed copy must be smaller than the body (so it fits the body's own
 * cap); if anything fails the body goes out plain.
 */
static void maybe_gzip(struct http_server *srv, const struct http_request *req,
		       struct http_response *r)
{
	struct k32_buf z;
	struct k32_err err;

	if (!srv->cfg.gzip_min_bytes || r->body.len < srv->cfg.gzip_min_bytes || r->status < 200 ||
	    r->status >= 300 || r->status == 204 || !http_request_accepts_gzip(req) ||
	    has_content_encoding(&r->headers))
		return;
	k32_err_clear(&err);
	k32_buf_init(&z, &srv->alloc, r->body.len - 1, "gzip response body");
	if (http_gzip(r->body.data, r->body.len, &z, &err) != K32_OK ||
	    http_response_header(r, "Content-Encoding", "gzip") != K32_OK) {
		k32_buf_fini(&z);
		return;
	}
	http_response_header(r, "Vary", "Accept-Encoding");
	k32_mutex_lock(&srv->mu);
	srv->stats.gzip_responses++;
	srv->stats.gzip_in_bytes += r->body.len;
	srv->stats.gzip_out_bytes += z.len;
	k32_mutex_unlock(&srv->mu);
	k32_buf_fini(&r->body);
	r->body = z;
	r->body.max_len = srv->cfg.max_response_bytes;
}

/*
 * Runs authenticate and the handler for the complete request in c->rs with the scratch of
 * hc, and queues the answer into c's output. On the loop task, or on a handler task while c
 * is in CS_HANDLER (the loop does not touch c then). The status goes to c->job_status.
 */
static void handle_request(struct http_conn *c, struct http_hctx *hc)
{
	struct http_server *srv = c->srv;
	struct http_msgp *mp = &c->rs->mp;
	struct http_response *r = &hc->resp;
	struct http_request req;
	bool run = true;

	build_request(c, hc, &req);
	resp_reset(r, c);
	stat_add(srv, &srv->stats.requests, 1);
	if (srv->cfg.authenticate)
		run = srv->cfg.authenticate(srv->cfg.ctx, &req, r);
	/* c->trusted is the loop's, stable while c is in this task's hands */
	c->auth_ok = run && (!srv->cfg.authenticate || req.identity);
	if (!c->trusted && !c->auth_ok)
		c->keep_alive = false; /* an unauthenticated connection ends with its answer */
	if (run)
		srv->cfg.handler(srv->cfg.ctx, &req, r);
	r->stream_ = NULL;
	if (!c->st.ops && mp->p.method != HTTP_HEAD)
		maybe_gzip(srv, &req, r);
	c->job_status = queue_response(c, r, mp->p.method == HTTP_HEAD, req_minor0(c));
	k32_buf_reset(&r->headers);
	if (r->body.cap > 64 * 1024) {
		k32_buf_fini(&r->body);
		k32_buf_init(&r->body, &srv->alloc, srv->cfg.max_response_bytes, "response body");
	}
}

/* Loop task, after handle_request: drop the request, start writing or streaming. */
static enum drive_result finish_request(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	bool minor0 = req_minor0(c);

	if (c->auth_ok && !c->trusted) {
		c->trusted = true;
		k32_mutex_lock(&srv->mu);
		srv->stats.unauth_open = --srv->unauth_count;
		k32_mutex_unlock(&srv->mu);
	}
	/* The request's bytes and state are no longer needed. */
	k32_buf_consume(&c->in, http_msgp_consumed(&c->rs->mp));
	reqstate_free(c);
	if (c->in.len == 0)
		k32_buf_fini(&c->in);
	if (c->job_status != K32_OK) {
		K32_LOGW(HTTP_MOD, "conn %llu: cannot queue response: %s; closing",
			 (unsigned long long)c->seq, k32_status_name(c->job_status));
		conn_close(c, K32_ERR_NO_MEMORY);
		return DR_CLOSED;
	}
	if (c->st.ops) {
		start_stream(c, minor0);
	} else {
		c->state = CS_WRITE;
		c->deadline_us = after(srv->cfg.write_timeout_us);
	}
	return DR_AGAIN;
}

static enum drive_result enqueue(struct http_conn *c);

/* The request in c->rs is complete: handle it here, or hand it to a handler task. */
static enum drive_result dispatch(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	struct http_msgp *mp = &c->rs->mp;

	c->keep_alive = http_should_keep_alive(&mp->p) && !mp->p.upgrade;
	if (srv->worker_count == 0) {
		handle_request(c, &srv->lctx);
		return finish_request(c);
	}
	c->deadline_us = K32_FOREVER;
	c->job_handshake = false;
	return enqueue(c);
}

/*
 * Hands c to the handler tasks (CS_HANDLER: the loop leaves it alone, its deadline waits)
 * until it comes back on the done queue.
 */
static enum drive_result enqueue(struct http_conn *c)
{
	struct http_server *srv = c->srv;

	struct http_conn **head = c->job_handshake ? &srv->hs_job_head : &srv->job_head;
	struct http_conn **tail = c->job_handshake ? &srv->hs_job_tail : &srv->job_tail;

	c->state = CS_HANDLER;
	c->again = false;
	c->job_next = NULL;
	k32_mutex_lock(&srv->mu);
	if (*tail)
		(*tail)->job_next = c;
	else
		*head = c;
	*tail = c;
	srv->stats.jobs_waiting++;
	pl()->cond_signal(&srv->job_cond);
	k32_mutex_unlock(&srv->mu);
	return DR_WAIT;
}

/* A handler task: takes complete requests off the job queue until the server stops. */
static void worker_main(void *arg)
{
	struct http_hctx *hc = arg;
	struct http_server *srv = hc->srv;

	k32_mutex_lock(&srv->mu);
	for (;;) {
		struct http_conn *c;
		size_t sent;

		while (!srv->workers_stop && !srv->job_head && !srv->hs_job_head)
			pl()->cond_wait(&srv->job_cond, &srv->mu, K32_FOREVER);
		if (srv->workers_stop)
			break;
		bool hs = srv->hs_job_head && (!srv->job_head || !srv->hs_job_later);

		if (srv->hs_job_head && srv->job_head)
			srv->hs_job_later = hs;
		if (hs) {
			c = srv->hs_job_head;
			srv->hs_job_head = c->job_next;
			if (!srv->hs_job_head)
				srv->hs_job_tail = NULL;
		} else {
			c = srv->job_head;
			srv->job_head = c->job_next;
			if (!srv->job_head)
				srv->job_tail = NULL;
		}
		srv->stats.jobs_waiting--;
		if (c->job_handshake)
			srv->stats.hs_steps++;
		k32_mutex_unlock(&srv->mu);

		if (c->job_handshake) {
			uint32_t want = 0;

			/* As far as the bytes at hand go; SHOULD_WAIT sends it back to poll. */
			c->job_status = http_tls_handshake(c->tls, &want, NULL);
			c->tls_want = want;
			goto done;
		}
		handle_request(c, hc);
		/* Send the answer from here too: the connection is this task's until it is
		 * back on the done queue, so its socket and TLS session are (the loop skips
		 * it). Encrypting a big list then runs on this task, beside the loop, and
		 * what the socket does not take now the loop sends later. A stream's
		 * head waits for the loop (pull runs there). */
		if (c->job_status == K32_OK && !c->st.ops)
			(void)conn_flush(c);
	done:
		k32_mutex_lock(&srv->mu);
		c->job_next = srv->done_head;
		srv->done_head = c;
		if (!srv->signalled) {
			srv->signalled = true;
			pl()->sock_send(srv->wake_w, "d", 1, &sent);
		}
	}
	k32_mutex_unlock(&srv->mu);
}

static k32_status_t conn_queue_error(struct http_conn *c, int status, const char *detail)
{
	struct http_server *srv = c->srv;
	k32_status_t st;

	/* A TLS record half sent (an interim 100 Continue) must be finished byte for byte;
	 * replacing the output under it is not possible, so such a connection just closes. */
	if (c->tls_pending_len)
		return K32_ERR_BAD_STATE;
	k32_buf_reset(&c->out);
	c->out_off = 0;
	c->keep_alive = false;
	if (srv->cfg.error_body) {
		struct http_response *r = &srv->lctx.resp;

		resp_reset(r, c);
		r->stream_ = NULL; /* no streams from the error hook */
		r->status = status;
		srv->cfg.error_body(srv->cfg.ctx, status, detail, r);
		c->keep_alive = false;
		st = queue_response(c, r, false, false);
		k32_buf_reset(&r->headers);
		k32_buf_reset(&r->body);
	} else {
		st = k32_buf_printf(&c->out, NULL,
				    "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
				    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
				    status, http_status_reason(status), strlen(detail) + 1, detail);
	}
	c->state = CS_LINGER;
	c->linger_end_us = after(LINGER_US);
	c->deadline_us = c->linger_end_us;
	reqstate_free(c);
	k32_buf_reset(&c->in);
	stat_add(c->srv, &c->srv->stats.errors_4xx, 1);
	return st;
}

/* Steps once the head of a request is known: body deadline, 100-continue. */
static void head_seen(struct http_conn *c)
{
	struct http_msgp *mp = &c->rs->mp;

	c->rs->head_seen = true;
	c->first_head = true;
	c->deadline_us = after(c->srv->cfg.body_timeout_us);
	if (!mp->complete && http_str_ieq(hdr_value(mp, "expect"), "100-continue") &&
	    c->rs->body.len == 0)
		k32_buf_append_str(&c->out, "HTTP/1.1 100 Continue\r\n\r\n", NULL);
}

static enum drive_result read_request(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	struct k32_err err;
	k32_status_t st;

	if (!c->rs) {
		c->rs = k32_calloc(&srv->alloc, sizeof(*c->rs));
		if (!c->rs) {
			conn_close(c, K32_ERR_NO_MEMORY);
			return DR_CLOSED;
		}
		k32_buf_init(&c->rs->body, &srv->alloc, srv->cfg.max_body_bytes, "request body");
		http_msgp_init(&c->rs->mp, HTTP_REQUEST, &c->in, srv->cfg.max_header_bytes,
			       srv->cfg.max_body_bytes, &c->rs->body);
		if (c->in.len > 0)
			c->deadline_us = after(srv->cfg.header_timeout_us);
	}
	for (;;) {
		struct http_msgp *mp = &c->rs->mp;
		size_t got = 0;
		bool had = mp->parsed < c->in.len;

		if (had) {
			st = http_msgp_feed(mp, &err);
			if (st != K32_OK) {
				if (conn_queue_error(c, mp->error_status ? mp->error_status : 400,
						     err.msg) != K32_OK) {
					conn_close(c, K32_ERR_NO_MEMORY);
					return DR_CLOSED;
				}
				return DR_AGAIN;
			}
			if (mp->headers_done && !c->rs->head_seen)
				head_seen(c);
			if (mp->complete)
				return dispatch(c);
		}
		if (out_pending(c) > 0) {
			st = conn_flush(c);
			if (st != K32_OK && st != K32_ERR_SHOULD_WAIT) {
				conn_close(c, K32_ERR_PEER_CLOSED);
				return DR_CLOSED;
			}
		}
		st = k32_buf_reserve(&c->in, HTTP_READ_CHUNK, NULL);
		if (st != K32_OK) {
			if (conn_queue_error(c, 431, "request head too large (max_header_bytes)") !=
			    K32_OK) {
				conn_close(c, K32_ERR_NO_MEMORY);
				return DR_CLOSED;
			}
			return DR_AGAIN;
		}
		st = conn_recv(c, c->in.data + c->in.len, HTTP_READ_CHUNK, &got);
		if (st == K32_ERR_SHOULD_WAIT) {
			if (c->in.len == 0 && c->rs->mp.parsed == 0) {
				/* Idle: drop the buffers until the next request starts. */
				k32_buf_fini(&c->in);
				reqstate_free(c);
			}
			return DR_WAIT;
		}
		if (st != K32_OK) {
			conn_close(c, K32_ERR_PEER_CLOSED);
			return DR_CLOSED;
		}
		if (c->in.len == 0 && mp->parsed == 0)
			c->deadline_us = after(srv->cfg.header_timeout_us);
		c->in.len += got;
		c->in.data[c->in.len] = 0;
	}
}

/* ---- streams ------------------------------------------------------------------------------ */

k32_status_t http_response_stream(struct http_response *resp, const struct http_stream_ops *ops,
				  void *ctx, http_stream_id_t *out_id)
{
	struct http_stream *st = resp->stream_;
	struct http_conn *c;
	struct http_server *srv;
	http_stream_id_t id;

	if (!st || !ops || !ops->pull)
		return K32_ERR_INVALID_ARGS;
	if (st->ops)
		return K32_ERR_BAD_STATE;
	c = st->conn;
	srv = c->srv;
	st->ops = ops;
	st->ctx = ctx;
	k32_mutex_lock(&srv->mu);
	srv->slots[c->slot].stream_live = true;
	srv->slots[c->slot].woken = false;
	srv->stats.streams_open++;
	id = make_id(srv->slots[c->slot].gen, c->slot);
	k32_mutex_unlock(&srv->mu);
	if (out_id)
		*out_id = id;
	return K32_OK;
}

k32_status_t http_response_upgrade(struct http_response *resp, const struct http_stream_ops *ops,
				   void *ctx, http_stream_id_t *out_id)
{
	k32_status_t st = http_response_stream(resp, ops, ctx, out_id);
	if (st == K32_OK) {
		resp->stream_->upgraded = true;
		resp->status = 101;
	}
	return st;
}

size_t http_stream_read(struct http_stream *s, void *buf, size_t cap)
{
	struct http_conn *c = s->conn;
	size_t n = c->in.len < cap ? c->in.len : cap;
	if (!s->upgraded || n == 0)
		return 0;
	memcpy(buf, c->in.data, n);
	k32_buf_consume(&c->in, n);
	return n;
}

k32_status_t http_stream_write(struct http_stream *s, const void *data, size_t len)
{
	struct http_conn *c = s->conn;
	k32_status_t st;
	size_t before = c->out.len;

	if (len == 0)
		return K32_OK;
	if (s->ending)
		return K32_ERR_BAD_STATE;
	if (out_pending(c) >= c->srv->cfg.stream_buf_bytes) {
		s->blocked = true;
		return K32_ERR_SHOULD_WAIT;
	}
	if (s->chunked)
		st = k32_buf_printf(&c->out, NULL, "%zx\r\n", len);
	else
		st = K32_OK;
	if (st == K32_OK)
		st = k32_buf_append(&c->out, data, len, NULL);
	if (st == K32_OK && s->chunked)
		st = k32_buf_append(&c->out, "\r\n", 2, NULL);
	if (st != K32_OK) {
		c->out.len = before;
		if (c->out.data)
			c->out.data[before] = 0;
		return K32_ERR_NO_MEMORY;
	}
	return K32_OK;
}

void http_stream_set_timer(struct http_stream *s, int64_t deadline_us)
{
	s->timer_us = deadline_us < 0 ? K32_FOREVER : deadline_us;
}

k32_status_t http_server_stream_wake(struct http_server *srv, http_stream_id_t id)
{
	uint32_t idx = (id & 0xffffu);
	k32_status_t st = K32_ERR_NOT_FOUND;

	if (!srv || idx == 0 || idx > srv->cfg.max_conns)
		return K32_ERR_NOT_FOUND;
	idx--;
	k32_mutex_lock(&srv->mu);
	if (srv->slots[idx].conn && srv->slots[idx].stream_live &&
	    srv->slots[idx].gen == (uint16_t)(id >> 16)) {
		srv->slots[idx].woken = true;
		srv->any_woken = true;
		st = K32_OK;
		if (!srv->signalled) {
			size_t sent;

			srv->signalled = true;
			pl()->sock_send(srv->wake_w, "w", 1, &sent);
		}
	}
	k32_mutex_unlock(&srv->mu);
	return st;
}

/* Runs the stream: flush, pull when there is a reason, end it when pull says so. */
static enum drive_result stream_step(struct http_conn *c)
{
	struct http_stream *s = &c->st;
	k32_status_t st = conn_flush(c);
	uint32_t ev;

	if (st != K32_OK && st != K32_ERR_SHOULD_WAIT) {
		conn_close(c, K32_ERR_PEER_CLOSED);
		return DR_CLOSED;
	}
	if (s->ending) {
		if (out_pending(c) > 0)
			return DR_WAIT;
		stream_end(c, s->why);
		if (!c->keep_alive) {
			conn_close(c, s->why);
			return DR_CLOSED;
		}
		c->state = CS_READ;
		c->deadline_us = after(c->srv->cfg.idle_timeout_us);
		return DR_AGAIN;
	}
	if (s->blocked && out_pending(c) == 0) {
		s->blocked = false;
		s->events |= HTTP_STREAM_EV_WRITABLE;
	}
	if (s->timer_us != K32_FOREVER && (int64_t)k32_now_us() >= s->timer_us) {
		s->timer_us = K32_FOREVER;
		s->events |= HTTP_STREAM_EV_TIMER;
	}
	ev = s->events;
	if (ev == 0 || s->blocked) {
		if (out_pending(c) == 0)
			c->deadline_us = K32_FOREVER;
		else if (c->deadline_us == K32_FOREVER)
			c->deadline_us = after(c->srv->cfg.write_timeout_us);
		return DR_WAIT;
	}
	s->events = 0;
	st = s->ops->pull(s->ctx, s, ev);
	if (st != K32_OK) {
		s->ending = true;
		s->why = st;
		if (s->chunked && k32_buf_append_str(&c->out, "0\r\n\r\n", NULL) != K32_OK) {
			conn_close(c, K32_ERR_NO_MEMORY);
			return DR_CLOSED;
		}
		if (!s->chunked)
			c->keep_alive = false;
	}
	if (out_pending(c) > 0 && c->deadline_us == K32_FOREVER)
		c->deadline_us = after(c->srv->cfg.write_timeout_us);
	return DR_AGAIN;
}

/* A stream connection became readable: keep bytes for later, notice a departed client. */
static enum drive_result stream_read(struct http_conn *c)
{
	uint8_t scratch[256];

	for (;;) {
		size_t got = 0;
		k32_status_t st;

		if (c->in.len + sizeof(scratch) > c->in.max_len)
			return DR_WAIT; /* pipelined bytes wait; stop reading */
		st = conn_recv(c, scratch, sizeof(scratch), &got);
		if (st == K32_ERR_SHOULD_WAIT)
			return DR_WAIT;
		if (st != K32_OK) {
			conn_close(c, K32_ERR_PEER_CLOSED);
			return DR_CLOSED;
		}
		if (k32_buf_append(&c->in, scratch, got, NULL) != K32_OK)
			return DR_WAIT;
		if (c->st.upgraded && got > 0)
			c->st.events |= HTTP_STREAM_EV_READABLE;
	}
}

/* ---- the state machine --------------------------------------------------------------------- */

/* LINGER: nothing to read right now; once the answer is out, wait only a quiet spell. */
static enum drive_result linger_quiet(struct http_conn *c)
{
	if (out_pending(c) == 0) {
		int64_t quiet = after(LINGER_QUIET_US);

		c->deadline_us = quiet < c->linger_end_us ? quiet : c->linger_end_us;
	}
	return DR_WAIT;
}

static enum drive_result linger_step(struct http_conn *c)
{
	k32_status_t st = conn_flush(c);
	uint8_t scratch[512];

	if (st != K32_OK && st != K32_ERR_SHOULD_WAIT) {
		conn_close(c, K32_ERR_PEER_CLOSED);
		return DR_CLOSED;
	}
	while (!c->peer_eof) {
		size_t got;
		st = conn_recv(c, scratch, sizeof(scratch), &got);
		if (st == K32_ERR_SHOULD_WAIT)
			return linger_quiet(c);
		if (st != K32_OK)
			c->peer_eof = true;
	}
	if (out_pending(c) == 0) {
		conn_close(c, K32_ERR_PEER_CLOSED);
		return DR_CLOSED;
	}
	return DR_WAIT;
}

/* After a handshake step (loop or handler task): go on reading, wait, or close. */
static enum drive_result handshake_result(struct http_conn *c, k32_status_t st, uint32_t want)
{
	if (st == K32_OK) {
		hs_end(c);
		c->tls_ready = true;
		c->tls_want = 0;
		c->state = CS_READ;
		c->deadline_us = after(c->srv->cfg.first_request_timeout_us);
		c->admit_deadline_us = c->deadline_us;
		c->idle_since_us = (int64_t)k32_now_us();
		if (c->refuse && conn_queue_error(c, 503, c->refuse) != K32_OK) {
			conn_close(c, K32_ERR_NO_MEMORY);
			return DR_CLOSED;
		}
		return DR_AGAIN;
	}
	if (st == K32_ERR_SHOULD_WAIT) {
		c->state = CS_HANDSHAKE;
		c->tls_want = want;
		return DR_WAIT;
	}
	conn_close(c, K32_ERR_PEER_CLOSED);
	return DR_CLOSED;
}

static enum drive_result step(struct http_conn *c, uint32_t revents)
{
	struct http_server *srv = c->srv;
	k32_status_t st;
	uint32_t want = 0;

	switch (c->state) {
	case CS_HANDSHAKE:
		if (!c->tls) {
			if (revents & K32_POLL_ERR) {
				conn_close(c, K32_ERR_PEER_CLOSED);
				return DR_CLOSED;
			}
			if (!hs_begin(c)) {
				if (c->hs_waiting)
					return DR_WAIT;
				conn_close(c, K32_ERR_NO_MEMORY);
				return DR_CLOSED;
			}
		}
		if (srv->worker_count > 0) {
			/* The handshake's public-key work (~5 ms of ECDHE and ECDSA) runs on
			 * a handler task, so it holds up no other connection. */
			c->job_handshake = true;
			return enqueue(c);
		}
		st = http_tls_handshake(c->tls, &want, NULL);
		return handshake_result(c, st, want);
	case CS_READ:
		c->tls_want = 0;
		return read_request(c);
	case CS_WRITE:
		c->tls_want = 0;
		st = conn_flush(c);
		if (st == K32_ERR_SHOULD_WAIT)
			return DR_WAIT;
		if (st != K32_OK) {
			conn_close(c, K32_ERR_PEER_CLOSED);
			return DR_CLOSED;
		}
		if (!c->keep_alive) {
			conn_close(c, K32_OK);
			return DR_CLOSED;
		}
		c->state = CS_READ;
		c->deadline_us = after(srv->cfg.idle_timeout_us);
		return DR_AGAIN;
	case CS_STREAM:
		c->tls_want = 0;
		if (revents & (K32_POLL_IN | K32_POLL_ERR)) {
			if (stream_read(c) == DR_CLOSED)
				return DR_CLOSED;
		}
		return stream_step(c);
	case CS_LINGER:
		c->tls_want = 0;
		return linger_step(c);
	case CS_HANDLER:
		return DR_WAIT; /* a handler task owns it until it is back on the done queue */
	default:
		conn_close(c, K32_ERR_INTERNAL);
		return DR_CLOSED;
	}
}

/* Counts c's TLS session as parked or not (stats.tls_parked follows it). */
static void park_note(struct http_conn *c)
{
	bool now = http_tls_parked(c->tls);

	if (now == c->park_counted)
		return;
	c->park_counted = now;
	k32_mutex_lock(&c->srv->mu);
	if (now) {
		c->srv->stats.tls_parked++;
		c->srv->stats.tls_parks++;
	} else {
		c->srv->stats.tls_parked--;
	}
	k32_mutex_unlock(&c->srv->mu);
}

/*
 * c is waiting on its socket: if it is idle (between requests, or a stream with nothing to
 * send or pull), let its TLS session give back its record buffers (see http_tls_park).
 */
static void maybe_park(struct http_conn *c)
{
	bool idle;

	if (!c->tls || !c->tls_ready || !c->srv->cfg.tls_park || c->tls_pending_len ||
	    out_pending(c) > 0 || http_tls_parked(c->tls))
		return;
	if (c->state == CS_READ)
		idle = !c->rs && c->in.len == 0;
	else if (c->state == CS_STREAM)
		idle = !c->st.events && !c->st.ending;
	else
		idle = false;
	if (idle && http_tls_park(c->tls))
		park_note(c);
}

/* Runs c's state machine until it blocks or closes. */
static void drive(struct http_conn *c, uint32_t revents)
{
	c->again = false;
	for (int i = 0; i < DRIVE_STEPS; i++) {
		enum drive_result r = step(c, revents);

		if (r == DR_CLOSED)
			return;
		if (r == DR_WAIT) {
			/* CS_HANDLER: a handler task owns c now; hands off. */
			if (c->tls && c->state != CS_HANDLER) {
				park_note(c);
				maybe_park(c);
			}
			return;
		}
		revents = 0;
	}
	if (c->tls && c->state != CS_HANDLER)
		park_note(c);
	/* Still busy (a long pipelined batch): drive it again next turn, after the others. */
	c->again = true;
}

static uint32_t conn_events(const struct http_conn *c)
{
	uint32_t ev = 0;

	switch (c->state) {
	case CS_HANDSHAKE:
		if (c->hs_waiting)
			return 0; /* not polled until a handshake slot frees (loop() drives it) */
		return c->tls_want ? c->tls_want : K32_POLL_IN;
	case CS_READ:
		ev = K32_POLL_IN;
		break;
	case CS_WRITE:
		ev = K32_POLL_OUT;
		break;
	case CS_STREAM:
		if (c->in.len + 256 <= c->in.max_len)
			ev |= K32_POLL_IN;
		break;
	case CS_LINGER:
		ev = c->peer_eof ? 0 : K32_POLL_IN;
		break;
	}
	if (out_pending(c) > 0)
		ev |= K32_POLL_OUT;
	if (c->tls_want)
		ev |= c->tls_want;
	return ev;
}

/* ---- the loop -------------------------------------------------------------------------------- */

static void accept_some(struct http_server *srv)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		k32_sock_t s;

		k32_status_t st = pl()->tcp_accept(srv->listener, &s);

		if (st == K32_ERR_NO_RESOURCES) {
			/* Out of descriptors: the listener stays readable, so stop polling it for a
			 * moment instead of spinning. */
			K32_LOGW(HTTP_MOD,
				 "accept: out of file descriptors with %" PRIu32
				 " connections open; pausing "
				 "accepts for 100 ms (raise the fd limit or lower max_conns)",
				 srv->stats.conns_open);
			srv->accept_pause_until = (int64_t)k32_now_us() + 100000;
			return;
		}
		if (st != K32_OK)
			return;
		conn_new(srv, s);
	}
}

/* Takes the woken flags (under mu) into the streams' event masks. */
static void collect_wakes(struct http_server *srv)
{
	uint8_t scratch[64];
	size_t got;

	while (pl()->sock_recv(srv->wake_r, scratch, sizeof(scratch), &got) == K32_OK)
		;
	struct http_conn *done;

	k32_mutex_lock(&srv->mu);
	srv->signalled = false;
	done = srv->done_head;
	srv->done_head = NULL;
	if (srv->any_woken) {
		srv->any_woken = false;
		for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
			struct http_slot *sl = &srv->slots[i];
			if (sl->woken && sl->conn && sl->stream_live) {
				sl->conn->st.events |= HTTP_STREAM_EV_WAKE;
				sl->woken = false;
			}
		}
	}
	k32_mutex_unlock(&srv->mu);
	while (done) {
		struct http_conn *c = done;

		done = c->job_next;
		if (c->job_handshake) {
			c->job_handshake = false;
			if (handshake_result(c, c->job_status, c->tls_want) == DR_AGAIN)
				drive(c, 0);
		} else if (finish_request(c) == DR_AGAIN) {
			drive(c, 0);
		}
	}
}

static bool stopping(struct http_server *srv)
{
	bool stop;

	k32_mutex_lock(&srv->mu);
	stop = srv->stop;
	k32_mutex_unlock(&srv->mu);
	return stop;
}

static void loop(void *arg)
{
	struct http_server *srv = arg;

	while (!stopping(srv)) {
		size_t n = 2, ready = 0;
		int64_t now = (int64_t)k32_now_us(), next = K32_FOREVER, timeout;

		srv->turn++;
		srv->pfds[0] = (struct k32_pollfd){srv->listener, K32_POLL_IN, 0};
		if (srv->accept_pause_until > now) {
			srv->pfds[0].events = 0;
			next = srv->accept_pause_until;
		}
		srv->pfds[1] = (struct k32_pollfd){srv->wake_r, K32_POLL_IN, 0};
		for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
			struct http_conn *c = srv->slots[i].conn;
			if (!c || c->state == CS_HANDLER)
				continue;
			srv->pfds[n] = (struct k32_pollfd){c->sock, conn_events(c), 0};
			srv->pconns[n++] = c;
			if (c->deadline_us != K32_FOREVER &&
			    (next == K32_FOREVER || c->deadline_us < next))
				next = c->deadline_us;
			if (c->again || (c->state == CS_STREAM && c->st.events && !c->st.blocked) ||
			    (c->hs_waiting && srv->hs_count < srv->cfg.max_handshakes))
				next = now;
			/* all handshake slots busy: look for a stalled one every 100 ms */
			if (c->hs_waiting && (next == K32_FOREVER || now + 100000 < next))
				next = now + 100000;
			if (!c->trusted && !c->first_head &&
			    (next == K32_FOREVER || c->admit_deadline_us < next))
				next = c->admit_deadline_us;
			if (c->state == CS_STREAM && c->st.timer_us != K32_FOREVER &&
			    (next == K32_FOREVER || c->st.timer_us < next))
				next = c->st.timer_us;
		}
		timeout = next == K32_FOREVER ? K32_FOREVER : (next > now ? next - now : 0);
		k32_status_t pst = pl()->poll(srv->pfds, n, timeout, &ready);

		if (pst != K32_OK) {
			if (!srv->poll_failed)
				K32_LOGE(HTTP_MOD,
					 "poll over %zu sockets failed (%s); the platform's poll "
					 "may take fewer (posix: 1024): lower max_conns",
					 n, k32_status_name(pst));
			srv->poll_failed = true;
			pl()->sleep_us(1000);
		}

		if (srv->pfds[1].revents)
			collect_wakes(srv);
		for (size_t i = 2; i < n; i++) {
			if (srv->pfds[i].revents)
				drive(srv->pconns[i], srv->pfds[i].revents);
		}
		/* Timeouts, timers and pending stream events. */
		bool stall_checked = false;

		now = (int64_t)k32_now_us();
		for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
			struct http_conn *c = srv->slots[i].conn;

			if (!c || c->state == CS_HANDLER)
				continue;
			if (c->evict) {
				stat_add(srv, &srv->stats.conns_evicted, 1);
				conn_close(c, K32_ERR_CANCELED);
				continue;
			}
			if ((c->deadline_us != K32_FOREVER && now >= c->deadline_us) ||
			    (!c->trusted && !c->first_head && now >= c->admit_deadline_us)) {
				if (c->state != CS_LINGER)
					stat_add(srv, &srv->stats.timeouts, 1);
				conn_close(c, K32_ERR_TIMED_OUT);
				continue;
			}
			if (c->hs_waiting) {
				if (srv->hs_count < srv->cfg.max_handshakes)
					drive(c, 0);
				else if (!stall_checked)
					stall_checked = true, (void)hs_evict_stalled(srv);
				continue;
			}
			if (c->again ||
			    (c->state == CS_STREAM &&
			     ((c->st.events && !c->st.blocked) ||
			      (c->st.timer_us != K32_FOREVER && now >= c->st.timer_us))))
				drive(c, 0);
		}
		if (srv->pfds[0].revents)
			accept_some(srv);
	}
	/* Handler tasks finish the request they hold and exit; queued ones are dropped. */
	k32_mutex_lock(&srv->mu);
	srv->workers_stop = true;
	pl()->cond_broadcast(&srv->job_cond);
	k32_mutex_unlock(&srv->mu);
	for (uint32_t i = 0; i < srv->worker_count; i++) {
		if (srv->workers[i].task)
			pl()->task_join(srv->workers[i].task);
		srv->workers[i].task = NULL;
	}
	for (uint32_t i = 0; i < srv->cfg.max_conns; i++) {
		if (srv->slots[i].conn)
			conn_close(srv->slots[i].conn, K32_ERR_CANCELED);
	}
}

/* ---- start / stop ---- */

/* A connected loopback pair: the platform has no pipe, so listen, connect, accept. */
static k32_status_t make_wake_pair(struct http_server *srv, struct k32_err *err)
{
	k32_sock_t l = K32_SOCK_INVALID;
	uint16_t port = 0;
	k32_status_t st;

	st = pl()->tcp_listen("127.0.0.1", 0, 1, &l, err);
	if (st == K32_OK)
		st = pl()->sock_port(l, &port);
	if (st == K32_OK)
		st = pl()->tcp_connect("127.0.0.1", port, 2000000, &srv->wake_w, err);
	if (st == K32_OK)
		st = pl()->tcp_accept(l, &srv->wake_r);
	if (l != K32_SOCK_INVALID)
		pl()->sock_close(l);
	if (st == K32_OK)
		st = pl()->sock_set_nonblock(srv->wake_r, true);
	if (st == K32_OK)
		st = pl()->sock_set_nonblock(srv->wake_w, true);
	if (st != K32_OK)
		return k32_err_set(err, st, HTTP_MOD,
				   "cannot make the loopback wake socket pair on 127.0.0.1 (%s)",
				   k32_status_name(st));
	return K32_OK;
}

void http_server_config_init(struct http_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->max_conns = K32_HTTP_MAX_CONNS;
	cfg->max_header_bytes = K32_HTTP_MAX_HEADER_BYTES;
	cfg->max_body_bytes = K32_HTTP_MAX_BODY_BYTES;
	cfg->max_response_bytes = K32_HTTP_MAX_RESPONSE_BYTES;
	cfg->stream_buf_bytes = K32_HTTP_STREAM_BUF_BYTES;
	cfg->header_timeout_us = (int64_t)K32_HTTP_HEADER_TIMEOUT_MS * 1000;
	cfg->body_timeout_us = (int64_t)K32_HTTP_BODY_TIMEOUT_MS * 1000;
	cfg->write_timeout_us = (int64_t)K32_HTTP_WRITE_TIMEOUT_MS * 1000;
	cfg->idle_timeout_us = (int64_t)K32_HTTP_IDLE_TIMEOUT_MS * 1000;
	cfg->handler_threads = K32_HTTP_HANDLER_THREADS;
	cfg->gzip_min_bytes = K32_HTTP_GZIP_MIN_BYTES;
	cfg->tls_park = K32_HTTP_TLS_PARK;
	cfg->max_conns_per_addr = K32_HTTP_MAX_CONNS_PER_ADDR;
	cfg->max_unauth_per_addr = K32_HTTP_MAX_UNAUTH_PER_ADDR;
	cfg->reserved_auth_pct = K32_HTTP_RESERVED_AUTH_PCT;
	cfg->max_handshakes = K32_HTTP_MAX_HANDSHAKES;
	cfg->handshake_timeout_us = (int64_t)K32_HTTP_HANDSHAKE_TIMEOUT_MS * 1000;
	cfg->first_request_timeout_us = (int64_t)K32_HTTP_FIRST_REQUEST_TIMEOUT_MS * 1000;
}

static k32_status_t check_config(const struct http_server_config *cfg, struct k32_err *err)
{
	if (!cfg->handler)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "server config has no handler; set cfg.handler");
	if (cfg->handler_threads > K32_HTTP_MAX_HANDLER_THREADS)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "handler_threads %" PRIu32
				   " over %d (K32_HTTP_MAX_HANDLER_THREADS)",
				   cfg->handler_threads, K32_HTTP_MAX_HANDLER_THREADS);
	if (cfg->max_conns == 0 || cfg->max_conns > 65534)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "max_conns %" PRIu32 " out of range 1..65534", cfg->max_conns);
	if (cfg->reserved_auth_pct > 90)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "reserved_auth_pct %" PRIu32
				   " over 90 (K32_HTTP_RESERVED_AUTH_PCT)",
				   cfg->reserved_auth_pct);
	if (cfg->max_unauth_per_addr == 0 || cfg->max_conns_per_addr == 0 ||
	    cfg->max_handshakes == 0 || cfg->handshake_timeout_us <= 0 ||
	    cfg->first_request_timeout_us <= 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "an admission limit is zero (max_unauth_per_addr %" PRIu32 ", "
				   "max_conns_per_addr %" PRIu32 ", max_handshakes %" PRIu32
				   ", or a timeout); start "
				   "from http_server_config_init",
				   cfg->max_unauth_per_addr, cfg->max_conns_per_addr,
				   cfg->max_handshakes);
	if (cfg->max_header_bytes < 256 || cfg->max_body_bytes == 0 ||
	    cfg->max_response_bytes == 0 || cfg->stream_buf_bytes == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "a size limit is zero (or max_header_bytes %zu < 256); start "
				   "from http_server_config_init",
				   cfg->max_header_bytes);
	if (cfg->tls && (!cfg->data_dir || !*cfg->data_dir))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "tls needs data_dir for its certificates; set cfg.data_dir");
	if (!cfg->host || strlen(cfg->host) >= 64)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "host missing or longer than 63 bytes");
	if (cfg->data_dir && strlen(cfg->data_dir) >= K32_HTTP_PATH_LEN)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, HTTP_MOD,
				   "data_dir longer than %d bytes (K32_HTTP_PATH_LEN)",
				   K32_HTTP_PATH_LEN - 1);
	return K32_OK;
}

static void server_free(struct http_server *srv)
{
	const struct k32_allocator *a = &srv->alloc;
	uint32_t max = srv->cfg.max_conns;

	if (srv->listener != K32_SOCK_INVALID)
		pl()->sock_close(srv->listener);
	if (srv->wake_r != K32_SOCK_INVALID)
		pl()->sock_close(srv->wake_r);
	if (srv->wake_w != K32_SOCK_INVALID)
		pl()->sock_close(srv->wake_w);
	http_tls_server_free(srv->tls);
	k32_buf_fini(&srv->lctx.resp.headers);
	k32_buf_fini(&srv->lctx.resp.body);
	if (srv->workers) {
		for (uint32_t i = 0; i < srv->worker_count; i++) {
			k32_buf_fini(&srv->workers[i].resp.headers);
			k32_buf_fini(&srv->workers[i].resp.body);
		}
		k32_free(a, srv->workers, sizeof(*srv->workers) * srv->worker_count);
	}
	pl()->cond_fini(&srv->job_cond);
	k32_free(a, srv->slots, sizeof(*srv->slots) * max);
	k32_free(a, srv->free_slots, sizeof(*srv->free_slots) * max);
	k32_free(a, srv->pfds, sizeof(*srv->pfds) * (max + 2));
	k32_free(a, srv->pconns, sizeof(*srv->pconns) * (max + 2));
	pl()->mutex_fini(&srv->mu);
	k32_free(srv->base_alloc, srv, sizeof(*srv));
}

k32_status_t http_server_start(const struct http_server_config *cfg, struct http_server **out,
			       struct k32_err *err)
{
	const struct k32_allocator *base = cfg->alloc ? cfg->alloc : k32_default_allocator();
	struct http_server *srv;
	uint32_t max;
	k32_status_t st;

	st = check_config(cfg, err);
	if (st != K32_OK)
		return st;
	srv = k32_calloc(base, sizeof(*srv));
	if (!srv)
		return k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				   "no memory for the server (%zu bytes)", sizeof(*srv));
	srv->cfg = *cfg;
	srv->base_alloc = base;
	srv->alloc.fn = count_alloc;
	srv->alloc.ud = srv;
	srv->listener = srv->wake_r = srv->wake_w = K32_SOCK_INVALID;
	pl()->mutex_init(&srv->mu);
	snprintf(srv->host, sizeof(srv->host), "%s", cfg->host);
	srv->cfg.host = srv->host;
	if (cfg->data_dir) {
		snprintf(srv->data_dir, sizeof(srv->data_dir), "%s", cfg->data_dir);
		srv->cfg.data_dir = srv->data_dir;
	}
	srv->cfg.tls_names = NULL; /* only used during start */
	srv->cfg.tls_name_count = 0;
	max = cfg->max_conns;
	srv->unauth_max = max - (uint32_t)((uint64_t)max * cfg->reserved_auth_pct / 100);
	if (srv->unauth_max == 0)
		srv->unauth_max = 1;
	srv->slots = k32_calloc(&srv->alloc, sizeof(*srv->slots) * max);
	srv->free_slots = k32_calloc(&srv->alloc, sizeof(*srv->free_slots) * max);
	srv->pfds = k32_calloc(&srv->alloc, sizeof(*srv->pfds) * (max + 2));
	srv->pconns = k32_calloc(&srv->alloc, sizeof(*srv->pconns) * (max + 2));
	if (!srv->slots || !srv->free_slots || !srv->pfds || !srv->pconns) {
		st = k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
				 "no memory for %" PRIu32 " connection slots (max_conns)", max);
		goto fail;
	}
	for (uint32_t i = 0; i < max; i++)
		srv->free_slots[i] = (uint16_t)(max - 1 - i);
	srv->free_count = max;
	pl()->cond_init(&srv->job_cond);
	srv->lctx.srv = srv;
	k32_buf_init(&srv->lctx.resp.headers, &srv->alloc, K32_HTTP_MAX_RESP_HEADER_BYTES,
		     "response headers");
	k32_buf_init(&srv->lctx.resp.body, &srv->alloc, cfg->max_response_bytes, "response body");
	if (cfg->handler_threads > 0) {
		srv->workers =
		    k32_calloc(&srv->alloc, sizeof(*srv->workers) * cfg->handler_threads);
		if (!srv->workers) {
			st = k32_err_set(err, K32_ERR_NO_MEMORY, HTTP_MOD,
					 "no memory for %" PRIu32 " handler threads",
					 cfg->handler_threads);
			goto fail;
		}
		srv->worker_count = cfg->handler_threads;
		for (uint32_t i = 0; i < srv->worker_count; i++) {
			struct http_hctx *hc = &srv->workers[i];

			hc->srv = srv;
			k32_buf_init(&hc->resp.headers, &srv->alloc, K32_HTTP_MAX_RESP_HEADER_BYTES,
				     "response headers");
			k32_buf_init(&hc->resp.body, &srv->alloc, cfg->max_response_bytes,
				     "response body");
		}
	}

	if (cfg->tls) {
		st = http_tls_server_new(cfg->data_dir, cfg->tls_names, cfg->tls_name_count,
					 &srv->alloc, &srv->tls, &srv->files, err);
		if (st != K32_OK)
			goto fail;
	}
	st = make_wake_pair(srv, err);
	if (st != K32_OK)
		goto fail;
	st = pl()->tcp_listen(srv->host, cfg->port, 128, &srv->listener, err);
	if (st == K32_OK)
		st = pl()->sock_port(srv->listener, &srv->port);
	if (st == K32_OK)
		st = pl()->sock_set_nonblock(srv->listener, true);
	if (st != K32_OK) {
		if (err && err->status == K32_OK)
			k32_err_set(err, st, HTTP_MOD, "cannot listen on %s:%u (%s)", srv->host,
				    cfg->port, k32_status_name(st));
		goto fail;
	}
	for (uint32_t i = 0; i < srv->worker_count; i++) {
		st = pl()->task_create(&srv->workers[i].task, "http-handler", worker_main,
				       &srv->workers[i], 0, -1, err);
		if (st != K32_OK)
			goto fail_workers;
	}
	st = pl()->task_create(&srv->task, "http", loop, srv, 0, -1, err);
	if (st != K32_OK)
		goto fail_workers;
	*out = srv;
	return K32_OK;
fail_workers:
	k32_mutex_lock(&srv->mu);
	srv->workers_stop = true;
	pl()->cond_broadcast(&srv->job_cond);
	k32_mutex_unlock(&srv->mu);
	for (uint32_t i = 0; i < srv->worker_count; i++) {
		if (srv->workers[i].task)
			pl()->task_join(srv->workers[i].task);
	}
fail:
	server_free(srv);
	return st;
}

void http_server_stop(struct http_server *srv)
{
	size_t sent;

	if (!srv)
		return;
	k32_mutex_lock(&srv->mu);
	srv->stop = true;
	pl()->sock_send(srv->wake_w, "s", 1, &sent);
	k32_mutex_unlock(&srv->mu);
	pl()->task_join(srv->task);
	server_free(srv);
}

uint16_t http_server_port(const struct http_server *srv)
{
	return srv->port;
}

const char *http_server_ca_file(const struct http_server *srv)
{
	return srv->tls ? srv->files.ca_crt : NULL;
}

void http_server_get_stats(struct http_server *srv, struct http_server_stats *out)
{
	k32_mutex_lock(&srv->mu);
	*out = srv->stats;
	k32_mutex_unlock(&srv->mu);
	out->mem_bytes = atomic_load(&srv->mem_bytes);
	out->mem_peak_bytes = atomic_load(&srv->mem_peak);
}
