// SPDX-License-Identifier: MIT
/*
 * Fences: contexts, creation, reference counting and state queries.
 * Signalling and callbacks are in fence_cb.c, waiting in fence_wait.c,
 * the memory in fence_pool.c.
 */
#include <errno.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"

/* Context 0 is never handed out, as in the kernel: it can mean "none". */
static uint64_t context_counter = 1;

TTM_EXPORT uint64_t ttm_fence_context_alloc(unsigned int n)
{
	return __atomic_fetch_add(&context_counter, n, __ATOMIC_RELAXED);
}

TTM_EXPORT int ttm_fence_create(uint64_t context, uint64_t seqno,
				struct ttm_fence **ret_fence)
{
	struct ttm_fence *f = fence_pool_alloc();

	if (!f)
		return -ENOMEM;
	f->context = context;
	f->seqno = seqno;
	f->cbs = (struct fence_cb_list){ NULL, &f->cbs.head };
	f->waiters = (struct fence_cb_list){ NULL, &f->waiters.head };
	f->pipe_rd = -1;
	f->pipe_wr = -1;
	__atomic_store_n(&f->running, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->status, 0, __ATOMIC_RELAXED);
	/*
	 * Last, and with release: a lockless reader whose ttm_fence_tryget()
	 * sees this reference also sees the fields above.
	 */
	__atomic_store_n(&f->refcount, 1, __ATOMIC_RELEASE);
	*ret_fence = f;
	return 0;
}

TTM_EXPORT struct ttm_fence *ttm_fence_get(struct ttm_fence *fence)
{
	if (fence)
		__atomic_fetch_add(&fence->refcount, 1, __ATOMIC_RELAXED);
	return fence;
}

/*
 * The last reference is gone. A fence that never signalled still runs its
 * callbacks, with -ECANCELED, so nobody is left waiting on a node in freed
 * memory (the kernel does the same with -EDEADLK); its exported pipe is
 * closed without a byte, which importers read as -ECANCELED too.
 */
static void fence_release(struct ttm_fence *f)
{
	if (!__atomic_load_n(&f->status, __ATOMIC_RELAXED) &&
	    (f->cbs.head || f->waiters.head)) {
		pthread_mutex_lock(&f->lock);
		fence_signal_unlock(f, -ECANCELED, false);
	}
	if (f->pipe_rd >= 0)
		fence_fd_release(f);
	fence_pool_free(f);
}

TTM_EXPORT void ttm_fence_put(struct ttm_fence *fence)
{
	/* Acquire too: the release must see every holder's writes. */
	if (fence && __atomic_sub_fetch(&fence->refcount, 1,
					__ATOMIC_ACQ_REL) == 0)
		fence_release(fence);
}

TTM_EXPORT uint64_t ttm_fence_context(const struct ttm_fence *fence)
{
	return fence->context;
}

TTM_EXPORT uint64_t ttm_fence_seqno(const struct ttm_fence *fence)
{
	return fence->seqno;
}

TTM_EXPORT bool ttm_fence_is_signaled(const struct ttm_fence *fence)
{
	return __atomic_load_n(&fence->status, __ATOMIC_ACQUIRE) != 0;
}

TTM_EXPORT int ttm_fence_get_status(const struct ttm_fence *fence)
{
	return __atomic_load_n(&fence->status, __ATOMIC_ACQUIRE);
}
