// SPDX-License-Identifier: MIT
/*
 * Fence arrays (ttmsim/fence_container.h): a fence with driver ops of the
 * library's own over @count child fences.
 *
 * @pending counts the signals still needed: all the children, or one for
 * an array that signals on any. Nothing is armed until the core calls
 * enable_signaling (someone waits, adds a callback or exports): then one
 * callback per child, each holding a reference to the array, so that the
 * array outlives the callbacks even once its last user let go. The child
 * whose signal takes @pending to 0 signals the array, from its callback
 * (callbacks run without any fence lock held, so there is no need for the
 * kernel's irq_work detour). Until enabled, a peek polls the children.
 *
 * The error is the first one recorded in @error (compare-and-swap from 0),
 * always before the decrement that may signal, so whoever signals the
 * array reads it. Every signalling path passes it on: the callback gives
 * it to ttm_fence_signal(), and the paths where the core signals (an
 * enable_signaling that returns false, a signaled op that returns true)
 * store it with ttm_fence_set_error() first. The kernel's polled path
 * forgets the children's errors; this one does not.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "gpu_sim/fence_container.h"
#include "util/compiler.h"

struct fence_array;

struct array_cb {
	struct ttm_fence_cb cb;
	struct fence_array *array;
};

struct fence_array {
	struct ttm_fence base;
	unsigned int count;
	int pending;            /* atomic: signals still needed */
	int error;              /* atomic: first error recorded, or 0 */
	bool any;               /* signals on the first child */
	struct ttm_fence **fences;
	struct array_cb cbs[];  /* one per child */
};

static const struct ttm_fence_ops array_ops;

static struct fence_array *to_array(const struct ttm_fence *fence)
{
	if (!fence || fence->ops != &array_ops)
		return NULL;
	return container_of((struct ttm_fence *)fence, struct fence_array,
			    base);
}

static void array_note_error(struct fence_array *a, int status)
{
	int none = 0;

	if (status < 0)
		__atomic_compare_exchange_n(&a->error, &none, status, false,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
}

/* Before the core signals the array itself: with our error. */
static void array_pass_error(struct fence_array *a)
{
	int error = __atomic_load_n(&a->error, __ATOMIC_ACQUIRE);

	/* -EINVAL if it has signalled meanwhile: nothing to pass on. */
	if (error)
		ttm_fence_set_error(&a->base, error);
}

static void array_cb_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct fence_array *a = container_of(cb, struct array_cb, cb)->array;

	array_note_error(a, ttm_fence_get_status(f));
	if (__atomic_sub_fetch(&a->pending, 1, __ATOMIC_ACQ_REL) == 0)
		ttm_fence_signal(&a->base,
				 __atomic_load_n(&a->error, __ATOMIC_ACQUIRE));
	/* Maybe the last reference: the array goes after its grace period. */
	ttm_fence_put(&a->base);
}

static bool array_enable_signaling(struct ttm_fence *fence)
{
	struct fence_array *a = to_array(fence);
	unsigned int i;

	for (i = 0; i < a->count; i++) {
		struct ttm_fence *child = a->fences[i];

		a->cbs[i].array = a;
		ttm_fence_get(&a->base);
		if (!ttm_fence_add_callback(child, &a->cbs[i].cb,
					    array_cb_func))
			continue;
		/* Signalled already: count it here. */
		array_note_error(a, ttm_fence_get_status(child));
		/* Not the last: whoever enables holds one. */
		ttm_fence_put(&a->base);
		if (__atomic_sub_fetch(&a->pending, 1, __ATOMIC_ACQ_REL) == 0) {
			array_pass_error(a);
			return false;
		}
	}
	return true;
}

/*
 * While callbacks are armed @pending tells; before, or while they are
 * being armed, the children do. Polling them is always right, only slower.
 */
static bool array_signaled(struct ttm_fence *fence)
{
	struct fence_array *a = to_array(fence);
	unsigned int i, done = 0, needed;

	if (__atomic_load_n(&a->pending, __ATOMIC_ACQUIRE) <= 0)
		goto signalled;
	needed = a->any ? 1 : a->count;
	for (i = 0; i < a->count; i++) {
		if (!ttm_fence_is_signaled(a->fences[i]))
			continue;
		array_note_error(a, ttm_fence_get_status(a->fences[i]));
		done++;
	}
	if (done < needed)
		return false;
signalled:
	array_pass_error(a);
	return true;
}

/* Whoever needs the array needs every child by then. */
static void array_set_deadline(struct ttm_fence *fence, uint64_t deadline_ns)
{
	struct fence_array *a = to_array(fence);
	unsigned int i;

	for (i = 0; i < a->count; i++)
		ttm_fence_set_deadline(a->fences[i], deadline_ns);
}

static void array_release(struct ttm_fence *fence)
{
	struct fence_array *a = to_array(fence);
	unsigned int i;

	for (i = 0; i < a->count; i++)
		ttm_fence_put(a->fences[i]);
	free(a->fences);
	free(a);
}

static const char *array_driver_name(struct ttm_fence *fence)
{
	(void)fence;
	return "ttm_fence_array";
}

static const char *array_timeline_name(struct ttm_fence *fence)
{
	(void)fence;
	return "unbound";
}

static const struct ttm_fence_ops array_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = array_driver_name,
	.get_timeline_name = array_timeline_name,
	.enable_signaling = array_enable_signaling,
	.signaled = array_signaled,
	.release = array_release,
	.set_deadline = array_set_deadline,
};

TTM_EXPORT int ttm_fence_array_create(unsigned int count,
				      struct ttm_fence **fences,
				      uint64_t context, uint64_t seqno,
				      bool signal_on_any,
				      struct ttm_fence **ret_fence)
{
	struct fence_array *a;
	unsigned int i;

	if (!count)
		return -EINVAL;
	/* Flat, as in the kernel: nesting would recurse without bound. */
	for (i = 0; i < count; i++)
		if (!fences[i] || ttm_fence_is_container(fences[i]))
			return -EINVAL;
	a = calloc(1, sizeof(*a) + count * sizeof(a->cbs[0]));
	if (!a)
		return -ENOMEM;
	a->count = count;
	a->fences = fences;
	a->any = signal_on_any;
	a->pending = signal_on_any ? 1 : (int)count;
	ttm_fence_init(&a->base, &array_ops, context, seqno);
	*ret_fence = &a->base;
	return 0;
}

TTM_EXPORT bool ttm_fence_is_array(const struct ttm_fence *fence)
{
	return to_array(fence) != NULL;
}

TTM_EXPORT unsigned int ttm_fence_array_count(const struct ttm_fence *fence)
{
	struct fence_array *a = to_array(fence);

	return a ? a->count : 0;
}

TTM_EXPORT struct ttm_fence *
ttm_fence_array_fence(const struct ttm_fence *fence, unsigned int index)
{
	struct fence_array *a = to_array(fence);

	return a && index < a->count ? a->fences[index] : NULL;
}

TTM_EXPORT bool ttm_fence_is_container(const struct ttm_fence *fence)
{
	return ttm_fence_is_array(fence) || ttm_fence_is_chain(fence);
}
