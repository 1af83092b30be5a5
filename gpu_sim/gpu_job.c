// SPDX-License-Identifier: MIT
/*
 * A job's life on its engine, common to both clocks: allocation with its
 * own copy of the ranges, references to its dependencies and its
 * out-fence's memory (so that queueing it allocates nothing), the
 * dependency callbacks, leaving the engine's FIFO, retirement (counters,
 * the hook, the out-fence) and cancellation.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "util/compiler.h"
#include "gpu_sim/fence.h"
#include "gpu_sim/gpu.h"
#include "gpu_sim/obj_cache.h"

/*
 * The deps and ranges a job from the per-thread cache has room for, in
 * bytes after the struct: 8 dependencies (gpu_dep, 48 bytes) and 8
 * ranges, or any mix that fits (an execbuf job of 8 buffers on a 4-engine
 * GPU needs at most 4 deps and 8 ranges). Bigger jobs use malloc().
 */
#define GPU_JOB_CACHED_TAIL (8 * sizeof(struct gpu_dep) + \
			     8 * sizeof(struct ttm_gpu_range))
#define GPU_JOB_CACHED_SIZE (sizeof(struct gpu_job) + GPU_JOB_CACHED_TAIL)

/*
 * The job's memory, nothing else. To the cache where free() was: by the
 * time a job is freed, its dependency callbacks are done with it
 * (pending is 0, or they were removed) and it has left its engine's
 * FIFO, so nothing refers to it any more.
 */
static void job_free_memory(struct gpu_job *job)
{
	if (job->cached)
		obj_cache_free(OBJ_CACHE_GPU_JOB, job, GPU_JOB_CACHED_SIZE);
	else
		free(job);
}

int gpu_job_alloc(struct gpu_engine *e, const struct ttm_gpu_job *desc,
		  struct gpu_job **ret_job)
{
	size_t tail = desc->n_deps * sizeof(struct gpu_dep) +
		      desc->n_ranges * sizeof(struct ttm_gpu_range);
	bool cached = tail <= GPU_JOB_CACHED_TAIL;
	struct gpu_job *job;
	unsigned int i;

	/*
	 * One per job: from this thread's cache (gpu_job_free() fills it),
	 * not calloc(). Zeroed as calloc() did, but for the tail, which is
	 * written below in full.
	 */
	job = cached ? obj_cache_alloc(OBJ_CACHE_GPU_JOB, GPU_JOB_CACHED_SIZE) :
		       malloc(sizeof(*job) + tail);
	if (!job)
		return -ENOMEM;
	memset(job, 0, sizeof(*job));
	job->cached = cached;
	/* Set up only when queued: the seqno follows the FIFO's order. */
	job->fence = fence_pool_alloc();
	if (!job->fence) {
		job_free_memory(job);
		return -ENOMEM;
	}
	job->engine = e;
	job->info.engine = e->index;
	job->info.tag = desc->tag;
	job->duration_us = desc->duration_us;
	job->hang = desc->hang;
	job->op = desc->op;
	job->add_value = desc->add_value;
	job->n_deps = desc->n_deps;
	job->n_ranges = desc->n_ranges;
	/* The ranges follow the deps, whose size keeps them aligned. */
	job->ranges = (struct ttm_gpu_range *)&job->deps[desc->n_deps];
	if (desc->n_ranges)
		memcpy(job->ranges, desc->ranges,
		       desc->n_ranges * sizeof(job->ranges[0]));
	for (i = 0; i < desc->n_deps; i++)
		job->deps[i] = (struct gpu_dep){
			.fence = ttm_fence_get(desc->deps[i].fence),
			.job = job,
			.propagate_error = desc->deps[i].propagate_error,
		};
	job->pending = desc->n_deps;
	job->dep_error = 0;
	*ret_job = job;
	return 0;
}

void gpu_job_free(struct gpu_job *job)
{
	unsigned int i;

	for (i = 0; i < job->n_deps; i++)
		ttm_fence_put(job->deps[i].fence);
	if (job->queued)
		ttm_fence_put(job->fence);
	else
		fence_pool_free(job->fence);  /* never set up nor seen */
	job_free_memory(job);
}

/* Wake whoever runs @e if it sleeps. Called with e->lock held. */
static void engine_kick_locked(struct gpu_engine *e)
{
	if (e->sleepers)
		pthread_cond_broadcast(&e->cond);
}

void gpu_engine_kick(struct gpu_engine *e)
{
	pthread_mutex_lock(&e->lock);
	engine_kick_locked(e);
	pthread_mutex_unlock(&e->lock);
}

static void dep_record_error(struct gpu_dep *dep, int status)
{
	int zero = 0;

	/* The first failed error-propagating dependency decides. */
	if (dep->propagate_error && status < 0)
		__atomic_compare_exchange_n(&dep->job->dep_error, &zero,
					    status, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
}

/*
 * A dependency signalled. Everything under the engine's lock, the
 * decrement last: whoever then reads pending == 0 under the lock knows
 * this callback is done with the job, which may be freed right after.
 */
static void dep_signalled(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct gpu_dep *dep = container_of(cb, struct gpu_dep, cb);
	struct gpu_job *job = dep->job;
	struct gpu_engine *e = job->engine;

	pthread_mutex_lock(&e->lock);
	dep_record_error(dep, ttm_fence_get_status(fence));
	if (__atomic_fetch_sub(&job->pending, 1, __ATOMIC_SEQ_CST) == 1)
		engine_kick_locked(e);
	pthread_mutex_unlock(&e->lock);
}

/*
 * Before the job is queued (nobody else sees it yet), so a dependency
 * already signalled is counted here without the lock.
 */
void gpu_job_add_callbacks(struct gpu_job *job)
{
	struct gpu_dep *dep;
	unsigned int i;

	for (i = 0; i < job->n_deps; i++) {
		dep = &job->deps[i];
		if (!ttm_fence_add_callback(dep->fence, &dep->cb,
					    dep_signalled)) {
			dep->cb_added = true;
			continue;
		}
		dep_record_error(dep, ttm_fence_get_status(dep->fence));
		__atomic_fetch_sub(&job->pending, 1, __ATOMIC_SEQ_CST);
	}
}

/*
 * Take the callbacks of a job that will not run off its dependencies, and
 * wait for any that a concurrent signal is running. Without e->lock:
 * ttm_fence_remove_callback() waits for a running dep_signalled(), which
 * takes e->lock.
 */
static void job_drop_callbacks(struct gpu_job *job)
{
	struct gpu_engine *e = job->engine;
	unsigned int i;

	for (i = 0; i < job->n_deps; i++)
		if (job->deps[i].cb_added &&
		    ttm_fence_remove_callback(job->deps[i].fence,
					      &job->deps[i].cb))
			__atomic_fetch_sub(&job->pending, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&e->lock);
	while (__atomic_load_n(&job->pending, __ATOMIC_SEQ_CST)) {
		e->sleepers++;
		pthread_cond_wait(&e->cond, &e->lock);
		e->sleepers--;
	}
	pthread_mutex_unlock(&e->lock);
}

/* Unlink the head of @e, the oldest unretired job. e->lock held. */
struct gpu_job *gpu_engine_pop(struct gpu_engine *e)
{
	struct gpu_job *job = gpu_engine_head(e), *next;

	list_del(&job->node);
	next = gpu_engine_head(e);
	__atomic_store_n(&e->oldest, next ? next->info.id : UINT64_MAX,
			 __ATOMIC_SEQ_CST);
	return job;
}

/*
 * Did a job submitted before @job (a smaller id) not retire yet? Within an
 * engine the order holds, so look at the other engines' oldest ids. An id
 * being taken on an idle engine may be smaller than ours: its submitter
 * is between two stores under its engine's lock, so wait for the second.
 * Exact: the announcement comes before the id (both sequentially
 * consistent), and our id was taken before we retire.
 */
static bool retired_out_of_order(const struct gpu_job *job)
{
	const struct gpu_engine *self = job->engine;
	const struct ttm_gpu *gpu = self->gpu;
	uint64_t oldest;
	unsigned int i;

	for (i = 0; i < gpu->n_engines; i++) {
		if (i == self->index)
			continue;
		while ((oldest = __atomic_load_n(&gpu->engines[i].oldest,
						 __ATOMIC_SEQ_CST)) ==
		       GPU_ID_ASSIGNING)
			sched_yield();
		if (oldest < job->info.id)
			return true;
	}
	return false;
}

/*
 * @job has left its engine's FIFO (gpu_engine_pop()); no lock held:
 * signalling runs callbacks, which may lock any engine, this one too.
 */
void gpu_job_retire(struct gpu_job *job, int status, uint64_t end_us)
{
	struct gpu_engine *e = job->engine;
	struct ttm_gpu *gpu = e->gpu;
	unsigned int cookie;

	job->info.status = status;
	job->info.end_us = end_us;
	if (status)
		__atomic_fetch_add(&e->failed, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&e->run, 1, __ATOMIC_RELAXED);
	if (retired_out_of_order(job))
		__atomic_fetch_add(&e->ooo, 1, __ATOMIC_RELAXED);
	/* The hook holds up the fence: it is part of the signalling. */
	cookie = ttm_fence_begin_signalling();
	if (gpu->on_retire)
		gpu->on_retire(&job->info, gpu->retire_data);
	ttm_fence_signal(job->fence, status);
	ttm_fence_end_signalling(cookie);
	gpu_job_free(job);
}

/* A job that never reached the FIFO (the GPU is being destroyed). */
void gpu_job_discard(struct gpu_job *job)
{
	job_drop_callbacks(job);
	gpu_job_free(job);
}

/*
 * ttm_gpu_destroy(): retire every job left on @e, none of them started,
 * with -ECANCELED. Only the caller pops from @e now.
 */
void gpu_engine_cancel_all(struct gpu_engine *e)
{
	uint64_t now = ttm_gpu_now_us(e->gpu);
	struct gpu_job *job;

	for (;;) {
		pthread_mutex_lock(&e->lock);
		job = gpu_engine_head(e);
		pthread_mutex_unlock(&e->lock);
		if (!job)
			break;
		job_drop_callbacks(job);
		pthread_mutex_lock(&e->lock);
		gpu_engine_pop(e);
		pthread_mutex_unlock(&e->lock);
		job->info.start_us = 0;
		gpu_job_retire(job, -ECANCELED, now);
	}
}
