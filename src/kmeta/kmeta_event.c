/*
 * kmeta_event.c - core/v1 Events: the one builder, and the series table that turns a repeat
 * into count+1 on the existing Event (as client-go's EventCorrelator does) instead of a new
 * object. The API server, the controllers and the kubelet each keep their own table (fixed
 * size, least recently used forgotten first) and use these functions on it.
 * Context: any thread; the caller locks its own table.
 */
#include "kmeta/kmeta.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

cJSON *kmeta_event_json(const struct kmeta_object_ref *ref, const char *ns, const char *name,
			const char *type, const char *reason, const char *message,
			const char *component, const char *ts)
{
	cJSON *e = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(e, "metadata");
	cJSON *io = cJSON_AddObjectToObject(e, "involvedObject");
	cJSON *src = cJSON_AddObjectToObject(e, "source");
	if (!e || !md || !io || !src) {
		cJSON_Delete(e);
		return NULL;
	}
	cJSON_AddStringToObject(e, "apiVersion", "v1");
	cJSON_AddStringToObject(e, "kind", "Event");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddStringToObject(io, "apiVersion", ref->api_version ? ref->api_version : "v1");
	cJSON_AddStringToObject(io, "kind", ref->kind);
	cJSON_AddStringToObject(io, "name", ref->name);
	if (ref->ns && ref->ns[0])
		cJSON_AddStringToObject(io, "namespace", ref->ns);
	if (ref->uid)
		cJSON_AddStringToObject(io, "uid", ref->uid);
	cJSON_AddStringToObject(e, "reason", reason);
	cJSON_AddStringToObject(e, "message", message);
	cJSON_AddStringToObject(e, "type", type);
	cJSON_AddNumberToObject(e, "count", 1);
	cJSON_AddStringToObject(src, "component", component);
	cJSON_AddStringToObject(e, "firstTimestamp", ts);
	cJSON_AddStringToObject(e, "lastTimestamp", ts);
	cJSON_AddStringToObject(e, "reportingComponent", component);
	cJSON_AddStringToObject(e, "reportingInstance", "");
	return e;
}

static uint32_t fnv_field(uint32_t h, const char *s)
{
	for (; s && *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return (h * 16777619u) ^ 0x2f; /* a field separator: ("ab","c") differs from ("a","bc") */
}

uint32_t kmeta_event_hash(const struct kmeta_object_ref *ref, const char *ns, const char *type,
			  const char *reason, const char *message)
{
	const char *parts[] = {ns, ref->kind, ref->name, ref->uid, type, reason, message};
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		h = fnv_field(h, parts[i]);
	return h | 1; /* 0 marks a free slot */
}

struct kmeta_event_series *kmeta_event_series_find(struct kmeta_event_series *tab, size_t n,
						   uint32_t hash, const char *ns, uint64_t now_s)
{
	for (size_t i = 0; i < n; i++) {
		struct kmeta_event_series *s = &tab[i];
		if (s->hash == hash && now_s - s->last_s <= K32_API_EVENT_SERIES_S &&
		    !strcmp(s->ns, ns)) {
			s->last_s = now_s;
			return s;
		}
	}
	return NULL;
}

struct kmeta_event_series *kmeta_event_series_add(struct kmeta_event_series *tab, size_t n,
						  uint32_t hash, const char *ns, const char *name,
						  uint64_t now_s)
{
	struct kmeta_event_series *lru = &tab[0];
	for (size_t i = 1; i < n; i++)
		if (tab[i].last_s < lru->last_s)
			lru = &tab[i];
	lru->hash = hash;
	lru->count = 1;
	lru->last_s = now_s;
	snprintf(lru->ns, sizeof(lru->ns), "%s", ns);
	snprintf(lru->name, sizeof(lru->name), "%s", name);
	return lru;
}

const char *kmeta_event_name(const char *object, uint64_t now_us, uint32_t salt, char *out,
			     size_t cap)
{
	/* the object's name, cut so the suffix always fits in KMETA_EVENT_NAME_LEN */
	snprintf(out, cap, "%.90s.%" PRIx64 "%04" PRIx32, object, now_us, salt & 0xffff);
	return out;
}
