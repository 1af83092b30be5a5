// SPDX-License-Identifier: MIT
/*
 * A ww_mutex waiter of a transaction parks as SCHED_BATCH, so that its
 * wake-up does not preempt a running lock holder, and is SCHED_OTHER
 * again once its transaction holds nothing (ww/park_batch.c):
 *
 *  - SCHED_BATCH while parked, still while it holds what it waited for,
 *    SCHED_OTHER after its last unlock;
 *  - interrupted in ww_mutex_lock_interruptible() holding nothing:
 *    SCHED_OTHER at once;
 *  - a thread of another policy (SCHED_IDLE here) is left alone;
 *  - a transaction whose unlock woke a waiter yields at its last unlock
 *    (the flag that says so is set until then, and cleared by the yield);
 *  - with --off (run with TTMSIM_SCHED_BATCH=off, tests/meson.build), a
 *    waiter stays SCHED_OTHER.
 *
 * The actor's policy is read from this thread with sched_getscheduler()
 * on its tid, its parking and its woke flag from its struct ww_thread
 * (white-box: a yield leaves no other trace).
 */
#include <sched.h>

#include "lib/helpers.h"
#include "ww/thread.h" /* white-box: parked */

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

struct policy_of {
	pid_t tid;
	int policy;
};

static bool has_policy(void *arg)
{
	const struct policy_of *p = arg;

	return sched_getscheduler(p->tid) == p->policy;
}

static bool thread_parked(void *arg)
{
	struct ww_thread *t = arg;

	return __atomic_load_n(&t->parked, __ATOMIC_RELAXED);
}

static int act_set_idle(struct actor *a, void *arg)
{
	struct sched_param p = { .sched_priority = 0 };

	(void)a;
	(void)arg;
	return sched_setscheduler(0, SCHED_IDLE, &p) ? -errno : 0;
}

static int act_lock_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_interruptible(lock, &a->ctx);
}

/*
 * The scene of most cases: actor A (run @setup first, if any) holds l0
 * through its context and waits for l1, which we hold without one.
 */
struct scene {
	struct ww_mutex l0, l1;
	struct actor a;
	struct policy_of batch, other, idle;
};

static void scene_start(struct scene *s, struct ww_class *cls,
			actor_fn setup)
{
	ww_mutex_init(&s->l0, cls);
	ww_mutex_init(&s->l1, cls);
	actor_start(&s->a, cls);
	s->batch = (struct policy_of){ .tid = s->a.tid, .policy = SCHED_BATCH };
	s->other = (struct policy_of){ .tid = s->a.tid, .policy = SCHED_OTHER };
	s->idle = (struct policy_of){ .tid = s->a.tid, .policy = SCHED_IDLE };
	if (setup)
		CHECK_INT(actor_run(&s->a, setup, NULL), 0);
	actor_run(&s->a, act_init, NULL);
	CHECK_INT(actor_run(&s->a, act_lock, &s->l0), 0);
	CHECK_INT(ww_mutex_lock(&s->l1, NULL), 0);
	actor_post(&s->a, act_lock, &s->l1);
}

/* Let A have l1. */
static void scene_release(struct scene *s)
{
	ww_mutex_unlock(&s->l1);
	if (CHECK(actor_wait(&s->a)))
		CHECK_INT(actor_ret(&s->a), 0);
}

/* A unlocks l1 and l0 (if @unlock) and ends its transaction. */
static void scene_end(struct scene *s, bool unlock)
{
	if (unlock) {
		actor_run(&s->a, act_unlock, &s->l1);
		actor_run(&s->a, act_unlock, &s->l0);
	}
	actor_run(&s->a, act_fini, NULL);
	actor_stop(&s->a);
	assert_checks_passed();
}

static void test_batch_while_parked(void **state)
{
	struct scene s;

	scene_start(&s, *state, NULL);
	CHECK_MSG(wait_until(has_policy, &s.batch),
		  "a waiter of a transaction did not switch to SCHED_BATCH");
	scene_release(&s);
	CHECK_MSG(has_policy(&s.batch), "SCHED_OTHER again while holding locks");
	actor_run(&s.a, act_unlock, &s.l1);
	CHECK_MSG(has_policy(&s.batch), "SCHED_OTHER again while holding l0");
	actor_run(&s.a, act_unlock, &s.l0);
	CHECK_MSG(has_policy(&s.other),
		  "still SCHED_BATCH after the transaction's last unlock");
	scene_end(&s, false);
}

static void test_interrupted_holding_nothing(void **state)
{
	struct ww_class *cls = *state;
	struct policy_of batch, other;
	struct ww_mutex l0;
	struct actor a;

	ww_mutex_init(&l0, cls);
	actor_start(&a, cls);
	batch = (struct policy_of){ .tid = a.tid, .policy = SCHED_BATCH };
	other = (struct policy_of){ .tid = a.tid, .policy = SCHED_OTHER };
	actor_run(&a, act_init, NULL);
	CHECK_INT(ww_mutex_lock(&l0, NULL), 0);

	actor_post(&a, act_lock_intr, &l0);
	CHECK(wait_until(has_policy, &batch));
	CHECK_INT(ttm_interrupt(a.token), 0);
	if (CHECK(actor_wait(&a)))
		CHECK_INT(actor_ret(&a), -EINTR);
	CHECK_MSG(has_policy(&other),
		  "still SCHED_BATCH after an interrupted wait holding nothing");
	ww_mutex_unlock(&l0);
	actor_run(&a, act_fini, NULL);
	actor_stop(&a);
	assert_checks_passed();
}

static void test_other_policy_left_alone(void **state)
{
	struct scene s;

	scene_start(&s, *state, act_set_idle);
	CHECK(wait_until(thread_parked, s.a.ctx.task));
	CHECK_MSG(has_policy(&s.idle), "a SCHED_IDLE waiter's policy changed");
	scene_release(&s);
	actor_run(&s.a, act_unlock, &s.l1);
	actor_run(&s.a, act_unlock, &s.l0);
	CHECK_MSG(has_policy(&s.idle), "a SCHED_IDLE thread's policy changed");
	scene_end(&s, false);
}

/* A holds l0 and l1; B, waiting for l1, is woken by A's unlock of it. */
static void test_yield_after_waking(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex l0, l1;
	struct actor a, b;

	ww_mutex_init(&l0, cls);
	ww_mutex_init(&l1, cls);
	actor_start(&a, cls);
	actor_start(&b, cls);
	actor_run(&a, act_init, NULL);
	CHECK_INT(actor_run(&a, act_lock, &l0), 0);
	CHECK_INT(actor_run(&a, act_lock, &l1), 0);
	actor_run(&b, act_init, NULL);
	actor_post(&b, act_lock, &l1);
	CHECK(wait_until(thread_parked, b.ctx.task));

	actor_run(&a, act_unlock, &l1);
	CHECK_MSG(a.ctx.task->woke, "an unlock that woke a waiter was not "
		  "noted while the transaction still holds l0");
	if (CHECK(actor_wait(&b)))
		CHECK_INT(actor_ret(&b), 0);
	actor_run(&a, act_unlock, &l0);
	CHECK_MSG(!a.ctx.task->woke,
		  "no yield at the transaction's last unlock");

	actor_run(&b, act_unlock, &l1);
	actor_run(&b, act_fini, NULL);
	actor_run(&a, act_fini, NULL);
	actor_stop(&b);
	actor_stop(&a);
	assert_checks_passed();
}

static void test_off_keeps_other(void **state)
{
	struct scene s;

	scene_start(&s, *state, NULL);
	CHECK(wait_until(thread_parked, s.a.ctx.task));
	CHECK_MSG(has_policy(&s.other), "TTMSIM_SCHED_BATCH=off: the waiter "
		  "left SCHED_OTHER");
	scene_release(&s);
	scene_end(&s, true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(test_batch_while_parked),
		BOTH_CLASSES(test_interrupted_holding_nothing),
		BOTH_CLASSES(test_other_policy_left_alone),
		BOTH_CLASSES(test_yield_after_waking),
	};
	const struct CMUnitTest off[] = {
		BOTH_CLASSES(test_off_keeps_other),
	};

	if (argc > 1 && !strcmp(argv[1], "--off"))
		return cmocka_run_group_tests_name("ww_park_batch_off", off,
						   NULL, NULL);
	return cmocka_run_group_tests_name("ww_park_batch", tests, NULL,
					   NULL);
}
