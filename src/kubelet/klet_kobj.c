/*
 * klet_kobj.c - the node's own kobj instance and the pod server's accepted tokens.
 *
 * Each kubelet is one board, and each board is its own machine: its pods' kernel objects
 * (pools, per-pod shares, handle tables, ports, the byte region, the timer thread) come from
 * one kobj instance of its own, sized from its profile's kobj limits. On a board that is the
 * node's only instance; in kube32-sim every simulated board has one, so nothing the pods of
 * one board do can exhaust another board's objects. The instance's memory comes from the
 * kubelet's allocator (the heap), written only where objects are used: untouched pool pages
 * stay out of the simulator's RSS.
 *
 * Context: klet_new / klet_free (one thread).
 */
#include <stdio.h>
#include <string.h>

#include "kubelet/klet_int.h"

#include "base/k32_log.h"

void klet_profile_kobj_limits(const struct klet_profile *p, struct kobj_limits *out)
{
	kobj_limits_default(out);
	/* every field of struct kobj_limits is a uint32_t: a non-zero one overrides */
	uint32_t set[sizeof(struct kobj_limits) / sizeof(uint32_t)];
	uint32_t def[sizeof(struct kobj_limits) / sizeof(uint32_t)];
	_Static_assert(sizeof(struct kobj_limits) % sizeof(uint32_t) == 0,
		       "struct kobj_limits holds uint32_t fields only");
	memcpy(set, &p->kobj, sizeof(set));
	memcpy(def, out, sizeof(def));
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (set[i])
			def[i] = set[i];
	memcpy(out, def, sizeof(def));
}

k32_status_t klet_kobj_new(struct klet *k, struct k32_err *err)
{
	const struct klet_config *cfg = &k->cfg;
	if (cfg->pod_http_token_count > K32_KLET_POD_HTTP_TOKENS)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, KLET_MOD,
				   "kubelet config for node %s: %zu pod server tokens, at most "
				   "K32_KLET_POD_HTTP_TOKENS=%u",
				   k->node, cfg->pod_http_token_count,
				   (unsigned)K32_KLET_POD_HTTP_TOKENS);
	for (size_t i = 0; i < cfg->pod_http_token_count; i++) {
		const char *t = cfg->pod_http_tokens[i];
		if (!t || !t[0] || strlen(t) >= sizeof(k->pod_tokens[0]))
			return k32_err_set(
			    err, K32_ERR_INVALID_ARGS, KLET_MOD,
			    "kubelet config for node %s: pod server token %zu is empty "
			    "or over %zu bytes",
			    k->node, i, sizeof(k->pod_tokens[0]) - 1);
		snprintf(k->pod_tokens[k->pod_token_count++], sizeof(k->pod_tokens[0]), "%s", t);
	}
	k->cfg.pod_http_tokens = NULL; /* copied: the caller's array need not outlive klet_new */
	k->cfg.pod_http_token_count = 0;
	struct kobj_limits lim;
	klet_profile_kobj_limits(&k->profile, &lim);
	struct k32_err why;
	k32_status_t st = kobj_node_new(k->alloc, k->node, &lim, &k->kobj, &why);
	if (st)
		return k32_err_set(err, st, KLET_MOD, "node %s (profile %s): its kobj instance: %s",
				   k->node, k->profile_name, why.msg);
	return K32_OK;
}

void klet_kobj_free(struct klet *k)
{
	if (!k->kobj)
		return;
	/* every pod's handle table is gone (klet_stop); objects still alive would be a leak,
	 * and their memory must then stay */
	if (kobj_node_free(k->alloc, k->kobj))
		K32_LOGW(KLET_MOD, "node %s: kobj objects still alive at shutdown; memory kept",
			 k->node);
	k->kobj = NULL;
}

struct kobj_node *klet_kobj(struct klet *k)
{
	return k->kobj;
}
