/* SPDX-License-Identifier: MIT */
/* What the scheduler suites share, on top of helpers.h. Main thread only. */
#ifndef TTMSIM_TEST_SCHED_HELPERS_H
#define TTMSIM_TEST_SCHED_HELPERS_H

#include "helpers.h"

#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"

/* A new entity of @sched at @prio; fails the test on error. */
struct ttm_sched_entity *sched_entity_new(struct ttm_sched *sched,
					  enum ttm_sched_priority prio);

/* Wait for @fence (forever), check its status, drop the reference. */
void fence_wait_status(struct ttm_fence *fence, int status);

/* The fake-GPU backend (sched_gpu.c). */

/* A scheduler on @engine of @gpu, with one entity of normal priority. */
void gpu_ring_new(struct ttm_gpu *gpu, unsigned int engine,
		  struct ttm_sched **s, struct ttm_sched_entity **e);
/* Destroy @e (no flush time), then @s. */
void gpu_ring_free(struct ttm_sched *s, struct ttm_sched_entity *e);
/* ttm_sched_gpu_submit() that must succeed; its finished fence. */
struct ttm_fence *gpu_ring_submit(struct ttm_sched_entity *e,
				  const struct ttm_gpu_job *job);
/* 0 if @fence signalled without an error, else its error (signalled). */
int fence_status(struct ttm_fence *fence);
/* The jobs @gpu's engines have accepted so far. */
uint64_t gpu_submitted_now(struct ttm_gpu *gpu);

#endif /* TTMSIM_TEST_SCHED_HELPERS_H */
