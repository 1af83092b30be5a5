// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the shrinker (--shrink-ms, or a workload's `shrink MS`). A
 * thread that wakes every period and swaps unpinned buffers out of GTT,
 * then VRAM, to SYSTEM with ttm_device_swapout(), as the kernel's memory
 * shrinker makes TTM give back the pages of idle buffers while drivers
 * keep submitting. Swap-out keeps contents, so every invariant of
 * run_verify() must still hold; what the shrinker moves out, the next job
 * that uses it brings back.
 *
 * The target of a pass is an eighth of the bytes resident unpinned in
 * VRAM and GTT (ttm_device_get_stats(): used - pinned), at least a page.
 * The kernel's shrink_slab() does not ask a shrinker for everything its
 * count_objects() reported either, but for a slice of it that grows with
 * the memory pressure (freeable >> priority, priority going from 12 down
 * to 0); a timer-driven shrinker stands for steady, moderate pressure, so
 * a fixed fraction: a pass empties nothing at once, the LRU order puts the
 * least recently used first, and jobs keep their working set.
 *
 * The shrinker never waits: it only try-locks (ttm_device_swapout()) and
 * its context has no_wait_gpu (its moves are copies queued on the GPU
 * after the buffers' fences), so a stop is taken at once: the thread waits
 * for its next pass on a condition variable that run_shrink_stop()
 * signals. It does not touch run->progress (the watchdog's), nor any
 * thread's busy flag or the in-flight count: it neither keeps the run
 * alive nor hides a deadlock. (Its copies retire on the GPU like every
 * move, but there are only so many: a buffer swapped out stays out until
 * a job brings it back.)
 *
 * Transient errors of a pass (-EBUSY, -EDEADLK, -EAGAIN, -EINTR: none
 * expected from a try-locking, uninterruptible, non-waiting pass) are
 * counted as busy passes. Any other (-ENOMEM, a move's error) is counted
 * as an error and the first is printed: the run goes on, as the kernel's
 * shrinker would just have freed less, and the summary shows the count.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ttmsim/bo.h"
#include "ttmsim/lru.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

/* A pass's target: resident unpinned bytes >> this, at least a page. */
#define SHRINK_TARGET_SHIFT 3
#define SHRINK_TARGET_MIN 4096

struct run_shrink {
	struct run *run;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* CLOCK_MONOTONIC; signalled at stop */
	bool stop;                  /* under @lock */
	/* Only the shrinker thread writes them; read once it is joined. */
	struct run_shrink_stats stats;
};

/* The shrinker of the calling thread: set in the shrinker thread only. */
static __thread struct run_shrink *shrink_self;

/*
 * The device's swap_notify hook: a buffer is about to be swapped out.
 * Eviction to SYSTEM calls it too, in the submitting threads: only the
 * shrinker thread's calls are its swap-outs.
 */
static void shrink_swap_notify(struct ttm_bo *bo, void *data)
{
	(void)bo;
	(void)data;
	if (shrink_self)
		shrink_self->stats.buffers++;
}

const struct ttm_device_funcs run_shrink_funcs = {
	.swap_notify = shrink_swap_notify,
};

/* The bytes a pass asks for; 0 if nothing unpinned is resident. */
static long shrink_target(struct ttm_device *dev)
{
	static const enum ttm_domain limited[] = {
		TTM_DOMAIN_VRAM, TTM_DOMAIN_GTT,
	};
	struct ttm_device_stats st;
	uint64_t resident = 0, target;
	unsigned int i;

	ttm_device_get_stats(dev, &st);
	for (i = 0; i < sizeof(limited) / sizeof(limited[0]); i++) {
		const struct ttm_domain_stats *d = &st.domain[limited[i]];

		if (d->used > d->pinned)
			resident += d->used - d->pinned;
	}
	if (!resident)
		return 0;
	target = resident >> SHRINK_TARGET_SHIFT;
	if (target < SHRINK_TARGET_MIN)
		target = SHRINK_TARGET_MIN;
	return target > LONG_MAX ? LONG_MAX : (long)target;
}

static bool shrink_transient(long err)
{
	return err == -EBUSY || err == -EDEADLK || err == -EAGAIN ||
	       err == -EINTR;
}

static void shrink_pass(struct run_shrink *s)
{
	struct ttm_operation_ctx ctx = { .no_wait_gpu = true };
	long target = shrink_target(s->run->dev), ret;

	if (!target)
		return;
	ret = ttm_device_swapout(s->run->dev, &ctx, target);
	s->stats.passes++;
	if (ret >= 0) {
		s->stats.bytes += (uint64_t)ret;
	} else if (shrink_transient(ret)) {
		s->stats.busy++;
	} else if (s->stats.errors++ == 0) {
		cli_error("shrinker: pass %" PRIu64 ": %s (counted; the run "
			  "goes on)", s->stats.passes, strerror((int)-ret));
	}
}

static void *shrink_main(void *arg)
{
	struct run_shrink *s = arg;
	uint64_t period = (uint64_t)s->stats.period_ms * 1000000u;
	uint64_t next = cli_now_ns() + period;

	shrink_self = s;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct timespec ts = cli_timespec(next);
		uint64_t now;

		while (!s->stop && cli_now_ns() < next)
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->lock);
		shrink_pass(s);
		/* A pass longer than the period: the next after a period. */
		now = cli_now_ns();
		next += period;
		if (next < now)
			next = now + period;
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	shrink_self = NULL;
	return NULL;
}

int run_shrink_start(struct run *run)
{
	struct run_shrink *s;
	pthread_condattr_t attr;
	int ret;

	if (!run->wl.shrink_ms)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		cli_error("cannot start the shrinker: %s", strerror(ENOMEM));
		return CLI_EXIT_FAILURE;
	}
	s->run = run;
	s->stats.period_ms = run->wl.shrink_ms;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&s->thread, NULL, shrink_main, s);
	if (ret) {
		cli_error("cannot start the shrinker: %s", strerror(ret));
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return CLI_EXIT_FAILURE;
	}
	run->shrink = s;
	return 0;
}

void run_shrink_stop(struct run *run)
{
	struct run_shrink *s = run->shrink;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	run->shrink_stats = s->stats;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	run->shrink = NULL;
}
