/* SPDX-License-Identifier: MIT */
/* What the scheduler suites share, on top of helpers.h. Main thread only. */
#ifndef TTMSIM_TEST_SCHED_HELPERS_H
#define TTMSIM_TEST_SCHED_HELPERS_H

#include "helpers.h"

#include "ttmsim/sched.h"

/* A new entity of @sched at @prio; fails the test on error. */
struct ttm_sched_entity *sched_entity_new(struct ttm_sched *sched,
					  enum ttm_sched_priority prio);

/* Wait for @fence (forever), check its status, drop the reference. */
void fence_wait_status(struct ttm_fence *fence, int status);

#endif /* TTMSIM_TEST_SCHED_HELPERS_H */
