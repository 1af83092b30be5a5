// SPDX-License-Identifier: MIT
/*
 * Waiting for a fence: the waiter queues a callback that wakes it and
 * sleeps on its per-thread parking word (ww/thread.h), the same one every
 * ttmsim wait uses, so ttm_interrupt_thread() reaches fence waits too.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/debug.h"
#include "ww/thread.h"

struct fence_waiter {
	struct ttm_fence_cb cb;
	struct ww_thread *thread;
	uint32_t done;          /* atomic: the callback has run */
};

/*
 * Runs in the signalling thread. After the store to @done the waiter may
 * return and its stack frame, @w with it, be gone: read the thread first.
 * Waking a thread that has moved on is harmless: the structs are
 * type-stable and a spurious wake-up only makes a sleeper re-check.
 */
static void fence_waiter_wake(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct fence_waiter *w = container_of(cb, struct fence_waiter, cb);
	struct ww_thread *t = w->thread;

	(void)f;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	ww_thread_wake(t);
}

/*
 * Take the waiter off @f. False if it was too late: the fence signalled,
 * and then we wait for the callback (it is on its way) before @w goes.
 */
static bool fence_waiter_cancel(struct ttm_fence *f, struct fence_waiter *w)
{
	bool removed;

	pthread_mutex_lock(&f->lock);
	removed = fence_cb_list_remove(&f->waiters, &w->cb);
	pthread_mutex_unlock(&f->lock);
	while (!removed) {
		uint32_t seq = ww_thread_seq(w->thread);

		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			break;
		ww_thread_park(w->thread, seq, NULL);
	}
	return removed;
}

/*
 * Queue @w on @f, enabling signalling first (without the lock: the op may
 * signal @f). False if @f has signalled: @w is not queued.
 */
static bool fence_waiter_queue(struct ttm_fence *f, struct fence_waiter *w)
{
	bool queued = false;

	fence_enable_signaling(f);
	pthread_mutex_lock(&f->lock);
	if (!__atomic_load_n(&f->status, __ATOMIC_RELAXED)) {
		fence_cb_list_add(&f->waiters, &w->cb, fence_waiter_wake);
		queued = true;
	}
	pthread_mutex_unlock(&f->lock);
	return queued;
}

/*
 * Sleep until one of the @n queued waiters @w is done (0), an interrupt
 * comes (-EINTR, with @interruptible) or @deadline (NULL: none) passes
 * (-ETIME).
 */
static int fence_waiters_sleep(struct ww_thread *self,
			       struct fence_waiter *w, unsigned int n,
			       bool interruptible,
			       const struct timespec *deadline)
{
	unsigned int i;

	for (;;) {
		/* Before the checks: a wake-up after this is not lost. */
		uint32_t seq = ww_thread_seq(self);

		for (i = 0; i < n; i++)
			if (__atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE))
				return 0;
		if (interruptible && ww_thread_take_interrupt(self))
			return -EINTR;
		if (!ww_thread_park(self, seq, deadline))
			return -ETIME;
	}
}

TTM_EXPORT int ttm_fence_wait(struct ttm_fence *fence, bool interruptible,
			      int64_t timeout_ns)
{
	struct fence_waiter w = { .thread = NULL };
	struct timespec deadline = { 0 };
	struct ww_thread *self;
	int ret = 0;

	if (timeout_ns && ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, fence,
					  "ttm_fence_wait", NULL, 0))
		return -EINVAL;
	if (ttm_fence_is_signaled(fence))
		return 0;
	/* Just a test: not a wait, so it leaves a pending interrupt alone. */
	if (timeout_ns == 0)
		return -ETIME;
	if (timeout_ns > 0)
		deadline = mono_deadline_in((uint64_t)timeout_ns);

	self = ww_thread_self();
	w.thread = self;
	if (!fence_waiter_queue(fence, &w)) {
		/*
		 * Signalled since the peek above, maybe by another thread
		 * still running the callbacks: the wait promises them done.
		 */
		fence_callbacks_wait(fence);
		return 0;
	}
	ret = fence_waiters_sleep(self, &w, 1, interruptible,
				  timeout_ns > 0 ? &deadline : NULL);
	if (!ret)
		return 0;
	if (fence_waiter_cancel(fence, &w))
		return ret;
	/*
	 * The fence signalled as we gave up: report that, and leave an
	 * interrupt we took pending for the next wait, as if the wait had
	 * ended just before it came.
	 */
	if (ret == -EINTR)
		__atomic_store_n(&self->interrupt, 1, __ATOMIC_RELEASE);
	return 0;
}

/* The first of @fences that has signalled, or -1. */
static int first_signalled(struct ttm_fence *const *fences,
			   unsigned int count)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		if (ttm_fence_is_signaled(fences[i]))
			return (int)i;
	return -1;
}

/*
 * One waiter node per fence, all waking this thread; the nodes queued are
 * the first @queued. Whichever fence signals, its node says done; the
 * answer is then read from the fences themselves, in array order, as the
 * kernel's dma_fence_wait_any_timeout() does.
 */
TTM_EXPORT int ttm_fence_wait_any(struct ttm_fence *const *fences,
				  unsigned int count, bool interruptible,
				  int64_t timeout_ns, unsigned int *ret_index)
{
	struct timespec deadline = { 0 };
	struct fence_waiter *w;
	struct ww_thread *self;
	unsigned int i, queued;
	int first, ret = 0;

	if (!count)
		return -EINVAL;
	if (timeout_ns && ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, fences[0],
					  "ttm_fence_wait_any", NULL, 0))
		return -EINVAL;
	first = first_signalled(fences, count);
	if (first >= 0 || timeout_ns == 0)
		goto out;
	if (timeout_ns > 0)
		deadline = mono_deadline_in((uint64_t)timeout_ns);
	w = calloc(count, sizeof(*w));
	if (!w)
		return -ENOMEM;
	self = ww_thread_self();
	for (queued = 0; queued < count; queued++) {
		w[queued].thread = self;
		if (!fence_waiter_queue(fences[queued], &w[queued]))
			break;  /* signalled: no need to queue the rest */
	}
	if (queued == count)
		ret = fence_waiters_sleep(self, w, count, interruptible,
					  timeout_ns > 0 ? &deadline : NULL);
	/* Each node off its fence, or its callback done, before the free. */
	for (i = 0; i < queued; i++)
		fence_waiter_cancel(fences[i], &w[i]);
	free(w);
	/*
	 * A fence that signalled as we gave up wins, and an interrupt we
	 * took stays pending, as in ttm_fence_wait().
	 */
	first = first_signalled(fences, count);
	if (first >= 0 && ret == -EINTR)
		__atomic_store_n(&self->interrupt, 1, __ATOMIC_RELEASE);
out:
	if (first < 0)
		return ret ? ret : -ETIME;
	*ret_index = (unsigned int)first;
	return 0;
}
