// SPDX-License-Identifier: MIT
/*
 * The last ttm_bo_put() of a busy buffer never waits and allocates
 * nothing (its delayed destroy arms one callback, allocated with the
 * buffer, on one fence at a time): proved by counting the calling
 * thread's allocations, and by making them all fail while the caller is
 * the one who will signal the fences (a put that waited would deadlock
 * there). A shared reservation whose copy cannot be allocated keeps the
 * buffer on it, still without a wait.
 *
 * The allocations are counted by malloc(), calloc() and realloc() of this
 * program, which glibc's own allocator serves (__libc_malloc()); under a
 * sanitizer, whose runtime owns the allocator, these tests skip.
 */
#include <pthread.h>
#include <stdlib.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "ttmsim/resv.h"
#include "util/compiler.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_HOOK 0
#else
#define ALLOC_HOOK 1
#endif

/* This thread's allocations: counted (COUNT) or failed too (FAIL). */
enum alloc_mode { ALLOC_PASS, ALLOC_COUNT, ALLOC_FAIL };
static __thread enum alloc_mode alloc_mode;
static __thread unsigned int alloc_calls;

#if ALLOC_HOOK
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

/* Whether this allocation goes ahead. */
static bool alloc_allowed(void)
{
	if (alloc_mode == ALLOC_PASS)
		return true;
	alloc_calls++;
	return alloc_mode == ALLOC_COUNT;
}

/* Seen by the library: the project builds with hidden visibility. */
#define INTERPOSE __attribute__((visibility("default")))

INTERPOSE void *malloc(size_t size)
{
	return alloc_allowed() ? __libc_malloc(size) : NULL;
}

INTERPOSE void *calloc(size_t n, size_t size)
{
	return alloc_allowed() ? __libc_calloc(n, size) : NULL;
}

INTERPOSE void *realloc(void *p, size_t size)
{
	return alloc_allowed() ? __libc_realloc(p, size) : NULL;
}
#endif

/* A driver's object, counting its destroys. */
struct obj {
	struct ttm_bo bo;
	unsigned int *destroyed;
};

static void obj_destroy(struct ttm_bo *bo)
{
	struct obj *o = container_of(bo, struct obj, bo);

	__atomic_fetch_add(o->destroyed, 1, __ATOMIC_RELAXED);
	free(o);
}

/* A new unreserved buffer of 4 KiB in GTT, on @resv (held) or its own. */
static struct obj *new_obj(struct ttm_device *dev, struct ttm_resv *resv,
			   unsigned int *destroyed)
{
	struct obj *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	o->destroyed = destroyed;
	assert_int_equal(ttm_bo_init_reserved(dev, &o->bo, TTM_BO_TYPE_DEVICE,
					      4 * KiB, &gtt_only, NULL, NULL,
					      resv, obj_destroy), 0);
	if (!resv)
		ttm_bo_unreserve(&o->bo);
	return o;
}

static struct ttm_fence *new_fence(void)
{
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	return f;
}

static uint64_t zombies(struct ttm_device *dev)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(dev, &s);
	return s.zombies;
}

/*
 * A device whose destroy worker is already running (its thread is made
 * at the first delayed destroy, which these tests do not count), the
 * calling thread's checker state made too (the ww checker's first lock).
 */
static struct ttm_device *warm_device(void)
{
	struct ttm_device_options opts = { 0 };
	unsigned int destroyed = 0;
	struct ttm_device *dev;
	struct ttm_fence *f;
	struct obj *o;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	o = new_obj(dev, NULL, &destroyed);
	f = busy_fence(&o->bo);
	ttm_bo_put(&o->bo);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 1);
	return dev;
}

/*
 * Three fences, one signalled before the put: the put allocates nothing,
 * the buffer waits for the other two in any order and is destroyed
 * after the last only.
 */
static void test_last_put_allocates_nothing(void **state)
{
	struct ttm_device *dev;
	struct ttm_fence *f[3];
	unsigned int destroyed = 0, i;
	struct obj *o;

	(void)state;
	if (!ALLOC_HOOK)
		skip();
	dev = warm_device();
	o = new_obj(dev, NULL, &destroyed);
	for (i = 0; i < 3; i++)
		f[i] = busy_fence(&o->bo);
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);

	alloc_calls = 0;
	alloc_mode = ALLOC_COUNT;
	ttm_bo_put(&o->bo);
	alloc_mode = ALLOC_PASS;
	assert_int_equal(alloc_calls, 0);
	assert_int_equal(destroyed, 0);
	assert_int_equal(zombies(dev), 1);

	/* The last unsignalled one first: the callback moves on to f[0]. */
	assert_int_equal(ttm_fence_signal(f[2], 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 0);
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 1);
	assert_int_equal(zombies(dev), 0);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * The signaller's put: a thread holds the fence of the buffer's job and
 * drops the buffer's last reference before it signals the fence. With
 * every allocation of that thread failing, a put that waited for the
 * fence would never return; the test's thread tells, and signals the
 * fence itself after WAIT_LIMIT_S to end the deadlock as a failure.
 */
struct signaller {
	struct ttm_device *dev;
	struct ttm_bo *bo;
	struct ttm_fence *fence;
	struct event put_done;
};

static void *signaller_main(void *arg)
{
	struct signaller *s = arg;
	struct ww_mutex m;

	/* The ww checker's state of this thread, made before it counts. */
	ww_mutex_init(&m, ttm_device_ww_class(s->dev));
	CHECK_INT(ww_mutex_lock(&m, NULL), 0);
	ww_mutex_unlock(&m);
	ww_mutex_destroy(&m);
	alloc_calls = 0;
	alloc_mode = ALLOC_FAIL;
	ttm_bo_put(s->bo);
	alloc_mode = ALLOC_PASS;
	event_set(&s->put_done);
	/* No-op when the test's thread had to signal it. */
	(void)ttm_fence_signal(s->fence, 0);
	return NULL;
}

static void run_signaller(struct ttm_device *dev, struct ttm_bo *bo,
			  struct ttm_fence *fence, const unsigned int *destroyed)
{
	struct signaller s = { .dev = dev, .bo = bo, .fence = fence };
	pthread_t t;
	bool returned;

	event_init(&s.put_done);
	t = start_thread(signaller_main, &s);
	returned = event_wait_for(&s.put_done, WAIT_LIMIT_S);
	if (!returned)
		(void)ttm_fence_signal(fence, 0);
	join_thread(t);
	event_destroy(&s.put_done);
	if (!returned)
		fail_msg("ttm_bo_put() waited for the fence its caller signals");
	ttm_device_flush_destroys(dev);
	assert_int_equal(*destroyed, 1);
	assert_int_equal(zombies(dev), 0);
}

static void test_signaller_put_without_memory(void **state)
{
	struct ttm_device *dev;
	unsigned int destroyed = 0;
	struct ttm_fence *f;
	struct obj *o;

	(void)state;
	if (!ALLOC_HOOK)
		skip();
	dev = warm_device();
	o = new_obj(dev, NULL, &destroyed);
	f = busy_fence(&o->bo);
	run_signaller(dev, &o->bo, f, &destroyed);
	ttm_fence_put(f);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * @r initialised, two buffers on it (*@o, *@keep), and one write fence on
 * it, returned.
 */
static struct ttm_fence *shared_pair(struct ttm_device *dev,
				     struct ttm_resv *r, struct obj **o,
				     struct obj **keep, unsigned int *destroyed)
{
	struct ttm_fence *f;

	ttm_resv_init(r, ttm_device_ww_class(dev));
	assert_int_equal(ww_mutex_lock(&r->lock, NULL), 0);
	*o = new_obj(dev, r, destroyed);
	*keep = new_obj(dev, r, destroyed);
	f = new_fence();
	assert_int_equal(ttm_resv_reserve_fences(r, 1), 0);
	ttm_resv_add_fence(r, f, TTM_RESV_USAGE_WRITE);
	ww_mutex_unlock(&r->lock);
	return f;
}

/*
 * On a shared reservation whose copy cannot be allocated: no wait either;
 * the buffer stays on the reservation, and its destroy still comes only
 * after the fence, before the owner finalises the reservation.
 */
static void test_shared_put_without_memory(void **state)
{
	struct ttm_device *dev;
	unsigned int destroyed = 0;
	struct ttm_fence *f;
	struct ttm_resv r;
	struct obj *o, *keep;

	(void)state;
	if (!ALLOC_HOOK)
		skip();
	dev = warm_device();
	f = shared_pair(dev, &r, &o, &keep, &destroyed);

	run_signaller(dev, &o->bo, f, &destroyed);
	ttm_bo_put(&keep->bo);
	assert_int_equal(destroyed, 2);
	ttm_resv_fini(&r);
	ttm_fence_put(f);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * The copy failing at the release on a reservation that stays busy (new
 * work keeps coming): the buffer waits for the fences present at its
 * release only. The worker makes the copy: a zombie left on the shared
 * reservation would move on to each later fence, never freed.
 */
static void test_shared_busy_without_memory(void **state)
{
	struct ttm_device *dev;
	unsigned int destroyed = 0, i;
	struct ttm_fence *f[4];
	struct ttm_resv r;
	struct obj *o, *keep;

	(void)state;
	if (!ALLOC_HOOK)
		skip();
	dev = warm_device();
	f[0] = shared_pair(dev, &r, &o, &keep, &destroyed);

	alloc_mode = ALLOC_FAIL;
	ttm_bo_put(&o->bo);
	alloc_mode = ALLOC_PASS;
	assert_int_equal(zombies(dev), 1);
	/* The worker has seen it (its copy made, or given up). */
	ttm_device_flush_destroys(dev);
	/* Later work, each added before the one before it signals. */
	for (i = 1; i < 4; i++) {
		f[i] = new_fence();
		assert_int_equal(ww_mutex_lock(&r.lock, NULL), 0);
		assert_int_equal(ttm_resv_reserve_fences(&r, 1), 0);
		ttm_resv_add_fence(&r, f[i], TTM_RESV_USAGE_READ);
		ww_mutex_unlock(&r.lock);
		assert_int_equal(ttm_fence_signal(f[i - 1], 0), 0);
		ttm_device_flush_destroys(dev);
		assert_int_equal(destroyed, 1); /* after f[0], not f[i] */
	}
	assert_int_equal(zombies(dev), 0);
	assert_int_equal(ttm_fence_signal(f[3], 0), 0);
	ttm_bo_put(&keep->bo);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 2);
	ttm_resv_fini(&r);
	for (i = 0; i < 4; i++)
		ttm_fence_put(f[i]);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * The last put racing with the signals of the buffer's three fences, each
 * from its own thread, all released by one barrier: whichever callback
 * runs last, and however the put's arm interleaves with them, the buffer
 * is destroyed exactly once, after all three. (A fence freed unsignalled
 * while the callback is armed on it cannot be made through the API: the
 * buffer's reservation holds a reference to each of its fences, and the
 * reservation is out of reach once the last reference is gone.)
 */
#define RACE_ROUNDS 200

struct put_race {
	pthread_barrier_t *barrier;
	struct ttm_fence *fence;
};

static void *race_signaller(void *arg)
{
	struct put_race *r = arg;

	pthread_barrier_wait(r->barrier);
	CHECK_INT(ttm_fence_signal(r->fence, 0), 0);
	return NULL;
}

static void test_put_races_signals(void **state)
{
	struct ttm_device_options opts = { 0 };
	struct put_race race[3];
	pthread_barrier_t barrier;
	struct ttm_device *dev;
	unsigned int destroyed = 0, round, i;
	pthread_t t[3];
	struct obj *o;

	(void)state;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	for (round = 0; round < RACE_ROUNDS; round++) {
		o = new_obj(dev, NULL, &destroyed);
		assert_int_equal(pthread_barrier_init(&barrier, NULL, 4), 0);
		for (i = 0; i < 3; i++) {
			race[i].barrier = &barrier;
			race[i].fence = busy_fence(&o->bo);
		}
		for (i = 0; i < 3; i++)
			t[i] = start_thread(race_signaller, &race[i]);
		pthread_barrier_wait(&barrier);
		ttm_bo_put(&o->bo);
		for (i = 0; i < 3; i++) {
			join_thread(t[i]);
			ttm_fence_put(race[i].fence);
		}
		pthread_barrier_destroy(&barrier);
		ttm_device_flush_destroys(dev);
		assert_int_equal(destroyed, round + 1);
		assert_int_equal(zombies(dev), 0);
	}
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
	assert_int_equal(destroyed, RACE_ROUNDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_put_allocates_nothing),
		cmocka_unit_test(test_signaller_put_without_memory),
		cmocka_unit_test(test_shared_put_without_memory),
		cmocka_unit_test(test_shared_busy_without_memory),
		cmocka_unit_test(test_put_races_signals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
