// SPDX-License-Identifier: MIT
/*
 * Waits for a state that no event announces (a thread queued on a lock or
 * a fence, a counter another thread bumps): polled, yielding the CPU in
 * between, for at most WAIT_LIMIT_S.
 */
#include "helpers.h"

#include "gpu_sim/fence.h" /* a fence's waiter list: white-box */

bool wait_until(bool (*cond)(void *arg), void *arg)
{
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;

	while (!cond(arg)) {
		if (now_ns() > limit)
			return false;
		sched_yield();
	}
	return true;
}

struct waiters {
	struct ww_mutex *lock;
	unsigned int n;
};

static bool has_waiters(void *arg)
{
	const struct waiters *w = arg;

	return ww_mutex_waiter_count(w->lock) >= w->n;
}

bool wait_for_waiters(struct ww_mutex *lock, unsigned int n)
{
	struct waiters w = { lock, n };

	return wait_until(has_waiters, &w);
}

struct int_at_least {
	int *value;
	int n;
};

static bool int_reached(void *arg)
{
	const struct int_at_least *w = arg;

	return __atomic_load_n(w->value, __ATOMIC_ACQUIRE) >= w->n;
}

bool wait_for_int(int *value, int n)
{
	struct int_at_least w = { value, n };

	return wait_until(int_reached, &w);
}

/* White-box: the fence's private list, under its lock. */
unsigned int fence_waiters(struct ttm_fence *f)
{
	struct ttm_fence_cb *cb;
	unsigned int n = 0;

	pthread_mutex_lock(&f->lock);
	for (cb = f->waiters.head; cb; cb = cb->next)
		n++;
	pthread_mutex_unlock(&f->lock);
	return n;
}

struct fence_waiters_arg {
	struct ttm_fence *f;
	unsigned int n;
};

static bool has_fence_waiters(void *arg)
{
	const struct fence_waiters_arg *w = arg;

	return fence_waiters(w->f) >= w->n;
}

bool wait_for_fence_waiters(struct ttm_fence *f, unsigned int n)
{
	struct fence_waiters_arg w = { f, n };

	return wait_until(has_fence_waiters, &w);
}

struct step_or_waiter {
	struct actor *a;
	struct ww_mutex *lock;
};

static bool step_ended_or_waiter(void *arg)
{
	const struct step_or_waiter *s = arg;

	return !actor_busy(s->a) || ww_mutex_waiter_count(s->lock) > 0;
}

bool wait_for_step_or_waiter(struct actor *a, struct ww_mutex *lock)
{
	struct step_or_waiter s = { a, lock };

	return wait_until(step_ended_or_waiter, &s);
}
