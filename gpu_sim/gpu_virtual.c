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
 *
 * Clock clients (struct gpu_clock_client: a ring's job scheduler) step at
 * every event time, before the heads start and after each retirement, and
 * their deadlines (timeouts) are events too.
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

/*
 * Run every client's step at @now, round after round while one made
 * progress (its work may have made another's ready at this time); the
 * earliest deadline of the last round.
 */
static uint64_t clients_step(struct ttm_gpu *gpu, uint64_t now)
{
	struct gpu_clock_client *c;
	struct list_node *n;
	uint64_t d, first;
	bool progress;

	do {
		progress = false;
		first = UINT64_MAX;
		list_for_each(n, &gpu->clients) {
			c = list_entry(n, struct gpu_clock_client, node);
			d = c->step(c->data, now, &progress);
			if (d < first)
				first = d;
		}
	} while (progress);
	return first;
}

/*
 * The events up to @target, in time order, under the advance lock: at each
 * event time the clients step first (what they submit starts now), then
 * the ready heads start; the next event is the earliest job end or client
 * deadline (a job ending at a deadline retires first, so it is not timed
 * out). With @busy, stop once it says false. Return the last event's time.
 */
static uint64_t run_events(struct ttm_gpu *gpu, uint64_t target,
			   bool (*busy)(void *data), void *data)
{
	struct gpu_job *job, *first;
	uint64_t now, deadline;
	bool idle_jump = false;
	unsigned int i;

	now = __atomic_load_n(&gpu->now_us, __ATOMIC_SEQ_CST);
	for (;;) {
		deadline = clients_step(gpu, now);
		if (busy && !busy(data))
			break;
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
		/* UINT64_MAX: no deadline, even with no target either. */
		if (deadline != UINT64_MAX && deadline <= target &&
		    (!first || deadline < first->end_us)) {
			/* A waiter's clock: one jump with nothing on the GPU. */
			if (busy && !first) {
				if (idle_jump)
					break;
				idle_jump = true;
			}
			/* Past deadlines fired in the step: never back. */
			if (deadline > now)
				now = deadline;
			__atomic_store_n(&gpu->now_us, now, __ATOMIC_SEQ_CST);
			continue;
		}
		if (!first)
			break;
		now = first->end_us;
		__atomic_store_n(&gpu->now_us, now, __ATOMIC_SEQ_CST);
		job_end(first, now, false);
	}
	return now;
}

TTM_EXPORT int ttm_gpu_advance(struct ttm_gpu *gpu, uint64_t us)
{
	uint64_t target;

	if (!gpu || !gpu_is_virtual(gpu))
		return -EINVAL;
	pthread_mutex_lock(&gpu->advance_lock);
	target = add_sat(__atomic_load_n(&gpu->now_us, __ATOMIC_SEQ_CST), us);
	run_events(gpu, target, NULL, NULL);
	__atomic_store_n(&gpu->now_us, target, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&gpu->advance_lock);
	return 0;
}

void gpu_clock_run(struct ttm_gpu *gpu, uint64_t us,
		   bool (*busy)(void *data), void *data)
{
	pthread_mutex_lock(&gpu->advance_lock);
	run_events(gpu, add_sat(__atomic_load_n(&gpu->now_us,
						__ATOMIC_SEQ_CST), us),
		   busy, data);
	pthread_mutex_unlock(&gpu->advance_lock);
}

void gpu_clock_client_add(struct ttm_gpu *gpu,
			  struct gpu_clock_client *client)
{
	pthread_mutex_lock(&gpu->advance_lock);
	list_add_tail(&client->node, &gpu->clients);
	pthread_mutex_unlock(&gpu->advance_lock);
}

void gpu_clock_client_remove(struct ttm_gpu *gpu,
			     struct gpu_clock_client *client)
{
	pthread_mutex_lock(&gpu->advance_lock);
	list_del(&client->node);
	pthread_mutex_unlock(&gpu->advance_lock);
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
