// SPDX-License-Identifier: MIT
/*
 * The virtual clock (TTM_GPU_DETERMINISTIC): no worker threads. Time moves
 * only in ttm_gpu_advance(), whose caller runs the engines inline, one
 * event at a time in virtual-time order:
 *
 *  - every engine head whose dependencies have signalled starts at the
 *    current time (it ends at start + duration, or start + hang timeout
 *    for a hanging job, which the watchdog then fails);
 *  - the earliest end not after the target (ties: the smaller job id)
 *    moves the clock there and retires its job: operation, hook, fence,
 *    callbacks, all in the caller's thread. That may make other heads
 *    ready (or submit new jobs from the hook): they start at this time.
 *
 * When no end is left before the target, the clock jumps to it. The same
 * calls in the same order give the same trace, whatever the scheduler.
 */
#include <errno.h>

#include "util/compiler.h"
#include "gpu_sim/gpu.h"

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Start @job at @now: fix when it ends. */
static void job_start(struct ttm_gpu *gpu, struct gpu_job *job, uint64_t now)
{
	job->started = true;
	if (__atomic_load_n(&job->dep_error, __ATOMIC_SEQ_CST)) {
		job->end_us = now; /* fails at once, never runs */
		return;
	}
	job->info.start_us = now;
	job->end_us = add_sat(now, job->hang ? gpu->hang_timeout_us :
					       job->duration_us);
}

/* The head of @e, started at @now if it was ready, or NULL. */
static struct gpu_job *engine_current(struct ttm_gpu *gpu,
				      struct gpu_engine *e, uint64_t now)
{
	struct gpu_job *job;
	bool ready;

	pthread_mutex_lock(&e->lock);
	job = gpu_engine_head(e);
	ready = job && (job->started ||
			!__atomic_load_n(&job->pending, __ATOMIC_SEQ_CST));
	pthread_mutex_unlock(&e->lock);
	if (!ready)
		return NULL;
	if (!job->started)
		job_start(gpu, job, now);
	return job;
}

/* The status of a started @job at its end; applies its operation. */
static int job_finish(struct gpu_job *job, bool destroying)
{
	int err = __atomic_load_n(&job->dep_error, __ATOMIC_SEQ_CST);

	if (err)
		return err;
	if (job->hang) {
		if (!destroying)
			__atomic_fetch_add(&job->engine->resets, 1,
					   __ATOMIC_RELAXED);
		return -ETIMEDOUT;
	}
	gpu_ops_apply(job);
	return 0;
}

static void job_end(struct gpu_job *job, uint64_t now, bool destroying)
{
	struct gpu_engine *e = job->engine;
	int status = job_finish(job, destroying);

	pthread_mutex_lock(&e->lock);
	gpu_engine_pop(e);
	pthread_mutex_unlock(&e->lock);
	gpu_job_retire(job, status, now);
}

TTM_EXPORT int ttm_gpu_advance(struct ttm_gpu *gpu, uint64_t us)
{
	struct gpu_job *job, *first;
	uint64_t now, target;
	unsigned int i;

	if (!gpu || !gpu_is_virtual(gpu))
		return -EINVAL;
	pthread_mutex_lock(&gpu->advance_lock);
	now = __atomic_load_n(&gpu->now_us, __ATOMIC_SEQ_CST);
	target = add_sat(now, us);
	for (;;) {
		first = NULL;
		for (i = 0; i < gpu->n_engines; i++) {
			job = engine_current(gpu, &gpu->engines[i], now);
			if (!job || job->end_us > target)
				continue;
			if (!first || job->end_us < first->end_us ||
			    (job->end_us == first->end_us &&
			     job->info.id < first->info.id))
				first = job;
		}
		if (!first)
			break;
		now = first->end_us;
		__atomic_store_n(&gpu->now_us, now, __ATOMIC_SEQ_CST);
		job_end(first, now, false);
	}
	__atomic_store_n(&gpu->now_us, target, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&gpu->advance_lock);
	return 0;
}

/*
 * ttm_gpu_destroy(): a started job finishes (at its end time, the clock
 * going no further back than now), a hanging one fails at once; the rest
 * is cancelled.
 */
void gpu_virtual_finish(struct ttm_gpu *gpu)
{
	struct gpu_engine *e;
	struct gpu_job *job;
	uint64_t now;
	unsigned int i;

	pthread_mutex_lock(&gpu->advance_lock);
	now = __atomic_load_n(&gpu->now_us, __ATOMIC_SEQ_CST);
	for (i = 0; i < gpu->n_engines; i++) {
		e = &gpu->engines[i];
		pthread_mutex_lock(&e->lock);
		job = gpu_engine_head(e);
		if (job && !job->started)
			job = NULL;
		pthread_mutex_unlock(&e->lock);
		if (job)
			job_end(job, job->hang ? now : job->end_us, true);
		gpu_engine_cancel_all(e);
	}
	pthread_mutex_unlock(&gpu->advance_lock);
}
