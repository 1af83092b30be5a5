// SPDX-License-Identifier: MIT
/*
 * The scheduler's fake-GPU backend (ttm_sched_gpu_create(),
 * ttm_sched_gpu_submit()) on a real-time GPU. Order is fixed by the test,
 * never by timing: a "blocker" job submitted straight to the engine waits
 * for a gate fence the test signals, so the jobs behind it stay where the
 * test put them; the test waits on fences or on the GPU's counters.
 */
#include "lib/sched_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"

#define WORDS 16
#define MAX_TRACE 128

/* The tags of retired jobs, in retire order. */
struct trace {
	pthread_mutex_t lock;
	unsigned int n;
	uint64_t tag[MAX_TRACE];
};

static void on_retire(const struct ttm_gpu_job_info *info, void *data)
{
	struct trace *t = data;

	pthread_mutex_lock(&t->lock);
	if (t->n < MAX_TRACE)
		t->tag[t->n] = info->tag;
	t->n++;
	pthread_mutex_unlock(&t->lock);
}

struct fixture {
	struct trace trace;
	struct ttm_gpu *gpu;
	struct ttm_sched *sched;
	struct ttm_sched_entity *entity;
	struct ttm_fence *gate;       /* the blocker's, NULL if none */
	struct ttm_fence *blocker;    /* its out-fence */
};

static struct fixture *fixture_new(unsigned int hang_ms, uint32_t credits)
{
	struct ttm_gpu_options go = { .hang_timeout_ms = hang_ms };
	struct ttm_sched_options so = { .credit_limit = credits };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pthread_mutex_init(&f->trace.lock, NULL);
	go.on_retire = on_retire;
	go.retire_data = &f->trace;
	assert_int_equal(ttm_gpu_create(2, &go, &f->gpu), 0);
	assert_int_equal(ttm_sched_gpu_create(f->gpu, 1, &so, &f->sched), 0);
	assert_int_equal(ttm_sched_entity_create(f->sched,
						 TTM_SCHED_PRIORITY_NORMAL,
						 &f->entity), 0);
	return f;
}

static void fixture_free(struct fixture *f)
{
	ttm_sched_entity_destroy(f->entity, 0);
	ttm_sched_destroy(f->sched);
	ttm_gpu_destroy(f->gpu);
	ttm_fence_put(f->gate);
	ttm_fence_put(f->blocker);
	pthread_mutex_destroy(&f->trace.lock);
	free(f);
}

/* Hold engine 1 with a job of tag 100 waiting for f->gate. */
static void block_engine(struct fixture *f)
{
	struct ttm_gpu_dep dep;
	struct ttm_gpu_job job = {
		.engine = 1, .op = TTM_GPU_OP_NOP, .tag = 100,
		.deps = &dep, .n_deps = 1,
	};

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &f->gate), 0);
	dep = (struct ttm_gpu_dep){ f->gate, false };
	assert_int_equal(ttm_gpu_submit(f->gpu, &job, &f->blocker), 0);
}

static int wait_status(struct ttm_fence *fence)
{
	assert_int_equal(ttm_fence_wait(fence, false, 10000000000LL), 0);
	return fence_status(fence);
}

static struct ttm_gpu *submitted_gpu;
static uint64_t submitted_want;

static bool gpu_submitted(void *arg)
{
	struct ttm_gpu_stats st;

	(void)arg;
	ttm_gpu_get_stats(submitted_gpu, &st);
	return st.submitted >= submitted_want;
}

/* Until @n jobs have reached the GPU (run_job was called for them). */
static void wait_gpu_submitted(struct ttm_gpu *gpu, uint64_t n)
{
	submitted_gpu = gpu;
	submitted_want = n;
	assert_true(wait_until(gpu_submitted, NULL));
}

/* NOP, ADD and COPY run on the engine, in order, with their effects. */
static void test_ops(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	uint32_t a[WORDS] = { 0 }, b[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_range copy[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct ttm_gpu_job nop = { .op = TTM_GPU_OP_NOP, .tag = 1,
				   .engine = 7 /* ignored */ };
	struct ttm_gpu_job add = { .op = TTM_GPU_OP_ADD, .add_value = 5,
				   .ranges = &ra, .n_ranges = 1, .tag = 2 };
	struct ttm_gpu_job cp = { .op = TTM_GPU_OP_COPY, .ranges = copy,
				  .n_ranges = 2, .tag = 3 };
	struct ttm_fence *fn, *fa, *fc;

	(void)state;
	fn = gpu_ring_submit(f->entity, &nop);
	fa = gpu_ring_submit(f->entity, &add);
	/* The ranges were copied: the caller's array may go. */
	copy[0] = (struct ttm_gpu_range){ a, sizeof(a) };
	fc = gpu_ring_submit(f->entity, &cp);
	copy[0] = (struct ttm_gpu_range){ NULL, 0 };
	assert_int_equal(wait_status(fc), 0);
	assert_int_equal(wait_status(fa), 0);
	assert_int_equal(wait_status(fn), 0);
	for (int i = 0; i < WORDS; i++) {
		assert_int_equal(a[i], 5);
		assert_int_equal(b[i], 5);
	}
	/* One entity, one engine: submission order. */
	assert_int_equal(f->trace.n, 3);
	assert_int_equal(f->trace.tag[0], 1);
	assert_int_equal(f->trace.tag[1], 2);
	assert_int_equal(f->trace.tag[2], 3);
	ttm_fence_put(fn);
	ttm_fence_put(fa);
	ttm_fence_put(fc);
	fixture_free(f);
}

/*
 * A dependency that fails: with propagate_error the job fails unrun with
 * its error; without, the job waits for it and runs.
 */
static void test_dep_error(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	uint32_t a[WORDS] = { 0 }, b[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) }, rb = { b, sizeof(b) };
	struct ttm_fence *in, *fa, *fb;
	struct ttm_gpu_dep da, db;
	struct ttm_gpu_job ja = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				  .ranges = &ra, .n_ranges = 1,
				  .deps = &da, .n_deps = 1 };
	struct ttm_gpu_job jb = { .op = TTM_GPU_OP_ADD, .add_value = 2,
				  .ranges = &rb, .n_ranges = 1,
				  .deps = &db, .n_deps = 1 };

	(void)state;
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &in),
			 0);
	da = (struct ttm_gpu_dep){ in, true };
	db = (struct ttm_gpu_dep){ in, false };
	fa = gpu_ring_submit(f->entity, &ja);
	fb = gpu_ring_submit(f->entity, &jb);
	/* Nothing runs before the dependency. */
	assert_false(ttm_fence_is_signaled(fa));
	assert_false(ttm_fence_is_signaled(fb));
	ttm_fence_signal(in, -EIO);
	assert_int_equal(wait_status(fa), -EIO);
	assert_int_equal(wait_status(fb), 0);
	for (int i = 0; i < WORDS; i++) {
		assert_int_equal(a[i], 0);   /* never ran */
		assert_int_equal(b[i], 2);
	}
	ttm_fence_put(in);
	ttm_fence_put(fa);
	ttm_fence_put(fb);
	fixture_free(f);
}

/*
 * Two fences of one context, both failing: a job fails with the error of
 * each it was added to fail on, the earlier one's included (the later
 * does not carry it), and not with an ordering one's. Unknown flags are
 * refused.
 */
static void test_dep_same_context(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	uint64_t ctx = ttm_fence_context_alloc(1);
	struct ttm_fence *f1, *f2, *fa, *fb, *fc;
	struct ttm_gpu_dep deps[2];
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_NOP, .deps = deps,
				   .n_deps = 2 };
	struct ttm_sched_job sj;

	(void)state;
	assert_int_equal(ttm_fence_create(ctx, 1, &f1), 0);
	assert_int_equal(ttm_fence_create(ctx, 2, &f2), 0);
	deps[0] = (struct ttm_gpu_dep){ f1, true };
	deps[1] = (struct ttm_gpu_dep){ f2, false };
	fa = gpu_ring_submit(f->entity, &job);
	deps[0].propagate_error = false;
	fb = gpu_ring_submit(f->entity, &job);
	deps[1].propagate_error = true;
	fc = gpu_ring_submit(f->entity, &job);
	ttm_fence_signal(f1, -EIO);
	assert_false(ttm_fence_is_signaled(fa));   /* waits for the later */
	assert_false(ttm_fence_is_signaled(fb));
	assert_false(ttm_fence_is_signaled(fc));
	ttm_fence_signal(f2, -EINVAL);
	assert_int_equal(wait_status(fa), -EIO);
	assert_int_equal(wait_status(fb), 0);
	assert_int_equal(wait_status(fc), -EINVAL);
	assert_int_equal(ttm_sched_job_init(&sj, f->entity, 1), 0);
	assert_int_equal(ttm_sched_job_add_dependency_flags(
				 &sj, ttm_fence_get(f1), 1u << 5), -EINVAL);
	ttm_sched_job_cleanup(&sj);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
	ttm_fence_put(fa);
	ttm_fence_put(fb);
	ttm_fence_put(fc);
	fixture_free(f);
}

/*
 * A job whose dependency has not signalled waits in its entity; a ready
 * job pushed after it must not pass it by starting at once in the
 * submitter (the direct path of an idle ring): the entity's order holds.
 */
static void test_direct_after_queued(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	struct ttm_fence *gate, *fa, *fb;
	struct ttm_gpu_dep dep;
	struct ttm_gpu_job ja = { .op = TTM_GPU_OP_NOP, .tag = 1,
				  .deps = &dep, .n_deps = 1 };
	struct ttm_gpu_job jb = { .op = TTM_GPU_OP_NOP, .tag = 2 };

	(void)state;
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &gate), 0);
	dep = (struct ttm_gpu_dep){ gate, false };
	fa = gpu_ring_submit(f->entity, &ja);
	fb = gpu_ring_submit(f->entity, &jb);
	ttm_fence_signal(gate, 0);
	assert_int_equal(wait_status(fb), 0);
	assert_int_equal(wait_status(fa), 0);
	pthread_mutex_lock(&f->trace.lock);
	assert_int_equal(f->trace.n, 2);
	assert_int_equal(f->trace.tag[0], 1);
	assert_int_equal(f->trace.tag[1], 2);
	pthread_mutex_unlock(&f->trace.lock);
	/* And once idle again, a ready job still goes (direct) and ends. */
	ttm_fence_put(fb);
	fb = gpu_ring_submit(f->entity, &jb);
	assert_int_equal(wait_status(fb), 0);
	ttm_fence_put(gate);
	ttm_fence_put(fa);
	ttm_fence_put(fb);
	fixture_free(f);
}

/* Two submitters, an entity each, one ring: each entity's jobs in order. */
#define RACE_JOBS 60

struct racer {
	struct ttm_sched_entity *entity;
	pthread_barrier_t *start;
	uint64_t tag_base;
	struct ttm_fence *last;
};

static void *race_submit(void *arg)
{
	struct racer *r = arg;
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_NOP };

	pthread_barrier_wait(r->start);
	for (unsigned int i = 0; i < RACE_JOBS; i++) {
		job.tag = r->tag_base + i;
		ttm_fence_put(r->last);
		r->last = gpu_ring_submit(r->entity, &job);
	}
	return NULL;
}

static void test_direct_two_submitters(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	struct racer r[2] = { { .tag_base = 1000 }, { .tag_base = 2000 } };
	uint64_t next[2] = { 1000, 2000 };
	pthread_barrier_t start;
	pthread_t t[2];

	(void)state;
	pthread_barrier_init(&start, NULL, 2);
	r[0].entity = f->entity;
	assert_int_equal(ttm_sched_entity_create(f->sched,
						 TTM_SCHED_PRIORITY_NORMAL,
						 &r[1].entity), 0);
	for (int i = 0; i < 2; i++) {
		r[i].start = &start;
		assert_int_equal(pthread_create(&t[i], NULL, race_submit,
						&r[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(wait_status(r[i].last), 0);
		ttm_fence_put(r[i].last);
	}
	pthread_mutex_lock(&f->trace.lock);
	assert_int_equal(f->trace.n, 2 * RACE_JOBS);
	for (unsigned int i = 0; i < 2 * RACE_JOBS; i++) {
		int k = f->trace.tag[i] >= 2000;

		assert_int_equal(f->trace.tag[i], next[k]);
		next[k]++;
	}
	pthread_mutex_unlock(&f->trace.lock);
	ttm_sched_entity_destroy(r[1].entity, 0);
	pthread_barrier_destroy(&start);
	fixture_free(f);
}

/*
 * Two submitters, one entity: ttm_sched_gpu_submit() may be called from
 * any thread, and the seqnos of the entity's finished fences follow the
 * order its jobs reach the engine (arm and push are one step).
 */
struct seq_racer {
	struct ttm_sched_entity *entity;
	pthread_barrier_t *start;
	uint64_t tag_base;
	struct ttm_fence *fence[RACE_JOBS];
};

static void *seq_race_submit(void *arg)
{
	struct seq_racer *r = arg;
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_NOP };

	pthread_barrier_wait(r->start);
	for (unsigned int i = 0; i < RACE_JOBS; i++) {
		job.tag = r->tag_base + i;
		r->fence[i] = gpu_ring_submit(r->entity, &job);
	}
	return NULL;
}

static void test_one_entity_two_submitters(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	struct seq_racer r[2] = { { .tag_base = 1000 }, { .tag_base = 2000 } };
	uint64_t last = 0, seqno;
	pthread_barrier_t start;
	pthread_t t[2];

	(void)state;
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		r[i].entity = f->entity;
		r[i].start = &start;
		assert_int_equal(pthread_create(&t[i], NULL, seq_race_submit,
						&r[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		for (unsigned int j = 0; j < RACE_JOBS; j++)
			assert_int_equal(wait_status(r[i].fence[j]), 0);
	pthread_mutex_lock(&f->trace.lock);
	assert_int_equal(f->trace.n, 2 * RACE_JOBS);
	for (unsigned int i = 0; i < 2 * RACE_JOBS; i++) {
		int k = f->trace.tag[i] >= 2000;

		seqno = ttm_fence_seqno(r[k].fence[f->trace.tag[i] -
						   r[k].tag_base]);
		assert_true(seqno > last);
		last = seqno;
	}
	pthread_mutex_unlock(&f->trace.lock);
	for (int i = 0; i < 2; i++)
		for (unsigned int j = 0; j < RACE_JOBS; j++)
			ttm_fence_put(r[i].fence[j]);
	pthread_barrier_destroy(&start);
	fixture_free(f);
}

/*
 * Credit limit 1: one job on the engine at a time. While it waits behind
 * the blocker, three NORMAL jobs and then a HIGH one queue up: the HIGH
 * one runs next, before the NORMAL ones queued earlier.
 */
static void test_priority_overtakes(void **state)
{
	struct fixture *f = fixture_new(0, 1);
	struct ttm_sched_entity *high;
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_NOP };
	struct ttm_fence *fences[5];
	static const uint64_t want[] = { 100, 1, 9, 2, 3, 4 };

	(void)state;
	assert_int_equal(ttm_sched_entity_create(f->sched,
						 TTM_SCHED_PRIORITY_HIGH,
						 &high), 0);
	block_engine(f);
	job.tag = 1;
	fences[0] = gpu_ring_submit(f->entity, &job);
	/* Job 1 holds the only credit, behind the blocker. */
	wait_gpu_submitted(f->gpu, 2);
	for (int i = 2; i <= 4; i++) {
		job.tag = (uint64_t)i;
		fences[i - 1] = gpu_ring_submit(f->entity, &job);
	}
	job.tag = 9;
	fences[4] = gpu_ring_submit(high, &job);
	ttm_fence_signal(f->gate, 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(wait_status(fences[i]), 0);
		ttm_fence_put(fences[i]);
	}
	assert_int_equal(f->trace.n, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(f->trace.tag[i], want[i]);
	ttm_sched_entity_destroy(high, 0);
	fixture_free(f);
}

/*
 * A hanging job: the scheduler's timeout (the GPU's hang timeout) comes
 * and goes, the GPU's watchdog fails it: the finished fence carries
 * -ETIMEDOUT, and the next job runs normally.
 */
static void test_hang_timeout(void **state)
{
	struct fixture *f = fixture_new(20, 0);
	uint32_t a[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_job hang = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				    .ranges = &ra, .n_ranges = 1,
				    .hang = true };
	struct ttm_gpu_job next = { .op = TTM_GPU_OP_ADD, .add_value = 2,
				    .ranges = &ra, .n_ranges = 1 };
	struct ttm_gpu_stats st;
	struct ttm_fence *fh, *fn;

	(void)state;
	fh = gpu_ring_submit(f->entity, &hang);
	fn = gpu_ring_submit(f->entity, &next);
	assert_int_equal(wait_status(fh), -ETIMEDOUT);
	assert_int_equal(wait_status(fn), 0);
	for (int i = 0; i < WORDS; i++)
		assert_int_equal(a[i], 2);
	ttm_gpu_get_stats(f->gpu, &st);
	assert_int_equal(st.resets, 1);
	ttm_fence_put(fh);
	ttm_fence_put(fn);
	fixture_free(f);
}

/*
 * Entity destroyed with jobs queued: the one on the engine finishes, the
 * queued ones are killed (-ESRCH, signalled after it, as the kernel
 * does) without reaching the GPU; then the scheduler is destroyed once
 * the engine is done.
 */
static void test_destroy_queued(void **state)
{
	struct fixture *f = fixture_new(0, 1);
	uint32_t a[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				   .ranges = &ra, .n_ranges = 1 };
	struct ttm_fence *fences[3];
	struct ttm_gpu_stats st;

	(void)state;
	block_engine(f);
	for (int i = 0; i < 3; i++)
		fences[i] = gpu_ring_submit(f->entity, &job);
	wait_gpu_submitted(f->gpu, 2);
	ttm_sched_entity_destroy(f->entity, 0);
	f->entity = NULL;
	/* Killed, but signalled in order: after the job on the engine. */
	assert_false(ttm_fence_is_signaled(fences[0]));
	assert_false(ttm_fence_is_signaled(fences[1]));
	ttm_fence_signal(f->gate, 0);
	assert_int_equal(wait_status(fences[0]), 0);
	assert_int_equal(wait_status(fences[1]), -ESRCH);
	assert_int_equal(wait_status(fences[2]), -ESRCH);
	ttm_sched_destroy(f->sched);
	f->sched = NULL;
	ttm_gpu_get_stats(f->gpu, &st);
	assert_int_equal(st.submitted, 2);  /* the blocker and one job */
	for (int i = 0; i < WORDS; i++)
		assert_int_equal(a[i], 1);
	for (int i = 0; i < 3; i++)
		ttm_fence_put(fences[i]);
	fixture_free(f);
}

/* The scheduler's thread and the engines meet no problem when
 * ttm_sched_destroy() waits for jobs still on the engine. */
static void test_destroy_waits(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_NOP,
				   .duration_us = 1000 };
	struct ttm_fence *fences[8];

	(void)state;
	for (int i = 0; i < 8; i++)
		fences[i] = gpu_ring_submit(f->entity, &job);
	ttm_sched_entity_destroy(f->entity, UINT64_MAX);
	f->entity = NULL;
	ttm_sched_destroy(f->sched);
	f->sched = NULL;
	for (int i = 0; i < 8; i++) {
		assert_int_equal(fence_status(fences[i]), 0);
		ttm_fence_put(fences[i]);
	}
	fixture_free(f);
}

static struct ttm_fence *dummy_run_job(struct ttm_sched_job *job)
{
	(void)job;
	return ttm_sched_err_ptr(-EIO);
}

static void dummy_free_job(struct ttm_sched_job *job)
{
	(void)job;
}

static void test_bad_args(void **state)
{
	static const struct ttm_sched_backend_ops ops = {
		.run_job = dummy_run_job, .free_job = dummy_free_job,
	};
	struct ttm_sched_options so = { .ops = &ops, .credit_limit = 1 };
	struct fixture *f = fixture_new(0, 0);
	struct ttm_gpu_job job = { .op = TTM_GPU_OP_COPY, .n_ranges = 1 };
	struct ttm_gpu_dep dep = { NULL, true };
	struct ttm_sched_entity *other_e;
	struct ttm_sched *s, *other;
	struct ttm_gpu *gpu2;

	(void)state;
	assert_int_equal(ttm_sched_gpu_create(f->gpu, 2, NULL, &s), -EINVAL);
	assert_int_equal(ttm_sched_gpu_create(f->gpu, 0, &so, &s), -EINVAL);
	assert_int_equal(ttm_gpu_create(1, NULL, &gpu2), 0);
	so.ops = NULL;
	so.gpu = gpu2;
	assert_int_equal(ttm_sched_gpu_create(f->gpu, 0, &so, &s), -EINVAL);
	ttm_gpu_destroy(gpu2);
	/* Bad jobs are refused at submission, as by ttm_gpu_submit(). */
	assert_int_equal(ttm_sched_gpu_submit(f->entity, &job, NULL),
			 -EINVAL);
	job = (struct ttm_gpu_job){ .op = TTM_GPU_OP_NOP, .deps = &dep,
				    .n_deps = 1 };
	assert_int_equal(ttm_sched_gpu_submit(f->entity, &job, NULL),
			 -EINVAL);
	/* An entity of another backend. */
	so = (struct ttm_sched_options){ .ops = &ops, .credit_limit = 1 };
	assert_int_equal(ttm_sched_create(&so, &other), 0);
	assert_int_equal(ttm_sched_entity_create(other,
						 TTM_SCHED_PRIORITY_LOW,
						 &other_e), 0);
	job.n_deps = 0;
	assert_int_equal(ttm_sched_gpu_submit(other_e, &job, NULL), -EINVAL);
	ttm_sched_entity_destroy(other_e, 0);
	ttm_sched_destroy(other);
	/* Defaults: a NULL options works, and a NULL out-fence. */
	assert_int_equal(ttm_sched_gpu_create(f->gpu, 0, NULL, &s), 0);
	ttm_sched_destroy(s);
	assert_int_equal(ttm_sched_gpu_submit(f->entity, &job, NULL), 0);
	fixture_free(f);
}

/* ---- the virtual clock ------------------------------------------------ */

/*
 * On a deterministic GPU nothing reaches the engine before the next
 * ttm_gpu_advance(), where the scheduler steps: then jobs run at exact
 * times. A hang is failed by the GPU's watchdog at start + hang timeout
 * exactly (the scheduler's own timeout, the same length from run_job,
 * only answers NO_HANG), and the next job starts right then.
 */
static void test_virtual(void **state)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC,
				      .hang_timeout_ms = 1 };
	uint32_t a[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_job add = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				   .ranges = &ra, .n_ranges = 1,
				   .duration_us = 10 };
	struct ttm_gpu_job hang = { .op = TTM_GPU_OP_NOP, .hang = true };
	struct ttm_sched_entity *e;
	struct ttm_fence *fa, *fh, *fb;
	struct ttm_gpu_stats st;
	struct ttm_sched *s;
	struct ttm_gpu *gpu;

	(void)state;
	assert_int_equal(ttm_gpu_create(1, &go, &gpu), 0);
	gpu_ring_new(gpu, 0, &s, &e);
	fa = gpu_ring_submit(e, &add);
	fh = gpu_ring_submit(e, &hang);
	add.add_value = 2;
	add.duration_us = 5;
	fb = gpu_ring_submit(e, &add);
	ttm_gpu_get_stats(gpu, &st);
	assert_int_equal(st.submitted, 0);      /* queued in the entity */
	assert_int_equal(ttm_gpu_advance(gpu, 9), 0);
	assert_false(ttm_fence_is_signaled(fa));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);         /* t = 10 */
	assert_int_equal(fence_status(fa), 0);
	assert_int_equal(a[0], 1);
	assert_int_equal(ttm_gpu_advance(gpu, 999), 0);       /* t = 1009 */
	assert_false(ttm_fence_is_signaled(fh));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);         /* t = 1010 */
	assert_int_equal(fence_status(fh), -ETIMEDOUT);
	assert_int_equal(ttm_gpu_advance(gpu, 4), 0);
	assert_false(ttm_fence_is_signaled(fb));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);         /* t = 1015 */
	assert_int_equal(fence_status(fb), 0);
	assert_int_equal(a[WORDS - 1], 3);
	gpu_ring_free(s, e);
	ttm_gpu_destroy(gpu);
	ttm_fence_put(fa);
	ttm_fence_put(fh);
	ttm_fence_put(fb);
}

/* Jobs run while a fence's memory must stay its own. */
#define RECYCLE_JOBS 80

/* Submit and run one 1 us job on @e; return its finished fence. */
static struct ttm_fence *virtual_job(struct ttm_gpu *gpu,
				     struct ttm_sched_entity *e)
{
	struct ttm_gpu_job nop = { .op = TTM_GPU_OP_NOP, .duration_us = 1 };
	struct ttm_fence *f = gpu_ring_submit(e, &nop);

	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	assert_int_equal(fence_status(f), 0);
	return f;
}

/*
 * A job's fences come from a per-thread cache (gpu_sim/obj_cache.h) and
 * go back to it at their release op, the end of their grace period: the
 * memory of a fence is never another job's while a reference is held,
 * nor while a lockless reader that was in its section when the last
 * reference went is still in it. Once both are over, it is (the cache is
 * a LIFO, and every job frees as many blocks as it takes).
 */
static void test_virtual_fence_recycle(void **state)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_sched_entity *e;
	struct ttm_fence *f1, *f, *held[RECYCLE_JOBS];
	struct ttm_sched *s;
	struct ttm_gpu *gpu;
	bool reused = false;
	unsigned int i;

	(void)state;
	assert_int_equal(ttm_gpu_create(1, &go, &gpu), 0);
	gpu_ring_new(gpu, 0, &s, &e);
	f1 = virtual_job(gpu, e);
	/* Held: signalled, its job freed, its memory still its own. */
	for (i = 0; i < RECYCLE_JOBS; i++) {
		f = virtual_job(gpu, e);
		assert_ptr_not_equal(f, f1);
		ttm_fence_put(f);
	}
	/*
	 * Its last reference goes inside a read-side section: released
	 * early, it would be the cache's top, the next job's.
	 */
	ttm_fence_read_lock();
	ttm_fence_put(f1);
	for (i = 0; i < 4; i++) {
		f = virtual_job(gpu, e);
		assert_ptr_not_equal(f, f1);
		ttm_fence_put(f);
	}
	ttm_fence_read_unlock();
	/*
	 * Grace period over (ended by the next retirement): a later job's
	 * fence takes the memory. The later ones are kept, so that the
	 * blocks freed after f1's, on top of it, are taken first. f1 is
	 * only an address now, never dereferenced.
	 */
	for (i = 0; i < RECYCLE_JOBS && !reused; i++) {
		held[i] = virtual_job(gpu, e);
		reused = held[i] == f1;
	}
	while (i)
		ttm_fence_put(held[--i]);
	assert_true(reused);
	gpu_ring_free(s, e);
	ttm_gpu_destroy(gpu);
}

/*
 * An ordering dependency on a job of the same ring only waits for that
 * job to be on the ring (its scheduled fence): the engine runs it first
 * anyway. B, behind A on ring 0, reaches the engine with A, before A
 * finishes, and still runs after it (reads what A wrote). C, on ring 1,
 * also reaches its engine once A is on ring 0 (a cross-ring ordering
 * dependency: engine 1 itself waits for A's finished fence), and runs
 * when A has ended.
 */
static void test_virtual_same_ring_dep(void **state)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC };
	uint32_t a[WORDS] = { 0 }, c[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_range rcopy[2] = { { a, sizeof(a) },
					  { c, sizeof(c) } };
	struct ttm_gpu_dep dep;
	struct ttm_gpu_job ja = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				  .ranges = &ra, .n_ranges = 1,
				  .duration_us = 10 };
	struct ttm_gpu_job jb = { .op = TTM_GPU_OP_ADD, .add_value = 2,
				  .ranges = &ra, .n_ranges = 1,
				  .duration_us = 5, .deps = &dep, .n_deps = 1 };
	struct ttm_gpu_job jc = { .op = TTM_GPU_OP_COPY, .ranges = rcopy,
				  .n_ranges = 2, .deps = &dep, .n_deps = 1 };
	struct ttm_sched_entity *e0, *e1;
	struct ttm_sched *s0, *s1;
	struct ttm_fence *fa, *fb, *fc, *fd;
	struct ttm_gpu *gpu;

	(void)state;
	assert_int_equal(ttm_gpu_create(2, &go, &gpu), 0);
	gpu_ring_new(gpu, 0, &s0, &e0);
	gpu_ring_new(gpu, 1, &s1, &e1);
	fa = gpu_ring_submit(e0, &ja);
	dep = (struct ttm_gpu_dep){ fa, false };
	fb = gpu_ring_submit(e0, &jb);
	fc = gpu_ring_submit(e1, &jc);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	/* A and B on engine 0; C on engine 1, waiting there for A's end. */
	assert_int_equal(gpu_submitted_now(gpu), 3);
	assert_false(ttm_fence_is_signaled(fa));
	assert_false(ttm_fence_is_signaled(fb));
	assert_int_equal(ttm_gpu_advance(gpu, 9), 0);          /* t = 9 */
	assert_false(ttm_fence_is_signaled(fa));
	assert_false(ttm_fence_is_signaled(fc));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);          /* t = 10 */
	assert_int_equal(fence_status(fa), 0);
	assert_false(ttm_fence_is_signaled(fb));
	assert_int_equal(fence_status(fc), 0);
	assert_int_equal(c[0], 1);       /* A's result, not B's */
	assert_int_equal(ttm_gpu_advance(gpu, 5), 0);          /* t = 15 */
	assert_int_equal(fence_status(fb), 0);
	assert_int_equal(a[WORDS - 1], 3);
	/*
	 * A is freed now, and so is its scheduled fence (only its finished
	 * fence, ours, holds the memory): D's dependency on it must not
	 * bring that fence back (a second release would free fa under us;
	 * ASan sees it).
	 */
	fd = gpu_ring_submit(e0, &jb);
	assert_int_equal(ttm_gpu_advance(gpu, 5), 0);          /* t = 20 */
	assert_int_equal(fence_status(fd), 0);
	assert_int_equal(a[0], 5);
	ttm_fence_put(fd);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	assert_int_equal(fence_status(fa), 0);
	gpu_ring_free(s0, e0);
	gpu_ring_free(s1, e1);
	ttm_gpu_destroy(gpu);
	ttm_fence_put(fa);
	ttm_fence_put(fb);
	ttm_fence_put(fc);
}

/*
 * Errors: a dependency that must fail the job (propagate_error) still
 * waits for the finished fence on the same ring, so its job fails unrun
 * with the error; an ordering one is on the ring early and runs after
 * the failed job, unharmed. H hangs (watchdog at 1 ms): O (ordering on
 * H) reaches the engine with H and runs after the reset; P (failing on
 * H) never reaches the engine and fails with -ETIMEDOUT.
 */
static void test_virtual_same_ring_dep_error(void **state)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC,
				      .hang_timeout_ms = 1 };
	uint32_t o[WORDS] = { 0 }, p[WORDS] = { 0 };
	struct ttm_gpu_range ro = { o, sizeof(o) }, rp = { p, sizeof(p) };
	struct ttm_gpu_dep dep_o, dep_p;
	struct ttm_gpu_job hang = { .op = TTM_GPU_OP_NOP, .hang = true };
	struct ttm_gpu_job jo = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				  .ranges = &ro, .n_ranges = 1,
				  .deps = &dep_o, .n_deps = 1 };
	struct ttm_gpu_job jp = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				  .ranges = &rp, .n_ranges = 1,
				  .deps = &dep_p, .n_deps = 1 };
	struct ttm_sched_entity *e;
	struct ttm_fence *fh, *fo, *fp;
	struct ttm_sched *s;
	struct ttm_gpu *gpu;

	(void)state;
	assert_int_equal(ttm_gpu_create(1, &go, &gpu), 0);
	gpu_ring_new(gpu, 0, &s, &e);
	fh = gpu_ring_submit(e, &hang);
	dep_o = (struct ttm_gpu_dep){ fh, false };
	dep_p = (struct ttm_gpu_dep){ fh, true };
	fo = gpu_ring_submit(e, &jo);
	fp = gpu_ring_submit(e, &jp);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	assert_int_equal(gpu_submitted_now(gpu), 2);         /* H and O */
	assert_int_equal(ttm_gpu_advance(gpu, 999), 0);      /* t = 999 */
	assert_false(ttm_fence_is_signaled(fh));
	assert_false(ttm_fence_is_signaled(fo));
	assert_false(ttm_fence_is_signaled(fp));
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);        /* t = 1000 */
	assert_int_equal(fence_status(fh), -ETIMEDOUT);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	assert_int_equal(fence_status(fo), 0);
	assert_int_equal(fence_status(fp), -ETIMEDOUT);
	assert_int_equal(gpu_submitted_now(gpu), 2);         /* P never */
	for (int i = 0; i < WORDS; i++) {
		assert_int_equal(o[i], 1);
		assert_int_equal(p[i], 0);
	}
	gpu_ring_free(s, e);
	ttm_gpu_destroy(gpu);
	ttm_fence_put(fh);
	ttm_fence_put(fo);
	ttm_fence_put(fp);
}

/* ---- execbuf on the device's schedulers ------------------------------ */

static const struct ttm_placement gtt = TTM_PLACEMENT_GTT_INIT;

struct dev_fixture {
	struct fixture *f;            /* its GPU, trace and blocker */
	struct ttm_device *dev;
};

static void dev_fixture_init(struct dev_fixture *d)
{
	struct ttm_device_options opts = { 0 };

	d->f = fixture_new(0, 0);
	opts.gpu = d->f->gpu;
	assert_int_equal(ttm_device_create(&opts, &d->dev), 0);
	assert_non_null(ttm_device_sched(d->dev, 0));
	assert_non_null(ttm_device_sched(d->dev, 1));
	assert_null(ttm_device_sched(d->dev, 2));
}

static void dev_fixture_fini(struct dev_fixture *d)
{
	assert_int_equal(ttm_device_destroy(d->dev), 0);
	fixture_free(d->f);
}

/* A NOP of @client on engine 1 reading @handle: no implicit dependency. */
static struct ttm_fence *client_nop(struct ttm_client *client,
				    uint32_t handle, uint64_t tag,
				    struct ttm_fence *in)
{
	struct ttm_execbuf_bo bo = { handle, TTM_EXECBUF_BO_READ, &gtt };
	struct ttm_execbuf_args args = {
		.engine = 1, .bos = &bo, .n_bos = 1, .op = TTM_GPU_OP_NOP,
		.tag = tag, .in_fences = &in, .n_in_fences = in ? 1 : 0,
	};

	assert_int_equal(ttm_execbuf_submit(client, &args), 0);
	return args.out_fence;
}

/*
 * Two NORMAL clients on engine 1, held by the blocker, fill the ring's 64
 * credits (the backend's default limit): A 63 jobs, then B one, so that
 * A's turn comes next. A queues two more, B one; then B is made HIGH: its
 * queued job moves with its entity and is the first to get a freed
 * credit, ahead of A's (round-robin alone would pick A's).
 */
static void test_client_priority(void **state)
{
	struct dev_fixture d;
	struct ttm_client *a, *b;
	struct ttm_fence *fences[67];
	uint32_t ha, hb;
	unsigned int n = 0, i;

	(void)state;
	dev_fixture_init(&d);
	assert_int_equal(ttm_client_open(d.dev, &a), 0);
	assert_int_equal(ttm_client_open(d.dev, &b), 0);
	assert_int_equal(ttm_client_bo_create(a, 4096, &gtt, 0, &ha), 0);
	assert_int_equal(ttm_client_bo_create(b, 4096, &gtt, 0, &hb), 0);
	block_engine(d.f);
	for (i = 1; i <= 63; i++)
		fences[n++] = client_nop(a, ha, i, NULL);
	wait_gpu_submitted(d.f->gpu, 64);
	fences[n++] = client_nop(b, hb, 80, NULL);
	wait_gpu_submitted(d.f->gpu, 65);
	fences[n++] = client_nop(a, ha, 65, NULL);
	fences[n++] = client_nop(a, ha, 66, NULL);
	fences[n++] = client_nop(b, hb, 99, NULL);
	assert_int_equal(ttm_client_set_priority(b, TTM_SCHED_PRIORITY_COUNT),
			 -EINVAL);
	assert_int_equal(ttm_client_set_priority(b, TTM_SCHED_PRIORITY_HIGH),
			 0);
	ttm_fence_signal(d.f->gate, 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(wait_status(fences[i]), 0);
		ttm_fence_put(fences[i]);
	}
	assert_int_equal(d.f->trace.n, 68);
	assert_int_equal(d.f->trace.tag[0], 100);
	for (i = 1; i <= 63; i++)
		assert_int_equal(d.f->trace.tag[i], i);
	assert_int_equal(d.f->trace.tag[64], 80);
	assert_int_equal(d.f->trace.tag[65], 99);
	assert_int_equal(d.f->trace.tag[66], 65);
	assert_int_equal(d.f->trace.tag[67], 66);
	ttm_client_close(a);
	ttm_client_close(b);
	dev_fixture_fini(&d);
}

/*
 * A client closed with a job still waiting for its in-fence: after the
 * flush (a second, as the kernel's) the job is killed: -ESRCH, never on
 * the GPU, counted as failed. The in-fence signalling later changes
 * nothing.
 */
static void test_client_close_kills(void **state)
{
	struct dev_fixture d;
	struct ttm_execbuf_stats st;
	struct ttm_gpu_stats gs;
	struct ttm_client *a;
	struct ttm_fence *in, *out;
	uint32_t ha;

	(void)state;
	dev_fixture_init(&d);
	assert_int_equal(ttm_client_open(d.dev, &a), 0);
	assert_int_equal(ttm_client_bo_create(a, 4096, &gtt, 0, &ha), 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &in),
			 0);
	out = client_nop(a, ha, 1, in);
	assert_false(ttm_fence_is_signaled(out));
	ttm_client_close(a);
	assert_int_equal(fence_status(out), -ESRCH);
	ttm_fence_signal(in, 0);
	ttm_gpu_get_stats(d.f->gpu, &gs);
	assert_int_equal(gs.submitted, 0);
	ttm_execbuf_get_stats(d.dev, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.in_flight, 0);
	ttm_fence_put(in);
	ttm_fence_put(out);
	dev_fixture_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_dep_error),
		cmocka_unit_test(test_dep_same_context),
		cmocka_unit_test(test_direct_after_queued),
		cmocka_unit_test(test_direct_two_submitters),
		cmocka_unit_test(test_one_entity_two_submitters),
		cmocka_unit_test(test_priority_overtakes),
		cmocka_unit_test(test_hang_timeout),
		cmocka_unit_test(test_destroy_queued),
		cmocka_unit_test(test_destroy_waits),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_virtual),
		cmocka_unit_test(test_virtual_fence_recycle),
		cmocka_unit_test(test_virtual_same_ring_dep),
		cmocka_unit_test(test_virtual_same_ring_dep_error),
		cmocka_unit_test(test_client_priority),
		cmocka_unit_test(test_client_close_kills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
