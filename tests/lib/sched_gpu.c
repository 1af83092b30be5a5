// SPDX-License-Identifier: MIT
/* The fake-GPU backend suites' helpers (sched_helpers.h). */
#include "sched_helpers.h"

#include "ttmsim/gpu.h"

void gpu_ring_new(struct ttm_gpu *gpu, unsigned int engine,
		  struct ttm_sched **s, struct ttm_sched_entity **e)
{
	assert_int_equal(ttm_sched_gpu_create(gpu, engine, NULL, s), 0);
	assert_int_equal(ttm_sched_entity_create(*s, TTM_SCHED_PRIORITY_NORMAL,
						 e), 0);
}

void gpu_ring_free(struct ttm_sched *s, struct ttm_sched_entity *e)
{
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
}

struct ttm_fence *gpu_ring_submit(struct ttm_sched_entity *e,
				  const struct ttm_gpu_job *job)
{
	struct ttm_fence *fence = NULL;

	assert_int_equal(ttm_sched_gpu_submit(e, job, &fence), 0);
	assert_non_null(fence);
	return fence;
}

int fence_status(struct ttm_fence *fence)
{
	int st = ttm_fence_get_status(fence);

	assert_int_not_equal(st, 0);    /* signalled */
	return st < 0 ? st : 0;
}

uint64_t gpu_submitted_now(struct ttm_gpu *gpu)
{
	struct ttm_gpu_stats st;

	ttm_gpu_get_stats(gpu, &st);
	return st.submitted;
}
