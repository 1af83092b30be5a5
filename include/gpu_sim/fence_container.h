/* SPDX-License-Identifier: MIT */
/*
 * Fence containers, private side (gpu_sim/fence_array.c, fence_chain.c,
 * fence_unwrap.c): what the reservation layer shares with the merge.
 * Not installed.
 */
#ifndef TTMSIM_GPU_SIM_FENCE_CONTAINER_H
#define TTMSIM_GPU_SIM_FENCE_CONTAINER_H

#include "ttmsim/fence_container.h"

/*
 * The plain fences inside @fences, as ttm_fence_unwrap_merge() keeps them:
 * those signalled without an error left out, one per context (the later),
 * sorted by context. *@ret_fences is a malloc()ed array of new references
 * (NULL if *@ret_count is 0). Return: 0, or -ENOMEM.
 */
int fence_unwrap_collect(unsigned int count, struct ttm_fence *const *fences,
			 struct ttm_fence ***ret_fences,
			 unsigned int *ret_count);

/*
 * The point before chain link @fence's when it was added (its @prev's
 * seqno if @prev was a link of the same timeline), 0 if there was none or
 * @fence is no link; kept as the link was made, whatever the walks have
 * dropped since (the kernel's dma_fence_chain::prev_seqno, which the
 * syncobj query reads).
 */
uint64_t fence_chain_prev_seqno(const struct ttm_fence *fence);

#endif /* TTMSIM_GPU_SIM_FENCE_CONTAINER_H */
