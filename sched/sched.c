// SPDX-License-Identifier: MIT
/*
 * The job scheduler (ttmsim/sched.h). All the work that calls the backend
 * (select the next job, run_job, timeouts, free_job) is sched_step(). In
 * real time one thread per scheduler (ring) runs it and sleeps in between;
 * on a deterministic GPU's virtual clock ttm_gpu_advance() runs it, as a
 * clock client, at every event time. Everything else (push, dependency and
 * hardware fence callbacks) only queues state under the scheduler's lock
 * and wakes the thread.
 *
 * Rule: the scheduler's lock is never held while calling out (backend ops,
 * fence signalling, fence status polls or callback registration, which may
 * run a driver's fence ops). Design: docs/sched-design.md.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/fence.h"
#include "sched/sched.h"
#include "util/compiler.h"
#include "util/sched_batch.h"
#include "gpu_sim/fence.h"
#include "gpu_sim/gpu.h"
#include "ttmsim/sched.h"

/* A dependency of a job: a reference, and TTM_SCHED_DEP_* flags. */
struct ttm_sched_dep {
	struct ttm_fence *fence;
	unsigned int flags;
};

struct ttm_sched_entity {
	struct ttm_sched *sched;
	enum ttm_sched_priority priority;
	/* The run queue of @priority: a circular list, under sched->lock. */
	struct ttm_sched_entity *rq_next, *rq_prev;
	/* Queued jobs, oldest first, under sched->lock. */
	struct ttm_sched_job *q_head, *q_tail;
	/* The thread is looking at the head job without the lock. */
	bool busy;
	/* Being destroyed: never selected again. */
	bool dead;
	/* Guilty with TTM_SCHED_GUILTY_BAN: its jobs fail -ECANCELED. */
	bool banned;
	uint64_t context;       /* scheduled; finished is context + 1 */
	uint64_t seqno;         /* the last armed job's */
	/* The finished fence of the last job handed to the ring; lock. */
	struct ttm_fence *last_scheduled;
};

struct ttm_sched {
	struct sched_name *name; /* shared with the fences */
	uint32_t credit_limit;
	uint64_t timeout_ns;
	const struct ttm_sched_backend_ops *ops;

	pthread_mutex_t lock;
	pthread_cond_t wake;    /* the thread: work, or a deadline */
	pthread_cond_t idle;    /* destroyers: progress was made */
	pthread_t thread;
	bool stop;
	bool no_timeouts;       /* timedout_job said ENODEV */
	/* The virtual clock's GPU (no thread), or NULL for real time. */
	struct ttm_gpu *gpu;
	struct gpu_clock_client clock;
	/* Killed jobs not yet freed (waiting for their turn to signal). */
	unsigned int n_killed;
	/* Recovery: who may call it (timedout_job), and whether it did. */
	bool in_timedout;
	pthread_t timedout_thread;
	bool stopped;           /* ttm_sched_stop() until ttm_sched_start() */

	/* The entity each priority tries first (round-robin cursor). */
	struct ttm_sched_entity *rq[TTM_SCHED_PRIORITY_COUNT];
	unsigned int n_entities;
	uint32_t in_flight;     /* credits of the pending jobs */
	/* Handed to run_job, not finished: oldest first. */
	struct ttm_sched_job *pending_head, *pending_tail;
	/* Finished, waiting for free_job in the thread. */
	struct ttm_sched_job *done_head, *done_tail;
	uint64_t done_seq;      /* jobs ever put on the done list */
	/* A backend's own state (sched_set_backend()). */
	void *backend;
	void (*backend_release)(void *data);

	/*
	 * sched_set_direct(): submitters may run a ready job themselves, and
	 * finished jobs are freed in batches (docs/sched-design.md,
	 * "Submitter-run jobs"). Real time only.
	 */
	bool direct;
	/* sched_set_in_order(): same-ring ordering deps wait for scheduled. */
	bool in_order;
	/* A job is between its pop and the return of its run_job. */
	bool running;
	/* The thread found work but a direct run held @running. */
	bool run_wanted;
	unsigned int n_queued;  /* jobs on the entities' queues */
	unsigned int n_done;    /* jobs on the done list */
	bool draining;          /* ttm_sched_destroy() waits for the ring */
	/* What the sleeping thread waits for: its deadline, or 0 (awake). */
	uint64_t sleep_until;
	/* Jobs ever started; what the thread saw when it last slept. */
	uint64_t started_seq, started_seen;
	/* A ready head job waits for credits: a finished job wakes us. */
	bool credit_blocked;
	/*
	 * A pusher's direct run holds the ring and frees the done list once
	 * its run_job has returned (sched_job_run_direct()).
	 */
	bool direct_frees;
};

/* Finished jobs a direct scheduler lets wait for one free_job wake-up. */
#define SCHED_FREE_BATCH 32
/*
 * A direct scheduler's thread, while its ring is in use, wakes this often
 * by itself to free finished jobs, rather than be woken for them.
 */
#define SCHED_DIRECT_TICK_NS 10000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Now on the scheduler's clock: virtual us as ns, or CLOCK_MONOTONIC. */
static uint64_t sched_now_ns(struct ttm_sched *s)
{
	return s->gpu ? ttm_gpu_now_us(s->gpu) * 1000 : now_ns();
}

static void abs_time(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

/* List helpers; all under sched->lock. */
static void done_append(struct ttm_sched *s, struct ttm_sched_job *job)
{
	job->next = NULL;
	if (s->done_tail)
		s->done_tail->next = job;
	else
		s->done_head = job;
	s->done_tail = job;
	s->done_seq++;
	s->n_done++;
	/*
	 * A direct scheduler frees in batches, and its next direct run frees
	 * what is done: it wakes the thread only for a full batch, a job
	 * waiting for the credits given back, a killed job, or
	 * ttm_sched_destroy() waiting for the ring to drain. A ring going
	 * idle does not: the thread's tick (SCHED_DIRECT_TICK_NS) frees
	 * what no direct run did. Unless the thread sleeps without one (the
	 * ring was unused when it slept): then nothing would free the job
	 * (a callback's or a pusher's run frees nothing after it) until the
	 * next push, so the first done job wakes it, once per idle spell,
	 * unless a pusher's direct run is about to free it.
	 */
	if (!s->direct || s->n_done >= SCHED_FREE_BATCH || s->credit_blocked ||
	    job->killed || s->draining ||
	    (s->sleep_until == UINT64_MAX && !s->direct_frees)) {
		s->credit_blocked = false;
		pthread_cond_signal(&s->wake);
	}
	/* A virtual scheduler's destroy may wait for another thread's. */
	if (s->gpu)
		pthread_cond_broadcast(&s->idle);
}

static void pending_append(struct ttm_sched *s, struct ttm_sched_job *job)
{
	job->next = NULL;
	job->prev = s->pending_tail;
	if (s->pending_tail)
		s->pending_tail->next = job;
	else
		s->pending_head = job;
	s->pending_tail = job;
}

static void pending_remove(struct ttm_sched *s, struct ttm_sched_job *job)
{
	if (job->prev)
		job->prev->next = job->next;
	else
		s->pending_head = job->next;
	if (job->next)
		job->next->prev = job->prev;
	else
		s->pending_tail = job->prev;
	job->next = job->prev = NULL;
}

/* A job's end, without the lock: its finished fence (0: now). */
static void job_signal_finished(struct ttm_sched_job *job, int error,
				uint64_t timestamp_ns)
{
	if (!error)
		error = job->error;
	fence_signal_timestamp(job->finished, error < 0 ? error : 0,
			       timestamp_ns);
}

/*
 * A job's end, after job_signal_finished(): the job off the pending
 * list, its credits back, on the done list for free_job. Called with the
 * lock held.
 */
static void job_end_locked(struct ttm_sched *s, struct ttm_sched_job *job)
{
	pending_remove(s, job);
	job->done = true;
	s->in_flight -= job->credits;
	done_append(s, job);
}

/*
 * The job left the ring, failed by ttm_sched_start() (the hardware fence
 * path is hw_fence_cb()): signal its finished fence, now, give its
 * credits back, queue it for free_job.
 */
static void job_done(struct ttm_sched_job *job, int error)
{
	struct ttm_sched *s = job->sched;

	job_signal_finished(job, error, 0);
	pthread_mutex_lock(&s->lock);
	job_end_locked(s, job);
	pthread_mutex_unlock(&s->lock);
}

static void run_ready_or_wake_locked(struct ttm_sched *s);

/*
 * The hardware fence of @job signalled: its finished fence, with the
 * hardware fence's status and time (hw_fence_cb(), or job_hand_over()
 * for one signalled already). Without the lock; job_end_locked() next.
 */
static void job_signal_finished_hw(struct ttm_sched_job *job,
				   struct ttm_fence *fence)
{
	int status = ttm_fence_get_status(fence);
	uint64_t ts = 0, sched_ts;

	/*
	 * The job finished when its hardware fence did: its finished fence
	 * takes that time (dma_fence_signal_timestamp()'s use) rather than
	 * a clock read of its own, one fewer per job. Both fences are on
	 * CLOCK_MONOTONIC; the hardware fence signalled before this runs.
	 */
	ttm_fence_timestamp(fence, &ts);
	/*
	 * Not before the job was scheduled: a hardware fence that run_job
	 * returned already signalled (a driver's completed or shared fence)
	 * carries an older time, and scheduled <= finished must hold.
	 */
	if (ttm_fence_timestamp(job->scheduled, &sched_ts) == 0 && ts < sched_ts)
		ts = sched_ts;
	job_signal_finished(job, status < 0 ? status : 0, ts);
}

static void hw_fence_cb(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct ttm_sched_job *job = container_of(cb, struct ttm_sched_job,
						 hw_cb);
	struct ttm_sched *s = job->sched;

	job_signal_finished_hw(job, fence);
	pthread_mutex_lock(&s->lock);
	job_end_locked(s, job);
	pthread_mutex_unlock(&s->lock);
}

/* A dependency signalled: the head of its entity may be ready now. */
static void dep_fence_cb(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct ttm_sched_job *job = container_of(cb, struct ttm_sched_job,
						 dep_cb);
	struct ttm_sched *s = job->sched;

	(void)fence;
	pthread_mutex_lock(&s->lock);
	job->dep_armed = false;
	/* Nothing of @job after this: another runner may take it now. */
	run_ready_or_wake_locked(s);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Walk the head job's remaining dependencies, without the lock (status
 * polls and callback registration may run a driver's fence ops). Only the
 * scheduler's thread does this, with entity->busy set, so the job stays.
 * Return: true if all have signalled; false if a callback is armed.
 */
static bool job_deps_signalled(struct ttm_sched_job *job)
{
	struct ttm_sched *s = job->sched;

	while (job->next_dep < job->n_deps) {
		struct ttm_fence *dep = job->deps[job->next_dep].fence;
		int status = ttm_fence_get_status(dep);

		if (!status) {
			pthread_mutex_lock(&s->lock);
			job->dep_armed = true;
			pthread_mutex_unlock(&s->lock);
			if (!ttm_fence_add_callback(dep, &job->dep_cb,
						    dep_fence_cb))
				return false;
			pthread_mutex_lock(&s->lock);
			job->dep_armed = false;
			pthread_mutex_unlock(&s->lock);
			status = ttm_fence_get_status(dep);
		}
		/* An ordering dependency's error is not the job's. */
		if (status < 0 && !job->error &&
		    !(job->deps[job->next_dep].flags & TTM_SCHED_DEP_ORDER))
			job->error = status;
		job->next_dep++;
	}
	return true;
}

/*
 * Step past @job's dependencies that have signalled already, recording
 * an error as job_deps_signalled() does; arms nothing. Only whoever owns
 * the job's dependency walk calls it (the pusher, before the push).
 */
static void job_deps_poll(struct ttm_sched_job *job)
{
	while (job->next_dep < job->n_deps) {
		struct ttm_sched_dep *d = &job->deps[job->next_dep];
		int status = ttm_fence_get_status(d->fence);

		if (!status)
			return;
		if (status < 0 && !job->error &&
		    !(d->flags & TTM_SCHED_DEP_ORDER))
			job->error = status;
		job->next_dep++;
	}
}

/*
 * The next entity to serve, highest priority first, round-robin within
 * one: the first whose head job is not waiting for a dependency and fits
 * in the free credits. A job too big for the free credits lets a smaller
 * one of another entity (even of a lower priority) pass, as in the kernel.
 */
static struct ttm_sched_entity *select_entity(struct ttm_sched *s)
{
	if (s->stopped)
		return NULL;
	/* One run_job at a time: the direct runner wakes us when done. */
	if (s->running) {
		s->run_wanted = s->n_queued != 0;
		return NULL;
	}
	for (int p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++) {
		struct ttm_sched_entity *first = s->rq[p], *e = first;

		if (!e)
			continue;
		do {
			struct ttm_sched_job *job = e->q_head;

			if (job && !e->dead && !job->dep_armed) {
				if (job->credits <= s->credit_limit -
						    s->in_flight)
					return e;
				s->credit_blocked = true;
			}
			e = e->rq_next;
		} while (e != first);
	}
	return NULL;
}

/* Under the lock: the earliest timeout of a running job, or 0. */
static struct ttm_sched_job *first_timeout(struct ttm_sched *s)
{
	struct ttm_sched_job *best = NULL;

	if (!s->timeout_ns || s->no_timeouts || s->stopped)
		return NULL;
	for (struct ttm_sched_job *j = s->pending_head; j; j = j->next)
		if (j->deadline_ns && (!best ||
				       j->deadline_ns < best->deadline_ns))
			best = j;
	return best;
}

/* Called with the lock held, returns with it held. */
static void handle_timeout(struct ttm_sched *s, struct ttm_sched_job *job)
{
	enum ttm_sched_stat stat = TTM_SCHED_STAT_NO_HANG;

	/*
	 * A direct runner may be handing a job over: let it finish, then
	 * start again from the pending list. While we wait the lock is free
	 * and in_timedout is not set, so @job may finish and the runner may
	 * free it with the done list: @job must not be touched after the
	 * wait. (Setting in_timedout before waiting would keep the job, but
	 * the runner would then see a timeout handler that has not called
	 * the driver yet.) sched_step() picks the timeout again if due.
	 */
	if (s->running) {
		while (s->running)
			pthread_cond_wait(&s->idle, &s->lock);
		return;
	}
	if (job->done)
		return;
	/* Not again for this run unless the driver says it still runs. */
	job->deadline_ns = 0;
	s->in_timedout = true;
	s->timedout_thread = pthread_self();
	pthread_mutex_unlock(&s->lock);
	if (s->ops->timedout_job)
		stat = s->ops->timedout_job(job);
	pthread_mutex_lock(&s->lock);
	if (s->stopped) {
		/* The op forgot ttm_sched_start(): the ring must go on. */
		pthread_mutex_unlock(&s->lock);
		ttm_sched_start(s, -ECANCELED);
		pthread_mutex_lock(&s->lock);
	}
	s->in_timedout = false;
	/*
	 * The job is still allocated: it may have finished meanwhile (it is
	 * on the done list then), but nobody frees it. free_job runs in this
	 * thread's sched_step() and in direct runners (sched_job_run_direct(),
	 * sched_run_ready()), and those skip the done list while in_timedout
	 * is set; we hold the lock from here on, so none can take it now.
	 */
	if (stat == TTM_SCHED_STAT_ENODEV)
		s->no_timeouts = true;
	else if (stat == TTM_SCHED_STAT_NO_HANG && !job->done)
		job->deadline_ns = sched_now_ns(s) + s->timeout_ns;
}

/*
 * @job of @e leaves the entity for the ring: credits, timeout, pending
 * list, and the entity's last scheduled fence. Marks the ring @running
 * until the caller's job_hand_over() is over. Called with the lock held.
 * Sets *@start for job_hand_over(): the entity's previous last scheduled
 * fence, to put, and the time of the start if the timeout read the
 * real-time clock: the job is scheduled now, and its scheduled fence
 * takes that time rather than a clock read of its own.
 */
static void job_start_locked(struct ttm_sched *s, struct ttm_sched_entity *e,
			     struct ttm_sched_job *job,
			     struct sched_start *start)
{
	start->now_ns = 0;
	job->deadline_ns = 0;
	if (s->timeout_ns) {
		if (s->gpu) {
			job->deadline_ns = sched_now_ns(s) + s->timeout_ns;
		} else {
			start->now_ns = now_ns();
			job->deadline_ns = start->now_ns + s->timeout_ns;
		}
	}
	s->in_flight += job->credits;
	pending_append(s, job);
	/* What the entity's killed jobs will wait for. */
	start->prev = e->last_scheduled;
	e->last_scheduled = ttm_fence_get(job->finished);
	s->running = true;
	s->started_seq++;
	pthread_cond_broadcast(&s->idle); /* entity flushes */
}

/*
 * The started job's scheduled fence, then run_job (or its failure), and
 * the callback that ends it. Called without the lock.
 * Return: true if the job ended here (a failure, or a hardware fence
 * signalled already, as a submitter-run job's is): its finished fence
 * has signalled, and the caller, which takes the lock next anyway, calls
 * job_end_locked() at once, one lock round trip instead of two.
 */
static bool job_hand_over(struct ttm_sched *s, struct ttm_sched_job *job,
			  const struct sched_start *start)
{
	struct ttm_fence *hw;

	ttm_fence_put(start->prev);
	fence_signal_timestamp(job->scheduled, 0, start->now_ns);
	if (job->error) {
		/* A dependency failed: never runs, fails at once. */
		job_signal_finished(job, job->error, 0);
		return true;
	}
	hw = s->ops->run_job(job);
	if (!hw || ttm_sched_is_err(hw)) {
		job_signal_finished(job, hw ? (int)(intptr_t)hw : -EINVAL, 0);
		return true;
	}
	job->hw_fence = hw;
	if (!ttm_fence_add_callback(hw, &job->hw_cb, hw_fence_cb))
		return false;
	/* Signalled already: hw_fence_cb()'s work, the lock's part left. */
	job_signal_finished_hw(job, hw);
	return true;
}

/*
 * A job started by a thread other than the scheduler's: if one is still
 * on the ring with a timeout the sleeping thread would miss, wake it.
 * After the hand-over, so that a job done at once (a submitter-run NOP)
 * costs no wake-up. Called with the lock held.
 */
static void timeout_wake_locked(struct ttm_sched *s)
{
	struct ttm_sched_job *j = s->pending_head;

	if (j && j->deadline_ns && j->deadline_ns < s->sleep_until)
		pthread_cond_signal(&s->wake);
}

/* Called with the lock held, returns with it held. */
static void run_one(struct ttm_sched *s, struct ttm_sched_entity *e)
{
	struct ttm_sched_job *job = e->q_head;
	struct sched_start start;
	bool ready, ended;

	/*
	 * The ring is held (@running) from here: whoever runs it (the
	 * thread, a submitter, a dependency's callback) is the only one
	 * moving next_dep. A job with no dependency left (most of them)
	 * goes on without letting go of the lock.
	 */
	s->running = true;
	if (job->next_dep < job->n_deps) {
		e->busy = true;
		pthread_mutex_unlock(&s->lock);
		ready = job_deps_signalled(job);
		pthread_mutex_lock(&s->lock);
		e->busy = false;
		pthread_cond_broadcast(&s->idle);
		if (!ready || e->dead) {
			s->running = false;
			pthread_cond_broadcast(&s->idle);
			return;
		}
	}

	e->q_head = job->next;
	if (!e->q_head)
		e->q_tail = NULL;
	s->n_queued--;
	s->rq[e->priority] = e->rq_next; /* the next one's turn */
	/* A guilty context's jobs never reach the hardware again. */
	if (e->banned && !job->error)
		job->error = -ECANCELED;
	job_start_locked(s, e, job, &start);
	pthread_mutex_unlock(&s->lock);
	ended = job_hand_over(s, job, &start);
	pthread_mutex_lock(&s->lock);
	if (ended)
		job_end_locked(s, job);
	s->running = false;
	pthread_cond_broadcast(&s->idle); /* timeouts wait for it */
	timeout_wake_locked(s);
}

/* Jobs a thread other than the scheduler's runs in one go, at most. */
#define SCHED_RUN_READY_MAX 16

/*
 * Run what is ready on a direct ring in the calling thread, as the
 * scheduler's thread would (select_entity(), run_one()): a submitter
 * whose job was queued, a dependency's callback, a submitter-run job's
 * end that saw work queued meanwhile. Not during recovery or destroy, not
 * while another runner holds the ring (it will see the work: run_wanted);
 * then, or after SCHED_RUN_READY_MAX jobs, the thread is woken instead.
 * So the thread's wake-ups are left for timeouts, done batches and
 * recovery (docs/sched-design.md, "Cross-ring dependencies"). Called
 * with the lock held, returns with it held; nothing else of the caller's
 * may be held that a fence callback or run_job takes.
 */
static void run_ready_or_wake_locked(struct ttm_sched *s)
{
	struct ttm_sched_entity *e;
	unsigned int n;

	if (!s->direct || s->stopped || s->stop || s->in_timedout) {
		pthread_cond_signal(&s->wake);
		return;
	}
	if (s->running) {
		s->run_wanted = true;
		return;
	}
	for (n = 0; n < SCHED_RUN_READY_MAX; n++) {
		e = select_entity(s);
		if (!e)
			return;
		run_one(s, e);
		if (s->stopped || s->stop || s->in_timedout)
			break;
	}
	pthread_cond_signal(&s->wake);
}

/*
 * The jobs on the done list: finished ones, or killed ones whose turn has
 * come (see kill_jobs()), which signal now, in order. Then free_job. The
 * whole list at once, for one lock round trip per batch: a busy ring
 * finishes jobs faster than one wake-up each. Jobs that finish meanwhile
 * (a killed one's turn comes when its predecessor signals here) wait for
 * the next batch. Called with the lock held, returns with it held.
 */
static void free_done(struct ttm_sched *s)
{
	struct ttm_sched_job *job = s->done_head, *next;
	unsigned int killed = 0;

	s->done_head = s->done_tail = NULL;
	s->n_done = 0;
	pthread_mutex_unlock(&s->lock);
	for (; job; job = next) {
		next = job->next;
		if (job->killed) {
			ttm_fence_signal(job->scheduled, 0);
			ttm_fence_signal(job->finished, -ESRCH);
			killed++;
		}
		s->ops->free_job(job);
	}
	pthread_mutex_lock(&s->lock);
	s->n_killed -= killed;
	pthread_cond_broadcast(&s->idle);
}

/*
 * One pass of the scheduler's work at the current time, as long as there
 * is some: free done jobs, fire due timeouts, run eligible jobs. Called
 * with the lock held, returns with it held. Sets *@progress if it did
 * any of it.
 * Return: the earliest pending timeout (ns, the scheduler's clock), or
 * UINT64_MAX.
 */
static uint64_t sched_step(struct ttm_sched *s, bool *progress)
{
	for (;;) {
		struct ttm_sched_entity *e;
		struct ttm_sched_job *job;

		if (s->done_head) {
			free_done(s);
			*progress = true;
			continue;
		}
		job = first_timeout(s);
		if (job && job->deadline_ns <= sched_now_ns(s)) {
			handle_timeout(s, job);
			*progress = true;
			continue;
		}
		if (!s->stop) {
			e = select_entity(s);
			if (e) {
				run_one(s, e);
				*progress = true;
				continue;
			}
		}
		return job ? job->deadline_ns : UINT64_MAX;
	}
}

static void *sched_thread(void *arg)
{
	struct ttm_sched *s = arg;
	struct timespec ts;
	uint64_t deadline;
	bool progress;

	/* A wake-up does not preempt the waker (util/sched_batch.h). */
	ttmsim_thread_batch_policy();
	pthread_mutex_lock(&s->lock);
	for (;;) {
		deadline = sched_step(s, &progress);
		if (s->stop)
			break;
		/*
		 * A direct ring in use: wake by the tick to free what is
		 * done and see the timeouts of jobs started by others,
		 * instead of a wake-up per job for either.
		 */
		if (s->direct && (s->pending_head || s->done_head ||
				  s->started_seq != s->started_seen)) {
			uint64_t tick = now_ns() + SCHED_DIRECT_TICK_NS;

			if (tick < deadline)
				deadline = tick;
		}
		s->started_seen = s->started_seq;
		s->sleep_until = deadline;
		if (deadline != UINT64_MAX) {
			abs_time(&ts, deadline);
			pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		} else {
			pthread_cond_wait(&s->wake, &s->lock);
		}
		s->sleep_until = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The clock client of a virtual scheduler: ttm_gpu_advance() calls it. */
static uint64_t sched_clock_step(void *data, uint64_t now_us,
				 bool *progress)
{
	struct ttm_sched *s = data;
	uint64_t deadline;

	(void)now_us; /* the same as ttm_gpu_now_us() during a step */
	pthread_mutex_lock(&s->lock);
	deadline = sched_step(s, progress);
	pthread_mutex_unlock(&s->lock);
	/* Virtual deadlines are whole us (the timeout is rounded up). */
	return deadline == UINT64_MAX ? UINT64_MAX : deadline / 1000;
}

TTM_EXPORT int ttm_sched_create(const struct ttm_sched_options *options,
				struct ttm_sched **ret_sched)
{
	struct ttm_sched *s;
	pthread_condattr_t attr;

	if (!options || !options->ops || !options->ops->run_job ||
	    !options->ops->free_job || !options->credit_limit || !ret_sched)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->name = sched_name_new(options->name ? options->name : "sched");
	if (!s->name) {
		free(s);
		return -ENOMEM;
	}
	s->credit_limit = options->credit_limit;
	s->timeout_ns = options->timeout_ns;
	s->ops = options->ops;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &attr);
	pthread_cond_init(&s->idle, &attr);
	pthread_condattr_destroy(&attr);
	/*
	 * A real-time GPU's clock is real time: the thread follows it. On a
	 * virtual clock, ttm_gpu_advance() steps the scheduler instead, and
	 * the timeout is in whole virtual us (rounded up: never 0 by it).
	 */
	if (options->gpu && gpu_is_virtual(options->gpu)) {
		s->gpu = options->gpu;
		s->timeout_ns = (s->timeout_ns / 1000 +
				 !!(s->timeout_ns % 1000)) * 1000;
		s->clock.step = sched_clock_step;
		s->clock.data = s;
		gpu_clock_client_add(s->gpu, &s->clock);
		*ret_sched = s;
		return 0;
	}
	if (pthread_create(&s->thread, NULL, sched_thread, s)) {
		pthread_cond_destroy(&s->idle);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		sched_name_put(s->name);
		free(s);
		return -EAGAIN;
	}
	*ret_sched = s;
	return 0;
}

/* Under the lock: jobs still to finish or to be freed. */
static bool sched_busy_locked(struct ttm_sched *s)
{
	return s->pending_head || s->done_head || s->n_killed || s->running;
}

static bool sched_busy(void *data)
{
	struct ttm_sched *s = data;
	bool busy;

	pthread_mutex_lock(&s->lock);
	busy = sched_busy_locked(s);
	pthread_mutex_unlock(&s->lock);
	return busy;
}

/*
 * A virtual scheduler drains by letting virtual time pass (its GPU's jobs
 * end, timeouts fire, each step frees what is done), as the real-time one
 * waits. When that finishes nothing (no GPU event is left, and a timeout
 * only said the job still runs), the hardware fences left are someone
 * else's to signal (a driver's fence): wait for that, as the real-time
 * one does, then step again to free them. Never spin the clock from
 * deadline to deadline meanwhile: gpu_clock_run() makes one such jump
 * per call, and a call that finished no job is followed by a wait.
 */
static void sched_drain_virtual(struct ttm_sched *s)
{
	uint64_t seq;

	while (sched_busy(s)) {
		pthread_mutex_lock(&s->lock);
		seq = s->done_seq;
		pthread_mutex_unlock(&s->lock);
		gpu_clock_run(s->gpu, UINT64_MAX, sched_busy, s);
		/*
		 * A job's end (job_end_locked()) or a kill callback of
		 * another thread ends this wait (or that thread's
		 * ttm_gpu_advance() did it all).
		 */
		pthread_mutex_lock(&s->lock);
		while (s->done_seq == seq && sched_busy_locked(s))
			pthread_cond_wait(&s->idle, &s->lock);
		pthread_mutex_unlock(&s->lock);
	}
}

TTM_EXPORT void ttm_sched_destroy(struct ttm_sched *s)
{
	if (!s)
		return;
	if (s->gpu) {
		sched_drain_virtual(s);
		gpu_clock_client_remove(s->gpu, &s->clock);
	} else {
		pthread_mutex_lock(&s->lock);
		/* A direct scheduler's done jobs wait for a wake-up. */
		s->draining = true;
		pthread_cond_signal(&s->wake);
		while (sched_busy_locked(s))
			pthread_cond_wait(&s->idle, &s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	/* The backend's own threads go last: nothing can reach them now. */
	if (s->backend_release)
		s->backend_release(s->backend);
	pthread_cond_destroy(&s->idle);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	sched_name_put(s->name);
	free(s);
}

/* Take @e off its run queue; under the lock. */
static void rq_unlink(struct ttm_sched *s, struct ttm_sched_entity *e)
{
	if (e->rq_next == e) {
		s->rq[e->priority] = NULL;
	} else {
		e->rq_prev->rq_next = e->rq_next;
		e->rq_next->rq_prev = e->rq_prev;
		if (s->rq[e->priority] == e)
			s->rq[e->priority] = e->rq_next;
	}
}

/* Put @e last in the turn order of its run queue; under the lock. */
static void rq_link(struct ttm_sched *s, struct ttm_sched_entity *e)
{
	struct ttm_sched_entity *head = s->rq[e->priority];

	if (head) {
		/* Last in the turn order: just before the cursor. */
		e->rq_next = head;
		e->rq_prev = head->rq_prev;
		head->rq_prev->rq_next = e;
		head->rq_prev = e;
	} else {
		e->rq_next = e->rq_prev = e;
		s->rq[e->priority] = e;
	}
}

int sched_entity_set_priority(struct ttm_sched_entity *e,
			      enum ttm_sched_priority priority)
{
	struct ttm_sched *s = e->sched;

	if ((unsigned int)priority >= TTM_SCHED_PRIORITY_COUNT)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	/* run_one() moves the cursor of e->priority once the walk is done. */
	while (e->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	if (e->priority != priority && !e->dead) {
		rq_unlink(s, e);
		e->priority = priority;
		rq_link(s, e);
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void sched_set_backend(struct ttm_sched *s, void *data,
		       void (*release)(void *data))
{
	s->backend = data;
	s->backend_release = release;
}

void sched_set_direct(struct ttm_sched *s)
{
	/* The thread, already running, reads it under the lock. */
	pthread_mutex_lock(&s->lock);
	s->direct = !s->gpu;
	pthread_mutex_unlock(&s->lock);
}

void sched_set_in_order(struct ttm_sched *s)
{
	s->in_order = true;
}

void sched_set_ring_group(struct ttm_sched *s, const void *group)
{
	sched_name_set_group(s->name, group);
}

struct ttm_fence *sched_group_scheduled_of(struct ttm_sched *s,
					   struct ttm_fence *fence)
{
	return sched_fence_scheduled_in_group(fence, s->name);
}

void *sched_backend(struct ttm_sched *s)
{
	return s->backend;
}

struct ttm_sched *sched_entity_sched(struct ttm_sched_entity *e)
{
	return e->sched;
}

const struct ttm_sched_backend_ops *sched_ops(const struct ttm_sched *s)
{
	return s->ops;
}

TTM_EXPORT int ttm_sched_entity_create(struct ttm_sched *s,
				       enum ttm_sched_priority priority,
				       struct ttm_sched_entity **ret_entity)
{
	struct ttm_sched_entity *e;

	if (!s || !ret_entity || (unsigned int)priority >=
				  TTM_SCHED_PRIORITY_COUNT)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->sched = s;
	e->priority = priority;
	e->context = ttm_fence_context_alloc(2);
	pthread_mutex_lock(&s->lock);
	rq_link(s, e);
	s->n_entities++;
	pthread_mutex_unlock(&s->lock);
	*ret_entity = e;
	return 0;
}

/* A killed job's turn: the job before it has finished. */
static void kill_fence_cb(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct ttm_sched_job *job = container_of(cb, struct ttm_sched_job,
						 hw_cb);
	struct ttm_sched *s = job->sched;

	(void)fence;
	/* Signalled and freed by the scheduler's thread (or step). */
	pthread_mutex_lock(&s->lock);
	done_append(s, job);
	pthread_mutex_unlock(&s->lock);
}

/*
 * As the kernel's drm_sched_entity_kill(): the killed jobs' fences signal
 * in order and only after the last job the entity handed to the ring has
 * finished, so that nothing queued after a kill completes before the work
 * that preceded it. Each job waits for the one before it (its hw_cb is
 * free: it never runs). If that one has already finished, the job goes at
 * once, in the caller, and so do all after it; else the scheduler's thread
 * (or step) signals and frees each in turn. @prev is a reference, taken
 * over.
 */
static void kill_jobs(struct ttm_sched *s, struct ttm_sched_job *job,
		      struct ttm_fence *prev)
{
	struct ttm_sched_job *next;
	struct ttm_fence *finished;
	bool armed;

	for (; job; job = next) {
		next = job->next;
		/* Read under the lock the callback clears it under. */
		pthread_mutex_lock(&s->lock);
		armed = job->dep_armed;
		job->killed = true;
		s->n_killed++;
		pthread_mutex_unlock(&s->lock);
		if (armed) {
			struct ttm_fence *dep = job->deps[job->next_dep].fence;

			/* Its callback must be over before the job goes. */
			if (!ttm_fence_remove_callback(dep, &job->dep_cb))
				ttm_fence_cb_barrier(dep);
		}
		/* The job may be freed as soon as the callback is on. */
		finished = ttm_fence_get(job->finished);
		if (!prev || ttm_fence_add_callback(prev, &job->hw_cb,
						    kill_fence_cb)) {
			ttm_fence_signal(job->scheduled, 0);
			ttm_fence_signal(job->finished, -ESRCH);
			s->ops->free_job(job);
			pthread_mutex_lock(&s->lock);
			s->n_killed--;
			pthread_cond_broadcast(&s->idle);
			pthread_mutex_unlock(&s->lock);
		}
		ttm_fence_put(prev);
		prev = finished;
	}
	ttm_fence_put(prev);
}

/* Has @data (an entity) queued jobs left? */
static bool entity_queued(void *data)
{
	struct ttm_sched_entity *e = data;
	bool queued;

	pthread_mutex_lock(&e->sched->lock);
	queued = e->q_head;
	pthread_mutex_unlock(&e->sched->lock);
	return queued;
}

TTM_EXPORT void ttm_sched_entity_destroy(struct ttm_sched_entity *e,
					 uint64_t timeout_ns)
{
	struct ttm_sched_job *job;
	struct ttm_fence *prev;
	struct ttm_sched *s;
	struct timespec ts;
	uint64_t end;

	if (!e)
		return;
	s = e->sched;
	/*
	 * Virtual clock: the timeout is virtual time, which passes event by
	 * event until the queue has reached the ring (or nothing is left to
	 * happen: then the clock stops there rather than jump to the end).
	 */
	if (s->gpu) {
		if (timeout_ns && entity_queued(e))
			gpu_clock_run(s->gpu, timeout_ns / 1000 +
				      !!(timeout_ns % 1000), entity_queued, e);
		end = 0; /* no real-time wait below */
	} else {
		end = now_ns() + timeout_ns;
		if (end < timeout_ns)
			end = UINT64_MAX;
	}
	pthread_mutex_lock(&s->lock);
	/* Flush: give the queue a chance to reach the ring. */
	while (e->q_head && now_ns() < end) {
		abs_time(&ts, end);
		pthread_cond_timedwait(&s->idle, &s->lock, &ts);
	}
	/* Kill: nothing of it is selected or looked at any more. */
	e->dead = true;
	while (e->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	rq_unlink(s, e);
	s->n_entities--;
	job = e->q_head;
	for (struct ttm_sched_job *j = job; j; j = j->next)
		s->n_queued--;
	e->q_head = e->q_tail = NULL;
	prev = e->last_scheduled;
	e->last_scheduled = NULL;
	pthread_mutex_unlock(&s->lock);

	kill_jobs(s, job, prev);
	free(e);
}

TTM_EXPORT int ttm_sched_job_init(struct ttm_sched_job *job,
				  struct ttm_sched_entity *e, uint32_t credits)
{
	if (!job || !e || !credits)
		return -EINVAL;
	memset(job, 0, sizeof(*job));
	job->sched = e->sched;
	job->entity = e;
	/* The kernel warns and clamps: a bigger job could never run. */
	job->credits = credits < e->sched->credit_limit ?
		       credits : e->sched->credit_limit;
	return sched_fences_alloc(e->sched->name, &job->scheduled,
				  &job->finished);
}

TTM_EXPORT int ttm_sched_job_add_dependency_flags(struct ttm_sched_job *job,
						  struct ttm_fence *fence,
						  unsigned int flags)
{
	struct ttm_sched_dep *deps;
	unsigned int max;

	if (flags & ~TTM_SCHED_DEP_ORDER) {
		ttm_fence_put(fence);
		return -EINVAL;
	}
	if (!fence)
		return 0;
	/*
	 * An ordering dependency on a job of this same in-order ring is met
	 * once that job is on the ring: the ring runs it first and ends it
	 * before starting ours (drm_sched waits for the scheduled fence
	 * too). One whose error fails the job still waits for the finished
	 * fence: the job must not reach the ring before that error is known.
	 */
	if ((flags & TTM_SCHED_DEP_ORDER) && job->sched->in_order) {
		struct ttm_fence *sf = sched_fence_scheduled_of(
			fence, job->sched->name);

		if (sf) {
			ttm_fence_put(fence);
			fence = sf;
		}
	}
	/*
	 * One fence per context would do for ordering (the kernel keeps the
	 * later one), but not for errors: a later fence of a timeline does
	 * not inherit an earlier one's error (a hung job's successor signals
	 * fine), so dropping an earlier fence the job must fail on would
	 * lose that error. So a fence is dropped only if its error is not
	 * wanted (an ordering dependency) and the one kept signals no
	 * earlier; the same fence twice is folded, wanting its error if
	 * either did. Otherwise both are kept.
	 */
	for (unsigned int i = 0; i < job->n_deps; i++) {
		struct ttm_sched_dep *d = &job->deps[i];

		if (ttm_fence_context(d->fence) != ttm_fence_context(fence))
			continue;
		if (ttm_fence_is_later(fence, d->fence)) {
			if (!(d->flags & TTM_SCHED_DEP_ORDER))
				continue;
			ttm_fence_put(d->fence);
			d->fence = fence;
			d->flags = flags;
			return 0;
		}
		if (ttm_fence_is_later(d->fence, fence) &&
		    !(flags & TTM_SCHED_DEP_ORDER))
			continue;
		/* @fence is no later and ordering only, or the same point. */
		if (!ttm_fence_is_later(d->fence, fence))
			d->flags &= flags;
		ttm_fence_put(fence);
		return 0;
	}
	if (job->n_deps == job->max_deps) {
		max = job->max_deps ? 2 * job->max_deps : 4;
		deps = realloc(job->deps, max * sizeof(*deps));
		if (!deps) {
			ttm_fence_put(fence);
			return -ENOMEM;
		}
		job->deps = deps;
		job->max_deps = max;
	}
	job->deps[job->n_deps++] = (struct ttm_sched_dep){ fence, flags };
	return 0;
}

TTM_EXPORT int ttm_sched_job_add_dependency(struct ttm_sched_job *job,
					    struct ttm_fence *fence)
{
	return ttm_sched_job_add_dependency_flags(job, fence, 0);
}

TTM_EXPORT void ttm_sched_job_arm(struct ttm_sched_job *job)
{
	struct ttm_sched_entity *e = job->entity;
	uint64_t seqno;

	/* Arms and pushes of one entity are serialised by its owner. */
	seqno = ++e->seqno;
	sched_fences_arm(job->scheduled, e->context, seqno);
	job->armed = true;
}

/* Queue @job on @e. Called with the lock held. */
static void entity_append_locked(struct ttm_sched *s,
				 struct ttm_sched_entity *e,
				 struct ttm_sched_job *job)
{
	if (e->q_tail)
		e->q_tail->next = job;
	else
		e->q_head = job;
	e->q_tail = job;
	s->n_queued++;
}

/* Queue @job on @e for the thread. Called with the lock held. */
static void entity_queue_locked(struct ttm_sched *s, struct ttm_sched_entity *e,
				struct ttm_sched_job *job)
{
	entity_append_locked(s, e, job);
	pthread_cond_signal(&s->wake);
}

TTM_EXPORT void ttm_sched_entity_push_job(struct ttm_sched_job *job)
{
	struct ttm_sched_entity *e = job->entity;
	struct ttm_sched *s = e->sched;

	job->next = NULL;
	pthread_mutex_lock(&s->lock);
	entity_queue_locked(s, e, job);
	pthread_mutex_unlock(&s->lock);
}

/*
 * May the pushing thread start @job at once? Only on an idle direct
 * scheduler: nothing queued on any entity (so no other job's turn or
 * priority is passed over), no run_job under way (one at a time keeps
 * the entity's order), credits free, no recovery, and every dependency
 * already signalled. Called with the lock held.
 */
static bool direct_ok_locked(struct ttm_sched *s, struct ttm_sched_entity *e,
			     struct ttm_sched_job *job)
{
	return s->direct && !s->n_queued && !s->running && !s->stopped &&
	       !s->stop && !s->in_timedout && !e->dead && !e->busy &&
	       !e->banned && job->next_dep == job->n_deps &&
	       job->credits <= s->credit_limit - s->in_flight;
}

bool sched_entity_arm_push_job_direct(struct ttm_sched_job *job,
				      struct ttm_fence **ret_finished,
				      struct sched_start *ret_start,
				      bool *ret_kick)
{
	struct ttm_sched_entity *e = job->entity;
	struct ttm_sched *s = e->sched;
	bool direct;

	job->next = NULL;
	/*
	 * The job is still the caller's: look at its dependencies without
	 * the lock (a status poll may run a fence's op), as the thread would.
	 */
	if (s->direct)
		job_deps_poll(job);
	pthread_mutex_lock(&s->lock);
	/*
	 * Armed here, not under a lock of the caller's: the seqno order is
	 * the push order, and one lock round trip fewer per job.
	 */
	ttm_sched_job_arm(job);
	/* Before the job is anyone else's: it may be freed once queued. */
	if (ret_finished)
		*ret_finished = ttm_fence_get(job->finished);
	direct = direct_ok_locked(s, e, job);
	if (direct) {
		job_start_locked(s, e, job, ret_start);
		s->direct_frees = true;
	} else if (s->direct) {
		/*
		 * The pusher runs the ring after dropping its locks
		 * (sched_run_ready()), or the runner holding it sees the job.
		 */
		entity_append_locked(s, e, job);
		if (s->running)
			s->run_wanted = true;
		else
			*ret_kick = true;
	} else {
		entity_queue_locked(s, e, job);
	}
	pthread_mutex_unlock(&s->lock);
	return direct;
}

void sched_run_ready(struct ttm_sched *s)
{
	pthread_mutex_lock(&s->lock);
	run_ready_or_wake_locked(s);
	/* A submitter: free what is done, as a submitter-run job does. */
	if (s->done_head && !s->running && !s->in_timedout && !s->stopped) {
		s->running = true;
		free_done(s);
		s->running = false;
		pthread_cond_broadcast(&s->idle);
		if (s->run_wanted) {
			s->run_wanted = false;
			run_ready_or_wake_locked(s);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

void sched_job_run_direct(struct ttm_sched_job *job,
			  const struct sched_start *start)
{
	struct ttm_sched *s = job->sched;
	bool ended = job_hand_over(s, job, start);

	pthread_mutex_lock(&s->lock);
	/* Done at once (a NOP, a failure): on the done list, freed below. */
	if (ended)
		job_end_locked(s, job);
	s->direct_frees = false;
	/*
	 * The jobs done since (usually the ones before this): freed here,
	 * not by a wake-up of the thread per job. Not while a timeout is
	 * being handled: the thread may be looking at one of them.
	 */
	if (s->done_head && !s->in_timedout && !s->stopped)
		free_done(s);
	s->running = false;
	/* Destroyers and timeouts wait for it. */
	pthread_cond_broadcast(&s->idle);
	timeout_wake_locked(s);
	/* Work queued meanwhile: run it here, not by a wake-up. */
	if (s->run_wanted) {
		s->run_wanted = false;
		run_ready_or_wake_locked(s);
	}
	pthread_mutex_unlock(&s->lock);
}

TTM_EXPORT void ttm_sched_job_cleanup(struct ttm_sched_job *job)
{
	for (unsigned int i = 0; i < job->n_deps; i++)
		ttm_fence_put(job->deps[i].fence);
	free(job->deps);
	job->deps = NULL;
	job->n_deps = job->max_deps = job->next_dep = 0;
	ttm_fence_put(job->hw_fence);
	job->hw_fence = NULL;
	if (job->armed) {
		ttm_fence_put(job->scheduled);
		ttm_fence_put(job->finished);
	} else {
		sched_fences_free_unarmed(job->scheduled);
	}
	job->scheduled = job->finished = NULL;
}

TTM_EXPORT struct ttm_fence *ttm_sched_job_scheduled(struct ttm_sched_job *job)
{
	return job->scheduled;
}

TTM_EXPORT struct ttm_fence *ttm_sched_job_finished(struct ttm_sched_job *job)
{
	return job->finished;
}

/*
 * Recovery (ttm_sched_stop() to ttm_sched_start()). It runs in the
 * timedout_job op, so in the only thread that calls run_job and free_job:
 * the jobs of the pending list stay allocated throughout, though hardware
 * fence callbacks of other threads may still move them to the done list
 * until stop has detached them. Each walk therefore restarts from the
 * head under the lock, taking the first job not yet visited; job->recovery
 * says which.
 */
enum {
	JOB_DETACHED = 1 << 0,  /* hw_cb removed by stop */
	JOB_FAIL = 1 << 1,      /* start finishes it with job->error */
	JOB_BAN = 1 << 2,       /* guilty, its context banned */
	JOB_VISITED = 1 << 3,   /* resubmit has dealt with it */
};

/* Under the lock: may the calling thread recover @s now? */
static bool in_recovery(struct ttm_sched *s)
{
	return s->in_timedout && pthread_equal(s->timedout_thread,
					       pthread_self());
}

static struct ttm_sched_job *first_pending(struct ttm_sched *s,
					   uint8_t all, uint8_t none)
{
	for (struct ttm_sched_job *j = s->pending_head; j; j = j->next)
		if ((j->recovery & all) == all && !(j->recovery & none))
			return j;
	return NULL;
}

static uint64_t job_context(struct ttm_sched_job *job)
{
	return ttm_fence_context(job->scheduled);
}

TTM_EXPORT int ttm_sched_stop(struct ttm_sched *s)
{
	struct ttm_sched_job *job;

	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!in_recovery(s)) {
		pthread_mutex_unlock(&s->lock);
		return -EPERM;
	}
	if (s->stopped) {
		pthread_mutex_unlock(&s->lock);
		return -EALREADY;
	}
	s->stopped = true;
	while ((job = first_pending(s, 0, JOB_DETACHED))) {
		struct ttm_fence *hw = job->hw_fence;
		bool removed;

		job->recovery = JOB_DETACHED;
		pthread_mutex_unlock(&s->lock);
		/*
		 * false: the callback has run (a racing one is waited for),
		 * so job_end_locked() has moved the job to the done list.
		 */
		removed = hw && ttm_fence_remove_callback(hw, &job->hw_cb);
		pthread_mutex_lock(&s->lock);
		if (!removed && hw)
			job->recovery = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Under the lock: ban the live entity whose jobs are on @context. */
static void ban_context(struct ttm_sched *s, uint64_t context)
{
	for (int p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++) {
		struct ttm_sched_entity *first = s->rq[p], *e = first;

		if (!e)
			continue;
		do {
			if (e->context == context)
				e->banned = true;
			e = e->rq_next;
		} while (e != first);
	}
}

TTM_EXPORT int ttm_sched_job_set_guilty(struct ttm_sched_job *job,
					int error, unsigned int flags)
{
	struct ttm_sched *s;
	int ret = 0;

	if (!job || error >= 0 || error < -4095 ||
	    (flags & ~TTM_SCHED_GUILTY_BAN))
		return -EINVAL;
	s = job->sched;
	pthread_mutex_lock(&s->lock);
	if (!in_recovery(s) || !s->stopped) {
		ret = -EPERM;
	} else if (!(job->recovery & JOB_DETACHED)) {
		ret = -EALREADY;
	} else {
		job->error = error;
		job->recovery |= JOB_FAIL;
		if (flags & TTM_SCHED_GUILTY_BAN) {
			/*
			 * By context: the entity may be gone while its
			 * jobs are still on the ring.
			 */
			job->recovery |= JOB_BAN;
			ban_context(s, job_context(job));
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Under the lock: is @job of a context a guilty job banned? */
static bool job_banned(struct ttm_sched *s, struct ttm_sched_job *job)
{
	for (struct ttm_sched_job *j = s->pending_head; j; j = j->next)
		if ((j->recovery & JOB_BAN) &&
		    job_context(j) == job_context(job))
			return true;
	return false;
}

TTM_EXPORT int ttm_sched_resubmit_jobs(struct ttm_sched *s)
{
	struct ttm_sched_job *job;
	int n = 0;

	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (!in_recovery(s) || !s->stopped) {
		pthread_mutex_unlock(&s->lock);
		return -EPERM;
	}
	while ((job = first_pending(s, JOB_DETACHED, JOB_VISITED))) {
		struct ttm_fence *old, *hw;

		job->recovery |= JOB_VISITED;
		if (job->recovery & JOB_FAIL)
			continue;
		if (job_banned(s, job)) {
			job->error = -ECANCELED;
			job->recovery |= JOB_FAIL;
			continue;
		}
		old = job->hw_fence;
		job->hw_fence = NULL;
		pthread_mutex_unlock(&s->lock);
		ttm_fence_put(old);
		hw = s->ops->run_job(job);
		n++;
		pthread_mutex_lock(&s->lock);
		if (!hw || ttm_sched_is_err(hw)) {
			job->error = hw ? (int)(intptr_t)hw : -EINVAL;
			job->recovery |= JOB_FAIL;
		} else {
			job->hw_fence = hw;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

TTM_EXPORT int ttm_sched_start(struct ttm_sched *s, int error)
{
	struct ttm_sched_job *job;

	if (!s)
		return -EINVAL;
	if (error >= 0 || error < -4095)
		error = -ECANCELED;
	pthread_mutex_lock(&s->lock);
	if (!in_recovery(s) || !s->stopped) {
		pthread_mutex_unlock(&s->lock);
		return -EPERM;
	}
	while ((job = first_pending(s, JOB_DETACHED, 0))) {
		struct ttm_fence *hw = job->hw_fence;
		bool fail = (job->recovery & JOB_FAIL) || !hw;

		job->recovery = 0;
		if (!fail)
			job->deadline_ns = s->timeout_ns ?
					   sched_now_ns(s) + s->timeout_ns : 0;
		pthread_mutex_unlock(&s->lock);
		if (fail)
			job_done(job, job->error ? job->error : error);
		else if (ttm_fence_add_callback(hw, &job->hw_cb, hw_fence_cb))
			hw_fence_cb(hw, &job->hw_cb);
		pthread_mutex_lock(&s->lock);
	}
	s->stopped = false;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return 0;
}
