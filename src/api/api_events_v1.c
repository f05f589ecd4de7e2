/*
 * api_events_v1.c - events.k8s.io/v1 as a view of the core/v1 Events.
 *
 * kube-apiserver keeps one set of Events and serves it through both APIs; so does this
 * server. Every Event is stored once, in the core/v1 shape, under the core key space
 * (api_key maps the events.k8s.io resource there). Reads through events.k8s.io/v1 (get,
 * list, watch, Tables, field selectors) parse the stored core object and rename its fields
 * to the events.k8s.io names; writes through events.k8s.io/v1 (create, update, patch, apply)
 * edit that view and are renamed back before they are stored. The core path never comes
 * here: it keeps serving the stored bytes as they are.
 *
 * The two shapes differ only in names (kube's pkg/apis/events conversion):
 *   core/v1                       events.k8s.io/v1
 *   involvedObject                regarding
 *   message                       note
 *   source                        deprecatedSource
 *   firstTimestamp                deprecatedFirstTimestamp
 *   lastTimestamp                 deprecatedLastTimestamp
 *   count                         deprecatedCount
 *   reportingComponent            reportingController
 *   reportingInstance, eventTime, series, action, related, type, reason: same name.
 * Reading also fills what an old-style (core) reporter left out, so that the events.k8s.io
 * view names a reporter and a series: reportingController from source.component,
 * reportingInstance from source.host, and series {count, lastObservedTime} from count and
 * lastTimestamp when the Event happened more than once. A series made up that way (its
 * lastObservedTime is lastTimestamp, to the second) is dropped again on the way back, so a
 * read-modify-write through events.k8s.io leaves the stored core object as it was apart
 * from the client's change, and count stays the one count stored.
 * Context: pure functions over one cJSON tree; any thread.
 */
#include "api/api_srv.h"

#include <stdio.h>
#include <string.h>

bool api_events_v1(const struct api_resource *res)
{
	return res && res->group[0] == 'e' && !strcmp(res->group, "events.k8s.io") &&
	       !strcmp(res->plural, "events");
}

/* Renames key from to to in o (a previous to is replaced); the item is re-linked. */
static void api_ev_rename(cJSON *o, const char *from, const char *to)
{
	cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(o, from);
	if (!it)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(o, to);
	if (!cJSON_AddItemToObject(o, to, it))
		cJSON_Delete(it);
}

static const char *const api_ev_names[][2] = {
    /* core/v1, events.k8s.io/v1 */
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reportingComponent", "reportingController"},
};
#define API_EV_NAMES (sizeof(api_ev_names) / sizeof(api_ev_names[0]))

static void api_ev_set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v);
}

/* A Time ("...:05Z") as a MicroTime ("...:05.000000Z"), which events.k8s.io's
 * series.lastObservedTime is (clients parse it with exactly six digits). */
static void api_ev_micro(const char *t, char *buf, size_t cap)
{
	size_t n = strlen(t);
	if (n == 20 && t[19] == 'Z' && !strchr(t, '.'))
		snprintf(buf, cap, "%.19s.000000Z", t);
	else
		snprintf(buf, cap, "%s", t);
}

/* Whether the string at key of o is missing or empty. */
static bool api_ev_blank(const cJSON *o, const char *key)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	return !v || !v[0];
}

void api_event_to_v1(cJSON *e)
{
	if (!cJSON_IsObject(e))
		return;
	api_ev_set_str(e, "apiVersion", "events.k8s.io/v1");
	for (size_t i = 0; i < API_EV_NAMES; i++)
		api_ev_rename(e, api_ev_names[i][0], api_ev_names[i][1]);
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "deprecatedSource");
	const char *comp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(src, "component"));
	const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(src, "host"));
	if (comp && comp[0] && api_ev_blank(e, "reportingController"))
		api_ev_set_str(e, "reportingController", comp);
	if (host && host[0] && api_ev_blank(e, "reportingInstance"))
		api_ev_set_str(e, "reportingInstance", host);
	const cJSON *count = cJSON_GetObjectItemCaseSensitive(e, "deprecatedCount");
	const char *last =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "deprecatedLastTimestamp"));
	if (!cJSON_GetObjectItemCaseSensitive(e, "series") && cJSON_IsNumber(count) &&
	    count->valuedouble > 1 && last && last[0]) {
		char micro[48];
		api_ev_micro(last, micro, sizeof(micro));
		cJSON *s = cJSON_CreateObject();
		if (s && cJSON_AddNumberToObject(s, "count", count->valuedouble) &&
		    cJSON_AddStringToObject(s, "lastObservedTime", micro) &&
		    cJSON_AddItemToObject(e, "series", s))
			return;
		cJSON_Delete(s);
	}
}

void api_event_to_core(cJSON *e)
{
	if (!cJSON_IsObject(e))
		return;
	api_ev_set_str(e, "apiVersion", "v1");
	for (size_t i = 0; i < API_EV_NAMES; i++)
		api_ev_rename(e, api_ev_names[i][1], api_ev_names[i][0]);
	/* a series whose lastObservedTime is lastTimestamp is the one api_event_to_v1 made up
	 * from count (a reporter of series sets it to the microsecond): it goes again, so a
	 * view whose deprecatedCount was changed does not leave a stale series stored */
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "series");
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "count");
	const char *sl =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "lastObservedTime"));
	const char *last =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "lastTimestamp"));
	if (!sl || !last)
		return;
	char micro[48];
	api_ev_micro(last, micro, sizeof(micro));
	if (strcmp(micro, sl))
		return;
	if (cJSON_IsNumber(sc) && !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "count")))
		cJSON_AddNumberToObject(e, "count", sc->valuedouble);
	cJSON_DeleteItemFromObjectCaseSensitive(e, "series");
}

cJSON *api_parse_view(const struct api_resource *res, const struct store_obj *o)
{
	cJSON *j = api_parse_obj(o);
	if (j && api_events_v1(res))
		api_event_to_v1(j);
	return j;
}

k32_status_t api_event_append_v1(struct k32_buf *b, const struct store_obj *o, struct k32_err *err)
{
	cJSON *j = api_parse_view(api_registry_find("events.k8s.io", "v1", "events"), o);
	k32_status_t st =
	    j ? api_json_append(b, j, err)
	      : k32_err_set(err, K32_ERR_NO_MEMORY, "api",
			    "listing events.k8s.io Events: out of memory for one Event");
	cJSON_Delete(j);
	return st;
}
