/*
 * ctrl_util.c - helpers shared by the controllers: API requests through the client
 * (kclient), lists (from the informers' caches when they can answer, else paged from the
 * API), Events, JSON and condition helpers, Kubernetes quantities, label selectors, node
 * affinity, taints and tolerations, hardware matching, RFC 3339 time.
 *
 * Everything here runs inside a pass (run_lock held) except the pure functions, which are
 * reentrant. Allocation: cJSON and one k32_buf per request, freed before returning.
 */
#include "ctrl/ctrl_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_buf.h"
#include "base/k32_crc32.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"

/* ---- time ------------------------------------------------------------------------------ */

/* RFC 3339 in and out: kmeta's one implementation (these names stay for ctrl's callers). */
void ctrl_fmt_time(uint64_t s, char *buf, size_t cap)
{
	char t[KMETA_RFC3339_LEN];
	kmeta_rfc3339(s, t);
	snprintf(buf, cap, "%s", t);
}

bool ctrl_parse_time(const char *s, uint64_t *out_s)
{
	return kmeta_rfc3339_parse(s, out_s);
}

/* ---- requests -------------------------------------------------------------------------- */

k32_status_t ctrl_do(struct ctrl *c, const char *method, const char *target, const char *ctype,
		     const char *body, int *out_code, cJSON **out, struct k32_err *err)
{
	struct k32_buf buf;
	k32_buf_init(&buf, k32_default_allocator(), K32_CTRL_RESP_BYTES, "controller API answer");
	*out_code = 0;
	if (out)
		*out = NULL;
	k32_status_t st = kclient_do(c->kc, method, target, ctype, body, body ? strlen(body) : 0,
				     out_code, &buf, err);
	if (!st && out) {
		*out = cJSON_ParseWithLength(k32_buf_cstr(&buf), buf.len);
		if (!*out)
			st = k32_err_set(err, K32_ERR_CORRUPT, "ctrl",
					 "%s %.80s: answer (%zu bytes, HTTP %d) is not JSON; over "
					 "K32_CTRL_RESP_BYTES (%u)? lower K32_CTRL_LIST_PAGE",
					 method, target, buf.len, *out_code,
					 (unsigned)K32_CTRL_RESP_BYTES);
	}
	k32_buf_fini(&buf);
	return st;
}

k32_status_t ctrl_get(struct ctrl *c, const char *target, cJSON **out, struct k32_err *err)
{
	int code = 0;
	k32_status_t st = ctrl_do(c, "GET", target, NULL, NULL, &code, out, err);
	if (st)
		return st;
	if (code == 200)
		return K32_OK;
	const char *msg = ctrl_jstr(*out, "message");
	st = code == 404 ? K32_ERR_NOT_FOUND : K32_ERR_IO;
	k32_err_set(err, st, "ctrl", "GET %.100s: HTTP %d: %.80s", target, code, msg ? msg : "");
	cJSON_Delete(*out);
	*out = NULL;
	return st;
}

int ctrl_write(struct ctrl *c, const char *method, const char *target, const char *ctype,
	       const cJSON *body, cJSON **out)
{
	char *text = body ? cJSON_PrintUnformatted(body) : NULL;
	int code = 0;
	struct k32_err err;
	cJSON *ans = NULL;
	k32_err_clear(&err);
	if (body && !text) {
		k32_err_set(&err, K32_ERR_NO_MEMORY, "ctrl", "out of memory printing a request");
	} else {
		ctrl_do(c, method, target, ctype ? ctype : (body ? "application/json" : NULL), text,
			&code, &ans, &err);
	}
	cJSON_free(text);
	/* deleting what is already gone is not a failure */
	bool failed = code == 0 || (code >= 400 && !(code == 404 && !strcmp(method, "DELETE")));
	k32_mutex_lock(&c->lock);
	c->stats.writes++;
	if (failed)
		c->stats.write_errors++;
	k32_mutex_unlock(&c->lock);
	if (failed) {
		/* WARN: a refused write is a controller that cannot do its job (a conflict
		 * retried included: it says which object races with whom); the item backs off */
		const char *msg = ctrl_jstr(ans, "message");
		/* a create answered AlreadyExists is an answer, not a failure: the object is
		 * there (its watch event follows; a Deployment adopts its ReplicaSet) */
		bool exists = code == 409 && !strcmp(method, "POST");
		if (!exists && c->item_active)
			c->item_failed = true;
		else if (!exists)
			c->pass_failed = true;
		if (code)
			k32_log(K32_LOG_WARN, "ctrl",
				"%s %.160s refused: HTTP %d: %.160s (retried with back-off)",
				method, target, code, msg ? msg : "");
		else
			k32_log(K32_LOG_WARN, "ctrl",
				"%s %.160s failed: %.160s (retried with back-off)", method, target,
				err.msg);
	} else
		ctrl_cache_note_write(c, target, ans);
	if (out)
		*out = ans;
	else
		cJSON_Delete(ans);
	return code;
}

void ctrl_requeue(struct ctrl *c, uint64_t s)
{
	uint64_t at = ctrl_now_us(c) + s * 1000000u;
	if (!c->requeue_us || at < c->requeue_us)
		c->requeue_us = at;
}

bool ctrl_charge(struct ctrl *c)
{
	if (c->budget == 0) {
		c->more = true;
		return false;
	}
	c->budget--;
	return true;
}

void ctrl_url_encode(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *s && o + 4 < cap; s++) {
		unsigned char ch = (unsigned char)*s;
		if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = 0;
}

k32_status_t ctrl_list(struct ctrl *c, const char *path, ctrl_item_fn fn, void *ctx)
{
	if (ctrl_cache_list(c, path, fn, ctx) == 0)
		return K32_OK;
	char token[CTRL_CONTINUE_LEN * 3 + 1] = "";
	char target[sizeof(token) + 512];
	for (;;) {
		snprintf(target, sizeof(target), "%s%climit=%u%s%s", path,
			 strchr(path, '?') ? '&' : '?', (unsigned)K32_CTRL_LIST_PAGE,
			 token[0] ? "&continue=" : "", token);
		cJSON *list = NULL;
		struct k32_err err;
		k32_status_t st = ctrl_get(c, target, &list, &err);
		if (st) {
			if (!c->perr.status)
				c->perr = err;
			return st;
		}
		bool go = true;
		cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
		{
			if (!fn(c, it, ctx)) {
				go = false;
				break;
			}
		}
		const char *cont = ctrl_jstr(list, "metadata.continue");
		if (go && cont && cont[0])
			ctrl_url_encode(cont, token, sizeof(token));
		else
			go = false;
		cJSON_Delete(list);
		if (!go)
			return K32_OK;
	}
}

struct ctrl_collect {
	cJSON *arr;
	const char *owner_uid;
	bool orphans; /* also objects with no controller */
};

static bool ctrl_collect_item(struct ctrl *c, cJSON *item, void *ctx)
{
	(void)c;
	struct ctrl_collect *cc = ctx;
	if (cc->owner_uid) {
		/* filtered before the copy: from a cache, the copy is the cost */
		const char *u = ctrl_controller_uid(item);
		if (u ? strcmp(u, cc->owner_uid) != 0 : !cc->orphans)
			return true;
	}
	cJSON *dup = cJSON_Duplicate(item, true);
	if (dup)
		cJSON_AddItemToArray(cc->arr, dup);
	return dup != NULL;
}

static cJSON *ctrl_list_collect(struct ctrl *c, const char *path, const char *owner_uid,
				bool orphans)
{
	struct ctrl_collect cc = {cJSON_CreateArray(), owner_uid, orphans};
	if (!cc.arr) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "listing %.80s: out of memory",
			    path);
		return NULL;
	}
	if (owner_uid && cc.arr &&
	    ctrl_cache_list_owned(c, path, owner_uid, orphans, ctrl_collect_item, &cc) == 0)
		return cc.arr;
	if (ctrl_list(c, path, ctrl_collect_item, &cc)) {
		cJSON_Delete(cc.arr);
		return NULL;
	}
	return cc.arr;
}

cJSON *ctrl_list_array(struct ctrl *c, const char *path, const char *owner_uid)
{
	return ctrl_list_collect(c, path, owner_uid, false);
}

uint32_t ctrl_key_hash(const char *ns, const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *p = ns ? ns : ""; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ '/') * 16777619u;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h;
}

static struct ctrl_queue *ctrl_queue_of(struct ctrl *c, uint32_t bit)
{
	static const uint32_t bits[CTRL_QUEUES] = {CTRL_REPLICASET, CTRL_DEPLOYMENT, CTRL_DAEMONSET,
						   CTRL_JOB};
	for (unsigned i = 0; i < CTRL_QUEUES; i++)
		if (bit == bits[i])
			return &c->queue[i];
	return NULL;
}

static void ctrl_queue_add(struct ctrl_queue *q, uint32_t h, bool whole)
{
	if (whole || q->n == K32_CTRL_QUEUE_LEN) {
		q->full = true;
		q->resume = false;
	} else if (!q->full || q->resume) {
		uint32_t i = 0;
		while (i < q->n && q->keys[i] != h)
			i++;
		if (i == q->n)
			q->keys[q->n++] = h;
	}
}

void ctrl_enqueue_key_locked(struct ctrl *c, uint32_t bit, uint32_t key)
{
	struct ctrl_queue *q = ctrl_queue_of(c, bit);
	if (q)
		ctrl_queue_add(q, key, false);
}

void ctrl_enqueue(struct ctrl *c, uint32_t bit, const char *ns, const char *name)
{
	struct ctrl_queue *q = ctrl_queue_of(c, bit);
	if (!q)
		return;
	uint32_t h = name ? ctrl_key_hash(ns, name) : 0;
	k32_mutex_lock(&c->lock);
	ctrl_queue_add(q, h, !name);
	k32_mutex_unlock(&c->lock);
}

/* ---- work items and their back-off ------------------------------------------------------- */

static uint64_t ctrl_backoff_delay_us(uint32_t failures)
{
	uint64_t ms = K32_CTRL_BACKOFF_INITIAL_MS;
	for (uint32_t i = 1; i < failures && ms < K32_CTRL_BACKOFF_MAX_MS; i++)
		ms *= 2;
	if (ms > K32_CTRL_BACKOFF_MAX_MS)
		ms = K32_CTRL_BACKOFF_MAX_MS;
	return ms * 1000u;
}

/* The entry of (bit, whole, key), or NULL. c->lock held. */
static struct ctrl_backoff *ctrl_backoff_find(struct ctrl *c, uint32_t bit, bool whole,
					      uint32_t key)
{
	for (unsigned i = 0; i < K32_CTRL_BACKOFF_ITEMS; i++) {
		struct ctrl_backoff *b = &c->backoff[i];
		if (b->at_us && b->bit == bit && b->whole == whole && (whole || b->key == key))
			return b;
	}
	return NULL;
}

/* Arms (failed) or forgets the back-off of (bit, whole, key). */
static void ctrl_backoff_note(struct ctrl *c, uint32_t bit, bool whole, uint32_t key, bool failed)
{
	uint64_t now = ctrl_now_us(c);
	k32_mutex_lock(&c->lock);
	struct ctrl_backoff *b = ctrl_backoff_find(c, bit, whole, key);
	if (!failed) {
		if (b)
			memset(b, 0, sizeof(*b));
		k32_mutex_unlock(&c->lock);
		return;
	}
	if (!b) {
		/* a free slot, or one whose retry came and went without an attempt (its
		 * object was deleted meanwhile) */
		for (unsigned i = 0; i < K32_CTRL_BACKOFF_ITEMS && !b; i++) {
			const struct ctrl_backoff *e = &c->backoff[i];
			if (!e->at_us ||
			    (e->fired && now - e->at_us > 2u * K32_CTRL_BACKOFF_MAX_MS * 1000u))
				b = &c->backoff[i];
		}
		if (!b && !whole) {
			/* the table is full: the controller backs off as a whole */
			k32_mutex_unlock(&c->lock);
			ctrl_backoff_note(c, bit, true, 0, true);
			return;
		}
		if (!b) /* every slot is a whole pass: reuse the oldest */
			b = &c->backoff[0];
		memset(b, 0, sizeof(*b));
		b->bit = bit;
		b->whole = whole;
		b->key = key;
	}
	b->failures++;
	b->at_us = now + ctrl_backoff_delay_us(b->failures);
	b->fired = false;
	/* the task recomputes its wake-up: the end of this back-off (ctrl_backoff_fire) */
	k32_plat()->cond_signal(&c->cond);
	k32_mutex_unlock(&c->lock);
}

bool ctrl_item_begin(struct ctrl *c, const cJSON *obj)
{
	uint32_t key =
	    ctrl_key_hash(ctrl_jstr(obj, "metadata.namespace"),
			  ctrl_jstr(obj, "metadata.name") ? ctrl_jstr(obj, "metadata.name") : "");
	uint64_t now = ctrl_now_us(c);
	k32_mutex_lock(&c->lock);
	const struct ctrl_backoff *b = ctrl_backoff_find(c, c->pass_bit, false, key);
	bool wait = b && now < b->at_us;
	k32_mutex_unlock(&c->lock);
	if (wait)
		return false;
	c->item_key = key;
	c->item_begun = true;
	c->item_active = true;
	c->item_failed = false;
	return true;
}

void ctrl_item_end(struct ctrl *c)
{
	if (!c->item_active)
		return;
	c->item_active = false;
	ctrl_backoff_note(c, c->pass_bit, false, c->item_key, c->item_failed);
}

bool ctrl_backoff_pass_blocked(struct ctrl *c, uint32_t bit, uint64_t now)
{
	k32_mutex_lock(&c->lock);
	const struct ctrl_backoff *b = ctrl_backoff_find(c, bit, true, 0);
	bool blocked = b && now < b->at_us;
	k32_mutex_unlock(&c->lock);
	return blocked;
}

void ctrl_backoff_pass_done(struct ctrl *c, uint32_t bit)
{
	ctrl_backoff_note(c, bit, true, 0, c->pass_failed);
}

uint64_t ctrl_backoff_fire(struct ctrl *c, uint64_t now, uint32_t *out_dirty, uint32_t *out_full)
{
	uint64_t next = UINT64_MAX;
	for (unsigned i = 0; i < K32_CTRL_BACKOFF_ITEMS; i++) {
		struct ctrl_backoff *b = &c->backoff[i];
		if (!b->at_us || b->fired)
			continue;
		if (now < b->at_us) {
			next = b->at_us < next ? b->at_us : next;
			continue;
		}
		b->fired = true;
		*out_dirty |= b->bit;
		if (b->whole)
			*out_full |= b->bit;
		else
			ctrl_enqueue_key_locked(c, b->bit, b->key);
	}
	return next;
}

void *ctrl_name_find(const void *table, size_t count, size_t size, const char *name, size_t *at)
{
	const char *base = table;
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(base + mid * size, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < count && !strcmp(base + lo * size, name) ? (void *)(base + lo * size) : NULL;
}

void *ctrl_name_slot(void **table, size_t *count, size_t *cap, size_t size, size_t max,
		     const char *name, bool *created)
{
	size_t i;
	void *hit = ctrl_name_find(*table, *count, size, name, &i);
	if (created)
		*created = false;
	if (hit)
		return hit;
	if (strlen(name) >= CTRL_NAME_LEN || *count >= max)
		return NULL;
	if (*count == *cap) {
		size_t grown = *cap ? *cap * 2 : 16;
		if (grown > max)
			grown = max;
		char *t = ctrl_zalloc(grown * size);
		if (!t)
			return NULL;
		if (*count)
			memcpy(t, *table, *count * size);
		ctrl_free(*table, *cap * size);
		*table = t;
		*cap = grown;
	}
	char *e = (char *)*table + i * size;
	memmove(e + size, e, (*count - i) * size);
	(*count)++;
	memset(e, 0, size);
	memcpy(e, name, strlen(name) + 1);
	if (created)
		*created = true;
	return e;
}

static int ctrl_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void ctrl_queue_take(struct ctrl *c, uint32_t bit, bool want_full)
{
	struct ctrl_queue *q = ctrl_queue_of(c, bit);
	k32_mutex_lock(&c->lock);
	if (q) {
		c->pass_q = *q;
		q->n = 0;
		q->full = false;
		q->resume = false;
	}
	/* without informers nothing queues: every pass is a full one */
	if (!q || want_full || c->cfg.no_task || c->cfg.no_cache) {
		c->pass_q.full = true;
		c->pass_q.resume = false;
	}
	k32_mutex_unlock(&c->lock);
	c->pass_q.hash_order = false;
	c->item_begun = false;
	/* ascending: the cache serves them in this order (ctrl_requeue_rest relies on it) */
	qsort(c->pass_q.keys, c->pass_q.n, sizeof(c->pass_q.keys[0]), ctrl_u32_cmp);
}

void ctrl_requeue_rest(struct ctrl *c, uint32_t bit)
{
	struct ctrl_queue *q = ctrl_queue_of(c, bit);
	if (!q)
		return;
	const struct ctrl_queue *p = &c->pass_q;
	k32_mutex_lock(&c->lock);
	if (!p->hash_order || !c->item_begun) {
		ctrl_queue_add(q, 0, true); /* no order to resume by: a full pass */
	} else if (p->full) {
		/* resumed at the item the budget cut (it may be half done); what was queued
		 * meanwhile stays queued */
		if (!q->full) {
			q->full = true;
			q->resume = true;
			q->from = c->item_key;
		}
	} else {
		for (uint32_t i = 0; i < p->n; i++)
			if (p->keys[i] >= c->item_key)
				ctrl_queue_add(q, p->keys[i], false);
	}
	k32_mutex_unlock(&c->lock);
}

struct ctrl_work {
	cJSON *arr;
	const struct ctrl_queue *q;
};

static bool ctrl_work_item(struct ctrl *c, cJSON *item, void *ctx)
{
	(void)c;
	struct ctrl_work *w = ctx;
	const char *name = ctrl_jstr(item, "metadata.name");
	if (!name)
		return true;
	uint32_t h = ctrl_key_hash(ctrl_jstr(item, "metadata.namespace"), name);
	uint32_t i = 0;
	while (i < w->q->n && w->q->keys[i] != h)
		i++;
	if (i == w->q->n)
		return true;
	cJSON *dup = cJSON_Duplicate(item, true);
	if (dup)
		cJSON_AddItemToArray(w->arr, dup);
	return dup != NULL;
}

static bool ctrl_work_copy(struct ctrl *c, cJSON *item, void *ctx)
{
	(void)c;
	cJSON *dup = cJSON_Duplicate(item, true);
	if (dup)
		cJSON_AddItemToArray(ctx, dup);
	return dup != NULL;
}

cJSON *ctrl_list_work(struct ctrl *c, const char *path)
{
	struct ctrl_work w = {cJSON_CreateArray(), &c->pass_q};
	if (!w.arr) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "listing %.80s: out of memory",
			    path);
		return NULL;
	}
	if (c->pass_q.full) {
		/* from the cache in key-hash order, so a pass cut short can be resumed */
		const struct ctrl_queue *q = &c->pass_q;
		if (ctrl_cache_keys_from(c, path, q->keys, q->resume ? q->n : 0,
					 q->resume ? q->from : 0, ctrl_work_copy, w.arr) == 0) {
			c->pass_q.hash_order = true;
			return w.arr;
		}
		cJSON_Delete(w.arr);
		return ctrl_list_array(c, path, NULL); /* from the API: everything, by name */
	}
	/* the queued objects only, through the cache's key index; else filter a list */
	if (c->pass_q.n &&
	    ctrl_cache_keys(c, path, c->pass_q.keys, c->pass_q.n, ctrl_work_copy, w.arr) == 0) {
		c->pass_q.hash_order = true;
		return w.arr;
	}
	if (c->pass_q.n && ctrl_list(c, path, ctrl_work_item, &w)) {
		cJSON_Delete(w.arr);
		return NULL;
	}
	return w.arr;
}

cJSON *ctrl_list_claimable(struct ctrl *c, const char *path, const char *owner_uid)
{
	return ctrl_list_collect(c, path, owner_uid, true);
}

/* ---- JSON helpers ---------------------------------------------------------------------- */

const char *ctrl_jstr(const cJSON *o, const char *path)
{
	return kmeta_jstr(o, path);
}

const char *ctrl_label(const cJSON *map, const char *key)
{
	const cJSON *v = map && key ? cJSON_GetObjectItemCaseSensitive(map, key) : NULL;
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int64_t ctrl_jint(const cJSON *o, const char *path, int64_t dflt)
{
	const cJSON *v = o ? k32_json_find(o, path) : NULL;
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

const char *ctrl_controller_uid(const cJSON *o)
{
	return kmeta_controller_uid(o);
}

cJSON *ctrl_owner_ref(const cJSON *owner, const char *api_version, const char *kind)
{
	return kmeta_owner_refs(owner, api_version, kind);
}

cJSON *ctrl_cond_find(const cJSON *conds, const char *type)
{
	return kmeta_cond_find(conds, type);
}

const char *ctrl_cond_status(const cJSON *o, const char *type)
{
	return kmeta_cond_status(o, type);
}

bool ctrl_cond_set(struct ctrl *c, cJSON *status, const char *type, const char *st,
		   const char *reason, const char *msg, bool with_update)
{
	char now[KMETA_RFC3339_LEN];
	kmeta_rfc3339(ctrl_wall_s(c), now);
	return kmeta_cond_set(status, type, st, reason, msg, now, with_update);
}

bool ctrl_deleting(const cJSON *o)
{
	return ctrl_jstr(o, "metadata.deletionTimestamp") != NULL;
}

bool ctrl_pod_terminal(const cJSON *pod)
{
	const char *ph = ctrl_jstr(pod, "status.phase");
	return ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
}

bool ctrl_pod_ready(const cJSON *pod)
{
	const char *s = ctrl_cond_status(pod, "Ready");
	return s && !strcmp(s, "True") && !ctrl_deleting(pod) && !ctrl_pod_terminal(pod);
}

uint64_t ctrl_pod_memory(const cJSON *pod)
{
	uint64_t sum = K32_CTRL_POD_OVERHEAD_BYTES;
	const cJSON *ct;
	cJSON_ArrayForEach(ct, k32_json_find(pod, "spec.containers"))
	{
		sum += kmeta_container_memory(ct); /* what the kubelet gives it */
	}
	return sum;
}

/* Orders two objects by creationTimestamp, then name (qsort on cJSON pointers). */
static int ctrl_age_cmp(const void *pa, const void *pb)
{
	const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
	const char *ta = ctrl_jstr(a, "metadata.creationTimestamp");
	const char *tb = ctrl_jstr(b, "metadata.creationTimestamp");
	int r = strcmp(ta ? ta : "", tb ? tb : "");
	if (r)
		return r;
	const char *na = ctrl_jstr(a, "metadata.name");
	const char *nb = ctrl_jstr(b, "metadata.name");
	return strcmp(na ? na : "", nb ? nb : "");
}

void ctrl_sort_by_age(cJSON *arr)
{
	int n = cJSON_GetArraySize(arr);
	if (n < 2)
		return;
	cJSON **v = ctrl_zalloc((size_t)n * sizeof(*v));
	if (!v)
		return; /* unsorted is still correct, only less fair */
	for (int i = 0; i < n; i++)
		v[i] = cJSON_DetachItemFromArray(arr, 0);
	qsort(v, (size_t)n, sizeof(*v), ctrl_age_cmp);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	ctrl_free(v, (size_t)n * sizeof(*v));
}

void ctrl_hash_json(const cJSON *o, char *out, size_t cap)
{
	static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
	char *text = cJSON_PrintUnformatted(o);
	uint32_t h = text ? k32_crc32(0, text, strlen(text)) : 0;
	cJSON_free(text);
	size_t i = 0;
	do {
		if (i + 1 >= cap)
			break;
		out[i++] = alpha[h % 27];
		h /= 27;
	} while (h);
	out[i] = 0;
}

/* ---- selectors, affinity, taints ------------------------------------------------------- */

/* One requirement: kmeta's, shared with LabelSelector matching. */
static bool ctrl_requirement(const char *op, const cJSON *values, const char *v)
{
	return kmeta_requirement_matches(op, values, v);
}

bool ctrl_selector_matches(const cJSON *selector, const cJSON *labels)
{
	return kmeta_label_selector_matches(selector, labels);
}

bool ctrl_node_term_matches(const cJSON *term, const cJSON *node)
{
	const cJSON *me = cJSON_GetObjectItem(term, "matchExpressions");
	const cJSON *mf = cJSON_GetObjectItem(term, "matchFields");
	if (cJSON_GetArraySize(me) == 0 && cJSON_GetArraySize(mf) == 0)
		return false; /* an empty term matches no objects */
	const cJSON *labels = k32_json_find(node, "metadata.labels");
	const cJSON *e;
	cJSON_ArrayForEach(e, me)
	{
		const char *key = ctrl_jstr(e, "key");
		if (!key ||
		    !ctrl_requirement(ctrl_jstr(e, "operator"), cJSON_GetObjectItem(e, "values"),
				      ctrl_label(labels, key)))
			return false;
	}
	cJSON_ArrayForEach(e, mf)
	{
		const char *key = ctrl_jstr(e, "key");
		/* metadata.name is the only field Kubernetes supports here */
		if (!key || strcmp(key, "metadata.name") ||
		    !ctrl_requirement(ctrl_jstr(e, "operator"), cJSON_GetObjectItem(e, "values"),
				      ctrl_jstr(node, "metadata.name")))
			return false;
	}
	return true;
}

bool ctrl_node_affinity_matches(const cJSON *spec, const cJSON *node)
{
	const cJSON *labels = k32_json_find(node, "metadata.labels");
	const cJSON *l;
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(spec, "nodeSelector"))
	{
		const char *v = ctrl_label(labels, l->string);
		if (!cJSON_IsString(l) || !v || strcmp(v, l->valuestring))
			return false;
	}
	const cJSON *terms = k32_json_find(
	    spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
	if (!terms)
		return true;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(terms, "nodeSelectorTerms"))
	{
		if (ctrl_node_term_matches(t, node))
			return true; /* terms are ORed */
	}
	return false;
}

bool ctrl_tolerates(const cJSON *tolerations, const char *key, const char *value,
		    const char *effect)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, tolerations)
	{
		const char *tk = ctrl_jstr(t, "key");
		const char *op = ctrl_jstr(t, "operator");
		const char *tv = ctrl_jstr(t, "value");
		const char *te = ctrl_jstr(t, "effect");
		bool exists = op && !strcmp(op, "Exists");
		if (te && te[0] && strcmp(te, effect))
			continue;
		if (tk && tk[0] && strcmp(tk, key))
			continue;
		if ((!tk || !tk[0]) && !exists)
			continue; /* an empty key needs operator Exists */
		if (exists || !strcmp(tv ? tv : "", value ? value : ""))
			return true;
	}
	return false;
}

/* Next comma-separated item of *p into out (trimmed); false at the end. */
static bool ctrl_next_item(const char **p, char *out, size_t cap)
{
	while (**p == ',' || **p == ' ')
		(*p)++;
	if (!**p)
		return false;
	const char *e = *p;
	while (*e && *e != ',')
		e++;
	size_t n = (size_t)(e - *p);
	while (n && (*p)[n - 1] == ' ')
		n--;
	snprintf(out, cap, "%.*s", (int)n, *p);
	*p = e;
	/* label form: the first '.' or '_' stands for ':' */
	if (!strchr(out, ':')) {
		char *sep = strpbrk(out, "._");
		if (sep)
			*sep = ':';
	}
	return true;
}

bool ctrl_hardware_met(const char *want, const char *have, char *missing, size_t cap)
{
	char w[96], h[96];
	const char *wp = want ? want : "";
	if (missing && cap)
		missing[0] = 0;
	while (ctrl_next_item(&wp, w, sizeof(w))) {
		if (!strcmp(w, "none"))
			continue;
		bool found = false;
		const char *hp = have ? have : "";
		size_t wl = strlen(w);
		while (!found && ctrl_next_item(&hp, h, sizeof(h)))
			found = !strcmp(w, h) ||
				(!strchr(w, ':') && !strncmp(h, w, wl) && h[wl] == ':');
		if (!found) {
			if (missing && cap)
				snprintf(missing, cap, "%s", w);
			return false;
		}
	}
	return true;
}

/* ---- pods ------------------------------------------------------------------------------ */

int ctrl_pod_create(struct ctrl *c, const char *ns, const char *prefix, const cJSON *tmpl,
		    const cJSON *extra_labels, cJSON *owner_refs, const cJSON *extra_spec)
{
	cJSON *pod = cJSON_CreateObject();
	cJSON *md = pod ? cJSON_AddObjectToObject(pod, "metadata") : NULL;
	cJSON *tmd = cJSON_Duplicate(cJSON_GetObjectItem(tmpl, "metadata"), true);
	cJSON *spec = cJSON_Duplicate(cJSON_GetObjectItem(tmpl, "spec"), true);
	int code = 0;
	if (!md || !spec) {
		cJSON_Delete(owner_refs);
		goto out;
	}
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	char gen[CTRL_NAME_LEN];
	/* generateName leaves room for the 5 random characters the API appends */
	snprintf(gen, sizeof(gen), "%.57s-", prefix);
	cJSON_AddStringToObject(md, "generateName", gen);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON *labels = cJSON_Duplicate(cJSON_GetObjectItem(tmd, "labels"), true);
	if (!labels)
		labels = cJSON_CreateObject();
	const cJSON *l;
	cJSON_ArrayForEach(l, extra_labels)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(labels, l->string);
		cJSON_AddItemToObject(labels, l->string, cJSON_Duplicate(l, true));
	}
	cJSON_AddItemToObject(md, "labels", labels);
	cJSON *ann = cJSON_GetObjectItem(tmd, "annotations");
	if (ann)
		cJSON_AddItemToObject(md, "annotations", cJSON_Duplicate(ann, true));
	if (owner_refs)
		cJSON_AddItemToObject(md, "ownerReferences", owner_refs);
	cJSON_ArrayForEach(l, extra_spec)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(spec, l->string);
		cJSON_AddItemToObject(spec, l->string, cJSON_Duplicate(l, true));
	}
	cJSON_AddItemToObject(pod, "spec", spec);
	spec = NULL;
	char target[320];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods", ns);
	cJSON *ans = NULL;
	code = ctrl_write(c, "POST", target, NULL, pod, &ans);
	if (code == 201) {
		char msg[300];
		snprintf(msg, sizeof(msg), "Created pod: %.250s", ctrl_jstr(ans, "metadata.name"));
		ctrl_owner_event(
		    c, ns, cJSON_GetArrayItem(k32_json_find(pod, "metadata.ownerReferences"), 0),
		    "Normal", "SuccessfulCreate", msg);
	}
	cJSON_Delete(ans);
out:
	cJSON_Delete(spec);
	cJSON_Delete(tmd);
	cJSON_Delete(pod);
	return code;
}

/* Counts up an existing Event; false when it is gone (then a new one is made). */
static bool ctrl_event_bump(struct ctrl *c, const char *ns, const char *name, const char *ts)
{
	char target[300];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events/%s", ns, name);
	cJSON *e = NULL;
	struct k32_err err;
	if (ctrl_get(c, target, &e, &err))
		return false;
	char patch[160];
	snprintf(patch, sizeof(patch), "{\"count\":%" PRId64 ",\"lastTimestamp\":\"%s\"}",
		 ctrl_jint(e, "count", 1) + 1, ts);
	cJSON_Delete(e);
	int code = 0;
	return ctrl_do(c, "PATCH", target, "application/merge-patch+json", patch, &code, NULL,
		       &err) == K32_OK &&
	       code == 200;
}

/* Events older than K32_API_EVENT_TTL_S go, as the API server's own sweep does for the
 * Events it records itself: since the controllers record theirs through the client, they
 * sweep too (on the first Event made, then once per K32_CTRL_EVENT_SWEEP_S at most, at most
 * K32_API_EVENT_GC_BATCH deletions): a sweep lists every Event, so it is paced by time,
 * not by Events made, or making an Event would cost more the more there are. */
struct ctrl_event_sweep {
	uint64_t now_s;
	uint32_t deleted;
};

static bool ctrl_event_expired(struct ctrl *c, cJSON *e, void *ctx)
{
	struct ctrl_event_sweep *sw = ctx;
	static const char *const fields[] = {"lastTimestamp", "eventTime",
					     "metadata.creationTimestamp"};
	uint64_t t = 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && !t; i++)
		if (!ctrl_parse_time(ctrl_jstr(e, fields[i]), &t))
			t = 0;
	const char *ns = ctrl_jstr(e, "metadata.namespace");
	const char *name = ctrl_jstr(e, "metadata.name");
	if (!t || !ns || !name || t + K32_API_EVENT_TTL_S >= sw->now_s)
		return true;
	char target[400];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events/%s", ns, name);
	ctrl_write(c, "DELETE", target, NULL, NULL, NULL);
	return ++sw->deleted < K32_API_EVENT_GC_BATCH;
}

static void ctrl_events_sweep(struct ctrl *c)
{
	struct ctrl_event_sweep sw = {ctrl_wall_s(c), 0};
	struct k32_err keep = c->perr; /* a failed sweep is not the pass's failure */
	ctrl_list(c, "/api/v1/events", ctrl_event_expired, &sw);
	c->perr = keep;
}

k32_status_t ctrl_event_record(struct ctrl *c, const struct ctrl_event_ref *ref, const char *type,
			       const char *reason, const char *msg, const char *component,
			       struct k32_err *err)
{
	if (!ref || !ref->kind || !ref->name || !type || !reason || !msg)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "ctrl",
		    "event: object kind/name, type, reason and message are required");
	const char *ns = ref->ns && ref->ns[0] ? ref->ns : "default";
	uint64_t now = ctrl_wall_s(c);
	char ts[32];
	ctrl_fmt_time(now, ts, sizeof(ts));
	const struct kmeta_object_ref r = {ref->api_version, ref->kind, ref->ns, ref->name,
					   ref->uid};
	uint32_t h = kmeta_event_hash(&r, ns, type, reason, msg);
	char name[KMETA_EVENT_NAME_LEN] = "";
	k32_mutex_lock(&c->lock);
	struct kmeta_event_series *s =
	    kmeta_event_series_find(c->series, K32_CTRL_EVENT_SERIES, h, ns, now);
	if (s)
		snprintf(name, sizeof(name), "%s", s->name);
	k32_mutex_unlock(&c->lock);
	if (name[0] && ctrl_event_bump(c, ns, name, ts))
		return K32_OK;
	/* a new Event, named as upstream: <object>.<hex time> */
	kmeta_event_name(ref->name, k32_now_us(), h, name, sizeof(name));
	const char *comp = component ? component : "kube32";
	cJSON *e = kmeta_event_json(&r, ns, name, type, reason, msg, comp, ts);
	if (!e)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "ctrl", "event %s: out of memory",
				   reason);
	char *text = cJSON_PrintUnformatted(e);
	cJSON_Delete(e);
	if (!text)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "ctrl", "event %s: out of memory",
				   reason);
	char target[160];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events", ns);
	int code = 0;
	cJSON *ans = NULL;
	k32_status_t st = ctrl_do(c, "POST", target, NULL, text, &code, &ans, err);
	cJSON_free(text);
	if (!st && code != 201) {
		const char *m = ctrl_jstr(ans, "message");
		st = k32_err_set(err, K32_ERR_IO, "ctrl", "event %s for %s %s: HTTP %d: %.100s",
				 reason, ref->kind, ref->name, code, m ? m : "");
	}
	cJSON_Delete(ans);
	if (st)
		return st;
	k32_mutex_lock(&c->lock);
	kmeta_event_series_add(c->series, K32_CTRL_EVENT_SERIES, h, ns, name, now);
	uint64_t mono = ctrl_now_us(c);
	bool sweep = !c->events_swept ||
		     mono - c->events_sweep_us >= (uint64_t)K32_CTRL_EVENT_SWEEP_S * 1000000u;
	if (sweep) {
		c->events_swept = true;
		c->events_sweep_us = mono;
	}
	k32_mutex_unlock(&c->lock);
	if (sweep)
		ctrl_events_sweep(c);
	return K32_OK;
}

void ctrl_owner_event(struct ctrl *c, const char *ns, const cJSON *ref, const char *type,
		      const char *reason, const char *msg)
{
	const char *kind = ctrl_jstr(ref, "kind");
	const char *name = ctrl_jstr(ref, "name");
	if (!kind || !name)
		return;
	char component[48];
	size_t n = 0;
	for (const char *k = kind; *k && n + 12 < sizeof(component); k++)
		component[n++] = (char)(*k >= 'A' && *k <= 'Z' ? *k - 'A' + 'a' : *k);
	snprintf(component + n, sizeof(component) - n, "-controller");
	struct ctrl_event_ref er = {ctrl_jstr(ref, "apiVersion"), kind, ns, name,
				    ctrl_jstr(ref, "uid")};
	struct k32_err err;
	if (ctrl_event_record(c, &er, type, reason, msg, component, &err))
		k32_log(K32_LOG_DEBUG, "ctrl", "event %s on %s %s: %s", reason, kind, name,
			err.msg);
}

void ctrl_obj_event(struct ctrl *c, const cJSON *obj, const char *api_version, const char *kind,
		    const char *type, const char *reason, const char *msg)
{
	cJSON *ref = cJSON_CreateObject();
	if (!ref)
		return;
	cJSON_AddStringToObject(ref, "apiVersion", api_version);
	cJSON_AddStringToObject(ref, "kind", kind);
	const char *name = ctrl_jstr(obj, "metadata.name");
	const char *uid = ctrl_jstr(obj, "metadata.uid");
	cJSON_AddStringToObject(ref, "name", name ? name : "");
	if (uid)
		cJSON_AddStringToObject(ref, "uid", uid);
	const char *ns = ctrl_jstr(obj, "metadata.namespace");
	ctrl_owner_event(c, ns ? ns : "", ref, type, reason, msg);
	cJSON_Delete(ref);
}

int ctrl_pod_delete(struct ctrl *c, const cJSON *pod, int64_t grace, bool owner_event)
{
	const char *ns = ctrl_jstr(pod, "metadata.namespace");
	const char *name = ctrl_jstr(pod, "metadata.name");
	if (!ns || !name)
		return 0;
	char target[600];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", ns, name);
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "propagationPolicy", "Background");
		if (grace >= 0)
			cJSON_AddNumberToObject(body, "gracePeriodSeconds", (double)grace);
	}
	int code = ctrl_write(c, "DELETE", target, NULL, body, NULL);
	cJSON_Delete(body);
	if (owner_event && code == 200) {
		const cJSON *r, *ctl = NULL;
		cJSON_ArrayForEach(r, k32_json_find(pod, "metadata.ownerReferences"))
		{
			if (cJSON_IsTrue(cJSON_GetObjectItem(r, "controller")))
				ctl = r;
		}
		char msg[300];
		snprintf(msg, sizeof(msg), "Deleted pod: %.250s", name);
		ctrl_owner_event(c, ns, ctl, "Normal", "SuccessfulDelete", msg);
	}
	return code;
}
