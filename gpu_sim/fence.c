// SPDX-License-Identifier: MIT
/*
 * Fences: contexts, creation, driver fences and their ops, reference
 * counting and state queries. Signalling and callbacks are in fence_cb.c,
 * waiting in fence_wait.c, the library's memory in fence_pool.c, the
 * grace period of drivers' fences in fence_rcu.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"

/* Context 0 is never handed out, as in the kernel: it can mean "none". */
static uint64_t context_counter = 1;

TTM_EXPORT uint64_t ttm_fence_context_alloc(unsigned int n)
{
	return __atomic_fetch_add(&context_counter, n, __ATOMIC_RELAXED);
}

static const char *lib_driver_name(struct ttm_fence *f)
{
	(void)f;
	return "ttmsim";
}

static const char *lib_timeline_name(struct ttm_fence *f)
{
	(void)f;
	return "ttmsim";
}

/*
 * The library's fences: no op to call, and released to the pool at once
 * (fence_release() knows them by these ops).
 */
const struct ttm_fence_ops fence_lib_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = lib_driver_name,
	.get_timeline_name = lib_timeline_name,
};

/* Everything but the lock, then the first reference. */
static void fence_setup(struct ttm_fence *f, const struct ttm_fence_ops *ops,
			uint64_t context, uint64_t seqno)
{
	f->context = context;
	f->seqno = seqno;
	f->ops = ops;
	f->error = 0;
	f->timestamp = 0;
	f->cbs = (struct ttm_fence_cb_list){ NULL, &f->cbs.head };
	f->waiters = (struct ttm_fence_cb_list){ NULL, &f->waiters.head };
	f->pipe_rd = -1;
	f->pipe_wr = -1;
	f->rcu_next = NULL;
	__atomic_store_n(&f->flags, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->running, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->status, 0, __ATOMIC_RELAXED);
	/*
	 * Last, and with release: a lockless reader whose ttm_fence_tryget()
	 * sees this reference also sees the fields above.
	 */
	__atomic_store_n(&f->refcount, 1, __ATOMIC_RELEASE);
}

TTM_EXPORT int ttm_fence_create(uint64_t context, uint64_t seqno,
				struct ttm_fence **ret_fence)
{
	struct ttm_fence *f = fence_pool_alloc();

	if (!f)
		return -ENOMEM;
	fence_setup(f, &fence_lib_ops, context, seqno);
	*ret_fence = f;
	return 0;
}

void fence_lib_setup(struct ttm_fence *f, uint64_t context, uint64_t seqno)
{
	fence_setup(f, &fence_lib_ops, context, seqno);
}

TTM_EXPORT void ttm_fence_init(struct ttm_fence *fence,
			       const struct ttm_fence_ops *ops,
			       uint64_t context, uint64_t seqno)
{
	/* Destroyed by fence_destroy(), before the release op. */
	pthread_mutex_init(&fence->lock, NULL);
	fence_setup(fence, ops, context, seqno);
}

TTM_EXPORT struct ttm_fence *ttm_fence_get(struct ttm_fence *fence)
{
	if (fence)
		__atomic_fetch_add(&fence->refcount, 1, __ATOMIC_RELAXED);
	return fence;
}

void fence_destroy(struct ttm_fence *f)
{
	pthread_mutex_destroy(&f->lock);
	if (f->ops->release)
		f->ops->release(f);
	else
		free(f);
}

/*
 * The last reference is gone. A fence that never signalled still runs its
 * callbacks, with -ECANCELED, so nobody is left waiting on a node in freed
 * memory (the kernel does the same with -EDEADLK); its exported pipe is
 * closed without a byte, which importers read as -ECANCELED too. Then the
 * memory: a library fence back to the pool at once (type-stable, see
 * gpu_sim/fence.h), a driver's after a grace period.
 */
static void fence_release(struct ttm_fence *f)
{
	if (!__atomic_load_n(&f->status, __ATOMIC_RELAXED) &&
	    (f->cbs.head || f->waiters.head)) {
		pthread_mutex_lock(&f->lock);
		fence_signal_unlock(f, -ECANCELED, false, 0);
	}
	if (f->pipe_rd >= 0)
		fence_fd_release(f);
	if (f->ops == &fence_lib_ops)
		fence_pool_free(f);
	else
		fence_rcu_retire(f);
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

/*
 * Polls the signaled op while pending and signals what it reports, as the
 * kernel does: a driver without interrupts is seen to finish by whoever
 * looks. The const goes: the signal changes the fence.
 */
TTM_EXPORT bool ttm_fence_is_signaled(const struct ttm_fence *fence)
{
	struct ttm_fence *f = (struct ttm_fence *)fence;

	if (__atomic_load_n(&f->status, __ATOMIC_ACQUIRE))
		return true;
	if (!f->ops->signaled || !f->ops->signaled(f))
		return false;
	/* -EINVAL if the driver signalled it meanwhile: as good. */
	ttm_fence_signal(f, 0);
	return true;
}

TTM_EXPORT int ttm_fence_get_status(const struct ttm_fence *fence)
{
	int status = __atomic_load_n(&fence->status, __ATOMIC_ACQUIRE);

	if (status || !ttm_fence_is_signaled(fence))
		return status;
	return __atomic_load_n(&fence->status, __ATOMIC_ACQUIRE);
}

void fence_enable_signaling(struct ttm_fence *f)
{
	/* Once: the flag, not the lock, so the op runs without it. */
	if (__atomic_load_n(&f->flags, __ATOMIC_RELAXED) & FENCE_F_ENABLED)
		return;
	if (__atomic_fetch_or(&f->flags, FENCE_F_ENABLED, __ATOMIC_ACQ_REL) &
	    FENCE_F_ENABLED)
		return;
	if (__atomic_load_n(&f->status, __ATOMIC_ACQUIRE) ||
	    !f->ops->enable_signaling)
		return;
	if (!f->ops->enable_signaling(f))
		ttm_fence_signal(f, 0);
}

TTM_EXPORT void ttm_fence_enable_sw_signaling(struct ttm_fence *fence)
{
	fence_enable_signaling(fence);
}

TTM_EXPORT int ttm_fence_set_error(struct ttm_fence *fence, int error)
{
	int ret = 0;

	if (error >= 0 || error < -FENCE_MAX_ERRNO)
		return -EINVAL;
	pthread_mutex_lock(&fence->lock);
	if (__atomic_load_n(&fence->status, __ATOMIC_RELAXED))
		ret = -EINVAL;
	else
		fence->error = error;
	pthread_mutex_unlock(&fence->lock);
	return ret;
}

TTM_EXPORT int ttm_fence_timestamp(const struct ttm_fence *fence,
				   uint64_t *ret_ns)
{
	/* The acquire orders the read after the signal's store. */
	if (!__atomic_load_n(&fence->status, __ATOMIC_ACQUIRE))
		return -EBUSY;
	*ret_ns = fence->timestamp;
	return 0;
}

TTM_EXPORT bool ttm_fence_is_later(const struct ttm_fence *a,
				   const struct ttm_fence *b)
{
	if (a->context != b->context)
		return false;
	if (a->ops->use_64bit_seqno)
		return a->seqno > b->seqno;
	/* 32-bit seqnos wrap: later means less than 2^31 ahead. */
	return (int32_t)(uint32_t)(a->seqno - b->seqno) > 0;
}

static const char *stub_name(struct ttm_fence *f)
{
	(void)f;
	return "stub";
}

static const struct ttm_fence_ops stub_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = stub_name,
	.get_timeline_name = stub_name,
};

/* Its first reference is never put: it is never released. */
static struct ttm_fence stub_fence;
static pthread_once_t stub_once = PTHREAD_ONCE_INIT;

static void stub_init(void)
{
	ttm_fence_init(&stub_fence, &stub_ops, 0, 0);
	ttm_fence_signal(&stub_fence, 0);
}

TTM_EXPORT struct ttm_fence *ttm_fence_get_stub(void)
{
	pthread_once(&stub_once, stub_init);
	return ttm_fence_get(&stub_fence);
}

TTM_EXPORT const char *ttm_fence_driver_name(struct ttm_fence *fence)
{
	return fence->ops->get_driver_name ?
	       fence->ops->get_driver_name(fence) : "unknown";
}

TTM_EXPORT const char *ttm_fence_timeline_name(struct ttm_fence *fence)
{
	return fence->ops->get_timeline_name ?
	       fence->ops->get_timeline_name(fence) : "unknown";
}

TTM_EXPORT void ttm_fence_set_deadline(struct ttm_fence *fence,
				       uint64_t deadline_ns)
{
	if (fence->ops->set_deadline && !ttm_fence_is_signaled(fence))
		fence->ops->set_deadline(fence, deadline_ns);
}
