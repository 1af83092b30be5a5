/* SPDX-License-Identifier: MIT */
/*
 * Private to the library: what the scheduler's core (sched/sched.c) offers
 * its backends (sched/sched_gpu.c) and the layers above (bo/, execbuf/).
 * Not installed.
 */
#ifndef TTMSIM_SCHED_SCHED_H
#define TTMSIM_SCHED_SCHED_H

#include "ttmsim/sched.h"

/*
 * A backend's state for @sched: @release(@data) runs in
 * ttm_sched_destroy(), once the thread is gone and every job freed. Set
 * once, right after ttm_sched_create(), before any entity exists.
 */
void sched_set_backend(struct ttm_sched *sched, void *data,
		       void (*release)(void *data));
/* What sched_set_backend() stored; NULL if nothing. */
void *sched_backend(struct ttm_sched *sched);

/* The scheduler @entity feeds, and its backend ops. */
struct ttm_sched *sched_entity_sched(struct ttm_sched_entity *entity);
const struct ttm_sched_backend_ops *sched_ops(struct ttm_sched *sched);

/*
 * Move @entity to the run queue of @priority (the kernel's
 * drm_sched_entity_set_priority()): the jobs it has queued keep their
 * order and run at the new priority. -EINVAL for a bad priority. Takes
 * and releases the scheduler's lock; may wait for the scheduler's thread
 * to finish looking at the entity's head job.
 */
int sched_entity_set_priority(struct ttm_sched_entity *entity,
			      enum ttm_sched_priority priority);

#endif /* TTMSIM_SCHED_SCHED_H */
