// SPDX-License-Identifier: MIT
/*
 * Fence chains (ttmsim/fence_container.h): timeline points, each a link
 * holding its point's fence and a reference to the link before.
 *
 * Garbage collection. A walk from a link replaces its @prev by @prev's own
 * predecessor when @prev's fence has signalled, with a compare-and-swap:
 * no lock, so any number of walkers (waiters, find_seqno, the callbacks
 * re-arming) may collect at once. A walker reads @prev without owning the
 * reference that @prev holds, so it takes its own with ttm_fence_tryget()
 * inside a read-side section (ttm_fence_read_lock()) and checks that
 * @prev did not change meanwhile: a link swapped out and put by another
 * walker stays in memory until the section ends (links are driver fences
 * of ours, released after a grace period), and a plain fence of the pool
 * stays a fence (type-stable), so the tryget is safe either way and the
 * re-check catches a fence that went away or came back as another. This
 * takes the place of the kernel's RCU and dma_fence_get_rcu_safe().
 *
 * Signalling. A link's enable_signaling arms one callback, on the first
 * unsignalled fence found walking back from it; the callback re-arms on
 * the next one, and signals the link once there is none. So out-of-order
 * signals cost nothing until the fence armed on signals, and each re-arm
 * walks a chain that the walks keep short.
 *
 * Release. Putting a link puts its predecessor; a long chain whose links
 * only the chain holds would recurse once per link. The release unhooks
 * such links one by one instead (their only reference is ours, so no
 * walker can reach them: a walker holds a reference on the link it reads
 * @prev of).
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "gpu_sim/fence_container.h"
#include "util/compiler.h"

struct ttm_fence_chain {
	struct ttm_fence base;
	struct ttm_fence *prev;         /* atomic; owns a reference */
	uint64_t prev_seqno;            /* @prev's, if on our timeline */
	struct ttm_fence *fence;        /* our point's; owns a reference */
	struct ttm_fence_cb cb;         /* the one armed callback */
};

static const struct ttm_fence_ops chain_ops;

static struct ttm_fence_chain *to_chain(const struct ttm_fence *fence)
{
	if (!fence || fence->ops != &chain_ops)
		return NULL;
	return container_of((struct ttm_fence *)fence, struct ttm_fence_chain,
			    base);
}

/* A reference to @c's @prev as it is now, or NULL. */
static struct ttm_fence *chain_get_prev(struct ttm_fence_chain *c)
{
	struct ttm_fence *prev;

	ttm_fence_read_lock();
	for (;;) {
		prev = __atomic_load_n(&c->prev, __ATOMIC_ACQUIRE);
		if (!prev)
			break;
		if (ttm_fence_tryget(prev)) {
			if (__atomic_load_n(&c->prev, __ATOMIC_ACQUIRE) == prev)
				break;
			ttm_fence_put(prev);
		}
		/* Swapped out meanwhile: @c->prev holds another now. */
	}
	ttm_fence_read_unlock();
	return prev;
}

TTM_EXPORT struct ttm_fence *ttm_fence_chain_walk(struct ttm_fence *fence)
{
	struct ttm_fence_chain *c = to_chain(fence), *pc;
	struct ttm_fence *prev, *repl, *expected;

	if (!c) {
		ttm_fence_put(fence);
		return NULL;
	}
	while ((prev = chain_get_prev(c))) {
		pc = to_chain(prev);
		if (!ttm_fence_is_signaled(pc ? pc->fence : prev))
			break;
		/* Its point has passed: skip it. */
		repl = pc ? chain_get_prev(pc) : NULL;
		expected = prev;
		if (__atomic_compare_exchange_n(&c->prev, &expected, repl,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			ttm_fence_put(prev);    /* the one @c->prev held */
		else
			ttm_fence_put(repl);    /* another walker was first */
		ttm_fence_put(prev);
	}
	ttm_fence_put(fence);
	return prev;
}

TTM_EXPORT int ttm_fence_chain_find_seqno(struct ttm_fence **pfence,
					  uint64_t seqno)
{
	struct ttm_fence_chain *head = to_chain(*pfence), *c;
	struct ttm_fence *it;

	if (!seqno)
		return 0;
	if (!head || head->base.seqno < seqno)
		return -EINVAL;
	ttm_fence_chain_for_each(it, &head->base) {
		c = to_chain(it);
		/* The link of @seqno, or the first after a gap. */
		if (!c || it->context != head->base.context ||
		    c->prev_seqno < seqno)
			break;
	}
	*pfence = it;
	ttm_fence_put(&head->base);
	return 0;
}

/* A link's own error: its fence's. */
static int chain_error(struct ttm_fence_chain *c)
{
	int status = ttm_fence_get_status(c->fence);

	return status < 0 ? status : 0;
}

static void chain_cb(struct ttm_fence *f, struct ttm_fence_cb *cb);

/*
 * Arm @head's callback on the first unsignalled fence from @head back,
 * taking a reference to @head for it. False if every fence has signalled.
 */
static bool chain_arm(struct ttm_fence_chain *head)
{
	struct ttm_fence_chain *c;
	struct ttm_fence *it, *f;

	ttm_fence_get(&head->base);
	ttm_fence_chain_for_each(it, &head->base) {
		c = to_chain(it);
		f = ttm_fence_get(c ? c->fence : it);
		if (!ttm_fence_add_callback(f, &head->cb, chain_cb)) {
			/* @f's reference goes with the callback. */
			ttm_fence_put(it);
			return true;
		}
		ttm_fence_put(f);
	}
	ttm_fence_put(&head->base);     /* not the last: the caller's */
	return false;
}

static void chain_cb(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct ttm_fence_chain *head =
		container_of(cb, struct ttm_fence_chain, cb);

	ttm_fence_put(f);
	/* Re-arming takes a reference of its own; then ours goes. */
	if (!chain_arm(head))
		ttm_fence_signal(&head->base, chain_error(head));
	ttm_fence_put(&head->base);
}

static bool chain_enable_signaling(struct ttm_fence *fence)
{
	struct ttm_fence_chain *head = to_chain(fence);

	if (chain_arm(head))
		return true;
	/* The core signals it: with our error. */
	if (chain_error(head))
		ttm_fence_set_error(fence, chain_error(head));
	return false;
}

static bool chain_signaled(struct ttm_fence *fence)
{
	struct ttm_fence_chain *c;
	struct ttm_fence *it;

	ttm_fence_chain_for_each(it, fence) {
		c = to_chain(it);
		if (!ttm_fence_is_signaled(c ? c->fence : it)) {
			ttm_fence_put(it);
			return false;
		}
	}
	c = to_chain(fence);
	if (chain_error(c))
		ttm_fence_set_error(fence, chain_error(c));
	return true;
}

/* The point is reached when every earlier pending one is. */
static void chain_set_deadline(struct ttm_fence *fence, uint64_t deadline_ns)
{
	struct ttm_fence *it;

	ttm_fence_chain_for_each(it, fence)
		ttm_fence_set_deadline(ttm_fence_chain_contained(it),
				       deadline_ns);
}

static void chain_release(struct ttm_fence *fence)
{
	struct ttm_fence_chain *c = to_chain(fence), *pc;
	struct ttm_fence *prev;

	/* Nobody else can see @c now: plain reads of @prev would do. */
	while ((prev = __atomic_load_n(&c->prev, __ATOMIC_ACQUIRE))) {
		pc = to_chain(prev);
		if (!pc || __atomic_load_n(&prev->refcount,
					   __ATOMIC_ACQUIRE) != 1)
			break;
		/* Ours alone: take its predecessor, then let it go bare. */
		__atomic_store_n(&c->prev,
				 __atomic_load_n(&pc->prev, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&pc->prev, NULL, __ATOMIC_RELEASE);
		ttm_fence_put(prev);
	}
	ttm_fence_put(c->prev);
	ttm_fence_put(c->fence);
	free(c);
}

static const char *chain_driver_name(struct ttm_fence *fence)
{
	(void)fence;
	return "ttm_fence_chain";
}

static const char *chain_timeline_name(struct ttm_fence *fence)
{
	(void)fence;
	return "unbound";
}

static const struct ttm_fence_ops chain_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = chain_driver_name,
	.get_timeline_name = chain_timeline_name,
	.enable_signaling = chain_enable_signaling,
	.signaled = chain_signaled,
	.release = chain_release,
	.set_deadline = chain_set_deadline,
};

TTM_EXPORT int ttm_fence_chain_alloc(struct ttm_fence_chain **ret_chain)
{
	struct ttm_fence_chain *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret_chain = c;
	return 0;
}

TTM_EXPORT void ttm_fence_chain_free(struct ttm_fence_chain *chain)
{
	free(chain);
}

TTM_EXPORT struct ttm_fence *
ttm_fence_chain_init(struct ttm_fence_chain *chain, struct ttm_fence *prev,
		     struct ttm_fence *fence, uint64_t seqno)
{
	struct ttm_fence_chain *pc = to_chain(prev);
	uint64_t context;

	chain->prev = prev;
	chain->fence = fence;
	chain->prev_seqno = 0;
	if (pc && seqno > prev->seqno) {
		/* The next point of @prev's timeline. */
		context = prev->context;
		chain->prev_seqno = prev->seqno;
	} else {
		/* Not after it: a timeline of its own, never before it. */
		context = ttm_fence_context_alloc(1);
		if (pc && prev->seqno > seqno)
			seqno = prev->seqno;
	}
	ttm_fence_init(&chain->base, &chain_ops, context, seqno);
	return &chain->base;
}

TTM_EXPORT bool ttm_fence_is_chain(const struct ttm_fence *fence)
{
	return to_chain(fence) != NULL;
}

TTM_EXPORT struct ttm_fence *
ttm_fence_chain_contained(const struct ttm_fence *fence)
{
	struct ttm_fence_chain *c = to_chain(fence);

	return c ? c->fence : (struct ttm_fence *)fence;
}

uint64_t fence_chain_prev_seqno(const struct ttm_fence *fence)
{
	struct ttm_fence_chain *c = to_chain(fence);

	return c ? c->prev_seqno : 0;
}
