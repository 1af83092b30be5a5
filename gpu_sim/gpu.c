// SPDX-License-Identifier: MIT
/*
 * The fake GPU's front: creation and destruction, submission, the clock
 * and the counters. The engines are run by gpu_engine.c (real time) or
 * gpu_virtual.c (the virtual clock); design in docs/gpu-design.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/compiler.h"
#include "util/time.h"
#include "gpu_sim/fence.h"
#include "gpu_sim/gpu.h"

#define GPU_MAX_ENGINES 64
#define GPU_DEFAULT_HANG_MS 100

static int engine_init(struct ttm_gpu *gpu, unsigned int i)
{
	struct gpu_engine *e = &gpu->engines[i];
	pthread_condattr_t attr;
	int ret;

	memset(e, 0, sizeof(*e));
	e->gpu = gpu;
	e->index = i;
	e->context = ttm_fence_context_alloc(1);
	e->oldest = UINT64_MAX;
	list_init(&e->jobs);
	pthread_mutex_init(&e->lock, NULL);
	/* Hang deadlines are on CLOCK_MONOTONIC, like the durations. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (gpu_is_virtual(gpu))
		return 0;
	ret = pthread_create(&e->thread, NULL, gpu_engine_main, e);
	if (ret)
		return -EAGAIN;
	e->thread_started = true;
	return 0;
}

static void engine_fini(struct gpu_engine *e)
{
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
}

/* Stop and free the first @n engines of @gpu, and @gpu. */
static void gpu_teardown(struct ttm_gpu *gpu, unsigned int n)
{
	struct gpu_engine *e;
	unsigned int i;

	/* Under each lock, so a submitter either got in or sees it. */
	for (i = 0; i < n; i++) {
		e = &gpu->engines[i];
		pthread_mutex_lock(&e->lock);
		e->stopping = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
	/*
	 * A scheduler still following this clock would step on freed memory
	 * at its next ttm_sched_destroy(): say so (a library never aborts).
	 */
	if (!list_empty(&gpu->clients))
		fprintf(stderr, "ttmsim: ttm_gpu_destroy(): a scheduler still "
			"follows this GPU's clock; destroy it first\n");
	/* Each worker cancels what is left on its engine, then exits. */
	if (gpu_is_virtual(gpu))
		gpu_virtual_finish(gpu);
	for (i = 0; i < n; i++)
		if (gpu->engines[i].thread_started)
			pthread_join(gpu->engines[i].thread, NULL);
	for (i = 0; i < n; i++)
		engine_fini(&gpu->engines[i]);
	pthread_mutex_destroy(&gpu->advance_lock);
	free(gpu->engines);
	free(gpu);
}

TTM_EXPORT int ttm_gpu_create(unsigned int n_engines,
			      const struct ttm_gpu_options *options,
			      struct ttm_gpu **ret_gpu)
{
	static const struct ttm_gpu_options defaults;
	struct ttm_gpu *gpu;
	unsigned int i;
	int ret;

	if (!ret_gpu || n_engines < 1 || n_engines > GPU_MAX_ENGINES)
		return -EINVAL;
	if (!options)
		options = &defaults;
	if (options->flags & ~TTM_GPU_DETERMINISTIC)
		return -EINVAL;
	gpu = aligned_alloc(64, sizeof(*gpu));
	if (!gpu)
		return -ENOMEM;
	memset(gpu, 0, sizeof(*gpu));
	/* One cache line each: engines are run by different threads. */
	gpu->engines = aligned_alloc(64, n_engines * sizeof(*gpu->engines));
	if (!gpu->engines) {
		free(gpu);
		return -ENOMEM;
	}
	gpu->n_engines = n_engines;
	gpu->flags = options->flags;
	gpu->hang_timeout_us = 1000ull * (options->hang_timeout_ms ?
					  options->hang_timeout_ms :
					  GPU_DEFAULT_HANG_MS);
	gpu->on_retire = options->on_retire;
	gpu->retire_data = options->retire_data;
	gpu->next_id = 0;
	gpu->now_us = 0;
	pthread_mutex_init(&gpu->advance_lock, NULL);
	list_init(&gpu->clients);
	gpu->epoch_ns = mono_ns();
	for (i = 0; i < n_engines; i++) {
		ret = engine_init(gpu, i);
		if (ret) {
			gpu_teardown(gpu, i + 1);
			return ret;
		}
	}
	*ret_gpu = gpu;
	return 0;
}

TTM_EXPORT void ttm_gpu_destroy(struct ttm_gpu *gpu)
{
	if (gpu)
		gpu_teardown(gpu, gpu->n_engines);
}

static int check_deps(const struct ttm_gpu_job *job)
{
	unsigned int i;

	if (job->n_deps && !job->deps)
		return -EINVAL;
	for (i = 0; i < job->n_deps; i++)
		if (!job->deps[i].fence)
			return -EINVAL;
	return 0;
}

/*
 * Append @job to @e, giving it its id, seqno and out-fence. The fence is
 * set up under the lock so that seqnos follow the FIFO's order; its memory
 * came with the job, so nothing here allocates.
 */
static int engine_queue(struct gpu_engine *e, struct gpu_job *job,
			struct ttm_fence **ret_fence, uint64_t *ret_inline_ns)
{
	struct ttm_gpu *gpu = e->gpu;
	bool idle, wake = false;
	uint64_t now_ns = 0;
	int ret = 0;

	pthread_mutex_lock(&e->lock);
	if (e->stopping) {
		ret = -ESHUTDOWN;
		goto out;
	}
	fence_lib_setup(job->fence, e->context, ++e->seqno);
	job->queued = true;
	/*
	 * An idle engine announces the id it is taking before it takes it,
	 * so that a concurrent retirement never misses it (see
	 * retired_out_of_order()).
	 */
	idle = list_empty(&e->jobs);
	if (idle)
		__atomic_store_n(&e->oldest, GPU_ID_ASSIGNING,
				 __ATOMIC_SEQ_CST);
	job->info.id = __atomic_add_fetch(&gpu->next_id, 1, __ATOMIC_SEQ_CST);
	/*
	 * ttm_gpu_now_us(), keeping the real-time read: a job run by the
	 * caller below starts now (it is marked started under this lock),
	 * and takes this time rather than a second read.
	 */
	if (gpu_is_virtual(gpu)) {
		job->info.submit_us = ttm_gpu_now_us(gpu);
	} else {
		now_ns = mono_ns();
		job->info.submit_us = (now_ns - gpu->epoch_ns) / 1000;
	}
	list_add_tail(&job->node, &e->jobs);
	if (idle)
		__atomic_store_n(&e->oldest, job->info.id, __ATOMIC_SEQ_CST);
	/* Before the unlock: from then on the job may retire and go. */
	if (ret_fence)
		*ret_fence = ttm_fence_get(job->fence);
	__atomic_fetch_add(&e->submitted, 1, __ATOMIC_RELAXED);
	/*
	 * A ready job of no duration on an idle engine (nothing queued,
	 * nothing retiring) runs in the caller: waking the worker for it
	 * costs more than the job (docs/gpu-design.md, "Submitter-run
	 * jobs"). Real time only; the virtual clock runs jobs at its events.
	 */
	if (idle && !gpu_is_virtual(gpu) && !e->worker_busy &&
	    !e->inline_busy && !job->duration_us && !job->hang &&
	    !__atomic_load_n(&job->pending, __ATOMIC_SEQ_CST)) {
		job->started = true;
		e->inline_busy = true;
		*ret_inline_ns = now_ns;
		goto out;
	}
	/* A busy engine finds the job by itself: no wake-up. */
	wake = e->sleepers;
out:
	pthread_mutex_unlock(&e->lock);
	/*
	 * After the unlock: a worker woken under it would preempt us only to
	 * block on the lock we hold, two more switches per job. The engine
	 * outlives its submitters (ttm_gpu_destroy() comes after them).
	 */
	if (wake)
		pthread_cond_broadcast(&e->cond);
	return ret;
}

int gpu_job_prepare(struct ttm_gpu *gpu, const struct ttm_gpu_job *desc,
		    struct gpu_job **ret_job)
{
	int ret;

	if (!gpu || !desc || desc->engine >= gpu->n_engines)
		return -EINVAL;
	ret = gpu_ops_validate(desc);
	if (!ret)
		ret = check_deps(desc);
	if (ret)
		return ret;
	return gpu_job_alloc(&gpu->engines[desc->engine], desc, ret_job);
}

int gpu_job_submit(struct gpu_job *job, struct ttm_fence **ret_fence)
{
	uint64_t inline_ns = 0;
	int ret;

	gpu_job_add_callbacks(job);
	ret = engine_queue(job->engine, job, ret_fence, &inline_ns);
	if (ret)
		gpu_job_discard(job);
	else if (inline_ns)
		gpu_engine_run_inline(job->engine, job, inline_ns);
	return ret;
}

TTM_EXPORT int ttm_gpu_submit(struct ttm_gpu *gpu,
			      const struct ttm_gpu_job *job,
			      struct ttm_fence **ret_fence)
{
	struct gpu_job *j;
	int ret;

	ret = gpu_job_prepare(gpu, job, &j);
	if (ret == 0)
		ret = gpu_job_submit(j, ret_fence);
	return ret;
}

TTM_EXPORT uint64_t ttm_gpu_now_us(struct ttm_gpu *gpu)
{
	if (gpu_is_virtual(gpu))
		return __atomic_load_n(&gpu->now_us, __ATOMIC_SEQ_CST);
	return (mono_ns() - gpu->epoch_ns) / 1000;
}

TTM_EXPORT void ttm_gpu_get_stats(struct ttm_gpu *gpu,
				  struct ttm_gpu_stats *stats)
{
	unsigned int i;

	memset(stats, 0, sizeof(*stats));
	for (i = 0; i < gpu->n_engines; i++) {
		struct gpu_engine *e = &gpu->engines[i];

		stats->submitted += __atomic_load_n(&e->submitted,
						    __ATOMIC_SEQ_CST);
		stats->run += __atomic_load_n(&e->run, __ATOMIC_SEQ_CST);
		stats->failed += __atomic_load_n(&e->failed, __ATOMIC_SEQ_CST);
		stats->resets += __atomic_load_n(&e->resets, __ATOMIC_SEQ_CST);
		stats->out_of_order_retirements +=
			__atomic_load_n(&e->ooo, __ATOMIC_SEQ_CST);
	}
}

TTM_EXPORT unsigned int ttm_gpu_engines(const struct ttm_gpu *gpu)
{
	return gpu->n_engines;
}
