// SPDX-License-Identifier: MIT
/*
 * Reference counting and destruction, delayed while GPU work still uses
 * the buffer (TTM's delayed destroy), and the device's destroy worker.
 *
 * The last reference of an idle buffer frees it at once, in the caller's
 * thread, as TTM does. A busy one arms its one callback (allocated with
 * the buffer: the last put allocates nothing, so it never has to fall back
 * to waiting, which would deadlock a caller who signals the fences itself)
 * on an unsignalled fence; each time it runs it re-arms on the next one,
 * and the one that finds none left hands the buffer to the device's worker
 * thread (TTM's delayed-delete workqueue), which frees it and calls its
 * destroy. So a driver's destroy never runs inside a fence callback, where
 * the signaller's locks are held, nor under the device lock. Until then
 * the buffer keeps its memory, still accounted and still on its list, so
 * nothing can reuse memory the GPU may still be writing.
 *
 * A buffer on a shared reservation first takes a private copy of that
 * reservation's fences (TTM's "individualize"), so that it waits only for
 * the work present at its release, and the reservation, which its owner
 * may finalise once the last buffer on it was released, is no longer used.
 * If the copy cannot be allocated there, the buffer goes to the worker,
 * which tries again before it arms the callback: arming on the shared
 * reservation itself would re-arm on all later work there, and a buffer on
 * an always-busy reservation would never be freed (nor its device
 * destroyed). Only if the worker cannot allocate it either does the buffer
 * wait on the shared reservation.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "util/compiler.h"
#include "ww/debug.h"

TTM_EXPORT struct ttm_bo *ttm_bo_get(struct ttm_bo *bo)
{
	if (bo)
		__atomic_fetch_add(&bo->refcount, 1, __ATOMIC_RELAXED);
	return bo;
}

/* Hand @bo, whose fences all signalled, to its device's worker. */
static void destroy_queue(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;

	pthread_mutex_lock(&dev->work_lock);
	bo->destroy_next = NULL;
	*dev->work_tail = bo;
	dev->work_tail = &bo->destroy_next;
	pthread_cond_signal(&dev->work_cond);
	pthread_mutex_unlock(&dev->work_lock);
}

static void destroy_cb_func(struct ttm_fence *fence,
			    struct ttm_fence_cb *cb);

/*
 * Arm @bo's one callback on the first unsignalled fence of its
 * reservation; false when none is left. Allocates nothing: the callback
 * was allocated with the buffer. On its own reservation nobody adds work
 * any more (nobody holds @bo), so the walk ends; on a shared one (the copy
 * failed at the release and in the worker) later work there is waited
 * for too. Also runs in fence callbacks, which hold no fence lock.
 */
static bool destroy_arm(struct ttm_bo *bo)
{
	struct ttm_fence *f;
	int ret;

	for (;;) {
		f = resv_first_pending(bo->resv, TTM_RESV_USAGE_BOOKKEEP);
		if (!f)
			return false;
		ret = ttm_fence_add_callback(f, &bo->destroy_cb,
					     destroy_cb_func);
		/*
		 * The callback does not need the fence kept alive: one freed
		 * unsignalled runs it too.
		 */
		ttm_fence_put(f);
		if (!ret)
			return true;
		/* Signalled meanwhile: the next walk skips it. */
	}
}

/* Runs when the fence signals, or is freed unsignalled: the next one. */
static void destroy_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct ttm_bo *bo = container_of(cb, struct ttm_bo, destroy_cb);

	(void)fence;
	/*
	 * The fence is done with @cb (cb_list_run() read its link before
	 * this call): the queue may reuse it as destroy_next.
	 */
	if (!destroy_arm(bo))
		destroy_queue(bo);
}

/* Without a worker thread, fall back to waiting here. */
static void destroy_sync(struct ttm_bo *bo)
{
	ttm_resv_wait(bo->resv, TTM_RESV_USAGE_BOOKKEEP, false, -1);
	bo_free(bo);
}

/*
 * Give @bo, on a shared reservation, a copy of its fences in its own and
 * switch to it. -ENOMEM leaves it on the shared one.
 */
static int bo_individualize(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	int ret;

	/* Nobody else ever locks @bo->base: this cannot fail. */
	if (!ww_mutex_trylock(&bo->base.lock, NULL))
		return -EBUSY;
	ret = ttm_resv_copy_fences(&bo->base, bo->resv);
	ww_mutex_unlock(&bo->base.lock);
	if (ret)
		return ret;
	/* The eviction walk reads the pointer under the device lock. */
	pthread_mutex_lock(&dev->lock);
	bo->resv = &bo->base;
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static void bo_release(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	const struct ttm_device_funcs *funcs = dev->funcs;

	/* Out of its bulk move, which its owner may now finalise. */
	bo_lru_release(bo);
	/* The memory's notice comes from bo_free(), after the fences. */
	if (funcs->release_notify)
		funcs->release_notify(bo, dev->funcs_data);

	/*
	 * Idle (every usage: even bookkeeping work may still touch the
	 * memory): freed at once, before the caller's put returns, so a
	 * shared reservation needs no copy.
	 */
	if (ttm_resv_test_signaled(bo->resv, TTM_RESV_USAGE_BOOKKEEP)) {
		bo_free(bo);
		return;
	}
	if (bo_worker_ensure(dev)) {
		destroy_sync(bo);
		return;
	}
	/*
	 * Busy on a shared one: off it before the put returns, with a copy
	 * of its fences, so that later work there is not waited for. The
	 * copy is the one allocation here; without memory for it @bo stays
	 * on the shared reservation (allowed: its owner may finalise it only
	 * after @bo's destroy, ttm_bo_init_reserved()) and the worker tries
	 * the copy again (see the top of the file). Never a wait: the caller
	 * may be who signals these fences.
	 */
	if (bo->resv != &bo->base && bo_individualize(bo))
		bo->individualize = true;
	/*
	 * An import, off its exporter's reservation now, lets the exporter
	 * go here rather than from the worker: that reservation still
	 * holds the import's work, which the exporter's own delayed
	 * destroy waits for, and the exporter's device need not wait for
	 * this one's worker before it can be destroyed. One still on it
	 * keeps the exporter, and so the reservation, until bo_free().
	 */
	if (bo_exporter(bo) && bo->resv == &bo->base)
		bo_import_release(bo);

	pthread_mutex_lock(&dev->lock);
	dev->zombies++;
	bo->destroy_pending = 1;
	pthread_mutex_unlock(&dev->lock);

	if (bo->individualize || !destroy_arm(bo))
		destroy_queue(bo); /* all signalled meanwhile, or the copy */
}

/*
 * In the worker: @bo's second try at the copy of a shared reservation's
 * fences (bo_release() could not allocate it), then its callback armed.
 * True if @bo now waits for a fence; false: free it now.
 */
static bool worker_individualize(struct ttm_bo *bo)
{
	bo->individualize = false;
	if (bo_individualize(bo) == 0 && bo_exporter(bo))
		bo_import_release(bo); /* off its exporter's: as the release */
	return destroy_arm(bo);
}

TTM_EXPORT void ttm_bo_put(struct ttm_bo *bo)
{
	if (bo && __atomic_sub_fetch(&bo->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		bo_release(bo);
}

/*
 * Once the device was destroyed from a destroy this worker ran: whether
 * nothing but move sources can still free into @dev, after waiting for
 * those. Buffers still waiting for fences (zombies) come through the
 * queue: the caller waits for them there.
 */
static bool worker_device_idle(struct ttm_device *dev)
{
	bool idle;

	pthread_mutex_lock(&dev->lock);
	idle = dev->zombies == 0;
	/* No new zombie can come: no buffer of @dev is left alive. */
	while (idle && dev->n_ghosts)
		pthread_cond_wait(&dev->idle, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
	return idle;
}

static void worker_fini(struct ttm_device *dev)
{
	pthread_cond_destroy(&dev->work_idle);
	pthread_cond_destroy(&dev->work_cond);
	pthread_mutex_destroy(&dev->work_lock);
}

/*
 * The worker: frees the queued buffers until told to stop, then drains.
 * Told to free the device (bo_worker_free_device()), it also waits for
 * the delayed destroys still pending, then frees the device and ends,
 * detached, as nobody joins it.
 */
static void *destroy_worker(void *arg)
{
	struct ttm_device *dev = arg;
	struct ttm_bo *bo;
	bool free_dev;

	pthread_mutex_lock(&dev->work_lock);
	for (;;) {
		while (!dev->work_head && !dev->work_stop &&
		       !dev->work_free_dev)
			pthread_cond_wait(&dev->work_cond, &dev->work_lock);
		bo = dev->work_head;
		if (!bo && !dev->work_free_dev)
			break;
		if (!bo) {
			/* The device lock is never taken inside this one. */
			pthread_mutex_unlock(&dev->work_lock);
			if (worker_device_idle(dev)) {
				pthread_mutex_lock(&dev->work_lock);
				break;
			}
			pthread_mutex_lock(&dev->work_lock);
			/* A zombie is due to come: its fences must signal. */
			while (!dev->work_head)
				pthread_cond_wait(&dev->work_cond,
						  &dev->work_lock);
			continue;
		}
		dev->work_head = bo->destroy_next;
		if (!dev->work_head)
			dev->work_tail = &dev->work_head;
		dev->work_busy = true;
		/* The destroy may put other buffers: nothing held here. */
		pthread_mutex_unlock(&dev->work_lock);
		if (!bo->individualize || !worker_individualize(bo))
			bo_free(bo);
		pthread_mutex_lock(&dev->work_lock);
		dev->work_busy = false;
		if (!dev->work_head)
			pthread_cond_broadcast(&dev->work_idle);
	}
	free_dev = dev->work_free_dev;
	pthread_mutex_unlock(&dev->work_lock);
	if (free_dev) {
		pthread_detach(pthread_self());
		worker_fini(dev);
		bo_device_free(dev);
	}
	return NULL;
}

void bo_worker_init(struct ttm_device *dev)
{
	pthread_mutex_init(&dev->work_lock, NULL);
	pthread_cond_init(&dev->work_cond, NULL);
	pthread_cond_init(&dev->work_idle, NULL);
	dev->work_head = NULL;
	dev->work_tail = &dev->work_head;
}

/*
 * Started on the first delayed destroy, not with the device: a second
 * thread makes every lock and atomic operation of the process dearer
 * (glibc drops the bus lock prefix while a process has one thread), which
 * cost a third of the reserve + validate + unreserve fast path of
 * `ttmsim bench bo` (17 ns to 28 ns a buffer). Called by the put, never
 * in a fence callback.
 */
int bo_worker_ensure(struct ttm_device *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->work_lock);
	if (!dev->work_started) {
		ret = -pthread_create(&dev->worker, NULL, destroy_worker,
				      dev);
		dev->work_started = ret == 0;
	}
	pthread_mutex_unlock(&dev->work_lock);
	return ret;
}

void bo_worker_stop(struct ttm_device *dev)
{
	pthread_mutex_lock(&dev->work_lock);
	dev->work_stop = true;
	pthread_cond_signal(&dev->work_cond);
	pthread_mutex_unlock(&dev->work_lock);
	if (dev->work_started)
		pthread_join(dev->worker, NULL);
	worker_fini(dev);
}

bool bo_worker_is_self(struct ttm_device *dev)
{
	bool self;

	pthread_mutex_lock(&dev->work_lock);
	self = dev->work_started && pthread_equal(pthread_self(), dev->worker);
	pthread_mutex_unlock(&dev->work_lock);
	return self;
}

void bo_worker_free_device(struct ttm_device *dev)
{
	pthread_mutex_lock(&dev->work_lock);
	dev->work_free_dev = true;
	pthread_mutex_unlock(&dev->work_lock);
}

bool bo_worker_flush(struct ttm_device *dev)
{
	bool waited = false;

	pthread_mutex_lock(&dev->work_lock);
	/* A destroy that creates a buffer must not wait for itself. */
	if (dev->work_started && pthread_equal(pthread_self(), dev->worker)) {
		pthread_mutex_unlock(&dev->work_lock);
		return false;
	}
	while (dev->work_head || dev->work_busy) {
		waited = true;
		pthread_cond_wait(&dev->work_idle, &dev->work_lock);
	}
	pthread_mutex_unlock(&dev->work_lock);
	return waited;
}

TTM_EXPORT void ttm_device_flush_destroys(struct ttm_device *dev)
{
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, dev,
			    "ttm_device_flush_destroys", NULL, 0))
		return;
	bo_worker_flush(dev);
}
