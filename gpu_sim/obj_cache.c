// SPDX-License-Identifier: MIT
/*
 * Per-thread caches of same-size blocks (include/gpu_sim/obj_cache.h).
 *
 * Each class is a singly linked LIFO through the blocks' first word, in
 * thread-local storage: the most recently freed block, still warm in this
 * CPU's cache, is the next one given out. A thread-exit hook frees what
 * is left; a block given back after it (another exit hook freeing a job)
 * goes straight to free().
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "gpu_sim/obj_cache.h"
#include "util/compiler.h"

#ifdef TTM_ASAN
#include <sanitizer/asan_interface.h>

/* All of a cached block but its link: any other use is reported. */
static void block_poison(void *p, size_t size)
{
	ASAN_POISON_MEMORY_REGION((char *)p + sizeof(void *),
				  size - sizeof(void *));
}

static void block_unpoison(void *p, size_t size)
{
	ASAN_UNPOISON_MEMORY_REGION((char *)p + sizeof(void *),
				    size - sizeof(void *));
}
#else
static inline void block_poison(void *p, size_t size)
{
	(void)p;
	(void)size;
}

static inline void block_unpoison(void *p, size_t size)
{
	(void)p;
	(void)size;
}
#endif

struct block {
	struct block *next;
};

struct class_cache {
	struct block *head;
	unsigned int count;
	size_t size;            /* of its blocks, for the exit hook */
};

struct thread_cache {
	struct class_cache c[OBJ_CACHE_COUNT];
	bool registered;        /* the exit hook is set */
	bool exited;            /* past it: free() */
};

static __thread struct thread_cache cache
	__attribute__((tls_model("initial-exec")));

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;

/* The thread exits: free its blocks; later frees go to free(). */
static void cache_exit(void *arg)
{
	struct thread_cache *tc = arg;
	unsigned int i;

	tc->exited = true;
	for (i = 0; i < OBJ_CACHE_COUNT; i++) {
		struct class_cache *cc = &tc->c[i];

		while (cc->head) {
			struct block *b = cc->head;

			cc->head = b->next;
			block_unpoison(b, cc->size);
			free(b);
		}
		cc->count = 0;
	}
}

static void make_cache_key(void)
{
	cache_key_ok = !pthread_key_create(&cache_key, cache_exit);
}

/*
 * Once per thread, at its first free: have cache_exit() run. If that
 * cannot be set up (no key, or pthread_setspecific() out of memory), the
 * thread caches nothing: its blocks would outlive it.
 */
static bool cache_register(struct thread_cache *tc)
{
	pthread_once(&cache_once, make_cache_key);
	if (!cache_key_ok || pthread_setspecific(cache_key, tc))
		return false;
	tc->registered = true;
	return true;
}

/* The slow path of a free: may @cc keep one more block? */
static __attribute__((noinline, cold))
bool cache_keep(struct thread_cache *tc, const struct class_cache *cc)
{
	if (cc->count >= OBJ_CACHE_MAX || tc->exited)
		return false;
	return tc->registered || cache_register(tc);
}

void *obj_cache_alloc(enum obj_cache_id id, size_t size)
{
	struct class_cache *cc = &cache.c[id];
	struct block *b = cc->head;

	if (unlikely(!b))
		return malloc(size);
	block_unpoison(b, size);
	cc->head = b->next;
	cc->count--;
	return b;
}

void obj_cache_free(enum obj_cache_id id, void *p, size_t size)
{
	struct thread_cache *tc = &cache;
	struct class_cache *cc = &tc->c[id];
	struct block *b = p;

	if (!p)
		return;
	if (unlikely(cc->count >= OBJ_CACHE_MAX || !tc->registered ||
		     tc->exited) && !cache_keep(tc, cc)) {
		free(p);
		return;
	}
	cc->size = size;
	b->next = cc->head;
	cc->head = b;
	cc->count++;
	block_poison(b, size);
}

unsigned int obj_cache_count(enum obj_cache_id id)
{
	return cache.c[id].count;
}
