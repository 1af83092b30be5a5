// SPDX-License-Identifier: MIT
/*
 * Adding a fence to a reservation object: the step after a job was
 * submitted, so it cannot fail; misuse goes to the ww debug checker's
 * report path, as for the other calls that need a reservation held. The
 * public functions are defined as (name) so that the caller-site macro of
 * ttmsim/resv.h does not apply to them.
 */
#include "bo/resv.h"
#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "ww/debug.h"

void resv_misuse(const struct ttm_resv *resv, enum ww_debug_rule rule,
		 const char *call, const char *file, int line)
{
	const struct ww_class *cls = ww_lock_class(&resv->lock);
	struct ww_debug_report r = {
		.rule = rule,
		.call = call,
		.class_name = cls ? cls->name : NULL,
		.lock = &resv->lock,
		.file = file,
		.line = line,
	};

	ww_debug_raise(&r);
}

void resv_class_mismatch(const struct ww_mutex *lock,
			 const struct ww_class *cls,
			 const struct ww_acquire_ctx *ticket,
			 const char *call, const char *file, int line)
{
	struct ww_debug_report r = {
		.rule = WW_DEBUG_CLASS_MISMATCH,
		.call = call,
		.class_name = cls ? cls->name : NULL,
		.ctx_class_name = ticket->ww_class->name,
		.lock = lock,
		.ctx = ticket,
		.stamp = ticket->stamp,
		.file = file,
		.line = line,
	};

	ww_debug_raise(&r);
}

TTM_EXPORT void ttm_resv_assert_held_at(const struct ttm_resv *resv,
					const char *file, int line)
{
	resv_assert_held_at(resv, "ttm_resv_assert_held", file, line);
}

TTM_EXPORT void (ttm_resv_assert_held)(const struct ttm_resv *resv)
{
	resv_assert_held_at(resv, "ttm_resv_assert_held", NULL, 0);
}

/*
 * The entry of the fence that @fence supersedes: same context, a usage
 * @usage or lower in priority (replacing it must not degrade anything) and
 * a seqno not later than @fence's (so waiting for @fence covers it).
 */
static int resv_find_replaced(const struct ttm_resv_list *list,
			      const struct ttm_fence *fence,
			      enum ttm_resv_usage usage)
{
	uint64_t context = ttm_fence_context(fence);
	unsigned int i;

	for (i = 0; i < list->count; i++) {
		const struct ttm_resv_entry *e = &list->entries[i];

		if (ttm_fence_context(e->fence) == context &&
		    e->usage >= (unsigned int)usage &&
		    ttm_fence_seqno(e->fence) <= ttm_fence_seqno(fence))
			return (int)i;
	}
	return -1;
}

TTM_EXPORT void ttm_resv_add_fence_at(struct ttm_resv *resv,
				      struct ttm_fence *fence,
				      enum ttm_resv_usage usage,
				      const char *file, int line)
{
	struct ttm_resv_list *list;
	struct ttm_fence *old = NULL;
	unsigned int before;
	int i = -1;

	if (resv_assert_held_at(resv, "ttm_resv_add_fence", file, line))
		return;

	resv_write_begin(resv);
	list = resv->fences;
	before = list ? list->count : 0;
	if (list) {
		resv_prune_locked(resv);
		i = resv_find_replaced(list, fence, usage);
	}
	/*
	 * Only growing the list needs a slot, as in the kernel's
	 * dma_resv_add_fence(): not replacing a fence of the context, nor
	 * taking the place of a signalled one (the kernel reuses its entry;
	 * here it was just pruned).
	 */
	if (i < 0 && (!list || list->count == before)) {
		/* Checked in every build: the list has no room otherwise. */
		if (!resv->reserved) {
			/* Nothing was pruned, so nothing changed. */
			resv_write_end(resv);
			resv_misuse(resv, WW_DEBUG_RESV_NO_SLOT,
				    "ttm_resv_add_fence", file, line);
			return;
		}
		resv->reserved--;
	}

	/* A slot was reserved, or an entry was replaced or pruned. */
	ttm_fence_get(fence);
	if (i >= 0) {
		old = list->entries[i].fence;
		resv_entry_set(list, (unsigned int)i, fence, usage);
	} else {
		resv_entry_set(list, list->count, fence, usage);
		resv_count_set(list, list->count + 1);
	}
	resv_write_end(resv);
	ttm_fence_put(old);
}

TTM_EXPORT void (ttm_resv_add_fence)(struct ttm_resv *resv,
				     struct ttm_fence *fence,
				     enum ttm_resv_usage usage)
{
	ttm_resv_add_fence_at(resv, fence, usage, NULL, 0);
}

TTM_EXPORT void ttm_resv_replace_fences(struct ttm_resv *resv,
					uint64_t context,
					struct ttm_fence *replacement,
					enum ttm_resv_usage usage)
{
	struct ttm_resv_list *list;
	unsigned int i;

	if (resv_assert_held(resv, "ttm_resv_replace_fences"))
		return;
	list = resv->fences;
	for (i = 0; list && i < list->count; i++) {
		struct ttm_fence *old = list->entries[i].fence;

		if (ttm_fence_context(old) != context)
			continue;
		/*
		 * A section per entry, so that the old fence, maybe
		 * unsignalled, is put outside it (its callbacks may run).
		 * Replaced in place: no slot needed.
		 */
		resv_write_begin(resv);
		resv_entry_set(list, i, ttm_fence_get(replacement), usage);
		resv_write_end(resv);
		ttm_fence_put(old);
	}
}
