// SPDX-License-Identifier: MIT
/*
 * Reservation objects: setting up, tearing down, reserving room for
 * fences, copying another object's fences, and who holds the lock. Adding
 * and replacing are in resv_add.c, the iterators and the lockless readers
 * in resv_read.c; include/bo/resv.h explains the list and its sequence
 * lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bo/resv.h"
#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "ww/lockword.h"

TTM_EXPORT void ttm_resv_init(struct ttm_resv *resv, struct ww_class *cls)
{
	ww_mutex_init(&resv->lock, cls);
	resv->seq = 0;
	resv->reserved = 0;
	resv->fences = NULL;
	resv->retired = NULL;
}

TTM_EXPORT void ttm_resv_fini(struct ttm_resv *resv)
{
	struct ttm_resv_list *list = resv->fences, *next;
	unsigned int i;

	/* Nobody may read any more: no write section needed. */
	if (list) {
		for (i = 0; i < list->count; i++)
			ttm_fence_put(list->entries[i].fence);
		free(list);
	}
	for (list = resv->retired; list; list = next) {
		next = list->next;
		free(list); /* its fences belong to the current list */
	}
	resv->fences = NULL;
	resv->retired = NULL;
	resv->reserved = 0;
	(ww_mutex_destroy)(&resv->lock);
}

void resv_prune_locked(struct ttm_resv *resv)
{
	struct ttm_resv_list *list = resv->fences;
	unsigned int i, kept = 0;

	if (!list)
		return;
	for (i = 0; i < list->count; i++) {
		struct ttm_resv_entry e = list->entries[i];

		if (ttm_fence_is_signaled(e.fence)) {
			ttm_fence_put(e.fence);
			continue;
		}
		if (i != kept)
			resv_entry_set(list, kept, e.fence, e.usage);
		kept++;
	}
	if (kept != list->count)
		resv_count_set(list, kept);
}

/* True if some fence of the current list has signalled. */
static bool resv_has_signaled(const struct ttm_resv *resv)
{
	const struct ttm_resv_list *list = resv->fences;
	unsigned int i;

	for (i = 0; list && i < list->count; i++)
		if (ttm_fence_is_signaled(list->entries[i].fence))
			return true;
	return false;
}

/*
 * A list for @max entries, none in use yet; not published, so plain
 * stores fill it.
 */
static struct ttm_resv_list *resv_list_alloc(unsigned int max)
{
	struct ttm_resv_list *list;

	list = malloc(sizeof(*list) + (size_t)max * sizeof(list->entries[0]));
	if (list) {
		list->count = 0;
		list->max = max;
		list->next = NULL;
	}
	return list;
}

/* An unpublished list: put its fences, free it. */
static void resv_list_free(struct ttm_resv_list *list)
{
	unsigned int i;

	if (!list)
		return;
	for (i = 0; i < list->count; i++)
		ttm_fence_put(list->entries[i].fence);
	free(list);
}

/*
 * Replace the current list by one of @max entries with the same fences.
 * The old list stays readable on resv->retired until ttm_resv_fini().
 */
static int resv_grow(struct ttm_resv *resv, unsigned int max)
{
	struct ttm_resv_list *old = resv->fences, *list;

	list = resv_list_alloc(max);
	if (!list)
		return -ENOMEM;
	if (old) {
		list->count = old->count;
		memcpy(list->entries, old->entries,
		       old->count * sizeof(old->entries[0]));
	}

	/* Same fences before and after; the section only orders the copy. */
	resv_write_begin(resv);
	__atomic_store_n(&resv->fences, list, __ATOMIC_RELEASE);
	resv_write_end(resv);

	if (old) {
		old->next = resv->retired;
		resv->retired = old;
	}
	return 0;
}

TTM_EXPORT int ttm_resv_reserve_fences(struct ttm_resv *resv, unsigned int n)
{
	struct ttm_resv_list *list;
	unsigned int count, max;
	int ret;

	ret = resv_assert_held(resv, "ttm_resv_reserve_fences");
	if (ret)
		return ret;
	/* Pruning first may leave enough room without allocating. */
	if (resv_has_signaled(resv)) {
		resv_write_begin(resv);
		resv_prune_locked(resv);
		resv_write_end(resv);
	}

	list = resv->fences;
	count = list ? list->count : 0;
	if (n > UINT_MAX / 2 - count)
		return -ENOMEM; /* no allocation could hold that */
	if (!list || count + n > list->max) {
		max = list ? list->max : 0;
		max = max <= UINT_MAX / 2 ? 2 * max : UINT_MAX;
		if (max < count + n)
			max = count + n;
		if (max < TTM_RESV_LIST_MIN)
			max = TTM_RESV_LIST_MIN;
		ret = resv_grow(resv, max);
		if (ret)
			return ret;
	}

	/*
	 * Room for @n more, not @n on top of what was reserved: as in the
	 * kernel, where reserving twice for one fence leaves room for one.
	 * count + reserved <= max holds, since pruning only lowers count.
	 */
	if (resv->reserved < n)
		resv->reserved = n;
	return 0;
}

TTM_EXPORT struct ww_acquire_ctx *
ttm_resv_locking_ctx(const struct ttm_resv *resv)
{
	/* A thread's token (no context) reads as NULL, as in the kernel. */
	return ww_token_ctx(ww_token(ww_word_load(&resv->lock)));
}

TTM_EXPORT int ttm_resv_copy_fences(struct ttm_resv *dst, struct ttm_resv *src)
{
	struct ttm_resv_list *list = NULL, *old;
	struct ttm_resv_iter cursor;
	struct ttm_fence *f;
	unsigned int i;
	int ret;

	ret = resv_assert_held(dst, "ttm_resv_copy_fences");
	if (ret)
		return ret;

	/* @src as a lockless reader sees it: its writers go on. */
	ttm_resv_iter_begin(&cursor, src, TTM_RESV_USAGE_BOOKKEEP);
	ttm_resv_for_each_fence_unlocked(&cursor, f) {
		if (ttm_resv_iter_is_restarted(&cursor)) {
			/* The pass has at most cursor.count fences for us. */
			resv_list_free(list);
			list = resv_list_alloc(cursor.count > TTM_RESV_LIST_MIN ?
					       cursor.count :
					       TTM_RESV_LIST_MIN);
			if (!list) {
				ttm_resv_iter_end(&cursor);
				return -ENOMEM;
			}
		}
		list->entries[list->count].fence = ttm_fence_get(f);
		list->entries[list->count].usage = ttm_resv_iter_usage(&cursor);
		list->count++;
	}
	if (ttm_resv_iter_is_restarted(&cursor)) {
		/* The last pass found nothing: what we have is stale. */
		resv_list_free(list);
		list = NULL;
	}
	ttm_resv_iter_end(&cursor);

	old = dst->fences;
	resv_write_begin(dst);
	__atomic_store_n(&dst->fences, list, __ATOMIC_RELEASE);
	resv_write_end(dst);
	/*
	 * The new list has room for the copies only, as in the kernel:
	 * slots reserved before are gone. Reserve again to add.
	 */
	dst->reserved = 0;
	if (old) {
		/*
		 * Outside the section: a fence freed unsignalled runs its
		 * callbacks. The list stays readable until fini, which frees
		 * it without putting what was put here.
		 */
		for (i = 0; i < old->count; i++)
			ttm_fence_put(old->entries[i].fence);
		old->next = dst->retired;
		dst->retired = old;
	}
	return 0;
}
