// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the submitting threads. Each submits its jobs in file order
 * through its own client, which gets a handle for a buffer the first time
 * one of its jobs lists it (as a DRM client would import it), and keeps
 * at most RUN_MAX_IN_FLIGHT jobs in flight.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/interrupt.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

/* @th's handle for buffer @i, made on first use. 0 if it never fit. */
static uint32_t handle_of(struct run_thread *th, unsigned int i)
{
	struct run *run = th->run;

	if (!th->handles[i] && run->bos[i] &&
	    ttm_client_bo_add(th->client, run->bos[i], &th->handles[i],
			      NULL))
		th->handles[i] = 0;
	return th->handles[i];
}

static bool should_stop(struct run *run)
{
	if (__atomic_load_n(&run->stop, __ATOMIC_RELAXED))
		return true;
	if (run->cfg->seconds > 0 &&
	    cli_now_ns() - run->start_ns >=
		    (uint64_t)(run->cfg->seconds * 1e9)) {
		__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/*
 * Wait until at most @max of @th's jobs are in flight. -EINTR if a
 * signal interrupted the wait (the run stops).
 */
static int throttle(struct run_thread *th, unsigned int max)
{
	while (th->ring_count > max) {
		struct ttm_fence *oldest = th->ring[th->ring_head];
		int ret = ttm_fence_wait(oldest, true, -1);

		if (ret)
			return ret;
		ttm_fence_put(oldest);
		th->ring_head = (th->ring_head + 1) % RUN_MAX_IN_FLIGHT;
		th->ring_count--;
	}
	return 0;
}

/* Submit job @j of the workload through @th's client. */
static void submit_job(struct run_thread *th, size_t j,
		       struct ttm_execbuf_bo *list)
{
	struct run *run = th->run;
	const struct wl_job *job = &run->wl.jobs[j];
	struct run_job_result *r = &run->results[j];
	struct ttm_execbuf_args args = {
		.engine = job->engine,
		.bos = list,
		.n_bos = job->n_bos,
		.op = job->op == WL_OP_ADD ? TTM_GPU_OP_ADD : TTM_GPU_OP_NOP,
		.add_value = job->add_value,
		.duration_us = job->duration_us,
		.flags = TTM_EXECBUF_INTERRUPTIBLE |
			 (job->op == WL_OP_HANG ? TTM_EXECBUF_HANG : 0) |
			 (run->cfg->allow_duplicates ?
			  TTM_EXECBUF_ALLOW_DUPLICATES : 0),
		.tag = RUN_JOB_TAG(j),
	};
	unsigned int k;
	int ret;

	for (k = 0; k < job->n_bos; k++) {
		const struct wl_bo *bo = &run->wl.bos[job->bos[k]];

		list[k] = (struct ttm_execbuf_bo){
			.handle = handle_of(th, job->bos[k]),
			.flags = TTM_EXECBUF_BO_WRITE,
			.placement = run_job_placement(bo->placement),
		};
	}
	/*
	 * Busy, then look at the stop flag again: a signal that set it
	 * before saw this thread idle and did not interrupt it.
	 */
	__atomic_store_n(&th->busy, true, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&run->stop, __ATOMIC_SEQ_CST) ||
	    throttle(th, RUN_MAX_IN_FLIGHT - 1)) {
		__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
		return; /* stopped: not submitted */
	}
	/* Before the submit: the retire hook reads it (run_priority.c). */
	r->submit_us = ttm_gpu_now_us(run->gpu);
	ret = ttm_execbuf_submit(th->client, &args);
	__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
	r->state = ret ? RUN_JOB_REJECTED : RUN_JOB_ACCEPTED;
	r->err = ret;
	if (args.out_fence) {
		th->ring[(th->ring_head + th->ring_count) % RUN_MAX_IN_FLIGHT] =
			args.out_fence;
		th->ring_count++;
	}
	__atomic_add_fetch(&run->submitted_jobs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&run->progress, 1, __ATOMIC_RELAXED);
}

static void *submitter_main(void *arg)
{
	struct run_thread *th = arg;
	struct run *run = th->run;
	unsigned int max = 1;
	struct ttm_execbuf_bo *list;
	size_t k;

	__atomic_store_n(&th->tid, (pid_t)gettid(), __ATOMIC_RELAXED);
	/*
	 * Before the first busy: the signal thread reads the token after
	 * seeing busy (both sequentially consistent), and it also sets up
	 * this thread's wait state, so that no wait misses an interrupt.
	 */
	if (ttm_interrupt_self(&th->token))
		cli_error("thread %u: no interrupt token: a signal will not "
			  "cut its waits short", th->index);
	for (k = 0; k < th->n_jobs; k++)
		if (run->wl.jobs[th->jobs[k]].n_bos > max)
			max = run->wl.jobs[th->jobs[k]].n_bos;
	list = malloc(max * sizeof(*list));
	for (k = 0; list && k < th->n_jobs && !should_stop(run); k++) {
		__atomic_store_n(&th->next, k, __ATOMIC_RELAXED);
		submit_job(th, th->jobs[k], list);
	}
	__atomic_store_n(&th->next, th->n_jobs, __ATOMIC_RELAXED);
	free(list);
	/* The GPU signals them all: no need to wait, only to let go. */
	while (th->ring_count) {
		ttm_fence_put(th->ring[th->ring_head]);
		th->ring_head = (th->ring_head + 1) % RUN_MAX_IN_FLIGHT;
		th->ring_count--;
	}
	return NULL;
}

int run_submit_all(struct run *run)
{
	unsigned int t, started = 0;
	int ret = 0;

	/* Published last: the watcher starts looking at the run then. */
	__atomic_store_n(&run->start_ns, cli_now_ns(), __ATOMIC_RELEASE);
	ret = run_shrink_start(run);
	for (t = 0; ret == 0 && t < run->wl.n_threads; t++) {
		ret = pthread_create(&run->threads[t].thread, NULL,
				     submitter_main, &run->threads[t]);
		if (ret) {
			cli_error("cannot start thread %u: %s", t,
				  strerror(ret));
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
			ret = CLI_EXIT_FAILURE;
			break;
		}
		started++;
	}
	for (t = 0; t < started; t++) {
		pthread_join(run->threads[t].thread, NULL);
		ttm_interrupt_token_put(run->threads[t].token);
		run->threads[t].token = NULL;
	}
	/* Nothing left to shrink for: before the final checks. */
	run_shrink_stop(run);
	/* Jobs in flight finish; hung ones fail by the GPU's watchdog. */
	ttm_execbuf_wait_idle(run->dev);
	run->end_ns = cli_now_ns();
	return ret;
}
