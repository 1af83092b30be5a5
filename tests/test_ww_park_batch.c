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
 *  - a thread of another policy (SCHED_IDLE here) is left alone.
 *
 * The actor's policy is read from this thread with sched_getscheduler()
 * on its tid, and its parking from its struct ww_thread (white-box).
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

static void test_batch_while_parked(void **state)
{
	struct ww_class *cls = *state;
	struct policy_of batch, other;
	struct ww_mutex l0, l1;
	struct actor a;

	ww_mutex_init(&l0, cls);
	ww_mutex_init(&l1, cls);
	actor_start(&a, cls);
	batch = (struct policy_of){ .tid = a.tid, .policy = SCHED_BATCH };
	other = (struct policy_of){ .tid = a.tid, .policy = SCHED_OTHER };
	CHECK_MSG(has_policy(&other), "the actor does not start SCHED_OTHER");
	actor_run(&a, act_init, NULL);
	CHECK_INT(actor_run(&a, act_lock, &l0), 0);
	CHECK_INT(ww_mutex_lock(&l1, NULL), 0);

	actor_post(&a, act_lock, &l1);
	CHECK_MSG(wait_until(has_policy, &batch),
		  "a waiter of a transaction did not switch to SCHED_BATCH");
	ww_mutex_unlock(&l1);
	if (CHECK(actor_wait(&a)))
		CHECK_INT(actor_ret(&a), 0);
	CHECK_MSG(has_policy(&batch), "SCHED_OTHER again while holding locks");
	actor_run(&a, act_unlock, &l1);
	CHECK_MSG(has_policy(&batch), "SCHED_OTHER again while holding l0");
	actor_run(&a, act_unlock, &l0);
	CHECK_MSG(has_policy(&other),
		  "still SCHED_BATCH after the transaction's last unlock");
	actor_run(&a, act_fini, NULL);
	actor_stop(&a);
	assert_checks_passed();
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
	struct ww_class *cls = *state;
	struct policy_of idle;
	struct ww_mutex l0, l1;
	struct actor a;

	ww_mutex_init(&l0, cls);
	ww_mutex_init(&l1, cls);
	actor_start(&a, cls);
	idle = (struct policy_of){ .tid = a.tid, .policy = SCHED_IDLE };
	CHECK_INT(actor_run(&a, act_set_idle, NULL), 0);
	actor_run(&a, act_init, NULL);
	CHECK_INT(actor_run(&a, act_lock, &l0), 0);
	CHECK_INT(ww_mutex_lock(&l1, NULL), 0);

	actor_post(&a, act_lock, &l1);
	CHECK(wait_until(thread_parked, a.ctx.task));
	CHECK_MSG(has_policy(&idle), "a SCHED_IDLE waiter's policy changed");
	ww_mutex_unlock(&l1);
	if (CHECK(actor_wait(&a)))
		CHECK_INT(actor_ret(&a), 0);
	actor_run(&a, act_unlock, &l1);
	actor_run(&a, act_unlock, &l0);
	CHECK_MSG(has_policy(&idle), "a SCHED_IDLE thread's policy changed");
	actor_run(&a, act_fini, NULL);
	actor_stop(&a);
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(test_batch_while_parked),
		BOTH_CLASSES(test_interrupted_holding_nothing),
		BOTH_CLASSES(test_other_policy_left_alone),
	};

	return cmocka_run_group_tests_name("ww_park_batch", tests, NULL,
					   NULL);
}
