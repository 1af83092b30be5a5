// SPDX-License-Identifier: MIT
/*
 * The fake GPU (ttmsim/gpu.h). Everything about timing and order runs on
 * the virtual clock (TTM_GPU_DETERMINISTIC), so no test sleeps: the clock
 * moves only in ttm_gpu_advance(). Real time gets smoke tests that wait on
 * fences.
 */
#include <dirent.h>

#include "lib/helpers.h"

#include "gpu_sim/gpu.h" /* the engines' sleeper counts */

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"

#define MAX_TRACE 4096

/* What the retire hook saw, in order. */
struct trace {
	pthread_mutex_t lock;
	unsigned int n;
	struct ttm_gpu_job_info info[MAX_TRACE];
};

static void on_retire(const struct ttm_gpu_job_info *info, void *data)
{
	struct trace *t = data;

	pthread_mutex_lock(&t->lock);
	if (t->n < MAX_TRACE)
		t->info[t->n] = *info;
	t->n++;
	pthread_mutex_unlock(&t->lock);
}

static struct trace *trace_new(void)
{
	struct trace *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

static void trace_free(struct trace *t)
{
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static struct ttm_gpu *gpu_new(unsigned int engines, unsigned int flags,
			       unsigned int hang_ms, struct trace *t)
{
	struct ttm_gpu_options opts = {
		.flags = flags,
		.hang_timeout_ms = hang_ms,
		.on_retire = t ? on_retire : NULL,
		.retire_data = t,
	};
	struct ttm_gpu *gpu = NULL;

	assert_int_equal(ttm_gpu_create(engines, &opts, &gpu), 0);
	assert_non_null(gpu);
	return gpu;
}

static struct ttm_gpu *vgpu(unsigned int engines, struct trace *t)
{
	return gpu_new(engines, TTM_GPU_DETERMINISTIC, 0, t);
}

/* Submit an ADD of @value to @words[0..n) on @engine, taking @us. */
static struct ttm_fence *submit_add(struct ttm_gpu *gpu, unsigned int engine,
				    uint64_t us, uint32_t *words, size_t n,
				    uint32_t value,
				    const struct ttm_gpu_dep *deps,
				    unsigned int n_deps)
{
	struct ttm_gpu_range r = { words, n * sizeof(*words) };
	struct ttm_gpu_job job = {
		.engine = engine, .duration_us = us, .op = TTM_GPU_OP_ADD,
		.add_value = value, .ranges = &r, .n_ranges = 1,
		.deps = deps, .n_deps = n_deps, .tag = value,
	};
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), 0);
	assert_non_null(f);
	return f;
}

static struct ttm_fence *submit_nop(struct ttm_gpu *gpu, unsigned int engine,
				    uint64_t us, uint64_t tag)
{
	struct ttm_gpu_job job = {
		.engine = engine, .duration_us = us, .op = TTM_GPU_OP_NOP,
		.tag = tag,
	};
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), 0);
	return f;
}

static struct ttm_fence *hand_fence(void)
{
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	return f;
}

static struct ttm_gpu_stats stats_of(struct ttm_gpu *gpu)
{
	struct ttm_gpu_stats s;

	ttm_gpu_get_stats(gpu, &s);
	return s;
}

/* ---- virtual clock ---------------------------------------------------- */

/* A job waits for a fence signalled by hand; memory moves only then. */
static void test_dep_order(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(1, t);
	struct ttm_fence *in = hand_fence(), *out;
	struct ttm_gpu_dep dep = { in, false };
	uint32_t w[4] = { 1, 2, 3, 4 };

	(void)state;
	out = submit_add(gpu, 0, 10, w, 4, 100, &dep, 1);
	assert_int_equal(ttm_gpu_advance(gpu, 1000), 0);
	assert_false(ttm_fence_is_signaled(out));
	assert_int_equal(w[0], 1);
	assert_int_equal(t->n, 0);

	assert_int_equal(ttm_fence_signal(in, 0), 0);
	assert_int_equal(w[0], 1); /* not at the signal either */
	assert_int_equal(ttm_gpu_advance(gpu, 9), 0);
	assert_false(ttm_fence_is_signaled(out));
	assert_int_equal(w[3], 4);
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	assert_int_equal(ttm_fence_get_status(out), 1);
	assert_int_equal(w[0], 101);
	assert_int_equal(w[3], 104);
	assert_int_equal(t->n, 1);
	assert_int_equal(t->info[0].start_us, 1000);
	assert_int_equal(t->info[0].end_us, 1010);
	assert_int_equal(t->info[0].submit_us, 0);
	assert_int_equal(t->info[0].status, 0);
	assert_int_equal(ttm_gpu_now_us(gpu), 1010);

	ttm_fence_put(out);
	ttm_fence_put(in);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* A long job on engine 0, a short one on engine 1: the later one first. */
static void test_out_of_order(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(2, t);
	struct ttm_fence *a, *b;
	struct ttm_gpu_stats s;

	(void)state;
	a = submit_nop(gpu, 0, 100, 1);
	b = submit_nop(gpu, 1, 10, 2);
	assert_int_equal(ttm_gpu_advance(gpu, 50), 0);
	assert_true(ttm_fence_is_signaled(b));
	assert_false(ttm_fence_is_signaled(a));
	assert_int_equal(ttm_gpu_advance(gpu, 50), 0);
	assert_true(ttm_fence_is_signaled(a));

	assert_int_equal(t->n, 2);
	assert_int_equal(t->info[0].id, 2);
	assert_int_equal(t->info[0].engine, 1);
	assert_int_equal(t->info[0].tag, 2);
	assert_int_equal(t->info[0].end_us, 10);
	assert_int_equal(t->info[1].id, 1);
	assert_int_equal(t->info[1].end_us, 100);
	s = stats_of(gpu);
	assert_int_equal(s.out_of_order_retirements, 1);
	assert_int_equal(s.run, 2);
	assert_int_equal(s.submitted, 2);

	ttm_fence_put(a);
	ttm_fence_put(b);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* One engine: submission order, back to back, seqnos 1, 2, 3. */
static void test_in_order_within_engine(void **state)
{
	static const uint64_t us[3] = { 30, 10, 20 }, end[3] = { 30, 40, 60 };
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(2, t);
	struct ttm_fence *f[3], *other;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++)
		f[i] = submit_nop(gpu, 0, us[i], i);
	other = submit_nop(gpu, 1, 1, 9);
	assert_int_equal(ttm_gpu_advance(gpu, 60), 0);
	assert_int_equal(t->n, 4);
	assert_int_equal(t->info[0].id, 4); /* engine 1's, at 1 us */
	for (i = 0; i < 3; i++) {
		assert_int_equal(t->info[i + 1].id, i + 1);
		assert_int_equal(t->info[i + 1].end_us, end[i]);
		assert_int_equal(t->info[i + 1].start_us, end[i] - us[i]);
		assert_int_equal(ttm_fence_seqno(f[i]), i + 1);
		assert_true(ttm_fence_context(f[i]) ==
			    ttm_fence_context(f[0]));
	}
	assert_true(ttm_fence_context(other) != ttm_fence_context(f[0]));
	assert_int_equal(ttm_fence_seqno(other), 1);
	assert_int_equal(stats_of(gpu).out_of_order_retirements, 1);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
	ttm_fence_put(other);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* A job waiting on another engine's job starts when that one ends. */
static void test_cross_engine_dep(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(2, t);
	struct ttm_fence *a, *b;
	struct ttm_gpu_dep dep;
	uint32_t w = 0;

	(void)state;
	a = submit_nop(gpu, 0, 100, 1);
	dep = (struct ttm_gpu_dep){ a, true };
	b = submit_add(gpu, 1, 10, &w, 1, 1, &dep, 1);
	assert_int_equal(ttm_gpu_advance(gpu, 105), 0);
	assert_true(ttm_fence_is_signaled(a));
	assert_false(ttm_fence_is_signaled(b));
	assert_int_equal(w, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 5), 0);
	assert_int_equal(ttm_fence_get_status(b), 1);
	assert_int_equal(w, 1);
	assert_int_equal(t->n, 2);
	assert_int_equal(t->info[1].start_us, 100);
	assert_int_equal(t->info[1].end_us, 110);
	assert_int_equal(stats_of(gpu).out_of_order_retirements, 0);
	ttm_fence_put(a);
	ttm_fence_put(b);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* The watchdog fails a hang at exactly the timeout; the engine goes on. */
static void test_hang(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = gpu_new(1, TTM_GPU_DETERMINISTIC, 5, t);
	uint32_t w[2] = { 7, 7 }, v[2] = { 0, 0 };
	struct ttm_gpu_range r = { w, sizeof(w) };
	struct ttm_gpu_job job = {
		.op = TTM_GPU_OP_ADD, .add_value = 1, .ranges = &r,
		.n_ranges = 1, .hang = true,
	};
	struct ttm_fence *hung, *next;
	struct ttm_gpu_stats s;

	(void)state;
	assert_int_equal(ttm_gpu_submit(gpu, &job, &hung), 0);
	next = submit_add(gpu, 0, 10, v, 2, 3, NULL, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 4999), 0);
	assert_false(ttm_fence_is_signaled(hung));
	assert_int_equal(stats_of(gpu).resets, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	assert_int_equal(ttm_fence_get_status(hung), -ETIMEDOUT);
	assert_int_equal(t->info[0].end_us, 5000);
	assert_int_equal(t->info[0].status, -ETIMEDOUT);
	assert_int_equal(stats_of(gpu).resets, 1);
	assert_int_equal(w[0], 7); /* a failed job leaves memory alone */
	assert_int_equal(w[1], 7);
	assert_false(ttm_fence_is_signaled(next));
	assert_int_equal(ttm_gpu_advance(gpu, 10), 0);
	assert_int_equal(ttm_fence_get_status(next), 1);
	assert_int_equal(v[0], 3);
	assert_int_equal(t->info[1].start_us, 5000);
	s = stats_of(gpu);
	assert_int_equal(s.run, 1);
	assert_int_equal(s.failed, 1);
	assert_int_equal(s.resets, 1);
	ttm_fence_put(hung);
	ttm_fence_put(next);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/*
 * A failed dependency fails an error-propagating job without running it,
 * whether it failed before the submission or after; an ordering
 * dependency on the same fence only delays.
 */
static void test_error_propagation(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(1, t);
	struct ttm_fence *early = hand_fence(), *late = hand_fence();
	struct ttm_fence *f[4];
	uint32_t w[4] = { 0 };
	struct ttm_gpu_dep deps[4] = {
		{ early, true }, { early, false },
		{ late, true }, { late, false },
	};
	unsigned int i;

	(void)state;
	assert_int_equal(ttm_fence_signal(early, -EIO), 0);
	for (i = 0; i < 4; i++)
		f[i] = submit_add(gpu, 0, 10, &w[i], 1, 5, &deps[i], 1);
	assert_int_equal(ttm_gpu_advance(gpu, 100), 0);
	/* The first fails at once, the second runs, the third waits. */
	assert_int_equal(ttm_fence_get_status(f[0]), -EIO);
	assert_int_equal(ttm_fence_get_status(f[1]), 1);
	assert_false(ttm_fence_is_signaled(f[2]));
	assert_int_equal(ttm_fence_signal(late, -ENODEV), 0);
	assert_int_equal(ttm_gpu_advance(gpu, 100), 0);
	assert_int_equal(ttm_fence_get_status(f[2]), -ENODEV);
	assert_int_equal(ttm_fence_get_status(f[3]), 1);
	assert_int_equal(w[0], 0);
	assert_int_equal(w[1], 5);
	assert_int_equal(w[2], 0);
	assert_int_equal(w[3], 5);
	assert_int_equal(t->n, 4);
	assert_int_equal(t->info[0].status, -EIO);
	assert_int_equal(t->info[0].start_us, 0);
	assert_int_equal(t->info[0].end_us, 0);
	assert_int_equal(t->info[2].status, -ENODEV);
	assert_int_equal(stats_of(gpu).failed, 2);
	assert_int_equal(stats_of(gpu).run, 2);
	for (i = 0; i < 4; i++)
		ttm_fence_put(f[i]);
	ttm_fence_put(early);
	ttm_fence_put(late);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/*
 * Many ADDs over 4 engines, chained across engines, with wraparound: each
 * word ends at exactly its start plus every value, mod 2^32.
 */
static void test_add_exactly_once(void **state)
{
	enum { ENGINES = 4, JOBS = 2000, WORDS = 16 };
	struct ttm_gpu *gpu = vgpu(ENGINES, NULL);
	struct ttm_fence *prev = NULL, *f;
	uint32_t w[WORDS], want = 0xfffffff0u, seed = 1, value;
	struct ttm_gpu_dep dep;
	struct ttm_gpu_stats s;
	unsigned int i;

	(void)state;
	for (i = 0; i < WORDS; i++)
		w[i] = 0xfffffff0u;
	for (i = 0; i < JOBS; i++) {
		seed = seed * 1103515245u + 12345u;
		value = seed ^ (seed >> 16);
		want += value;
		dep.fence = prev;
		dep.propagate_error = i % 2;
		f = submit_add(gpu, i % ENGINES, seed % 50, w, WORDS, value,
			       &dep, prev ? 1 : 0);
		ttm_fence_put(prev);
		prev = f;
		if (i % 97 == 0)
			assert_int_equal(ttm_gpu_advance(gpu, seed % 200), 0);
	}
	assert_int_equal(ttm_gpu_advance(gpu, 50 * JOBS), 0);
	assert_int_equal(ttm_fence_get_status(prev), 1);
	for (i = 0; i < WORDS; i++)
		assert_int_equal(w[i], want);
	s = stats_of(gpu);
	assert_int_equal(s.submitted, JOBS);
	assert_int_equal(s.run, JOBS);
	assert_int_equal(s.failed, 0);
	/* Chained: each retires before the next starts. */
	assert_int_equal(s.out_of_order_retirements, 0);
	ttm_fence_put(prev);
	ttm_gpu_destroy(gpu);
}

/* Independent engines, equal counts of ADD 1: exact totals. */
static void test_add_parallel_engines(void **state)
{
	enum { ENGINES = 3, JOBS = 300 };
	struct ttm_gpu *gpu = vgpu(ENGINES, NULL);
	uint32_t w[ENGINES] = { 0 };
	struct ttm_fence *f;
	unsigned int i;

	(void)state;
	for (i = 0; i < JOBS; i++) {
		f = submit_add(gpu, i % ENGINES, 1 + i % ENGINES,
			       &w[i % ENGINES], 1, 1, NULL, 0);
		ttm_fence_put(f);
	}
	assert_int_equal(ttm_gpu_advance(gpu, 99), 0);
	assert_int_equal(w[0], 99); /* 1 us a job */
	assert_int_equal(w[1], 49);
	assert_int_equal(w[2], 33);
	assert_int_equal(ttm_gpu_advance(gpu, 10000), 0);
	for (i = 0; i < ENGINES; i++)
		assert_int_equal(w[i], JOBS / ENGINES);
	assert_true(stats_of(gpu).out_of_order_retirements > 0);
	ttm_gpu_destroy(gpu);
}

/* Equal end times retire in id order, whatever the engine numbers. */
static void test_tie_order(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(3, t);
	struct ttm_fence *f[3];
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++)
		f[i] = submit_nop(gpu, 2 - i, 10, i);
	assert_int_equal(ttm_gpu_advance(gpu, 10), 0);
	assert_int_equal(t->n, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(t->info[i].id, i + 1);
		assert_int_equal(t->info[i].engine, 2 - i);
		assert_int_equal(t->info[i].end_us, 10);
		ttm_fence_put(f[i]);
	}
	/* Each retired with only later ids left: in order. */
	assert_int_equal(stats_of(gpu).out_of_order_retirements, 0);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* ADD wraps mod 2^32 and leaves the bytes around the range alone. */
static void test_add_wraparound(void **state)
{
	struct ttm_gpu *gpu = vgpu(1, NULL);
	uint32_t w[4] = { 0xdeadbeef, 0xffffffffu, 0xfffffffeu, 0xdeadbeef };
	struct ttm_fence *f;

	(void)state;
	f = submit_add(gpu, 0, 0, &w[1], 2, 3, NULL, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	assert_int_equal(ttm_fence_get_status(f), 1);
	assert_int_equal(w[1], 2);
	assert_int_equal(w[2], 1);
	assert_int_equal(w[0], 0xdeadbeef);
	assert_int_equal(w[3], 0xdeadbeef);
	ttm_fence_put(f);
	f = submit_add(gpu, 0, 0, &w[1], 1, 0xfffffffeu, NULL, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 0), 0);
	assert_int_equal(w[1], 0);
	ttm_fence_put(f);
	ttm_gpu_destroy(gpu);
}

static void test_copy(void **state)
{
	struct ttm_gpu *gpu = vgpu(1, NULL);
	uint32_t src[8], dst[8] = { 0 };
	struct ttm_gpu_range r[2] = { { src, sizeof(src) },
				      { dst, sizeof(dst) } };
	struct ttm_gpu_job job = {
		.op = TTM_GPU_OP_COPY, .ranges = r, .n_ranges = 2,
		.duration_us = 5,
	};
	struct ttm_fence *f;
	unsigned int i;

	(void)state;
	for (i = 0; i < 8; i++)
		src[i] = 0x1000 + i;
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), 0);
	assert_int_equal(dst[0], 0);
	assert_int_equal(ttm_gpu_advance(gpu, 4), 0);
	assert_int_equal(dst[7], 0);
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	assert_memory_equal(src, dst, sizeof(src));
	ttm_fence_put(f);
	ttm_gpu_destroy(gpu);
}

static void test_validation(void **state)
{
	struct ttm_gpu *gpu = vgpu(2, NULL), *rt = NULL;
	uint32_t a[4], b[2];
	struct ttm_gpu_range ok = { a, sizeof(a) };
	struct ttm_gpu_range two[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct ttm_gpu_range mis = { (char *)a + 2, 4 };
	struct ttm_gpu_range odd = { a, 6 };
	struct ttm_gpu_dep nodep = { NULL, false };
	struct ttm_gpu_job job;
	struct ttm_fence *f = NULL;

	(void)state;
	job = (struct ttm_gpu_job){ .engine = 2 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job = (struct ttm_gpu_job){ .op = (enum ttm_gpu_op)99 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job = (struct ttm_gpu_job){ .op = TTM_GPU_OP_COPY, .ranges = &ok,
				    .n_ranges = 1 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job.ranges = two;
	job.n_ranges = 2; /* sizes differ */
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job = (struct ttm_gpu_job){ .op = TTM_GPU_OP_ADD, .ranges = &mis,
				    .n_ranges = 1 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job.ranges = &odd;
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job.ranges = NULL;
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job = (struct ttm_gpu_job){ .deps = &nodep, .n_deps = 1 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	/* 2^64 ns or more: it wrapped to a job that ended at once. */
	job = (struct ttm_gpu_job){ .duration_us = TTM_GPU_MAX_DURATION_US +
						    1 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	job.duration_us = UINT64_MAX;
	assert_int_equal(ttm_gpu_submit(gpu, &job, &f), -EINVAL);
	assert_null(f);
	assert_int_equal(stats_of(gpu).submitted, 0);
	/* The same with two equal ranges is fine. */
	two[1] = (struct ttm_gpu_range){ b, sizeof(b) };
	two[0].size = sizeof(b);
	job = (struct ttm_gpu_job){ .op = TTM_GPU_OP_COPY, .ranges = two,
				    .n_ranges = 2 };
	assert_int_equal(ttm_gpu_submit(gpu, &job, NULL), 0);
	assert_int_equal(stats_of(gpu).submitted, 1);

	assert_int_equal(ttm_gpu_create(0, NULL, &rt), -EINVAL);
	assert_int_equal(ttm_gpu_create(65, NULL, &rt), -EINVAL);
	assert_null(rt);
	assert_int_equal(ttm_gpu_create(1, NULL, &rt), 0);
	assert_int_equal(ttm_gpu_advance(rt, 1), -EINVAL);
	job = (struct ttm_gpu_job){ .duration_us = TTM_GPU_MAX_DURATION_US +
						    1 };
	assert_int_equal(ttm_gpu_submit(rt, &job, &f), -EINVAL);
	assert_null(f);
	assert_int_equal(ttm_gpu_engines(rt), 1);
	assert_int_equal(ttm_gpu_engines(gpu), 2);
	ttm_gpu_destroy(rt);
	ttm_gpu_destroy(NULL);
	ttm_gpu_destroy(gpu);
}

/*
 * Destroy with work in flight: the running job finishes, a running hang
 * fails at once, queued jobs are cancelled with their memory untouched.
 */
static void test_destroy_in_flight(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = gpu_new(2, TTM_GPU_DETERMINISTIC, 1000, t);
	struct ttm_fence *in = hand_fence(), *f[5];
	struct ttm_gpu_dep dep = { in, false };
	uint32_t w[5] = { 0 };
	struct ttm_gpu_job hang = { .engine = 1, .hang = true };
	unsigned int i;

	(void)state;
	f[0] = submit_add(gpu, 0, 100, &w[0], 1, 1, NULL, 0);
	f[1] = submit_add(gpu, 0, 100, &w[1], 1, 1, NULL, 0);
	assert_int_equal(ttm_gpu_submit(gpu, &hang, &f[2]), 0);
	f[3] = submit_add(gpu, 1, 10, &w[3], 1, 1, &dep, 1);
	f[4] = submit_add(gpu, 1, 10, &w[4], 1, 1, NULL, 0);
	assert_int_equal(ttm_gpu_advance(gpu, 50), 0);
	assert_int_equal(t->n, 0);
	ttm_gpu_destroy(gpu);

	assert_int_equal(ttm_fence_get_status(f[0]), 1);
	assert_int_equal(w[0], 1);
	assert_int_equal(ttm_fence_get_status(f[1]), -ECANCELED);
	assert_int_equal(ttm_fence_get_status(f[2]), -ETIMEDOUT);
	assert_int_equal(ttm_fence_get_status(f[3]), -ECANCELED);
	assert_int_equal(ttm_fence_get_status(f[4]), -ECANCELED);
	assert_int_equal(w[1], 0);
	assert_int_equal(w[3], 0);
	assert_int_equal(w[4], 0);
	assert_int_equal(t->n, 5);
	/* Our callback is gone from @in: signalling it touches nothing. */
	assert_int_equal(ttm_fence_signal(in, 0), 0);
	assert_int_equal(w[3], 0);
	for (i = 0; i < 5; i++)
		ttm_fence_put(f[i]);
	ttm_fence_put(in);
	trace_free(t);
}

/* The hook: every field, for a job that ran and one cancelled. */
static void test_hook_info(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = vgpu(3, t);
	struct ttm_fence *a, *b;

	(void)state;
	assert_int_equal(ttm_gpu_advance(gpu, 7), 0);
	a = submit_nop(gpu, 2, 3, 0xabc);
	assert_int_equal(ttm_gpu_advance(gpu, 1), 0);
	b = submit_nop(gpu, 2, 3, 0xdef);
	assert_int_equal(ttm_gpu_advance(gpu, 2), 0);
	assert_int_equal(t->n, 1);
	assert_int_equal(t->info[0].id, 1);
	assert_int_equal(t->info[0].engine, 2);
	assert_int_equal(t->info[0].tag, 0xabc);
	assert_int_equal(t->info[0].submit_us, 7);
	assert_int_equal(t->info[0].start_us, 7);
	assert_int_equal(t->info[0].end_us, 10);
	assert_int_equal(t->info[0].status, 0);
	ttm_gpu_destroy(gpu); /* b started at 10: it finishes at 13 */
	assert_int_equal(t->n, 2);
	assert_int_equal(t->info[1].id, 2);
	assert_int_equal(t->info[1].submit_us, 8);
	assert_int_equal(t->info[1].start_us, 10);
	assert_int_equal(t->info[1].end_us, 13);
	ttm_fence_put(a);
	ttm_fence_put(b);
	trace_free(t);
}

/* The hook may submit: the new job starts at the retirement's time. */
struct chain {
	struct ttm_gpu *gpu;
	struct trace trace;
	struct ttm_fence *follow_up;
};

static void on_retire_submit(const struct ttm_gpu_job_info *info,
			     void *data)
{
	struct chain *c = data;
	struct ttm_gpu_job job = { .engine = 1, .duration_us = 5, .tag = 2 };

	on_retire(info, &c->trace);
	if (info->tag == 1)
		CHECK_INT(ttm_gpu_submit(c->gpu, &job, &c->follow_up), 0);
}

static void test_submit_from_hook(void **state)
{
	struct chain *c = calloc(1, sizeof(*c));
	struct ttm_gpu_options opts = {
		.flags = TTM_GPU_DETERMINISTIC,
		.on_retire = on_retire_submit,
	};
	struct ttm_fence *f;

	(void)state;
	assert_non_null(c);
	pthread_mutex_init(&c->trace.lock, NULL);
	opts.retire_data = c;
	assert_int_equal(ttm_gpu_create(2, &opts, &c->gpu), 0);
	f = submit_nop(c->gpu, 0, 10, 1);
	assert_int_equal(ttm_gpu_advance(c->gpu, 20), 0);
	assert_checks_passed();
	assert_non_null(c->follow_up);
	assert_int_equal(ttm_fence_get_status(c->follow_up), 1);
	assert_int_equal(c->trace.n, 2);
	assert_int_equal(c->trace.info[1].tag, 2);
	assert_int_equal(c->trace.info[1].submit_us, 10);
	assert_int_equal(c->trace.info[1].start_us, 10);
	assert_int_equal(c->trace.info[1].end_us, 15);
	ttm_fence_put(f);
	ttm_fence_put(c->follow_up);
	ttm_gpu_destroy(c->gpu);
	pthread_mutex_destroy(&c->trace.lock);
	free(c);
}

/* ---- real time -------------------------------------------------------- */

#define WAIT_NS (10 * 1000000000LL)

/* A few short jobs across engines, chained; wait on the last fence. */
static void test_realtime_smoke(void **state)
{
	struct trace *t = trace_new();
	struct ttm_gpu *gpu = gpu_new(2, 0, 0, t);
	struct ttm_fence *f[6] = { NULL };
	struct ttm_gpu_dep dep;
	uint32_t w[2] = { 0, 0 };
	struct ttm_gpu_stats s;
	unsigned int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		dep = (struct ttm_gpu_dep){ i ? f[i - 1] : NULL, true };
		f[i] = submit_add(gpu, i % 2, 200, w, 2, i + 1, &dep,
				  i ? 1 : 0);
	}
	assert_int_equal(ttm_fence_wait(f[5], false, WAIT_NS), 0);
	assert_int_equal(ttm_fence_get_status(f[5]), 1);
	assert_int_equal(w[0], 21);
	assert_int_equal(w[1], 21);
	s = stats_of(gpu);
	assert_int_equal(s.run, 6);
	assert_int_equal(s.submitted, 6);
	pthread_mutex_lock(&t->lock);
	assert_int_equal(t->n, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(t->info[i].id, i + 1);
		assert_true(t->info[i].end_us >= t->info[i].start_us + 200);
		if (i)
			assert_true(t->info[i].start_us >=
				    t->info[i - 1].end_us);
	}
	pthread_mutex_unlock(&t->lock);
	for (i = 0; i < 6; i++)
		ttm_fence_put(f[i]);
	ttm_gpu_destroy(gpu);
	trace_free(t);
}

/* The engine's worker asleep (white-box: its engine's sleeper count). */
static bool engine_asleep(void *arg)
{
	struct gpu_engine *e = arg;
	unsigned int sleepers;

	pthread_mutex_lock(&e->lock);
	sleepers = e->sleepers;
	pthread_mutex_unlock(&e->lock);
	return sleepers > 0;
}

/*
 * Real time: a job waits for a fence signalled by hand (its engine's worker
 * must not run it, nor the job behind it), then runs once it signals. The
 * worker is seen to go to sleep with that job at the head: a job z before
 * it, held by a gate, ran once the gate opened; the worker was awake then,
 * so once z signalled, asleep again means it looked at the job and found
 * it not ready (a worker that ignores dependencies sleeps only after
 * running both).
 */
static void test_realtime_dep_wait(void **state)
{
	struct ttm_gpu *gpu = gpu_new(1, 0, 0, NULL);
	struct ttm_fence *in = hand_fence(), *gate = hand_fence(), *z, *a, *b;
	struct ttm_gpu_dep dep = { in, false }, gate_dep = { gate, false };
	uint32_t w[3] = { 0, 0, 0 };

	(void)state;
	z = submit_add(gpu, 0, 0, &w[2], 1, 1, &gate_dep, 1);
	a = submit_add(gpu, 0, 0, &w[0], 1, 1, &dep, 1);
	b = submit_add(gpu, 0, 0, &w[1], 1, 1, NULL, 0);
	assert_int_equal(ttm_fence_signal(gate, 0), 0);
	assert_int_equal(ttm_fence_wait(z, false, WAIT_NS), 0);
	assert_true(wait_until(engine_asleep, &gpu->engines[0]));
	assert_false(ttm_fence_is_signaled(a));
	assert_false(ttm_fence_is_signaled(b));
	assert_int_equal(w[0], 0);
	assert_int_equal(w[1], 0);
	assert_int_equal(ttm_fence_signal(in, 0), 0);
	assert_int_equal(ttm_fence_wait(b, false, WAIT_NS), 0);
	assert_int_equal(ttm_fence_get_status(a), 1);
	assert_int_equal(w[0], 1);
	assert_int_equal(w[1], 1);
	assert_int_equal(w[2], 1);
	ttm_fence_put(z);
	ttm_fence_put(a);
	ttm_fence_put(b);
	ttm_fence_put(in);
	ttm_fence_put(gate);
	ttm_gpu_destroy(gpu);
}

/* The watchdog in real time: 1 ms, then the next job runs. */
static void test_realtime_hang(void **state)
{
	struct ttm_gpu *gpu = gpu_new(1, 0, 1, NULL);
	struct ttm_gpu_job hang = { .hang = true };
	struct ttm_fence *h, *next;
	uint32_t w = 0;

	(void)state;
	assert_int_equal(ttm_gpu_submit(gpu, &hang, &h), 0);
	next = submit_add(gpu, 0, 0, &w, 1, 1, NULL, 0);
	assert_int_equal(ttm_fence_wait(next, false, WAIT_NS), 0);
	assert_int_equal(ttm_fence_get_status(h), -ETIMEDOUT);
	assert_int_equal(ttm_fence_get_status(next), 1);
	assert_int_equal(w, 1);
	assert_int_equal(stats_of(gpu).resets, 1);
	ttm_fence_put(h);
	ttm_fence_put(next);
	ttm_gpu_destroy(gpu);
}

/* Destroy in real time: a blocked engine is cancelled, a hang cut short. */
static void test_realtime_destroy(void **state)
{
	struct ttm_gpu *gpu = gpu_new(2, 0, 100000, NULL);
	struct ttm_fence *in = hand_fence(), *f[4];
	struct ttm_gpu_dep dep = { in, true };
	struct ttm_gpu_job hang = { .engine = 1, .hang = true };
	uint32_t w[2] = { 0, 0 };
	unsigned int i;
	long start;
	int st;

	(void)state;
	f[0] = submit_add(gpu, 0, 0, &w[0], 1, 1, &dep, 1);
	f[1] = submit_add(gpu, 0, 0, &w[1], 1, 1, NULL, 0);
	assert_int_equal(ttm_gpu_submit(gpu, &hang, &f[2]), 0);
	f[3] = submit_nop(gpu, 1, 0, 0);
	start = now_ns();
	ttm_gpu_destroy(gpu);
	/* Far less than the 100 s hang timeout. */
	assert_true(now_ns() - start < 5000000000L);
	assert_int_equal(ttm_fence_get_status(f[0]), -ECANCELED);
	assert_int_equal(ttm_fence_get_status(f[1]), -ECANCELED);
	st = ttm_fence_get_status(f[2]);
	assert_true(st == -ETIMEDOUT || st == -ECANCELED);
	assert_int_equal(ttm_fence_get_status(f[3]), -ECANCELED);
	assert_int_equal(w[0], 0);
	assert_int_equal(w[1], 0);
	assert_int_equal(ttm_fence_signal(in, 0), 0);
	for (i = 0; i < 4; i++)
		ttm_fence_put(f[i]);
	ttm_fence_put(in);
}

/* Submitters on several threads, one per engine: every job retires. */
struct rt_submitter {
	struct ttm_gpu *gpu;
	unsigned int engine;
	uint32_t word;
	struct ttm_fence *last;
};

enum { RT_JOBS = 2000 };

static void *rt_submit_main(void *arg)
{
	struct rt_submitter *s = arg;
	struct ttm_gpu_range r = { &s->word, sizeof(s->word) };
	struct ttm_gpu_job job = {
		.engine = s->engine, .op = TTM_GPU_OP_ADD, .add_value = 1,
		.ranges = &r, .n_ranges = 1,
	};
	unsigned int i;

	for (i = 0; i < RT_JOBS; i++) {
		ttm_fence_put(s->last);
		s->last = NULL;
		if (ttm_gpu_submit(s->gpu, &job, &s->last))
			break;
	}
	return NULL;
}

static void test_realtime_threads(void **state)
{
	enum { ENGINES = 4 };
	struct ttm_gpu *gpu = gpu_new(ENGINES, 0, 0, NULL);
	struct rt_submitter s[ENGINES];
	pthread_t th[ENGINES];
	struct ttm_gpu_stats st;
	unsigned int i;

	(void)state;
	for (i = 0; i < ENGINES; i++) {
		s[i] = (struct rt_submitter){ gpu, i, 0, NULL };
		th[i] = start_thread(rt_submit_main, &s[i]);
	}
	for (i = 0; i < ENGINES; i++)
		join_thread(th[i]);
	for (i = 0; i < ENGINES; i++) {
		assert_non_null(s[i].last);
		assert_int_equal(ttm_fence_wait(s[i].last, false, WAIT_NS), 0);
		assert_int_equal(s[i].word, RT_JOBS);
		ttm_fence_put(s[i].last);
	}
	st = stats_of(gpu);
	assert_int_equal(st.submitted, ENGINES * RT_JOBS);
	assert_int_equal(st.run, ENGINES * RT_JOBS);
	ttm_gpu_destroy(gpu);
}

/*
 * How many of this process's threads other than the caller run @policy,
 * from /proc/self/task/TID/stat (field 41).
 */
static unsigned int threads_with_policy(int policy)
{
	char path[300], buf[1024], *p;
	unsigned int n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	assert_non_null(dir);
	while ((d = readdir(dir))) {
		FILE *f;
		int field;

		if (d->d_name[0] == '.' || atoi(d->d_name) == gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* gone meanwhile */
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		assert_non_null(p);
		/* After the name: field 3 on, policy the 41st. */
		for (field = 2; field < 41 && p; field++)
			p = strchr(p + 1, ' ');
		assert_non_null(p);
		if (atoi(p + 1) == policy)
			n++;
	}
	closedir(dir);
	return n;
}

/* Start a real-time GPU and wait until its engine has run a job. */
static struct ttm_gpu *gpu_ran_one(uint32_t *word)
{
	struct ttm_gpu *gpu = gpu_new(1, 0, 0, NULL);
	struct ttm_fence *f = submit_add(gpu, 0, 1, word, 1, 1, NULL, 0);

	assert_int_equal(ttm_fence_wait(f, false, WAIT_NS), 0);
	ttm_fence_put(f);
	return gpu;
}

/* From SCHED_IDLE, start a GPU: its worker, too, stays SCHED_IDLE. */
static void *idle_main(void *arg)
{
	struct sched_param param = { 0 };
	struct ttm_gpu *gpu;

	assert_int_equal(pthread_setschedparam(pthread_self(), SCHED_IDLE,
					       &param), 0);
	gpu = gpu_ran_one(arg);
	assert_int_equal(threads_with_policy(SCHED_BATCH), 0);
	/* The worker only: the caller is not counted, main runs OTHER. */
	assert_int_equal(threads_with_policy(SCHED_IDLE), 1);
	ttm_gpu_destroy(gpu);
	return NULL;
}

/*
 * The engine worker switches to SCHED_BATCH only from the default policy:
 * an inherited SCHED_IDLE (unprivileged, like the real-time ones a
 * program might choose) is kept; TTMSIM_SCHED_BATCH=0 keeps SCHED_OTHER.
 */
static void test_thread_policy(void **state)
{
	struct ttm_gpu *gpu;
	uint32_t word = 0;

	(void)state;
	assert_int_equal(unsetenv("TTMSIM_SCHED_BATCH"), 0);
	gpu = gpu_ran_one(&word);
	assert_int_equal(threads_with_policy(SCHED_BATCH), 1);
	ttm_gpu_destroy(gpu);

	assert_int_equal(setenv("TTMSIM_SCHED_BATCH", "0", 1), 0);
	gpu = gpu_ran_one(&word);
	assert_int_equal(threads_with_policy(SCHED_BATCH), 0);
	ttm_gpu_destroy(gpu);
	assert_int_equal(unsetenv("TTMSIM_SCHED_BATCH"), 0);

	/* In a thread of its own: an unprivileged one cannot leave IDLE. */
	join_thread(start_thread(idle_main, &word));
	assert_int_equal(word, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dep_order),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_in_order_within_engine),
		cmocka_unit_test(test_cross_engine_dep),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_error_propagation),
		cmocka_unit_test(test_add_exactly_once),
		cmocka_unit_test(test_add_parallel_engines),
		cmocka_unit_test(test_tie_order),
		cmocka_unit_test(test_add_wraparound),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_destroy_in_flight),
		cmocka_unit_test(test_hook_info),
		cmocka_unit_test_setup(test_submit_from_hook, checks_reset),
		cmocka_unit_test(test_realtime_smoke),
		cmocka_unit_test(test_realtime_dep_wait),
		cmocka_unit_test(test_realtime_hang),
		cmocka_unit_test(test_realtime_destroy),
		cmocka_unit_test(test_realtime_threads),
		cmocka_unit_test(test_thread_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
