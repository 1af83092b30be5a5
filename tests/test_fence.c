// SPDX-License-Identifier: MIT
/*
 * Functional tests of fences (ttmsim/fence.h):
 *
 *  - signalling once, with or without an error, and the status values;
 *  - callbacks: exactly once, in order, in the signalling thread; refused
 *    after signalling; removed ones never run; run with -ECANCELED when an
 *    unsignalled fence is freed;
 *  - races of signal against remove, add and wait, many rounds each;
 *  - waits: timeouts, timeout 0, wake-ups, interrupts (taken by an
 *    interruptible wait, left pending by the others);
 *  - file descriptors: poll(), libdrm's sync_wait(), import of a live
 *    fence and of one that is gone, and of descriptors that are not ours;
 *  - merges: either order, the first error, signalled inputs;
 *  - the pool: ttm_fence_tryget() on freed fences, frees in other threads,
 *    and the cost of create + signal + put.
 *
 * Waits for another thread are for a condition (a waiter queued on the
 * fence, an actor's step finished), bounded by WAIT_LIMIT_S; nothing sleeps
 * to let a race happen. Worker threads report through CHECK().
 */
#include <fcntl.h>
#include <libsync.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "lib/helpers.h"
#include "gpu_sim/fence.h" /* the struct and ttm_fence_tryget(): white-box */
#include "ttmsim/fence_container.h"
#include "util/compiler.h"

#define NS_PER_S 1000000000L
#define LIMIT_NS ((int64_t)WAIT_LIMIT_S * NS_PER_S)

static struct ttm_fence *fence_new(void)
{
	struct ttm_fence *f = NULL;
	int ret = ttm_fence_create(ttm_fence_context_alloc(1), 1, &f);

	CHECK_INT(ret, 0);
	return f;
}

/* ---- a callback that counts ---------------------------------------------- */

static int call_seq; /* atomic: orders the calls of a test */

struct counted_cb {
	struct ttm_fence_cb cb;
	int calls;              /* atomic */
	int order;              /* call_seq at the last call */
	int status;             /* the fence's status it saw */
	pthread_t thread;       /* where it ran */
};

static void counted_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct counted_cb *c = container_of(cb, struct counted_cb, cb);

	c->order = __atomic_add_fetch(&call_seq, 1, __ATOMIC_RELAXED);
	c->status = ttm_fence_get_status(f);
	c->thread = pthread_self();
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELEASE);
}

/* The same, taking its time: a wide window for a racing remove. */
static void slow_counted_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	sched_yield();
	counted_func(f, cb);
}

static int calls(struct counted_cb *c)
{
	return __atomic_load_n(&c->calls, __ATOMIC_ACQUIRE);
}

/* ---- actor steps; @arg is the fence -------------------------------------- */

static int act_signal(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_signal(f, 0);
}

static int act_wait(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_wait(f, false, -1);
}

static int act_wait_intr(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_wait(f, true, -1);
}

static int act_wait_short(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_wait(f, false, 20 * 1000 * 1000);
}

/* @arg points to a descriptor. */
static int act_sync_wait(struct actor *a, void *fd)
{
	(void)a;
	return sync_wait(*(int *)fd, WAIT_LIMIT_S * 1000) ? -errno : 0;
}

/* ---- signalling ---------------------------------------------------------- */

static void test_signal_once(void **state)
{
	struct ttm_fence *f, *g;
	uint64_t ctx = ttm_fence_context_alloc(1);

	(void)state;
	assert_int_equal(ttm_fence_create(ctx, 42, &f), 0);
	assert_true(ttm_fence_context(f) == ctx);
	assert_true(ttm_fence_seqno(f) == 42);
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_get_status(f), 0);

	/* Not negative errnos: refused, nothing changes. */
	assert_int_equal(ttm_fence_signal(f, 1), -EINVAL);
	assert_int_equal(ttm_fence_signal(f, -FENCE_MAX_ERRNO - 1), -EINVAL);
	assert_false(ttm_fence_is_signaled(f));

	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_get_status(f), 1);
	assert_int_equal(ttm_fence_signal(f, 0), -EINVAL);
	assert_int_equal(ttm_fence_signal(f, -EIO), -EINVAL);
	assert_int_equal(ttm_fence_get_status(f), 1);
	ttm_fence_put(f);

	assert_int_equal(ttm_fence_create(ctx, 43, &g), 0);
	assert_int_equal(ttm_fence_signal(g, -EIO), 0);
	assert_true(ttm_fence_is_signaled(g));
	assert_int_equal(ttm_fence_get_status(g), -EIO);
	assert_int_equal(ttm_fence_signal(g, 0), -EINVAL);
	assert_int_equal(ttm_fence_get_status(g), -EIO);
	/* Waiting on a failed fence succeeds; the error is the status. */
	assert_int_equal(ttm_fence_wait(g, false, -1), 0);
	ttm_fence_put(g);

	assert_int_equal(ttm_fence_create(ctx, 44, &g), 0);
	assert_int_equal(ttm_fence_signal(g, -FENCE_MAX_ERRNO), 0);
	assert_int_equal(ttm_fence_get_status(g), -FENCE_MAX_ERRNO);
	ttm_fence_put(g);

	ttm_fence_put(NULL);
	assert_null(ttm_fence_get(NULL));
}

static void test_context_alloc(void **state)
{
	uint64_t a = ttm_fence_context_alloc(3);
	uint64_t b = ttm_fence_context_alloc(1);

	(void)state;
	assert_true(a != 0);
	assert_true(b == a + 3);
}

/* ---- callbacks ----------------------------------------------------------- */

static void test_callbacks(void **state)
{
	struct counted_cb c[4] = { 0 };
	struct ttm_fence *f = fence_new();
	struct actor a;
	int i;

	(void)state;
	actor_start(&a, NULL);
	for (i = 0; i < 3; i++)
		assert_int_equal(ttm_fence_add_callback(f, &c[i].cb,
							counted_func), 0);
	assert_true(ttm_fence_remove_callback(f, &c[1].cb));
	assert_false(ttm_fence_remove_callback(f, &c[1].cb));

	assert_int_equal(actor_run(&a, act_signal, f), 0);
	assert_int_equal(calls(&c[0]), 1);
	assert_int_equal(calls(&c[1]), 0);
	assert_int_equal(calls(&c[2]), 1);
	assert_true(c[0].order < c[2].order);
	for (i = 0; i < 3; i += 2) {
		assert_true(pthread_equal(c[i].thread, a.thread));
		assert_int_equal(c[i].status, 1);
	}

	/* Too late: refused and never called; nothing left to remove. */
	assert_int_equal(ttm_fence_add_callback(f, &c[3].cb, counted_func),
			 -ENOENT);
	assert_false(ttm_fence_remove_callback(f, &c[3].cb));
	assert_false(ttm_fence_remove_callback(f, &c[0].cb));
	assert_int_equal(ttm_fence_signal(f, 0), -EINVAL);
	for (i = 0; i < 4; i++)
		assert_int_equal(calls(&c[i]), i == 0 || i == 2);

	actor_stop(&a);
	ttm_fence_put(f);
	assert_checks_passed();
}

/* A callback that frees its node, and one that signals another fence. */
struct chain_cb {
	struct ttm_fence_cb cb;
	struct ttm_fence *next;
};

static void chain_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct chain_cb *c = container_of(cb, struct chain_cb, cb);

	CHECK_INT(ttm_fence_signal(c->next, ttm_fence_get_status(f) < 0 ?
				   ttm_fence_get_status(f) : 0), 0);
	free(c);
}

static void test_callback_chain(void **state)
{
	struct ttm_fence *f[4];
	struct counted_cb last = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		f[i] = fence_new();
	for (i = 0; i < 3; i++) {
		struct chain_cb *c = malloc(sizeof(*c));

		assert_non_null(c);
		c->next = f[i + 1];
		assert_int_equal(ttm_fence_add_callback(f[i], &c->cb,
							chain_func), 0);
	}
	assert_int_equal(ttm_fence_add_callback(f[3], &last.cb,
						counted_func), 0);
	assert_int_equal(ttm_fence_signal(f[0], -ETIMEDOUT), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(ttm_fence_get_status(f[i]), -ETIMEDOUT);
	assert_int_equal(calls(&last), 1);
	for (i = 0; i < 4; i++)
		ttm_fence_put(f[i]);
	assert_checks_passed();
}

/* An unsignalled fence that is freed runs its callbacks with -ECANCELED. */
static void test_release_cancels(void **state)
{
	struct counted_cb c = { 0 };
	struct ttm_fence *f = fence_new();

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &c.cb, counted_func), 0);
	ttm_fence_put(f);
	assert_int_equal(calls(&c), 1);
	assert_int_equal(c.status, -ECANCELED);
	assert_checks_passed();
}

/*
 * A callback removing a sibling of the same fence: too late (the signal
 * took both), so false at once rather than waiting for itself, and the
 * sibling still runs.
 */
struct sibling_cb {
	struct ttm_fence_cb cb;
	struct counted_cb *sibling;
	int removed;
};

static void remove_sibling_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct sibling_cb *c = container_of(cb, struct sibling_cb, cb);

	c->removed = ttm_fence_remove_callback(f, &c->sibling->cb);
}

static void test_remove_from_callback(void **state)
{
	struct ttm_fence *f = fence_new();
	struct counted_cb later = { 0 };
	struct sibling_cb first = { .sibling = &later, .removed = -1 };

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &first.cb,
						remove_sibling_func), 0);
	assert_int_equal(ttm_fence_add_callback(f, &later.cb, counted_func),
			 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(first.removed, 0);
	assert_int_equal(calls(&later), 1);
	ttm_fence_put(f);
	assert_checks_passed();
}

/* ---- races --------------------------------------------------------------- */

#define RACE_ROUNDS 2000

/*
 * One thread signals while another removes the callback it added: either
 * the remove wins (the callback never runs) or it returns false, and then
 * the callback has already finished.
 */
struct remove_race {
	pthread_barrier_t barrier;
	struct ttm_fence *fence;
};

static void *remove_race_signaller(void *arg)
{
	struct remove_race *r = arg;
	int i;

	for (i = 0; i < RACE_ROUNDS; i++) {
		pthread_barrier_wait(&r->barrier);
		CHECK_INT(ttm_fence_signal(r->fence, 0), 0);
		pthread_barrier_wait(&r->barrier);
	}
	return NULL;
}

static void test_remove_vs_signal(void **state)
{
	struct remove_race r;
	int i, removed = 0;
	pthread_t t;

	(void)state;
	pthread_barrier_init(&r.barrier, NULL, 2);
	t = start_thread(remove_race_signaller, &r);
	for (i = 0; i < RACE_ROUNDS; i++) {
		struct counted_cb c = { 0 };
		bool gone;

		r.fence = fence_new();
		CHECK_INT(ttm_fence_add_callback(r.fence, &c.cb,
						 slow_counted_func), 0);
		pthread_barrier_wait(&r.barrier);
		if (i & 1)
			sched_yield();
		gone = ttm_fence_remove_callback(r.fence, &c.cb);
		/* Right away: a callback that was not removed has finished. */
		CHECK_INT(calls(&c), !gone);
		pthread_barrier_wait(&r.barrier);
		CHECK_INT(calls(&c), !gone);
		removed += gone;
		ttm_fence_put(r.fence);
	}
	join_thread(t);
	pthread_barrier_destroy(&r.barrier);
	print_message("removed before the signal in %d of %d rounds\n",
		      removed, RACE_ROUNDS);
	assert_checks_passed();
}

/*
 * Every round, thread 0 signals a new fence while the others add a
 * callback and then either wait for the fence or remove the callback.
 */
#define MIX_THREADS 4
#define MIX_ROUNDS 1000

struct mix {
	pthread_barrier_t barrier;
	struct ttm_fence *fence;
	struct counted_cb cb[MIX_THREADS];
	int added[MIX_THREADS];
	bool removed[MIX_THREADS];
	int refused; /* atomic */
};

static int mix_error(int round)
{
	return round % 3 == 1 ? -EIO : 0;
}

static void mix_step(struct mix *m, unsigned int id, int round)
{
	struct counted_cb *c = &m->cb[id];
	int ret;

	if (id == 0) {
		CHECK_INT(ttm_fence_signal(m->fence, mix_error(round)), 0);
		return;
	}
	*c = (struct counted_cb){ 0 };
	if ((id + (unsigned int)round) & 1)
		sched_yield();
	ret = ttm_fence_add_callback(m->fence, &c->cb, counted_func);
	CHECK_MSG(ret == 0 || ret == -ENOENT, "add_callback: %d", ret);
	m->added[id] = ret;
	if (ret)
		__atomic_add_fetch(&m->refused, 1, __ATOMIC_RELAXED);
	if (id & 1) {
		CHECK_INT(ttm_fence_wait(m->fence, false, LIMIT_NS), 0);
		CHECK_INT(ttm_fence_get_status(m->fence),
			  mix_error(round) ? mix_error(round) : 1);
		m->removed[id] = false;
	} else {
		m->removed[id] = ret == 0 &&
				 ttm_fence_remove_callback(m->fence, &c->cb);
	}
}

struct mix_thread {
	struct mix *m;
	unsigned int id;
	pthread_t thread;
};

static void *mix_worker(void *arg)
{
	struct mix_thread *t = arg;
	int round;

	for (round = 0; round < MIX_ROUNDS; round++) {
		pthread_barrier_wait(&t->m->barrier);
		mix_step(t->m, t->id, round);
		pthread_barrier_wait(&t->m->barrier);
	}
	return NULL;
}

static void test_signal_add_wait_race(void **state)
{
	struct mix_thread t[MIX_THREADS];
	struct mix m = { 0 };
	unsigned int i;
	int round;

	(void)state;
	pthread_barrier_init(&m.barrier, NULL, MIX_THREADS + 1);
	for (i = 0; i < MIX_THREADS; i++) {
		t[i] = (struct mix_thread){ .m = &m, .id = i };
		t[i].thread = start_thread(mix_worker, &t[i]);
	}
	for (round = 0; round < MIX_ROUNDS; round++) {
		m.fence = fence_new();
		pthread_barrier_wait(&m.barrier);
		pthread_barrier_wait(&m.barrier);
		for (i = 1; i < MIX_THREADS; i++) {
			int expect = m.added[i] == 0 && !m.removed[i];

			CHECK_MSG(calls(&m.cb[i]) == expect,
				  "round %d thread %u: %d calls, expected %d",
				  round, i, calls(&m.cb[i]), expect);
			if (expect)
				CHECK_INT(m.cb[i].status,
					  mix_error(round) ? mix_error(round)
							   : 1);
		}
		CHECK_INT(fence_waiters(m.fence), 0);
		ttm_fence_put(m.fence);
	}
	for (i = 0; i < MIX_THREADS; i++)
		join_thread(t[i].thread);
	pthread_barrier_destroy(&m.barrier);
	print_message("%d of %d callbacks came too late\n", m.refused,
		      MIX_ROUNDS * (MIX_THREADS - 1));
	assert_checks_passed();
}

/* ---- waits --------------------------------------------------------------- */

static void test_wait_timeout(void **state)
{
	struct ttm_fence *f = fence_new();
	long start = now_ns();

	(void)state;
	assert_int_equal(ttm_fence_wait(f, false, 2 * 1000 * 1000), -ETIME);
	assert_true(now_ns() - start >= 2 * 1000 * 1000);
	assert_int_equal(ttm_fence_wait(f, true, 1000), -ETIME);
	assert_int_equal(fence_waiters(f), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_wait(f, false, 1000), 0);
	assert_int_equal(ttm_fence_wait(f, true, -1), 0);
	ttm_fence_put(f);
}

static void test_wait_zero(void **state)
{
	struct ttm_fence *f = fence_new();

	(void)state;
	assert_int_equal(ttm_fence_wait(f, false, 0), -ETIME);
	/* A test is no wait: it leaves a pending interrupt alone. */
	assert_int_equal(ttm_interrupt_thread(pthread_self()), 0);
	assert_int_equal(ttm_fence_wait(f, true, 0), -ETIME);
	assert_true(ttm_interrupt_clear());
	assert_int_equal(fence_waiters(f), 0);
	assert_int_equal(ttm_fence_signal(f, -ECANCELED), 0);
	assert_int_equal(ttm_fence_wait(f, false, 0), 0);
	assert_int_equal(ttm_fence_wait(f, true, 0), 0);
	ttm_fence_put(f);
}

static void test_wait_woken(void **state)
{
	struct ttm_fence *f = fence_new();
	struct actor a[2];
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		actor_start(&a[i], NULL);
		actor_post(&a[i], i ? act_wait_intr : act_wait, f);
	}
	assert_true(wait_for_fence_waiters(f, 2));
	assert_true(actor_busy(&a[0]) && actor_busy(&a[1]));
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	for (i = 0; i < 2; i++) {
		assert_true(actor_wait(&a[i]));
		assert_int_equal(actor_ret(&a[i]), 0);
		actor_stop(&a[i]);
	}
	assert_int_equal(ttm_fence_get_status(f), -EIO);
	assert_int_equal(fence_waiters(f), 0);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_wait_interrupted(void **state)
{
	struct ttm_fence *f = fence_new();
	struct actor a;

	(void)state;
	actor_start(&a, NULL);

	/* While it sleeps: -EINTR, and the interrupt is consumed. */
	actor_post(&a, act_wait_intr, f);
	assert_true(wait_for_fence_waiters(f, 1));
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), -EINTR);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 0);
	assert_int_equal(fence_waiters(f), 0);

	/* Posted before the wait: the same, without sleeping. */
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	assert_int_equal(actor_run(&a, act_wait_intr, f), -EINTR);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 0);

	/* A signalled fence wins over a pending interrupt, which stays. */
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	assert_int_equal(actor_run(&a, act_wait_intr, f), 0);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 1);

	actor_stop(&a);
	ttm_fence_put(f);
	assert_checks_passed();
}

static int act_gettid(struct actor *a, void *arg)
{
	(void)a;
	(void)arg;
	return (int)test_gettid();
}

/* A thread blocked in futex(): at which word, for which value. */
struct park {
	pid_t tid;
	struct actor *actor;
	uintptr_t addr;
	unsigned long val;
};

static bool parked(void *arg)
{
	struct park *p = arg;

	return thread_futex_wait(p->tid, &p->addr, &p->val);
}

/* Asleep on the same word for another value, or the step is over. */
static bool parked_again_or_done(void *arg)
{
	struct park *p = arg;
	uintptr_t addr;
	unsigned long val;

	if (!actor_busy(p->actor))
		return true;
	return thread_futex_wait(p->tid, &addr, &val) && addr == p->addr &&
	       val != p->val;
}

static void test_wait_uninterruptible(void **state)
{
	struct ttm_fence *f = fence_new();
	struct park park = { 0 }, repark;
	struct actor a;
	int tid;

	(void)state;
	actor_start(&a, NULL);

	/* A pending interrupt neither ends the wait nor is consumed. */
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	assert_int_equal(actor_run(&a, act_wait_short, f), -ETIME);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 1);

	/*
	 * Posted while it sleeps: a wake-up it sleeps through. Seen asleep
	 * (blocked on its wake word) before the interrupt, and asleep again
	 * on the word's next value after it, so the interrupt was taken in
	 * and ignored before the signal comes; a wait that took it would be
	 * over by then.
	 */
	tid = actor_run(&a, act_gettid, NULL);
	actor_post(&a, act_wait, f);
	assert_true(wait_for_fence_waiters(f, 1));
	park.tid = tid;
	assert_true(wait_until(parked, &park));
	assert_int_equal(ttm_interrupt_thread(a.thread), 0);
	repark = (struct park){ .tid = tid, .actor = &a, .addr = park.addr,
				.val = park.val };
	assert_true(wait_until(parked_again_or_done, &repark));
	assert_true(actor_busy(&a));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	assert_int_equal(actor_run(&a, act_interrupt_clear, NULL), 1);

	actor_stop(&a);
	ttm_fence_put(f);
	assert_checks_passed();
}

/* ---- file descriptors ---------------------------------------------------- */

static int fd_bytes(int fd)
{
	int n = -1;

	CHECK_INT(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

static short fd_revents(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	CHECK(poll(&pfd, 1, 0) >= 0);
	return pfd.revents;
}

static ino_t fd_ino(int fd)
{
	struct stat st;

	CHECK_INT(fstat(fd, &st), 0);
	return st.st_ino;
}

static void test_export(void **state)
{
	struct ttm_fence *f = fence_new();
	struct actor a;
	int fd, fd2;

	(void)state;
	fd = ttm_fence_export_fd(f);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	fd2 = ttm_fence_export_fd(f);
	assert_true(fd2 >= 0 && fd2 != fd);
	assert_true(fd_ino(fd) == fd_ino(fd2));

	/* Pending: not readable; sync_wait() times out. */
	assert_int_equal(fd_revents(fd), 0);
	assert_int_equal(sync_wait(fd, 1), -1);
	assert_int_equal(errno, ETIME);

	/* Signalled while another thread is in sync_wait(). */
	actor_start(&a, NULL);
	actor_post(&a, act_sync_wait, &fd2);
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	actor_stop(&a);

	assert_true(fd_revents(fd) & POLLIN);
	assert_int_equal(sync_wait(fd, 0), 0);
	assert_int_equal(fd_bytes(fd), 1 + EIO);
	close(fd2);
	close(fd);
	ttm_fence_put(f);

	/* Exported after signalling: readable at once. */
	f = fence_new();
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	fd = ttm_fence_export_fd(f);
	assert_true(fd >= 0);
	assert_int_equal(sync_wait(fd, 0), 0);
	assert_int_equal(fd_bytes(fd), 1);
	close(fd);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_import_live(void **state)
{
	struct ttm_fence *f = fence_new(), *g = NULL;
	int fd = ttm_fence_export_fd(f);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ttm_fence_import_fd(fd, &g), 0);
	assert_ptr_equal(g, f);
	assert_int_equal(f->refcount, 2);
	ttm_fence_put(g);
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	/* Signalled but alive: still the same fence. */
	assert_int_equal(ttm_fence_import_fd(fd, &g), 0);
	assert_ptr_equal(g, f);
	ttm_fence_put(g);
	ttm_fence_put(f);
	close(fd);
	assert_checks_passed();
}

static void test_import_gone(void **state)
{
	static const int errors[] = { 0, -EIO, -ETIMEDOUT, -FENCE_MAX_ERRNO };
	struct ttm_fence *f, *g, *h;
	unsigned int i;
	uint64_t ctx;
	int fd;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(errors); i++) {
		f = fence_new();
		ctx = ttm_fence_context(f);
		fd = ttm_fence_export_fd(f);
		assert_true(fd >= 0);
		assert_int_equal(ttm_fence_signal(f, errors[i]), 0);
		ttm_fence_put(f);

		assert_int_equal(ttm_fence_import_fd(fd, &g), 0);
		assert_true(ttm_fence_is_signaled(g));
		assert_int_equal(ttm_fence_get_status(g),
				 errors[i] ? errors[i] : 1);
		assert_true(ttm_fence_context(g) != ctx);
		/* Reading the status did not consume it. */
		assert_int_equal(ttm_fence_import_fd(fd, &h), 0);
		assert_int_equal(ttm_fence_get_status(h),
				 ttm_fence_get_status(g));
		ttm_fence_put(h);
		ttm_fence_put(g);
		close(fd);
	}

	/* Freed without signalling: POLLHUP, imported as -ECANCELED. */
	f = fence_new();
	fd = ttm_fence_export_fd(f);
	assert_true(fd >= 0);
	assert_int_equal(fd_revents(fd) & POLLHUP, 0);
	ttm_fence_put(f);
	assert_true(fd_revents(fd) & POLLHUP);
	assert_int_equal(sync_wait(fd, 0), 0);
	assert_int_equal(ttm_fence_import_fd(fd, &g), 0);
	assert_int_equal(ttm_fence_get_status(g), -ECANCELED);
	ttm_fence_put(g);
	close(fd);
	assert_checks_passed();
}

static void test_import_invalid(void **state)
{
	struct ttm_fence *sentinel = (struct ttm_fence *)&sentinel, *g;
	int fds[2], fd;

	(void)state;
	g = sentinel;
	assert_int_equal(ttm_fence_import_fd(-1, &g), -EINVAL);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ttm_fence_import_fd(fd, &g), -EINVAL);
	close(fd);
	fd = memfd_create("not-a-fence", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ttm_fence_import_fd(fd, &g), -EINVAL);
	close(fd);
	/* A pipe of our own, empty, its writer open. */
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(ttm_fence_import_fd(fds[0], &g), -EINVAL);
	close(fds[0]);
	close(fds[1]);
	assert_ptr_equal(g, sentinel);
}

/*
 * Pipes that are not ours, in the states an orphan's pipe is in (writer
 * closed, holding status bytes or none) or with bytes and a writer: all
 * -EINVAL. A pipe given every mark of ours (one page, writer closed) is
 * the documented kind and imports as a gone fence.
 */
static void test_import_foreign_pipe(void **state)
{
	struct ttm_fence *sentinel = (struct ttm_fence *)&sentinel, *g;
	static const char bytes[6];
	long page = sysconf(_SC_PAGESIZE);
	int fds[2];

	(void)state;
	g = sentinel;
	/* Bytes in it, writer closed: a signalled orphan's state. */
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(write(fds[1], bytes, 1), 1);
	close(fds[1]);
	assert_int_equal(ttm_fence_import_fd(fds[0], &g), -EINVAL);
	close(fds[0]);
	/* Empty, writer closed: a cancelled orphan's state. */
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	close(fds[1]);
	assert_int_equal(ttm_fence_import_fd(fds[0], &g), -EINVAL);
	close(fds[0]);
	/* One page and bytes, but the writer still open. */
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 4096) >= 0);
	assert_int_equal(write(fds[1], bytes, 1), 1);
	assert_int_equal(ttm_fence_import_fd(fds[0], &g), -EINVAL);
	/* Then closed: all the marks, so taken for a gone fence. */
	close(fds[1]);
	if (page <= 4096) {
		assert_int_equal(ttm_fence_import_fd(fds[0], &g), 0);
		assert_int_equal(ttm_fence_get_status(g), 1);
		ttm_fence_put(g);
		g = sentinel;
	}
	close(fds[0]);
	/* The write end of one, never. */
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 4096) >= 0);
	close(fds[0]);
	assert_int_equal(ttm_fence_import_fd(fds[1], &g), -EINVAL);
	close(fds[1]);
	assert_ptr_equal(g, sentinel);
}

/*
 * A reserved descriptor, installed: exactly an export (the fence's pipe,
 * its status), for a fence never exported and one exported already; one
 * given back closes what it took.
 */
static void test_fd_slot(void **state)
{
	struct ttm_fence_fd_slot slot, back;
	struct ttm_fence *f = fence_new(), *g;
	int fd, fd2, probe;

	(void)state;
	assert_int_equal(ttm_fence_fd_reserve(&slot), 0);
	assert_true(slot.fd >= 0);
	fd = slot.fd;
	assert_int_equal(ttm_fence_fd_install(&slot, f), fd);
	assert_int_equal(slot.fd, -1);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(ttm_fence_import_fd(fd, &g), 0);
	assert_ptr_equal(g, f);
	ttm_fence_put(g);

	/* Exported now: a second slot joins the same pipe. */
	assert_int_equal(ttm_fence_fd_reserve(&slot), 0);
	fd2 = ttm_fence_fd_install(&slot, f);
	assert_true(fd2 >= 0 && fd2 != fd);
	assert_true(fd_ino(fd) == fd_ino(fd2));
	assert_int_equal(fd_revents(fd2), 0);
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	assert_true(fd_revents(fd2) & POLLIN);
	assert_int_equal(fd_bytes(fd2), 1 + EIO);
	ttm_fence_put(f);
	/* Gone: both still read its status. */
	assert_int_equal(ttm_fence_import_fd(fd2, &g), 0);
	assert_int_equal(ttm_fence_get_status(g), -EIO);
	ttm_fence_put(g);
	close(fd2);
	close(fd);

	/* Given back: the three descriptors it took are free again. */
	probe = dup(0);
	assert_true(probe >= 0);
	close(probe);
	assert_int_equal(ttm_fence_fd_reserve(&back), 0);
	ttm_fence_fd_unreserve(&back);
	assert_int_equal(back.fd, -1);
	ttm_fence_fd_unreserve(&back); /* empty: nothing */
	fd = dup(0);
	assert_int_equal(fd, probe);
	close(fd);
	assert_checks_passed();
}

/*
 * A reserve that fails (no descriptor left) leaves the slot empty, so an
 * unreserve on it closes nothing of the caller's, whatever the slot held
 * before. Its layout does not depend on _FILE_OFFSET_BITS (uint64_t).
 */
static void test_fd_slot_failed(void **state)
{
	struct ttm_fence_fd_slot slot;
	struct rlimit old, low;
	int keep, fd;

	(void)state;
	_Static_assert(sizeof(struct ttm_fence_fd_slot) == 32,
		       "the slot's ABI size");
	keep = dup(0);
	assert_true(keep >= 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* Garbage naming a descriptor the caller holds. */
	slot.fd = slot.pipe_rd = slot.pipe_wr = keep;
	low = old;
	low.rlim_cur = (rlim_t)keep + 1; /* no descriptor above keep */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	fd = ttm_fence_fd_reserve(&slot);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_true(fd == -EMFILE || fd == -ENFILE);
	assert_int_equal(slot.fd, -1);
	ttm_fence_fd_unreserve(&slot);
	assert_true(fcntl(keep, F_GETFD) >= 0); /* still open */
	close(keep);
	assert_checks_passed();
}

/*
 * One thread drops the last reference of an exported fence while another
 * imports its descriptor: the importer gets the live fence or one rebuilt
 * from the pipe, never -EINVAL (the fence leaves the registry and closes
 * its writer in one step).
 */
#define IMPORT_ROUNDS 1000

struct import_race {
	pthread_barrier_t barrier;
	struct ttm_fence *fence;
};

static void *import_race_putter(void *arg)
{
	struct import_race *r = arg;
	int i;

	for (i = 0; i < IMPORT_ROUNDS; i++) {
		pthread_barrier_wait(&r->barrier);
		ttm_fence_put(r->fence);
		pthread_barrier_wait(&r->barrier);
	}
	return NULL;
}

static void test_import_vs_put(void **state)
{
	struct import_race r;
	int i, live = 0;
	pthread_t t;

	(void)state;
	pthread_barrier_init(&r.barrier, NULL, 2);
	t = start_thread(import_race_putter, &r);
	for (i = 0; i < IMPORT_ROUNDS; i++) {
		/* Odd rounds signal -EIO first; even ones never signal. */
		int error = i & 1 ? -EIO : 0;
		struct ttm_fence *g = NULL;
		int fd, ret;

		r.fence = fence_new();
		fd = ttm_fence_export_fd(r.fence);
		CHECK(fd >= 0);
		if (error)
			CHECK_INT(ttm_fence_signal(r.fence, error), 0);
		pthread_barrier_wait(&r.barrier);
		ret = ttm_fence_import_fd(fd, &g);
		pthread_barrier_wait(&r.barrier);
		if (CHECK_INT(ret, 0)) {
			int status = ttm_fence_get_status(g);

			/* Alive: ours now, and ours to free. */
			if (!error && status == 0)
				live++;
			CHECK_MSG(status == (error ? error : 0) ||
				  (!error && status == -ECANCELED),
				  "round %d: status %d", i, status);
			ttm_fence_put(g);
		}
		close(fd);
	}
	join_thread(t);
	pthread_barrier_destroy(&r.barrier);
	print_message("import found the unsignalled fence alive in %d of %d rounds\n",
		      live, IMPORT_ROUNDS / 2);
	assert_checks_passed();
}

/* ---- merges -------------------------------------------------------------- */

/*
 * Two fences through ttm_fence_unwrap_merge() (ttmsim/fence_container.h),
 * which replaced the two-fence ttm_fence_merge(). Its tests changed with
 * it: the merge holds references to its inputs, merges one fence into
 * itself, and fails with the first error seen rather than @a's.
 */
static int merge2(struct ttm_fence *a, struct ttm_fence *b,
		  struct ttm_fence **ret)
{
	struct ttm_fence *in[2] = { a, b };

	return ttm_fence_unwrap_merge(2, in, ret);
}

/* The first error seen: of the fence signalled first. */
static int expected_merge(int first, int second)
{
	return first < 0 ? first : second < 0 ? second : 1;
}

/* Merge two pending fences, signal them in the order asked, check. */
static void merge_case(int ea, int eb, bool b_first)
{
	struct ttm_fence *a = fence_new(), *b = fence_new(), *m;

	assert_int_equal(merge2(a, b, &m), 0);
	assert_true(ttm_fence_context(m) != ttm_fence_context(a));
	assert_true(ttm_fence_context(m) != ttm_fence_context(b));
	assert_false(ttm_fence_is_signaled(m));
	assert_int_equal(ttm_fence_signal(b_first ? b : a,
					  b_first ? eb : ea), 0);
	assert_false(ttm_fence_is_signaled(m));
	assert_int_equal(ttm_fence_signal(b_first ? a : b,
					  b_first ? ea : eb), 0);
	assert_int_equal(ttm_fence_get_status(m),
			 b_first ? expected_merge(eb, ea)
				 : expected_merge(ea, eb));
	ttm_fence_put(m);
	ttm_fence_put(a);
	ttm_fence_put(b);
}

static void test_merge(void **state)
{
	static const int cases[][2] = {
		{ 0, 0 }, { -EIO, 0 }, { 0, -ETIMEDOUT }, { -EIO, -ETIMEDOUT },
	};
	struct ttm_fence *a = fence_new(), *b = fence_new(), *m1, *m2;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		merge_case(cases[i][0], cases[i][1], false);
		merge_case(cases[i][0], cases[i][1], true);
	}

	/*
	 * Each merge is a timeline of its own: merges signal in any order,
	 * so a shared context would let one replace another in a resv.
	 */
	assert_int_equal(merge2(a, b, &m1), 0);
	assert_int_equal(merge2(a, b, &m2), 0);
	assert_true(ttm_fence_context(m1) != ttm_fence_context(m2));
	/* A fence merged with itself is itself. */
	ttm_fence_put(m2);
	assert_int_equal(merge2(a, a, &m2), 0);
	assert_ptr_equal(m2, a);
	assert_int_equal(ttm_fence_signal(a, -EIO), 0);
	assert_int_equal(ttm_fence_signal(b, 0), 0);
	assert_int_equal(ttm_fence_get_status(m1), -EIO);
	ttm_fence_put(m1);
	ttm_fence_put(m2);
	ttm_fence_put(a);
	ttm_fence_put(b);
	assert_checks_passed();
}

static void test_merge_signalled(void **state)
{
	struct ttm_fence *a = fence_new(), *b = fence_new(), *m;

	(void)state;
	/* @a signalled fine is left out: the merge is @b. */
	assert_int_equal(ttm_fence_signal(a, 0), 0);
	assert_int_equal(merge2(a, b, &m), 0);
	assert_ptr_equal(m, b);
	assert_false(ttm_fence_is_signaled(m));
	assert_int_equal(ttm_fence_signal(b, -EIO), 0);
	assert_int_equal(ttm_fence_get_status(m), -EIO);
	ttm_fence_put(m);

	/*
	 * Both failed already: both kept, signalled at once with the error
	 * of the first by context (@b's: its context is older), whatever
	 * the order of the arguments.
	 */
	ttm_fence_put(a);
	a = fence_new();
	assert_int_equal(ttm_fence_signal(a, -ETIMEDOUT), 0);
	assert_int_equal(merge2(b, a, &m), 0);
	assert_int_equal(ttm_fence_get_status(m), -EIO);
	ttm_fence_put(m);
	assert_int_equal(merge2(a, b, &m), 0);
	assert_int_equal(ttm_fence_get_status(m), -EIO);
	ttm_fence_put(m);
	ttm_fence_put(a);
	ttm_fence_put(b);
	assert_checks_passed();
}

static void test_merge_lifetimes(void **state)
{
	struct ttm_fence *a = fence_new(), *b = fence_new(), *m;
	struct counted_cb c = { 0 };

	(void)state;
	/* The merged fence dropped before its inputs signal. */
	assert_int_equal(merge2(a, b, &m), 0);
	assert_int_equal(ttm_fence_add_callback(m, &c.cb, counted_func), 0);
	ttm_fence_put(m);
	assert_int_equal(ttm_fence_signal(a, 0), 0);
	assert_int_equal(ttm_fence_signal(b, 0), 0);
	assert_int_equal(calls(&c), 1);
	assert_int_equal(c.status, 1);
	ttm_fence_put(a);
	ttm_fence_put(b);

	/*
	 * The merge holds its inputs: dropping ours frees nothing (the
	 * pool would poison @b for ASan) and the merge still waits.
	 */
	a = fence_new();
	b = fence_new();
	assert_int_equal(merge2(a, b, &m), 0);
	assert_int_equal(ttm_fence_signal(a, 0), 0);
	ttm_fence_put(b);
	assert_int_equal(ttm_fence_get_status(m), 0);
	assert_ptr_equal(ttm_fence_array_fence(m, 1), b);
	assert_int_equal(ttm_fence_signal(b, 0), 0);
	assert_int_equal(ttm_fence_get_status(m), 1);
	ttm_fence_put(m);
	ttm_fence_put(a);
	assert_checks_passed();
}

/* ---- the pool ------------------------------------------------------------ */

static void test_tryget(void **state)
{
	struct ttm_fence *f = fence_new();

	(void)state;
	assert_ptr_equal(ttm_fence_tryget(f), f);
	assert_int_equal(f->refcount, 2);
	assert_ptr_equal(ttm_fence_get(f), f);
	ttm_fence_put(f);
	ttm_fence_put(f);
	assert_int_equal(f->refcount, 1);
	ttm_fence_put(f);
	/* Freed: the memory is still a fence, with no reference to take. */
	assert_int_equal(f->refcount, 0);
	assert_null(ttm_fence_tryget(f));
	assert_checks_passed();
}

/*
 * Readers take fences from a slot without a reference, as reservation
 * readers do, while a writer keeps replacing and freeing them: tryget
 * either fails or yields a live fence, never freed memory.
 */
#define SLOT_ROUNDS 20000
#define SLOT_READERS 2
#define SLOT_HITS 1000

struct slot {
	struct ttm_fence *fence; /* atomic */
	int started, stop;       /* atomic */
	int hits, misses;        /* atomic */
};

static void *slot_reader(void *arg)
{
	struct slot *s = arg;

	__atomic_add_fetch(&s->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct ttm_fence *f = __atomic_load_n(&s->fence,
						      __ATOMIC_ACQUIRE);

		if (f && ttm_fence_tryget(f)) {
			CHECK(__atomic_load_n(&f->refcount,
					      __ATOMIC_RELAXED) > 0);
			ttm_fence_is_signaled(f);
			ttm_fence_put(f);
			__atomic_add_fetch(&s->hits, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&s->misses, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void test_tryget_race(void **state)
{
	struct slot s = { 0 };
	pthread_t t[SLOT_READERS];
	long limit;
	int i, rounds;

	(void)state;
	for (i = 0; i < SLOT_READERS; i++)
		t[i] = start_thread(slot_reader, &s);
	CHECK(wait_for_int(&s.started, SLOT_READERS));
	/* Go on until the readers got some fences, whatever the scheduler. */
	limit = now_ns() + WAIT_LIMIT_S * NS_PER_S;
	for (i = 0; i < SLOT_ROUNDS ||
		    (__atomic_load_n(&s.hits, __ATOMIC_RELAXED) < SLOT_HITS &&
		     now_ns() < limit); i++) {
		struct ttm_fence *old;

		old = __atomic_exchange_n(&s.fence, fence_new(),
					  __ATOMIC_ACQ_REL);
		if (old) {
			ttm_fence_signal(old, 0);
			ttm_fence_put(old);
		}
	}
	rounds = i;
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < SLOT_READERS; i++)
		join_thread(t[i]);
	ttm_fence_put(s.fence);
	print_message("%d rounds: %d trygets succeeded, %d did not\n", rounds,
		      s.hits, s.misses);
	CHECK(s.hits >= SLOT_HITS);
	assert_checks_passed();
}

/* Fences created in one thread, freed in another, both then exiting. */
#define HANDOFF_FENCES 5000

struct handoff {
	struct ttm_fence *fences[HANDOFF_FENCES];
};

static void *handoff_create(void *arg)
{
	struct handoff *h = arg;
	int i;

	for (i = 0; i < HANDOFF_FENCES; i++)
		h->fences[i] = fence_new();
	return NULL;
}

static void *handoff_free(void *arg)
{
	struct handoff *h = arg;
	int i;

	for (i = 0; i < HANDOFF_FENCES; i++) {
		if (!CHECK(h->fences[i] != NULL))
			continue;
		CHECK_INT(ttm_fence_signal(h->fences[i], 0), 0);
		ttm_fence_put(h->fences[i]);
	}
	return NULL;
}

static void test_pool_threads(void **state)
{
	struct handoff *h = calloc(1, sizeof(*h));
	int round;

	(void)state;
	assert_non_null(h);
	for (round = 0; round < 3; round++) {
		join_thread(start_thread(handoff_create, h));
		join_thread(start_thread(handoff_free, h));
	}
	free(h);
	assert_checks_passed();
}

#define COST_ROUNDS 200000
/* Fences one thread's create/put cycle may see: its cache and a chunk. */
#define COST_MAX_DISTINCT 1024

/*
 * A create + signal + put cycle, many times over: each fence comes back
 * with its own context, seqno and a fresh status, and the pool recycles
 * them, so the cycle touches a bounded set of fences (a put that leaks,
 * or a create that never reuses, would see one per round). The cost is
 * printed for information.
 */
static void test_cost(void **state)
{
	static struct ttm_fence *seen[COST_MAX_DISTINCT];
	uint64_t ctx = ttm_fence_context_alloc(1);
	unsigned int n_seen = 0, j;
	struct ttm_fence *f;
	long start;
	int i;

	(void)state;
	start = now_ns();
	for (i = 0; i < COST_ROUNDS; i++) {
		if (ttm_fence_create(ctx, (uint64_t)i, &f))
			fail_msg("ttm_fence_create failed");
		if (ttm_fence_is_signaled(f) ||
		    ttm_fence_seqno(f) != (uint64_t)i ||
		    ttm_fence_context(f) != ctx)
			fail_msg("round %d: a recycled fence kept its past", i);
		for (j = 0; j < n_seen && seen[j] != f; j++)
			;
		if (j == n_seen) {
			if (n_seen == COST_MAX_DISTINCT)
				fail_msg("%u distinct fences in %d rounds: not recycled",
					 n_seen + 1, i + 1);
			seen[n_seen++] = f;
		}
		ttm_fence_signal(f, 0);
		if (ttm_fence_get_status(f) != 1)
			fail_msg("round %d: status %d", i,
				 ttm_fence_get_status(f));
		ttm_fence_put(f);
	}
	print_message("create + signal + put: %.1f ns (with the checks), %u fences\n",
		      (double)(now_ns() - start) / COST_ROUNDS, n_seen);
	assert_true(n_seen >= 1);
}

#define TEST(fn) { .name = #fn, .test_func = fn, .setup_func = checks_reset }

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_signal_once),
		TEST(test_context_alloc),
		TEST(test_callbacks),
		TEST(test_callback_chain),
		TEST(test_release_cancels),
		TEST(test_remove_from_callback),
		TEST(test_remove_vs_signal),
		TEST(test_signal_add_wait_race),
		TEST(test_wait_timeout),
		TEST(test_wait_zero),
		TEST(test_wait_woken),
		TEST(test_wait_interrupted),
		TEST(test_wait_uninterruptible),
		TEST(test_export),
		TEST(test_import_live),
		TEST(test_import_gone),
		TEST(test_import_invalid),
		TEST(test_import_foreign_pipe),
		TEST(test_fd_slot),
		TEST(test_fd_slot_failed),
		TEST(test_import_vs_put),
		TEST(test_merge),
		TEST(test_merge_signalled),
		TEST(test_merge_lifetimes),
		TEST(test_tryget),
		TEST(test_tryget_race),
		TEST(test_pool_threads),
		TEST(test_cost),
	};

	return cmocka_run_group_tests_name("fence", tests, NULL, NULL);
}
