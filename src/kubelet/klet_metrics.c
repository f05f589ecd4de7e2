/*
 * klet_metrics.c - GET /metrics on a node's pod server, in Prometheus' text format.
 *
 * Node:  kube32_node_pods, kube32_node_containers_running, kube32_node_pool_bytes{state=
 *        "used"|"free"}, kube32_node_pool_peak_bytes, kube32_node_lease_renewals_total,
 *        kube32_node_status_writes_total, kube32_node_api_errors_total,
 *        kube32_node_events_total{outcome="sent"|"dropped"}
 * Pods:  kube32_pod_memory_bytes{kind=code|linear|stack|runtime|pool}, kube32_pod_cpu_
 *        seconds_total, kube32_pod_restarts_total, kube32_pod_running, kube32_pod_events_
 *        delivered_total, kube32_pod_gas_used_total, kube32_pod_call_failures_total{reason=
 *        "trap"|"out_of_gas"|"deadline"}, kube32_pod_i2c_transactions_total{outcome="ok"|
 *        "error"}; every pod sample carries node, namespace and pod labels.
 * The pod table is read under the kubelet's state lock one pod at a time, as /stats does.
 */
#include <inttypes.h>
#include <stdio.h>

#include "base/k32_prom.h"
#include "kubelet/klet_int.h"

struct klet_mfam {
	const char *name, *type, *help;
};

/* Writes one family and the sample of every used pod, value read by get. */
static k32_status_t klet_pod_family(struct klet *k, struct k32_buf *b, const struct klet_mfam *f,
				    const char *extra_key, const char *extra_val,
				    double (*get)(const struct klet_pod *p, const char *extra),
				    bool header, struct k32_err *err)
{
	k32_status_t st = header ? k32_prom_family(b, f->name, f->type, f->help, err) : K32_OK;
	for (uint32_t i = 0; !st && i < k->max_pods; i++) {
		struct klet_pod *p = &k->pods[i];
		k32_mutex_lock(&k->lock);
		if (p->used && !p->gone) {
			char labels[256] = "";
			k32_prom_label(labels, sizeof(labels), "node", k->node);
			k32_prom_label(labels, sizeof(labels), "namespace", p->ns);
			k32_prom_label(labels, sizeof(labels), "pod", p->name);
			if (extra_key)
				k32_prom_label(labels, sizeof(labels), extra_key, extra_val);
			st = k32_prom_sample(b, f->name, labels, get(p, extra_val), err);
		}
		k32_mutex_unlock(&k->lock);
	}
	return st;
}

static double pod_mem(const struct klet_pod *p, const char *kind)
{
	const struct klet_pod_mem *m = &p->mem_snap;
	switch (kind[0]) {
	case 'c':
		return (double)m->code_bytes;
	case 'l':
		return (double)m->memory_bytes;
	case 's':
		return (double)m->stack_bytes;
	case 'r':
		return (double)m->runtime_bytes;
	default:
		return (double)m->pool_bytes;
	}
}

static double pod_cpu(const struct klet_pod *p, const char *x)
{
	(void)x;
	return (double)p->cpu_us / 1e6;
}

static double pod_restarts(const struct klet_pod *p, const char *x)
{
	(void)x;
	return (double)p->restarts;
}

static double pod_running(const struct klet_pod *p, const char *x)
{
	(void)x;
	return p->state == KLET_C_RUNNING ? 1 : 0;
}

static double pod_events(const struct klet_pod *p, const char *x)
{
	(void)x;
	return (double)p->events_delivered;
}

static double pod_gas(const struct klet_pod *p, const char *x)
{
	(void)x;
	return (double)p->calls.gas_used;
}

/* kube32_pod_call_failures_total by reason: trap (out of gas excluded), out_of_gas, deadline */
static double pod_failures(const struct klet_pod *p, const char *reason)
{
	switch (reason[0]) {
	case 't':
		return (double)(p->calls.traps - p->calls.out_of_gas);
	case 'o':
		return (double)p->calls.out_of_gas;
	default:
		return (double)p->calls.deadlines;
	}
}

static double pod_i2c(const struct klet_pod *p, const char *outcome)
{
	return (double)(outcome[0] == 'o' ? p->calls.i2c_ok : p->calls.i2c_errors);
}

k32_status_t klet_metrics_text(struct klet *k, struct k32_buf *b, struct k32_err *err)
{
	struct klet_stats s;
	klet_get_stats(k, &s);
	char node[160] = "";
	k32_prom_label(node, sizeof(node), "node", k->node);
	static const struct klet_mfam nf[] = {
	    {"kube32_node_pods", "gauge", "Pods the node holds."},
	    {"kube32_node_containers_running", "gauge", "Containers running."},
	    {"kube32_node_pool_peak_bytes", "gauge", "Most bytes the pod pool ever held."},
	    {"kube32_node_lease_renewals_total", "counter", "Lease renewals sent."},
	    {"kube32_node_status_writes_total", "counter", "Pod status writes sent."},
	    {"kube32_node_api_errors_total", "counter", "Calls to the API server that failed."},
	};
	double nv[] = {(double)s.pods,		 (double)s.running,	  (double)s.pool_peak,
		       (double)s.lease_renewals, (double)s.status_writes, (double)s.api_errors};
	k32_status_t st = K32_OK;
	for (size_t i = 0; !st && i < sizeof(nf) / sizeof(nf[0]); i++) {
		st = k32_prom_family(b, nf[i].name, nf[i].type, nf[i].help, err);
		if (!st)
			st = k32_prom_sample(b, nf[i].name, node, nv[i], err);
	}
	char l[200];
	if (!st)
		st = k32_prom_family(b, "kube32_node_pool_bytes", "gauge",
				     "Bytes of the pod pool, used and free.", err);
	snprintf(l, sizeof(l), "%s", node);
	k32_prom_label(l, sizeof(l), "state", "used");
	if (!st)
		st = k32_prom_sample(b, "kube32_node_pool_bytes", l, (double)s.pool_bytes, err);
	snprintf(l, sizeof(l), "%s", node);
	k32_prom_label(l, sizeof(l), "state", "free");
	if (!st)
		st = k32_prom_sample(
		    b, "kube32_node_pool_bytes", l,
		    s.pool_limit > s.pool_bytes ? (double)(s.pool_limit - s.pool_bytes) : 0, err);
	if (!st)
		st = k32_prom_family(b, "kube32_node_events_total", "counter",
				     "Events the node recorded, sent or dropped.", err);
	snprintf(l, sizeof(l), "%s", node);
	k32_prom_label(l, sizeof(l), "outcome", "sent");
	if (!st)
		st = k32_prom_sample(b, "kube32_node_events_total", l, (double)s.events_sent, err);
	snprintf(l, sizeof(l), "%s", node);
	k32_prom_label(l, sizeof(l), "outcome", "dropped");
	if (!st)
		st = k32_prom_sample(b, "kube32_node_events_total", l, (double)s.events_dropped,
				     err);
	static const struct klet_mfam mem = {"kube32_pod_memory_bytes", "gauge",
					     "A pod's bytes by kind (pool: all it holds)."};
	static const char *const kinds[] = {"code", "linear", "stack", "runtime", "pool"};
	for (size_t i = 0; !st && i < 5; i++)
		st = klet_pod_family(k, b, &mem, "kind", kinds[i], pod_mem, i == 0, err);
	static const struct klet_mfam pf[] = {
	    {"kube32_pod_cpu_seconds_total", "counter", "CPU time spent in a pod's calls."},
	    {"kube32_pod_restarts_total", "counter", "A pod's container restarts."},
	    {"kube32_pod_running", "gauge", "1 while a pod's container runs."},
	    {"kube32_pod_events_delivered_total", "counter", "kobj events delivered to a pod."},
	};
	double (*pg[])(const struct klet_pod *, const char *) = {pod_cpu, pod_restarts, pod_running,
								 pod_events};
	for (size_t i = 0; !st && i < sizeof(pf) / sizeof(pf[0]); i++)
		st = klet_pod_family(k, b, &pf[i], NULL, NULL, pg[i], true, err);
	static const struct klet_mfam gas = {
	    "kube32_pod_gas_used_total", "counter",
	    "Gas a pod's metered calls used (all its containers)."};
	if (!st)
		st = klet_pod_family(k, b, &gas, NULL, NULL, pod_gas, true, err);
	static const struct klet_mfam fail = {
	    "kube32_pod_call_failures_total", "counter",
	    "A pod's calls that failed: trapped, ran out of gas, or passed their deadline."};
	static const char *const reasons[] = {"trap", "out_of_gas", "deadline"};
	for (size_t i = 0; !st && i < 3; i++)
		st = klet_pod_family(k, b, &fail, "reason", reasons[i], pod_failures, i == 0, err);
	static const struct klet_mfam i2c = {"kube32_pod_i2c_transactions_total", "counter",
					     "A driver pod's I2C transactions, done or failed."};
	static const char *const outcomes[] = {"ok", "error"};
	for (size_t i = 0; !st && i < 2; i++)
		st = klet_pod_family(k, b, &i2c, "outcome", outcomes[i], pod_i2c, i == 0, err);
	return st;
}
