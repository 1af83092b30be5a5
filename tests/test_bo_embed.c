// SPDX-License-Identifier: MIT
/*
 * Driver-embedded buffers and shared reservations (ttm_bo_init_reserved()):
 * the destroy callback's count, thread and locks; the ticket a new buffer
 * is reserved under; buffers sharing one reservation (locking, fences,
 * their own placement, pin and LRU position); "individualize" on release;
 * eviction of buffers of a held reservation (allow_res_evict); the
 * locking helper on a reservation held for an evictable buffer.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "lib/bo_helpers.h"
#include "lib/bo_profiles.h"

#include "bo/bo.h"  /* the device lock, to check the destroy holds none */
#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "util/compiler.h"

/* A driver's object with a buffer in it. */
struct drv_obj {
	unsigned int magic;
	struct ttm_bo bo;
	pthread_t *thread;      /* where to record the destroying thread */
	bool *lock_free;        /* whether the device lock was free then */
	unsigned int *destroyed;
};

#define DRV_MAGIC 0xb0b0cafeu

static void drv_destroy(struct ttm_bo *bo)
{
	struct drv_obj *obj = container_of(bo, struct drv_obj, bo);
	struct ttm_device *dev = bo->dev;

	assert_int_equal(obj->magic, DRV_MAGIC);
	if (obj->thread)
		*obj->thread = pthread_self();
	if (obj->lock_free) {
		/* Held by this thread or another, the try fails. */
		*obj->lock_free = pthread_mutex_trylock(&dev->lock) == 0;
		if (*obj->lock_free)
			pthread_mutex_unlock(&dev->lock);
	}
	__atomic_fetch_add(obj->destroyed, 1, __ATOMIC_RELAXED);
	obj->magic = 0;
	free(obj);
}


static struct ttm_device *small_device(void)
{
	struct ttm_device_options opts = {
		.vram_size = 16 * KiB,
		.gtt_size = 16 * KiB,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

/* A new object, reserved as ttm_bo_init_reserved() returns it. */
static struct drv_obj *
new_typed_obj_ticket(struct ttm_device *dev, enum ttm_bo_type type,
		     uint64_t size, const struct ttm_placement *placement,
		     const struct ttm_operation_ctx *ctx,
		     struct ww_acquire_ctx *ticket, struct ttm_resv *resv,
		     unsigned int *destroyed)
{
	struct drv_obj *obj = calloc(1, sizeof(*obj));

	assert_non_null(obj);
	obj->magic = DRV_MAGIC;
	obj->destroyed = destroyed;
	assert_int_equal(ttm_bo_init_reserved(dev, &obj->bo, type, size,
					      placement, ctx, ticket, resv,
					      drv_destroy), 0);
	return obj;
}

/* The same without a ticket. */
static struct drv_obj *new_typed_obj(struct ttm_device *dev,
				     enum ttm_bo_type type, uint64_t size,
				     const struct ttm_placement *placement,
				     const struct ttm_operation_ctx *ctx,
				     struct ttm_resv *resv,
				     unsigned int *destroyed)
{
	return new_typed_obj_ticket(dev, type, size, placement, ctx, NULL,
				    resv, destroyed);
}

/* A device buffer's object, reserved with @ticket or none. */
static struct drv_obj *new_obj(struct ttm_device *dev, uint64_t size,
			       const struct ttm_placement *placement,
			       struct ww_acquire_ctx *ticket,
			       struct ttm_resv *resv, unsigned int *destroyed)
{
	return new_typed_obj_ticket(dev, TTM_BO_TYPE_DEVICE, size, placement,
				    NULL, ticket, resv, destroyed);
}

/*
 * Put @a and @b, idle, on @r: both destroyed at once; then @r and @dev
 * go.
 */
static void put_pair(struct ttm_device *dev, struct drv_obj *a,
		     struct drv_obj *b, struct ttm_resv *r,
		     const unsigned int *destroyed)
{
	unsigned int before = *destroyed;

	ttm_bo_put(&a->bo);
	ttm_bo_put(&b->bo);
	assert_int_equal(*destroyed, before + 2);
	ttm_resv_fini(r);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

static int bo_refs(struct ttm_bo *bo)
{
	return __atomic_load_n(&bo->refcount, __ATOMIC_RELAXED);
}

/* Unsignalled, on a timeline of its own: no other fence replaces it. */
static struct ttm_fence *new_fence(void)
{
	uint64_t timeline = ttm_fence_context_alloc(1);
	struct ttm_fence *f = NULL;
	int ret = ttm_fence_create(timeline, 1, &f);

	assert_int_equal(ret, 0);
	return f;
}

/* Add @f to the reservation of @bo, which the caller holds. */
static void add_fence_locked(struct ttm_bo *bo, struct ttm_fence *f)
{
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), f, TTM_RESV_USAGE_WRITE);
}

static void add_fence(struct ttm_bo *bo, struct ttm_fence *f)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	add_fence_locked(bo, f);
	ttm_bo_unreserve(bo);
}

static uint64_t zombies(struct ttm_device *dev)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(dev, &s);
	return s.zombies;
}

/*
 * The destroy runs once, after the last reference and the last fence,
 * from the device's worker (not the signalling thread), with the device
 * lock free; an idle buffer's runs in the last put, as TTM's.
 */
static void test_destroy_once_from_worker(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_device_stats s;
	struct drv_obj *obj;
	struct ttm_fence *f1 = new_fence(), *f2 = new_fence();
	pthread_t thread;
	bool lock_free = false;

	(void)state;
	obj = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	obj->thread = &thread;
	obj->lock_free = &lock_free;
	assert_int_equal(ttm_bo_type(&obj->bo), TTM_BO_TYPE_DEVICE);
	add_fence_locked(&obj->bo, f1);
	ttm_bo_unreserve(&obj->bo);
	add_fence(&obj->bo, f2);
	ttm_bo_get(&obj->bo);
	ttm_bo_put(&obj->bo);
	assert_int_equal(destroyed, 0);
	ttm_bo_put(&obj->bo);
	assert_int_equal(destroyed, 0);
	assert_int_equal(zombies(dev), 1);
	assert_int_equal(ttm_fence_signal(f1, 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 0);
	assert_int_equal(ttm_fence_signal(f2, 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 1);
	assert_false(pthread_equal(thread, pthread_self()));
	assert_true(lock_free);
	ttm_device_get_stats(dev, &s);
	assert_int_equal(s.buffers, 0);
	assert_int_equal(s.zombies, 0);
	assert_dev_ok(dev);

	/* Idle at the last put: destroyed there. */
	obj = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	obj->thread = &thread;
	obj->lock_free = &lock_free;
	lock_free = false;
	ttm_bo_unreserve(&obj->bo);
	ttm_bo_put(&obj->bo);
	assert_int_equal(destroyed, 2);
	assert_true(pthread_equal(thread, pthread_self()));
	assert_true(lock_free);

	/* Due but not yet run: ttm_device_destroy() drains the worker. */
	obj = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	ttm_bo_unreserve(&obj->bo);
	ttm_fence_put(f1);
	f1 = new_fence();
	add_fence(&obj->bo, f1);
	ttm_bo_put(&obj->bo);
	assert_int_equal(ttm_fence_signal(f1, 0), 0);
	ttm_device_destroy(dev);
	assert_int_equal(destroyed, 3);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
}

/*
 * A driver that tears its device down in the destroy of its last object,
 * which runs on the device's worker: the worker cannot join itself, and
 * its loop still uses the device, so it frees the device itself once the
 * delayed destroys still pending (a plain buffer's here) are done.
 */
static struct ttm_device *last_dev;
static unsigned int last_live;
static int last_ret = 1;
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t last_cond = PTHREAD_COND_INITIALIZER;
static bool last_freed;

static void last_destroy(struct ttm_bo *bo)
{
	struct drv_obj *obj = container_of(bo, struct drv_obj, bo);

	free(obj);
	if (--last_live == 0)
		last_ret = ttm_device_destroy(last_dev);
}

/*
 * The driver's hook: once ttm_device_destroy() returned 0 (the driver
 * may free the hooks' data then), it must not be called again. Called
 * and checked on the worker, the thread that set last_ret.
 */
static unsigned int late_hooks;

static void last_delete_mem(struct ttm_bo *bo, enum ttm_domain domain,
			    void *data)
{
	(void)bo;
	(void)domain;
	(void)data;
	if (last_ret == 0)
		late_hooks++;
}

static const struct ttm_device_funcs last_funcs = {
	.delete_mem_notify = last_delete_mem,
};

static void last_release(void *data)
{
	(void)data;
	pthread_mutex_lock(&last_lock);
	last_freed = true;
	pthread_cond_broadcast(&last_cond);
	pthread_mutex_unlock(&last_lock);
}

/* With @pending, a plain buffer's delayed destroy is still due then. */
static void destroy_device_from_worker(bool pending)
{
	struct ttm_fence *f[3] = { new_fence(), new_fence(), new_fence() };
	struct drv_obj *obj[2];
	struct ttm_bo *plain;
	struct timespec until;
	int i, ret = 0;

	struct ttm_device_options opts = {
		.vram_size = 16 * KiB,
		.gtt_size = 16 * KiB,
		.funcs = &last_funcs,
	};

	last_live = 0;
	last_ret = 1;
	last_freed = false;
	late_hooks = 0;
	assert_int_equal(ttm_device_create(&opts, &last_dev), 0);
	ttm_device_set_private(last_dev, &last_live, last_release);
	for (i = 0; i < 2; i++) {
		obj[i] = calloc(1, sizeof(*obj[i]));
		assert_non_null(obj[i]);
		assert_int_equal(ttm_bo_init_reserved(last_dev, &obj[i]->bo,
						      TTM_BO_TYPE_DEVICE,
						      4 * KiB, &gtt_only,
						      NULL, NULL, NULL,
						      last_destroy), 0);
		add_fence_locked(&obj[i]->bo, f[i]);
		ttm_bo_unreserve(&obj[i]->bo);
		last_live++;
	}
	assert_int_equal(ttm_bo_create(last_dev, 4 * KiB, &gtt_only, 0,
				       &plain), 0);
	if (pending)
		add_fence(plain, f[2]);
	for (i = 0; i < 2; i++)
		ttm_bo_put(&obj[i]->bo);
	ttm_bo_put(plain);
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	ttm_device_flush_destroys(last_dev);
	assert_int_equal(last_live, 1);
	/* The last object: its destroy destroys the device. */
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 50 * 1000 * 1000;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* Not before the plain buffer, still waiting for its fence. */
	pthread_mutex_lock(&last_lock);
	while (pending && !last_freed && ret == 0)
		ret = pthread_cond_timedwait(&last_cond, &last_lock, &until);
	assert_false(pending && last_freed);
	pthread_mutex_unlock(&last_lock);
	assert_int_equal(ttm_fence_signal(f[2], 0), 0);
	pthread_mutex_lock(&last_lock);
	while (!last_freed)
		pthread_cond_wait(&last_cond, &last_lock);
	pthread_mutex_unlock(&last_lock);
	assert_int_equal(last_live, 0);
	assert_int_equal(last_ret, 0);
	/* The plain buffer freed after the destroy: no hook for it. */
	assert_int_equal(late_hooks, 0);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
}

static void test_destroy_device_from_worker(void **state)
{
	(void)state;
	destroy_device_from_worker(false);
}

static void test_destroy_device_from_worker_pending(void **state)
{
	(void)state;
	destroy_device_from_worker(true);
}

/* Reserved under the caller's ticket, in its transaction. */
static void test_init_reserved_ticket(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ww_acquire_ctx t;
	struct drv_obj *a, *b;
	struct ttm_bo *plain;

	(void)state;
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &gtt_only, 0, &plain),
			 0);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(plain)->lock));

	ww_acquire_init(&t, ttm_device_ww_class(dev));
	assert_int_equal(ttm_bo_reserve(plain, false, false, &t), 0);
	a = new_obj(dev, 4 * KiB, &gtt_only, &t, NULL, &destroyed);
	assert_ptr_equal(ttm_resv_locking_ctx(ttm_bo_resv(&a->bo)), &t);
	/* Locked already, by this transaction. */
	assert_int_equal(ttm_bo_reserve(&a->bo, false, false, &t), -EALREADY);
	ttm_bo_unreserve(&a->bo);
	ttm_bo_unreserve(plain);
	ww_acquire_fini(&t);

	/* Without a ticket: locked with none. */
	b = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(&b->bo)->lock));
	assert_null(ttm_resv_locking_ctx(ttm_bo_resv(&b->bo)));
	ttm_bo_unreserve(&b->bo);

	/* Bad arguments leave nothing behind and never call destroy. */
	{
		struct ttm_bo bad;

		assert_int_equal(ttm_bo_init_reserved(dev, &bad,
						      TTM_BO_TYPE_DEVICE, 4 * KiB,
						      &gtt_only, NULL, NULL,
						      NULL, NULL), -EINVAL);
		assert_int_equal(ttm_bo_init_reserved(dev, &bad,
						      (enum ttm_bo_type)7,
						      4 * KiB, &gtt_only, NULL,
						      NULL, NULL, drv_destroy),
				 -EINVAL);
		assert_int_equal(ttm_bo_init_reserved(dev, &bad,
						      TTM_BO_TYPE_KERNEL,
						      32 * KiB, &gtt_only,
						      NULL, NULL, NULL,
						      drv_destroy), -ENOSPC);
	}
	ttm_bo_put(&a->bo);
	ttm_bo_put(&b->bo);
	ttm_bo_put(plain);
	assert_int_equal(destroyed, 2);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

/*
 * Two buffers on one reservation: one lock, one set of fences; each its
 * own placement, pin count and LRU position.
 */
static void test_shared_resv(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_fence *f = new_fence();
	struct drv_obj *a, *b;
	struct ttm_bo *lru[4];
	struct ttm_resv r;

	(void)state;
	ttm_resv_init(&r, ttm_device_ww_class(dev));
	ww_mutex_lock(&r.lock, NULL);
	a = new_obj(dev, 4 * KiB, &gtt_only, NULL, &r, &destroyed);
	b = new_obj(dev, 4 * KiB, &gtt_only, NULL, &r, &destroyed);
	assert_ptr_equal(ttm_bo_resv(&a->bo), &r);
	assert_ptr_equal(ttm_bo_resv(&b->bo), &r);
	ww_mutex_unlock(&r.lock);

	/* Locking one locks the other. */
	assert_int_equal(ttm_bo_reserve(&a->bo, false, false, NULL), 0);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(&b->bo)->lock));
	assert_int_equal(ttm_bo_reserve(&b->bo, false, true, NULL), -EBUSY);
	/* Its own placement and pin count. */
	assert_int_equal(ttm_bo_validate(&b->bo, &system_only, &ctx), 0);
	assert_int_equal(ttm_bo_domain(&a->bo), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(&b->bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_validate(&b->bo, &gtt_only, &ctx), 0);
	/* A fence added through one is the other's. */
	add_fence_locked(&a->bo, f);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(&b->bo),
					    TTM_RESV_USAGE_BOOKKEEP));
	assert_int_equal(ttm_bo_pin(&a->bo), 0);
	assert_int_equal(ttm_bo_pin_count(&a->bo), 1);
	assert_int_equal(ttm_bo_pin_count(&b->bo), 0);
	/* b alone on the LRU, a pinned. */
	assert_int_equal(lru_order(dev, TTM_DOMAIN_GTT, lru, 4), 1);
	assert_ptr_equal(lru[0], &b->bo);
	assert_int_equal(ttm_bo_unpin(&a->bo), 0);
	ttm_bo_unreserve(&a->bo);
	/* Each its own LRU position: the unreserved one is bumped. */
	assert_int_equal(lru_order(dev, TTM_DOMAIN_GTT, lru, 4), 2);
	assert_ptr_equal(lru[0], &b->bo);
	assert_ptr_equal(lru[1], &a->bo);
	assert_int_equal(ttm_bo_reserve(&b->bo, false, false, NULL), 0);
	ttm_bo_unreserve(&b->bo);
	assert_int_equal(lru_order(dev, TTM_DOMAIN_GTT, lru, 4), 2);
	assert_ptr_equal(lru[0], &a->bo);
	assert_ptr_equal(lru[1], &b->bo);

	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	put_pair(dev, a, b, &r, &destroyed);
}

/*
 * Released while the shared reservation is busy, a buffer takes a copy of
 * its fences: it waits for those only, and the reservation may go first.
 */
static void test_individualize(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_fence *f1 = new_fence(), *f2 = new_fence();
	struct drv_obj *a, *b, *c;
	struct ttm_resv *r = malloc(sizeof(*r));
	struct ttm_bo *big;

	(void)state;
	assert_non_null(r);
	ttm_resv_init(r, ttm_device_ww_class(dev));
	ww_mutex_lock(&r->lock, NULL);
	a = new_obj(dev, 4 * KiB, &gtt_only, NULL, r, &destroyed);
	b = new_obj(dev, 4 * KiB, &gtt_only, NULL, r, &destroyed);
	c = new_obj(dev, 4 * KiB, &gtt_only, NULL, r, &destroyed);
	add_fence_locked(&a->bo, f1);
	ww_mutex_unlock(&r->lock);

	/* a goes with f1 pending; f2 comes after, for the others. */
	ttm_bo_put(&a->bo);
	assert_int_equal(zombies(dev), 1);
	add_fence(&b->bo, f2);
	assert_int_equal(ttm_fence_signal(f1, 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 1);           /* f2 is not a's */
	assert_false(ttm_resv_test_signaled(r, TTM_RESV_USAGE_BOOKKEEP));

	/* b and c go with f2 pending; then the shared one goes first. */
	ttm_bo_put(&b->bo);
	ttm_bo_put(&c->bo);
	assert_int_equal(zombies(dev), 2);
	ttm_resv_fini(r);
	free(r);
	/*
	 * Room for a new buffer takes an eviction walk over the zombies,
	 * which must not touch the freed reservation (ASan).
	 */
	assert_int_equal(ttm_bo_create(dev, 12 * KiB, &gtt_only,
				       TTM_BO_CREATE_NO_WAIT_GPU, &big),
			 -ENOSPC);
	assert_int_equal(destroyed, 1);
	assert_int_equal(ttm_fence_signal(f2, 0), 0);
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 3);
	/* Now the room is free. */
	assert_int_equal(ttm_bo_create(dev, 12 * KiB, &gtt_only, 0, &big), 0);
	ttm_bo_put(big);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

/*
 * Creation without a ticket makes room by flushing delayed destroys that
 * are due, rather than failing while the worker has not run yet.
 */
static void test_create_waits_for_worker(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_fence *f = new_fence();
	struct drv_obj *a;
	struct ttm_bo *bo;
	int i;

	(void)state;
	for (i = 0; i < 50; i++) {
		a = new_obj(dev, 16 * KiB, &gtt_only, NULL, NULL, &destroyed);
		add_fence_locked(&a->bo, f);
		ttm_bo_unreserve(&a->bo);
		ttm_bo_put(&a->bo);
		assert_int_equal(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
		f = new_fence();
		assert_int_equal(ttm_bo_create(dev, 16 * KiB, &gtt_only, 0,
					       &bo), 0);
		ttm_bo_put(bo);
	}
	ttm_fence_put(f);
	/* Room came back before the last destroy returned: wait for it. */
	ttm_device_flush_destroys(dev);
	assert_int_equal(destroyed, 50);
	ttm_device_destroy(dev);
}

/*
 * Eviction takes a buffer of the reservation the caller holds only when
 * the operation allows it.
 */
static void test_allow_res_evict(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device_stats s;
	struct drv_obj *a, *b, *c;
	struct ttm_resv r;
	struct ttm_bo *other;

	(void)state;
	ttm_resv_init(&r, ttm_device_ww_class(dev));
	ww_mutex_lock(&r.lock, NULL);
	a = new_obj(dev, 8 * KiB, &vram_only, NULL, &r, &destroyed);
	b = new_obj(dev, 8 * KiB, &vram_only, NULL, &r, &destroyed);
	ww_mutex_unlock(&r.lock);
	/* Another buffer, in GTT: it wants VRAM, which a and b fill. */
	assert_int_equal(ttm_bo_create(dev, 8 * KiB, &gtt_only, 0, &other),
			 0);

	/* Held by the caller, not allowed: as good as pinned. */
	ww_mutex_lock(&r.lock, NULL);
	assert_int_equal(ttm_bo_init_reserved(dev, &(struct drv_obj){ 0 }.bo,
					      TTM_BO_TYPE_KERNEL, 8 * KiB,
					      &vram_only, &ctx, NULL, &r,
					      drv_destroy), -ENOSPC);
	/* Allowed for another reservation: still not. */
	{
		struct ttm_resv r2;

		ttm_resv_init(&r2, ttm_device_ww_class(dev));
		ctx.allow_res_evict = true;
		ctx.resv = &r2;
		assert_int_equal(ttm_bo_reserve(other, false, true, NULL), 0);
		assert_int_equal(ttm_bo_validate(other, &vram_only, &ctx),
				 -ENOSPC);
		ttm_bo_unreserve(other);
		ttm_resv_fini(&r2);
	}
	ttm_device_get_stats(dev, &s);
	assert_int_equal(s.evictions, 0);

	/* Allowed: the new kernel buffer on r evicts a buffer of r. */
	ctx.resv = &r;
	c = new_typed_obj(dev, TTM_BO_TYPE_KERNEL, 8 * KiB, &vram_only, &ctx,
			  &r, &destroyed);
	ttm_device_get_stats(dev, &s);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(ttm_bo_domain(&a->bo), TTM_DOMAIN_GTT); /* LRU head */
	assert_int_equal(ttm_bo_domain(&b->bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(&c->bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_type(&c->bo), TTM_BO_TYPE_KERNEL);
	/* The caller's lock is still held. */
	assert_true(ww_mutex_is_locked(&r.lock));
	ww_mutex_unlock(&r.lock);
	assert_dev_ok(dev);

	ttm_bo_put(&a->bo);
	ttm_bo_put(&b->bo);
	ttm_bo_put(&c->bo);
	ttm_bo_put(other);
	assert_int_equal(destroyed, 3);
	ttm_resv_fini(&r);
	ttm_device_destroy(dev);
}

/* The same under a ticket, through ttm_bo_validate(). */
static void test_allow_res_evict_ticket(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct ttm_operation_ctx ctx = { 0 };
	struct ww_acquire_ctx t;
	struct drv_obj *a, *b;
	struct ttm_resv r;

	(void)state;
	ttm_resv_init(&r, ttm_device_ww_class(dev));
	ww_acquire_init(&t, ttm_device_ww_class(dev));
	assert_int_equal(ww_mutex_lock(&r.lock, &t), 0);
	a = new_obj(dev, 12 * KiB, &vram_only, NULL, &r, &destroyed);
	b = new_obj(dev, 8 * KiB, &gtt_only, NULL, &r, &destroyed);
	assert_int_equal(ttm_bo_validate(&b->bo, &vram_only, &ctx), -ENOSPC);
	ctx.allow_res_evict = true;
	ctx.resv = &r;
	assert_int_equal(ttm_bo_validate(&b->bo, &vram_only, &ctx), 0);
	/* GTT, where b still was, had no room for it. */
	assert_int_equal(ttm_bo_domain(&a->bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(&b->bo), TTM_DOMAIN_VRAM);
	ww_mutex_unlock(&r.lock);
	ww_acquire_fini(&t);
	put_pair(dev, a, b, &r, &destroyed);
}

/*
 * Validate @b into VRAM under an exec that holds the reservation it
 * shares with @a: @a is locked as an ignored duplicate (@dup) or not
 * at all, so it is never in the exec's list. The result, under a
 * watchdog: a failure to see that @a cannot go must not hang.
 */
static int validate_beside_unlisted(struct drv_obj *a, struct drv_obj *b,
				    bool dup, bool *fired)
{
	struct ttm_exec exec;
	struct ttm_operation_ctx ctx = { .interruptible = true,
					 .exec = &exec };
	struct watchdog w;
	int ret = 0;

	watchdog_start(&w);
	ttm_exec_init(&exec, b->bo.dev, TTM_EXEC_INTERRUPTIBLE |
					TTM_EXEC_IGNORE_DUPLICATES);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_bo(&exec, &b->bo, 1);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		if (dup) {
			ret = ttm_exec_prepare_bo(&exec, &a->bo, 1);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
		}
		assert_int_equal(ttm_exec_count(&exec), 1);
		ret = ttm_bo_validate(&b->bo, &vram_only, &ctx);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_fini(&exec);
	*fired = watchdog_stop(&w);
	return ret;
}

/*
 * A buffer of a reservation the job holds cannot be evicted by it, even
 * if the job never listed it: room it fills is never coming, so
 * -ENOSPC, as without an exec, not a wait for it without end.
 */
static void test_unlisted_sibling_enospc(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct drv_obj *a, *b;
	struct ttm_resv r;
	bool fired;

	(void)state;
	ttm_resv_init(&r, ttm_device_ww_class(dev));
	ww_mutex_lock(&r.lock, NULL);
	a = new_obj(dev, 12 * KiB, &vram_only, NULL, &r, &destroyed);
	b = new_obj(dev, 8 * KiB, &gtt_only, NULL, &r, &destroyed);
	ww_mutex_unlock(&r.lock);

	assert_int_equal(validate_beside_unlisted(a, b, true, &fired),
			 -ENOSPC);
	assert_false(fired);
	assert_int_equal(validate_beside_unlisted(a, b, false, &fired),
			 -ENOSPC);
	assert_false(fired);
	assert_int_equal(ttm_bo_domain(&a->bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(&b->bo), TTM_DOMAIN_GTT);
	put_pair(dev, a, b, &r, &destroyed);
}

/* A kernel buffer is the driver's alone: no client handle. */
static void test_kernel_no_handle(void **state)
{
	struct ttm_device_options opts = { 0 };
	struct ttm_client *client;
	struct ttm_device *dev;
	struct drv_obj *k, *d;
	unsigned int destroyed = 0;
	uint32_t handle = 0;
	struct ttm_gpu *gpu;
	bool is_new;

	(void)state;
	/* Clients need a GPU. */
	assert_int_equal(ttm_gpu_create(1, NULL, &gpu), 0);
	opts.gpu = gpu;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	assert_int_equal(ttm_client_open(dev, &client), 0);
	k = new_typed_obj(dev, TTM_BO_TYPE_KERNEL, 4 * KiB, &gtt_only, NULL,
			  NULL, &destroyed);
	ttm_bo_unreserve(&k->bo);
	assert_int_equal(ttm_client_bo_add(client, &k->bo, &handle, &is_new),
			 -EINVAL);
	d = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	ttm_bo_unreserve(&d->bo);
	assert_int_equal(ttm_client_bo_add(client, &d->bo, &handle, &is_new),
			 0);
	assert_true(is_new);
	ttm_bo_put(&k->bo);
	ttm_bo_put(&d->bo);
	assert_int_equal(destroyed, 1);
	ttm_client_close(client);
	assert_int_equal(destroyed, 2);
	ttm_device_destroy(dev);
	ttm_gpu_destroy(gpu);
}

/*
 * An eviction backs off on @v, so the next pass holds @v's reservation
 * for eviction only. The body then locks @w, on the same reservation: the
 * lock passes to @w, listed, so that the job's fence, added to every
 * listed buffer, reaches the reservation; no -EALREADY without
 * TTM_EXEC_IGNORE_DUPLICATES. @v is no longer evictable, and locking it
 * after @w is a duplicate, as for any two buffers of one reservation.
 * With TTM_EXEC_CALLER_REFS, @w is listed without a reference of the
 * helper's and @v's (taken for its back-off) goes: the counts end where
 * they began.
 */
static void test_exec_evictable_shared_resv(void **state)
{
	static const uint32_t flags[] = { 0, TTM_EXEC_IGNORE_DUPLICATES,
					  TTM_EXEC_CALLER_REFS };
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0, i;
	struct ttm_exec exec;
	struct ttm_fence *f;
	struct drv_obj *v, *w, *x;
	struct ttm_bo *bo;
	struct ttm_resv r;
	int passes, ret;

	(void)state;
	ttm_resv_init(&r, ttm_device_ww_class(dev));
	ww_mutex_lock(&r.lock, NULL);
	v = new_obj(dev, 4 * KiB, &gtt_only, NULL, &r, &destroyed);
	w = new_obj(dev, 4 * KiB, &gtt_only, NULL, &r, &destroyed);
	ww_mutex_unlock(&r.lock);
	x = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	ttm_bo_unreserve(&x->bo);

	for (unsigned int round = 0; round < ARRAY_SIZE(flags); round++) {
		bool caller_refs = flags[round] & TTM_EXEC_CALLER_REFS;

		f = new_fence();
		passes = 0;
		ttm_exec_init(&exec, dev, flags[round]);
		ttm_exec_until_all_locked(&exec) {
			/* A ticket holding nothing never backs off. */
			ret = ttm_exec_prepare_bo(&exec, &x->bo, 1);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
			if (++passes == 1) {
				/* An injected back-off, as from eviction. */
				ww_debug_inject(7, 1);
				ret = ttm_bo_reserve(&v->bo, false, false,
						     ttm_exec_ticket(&exec));
				ww_debug_inject(0, 0);
				assert_int_equal(ret, -EDEADLK);
				ttm_exec_set_contended(&exec, &v->bo);
				ttm_exec_retry_on_contention(&exec);
			}
			assert_true(ttm_exec_is_evictable(&exec, &v->bo));
			ret = ttm_exec_prepare_bo(&exec, &w->bo, 1);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
		}
		assert_int_equal(passes, 2);
		assert_int_equal(ttm_exec_count(&exec), 2);
		assert_ptr_equal(ttm_exec_locked_bo(&exec, 1), &w->bo);
		/* The test's own, plus the helper's unless lent. */
		assert_int_equal(bo_refs(&w->bo), caller_refs ? 1 : 2);
		assert_int_equal(bo_refs(&v->bo), 1);
		assert_false(ttm_exec_is_evictable(&exec, &v->bo));
		assert_null(ttm_exec_evictable_bo(&exec, 0));
		/* @v after @w: a duplicate, not listed. */
		assert_int_equal(ttm_exec_lock_bo(&exec, &v->bo),
				 (flags[round] & TTM_EXEC_IGNORE_DUPLICATES) ?
				 0 : -EALREADY);
		assert_int_equal(ttm_exec_count(&exec), 2);
		ttm_exec_done(&exec);

		/* The kernel's idiom: the job's fence on each listed one. */
		ttm_exec_for_each_locked_bo(&exec, i, bo)
			ttm_resv_add_fence(ttm_bo_resv(bo), f,
					   TTM_RESV_USAGE_WRITE);
		assert_false(ttm_resv_test_signaled(&r,
						    TTM_RESV_USAGE_BOOKKEEP));
		ttm_exec_fini(&exec);
		assert_false(ww_mutex_is_locked(&r.lock));
		assert_int_equal(bo_refs(&v->bo), 1);
		assert_int_equal(bo_refs(&w->bo), 1);
		assert_int_equal(bo_refs(&x->bo), 1);
		assert_int_equal(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
	}
	ttm_bo_put(&x->bo);
	put_pair(dev, v, w, &r, &destroyed);
}

/* A driver tells its objects from the core's by their destroy callback. */
static void test_is_driver_bo(void **state)
{
	struct ttm_device *dev = small_device();
	unsigned int destroyed = 0;
	struct drv_obj *a;
	struct ttm_bo *plain;

	(void)state;
	a = new_obj(dev, 4 * KiB, &gtt_only, NULL, NULL, &destroyed);
	ttm_bo_unreserve(&a->bo);
	assert_true(ttm_bo_is_driver_bo(&a->bo, drv_destroy));
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &gtt_only, 0, &plain),
			 0);
	assert_false(ttm_bo_is_driver_bo(plain, drv_destroy));
	ttm_bo_put(plain);
	ttm_bo_put(&a->bo);
	assert_int_equal(destroyed, 1);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

/*
 * A buffer's placement is its device's one copy of it (bytes per buffer,
 * docs/bo-design.md): buffers created with equal placements (places past
 * the count ignored) and the same destroy share it; it does not change
 * when the caller's variable does; another destroy gets its own.
 */
static void test_placement_interned(void **state)
{
	struct ttm_device *dev = small_device();
	struct ttm_placement pl = vram_gtt, junk = vram_gtt;
	const struct ttm_placement *pa, *pb;
	unsigned int destroyed = 0;
	struct ttm_bo *a, *b, *c;
	struct drv_obj *d;

	(void)state;
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &a), 0);
	pa = ttm_bo_placement(a);
	assert_ptr_not_equal(pa, &pl);
	/* The caller's variable changes: the buffer's placement does not. */
	pl.count = 1;
	pl.places[0].domain = TTM_DOMAIN_GTT;
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &b), 0);
	pb = ttm_bo_placement(b);
	assert_ptr_not_equal(pa, pb);
	assert_int_equal(pa->count, vram_gtt.count);
	assert_memory_equal(pa->places, vram_gtt.places,
			    vram_gtt.count * sizeof(vram_gtt.places[0]));
	assert_int_equal(pb->count, 1);
	assert_int_equal(pb->places[0].domain, TTM_DOMAIN_GTT);
	/* Places past the count are not the placement's: the same copy. */
	junk.places[TTM_PLACEMENT_MAX - 1].fpfn = 123;
	junk.places[TTM_PLACEMENT_MAX - 1].domain = TTM_DOMAIN_VRAM;
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &junk, 0, &c), 0);
	assert_ptr_equal(ttm_bo_placement(c), pa);
	/* A driver's buffer, with its own destroy: its own copy. */
	d = new_obj(dev, 4 * KiB, &vram_gtt, NULL, NULL, &destroyed);
	ttm_bo_unreserve(&d->bo);
	assert_ptr_not_equal(ttm_bo_placement(&d->bo), pa);
	assert_memory_equal(ttm_bo_placement(&d->bo), pa, sizeof(*pa));
	assert_true(ttm_bo_is_driver_bo(&d->bo, drv_destroy));
	assert_false(ttm_bo_is_driver_bo(c, drv_destroy));
	ttm_bo_put(&d->bo);
	ttm_bo_put(c);
	ttm_bo_put(b);
	ttm_bo_put(a);
	assert_int_equal(destroyed, 1);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

/*
 * An interned placement goes with the last buffer created with it, and
 * with a creation that fails: a client choosing a new window
 * (GEM_CREATE's fpfn and lpfn) for every buffer it creates and closes
 * must not grow its device's table for as long as the device lives.
 */
static void test_placement_interned_freed(void **state)
{
	struct ttm_device *dev = small_device();
	struct ttm_placement pl = { .count = 1 };
	struct ttm_bo *bo, *pinned, *keep[2];
	unsigned int f, l, d;

	(void)state;
	for (d = TTM_DOMAIN_VRAM; d <= TTM_DOMAIN_GTT; d++) {
		for (f = 0; f < 4; f++) {
			for (l = f + 1; l <= 4; l++) {
				pl.places[0] = (struct ttm_place){
					.domain = d, .fpfn = f, .lpfn = l,
				};
				assert_int_equal(ttm_bo_create(dev, 4 * KiB,
							       &pl, 0, &bo),
						 0);
				assert_int_equal(profiles_of(dev), 1);
				ttm_bo_put(bo);
			}
		}
	}
	assert_int_equal(profiles_of(dev), 0);
	/* Shared: the copy stays while one of its buffers does. */
	pl.places[0] = (struct ttm_place){ .domain = TTM_DOMAIN_VRAM };
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &keep[0]), 0);
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &keep[1]), 0);
	ttm_bo_put(keep[0]);
	assert_int_equal(profiles_of(dev), 1);
	assert_int_equal(ttm_bo_placement(keep[1])->places[0].domain,
			 TTM_DOMAIN_VRAM);
	ttm_bo_put(keep[1]);
	assert_int_equal(profiles_of(dev), 0);
	/* A creation that fails (no room, the only page pinned) drops it. */
	pl.places[0] = (struct ttm_place){
		.domain = TTM_DOMAIN_VRAM, .fpfn = 0, .lpfn = 1,
	};
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &pinned), 0);
	assert_int_equal(ttm_bo_reserve(pinned, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(pinned), 0);
	ttm_bo_unreserve(pinned);
	pl.places[0].flags = TTM_PLACE_CONTIGUOUS;
	assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &bo), -ENOSPC);
	assert_int_equal(profiles_of(dev), 1);
	assert_int_equal(ttm_bo_reserve(pinned, false, false, NULL), 0);
	ttm_bo_unpin(pinned);
	ttm_bo_unreserve(pinned);
	ttm_bo_put(pinned);
	assert_int_equal(profiles_of(dev), 0);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

/*
 * Placements come from userspace (GEM_CREATE's window): a client with
 * many distinct windows live must not make every creation walk one long
 * hash chain under the device lock. The table grows with them.
 */
static void test_placement_table_grows(void **state)
{
	struct ttm_device_options opts = { .gtt_size = 4096 * 4 * KiB };
	struct ttm_placement pl = { .count = 1 };
	enum { N = 1000 };
	struct ttm_bo *bo[N];
	struct ttm_device *dev;
	unsigned int i;

	(void)state;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	for (i = 0; i < N; i++) {
		pl.places[0] = (struct ttm_place){
			.domain = TTM_DOMAIN_GTT, .fpfn = 0, .lpfn = i + 1,
		};
		assert_int_equal(ttm_bo_create(dev, 4 * KiB, &pl, 0, &bo[i]),
				 0);
	}
	assert_int_equal(profiles_of(dev), N);
	pthread_mutex_lock(&dev->lock);
	/* Two a chain on average, at most. */
	assert_true(dev->profile_bits > 4);
	assert_true(N <= 2u << dev->profile_bits);
	pthread_mutex_unlock(&dev->lock);
	for (i = 0; i < N; i++) {
		assert_int_equal(ttm_bo_placement(bo[i])->places[0].lpfn, i + 1);
		ttm_bo_put(bo[i]);
	}
	assert_int_equal(profiles_of(dev), 0);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

#define INTERN_THREADS 4
#define INTERN_ROUNDS 300

struct intern_arg {
	struct ttm_device *dev;
	pthread_barrier_t *start;
	unsigned int seed;
};

/*
 * Create and put buffers whose placements the other threads use too, so
 * that the same profiles are made, shared, and freed with their last
 * buffer concurrently.
 */
static void *intern_thread(void *p)
{
	struct intern_arg *arg = p;
	struct ttm_placement pl = { .count = 1 };
	struct ttm_bo *bo[2];
	unsigned int i;

	pthread_barrier_wait(arg->start);
	for (i = 0; i < INTERN_ROUNDS; i++) {
		pl.places[0] = (struct ttm_place){
			.domain = TTM_DOMAIN_GTT,
			.fpfn = (i + arg->seed) % 3,
		};
		if (ttm_bo_create(arg->dev, 4 * KiB, &pl, 0, &bo[0]))
			return (void *)1;
		pl.places[0].fpfn = i % 5;
		if (ttm_bo_create(arg->dev, 4 * KiB, &pl, 0, &bo[1]))
			return (void *)1;
		if (ttm_bo_placement(bo[1])->places[0].fpfn != i % 5)
			return (void *)1;
		ttm_bo_put(bo[0]);
		ttm_bo_put(bo[1]);
	}
	return NULL;
}

/*
 * Threads interning, sharing and dropping the same placements at once
 * (run under ThreadSanitizer in .ci/run): each buffer gets its own
 * placement, and none is left after the last buffer.
 */
static void test_placement_interned_threads(void **state)
{
	struct ttm_device *dev;
	struct intern_arg arg[INTERN_THREADS];
	pthread_t t[INTERN_THREADS];
	pthread_barrier_t start;
	unsigned int i;
	void *ret;

	(void)state;
	assert_int_equal(ttm_device_create(NULL, &dev), 0);
	assert_int_equal(pthread_barrier_init(&start, NULL, INTERN_THREADS),
			 0);
	for (i = 0; i < INTERN_THREADS; i++) {
		arg[i] = (struct intern_arg){ dev, &start, i };
		assert_int_equal(pthread_create(&t[i], NULL, intern_thread,
						&arg[i]), 0);
	}
	for (i = 0; i < INTERN_THREADS; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	pthread_barrier_destroy(&start);
	assert_int_equal(profiles_of(dev), 0);
	assert_dev_ok(dev);
	ttm_device_destroy(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_once_from_worker),
		cmocka_unit_test(test_destroy_device_from_worker),
		cmocka_unit_test(test_destroy_device_from_worker_pending),
		cmocka_unit_test(test_init_reserved_ticket),
		cmocka_unit_test(test_shared_resv),
		cmocka_unit_test(test_individualize),
		cmocka_unit_test(test_create_waits_for_worker),
		cmocka_unit_test(test_allow_res_evict),
		cmocka_unit_test(test_allow_res_evict_ticket),
		cmocka_unit_test(test_unlisted_sibling_enospc),
		cmocka_unit_test(test_kernel_no_handle),
		cmocka_unit_test(test_exec_evictable_shared_resv),
		cmocka_unit_test(test_is_driver_bo),
		cmocka_unit_test(test_placement_interned),
		cmocka_unit_test(test_placement_interned_freed),
		cmocka_unit_test(test_placement_table_grows),
		cmocka_unit_test(test_placement_interned_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
