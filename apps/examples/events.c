/*
 * events - the example of a pod driven by events (k32_event) instead of ticks: it exports no
 * k32_tick at all. k32_init arms two kernel objects onto the pod's event port:
 *
 *   a kobj timer (key KEY_TIMER) that fires every 2 s: the handler counts it and arms it
 *     again (observers are one-shot; the periodic timer's SIGNALED is cleared first);
 *   one end of a kobj channel (key KEY_CHANNEL): POST / writes the request body into the
 *     other end, and the handler reads it and logs "got: <body>".
 *
 * POST /queue puts the body (at most 32 bytes) in a user packet on the event port itself
 * (key KEY_USER); the handler logs "user packet: <bytes>". GET / answers the counters. The
 * node's stop event (a deleted pod) logs how many events it had.
 *
 *   kube32-cli deploy build/apps/examples/events.wasm --name events --memory 24Ki
 *   curl -H 'X-Kube32-Pod: default/events' --data hi http://127.0.0.1:7000/
 *   curl -H 'X-Kube32-Pod: default/events' http://127.0.0.1:7000/
 *   kube32-cli logs events
 */
#include "k32_klet.h"

enum { KEY_TIMER = 1, KEY_CHANNEL = 2, KEY_USER = 3 };

#define TIMER_PERIOD_NS (2000ll * 1000 * 1000)

static kx_handle_t port, timer, ch_in, ch_out; /* ch_out: written by k32_http */
static uint32_t timers, messages, users;
static char line[160];
static char buf[128];

static uint32_t put(char *dst, uint32_t at, const char *s)
{
	while (*s && at < sizeof(line) - 1)
		dst[at++] = *s++;
	return at;
}

static uint32_t put_n(char *dst, uint32_t at, const char *s, uint32_t n)
{
	for (uint32_t i = 0; i < n && at < sizeof(line) - 1; i++)
		dst[at++] = s[i];
	return at;
}

static uint32_t put_u32(char *dst, uint32_t at, uint32_t v)
{
	char tmp[10];
	uint32_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && at < sizeof(line) - 1)
		dst[at++] = tmp[--n];
	return at;
}

static void log_status(const char *what, kx_status_t st)
{
	uint32_t n = put(line, 0, what);
	n = put(line, n, " failed: status -");
	n = put_u32(line, n, (uint32_t)-st);
	k32_log(K32_LOG_ERR, line, n);
}

K32_EXPORT(k32_init) int32_t k32_init(void)
{
	kx_status_t st;
	port = k32_event_port();
	if (port == KX_HANDLE_INVALID) {
		k32_log(K32_LOG_ERR, "no event port", 13);
		return -1;
	}
	st = kx_timer_create(0, KX_CLOCK_MONOTONIC, &timer);
	if (st == KX_OK)
		st = kx_timer_set(timer, kx_clock_get_monotonic() + TIMER_PERIOD_NS, 0,
				  TIMER_PERIOD_NS);
	if (st == KX_OK)
		st = kx_object_wait_async(timer, port, KEY_TIMER, KX_SIG_SIGNALED, 0);
	if (st != KX_OK) {
		log_status("arming the timer", st);
		return -1;
	}
	st = kx_channel_create(0, &ch_in, &ch_out);
	if (st == KX_OK)
		st = kx_object_wait_async(ch_in, port, KEY_CHANNEL,
					  KX_SIG_READABLE | KX_SIG_PEER_CLOSED, 0);
	if (st != KX_OK) {
		log_status("arming the channel", st);
		return -1;
	}
	k32_log(K32_LOG_INFO, "events: timer and channel armed", 31);
	return 0;
}

static int32_t on_timer(void)
{
	timers++;
	/* a periodic timer keeps SIGNALED until cleared: clear it, then arm again */
	kx_object_signal(timer, KX_SIG_SIGNALED, 0);
	kx_status_t st = kx_object_wait_async(timer, port, KEY_TIMER, KX_SIG_SIGNALED, 0);
	if (st != KX_OK) {
		log_status("re-arming the timer", st);
		return -1;
	}
	return 0;
}

static int32_t on_channel(uint32_t observed)
{
	uint32_t got = 0, handles = 0;
	kx_status_t st = kx_channel_read(ch_in, 0, buf, 0, sizeof(buf), 0, &got, &handles);
	if (st == KX_OK) {
		messages++;
		uint32_t n = put(line, 0, "got: ");
		n = put_n(line, n, buf, got);
		k32_log(K32_LOG_INFO, line, n);
	} else if (st == KX_ERR_BUFFER_TOO_SMALL) {
		/* over sizeof(buf): drop it (k32_http sends at most that much) */
		kx_channel_read(ch_in, KX_CHANNEL_READ_MAY_DISCARD, buf, 0, 0, 0, &got, &handles);
	}
	if (!(observed & KX_SIG_READABLE) && (observed & KX_SIG_PEER_CLOSED))
		return 0; /* the writer is gone: nothing more will come */
	st =
	    kx_object_wait_async(ch_in, port, KEY_CHANNEL, KX_SIG_READABLE | KX_SIG_PEER_CLOSED, 0);
	if (st != KX_OK) {
		log_status("re-arming the channel", st);
		return -1;
	}
	return 0;
}

static int32_t on_user(void)
{
	kx_packet_t pkt;
	if (k32_event_packet(&pkt, sizeof(pkt)) != (int32_t)sizeof(pkt))
		return -1;
	uint32_t len = 0;
	while (len < sizeof(pkt.user) && pkt.user[len])
		len++;
	users++;
	uint32_t n = put(line, 0, "user packet: ");
	n = put_n(line, n, (const char *)pkt.user, len);
	k32_log(K32_LOG_INFO, line, n);
	return 0;
}

K32_EXPORT(k32_event) int32_t k32_event(uint32_t type, uint64_t key, uint32_t observed)
{
	if (type == K32_EVENT_NODE && key == K32_EVENT_KEY_STOP) {
		uint32_t n = put(line, 0, "stopping after ");
		n = put_u32(line, n, timers + messages + users);
		n = put(line, n, " events");
		k32_log(K32_LOG_INFO, line, n);
		return 0;
	}
	if (type == K32_EVENT_SIGNAL && key == KEY_TIMER)
		return on_timer();
	if (type == K32_EVENT_SIGNAL && key == KEY_CHANNEL)
		return on_channel(observed);
	if (type == K32_EVENT_USER && key == KEY_USER)
		return on_user();
	return 0; /* nothing else is armed */
}

K32_EXPORT(k32_http)
int32_t k32_http(uint32_t method, uint32_t path_len, uint32_t body_len)
{
	int32_t pl = k32_http_path(buf, sizeof(buf));
	int32_t got = k32_http_body(buf + 64, 32, 0);
	if (got < 0)
		got = 0;
	if (method == K32_HTTP_POST && pl == 6 && buf[1] == 'q') {
		/* "/queue": a user packet on our own port */
		kx_packet_t pkt = {.key = KEY_USER, .type = KX_PKT_TYPE_USER};
		for (int32_t i = 0; i < got; i++)
			pkt.user[i] = (uint8_t)buf[64 + i];
		if (kx_port_queue(port, &pkt) != KX_OK)
			return 503;
		k32_http_write("queued\n", 7);
		return 202;
	}
	if (method == K32_HTTP_POST) {
		if (body_len > 64)
			return 413;
		got = k32_http_body(buf, 64, 0);
		if (got < 0)
			got = 0;
		if (kx_channel_write(ch_out, 0, buf, (uint32_t)got, 0, 0) != KX_OK)
			return 503; /* the channel's queue is full: try again */
		k32_http_write("sent\n", 5);
		return 202;
	}
	(void)path_len;
	uint32_t n = put(line, 0, "timers=");
	n = put_u32(line, n, timers);
	n = put(line, n, " messages=");
	n = put_u32(line, n, messages);
	n = put(line, n, " user=");
	n = put_u32(line, n, users);
	n = put(line, n, "\n");
	k32_http_write(line, n);
	return 200;
}
