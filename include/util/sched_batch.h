/* SPDX-License-Identifier: MIT */
/*
 * The scheduling policy of the library's worker threads (the GPU
 * engines', the schedulers'): SCHED_BATCH, so that a wake-up from a
 * submitter or a fence callback does not preempt the waker for the
 * worker, and the worker finds a batch when its turn comes (an idle CPU
 * still runs it at once). Only over the default policy: a thread that
 * inherited SCHED_FIFO, SCHED_RR or SCHED_IDLE from its creator keeps
 * it, as the program chose it. TTMSIM_SCHED_BATCH=0 (or off) keeps the
 * inherited policy always. Unprivileged; if refused, the default policy
 * only costs more switches.
 */
#ifndef TTMSIM_UTIL_SCHED_BATCH_H
#define TTMSIM_UTIL_SCHED_BATCH_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static inline void ttmsim_thread_batch_policy(void)
{
	const char *env = getenv("TTMSIM_SCHED_BATCH");
	struct sched_param param;
	int policy;

	if (env && (!strcmp(env, "0") || !strcmp(env, "off")))
		return;
	if (pthread_getschedparam(pthread_self(), &policy, &param) ||
	    policy != SCHED_OTHER)
		return;
	param.sched_priority = 0;
	(void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
}

#endif
