// SPDX-License-Identifier: MIT
/*
 * The fence pool: type-stable memory (see include/gpu_sim/fence.h).
 *
 * Fences are carved from chunks that are never freed; a free fence sits on
 * a free list. Each thread keeps a small cache of free fences, so create
 * and put take no lock in the common case; caches exchange whole batches
 * with a global list of batches under one mutex, once per POOL_BATCH
 * fences. Every chunk stays on a global list: pooled memory is always
 * reachable, which keeps LeakSanitizer quiet.
 */
#include <stddef.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"

/*
 * Under AddressSanitizer a free fence is poisoned but for its refcount
 * (which lockless readers may CAS at any time) and the free-list links:
 * any other use of a freed fence is reported as if it had been freed to
 * malloc.
 */
#ifdef TTM_ASAN
#include <sanitizer/asan_interface.h>

#define POISON_START offsetof(struct ttm_fence, context)
#define POISON_END offsetof(struct ttm_fence, pool_next)
_Static_assert(POISON_START % 8 == 0 && POISON_END % 8 == 0,
	       "ASan poisons whole 8-byte granules");

static void fence_poison(struct ttm_fence *f)
{
	ASAN_POISON_MEMORY_REGION((char *)f + POISON_START,
				  POISON_END - POISON_START);
}

static void fence_unpoison(struct ttm_fence *f)
{
	ASAN_UNPOISON_MEMORY_REGION((char *)f + POISON_START,
				    POISON_END - POISON_START);
}
#else
static inline void fence_poison(struct ttm_fence *f)
{
	(void)f;
}

static inline void fence_unpoison(struct ttm_fence *f)
{
	(void)f;
}
#endif

#define POOL_BATCH 64u          /* fences moved per trip to the global list */
#define POOL_CHUNK 256u         /* fences per malloc */

struct fence_chunk {
	struct fence_chunk *next;
	struct ttm_fence fences[POOL_CHUNK];
};

struct fence_cache {
	struct ttm_fence *head;
	unsigned int count;
	bool registered;        /* the thread-exit hook is set */
	bool exited;            /* past the hook: free to the global list */
};

static __thread struct fence_cache cache
	__attribute__((tls_model("initial-exec")));

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ttm_fence *pool_batches;  /* linked by batch_next */
static struct fence_chunk *pool_chunks;
static pthread_key_t pool_key;
static pthread_once_t pool_key_once = PTHREAD_ONCE_INIT;

/* Under pool_lock: hand the list @head (@len fences) to the pool. */
static void batch_push(struct ttm_fence *head, unsigned int len)
{
	head->batch_len = len;
	head->batch_next = pool_batches;
	pool_batches = head;
}

/* A dying thread's cache goes back to the pool. */
static void cache_exit(void *arg)
{
	struct fence_cache *c = arg;

	c->exited = true;
	if (!c->count)
		return;
	pthread_mutex_lock(&pool_lock);
	batch_push(c->head, c->count);
	pthread_mutex_unlock(&pool_lock);
	c->head = NULL;
	c->count = 0;
}

static void make_pool_key(void)
{
	pthread_key_create(&pool_key, cache_exit);
}

/* Under pool_lock: a new chunk, as one batch. NULL if out of memory. */
static struct ttm_fence *chunk_new(void)
{
	struct fence_chunk *chunk;
	unsigned int i;

	chunk = aligned_alloc(_Alignof(struct fence_chunk), sizeof(*chunk));
	if (!chunk)
		return NULL;
	for (i = 0; i < POOL_CHUNK; i++) {
		struct ttm_fence *f = &chunk->fences[i];

		f->refcount = 0;
		pthread_mutex_init(&f->lock, NULL);
		f->pool_next = i + 1 < POOL_CHUNK ? f + 1 : NULL;
		fence_poison(f);
	}
	chunk->next = pool_chunks;
	pool_chunks = chunk;
	chunk->fences[0].batch_len = POOL_CHUNK;
	return &chunk->fences[0];
}

/* Once per thread: have cache_exit() run when it exits. */
static void cache_register(struct fence_cache *c)
{
	pthread_once(&pool_key_once, make_pool_key);
	pthread_setspecific(pool_key, c);
	c->registered = true;
}

static bool cache_refill(struct fence_cache *c)
{
	struct ttm_fence *batch;

	if (!c->registered)
		cache_register(c);
	pthread_mutex_lock(&pool_lock);
	batch = pool_batches;
	if (batch)
		pool_batches = batch->batch_next;
	else
		batch = chunk_new();
	pthread_mutex_unlock(&pool_lock);
	if (!batch)
		return false;
	c->head = batch;
	c->count = batch->batch_len;
	return true;
}

/* The cache is full: give its first POOL_BATCH fences to the pool. */
static void cache_spill(struct fence_cache *c)
{
	struct ttm_fence *head = c->head, *last = head;
	unsigned int i;

	for (i = 1; i < POOL_BATCH; i++)
		last = last->pool_next;
	c->head = last->pool_next;
	c->count -= POOL_BATCH;
	last->pool_next = NULL;
	pthread_mutex_lock(&pool_lock);
	batch_push(head, POOL_BATCH);
	pthread_mutex_unlock(&pool_lock);
}

struct ttm_fence *fence_pool_alloc(void)
{
	struct fence_cache *c = &cache;
	struct ttm_fence *f;

	if (unlikely(!c->head) && !cache_refill(c))
		return NULL;
	f = c->head;
	c->head = f->pool_next;
	c->count--;
	fence_unpoison(f);
	return f;
}

void fence_pool_free(struct ttm_fence *f)
{
	struct fence_cache *c = &cache;

	fence_poison(f);
	if (unlikely(c->exited)) {
		f->pool_next = NULL;
		pthread_mutex_lock(&pool_lock);
		batch_push(f, 1);
		pthread_mutex_unlock(&pool_lock);
		return;
	}
	if (unlikely(!c->registered))
		cache_register(c);
	f->pool_next = c->head;
	c->head = f;
	if (unlikely(++c->count >= 2 * POOL_BATCH))
		cache_spill(c);
}
