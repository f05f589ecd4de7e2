/*
 * kobj_fuzz.c - fuzz target: random sequences of kobj operations on random handles (live,
 * stale, foreign, garbage) from two owners, checking invariants after every step and at the
 * end:
 *   - no crash, no sanitizer report;
 *   - statuses are from the documented set for each call;
 *   - signals agree with queue state (READABLE iff something is queued on channels, sockets,
 *     fifos; a channel whose peer is gone shows PEER_CLOSED and not WRITABLE);
 *   - after both owners are torn down, every pool is back to zero and every owner account
 *     returned (nothing leaks).
 *
 * Built two ways (src/kobj/CMakeLists.txt): with clang and K32_FUZZ=ON as a libFuzzer target
 * (kobj_fuzz, run by `make fuzz`); always as kobj_fuzz_replay, which ctest runs over the seed
 * corpus in tests/fuzz/kobj/corpus plus inputs generated from fixed seeds, so `make test`
 * exercises it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kobj/kobj.h"
#include "base/k32_alloc.h"

/* The input's kobj instance (a fresh one per input; freeing it fails if objects leaked). */
static struct kobj_node *KN;

static k32_status_t test_node_new(void)
{
	struct kobj_limits lim;
	kobj_limits_default(&lim);
	if (KN && kobj_node_free(k32_default_allocator(), KN) != K32_OK)
		return K32_ERR_BAD_STATE;
	KN = NULL;
	return kobj_node_new(k32_default_allocator(), "fuzz-node", &lim, &KN, NULL);
}

#define NHANDLES 48

struct fz {
	const uint8_t *p;
	size_t n;
	struct kobj_owner own[2];
	kobj_handle_t h[2][NHANDLES]; /* handles seen by each owner (may go stale) */
	uint32_t nh[2];
	uint8_t buf[5000];
	uint8_t out[5000];
};

static uint8_t byte(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static uint32_t u32(struct fz *f)
{
	uint32_t v = byte(f);
	v |= (uint32_t)byte(f) << 8;
	v |= (uint32_t)byte(f) << 16;
	return v | (uint32_t)byte(f) << 24;
}

static void fail(const char *what, int line)
{
	fprintf(stderr, "kobj_fuzz: invariant broken at line %d: %s\n", line, what);
	abort();
}
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			fail(#c, __LINE__);                                                        \
	} while (0)

static void remember(struct fz *f, int o, kobj_handle_t h)
{
	if (h == KOBJ_HANDLE_INVALID)
		return;
	f->h[o][f->nh[o] % NHANDLES] = h;
	f->nh[o]++;
}

/* A handle to use: mostly remembered ones (some stale), sometimes garbage or the other
 * owner's. */
static kobj_handle_t pick(struct fz *f, int o)
{
	uint8_t b = byte(f);
	if (b >= 250)
		return u32(f);
	int src = (b & 0x80) && b > 240 ? !o : o;
	uint32_t n = f->nh[src] < NHANDLES ? f->nh[src] : NHANDLES;
	if (!n)
		return KOBJ_HANDLE_INVALID;
	return f->h[src][b % n];
}

static bool is_status(k32_status_t st)
{
	switch (st) {
	case K32_OK:
	case K32_ERR_NOT_SUPPORTED:
	case K32_ERR_NO_RESOURCES:
	case K32_ERR_NO_MEMORY:
	case K32_ERR_INVALID_ARGS:
	case K32_ERR_BAD_HANDLE:
	case K32_ERR_WRONG_TYPE:
	case K32_ERR_OUT_OF_RANGE:
	case K32_ERR_BUFFER_TOO_SMALL:
	case K32_ERR_BAD_STATE:
	case K32_ERR_TIMED_OUT:
	case K32_ERR_SHOULD_WAIT:
	case K32_ERR_PEER_CLOSED:
	case K32_ERR_NOT_FOUND:
	case K32_ERR_ACCESS_DENIED:
		return true;
	default:
		return false; /* CANCELED, INTERNAL... cannot happen single-threaded */
	}
}

/* Signals must agree with what get_info reports as queued. */
static void check_object(struct fz *f, int o, kobj_handle_t h)
{
	struct kobj_info info;
	k32_status_t st = kobj_object_get_info(&f->own[o], h, &info);
	CHECK(is_status(st));
	if (st != K32_OK)
		return;
	CHECK(info.handles >= 1);
	CHECK(info.type > KOBJ_TYPE_NONE && info.type < KOBJ_TYPE_COUNT);
	switch (info.type) {
	case KOBJ_TYPE_CHANNEL:
	case KOBJ_TYPE_SOCKET:
	case KOBJ_TYPE_FIFO:
		CHECK(((info.signals & KOBJ_SIG_READABLE) != 0) == (info.queued != 0));
		if (info.signals & KOBJ_SIG_PEER_CLOSED)
			CHECK(!(info.signals & KOBJ_SIG_WRITABLE));
		break;
	case KOBJ_TYPE_PORT:
		CHECK(info.queued <= K32_KOBJ_MAX_PORT_OBSERVERS + K32_KOBJ_PORT_USER_BUDGET);
		break;
	default:
		CHECK(info.queued == 0);
		break;
	}
	if (info.type == KOBJ_TYPE_CHANNEL)
		CHECK(info.queued <= K32_KOBJ_CHANNEL_MAX_QUEUE_MSGS);
	if (info.capacity)
		CHECK(info.queued <= info.capacity);
	if (info.type == KOBJ_TYPE_SOCKET && (info.signals & KOBJ_SIG_SOCKET_READ_THRESHOLD))
		CHECK(info.queued > 0);
	/* A wait with deadline 0 agrees with the signal word. */
	uint32_t obs = 0;
	st = kobj_object_wait_one(&f->own[o], h, info.signals ? info.signals : 1, 0, &obs);
	if (!(info.rights & KOBJ_RIGHT_WAIT))
		CHECK(st == K32_ERR_ACCESS_DENIED);
	else if (info.type == KOBJ_TYPE_PORT)
		CHECK(st == K32_ERR_NOT_SUPPORTED);
	else
		CHECK(st == (info.signals ? K32_OK : K32_ERR_TIMED_OUT));
}

static void step(struct fz *f)
{
	int o = byte(f) & 1;
	struct kobj_owner *ow = &f->own[o];
	uint8_t op = byte(f) % 27;
	kobj_handle_t a = KOBJ_HANDLE_INVALID, b = KOBJ_HANDLE_INVALID;
	k32_status_t st = K32_OK;
	uint32_t n = 0, m = 0;
	struct kobj_packet pkt;
	switch (op) {
	case 0:
		st = kobj_channel_create(ow, byte(f) < 250 ? 0 : 1, &a, &b);
		break;
	case 1:
		st = kobj_socket_create(ow, byte(f) & 1, (uint32_t)byte(f) << 5, &a, &b);
		break;
	case 2:
		st = kobj_event_create(ow, 0, &a);
		break;
	case 3:
		st = kobj_eventpair_create(ow, 0, &a, &b);
		break;
	case 4:
		st = kobj_port_create(ow, 0, &a);
		break;
	case 5:
		st =
		    kobj_fifo_create(ow, byte(f) & 0x3f, (uint32_t)(byte(f) & 0x3f) * 2, 0, &a, &b);
		break;
	case 6:
		st = kobj_timer_create(ow, 0, KOBJ_CLOCK_MONOTONIC, &a);
		break;
	case 7:
		st = kobj_vmo_create(ow, (uint64_t)byte(f) * 97u, 0, &a);
		break;
	case 8:
		st = kobj_handle_close(ow, pick(f, o));
		break;
	case 9:
		st = kobj_handle_duplicate(ow, pick(f, o),
					   byte(f) < 128 ? KOBJ_RIGHT_SAME_RIGHTS : u32(f), &a);
		break;
	case 10:
		st = kobj_handle_replace(ow, pick(f, o),
					 byte(f) < 128 ? KOBJ_RIGHT_SAME_RIGHTS : u32(f), &a);
		break;
	case 11: {
		kobj_handle_t hs[3];
		uint32_t nhs = byte(f) % 4;
		kobj_handle_t ch = pick(f, o);
		for (uint32_t i = 0; i < nhs; i++)
			hs[i] = pick(f, o);
		n = (uint32_t)byte(f) * 17u;
		if (byte(f) == 255)
			n = K32_KOBJ_CHANNEL_MAX_MSG_BYTES + 1;
		st = kobj_channel_write(ow, ch, 0, n <= sizeof(f->buf) ? f->buf : NULL, n, hs, nhs);
		break;
	}
	case 12: {
		kobj_handle_t hs[8];
		uint32_t capb = (uint32_t)byte(f) * 20u, caph = byte(f) % 9;
		st = kobj_channel_read(ow, pick(f, o), byte(f) & 1, f->out, hs,
				       capb > sizeof(f->out) ? sizeof(f->out) : capb, caph, &n, &m);
		if (st == K32_OK)
			for (uint32_t i = 0; i < m; i++)
				remember(f, o, hs[i]);
		break;
	}
	case 13:
		if (byte(f) & 1)
			st = kobj_socket_write(ow, pick(f, o), 0, f->buf, (uint32_t)byte(f) * 9u,
					       &n);
		else
			st = kobj_socket_read(ow, pick(f, o), byte(f) & KOBJ_SOCKET_PEEK, f->out,
					      (uint32_t)byte(f) * 9u, &n);
		break;
	case 14:
		if (byte(f) & 1)
			st = kobj_fifo_write(ow, pick(f, o), (uint32_t)(byte(f) & 0x3f) * 2, f->buf,
					     byte(f) % 8, &n);
		else
			st = kobj_fifo_read(ow, pick(f, o), (uint32_t)(byte(f) & 0x3f) * 2, f->out,
					    byte(f) % 8, &n);
		break;
	case 15:
		if (byte(f) & 1)
			st = kobj_object_signal(ow, pick(f, o), u32(f), u32(f));
		else
			st = kobj_object_signal_peer(ow, pick(f, o), u32(f) & KOBJ_SIG_USER_ALL,
						     u32(f));
		break;
	case 16:
		st = kobj_object_wait_one(ow, pick(f, o), u32(f), 0, &n);
		break;
	case 17: {
		struct kobj_wait_item it[9];
		uint32_t cnt = byte(f) % 10;
		for (uint32_t i = 0; i < cnt; i++) {
			it[i].handle = pick(f, o);
			it[i].waitfor = u32(f);
		}
		st = kobj_object_wait_many(ow, it, cnt, 0);
		break;
	}
	case 18:
		st = kobj_object_wait_async(ow, pick(f, o), pick(f, o), byte(f), u32(f),
					    byte(f) & 3);
		break;
	case 19:
		if (byte(f) & 1) {
			memset(&pkt, byte(f), sizeof(pkt));
			st = kobj_port_queue(ow, pick(f, o), &pkt);
		} else {
			st = kobj_port_wait(ow, pick(f, o), 0, &pkt);
		}
		break;
	case 20:
		st = kobj_port_cancel(ow, pick(f, o), pick(f, o), byte(f));
		break;
	case 21:
		if (byte(f) & 1)
			st = kobj_vmo_write(ow, pick(f, o), f->buf, byte(f) * 50u, byte(f) * 10u);
		else
			st = kobj_vmo_read(ow, pick(f, o), f->out, byte(f) * 50u, byte(f) * 10u);
		break;
	case 22:
		st = kobj_handle_transfer(ow, pick(f, o), &f->own[!o], &a);
		if (st == K32_OK) {
			remember(f, !o, a);
			a = KOBJ_HANDLE_INVALID;
		}
		break;
	case 23:
		if (byte(f) < 40) {
			kobj_owner_fini(ow);
			kobj_owner_init(ow, KN, o ? "pod b" : "pod a", 16 + byte(f) % 48);
		}
		break;
	case 24: {
		kobj_handle_t t = pick(f, o);
		uint8_t how = byte(f);
		if (how & 1)
			st = kobj_timer_set(ow, t, KOBJ_TIME_INFINITE - 1, byte(f), 0);
		else
			st = kobj_timer_cancel(ow, t);
		break;
	}
	case 25: {
		/* Properties: names of random lengths, thresholds of random sizes and values. */
		kobj_handle_t t = pick(f, o);
		uint8_t how = byte(f);
		uint32_t prop = (how & 3) == 0	 ? KOBJ_PROP_NAME
				: (how & 3) == 1 ? KOBJ_PROP_SOCKET_RX_THRESHOLD
				: (how & 3) == 2 ? KOBJ_PROP_SOCKET_TX_THRESHOLD
						 : byte(f);
		uint32_t size = (how & 4) ? 4u : byte(f) % 40u, v = byte(f) * 5u;
		memcpy(f->buf, &v, 4);
		if (how & 8)
			st = kobj_object_set_property(ow, t, prop, f->buf, size);
		else
			st = kobj_object_get_property(ow, t, prop, f->out, size);
		break;
	}
	default:
		check_object(f, o, pick(f, o));
		return;
	}
	CHECK(is_status(st));
	if (st == K32_OK) {
		remember(f, o, a);
		remember(f, o, b);
	}
}

static void pools_empty(void)
{
	struct kobj_stats st;
	kobj_stats_get(KN, &st);
	for (int t = 0; t < KOBJ_TYPE_COUNT; t++)
		CHECK(st.in_use[t] == 0);
	CHECK(st.messages == 0 && st.chunks == 0);
	CHECK(st.port_observers == 0 && st.port_user_packets == 0);
	CHECK(st.vmo_bytes == 0);
	CHECK(st.names == 0);
	CHECK(st.accounts == 0); /* both owners gone, everything they charged released */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	memset(&f, 0, sizeof(f));
	if (test_node_new() != K32_OK)
		fail("kobj_node_free refused: objects leaked by an earlier input", __LINE__);
	f.p = data;
	f.n = size;
	for (int i = 0; i < (int)sizeof(f.buf); i++)
		f.buf[i] = (uint8_t)(i * 31);
	kobj_owner_init(&f.own[0], KN, "pod a", 0);
	kobj_owner_init(&f.own[1], KN, "pod b", 0);
	for (unsigned steps = 0; f.n > 0 && steps < 4000; steps++)
		step(&f);
	for (int o = 0; o < 2; o++)
		for (uint32_t i = 0; i < NHANDLES && i < f.nh[o]; i++)
			check_object(&f, o, f.h[o][i]);
	kobj_owner_fini(&f.own[0]);
	kobj_owner_fini(&f.own[1]);
	pools_empty();
	return 0;
}

#ifdef KOBJ_FUZZ_REPLAY
/*
 * Replay driver for ctest: runs every corpus file named on the command line (CMake globs
 * tests/fuzz/kobj/corpus) and `-g N` inputs generated from a fixed seed.
 */
static int run_file(const char *path)
{
	static uint8_t data[1 << 16];
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "kobj_fuzz_replay: cannot open corpus file %s\n", path);
		return 1;
	}
	size_t n = fread(data, 1, sizeof(data), fp);
	fclose(fp);
	LLVMFuzzerTestOneInput(data, n);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned files = 0, generated = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-g") && i + 1 < argc) {
			unsigned count = (unsigned)atoi(argv[++i]);
			static uint8_t data[4096];
			uint64_t s = 0x9e3779b97f4a7c15ull;
			for (unsigned k = 0; k < count; k++) {
				size_t len = 64 + (k * 131u) % (sizeof(data) - 64);
				for (size_t j = 0; j < len; j++) {
					s ^= s << 13;
					s ^= s >> 7;
					s ^= s << 17;
					data[j] = (uint8_t)s;
				}
				LLVMFuzzerTestOneInput(data, len);
				generated++;
			}
		} else {
			rc |= run_file(argv[i]);
			files++;
		}
	}
	if (kobj_node_free(k32_default_allocator(), KN) == K32_OK)
		KN = NULL;
	printf("kobj_fuzz_replay: %u corpus files and %u generated inputs ran, invariants held\n",
	       files, generated);
	return rc || (files + generated == 0);
}
#endif
