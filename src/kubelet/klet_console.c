/*
 * klet_console.c - the node console: the K32_CMD: line protocol of the reference boards
 * (their serial console; in the simulator stdin and POST /console on the pod server).
 *
 *   K32_CMD:PODS    one "K32_POD" line per pod: state, restarts, pool bytes, CPU ms
 *   K32_CMD:MEM     one "K32_MEM" line per region with its free bytes (the pod pool; the
 *                   node heap of the default allocator)
 *   K32_CMD:TASKS   one "K32_TASK" line per platform task with its run time in ms (two
 *                   listings some time apart give each task's CPU share)
 *   K32_CMD:<other> handed to the config's console_ext hook (BENCH in kube32-sim)
 * Every answer ends with a "K32_END <command>" line; an error is one "K32_ERR ..." line.
 * Context: any thread; takes the kubelet's lock briefly.
 */
#include <stdio.h>
#include <string.h>

#include "kubelet/klet_int.h"

#define KLET_CONSOLE_MAX_TASKS 64

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
		st = k32_buf_printf(out, NULL,
				    "K32_POD %s state=%s restarts=%u pool_bytes=%zu pool_peak=%zu "
				    "cpu_ms=%llu image=%s\n",
				    p->ref, cstate(p), p->restarts, p->mem_snap.pool_bytes,
				    p->mem_snap.pool_peak, (unsigned long long)(p->cpu_us / 1000),
				    p->image);
	}
	k32_mutex_unlock(&k->lock);
	if (!st)
		st = k32_buf_printf(out, NULL, "K32_END PODS count=%u\n", n);
	return st;
}

static k32_status_t cmd_mem(struct klet *k, struct k32_buf *out)
{
	struct klet_stats s;
	klet_get_stats(k, &s);
	k32_status_t st = k32_buf_printf(
	    out, NULL,
	    "K32_MEM region=pod_pool size=%zu used=%zu free=%zu peak=%zu\n"
	    "K32_END MEM\n",
	    s.pool_limit, s.pool_bytes,
	    s.pool_limit > s.pool_bytes ? s.pool_limit - s.pool_bytes : 0, s.pool_peak);
	return st;
}

static k32_status_t cmd_tasks(struct k32_buf *out)
{
	const struct k32_platform_ops *pl = k32_plat();
	const struct k32_allocator *a = k32_default_allocator();
	size_t bytes = sizeof(struct k32_task_info) * KLET_CONSOLE_MAX_TASKS;
	struct k32_task_info *rows = k32_alloc(a, bytes);
	if (!rows)
		return k32_buf_printf(out, NULL, "K32_ERR TASKS: out of memory (%zu bytes)\n",
				      bytes);
	size_t n = 0;
	pl->task_list(rows, KLET_CONSOLE_MAX_TASKS, &n);
	size_t shown = n < KLET_CONSOLE_MAX_TASKS ? n : KLET_CONSOLE_MAX_TASKS;
	uint64_t now = k32_now_us();
	k32_status_t st = K32_OK;
	for (size_t i = 0; i < shown && !st; i++)
		st = k32_buf_printf(out, NULL,
				    "K32_TASK name=%s run_ms=%llu up_ms=%llu running=%d\n",
				    rows[i].name, (unsigned long long)(rows[i].cpu_us / 1000),
				    (unsigned long long)((now - rows[i].started_us) / 1000),
				    rows[i].running ? 1 : 0);
	k32_free(a, rows, bytes);
	if (!st)
		st = k32_buf_printf(out, NULL, "K32_END TASKS count=%zu\n", n);
	return st;
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
	if (!strcmp(cmd, "TASKS"))
		return cmd_tasks(out);
	if (k->cfg.console_ext) {
		k32_status_t st = k->cfg.console_ext(k->cfg.console_ext_ctx, cmd, out);
		if (st != K32_ERR_NOT_SUPPORTED)
			return st;
	}
	return k32_buf_printf(out, NULL,
			      "K32_ERR unknown command \"%s\" on node %s (PODS, MEM, TASKS%s)\n",
			      cmd, k->node, k->cfg.console_ext ? ", BENCH" : "");
}
