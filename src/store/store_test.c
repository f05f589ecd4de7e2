/*
 * store_test.c - unit tests of the store: CRUD and preconditions, keys, list pagination at
 * one revision, watch (old and new revisions, compaction, lagging watchers, wake-ups),
 * persistence (restart, rotation, torn and garbled tails, corrupt snapshot), and fault
 * injection (every allocation of a write, list and watch; failing appends and fsyncs).
 *
 * Files go to a fresh directory from mkdtemp() under /tmp; each test removes its files.
 * The crash test with a killed child process is in store_crash_test.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <stdatomic.h>

#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"
#include "store/store_int.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers -------------------------------------------------------------------------- */

struct fixture {
	char dir[64];	      /* data directory (empty string: memory only) */
	struct k32_heap heap; /* the store's allocator, checked for leaks */
	struct k32_allocator alloc;
	struct store_config cfg;
	struct store *st;
};

static void fx_dir(struct fixture *fx)
{
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/k32-store-test-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->cfg.data_dir = fx->dir;
}

static void fx_init(struct fixture *fx, bool persistent)
{
	memset(fx, 0, sizeof(*fx));
	k32_heap_init(&fx->heap, 0);
	fx->alloc = k32_heap_allocator(&fx->heap);
	fx->cfg.alloc = &fx->alloc;
	if (persistent)
		fx_dir(fx);
}

static void fx_open(struct fixture *fx)
{
	struct k32_err err;
	k32_status_t s = store_open(&fx->cfg, &fx->st, &err);

	if (s != K32_OK)
		fail_msg("store_open: %s", err.msg);
}

static void fx_close(struct fixture *fx)
{
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(fx->heap.stats.cur_bytes, 0);
}

static void path_of(const struct fixture *fx, const char *file, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", fx->dir, file);
}

/* Removes the record of the last clean close, as if the store had crashed instead. */
static void fx_forget_close(struct fixture *fx)
{
	char p[128];

	path_of(fx, "store.closed", p, sizeof(p));
	assert_int_equal(k32_plat()->file_remove(p, NULL), K32_OK);
}

static void fx_fini(struct fixture *fx)
{
	char p[128];
	static const char *files[] = {"store.log",     "store.snap",   "store.snap.tmp",
				      "store.log.tmp", "store.closed", "store.closed.tmp",
				      "closed.saved"};

	if (fx->st)
		fx_close(fx);
	if (!fx->dir[0])
		return;
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		path_of(fx, files[i], p, sizeof(p));
		k32_plat()->file_remove(p, NULL);
	}
	rmdir(fx->dir);
}

static struct store_key key_of(const char *resource, const char *ns, const char *name)
{
	struct store_key k = {.group = "", .resource = resource, .ns = ns, .name = name};
	return k;
}

static struct store_value val_of(const char *json)
{
	struct store_value v = {.data = json, .len = strlen(json), .rv_off = STORE_NO_STAMP};
	return v;
}

static uint64_t put(struct store *st, const char *ns, const char *name, const char *json)
{
	struct store_key k = key_of("pods", ns, name);
	struct store_value v = val_of(json);
	struct store_obj *obj;
	struct k32_err err;
	uint64_t rev;

	if (store_create(st, &k, &v, &obj, &err) != K32_OK)
		fail_msg("create %s/%s: %s", ns, name, err.msg);
	rev = obj->mod_rev;
	store_obj_unref(st, obj);
	return rev;
}

static k32_status_t get_data(struct store *st, const char *ns, const char *name, char *buf,
			     size_t cap, uint64_t *out_rev)
{
	struct store_key k = key_of("pods", ns, name);
	struct store_obj *obj;
	k32_status_t s = store_get(st, &k, &obj, NULL);

	if (s != K32_OK)
		return s;
	snprintf(buf, cap, "%s", store_obj_data(obj));
	if (out_rev)
		*out_rev = obj->mod_rev;
	store_obj_unref(st, obj);
	return K32_OK;
}

/* Whether a log line at or above WARN containing needle was logged after seq. */
static bool logged_since(uint64_t seq, const char *needle)
{
	struct k32_log_line lines[K32_LOG_RING_LINES];
	size_t n = k32_log_read(seq, lines, ARRAY_LEN(lines), NULL);

	for (size_t i = 0; i < n; i++)
		if (lines[i].level >= K32_LOG_WARN && strstr(lines[i].text, needle))
			return true;
	return false;
}

static uint64_t log_seq_now(void)
{
	struct k32_log_line lines[K32_LOG_RING_LINES];
	size_t n = k32_log_read(0, lines, ARRAY_LEN(lines), NULL);

	return n ? lines[n - 1].seq : 0;
}

/* ---- CRUD ----------------------------------------------------------------------------- */

static void test_crud_and_preconditions(void **state)
{
	struct fixture fx;
	struct store_key k = key_of("pods", "default", "web");
	struct store_value v1 = val_of("{\"v\":1}"), v2 = val_of("{\"v\":2}");
	struct store_obj *obj, *prev;
	struct k32_err err;
	char buf[64];
	uint64_t rev;

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	assert_int_equal(store_rev(fx.st), 0);
	assert_int_equal(store_get(fx.st, &k, &obj, &err), K32_ERR_NOT_FOUND);
	assert_null(obj);
	assert_non_null(strstr(err.msg, "//pods/default/web"));

	assert_int_equal(store_create(fx.st, &k, &v1, &obj, &err), K32_OK);
	assert_int_equal(obj->mod_rev, 1);
	assert_int_equal(obj->create_rev, 1);
	assert_string_equal(store_obj_key(obj), "//pods/default/web");
	assert_string_equal(store_obj_data(obj), "{\"v\":1}");
	store_obj_unref(fx.st, obj);
	assert_int_equal(store_create(fx.st, &k, &v2, NULL, &err), K32_ERR_ALREADY_EXISTS);
	assert_int_equal(store_rev(fx.st), 1);

	/* stale precondition -> CONFLICT, nothing changes */
	assert_int_equal(store_update(fx.st, &k, &v2, 7, NULL, &err), K32_ERR_CONFLICT);
	assert_non_null(strstr(err.msg, "expected revision 7, current is 1"));
	assert_int_equal(get_data(fx.st, "default", "web", buf, sizeof(buf), &rev), K32_OK);
	assert_string_equal(buf, "{\"v\":1}");
	assert_int_equal(store_update(fx.st, &k, &v2, 1, &obj, &err), K32_OK);
	assert_int_equal(obj->mod_rev, 2);
	assert_int_equal(obj->create_rev, 1);
	store_obj_unref(fx.st, obj);
	/* unconditional update */
	assert_int_equal(store_update(fx.st, &k, &v1, 0, NULL, &err), K32_OK);
	assert_int_equal(store_rev(fx.st), 3);

	/* delete with a stale precondition, then for real */
	assert_int_equal(store_delete(fx.st, &k, 2, &prev, &rev, &err), K32_ERR_CONFLICT);
	assert_null(prev);
	assert_int_equal(store_delete(fx.st, &k, 3, &prev, &rev, &err), K32_OK);
	assert_int_equal(rev, 4);
	assert_string_equal(store_obj_data(prev), "{\"v\":1}");
	assert_int_equal(prev->mod_rev, 3);
	store_obj_unref(fx.st, prev);
	assert_int_equal(store_get(fx.st, &k, &obj, &err), K32_ERR_NOT_FOUND);
	assert_int_equal(store_delete(fx.st, &k, 0, NULL, NULL, &err), K32_ERR_NOT_FOUND);
	assert_int_equal(store_update(fx.st, &k, &v1, 0, NULL, &err), K32_ERR_NOT_FOUND);
	/* re-create gets a new create_rev */
	assert_int_equal(store_create(fx.st, &k, &v1, &obj, &err), K32_OK);
	assert_int_equal(obj->create_rev, 5);
	store_obj_unref(fx.st, obj);
	fx_fini(&fx);
}

static void test_revision_stamp(void **state)
{
	static const char tmpl[] = "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"\"}}";
	struct fixture fx;
	struct store_key k = key_of("pods", "ns", "a");
	struct store_value v = {.data = tmpl, .len = strlen(tmpl)};
	struct store_obj *obj;
	char want[128];

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	v.rv_off = strstr(tmpl, "\"\"}") - tmpl + 1;
	put(fx.st, "ns", "other", "{}");
	assert_int_equal(store_create(fx.st, &k, &v, &obj, NULL), K32_OK);
	snprintf(want, sizeof(want), "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}");
	assert_string_equal(store_obj_data(obj), want);
	assert_int_equal(obj->len, strlen(want));
	store_obj_unref(fx.st, obj);
	/* offsets past the end are refused */
	v.rv_off = v.len + 1;
	assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, NULL), K32_ERR_INVALID_ARGS);
	fx_fini(&fx);
}

static void test_bad_keys(void **state)
{
	static const struct {
		const char *group, *resource, *ns, *name;
		k32_status_t want;
	} cases[] = {
	    {"", "pods", "default", "ok", K32_OK},
	    {"apps", "deployments", "", "cluster-ok", K32_OK},
	    {"", "", "default", "x", K32_ERR_INVALID_ARGS},	  /* no resource */
	    {"", "pods", "default", "", K32_ERR_INVALID_ARGS},	  /* no name */
	    {"", "pods", "a/b", "x", K32_ERR_INVALID_ARGS},	  /* '/' in namespace */
	    {"", "pods", "default", "x/y", K32_ERR_INVALID_ARGS}, /* '/' in name */
	    {"a/b", "pods", "default", "x", K32_ERR_INVALID_ARGS},
	    {"", "pods", "default", "tab\there", K32_ERR_INVALID_ARGS},
	};
	struct fixture fx;
	char long_name[K32_STORE_KEY_MAX + 8];
	struct store_value v = val_of("{}");
	struct store_key k;
	struct k32_err err;

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		k.group = cases[i].group;
		k.resource = cases[i].resource;
		k.ns = cases[i].ns;
		k.name = cases[i].name;
		assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), cases[i].want);
	}
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	k = key_of("pods", "default", long_name);
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_ERR_INVALID_ARGS);
	assert_non_null(strstr(err.msg, "K32_STORE_KEY_MAX"));
	fx_fini(&fx);
}

static void test_limits(void **state)
{
	struct fixture fx;
	struct store_key k;
	struct store_value v = val_of("{\"x\":1}");
	struct k32_err err;
	char name[16];

	(void)state;
	fx_init(&fx, false);
	fx.cfg.max_objects = 3;
	fx_open(&fx);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "ns", name, "{}");
	}
	k = key_of("pods", "ns", "p9");
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_ERR_NO_RESOURCES);
	assert_non_null(strstr(err.msg, "K32_STORE_MAX_OBJECTS"));
	assert_int_equal(store_rev(fx.st), 3);
	fx_fini(&fx);

	fx_init(&fx, false);
	fx.cfg.max_bytes = 200;
	fx_open(&fx);
	put(fx.st, "ns", "small", "{}");
	{
		char big[256];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		v = val_of(big);
		k = key_of("pods", "ns", "big");
		assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_ERR_NO_RESOURCES);
		assert_non_null(strstr(err.msg, "K32_STORE_MAX_BYTES"));
	}
	v.len = K32_STORE_VALUE_MAX + 1;
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_ERR_OUT_OF_RANGE);
	assert_non_null(strstr(err.msg, "K32_STORE_VALUE_MAX"));
	fx_fini(&fx);
}

/* Fills the store with ordinary writes until refused; essential ones (the API's Leases,
 * node status and deletes) still go through, up to the hard limits. */
static void test_reserve(void **state)
{
	struct fixture fx;
	struct store_key k;
	struct store_value v;
	struct store_stats ss;
	struct k32_err err;
	char name[16], body[160];
	int n = 0;

	(void)state;
	fx_init(&fx, true);
	fx.cfg.max_bytes = 16 * 1024;
	fx.cfg.max_objects = 1000;
	fx_open(&fx);
	store_get_stats(fx.st, &ss);
	assert_int_equal(ss.max_bytes, 16 * 1024);
	assert_int_equal(ss.reserve_bytes, 16 * 1024 / 100 * K32_STORE_RESERVE_PCT);
	assert_int_equal(ss.reserve_objects, 1000 * K32_STORE_RESERVE_PCT / 100);
	assert_true(ss.reserve_bytes > 200); /* room for the essential writes below */
	put(fx.st, "ns", "lease", "{\"renew\":\"t0\"}");
	for (;; n++) {
		snprintf(name, sizeof(name), "cm%d", n);
		k = key_of("pods", "ns", name);
		v = val_of("{\"data\":\"0123456789\"}");
		if (store_create(fx.st, &k, &v, NULL, &err) != K32_OK)
			break;
	}
	assert_true(n > 50);
	assert_non_null(strstr(err.msg, "K32_STORE_RESERVE_PCT"));
	assert_non_null(strstr(err.msg, "K32_STORE_MAX_BYTES"));
	assert_non_null(strstr(err.msg, "raise the limit")); /* not cut off */
	store_get_stats(fx.st, &ss);
	assert_true(ss.object_bytes <= ss.max_bytes - ss.reserve_bytes);
	/* an ordinary update that grows an object is refused; one that shrinks is not */
	k = key_of("pods", "ns", "cm0");
	v = val_of("{\"data\":\"0123456789abcdefghijklmnopqrstuvwxyz0123456789\"}");
	assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, &err), K32_ERR_NO_RESOURCES);
	v = val_of("{}");
	assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, &err), K32_OK);
	/* essential: a growing update, a create, then a delete */
	k = key_of("pods", "ns", "lease");
	memset(body, 'r', sizeof(body) - 1);
	body[sizeof(body) - 1] = '\0';
	v = val_of(body);
	v.essential = true;
	assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, &err), K32_OK);
	k = key_of("pods", "ns", "lease2");
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_OK);
	k = key_of("pods", "ns", "cm1");
	assert_int_equal(store_delete(fx.st, &k, 0, NULL, NULL, &err), K32_OK);
	/* the hard limit holds for essential writes too */
	for (int i = 0;; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		k = key_of("pods", "ns", name);
		if (store_create(fx.st, &k, &v, NULL, &err) != K32_OK)
			break;
		assert_true(i < 200);
	}
	assert_null(strstr(err.msg, "K32_STORE_RESERVE_PCT"));
	store_get_stats(fx.st, &ss);
	assert_true(ss.object_bytes <= ss.max_bytes);
	assert_true(ss.object_bytes > ss.max_bytes - ss.reserve_bytes);
	fx_fini(&fx);

	/* the object reserve: 100 objects, 5 kept */
	fx_init(&fx, false);
	fx.cfg.max_objects = 100;
	fx_open(&fx);
	for (n = 0;; n++) {
		snprintf(name, sizeof(name), "o%d", n);
		k = key_of("pods", "ns", name);
		v = val_of("{}");
		if (store_create(fx.st, &k, &v, NULL, &err) != K32_OK)
			break;
	}
	assert_int_equal(n, 100 - 100 * K32_STORE_RESERVE_PCT / 100);
	assert_non_null(strstr(err.msg, "K32_STORE_MAX_OBJECTS"));
	v.essential = true;
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_OK);
	fx_fini(&fx);
}

/* ---- list ----------------------------------------------------------------------------- */

/* Lists every page of prefix with the given limit into names (joined by ','). */
static k32_status_t list_all(struct store *st, const struct store_key *prefix, uint32_t limit,
			     char *names, size_t cap, uint64_t *out_rev, int *out_pages,
			     void (*between)(struct store *st, int page))
{
	char token[STORE_CONTINUE_LEN] = "";
	struct store_list_opts opts = {.limit = limit};
	struct store_list list;
	struct k32_err err;
	k32_status_t s;
	int pages = 0;

	names[0] = '\0';
	for (;;) {
		opts.continue_token = token;
		s = store_list(st, prefix, &opts, &list, &err);
		if (s != K32_OK) {
			store_list_fini(st, &list);
			return s;
		}
		if (pages == 0)
			*out_rev = list.rev;
		else
			assert_int_equal(list.rev, *out_rev);
		for (uint32_t i = 0; i < list.count; i++) {
			const char *key = store_obj_key(list.items[i]);

			strncat(names, strrchr(key, '/') + 1, cap - strlen(names) - 2);
			strcat(names, ",");
		}
		pages++;
		snprintf(token, sizeof(token), "%s", list.continue_token);
		store_list_fini(st, &list);
		if (!token[0])
			break;
		if (between)
			between(st, pages);
	}
	*out_pages = pages;
	return K32_OK;
}

static void churn(struct store *st, int page)
{
	struct store_key k;
	struct store_value v = val_of("{\"changed\":true}");

	/* after the first page: change, delete and add keys on later pages */
	if (page != 1)
		return;
	k = key_of("pods", "a", "p07");
	assert_int_equal(store_update(st, &k, &v, 0, NULL, NULL), K32_OK);
	k = key_of("pods", "a", "p08");
	assert_int_equal(store_delete(st, &k, 0, NULL, NULL, NULL), K32_OK);
	put(st, "a", "p085", "{}");
	put(st, "a", "p99", "{}");
}

static bool only_even(void *ctx, const struct store_obj *obj)
{
	const char *key = store_obj_key(obj);
	int n = atoi(strrchr(key, '/') + 2);

	(*(int *)ctx)++;
	return n % 2 == 0;
}

static void test_list_pagination_and_snapshot(void **state)
{
	struct fixture fx;
	struct store_key all = key_of("pods", NULL, NULL), ns_a = key_of("pods", "a", NULL);
	struct store_key other = {.group = "apps", .resource = "pods"};
	char names[1024], want[1024] = "", name[16];
	uint64_t rev, rev_before;
	int pages, calls = 0;
	struct store_list_opts opts = {.filter = only_even};
	struct store_list list;

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	for (int i = 12; i >= 0; i--) { /* inserted out of order */
		snprintf(name, sizeof(name), "p%02d", i);
		put(fx.st, "a", name, "{}");
		put(fx.st, "b", name, "{}");
	}
	for (int i = 0; i <= 12; i++) {
		snprintf(name, sizeof(name), "p%02d,", i);
		strcat(want, name);
	}
	assert_int_equal(store_create(fx.st, &other,
				      &(struct store_value){"{}", 2, STORE_NO_STAMP, false}, NULL,
				      NULL),
			 K32_ERR_INVALID_ARGS); /* no name */
	other.name = "x";
	assert_int_equal(store_create(fx.st, &other,
				      &(struct store_value){"{}", 2, STORE_NO_STAMP, false}, NULL,
				      NULL),
			 K32_OK);

	/* one namespace, every page size: same items, one revision */
	for (uint32_t limit = 0; limit <= 14; limit++) {
		assert_int_equal(
		    list_all(fx.st, &ns_a, limit, names, sizeof(names), &rev, &pages, NULL),
		    K32_OK);
		assert_string_equal(names, want);
		assert_int_equal(rev, 27);
		if (limit)
			assert_int_equal(pages, (13 + limit - 1) / limit); /* no empty last page */
	}
	/* all namespaces: 26 keys of //pods, none of /apps/pods */
	assert_int_equal(list_all(fx.st, &all, 5, names, sizeof(names), &rev, &pages, NULL),
			 K32_OK);
	assert_int_equal(strlen(names), 26 * 4);

	/* writes between pages do not leak into later pages: they see the first page's rev */
	rev_before = store_rev(fx.st);
	assert_int_equal(list_all(fx.st, &ns_a, 4, names, sizeof(names), &rev, &pages, churn),
			 K32_OK);
	assert_string_equal(names, want);
	assert_int_equal(rev, rev_before);
	/* and a fresh list sees them */
	assert_int_equal(list_all(fx.st, &ns_a, 0, names, sizeof(names), &rev, &pages, NULL),
			 K32_OK);
	assert_non_null(strstr(names, "p085,"));
	assert_null(strstr(names, "p08,"));
	assert_int_equal(rev, rev_before + 4);

	/* read at an older revision explicitly */
	opts.filter = NULL;
	opts.rev = rev_before;
	assert_int_equal(store_list(fx.st, &ns_a, &opts, &list, NULL), K32_OK);
	assert_int_equal(list.count, 13);
	assert_string_equal(store_obj_data(list.items[7]), "{}");
	store_list_fini(fx.st, &list);
	opts.rev = store_rev(fx.st) + 1;
	assert_int_equal(store_list(fx.st, &ns_a, &opts, &list, NULL), K32_ERR_OUT_OF_RANGE);
	store_list_fini(fx.st, &list);

	/* the filter runs in the store and the limit counts what passes */
	opts.rev = 0;
	opts.filter = only_even;
	opts.filter_ctx = &calls;
	opts.limit = 3;
	assert_int_equal(store_list(fx.st, &ns_a, &opts, &list, NULL), K32_OK);
	assert_int_equal(list.count, 3);
	assert_string_equal(store_obj_key(list.items[2]), "//pods/a/p04");
	assert_true(list.continue_token[0]);
	assert_true(calls >= 5);
	store_list_fini(fx.st, &list);

	/* bad tokens */
	opts.filter = NULL;
	static const char *bad[] = {"x", "5", ":", "0://pods/a/p01", "3://nodes//n1", "3:"};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		opts.continue_token = bad[i];
		assert_int_equal(store_list(fx.st, &ns_a, &opts, &list, NULL),
				 K32_ERR_INVALID_ARGS);
		store_list_fini(fx.st, &list);
	}
	fx_fini(&fx);
}

static void test_list_compacted_token(void **state)
{
	struct fixture fx;
	struct store_key ns = key_of("pods", "n", NULL);
	struct store_list_opts opts = {.limit = 2};
	struct store_list list;
	struct k32_err err;
	char name[16], token[STORE_CONTINUE_LEN];

	(void)state;
	fx_init(&fx, false);
	fx.cfg.history_events = 16;
	fx_open(&fx);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "n", name, "{}");
	}
	assert_int_equal(store_list(fx.st, &ns, &opts, &list, &err), K32_OK);
	snprintf(token, sizeof(token), "%s", list.continue_token);
	store_list_fini(fx.st, &list);
	for (int i = 0; i < 20; i++)
		put(fx.st, "other", name, "{}") /* distinct keys */, name[1]++;
	opts.continue_token = token;
	assert_int_equal(store_list(fx.st, &ns, &opts, &list, &err), K32_ERR_COMPACTED);
	assert_non_null(strstr(err.msg, "compacted"));
	store_list_fini(fx.st, &list);
	fx_fini(&fx);
}

/* ---- watch ---------------------------------------------------------------------------- */

static void notify_count(void *ctx)
{
	(*(int *)ctx)++;
}

static void test_watch_events(void **state)
{
	struct fixture fx;
	struct store_key ns = key_of("pods", "w", NULL), k = key_of("pods", "w", "a");
	struct store_value v = val_of("{\"v\":2}");
	struct store_watch *w_old, *w_new;
	struct store_event ev[8];
	size_t n;
	int notes = 0;
	struct k32_err err;
	uint64_t first;

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	first = put(fx.st, "w", "a", "{\"v\":1}");			      /* rev 1 */
	put(fx.st, "other", "z", "{}");					      /* rev 2 */
	assert_int_equal(store_update(fx.st, &k, &v, 1, NULL, NULL), K32_OK); /* rev 3 */
	put(fx.st, "w", "b", "{}");					      /* rev 4 */

	/* from "now": nothing pending; progress is the current revision (a bookmark) */
	assert_int_equal(store_watch_open(fx.st, &ns, 0, notify_count, &notes, &w_new, &err),
			 K32_OK);
	assert_int_equal(store_watch_next(w_new, ev, 8, &n, K32_NO_WAIT, &err),
			 K32_ERR_SHOULD_WAIT);
	assert_int_equal(store_watch_progress(w_new), 4);

	/* from revision 1 (exclusive): MODIFIED(3), ADDED(4); not the other namespace */
	assert_int_equal(store_watch_open(fx.st, &ns, first, NULL, NULL, &w_old, &err), K32_OK);
	assert_int_equal(store_watch_progress(w_old), 1);
	assert_int_equal(store_watch_next(w_old, ev, 1, &n, K32_NO_WAIT, &err), K32_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].type, STORE_EVENT_MODIFIED);
	assert_int_equal(ev[0].rev, 3);
	assert_string_equal(store_obj_data(ev[0].obj), "{\"v\":2}");
	assert_string_equal(store_obj_data(ev[0].prev), "{\"v\":1}");
	store_events_release(fx.st, ev, n);
	assert_int_equal(store_watch_progress(w_old), 3);
	assert_int_equal(store_watch_next(w_old, ev, 8, &n, K32_NO_WAIT, &err), K32_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].type, STORE_EVENT_ADDED);
	assert_null(ev[0].prev);
	assert_string_equal(store_obj_key(ev[0].obj), "//pods/w/b");
	store_events_release(fx.st, ev, n);

	/* new writes reach both; non-matching writes wake nobody */
	put(fx.st, "other", "y", "{}"); /* rev 5 */
	assert_int_equal(notes, 0);
	assert_int_equal(store_delete(fx.st, &k, 0, NULL, NULL, NULL), K32_OK); /* rev 6 */
	assert_int_equal(notes, 1);
	assert_int_equal(store_watch_next(w_new, ev, 8, &n, K32_NO_WAIT, &err), K32_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].type, STORE_EVENT_DELETED);
	assert_int_equal(ev[0].rev, 6);
	assert_int_equal(ev[0].obj->mod_rev, 3);
	assert_ptr_equal(ev[0].obj, ev[0].prev);
	store_events_release(fx.st, ev, n);
	assert_int_equal(store_watch_next(w_old, ev, 8, &n, K32_NO_WAIT, &err), K32_OK);
	assert_int_equal(ev[0].type, STORE_EVENT_DELETED);
	store_events_release(fx.st, ev, n);
	assert_int_equal(store_watch_progress(w_old), 6);
	put(fx.st, "other", "x", "{}"); /* rev 7: progress follows while caught up */
	assert_int_equal(store_watch_progress(w_old), 7);
	assert_int_equal(store_watch_next(w_old, ev, 8, &n, 0, &err), K32_ERR_SHOULD_WAIT);
	/* a past deadline times out */
	assert_int_equal(store_watch_next(w_old, ev, 8, &n, 1, &err), K32_ERR_TIMED_OUT);
	store_watch_cancel(w_old);
	assert_int_equal(store_watch_next(w_old, ev, 8, &n, K32_FOREVER, &err), K32_ERR_CANCELED);

	{
		struct store_stats stats;

		store_get_stats(fx.st, &stats);
		assert_int_equal(stats.watchers, 2);
		assert_int_equal(stats.rev, 7);
		assert_int_equal(stats.history_events, 7);
	}
	store_watch_close(w_old);
	store_watch_close(w_new);
	fx_fini(&fx);
}

static void test_watch_compacted(void **state)
{
	struct fixture fx;
	struct store_key ns = key_of("pods", "w", NULL);
	struct store_watch *w;
	struct k32_err err;
	struct store_stats stats;
	char name[16];

	(void)state;
	fx_init(&fx, false);
	fx.cfg.history_events = 16;
	fx_open(&fx);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "w", name, "{}");
	}
	store_get_stats(fx.st, &stats);
	assert_int_equal(stats.history_events, 16);
	assert_int_equal(stats.compact_rev, 4);
	assert_int_equal(store_watch_open(fx.st, &ns, 3, NULL, NULL, &w, &err), K32_ERR_COMPACTED);
	assert_null(w);
	assert_non_null(strstr(err.msg, "relist"));
	assert_int_equal(store_watch_open(fx.st, &ns, 4, NULL, NULL, &w, &err), K32_OK);
	store_watch_close(w);
	assert_int_equal(store_watch_open(fx.st, &ns, 21, NULL, NULL, &w, &err), K32_ERR_COMPACTED);
	assert_non_null(strstr(err.msg, "newer than the current revision 20"));

	/* a watcher positioned on an event that falls out of the ring is closed */
	assert_int_equal(store_watch_open(fx.st, &ns, 5, NULL, NULL, &w, &err), K32_OK);
	put(fx.st, "w", "late1", "{}");
	put(fx.st, "w", "late2", "{}");
	{
		struct store_event ev[4];
		size_t n;

		assert_int_equal(store_watch_next(w, ev, 4, &n, K32_NO_WAIT, &err),
				 K32_ERR_COMPACTED);
	}
	store_watch_close(w);
	fx_fini(&fx);
}

static void test_history_bytes_limit(void **state)
{
	struct fixture fx;
	struct store_key k = key_of("pods", "h", "a"), ns = key_of("pods", "h", NULL);
	struct store_value v = val_of("{\"payload\":\"0123456789012345678901234567890123456789\"}");
	struct store_stats stats;
	struct store_watch *w;
	struct store_obj *obj;
	struct k32_err err;
	size_t ver;

	(void)state;
	fx_init(&fx, false);
	fx.cfg.history_bytes = 500;
	fx_open(&fx);
	put(fx.st, "h", "a", "{\"payload\":\"0123456789012345678901234567890123456789\"}");
	assert_int_equal(store_get(fx.st, &k, &obj, NULL), K32_OK);
	ver = sizeof(*obj) + obj->key_len + 1 + obj->len + 1; /* bytes of one version */
	store_obj_unref(fx.st, obj);
	for (int i = 0; i < 30; i++)
		assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, NULL), K32_OK);
	store_get_stats(fx.st, &stats);
	/* only replaced versions count, and they stay under the limit */
	assert_true(stats.history_bytes <= 500);
	assert_int_equal(stats.history_bytes, (size_t)stats.history_events * ver);
	assert_int_equal(stats.history_events, 500 / ver);
	assert_int_equal(store_watch_open(fx.st, &ns, 1, NULL, NULL, &w, &err), K32_ERR_COMPACTED);
	assert_int_equal(store_watch_open(fx.st, &ns, stats.compact_rev, NULL, NULL, &w, &err),
			 K32_OK);
	store_watch_close(w);
	fx_fini(&fx);
}

static void test_watch_lagging(void **state)
{
	struct fixture fx;
	struct store_key ns = key_of("pods", "w", NULL);
	struct store_watch *slow, *idle;
	struct store_event ev[8];
	size_t n;
	int notes = 0;
	struct k32_err err;
	char name[16];

	(void)state;
	fx_init(&fx, false);
	fx.cfg.watch_queue = 4;
	fx_open(&fx);
	assert_int_equal(store_watch_open(fx.st, &ns, 0, notify_count, &notes, &slow, &err),
			 K32_OK);
	/* a watcher on another namespace sees only non-matching writes: never lags */
	{
		struct store_key other = key_of("pods", "quiet", NULL);

		assert_int_equal(store_watch_open(fx.st, &other, 0, NULL, NULL, &idle, &err),
				 K32_OK);
	}
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "w", name, "{}"); /* writers never wait */
	}
	assert_int_equal(notes, 5);
	assert_int_equal(store_watch_next(slow, ev, 8, &n, K32_NO_WAIT, &err), K32_ERR_COMPACTED);
	assert_non_null(strstr(err.msg, "K32_STORE_WATCH_QUEUE"));
	assert_int_equal(store_watch_next(idle, ev, 8, &n, K32_NO_WAIT, &err), K32_ERR_SHOULD_WAIT);
	assert_int_equal(store_watch_progress(idle), 5);
	store_watch_close(slow);
	store_watch_close(idle);
	fx_fini(&fx);
}

struct waker {
	struct store *st;
	struct store_watch *w;
	k32_status_t got;
	size_t count;
	uint64_t rev;
};

static void waiter_task(void *arg)
{
	struct waker *wk = arg;
	struct store_event ev[4];

	wk->got = store_watch_next(wk->w, ev, 4, &wk->count, K32_FOREVER, NULL);
	if (wk->got == K32_OK) {
		wk->rev = ev[0].rev;
		store_events_release(wk->st, ev, wk->count);
	}
}

static void test_watch_blocking_wakeup(void **state)
{
	struct fixture fx;
	struct store_key ns = key_of("pods", "w", NULL);
	struct waker wk = {0};
	struct k32_task *task;

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	wk.st = fx.st;
	assert_int_equal(store_watch_open(fx.st, &ns, 0, NULL, NULL, &wk.w, NULL), K32_OK);
	assert_int_equal(k32_plat()->task_create(&task, "waiter", waiter_task, &wk, 0, -1, NULL),
			 K32_OK);
	put(fx.st, "w", "wake", "{}");
	k32_plat()->task_join(task);
	assert_int_equal(wk.got, K32_OK);
	assert_int_equal(wk.count, 1);
	assert_int_equal(wk.rev, 1);

	/* cancel wakes a blocked waiter */
	assert_int_equal(k32_plat()->task_create(&task, "waiter", waiter_task, &wk, 0, -1, NULL),
			 K32_OK);
	store_watch_cancel(wk.w);
	k32_plat()->task_join(task);
	assert_int_equal(wk.got, K32_ERR_CANCELED);
	store_watch_close(wk.w);
	fx_fini(&fx);
}

static void test_many_watchers_share_history(void **state)
{
	enum { WATCHERS = 500 };
	struct fixture fx;
	struct store_key ns = key_of("pods", "w", NULL);
	static struct store_watch *w[WATCHERS];
	struct store_stats before, after;
	struct store_event ev[2];
	size_t n;
	char name[16];

	(void)state;
	fx_init(&fx, false);
	fx_open(&fx);
	store_get_stats(fx.st, &before);
	for (int i = 0; i < WATCHERS; i++)
		assert_int_equal(store_watch_open(fx.st, &ns, 0, NULL, NULL, &w[i], NULL), K32_OK);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "w", name, "{\"spec\":{}}");
	}
	store_get_stats(fx.st, &after);
	/* watchers cost their own small struct, not a copy of each event */
	assert_true(after.mem.cur_bytes - before.mem.cur_bytes <
		    (size_t)WATCHERS * 128 + after.object_bytes + 4096);
	for (int i = 0; i < WATCHERS; i++) {
		assert_int_equal(store_watch_next(w[i], ev, 2, &n, K32_NO_WAIT, NULL), K32_OK);
		assert_int_equal(n, 2);
		store_events_release(fx.st, ev, n);
		store_watch_close(w[i]);
	}
	fx_fini(&fx);
}

/* ---- persistence ---------------------------------------------------------------------- */

/* A deterministic mixed workload; returns the number of writes. */
static int workload(struct store *st, int count)
{
	char name[16], json[64];
	struct store_key k;
	struct store_value v;
	int writes = 0;

	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "p%03d", i % 37);
		snprintf(json, sizeof(json), "{\"i\":%d,\"pad\":\"%0*d\"}", i, i % 23, 0);
		k = key_of("pods", i % 2 ? "odd" : "even", name);
		v = val_of(json);
		if (i % 11 == 10) {
			if (store_delete(st, &k, 0, NULL, NULL, NULL) == K32_OK)
				writes++;
		} else if (store_create(st, &k, &v, NULL, NULL) == K32_OK) {
			writes++;
		} else {
			assert_int_equal(store_update(st, &k, &v, 0, NULL, NULL), K32_OK);
			writes++;
		}
	}
	return writes;
}

/* Renders every object (key, revisions, value) into buf. */
static void dump(struct store *st, char *buf, size_t cap)
{
	struct store_key all = key_of("pods", NULL, NULL);
	struct store_list list;
	size_t off = 0;

	assert_int_equal(store_list(st, &all, NULL, &list, NULL), K32_OK);
	off += (size_t)snprintf(buf, cap, "rev=%llu\n", (unsigned long long)list.rev);
	for (uint32_t i = 0; i < list.count && off < cap; i++) {
		const struct store_obj *o = list.items[i];

		off += (size_t)snprintf(buf + off, cap - off, "%s %llu %llu %s\n", store_obj_key(o),
					(unsigned long long)o->create_rev,
					(unsigned long long)o->mod_rev, store_obj_data(o));
	}
	store_list_fini(st, &list);
}

static void test_restart_replays_exactly(void **state)
{
	struct fixture fx;
	static char before[16384], after[16384];
	struct store_stats stats;

	(void)state;
	fx_init(&fx, true);
	fx_open(&fx);
	workload(fx.st, 150);
	dump(fx.st, before, sizeof(before));
	fx_close(&fx);
	fx_open(&fx);
	dump(fx.st, after, sizeof(after));
	assert_string_equal(before, after);
	store_get_stats(fx.st, &stats);
	assert_int_equal(stats.snapshots, 0);
	assert_true(stats.log_bytes > 0);
	/* history starts at the loaded revision */
	assert_int_equal(stats.compact_rev, stats.rev);
	workload(fx.st, 40);
	dump(fx.st, before, sizeof(before));
	fx_close(&fx);
	fx_open(&fx);
	dump(fx.st, after, sizeof(after));
	assert_string_equal(before, after);
	fx_fini(&fx);
}

static void test_rotation(void **state)
{
	struct fixture fx;
	static char before[16384], after[16384];
	struct store_stats stats;

	(void)state;
	fx_init(&fx, true);
	fx.cfg.log_rotate_bytes = 2048;
	fx_open(&fx);
	workload(fx.st, 300);
	store_get_stats(fx.st, &stats);
	assert_true(stats.snapshots >= 3);
	assert_true(stats.log_bytes <= 2048 + 200);
	dump(fx.st, before, sizeof(before));
	fx_close(&fx);
	fx_open(&fx);
	dump(fx.st, after, sizeof(after));
	assert_string_equal(before, after);
	fx_fini(&fx);
}

static k32_status_t (*real_write_atomic)(const char *path, const void *data, size_t len,
					 struct k32_err *err);

/* Fails the replacement of the log only (the snapshot before it is written). */
static k32_status_t fail_log_replace(const char *path, const void *data, size_t len,
				     struct k32_err *err)
{
	size_t n = strlen(path);

	if (n >= 9 && strcmp(path + n - 9, "store.log") == 0)
		return k32_err_set(err, K32_ERR_IO, "test", "injected log replace failure");
	return real_write_atomic(path, data, len, err);
}

/* A crash between "snapshot written" and "log replaced": the log still holds records the
 * snapshot covers; writes meanwhile must fail (the snapshot expects the next log), and
 * reopening must skip the covered records, finish the rotation and lose nothing. */
static void test_rotation_interrupted(void **state)
{
	struct fixture fx;
	static char before[16384], after[16384];
	struct k32_platform_ops ops = *k32_plat_native();
	struct store_stats stats;
	struct store_key k = key_of("pods", "t", "refused");
	struct store_value v = val_of("{}");
	struct k32_err err;
	uint64_t seq = log_seq_now();
	char mark[128];

	(void)state;
	fx_init(&fx, true);
	fx.cfg.log_rotate_bytes = 2048;
	fx_open(&fx);
	store_get_stats(fx.st, &stats);
	uint32_t snaps = stats.snapshots;
	real_write_atomic = ops.file_write_atomic;
	ops.file_write_atomic = fail_log_replace;
	k32_plat_set_ops(&ops);
	for (int i = 0; i < 100 && stats.snapshots == snaps; i++) {
		char name[16];

		snprintf(name, sizeof(name), "w%d", i);
		put(fx.st, "t", name, "{\"spec\":{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}");
		store_get_stats(fx.st, &stats);
	}
	assert_int_equal(stats.snapshots, snaps + 1);
	assert_true(logged_since(seq, "not replaced"));
	/* the snapshot expects a new log: nothing may be appended to the old one */
	assert_int_equal(store_create(fx.st, &k, &v, NULL, &err), K32_ERR_IO);
	assert_non_null(strstr(err.msg, "cannot be made"));
	k32_plat_set_ops(NULL);
	dump(fx.st, before, sizeof(before));
	fx_close(&fx);
	/* no clean close was recorded while the log was stale */
	path_of(&fx, "store.closed", mark, sizeof(mark));
	assert_false(k32_plat()->file_exists(mark));
	seq = log_seq_now();
	fx_open(&fx);
	assert_true(logged_since(seq, "finishing that rotation"));
	dump(fx.st, after, sizeof(after));
	assert_string_equal(before, after);
	/* and writing on continues the revisions */
	workload(fx.st, 10);
	dump(fx.st, before, sizeof(before));
	fx_close(&fx);
	fx_open(&fx);
	dump(fx.st, after, sizeof(after));
	assert_string_equal(before, after);
	fx_fini(&fx);
}

/* Rewrites a file of the fixture through fn(data, len) -> new len. */
static void edit_file(struct fixture *fx, const char *file,
		      size_t (*fn)(uint8_t *data, size_t len, size_t arg), size_t arg)
{
	char p[128];
	uint8_t *data;
	size_t len, nlen;
	const struct k32_allocator *a = k32_default_allocator();

	path_of(fx, file, p, sizeof(p));
	assert_int_equal(k32_plat()->file_read_all(p, a, 1 << 24, &data, &len, NULL), K32_OK);
	nlen = fn(data, len, arg);
	assert_int_equal(k32_plat()->file_write_atomic(p, data, nlen, NULL), K32_OK);
	k32_free(a, data, len + 1);
}

static size_t cut_tail(uint8_t *data, size_t len, size_t arg)
{
	(void)data;
	return len - arg;
}

static size_t flip_at_end(uint8_t *data, size_t len, size_t arg)
{
	data[len - arg] ^= 0x5a;
	return len;
}

static size_t flip_at(uint8_t *data, size_t len, size_t arg)
{
	data[arg] ^= 0xff;
	return len;
}

static void test_torn_and_garbled_tails(void **state)
{
	static const struct {
		const char *what;
		size_t (*edit)(uint8_t *, size_t, size_t);
		size_t arg;
		const char *report;
	} cases[] = {
	    {"torn mid-record", cut_tail, 5, "torn record"},
	    {"torn mid-header", cut_tail, 0, "torn record header"}, /* arg set below */
	    {"garbled value", flip_at_end, 3, "CRC mismatch"},
	    {"garbled header", flip_at_end, 0, "bad record magic"}, /* arg set below */
	};
	char buf[64];

	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
		struct fixture fx;
		struct k32_err err;
		uint64_t seq, last_rev;
		size_t last_len, arg = cases[c].arg;
		struct store_stats stats;

		fx_init(&fx, true);
		fx_open(&fx);
		put(fx.st, "t", "a", "{\"keep\":1}");
		put(fx.st, "t", "b", "{\"keep\":2}");
		last_rev = put(fx.st, "t", "c", "{\"torn\":3}");
		assert_int_equal(last_rev, 3);
		store_get_stats(fx.st, &stats);
		fx_close(&fx);
		/* a crash, not a clean close: no record of revision 3 outside the log */
		fx_forget_close(&fx);
		last_len = STORE_REC_OVERHEAD + strlen("//pods/t/c") + strlen("{\"torn\":3}");
		if (c == 1)
			arg = last_len - 7; /* leaves 7 bytes: inside the 12-byte header */
		if (c == 3)
			arg = last_len; /* first byte of the last record's magic */
		edit_file(&fx, "store.log", cases[c].edit, arg);

		seq = log_seq_now();
		assert_int_equal(store_open(&fx.cfg, &fx.st, &err), K32_OK);
		assert_true(logged_since(seq, cases[c].report));
		assert_true(logged_since(seq, "offset"));
		assert_true(logged_since(seq, "no clean close after rev"));
		/* the write that tore was never acknowledged; everything before it is there */
		assert_int_equal(store_rev(fx.st), 2);
		assert_int_equal(get_data(fx.st, "t", "a", buf, sizeof(buf), NULL), K32_OK);
		assert_string_equal(buf, "{\"keep\":1}");
		assert_int_equal(get_data(fx.st, "t", "b", buf, sizeof(buf), NULL), K32_OK);
		assert_int_equal(get_data(fx.st, "t", "c", buf, sizeof(buf), NULL),
				 K32_ERR_NOT_FOUND);
		/* the tail was cut: new writes follow the last good record */
		assert_int_equal(put(fx.st, "t", "d", "{}"), 3);
		fx_close(&fx);
		fx_open(&fx);
		assert_int_equal(store_rev(fx.st), 3);
		assert_int_equal(get_data(fx.st, "t", "d", buf, sizeof(buf), NULL), K32_OK);
		fx_fini(&fx);
	}
}

static void test_garbled_middle_refuses(void **state)
{
	struct fixture fx;
	struct k32_err err;
	struct store *st = NULL;

	(void)state;
	fx_init(&fx, true);
	fx_open(&fx);
	put(fx.st, "t", "a", "{\"v\":1}");
	put(fx.st, "t", "b", "{\"v\":2}");
	put(fx.st, "t", "c", "{\"v\":3}");
	fx_close(&fx);
	/* damage inside the first record: acknowledged records follow, so nothing is dropped */
	/* (the log starts with its 36-byte LOG_BEGIN record; the first PUT follows) */
	edit_file(&fx, "store.log", flip_at, 2 * STORE_REC_OVERHEAD + 3);
	assert_int_equal(store_open(&fx.cfg, &st, &err), K32_ERR_CORRUPT);
	assert_null(st);
	assert_non_null(strstr(err.msg, "offset 36"));
	assert_non_null(strstr(err.msg, "valid records follow"));
	assert_int_equal(fx.heap.stats.cur_bytes, 0);
	fx_fini(&fx);
}

static size_t cut_to(uint8_t *data, size_t len, size_t arg)
{
	(void)data;
	return arg < len ? arg : len;
}

/* Copies a file of the fixture to another name (to bring back an older store.closed). */
static void copy_file(struct fixture *fx, const char *from, const char *to)
{
	char p[128], q[128];
	uint8_t *data;
	size_t len;
	const struct k32_allocator *a = k32_default_allocator();

	path_of(fx, from, p, sizeof(p));
	path_of(fx, to, q, sizeof(q));
	assert_int_equal(k32_plat()->file_read_all(p, a, 1 << 24, &data, &len, NULL), K32_OK);
	assert_int_equal(k32_plat()->file_write_atomic(q, data, len, NULL), K32_OK);
	k32_free(a, data, len + 1);
}

/*
 * Damage that loses acknowledged writes is refused, named, and never reported as a torn
 * unacknowledged tail; accept_log_loss opens what is left, after which the files agree again.
 * Each case: a snapshot (rotation) at some revision, 20 acknowledged writes in the log after
 * it, a clean close, then the damage.
 */
static void test_log_loss_refused(void **state)
{
	enum { EMPTIED, DELETED, MIDDLE_CUT, BOUNDARY_CUT, FOREIGN, STALE_MARK_TORN };
	static const struct {
		const char *what;
		const char *msg; /* in the refusal */
	} cases[] = {
	    [EMPTIED] = {"emptied log", "is empty"},
	    [DELETED] = {"deleted log", "is missing"},
	    [MIDDLE_CUT] = {"log cut in the middle of a record", "revisions missing"},
	    [BOUNDARY_CUT] = {"log cut at a record boundary", "revisions missing"},
	    [FOREIGN] = {"log of another rotation", "not log"},
	    [STALE_MARK_TORN] = {"torn tail after a crash, older clean close", NULL},
	};
	char p[128], buf[64];

	(void)state;
	for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
		struct fixture fx;
		struct k32_err err;
		struct store *st = NULL;
		struct store_stats stats;
		uint64_t seq, snap_rev, last_rev = 0, open_rev;
		size_t log_len, rec_len;

		fx_init(&fx, true);
		fx.cfg.log_rotate_bytes = 4096;
		fx_open(&fx);
		/* enough writes for one rotation, then stop right after it */
		store_get_stats(fx.st, &stats);
		uint32_t snaps = stats.snapshots;
		for (int i = 0; stats.snapshots == snaps; i++) {
			snprintf(buf, sizeof(buf), "s%d", i);
			last_rev =
			    put(fx.st, "t", buf, "{\"spec\":{\"pad\":\"0123456789abcdef\"}}");
			store_get_stats(fx.st, &stats);
		}
		snap_rev = last_rev;
		if (c == FOREIGN) {
			/* keep this log aside: it is log N; the real one will be log N + 2 */
			fx_close(&fx);
			copy_file(&fx, "store.log", "closed.saved");
			fx_open(&fx);
			store_get_stats(fx.st, &stats);
			snaps = stats.snapshots;
			for (int i = 0; stats.snapshots < snaps + 2; i++) {
				snprintf(buf, sizeof(buf), "f%d", i);
				last_rev = put(fx.st, "t", buf,
					       "{\"spec\":{\"pad\":\"0123456789abcdef\"}}");
				store_get_stats(fx.st, &stats);
			}
			snap_rev = last_rev;
		}
		if (c == STALE_MARK_TORN) {
			fx_close(&fx);
			copy_file(&fx, "store.closed", "closed.saved"); /* at snap_rev */
			fx_open(&fx);
		}
		for (int i = 0; i < 20; i++) {
			snprintf(buf, sizeof(buf), "a%d", i);
			last_rev = put(fx.st, "t", buf, "{\"ack\":1}");
		}
		assert_int_equal(last_rev, snap_rev + 20);
		store_get_stats(fx.st, &stats);
		log_len = (size_t)stats.log_bytes;
		rec_len = STORE_REC_OVERHEAD + strlen("//pods/t/a10") + strlen("{\"ack\":1}");
		fx_close(&fx);

		path_of(&fx, "store.log", p, sizeof(p));
		switch (c) {
		case EMPTIED:
			edit_file(&fx, "store.log", cut_to, 0);
			break;
		case DELETED:
			assert_int_equal(k32_plat()->file_remove(p, NULL), K32_OK);
			break;
		case MIDDLE_CUT: /* inside the 11th of the 20 records */
			edit_file(&fx, "store.log", cut_to,
				  STORE_REC_OVERHEAD + 10 * (rec_len - 1) + rec_len / 2);
			break;
		case BOUNDARY_CUT: /* after the 10th record exactly */
			edit_file(&fx, "store.log", cut_to, log_len - 10 * rec_len + 10);
			break;
		case FOREIGN:
			copy_file(&fx, "closed.saved", "store.log");
			break;
		case STALE_MARK_TORN:
			/* crashed after the 20 writes (the mark is the older one), tail torn */
			copy_file(&fx, "closed.saved", "store.closed");
			edit_file(&fx, "store.log", cut_tail, 5);
			break;
		}

		seq = log_seq_now();
		if (!cases[c].msg) {
			/* a crash's torn tail: dropped, said so, with the last durable revision */
			fx_open(&fx);
			assert_int_equal(store_rev(fx.st), last_rev - 1);
			assert_true(logged_since(seq, "no clean close after rev"));
			fx_fini(&fx);
			continue;
		}
		assert_int_equal(store_open(&fx.cfg, &st, &err), K32_ERR_CORRUPT);
		assert_null(st);
		if (!strstr(err.msg, cases[c].msg) || !strstr(err.msg, "accept_log_loss"))
			fail_msg("%s: %s", cases[c].what, err.msg);
		assert_false(logged_since(seq, "crash"));
		assert_false(logged_since(seq, "dropped"));
		assert_int_equal(fx.heap.stats.cur_bytes, 0);
		/* refusing changed nothing: a second open refuses the same way */
		assert_int_equal(store_open(&fx.cfg, &st, &err), K32_ERR_CORRUPT);

		/* with the flag: opens with what is left, as an error in the log */
		fx.cfg.accept_log_loss = true;
		seq = log_seq_now();
		fx_open(&fx);
		open_rev = store_rev(fx.st);
		assert_true(open_rev < last_rev);
		assert_true(open_rev >= snap_rev);
		assert_true(logged_since(seq, "accept_log_loss is set"));
		assert_int_equal(get_data(fx.st, "t", "a19", buf, sizeof(buf), NULL),
				 K32_ERR_NOT_FOUND);
		put(fx.st, "t", "after", "{}");
		fx_close(&fx);
		/* and the files agree again: opens without the flag, with the new write */
		fx.cfg.accept_log_loss = false;
		fx_open(&fx);
		assert_int_equal(store_rev(fx.st), open_rev + 1);
		assert_int_equal(get_data(fx.st, "t", "after", buf, sizeof(buf), NULL), K32_OK);
		fx_fini(&fx);
	}
}

static void test_corrupt_snapshot_refuses(void **state)
{
	struct fixture fx;
	struct k32_err err;
	struct store *st = NULL;
	char name[16];

	(void)state;
	fx_init(&fx, true);
	fx.cfg.log_rotate_bytes = 512;
	fx_open(&fx);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		put(fx.st, "s", name, "{\"some\":\"payload\"}");
	}
	fx_close(&fx);
	edit_file(&fx, "store.snap", flip_at, 100);
	assert_int_equal(store_open(&fx.cfg, &st, &err), K32_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "snapshot"));
	assert_non_null(strstr(err.msg, "nothing was dropped"));
	assert_int_equal(fx.heap.stats.cur_bytes, 0);
	fx_fini(&fx);
}

/* ---- fault injection ------------------------------------------------------------------ */

static void test_alloc_faults(void **state)
{
	static const char *ops_names[] = {"create", "update", "delete",		"list",
					  "watch",  "open",   "create+snapshot"};
	(void)state;

	for (size_t op = 0; op < ARRAY_LEN(ops_names); op++) {
		bool done = false;

		for (uint32_t nth = 1; !done && nth < 200; nth++) {
			struct fixture fx;
			struct store_key k = key_of("pods", "f", "x");
			struct store_key ns = key_of("pods", "f", NULL);
			struct store_value v = val_of("{\"new\":true}");
			struct store_list list;
			struct store_list_opts lo = {.limit = 2};
			struct store_watch *w = NULL;
			struct store_obj *obj = NULL;
			struct k32_err err;
			k32_status_t s;
			char buf[64];
			uint64_t rev0;

			fx_init(&fx, true);
			if (op == 5) {
				fx_open(&fx);
				put(fx.st, "f", "x", "{\"old\":1}");
				fx_close(&fx);
				k32_heap_fail_nth(&fx.heap, nth);
				s = store_open(&fx.cfg, &fx.st, &err);
				k32_heap_fail_nth(&fx.heap, 0);
				if (s == K32_OK) {
					done = true;
					assert_int_equal(store_rev(fx.st), 1);
				} else {
					assert_int_equal(s, K32_ERR_NO_MEMORY);
					assert_int_equal(fx.heap.stats.cur_bytes, 0);
				}
				fx_fini(&fx);
				continue;
			}
			if (op == 6)
				fx.cfg.log_rotate_bytes = 64; /* every write snapshots */
			fx_open(&fx);
			put(fx.st, "f", "x", "{\"old\":1}");
			put(fx.st, "f", "y", "{}");
			put(fx.st, "f", "z", "{}");
			rev0 = store_rev(fx.st);
			if (op == 0 || op == 6)
				k = key_of("pods", "f", "new");
			k32_heap_fail_nth(&fx.heap, nth);
			switch (op) {
			case 0:
			case 6: /* a failed snapshot does not fail the write it follows */
				s = store_create(fx.st, &k, &v, &obj, &err);
				break;
			case 1:
				s = store_update(fx.st, &k, &v, 1, &obj, &err);
				break;
			case 2:
				s = store_delete(fx.st, &k, 1, &obj, NULL, &err);
				break;
			case 3:
				lo.rev = 1; /* reads at an older revision allocate an overlay */
				s = store_list(fx.st, &ns, &lo, &list, &err);
				store_list_fini(fx.st, &list);
				break;
			default:
				s = store_watch_open(fx.st, &ns, 1, NULL, NULL, &w, &err);
				store_watch_close(w);
				break;
			}
			k32_heap_fail_nth(&fx.heap, 0);
			store_obj_unref(fx.st, obj);
			if (s == K32_OK) {
				done = true;
				assert_int_equal(store_rev(fx.st),
						 op <= 2 || op == 6 ? rev0 + 1 : rev0);
				fx_close(&fx); /* and it is all on disk */
				fx_open(&fx);
				assert_int_equal(store_rev(fx.st),
						 op <= 2 || op == 6 ? rev0 + 1 : rev0);
			} else {
				assert_int_equal(s, K32_ERR_NO_MEMORY);
				assert_int_equal(store_rev(fx.st), rev0);
				assert_int_equal(get_data(fx.st, "f", "x", buf, sizeof(buf), NULL),
						 K32_OK);
				assert_string_equal(buf, "{\"old\":1}");
				/* the log holds nothing of the failed write */
				fx_close(&fx);
				fx_open(&fx);
				assert_int_equal(store_rev(fx.st), rev0);
			}
			fx_fini(&fx); /* asserts no leak */
		}
		assert_true(done);
	}
}

static int io_fail_at;		  /* 1: append of the head, 2: append of the value, 3: sync */
static int io_calls;		  /* appends so far */
static int io_syncs;		  /* syncs so far */
static bool io_partial;		  /* write half of the data before failing */
static bool io_fail_truncate_too; /* the undo fails too */

static k32_status_t inj_append(struct k32_file *f, const void *data, size_t len,
			       struct k32_err *err)
{
	if (++io_calls == io_fail_at) {
		if (io_partial)
			k32_plat_native()->file_append(f, data, len / 2, NULL);
		return k32_err_set(err, K32_ERR_IO, "test", "injected append failure");
	}
	return k32_plat_native()->file_append(f, data, len, err);
}

static k32_status_t inj_sync(struct k32_file *f, struct k32_err *err)
{
	if (io_fail_at == 3 && io_syncs++ == 0) /* once: the undo's own sync works */
		return k32_err_set(err, K32_ERR_IO, "test", "injected fsync failure");
	return k32_plat_native()->file_sync(f, err);
}

static k32_status_t inj_truncate(struct k32_file *f, uint64_t len, struct k32_err *err)
{
	if (io_fail_truncate_too)
		return k32_err_set(err, K32_ERR_IO, "test", "injected truncate failure");
	return k32_plat_native()->file_truncate(f, len, err);
}

static void test_io_faults(void **state)
{
	static const struct {
		int fail_at;
		bool partial;
		bool truncate_fails;
		k32_status_t next_write; /* status of the write after the failed one */
	} cases[] = {
	    {1, false, false, K32_OK}, {1, true, false, K32_OK},	   {2, true, false, K32_OK},
	    {3, false, false, K32_OK}, {2, true, true, K32_ERR_BAD_STATE},
	};
	(void)state;

	for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
		struct fixture fx;
		struct k32_platform_ops ops = *k32_plat_native();
		struct store_key k = key_of("pods", "io", "a");
		struct store_value v = val_of("{\"v\":2}");
		struct k32_err err;
		char buf[64];
		uint64_t rev;

		fx_init(&fx, true);
		fx_open(&fx);
		put(fx.st, "io", "a", "{\"v\":1}");
		ops.file_append = inj_append;
		ops.file_sync = inj_sync;
		ops.file_truncate = inj_truncate;
		io_fail_at = cases[c].fail_at;
		io_partial = cases[c].partial;
		io_fail_truncate_too = cases[c].truncate_fails;
		io_calls = 0;
		io_syncs = 0;
		k32_plat_set_ops(&ops);
		assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, &err), K32_ERR_IO);
		assert_non_null(strstr(err.msg, "injected"));
		/* not acknowledged: memory unchanged */
		assert_int_equal(store_rev(fx.st), 1);
		assert_int_equal(get_data(fx.st, "io", "a", buf, sizeof(buf), &rev), K32_OK);
		assert_string_equal(buf, "{\"v\":1}");
		k32_plat_set_ops(NULL);
		assert_int_equal(store_update(fx.st, &k, &v, 0, NULL, &err), cases[c].next_write);
		fx_close(&fx);
		if (cases[c].truncate_fails) {
			/* the garbage stays in the file; open drops it as a torn tail */
			fx_open(&fx);
			assert_int_equal(store_rev(fx.st), 1);
		} else {
			fx_open(&fx);
			assert_int_equal(store_rev(fx.st), 2);
			assert_int_equal(get_data(fx.st, "io", "a", buf, sizeof(buf), &rev),
					 K32_OK);
			assert_string_equal(buf, "{\"v\":2}");
			assert_int_equal(rev, 2);
		}
		fx_fini(&fx);
	}
}

/* ---- concurrency ---------------------------------------------------------------------- */

enum { CW_WRITERS = 4, CW_WRITES = 200, CW_READERS = 2 };

struct conc {
	struct store *st;
	int id;
	k32_status_t status; /* first failure */
	uint64_t seen;	     /* events (watcher) or lists (reader) */
};

static void conc_writer(void *arg)
{
	struct conc *c = arg;
	char name[16], json[48];

	for (int i = 0; i < CW_WRITES && c->status == K32_OK; i++) {
		struct store_key k = key_of("pods", "c", name);
		struct store_value v;

		snprintf(name, sizeof(name), "w%d-%d", c->id, i % 10);
		snprintf(json, sizeof(json), "{\"w\":%d,\"i\":%d}", c->id, i);
		v = val_of(json);
		if (i < 10)
			c->status = store_create(c->st, &k, &v, NULL, NULL);
		else if (i % 7 == 0)
			c->status = store_delete(c->st, &k, 0, NULL, NULL, NULL) == K32_OK
					? store_create(c->st, &k, &v, NULL, NULL)
					: K32_ERR_INTERNAL;
		else
			c->status = store_update(c->st, &k, &v, 0, NULL, NULL);
	}
}

static void conc_reader(void *arg)
{
	struct conc *c = arg;
	struct store_key ns = key_of("pods", "c", NULL);

	for (int i = 0; i < 300 && c->status == K32_OK; i++) {
		struct store_list list;
		struct store_list_opts opts = {.limit = (uint32_t)(i % 5)};

		c->status = store_list(c->st, &ns, &opts, &list, NULL);
		for (uint32_t j = 1; c->status == K32_OK && j < list.count; j++)
			if (strcmp(store_obj_key(list.items[j - 1]),
				   store_obj_key(list.items[j])) >= 0)
				c->status = K32_ERR_INTERNAL; /* out of order */
		store_list_fini(c->st, &list);
		c->seen++;
	}
}

static void conc_watcher(void *arg)
{
	struct conc *c = arg;
	struct store_key ns = key_of("pods", "c", NULL);
	struct store_watch *w;
	struct store_event ev[16];
	uint64_t want = 0;
	size_t n;

	for (int i = 0; i < CW_WRITES; i++) /* a delete + create is two writes */
		want += (uint64_t)CW_WRITERS * (i >= 10 && i % 7 == 0 ? 2 : 1);

	c->status = store_watch_open(c->st, &ns, 0, NULL, NULL, &w, NULL);
	if (c->status != K32_OK)
		return;
	__atomic_store_n(&c->id, 1, __ATOMIC_RELEASE); /* the watcher is in place */
	while (c->seen < want && c->status == K32_OK) {
		/* a generous deadline only so that a bug fails instead of hanging */
		c->status = store_watch_next(w, ev, ARRAY_LEN(ev), &n,
					     k32_deadline_after(30 * 1000 * 1000), NULL);
		for (size_t i = 0; c->status == K32_OK && i < n; i++)
			if (ev[i].rev != ++c->seen) /* every revision, in order */
				c->status = K32_ERR_INTERNAL;
		if (c->status == K32_OK)
			store_events_release(c->st, ev, n);
	}
	store_watch_close(w);
}

static void test_concurrent_writers_readers_watcher(void **state)
{
	struct fixture fx;
	struct conc wr[CW_WRITERS], rd[CW_READERS], wa = {0};
	struct k32_task *tw[CW_WRITERS], *tr[CW_READERS], *twa;
	const struct k32_platform_ops *ops = k32_plat();

	(void)state;
	fx_init(&fx, false);
	fx.cfg.history_events = 4096;
	fx.cfg.history_bytes = 4 << 20;
	fx.cfg.watch_queue = 4096;
	fx_open(&fx);
	wa.st = fx.st;
	assert_int_equal(ops->task_create(&twa, "watcher", conc_watcher, &wa, 0, -1, NULL), K32_OK);
	while (!__atomic_load_n(&wa.id, __ATOMIC_ACQUIRE))
		ops->sleep_us(1000);
	for (int i = 0; i < CW_READERS; i++) {
		rd[i] = (struct conc){.st = fx.st, .id = i};
		assert_int_equal(
		    ops->task_create(&tr[i], "reader", conc_reader, &rd[i], 0, -1, NULL), K32_OK);
	}
	for (int i = 0; i < CW_WRITERS; i++) {
		wr[i] = (struct conc){.st = fx.st, .id = i};
		assert_int_equal(
		    ops->task_create(&tw[i], "writer", conc_writer, &wr[i], 0, -1, NULL), K32_OK);
	}
	for (int i = 0; i < CW_WRITERS; i++) {
		ops->task_join(tw[i]);
		assert_int_equal(wr[i].status, K32_OK);
	}
	for (int i = 0; i < CW_READERS; i++) {
		ops->task_join(tr[i]);
		assert_int_equal(rd[i].status, K32_OK);
		assert_int_equal(rd[i].seen, 300);
	}
	ops->task_join(twa);
	assert_int_equal(wa.status, K32_OK);
	assert_int_equal(wa.seen, store_rev(fx.st));
	fx_fini(&fx);
}

/* ---- group commit --------------------------------------------------------------------- */

/* file_sync waits at a gate the test opens; appends and syncs are counted. */
static struct k32_platform_ops g_gc_ops;
static struct k32_mutex g_gc_mu;
static struct k32_cond g_gc_cv;
static bool g_gc_open;
static int g_gc_syncs, g_gc_appends;
static bool g_gc_fail_second;

static k32_status_t gc_sync(struct k32_file *f, struct k32_err *err)
{
	bool fail;

	k32_mutex_lock(&g_gc_mu);
	fail = ++g_gc_syncs == 2 && g_gc_fail_second;
	k32_plat_native()->cond_broadcast(&g_gc_cv);
	while (!g_gc_open)
		k32_plat_native()->cond_wait(&g_gc_cv, &g_gc_mu, K32_FOREVER);
	k32_mutex_unlock(&g_gc_mu);
	if (fail)
		return k32_err_set(err, K32_ERR_IO, "test", "injected fsync failure");
	return k32_plat_native()->file_sync(f, err);
}

static k32_status_t gc_append(struct k32_file *f, const void *data, size_t len, struct k32_err *err)
{
	k32_mutex_lock(&g_gc_mu);
	g_gc_appends++;
	k32_plat_native()->cond_broadcast(&g_gc_cv);
	k32_mutex_unlock(&g_gc_mu);
	return k32_plat_native()->file_append(f, data, len, err);
}

/* Waits until *counter reaches at least n (each change is broadcast); fails after 10 s
 * (a store that syncs under its write lock never lets the other writers append). */
static void gc_wait(int *counter, int n)
{
	int64_t deadline = (int64_t)k32_now_us() + 10000000;
	int got;

	k32_mutex_lock(&g_gc_mu);
	while (*counter < n && (int64_t)k32_now_us() < deadline)
		k32_plat_native()->cond_wait(&g_gc_cv, &g_gc_mu, deadline);
	got = *counter;
	k32_mutex_unlock(&g_gc_mu);
	if (got < n)
		fail_msg("group commit: counter at %d, expected %d: writers did not append while "
			 "an fsync ran",
			 got, n);
}

struct gc_writer {
	struct store *st;
	int id;
	k32_status_t status;
	atomic_bool acked;
};

static void gc_write(void *arg)
{
	struct gc_writer *g = arg;
	struct store_key k;
	struct store_value v = val_of("{\"g\":1}");
	char name[16];
	struct k32_err err;

	snprintf(name, sizeof(name), "g%d", g->id);
	k = key_of("pods", "t", name);
	g->status = store_create(g->st, &k, &v, NULL, &err);
	atomic_store(&g->acked, true);
}

/*
 * Writers that arrive while an fsync runs share the next one, and none is acknowledged (or
 * visible) before the fsync that covers it: writer 0's fsync is held at a gate while writers
 * 1..3 append; nothing returns and nothing is readable until the gate opens; then 2 fsyncs
 * cover 4 writes. With the second fsync failing, writers 1..3 all fail and only writer 0's
 * write exists, in memory and after reopening.
 */
static void test_group_commit(void **state)
{
	enum { W = 4 };
	const struct k32_platform_ops *ops = k32_plat_native();

	(void)state;
	ops->mutex_init(&g_gc_mu);
	ops->cond_init(&g_gc_cv);
	for (int fail = 0; fail < 2; fail++) {
		struct fixture fx;
		struct gc_writer g[W];
		struct k32_task *t[W];
		struct store_stats stats;
		char buf[32];

		fx_init(&fx, true);
		fx_open(&fx);
		g_gc_open = false;
		g_gc_syncs = g_gc_appends = 0;
		g_gc_fail_second = fail;
		g_gc_ops = *ops;
		g_gc_ops.file_sync = gc_sync;
		g_gc_ops.file_append = gc_append;
		k32_plat_set_ops(&g_gc_ops);
		for (int i = 0; i < W; i++) {
			g[i] = (struct gc_writer){.st = fx.st, .id = i};
			atomic_init(&g[i].acked, false);
		}
		assert_int_equal(ops->task_create(&t[0], "gc0", gc_write, &g[0], 0, -1, NULL),
				 K32_OK);
		gc_wait(&g_gc_syncs, 1); /* writer 0 is in its fsync */
		for (int i = 1; i < W; i++)
			assert_int_equal(
			    ops->task_create(&t[i], "gcw", gc_write, &g[i], 0, -1, NULL), K32_OK);
		gc_wait(&g_gc_appends, 2 * W); /* every record appended (head, then value) */
		for (int i = 0; i < W; i++)
			assert_false(atomic_load(&g[i].acked));
		assert_int_equal(store_rev(fx.st), 0);
		assert_int_equal(get_data(fx.st, "t", "g0", buf, sizeof(buf), NULL),
				 K32_ERR_NOT_FOUND);
		k32_mutex_lock(&g_gc_mu);
		g_gc_open = true;
		ops->cond_broadcast(&g_gc_cv);
		k32_mutex_unlock(&g_gc_mu);
		for (int i = 0; i < W; i++)
			ops->task_join(t[i]);
		k32_plat_set_ops(NULL);
		store_get_stats(fx.st, &stats);
		assert_int_equal(stats.log_syncs, 2);
		/* each fsync's duration is observed once (the /metrics WAL histogram) */
		assert_int_equal(stats.log_sync_seconds.count, 2);
		assert_int_equal(g[0].status, K32_OK);
		for (int i = 1; i < W; i++)
			assert_int_equal(g[i].status, fail ? K32_ERR_IO : K32_OK);
		assert_int_equal(store_rev(fx.st), fail ? 1 : W);
		fx_close(&fx);
		fx_open(&fx);
		assert_int_equal(store_rev(fx.st), fail ? 1 : W);
		for (int i = 0; i < W; i++) {
			char name[16];

			snprintf(name, sizeof(name), "g%d", i);
			assert_int_equal(get_data(fx.st, "t", name, buf, sizeof(buf), NULL),
					 i == 0 || !fail ? K32_OK : K32_ERR_NOT_FOUND);
		}
		/* writes go on after a failed shared fsync */
		put(fx.st, "t", "after", "{}");
		fx_fini(&fx);
	}
	ops->cond_fini(&g_gc_cv);
	ops->mutex_fini(&g_gc_mu);
}

/* ---- record codec --------------------------------------------------------------------- */

static void test_record_codec(void **state)
{
	uint8_t rec[256];
	struct store_rec out;
	size_t n, used;
	const char *fault = NULL;
	const char *key = "//pods/ns/a", *val = "{\"x\":1}";

	(void)state;
	n = store_rec_encode_head(rec, STORE_REC_PUT, key, (uint16_t)strlen(key), val,
				  (uint32_t)strlen(val), 9, 4);
	memcpy(rec + n, val, strlen(val));
	n += strlen(val);
	assert_int_equal(store_rec_parse(rec, n, &out, &used, &fault), K32_OK);
	assert_int_equal(used, n);
	assert_int_equal(out.type, STORE_REC_PUT);
	assert_int_equal(out.rev, 9);
	assert_int_equal(out.aux, 4);
	assert_memory_equal(out.key, key, strlen(key));
	assert_memory_equal(out.val, val, strlen(val));
	/* every truncation is torn, never OK */
	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(store_rec_parse(rec, cut, &out, &used, &fault),
				 K32_ERR_OUT_OF_RANGE);
	/* every single-bit flip is caught */
	for (size_t i = 0; i < n; i++) {
		rec[i] ^= 0x10;
		assert_int_not_equal(store_rec_parse(rec, n, &out, &used, &fault), K32_OK);
		assert_non_null(fault);
		rec[i] ^= 0x10;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crud_and_preconditions),
	    cmocka_unit_test(test_revision_stamp),
	    cmocka_unit_test(test_bad_keys),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_reserve),
	    cmocka_unit_test(test_list_pagination_and_snapshot),
	    cmocka_unit_test(test_list_compacted_token),
	    cmocka_unit_test(test_watch_events),
	    cmocka_unit_test(test_watch_compacted),
	    cmocka_unit_test(test_history_bytes_limit),
	    cmocka_unit_test(test_watch_lagging),
	    cmocka_unit_test(test_watch_blocking_wakeup),
	    cmocka_unit_test(test_many_watchers_share_history),
	    cmocka_unit_test(test_restart_replays_exactly),
	    cmocka_unit_test(test_rotation),
	    cmocka_unit_test(test_rotation_interrupted),
	    cmocka_unit_test(test_torn_and_garbled_tails),
	    cmocka_unit_test(test_garbled_middle_refuses),
	    cmocka_unit_test(test_log_loss_refused),
	    cmocka_unit_test(test_group_commit),
	    cmocka_unit_test(test_corrupt_snapshot_refuses),
	    cmocka_unit_test(test_alloc_faults),
	    cmocka_unit_test(test_io_faults),
	    cmocka_unit_test(test_concurrent_writers_readers_watcher),
	    cmocka_unit_test(test_record_codec),
	};

	k32_log_set_stderr(false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
