// SPDX-License-Identifier: MIT
/*
 * The job scheduler (ttmsim/sched.h) on a deterministic GPU's virtual
 * clock: no scheduler thread, everything happens inside ttm_gpu_advance()
 * (or a destroy that lets virtual time pass), in the test's thread. The
 * mock backend's run_job submits a fake-GPU job (its fence is the hardware
 * fence) or, for timeouts, hands out a mock fence the test signals. Every
 * event goes into a text trace with its virtual time, so each case checks
 * exact times and orders, and the same calls give the same trace twice.
 */
#include "lib/helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"
#include "util/compiler.h"

#define MAX_JOBS 32
#define MOCK_HW UINT64_MAX /* duration: a mock fence, not a GPU job */
#define HANG (UINT64_MAX - 1) /* duration: a GPU job that hangs */

struct vm {
	struct ttm_gpu *gpu;
	char trace[4096];
	size_t len;
	struct ttm_fence *hw[MAX_JOBS]; /* mock hardware fences, by id */
	uint32_t credits[MAX_JOBS];
	uint32_t in_flight, max_in_flight;
	unsigned int n_run, n_freed, n_timedout;
	unsigned int no_hang;           /* NO_HANG this often, then RESET */
	struct event *timed_out;        /* set at each timeout, if any */
};

struct vjob {
	struct ttm_sched_job base;
	struct vm *m;
	int id;
	unsigned int engine;
	uint64_t duration_us;           /* or MOCK_HW */
	bool hang;
	struct ttm_fence_cb fin_cb;     /* traces the finished fence */
};

static void trace(struct vm *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace(struct vm *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(m->trace + m->len, sizeof(m->trace) - m->len, "%llu ",
		     (unsigned long long)ttm_gpu_now_us(m->gpu));
	assert_true(n > 0 && (size_t)n < sizeof(m->trace) - m->len);
	m->len += (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(m->trace + m->len, sizeof(m->trace) - m->len, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(m->trace) - m->len - 1);
	m->len += (size_t)n;
	m->trace[m->len++] = '\n';
	m->trace[m->len] = '\0';
}

static struct vjob *to_vjob(struct ttm_sched_job *job)
{
	return container_of(job, struct vjob, base);
}

static struct ttm_fence *v_run_job(struct ttm_sched_job *job)
{
	struct vjob *vj = to_vjob(job);
	struct vm *m = vj->m;
	struct ttm_gpu_job g = {
		.engine = vj->engine, .duration_us = vj->duration_us,
		.hang = vj->hang, .tag = (uint64_t)vj->id,
	};
	struct ttm_fence *hw = NULL;

	trace(m, "run %d", vj->id);
	m->n_run++;
	m->in_flight += m->credits[vj->id];
	if (m->in_flight > m->max_in_flight)
		m->max_in_flight = m->in_flight;
	if (vj->duration_us == MOCK_HW) {
		hw = mock_fence_new("mock-ring");
		m->hw[vj->id] = ttm_fence_get(hw);
		return hw;
	}
	/* Inside the step: the GPU job starts at this very virtual time. */
	assert_int_equal(ttm_gpu_submit(m->gpu, &g, &hw), 0);
	return hw;
}

static enum ttm_sched_stat v_timedout_job(struct ttm_sched_job *job)
{
	struct vjob *vj = to_vjob(job);
	struct vm *m = vj->m;

	trace(m, "timeout %d", vj->id);
	if (m->timed_out)
		event_set(m->timed_out);
	if (++m->n_timedout <= m->no_hang)
		return TTM_SCHED_STAT_NO_HANG;
	assert_non_null(m->hw[vj->id]);
	ttm_fence_signal(m->hw[vj->id], -ETIMEDOUT);
	return TTM_SCHED_STAT_RESET;
}

static void v_free_job(struct ttm_sched_job *job)
{
	struct vjob *vj = to_vjob(job);

	trace(vj->m, "free %d", vj->id);
	vj->m->n_freed++;
	ttm_sched_job_cleanup(job);
	free(vj);
}

static const struct ttm_sched_backend_ops v_ops = {
	.run_job = v_run_job,
	.timedout_job = v_timedout_job,
	.free_job = v_free_job,
};

static void gpu_retired(const struct ttm_gpu_job_info *info, void *data)
{
	trace(data, "gpu %llu %llu-%llu %d", (unsigned long long)info->tag,
	      (unsigned long long)info->start_us,
	      (unsigned long long)info->end_us, info->status);
}

static struct vm *vm_new(unsigned int engines, unsigned int hang_ms)
{
	struct vm *m = calloc(1, sizeof(*m));
	struct ttm_gpu_options o = {
		.flags = TTM_GPU_DETERMINISTIC, .hang_timeout_ms = hang_ms,
		.on_retire = gpu_retired, .retire_data = m,
	};

	assert_non_null(m);
	assert_int_equal(ttm_gpu_create(engines, &o, &m->gpu), 0);
	return m;
}

static void vm_free(struct vm *m)
{
	ttm_gpu_destroy(m->gpu);
	for (unsigned int i = 0; i < MAX_JOBS; i++)
		ttm_fence_put(m->hw[i]);
	free(m);
}

static struct ttm_sched *vsched_new(struct vm *m, const char *name,
				    uint32_t credits, uint64_t timeout_ns)
{
	struct ttm_sched_options o = {
		.name = name, .credit_limit = credits,
		.timeout_ns = timeout_ns, .ops = &v_ops, .gpu = m->gpu,
	};
	struct ttm_sched *s = NULL;

	assert_int_equal(ttm_sched_create(&o, &s), 0);
	return s;
}

static struct ttm_sched_entity *ventity(struct ttm_sched *s,
					enum ttm_sched_priority prio)
{
	struct ttm_sched_entity *e = NULL;

	assert_int_equal(ttm_sched_entity_create(s, prio, &e), 0);
	return e;
}

static void fin_cb(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct vjob *vj = container_of(cb, struct vjob, fin_cb);

	if (ttm_fence_get_status(fence) > 0)
		vj->m->in_flight -= vj->m->credits[vj->id];
	trace(vj->m, "fin %d %d", vj->id, ttm_fence_get_status(fence));
}

/*
 * Push job @id on @e: @duration_us on GPU engine @engine (or MOCK_HW),
 * @credits, up to two dependencies (references taken over; NULL for none)
 * with their flags. Returns a reference to its finished fence.
 */
static struct ttm_fence *vpush_deps(struct vm *m, struct ttm_sched_entity *e,
				    int id, unsigned int engine,
				    uint64_t duration_us, uint32_t credits,
				    struct ttm_fence *dep0, unsigned int flags0,
				    struct ttm_fence *dep1, unsigned int flags1)
{
	struct vjob *vj = calloc(1, sizeof(*vj));
	struct ttm_fence *fin;

	assert_non_null(vj);
	vj->m = m;
	vj->id = id;
	vj->engine = engine;
	vj->duration_us = duration_us == HANG ? 0 : duration_us;
	vj->hang = duration_us == HANG;
	m->credits[id] = credits;
	assert_int_equal(ttm_sched_job_init(&vj->base, e, credits), 0);
	if (dep0)
		assert_int_equal(ttm_sched_job_add_dependency_flags(
					 &vj->base, dep0, flags0), 0);
	if (dep1)
		assert_int_equal(ttm_sched_job_add_dependency_flags(
					 &vj->base, dep1, flags1), 0);
	ttm_sched_job_arm(&vj->base);
	fin = ttm_fence_get(ttm_sched_job_finished(&vj->base));
	assert_int_equal(ttm_fence_add_callback(fin, &vj->fin_cb, fin_cb), 0);
	ttm_sched_entity_push_job(&vj->base);
	return fin;
}

/* vpush_deps() with at most one dependency, which fails the job. */
static struct ttm_fence *vpush(struct vm *m, struct ttm_sched_entity *e,
			       int id, unsigned int engine,
			       uint64_t duration_us, uint32_t credits,
			       struct ttm_fence *dep)
{
	return vpush_deps(m, e, id, engine, duration_us, credits, dep, 0,
			  NULL, 0);
}

static void put_all(struct ttm_fence **f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		ttm_fence_put(f[i]);
}

static void advance(struct vm *m, uint64_t us)
{
	assert_int_equal(ttm_gpu_advance(m->gpu, us), 0);
}

/* No thread: nothing happens between advances, all of it inside them. */
static void test_v_basic(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 4, 0);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	fin = vpush(m, e, 0, 0, 100, 1, NULL);
	assert_int_equal(m->n_run, 0);
	advance(m, 0);
	assert_int_equal(m->n_run, 1);
	advance(m, 99);
	assert_false(ttm_fence_is_signaled(fin));
	advance(m, 1);
	assert_int_equal(ttm_fence_get_status(fin), 1);
	assert_string_equal(m->trace, "0 run 0\n"
				      "100 gpu 0 0-100 0\n"
				      "100 fin 0 1\n"
				      "100 free 0\n");
	ttm_fence_put(fin);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/* A high-priority job overtakes queued normal ones, at exact times. */
static void test_v_priority(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 0);
	struct ttm_sched_entity *n = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *h = ventity(s, TTM_SCHED_PRIORITY_HIGH);
	struct ttm_sched_entity *l = ventity(s, TTM_SCHED_PRIORITY_LOW);
	struct ttm_sched_entity *k = ventity(s, TTM_SCHED_PRIORITY_KERNEL);
	struct ttm_fence *fin[6];

	(void)state;
	fin[0] = vpush(m, n, 0, 0, 10, 1, NULL);
	advance(m, 0);
	fin[1] = vpush(m, n, 1, 0, 10, 1, NULL);
	fin[2] = vpush(m, n, 2, 0, 10, 1, NULL);
	fin[3] = vpush(m, l, 3, 0, 10, 1, NULL);
	fin[4] = vpush(m, h, 4, 0, 10, 1, NULL);
	fin[5] = vpush(m, k, 5, 0, 10, 1, NULL);
	m->len = 0;
	advance(m, 1000);
	assert_string_equal(m->trace,
		"10 gpu 0 0-10 0\n10 fin 0 1\n10 free 0\n10 run 5\n"
		"20 gpu 5 10-20 0\n20 fin 5 1\n20 free 5\n20 run 4\n"
		"30 gpu 4 20-30 0\n30 fin 4 1\n30 free 4\n30 run 1\n"
		"40 gpu 1 30-40 0\n40 fin 1 1\n40 free 1\n40 run 2\n"
		"50 gpu 2 40-50 0\n50 fin 2 1\n50 free 2\n50 run 3\n"
		"60 gpu 3 50-60 0\n60 fin 3 1\n60 free 3\n");
	put_all(fin, 6);
	ttm_sched_entity_destroy(k, 0);
	ttm_sched_entity_destroy(l, 0);
	ttm_sched_entity_destroy(h, 0);
	ttm_sched_entity_destroy(n, 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/* The order of run_job calls, from the trace. */
static void run_order(const struct vm *m, int *order, unsigned int n)
{
	const char *p = m->trace;
	unsigned int i = 0;
	int id;

	while ((p = strstr(p, " run ")) && i < n) {
		assert_int_equal(sscanf(p, " run %d", &id), 1);
		order[i++] = id;
		p++;
	}
	assert_int_equal(i, n);
}

/* Entities of one priority take turns. */
static void test_v_fairness(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 0);
	struct ttm_sched_entity *e[3];
	struct ttm_fence *fin[7];
	const int want[7] = { 0, 3, 5, 1, 4, 6, 2 };
	const int owner[7] = { 0, 0, 0, 1, 1, 2, 2 };
	int order[7];

	(void)state;
	for (int i = 0; i < 3; i++)
		e[i] = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	fin[0] = vpush(m, e[0], 0, 0, 10, 1, NULL);
	advance(m, 0);
	for (int i = 1; i < 7; i++)
		fin[i] = vpush(m, e[owner[i]], i, 0, 10, 1, NULL);
	advance(m, 70);
	run_order(m, order, 7);
	assert_memory_equal(order, want, sizeof(want));
	assert_non_null(strstr(m->trace, "70 fin 2 1\n"));
	put_all(fin, 7);
	for (int i = 0; i < 3; i++)
		ttm_sched_entity_destroy(e[i], 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/*
 * A job of one ring waits for a job of another and runs (its GPU job
 * starts) at the very time that one ends; a dependency failed by the GPU's
 * watchdog fails the job without running it.
 */
static void test_v_deps_across(void **state)
{
	struct vm *m = vm_new(2, 1); /* watchdog: 1 ms */
	struct ttm_sched *s1 = vsched_new(m, "ring1", 4, 0);
	struct ttm_sched *s2 = vsched_new(m, "ring2", 4, 0);
	struct ttm_sched_entity *e1 = ventity(s1, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *e2 = ventity(s2, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[4];

	(void)state;
	fin[0] = vpush(m, e1, 0, 0, 50, 1, NULL);
	fin[1] = vpush(m, e2, 1, 1, 20, 1, ttm_fence_get(fin[0]));
	advance(m, 100);
	/* ring1 steps first (created first): it frees, then ring2 runs. */
	assert_string_equal(m->trace,
		"0 run 0\n"
		"50 gpu 0 0-50 0\n50 fin 0 1\n50 free 0\n50 run 1\n"
		"70 gpu 1 50-70 0\n70 fin 1 1\n70 free 1\n");
	/* Job 2 hangs on the GPU: the watchdog fails it after 1 ms. */
	fin[2] = vpush(m, e1, 2, 0, HANG, 1, NULL);
	fin[3] = vpush(m, e2, 3, 1, 10, 1, ttm_fence_get(fin[2]));
	m->len = 0;
	advance(m, 2000);
	assert_string_equal(m->trace,
		"100 run 2\n"
		"1100 gpu 2 100-1100 -110\n1100 fin 2 -110\n1100 free 2\n"
		"1100 fin 3 -110\n1100 free 3\n");
	assert_int_equal(m->n_run, 3);
	put_all(fin, 4);
	ttm_sched_entity_destroy(e2, 0);
	ttm_sched_entity_destroy(e1, 0);
	ttm_sched_destroy(s2);
	ttm_sched_destroy(s1);
	vm_free(m);
}

/*
 * Job W waits for A (it hangs) and then for B, the next job of A's entity
 * (it completes): two fences of one context. B does not carry A's error,
 * so a W that wants A's error must keep A and fail with it, whichever
 * order the two are added in and however B is added; W runs only if A
 * was added as ordering only.
 */
static void test_v_deps_same_context_error(void **state)
{
	static const struct {
		bool a_first;
		unsigned int a_flags, b_flags;
		int status; /* of W's finished fence */
	} c[] = {
		{ true, 0, 0, -ETIMEDOUT },
		{ false, 0, 0, -ETIMEDOUT },
		{ true, 0, TTM_SCHED_DEP_ORDER, -ETIMEDOUT },
		{ false, 0, TTM_SCHED_DEP_ORDER, -ETIMEDOUT },
		{ true, TTM_SCHED_DEP_ORDER, 0, 1 },
		{ true, TTM_SCHED_DEP_ORDER, TTM_SCHED_DEP_ORDER, 1 },
	};
	struct vm *m = vm_new(2, 1); /* watchdog: 1 ms */
	struct ttm_sched *s1 = vsched_new(m, "ring1", 4, 0);
	struct ttm_sched *s2 = vsched_new(m, "ring2", 4, 0);
	struct ttm_sched_entity *e1 = ventity(s1, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *e2 = ventity(s2, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *a, *b, *w[ARRAY_SIZE(c)];

	(void)state;
	a = vpush(m, e1, 0, 0, HANG, 1, NULL);
	b = vpush(m, e1, 1, 0, 10, 1, NULL);
	for (unsigned int i = 0; i < ARRAY_SIZE(c); i++) {
		struct ttm_fence *first = c[i].a_first ? a : b;
		struct ttm_fence *second = c[i].a_first ? b : a;

		w[i] = vpush_deps(m, e2, 2 + (int)i, 1, 10, 1,
				  ttm_fence_get(first),
				  c[i].a_first ? c[i].a_flags : c[i].b_flags,
				  ttm_fence_get(second),
				  c[i].a_first ? c[i].b_flags : c[i].a_flags);
	}
	advance(m, 5000);
	assert_int_equal(ttm_fence_get_status(a), -ETIMEDOUT);
	assert_int_equal(ttm_fence_get_status(b), 1);
	for (unsigned int i = 0; i < ARRAY_SIZE(c); i++) {
		print_message("case %u\n", i);
		assert_int_equal(ttm_fence_get_status(w[i]), c[i].status);
	}
	ttm_fence_put(a);
	ttm_fence_put(b);
	put_all(w, ARRAY_SIZE(c));
	ttm_sched_entity_destroy(e2, 0);
	ttm_sched_entity_destroy(e1, 0);
	ttm_sched_destroy(s2);
	ttm_sched_destroy(s1);
	vm_free(m);
}

/* No more credits on the ring than the limit; big jobs wait for room. */
static void test_v_credit_limit(void **state)
{
	struct vm *m = vm_new(2, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 3, 0);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[4];

	(void)state;
	fin[0] = vpush(m, e, 0, 0, 10, 2, NULL);
	fin[1] = vpush(m, e, 1, 1, 10, 2, NULL); /* 2 + 2 > 3: waits */
	fin[2] = vpush(m, e, 2, 0, 10, 1, NULL);
	fin[3] = vpush(m, e, 3, 1, 10, 9, NULL); /* clamped to 3 */
	m->credits[3] = 3;
	advance(m, 100);
	/* Both ends at 20: the smaller GPU id first, a step after each. */
	assert_string_equal(m->trace,
		"0 run 0\n"
		"10 gpu 0 0-10 0\n10 fin 0 1\n10 free 0\n10 run 1\n10 run 2\n"
		"20 gpu 1 10-20 0\n20 fin 1 1\n20 free 1\n"
		"20 gpu 2 10-20 0\n20 fin 2 1\n20 free 2\n20 run 3\n"
		"30 gpu 3 20-30 0\n30 fin 3 1\n30 free 3\n");
	assert_int_equal(m->max_in_flight, 3);
	put_all(fin, 4);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/*
 * Timeouts in virtual time: timedout_job at exactly run + timeout (the
 * clock stops there even with nothing on the GPU), NO_HANG re-arms from
 * then, RESET fails the job, and the ring goes on at that same time. A job
 * that ends exactly at its deadline retires first: no timeout.
 */
static void test_v_timeout(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 1000000); /* 1 ms */
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[3];

	(void)state;
	m->no_hang = 1;
	advance(m, 5);
	fin[0] = vpush(m, e, 0, 0, MOCK_HW, 1, NULL);
	fin[1] = vpush(m, e, 1, 0, 1000, 1, NULL);
	fin[2] = vpush(m, e, 2, 0, MOCK_HW, 1, NULL);
	advance(m, 1000 - 1);
	assert_string_equal(m->trace, "5 run 0\n");
	advance(m, 1);
	assert_string_equal(m->trace, "5 run 0\n1005 timeout 0\n");
	m->len = 0;
	advance(m, 5000);
	assert_string_equal(m->trace,
		"2005 timeout 0\n2005 fin 0 -110\n2005 free 0\n2005 run 1\n"
		"3005 gpu 1 2005-3005 0\n3005 fin 1 1\n3005 free 1\n"
		"3005 run 2\n"
		"4005 timeout 2\n4005 fin 2 -110\n4005 free 2\n");
	assert_int_equal(ttm_gpu_now_us(m->gpu), 6005);
	put_all(fin, 3);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/* A timeout that is not whole us is rounded up, never down to none. */
static void test_v_timeout_rounding(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 1500);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;

	(void)state;
	fin = vpush(m, e, 0, 0, MOCK_HW, 1, NULL);
	advance(m, 1);
	assert_int_equal(m->n_timedout, 0);
	advance(m, 10);
	assert_string_equal(m->trace,
		"0 run 0\n2 timeout 0\n2 fin 0 -110\n2 free 0\n");
	ttm_fence_put(fin);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	vm_free(m);
}

/*
 * Killed jobs signal -ESRCH only after the entity's last job on the ring
 * has finished, in order: nothing after the kill before what preceded it.
 */
static void test_v_kill_order(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 0);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *w = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[4];

	(void)state;
	fin[0] = vpush(m, e, 0, 0, 100, 1, NULL);
	advance(m, 0);
	fin[1] = vpush(m, e, 1, 0, 100, 1, NULL);
	fin[2] = vpush(m, e, 2, 0, 100, 1, NULL);
	/* An entity with nothing on the ring: killed at once. */
	fin[3] = vpush(m, w, 3, 0, 100, 1, NULL);
	ttm_sched_entity_destroy(w, 0);
	ttm_sched_entity_destroy(e, 0);
	assert_string_equal(m->trace, "0 run 0\n0 fin 3 -3\n0 free 3\n");
	assert_false(ttm_fence_is_signaled(fin[1]));
	assert_false(ttm_fence_is_signaled(fin[2]));
	advance(m, 1000);
	/*
	 * Job 1's turn comes while job 0's fence signals, before job 0 is
	 * queued for free_job: the fences are in order, the frees need not.
	 */
	assert_string_equal(m->trace, "0 run 0\n0 fin 3 -3\n0 free 3\n"
		"100 gpu 0 0-100 0\n100 fin 0 1\n100 fin 1 -3\n100 free 1\n"
		"100 free 0\n100 fin 2 -3\n100 free 2\n");
	assert_int_equal(m->n_run, 1);
	put_all(fin, 4);
	ttm_sched_destroy(s);
	vm_free(m);
}

/*
 * The flush of ttm_sched_entity_destroy() and ttm_sched_destroy() let
 * virtual time pass, event by event, as their real-time waits let real
 * time pass: the flush up to its timeout, then the rest is killed.
 */
static void test_v_flush(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 0);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin[5];

	(void)state;
	for (int i = 0; i < 2; i++)
		fin[i] = vpush(m, e, i, 0, 100, 1, NULL);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	/* Stopped once job 1 reached the ring, at its last event. */
	assert_int_equal(ttm_gpu_now_us(m->gpu), 100);
	assert_int_equal(m->n_run, 2);
	e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	for (int i = 2; i < 5; i++)
		fin[i] = vpush(m, e, i, 0, 100, 1, NULL);
	m->len = 0;
	/* Up to 250: job 1 ends at 200, job 2 runs; job 3 would at 300. */
	ttm_sched_entity_destroy(e, 150000);
	assert_string_equal(m->trace,
		"200 gpu 1 100-200 0\n200 fin 1 1\n200 free 1\n200 run 2\n");
	assert_int_equal(ttm_gpu_now_us(m->gpu), 200);
	/* The destroy lets time pass until the ring is empty. */
	ttm_sched_destroy(s);
	assert_string_equal(m->trace,
		"200 gpu 1 100-200 0\n200 fin 1 1\n200 free 1\n200 run 2\n"
		"300 gpu 2 200-300 0\n300 fin 2 1\n300 fin 3 -3\n300 free 3\n"
		"300 free 2\n300 fin 4 -3\n300 free 4\n");
	assert_int_equal(ttm_gpu_now_us(m->gpu), 300);
	for (int i = 0; i < 5; i++)
		assert_true(ttm_fence_is_signaled(fin[i]));
	put_all(fin, 5);
	vm_free(m);
}

static void *signal_hw0(void *arg)
{
	struct vm *m = arg;

	ttm_fence_signal(m->hw[0], 0);
	return NULL;
}

/*
 * A hardware fence the GPU does not signal (a driver's): with no event
 * left, the virtual destroy waits for it, as the real-time one does, and
 * then frees the job.
 */
static void test_v_destroy_waits_for_driver_fence(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 0);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_fence *fin;
	pthread_t t;

	(void)state;
	fin = vpush(m, e, 0, 0, MOCK_HW, 1, NULL);
	advance(m, 0);
	ttm_sched_entity_destroy(e, UINT64_MAX);
	assert_int_equal(pthread_create(&t, NULL, signal_hw0, m), 0);
	ttm_sched_destroy(s);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(m->n_freed, 1);
	assert_string_equal(m->trace, "0 run 0\n0 fin 0 1\n0 free 0\n");
	ttm_fence_put(fin);
	vm_free(m);
}

/*
 * The driver fence's job has a timeout its op answers "still running"
 * to: the virtual destroy fires it once, at its deadline, then waits for
 * the fence instead of spinning the clock from deadline to deadline.
 */
static void *signal_hw0_after_timeout(void *arg)
{
	struct vm *m = arg;

	assert_true(event_wait_for(m->timed_out, 10));
	ttm_fence_signal(m->hw[0], 0);
	return NULL;
}

static void test_v_destroy_no_timeout_spin(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *s = vsched_new(m, "ring0", 1, 1000);
	struct ttm_sched_entity *e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	struct event timed_out;
	struct ttm_fence *fin;
	pthread_t t;

	(void)state;
	event_init(&timed_out);
	m->timed_out = &timed_out;
	m->no_hang = UINT32_MAX;
	fin = vpush(m, e, 0, 0, MOCK_HW, 1, NULL);
	advance(m, 0);
	ttm_sched_entity_destroy(e, 0);
	assert_int_equal(pthread_create(&t, NULL, signal_hw0_after_timeout,
					m), 0);
	ttm_sched_destroy(s);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(m->n_timedout, 1);
	assert_string_equal(m->trace, "0 run 0\n1 timeout 0\n1 fin 0 1\n"
				      "1 free 0\n");
	ttm_fence_put(fin);
	event_destroy(&timed_out);
	vm_free(m);
}

static int cb_ok(struct ttm_sched_job *job, void *data)
{
	(void)job;
	(void)data;
	return 0;
}

/*
 * A job made ready by another scheduler's step at the same virtual time
 * (a callback-backend job runs inline and signals at once) runs at that
 * time: the clients step again until none makes progress, even when the
 * waiting scheduler stepped first and no GPU event is left.
 */
static void test_v_ready_in_same_step(void **state)
{
	struct vm *m = vm_new(1, 0);
	struct ttm_sched *a = vsched_new(m, "ringA", 1, 0);
	struct ttm_sched_options o = { .credit_limit = 1, .gpu = m->gpu };
	struct ttm_sched_cb_args args = { .fn = cb_ok };
	struct ttm_sched_entity *ea = ventity(a, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *eb;
	struct ttm_fence *x, *y;
	struct ttm_sched *b;

	(void)state;
	assert_int_equal(ttm_sched_cb_create(&o, 0, &b), 0);
	eb = ventity(b, TTM_SCHED_PRIORITY_NORMAL);
	assert_int_equal(ttm_sched_cb_submit(eb, &args, &x), 0);
	y = vpush(m, ea, 0, 0, 10, 1, ttm_fence_get(x));
	advance(m, 1000);
	assert_int_equal(ttm_fence_get_status(x), 1);
	assert_string_equal(m->trace, "0 run 0\n10 gpu 0 0-10 0\n"
				      "10 fin 0 1\n10 free 0\n");
	ttm_sched_entity_destroy(eb, 0);
	ttm_sched_entity_destroy(ea, 0);
	ttm_sched_destroy(b);
	ttm_sched_destroy(a);
	ttm_fence_put(x);
	ttm_fence_put(y);
	vm_free(m);
}

/* A mixed run: two rings, priorities, a dependency, a timeout, a kill. */
static void scenario(struct vm *m)
{
	struct ttm_sched *s1 = vsched_new(m, "ring1", 2, 0);
	struct ttm_sched *s2 = vsched_new(m, "ring2", 1, 300000);
	struct ttm_sched_entity *a = ventity(s1, TTM_SCHED_PRIORITY_NORMAL);
	struct ttm_sched_entity *b = ventity(s1, TTM_SCHED_PRIORITY_HIGH);
	struct ttm_sched_entity *c = ventity(s2, TTM_SCHED_PRIORITY_LOW);
	struct ttm_fence *fin[12];

	for (int i = 0; i < 6; i++)
		fin[i] = vpush(m, i % 2 ? a : b, i, 0, 10 * (i + 1), 1, NULL);
	fin[6] = vpush(m, c, 6, 1, 40, 1, ttm_fence_get(fin[3]));
	fin[7] = vpush(m, c, 7, 1, MOCK_HW, 1, NULL);
	fin[8] = vpush(m, c, 8, 1, 5, 1, NULL);
	advance(m, 5); /* b: 0 and 2 on the ring, 4 queued */
	for (int i = 9; i < 12; i++)
		fin[i] = vpush(m, a, i, 0, 7, 2, ttm_fence_get(fin[6]));
	ttm_sched_entity_destroy(b, 0);
	advance(m, 1000);
	ttm_sched_entity_destroy(a, 0);
	ttm_sched_entity_destroy(c, 0);
	ttm_sched_destroy(s2);
	ttm_sched_destroy(s1);
	put_all(fin, 12);
}

/* The same calls give the same trace, whatever the host. */
static void test_v_same_trace_twice(void **state)
{
	struct vm *m1 = vm_new(2, 0), *m2 = vm_new(2, 0);

	(void)state;
	scenario(m1);
	scenario(m2);
	assert_true(m1->len > 0);
	assert_non_null(strstr(m1->trace, " timeout 7\n"));
	assert_non_null(strstr(m1->trace, " run 9\n"));
	assert_non_null(strstr(m1->trace, "40 fin 4 -3\n"));
	assert_string_equal(m1->trace, m2->trace);
	vm_free(m1);
	vm_free(m2);
}

/* A real-time GPU's scheduler follows real time: it has its thread. */
static void test_v_realtime_gpu(void **state)
{
	struct ttm_gpu *gpu = NULL;
	struct ttm_sched_options o = {
		.name = "rt", .credit_limit = 1, .ops = &v_ops,
	};
	struct ttm_sched *s = NULL;
	struct ttm_sched_entity *e;
	struct ttm_fence *fin;
	struct vm *m = calloc(1, sizeof(*m));

	(void)state;
	assert_non_null(m);
	assert_int_equal(ttm_gpu_create(1, NULL, &gpu), 0);
	m->gpu = gpu;
	o.gpu = gpu;
	assert_int_equal(ttm_sched_create(&o, &s), 0);
	e = ventity(s, TTM_SCHED_PRIORITY_NORMAL);
	fin = vpush(m, e, 0, 0, 10, 1, NULL);
	/* Nobody advances anything: the thread runs it on the GPU. */
	assert_int_equal(ttm_fence_wait(fin, false, -1), 0);
	assert_int_equal(ttm_fence_get_status(fin), 1);
	ttm_fence_put(fin);
	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	assert_int_equal(m->n_freed, 1);
	vm_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, mock_fence_setup, \
					     mock_fence_teardown)
		T(test_v_basic),
		T(test_v_priority),
		T(test_v_fairness),
		T(test_v_deps_across),
		T(test_v_deps_same_context_error),
		T(test_v_credit_limit),
		T(test_v_timeout),
		T(test_v_timeout_rounding),
		T(test_v_kill_order),
		T(test_v_flush),
		T(test_v_destroy_waits_for_driver_fence),
		T(test_v_destroy_no_timeout_spin),
		T(test_v_ready_in_same_step),
		T(test_v_same_trace_twice),
		T(test_v_realtime_gpu),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
