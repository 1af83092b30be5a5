// SPDX-License-Identifier: MIT
/*
 * The lockless readers of a reservation object: the read side of the
 * sequence lock described in include/bo/resv.h. One walk over the list
 * serves all of them; it hands each unsignalled fence up to a usage, as a
 * new reference, to a visitor, and starts over if a writer changed the
 * list meanwhile.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "bo/resv.h"
#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "util/time.h"

struct resv_visitor {
	/* Owns @fence. Return: 0 to go on, 1 to stop, or a negative errno. */
	int (*visit)(struct ttm_fence *fence, void *data);
	/* Undo every visit: the walk was torn and starts over. */
	void (*restart)(void *data);
};

static uint32_t resv_read_begin(const struct ttm_resv *resv)
{
	uint32_t seq;

	/* An odd seq: a writer is inside; let it finish. */
	while ((seq = __atomic_load_n(&resv->seq, __ATOMIC_ACQUIRE)) & 1)
		sched_yield();
	return seq;
}

static bool resv_read_retry(const struct ttm_resv *resv, uint32_t seq)
{
	return __atomic_load_n(&resv->seq, __ATOMIC_ACQUIRE) != seq;
}

/* One pass over the list read in @list; see struct resv_visitor. */
static int resv_walk_once(const struct ttm_resv_list *list,
			  enum ttm_resv_usage usage,
			  const struct resv_visitor *v, void *data)
{
	unsigned int i, count;
	int ret = 0;

	count = list ? __atomic_load_n(&list->count, __ATOMIC_ACQUIRE) : 0;
	for (i = 0; i < count && !ret; i++) {
		const struct ttm_resv_entry *e = &list->entries[i];
		struct ttm_fence *f;

		if (__atomic_load_n(&e->usage, __ATOMIC_ACQUIRE) >
		    (unsigned int)usage)
			continue;
		/*
		 * NULL if the fence is being freed: a writer dropped it, and
		 * seq tells. Fences are type-stable, so this is safe even if
		 * the pointer is stale.
		 */
		f = ttm_fence_tryget(__atomic_load_n(&e->fence,
						     __ATOMIC_ACQUIRE));
		if (!f)
			continue;
		if (ttm_fence_is_signaled(f)) {
			ttm_fence_put(f);
			continue;
		}
		ret = v->visit(f, data);
	}
	return ret;
}

/*
 * Give each unsignalled fence of @resv with usage at most @usage to @v, in
 * one pass that no writer disturbed.
 * Return: the last visit's result (0 or 1), or its negative errno (the
 * walk stops there; the caller cleans up).
 */
static int resv_walk(struct ttm_resv *resv, enum ttm_resv_usage usage,
		     const struct resv_visitor *v, void *data)
{
	for (;;) {
		uint32_t seq = resv_read_begin(resv);
		const struct ttm_resv_list *list;
		int ret;

		list = __atomic_load_n(&resv->fences, __ATOMIC_ACQUIRE);
		ret = resv_walk_once(list, usage, v, data);
		if (ret < 0 || !resv_read_retry(resv, seq))
			return ret;
		v->restart(data);
	}
}

/* ---- the first unsignalled fence --------------------------------------- */

static int first_visit(struct ttm_fence *fence, void *data)
{
	*(struct ttm_fence **)data = fence;
	return 1;
}

static void first_restart(void *data)
{
	struct ttm_fence **first = data;

	ttm_fence_put(*first);
	*first = NULL;
}

/* A new reference to an unsignalled fence up to @usage, or NULL. */
static struct ttm_fence *resv_first_pending(struct ttm_resv *resv,
					    enum ttm_resv_usage usage)
{
	static const struct resv_visitor v = { first_visit, first_restart };
	struct ttm_fence *first = NULL;

	resv_walk(resv, usage, &v, &first);
	return first;
}

TTM_EXPORT bool ttm_resv_test_signaled(struct ttm_resv *resv,
				       enum ttm_resv_usage usage)
{
	struct ttm_fence *f = resv_first_pending(resv, usage);

	ttm_fence_put(f);
	return !f;
}

/*
 * One unsignalled fence at a time, until none is left: nothing to allocate
 * (so nothing fails but the wait), and each wait gets what is left of the
 * time.
 */
TTM_EXPORT int ttm_resv_wait(struct ttm_resv *resv, enum ttm_resv_usage usage,
			     bool interruptible, int64_t timeout_ns)
{
	int64_t deadline = 0, left = timeout_ns;
	struct ttm_fence *f;
	int ret;

	if (timeout_ns > 0) {
		deadline = (int64_t)mono_ns(); /* time since boot */
		/* Past INT64_MAX is forever anyway: just do not overflow. */
		deadline = timeout_ns > INT64_MAX - deadline ?
			   INT64_MAX : deadline + timeout_ns;
	}
	while ((f = resv_first_pending(resv, usage))) {
		if (timeout_ns > 0) {
			left = deadline - (int64_t)mono_ns();
			if (left < 0)
				left = 0; /* a last test, not a wait */
		}
		ret = ttm_fence_wait(f, interruptible, left);
		ttm_fence_put(f);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- a snapshot --------------------------------------------------------- */

struct snapshot {
	struct ttm_fence **fences;
	unsigned int count, max;
};

static int snapshot_visit(struct ttm_fence *fence, void *data)
{
	struct snapshot *s = data;

	if (s->count == s->max) {
		unsigned int max = s->max ? 2 * s->max : TTM_RESV_LIST_MIN;
		struct ttm_fence **fences;

		fences = reallocarray(s->fences, max, sizeof(*fences));
		if (!fences) {
			ttm_fence_put(fence);
			return -ENOMEM;
		}
		s->fences = fences;
		s->max = max;
	}
	s->fences[s->count++] = fence;
	return 0;
}

static void snapshot_restart(void *data)
{
	struct snapshot *s = data;

	while (s->count)
		ttm_fence_put(s->fences[--s->count]);
}

TTM_EXPORT int ttm_resv_get_fences(struct ttm_resv *resv,
				   enum ttm_resv_usage usage,
				   struct ttm_fence ***ret_fences,
				   unsigned int *ret_count)
{
	static const struct resv_visitor v = { snapshot_visit,
					       snapshot_restart };
	struct snapshot s = { 0 };
	int ret;

	ret = resv_walk(resv, usage, &v, &s);
	if (ret < 0 || !s.count) {
		snapshot_restart(&s);
		free(s.fences);
		if (ret < 0)
			return ret;
		s.fences = NULL;
	}
	*ret_fences = s.fences;
	*ret_count = s.count;
	return 0;
}
