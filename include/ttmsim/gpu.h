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

/** Flags of struct ttm_gpu_options. */
#define TTM_GPU_DETERMINISTIC (1u << 0) /* virtual clock, ttm_gpu_advance() */

/** What a job does to its ranges when it runs. */
enum ttm_gpu_op {
	TTM_GPU_OP_NOP,  /* nothing */
	TTM_GPU_OP_ADD,  /* add a value to every 32-bit word of each range */
	TTM_GPU_OP_COPY, /* copy ranges[0] to ranges[1] (same size) */
};

/** A memory range a job works on: 4-byte aligned, size a multiple of 4. */
struct ttm_gpu_range {
	void *addr;
	size_t size;
};

/** A dependency of a job. */
struct ttm_gpu_dep {
	struct ttm_fence *fence;
	/*
	 * false: an ordering dependency, the job only waits for it (its
	 * failure does not fail the job). true: the job fails with the
	 * fence's error without running (explicit in-fences).
	 */
	bool propagate_error;
};

/** What happened to a job, passed to the retire hook. */
struct ttm_gpu_job_info {
	uint64_t id;        /* submission order, from 1, over all engines */
	unsigned int engine;
	uint64_t tag;       /* struct ttm_gpu_job::tag */
	uint64_t submit_us; /* on the GPU's clock (ttm_gpu_now_us()) */
	uint64_t start_us;  /* 0 if it never ran (or started at 0) */
	uint64_t end_us;    /* when it ended: start + duration if it ran */
	int status;         /* 0, -ETIMEDOUT (hang), a dependency's error,
			       -ECANCELED (destroyed before it ran) */
};

/**
 * Called on retirement of every job, before its fence signals: in the
 * engine's worker thread (real time), or in the caller of
 * ttm_gpu_advance() or ttm_gpu_destroy() (virtual clock). It may submit
 * jobs, but must not call ttm_gpu_advance() or ttm_gpu_destroy().
 */
typedef void ttm_gpu_retire_fn(const struct ttm_gpu_job_info *info,
			       void *data);

struct ttm_gpu_options {
	unsigned int flags;          /* TTM_GPU_* */
	unsigned int hang_timeout_ms; /* watchdog; 0: the default, 100 */
	ttm_gpu_retire_fn *on_retire; /* optional, e.g. for a trace */
	void *retire_data;
};

/** A job to submit. */
struct ttm_gpu_job {
	unsigned int engine;
	const struct ttm_gpu_dep *deps;
	unsigned int n_deps;
	uint64_t duration_us;
	enum ttm_gpu_op op;
	uint32_t add_value;               /* TTM_GPU_OP_ADD */
	const struct ttm_gpu_range *ranges;
	unsigned int n_ranges;            /* COPY: exactly 2 */
	bool hang;                        /* never ends by itself */
	uint64_t tag;                     /* the caller's, for the hook */
};

struct ttm_gpu_stats {
	uint64_t submitted;
	uint64_t run;       /* jobs that ran to completion */
	uint64_t failed;    /* hung, failed dependency, or cancelled */
	uint64_t resets;    /* watchdog resets */
	uint64_t out_of_order_retirements; /* retired while an earlier
					      submitted job had not */
};

/**
 * ttm_gpu_create - start a GPU with @n_engines engines (1 to 64).
 * @options: NULL for the defaults (real time, 100 ms hang timeout).
 * Return: 0 and *@ret_gpu; -EINVAL, -ENOMEM, or -EAGAIN (no thread).
 */
int ttm_gpu_create(unsigned int n_engines,
		   const struct ttm_gpu_options *options,
		   struct ttm_gpu **ret_gpu);

/**
 * ttm_gpu_destroy - stop @gpu and free it. NULL is allowed.
 *
 * Jobs not yet started are cancelled: their fences signal -ECANCELED and
 * their memory is left alone; a running job finishes first (a hanging one
 * is failed at once). Every worker is joined before it returns.
 *
 * Context: not from a fence callback or the retire hook (it waits for
 * callbacks and workers that would wait for it). Every ttm_gpu_submit()
 * of another thread must have returned before it is called: submits
 * made meanwhile by callbacks it runs get -ESHUTDOWN.
 */
void ttm_gpu_destroy(struct ttm_gpu *gpu);

/**
 * ttm_gpu_submit - queue @job on its engine.
 * @ret_fence: the job's out-fence (a new reference), or NULL.
 *
 * Takes references to the dependencies; the ranges must stay valid until
 * the job's fence signals. Thread-safe.
 * Return: 0; -EINVAL for a bad engine, op, range or range count; -ENOMEM;
 * -ESHUTDOWN while the GPU is being destroyed.
 */
int ttm_gpu_submit(struct ttm_gpu *gpu, const struct ttm_gpu_job *job,
		   struct ttm_fence **ret_fence);

/**
 * ttm_gpu_advance - deterministic mode: move the virtual clock @us
 * microseconds forward.
 *
 * Returns only once every job due by the new time has started, run,
 * retired and signalled, callbacks included. Jobs whose dependencies are
 * fences signalled by other means run once those signal and the clock is
 * advanced again.
 * Context: not from a fence callback or the retire hook (it signals
 * fences itself, under a lock that such a nested call would wait for).
 * Return: 0, or -EINVAL if @gpu is not deterministic.
 */
int ttm_gpu_advance(struct ttm_gpu *gpu, uint64_t us);

/** ttm_gpu_now_us - the GPU's clock: virtual, or real since creation. */
uint64_t ttm_gpu_now_us(struct ttm_gpu *gpu);

/** ttm_gpu_get_stats - a snapshot of the counters. */
void ttm_gpu_get_stats(struct ttm_gpu *gpu, struct ttm_gpu_stats *stats);

/** ttm_gpu_engines - the number of engines of @gpu. */
unsigned int ttm_gpu_engines(const struct ttm_gpu *gpu);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_GPU_H */
