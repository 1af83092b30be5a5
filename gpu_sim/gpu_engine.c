// SPDX-License-Identifier: MIT
/*
 * Real time: one worker thread per engine.
 *
 * The worker takes its engine's head once the head's dependencies have
 * signalled (their callbacks wake it: it never polls), sleeps the job's
 * duration on CLOCK_MONOTONIC, applies the operation and retires the job.
 * It is its own watchdog: a hanging job is waited for until the hang
 * timeout, then failed with -ETIMEDOUT, and the engine goes on.
 *
 * For throughput, a busy worker is never woken (submitters signal only a
 * sleeping one), and it goes from one job to the next ready one with a
 * single lock round trip: it unlinks the finished job and looks at the
 * next in the same critical section.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "gpu_sim/gpu.h"
#include "util/sched_batch.h"
#include "util/time.h"

/* Jobs this short (in us) are spun, not slept: see job_run(). */
#define ENGINE_SPIN_US 4

/* Sleep on e->cond, e->lock held, until @deadline_ns (0: none). */
static bool engine_wait(struct gpu_engine *e, uint64_t deadline_ns)
{
	struct timespec ts;
	int ret;

	e->sleepers++;
	if (!deadline_ns) {
		ret = pthread_cond_wait(&e->cond, &e->lock);
	} else {
		ts = mono_timespec(deadline_ns);
		ret = pthread_cond_timedwait(&e->cond, &e->lock, &ts);
	}
	e->sleepers--;
	return ret != ETIMEDOUT;
}

static uint64_t engine_now_us(const struct gpu_engine *e)
{
	return (mono_ns() - e->gpu->epoch_ns) / 1000;
}

/* A hanging job: the watchdog fails it, or ttm_gpu_destroy() at once. */
static int job_hang(struct gpu_engine *e, uint64_t start_ns)
{
	uint64_t deadline = start_ns + e->gpu->hang_timeout_us * 1000;
	bool stopping;

	pthread_mutex_lock(&e->lock);
	while (!e->stopping && engine_wait(e, deadline))
		;
	stopping = e->stopping;
	pthread_mutex_unlock(&e->lock);
	if (!stopping)
		__atomic_fetch_add(&e->resets, 1, __ATOMIC_RELAXED);
	return -ETIMEDOUT;
}

/*
 * Run @job, whose dependencies have all signalled, starting at @start_ns
 * (CLOCK_MONOTONIC; 0: now). Return its status and, in *@end_us, when it
 * ended: for a job that ran, start + duration, the time it slept until
 * (one clock read less per job).
 */
static int job_run(struct gpu_engine *e, struct gpu_job *job,
		   uint64_t start_ns, uint64_t *end_us)
{
	struct timespec ts;
	int err = __atomic_load_n(&job->dep_error, __ATOMIC_SEQ_CST);

	if (err) {
		*end_us = engine_now_us(e);
		return err; /* never runs: memory untouched */
	}
	if (!start_ns)
		start_ns = mono_ns();
	job->info.start_us = (start_ns - e->gpu->epoch_ns) / 1000;
	if (job->hang) {
		err = job_hang(e, start_ns);
		*end_us = engine_now_us(e);
		return err;
	}
	if (job->duration_us && job->duration_us <= ENGINE_SPIN_US) {
		/*
		 * A sleep this short would last the timer slack (50 us) and
		 * a wake-up more, many times the job: a move's copy (1 us
		 * per MiB) would cost the engine tens of its durations.
		 * Spinning costs the duration itself, and reads the vDSO
		 * clock only.
		 */
		uint64_t end_ns = start_ns + job->duration_us * 1000;

		while (mono_ns() < end_ns)
			;
	} else if (job->duration_us) {
		/* <= TTM_GPU_MAX_DURATION_US: no overflow but the sum's. */
		uint64_t end_ns = start_ns + job->duration_us * 1000;

		ts = mono_timespec(end_ns < start_ns ? UINT64_MAX : end_ns);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	gpu_ops_apply(job);
	*end_us = job->info.start_us + job->duration_us;
	return 0;
}

/* The head of @e if it may start now, else NULL. e->lock held. */
static struct gpu_job *engine_ready_head(struct gpu_engine *e)
{
	struct gpu_job *job = gpu_engine_head(e);

	if (!job || e->stopping || e->inline_busy ||
	    __atomic_load_n(&job->pending, __ATOMIC_SEQ_CST))
		return NULL;
	job->started = true;
	e->worker_busy = true;
	return job;
}

void gpu_engine_run_inline(struct gpu_engine *e, struct gpu_job *job,
			   uint64_t start_ns)
{
	uint64_t end_us;
	bool wake;
	int status;

	status = job_run(e, job, start_ns, &end_us);
	pthread_mutex_lock(&e->lock);
	gpu_engine_pop(e);
	pthread_mutex_unlock(&e->lock);
	/* The worker keeps off the engine until this one has signalled. */
	gpu_job_retire(job, status, end_us);
	pthread_mutex_lock(&e->lock);
	e->inline_busy = false;
	/* Jobs queued meanwhile are the worker's (woken after the unlock). */
	wake = gpu_engine_head(e) && e->sleepers;
	pthread_mutex_unlock(&e->lock);
	if (wake)
		pthread_cond_broadcast(&e->cond);
}

void *gpu_engine_main(void *arg)
{
	struct gpu_engine *e = arg;
	struct gpu_job *job, *next = NULL;
	uint64_t end_us;
	int status;

	/* A submitter's wake-up does not preempt it (util/sched_batch.h). */
	ttmsim_thread_batch_policy();
	for (;;) {
		if (!next) {
			pthread_mutex_lock(&e->lock);
			/* The last one retired: a submitter may run one. */
			e->worker_busy = false;
			while (!e->stopping && !(next = engine_ready_head(e)))
				engine_wait(e, 0);
			pthread_mutex_unlock(&e->lock);
			if (!next)
				break;
		}
		job = next;
		status = job_run(e, job, 0, &end_us);
		pthread_mutex_lock(&e->lock);
		gpu_engine_pop(e);
		next = engine_ready_head(e);
		pthread_mutex_unlock(&e->lock);
		gpu_job_retire(job, status, end_us);
	}
	/* ttm_gpu_destroy(): nothing left here has started. */
	gpu_engine_cancel_all(e);
	return NULL;
}
