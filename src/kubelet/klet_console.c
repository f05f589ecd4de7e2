/*
 * klet_console.c - the node console: the K32_CMD: line protocol of the reference boards
 * (their serial console; in the simulator stdin and POST /console on the pod server).
 *
 *   K32_CMD:PODS    one "K32_POD" line per pod: state, restarts, pool bytes, CPU ms
 *   K32_CMD:MEM     one "K32_MEM" line per region with its size, used, free and peak
 *                   bytes: pod_pool and kobj_region (socket rings and VMOs), both this
 *                   node's own, and heap (the default allocator: the JSON, HTTP and
 *                   compile scratch), the process's: scope=process says so (in kube32-sim
 *                   every board of the process shares it; on a board the process is the
 *                   node).
 *                   An unlimited region (the simulator's heap) says size=0 free=unlimited.
 *   K32_CMD:<other> first to the config's console_ext hook (kube32-sim's hw lines), then to
 *                   the node console's shared commands (src/console: TASKS with each
 *                   platform task's run time and busy share, BENCH, HELP)
 * Every answer ends with a "K32_END <command>" line; an error is one "K32_ERR ..." line.
 * Context: any thread; takes the kubelet's lock briefly.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "console/console.h"
#include "kobj/kobj.h"
#include "kubelet/klet_int.h"

static const char *cstate(const struct klet_pod *p)
{
	if (p->state == KLET_C_RUNNING)
		return "running";
	if (p->state == KLET_C_TERMINATED)
		return "terminated";
	return p->wait_reason[0] ? p->wait_reason : "waiting";
}

static k32_status_t cmd_pods(struct klet *k, struct k32_buf *out)
{
	k32_status_t st = K32_OK;
	uint32_t n = 0;
	k32_mutex_lock(&k->lock);
	for (uint32_t i = 0; i < k->max_pods && !st; i++) {
		const struct klet_pod *p = &k->pods[i];
		if (!p->used || p->gone)
			continue;
		n++;
		st = k32_buf_printf(
		    out, NULL,
		    "K32_POD %s state=%s restarts=%" PRIu32 " pool_bytes=%zu pool_peak=%zu "
		    "cpu_ms=%llu image=%s\n",
		    p->ref, cstate(p), p->restarts, p->mem_snap.pool_bytes, p->mem_snap.pool_peak,
		    (unsigned long long)(p->cpu_us / 1000), p->image);
	}
	k32_mutex_unlock(&k->lock);
	if (!st)
		st = k32_buf_printf(out, NULL, "K32_END PODS count=%" PRIu32 "\n", n);
	return st;
}

/* One K32_MEM line; limit 0 is an unlimited region, peak SIZE_MAX one that keeps none. */
static k32_status_t mem_line(struct k32_buf *out, const char *region, const char *scope,
			     size_t limit, size_t used, size_t peak)
{
	char free_s[24], peak_s[32] = "";
	if (limit)
		snprintf(free_s, sizeof(free_s), "%zu", limit > used ? limit - used : 0);
	else
		snprintf(free_s, sizeof(free_s), "unlimited");
	if (peak != SIZE_MAX)
		snprintf(peak_s, sizeof(peak_s), " peak=%zu", peak);
	return k32_buf_printf(out, NULL, "K32_MEM region=%s size=%zu used=%zu free=%s%s scope=%s\n",
			      region, limit, used, free_s, peak_s, scope);
}

static k32_status_t cmd_mem(struct klet *k, struct k32_buf *out)
{
	struct klet_stats s;
	klet_get_stats(k, &s);
	struct kobj_stats ks;
	kobj_stats_get(k->kobj, &ks);
	/* the default allocator's heap counts every block it hands out (k32_alloc.h) */
	const struct k32_heap *h = k32_default_allocator()->ud;
	k32_status_t st =
	    mem_line(out, "pod_pool", "node", s.pool_limit, s.pool_bytes, s.pool_peak);
	if (!st)
		st = mem_line(out, "kobj_region", "node", kobj_node_limits(k->kobj)->region_bytes,
			      ks.vmo_bytes, SIZE_MAX);
	/* read as k32_mem.c writes them: atomically (any thread allocates) */
	if (!st)
		st = mem_line(out, "heap", "process", h->stats.limit_bytes,
			      __atomic_load_n(&h->stats.cur_bytes, __ATOMIC_RELAXED),
			      __atomic_load_n(&h->stats.peak_bytes, __ATOMIC_RELAXED));
	if (!st)
		st = k32_buf_printf(out, NULL, "K32_END MEM count=3\n");
	return st;
}

/* Output of the shared console commands, appended to the answer buffer. */
struct con_sink {
	struct k32_buf *out;
	k32_status_t st;
};

static void con_to_buf(void *user, const char *s, size_t len)
{
	struct con_sink *sink = user;

	if (sink->st == K32_OK)
		sink->st = k32_buf_append(sink->out, s, len, NULL);
}

/* TASKS, BENCH and HELP: the node console's shared commands (src/console), with the same
 * "K32_END <command>" line the kubelet's own commands end with. */
static k32_status_t cmd_shared(const char *line, size_t len, const char *cmd, struct k32_buf *out)
{
	struct con_sink sink = {out, K32_OK};
	struct con con;
	size_t name_len = strcspn(cmd, ":");

	con_init(&con, con_builtin_cmds, con_builtin_count, con_to_buf, &sink);
	k32_status_t st = con_exec(&con, line, len);
	if (sink.st != K32_OK)
		return sink.st;
	if (st == K32_OK)
		return k32_buf_printf(out, NULL, "K32_END %.*s\n", (int)name_len, cmd);
	return K32_OK; /* con_exec wrote the K32_ERR line */
}

k32_status_t klet_console_exec(struct klet *k, const char *line, size_t len, struct k32_buf *out)
{
	char cmd[128];
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	static const char pre[] = "K32_CMD:";
	if (len < sizeof(pre) - 1 || memcmp(line, pre, sizeof(pre) - 1) ||
	    len - (sizeof(pre) - 1) >= sizeof(cmd))
		return k32_buf_printf(
		    out, NULL,
		    "K32_ERR expected K32_CMD:<PODS|MEM|TASKS|BENCH:...> (at most "
		    "%zu bytes)\n",
		    sizeof(cmd) - 1);
	memcpy(cmd, line + sizeof(pre) - 1, len - (sizeof(pre) - 1));
	cmd[len - (sizeof(pre) - 1)] = 0;
	if (!strcmp(cmd, "PODS"))
		return cmd_pods(k, out);
	if (!strcmp(cmd, "MEM"))
		return cmd_mem(k, out);
	if (k->cfg.console_ext) {
		k32_status_t st = k->cfg.console_ext(k->cfg.console_ext_ctx, cmd, out);
		if (st != K32_ERR_NOT_SUPPORTED)
			return st;
	}
	/* Everything else (TASKS, BENCH, HELP, or an unknown command's K32_ERR) is the shared
	 * console's. */
	return cmd_shared(line, len, cmd, out);
}
