// SPDX-License-Identifier: MIT
/*
 * Syncobjs (ttmsim/syncobj.h), point by point against the kernel's
 * drm_syncobj: create (signalled or not), handles in their own namespace,
 * destroy, signal and reset (all handles looked up first), waits (any and
 * all, the first signalled index, absolute timeouts, an empty syncobj's
 * -EINVAL without WAIT_FOR_SUBMIT, WAIT_FOR_SUBMIT, the fence sampled at
 * the start, interrupts), query, descriptors across two clients (as
 * syncobjs and as sync files), threads waiting and signalling at once,
 * and ttm_execbuf_submit()'s in- and out-syncobjs.
 *
 * Threads meet on barriers and white-box waiter counts (a thread is known
 * to be asleep in a wait once its node is on the syncobj or its callback
 * on the fence), never on sleeps.
 */
#include <fcntl.h>
#include <unistd.h>

#include "lib/bo_helpers.h"

#include "execbuf/syncobj.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/interrupt.h"
#include "ttmsim/syncobj.h"
#include "ttmsim/ww_debug.h"

struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_client *a, *b;
};

static int fixture_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	checks_reset(state);
	assert_non_null(fx);
	assert_int_equal(ttm_gpu_create(1, &(struct ttm_gpu_options){
					.flags = TTM_GPU_DETERMINISTIC },
					&fx->gpu), 0);
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
					.gpu = fx->gpu }, &fx->dev), 0);
	assert_int_equal(ttm_client_open(fx->dev, &fx->a), 0);
	assert_int_equal(ttm_client_open(fx->dev, &fx->b), 0);
	*state = fx;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(ttm_gpu_advance(fx->gpu, 10 * 1000 * 1000), 0);
	ttm_execbuf_wait_idle(fx->dev);
	ttm_client_close(fx->a);
	ttm_client_close(fx->b);
	assert_int_equal(ttm_device_destroy(fx->dev), 0);
	ttm_gpu_destroy(fx->gpu);
	free(fx);
	return 0;
}

static uint32_t syncobj_new(struct ttm_client *c, uint32_t flags)
{
	uint32_t h = 0;

	assert_int_equal(ttm_client_syncobj_create(c, flags, &h), 0);
	assert_int_not_equal(h, 0);
	return h;
}

static struct ttm_fence *fence_new(void)
{
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	return f;
}

/* The fence the syncobj of @h holds, without keeping a reference. */
static struct ttm_fence *fence_of(struct ttm_client *c, uint32_t h)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(c, h);
	struct ttm_fence *f;

	assert_non_null(s);
	f = ttm_syncobj_fence_get(s);
	ttm_syncobj_put(s);
	ttm_fence_put(f);  /* the syncobj keeps it alive */
	return f;
}

static void put_fence_in(struct ttm_client *c, uint32_t h,
			 struct ttm_fence *f)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(c, h);

	assert_non_null(s);
	ttm_syncobj_replace_fence(s, f);
	ttm_syncobj_put(s);
}

static uint32_t syncobj_refs(struct ttm_client *c, uint32_t h)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(c, h);
	uint32_t n;

	assert_non_null(s);
	n = __atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE) - 1;
	ttm_syncobj_put(s);
	return n;
}

/* ---- white-box waiter counts ----------------------------------------- */

struct count_arg {
	struct ttm_syncobj *s;
	struct ttm_fence *f;
	unsigned int n;
};

/* Waits queued on @s for a submission. */
static unsigned int submit_waiters(struct ttm_syncobj *s)
{
	struct syncobj_waiter *w;
	unsigned int n = 0;

	pthread_mutex_lock(&s->lock);
	for (w = s->waiters; w; w = w->next)
		n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static bool has_submit_waiters(void *arg)
{
	struct count_arg *c = arg;

	return submit_waiters(c->s) >= c->n;
}

/* Callbacks on @f (a syncobj wait adds one per fence it watches). */
static unsigned int fence_callbacks(struct ttm_fence *f)
{
	struct ttm_fence_cb *cb;
	unsigned int n = 0;

	pthread_mutex_lock(&f->lock);
	for (cb = f->cbs.head; cb; cb = cb->next)
		n++;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static bool has_callbacks(void *arg)
{
	struct count_arg *c = arg;

	return fence_callbacks(c->f) >= c->n;
}

static void wait_submit_waiters(struct ttm_client *c, uint32_t h,
				unsigned int n)
{
	struct count_arg arg = { .s = ttm_client_syncobj_lookup(c, h), .n = n };

	assert_non_null(arg.s);
	assert_true(wait_until(has_submit_waiters, &arg));
	ttm_syncobj_put(arg.s);
}

static void wait_callbacks(struct ttm_fence *f, unsigned int n)
{
	struct count_arg arg = { .f = f, .n = n };

	assert_true(wait_until(has_callbacks, &arg));
}

/* ---- a waiting thread ------------------------------------------------- */

struct waiter {
	struct ttm_client *c;
	const uint32_t *handles;
	const uint64_t *points;    /* NULL: a binary wait */
	unsigned int count;
	uint32_t flags;
	int64_t timeout;
	pthread_barrier_t *start;  /* or NULL */
	int ret;
	unsigned int first;
	int done;                  /* atomic */
	pthread_t thread;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	if (w->start)
		pthread_barrier_wait(w->start);
	w->first = ~0u;
	if (w->points)
		w->ret = ttm_client_syncobj_timeline_wait(w->c, w->handles,
							  w->points, w->count,
							  w->timeout, w->flags,
							  &w->first);
	else
		w->ret = ttm_client_syncobj_wait(w->c, w->handles, w->count,
						 w->timeout, w->flags,
						 &w->first);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void waiter_start(struct waiter *w)
{
	w->done = 0;
	if (!w->timeout)
		w->timeout = TTM_SYNCOBJ_TIMEOUT_INFINITE;
	w->thread = start_thread(waiter_main, w);
}

static bool waiter_done(struct waiter *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/* ---- create, handles, destroy ---------------------------------------- */

/*
 * Created empty, or signalled with the stub fence; unknown flags refused.
 * Handles from 1, lowest free first, in a namespace apart from buffers'.
 */
static void test_create(void **state)
{
	struct fixture *fx = *state;
	uint32_t h1, h2, h3, bo, h = 77;
	struct ttm_fence *stub = ttm_fence_get_stub();

	h1 = syncobj_new(fx->a, 0);
	h2 = syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED);
	assert_int_equal(h1, 1);
	assert_int_equal(h2, 2);
	assert_null(fence_of(fx->a, h1));
	assert_ptr_equal(fence_of(fx->a, h2), stub);
	assert_true(ttm_fence_is_signaled(fence_of(fx->a, h2)));
	assert_int_equal(ttm_client_syncobj_create(fx->a, 1u << 5, &h), -EINVAL);
	assert_int_equal(h, 77);

	/* Buffer handles start at 1 too: another namespace. */
	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo), 0);
	assert_int_equal(bo, 1);
	assert_int_equal(syncobj_refs(fx->a, 1), 1);
	/* Another client's handles mean nothing here. */
	assert_null(ttm_client_syncobj_lookup(fx->b, 1));

	/* Lowest free first, after a destroy. */
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h1), 0);
	assert_null(ttm_client_syncobj_lookup(fx->a, h1));
	h3 = syncobj_new(fx->a, 0);
	assert_int_equal(h3, 1);
	assert_int_equal(ttm_client_bo_close(fx->a, bo), 0);

	/* The object API: a given fence wins over CREATE_SIGNALED. */
	struct ttm_syncobj *s;
	struct ttm_fence *f = fence_new(), *got;

	assert_int_equal(ttm_syncobj_create(TTM_SYNCOBJ_CREATE_SIGNALED, f,
					    &s), 0);
	got = ttm_syncobj_fence_get(s);
	assert_ptr_equal(got, f);
	ttm_fence_put(got);
	/*
	 * Adding makes a new handle each time, even for a syncobj the client
	 * has (drm_syncobj_get_handle()), each with its reference.
	 */
	uint32_t ha = 0, hb = 0;

	assert_int_equal(ttm_client_syncobj_add(fx->b, s, &ha), 0);
	assert_int_equal(ttm_client_syncobj_add(fx->b, s, &hb), 0);
	assert_int_not_equal(ha, hb);
	assert_int_equal(syncobj_refs(fx->b, ha), 3);
	assert_int_equal(ttm_client_syncobj_destroy(fx->b, ha), 0);
	assert_int_equal(syncobj_refs(fx->b, hb), 2);
	ttm_syncobj_put(s);
	assert_ptr_equal(fence_of(fx->b, hb), f);
	ttm_fence_put(f);
	ttm_fence_put(stub);
}

/*
 * Destroy: a bad handle is -EINVAL (the kernel's SYNCOBJ_DESTROY), twice
 * too; the object lives on while someone holds it.
 */
static void test_destroy(void **state)
{
	struct fixture *fx = *state;
	struct ttm_syncobj *s;
	struct ttm_fence *f, *got;
	uint32_t h = syncobj_new(fx->a, 0);

	assert_int_equal(ttm_client_syncobj_destroy(fx->a, 0), -EINVAL);
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h + 1), -EINVAL);
	f = fence_new();
	put_fence_in(fx->a, h, f);
	s = ttm_client_syncobj_lookup(fx->a, h);
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h), 0);
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h), -EINVAL);
	got = ttm_syncobj_fence_get(s);
	assert_ptr_equal(got, f);
	ttm_fence_put(got);
	ttm_syncobj_put(s);
	/* The syncobj's reference to the fence went with it. */
	assert_int_equal(__atomic_load_n(&f->refcount, __ATOMIC_ACQUIRE), 1);
	ttm_fence_put(f);
}

/* ---- signal, reset ---------------------------------------------------- */

/*
 * Signal puts the stub in, replacing a pending fence; reset empties.
 * Every handle is looked up first: one bad handle changes nothing.
 */
static void test_signal_reset(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new(), *stub = ttm_fence_get_stub();
	uint32_t h[2] = { syncobj_new(fx->a, 0), syncobj_new(fx->a, 0) };
	uint32_t bad[2] = { h[0], 99 };

	put_fence_in(fx->a, h[1], f);
	assert_int_equal(ttm_client_syncobj_signal(fx->a, bad, 2), -ENOENT);
	assert_null(fence_of(fx->a, h[0]));
	assert_int_equal(ttm_client_syncobj_signal(fx->a, h, 0), -EINVAL);
	assert_int_equal(ttm_client_syncobj_signal(fx->a, h, 2), 0);
	assert_ptr_equal(fence_of(fx->a, h[0]), stub);
	assert_ptr_equal(fence_of(fx->a, h[1]), stub);
	/* The pending fence was replaced, not signalled. */
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(__atomic_load_n(&f->refcount, __ATOMIC_ACQUIRE), 1);

	assert_int_equal(ttm_client_syncobj_reset(fx->a, bad, 2), -ENOENT);
	assert_ptr_equal(fence_of(fx->a, h[0]), stub);
	assert_int_equal(ttm_client_syncobj_reset(fx->a, h, 0), -EINVAL);
	assert_int_equal(ttm_client_syncobj_reset(fx->a, h, 2), 0);
	assert_null(fence_of(fx->a, h[0]));
	assert_null(fence_of(fx->a, h[1]));
	/* Resetting an empty one is fine. */
	assert_int_equal(ttm_client_syncobj_reset(fx->a, h, 1), 0);
	ttm_fence_put(f);
	ttm_fence_put(stub);
}

/* ---- waits ------------------------------------------------------------ */

/*
 * Without WAIT_FOR_SUBMIT an empty syncobj is -EINVAL: alone, for all,
 * and for any even when another has signalled (the kernel checks every
 * syncobj before looking at any fence).
 */
static void test_wait_empty(void **state)
{
	struct fixture *fx = *state;
	uint32_t h[2] = { syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED),
			  syncobj_new(fx->a, 0) };
	unsigned int first = 42;

	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h[1], 1, 0, 0,
						 &first), -EINVAL);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 2,
						 TTM_SYNCOBJ_TIMEOUT_INFINITE,
						 0, &first), -EINVAL);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 2, 0,
						 TTM_SYNCOBJ_WAIT_ALL, &first),
			 -EINVAL);
	assert_int_equal(first, 42);
	/* With WAIT_FOR_SUBMIT, a test of an empty one times out. */
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h[1], 1, 0,
						 TTM_SYNCOBJ_WAIT_FOR_SUBMIT,
						 &first), -ETIME);
	/* ... and any other signalled one answers for any. */
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 2, 0,
						 TTM_SYNCOBJ_WAIT_FOR_SUBMIT,
						 &first), 0);
	assert_int_equal(first, 0);
}

/* Bad arguments: a count of 0, unknown flags, a bad handle. */
static void test_wait_errors(void **state)
{
	struct fixture *fx = *state;
	uint32_t h[2] = { syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED),
			  5 };

	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 0, 0, 0, NULL),
			 -EINVAL);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 1, 0, 1u << 2,
						 NULL), -EINVAL);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 2, 0, 0, NULL),
			 -ENOENT);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 1, 0, 0, NULL), 0);
}

/*
 * Any: the lowest signalled index; all: every one; an error counts as
 * signalled. Timeouts are absolute: 0 and past times only test.
 */
static void test_wait_any_all(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f[3] = { fence_new(), fence_new(), fence_new() };
	uint32_t h[3];
	unsigned int i, first = 42;
	int64_t past = (int64_t)now_ns() - 1000;

	for (i = 0; i < 3; i++) {
		h[i] = syncobj_new(fx->a, 0);
		put_fence_in(fx->a, h[i], f[i]);
	}
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, 0, 0, &first),
			 -ETIME);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, past, 0,
						 &first), -ETIME);
	/* A short real timeout, relative to now. */
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3,
						 (int64_t)now_ns() + 1000000,
						 0, &first), -ETIME);
	assert_int_equal(first, 42);

	assert_int_equal(ttm_fence_signal(f[2], 0), 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, 0, 0, &first),
			 0);
	assert_int_equal(first, 2);
	assert_int_equal(ttm_fence_signal(f[1], -EIO), 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, past, 0,
						 &first), 0);
	assert_int_equal(first, 1);
	first = 42;
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, 0,
						 TTM_SYNCOBJ_WAIT_ALL, &first),
			 -ETIME);
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, 0,
						 TTM_SYNCOBJ_WAIT_ALL, &first),
			 0);
	/* A wait for all does not say which came first. */
	assert_int_equal(first, 42);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, h, 3, -1, 0, NULL), 0);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
}

/*
 * A sleeping wait for any wakes at the first signal and names it; a wait
 * for all sleeps on until the last.
 */
static void test_wait_wakes(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f[2] = { fence_new(), fence_new() };
	uint32_t h[2] = { syncobj_new(fx->a, 0), syncobj_new(fx->a, 0) };
	struct waiter any = { .c = fx->a, .handles = h, .count = 2 };
	struct waiter all = { .c = fx->a, .handles = h, .count = 2,
			      .flags = TTM_SYNCOBJ_WAIT_ALL };

	put_fence_in(fx->a, h[0], f[0]);
	put_fence_in(fx->a, h[1], f[1]);
	waiter_start(&any);
	waiter_start(&all);
	wait_callbacks(f[1], 2);
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);
	join_thread(any.thread);
	assert_int_equal(any.ret, 0);
	assert_int_equal(any.first, 1);
	assert_false(waiter_done(&all));
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	join_thread(all.thread);
	assert_int_equal(all.ret, 0);
	ttm_fence_put(f[0]);
	ttm_fence_put(f[1]);
}

/*
 * The fence is sampled when the wait starts: a replace by a signalled
 * fence, or a reset, does not end a wait on the old one.
 */
static void test_wait_samples_fence(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new();
	uint32_t h = syncobj_new(fx->a, 0);
	struct waiter w = { .c = fx->a, .handles = &h, .count = 1 };

	put_fence_in(fx->a, h, f);
	waiter_start(&w);
	wait_callbacks(f, 1);
	assert_int_equal(ttm_client_syncobj_signal(fx->a, &h, 1), 0);
	assert_int_equal(ttm_client_syncobj_reset(fx->a, &h, 1), 0);
	assert_false(waiter_done(&w));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	join_thread(w.thread);
	assert_int_equal(w.ret, 0);
	ttm_fence_put(f);
}

/*
 * WAIT_FOR_SUBMIT: an empty syncobj is waited on until a fence is put in,
 * then that fence until it signals; a reset meanwhile is no fence.
 */
static void test_wait_for_submit(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new();
	uint32_t h = syncobj_new(fx->a, 0);
	struct waiter w = { .c = fx->a, .handles = &h, .count = 1,
			    .flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT };

	waiter_start(&w);
	wait_submit_waiters(fx->a, h, 1);
	assert_int_equal(ttm_client_syncobj_reset(fx->a, &h, 1), 0);
	put_fence_in(fx->a, h, f);
	wait_callbacks(f, 1);
	assert_false(waiter_done(&w));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	join_thread(w.thread);
	assert_int_equal(w.ret, 0);
	ttm_fence_put(f);

	/* For any of two empty ones: the one signalled. */
	uint32_t h2[2] = { syncobj_new(fx->a, 0), syncobj_new(fx->a, 0) };
	struct waiter any = { .c = fx->a, .handles = h2, .count = 2,
			      .flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT };

	waiter_start(&any);
	wait_submit_waiters(fx->a, h2[1], 1);
	assert_int_equal(ttm_client_syncobj_signal(fx->a, &h2[1], 1), 0);
	join_thread(any.thread);
	assert_int_equal(any.ret, 0);
	assert_int_equal(any.first, 1);
	/* Nothing left queued on the other. */
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(fx->a, h2[0]);
	assert_int_equal(submit_waiters(s), 0);
	ttm_syncobj_put(s);
}

/* A wait for a submission that never comes ends at its timeout. */
static void test_wait_for_submit_timeout(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, 0);
	struct ttm_syncobj *s;

	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1,
						 (int64_t)now_ns() + 2000000,
						 TTM_SYNCOBJ_WAIT_FOR_SUBMIT,
						 NULL), -ETIME);
	s = ttm_client_syncobj_lookup(fx->a, h);
	assert_int_equal(submit_waiters(s), 0);
	ttm_syncobj_put(s);
	assert_int_equal(syncobj_refs(fx->a, h), 1);
}

static unsigned int signalling_reports;

static void count_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	if (r->rule == WW_DEBUG_SIGNALLING_WAIT)
		__atomic_fetch_add(&signalling_reports, 1, __ATOMIC_RELAXED);
}

/*
 * Inside a fence-signalling section (a fence callback), a wait that may
 * sleep is the checker's rule 13: refused with the handler installed, even
 * on a signalled syncobj; a deadline of 0 only tests, and is allowed.
 */
static void test_wait_in_signalling_section(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED);
	unsigned int cookie, first = 99;

	if (!ww_debug_enabled())
		skip();
	signalling_reports = 0;
	ww_debug_set_handler(count_report, NULL);
	cookie = ttm_fence_begin_signalling();
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1, 0, 0, &first),
			 0);
	assert_int_equal(signalling_reports, 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1,
						 TTM_SYNCOBJ_TIMEOUT_INFINITE,
						 0, &first), -EINVAL);
	assert_int_equal(signalling_reports, 1);
	ttm_fence_end_signalling(cookie);
	ww_debug_set_handler(NULL, NULL);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1,
						 TTM_SYNCOBJ_TIMEOUT_INFINITE,
						 0, &first), 0);
	assert_int_equal(syncobj_refs(fx->a, h), 1);
}

/* A wait is interruptible (the kernel's ioctl: -ERESTARTSYS). */
static void test_wait_interrupt(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, 0);
	struct waiter w = { .c = fx->a, .handles = &h, .count = 1,
			    .flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT };

	waiter_start(&w);
	wait_submit_waiters(fx->a, h, 1);
	assert_int_equal(ttm_interrupt_thread(w.thread), 0);
	join_thread(w.thread);
	assert_int_equal(w.ret, -EINTR);
	assert_int_equal(syncobj_refs(fx->a, h), 1);
}

#define N_WAITERS 6
#define N_ROUNDS 50

struct signaller {
	struct ttm_client *c;
	uint32_t *h;
	pthread_barrier_t *start;
};

static void *signaller_main(void *arg)
{
	struct signaller *s = arg;
	unsigned int i;

	pthread_barrier_wait(s->start);
	for (i = 0; i < 2; i++) {
		struct ttm_fence *f = NULL;

		CHECK_INT(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			  0);
		put_fence_in(s->c, s->h[i], f);
		CHECK_INT(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
	}
	return NULL;
}

/*
 * Threads wait for all of two empty syncobjs (WAIT_FOR_SUBMIT) while
 * another fills and signals them, all released by one barrier; every wait
 * ends with 0, whichever came first. Round after round, for TSan.
 */
static void test_threads(void **state)
{
	struct fixture *fx = *state;
	unsigned int r, i;

	for (r = 0; r < N_ROUNDS; r++) {
		uint32_t h[2] = { syncobj_new(fx->a, 0),
				  syncobj_new(fx->a, 0) };
		struct waiter w[N_WAITERS];
		struct signaller s = { .c = fx->a, .h = h };
		pthread_barrier_t start;
		pthread_t st;

		pthread_barrier_init(&start, NULL, N_WAITERS + 2);
		s.start = &start;
		for (i = 0; i < N_WAITERS; i++) {
			w[i] = (struct waiter){
				.c = fx->a, .handles = h, .count = 2,
				.flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT |
					 (i % 2 ? TTM_SYNCOBJ_WAIT_ALL : 0),
				.start = &start,
			};
			waiter_start(&w[i]);
		}
		st = start_thread(signaller_main, &s);
		pthread_barrier_wait(&start);
		join_thread(st);
		for (i = 0; i < N_WAITERS; i++) {
			join_thread(w[i].thread);
			assert_int_equal(w[i].ret, 0);
		}
		pthread_barrier_destroy(&start);
		assert_int_equal(ttm_client_syncobj_destroy(fx->a, h[0]), 0);
		assert_int_equal(ttm_client_syncobj_destroy(fx->a, h[1]), 0);
	}
	assert_checks_passed();
}

/* ---- query ------------------------------------------------------------ */

/* A binary syncobj's point is 0, signalled or submitted, empty or not. */
static void test_query(void **state)
{
	struct fixture *fx = *state;
	uint32_t h[2] = { syncobj_new(fx->a, 0),
			  syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED) };
	uint64_t p[2] = { 7, 7 };

	assert_int_equal(ttm_client_syncobj_query(fx->a, h, p, 2, 0), 0);
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 0);
	p[0] = p[1] = 7;
	assert_int_equal(ttm_client_syncobj_query(fx->a, h, p, 2,
				TTM_SYNCOBJ_QUERY_LAST_SUBMITTED), 0);
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 0);
	assert_int_equal(ttm_client_syncobj_query(fx->a, h, p, 0, 0), -EINVAL);
	assert_int_equal(ttm_client_syncobj_query(fx->a, h, p, 2, 1u << 4),
			 -EINVAL);
	h[1] = 9;
	assert_int_equal(ttm_client_syncobj_query(fx->a, h, p, 2, 0), -ENOENT);
}

/* ---- descriptors ------------------------------------------------------ */

/*
 * A syncobj's descriptor, imported by another client, is the same object:
 * what one signals the other sees. Each import is a new handle; the
 * descriptor keeps the object alive after the exporter lets go.
 */
static void test_fd_two_clients(void **state)
{
	struct fixture *fx = *state;
	struct ttm_syncobj *sa, *sb;
	struct ttm_fence *stub = ttm_fence_get_stub();
	uint32_t ha = syncobj_new(fx->a, 0), hb, hb2;
	int fd = -1;

	assert_int_equal(ttm_client_syncobj_export_fd(fx->a, ha + 1, &fd),
			 -ENOENT);
	assert_int_equal(ttm_client_syncobj_export_fd(fx->a, ha, &fd), 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->b, fd, &hb), 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->b, fd, &hb2), 0);
	assert_int_not_equal(hb, hb2);
	sa = ttm_client_syncobj_lookup(fx->a, ha);
	sb = ttm_client_syncobj_lookup(fx->b, hb);
	assert_ptr_equal(sa, sb);
	ttm_syncobj_put(sa);
	ttm_syncobj_put(sb);

	assert_int_equal(ttm_client_syncobj_signal(fx->b, &hb, 1), 0);
	assert_ptr_equal(fence_of(fx->a, ha), stub);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &ha, 1, 0, 0, NULL),
			 0);
	assert_int_equal(ttm_client_syncobj_reset(fx->a, &ha, 1), 0);
	assert_null(fence_of(fx->b, hb2));

	/* The descriptor alone keeps it: imported again after both let go. */
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, ha), 0);
	assert_int_equal(ttm_client_syncobj_destroy(fx->b, hb), 0);
	assert_int_equal(ttm_client_syncobj_destroy(fx->b, hb2), 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, fd, &ha), 0);
	assert_null(fence_of(fx->a, ha));
	close(fd);
	ttm_fence_put(stub);
}

/*
 * Bogus descriptors are -EINVAL (the kernel: not a syncobj file): -1, a
 * plain pipe, a buffer's descriptor, a fence's. A buffer import of a
 * syncobj's descriptor is -EBADF, as of any non-buffer descriptor.
 */
static void test_fd_bogus(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new();
	uint32_t h = 5, bo, hs = syncobj_new(fx->a, 0);
	int p[2], bo_fd, fence_fd, s_fd;

	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, -1, &h), -EINVAL);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, p[0], &h),
			 -EINVAL);
	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo), 0);
	assert_int_equal(ttm_client_export_fd(fx->a, bo, &bo_fd), 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, bo_fd, &h),
			 -EINVAL);
	fence_fd = ttm_fence_export_fd(f);
	assert_true(fence_fd >= 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, fence_fd, &h),
			 -EINVAL);
	assert_int_equal(h, 5);
	assert_int_equal(ttm_client_syncobj_export_fd(fx->a, hs, &s_fd), 0);
	assert_int_equal(ttm_client_import_fd(fx->b, s_fd, &h, NULL), -EBADF);
	assert_int_equal(h, 5);
	close(p[0]);
	close(p[1]);
	close(bo_fd);
	close(fence_fd);
	close(s_fd);
	ttm_fence_put(f);
}

/*
 * Sync files: exporting an empty syncobj is -EINVAL; the descriptor is
 * the fence's; importing one replaces the fence of an existing handle.
 */
static void test_sync_file(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new(), *got;
	uint32_t h = syncobj_new(fx->a, 0), hb = syncobj_new(fx->b, 0);
	int fd = -7, p[2];

	assert_int_equal(ttm_client_syncobj_export_sync_file(fx->a, h, &fd),
			 -EINVAL);
	assert_int_equal(ttm_client_syncobj_export_sync_file(fx->a, 9, &fd),
			 -ENOENT);
	assert_int_equal(fd, -7);
	put_fence_in(fx->a, h, f);
	assert_int_equal(ttm_client_syncobj_export_sync_file(fx->a, h, &fd),
			 0);
	assert_int_equal(ttm_fence_import_fd(fd, &got), 0);
	assert_ptr_equal(got, f);
	ttm_fence_put(got);

	/* Into client b's syncobj: the same fence. */
	assert_int_equal(ttm_client_syncobj_import_sync_file(fx->b, hb + 1, fd),
			 -ENOENT);
	assert_int_equal(ttm_client_syncobj_import_sync_file(fx->b, hb, fd),
			 0);
	assert_ptr_equal(fence_of(fx->b, hb), f);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(ttm_client_syncobj_import_sync_file(fx->b, hb, p[0]),
			 -EINVAL);
	/* A bad descriptor is found before a bad handle, as the kernel. */
	assert_int_equal(ttm_client_syncobj_import_sync_file(fx->b, 99, p[0]),
			 -EINVAL);
	assert_ptr_equal(fence_of(fx->b, hb), f);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->b, &hb, 1, 0, 0, NULL),
			 0);
	close(p[0]);
	close(p[1]);
	close(fd);
	ttm_fence_put(f);
}

/* Closing a client puts its syncobjs (a descriptor keeps one alive). */
static void test_client_close(void **state)
{
	struct fixture *fx = *state;
	struct ttm_client *c;
	struct ttm_syncobj *s;
	uint32_t h;
	int fd;

	assert_int_equal(ttm_client_open(fx->dev, &c), 0);
	h = syncobj_new(c, TTM_SYNCOBJ_CREATE_SIGNALED);
	s = ttm_client_syncobj_lookup(c, h);
	assert_int_equal(ttm_client_syncobj_export_fd(c, h, &fd), 0);
	/* The handle, the descriptor, ours. */
	assert_int_equal(__atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE), 3);
	ttm_client_close(c);
	assert_int_equal(__atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE), 2);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->a, fd, &h), 0);
	close(fd);
	ttm_syncobj_put(s);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1, 0, 0, NULL), 0);
}

/* ---- execbuf ---------------------------------------------------------- */

static int submit(struct ttm_client *c, uint32_t bo,
		  const struct ttm_execbuf_syncobj *in, unsigned int n_in,
		  const struct ttm_execbuf_syncobj *out, unsigned int n_out,
		  struct ttm_fence **ret_fence, int *bad_index)
{
	struct ttm_execbuf_bo list[1] = { { bo, TTM_EXECBUF_BO_WRITE } };
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 1, .op = TTM_GPU_OP_ADD, .add_value = 1,
		.duration_us = 10,
		.in_syncobjs = in, .n_in_syncobjs = n_in,
		.out_syncobjs = out, .n_out_syncobjs = n_out,
	};
	int ret = ttm_execbuf_submit(c, &args);

	if (bad_index)
		*bad_index = args.bad_index;
	if (ret_fence)
		*ret_fence = args.out_fence;
	else
		ttm_fence_put(args.out_fence);
	return ret;
}

/*
 * In-syncobjs: the job waits for their fences (a failed one fails it);
 * out-syncobjs get the job's fence.
 */
static void test_execbuf(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new(), *job;
	uint32_t bo, in = syncobj_new(fx->a, 0), out = syncobj_new(fx->a, 0);
	struct ttm_execbuf_syncobj i1 = { .handle = in }, o1 = { .handle = out };

	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo), 0);
	put_fence_in(fx->a, in, f);
	assert_int_equal(submit(fx->a, bo, &i1, 1, &o1, 1, &job, NULL), 0);
	assert_ptr_equal(fence_of(fx->a, out), job);
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	assert_false(ttm_fence_is_signaled(job));
	/* Taken at submission: a reset of the in-syncobj changes nothing. */
	assert_int_equal(ttm_client_syncobj_reset(fx->a, &in, 1), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	assert_int_equal(ttm_fence_get_status(job), 1);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &out, 1, 0, 0, NULL),
			 0);
	ttm_fence_put(job);
	ttm_fence_put(f);

	/* A failed in-fence fails the job, as an explicit in-fence. */
	f = fence_new();
	put_fence_in(fx->a, in, f);
	assert_int_equal(ttm_fence_signal(f, -EIO), 0);
	assert_int_equal(submit(fx->a, bo, &i1, 1, &o1, 1, &job, NULL), 0);
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	assert_int_equal(ttm_fence_get_status(job), -EIO);
	assert_int_equal(ttm_fence_get_status(fence_of(fx->a, out)), -EIO);
	ttm_fence_put(job);
	ttm_fence_put(f);
}

/*
 * Errors name the entry: in_syncobjs after the buffers (and in-fences),
 * out_syncobjs after those. An empty in-syncobj is -EINVAL, a bad handle
 * -ENOENT, a point or a flag -EINVAL. Nothing is submitted, and the
 * out-syncobjs keep their fence.
 */
static void test_execbuf_errors(void **state)
{
	struct fixture *fx = *state;
	struct ttm_execbuf_stats st;
	struct ttm_fence *stub = ttm_fence_get_stub();
	uint32_t bo, ok = syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED);
	uint32_t empty = syncobj_new(fx->a, 0);
	uint32_t out = syncobj_new(fx->a, TTM_SYNCOBJ_CREATE_SIGNALED);
	struct ttm_execbuf_syncobj in[2] = { { .handle = ok } };
	struct ttm_execbuf_syncobj outs[2] = { { .handle = out } };
	int bad = 0;

	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo), 0);
	in[1].handle = empty;
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 1, NULL, &bad),
			 -EINVAL);
	assert_int_equal(bad, 2);
	in[1].handle = 99;
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 1, NULL, &bad),
			 -ENOENT);
	assert_int_equal(bad, 2);
	/* A point of a binary syncobj: no fence for it. */
	in[1] = (struct ttm_execbuf_syncobj){ .handle = ok, .point = 3 };
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 1, NULL, &bad),
			 -EINVAL);
	assert_int_equal(bad, 2);
	in[1] = (struct ttm_execbuf_syncobj){ .handle = ok, .flags = 1 };
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 1, NULL, &bad),
			 -EINVAL);
	assert_int_equal(bad, 2);
	in[1].flags = 0;
	outs[1].handle = 77;
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 2, NULL, &bad),
			 -ENOENT);
	assert_int_equal(bad, 4);
	outs[1] = (struct ttm_execbuf_syncobj){ .handle = out, .flags = 1 };
	assert_int_equal(submit(fx->a, bo, in, 2, outs, 2, NULL, &bad),
			 -EINVAL);
	assert_int_equal(bad, 4);
	/* NULL arrays with counts. */
	assert_int_equal(submit(fx->a, bo, NULL, 1, NULL, 0, NULL, &bad),
			 -EINVAL);
	assert_int_equal(submit(fx->a, bo, NULL, 0, NULL, 1, NULL, &bad),
			 -EINVAL);

	assert_ptr_equal(fence_of(fx->a, out), stub);
	ttm_execbuf_get_stats(fx->dev, &st);
	assert_int_equal(st.submitted, st.rejected);
	/* Nothing leaked: the handles hold the only references. */
	assert_int_equal(syncobj_refs(fx->a, ok), 1);
	assert_int_equal(syncobj_refs(fx->a, out), 1);
	/* The same syncobj in and out: waits for its old fence. */
	outs[0].handle = ok;
	assert_int_equal(submit(fx->a, bo, in, 1, outs, 1, NULL, NULL), 0);
	assert_ptr_not_equal(fence_of(fx->a, ok), stub);
	ttm_fence_put(stub);
}

struct submitter {
	struct ttm_client *c;
	uint32_t bo, in;
	int ret;
};

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct ttm_execbuf_syncobj in = { .handle = s->in };

	/*
	 * Waits for client a's job to be submitted and run, then submits a
	 * job that depends on it.
	 */
	s->ret = ttm_client_syncobj_wait(s->c, &s->in, 1,
					 TTM_SYNCOBJ_TIMEOUT_INFINITE,
					 TTM_SYNCOBJ_WAIT_FOR_SUBMIT |
					 TTM_SYNCOBJ_WAIT_ALL, NULL);
	if (s->ret == 0)
		s->ret = submit(s->c, s->bo, &in, 1, NULL, 0, NULL, NULL);
	return NULL;
}

/*
 * Across clients: b imports a's syncobj, waits for a's job to be
 * submitted into it (another thread), and submits a job that waits for
 * it; b's job runs after a's.
 */
static void test_execbuf_two_clients(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *job_a, *job_b;
	uint32_t bo_a, bo_b, s = syncobj_new(fx->a, 0), sb;
	struct ttm_execbuf_syncobj o = { .handle = s };
	struct submitter sub = { .c = fx->b };
	pthread_t t;
	int fd;

	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo_a), 0);
	assert_int_equal(ttm_client_bo_create(fx->b, 4096, &system_only, 0,
					      &bo_b), 0);
	assert_int_equal(ttm_client_syncobj_export_fd(fx->a, s, &fd), 0);
	assert_int_equal(ttm_client_syncobj_import_fd(fx->b, fd, &sb), 0);
	close(fd);
	sub.bo = bo_b;
	sub.in = sb;
	t = start_thread(submitter_main, &sub);
	wait_submit_waiters(fx->a, s, 1);
	assert_int_equal(submit(fx->a, bo_a, NULL, 0, &o, 1, &job_a, NULL), 0);
	/* b's thread now waits for job_a to signal, then submits. */
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	join_thread(t);
	assert_int_equal(sub.ret, 0);
	assert_true(ttm_fence_is_signaled(job_a));
	job_b = fence_of(fx->b, sb);
	assert_ptr_equal(job_b, job_a);
	ttm_fence_put(job_a);
}

/* ---- timelines (ttm_fence_chain links, as the kernel's) --------------- */

static void add_point(struct ttm_client *c, uint32_t h, struct ttm_fence *f,
		      uint64_t point)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(c, h);

	assert_non_null(s);
	assert_int_equal(ttm_syncobj_add_point(s, f, point), 0);
	ttm_syncobj_put(s);
}

static uint64_t query(struct ttm_client *c, uint32_t h, uint32_t flags)
{
	uint64_t p = 77;

	assert_int_equal(ttm_client_syncobj_query(c, &h, &p, 1, flags), 0);
	return p;
}

static int twait(struct ttm_client *c, uint32_t h, uint64_t point,
		 uint32_t flags)
{
	return ttm_client_syncobj_timeline_wait(c, &h, &point, 1, 0, flags,
						NULL);
}

/*
 * Timeline signal adds signalled points; query says the last; a point up
 * to it has a (signalled) fence, one above it none; point 0 is the head.
 */
static void test_timeline_signal(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, 0), hs[2];
	uint64_t pts[2] = { 1, 3 };
	struct ttm_syncobj *s;
	struct ttm_fence *f;

	hs[0] = hs[1] = h;
	assert_int_equal(query(fx->a, h, 0), 0);
	assert_int_equal(ttm_client_syncobj_timeline_signal(fx->a, hs, pts,
							    0), -EINVAL);
	hs[1] = 99;
	assert_int_equal(ttm_client_syncobj_timeline_signal(fx->a, hs, pts,
							    2), -ENOENT);
	assert_null(fence_of(fx->a, h));
	hs[1] = h;
	assert_int_equal(ttm_client_syncobj_timeline_signal(fx->a, hs, pts,
							    2), 0);
	assert_int_equal(query(fx->a, h, 0), 3);
	assert_int_equal(query(fx->a, h, TTM_SYNCOBJ_QUERY_LAST_SUBMITTED),
			 3);
	s = ttm_client_syncobj_lookup(fx->a, h);
	assert_int_equal(ttm_syncobj_find_fence(s, 2, &f), 0);
	assert_true(ttm_fence_is_signaled(f));
	ttm_fence_put(f);
	assert_int_equal(ttm_syncobj_find_fence(s, 4, &f), -EINVAL);
	assert_int_equal(ttm_syncobj_add_point(s, NULL, 5), -EINVAL);
	ttm_syncobj_put(s);
	assert_int_equal(twait(fx->a, h, 3, 0), 0);
	assert_int_equal(twait(fx->a, h, 4, 0), -EINVAL);
	/* Binary calls on a timeline: the head. */
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1, 0, 0, NULL), 0);
	/* Point 0 signals as a binary syncobj: the chain is replaced. */
	pts[0] = 0;
	assert_int_equal(ttm_client_syncobj_timeline_signal(fx->a, &h, pts,
							    1), 0);
	assert_int_equal(query(fx->a, h, 0), 0);
	/* A point of a binary syncobj is no point. */
	assert_int_equal(twait(fx->a, h, 1, 0), -EINVAL);
	/* WAIT_AVAILABLE is for timeline waits only. */
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1, 0,
						 TTM_SYNCOBJ_WAIT_AVAILABLE,
						 NULL), -EINVAL);
}

/*
 * Points signal in order: a point is done once its fence and every point
 * before it have; query says the last point with every point up to it
 * signalled; the head carries its fence's error.
 */
static void test_timeline_order(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f[3] = { fence_new(), fence_new(), fence_new() };
	uint32_t h = syncobj_new(fx->a, 0);
	unsigned int i;

	for (i = 0; i < 3; i++)
		add_point(fx->a, h, f[i], i + 1);
	assert_int_equal(query(fx->a, h, 0), 0);
	assert_int_equal(query(fx->a, h, TTM_SYNCOBJ_QUERY_LAST_SUBMITTED),
			 3);
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);
	assert_int_equal(query(fx->a, h, 0), 0);
	assert_int_equal(twait(fx->a, h, 2, 0), -ETIME);
	assert_int_equal(ttm_fence_signal(f[0], 0), 0);
	assert_int_equal(query(fx->a, h, 0), 2);
	assert_int_equal(twait(fx->a, h, 1, 0), 0);
	assert_int_equal(twait(fx->a, h, 2, 0), 0);
	assert_int_equal(twait(fx->a, h, 3, 0), -ETIME);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &h, 1, 0, 0, NULL),
			 -ETIME);
	assert_int_equal(ttm_fence_signal(f[2], -EIO), 0);
	assert_int_equal(query(fx->a, h, 0), 3);
	assert_int_equal(twait(fx->a, h, 3, 0), 0);
	assert_int_equal(ttm_fence_get_status(fence_of(fx->a, h)), -EIO);
	for (i = 0; i < 3; i++)
		ttm_fence_put(f[i]);
}

/*
 * A point not above the last is added anyway, but the timeline keeps its
 * last number and (the kernel's quirk) a query says 0 until all of it has
 * signalled; a wait for any earlier point waits for the whole.
 */
static void test_timeline_lower_point(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f5 = fence_new(), *f3 = fence_new();
	uint32_t h = syncobj_new(fx->a, 0);

	add_point(fx->a, h, f5, 5);
	add_point(fx->a, h, f3, 3);
	assert_int_equal(query(fx->a, h, TTM_SYNCOBJ_QUERY_LAST_SUBMITTED),
			 5);
	assert_int_equal(ttm_fence_signal(f5, 0), 0);
	assert_int_equal(query(fx->a, h, 0), 0);
	assert_int_equal(twait(fx->a, h, 4, 0), -ETIME);
	assert_int_equal(twait(fx->a, h, 6, 0), -EINVAL);
	assert_int_equal(ttm_fence_signal(f3, 0), 0);
	assert_int_equal(query(fx->a, h, 0), 5);
	assert_int_equal(twait(fx->a, h, 4, 0), 0);
	ttm_fence_put(f5);
	ttm_fence_put(f3);
}

/*
 * A point not submitted yet: -EINVAL without flags; WAIT_FOR_SUBMIT waits
 * for it to be added and signal; WAIT_AVAILABLE only for it to be added.
 * A lower point added meanwhile does not end either.
 */
static void test_timeline_wait_submit(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new(), *g = fence_new();
	uint32_t h = syncobj_new(fx->a, 0);
	uint64_t p = 5;
	struct waiter avail = { .c = fx->a, .handles = &h, .count = 1 };
	struct waiter sub;
	struct ttm_syncobj *s;

	add_point(fx->a, h, g, 3);
	assert_int_equal(twait(fx->a, h, 5, 0), -EINVAL);
	assert_int_equal(twait(fx->a, h, 5, TTM_SYNCOBJ_WAIT_AVAILABLE),
			 -ETIME);
	sub = avail;
	avail.points = &p;
	avail.flags = TTM_SYNCOBJ_WAIT_AVAILABLE;
	sub.points = &p;
	sub.flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT;
	waiter_start(&avail);
	waiter_start(&sub);
	wait_submit_waiters(fx->a, h, 2);
	add_point(fx->a, h, g, 4);
	s = ttm_client_syncobj_lookup(fx->a, h);
	assert_int_equal(submit_waiters(s), 2);
	/* Point 6 stands for 5 too. */
	add_point(fx->a, h, f, 6);
	join_thread(avail.thread);
	assert_int_equal(avail.ret, 0);
	assert_false(ttm_fence_is_signaled(f));
	assert_int_equal(submit_waiters(s), 0);
	assert_false(waiter_done(&sub));
	assert_int_equal(ttm_fence_signal(g, 0), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	join_thread(sub.thread);
	assert_int_equal(sub.ret, 0);
	ttm_syncobj_put(s);
	ttm_fence_put(f);
	ttm_fence_put(g);
}

/*
 * Transfer: binary to a point, a point to binary, point to point; an
 * empty source is -EINVAL unless WAIT_FOR_SUBMIT, which waits for it.
 */
static void test_transfer(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *f = fence_new(), *got;
	uint32_t bin = syncobj_new(fx->a, 0), tl = syncobj_new(fx->a, 0);
	uint32_t bin2 = syncobj_new(fx->a, 0);
	struct ttm_syncobj *s;

	assert_int_equal(ttm_client_syncobj_transfer(fx->a, tl, 1, bin, 0, 0),
			 -EINVAL);
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, tl, 1, bin, 0,
						     1u << 4), -EINVAL);
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, 99, 1, bin, 0, 0),
			 -ENOENT);
	put_fence_in(fx->a, bin, f);
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, tl, 2, bin, 0, 0),
			 0);
	assert_int_equal(query(fx->a, tl, TTM_SYNCOBJ_QUERY_LAST_SUBMITTED),
			 2);
	assert_int_equal(twait(fx->a, tl, 2, 0), -ETIME);
	/* Point 2 to a binary syncobj: the chain's node for it. */
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, bin2, 0, tl, 2, 0),
			 0);
	s = ttm_client_syncobj_lookup(fx->a, tl);
	assert_int_equal(ttm_syncobj_find_fence(s, 2, &got), 0);
	assert_ptr_equal(fence_of(fx->a, bin2), got);
	ttm_fence_put(got);
	ttm_syncobj_put(s);
	/* Point to point: 2 of tl becomes 7 of tl. */
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, tl, 7, tl, 2, 0),
			 0);
	assert_int_equal(ttm_client_syncobj_transfer(fx->a, tl, 8, tl, 9, 0),
			 -EINVAL);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(twait(fx->a, tl, 7, 0), 0);
	assert_int_equal(ttm_client_syncobj_wait(fx->a, &bin2, 1, 0, 0, NULL),
			 0);
	assert_int_equal(query(fx->a, tl, 0), 7);
	ttm_fence_put(f);
}

struct transferer {
	struct ttm_client *c;
	uint32_t dst, src;
	int ret;
};

static void *transferer_main(void *arg)
{
	struct transferer *t = arg;

	t->ret = ttm_client_syncobj_transfer(t->c, t->dst, 0, t->src, 4,
					     TTM_SYNCOBJ_WAIT_FOR_SUBMIT);
	return NULL;
}

/* Transfer with WAIT_FOR_SUBMIT waits for the source point to be added. */
static void test_transfer_wait(void **state)
{
	struct fixture *fx = *state;
	struct transferer t = { .c = fx->a, .dst = syncobj_new(fx->a, 0),
				.src = syncobj_new(fx->a, 0) };
	struct ttm_fence *f = fence_new();
	pthread_t th;

	th = start_thread(transferer_main, &t);
	wait_submit_waiters(fx->a, t.src, 1);
	add_point(fx->a, t.src, f, 4);
	join_thread(th);
	assert_int_equal(t.ret, 0);
	assert_non_null(fence_of(fx->a, t.dst));
	assert_false(ttm_fence_is_signaled(fence_of(fx->a, t.dst)));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(ttm_fence_is_signaled(fence_of(fx->a, t.dst)));
	ttm_fence_put(f);
}

#define N_POINTS 16

/*
 * One waiter per point (WAIT_FOR_SUBMIT) on a timeline that another thread
 * signals point by point, all released by one barrier: each ends with 0.
 */
static void test_timeline_threads(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, 0);
	uint64_t pts[N_POINTS];
	struct waiter w[N_POINTS];
	pthread_barrier_t start;
	unsigned int i, r;

	for (r = 0; r < 10; r++) {
		pthread_barrier_init(&start, NULL, N_POINTS + 1);
		for (i = 0; i < N_POINTS; i++) {
			pts[i] = r * N_POINTS + i + 1;
			w[i] = (struct waiter){
				.c = fx->a, .handles = &h, .count = 1,
				.points = &pts[i],
				.flags = TTM_SYNCOBJ_WAIT_FOR_SUBMIT,
				.start = &start,
			};
			waiter_start(&w[i]);
		}
		pthread_barrier_wait(&start);
		for (i = 0; i < N_POINTS; i++)
			assert_int_equal(ttm_client_syncobj_timeline_signal(
					fx->a, &h, &pts[i], 1), 0);
		for (i = 0; i < N_POINTS; i++) {
			join_thread(w[i].thread);
			assert_int_equal(w[i].ret, 0);
		}
		pthread_barrier_destroy(&start);
	}
	assert_int_equal(query(fx->a, h, 0), 10 * N_POINTS);
}

/*
 * Execbuf with points: the job's fence at an out-syncobj's point; another
 * job waits for that point; a point not submitted is -EINVAL.
 */
static void test_execbuf_timeline(void **state)
{
	struct fixture *fx = *state;
	struct ttm_fence *job1, *job2, *got;
	uint32_t bo, tl = syncobj_new(fx->a, 0);
	struct ttm_execbuf_syncobj o = { .handle = tl, .point = 1 };
	struct ttm_execbuf_syncobj i = { .handle = tl, .point = 1 };
	struct ttm_execbuf_syncobj o2 = { .handle = tl, .point = 2 };
	struct ttm_execbuf_syncobj bad = { .handle = tl, .point = 3 };
	struct ttm_syncobj *s;
	int bad_index;

	assert_int_equal(ttm_client_bo_create(fx->a, 4096, &system_only, 0,
					      &bo), 0);
	assert_int_equal(submit(fx->a, bo, &bad, 1, NULL, 0, NULL,
				&bad_index), -EINVAL);
	assert_int_equal(bad_index, 1);
	assert_int_equal(submit(fx->a, bo, NULL, 0, &o, 1, &job1, NULL), 0);
	s = ttm_client_syncobj_lookup(fx->a, tl);
	assert_int_equal(ttm_syncobj_find_fence(s, 1, &got), 0);
	assert_false(ttm_fence_is_signaled(got));
	assert_int_equal(submit(fx->a, bo, &i, 1, &o2, 1, &job2, NULL), 0);
	assert_int_equal(query(fx->a, tl, TTM_SYNCOBJ_QUERY_LAST_SUBMITTED),
			 2);
	assert_int_equal(ttm_gpu_advance(fx->gpu, 1000), 0);
	assert_true(ttm_fence_is_signaled(job1));
	assert_true(ttm_fence_is_signaled(job2));
	assert_true(ttm_fence_is_signaled(got));
	assert_int_equal(query(fx->a, tl, 0), 2);
	ttm_fence_put(got);
	ttm_syncobj_put(s);
	ttm_fence_put(job1);
	ttm_fence_put(job2);
}

static int counted_releases;     /* atomic */

static const char *counted_name(struct ttm_fence *f)
{
	(void)f;
	return "counted";
}

static void counted_release(struct ttm_fence *f)
{
	__atomic_add_fetch(&counted_releases, 1, __ATOMIC_RELAXED);
	free(f);
}

static const struct ttm_fence_ops counted_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = counted_name,
	.get_timeline_name = counted_name,
	.release = counted_release,
};

/* A driver fence whose release is counted (after a grace period). */
static struct ttm_fence *counted_fence(void)
{
	struct ttm_fence *f = malloc(sizeof(*f));

	assert_non_null(f);
	ttm_fence_init(f, &counted_ops, ttm_fence_context_alloc(1), 1);
	return f;
}

/* Releases so far, once every deferred one has run. */
static int counted(void)
{
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	return __atomic_load_n(&counted_releases, __ATOMIC_RELAXED);
}

#define N_LONG 10000

/*
 * A long-lived timeline does not keep its signalled points: the query's
 * walk drops every link behind the head whose fence has signalled (their
 * fences are released), stopping at a point still pending, as the
 * kernel's dma_fence_chain_walk(); a point whose links are all gone is
 * then the stub (drm_syncobj_find_fence()). A point no one waits for arms
 * no callback, so a fence that never signals does not keep its link, nor
 * the chain, alive once the syncobj goes.
 */
static void test_timeline_prunes(void **state)
{
	struct fixture *fx = *state;
	uint32_t h = syncobj_new(fx->a, 0), h2 = syncobj_new(fx->a, 0);
	struct ttm_fence *first = counted_fence(), *f, *got;
	struct ttm_syncobj *s;
	int base = counted();
	uint64_t i;

	/* Point 1 pending, 2..N_LONG signalled. */
	add_point(fx->a, h, first, 1);
	for (i = 2; i <= N_LONG; i++) {
		f = counted_fence();
		add_point(fx->a, h, f, i);
		assert_int_equal(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
	}
	assert_int_equal(counted(), base);
	assert_int_equal(query(fx->a, h, 0), 0);
	/* All but the head's fence and the pending one. */
	assert_int_equal(counted(), base + N_LONG - 2);
	assert_int_equal(ttm_fence_signal(first, 0), 0);
	ttm_fence_put(first);
	assert_int_equal(query(fx->a, h, 0), N_LONG);
	assert_int_equal(counted(), base + N_LONG - 1);
	s = ttm_client_syncobj_lookup(fx->a, h);
	assert_int_equal(ttm_syncobj_find_fence(s, 1, &got), 0);
	f = ttm_fence_get_stub();
	assert_ptr_equal(got, f);
	ttm_fence_put(f);
	ttm_fence_put(got);
	ttm_syncobj_put(s);
	assert_int_equal(twait(fx->a, h, N_LONG, 0), 0);
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h), 0);
	assert_int_equal(counted(), base + N_LONG);

	/* Never signalled, never waited for: freed with the syncobj. */
	f = counted_fence();
	add_point(fx->a, h2, f, 1);
	ttm_fence_put(f);
	assert_int_equal(query(fx->a, h2, 0), 0);
	assert_int_equal(ttm_client_syncobj_destroy(fx->a, h2), 0);
	assert_int_equal(counted(), base + N_LONG + 1);
}

#define SYNCOBJ_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		SYNCOBJ_TEST(test_create),
		SYNCOBJ_TEST(test_destroy),
		SYNCOBJ_TEST(test_signal_reset),
		SYNCOBJ_TEST(test_wait_empty),
		SYNCOBJ_TEST(test_wait_errors),
		SYNCOBJ_TEST(test_wait_any_all),
		SYNCOBJ_TEST(test_wait_wakes),
		SYNCOBJ_TEST(test_wait_samples_fence),
		SYNCOBJ_TEST(test_wait_for_submit),
		SYNCOBJ_TEST(test_wait_for_submit_timeout),
		SYNCOBJ_TEST(test_wait_interrupt),
		SYNCOBJ_TEST(test_wait_in_signalling_section),
		SYNCOBJ_TEST(test_threads),
		SYNCOBJ_TEST(test_query),
		SYNCOBJ_TEST(test_fd_two_clients),
		SYNCOBJ_TEST(test_fd_bogus),
		SYNCOBJ_TEST(test_sync_file),
		SYNCOBJ_TEST(test_client_close),
		SYNCOBJ_TEST(test_execbuf),
		SYNCOBJ_TEST(test_execbuf_errors),
		SYNCOBJ_TEST(test_execbuf_two_clients),
		SYNCOBJ_TEST(test_timeline_signal),
		SYNCOBJ_TEST(test_timeline_order),
		SYNCOBJ_TEST(test_timeline_lower_point),
		SYNCOBJ_TEST(test_timeline_wait_submit),
		SYNCOBJ_TEST(test_transfer),
		SYNCOBJ_TEST(test_transfer_wait),
		SYNCOBJ_TEST(test_timeline_threads),
		SYNCOBJ_TEST(test_execbuf_timeline),
		SYNCOBJ_TEST(test_timeline_prunes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
