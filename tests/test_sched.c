// SPDX-License-Identifier: MIT
/*
 * The job scheduler (ttmsim/sched.h) in real time, against a mock backend
 * whose run_job hands out driver fences (mock fences) that the test
 * signals by hand. The test only ever blocks on a fence or on the mock's
 * own record of run_job calls, never sleeps: the order of events is fixed
 * by what the test signals, so every case is deterministic.
 */
#include "lib/helpers.h"
#include "lib/sched_helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "ttmsim/sched.h"
#include "util/compiler.h"

#define MAX_JOBS 64

struct mock {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int n_run;
	int order[MAX_JOBS];            /* job ids, in run_job order */
	struct ttm_fence *hw[MAX_JOBS]; /* by id: the test's reference */
	uint32_t credits[MAX_JOBS];     /* by id */
	unsigned int n_freed;
	unsigned int n_timedout;
	uint32_t in_flight, max_in_flight;
	/* What timedout_job answers: NO_HANG this many times, then RESET. */
	unsigned int no_hang;
	int run_error;                  /* run_job fails with it */
	bool dep_waited;                /* a probe fence got a callback */
	struct ttm_fence *done_hw;      /* run_job returns it, signalled */
	/* Recovery (mock_recover()): armed by the test, done once. */
	struct ttm_sched *sched;
	struct ttm_sched_job *jobs[MAX_JOBS];   /* by id */
	bool recover, recovered;
	bool resubmit;                  /* else the "driver" keeps its fences */
	bool forget_start;              /* returns still stopped */
	int guilty_id;
	unsigned int guilty_flags;
	int rc_stop, rc_guilty, rc_resubmit, rc_start;
};

/*
 * A dependency that tells the test when the scheduler starts waiting for
 * it: its enable_signaling op runs on the first ttm_fence_add_callback().
 */
struct probe_fence {
	struct ttm_fence base;
	struct mock *m;
};

static const char *probe_name(struct ttm_fence *fence)
{
	(void)fence;
	return "probe";
}

static bool probe_enable_signaling(struct ttm_fence *fence)
{
	struct mock *m = container_of(fence, struct probe_fence, base)->m;

	pthread_mutex_lock(&m->lock);
	m->dep_waited = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return true;
}

static void probe_release(struct ttm_fence *fence)
{
	free(container_of(fence, struct probe_fence, base));
}

static const struct ttm_fence_ops probe_ops = {
	.get_driver_name = probe_name,
	.get_timeline_name = probe_name,
	.enable_signaling = probe_enable_signaling,
	.release = probe_release,
};

static struct ttm_fence *probe_new(struct mock *m)
{
	struct probe_fence *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->m = m;
	ttm_fence_init(&p->base, &probe_ops, ttm_fence_context_alloc(1), 1);
	return &p->base;
}

struct mock_job {
	struct ttm_sched_job base;
	struct mock *m;
	int id;
};

static struct mock_job *to_mock(struct ttm_sched_job *job)
{
	return container_of(job, struct mock_job, base);
}

static struct ttm_fence *mock_run_job(struct ttm_sched_job *job)
{
	struct mock_job *mj = to_mock(job);
	struct mock *m = mj->m;
	struct ttm_fence *hw;

	if (m->run_error)
		return ttm_sched_err_ptr(m->run_error);
	hw = m->done_hw ? ttm_fence_get(m->done_hw) :
			  mock_fence_new("mock-ring");
	pthread_mutex_lock(&m->lock);
	ttm_fence_put(m->hw[mj->id]);   /* run again: resubmitted */
	m->hw[mj->id] = ttm_fence_get(hw);
	m->order[m->n_run++] = mj->id;
	m->in_flight += m->credits[mj->id];
	if (m->in_flight > m->max_in_flight)
		m->max_in_flight = m->in_flight;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return hw;
}

/*
 * A driver's recovery, whatever job timed out: stop, blame the test's
 * guilty job, "reset" the ring (every old hardware fence fails, which
 * must no longer finish anything), then run the others again with new
 * fences, or keep the old ones (a driver that re-emits its ring itself:
 * no failing them then), and start.
 */
static void mock_recover(struct mock *m)
{
	m->rc_stop = ttm_sched_stop(m->sched);
	m->rc_guilty = ttm_sched_job_set_guilty(m->jobs[m->guilty_id],
						-ETIMEDOUT, m->guilty_flags);
	if (m->resubmit) {
		for (unsigned int i = 0; i < m->n_run; i++) {
			struct ttm_fence *hw = m->hw[m->order[i]];

			if (!ttm_fence_is_signaled(hw))
				ttm_fence_signal(hw, -ECANCELED);
		}
		m->rc_resubmit = ttm_sched_resubmit_jobs(m->sched);
	}
	if (!m->forget_start)
		m->rc_start = ttm_sched_start(m->sched, 0);
}

static enum ttm_sched_stat mock_timedout_job(struct ttm_sched_job *job)
{
	struct mock_job *mj = to_mock(job);
	struct mock *m = mj->m;
	bool reset, recover;

	pthread_mutex_lock(&m->lock);
	m->n_timedout++;
	reset = m->n_timedout > m->no_hang;
	recover = m->recover && !m->recovered;
	pthread_mutex_unlock(&m->lock);
	if (recover) {
		/* Unlocked: resubmitting calls run_job, which locks. */
		mock_recover(m);
		pthread_mutex_lock(&m->lock);
		m->recovered = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		return TTM_SCHED_STAT_RESET;
	}
	if (!reset)
		return TTM_SCHED_STAT_NO_HANG;
	/* The "reset": the hardware gives up on the job. */
	ttm_fence_signal(m->hw[mj->id], -ETIMEDOUT);
	return TTM_SCHED_STAT_RESET;
}

static void mock_free_job(struct ttm_sched_job *job)
{
	struct mock_job *mj = to_mock(job);
	struct mock *m = mj->m;

	ttm_sched_job_cleanup(job);
	pthread_mutex_lock(&m->lock);
	m->n_freed++;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	free(mj);
}

static const struct ttm_sched_backend_ops mock_ops = {
	.run_job = mock_run_job,
	.timedout_job = mock_timedout_job,
	.free_job = mock_free_job,
};

static struct mock *mock_new(void)
{
	struct mock *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	return m;
}

static void mock_free(struct mock *m)
{
	for (unsigned int i = 0; i < MAX_JOBS; i++)
		ttm_fence_put(m->hw[i]);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct ttm_sched *sched_new(const char *name, uint32_t credits,
				   uint64_t timeout_ns)
{
	struct ttm_sched_options opts = {
		.name = name, .credit_limit = credits,
		.timeout_ns = timeout_ns, .ops = &mock_ops,
	};
	struct ttm_sched *s = NULL;

	assert_int_equal(ttm_sched_create(&opts, &s), 0);
	return s;
}

/*
 * Push job @id (credits @credits, dependency @dep: a reference taken over)
 * on @e; returns a reference to its finished fence, and to its scheduled
 * one in *@ret_scheduled if asked.
 */
static struct ttm_fence *push(struct mock *m, struct ttm_sched_entity *e,
			      int id, uint32_t credits, struct ttm_fence *dep,
			      struct ttm_fence **ret_scheduled)
{
	struct mock_job *mj = calloc(1, sizeof(*mj));
	struct ttm_fence *finished;

	assert_non_null(mj);
	mj->m = m;
	mj->id = id;
	m->credits[id] = credits;
	m->jobs[id] = &mj->base;
	assert_int_equal(ttm_sched_job_init(&mj->base, e, credits), 0);
	if (dep)
		assert_int_equal(ttm_sched_job_add_dependency(&mj->base, dep),
				 0);
	ttm_sched_job_arm(&mj->base);
	finished = ttm_fence_get(ttm_sched_job_finished(&mj->base));
	if (ret_scheduled)
		*ret_scheduled = ttm_fence_get(
			ttm_sched_job_scheduled(&mj->base));
	ttm_sched_entity_push_job(&mj->base);
	return finished;
}

/* Block until run_job has been called @n times in all. */
static void wait_run(struct mock *m, unsigned int n)
{
	pthread_mutex_lock(&m->lock);
	while (m->n_run < n)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static void wait_freed(struct mock *m, unsigned int n)
{
	pthread_mutex_lock(&m->lock);
	while (m->n_freed < n)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

/* The hardware finishes job @id with @error. */
static void hw_done(struct mock *m, int id, int error)
{
	struct ttm_fence *hw;

	pthread_mutex_lock(&m->lock);
	hw = m->hw[id];
	m->in_flight -= m->credits[id];
	pthread_mutex_unlock(&m->lock);
	assert_non_null(hw);
	assert_int_equal(ttm_fence_signal(hw, error), 0);
}

/*
 * With @n jobs queued behind a running one: finish them one by one in
 * run order, checking that each one only runs once the one before it has
 * finished (one credit), and return the order in @order.
 */
static void drain_serial(struct mock *m, unsigned int n, int *order)
{
	for (unsigned int k = 1; k <= n; k++) {
		wait_run(m, k);
		pthread_mutex_lock(&m->lock);
		assert_int_equal(m->n_run, k);
		order[k - 1] = m->order[k - 1];
		pthread_mutex_unlock(&m->lock);
		hw_done(m, order[k - 1], 0);
	}
}

static void test_basic(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 4, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *sched_f, *fin;

	(void)state;
	fin = push(m, e, 0, 1, NULL, &sched_f);
	assert_int_equal(ttm_fence_wait(sched_f, false, -1), 0);
	assert_false(ttm_fence_is_signaled(fin));
	assert_string_equal(ttm_fence_timeline_name(fin), "ring0");
	assert_string_equal(ttm_fence_driver_name(fin), "ttm_sched");
	wait_run(m, 1);
	hw_done(m, 0, 0);
	fence_wait_status(fin, 1);
	ttm_fence_put(sched_f);
	wait_freed(m, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/*
 * A job's finished fence records the time its hardware fence signalled,
 * not a clock read of its own (one fewer per job): the two timestamps
 * are the same number. A failed run_job has no hardware fence: there the
 * finished fence reads the clock (test_run_job_error covers its status).
 */
static void test_finished_timestamp(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 4, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin, *hw;
	uint64_t hw_ns = 0, fin_ns = 0;

	(void)state;
	fin = push(m, e, 0, 1, NULL, NULL);
	wait_run(m, 1);
	pthread_mutex_lock(&m->lock);
	hw = ttm_fence_get(m->hw[0]);
	pthread_mutex_unlock(&m->lock);
	assert_int_equal(ttm_fence_timestamp(fin, &fin_ns), -EBUSY);
	hw_done(m, 0, 0);
	assert_int_equal(ttm_fence_wait(fin, false, -1), 0);
	assert_int_equal(ttm_fence_get_status(fin), 1);
	assert_int_equal(ttm_fence_timestamp(hw, &hw_ns), 0);
	assert_int_equal(ttm_fence_timestamp(fin, &fin_ns), 0);
	assert_true(hw_ns != 0);
	assert_true(fin_ns == hw_ns);
	ttm_fence_put(hw);
	ttm_fence_put(fin);
	wait_freed(m, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/*
 * A hardware fence run_job hands back already signalled (signalled before
 * the job was even pushed) does not date the job's end before its start:
 * the finished fence's time is the scheduled fence's, not the older one.
 */
static void test_finished_not_before_scheduled(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 4, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	uint64_t hw_ns = 0, sched_ns = 0, fin_ns = 0;
	struct ttm_fence *fin, *sched;

	(void)state;
	m->done_hw = mock_fence_new("mock-done");
	assert_int_equal(ttm_fence_signal(m->done_hw, 0), 0);
	assert_int_equal(ttm_fence_timestamp(m->done_hw, &hw_ns), 0);
	fin = push(m, e, 0, 1, NULL, &sched);
	assert_int_equal(ttm_fence_wait(fin, false, -1), 0);
	assert_int_equal(ttm_fence_get_status(fin), 1);
	assert_int_equal(ttm_fence_timestamp(fin, &fin_ns), 0);
	assert_int_equal(ttm_fence_timestamp(sched, &sched_ns), 0);
	assert_true(sched_ns > hw_ns);
	assert_true(fin_ns >= sched_ns);
	ttm_fence_put(sched);
	ttm_fence_put(fin);
	wait_freed(m, 1);
	ttm_fence_put(m->done_hw);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/* A high-priority job overtakes queued normal ones. */
static void test_priority_overtakes(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *n =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *h =
		sched_entity_new(s, TTM_SCHED_PRIORITY_HIGH);
	struct ttm_sched_entity *l =
		sched_entity_new(s, TTM_SCHED_PRIORITY_LOW);
	struct ttm_sched_entity *k =
		sched_entity_new(s, TTM_SCHED_PRIORITY_KERNEL);
	struct ttm_fence *fin[6];
	int order[6];
	const int want[6] = { 0, 5, 4, 1, 2, 3 };

	(void)state;
	fin[0] = push(m, n, 0, 1, NULL, NULL);
	wait_run(m, 1); /* the ring is now full */
	fin[1] = push(m, n, 1, 1, NULL, NULL);
	fin[2] = push(m, n, 2, 1, NULL, NULL);
	fin[3] = push(m, l, 3, 1, NULL, NULL);
	fin[4] = push(m, h, 4, 1, NULL, NULL);
	fin[5] = push(m, k, 5, 1, NULL, NULL);
	drain_serial(m, 6, order);
	assert_memory_equal(order, want, sizeof(want));
	for (int i = 0; i < 6; i++)
		fence_wait_status(fin[i], 1);
	ttm_sched_entity_destroy(k, 0);
	ttm_sched_entity_destroy(l, 0);
	ttm_sched_entity_destroy(h, 0);
	ttm_sched_entity_destroy(n, 0);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_freed, 6);
	mock_free(m);
}

/* Entities of one priority take turns. */
static void test_fairness(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *e[3];
	struct ttm_fence *fin[7];
	int order[7];
	/* A ran last, so B and C go first, then A again. */
	const int want[7] = { 0, 3, 5, 1, 4, 6, 2 };

	(void)state;
	for (int i = 0; i < 3; i++)
		e[i] = sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	fin[0] = push(m, e[0], 0, 1, NULL, NULL);
	wait_run(m, 1);
	fin[1] = push(m, e[0], 1, 1, NULL, NULL);
	fin[2] = push(m, e[0], 2, 1, NULL, NULL);
	fin[3] = push(m, e[1], 3, 1, NULL, NULL);
	fin[4] = push(m, e[1], 4, 1, NULL, NULL);
	fin[5] = push(m, e[2], 5, 1, NULL, NULL);
	fin[6] = push(m, e[2], 6, 1, NULL, NULL);
	drain_serial(m, 7, order);
	assert_memory_equal(order, want, sizeof(want));
	for (int i = 0; i < 7; i++)
		fence_wait_status(fin[i], 1);
	for (int i = 0; i < 3; i++)
		ttm_sched_entity_destroy(e[i], 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/*
 * A job of one scheduler waits for a job of another; a failed dependency
 * fails the job without running it.
 */
static void test_deps_across(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s1 = sched_new("ring1", 4, 0);
	struct ttm_sched *s2 = sched_new("ring2", 4, 0);
	struct ttm_sched_entity *e1 = sched_entity_new(s1,
						 TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *e2 = sched_entity_new(s2,
						 TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *a, *b, *b_sched, *c, *d, *d_sched;

	(void)state;
	a = push(m, e1, 0, 1, NULL, NULL);
	b = push(m, e2, 1, 1, ttm_fence_get(a), &b_sched);
	wait_run(m, 1);
	assert_int_equal(m->order[0], 0);
	assert_false(ttm_fence_is_signaled(b_sched));
	hw_done(m, 0, 0);
	assert_int_equal(ttm_fence_wait(b_sched, false, -1), 0);
	assert_true(ttm_fence_is_signaled(a));
	wait_run(m, 2);
	assert_int_equal(m->order[1], 1);
	hw_done(m, 1, 0);
	fence_wait_status(b, 1);
	ttm_fence_put(b_sched);

	/* c fails on the hardware; d depends on it and never runs. */
	c = push(m, e1, 2, 1, NULL, NULL);
	d = push(m, e2, 3, 1, ttm_fence_get(c), &d_sched);
	wait_run(m, 3);
	hw_done(m, 2, -EIO);
	fence_wait_status(d, -EIO);
	assert_true(ttm_fence_is_signaled(d_sched));
	ttm_fence_put(d_sched);
	fence_wait_status(c, -EIO);
	fence_wait_status(a, 1);
	wait_freed(m, 4);
	assert_int_equal(m->n_run, 3);
	ttm_sched_entity_destroy(e2, 0);
	ttm_sched_entity_destroy(e1, 0);
	ttm_sched_destroy(s2);
	ttm_sched_destroy(s1);
	mock_free(m);
}

/* No more credits on the ring than the limit; big jobs wait for room. */
static void test_credit_limit(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 3, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[4];

	(void)state;
	fin[0] = push(m, e, 0, 2, NULL, NULL);
	fin[1] = push(m, e, 1, 2, NULL, NULL); /* 2 + 2 > 3: waits */
	fin[2] = push(m, e, 2, 1, NULL, NULL);
	fin[3] = push(m, e, 3, 9, NULL, NULL); /* clamped to 3 */
	pthread_mutex_lock(&m->lock);
	m->credits[3] = 3;
	pthread_mutex_unlock(&m->lock);
	wait_run(m, 1);
	pthread_mutex_lock(&m->lock);
	assert_int_equal(m->n_run, 1);
	pthread_mutex_unlock(&m->lock);
	hw_done(m, 0, 0);
	wait_run(m, 3); /* 1 and 2: 3 credits */
	hw_done(m, 1, 0);
	hw_done(m, 2, 0);
	wait_run(m, 4);
	hw_done(m, 3, 0);
	for (int i = 0; i < 4; i++)
		fence_wait_status(fin[i], 1);
	assert_true(m->max_in_flight <= 3);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/*
 * A job that runs too long: timedout_job, first answering "still
 * running" (re-armed), then resetting, which fails the finished fence.
 */
static void test_timeout(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 1000000); /* 1 ms */
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	m->no_hang = 1;
	fin = push(m, e, 0, 1, NULL, NULL);
	fence_wait_status(fin, -ETIMEDOUT);
	pthread_mutex_lock(&m->lock);
	assert_int_equal(m->n_timedout, 2);
	/*
	 * The next job may time out too before the test finishes it (1 ms
	 * on a loaded machine): from now on the mock says it still runs.
	 */
	m->no_hang = UINT32_MAX;
	pthread_mutex_unlock(&m->lock);
	/* The ring goes on after the reset. */
	fin = push(m, e, 1, 1, NULL, NULL);
	wait_run(m, 2);
	hw_done(m, 1, 0);
	fence_wait_status(fin, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/* run_job failing fails the finished fence with its error. */
static void test_run_job_error(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);

	(void)state;
	m->run_error = -ENOSPC;
	fence_wait_status(push(m, e, 0, 1, NULL, NULL), -ENOSPC);
	wait_freed(m, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/* Record the order in which watched fences signal. */
struct watch {
	struct ttm_fence_cb cb;
	struct mock *m;
	int id;
};

static int signal_order[MAX_JOBS];
static unsigned int n_signalled;

static void watch_cb(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct watch *w = container_of(cb, struct watch, cb);

	(void)fence;
	pthread_mutex_lock(&w->m->lock);
	signal_order[n_signalled++] = w->id;
	pthread_mutex_unlock(&w->m->lock);
}

static void watch(struct watch *w, struct mock *m, struct ttm_fence *f,
		  int id)
{
	w->m = m;
	w->id = id;
	assert_int_equal(ttm_fence_add_callback(f, &w->cb, watch_cb), 0);
}

/*
 * Destroying an entity with queued jobs: the running one finishes, the
 * queued ones (one waiting on a fence that never signals) are killed with
 * -ESRCH and freed without running; as in the kernel, only once the job
 * the entity handed to the ring has finished, and in order.
 */
static void test_entity_teardown(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *w =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *never = probe_new(m);
	struct ttm_fence *fin[4], *sched_f[4];
	struct watch watches[3];
	const int want[3] = { 0, 1, 2 };

	(void)state;
	n_signalled = 0;
	fin[0] = push(m, e, 0, 1, NULL, &sched_f[0]);
	wait_run(m, 1);
	fin[1] = push(m, e, 1, 1, NULL, &sched_f[1]);
	fin[2] = push(m, e, 2, 1, NULL, &sched_f[2]);
	for (int i = 0; i < 3; i++)
		watch(&watches[i], m, fin[i], i);
	/* Another entity's job stuck on a dependency, callback armed. */
	fin[3] = push(m, w, 3, 1, ttm_fence_get(never), &sched_f[3]);
	ttm_sched_entity_destroy(e, 0);
	/* Killed, but nothing signals before job 0, still on the ring. */
	for (int i = 1; i < 3; i++) {
		assert_false(ttm_fence_is_signaled(sched_f[i]));
		assert_false(ttm_fence_is_signaled(fin[i]));
	}
	hw_done(m, 0, 0);
	fence_wait_status(fin[0], 1);
	for (int i = 1; i < 3; i++) {
		fence_wait_status(fin[i], -ESRCH);
		assert_true(ttm_fence_is_signaled(sched_f[i]));
	}
	assert_int_equal(n_signalled, 3);
	assert_memory_equal(signal_order, want, sizeof(want));
	/* Room on the ring: the scheduler now waits for the dependency. */
	pthread_mutex_lock(&m->lock);
	while (!m->dep_waited)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
	ttm_sched_entity_destroy(w, 0);
	assert_true(ttm_fence_is_signaled(sched_f[3]));
	fence_wait_status(fin[3], -ESRCH);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_run, 1);
	assert_int_equal(m->n_freed, 4);
	for (int i = 0; i < 4; i++)
		ttm_fence_put(sched_f[i]);
	/* The killed job's callback is gone: nothing runs on freed memory. */
	ttm_fence_signal(never, 0);
	ttm_fence_put(never);
	mock_free(m);
}

/* Flushing: destroy waits for the queue to reach the ring. */
static void *finish_two(void *arg)
{
	struct mock *m = arg;

	wait_run(m, 1);
	hw_done(m, 0, 0);
	wait_run(m, 2);
	hw_done(m, 1, 0);
	return NULL;
}

static void test_entity_flush(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[2];
	pthread_t t;

	(void)state;
	fin[0] = push(m, e, 0, 1, NULL, NULL);
	fin[1] = push(m, e, 1, 1, NULL, NULL);
	assert_int_equal(pthread_create(&t, NULL, finish_two, m), 0);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	pthread_join(t, NULL);
	fence_wait_status(fin[0], 1);
	fence_wait_status(fin[1], 1);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_run, 2);
	mock_free(m);
}

/* Arm the mock's recovery for the next timeout; blame job @guilty. */
static void arm_recovery(struct mock *m, struct ttm_sched *s, int guilty,
			 unsigned int flags, bool resubmit)
{
	pthread_mutex_lock(&m->lock);
	m->sched = s;
	m->guilty_id = guilty;
	m->guilty_flags = flags;
	m->resubmit = resubmit;
	m->recover = true;
	while (!m->recovered)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static uint64_t stamp(struct ttm_fence *f)
{
	uint64_t ns = 0;

	assert_int_equal(ttm_fence_timestamp(f, &ns), 0);
	return ns;
}

/*
 * Timeout -> reset -> resubmit: three jobs on the ring, the first one
 * guilty. It fails with -ETIMEDOUT, and so does a job of another entity
 * depending on it (without running); the innocent two run again with new
 * hardware fences (the old ones failing changes nothing) and finish
 * fine; the finished fences signal in ring order.
 */
static void test_reset_resubmit(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 4, 1000000); /* 1 ms */
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *c =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[4], *dep_sched;
	int x, y;                       /* the innocent two, in ring order */

	(void)state;
	m->no_hang = UINT32_MAX;        /* until the recovery is armed */
	fin[0] = push(m, a, 0, 1, NULL, NULL);
	fin[1] = push(m, a, 1, 1, NULL, NULL);
	fin[2] = push(m, b, 2, 1, NULL, NULL);
	fin[3] = push(m, c, 3, 1, ttm_fence_get(fin[0]), &dep_sched);
	wait_run(m, 3);
	/* 1 and 2 in either order: 1 may run before 2 is pushed. */
	assert_int_equal(m->order[0], 0);
	x = m->order[1];
	y = m->order[2];
	arm_recovery(m, s, 0, 0, true);
	assert_int_equal(m->rc_stop, 0);
	assert_int_equal(m->rc_guilty, 0);
	assert_int_equal(m->rc_resubmit, 2);
	assert_int_equal(m->rc_start, 0);
	wait_run(m, 5);
	assert_int_equal(m->order[3], x);
	assert_int_equal(m->order[4], y);
	assert_int_equal(ttm_fence_get_status(fin[0]), -ETIMEDOUT);
	assert_int_equal(ttm_fence_wait(fin[3], false, -1), 0);
	assert_int_equal(ttm_fence_get_status(fin[3]), -ETIMEDOUT);
	assert_true(ttm_fence_is_signaled(dep_sched));
	/* The old fences failed; the jobs follow their new ones. */
	assert_false(ttm_fence_is_signaled(fin[1]));
	assert_false(ttm_fence_is_signaled(fin[2]));
	hw_done(m, x, 0);
	hw_done(m, y, 0);
	assert_int_equal(ttm_fence_wait(fin[x], false, -1), 0);
	assert_int_equal(ttm_fence_wait(fin[y], false, -1), 0);
	assert_true(stamp(fin[0]) <= stamp(fin[x]));
	assert_true(stamp(fin[x]) <= stamp(fin[y]));
	fence_wait_status(fin[1], 1);
	fence_wait_status(fin[2], 1);
	fence_wait_status(fin[0], -ETIMEDOUT);
	fence_wait_status(fin[3], -ETIMEDOUT);
	ttm_fence_put(dep_sched);
	assert_int_equal(m->n_run, 5);  /* the dependent job never ran */
	ttm_sched_entity_destroy(c, 0);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_freed, 4);
	mock_free(m);
}

/*
 * A guilty job that bans its entity: the entity's other job on the ring
 * fails -ECANCELED instead of running again, and so do its queued job and
 * one pushed after the reset, without run_job; another entity goes on.
 */
static void test_reset_ban(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 3, 1000000);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[6];

	(void)state;
	m->no_hang = UINT32_MAX;
	fin[0] = push(m, a, 0, 1, NULL, NULL);
	wait_run(m, 1);
	fin[1] = push(m, b, 1, 1, NULL, NULL);
	wait_run(m, 2);
	fin[2] = push(m, a, 2, 1, NULL, NULL);
	wait_run(m, 3);
	fin[3] = push(m, a, 3, 1, NULL, NULL); /* no credits: queued */
	arm_recovery(m, s, 0, TTM_SCHED_GUILTY_BAN, true);
	assert_int_equal(m->rc_resubmit, 1);
	fence_wait_status(fin[0], -ETIMEDOUT);
	fence_wait_status(fin[2], -ECANCELED);
	fence_wait_status(fin[3], -ECANCELED);
	fin[4] = push(m, a, 4, 1, NULL, NULL);
	fence_wait_status(fin[4], -ECANCELED);
	fin[5] = push(m, b, 5, 1, NULL, NULL);
	wait_run(m, 5);
	assert_int_equal(m->order[3], 1);
	assert_int_equal(m->order[4], 5);
	hw_done(m, 1, 0);
	hw_done(m, 5, 0);
	fence_wait_status(fin[1], 1);
	fence_wait_status(fin[5], 1);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_run, 5);
	assert_int_equal(m->n_freed, 6);
	mock_free(m);
}

/*
 * A driver that re-emits its ring itself keeps the hardware fences: no
 * resubmit; start follows the old fences of the innocent jobs and
 * finishes the guilty one without waiting for its fence.
 */
static void test_reset_keep_fences(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 2, 1000000);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[2];

	(void)state;
	m->no_hang = UINT32_MAX;
	fin[0] = push(m, a, 0, 1, NULL, NULL);
	fin[1] = push(m, a, 1, 1, NULL, NULL);
	wait_run(m, 2);
	arm_recovery(m, s, 1, 0, false);
	fence_wait_status(fin[1], -ETIMEDOUT);
	assert_false(ttm_fence_is_signaled(fin[0]));
	hw_done(m, 0, 0);
	fence_wait_status(fin[0], 1);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_run, 2);
	mock_free(m);
}

/*
 * A timedout_job that stops the scheduler and returns without starting
 * it: the scheduler starts itself, the guilty job fails, the ring goes on.
 */
static void test_reset_forgets_start(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 1000000);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	m->no_hang = UINT32_MAX;
	m->forget_start = true;
	fin = push(m, e, 0, 1, NULL, NULL);
	wait_run(m, 1);
	arm_recovery(m, s, 0, 0, false);
	fence_wait_status(fin, -ETIMEDOUT);
	fin = push(m, e, 1, 1, NULL, NULL);
	wait_run(m, 2);
	hw_done(m, 1, 0);
	fence_wait_status(fin, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

/* The recovery calls belong to timedout_job: refused elsewhere. */
static void test_reset_outside_timedout(void **state)
{
	struct mock *m = mock_new();
	struct ttm_sched *s = sched_new("ring0", 1, 0);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	fin = push(m, e, 0, 1, NULL, NULL);
	wait_run(m, 1);
	assert_int_equal(ttm_sched_stop(s), -EPERM);
	assert_int_equal(ttm_sched_job_set_guilty(m->jobs[0], -EIO, 0),
			 -EPERM);
	assert_int_equal(ttm_sched_job_set_guilty(m->jobs[0], 0, 0), -EINVAL);
	assert_int_equal(ttm_sched_job_set_guilty(m->jobs[0], -EIO, 2),
			 -EINVAL);
	assert_int_equal(ttm_sched_resubmit_jobs(s), -EPERM);
	assert_int_equal(ttm_sched_start(s, 0), -EPERM);
	hw_done(m, 0, 0);
	fence_wait_status(fin, 1);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	mock_free(m);
}

static void test_bad_args(void **state)
{
	struct ttm_sched_options opts = { .credit_limit = 1, .ops = &mock_ops };
	struct ttm_sched *s = NULL;
	struct ttm_sched_entity *e = NULL;

	(void)state;
	opts.credit_limit = 0;
	assert_int_equal(ttm_sched_create(&opts, &s), -EINVAL);
	opts.credit_limit = 1;
	opts.ops = NULL;
	assert_int_equal(ttm_sched_create(&opts, &s), -EINVAL);
	opts.ops = &mock_ops;
	assert_int_equal(ttm_sched_create(&opts, &s), 0);
	assert_int_equal(ttm_sched_entity_create(s, TTM_SCHED_PRIORITY_COUNT,
						 &e), -EINVAL);
	ttm_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, mock_fence_setup, \
					     mock_fence_teardown)
		T(test_basic),
		T(test_finished_timestamp),
		T(test_finished_not_before_scheduled),
		T(test_priority_overtakes),
		T(test_fairness),
		T(test_deps_across),
		T(test_credit_limit),
		T(test_timeout),
		T(test_run_job_error),
		T(test_entity_teardown),
		T(test_entity_flush),
		T(test_reset_resubmit),
		T(test_reset_ban),
		T(test_reset_keep_fences),
		T(test_reset_forgets_start),
		T(test_reset_outside_timedout),
		T(test_bad_args),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
