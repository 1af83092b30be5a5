// SPDX-License-Identifier: MIT
/*
 * Merging two fences: a new fence, on a context of its own, that a
 * callback on each input signals once both have run. Not one context for
 * all merges: merges signal in no particular order, and a context is a
 * timeline, ordered by seqno (a reservation object lets a later fence of a
 * context replace an earlier one).
 *
 * The merge holds a reference on the new fence until then, and none on
 * the inputs: an input freed unsignalled runs its callbacks with
 * -ECANCELED (fence.c), which then ends the merge with that error.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"

struct fence_merge {
	struct ttm_fence_cb cb_a, cb_b;
	struct ttm_fence *out;
	int status_a, status_b;
	unsigned int pending;   /* atomic: inputs not signalled yet */
};

/* One input is done; the last one signals the merged fence. */
static void merge_input_done(struct fence_merge *m)
{
	int error;

	if (__atomic_sub_fetch(&m->pending, 1, __ATOMIC_ACQ_REL))
		return;
	/* @a's error first, whichever input signalled first. */
	error = m->status_a < 0 ? m->status_a
				: m->status_b < 0 ? m->status_b : 0;
	ttm_fence_signal(m->out, error);
	ttm_fence_put(m->out);
	free(m);
}

static void merge_cb_a(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct fence_merge *m = container_of(cb, struct fence_merge, cb_a);

	m->status_a = ttm_fence_get_status(f);
	merge_input_done(m);
}

static void merge_cb_b(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct fence_merge *m = container_of(cb, struct fence_merge, cb_b);

	m->status_b = ttm_fence_get_status(f);
	merge_input_done(m);
}

/* Have @func called when @f signals: now, if it already has. */
static void merge_arm(struct ttm_fence *f, struct ttm_fence_cb *cb,
		      ttm_fence_func_t *func)
{
	if (ttm_fence_add_callback(f, cb, func) == -ENOENT)
		func(f, cb);
}

TTM_EXPORT int ttm_fence_merge(struct ttm_fence *a, struct ttm_fence *b,
			       struct ttm_fence **ret_fence)
{
	struct fence_merge *m = malloc(sizeof(*m));
	struct ttm_fence *out;
	int ret;

	if (!m)
		return -ENOMEM;
	ret = ttm_fence_create(ttm_fence_context_alloc(1), 1, &out);
	if (ret) {
		free(m);
		return ret;
	}
	*m = (struct fence_merge){
		.out = ttm_fence_get(out),
		.pending = 2,
	};
	/* The caller's reference is ours to return: @m may end at once. */
	*ret_fence = out;
	merge_arm(a, &m->cb_a, merge_cb_a);
	merge_arm(b, &m->cb_b, merge_cb_b);
	return 0;
}
