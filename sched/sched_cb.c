// SPDX-License-Identifier: MIT
/*
 * The callback backend (ttmsim/sched.h): run_job hands the job to a pool
 * of worker threads and returns a fence that the worker signals with the
 * function's return value. A worker takes the oldest queued job whose
 * entity has no job running on another worker, so the jobs of one entity
 * run (and finish) in order while different entities run in parallel.
 * On a deterministic GPU there are no workers: run_job calls the function
 * itself, inside ttm_gpu_advance(), and returns a signalled fence.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/gpu.h"
#include "sched/sched.h"
#include "util/compiler.h"
#include "ttmsim/sched.h"

#define CB_MAX_WORKERS 64

struct cb_job {
	struct ttm_sched_job base;
	struct ttm_sched_cb_args args;  /* deps not kept */
	uint64_t entity_ctx;            /* identifies the entity */
	/*
	 * The hardware fence, made at submission so that run_job allocates
	 * nothing: there, a failure would drop the accepted job unrun.
	 */
	struct ttm_fence *fence;
	struct ttm_fence *hw;           /* the worker's reference */
	struct cb_job *next;            /* work queue */
};

struct cb_worker {
	struct cb_backend *cb;
	pthread_t thread;
	uint64_t running;               /* entity_ctx of its job, or 0 */
};

struct cb_backend {
	/* Per instance: run_job finds the backend through job->sched. */
	struct ttm_sched_backend_ops ops;
	bool inline_run;                /* deterministic GPU: no workers */

	pthread_mutex_t lock;
	pthread_cond_t work;
	bool stop;
	struct cb_job *q_head, *q_tail; /* handed to run_job, not started */
	unsigned int n_workers;
	struct cb_worker workers[];
};

static struct cb_backend *to_cb(const struct ttm_sched *s)
{
	return container_of(sched_ops(s), struct cb_backend, ops);
}

static int cb_fn_status(struct cb_job *cj)
{
	int ret = cj->args.fn(&cj->base, cj->args.data);

	return ret < 0 ? ret : 0;
}

/* Under cb->lock: the oldest queued job whose entity is idle. */
static struct cb_job *cb_take(struct cb_backend *cb)
{
	struct cb_job *prev = NULL;

	for (struct cb_job *cj = cb->q_head; cj; prev = cj, cj = cj->next) {
		bool busy = false;

		for (unsigned int i = 0; i < cb->n_workers && !busy; i++)
			busy = cb->workers[i].running == cj->entity_ctx;
		if (busy)
			continue;
		if (prev)
			prev->next = cj->next;
		else
			cb->q_head = cj->next;
		if (cb->q_tail == cj)
			cb->q_tail = prev;
		cj->next = NULL;
		return cj;
	}
	return NULL;
}

static void *cb_worker_main(void *arg)
{
	struct cb_worker *w = arg;
	struct cb_backend *cb = w->cb;

	pthread_mutex_lock(&cb->lock);
	for (;;) {
		struct cb_job *cj = cb_take(cb);
		struct ttm_fence *hw;
		int status;

		if (!cj) {
			if (cb->stop)
				break;
			pthread_cond_wait(&cb->work, &cb->lock);
			continue;
		}
		w->running = cj->entity_ctx;
		hw = cj->hw;
		cj->hw = NULL;
		pthread_mutex_unlock(&cb->lock);
		status = cb_fn_status(cj);
		/*
		 * The job may be freed from here on (its finished fence
		 * signals in this call). Signal before letting the entity's
		 * next job start, so that its fences signal in order.
		 */
		ttm_fence_signal(hw, status);
		ttm_fence_put(hw);
		pthread_mutex_lock(&cb->lock);
		w->running = 0;
		pthread_cond_broadcast(&cb->work);
	}
	pthread_mutex_unlock(&cb->lock);
	return NULL;
}

static struct ttm_fence *cb_run_job(struct ttm_sched_job *job)
{
	struct cb_job *cj = container_of(job, struct cb_job, base);
	struct cb_backend *cb = to_cb(job->sched);
	struct ttm_fence *hw = cj->fence;

	/* Run once: this backend has no timedout_job to resubmit. */
	if (!hw)
		return ttm_sched_err_ptr(-EINVAL);
	cj->fence = NULL;
	if (cb->inline_run) {
		ttm_fence_signal(hw, cb_fn_status(cj));
		return hw;
	}
	cj->hw = ttm_fence_get(hw);
	cj->next = NULL;
	pthread_mutex_lock(&cb->lock);
	if (cb->q_tail)
		cb->q_tail->next = cj;
	else
		cb->q_head = cj;
	cb->q_tail = cj;
	pthread_cond_signal(&cb->work);
	pthread_mutex_unlock(&cb->lock);
	return hw;
}

static void cb_free_job(struct ttm_sched_job *job)
{
	struct cb_job *cj = container_of(job, struct cb_job, base);

	ttm_sched_job_cleanup(job);
	ttm_fence_put(cj->fence);       /* never ran */
	if (cj->args.release)
		cj->args.release(cj->args.data);
	free(cj);
}

/* Stop and join @n workers; the queue is empty (the ring has drained). */
static void cb_stop_workers(struct cb_backend *cb, unsigned int n)
{
	pthread_mutex_lock(&cb->lock);
	cb->stop = true;
	pthread_cond_broadcast(&cb->work);
	pthread_mutex_unlock(&cb->lock);
	for (unsigned int i = 0; i < n; i++)
		pthread_join(cb->workers[i].thread, NULL);
}

static void cb_free(struct cb_backend *cb)
{
	pthread_cond_destroy(&cb->work);
	pthread_mutex_destroy(&cb->lock);
	free(cb);
}

/* The scheduler's teardown hook: its thread is gone, its ring empty. */
static void cb_fini(void *data)
{
	struct cb_backend *cb = data;

	cb_stop_workers(cb, cb->n_workers);
	cb_free(cb);
}

TTM_EXPORT int ttm_sched_cb_create(const struct ttm_sched_options *options,
				   unsigned int n_workers,
				   struct ttm_sched **ret_sched)
{
	struct ttm_sched_options opts;
	struct cb_backend *cb;
	bool inline_run;
	unsigned int i;
	int ret;

	if (!options || options->ops || !ret_sched)
		return -EINVAL;
	inline_run = options->gpu && gpu_is_virtual(options->gpu);
	if (inline_run)
		n_workers = 0;
	else if (!n_workers || n_workers > CB_MAX_WORKERS)
		return -EINVAL;
	cb = calloc(1, sizeof(*cb) + n_workers * sizeof(cb->workers[0]));
	if (!cb)
		return -ENOMEM;
	cb->ops.run_job = cb_run_job;
	cb->ops.free_job = cb_free_job;
	cb->inline_run = inline_run;
	pthread_mutex_init(&cb->lock, NULL);
	pthread_cond_init(&cb->work, NULL);
	for (i = 0; i < n_workers; i++) {
		cb->workers[i].cb = cb;
		if (pthread_create(&cb->workers[i].thread, NULL,
				   cb_worker_main, &cb->workers[i])) {
			cb_stop_workers(cb, i);
			cb_free(cb);
			return -EAGAIN;
		}
	}
	cb->n_workers = n_workers;
	opts = *options;
	opts.ops = &cb->ops;
	if (!opts.name)
		opts.name = "cb";
	ret = ttm_sched_create(&opts, ret_sched);
	if (ret) {
		cb_stop_workers(cb, n_workers);
		cb_free(cb);
		return ret;
	}
	sched_set_backend(*ret_sched, cb, cb_fini);
	return 0;
}

TTM_EXPORT int ttm_sched_cb_submit(struct ttm_sched_entity *entity,
				   const struct ttm_sched_cb_args *args,
				   struct ttm_fence **ret_finished)
{
	struct cb_job *cj;
	int ret;

	if (!entity || !args || !args->fn)
		return -EINVAL;
	cj = calloc(1, sizeof(*cj));
	if (!cj)
		return -ENOMEM;
	ret = ttm_sched_job_init(&cj->base, entity,
				 args->credits ? args->credits : 1);
	if (ret)
		goto err_free;
	if (sched_ops(cj->base.sched)->run_job != cb_run_job) {
		ret = -EINVAL;
		goto err_cleanup;
	}
	/* A context of its own: workers finish jobs out of ring order. */
	ret = ttm_fence_create(ttm_fence_context_alloc(1), 1, &cj->fence);
	if (ret)
		goto err_cleanup;
	for (unsigned int i = 0; i < args->n_deps; i++) {
		struct ttm_fence *dep = ttm_fence_get(args->deps[i]);

		ret = ttm_sched_job_add_dependency(&cj->base, dep);
		if (ret)
			goto err_cleanup;
	}
	cj->args = *args;
	cj->args.deps = NULL;
	cj->args.n_deps = 0;
	ttm_sched_job_arm(&cj->base);
	/* The scheduled fence's context is the entity's, and never 0. */
	cj->entity_ctx = ttm_fence_context(ttm_sched_job_scheduled(&cj->base));
	if (ret_finished)
		*ret_finished = ttm_fence_get(
			ttm_sched_job_finished(&cj->base));
	ttm_sched_entity_push_job(&cj->base);
	return 0;

err_cleanup:
	ttm_fence_put(cj->fence);
	ttm_sched_job_cleanup(&cj->base);
err_free:
	free(cj);
	return ret;
}
