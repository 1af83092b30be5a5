// SPDX-License-Identifier: MIT
/* The scheduler suites' helpers (sched_helpers.h). */
#include "sched_helpers.h"

struct ttm_sched_entity *sched_entity_new(struct ttm_sched *sched,
					  enum ttm_sched_priority prio)
{
	struct ttm_sched_entity *e = NULL;

	assert_int_equal(ttm_sched_entity_create(sched, prio, &e), 0);
	return e;
}

void fence_wait_status(struct ttm_fence *fence, int status)
{
	assert_int_equal(ttm_fence_wait(fence, false, -1), 0);
	assert_int_equal(ttm_fence_get_status(fence), status);
	ttm_fence_put(fence);
}
