// SPDX-License-Identifier: MIT
/*
 * Actors: threads that run one step at a time for the main thread, and
 * the steps that several suites share.
 */
#include "helpers.h"

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	actor_fn fn;
	void *fn_arg;
	int ret;

	pthread_mutex_lock(&a->mutex);
	for (;;) {
		while (!a->fn && !a->quit)
			pthread_cond_wait(&a->cond, &a->mutex);
		if (!a->fn)
			break;
		fn = a->fn;
		fn_arg = a->arg;
		pthread_mutex_unlock(&a->mutex);
		ret = fn(a, fn_arg);
		pthread_mutex_lock(&a->mutex);
		a->ret = ret;
		a->fn = NULL;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->mutex);
	return NULL;
}

bool actor_post(struct actor *a, actor_fn fn, void *arg)
{
	bool idle;

	pthread_mutex_lock(&a->mutex);
	idle = !a->fn;
	if (idle) {
		a->fn = fn;
		a->arg = arg;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->mutex);
	return CHECK_MSG(idle, "actor %d still busy with an earlier step",
			 (int)a->tid);
}

bool actor_wait(struct actor *a)
{
	struct timespec limit;
	bool idle;

	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += WAIT_LIMIT_S;
	pthread_mutex_lock(&a->mutex);
	while (a->fn &&
	       pthread_cond_timedwait(&a->cond, &a->mutex, &limit) != ETIMEDOUT)
		;
	idle = !a->fn;
	pthread_mutex_unlock(&a->mutex);
	return idle;
}

bool actor_busy(struct actor *a)
{
	bool busy;

	pthread_mutex_lock(&a->mutex);
	busy = a->fn != NULL;
	pthread_mutex_unlock(&a->mutex);
	return busy;
}

int actor_ret(struct actor *a)
{
	int ret;

	pthread_mutex_lock(&a->mutex);
	ret = a->ret;
	pthread_mutex_unlock(&a->mutex);
	return ret;
}

int actor_run(struct actor *a, actor_fn fn, void *arg)
{
	if (!actor_post(a, fn, arg))
		return -EBUSY;
	if (!CHECK_MSG(actor_wait(a), "actor %d: step did not finish",
		       (int)a->tid))
		return -ETIMEDOUT;
	return actor_ret(a);
}

/*
 * The actor's first step: its tid, and its interrupt token, so that it can
 * be interrupted from its start (by token or by pthread_t) and none of
 * its waits allocates.
 */
static int act_start(struct actor *a, void *arg)
{
	(void)arg;
	a->tid = test_gettid();
	return ttm_interrupt_self(&a->token);
}

void actor_start(struct actor *a, struct ww_class *cls)
{
	pthread_condattr_t attr;

	memset(a, 0, sizeof(*a));
	a->cls = cls;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&a->mutex, NULL);
	pthread_cond_init(&a->cond, &attr);
	pthread_condattr_destroy(&attr);
	a->thread = start_thread(actor_main, a);
	CHECK_INT(actor_run(a, act_start, NULL), 0);
}

/*
 * An actor still stuck in a step (a lock that never came) cannot be
 * joined, and its stack still points into the test's frame: report it and
 * abort rather than hang until the harness' timeout.
 */
void actor_stop(struct actor *a)
{
	if (!actor_wait(a)) {
		fprintf(stderr, "actor %d is stuck in a step: aborting\n",
			(int)a->tid);
		abort();
	}
	pthread_mutex_lock(&a->mutex);
	a->quit = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->mutex);
	join_thread(a->thread);
	ttm_interrupt_token_put(a->token);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->mutex);
}

int act_init(struct actor *a, void *arg)
{
	(void)arg;
	ww_acquire_init(&a->ctx, a->cls);
	return 0;
}

int act_fini(struct actor *a, void *arg)
{
	(void)arg;
	ww_acquire_fini(&a->ctx);
	return 0;
}

int act_lock(struct actor *a, void *lock)
{
	return ww_mutex_lock(lock, &a->ctx);
}

int act_lock_slow(struct actor *a, void *lock)
{
	ww_mutex_lock_slow(lock, &a->ctx);
	return 0;
}

int act_lock_slow_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_slow_interruptible(lock, &a->ctx);
}

int act_trylock(struct actor *a, void *lock)
{
	return ww_mutex_trylock(lock, &a->ctx);
}

int act_lock_noctx(struct actor *a, void *lock)
{
	(void)a;
	return ww_mutex_lock(lock, NULL);
}

int act_unlock(struct actor *a, void *lock)
{
	(void)a;
	ww_mutex_unlock(lock);
	return 0;
}

int act_interrupt_clear(struct actor *a, void *arg)
{
	(void)a;
	(void)arg;
	return ttm_interrupt_clear();
}
