/* SPDX-License-Identifier: MIT */
/*
 * Fence containers: fences made of other fences, modelled on the kernel's
 * dma_fence_array, dma_fence_chain and dma_fence_unwrap.
 *
 * - An array signals once all of its fences have signalled, or any one of
 *   them; it fails with the error of the first child seen to fail.
 * - A chain link is one point of a timeline: it holds the fence of its
 *   point and a reference to the link before it, and signals once every
 *   fence up to its point has. Links whose fence has signalled are dropped
 *   from the chain by whoever walks it (ttm_fence_chain_walk()).
 * - ttm_fence_unwrap_for_each() walks the plain fences inside a container,
 *   ttm_fence_unwrap_merge() flattens any number of fences into one.
 *
 * Containers are fences with driver ops (struct ttm_fence_ops) of the
 * library's own: signalling is enabled lazily, so a container adds
 * callbacks to its fences only once someone waits on it, adds a callback
 * or exports it (ttm_fence_export_fd()); until then a peek
 * (ttm_fence_is_signaled()) polls its fences. A deadline
 * (ttm_fence_set_deadline()) is passed on to every pending fence inside.
 * Their memory comes back after a grace period, like any driver fence's
 * (ttmsim/fence.h).
 *
 * Nesting follows the kernel: an array holds plain fences only (no array,
 * no chain link), a chain link's fence is a plain fence or an array.
 * ttm_fence_unwrap_merge() produces such flat arrays from anything.
 */
#ifndef TTMSIM_FENCE_CONTAINER_H
#define TTMSIM_FENCE_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ttm_fence_array_create() - a fence that signals when all, or any, of
 * @fences have (the kernel's dma_fence_array_create()).
 * @count: the number of @fences; at least 1.
 * @fences: a malloc()ed array of @count fences, each with a reference
 *	for the array; none may be an array or a chain link.
 * @context: the array's context, from ttm_fence_context_alloc(); an
 *	array is a fence like any other, on a timeline of the caller's.
 * @seqno: its seqno on @context.
 * @signal_on_any: signal when the first of @fences signals, not the last.
 * @ret_fence: the array, with a reference for the caller.
 *
 * On success the array owns @fences and its references: it puts them and
 * frees @fences when it is released. On failure they stay the caller's.
 * Nothing happens until someone waits, adds a callback or exports the
 * array: then it adds a callback to each fence (keeping itself alive until
 * each has run). The array signals with the error of the first fence seen
 * to fail: in time, through the callbacks; in array order when a peek
 * polls the fences.
 *
 * Context: Does not sleep. Any thread. Allocates.
 * Return: 0 and *@ret_fence; -EINVAL if @count is 0 or a fence is a
 * container; -ENOMEM.
 */
int ttm_fence_array_create(unsigned int count, struct ttm_fence **fences,
			   uint64_t context, uint64_t seqno,
			   bool signal_on_any, struct ttm_fence **ret_fence);

/**
 * ttm_fence_is_array() - whether @fence is a fence array.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: true if @fence came from ttm_fence_array_create().
 */
bool ttm_fence_is_array(const struct ttm_fence *fence);

/**
 * ttm_fence_array_count() - the number of fences in an array.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: the count given to ttm_fence_array_create(); 0 if @fence is not
 * an array.
 */
unsigned int ttm_fence_array_count(const struct ttm_fence *fence);

/**
 * ttm_fence_array_fence() - one fence of an array.
 * @fence: the array.
 * @index: which one, from 0.
 *
 * Context: Does not sleep.
 * Return: the fence, without a new reference (the array holds one while
 * the caller holds the array); NULL if @fence is not an array or @index
 * is out of range.
 */
struct ttm_fence *ttm_fence_array_fence(const struct ttm_fence *fence,
					unsigned int index);

struct ttm_fence_chain;

/**
 * ttm_fence_chain_alloc() - memory for one chain link.
 * @ret_chain: the link, to pass to ttm_fence_chain_init() or
 *	ttm_fence_chain_free().
 *
 * Separate from ttm_fence_chain_init() as in the kernel: a timeline
 * allocates before it takes the locks under which adding the point must
 * not fail.
 *
 * Context: Does not sleep. Allocates.
 * Return: 0 and *@ret_chain, or -ENOMEM.
 */
int ttm_fence_chain_alloc(struct ttm_fence_chain **ret_chain);

/**
 * ttm_fence_chain_free() - free a link that was never initialised.
 * @chain: from ttm_fence_chain_alloc(), or NULL.
 *
 * An initialised link is a fence: drop it with ttm_fence_put().
 *
 * Context: Does not sleep.
 */
void ttm_fence_chain_free(struct ttm_fence_chain *chain);

/**
 * ttm_fence_chain_init() - make @chain the point @seqno after @prev (the
 * kernel's dma_fence_chain_init()).
 * @chain: from ttm_fence_chain_alloc().
 * @prev: the link before, or any fence to wait for first, or NULL; its
 *	reference passes to the link.
 * @fence: the fence of this point; its reference passes to the link. A
 *	plain fence or an array, not a chain link.
 * @seqno: the point.
 *
 * If @prev is a link and @seqno is later than its seqno, the link joins
 * @prev's timeline (its context). Otherwise it starts a new context, and
 * its seqno is the later of @seqno and @prev's, so that it is never
 * before the point it waits for. The link signals once @fence and every
 * earlier link's fence have signalled, with @fence's error if it failed
 * (the kernel's link signals without one).
 *
 * Context: Does not sleep. Any thread. Cannot fail.
 * Return: the link as a fence, holding the caller's reference.
 */
struct ttm_fence *ttm_fence_chain_init(struct ttm_fence_chain *chain,
				       struct ttm_fence *prev,
				       struct ttm_fence *fence,
				       uint64_t seqno);

/**
 * ttm_fence_is_chain() - whether @fence is a chain link.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: true if @fence came from ttm_fence_chain_init().
 */
bool ttm_fence_is_chain(const struct ttm_fence *fence);

/**
 * ttm_fence_is_container() - whether @fence is an array or a chain link.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: true for an array or a chain link.
 */
bool ttm_fence_is_container(const struct ttm_fence *fence);

/**
 * ttm_fence_chain_contained() - the fence of a link's own point.
 * @fence: a fence.
 *
 * Context: Does not sleep.
 * Return: the @fence given to ttm_fence_chain_init() if @fence is a link
 * (without a new reference: the link holds one), else @fence itself.
 */
struct ttm_fence *ttm_fence_chain_contained(const struct ttm_fence *fence);

/**
 * ttm_fence_chain_walk() - step from a link to the one before it (the
 * kernel's dma_fence_chain_walk()).
 * @fence: a link; the caller's reference passes to the call.
 *
 * Drops from the chain every earlier link whose own fence has signalled
 * (and a plain @prev that has), so that walks and waits get shorter as the
 * timeline advances: the link before is swapped without a lock, with a
 * compare-and-swap, and other walkers read it inside a read-side section
 * (ttm_fence_read_lock()), which keeps a dropped link in memory for them.
 *
 * Context: Does not sleep. May signal fences whose signaled op says so,
 * and put links (see ttm_fence_put()).
 * Return: the link (or plain fence) before @fence that has not signalled,
 * with a reference; NULL at the end of the chain, or if @fence is not a
 * link.
 */
struct ttm_fence *ttm_fence_chain_walk(struct ttm_fence *fence);

/**
 * ttm_fence_chain_for_each() - walk a chain from @head back (the kernel's
 * dma_fence_chain_for_each()).
 * @iter: a struct ttm_fence *, each link in turn, with a reference that the
 *	next step drops; put it when leaving the loop early.
 * @head: the link to start from; the caller keeps its reference.
 */
#define ttm_fence_chain_for_each(iter, head)                            \
	for ((iter) = ttm_fence_get(head); (iter);                      \
	     (iter) = ttm_fence_chain_walk(iter))

/**
 * ttm_fence_chain_find_seqno() - the link that signals point @seqno (the
 * kernel's dma_fence_chain_find_seqno()).
 * @pfence: in: a link, with a reference that passes to the call; out: the
 *	link of @seqno or, if there is none (a gap), the first later one,
 *	with a reference, or NULL if every point up to @seqno has signalled.
 * @seqno: the point; 0 changes nothing.
 *
 * Context: Does not sleep. As ttm_fence_chain_walk().
 * Return: 0; -EINVAL if *@pfence is not a link or @seqno is after its
 * point (a future point: *@pfence is left as it was).
 */
int ttm_fence_chain_find_seqno(struct ttm_fence **pfence, uint64_t seqno);

/**
 * struct ttm_fence_unwrap - a cursor over the fences inside containers
 * (the kernel's struct dma_fence_unwrap).
 *
 * On the caller's stack. The fields are private.
 */
struct ttm_fence_unwrap {
	/* private: */
	struct ttm_fence *chain;        /* the link walked, a reference */
	struct ttm_fence *array;        /* what it contains */
	unsigned int index;             /* in @array */
};

/**
 * ttm_fence_unwrap_first() - the first plain fence inside @head (the
 * kernel's dma_fence_unwrap_first()).
 * @head: a fence: a chain link, an array, or a plain fence (then the only
 *	one handed out); the caller keeps its reference.
 * @cursor: the cursor.
 *
 * Walks the links of a chain back, as ttm_fence_chain_walk() (dropping
 * signalled ones), and the fences of each link's array. The fences handed
 * out carry no reference of their own: the cursor holds the link they are
 * in until the next step. Call ttm_fence_unwrap_end() when leaving the
 * walk early.
 *
 * Context: Does not sleep. As ttm_fence_chain_walk().
 * Return: the first fence; NULL if there is none.
 */
struct ttm_fence *ttm_fence_unwrap_first(struct ttm_fence *head,
					 struct ttm_fence_unwrap *cursor);

/**
 * ttm_fence_unwrap_next() - the next plain fence (the kernel's
 * dma_fence_unwrap_next()).
 * @cursor: the cursor, after ttm_fence_unwrap_first().
 *
 * Context: Does not sleep. As ttm_fence_chain_walk().
 * Return: the next fence; NULL at the end, when the cursor holds nothing
 * any more.
 */
struct ttm_fence *ttm_fence_unwrap_next(struct ttm_fence_unwrap *cursor);

/**
 * ttm_fence_unwrap_end() - drop what the cursor holds.
 * @cursor: the cursor.
 *
 * Needed only after leaving a walk before its end; harmless after it.
 *
 * Context: Does not sleep. May put a link (see ttm_fence_put()).
 */
void ttm_fence_unwrap_end(struct ttm_fence_unwrap *cursor);

/**
 * ttm_fence_unwrap_for_each() - every plain fence inside @head (the
 * kernel's dma_fence_unwrap_for_each()).
 * @fence: a struct ttm_fence *, each fence in turn, without a reference.
 * @cursor: a struct ttm_fence_unwrap *.
 * @head: the container, or a plain fence.
 */
#define ttm_fence_unwrap_for_each(fence, cursor, head)                  \
	for ((fence) = ttm_fence_unwrap_first(head, cursor); (fence);   \
	     (fence) = ttm_fence_unwrap_next(cursor))

/**
 * ttm_fence_unwrap_merge() - one fence that signals once all of @fences
 * have (the kernel's dma_fence_unwrap_merge()).
 * @count: the number of @fences.
 * @fences: the fences, none NULL, any of them containers; the caller
 *	keeps its references.
 * @ret_fence: the merged fence, with a reference for the caller.
 *
 * Flattens the containers, leaves out the fences that signalled without
 * an error (the stub among them), keeps one fence per context, the later
 * one (ttm_fence_is_later()), and sorts them by context. If none is left,
 * the merge is the stub (ttm_fence_get_stub()); if one, that fence itself;
 * else a new array of them on a context of its own. Unlike the kernel, a
 * fence that signalled with an error is kept, so the merge fails as well:
 * the kernel's merge forgets it.
 *
 * Context: Does not sleep. As ttm_fence_chain_walk(). Allocates.
 * Return: 0 and *@ret_fence, or -ENOMEM.
 */
int ttm_fence_unwrap_merge(unsigned int count, struct ttm_fence *const *fences,
			   struct ttm_fence **ret_fence);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_FENCE_CONTAINER_H */
