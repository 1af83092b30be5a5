// SPDX-License-Identifier: MIT
/*
 * Signalling and callbacks.
 *
 * The fence's lock guards its lists; callbacks run without it, so they
 * may take any lock of their own, or signal, wait on and add callbacks to
 * other fences, without lock-order trouble (the lock is never held while
 * calling out). Signalling marks the fence, takes both lists off it under
 * the lock, then runs them. ttm_fence_remove_callback() that comes too late
 * (the callback was taken off) returns false only once the callbacks have
 * finished, so its caller may free the node at once: it waits for the
 * signalling thread unless it is that thread (a callback removing a sibling
 * callback of the same fence, which then still runs).
 */
#include <errno.h>
#include <sched.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/debug.h"

void fence_cb_list_add(struct ttm_fence_cb_list *list,
		       struct ttm_fence_cb *cb,
		       ttm_fence_func_t *func)
{
	cb->func = func;
	cb->next = NULL;
	cb->pprev = list->tail;
	*list->tail = cb;
	list->tail = &cb->next;
}

/* False if @cb is not on a list (ran, or was removed already). */
bool fence_cb_list_remove(struct ttm_fence_cb_list *list,
			  struct ttm_fence_cb *cb)
{
	if (!cb->pprev)
		return false;
	*cb->pprev = cb->next;
	if (cb->next)
		cb->next->pprev = cb->pprev;
	else
		list->tail = cb->pprev;
	cb->pprev = NULL;
	return true;
}

/*
 * Run @cb and the nodes after it, in order. A callback may free its node,
 * or reuse its memory (bo/bo_destroy.c queues the buffer by the node's
 * link): each node's link is read before its callback runs, never after.
 */
static void cb_list_run(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct ttm_fence_cb *next;

	for (; cb; cb = next) {
		next = cb->next;
		cb->func(f, cb);
	}
}

/* Take @list's nodes off it, marked as off any list, for cb_list_run(). */
static struct ttm_fence_cb *cb_list_take(struct ttm_fence_cb_list *list)
{
	struct ttm_fence_cb *head = list->head, *cb;

	for (cb = head; cb; cb = cb->next)
		cb->pprev = NULL;
	list->head = NULL;
	list->tail = &list->head;
	return head;
}

/*
 * The fences whose callbacks this thread is running, innermost first: a
 * chain of frames on its stack.
 */
struct signal_frame {
	const struct ttm_fence *fence;
	struct signal_frame *outer;
};

static __thread struct signal_frame *signalling
	__attribute__((tls_model("initial-exec")));

bool fence_signalling_now(const struct ttm_fence *f)
{
	struct signal_frame *frame;

	for (frame = signalling; frame; frame = frame->outer)
		if (frame->fence == f)
			return true;
	return false;
}

void fence_signal_unlock(struct ttm_fence *f, int status, bool write_fd,
			 uint64_t timestamp_ns)
{
	struct ttm_fence_cb *cbs, *waiters;
	struct signal_frame frame = { f, signalling };
	unsigned int cookie;

	/*
	 * First: callbacks and waiters see the fence as signalled, and
	 * whoever sees the status sees the time (release).
	 */
	f->timestamp = timestamp_ns ? timestamp_ns : mono_ns();
	__atomic_store_n(&f->status, status, __ATOMIC_RELEASE);
	if (write_fd && f->pipe_wr >= 0)
		fence_fd_signal(f);
	if (likely(!f->cbs.head && !f->waiters.head)) {
		pthread_mutex_unlock(&f->lock);
		return;
	}
	cbs = cb_list_take(&f->cbs);
	waiters = cb_list_take(&f->waiters);
	__atomic_store_n(&f->running, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&f->lock);

	signalling = &frame;
	cookie = ttm_fence_begin_signalling();
	cb_list_run(f, cbs);
	cb_list_run(f, waiters);
	ttm_fence_end_signalling(cookie);
	signalling = frame.outer;
	__atomic_store_n(&f->running, 0, __ATOMIC_RELEASE);
}

int fence_signal_timestamp(struct ttm_fence *fence, int error,
			   uint64_t timestamp_ns)
{
	if (error > 0 || error < -FENCE_MAX_ERRNO)
		return -EINVAL;
	pthread_mutex_lock(&fence->lock);
	if (__atomic_load_n(&fence->status, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&fence->lock);
		return -EINVAL;
	}
	if (!error)
		error = fence->error;
	fence_signal_unlock(fence, error ? error : 1, true, timestamp_ns);
	return 0;
}

TTM_EXPORT int ttm_fence_signal(struct ttm_fence *fence, int error)
{
	return fence_signal_timestamp(fence, error, 0);
}

TTM_EXPORT int ttm_fence_add_callback(struct ttm_fence *fence,
				      struct ttm_fence_cb *cb,
				      ttm_fence_func_t *func)
{
	int ret = -ENOENT;

	/* Not even the lock once it has signalled: a plain read says so. */
	if (ttm_fence_is_signaled(fence)) {
		cb->pprev = NULL;
		return ret;
	}
	/* Without the lock: the op may signal @fence. */
	fence_enable_signaling(fence);
	pthread_mutex_lock(&fence->lock);
	if (!__atomic_load_n(&fence->status, __ATOMIC_RELAXED)) {
		fence_cb_list_add(&fence->cbs, cb, func);
		ret = 0;
	} else {
		cb->pprev = NULL;
	}
	pthread_mutex_unlock(&fence->lock);
	return ret;
}

TTM_EXPORT bool ttm_fence_remove_callback(struct ttm_fence *fence,
					  struct ttm_fence_cb *cb)
{
	bool removed;

	pthread_mutex_lock(&fence->lock);
	removed = fence_cb_list_remove(&fence->cbs, cb);
	pthread_mutex_unlock(&fence->lock);
	if (removed || fence_signalling_now(fence))
		return removed;
	/*
	 * Taken off by a signal whose callbacks may still run: wait for
	 * them, as short as they are. Only a remove racing a signal gets
	 * here.
	 */
	while (__atomic_load_n(&fence->running, __ATOMIC_ACQUIRE))
		sched_yield();
	return false;
}

/*
 * The signalling thread sets @running before it drops the lock it marked
 * the fence signalled under, so once we have had the lock after that,
 * @running says whether callbacks are still going.
 */
TTM_EXPORT void ttm_fence_cb_barrier(struct ttm_fence *fence)
{
	if (!__atomic_load_n(&fence->status, __ATOMIC_ACQUIRE) ||
	    fence_signalling_now(fence))
		return;
	/* Waits for other threads' callbacks, which may wait for us. */
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, fence,
			    "ttm_fence_cb_barrier", NULL, 0))
		return;
	pthread_mutex_lock(&fence->lock);
	pthread_mutex_unlock(&fence->lock);
	fence_callbacks_wait(fence);
}

void fence_callbacks_wait(struct ttm_fence *f)
{
	if (fence_signalling_now(f))
		return;
	while (__atomic_load_n(&f->running, __ATOMIC_ACQUIRE))
		sched_yield();
}
