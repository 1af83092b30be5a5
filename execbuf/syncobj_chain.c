// SPDX-License-Identifier: MIT
/*
 * STAND-IN for timeline syncobjs, to be replaced by the fence containers'
 * ttm_fence_chain once they are merged (see include/execbuf/syncobj_chain.h
 * for the mapping). Deliberately minimal:
 *
 * - a node is a driver fence (ttm_fence_init()) holding its point's fence
 *   and the previous head; it signals once both have, with its own
 *   fence's error. Its callbacks are armed at once rather than on
 *   enable_signaling, and each holds a reference to the node, so a node
 *   whose fence never signals is never freed (a real chain arms lazily);
 * - signalled nodes are not pruned: a timeline keeps every node while its
 *   head lives (a real chain drops its signalled prefix as it is walked),
 *   and the last put of a head releases the chain one node at a time,
 *   recursively through the release ops.
 *
 * The links are immutable once a node is published, so walks need no lock:
 * a caller holding the head holds every node behind it.
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/syncobj_chain.h"
#include "util/compiler.h"

struct sc_node {
	struct ttm_fence base;
	struct ttm_fence *prev;   /* a reference, or NULL */
	struct ttm_fence *fence;  /* a reference */
	uint64_t prev_seqno;      /* the point before this one, 0: none */
	uint32_t pending;         /* atomic: callbacks to come, + 1 to arm */
	struct ttm_fence_cb cb_fence, cb_prev;
};

static const char *sc_driver_name(struct ttm_fence *f)
{
	(void)f;
	return "ttmsim";
}

static const char *sc_timeline_name(struct ttm_fence *f)
{
	(void)f;
	return "syncobj-timeline";
}

static void sc_release(struct ttm_fence *f)
{
	struct sc_node *n = container_of(f, struct sc_node, base);

	ttm_fence_put(n->prev);
	ttm_fence_put(n->fence);
	free(n);
}

static const struct ttm_fence_ops sc_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = sc_driver_name,
	.get_timeline_name = sc_timeline_name,
	.release = sc_release,
};

static struct sc_node *sc_node_of(struct ttm_fence *f)
{
	return f && f->ops == &sc_ops ? container_of(f, struct sc_node, base)
				      : NULL;
}

struct sc_node *sc_node_alloc(void)
{
	return calloc(1, sizeof(struct sc_node));
}

void sc_node_free(struct sc_node *n)
{
	free(n);
}

struct ttm_fence *sc_node_link(struct sc_node *n, struct ttm_fence *prev,
			       struct ttm_fence *fence, uint64_t point)
{
	uint64_t context, seqno = point;

	if (sc_node_of(prev) && ttm_fence_seqno(prev) < point) {
		context = ttm_fence_context(prev);
		n->prev_seqno = ttm_fence_seqno(prev);
	} else {
		context = ttm_fence_context_alloc(1);
		/* Out of order: the timeline's seqno never goes back. */
		if (sc_node_of(prev) && ttm_fence_seqno(prev) > seqno)
			seqno = ttm_fence_seqno(prev);
	}
	n->prev = prev;
	n->fence = ttm_fence_get(fence);
	ttm_fence_init(&n->base, &sc_ops, context, seqno);
	return &n->base;
}

static void sc_node_put_pending(struct sc_node *n)
{
	int status;

	if (__atomic_sub_fetch(&n->pending, 1, __ATOMIC_ACQ_REL))
		return;
	status = ttm_fence_get_status(n->fence);
	ttm_fence_signal(&n->base, status < 0 ? status : 0);
}

static void sc_fence_done(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct sc_node *n = container_of(cb, struct sc_node, cb_fence);

	(void)f;
	sc_node_put_pending(n);
	ttm_fence_put(&n->base);
}

static void sc_prev_done(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct sc_node *n = container_of(cb, struct sc_node, cb_prev);

	(void)f;
	sc_node_put_pending(n);
	ttm_fence_put(&n->base);
}

/* Count a callback before adding it: it may run before the add returns. */
static void sc_arm_one(struct sc_node *n, struct ttm_fence *f,
		       struct ttm_fence_cb *cb, ttm_fence_func_t *func)
{
	__atomic_add_fetch(&n->pending, 1, __ATOMIC_RELAXED);
	ttm_fence_get(&n->base);
	if (ttm_fence_add_callback(f, cb, func)) {
		/* Signalled already: nothing to wait for. */
		__atomic_sub_fetch(&n->pending, 1, __ATOMIC_RELAXED);
		ttm_fence_put(&n->base);
	}
}

void sc_node_arm(struct sc_node *n)
{
	__atomic_store_n(&n->pending, 1, __ATOMIC_RELAXED);
	sc_arm_one(n, n->fence, &n->cb_fence, sc_fence_done);
	if (n->prev)
		sc_arm_one(n, n->prev, &n->cb_prev, sc_prev_done);
	sc_node_put_pending(n);
}

int sc_find_point(struct ttm_fence *head, uint64_t point,
		  struct ttm_fence **ret_fence)
{
	struct ttm_fence *cur = head;
	struct sc_node *n;

	if (!head)
		return -EINVAL;
	if (point == 0) {
		*ret_fence = ttm_fence_get(head);
		return 0;
	}
	if (!sc_node_of(head) || ttm_fence_seqno(head) < point)
		return -EINVAL;
	/* Back to the node whose predecessor is below @point. */
	for (;;) {
		n = sc_node_of(cur);
		if (!n || ttm_fence_context(cur) != ttm_fence_context(head) ||
		    n->prev_seqno < point)
			break;
		cur = n->prev;
	}
	*ret_fence = ttm_fence_get(cur);
	return 0;
}

uint64_t sc_query(struct ttm_fence *head, bool last_submitted)
{
	struct ttm_fence *cur = head, *oldest = head;

	if (!sc_node_of(head))
		return 0;
	if (last_submitted)
		return ttm_fence_seqno(head);
	/* A node signals after every node before it: the newest one wins. */
	while (sc_node_of(cur) &&
	       ttm_fence_context(cur) == ttm_fence_context(head)) {
		if (ttm_fence_is_signaled(cur))
			return ttm_fence_seqno(cur);
		oldest = cur;
		cur = sc_node_of(cur)->prev;
	}
	return sc_node_of(oldest)->prev_seqno;
}
