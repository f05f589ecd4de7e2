/*
 * ctrl_sched.c - the scheduler: binds pending pods to nodes through pods/binding.
 *
 * A pass reads the nodes (sorted by name, found by binary search), the Devices (hardware
 * per node) and, from the pods cache, each node's use and the pending pods (without the
 * cache, every pod): bound, non-terminal pods count against their node's memory and pod slots;
 * pending pods (no spec.nodeName, schedulerName default-scheduler or empty, not being
 * deleted, not terminal) are scheduled at most K32_CTRL_BATCH per pass: never-tried pods
 * first, oldest first, then the ones tried longest ago.
 *
 * The scheduling queue, after kube-scheduler's active / backoff / unschedulable queues: a
 * pod that fits nowhere is parked with the cluster's fingerprint (the nodes' names, labels,
 * taints, readiness, hardware, allocatable and the room their bound pods leave). It is tried
 * again only when that fingerprint changes (a node or a pod that could make room changed),
 * and not before its backoff (K32_CTRL_SCHED_BACKOFF_INITIAL_MS doubling to _MAX_MS per
 * failure), or after K32_CTRL_SCHED_PARK_MAX_S parked. A pass runs again at once only while
 * pods it could try remain; otherwise it asks to be woken at the next backoff's end. So a
 * cluster with unschedulable pods and nothing changing writes nothing: the FailedScheduling
 * event of a pod is written again only when its message changes or after
 * K32_CTRL_SCHED_EVENT_INTERVAL_S (the API's event series counts it), and the condition only
 * when it differs.
 *
 * Filters, in Kubernetes' order, stop at the first that fails for a node; that failure is
 * the node's reason in the FailedScheduling message:
 *   unschedulable (spec.unschedulable, unless tolerated), node affinity/selector
 *   (nodeSelector + required nodeAffinity terms, matchFields metadata.name included),
 *   taints NoSchedule/NoExecute (Ready False/Unknown count as the not-ready/unreachable
 *   taints), hardware (kube32.io/hardware), pod count, memory.
 * Score (feasible nodes): the sum of the free fractions of memory and pod slots after
 * placing the pod, so replicas spread; ties go to the first node in name order.
 *
 * A pod that fits nowhere gets PodScheduled=False/Unschedulable and a Warning event
 * FailedScheduling "0/N nodes are available: <count> <reason>, ... ." followed by per-node
 * details (the shortfall in bytes); the API's event series turns repeats into count++.
 */
#include "ctrl/ctrl_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/k32_crc32.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"

struct sched_node {
	const cJSON *node; /* in the pass's node array */
	const char *name;
	bool mem_limited;   /* allocatable memory known */
	uint64_t mem_alloc; /* bytes */
	uint64_t mem_used;  /* bytes of the bound, non-terminal pods */
	uint32_t pods_alloc;
	uint32_t pods_used;
	char hw[256]; /* annotation + "i2c:<model>" per Device */
};

/* A pod the pass may try: a detached copy and its place in the order. */
struct sched_cand {
	cJSON *pod;
	uint64_t key;	   /* ctrl_schedq_key of its uid */
	uint64_t tried_us; /* 0: never tried: goes first */
};

/* Candidates of one class, the best K32_CTRL_BATCH kept. */
struct sched_cands {
	struct sched_cand c[K32_CTRL_BATCH];
	uint32_t n;
	uint32_t more; /* eligible pods that did not make the batch */
};

struct sched_pass {
	struct sched_node *nodes;
	size_t nodes_len; /* bytes of nodes */
	uint32_t count;
	uint64_t now;
	struct sched_cands *ready; /* may be tried now */
	struct sched_cands *moved; /* may be tried if the cluster's fingerprint changed */
	uint32_t untracked;	   /* pending pods the full queue could not take */
	bool parked;		   /* a pod found no node in this pass */
	bool any_parked;	   /* a pending pod is parked (backing off included) */
};

static int sched_node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sched_node *)a)->name, ((const struct sched_node *)b)->name);
}

/* The node of that name (sp->nodes is sorted by name), or NULL. */
static struct sched_node *sched_find(struct sched_pass *sp, const char *name)
{
	if (!name || !sp->count)
		return NULL;
	struct sched_node key = {.name = name};
	return bsearch(&key, sp->nodes, sp->count, sizeof(sp->nodes[0]), sched_node_cmp);
}

static void sched_hw_add(struct sched_node *n, const char *item)
{
	size_t len = strlen(n->hw);
	if (len + strlen(item) + 2 < sizeof(n->hw))
		snprintf(n->hw + len, sizeof(n->hw) - len, "%s%s", len ? "," : "", item);
}

static bool sched_device(struct ctrl *c, cJSON *dev, void *ctx)
{
	(void)c;
	struct sched_node *n = sched_find(ctx, ctrl_jstr(dev, "spec.node"));
	const char *model = ctrl_jstr(dev, "spec.model");
	if (n && model) {
		char item[64];
		snprintf(item, sizeof(item), "i2c:%s", model);
		sched_hw_add(n, item);
	}
	return true;
}

/* Scheduling order: never tried first, then tried longest ago; then oldest, then by name. */
static int sched_cand_cmp(const void *pa, const void *pb)
{
	const struct sched_cand *a = pa, *b = pb;
	if (a->tried_us != b->tried_us)
		return a->tried_us < b->tried_us ? -1 : 1;
	const char *ta = ctrl_jstr(a->pod, "metadata.creationTimestamp");
	const char *tb = ctrl_jstr(b->pod, "metadata.creationTimestamp");
	int r = strcmp(ta ? ta : "", tb ? tb : "");
	if (r)
		return r;
	const char *na = ctrl_jstr(a->pod, "metadata.name");
	const char *nb = ctrl_jstr(b->pod, "metadata.name");
	return strcmp(na ? na : "", nb ? nb : "");
}

/* Keeps pod among the best K32_CTRL_BATCH of cs (a copy); counts the ones left out. */
static bool sched_cand_add(struct ctrl *c, struct sched_cands *cs, const cJSON *pod, uint64_t key,
			   uint64_t tried_us)
{
	struct sched_cand in = {(cJSON *)pod, key, tried_us};
	uint32_t slot = cs->n;
	if (cs->n == K32_CTRL_BATCH) {
		uint32_t worst = 0;
		for (uint32_t i = 1; i < cs->n; i++)
			if (sched_cand_cmp(&cs->c[i], &cs->c[worst]) > 0)
				worst = i;
		cs->more++;
		if (sched_cand_cmp(&in, &cs->c[worst]) >= 0)
			return true;
		cJSON_Delete(cs->c[worst].pod);
		cs->c[worst].pod = NULL;
		slot = worst;
	}
	in.pod = cJSON_Duplicate(pod, true);
	if (!in.pod) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "scheduler: out of memory");
		return false;
	}
	cs->c[slot] = in;
	if (slot == cs->n)
		cs->n++;
	return true;
}

static void sched_cands_free(struct sched_cands *cs)
{
	for (uint32_t i = 0; cs && i < cs->n; i++)
		cJSON_Delete(cs->c[i].pod);
	ctrl_free(cs, sizeof(*cs));
}

static bool sched_pod(struct ctrl *c, cJSON *pod, void *ctx)
{
	struct sched_pass *sp = ctx;
	if (ctrl_pod_terminal(pod))
		return true;
	const char *node = ctrl_jstr(pod, "spec.nodeName");
	if (node && node[0]) {
		struct sched_node *n = sched_find(sp, node);
		if (n) {
			n->mem_used += ctrl_pod_memory(pod);
			n->pods_used++;
		}
		return true;
	}
	const char *sn = ctrl_jstr(pod, "spec.schedulerName");
	if (ctrl_deleting(pod) || (sn && sn[0] && strcmp(sn, CTRL_SCHEDULER_NAME)))
		return true;
	const char *uid = ctrl_jstr(pod, "metadata.uid");
	if (!uid)
		return true;
	uint64_t key = ctrl_schedq_key(uid);
	struct ctrl_schedq_ent *e = ctrl_schedq_find(&c->schedq, key, true);
	if (!e) { /* the queue is full: this pod waits until it has room */
		sp->untracked++;
		return true;
	}
	e->seen = c->sched_pass;
	if (e->parked_us)
		sp->any_parked = true;
	if (sp->now < e->retry_us)
		return true; /* backing off */
	struct sched_cands *into = sp->ready;
	if (e->parked_us && e->fp == c->sched_fp &&
	    sp->now - e->parked_us < (uint64_t)K32_CTRL_SCHED_PARK_MAX_S * 1000000u)
		into = sp->moved; /* nothing it failed on has changed, as of the last pass */
	return sched_cand_add(c, into, pod, key, e->tried_us);
}

static void sched_use(void *ctx, const char *node, uint64_t mem, uint32_t pods)
{
	struct sched_node *n = sched_find(ctx, node);
	if (n) {
		n->mem_used += mem;
		n->pods_used += pods;
	}
}

/* The node's reason for rejecting pod, or NULL when it fits. detail gets numbers. */
static const char *sched_filter(const cJSON *pod, const struct sched_node *n, uint64_t need,
				const char *want, char *reason, size_t rcap, char *detail,
				size_t dcap)
{
	const cJSON *spec = cJSON_GetObjectItem(pod, "spec");
	const cJSON *tol = cJSON_GetObjectItem(spec, "tolerations");
	const cJSON *nspec = cJSON_GetObjectItem(n->node, "spec");
	detail[0] = 0;
	if (cJSON_IsTrue(cJSON_GetObjectItem(nspec, "unschedulable")) &&
	    !ctrl_tolerates(tol, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
		return "node(s) were unschedulable";
	if (!ctrl_node_affinity_matches(spec, n->node))
		return "node(s) didn't match Pod's node affinity/selector";
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(nspec, "taints"))
	{
		const char *key = ctrl_jstr(t, "key");
		const char *val = ctrl_jstr(t, "value");
		const char *eff = ctrl_jstr(t, "effect");
		if (!key || !eff || (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute")))
			continue;
		if (!ctrl_tolerates(tol, key, val, eff)) {
			snprintf(reason, rcap, "node(s) had untolerated taint {%s: %s}", key,
				 val ? val : "");
			return reason;
		}
	}
	const char *ready = ctrl_cond_status(n->node, "Ready");
	if (ready && strcmp(ready, "True")) {
		const char *key = strcmp(ready, "False") ? "node.kubernetes.io/unreachable"
							 : "node.kubernetes.io/not-ready";
		if (!ctrl_tolerates(tol, key, "", "NoSchedule")) {
			snprintf(reason, rcap, "node(s) had untolerated taint {%s: }", key);
			return reason;
		}
	}
	char missing[96];
	if (!ctrl_hardware_met(want, n->hw, missing, sizeof(missing))) {
		snprintf(detail, dcap, "no hardware \"%.40s\" (has \"%.90s\")", missing,
			 n->hw[0] ? n->hw : "none");
		return "node(s) didn't have the requested hardware";
	}
	if (n->pods_used + 1 > n->pods_alloc) {
		snprintf(detail, dcap, "%u of %u pods", (unsigned)n->pods_used,
			 (unsigned)n->pods_alloc);
		return "Too many pods";
	}
	if (n->mem_limited && (n->mem_used > n->mem_alloc || need > n->mem_alloc - n->mem_used)) {
		uint64_t free_b = n->mem_used > n->mem_alloc ? 0 : n->mem_alloc - n->mem_used;
		snprintf(detail, dcap,
			 "pod needs %llu bytes (limits + %u overhead), %llu of %llu free",
			 (unsigned long long)need, (unsigned)K32_CTRL_POD_OVERHEAD_BYTES,
			 (unsigned long long)free_b, (unsigned long long)n->mem_alloc);
		return "Insufficient memory";
	}
	return NULL;
}

/* Reads the annotation of hardware the pod asks for, or its label form. */
static const char *sched_pod_hw(const cJSON *pod)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(
	    k32_json_find(pod, "metadata.annotations"), "kube32.io/hardware");
	if (cJSON_IsString(a))
		return a->valuestring;
	a = cJSON_GetObjectItemCaseSensitive(k32_json_find(pod, "metadata.labels"),
					     "kube32.io/hardware");
	return cJSON_IsString(a) ? a->valuestring : NULL;
}

/* Builds the "0/N nodes are available: ..." message; returns the chosen node or NULL. */
static struct sched_node *sched_choose(struct sched_pass *sp, const cJSON *pod, char *msg,
				       size_t cap)
{
	/* reason histogram (distinct reasons <= count of nodes) */
	struct {
		char text[160];
		uint32_t count;
	} *hist = ctrl_zalloc((sp->count ? sp->count : 1) * sizeof(*hist));
	size_t hist_len = (sp->count ? sp->count : 1) * sizeof(*hist);
	char details[K32_CTRL_MSG_LEN];
	uint32_t nh = 0;
	size_t dl = 0;
	details[0] = 0;
	struct sched_node *best = NULL;
	double best_score = -1;
	uint64_t need = ctrl_pod_memory(pod);
	const char *hw = sched_pod_hw(pod);
	for (uint32_t i = 0; i < sp->count; i++) {
		struct sched_node *n = &sp->nodes[i];
		char rbuf[200], detail[160];
		const char *why =
		    sched_filter(pod, n, need, hw, rbuf, sizeof(rbuf), detail, sizeof(detail));
		if (!why) {
			double mem =
			    n->mem_limited && n->mem_alloc
				? (double)(n->mem_alloc - n->mem_used - need) / (double)n->mem_alloc
				: 1.0;
			double pods = n->pods_alloc ? (double)(n->pods_alloc - n->pods_used - 1) /
							  (double)n->pods_alloc
						    : 0;
			double score = mem + pods;
			if (score > best_score) {
				best_score = score;
				best = n;
			}
			continue;
		}
		uint32_t k = 0;
		while (k < nh && strcmp(hist[k].text, why))
			k++;
		if (hist && k == nh) {
			snprintf(hist[k].text, sizeof(hist[k].text), "%.159s", why);
			nh++;
		}
		if (hist)
			hist[k].count++;
		if (detail[0] && dl + 8 < sizeof(details))
			dl += (size_t)snprintf(details + dl, sizeof(details) - dl, "%s%s: %s",
					       dl ? "; " : "", n->name, detail);
		if (dl >= sizeof(details))
			dl = sizeof(details) - 1;
	}
	if (best) {
		ctrl_free(hist, hist_len);
		return best;
	}
	/* Kubernetes sorts the "<count> <reason>" strings */
	char items[8][200];
	uint32_t ni = 0;
	for (uint32_t k = 0; hist && k < nh && ni < 8; k++)
		snprintf(items[ni++], sizeof(items[0]), "%u %s", (unsigned)hist[k].count,
			 hist[k].text);
	for (uint32_t a = 1; a < ni; a++)
		for (uint32_t b = a; b > 0 && strcmp(items[b - 1], items[b]) > 0; b--) {
			char t[200];
			memcpy(t, items[b], sizeof(t));
			memcpy(items[b], items[b - 1], sizeof(t));
			memcpy(items[b - 1], t, sizeof(t));
		}
	size_t ml = (size_t)snprintf(msg, cap, "0/%u nodes are available", (unsigned)sp->count);
	if (sp->count == 0 && ml < cap)
		ml += (size_t)snprintf(msg + ml, cap - ml, ": no nodes are registered");
	for (uint32_t k = 0; k < ni && ml < cap; k++)
		ml += (size_t)snprintf(msg + ml, cap - ml, "%s%s", k ? ", " : ": ", items[k]);
	if (ml < cap)
		ml += (size_t)snprintf(msg + ml, cap - ml, ".");
	if (details[0] && ml < cap)
		snprintf(msg + ml, cap - ml, " Details: %.*s.", (int)(cap - ml), details);
	ctrl_free(hist, hist_len);
	return NULL;
}

static void sched_event(struct ctrl *c, const cJSON *pod, const char *type, const char *reason,
			const char *msg)
{
	struct ctrl_event_ref ref = {"v1", "Pod", ctrl_jstr(pod, "metadata.namespace"),
				     ctrl_jstr(pod, "metadata.name"),
				     ctrl_jstr(pod, "metadata.uid")};
	struct k32_err err;
	if (ref.ns && ref.name &&
	    ctrl_event_record(c, &ref, type, reason, msg, CTRL_SCHEDULER_NAME, &err))
		k32_log(K32_LOG_DEBUG, "ctrl", "event %s for pod %s: %s", reason, ref.name,
			err.msg);
}

/* Patches the PodScheduled condition when it differs (strategic merge keeps the others). */
static void sched_set_condition(struct ctrl *c, const cJSON *pod, const char *st,
				const char *reason, const char *msg)
{
	cJSON *status = cJSON_Duplicate(cJSON_GetObjectItem(pod, "status"), true);
	if (!status)
		status = cJSON_CreateObject();
	if (!status)
		return;
	if (ctrl_cond_set(c, status, "PodScheduled", st, reason, msg, false)) {
		cJSON *cond = cJSON_Duplicate(
		    ctrl_cond_find(cJSON_GetObjectItem(status, "conditions"), "PodScheduled"),
		    true);
		cJSON *patch = cJSON_CreateObject();
		cJSON *ps = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
		cJSON *arr = ps ? cJSON_AddArrayToObject(ps, "conditions") : NULL;
		if (arr && cond) {
			cJSON_AddItemToArray(arr, cond);
			cond = NULL;
			char target[600];
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/status",
				 ctrl_jstr(pod, "metadata.namespace"),
				 ctrl_jstr(pod, "metadata.name"));
			ctrl_write(c, "PATCH", target, "application/strategic-merge-patch+json",
				   patch, NULL);
		}
		cJSON_Delete(cond);
		cJSON_Delete(patch);
	}
	cJSON_Delete(status);
}

/* How long a pod that failed attempts times in a row waits before the next try. */
static uint64_t sched_backoff_us(uint32_t attempts)
{
	uint64_t ms = K32_CTRL_SCHED_BACKOFF_INITIAL_MS;
	for (uint32_t i = 1; i < attempts && ms < K32_CTRL_SCHED_BACKOFF_MAX_MS; i++)
		ms *= 2;
	if (ms > K32_CTRL_SCHED_BACKOFF_MAX_MS)
		ms = K32_CTRL_SCHED_BACKOFF_MAX_MS;
	return ms * 1000u;
}

/* A pod that fits nowhere: parked, its condition and (throttled) event written. */
static void sched_unschedulable(struct ctrl *c, struct sched_pass *sp, const cJSON *pod,
				uint64_t key, const char *msg)
{
	struct ctrl_schedq_ent *e = ctrl_schedq_find(&c->schedq, key, false);
	k32_mutex_lock(&c->lock);
	c->stats.unschedulable++;
	k32_mutex_unlock(&c->lock);
	sp->parked = true;
	sched_set_condition(c, pod, "False", "Unschedulable", msg);
	uint32_t h = k32_crc32(0, msg, strlen(msg));
	bool again = e && e->event_us && e->msg_hash == h &&
		     sp->now - e->event_us < (uint64_t)K32_CTRL_SCHED_EVENT_INTERVAL_S * 1000000u;
	if (!again) {
		sched_event(c, pod, "Warning", "FailedScheduling", msg);
		if (e) {
			e->msg_hash = h;
			e->event_us = sp->now ? sp->now : 1;
		}
	}
	if (e) {
		e->attempts++;
		e->tried_us = sp->now;
		e->parked_us = sp->now ? sp->now : 1;
		e->retry_us = sp->now + sched_backoff_us(e->attempts);
	}
}

static void sched_one(struct ctrl *c, struct sched_pass *sp, const struct sched_cand *cand)
{
	const cJSON *pod = cand->pod;
	const char *ns = ctrl_jstr(pod, "metadata.namespace");
	const char *name = ctrl_jstr(pod, "metadata.name");
	if (!ns || !name)
		return;
	char msg[K32_CTRL_MSG_LEN];
	msg[0] = 0;
	struct sched_node *n = sched_choose(sp, pod, msg, sizeof(msg));
	if (!n) {
		sched_unschedulable(c, sp, pod, cand->key, msg);
		return;
	}
	char target[600];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
	cJSON *b = cJSON_CreateObject();
	if (!b)
		return;
	cJSON_AddStringToObject(b, "apiVersion", "v1");
	cJSON_AddStringToObject(b, "kind", "Binding");
	cJSON *md = cJSON_AddObjectToObject(b, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON *tg = cJSON_AddObjectToObject(b, "target");
	cJSON_AddStringToObject(tg, "apiVersion", "v1");
	cJSON_AddStringToObject(tg, "kind", "Node");
	cJSON_AddStringToObject(tg, "name", n->name);
	int code = ctrl_write(c, "POST", target, NULL, b, NULL);
	cJSON_Delete(b);
	if (code != 201 && code != 200) {
		/* not placed (a conflict, the store full): back off, still active */
		struct ctrl_schedq_ent *e = ctrl_schedq_find(&c->schedq, cand->key, false);
		if (e) {
			e->attempts++;
			e->tried_us = sp->now;
			e->retry_us = sp->now + sched_backoff_us(e->attempts);
		}
		return;
	}
	ctrl_schedq_remove(c->schedq, cand->key);
	n->mem_used += ctrl_pod_memory(pod);
	n->pods_used++;
	k32_mutex_lock(&c->lock);
	c->stats.bound++;
	k32_mutex_unlock(&c->lock);
	snprintf(msg, sizeof(msg), "Successfully assigned %s/%s to %s", ns, name, n->name);
	sched_set_condition(c, pod, "True", "Scheduled", "");
	sched_event(c, pod, "Normal", "Scheduled", msg);
}

/* CRC-32 of a JSON value's text (0 when absent). */
static uint32_t sched_crc_json(uint32_t crc, const cJSON *v)
{
	if (!v)
		return crc;
	char *t = cJSON_PrintUnformatted(v);
	if (t)
		crc = k32_crc32(crc, t, strlen(t));
	cJSON_free(t);
	return crc;
}

/*
 * The cluster as a parked pod saw it: what any filter reads of each node, and the room its
 * bound pods leave. Heartbeats (condition times, Lease renewals) do not change it.
 */
static uint32_t sched_fingerprint(const struct sched_pass *sp)
{
	uint32_t crc = k32_crc32(0, &sp->count, sizeof(sp->count));
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct sched_node *n = &sp->nodes[i];
		uint64_t nums[4] = {n->mem_limited ? n->mem_alloc : UINT64_MAX, n->mem_used,
				    n->pods_alloc, n->pods_used};
		crc = k32_crc32(crc, n->name, strlen(n->name) + 1);
		crc = k32_crc32(crc, nums, sizeof(nums));
		crc = k32_crc32(crc, n->hw, strlen(n->hw) + 1);
		crc = sched_crc_json(crc, k32_json_find(n->node, "metadata.labels"));
		crc = sched_crc_json(crc, cJSON_GetObjectItem(n->node, "spec"));
		const char *ready = ctrl_cond_status(n->node, "Ready");
		crc = k32_crc32(crc, ready ? ready : "-", strlen(ready ? ready : "-") + 1);
	}
	return crc;
}

/* The earliest time a queued pod may be tried (accumulated over the entries). */
struct sched_wake {
	const struct ctrl *c;
	uint64_t at;
};

static void sched_wake_of(struct ctrl_schedq_ent *e, void *ctx)
{
	struct sched_wake *w = ctx;
	uint64_t t = e->retry_us;
	if (e->parked_us && e->fp == w->c->sched_fp) {
		uint64_t flush = e->parked_us + (uint64_t)K32_CTRL_SCHED_PARK_MAX_S * 1000000u;
		if (flush > t)
			t = flush;
	}
	if (t < w->at)
		w->at = t;
}

struct sched_sync {
	cJSON *old;   /* the last pass's copies, sorted by name */
	cJSON *cur;   /* next of them not yet matched */
	cJSON *fresh; /* this pass's */
	bool failed;
};

static const char *sched_node_name(const cJSON *n)
{
	const char *s = ctrl_jstr(n, "metadata.name");
	return s ? s : "";
}

/* One cached node (in name order): its last copy when its resourceVersion is the same,
 * else a new copy. */
static bool sched_node_sync(struct ctrl *c, cJSON *node, void *ctx)
{
	(void)c;
	struct sched_sync *ss = ctx;
	const char *name = sched_node_name(node);
	while (ss->cur && strcmp(sched_node_name(ss->cur), name) < 0)
		ss->cur = ss->cur->next; /* gone */
	cJSON *keep = NULL;
	if (ss->cur && !strcmp(sched_node_name(ss->cur), name)) {
		const char *rv = ctrl_jstr(node, "metadata.resourceVersion");
		const char *was = ctrl_jstr(ss->cur, "metadata.resourceVersion");
		cJSON *next = ss->cur->next;
		if (rv && was && !strcmp(rv, was))
			keep = cJSON_DetachItemViaPointer(ss->old, ss->cur);
		ss->cur = next;
	}
	if (!keep)
		keep = cJSON_Duplicate(node, true);
	if (!keep) {
		ss->failed = true;
		return false;
	}
	cJSON_AddItemToArray(ss->fresh, keep);
	return true;
}

/* The nodes, sorted by name, as the scheduler's copy kept between passes (c->sched_nodes):
 * from the cache only the nodes whose resourceVersion moved are copied again, so a pass
 * costs a walk over the nodes, not a copy of each. NULL on failure (c->perr). */
static cJSON *sched_nodes(struct ctrl *c)
{
	struct sched_sync ss = {c->sched_nodes, c->sched_nodes ? c->sched_nodes->child : NULL,
				cJSON_CreateArray(), false};
	int r = ss.fresh ? ctrl_cache_list(c, "/api/v1/nodes", sched_node_sync, &ss) : 0;
	cJSON_Delete(c->sched_nodes);
	c->sched_nodes = NULL;
	if (!ss.fresh || ss.failed) {
		cJSON_Delete(ss.fresh);
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "scheduler: out of memory");
		return NULL;
	}
	if (r) { /* no cache: a list through the API */
		cJSON_Delete(ss.fresh);
		ss.fresh = ctrl_list_array(c, "/api/v1/nodes", NULL);
		if (!ss.fresh)
			return NULL;
		/* the API lists by key: the same order as the cache's for names */
	}
	c->sched_nodes = ss.fresh;
	return ss.fresh;
}

void ctrl_sched_fini(struct ctrl *c)
{
	cJSON_Delete(c->sched_nodes);
	c->sched_nodes = NULL;
}

void ctrl_sched_pass(struct ctrl *c)
{
	struct sched_pass sp;
	memset(&sp, 0, sizeof(sp));
	sp.now = ctrl_now_us(c);
	c->sched_pass++;
	if (ctrl_cache_pending(c) == 0) {
		/* nothing to place (half the passes a pod change causes, e.g. its deletion):
		 * no copy of every node */
		ctrl_schedq_sweep(c->schedq, c->sched_pass);
		return;
	}
	const cJSON *nodes = sched_nodes(c);
	if (!nodes)
		return;
	int total = cJSON_GetArraySize(nodes);
	sp.nodes_len = (total ? (size_t)total : 1) * sizeof(*sp.nodes);
	sp.nodes = ctrl_zalloc(sp.nodes_len);
	sp.ready = ctrl_zalloc(sizeof(*sp.ready));
	sp.moved = ctrl_zalloc(sizeof(*sp.moved));
	struct sched_cand *order = NULL;
	size_t order_len = 2 * K32_CTRL_BATCH * sizeof(*order);
	if (!sp.nodes || !sp.ready || !sp.moved) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "scheduler: out of memory");
		goto out;
	}
	const cJSON *node;
	cJSON_ArrayForEach(node, nodes)
	{
		struct sched_node *n = &sp.nodes[sp.count];
		n->node = node;
		n->name = ctrl_jstr(node, "metadata.name");
		if (!n->name)
			continue;
		const char *mem = ctrl_jstr(node, "status.allocatable.memory");
		if (!mem)
			mem = ctrl_jstr(node, "status.capacity.memory");
		n->mem_limited = mem && kmeta_quantity_bytes(mem, &n->mem_alloc, NULL);
		const char *pods = ctrl_jstr(node, "status.allocatable.pods");
		if (!pods)
			pods = ctrl_jstr(node, "status.capacity.pods");
		n->pods_alloc = pods ? (uint32_t)strtoul(pods, NULL, 10) : 110;
		const cJSON *hw = cJSON_GetObjectItemCaseSensitive(
		    k32_json_find(node, "metadata.annotations"), "kube32.io/hardware");
		if (cJSON_IsString(hw))
			sched_hw_add(n, hw->valuestring);
		sp.count++;
	}
	/* by name: look-ups by binary search, ties of the score go to the first name */
	if (sp.count > 1) /* sp.nodes may be NULL with no node */
		qsort(sp.nodes, sp.count, sizeof(sp.nodes[0]), sched_node_cmp);
	/* Devices are optional: a failed list only means no Device-derived hardware */
	if (ctrl_list(c, "/apis/kube32.io/v1alpha1/devices", sched_device, &sp))
		k32_err_clear(&c->perr);
	/* from the pods cache: each node's use is kept up to date and only the pending pods
	 * are visited; without it, every pod is added up */
	if (ctrl_cache_sched(c, sched_use, sched_pod, &sp) &&
	    ctrl_list(c, "/api/v1/pods", sched_pod, &sp))
		goto out; /* a partial view: no sweep, no fingerprint */
	/* parked pods wait for a change: was there one since the last pass? */
	/* the fingerprint (every node's labels, spec and room, printed) only matters to
	 * parked pods (their wake-up compares it too): without any, a pass (a pod change's,
	 * typically) skips it */
	bool parked_before = sp.moved->n || sp.moved->more;
	bool changed = parked_before && sched_fingerprint(&sp) != c->sched_fp;
	order = ctrl_zalloc(order_len);
	if (!order) {
		k32_err_set(&c->perr, K32_ERR_NO_MEMORY, "ctrl", "scheduler: out of memory");
		goto out;
	}
	uint32_t n = 0, left = sp.ready->more;
	for (uint32_t i = 0; i < sp.ready->n; i++)
		order[n++] = sp.ready->c[i];
	sp.ready->n = 0; /* the copies now belong to order */
	if (changed) {
		for (uint32_t i = 0; i < sp.moved->n; i++)
			order[n++] = sp.moved->c[i];
		sp.moved->n = 0;
		left += sp.moved->more;
	}
	qsort(order, n, sizeof(*order), sched_cand_cmp);
	uint32_t tried = 0;
	for (; tried < n && tried < K32_CTRL_BATCH && ctrl_charge(c); tried++)
		sched_one(c, &sp, &order[tried]);
	left += n - tried;
	for (uint32_t i = 0; i < n; i++)
		cJSON_Delete(order[i].pod);
	/* the pods that failed now carry the cluster as they saw it, after this pass's binds */
	if (parked_before || sp.parked || sp.any_parked) {
		uint32_t fp = sched_fingerprint(&sp);
		for (uint32_t i = 0; i < tried; i++) {
			struct ctrl_schedq_ent *e =
			    ctrl_schedq_find(&c->schedq, order[i].key, false);
			if (e && e->parked_us == sp.now)
				e->fp = fp;
		}
		c->sched_fp = fp;
	}
	ctrl_schedq_sweep(c->schedq, c->sched_pass);
	if (left)
		c->more = true; /* pods it could try remain: not a spin, each try parks a pod */
	struct sched_wake w = {c, UINT64_MAX};
	ctrl_schedq_each(c->schedq, sched_wake_of, &w);
	if (w.at != UINT64_MAX)
		c->requeue_us = w.at > sp.now ? w.at : sp.now + 1;
	if (sp.untracked && (!c->sched_full_log_us || sp.now - c->sched_full_log_us > 60000000u)) {
		c->sched_full_log_us = sp.now ? sp.now : 1;
		k32_log(K32_LOG_WARN, "ctrl",
			"scheduler: %" PRIu32 " pending pods wait outside the scheduling queue, "
			"which holds K32_CTRL_SCHED_QUEUE_MAX=%u; they are considered as the "
			"queue drains (raise the limit for clusters this size)",
			sp.untracked, (unsigned)K32_CTRL_SCHED_QUEUE_MAX);
	}
out:
	ctrl_free(order, order_len);
	ctrl_free(sp.nodes, sp.nodes_len);
	sched_cands_free(sp.ready);
	sched_cands_free(sp.moved);
}
