// SPDX-License-Identifier: MIT
/*
 * A ww_mutex waiter of a transaction parks as SCHED_BATCH, and is
 * SCHED_OTHER again once its transaction holds nothing (ww/ww_mutex.c,
 * ww/acquire.c, ww/lock_slow.c call ww_park_batch_end()).
 *
 * Why: the scheduler lets a thread woken from a sleep preempt the thread
 * running on its CPU (wake-up preemption), and in userspace the waker's
 * futex wake returns through a preemption point. An unlock that hands a
 * lock on, or a wound that wakes a sleeping victim, then often takes the
 * CPU from a thread that holds hundreds of ww locks (the waker itself in
 * its unlock loop, or another transaction), and everything queued behind
 * those locks waits a time slice, holding locks of its own: under
 * Wound-Wait every older transaction that touches one of them wounds it.
 * Kernel ww_mutex users do not see this: kernel code is not preempted at
 * a wake-up (only at its next preemption point). A SCHED_BATCH thread's
 * wake-up never preempts; it still runs at once on an idle CPU, and
 * otherwise when the running thread sleeps or its slice ends. Measured:
 * docs/benchmarks.md, "[perf] goals 1 and 2: wake-ups that preempt".
 *
 * Only a SCHED_OTHER thread is switched; other policies (real-time, idle,
 * batch already) are left alone. It stays SCHED_BATCH until its
 * transaction holds nothing, not just until it runs again: switching back
 * is a system call, whose return is a preemption point, and one taken
 * while holding locks brought back what this avoids (measured: more
 * involuntary context switches than no switching at all). The threads sharing the out-of-memory
 * fallback struct are not switched (one flag for several threads). If the
 * system refuses the change (a seccomp filter, say), it is not tried again.
 *
 * The other side: a waiter woken as SCHED_BATCH while both CPUs are busy
 * waits for a running thread to sleep or end its slice, milliseconds, and
 * meanwhile every later unlock of the lock it was woken for (stolen by a
 * running thread) wakes it again: a futex system call each, and under
 * Wound-Wait it holds its other locks all that time. So a thread whose
 * transaction's unlocks woke a waiter yields once that transaction holds
 * nothing (its last unlock, ww/ww_mutex.c): its own preemption then costs
 * nobody a wait, and a waiter woken on its CPU runs at once. Measured:
 * docs/benchmarks.md, "[perf] goal 2, second round".
 *
 * TTMSIM_SCHED_BATCH=0 (or off), the switch of the library's worker
 * threads (include/util/sched_batch.h), turns this off too; read once,
 * when the library loads.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ww/park_batch.h"
#include "ww/thread.h"

/* atomic: the system refused once, or TTMSIM_SCHED_BATCH said no */
static int park_batch_off;

__attribute__((constructor)) static void read_batch_env(void)
{
	const char *env = getenv("TTMSIM_SCHED_BATCH");

	if (env && (!strcmp(env, "0") || !strcmp(env, "off")))
		park_batch_off = 1;
}

void ww_park_batch_begin(struct ww_thread *self)
{
	struct sched_param p = { .sched_priority = 0 };

	if (self->batch || self->shared ||
	    __atomic_load_n(&park_batch_off, __ATOMIC_RELAXED))
		return;
	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	if (sched_setscheduler(0, SCHED_BATCH, &p) == 0)
		self->batch = true;
	else
		__atomic_store_n(&park_batch_off, 1, __ATOMIC_RELAXED);
}

void ww_park_batch_yield(struct ww_thread *self)
{
	self->woke = false;
	if (!__atomic_load_n(&park_batch_off, __ATOMIC_RELAXED))
		sched_yield();
}

void ww_park_batch_end(struct ww_thread *self)
{
	struct sched_param p = { .sched_priority = 0 };

	self->batch = false;
	sched_setscheduler(0, SCHED_OTHER, &p);
}
