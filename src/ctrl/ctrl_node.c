/*
 * ctrl_node.c - the node lifecycle controller: Lease heartbeats, NotReady, eviction.
 *
 * Every node_monitor_s (and on Node changes) it reads the Nodes and the Leases of
 * kube-node-lease. A node's heartbeat is its Lease's spec.renewTime plus its Ready
 * condition's lastHeartbeatTime; c->nodes remembers, per node, the last heartbeat seen and
 * when (on the controller's clock, as Kubernetes' nodeHealthMap does, so a board's clock may
 * be off). No new heartbeat for node_grace_s:
 *   - Ready becomes Unknown (reason NodeStatusUnknown), via the status subresource;
 *   - the taints node.kubernetes.io/unreachable NoSchedule and NoExecute are added;
 *   - pod_eviction_s later, the pods bound there that do not tolerate unreachable:NoExecute
 *     (or whose tolerationSeconds ran out) are deleted with grace 0 (their kubelet is not
 *     there to finish a graceful deletion) and a TaintManagerEviction event; their
 *     controllers then create replacements, which the scheduler puts on healthy nodes.
 * A heartbeat again: the taints go, and a Ready=Unknown the controller set becomes True
 * (reason KubeletReady) until the kubelet writes its own status.
 * Pods bound to a node that no longer exists (deleted with kubectl delete node) are deleted
 * with grace 0 once they are older than node_grace_s (Kubernetes' pod GC), scanned when a
 * node disappears and every resync_s.
 * The per-node table is sorted by name and grows with the nodes up to cfg.max_nodes
 * (K32_CTRL_MAX_NODES); nodes beyond it are not monitored, counted in one WARN naming the
 * limit when their number changes (at most once a minute otherwise), never one line per
 * node. A pass costs O(nodes log nodes) plus the pods of the nodes it evicts from (the pods
 * cache's node index), whatever the number of pods; the scan for pods of deleted nodes
 * reads every pod, but only when a node disappears and every resync_s.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_log.h"

#define NODE_UNREACHABLE "node.kubernetes.io/unreachable"

/* The heartbeat memory of node name, made when new; NULL past cfg.max_nodes (counted in
 * c->nodes_unmonitored) or out of memory. */
static struct ctrl_node_health *node_health(struct ctrl *c, const char *name, uint64_t now)
{
	void *t = c->nodes;
	bool created = false;
	struct ctrl_node_health *h = ctrl_name_slot(&t, &c->nodes_n, &c->nodes_cap, sizeof(*h),
						    c->cfg.max_nodes, name, &created);
	c->nodes = t;
	if (!h)
		c->nodes_unmonitored++;
	else if (created)
		h->beat_us = now;
	return h;
}

void ctrl_node_fini(struct ctrl *c)
{
	ctrl_free(c->nodes, c->nodes_cap * sizeof(c->nodes[0]));
	c->nodes = NULL;
	c->nodes_n = c->nodes_cap = 0;
}

struct node_leases {
	cJSON *arr; /* lease copies */
};

static bool node_lease(struct ctrl *c, cJSON *lease, void *ctx)
{
	(void)c;
	struct node_leases *nl = ctx;
	cJSON *d = cJSON_Duplicate(lease, true);
	if (d)
		cJSON_AddItemToArray(nl->arr, d);
	return true;
}

/* A Lease's name and renewTime, sorted by name for the look-ups of a pass. */
struct node_lease_ent {
	const char *name;
	const char *renew;
};

static int node_lease_cmp(const void *a, const void *b)
{
	return strcmp(((const struct node_lease_ent *)a)->name,
		      ((const struct node_lease_ent *)b)->name);
}

/* renewTime of node's Lease in the sorted table (count entries), or NULL. */
static const char *node_renew_time(const struct node_lease_ent *t, size_t count, const char *node)
{
	struct node_lease_ent key = {node, NULL};
	const struct node_lease_ent *e =
	    count ? bsearch(&key, t, count, sizeof(*t), node_lease_cmp) : NULL;
	return e ? e->renew : NULL;
}

static bool node_has_taint(const cJSON *node, const char *key, const char *effect)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, k32_json_find(node, "spec.taints"))
	{
		const char *k = ctrl_jstr(t, "key"), *e = ctrl_jstr(t, "effect");
		if (k && e && !strcmp(k, key) && !strcmp(e, effect))
			return true;
	}
	return false;
}

/* Sets (add=true) or removes the unreachable taints with one merge patch. */
static void node_taints(struct ctrl *c, const cJSON *node, bool add)
{
	bool has = node_has_taint(node, NODE_UNREACHABLE, "NoSchedule") &&
		   node_has_taint(node, NODE_UNREACHABLE, "NoExecute");
	bool any = node_has_taint(node, NODE_UNREACHABLE, "NoSchedule") ||
		   node_has_taint(node, NODE_UNREACHABLE, "NoExecute");
	if ((add && has) || (!add && !any) || !ctrl_charge(c))
		return;
	cJSON *patch = cJSON_CreateObject();
	cJSON *spec = patch ? cJSON_AddObjectToObject(patch, "spec") : NULL;
	cJSON *taints = spec ? cJSON_AddArrayToObject(spec, "taints") : NULL;
	if (!taints) {
		cJSON_Delete(patch);
		return;
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, k32_json_find(node, "spec.taints"))
	{
		const char *k = ctrl_jstr(t, "key");
		if (!k || strcmp(k, NODE_UNREACHABLE))
			cJSON_AddItemToArray(taints, cJSON_Duplicate(t, true));
	}
	if (add) {
		char now[32];
		ctrl_fmt_time(ctrl_wall_s(c), now, sizeof(now));
		const char *effects[2] = {"NoSchedule", "NoExecute"};
		for (int i = 0; i < 2; i++) {
			cJSON *x = cJSON_CreateObject();
			if (!x)
				break;
			cJSON_AddStringToObject(x, "key", NODE_UNREACHABLE);
			cJSON_AddStringToObject(x, "effect", effects[i]);
			if (i == 1)
				cJSON_AddStringToObject(x, "timeAdded", now);
			cJSON_AddItemToArray(taints, x);
		}
	}
	char target[320];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s", ctrl_jstr(node, "metadata.name"));
	ctrl_write(c, "PATCH", target, "application/merge-patch+json", patch, NULL);
	cJSON_Delete(patch);
}

static void node_ready(struct ctrl *c, const cJSON *node, const char *st, const char *reason,
		       const char *msg)
{
	cJSON *status = cJSON_Duplicate(cJSON_GetObjectItem(node, "status"), true);
	if (!status)
		status = cJSON_CreateObject();
	if (status && ctrl_cond_set(c, status, "Ready", st, reason, msg, false) && ctrl_charge(c)) {
		cJSON *patch = cJSON_CreateObject();
		cJSON *ps = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
		cJSON *arr = ps ? cJSON_AddArrayToObject(ps, "conditions") : NULL;
		if (arr) {
			cJSON_AddItemToArray(
			    arr,
			    cJSON_Duplicate(
				ctrl_cond_find(cJSON_GetObjectItem(status, "conditions"), "Ready"),
				true));
			char target[320];
			snprintf(target, sizeof(target), "/api/v1/nodes/%s/status",
				 ctrl_jstr(node, "metadata.name"));
			ctrl_write(c, "PATCH", target, "application/strategic-merge-patch+json",
				   patch, NULL);
		}
		cJSON_Delete(patch);
	}
	cJSON_Delete(status);
}

/* Seconds a pod tolerates the unreachable NoExecute taint: -1 forever, 0 not at all. */
static int64_t node_toleration_s(const cJSON *pod)
{
	const cJSON *t;
	int64_t best = 0;
	cJSON_ArrayForEach(t, k32_json_find(pod, "spec.tolerations"))
	{
		cJSON *one = cJSON_CreateArray();
		if (!one)
			break;
		cJSON_AddItemToArray(one, cJSON_Duplicate(t, true));
		bool ok = ctrl_tolerates(one, NODE_UNREACHABLE, "", "NoExecute");
		cJSON_Delete(one);
		if (!ok)
			continue;
		const cJSON *s = cJSON_GetObjectItem(t, "tolerationSeconds");
		if (!cJSON_IsNumber(s))
			return -1;
		if ((int64_t)s->valuedouble > best)
			best = (int64_t)s->valuedouble;
	}
	return best;
}

struct node_evict {
	uint64_t down_s; /* seconds the node has been unreachable */
	uint32_t grace_s;
};

static bool node_evict_pod(struct ctrl *c, cJSON *pod, void *ctx)
{
	struct node_evict *ne = ctx;
	if (ctrl_pod_terminal(pod))
		return true;
	int64_t tol = node_toleration_s(pod);
	uint64_t after = tol > 0 ? (uint64_t)tol : ne->grace_s;
	if (tol < 0 || ne->down_s < after)
		return true;
	if (!ctrl_charge(c))
		return false;
	const char *ns = ctrl_jstr(pod, "metadata.namespace");
	const char *name = ctrl_jstr(pod, "metadata.name");
	char msg[600];
	snprintf(msg, sizeof(msg), "Marking for deletion Pod %s/%s", ns, name);
	struct ctrl_event_ref ref = {"v1", "Pod", ns, name, ctrl_jstr(pod, "metadata.uid")};
	struct k32_err err;
	ctrl_event_record(c, &ref, "Normal", "TaintManagerEviction", msg,
			  "node-lifecycle-controller", &err);
	int code = ctrl_pod_delete(c, pod, 0, false);
	if (code == 200) {
		k32_mutex_lock(&c->lock);
		c->stats.evicted++;
		k32_mutex_unlock(&c->lock);
	}
	return true;
}

struct node_orphans {
	const cJSON *nodes;
	uint64_t wall_s;
	uint32_t grace_s;
};

/* Deletes a pod bound to a node that does not exist (after the grace, from its creation). */
static bool node_orphan_pod(struct ctrl *c, cJSON *pod, void *ctx)
{
	struct node_orphans *no = ctx;
	const char *node = ctrl_jstr(pod, "spec.nodeName");
	if (!node || !node[0])
		return true;
	if (ctrl_name_find(c->nodes, c->nodes_n, sizeof(c->nodes[0]), node, NULL))
		return true;
	if (c->nodes_unmonitored) {
		/* the table does not hold every node: ask the node list */
		const cJSON *n;
		cJSON_ArrayForEach(n, no->nodes)
		{
			const char *nn = ctrl_jstr(n, "metadata.name");
			if (nn && !strcmp(nn, node))
				return true;
		}
	}
	uint64_t created = 0;
	if (!ctrl_parse_time(ctrl_jstr(pod, "metadata.creationTimestamp"), &created) ||
	    created + no->grace_s > no->wall_s)
		return true;
	if (!ctrl_charge(c))
		return false;
	ctrl_pod_delete(c, pod, 0, true);
	return true;
}

/* The Leases of kube-node-lease as a sorted (name, renewTime) table over lease copies in
 * *arr; false on a read failure (c->perr). */
static bool node_read_leases(struct ctrl *c, cJSON **arr, struct node_lease_ent **t, size_t *count,
			     size_t *len)
{
	struct node_leases nl = {cJSON_CreateArray()};
	*arr = nl.arr;
	*t = NULL;
	*count = *len = 0;
	if (!nl.arr ||
	    ctrl_list(c, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
		      node_lease, &nl))
		return false;
	size_t n = (size_t)cJSON_GetArraySize(nl.arr);
	if (!n)
		return true;
	*len = n * sizeof(**t);
	*t = ctrl_zalloc(*len);
	if (!*t) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl",
			    "node lifecycle: out of memory for %zu Leases", n);
		return false;
	}
	const cJSON *l;
	cJSON_ArrayForEach(l, nl.arr)
	{
		const char *name = ctrl_jstr(l, "metadata.name");
		if (name)
			(*t)[(*count)++] =
			    (struct node_lease_ent){name, ctrl_jstr(l, "spec.renewTime")};
	}
	qsort(*t, *count, sizeof(**t), node_lease_cmp);
	return true;
}

/* One line for the nodes past the table, when their number changed or once a minute. */
static void node_log_unmonitored(struct ctrl *c, uint32_t before, uint64_t now)
{
	if (!c->nodes_unmonitored)
		return;
	if (c->nodes_unmonitored == before && now - c->nodes_cap_log_us < 60000000u)
		return;
	c->nodes_cap_log_us = now;
	k32_log(K32_LOG_WARN, "ctrl",
		"node lifecycle: %" PRIu32 " nodes not monitored: %zu are, the limit "
		"(ctrl_config.max_nodes, K32_CTRL_MAX_NODES) is %" PRIu32 "; raise it",
		c->nodes_unmonitored, c->nodes_n, c->cfg.max_nodes);
}

void ctrl_node_pass(struct ctrl *c)
{
	cJSON *nodes = ctrl_list_array(c, "/api/v1/nodes", NULL);
	if (!nodes)
		return;
	cJSON *lease_arr = NULL;
	struct node_lease_ent *leases = NULL;
	size_t nleases = 0, leases_len = 0;
	if (!node_read_leases(c, &lease_arr, &leases, &nleases, &leases_len)) {
		ctrl_free(leases, leases_len);
		cJSON_Delete(lease_arr);
		cJSON_Delete(nodes);
		return;
	}
	uint64_t now = ctrl_now_us(c);
	uint32_t unmonitored = c->nodes_unmonitored;
	c->nodes_unmonitored = 0;
	for (size_t i = 0; i < c->nodes_n; i++)
		c->nodes[i].seen = false;
	const cJSON *node;
	cJSON_ArrayForEach(node, nodes)
	{
		const char *name = ctrl_jstr(node, "metadata.name");
		if (!name)
			continue;
		struct ctrl_node_health *h = node_health(c, name, now);
		if (!h)
			continue;
		h->seen = true;
		const char *renew = node_renew_time(leases, nleases, name);
		const char *hb =
		    ctrl_jstr(ctrl_cond_find(k32_json_find(node, "status.conditions"), "Ready"),
			      "lastHeartbeatTime");
		char beat[sizeof(h->beat)];
		snprintf(beat, sizeof(beat), "%.38s|%.38s", renew ? renew : "", hb ? hb : "");
		if (strcmp(beat, h->beat)) {
			snprintf(h->beat, sizeof(h->beat), "%s", beat);
			h->beat_us = now;
		}
		const char *ready = ctrl_cond_status(node, "Ready");
		bool silent = now - h->beat_us >= (uint64_t)c->cfg.node_grace_s * 1000000u;
		if (!silent) {
			h->unreachable_us = 0;
			node_taints(c, node, false);
			const cJSON *rc =
			    ctrl_cond_find(k32_json_find(node, "status.conditions"), "Ready");
			const char *reason = ctrl_jstr(rc, "reason");
			if (ready && !strcmp(ready, "Unknown") && reason &&
			    !strcmp(reason, "NodeStatusUnknown"))
				node_ready(c, node, "True", "KubeletReady",
					   "kubelet is posting ready status (lease renewed)");
			continue;
		}
		if (!h->unreachable_us)
			h->unreachable_us = now;
		if (!ready || strcmp(ready, "Unknown"))
			node_ready(c, node, "Unknown", "NodeStatusUnknown",
				   "Kubelet stopped posting node status.");
		node_taints(c, node, true);
		if (c->cfg.pod_eviction_s == UINT32_MAX)
			continue;
		struct node_evict ne = {(now - h->unreachable_us) / 1000000u,
					c->cfg.pod_eviction_s};
		char path[400], enc[300];
		char sel[300];
		snprintf(sel, sizeof(sel), "spec.nodeName=%s", name);
		ctrl_url_encode(sel, enc, sizeof(enc));
		snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=%s", enc);
		ctrl_list(c, path, node_evict_pod, &ne);
	}
	/* forget the nodes that are gone (the table stays sorted) */
	size_t kept = 0;
	for (size_t i = 0; i < c->nodes_n; i++)
		if (c->nodes[i].seen)
			c->nodes[kept++] = c->nodes[i];
	bool gone = kept < c->nodes_n;
	c->nodes_n = kept;
	node_log_unmonitored(c, unmonitored, now);
	if (gone || now - c->orphan_scan_us >= (uint64_t)c->cfg.resync_s * 1000000u) {
		struct node_orphans no = {nodes, ctrl_wall_s(c), c->cfg.node_grace_s};
		if (ctrl_list(c, "/api/v1/pods", node_orphan_pod, &no) == K32_OK)
			c->orphan_scan_us = now;
	}
	ctrl_free(leases, leases_len);
	cJSON_Delete(lease_arr);
	cJSON_Delete(nodes);
}
