// SPDX-License-Identifier: MIT
/*
 * The fake-GPU backend of the scheduler: one scheduler per engine (ring),
 * run_job = ttm_gpu_submit() on that engine of a job whose dependencies
 * the scheduler has already resolved, free_job frees the backend's copy of
 * the job. The GPU's job is allocated at ttm_sched_gpu_submit() and only
 * queued at run_job (gpu_job_prepare(), gpu_job_submit()), so that run_job
 * allocates nothing: a failure there, with no caller left to tell, would
 * drop an accepted job (its add or copy never done). Timeouts: the GPU's
 * own hang watchdog is the reset, so timedout_job only reports that the
 * job is still the GPU's business (docs/sched-design.md, "The fake-GPU
 * backend").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_sim/gpu.h"
#include "gpu_sim/obj_cache.h"
#include "sched/sched.h"
#include "util/compiler.h"

/* Jobs on an engine at once when the caller does not say. */
#define SCHED_GPU_CREDIT_LIMIT 64

/*
 * One per scheduler: what run_job needs. The arm + push of each job is
 * one step under the scheduler's lock (sched_entity_arm_push_job_direct()),
 * so ttm_sched_gpu_submit() may be called from any thread.
 */
struct sched_gpu {
	struct ttm_gpu *gpu;
	unsigned int engine;
};

struct sched_gpu_job {
	struct ttm_sched_job base;
	/* The GPU's job, without deps, till run_job hands it over. */
	struct gpu_job *hw;
};

static struct ttm_fence *sched_gpu_run_job(struct ttm_sched_job *job)
{
	struct sched_gpu_job *j = container_of(job, struct sched_gpu_job,
					       base);
	struct gpu_job *hw = j->hw;
	struct ttm_fence *fence;
	int ret;

	/*
	 * Run once: nothing resubmits this ring's jobs (the GPU's watchdog
	 * is the reset, see sched_gpu_timedout_job()).
	 */
	if (!hw)
		return ttm_sched_err_ptr(-EINVAL);
	j->hw = NULL;
	/* Only -ESHUTDOWN: the GPU is being destroyed. */
	ret = gpu_job_submit(hw, &fence);
	return ret ? ttm_sched_err_ptr(ret) : fence;
}

/*
 * The fake GPU never lets a job run forever: its watchdog fails a hanging
 * job with -ETIMEDOUT (and resets the engine) at its hang timeout after
 * the job started, which signals the hardware fence and so the finished
 * fence. The scheduler's clock starts at run_job, no later than the job's
 * start on the engine, so this fires first: the job is hanging and about
 * to be failed by the GPU, or still queued behind others on the engine, or
 * slow. In each case the GPU settles it; nothing to reset here.
 */
static enum ttm_sched_stat sched_gpu_timedout_job(struct ttm_sched_job *job)
{
	(void)job;
	return TTM_SCHED_STAT_NO_HANG;
}

static void sched_gpu_free_job(struct ttm_sched_job *job)
{
	struct sched_gpu_job *j = container_of(job, struct sched_gpu_job,
					       base);

	/* Never ran (a dependency failed, or the entity was killed). */
	if (j->hw)
		gpu_job_free(j->hw);
	ttm_sched_job_cleanup(job);
	/*
	 * free_job is the scheduler's last word on the job (it is off every
	 * list, its callbacks done): recycled as free() would.
	 */
	obj_cache_free(OBJ_CACHE_SCHED_JOB, j, sizeof(*j));
}

static const struct ttm_sched_backend_ops sched_gpu_ops = {
	.run_job = sched_gpu_run_job,
	.timedout_job = sched_gpu_timedout_job,
	.free_job = sched_gpu_free_job,
};

static void sched_gpu_release(void *data)
{
	struct sched_gpu *sg = data;

	free(sg);
}

TTM_EXPORT int ttm_sched_gpu_create(struct ttm_gpu *gpu, unsigned int engine,
				    const struct ttm_sched_options *options,
				    struct ttm_sched **ret_sched)
{
	struct ttm_sched_options o = { 0 };
	struct sched_gpu *sg;
	char name[32];
	int ret;

	if (!gpu || !ret_sched || engine >= ttm_gpu_engines(gpu))
		return -EINVAL;
	if (options) {
		if (options->ops || (options->gpu && options->gpu != gpu))
			return -EINVAL;
		o = *options;
	}
	if (!o.name) {
		snprintf(name, sizeof(name), "gpu.engine%u", engine);
		o.name = name;
	}
	if (!o.credit_limit)
		o.credit_limit = SCHED_GPU_CREDIT_LIMIT;
	/* The GPU's watchdog is the reset: consult the driver as often. */
	if (!o.timeout_ns)
		o.timeout_ns = gpu->hang_timeout_us * 1000;
	o.ops = &sched_gpu_ops;
	/* Follow the GPU's clock: virtual if it has one. */
	o.gpu = gpu_is_virtual(gpu) ? gpu : NULL;

	sg = calloc(1, sizeof(*sg));
	if (!sg)
		return -ENOMEM;
	sg->gpu = gpu;
	sg->engine = engine;
	ret = ttm_sched_create(&o, ret_sched);
	if (ret) {
		sched_gpu_release(sg);
		return ret;
	}
	sched_set_backend(*ret_sched, sg, sched_gpu_release);
	/* run_job only queues on the engine: any submitter may call it. */
	sched_set_direct(*ret_sched);
	/* One engine: its FIFO runs jobs one at a time, in queue order. */
	sched_set_in_order(*ret_sched);
	/* And it waits for its jobs' dependencies on the other engines. */
	sched_set_ring_group(*ret_sched, gpu);
	return 0;
}

/*
 * Ordering dependencies the engine waits for itself, at most, per job;
 * the scheduler waits for the others' finished fences as before.
 */
#define SCHED_GPU_ENGINE_DEPS 16

/*
 * Cross-ring dependencies (docs/sched-design.md): an ordering dependency
 * of @job on the finished fence of a job of another ring of this GPU is
 * split in two. The engine waits for the finished fence (@eng, the
 * pointers borrowed from @job, one per fence context, the latest), the
 * scheduler only for that job's scheduled fence (@split[i], a reference;
 * NULL for a dependency left whole), so the job reaches its engine as
 * soon as the one it waits for has reached its own, without a wake-up of
 * the scheduler's thread. No deadlock: a job is handed to its engine only
 * after every job it waits for, so every wait, on an engine's FIFO or on
 * a dependency, is for a job handed over earlier.
 * Return: the number of @eng.
 */
static unsigned int split_deps(struct ttm_sched *sched,
			       const struct ttm_gpu_job *job,
			       struct ttm_fence **split,
			       struct ttm_gpu_dep *eng)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < job->n_deps && i < SCHED_GPU_ENGINE_DEPS; i++) {
		struct ttm_fence *f = job->deps[i].fence;

		split[i] = job->deps[i].propagate_error ? NULL :
			   sched_group_scheduled_of(sched, f);
		if (!split[i])
			continue;
		for (k = 0; k < n; k++)
			if (ttm_fence_context(eng[k].fence) ==
			    ttm_fence_context(f))
				break;
		if (k == n)
			eng[n++] = (struct ttm_gpu_dep){ f, false };
		else if (ttm_fence_is_later(f, eng[k].fence))
			eng[k].fence = f;
	}
	return n;
}

/* Add @job's dependencies to @j, split as @split says; see split_deps(). */
static int add_deps(struct sched_gpu_job *j, const struct ttm_gpu_job *job,
		    struct ttm_fence **split)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < job->n_deps && !ret; i++) {
		const struct ttm_gpu_dep *d = &job->deps[i];
		struct ttm_fence *sf = NULL;

		if (i < SCHED_GPU_ENGINE_DEPS) {
			sf = split[i];
			split[i] = NULL;
		}
		if (!sf) {
			ret = ttm_sched_job_add_dependency_flags(
				&j->base, ttm_fence_get(d->fence),
				d->propagate_error ? 0 : TTM_SCHED_DEP_ORDER);
		} else if (ttm_fence_is_signaled(sf)) {
			/* Already on its engine: only ours waits. */
			ttm_fence_put(sf);
		} else {
			ret = ttm_sched_job_add_dependency_flags(
				&j->base, sf, TTM_SCHED_DEP_ORDER);
		}
	}
	return ret;
}

TTM_EXPORT int ttm_sched_gpu_submit(struct ttm_sched_entity *entity,
				    const struct ttm_gpu_job *job,
				    struct ttm_fence **ret_finished)
{
	struct ttm_fence *split[SCHED_GPU_ENGINE_DEPS];
	struct ttm_gpu_dep eng[SCHED_GPU_ENGINE_DEPS];
	struct ttm_sched *sched;
	struct sched_start start = { 0 };
	struct ttm_gpu_job hw;
	struct sched_gpu_job *j;
	bool direct, kick = false;
	struct sched_gpu *sg;
	unsigned int i;
	int ret;

	if (!entity || !job || (job->n_deps && !job->deps))
		return -EINVAL;
	sched = sched_entity_sched(entity);
	if (sched_ops(sched) != &sched_gpu_ops)
		return -EINVAL;
	sg = sched_backend(sched);
	for (i = 0; i < job->n_deps; i++)
		if (!job->deps[i].fence)
			return -EINVAL;
	/*
	 * A bad job fails here, as with ttm_gpu_submit(), not at run_job;
	 * so does an allocation. The scheduler has the deps, but for the
	 * other rings' finished fences the engine waits for.
	 */
	hw = *job;
	hw.engine = sg->engine;
	hw.deps = eng;
	hw.n_deps = split_deps(sched, job, split, eng);
	/* One per job: this thread's cache, not calloc() (init zeroes). */
	ret = -ENOMEM;
	j = obj_cache_alloc(OBJ_CACHE_SCHED_JOB, sizeof(*j));
	if (j)
		ret = gpu_job_prepare(sg->gpu, &hw, &j->hw);
	if (ret) {
		obj_cache_free(OBJ_CACHE_SCHED_JOB, j, sizeof(*j));
		goto put_split;
	}
	ret = ttm_sched_job_init(&j->base, entity, 1);
	if (ret) {
		gpu_job_free(j->hw);
		obj_cache_free(OBJ_CACHE_SCHED_JOB, j, sizeof(*j));
		goto put_split;
	}
	ret = add_deps(j, job, split);
	if (ret) {
		sched_gpu_free_job(&j->base);
		goto put_split;
	}
	/* Armed and pushed under the scheduler's lock, in one order. */
	direct = sched_entity_arm_push_job_direct(&j->base, ret_finished,
						  &start, &kick);
	/*
	 * A ready job on an idle ring goes to the engine from here: no
	 * hand-off to the scheduler's thread (the ring is held for it
	 * meanwhile, so the entity's later jobs still follow it). A queued
	 * one on an idle ring: the ring's ready jobs, from here too.
	 */
	if (direct)
		sched_job_run_direct(&j->base, &start);
	else if (kick)
		sched_run_ready(sched);
	return 0;

put_split:
	/* What add_deps() did not take. */
	for (i = 0; i < job->n_deps && i < SCHED_GPU_ENGINE_DEPS; i++)
		ttm_fence_put(split[i]);
	return ret;
}
