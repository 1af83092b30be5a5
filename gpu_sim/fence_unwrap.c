// SPDX-License-Identifier: MIT
/*
 * Unwrapping containers and merging fences (ttmsim/fence_container.h).
 *
 * The cursor holds a reference to the chain link it is in (or to the head,
 * if that is not a link) and walks that link's array, if it holds one;
 * then it steps back along the chain with ttm_fence_chain_walk(), which
 * skips links that have signalled. Arrays hold plain fences only, so two
 * levels are all there is.
 *
 * The merge collects the plain fences inside its inputs with a reference
 * each, sorts them by context, and keeps the later fence of each context.
 * One array of what is left, so that a merge of merges stays flat.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "gpu_sim/fence_container.h"
#include "util/compiler.h"

/* The first fence of the cursor's link, stepping back past empty ones. */
static struct ttm_fence *unwrap_link(struct ttm_fence_unwrap *cursor)
{
	struct ttm_fence *f;

	while (cursor->chain) {
		cursor->array = ttm_fence_chain_contained(cursor->chain);
		cursor->index = 0;
		f = ttm_fence_is_array(cursor->array) ?
		    ttm_fence_array_fence(cursor->array, 0) : cursor->array;
		if (f)
			return f;
		cursor->chain = ttm_fence_chain_walk(cursor->chain);
	}
	return NULL;
}

TTM_EXPORT struct ttm_fence *
ttm_fence_unwrap_first(struct ttm_fence *head, struct ttm_fence_unwrap *cursor)
{
	cursor->chain = ttm_fence_get(head);
	return unwrap_link(cursor);
}

TTM_EXPORT struct ttm_fence *
ttm_fence_unwrap_next(struct ttm_fence_unwrap *cursor)
{
	struct ttm_fence *f;

	if (!cursor->chain)
		return NULL;
	f = ttm_fence_array_fence(cursor->array, ++cursor->index);
	if (f)
		return f;
	cursor->chain = ttm_fence_chain_walk(cursor->chain);
	return unwrap_link(cursor);
}

TTM_EXPORT void ttm_fence_unwrap_end(struct ttm_fence_unwrap *cursor)
{
	ttm_fence_put(cursor->chain);
	cursor->chain = NULL;
}

struct fence_vec {
	struct ttm_fence **v;
	unsigned int n, cap;
};

/* Append @f, whose reference passes to @vec. */
static int vec_push(struct fence_vec *vec, struct ttm_fence *f)
{
	if (vec->n == vec->cap) {
		unsigned int cap = vec->cap ? 2 * vec->cap : 8;
		struct ttm_fence **v = realloc(vec->v, cap * sizeof(*v));

		if (!v) {
			ttm_fence_put(f);
			return -ENOMEM;
		}
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = f;
	return 0;
}

static void vec_fini(struct fence_vec *vec)
{
	unsigned int i;

	for (i = 0; i < vec->n; i++)
		ttm_fence_put(vec->v[i]);
	free(vec->v);
	*vec = (struct fence_vec){ 0 };
}

static int cmp_context(const void *pa, const void *pb)
{
	uint64_t a = ttm_fence_context(*(struct ttm_fence *const *)pa);
	uint64_t b = ttm_fence_context(*(struct ttm_fence *const *)pb);

	return (a > b) - (a < b);
}

/*
 * Keep the later fence of each run of one context. A scan rather than a
 * sort on seqnos too: 32-bit seqnos compare modulo 2^32, which is no
 * order a sort may rely on.
 */
static void vec_dedup(struct fence_vec *vec)
{
	unsigned int i, out = 0;

	for (i = 0; i < vec->n; i++) {
		struct ttm_fence *f = vec->v[i];

		if (out && ttm_fence_context(vec->v[out - 1]) ==
			   ttm_fence_context(f)) {
			if (ttm_fence_is_later(f, vec->v[out - 1])) {
				ttm_fence_put(vec->v[out - 1]);
				vec->v[out - 1] = f;
			} else {
				ttm_fence_put(f);
			}
			continue;
		}
		vec->v[out++] = f;
	}
	vec->n = out;
}

int fence_unwrap_collect(unsigned int count, struct ttm_fence *const *fences,
			 struct ttm_fence ***ret_fences,
			 unsigned int *ret_count)
{
	struct fence_vec vec = { 0 };
	struct ttm_fence_unwrap cursor;
	struct ttm_fence *f;
	unsigned int i;

	for (i = 0; i < count; i++) {
		ttm_fence_unwrap_for_each(f, &cursor, fences[i]) {
			/* Done and fine: nothing to wait for. */
			if (ttm_fence_get_status(f) == 1)
				continue;
			if (vec_push(&vec, ttm_fence_get(f))) {
				ttm_fence_unwrap_end(&cursor);
				vec_fini(&vec);
				return -ENOMEM;
			}
		}
	}
	if (vec.n > 1) {
		qsort(vec.v, vec.n, sizeof(*vec.v), cmp_context);
		vec_dedup(&vec);
	}
	if (!vec.n) {
		free(vec.v);
		vec.v = NULL;
	}
	*ret_fences = vec.v;
	*ret_count = vec.n;
	return 0;
}

TTM_EXPORT int ttm_fence_unwrap_merge(unsigned int count,
				      struct ttm_fence *const *fences,
				      struct ttm_fence **ret_fence)
{
	struct ttm_fence **v;
	unsigned int n, i;
	int ret;

	ret = fence_unwrap_collect(count, fences, &v, &n);
	if (ret)
		return ret;
	if (n == 0) {
		*ret_fence = ttm_fence_get_stub();
		return 0;
	}
	if (n == 1) {
		*ret_fence = v[0];
		free(v);
		return 0;
	}
	/*
	 * A context of its own for each merge: merges signal in no
	 * particular order, and a reservation lets a later fence of a
	 * context replace an earlier one.
	 */
	ret = ttm_fence_array_create(n, v, ttm_fence_context_alloc(1), 1,
				     false, ret_fence);
	if (ret) {
		for (i = 0; i < n; i++)
			ttm_fence_put(v[i]);
		free(v);
	}
	return ret;
}
