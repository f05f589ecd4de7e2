/*
 * api_health.c - /healthz, /livez and /readyz, served to anonymous clients as
 * kube-apiserver serves them, and the store-write health they report.
 *
 * Checks (each a "[+]name ok" / "[-]name failed: reason" line with ?verbose, or when one
 * fails): ping (the server answers) in all three; store-writable in /healthz and /readyz.
 * /livez leaves the store out: a full disk is a reason to stop sending the server writes,
 * not to restart it. /<endpoint>/<check> runs one check. A failure is HTTP 500 ending
 * "<endpoint> check failed"; success is 200 "ok" (or the verbose list ending
 * "<endpoint> check passed"). Reasons are shown to authenticated clients only ("reason
 * withheld" for anonymous ones, as kube-apiserver words it).
 *
 * store-writable: every write the API makes records its outcome (api_health_note_write): an
 * I/O failure of the store (K32_ERR_IO: a full disk, a failed fsync; K32_ERR_BAD_STATE: a log
 * left unrecoverable) marks the store unwritable, the next successful write clears it. While
 * it is marked, each check first tries one probe write (the ConfigMap
 * kube-system/kube32-readyz-probe), so the check turns green by itself once writes work
 * again; a healthy store costs the check no write and no revision.
 * Context: any handler thread; the state is guarded by api->mu.
 */
#include "api/api_srv.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/k32_log.h"

void api_health_note_write(struct api_server *api, k32_status_t st, const struct k32_err *err)
{
	bool storage = st == K32_ERR_IO || st == K32_ERR_BAD_STATE;
	if (!storage && st != K32_OK)
		return; /* conflicts, limits, missing keys say nothing about the disk */
	if (!storage && !atomic_load(&api->store_unwritable))
		return;
	k32_mutex_lock(&api->mu);
	if (storage) {
		if (!atomic_load(&api->store_unwritable))
			k32_log(K32_LOG_ERROR, "api", "store write failed; /readyz now fails: %s",
				err ? err->msg : k32_status_name(st));
		/* clipped in its middle: the store's advice at its end stays */
		k32_clip_to(api->store_fault, sizeof(api->store_fault),
			    err && err->msg[0] ? err->msg : k32_status_name(st));
		atomic_store(&api->store_unwritable, true);
	} else {
		k32_log(K32_LOG_INFO, "api", "store writes work again; /readyz passes");
		api->store_fault[0] = 0;
		atomic_store(&api->store_unwritable, false);
	}
	k32_mutex_unlock(&api->mu);
}

/* One write through the API while the store is marked unwritable (its outcome is noted by
 * api_put_obj like any other). */
static void api_health_probe(struct api_server *api)
{
	static const char target[] =
	    "/api/v1/namespaces/kube-system/configmaps/kube32-readyz-probe";
	char body[160];
	struct k32_buf out;
	struct k32_err err;
	int code = 0;
	int n =
	    snprintf(body, sizeof(body), "{\"data\":{\"probe\":\"%" PRIu64 "\"}}", k32_now_us());
	k32_buf_init(&out, k32_default_allocator(), 16 * 1024, "readyz probe");
	if (api_do(api, "PATCH", target, "application/merge-patch+json", body, (size_t)n, &code,
		   &out, &err) == K32_OK &&
	    code == 404) {
		n = snprintf(body, sizeof(body),
			     "{\"metadata\":{\"name\":\"kube32-readyz-probe\"},\"data\":{\"probe\":"
			     "\"%" PRIu64 "\"}}",
			     k32_now_us());
		api_do(api, "POST", "/api/v1/namespaces/kube-system/configmaps", "application/json",
		       body, (size_t)n, &code, &out, &err);
	}
	k32_buf_fini(&out);
}

/* Whether the store takes writes; reason (cap bytes) says why not. */
static bool api_check_store(struct api_server *api, char *reason, size_t cap)
{
	if (atomic_load(&api->store_unwritable))
		api_health_probe(api);
	k32_mutex_lock(&api->mu);
	bool ok = !atomic_load(&api->store_unwritable);
	snprintf(reason, cap, "%s", ok ? "" : api->store_fault);
	k32_mutex_unlock(&api->mu);
	return ok;
}

bool api_health_path(const char *path)
{
	static const char *const eps[] = {"/healthz", "/livez", "/readyz"};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(eps[i]);
		if (!strncmp(path, eps[i], n) && (path[n] == 0 || path[n] == '/'))
			return true;
	}
	return false;
}

void api_health(struct api_server *api, struct api_req *rq, struct api_out *out)
{
	static const char *const checks[] = {"ping", "store-writable"};
	const char *ep = rq->path + 1;
	const char *one = strchr(ep, '/'); /* /readyz/<check> */
	size_t eplen = one ? (size_t)(one - ep) : strlen(ep);
	bool with_store = strncmp(ep, "livez", eplen) != 0;
	char verbose[K32_HTTP_QUERY_TYPED_MAX + 1];
	bool show = api_q(rq, "verbose", verbose, sizeof(verbose));
	bool authed = rq->who && (rq->who->admin || rq->who->node[0]);
	char text[512], reason[200];
	size_t n = 0;
	bool all_ok = true, found = false;
	if (one)
		one++;
	for (size_t i = 0; i < 2; i++) {
		if (i == 1 && !with_store)
			break;
		if (one && strcmp(one, checks[i]))
			continue;
		found = true;
		bool ok = i == 0 || api_check_store(api, reason, sizeof(reason));
		all_ok = all_ok && ok;
		int w = ok ? snprintf(text + n, sizeof(text) - n, "[+]%s ok\n", checks[i])
			   : snprintf(text + n, sizeof(text) - n, "[-]%s failed: %s\n", checks[i],
				      authed ? reason : "reason withheld");
		if (w > 0 && (size_t)w < sizeof(text) - n)
			n += (size_t)w;
	}
	if (!found) {
		struct api_fail f;
		api_fail_clear(&f);
		api_fail_set(&f, 404, "NotFound",
			     "no health check \"%.60s\" in /%.*s (checks: ping%s)", one ? one : "",
			     (int)eplen, ep, with_store ? ", store-writable" : "");
		api_out_fail(out, &f);
		return;
	}
	if (all_ok && !show) {
		api_out_text(out, 200, "text/plain; charset=utf-8", "ok", 2);
		return;
	}
	snprintf(text + n, sizeof(text) - n, "%.*s check %s\n", (int)eplen, ep,
		 all_ok ? "passed" : "failed");
	api_out_text(out, all_ok ? 200 : 500, "text/plain; charset=utf-8", text, strlen(text));
}
