/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN, to be replaced by the fence containers' ttm_fence_chain once
 * they are merged: a minimal chain node for timeline syncobjs
 * (execbuf/syncobj_chain.c). Only the syncobj code uses it; the calls map
 * one to one onto the chain's (allocate, init after the previous head,
 * find a point's fence, walk for the last signalled point).
 */
#ifndef TTMSIM_EXECBUF_SYNCOBJ_CHAIN_H
#define TTMSIM_EXECBUF_SYNCOBJ_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"

struct sc_node;

/* A node for one point, not linked yet; NULL if out of memory. */
struct sc_node *sc_node_alloc(void);
/* Free a node that was never linked. */
void sc_node_free(struct sc_node *n);

/*
 * Link @n after @prev (a reference the node takes over; NULL or any
 * fence), for @fence (a new reference is taken) at @point, as the kernel's
 * dma_fence_chain_init(): a point above @prev's (a node) keeps its
 * context; any other starts a new context at max(point, prev's seqno).
 * Takes no lock and calls out to nothing: for under the syncobj's lock.
 * Return: the node's fence, holding the allocation's reference.
 */
struct ttm_fence *sc_node_link(struct sc_node *n, struct ttm_fence *prev,
			       struct ttm_fence *fence, uint64_t point);

/*
 * After the link, with no lock held: make the node signal once its fence
 * and its previous node have (with its fence's error, if any). Callbacks
 * may run (and signal it) in the calling thread.
 */
void sc_node_arm(struct sc_node *n);

/*
 * The fence that stands for @point in the timeline @head (a reference the
 * caller holds, or NULL), as the kernel's dma_fence_chain_find_seqno():
 * point 0 is @head itself; a point not submitted yet (no node of at least
 * that seqno), or any point of a fence that is no chain, is -EINVAL.
 * Return: 0 and a new reference in *@ret_fence.
 */
int sc_find_point(struct ttm_fence *head, uint64_t point,
		  struct ttm_fence **ret_fence);

/*
 * The last point of @head signalled in order (every point up to it has),
 * or with @last_submitted the newest point; 0 for a fence that is no
 * chain.
 */
uint64_t sc_query(struct ttm_fence *head, bool last_submitted);

#endif /* TTMSIM_EXECBUF_SYNCOBJ_CHAIN_H */
