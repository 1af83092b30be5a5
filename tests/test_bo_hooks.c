// SPDX-License-Identifier: MIT
/*
 * The driver's device hooks (struct ttm_device_funcs): the order in which
 * moves, evictions and destruction call them, and their context: the
 * buffer reserved by the calling thread, no device lock held (every hook
 * takes a driver mutex and calls ttm_device_get_stats() and
 * ttm_device_check(), which take the device lock: a hook run under it
 * would deadlock), never in a fence callback (every hook runs in the
 * test's thread). A move veto fails the validation with the hook's error
 * and leaves the buffer as it was; -EMULTIHOP bounces; an eviction veto
 * makes the walk take another victim, or -ENOSPC when all are vetoed;
 * delete_mem_notify comes before the old memory is freed; evict_flags
 * chooses the victim's domain; swap_notify on eviction to SYSTEM.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"

#define BO_SIZE (4 * KiB)
#define WORDS (BO_SIZE / 4)
#define MAX_EVENTS 64
#define MAX_BOS 8
#define MAX_DEPS 8

enum hook { MOVE, EVICT_FLAGS, VALUABLE, DELETE_MEM, SWAP, RELEASE };

static const char *const hook_names[] = {
	"move", "evict_flags", "eviction_valuable", "delete_mem_notify",
	"swap_notify", "release_notify",
};

struct hook_event {
	enum hook hook;
	struct ttm_bo *bo;
	int from, to;
	bool reserved;     /* by the calling thread */
	uint64_t used_from; /* delete_mem_notify: the domain's bytes then */
	pthread_t thread;   /* the calling thread */
};

/* What the driver does, and what its hooks saw. */
struct driver {
	pthread_mutex_t lock; /* taken in every hook */
	pthread_t thread;     /* the test's: hooks run in no other */
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	struct hook_event events[MAX_EVENTS];
	unsigned int n_events;
	bool wrong_thread;
	bool any_thread;      /* threaded test: hooks run in its workers */
	/*
	 * move: 0 memcpy, 1 a GPU copy job, 2 TTM_MOVE_DEFAULT, 3 a GPU
	 * copy after the reservation's fences, on engine 1 into VRAM and
	 * on engine 0 out of it (two rings: no FIFO orders them), 4 as 3
	 * but out of VRAM on engines 0 and 2 in turn (two timelines)
	 */
	int move_mode;
	unsigned int moves_out; /* mode 4: copies out of VRAM so far */
	int veto_move_err;    /* returned for moves into veto_move_to */
	int veto_move_to;
	int hop_from, hop_to; /* -EMULTIHOP for this move... */
	int hop_via;          /* ...through this domain (0: GTT) */
	struct ttm_bo *refuse[MAX_BOS]; /* eviction_valuable says no */
	unsigned int n_refuse;
	bool set_evict_flags;
	struct ttm_placement evict_to[TTM_DOMAIN_COUNT]; /* by source */
};

static void record(struct driver *drv, enum hook hook, struct ttm_bo *bo,
		   int from, int to)
{
	struct ttm_device_stats s;
	char msg[128];
	struct hook_event *e;

	/* Both take the device lock: a hook called under it deadlocks. */
	ttm_device_get_stats(drv->dev, &s);
	if (ttm_device_check(drv->dev, msg, sizeof(msg)))
		check_failed(__FILE__, __LINE__, "in %s: %s", hook_names[hook],
			     msg);
	if (!drv->any_thread && !pthread_equal(pthread_self(), drv->thread))
		drv->wrong_thread = true;
	if (drv->n_events == MAX_EVENTS)
		return;
	e = &drv->events[drv->n_events++];
	e->hook = hook;
	e->bo = bo;
	e->from = from;
	e->to = to;
	e->thread = pthread_self();
	e->reserved = ww_mutex_owner_tid(&ttm_bo_resv(bo)->lock) ==
		      test_gettid();
	e->used_from = from >= 0 ? s.domain[from].used : 0;
}

/* move_mode 3: a driver's copy job, after every fence of @bo. */
static int copy_after_fences(struct driver *drv, struct ttm_bo *bo,
			     enum ttm_domain to,
			     const struct ttm_gpu_range *src,
			     const struct ttm_gpu_range *dst,
			     struct ttm_fence **ret_fence)
{
	struct ttm_gpu_range ranges[2] = { *src, *dst };
	struct ttm_gpu_dep deps[MAX_DEPS];
	struct ttm_gpu_job job = {
		.engine = to == TTM_DOMAIN_VRAM ? 1 :
			  drv->move_mode == 4 && drv->moves_out++ % 2 ? 2 : 0,
		.duration_us = 10,
		.op = TTM_GPU_OP_COPY,
		.ranges = ranges,
		.n_ranges = 2,
		.deps = deps,
	};
	struct ttm_fence **fences;
	unsigned int i, n;
	int ret;

	ret = ttm_resv_get_fences(ttm_bo_resv(bo), TTM_RESV_USAGE_BOOKKEEP,
				  &fences, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && i < MAX_DEPS; i++)
		deps[i] = (struct ttm_gpu_dep){ fences[i], false };
	job.n_deps = i;
	ret = n > MAX_DEPS ? -E2BIG : 0;
	if (ret == 0)
		ret = ttm_gpu_submit(drv->gpu, &job, ret_fence);
	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	return ret;
}

static int hook_move(struct ttm_bo *bo, enum ttm_domain from,
		     enum ttm_domain to, const struct ttm_gpu_range *src,
		     const struct ttm_gpu_range *dst,
		     const struct ttm_operation_ctx *ctx, void *data,
		     struct ttm_fence **ret_fence, enum ttm_domain *ret_hop)
{
	struct driver *drv = data;
	int ret = 0;

	(void)ctx;
	pthread_mutex_lock(&drv->lock);
	record(drv, MOVE, bo, from, to);
	if (drv->veto_move_err && (int)to == drv->veto_move_to) {
		ret = drv->veto_move_err;
	} else if ((int)from == drv->hop_from && (int)to == drv->hop_to) {
		if (drv->hop_via)
			*ret_hop = (enum ttm_domain)drv->hop_via;
		ret = -EMULTIHOP;
	} else if (drv->move_mode == 0) {
		memcpy(dst->addr, src->addr, src->size);
	} else if (drv->move_mode == 1) {
		struct ttm_gpu_range ranges[2] = { *src, *dst };
		struct ttm_gpu_job job = {
			.duration_us = 10,
			.op = TTM_GPU_OP_COPY,
			.ranges = ranges,
			.n_ranges = 2,
		};

		/* The test's buffers are idle: no dependency needed. */
		ret = ttm_gpu_submit(drv->gpu, &job, ret_fence);
	} else if (drv->move_mode >= 3) {
		ret = copy_after_fences(drv, bo, to, src, dst, ret_fence);
	} else {
		ret = TTM_MOVE_DEFAULT;
	}
	pthread_mutex_unlock(&drv->lock);
	return ret;
}

static void hook_evict_flags(struct ttm_bo *bo, enum ttm_domain from,
			     struct ttm_placement *placement, void *data)
{
	struct driver *drv = data;

	pthread_mutex_lock(&drv->lock);
	record(drv, EVICT_FLAGS, bo, from, -1);
	if (drv->set_evict_flags)
		*placement = drv->evict_to[from];
	pthread_mutex_unlock(&drv->lock);
}

static bool hook_valuable(struct ttm_bo *bo, enum ttm_domain domain,
			  struct ttm_bo *for_bo, void *data)
{
	struct driver *drv = data;
	bool ok = true;
	unsigned int i;

	(void)for_bo;
	pthread_mutex_lock(&drv->lock);
	record(drv, VALUABLE, bo, domain, -1);
	for (i = 0; i < drv->n_refuse; i++)
		if (drv->refuse[i] == bo)
			ok = false;
	pthread_mutex_unlock(&drv->lock);
	return ok;
}

static void hook_delete_mem(struct ttm_bo *bo, enum ttm_domain domain,
			    void *data)
{
	struct driver *drv = data;

	pthread_mutex_lock(&drv->lock);
	record(drv, DELETE_MEM, bo, domain, -1);
	pthread_mutex_unlock(&drv->lock);
}

static void hook_swap(struct ttm_bo *bo, void *data)
{
	struct driver *drv = data;

	pthread_mutex_lock(&drv->lock);
	record(drv, SWAP, bo, ttm_bo_domain(bo), -1);
	pthread_mutex_unlock(&drv->lock);
}

static void hook_release(struct ttm_bo *bo, void *data)
{
	struct driver *drv = data;

	pthread_mutex_lock(&drv->lock);
	record(drv, RELEASE, bo, ttm_bo_domain(bo), -1);
	pthread_mutex_unlock(&drv->lock);
}

static const struct ttm_device_funcs funcs = {
	.move = hook_move,
	.evict_flags = hook_evict_flags,
	.eviction_valuable = hook_valuable,
	.delete_mem_notify = hook_delete_mem,
	.swap_notify = hook_swap,
	.release_notify = hook_release,
};

/* 16 KiB of VRAM and of GTT; a GPU on its virtual clock if @gpu. */
static void driver_init(struct driver *drv, bool gpu)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_device_options opts = {
		.vram_size = 16 * KiB,
		.gtt_size = 16 * KiB,
		.funcs = &funcs,
		.funcs_data = drv,
	};

	memset(drv, 0, sizeof(*drv));
	pthread_mutex_init(&drv->lock, NULL);
	drv->thread = pthread_self();
	drv->hop_from = drv->hop_to = -1;
	if (gpu) {
		assert_int_equal(ttm_gpu_create(3, &gopts, &drv->gpu), 0);
		opts.gpu = drv->gpu;
	}
	assert_int_equal(ttm_device_create(&opts, &drv->dev), 0);
}

static void driver_fini(struct driver *drv)
{
	if (drv->gpu)
		assert_int_equal(ttm_gpu_advance(drv->gpu, 1000000), 0);
	assert_dev_ok(drv->dev);
	assert_int_equal(ttm_device_destroy(drv->dev), 0);
	ttm_gpu_destroy(drv->gpu);
	assert_false(drv->wrong_thread);
	assert_checks_passed();
	pthread_mutex_destroy(&drv->lock);
}

static struct ttm_bo *new_bo(struct driver *drv,
			     const struct ttm_placement *placement)
{
	struct ttm_bo *bo = NULL;

	assert_int_equal(ttm_bo_create(drv->dev, BO_SIZE, placement, 0, &bo),
			 0);
	return bo;
}

static void fill(struct ttm_bo *bo, uint32_t seed)
{
	uint32_t words[WORDS];
	unsigned int i;

	for (i = 0; i < WORDS; i++)
		words[i] = seed << 16 | i;
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_write(bo, 0, words, BO_SIZE), 0);
	ttm_bo_unreserve(bo);
}

static void expect_fill(struct ttm_bo *bo, uint32_t seed)
{
	uint32_t words[WORDS];
	unsigned int i;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_read(bo, 0, words, BO_SIZE), 0);
	ttm_bo_unreserve(bo);
	for (i = 0; i < WORDS; i++)
		if (words[i] != (seed << 16 | i))
			fail_msg("word %u: %#x", i, words[i]);
}

static int validate(struct driver *drv, struct ttm_bo *bo,
		    const struct ttm_placement *placement)
{
	struct ttm_operation_ctx ctx = { 0 };
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ret = ttm_bo_validate(bo, placement, &ctx);
	ttm_bo_unreserve(bo);
	assert_dev_ok(drv->dev);
	return ret;
}

static uint64_t used(struct driver *drv, enum ttm_domain d)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(drv->dev, &s);
	return s.domain[d].used;
}

/* Fail unless event @i is @hook on @bo from @from (to @to; -1: any). */
static void expect_event(struct driver *drv, unsigned int i, enum hook hook,
			 struct ttm_bo *bo, int from, int to, bool reserved)
{
	struct hook_event *e = &drv->events[i];

	if (i >= drv->n_events)
		fail_msg("event %u: none (%u events)", i, drv->n_events);
	if (e->hook != hook || e->bo != bo || e->from != from ||
	    (to >= 0 && e->to != to) || e->reserved != reserved)
		fail_msg("event %u: %s %d->%d%s, not %s %d->%d%s", i,
			 hook_names[e->hook], e->from, e->to,
			 e->reserved ? " reserved" : "", hook_names[hook],
			 from, to, reserved ? " reserved" : "");
}

static void fill_vram(struct driver *drv, struct ttm_bo **fillers)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		fillers[i] = new_bo(drv, &vram_only);
		fill(fillers[i], 10 + i);
	}
}

static void put_all(struct ttm_bo **bos, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		ttm_bo_put(bos[i]);
}

/*
 * An eviction, then the move that needed it, then the destroy: each hook
 * in order, the buffers reserved where they should be.
 */
static void test_order_and_context(void **state)
{
	struct ttm_bo *bo, *fillers[4];
	struct driver drv;

	(void)state;
	driver_init(&drv, false);
	fill_vram(&drv, fillers);
	bo = new_bo(&drv, &system_only);
	fill(bo, 1);
	drv.n_events = 0;

	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(fillers[0]), TTM_DOMAIN_GTT);
	assert_int_equal(drv.n_events, 6);
	expect_event(&drv, 0, VALUABLE, fillers[0], TTM_DOMAIN_VRAM, -1,
		     true);
	expect_event(&drv, 1, EVICT_FLAGS, fillers[0], TTM_DOMAIN_VRAM, -1,
		     true);
	expect_event(&drv, 2, MOVE, fillers[0], TTM_DOMAIN_VRAM,
		     TTM_DOMAIN_GTT, true);
	expect_event(&drv, 3, DELETE_MEM, fillers[0], TTM_DOMAIN_VRAM, -1,
		     true);
	expect_event(&drv, 4, MOVE, bo, TTM_DOMAIN_SYSTEM, TTM_DOMAIN_VRAM,
		     true);
	expect_event(&drv, 5, DELETE_MEM, bo, TTM_DOMAIN_SYSTEM, -1, true);
	expect_fill(bo, 1);
	expect_fill(fillers[0], 10);

	/* The last put: release_notify, then the memory's notice. */
	drv.n_events = 0;
	ttm_bo_put(bo);
	assert_int_equal(drv.n_events, 2);
	expect_event(&drv, 0, RELEASE, bo, TTM_DOMAIN_VRAM, -1, false);
	expect_event(&drv, 1, DELETE_MEM, bo, TTM_DOMAIN_VRAM, -1, false);
	put_all(fillers, 4);
	driver_fini(&drv);
}

/* A vetoed move fails the validation and leaves the buffer as it was. */
static void test_move_veto(void **state)
{
	struct ttm_bo *bo, *fillers[4];
	struct driver drv;

	(void)state;
	driver_init(&drv, false);
	bo = new_bo(&drv, &system_only);
	fill(bo, 2);
	drv.veto_move_err = -EPERM;
	drv.veto_move_to = TTM_DOMAIN_VRAM;
	assert_int_equal(validate(&drv, bo, &vram_only), -EPERM);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(used(&drv, TTM_DOMAIN_VRAM), 0);
	expect_fill(bo, 2);

	/* A victim's vetoed move fails the validation that evicts it. */
	drv.veto_move_err = 0;
	fill_vram(&drv, fillers);
	drv.veto_move_err = -EACCES;
	drv.veto_move_to = TTM_DOMAIN_GTT;
	assert_int_equal(validate(&drv, bo, &vram_only), -EACCES);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(fillers[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(used(&drv, TTM_DOMAIN_GTT), 0);
	expect_fill(fillers[0], 10);
	expect_fill(bo, 2);

	/* Lifted: the default copy of the fake GPU's absence, the CPU. */
	drv.veto_move_err = 0;
	drv.move_mode = 2;
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	expect_fill(bo, 2);
	expect_fill(fillers[0], 10);
	ttm_bo_put(bo);
	put_all(fillers, 4);
	driver_fini(&drv);
}

/* -EMULTIHOP: SYSTEM to VRAM goes through GTT. */
static void test_multihop(void **state)
{
	struct ttm_bo *bo, *other, *fillers[4];
	struct driver drv;

	(void)state;
	driver_init(&drv, false);
	bo = new_bo(&drv, &system_only);
	fill(bo, 3);
	drv.hop_from = TTM_DOMAIN_SYSTEM;
	drv.hop_to = TTM_DOMAIN_VRAM;
	drv.n_events = 0;
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(drv.n_events, 5);
	expect_event(&drv, 0, MOVE, bo, TTM_DOMAIN_SYSTEM, TTM_DOMAIN_VRAM,
		     true);
	expect_event(&drv, 1, MOVE, bo, TTM_DOMAIN_SYSTEM, TTM_DOMAIN_GTT,
		     true);
	expect_event(&drv, 2, DELETE_MEM, bo, TTM_DOMAIN_SYSTEM, -1, true);
	expect_event(&drv, 3, MOVE, bo, TTM_DOMAIN_GTT, TTM_DOMAIN_VRAM,
		     true);
	expect_event(&drv, 4, DELETE_MEM, bo, TTM_DOMAIN_GTT, -1, true);
	assert_int_equal(used(&drv, TTM_DOMAIN_GTT), 0);
	expect_fill(bo, 3);

	/* An eviction's move bounces too: VRAM to GTT through SYSTEM. */
	fill_vram(&drv, fillers);
	drv.hop_from = TTM_DOMAIN_VRAM;
	drv.hop_to = TTM_DOMAIN_GTT;
	drv.hop_via = TTM_DOMAIN_SYSTEM;
	other = new_bo(&drv, &system_only);
	fill(other, 5);
	drv.n_events = 0;
	assert_int_equal(validate(&drv, other, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(fillers[0]), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(other), TTM_DOMAIN_VRAM);
	expect_event(&drv, 2, MOVE, fillers[0], TTM_DOMAIN_VRAM,
		     TTM_DOMAIN_GTT, true);
	expect_event(&drv, 3, MOVE, fillers[0], TTM_DOMAIN_VRAM,
		     TTM_DOMAIN_SYSTEM, true);
	expect_event(&drv, 5, MOVE, fillers[0], TTM_DOMAIN_SYSTEM,
		     TTM_DOMAIN_GTT, true);
	expect_fill(fillers[0], 10);
	expect_fill(other, 5);
	/* (bo left VRAM for GTT when fill_vram() made room.) */
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	drv.hop_via = 0;

	/* The hop's own move may not ask again: -EINVAL, bo unmoved. */
	drv.hop_from = TTM_DOMAIN_VRAM;
	drv.hop_to = TTM_DOMAIN_SYSTEM;
	drv.veto_move_err = -EMULTIHOP;
	drv.veto_move_to = TTM_DOMAIN_GTT;
	assert_int_equal(validate(&drv, bo, &system_only), -EINVAL);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	expect_fill(bo, 3);
	ttm_bo_put(bo);
	ttm_bo_put(other);
	put_all(fillers, 4);
	driver_fini(&drv);
}

/*
 * The driver's GPU copy: its fence goes into the reservation, the old
 * memory stays accounted until it signals, and the driver hears of the
 * old memory before that. The destroy of a busy buffer: release_notify
 * at the last put, the memory's notice once the GPU is done with it (the
 * worker frees it), still before the memory can be reused.
 */
static void test_fence_and_notify_before_reuse(void **state)
{
	struct ttm_bo *bo;
	struct driver drv;

	(void)state;
	driver_init(&drv, true);
	drv.move_mode = 1;
	bo = new_bo(&drv, &system_only);
	fill(bo, 4);
	drv.n_events = 0;
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(drv.n_events, 2);
	expect_event(&drv, 1, DELETE_MEM, bo, TTM_DOMAIN_SYSTEM, -1, true);
	/* At the notice, and still now, the old memory is accounted. */
	assert_int_equal(drv.events[1].used_from, BO_SIZE);
	assert_int_equal(used(&drv, TTM_DOMAIN_SYSTEM), BO_SIZE);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(bo),
					    TTM_RESV_USAGE_KERNEL));

	drv.n_events = 0;
	ttm_bo_put(bo);
	assert_int_equal(drv.n_events, 1);
	expect_event(&drv, 0, RELEASE, bo, TTM_DOMAIN_VRAM, -1, false);
	assert_int_equal(used(&drv, TTM_DOMAIN_VRAM), BO_SIZE);
	/* The device's worker frees a busy buffer after its last fence. */
	pthread_mutex_lock(&drv.lock);
	drv.any_thread = true;
	pthread_mutex_unlock(&drv.lock);
	assert_int_equal(ttm_gpu_advance(drv.gpu, 1000000), 0);
	ttm_device_flush_destroys(drv.dev);
	assert_int_equal(drv.n_events, 2);
	expect_event(&drv, 1, DELETE_MEM, bo, TTM_DOMAIN_VRAM, -1, false);
	assert_int_equal(drv.events[1].used_from, BO_SIZE);
	assert_false(pthread_equal(drv.events[1].thread, pthread_self()));
	assert_int_equal(used(&drv, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(used(&drv, TTM_DOMAIN_SYSTEM), 0);
	driver_fini(&drv);
}

/* A new fence in @bo's reservation, as a job writing it would put it. */
static struct ttm_fence *make_busy(struct ttm_bo *bo)
{
	struct ttm_fence *fence = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_WRITE);
	ttm_bo_unreserve(bo);
	return fence;
}

/*
 * VRAM full of fillers 10..13, @b in SYSTEM holding 2, the driver's copy
 * mode @mode, filler @busy_idx made busy by the returned fence.
 */
static struct ttm_fence *pipelined_setup(struct driver *drv, int mode,
					 struct ttm_bo **fillers,
					 struct ttm_bo **b,
					 unsigned int busy_idx)
{
	driver_init(drv, true);
	drv->move_mode = mode;
	fill_vram(drv, fillers);
	*b = new_bo(drv, &system_only);
	fill(*b, 2);
	return make_busy(fillers[busy_idx]);
}

/*
 * Run what can run: @b's copy must not, as it waits for the busy
 * filler's; then let that one go and check every content.
 */
static void pipelined_check(struct driver *drv, struct ttm_bo **fillers,
			    struct ttm_bo *b, struct ttm_fence *busy)
{
	unsigned int i;

	assert_int_equal(ttm_gpu_advance(drv->gpu, 1000000), 0);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(b),
					    TTM_RESV_USAGE_KERNEL));
	assert_int_equal(ttm_fence_signal(busy, 0), 0);
	ttm_fence_put(busy);
	assert_int_equal(ttm_gpu_advance(drv->gpu, 1000000), 0);
	for (i = 0; i < 4; i++)
		expect_fill(fillers[i], 10 + i);
	expect_fill(b, 2);
	put_all(fillers, 4);
	ttm_bo_put(b);
	driver_fini(drv);
}

/*
 * Pipelined eviction with a driver that copies on two rings, each copy
 * after its buffer's fences: a's move out of VRAM waits for a's busy
 * fence; b, moved into the range a left, copies on the other ring at
 * once unless the range's pending copy (a's) is among b's fences. Both
 * keep their contents only if b's copy waits for a's.
 */
static void test_pipelined_reuse_orders_copies(void **state)
{
	struct ttm_bo *b, *fillers[4];
	struct ttm_fence *busy;
	struct driver drv;

	(void)state;
	busy = pipelined_setup(&drv, 3, fillers, &b, 0);
	assert_int_equal(validate(&drv, fillers[0], &system_only), 0);
	/* a's range is the only room in VRAM: b takes it at once. */
	assert_int_equal(validate(&drv, b, &vram_only), 0);
	assert_int_equal(ttm_bo_offset(b), 0);
	pipelined_check(&drv, fillers, b, busy);
}

/*
 * Two copies out of VRAM on two timelines (a driver's rings): the first
 * (a1, idle) is the domain's move fence, the second (a2, busy) is not
 * covered by it. b, moved into a2's old range on a third ring, must wait
 * for a2's copy, found by its range, not only for a1's.
 */
static void test_pipelined_reuse_two_timelines(void **state)
{
	struct ttm_bo *b, *fillers[4];
	struct ttm_fence *busy;
	struct driver drv;

	(void)state;
	busy = pipelined_setup(&drv, 4, fillers, &b, 1);
	/* a1 = fillers[3] on engine 0, a2 = fillers[1] on engine 2. */
	assert_int_equal(validate(&drv, fillers[3], &system_only), 0);
	assert_int_equal(validate(&drv, fillers[1], &system_only), 0);
	/* First fit: a2's range, the lower hole. */
	assert_int_equal(validate(&drv, b, &vram_only), 0);
	assert_int_equal(ttm_bo_offset(b), BO_SIZE);
	pipelined_check(&drv, fillers, b, busy);
}

/*
 * A move keeps its fence slot to itself: whatever the move did (the
 * hook's CPU copy, a veto, -EMULTIHOP, TTM_MOVE_DEFAULT, a GPU copy whose
 * fence replaces the last copy's, or takes a signalled one's place), the
 * caller is left with the slots it reserved, and the list does not grow.
 */
static void moves_keep_slots(struct driver *drv, struct ttm_bo *bo,
			     unsigned int n)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_resv *resv = ttm_bo_resv(bo);
	unsigned int i;
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(resv, 2), 0);
	for (i = 0; i < n; i++) {
		/* Starting in GTT: to VRAM, back to GTT, and so on. */
		ret = ttm_bo_validate(bo, i & 1 ? &gtt_only : &vram_only,
				      &ctx);
		if (drv->veto_move_err && !(i & 1))
			assert_int_equal(ret, drv->veto_move_err);
		else
			assert_int_equal(ret, 0);
		if (resv->reserved != 2)
			fail_msg("move %u: %u slots reserved, not 2", i,
				 resv->reserved);
	}
	ttm_bo_unreserve(bo);
}

static void test_move_slot(void **state)
{
	struct ttm_bo *bo;
	struct driver drv;
	int mode;

	(void)state;
	for (mode = 0; mode < 3; mode++) {
		driver_init(&drv, mode > 0);
		bo = new_bo(&drv, &gtt_only);
		/* The hook's memcpy, or its GPU copy, or the default's. */
		drv.move_mode = mode;
		moves_keep_slots(&drv, bo, 2);
		if (drv.gpu) {
			/* Signalled: the next fence takes its place. */
			assert_int_equal(ttm_gpu_advance(drv.gpu, 1000000),
					 0);
			moves_keep_slots(&drv, bo, 2);
			assert_int_equal(ttm_gpu_advance(drv.gpu, 1000000),
					 0);
		}
		drv.move_mode = 0;
		drv.veto_move_err = -EPERM;
		drv.veto_move_to = TTM_DOMAIN_VRAM;
		moves_keep_slots(&drv, bo, 3);
		drv.veto_move_err = 0;
		/* GTT to VRAM through SYSTEM. */
		drv.hop_from = TTM_DOMAIN_GTT;
		drv.hop_to = TTM_DOMAIN_VRAM;
		drv.hop_via = TTM_DOMAIN_SYSTEM;
		moves_keep_slots(&drv, bo, 4);
		ttm_bo_put(bo);
		driver_fini(&drv);
	}
}

/* Vetoed victims are passed over; all vetoed: -ENOSPC. */
static void test_eviction_veto(void **state)
{
	struct ttm_bo *bo, *fillers[4], *lru[4];
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_exec exec;
	struct driver drv;
	unsigned int i;
	int ret;

	(void)state;
	driver_init(&drv, false);
	fill_vram(&drv, fillers);
	bo = new_bo(&drv, &system_only);
	drv.refuse[drv.n_refuse++] = fillers[0];
	drv.refuse[drv.n_refuse++] = fillers[1];
	drv.n_events = 0;
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(fillers[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(fillers[1]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(fillers[2]), TTM_DOMAIN_GTT);
	expect_event(&drv, 0, VALUABLE, fillers[0], TTM_DOMAIN_VRAM, -1,
		     true);
	expect_event(&drv, 1, VALUABLE, fillers[1], TTM_DOMAIN_VRAM, -1,
		     true);
	expect_event(&drv, 2, VALUABLE, fillers[2], TTM_DOMAIN_VRAM, -1,
		     true);
	/* Vetoed buffers were released, not left reserved, nor bumped. */
	for (i = 0; i < 2; i++)
		assert_false(ww_mutex_is_locked(&ttm_bo_resv(fillers[i])->lock));
	assert_int_equal(lru_order(drv.dev, TTM_DOMAIN_VRAM, lru, 4), 4);
	assert_ptr_equal(lru[0], fillers[0]);
	assert_ptr_equal(lru[1], fillers[1]);
	assert_ptr_equal(lru[2], fillers[3]);
	assert_ptr_equal(lru[3], bo);
	expect_fill(fillers[0], 10);

	/* Everything in VRAM vetoed: no victim, with or without a ticket. */
	assert_int_equal(validate(&drv, bo, &system_only), 0);
	assert_int_equal(validate(&drv, fillers[2], &vram_only), 0);
	drv.refuse[drv.n_refuse++] = fillers[2];
	drv.refuse[drv.n_refuse++] = fillers[3];
	assert_int_equal(validate(&drv, bo, &vram_only), -ENOSPC);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);

	ttm_exec_init(&exec, drv.dev, 0);
	ctx.exec = &exec;
	ret = 0;
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, bo);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		ret = ttm_bo_validate(bo, &vram_only, &ctx);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_fini(&exec);
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	ttm_bo_put(bo);
	put_all(fillers, 4);
	driver_fini(&drv);
}

/*
 * Free pages beside a vetoed buffer: VRAM pages 0 and 2 free, 1 vetoed,
 * 3 pinned. Counted in bytes, a buffer of two pages fits beside the
 * vetoed one; in holes it fits only if the vetoed one moved. A ticketed
 * job gets -ENOSPC at once, not a room wait that asks the driver again
 * for ever (interruptible under a watchdog: -EINTR if it waited).
 */
static void test_eviction_veto_holes(void **state)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_bo *big, *fillers[4];
	struct ttm_device_stats st;
	struct ttm_exec exec;
	struct watchdog wd;
	struct driver drv;
	int ret = 0;

	(void)state;
	driver_init(&drv, false);
	fill_vram(&drv, fillers);
	assert_int_equal(ttm_bo_reserve(fillers[3], false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(fillers[3]), 0);
	ttm_bo_unreserve(fillers[3]);
	ttm_bo_put(fillers[0]);
	ttm_bo_put(fillers[2]);
	ttm_device_flush_destroys(drv.dev);
	drv.refuse[drv.n_refuse++] = fillers[1];
	assert_int_equal(ttm_bo_create(drv.dev, 2 * BO_SIZE, &system_only, 0,
				       &big), 0);

	watchdog_start(&wd);
	ttm_exec_init(&exec, drv.dev, TTM_EXEC_INTERRUPTIBLE);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, big);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		ret = ttm_bo_validate(big, &vram_only, &ctx);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_fini(&exec);
	assert_false(watchdog_stop(&wd));
	assert_int_equal(ret, -ENOSPC);
	ttm_device_get_stats(drv.dev, &st);
	assert_int_equal(st.room_waits, 0);
	assert_int_equal(ttm_bo_domain(fillers[1]), TTM_DOMAIN_VRAM);
	expect_fill(fillers[1], 11);

	/* The driver lets it go: the same job fits. */
	drv.n_refuse = 0;
	assert_int_equal(validate(&drv, big, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(fillers[1]), TTM_DOMAIN_GTT);
	ttm_bo_put(big);
	assert_int_equal(ttm_bo_reserve(fillers[3], false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(fillers[3]), 0);
	ttm_bo_unreserve(fillers[3]);
	ttm_bo_put(fillers[1]);
	ttm_bo_put(fillers[3]);
	driver_fini(&drv);
}

/* evict_flags chooses the victim's domain; SYSTEM gets swap_notify. */
static void test_evict_flags(void **state)
{
	struct ttm_bo *bo, *fillers[4], *gtt[4];
	struct driver drv;
	unsigned int i;

	(void)state;
	driver_init(&drv, false);
	for (i = 0; i < 4; i++)
		gtt[i] = new_bo(&drv, &gtt_only);
	bo = new_bo(&drv, &system_only);

	/* Default: a GTT victim goes to SYSTEM, with the notice. */
	drv.n_events = 0;
	assert_int_equal(validate(&drv, bo, &gtt_only), 0);
	assert_int_equal(ttm_bo_domain(gtt[0]), TTM_DOMAIN_SYSTEM);
	expect_event(&drv, 2, SWAP, gtt[0], TTM_DOMAIN_GTT, -1, true);
	expect_event(&drv, 3, MOVE, gtt[0], TTM_DOMAIN_GTT, TTM_DOMAIN_SYSTEM,
		     true);

	/* The driver sends GTT victims to VRAM instead: no swap notice. */
	drv.set_evict_flags = true;
	drv.n_events = 0;
	drv.evict_to[TTM_DOMAIN_GTT] =
		(struct ttm_placement)TTM_PLACEMENT_VRAM_INIT;
	assert_int_equal(validate(&drv, gtt[0], &gtt_only), 0);
	assert_int_equal(ttm_bo_domain(gtt[1]), TTM_DOMAIN_VRAM);
	for (i = 0; i < drv.n_events; i++)
		assert_int_not_equal(drv.events[i].hook, SWAP);

	/* VRAM victims (GTT by default) sent to SYSTEM: the notice. */
	for (i = 1; i < 4; i++)
		fillers[i] = new_bo(&drv, &vram_only);
	drv.evict_to[TTM_DOMAIN_VRAM] =
		(struct ttm_placement)TTM_PLACEMENT_SYSTEM_INIT;
	drv.n_events = 0;
	assert_int_equal(validate(&drv, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(gtt[1]), TTM_DOMAIN_SYSTEM);
	expect_event(&drv, 2, SWAP, gtt[1], TTM_DOMAIN_VRAM, -1, true);
	assert_int_equal(used(&drv, TTM_DOMAIN_GTT), 3 * BO_SIZE);

	/* A placement naming only the source: SYSTEM. */
	drv.evict_to[TTM_DOMAIN_VRAM] =
		(struct ttm_placement)TTM_PLACEMENT_VRAM_INIT;
	assert_int_equal(validate(&drv, gtt[2], &vram_only), 0);
	assert_int_equal(ttm_bo_domain(fillers[1]), TTM_DOMAIN_SYSTEM);

	/* An invalid place (visible GTT) is skipped, room or not: SYSTEM. */
	drv.evict_to[TTM_DOMAIN_VRAM] = (struct ttm_placement){
		1, { { .domain = TTM_DOMAIN_GTT,
		       .flags = TTM_PLACE_CPU_VISIBLE } },
	};
	assert_true(used(&drv, TTM_DOMAIN_GTT) <= 3 * BO_SIZE);
	assert_int_equal(validate(&drv, gtt[3], &vram_only), 0);
	assert_int_equal(ttm_bo_domain(gtt[3]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(fillers[2]), TTM_DOMAIN_SYSTEM);
	ttm_bo_put(bo);
	put_all(gtt, 4);
	put_all(fillers + 1, 3);
	driver_fini(&drv);
}

/* ---- threads ------------------------------------------------------------ */

#define THREADS 4
#define ROUNDS 1000

struct worker {
	struct driver *drv;
	struct ttm_bo *a, *b; /* a: VRAM or SYSTEM, b: GTT or SYSTEM */
	unsigned int idx;
	int *go;              /* set once every worker is started */
};

/* Lock both buffers with a ticket and validate them, ROUNDS times. */
static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	/* Start together, or the runs may not overlap at all. */
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = w->idx; i < ROUNDS + w->idx; i++) {
		struct ttm_operation_ctx ctx = { 0 };
		struct ttm_exec exec;
		int ret = 0;

		ttm_exec_init(&exec, w->drv->dev, 0);
		ctx.exec = &exec;
		ttm_exec_until_all_locked(&exec) {
			ret = ttm_exec_lock_bo(&exec, w->a);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
			ret = ttm_exec_lock_bo(&exec, w->b);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
			ret = ttm_bo_validate(w->a, i % 4 ? &vram_only :
						    &system_only, &ctx);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
			ret = ttm_bo_validate(w->b, i % 4 != 1 ? &gtt_only :
						    &system_only, &ctx);
			ttm_exec_retry_on_contention(&exec);
		}
		ttm_exec_fini(&exec);
		if (!CHECK_INT(ret, 0))
			break;
		/* Rounds are short: let the others in between them. */
		sched_yield();
	}
	return NULL;
}

/*
 * Threads evicting each other's buffers under their tickets, the driver's
 * copies, a vetoed buffer in VRAM and in GTT: more than fits at once, but
 * every job fits alone; no deadlock, the contents survive (for TSan too).
 */
static void test_threads(void **state)
{
	struct worker w[THREADS];
	struct ttm_bo *keep[2];
	struct ttm_device_stats s;
	pthread_t t[THREADS];
	int go = 0;
	struct driver drv;
	unsigned int i;

	(void)state;
	driver_init(&drv, false);
	drv.any_thread = true;
	keep[0] = new_bo(&drv, &vram_only);
	keep[1] = new_bo(&drv, &gtt_only);
	drv.refuse[drv.n_refuse++] = keep[0];
	drv.refuse[drv.n_refuse++] = keep[1];
	for (i = 0; i < THREADS; i++) {
		w[i].drv = &drv;
		w[i].idx = i;
		w[i].go = &go;
		w[i].a = new_bo(&drv, &system_only);
		w[i].b = new_bo(&drv, &system_only);
		fill(w[i].a, 20 + i);
		fill(w[i].b, 40 + i);
	}
	for (i = 0; i < THREADS; i++)
		t[i] = start_thread(worker_fn, &w[i]);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < THREADS; i++)
		join_thread(t[i]);
	assert_checks_passed();
	ttm_device_get_stats(drv.dev, &s);
	print_message("evictions %llu, moves %llu\n",
		      (unsigned long long)s.evictions,
		      (unsigned long long)s.moves);
	assert_true(s.evictions > 0);
	assert_int_equal(ttm_bo_domain(keep[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(keep[1]), TTM_DOMAIN_GTT);
	for (i = 0; i < THREADS; i++) {
		expect_fill(w[i].a, 20 + i);
		expect_fill(w[i].b, 40 + i);
		ttm_bo_put(w[i].a);
		ttm_bo_put(w[i].b);
	}
	put_all(keep, 2);
	driver_fini(&drv);
}

#define TEST(fn) cmocka_unit_test_setup(fn, checks_reset)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_order_and_context),
		TEST(test_move_veto),
		TEST(test_multihop),
		TEST(test_fence_and_notify_before_reuse),
		TEST(test_pipelined_reuse_orders_copies),
		TEST(test_pipelined_reuse_two_timelines),
		TEST(test_move_slot),
		TEST(test_eviction_veto),
		TEST(test_eviction_veto_holes),
		TEST(test_evict_flags),
		TEST(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
