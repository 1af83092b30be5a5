/* SPDX-License-Identifier: MIT */
/*
 * A job scheduler in front of a ring, like the kernel's drm_sched: a
 * driver creates one scheduler per ring with its backend ops
 * (struct ttm_sched_backend_ops), clients queue jobs on entities
 * (per-context queues with a priority), and the scheduler runs them on the
 * backend once their dependencies have signalled and the ring has room
 * (its credit limit). Every job has two fences of the scheduler's: the
 * scheduled fence signals when run_job is called, the finished fence when
 * the hardware fence run_job returned signals, with its error. The
 * finished fence is what goes into reservation objects.
 *
 * Design and what is left: docs/sched-design.md.
 */
#ifndef TTMSIM_SCHED_H
#define TTMSIM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_gpu;
struct ttm_sched;
struct ttm_sched_entity;
struct ttm_sched_job;
struct ttm_sched_dep;

/*
 * Flags of ttm_sched_job_add_dependency_flags(). TTM_SCHED_DEP_ORDER: an
 * ordering dependency: the job waits for the fence, but the fence's error
 * does not fail the job (implicit sync, the kernel's dma_resv usage; the
 * fake GPU's propagate_error false).
 */
#define TTM_SCHED_DEP_ORDER (1u << 0)

/**
 * enum ttm_sched_priority - an entity's priority; higher ones run first.
 * @TTM_SCHED_PRIORITY_KERNEL: the driver's own work (moves, clears).
 * @TTM_SCHED_PRIORITY_HIGH: a high-priority client context.
 * @TTM_SCHED_PRIORITY_NORMAL: the default.
 * @TTM_SCHED_PRIORITY_LOW: background work.
 * @TTM_SCHED_PRIORITY_COUNT: the number of priorities.
 */
enum ttm_sched_priority {
	TTM_SCHED_PRIORITY_KERNEL,
	TTM_SCHED_PRIORITY_HIGH,
	TTM_SCHED_PRIORITY_NORMAL,
	TTM_SCHED_PRIORITY_LOW,
	TTM_SCHED_PRIORITY_COUNT,
};

/**
 * enum ttm_sched_stat - what a timedout_job op did.
 * @TTM_SCHED_STAT_RESET: the ring was reset; the driver has signalled (or
 *	will signal) the job's hardware fence, normally with an error such
 *	as -ETIMEDOUT, which the finished fence then carries; or it has
 *	recovered the ring with ttm_sched_stop(), ttm_sched_job_set_guilty(),
 *	ttm_sched_resubmit_jobs() and ttm_sched_start(). The next running
 *	job gets a fresh timeout.
 * @TTM_SCHED_STAT_NO_HANG: the job is still making progress: the timeout
 *	is re-armed for it, counted from now.
 * @TTM_SCHED_STAT_ENODEV: the device is gone: no more timeouts fire; the
 *	driver signals the hardware fences itself.
 */
enum ttm_sched_stat {
	TTM_SCHED_STAT_RESET,
	TTM_SCHED_STAT_NO_HANG,
	TTM_SCHED_STAT_ENODEV,
};

/**
 * struct ttm_sched_backend_ops - the hardware behind a scheduler.
 * @run_job: start @job on the ring. Called once per job, in order of
 *	selection, after its dependencies have signalled without error and
 *	its scheduled fence has signalled. Returns the hardware fence (a
 *	reference the scheduler takes over), which signals when the job is
 *	done, with an error if it failed; or an error pointer
 *	(ttm_sched_err_ptr()) if it could not be started: the finished
 *	fence then signals with that error at once. Mandatory.
 *	Context: May sleep, but holds up the ring while it does. Runs in the
 *	scheduler's thread, no scheduler lock held; on the virtual clock,
 *	in the thread of ttm_gpu_advance() under the GPU's advance lock
 *	(see struct ttm_sched_options): it may ttm_gpu_submit() (that job
 *	starts at this virtual time) but not advance or destroy the GPU,
 *	nor create or destroy a scheduler or entity on its clock.
 * @timedout_job: @job has run for longer than the scheduler's timeout.
 *	Reset the ring, resubmit, mark the context guilty (the recovery
 *	calls below, which only this op may make): see enum ttm_sched_stat
 *	for what each answer means. Optional: without it a timeout does
 *	nothing.
 *	Context: May sleep. Runs in the scheduler's thread, no scheduler
 *	lock held.
 * @free_job: the job's finished fence has signalled (or it was never run,
 *	see ttm_sched_entity_destroy()): drop the scheduler's state with
 *	ttm_sched_job_cleanup() and free the driver's object. Mandatory.
 *	Context: May sleep. Runs where run_job does (with the same rules),
 *	or, for a job killed by ttm_sched_entity_destroy() whose entity had
 *	nothing left unfinished on the ring, in the thread destroying the
 *	entity.
 */
struct ttm_sched_backend_ops {
	struct ttm_fence *(*run_job)(struct ttm_sched_job *job);
	enum ttm_sched_stat (*timedout_job)(struct ttm_sched_job *job);
	void (*free_job)(struct ttm_sched_job *job);
};

/**
 * struct ttm_sched_options - how to create a scheduler.
 * @name: the ring's name, for fence timelines; copied (up to 31 bytes).
 * @credit_limit: how many credits of jobs may be on the ring at once
 *	(handed to run_job and not yet finished); at least 1.
 * @timeout_ns: how long a job may run before timedout_job is called, from
 *	run_job; 0 for no timeout.
 * @ops: the backend; must outlive the scheduler.
 * @gpu: the GPU whose clock the scheduler follows, or NULL for real
 *	time. A real-time GPU's clock is real time: the scheduler has its
 *	own thread, as with NULL. A TTM_GPU_DETERMINISTIC GPU's virtual
 *	clock: no thread; the scheduler's work (run_job, timeouts, free_job)
 *	is done inside ttm_gpu_advance(), in its caller's thread, at every
 *	event time (before the engines start their next jobs, so that jobs
 *	run_job submits start at that time, and after each job retires);
 *	@timeout_ns counts in virtual time, rounded up to whole
 *	microseconds, and a timeout is an event: ttm_gpu_advance() stops
 *	the clock there, so timedout_job is called at exactly run_job's
 *	time + timeout. Work that becomes ready by other means (a push, a
 *	fence signalled by another thread) waits for the next
 *	ttm_gpu_advance(), which may be by 0. Such a scheduler must be
 *	destroyed before its GPU.
 */
struct ttm_sched_options {
	const char *name;
	uint32_t credit_limit;
	uint64_t timeout_ns;
	const struct ttm_sched_backend_ops *ops;
	struct ttm_gpu *gpu;
};

/**
 * struct ttm_sched_job - a job, for drivers to embed in their own object.
 *
 * A driver embeds it, fills it with ttm_sched_job_init() and finds its
 * object again with container_of() in its ops. The fields are private to
 * ttmsim.
 */
struct ttm_sched_job {
	/* private: */
	struct ttm_sched *sched;
	struct ttm_sched_entity *entity;
	uint32_t credits;
	bool armed;                     /* the fences are initialised */
	bool dep_armed;                 /* dep_cb is on a dependency */
	bool done;                      /* off the ring, waits for free */
	bool killed;                    /* its entity is gone: -ESRCH */
	struct ttm_fence *scheduled;    /* ttm_sched_job_scheduled() */
	struct ttm_fence *finished;     /* ttm_sched_job_finished() */
	struct ttm_sched_dep *deps;     /* references, deps[next_dep..] left */
	unsigned int n_deps, max_deps, next_dep;
	struct ttm_fence_cb dep_cb;     /* on deps[next_dep] */
	struct ttm_fence *hw_fence;     /* run_job's, once running */
	struct ttm_fence_cb hw_cb;
	int error;                      /* for the finished fence */
	uint8_t recovery;               /* ttm_sched_stop() to _start() */
	uint64_t deadline_ns;           /* timeout, while running */
	struct ttm_sched_job *next;     /* entity queue, pending or done */
	struct ttm_sched_job *prev;     /* pending list */
};

/**
 * ttm_sched_err_ptr() - an error as a fence pointer, for run_job.
 * @error: a negative errno.
 *
 * Context: Does not sleep.
 * Return: a pointer that ttm_sched_is_err() recognises.
 */
static inline struct ttm_fence *ttm_sched_err_ptr(int error)
{
	return (struct ttm_fence *)(intptr_t)error;
}

/**
 * ttm_sched_is_err() - is @fence an error pointer?
 * @fence: what run_job returned.
 *
 * Context: Does not sleep.
 * Return: true for ttm_sched_err_ptr() values.
 */
static inline bool ttm_sched_is_err(const struct ttm_fence *fence)
{
	return (uintptr_t)fence >= (uintptr_t)-4095;
}

/**
 * ttm_sched_create() - create a scheduler for one ring and start it.
 * @options: name, credit limit, timeout, backend and clock.
 * @ret_sched: the new scheduler.
 *
 * Context: May sleep: on the virtual clock it waits for a concurrent
 * ttm_gpu_advance() to join the GPU's clock (so not from the ops of a
 * scheduler on that clock). In real time it starts the scheduler's
 * thread and does not sleep. The thread inherits the caller's
 * scheduling policy, then switches to SCHED_BATCH if that is the
 * default SCHED_OTHER (a real-time or idle policy is kept) and the
 * environment does not say TTMSIM_SCHED_BATCH=0.
 * Return: 0 and *@ret_sched; -EINVAL for missing ops or a zero credit
 * limit; -ENOMEM; -EAGAIN (no thread).
 */
int ttm_sched_create(const struct ttm_sched_options *options,
		     struct ttm_sched **ret_sched);

/**
 * ttm_sched_destroy() - wait for the ring to drain, then stop and free.
 * @sched: the scheduler, or NULL.
 *
 * Every entity must have been destroyed. Waits until every job handed to
 * run_job has finished (so the driver must make its hardware fences
 * signal, resetting if need be) and free_job has been called for it (and
 * for the killed jobs still waiting for their turn), then joins the
 * thread. On the virtual clock, waiting is letting virtual time pass: it
 * advances the GPU's clock event by event (every job and scheduler on it
 * progresses) until this ring is drained, and stops at that event's time;
 * if nothing is left to happen on the GPU, it waits for the hardware
 * fences that others signal. Then it leaves the GPU's clock.
 *
 * Context: May sleep. Not from a fence callback nor from the ops (of any
 * scheduler on the same virtual clock).
 */
void ttm_sched_destroy(struct ttm_sched *sched);

/**
 * ttm_sched_entity_create() - a queue of jobs with a priority.
 * @sched: the scheduler it feeds.
 * @priority: one of enum ttm_sched_priority.
 * @ret_entity: the new entity.
 *
 * Jobs of one entity run in the order they were pushed; entities of one
 * priority take turns (round-robin), and a higher priority goes first.
 *
 * Context: Does not sleep. Takes and releases the scheduler's lock.
 * Return: 0 and *@ret_entity; -EINVAL for a bad priority; -ENOMEM.
 */
int ttm_sched_entity_create(struct ttm_sched *sched,
			    enum ttm_sched_priority priority,
			    struct ttm_sched_entity **ret_entity);

/**
 * ttm_sched_entity_destroy() - flush an entity, kill what is left, free.
 * @entity: the entity, or NULL.
 * @timeout_ns: how long to wait for its queue to drain; 0 kills at once.
 *
 * As the kernel's drm_sched_entity_destroy(): first waits up to
 * @timeout_ns for the queued jobs to be handed to the ring; the jobs still
 * queued then are killed: run_job is never called for them, their
 * scheduled fences signal and their finished fences signal -ESRCH (the
 * context is gone), in order and only once the last job the entity
 * handed to the ring has finished, so that nothing queued after it
 * completes before it; then free_job is called for each. Jobs already on
 * the ring finish normally. If that last job has finished already (or
 * there was none), all this happens before the call returns, free_job in
 * the calling thread; else later, in the scheduler's thread (on the
 * virtual clock: in a ttm_gpu_advance(), or ttm_sched_destroy()).
 *
 * On the virtual clock @timeout_ns is virtual time: the GPU's clock
 * advances event by event until the queue has reached the ring or the
 * timeout has passed, and stops at the last event's time (it does not
 * jump to the end of the timeout when nothing happens before it).
 *
 * Context: May sleep. Not from a fence callback nor from the ops (of any
 * scheduler on the same virtual clock).
 */
void ttm_sched_entity_destroy(struct ttm_sched_entity *entity,
			      uint64_t timeout_ns);

/**
 * ttm_sched_job_init() - prepare a job for @entity.
 * @job: the job, in the driver's memory.
 * @entity: where it will be pushed.
 * @credits: its share of the ring's credit limit; at least 1, clamped to
 *	the limit.
 *
 * Allocates the scheduled and finished fences (not yet armed).
 *
 * Context: Does not sleep.
 * Return: 0; -EINVAL for 0 credits; -ENOMEM.
 */
int ttm_sched_job_init(struct ttm_sched_job *job,
		       struct ttm_sched_entity *entity, uint32_t credits);

/**
 * ttm_sched_job_add_dependency() - make @job wait for @fence.
 * @job: an initialised job, not yet pushed.
 * @fence: a fence of any scheduler or timeline; the call takes over the
 *	caller's reference, even on error.
 *
 * A dependency that signals with an error fails the job: its finished
 * fence gets that error and run_job is not called, even if a later
 * fence of the same context is added too (it does not carry the earlier
 * one's error, so both are kept).
 *
 * Context: Does not sleep.
 * Return: 0, or -ENOMEM.
 */
int ttm_sched_job_add_dependency(struct ttm_sched_job *job,
				 struct ttm_fence *fence);

/**
 * ttm_sched_job_add_dependency_flags() - make @job wait for @fence, how
 * @flags say.
 * @job: an initialised job, not yet pushed.
 * @fence: as for ttm_sched_job_add_dependency(); the caller's reference
 *	is taken over, even on error.
 * @flags: 0 (the fence's error fails the job, as
 *	ttm_sched_job_add_dependency()) or TTM_SCHED_DEP_ORDER (ordering
 *	only: the job waits, then runs whatever the fence's error).
 *
 * Of two fences of one context, the later one replaces the earlier only
 * if the earlier was added with TTM_SCHED_DEP_ORDER: an error the job
 * must fail on is never dropped. The same fence added twice fails the job
 * on error unless both times were TTM_SCHED_DEP_ORDER.
 *
 * Context: Does not sleep.
 * Return: 0; -EINVAL for an unknown flag; -ENOMEM.
 */
int ttm_sched_job_add_dependency_flags(struct ttm_sched_job *job,
				       struct ttm_fence *fence,
				       unsigned int flags);

/**
 * ttm_sched_job_arm() - give the job its place on the entity's timeline.
 * @job: an initialised job.
 *
 * From now on its finished fence may be published (in reservations,
 * syncobjs) and the job must be pushed: there is no way back.
 *
 * Context: Does not sleep.
 */
void ttm_sched_job_arm(struct ttm_sched_job *job);

/**
 * ttm_sched_entity_push_job() - queue an armed job on its entity.
 * @job: the job; the scheduler owns it until free_job.
 *
 * Context: Does not sleep. Takes and releases the scheduler's lock. Any
 * thread, the ops included; not concurrently with
 * ttm_sched_entity_destroy() of the same entity.
 */
void ttm_sched_entity_push_job(struct ttm_sched_job *job);

/**
 * ttm_sched_job_cleanup() - drop the scheduler's state of a job.
 * @job: an initialised job: from free_job, or one never armed.
 *
 * Puts the dependencies, the hardware fence and the job's references to
 * its scheduled and finished fences (take your own first to keep them).
 *
 * Context: Does not sleep.
 */
void ttm_sched_job_cleanup(struct ttm_sched_job *job);

/**
 * ttm_sched_job_scheduled() - the fence that signals at run_job.
 * @job: an initialised job.
 *
 * Context: Does not sleep.
 * Return: the fence, without a new reference.
 */
struct ttm_fence *ttm_sched_job_scheduled(struct ttm_sched_job *job);

/**
 * ttm_sched_job_finished() - the fence that signals when the job is done.
 * @job: an initialised job.
 *
 * It carries the hardware fence's error, or -ESRCH, or a failed
 * dependency's error, or run_job's.
 *
 * Context: Does not sleep.
 * Return: the fence, without a new reference.
 */
struct ttm_fence *ttm_sched_job_finished(struct ttm_sched_job *job);

/*
 * The callback backend (sched/sched_cb.c): a job's payload is a C
 * function of the driver's, run on one of the backend's worker threads
 * (a CPU "shader"). Entities, priorities, dependencies and credits work
 * as with any backend; the jobs of one entity run one after the other, in
 * order, while jobs of different entities may run at once on different
 * workers. See docs/sched-design.md, "The callback backend".
 */

/**
 * typedef ttm_sched_cb_fn - the payload of a callback-backend job.
 * @job: the scheduler's job (for ttm_sched_job_finished() and the like).
 * @data: ttm_sched_cb_args.data.
 *
 * Context: May sleep, holding up its worker. Runs in a worker thread of
 * the backend; or, on a deterministic GPU, in the thread in
 * ttm_gpu_advance() (then it must not advance or destroy that GPU).
 * Return: 0, or a negative errno that the job's finished fence carries
 * (positive values count as 0).
 */
typedef int ttm_sched_cb_fn(struct ttm_sched_job *job, void *data);

/**
 * struct ttm_sched_cb_args - one job for ttm_sched_cb_submit().
 * @fn: the payload; mandatory.
 * @data: handed to @fn and @release.
 * @release: called once when the job is freed, whether @fn ran or not
 *	(the entity was destroyed first); NULL if @data needs nothing.
 *	Runs in the scheduler's thread or the one destroying the entity.
 * @deps: fences to wait for before @fn runs (any scheduler, containers,
 *	syncobj points through ttm_syncobj_find_fence()); borrowed: the
 *	call takes its own references. A dependency's error fails the job
 *	without running @fn.
 * @n_deps: how many in @deps.
 * @credits: the job's credits; 0 means 1.
 */
struct ttm_sched_cb_args {
	ttm_sched_cb_fn *fn;
	void *data;
	void (*release)(void *data);
	struct ttm_fence *const *deps;
	unsigned int n_deps;
	uint32_t credits;
};

/**
 * ttm_sched_cb_create() - a scheduler whose jobs are C functions.
 * @options: as for ttm_sched_create(), but @options->ops must be NULL
 *	(the backend supplies them); no timedout_job: a function cannot be
 *	interrupted, so set no timeout.
 * @n_workers: worker threads, 1 to 64; ignored (no workers) when
 *	@options->gpu is deterministic: @fn then runs inline in run_job,
 *	inside ttm_gpu_advance(), so runs are reproducible.
 * @ret_sched: the new scheduler; ttm_sched_destroy() destroys it and
 *	joins the workers.
 *
 * Context: Does not sleep. Starts the workers and the scheduler's thread.
 * Return: 0 and *@ret_sched; -EINVAL for non-NULL ops or a bad
 * @n_workers; what ttm_sched_create() returns; -ENOMEM; -EAGAIN.
 */
int ttm_sched_cb_create(const struct ttm_sched_options *options,
			unsigned int n_workers, struct ttm_sched **ret_sched);

/**
 * ttm_sched_cb_submit() - queue a function call on an entity.
 * @entity: an entity of a callback-backend scheduler.
 * @args: the function, its data, dependencies and credits.
 * @ret_finished: a new reference to the job's finished fence, or NULL.
 *
 * Allocates the job, arms and pushes it. On success the job owns
 * @args->data (@args->release frees it); on error nothing was queued and
 * the data stays the caller's. Submissions to one entity must not race
 * (as ttm_sched_job_arm()).
 *
 * Context: Does not sleep. Takes and releases the scheduler's lock.
 * Return: 0; -EINVAL for a missing @fn or an entity of another backend;
 * -ENOMEM.
 */
int ttm_sched_cb_submit(struct ttm_sched_entity *entity,
			const struct ttm_sched_cb_args *args,
			struct ttm_fence **ret_finished);

/*
 * Recovery after a hang, in the spirit of the kernel's drm_sched_stop(),
 * drm_sched_resubmit_jobs() and drm_sched_start(), for a timedout_job op:
 *
 *	ttm_sched_stop(sched);               (the ring's fences ignored)
 *	...reset the "hardware"...
 *	ttm_sched_job_set_guilty(job, -ETIMEDOUT, 0);
 *	ttm_sched_resubmit_jobs(sched);      (run_job again for the others)
 *	ttm_sched_start(sched, -ECANCELED);  (their new fences followed)
 *	return TTM_SCHED_STAT_RESET;
 *
 * See docs/sched-design.md, "Reset and resubmit".
 */

/* ttm_sched_job_set_guilty(): cancel the rest of the job's entity too. */
#define TTM_SCHED_GUILTY_BAN (1u << 0)

/**
 * ttm_sched_stop() - stop following the ring, for a reset.
 * @sched: the scheduler whose timedout_job op is running.
 *
 * Detaches the scheduler from the hardware fences of the jobs on the ring
 * (handed to run_job, not finished): from now on those fences signalling
 * (the driver failing or forgetting them while it resets) no longer
 * finishes the jobs. A job whose fence had already signalled finishes
 * normally. No job is handed to run_job and no timeout fires until
 * ttm_sched_start().
 *
 * Context: May sleep (waits for a hardware fence callback that races
 * with it). Only from @sched's timedout_job op.
 * Return: 0; -EPERM outside @sched's timedout_job op; -EALREADY if
 * already stopped.
 */
int ttm_sched_stop(struct ttm_sched *sched);

/**
 * ttm_sched_job_set_guilty() - blame @job for the hang.
 * @job: a job still on the ring of a stopped scheduler.
 * @error: a negative errno for its finished fence (e.g. -ETIMEDOUT).
 * @flags: 0, or TTM_SCHED_GUILTY_BAN to ban its entity as well: the jobs
 *	of that entity still on the ring fail with -ECANCELED instead of
 *	being resubmitted, and those queued or pushed later fail with
 *	-ECANCELED without run_job (the kernel's guilty context).
 *
 * @job is not resubmitted: ttm_sched_start() finishes it with @error
 * without waiting for its hardware fence. Jobs that depend on its
 * finished fence fail with @error in turn.
 *
 * Context: Does not sleep. Only from the timedout_job op, between
 * ttm_sched_stop() and ttm_sched_start().
 * Return: 0; -EINVAL for a bad @error or @flags; -EPERM outside
 * recovery; -EALREADY if @job is no longer on the ring (it finished
 * before ttm_sched_stop()).
 */
int ttm_sched_job_set_guilty(struct ttm_sched_job *job, int error,
			     unsigned int flags);

/**
 * ttm_sched_resubmit_jobs() - run the innocent jobs of the ring again.
 * @sched: a stopped scheduler.
 *
 * For each job still on the ring, oldest first: a guilty job, or one of a
 * banned entity, is left to fail; every other one is handed to run_job
 * again (the driver sees it a second time; its scheduled fence has
 * signalled already), and the hardware fence it returns replaces the
 * old one, whose reference is dropped. A run_job error fails the job. A
 * driver that re-emits the ring itself, keeping its hardware fences,
 * does not call this: ttm_sched_start() follows the old fences.
 *
 * Context: May sleep (calls run_job). Only from the timedout_job op,
 * between ttm_sched_stop() and ttm_sched_start().
 * Return: how many jobs were handed to run_job again; -EPERM outside
 * recovery.
 */
int ttm_sched_resubmit_jobs(struct ttm_sched *sched);

/**
 * ttm_sched_start() - follow the ring again after a reset.
 * @sched: a stopped scheduler.
 * @error: for the jobs left without a hardware fence and without an
 *	error of their own; 0 means -ECANCELED.
 *
 * Guilty jobs, those of a banned entity and those whose resubmission
 * failed finish now with their error, in ring order; every other job on
 * the ring is followed through its hardware fence (resubmit's, or the
 * old one) with a fresh timeout. Then selection resumes. A timedout_job
 * op that returns with its scheduler still stopped gets this call made
 * for it, with -ECANCELED.
 *
 * Context: May sleep. Only from the timedout_job op, after
 * ttm_sched_stop(). Signals finished fences (their callbacks run here).
 * Return: 0; -EPERM outside recovery.
 */
int ttm_sched_start(struct ttm_sched *sched, int error);
/**
 * ttm_sched_gpu_create() - a scheduler whose ring is an engine of the fake
 * GPU.
 * @gpu: the GPU; must outlive the scheduler.
 * @engine: the engine, below ttm_gpu_engines(@gpu).
 * @options: NULL for the defaults, else as for ttm_sched_create() with
 *	these differences: @ops must be NULL (the backend supplies them);
 *	@gpu must be NULL or @gpu (the scheduler follows @gpu's clock
 *	anyway: the virtual one if @gpu is TTM_GPU_DETERMINISTIC); a NULL
 *	@name is "gpu.engine<N>"; a @credit_limit of 0 is 64 jobs; a
 *	@timeout_ns of 0 is @gpu's hang timeout.
 * @ret_sched: the new scheduler; ttm_sched_destroy() frees it.
 *
 * Each job is a ttm_gpu_submit() on @engine once its dependencies have
 * signalled, one credit per job. A job that runs past the timeout is left
 * to the GPU's hang watchdog, which fails it with -ETIMEDOUT (the finished
 * fence carries it): timedout_job answers TTM_SCHED_STAT_NO_HANG.
 *
 * Context: May sleep, as ttm_sched_create(): on the virtual clock it
 * waits for a concurrent ttm_gpu_advance(), and the scheduler then runs
 * inside ttm_gpu_advance() and must be destroyed before @gpu. In real
 * time it starts the scheduler's thread and does not sleep.
 * Return: 0 and *@ret_sched; -EINVAL for a bad engine or options;
 * -ENOMEM; -EAGAIN.
 */
int ttm_sched_gpu_create(struct ttm_gpu *gpu, unsigned int engine,
			 const struct ttm_sched_options *options,
			 struct ttm_sched **ret_sched);

/**
 * ttm_sched_gpu_submit() - queue a fake-GPU job on an entity.
 * @entity: an entity of a scheduler of ttm_sched_gpu_create().
 * @job: the job; copied. Its @engine is ignored (the scheduler's is
 *	used); each of its @deps becomes a dependency of the scheduler,
 *	ordering only (TTM_SCHED_DEP_ORDER) unless @propagate_error.
 * @ret_finished: a new reference to the job's finished fence, or NULL.
 *
 * The memory of the ranges must stay valid until the finished fence
 * signals. The job runs on the GPU once its dependencies have signalled
 * and the ring has room; a failed dependency fails it unrun, as on the
 * GPU itself. An ordering dependency on a job of the same ring only waits
 * until that job is on the engine (its scheduled fence), whose queue
 * runs it first: the job may reach the engine before it finishes. So
 * does one on a job of another ring of the same GPU: the engine then
 * waits for that job's end (docs/sched-design.md, "Cross-ring
 * dependencies").
 *
 * Context: Does not sleep. Any thread, fence callbacks and the GPU's
 * retire hook included; not concurrently with ttm_sched_entity_destroy()
 * of @entity. Serialised with other submissions to the same ring. In
 * real time the ring's ready jobs may be handed to the GPU, run (see
 * ttm_gpu_submit()) and freed in the calling thread, their fences'
 * callbacks included: hold nothing they take.
 * Return: 0; -EINVAL for a bad entity (not of the fake-GPU backend), op,
 * range, range count or dependency; -ENOMEM.
 */
int ttm_sched_gpu_submit(struct ttm_sched_entity *entity,
			 const struct ttm_gpu_job *job,
			 struct ttm_fence **ret_finished);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_SCHED_H */
