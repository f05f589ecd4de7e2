/*
 * store_mem.c - the embedded backend: objects in memory, every write in the log first.
 *
 * State: a sorted array of version pointers (the index, binary-searched; inserts move the
 * tail, which is cheap at K32_STORE_MAX_OBJECTS scale and keeps 8 bytes per object), the
 * current revision, a ring of the last events (one per revision, so the event of revision r
 * sits at ring[r % ring_cap]) and a list of watchers.
 *
 * Invariants (under mu):
 *  - idx is sorted by key and holds one reference to each live version;
 *  - the ring holds exactly the events of revisions (compact_rev, rev], each with its own
 *    references to obj and prev;
 *  - a live watcher has next_rev > compact_rev, and pending counts the events at revisions
 *    >= next_rev that match its prefix.
 *
 * A write: under write_mu, check preconditions (against the newest pending write of the key,
 * else the index), build the new version, make room in the index, append the log record
 * (store_wal.c) and queue it in pend; then group commit: the first waiting writer that finds
 * no fsync running becomes the leader, takes every pending write so far, releases write_mu
 * for the fsync (others append meanwhile), and on success publishes them in revision order
 * under mu (index, rev, history event, watcher wake-ups) and tells their writers. So a write
 * is acknowledged, and visible to readers and watchers, only after an fsync that began after
 * its record was appended. A failed fsync fails every pending write (their bytes are cut off
 * the log, memory never saw them). Anything else that can fail happens before the append.
 *
 * Lists at an older revision (continue tokens, rev option) are answered from the index plus
 * the history ring: for a key changed after revision R, its version at R is the prev of the
 * first event after R (NULL if that event created it).
 */
#include "store/store_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"

#define MOD "store"

/* ---- allocator ------------------------------------------------------------------------ */

static void *locked_alloc(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct store_mem *m = ud;
	void *p;

	k32_mutex_lock(&m->alloc_mu);
	p = m->base->fn(m->base->ud, ptr, old_len, new_len);
	if (new_len == 0) {
		m->mem.cur_bytes -= old_len;
	} else if (p) {
		m->mem.cur_bytes = m->mem.cur_bytes - old_len + new_len;
		if (m->mem.cur_bytes > m->mem.peak_bytes)
			m->mem.peak_bytes = m->mem.cur_bytes;
		m->mem.allocs++;
	} else {
		m->mem.failures++;
	}
	k32_mutex_unlock(&m->alloc_mu);
	return p;
}

/* ---- versions ------------------------------------------------------------------------- */

struct store_obj *store_mem_obj_new(struct store_mem *m, const char *key, size_t key_len,
				    const void *val, size_t val_len, size_t rv_off,
				    uint64_t mod_rev, uint64_t create_rev)
{
	char digits[24];
	size_t dlen = 0;
	size_t len;
	struct store_obj *obj;
	char *k, *d;

	if (rv_off != STORE_NO_STAMP)
		dlen =
		    (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)mod_rev);
	len = val_len + dlen;
	obj = k32_alloc(&m->alloc, sizeof(*obj) + key_len + 1 + len + 1);
	if (!obj)
		return NULL;
	obj->create_rev = create_rev;
	obj->mod_rev = mod_rev;
	atomic_init(&obj->refs, 1);
	obj->len = (uint32_t)len;
	obj->key_len = (uint16_t)key_len;
	obj->flags = 0;
	k = (char *)(obj + 1);
	memcpy(k, key, key_len);
	k[key_len] = '\0';
	d = k + key_len + 1;
	if (dlen) {
		memcpy(d, val, rv_off);
		memcpy(d + rv_off, digits, dlen);
		memcpy(d + rv_off + dlen, (const char *)val + rv_off, val_len - rv_off);
	} else if (val_len) {
		memcpy(d, val, val_len);
	}
	d[len] = '\0';
	return obj;
}

void store_mem_obj_unref(struct store_mem *m, struct store_obj *obj)
{
	if (!obj)
		return;
	if (atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel) == 1)
		k32_free(&m->alloc, obj, store_obj_size(obj));
}

static struct store_obj *obj_ref(struct store_obj *obj)
{
	if (obj)
		atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
	return obj;
}

/* ---- index ---------------------------------------------------------------------------- */

uint32_t store_mem_find(const struct store_mem *m, const char *key, size_t key_len, bool *out_found)
{
	uint32_t lo = 0, hi = m->idx_count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct store_obj *o = m->idx[mid];

		if (store_key_cmp(store_obj_key(o), o->key_len, key, key_len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out_found = lo < m->idx_count && store_key_cmp(store_obj_key(m->idx[lo]),
							m->idx[lo]->key_len, key, key_len) == 0;
	return lo;
}

k32_status_t store_mem_reserve(struct store_mem *m, uint32_t more, struct k32_err *err)
{
	uint64_t need = (uint64_t)m->idx_count + more;
	uint32_t ncap;
	void *p;

	if (need <= m->idx_cap)
		return K32_OK;
	if (need > m->max_objects)
		return k32_err_set(
		    err, K32_ERR_NO_RESOURCES, MOD,
		    "store: %" PRIu32 " objects stored (+%" PRIu32 " being written), the "
		    "limit K32_STORE_MAX_OBJECTS=%" PRIu32 "; delete objects or raise the limit",
		    m->idx_count, more - 1, m->max_objects);
	ncap = m->idx_cap ? m->idx_cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > m->max_objects)
		ncap = m->max_objects;
	p = k32_realloc(&m->alloc, m->idx, (size_t)m->idx_cap * sizeof(*m->idx),
			(size_t)ncap * sizeof(*m->idx));
	if (!p)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				   "store: no memory to grow the index to %" PRIu32 " slots", ncap);
	m->idx = p;
	m->idx_cap = ncap;
	return K32_OK;
}

static void idx_insert(struct store_mem *m, uint32_t pos, struct store_obj *obj)
{
	memmove(&m->idx[pos + 1], &m->idx[pos], (size_t)(m->idx_count - pos) * sizeof(*m->idx));
	m->idx[pos] = obj;
	m->idx_count++;
	m->obj_bytes += store_obj_size(obj);
}

static void idx_remove(struct store_mem *m, uint32_t pos)
{
	m->obj_bytes -= store_obj_size(m->idx[pos]);
	memmove(&m->idx[pos], &m->idx[pos + 1], (size_t)(m->idx_count - pos - 1) * sizeof(*m->idx));
	m->idx_count--;
}

static bool has_prefix(const struct store_obj *obj, const char *prefix, size_t prefix_len)
{
	return obj->key_len >= prefix_len && memcmp(store_obj_key(obj), prefix, prefix_len) == 0;
}

/* ---- history and watchers (under mu) -------------------------------------------------- */

static void notify(struct store_mwatch *w)
{
	if (w->notify)
		w->notify(w->notify_ctx);
}

/* Drops the oldest event; watchers still positioned on it lose it (if it matches). */
static void hist_evict(struct store_mem *m)
{
	uint64_t r = m->compact_rev + 1;
	struct store_hist *h = &m->ring[r % m->ring_cap];

	for (struct store_mwatch *w = m->watchers; w; w = w->next) {
		if (w->closed != K32_OK || w->next_rev != r)
			continue;
		if (has_prefix(h->obj, w->prefix, w->prefix_len)) {
			w->closed = K32_ERR_COMPACTED;
			notify(w);
		} else {
			w->next_rev = r + 1;
		}
	}
	m->hist_bytes -= h->bytes;
	store_mem_obj_unref(m, h->obj);
	store_mem_obj_unref(m, h->prev);
	memset(h, 0, sizeof(*h));
	m->compact_rev = r;
}

/* Publishes the event of revision m->rev (just set); takes over the references obj, prev. */
static void commit_event(struct store_mem *m, uint32_t type, struct store_obj *obj,
			 struct store_obj *prev)
{
	uint64_t r = m->rev;
	struct store_hist *h;

	if (r - 1 - m->compact_rev >= m->ring_cap)
		hist_evict(m);
	h = &m->ring[r % m->ring_cap];
	h->rev = r;
	h->type = type;
	h->obj = obj;
	h->prev = prev;
	/* Count what only history keeps alive: the replaced or deleted version. Every version
	 * that is no longer live is the prev of exactly one event, so the sum is exact; the new
	 * version is live (or the prev of a later event) and is counted there. */
	h->bytes = prev ? (uint32_t)store_obj_size(prev) : 0;
	m->hist_bytes += h->bytes;

	for (struct store_mwatch *w = m->watchers; w; w = w->next) {
		if (w->closed != K32_OK || r < w->next_rev)
			continue;
		if (has_prefix(obj, w->prefix, w->prefix_len)) {
			if (++w->pending > m->watch_queue)
				w->closed = K32_ERR_COMPACTED;
			notify(w);
		} else if (w->next_rev == r) {
			w->next_rev = r + 1;
		}
	}
	while (m->hist_bytes > m->history_limit && m->rev - m->compact_rev > 1)
		hist_evict(m);
	k32_plat()->cond_broadcast(&m->cond);
}

/* ---- reads ---------------------------------------------------------------------------- */

static uint64_t mem_rev(void *be)
{
	struct store_mem *m = be;
	uint64_t r;

	k32_mutex_lock(&m->mu);
	r = m->rev;
	k32_mutex_unlock(&m->mu);
	return r;
}

static k32_status_t mem_get(void *be, const char *key, struct store_obj **out_obj,
			    struct k32_err *err)
{
	struct store_mem *m = be;
	size_t key_len = strlen(key);
	bool found;
	uint32_t pos;

	k32_mutex_lock(&m->mu);
	pos = store_mem_find(m, key, key_len, &found);
	if (found)
		*out_obj = obj_ref(m->idx[pos]);
	k32_mutex_unlock(&m->mu);
	if (!found)
		return k32_err_set(err, K32_ERR_NOT_FOUND, MOD, "store: %s not found", key);
	return K32_OK;
}

static void mem_obj_unref(void *be, struct store_obj *obj)
{
	store_mem_obj_unref(be, obj);
}

/* A key changed after the list revision, with its state at that revision. */
struct overlay {
	struct store_obj *key_obj; /* any version of the key (for its name) */
	struct store_obj *state;   /* version at the list revision; NULL: absent then */
	uint64_t rev;		   /* first change after the list revision */
};

static int overlay_cmp(const void *pa, const void *pb)
{
	const struct overlay *a = pa, *b = pb;
	int c = store_key_cmp(store_obj_key(a->key_obj), a->key_obj->key_len,
			      store_obj_key(b->key_obj), b->key_obj->key_len);

	if (c)
		return c;
	return a->rev < b->rev ? -1 : a->rev > b->rev;
}

/* Parses "<rev>:<key>" into *out_rev and the key (a pointer into token). */
static k32_status_t parse_token(const char *token, const char *prefix, size_t prefix_len,
				uint64_t *out_rev, const char **out_key, size_t *out_key_len,
				struct k32_err *err)
{
	uint64_t rev = 0;
	const char *p = token;
	size_t klen;

	while (*p >= '0' && *p <= '9' && rev < UINT64_MAX / 10)
		rev = rev * 10 + (uint64_t)(*p++ - '0');
	klen = *p == ':' ? strlen(p + 1) : 0;
	if (p == token || *p != ':' || rev == 0 || klen > K32_STORE_KEY_MAX || klen < prefix_len ||
	    memcmp(p + 1, prefix, prefix_len) != 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, MOD,
				   "store list: continue token \"%.48s\" is malformed or belongs "
				   "to another list; restart the list without it",
				   token);
	*out_rev = rev;
	*out_key = p + 1;
	*out_key_len = klen;
	return K32_OK;
}

/* Collects, sorted and de-duplicated, the keys in [lo, hi) changed after rev (under mu). */
static k32_status_t collect_overlay(struct store_mem *m, uint64_t rev, const char *lo,
				    size_t lo_len, bool lo_excl, const char *hi, size_t hi_len,
				    struct overlay **out, uint32_t *out_count, struct k32_err *err)
{
	uint32_t n = 0, cap = (uint32_t)(m->rev - rev), k;
	struct overlay *ov;

	*out = NULL;
	*out_count = 0;
	if (cap == 0)
		return K32_OK;
	ov = k32_alloc(&m->alloc, (size_t)cap * sizeof(*ov));
	if (!ov)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				   "store list: no memory for %" PRIu32 " history entries", cap);
	for (uint64_t r = rev + 1; r <= m->rev; r++) {
		struct store_hist *h = &m->ring[r % m->ring_cap];
		const char *key = store_obj_key(h->obj);
		int c = store_key_cmp(key, h->obj->key_len, lo, lo_len);

		if (c < 0 || (c == 0 && lo_excl))
			continue;
		if (store_key_cmp(key, h->obj->key_len, hi, hi_len) >= 0)
			continue;
		ov[n].key_obj = h->obj;
		ov[n].state = h->type == STORE_EVENT_ADDED ? NULL : h->prev;
		ov[n].rev = r;
		n++;
	}
	qsort(ov, n, sizeof(*ov), overlay_cmp);
	/* keep the first change of each key: the state before it is the state at rev */
	k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (k && store_key_cmp(store_obj_key(ov[k - 1].key_obj), ov[k - 1].key_obj->key_len,
				       store_obj_key(ov[i].key_obj), ov[i].key_obj->key_len) == 0)
			continue;
		ov[k++] = ov[i];
	}
	*out = ov;
	*out_count = k;
	return K32_OK;
}

static k32_status_t mem_list(void *be, const char *prefix, const struct store_list_opts *opts,
			     struct store_list *out, struct k32_err *err)
{
	struct store_mem *m = be;
	size_t plen = strlen(prefix);
	char hi[K32_STORE_KEY_MAX + 1];
	const char *lo = prefix, *last = NULL;
	size_t lo_len = plen;
	bool lo_excl = false, more = false;
	uint64_t rev;
	uint32_t i, end, j = 0, n_ov = 0, bound;
	struct overlay *ov = NULL;
	k32_status_t s = K32_OK;
	bool found;

	/* the prefix ends in '/'; every key under it sorts below prefix-with-'0' */
	memcpy(hi, prefix, plen);
	hi[plen - 1] = '0';
	k32_mutex_lock(&m->mu);
	rev = opts->rev ? opts->rev : m->rev;
	if (opts->continue_token && opts->continue_token[0]) {
		s = parse_token(opts->continue_token, prefix, plen, &rev, &lo, &lo_len, err);
		if (s != K32_OK)
			goto out_unlock;
		lo_excl = true;
	}
	if (rev > m->rev) {
		s = k32_err_set(err, K32_ERR_OUT_OF_RANGE, MOD,
				"store list: revision %llu is newer than the current revision %llu",
				(unsigned long long)rev, (unsigned long long)m->rev);
		goto out_unlock;
	}
	if (rev < m->compact_rev) {
		s = k32_err_set(err, K32_ERR_COMPACTED, MOD,
				"store list: revision %llu is compacted (history starts after "
				"%llu); restart the list",
				(unsigned long long)rev, (unsigned long long)m->compact_rev);
		goto out_unlock;
	}
	s = collect_overlay(m, rev, lo, lo_len, lo_excl, hi, plen, &ov, &n_ov, err);
	if (s != K32_OK)
		goto out_unlock;
	i = store_mem_find(m, lo, lo_len, &found);
	if (found && lo_excl)
		i++;
	end = store_mem_find(m, hi, plen, &found);
	bound = (i < end ? end - i : 0) + n_ov;
	if (opts->limit && opts->limit < bound)
		bound = opts->limit;
	if (bound) {
		out->items = k32_alloc(&m->alloc, (size_t)bound * sizeof(*out->items));
		if (!out->items) {
			s = k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
					"store list: no memory for %" PRIu32 " results", bound);
			goto out_free;
		}
		out->cap = bound;
	}
	while (i < end || j < n_ov) {
		struct store_obj *cand;
		int c;

		if (i >= end)
			c = 1;
		else if (j >= n_ov)
			c = -1;
		else
			c = store_key_cmp(store_obj_key(m->idx[i]), m->idx[i]->key_len,
					  store_obj_key(ov[j].key_obj), ov[j].key_obj->key_len);
		if (c < 0) {
			cand = m->idx[i++];
		} else {
			cand = ov[j++].state;
			if (c == 0)
				i++;
		}
		if (!cand)
			continue;
		if (opts->limit && out->count == opts->limit) {
			more = true;
			break;
		}
		if (opts->filter && !opts->filter(opts->filter_ctx, cand))
			continue;
		out->items[out->count++] = obj_ref(cand);
		last = store_obj_key(cand);
	}
	out->rev = rev;
	if (more && last)
		snprintf(out->continue_token, sizeof(out->continue_token), "%llu:%s",
			 (unsigned long long)rev, last);
out_free:
	if (ov)
		k32_free(&m->alloc, ov, (size_t)(m->rev - rev) * sizeof(*ov));
out_unlock:
	k32_mutex_unlock(&m->mu);
	return s;
}

static void mem_list_fini(void *be, struct store_list *list)
{
	struct store_mem *m = be;

	for (uint32_t i = 0; i < list->count; i++)
		store_mem_obj_unref(m, list->items[i]);
	if (list->items)
		k32_free(&m->alloc, list->items, (size_t)list->cap * sizeof(*list->items));
	list->items = NULL;
	list->count = 0;
	list->cap = 0;
}

/* ---- writes --------------------------------------------------------------------------- */

/* Checks done by every write before it builds anything (caller holds write_mu). Waits
 * while the group commit queue is full. */
static k32_status_t write_begin(struct store_mem *m, struct k32_err *err)
{
	while (m->pend_count >= K32_STORE_GROUP_MAX)
		k32_plat()->cond_wait(&m->sync_cond, &m->write_mu, K32_FOREVER);
	if (m->broken)
		return k32_err_set(err, K32_ERR_BAD_STATE, MOD,
				   "store: an earlier failed write could not be undone in %s; "
				   "writes are refused until the store is reopened",
				   m->log_path ? m->log_path : "the log");
	if (m->log_stale) {
		struct k32_err e;

		if (store_wal_log_replace(m, &e) != K32_OK)
			return k32_err_set(
			    err, K32_ERR_IO, MOD,
			    "store: a snapshot expects a new %s, which cannot be made "
			    "(%s); writes are refused until it can: check the data "
			    "directory (space, permissions)",
			    m->log_path, e.msg);
	}
	if (m->log_path && m->log_bytes > 4 * (uint64_t)m->rotate_bytes)
		return k32_err_set(
		    err, K32_ERR_IO, MOD,
		    "store: %s is %llu bytes, 4x the rotation size %zu, because snapshots keep "
		    "failing; check the data directory (space, permissions)",
		    m->log_path, (unsigned long long)m->log_bytes, m->rotate_bytes);
	if (m->rev + m->pend_count >= UINT64_MAX - 1)
		return k32_err_set(err, K32_ERR_OUT_OF_RANGE, MOD, "store: revisions exhausted");
	return K32_OK;
}

/* The revision the next write gets (pending writes hold the ones before it). */
static uint64_t next_rev(const struct store_mem *m)
{
	return m->rev + m->pend_count + 1;
}

/* The version a new write of key is checked against: the newest pending write of the key,
 * else the index's; NULL when the key does not exist (or its last write deletes it). */
static struct store_obj *current(struct store_mem *m, const char *key, size_t key_len)
{
	uint32_t pos;
	bool found;

	for (uint32_t i = m->pend_count; i-- > 0;) {
		const struct store_pend *p = &m->pend[i];

		if (store_key_cmp(store_obj_key(p->obj), p->obj->key_len, key, key_len) == 0)
			return p->type == STORE_REC_PUT ? p->obj : NULL;
	}
	pos = store_mem_find(m, key, key_len, &found);
	return found ? m->idx[pos] : NULL;
}

/* A write that grows the live bytes by add - sub: refused past max_bytes, and past
 * max_bytes less the reserve unless it is essential (a write that does not grow the store
 * never hits the reserve, so an ordinary update of the same size still goes through). */
static k32_status_t check_bytes(struct store_mem *m, size_t add, size_t sub, bool essential,
				struct k32_err *err)
{
	size_t after = m->obj_bytes + m->pend_add_bytes + add - m->pend_sub_bytes - sub;

	if (after > m->max_bytes)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, MOD,
				   "store: live objects would take %zu bytes, over "
				   "K32_STORE_MAX_BYTES=%zu; delete objects or raise the limit",
				   after, m->max_bytes);
	if (!essential && add > sub && after > m->max_bytes - m->reserve_bytes)
		return k32_err_set(
		    err, K32_ERR_NO_RESOURCES, MOD,
		    "store full: %zu bytes > K32_STORE_MAX_BYTES=%zu less K32_STORE_RESERVE_PCT="
		    "%d%% (for Leases, node status, deletes); delete objects or raise the limit",
		    after, m->max_bytes, K32_STORE_RESERVE_PCT);
	return K32_OK;
}

/* A create past max_objects less the reserve, unless essential (the hard limit is
 * store_mem_reserve's). */
static k32_status_t check_objects(struct store_mem *m, bool essential, struct k32_err *err)
{
	uint64_t after = (uint64_t)m->idx_count + m->pend_creates + 1;

	if (!essential && after > m->max_objects - m->reserve_objects)
		return k32_err_set(
		    err, K32_ERR_NO_RESOURCES, MOD,
		    "store full: %" PRIu64 " objects > K32_STORE_MAX_OBJECTS=%" PRIu32
		    " less K32_STORE_RESERVE_PCT=%d%% (for Leases, node status, deletes); "
		    "delete objects or raise the limit",
		    after, m->max_objects, K32_STORE_RESERVE_PCT);
	return K32_OK;
}

static k32_status_t persist(struct store_mem *m, uint8_t type, const struct store_obj *obj,
			    uint64_t rev, uint64_t aux, struct k32_err *err)
{
	if (!m->log_path)
		return K32_OK; /* memory only */
	if (type == STORE_REC_DELETE)
		return store_wal_append(m, type, store_obj_key(obj), obj->key_len, NULL, 0, rev, 0,
					err);
	return store_wal_append(m, type, store_obj_key(obj), obj->key_len, store_obj_data(obj),
				obj->len, rev, aux, err);
}

static void maybe_rotate(struct store_mem *m)
{
	struct k32_err e;

	if (!m->log_path || m->log_stale || m->pend_count || m->log_bytes <= m->rotate_bytes)
		return;
	if (store_wal_rotate(m, &e) != K32_OK)
		K32_LOGW(MOD,
			 "store: snapshot at revision %llu failed (%s); the log keeps growing "
			 "(%llu bytes)",
			 (unsigned long long)m->rev, e.msg, (unsigned long long)m->log_bytes);
}

/* Publishes a synced pending write (under mu; revision order); takes over its reference. */
static void publish(struct store_mem *m, struct store_pend *p)
{
	struct store_waiter *w = p->waiter;
	struct store_obj *obj = p->obj, *old;
	uint32_t pos;
	bool found;

	pos = store_mem_find(m, store_obj_key(obj), obj->key_len, &found);
	m->rev = p->rev;
	if (p->type == STORE_REC_DELETE) {
		old = m->idx[pos]; /* the version checked: writes publish in order */
		idx_remove(m, pos);
		if (w->want_obj)
			w->out_obj = obj_ref(old);
		/* the index's reference moves to the event's obj, the pending one to prev */
		commit_event(m, STORE_EVENT_DELETED, old, obj);
		return;
	}
	if (w->want_obj)
		w->out_obj = obj_ref(obj);
	if (found) {
		old = m->idx[pos];
		m->obj_bytes = m->obj_bytes - store_obj_size(old) + store_obj_size(obj);
		m->idx[pos] = obj;
		/* the index's reference to old moves to the event's prev */
		commit_event(m, STORE_EVENT_MODIFIED, obj_ref(obj), old);
	} else {
		idx_insert(m, pos, obj);
		commit_event(m, STORE_EVENT_ADDED, obj_ref(obj), NULL);
	}
}

/* Drops the first n pending entries from the queue's accounting and moves the rest up. */
static void pend_drop(struct store_mem *m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		m->pend_creates -= m->pend[i].create;
		m->pend_add_bytes -= m->pend[i].add_bytes;
		m->pend_sub_bytes -= m->pend[i].sub_bytes;
	}
	memmove(m->pend, m->pend + n, (size_t)(m->pend_count - n) * sizeof(*m->pend));
	m->pend_count -= n;
}

/* The fsync failed: no pending write is acknowledged; their bytes are cut off the log. */
static void fail_pending(struct store_mem *m, const struct k32_err *why)
{
	const struct k32_platform_ops *ops = k32_plat();
	struct k32_err e2;

	m->sync_err = *why;
	for (uint32_t i = 0; i < m->pend_count; i++) {
		store_mem_obj_unref(m, m->pend[i].obj);
		m->pend[i].waiter->status = K32_ERR_IO;
		m->pend[i].waiter->done = true;
	}
	pend_drop(m, m->pend_count);
	if (ops->file_truncate(m->log, m->synced_bytes, &e2) != K32_OK ||
	    ops->file_sync(m->log, &e2) != K32_OK) {
		m->broken = true;
		K32_LOGE(MOD,
			 "store: %s: cannot cut failed writes back to %llu bytes (%s); refusing "
			 "writes until reopened",
			 m->log_path, (unsigned long long)m->synced_bytes, e2.msg);
	}
	m->log_bytes = m->synced_bytes;
}

/*
 * Group commit (write_mu held on entry and exit): waits until an fsync covers w's write.
 * The leader syncs every write appended so far with write_mu released, then publishes them;
 * writers arriving meanwhile append and wait for the next fsync.
 */
static k32_status_t commit_wait(struct store_mem *m, struct store_waiter *w, uint64_t rev,
				struct k32_err *err)
{
	const struct k32_platform_ops *ops = k32_plat();

	while (!w->done) {
		uint32_t n = m->pend_count;
		uint64_t upto = m->log_bytes;
		struct k32_err e;
		k32_status_t s;

		if (m->syncing) {
			ops->cond_wait(&m->sync_cond, &m->write_mu, K32_FOREVER);
			continue;
		}
		m->syncing = true;
		k32_mutex_unlock(&m->write_mu);
		k32_err_clear(&e);
		uint64_t t0 = k32_now_us();
		s = ops->file_sync(m->log, &e);
		uint64_t took = k32_now_us() - t0;
		k32_mutex_lock(&m->write_mu);
		m->syncing = false;
		m->log_syncs++;
		k32_prom_hist_observe(&m->sync_hist, took);
		if (s == K32_OK) {
			m->synced_bytes = upto;
			k32_mutex_lock(&m->mu);
			for (uint32_t i = 0; i < n; i++)
				publish(m, &m->pend[i]);
			k32_mutex_unlock(&m->mu);
			for (uint32_t i = 0; i < n; i++) {
				m->pend[i].waiter->status = K32_OK;
				m->pend[i].waiter->done = true;
			}
			pend_drop(m, n);
			maybe_rotate(m);
		} else {
			fail_pending(m, &e);
		}
		ops->cond_broadcast(&m->sync_cond);
	}
	if (w->status != K32_OK)
		return k32_err_set(err, w->status, MOD, "store: revision %llu not saved to %s: %s",
				   (unsigned long long)rev, m->log_path, m->sync_err.msg);
	return K32_OK;
}

/*
 * Appends a checked write and queues it (caller holds write_mu), then waits for its fsync
 * (memory only: publishes it at once). On an append failure the caller still owns obj;
 * after that the queue does (the waiter gets a reference when it asked for one).
 */
static k32_status_t submit(struct store_mem *m, struct store_pend *p, uint64_t aux,
			   struct k32_err *err)
{
	struct store_pend *q;
	k32_status_t s;

	s = persist(m, p->type, p->obj, p->rev, aux, err);
	if (s != K32_OK)
		return s;
	q = &m->pend[m->pend_count++];
	*q = *p;
	m->pend_creates += q->create;
	m->pend_add_bytes += q->add_bytes;
	m->pend_sub_bytes += q->sub_bytes;
	if (!m->log_path) {
		k32_mutex_lock(&m->mu);
		publish(m, q);
		k32_mutex_unlock(&m->mu);
		q->waiter->status = K32_OK;
		q->waiter->done = true;
		pend_drop(m, 1);
		return K32_OK;
	}
	return commit_wait(m, p->waiter, p->rev, err);
}

static k32_status_t mem_create(void *be, const char *key, const struct store_value *val,
			       struct store_obj **out_obj, struct k32_err *err)
{
	struct store_mem *m = be;
	size_t key_len = strlen(key);
	struct store_waiter w = {.want_obj = out_obj != NULL};
	struct store_obj *obj = NULL, *cur;
	uint64_t r;
	k32_status_t s;

	k32_mutex_lock(&m->write_mu);
	s = write_begin(m, err);
	if (s != K32_OK)
		goto out_unlock;
	cur = current(m, key, key_len);
	if (cur) {
		s = k32_err_set(err, K32_ERR_ALREADY_EXISTS, MOD,
				"store: %s already exists (revision %llu)", key,
				(unsigned long long)cur->mod_rev);
		goto out_unlock;
	}
	r = next_rev(m);
	obj = store_mem_obj_new(m, key, key_len, val->data, val->len, val->rv_off, r, r);
	if (!obj) {
		s = k32_err_set(err, K32_ERR_NO_MEMORY, MOD, "store: no memory for %s (%zu bytes)",
				key, val->len);
		goto out_unlock;
	}
	s = check_bytes(m, store_obj_size(obj), 0, val->essential, err);
	if (s == K32_OK)
		s = check_objects(m, val->essential, err);
	if (s != K32_OK)
		goto out_free;
	k32_mutex_lock(&m->mu);
	s = store_mem_reserve(m, m->pend_creates + 1, err);
	k32_mutex_unlock(&m->mu);
	if (s != K32_OK)
		goto out_free;
	struct store_pend p = {.rev = r,
			       .type = STORE_REC_PUT,
			       .obj = obj,
			       .waiter = &w,
			       .create = true,
			       .add_bytes = store_obj_size(obj)};
	s = submit(m, &p, r, err);
	if (s != K32_OK && !w.done)
		goto out_free; /* the append failed: obj is still ours */
	if (s == K32_OK && out_obj)
		*out_obj = w.out_obj;
	k32_mutex_unlock(&m->write_mu);
	return s;

out_free:
	store_mem_obj_unref(m, obj);
out_unlock:
	k32_mutex_unlock(&m->write_mu);
	return s;
}

static k32_status_t precondition(const char *key, const struct store_obj *cur, uint64_t expect,
				 struct k32_err *err)
{
	if (expect && cur->mod_rev != expect)
		return k32_err_set(err, K32_ERR_CONFLICT, MOD,
				   "store: %s was modified: expected revision %llu, current is "
				   "%llu; re-read and retry",
				   key, (unsigned long long)expect,
				   (unsigned long long)cur->mod_rev);
	return K32_OK;
}

static k32_status_t mem_update(void *be, const char *key, const struct store_value *val,
			       uint64_t expect_rev, struct store_obj **out_obj, struct k32_err *err)
{
	struct store_mem *m = be;
	size_t key_len = strlen(key);
	struct store_waiter w = {.want_obj = out_obj != NULL};
	struct store_obj *obj = NULL, *old;
	uint64_t r;
	k32_status_t s;

	k32_mutex_lock(&m->write_mu);
	s = write_begin(m, err);
	if (s != K32_OK)
		goto out_unlock;
	old = current(m, key, key_len);
	if (!old) {
		s = k32_err_set(err, K32_ERR_NOT_FOUND, MOD, "store: %s not found", key);
		goto out_unlock;
	}
	s = precondition(key, old, expect_rev, err);
	if (s != K32_OK)
		goto out_unlock;
	r = next_rev(m);
	obj = store_mem_obj_new(m, key, key_len, val->data, val->len, val->rv_off, r,
				old->create_rev);
	if (!obj) {
		s = k32_err_set(err, K32_ERR_NO_MEMORY, MOD, "store: no memory for %s (%zu bytes)",
				key, val->len);
		goto out_unlock;
	}
	s = check_bytes(m, store_obj_size(obj), store_obj_size(old), val->essential, err);
	if (s != K32_OK)
		goto out_free;
	struct store_pend p = {.rev = r,
			       .type = STORE_REC_PUT,
			       .obj = obj,
			       .waiter = &w,
			       .add_bytes = store_obj_size(obj),
			       .sub_bytes = store_obj_size(old)};
	s = submit(m, &p, obj->create_rev, err);
	if (s != K32_OK && !w.done)
		goto out_free; /* the append failed: obj is still ours */
	if (s == K32_OK && out_obj)
		*out_obj = w.out_obj;
	k32_mutex_unlock(&m->write_mu);
	return s;

out_free:
	store_mem_obj_unref(m, obj);
out_unlock:
	k32_mutex_unlock(&m->write_mu);
	return s;
}

static k32_status_t mem_del(void *be, const char *key, uint64_t expect_rev,
			    struct store_obj **out_prev, uint64_t *out_rev, struct k32_err *err)
{
	struct store_mem *m = be;
	size_t key_len = strlen(key);
	struct store_waiter w = {.want_obj = out_prev != NULL};
	struct store_obj *old;
	uint64_t r;
	k32_status_t s;

	k32_mutex_lock(&m->write_mu);
	s = write_begin(m, err);
	if (s != K32_OK)
		goto out_unlock;
	old = current(m, key, key_len);
	if (!old) {
		s = k32_err_set(err, K32_ERR_NOT_FOUND, MOD, "store: %s not found", key);
		goto out_unlock;
	}
	s = precondition(key, old, expect_rev, err);
	if (s != K32_OK)
		goto out_unlock;
	r = next_rev(m);
	struct store_pend p = {.rev = r,
			       .type = STORE_REC_DELETE,
			       .obj = obj_ref(old),
			       .waiter = &w,
			       .sub_bytes = store_obj_size(old)};
	s = submit(m, &p, 0, err);
	if (s != K32_OK && !w.done)
		store_mem_obj_unref(m, old); /* the append failed: the queue never took it */
	if (s == K32_OK) {
		if (out_prev)
			*out_prev = w.out_obj;
		if (out_rev)
			*out_rev = r;
	}
out_unlock:
	k32_mutex_unlock(&m->write_mu);
	return s;
}

/* ---- watch ---------------------------------------------------------------------------- */

static k32_status_t mem_watch_open(void *be, const char *prefix, uint64_t after_rev,
				   store_notify_fn notify_fn, void *notify_ctx,
				   struct store_watch **out_w, struct k32_err *err)
{
	struct store_mem *m = be;
	size_t plen = strlen(prefix);
	struct store_mwatch *w;
	k32_status_t s = K32_OK;

	w = k32_calloc(&m->alloc, sizeof(*w) + plen + 1);
	if (!w)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD, "store: no memory for a watcher");
	w->base.ops = &store_mem_ops;
	w->m = m;
	w->notify = notify_fn;
	w->notify_ctx = notify_ctx;
	w->prefix_len = (uint16_t)plen;
	memcpy(w->prefix, prefix, plen + 1);

	k32_mutex_lock(&m->mu);
	if (m->watcher_count >= K32_STORE_MAX_WATCHERS) {
		s = k32_err_set(err, K32_ERR_NO_RESOURCES, MOD,
				"store: %" PRIu32
				" watchers open, the limit K32_STORE_MAX_WATCHERS=%d; "
				"close idle watches",
				m->watcher_count, K32_STORE_MAX_WATCHERS);
		goto out_unlock;
	}
	if (after_rev == 0)
		after_rev = m->rev;
	if (after_rev > m->rev) {
		s = k32_err_set(err, K32_ERR_COMPACTED, MOD,
				"store: watch from revision %llu: newer than the current revision "
				"%llu (was the store reset?); relist",
				(unsigned long long)after_rev, (unsigned long long)m->rev);
		goto out_unlock;
	}
	if (after_rev < m->compact_rev) {
		s = k32_err_set(
		    err, K32_ERR_COMPACTED, MOD,
		    "store: watch from revision %llu: history now starts after revision %llu (ring "
		    "of %" PRIu32 " events); relist and watch from the list's revision",
		    (unsigned long long)after_rev, (unsigned long long)m->compact_rev, m->ring_cap);
		goto out_unlock;
	}
	w->next_rev = after_rev + 1;
	for (uint64_t r = w->next_rev; r <= m->rev; r++)
		if (has_prefix(m->ring[r % m->ring_cap].obj, w->prefix, w->prefix_len))
			w->pending++;
	if (w->pending > m->watch_queue)
		w->closed = K32_ERR_COMPACTED;
	w->next = m->watchers;
	if (m->watchers)
		m->watchers->prev = w;
	m->watchers = w;
	m->watcher_count++;
out_unlock:
	k32_mutex_unlock(&m->mu);
	if (s != K32_OK)
		k32_free(&m->alloc, w, sizeof(*w) + plen + 1);
	else
		*out_w = &w->base;
	return s;
}

/* Moves up to cap pending events into out (under mu). */
static size_t take_events(struct store_mwatch *w, struct store_event *out, size_t cap)
{
	struct store_mem *m = w->m;
	size_t n = 0;

	if (w->pending == 0) {
		if (w->next_rev <= m->rev)
			w->next_rev = m->rev + 1;
		return 0;
	}
	while (w->next_rev <= m->rev && n < cap && w->pending) {
		struct store_hist *h = &m->ring[w->next_rev % m->ring_cap];

		if (has_prefix(h->obj, w->prefix, w->prefix_len)) {
			out[n].type = (enum store_event_type)h->type;
			out[n].rev = h->rev;
			out[n].obj = obj_ref(h->obj);
			out[n].prev = obj_ref(h->prev);
			n++;
			w->pending--;
		}
		w->next_rev++;
	}
	return n;
}

static k32_status_t mem_watch_next(struct store_watch *base, struct store_event *out, size_t cap,
				   size_t *out_count, int64_t deadline_us, struct k32_err *err)
{
	struct store_mwatch *w = (struct store_mwatch *)base;
	struct store_mem *m = w->m;
	k32_status_t s;

	k32_mutex_lock(&m->mu);
	for (;;) {
		if (w->closed == K32_ERR_COMPACTED) {
			s = k32_err_set(err, K32_ERR_COMPACTED, MOD,
					"store: watcher on %s fell more than %" PRIu32
					" events behind "
					"(K32_STORE_WATCH_QUEUE) or past the history ring; relist",
					w->prefix, m->watch_queue);
			break;
		}
		if (w->closed != K32_OK) {
			s = k32_err_set(err, w->closed, MOD, "store: watcher on %s was canceled",
					w->prefix);
			break;
		}
		*out_count = take_events(w, out, cap);
		if (*out_count) {
			s = K32_OK;
			break;
		}
		if (deadline_us == K32_NO_WAIT) {
			s = K32_ERR_SHOULD_WAIT;
			break;
		}
		if (deadline_us != K32_FOREVER && (int64_t)k32_now_us() >= deadline_us) {
			s = K32_ERR_TIMED_OUT;
			break;
		}
		k32_plat()->cond_wait(&m->cond, &m->mu, deadline_us);
	}
	k32_mutex_unlock(&m->mu);
	return s;
}

static uint64_t mem_watch_progress(struct store_watch *base)
{
	struct store_mwatch *w = (struct store_mwatch *)base;
	struct store_mem *m = w->m;
	uint64_t p;

	k32_mutex_lock(&m->mu);
	p = w->next_rev - 1;
	if (w->pending == 0 && p < m->rev)
		p = m->rev;
	k32_mutex_unlock(&m->mu);
	return p;
}

static void mem_watch_cancel(struct store_watch *base)
{
	struct store_mwatch *w = (struct store_mwatch *)base;
	struct store_mem *m = w->m;

	k32_mutex_lock(&m->mu);
	if (w->closed == K32_OK)
		w->closed = K32_ERR_CANCELED;
	k32_plat()->cond_broadcast(&m->cond);
	k32_mutex_unlock(&m->mu);
}

static void watch_unlink(struct store_mem *m, struct store_mwatch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		m->watchers = w->next;
	if (w->next)
		w->next->prev = w->prev;
	m->watcher_count--;
}

static void mem_watch_close(struct store_watch *base)
{
	struct store_mwatch *w = (struct store_mwatch *)base;
	struct store_mem *m = w->m;

	k32_mutex_lock(&m->mu);
	watch_unlink(m, w);
	k32_mutex_unlock(&m->mu);
	k32_free(&m->alloc, w, sizeof(*w) + w->prefix_len + 1);
}

/* ---- stats, open, close --------------------------------------------------------------- */

/* Bounds of the fsync duration histogram, in seconds: etcd's wal_fsync_duration_seconds
 * buckets (1 ms doubling to 8 s), so dashboards made for etcd read kube32's too. */
static const double store_fsync_le[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064,
					0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192};

static void mem_stats(void *be, struct store_stats *out)
{
	struct store_mem *m = be;

	k32_mutex_lock(&m->write_mu);
	out->log_bytes = m->log_bytes;
	out->snapshots = m->snapshots;
	out->log_writes = m->log_writes;
	out->log_syncs = m->log_syncs;
	out->log_sync_seconds = m->sync_hist;
	k32_mutex_lock(&m->mu);
	out->rev = m->rev;
	out->compact_rev = m->compact_rev;
	out->objects = m->idx_count;
	out->object_bytes = m->obj_bytes;
	out->history_events = (uint32_t)(m->rev - m->compact_rev);
	out->history_bytes = m->hist_bytes;
	out->watchers = m->watcher_count;
	out->max_objects = m->max_objects;
	out->max_bytes = m->max_bytes;
	out->reserve_objects = m->reserve_objects;
	out->reserve_bytes = m->reserve_bytes;
	k32_mutex_unlock(&m->mu);
	k32_mutex_unlock(&m->write_mu);
	k32_mutex_lock(&m->alloc_mu);
	out->mem = m->mem;
	k32_mutex_unlock(&m->alloc_mu);
}

static void mem_close(void *be)
{
	struct store_mem *m = be;
	const struct k32_platform_ops *ops = k32_plat();
	const struct k32_allocator *base = m->base;

	while (m->watchers) {
		struct store_mwatch *w = m->watchers;

		K32_LOGW(MOD, "store: closing with a watcher on %s still open; closing it",
			 w->prefix);
		watch_unlink(m, w);
		k32_free(&m->alloc, w, sizeof(*w) + w->prefix_len + 1);
	}
	if (m->ring) {
		while (m->compact_rev < m->rev)
			hist_evict(m);
		k32_free(&m->alloc, m->ring, (size_t)m->ring_cap * sizeof(*m->ring));
	}
	store_wal_mark_closed(m);
	for (uint32_t i = 0; i < m->idx_count; i++)
		store_mem_obj_unref(m, m->idx[i]);
	if (m->idx)
		k32_free(&m->alloc, m->idx, (size_t)m->idx_cap * sizeof(*m->idx));
	if (m->log)
		ops->file_close(m->log);
	if (m->log_path)
		k32_free(&m->alloc, m->log_path, m->log_path_len);
	if (m->snap_path)
		k32_free(&m->alloc, m->snap_path, m->snap_path_len);
	if (m->mark_path)
		k32_free(&m->alloc, m->mark_path, m->mark_path_len);
	if (m->pend)
		k32_free(&m->alloc, m->pend, K32_STORE_GROUP_MAX * sizeof(*m->pend));
	ops->cond_fini(&m->sync_cond);
	ops->cond_fini(&m->cond);
	ops->mutex_fini(&m->mu);
	ops->mutex_fini(&m->write_mu);
	ops->mutex_fini(&m->alloc_mu);
	k32_free(base, m, sizeof(*m));
}

static char *path_join(struct store_mem *m, const char *dir, const char *file, size_t *out_len)
{
	size_t len = strlen(dir) + 1 + strlen(file) + 1;
	char *p = k32_alloc(&m->alloc, len);

	if (p) {
		snprintf(p, len, "%s/%s", dir, file);
		*out_len = len;
	}
	return p;
}

k32_status_t store_mem_open(const struct store_config *cfg, struct store_mem **out,
			    struct k32_err *err)
{
	const struct k32_allocator *base = cfg->alloc ? cfg->alloc : k32_default_allocator();
	const struct k32_platform_ops *ops = k32_plat();
	struct store_mem *m;
	k32_status_t s;

	*out = NULL;
	m = k32_calloc(base, sizeof(*m));
	if (!m)
		return k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				   "store: no memory for the store (%zu bytes)", sizeof(*m));
	m->base = base;
	m->alloc.fn = locked_alloc;
	m->alloc.ud = m;
	ops->mutex_init(&m->alloc_mu);
	ops->mutex_init(&m->write_mu);
	ops->mutex_init(&m->mu);
	ops->cond_init(&m->cond);
	ops->cond_init(&m->sync_cond);
	m->sync_hist.le = store_fsync_le;
	m->sync_hist.n = sizeof(store_fsync_le) / sizeof(store_fsync_le[0]);
	m->max_objects = cfg->max_objects ? cfg->max_objects : K32_STORE_MAX_OBJECTS;
	m->max_bytes = cfg->max_bytes ? cfg->max_bytes : K32_STORE_MAX_BYTES;
	m->reserve_objects = (uint32_t)((uint64_t)m->max_objects * K32_STORE_RESERVE_PCT / 100);
	m->reserve_bytes = m->max_bytes / 100 * K32_STORE_RESERVE_PCT;
	m->watch_queue = cfg->watch_queue ? cfg->watch_queue : K32_STORE_WATCH_QUEUE;
	m->history_limit = cfg->history_bytes ? cfg->history_bytes : K32_STORE_HISTORY_BYTES;
	m->rotate_bytes =
	    cfg->log_rotate_bytes ? cfg->log_rotate_bytes : K32_STORE_LOG_ROTATE_BYTES;
	m->ring_cap = cfg->history_events ? cfg->history_events : K32_STORE_HISTORY_EVENTS;
	if (m->ring_cap < 2 || m->ring_cap > (1u << 24)) {
		s = k32_err_set(err, K32_ERR_INVALID_ARGS, MOD,
				"store: history_events %" PRIu32 " out of range [2, 16M]",
				m->ring_cap);
		goto out_close;
	}
	m->ring = k32_calloc(&m->alloc, (size_t)m->ring_cap * sizeof(*m->ring));
	m->pend = k32_calloc(&m->alloc, K32_STORE_GROUP_MAX * sizeof(*m->pend));
	if (!m->ring || !m->pend) {
		s = k32_err_set(err, K32_ERR_NO_MEMORY, MOD,
				"store: no memory for the history ring (%" PRIu32 " events)",
				m->ring_cap);
		goto out_close;
	}
	if (cfg->data_dir) {
		s = ops->dir_create(cfg->data_dir, err);
		if (s != K32_OK)
			goto out_close;
		m->log_path = path_join(m, cfg->data_dir, "store.log", &m->log_path_len);
		m->snap_path = path_join(m, cfg->data_dir, "store.snap", &m->snap_path_len);
		m->mark_path = path_join(m, cfg->data_dir, "store.closed", &m->mark_path_len);
		m->accept_log_loss = cfg->accept_log_loss;
		if (!m->log_path || !m->snap_path || !m->mark_path) {
			s = k32_err_set(err, K32_ERR_NO_MEMORY, MOD, "store: no memory for paths");
			goto out_close;
		}
		s = store_wal_load(m, err);
		if (s != K32_OK)
			goto out_close;
	}
	m->compact_rev = m->rev;
	*out = m;
	return K32_OK;

out_close:
	m->compact_rev = m->rev; /* the ring is empty: nothing to evict */
	mem_close(m);
	return s;
}

const struct store_backend_ops store_mem_ops = {
    .name = "embedded",
    .close = mem_close,
    .rev = mem_rev,
    .get = mem_get,
    .list = mem_list,
    .list_fini = mem_list_fini,
    .create = mem_create,
    .update = mem_update,
    .del = mem_del,
    .obj_unref = mem_obj_unref,
    .watch_open = mem_watch_open,
    .watch_next = mem_watch_next,
    .watch_progress = mem_watch_progress,
    .watch_cancel = mem_watch_cancel,
    .watch_close = mem_watch_close,
    .stats = mem_stats,
};
