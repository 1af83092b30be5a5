// SPDX-License-Identifier: MIT
/*
 * Reference counting and destruction, delayed while GPU work still uses
 * the buffer (TTM's delayed destroy).
 *
 * TTM queues a worker that waits for the reservation to become idle.
 * ttmsim has no worker threads of its own: it hangs a callback on each
 * unsignalled fence instead, and the last callback to run frees the
 * buffer, in whichever thread signalled that fence. Until then the buffer
 * keeps its memory, still accounted and still on its list, so nothing can
 * reuse memory the GPU may still be writing.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "util/compiler.h"

TTM_EXPORT struct ttm_bo *ttm_bo_get(struct ttm_bo *bo)
{
	if (bo)
		__atomic_fetch_add(&bo->refcount, 1, __ATOMIC_RELAXED);
	return bo;
}

/* One wait fewer; the last frees @bo. */
static void destroy_drop(struct ttm_bo *bo)
{
	if (__atomic_sub_fetch(&bo->destroy_pending, 1, __ATOMIC_ACQ_REL) == 0)
		bo_free(bo);
}

/* Runs when the fence signals, or is freed unsignalled: no wait is left. */
static void destroy_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct bo_destroy_cb *dcb = container_of(cb, struct bo_destroy_cb, cb);

	(void)fence;
	destroy_drop(dcb->bo);
}

/* Without memory for callbacks, fall back to waiting here. */
static void destroy_sync(struct ttm_bo *bo)
{
	ttm_resv_wait(&bo->resv, TTM_RESV_USAGE_BOOKKEEP, false, -1);
	bo_free(bo);
}

static void bo_release(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	const struct ttm_device_funcs *funcs = dev->funcs;
	struct bo_destroy_cb *cbs;
	struct ttm_fence **fences;
	unsigned int n, i;

	/*
	 * The hooks run here, in the thread of the last put, and not in
	 * bo_free(), which may run in a fence callback.
	 */
	if (funcs->release_notify)
		funcs->release_notify(bo, dev->funcs_data);
	if (funcs->delete_mem_notify)
		funcs->delete_mem_notify(bo, (enum ttm_domain)bo->domain,
					 dev->funcs_data);

	/* Every usage: even bookkeeping work may still touch the memory. */
	if (ttm_resv_get_fences(&bo->resv, TTM_RESV_USAGE_BOOKKEEP, &fences,
				&n)) {
		destroy_sync(bo);
		return;
	}
	if (n == 0) {
		free(fences);
		bo_free(bo);
		return;
	}
	cbs = calloc(n, sizeof(*cbs));
	if (!cbs) {
		for (i = 0; i < n; i++)
			ttm_fence_put(fences[i]);
		free(fences);
		destroy_sync(bo);
		return;
	}

	pthread_mutex_lock(&dev->lock);
	dev->zombies++;
	bo->destroy_cbs = cbs;
	pthread_mutex_unlock(&dev->lock);

	/* One count per fence, plus ours until every callback is set up. */
	__atomic_store_n(&bo->destroy_pending, n + 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		cbs[i].bo = bo;
		if (ttm_fence_add_callback(fences[i], &cbs[i].cb,
					   destroy_cb_func))
			destroy_drop(bo); /* signalled already */
		/*
		 * The callback does not need the fence kept alive: one freed
		 * unsignalled runs it too.
		 */
		ttm_fence_put(fences[i]);
	}
	free(fences);
	destroy_drop(bo);
}

TTM_EXPORT void ttm_bo_put(struct ttm_bo *bo)
{
	if (bo && __atomic_sub_fetch(&bo->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		bo_release(bo);
}
