// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the submitting threads. Each submits its jobs in file order
 * through its own client, which gets a handle for a buffer the first time
 * one of its jobs lists it (as a DRM client would import it), and keeps
 * at most RUN_MAX_IN_FLIGHT jobs in flight.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/interrupt.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

/*
 * A job of @th could not be submitted for another reason than a stop:
 * say why, count it (the run fails), and stop this thread's submitting.
 */
static void submit_failed(struct run_thread *th, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void submit_failed(struct run_thread *th, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_error("thread %u: %s: its jobs from the one of line %u on are "
		  "not submitted", th->index, msg,
		  th->run->wl.jobs[th->jobs[th->next]].line);
	__atomic_add_fetch(&th->run->submit_failures, 1, __ATOMIC_RELAXED);
}

/*
 * @th's handle for buffer @i, made on first use: 0, or a negative errno
 * (*@handle 0 if the buffer never fit: the job is then rejected).
 */
static int handle_of(struct run_thread *th, unsigned int i,
		     uint32_t *handle)
{
	struct run *run = th->run;
	int ret;

	if (!th->handles[i] && run->bos[i]) {
		/* A `prime` buffer: fd-to-handle, as another process would. */
		if (run->prime_fds[i] >= 0) {
			ret = ttm_client_import_fd(th->client,
						   run->prime_fds[i],
						   &th->handles[i], NULL);
			if (ret == 0)
				__atomic_add_fetch(&run->prime_imports, 1,
						   __ATOMIC_RELAXED);
		} else {
			ret = ttm_client_bo_add(th->client, run->bos[i],
						&th->handles[i], NULL);
		}
		if (ret) {
			th->handles[i] = 0;
			return ret;
		}
	}
	*handle = th->handles[i];
	return 0;
}

static bool should_stop(struct run *run)
{
	if (__atomic_load_n(&run->stop, __ATOMIC_RELAXED))
		return true;
	if (run->cfg->seconds > 0 &&
	    cli_now_ns() - run->start_ns >=
		    (uint64_t)(run->cfg->seconds * 1e9)) {
		__atomic_store_n(&run->seconds_out, 1, __ATOMIC_RELAXED);
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

/* Whether job @d is submitted, rejected, or will never be. */
static bool dep_settled(struct run *run, size_t d)
{
	uint8_t state = __atomic_load_n(&run->results[d].state,
					__ATOMIC_ACQUIRE);

	return state == RUN_JOB_ACCEPTED || state == RUN_JOB_REJECTED ||
	       __atomic_load_n(&run->threads[run->wl.jobs[d].thread].done,
			       __ATOMIC_ACQUIRE);
}

static void job_fence_done(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct run_job_result *r = (struct run_job_result *)
		((char *)cb - offsetof(struct run_job_result, cb));

	__atomic_store_n(&r->fence_status, ttm_fence_get_status(fence),
			 __ATOMIC_RELEASE);
}

/* See struct run_job_result::fence_status. */
static void watch_job_fence(struct run_job_result *r, struct ttm_fence *f)
{
	if (ttm_fence_add_callback(f, &r->cb, job_fence_done) == -ENOENT)
		__atomic_store_n(&r->fence_status, ttm_fence_get_status(f),
				 __ATOMIC_RELEASE);
}

/* Wake the threads waiting in wait_deps(): a job settled. */
static void deps_changed(struct run *run)
{
	if (!run->sync_deps)
		return;
	pthread_mutex_lock(&run->sync_lock);
	pthread_cond_broadcast(&run->sync_cv);
	pthread_mutex_unlock(&run->sync_lock);
}

/*
 * Before job @j: wait until every job its sync words depend on (the
 * signaller of a wait, the point below a timeline signal) is submitted
 * or will never be, as userspace waits with WAIT_FOR_SUBMIT: the
 * library, as the kernel, rejects a wait on a point not submitted yet.
 * The load-time check (no cycle) makes this end; a stop ends it too
 * (false). The timed wait only looks at the stop flag and the clock
 * (--seconds) again: the broadcasts are what wakes it.
 */
static bool wait_deps(struct run_thread *th, size_t j)
{
	struct run *run = th->run;
	const struct wl_job *job = &run->wl.jobs[j];
	bool waited = false;
	unsigned int k;

	if (!run->sync_deps)
		return true;
	for (k = 0; k < job->n_syncs; k++) {
		size_t d = run->sync_deps[j * WL_MAX_JOB_SYNCS + k];

		if (d == SIZE_MAX || dep_settled(run, d))
			continue;
		if (!waited)
			__atomic_add_fetch(&run->sync_waits, 1,
					   __ATOMIC_RELAXED);
		waited = true;
		pthread_mutex_lock(&run->sync_lock);
		while (!dep_settled(run, d) && !should_stop(run)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&run->sync_cv, &run->sync_lock,
					       &ts);
		}
		pthread_mutex_unlock(&run->sync_lock);
		if (!dep_settled(run, d))
			return false;
	}
	return true;
}

/*
 * Submit job @j of the workload through @th's client. false if this
 * thread must stop: stopped, or a failure it reported.
 */
static bool submit_job(struct run_thread *th, size_t j,
		       struct ttm_execbuf_bo *list)
{
	struct run *run = th->run;
	const struct wl_job *job = &run->wl.jobs[j];
	struct run_job_result *r = &run->results[j];
	struct ttm_execbuf_syncobj in[WL_MAX_JOB_SYNCS], out[WL_MAX_JOB_SYNCS];
	unsigned int n_in = 0, n_out = 0;
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
		.in_syncobjs = in,
		.out_syncobjs = out,
	};
	unsigned int k;
	int ret;

	for (k = 0; k < job->n_syncs; k++) {
		const struct wl_sync *y = &job->syncs[k];
		struct ttm_execbuf_syncobj *e = y->signal ? &out[n_out++] :
							    &in[n_in++];

		*e = (struct ttm_execbuf_syncobj){
			.handle = th->sync_handles[y->syncobj],
			.point = y->point,
		};
	}
	/* TTMSIM_TEST_FAULT=no-wait: the verifier must catch it. */
	args.n_in_syncobjs = run->fault == RUN_FAULT_NO_WAIT ? 0 : n_in;
	args.n_out_syncobjs = n_out;
	for (k = 0; k < job->n_bos; k++) {
		const struct wl_bo *bo = &run->wl.bos[job->bos[k]];

		list[k] = (struct ttm_execbuf_bo){
			.flags = TTM_EXECBUF_BO_WRITE,
			.placement = &run->places[job->bos[k]],
		};
		ret = handle_of(th, job->bos[k], &list[k].handle);
		if (ret) {
			submit_failed(th, "cannot get a handle for buffer "
				      "'%s': %s", bo->name, strerror(-ret));
			return false;
		}
	}
	if (!wait_deps(th, j))
		return false; /* stopped: not submitted */
	/*
	 * Busy, then look at the stop flag again: a signal that set it
	 * before saw this thread idle and did not interrupt it.
	 */
	__atomic_store_n(&th->busy, true, __ATOMIC_SEQ_CST);
	ret = __atomic_load_n(&run->stop, __ATOMIC_SEQ_CST) ? -EINTR :
	      throttle(th, RUN_MAX_IN_FLIGHT - 1);
	if (ret) {
		__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
		/* -EINTR: a signal or a stop; anything else is a failure. */
		if (ret != -EINTR)
			submit_failed(th, "cannot wait for its jobs in flight: "
				      "%s", strerror(-ret));
		return false; /* not submitted */
	}
	/* Before the submit: the retire hook reads it (run_priority.c). */
	r->submit_us = ttm_gpu_now_us(run->gpu);
	/* The job may run before the submit returns: watch_grace() sees it. */
	__atomic_store_n(&r->state, RUN_JOB_SUBMITTING, __ATOMIC_RELAXED);
	ret = ttm_execbuf_submit(th->client, &args);
	__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
	/* Atomic: the watchdog reads it (watch_grace()). */
	r->err = ret;
	/* Release: a waiter that sees the state sees the syncobj's fence. */
	__atomic_store_n(&r->state, ret ? RUN_JOB_REJECTED : RUN_JOB_ACCEPTED,
			 __ATOMIC_RELEASE);
	deps_changed(run);
	if (args.out_fence && run->sync_deps)
		watch_job_fence(r, args.out_fence);
	if (args.out_fence) {
		th->ring[(th->ring_head + th->ring_count) % RUN_MAX_IN_FLIGHT] =
			args.out_fence;
		th->ring_count++;
	}
	__atomic_add_fetch(&run->submitted_jobs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&run->progress, 1, __ATOMIC_RELAXED);
	return true;
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
	list = run->fault == RUN_FAULT_SUBMIT_LIST && th->index == 0 ? NULL :
	       malloc(max * sizeof(*list));
	if (!list && th->n_jobs)
		submit_failed(th, "cannot allocate its list of %u buffers: "
			      "out of memory", max);
	for (k = 0; list && k < th->n_jobs && !should_stop(run); k++) {
		/* TTMSIM_TEST_FAULT=stall only; NULL otherwise. */
		struct ttm_fence *never = k ? NULL :
			run_fault_stall_prepare(th, th->jobs[k]);
		bool ok;

		__atomic_store_n(&th->next, k, __ATOMIC_RELAXED);
		ok = submit_job(th, th->jobs[k], list);
		run_fault_stall(th, th->jobs[k], never);
		if (!ok)
			break;
		if (k == 0)
			run_fault_live_wait(th); /* TTMSIM_TEST_FAULT only */
	}
	__atomic_store_n(&th->next, th->n_jobs, __ATOMIC_RELAXED);
	__atomic_store_n(&th->done, 1, __ATOMIC_RELEASE);
	deps_changed(run);
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
