// SPDX-License-Identifier: MIT
/*
 * Walking the fences of a reservation object: the locked iterator, and the
 * lockless one, the read side of the sequence lock described in
 * include/bo/resv.h. The other readers (test_signaled, wait, get_fences)
 * are built on the lockless iterator, as in the kernel.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "bo/resv.h"
#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "util/time.h"

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

static inline void iter_begin(struct ttm_resv_iter *cursor,
			      struct ttm_resv *resv, enum ttm_resv_usage usage)
{
	cursor->resv = resv;
	cursor->list = NULL;
	cursor->fence = NULL;
	cursor->usage = usage;
	cursor->fence_usage = 0;
	cursor->index = 0;
	cursor->count = 0;
	cursor->seq = 0;
	cursor->restarted = false;
}

TTM_EXPORT void ttm_resv_iter_begin(struct ttm_resv_iter *cursor,
				    struct ttm_resv *resv,
				    enum ttm_resv_usage usage)
{
	iter_begin(cursor, resv, usage);
}

TTM_EXPORT void ttm_resv_iter_end(struct ttm_resv_iter *cursor)
{
	ttm_fence_put(cursor->fence);
	cursor->fence = NULL;
}

TTM_EXPORT enum ttm_resv_usage
ttm_resv_iter_usage(const struct ttm_resv_iter *cursor)
{
	return (enum ttm_resv_usage)cursor->fence_usage;
}

TTM_EXPORT bool ttm_resv_iter_is_restarted(const struct ttm_resv_iter *cursor)
{
	return cursor->restarted;
}

/* ---- without the lock ---------------------------------------------------- */

/* A new pass over the list as it is now. */
static inline __attribute__((always_inline)) void
iter_restart_unlocked(struct ttm_resv_iter *cursor)
{
	const struct ttm_resv_list *list;

	cursor->seq = resv_read_begin(cursor->resv);
	list = __atomic_load_n(&cursor->resv->fences, __ATOMIC_ACQUIRE);
	cursor->list = list;
	cursor->count = list ? __atomic_load_n(&list->count,
					       __ATOMIC_ACQUIRE) : 0;
	cursor->index = 0;
	cursor->restarted = true;
}

/*
 * The next unsignalled fence of the pass up to the cursor's usage, with a
 * new reference, or NULL at the end of the pass. What it read may be torn:
 * only an unchanged seq afterwards says the fence was in the list.
 */
static inline __attribute__((always_inline)) struct ttm_fence *
iter_walk_unlocked(struct ttm_resv_iter *cursor)
{
	while (cursor->index < cursor->count) {
		const struct ttm_resv_entry *e =
			&cursor->list->entries[cursor->index++];
		unsigned int usage;
		struct ttm_fence *f;

		usage = __atomic_load_n(&e->usage, __ATOMIC_ACQUIRE);
		if (usage > cursor->usage)
			continue;
		/*
		 * NULL if the fence is being freed: a writer dropped it, and
		 * seq tells. Safe even if the pointer is stale: the library's
		 * fences are type-stable, and a driver's stays in memory
		 * until we leave the read-side section (gpu_sim/fence.h).
		 */
		f = ttm_fence_tryget(__atomic_load_n(&e->fence,
						     __ATOMIC_ACQUIRE));
		if (!f)
			continue;
		if (ttm_fence_is_signaled(f)) {
			ttm_fence_put(f);
			continue;
		}
		cursor->fence_usage = usage;
		return f;
	}
	return NULL;
}

/*
 * The next fence that no writer disturbed since the pass began, starting a
 * new pass first with @restart and whenever a writer did: each fence, and
 * the end, is checked against seq, so that what a caller collected since
 * the last restart was all in the list at once. The caller is inside a
 * read-side section (ttm_fence_read_lock()) that covers the pass, or has
 * re-checked seq since it entered one (iter_step_in_section()).
 */
static inline __attribute__((always_inline)) struct ttm_fence *
iter_next_unlocked(struct ttm_resv_iter *cursor, bool restart)
{
	struct ttm_fence *f;

	/* Inlined, without a call for NULL: the readers below loop on it. */
	if (cursor->fence) {
		ttm_fence_put(cursor->fence);
		cursor->fence = NULL;
	}
	for (;;) {
		if (restart)
			iter_restart_unlocked(cursor);
		f = iter_walk_unlocked(cursor);
		if (!resv_read_retry(cursor->resv, cursor->seq))
			break;
		ttm_fence_put(f);
		restart = true;
	}
	cursor->fence = f;
	return f;
}

/*
 * The steps, for the readers below, inside a section they hold across the
 * whole walk (one section, not one per step: each costs a full barrier);
 * calls within the library to the exported functions would go through the
 * PLT.
 */
static inline struct ttm_fence *iter_first_unlocked(struct ttm_resv_iter *c)
{
	return iter_next_unlocked(c, true);
}

static inline struct ttm_fence *iter_step_unlocked(struct ttm_resv_iter *c)
{
	c->restarted = false;
	return iter_next_unlocked(c, false);
}

/*
 * A step of a caller's walk, in a section of its own: a driver's fence
 * dropped meanwhile stays in memory until we leave it. Only one dropped
 * after we entered, though: a pass continued from an earlier step, whose
 * section ended, may hold entries whose fences went since (a prune puts
 * them while the list still points to them), so it starts over unless seq
 * says nothing changed. Read after the section began, seq sees any write
 * section whose fences the grace period does not hold for us.
 */
static struct ttm_fence *iter_step_in_section(struct ttm_resv_iter *c,
					      bool restart)
{
	struct ttm_fence *f;

	ttm_fence_read_lock();
	if (restart) {
		f = iter_first_unlocked(c);
	} else {
		c->restarted = false;
		f = iter_next_unlocked(c, resv_read_retry(c->resv, c->seq));
	}
	ttm_fence_read_unlock();
	return f;
}

TTM_EXPORT struct ttm_fence *
ttm_resv_iter_first_unlocked(struct ttm_resv_iter *cursor)
{
	return iter_step_in_section(cursor, true);
}

TTM_EXPORT struct ttm_fence *
ttm_resv_iter_next_unlocked(struct ttm_resv_iter *cursor)
{
	return iter_step_in_section(cursor, false);
}

/* ---- with the lock: the list cannot change under the walk --------------- */

static struct ttm_fence *iter_next_locked(struct ttm_resv_iter *cursor)
{
	const struct ttm_resv_list *list = cursor->list;

	while (list && cursor->index < list->count) {
		const struct ttm_resv_entry *e = &list->entries[cursor->index++];

		if (e->usage > cursor->usage)
			continue;
		cursor->fence_usage = e->usage;
		return e->fence;
	}
	return NULL;
}

TTM_EXPORT struct ttm_fence *ttm_resv_iter_first(struct ttm_resv_iter *cursor)
{
	struct ttm_fence *f;

	if (resv_assert_held(cursor->resv, "ttm_resv_iter_first"))
		return NULL;
	cursor->list = cursor->resv->fences;
	cursor->index = 0;
	f = iter_next_locked(cursor);
	cursor->restarted = true;
	return f;
}

TTM_EXPORT struct ttm_fence *ttm_resv_iter_next(struct ttm_resv_iter *cursor)
{
	if (resv_assert_held(cursor->resv, "ttm_resv_iter_next"))
		return NULL;
	cursor->restarted = false;
	return iter_next_locked(cursor);
}

/* ---- readers built on the lockless walk ---------------------------------- */

/* A new reference to an unsignalled fence up to @usage, or NULL. */
struct ttm_fence *resv_first_pending(struct ttm_resv *resv,
				     enum ttm_resv_usage usage)
{
	struct ttm_resv_iter cursor;
	struct ttm_fence *f;

	iter_begin(&cursor, resv, usage);
	ttm_fence_read_lock();
	f = iter_first_unlocked(&cursor);
	ttm_fence_read_unlock();
	/* Its reference is the caller's now: nothing for an end to put. */
	return f;
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

	/* Rule 13 for every wait, even one that would not sleep this time. */
	if (timeout_ns && ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, resv,
					  "ttm_resv_wait", NULL, 0))
		return -EINVAL;
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

/* Keep @fence (a new reference); put it if there is no room. */
static int snapshot_add(struct snapshot *s, struct ttm_fence *fence)
{
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

static void snapshot_drop(struct snapshot *s)
{
	while (s->count)
		ttm_fence_put(s->fences[--s->count]);
}

TTM_EXPORT int ttm_resv_get_fences(struct ttm_resv *resv,
				   enum ttm_resv_usage usage,
				   struct ttm_fence ***ret_fences,
				   unsigned int *ret_count)
{
	struct ttm_resv_iter cursor;
	struct snapshot s = { 0 };
	struct ttm_fence *f;
	int ret = 0;

	iter_begin(&cursor, resv, usage);
	/*
	 * One section for the walk. Fences the snapshot drops in it are
	 * released after it, if theirs was the last reference.
	 */
	ttm_fence_read_lock();
	for (f = iter_first_unlocked(&cursor); f;
	     f = iter_step_unlocked(&cursor)) {
		if (cursor.restarted)
			snapshot_drop(&s);
		/* The snapshot takes over the cursor's reference. */
		cursor.fence = NULL;
		ret = snapshot_add(&s, f);
		if (ret)
			break;
	}
	ttm_fence_read_unlock();
	/* A last pass that found nothing makes the earlier ones stale. */
	if (ret || cursor.restarted)
		snapshot_drop(&s);
	if (ret || !s.count) {
		free(s.fences);
		if (ret)
			return ret;
		s.fences = NULL;
	}
	*ret_fences = s.fences;
	*ret_count = s.count;
	return 0;
}
