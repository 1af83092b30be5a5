// SPDX-License-Identifier: MIT
/*
 * The kernel's drm_sched KUnit cases (drivers/gpu/drm/scheduler/tests/)
 * written afresh for ttmsim's scheduler, on a mock "hardware" of its own:
 * jobs run in order on one timeline whose fences the test completes by
 * hand (kmock_advance(), the kernel's drm_mock_sched_advance()), or that
 * a hardware thread completes on its own (the kernel's jobs with a
 * duration: the duration itself is dropped, since no case here may sleep
 * for time to pass).
 *
 * Map (kernel case -> test here):
 *   tests_basic.c
 *     drm_sched_basic_submit                 -> test_basic_submit
 *     drm_sched_basic_test, its four params  -> test_basic_one_entity,
 *                                               test_basic_dep_chain,
 *                                               test_basic_independent,
 *                                               test_basic_interdependent
 *     drm_sched_basic_entity_cleanup         -> test_basic_entity_cleanup
 *     drm_sched_parallel_submit_test         -> test_parallel_submit
 *     drm_sched_interleaved_submit_test      -> test_interleaved_submit
 *     drm_sched_basic_timeout                -> test_basic_timeout
 *     drm_sched_skip_reset                   -> test_skip_reset
 *     drm_sched_priorities                   -> test_priorities
 *     drm_sched_test_credits                 -> test_credits
 *   tests_scheduler.c
 *     drm_sched_scheduler_queue_overhead     -> test_queue_deep (what it
 *         runs, not its timing, which is a benchmark)
 *     drm_sched_scheduler_ping_pong          -> test_ping_pong (likewise)
 *
 * Not expressed, and why:
 *   drm_sched_basic_cancel: ttmsim has no cancel_job op; ttm_sched_destroy()
 *     waits for the jobs on the ring instead of cancelling them (the
 *     driver must make its fences signal), so there is nothing to cancel.
 *   drm_sched_change_priority: no ttm_sched_entity_set_priority(); an
 *     entity keeps the priority it was created with.
 *   drm_sched_test_modify_sched: an entity feeds one scheduler for life
 *     (no drm_sched_entity_modify_sched(), no scheduler lists).
 *   drm_sched_scheduler_two_clients_test: a measurement of shares over a
 *     second of wall time with sleeping clients and timed jobs; it asserts
 *     nothing deterministic, and our tests may not sleep for time to pass.
 *     Priorities and round-robin are checked exactly in test-sched.
 *
 * Where a kernel case waits a while to see that something did NOT happen,
 * the case here checks it at once, at a point where nothing could have
 * made it happen yet (the mock completes nothing by itself).
 */
#include "lib/helpers.h"
#include "lib/sched_helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "ttmsim/sched.h"
#include "util/compiler.h"

#define WAIT_NS 10000000000LL   /* a bound that only a bug reaches */
#define MOCK_TIMEOUT_NS 2000000 /* 2 ms */

enum {
	KJOB_DONE = 1 << 0,
	KJOB_TIMEDOUT = 1 << 1,
	KJOB_DONT_RESET = 1 << 2,
	KJOB_RESET_SKIPPED = 1 << 3,
};

struct kmock;

struct kjob {
	struct ttm_sched_job base;
	struct kmock *m;
	bool self_completing;           /* the kernel's duration_us != 0 */
	unsigned int flags;             /* KJOB_*, under m->lock */
	long run_ns, timedout_ns;
	struct ttm_fence *hw;           /* the mock's reference */
	struct ttm_fence *scheduled, *finished; /* the test's references */
	struct kjob *ring_next;         /* on the hardware, not done */
	struct kjob *all_next;          /* every job, freed at the end */
};

struct kmock {
	struct ttm_sched *sched;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kjob *ring_head, *ring_tail;
	struct kjob *all;
	unsigned int n_run, n_freed, n_timedout;
	pthread_t hw_thread;
	bool stop;
};

static struct kjob *to_kjob(struct ttm_sched_job *job)
{
	return container_of(job, struct kjob, base);
}

/* Under m->lock: take @k off the ring (it is at the head). */
static void ring_pop(struct kmock *m)
{
	struct kjob *k = m->ring_head;

	m->ring_head = k->ring_next;
	if (!m->ring_head)
		m->ring_tail = NULL;
	k->ring_next = NULL;
	k->flags |= KJOB_DONE;
}

/* The hardware thread: completes self-completing jobs, in ring order. */
static void *kmock_hw(void *arg)
{
	struct kmock *m = arg;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		struct kjob *k = m->ring_head;

		if (k && k->self_completing) {
			ring_pop(m);
			pthread_mutex_unlock(&m->lock);
			ttm_fence_signal(k->hw, 0);
			pthread_mutex_lock(&m->lock);
			continue;
		}
		if (m->stop)
			break;
		pthread_cond_wait(&m->cond, &m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

static struct ttm_fence *kmock_run_job(struct ttm_sched_job *job)
{
	struct kjob *k = to_kjob(job);
	struct kmock *m = k->m;

	k->hw = mock_fence_new("kmock-hw");
	pthread_mutex_lock(&m->lock);
	k->run_ns = now_ns();
	if (m->ring_tail)
		m->ring_tail->ring_next = k;
	else
		m->ring_head = k;
	m->ring_tail = k;
	m->n_run++;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return ttm_fence_get(k->hw);
}

/* As the kernel's mock: fail the job's fence, unless told not to reset. */
static enum ttm_sched_stat kmock_timedout_job(struct ttm_sched_job *job)
{
	struct kjob *k = to_kjob(job);
	struct kmock *m = k->m;
	bool signal = false;

	pthread_mutex_lock(&m->lock);
	m->n_timedout++;
	k->timedout_ns = now_ns();
	if (k->flags & KJOB_DONT_RESET) {
		k->flags |= KJOB_RESET_SKIPPED;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		return TTM_SCHED_STAT_NO_HANG;
	}
	if (!(k->flags & KJOB_DONE)) {
		/* Off the ring, wherever it is. */
		struct kjob **p = &m->ring_head, *prev = NULL;

		while (*p != k) {
			prev = *p;
			p = &(*p)->ring_next;
		}
		*p = k->ring_next;
		if (m->ring_tail == k)
			m->ring_tail = prev;
		k->flags |= KJOB_DONE | KJOB_TIMEDOUT;
		signal = true;
	}
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (signal)
		ttm_fence_signal(k->hw, -ETIMEDOUT);
	return TTM_SCHED_STAT_RESET;
}

static void kmock_free_job(struct ttm_sched_job *job)
{
	struct kmock *m = to_kjob(job)->m;

	ttm_sched_job_cleanup(job);
	pthread_mutex_lock(&m->lock);
	m->n_freed++;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	/* The job itself is the test's, freed at the end (as kunit's). */
}

static const struct ttm_sched_backend_ops kmock_ops = {
	.run_job = kmock_run_job,
	.timedout_job = kmock_timedout_job,
	.free_job = kmock_free_job,
};

static struct kmock *kmock_new(uint32_t credit_limit, uint64_t timeout_ns)
{
	struct ttm_sched_options opts = {
		.name = "kmock", .credit_limit = credit_limit,
		.timeout_ns = timeout_ns, .ops = &kmock_ops,
	};
	struct kmock *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	assert_int_equal(ttm_sched_create(&opts, &m->sched), 0);
	m->hw_thread = start_thread(kmock_hw, m);
	return m;
}

/* Destroy the scheduler (the ring must drain), then free every job. */
static void kmock_fini(struct kmock *m)
{
	struct kjob *k, *next;

	ttm_sched_destroy(m->sched);
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	join_thread(m->hw_thread);
	for (k = m->all; k; k = next) {
		next = k->all_next;
		ttm_fence_put(k->hw);
		ttm_fence_put(k->scheduled);
		ttm_fence_put(k->finished);
		free(k);
	}
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* A job for @e, not yet submitted; any thread. */
static struct kjob *kjob_new(struct kmock *m, struct ttm_sched_entity *e)
{
	struct kjob *k = calloc(1, sizeof(*k));

	assert_non_null(k);
	k->m = m;
	assert_int_equal(ttm_sched_job_init(&k->base, e, 1), 0);
	pthread_mutex_lock(&m->lock);
	k->all_next = m->all;
	m->all = k;
	pthread_mutex_unlock(&m->lock);
	return k;
}

/* Make @k depend on @on's finished fence. */
static void kjob_depend(struct kjob *k, struct kjob *on)
{
	struct ttm_fence *f = ttm_fence_get(on->finished);

	assert_int_equal(ttm_sched_job_add_dependency(&k->base, f), 0);
}

static void kjob_submit(struct kjob *k)
{
	ttm_sched_job_arm(&k->base);
	k->scheduled = ttm_fence_get(ttm_sched_job_scheduled(&k->base));
	k->finished = ttm_fence_get(ttm_sched_job_finished(&k->base));
	ttm_sched_entity_push_job(&k->base);
}

static bool kjob_wait_scheduled(struct kjob *k)
{
	return !ttm_fence_wait(k->scheduled, false, WAIT_NS);
}

static bool kjob_wait_finished(struct kjob *k)
{
	return !ttm_fence_wait(k->finished, false, WAIT_NS);
}

/* Complete the next @n jobs on the ring; how many there were. */
static unsigned int kmock_advance(struct kmock *m, unsigned int n)
{
	struct kjob *done[64];
	unsigned int found = 0;

	assert_true(n <= 64);
	pthread_mutex_lock(&m->lock);
	while (found < n && m->ring_head) {
		done[found++] = m->ring_head;
		ring_pop(m);
	}
	pthread_mutex_unlock(&m->lock);
	for (unsigned int i = 0; i < found; i++)
		ttm_fence_signal(done[i]->hw, 0);
	return found;
}

/* Block until run_job has been called @n times. */
static void kmock_wait_run(struct kmock *m, unsigned int n)
{
	pthread_mutex_lock(&m->lock);
	while (m->n_run < n)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static void test_basic_submit(void **state)
{
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	struct kjob *k = kjob_new(m, e);

	(void)state;
	kjob_submit(k);
	assert_true(kjob_wait_scheduled(k));
	assert_false(ttm_fence_is_signaled(k->finished));
	kmock_wait_run(m, 1);
	assert_int_equal(kmock_advance(m, 1), 1);
	assert_true(kjob_wait_finished(k));
	assert_int_equal(ttm_fence_get_status(k->finished), 1);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	kmock_fini(m);
}

/*
 * drm_sched_basic_test: @depth self-completing jobs spread over
 * @n_entities, each depending on the one before if @dep_chain; the last
 * one finishing means all did (one entity or a chain), else wait all.
 */
static void basic_queue(unsigned int depth, unsigned int n_entities,
			bool dep_chain)
{
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct ttm_sched_entity *e[4];
	struct kjob **jobs = calloc(depth, sizeof(*jobs));

	assert_non_null(jobs);
	for (unsigned int i = 0; i < n_entities; i++)
		e[i] = sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	for (unsigned int i = 0; i < depth; i++) {
		jobs[i] = kjob_new(m, e[i % n_entities]);
		jobs[i]->self_completing = true;
		if (dep_chain && i)
			kjob_depend(jobs[i], jobs[i - 1]);
		kjob_submit(jobs[i]);
	}
	assert_true(kjob_wait_finished(jobs[depth - 1]));
	for (unsigned int i = 0; i < depth; i++) {
		assert_true(kjob_wait_finished(jobs[i]));
		assert_int_equal(ttm_fence_get_status(jobs[i]->finished), 1);
		/* One entity, or a chain: strictly in order. */
		if (i && (dep_chain || n_entities == 1))
			assert_true(jobs[i - 1]->run_ns <= jobs[i]->run_ns);
	}
	for (unsigned int i = 0; i < n_entities; i++)
		ttm_sched_entity_destroy(e[i], UINT64_MAX);
	kmock_fini(m);
	free(jobs);
}

static void test_basic_one_entity(void **state)
{
	(void)state;
	basic_queue(100, 1, false);
}

static void test_basic_dep_chain(void **state)
{
	(void)state;
	basic_queue(100, 1, true);
}

static void test_basic_independent(void **state)
{
	(void)state;
	basic_queue(100, 4, false);
}

static void test_basic_interdependent(void **state)
{
	(void)state;
	basic_queue(100, 4, true);
}

/*
 * A chain of 100 jobs across four entities; once the middle one has
 * finished, the entities are destroyed with half the chain still queued
 * (no flush: killed at once). Here the jobs after the middle one do not
 * complete by themselves, so the kill surely meets them: the one after
 * the middle may have reached the ring (completed by hand afterwards),
 * the rest wait for it and are killed. Every finished fence signals: a
 * prefix of the chain with success, the rest with the kill's error
 * (-ESRCH, passed down the chain); every job is freed.
 */
static void test_basic_entity_cleanup(void **state)
{
	enum { QD = 100 };
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct ttm_sched_entity *e[4];
	struct kjob *jobs[QD];
	bool failed = false;

	(void)state;
	for (unsigned int i = 0; i < 4; i++)
		e[i] = sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	for (unsigned int i = 0; i < QD; i++) {
		jobs[i] = kjob_new(m, e[i % 4]);
		jobs[i]->self_completing = i <= QD / 2;
		if (i)
			kjob_depend(jobs[i], jobs[i - 1]);
		kjob_submit(jobs[i]);
	}
	assert_true(kjob_wait_finished(jobs[QD / 2]));
	for (unsigned int i = 0; i < 4; i++)
		ttm_sched_entity_destroy(e[i], 0);
	/* Killed (finished at once) or handed to run_job (complete it). */
	assert_true(kjob_wait_scheduled(jobs[QD / 2 + 1]));
	if (!ttm_fence_is_signaled(jobs[QD / 2 + 1]->finished)) {
		kmock_wait_run(m, QD / 2 + 2);
		assert_int_equal(kmock_advance(m, 1), 1);
	}
	for (unsigned int i = 0; i < QD; i++) {
		int status;

		assert_true(kjob_wait_finished(jobs[i]));
		status = ttm_fence_get_status(jobs[i]->finished);
		if (i <= QD / 2)
			assert_int_equal(status, 1);
		if (i > QD / 2 + 1)
			assert_int_equal(status, -ESRCH);
		if (failed)
			assert_int_equal(status, -ESRCH);
		else if (status != 1)
			failed = true;
	}
	kmock_fini(m);
}

/* Threads submitting at once (a start line), then one advance for all. */
struct submitter {
	struct kmock *m;
	struct ttm_sched_entity *e;
	struct kjob *jobs[64];
	unsigned int n_jobs, window;
	struct event *go;
};

static void *submit_all(void *arg)
{
	struct submitter *w = arg;

	CHECK(event_wait_for(w->go, 10));
	for (unsigned int i = 0; i < w->n_jobs; i++)
		kjob_submit(w->jobs[i]);
	return NULL;
}

/*
 * @n submitters, each with an entity and @n_jobs / (i + 1) jobs (the
 * kernel's interleaved case gives the i-th worker jobs i + 1 times as
 * long, so fewer of them); they wait at a start line, run @fn, and are
 * joined before this returns.
 */
static void run_submitters(struct kmock *m, struct submitter *w,
			   unsigned int n, unsigned int n_jobs, bool shrink,
			   bool self_completing, void *(*fn)(void *))
{
	pthread_t t[16];
	struct event go;

	assert_true(n <= 16 && n_jobs <= 64);
	event_init(&go);
	for (unsigned int i = 0; i < n; i++) {
		w[i] = (struct submitter){ .m = m, .window = 8, .go = &go,
			.n_jobs = shrink ? n_jobs / (i + 1) : n_jobs };
		w[i].e = sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
		for (unsigned int j = 0; j < w[i].n_jobs; j++) {
			w[i].jobs[j] = kjob_new(m, w[i].e);
			w[i].jobs[j]->self_completing = self_completing;
		}
		t[i] = start_thread(fn, &w[i]);
	}
	event_set(&go);
	for (unsigned int i = 0; i < n; i++)
		join_thread(t[i]);
	event_destroy(&go);
	assert_checks_passed();
}

static void test_parallel_submit(void **state)
{
	enum { WORKERS = 16, JOBS = 8 };
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct submitter w[WORKERS];

	(void)state;
	run_submitters(m, w, WORKERS, JOBS, false, false, submit_all);
	for (unsigned int i = 0; i < WORKERS; i++)
		for (unsigned int j = 0; j < JOBS; j++)
			assert_true(kjob_wait_scheduled(w[i].jobs[j]));
	kmock_wait_run(m, WORKERS * JOBS);
	assert_int_equal(kmock_advance(m, 64), 64);
	assert_int_equal(kmock_advance(m, 64), 64);
	assert_int_equal(kmock_advance(m, 1), 0);
	for (unsigned int i = 0; i < WORKERS; i++) {
		for (unsigned int j = 0; j < JOBS; j++)
			assert_true(kjob_wait_finished(w[i].jobs[j]));
		ttm_sched_entity_destroy(w[i].e, UINT64_MAX);
	}
	kmock_fini(m);
}

/* Each submitter keeps a window of jobs in flight until it is done. */
static void *submit_windowed(void *arg)
{
	struct submitter *w = arg;
	unsigned int first = w->window < w->n_jobs ? w->window : w->n_jobs;

	CHECK(event_wait_for(w->go, 10));
	for (unsigned int i = 0; i < first; i++)
		kjob_submit(w->jobs[i]);
	for (unsigned int i = 0; i < w->n_jobs; i++) {
		CHECK(kjob_wait_finished(w->jobs[i]));
		if (i + first < w->n_jobs)
			kjob_submit(w->jobs[i + first]);
	}
	return NULL;
}

static void test_interleaved_submit(void **state)
{
	enum { WORKERS = 16 };
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct submitter w[WORKERS];

	(void)state;
	run_submitters(m, w, WORKERS, 64, true, true, submit_windowed);
	for (unsigned int i = 0; i < WORKERS; i++) {
		for (unsigned int j = 0; j < w[i].n_jobs; j++) {
			struct kjob *k = w[i].jobs[j];

			assert_true(ttm_fence_is_signaled(k->finished));
		}
		ttm_sched_entity_destroy(w[i].e, UINT64_MAX);
	}
	kmock_fini(m);
}

/*
 * A job the hardware never completes: the timeout handler runs (not
 * before the timeout has passed since the job was pushed: the deadline
 * is armed as the job is handed out, just before run_job) and fails it.
 */
static void test_basic_timeout(void **state)
{
	struct kmock *m = kmock_new(UINT32_MAX, MOCK_TIMEOUT_NS);
	struct ttm_sched_entity *e =
		sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	struct kjob *k = kjob_new(m, e);

	long pushed;

	(void)state;
	pushed = now_ns();
	kjob_submit(k);
	assert_true(kjob_wait_scheduled(k));
	assert_true(kjob_wait_finished(k));
	assert_int_equal(ttm_fence_get_status(k->finished), -ETIMEDOUT);
	pthread_mutex_lock(&m->lock);
	assert_true(k->flags & KJOB_TIMEDOUT);
	assert_true(k->timedout_ns - pushed >= MOCK_TIMEOUT_NS);
	pthread_mutex_unlock(&m->lock);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	kmock_fini(m);
}

/*
 * A job still running when it times out (the handler skips the reset):
 * it stays on the ring and completes normally afterwards.
 */
static void test_skip_reset(void **state)
{
	struct kmock *m = kmock_new(UINT32_MAX, MOCK_TIMEOUT_NS);
	struct ttm_sched_entity *e =
		sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	struct kjob *k = kjob_new(m, e);

	(void)state;
	k->flags = KJOB_DONT_RESET;
	kjob_submit(k);
	assert_true(kjob_wait_scheduled(k));
	pthread_mutex_lock(&m->lock);
	while (!(k->flags & KJOB_RESET_SKIPPED))
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
	assert_false(ttm_fence_is_signaled(k->finished));
	assert_int_equal(kmock_advance(m, 1), 1);
	assert_true(kjob_wait_finished(k));
	assert_int_equal(ttm_fence_get_status(k->finished), 1);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	kmock_fini(m);
}

/* Jobs over one entity of each priority, round-robin: all finish. */
static void test_priorities(void **state)
{
	enum { QD = 100 };
	struct kmock *m = kmock_new(UINT32_MAX, 0);
	struct ttm_sched_entity *e[TTM_SCHED_PRIORITY_COUNT];
	struct kjob *jobs[QD];

	(void)state;
	for (int p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++)
		e[p] = sched_entity_new(m->sched, (enum ttm_sched_priority)p);
	for (unsigned int i = 0; i < QD; i++) {
		jobs[i] = kjob_new(m, e[i % TTM_SCHED_PRIORITY_COUNT]);
		jobs[i]->self_completing = true;
		kjob_submit(jobs[i]);
	}
	for (unsigned int i = 0; i < QD; i++) {
		assert_true(kjob_wait_finished(jobs[i]));
		assert_int_equal(ttm_fence_get_status(jobs[i]->finished), 1);
	}
	for (int p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++)
		ttm_sched_entity_destroy(e[p], UINT64_MAX);
	kmock_fini(m);
}

/* One credit: the second job is scheduled only once the first is done. */
static void test_credits(void **state)
{
	struct kmock *m = kmock_new(1, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	struct kjob *k[2];

	(void)state;
	k[0] = kjob_new(m, e);
	k[1] = kjob_new(m, e);
	kjob_submit(k[0]);
	kjob_submit(k[1]);
	assert_true(kjob_wait_scheduled(k[0]));
	kmock_wait_run(m, 1);
	assert_false(ttm_fence_is_signaled(k[1]->scheduled));
	assert_int_equal(kmock_advance(m, 1), 1);
	assert_true(kjob_wait_scheduled(k[1]));
	kmock_wait_run(m, 2);
	assert_int_equal(kmock_advance(m, 1), 1);
	assert_true(kjob_wait_finished(k[1]));
	ttm_sched_entity_destroy(e, UINT64_MAX);
	kmock_fini(m);
}

/*
 * One credit, a deep queue behind a first job that blocks the ring until
 * the test releases it: all of it then runs through, in order.
 */
static void deep_queue(unsigned int n_entities, bool chain)
{
	enum { JOBS = 1000 };
	struct kmock *m = kmock_new(1, 0);
	struct ttm_sched_entity *e[2];
	struct kjob **jobs = calloc(JOBS + 1, sizeof(*jobs));

	assert_non_null(jobs);
	for (unsigned int i = 0; i < n_entities; i++)
		e[i] = sched_entity_new(m->sched, TTM_SCHED_PRIORITY_NORMAL);
	for (unsigned int i = 0; i <= JOBS; i++) {
		jobs[i] = kjob_new(m, e[i % n_entities]);
		jobs[i]->self_completing = i > 0;
		if (chain && i)
			kjob_depend(jobs[i], jobs[i - 1]);
		kjob_submit(jobs[i]);
	}
	assert_true(kjob_wait_scheduled(jobs[0]));
	kmock_wait_run(m, 1);
	assert_int_equal(kmock_advance(m, 1), 1);
	assert_true(kjob_wait_finished(jobs[JOBS]));
	for (unsigned int i = 1; i <= JOBS; i++) {
		assert_true(ttm_fence_is_signaled(jobs[i - 1]->finished));
		assert_true(jobs[i - 1]->run_ns <= jobs[i]->run_ns);
	}
	for (unsigned int i = 0; i < n_entities; i++)
		ttm_sched_entity_destroy(e[i], UINT64_MAX);
	kmock_fini(m);
	free(jobs);
}

static void test_queue_deep(void **state)
{
	(void)state;
	deep_queue(1, false);
}

static void test_ping_pong(void **state)
{
	(void)state;
	deep_queue(2, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, mock_fence_setup, \
					     mock_fence_teardown)
		T(test_basic_submit),
		T(test_basic_one_entity),
		T(test_basic_dep_chain),
		T(test_basic_independent),
		T(test_basic_interdependent),
		T(test_basic_entity_cleanup),
		T(test_parallel_submit),
		T(test_interleaved_submit),
		T(test_basic_timeout),
		T(test_skip_reset),
		T(test_priorities),
		T(test_credits),
		T(test_queue_deep),
		T(test_ping_pong),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
