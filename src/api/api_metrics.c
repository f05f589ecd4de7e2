/*
 * api_metrics.c - GET /metrics of the API server, in Prometheus' text format.
 *
 * Named as kube-apiserver names them, so dashboards made for Kubernetes read them:
 *   apiserver_request_total{verb,group,resource,subresource,code}   counter
 *   apiserver_request_duration_seconds{verb}                         histogram (no WATCH)
 *   apiserver_registered_watchers                                    gauge (open watches)
 *   apiserver_storage_objects                                        gauge
 * and kube32's own: kube32_store_revision, kube32_store_object_bytes, kube32_store_log_bytes,
 * kube32_store_history_events, kube32_store_memory_bytes, and
 * kube32_apiserver_request_series_dropped (requests past K32_API_METRICS_SERIES series),
 * kube32_apiserver_portforward_tunnels_total{protocol="spdy"|"websocket"}.
 * The series table is fixed (no allocation per request) and guarded by its own mutex.
 */
#include <stdio.h>
#include <string.h>

#include "api/api_srv.h"
#include "store/store.h"

static const double api_latency_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
					0.1,	0.25,  0.5,    1,     2.5,  5,	   10};

static const char *const api_mverb_names[API_MV_COUNT] = {
    "GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION", "OTHER"};

void api_metrics_init(struct api_metrics *m)
{
	memset(m, 0, sizeof(*m));
	k32_plat()->mutex_init(&m->mu);
	for (int v = 0; v < API_MV_COUNT; v++) {
		m->latency[v].le = api_latency_le;
		m->latency[v].n = sizeof(api_latency_le) / sizeof(api_latency_le[0]);
	}
}

void api_metrics_fini(struct api_metrics *m)
{
	k32_plat()->mutex_fini(&m->mu);
}

static enum api_mverb api_mverb_of(const struct api_req *rq, int code)
{
	const char *m = rq->method;
	if (!strcmp(m, "GET")) {
		if (code == 0 || api_q_bool(rq, "watch", false))
			return API_MV_WATCH;
		return rq->res && !rq->name[0] ? API_MV_LIST : API_MV_GET;
	}
	if (!strcmp(m, "POST"))
		return API_MV_POST;
	if (!strcmp(m, "PUT"))
		return API_MV_PUT;
	if (!strcmp(m, "PATCH"))
		return strstr(rq->ctype, "apply-patch") ? API_MV_APPLY : API_MV_PATCH;
	if (!strcmp(m, "DELETE"))
		return rq->res && !rq->name[0] ? API_MV_DELETECOLLECTION : API_MV_DELETE;
	return API_MV_OTHER;
}

/* The subresource as a static string, so that a series holds no copy of it. */
static const char *api_msub(const char *sub)
{
	static const char *const known[] = {"status",	"scale", "binding",
					    "eviction", "log",	 "ephemeralcontainers"};
	if (!sub[0])
		return "";
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(sub, known[i]))
			return known[i];
	return "other";
}

void api_metrics_record(struct api_metrics *m, const struct api_req *rq, int code, uint64_t us)
{
	enum api_mverb v = api_mverb_of(rq, code);
	const char *sub = api_msub(rq->sub);
	uint16_t c = (uint16_t)(code ? code : 200);
	k32_mutex_lock(&m->mu);
	struct api_metric_series *s = NULL;
	for (uint32_t i = 0; i < m->nseries && !s; i++) {
		struct api_metric_series *e = &m->series[i];
		if (e->verb == v && e->code == c && e->res == rq->res && e->sub == sub)
			s = e;
	}
	if (!s && m->nseries < K32_API_METRICS_SERIES) {
		s = &m->series[m->nseries++];
		s->verb = (uint8_t)v;
		s->code = c;
		s->res = rq->res;
		s->sub = sub;
	}
	if (s)
		s->count++;
	else
		m->dropped++;
	if (v != API_MV_WATCH) /* a watch lasts as long as the client wants */
		k32_prom_hist_observe(&m->latency[v], us);
	k32_mutex_unlock(&m->mu);
}

static k32_status_t api_metrics_render(struct api_server *api, struct k32_buf *b,
				       struct k32_err *err)
{
	struct api_metrics *m = &api->metrics;
	k32_status_t st =
	    k32_prom_family(b, "apiserver_request_total", "counter",
			    "Requests answered, by verb, resource and HTTP code.", err);
	k32_mutex_lock(&m->mu);
	for (uint32_t i = 0; !st && i < m->nseries; i++) {
		const struct api_metric_series *s = &m->series[i];
		char labels[256] = "", code[8];
		snprintf(code, sizeof(code), "%u", (unsigned)s->code);
		k32_prom_label(labels, sizeof(labels), "verb", api_mverb_names[s->verb]);
		k32_prom_label(labels, sizeof(labels), "group", s->res ? s->res->group : "");
		k32_prom_label(labels, sizeof(labels), "resource", s->res ? s->res->plural : "");
		k32_prom_label(labels, sizeof(labels), "subresource", s->sub);
		k32_prom_label(labels, sizeof(labels), "code", code);
		st = k32_prom_sample(b, "apiserver_request_total", labels, (double)s->count, err);
	}
	if (!st)
		st = k32_prom_family(b, "apiserver_request_duration_seconds", "histogram",
				     "Time to answer a request (watches excluded), by verb.", err);
	for (int v = 0; !st && v < API_MV_COUNT; v++) {
		char labels[32] = "";
		if (v == API_MV_WATCH || !m->latency[v].count)
			continue;
		k32_prom_label(labels, sizeof(labels), "verb", api_mverb_names[v]);
		st = k32_prom_hist_write(b, "apiserver_request_duration_seconds", labels,
					 &m->latency[v], err);
	}
	uint64_t dropped = m->dropped;
	k32_mutex_unlock(&m->mu);
	struct store_stats ss;
	store_get_stats(api->store, &ss);
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
	    {"kube32_apiserver_request_series_dropped", "counter",
	     "Requests not counted by series: K32_API_METRICS_SERIES were in use."},
	    {"apiserver_registered_watchers", "gauge", "Open watches of the store."},
	    {"apiserver_storage_objects", "gauge", "Objects in the store."},
	    {"kube32_store_revision", "gauge", "The store's current revision."},
	    {"kube32_store_object_bytes", "gauge", "Bytes of the live objects."},
	    {"kube32_store_history_events", "gauge", "Events in the watch history."},
	    {"kube32_store_log_bytes", "gauge", "Bytes of the write-ahead log (0: memory only)."},
	    {"kube32_store_memory_bytes", "gauge", "Bytes the store has allocated."},
	};
	double vals[] = {(double)dropped,      (double)ss.watchers,	(double)ss.objects,
			 (double)ss.rev,       (double)ss.object_bytes, (double)ss.history_events,
			 (double)ss.log_bytes, (double)ss.mem.cur_bytes};
	for (size_t i = 0; !st && i < sizeof(fam) / sizeof(fam[0]); i++) {
		st = k32_prom_family(b, fam[i].name, fam[i].type, fam[i].help, err);
		if (!st)
			st = k32_prom_sample(b, fam[i].name, "", vals[i], err);
	}
	/* etcd's name for the same thing, so an etcd dashboard's WAL panel works unchanged */
	if (!st && ss.log_sync_seconds.le)
		st = k32_prom_family(b, "etcd_disk_wal_fsync_duration_seconds", "histogram",
				     "Time each fsync of the store's write-ahead log took "
				     "(one fsync may cover several writes: group commit).",
				     err);
	if (!st && ss.log_sync_seconds.le)
		st = k32_prom_hist_write(b, "etcd_disk_wal_fsync_duration_seconds", "",
					 &ss.log_sync_seconds, err);
	if (!st)
		st = k32_prom_family(b, "kube32_store_log_writes_total", "counter",
				     "Writes appended to the write-ahead log.", err);
	if (!st)
		st = k32_prom_sample(b, "kube32_store_log_writes_total", "", (double)ss.log_writes,
				     err);
	uint64_t pf_spdy, pf_ws;
	api_portforward_counts(&pf_spdy, &pf_ws);
	if (!st)
		st = k32_prom_family(b, "kube32_apiserver_portforward_tunnels_total", "counter",
				     "kubectl port-forward tunnels served, by protocol.", err);
	if (!st)
		st = k32_prom_sample(b, "kube32_apiserver_portforward_tunnels_total",
				     "protocol=\"spdy\"", (double)pf_spdy, err);
	if (!st)
		st = k32_prom_sample(b, "kube32_apiserver_portforward_tunnels_total",
				     "protocol=\"websocket\"", (double)pf_ws, err);
	return st;
}

void api_metrics_serve(struct api_server *api, struct api_out *out)
{
	struct k32_err err;
	k32_buf_reset(out->body);
	if (api_metrics_render(api, out->body, &err)) {
		struct api_fail f;
		api_fail_clear(&f);
		k32_buf_reset(out->body);
		api_fail_set(&f, 500, "InternalError", "/metrics: %s", err.msg);
		api_out_fail(out, &f);
		return;
	}
	out->code = 200;
	snprintf(out->ctype, sizeof(out->ctype), "%s", K32_PROM_CONTENT_TYPE);
}
