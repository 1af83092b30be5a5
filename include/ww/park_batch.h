/* SPDX-License-Identifier: MIT */
/*
 * A ww_mutex waiter sleeps as SCHED_BATCH, so that its wake-up does not
 * preempt a running thread (ww/park_batch.c says why).
 */
#ifndef TTMSIM_WW_PARK_BATCH_H
#define TTMSIM_WW_PARK_BATCH_H

#include <stdbool.h>

#include "ww/thread.h"

/*
 * Before @self (the calling thread) parks in a ww lock wait of a
 * transaction: switch it from SCHED_OTHER to SCHED_BATCH, unless it was
 * already, has another policy, or the system refused once.
 */
void ww_park_batch_begin(struct ww_thread *self);

/* Back to SCHED_OTHER; @self is the calling thread, with t->batch set. */
void ww_park_batch_end(struct ww_thread *self);

/*
 * @task, a transaction's thread, holds nothing any more: back to
 * SCHED_OTHER if it parked as SCHED_BATCH. Only the thread itself may
 * switch its policy; @task is NULL for a ticket never initialised (the
 * checker reports it, or nothing does with the checker compiled out).
 */
static inline void ww_park_batch_released(struct ww_thread *task)
{
	if (task && __builtin_expect(task->batch, 0) &&
	    task == ww_thread_current)
		ww_park_batch_end(task);
}

/*
 * @self (the calling thread) woke ww lock waiters in a transaction that
 * now holds nothing: let them have its CPU (sched_yield()), unless
 * parking as SCHED_BATCH is off. Clears self->woke.
 */
void ww_park_batch_yield(struct ww_thread *self);

#endif /* TTMSIM_WW_PARK_BATCH_H */
