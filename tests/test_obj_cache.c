// SPDX-License-Identifier: MIT
/*
 * The per-thread caches of the per-job blocks (gpu_sim/obj_cache.h), on
 * their own: a freed block is the next one given out, a cache keeps at
 * most OBJ_CACHE_MAX blocks and frees the rest, classes do not mix, a
 * block freed by another thread joins that thread's cache, and a thread's
 * cache is freed when it exits. Built from the library's object (the
 * cache is internal), with malloc() and free() wrapped (-Wl,--wrap) to
 * count the blocks the cache takes from and gives back to them.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gpu_sim/obj_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define SIZE 96

/* Blocks of obj_cache.c's from malloc() not yet given to free(). */
static long live;

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void __wrap_free(void *p);

void *__wrap_malloc(size_t size)
{
	void *p = __real_malloc(size);

	if (p)
		__atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
	return p;
}

void __wrap_free(void *p)
{
	if (p)
		__atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
	__real_free(p);
}

static long live_now(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

/* Empty this thread's cache of @id, giving its blocks back to free(). */
static void drain(enum obj_cache_id id)
{
	void *held[OBJ_CACHE_MAX];
	unsigned int i, n = obj_cache_count(id);

	for (i = 0; i < n; i++)
		held[i] = obj_cache_alloc(id, SIZE);
	assert_int_equal(obj_cache_count(id), 0);
	for (i = 0; i < n; i++)
		free(held[i]);
}

static void test_freed_block_comes_back(void **state)
{
	long before = live_now();
	char *p, *q;

	(void)state;
	p = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	assert_non_null(p);
	assert_int_equal(live_now(), before + 1);
	p[SIZE - 1] = 1;
	obj_cache_free(OBJ_CACHE_GPU_JOB, p, SIZE);
	assert_int_equal(obj_cache_count(OBJ_CACHE_GPU_JOB), 1);
#ifdef TEST_ASAN
	/* A cached block is poisoned but for its link. */
	assert_true(__asan_address_is_poisoned(p + sizeof(void *)));
	assert_true(__asan_address_is_poisoned(p + SIZE - 1));
#endif
	q = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	assert_ptr_equal(q, p);
	assert_int_equal(obj_cache_count(OBJ_CACHE_GPU_JOB), 0);
	/* No new block from malloc(). */
	assert_int_equal(live_now(), before + 1);
#ifdef TEST_ASAN
	assert_false(__asan_address_is_poisoned(q + SIZE - 1));
#endif
	q[SIZE - 1] = 2;
	obj_cache_free(OBJ_CACHE_GPU_JOB, q, SIZE);
	obj_cache_free(OBJ_CACHE_GPU_JOB, NULL, SIZE);
	assert_int_equal(obj_cache_count(OBJ_CACHE_GPU_JOB), 1);
	drain(OBJ_CACHE_GPU_JOB);
	assert_int_equal(live_now(), before);
}

/* Beyond OBJ_CACHE_MAX, a freed block goes to free(). */
static void test_bounded(void **state)
{
	void *p[OBJ_CACHE_MAX + 8];
	long before = live_now();
	unsigned int i;

	(void)state;
	for (i = 0; i < OBJ_CACHE_MAX + 8; i++)
		assert_non_null(p[i] = obj_cache_alloc(OBJ_CACHE_SCHED_JOB,
							SIZE));
	assert_int_equal(live_now(), before + OBJ_CACHE_MAX + 8);
	for (i = 0; i < OBJ_CACHE_MAX + 8; i++)
		obj_cache_free(OBJ_CACHE_SCHED_JOB, p[i], SIZE);
	assert_int_equal(obj_cache_count(OBJ_CACHE_SCHED_JOB), OBJ_CACHE_MAX);
	assert_int_equal(live_now(), before + OBJ_CACHE_MAX);
	/* The cached ones come back, last freed first, then malloc()'s. */
	for (i = 0; i < OBJ_CACHE_MAX; i++)
		assert_ptr_equal(obj_cache_alloc(OBJ_CACHE_SCHED_JOB, SIZE),
				 p[OBJ_CACHE_MAX - 1 - i]);
	assert_int_equal(live_now(), before + OBJ_CACHE_MAX);
	for (i = 0; i < OBJ_CACHE_MAX; i++)
		free(p[i]);
	assert_int_equal(live_now(), before);
}

/* A block of one class never comes out of another. */
static void test_classes_apart(void **state)
{
	void *p, *q;

	(void)state;
	p = obj_cache_alloc(OBJ_CACHE_SCHED_FENCES, SIZE);
	obj_cache_free(OBJ_CACHE_SCHED_FENCES, p, SIZE);
	assert_int_equal(obj_cache_count(OBJ_CACHE_SCHED_JOB), 0);
	q = obj_cache_alloc(OBJ_CACHE_SCHED_JOB, SIZE);
	assert_ptr_not_equal(q, p);
	assert_int_equal(obj_cache_count(OBJ_CACHE_SCHED_FENCES), 1);
	free(q);
	drain(OBJ_CACHE_SCHED_FENCES);
}

struct thread_arg {
	void *blocks[OBJ_CACHE_MAX];
	unsigned int n;
	unsigned int count_after;
};

/* Free the caller's blocks into this thread's cache, then exit. */
static void *free_then_exit(void *data)
{
	struct thread_arg *a = data;
	unsigned int i;

	for (i = 0; i < a->n; i++)
		obj_cache_free(OBJ_CACHE_GPU_JOB, a->blocks[i], SIZE);
	a->count_after = obj_cache_count(OBJ_CACHE_GPU_JOB);
	return NULL;
}

/*
 * Blocks made by one thread and freed by another join the other's cache,
 * and go back to free() when it exits: nothing is left behind.
 */
static void test_other_thread_and_exit(void **state)
{
	struct thread_arg a = { .n = OBJ_CACHE_MAX };
	long before = live_now();
	pthread_t t;
	unsigned int i;

	(void)state;
	for (i = 0; i < a.n; i++)
		a.blocks[i] = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	assert_int_equal(live_now(), before + OBJ_CACHE_MAX);
	assert_int_equal(pthread_create(&t, NULL, free_then_exit, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(a.count_after, OBJ_CACHE_MAX);
	assert_int_equal(obj_cache_count(OBJ_CACHE_GPU_JOB), 0);
	/* The thread's exit freed its cache. */
	assert_int_equal(live_now(), before);
}

/*
 * Another thread-exit hook that frees a block (a job or a fence put by
 * some other key's destructor) once this thread's cache hook has run, or
 * before this thread ever freed one: the block still goes back to free(),
 * at once or by the cache hook re-armed for the next destructor round.
 */
static pthread_key_t late_key;

static void late_free(void *block)
{
	obj_cache_free(OBJ_CACHE_GPU_JOB, block, SIZE);
}

struct late_arg {
	void *early;    /* freed first (registers the cache hook), or NULL */
	void *late;     /* freed by late_key's destructor */
};

static void *free_at_exit(void *data)
{
	struct late_arg *a = data;

	if (a->early)
		obj_cache_free(OBJ_CACHE_GPU_JOB, a->early, SIZE);
	assert_int_equal(pthread_setspecific(late_key, a->late), 0);
	return NULL;
}

static void test_free_from_exit_hook(void **state)
{
	long before;
	struct late_arg a;
	pthread_t t;

	(void)state;
	/* After the cache's key, whose hook then runs first in a round. */
	obj_cache_free(OBJ_CACHE_GPU_JOB,
		       obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE), SIZE);
	drain(OBJ_CACHE_GPU_JOB);
	before = live_now();
	assert_int_equal(pthread_key_create(&late_key, late_free), 0);
	a.early = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	a.late = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	assert_int_equal(pthread_create(&t, NULL, free_at_exit, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(live_now(), before);
	/* A thread whose only free is in an exit hook. */
	a.early = NULL;
	a.late = obj_cache_alloc(OBJ_CACHE_GPU_JOB, SIZE);
	assert_int_equal(pthread_create(&t, NULL, free_at_exit, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(live_now(), before);
	assert_int_equal(pthread_key_delete(late_key), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freed_block_comes_back),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_classes_apart),
		cmocka_unit_test(test_other_thread_and_exit),
		cmocka_unit_test(test_free_from_exit_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
