// SPDX-License-Identifier: MIT
/*
 * What happens when a waiter is woken but another thread takes the lock
 * before it looks (a steal), made deterministic with the test-only hook
 * ttmsim_test_ww_woken() (include/ww/slowpath.h): the woken waiter is held
 * in the hook while the steal happens, then let go.
 *
 *  - hand-over: the woken waiter, beaten to the lock, sets WW_HANDOFF, and
 *    the next unlock gives the lock to it directly: no second steal (both
 *    classes);
 *  - Wound-Wait, the stealer wounds itself: an older waiter holding locks
 *    would have wounded it had it queued after the steal, so the stealer's
 *    next contended lock returns -EDEADLK, without the older waiter having
 *    to wake up and judge it again (it is still held in the hook).
 *
 * No sleeps: every wait is for a condition (lib/helpers.h), bounded so
 * that a broken library fails the test instead of hanging it.
 */
#include "lib/helpers.h"
#include "ww/lockword.h" /* WW_HANDOFF: white-box */
#include "ww/slowpath.h" /* the wake-up hook: white-box */

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

/* ---- the hook: hold the waiters of one lock after their wake-up ------- */

static struct {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	const struct ww_mutex *lock; /* NULL: let everyone through */
	bool hold;
	int woken;                   /* wake-ups seen on @lock */
} hook = {
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

void ttmsim_test_ww_woken(const struct ww_mutex *lock)
{
	pthread_mutex_lock(&hook.mutex);
	if (lock == hook.lock) {
		hook.woken++;
		pthread_cond_broadcast(&hook.cond);
		while (hook.hold && lock == hook.lock)
			pthread_cond_wait(&hook.cond, &hook.mutex);
	}
	pthread_mutex_unlock(&hook.mutex);
}

/* Hold every waiter of @lock that wakes up from now on. */
static void hook_hold(const struct ww_mutex *lock)
{
	pthread_mutex_lock(&hook.mutex);
	hook.lock = lock;
	hook.hold = true;
	hook.woken = 0;
	pthread_mutex_unlock(&hook.mutex);
}

/* Wait, bounded, until a waiter of the held lock woke up (and is held). */
static bool hook_wait_woken(void)
{
	struct timespec limit;
	int ret = 0;
	bool woken;

	clock_gettime(CLOCK_REALTIME, &limit);
	limit.tv_sec += WAIT_LIMIT_S;
	pthread_mutex_lock(&hook.mutex);
	while (!hook.woken && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&hook.cond, &hook.mutex, &limit);
	woken = hook.woken;
	pthread_mutex_unlock(&hook.mutex);
	return woken;
}

/* Let the held waiter go, and every later one through. */
static void hook_release(void)
{
	pthread_mutex_lock(&hook.mutex);
	hook.lock = NULL;
	hook.hold = false;
	pthread_cond_broadcast(&hook.cond);
	pthread_mutex_unlock(&hook.mutex);
}

static bool handoff_flag_set(void *lock)
{
	return ww_word_load(lock) & WW_HANDOFF;
}

/* ---- hand-over ---------------------------------------------------------- */

/*
 * W (a context holding nothing) sleeps on l, which we hold. We unlock l:
 * W is woken, and held in the hook before it looks. We steal l back with a
 * trylock (free, waiters queued: allowed, as in the kernel). W, let go,
 * finds l taken: it was woken and beaten to it, so it sets WW_HANDOFF and
 * sleeps again. Our next unlock must hand l to W directly: W owns l the
 * moment unlock returns, before it even runs, and our trylock fails.
 * Without the hand-over, a waiter could be beaten at every wake-up.
 */
static void test_handoff_after_steal(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex l;
	struct actor w;

	ww_mutex_init(&l, cls);
	actor_start(&w, cls);
	actor_run(&w, act_init, NULL);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	hook_hold(&l);

	actor_post(&w, act_lock, &l);
	CHECK(wait_for_waiters(&l, 1));
	ww_mutex_unlock(&l);
	CHECK_MSG(hook_wait_woken(), "the waiter was not woken by the unlock");
	CHECK_MSG(ww_mutex_trylock(&l, NULL) == 1,
		  "no steal: l not free with a waiter queued");
	hook_release();

	CHECK_MSG(wait_until(handoff_flag_set, &l),
		  "woken waiter beaten to the lock did not set WW_HANDOFF");
	CHECK(actor_busy(&w));
	ww_mutex_unlock(&l);
	/* Handed over: W owns it before it runs, nobody can steal it. */
	CHECK_MSG(ww_mutex_owner_ctx(&l) == &w.ctx,
		  "the unlock did not hand l to the waiter");
	if (!CHECK_INT(ww_mutex_trylock(&l, NULL), 0))
		ww_mutex_unlock(&l);
	if (CHECK(actor_wait(&w)))
		CHECK_INT(actor_ret(&w), 0);
	CHECK(ww_mutex_owner_ctx(&l) == &w.ctx);
	actor_run(&w, act_unlock, &l);
	actor_run(&w, act_fini, NULL);
	actor_stop(&w);
	CHECK(!ww_mutex_is_locked(&l));
	assert_checks_passed();
}

/* ---- Wound-Wait: a stealer wounds itself ------------------------------- */

/*
 * O (older, holding c) sleeps on l, which we hold without a context. We
 * unlock l; O is woken and held in the hook. Y (younger, holding d)
 * steals l with a trylock. O would have wounded Y had it queued after the
 * steal, so Y must be wounded now: its lock of e (uncontended) does not
 * notice, its lock of c (held by O) returns -EDEADLK at once, without
 * queueing. O is still held in the hook: it cannot judge Y and wound it
 * itself; without the self-wound Y would sleep on c while O waits for l.
 * Then O is let go, Y backs off, O gets l by hand-over, both finish.
 */
static int act_steal(struct actor *a, void *lock)
{
	return ww_mutex_trylock(lock, &a->ctx);
}

static int act_lock_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_interruptible(lock, &a->ctx);
}

/* Y's back-off: unlock everything, slow-lock c, relock, unlock, finish. */
static int act_y_backoff(struct actor *a, void *arg)
{
	struct ww_mutex **m = arg; /* c, d, e, l */
	int ret;

	ww_mutex_unlock(m[1]);
	ww_mutex_unlock(m[2]);
	ww_mutex_unlock(m[3]);
	ww_mutex_lock_slow(m[0], &a->ctx);
	ret = ww_mutex_lock(m[1], &a->ctx);
	if (!ret)
		ret = ww_mutex_lock(m[3], &a->ctx);
	if (!ret)
		ret = ww_mutex_lock(m[2], &a->ctx);
	ww_mutex_unlock(m[0]);
	if (ww_mutex_owner_ctx(m[1]) == &a->ctx)
		ww_mutex_unlock(m[1]);
	if (ww_mutex_owner_ctx(m[2]) == &a->ctx)
		ww_mutex_unlock(m[2]);
	if (ww_mutex_owner_ctx(m[3]) == &a->ctx)
		ww_mutex_unlock(m[3]);
	return ret;
}

static void test_ww_steal(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex l, c, d, e;
	struct ww_mutex *ys[4] = { &c, &d, &e, &l };
	struct actor o, y;
	int ret;

	ww_mutex_init(&l, cls);
	ww_mutex_init(&c, cls);
	ww_mutex_init(&d, cls);
	ww_mutex_init(&e, cls);
	actor_start(&o, cls);
	actor_start(&y, cls);
	actor_run(&o, act_init, NULL); /* older */
	actor_run(&y, act_init, NULL);
	CHECK_INT(actor_run(&o, act_lock, &c), 0);
	CHECK_INT(actor_run(&y, act_lock, &d), 0);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	hook_hold(&l);

	actor_post(&o, act_lock, &l);
	CHECK(wait_for_waiters(&l, 1));
	ww_mutex_unlock(&l);
	CHECK_MSG(hook_wait_woken(), "O was not woken by the unlock");
	CHECK_MSG(actor_run(&y, act_steal, &l) == 1,
		  "no steal: l not free with O queued");
	/* Uncontended: a wound is not noticed here. */
	CHECK_INT(actor_run(&y, act_lock, &e), 0);

	actor_post(&y, act_lock_intr, &c);
	CHECK(wait_for_step_or_waiter(&y, &c));
	ret = actor_busy(&y) ? 1 : actor_ret(&y);
	CHECK_MSG(ret == -EDEADLK,
		  "stealer not wounded: its lock of c, held by the older waiter, %s",
		  ret == 1 ? "sleeps (O, held, cannot wound it)" :
		  "returned something else");
	/* Let O go: if Y sleeps on c, O judges it now and wounds it. */
	hook_release();
	if (ret == 1 && CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), -EDEADLK);
	actor_post(&y, act_y_backoff, ys);

	/* O gets l once Y backs off, c is O's all along. */
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	actor_run(&o, act_unlock, &l);
	actor_run(&o, act_unlock, &c);
	actor_run(&o, act_fini, NULL);
	if (CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), 0);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	CHECK(!ww_mutex_is_locked(&l) && !ww_mutex_is_locked(&c) &&
	      !ww_mutex_is_locked(&d) && !ww_mutex_is_locked(&e));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(test_handoff_after_steal),
		CLASS_TEST(test_ww_steal, wound_wait),
	};

	return cmocka_run_group_tests_name("ww_handoff", tests, NULL, NULL);
}
