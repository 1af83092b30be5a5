// SPDX-License-Identifier: MIT
/*
 * ww_thread_wake_commit() issues a futex wake only when
 * ww_thread_wake_claim() (include/ww/thread.h) says it is needed:
 *
 *  - a thread that is not parked gets no system call (it re-reads its
 *    sequence before it sleeps);
 *  - a parked thread gets one, from its first waker only, who clears its
 *    parked flag; a second waker before it runs gets none;
 *  - a waker whose increment the sleeper saw before it parked again (the
 *    waker was delayed between its increment and its claim) leaves the
 *    flag to the waker that park waits for: were the flag its, its futex
 *    wake could come before the sleeper is queued, and the next waker
 *    would skip its wake: a lost wake-up, a hang;
 *  - the shared out-of-memory fallback is always woken (one flag for
 *    several sleepers).
 *
 * White-box: the first ones drive a struct ww_thread that no thread sleeps
 * on, so what the waker decides is deterministic; the replay puts a real
 * sleeper in futex() at the point of the race. That no wake-up is lost
 * otherwise is what every test that waits checks (test-ww-stress above
 * all).
 */
#include <linux/futex.h>
#include <sys/syscall.h>

#include "lib/helpers.h"
#include "ww/thread.h"

static void test_unparked_needs_no_syscall(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .parked = 0 };
	assert_false(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_checks_passed();
}

static void test_first_waker_only(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .parked = 0 };
	ww_thread_park_arm(&t, ww_thread_seq(&t));
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_int_equal(__atomic_load_n(&t.parked, __ATOMIC_RELAXED), 0);
	assert_false(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_int_equal(t.wake_seq, 2);
	assert_checks_passed();
}

static void test_shared_always_woken(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .shared = true };
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_checks_passed();
}

/*
 * ww_unlock_slowpath() claims after its bucket unlock: the waiter it woke
 * may have run, found the lock stolen and parked again on the new
 * sequence before that claim. The claim must leave that park to the
 * stealer's unlock.
 */
static void test_stale_waker_leaves_the_park(void **state)
{
	static struct ww_thread t;
	uint32_t first, second;

	(void)state;
	for (uint32_t start = 0; start != 4; start++) {
		/* Also across the wrap-around of the sequence. */
		t = (struct ww_thread){ .wake_seq = start - 2 };
		first = ww_thread_wake_prepare(&t); /* delayed before claim */
		ww_thread_park_arm(&t, ww_thread_seq(&t)); /* saw it */
		assert_false(ww_thread_wake_claim(&t, first));
		assert_true(__atomic_load_n(&t.parked, __ATOMIC_RELAXED));
		second = ww_thread_wake_prepare(&t);
		assert_true(ww_thread_wake_claim(&t, second));
		assert_false(__atomic_load_n(&t.parked, __ATOMIC_RELAXED));
	}
	assert_checks_passed();
}

/*
 * The same interleaving with real threads and the real futex. Waker A
 * bumps the sequence; the sleeper sees it, arms its park for waker B and
 * is preempted before it enters futex() (here: it waits until A's claim
 * returned); A claims; the sleeper sleeps in the kernel; then B (once the
 * sleeper is seen blocked in futex()) sets its condition and wakes. Had A
 * taken the flag of that park, its futex wake went to nobody and B skips
 * its own: the sleeper sleeps to its deadline, which only bounds the test.
 *
 * ww_thread_park() and ww_thread_wake_commit() are not exported: sleep_on()
 * and commit() below are their few lines around the library's inline
 * ww_thread_park_arm() and ww_thread_wake_claim(), which are under test,
 * on a struct of our own (one attached to the library would mix the
 * library's wakes into ours), with the preemption point in between.
 */
#define REPLAY_ROUNDS 3
#define REPLAY_DEADLINE_S 2

static struct replay {
	struct ww_thread sleeper;
	pid_t sleeper_tid;
	int a_seen;   /* A's bump published */
	int armed;    /* the sleeper is about to arm its park for B */
	int a_done;   /* A's claim returned */
	int b_set;    /* B's condition */
} rp;

static long futex(uint32_t *word, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL,
		       FUTEX_BITSET_MATCH_ANY);
}

static int load_int(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_int(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

struct int_is {
	int *p;
	int v;
};

static bool int_reached(void *arg)
{
	struct int_is *w = arg;

	return load_int(w->p) == w->v;
}

static bool wait_int(int *p, int v)
{
	struct int_is w = { p, v };

	return wait_until(int_reached, &w);
}

/*
 * ww_thread_park() with a deadline; if @r, preempted after arming until
 * A's claim of round @r returned.
 */
static bool sleep_on(struct ww_thread *t, uint32_t seq,
		     const struct timespec *deadline, int r)
{
	long ret;

	ww_thread_park_arm(t, seq);
	if (r)
		CHECK(wait_int(&rp.a_done, r));
	ret = futex(&t->wake_seq, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seq,
		    deadline);
	__atomic_store_n(&t->parked, 0, __ATOMIC_RELAXED);
	return !(ret == -1 && errno == ETIMEDOUT);
}

/* ww_thread_wake_commit() */
static void commit(struct ww_thread *t, uint32_t old)
{
	if (ww_thread_wake_claim(t, old))
		futex(&t->wake_seq, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL);
}

static bool sleeper_blocked(void *arg)
{
	uintptr_t addr;
	unsigned long val;

	(void)arg;
	return thread_futex_wait(rp.sleeper_tid, &addr, &val) &&
	       addr == (uintptr_t)&rp.sleeper.wake_seq;
}

static void *waker_a(void *arg)
{
	struct ww_thread *t = &rp.sleeper;

	(void)arg;
	for (int r = 1; r <= REPLAY_ROUNDS; r++) {
		uint32_t old = ww_thread_wake_prepare(t);

		store_int(&rp.a_seen, r);
		/* Claim once the sleeper parks for B, not for us. */
		if (!CHECK(wait_int(&rp.armed, r)))
			break;
		while (!__atomic_load_n(&t->parked, __ATOMIC_RELAXED))
			sched_yield();
		commit(t, old);
		store_int(&rp.a_done, r);
	}
	return NULL;
}

static void *waker_b(void *arg)
{
	struct ww_thread *t = &rp.sleeper;

	(void)arg;
	for (int r = 1; r <= REPLAY_ROUNDS; r++) {
		if (!CHECK(wait_int(&rp.a_done, r)) ||
		    !CHECK(wait_until(sleeper_blocked, NULL)))
			break;
		store_int(&rp.b_set, r);
		commit(t, ww_thread_wake_prepare(t));
	}
	return NULL;
}

static void test_no_lost_wake_replay(void **state)
{
	struct ww_thread *self = &rp.sleeper;
	pthread_t a, b;
	int r, lost = 0;

	(void)state;
	rp = (struct replay){ .sleeper_tid = test_gettid() };
	a = start_thread(waker_a, NULL);
	b = start_thread(waker_b, NULL);
	for (r = 1; r <= REPLAY_ROUNDS; r++) {
		bool first = true;

		if (!CHECK(wait_int(&rp.a_seen, r)))
			break;
		store_int(&rp.armed, r);
		for (;;) {
			uint32_t seq = ww_thread_seq(self);
			struct timespec deadline;

			if (load_int(&rp.b_set) == r)
				break;
			clock_gettime(CLOCK_MONOTONIC, &deadline);
			deadline.tv_sec += REPLAY_DEADLINE_S;
			/* Preempted only the first time: A claims once. */
			if (!sleep_on(self, seq, &deadline, first ? r : 0)) {
				lost++;
				break;
			}
			first = false;
		}
	}
	join_thread(a);
	join_thread(b);
	CHECK_MSG(!lost, "%d of %d rounds: the sleeper slept to its deadline: "
		  "a lost wake-up", lost, REPLAY_ROUNDS);
	assert_checks_passed();
}

/* Two wakers the sleeper never saw: whichever claims first wakes it. */
static void test_unseen_wakers_either_claims(void **state)
{
	static struct ww_thread t;
	uint32_t first, second;

	(void)state;
	t = (struct ww_thread){ .wake_seq = UINT32_MAX };
	ww_thread_park_arm(&t, ww_thread_seq(&t));
	first = ww_thread_wake_prepare(&t);
	second = ww_thread_wake_prepare(&t);
	assert_true(ww_thread_wake_claim(&t, second));
	assert_false(ww_thread_wake_claim(&t, first));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unparked_needs_no_syscall,
				       checks_reset),
		cmocka_unit_test_setup(test_first_waker_only, checks_reset),
		cmocka_unit_test_setup(test_shared_always_woken, checks_reset),
		cmocka_unit_test_setup(test_stale_waker_leaves_the_park,
				       checks_reset),
		cmocka_unit_test_setup(test_unseen_wakers_either_claims,
				       checks_reset),
		cmocka_unit_test_setup(test_no_lost_wake_replay,
				       checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
