// SPDX-License-Identifier: MIT
/*
 * The LRU tools of ttmsim/lru.h: the walk (order, no bump, its cursor
 * surviving buffers removed, used and bulk-moved while it is paused, its
 * locking and back-off), swap-out with contents intact, the shrinker
 * running while submitters run, evict-all leaving pinned buffers behind,
 * bulk moves and ttm_bo_move_to_lru_tail(), pinned bytes per domain.
 *
 * The walks that pause do it in process_bo, on an event the test sets, so
 * every interleaving is forced, not slept for.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bo_helpers.h"

#include "ttmsim/exec.h"
#include "ttmsim/fence.h"
#include "util/compiler.h"

#define MAX_SEEN 16

static struct ttm_device *lru_device(const struct ttm_device_funcs *funcs,
				     void *data)
{
	struct ttm_device_options opts = {
		.vram_size = 64 * KiB,
		.gtt_size = 64 * KiB,
		.funcs = funcs,
		.funcs_data = data,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

/* The LRU of @d is exactly @want[0..n-1], head first. */
static void expect_lru(struct ttm_device *dev, enum ttm_domain d,
		       struct ttm_bo *const *want, long n, int line)
{
	struct ttm_bo *got[MAX_SEEN];
	long i, count = lru_order(dev, d, got, MAX_SEEN);
	bool ok = count == n;

	for (i = 0; ok && i < n; i++)
		ok = got[i] == want[i];
	if (!ok)
		fail_msg("the LRU of domain %d is not as line %d expects", d,
			 line);
}
#define EXPECT_LRU(dev, d, ...)                                         \
	expect_lru(dev, d, (struct ttm_bo *[]){ __VA_ARGS__ },          \
		   ARRAY_SIZE(((struct ttm_bo *[]){ __VA_ARGS__ })),    \
		   __LINE__)

static void touch(struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ttm_bo_unreserve(bo);
}

/* Words seed << 16 | index over all of @bo, which is reserved. */
static void fill(struct ttm_bo *bo, uint32_t seed)
{
	uint64_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *w = malloc(n * 4);

	assert_non_null(w);
	for (i = 0; i < n; i++)
		w[i] = seed << 16 | (uint32_t)(i & 0xffff);
	assert_int_equal(ttm_bo_write(bo, 0, w, n * 4), 0);
	free(w);
}

/* Whether reserved @bo still holds fill(@bo, @seed)'s words. */
static bool intact(struct ttm_bo *bo, uint32_t seed)
{
	uint64_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *w = malloc(n * 4);
	bool ok = w && ttm_bo_read(bo, 0, w, n * 4) == 0;

	for (i = 0; ok && i < n; i++)
		ok = w[i] == (seed << 16 | (uint32_t)(i & 0xffff));
	free(w);
	return ok;
}

/* ---- a walk that records what it gets, and may pause --------------------- */

struct rec_walk {
	struct ttm_lru_walk walk;
	struct ttm_operation_ctx ctx;
	struct ttm_device *dev;
	enum ttm_domain domain;
	long target;
	long ret;                    /* the walk's */
	long give;                   /* process_bo's for each buffer */
	struct ttm_bo *seen[MAX_SEEN];
	int n;
	struct ttm_bo *pause_at;     /* pause on this one */
	struct event paused, resume;
	pthread_t thread;
};

static long rec_process(struct ttm_lru_walk *walk, struct ttm_bo *bo)
{
	struct rec_walk *r = container_of(walk, struct rec_walk, walk);

	/* Handed out reserved and referenced, without the device lock. */
	CHECK(ww_mutex_is_locked(&ttm_bo_resv(bo)->lock));
	CHECK(check_dev_ok(r->dev, "in process_bo"));
	if (r->n < MAX_SEEN)
		r->seen[r->n++] = bo;
	if (bo == r->pause_at) {
		event_set(&r->paused);
		CHECK(event_wait_for(&r->resume, 30));
	}
	return r->give;
}

static const struct ttm_lru_walk_ops rec_ops = {
	.process_bo = rec_process,
};

static void rec_init(struct rec_walk *r, struct ttm_device *dev,
		     enum ttm_domain domain)
{
	memset(r, 0, sizeof(*r));
	r->walk.ops = &rec_ops;
	r->walk.ctx = &r->ctx;
	r->dev = dev;
	r->domain = domain;
	r->target = 1L << 40;
	event_init(&r->paused);
	event_init(&r->resume);
}

static void *rec_thread(void *arg)
{
	struct rec_walk *r = arg;

	r->ret = ttm_lru_walk_for_evict(&r->walk, r->dev, r->domain,
					r->target);
	return NULL;
}

/* Start @r's walk in a thread of its own; back once it paused. */
static void rec_start_paused(struct rec_walk *r)
{
	r->thread = start_thread(rec_thread, r);
	assert_true(event_wait_for(&r->paused, 30));
}

static void rec_finish(struct rec_walk *r)
{
	event_set(&r->resume);
	join_thread(r->thread);
	event_destroy(&r->paused);
	event_destroy(&r->resume);
}

static void expect_seen(struct rec_walk *r, struct ttm_bo *const *want,
			int n)
{
	int i;

	assert_int_equal(r->n, n);
	for (i = 0; i < n; i++)
		assert_ptr_equal(r->seen[i], want[i]);
}
#define EXPECT_SEEN(r, ...)                                             \
	expect_seen(r, (struct ttm_bo *[]){ __VA_ARGS__ },              \
		    ARRAY_SIZE(((struct ttm_bo *[]){ __VA_ARGS__ })))

/* ---- the walk ------------------------------------------------------------ */

/*
 * Head to tail; the walk's unlock leaves the LRU as it was (a bump would
 * make it meet its buffers again); the target ends it; a bad domain.
 */
static void test_walk_order_no_bump(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *c = create_bo(dev, 4 * KiB, &vram_only);
	struct rec_walk r;

	(void)state;
	touch(a);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, b, c, a);
	rec_init(&r, dev, TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev,
						TTM_DOMAIN_VRAM, 100), 0);
	EXPECT_SEEN(&r, b, c, a);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, b, c, a);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(a)->lock));

	/* Counting 3 bytes a buffer, a target of 5 takes two. */
	rec_init(&r, dev, TTM_DOMAIN_VRAM);
	r.give = 3;
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev,
						TTM_DOMAIN_VRAM, 5), 6);
	EXPECT_SEEN(&r, b, c);

	/* An error ends it at once, and is what it returns. */
	rec_init(&r, dev, TTM_DOMAIN_VRAM);
	r.give = -ENOMEM;
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev,
						TTM_DOMAIN_VRAM, 5), -ENOMEM);
	EXPECT_SEEN(&r, b);
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev,
						TTM_DOMAIN_COUNT, 5), -EINVAL);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, b, c, a);
	assert_dev_ok(dev);
	ttm_bo_put(a);
	ttm_bo_put(b);
	ttm_bo_put(c);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * While the walk is paused on a (the device lock dropped, its hitch right
 * after a): b, next in line, is destroyed; c is used (to the tail); e
 * arrives; another thread's eviction walks the same LRU. The walk goes on
 * to d and ends: c and e joined the tail after it started. The hitches
 * are invisible to the snapshot, the eviction and the check.
 */
static void test_walk_cursor_survives(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 16 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 16 * KiB, &vram_only);
	struct ttm_bo *c = create_bo(dev, 16 * KiB, &vram_only);
	struct ttm_bo *d = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_bo *e, *f;
	struct rec_walk r;

	(void)state;
	rec_init(&r, dev, TTM_DOMAIN_VRAM);
	r.pause_at = a;
	rec_start_paused(&r);
	assert_dev_ok(dev);
	ttm_bo_put(b);
	touch(c);
	e = create_bo(dev, 16 * KiB, &vram_only);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, a, d, c, e);
	/*
	 * VRAM is full (64 KiB): f evicts from the head past the walk's
	 * hitch; a is reserved by the walk, so d goes.
	 */
	f = create_bo(dev, 16 * KiB, &vram_only);
	assert_int_equal(ttm_bo_domain(d), TTM_DOMAIN_GTT);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, a, c, e, f);
	rec_finish(&r);
	assert_int_equal(r.ret, 0);
	EXPECT_SEEN(&r, a);
	EXPECT_LRU(dev, TTM_DOMAIN_VRAM, a, c, e, f);

	/* Again: c, used while the walk is paused on a, is not reached. */
	rec_init(&r, dev, TTM_DOMAIN_VRAM);
	r.pause_at = a;
	rec_start_paused(&r);
	touch(c);
	rec_finish(&r);
	EXPECT_SEEN(&r, a, e, f);
	assert_dev_ok(dev);
	ttm_bo_put(a);
	ttm_bo_put(c);
	ttm_bo_put(d);
	ttm_bo_put(e);
	ttm_bo_put(f);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* A buffer held by a thread without a ticket is skipped, not waited for. */
static void test_walk_trylock_skips(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &gtt_only);
	struct rec_walk r;

	(void)state;
	assert_int_equal(ttm_bo_reserve(a, false, false, NULL), 0);
	rec_init(&r, dev, TTM_DOMAIN_GTT);
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev, TTM_DOMAIN_GTT,
						100), 0);
	EXPECT_SEEN(&r, b);
	/* The caller's own reservation, with allow_res_evict: handed out. */
	rec_init(&r, dev, TTM_DOMAIN_GTT);
	r.ctx.allow_res_evict = true;
	r.ctx.resv = ttm_bo_resv(a);
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev, TTM_DOMAIN_GTT,
						100), 0);
	EXPECT_SEEN(&r, a, b);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(a)->lock));
	ttm_bo_unreserve(a);
	ttm_bo_put(a);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

struct holder {
	struct ttm_device *dev;
	struct ttm_bo *bo;
	struct ww_acquire_ctx ticket;
	struct event locked, release;
};

static void *holder_thread(void *arg)
{
	struct holder *h = arg;

	/* Before the test's exec starts: the older ticket. */
	ww_acquire_init(&h->ticket, ttm_device_ww_class(h->dev));
	CHECK_INT(ttm_bo_reserve(h->bo, false, false, &h->ticket), 0);
	event_set(&h->locked);
	CHECK(event_wait_for(&h->release, 30));
	ttm_bo_unreserve(h->bo);
	ww_acquire_fini(&h->ticket);
	return NULL;
}

/*
 * With a ticket, a buffer an older ticket holds makes the walk back off:
 * -EDEADLK, the buffer marked contended in the caller's exec, which then
 * locks it first on the next pass (Wait-Die: the younger one dies).
 */
static void test_walk_ticket_backoff(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *x = create_bo(dev, 4 * KiB, &system_only);
	struct holder h = { .dev = dev, .bo = a };
	struct ttm_exec exec;
	struct rec_walk r;
	pthread_t t;
	int passes = 0;

	(void)state;
	event_init(&h.locked);
	event_init(&h.release);
	t = start_thread(holder_thread, &h);
	assert_true(event_wait_for(&h.locked, 30));

	rec_init(&r, dev, TTM_DOMAIN_GTT);
	ttm_exec_init(&exec, dev, 0);
	r.ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		long ret;

		passes++;
		ret = ttm_exec_lock_bo(&exec, x);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1) {
			r.walk.ticket = ttm_exec_ticket(&exec);
			ret = ttm_lru_walk_for_evict(&r.walk, dev,
						     TTM_DOMAIN_GTT, 100);
			assert_int_equal(ret, -EDEADLK);
			assert_int_equal(r.n, 0);
			/* Let the holder go: the next pass gets a first. */
			event_set(&h.release);
		}
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(passes, 2);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(a)->lock));
	/*
	 * Held by the walk's ticket for eviction only (the back-off's, the
	 * body never locked it): handed out as it is.
	 */
	assert_true(ttm_exec_is_evictable(&exec, a));
	rec_init(&r, dev, TTM_DOMAIN_GTT);
	r.ctx.exec = &exec;
	r.walk.ticket = ttm_exec_ticket(&exec);
	assert_int_equal(ttm_lru_walk_for_evict(&r.walk, dev, TTM_DOMAIN_GTT,
						100), 0);
	EXPECT_SEEN(&r, a);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(a)->lock));
	ttm_exec_fini(&exec);
	join_thread(t);
	event_destroy(&h.locked);
	event_destroy(&h.release);
	assert_dev_ok(dev);
	ttm_bo_put(a);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- swap-out ------------------------------------------------------------ */

struct swap_count {
	int notified;   /* atomic */
};

static void count_swap_notify(struct ttm_bo *bo, void *data)
{
	struct swap_count *s = data;

	CHECK(ww_mutex_is_locked(&ttm_bo_resv(bo)->lock));
	__atomic_add_fetch(&s->notified, 1, __ATOMIC_RELAXED);
}

static const struct ttm_device_funcs swap_funcs = {
	.swap_notify = count_swap_notify,
};

/*
 * One buffer to SYSTEM with its contents; the refusals; the shrinker
 * takes GTT's head first, then VRAM's, until its target.
 */
static void test_swapout(void **state)
{
	struct swap_count sc = { 0 };
	struct ttm_device *dev = lru_device(&swap_funcs, &sc);
	struct ttm_bo *v1 = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_bo *v2 = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_bo *g1 = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *p = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device_stats st;
	struct ttm_bo *all[] = { v1, v2, g1, p };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		assert_int_equal(ttm_bo_reserve(all[i], false, false, NULL), 0);
		fill(all[i], i + 1);
		ttm_bo_unreserve(all[i]);
	}
	assert_int_equal(ttm_bo_reserve(p, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(p), 0);
	assert_int_equal(ttm_bo_swapout(p, &ctx), -EBUSY);
	ttm_bo_unreserve(p);

	assert_int_equal(ttm_bo_reserve(v2, false, false, NULL), 0);
	assert_int_equal(ttm_bo_swapout(v2, &ctx), 0);
	assert_int_equal(ttm_bo_domain(v2), TTM_DOMAIN_SYSTEM);
	assert_true(intact(v2, 2));
	/* Already there: nothing to do. */
	assert_int_equal(ttm_bo_swapout(v2, &ctx), 0);
	ttm_bo_unreserve(v2);
	assert_int_equal(sc.notified, 1);
	assert_dev_ok(dev);

	/* 10 KiB: g1 (GTT first, p pinned), then v1. */
	assert_int_equal(ttm_device_swapout(dev, &ctx, 10 * KiB), 12 * KiB);
	assert_int_equal(ttm_bo_domain(g1), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(v1), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(p), TTM_DOMAIN_GTT);
	assert_int_equal(sc.notified, 3);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 0);
	assert_int_equal(st.domain[TTM_DOMAIN_GTT].used, 4 * KiB);
	assert_int_equal(st.evictions, 3);
	/* Nothing left to take (a NULL context: the defaults). */
	assert_int_equal(ttm_device_swapout(dev, NULL, 10 * KiB), 0);
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		assert_int_equal(ttm_bo_reserve(all[i], false, false, NULL), 0);
		assert_true(intact(all[i], i + 1));
		if (all[i] == p)
			assert_int_equal(ttm_bo_unpin(p), 0);
		ttm_bo_unreserve(all[i]);
	}
	assert_dev_ok(dev);
	for (i = 0; i < ARRAY_SIZE(all); i++)
		ttm_bo_put(all[i]);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- the shrinker while submitters run (for TSan) ------------------------ */

#define SUBMITTERS 3
#define PER_THREAD 4
#define ROUNDS 300

struct shrink_arg {
	struct ttm_device *dev;
	int done;      /* atomic: submitters finished */
	long swapped;
	unsigned int walks;
};

struct submit_arg {
	struct shrink_arg *sh;
	unsigned int id;
};

static void *submitter(void *arg)
{
	struct submit_arg *s = arg;
	struct ttm_device *dev = s->sh->dev;
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_bo *bos[PER_THREAD];
	unsigned int i, r;

	for (i = 0; i < PER_THREAD; i++) {
		CHECK_INT(ttm_bo_create(dev, 4 * KiB, &vram_gtt, 0, &bos[i]),
			  0);
		CHECK_INT(ttm_bo_reserve(bos[i], false, false, NULL), 0);
		fill(bos[i], s->id * PER_THREAD + i + 1);
		ttm_bo_unreserve(bos[i]);
	}
	for (r = 0; r < ROUNDS; r++) {
		struct ttm_bo *bo = bos[r % PER_THREAD];
		uint32_t seed = s->id * PER_THREAD + r % PER_THREAD + 1;

		CHECK_INT(ttm_bo_reserve(bo, false, false, NULL), 0);
		CHECK_INT(ttm_bo_validate(bo, &vram_gtt, &ctx), 0);
		CHECK(ttm_bo_domain(bo) != TTM_DOMAIN_SYSTEM);
		CHECK(intact(bo, seed));
		ttm_bo_unreserve(bo);
	}
	for (i = 0; i < PER_THREAD; i++)
		ttm_bo_put(bos[i]);
	__atomic_add_fetch(&s->sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *shrinker(void *arg)
{
	struct shrink_arg *s = arg;
	struct ttm_operation_ctx ctx = { 0 };

	while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) < SUBMITTERS ||
	       s->walks < 10) {
		long ret = ttm_device_swapout(s->dev, &ctx, 8 * KiB);

		CHECK(ret >= 0);
		if (ret > 0)
			s->swapped += ret;
		s->walks++;
		CHECK(check_dev_ok(s->dev, "after a swap-out"));
	}
	return NULL;
}

/*
 * Submitters validate their buffers back into VRAM/GTT and check their
 * contents each round while a shrinker swaps them out to SYSTEM: no
 * buffer's contents lost, the accounting exact throughout.
 */
static void test_shrinker_with_submitters(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct shrink_arg sh = { .dev = dev };
	struct submit_arg args[SUBMITTERS];
	pthread_t t[SUBMITTERS], ts;
	unsigned int i;

	(void)state;
	ts = start_thread(shrinker, &sh);
	for (i = 0; i < SUBMITTERS; i++) {
		args[i] = (struct submit_arg){ .sh = &sh, .id = i };
		t[i] = start_thread(submitter, &args[i]);
	}
	for (i = 0; i < SUBMITTERS; i++)
		join_thread(t[i]);
	join_thread(ts);
	assert_dev_ok(dev);
	assert_true(sh.walks >= 10);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- evict-all ----------------------------------------------------------- */

struct evict_all_arg {
	struct ttm_device *dev;
	int ret;
};

static void *evict_all_thread(void *arg)
{
	struct evict_all_arg *e = arg;
	struct ttm_operation_ctx ctx = { 0 };

	e->ret = ttm_device_evict_all(e->dev, TTM_DOMAIN_VRAM, &ctx);
	return NULL;
}

/*
 * Suspend: every unpinned VRAM buffer goes (to GTT while it has room,
 * then SYSTEM), the one a thread holds once it lets it go; the pinned
 * one stays: -EBUSY. Once unpinned, evict-all empties VRAM: 0.
 */
static void test_evict_all(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *gfill = create_bo(dev, 56 * KiB, &gtt_only);
	struct ttm_bo *bos[4], *p = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_operation_ctx ctx = { 0 };
	struct evict_all_arg e = { .dev = dev };
	struct ttm_device_stats st;
	pthread_t t;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bos); i++) {
		bos[i] = create_bo(dev, 8 * KiB, &vram_only);
		assert_int_equal(ttm_bo_reserve(bos[i], false, false, NULL), 0);
		fill(bos[i], i + 7);
		ttm_bo_unreserve(bos[i]);
	}
	assert_int_equal(ttm_bo_reserve(p, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(p), 0);
	ttm_bo_unreserve(p);
	/* bos[1] held: evict-all sleeps on it until it is released. */
	assert_int_equal(ttm_bo_reserve(bos[1], false, false, NULL), 0);
	t = start_thread(evict_all_thread, &e);
	assert_true(wait_for_waiters(&ttm_bo_resv(bos[1])->lock, 1));
	ttm_bo_unreserve(bos[1]);
	join_thread(t);
	assert_int_equal(e.ret, -EBUSY);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 8 * KiB);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].pinned, 8 * KiB);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].buffers, 1);
	assert_int_equal(st.domain[TTM_DOMAIN_GTT].used, 64 * KiB);
	assert_int_equal(ttm_bo_domain(p), TTM_DOMAIN_VRAM);
	for (i = 0; i < ARRAY_SIZE(bos); i++) {
		assert_int_not_equal(ttm_bo_domain(bos[i]), TTM_DOMAIN_VRAM);
		assert_int_equal(ttm_bo_reserve(bos[i], false, false, NULL), 0);
		assert_true(intact(bos[i], i + 7));
		ttm_bo_unreserve(bos[i]);
	}
	assert_dev_ok(dev);

	assert_int_equal(ttm_device_evict_all(dev, TTM_DOMAIN_SYSTEM, &ctx),
			 -EINVAL);
	assert_int_equal(ttm_bo_reserve(p, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(p), 0);
	ttm_bo_unreserve(p);
	assert_int_equal(ttm_device_evict_all(dev, TTM_DOMAIN_VRAM, NULL), 0);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 0);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].pinned, 0);
	assert_dev_ok(dev);
	for (i = 0; i < ARRAY_SIZE(bos); i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(p);
	ttm_bo_put(gfill);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Evict-all waits for busy buffers: one whose GPU work is not done (its
 * move waits for the fence), and one waiting for its delayed destroy,
 * which nothing can evict: it returns only once that one is freed, or
 * -EBUSY at once with no_wait_gpu.
 */
static void test_evict_all_busy(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *z = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_fence *fz = busy_fence(z), *fb = busy_fence(b);
	struct evict_all_arg e = { .dev = dev, .ret = 1 };
	struct ttm_device_stats st;
	pthread_t t;

	struct ttm_operation_ctx no_wait = { .no_wait_gpu = true };

	(void)state;
	ttm_bo_put(z);
	assert_int_equal(ttm_fence_signal(fb, 0), 0);
	assert_int_equal(ttm_device_evict_all(dev, TTM_DOMAIN_VRAM, &no_wait),
			 -EBUSY);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 8 * KiB);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_GTT);
	ttm_fence_put(fb);

	/* b back in VRAM, busy again: this time evict-all sleeps on it. */
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(b, &vram_only, &no_wait), 0);
	ttm_bo_unreserve(b);
	fb = busy_fence(b);
	t = start_thread(evict_all_thread, &e);
	assert_true(wait_for_fence_waiters(fb, 1));
	assert_int_equal(ttm_fence_signal(fb, 0), 0);
	assert_int_equal(ttm_fence_signal(fz, 0), 0);
	join_thread(t);
	assert_int_equal(e.ret, 0);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 0);
	assert_int_equal(st.zombies, 0);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_GTT);
	assert_dev_ok(dev);
	ttm_fence_put(fb);
	ttm_fence_put(fz);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Pipelined eviction: a copy out of VRAM gives its range back at once,
 * but reads it until it ends. Evict-all, which a suspend follows by
 * losing VRAM, waits for those copies (as TTM's for its manager's move
 * fence): -EBUSY with no_wait_gpu while b's copy waits for b's fence,
 * sleeping on the copy without, 0 once it ran.
 */
static void test_evict_all_waits_copies(void **state)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_device_options opts = {
		.vram_size = 64 * KiB,
		.gtt_size = 64 * KiB,
	};
	struct ttm_operation_ctx no_wait = { .no_wait_gpu = true };
	struct evict_all_arg e = { .ret = 1 };
	struct ttm_fence **copy, *fb;
	struct ttm_device_stats st;
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	struct ttm_bo *b;
	unsigned int n;
	pthread_t t;

	(void)state;
	assert_int_equal(ttm_gpu_create(1, &gopts, &gpu), 0);
	opts.gpu = gpu;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	e.dev = dev;
	b = create_bo(dev, 8 * KiB, &vram_only);
	fb = busy_fence(b);
	assert_int_equal(ttm_device_evict_all(dev, TTM_DOMAIN_VRAM, &no_wait),
			 -EBUSY);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 0);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_GTT);

	/* The copy's fence, the only KERNEL one of b. */
	assert_int_equal(ttm_resv_get_fences(ttm_bo_resv(b),
					     TTM_RESV_USAGE_KERNEL, &copy,
					     &n), 0);
	assert_int_equal(n, 1);
	t = start_thread(evict_all_thread, &e);
	assert_true(wait_for_fence_waiters(copy[0], 1));
	assert_int_equal(ttm_fence_signal(fb, 0), 0);
	assert_int_equal(ttm_gpu_advance(gpu, 1000000), 0);
	join_thread(t);
	assert_int_equal(e.ret, 0);
	assert_true(ttm_fence_is_signaled(copy[0]));
	ttm_fence_put(copy[0]);
	free(copy);
	ttm_fence_put(fb);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
	ttm_gpu_destroy(gpu);
}

/* ---- bulk moves ---------------------------------------------------------- */

static void set_bulk(struct ttm_bo *bo, struct ttm_lru_bulk_move *bulk)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(bo, bulk), 0);
	ttm_bo_unreserve(bo);
}

/*
 * Members join at their group's tail, kept together; a use moves one to
 * the group's tail; ttm_lru_bulk_move_tail() moves the group as a whole;
 * members leaving from either end or the middle, or destroyed, keep the
 * group's ends right (ttm_device_check() verifies them).
 */
static void test_bulk_move(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *c = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *d = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *e = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_lru_bulk_move bulk, other;

	(void)state;
	ttm_lru_bulk_move_init(&bulk);
	set_bulk(a, &bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, b, c, d, a);
	/* b joins after a, as set_bulk()'s unreserve bumps it in there. */
	set_bulk(b, &bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, d, a, b);
	touch(c);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, d, a, b, c);
	/* A use of a member: the tail of its group, not of the LRU. */
	touch(a);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, d, b, a, c);
	assert_dev_ok(dev);
	ttm_lru_bulk_move_tail(&bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, d, c, b, a);
	/* The group lives in each domain: e's VRAM group of one. */
	set_bulk(e, &bulk);
	set_bulk(d, &bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, b, a, d);
	assert_int_equal(ttm_bo_reserve(a, false, false, NULL), 0);
	ttm_bo_move_to_lru_tail(a);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, b, d, a);
	ttm_bo_unreserve(a);
	assert_dev_ok(dev);

	/*
	 * Leaving from the middle: right after the group (looked at before
	 * the unreserve, whose use moves it to the tail anyway).
	 */
	assert_int_equal(ttm_bo_reserve(d, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(d, NULL), 0);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, b, a, d);
	assert_dev_ok(dev);
	ttm_bo_unreserve(d);
	/* Leaving first: it stays, the group starts after it. */
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(b, NULL), 0);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, b, a, d);
	assert_dev_ok(dev);
	ttm_bo_unreserve(b);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, a, d, b);
	ttm_lru_bulk_move_tail(&bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, c, d, b, a);
	assert_int_equal(ttm_lru_bulk_move_fini(&bulk), -EBUSY);

	/* A bulk of its own; destroyed members leave it. */
	ttm_lru_bulk_move_init(&other);
	set_bulk(c, &other);
	assert_int_equal(ttm_lru_bulk_move_fini(&other), -EBUSY);
	ttm_bo_put(c);
	assert_int_equal(ttm_lru_bulk_move_fini(&other), 0);
	ttm_bo_put(e);
	ttm_bo_put(a);
	assert_dev_ok(dev);
	assert_int_equal(ttm_lru_bulk_move_fini(&bulk), 0);
	ttm_bo_put(b);
	ttm_bo_put(d);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* A bulk move's members are of one device. */
static void test_bulk_move_xdev(void **state)
{
	struct ttm_device *d1 = lru_device(NULL, NULL);
	struct ttm_device *d2 = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(d1, 4 * KiB, &gtt_only);
	struct ttm_bo *b = create_bo(d2, 4 * KiB, &gtt_only);
	struct ttm_lru_bulk_move bulk;

	(void)state;
	ttm_lru_bulk_move_init(&bulk);
	set_bulk(a, &bulk);
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(b, &bulk), -EXDEV);
	ttm_bo_unreserve(b);
	set_bulk(a, NULL);
	assert_int_equal(ttm_lru_bulk_move_fini(&bulk), 0);
	ttm_bo_put(a);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(d1), 0);
	assert_int_equal(ttm_device_destroy(d2), 0);
}

/* GTT's LRU: x, then a bulk group g[0..2], then y, each of 4 KiB. */
struct bulk_fix {
	struct ttm_device *dev;
	struct ttm_bo *x, *g[3], *y;
	struct ttm_lru_bulk_move bulk;
};

static void bulk_fix_init(struct bulk_fix *f)
{
	unsigned int i;

	f->dev = lru_device(NULL, NULL);
	f->x = create_bo(f->dev, 4 * KiB, &gtt_only);
	for (i = 0; i < 3; i++)
		f->g[i] = create_bo(f->dev, 4 * KiB, &gtt_only);
	ttm_lru_bulk_move_init(&f->bulk);
	for (i = 0; i < 3; i++)
		set_bulk(f->g[i], &f->bulk);
	f->y = create_bo(f->dev, 4 * KiB, &gtt_only);
	EXPECT_LRU(f->dev, TTM_DOMAIN_GTT, f->x, f->g[0], f->g[1], f->g[2],
		   f->y);
}

static void bulk_fix_fini(struct bulk_fix *f)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		set_bulk(f->g[i], NULL);
	assert_int_equal(ttm_lru_bulk_move_fini(&f->bulk), 0);
	assert_dev_ok(f->dev);
	ttm_bo_put(f->x);
	ttm_bo_put(f->y);
	for (i = 0; i < 3; i++)
		ttm_bo_put(f->g[i]);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
}

/*
 * A pinned member leaves the LRU and its group, and joins the group's tail
 * when unpinned; a walk paused inside a group stays where the group was
 * when the group moves to the tail: it goes on with the buffers after
 * the group and does not meet the group's rest (just used).
 */
static void test_bulk_pin_and_walk(void **state)
{
	struct bulk_fix f;
	struct ttm_bo *x, *g1, *g2, *g3, *y;
	struct ttm_device *dev;
	struct rec_walk r;

	(void)state;
	bulk_fix_init(&f);
	dev = f.dev, x = f.x, y = f.y;
	g1 = f.g[0], g2 = f.g[1], g3 = f.g[2];

	assert_int_equal(ttm_bo_reserve(g2, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(g2), 0);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, x, g1, g3, y);
	assert_dev_ok(dev);
	assert_int_equal(ttm_bo_unpin(g2), 0);
	ttm_bo_unreserve(g2);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, x, g1, g3, g2, y);
	assert_dev_ok(dev);

	rec_init(&r, dev, TTM_DOMAIN_GTT);
	r.pause_at = g1;
	rec_start_paused(&r);
	ttm_lru_bulk_move_tail(&f.bulk);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, x, y, g1, g3, g2);
	assert_dev_ok(dev);
	rec_finish(&r);
	EXPECT_SEEN(&r, x, g1, y);
	EXPECT_LRU(dev, TTM_DOMAIN_GTT, x, y, g1, g3, g2);
	bulk_fix_fini(&f);
}

/*
 * A use of a group's member moves it to the group's tail, which may lie
 * ahead of a walk paused inside the group: the walk does not take it a
 * second time.
 */
static void test_bulk_walk_no_revisit(void **state)
{
	struct bulk_fix f;
	struct rec_walk r;

	(void)state;
	bulk_fix_init(&f);
	rec_init(&r, f.dev, TTM_DOMAIN_GTT);
	r.pause_at = f.g[1];
	rec_start_paused(&r);
	touch(f.g[0]);
	EXPECT_LRU(f.dev, TTM_DOMAIN_GTT, f.x, f.g[1], f.g[2], f.g[0], f.y);
	rec_finish(&r);
	EXPECT_SEEN(&r, f.x, f.g[0], f.g[1], f.g[2], f.y);
	assert_dev_ok(f.dev);
	bulk_fix_fini(&f);
}

/* ---- pinned bytes -------------------------------------------------------- */

static uint64_t pinned_of(struct ttm_device *dev, enum ttm_domain d)
{
	struct ttm_device_stats st;

	ttm_device_get_stats(dev, &st);
	return st.domain[d].pinned;
}

/* Counted once per buffer whatever its pin count, gone at the last unpin. */
static void test_pinned_stats(void **state)
{
	struct ttm_device *dev = lru_device(NULL, NULL);
	struct ttm_bo *a = create_bo(dev, 8 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &gtt_only);

	(void)state;
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(ttm_bo_reserve(a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(a), 0);
	assert_int_equal(ttm_bo_pin(a), 0);
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_VRAM), 8 * KiB);
	assert_int_equal(ttm_bo_unpin(a), 0);
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_VRAM), 8 * KiB);
	assert_dev_ok(dev);
	assert_int_equal(ttm_bo_unpin(a), 0);
	ttm_bo_unreserve(a);
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(b), 0);
	ttm_bo_unreserve(b);
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_GTT), 4 * KiB);
	assert_dev_ok(dev);
	/* A pinned buffer's last put gives its pinned bytes back. */
	ttm_bo_put(b);
	assert_int_equal(pinned_of(dev, TTM_DOMAIN_GTT), 0);
	assert_dev_ok(dev);
	ttm_bo_put(a);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static int lru_teardown(void **state)
{
	(void)state;
	assert_checks_passed();
	return 0;
}

#define LRU_TEST(fn)                                                    \
	cmocka_unit_test_setup_teardown(fn, checks_reset, lru_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		LRU_TEST(test_walk_order_no_bump),
		LRU_TEST(test_walk_cursor_survives),
		LRU_TEST(test_walk_trylock_skips),
		LRU_TEST(test_walk_ticket_backoff),
		LRU_TEST(test_swapout),
		LRU_TEST(test_shrinker_with_submitters),
		LRU_TEST(test_evict_all),
		LRU_TEST(test_evict_all_busy),
		LRU_TEST(test_evict_all_waits_copies),
		LRU_TEST(test_bulk_move),
		LRU_TEST(test_bulk_move_xdev),
		LRU_TEST(test_bulk_pin_and_walk),
		LRU_TEST(test_bulk_walk_no_revisit),
		LRU_TEST(test_pinned_stats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
