// SPDX-License-Identifier: MIT
/*
 * Moving a buffer to another domain: a copy job on the device's GPU, or a
 * CPU copy without one. The source stays allocated and accounted as a
 * ghost until the copy's fence signals.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bo/bo.h"
#include "util/compiler.h"

/* The copy's simulated duration: 1 us, plus 1 us per MiB. */
static uint64_t move_duration_us(uint64_t size)
{
	return 1 + (size >> 20);
}

/* Give back @ghost's bytes and free it: the copy reading it is done. */
static void ghost_release(struct bo_ghost *ghost)
{
	struct ttm_device *dev = ghost->dev;

	pthread_mutex_lock(&dev->lock);
	list_del(&ghost->node);
	dev->domain[ghost->domain].used -= ghost->size;
	dev->domain[ghost->domain].ghosts--;
	if (--dev->n_ghosts == 0)
		pthread_cond_broadcast(&dev->idle);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	/* @dev may be gone from here on (see bo_free()). */
	ttm_fence_put(ghost->fence);
	free(ghost->mem);
	free(ghost);
}

int bo_ghost_wait(struct ttm_device *dev, int domain,
		  const struct ttm_operation_ctx *ctx)
{
	struct ttm_fence *fence = NULL;
	struct list_node *n;
	int ret;

	pthread_mutex_lock(&dev->lock);
	/* The count keeps the common case, nothing in flight, O(1). */
	for (n = dev->ghosts.next;
	     dev->domain[domain].ghosts && n != &dev->ghosts; n = n->next) {
		struct bo_ghost *g = list_entry(n, struct bo_ghost, node);

		if (g->domain == domain) {
			fence = ttm_fence_get(g->fence);
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	if (!fence)
		return -ENOSPC;
	if (ctx->no_wait_gpu && !ttm_fence_is_signaled(fence))
		ret = -EBUSY;
	else
		ret = ttm_fence_wait(fence, ctx->interruptible, -1);
	ttm_fence_put(fence);
	/*
	 * A waiter may wake before the callback that frees the source has
	 * run: the caller checks the room again and may come back here.
	 */
	if (ret == 0)
		sched_yield();
	return ret;
}

static void ghost_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	(void)fence;
	ghost_release(container_of(cb, struct bo_ghost, cb));
}

/*
 * Switch @bo to @mem in @domain, whose bytes are taken. @ghost (NULL: free
 * the old memory now) keeps the old memory accounted until its copy ends.
 */
static void move_switch(struct ttm_bo *bo, int domain, void *mem,
			struct bo_ghost *ghost)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *from = &dev->domain[bo->domain];
	void *old = bo->mem;

	pthread_mutex_lock(&dev->lock);
	if (ghost) {
		ghost->mem = old;
		ghost->size = bo->size;
		ghost->domain = bo->domain;
		from->ghosts++;
		list_add_tail(&ghost->node, &dev->ghosts);
		dev->n_ghosts++;
	} else {
		from->used -= bo->size;
	}
	from->buffers--;
	dev->domain[domain].buffers++;
	dev->domain[domain].incoming -= bo->size;
	bo->mem = mem;
	__atomic_store_n(&bo->domain, domain, __ATOMIC_RELAXED);
	list_move_tail(&bo->node, bo_lru_of(dev, domain));
	dev->moves++;
	dev->bytes_moved += bo->size;
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	if (!ghost)
		free(old);
}

/* Copy on the GPU after every fence of @bo; the copy's fence goes in. */
static int move_gpu(struct ttm_bo *bo, int domain, void *mem)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_gpu_range ranges[2] = {
		{ bo->mem, bo->size }, { mem, bo->size },
	};
	struct ttm_gpu_job job = {
		.engine = dev->copy_engine,
		.duration_us = move_duration_us(bo->size),
		.op = TTM_GPU_OP_COPY,
		.ranges = ranges,
		.n_ranges = 2,
	};
	struct ttm_gpu_dep *deps = NULL;
	struct ttm_fence **fences = NULL, *fence;
	struct bo_ghost *ghost;
	unsigned int i, n = 0;
	int ret;

	/* Everything that can fail comes before the submission. */
	ghost = calloc(1, sizeof(*ghost));
	if (!ghost)
		return -ENOMEM;
	ghost->dev = dev;
	/*
	 * One slot on top of those the caller reserved (ttm_exec_prepare_
	 * bo() before validating): the move's fence must not use theirs.
	 */
	ret = ttm_resv_reserve_fences(bo->resv, bo->resv->reserved + 1);
	if (ret == 0)
		ret = ttm_resv_get_fences(bo->resv, TTM_RESV_USAGE_BOOKKEEP,
					  &fences, &n);
	if (ret == 0 && n) {
		deps = calloc(n, sizeof(*deps));
		if (!deps)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		/*
		 * Ordering only: the memory must not change under a job
		 * still using it, but a failed job's buffer still moves.
		 */
		for (i = 0; i < n; i++)
			deps[i].fence = fences[i];
		job.deps = deps;
		job.n_deps = n;
		ret = ttm_gpu_submit(dev->gpu, &job, &fence);
	}
	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	free(deps);
	if (ret) {
		free(ghost);
		return ret;
	}

	ttm_resv_add_fence(bo->resv, fence, TTM_RESV_USAGE_KERNEL);
	ghost->fence = fence;
	move_switch(bo, domain, mem, ghost);
	/* Already signalled: the callback will not run, release now. */
	if (ttm_fence_add_callback(fence, &ghost->cb, ghost_cb_func))
		ghost_release(ghost);
	return 0;
}

/* Copy on the CPU once @bo is idle; the old memory goes at once. */
static int move_cpu(struct ttm_bo *bo, int domain, void *mem,
		    const struct ttm_operation_ctx *ctx)
{
	int ret;

	if (ctx->no_wait_gpu &&
	    !ttm_resv_test_signaled(bo->resv, TTM_RESV_USAGE_BOOKKEEP))
		return -EBUSY;
	ret = ttm_resv_wait(bo->resv, TTM_RESV_USAGE_BOOKKEEP,
			    ctx->interruptible, -1);
	if (ret)
		return ret;
	memcpy(mem, bo->mem, bo->size);
	move_switch(bo, domain, mem, NULL);
	return 0;
}

int bo_move(struct ttm_bo *bo, int domain, const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = bo->dev;
	void *mem;
	int ret = -ENOMEM;

	/* No calloc(): the copy overwrites every byte. */
	mem = malloc(bo->size);
	if (mem)
		ret = dev->gpu ? move_gpu(bo, domain, mem) :
				 move_cpu(bo, domain, mem, ctx);
	if (ret) {
		free(mem);
		pthread_mutex_lock(&dev->lock);
		dev->domain[domain].used -= bo->size;
		dev->domain[domain].incoming -= bo->size;
		bo_room_changed_locked(dev);
		pthread_mutex_unlock(&dev->lock);
	}
	return ret;
}
