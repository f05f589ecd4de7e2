/*
 * ctrl_schedq.c - what the scheduler remembers of each pending pod between passes.
 *
 * An open-addressing table (linear probing, deletion by backward shift, so no tombstones)
 * keyed by a 64-bit hash of the pod's uid. It grows by doubling while pods arrive, up to
 * K32_CTRL_SCHED_QUEUE_MAX entries, and never shrinks below what it had (a board's cluster
 * is small; a server's pending count comes back). The policy that reads these entries (when
 * a pod is tried again) lives in ctrl_sched.c.
 */
#include "ctrl/ctrl_int.h"

#include <string.h>

struct ctrl_schedq {
	struct ctrl_schedq_ent *slots;
	uint32_t cap;  /* slots, a power of two (0: nothing allocated yet) */
	uint32_t used; /* live entries */
};

uint64_t ctrl_schedq_key(const char *uid)
{
	/* FNV-1a, 64 bits; 0 is the empty-slot marker, so it maps to 1 */
	uint64_t h = 1469598103934665603ull;
	for (const char *p = uid; p && *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

static bool schedq_grow(struct ctrl_schedq *q)
{
	uint32_t ncap = q->cap ? q->cap * 2 : 64;
	struct ctrl_schedq_ent *ns = ctrl_zalloc((size_t)ncap * sizeof(*ns));
	if (!ns)
		return false;
	for (uint32_t i = 0; i < q->cap; i++) {
		if (!q->slots[i].key)
			continue;
		uint32_t j = (uint32_t)q->slots[i].key & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = q->slots[i];
	}
	ctrl_free(q->slots, (size_t)q->cap * sizeof(*q->slots));
	q->slots = ns;
	q->cap = ncap;
	return true;
}

struct ctrl_schedq_ent *ctrl_schedq_find(struct ctrl_schedq **qp, uint64_t key, bool create)
{
	struct ctrl_schedq *q = *qp;
	if (!q) {
		if (!create)
			return NULL;
		q = ctrl_zalloc(sizeof(*q));
		if (!q)
			return NULL;
		*qp = q;
	}
	if (q->cap) {
		for (uint32_t j = (uint32_t)key & (q->cap - 1);; j = (j + 1) & (q->cap - 1)) {
			if (q->slots[j].key == key)
				return &q->slots[j];
			if (!q->slots[j].key)
				break;
		}
	}
	if (!create || q->used >= K32_CTRL_SCHED_QUEUE_MAX)
		return NULL;
	/* keep the load at most one half, so probes stay short */
	if ((q->used + 1) * 2 > q->cap && !schedq_grow(q))
		return NULL;
	uint32_t j = (uint32_t)key & (q->cap - 1);
	while (q->slots[j].key)
		j = (j + 1) & (q->cap - 1);
	memset(&q->slots[j], 0, sizeof(q->slots[j]));
	q->slots[j].key = key;
	q->used++;
	return &q->slots[j];
}

/* Removes slot i and shifts back the entries of its probe run that may now sit closer. */
static void schedq_remove_at(struct ctrl_schedq *q, uint32_t i)
{
	uint32_t mask = q->cap - 1;
	uint32_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!q->slots[j].key)
			break;
		uint32_t home = (uint32_t)q->slots[j].key & mask;
		/* slot j's entry may move to i when its home is not within (i, j] cyclically */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			q->slots[i] = q->slots[j];
			i = j;
		}
	}
	memset(&q->slots[i], 0, sizeof(q->slots[i]));
	q->used--;
}

void ctrl_schedq_remove(struct ctrl_schedq *q, uint64_t key)
{
	if (!q || !q->cap)
		return;
	for (uint32_t j = (uint32_t)key & (q->cap - 1);; j = (j + 1) & (q->cap - 1)) {
		if (!q->slots[j].key)
			return;
		if (q->slots[j].key == key) {
			schedq_remove_at(q, j);
			return;
		}
	}
}

void ctrl_schedq_sweep(struct ctrl_schedq *q, uint32_t pass)
{
	if (!q)
		return;
	/* a backward shift can move an unvisited entry into slot i: look at i again then */
	for (uint32_t i = 0; i < q->cap;) {
		if (q->slots[i].key && q->slots[i].seen != pass)
			schedq_remove_at(q, i);
		else
			i++;
	}
}

void ctrl_schedq_each(struct ctrl_schedq *q, void (*fn)(struct ctrl_schedq_ent *e, void *ctx),
		      void *ctx)
{
	for (uint32_t i = 0; q && i < q->cap; i++)
		if (q->slots[i].key)
			fn(&q->slots[i], ctx);
}

uint32_t ctrl_schedq_count(const struct ctrl_schedq *q)
{
	return q ? q->used : 0;
}

void ctrl_schedq_free(struct ctrl_schedq *q)
{
	if (!q)
		return;
	ctrl_free(q->slots, (size_t)q->cap * sizeof(*q->slots));
	ctrl_free(q, sizeof(*q));
}
