// SPDX-License-Identifier: MIT
/* The stall watchdog thread, and the holder line of its reports. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "watchdog.h"

struct cli_watchdog {
	const struct cli_watchdog_ops *ops;
	void *data;
	uint64_t limit_ns, tick_ns;
	pthread_t thread;
	pthread_mutex_t lock;       /* @stopping */
	pthread_cond_t cond;        /* CLOCK_MONOTONIC */
	bool stopping;              /* under @lock */
};

/* Sleep until @deadline or cli_watchdog_stop(); true if stopping. */
static bool watchdog_sleep(struct cli_watchdog *wd, uint64_t deadline)
{
	struct timespec ts = cli_timespec(deadline);
	bool stopping;

	pthread_mutex_lock(&wd->lock);
	while (!wd->stopping &&
	       pthread_cond_timedwait(&wd->cond, &wd->lock, &ts) != ETIMEDOUT)
		;
	stopping = wd->stopping;
	pthread_mutex_unlock(&wd->lock);
	return stopping;
}

static void __attribute__((noreturn)) watchdog_fire(struct cli_watchdog *wd,
						    uint64_t stalled_ns)
{
	fflush(stdout);
	wd->ops->report(wd->data, stalled_ns);
	fflush(stderr);
	/*
	 * Not exit(): the other threads still run (or are stuck), and would
	 * see the process's handlers and destructors run under them.
	 */
	_exit(CLI_EXIT_DEADLOCK);
}

static void *watchdog_main(void *arg)
{
	struct cli_watchdog *wd = arg;
	const struct cli_watchdog_ops *ops = wd->ops;
	uint64_t seen = 0, last_change = 0, deadline = cli_now_ns();
	bool started = false;

	for (;;) {
		uint64_t now, progress;

		deadline += wd->tick_ns;
		if (watchdog_sleep(wd, deadline))
			return NULL;
		now = cli_now_ns();
		if (deadline < now)
			deadline = now;   /* late: do not catch up in a burst */
		if (!ops->progress(wd->data, &progress))
			continue;
		if (!started || progress != seen) {
			started = true;
			seen = progress;
			last_change = now;
		} else if (wd->limit_ns && now - last_change >= wd->limit_ns &&
			   (!ops->working || ops->working(wd->data)) &&
			   (!ops->grace_ns ||
			    now - last_change - wd->limit_ns >=
			    ops->grace_ns(wd->data))) {
			watchdog_fire(wd, now - last_change);
		}
		if (ops->tick)
			ops->tick(wd->data, now);
	}
}

int cli_watchdog_start(const struct cli_watchdog_ops *ops, void *data,
		       uint64_t limit_ns, uint64_t tick_ns,
		       struct cli_watchdog **ret_wd)
{
	struct cli_watchdog *wd;
	pthread_condattr_t attr;
	int ret;

	wd = calloc(1, sizeof(*wd));
	if (!wd)
		return -ENOMEM;
	wd->ops = ops;
	wd->data = data;
	wd->limit_ns = limit_ns;
	wd->tick_ns = tick_ns;
	pthread_mutex_init(&wd->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&wd->cond, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&wd->thread, NULL, watchdog_main, wd);
	if (ret) {
		pthread_cond_destroy(&wd->cond);
		pthread_mutex_destroy(&wd->lock);
		free(wd);
		return -ret;
	}
	*ret_wd = wd;
	return 0;
}

void cli_watchdog_stop(struct cli_watchdog *wd)
{
	if (!wd)
		return;
	pthread_mutex_lock(&wd->lock);
	wd->stopping = true;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
	pthread_join(wd->thread, NULL);
	pthread_cond_destroy(&wd->cond);
	pthread_mutex_destroy(&wd->lock);
	free(wd);
}

void cli_print_holder(pid_t tid, const char *if_free,
		      cli_thread_name_fn *name_of, void *data)
{
	char buf[64];
	const char *name;

	if (!tid) {
		fputs(if_free, stderr);
		return;
	}
	name = name_of(data, tid, buf, sizeof(buf));
	if (name)
		fprintf(stderr, "held by %s", name);
	else
		fprintf(stderr, "held by tid %d", (int)tid);
}
