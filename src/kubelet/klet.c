/*
 * klet.c - the kubelet core: configuration, Node registration, Lease, the pod watch, the
 * worker that runs the pod life cycle, and pod status.
 *
 * Divisions:
 *   helpers           time format (API requests, watches, backoff and errors: src/kclient)
 *   node and lease    klet_register (create or patch the Node and its status), lease renew
 *   watch             list + watch of the pods bound to this node -> the pod table
 *   life cycle        the worker: start, run, exits and restarts with back-off, deletion
 *   status            building the pod status and patching pods/status when it changed
 *   public            klet_new / start / stop / free, logs, stats
 *
 * The watch task only records desired state (under lock) and wakes the worker; every
 * provider call and every status write happens on the worker (HTTP requests to pods on
 * the pod server's loop), so pod state changes have one writer besides notify.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet/klet_int.h"

#include "base/k32_base64.h"
#include "base/k32_json.h"
#include "base/k32_log.h"
#include "kmeta/kmeta.h"

/* ---- helpers -------------------------------------------------------------------------- */

void klet_fmt_time(uint64_t s, char *out, size_t cap)
{
	char t[KMETA_RFC3339_LEN]; /* kmeta's one RFC 3339 formatter */
	kmeta_rfc3339(s, t);
	snprintf(out, cap, "%s", t);
}

void klet_msgf(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, cap, fmt, ap);
	va_end(ap);
}

static uint64_t jitter(uint64_t span);

/* Waits ms unless the kubelet stops (k->cv is broadcast for much else: wait on). */
static void pause_until(struct klet *k, uint64_t ms)
{
	int64_t until = k32_deadline_after((int64_t)ms * 1000);
	k32_mutex_lock(&k->lock);
	while (!k->stopping && (int64_t)k32_now_us() < until)
		k32_plat()->cond_wait(&k->cv, &k->lock, until);
	k32_mutex_unlock(&k->lock);
}

static uint64_t klet_wall(void)
{
	return k32_plat()->wall_s();
}

void klet_wake(struct klet *k)
{
	/* the watcher waits on the same condition during its retry pause */
	k32_plat()->cond_broadcast(&k->cv);
}

static char *json_text(cJSON *j)
{
	return cJSON_PrintUnformatted(j);
}

/* ---- node and lease ------------------------------------------------------------------- */

cJSON *klet_node_status_json(struct klet *k, uint64_t now_s)
{
	char ts[32], mem[32], pods[16];
	klet_fmt_time(now_s, ts, sizeof(ts));
	if (!k->conditions_since[0])
		snprintf(k->conditions_since, sizeof(k->conditions_since), "%s", ts);
	snprintf(mem, sizeof(mem), "%zu", k->profile.pod_pool_bytes);
	snprintf(pods, sizeof(pods), "%" PRIu32, k->max_pods);
	cJSON *st = cJSON_CreateObject();
	cJSON *cap = cJSON_AddObjectToObject(st, "capacity");
	cJSON_AddStringToObject(cap, "cpu", "1");
	cJSON_AddStringToObject(cap, "memory", mem);
	cJSON_AddStringToObject(cap, "pods", pods);
	cJSON *alc = cJSON_AddObjectToObject(st, "allocatable");
	cJSON_AddStringToObject(alc, "cpu", "1");
	cJSON_AddStringToObject(alc, "memory", mem);
	cJSON_AddStringToObject(alc, "pods", pods);
	static const char *const types[][4] = {
	    {"MemoryPressure", "False", "KubeletHasSufficientMemory",
	     "kubelet has sufficient memory available"},
	    {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	    {"PIDPressure", "False", "KubeletHasSufficientPID",
	     "kubelet has sufficient PID available"},
	    {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		/* kmeta's condition writer; a Node's conditions also carry the heartbeat */
		kmeta_cond_set(st, types[i][0], types[i][1], types[i][2], types[i][3],
			       k->conditions_since, false);
		cJSON_AddStringToObject(
		    kmeta_cond_find(cJSON_GetObjectItem(st, "conditions"), types[i][0]),
		    "lastHeartbeatTime", ts);
	}
	cJSON *addrs = cJSON_AddArrayToObject(st, "addresses");
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "InternalIP");
	cJSON_AddStringToObject(a, "address", k->node_ip);
	cJSON_AddItemToArray(addrs, a);
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "Hostname");
	cJSON_AddStringToObject(a, "address", k->node);
	cJSON_AddItemToArray(addrs, a);
	cJSON *de = cJSON_AddObjectToObject(st, "daemonEndpoints");
	cJSON *ke = cJSON_AddObjectToObject(de, "kubeletEndpoint");
	cJSON_AddNumberToObject(ke, "Port", klet_pod_http_port(k));
	cJSON *ni = cJSON_AddObjectToObject(st, "nodeInfo");
	cJSON_AddStringToObject(ni, "kubeletVersion", "v1.32.0-kube32");
	cJSON_AddStringToObject(ni, "kubeProxyVersion", "");
	cJSON_AddStringToObject(ni, "operatingSystem", "kube32");
	cJSON_AddStringToObject(ni, "architecture", "wasm32");
	cJSON_AddStringToObject(ni, "osImage", k->profile_name);
	cJSON_AddStringToObject(ni, "kernelVersion", "kobj");
	cJSON_AddStringToObject(ni, "containerRuntimeVersion", "wrt://wasm2.0");
	cJSON_AddStringToObject(ni, "machineID", k->node);
	cJSON_AddStringToObject(ni, "systemUUID", k->node);
	cJSON_AddStringToObject(ni, "bootID", k->node);
	return st;
}

static cJSON *node_meta_json(struct klet *k)
{
	cJSON *md = cJSON_CreateObject();
	cJSON_AddStringToObject(md, "name", k->node);
	cJSON *l = cJSON_AddObjectToObject(md, "labels");
	cJSON_AddStringToObject(l, "kubernetes.io/hostname", k->node);
	cJSON_AddStringToObject(l, "kubernetes.io/os", "kube32");
	cJSON_AddStringToObject(l, "kubernetes.io/arch", "wasm32");
	cJSON_AddStringToObject(l, "kube32.io/board", k->profile_name);
	cJSON *an = cJSON_AddObjectToObject(md, "annotations");
	cJSON_AddStringToObject(an, "kube32.io/hardware", k->hardware);
	return md;
}

/* Patches the Node's status (Ready heartbeat). */
static k32_status_t node_status_send(struct klet *k, struct kclient *c, struct k32_buf *b,
				     struct k32_err *err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddItemToObject(p, "status", klet_node_status_json(k, klet_wall()));
	char *body = json_text(p);
	cJSON_Delete(p);
	if (!body)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD,
				   "out of memory building Node status");
	char target[256];
	snprintf(target, sizeof(target), "/api/v1/nodes/%s/status", k->node);
	int code;
	k32_status_t st =
	    kclient_call(c, "PATCH", target, "application/merge-patch+json", body, &code, b, err);
	cJSON_free(body);
	if (!st && code != 200)
		st = kclient_answer_err(err, KLET_MOD, "patching the Node status", code, b);
	return st;
}

static k32_status_t node_register(struct klet *k, struct kclient *c, struct k32_buf *b,
				  struct k32_err *err)
{
	cJSON *n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "apiVersion", "v1");
	cJSON_AddStringToObject(n, "kind", "Node");
	cJSON_AddItemToObject(n, "metadata", node_meta_json(k));
	cJSON_AddObjectToObject(n, "spec");
	cJSON_AddItemToObject(n, "status", klet_node_status_json(k, klet_wall()));
	char *body = json_text(n);
	cJSON_Delete(n);
	if (!body)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD, "out of memory building Node");
	int code;
	k32_status_t st =
	    kclient_call(c, "POST", "/api/v1/nodes", "application/json", body, &code, b, err);
	cJSON_free(body);
	if (st)
		return st;
	if (code == 409) {
		/* re-registering (a reboot): refresh labels and annotations */
		cJSON *p = cJSON_CreateObject();
		cJSON_AddItemToObject(p, "metadata", node_meta_json(k));
		body = json_text(p);
		cJSON_Delete(p);
		if (!body)
			return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD, "out of memory");
		char target[256];
		snprintf(target, sizeof(target), "/api/v1/nodes/%s", k->node);
		st = kclient_call(c, "PATCH", target, "application/merge-patch+json", body, &code,
				  b, err);
		cJSON_free(body);
		if (!st && code != 200)
			st = kclient_answer_err(err, KLET_MOD, "updating the Node", code, b);
	} else if (code != 201 && code != 200) {
		st = kclient_answer_err(err, KLET_MOD, "creating the Node", code, b);
	}
	if (st)
		return st;
	return node_status_send(k, c, b, err);
}

static k32_status_t lease_renew(struct klet *k, struct kclient *c, struct k32_buf *b,
				struct k32_err *err)
{
	char ts[40], now[32];
	klet_fmt_time(klet_wall(), now, sizeof(now));
	/* MicroTime: seconds plus six fractional digits */
	snprintf(ts, sizeof(ts), "%.19s.000000Z", now);
	char body[1024], target[256];
	snprintf(target, sizeof(target),
		 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/%s", k->node);
	snprintf(body, sizeof(body),
		 "{\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
		 "\"renewTime\":\"%s\"}}",
		 k->node, K32_KLET_LEASE_DURATION_S, ts);
	int code;
	k32_status_t st =
	    kclient_call(c, "PATCH", target, "application/merge-patch+json", body, &code, b, err);
	if (!st && code == 404) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			 "\"metadata\":{\"name\":\"%s\",\"namespace\":\"kube-node-lease\"},"
			 "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
			 "\"acquireTime\":\"%s\",\"renewTime\":\"%s\"}}",
			 k->node, k->node, K32_KLET_LEASE_DURATION_S, ts, ts);
		st = kclient_call(c, "POST",
				  "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
				  "application/json", body, &code, b, err);
		if (!st && code != 201 && code != 200)
			st = kclient_answer_err(err, KLET_MOD, "creating the Lease", code, b);
	} else if (!st && code != 200) {
		st = kclient_answer_err(err, KLET_MOD, "renewing the Lease", code, b);
	}
	if (!st) {
		k32_mutex_lock(&k->lock);
		k->stats.lease_renewals++;
		k32_mutex_unlock(&k->lock);
	}
	return st;
}

/* ---- watch ---------------------------------------------------------------------------- */

static void ref_set(struct klet_pod *p)
{
	snprintf(p->ref, sizeof(p->ref), "%s/%s", p->ns, p->name);
}

struct klet_pod *klet_pod_find_locked(struct klet *k, const char *ns, const char *name)
{
	for (uint32_t i = 0; i < k->max_pods; i++) {
		struct klet_pod *p = &k->pods[i];
		if (p->used && !p->gone && !strcmp(p->ns, ns) && !strcmp(p->name, name))
			return p;
	}
	return NULL;
}

/* Reads what the pod runs with; false, with the first bad value in p->wait_msg, when a
 * memory quantity or kube32.io/ annotation does not parse or is out of range. */
static bool pod_spec_from(struct klet *k, struct klet_pod *p, const cJSON *o)
{
	const cJSON *c0 = cJSON_GetArrayItem(k32_json_find(o, "spec.containers"), 0);
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(c0, "name"));
	snprintf(p->container, sizeof(p->container), "%s", s ? s : "main");
	s = cJSON_GetStringValue(cJSON_GetObjectItem(c0, "image"));
	snprintf(p->image, sizeof(p->image), "%s", s ? s : "");
	s = cJSON_GetStringValue(k32_json_find(o, "spec.restartPolicy"));
	p->restart = !s || !strcmp(s, "Always") ? KLET_RESTART_ALWAYS
		     : !strcmp(s, "OnFailure")	? KLET_RESTART_ON_FAILURE
						: KLET_RESTART_NEVER;
	/* kmeta's parsers, the API server's too: a value is never read two ways */
	struct kmeta_pod_limits lim;
	bool valid = !kmeta_pod_limits(o, &lim, p->wait_msg, sizeof(p->wait_msg));
	s = cJSON_GetStringValue(cJSON_GetObjectItem(c0, "image"));
	if (valid && s && strlen(s) >= sizeof(p->image)) {
		/* never a cut image: "ticker.wasm:v12" cut to "ticker.wasm:v1" runs v1 */
		klet_msgf(p->wait_msg, sizeof(p->wait_msg),
			  "spec.containers[0].image: Invalid value: \"%s\": %zu bytes, this "
			  "kubelet keeps %zu (KLET_IMAGE_LEN); shorten the image reference",
			  K32_CLIP(s), strlen(s), sizeof(p->image) - 1);
		valid = false;
	}
	p->mem_limit = lim.mem_bytes;
	p->gas = lim.gas;
	p->gas_off = lim.gas_off;
	p->stack_bytes = lim.stack_bytes;
	p->frames = lim.frames;
	p->tick_ms = lim.tick_ms;
	const cJSON *an = k32_json_find(o, "metadata.annotations");
	s = cJSON_GetStringValue(cJSON_GetObjectItem(an, "kube32.io/device"));
	klet_msgf(p->device, sizeof(p->device), "%s", s ? s : "");
	/* kube32.io/call-deadline-ms, checked by kmeta (1..K32_POD_CALL_DEADLINE_MS_MAX) */
	p->deadline_ms = lim.call_deadline_ms ? lim.call_deadline_ms : K32_KLET_CALL_DEADLINE_MS;
	(void)k;
	return valid;
}

static void event_locked(struct klet *k, const struct klet_pod *p, const char *type,
			 const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * Admits a new pod (lock held): takes its two log rings. Without memory for them the pod is
 * rejected: phase Failed with reason UnexpectedAdmissionError and a message saying what
 * failed, a Warning event, and it is never started (the slot stays until it is deleted).
 */
static void pod_admit_locked(struct klet *k, struct klet_pod *p)
{
	if (!klet_ring_init(&p->log, k->log_alloc) && !klet_ring_init(&p->prev, k->log_alloc))
		return;
	klet_ring_fini(&p->log, k->log_alloc);
	klet_ring_fini(&p->prev, k->log_alloc);
	p->rejected = true;
	p->done = true;
	snprintf(p->wait_reason, sizeof(p->wait_reason), "UnexpectedAdmissionError");
	klet_msgf(p->wait_msg, sizeof(p->wait_msg),
		  "Pod was rejected: node %s has no memory for the pod's 2 log rings of "
		  "K32_KLET_LOG_RING_BYTES (%u bytes each); free memory on the node (delete "
		  "pods), then create the pod again",
		  k->node, (unsigned)K32_KLET_LOG_RING_BYTES);
	K32_LOGW(KLET_MOD, "node %s: pod %s: %s", K32_CLIP(k->node), K32_CLIP(p->ref), p->wait_msg);
	event_locked(k, p, "Warning", "UnexpectedAdmissionError", "%s", p->wait_msg);
}

/*
 * Refuses a pod whose limits or kube32.io/ annotations do not parse (lock held). The API
 * server refuses such a pod with a 422; one written before that check, or past it, still
 * never runs with a guessed value: phase Failed, reason InvalidPodSpec, and a Warning event
 * naming the field, the value and the range.
 */
static void pod_reject_invalid_locked(struct klet *k, struct klet_pod *p)
{
	p->rejected = true;
	p->done = true;
	snprintf(p->wait_reason, sizeof(p->wait_reason), "InvalidPodSpec");
	K32_LOGW(KLET_MOD, "node %s: pod %s not run: %s", K32_CLIP(k->node), K32_CLIP(p->ref),
		 p->wait_msg);
	event_locked(k, p, "Warning", "InvalidPodSpec", "%s", p->wait_msg);
}

/* Asks the pod's running call (if any) to stop, and wakes it if it sleeps (lock held). The
 * first reason stays. */
static void pod_interrupt_locked(struct klet *k, struct klet_pod *p, uint32_t why)
{
	uint32_t none = KLET_STOP_NONE;
	atomic_compare_exchange_strong(&p->stop, &none, why);
	k32_plat()->cond_broadcast(&k->sleep_cv);
}

/* Adds or updates a pod from its API object (lock held). */
static void pod_upsert_locked(struct klet *k, const cJSON *o)
{
	const char *ns = cJSON_GetStringValue(k32_json_find(o, "metadata.namespace"));
	const char *name = cJSON_GetStringValue(k32_json_find(o, "metadata.name"));
	const char *uid = cJSON_GetStringValue(k32_json_find(o, "metadata.uid"));
	if (!ns || !name)
		return;
	struct klet_pod *p = klet_pod_find_locked(k, ns, name);
	if (p && uid && strcmp(p->uid, uid)) {
		p->gone = true; /* same name, new pod: forget the old one */
		pod_interrupt_locked(k, p, KLET_STOP_DELETED);
		p = NULL;
	}
	if (!p) {
		if (strlen(ns) >= KLET_NS_LEN || strlen(name) >= KLET_NAME_LEN) {
			K32_LOGW(KLET_MOD,
				 "node %s: pod %s/%s not run: its namespace or name is over %d "
				 "bytes, what this kubelet keeps (KLET_NS_LEN, KLET_NAME_LEN); "
				 "shorten the name",
				 K32_CLIP(k->node), K32_CLIP(ns), K32_CLIP(name),
				 strlen(ns) >= KLET_NS_LEN ? KLET_NS_LEN - 1 : KLET_NAME_LEN - 1);
			return;
		}
		for (uint32_t i = 0; i < k->max_pods && !p; i++)
			if (!k->pods[i].used)
				p = &k->pods[i];
		if (!p) {
			K32_LOGW(KLET_MOD,
				 "node %s: pod %s/%s not run: the node runs %" PRIu32
				 " pods, its limit "
				 "(profile %s max_pods / K32_KLET_MAX_PODS); delete a pod",
				 K32_CLIP(k->node), K32_CLIP(ns), K32_CLIP(name), k->max_pods,
				 k->profile_name);
			return;
		}
		/* a free slot holds no log ring (pod_free_slot gave them back) */
		uint32_t gen = p->gen + 1;
		memset(p, 0, sizeof(*p));
		p->k = k;
		p->gen = gen;
		p->used = true;
		snprintf(p->ns, sizeof(p->ns), "%s", ns);
		snprintf(p->name, sizeof(p->name), "%s", name);
		snprintf(p->uid, sizeof(p->uid), "%s", uid ? uid : "");
		ref_set(p);
		bool valid = pod_spec_from(k, p, o);
		p->state = KLET_C_WAITING;
		snprintf(p->wait_reason, sizeof(p->wait_reason), "ContainerCreating");
		p->next_run_us = UINT64_MAX;
		p->pod_start_s = klet_wall();
		p->dirty = true;
		const char *phase = cJSON_GetStringValue(k32_json_find(o, "status.phase"));
		if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) {
			p->done = true; /* finished before this kubelet started: keep it so */
			p->dirty = false;
		} else if (!valid) {
			pod_reject_invalid_locked(k, p);
		} else {
			pod_admit_locked(k, p);
		}
	}
	p->seen = true;
	if (k32_json_find(o, "metadata.deletionTimestamp") && !p->deleting) {
		p->deleting = true;
		p->dirty = true;
		pod_interrupt_locked(k, p, KLET_STOP_DELETED);
	}
}

static void pod_gone_locked(struct klet *k, const cJSON *o)
{
	const char *ns = cJSON_GetStringValue(k32_json_find(o, "metadata.namespace"));
	const char *name = cJSON_GetStringValue(k32_json_find(o, "metadata.name"));
	struct klet_pod *p = ns && name ? klet_pod_find_locked(k, ns, name) : NULL;
	if (p) {
		p->gone = true;
		pod_interrupt_locked(k, p, KLET_STOP_DELETED);
	}
}

struct watch_ctx {
	struct klet *k;
	char rv[32];
	bool relist;
};

/* One watch event (kclient_line_fn); (NULL, 0) is the client's quiet tick, which ends the
 * watch when the kubelet stops. */
static k32_status_t watch_line(void *arg, const char *data, size_t len)
{
	struct watch_ctx *w = arg;
	struct klet *k = w->k;
	cJSON *ev = NULL;
	if (!data)
		return k->stopping ? K32_ERR_CANCELED : K32_OK;
	if (!len)
		return K32_OK;
	if (k32_json_parse((const char *)data, len, &ev, NULL))
		return K32_OK; /* not JSON (a proxy's noise): skip */
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "type"));
	const cJSON *o = cJSON_GetObjectItem(ev, "object");
	const char *rv = cJSON_GetStringValue(k32_json_find(o, "metadata.resourceVersion"));
	k32_status_t st = K32_OK;
	if (!type) {
		st = K32_OK;
	} else if (!strcmp(type, "ERROR")) {
		w->relist = true; /* 410 Gone or anything else: start over from a list */
		st = K32_ERR_COMPACTED;
	} else {
		k32_mutex_lock(&k->lock);
		if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED"))
			pod_upsert_locked(k, o);
		else if (!strcmp(type, "DELETED"))
			pod_gone_locked(k, o);
		k32_mutex_unlock(&k->lock);
		klet_wake(k);
	}
	if (rv && st == K32_OK)
		snprintf(w->rv, sizeof(w->rv), "%s", rv);
	cJSON_Delete(ev);
	if (!st && k->stopping)
		st = K32_ERR_CANCELED;
	return st;
}

static k32_status_t pods_list(struct klet *k, struct watch_ctx *w, struct k32_buf *b,
			      struct k32_err *err)
{
	char target[300];
	snprintf(target, sizeof(target), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", k->node);
	int code;
	k32_status_t st = kclient_call(k->kc, "GET", target, NULL, NULL, &code, b, err);
	if (st)
		return st;
	if (code != 200)
		return kclient_answer_err(err, KLET_MOD, "listing this node's pods", code, b);
	cJSON *l = NULL;
	st = k32_json_parse((const char *)b->data, b->len, &l, err);
	if (st)
		return st;
	k32_mutex_lock(&k->lock);
	k->stats.relists++;
	for (uint32_t i = 0; i < k->max_pods; i++)
		k->pods[i].seen = false;
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(l, "items")) pod_upsert_locked(k, it);
	for (uint32_t i = 0; i < k->max_pods; i++)
		if (k->pods[i].used && !k->pods[i].seen) {
			k->pods[i].gone = true;
			pod_interrupt_locked(k, &k->pods[i], KLET_STOP_DELETED);
		}
	k32_mutex_unlock(&k->lock);
	const char *rv = cJSON_GetStringValue(k32_json_find(l, "metadata.resourceVersion"));
	snprintf(w->rv, sizeof(w->rv), "%s", rv ? rv : "0");
	cJSON_Delete(l);
	klet_wake(k);
	return K32_OK;
}

static void watcher_main(void *arg)
{
	struct klet *k = arg;
	struct watch_ctx w = {.k = k, .relist = true};
	struct k32_buf b;
	struct k32_err err;
	k32_buf_init(&b, k->alloc, K32_HTTP_MAX_RESPONSE_BYTES, "pod list");
	uint32_t wt = k->cfg.watch_timeout_s ? k->cfg.watch_timeout_s : K32_KLET_WATCH_TIMEOUT_S;
	/* a joining board watches once its Node exists (the node task registers it) */
	k32_mutex_lock(&k->lock);
	while (!k->registered && !k->stopping)
		k32_plat()->cond_wait(&k->cv, &k->lock, K32_FOREVER);
	k32_mutex_unlock(&k->lock);
	/* after a failure: 1 s, doubling to K32_KLET_JOIN_BACKOFF_MAX_MS, each cut by a random
	 * share of up to half, so a fleet that lost its API server does not storm it back */
	struct kclient_backoff bo;
	kclient_backoff_init(&bo, 1000, K32_KLET_JOIN_BACKOFF_MAX_MS);
	k32_status_t last_fail = K32_OK;
	while (!k->stopping) {
		k32_err_clear(&err);
		if (w.relist) {
			if (pods_list(k, &w, &b, &err)) {
				if (err.status != last_fail)
					K32_LOGW(KLET_MOD,
						 "node %s: %s; retrying with backoff (up to %u s), "
						 "quietly until this changes",
						 k->node, err.msg,
						 (unsigned)(K32_KLET_JOIN_BACKOFF_MAX_MS / 1000));
				last_fail = err.status;
				goto backoff;
			}
			w.relist = false;
		}
		/* the server ends the watch after wt s (kclient drops it after wt + 10 s of
		 * silence, klet_kclient_new); kclient adds watch=true and bookmarks */
		char target[300];
		snprintf(target, sizeof(target),
			 "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&resourceVersion=%s"
			 "&timeoutSeconds=%" PRIu32,
			 k->node, w.rv, wt);
		k32_status_t st = kclient_watch(k->kc, target, watch_line, &w, &err);
		if (k->stopping)
			break;
		if (st == K32_ERR_COMPACTED || !st) {
			/* the stream ended (reconnect from w.rv) or the revision is gone (410 or
			 * an ERROR event: relist) */
			if (st)
				w.relist = true;
			kclient_backoff_reset(&bo);
			last_fail = K32_OK;
			continue;
		}
		if (st != last_fail)
			K32_LOGW(KLET_MOD, "node %s: pod watch ended (%s): %s; relisting", k->node,
				 k32_status_name(st), err.msg);
		last_fail = st;
		w.relist = true;
	backoff:
		pause_until(k, kclient_backoff_next(&bo));
	}
	k32_buf_fini(&b);
}

/* ---- status ----------------------------------------------------------------------------- */

static const char *pod_phase(const struct klet_pod *p)
{
	if (p->rejected)
		return "Failed";
	if (p->state == KLET_C_RUNNING)
		return "Running";
	if (p->state == KLET_C_TERMINATED && p->done)
		return p->term.code == 0 ? "Succeeded" : "Failed";
	if (p->restarts > 0 || p->state == KLET_C_TERMINATED)
		return "Running"; /* restarting: Kubernetes keeps the phase */
	return "Pending";
}

/* A pod condition through kmeta's one condition writer; since_s is when it last changed. */
static void add_cond(cJSON *st, const char *type, bool ok, uint64_t since_s, const char *reason)
{
	char ts[32];
	klet_fmt_time(since_s, ts, sizeof(ts));
	kmeta_cond_set(st, type, ok ? "True" : "False", ok ? NULL : reason, NULL, ts, false);
}

static cJSON *term_json(const struct klet_term *t)
{
	char ts[32];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "exitCode", t->code);
	cJSON_AddStringToObject(o, "reason", t->reason);
	if (t->message[0])
		cJSON_AddStringToObject(o, "message", t->message);
	klet_fmt_time(t->started_s, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "startedAt", ts);
	klet_fmt_time(t->finished_s, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "finishedAt", ts);
	return o;
}

/* The status patch of a pod (lock held). */
static char *pod_status_text(struct klet *k, struct klet_pod *p)
{
	char ts[32];
	klet_fmt_time(p->pod_start_s, ts, sizeof(ts));
	cJSON *root = cJSON_CreateObject();
	cJSON *st = cJSON_AddObjectToObject(root, "status");
	const char *phase = pod_phase(p);
	cJSON_AddStringToObject(st, "phase", phase);
	if (p->rejected) {
		cJSON_AddStringToObject(st, "reason", p->wait_reason);
		cJSON_AddStringToObject(st, "message", p->wait_msg);
	}
	bool running = p->state == KLET_C_RUNNING;
	/* Ready changed when the container started, or when it last ended */
	uint64_t ready_since = running	     ? p->run_start_s
			       : p->term.set ? p->term.finished_s
			       : p->last.set ? p->last.finished_s
					     : p->pod_start_s;
	add_cond(st, "PodScheduled", true, p->pod_start_s, NULL);
	add_cond(st, "Initialized", true, p->pod_start_s, NULL);
	add_cond(st, "ContainersReady", running, ready_since, "ContainersNotReady");
	add_cond(st, "Ready", running, ready_since, "ContainersNotReady");
	cJSON_AddStringToObject(st, "hostIP", k->node_ip);
	cJSON *ips = cJSON_AddArrayToObject(st, "hostIPs");
	cJSON *ip = cJSON_CreateObject();
	cJSON_AddStringToObject(ip, "ip", k->node_ip);
	cJSON_AddItemToArray(ips, ip);
	cJSON_AddStringToObject(st, "podIP", k->node_ip);
	ips = cJSON_AddArrayToObject(st, "podIPs");
	ip = cJSON_CreateObject();
	cJSON_AddStringToObject(ip, "ip", k->node_ip);
	cJSON_AddItemToArray(ips, ip);
	cJSON_AddStringToObject(st, "startTime", ts);
	cJSON_AddStringToObject(st, "qosClass", "Guaranteed");
	cJSON *css = cJSON_AddArrayToObject(st, "containerStatuses");
	cJSON *cs = cJSON_CreateObject();
	cJSON_AddItemToArray(css, cs);
	cJSON_AddStringToObject(cs, "name", p->container);
	cJSON_AddStringToObject(cs, "image", p->image);
	cJSON_AddStringToObject(cs, "imageID", p->image);
	char cid[200];
	snprintf(cid, sizeof(cid), "kube32://%s/%s/%" PRIu32, p->uid, p->container, p->restarts);
	cJSON_AddStringToObject(cs, "containerID", cid);
	cJSON_AddBoolToObject(cs, "ready", running);
	cJSON_AddBoolToObject(cs, "started", running);
	cJSON_AddNumberToObject(cs, "restartCount", p->restarts);
	cJSON *state = cJSON_AddObjectToObject(cs, "state");
	if (running) {
		char rs[32];
		klet_fmt_time(p->run_start_s, rs, sizeof(rs));
		cJSON *r = cJSON_AddObjectToObject(state, "running");
		cJSON_AddStringToObject(r, "startedAt", rs);
	} else if (p->state == KLET_C_TERMINATED) {
		cJSON_AddItemToObject(state, "terminated", term_json(&p->term));
	} else {
		cJSON *w = cJSON_AddObjectToObject(state, "waiting");
		cJSON_AddStringToObject(w, "reason", p->wait_reason);
		if (p->wait_msg[0])
			cJSON_AddStringToObject(w, "message", p->wait_msg);
	}
	cJSON *ls = cJSON_AddObjectToObject(cs, "lastState");
	if (p->last.set)
		cJSON_AddItemToObject(ls, "terminated", term_json(&p->last));
	char *text = json_text(root);
	cJSON_Delete(root);
	return text;
}

/* Sends the pod's status if it changed since the last successful write. Node task only
 * (the worker may free or reuse the slot meanwhile: the generation tells). */
static void pod_status_sync(struct klet *k, struct kclient *c, struct klet_pod *p, uint64_t now,
			    struct k32_buf *b)
{
	k32_mutex_lock(&k->lock);
	if (!p->used || p->gone || !p->dirty || now < p->retry_status_us) {
		k32_mutex_unlock(&k->lock);
		return;
	}
	uint32_t gen = p->gen;
	char *text = pod_status_text(k, p);
	char target[300];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s/status", p->ns, p->name);
	bool same = text && p->last_status && !strcmp(text, p->last_status);
	p->dirty = false;
	k32_mutex_unlock(&k->lock);
	if (!text || same) {
		cJSON_free(text);
		return;
	}
	struct k32_err err;
	int code;
	k32_status_t st =
	    kclient_call(c, "PATCH", target, "application/merge-patch+json", text, &code, b, &err);
	if (!st && code != 200)
		st = kclient_answer_err(&err, KLET_MOD, "writing pod status", code, b);
	k32_mutex_lock(&k->lock);
	if (!p->used || p->gen != gen) {
		cJSON_free(text); /* the pod went while its status was on the way */
	} else if (st) {
		if (st != K32_ERR_NOT_FOUND) {
			p->dirty = true;
			p->retry_status_us = now + 1000000;
		}
		K32_LOGW(KLET_MOD, "node %s: pod %s: %s", K32_CLIP(k->node), K32_CLIP(p->ref),
			 err.msg);
		cJSON_free(text);
	} else {
		k->stats.status_writes++;
		cJSON_free(p->last_status);
		p->last_status = text;
	}
	k32_mutex_unlock(&k->lock);
}

/* ---- events ------------------------------------------------------------------------------ */

/* Queues an Event about p (lock held). Dropped, and counted, when the queue is full. */
static void event_locked(struct klet *k, const struct klet_pod *p, const char *type,
			 const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void event_locked(struct klet *k, const struct klet_pod *p, const char *type,
			 const char *reason, const char *fmt, ...)
{
	if (k->nevents == KLET_EVENT_QUEUE) {
		k->stats.events_dropped++;
		return;
	}
	struct klet_event *e = &k->events[k->nevents++];
	snprintf(e->ns, sizeof(e->ns), "%s", p->ns);
	snprintf(e->name, sizeof(e->name), "%s", p->name);
	snprintf(e->uid, sizeof(e->uid), "%s", p->uid);
	e->type = type;
	e->reason = reason;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* Counts one more occurrence of series s up on its Event (node task): true when the Event
 * took it; false when it is gone (deleted by the TTL or the store's bound: a new one is due). */
static bool event_bump(struct kclient *c, struct k32_buf *b, struct kmeta_event_series *s,
		       const char *ts)
{
	char target[64 + KLET_NS_LEN + KMETA_EVENT_NAME_LEN], patch[96];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events/%s", s->ns, s->name);
	snprintf(patch, sizeof(patch), "{\"count\":%" PRIu32 ",\"lastTimestamp\":\"%s\"}",
		 s->count + 1, ts);
	struct k32_err err;
	int code = 0;
	if (kclient_call(c, "PATCH", target, "application/merge-patch+json", patch, &code, b,
			 &err) ||
	    code != 200)
		return false;
	s->count++;
	return true;
}

/* Sends the queued Events (node task): a repeat of a recent one counts it up. */
static void events_send(struct klet *k, struct kclient *c, struct k32_buf *b)
{
	for (;;) {
		struct klet_event e;
		k32_mutex_lock(&k->lock);
		if (!k->nevents) {
			k32_mutex_unlock(&k->lock);
			return;
		}
		e = k->events[0];
		memmove(&k->events[0], &k->events[1], sizeof(e) * (k->nevents - 1));
		k->nevents--;
		k32_mutex_unlock(&k->lock);
		uint64_t now_s = klet_wall();
		char ts[32], target[64 + KLET_NS_LEN];
		klet_fmt_time(now_s, ts, sizeof(ts));
		const struct kmeta_object_ref ref = {"v1", "Pod", e.ns, e.name, e.uid};
		uint32_t h = kmeta_event_hash(&ref, e.ns, e.type, e.reason, e.message);
		struct kmeta_event_series *s =
		    kmeta_event_series_find(k->event_series, K32_KLET_EVENT_SERIES, h, e.ns, now_s);
		bool sent = s && event_bump(c, b, s, ts);
		if (!sent) {
			char name[KMETA_EVENT_NAME_LEN];
			kmeta_event_name(e.name, k32_now_us(), ++k->event_seq, name, sizeof(name));
			cJSON *o = kmeta_event_json(&ref, e.ns, name, e.type, e.reason, e.message,
						    "kubelet", ts);
			/* where on the node: the kubelet's own fields */
			cJSON *io = cJSON_GetObjectItem(o, "involvedObject");
			cJSON *src = cJSON_GetObjectItem(o, "source");
			if (o &&
			    (!cJSON_AddStringToObject(io, "fieldPath", "spec.containers{main}") ||
			     !cJSON_AddStringToObject(src, "host", k->node) ||
			     !cJSON_ReplaceItemInObject(o, "reportingInstance",
							cJSON_CreateString(k->node)))) {
				cJSON_Delete(o);
				o = NULL;
			}
			char *body = o ? json_text(o) : NULL;
			cJSON_Delete(o);
			snprintf(target, sizeof(target), "/api/v1/namespaces/%s/events", e.ns);
			struct k32_err err;
			int code = 0;
			sent = body &&
			       !kclient_call(c, "POST", target, "application/json", body, &code, b,
					     &err) &&
			       code == 201;
			cJSON_free(body);
			if (sent)
				kmeta_event_series_add(k->event_series, K32_KLET_EVENT_SERIES, h,
						       e.ns, name, now_s);
		}
		k32_mutex_lock(&k->lock);
		if (sent)
			k->stats.events_sent++;
		else
			k->stats.events_dropped++;
		k32_mutex_unlock(&k->lock);
	}
}

/* ---- life cycle --------------------------------------------------------------------------- */

static void notify_exit(void *arg, struct klet_pod *p, const struct klet_exit *ex)
{
	struct klet *k = arg;
	k32_mutex_lock(&k->lock);
	if (p->started && !p->exit_pending) {
		p->exit_pending = true;
		p->exit.set = true;
		p->exit.code = ex->code;
		snprintf(p->exit.reason, sizeof(p->exit.reason), "%s",
			 ex->reason ? ex->reason : (ex->code ? "Error" : "Completed"));
		snprintf(p->exit.message, sizeof(p->exit.message), "%s",
			 ex->message ? ex->message : "");
		p->exit.started_s = p->run_start_s;
		p->exit.finished_s = klet_wall();
	}
	k32_mutex_unlock(&k->lock);
	klet_wake(k);
}

static void log_locked(struct klet_pod *p, const char *text, size_t len)
{
	klet_ring_append(&p->log, ++p->log_seq, klet_wall(), text, len);
}

void klet_pod_log(struct klet_pod *p, const char *text, size_t len)
{
	struct klet *k = p->k;
	k32_mutex_lock(&k->lock);
	log_locked(p, text, len);
	k32_mutex_unlock(&k->lock);
}

static uint32_t backoff_init(const struct klet *k)
{
	return k->cfg.backoff_initial_ms ? k->cfg.backoff_initial_ms : K32_KLET_BACKOFF_INITIAL_MS;
}

static uint32_t backoff_max(const struct klet *k)
{
	return k->cfg.backoff_max_ms ? k->cfg.backoff_max_ms : K32_KLET_BACKOFF_MAX_MS;
}

/* An exit the provider reported: record it and decide on a restart (lock held; the
 * runtime is already stopped). */
static void pod_exit_locked(struct klet *k, struct klet_pod *p, uint64_t now)
{
	p->exit_pending = false;
	p->started = false;
	p->term = p->exit;
	p->state = KLET_C_TERMINATED;
	p->dirty = true;
	if (p->term.message[0] && p->term.code != 0) {
		char line[KLET_MSG_LEN + 32];
		int n = snprintf(line, sizeof(line), "%s: %s", p->term.reason, p->term.message);
		log_locked(p, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
	}
	if (!strcmp(p->term.reason, "DeadlineExceeded"))
		event_locked(k, p, "Warning", "DeadlineExceeded", "Container %s stopped: %s",
			     K32_CLIP(p->container), p->term.message);
	bool restart = p->restart == KLET_RESTART_ALWAYS ||
		       (p->restart == KLET_RESTART_ON_FAILURE && p->term.code != 0);
	if (!restart) {
		p->done = true;
		return;
	}
	if (now - p->run_start_us >= (uint64_t)K32_KLET_BACKOFF_RESET_S * 1000000)
		p->backoff_ms = 0; /* it ran long enough: forget earlier crashes */
	uint32_t delay = p->backoff_ms;
	uint32_t next = p->backoff_ms ? p->backoff_ms * 2 : backoff_init(k);
	p->backoff_ms = next > backoff_max(k) ? backoff_max(k) : next;
	p->last = p->term;
	p->last.set = true;
	p->next_start_us = now + (uint64_t)delay * 1000;
	if (delay) {
		event_locked(k, p, "Warning", "BackOff",
			     "Back-off %" PRIu32
			     "s restarting failed container %s in pod %s_%s(%s)",
			     (delay + 999) / 1000, K32_CLIP(p->container), K32_CLIP(p->name),
			     K32_CLIP(p->ns), p->uid);
		p->state = KLET_C_WAITING;
		snprintf(p->wait_reason, sizeof(p->wait_reason), "CrashLoopBackOff");
		klet_msgf(p->wait_msg, sizeof(p->wait_msg),
			  "back-off %" PRIu32 "s restarting failed container=%s pod=%s_%s(%s)",
			  (delay + 999) / 1000, K32_CLIP(p->container), K32_CLIP(p->name),
			  K32_CLIP(p->ns), p->uid);
	}
}

static void spec_of(struct klet *k, const struct klet_pod *p, struct klet_run_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->ns = p->ns;
	s->name = p->name;
	s->uid = p->uid;
	s->container = p->container;
	s->image = p->image;
	s->image_dir = k->image_dir;
	s->node = k->node;
	s->mem_limit = p->mem_limit;
	s->gas = p->gas;
	s->gas_off = p->gas_off;
	s->stack_bytes = p->stack_bytes;
	s->frames = p->frames;
	s->tick_ms = p->tick_ms;
	s->run_to_completion = p->restart != KLET_RESTART_ALWAYS;
	s->device = p->device;
	s->deadline_ms = p->deadline_ms;
}

static void pod_start(struct klet *k, struct klet_pod *p, uint64_t now)
{
	struct klet_run_spec spec;
	struct k32_err err;
	k32_err_clear(&err);
	k32_mutex_lock(&k->lock);
	spec_of(k, p, &spec);
	if (p->term.set) {
		/* a new container: its predecessor's lines become --previous */
		klet_ring_move(&p->prev, &p->log);
	}
	p->started = true; /* so that notify during start is recorded */
	p->run_start_s = klet_wall();
	p->run_start_us = now;
	p->exit_pending = false;
	p->next_run_us = now;
	p->mem_cur = 0;
	k32_mutex_unlock(&k->lock);

	k32_mutex_lock(&k->run_lock);
	klet_exec_busy(k, p, "k32_init");
	uint64_t c0 = k32_plat()->thread_cpu_us();
	k32_status_t st = k->ops->start(k->ops_ctx, p, &spec, &err);
	uint64_t c1 = k32_plat()->thread_cpu_us();
	klet_exec_busy(k, p, NULL);
	klet_snapshot(k, p);
	k32_mutex_unlock(&k->run_lock);
	klet_pod_cpu_add(k, p, c1 - c0);

	k32_mutex_lock(&k->lock);
	p->dirty = true;
	if (st) {
		p->started = false;
		p->exit_pending = false;
		p->state = KLET_C_WAITING;
		bool pull = st == K32_ERR_NOT_FOUND;
		/* KLET_LINK_MOD: the module imports what the node does not provide */
		bool link = err.module && !strcmp(err.module, KLET_LINK_MOD);
		snprintf(p->wait_reason, sizeof(p->wait_reason), "%s",
			 pull	? (p->start_failures ? "ImagePullBackOff" : "ErrImagePull")
			 : link ? "LinkError"
				: "CreateContainerError");
		snprintf(p->wait_msg, sizeof(p->wait_msg), "%s", err.msg);
		uint64_t d = (uint64_t)backoff_init(k)
			     << (p->start_failures < 5 ? p->start_failures : 5);
		if (d > backoff_max(k))
			d = backoff_max(k);
		p->start_failures++;
		p->next_start_us = now + d * 1000;
		log_locked(p, err.msg, strlen(err.msg));
		K32_LOGW(KLET_MOD, "node %s: pod %s: %s", K32_CLIP(k->node), K32_CLIP(p->ref),
			 err.msg);
		if (p->start_failures == 1)
			event_locked(k, p, "Warning", "Failed", "Error: %s: %s", p->wait_reason,
				     err.msg);
	} else {
		p->start_failures = 0;
		event_locked(k, p, "Normal", "Started", "Started container %s (module %s)",
			     K32_CLIP(p->container), K32_CLIP(p->image));
		/* a container that ended in its k32_init never shows Running (nor Ready): its
		 * exit is handled next, so a client waiting for Ready sees the crash */
		if (!p->exit_pending) {
			p->state = KLET_C_RUNNING;
			p->wait_reason[0] = 0;
			p->wait_msg[0] = 0;
		}
		if (p->term.set) {
			/* a restart: the termination before it is lastState */
			p->restarts++;
			p->term.set = false;
		}
	}
	k32_mutex_unlock(&k->lock);
}

/* A deleted pod's last call (provider stopping), unless its container already ended. */
static void pod_stopping(struct klet *k, struct klet_pod *p)
{
	if (!k->ops->stopping)
		return;
	k32_mutex_lock(&k->run_lock);
	k32_mutex_lock(&k->lock);
	bool live = p->started && !p->exit_pending;
	k32_mutex_unlock(&k->lock);
	uint64_t c0 = k32_plat()->thread_cpu_us();
	if (live) {
		klet_exec_busy(k, p, "its last k32_event");
		k->ops->stopping(k->ops_ctx, p);
		klet_exec_busy(k, p, NULL);
	}
	uint64_t c1 = k32_plat()->thread_cpu_us();
	k32_mutex_unlock(&k->run_lock);
	if (live)
		klet_pod_cpu_add(k, p, c1 - c0);
}

static void pod_stop_runtime(struct klet *k, struct klet_pod *p)
{
	k32_mutex_lock(&k->run_lock);
	k->ops->stop(k->ops_ctx, p);
	klet_snapshot(k, p);
	k32_mutex_unlock(&k->run_lock);
	k32_mutex_lock(&k->lock);
	p->started = false;
	k32_mutex_unlock(&k->lock);
}

static void pod_free_slot(struct klet *k, struct klet_pod *p)
{
	k32_mutex_lock(&k->lock);
	cJSON_free(p->last_status);
	p->last_status = NULL;
	klet_ring_fini(&p->log, k->log_alloc);
	klet_ring_fini(&p->prev, k->log_alloc);
	p->used = false;
	p->gen++;
	k32_mutex_unlock(&k->lock);
}

enum pod_action { ACT_NONE, ACT_FINALIZE, ACT_EXIT, ACT_START, ACT_RUN };

static enum pod_action pod_decide_locked(struct klet_pod *p, uint64_t now, uint64_t *next)
{
	if (!p->used)
		return ACT_NONE;
	if (p->gone || p->deleting)
		return ACT_FINALIZE;
	if (p->exit_pending)
		return ACT_EXIT;
	if (p->done)
		return ACT_NONE;
	if (!p->started) {
		if (now >= p->next_start_us)
			return ACT_START;
		if (p->next_start_us < *next)
			*next = p->next_start_us;
		return ACT_NONE;
	}
	if (now >= p->next_run_us)
		return ACT_RUN;
	if (p->next_run_us < *next)
		*next = p->next_run_us;
	return ACT_NONE;
}

/* Deletes a pod being deleted gracefully, now that its container is stopped. */
static bool pod_finalize_api(struct klet *k, struct klet_pod *p, struct k32_buf *b)
{
	char target[300];
	snprintf(target, sizeof(target), "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
	char body[160];
	snprintf(body, sizeof(body),
		 "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,"
		 "\"preconditions\":{\"uid\":\"%s\"}}",
		 p->uid);
	struct k32_err err;
	int code;
	k32_status_t st =
	    kclient_call(k->kc, "DELETE", target, "application/json", body, &code, b, &err);
	if (!st && (code == 200 || code == 202 || code == 404 || code == 409))
		return true;
	if (!st)
		kclient_answer_err(&err, KLET_MOD, "deleting the stopped pod", code, b);
	K32_LOGW(KLET_MOD, "node %s: pod %s: %s; retrying", K32_CLIP(k->node), K32_CLIP(p->ref),
		 err.msg);
	return false;
}

static void worker_pass(struct klet *k, struct k32_buf *b, uint64_t *out_next)
{
	uint64_t now = k32_now_us();
	uint64_t next = now + 1000000ull * 3600;
	for (uint32_t i = 0; i < k->max_pods; i++) {
		struct klet_pod *p = &k->pods[i];
		/* pod HTTP requests go between any two pod calls: one waits for at most one */
		klet_http_serve(k);
		k32_mutex_lock(&k->lock);
		enum pod_action a = pod_decide_locked(p, now, &next);
		bool started = p->started, gone = p->gone;
		k32_mutex_unlock(&k->lock);
		switch (a) {
		case ACT_NONE:
			break;
		case ACT_FINALIZE:
			if (started) {
				if (!gone) {
					k32_mutex_lock(&k->lock);
					event_locked(k, p, "Normal", "Killing",
						     "Stopping container %s", p->container);
					/* the deletion's stop request ended any running call;
					 * withdraw it for the pod's one last call (a shutdown's
					 * request stays) */
					uint32_t del = KLET_STOP_DELETED;
					atomic_compare_exchange_strong(&p->stop, &del,
								       KLET_STOP_NONE);
					k32_mutex_unlock(&k->lock);
					klet_wake(k); /* the node task sends the event */
					pod_stopping(k, p);
				}
				pod_stop_runtime(k, p);
			}
			if (gone || pod_finalize_api(k, p, b))
				pod_free_slot(k, p);
			else if (now + 1000000 < next)
				next = now + 1000000;
			continue;
		case ACT_EXIT:
			pod_stop_runtime(k, p);
			k32_mutex_lock(&k->lock);
			p->started = false;
			pod_exit_locked(k, p, now);
			k32_mutex_unlock(&k->lock);
			next = now; /* an immediate restart is due */
			break;
		case ACT_START:
			pod_start(k, p, now);
			next = now;
			break;
		case ACT_RUN: {
			uint64_t nr = UINT64_MAX;
			k32_mutex_lock(&k->run_lock);
			if (k->ops->pending && !k->ops->pending(k->ops_ctx, p, now, &nr)) {
				/* a quiet poll: nothing ran, nothing to account */
				k32_mutex_unlock(&k->run_lock);
				k32_mutex_lock(&k->lock);
				p->next_run_us = nr;
				if (nr < next)
					next = nr;
				k32_mutex_unlock(&k->lock);
				break;
			}
			uint64_t c0 = k32_plat()->thread_cpu_us();
			klet_exec_busy(k, p, "k32_tick/k32_event");
			k->ops->run(k->ops_ctx, p, now, &nr);
			klet_exec_busy(k, p, NULL);
			uint64_t c1 = k32_plat()->thread_cpu_us();
			klet_snapshot(k, p);
			k32_mutex_unlock(&k->run_lock);
			klet_pod_cpu_add(k, p, c1 - c0);
			k32_mutex_lock(&k->lock);
			p->next_run_us = nr;
			if (nr < next)
				next = nr;
			if (p->exit_pending)
				next = now;
			k32_mutex_unlock(&k->lock);
			break;
		}
		}
	}
	*out_next = next;
}

/* The exec task: every call into a pod, nothing else that waits on the network but the
 * module fetch, a stopped pod's DELETE and a driver's Device status. */
static void worker_main(void *arg)
{
	struct klet *k = arg;
	struct k32_buf b;
	k32_plat()->task_set_priority(K32_KLET_EXEC_TASK_PRIO);
	k32_buf_init(&b, k->alloc, K32_HTTP_MAX_RESPONSE_BYTES, "API response");
	while (!k->stopping) {
		uint64_t next;
		worker_pass(k, &b, &next);
		uint64_t now = k32_now_us();
		k32_mutex_lock(&k->lock);
		bool work = klet_http_queued_locked(k), report = k->nevents > 0;
		for (uint32_t i = 0; i < k->max_pods; i++) {
			struct klet_pod *p = &k->pods[i];
			report = report || (p->used && p->dirty);
			/* a run made due by klet_events_kick during the pass counts too */
			work =
			    work || (p->used &&
				     (p->gone || p->exit_pending || (p->deleting && p->started) ||
				      (p->started && p->events && p->next_run_us <= now)));
		}
		if (report)
			k32_plat()->cond_broadcast(&k->cv); /* the node task sends them */
		if (!work && !k->stopping && next > k32_now_us())
			k32_plat()->cond_wait(&k->cv, &k->lock, (int64_t)next);
		k32_mutex_unlock(&k->lock);
	}
	k32_buf_fini(&b);
}

/* A random share of span (0 .. span-1): spreads a thousand boards' renewals and retries. */
static uint64_t jitter(uint64_t span)
{
	uint32_t r = 0;
	if (!span || k32_plat()->random(&r, sizeof(r)))
		return 0;
	return r % span;
}

/*
 * Registers the Node and its Lease (cfg.join_retry): tries until it works or the kubelet
 * stops, waiting min, 2 min, 4 min ... up to K32_KLET_JOIN_BACKOFF_MAX_MS between attempts,
 * each wait cut by a random share of up to half (so boards that lost the control plane
 * together do not come back in step). One warning per change of what went wrong, one line
 * when registered.
 */
static void register_patiently(struct klet *k, struct k32_buf *b)
{
	struct k32_err err;
	struct kclient_backoff bo;
	kclient_backoff_init(&bo, K32_KLET_JOIN_BACKOFF_MIN_MS, K32_KLET_JOIN_BACKOFF_MAX_MS);
	k32_status_t last = K32_OK;
	int last_code = -1;
	uint32_t attempts = 0;
	if (k->cfg.join_spread_ms)
		pause_until(k, jitter(k->cfg.join_spread_ms));
	while (!k->stopping) {
		k32_err_clear(&err);
		k32_status_t st = node_register(k, k->kc, b, &err);
		if (!st)
			st = lease_renew(k, k->kc, b, &err);
		attempts++;
		if (!st) {
			k32_mutex_lock(&k->lock);
			k->registered = true;
			k32_plat()->cond_broadcast(&k->cv);
			k32_mutex_unlock(&k->lock);
			K32_LOGI(KLET_MOD,
				 "node %s (%s): registered with %s:%u (attempt %" PRIu32
				 "), pod pool %zu bytes, pod server :%u",
				 k->node, k->profile_name, k->api_host, (unsigned)k->cfg.api_port,
				 attempts, k->profile.pod_pool_bytes,
				 (unsigned)klet_pod_http_port(k));
			return;
		}
		/* err.status names the kind of failure (refused, timed out, an HTTP answer) */
		int code = err.status == K32_OK ? 0 : (int)err.status;
		if (code != last_code || st != last)
			K32_LOGW(KLET_MOD,
				 "node %s: cannot register with %s:%u: %s; retrying with backoff "
				 "(up to %u s), quietly until this changes",
				 k->node, k->api_host, (unsigned)k->cfg.api_port, err.msg,
				 (unsigned)(K32_KLET_JOIN_BACKOFF_MAX_MS / 1000));
		last = st;
		last_code = code;
		pause_until(k, kclient_backoff_next(&bo));
	}
}

/*
 * The node task: the Lease, the Node's status, pod status patches and Events. It never
 * calls a provider nor takes run_lock, so whatever a pod's code does (loop, sleep, wait),
 * the node's heartbeat and its reports go on.
 */
static void node_main(void *arg)
{
	struct klet *k = arg;
	struct k32_buf b;
	struct k32_err err;
	k32_plat()->task_set_priority(K32_KLET_NODE_TASK_PRIO);
	k32_buf_init(&b, k->alloc, K32_HTTP_MAX_RESPONSE_BYTES, "API response");
	uint64_t renew = (uint64_t)(k->cfg.lease_renew_ms ? k->cfg.lease_renew_ms
							  : K32_KLET_LEASE_RENEW_S * 1000) *
			 1000;
	if (!k->registered) {
		register_patiently(k, &b);
		uint64_t now = k32_now_us();
		k->next_lease_us = now + renew - jitter(renew / 10);
		k->next_node_status_us = now + (uint64_t)K32_KLET_NODE_STATUS_S * 1000000 -
					 jitter((uint64_t)K32_KLET_NODE_STATUS_S * 100000);
	}
	while (!k->stopping) {
		uint64_t now = k32_now_us();
		if (now >= k->next_lease_us) {
			k32_err_clear(&err);
			if (lease_renew(k, k->kc, &b, &err))
				K32_LOGW(KLET_MOD, "node %s: %s", k->node, err.msg);
			/* up to a tenth early, at random: a fleet's renewals stay spread */
			k->next_lease_us = now + renew - jitter(renew / 10);
		}
		if (now >= k->next_node_status_us) {
			k32_err_clear(&err);
			k32_status_t st = node_status_send(k, k->kc, &b, &err);
			if (st == K32_ERR_NOT_FOUND) {
				/* the Node was deleted (kubectl delete node): register again */
				k32_err_clear(&err);
				st = node_register(k, k->kc, &b, &err);
			}
			if (st)
				K32_LOGW(KLET_MOD, "node %s: %s", k->node, err.msg);
			k->next_node_status_us = now + (uint64_t)K32_KLET_NODE_STATUS_S * 1000000;
		}
		for (uint32_t i = 0; i < k->max_pods && !k->stopping; i++)
			pod_status_sync(k, k->kc, &k->pods[i], now, &b);
		events_send(k, k->kc, &b);
		now = k32_now_us();
		uint64_t next = k->next_lease_us < k->next_node_status_us ? k->next_lease_us
									  : k->next_node_status_us;
		k32_mutex_lock(&k->lock);
		bool work = k->nevents > 0;
		for (uint32_t i = 0; i < k->max_pods; i++) {
			struct klet_pod *p = &k->pods[i];
			if (!p->used || p->gone || !p->dirty)
				continue;
			if (p->retry_status_us <= now)
				work = true;
			else if (p->retry_status_us < next)
				next = p->retry_status_us;
		}
		if (!work && !k->stopping && next > now)
			k32_plat()->cond_wait(&k->cv, &k->lock, (int64_t)next);
		k32_mutex_unlock(&k->lock);
	}
	k32_buf_fini(&b);
}

/* ---- public ------------------------------------------------------------------------------ */

void *klet_pod_priv(const struct klet_pod *pod)
{
	return pod->priv;
}

void klet_pod_set_priv(struct klet_pod *pod, void *priv)
{
	pod->priv = priv;
}

const _Atomic uint32_t *klet_pod_stop_word(struct klet_pod *pod)
{
	return &pod->stop;
}

uint32_t klet_pod_sleep(struct klet_pod *pod, uint64_t until_us)
{
	struct klet *k = pod->k;
	k32_mutex_lock(&k->lock);
	uint32_t stop;
	while (!(stop = atomic_load(&pod->stop)) && k32_now_us() < until_us)
		k32_plat()->cond_wait(&k->sleep_cv, &k->lock, (int64_t)until_us);
	k32_mutex_unlock(&k->lock);
	return stop;
}

void klet_pod_set_events(struct klet_pod *pod, bool on)
{
	struct klet *k = pod->k;
	k32_mutex_lock(&k->lock);
	pod->events = on;
	k32_mutex_unlock(&k->lock);
}

void klet_events_kick(struct klet *k, const struct klet_pod *except)
{
	bool any = false;
	uint64_t now = k32_now_us();
	k32_mutex_lock(&k->lock);
	for (uint32_t i = 0; i < k->max_pods; i++) {
		struct klet_pod *p = &k->pods[i];
		if (p == except || !p->used || !p->started || !p->events || p->next_run_us <= now)
			continue;
		p->next_run_us = now;
		any = true;
	}
	k32_mutex_unlock(&k->lock);
	if (any)
		klet_wake(k);
}

void klet_pod_events_count(struct klet_pod *pod, uint32_t delivered, uint32_t over_budget)
{
	struct klet *k = pod->k;
	k32_mutex_lock(&k->lock);
	pod->events_delivered += delivered;
	pod->events_over_budget += over_budget;
	k32_mutex_unlock(&k->lock);
}

const char *klet_pod_ref(const struct klet_pod *pod)
{
	return pod->ref;
}

static void *pod_alloc_fn(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct klet_pod *p = ud;
	struct klet *k = p->k;
	void *r = k->pool_alloc.fn(k->pool_alloc.ud, ptr, old_len, new_len);
	if (new_len == 0) {
		p->mem_cur -= old_len <= p->mem_cur ? old_len : p->mem_cur;
	} else if (r) {
		p->mem_cur = p->mem_cur - (ptr ? old_len : 0) + new_len;
		if (p->mem_cur > p->mem_peak)
			p->mem_peak = p->mem_cur;
	}
	return r;
}

const struct k32_allocator *klet_pod_allocator(struct klet_pod *pod)
{
	pod->alloc.fn = pod_alloc_fn;
	pod->alloc.ud = pod;
	return &pod->alloc;
}

/* The module bytes of one ConfigMap value (base64 binaryData, or text data) into a block of
 * *out_len + 1 bytes from alloc. */
static k32_status_t module_decode(const char *ns, const char *cm_name, const char *key,
				  const char *bin, const char *txt,
				  const struct k32_allocator *alloc, uint8_t **out, size_t *out_len,
				  struct k32_err *err)
{
	size_t cap = bin ? strlen(bin) / 4 * 3 + 3 : strlen(txt);
	if (cap > K32_KLET_IMAGE_MAX_BYTES)
		return k32_err_set(err, K32_ERR_NO_RESOURCES, KLET_MOD,
				   "module %s in ConfigMap %s/%s is %zu bytes, over "
				   "K32_KLET_IMAGE_MAX_BYTES (%u); make the module smaller",
				   K32_CLIP(key), K32_CLIP(ns), K32_CLIP(cm_name), cap,
				   (unsigned)K32_KLET_IMAGE_MAX_BYTES);
	uint8_t *buf = k32_alloc(alloc, cap + 1);
	size_t n = 0;
	if (!buf)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD,
				   "module %s: %zu bytes do not fit the pod pool; stop a pod",
				   K32_CLIP(key), cap);
	if (bin && k32_base64_decode(bin, buf, cap, &n)) {
		k32_free(alloc, buf, cap + 1);
		return k32_err_set(err, K32_ERR_CORRUPT, KLET_MOD,
				   "ConfigMap %s/%s: binaryData[%s] is not base64; create it "
				   "with kubectl create configmap --from-file",
				   K32_CLIP(ns), K32_CLIP(cm_name), K32_CLIP(key));
	}
	if (!bin) {
		memcpy(buf, txt, cap);
		n = cap;
	}
	/* shrink to the exact size so the caller frees n + 1 bytes */
	uint8_t *fit = k32_realloc(alloc, buf, cap + 1, n + 1);
	if (!fit) {
		k32_free(alloc, buf, cap + 1);
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD,
				   "module %s: out of memory; stop a pod", K32_CLIP(key));
	}
	fit[n] = 0;
	*out = fit;
	*out_len = n;
	return K32_OK;
}

/* The version `want` asks for in ConfigMap ns/file_name (cm): K32_OK with the bytes,
 * K32_ERR_NOT_FOUND (message: what it has) or another error. */
static k32_status_t module_version(const cJSON *cm, const char *ns, const char *file_name,
				   const struct klet_image_ref *want,
				   const struct k32_allocator *alloc, uint8_t **out,
				   size_t *out_len, struct k32_err *err)
{
	const char *tag = want && want->tag[0] ? want->tag : NULL;
	const char *sha = want && want->sha256[0] ? want->sha256 : NULL;
	const cJSON *bins = cJSON_GetObjectItem(cm, "binaryData");
	const cJSON *txts = cJSON_GetObjectItem(cm, "data");
	char hex[65], have[64]; /* whole keys, then "..." (the message must end whole) */
	if (sha && !tag) {
		/* a digest alone: whichever key holds those bytes */
		for (int m = 0; m < 2; m++) {
			const cJSON *kv, *map = m ? txts : bins;
			cJSON_ArrayForEach(kv, map)
			{
				const char *v = cJSON_GetStringValue(kv);
				if (!v || module_decode(ns, file_name, kv->string, m ? NULL : v,
							m ? v : NULL, alloc, out, out_len, err))
					continue;
				klet_image_sha256(*out, *out_len, hex);
				if (!strcmp(hex, sha))
					return K32_OK;
				k32_free(alloc, *out, *out_len + 1);
				*out = NULL;
			}
		}
		klet_image_versions(cm, have, sizeof(have));
		return k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
				   "no key of ConfigMap %s/%s has sha256:%.12s...; its keys: %s",
				   K32_CLIP(ns), K32_CLIP(file_name), sha, have[0] ? have : "none");
	}
	const char *key = tag ? tag : file_name;
	const char *bin = cJSON_GetStringValue(cJSON_GetObjectItem(bins, key));
	const char *txt = cJSON_GetStringValue(cJSON_GetObjectItem(txts, key));
	if (!bin && !txt) {
		klet_image_versions(cm, have, sizeof(have));
		return k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
				   "ConfigMap %s/%s has no key %s (%s); its keys: %s", K32_CLIP(ns),
				   K32_CLIP(file_name), K32_CLIP(key),
				   tag ? "the tag" : "the untagged module",
				   have[0] ? have : "none");
	}
	k32_status_t st = module_decode(ns, file_name, key, bin, txt, alloc, out, out_len, err);
	if (st || !sha)
		return st;
	klet_image_sha256(*out, *out_len, hex);
	if (!strcmp(hex, sha))
		return K32_OK;
	k32_free(alloc, *out, *out_len + 1);
	*out = NULL;
	return k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
			   "ConfigMap %s/%s key %s is sha256:%.12s..., not the image's "
			   "sha256:%.12s...; upload that module under the key or fix the digest",
			   K32_CLIP(ns), K32_CLIP(file_name), K32_CLIP(key), hex, sha);
}

k32_status_t klet_module_fetch(struct klet_pod *pod, const char *file_name,
			       const struct klet_image_ref *want, const struct k32_allocator *alloc,
			       uint8_t **out, size_t *out_len, const char **out_ns,
			       struct k32_err *err)
{
	struct klet *k = pod->k;
	const char *nss[2] = {pod->ns, "kube-system"};
	struct k32_buf b;
	k32_buf_init(&b, k->alloc, K32_KLET_IMAGE_MAX_BYTES * 2 + 4096, "module ConfigMap");
	k32_status_t st = K32_ERR_NOT_FOUND;
	bool seen = false; /* a ConfigMap of that name exists: its message says what it has */
	for (int i = 0; i < 2 && st == K32_ERR_NOT_FOUND; i++) {
		char target[300];
		snprintf(target, sizeof(target), "/api/v1/namespaces/%s/configmaps/%s", nss[i],
			 file_name);
		int code = 0;
		struct k32_err e;
		if (kclient_call(k->kc, "GET", target, NULL, NULL, &code, &b, &e) || code != 200)
			continue;
		cJSON *cm = NULL;
		if (k32_json_parse((const char *)b.data, b.len, &cm, &e))
			continue;
		struct k32_err ve;
		st = module_version(cm, nss[i], file_name, want, alloc, out, out_len, &ve);
		if (!st && out_ns)
			*out_ns = nss[i];
		if (st && (st != K32_ERR_NOT_FOUND || !seen)) {
			*err = ve;
			seen = true;
		}
		cJSON_Delete(cm);
	}
	k32_buf_fini(&b);
	if (st == K32_ERR_NOT_FOUND && !seen)
		k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
			    "no ConfigMap %s with key %s in namespace %s or kube-system",
			    K32_CLIP(file_name), K32_CLIP(file_name), K32_CLIP(pod->ns));
	return st;
}

void klet_pool_usage(struct klet *k, size_t *out_used, size_t *out_limit)
{
	*out_used = k->pool.stats.cur_bytes;
	*out_limit = k->pool.stats.limit_bytes;
}

const char *klet_node_name(const struct klet *k)
{
	return k->node;
}

static k32_status_t copy_str(char *dst, size_t cap, const char *src, const char *what,
			     struct k32_err *err)
{
	if (!src)
		src = "";
	if (strlen(src) >= cap)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "kubelet config: %s is %zu bytes, the limit is %zu", what,
				   strlen(src), cap - 1);
	memcpy(dst, src, strlen(src) + 1);
	return K32_OK;
}

k32_status_t klet_new(const struct klet_config *cfg, struct klet **out, struct k32_err *err)
{
	*out = NULL;
	if (!cfg->node_name || !cfg->node_name[0])
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "kubelet config: node_name is required");
	if (!cfg->profile)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "kubelet config for node %s: a board profile is required",
				   K32_CLIP(cfg->node_name));
	if (!cfg->api_port)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "kubelet config for node %s: api_port is required",
				   K32_CLIP(cfg->node_name));
	if (cfg->api_tls && !cfg->ca_file)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, KLET_MOD,
		    "kubelet config for node %s: HTTPS needs the API server's CA file",
		    K32_CLIP(cfg->node_name));
	const struct k32_allocator *a = cfg->alloc ? cfg->alloc : k32_default_allocator();
	struct klet *k = k32_calloc(a, sizeof(*k));
	if (!k)
		return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD, "out of memory (kubelet)");
	k->alloc = a;
	k->log_alloc = cfg->log_alloc ? cfg->log_alloc : a;
	k->cfg = *cfg;
	k32_status_t st = copy_str(k->node, sizeof(k->node), cfg->node_name, "node_name", err);
	if (!st)
		st = copy_str(k->api_host, sizeof(k->api_host),
			      cfg->api_host ? cfg->api_host : "127.0.0.1", "api_host", err);
	if (!st)
		st = copy_str(k->ca_file, sizeof(k->ca_file), cfg->ca_file, "ca_file", err);
	if (!st)
		st = copy_str(k->token, sizeof(k->token), cfg->token, "token", err);
	if (!st)
		st = copy_str(k->node_ip, sizeof(k->node_ip),
			      cfg->node_ip ? cfg->node_ip : "127.0.0.1", "node_ip", err);
	if (!st)
		st = copy_str(k->image_dir, sizeof(k->image_dir),
			      cfg->image_dir ? cfg->image_dir : ".", "image_dir", err);
	if (!st)
		st = copy_str(k->pod_http_host, sizeof(k->pod_http_host),
			      cfg->pod_http_host ? cfg->pod_http_host : "127.0.0.1",
			      "pod_http_host", err);
	if (!st)
		st = copy_str(k->profile_name, sizeof(k->profile_name), cfg->profile->name,
			      "profile name", err);
	if (!st)
		st = copy_str(k->hardware, sizeof(k->hardware), cfg->profile->hardware,
			      "profile hardware", err);
	if (st) {
		k32_free(a, k, sizeof(*k));
		return st;
	}
	k->profile = *cfg->profile;
	k->profile.name = k->profile_name;
	k->profile.hardware = k->hardware;
	k->max_pods = cfg->profile->max_pods && cfg->profile->max_pods < K32_KLET_MAX_PODS
			  ? cfg->profile->max_pods
			  : K32_KLET_MAX_PODS;
	k->ops = cfg->provider ? cfg->provider : &klet_wasm_provider;
	k->ops_ctx = cfg->provider ? cfg->provider_ctx : NULL;
	k32_heap_init(&k->pool, cfg->profile->pod_pool_bytes);
	k->pool_alloc = k32_heap_allocator(&k->pool);
	k->pool_snap = k->pool.stats;
	k->pods = k32_calloc(a, sizeof(struct klet_pod) * k->max_pods);
	if (!k->pods)
		goto out_nomem;
	for (uint32_t i = 0; i < k->max_pods; i++)
		k->pods[i].k = k; /* log rings: when a pod is admitted (pod_admit_locked) */
	k32_status_t kst = klet_kobj_new(k, err); /* klet_kobj.c: sizes and tokens from cfg */
	if (kst) {
		k32_free(a, k->pods, sizeof(struct klet_pod) * k->max_pods);
		k32_free(a, k, sizeof(*k));
		return kst;
	}
	const struct k32_platform_ops *pl = k32_plat();
	pl->mutex_init(&k->lock);
	pl->mutex_init(&k->run_lock);
	pl->cond_init(&k->cv);
	pl->cond_init(&k->sleep_cv);
	pl->cond_init(&k->http_cv);
	*out = k;
	return K32_OK;
out_nomem:
	k32_free(a, k, sizeof(*k));
	return k32_err_set(err, K32_ERR_NO_MEMORY, KLET_MOD,
			   "out of memory allocating the kubelet's pod table (%" PRIu32 " pods)",
			   cfg->profile->max_pods);
}

k32_status_t klet_kclient_new(struct klet *k, int64_t timeout_us, struct kclient **out,
			      struct k32_err *err)
{
	char url[sizeof(k->api_host) + 24];
	snprintf(url, sizeof(url), "%s://%s:%u", k->cfg.api_tls ? "https" : "http", k->api_host,
		 (unsigned)k->cfg.api_port);
	uint32_t wt = k->cfg.watch_timeout_s ? k->cfg.watch_timeout_s : K32_KLET_WATCH_TIMEOUT_S;
	struct kclient_http_config kc = {
	    .url = url,
	    .ca_file = k->cfg.api_tls ? k->ca_file : NULL,
	    .bearer_token = k->token[0] ? k->token : NULL,
	    .timeout_us = timeout_us,
	    .max_response_bytes = K32_HTTP_MAX_RESPONSE_BYTES,
	    /* the server ends each watch at timeoutSeconds; silence past it: a lost server */
	    .watch_idle_s = wt + 10,
	    .no_gzip = true,
	    .alloc = k->alloc};
	return kclient_http_new(&kc, out, err);
}

k32_status_t klet_start(struct klet *k, struct k32_err *err)
{
	if (k->started)
		return k32_err_set(err, K32_ERR_BAD_STATE, KLET_MOD,
				   "node %s: kubelet already started", k->node);
	/* one connection for requests (the worker's and the node task's, one at a time) and
	 * one for the pod watch */
	k32_status_t st = klet_kclient_new(k, 10 * 1000000, &k->kc, err);
	if (!st && !k->cfg.pod_http_off)
		st = klet_http_start(k, err);
	struct k32_buf b;
	k32_buf_init(&b, k->alloc, K32_HTTP_MAX_RESPONSE_BYTES, "API response");
	k->registered = false;
	if (!st && !k->cfg.join_retry)
		st = node_register(k, k->kc, &b, err);
	if (!st && !k->cfg.join_retry)
		st = lease_renew(k, k->kc, &b, err);
	k->registered = !st && !k->cfg.join_retry;
	k32_buf_fini(&b);
	if (st)
		goto out_fail;
	uint64_t now = k32_now_us();
	uint64_t renew =
	    k->cfg.lease_renew_ms ? k->cfg.lease_renew_ms : K32_KLET_LEASE_RENEW_S * 1000;
	k->next_lease_us = now + renew * 1000;
	k->next_node_status_us = now + (uint64_t)K32_KLET_NODE_STATUS_S * 1000000;
	if (k->ops->init)
		k->ops->init(k->ops_ctx, k, notify_exit, k);
	k->stopping = false;
	char name[32];
	snprintf(name, sizeof(name), "klet-w-%.20s", k->node);
	st = k32_plat()->task_create(&k->watcher, name, watcher_main, k,
				     K32_KLET_WATCHER_STACK_BYTES, -1, err);
	if (st)
		goto out_fail;
	snprintf(name, sizeof(name), "klet-n-%.20s", k->node);
	st = k32_plat()->task_create(&k->node_task, name, node_main, k, K32_KLET_NODE_TASK_STACK,
				     -1, err);
	if (st) {
		k->stopping = true;
		klet_wake(k);
		k32_plat()->task_join(k->watcher);
		k->watcher = NULL;
		goto out_fail;
	}
	snprintf(name, sizeof(name), "klet-%.24s", k->node);
	/* the worker is the board's interpreter task: its stack is the profile's */
	size_t stack = k->profile.interp_stack ? k->profile.interp_stack : 64 * 1024;
	if (stack < 16 * 1024)
		stack = 16 * 1024;
	stack *= K32_SANITIZER_STACK_SCALE;
	st = k32_plat()->task_create(&k->worker, name, worker_main, k, stack, -1, err);
	if (st) {
		k->stopping = true;
		klet_wake(k);
		k32_plat()->task_join(k->watcher);
		k32_plat()->task_join(k->node_task);
		k->watcher = k->node_task = NULL;
		goto out_fail;
	}
	k->started = true;
	if (k->registered)
		K32_LOGI(KLET_MOD,
			 "node %s (%s): registered with %s:%u, pod pool %zu bytes, pod server :%u",
			 k->node, k->profile_name, k->api_host, (unsigned)k->cfg.api_port,
			 k->profile.pod_pool_bytes, (unsigned)klet_pod_http_port(k));
	return K32_OK;
out_fail:
	klet_http_stop(k);
	k32_mutex_lock(&k->lock);
	k->stats.api_errors += kclient_failures(k->kc); /* the count outlives the client */
	k32_mutex_unlock(&k->lock);
	kclient_free(k->kc);
	k->kc = NULL;
	return st;
}

/* Sets stopping, interrupts every pod's running call and wakes every task (lock held). */
static void stop_request_locked(struct klet *k)
{
	k->stopping = true;
	for (uint32_t i = 0; i < k->max_pods; i++)
		if (k->pods[i].used)
			pod_interrupt_locked(k, &k->pods[i], KLET_STOP_SHUTDOWN);
	k32_plat()->cond_broadcast(&k->cv);
	k32_plat()->cond_broadcast(&k->http_cv); /* queued pod requests are answered 503 */
}

void klet_stop_begin(struct klet *k)
{
	if (!k)
		return;
	k32_mutex_lock(&k->lock);
	stop_request_locked(k);
	k32_mutex_unlock(&k->lock);
}

void klet_stop(struct klet *k)
{
	if (!k || !k->started)
		return;
	k32_mutex_lock(&k->lock);
	stop_request_locked(k);
	k32_mutex_unlock(&k->lock);
	k32_plat()->task_join(k->worker);
	k32_plat()->task_join(k->node_task);
	k32_plat()->task_join(k->watcher);
	k->worker = k->watcher = k->node_task = NULL;
	klet_http_stop(k);
	for (uint32_t i = 0; i < k->max_pods; i++) {
		struct klet_pod *p = &k->pods[i];
		if (p->used && p->started)
			pod_stop_runtime(k, p);
		if (p->used)
			pod_free_slot(k, p);
	}
	k32_mutex_lock(&k->lock);
	k->stats.api_errors += kclient_failures(k->kc); /* the count outlives the client */
	k32_mutex_unlock(&k->lock);
	kclient_free(k->kc);
	k->kc = NULL;
	k->started = false;
}

void klet_free(struct klet *k)
{
	if (!k)
		return;
	klet_stop(k);
	for (uint32_t i = 0; i < k->max_pods; i++) {
		cJSON_free(k->pods[i].last_status);
		klet_ring_fini(&k->pods[i].log, k->log_alloc);
		klet_ring_fini(&k->pods[i].prev, k->log_alloc);
	}
	k32_free(k->alloc, k->pods, sizeof(struct klet_pod) * k->max_pods);
	klet_kobj_free(k);
	const struct k32_platform_ops *pl = k32_plat();
	pl->cond_fini(&k->cv);
	pl->cond_fini(&k->sleep_cv);
	pl->cond_fini(&k->http_cv);
	pl->mutex_fini(&k->lock);
	pl->mutex_fini(&k->run_lock);
	k32_free(k->alloc, k, sizeof(*k));
}

k32_status_t klet_pod_logs(struct klet *k, const char *ns, const char *name, bool previous,
			   int64_t tail_lines, bool timestamps, uint64_t *inout_seq,
			   struct k32_buf *out, struct k32_err *err)
{
	k32_mutex_lock(&k->lock);
	struct klet_pod *p = klet_pod_find_locked(k, ns, name);
	k32_status_t st;
	if (!p) {
		st = k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD, "pod %s/%s is not on node %s",
				 K32_CLIP(ns), K32_CLIP(name), K32_CLIP(k->node));
	} else if (previous && !p->prev.lines && !p->last.set) {
		st = k32_err_set(err, K32_ERR_NOT_FOUND, KLET_MOD,
				 "previous terminated container \"%s\" in pod \"%s\" not found",
				 K32_CLIP(p->container), K32_CLIP(name));
	} else {
		st = klet_ring_read(previous ? &p->prev : &p->log, tail_lines, timestamps,
				    inout_seq, out, err);
	}
	k32_mutex_unlock(&k->lock);
	return st;
}

void klet_pod_cpu_add(struct klet *k, struct klet_pod *p, uint64_t cpu_us)
{
	k32_mutex_lock(&k->lock);
	p->cpu_us += cpu_us;
	k32_mutex_unlock(&k->lock);
}

void klet_pod_calls_add(struct klet *k, struct klet_pod *p, const struct klet_call_counts *d)
{
	k32_mutex_lock(&k->lock);
	p->calls.gas_used += d->gas_used;
	p->calls.traps += d->traps;
	p->calls.out_of_gas += d->out_of_gas;
	p->calls.deadlines += d->deadlines;
	p->calls.i2c_ok += d->i2c_ok;
	p->calls.i2c_errors += d->i2c_errors;
	k32_mutex_unlock(&k->lock);
}

/* Minimum window of a CPU rate sample (metrics.k8s.io reports window "10s"). */
#define KLET_CPU_WINDOW_US 10000000ull

static const char *state_name(const struct klet_pod *p)
{
	if (p->state == KLET_C_RUNNING)
		return "running";
	if (p->state == KLET_C_TERMINATED)
		return "terminated";
	return "waiting";
}

k32_status_t klet_stats_json(struct klet *k, struct k32_buf *b, struct k32_err *err)
{
	struct klet_stats st;
	klet_get_stats(k, &st);
	uint64_t now = k32_now_us();
	k32_status_t rc =
	    k32_buf_printf(b, err,
			   "{\"node\":\"%s\",\"board\":\"%s\",\"pool\":{\"usedBytes\":%zu,"
			   "\"peakBytes\":%zu,\"limitBytes\":%zu},\"pods\":[",
			   k->node, k->profile_name, st.pool_bytes, st.pool_peak, st.pool_limit);
	bool first = true;
	for (uint32_t i = 0; i < k->max_pods && !rc; i++) {
		struct klet_pod *p = &k->pods[i];
		k32_mutex_lock(&k->lock);
		bool used = p->used && !p->gone;
		struct klet_pod_mem m = p->mem_snap;
		if (used && (!p->cpu_prev_at_us || now - p->cpu_prev_at_us >= KLET_CPU_WINDOW_US)) {
			uint64_t since = p->cpu_prev_at_us ? p->cpu_prev_at_us : p->run_start_us;
			if (now > since)
				p->cpu_nanocores = (p->cpu_us - p->cpu_prev_us) * 1000000ull /
						   (now - since) * 1000ull;
			p->cpu_prev_us = p->cpu_us;
			p->cpu_prev_at_us = now;
		}
		if (used)
			rc = k32_buf_printf(
			    b, err,
			    "%s{\"namespace\":\"%s\",\"name\":\"%s\",\"container\":\"%s\","
			    "\"state\":\"%s\",\"restarts\":%" PRIu32 ",\"cpuMicros\":%llu,"
			    "\"cpuNanocores\":%llu,\"memory\":{\"codeBytes\":%zu,"
			    "\"linearBytes\":%zu,\"stackBytes\":%zu,\"runtimeBytes\":%zu,"
			    "\"poolBytes\":%zu,\"poolPeakBytes\":%zu},\"events\":{\"delivered\":%"
			    "llu,"
			    "\"overBudget\":%llu}}",
			    first ? "" : ",", p->ns, p->name, p->container, state_name(p),
			    p->restarts, (unsigned long long)p->cpu_us,
			    (unsigned long long)p->cpu_nanocores, m.code_bytes, m.memory_bytes,
			    m.stack_bytes, m.runtime_bytes, m.pool_bytes, m.pool_peak,
			    (unsigned long long)p->events_delivered,
			    (unsigned long long)p->events_over_budget);
		k32_mutex_unlock(&k->lock);
		first = first && !used;
	}
	if (!rc)
		rc = k32_buf_append_str(b, "]}\n", err);
	return rc;
}

void klet_get_stats(struct klet *k, struct klet_stats *out)
{
	/* the clients count their own failures (the Service client under its own lock, never
	 * taken with k->lock) */
	uint64_t svc_failures = klet_svc_api_failures(k);
	k32_mutex_lock(&k->lock);
	*out = k->stats;
	out->api_errors += kclient_failures(k->kc) + svc_failures;
	out->pods = out->running = 0;
	for (uint32_t i = 0; i < k->max_pods; i++) {
		if (k->pods[i].used && !k->pods[i].gone) {
			out->pods++;
			if (k->pods[i].state == KLET_C_RUNNING)
				out->running++;
		}
	}
	out->pool_bytes = k->pool_snap.cur_bytes;
	out->pool_peak = k->pool_snap.peak_bytes;
	out->pool_limit = k->pool_snap.limit_bytes;
	k32_mutex_unlock(&k->lock);
}

void klet_snapshot(struct klet *k, struct klet_pod *p)
{
	struct klet_pod_mem m;
	memset(&m, 0, sizeof(m));
	if (p && p->priv && k->ops->stats)
		k->ops->stats(k->ops_ctx, p, &m);
	k32_mutex_lock(&k->lock);
	k->pool_snap = k->pool.stats;
	if (p) {
		m.pool_bytes = p->mem_cur;
		m.pool_peak = p->mem_peak;
		p->mem_snap = m;
	}
	k32_mutex_unlock(&k->lock);
}
