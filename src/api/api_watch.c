/*
 * api_watch.c - watch as a chunked stream of JSON lines.
 *
 * GET ...?watch=true answers 200 with Transfer-Encoding: chunked and one line per event:
 * {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}. Without a
 * resourceVersion (or with "0") the current matching objects come first as synthetic
 * ADDED events, then every change after the list's revision; with resourceVersion=N only
 * changes after N. A revision older than the store's history answers a single ERROR event
 * with a 410 Expired Status (informers relist). Label and field selectors apply to both
 * the old and the new version of a change, so an object that stops matching is reported
 * DELETED and one that starts matching ADDED. With a Table Accept (`kubectl get -w`) each
 * event's object is a one-row Table. timeoutSeconds ends the stream; allowWatchBookmarks
 * adds a BOOKMARK every api_config.bookmark_s (K32_API_BOOKMARK_S) seconds.
 *
 * No thread per watch: the store's notify callback wakes the http stream, whose pull (on
 * the loop task) drains up to K32_API_WATCH_BATCH events at a time. When the connection's
 * output buffer is full, the pending line and the untaken events stay in the context until
 * the stream is writable again; a client that never reads is dropped by the http write
 * timeout, and a watcher that falls too far behind gets 410 from the store.
 */
#include "api/api_crd.h"
#include "api/api_srv.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_json.h"

struct api_wctx {
	struct api_server *api;
	const struct api_resource *res;
	struct store_watch *w;
	_Atomic http_stream_id_t sid; /* set after http_response_stream; read by notify */
	struct api_selector *lsel;    /* allocated only when the watch has a label selector */
	struct api_selector *fsel;    /* ... a field selector */
	bool table;
	bool bookmarks;
	bool ending;		/* the pending line is the last one (ERROR) */
	int64_t end_us;		/* K32_FOREVER: no timeout */
	int64_t next_bm_us;	/* next bookmark */
	struct store_list init; /* synthetic ADDED events still to send */
	uint32_t init_idx;
	struct store_event evs[K32_API_WATCH_BATCH]; /* taken from the store, not yet sent */
	size_t ev_count, ev_idx;
	struct k32_buf line; /* the line being written (kept while SHOULD_WAIT) */
	bool line_pending;
};

static void api_watch_notify(void *ctx)
{
	struct api_wctx *wc = ctx;
	http_stream_id_t sid = atomic_load(&wc->sid);
	struct http_server *srv = atomic_load(&wc->api->http);
	if (sid && srv)
		http_server_stream_wake(srv, sid);
}

static bool api_watch_match(const struct api_wctx *wc, const cJSON *j)
{
	if (!j)
		return false;
	if (wc->lsel && !api_label_selector_match(wc->lsel, k32_json_find(j, "metadata.labels")))
		return false;
	if (wc->fsel && !api_field_selector_match(wc->fsel, j))
		return false;
	return true;
}

/* Builds the line for one event into wc->line. obj is the version to show; rv (0: keep)
 * overrides its resourceVersion (DELETED events carry the deletion's revision). */
static k32_status_t api_watch_format(struct api_wctx *wc, const char *type,
				     const struct store_obj *obj, const cJSON *parsed, uint64_t rv)
{
	struct k32_err err;
	k32_buf_reset(&wc->line);
	/* a Table, or an events.k8s.io Event (converted from the stored core one), is built
	 * from the parsed object; anything else is the stored text */
	if (wc->table || api_events_v1(wc->res)) {
		cJSON *j = parsed ? cJSON_Duplicate(parsed, true) : api_parse_view(wc->res, obj);
		if (!j)
			return K32_ERR_NO_MEMORY;
		char rvs[24];
		if (rv) {
			cJSON *md = cJSON_GetObjectItem(j, "metadata");
			snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
			if (md) {
				cJSON_DeleteItemFromObject(md, "resourceVersion");
				cJSON_AddStringToObject(md, "resourceVersion", rvs);
			}
		}
		const cJSON *objs[] = {j};
		cJSON *t = j;
		if (wc->table) {
			t = api_table_build(
			    wc->res, objs, 1, api_now_s(),
			    cJSON_GetStringValue(k32_json_find(j, "metadata.resourceVersion")),
			    true);
			cJSON_Delete(j);
		}
		cJSON *ev = cJSON_CreateObject();
		if (!t || !ev) {
			cJSON_Delete(t);
			cJSON_Delete(ev);
			return K32_ERR_NO_MEMORY;
		}
		cJSON_AddStringToObject(ev, "type", type);
		api_json_put(ev, "object", t);
		k32_status_t st = api_json_append(&wc->line, ev, &err);
		cJSON_Delete(ev);
		if (!st)
			st = k32_buf_append(&wc->line, "\n", 1, &err);
		return st;
	}
	k32_status_t st = k32_buf_printf(&wc->line, &err, "{\"type\":\"%s\",\"object\":", type);
	const char *data = store_obj_data(obj);
	size_t len = obj->len;
	/* a custom object watched at another served version: its apiVersion rewritten */
	char head[API_CRD_VIEW_HEAD_LEN];
	size_t skip = api_crd_view_head(wc->res, data, len, head, sizeof(head));
	if (!st && skip) {
		st = k32_buf_append_str(&wc->line, head, &err);
		data += skip;
		len -= skip;
	}
	if (!st && rv) {
		/* the resourceVersion slot sits in metadata right after name/namespace/uid */
		static const char pat[] = "\"resourceVersion\":\"";
		const char *p = strstr(data, pat);
		const char *q = p ? strchr(p + sizeof(pat) - 1, '"') : NULL;
		if (p && q) {
			size_t head = (size_t)(p - data) + sizeof(pat) - 1;
			st = k32_buf_append(&wc->line, data, head, &err);
			if (!st)
				st =
				    k32_buf_printf(&wc->line, &err, "%llu", (unsigned long long)rv);
			len -= (size_t)(q - data);
			data = q;
		}
	}
	if (!st)
		st = k32_buf_append(&wc->line, data, len, &err);
	if (!st)
		st = k32_buf_append(&wc->line, "}\n", 2, &err);
	return st;
}

/* Writes wc->line; SHOULD_WAIT keeps it pending. */
static k32_status_t api_watch_flush(struct api_wctx *wc, struct http_stream *s)
{
	if (!wc->line_pending)
		return K32_OK;
	k32_status_t st = http_stream_write(s, wc->line.data, wc->line.len);
	if (st == K32_OK)
		wc->line_pending = false;
	return st;
}

static k32_status_t api_watch_error_line(struct api_wctx *wc, int code, const char *reason,
					 const char *msg)
{
	struct api_fail f;
	struct k32_err err;
	api_fail_clear(&f);
	api_fail_set(&f, code, reason, "%s", msg);
	cJSON *st = api_fail_to_json(&f);
	cJSON *ev = cJSON_CreateObject();
	if (!st || !ev) {
		cJSON_Delete(st);
		cJSON_Delete(ev);
		return K32_ERR_NO_MEMORY;
	}
	cJSON_AddStringToObject(ev, "type", "ERROR");
	api_json_put(ev, "object", st);
	k32_buf_reset(&wc->line);
	k32_status_t s = api_json_append(&wc->line, ev, &err);
	cJSON_Delete(ev);
	if (!s)
		s = k32_buf_append(&wc->line, "\n", 1, &err);
	wc->line_pending = s == K32_OK;
	wc->ending = true;
	return s;
}

/* Prepares the line for the next store event; false when it is filtered out. */
static bool api_watch_next_line(struct api_wctx *wc, const struct store_event *ev)
{
	const char *type = ev->type == STORE_EVENT_ADDED      ? "ADDED"
			   : ev->type == STORE_EVENT_MODIFIED ? "MODIFIED"
							      : "DELETED";
	uint64_t rv = ev->type == STORE_EVENT_DELETED ? ev->rev : 0;
	if (!wc->lsel && !wc->fsel)
		return api_watch_format(wc, type, ev->obj, NULL, rv) == K32_OK;
	cJSON *now = api_parse_view(wc->res, ev->obj);
	bool m_now = api_watch_match(wc, now);
	bool m_prev = m_now;
	if (ev->type == STORE_EVENT_MODIFIED && ev->prev) {
		cJSON *pj = api_parse_view(wc->res, ev->prev);
		m_prev = api_watch_match(wc, pj);
		cJSON_Delete(pj);
		if (m_now && !m_prev)
			type = "ADDED";
		else if (!m_now && m_prev) {
			type = "DELETED";
			rv = ev->rev;
		}
	}
	bool send = m_now || m_prev;
	bool ok = send && api_watch_format(wc, type, ev->obj, now, rv) == K32_OK;
	cJSON_Delete(now);
	return ok;
}

static void api_watch_release(struct api_wctx *wc)
{
	if (wc->ev_idx < wc->ev_count)
		store_events_release(wc->api->store, wc->evs + wc->ev_idx,
				     wc->ev_count - wc->ev_idx);
	wc->ev_idx = wc->ev_count = 0;
}

static k32_status_t api_watch_pull(void *ctx, struct http_stream *s, uint32_t events)
{
	struct api_wctx *wc = ctx;
	int64_t now = (int64_t)k32_now_us();
	k32_status_t st = api_watch_flush(wc, s);
	if (st == K32_ERR_SHOULD_WAIT)
		return K32_OK;
	if (st)
		return st;
	if (wc->ending)
		return K32_ERR_CANCELED;
	if ((events & HTTP_STREAM_EV_TIMER) && wc->end_us != K32_FOREVER && now >= wc->end_us)
		return K32_ERR_CANCELED;
	/* synthetic ADDED events of the initial list */
	while (wc->init_idx < wc->init.count) {
		struct store_obj *o = wc->init.items[wc->init_idx++];
		bool send = true;
		cJSON *j = NULL;
		if (wc->lsel || wc->fsel) {
			j = api_parse_view(wc->res, o);
			send = api_watch_match(wc, j);
		}
		if (send && api_watch_format(wc, "ADDED", o, j, 0) == K32_OK) {
			wc->line_pending = true;
			st = api_watch_flush(wc, s);
		}
		cJSON_Delete(j);
		if (st == K32_ERR_SHOULD_WAIT)
			return K32_OK;
		if (st)
			return st;
	}
	/* changes */
	for (;;) {
		if (wc->ev_idx == wc->ev_count) {
			struct k32_err err;
			wc->ev_idx = wc->ev_count = 0;
			st = store_watch_next(wc->w, wc->evs, K32_API_WATCH_BATCH, &wc->ev_count,
					      K32_NO_WAIT, &err);
			if (st == K32_ERR_SHOULD_WAIT || st == K32_ERR_TIMED_OUT) {
				wc->ev_count = 0;
				break;
			}
			if (st) {
				wc->ev_count = 0;
				api_watch_error_line(
				    wc, 410, "Expired",
				    st == K32_ERR_COMPACTED
					? "too old resource version: the watch fell behind; relist"
					: "watch ended by the server");
				st = api_watch_flush(wc, s);
				return st == K32_ERR_SHOULD_WAIT ? K32_OK : K32_ERR_CANCELED;
			}
		}
		struct store_event *ev = &wc->evs[wc->ev_idx];
		if (api_watch_next_line(wc, ev))
			wc->line_pending = true;
		store_events_release(wc->api->store, ev, 1);
		wc->ev_idx++;
		st = api_watch_flush(wc, s);
		if (st == K32_ERR_SHOULD_WAIT)
			return K32_OK;
		if (st)
			return st;
	}
	if (wc->bookmarks && now >= wc->next_bm_us) {
		struct k32_err err;
		char av[API_VERSION_LEN];
		k32_buf_reset(&wc->line);
		api_resource_api_version(wc->res, av, sizeof(av));
		if (k32_buf_printf(
			&wc->line, &err,
			"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
			"\"metadata\":{\"resourceVersion\":\"%llu\"}}}\n",
			wc->res->kind, av,
			(unsigned long long)store_watch_progress(wc->w)) == K32_OK) {
			wc->line_pending = true;
			st = api_watch_flush(wc, s);
			if (st && st != K32_ERR_SHOULD_WAIT)
				return st;
		}
		wc->next_bm_us = now + (int64_t)wc->api->bookmark_s * 1000000;
	}
	int64_t t = wc->end_us;
	if (wc->bookmarks && (t == K32_FOREVER || wc->next_bm_us < t))
		t = wc->next_bm_us;
	http_stream_set_timer(s, t);
	return K32_OK;
}

static void api_wctx_free(struct api_wctx *wc)
{
	if (!wc)
		return;
	api_watch_release(wc);
	if (wc->w)
		store_watch_close(wc->w);
	store_list_fini(wc->api->store, &wc->init);
	k32_buf_fini(&wc->line);
	api_free(wc->lsel, sizeof(*wc->lsel));
	api_free(wc->fsel, sizeof(*wc->fsel));
	api_free(wc, sizeof(*wc));
}

static void api_watch_stream_close(void *ctx, k32_status_t why)
{
	(void)why;
	api_wctx_free(ctx);
}

static const struct http_stream_ops api_watch_ops = {
    .pull = api_watch_pull,
    .close = api_watch_stream_close,
};

void api_watch(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	struct api_fail f;
	char v[64];
	api_fail_clear(&f);
	if (!rq->http) {
		api_fail_set(
		    &f, 400, "BadRequest",
		    "watch is served over HTTP only (in-process callers use the store watch)");
		api_out_fail(out, &f);
		return;
	}
	struct api_wctx *wc = api_zalloc(sizeof(*wc));
	if (!wc) {
		api_fail_set(&f, 500, "InternalError", "out of memory for a watch; retry later");
		api_out_fail(out, &f);
		return;
	}
	wc->api = api;
	wc->res = rq->res;
	wc->table = rq->table;
	wc->bookmarks = api_q_bool(rq, "allowWatchBookmarks", false);
	k32_buf_init(&wc->line, k32_default_allocator(), K32_HTTP_STREAM_BUF_BYTES, "watch event");
	char *sel = api_zalloc(K32_API_SELECTOR_LEN + 1);
	k32_status_t st = sel ? K32_OK : api_fail_set(&f, 500, "InternalError", "out of memory");
	if (!st && api_q(rq, "labelSelector", sel, K32_API_SELECTOR_LEN + 1) && sel[0]) {
		wc->lsel = api_zalloc(sizeof(*wc->lsel));
		st = wc->lsel ? api_label_selector_parse(sel, wc->lsel, &f)
			      : api_fail_set(&f, 500, "InternalError", "out of memory");
	}
	if (!st && rq->name[0]) /* GET .../pods/NAME?watch=true: that one object */
		snprintf(sel, K32_API_SELECTOR_LEN + 1, "metadata.name=%s", rq->name);
	else if (!st && !(api_q(rq, "fieldSelector", sel, K32_API_SELECTOR_LEN + 1) && sel[0]))
		sel[0] = 0;
	if (!st && sel[0]) {
		wc->fsel = api_zalloc(sizeof(*wc->fsel));
		st = wc->fsel ? api_field_selector_parse(sel, rq->res, wc->fsel, &f)
			      : api_fail_set(&f, 500, "InternalError", "out of memory");
	}
	api_free(sel, K32_API_SELECTOR_LEN + 1);
	if (st)
		goto out_fail;
	wc->end_us = K32_FOREVER;
	if (api_q(rq, "timeoutSeconds", v, sizeof(v)) && v[0]) {
		long t = strtol(v, NULL, 10);
		if (t > 0)
			wc->end_us = (int64_t)k32_now_us() + (int64_t)t * 1000000;
	}
	wc->next_bm_us = (int64_t)k32_now_us() + (int64_t)api->bookmark_s * 1000000;
	uint64_t from = 0;
	bool have_rv = api_q(rq, "resourceVersion", v, sizeof(v)) && v[0] && strcmp(v, "0");
	struct store_key key;
	struct k32_err err;
	k32_err_clear(&err);
	api_key(rq->res, rq->ns, "", &key);
	if (have_rv) {
		char *end;
		from = strtoull(v, &end, 10);
		if (*end) {
			api_fail_set(&f, 400, "BadRequest",
				     "resourceVersion=%s: expected a decimal revision from a list "
				     "or an object",
				     v);
			goto out_fail;
		}
	} else {
		struct store_list_opts opts = {0};
		st = store_list(api->store, &key, &opts, &wc->init, &err);
		if (st) {
			api_store_err(&f, rq->res, "", st, &err);
			goto out_fail;
		}
		from = wc->init.rev;
	}
	st = store_watch_open(api->store, &key, from, api_watch_notify, wc, &wc->w, &err);
	if (st == K32_ERR_COMPACTED) {
		/* too old: one ERROR event with a 410 Status, as kube-apiserver answers */
		char line[512];
		int n = snprintf(
		    line, sizeof(line),
		    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		    "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
		    "version: %llu (%.200s)\",\"reason\":\"Expired\",\"code\":410}}\n",
		    (unsigned long long)from, err.msg);
		api_wctx_free(wc);
		api_out_text(out, 200, "application/json", line, n > 0 ? (size_t)n : 0);
		return;
	}
	if (st) {
		api_store_err(&f, rq->res, "", st, &err);
		goto out_fail;
	}
	struct http_response *resp = rq->http;
	resp->status = 200;
	http_response_header(resp, "Content-Type", wc->table ? API_CT_TABLE : "application/json");
	http_response_header(resp, "Cache-Control", "no-cache, private");
	http_stream_id_t sid = 0;
	st = http_response_stream(resp, &api_watch_ops, wc, &sid);
	if (st) {
		api_fail_set(&f, 500, "InternalError",
			     "could not start the watch stream (%" PRId32 ")", st);
		goto out_fail;
	}
	atomic_store(&wc->sid, sid);
	out->code = 0; /* the response is a stream now */
	return;
out_fail:
	api_wctx_free(wc);
	api_out_fail(out, &f);
}

/* ---- in-process watch (controllers) ---------------------------------------------------- */

struct api_watch {
	struct api_wctx *wc;
};

k32_status_t api_watch_open(struct api_server *api, const char *target, struct api_watch **out,
			    struct k32_err *err)
{
	struct api_fail f;
	*out = NULL;
	api_fail_clear(&f);
	struct api_req *rq = api_zalloc(sizeof(*rq));
	struct api_watch *aw = api_zalloc(sizeof(*aw));
	struct api_wctx *wc = api_zalloc(sizeof(*wc));
	k32_status_t st = K32_OK;
	if (!rq || !aw || !wc) {
		st = k32_err_set(err, K32_ERR_NO_MEMORY, "api", "api_watch_open: out of memory");
		goto out_free;
	}
	const char *q = strchr(target, '?');
	struct k32_str raw = {target, q ? (size_t)(q - target) : strlen(target)};
	rq->method = "GET";
	rq->query = q ? k32_str_from(q + 1) : k32_str_from("");
	if (api_query_check(rq, &f)) {
		st = k32_err_set(err, K32_ERR_INVALID_ARGS, "api", "api_watch_open: %s", f.message);
		goto out_free;
	}
	if (http_url_decode(raw, false, rq->path, sizeof(rq->path), NULL) != K32_OK ||
	    !api_route_target(rq, &f) || rq->sub[0] || !(rq->res->verbs & API_VERB_WATCH)) {
		st = k32_err_set(err, K32_ERR_INVALID_ARGS, "api",
				 "api_watch_open: \"%.100s\" is not a watchable resource path%s%s",
				 target, f.code ? ": " : "", f.code ? f.message : "");
		goto out_free;
	}
	wc->api = api;
	wc->res = rq->res;
	k32_buf_init(&wc->line, k32_default_allocator(), K32_HTTP_STREAM_BUF_BYTES, "watch event");
	char *sel = api_zalloc(K32_API_SELECTOR_LEN + 1);
	if (!sel) {
		st = k32_err_set(err, K32_ERR_NO_MEMORY, "api", "api_watch_open: out of memory");
		goto out_free;
	}
	if (api_q(rq, "labelSelector", sel, K32_API_SELECTOR_LEN + 1) && sel[0]) {
		wc->lsel = api_zalloc(sizeof(*wc->lsel));
		if (!wc->lsel || api_label_selector_parse(sel, wc->lsel, &f))
			st = K32_ERR_INVALID_ARGS;
	}
	if (!st && rq->name[0])
		snprintf(sel, K32_API_SELECTOR_LEN + 1, "metadata.name=%s", rq->name);
	else if (!st && !(api_q(rq, "fieldSelector", sel, K32_API_SELECTOR_LEN + 1) && sel[0]))
		sel[0] = 0;
	if (!st && sel[0]) {
		wc->fsel = api_zalloc(sizeof(*wc->fsel));
		if (!wc->fsel || api_field_selector_parse(sel, rq->res, wc->fsel, &f))
			st = K32_ERR_INVALID_ARGS;
	}
	api_free(sel, K32_API_SELECTOR_LEN + 1);
	if (st) {
		st = k32_err_set(err, st, "api", "api_watch_open: %s",
				 f.code ? f.message : "out of memory");
		goto out_free;
	}
	char v[32];
	struct store_key key;
	uint64_t from = 0;
	api_key(rq->res, rq->ns, "", &key);
	if (api_q(rq, "resourceVersion", v, sizeof(v)) && v[0] && strcmp(v, "0")) {
		char *end;
		from = strtoull(v, &end, 10);
		if (*end) {
			st = k32_err_set(err, K32_ERR_INVALID_ARGS, "api",
					 "api_watch_open: resourceVersion=%s is not a revision", v);
			goto out_free;
		}
	} else {
		struct store_list_opts opts = {0};
		st = store_list(api->store, &key, &opts, &wc->init, err);
		if (st)
			goto out_free;
		from = wc->init.rev;
	}
	st = store_watch_open(api->store, &key, from, NULL, NULL, &wc->w, err);
	if (st)
		goto out_free;
	aw->wc = wc;
	*out = aw;
	api_free(rq, sizeof(*rq));
	return K32_OK;
out_free:
	if (wc && wc->api)
		api_wctx_free(wc);
	else
		api_free(wc, sizeof(*wc));
	api_free(aw, sizeof(*aw));
	api_free(rq, sizeof(*rq));
	return st;
}

k32_status_t api_watch_next(struct api_watch *aw, struct k32_buf *out, int64_t deadline_us,
			    struct k32_err *err)
{
	struct api_wctx *wc = aw->wc;
	for (;;) {
		if (wc->init_idx < wc->init.count) {
			struct store_obj *o = wc->init.items[wc->init_idx++];
			cJSON *j = (wc->lsel || wc->fsel) ? api_parse_view(wc->res, o) : NULL;
			bool send = !(wc->lsel || wc->fsel) || api_watch_match(wc, j);
			k32_status_t st = send ? api_watch_format(wc, "ADDED", o, j, 0) : K32_OK;
			cJSON_Delete(j);
			if (st)
				return k32_err_set(err, st, "api", "watch event: %s",
						   k32_status_name(st));
			if (send)
				return k32_buf_append(out, wc->line.data, wc->line.len, err);
			continue;
		}
		if (wc->ev_idx == wc->ev_count) {
			wc->ev_idx = wc->ev_count = 0;
			k32_status_t st = store_watch_next(wc->w, wc->evs, K32_API_WATCH_BATCH,
							   &wc->ev_count, deadline_us, err);
			if (st) {
				wc->ev_count = 0;
				return st;
			}
		}
		struct store_event *ev = &wc->evs[wc->ev_idx];
		bool send = api_watch_next_line(wc, ev);
		store_events_release(wc->api->store, ev, 1);
		wc->ev_idx++;
		if (send)
			return k32_buf_append(out, wc->line.data, wc->line.len, err);
	}
}

void api_watch_cancel(struct api_watch *aw)
{
	if (aw && aw->wc->w)
		store_watch_cancel(aw->wc->w);
}

void api_watch_close(struct api_watch *aw)
{
	if (!aw)
		return;
	api_wctx_free(aw->wc);
	api_free(aw, sizeof(*aw));
}
