// SPDX-License-Identifier: MIT
/*
 * One-shot events. Their condition variable runs on CLOCK_MONOTONIC so
 * that a bounded wait does not move with the wall clock.
 */
#include "helpers.h"

void event_init(struct event *e)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&e->mutex, NULL);
	pthread_cond_init(&e->cond, &attr);
	pthread_condattr_destroy(&attr);
	e->set = false;
}

void event_destroy(struct event *e)
{
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->mutex);
}

void event_set(struct event *e)
{
	pthread_mutex_lock(&e->mutex);
	e->set = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->mutex);
}

bool event_wait_for(struct event *e, int seconds)
{
	struct timespec limit;
	bool set;

	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += seconds;
	pthread_mutex_lock(&e->mutex);
	while (!e->set &&
	       pthread_cond_timedwait(&e->cond, &e->mutex, &limit) != ETIMEDOUT)
		;
	set = e->set;
	pthread_mutex_unlock(&e->mutex);
	return set;
}
