/*
 * store.c - the store's front end: checks and formats keys, then calls the backend through
 * struct store_backend_ops. It owns nothing but the (ops, backend) pair; every lock and every
 * byte of object data belongs to the backend.
 *
 * Context: any thread (the backend does the locking). Keys are built on the caller's stack
 * (K32_STORE_KEY_MAX + 1 bytes), never allocated.
 */
#include "store/store.h"

#include <string.h>

#include "store/store_int.h"

struct store {
	const struct store_backend_ops *ops; /* the backend's methods */
	void *be;			     /* the backend */
	struct k32_allocator alloc;	     /* where this struct came from */
};

/* ---- keys ----------------------------------------------------------------------------- */

int store_key_cmp(const char *a, size_t a_len, const char *b, size_t b_len)
{
	size_t n = a_len < b_len ? a_len : b_len;
	int c = n ? memcmp(a, b, n) : 0;

	if (c)
		return c;
	if (a_len == b_len)
		return 0;
	return a_len < b_len ? -1 : 1;
}

/* Appends "/" + part to buf at *pos; checks part for '/', control bytes and the length. */
static k32_status_t key_part(char *buf, size_t *pos, const char *part, const char *what, bool need,
			     struct k32_err *err)
{
	size_t len;

	if (!part)
		part = "";
	len = strlen(part);
	if (need && len == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
				   "store key: %s is empty; every object needs one", what);
	for (size_t i = 0; i < len; i++) {
		if (part[i] == '/' || (unsigned char)part[i] < 0x20)
			return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
					   "store key: %s \"%s\" has a '/' or control byte at "
					   "%zu; names may not contain them",
					   what, K32_CLIP(part), i);
	}
	if (*pos + 1 + len > K32_STORE_KEY_MAX)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
				   "store key: %s \"%s\" makes the key longer than "
				   "K32_STORE_KEY_MAX=%d bytes; shorten the name",
				   what, K32_CLIP(part), K32_STORE_KEY_MAX);
	buf[(*pos)++] = '/';
	memcpy(buf + *pos, part, len);
	*pos += len;
	return K32_OK;
}

k32_status_t store_key_format(const struct store_key *key, bool prefix, char *buf, size_t *out_len,
			      struct k32_err *err)
{
	size_t pos = 0;
	k32_status_t st;
	const char *ns;

	if (!key)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store", "store key: NULL key");
	ns = key->ns ? key->ns : "";
	st = key_part(buf, &pos, key->group, "group", false, err);
	if (st == K32_OK)
		st = key_part(buf, &pos, key->resource, "resource", true, err);
	if (st != K32_OK)
		return st;
	if (prefix) {
		if (ns[0]) {
			st = key_part(buf, &pos, ns, "namespace", false, err);
			if (st != K32_OK)
				return st;
		}
		if (pos + 1 > K32_STORE_KEY_MAX)
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, "store",
			    "store key: prefix longer than K32_STORE_KEY_MAX=%d bytes",
			    K32_STORE_KEY_MAX);
		buf[pos++] = '/';
	} else {
		st = key_part(buf, &pos, ns, "namespace", false, err);
		if (st == K32_OK)
			st = key_part(buf, &pos, key->name, "name", true, err);
		if (st != K32_OK)
			return st;
	}
	buf[pos] = '\0';
	*out_len = pos;
	return K32_OK;
}

/* ---- open and close ------------------------------------------------------------------- */

k32_status_t store_open_backend(const struct store_backend_ops *ops, void *be,
				const struct k32_allocator *alloc, struct store **out,
				struct k32_err *err)
{
	struct store *st;

	if (!ops || !be || !out)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
				   "store_open_backend: ops, backend and out are required");
	if (!alloc)
		alloc = k32_default_allocator();
	st = k32_alloc(alloc, sizeof(*st));
	if (!st)
		return k32_err_set(err, K32_ERR_NO_MEMORY, "store",
				   "store: no memory for the store handle (%zu bytes)",
				   sizeof(*st));
	st->ops = ops;
	st->be = be;
	st->alloc = *alloc;
	*out = st;
	return K32_OK;
}

k32_status_t store_open(const struct store_config *cfg, struct store **out, struct k32_err *err)
{
	struct store_mem *m;
	k32_status_t st;

	if (!cfg || !out)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
				   "store_open: cfg and out are required");
	*out = NULL;
	st = store_mem_open(cfg, &m, err);
	if (st != K32_OK)
		return st;
	st = store_open_backend(&store_mem_ops, m, cfg->alloc, out, err);
	if (st != K32_OK)
		store_mem_ops.close(m);
	return st;
}

void store_close(struct store *st)
{
	struct k32_allocator alloc;

	if (!st)
		return;
	st->ops->close(st->be);
	alloc = st->alloc;
	k32_free(&alloc, st, sizeof(*st));
}

/* ---- reads ---------------------------------------------------------------------------- */

uint64_t store_rev(struct store *st)
{
	return st->ops->rev(st->be);
}

k32_status_t store_get(struct store *st, const struct store_key *key, struct store_obj **out_obj,
		       struct k32_err *err)
{
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	*out_obj = NULL;
	s = store_key_format(key, false, buf, &len, err);
	if (s != K32_OK)
		return s;
	return st->ops->get(st->be, buf, out_obj, err);
}

void store_obj_unref(struct store *st, struct store_obj *obj)
{
	if (obj)
		st->ops->obj_unref(st->be, obj);
}

k32_status_t store_list(struct store *st, const struct store_key *prefix,
			const struct store_list_opts *opts, struct store_list *out,
			struct k32_err *err)
{
	static const struct store_list_opts none;
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	memset(out, 0, sizeof(*out));
	s = store_key_format(prefix, true, buf, &len, err);
	if (s != K32_OK)
		return s;
	return st->ops->list(st->be, buf, opts ? opts : &none, out, err);
}

void store_list_fini(struct store *st, struct store_list *list)
{
	if (list)
		st->ops->list_fini(st->be, list);
}

/* ---- writes --------------------------------------------------------------------------- */

static k32_status_t check_value(const struct store_value *val, struct k32_err *err)
{
	if (!val || (!val->data && val->len))
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store", "store write: no value");
	if (val->rv_off != STORE_NO_STAMP && val->rv_off > val->len)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "store",
				   "store write: rv_off %zu is past the value's %zu bytes",
				   val->rv_off, val->len);
	if (val->len + (val->rv_off == STORE_NO_STAMP ? 0 : 20) > K32_STORE_VALUE_MAX)
		return k32_err_set(err, K32_ERR_OUT_OF_RANGE, "store",
				   "store write: value of %zu bytes (+20 for a stamped revision) "
				   "exceeds K32_STORE_VALUE_MAX=%d; shrink the object",
				   val->len, K32_STORE_VALUE_MAX);
	return K32_OK;
}

k32_status_t store_create(struct store *st, const struct store_key *key,
			  const struct store_value *val, struct store_obj **out_obj,
			  struct k32_err *err)
{
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	if (out_obj)
		*out_obj = NULL;
	s = store_key_format(key, false, buf, &len, err);
	if (s == K32_OK)
		s = check_value(val, err);
	if (s != K32_OK)
		return s;
	return st->ops->create(st->be, buf, val, out_obj, err);
}

k32_status_t store_update(struct store *st, const struct store_key *key,
			  const struct store_value *val, uint64_t expect_rev,
			  struct store_obj **out_obj, struct k32_err *err)
{
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	if (out_obj)
		*out_obj = NULL;
	s = store_key_format(key, false, buf, &len, err);
	if (s == K32_OK)
		s = check_value(val, err);
	if (s != K32_OK)
		return s;
	return st->ops->update(st->be, buf, val, expect_rev, out_obj, err);
}

k32_status_t store_delete(struct store *st, const struct store_key *key, uint64_t expect_rev,
			  struct store_obj **out_prev, uint64_t *out_rev, struct k32_err *err)
{
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	if (out_prev)
		*out_prev = NULL;
	if (out_rev)
		*out_rev = 0;
	s = store_key_format(key, false, buf, &len, err);
	if (s != K32_OK)
		return s;
	return st->ops->del(st->be, buf, expect_rev, out_prev, out_rev, err);
}

/* ---- watch ---------------------------------------------------------------------------- */

k32_status_t store_watch_open(struct store *st, const struct store_key *prefix, uint64_t after_rev,
			      store_notify_fn notify, void *notify_ctx, struct store_watch **out_w,
			      struct k32_err *err)
{
	char buf[K32_STORE_KEY_MAX + 1];
	size_t len;
	k32_status_t s;

	*out_w = NULL;
	s = store_key_format(prefix, true, buf, &len, err);
	if (s != K32_OK)
		return s;
	return st->ops->watch_open(st->be, buf, after_rev, notify, notify_ctx, out_w, err);
}

k32_status_t store_watch_next(struct store_watch *w, struct store_event *out, size_t cap,
			      size_t *out_count, int64_t deadline_us, struct k32_err *err)
{
	*out_count = 0;
	if (!w || !out || cap == 0)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "store",
		    "store_watch_next: watcher and a non-empty event array are required");
	return w->ops->watch_next(w, out, cap, out_count, deadline_us, err);
}

uint64_t store_watch_progress(struct store_watch *w)
{
	return w->ops->watch_progress(w);
}

void store_watch_cancel(struct store_watch *w)
{
	if (w)
		w->ops->watch_cancel(w);
}

void store_watch_close(struct store_watch *w)
{
	if (w)
		w->ops->watch_close(w);
}

void store_events_release(struct store *st, struct store_event *ev, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		store_obj_unref(st, ev[i].obj);
		store_obj_unref(st, ev[i].prev);
		ev[i].obj = NULL;
		ev[i].prev = NULL;
	}
}

void store_get_stats(struct store *st, struct store_stats *out)
{
	memset(out, 0, sizeof(*out));
	st->ops->stats(st->be, out);
}
