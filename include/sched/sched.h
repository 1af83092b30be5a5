/* SPDX-License-Identifier: MIT */
/*
 * Private to the library: what the scheduler's core (sched/sched.c) offers
 * its backends (sched/sched_gpu.c, sched/sched_cb.c) and the layers above (bo/, execbuf/).
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

/*
 * Let submitters of @sched run ready jobs themselves and free finished
 * jobs in batches (docs/sched-design.md, "Submitter-run jobs"): for a
 * backend whose run_job may run in any thread that pushes, concurrently
 * with fence callbacks. A virtual clock's scheduler ignores it (its steps
 * stay where the clock runs). Set once, like sched_set_backend().
 */
void sched_set_direct(struct ttm_sched *sched);

/*
 * @sched's backend runs its jobs in the order run_job got them, each
 * after the previous one has finished (one engine's FIFO): an ordering
 * dependency (TTM_SCHED_DEP_ORDER) on a job of @sched then only waits
 * for that job's scheduled fence (docs/sched-design.md, "Same-ring
 * dependencies"). Set once, like sched_set_backend().
 */
void sched_set_in_order(struct ttm_sched *sched);

/*
 * @sched is one of a group of rings (@group, not NULL, compared only)
 * whose backend can make a job wait on its ring for another ring's
 * finished fence (the fake GPU's engines wait for their jobs'
 * dependencies): sched_group_scheduled_of() then lets the backend split
 * an ordering dependency on another ring of the group in two
 * (docs/sched-design.md, "Cross-ring dependencies"). Set once, like
 * sched_set_backend().
 */
void sched_set_ring_group(struct ttm_sched *sched, const void *group);
/*
 * If @fence is the finished fence, not yet signalled, of a job of another
 * ring of @sched's group, a new reference to that job's scheduled fence;
 * else NULL. The caller holds a reference to @fence.
 */
struct ttm_fence *sched_group_scheduled_of(struct ttm_sched *sched,
					   struct ttm_fence *fence);

/*
 * A job's start (sched.c's job_start_locked()) for its hand-over to the
 * ring: @prev, the entity's previous last scheduled fence (a reference,
 * put there), and @now_ns, when the job started if the start read the
 * clock (CLOCK_MONOTONIC, for its scheduled fence), else 0.
 */
struct sched_start {
	struct ttm_fence *prev;
	uint64_t now_ns;
};

/*
 * ttm_sched_job_arm() and ttm_sched_entity_push_job() for a direct
 * scheduler, in one hold of the scheduler's lock: @job is armed under it
 * (so arms and pushes of every entity of the scheduler are in one order
 * without a lock of the caller's), and *@ret_finished, if not NULL, gets
 * a reference to its finished fence before anyone else may see the job.
 * If @job may start now, it is started (on the pending list, the ring
 * held for it) instead of queued, *@ret_start is for
 * sched_job_run_direct(), and the return is true; the caller must then
 * call sched_job_run_direct() without holding anything a fence callback
 * may take. Else it is queued (false): for the runner that holds the
 * ring, or, if *@ret_kick is set, for the caller's sched_run_ready().
 * @job must not be armed yet.
 */
bool sched_entity_arm_push_job_direct(struct ttm_sched_job *job,
				      struct ttm_fence **ret_finished,
				      struct sched_start *ret_start,
				      bool *ret_kick);
/*
 * Run @sched's ready jobs in the calling thread, as its thread would; the
 * caller of a push that set *@ret_kick (false, queued) must call it once
 * it holds nothing a fence callback or run_job may take.
 */
void sched_run_ready(struct ttm_sched *sched);
/* Signal @job's scheduled fence, run_job it, and let the ring go. */
void sched_job_run_direct(struct ttm_sched_job *job,
			  const struct sched_start *start);

/* The scheduler @entity feeds, and its backend ops. */
struct ttm_sched *sched_entity_sched(struct ttm_sched_entity *entity);
const struct ttm_sched_backend_ops *sched_ops(const struct ttm_sched *sched);

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
