// SPDX-License-Identifier: MIT
/*
 * ttmsim run: what watches a run from the side.
 *
 * - A signal thread. run_watch_start() blocks SIGINT, SIGTERM and SIGUSR1
 *   in the calling thread, so every thread created afterwards (the GPU's
 *   engines, the submitting threads) inherits the mask and only this
 *   thread sees them, in sigwait(). The first SIGINT or SIGTERM sets
 *   run->stop and run->interrupted and interrupts every thread inside a
 *   submission (ttm_interrupt() on the token it took at its start: its
 *   interruptible wait ends with -EINTR); a second one ends the process with 130 at once. SIGUSR1,
 *   sent by run_watch_stop() with pthread_kill(), ends the thread; one
 *   from outside before that is ignored. The signals stay blocked after
 *   run_watch_stop(): a late Ctrl-C cannot cut the summary short.
 *
 * - The kit's watchdog (watchdog.h), every 100 ms: if run->progress has
 *   not changed for cfg->watchdog_s while a thread still has jobs to
 *   submit or jobs are in flight (and, with jobs in flight, for as long
 *   again as the longest job in flight may run: see watch_grace()),
 *   the report here says which thread waits
 *   on which buffers and who holds them (thread, ticket stamp), and the
 *   process ends with CLI_EXIT_DEADLOCK. Its tick draws the progress bar
 *   on stderr.
 *
 * Both look at the run only once run->start_ns is set (stored with
 * release order after run->threads, run->dev and the rest are ready).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/interrupt.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_mutex.h"
#include "cli.h"
#include "clock.h"
#include "run.h"
#include "watchdog.h"

#define WATCH_TICK_NS 100000000ull  /* 100 ms */
#define WATCH_BAR_CELLS 20
#define WATCH_MAX_LISTED 64         /* buffers named per job */

struct run_watch {
	struct run *run;
	sigset_t signals;
	pthread_t signal_thread;
	bool signal_started;
	struct cli_watchdog *watchdog;
	bool bar;                   /* draw the progress bar */
	bool bar_drawn;             /* a bar is on the line now */
	uint64_t in_flight;         /* GPU jobs, as run_working() saw */
	uint64_t grace_ns;          /* watch_grace()'s last answer */
	int signal_stopping;        /* atomic: SIGUSR1 means "end" */
	uint64_t next_check_ns;     /* --check-every: when next; 0: unset */
};

/* The run has started: its threads and device may be looked at. */
static bool run_started(struct run *run)
{
	return __atomic_load_n(&run->start_ns, __ATOMIC_ACQUIRE) != 0;
}

/* ---- signals ------------------------------------------------------------- */

/*
 * Interrupt every thread inside ttm_execbuf_submit(). A submitting thread
 * stores busy = 1 and then reads run->stop before each submission (both
 * sequentially consistent); this stores run->stop and then reads busy: so
 * either it sees the stop and does not submit, or it is interrupted here.
 */
static void interrupt_busy(struct run *run)
{
	unsigned int i;

	if (!run_started(run) || !run->threads)
		return;
	for (i = 0; i < run->wl.n_threads; i++) {
		struct run_thread *t = &run->threads[i];

		if (__atomic_load_n(&t->busy, __ATOMIC_SEQ_CST) && t->token)
			ttm_interrupt(t->token);
	}
}

static void *signal_main(void *arg)
{
	struct run_watch *w = arg;
	struct run *run = w->run;
	bool first = true;

	for (;;) {
		int sig;

		if (sigwait(&w->signals, &sig))
			continue;
		if (sig == SIGUSR1) {
			if (__atomic_load_n(&w->signal_stopping,
					    __ATOMIC_ACQUIRE))
				return NULL;
			continue;
		}
		if (!first) {
			static const char msg[] =
				"\nttmsim: run: interrupted again, quitting\n";

			/* write(): stdio may be locked by a stuck thread. */
			if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
				/* nothing more to do */
			}
			_exit(130);
		}
		first = false;
		__atomic_store_n(&run->interrupted, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&run->stop, 1, __ATOMIC_SEQ_CST);
		interrupt_busy(run);
	}
}

/* ---- the stall report ---------------------------------------------------- */

/* "thread I" if @tid is submitting thread I (a cli_thread_name_fn). */
static const char *thread_name(void *data, pid_t tid, char *buf,
			       size_t size)
{
	struct run *run = data;
	unsigned int i;

	for (i = 0; i < run->wl.n_threads; i++) {
		struct run_thread *t = &run->threads[i];

		if (__atomic_load_n(&t->tid, __ATOMIC_RELAXED) == tid) {
			snprintf(buf, size, "thread %u", i);
			return buf;
		}
	}
	return NULL;
}

static void print_holder(struct run *run, struct ww_mutex *lock,
			 struct run_thread *self)
{
	pid_t tid = ww_mutex_owner_tid(lock);
	struct ww_acquire_ctx *ctx = ww_mutex_owner_ctx(lock);

	cli_print_holder(tid, "free (just released)", thread_name, run);
	if (!tid)
		return;
	if (tid == __atomic_load_n(&self->tid, __ATOMIC_RELAXED))
		fputs(" (itself)", stderr);
	/*
	 * The holder's context is alive: nothing has moved for seconds, and
	 * a context lives until its submission returns. Only its stamp is
	 * read, and atomically, should it be ending after all.
	 */
	if (ctx)
		fprintf(stderr, ", ticket stamp %lu",
			__atomic_load_n(&ctx->stamp, __ATOMIC_RELAXED));
	else
		fputs(", no ticket", stderr);
}

static void report_thread(struct run *run, struct run_thread *t)
{
	size_t next = __atomic_load_n(&t->next, __ATOMIC_RELAXED);
	bool busy = __atomic_load_n(&t->busy, __ATOMIC_RELAXED);
	pid_t tid = __atomic_load_n(&t->tid, __ATOMIC_RELAXED);
	const struct wl_job *job;
	size_t index;
	unsigned int k, held = 0;

	if (!busy) {
		if (next < t->n_jobs)
			fprintf(stderr, "thread %u (tid %d): not in a "
				"submission, %zu of %zu jobs left\n", t->index,
				(int)tid, t->n_jobs - next, t->n_jobs);
		return;
	}
	if (next >= t->n_jobs)
		return;
	index = t->jobs[next];
	job = &run->wl.jobs[index];
	fprintf(stderr, "thread %u (tid %d): submitting job %zu", t->index,
		(int)tid, index);
	if (job->line)
		fprintf(stderr, " (%s:%u)", run->wl.source ? run->wl.source :
			"workload", job->line);
	fputs(", buffers", stderr);
	for (k = 0; k < job->n_bos && k < WATCH_MAX_LISTED; k++)
		fprintf(stderr, " %s", run->wl.bos[job->bos[k]].name);
	if (job->n_bos > WATCH_MAX_LISTED)
		fprintf(stderr, " and %u more", job->n_bos - WATCH_MAX_LISTED);
	fputc('\n', stderr);

	for (k = 0; k < job->n_bos; k++) {
		struct ttm_bo *bo = run->bos ? run->bos[job->bos[k]] : NULL;
		struct ww_mutex *lock;

		if (!bo)
			continue;
		lock = &ttm_bo_resv(bo)->lock;
		if (!ww_mutex_is_locked(lock))
			continue;
		if (++held > WATCH_MAX_LISTED)
			continue;
		fprintf(stderr, "  %s: ", run->wl.bos[job->bos[k]].name);
		print_holder(run, lock, t);
		fputc('\n', stderr);
	}
	if (held > WATCH_MAX_LISTED)
		fprintf(stderr, "  and %u more held buffers\n",
			held - WATCH_MAX_LISTED);
	if (!held)
		fputs("  none of its buffers is reserved\n", stderr);
}

/* The watchdog's report (struct cli_watchdog_ops). */
static void report_stall(void *data, uint64_t stalled_ns)
{
	struct run_watch *w = data;
	struct run *run = w->run;
	unsigned int i;

	if (w->bar_drawn)
		fputs("\r\033[K", stderr);
	if (w->grace_ns)
		cli_error("run: no progress for %.1f s (--watchdog %g, plus "
			  "%.1f s that a job in flight may run): who waits for "
			  "what:", (double)stalled_ns / 1e9,
			  run->cfg->watchdog_s, (double)w->grace_ns / 1e9);
	else
		cli_error("run: no progress for %.1f s (--watchdog %g): %s",
			  (double)stalled_ns / 1e9, run->cfg->watchdog_s,
			  "who waits for what:");
	for (i = 0; i < run->wl.n_threads; i++)
		report_thread(run, &run->threads[i]);
	if (w->in_flight)
		fprintf(stderr, "%" PRIu64 " job%s in flight on the GPU\n",
			w->in_flight, w->in_flight == 1 ? "" : "s");
}

/* Some thread has jobs left (and may submit them), or jobs run. */
static bool run_working(struct run *run, uint64_t *in_flight)
{
	bool stop = __atomic_load_n(&run->stop, __ATOMIC_RELAXED);
	struct ttm_execbuf_stats st;
	unsigned int i;

	*in_flight = 0;
	if (run->dev) {
		ttm_execbuf_get_stats(run->dev, &st);
		*in_flight = st.in_flight;
	}
	if (*in_flight)
		return true;
	for (i = 0; i < run->wl.n_threads; i++) {
		struct run_thread *t = &run->threads[i];

		if (__atomic_load_n(&t->busy, __ATOMIC_RELAXED))
			return true;
		if (!stop && __atomic_load_n(&t->next, __ATOMIC_RELAXED) <
		    t->n_jobs)
			return true;
	}
	return false;
}

/* ---- the progress bar ---------------------------------------------------- */

static void draw_bar(struct run_watch *w, uint64_t now)
{
	struct run *run = w->run;
	struct ttm_execbuf_stats st;
	uint64_t done, total = run->wl.n_jobs;
	char line[128], cells[WATCH_BAR_CELLS + 1];
	unsigned int filled, i;
	double elapsed;

	if (!run->dev)
		return;
	ttm_execbuf_get_stats(run->dev, &st);
	done = st.rejected + st.completed + st.failed;
	filled = total ? (unsigned int)(done * WATCH_BAR_CELLS / total) : 0;
	if (filled > WATCH_BAR_CELLS)
		filled = WATCH_BAR_CELLS;
	for (i = 0; i < WATCH_BAR_CELLS; i++)
		cells[i] = i < filled ? '#' : ' ';
	cells[WATCH_BAR_CELLS] = '\0';
	elapsed = (double)(now - run->start_ns) / 1e9;
	snprintf(line, sizeof(line), "\r[%s] %" PRIu64 "/%" PRIu64
		 " jobs  %.0f jobs/s\033[K", cells, done, total,
		 elapsed > 0 ? (double)done / elapsed : 0.0);
	fputs(line, stderr);
	w->bar_drawn = true;
}

/* ---- what the watchdog asks ---------------------------------------------- */

static bool watch_progress(void *data, uint64_t *ret_count)
{
	struct run_watch *w = data;

	if (!run_started(w->run))
		return false;
	*ret_count = __atomic_load_n(&w->run->progress, __ATOMIC_RELAXED);
	return true;
}

static bool watch_working(void *data)
{
	struct run_watch *w = data;

	return run_working(w->run, &w->in_flight);
}

/*
 * Every retirement is progress (the retire hook counts it, moves too), so
 * while progress stands still the GPU's engines each run the same job, or
 * none, and a job that runs ends within its duration, or its hang timeout
 * if it hangs: that long without progress, with jobs in flight, is the
 * GPU at work, not a stall. (A hang job timing out is progress; before
 * that it is still running.) Only the jobs in flight now count: a long
 * job that is not submitted yet says nothing about this stall. Moves take
 * microseconds (1 us per MiB) and are left out. Scanning every job is
 * fine: it happens only once progress stood still for --watchdog.
 */
static uint64_t watch_grace(void *data)
{
	struct run_watch *w = data;
	const struct run *run = w->run;
	uint64_t hang_ns = (uint64_t)run->cfg->hang_timeout_ms * 1000000;
	uint64_t max = 0;
	size_t j;

	w->grace_ns = 0;
	if (!w->in_flight)
		return 0;
	for (j = 0; j < run->wl.n_jobs; j++) {
		const struct wl_job *job = &run->wl.jobs[j];
		const struct run_job_result *r = &run->results[j];
		uint8_t state = __atomic_load_n(&r->state, __ATOMIC_RELAXED);
		uint64_t ns;

		/* Being submitted counts: it may be queued already. */
		if ((state != RUN_JOB_ACCEPTED &&
		     state != RUN_JOB_SUBMITTING) ||
		    __atomic_load_n(&r->retired, __ATOMIC_RELAXED))
			continue;
		ns = job->op == WL_OP_HANG ? hang_ns :
		     job->duration_us * 1000; /* <= WL_MAX_JOB_US */
		if (ns > max)
			max = ns;
	}
	w->grace_ns = max;
	return max;
}

/*
 * --check-every: the accounting invariant and the execbuf counters mid-run, when the submitters
 * and the GPU are busiest (ttm_device_check() takes the device lock: a
 * consistent snapshot at any time), not only once all is idle.
 */
static void live_check(struct run_watch *w, uint64_t now)
{
	struct run *run = w->run;
	uint64_t period = (uint64_t)(run->cfg->check_every_s * 1e9);
	struct ttm_execbuf_stats st;
	char msg[256];

	if (!period)
		return;
	/* The first: @period after the run's start, not after a tick. */
	if (!w->next_check_ns)
		w->next_check_ns = run->start_ns + period;
	if (now < w->next_check_ns)
		return;
	w->next_check_ns = now + period;
	if (ttm_device_check(run->dev, msg, sizeof(msg))) {
		fprintf(stderr, "ttmsim: invariant: accounting during the "
			"run: %s\n", msg);
		__atomic_add_fetch(&run->live_violations, 1,
				   __ATOMIC_RELAXED);
	}
	/* A consistent snapshot: the counters add up at any time. */
	ttm_execbuf_get_stats(run->dev, &st);
	run_fault_live_check(run, &st);	/* test-only; nothing without */
	if (st.submitted != st.rejected + st.completed + st.failed +
	    st.in_flight) {
		fprintf(stderr, "ttmsim: invariant: during the run, %" PRIu64
			" submitted != %" PRIu64 " rejected + %" PRIu64
			" completed + %" PRIu64 " failed + %" PRIu64
			" in flight\n", st.submitted, st.rejected,
			st.completed, st.failed, st.in_flight);
		__atomic_add_fetch(&run->live_violations, 1,
				   __ATOMIC_RELAXED);
	}
}

static void watch_tick(void *data, uint64_t now)
{
	struct run_watch *w = data;

	live_check(w, now);
	if (w->bar)
		draw_bar(w, now);
}

static const struct cli_watchdog_ops watch_ops = {
	.progress = watch_progress,
	.working = watch_working,
	.grace_ns = watch_grace,
	.report = report_stall,
	.tick = watch_tick,
};

/* ---- start and stop ------------------------------------------------------ */

int run_watch_start(struct run *run)
{
	const struct run_config *cfg = run->cfg;
	struct run_watch *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->run = run;
	w->bar = cfg->progress > 0 ||
		 (cfg->progress < 0 && isatty(STDERR_FILENO));

	sigemptyset(&w->signals);
	sigaddset(&w->signals, SIGINT);
	sigaddset(&w->signals, SIGTERM);
	sigaddset(&w->signals, SIGUSR1);
	run->watch = w;
	ret = pthread_sigmask(SIG_BLOCK, &w->signals, NULL);
	if (ret)
		goto fail;

	ret = pthread_create(&w->signal_thread, NULL, signal_main, w);
	if (ret)
		goto fail;
	w->signal_started = true;
	ret = -cli_watchdog_start(&watch_ops, w, cfg->watchdog_s > 0 ?
				  (uint64_t)(cfg->watchdog_s * 1e9) : 0,
				  WATCH_TICK_NS, &w->watchdog);
	if (ret)
		goto fail;
	return 0;

fail:
	cli_error("run: cannot start the watchdog: %s", strerror(ret));
	run_watch_stop(run);
	return -ret;
}

void run_watch_stop(struct run *run)
{
	struct run_watch *w = run->watch;

	if (!w)
		return;
	cli_watchdog_stop(w->watchdog);
	if (w->bar_drawn)
		fputs("\r\033[K", stderr);
	if (w->signal_started) {
		__atomic_store_n(&w->signal_stopping, 1, __ATOMIC_RELEASE);
		pthread_kill(w->signal_thread, SIGUSR1);
		pthread_join(w->signal_thread, NULL);
	}
	free(w);
	run->watch = NULL;
}
