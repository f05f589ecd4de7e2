/*
 * k32_mem.c - the arena, pool and heap allocators behind k32_alloc.h.
 *
 * This file and src/platform/ are the only places that call malloc. The heap allocator's
 * statistics use atomic updates so that the process-wide default heap can be shared by
 * threads; arenas and pools belong to one owner and are not locked.
 */
#include "base/k32_alloc.h"

#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t n)
{
	return (n + (K32_ALLOC_ALIGN - 1)) & ~(size_t)(K32_ALLOC_ALIGN - 1);
}

static void stats_grew(struct k32_mem_stats *s, size_t delta)
{
	size_t cur = __atomic_add_fetch(&s->cur_bytes, delta, __ATOMIC_RELAXED);
	size_t peak = __atomic_load_n(&s->peak_bytes, __ATOMIC_RELAXED);

	while (cur > peak && !__atomic_compare_exchange_n(&s->peak_bytes, &peak, cur, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
	__atomic_add_fetch(&s->allocs, 1, __ATOMIC_RELAXED);
}

static void stats_shrank(struct k32_mem_stats *s, size_t delta)
{
	__atomic_sub_fetch(&s->cur_bytes, delta, __ATOMIC_RELAXED);
}

static void stats_failed(struct k32_mem_stats *s)
{
	__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
}

void *k32_calloc(const struct k32_allocator *a, size_t len)
{
	void *p = k32_alloc(a, len);

	if (p)
		memset(p, 0, len);
	return p;
}

/* ---- arena ----------------------------------------------------------------------------- */

void k32_arena_init(struct k32_arena *arena, void *buf, size_t cap)
{
	uintptr_t start = (uintptr_t)buf;
	uintptr_t aligned = (start + (K32_ALLOC_ALIGN - 1)) & ~(uintptr_t)(K32_ALLOC_ALIGN - 1);
	size_t skip = (size_t)(aligned - start);

	memset(arena, 0, sizeof(*arena));
	arena->base = (uint8_t *)aligned;
	arena->cap = cap > skip ? cap - skip : 0;
	arena->last_off = SIZE_MAX;
	arena->stats.limit_bytes = arena->cap;
}

static void arena_set_used(struct k32_arena *arena, size_t used)
{
	arena->used = used;
	arena->stats.cur_bytes = used;
	if (used > arena->stats.peak_bytes)
		arena->stats.peak_bytes = used;
}

static void *arena_fn(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct k32_arena *arena = ud;
	uint8_t *p = ptr;
	size_t off = p ? (size_t)(p - arena->base) : 0;
	bool is_last = p && off == arena->last_off;

	if (new_len == 0) {
		/* Only the most recent block can be given back; others wait for reset. */
		if (is_last) {
			arena_set_used(arena, off);
			arena->last_off = SIZE_MAX;
		}
		return NULL;
	}
	if (is_last) {
		size_t need = align_up(new_len);

		if (need > arena->cap - off) {
			arena->stats.failures++;
			return NULL;
		}
		arena_set_used(arena, off + need);
		arena->stats.allocs++;
		return p;
	}
	if (p && new_len <= old_len)
		return p; /* shrinking an older block: keep it where it is */

	size_t need = align_up(new_len);

	if (need < new_len || need > arena->cap - arena->used) {
		arena->stats.failures++;
		return NULL;
	}
	uint8_t *block = arena->base + arena->used;

	arena->last_off = arena->used;
	arena_set_used(arena, arena->used + need);
	arena->stats.allocs++;
	if (p)
		memcpy(block, p, old_len);
	return block;
}

struct k32_allocator k32_arena_allocator(struct k32_arena *arena)
{
	struct k32_allocator a = {arena_fn, arena};

	return a;
}

void k32_arena_reset(struct k32_arena *arena)
{
	arena->used = 0;
	arena->last_off = SIZE_MAX;
	arena->stats.cur_bytes = 0;
}

/* ---- pool ------------------------------------------------------------------------------ */

k32_status_t k32_pool_init(struct k32_pool *pool, void *buf, size_t buf_len, size_t block_len,
			   struct k32_err *err)
{
	uintptr_t start = (uintptr_t)buf;
	uintptr_t aligned = (start + (K32_ALLOC_ALIGN - 1)) & ~(uintptr_t)(K32_ALLOC_ALIGN - 1);
	size_t skip = (size_t)(aligned - start);
	size_t blen;
	size_t count;

	memset(pool, 0, sizeof(*pool));
	if (block_len == 0)
		return k32_err_set(err, K32_ERR_INVALID_ARGS, "base",
				   "pool block size is 0; pass the size of the object it holds");
	blen = align_up(block_len < sizeof(void *) ? sizeof(void *) : block_len);
	count = buf_len > skip ? (buf_len - skip) / blen : 0;
	if (count == 0)
		return k32_err_set(
		    err, K32_ERR_INVALID_ARGS, "base",
		    "pool region of %zu bytes holds no block of %zu bytes; give it a larger region",
		    buf_len, blen);
	if (count > UINT32_MAX)
		count = UINT32_MAX;
	pool->base = (uint8_t *)aligned;
	pool->block_len = blen;
	pool->block_count = (uint32_t)count;
	pool->stats.limit_bytes = blen * count;
	/* Thread the free list in address order so the first blocks handed out are the first
	 * in memory (friendlier to caches and to reading dumps). */
	for (size_t i = count; i-- > 0;) {
		void **block = (void **)(pool->base + i * blen);

		*block = pool->free_list;
		pool->free_list = block;
	}
	pool->free_count = (uint32_t)count;
	return K32_OK;
}

void *k32_pool_get(struct k32_pool *pool)
{
	void **block = pool->free_list;

	if (!block) {
		pool->stats.failures++;
		return NULL;
	}
	pool->free_list = *block;
	pool->free_count--;
	pool->stats.allocs++;
	pool->stats.cur_bytes += pool->block_len;
	if (pool->stats.cur_bytes > pool->stats.peak_bytes)
		pool->stats.peak_bytes = pool->stats.cur_bytes;
	return block;
}

void k32_pool_put(struct k32_pool *pool, void *block)
{
	if (!block)
		return;
	*(void **)block = pool->free_list;
	pool->free_list = block;
	pool->free_count++;
	pool->stats.cur_bytes -= pool->block_len;
}

bool k32_pool_owns(const struct k32_pool *pool, const void *ptr)
{
	const uint8_t *p = ptr;

	if (p < pool->base || p >= pool->base + (size_t)pool->block_count * pool->block_len)
		return false;
	return (size_t)(p - pool->base) % pool->block_len == 0;
}

static void *pool_fn(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct k32_pool *pool = ud;

	(void)old_len;
	if (new_len == 0) {
		k32_pool_put(pool, ptr);
		return NULL;
	}
	if (new_len > pool->block_len) {
		pool->stats.failures++;
		return NULL;
	}
	return ptr ? ptr : k32_pool_get(pool);
}

struct k32_allocator k32_pool_allocator(struct k32_pool *pool)
{
	struct k32_allocator a = {pool_fn, pool};

	return a;
}

/* ---- heap ------------------------------------------------------------------------------ */

void k32_heap_init(struct k32_heap *heap, size_t limit_bytes)
{
	memset(heap, 0, sizeof(*heap));
	heap->stats.limit_bytes = limit_bytes;
}

void k32_heap_fail_nth(struct k32_heap *heap, uint32_t n)
{
	__atomic_store_n(&heap->fail_countdown, n, __ATOMIC_RELAXED);
	__atomic_store_n(&heap->fail_at, n, __ATOMIC_RELEASE);
}

/* True when fault injection says this growth must fail. */
static bool heap_inject_fault(struct k32_heap *heap)
{
	if (__atomic_load_n(&heap->fail_at, __ATOMIC_ACQUIRE) == 0)
		return false;
	if (__atomic_sub_fetch(&heap->fail_countdown, 1, __ATOMIC_RELAXED) == 0) {
		__atomic_store_n(&heap->fail_at, 0, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

static void *heap_fn(void *ud, void *ptr, size_t old_len, size_t new_len)
{
	struct k32_heap *heap = ud;
	void *p;

	if (new_len == 0) {
		if (ptr) {
			free(ptr);
			stats_shrank(&heap->stats, old_len);
		}
		return NULL;
	}
	if (!ptr)
		old_len = 0;
	if (new_len > old_len) {
		size_t grow = new_len - old_len;
		size_t cur = __atomic_load_n(&heap->stats.cur_bytes, __ATOMIC_RELAXED);

		if (heap_inject_fault(heap) ||
		    (heap->stats.limit_bytes &&
		     (cur > heap->stats.limit_bytes || grow > heap->stats.limit_bytes - cur))) {
			stats_failed(&heap->stats);
			return NULL;
		}
	}
	p = realloc(ptr, new_len);
	if (!p) {
		stats_failed(&heap->stats);
		return NULL;
	}
	if (new_len >= old_len)
		stats_grew(&heap->stats, new_len - old_len);
	else
		stats_shrank(&heap->stats, old_len - new_len);
	return p;
}

struct k32_allocator k32_heap_allocator(struct k32_heap *heap)
{
	struct k32_allocator a = {heap_fn, heap};

	return a;
}

static struct k32_heap default_heap;
static const struct k32_allocator default_alloc = {heap_fn, &default_heap};

const struct k32_allocator *k32_default_allocator(void)
{
	return &default_alloc;
}
