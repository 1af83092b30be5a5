// SPDX-License-Identifier: MIT
/*
 * Functional tests of the ww_mutex core, each run for a Wound-Wait and a
 * Wait-Die class unless its name says otherwise. Our own take on what the
 * kernel's test-ww_mutex.c checks, plus ttmsim specifics:
 *
 *  - basic state, mutual exclusion (8 lock/trylock/ctx combinations), AA;
 *  - ABBA between two threads and rings of 2..5 threads, with a forced
 *    interleaving so that every round is a real deadlock to resolve;
 *  - who backs off: Wait-Die deaths (at once, behind an older waiter, woken
 *    when an older context queues), Wound-Wait wounds (of a sleeping waiter,
 *    forgotten once nothing is held; a lock stealer's: test_ww_handoff.c),
 *    contexts that hold nothing, trylock with a context;
 *  - interrupts (tokens, ttm_interrupt_thread) and introspection;
 *  - the environment variables read at load time (TTMSIM_WW_SPIN_NS,
 *    TTMSIM_WW_INJECT, TTMSIM_WW_DEBUG): a bad value is ignored with one
 *    line on stderr, a good one silently taken. This binary, run again with
 *    --env-probe, loads the library and exits.
 *
 * Threads are sequenced with barriers, events and ww_mutex_waiter_count();
 * nothing sleeps to wait for a race. Worker threads report through CHECK();
 * see lib/helpers.h.
 */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "lib/helpers.h"
#include "ww/lockword.h" /* WW_HANDOFF, for one white-box test */

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

static struct ww_class *class_of(void **state)
{
	return *state;
}

static void init_locks(struct ww_class *cls, struct ww_mutex *locks,
		       unsigned int n)
{
	while (n--)
		ww_mutex_init(&locks[n], cls);
}

/* A test with a class and flags, passed as struct variant. */
struct variant {
	struct ww_class *cls;
	unsigned int flags;
};

#define VARIANT_TEST_(fn, cls, fl, flname)                              \
	{ .name = #fn "(" #cls ", " flname ")", .test_func = fn,        \
	  .setup_func = checks_reset,                                   \
	  .initial_state = &(struct variant){ &cls, (fl) } }
#define VARIANT_BOTH(fn, fl)                                            \
	VARIANT_TEST_(fn, wound_wait, fl, #fl),                         \
	VARIANT_TEST_(fn, wait_die, fl, #fl)

/* Actor steps beside those of lib/helpers.h; @lock is the lock. */
static int act_lock_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_interruptible(lock, &a->ctx);
}

static int act_lock_intr_noctx(struct actor *a, void *lock)
{
	(void)a;
	return ww_mutex_lock_interruptible(lock, NULL);
}

/* ---- basics ------------------------------------------------------------ */

static void test_basic(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_acquire_ctx ctx;
	struct ww_mutex m;

	ww_mutex_init(&m, cls);
	assert_false(ww_mutex_is_locked(&m));
	assert_null(ww_mutex_owner_ctx(&m));

	ww_acquire_init(&ctx, cls);
	assert_int_equal(ww_mutex_lock(&m, &ctx), 0);
	assert_true(ww_mutex_is_locked(&m));
	assert_ptr_equal(ww_mutex_owner_ctx(&m), &ctx);
	ww_mutex_unlock(&m);
	assert_false(ww_mutex_is_locked(&m));
	assert_null(ww_mutex_owner_ctx(&m));
	ww_acquire_done(&ctx);
	ww_acquire_fini(&ctx);

	assert_int_equal(ww_mutex_lock(&m, NULL), 0);
	assert_true(ww_mutex_is_locked(&m));
	assert_null(ww_mutex_owner_ctx(&m));
	ww_mutex_unlock(&m);
	assert_int_equal(ww_mutex_trylock(&m, NULL), 1);
	assert_int_equal(ww_mutex_trylock(&m, NULL), 0);
	ww_mutex_unlock(&m);
	assert_false(ww_mutex_is_locked(&m));
	ww_mutex_destroy(&m);
}

/* ---- mutual exclusion ---------------------------------------------------- */

#define MTX_PLAIN 0u
#define MTX_CTX 1u        /* main locks with a context */
#define MTX_TRY 2u        /* main takes the lock with ww_mutex_trylock() */
#define MTX_WORKER_TRY 4u /* the worker polls ww_mutex_trylock(NULL) */
#define MUTEX_ROUNDS 10

struct mutex_test {
	struct ww_mutex lock;
	unsigned int flags;
	int main_holds;      /* atomic */
	int failed_trylocks; /* atomic */
	int worker_holds;    /* atomic */
};

/* Worker step: take the lock without a context, the way flags say. */
static int mutex_take(struct actor *a, void *arg)
{
	struct mutex_test *t = arg;

	(void)a;
	if (t->flags & MTX_WORKER_TRY) {
		while (!ww_mutex_trylock(&t->lock, NULL)) {
			__atomic_add_fetch(&t->failed_trylocks, 1,
					   __ATOMIC_RELEASE);
			sched_yield();
		}
	} else {
		CHECK_INT(ww_mutex_lock(&t->lock, NULL), 0);
	}
	CHECK_MSG(!__atomic_load_n(&t->main_holds, __ATOMIC_ACQUIRE),
		  "mutual exclusion failure: got the lock while main held it");
	__atomic_store_n(&t->worker_holds, 1, __ATOMIC_RELEASE);
	ww_mutex_unlock(&t->lock);
	return 0;
}

static void test_mutex(void **state)
{
	const struct variant *v = *state;
	struct mutex_test t = { .flags = v->flags };
	struct ww_acquire_ctx ctx, *pctx = (v->flags & MTX_CTX) ? &ctx : NULL;
	struct actor w;
	int round, ret;

	ww_mutex_init(&t.lock, v->cls);
	actor_start(&w, v->cls);
	for (round = 0; round < MUTEX_ROUNDS; round++) {
		if (pctx)
			ww_acquire_init(pctx, v->cls);
		if (v->flags & MTX_TRY)
			ret = !ww_mutex_trylock(&t.lock, pctx);
		else
			ret = ww_mutex_lock(&t.lock, pctx);
		if (!CHECK_INT(ret, 0))
			break;
		__atomic_store_n(&t.failed_trylocks, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t.worker_holds, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t.main_holds, 1, __ATOMIC_RELEASE);

		actor_post(&w, mutex_take, &t);
		if (v->flags & MTX_WORKER_TRY)
			CHECK_MSG(wait_for_int(&t.failed_trylocks, 3),
				  "worker's trylock never failed");
		else
			CHECK_MSG(wait_for_waiters(&t.lock, 1),
				  "worker never queued on the lock");
		CHECK(!__atomic_load_n(&t.worker_holds, __ATOMIC_ACQUIRE));
		CHECK_INT(ww_mutex_owner_tid(&t.lock), test_gettid());

		__atomic_store_n(&t.main_holds, 0, __ATOMIC_RELEASE);
		ww_mutex_unlock(&t.lock);
		CHECK(actor_wait(&w));
		CHECK(__atomic_load_n(&t.worker_holds, __ATOMIC_ACQUIRE));
		if (pctx)
			ww_acquire_fini(pctx);
	}
	actor_stop(&w);
	CHECK(!ww_mutex_is_locked(&t.lock));
	assert_checks_passed();
}

/* ---- AA ---------------------------------------------------------------- */

#define AA_LOCK 0u
#define AA_TRY 1u /* take the lock with ww_mutex_trylock(ctx) */

static void test_aa(void **state)
{
	const struct variant *v = *state;
	struct ww_acquire_ctx ctx;
	struct ww_mutex m;

	ww_mutex_init(&m, v->cls);
	ww_acquire_init(&ctx, v->cls);
	if (v->flags & AA_TRY)
		assert_int_equal(ww_mutex_trylock(&m, &ctx), 1);
	else
		assert_int_equal(ww_mutex_lock(&m, &ctx), 0);
	assert_ptr_equal(ww_mutex_owner_ctx(&m), &ctx);

	assert_int_equal(ww_mutex_trylock(&m, NULL), 0);
	assert_int_equal(ww_mutex_trylock(&m, &ctx), 0);
	assert_int_equal(ww_mutex_lock(&m, &ctx), -EALREADY);
	assert_int_equal(ww_mutex_lock_interruptible(&m, &ctx), -EALREADY);
	assert_ptr_equal(ww_mutex_owner_ctx(&m), &ctx);
	assert_int_equal(ww_mutex_owner_tid(&m), test_gettid());

	/* -EALREADY took nothing more: one unlock frees the lock. */
	ww_mutex_unlock(&m);
	assert_false(ww_mutex_is_locked(&m));
	assert_int_equal(ww_mutex_trylock(&m, NULL), 1);
	ww_mutex_unlock(&m);
	ww_acquire_fini(&ctx);
}

/* ---- ABBA -------------------------------------------------------------- */

#define ABBA_LOCK 0u
#define ABBA_TRY 1u     /* take the first lock with trylock(ctx) */
#define ABBA_RESOLVE 2u /* back off on -EDEADLK and finish */
#define ABBA_ROUNDS 200

struct abba {
	struct ww_class *cls;
	unsigned int flags;
	struct ww_mutex a, b;
	pthread_barrier_t barrier;
	int ret[2][ABBA_ROUNDS];      /* final result of each side */
	bool deadlk[2][ABBA_ROUNDS];  /* its second lock said -EDEADLK */
};

/*
 * One round for @side (0 takes a then b, 1 takes b then a). The older side
 * takes its stamp before the first barrier, the younger after it; they
 * alternate every round. Both hold their first lock before either asks for
 * its second, so every round is a deadlock.
 */
static void abba_round(struct abba *s, int side, int round)
{
	struct ww_mutex *first = side ? &s->b : &s->a;
	struct ww_mutex *second = side ? &s->a : &s->b;
	bool older = (round & 1) == side;
	struct ww_acquire_ctx ctx;
	int ret;

	if (older)
		ww_acquire_init(&ctx, s->cls);
	pthread_barrier_wait(&s->barrier);
	if (!older)
		ww_acquire_init(&ctx, s->cls);

	if (s->flags & ABBA_TRY)
		CHECK_INT(ww_mutex_trylock(first, &ctx), 1);
	else
		CHECK_INT(ww_mutex_lock(first, &ctx), 0);
	CHECK(ww_mutex_owner_ctx(first) == &ctx);
	pthread_barrier_wait(&s->barrier);

	ret = ww_mutex_lock(second, &ctx);
	s->deadlk[side][round] = ret == -EDEADLK;
	if (ret == 0) {
		ww_mutex_unlock(second);
		ww_mutex_unlock(first);
	} else if (ret == -EDEADLK && (s->flags & ABBA_RESOLVE)) {
		ww_mutex_unlock(first);
		ww_mutex_lock_slow(second, &ctx);
		ret = ww_mutex_lock(first, &ctx);
		if (ret == 0)
			ww_mutex_unlock(first);
		ww_mutex_unlock(second);
	} else {
		ww_mutex_unlock(first);
	}
	s->ret[side][round] = ret;
	ww_acquire_fini(&ctx);
}

static void *abba_worker(void *arg)
{
	struct abba *s = arg;
	int round;

	for (round = 0; round < ABBA_ROUNDS; round++)
		abba_round(s, 1, round);
	return NULL;
}

static void test_abba(void **state)
{
	const struct variant *v = *state;
	bool resolve = v->flags & ABBA_RESOLVE;
	struct abba *s = calloc(1, sizeof(*s));
	pthread_t worker;
	int round, older, younger;

	assert_non_null(s);
	s->cls = v->cls;
	s->flags = v->flags;
	ww_mutex_init(&s->a, s->cls);
	ww_mutex_init(&s->b, s->cls);
	pthread_barrier_init(&s->barrier, NULL, 2);
	worker = start_thread(abba_worker, s);
	for (round = 0; round < ABBA_ROUNDS; round++)
		abba_round(s, 0, round);
	join_thread(worker);

	for (round = 0; round < ABBA_ROUNDS; round++) {
		older = round & 1;
		younger = !older;
		if (!CHECK_MSG(!s->deadlk[older][round] &&
			       s->ret[older][round] == 0,
			       "round %d: older side got %d", round,
			       s->ret[older][round]) ||
		    !CHECK_MSG(s->deadlk[younger][round],
			       "round %d: missed ABBA deadlock (younger got %d)",
			       round, s->ret[younger][round]) ||
		    !CHECK_MSG(s->ret[younger][round] ==
				       (resolve ? 0 : -EDEADLK),
			       "round %d: younger side ended with %d", round,
			       s->ret[younger][round]))
			break;
	}
	CHECK(!ww_mutex_is_locked(&s->a) && !ww_mutex_is_locked(&s->b));
	pthread_barrier_destroy(&s->barrier);
	free(s);
	assert_checks_passed();
}

/*
 * ABBA left to the scheduler (the former smoke test): two threads take
 * {a, b} in opposite orders, backing off as needed, every round from a
 * common start. Every other round a thread yields between its two locks,
 * which makes real deadlocks frequent; correctness does not depend on it.
 */
#define ABBA_RACE_ROUNDS 2000

struct abba_race {
	struct ww_class *cls;
	struct ww_mutex a, b;
	pthread_barrier_t barrier;
	int backoffs; /* atomic */
};

static void abba_race_loop(struct abba_race *s, bool reverse)
{
	struct ww_mutex *order[2] = { reverse ? &s->b : &s->a,
				      reverse ? &s->a : &s->b };
	struct ww_acquire_ctx ctx;
	int i, ret;

	for (i = 0; i < ABBA_RACE_ROUNDS; i++) {
		pthread_barrier_wait(&s->barrier);
		ww_acquire_init(&ctx, s->cls);
		ret = ww_mutex_lock(order[0], &ctx);
		CHECK_INT(ret, 0);
		if (i & 1)
			sched_yield();
		if (ret == 0)
			ret = lock_list(order, 2, 1, &ctx, false);
		if (CHECK_MSG(ret >= 0, "lock_list: %d", ret)) {
			__atomic_add_fetch(&s->backoffs, ret, __ATOMIC_RELAXED);
			CHECK(ww_mutex_owner_ctx(order[0]) == &ctx);
			CHECK(ww_mutex_owner_ctx(order[1]) == &ctx);
			unlock_list(order, 2);
		}
		ww_acquire_fini(&ctx);
	}
}

static void *abba_race_worker(void *arg)
{
	abba_race_loop(arg, true);
	return NULL;
}

static void test_abba_race(void **state)
{
	struct abba_race s = { .cls = class_of(state) };
	pthread_t worker;

	ww_mutex_init(&s.a, s.cls);
	ww_mutex_init(&s.b, s.cls);
	pthread_barrier_init(&s.barrier, NULL, 2);
	worker = start_thread(abba_race_worker, &s);
	abba_race_loop(&s, false);
	join_thread(worker);
	pthread_barrier_destroy(&s.barrier);
	print_message("%s: %d back-offs in %d rounds\n", s.cls->name,
		      s.backoffs, ABBA_RACE_ROUNDS);
	assert_checks_passed();
}

/* ---- cycles ------------------------------------------------------------ */

#define CYCLE_MAX 5
#define CYCLE_ROUNDS 50

struct cycle {
	struct ww_class *cls;
	unsigned int n;
	struct ww_mutex locks[CYCLE_MAX];
	pthread_barrier_t barrier;
	int backoffs[CYCLE_ROUNDS]; /* atomic */
};

struct cycle_thread {
	struct cycle *c;
	unsigned int id;
	pthread_t thread;
};

/*
 * Thread i holds lock i, then (once every thread holds its own) asks for
 * lock i+1 of the ring: a deadlock of n threads, every round.
 */
static void *cycle_worker(void *arg)
{
	struct cycle_thread *t = arg;
	struct cycle *c = t->c;
	struct ww_mutex *mine[2] = { &c->locks[t->id],
				     &c->locks[(t->id + 1) % c->n] };
	struct ww_acquire_ctx ctx;
	int round, ret;

	for (round = 0; round < CYCLE_ROUNDS; round++) {
		pthread_barrier_wait(&c->barrier);
		ww_acquire_init(&ctx, c->cls);
		ret = ww_mutex_lock(mine[0], &ctx);
		CHECK_INT(ret, 0);
		pthread_barrier_wait(&c->barrier);
		if (ret == 0)
			ret = lock_list(mine, 2, 1, &ctx, false);
		if (CHECK_MSG(ret >= 0, "cyclic deadlock not resolved: %d",
			      ret)) {
			__atomic_add_fetch(&c->backoffs[round], ret,
					   __ATOMIC_RELAXED);
			CHECK(ww_mutex_owner_ctx(mine[0]) == &ctx);
			CHECK(ww_mutex_owner_ctx(mine[1]) == &ctx);
			unlock_list(mine, 2);
		}
		ww_acquire_fini(&ctx);
	}
	return NULL;
}

static void run_cycle(struct ww_class *cls, unsigned int n)
{
	struct cycle c = { .cls = cls, .n = n };
	struct cycle_thread threads[CYCLE_MAX];
	unsigned int i;
	int round, total = 0;

	init_locks(cls, c.locks, n);
	pthread_barrier_init(&c.barrier, NULL, n);
	for (i = 0; i < n; i++) {
		threads[i] = (struct cycle_thread){ .c = &c, .id = i };
		threads[i].thread = start_thread(cycle_worker, &threads[i]);
	}
	for (i = 0; i < n; i++)
		join_thread(threads[i].thread);
	pthread_barrier_destroy(&c.barrier);

	for (round = 0; round < CYCLE_ROUNDS; round++) {
		total += c.backoffs[round];
		if (!CHECK_MSG(c.backoffs[round] > 0,
			       "ring of %u, round %d: nobody backed off", n,
			       round))
			break;
	}
	for (i = 0; i < n; i++)
		CHECK(!ww_mutex_is_locked(&c.locks[i]));
	print_message("%s: ring of %u: %d back-offs in %d rounds\n",
		      cls->name, n, total, CYCLE_ROUNDS);
}

static void test_cycle(void **state)
{
	unsigned int n;

	for (n = 2; n <= CYCLE_MAX; n++)
		run_cycle(class_of(state), n);
	assert_checks_passed();
}

/* ---- who waits, who backs off ------------------------------------------ */

/*
 * A younger context holding a lock asks for one an older context holds.
 * Wait-Die: it dies at once. Wound-Wait: it waits (the older one does not
 * want anything of it), then gets the lock.
 */
static void test_younger_vs_older(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex a, x;
	struct ww_acquire_ctx old;
	struct actor y;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&x, cls);
	actor_start(&y, cls);
	ww_acquire_init(&old, cls);
	actor_run(&y, act_init, NULL);
	CHECK_INT(actor_run(&y, act_lock, &x), 0);
	CHECK_INT(ww_mutex_lock(&a, &old), 0);

	actor_post(&y, act_lock, &a);
	if (is_wait_die(cls)) {
		if (CHECK_MSG(actor_wait(&y), "younger did not die at once"))
			CHECK_INT(actor_ret(&y), -EDEADLK);
		CHECK_INT(ww_mutex_waiter_count(&a), 0);
		/* Back off: the lock it asked for first, then the rest. */
		actor_run(&y, act_unlock, &x);
		actor_post(&y, act_lock_slow, &a);
	}
	CHECK(wait_for_waiters(&a, 1));
	CHECK(actor_busy(&y));
	CHECK(ww_mutex_owner_ctx(&a) == &old);
	ww_mutex_unlock(&a);
	ww_acquire_fini(&old);

	if (CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), 0);
	CHECK(ww_mutex_owner_ctx(&a) == &y.ctx);
	if (is_wait_die(cls))
		CHECK_INT(actor_run(&y, act_lock, &x), 0);
	actor_run(&y, act_unlock, &a);
	actor_run(&y, act_unlock, &x);
	actor_run(&y, act_fini, NULL);
	actor_stop(&y);
	assert_checks_passed();
}

/*
 * An older context holding a lock asks for one a younger context holds: it
 * waits in both algorithms (under Wound-Wait it also wounds the holder, which
 * does not notice: it asks for nothing contended) and gets the lock.
 */
static void test_older_waits(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex a, x;
	struct ww_acquire_ctx young;
	struct actor o;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&x, cls);
	actor_start(&o, cls);
	actor_run(&o, act_init, NULL);
	ww_acquire_init(&young, cls);
	CHECK_INT(ww_mutex_lock(&a, &young), 0);
	CHECK_INT(actor_run(&o, act_lock, &x), 0);

	actor_post(&o, act_lock, &a);
	CHECK(wait_for_waiters(&a, 1));
	CHECK(actor_busy(&o));
	CHECK(ww_mutex_owner_ctx(&a) == &young);
	ww_mutex_unlock(&a);
	ww_acquire_fini(&young);

	if (CHECK_MSG(actor_wait(&o), "older waiter never got the lock"))
		CHECK_INT(actor_ret(&o), 0);
	CHECK(ww_mutex_owner_ctx(&a) == &o.ctx);
	actor_run(&o, act_unlock, &a);
	actor_run(&o, act_unlock, &x);
	actor_run(&o, act_fini, NULL);
	actor_stop(&o);
	assert_checks_passed();
}

/*
 * An actor's transaction in the tests below: ask for @l while holding @x
 * (if any); on -EDEADLK back off by the book (unlock, lock_slow, relock)
 * and finish by unlocking everything.
 */
struct txn {
	struct ww_mutex *l, *x; /* x: NULL when the actor holds nothing */
	bool interruptible;
	int first_done;         /* atomic: the first lock call returned */
	int first_ret;          /* what it said */
	int ret;                /* the end result */
};

static int txn_lock(struct actor *a, struct ww_mutex *l, bool intr)
{
	return intr ? ww_mutex_lock_interruptible(l, &a->ctx)
		    : ww_mutex_lock(l, &a->ctx);
}

static int txn_backoff(struct actor *a, struct txn *t)
{
	int ret = 0;

	if (t->x)
		ww_mutex_unlock(t->x);
	if (t->interruptible)
		ret = ww_mutex_lock_slow_interruptible(t->l, &a->ctx);
	else
		ww_mutex_lock_slow(t->l, &a->ctx);
	if (ret == 0 && t->x) {
		ret = txn_lock(a, t->x, t->interruptible);
		if (ret)
			ww_mutex_unlock(t->l);
	}
	return ret;
}

static int txn_run(struct actor *a, void *arg)
{
	struct txn *t = arg;
	int ret;

	t->first_ret = ret = txn_lock(a, t->l, t->interruptible);
	__atomic_store_n(&t->first_done, 1, __ATOMIC_RELEASE);
	if (ret == -EDEADLK) {
		ret = txn_backoff(a, t);
	} else if (ret && t->x) {
		ww_mutex_unlock(t->x);
	}
	if (ret == 0) {
		ww_mutex_unlock(t->l);
		if (t->x)
			ww_mutex_unlock(t->x);
	}
	t->ret = ret;
	return ret;
}

/* Wait, bounded, for the first lock call of @t to return. */
static bool txn_first_returned(struct txn *t)
{
	return wait_for_int(&t->first_done, 1);
}

static bool txn_first_pending(struct txn *t)
{
	return !__atomic_load_n(&t->first_done, __ATOMIC_ACQUIRE);
}

#define BEHIND_NOCTX_HOLDER 0u
#define BEHIND_YOUNG_HOLDER 1u  /* the holder: a context younger than all */
#define BEHIND_OLDER_EMPTY 2u   /* the older waiter holds nothing */
#define BEHIND_YOUNGER_EMPTY 4u /* the younger asker holds nothing */

/*
 * An older context O waits for lock l; then a younger context Y asks for l.
 * The holder of l is context-less, or a context younger than both.
 * Wait-Die: Y dies at once if it holds a lock (the kernel: no point in
 * queueing behind an older waiter); a Y that holds nothing waits.
 * Wound-Wait: Y waits behind O. Both finish once l is released.
 */
static void test_behind_older_waiter(void **state)
{
	const struct variant *v = *state;
	bool dies = is_wait_die(v->cls) && !(v->flags & BEHIND_YOUNGER_EMPTY);
	struct ww_acquire_ctx holder, *hctx = NULL;
	struct ww_mutex l, xo, xy;
	struct actor o, y;
	struct txn ty = { .l = &l, .x = &xy };

	ww_mutex_init(&l, v->cls);
	ww_mutex_init(&xo, v->cls);
	ww_mutex_init(&xy, v->cls);
	if (v->flags & BEHIND_YOUNGER_EMPTY)
		ty.x = NULL;
	actor_start(&o, v->cls);
	actor_start(&y, v->cls);
	actor_run(&o, act_init, NULL);
	actor_run(&y, act_init, NULL);
	if (!(v->flags & BEHIND_OLDER_EMPTY))
		CHECK_INT(actor_run(&o, act_lock, &xo), 0);
	if (ty.x)
		CHECK_INT(actor_run(&y, act_lock, &xy), 0);
	if (v->flags & BEHIND_YOUNG_HOLDER) {
		hctx = &holder;
		ww_acquire_init(hctx, v->cls);
	}
	CHECK_INT(ww_mutex_lock(&l, hctx), 0);

	actor_post(&o, act_lock, &l);
	CHECK(wait_for_waiters(&l, 1));
	actor_post(&y, txn_run, &ty);
	if (dies) {
		if (CHECK_MSG(txn_first_returned(&ty),
			      "younger did not die behind an older waiter"))
			CHECK_INT(ty.first_ret, -EDEADLK);
		/* ... and now sleeps in ww_mutex_lock_slow() behind O. */
	}
	CHECK(wait_for_waiters(&l, 2));
	if (!dies)
		CHECK(txn_first_pending(&ty));
	CHECK(actor_busy(&o));
	ww_mutex_unlock(&l);
	if (hctx)
		ww_acquire_fini(hctx);

	/* O is first in line; Y gets l once O lets go of it. */
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	CHECK(ww_mutex_owner_ctx(&l) == &o.ctx);
	actor_run(&o, act_unlock, &l);
	if (CHECK(actor_wait(&y))) {
		CHECK_INT(ty.first_ret, dies ? -EDEADLK : 0);
		CHECK_INT(ty.ret, 0);
	}
	if (!(v->flags & BEHIND_OLDER_EMPTY))
		actor_run(&o, act_unlock, &xo);
	actor_run(&o, act_fini, NULL);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	CHECK(!ww_mutex_is_locked(&l) && !ww_mutex_is_locked(&xy));
	assert_checks_passed();
}

#define WOKEN_OLDER_HOLDS 0u
#define WOKEN_OLDER_EMPTY 1u /* the older context that queues holds nothing */

/*
 * A younger context Y that holds a lock sleeps on lock l (held without a
 * context); then an older context O queues on l, in front of Y.
 * Wait-Die: Y must be woken to die at once, whatever O holds (the kernel's
 * __ww_mutex_add_waiter() wakes younger waiters that hold locks; the design
 * doc: among context waiters only the first may hold locks).
 * Wound-Wait: Y keeps waiting behind O.
 */
static void test_woken_to_die(void **state)
{
	const struct variant *v = *state;
	bool wd = is_wait_die(v->cls);
	struct ww_mutex l, xo, xy;
	struct actor o, y;
	struct txn ty = { .l = &l, .x = &xy };

	ww_mutex_init(&l, v->cls);
	ww_mutex_init(&xo, v->cls);
	ww_mutex_init(&xy, v->cls);
	actor_start(&o, v->cls);
	actor_start(&y, v->cls);
	actor_run(&o, act_init, NULL);
	actor_run(&y, act_init, NULL);
	if (!(v->flags & WOKEN_OLDER_EMPTY))
		CHECK_INT(actor_run(&o, act_lock, &xo), 0);
	CHECK_INT(actor_run(&y, act_lock, &xy), 0);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);

	actor_post(&y, txn_run, &ty);
	CHECK(wait_for_waiters(&l, 1));
	actor_post(&o, act_lock, &l);
	if (wd) {
		if (CHECK_MSG(txn_first_returned(&ty),
			      "sleeping younger waiter not woken to die when an older context queued in front of it"))
			CHECK_INT(ty.first_ret, -EDEADLK);
	}
	CHECK(wait_for_waiters(&l, 2));
	if (!wd)
		CHECK(txn_first_pending(&ty));
	ww_mutex_unlock(&l);

	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	actor_run(&o, act_unlock, &l);
	if (CHECK(actor_wait(&y)))
		CHECK_INT(ty.ret, 0);
	if (!(v->flags & WOKEN_OLDER_EMPTY))
		actor_run(&o, act_unlock, &xo);
	actor_run(&o, act_fini, NULL);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	assert_checks_passed();
}

/*
 * Wait-Die, where a missed die wake-up leads: Y holds w and sleeps on l;
 * O, older and holding nothing, queues on l in front of Y. If Y is not woken
 * to die then, and l is then handed over to O directly (the hand-over path
 * runs none of the checks a new owner owes the queue), O asks for w and
 * sleeps on it while Y sleeps on l: a deadlock that Wait-Die must prevent.
 *
 * White box: the hand-over is forced by waking O spuriously while l is
 * held (O is first and has slept, so it sets WW_HANDOFF, which we watch in
 * the lock word). Y's wait is interruptible so that the test can break the
 * deadlock and fail instead of hanging.
 */
static bool handoff_flag_set(void *lock)
{
	return ww_word_load(lock) & WW_HANDOFF;
}

static void test_wd_handoff_deadlock(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex l, w;
	struct actor o, y;
	struct txn ty = { .l = &l, .x = &w, .interruptible = true };
	bool deadlock;

	ww_mutex_init(&l, cls);
	ww_mutex_init(&w, cls);
	actor_start(&o, cls);
	actor_start(&y, cls);
	actor_run(&o, act_init, NULL);
	actor_run(&y, act_init, NULL);
	CHECK_INT(actor_run(&y, act_lock, &w), 0);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);

	actor_post(&y, txn_run, &ty);
	CHECK(wait_for_waiters(&l, 1));
	actor_post(&o, act_lock, &l);
	CHECK(wait_for_waiters(&l, 2));

	/* A spurious wake-up: O's wait is not interruptible. */
	ttm_interrupt_thread(o.thread);
	/*
	 * O was woken with l still held, and is first: it must ask for the
	 * hand-over. Without it the deadlock path is not exercised.
	 */
	CHECK_MSG(wait_until(handoff_flag_set, &l),
		  "no hand-over flag: a first waiter woken while l is held did not set WW_HANDOFF");
	ww_mutex_unlock(&l);
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	CHECK_INT(actor_run(&o, act_interrupt_clear, NULL), 1);

	/* O, now holding l, asks for w. */
	actor_post(&o, act_lock_intr, &w);
	deadlock = !actor_wait(&o);
	CHECK_MSG(!deadlock,
		  "deadlock: O holds l and sleeps on w, Y holds w and sleeps on l (Y was never told to die)");
	if (deadlock)
		ttm_interrupt_thread(y.thread); /* Y gives up w */
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	actor_run(&o, act_unlock, &w);
	actor_run(&o, act_unlock, &l);
	actor_run(&o, act_fini, NULL);
	if (CHECK(actor_wait(&y)) && !deadlock) {
		CHECK_INT(ty.first_ret, -EDEADLK);
		CHECK_INT(ty.ret, 0);
	}
	actor_run(&y, act_interrupt_clear, NULL);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	CHECK(!ww_mutex_is_locked(&l) && !ww_mutex_is_locked(&w));
	assert_checks_passed();
}

/*
 * Y holds a and sleeps on b (held without a context); O, older and holding
 * c, asks for a. Wound-Wait: O wounds Y, and Y, asleep, must wake and
 * return -EDEADLK; it backs off, O gets a, everyone finishes.
 * Wait-Die: O just waits for a; Y gets b when it is released, finishes, and
 * then O gets a.
 */
static void test_wound_sleeping(void **state)
{
	struct ww_class *cls = class_of(state);
	bool ww = !is_wait_die(cls);
	struct ww_mutex a, b, c;
	struct actor o, y;
	struct txn ty = { .l = &b, .x = &a };
	bool wounded = false;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	ww_mutex_init(&c, cls);
	actor_start(&o, cls);
	actor_start(&y, cls);
	actor_run(&o, act_init, NULL);
	actor_run(&y, act_init, NULL);
	CHECK_INT(actor_run(&o, act_lock, &c), 0);
	CHECK_INT(actor_run(&y, act_lock, &a), 0);
	CHECK_INT(ww_mutex_lock(&b, NULL), 0);

	actor_post(&y, txn_run, &ty);
	CHECK(wait_for_waiters(&b, 1));
	actor_post(&o, act_lock, &a);
	if (ww) {
		wounded = CHECK_MSG(txn_first_returned(&ty),
				    "sleeping younger waiter was not wounded");
		if (wounded) {
			CHECK_INT(ty.first_ret, -EDEADLK);
			/* Y released a: O gets it while we still hold b. */
			if (CHECK(actor_wait(&o)))
				CHECK_INT(actor_ret(&o), 0);
			actor_run(&o, act_unlock, &a);
			actor_run(&o, act_unlock, &c);
		}
	} else {
		CHECK(wait_for_waiters(&a, 1));
		CHECK(txn_first_pending(&ty));
	}
	ww_mutex_unlock(&b);

	if (CHECK(actor_wait(&y)))
		CHECK_INT(ty.ret, 0);
	if (!wounded) {
		if (CHECK(actor_wait(&o)))
			CHECK_INT(actor_ret(&o), 0);
		actor_run(&o, act_unlock, &a);
		actor_run(&o, act_unlock, &c);
	}
	if (!ww)
		CHECK_INT(ty.first_ret, 0);
	actor_run(&o, act_fini, NULL);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	assert_checks_passed();
}

/*
 * Wound-Wait: a wound is forgotten once its victim holds nothing. Y holds a
 * and is wounded by O (older, holding c) asking for a; Y finishes its
 * locking sequence without noticing (no contended lock: no rollback), then
 * unlocks. With the same context, Y takes b and then waits for a, now held
 * by O: a younger context waits for an older one; no stale -EDEADLK.
 */
static int release_when_queued(struct actor *a, void *arg)
{
	struct ww_mutex **locks = arg; /* wait on locks[0], free both */

	(void)a;
	CHECK_MSG(wait_for_waiters(locks[0], 1), "Y never waited for a");
	ww_mutex_unlock(locks[0]);
	ww_mutex_unlock(locks[1]);
	return 0;
}

static void test_ww_stale_wound(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex a, b, c, f;
	struct ww_mutex *o_locks[2] = { &a, &c };
	struct ww_acquire_ctx y;
	struct actor o;
	int ret;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	ww_mutex_init(&c, cls);
	ww_mutex_init(&f, cls);
	actor_start(&o, cls);
	actor_run(&o, act_init, NULL);
	ww_acquire_init(&y, cls);
	CHECK_INT(actor_run(&o, act_lock, &c), 0);
	CHECK_INT(ww_mutex_lock(&a, &y), 0);

	actor_post(&o, act_lock, &a); /* wounds us, then sleeps */
	CHECK(wait_for_waiters(&a, 1));
	CHECK_INT(ww_mutex_lock(&f, &y), 0); /* uncontended: not noticed */
	ww_mutex_unlock(&f);
	ww_mutex_unlock(&a);
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);

	CHECK_INT(ww_mutex_lock(&b, &y), 0);
	actor_post(&o, release_when_queued, o_locks);
	ret = ww_mutex_lock(&a, &y);
	CHECK_MSG(ret == 0, "stale wound: lock returned %d", ret);
	if (ret == 0)
		ww_mutex_unlock(&a);
	ww_mutex_unlock(&b);
	ww_acquire_fini(&y);
	CHECK(actor_wait(&o));
	actor_run(&o, act_fini, NULL);
	actor_stop(&o);
	assert_checks_passed();
}

/* ---- contexts that hold nothing, trylock with a context ----------------- */

/*
 * A context that holds nothing cannot be part of a deadlock, so it never
 * gets -EDEADLK: each way of locking, against an older holder, just waits.
 * ww_mutex_lock_slow() outside a back-off breaks the API's rules (the
 * checker's rule 6); this tests the core underneath, with the checker off.
 */
static void test_nothing_held(void **state)
{
	struct ww_class *cls = class_of(state);
	static const actor_fn ways[] = {
		act_lock, act_lock_slow, act_lock_intr, act_lock_slow_intr,
	};
	struct ww_acquire_ctx old;
	struct ww_mutex a;
	struct actor y;
	unsigned int i;
	bool checker = checker_off();

	ww_mutex_init(&a, cls);
	actor_start(&y, cls);
	ww_acquire_init(&old, cls);
	actor_run(&y, act_init, NULL);
	for (i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		CHECK_INT(ww_mutex_lock(&a, &old), 0);
		actor_post(&y, ways[i], &a);
		CHECK_MSG(wait_for_waiters(&a, 1), "way %u: did not wait", i);
		CHECK(actor_busy(&y));
		ww_mutex_unlock(&a);
		if (CHECK(actor_wait(&y)))
			CHECK_MSG(actor_ret(&y) == 0, "way %u returned %d", i,
				  actor_ret(&y));
		CHECK(ww_mutex_owner_ctx(&a) == &y.ctx);
		actor_run(&y, act_unlock, &a);
	}
	ww_acquire_fini(&old);
	actor_run(&y, act_fini, NULL);
	actor_stop(&y);
	checker_restore(checker);
	assert_checks_passed();
}

/* Y: ask for b, holding a (taken with trylock); back off on -EDEADLK. */
static int lock_b_or_release_a(struct actor *y, void *arg)
{
	struct ww_mutex **ab = arg;
	int ret = ww_mutex_lock_interruptible(ab[1], &y->ctx);

	if (ret)
		ww_mutex_unlock(ab[0]);
	return ret;
}

/*
 * A lock taken with ww_mutex_trylock(ctx) is held by the context: a lock
 * call says -EALREADY, and the back-off rules count it (Y, which holds only
 * that lock, must back off when it meets an older O holding b: at once in
 * Wait-Die, once O asks for Y's lock in Wound-Wait). A failed trylock takes
 * nothing: a Y whose trylock failed holds nothing and just waits.
 */
static void test_trylock_ctx(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex a, b;
	struct ww_mutex *ab[2] = { &a, &b };
	struct ww_acquire_ctx old;
	struct watchdog dog;
	struct actor y;
	int ret;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	actor_start(&y, cls);
	ww_acquire_init(&old, cls);
	actor_run(&y, act_init, NULL);

	/* Held by trylock. */
	CHECK_INT(actor_run(&y, act_trylock, &a), 1);
	CHECK(ww_mutex_owner_ctx(&a) == &y.ctx);
	CHECK_INT(actor_run(&y, act_lock, &a), -EALREADY);
	CHECK_INT(actor_run(&y, act_trylock, &a), 0);
	CHECK_INT(ww_mutex_trylock(&a, &old), 0);

	/* Counted by the back-off rules. */
	CHECK_INT(ww_mutex_lock(&b, &old), 0);
	actor_post(&y, lock_b_or_release_a, ab);
	if (is_wait_die(cls)) {
		if (CHECK_MSG(actor_wait(&y), "younger did not die"))
			CHECK_INT(actor_ret(&y), -EDEADLK);
	} else {
		CHECK(wait_for_waiters(&b, 1));
		watchdog_start(&dog);
		ret = ww_mutex_lock_interruptible(&a, &old);
		CHECK_MSG(!watchdog_stop(&dog),
			  "deadlock: trylocked lock not counted");
		if (CHECK_INT(ret, 0))
			ww_mutex_unlock(&a);
		if (CHECK(actor_wait(&y)))
			CHECK_INT(actor_ret(&y), -EDEADLK);
	}
	actor_post(&y, act_lock_slow, &b);
	CHECK(wait_for_waiters(&b, 1));
	ww_mutex_unlock(&b);
	CHECK(actor_wait(&y));
	CHECK_INT(actor_run(&y, act_lock, &a), 0);
	actor_run(&y, act_unlock, &a);
	actor_run(&y, act_unlock, &b);

	/* A failed trylock takes nothing. */
	CHECK_INT(ww_mutex_lock(&a, &old), 0);
	CHECK_INT(ww_mutex_lock(&b, &old), 0);
	CHECK_INT(actor_run(&y, act_trylock, &a), 0);
	CHECK(ww_mutex_owner_ctx(&a) == &old);
	actor_post(&y, act_lock, &b);
	CHECK_MSG(wait_for_waiters(&b, 1), "failed trylock counted as held");
	ww_mutex_unlock(&a);
	ww_mutex_unlock(&b);
	if (CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), 0);
	actor_run(&y, act_unlock, &b);

	ww_acquire_fini(&old);
	actor_run(&y, act_fini, NULL);
	actor_stop(&y);
	assert_checks_passed();
}

/* ---- interrupts ---------------------------------------------------------- */

/*
 * A thread asleep in an interruptible lock call returns -EINTR when
 * interrupted, without the lock and out of the queue; the interrupt is
 * consumed: a free lock is then taken, and the next wait sleeps again until
 * the next interrupt. For ww_mutex_lock_interruptible() with and without a
 * context and for ww_mutex_lock_slow_interruptible().
 */
static void test_interrupt_sleeping(void **state)
{
	struct ww_class *cls = class_of(state);
	static const actor_fn ways[] = {
		act_lock_intr, act_lock_intr_noctx, act_lock_slow_intr,
	};
	struct ww_mutex l, free_lock;
	struct actor w;
	unsigned int i;
	/* A NULL-ctx lock with a ctx open, lock_slow outside a back-off. */
	bool checker = checker_off();

	ww_mutex_init(&l, cls);
	ww_mutex_init(&free_lock, cls);
	actor_start(&w, cls);
	actor_run(&w, act_init, NULL);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	for (i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		actor_post(&w, ways[i], &l);
		CHECK(wait_for_waiters(&l, 1));
		CHECK_INT(ttm_interrupt(w.token), 0);
		if (!CHECK_MSG(actor_wait(&w), "way %u: not interrupted", i))
			break;
		CHECK_MSG(actor_ret(&w) == -EINTR, "way %u returned %d", i,
			  actor_ret(&w));
		CHECK_INT(ww_mutex_waiter_count(&l), 0);
		CHECK_INT(ww_mutex_owner_tid(&l), test_gettid());
		CHECK_INT(actor_run(&w, act_interrupt_clear, NULL), 0);
		CHECK_INT(actor_run(&w, act_lock_intr, &free_lock), 0);
		actor_run(&w, act_unlock, &free_lock);
	}
	ww_mutex_unlock(&l);
	actor_wait(&w);
	CHECK(!ww_mutex_is_locked(&l));
	actor_run(&w, act_fini, NULL);
	actor_stop(&w);
	checker_restore(checker);
	assert_checks_passed();
}

/*
 * An interrupt posted before the wait, even before the thread's first lock
 * (it took its token at its start), ends the next contended interruptible
 * wait at once. A lock that needs no wait is taken and leaves the
 * interrupt pending (it is the next *wait* that is interrupted).
 * ttm_interrupt_clear() drops a pending one. The token and the pthread_t
 * reach the same thread.
 */
static void test_interrupt_pending(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_mutex l, free_lock;
	struct actor w;
	/* A NULL-ctx lock with a ctx open, lock_slow outside a back-off. */
	bool checker = checker_off();

	ww_mutex_init(&l, cls);
	ww_mutex_init(&free_lock, cls);
	actor_start(&w, cls);
	CHECK_INT(ttm_interrupt(w.token), 0); /* w has locked nothing yet */
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	actor_run(&w, act_init, NULL);

	CHECK_INT(actor_run(&w, act_lock_intr, &free_lock), 0);
	actor_run(&w, act_unlock, &free_lock);
	CHECK_INT(actor_run(&w, act_lock_intr, &l), -EINTR);
	CHECK_INT(ww_mutex_waiter_count(&l), 0);
	CHECK_INT(actor_run(&w, act_interrupt_clear, NULL), 0);

	CHECK_INT(ttm_interrupt_thread(w.thread), 0);
	CHECK_INT(actor_run(&w, act_lock_slow_intr, &l), -EINTR);
	CHECK_INT(ttm_interrupt(w.token), 0);
	CHECK_INT(ttm_interrupt_thread(w.thread), 0); /* twice is once */
	CHECK_INT(actor_run(&w, act_lock_intr_noctx, &l), -EINTR);
	CHECK_INT(actor_run(&w, act_interrupt_clear, NULL), 0);

	CHECK_INT(ttm_interrupt(w.token), 0);
	CHECK_INT(actor_run(&w, act_interrupt_clear, NULL), 1);
	CHECK_INT(actor_run(&w, act_interrupt_clear, NULL), 0);
	actor_post(&w, act_lock_intr, &l);
	CHECK_MSG(wait_for_waiters(&l, 1), "cleared interrupt still pending");
	ww_mutex_unlock(&l);
	if (CHECK(actor_wait(&w)))
		CHECK_INT(actor_ret(&w), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), w.tid);
	actor_run(&w, act_unlock, &l);
	actor_run(&w, act_fini, NULL);
	actor_stop(&w);
	checker_restore(checker);
	assert_checks_passed();
}

/*
 * Non-interruptible waits ignore interrupts, posted before or during the
 * wait: the lock is taken when released and the interrupt stays pending.
 */
static void test_interrupt_ignored(void **state)
{
	struct ww_class *cls = class_of(state);
	static const actor_fn ways[] = {
		act_lock, act_lock_noctx, act_lock_slow,
	};
	struct ww_mutex l;
	struct actor w;
	unsigned int i;
	bool checker = checker_off(); /* lock_slow outside a back-off */

	ww_mutex_init(&l, cls);
	actor_start(&w, cls);
	actor_run(&w, act_init, NULL);
	for (i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		CHECK_INT(ww_mutex_lock(&l, NULL), 0);
		CHECK_INT(ttm_interrupt_thread(w.thread), 0);
		actor_post(&w, ways[i], &l);
		CHECK(wait_for_waiters(&l, 1));
		CHECK_INT(ttm_interrupt_thread(w.thread), 0);
		CHECK(wait_for_waiters(&l, 1));
		ww_mutex_unlock(&l);
		if (CHECK(actor_wait(&w)))
			CHECK_MSG(actor_ret(&w) == 0, "way %u returned %d", i,
				  actor_ret(&w));
		CHECK_INT(ww_mutex_owner_tid(&l), w.tid);
		actor_run(&w, act_unlock, &l);
		CHECK_MSG(actor_run(&w, act_interrupt_clear, NULL) == 1,
			  "way %u consumed the interrupt", i);
	}
	actor_run(&w, act_fini, NULL);
	actor_stop(&w);
	checker_restore(checker);
	assert_checks_passed();
}

/*
 * A thread with a token: interrupted by token or pthread_t while it waits
 * for nothing, it finds the interrupt pending. Once it has exited, its
 * token (still valid) and its pthread_t give -ESRCH. An interrupt it left
 * pending dies with it, as a pending signal would: the next thread (glibc
 * reuses the pthread_t of a joined thread, ttmsim its internal record)
 * finds nothing pending, does not answer to the old token, and its own
 * token reaches it.
 */
struct exiting {
	pthread_barrier_t barrier;
	struct ttm_interrupt_token *token;
	bool consume;   /* clear the interrupt before exiting */
	bool pending;   /* ... and whether one was pending */
};

static void *take_token_and_wait(void *arg)
{
	struct exiting *x = arg;

	CHECK_INT(ttm_interrupt_self(&x->token), 0);
	pthread_barrier_wait(&x->barrier); /* token published */
	pthread_barrier_wait(&x->barrier); /* interrupted or not */
	if (x->consume)
		x->pending = ttm_interrupt_clear();
	return NULL;
}

/* Start a thread of @x, and wait until its token is in @x->token. */
static pthread_t start_exiting(struct exiting *x, bool consume)
{
	pthread_t t;

	x->token = NULL;
	x->consume = consume;
	x->pending = false;
	t = start_thread(take_token_and_wait, x);
	pthread_barrier_wait(&x->barrier);
	assert_non_null(x->token);
	return t;
}

/* Let the thread of @x go on, and join it. */
static void finish_exiting(struct exiting *x, pthread_t t)
{
	pthread_barrier_wait(&x->barrier);
	join_thread(t);
}

static void test_interrupt_exited(void **state)
{
	struct ttm_interrupt_token *token;
	struct exiting x;
	pthread_t t;

	(void)state;
	pthread_barrier_init(&x.barrier, NULL, 2);

	t = start_exiting(&x, true);
	token = x.token;
	assert_ptr_equal(ttm_interrupt_token_get(token), token);
	ttm_interrupt_token_put(token);
	assert_int_equal(ttm_interrupt(token), 0);
	assert_int_equal(ttm_interrupt_thread(t), 0); /* twice is once */
	finish_exiting(&x, t);
	assert_true(x.pending);
	assert_int_equal(ttm_interrupt(token), -ESRCH);
	assert_int_equal(ttm_interrupt_thread(t), -ESRCH);
	ttm_interrupt_token_put(token);

	/* Exits with an interrupt pending: it dies with the thread. */
	t = start_exiting(&x, false);
	token = x.token;
	assert_int_equal(ttm_interrupt(token), 0);
	finish_exiting(&x, t);
	assert_int_equal(ttm_interrupt(token), -ESRCH);

	t = start_exiting(&x, true);
	assert_int_equal(ttm_interrupt(token), -ESRCH);
	finish_exiting(&x, t);
	assert_false(x.pending);
	ttm_interrupt_token_put(x.token);
	ttm_interrupt_token_put(token);
	/* Its own token did reach it. */
	t = start_exiting(&x, true);
	assert_int_equal(ttm_interrupt(x.token), 0);
	finish_exiting(&x, t);
	assert_true(x.pending);
	ttm_interrupt_token_put(x.token);

	pthread_barrier_destroy(&x.barrier);
	assert_checks_passed();
}

/* ---- introspection ------------------------------------------------------- */

static int lock_then_unlock_noctx(struct actor *a, void *lock)
{
	(void)a;
	CHECK_INT(ww_mutex_lock(lock, NULL), 0);
	ww_mutex_unlock(lock);
	return 0;
}

static int lock_then_unlock(struct actor *a, void *lock)
{
	CHECK_INT(ww_mutex_lock(lock, &a->ctx), 0);
	ww_mutex_unlock(lock);
	return 0;
}

/*
 * ww_mutex_owner_tid() names the holder's Linux thread, with or without a
 * context, and 0 when free; ww_mutex_waiter_count() counts queued threads.
 */
#define NR_WAITERS 4

static void test_introspection(void **state)
{
	struct ww_class *cls = class_of(state);
	struct ww_acquire_ctx ctx;
	struct actor w[NR_WAITERS];
	struct ww_mutex l;
	unsigned int i;

	ww_mutex_init(&l, cls);
	CHECK_INT(ww_mutex_owner_tid(&l), 0);
	CHECK_INT(ww_mutex_waiter_count(&l), 0);
	ww_acquire_init(&ctx, cls);
	CHECK_INT(ww_mutex_lock(&l, &ctx), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), test_gettid());
	CHECK_INT(ww_mutex_waiter_count(&l), 0);
	ww_mutex_unlock(&l);
	CHECK_INT(ww_mutex_owner_tid(&l), 0);
	ww_acquire_fini(&ctx);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), test_gettid());
	ww_mutex_unlock(&l);
	/* owner_tid may leave a flag in the word: the lock must still work. */
	CHECK(!ww_mutex_is_locked(&l));
	CHECK_INT(ww_mutex_trylock(&l, NULL), 1);
	ww_mutex_unlock(&l);

	/* Even actors lock with a context, odd ones without. */
	for (i = 0; i < NR_WAITERS; i++) {
		actor_start(&w[i], cls);
		if (!(i & 1))
			actor_run(&w[i], act_init, NULL);
	}
	CHECK_INT(actor_run(&w[0], act_lock, &l), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), w[0].tid);
	CHECK(ww_mutex_owner_ctx(&l) == &w[0].ctx);
	actor_run(&w[0], act_unlock, &l);
	CHECK_INT(ww_mutex_owner_tid(&l), 0);
	CHECK_INT(actor_run(&w[1], act_lock_noctx, &l), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), w[1].tid);
	CHECK(ww_mutex_owner_ctx(&l) == NULL);
	actor_run(&w[1], act_unlock, &l);

	/* Count waiters, with and without a context, one by one. */
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);
	for (i = 0; i < NR_WAITERS; i++) {
		actor_post(&w[i], i & 1 ? lock_then_unlock_noctx
					: lock_then_unlock, &l);
		CHECK(wait_for_waiters(&l, i + 1));
		CHECK_INT(ww_mutex_waiter_count(&l), i + 1);
	}
	CHECK_INT(ww_mutex_owner_tid(&l), test_gettid());
	ww_mutex_unlock(&l);
	for (i = 0; i < NR_WAITERS; i++)
		CHECK(actor_wait(&w[i]));
	CHECK_INT(ww_mutex_waiter_count(&l), 0);
	CHECK_INT(ww_mutex_owner_tid(&l), 0);
	for (i = 0; i < NR_WAITERS; i++) {
		if (!(i & 1))
			actor_run(&w[i], act_fini, NULL);
		actor_stop(&w[i]);
	}
	assert_checks_passed();
}

/* ---- environment ------------------------------------------------------ */

extern char **environ;

/*
 * Run this binary with --env-probe and @name=@value in place of every
 * TTMSIM_WW_* variable; its stderr (what the library's constructors said)
 * into @out. Return its wait status.
 */
static int env_probe(const char *name, const char *value, char *out,
		     size_t size)
{
	char self[4096], var[128], *argv[] = { self, "--env-probe", NULL };
	char *envp[256];
	posix_spawn_file_actions_t fa;
	size_t n = 0, len = 0;
	int fds[2], status;
	ssize_t r, got;
	pid_t pid;
	char **e;

	r = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(r > 0);
	self[r] = '\0';
	for (e = environ; *e && n < sizeof(envp) / sizeof(envp[0]) - 2; e++)
		if (strncmp(*e, "TTMSIM_WW_", 10))
			envp[n++] = *e;
	snprintf(var, sizeof(var), "%s=%s", name, value);
	envp[n++] = var;
	envp[n] = NULL;

	assert_int_equal(pipe(fds), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	assert_int_equal(posix_spawn(&pid, self, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while ((got = read(fds[0], out + len, size - 1 - len)) > 0 ||
	       (got < 0 && errno == EINTR))
		if (got > 0)
			len += (size_t)got;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_env(void **state)
{
	static const struct {
		const char *name, *value;
		bool bad;
	} cases[] = {
		{ "TTMSIM_WW_SPIN_NS", "0", false },
		{ "TTMSIM_WW_SPIN_NS", "5000", false },
		{ "TTMSIM_WW_SPIN_NS", "1000000000", false },
		{ "TTMSIM_WW_SPIN_NS", "1000000001", true },
		{ "TTMSIM_WW_SPIN_NS", "99999999999999999999999", true },
		{ "TTMSIM_WW_SPIN_NS", "-5", true },
		{ "TTMSIM_WW_SPIN_NS", "+5", true },
		{ "TTMSIM_WW_SPIN_NS", " 5", true },
		{ "TTMSIM_WW_SPIN_NS", "20us", true },
		{ "TTMSIM_WW_SPIN_NS", "abc", true },
		{ "TTMSIM_WW_INJECT", "1:8", false },
		{ "TTMSIM_WW_INJECT", "8", true },
		{ "TTMSIM_WW_DEBUG", "off", false },
		{ "TTMSIM_WW_DEBUG", "yes", true },
	};
	char out[4096], want[256];
	size_t i;
	int status;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		status = env_probe(cases[i].name, cases[i].value, out,
				   sizeof(out));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("%s='%s': probe wait status %#x, stderr: %s",
				 cases[i].name, cases[i].value, status, out);
		snprintf(want, sizeof(want), "ttmsim: %s='%s' ignored: ",
			 cases[i].name, cases[i].value);
		if (cases[i].bad ? strncmp(out, want, strlen(want)) ||
				   strchr(out, '\n') != out + strlen(out) - 1
				 : out[0] != '\0')
			fail_msg("%s='%s': stderr \"%s\", expected %s",
				 cases[i].name, cases[i].value, out,
				 cases[i].bad ? "one warning" : "nothing");
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(test_basic),
		VARIANT_BOTH(test_mutex, MTX_PLAIN),
		VARIANT_BOTH(test_mutex, MTX_CTX),
		VARIANT_BOTH(test_mutex, MTX_TRY),
		VARIANT_BOTH(test_mutex, MTX_CTX | MTX_TRY),
		VARIANT_BOTH(test_mutex, MTX_WORKER_TRY),
		VARIANT_BOTH(test_mutex, MTX_CTX | MTX_WORKER_TRY),
		VARIANT_BOTH(test_mutex, MTX_TRY | MTX_WORKER_TRY),
		VARIANT_BOTH(test_mutex, MTX_CTX | MTX_TRY | MTX_WORKER_TRY),
		VARIANT_BOTH(test_aa, AA_LOCK),
		VARIANT_BOTH(test_aa, AA_TRY),
		VARIANT_BOTH(test_abba, ABBA_LOCK),
		VARIANT_BOTH(test_abba, ABBA_TRY),
		VARIANT_BOTH(test_abba, ABBA_RESOLVE),
		VARIANT_BOTH(test_abba, ABBA_TRY | ABBA_RESOLVE),
		BOTH_CLASSES(test_abba_race),
		BOTH_CLASSES(test_cycle),
		BOTH_CLASSES(test_younger_vs_older),
		BOTH_CLASSES(test_older_waits),
		VARIANT_BOTH(test_behind_older_waiter, BEHIND_NOCTX_HOLDER),
		VARIANT_BOTH(test_behind_older_waiter, BEHIND_YOUNG_HOLDER),
		VARIANT_BOTH(test_behind_older_waiter, BEHIND_OLDER_EMPTY),
		VARIANT_BOTH(test_behind_older_waiter,
			     BEHIND_YOUNG_HOLDER | BEHIND_OLDER_EMPTY),
		VARIANT_BOTH(test_behind_older_waiter, BEHIND_YOUNGER_EMPTY),
		VARIANT_BOTH(test_woken_to_die, WOKEN_OLDER_HOLDS),
		VARIANT_BOTH(test_woken_to_die, WOKEN_OLDER_EMPTY),
		CLASS_TEST(test_wd_handoff_deadlock, wait_die),
		BOTH_CLASSES(test_wound_sleeping),
		CLASS_TEST(test_ww_stale_wound, wound_wait),
		BOTH_CLASSES(test_nothing_held),
		BOTH_CLASSES(test_trylock_ctx),
		BOTH_CLASSES(test_interrupt_sleeping),
		BOTH_CLASSES(test_interrupt_pending),
		BOTH_CLASSES(test_interrupt_ignored),
		{ .name = "test_interrupt_exited",
		  .test_func = test_interrupt_exited,
		  .setup_func = checks_reset },
		BOTH_CLASSES(test_introspection),
		cmocka_unit_test(test_env),
	};

	/* For test_env: the constructors have spoken by now. */
	if (argc == 2 && !strcmp(argv[1], "--env-probe"))
		return 0;

	return cmocka_run_group_tests_name("ww_basic", tests, NULL, NULL);
}
