/*
 * api_events.c - the Events recorder controllers and the kubelet use.
 *
 * api_event_record writes a core/v1 Event through the API (api_do, so it is validated and
 * watched like any other write). Repeats are folded into one Event as kube's recorder does:
 * the same (namespace, object, type, reason, message) within K32_API_EVENT_SERIES_S seconds
 * bumps `count` and `lastTimestamp` of the existing Event instead of creating another. The
 * series table is fixed (K32_API_EVENT_SERIES_MAX slots, least recently used replaced), so
 * a burst of distinct events costs no memory beyond it. api_events_gc deletes events older
 * than K32_API_EVENT_TTL_S (bounded per call) so a long-running cluster's events do not
 * fill the store, and api_events_make_room (called before every Event is created, by any
 * client) keeps Events within K32_API_EVENTS_OBJECTS_PCT and K32_API_EVENTS_BYTES_PCT of the
 * store's limits, evicting the least recently written first, so a burst inside the TTL
 * (four Events per pod life) cannot fill it either.
 * Both Event APIs are one store (api_events_v1.c): the GC and the bounds walk the core/v1
 * key space only, plus what a store from before that change left under events.k8s.io's.
 * Context: any thread (api->mu guards the table; the store writes are outside it).
 */
#include "api/api_srv.h"
#include "kmeta/kmeta.h"

#include <stdio.h>
#include <string.h>

/* Bumps count and lastTimestamp of an existing event; false if it is gone. */
static bool api_event_bump(struct api_server *api, const char *ns, const char *name, const char *ts,
			   struct k32_err *err)
{
	char target[300];
	struct k32_buf out;
	int code = 0;
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events/%s", ns, name);
	k32_buf_init(&out, k32_default_allocator(), 256 * 1024, "event");
	bool ok = false;
	if (api_do(api, "GET", target, NULL, NULL, 0, &code, &out, err) == K32_OK && code == 200) {
		cJSON *e = cJSON_ParseWithLength(k32_buf_cstr(&out), out.len);
		const cJSON *c = cJSON_GetObjectItem(e, "count");
		char patch[160];
		int n = snprintf(patch, sizeof(patch), "{\"count\":%d,\"lastTimestamp\":\"%s\"}",
				 cJSON_IsNumber(c) ? c->valueint + 1 : 2, ts);
		cJSON_Delete(e);
		k32_buf_reset(&out);
		ok = api_do(api, "PATCH", target, "application/merge-patch+json", patch, (size_t)n,
			    &code, &out, err) == K32_OK &&
		     code == 200;
	}
	k32_buf_fini(&out);
	return ok;
}

/* Wall time of an event's last occurrence (0 if it has none). */
static uint64_t api_event_last(const cJSON *e)
{
	static const char *const fields[] = {"lastTimestamp", "series.lastObservedTime",
					     "deprecatedLastTimestamp", "eventTime",
					     "metadata.creationTimestamp"};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *v = api_jstr(e, fields[i]);
		uint64_t t;
		if (v && api_parse_time(v, &t))
			return t;
	}
	return 0;
}

/* One pass over the Events (the filter returns false: nothing is copied) counts them, sums
 * their bytes and keeps the K32_API_EVENT_GC_BATCH least recently written (lowest mod_rev,
 * which a repeat's bump renews), sorted oldest first. */
struct api_ev_scan {
	uint32_t count;
	size_t bytes;
	uint32_t kept;
	uint64_t rev[K32_API_EVENT_GC_BATCH];
	uint32_t len[K32_API_EVENT_GC_BATCH];
};

static bool api_event_scan(void *ctx, const struct store_obj *o)
{
	struct api_ev_scan *sc = ctx;
	uint32_t i;
	sc->count++;
	sc->bytes += o->len;
	if (sc->kept == K32_API_EVENT_GC_BATCH && o->mod_rev >= sc->rev[sc->kept - 1])
		return false;
	if (sc->kept < K32_API_EVENT_GC_BATCH)
		sc->kept++;
	for (i = sc->kept - 1; i > 0 && sc->rev[i - 1] > o->mod_rev; i--) {
		sc->rev[i] = sc->rev[i - 1];
		sc->len[i] = sc->len[i - 1];
	}
	sc->rev[i] = o->mod_rev;
	sc->len[i] = o->len;
	return false;
}

struct api_gc_ctx {
	uint64_t cutoff;  /* wall seconds: an Event last seen before is past its TTL */
	uint64_t rev_max; /* only Events written at or before this revision are parsed */
};

static bool api_event_old(void *ctx, const struct store_obj *o)
{
	const struct api_gc_ctx *gc = ctx;
	if (o->mod_rev > gc->rev_max)
		return false;
	cJSON *e = api_parse_obj(o);
	uint64_t t = e ? api_event_last(e) : 0;
	cJSON_Delete(e);
	return t && t < gc->cutoff;
}

/* Deletes exactly this version of an Event (key /<group>/events/<ns>/<name>): one written
 * again meanwhile stays. 1 when deleted. */
static uint32_t api_event_delete(struct api_server *api, const char *group,
				 const struct store_obj *o)
{
	char kbuf[K32_STORE_KEY_MAX];
	snprintf(kbuf, sizeof(kbuf), "%s", store_obj_key(o));
	char *name = strrchr(kbuf, '/');
	char *ns = NULL;
	if (name) {
		*name++ = 0;
		ns = strrchr(kbuf, '/');
	}
	if (!name || !ns)
		return 0;
	struct store_key dk = {.group = group, .resource = "events", .ns = ns + 1, .name = name};
	struct k32_err derr;
	return store_delete(api->store, &dk, o->mod_rev, NULL, NULL, &derr) == K32_OK;
}

k32_status_t api_events_gc(struct api_server *api, uint64_t now_s, uint32_t *out_deleted,
			   struct k32_err *err)
{
	/* one store: events.k8s.io/v1 Events are the core ones (api_events_v1.c) */
	const struct api_resource *res = api_registry_find("", "v1", "events");
	uint32_t deleted = 0;
	struct api_gc_ctx gc = {now_s > K32_API_EVENT_TTL_S ? now_s - K32_API_EVENT_TTL_S : 0, 0};
	struct api_ev_scan *sc = api_zalloc(sizeof(*sc));
	k32_status_t st = K32_OK;
	if (!sc)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api",
				   "event GC: out of memory for the scan");
	struct store_list list;
	struct store_key key;
	/* parse only the K32_API_EVENT_GC_BATCH least recently written (a write sets
	 * lastTimestamp, so they are the oldest), not every Event: one pass without parsing
	 * finds them (limit 1: the filter takes nothing) */
	struct store_list_opts opts = {.limit = 1, .filter = api_event_scan, .filter_ctx = sc};
	memset(&list, 0, sizeof(list));
	api_key(res, "", "", &key);
	st = store_list(api->store, &key, &opts, &list, err);
	store_list_fini(api->store, &list);
	if (!st && sc->kept) {
		gc.rev_max = sc->rev[sc->kept - 1];
		opts = (struct store_list_opts){
		    .limit = K32_API_EVENT_GC_BATCH, .filter = api_event_old, .filter_ctx = &gc};
		memset(&list, 0, sizeof(list));
		st = store_list(api->store, &key, &opts, &list, err);
		for (uint32_t i = 0; !st && i < list.count; i++)
			deleted += api_event_delete(api, "", list.items[i]);
		store_list_fini(api->store, &list);
	}
	/* a store written before both APIs shared one may still hold Events under the old
	 * events.k8s.io key space, which no request reaches now: they go, a batch a call */
	struct store_key legacy = {
	    .group = "events.k8s.io", .resource = "events", .ns = "", .name = ""};
	opts = (struct store_list_opts){.limit = K32_API_EVENT_GC_BATCH};
	struct k32_err lerr;
	memset(&list, 0, sizeof(list));
	if (!st && store_list(api->store, &legacy, &opts, &list, &lerr) == K32_OK)
		for (uint32_t i = 0; i < list.count; i++)
			deleted += api_event_delete(api, "events.k8s.io", list.items[i]);
	store_list_fini(api->store, &list);
	api_free(sc, sizeof(*sc));
	if (out_deleted)
		*out_deleted = deleted;
	return st;
}

/* ---- count and byte bounds ------------------------------------------------------------- */

static bool api_event_at_or_before(void *ctx, const struct store_obj *o)
{
	return o->mod_rev <= *(const uint64_t *)ctx;
}

/* Deletes the Events of res written at or before cutoff, at most max; returns how many. */
static uint32_t api_events_evict(struct api_server *api, const struct api_resource *res,
				 uint64_t cutoff, uint32_t max, struct k32_err *err)
{
	struct store_list list;
	struct store_key key;
	struct store_list_opts opts = {
	    .limit = max, .filter = api_event_at_or_before, .filter_ctx = &cutoff};
	uint32_t deleted = 0;
	memset(&list, 0, sizeof(list));
	api_key(res, "", "", &key);
	if (store_list(api->store, &key, &opts, &list, err) == K32_OK)
		for (uint32_t i = 0; i < list.count; i++)
			deleted += api_event_delete(api, "", list.items[i]);
	store_list_fini(api->store, &list);
	return deleted;
}

k32_status_t api_events_make_room(struct api_server *api, size_t len, uint32_t *out_evicted,
				  struct k32_err *err)
{
	const struct api_resource *res = api_registry_find("", "v1", "events");
	struct store_stats ss;
	uint32_t evicted = 0;
	k32_status_t st = K32_OK;
	if (out_evicted)
		*out_evicted = 0;
	store_get_stats(api->store, &ss);
	uint64_t max_count = (uint64_t)ss.max_objects * K32_API_EVENTS_OBJECTS_PCT / 100;
	uint64_t max_bytes = (uint64_t)ss.max_bytes / 100 * K32_API_EVENTS_BYTES_PCT;
	/* the whole store within the Events' share: no need to look (the common case) */
	if ((uint64_t)ss.objects + 1 <= max_count && (uint64_t)ss.object_bytes + len <= max_bytes)
		return K32_OK;
	/* within the bounds as last counted, with the Events created since; counted again
	 * every 1024 creates all the same, as repeats grow Events and evictions can miss */
	k32_mutex_lock(&api->mu);
	bool room = api->ev_known && api->ev_count + 1 <= max_count &&
		    api->ev_bytes + len <= max_bytes && (api->ev_count + 1) % 1024 != 0;
	if (room) {
		api->ev_count++;
		api->ev_bytes += len;
	}
	k32_mutex_unlock(&api->mu);
	if (room)
		return K32_OK;
	/* one store: events.k8s.io/v1 Events are the core ones (api_events_v1.c) */
	struct api_ev_scan *sc = api_zalloc(sizeof(struct api_ev_scan));
	uint64_t count = 1, bytes = len; /* the one being created */
	if (!sc)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api",
				   "bounding Events: out of memory for the scan");
	struct store_list list;
	struct store_key key;
	/* limit 1: the filter takes nothing, so the one-slot result is all it allocates */
	struct store_list_opts opts = {.limit = 1, .filter = api_event_scan, .filter_ctx = sc};
	memset(&list, 0, sizeof(list));
	api_key(res, "", "", &key);
	st = store_list(api->store, &key, &opts, &list, err);
	store_list_fini(api->store, &list);
	if (st)
		goto out;
	count += sc->count;
	bytes += sc->bytes;
	/* the oldest until both bounds hold, and 1/32 of the count bound more so that the
	 * next Events do not each scan and evict again */
	uint64_t slack = max_count / 32, cut = 0;
	uint32_t pos = 0;
	if (count > max_count || bytes > max_bytes)
		while (pos < sc->kept && (count + slack > max_count || bytes > max_bytes)) {
			cut = sc->rev[pos];
			bytes -= sc->len[pos];
			pos++;
			count--;
		}
	if (pos)
		evicted = api_events_evict(api, res, cut, pos, err);
	k32_mutex_lock(&api->mu);
	api->ev_known = true;
	api->ev_count = count;
	api->ev_bytes = bytes;
	k32_mutex_unlock(&api->mu);
out:
	api_free(sc, sizeof(struct api_ev_scan));
	if (out_evicted)
		*out_evicted = evicted;
	return st;
}

k32_status_t api_event_record(struct api_server *api, const struct api_event_ref *ref,
			      const char *type, const char *reason, const char *message,
			      const char *component, struct k32_err *err)
{
	if (!ref || !ref->kind || !ref->name || !type || !reason || !message)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "api",
		    "api_event_record: object kind/name, type, reason and message are required");
	const char *ns = ref->ns && ref->ns[0] ? ref->ns : "default";
	uint64_t now = api_now_s();
	char ts[32];
	api_format_time(now, ts, sizeof(ts));
	const struct kmeta_object_ref r = {ref->api_version, ref->kind, ref->ns, ref->name,
					   ref->uid};
	uint32_t h = kmeta_event_hash(&r, ns, type, reason, message);
	/* a recent event of the same series? */
	char name[KMETA_EVENT_NAME_LEN] = "";
	k32_mutex_lock(&api->mu);
	struct kmeta_event_series *slot =
	    kmeta_event_series_find(api->series, K32_API_EVENT_SERIES_MAX, h, ns, now);
	if (slot)
		snprintf(name, sizeof(name), "%s", slot->name);
	k32_mutex_unlock(&api->mu);
	if (name[0] && api_event_bump(api, ns, name, ts, err))
		return K32_OK;
	/* a new event: name as upstream, <object>.<hex time> */
	kmeta_event_name(ref->name, k32_now_us(), h, name, sizeof(name));
	cJSON *e = kmeta_event_json(&r, ns, name, type, reason, message,
				    component ? component : "kube32", ts);
	char *text = e ? cJSON_PrintUnformatted(e) : NULL;
	cJSON_Delete(e);
	if (!text)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "api",
				   "recording event %s: out of memory", reason);
	char target[160];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events", ns);
	struct k32_buf out;
	int code = 0;
	k32_buf_init(&out, k32_default_allocator(), 256 * 1024, "event");
	k32_status_t st =
	    api_do(api, "POST", target, "application/json", text, strlen(text), &code, &out, err);
	cJSON_free(text);
	if (!st && code != 201)
		st =
		    k32_err_set(err, api_status_for_code(code), "api",
				"recording event %s for %s/%s: HTTP %d: %.80s", K32_CLIP(reason),
				K32_CLIP(ref->kind), K32_CLIP(ref->name), code, k32_buf_cstr(&out));
	k32_buf_fini(&out);
	if (st)
		return st;
	k32_mutex_lock(&api->mu);
	bool gc = (++api->events_recorded & 31) == 0;
	kmeta_event_series_add(api->series, K32_API_EVENT_SERIES_MAX, h, ns, name, now);
	k32_mutex_unlock(&api->mu);
	if (gc)
		api_events_gc(api, now, NULL, NULL);
	return K32_OK;
}
