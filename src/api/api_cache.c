/*
 * api_cache.c - the gzip-compressed renderings of recent plain-JSON lists.
 *
 * A list answer is a function of the resource, the namespace, the query (selectors, limit)
 * and the store's revision: the same request at the same revision gives the same bytes, for
 * every identity (every identity may read every list). So the compressed answer of a list is
 * kept with the revision it was read at, and a later request with the same key while the
 * store is still at that revision gets those bytes again without reading the store,
 * rendering or compressing. Any write anywhere moves the revision and so invalidates every
 * entry at once (coarse, and simple enough to be obviously right).
 *
 * K32_API_LIST_CACHE_ENTRIES entries, least recently used replaced, each at most
 * K32_API_LIST_CACHE_MAX_BYTES of compressed bytes (larger answers are just not kept);
 * memory is taken on first use and kept for reuse. One mutex; a hit copies the bytes out
 * under it (a 64 KiB pod list compresses to ~6 KiB).
 */
#include <stdio.h>
#include <string.h>

#include "api/api_srv.h"

void api_cache_init(struct api_list_cache *c)
{
	memset(c, 0, sizeof(*c));
	k32_plat()->mutex_init(&c->mu);
}

void api_cache_fini(struct api_list_cache *c)
{
	for (size_t i = 0; i < K32_API_LIST_CACHE_ENTRIES; i++)
		if (c->e[i].data)
			api_free(c->e[i].data, c->e[i].cap);
	k32_plat()->mutex_fini(&c->mu);
}

bool api_cache_key(const struct api_req *rq, char *key, size_t cap)
{
	/* the version too: a list's text (its apiVersion, a custom object's) depends on it */
	int n =
	    snprintf(key, cap, "%s/%s/%s/%s?%.*s", rq->res->group, rq->res->version,
		     rq->res->plural, rq->ns, (int)rq->query.len, rq->query.p ? rq->query.p : "");
	return n > 0 && (size_t)n < cap;
}

bool api_cache_get(struct api_list_cache *c, const char *key, uint64_t rev, struct k32_buf *out)
{
	bool hit = false;
	k32_mutex_lock(&c->mu);
	for (size_t i = 0; i < K32_API_LIST_CACHE_ENTRIES; i++) {
		struct api_cache_entry *e = &c->e[i];
		if (!e->len || e->rev != rev || strcmp(e->key, key))
			continue;
		k32_buf_reset(out);
		hit = k32_buf_append(out, e->data, e->len, NULL) == K32_OK;
		e->used = ++c->tick;
		break;
	}
	if (hit)
		c->hits++;
	else
		c->misses++;
	k32_mutex_unlock(&c->mu);
	return hit;
}

void api_cache_put(struct api_list_cache *c, const char *key, uint64_t rev, const void *data,
		   size_t len)
{
	if (!len || len > K32_API_LIST_CACHE_MAX_BYTES || strlen(key) >= sizeof(c->e[0].key))
		return;
	k32_mutex_lock(&c->mu);
	struct api_cache_entry *v = &c->e[0];
	for (size_t i = 0; i < K32_API_LIST_CACHE_ENTRIES; i++) {
		struct api_cache_entry *e = &c->e[i];
		if (e->len && !strcmp(e->key, key)) { /* same key: replace it */
			v = e;
			break;
		}
		if (!e->len || e->rev != rev) /* free, or stale for good (revisions only grow) */
			v = e;
		else if (v->len && v->rev == rev && e->used < v->used)
			v = e;
	}
	if (v->cap < len) {
		uint8_t *d = api_zalloc(len);
		if (!d) {
			k32_mutex_unlock(&c->mu);
			return;
		}
		if (v->data)
			api_free(v->data, v->cap);
		v->data = d;
		v->cap = len;
	}
	memcpy(v->data, data, len);
	v->len = len;
	v->rev = rev;
	v->used = ++c->tick;
	snprintf(v->key, sizeof(v->key), "%s", key);
	k32_mutex_unlock(&c->mu);
}
