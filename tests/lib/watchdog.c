// SPDX-License-Identifier: MIT
/*
 * Watchdogs that turn a deadlock into a failure instead of a hang: one
 * interrupts a thread stuck in an interruptible wait, the other aborts a
 * run whose workers stopped making progress.
 */
#include "helpers.h"

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	if (!event_wait_for(&w->stop, WAIT_LIMIT_S)) {
		w->fired = true;
		CHECK_INT(ttm_interrupt(w->target), 0);
	}
	return NULL;
}

void watchdog_start(struct watchdog *w)
{
	w->target = NULL;
	CHECK_INT(ttm_interrupt_self(&w->target), 0);
	w->fired = false;
	event_init(&w->stop);
	w->thread = start_thread(watchdog_main, w);
}

bool watchdog_stop(struct watchdog *w)
{
	event_set(&w->stop);
	join_thread(w->thread);
	event_destroy(&w->stop);
	if (w->fired)
		ttm_interrupt_clear();
	ttm_interrupt_token_put(w->target);
	return w->fired;
}

static void *progress_watchdog_main(void *arg)
{
	struct progress_watchdog *wd = arg;
	unsigned long last = __atomic_load_n(wd->progress, __ATOMIC_RELAXED);
	unsigned long now;
	long last_change = now_ns();

	while (!event_wait_for(&wd->stop, 1)) {
		if (wd->tick)
			wd->tick(wd->arg);
		now = __atomic_load_n(wd->progress, __ATOMIC_RELAXED);
		if (now != last) {
			last = now;
			last_change = now_ns();
			continue;
		}
		if (now_ns() - last_change < wd->limit_s * 1000000000L)
			continue;
		wd->stalled(wd->arg);
		fprintf(stderr, "no progress for %d s: deadlock? aborting\n",
			wd->limit_s);
		abort();
	}
	return NULL;
}

void progress_watchdog_start(struct progress_watchdog *wd)
{
	event_init(&wd->stop);
	wd->thread = start_thread(progress_watchdog_main, wd);
}

void progress_watchdog_stop(struct progress_watchdog *wd)
{
	event_set(&wd->stop);
	join_thread(wd->thread);
	event_destroy(&wd->stop);
}
