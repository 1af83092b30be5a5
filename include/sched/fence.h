/* SPDX-License-Identifier: MIT */
/*
 * The scheduled and finished fences of a job (sched/sched_fence.c).
 * Private to the library.
 *
 * Both live in one allocation with the ring's name, which they share by
 * reference: a job costs one allocation and no string copy, and a fence
 * can outlive its scheduler (it sits in reservations) and still say its
 * timeline's name.
 */
#ifndef TTMSIM_SCHED_FENCE_H
#define TTMSIM_SCHED_FENCE_H

#include <stdint.h>

#include "ttmsim/fence.h"

/* A ring's name, counted: the scheduler and every live fence hold one. */
struct sched_name;

struct sched_name *sched_name_new(const char *name);
void sched_name_put(struct sched_name *name);
const char *sched_name_str(const struct sched_name *name);
/*
 * Rings whose names share a @group (not NULL; the fake-GPU backend uses
 * its GPU) run their jobs on hardware that can itself wait for another
 * ring's finished fence (sched_fence_scheduled_in_group()). Set once,
 * before the ring's first job.
 */
void sched_name_set_group(struct sched_name *name, const void *group);

/*
 * A job's two fences, not yet initialised: *@scheduled and *@finished.
 * Return: 0 or -ENOMEM.
 */
int sched_fences_alloc(struct sched_name *name,
		       struct ttm_fence **scheduled,
		       struct ttm_fence **finished);
/*
 * Initialise both (scheduled on @context, finished on @context + 1, both
 * at @seqno), each holding the reference its caller gets.
 */
void sched_fences_arm(struct ttm_fence *scheduled, uint64_t context,
		      uint64_t seqno);
/* Free the fences of a job never armed. */
void sched_fences_free_unarmed(struct ttm_fence *scheduled);
/*
 * If @fence is the finished fence of a job of the ring named @name (the
 * scheduler's own counted name, so one scheduler), a new reference to that
 * job's scheduled fence; else NULL. Also NULL if the scheduled fence's
 * last reference has gone (its job freed): the finished one holds the
 * memory, not the scheduled fence's life, which must not come back.
 * The caller holds a reference to @fence.
 */
struct ttm_fence *sched_fence_scheduled_of(struct ttm_fence *fence,
					   const struct sched_name *name);

/*
 * If @fence is the finished fence, not yet signalled, of a job of another
 * ring of @self's group, a new reference to that job's scheduled fence;
 * else NULL (also if the scheduled fence's last reference has gone, as
 * sched_fence_scheduled_of()). The caller holds a reference to @fence.
 */
struct ttm_fence *sched_fence_scheduled_in_group(struct ttm_fence *fence,
						 const struct sched_name *self);

#endif /* TTMSIM_SCHED_FENCE_H */
