/*
 * store_bench.c - `store-bench DATA_DIR`: the store's numbers for `make bench`.
 *
 *  - write: one update of a ~1 KiB object, appended and fsynced before it returns (the
 *    acknowledged-write latency the API server adds to every write); median and p99, beside
 *    a raw append + fsync of the same bytes (the disk alone, interleaved) and their ratio;
 *  - list: a list of 100 pod-sized objects in one namespace (the store part of
 *    `GET /api/v1/pods`); median and p99;
 *  - group commit: 400 fsynced updates from 1 writer, then from 8 concurrent writers; fsyncs
 *    per write (log_syncs / log_writes) and writes per second for each;
 *  - watch memory: bytes the store allocates for 500 open watchers, and its bytes per object.
 *
 * DATA_DIR (created; its store files are removed at the end) should be on the disk under
 * test. Output: one "store-bench: ..." line per measurement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"
#include "platform/k32_platform.h"
#include "store/store.h"

#define WRITES	 400
#define OBJECTS	 100
#define LISTS	 2000
#define WATCHERS 500

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *us, size_t n)
{
	qsort(us, n, sizeof(*us), cmp_u64);
	printf("store-bench: %-40s n=%zu median_us=%llu p99_us=%llu max_us=%llu\n", what, n,
	       (unsigned long long)us[n / 2], (unsigned long long)us[n * 99 / 100],
	       (unsigned long long)us[n - 1]);
}

/* A pod-like JSON value of about 1 KiB with its resourceVersion slot. */
static size_t pod_json(char *buf, size_t cap, int i, size_t *out_rv_off)
{
	int n =
	    snprintf(buf, cap,
		     "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pod-%03d\","
		     "\"namespace\":\"bench\",\"uid\":\"6c1e0c1e-0000-4000-8000-%012d\","
		     "\"labels\":{\"app\":\"bench\",\"tier\":\"t%d\"},\"resourceVersion\":\"",
		     i, i, i % 4);

	*out_rv_off = (size_t)n;
	n +=
	    snprintf(buf + n, cap - (size_t)n,
		     "\"},\"spec\":{\"nodeName\":\"node-%d\",\"containers\":[{\"name\":\"app\","
		     "\"image\":\"bench.wasm\",\"resources\":{\"limits\":{\"memory\":\"24Ki\"}}}]},"
		     "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.%d\",\"conditions\":["
		     "{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"Initialized\","
		     "\"status\":\"True\"}],\"pad\":\"%0600d\"}}",
		     i % 10, i % 250, 0);
	return (size_t)n;
}

static void remove_store_files(const char *dir)
{
	static const char *files[] = {"store.log", "store.snap", "store.closed"};
	char path[512];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		k32_plat()->file_remove(path, NULL);
	}
}

/* One writer of the group-commit part: updates its own objects `count` times. */
struct gc_writer {
	struct store *st;
	int id, writers, count;
	k32_status_t status;
};

static void gc_writer_main(void *arg)
{
	struct gc_writer *g = arg;
	char json[2048], name[16];
	struct k32_err err;
	size_t rv_off;

	for (int i = 0; i < g->count && g->status == K32_OK; i++) {
		int obj = (g->id + i * g->writers) % OBJECTS;
		struct store_key k = {.group = "", .resource = "pods", .ns = "bench", .name = name};
		struct store_value v = {.data = json};

		snprintf(name, sizeof(name), "pod-%03d", obj);
		v.len = pod_json(json, sizeof(json), obj, &rv_off);
		v.rv_off = rv_off;
		g->status = store_update(g->st, &k, &v, 0, NULL, &err);
	}
}

/* WRITES fsynced updates from `writers` concurrent writers: fsyncs per write, writes/s. */
static int group_commit(struct store *st, int writers)
{
	const struct k32_platform_ops *ops = k32_plat();
	struct gc_writer g[8];
	struct k32_task *t[8];
	struct store_stats before, after;
	uint64_t t0, us;
	struct k32_err err;

	store_get_stats(st, &before);
	t0 = ops->now_us();
	for (int i = 0; i < writers; i++) {
		g[i] = (struct gc_writer){
		    .st = st, .id = i, .writers = writers, .count = WRITES / writers};
		if (ops->task_create(&t[i], "bench-writer", gc_writer_main, &g[i], 0, -1, &err) !=
		    K32_OK) {
			fprintf(stderr, "store-bench: task: %s\n", err.msg);
			return 1;
		}
	}
	for (int i = 0; i < writers; i++) {
		ops->task_join(t[i]);
		if (g[i].status != K32_OK) {
			fprintf(stderr, "store-bench: group commit writer failed\n");
			return 1;
		}
	}
	us = ops->now_us() - t0;
	store_get_stats(st, &after);
	printf("store-bench: group commit, %d writer%s: %llu writes, %llu fsyncs (%.2f per "
	       "write), %.0f writes/s\n",
	       writers, writers == 1 ? "" : "s",
	       (unsigned long long)(after.log_writes - before.log_writes),
	       (unsigned long long)(after.log_syncs - before.log_syncs),
	       (double)(after.log_syncs - before.log_syncs) /
		   (double)(after.log_writes - before.log_writes),
	       (double)(after.log_writes - before.log_writes) * 1e6 / (double)(us ? us : 1));
	return 0;
}

int main(int argc, char **argv)
{
	const struct k32_platform_ops *ops = k32_plat();
	static uint64_t lat[LISTS > WRITES ? LISTS : WRITES], raw_lat[WRITES];
	struct k32_file *raw;
	static struct store_watch *watchers[WATCHERS];
	struct store_config cfg = {0};
	struct store_stats before, after;
	struct store *st;
	struct k32_err err;
	char json[2048], path[512];
	size_t len, rv_off;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
		return 2;
	}
	k32_log_set_stderr(false);
	cfg.data_dir = argv[1];
	remove_store_files(argv[1]);
	if (store_open(&cfg, &st, &err) != K32_OK) {
		fprintf(stderr, "store-bench: %s\n", err.msg);
		return 1;
	}

	for (int i = 0; i < OBJECTS; i++) {
		char name[16];
		struct store_key k = {.group = "", .resource = "pods", .ns = "bench", .name = name};
		struct store_value v = {.data = json};

		snprintf(name, sizeof(name), "pod-%03d", i);
		v.len = pod_json(json, sizeof(json), i, &rv_off);
		v.rv_off = rv_off;
		if (store_create(st, &k, &v, NULL, &err) != K32_OK) {
			fprintf(stderr, "store-bench: create: %s\n", err.msg);
			return 1;
		}
	}

	/* fsynced single writes, interleaved with a raw append + fsync of the same size to a
	 * side file: the disk's own cost under the same conditions, for the ratio */
	snprintf(path, sizeof(path), "%s/raw.log", argv[1]);
	ops->file_remove(path, NULL);
	if (ops->file_open_append(path, &raw, &err) != K32_OK) {
		fprintf(stderr, "store-bench: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < WRITES; i++) {
		char name[16];
		struct store_key k = {.group = "", .resource = "pods", .ns = "bench", .name = name};
		struct store_value v = {.data = json};
		uint64_t t0;

		snprintf(name, sizeof(name), "pod-%03d", i % OBJECTS);
		len = pod_json(json, sizeof(json), i % OBJECTS, &rv_off);
		v.len = len;
		v.rv_off = rv_off;
		t0 = ops->now_us();
		if (store_update(st, &k, &v, 0, NULL, &err) != K32_OK) {
			fprintf(stderr, "store-bench: update: %s\n", err.msg);
			return 1;
		}
		lat[i] = ops->now_us() - t0;
		t0 = ops->now_us();
		if (ops->file_append(raw, json, len, &err) != K32_OK ||
		    ops->file_sync(raw, &err) != K32_OK) {
			fprintf(stderr, "store-bench: raw append: %s\n", err.msg);
			return 1;
		}
		raw_lat[i] = ops->now_us() - t0;
	}
	ops->file_close(raw);
	ops->file_remove(path, NULL);
	qsort(raw_lat, WRITES, sizeof(*raw_lat), cmp_u64);
	qsort(lat, WRITES, sizeof(*lat), cmp_u64);
	report("write (1 KiB update, fsynced)", lat, WRITES);
	report("raw file_append+file_sync 1 KiB (disk)", raw_lat, WRITES);
	printf("store-bench: write median / raw disk median = %.2f\n",
	       (double)lat[WRITES / 2] / (double)(raw_lat[WRITES / 2] ? raw_lat[WRITES / 2] : 1));

	/* list of 100 objects */
	for (int i = 0; i < LISTS; i++) {
		struct store_key ns = {.group = "", .resource = "pods", .ns = "bench"};
		struct store_list list;
		uint64_t t0 = ops->now_us();

		if (store_list(st, &ns, NULL, &list, &err) != K32_OK || list.count != OBJECTS) {
			fprintf(stderr, "store-bench: list: %s\n", err.msg);
			return 1;
		}
		store_list_fini(st, &list);
		lat[i] = ops->now_us() - t0;
	}
	report("list of 100 objects (references)", lat, LISTS);

	/* group commit: fsyncs per write with 1 and 8 concurrent writers */
	if (group_commit(st, 1) != 0 || group_commit(st, 8) != 0)
		return 1;

	/* watch memory */
	store_get_stats(st, &before);
	for (int i = 0; i < WATCHERS; i++) {
		struct store_key ns = {.group = "", .resource = "pods", .ns = "bench"};

		if (store_watch_open(st, &ns, 0, NULL, NULL, &watchers[i], &err) != K32_OK) {
			fprintf(stderr, "store-bench: watch: %s\n", err.msg);
			return 1;
		}
	}
	store_get_stats(st, &after);
	printf("store-bench: %d watchers: %zu bytes in the store (%zu per watcher)\n", WATCHERS,
	       after.mem.cur_bytes - before.mem.cur_bytes,
	       (after.mem.cur_bytes - before.mem.cur_bytes) / WATCHERS);
	printf("store-bench: %u objects: %zu object bytes, history %u events %zu bytes, store "
	       "total %zu bytes, log %llu bytes, snapshots %u\n",
	       after.objects, after.object_bytes, after.history_events, after.history_bytes,
	       after.mem.cur_bytes, (unsigned long long)after.log_bytes, after.snapshots);
	for (int i = 0; i < WATCHERS; i++)
		store_watch_close(watchers[i]);
	store_close(st);
	remove_store_files(argv[1]);
	return 0;
}
