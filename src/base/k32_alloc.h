/*
 * k32_alloc.h - the allocator interface and the three allocators every module uses.
 *
 * The interface is Lua's lua_Alloc: one function taking (user data, pointer, old size, new
 * size). Because the caller always passes the old size, a pool or arena needs no block
 * header. new_len == 0 frees (returns NULL); ptr == NULL allocates; otherwise it resizes.
 * A failed allocation returns NULL and leaves the old block untouched.
 *
 *  - k32_arena: a bump arena over caller memory (per-pod code, stacks). Frees only the most
 *    recent block; everything is freed at once with k32_arena_reset.
 *  - k32_pool: fixed-size blocks over caller memory with an intrusive free list (handles,
 *    messages, watch events). O(1) alloc and free.
 *  - k32_heap: the system heap with a byte limit, statistics and fault injection (fail the
 *    Nth allocation). Only src/base/k32_mem.c and src/platform/ call malloc.
 *
 * All three count current and peak bytes and failures (struct k32_mem_stats).
 * Context: an allocator is not thread-safe unless wrapped; each owner uses its own.
 */
#ifndef K32_ALLOC_H
#define K32_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/k32_status.h"

typedef void *(*k32_alloc_fn)(void *ud, void *ptr, size_t old_len, size_t new_len);

/* An allocator is a function and its user data; pass it by pointer. */
struct k32_allocator {
	k32_alloc_fn fn; /* the lua_Alloc-style function */
	void *ud;	 /* its state (a struct k32_arena *, k32_pool *, k32_heap *) */
};

struct k32_mem_stats {
	size_t cur_bytes;   /* bytes currently allocated */
	size_t peak_bytes;  /* highest cur_bytes seen */
	size_t limit_bytes; /* capacity or configured limit; 0 = none */
	uint32_t allocs;    /* successful allocations and resizes */
	uint32_t failures;  /* allocations refused (limit, exhausted, injected fault) */
};

/* Allocates len bytes (len > 0); NULL on failure. */
static inline void *k32_alloc(const struct k32_allocator *a, size_t len)
{
	return a->fn(a->ud, NULL, 0, len);
}

/* Allocates len zeroed bytes; NULL on failure. */
void *k32_calloc(const struct k32_allocator *a, size_t len);

/* Resizes ptr from old_len to new_len; NULL on failure (ptr is then still valid). */
static inline void *k32_realloc(const struct k32_allocator *a, void *ptr, size_t old_len,
				size_t new_len)
{
	return a->fn(a->ud, ptr, old_len, new_len);
}

/* Frees ptr, which must have been allocated with size len. NULL is ignored. */
static inline void k32_free(const struct k32_allocator *a, void *ptr, size_t len)
{
	if (ptr)
		a->fn(a->ud, ptr, len, 0);
}

/* ---- bump arena ------------------------------------------------------------------------ */

struct k32_arena {
	uint8_t *base;		    /* caller-owned region */
	size_t cap;		    /* its size in bytes */
	size_t used;		    /* bump offset */
	size_t last_off;	    /* offset of the most recent block (it alone can be freed) */
	struct k32_mem_stats stats; /* cur == used; limit == cap */
};

/* Arena over buf[0..cap). Blocks are aligned to K32_ALLOC_ALIGN. */
void k32_arena_init(struct k32_arena *arena, void *buf, size_t cap);
/* An allocator view of the arena. */
struct k32_allocator k32_arena_allocator(struct k32_arena *arena);
/* Frees every block at once; peak and failure counts are kept. */
void k32_arena_reset(struct k32_arena *arena);

/* ---- fixed-size pool ------------------------------------------------------------------- */

struct k32_pool {
	uint8_t *base;		    /* caller-owned region */
	size_t block_len;	    /* bytes per block (rounded up to K32_ALLOC_ALIGN) */
	uint32_t block_count;	    /* blocks in the region */
	uint32_t free_count;	    /* blocks on the free list */
	void *free_list;	    /* intrusive singly linked list through free blocks */
	struct k32_mem_stats stats; /* limit == block_len * block_count */
};

/*
 * Pool of buf_len / block_len blocks over buf. Returns K32_ERR_INVALID_ARGS (with detail) if
 * not even one block fits or block_len is 0.
 */
k32_status_t k32_pool_init(struct k32_pool *pool, void *buf, size_t buf_len, size_t block_len,
			   struct k32_err *err);
/* One block, or NULL when all are in use (stats.failures counts it). */
void *k32_pool_get(struct k32_pool *pool);
/* Returns a block obtained from this pool. */
void k32_pool_put(struct k32_pool *pool, void *block);
/* Whether ptr is a block boundary inside this pool (for asserts). */
bool k32_pool_owns(const struct k32_pool *pool, const void *ptr);
/*
 * An allocator view: requests of at most block_len bytes get a block; larger ones fail.
 * Resizing within block_len keeps the block.
 */
struct k32_allocator k32_pool_allocator(struct k32_pool *pool);

/* ---- system heap with limit, stats and fault injection --------------------------------- */

struct k32_heap {
	struct k32_mem_stats stats; /* limit_bytes 0 = unlimited */
	uint32_t fail_at;	 /* fail the fail_at-th allocation from now (1 = next); 0 = off */
	uint32_t fail_countdown; /* internal */
};

/* A heap allocator with limit_bytes (0 = none). */
void k32_heap_init(struct k32_heap *heap, size_t limit_bytes);
struct k32_allocator k32_heap_allocator(struct k32_heap *heap);
/*
 * Fault injection for tests: the nth allocation or growth from now fails (n >= 1); 0 turns it
 * off. Frees and shrinks never fail.
 */
void k32_heap_fail_nth(struct k32_heap *heap, uint32_t n);

/* The process-wide default heap (unlimited, with stats); for code with no better owner. */
const struct k32_allocator *k32_default_allocator(void);

#endif /* K32_ALLOC_H */
