// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the live-count fault (TTMSIM_TEST_FAULT=live-count, see
 * run_fault.c): a test that the mid-run check of --check-every can fail.
 *
 * The check runs on the watchdog's tick, and a short run may be over
 * before the first one; so with the fault each submitting thread waits,
 * after its first job, until a check has run: every workload with a job
 * is then checked while it runs, with no timing luck. The check is then
 * given counters that do not add up (one completed job more than there
 * is, as a retirement counted twice would give) and must say so. The
 * library's own counters are left as they are: the verifier at the end
 * still finds them right, so that only the mid-run check can fail the
 * run.
 */
#include <pthread.h>
#include <time.h>

#include "run.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cond = PTHREAD_COND_INITIALIZER;
static bool live_checked;     /* under live_lock: a check has run */

void run_fault_live_wait(struct run_thread *th)
{
	struct run *run = th->run;
	struct timespec ts;

	if (run->fault != RUN_FAULT_LIVE_COUNT || !run->cfg->check_every_s)
		return;
	pthread_mutex_lock(&live_lock);
	/* Timed: a stop (a signal) ends the wait without a check. */
	while (!live_checked &&
	       !__atomic_load_n(&run->stop, __ATOMIC_SEQ_CST)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&live_cond, &live_lock, &ts);
	}
	pthread_mutex_unlock(&live_lock);
}

void run_fault_live_check(struct run *run, struct ttm_execbuf_stats *st)
{
	if (run->fault != RUN_FAULT_LIVE_COUNT)
		return;
	st->completed++;
	pthread_mutex_lock(&live_lock);
	live_checked = true;
	pthread_cond_broadcast(&live_cond);
	pthread_mutex_unlock(&live_lock);
}
