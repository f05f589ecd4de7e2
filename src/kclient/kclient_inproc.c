/*
 * kclient_inproc.c - the client interface over the API server in this process: requests are
 * api_do_as (authentication by token, authorization, validation, defaulting and admission
 * as over HTTP), watches are api_watch_open/next, polled with a deadline of
 * K32_KCLIENT_WATCH_TICK_MS so the caller gets its quiet ticks.
 *
 * Kept in its own library (k32_kclient_api) so that what links only the interface and the
 * HTTP implementation (a remote controller process, a board) does not link the API server.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "kclient/kclient.h"
#include "platform/k32_platform.h"

#define KC_MOD "kclient"

struct kc_inproc {
	struct kclient base;
	struct api_server *api;
	char token[128]; /* "" : the admin */
};

static k32_status_t kc_in_request(struct kclient *base, const char *method, const char *target,
				  const char *ctype, const void *body, size_t body_len,
				  int *out_code, struct k32_buf *out, struct k32_err *err)
{
	struct kc_inproc *k = (struct kc_inproc *)base;
	return api_do_as(k->api, k->token[0] ? k->token : NULL, method, target, ctype, body,
			 body_len, out_code, out, err);
}

static k32_status_t kc_in_watch(struct kclient *base, const char *target, kclient_line_fn fn,
				void *ctx, struct k32_err *err)
{
	struct kc_inproc *k = (struct kc_inproc *)base;
	struct api_watch *w = NULL;
	k32_status_t st = api_watch_open(k->api, target, &w, err);
	if (st)
		return st;
	struct k32_buf line;
	k32_buf_init(&line, k32_default_allocator(), K32_HTTP_STREAM_BUF_BYTES, "watch event");
	for (;;) {
		k32_buf_reset(&line);
		st = api_watch_next(
		    w, &line, k32_deadline_after((int64_t)K32_KCLIENT_WATCH_TICK_MS * 1000), err);
		if (st == K32_ERR_TIMED_OUT || st == K32_ERR_SHOULD_WAIT) {
			st = fn(ctx, NULL, 0);
		} else if (!st) {
			size_t n = line.len;
			while (n && line.data[n - 1] == '\n')
				n--;
			st = fn(ctx, k32_buf_cstr(&line), n);
		}
		if (st)
			break;
	}
	k32_buf_fini(&line);
	api_watch_close(w);
	return st;
}

static void kc_in_free(struct kclient *base)
{
	k32_free(k32_default_allocator(), base, sizeof(struct kc_inproc));
}

static const struct kclient_ops kc_in_ops = {
    .request = kc_in_request, .watch = kc_in_watch, .free = kc_in_free, .name = "in-process"};

k32_status_t kclient_inproc_new(struct api_server *api, const char *token, struct kclient **out,
				struct k32_err *err)
{
	*out = NULL;
	if (!api)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KC_MOD,
				   "kclient_inproc_new: an API server is required");
	if (token && strlen(token) >= sizeof(((struct kc_inproc *)0)->token))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KC_MOD,
				   "kclient_inproc_new: token of %zu bytes, at most %zu",
				   strlen(token), sizeof(((struct kc_inproc *)0)->token) - 1);
	struct kc_inproc *k = k32_calloc(k32_default_allocator(), sizeof(*k));
	if (!k)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KC_MOD,
				   "out of memory for an in-process client");
	k->base.ops = &kc_in_ops;
	k->api = api;
	snprintf(k->token, sizeof(k->token), "%s", token ? token : "");
	*out = &k->base;
	return K32_OK;
}
