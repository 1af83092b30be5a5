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

#endif /* TTMSIM_SCHED_FENCE_H */
