// SPDX-License-Identifier: MIT
/*
 * Driver fences (struct ttm_fence_ops, ttm_fence_init()) and the fence
 * calls drivers use:
 *
 *  - each op called in its context and as often as it should: names on
 *    demand; enable_signaling once, lazily (not by peeks nor by a wait of
 *    timeout 0, not on a fence signalled before it is asked), without
 *    the fence's lock, and returning false signals the fence; signaled polled while
 *    pending, its true signalling the fence in the polling thread;
 *    release once, at the last put and only once no reader that could see
 *    the fence is in its read-side section; set_deadline only while
 *    pending;
 *  - reclamation: driver fences replaced and released while readers spin
 *    on them without references, from a bare slot and through a
 *    reservation object's lockless readers (run these under ASan and
 *    TSan: a release before the readers left is a use after free there,
 *    and caught as a dead fence seen by a reader everywhere);
 *  - set_error, timestamps, is_later (64-bit and wrapping 32-bit seqnos),
 *    the stub, wait_any, the callback barrier and the kernel's
 *    callback-race self-test that needs it.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/helpers.h"
#include "gpu_sim/fence.h" /* ttm_fence_tryget(), the lock: white-box */
#include "ttmsim/resv.h"
#include "util/compiler.h"

#define NS_PER_MS 1000000L

/* ---- a driver's fence ---------------------------------------------------- */

#define MAGIC_ALIVE 0x600dfe11u
#define MAGIC_DEAD  0xdeadfe11u

/* What the ops did, for one test; all atomic. */
struct op_log {
	int enables, signaled_polls, releases, deadlines;
	uint64_t deadline;
	int enable_lock_held;   /* the fence's lock was held in the op */
	pthread_t enable_thread, release_thread;
	bool enable_result;     /* what enable_signaling returns */
	bool enable_signals;    /* it signals the fence itself first */
	int hw_done;            /* what signaled reports */
	bool keep_dead;         /* release marks the object, frees it later */
};

struct drv_fence {
	struct ttm_fence base;
	unsigned int magic;     /* atomic */
	struct op_log *log;
	struct drv_fence *dead_next;
	struct ttm_fence *holds;        /* a reference, put by release */
};

static struct drv_fence *to_drv(struct ttm_fence *f)
{
	return container_of(f, struct drv_fence, base);
}

static const char *drv_name(struct ttm_fence *f)
{
	(void)f;
	return "drv";
}

static const char *drv_timeline(struct ttm_fence *f)
{
	(void)f;
	return "drv-ring0";
}

static bool lock_held(struct ttm_fence *f)
{
	if (pthread_mutex_trylock(&f->lock))
		return true;
	pthread_mutex_unlock(&f->lock);
	return false;
}

static bool drv_enable(struct ttm_fence *f)
{
	struct op_log *log = to_drv(f)->log;

	__atomic_store_n(&log->enable_thread, pthread_self(),
			 __ATOMIC_RELAXED);
	if (lock_held(f))
		__atomic_add_fetch(&log->enable_lock_held, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&log->enables, 1, __ATOMIC_RELEASE);
	if (log->enable_signals)
		CHECK_INT(ttm_fence_signal(f, 0), 0);
	return log->enable_result;
}

static bool drv_signaled(struct ttm_fence *f)
{
	struct op_log *log = to_drv(f)->log;

	__atomic_add_fetch(&log->signaled_polls, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&log->hw_done, __ATOMIC_ACQUIRE);
}

/* Dead objects kept until the test ends, when keep_dead says so. */
static struct drv_fence *graveyard;     /* atomic */

static void drv_release(struct ttm_fence *f)
{
	struct drv_fence *d = to_drv(f);
	struct op_log *log = d->log;

	CHECK(__atomic_load_n(&f->refcount, __ATOMIC_RELAXED) == 0);
	CHECK(__atomic_load_n(&d->magic, __ATOMIC_RELAXED) == MAGIC_ALIVE);
	/* Atomic: releases run in any thread (pthread_t is an integer). */
	__atomic_store_n(&log->release_thread, pthread_self(),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&d->magic, MAGIC_DEAD, __ATOMIC_RELAXED);
	/* A release may put fences: theirs run later or nested, no lock. */
	ttm_fence_put(d->holds);
	if (log->keep_dead) {
		d->dead_next = __atomic_load_n(&graveyard, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&graveyard, &d->dead_next,
						    d, true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	} else {
		free(d);
	}
	__atomic_add_fetch(&log->releases, 1, __ATOMIC_RELEASE);
}

static void drv_set_deadline(struct ttm_fence *f, uint64_t deadline_ns)
{
	struct op_log *log = to_drv(f)->log;

	log->deadline = deadline_ns;
	__atomic_add_fetch(&log->deadlines, 1, __ATOMIC_RELEASE);
}

static const struct ttm_fence_ops drv_ops = {
	.get_driver_name = drv_name,
	.get_timeline_name = drv_timeline,
	.enable_signaling = drv_enable,
	.signaled = drv_signaled,
	.release = drv_release,
	.set_deadline = drv_set_deadline,
};

/* Only the mandatory ops: no release, so ttmsim free()s the fence. */
static const struct ttm_fence_ops bare_ops = {
	.get_driver_name = drv_name,
	.get_timeline_name = drv_timeline,
};

static const struct ttm_fence_ops drv64_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = drv_name,
	.get_timeline_name = drv_timeline,
	.release = drv_release,
};

static struct ttm_fence *drv_new_ops(struct op_log *log,
				     const struct ttm_fence_ops *ops,
				     uint64_t ctx, uint64_t seqno)
{
	struct drv_fence *d = calloc(1, sizeof(*d));

	if (!CHECK(d != NULL))
		return NULL;
	d->log = log;
	d->magic = MAGIC_ALIVE;
	ttm_fence_init(&d->base, ops, ctx, seqno);
	return &d->base;
}

static struct ttm_fence *drv_new(struct op_log *log, uint64_t ctx,
				 uint64_t seqno)
{
	return drv_new_ops(log, &drv_ops, ctx, seqno);
}

static void graveyard_free(void)
{
	struct drv_fence *d = __atomic_exchange_n(&graveyard, NULL,
						  __ATOMIC_ACQUIRE), *next;

	for (; d; d = next) {
		next = d->dead_next;
		free(d);
	}
}

static int setup(void **state)
{
	graveyard_free();
	return checks_reset(state);
}

static int load(int *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

/* ---- a callback that records --------------------------------------------- */

struct seen_cb {
	struct ttm_fence_cb cb;
	int calls;              /* atomic */
	int status;
	pthread_t thread;
};

static void seen_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct seen_cb *s = container_of(cb, struct seen_cb, cb);

	s->status = f->status;
	s->thread = pthread_self();
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE);
}

/* ---- ops ----------------------------------------------------------------- */

static void test_init_and_names(void **state)
{
	struct op_log log = { .enable_result = true };
	uint64_t ctx = ttm_fence_context_alloc(1);
	struct ttm_fence *f = drv_new(&log, ctx, 7), *g;

	(void)state;
	assert_true(ttm_fence_context(f) == ctx);
	assert_true(ttm_fence_seqno(f) == 7);
	assert_string_equal(ttm_fence_driver_name(f), "drv");
	assert_string_equal(ttm_fence_timeline_name(f), "drv-ring0");
	assert_int_equal(ttm_fence_create(ctx, 8, &g), 0);
	assert_string_equal(ttm_fence_driver_name(g), "ttmsim");
	assert_non_null(ttm_fence_timeline_name(g));
	ttm_fence_put(g);

	/* Names, peeks and getting references call no other op. */
	ttm_fence_put(ttm_fence_get(f));
	assert_int_equal(log.enables, 0);
	assert_int_equal(log.releases, 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(log.enables, 0);
	ttm_fence_put(f);
	/* No reader in a section: released at once, in this thread. */
	assert_int_equal(load(&log.releases), 1);
	assert_true(pthread_equal(log.release_thread, pthread_self()));
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 1);
	assert_checks_passed();
}

static int act_add_cb(struct actor *a, void *arg)
{
	struct ttm_fence **f = arg;
	static struct seen_cb cb;

	(void)a;
	return ttm_fence_add_callback(*f, &cb.cb, seen_func);
}

static void test_enable_lazily_once(void **state)
{
	struct op_log log = { .enable_result = true };
	struct ttm_fence *f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	struct seen_cb c[3] = { 0 };
	struct actor a;

	(void)state;
	actor_start(&a, NULL);
	/* Peeks and a wait that only tests do not enable. */
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_get_status(f), 0);
	assert_int_equal(ttm_fence_wait(f, false, 0), -ETIME);
	assert_int_equal(log.enables, 0);

	/* The first callback does, in its thread, without the fence lock. */
	assert_int_equal(actor_run(&a, act_add_cb, &f), 0);
	assert_int_equal(load(&log.enables), 1);
	assert_true(pthread_equal(log.enable_thread, a.thread));
	assert_int_equal(log.enable_lock_held, 0);

	/* Never again: more callbacks, waits, explicit enables. */
	assert_int_equal(ttm_fence_add_callback(f, &c[0].cb, seen_func), 0);
	assert_int_equal(ttm_fence_wait(f, false, NS_PER_MS), -ETIME);
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_add_callback(f, &c[1].cb, seen_func), 0);
	assert_int_equal(load(&log.enables), 1);

	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(c[0].calls, 1);
	assert_int_equal(c[1].calls, 1);
	assert_int_equal(ttm_fence_add_callback(f, &c[2].cb, seen_func),
			 -ENOENT);
	assert_int_equal(load(&log.enables), 1);
	ttm_fence_put(f);

	/* A fence that signalled first is never enabled. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_wait(f, false, -1), 0);
	assert_int_equal(ttm_fence_add_callback(f, &c[2].cb, seen_func),
			 -ENOENT);
	assert_int_equal(load(&log.enables), 1);
	ttm_fence_put(f);

	/* A wait enables too. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_wait(f, true, NS_PER_MS), -ETIME);
	assert_int_equal(load(&log.enables), 2);
	assert_true(pthread_equal(log.enable_thread, pthread_self()));
	ttm_fence_signal(f, 0);
	ttm_fence_put(f);
	actor_stop(&a);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 3);
	assert_checks_passed();
}

/*
 * Threads that add callbacks and wait on the same fresh fence at once:
 * the op still runs once per fence.
 */
#define ENABLE_ROUNDS 5000
#define ENABLE_THREADS 3

struct enable_race {
	struct ttm_fence *fence;        /* atomic: this round's */
	int round;                      /* atomic */
	int arrived;                    /* atomic */
};

static void *enable_racer(void *arg)
{
	struct enable_race *e = arg;
	int round;

	for (round = 1; round <= ENABLE_ROUNDS; round++) {
		struct seen_cb c = { 0 };
		struct ttm_fence *f;

		while (__atomic_load_n(&e->round, __ATOMIC_ACQUIRE) < round)
			sched_yield();
		f = __atomic_load_n(&e->fence, __ATOMIC_ACQUIRE);
		if (round % 2)
			CHECK_INT(ttm_fence_add_callback(f, &c.cb, seen_func),
				  0);
		else
			CHECK_INT(ttm_fence_wait(f, false, 1000), -ETIME);
		__atomic_add_fetch(&e->arrived, 1, __ATOMIC_ACQ_REL);
		/* The callback node lives until the main thread signals. */
		while (round % 2 && !load(&c.calls))
			sched_yield();
	}
	return NULL;
}

static void test_enable_once_racing(void **state)
{
	struct op_log log = { .enable_result = true };
	struct enable_race e = { 0 };
	pthread_t t[ENABLE_THREADS];
	int i, round;

	(void)state;
	for (i = 0; i < ENABLE_THREADS; i++)
		t[i] = start_thread(enable_racer, &e);
	for (round = 1; round <= ENABLE_ROUNDS; round++) {
		struct ttm_fence *f = drv_new(&log, 1, (uint64_t)round);

		__atomic_store_n(&e.fence, f, __ATOMIC_RELEASE);
		__atomic_store_n(&e.round, round, __ATOMIC_RELEASE);
		CHECK(wait_for_int(&e.arrived, round * ENABLE_THREADS));
		ttm_fence_signal(f, 0);
		ttm_fence_put(f);
	}
	for (i = 0; i < ENABLE_THREADS; i++)
		join_thread(t[i]);
	assert_int_equal(load(&log.enables), ENABLE_ROUNDS);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), ENABLE_ROUNDS);
	assert_checks_passed();
}

static void test_enable_says_signalled(void **state)
{
	struct op_log log = { .enable_result = false };
	struct seen_cb c = { 0 };
	struct ttm_fence *f;

	(void)state;
	/* false: ttmsim signals it, with the error set before. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_set_error(f, -EIO), 0);
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, seen_func), -ENOENT);
	assert_int_equal(c.calls, 0);
	assert_int_equal(ttm_fence_get_status(f), -EIO);
	ttm_fence_put(f);

	/* The op may signal the fence itself: no deadlock, no double. */
	log.enable_signals = true;
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_wait(f, false, -1), 0);
	assert_int_equal(ttm_fence_get_status(f), 1);
	ttm_fence_put(f);
	log.enable_result = true;
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, seen_func), -ENOENT);
	assert_int_equal(ttm_fence_get_status(f), 1);
	ttm_fence_put(f);
	assert_int_equal(load(&log.enables), 3);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 3);
	assert_checks_passed();
}

static void test_signaled_polled(void **state)
{
	struct op_log log = { .enable_result = true };
	struct ttm_fence *f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	struct seen_cb c = { 0 };
	uint64_t ts, before;

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, seen_func), 0);
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_get_status(f), 0);
	assert_true(log.signaled_polls >= 2);
	assert_int_equal(ttm_fence_timestamp(f, &ts), -EBUSY);

	/* The hardware is done: the next peek signals, in its thread. */
	__atomic_store_n(&log.hw_done, 1, __ATOMIC_RELEASE);
	before = (uint64_t)now_ns();
	assert_int_equal(ttm_fence_get_status(f), 1);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.status, 1);
	assert_true(pthread_equal(c.thread, pthread_self()));
	assert_int_equal(ttm_fence_timestamp(f, &ts), 0);
	assert_true(ts >= before && ts <= (uint64_t)now_ns());

	/* Signalled: not polled any more. */
	log.signaled_polls = 0;
	assert_true(ttm_fence_is_signaled(f));
	assert_int_equal(log.signaled_polls, 0);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_set_deadline(void **state)
{
	struct op_log log = { .enable_result = true };
	struct ttm_fence *f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	struct ttm_fence *g;

	(void)state;
	ttm_fence_set_deadline(f, 12345);
	assert_int_equal(log.deadlines, 1);
	assert_true(log.deadline == 12345);
	ttm_fence_signal(f, 0);
	ttm_fence_set_deadline(f, 99);
	assert_int_equal(log.deadlines, 1);
	ttm_fence_put(f);
	/* The library's fences have no deadline op: nothing happens. */
	assert_int_equal(ttm_fence_create(1, 1, &g), 0);
	ttm_fence_set_deadline(g, 5);
	ttm_fence_put(g);
	assert_checks_passed();
}

/* ---- release ------------------------------------------------------------- */

static void test_release_once_at_last_put(void **state)
{
	struct op_log log = { .enable_result = true };
	struct ttm_fence *f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	struct seen_cb c = { 0 };
	int fd;

	(void)state;
	ttm_fence_get(f);
	ttm_fence_get(f);
	ttm_fence_put(f);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 0);
	/* Unsignalled, with a callback and a descriptor: all ends first. */
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, seen_func), 0);
	fd = ttm_fence_export_fd(f);
	assert_true(fd >= 0);
	ttm_fence_put(f);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.status, -ECANCELED);
	assert_int_equal(load(&log.releases), 1);
	close(fd);

	/* A release that drops the last reference of another. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	to_drv(f)->holds = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(f);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 3);

	/* Without a release op: free() (LeakSanitizer watches). */
	f = drv_new_ops(&log, &bare_ops, ttm_fence_context_alloc(1), 1);
	ttm_fence_signal(f, 0);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 3);
	assert_checks_passed();
}

/* A thread that stays in a read-side section until told. */
struct reader_hold {
	int inside, leave;      /* atomic */
};

static void *hold_section(void *arg)
{
	struct reader_hold *h = arg;

	ttm_fence_read_lock();
	ttm_fence_read_lock();  /* nested: only the outer one counts */
	ttm_fence_read_unlock();
	__atomic_store_n(&h->inside, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->leave, __ATOMIC_ACQUIRE))
		sched_yield();
	ttm_fence_read_unlock();
	return NULL;
}

static void test_release_after_readers(void **state)
{
	struct op_log log = { .enable_result = true };
	struct reader_hold h = { 0 };
	struct ttm_fence *f, *g;
	pthread_t t;

	(void)state;
	t = start_thread(hold_section, &h);
	CHECK(wait_for_int(&h.inside, 1));
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_signal(f, 0);
	ttm_fence_put(f);
	/* The reader could have seen it: deferred, even past other puts. */
	assert_int_equal(load(&log.releases), 0);
	g = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(g);
	assert_int_equal(load(&log.releases), 0);
	/* Library fences never wait: type-stable. */
	assert_int_equal(ttm_fence_create(1, 1, &g), 0);
	ttm_fence_put(g);

	/* Our own section: the barrier would wait for itself. */
	ttm_fence_read_lock();
	assert_int_equal(ttm_fence_rcu_barrier(), -EDEADLK);
	ttm_fence_read_unlock();

	__atomic_store_n(&h.leave, 1, __ATOMIC_RELEASE);
	join_thread(t);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 2);

	/* A section entered after the put holds nothing back. */
	h = (struct reader_hold){ 0 };
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 3);
	t = start_thread(hold_section, &h);
	CHECK(wait_for_int(&h.inside, 1));
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 3);
	__atomic_store_n(&h.leave, 1, __ATOMIC_RELEASE);
	join_thread(t);
	/* The next retirement reclaims what the reader held back. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 5);
	assert_checks_passed();
}

/*
 * A fork() while another thread is in a section: that thread does not
 * exist in the child, whose releases must not wait for it.
 */
static void test_release_after_fork(void **state)
{
	struct op_log log = { .enable_result = true };
	struct reader_hold h = { 0 };
	struct ttm_fence *f;
	int status = -1;
	pthread_t t;
	pid_t pid;

	(void)state;
	t = start_thread(hold_section, &h);
	CHECK(wait_for_int(&h.inside, 1));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		f = drv_new(&log, ttm_fence_context_alloc(1), 1);
		ttm_fence_put(f);
		_exit(load(&log.releases) == 1 &&
		      ttm_fence_rcu_barrier() == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's reader still holds its releases back. */
	f = drv_new(&log, ttm_fence_context_alloc(1), 1);
	ttm_fence_put(f);
	assert_int_equal(load(&log.releases), 0);
	__atomic_store_n(&h.leave, 1, __ATOMIC_RELEASE);
	join_thread(t);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(load(&log.releases), 1);
	assert_checks_passed();
}

/* ---- reclamation under lockless readers ---------------------------------- */

#define RECLAIM_ROUNDS 20000
#define RECLAIM_READERS 2
#define RECLAIM_HITS 1000

struct dslot {
	struct ttm_fence *fence;        /* atomic */
	int started, stop;              /* atomic */
	int hits, dead;                 /* atomic */
};

static void *dslot_reader(void *arg)
{
	struct dslot *s = arg;

	__atomic_add_fetch(&s->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct ttm_fence *f;

		ttm_fence_read_lock();
		f = __atomic_load_n(&s->fence, __ATOMIC_ACQUIRE);
		/* In memory while we are inside, whatever its refcount. */
		if (f && __atomic_load_n(&to_drv(f)->magic,
					 __ATOMIC_RELAXED) != MAGIC_ALIVE)
			__atomic_add_fetch(&s->dead, 1, __ATOMIC_RELAXED);
		if (f && ttm_fence_tryget(f)) {
			ttm_fence_is_signaled(f);
			ttm_fence_put(f);
			__atomic_add_fetch(&s->hits, 1, __ATOMIC_RELAXED);
		}
		ttm_fence_read_unlock();
	}
	return NULL;
}

/*
 * A writer replaces the slot's fence and drops the old one, which goes to
 * its release op, while readers take fences from the slot without a
 * reference. @keep_dead: released objects stay allocated and marked, so a
 * release too early is counted without a sanitizer; else they are freed,
 * which AddressSanitizer checks.
 */
static void reclaim_slot(bool keep_dead)
{
	struct op_log log = { .keep_dead = keep_dead };
	uint64_t ctx = ttm_fence_context_alloc(1);
	pthread_t t[RECLAIM_READERS];
	struct dslot s = { 0 };
	int i, made = 0;
	long limit;

	for (i = 0; i < RECLAIM_READERS; i++)
		t[i] = start_thread(dslot_reader, &s);
	CHECK(wait_for_int(&s.started, RECLAIM_READERS));
	limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	for (i = 0; i < RECLAIM_ROUNDS ||
		    (load(&s.hits) < RECLAIM_HITS && now_ns() < limit); i++) {
		struct ttm_fence *old;

		old = __atomic_exchange_n(&s.fence,
					  drv_new(&log, ctx, (uint64_t)i + 1),
					  __ATOMIC_ACQ_REL);
		made++;
		if (old) {
			ttm_fence_signal(old, 0);
			ttm_fence_put(old);
		}
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < RECLAIM_READERS; i++)
		join_thread(t[i]);
	ttm_fence_put(s.fence);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	print_message("%d fences: %d released, %d trygets, %d dead seen\n",
		      made, load(&log.releases), s.hits, s.dead);
	CHECK_INT(load(&log.releases), made);
	CHECK_INT(s.dead, 0);
	CHECK(s.hits >= RECLAIM_HITS);
	assert_checks_passed();
}

static void test_reclaim_slot_marked(void **state)
{
	(void)state;
	reclaim_slot(true);
}

static void test_reclaim_slot_freed(void **state)
{
	(void)state;
	reclaim_slot(false);
}

/*
 * The same through a reservation object: its lockless readers
 * (ttm_resv_test_signaled(), ttm_resv_get_fences(), the unlocked
 * iterator) against a writer whose every add replaces the previous fence
 * of its context, which its release op frees.
 */
static DEFINE_WD_CLASS(fence_ops_class);

struct resv_race {
	struct ttm_resv resv;
	int started, stop;      /* atomic */
	int reads;              /* atomic */
};

static void *resv_reader(void *arg)
{
	struct resv_race *r = arg;
	unsigned int n = 0;

	__atomic_add_fetch(&r->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct ttm_fence **fences, *f;
		struct ttm_resv_iter cursor;
		unsigned int count, i;

		switch (n++ % 3) {
		case 0:
			ttm_resv_test_signaled(&r->resv,
					       TTM_RESV_USAGE_BOOKKEEP);
			break;
		case 1:
			if (ttm_resv_get_fences(&r->resv,
						TTM_RESV_USAGE_BOOKKEEP,
						&fences, &count))
				break;
			for (i = 0; i < count; i++) {
				CHECK(to_drv(fences[i])->magic ==
				      MAGIC_ALIVE);
				ttm_fence_put(fences[i]);
			}
			free(fences);
			break;
		default:
			ttm_resv_iter_begin(&cursor, &r->resv,
					    TTM_RESV_USAGE_BOOKKEEP);
			/*
			 * Yielding between steps, each in a section of its
			 * own: the writer may prune and release meanwhile.
			 */
			for (f = ttm_resv_iter_first_unlocked(&cursor); f;
			     f = ttm_resv_iter_next_unlocked(&cursor)) {
				CHECK(to_drv(f)->magic == MAGIC_ALIVE);
				sched_yield();
			}
			ttm_resv_iter_end(&cursor);
		}
		__atomic_add_fetch(&r->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

#define RESV_ROUNDS 20000
#define RESV_READS 1000

static void test_reclaim_resv_readers(void **state)
{
	struct op_log log = { 0 };
	uint64_t ctx = ttm_fence_context_alloc(2);
	pthread_t t[RECLAIM_READERS];
	struct resv_race *r = calloc(1, sizeof(*r));
	struct ttm_fence *f;
	int i, made = 0;
	long limit;

	(void)state;
	assert_non_null(r);
	ttm_resv_init(&r->resv, &fence_ops_class);
	for (i = 0; i < RECLAIM_READERS; i++)
		t[i] = start_thread(resv_reader, r);
	CHECK(wait_for_int(&r->started, RECLAIM_READERS));
	limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	for (i = 0; i < RESV_ROUNDS ||
		    (load(&r->reads) < RESV_READS && now_ns() < limit); i++) {
		/* Two contexts, so that lists hold several fences. */
		f = drv_new(&log, ctx + (unsigned int)(i & 1),
			    (uint64_t)i + 1);
		assert_int_equal(ww_mutex_lock(&r->resv.lock, NULL), 0);
		assert_int_equal(ttm_resv_reserve_fences(&r->resv, 1), 0);
		ttm_resv_add_fence(&r->resv, f, (enum ttm_resv_usage)(i % 4));
		ww_mutex_unlock(&r->resv.lock);
		made++;
		/* Some signalled: pruned by a later add, and put then. */
		if (i % 3 == 0)
			ttm_fence_signal(f, 0);
		ttm_fence_put(f);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < RECLAIM_READERS; i++)
		join_thread(t[i]);
	ttm_resv_fini(&r->resv);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	print_message("%d fences: %d released, %d reads\n", made,
		      load(&log.releases), load(&r->reads));
	CHECK_INT(load(&log.releases), made);
	CHECK(load(&r->reads) >= RESV_READS);
	free(r);
	assert_checks_passed();
}

/* ---- set_error, timestamps, is_later, the stub --------------------------- */

static void test_set_error(void **state)
{
	struct ttm_fence *f;

	(void)state;
	assert_int_equal(ttm_fence_create(1, 1, &f), 0);
	assert_int_equal(ttm_fence_set_error(f, 0), -EINVAL);
	assert_int_equal(ttm_fence_set_error(f, 5), -EINVAL);
	assert_int_equal(ttm_fence_set_error(f, -FENCE_MAX_ERRNO - 1),
			 -EINVAL);
	/* Pending still, and the last error set wins. */
	assert_int_equal(ttm_fence_set_error(f, -ETIMEDOUT), 0);
	assert_int_equal(ttm_fence_set_error(f, -EIO), 0);
	assert_int_equal(ttm_fence_get_status(f), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_get_status(f), -EIO);
	/* After the signal: a caller's bug, refused, nothing changes. */
	assert_int_equal(ttm_fence_set_error(f, -ENODEV), -EINVAL);
	assert_int_equal(ttm_fence_get_status(f), -EIO);
	ttm_fence_put(f);

	/* An error given to the signal beats the one set before. */
	assert_int_equal(ttm_fence_create(1, 2, &f), 0);
	assert_int_equal(ttm_fence_set_error(f, -EIO), 0);
	assert_int_equal(ttm_fence_signal(f, -ENODEV), 0);
	assert_int_equal(ttm_fence_get_status(f), -ENODEV);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_timestamp(void **state)
{
	uint64_t before, ts = 0, ts2 = 1;
	struct ttm_fence *f;

	(void)state;
	assert_int_equal(ttm_fence_create(1, 1, &f), 0);
	assert_int_equal(ttm_fence_timestamp(f, &ts), -EBUSY);
	assert_true(ts == 0);
	before = (uint64_t)now_ns();
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	assert_int_equal(ttm_fence_timestamp(f, &ts), 0);
	assert_true(ts >= before && ts <= (uint64_t)now_ns());
	/* Fixed once signalled. */
	assert_int_equal(ttm_fence_timestamp(f, &ts2), 0);
	assert_true(ts == ts2);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_is_later(void **state)
{
	struct op_log log = { 0 };
	uint64_t ctx = ttm_fence_context_alloc(2);
	struct ttm_fence *a, *b, *c, *d, *w1, *w2, *x1, *x2;

	(void)state;
	/* The library's fences: 64-bit seqnos, no wrap. */
	assert_int_equal(ttm_fence_create(ctx, 1, &a), 0);
	assert_int_equal(ttm_fence_create(ctx, 2, &b), 0);
	assert_int_equal(ttm_fence_create(ctx, 0xffffffffull, &c), 0);
	assert_int_equal(ttm_fence_create(ctx + 1, 3, &d), 0);
	assert_true(ttm_fence_is_later(b, a));
	assert_false(ttm_fence_is_later(a, b));
	assert_false(ttm_fence_is_later(a, a));
	assert_true(ttm_fence_is_later(c, a));
	assert_false(ttm_fence_is_later(a, c));
	/* Different timelines: never later, either way. */
	assert_false(ttm_fence_is_later(d, a));
	assert_false(ttm_fence_is_later(a, d));

	/* A driver's 32-bit seqnos wrap: 1 comes after 0xffffffff. */
	w1 = drv_new(&log, ctx, 0xffffffffull);
	w2 = drv_new(&log, ctx, 1);
	assert_true(ttm_fence_is_later(w2, w1));
	assert_false(ttm_fence_is_later(w1, w2));
	ttm_fence_put(w2);
	/* Half the space apart: neither is later. */
	w2 = drv_new(&log, ctx, 0x7fffffffull);
	assert_false(ttm_fence_is_later(w2, w1));
	assert_false(ttm_fence_is_later(w1, w2));
	/* With use_64bit_seqno: no wrap. */
	x1 = drv_new_ops(&log, &drv64_ops, ctx, 0xffffffffull);
	x2 = drv_new_ops(&log, &drv64_ops, ctx, 0x100000001ull);
	assert_true(ttm_fence_is_later(x2, x1));
	assert_false(ttm_fence_is_later(x1, x2));

	ttm_fence_put(a);
	ttm_fence_put(b);
	ttm_fence_put(c);
	ttm_fence_put(d);
	ttm_fence_put(w1);
	ttm_fence_put(w2);
	ttm_fence_put(x1);
	ttm_fence_put(x2);
	assert_checks_passed();
}

static void test_stub(void **state)
{
	struct ttm_fence *s1 = ttm_fence_get_stub(), *s2 = ttm_fence_get_stub();
	struct seen_cb c = { 0 };
	uint64_t ts;
	int i;

	(void)state;
	assert_ptr_equal(s1, s2);
	assert_true(ttm_fence_is_signaled(s1));
	assert_int_equal(ttm_fence_get_status(s1), 1);
	assert_int_equal(ttm_fence_timestamp(s1, &ts), 0);
	assert_int_equal(ttm_fence_wait(s1, true, -1), 0);
	assert_int_equal(ttm_fence_add_callback(s1, &c.cb, seen_func),
			 -ENOENT);
	assert_int_equal(ttm_fence_signal(s1, 0), -EINVAL);
	ttm_fence_put(s2);
	/* More puts than gets of ours never free it: it keeps one. */
	for (i = 0; i < 3; i++)
		ttm_fence_put(ttm_fence_get_stub());
	ttm_fence_put(s1);
	s1 = ttm_fence_get_stub();
	assert_true(__atomic_load_n(&s1->refcount, __ATOMIC_RELAXED) >= 2);
	ttm_fence_put(s1);
	assert_checks_passed();
}

/* ---- wait_any ------------------------------------------------------------ */

struct any_args {
	struct ttm_fence **fences;
	unsigned int count;
	bool interruptible;
	int64_t timeout_ns;
	unsigned int index;
};

static int act_wait_any(struct actor *a, void *arg)
{
	struct any_args *w = arg;

	(void)a;
	w->index = ~0u;
	return ttm_fence_wait_any(w->fences, w->count, w->interruptible,
				  w->timeout_ns, &w->index);
}

static void test_wait_any(void **state)
{
	struct op_log log = { .enable_result = true };
	struct ttm_fence *f[3];
	struct any_args w = { f, 3, true, -1, 0 };
	unsigned int i, idx = 99;
	struct actor a;

	(void)state;
	actor_start(&a, NULL);
	for (i = 0; i < 2; i++)
		assert_int_equal(ttm_fence_create(1, i, &f[i]), 0);
	f[2] = drv_new(&log, ttm_fence_context_alloc(1), 1);

	assert_int_equal(ttm_fence_wait_any(f, 0, false, -1, &idx), -EINVAL);
	/* Only a test: nothing enabled, nothing queued. */
	assert_int_equal(ttm_fence_wait_any(f, 3, false, 0, &idx), -ETIME);
	assert_int_equal(log.enables, 0);
	assert_int_equal(ttm_fence_wait_any(f, 3, false, NS_PER_MS, &idx),
			 -ETIME);
	assert_int_equal(load(&log.enables), 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(fence_waiters(f[i]), 0);

	/* Woken by the last one. */
	actor_post(&a, act_wait_any, &w);
	for (i = 0; i < 3; i++)
		assert_true(wait_for_fence_waiters(f[i], 1));
	assert_int_equal(ttm_fence_signal(f[2], -EIO), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	assert_int_equal(w.index, 2);
	for (i = 0; i < 3; i++)
		assert_int_equal(fence_waiters(f[i]), 0);

	/* Interrupted. */
	w.count = 2;
	actor_post(&a, act_wait_any, &w);
	for (i = 0; i < 2; i++)
		assert_true(wait_for_fence_waiters(f[i], 1));
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), -EINTR);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(fence_waiters(f[i]), 0);

	/* Several signalled: the first in the array. */
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);
	assert_int_equal(ttm_fence_wait_any(f, 3, false, -1, &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	assert_int_equal(ttm_fence_wait_any(f, 3, false, 0, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(load(&log.enables), 1);

	actor_stop(&a);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
	assert_checks_passed();
}

/* ---- the callback barrier ------------------------------------------------ */

struct gated_cb {
	struct ttm_fence_cb cb;
	struct event go;
	int entered, done;      /* atomic */
};

static void gated_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct gated_cb *g = container_of(cb, struct gated_cb, cb);

	(void)f;
	__atomic_store_n(&g->entered, 1, __ATOMIC_RELEASE);
	CHECK(event_wait_for(&g->go, WAIT_LIMIT_S));
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
}

static int act_barrier(struct actor *a, void *f)
{
	(void)a;
	ttm_fence_cb_barrier(f);
	return 0;
}

static int act_signal(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_signal(f, 0);
}

/*
 * A fence marked signalled whose callback still runs: a peek and a wait
 * say done at once, the barrier waits for the callback.
 */
static void test_cb_barrier(void **state)
{
	struct gated_cb g = { 0 };
	struct ttm_fence *f;
	struct actor sig, bar;

	(void)state;
	event_init(&g.go);
	actor_start(&sig, NULL);
	actor_start(&bar, NULL);
	assert_int_equal(ttm_fence_create(1, 1, &f), 0);
	/* Pending: nothing to wait for. */
	ttm_fence_cb_barrier(f);
	assert_int_equal(ttm_fence_add_callback(f, &g.cb, gated_func), 0);
	actor_post(&sig, act_signal, f);
	CHECK(wait_for_int(&g.entered, 1));
	assert_true(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_wait(f, false, -1), 0);
	assert_int_equal(load(&g.done), 0);

	actor_post(&bar, act_barrier, f);
	/* It stays in the barrier while the callback runs. */
	usleep(20 * 1000);
	assert_true(actor_busy(&bar));
	event_set(&g.go);
	assert_true(actor_wait(&bar));
	assert_int_equal(load(&g.done), 1);
	assert_true(actor_wait(&sig));
	assert_int_equal(actor_ret(&sig), 0);
	/* Signalled and done: at once. */
	ttm_fence_cb_barrier(f);
	actor_stop(&sig);
	actor_stop(&bar);
	event_destroy(&g.go);
	ttm_fence_put(f);
	assert_checks_passed();
}

/* From one of its own callbacks: returns at once. */
static void barrier_in_cb(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct seen_cb *s = container_of(cb, struct seen_cb, cb);

	ttm_fence_cb_barrier(f);
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE);
}

static void test_cb_barrier_from_callback(void **state)
{
	struct seen_cb c = { 0 };
	struct ttm_fence *f;

	(void)state;
	assert_int_equal(ttm_fence_create(1, 1, &f), 0);
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, barrier_in_cb), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(c.calls, 1);
	ttm_fence_put(f);
	assert_checks_passed();
}

/*
 * A wait that finds the fence pending returns only once its callbacks have
 * run, even when the fence is signalled elsewhere between the wait's peek
 * and its queueing: the signaled op, which the peek calls, lets another
 * thread signal the fence right then, whose slow callback is still
 * running when the wait goes on to queue itself.
 */
static void spin(long ns);

struct late_signal {
	struct actor sig;
	int armed;              /* atomic: the next poll lets it signal */
	int entered, done;      /* atomic: the callback's progress */
	struct ttm_fence_cb cb;
};

static struct late_signal *late;

static void late_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct late_signal *l = container_of(cb, struct late_signal, cb);

	(void)f;
	__atomic_store_n(&l->entered, 1, __ATOMIC_RELEASE);
	spin(100 * NS_PER_MS);
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
}

static bool late_signaled(struct ttm_fence *f)
{
	if (__atomic_exchange_n(&late->armed, 0, __ATOMIC_ACQ_REL)) {
		CHECK(actor_post(&late->sig, act_signal, f));
		/* Marked signalled, its callback running: we said pending. */
		CHECK(wait_for_int(&late->entered, 1));
	}
	return false;
}

static const struct ttm_fence_ops late_ops = {
	.get_driver_name = drv_name,
	.get_timeline_name = drv_timeline,
	.signaled = late_signaled,
};

static void test_wait_after_late_callbacks(void **state)
{
	struct late_signal l = { .armed = 0 };
	struct ttm_fence *f = malloc(sizeof(*f));

	(void)state;
	assert_non_null(f);
	late = &l;
	actor_start(&l.sig, NULL);
	ttm_fence_init(f, &late_ops, ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_add_callback(f, &l.cb, late_func), 0);
	__atomic_store_n(&l.armed, 1, __ATOMIC_RELEASE);
	assert_int_equal(ttm_fence_wait(f, false, -1), 0);
	assert_int_equal(load(&l.entered), 1);
	assert_int_equal(load(&l.done), 1);
	assert_true(actor_wait(&l.sig));
	assert_int_equal(actor_ret(&l.sig), 0);
	actor_stop(&l.sig);
	ttm_fence_put(f);
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	late = NULL;
	assert_checks_passed();
}

/*
 * The kernel's callback-race self-test, afresh: two threads, each round
 * publishing a fence of its own, adding a callback to the other's, then
 * signalling its own. A thread that does not find its callback run yet
 * waits for the other's fence, then for its callbacks with the barrier:
 * then the callback must have run. Without the barrier the wait returns as
 * soon as the fence is marked signalled, before its callbacks run, and the
 * callback is lost (thread 0's callback spins a while, to widen that
 * window).
 */
#define RACE_ROUNDS 2000
#define RACE_CB_NS 20000        /* a callback's run time: the window */

struct race_cb {
	struct ttm_fence_cb cb;
	long spin_ns;           /* how long the callback runs */
	int seen;               /* atomic */
};

static void spin(long ns)
{
	long until = now_ns() + ns;

	while (now_ns() < until)
		cpu_relax();
}

static void race_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct race_cb *r = container_of(cb, struct race_cb, cb);

	(void)f;
	spin(r->spin_ns);
	__atomic_store_n(&r->seen, 1, __ATOMIC_RELEASE);
}

struct race {
	struct ttm_fence *slot[2];      /* atomic; a reference each */
	int arrived;                    /* atomic: at the rendezvous */
	int lost;                       /* atomic */
};

/*
 * Both threads meet here, spinning, so that they leave at once (a sleeping
 * barrier wakes one thread tens of microseconds after the other).
 */
static void rendezvous(struct race *r, int *generation)
{
	int target = 2 * ++*generation;
	unsigned int spins = 0;

	__atomic_add_fetch(&r->arrived, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&r->arrived, __ATOMIC_ACQUIRE) < target)
		if (++spins % 1024)
			cpu_relax();
		else
			sched_yield();  /* the other one may be off the CPU */
}

struct race_thread {
	struct race *race;
	int me;
};

static void *race_thread(void *arg)
{
	struct race_thread *rt = arg;
	struct race *r = rt->race;
	int me = rt->me, round, generation = 0;

	for (round = 0; round < RACE_ROUNDS; round++) {
		/* Thread 0's slow, so that thread 1 is still in it. */
		struct race_cb cb = { .spin_ns = me ? 0 : RACE_CB_NS };
		struct ttm_fence *mine, *other;

		if (!CHECK_INT(ttm_fence_create(1, 1, &mine), 0))
			break;
		__atomic_store_n(&r->slot[me], ttm_fence_get(mine),
				 __ATOMIC_RELEASE);
		rendezvous(r, &generation);
		other = __atomic_load_n(&r->slot[!me], __ATOMIC_ACQUIRE);
		if (ttm_fence_add_callback(other, &cb.cb, race_func))
			__atomic_store_n(&cb.seen, 1, __ATOMIC_RELEASE);
		/* Thread 0 lets thread 1 catch up, by a varying time. */
		spin(me ? 0 : (round % 8) * RACE_CB_NS / 8);
		ttm_fence_signal(mine, 0);
		if (!__atomic_load_n(&cb.seen, __ATOMIC_ACQUIRE)) {
			ttm_fence_wait(other, false, -1);
			ttm_fence_cb_barrier(other);
		}
		if (!__atomic_load_n(&cb.seen, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&r->lost, 1, __ATOMIC_RELAXED);
		/* Whatever happened, @cb is done with before it goes. */
		ttm_fence_cb_barrier(other);
		rendezvous(r, &generation);
		ttm_fence_put(r->slot[me]);
		ttm_fence_put(mine);
		rendezvous(r, &generation);
	}
	return NULL;
}

static void test_callback_race(void **state)
{
	struct race r = { .lost = 0 };
	struct race_thread rt[2] = { { &r, 0 }, { &r, 1 } };
	pthread_t t[2];
	int i;

	(void)state;
	for (i = 0; i < 2; i++)
		t[i] = start_thread(race_thread, &rt[i]);
	for (i = 0; i < 2; i++)
		join_thread(t[i]);
	print_message("%d rounds, %d callbacks lost\n", RACE_ROUNDS, r.lost);
	CHECK_INT(r.lost, 0);
	assert_checks_passed();
}

#define TEST(fn) { .name = #fn, .test_func = fn, .setup_func = setup }

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_init_and_names),
		TEST(test_enable_lazily_once),
		TEST(test_enable_once_racing),
		TEST(test_enable_says_signalled),
		TEST(test_signaled_polled),
		TEST(test_set_deadline),
		TEST(test_release_once_at_last_put),
		TEST(test_release_after_readers),
		TEST(test_release_after_fork),
		TEST(test_reclaim_slot_marked),
		TEST(test_reclaim_slot_freed),
		TEST(test_reclaim_resv_readers),
		TEST(test_set_error),
		TEST(test_timestamp),
		TEST(test_is_later),
		TEST(test_stub),
		TEST(test_wait_any),
		TEST(test_cb_barrier),
		TEST(test_cb_barrier_from_callback),
		TEST(test_wait_after_late_callbacks),
		TEST(test_callback_race),
	};
	int ret = cmocka_run_group_tests_name("fence-ops", tests, NULL, NULL);

	graveyard_free();
	return ret;
}
