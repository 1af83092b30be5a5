// SPDX-License-Identifier: MIT
/*
 * Fence containers (ttmsim/fence_container.h) and the reservation calls
 * built on them (ttmsim/resv.h):
 *
 *  - arrays: all and any, lazy enabling (nothing armed on the children
 *    until someone waits), the first error (through the callbacks and
 *    through a peek), children signalled before the wait, a waiter in
 *    another thread, what is refused;
 *  - chains: the context and seqno of a link, errors, out-of-order
 *    signals, gaps, find_seqno, garbage collection of signalled links
 *    (the dropped link really released, and released while other walkers
 *    read the chain: run it under ASan and TSan), a long chain released
 *    without recursing;
 *  - unwrap and merge: nested containers, dedup by context keeping the
 *    later (64-bit and wrapping 32-bit seqnos), the stub and the fences
 *    signalled fine dropped, failed ones kept, merges of merges flat;
 *  - deadlines passed on to the pending fences inside;
 *  - sync-file descriptors of containers: export, poll, import;
 *  - ttm_resv_get_singleton() and ttm_resv_implicit_deps().
 *
 * And the kernel's self-tests, written afresh for cmocka:
 * st-dma-fence-chain.c (sanitycheck, find_seqno, find_signaled,
 * find_out_of_order, find_gap, find_race, signal_forward,
 * signal_backward, wait_forward, wait_backward, wait_random) and
 * st-dma-fence-unwrap.c (sanitycheck, unwrap_array, unwrap_chain,
 * unwrap_chain_array, unwrap_merge, unwrap_merge_duplicate,
 * unwrap_merge_seqno, unwrap_merge_order, unwrap_merge_complex,
 * unwrap_merge_complex_seqno, dedup_empty). Not written: find_race's
 * kthread count (one thread per CPU; here two threads, the machine's
 * share) is the only adaptation; dedup_empty calls the kernel's internal
 * dma_fence_dedup_array(), so it is expressed as the merge of nothing;
 * the kernel's mock fences with context 0 in st-dma-fence-chain.c are
 * kept (context 0 is never allocated here, but may be used). Every case
 * of both files is covered.
 */
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "lib/helpers.h"
#include "ttmsim/fence_container.h"
#include "ttmsim/resv.h"
#include "util/compiler.h"

#define NS_PER_S 1000000000L
#define LIMIT_NS ((int64_t)WAIT_LIMIT_S * NS_PER_S)
#define CHAIN_SZ (4 << 10)

#define TEST(fn) { .name = #fn, .test_func = fn, .setup_func = checks_reset }

/* ---- a driver's fence ---------------------------------------------------- */

static int mock_enables, mock_releases;         /* atomic */

static const char *mock_name(struct ttm_fence *f)
{
	(void)f;
	return "mock";
}

static bool mock_enable(struct ttm_fence *f)
{
	(void)f;
	__atomic_add_fetch(&mock_enables, 1, __ATOMIC_RELAXED);
	return true;
}

static void mock_release(struct ttm_fence *f)
{
	__atomic_add_fetch(&mock_releases, 1, __ATOMIC_RELAXED);
	free(f);
}

static int mock_deadlines;      /* atomic */

static void mock_set_deadline(struct ttm_fence *f, uint64_t deadline_ns)
{
	(void)f;
	(void)deadline_ns;
	__atomic_add_fetch(&mock_deadlines, 1, __ATOMIC_RELAXED);
}

static const struct ttm_fence_ops mock_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = mock_name,
	.get_timeline_name = mock_name,
	.enable_signaling = mock_enable,
	.release = mock_release,
	.set_deadline = mock_set_deadline,
};

/* 32-bit seqnos that wrap, as most hardware rings. */
static const struct ttm_fence_ops mock_ops32 = {
	.use_64bit_seqno = false,
	.get_driver_name = mock_name,
	.get_timeline_name = mock_name,
	.enable_signaling = mock_enable,
	.release = mock_release,
};

static struct ttm_fence *mock_fence_ops(const struct ttm_fence_ops *ops,
					uint64_t context, uint64_t seqno)
{
	struct ttm_fence *f = malloc(sizeof(*f));

	assert_non_null(f);
	ttm_fence_init(f, ops, context, seqno);
	return f;
}

static struct ttm_fence *mock_fence_at(uint64_t context, uint64_t seqno)
{
	return mock_fence_ops(&mock_ops, context, seqno);
}

static struct ttm_fence *mock_fence(void)
{
	return mock_fence_at(ttm_fence_context_alloc(1), 1);
}

static void counters_reset(void)
{
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	__atomic_store_n(&mock_enables, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&mock_releases, 0, __ATOMIC_RELAXED);
}

static int releases(void)
{
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	return __atomic_load_n(&mock_releases, __ATOMIC_RELAXED);
}

/* An array of @n fences, whose references pass to it. */
static struct ttm_fence *mock_array_any(bool any, unsigned int n, ...)
{
	struct ttm_fence **fences = calloc(n, sizeof(*fences)), *a = NULL;
	va_list ap;
	unsigned int i;

	assert_non_null(fences);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		fences[i] = va_arg(ap, struct ttm_fence *);
	va_end(ap);
	assert_int_equal(ttm_fence_array_create(n, fences,
						ttm_fence_context_alloc(1), 1,
						any, &a), 0);
	return a;
}

#define mock_array(...) mock_array_any(false, __VA_ARGS__)

/* A link after @prev for @fence; both references pass to it. */
static struct ttm_fence *chain_new(struct ttm_fence *prev,
				   struct ttm_fence *fence, uint64_t seqno)
{
	struct ttm_fence_chain *c = NULL;

	assert_int_equal(ttm_fence_chain_alloc(&c), 0);
	return ttm_fence_chain_init(c, prev, fence, seqno);
}

static void signal_ok(struct ttm_fence *f)
{
	assert_int_equal(ttm_fence_signal(f, 0), 0);
}

/* Records the status its fence signalled with. */
struct status_cb {
	struct ttm_fence_cb cb;
	int calls, status;      /* atomic */
};

static void status_func(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	struct status_cb *s = container_of(cb, struct status_cb, cb);

	__atomic_store_n(&s->status, ttm_fence_get_status(f),
			 __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE);
}

/* ---- arrays -------------------------------------------------------------- */

static void test_array_all(void **state)
{
	struct ttm_fence *f[3], *a;
	struct status_cb s = { 0 };
	unsigned int i;

	(void)state;
	counters_reset();
	for (i = 0; i < 3; i++)
		f[i] = mock_fence();
	a = mock_array(3, ttm_fence_get(f[0]), ttm_fence_get(f[1]),
		       ttm_fence_get(f[2]));
	assert_true(ttm_fence_is_array(a));
	assert_true(ttm_fence_is_container(a));
	assert_false(ttm_fence_is_chain(a));
	assert_int_equal(ttm_fence_array_count(a), 3);
	assert_ptr_equal(ttm_fence_array_fence(a, 2), f[2]);
	assert_null(ttm_fence_array_fence(a, 3));
	assert_null(ttm_fence_array_fence(f[0], 0));
	assert_string_equal(ttm_fence_driver_name(a), "ttm_fence_array");

	/* Lazy: peeks and a wait of 0 arm nothing on the children. */
	assert_false(ttm_fence_is_signaled(a));
	assert_int_equal(ttm_fence_wait(a, false, 0), -ETIME);
	assert_int_equal(__atomic_load_n(&mock_enables, __ATOMIC_RELAXED), 0);
	assert_int_equal(ttm_fence_add_callback(a, &s.cb, status_func), 0);
	assert_int_equal(__atomic_load_n(&mock_enables, __ATOMIC_RELAXED), 3);

	signal_ok(f[1]);
	signal_ok(f[0]);
	assert_false(ttm_fence_is_signaled(a));
	assert_int_equal(s.calls, 0);
	signal_ok(f[2]);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, 1);
	assert_int_equal(ttm_fence_get_status(a), 1);

	/* The array holds its children until it goes. */
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
	assert_int_equal(releases(), 0);
	ttm_fence_put(a);
	assert_int_equal(releases(), 3);
	assert_checks_passed();
}

static void test_array_any(void **state)
{
	struct ttm_fence *f[3], *a;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++)
		f[i] = mock_fence();
	a = mock_array_any(true, 3, ttm_fence_get(f[0]), ttm_fence_get(f[1]),
			   ttm_fence_get(f[2]));
	/* Armed: the first child to signal signals it, with its error. */
	ttm_fence_enable_sw_signaling(a);
	assert_false(ttm_fence_is_signaled(a));
	assert_int_equal(ttm_fence_signal(f[2], -EIO), 0);
	assert_int_equal(ttm_fence_get_status(a), -EIO);
	signal_ok(f[0]);
	assert_int_equal(ttm_fence_get_status(a), -EIO);
	ttm_fence_put(a);
	/* The others' callbacks still hold it: they let it go. */
	signal_ok(f[1]);

	/* Not armed: a peek finds any signalled child. */
	for (i = 0; i < 3; i++) {
		ttm_fence_put(f[i]);
		f[i] = mock_fence();
	}
	a = mock_array_any(true, 3, ttm_fence_get(f[0]), ttm_fence_get(f[1]),
			   ttm_fence_get(f[2]));
	assert_false(ttm_fence_is_signaled(a));
	signal_ok(f[1]);
	assert_int_equal(ttm_fence_get_status(a), 1);
	ttm_fence_put(a);
	for (i = 0; i < 3; i++) {
		if (i != 1)
			signal_ok(f[i]);
		ttm_fence_put(f[i]);
	}
	assert_checks_passed();
}

enum array_mode {
	ARMED,          /* armed first: the callbacks see the signals */
	PEEKED,         /* never armed: a peek polls the children */
	ENABLED_AFTER,  /* armed once all signalled: enable says so */
	WAITED_AFTER,   /* a wait once all signalled: its peek finds it */
};

/* Three children failing with @err[], signalled in @order[]. */
static void array_error_case(enum array_mode mode, const int err[3],
			     const unsigned int order[3], int expect)
{
	struct ttm_fence *f[3], *a;
	unsigned int i;

	for (i = 0; i < 3; i++)
		f[i] = mock_fence();
	a = mock_array(3, ttm_fence_get(f[0]), ttm_fence_get(f[1]),
		       ttm_fence_get(f[2]));
	if (mode == ARMED)
		assert_int_equal(ttm_fence_wait(a, false, 1000), -ETIME);
	for (i = 0; i < 3; i++)
		assert_int_equal(ttm_fence_signal(f[order[i]],
						  err[order[i]]), 0);
	if (mode == ENABLED_AFTER)
		ttm_fence_enable_sw_signaling(a);
	if (mode == WAITED_AFTER)
		assert_int_equal(ttm_fence_wait(a, false, LIMIT_NS), 0);
	assert_int_equal(ttm_fence_get_status(a), expect);
	ttm_fence_put(a);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
}

/* The first error seen wins: in time when armed, in array order if not. */
static void test_array_errors(void **state)
{
	static const struct {
		enum array_mode mode;
		int err[3];
		unsigned int order[3];
		int expect;
	} cases[] = {
		{ ARMED, { -EIO, 0, -ETIMEDOUT }, { 2, 0, 1 }, -ETIMEDOUT },
		{ PEEKED, { 0, -EIO, -ETIMEDOUT }, { 2, 1, 0 }, -EIO },
		{ ENABLED_AFTER, { 0, -ENOMEM, 0 }, { 1, 0, 2 }, -ENOMEM },
		{ WAITED_AFTER, { 0, 0, -ENOMEM }, { 2, 0, 1 }, -ENOMEM },
		{ ARMED, { 0, 0, 0 }, { 1, 2, 0 }, 1 },
		{ PEEKED, { 0, 0, 0 }, { 0, 1, 2 }, 1 },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		array_error_case(cases[i].mode, cases[i].err, cases[i].order,
				 cases[i].expect);
	assert_checks_passed();
}

static void test_array_invalid(void **state)
{
	struct ttm_fence *f = mock_fence(), *a, *c, *out = NULL;
	struct ttm_fence **v = calloc(2, sizeof(*v));

	(void)state;
	assert_non_null(v);
	assert_int_equal(ttm_fence_array_create(0, v, 1, 1, false, &out),
			 -EINVAL);
	/* No container in an array, as in the kernel: merge them instead. */
	a = mock_array(1, ttm_fence_get(f));
	c = chain_new(NULL, ttm_fence_get(f), 1);
	v[0] = f;
	v[1] = a;
	assert_int_equal(ttm_fence_array_create(2, v, 1, 1, false, &out),
			 -EINVAL);
	v[1] = c;
	assert_int_equal(ttm_fence_array_create(2, v, 1, 1, false, &out),
			 -EINVAL);
	assert_null(out);
	free(v);
	signal_ok(f);
	ttm_fence_put(a);
	ttm_fence_put(c);
	ttm_fence_put(f);
}

static void *wait_forever(void *arg)
{
	CHECK_INT(ttm_fence_wait(arg, false, LIMIT_NS), 0);
	return NULL;
}

static void test_array_waiter_thread(void **state)
{
	struct ttm_fence *f[4], *a;
	pthread_t t;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		f[i] = mock_fence();
	a = mock_array(4, ttm_fence_get(f[0]), ttm_fence_get(f[1]),
		       ttm_fence_get(f[2]), ttm_fence_get(f[3]));
	t = start_thread(wait_forever, a);
	assert_true(wait_for_fence_waiters(a, 1));
	for (i = 0; i < 4; i++) {
		assert_false(ttm_fence_is_signaled(a));
		signal_ok(f[3 - i]);
	}
	join_thread(t);
	assert_int_equal(ttm_fence_get_status(a), 1);
	ttm_fence_put(a);
	for (i = 0; i < 4; i++)
		ttm_fence_put(f[i]);
	assert_checks_passed();
}

/* ---- chains -------------------------------------------------------------- */

static void test_chain_context(void **state)
{
	struct ttm_fence *p = mock_fence(), *c1, *c2, *c3, *c4;

	(void)state;
	/* After a plain fence: a timeline of its own. */
	c1 = chain_new(ttm_fence_get(p), mock_fence(), 5);
	assert_true(ttm_fence_is_chain(c1));
	assert_true(ttm_fence_context(c1) != ttm_fence_context(p));
	assert_int_equal(ttm_fence_seqno(c1), 5);
	/* A later point joins it. */
	c2 = chain_new(ttm_fence_get(c1), mock_fence(), 7);
	assert_int_equal(ttm_fence_context(c2), ttm_fence_context(c1));
	assert_int_equal(ttm_fence_seqno(c2), 7);
	/* An earlier or equal one does not, and is never before @prev. */
	c3 = chain_new(ttm_fence_get(c2), mock_fence(), 6);
	assert_true(ttm_fence_context(c3) != ttm_fence_context(c2));
	assert_int_equal(ttm_fence_seqno(c3), 7);
	c4 = chain_new(ttm_fence_get(c2), mock_fence(), 7);
	assert_true(ttm_fence_context(c4) != ttm_fence_context(c2));
	assert_int_equal(ttm_fence_seqno(c4), 7);
	assert_ptr_equal(ttm_fence_chain_contained(p), p);
	assert_false(ttm_fence_is_signaled(ttm_fence_chain_contained(c4)));

	signal_ok(p);
	signal_ok(ttm_fence_chain_contained(c1));
	signal_ok(ttm_fence_chain_contained(c2));
	signal_ok(ttm_fence_chain_contained(c3));
	assert_false(ttm_fence_is_signaled(c4));
	signal_ok(ttm_fence_chain_contained(c4));
	assert_true(ttm_fence_is_signaled(c4));
	ttm_fence_put(c4);
	ttm_fence_put(c3);
	ttm_fence_put(c2);
	ttm_fence_put(c1);
	ttm_fence_put(p);
}

struct fence_chains {
	unsigned int n;
	struct ttm_fence **fences, **chains, *tail;
};

static uint64_t seqno_inc(unsigned int i)
{
	return i + 1;
}

static uint64_t seqno_inc2(unsigned int i)
{
	return 2 * i + 2;
}

/* The kernel's chains: mock fences on context 0, links holding refs. */
static void chains_init(struct fence_chains *fc, unsigned int n,
			uint64_t (*seqno_fn)(unsigned int))
{
	unsigned int i;

	fc->n = n;
	fc->fences = calloc(n, sizeof(*fc->fences));
	fc->chains = calloc(n, sizeof(*fc->chains));
	assert_non_null(fc->fences);
	assert_non_null(fc->chains);
	fc->tail = NULL;
	for (i = 0; i < n; i++) {
		fc->fences[i] = mock_fence_at(0, 0);
		fc->chains[i] = chain_new(ttm_fence_get(fc->tail),
					  ttm_fence_get(fc->fences[i]),
					  seqno_fn(i));
		fc->tail = fc->chains[i];
	}
}

static void chains_fini(struct fence_chains *fc)
{
	unsigned int i;

	for (i = 0; i < fc->n; i++) {
		/* -EINVAL if signalled already. */
		ttm_fence_signal(fc->fences[i], 0);
		ttm_fence_put(fc->fences[i]);
	}
	free(fc->fences);
	for (i = 0; i < fc->n; i++)
		ttm_fence_put(fc->chains[i]);
	free(fc->chains);
}

/* find_seqno from the tail, which must succeed. */
static struct ttm_fence *find_from(struct ttm_fence *start, uint64_t seqno)
{
	struct ttm_fence *f = ttm_fence_get(start);

	assert_int_equal(ttm_fence_chain_find_seqno(&f, seqno), 0);
	ttm_fence_put(f);       /* kept alive by the chains array */
	return f;
}

static void test_kernel_chain_sanitycheck(void **state)
{
	struct ttm_fence *f = mock_fence_at(0, 0), *chain;

	(void)state;
	chain = chain_new(NULL, ttm_fence_get(f), 1);
	signal_ok(f);
	ttm_fence_put(f);
	ttm_fence_put(chain);
}

static void test_kernel_find_seqno(void **state)
{
	struct fence_chains fc;
	struct ttm_fence *f;
	unsigned int i;

	(void)state;
	chains_init(&fc, 64, seqno_inc);
	f = ttm_fence_get(fc.tail);
	assert_int_equal(ttm_fence_chain_find_seqno(&f, 0), 0);
	assert_ptr_equal(f, fc.tail);
	ttm_fence_put(f);
	for (i = 0; i < fc.n; i++) {
		assert_ptr_equal(find_from(fc.tail, i + 1), fc.chains[i]);
		/* Itself. */
		assert_ptr_equal(find_from(fc.chains[i], i + 1), fc.chains[i]);
		/* A future point. */
		f = ttm_fence_get(fc.chains[i]);
		assert_int_equal(ttm_fence_chain_find_seqno(&f, i + 2),
				 -EINVAL);
		assert_ptr_equal(f, fc.chains[i]);
		ttm_fence_put(f);
		/* The previous one (0: no-op). */
		f = find_from(fc.chains[i], i);
		assert_ptr_equal(f, i ? fc.chains[i - 1] : fc.chains[i]);
	}
	/* Not a link. */
	f = ttm_fence_get(fc.fences[0]);
	assert_int_equal(ttm_fence_chain_find_seqno(&f, 1), -EINVAL);
	ttm_fence_put(f);
	chains_fini(&fc);
}

static void test_kernel_find_signaled(void **state)
{
	struct fence_chains fc;
	struct ttm_fence *f;

	(void)state;
	chains_init(&fc, 2, seqno_inc);
	signal_ok(fc.fences[0]);
	f = ttm_fence_get(fc.tail);
	assert_int_equal(ttm_fence_chain_find_seqno(&f, 1), 0);
	/* Point 1 has passed: nothing to wait for (or its own link). */
	assert_true(!f || f == fc.chains[0]);
	ttm_fence_put(f);
	chains_fini(&fc);
}

static void test_kernel_find_out_of_order(void **state)
{
	struct fence_chains fc;
	struct ttm_fence *f;

	(void)state;
	chains_init(&fc, 3, seqno_inc);
	signal_ok(fc.fences[1]);
	f = ttm_fence_get(fc.tail);
	assert_int_equal(ttm_fence_chain_find_seqno(&f, 2), 0);
	/*
	 * Point 2's own fence signalled but point 1's has not, and a point
	 * is reached only once all before it are: wait for link 1 (the
	 * walk dropped link 2).
	 */
	assert_ptr_equal(f, fc.chains[0]);
	ttm_fence_put(f);
	chains_fini(&fc);
}

static void test_kernel_find_gap(void **state)
{
	struct fence_chains fc;
	unsigned int i;

	(void)state;
	chains_init(&fc, 64, seqno_inc2);
	for (i = 0; i < fc.n; i++) {
		/* An odd point is in a gap: the first later link. */
		assert_ptr_equal(find_from(fc.tail, 2 * i + 1), fc.chains[i]);
		assert_ptr_equal(find_from(fc.chains[i], 2 * i + 2),
				 fc.chains[i]);
	}
	chains_fini(&fc);
}

struct find_race {
	struct fence_chains fc;
	int stop;               /* atomic */
	unsigned int seed;
	unsigned long loops;    /* atomic */
};

static void *find_race_thread(void *arg)
{
	struct find_race *r = arg;
	unsigned int seed = __atomic_add_fetch(&r->seed, 7919,
					       __ATOMIC_RELAXED);

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct ttm_fence *f = ttm_fence_get(r->fc.tail);
		uint64_t seqno = (uint64_t)rand_r(&seed) % r->fc.n + 1;

		if (!CHECK_INT(ttm_fence_chain_find_seqno(&f, seqno), 0)) {
			ttm_fence_put(f);
			break;
		}
		/* Only the link of the point finds itself again. */
		if (f && ttm_fence_seqno(f) == seqno)
			CHECK_INT(ttm_fence_chain_find_seqno(&f, seqno), 0);
		ttm_fence_put(f);
		ttm_fence_signal(r->fc.fences[rand_r(&seed) % (r->fc.n - 1)],
				 0);
		__atomic_add_fetch(&r->loops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_kernel_find_race(void **state)
{
	struct find_race r = { .seed = 1 };
	pthread_t t[2];
	unsigned int i, count = 0;

	(void)state;
	chains_init(&r.fc, CHAIN_SZ, seqno_inc);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		t[i] = start_thread(find_race_thread, &r);
	usleep(300 * 1000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		join_thread(t[i]);
	for (i = 0; i < r.fc.n; i++)
		count += ttm_fence_is_signaled(r.fc.fences[i]);
	print_message("  %lu lookups, %u of %u fences signalled\n", r.loops,
		      count, r.fc.n);
	chains_fini(&r.fc);
	assert_checks_passed();
}

static void test_kernel_signal_forward(void **state)
{
	struct fence_chains fc;
	unsigned int i;

	(void)state;
	chains_init(&fc, 64, seqno_inc);
	for (i = 0; i < fc.n; i++) {
		signal_ok(fc.fences[i]);
		assert_true(ttm_fence_is_signaled(fc.chains[i]));
		if (i + 1 < fc.n)
			assert_false(ttm_fence_is_signaled(fc.chains[i + 1]));
	}
	chains_fini(&fc);
}

static void test_kernel_signal_backward(void **state)
{
	struct fence_chains fc;
	unsigned int i;

	(void)state;
	chains_init(&fc, 64, seqno_inc);
	for (i = fc.n; i--;) {
		signal_ok(fc.fences[i]);
		if (i > 0)
			assert_false(ttm_fence_is_signaled(fc.chains[i]));
	}
	for (i = 0; i < fc.n; i++)
		assert_true(ttm_fence_is_signaled(fc.chains[i]));
	chains_fini(&fc);
}

/* Fisher-Yates, as the kernel's randomise_fences(). */
static void shuffle(struct ttm_fence **v, unsigned int n, unsigned int seed)
{
	while (--n) {
		unsigned int j = (unsigned int)rand_r(&seed) % (n + 1);
		struct ttm_fence *tmp = v[n];

		v[n] = v[j];
		v[j] = tmp;
	}
}

enum wait_order { WAIT_FORWARD, WAIT_BACKWARD, WAIT_RANDOM };

static void wait_chains(enum wait_order order)
{
	struct fence_chains fc;
	pthread_t t;
	unsigned int i;

	chains_init(&fc, CHAIN_SZ, seqno_inc);
	if (order == WAIT_RANDOM)
		shuffle(fc.fences, fc.n, 42);
	t = start_thread(wait_forever, fc.tail);
	assert_true(wait_for_fence_waiters(fc.tail, 1));
	for (i = 0; i < fc.n; i++)
		signal_ok(fc.fences[order == WAIT_BACKWARD ? fc.n - 1 - i : i]);
	join_thread(t);
	assert_true(ttm_fence_is_signaled(fc.tail));
	chains_fini(&fc);
	assert_checks_passed();
}

static void test_kernel_wait_forward(void **state)
{
	(void)state;
	wait_chains(WAIT_FORWARD);
}

static void test_kernel_wait_backward(void **state)
{
	(void)state;
	wait_chains(WAIT_BACKWARD);
}

static void test_kernel_wait_random(void **state)
{
	(void)state;
	wait_chains(WAIT_RANDOM);
}

/* A link signals with its own fence's error; later points do not. */
static void test_chain_errors(void **state)
{
	struct fence_chains fc;
	struct status_cb s = { 0 };

	(void)state;
	chains_init(&fc, 3, seqno_inc);
	assert_int_equal(ttm_fence_add_callback(fc.chains[1], &s.cb,
						status_func), 0);
	assert_int_equal(ttm_fence_signal(fc.fences[1], -EIO), 0);
	assert_int_equal(s.calls, 0);
	signal_ok(fc.fences[2]);
	signal_ok(fc.fences[0]);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.status, -EIO);
	assert_int_equal(ttm_fence_get_status(fc.chains[2]), 1);
	assert_int_equal(ttm_fence_get_status(fc.chains[0]), 1);
	chains_fini(&fc);
	assert_checks_passed();
}

/* Out of order, armed: each link signals when its last fence does. */
static void test_chain_out_of_order(void **state)
{
	struct fence_chains fc;
	struct status_cb s[4] = { { { 0 } } };
	static const unsigned int order[4] = { 2, 0, 3, 1 };
	static const int expect[4][4] = {
		{ 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 1, 1, 1 },
	};
	unsigned int i, j;

	(void)state;
	chains_init(&fc, 4, seqno_inc);
	for (i = 0; i < 4; i++)
		assert_int_equal(ttm_fence_add_callback(fc.chains[i], &s[i].cb,
							status_func), 0);
	for (i = 0; i < 4; i++) {
		signal_ok(fc.fences[order[i]]);
		for (j = 0; j < 4; j++)
			assert_int_equal(s[j].calls, expect[i][j]);
	}
	chains_fini(&fc);
	assert_checks_passed();
}

/*
 * A walk drops a link whose fence has signalled from the chain: the link
 * is released once nobody else holds it, and its fence with it.
 */
static void test_chain_gc(void **state)
{
	struct ttm_fence *f[3], *c[3], *it;
	struct ttm_fence_unwrap cursor;
	unsigned int i, n = 0;

	(void)state;
	counters_reset();
	for (i = 0; i < 3; i++) {
		f[i] = mock_fence();
		c[i] = chain_new(i ? ttm_fence_get(c[i - 1]) : NULL,
				 ttm_fence_get(f[i]), i + 1);
	}
	signal_ok(f[1]);
	ttm_fence_put(f[1]);
	ttm_fence_put(c[1]);
	/* Link 2 still holds link 1, which holds fence 1. */
	assert_int_equal(releases(), 0);

	it = ttm_fence_chain_walk(ttm_fence_get(c[2]));
	assert_ptr_equal(it, c[0]);
	ttm_fence_put(it);
	assert_int_equal(releases(), 1);

	/* The chain is now 2 -> 0 for everyone. */
	ttm_fence_unwrap_for_each(it, &cursor, c[2]) {
		assert_true(it == f[2] || it == f[0]);
		n++;
	}
	assert_int_equal(n, 2);

	/* The whole chain signalled: a walk from the tail ends at once. */
	signal_ok(f[0]);
	it = ttm_fence_chain_walk(ttm_fence_get(c[2]));
	assert_null(it);
	signal_ok(f[2]);
	ttm_fence_put(c[2]);
	ttm_fence_put(c[0]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[2]);
	assert_int_equal(releases(), 3);
	assert_checks_passed();
}

/*
 * Walkers race with the collection of links that nobody else holds: each
 * link dropped by one walker is released (and its driver fence freed)
 * while the others may still be reading it. Run under ASan and TSan: a
 * release before the readers left their sections is a use after free.
 */
static void shuffle(struct ttm_fence **v, unsigned int n, unsigned int seed);

struct gc_race {
	struct ttm_fence *tail;
	struct ttm_fence **fences;      /* no references: see below */
	unsigned int n;
	int stop;                       /* atomic */
	unsigned int seed;              /* atomic */
	unsigned long walks;            /* atomic */
};

static void *gc_race_walker(void *arg)
{
	struct gc_race *r = arg;
	unsigned int seed = __atomic_add_fetch(&r->seed, 7919,
					       __ATOMIC_RELAXED);
	struct ttm_fence_unwrap cursor;
	struct ttm_fence *f;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t seqno = (uint64_t)rand_r(&seed) % r->n + 1;
		unsigned int k = 0;

		f = ttm_fence_get(r->tail);
		if (!CHECK_INT(ttm_fence_chain_find_seqno(&f, seqno), 0))
			break;
		/*
		 * Not the point itself when earlier ones are pending (see
		 * find_out_of_order); the link of the point finds itself.
		 */
		CHECK(!f || ttm_fence_is_chain(f));
		if (f && ttm_fence_seqno(f) == seqno)
			CHECK_INT(ttm_fence_chain_find_seqno(&f, seqno), 0);
		ttm_fence_put(f);
		ttm_fence_unwrap_for_each(f, &cursor, r->tail)
			if (++k > r->n)
				break;
		CHECK(k <= r->n);
		ttm_fence_unwrap_end(&cursor);
		__atomic_add_fetch(&r->walks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void gc_race_round(unsigned int seed)
{
	struct gc_race r = { .n = 512, .seed = seed };
	unsigned int i;
	pthread_t t[2];

	counters_reset();
	r.fences = calloc(r.n, sizeof(*r.fences));
	assert_non_null(r.fences);
	for (i = 0; i < r.n; i++) {
		r.fences[i] = mock_fence();
		/* The chain holds the only references but ours to the tail. */
		r.tail = chain_new(r.tail, r.fences[i], i + 1);
	}
	for (i = 0; i < ARRAY_SIZE(t); i++)
		t[i] = start_thread(gc_race_walker, &r);
	/*
	 * Signal all but the tail's fence in random order; each stays
	 * allocated while its link lives, and it is signalled before the
	 * link can go.
	 */
	shuffle(r.fences, r.n - 1, seed + 1);
	for (i = 0; i < r.n - 1; i++) {
		/* Alive until it signals: its link holds it till then. */
		struct ttm_fence *f = ttm_fence_get(r.fences[i]);

		signal_ok(f);
		ttm_fence_put(f);
		if (i % 16 == 0)
			sched_yield();
	}
	usleep(50 * 1000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		join_thread(t[i]);
	/* Every link before the tail was collected: their fences went. */
	assert_null(ttm_fence_chain_walk(ttm_fence_get(r.tail)));
	assert_int_equal(releases(), (int)r.n - 1);
	signal_ok(ttm_fence_chain_contained(r.tail));
	ttm_fence_put(r.tail);
	assert_int_equal(releases(), (int)r.n);
	print_message("  %lu walks\n", r.walks);
	free(r.fences);
}

/* A few rounds: the window of a reader between load and tryget is short. */
static void test_chain_gc_race(void **state)
{
	unsigned int round;

	(void)state;
	for (round = 0; round < 4; round++)
		gc_race_round(round * 2 + 3);
	assert_checks_passed();
}

/* A long chain that only its tail holds goes without recursing. */
static void test_chain_long_release(void **state)
{
	struct ttm_fence *tail = NULL, *f;
	unsigned int i, n = 1u << 17;

	(void)state;
	counters_reset();
	for (i = 0; i < n; i++) {
		f = mock_fence();
		tail = chain_new(tail, ttm_fence_get(f), i + 1);
		ttm_fence_put(f);       /* unsignalled: the link keeps it */
	}
	assert_false(ttm_fence_is_signaled(tail));
	ttm_fence_put(tail);
	assert_int_equal(releases(), (int)n);
}

/* A deadline reaches every pending fence inside a container. */
static void test_set_deadline(void **state)
{
	struct ttm_fence *f[4], *a, *chain;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		f[i] = mock_fence();
	a = mock_array(2, ttm_fence_get(f[2]), ttm_fence_get(f[3]));
	chain = chain_new(chain_new(chain_new(NULL, ttm_fence_get(f[0]), 1),
				    ttm_fence_get(f[1]), 2), a, 3);
	signal_ok(f[1]);
	__atomic_store_n(&mock_deadlines, 0, __ATOMIC_RELAXED);
	ttm_fence_set_deadline(chain, 1000);
	/* f[0], f[2], f[3]: f[1] has signalled. */
	assert_int_equal(__atomic_load_n(&mock_deadlines, __ATOMIC_RELAXED), 3);
	for (i = 0; i < 4; i++) {
		if (i != 1)
			signal_ok(f[i]);
		ttm_fence_put(f[i]);
	}
	ttm_fence_set_deadline(chain, 2000);
	assert_int_equal(__atomic_load_n(&mock_deadlines, __ATOMIC_RELAXED), 3);
	ttm_fence_put(chain);
}

/* ---- unwrap and merge: the kernel's st-dma-fence-unwrap.c ---------------- */

/* Whether unwrapping @head gives exactly @n fences, each of @want once. */
static bool unwraps_to(struct ttm_fence *head, unsigned int n,
		       struct ttm_fence *const *want)
{
	struct ttm_fence_unwrap cursor;
	struct ttm_fence *f;
	unsigned int seen = 0, i, found = 0;

	ttm_fence_unwrap_for_each(f, &cursor, head) {
		for (i = 0; i < n; i++)
			if (f == want[i] && !(seen & (1u << i))) {
				seen |= 1u << i;
				break;
			}
		if (i == n) {
			ttm_fence_unwrap_end(&cursor);
			return false;
		}
		found++;
	}
	return found == n;
}

/* The same, in this order. */
static bool unwraps_in_order(struct ttm_fence *head, unsigned int n,
			     struct ttm_fence *const *want)
{
	struct ttm_fence_unwrap cursor;
	struct ttm_fence *f;
	unsigned int i = 0;

	ttm_fence_unwrap_for_each(f, &cursor, head) {
		if (i >= n || f != want[i]) {
			ttm_fence_unwrap_end(&cursor);
			return false;
		}
		i++;
	}
	return i == n;
}

static struct ttm_fence *merge_n(unsigned int n, ...)
{
	struct ttm_fence *in[8], *out = NULL;
	va_list ap;
	unsigned int i;

	assert_true(n <= ARRAY_SIZE(in));
	va_start(ap, n);
	for (i = 0; i < n; i++)
		in[i] = va_arg(ap, struct ttm_fence *);
	va_end(ap);
	assert_int_equal(ttm_fence_unwrap_merge(n, in, &out), 0);
	return out;
}

static void test_kernel_unwrap_sanitycheck(void **state)
{
	struct ttm_fence *f = mock_fence(), *array, *chain;

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	array = mock_array(1, f);
	chain = chain_new(NULL, array, 1);
	/* The chain holds everything; signal before the last put. */
	signal_ok(f);
	ttm_fence_put(chain);
}

static void test_kernel_unwrap_array(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *array;

	(void)state;
	array = mock_array(2, ttm_fence_get(f[0]), ttm_fence_get(f[1]));
	assert_true(unwraps_to(array, 2, f));
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
	ttm_fence_put(array);
}

static void test_kernel_unwrap_chain(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *chain;

	(void)state;
	chain = chain_new(ttm_fence_get(f[0]), ttm_fence_get(f[1]), 1);
	assert_true(unwraps_to(chain, 2, f));
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
	ttm_fence_put(chain);
}

static void test_kernel_unwrap_chain_array(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *chain;

	(void)state;
	chain = chain_new(NULL, mock_array(2, ttm_fence_get(f[0]),
					   ttm_fence_get(f[1])), 1);
	assert_true(unwraps_to(chain, 2, f));
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
	ttm_fence_put(chain);
}

static void test_kernel_unwrap_merge(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *m;

	(void)state;
	m = merge_n(2, f[0], f[1]);
	assert_true(unwraps_to(m, 2, f));
	ttm_fence_put(m);
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
}

static void test_kernel_unwrap_merge_duplicate(void **state)
{
	struct ttm_fence *f = mock_fence(), *m;

	(void)state;
	m = merge_n(2, f, f);
	assert_true(unwraps_to(m, 1, &f));
	assert_ptr_equal(m, f);
	ttm_fence_put(m);
	signal_ok(f);
	ttm_fence_put(f);
}

static void test_kernel_unwrap_merge_seqno(void **state)
{
	uint64_t ctx0 = ttm_fence_context_alloc(1);
	uint64_t ctx1 = ttm_fence_context_alloc(1);
	struct ttm_fence *f1 = mock_fence_at(ctx1, 1);
	struct ttm_fence *f2 = mock_fence_at(ctx1, 2);
	struct ttm_fence *f3 = mock_fence_at(ctx0, 1), *m;
	struct ttm_fence *want[2] = { f3, f2 };

	(void)state;
	m = merge_n(3, f1, f2, f3);
	/* f1 goes (f2 is later on its context); ordered by context. */
	assert_true(unwraps_in_order(m, 2, want));
	ttm_fence_put(m);
	signal_ok(f1);
	signal_ok(f2);
	signal_ok(f3);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
	ttm_fence_put(f3);
}

static void test_kernel_unwrap_merge_order(void **state)
{
	struct ttm_fence *f1 = mock_fence(), *f2 = mock_fence(), *a1, *c2, *m;
	struct ttm_fence *want[2] = { f1, f2 };

	(void)state;
	a1 = mock_array(2, ttm_fence_get(f1), ttm_fence_get(f2));
	c2 = chain_new(chain_new(NULL, ttm_fence_get(f1), 1),
		       ttm_fence_get(f2), 2);
	/* The chain has them the other way round: the merge sorts. */
	m = merge_n(2, a1, c2);
	assert_true(unwraps_in_order(m, 2, want));
	ttm_fence_put(m);
	ttm_fence_put(a1);
	ttm_fence_put(c2);
	signal_ok(f1);
	signal_ok(f2);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
}

static void test_kernel_unwrap_merge_complex(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() };
	struct ttm_fence *f3, *f4, *f5, *stub = ttm_fence_get_stub();

	(void)state;
	f3 = merge_n(2, f[0], f[1]);
	f4 = mock_array(2, ttm_fence_get(f[1]), ttm_fence_get(f[0]));
	/* The stub goes, the two arrays make one. */
	f5 = merge_n(3, f3, f4, stub);
	assert_true(unwraps_to(f5, 2, f));
	assert_int_equal(ttm_fence_array_count(f5), 2);
	ttm_fence_put(f5);
	ttm_fence_put(f4);
	ttm_fence_put(f3);
	ttm_fence_put(stub);
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
}

static void test_kernel_unwrap_merge_complex_seqno(void **state)
{
	uint64_t ctx0 = ttm_fence_context_alloc(1);
	uint64_t ctx1 = ttm_fence_context_alloc(1);
	struct ttm_fence *f1 = mock_fence_at(ctx0, 2);
	struct ttm_fence *f2 = mock_fence_at(ctx1, 1);
	struct ttm_fence *f3 = mock_fence_at(ctx0, 1);
	struct ttm_fence *f4 = mock_fence_at(ctx1, 2), *f5, *f6, *f7;
	struct ttm_fence *want[2] = { f1, f4 };

	(void)state;
	f5 = mock_array(2, ttm_fence_get(f1), ttm_fence_get(f2));
	f6 = mock_array(2, ttm_fence_get(f3), ttm_fence_get(f4));
	f7 = merge_n(2, f5, f6);
	assert_true(unwraps_in_order(f7, 2, want));
	ttm_fence_put(f7);
	ttm_fence_put(f6);
	ttm_fence_put(f5);
	signal_ok(f1);
	signal_ok(f2);
	signal_ok(f3);
	signal_ok(f4);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
	ttm_fence_put(f3);
	ttm_fence_put(f4);
}

static void test_kernel_dedup_empty(void **state)
{
	struct ttm_fence *m = NULL, *stub = ttm_fence_get_stub();

	(void)state;
	assert_int_equal(ttm_fence_unwrap_merge(0, NULL, &m), 0);
	assert_ptr_equal(m, stub);
	ttm_fence_put(m);
	ttm_fence_put(stub);
}

/* ---- unwrap and merge: ttmsim's own ----------------------------------- */

/* Signalled fine: dropped; failed: kept, so the merge fails too. */
static void test_merge_signalled_and_failed(void **state)
{
	struct ttm_fence *ok = mock_fence(), *bad = mock_fence();
	struct ttm_fence *p = mock_fence(), *m, *stub;

	(void)state;
	signal_ok(ok);
	assert_int_equal(ttm_fence_signal(bad, -EIO), 0);
	m = merge_n(2, ok, p);
	assert_ptr_equal(m, p);
	ttm_fence_put(m);
	m = merge_n(3, ok, bad, p);
	assert_int_equal(ttm_fence_array_count(m), 2);
	assert_int_equal(ttm_fence_get_status(m), 0);
	signal_ok(p);
	assert_int_equal(ttm_fence_get_status(m), -EIO);
	ttm_fence_put(m);
	/* Everything done and fine: the stub. */
	stub = ttm_fence_get_stub();
	m = merge_n(2, ok, p);
	assert_ptr_equal(m, stub);
	ttm_fence_put(m);
	ttm_fence_put(stub);
	ttm_fence_put(ok);
	ttm_fence_put(bad);
	ttm_fence_put(p);
}

/* Merges of merges and chains stay one flat array. */
static void test_merge_nested_flat(void **state)
{
	struct ttm_fence *f[6], *m1, *m2, *chain, *m;
	unsigned int i;

	(void)state;
	for (i = 0; i < 6; i++)
		f[i] = mock_fence();
	m1 = merge_n(2, f[0], f[1]);
	m2 = merge_n(2, m1, f[2]);
	chain = chain_new(chain_new(ttm_fence_get(f[3]),
				    ttm_fence_get(m2), 1),
			  mock_array(2, ttm_fence_get(f[4]),
				     ttm_fence_get(f[5])), 2);
	assert_true(unwraps_to(chain, 6, f));
	m = merge_n(3, chain, m1, m2);
	assert_true(ttm_fence_is_array(m));
	assert_int_equal(ttm_fence_array_count(m), 6);
	assert_true(unwraps_in_order(m, 6, f));
	for (i = 0; i < 6; i++) {
		assert_false(ttm_fence_is_signaled(m));
		signal_ok(f[5 - i]);
	}
	assert_int_equal(ttm_fence_get_status(m), 1);
	assert_true(ttm_fence_is_signaled(chain));
	ttm_fence_put(m);
	ttm_fence_put(chain);
	ttm_fence_put(m2);
	ttm_fence_put(m1);
	for (i = 0; i < 6; i++)
		ttm_fence_put(f[i]);
}

/* Wrapping 32-bit seqnos: 1 comes after 0xffffffff. */
static void test_merge_seqno_wrap(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(1);
	struct ttm_fence *old = mock_fence_ops(&mock_ops32, ctx, 0xffffffffu);
	struct ttm_fence *new = mock_fence_ops(&mock_ops32, ctx, 1), *m;

	(void)state;
	m = merge_n(2, new, old);
	assert_ptr_equal(m, new);
	ttm_fence_put(m);
	m = merge_n(2, old, new);
	assert_ptr_equal(m, new);
	ttm_fence_put(m);
	signal_ok(old);
	signal_ok(new);
	ttm_fence_put(old);
	ttm_fence_put(new);
}

/* Leaving a walk early with ttm_fence_unwrap_end() leaks nothing. */
static void test_unwrap_end(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *chain, *it;
	struct ttm_fence_unwrap cursor;

	(void)state;
	counters_reset();
	chain = chain_new(chain_new(NULL, ttm_fence_get(f[0]), 1),
			  ttm_fence_get(f[1]), 2);
	ttm_fence_unwrap_for_each(it, &cursor, chain)
		break;
	assert_ptr_equal(it, f[1]);
	ttm_fence_unwrap_end(&cursor);
	ttm_fence_unwrap_end(&cursor);  /* harmless */
	signal_ok(f[0]);
	signal_ok(f[1]);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
	ttm_fence_put(chain);
	assert_int_equal(releases(), 2);
}

/* ---- sync-file descriptors of containers --------------------------------- */

static short fd_events(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	assert_true(poll(&pfd, 1, 0) >= 0);
	return pfd.revents;
}

static int fd_bytes(int fd)
{
	int n = -1;

	assert_int_equal(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

/*
 * Exporting enables signalling (a poll is a wait): without that, an
 * array's children get no callback and its descriptor never turns
 * readable.
 */
static void test_fd_array(void **state)
{
	struct ttm_fence *f[2] = { mock_fence(), mock_fence() }, *a, *in;
	int fd;

	(void)state;
	a = mock_array(2, ttm_fence_get(f[0]), ttm_fence_get(f[1]));
	fd = ttm_fence_export_fd(a);
	assert_true(fd >= 0);
	assert_int_equal(fd_events(fd), 0);
	signal_ok(f[0]);
	assert_int_equal(fd_events(fd), 0);
	assert_int_equal(ttm_fence_signal(f[1], -EIO), 0);
	assert_true(fd_events(fd) & POLLIN);
	assert_int_equal(fd_bytes(fd), 1 + EIO);
	assert_int_equal(ttm_fence_import_fd(fd, &in), 0);
	assert_ptr_equal(in, a);
	ttm_fence_put(in);
	ttm_fence_put(a);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
	/* Gone: an import reads the status the pipe kept. */
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(ttm_fence_import_fd(fd, &in), 0);
	assert_int_equal(ttm_fence_get_status(in), -EIO);
	ttm_fence_put(in);
	close(fd);
}

static void test_fd_chain_and_merge(void **state)
{
	struct ttm_fence *f[3], *chain, *m, *in;
	int fd_chain, fd_merge;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++)
		f[i] = mock_fence();
	chain = chain_new(chain_new(NULL, ttm_fence_get(f[0]), 1),
			  ttm_fence_get(f[1]), 2);
	m = merge_n(2, chain, f[2]);
	fd_chain = ttm_fence_export_fd(chain);
	fd_merge = ttm_fence_export_fd(m);
	assert_true(fd_chain >= 0 && fd_merge >= 0);
	/* Imported while alive: the same fences. */
	assert_int_equal(ttm_fence_import_fd(fd_merge, &in), 0);
	assert_ptr_equal(in, m);
	ttm_fence_put(in);
	signal_ok(f[1]);
	signal_ok(f[2]);
	assert_int_equal(fd_events(fd_chain), 0);
	assert_int_equal(fd_events(fd_merge), 0);
	signal_ok(f[0]);
	assert_true(fd_events(fd_chain) & POLLIN);
	assert_true(fd_events(fd_merge) & POLLIN);
	assert_int_equal(fd_bytes(fd_chain), 1);
	assert_int_equal(fd_bytes(fd_merge), 1);
	close(fd_chain);
	close(fd_merge);
	ttm_fence_put(m);
	ttm_fence_put(chain);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
}

/* ---- reservations -------------------------------------------------------- */

static DEFINE_WD_CLASS(containers_class);

static void resv_add(struct ttm_resv *resv, struct ttm_fence *f,
		     enum ttm_resv_usage usage)
{
	assert_int_equal(ww_mutex_lock(&resv->lock, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(resv, 1), 0);
	ttm_resv_add_fence(resv, f, usage);
	ww_mutex_unlock(&resv->lock);
}

static struct ttm_fence *singleton(struct ttm_resv *resv,
				   enum ttm_resv_usage usage)
{
	struct ttm_fence *f = (struct ttm_fence *)1;

	assert_int_equal(ttm_resv_get_singleton(resv, usage, &f), 0);
	return f;
}

static void test_resv_get_singleton(void **state)
{
	struct ttm_fence *w = mock_fence(), *r = mock_fence(), *x, *y, *m;
	struct ttm_fence *want[2] = { w, r }, *f;
	struct ttm_resv resv;

	(void)state;
	ttm_resv_init(&resv, &containers_class);
	assert_null(singleton(&resv, TTM_RESV_USAGE_BOOKKEEP));

	resv_add(&resv, w, TTM_RESV_USAGE_WRITE);
	f = singleton(&resv, TTM_RESV_USAGE_BOOKKEEP);
	assert_ptr_equal(f, w);
	ttm_fence_put(f);

	resv_add(&resv, r, TTM_RESV_USAGE_READ);
	f = singleton(&resv, TTM_RESV_USAGE_WRITE);
	assert_ptr_equal(f, w);
	ttm_fence_put(f);
	f = singleton(&resv, TTM_RESV_USAGE_READ);
	assert_true(ttm_fence_is_array(f));
	assert_true(unwraps_to(f, 2, want));
	signal_ok(w);
	assert_false(ttm_fence_is_signaled(f));
	signal_ok(r);
	assert_true(ttm_fence_is_signaled(f));
	ttm_fence_put(f);
	assert_null(singleton(&resv, TTM_RESV_USAGE_BOOKKEEP));

	/* A container in the reservation is flattened, not nested. */
	x = mock_fence();
	y = mock_fence();
	m = merge_n(2, x, y);
	resv_add(&resv, m, TTM_RESV_USAGE_WRITE);
	ttm_fence_put(w);
	w = mock_fence();
	resv_add(&resv, w, TTM_RESV_USAGE_BOOKKEEP);
	f = singleton(&resv, TTM_RESV_USAGE_BOOKKEEP);
	assert_int_equal(ttm_fence_array_count(f), 3);
	ttm_fence_put(f);
	signal_ok(x);
	signal_ok(y);
	signal_ok(w);
	ttm_resv_fini(&resv);
	ttm_fence_put(m);
	ttm_fence_put(x);
	ttm_fence_put(y);
	ttm_fence_put(w);
	ttm_fence_put(r);
}

static void test_resv_implicit_deps(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(5);
	struct ttm_fence *k = mock_fence_at(ctx, 1);
	struct ttm_fence *w = mock_fence_at(ctx + 1, 1);
	struct ttm_fence *r = mock_fence_at(ctx + 2, 1);
	struct ttm_fence *b = mock_fence_at(ctx + 3, 1);
	struct ttm_fence *w2 = mock_fence_at(ctx + 1, 2);
	struct ttm_fence *r2 = mock_fence_at(ctx + 4, 1);
	struct ttm_fence **deps;
	struct ttm_resv a, bb;
	struct ttm_resv_access acc[2] = { { &a, true }, { &bb, false } };
	unsigned int n, i;

	(void)state;
	ttm_resv_init(&a, &containers_class);
	ttm_resv_init(&bb, &containers_class);
	resv_add(&a, k, TTM_RESV_USAGE_KERNEL);
	resv_add(&a, w, TTM_RESV_USAGE_WRITE);
	resv_add(&a, r, TTM_RESV_USAGE_READ);
	resv_add(&a, b, TTM_RESV_USAGE_BOOKKEEP);
	resv_add(&bb, w2, TTM_RESV_USAGE_WRITE);
	resv_add(&bb, r2, TTM_RESV_USAGE_READ);

	/*
	 * Write @a: its KERNEL, WRITE and READ fences; read @bb: its
	 * writer. w2 is later than w on their context: w goes.
	 */
	assert_int_equal(ttm_resv_implicit_deps(acc, 2, &deps, &n), 0);
	assert_int_equal(n, 3);
	assert_ptr_equal(deps[0], k);
	assert_ptr_equal(deps[1], w2);
	assert_ptr_equal(deps[2], r);
	for (i = 0; i < n; i++)
		ttm_fence_put(deps[i]);
	free(deps);

	/* Read @a: KERNEL and WRITE only; signalled ones left out. */
	signal_ok(k);
	acc[0].write = false;
	assert_int_equal(ttm_resv_implicit_deps(acc, 1, &deps, &n), 0);
	assert_int_equal(n, 1);
	assert_ptr_equal(deps[0], w);
	ttm_fence_put(deps[0]);
	free(deps);

	/* Nothing to wait for. */
	signal_ok(w);
	assert_int_equal(ttm_resv_implicit_deps(acc, 1, &deps, &n), 0);
	assert_int_equal(n, 0);
	assert_null(deps);
	assert_int_equal(ttm_resv_implicit_deps(acc, 0, &deps, &n), 0);
	assert_int_equal(n, 0);

	signal_ok(r);
	signal_ok(b);
	signal_ok(w2);
	signal_ok(r2);
	ttm_resv_fini(&a);
	ttm_resv_fini(&bb);
	ttm_fence_put(k);
	ttm_fence_put(w);
	ttm_fence_put(r);
	ttm_fence_put(b);
	ttm_fence_put(w2);
	ttm_fence_put(r2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_array_all),
		TEST(test_array_any),
		TEST(test_array_errors),
		TEST(test_array_invalid),
		TEST(test_array_waiter_thread),
		TEST(test_chain_context),
		TEST(test_chain_errors),
		TEST(test_chain_out_of_order),
		TEST(test_chain_gc),
		TEST(test_chain_gc_race),
		TEST(test_chain_long_release),
		TEST(test_set_deadline),
		TEST(test_kernel_chain_sanitycheck),
		TEST(test_kernel_find_seqno),
		TEST(test_kernel_find_signaled),
		TEST(test_kernel_find_out_of_order),
		TEST(test_kernel_find_gap),
		TEST(test_kernel_find_race),
		TEST(test_kernel_signal_forward),
		TEST(test_kernel_signal_backward),
		TEST(test_kernel_wait_forward),
		TEST(test_kernel_wait_backward),
		TEST(test_kernel_wait_random),
		TEST(test_kernel_unwrap_sanitycheck),
		TEST(test_kernel_unwrap_array),
		TEST(test_kernel_unwrap_chain),
		TEST(test_kernel_unwrap_chain_array),
		TEST(test_kernel_unwrap_merge),
		TEST(test_kernel_unwrap_merge_duplicate),
		TEST(test_kernel_unwrap_merge_seqno),
		TEST(test_kernel_unwrap_merge_order),
		TEST(test_kernel_unwrap_merge_complex),
		TEST(test_kernel_unwrap_merge_complex_seqno),
		TEST(test_kernel_dedup_empty),
		TEST(test_merge_signalled_and_failed),
		TEST(test_merge_nested_flat),
		TEST(test_merge_seqno_wrap),
		TEST(test_unwrap_end),
		TEST(test_fd_array),
		TEST(test_fd_chain_and_merge),
		TEST(test_resv_get_singleton),
		TEST(test_resv_implicit_deps),
	};

	return cmocka_run_group_tests_name("fence-containers", tests, NULL,
					   NULL);
}
