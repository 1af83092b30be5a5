// SPDX-License-Identifier: MIT
/*
 * The scheduler's callback backend (ttm_sched_cb_create()): the driver's
 * function runs on a worker, its return value is the finished fence's
 * status; the jobs of one entity run one at a time and in order while
 * entities run in parallel; priorities; entity teardown with queued jobs
 * (release without the function); dependencies on fence containers and
 * syncobj points; the inline mode on a deterministic GPU.
 *
 * Nothing sleeps for time to pass: a job that must be running while the
 * test acts blocks on an event (a gate) the test opens, and reports that
 * it started through another. Gates time out after 10 s, failing the job
 * (-ETIMEDOUT), so a broken scheduler fails a case instead of hanging it.
 */
#include "lib/helpers.h"
#include "lib/sched_helpers.h"

#include "ttmsim/fence.h"
#include "ttmsim/fence_container.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"
#include "ttmsim/syncobj.h"

#define MAX_CALLS 256
#define MAX_ENTITIES 8

/* What the jobs saw, shared with the test. */
struct cbt {
	pthread_mutex_t lock;
	int order[MAX_CALLS];           /* call ids, as their fn returned */
	unsigned int n_ran;
	unsigned int released;
	int active[MAX_ENTITIES];       /* jobs running, by entity */
	bool overlap;                   /* two jobs of an entity at once */
	bool ran_in_main;               /* a fn ran in the test's thread */
	pthread_t main_thread;
};

/* One job's data; freed by its release. */
struct call {
	struct cbt *t;
	int id;
	int entity;
	int ret;
	struct event *gate;             /* waited for, if set */
	struct event *started;          /* set when fn starts, if set */
};

static int call_fn(struct ttm_sched_job *job, void *data)
{
	struct call *c = data;
	struct cbt *t = c->t;
	int ret = c->ret;

	CHECK(job);     /* a worker: no cmocka assert here */
	pthread_mutex_lock(&t->lock);
	if (t->active[c->entity]++)
		t->overlap = true;
	if (pthread_equal(pthread_self(), t->main_thread))
		t->ran_in_main = true;
	pthread_mutex_unlock(&t->lock);
	if (c->started)
		event_set(c->started);
	if (c->gate && !event_wait_for(c->gate, 10))
		ret = -ETIMEDOUT;
	pthread_mutex_lock(&t->lock);
	t->active[c->entity]--;
	t->order[t->n_ran++] = c->id;
	pthread_mutex_unlock(&t->lock);
	return ret;
}

static void call_release(void *data)
{
	struct call *c = data;

	pthread_mutex_lock(&c->t->lock);
	c->t->released++;
	pthread_mutex_unlock(&c->t->lock);
	free(c);
}

static struct cbt *cbt_new(void)
{
	struct cbt *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	pthread_mutex_init(&t->lock, NULL);
	t->main_thread = pthread_self();
	return t;
}

static void cbt_free(struct cbt *t)
{
	assert_false(t->overlap);
	assert_checks_passed();
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static unsigned int cbt_ran(struct cbt *t)
{
	unsigned int n;

	pthread_mutex_lock(&t->lock);
	n = t->n_ran;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static unsigned int cbt_released(struct cbt *t)
{
	unsigned int n;

	pthread_mutex_lock(&t->lock);
	n = t->released;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static struct ttm_sched *cb_new(unsigned int workers, uint32_t credits)
{
	struct ttm_sched_options opts = { .credit_limit = credits };
	struct ttm_sched *s = NULL;

	assert_int_equal(ttm_sched_cb_create(&opts, workers, &s), 0);
	return s;
}

/* Submit call @id of entity index @ent; returns its finished fence. */
static struct ttm_fence *submit(struct cbt *t, struct ttm_sched_entity *e,
				int ent, int id, int ret, struct event *gate,
				struct event *started,
				struct ttm_fence *const *deps,
				unsigned int n_deps)
{
	struct call *c = calloc(1, sizeof(*c));
	struct ttm_sched_cb_args args = {
		.fn = call_fn, .data = c, .release = call_release,
		.deps = deps, .n_deps = n_deps,
	};
	struct ttm_fence *fin = NULL;

	assert_non_null(c);
	*c = (struct call){ .t = t, .id = id, .entity = ent, .ret = ret,
			    .gate = gate, .started = started };
	assert_int_equal(ttm_sched_cb_submit(e, &args, &fin), 0);
	assert_non_null(fin);
	return fin;
}

static void test_cb_runs(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 4);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	fin = submit(t, e, 0, 7, 0, NULL, NULL, NULL, 0);
	assert_string_equal(ttm_fence_timeline_name(fin), "cb");
	fence_wait_status(fin, 1);
	assert_int_equal(cbt_ran(t), 1);
	assert_int_equal(t->order[0], 7);
	assert_false(t->ran_in_main);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	assert_int_equal(cbt_released(t), 1);
	cbt_free(t);
}

/* fn's error fails the job; a job depending on it fails without running. */
static void test_cb_error(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 4);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[3];

	(void)state;
	fin[0] = submit(t, a, 0, 0, -EIO, NULL, NULL, NULL, 0);
	fin[1] = submit(t, b, 1, 1, 0, NULL, NULL, &fin[0], 1);
	fin[2] = submit(t, b, 1, 2, 5, NULL, NULL, NULL, 0);
	fence_wait_status(fin[2], 1);         /* positive counts as success */
	fence_wait_status(fin[1], -EIO);
	fence_wait_status(fin[0], -EIO);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_destroy(s);
	assert_int_equal(cbt_ran(t), 2);  /* not the dependent job */
	for (unsigned int i = 0; i < 2; i++)
		assert_int_not_equal(t->order[i], 1);
	assert_int_equal(cbt_released(t), 3);
	cbt_free(t);
}

/*
 * Three entities, many workers, deep queues: each entity's jobs run one
 * at a time (no overlap), in push order, and its finished fences signal
 * in order.
 */
static void test_cb_entity_order(void **state)
{
	enum { N_ENT = 3, N_JOBS = 40 };
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(4, 8);
	struct ttm_sched_entity *e[N_ENT];
	struct ttm_fence *fin[N_ENT][N_JOBS];
	int next[N_ENT] = { 0 };

	(void)state;
	for (int i = 0; i < N_ENT; i++)
		e[i] = sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	for (int k = 0; k < N_JOBS; k++)
		for (int i = 0; i < N_ENT; i++)
			fin[i][k] = submit(t, e[i], i, i * 100 + k, 0, NULL,
					   NULL, NULL, 0);
	for (int i = 0; i < N_ENT; i++) {
		assert_int_equal(ttm_fence_wait(fin[i][N_JOBS - 1], false, -1),
				 0);
		/* The last one signalled: so did every earlier one. */
		for (int k = 0; k < N_JOBS; k++) {
			assert_true(ttm_fence_is_signaled(fin[i][k]));
			assert_int_equal(ttm_fence_get_status(fin[i][k]), 1);
			ttm_fence_put(fin[i][k]);
		}
	}
	assert_int_equal(cbt_ran(t), N_ENT * N_JOBS);
	for (unsigned int n = 0; n < N_ENT * N_JOBS; n++) {
		int ent = t->order[n] / 100, k = t->order[n] % 100;

		assert_int_equal(k, next[ent]);
		next[ent]++;
	}
	for (int i = 0; i < N_ENT; i++)
		ttm_sched_entity_destroy(e[i], 0);
	ttm_sched_destroy(s);
	cbt_free(t);
}

/* Two entities' jobs run at once: A's waits until B's has started. */
static void test_cb_parallel(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 2);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct event b_started;
	struct ttm_fence *fa, *fb;

	(void)state;
	event_init(&b_started);
	fa = submit(t, a, 0, 0, 0, &b_started, NULL, NULL, 0);
	fb = submit(t, b, 1, 1, 0, NULL, &b_started, NULL, 0);
	fence_wait_status(fa, 1);     /* -ETIMEDOUT had they run one by one */
	fence_wait_status(fb, 1);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_destroy(s);
	event_destroy(&b_started);
	cbt_free(t);
}

/*
 * Two workers, an entity's two jobs and another entity's one, handed out
 * in that order (priorities): while the first job blocks until the other
 * entity's job has started, the free worker must pass over the blocked
 * entity's second job and take the other entity's. Taking it instead
 * would run two jobs of one entity at once (the overlap check).
 */
static void test_cb_entity_serialised(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 3);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_HIGH);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[3];
	struct event b_started;

	(void)state;
	event_init(&b_started);
	fin[0] = submit(t, a, 0, 0, 0, &b_started, NULL, NULL, 0);
	fin[1] = submit(t, a, 0, 1, 0, NULL, NULL, NULL, 0);
	fin[2] = submit(t, b, 1, 2, 0, NULL, &b_started, NULL, 0);
	for (int i = 0; i < 3; i++)
		fence_wait_status(fin[i], 1);
	assert_int_equal(cbt_ran(t), 3);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_destroy(s);
	event_destroy(&b_started);
	cbt_free(t);    /* no overlap */
}

/*
 * One credit: while job 0 blocks the ring, jobs of every priority queue
 * up; they then run highest priority first.
 */
static void test_cb_priorities(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(1, 1);
	struct ttm_sched_entity *n =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *l =
		sched_entity_new(s, TTM_SCHED_PRIORITY_LOW);
	struct ttm_sched_entity *h =
		sched_entity_new(s, TTM_SCHED_PRIORITY_HIGH);
	struct ttm_sched_entity *k =
		sched_entity_new(s, TTM_SCHED_PRIORITY_KERNEL);
	struct event gate, started;
	struct ttm_fence *fin[6];
	const int want[6] = { 0, 5, 4, 1, 2, 3 };

	(void)state;
	event_init(&gate);
	event_init(&started);
	fin[0] = submit(t, n, 0, 0, 0, &gate, &started, NULL, 0);
	assert_true(event_wait_for(&started, 10));
	fin[1] = submit(t, n, 0, 1, 0, NULL, NULL, NULL, 0);
	fin[2] = submit(t, n, 0, 2, 0, NULL, NULL, NULL, 0);
	fin[3] = submit(t, l, 1, 3, 0, NULL, NULL, NULL, 0);
	fin[4] = submit(t, h, 2, 4, 0, NULL, NULL, NULL, 0);
	fin[5] = submit(t, k, 3, 5, 0, NULL, NULL, NULL, 0);
	event_set(&gate);
	for (int i = 0; i < 6; i++)
		fence_wait_status(fin[i], 1);
	assert_int_equal(cbt_ran(t), 6);
	assert_memory_equal(t->order, want, sizeof(want));
	ttm_sched_entity_destroy(k, 0);
	ttm_sched_entity_destroy(h, 0);
	ttm_sched_entity_destroy(l, 0);
	ttm_sched_entity_destroy(n, 0);
	ttm_sched_destroy(s);
	event_destroy(&gate);
	event_destroy(&started);
	cbt_free(t);
}

/*
 * Destroying an entity whose job runs and three wait: those three are
 * killed without running, and (as the kernel's entity kill) their
 * finished fences signal -ESRCH only after the running one has finished;
 * the scheduler's destroy waits for all of it and joins the workers.
 */
static void test_cb_destroy_queued(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 1);
	struct ttm_sched_entity *e =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct event gate, started;
	struct ttm_fence *fin[4];

	(void)state;
	event_init(&gate);
	event_init(&started);
	fin[0] = submit(t, e, 0, 0, 0, &gate, &started, NULL, 0);
	assert_true(event_wait_for(&started, 10));
	for (int i = 1; i < 4; i++)
		fin[i] = submit(t, e, 0, i, 0, NULL, NULL, NULL, 0);
	ttm_sched_entity_destroy(e, 0);
	for (int i = 0; i < 4; i++)
		assert_false(ttm_fence_is_signaled(fin[i]));
	event_set(&gate);
	fence_wait_status(fin[0], 1);
	for (int i = 1; i < 4; i++)
		fence_wait_status(fin[i], -ESRCH);
	ttm_sched_destroy(s);
	assert_int_equal(cbt_ran(t), 1);
	assert_int_equal(cbt_released(t), 4);
	event_destroy(&gate);
	event_destroy(&started);
	cbt_free(t);
}

/*
 * Dependencies on containers and syncobj points: a fence array (all of
 * its fences), a timeline syncobj's point (a chain node: every point up
 * to it), a binary syncobj's fence, and an array holding a failed fence
 * (the job fails with its error, without running).
 */
static void test_cb_deps_containers(void **state)
{
	struct cbt *t = cbt_new();
	struct ttm_sched *s = cb_new(2, 4);
	struct ttm_sched_entity *a =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *c =
		sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *p1, *p2, *p3, *arr, *bad, *point, *bin;
	struct ttm_fence *fa, *fx, *fy, *fz, *fw, **pair;
	struct ttm_syncobj *timeline, *binary;
	struct event gate, started;

	(void)state;
	event_init(&gate);
	event_init(&started);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &p1),
			 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &p2),
			 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &p3),
			 0);
	fa = submit(t, a, 0, 0, 0, &gate, &started, NULL, 0);

	/* X waits for an array of p1 and A's job. */
	pair = calloc(2, sizeof(*pair));
	assert_non_null(pair);
	pair[0] = ttm_fence_get(p1);
	pair[1] = ttm_fence_get(fa);
	assert_int_equal(ttm_fence_array_create(2, pair,
						ttm_fence_context_alloc(1), 1,
						false, &arr), 0);
	fx = submit(t, b, 1, 1, 0, NULL, NULL, &arr, 1);

	/* Y waits for point 2 of a timeline: p2 at 1, X's job at 2. */
	assert_int_equal(ttm_syncobj_create(0, NULL, &timeline), 0);
	assert_int_equal(ttm_syncobj_add_point(timeline, p2, 1), 0);
	assert_int_equal(ttm_syncobj_add_point(timeline, fx, 2), 0);
	assert_int_equal(ttm_syncobj_find_fence(timeline, 2, &point), 0);
	fy = submit(t, b, 1, 2, 0, NULL, NULL, &point, 1);

	/* W waits for a binary syncobj holding Y's fence. */
	assert_int_equal(ttm_syncobj_create(0, fy, &binary), 0);
	assert_int_equal(ttm_syncobj_find_fence(binary, 0, &bin), 0);
	fw = submit(t, a, 0, 3, 0, NULL, NULL, &bin, 1);

	/* Z (its own entity: b's queue waits) needs a failed array. */
	pair = calloc(1, sizeof(*pair));
	assert_non_null(pair);
	pair[0] = ttm_fence_get(p3);
	assert_int_equal(ttm_fence_array_create(1, pair,
						ttm_fence_context_alloc(1), 1,
						false, &bad), 0);
	assert_int_equal(ttm_fence_signal(p3, -EPIPE), 0);
	fz = submit(t, c, 2, 4, 0, NULL, NULL, &bad, 1);
	fence_wait_status(fz, -EPIPE);

	assert_true(event_wait_for(&started, 10));
	ttm_fence_signal(p1, 0);
	event_set(&gate);
	fence_wait_status(ttm_fence_get(fa), 1);
	/* X ran; Y still waits for point 1 (p2); W for Y. */
	fence_wait_status(ttm_fence_get(fx), 1);
	assert_false(ttm_fence_is_signaled(fy));
	assert_false(ttm_fence_is_signaled(fw));
	ttm_fence_signal(p2, 0);
	fence_wait_status(fw, 1);
	fence_wait_status(fy, 1);
	assert_int_equal(cbt_ran(t), 4);
	assert_int_equal(t->order[0], 0);
	assert_int_equal(t->order[1], 1);
	assert_int_equal(t->order[2], 2);
	assert_int_equal(t->order[3], 3);

	ttm_syncobj_put(binary);
	ttm_syncobj_put(timeline);
	ttm_fence_put(bin);
	ttm_fence_put(point);
	ttm_fence_put(bad);
	ttm_fence_put(arr);
	ttm_fence_put(fa);
	ttm_fence_put(fx);
	ttm_fence_put(p1);
	ttm_fence_put(p2);
	ttm_fence_put(p3);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_entity_destroy(b, 0);
	ttm_sched_entity_destroy(c, 0);
	ttm_sched_destroy(s);
	assert_int_equal(cbt_released(t), 5);
	event_destroy(&gate);
	event_destroy(&started);
	cbt_free(t);
}

/*
 * On a deterministic GPU the functions run inline, in the advancing
 * thread, in order, and only inside ttm_gpu_advance().
 */
static void test_cb_virtual(void **state)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_sched_options opts = { .credit_limit = 2 };
	struct cbt *t = cbt_new();
	struct ttm_sched_entity *e;
	struct ttm_sched *s = NULL;
	struct ttm_fence *fin[3];
	struct ttm_gpu *gpu;
	int ret;

	(void)state;
	assert_int_equal(ttm_gpu_create(1, &gopts, &gpu), 0);
	opts.gpu = gpu;
	ret = ttm_sched_cb_create(&opts, 0, &s);
	assert_int_equal(ret, 0);
	e = sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	for (int i = 0; i < 3; i++)
		fin[i] = submit(t, e, 0, i, i == 1 ? -EIO : 0, NULL, NULL,
				NULL, 0);
	/* The clock has not moved: nothing ran. */
	for (int i = 0; i < 3; i++)
		assert_false(ttm_fence_is_signaled(fin[i]));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	assert_int_equal(ttm_fence_get_status(fin[0]), 1);
	assert_int_equal(ttm_fence_get_status(fin[1]), -EIO);
	assert_int_equal(ttm_fence_get_status(fin[2]), 1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(t->order[i], i);
		ttm_fence_put(fin[i]);
	}
	assert_true(t->ran_in_main);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	ttm_gpu_destroy(gpu);
	assert_int_equal(cbt_released(t), 3);
	cbt_free(t);
}

static struct ttm_fence *other_run_job(struct ttm_sched_job *job)
{
	(void)job;
	return ttm_sched_err_ptr(-EIO);
}

static void other_free_job(struct ttm_sched_job *job)
{
	ttm_sched_job_cleanup(job);
	free(job);
}

static const struct ttm_sched_backend_ops other_ops = {
	.run_job = other_run_job,
	.free_job = other_free_job,
};

static void test_cb_bad_args(void **state)
{
	struct ttm_sched_options opts = { .credit_limit = 1 };
	struct ttm_sched_cb_args args = { .fn = call_fn };
	struct ttm_sched *s = NULL, *other = NULL;
	struct ttm_sched_entity *e;

	(void)state;
	assert_int_equal(ttm_sched_cb_create(&opts, 0, &s), -EINVAL);
	assert_int_equal(ttm_sched_cb_create(&opts, 65, &s), -EINVAL);
	opts.credit_limit = 0;
	assert_int_equal(ttm_sched_cb_create(&opts, 1, &s), -EINVAL);
	opts.credit_limit = 1;
	opts.ops = &other_ops;
	assert_int_equal(ttm_sched_cb_create(&opts, 1, &s), -EINVAL);
	assert_int_equal(ttm_sched_create(&opts, &other), 0);
	e = sched_entity_new(other, TTM_SCHED_PRIORITY_NORMAL);
	/* Not a callback-backend entity: refused, nothing queued. */
	assert_int_equal(ttm_sched_cb_submit(e, &args, NULL), -EINVAL);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(other);
	opts.ops = NULL;
	assert_int_equal(ttm_sched_cb_create(&opts, 1, &s), 0);
	e = sched_entity_new(s, TTM_SCHED_PRIORITY_NORMAL);
	args.fn = NULL;
	assert_int_equal(ttm_sched_cb_submit(e, &args, NULL), -EINVAL);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cb_runs, checks_reset),
		cmocka_unit_test_setup(test_cb_error, checks_reset),
		cmocka_unit_test_setup(test_cb_entity_order, checks_reset),
		cmocka_unit_test_setup(test_cb_parallel, checks_reset),
		cmocka_unit_test_setup(test_cb_entity_serialised, checks_reset),
		cmocka_unit_test_setup(test_cb_priorities, checks_reset),
		cmocka_unit_test_setup(test_cb_destroy_queued, checks_reset),
		cmocka_unit_test_setup(test_cb_deps_containers, checks_reset),
		cmocka_unit_test_setup(test_cb_virtual, checks_reset),
		cmocka_unit_test_setup(test_cb_bad_args, checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
