// SPDX-License-Identifier: MIT
/*
 * The shrinker and suspend paths on top of the LRU walk (ttmsim/lru.h):
 * swap-out of one buffer to SYSTEM, a device's shrinker, and evict-all.
 */
#include <errno.h>
#include <limits.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "ttmsim/lru.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/thread.h"

/* How long evict-all sleeps at most before looking again. */
#define EVICT_ALL_POLL_NS 1000000

TTM_EXPORT int ttm_bo_swapout(struct ttm_bo *bo, struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = bo->dev;
	struct bo_want want = bo_want_domain(TTM_DOMAIN_SYSTEM);
	struct ttm_resource *res;
	int ret = resv_assert_held(bo->resv, "ttm_bo_swapout");

	if (ret)
		return ret;
	if (bo_exporter(bo))
		return -EINVAL;
	if (bo->pin_count)
		return -EBUSY;
	if (bo->domain == TTM_DOMAIN_SYSTEM)
		return 0;
	pthread_mutex_lock(&dev->lock);
	/* SYSTEM has no limit: only the struct's allocation can fail. */
	res = bo_res_take_locked(dev, bo, &want, bo->size);
	pthread_mutex_unlock(&dev->lock);
	if (!res)
		return -ENOMEM;
	if (dev->funcs->swap_notify)
		dev->funcs->swap_notify(bo, dev->funcs_data);
	ret = bo_move(bo, res, ctx);
	if (ret == 0) {
		pthread_mutex_lock(&dev->lock);
		dev->evictions++;
		pthread_mutex_unlock(&dev->lock);
	}
	return ret;
}

static long swapout_process(struct ttm_lru_walk *walk, struct ttm_bo *bo)
{
	int ret;

	/* An import's pages are its exporter's (only in SYSTEM anyway). */
	if (bo_exporter(bo))
		return 0;
	ret = ttm_bo_swapout(bo, walk->ctx);
	/* Busy and told not to wait: the next one may be idle. */
	if (ret == -EBUSY)
		return 0;
	return ret ? ret : (long)bo->size;
}

static const struct ttm_lru_walk_ops swapout_ops = {
	.process_bo = swapout_process,
};

TTM_EXPORT long ttm_device_swapout(struct ttm_device *dev,
				   struct ttm_operation_ctx *ctx, long target)
{
	static const enum ttm_domain order[] = {
		TTM_DOMAIN_GTT, TTM_DOMAIN_VRAM,
	};
	struct ttm_operation_ctx none = { 0 };
	struct ttm_lru_walk walk = {
		.ops = &swapout_ops,
		.ctx = ctx ? ctx : &none,
		.trylock_only = true,
	};
	long done = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(order) && done < target; i++) {
		long ret = ttm_lru_walk_for_evict(&walk, dev, order[i],
						  target - done);

		if (ret < 0)
			return ret;
		done += ret;
	}
	return done;
}

/* The domain evict-all empties: the walk's own. */
struct evict_all_walk {
	struct ttm_lru_walk walk;
	int domain;
};

static long evict_all_process(struct ttm_lru_walk *walk, struct ttm_bo *bo)
{
	struct evict_all_walk *ew = container_of(walk, struct evict_all_walk,
						 walk);
	int ret = bo_evict_victim(bo, ew->domain, walk->ctx);

	return ret ? ret : (long)bo->size;
}

static const struct ttm_lru_walk_ops evict_all_ops = {
	.process_bo = evict_all_process,
};

/* Whether @domain's LRU holds any buffer; dev->lock held. */
static bool lru_has_bo_locked(struct ttm_device *dev, int domain)
{
	struct list_node *n;

	list_for_each(n, bo_lru_of(dev, domain))
		if (!bo_lru_is_hitch(n))
			return true;
	return false;
}

/*
 * What is left on the LRU after a full walk could not be referenced: it
 * waits for its delayed destroy, which frees it (signalling `changed`)
 * once its fences signal. 1: wait and walk again; 0: empty; or -EBUSY
 * (no_wait_gpu), -EINTR.
 */
static int evict_all_wait(struct ttm_device *dev, int domain,
			  const struct ttm_operation_ctx *ctx)
{
	struct timespec ts;
	int ret = 0;

	/* The moves' copies first: their sources count in the domain. */
	while ((ret = bo_ghost_wait(dev, domain, ctx)) == 0)
		;
	if (ret != -ENOSPC)
		return ret;
	pthread_mutex_lock(&dev->lock);
	if (!lru_has_bo_locked(dev, domain)) {
		pthread_mutex_unlock(&dev->lock);
		/*
		 * Pipelined sources gave their room back at once: their
		 * copies may still read the domain, which a suspend is
		 * about to lose.
		 */
		return bo_ghost_drain(dev, domain, ctx);
	}
	pthread_mutex_unlock(&dev->lock);
	if (ctx->no_wait_gpu)
		return -EBUSY;
	if (ctx->interruptible && ww_thread_take_interrupt(ww_thread_self()))
		return -EINTR;
	/* Freed ones may only wait for the worker. */
	if (bo_worker_flush(dev))
		return 1;
	ts = mono_deadline_in(EVICT_ALL_POLL_NS);
	pthread_mutex_lock(&dev->lock);
	pthread_cond_timedwait(&dev->changed, &dev->lock, &ts);
	pthread_mutex_unlock(&dev->lock);
	return 1;
}

TTM_EXPORT int ttm_device_evict_all(struct ttm_device *dev,
				    enum ttm_domain domain,
				    struct ttm_operation_ctx *ctx)
{
	struct ttm_operation_ctx none = { 0 };
	struct ww_acquire_ctx ticket;
	struct evict_all_walk ew = {
		.walk = {
			.ops = &evict_all_ops,
			.ctx = ctx,
			.ticket = &ticket,
		},
		.domain = (int)domain,
	};
	uint64_t pinned;
	long ret;

	if (!ctx)
		ew.walk.ctx = ctx = &none;
	if ((domain != TTM_DOMAIN_VRAM && domain != TTM_DOMAIN_GTT) ||
	    ctx->exec)
		return -EINVAL;
	/*
	 * A ticket of our own that holds one reservation at a time: it
	 * sleeps on held buffers, never backs off (nothing else held).
	 */
	ww_acquire_init(&ticket, dev->ww_class);
	do {
		ret = ttm_lru_walk_for_evict(&ew.walk, dev, domain, LONG_MAX);
		if (ret >= 0)
			ret = evict_all_wait(dev, domain, ctx);
	} while (ret > 0);
	ww_acquire_fini(&ticket);
	if (ret)
		return (int)ret;
	pthread_mutex_lock(&dev->lock);
	pinned = dev->domain[domain].pinned;
	pthread_mutex_unlock(&dev->lock);
	return pinned ? -EBUSY : 0;
}
