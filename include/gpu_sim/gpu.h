/* SPDX-License-Identifier: MIT */
/*
 * Private to gpu_sim/gpu*.c: the fake GPU's engines and jobs.
 *
 * Every engine keeps its unretired jobs in a FIFO in submission order;
 * the head is the job running or next to run. Submitters append under the
 * engine's lock (one lock per engine, never a global one); whoever runs the
 * engine (its worker thread in real time, the caller of ttm_gpu_advance()
 * on the virtual clock) starts the head once its dependencies are in,
 * retires it and moves on. See docs/gpu-design.md.
 */
#ifndef TTMSIM_GPU_SIM_GPU_H
#define TTMSIM_GPU_SIM_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "util/list.h"

struct gpu_job;
struct gpu_engine;

/* Job ids start at 1: 0 in gpu_engine::oldest means "being assigned". */
#define GPU_ID_ASSIGNING 0

/* One dependency of a job: its fence and our callback on it. */
struct gpu_dep {
	struct ttm_fence *fence;  /* a reference */
	struct ttm_fence_cb cb;
	struct gpu_job *job;
	bool propagate_error;
	bool cb_added;            /* cb is (or was) on fence's list */
};

struct gpu_job {
	struct list_node node;    /* on the engine's FIFO */
	struct gpu_engine *engine;
	/*
	 * The out-fence: the job's reference once queued (set up then, with
	 * its seqno); before, memory from the fence pool, seen by nobody.
	 */
	struct ttm_fence *fence;
	bool queued;
	struct ttm_gpu_job_info info;
	uint64_t duration_us;
	uint64_t end_us;          /* virtual clock: when a started job ends */
	/*
	 * Callbacks still to come from dependencies; each decrements it under
	 * the engine's lock, so that whoever reads 0 under that lock knows no
	 * callback touches the job any more.
	 */
	unsigned int pending;     /* atomic */
	int dep_error;            /* atomic; first error-propagating dep's */
	bool started;
	bool hang;
	bool cached;              /* memory from obj_cache (gpu_job.c) */
	enum ttm_gpu_op op;
	uint32_t add_value;
	unsigned int n_ranges, n_deps;
	struct ttm_gpu_range *ranges; /* points into deps[n_deps] storage */
	struct gpu_dep deps[];
};

struct gpu_engine {
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* the worker waits here, CLOCK_MONOTONIC */
	struct list_node jobs;    /* the FIFO, oldest first */
	/* Protected by lock. */
	/*
	 * Threads waiting on cond (the worker, and a submitter or destroy
	 * waiting for a dropped job's callbacks): signal it when non-zero.
	 * A count, not a flag: one waiter leaving must not hide another.
	 */
	unsigned int sleepers;
	bool stopping;            /* ttm_gpu_destroy() began */
	/*
	 * The worker has a job between taking it and the end of its
	 * retirement; a submitter runs one itself (gpu_engine_run_inline()).
	 * Either excludes the other, so jobs still retire in FIFO order.
	 */
	bool worker_busy, inline_busy;
	uint64_t seqno;           /* of the last out-fence */
	/*
	 * Id of the head (the oldest unretired job), UINT64_MAX if none,
	 * GPU_ID_ASSIGNING while a submitter to the idle engine takes an id.
	 */
	uint64_t oldest;          /* atomic */
	/* Atomic counters, written by whoever runs the engine (relaxed). */
	uint64_t submitted, run, failed, resets, ooo;
	uint64_t context;         /* fence context of the out-fences */
	struct ttm_gpu *gpu;
	unsigned int index;
	bool thread_started;
	pthread_t thread;
} __attribute__((aligned(64)));

struct ttm_gpu {
	unsigned int n_engines;
	unsigned int flags;
	uint64_t hang_timeout_us;
	ttm_gpu_retire_fn *on_retire;
	void *retire_data;
	uint64_t next_id __attribute__((aligned(64))); /* atomic */
	/* Real time: CLOCK_MONOTONIC at creation, ns. */
	uint64_t epoch_ns __attribute__((aligned(64)));
	/* Virtual clock: serialises ttm_gpu_advance(); now_us is the time. */
	pthread_mutex_t advance_lock;
	uint64_t now_us;          /* atomic */
	/* struct gpu_clock_client, in registration order; advance_lock. */
	struct list_node clients;
	struct gpu_engine *engines;
};

static inline bool gpu_is_virtual(const struct ttm_gpu *gpu)
{
	return gpu->flags & TTM_GPU_DETERMINISTIC;
}

/* The oldest unretired job of @e, or NULL. e->lock held. */
static inline struct gpu_job *gpu_engine_head(struct gpu_engine *e)
{
	return list_first_entry_or_null(&e->jobs, struct gpu_job, node);
}

/* gpu_ops.c: check @job's operation and ranges; apply them. */
int gpu_ops_validate(const struct ttm_gpu_job *job);
void gpu_ops_apply(const struct gpu_job *job);

/*
 * ttm_gpu_submit() in two steps, for the scheduler's backend (sched_gpu.c)
 * whose run_job must not fail once the job is accepted: gpu_job_prepare()
 * checks @desc and allocates everything (the job, its ranges, its
 * out-fence), -EINVAL or -ENOMEM; gpu_job_submit() queues it, allocating
 * nothing, and fails only if the GPU is being destroyed (-ESHUTDOWN, the
 * job freed); gpu_job_free() frees a prepared job never submitted.
 */
int gpu_job_prepare(struct ttm_gpu *gpu, const struct ttm_gpu_job *desc,
		    struct gpu_job **ret_job);
int gpu_job_submit(struct gpu_job *job, struct ttm_fence **ret_fence);

/* gpu_job.c */
int gpu_job_alloc(struct gpu_engine *e, const struct ttm_gpu_job *desc,
		  struct gpu_job **ret_job);
void gpu_job_add_callbacks(struct gpu_job *job);
void gpu_job_free(struct gpu_job *job);
void gpu_job_discard(struct gpu_job *job);
void gpu_engine_kick(struct gpu_engine *e);
struct gpu_job *gpu_engine_pop(struct gpu_engine *e);
void gpu_job_retire(struct gpu_job *job, int status, uint64_t end_us);
void gpu_engine_cancel_all(struct gpu_engine *e);

/* gpu_engine.c: real time. */
void *gpu_engine_main(void *arg);
/*
 * Run @job, which engine_queue() made the started head of its idle engine
 * (inline_busy set) at @start_ns (CLOCK_MONOTONIC), in the calling
 * thread, retire it, and hand the engine back to its worker.
 */
void gpu_engine_run_inline(struct gpu_engine *e, struct gpu_job *job,
			   uint64_t start_ns);

/* gpu_virtual.c: the virtual clock. */
void gpu_virtual_finish(struct ttm_gpu *gpu);

/*
 * A clock client: something above gpu_sim that does its work on the
 * virtual clock, in the thread that advances it (the job scheduler of a
 * ring whose options name a deterministic GPU). gpu_sim knows it only
 * through this hook, never by name: layers only call down.
 *
 * @step is called under the GPU's advance lock at every event time of
 * ttm_gpu_advance(): before the engine heads are started (so that jobs it
 * submits start at that time) and again after each retirement (which
 * signals fences and may have made work ready). It does everything due at
 * @now_us and returns the next time it needs to run by itself (a
 * timeout), in virtual us, or UINT64_MAX: ttm_gpu_advance() moves the
 * clock to that time as to a job's end. It sets *@progress if it did
 * anything (ran, finished or freed a job, fired a timeout): that may have
 * made another client's work ready at this very time (a job that fails
 * unrun, or a callback backend's inline job, signals at once), so the
 * clients step again, all of them, until a round makes no progress. It
 * may ttm_gpu_submit() and signal fences, but must not advance or destroy
 * the GPU, nor add or remove a client (the advance lock is held).
 */
struct gpu_clock_client {
	uint64_t (*step)(void *data, uint64_t now_us, bool *progress);
	void *data;
	struct list_node node;    /* on gpu->clients */
};

/*
 * Add @client (last) to @gpu's clients / take it off. Both take the
 * advance lock, so they wait for a running ttm_gpu_advance(); not from a
 * step. Every client must be removed before ttm_gpu_destroy().
 */
void gpu_clock_client_add(struct ttm_gpu *gpu,
			  struct gpu_clock_client *client);
void gpu_clock_client_remove(struct ttm_gpu *gpu,
			     struct gpu_clock_client *client);

/*
 * Let up to @us of virtual time pass for a client that waits: as
 * ttm_gpu_advance(), event by event, but stop as soon as @busy(@data)
 * returns false (asked after the clients' step at each event time) or no
 * event is left before now + @us. A client's deadline with no engine job
 * left to end moves the clock once per call, not more: a timeout whose
 * answer is "still running" re-arms forever while the work waits for a
 * fence another thread signals, and the caller should wait for that
 * instead of spinning the clock. The clock stays at the last event's
 * time: it does not jump to now + @us. Takes the advance lock: not from
 * a step.
 */
void gpu_clock_run(struct ttm_gpu *gpu, uint64_t us,
		   bool (*busy)(void *data), void *data);

#endif /* TTMSIM_GPU_SIM_GPU_H */
