/* SPDX-License-Identifier: MIT */
/*
 * A fake GPU: engines that run jobs on plain memory ranges.
 *
 * Each engine runs its jobs in submission order, one at a time: a job
 * starts once it is at the head of its engine and all its dependencies
 * have signalled, takes its simulated duration, applies its operation to
 * memory and signals its out-fence. Engines run concurrently, so jobs
 * retire out of submission order across engines. A hanging job never ends
 * by itself: the engine's watchdog fails it with -ETIMEDOUT and resets the
 * engine, which goes on with its next job.
 *
 * Two clocks: real time (one worker thread per engine, durations slept on
 * CLOCK_MONOTONIC), or a virtual clock for tests (TTM_GPU_DETERMINISTIC):
 * time moves only in ttm_gpu_advance(), which runs everything due, so
 * tests never sleep.
 *
 * The GPU knows nothing of buffer objects: a job carries memory ranges.
 */
#ifndef TTMSIM_GPU_H
#define TTMSIM_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ttmsim/fence.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_gpu;

/* Flags of struct ttm_gpu_options. */
#define TTM_GPU_DETERMINISTIC (1u << 0) /* virtual clock, ttm_gpu_advance() */

/*
 * The longest struct ttm_gpu_job.duration_us (about 584 years): the real
 * clock counts nanoseconds in 64 bits, and a longer duration would wrap
 * around to a job that ends at once.
 */
#define TTM_GPU_MAX_DURATION_US (UINT64_MAX / 1000)

/**
 * enum ttm_gpu_op - what a job does to its ranges when it runs.
 * @TTM_GPU_OP_NOP: nothing.
 * @TTM_GPU_OP_ADD: add a value to every 32-bit word of each range.
 * @TTM_GPU_OP_COPY: copy ranges[0] to ranges[1] (same size).
 */
enum ttm_gpu_op {
	TTM_GPU_OP_NOP,
	TTM_GPU_OP_ADD,
	TTM_GPU_OP_COPY,
};

/**
 * struct ttm_gpu_range - a memory range a job works on.
 * @addr: 4-byte aligned.
 * @size: in bytes, a multiple of 4.
 */
struct ttm_gpu_range {
	void *addr;
	size_t size;
};

/**
 * struct ttm_gpu_dep - a dependency of a job.
 * @fence: what the job waits for.
 * @propagate_error: false: an ordering dependency, the job only waits for
 *	it (its failure does not fail the job). true: the job fails with the
 *	fence's error without running (explicit in-fences).
 */
struct ttm_gpu_dep {
	struct ttm_fence *fence;
	bool propagate_error;
};

/**
 * struct ttm_gpu_job_info - what happened to a job, passed to the retire
 * hook.
 * @id: submission order, from 1, over all engines.
 * @engine: the engine it ran on.
 * @tag: struct ttm_gpu_job::tag.
 * @submit_us: on the GPU's clock (ttm_gpu_now_us()).
 * @start_us: 0 if it never ran (or started at 0).
 * @end_us: when it ended: start + duration if it ran.
 * @status: 0, -ETIMEDOUT (hang), a dependency's error, -ECANCELED
 *	(destroyed before it ran).
 */
struct ttm_gpu_job_info {
	uint64_t id;
	unsigned int engine;
	uint64_t tag;
	uint64_t submit_us;
	uint64_t start_us;
	uint64_t end_us;
	int status;
};

/**
 * typedef ttm_gpu_retire_fn - the retire hook.
 * @info: the job; valid during the call only.
 * @data: struct ttm_gpu_options::retire_data.
 *
 * Called on retirement of every job, before its fence signals.
 *
 * Context: Does not sleep: runs in a fence-signalling section (the job's
 * fence waits for it), under the rules of a fence callback
 * (ttm_fence_begin_signalling(): no blocking reservation, ww_mutex, fence
 * wait or buffer allocation; rule 13 of the ww debug checker). Runs in the
 * engine's worker thread or in the thread that submitted the job (real
 * time, see ttm_gpu_submit()), or in the caller of ttm_gpu_advance() or
 * ttm_gpu_destroy() (virtual clock). It may submit jobs (the hook may
 * then run again, nested, for one of them: hold no lock of its own
 * across the submit), but must not call ttm_gpu_advance() or
 * ttm_gpu_destroy().
 */
typedef void ttm_gpu_retire_fn(const struct ttm_gpu_job_info *info,
			       void *data);

/**
 * struct ttm_gpu_options - how to build a GPU.
 * @flags: TTM_GPU_*.
 * @hang_timeout_ms: the watchdog; 0: the default, 100.
 * @on_retire: optional, e.g. for a trace.
 * @retire_data: passed to @on_retire.
 */
struct ttm_gpu_options {
	unsigned int flags;
	unsigned int hang_timeout_ms;
	ttm_gpu_retire_fn *on_retire;
	void *retire_data;
};

/**
 * struct ttm_gpu_job - a job to submit.
 * @engine: the engine to run it on.
 * @deps: what it waits for.
 * @n_deps: the number of @deps.
 * @duration_us: how long it runs, at most TTM_GPU_MAX_DURATION_US.
 * @op: what it does.
 * @add_value: for TTM_GPU_OP_ADD.
 * @ranges: the memory it works on.
 * @n_ranges: the number of @ranges; COPY: exactly 2.
 * @hang: never ends by itself.
 * @tag: the caller's, for the hook.
 */
struct ttm_gpu_job {
	unsigned int engine;
	const struct ttm_gpu_dep *deps;
	unsigned int n_deps;
	uint64_t duration_us;
	enum ttm_gpu_op op;
	uint32_t add_value;
	const struct ttm_gpu_range *ranges;
	unsigned int n_ranges;
	bool hang;
	uint64_t tag;
};

/**
 * struct ttm_gpu_stats - the counters of a GPU.
 * @submitted: jobs submitted.
 * @run: jobs that ran to completion.
 * @failed: hung, failed dependency, or cancelled.
 * @resets: watchdog resets.
 * @out_of_order_retirements: retired while an earlier submitted job had
 *	not.
 */
struct ttm_gpu_stats {
	uint64_t submitted;
	uint64_t run;
	uint64_t failed;
	uint64_t resets;
	uint64_t out_of_order_retirements;
};

/**
 * ttm_gpu_create() - start a GPU with @n_engines engines.
 * @n_engines: 1 to 64.
 * @options: NULL for the defaults (real time, 100 ms hang timeout).
 * @ret_gpu: the new GPU.
 *
 * Context: Does not sleep. Starts a worker thread per engine in real time;
 * each inherits the caller's scheduling policy, then switches to
 * SCHED_BATCH if that is the default SCHED_OTHER (a real-time or idle
 * policy is kept) and the environment does not say TTMSIM_SCHED_BATCH=0.
 * Return: 0 and *@ret_gpu; -EINVAL, -ENOMEM, or -EAGAIN (no thread).
 */
int ttm_gpu_create(unsigned int n_engines,
		   const struct ttm_gpu_options *options,
		   struct ttm_gpu **ret_gpu);

/**
 * ttm_gpu_destroy() - stop @gpu and free it.
 * @gpu: the GPU, or NULL.
 *
 * Jobs not yet started are cancelled: their fences signal -ECANCELED and
 * their memory is left alone; a running job finishes first (a hanging one
 * is failed at once). Every worker is joined before it returns.
 *
 * Context: May sleep. Runs retire hooks and fence callbacks in the calling
 * thread. Not from a fence callback or the retire hook (it waits for
 * callbacks and workers that would wait for it). Every ttm_gpu_submit()
 * of another thread must have returned before it is called: submits
 * made meanwhile by callbacks it runs get -ESHUTDOWN. Every job
 * scheduler following its virtual clock (ttmsim/sched.h) must have been
 * destroyed (a message on stderr says when one was not).
 */
void ttm_gpu_destroy(struct ttm_gpu *gpu);

/**
 * ttm_gpu_submit() - queue @job on its engine.
 * @gpu: the GPU.
 * @job: the job; copied.
 * @ret_fence: the job's out-fence (a new reference), or NULL.
 *
 * Takes references to the dependencies; the ranges must stay valid until
 * the job's fence signals.
 *
 * Context: Does not sleep. Takes and releases the engine's lock. Any
 * thread, the retire hook included. In real time a ready job of no
 * duration (not a hang) on an idle engine runs in the calling thread:
 * its retire hook and its fence's callbacks have run when this returns
 * (docs/gpu-design.md, "Submitter-run jobs"), so the caller must hold
 * nothing they take, the retire hook's own locks included when it is
 * the caller.
 * Return: 0; -EINVAL for a bad engine, op, range or range count, or a
 * duration beyond TTM_GPU_MAX_DURATION_US; -ENOMEM; -ESHUTDOWN while the
 * GPU is being destroyed.
 */
int ttm_gpu_submit(struct ttm_gpu *gpu, const struct ttm_gpu_job *job,
		   struct ttm_fence **ret_fence);

/**
 * ttm_gpu_advance() - deterministic mode: move the virtual clock forward.
 * @gpu: the GPU, created with TTM_GPU_DETERMINISTIC.
 * @us: by how many microseconds.
 *
 * Returns only once every job due by the new time has started, run,
 * retired and signalled, callbacks included. Jobs whose dependencies are
 * fences signalled by other means run once those signal and the clock is
 * advanced again. The job schedulers that follow this clock
 * (ttmsim/sched.h) do their work at every event time, in this thread:
 * their run_job, timedout_job and free_job ops run here.
 *
 * Context: May sleep: waits for a concurrent ttm_gpu_advance(). Takes and
 * releases the GPU's advance lock, and runs retire hooks and fence
 * callbacks under it, in the calling thread. Not from a fence callback or
 * the retire hook (it signals fences itself, under a lock that such a
 * nested call would wait for).
 * Return: 0, or -EINVAL if @gpu is not deterministic.
 */
int ttm_gpu_advance(struct ttm_gpu *gpu, uint64_t us);

/**
 * ttm_gpu_now_us() - the GPU's clock.
 * @gpu: the GPU.
 *
 * Context: Does not sleep.
 * Return: microseconds: virtual, or real since creation.
 */
uint64_t ttm_gpu_now_us(struct ttm_gpu *gpu);

/**
 * ttm_gpu_get_stats() - a snapshot of the counters.
 * @gpu: the GPU.
 * @stats: filled in.
 *
 * Context: Does not sleep. Takes no lock: each counter is read atomically,
 * not all of them at one instant.
 */
void ttm_gpu_get_stats(struct ttm_gpu *gpu, struct ttm_gpu_stats *stats);

/**
 * ttm_gpu_engines() - the number of engines of @gpu.
 * @gpu: the GPU.
 *
 * Context: Does not sleep.
 * Return: as given to ttm_gpu_create().
 */
unsigned int ttm_gpu_engines(const struct ttm_gpu *gpu);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_GPU_H */
