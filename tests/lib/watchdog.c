// SPDX-License-Identifier: MIT
/*
 * A watchdog that turns a deadlock into a failure instead of a hang: it
 * interrupts a thread stuck in an interruptible wait.
 */
#include "helpers.h"

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	if (!event_wait_for(&w->stop, WAIT_LIMIT_S)) {
		w->fired = true;
		ttm_interrupt_thread(w->target);
	}
	return NULL;
}

void watchdog_start(struct watchdog *w, pthread_t target)
{
	w->target = target;
	w->fired = false;
	event_init(&w->stop);
	w->thread = start_thread(watchdog_main, w);
}

bool watchdog_stop(struct watchdog *w)
{
	event_set(&w->stop);
	join_thread(w->thread);
	event_destroy(&w->stop);
	if (w->fired && pthread_equal(w->target, pthread_self()))
		ttm_interrupt_clear();
	return w->fired;
}
