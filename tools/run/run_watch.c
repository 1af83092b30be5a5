// SPDX-License-Identifier: MIT
/*
 * ttmsim run: what watches a run from the side.
 *
 * - A signal thread. run_watch_start() blocks SIGINT, SIGTERM and SIGUSR1
 *   in the calling thread, so every thread created afterwards (the GPU's
 *   engines, the submitting threads) inherits the mask and only this
 *   thread sees them, in sigwait(). The first SIGINT or SIGTERM sets
 *   run->stop and run->interrupted and interrupts every thread inside a
 *   submission (ttm_interrupt_thread(): its interruptible wait ends with
 *   -EINTR); a second one ends the process with 130 at once. SIGUSR1,
 *   sent by run_watch_stop() with pthread_kill(), ends the thread; one
 *   from outside before that is ignored. The signals stay blocked after
 *   run_watch_stop(): a late Ctrl-C cannot cut the summary short.
 *
 * - A watchdog thread, every 100 ms: if run->progress has not changed for
 *   cfg->watchdog_s while a thread still has jobs to submit or jobs are in
 *   flight, it prints which thread waits on which buffers and who holds
 *   them (thread, ticket stamp), and ends the process with
 *   CLI_EXIT_DEADLOCK. It also draws the progress bar on stderr.
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
#include <time.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/interrupt.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_mutex.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

#define WATCH_TICK_NS 100000000ull  /* 100 ms */
#define WATCH_BAR_CELLS 20
#define WATCH_MAX_LISTED 64         /* buffers named per job */

struct run_watch {
	struct run *run;
	sigset_t signals;
	pthread_t signal_thread, watchdog_thread;
	bool signal_started, watchdog_started;
	bool bar;                   /* draw the progress bar */
	bool bar_drawn;             /* a bar is on the line now */
	pthread_mutex_t lock;       /* @stopping and @cond */
	pthread_cond_t cond;        /* CLOCK_MONOTONIC */
	bool stopping;              /* under @lock */
	int signal_stopping;        /* atomic: SIGUSR1 means "end" */
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

		if (__atomic_load_n(&t->busy, __ATOMIC_SEQ_CST))
			ttm_interrupt_thread(t->thread);
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

static void print_holder(struct run *run, struct ww_mutex *lock,
			 struct run_thread *self)
{
	pid_t tid = ww_mutex_owner_tid(lock);
	struct ww_acquire_ctx *ctx = ww_mutex_owner_ctx(lock);
	unsigned int i;

	if (!tid) {
		fputs("free (just released)", stderr);
		return;
	}
	for (i = 0; i < run->wl.n_threads; i++) {
		struct run_thread *t = &run->threads[i];

		if (__atomic_load_n(&t->tid, __ATOMIC_RELAXED) == tid)
			break;
	}
	if (i < run->wl.n_threads)
		fprintf(stderr, "held by thread %u%s", i,
			&run->threads[i] == self ? " (itself)" : "");
	else
		fprintf(stderr, "held by tid %d", (int)tid);
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

static void __attribute__((noreturn)) report_stall(struct run_watch *w,
						   uint64_t stalled_ns,
						   uint64_t in_flight)
{
	struct run *run = w->run;
	unsigned int i;

	fflush(stdout);
	if (w->bar_drawn)
		fputs("\r\033[K", stderr);
	cli_error("run: no progress for %.1f s (--watchdog %g): %s",
		  (double)stalled_ns / 1e9, run->cfg->watchdog_s,
		  "who waits for what:");
	for (i = 0; i < run->wl.n_threads; i++)
		report_thread(run, &run->threads[i]);
	if (in_flight)
		fprintf(stderr, "%" PRIu64 " job%s in flight on the GPU\n",
			in_flight, in_flight == 1 ? "" : "s");
	fflush(stderr);
	_exit(CLI_EXIT_DEADLOCK);
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

/* ---- the watchdog thread ------------------------------------------------- */

/* Sleep until @deadline or run_watch_stop(); true if stopping. */
static bool watch_sleep(struct run_watch *w, uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / 1000000000ull),
		.tv_nsec = (long)(deadline % 1000000000ull),
	};
	bool stopping;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping &&
	       pthread_cond_timedwait(&w->cond, &w->lock, &ts) != ETIMEDOUT)
		;
	stopping = w->stopping;
	pthread_mutex_unlock(&w->lock);
	return stopping;
}

static void *watchdog_main(void *arg)
{
	struct run_watch *w = arg;
	struct run *run = w->run;
	uint64_t limit = run->cfg->watchdog_s > 0 ?
		(uint64_t)(run->cfg->watchdog_s * 1e9) : 0;
	uint64_t seen = 0, last_change = 0, deadline = cli_now_ns();
	bool started = false;

	for (;;) {
		uint64_t now, progress, in_flight;

		deadline += WATCH_TICK_NS;
		if (watch_sleep(w, deadline))
			break;
		now = cli_now_ns();
		if (deadline < now)
			deadline = now;   /* late: do not catch up in a burst */
		if (!run_started(run))
			continue;
		progress = __atomic_load_n(&run->progress, __ATOMIC_RELAXED);
		if (!started || progress != seen) {
			started = true;
			seen = progress;
			last_change = now;
		} else if (limit && now - last_change >= limit &&
			   run_working(run, &in_flight)) {
			report_stall(w, now - last_change, in_flight);
		}
		if (w->bar)
			draw_bar(w, now);
	}
	if (w->bar_drawn)
		fputs("\r\033[K", stderr);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------ */

int run_watch_start(struct run *run)
{
	const struct run_config *cfg = run->cfg;
	struct run_watch *w;
	pthread_condattr_t attr;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->run = run;
	w->bar = cfg->progress > 0 ||
		 (cfg->progress < 0 && isatty(STDERR_FILENO));
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);

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
	ret = pthread_create(&w->watchdog_thread, NULL, watchdog_main, w);
	if (ret)
		goto fail;
	w->watchdog_started = true;
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
	if (w->watchdog_started) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->watchdog_thread, NULL);
	}
	if (w->signal_started) {
		__atomic_store_n(&w->signal_stopping, 1, __ATOMIC_RELEASE);
		pthread_kill(w->signal_thread, SIGUSR1);
		pthread_join(w->signal_thread, NULL);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	run->watch = NULL;
}
