// SPDX-License-Identifier: MIT
/*
 * The execbuf submitter (ttm_execbuf_submit()): a job's effect on memory,
 * every error path (bad handle with its index, bad arguments, duplicates,
 * -ENOSPC, -EINTR, a failed in-fence, a hung earlier job), implicit-sync
 * ordering, restarts forced by injected back-offs, PRIME sharing, the
 * counters and the phase events.
 *
 * After every error: no buffer is left reserved and, under ASan, no
 * reference leaks. The GPU runs on its virtual clock: jobs run only in
 * ttm_gpu_advance(), so each test sees the state before and after.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/bo_helpers.h"

#include "bo/bo.h"  /* struct ttm_bo's refcount */

#include "ttmsim/execbuf.h"
#include "ttmsim/interrupt.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_debug.h"

#define BO_SIZE (4 * KiB)
#define ENGINES 3
#define HANG_MS 100

struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_client *client;
	bool realtime;
	/* Retirements seen by the hook, by job tag (1 to MAX_TAGS - 1). */
	struct ttm_gpu_job_info retired[16];
};

#define MAX_TAGS 16

static void on_retire(const struct ttm_gpu_job_info *info, void *data)
{
	struct fixture *f = data;

	if (info->tag && info->tag < MAX_TAGS)
		f->retired[info->tag] = *info;
}

/*
 * A device of @vram bytes of VRAM and 64 KiB of GTT on a GPU of ENGINES
 * engines, and no client yet. Eviction waits on the CPU for the copies
 * that free room, which a virtual clock would never run: tests that evict
 * use real time.
 */
static void fixture_init_device(struct fixture *f, uint64_t vram,
				bool wound_wait, bool realtime)
{
	struct ttm_gpu_options gopts = {
		.flags = TTM_GPU_DETERMINISTIC,
		.hang_timeout_ms = HANG_MS,
		.on_retire = on_retire,
		.retire_data = f,
	};
	struct ttm_device_options opts = {
		.vram_size = vram,
		.gtt_size = 64 * KiB,
		.wound_wait = wound_wait,
	};

	memset(f, 0, sizeof(*f));
	f->realtime = realtime;
	if (realtime)
		gopts.flags = 0;
	assert_int_equal(ttm_gpu_create(ENGINES, &gopts, &f->gpu), 0);
	opts.gpu = f->gpu;
	/* Moves on the last engine, jobs on the others. */
	opts.copy_engine = ENGINES - 1;
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
}

static void fixture_init_opts(struct fixture *f, uint64_t vram,
			      bool wound_wait, bool realtime)
{
	fixture_init_device(f, vram, wound_wait, realtime);
	assert_int_equal(ttm_client_open(f->dev, &f->client), 0);
}

static void fixture_init(struct fixture *f)
{
	fixture_init_opts(f, 16 * KiB, false, false);
}

/* Run the GPU @us further; in real time, wait for every job instead. */
static void advance(struct fixture *f, uint64_t us)
{
	if (f->realtime)
		ttm_execbuf_wait_idle(f->dev);
	else
		assert_int_equal(ttm_gpu_advance(f->gpu, us), 0);
	assert_dev_ok(f->dev);
}

static void fixture_fini(struct fixture *f)
{
	struct ttm_execbuf_stats st;

	advance(f, 10 * 1000 * 1000);
	ttm_execbuf_wait_idle(f->dev);
	ttm_execbuf_get_stats(f->dev, &st);
	assert_int_equal(st.submitted,
			 st.rejected + st.completed + st.failed);
	assert_int_equal(st.in_flight, 0);
	ttm_client_close(f->client);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	ttm_gpu_destroy(f->gpu);
}

static uint32_t new_handle(struct fixture *f, uint64_t size,
			   const struct ttm_placement *placement)
{
	uint32_t handle = 0;

	assert_int_equal(ttm_client_bo_create(f->client, size, placement, 0,
					      &handle), 0);
	assert_int_not_equal(handle, 0);
	return handle;
}

static struct ttm_bo *bo_of(struct fixture *f, uint32_t handle)
{
	struct ttm_bo *bo = ttm_client_lookup(f->client, handle);

	assert_non_null(bo);
	/* The client's handle keeps it alive: no reference needed here. */
	ttm_bo_put(bo);
	return bo;
}

/* Every 32-bit word of @handle's buffer must equal @want. */
static void expect_words(struct fixture *f, uint32_t handle,
			 uint32_t want)
{
	expect_bo_words(bo_of(f, handle), want);
}

/* Write @value to every word of @handle's buffer, through the CPU. */
static void fill_words(struct fixture *f, uint32_t handle,
		       uint32_t value)
{
	fill_bo_words(bo_of(f, handle), value);
}

static void assert_unlocked(struct fixture *f, const uint32_t *handles,
			    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		assert_false(ww_mutex_is_locked(
			&ttm_bo_resv(bo_of(f, handles[i]))->lock));
}

static struct ttm_execbuf_stats stats(struct fixture *f)
{
	struct ttm_execbuf_stats st;

	ttm_execbuf_get_stats(f->dev, &st);
	return st;
}

/* Submit an add of @value on @engine writing every handle of @handles. */
static int submit_add(struct fixture *f, const uint32_t *handles,
		      unsigned int n, uint32_t value, unsigned int engine,
		      uint32_t flags, uint64_t tag, struct ttm_fence **out)
{
	struct ttm_execbuf_bo list[8];
	struct ttm_execbuf_args args = {
		.engine = engine,
		.bos = list,
		.n_bos = n,
		.op = TTM_GPU_OP_ADD,
		.add_value = value,
		.duration_us = 10,
		.flags = flags,
		.tag = tag,
	};
	unsigned int i;
	int ret;

	assert_true(n <= 8);
	for (i = 0; i < n; i++)
		list[i] = (struct ttm_execbuf_bo){ handles[i],
						   TTM_EXECBUF_BO_WRITE };
	ret = ttm_execbuf_submit(f->client, &args);
	if (ret) {
		assert_null(args.out_fence);
		assert_int_equal(args.out_fence_fd, -1);
	}
	if (out)
		*out = args.out_fence;
	else
		ttm_fence_put(args.out_fence);
	return ret;
}

/* ---- the job's effect ----------------------------------------------------- */

/* Written buffers get the add once the job runs; read ones never. */
static void test_add(void **state)
{
	struct ttm_execbuf_bo list[2];
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 2, .op = TTM_GPU_OP_ADD,
		.add_value = 5, .duration_us = 10,
		.flags = TTM_EXECBUF_FENCE_FD_OUT,
	};
	struct ttm_execbuf_stats st;
	struct ttm_fence *imported;
	struct pollfd pfd;
	struct fixture f;
	uint32_t a, b;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &gtt_only);
	list[0] = (struct ttm_execbuf_bo){ b, TTM_EXECBUF_BO_READ };
	list[1] = (struct ttm_execbuf_bo){ a, TTM_EXECBUF_BO_WRITE };
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	assert_non_null(args.out_fence);
	assert_true(args.out_fence_fd >= 0);
	assert_int_equal(args.bad_index, -1);
	assert_unlocked(&f, (uint32_t[]){ a, b }, 2);
	st = stats(&f);
	assert_int_equal(st.submitted, 1);
	assert_int_equal(st.in_flight, 1);
	assert_false(ttm_fence_is_signaled(args.out_fence));

	pfd = (struct pollfd){ .fd = args.out_fence_fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	advance(&f, 1000);
	assert_int_equal(ttm_fence_get_status(args.out_fence), 1);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(ttm_fence_import_fd(args.out_fence_fd, &imported), 0);
	assert_ptr_equal(imported, args.out_fence);
	ttm_fence_put(imported);
	close(args.out_fence_fd);

	expect_words(&f, a, 5);
	expect_words(&f, b, 0);
	/* The job's fence went in with the right usage. */
	assert_true(ttm_resv_test_signaled(ttm_bo_resv(bo_of(&f, a)),
					   TTM_RESV_USAGE_BOOKKEEP));
	st = stats(&f);
	assert_int_equal(st.completed, 1);
	assert_int_equal(st.failed + st.rejected + st.in_flight, 0);
	ttm_fence_put(args.out_fence);
	fixture_fini(&f);
}

/*
 * COPY: bos[0], read, to bos[1], written; two distinct buffers of one
 * size, else -EINVAL naming the entry, with nothing submitted.
 */
static void test_copy(void **state)
{
	struct ttm_execbuf_bo list[3];
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 2, .op = TTM_GPU_OP_COPY,
		.duration_us = 10,
	};
	struct fixture f;
	uint32_t src, dst, small;

	(void)state;
	fixture_init(&f);
	src = new_handle(&f, BO_SIZE, &vram_gtt);
	dst = new_handle(&f, BO_SIZE, &gtt_only);
	small = new_handle(&f, BO_SIZE / 2, &gtt_only);
	fill_words(&f, src, 0x5a5a);
	list[0] = (struct ttm_execbuf_bo){ src, TTM_EXECBUF_BO_READ };
	list[1] = (struct ttm_execbuf_bo){ dst, TTM_EXECBUF_BO_WRITE };
	list[2] = (struct ttm_execbuf_bo){ small, TTM_EXECBUF_BO_WRITE };
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	advance(&f, 1000);
	expect_words(&f, dst, 0x5a5a);
	expect_words(&f, src, 0x5a5a);

	/* Sizes that differ: about the destination. */
	list[1].handle = small;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	/* One buffer twice, folded into one: no copy either. */
	list[1].handle = src;
	args.flags = TTM_EXECBUF_ALLOW_DUPLICATES;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	args.flags = 0;
	/* A destination not written; three buffers. */
	list[1] = (struct ttm_execbuf_bo){ dst, TTM_EXECBUF_BO_READ };
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	list[1].flags = TTM_EXECBUF_BO_WRITE;
	args.n_bos = 3;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_unlocked(&f, (uint32_t[]){ src, dst, small }, 3);
	advance(&f, 1000);
	expect_words(&f, small, 0);
	assert_int_equal(stats(&f).rejected, 4);
	fixture_fini(&f);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_bad_handle(void **state)
{
	struct fixture f;
	uint32_t a, b, c;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &vram_gtt);
	c = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(ttm_client_bo_close(f.client, c), 0);

	struct ttm_execbuf_bo list[3] = {
		{ a, TTM_EXECBUF_BO_WRITE }, { b, TTM_EXECBUF_BO_WRITE },
		{ 999, TTM_EXECBUF_BO_WRITE },
	};
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 3, .op = TTM_GPU_OP_ADD, .add_value = 1,
	};
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 2);
	assert_null(args.out_fence);
	/* A closed handle, and 0, are as bad. */
	list[2].handle = a;
	list[0].handle = c;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 0);
	list[0].handle = 0;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 0);
	assert_unlocked(&f, (uint32_t[]){ a, b }, 2);

	advance(&f, 1000);
	expect_words(&f, a, 0);
	expect_words(&f, b, 0);
	assert_int_equal(stats(&f).rejected, 3);
	assert_int_equal(stats(&f).rejected_by_errno[ENOENT], 3);
	fixture_fini(&f);
}

/*
 * A submission leaves every buffer's reference count as it found it: the
 * lookup's references, lent to the locking helper (TTM_EXEC_CALLER_REFS),
 * go at the end, after a job, a bad handle in the middle of the list (the
 * ones before it are dropped), a duplicate, and a back-off.
 */
static int handle_refs(struct fixture *f, uint32_t handle)
{
	struct ttm_bo *bo = ttm_client_lookup(f->client, handle);
	int n = __atomic_load_n(&bo->refcount, __ATOMIC_RELAXED) - 1;

	ttm_bo_put(bo);
	return n;
}

static void test_submit_references(void **state)
{
	struct fixture f;
	uint32_t h[3];
	int base[3];

	(void)state;
	fixture_init(&f);
	for (int i = 0; i < 3; i++) {
		h[i] = new_handle(&f, BO_SIZE, &vram_gtt);
		base[i] = handle_refs(&f, h[i]);
	}

	struct ttm_execbuf_bo list[3] = {
		{ h[0], TTM_EXECBUF_BO_WRITE }, { h[1], TTM_EXECBUF_BO_READ },
		{ h[2], TTM_EXECBUF_BO_WRITE },
	};
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 3, .op = TTM_GPU_OP_NOP,
	};
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	advance(&f, 1000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(handle_refs(&f, h[i]), base[i]);

	/* Bad in the middle: the first one's reference is dropped. */
	list[1].handle = 999;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 1);
	list[1].handle = h[0];
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	/* Each one locked, then an injected back-off and a second pass. */
	list[1].handle = h[1];
	/* Injected back-offs need the checker; until one happens. */
	ww_debug_inject(11, 2);
	for (int jobs = 0; jobs < 100; jobs++) {
		assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
		ttm_fence_put(args.out_fence);
		if (stats(&f).backoffs)
			break;
	}
	ww_debug_inject(0, 0);
	assert_true(stats(&f).backoffs > 0 || !ww_debug_enabled());
	advance(&f, 1000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(handle_refs(&f, h[i]), base[i]);
	assert_unlocked(&f, h, 3);
	fixture_fini(&f);
}

/*
 * More buffers than a submission looks up on its stack (16, see
 * SUBMIT_OBJS_INLINE in include/execbuf/submit.h): the boundary, the
 * allocated array beyond it, and its errors at indices past the stack's
 * room (a bad handle, a repeated buffer), each leaving nothing locked or
 * referenced, and the folded repeats applied once.
 */
#define MANY_BOS 24

static void test_many_bos(void **state)
{
	struct ttm_execbuf_bo list[MANY_BOS + 1];
	struct ttm_execbuf_args args = {
		.bos = list, .op = TTM_GPU_OP_ADD, .add_value = 1,
	};
	uint32_t h[MANY_BOS];
	struct fixture f;
	unsigned int i;

	(void)state;
	fixture_init_opts(&f, 2 * MANY_BOS * BO_SIZE, false, false);
	for (i = 0; i < MANY_BOS; i++) {
		h[i] = new_handle(&f, BO_SIZE, &vram_gtt);
		list[i] = (struct ttm_execbuf_bo){ h[i],
						   TTM_EXECBUF_BO_WRITE };
	}
	/* 16 (on the stack), 17 and 24 (allocated): +1, +1, +1 for 0..15. */
	args.n_bos = 16;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	args.n_bos = 17;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	args.n_bos = MANY_BOS;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	/* A bad handle past the stack's room. */
	list[20].handle = 999;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 20);
	assert_null(args.out_fence);
	list[20].handle = h[20];
	/* A repeat there: refused, then folded (applied once) if allowed. */
	list[MANY_BOS] = (struct ttm_execbuf_bo){ h[18], TTM_EXECBUF_BO_READ };
	args.n_bos = MANY_BOS + 1;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, MANY_BOS);
	args.flags = TTM_EXECBUF_ALLOW_DUPLICATES;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	assert_unlocked(&f, h, MANY_BOS);
	advance(&f, 1000);
	for (i = 0; i < MANY_BOS; i++)
		expect_words(&f, h[i], i < 16 ? 4 : i < 17 ? 3 : 2);
	assert_int_equal(stats(&f).rejected, 2);
	fixture_fini(&f);
}

static void test_bad_args(void **state)
{
	struct fixture f;
	uint32_t a, b;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &vram_gtt);

	struct ttm_execbuf_bo list[2] = {
		{ a, TTM_EXECBUF_BO_WRITE }, { b, TTM_EXECBUF_BO_READ },
	};
	struct ttm_placement bad_place = { 0 };
	struct ttm_execbuf_args good = {
		.bos = list, .n_bos = 2, .op = TTM_GPU_OP_ADD, .add_value = 1,
	}, args;

	args = good;
	args.n_bos = 0;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	args = good;
	args.engine = ENGINES;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	args = good;
	args.op = TTM_GPU_OP_COPY + 1;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	/* 2^64 ns or more: it wrapped to a job that ended at once. */
	args = good;
	args.duration_us = TTM_GPU_MAX_DURATION_US + 1;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, -1);
	/* A COPY whose source, bos[0], is written. */
	args = good;
	args.op = TTM_GPU_OP_COPY;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 0);
	args = good;
	args.flags = 1u << 31;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, -1);
	/* An entry neither read nor written, or with unknown flags. */
	list[1].flags = 0;
	args = good;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	list[1].flags = TTM_EXECBUF_BO_READ | (1u << 7);
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	list[1].flags = TTM_EXECBUF_BO_READ;
	/* A bad placement is found by validation, with the entry. */
	list[1].placement = &bad_place;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 1);
	list[1].placement = NULL;
	/* A bad in-fence descriptor. */
	int fds[2] = { -1, -1 };
	assert_int_equal(pipe(fds), 0);
	args = good;
	args.in_fence_fds = fds;
	args.n_in_fence_fds = 1;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 2);
	/* A NULL in-fence, after a good one: in_fences come first. */
	struct ttm_fence *ok_fence = NULL, *in[2];
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &ok_fence), 0);
	in[0] = ok_fence;
	in[1] = NULL;
	args.in_fences = in;
	args.n_in_fences = 2;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 3);
	ttm_fence_put(ok_fence);
	close(fds[0]);
	close(fds[1]);
	assert_unlocked(&f, (uint32_t[]){ a, b }, 2);
	assert_int_equal(stats(&f).rejected_by_errno[EINVAL], 11);

	/* Still usable. */
	args = good;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	advance(&f, 1000);
	expect_words(&f, a, 1);
	expect_words(&f, b, 0);
	fixture_fini(&f);
}

/*
 * A buffer listed twice is judged by buffer: -EINVAL at the repeat,
 * unless allowed; then used once, written if any entry writes it.
 */
static void test_duplicates(void **state)
{
	struct fixture f;
	uint32_t a, b, c, a2;
	bool is_new = true;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &vram_gtt);
	c = new_handle(&f, BO_SIZE, &vram_gtt);
	/* Another handle of the same client for a: the same one. */
	assert_int_equal(ttm_client_bo_add(f.client, bo_of(&f, a), &a2,
					   &is_new), 0);
	assert_int_equal(a2, a);
	assert_false(is_new);

	assert_int_equal(submit_add(&f, (uint32_t[]){ a, b, c, b }, 4, 1, 0,
				    0, 0, NULL), -EINVAL);
	assert_int_equal(submit_add(&f, (uint32_t[]){ c, a, b, a, c }, 5, 1,
				    0, 0, 0, NULL), -EINVAL);
	assert_unlocked(&f, (uint32_t[]){ a, b, c }, 3);
	assert_int_equal(submit_add(&f, (uint32_t[]){ a, b, a, a }, 4, 3, 0,
				    TTM_EXECBUF_ALLOW_DUPLICATES, 0, NULL), 0);

	/* Read, then written: written. Read twice: only read. */
	struct ttm_execbuf_bo list[3] = {
		{ c, TTM_EXECBUF_BO_READ }, { b, TTM_EXECBUF_BO_READ },
		{ c, TTM_EXECBUF_BO_WRITE },
	};
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 3, .op = TTM_GPU_OP_ADD, .add_value = 10,
		.flags = TTM_EXECBUF_ALLOW_DUPLICATES,
	};
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	list[2] = (struct ttm_execbuf_bo){ b, TTM_EXECBUF_BO_READ };
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);

	advance(&f, 1000);
	expect_words(&f, a, 3);
	expect_words(&f, b, 3);
	expect_words(&f, c, 10);
	assert_int_equal(stats(&f).rejected_by_errno[EINVAL], 2);
	assert_int_equal(stats(&f).completed, 3);
	fixture_fini(&f);
}

/* The first repeat in the user's order is the one named. */
static void test_duplicate_index(void **state)
{
	struct fixture f;
	struct ttm_execbuf_bo list[5];
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 5, .op = TTM_GPU_OP_NOP,
	};
	uint32_t h[3];
	unsigned int i;

	(void)state;
	fixture_init(&f);
	for (i = 0; i < 3; i++)
		h[i] = new_handle(&f, BO_SIZE, &gtt_only);
	/* c a b b a: the repeat of b (3) comes before that of a (4). */
	uint32_t order[5] = { h[2], h[0], h[1], h[1], h[0] };
	for (i = 0; i < 5; i++)
		list[i] = (struct ttm_execbuf_bo){ order[i],
						   TTM_EXECBUF_BO_READ };
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 3);
	list[3].handle = h[2];
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -EINVAL);
	assert_int_equal(args.bad_index, 3);
	list[3].handle = 77;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOENT);
	assert_int_equal(args.bad_index, 3);
	assert_unlocked(&f, h, 3);
	fixture_fini(&f);
}

/*
 * -ENOSPC only for a job that can never fit: its own VRAM-only buffers
 * exceed VRAM, or everything else there is pinned. A job that fits after
 * evicting gets in.
 */
static void test_enospc(void **state)
{
	struct ttm_bo *pinned;
	struct fixture f;
	uint32_t a, b, c, p;

	(void)state;
	fixture_init_opts(&f, 16 * KiB, false, true);
	a = new_handle(&f, 8 * KiB, &vram_only);
	b = new_handle(&f, 8 * KiB, &vram_only);
	/* Lives in GTT, but this job wants it in VRAM too. */
	c = new_handle(&f, 8 * KiB, &gtt_only);
	struct ttm_execbuf_bo list[3] = {
		{ a, TTM_EXECBUF_BO_WRITE }, { b, TTM_EXECBUF_BO_WRITE },
		{ c, TTM_EXECBUF_BO_WRITE, &vram_only },
	};
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 3, .op = TTM_GPU_OP_ADD, .add_value = 1,
	};
	assert_int_equal(ttm_execbuf_submit(f.client, &args), -ENOSPC);
	assert_unlocked(&f, (uint32_t[]){ a, b, c }, 3);
	assert_int_equal(stats(&f).rejected_by_errno[ENOSPC], 1);
	assert_int_equal(ttm_bo_domain(bo_of(&f, c)), TTM_DOMAIN_GTT);
	/* Two of them fit, by evicting the third. */
	list[0] = list[2];
	list[1].handle = a;
	args.n_bos = 2;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	ttm_fence_put(args.out_fence);
	assert_int_equal(ttm_bo_domain(bo_of(&f, c)), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bo_of(&f, b)), TTM_DOMAIN_GTT);
	advance(&f, 1000);
	expect_words(&f, a, 1);
	expect_words(&f, b, 0);
	expect_words(&f, c, 1);

	/* Pin 12 KiB of VRAM: an 8 KiB buffer can never come in. */
	ttm_client_bo_close(f.client, b);
	ttm_client_bo_close(f.client, c);
	advance(&f, 1000);
	p = new_handle(&f, 12 * KiB, &vram_only);
	pinned = bo_of(&f, p);
	assert_int_equal(ttm_bo_reserve(pinned, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(pinned), 0);
	ttm_bo_unreserve(pinned);
	advance(&f, 1000);
	assert_int_equal(submit_add(&f, (uint32_t[]){ a }, 1, 1, 0, 0, 0,
				    NULL), -ENOSPC);
	assert_unlocked(&f, (uint32_t[]){ a, p }, 2);
	assert_int_equal(stats(&f).rejected_by_errno[ENOSPC], 2);
	assert_int_equal(ttm_bo_reserve(pinned, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(pinned), 0);
	ttm_bo_unreserve(pinned);
	assert_int_equal(submit_add(&f, (uint32_t[]){ a }, 1, 1, 0, 0, 0,
				    NULL), 0);
	advance(&f, 1000);
	expect_words(&f, a, 2);
	fixture_fini(&f);
}

/*
 * The job's own buffers are never evicted for it, but one that may live
 * elsewhere moves out of the way: a job that fits is not -ENOSPC, in
 * either order of its list.
 */
static void test_own_buffers_move(void **state)
{
	struct fixture f;
	uint32_t a, b;
	unsigned int order;

	(void)state;
	fixture_init_opts(&f, 16 * KiB, false, true);
	for (order = 0; order < 2; order++) {
		b = new_handle(&f, 12 * KiB, &vram_gtt);
		a = new_handle(&f, 8 * KiB, &gtt_only);
		assert_int_equal(ttm_bo_domain(bo_of(&f, b)), TTM_DOMAIN_VRAM);

		struct ttm_execbuf_bo list[2] = {
			{ b, TTM_EXECBUF_BO_WRITE },
			{ a, TTM_EXECBUF_BO_WRITE, &vram_only },
		};
		if (order) {
			struct ttm_execbuf_bo t = list[0];

			list[0] = list[1];
			list[1] = t;
		}
		struct ttm_execbuf_args args = {
			.bos = list, .n_bos = 2, .op = TTM_GPU_OP_ADD,
			.add_value = 3,
		};
		assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
		ttm_fence_put(args.out_fence);
		assert_int_equal(ttm_bo_domain(bo_of(&f, a)), TTM_DOMAIN_VRAM);
		assert_int_equal(ttm_bo_domain(bo_of(&f, b)), TTM_DOMAIN_GTT);
		advance(&f, 1000);
		expect_words(&f, a, 3);
		expect_words(&f, b, 3);
		assert_int_equal(ttm_client_bo_close(f.client, a), 0);
		assert_int_equal(ttm_client_bo_close(f.client, b), 0);
		advance(&f, 1000);
	}
	assert_int_equal(stats(&f).rejected, 0);
	fixture_fini(&f);
}

static int act_hold(struct actor *a, void *lock)
{
	ww_acquire_init(&a->ctx, a->cls);
	return ww_mutex_lock(lock, &a->ctx);
}

static int act_release(struct actor *a, void *lock)
{
	ww_mutex_unlock(lock);
	ww_acquire_fini(&a->ctx);
	return 0;
}

/*
 * An interruptible submission that must wait for a buffer another ticket
 * holds returns -EINTR on an interrupt and leaves nothing locked. The
 * interrupt is posted before the call: it stays pending until a wait
 * consumes it, so no timing is involved. Both classes: Wait-Die backs
 * off, then its slow lock is interrupted; Wound-Wait waits at once.
 */
static void test_eintr(void **state)
{
	struct fixture f;
	struct actor holder;
	struct ttm_bo *bo_b;
	uint32_t a, b;

	fixture_init_opts(&f, 16 * KiB, *(bool *)*state, false);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &vram_gtt);
	bo_b = bo_of(&f, b);
	actor_start(&holder, ttm_device_ww_class(f.dev));
	assert_int_equal(actor_run(&holder, act_hold,
				   &ttm_bo_resv(bo_b)->lock), 0);

	assert_int_equal(ttm_interrupt_thread(pthread_self()), 0);
	assert_int_equal(submit_add(&f, (uint32_t[]){ a, b }, 2, 1, 0,
				    TTM_EXECBUF_INTERRUPTIBLE, 0, NULL),
			 -EINTR);
	assert_false(ttm_interrupt_clear());
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bo_of(&f, a))->lock));
	assert_int_equal(stats(&f).rejected_by_errno[EINTR], 1);

	assert_int_equal(actor_run(&holder, act_release,
				   &ttm_bo_resv(bo_b)->lock), 0);
	actor_stop(&holder);
	assert_unlocked(&f, (uint32_t[]){ a, b }, 2);
	assert_int_equal(submit_add(&f, (uint32_t[]){ a, b }, 2, 1, 0,
				    TTM_EXECBUF_INTERRUPTIBLE, 0, NULL), 0);
	advance(&f, 1000);
	expect_words(&f, a, 1);
	expect_words(&f, b, 1);
	fixture_fini(&f);
}

struct room_job {
	struct fixture *f;
	struct ttm_execbuf_bo entry;
};

static int act_submit_one(struct actor *a, void *arg)
{
	struct room_job *job = arg;
	struct ttm_execbuf_args args = {
		.bos = &job->entry, .n_bos = 1, .op = TTM_GPU_OP_ADD,
		.add_value = 1,
	};
	int ret;

	(void)a;
	ret = ttm_execbuf_submit(job->f->client, &args);
	ttm_fence_put(args.out_fence);
	return ret;
}

static bool wait_for_room_wait(struct ttm_device *dev)
{
	struct ttm_device_stats ds;
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;

	for (;;) {
		ttm_device_get_stats(dev, &ds);
		if (ds.room_waits)
			return true;
		if (now_ns() > limit)
			return false;
		sched_yield();
	}
}

/*
 * The room a job needs is held for a moment by a reservation without a
 * ticket (as an eviction in progress holds its victim): the job fits, so
 * the submission waits instead of failing with -ENOSPC, and gets in once
 * the buffer is released.
 */
static void test_room_wait(void **state)
{
	struct room_job job;
	struct ttm_bo *held;
	struct fixture f;
	struct actor a;
	uint32_t v, h;

	(void)state;
	fixture_init_opts(&f, 16 * KiB, false, true);
	v = new_handle(&f, 16 * KiB, &vram_only);
	h = new_handle(&f, BO_SIZE, &gtt_only);
	held = bo_of(&f, v);
	job = (struct room_job){ &f, { h, TTM_EXECBUF_BO_WRITE, &vram_only } };

	assert_int_equal(ttm_bo_reserve(held, false, false, NULL), 0);
	actor_start(&a, NULL);
	assert_true(actor_post(&a, act_submit_one, &job));
	assert_true(wait_for_room_wait(f.dev));
	ttm_bo_unreserve(held);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	actor_stop(&a);

	assert_int_equal(ttm_bo_domain(bo_of(&f, h)), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(held), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).rejected, 0);
	{
		struct ttm_device_stats ds;

		/* Woken by the unreserve, not by the wait's timeout. */
		ttm_device_get_stats(f.dev, &ds);
		assert_int_equal(ds.room_wait_timeouts, 0);
	}
	advance(&f, 1000);
	expect_words(&f, h, 1);
	expect_words(&f, v, 0);
	fixture_fini(&f);
}

/*
 * The one buffer an eviction can make room with is held by an older
 * ticket: with Wait-Die the eviction is told -EDEADLK, and the submission
 * backs off, slow-locks the victim (waiting for the holder) and restarts,
 * which the counters show exactly: one back-off, one restart, one
 * eviction. With Wound-Wait the younger submission waits instead: none.
 * The holder lets go once the submission waits on the victim (seen on the
 * lock's waiter list), so no timing is involved.
 */
static void test_evict_backoff(void **state)
{
	bool wound_wait = *(bool *)*state;
	struct ttm_device_stats ds;
	struct ttm_execbuf_stats st;
	struct actor holder, sub;
	struct room_job job;
	struct ttm_bo *victim;
	struct fixture f;
	uint32_t v, h;

	fixture_init_opts(&f, 16 * KiB, wound_wait, true);
	v = new_handle(&f, 16 * KiB, &vram_only);
	h = new_handle(&f, BO_SIZE, &gtt_only);
	victim = bo_of(&f, v);
	job = (struct room_job){ &f, { h, TTM_EXECBUF_BO_WRITE, &vram_only } };

	/* The older ticket: taken before the submission's. */
	actor_start(&holder, ttm_device_ww_class(f.dev));
	assert_int_equal(actor_run(&holder, act_hold,
				   &ttm_bo_resv(victim)->lock), 0);
	actor_start(&sub, NULL);
	assert_true(actor_post(&sub, act_submit_one, &job));
	assert_true(wait_for_waiters(&ttm_bo_resv(victim)->lock, 1));
	assert_int_equal(actor_run(&holder, act_release,
				   &ttm_bo_resv(victim)->lock), 0);
	assert_true(actor_wait(&sub));
	assert_int_equal(actor_ret(&sub), 0);
	actor_stop(&sub);
	actor_stop(&holder);

	st = stats(&f);
	ttm_device_get_stats(f.dev, &ds);
	assert_int_equal(st.backoffs, wound_wait ? 0 : 1);
	assert_int_equal(st.restarts, wound_wait ? 0 : 1);
	assert_int_equal(ds.evictions, 1);
	assert_int_equal(ttm_bo_domain(bo_of(&f, h)), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_GTT);
	advance(&f, 1000);
	expect_words(&f, h, 1);
	fixture_fini(&f);
}

/* A failed explicit in-fence fails the job unrun: memory untouched. */
static void test_failed_in_fence(void **state)
{
	struct ttm_fence *in, *ok, *out;
	struct fixture f;
	uint32_t a;
	int fd;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &in),
			 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &ok),
			 0);

	struct ttm_execbuf_bo list[1] = { { a, TTM_EXECBUF_BO_WRITE } };
	struct ttm_fence *fences[2] = { ok, in };
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 1, .op = TTM_GPU_OP_ADD, .add_value = 9,
		.in_fences = fences, .n_in_fences = 2,
	};
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	out = args.out_fence;
	/* It waits for its in-fences. */
	advance(&f, 1000);
	assert_false(ttm_fence_is_signaled(out));
	assert_int_equal(ttm_fence_signal(ok, 0), 0);
	assert_int_equal(ttm_fence_signal(in, -EIO), 0);
	advance(&f, 1000);
	assert_int_equal(ttm_fence_get_status(out), -EIO);
	ttm_fence_put(out);
	expect_words(&f, a, 0);

	/* The same through a descriptor, already failed. */
	fd = ttm_fence_export_fd(in);
	assert_true(fd >= 0);
	args.in_fences = NULL;
	args.n_in_fences = 0;
	args.in_fence_fds = &fd;
	args.n_in_fence_fds = 1;
	assert_int_equal(ttm_execbuf_submit(f.client, &args), 0);
	advance(&f, 1000);
	assert_int_equal(ttm_fence_get_status(args.out_fence), -EIO);
	ttm_fence_put(args.out_fence);
	close(fd);
	expect_words(&f, a, 0);
	assert_int_equal(stats(&f).failed, 2);

	/* A later job without it runs. */
	assert_int_equal(submit_add(&f, &a, 1, 2, 0, 0, 0, NULL), 0);
	advance(&f, 1000);
	expect_words(&f, a, 2);
	ttm_fence_put(in);
	ttm_fence_put(ok);
	fixture_fini(&f);
}

/*
 * A hung job fails with -ETIMEDOUT after the watchdog; a later job on the
 * same buffer waited for it (implicit sync), then runs: its add applies,
 * the hung one's does not.
 */
static void test_hang(void **state)
{
	struct ttm_fence *hung, *later;
	struct fixture f;
	uint32_t a;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(submit_add(&f, &a, 1, 100, 0, TTM_EXECBUF_HANG, 0,
				    &hung), 0);
	assert_int_equal(submit_add(&f, &a, 1, 7, 1, 0, 0, &later), 0);
	advance(&f, HANG_MS * 1000 / 2);
	assert_false(ttm_fence_is_signaled(hung));
	assert_false(ttm_fence_is_signaled(later));
	advance(&f, HANG_MS * 1000);
	assert_int_equal(ttm_fence_get_status(hung), -ETIMEDOUT);
	advance(&f, 1000);
	assert_int_equal(ttm_fence_get_status(later), 1);
	expect_words(&f, a, 7);
	assert_int_equal(stats(&f).failed, 1);
	assert_int_equal(stats(&f).completed, 1);
	ttm_fence_put(hung);
	ttm_fence_put(later);
	fixture_fini(&f);
}

/* Submit one job of @tag on @engine: @list's entries, @duration_us. */
static void submit_tagged(struct fixture *f, struct ttm_execbuf_bo *list,
			  unsigned int n, unsigned int engine,
			  uint64_t duration_us, uint64_t tag)
{
	struct ttm_execbuf_args args = {
		.engine = engine, .bos = list, .n_bos = n,
		.op = TTM_GPU_OP_ADD, .add_value = 1,
		.duration_us = duration_us, .tag = tag,
	};

	assert_int_equal(ttm_execbuf_submit(f->client, &args), 0);
	ttm_fence_put(args.out_fence);
}

/*
 * Implicit sync, on two engines that would otherwise overlap: a read
 * waits for the write before it, a write for the reads before it, reads
 * do not wait for each other.
 */
static void test_implicit_sync(void **state)
{
	struct ttm_gpu_job_info *r;
	struct fixture f;
	uint32_t a, b;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	b = new_handle(&f, BO_SIZE, &vram_gtt);
	r = f.retired;
	/* 1: writes a, long; 2: reads a (and writes b), on engine 1. */
	submit_tagged(&f, (struct ttm_execbuf_bo[]){
		{ a, TTM_EXECBUF_BO_WRITE } }, 1, 0, 500, 1);
	submit_tagged(&f, (struct ttm_execbuf_bo[]){
		{ a, TTM_EXECBUF_BO_READ }, { b, TTM_EXECBUF_BO_WRITE } },
		2, 1, 10, 2);
	/* 3: reads a too, engine 0; 4: writes a, engine 1. */
	submit_tagged(&f, (struct ttm_execbuf_bo[]){
		{ a, TTM_EXECBUF_BO_READ } }, 1, 0, 300, 3);
	submit_tagged(&f, (struct ttm_execbuf_bo[]){
		{ a, TTM_EXECBUF_BO_WRITE } }, 1, 1, 10, 4);
	advance(&f, 10000);
	/* Read after write. */
	assert_true(r[2].start_us >= r[1].end_us);
	assert_true(r[3].start_us >= r[1].end_us);
	/* Reads overlap: 2 (10 us) ends while 3 (300 us) runs. */
	assert_true(r[2].end_us < r[3].end_us);
	/* Write after read: 4 waits for the longer read, 3. */
	assert_true(r[4].start_us >= r[3].end_us);
	assert_true(r[4].start_us >= r[2].end_us);
	/* Only writes added: a twice, b once. */
	expect_words(&f, a, 2);
	expect_words(&f, b, 1);
	fixture_fini(&f);
}

/*
 * Move, then use: a buffer evicted to SYSTEM comes back for the job by a
 * copy on the copy engine, which the job waits for (its KERNEL fence).
 * Had the add run first, the copy would have overwritten it.
 */
static void test_move_then_use(void **state)
{
	struct ttm_device_stats ds;
	struct fixture f;
	uint32_t a, b, c;

	(void)state;
	fixture_init_opts(&f, 16 * KiB, false, true);
	a = new_handle(&f, 8 * KiB, &vram_gtt);
	fill_words(&f, a, 1000);
	/* Fill VRAM and GTT: a goes to SYSTEM when c needs its room. */
	b = new_handle(&f, 8 * KiB, &vram_only);
	(void)new_handle(&f, 64 * KiB, &gtt_only);
	c = new_handle(&f, 8 * KiB, &vram_only);
	assert_int_equal(ttm_bo_domain(bo_of(&f, a)), TTM_DOMAIN_SYSTEM);
	advance(&f, 1000);
	expect_words(&f, a, 1000);

	/* a back into VRAM (evicting b, then moving a), then the add. */
	assert_int_equal(submit_add(&f, &a, 1, 5, 0, 0, 0, NULL), 0);
	assert_int_equal(ttm_bo_domain(bo_of(&f, a)), TTM_DOMAIN_VRAM);
	ttm_device_get_stats(f.dev, &ds);
	assert_true(ds.moves >= 3);
	advance(&f, 10000);
	expect_words(&f, a, 1005);
	expect_words(&f, b, 0);
	expect_words(&f, c, 0);
	fixture_fini(&f);
}

/*
 * Back-offs forced by injection restart the locking pass; the job still
 * runs once, and the counters show the restarts.
 */
static void test_injected_restarts(void **state)
{
	uint32_t h[6];
	struct ttm_execbuf_stats st;
	struct fixture f;
	unsigned int i, j;

	(void)state;
	if (!ww_debug_enabled())
		skip();
	fixture_init(&f);
	for (i = 0; i < 6; i++)
		h[i] = new_handle(&f, BO_SIZE, &vram_gtt);
	ww_debug_inject(3, 2);
	for (j = 0; j < 20; j++)
		assert_int_equal(submit_add(&f, h, 6, 1, j % 2, 0, 0, NULL),
				 0);
	ww_debug_inject(0, 0);
	advance(&f, 100000);
	st = stats(&f);
	assert_true(st.backoffs > 0);
	assert_true(st.restarts > 0);
	assert_int_equal(st.completed, 20);
	for (i = 0; i < 6; i++)
		expect_words(&f, h[i], 20);
	fixture_fini(&f);
}

/* A buffer shared through a descriptor: both clients' jobs apply. */
static void test_prime(void **state)
{
	struct ttm_client *other;
	struct fixture f;
	uint32_t a, mine, own = 0;
	bool is_new = false;
	int fd;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(ttm_client_export_fd(f.client, a, &fd), 0);
	assert_int_equal(ttm_client_open(f.dev, &other), 0);
	/*
	 * A buffer of its own first: the import's handle is then one the
	 * exporting client never gave out (handles count from 1 in each).
	 */
	assert_int_equal(ttm_client_bo_create(other, BO_SIZE, &gtt_only, 0,
					      &own), 0);
	assert_int_equal(ttm_client_import_fd(other, fd, &mine, &is_new), 0);
	assert_true(is_new);
	close(fd);

	struct ttm_execbuf_bo list[1] = { { mine, TTM_EXECBUF_BO_WRITE } };
	struct ttm_execbuf_args args = {
		.bos = list, .n_bos = 1, .op = TTM_GPU_OP_ADD, .add_value = 40,
	};
	assert_int_equal(ttm_execbuf_submit(other, &args), 0);
	ttm_fence_put(args.out_fence);
	assert_int_equal(submit_add(&f, &a, 1, 2, 1, 0, 0, NULL), 0);
	/* The other's handle means nothing here. */
	assert_int_not_equal(mine, a);
	assert_null(ttm_client_lookup(f.client, mine));
	/* Closing the other client with its job in flight is fine. */
	ttm_client_close(other);
	advance(&f, 1000);
	expect_words(&f, a, 42);
	fixture_fini(&f);
}

/*
 * A buffer shared with another device on the same GPU (an import that
 * shares the exporter's reservation): the two devices' jobs on it are
 * ordered by their fences, and both land in the one set of pages.
 */
static void test_prime_xdev(void **state)
{
	struct ttm_execbuf_bo list[1];
	struct ttm_execbuf_args args = {
		.engine = 0, .bos = list, .n_bos = 1, .op = TTM_GPU_OP_ADD,
		.add_value = 40, .duration_us = 500, .tag = 1,
	};
	struct ttm_device_stats ds;
	struct ttm_gpu_job_info *r;
	struct ttm_device *other_dev;
	struct ttm_client *other;
	struct fixture f;
	uint32_t a, mine;
	bool is_new = false;
	int fd;

	(void)state;
	fixture_init(&f);
	r = f.retired;
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
			.gpu = f.gpu, .copy_engine = ENGINES - 1 },
					   &other_dev), 0);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(ttm_client_export_fd(f.client, a, &fd), 0);
	assert_int_equal(ttm_client_open(other_dev, &other), 0);
	assert_int_equal(ttm_client_import_fd(other, fd, &mine, &is_new), 0);
	assert_true(is_new);
	close(fd);

	/* 1: the other device writes it, long, on engine 0... */
	list[0] = (struct ttm_execbuf_bo){ mine, TTM_EXECBUF_BO_WRITE,
					   &vram_only };
	assert_int_equal(ttm_execbuf_submit(other, &args), 0);
	ttm_fence_put(args.out_fence);
	/* ...2: this one writes it on engine 1, after 1. */
	submit_tagged(&f, (struct ttm_execbuf_bo[]){
		{ a, TTM_EXECBUF_BO_WRITE } }, 1, 1, 10, 2);
	advance(&f, 10000);
	ttm_execbuf_wait_idle(other_dev);
	assert_true(r[2].start_us >= r[1].end_us);
	expect_words(&f, a, 41);
	/* The import asked for VRAM, but takes none of its device's. */
	ttm_device_get_stats(other_dev, &ds);
	assert_int_equal(ds.domain[TTM_DOMAIN_VRAM].used, 0);
	assert_dev_ok(other_dev);

	ttm_client_close(other);
	ttm_device_flush_destroys(other_dev);
	assert_int_equal(ttm_device_destroy(other_dev), 0);
	fixture_fini(&f);
}

/* Closing the only handle while a job runs: the buffer waits for it. */
static void test_close_in_flight(void **state)
{
	struct ttm_device_stats ds;
	struct ttm_fence *out;
	struct fixture f;
	uint32_t a;

	(void)state;
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	assert_int_equal(submit_add(&f, &a, 1, 2, 0, 0, 0, &out), 0);
	assert_int_equal(ttm_client_bo_close(f.client, a), 0);
	ttm_device_get_stats(f.dev, &ds);
	assert_int_equal(ds.zombies, 1);
	advance(&f, 1000);
	assert_int_equal(ttm_fence_get_status(out), 1);
	/* Freed by the device's worker, not in the signalling thread. */
	ttm_device_flush_destroys(f.dev);
	ttm_device_get_stats(f.dev, &ds);
	assert_int_equal(ds.zombies, 0);
	assert_int_equal(ds.buffers, 0);
	ttm_fence_put(out);
	fixture_fini(&f);
}

/* ---- the driver's private data ------------------------------------------- */

/*
 * A driver's per-device data: zeroes, of any size a layer's state could
 * have, so that a library using it as its own leaves a mark instead of
 * hanging on a garbage mutex.
 */
#define DRIVER_PRIV_SIZE 4096

static void *driver_priv_new(void)
{
	void *p = calloc(1, DRIVER_PRIV_SIZE);

	assert_non_null(p);
	return p;
}

static bool driver_priv_untouched(const void *p)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < DRIVER_PRIV_SIZE; i++)
		if (b[i])
			return false;
	return true;
}

static void *driver_released;
static unsigned int driver_releases;

static void driver_release(void *data)
{
	driver_released = data;
	driver_releases++;
}

/* One job adding @value to @h through @f's client, run to completion. */
static void submit_and_run(struct fixture *f, uint32_t h, uint32_t value)
{
	assert_int_equal(submit_add(f, &h, 1, value, 0, 0, 0, NULL), 0);
	advance(f, 1000);
}

/*
 * ttm_device_set_private() is the driver's alone: execbuf keeps its own
 * per-device state elsewhere, whether the driver attaches its data before
 * the first client or after jobs ran. The driver gets its pointer back,
 * its memory untouched, and its release once, at ttm_device_destroy().
 */
static void test_driver_private(void **state)
{
	void *priv = driver_priv_new(), *other = driver_priv_new();
	struct fixture f;
	uint32_t a;

	(void)state;
	driver_released = NULL;
	driver_releases = 0;

	/* Attached before the first client. */
	fixture_init_device(&f, 16 * KiB, false, false);
	assert_ptr_equal(ttm_device_set_private(f.dev, priv, driver_release),
			 priv);
	assert_int_equal(ttm_client_open(f.dev, &f.client), 0);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	submit_and_run(&f, a, 3);
	submit_and_run(&f, a, 4);
	expect_words(&f, a, 7);
	assert_int_equal(stats(&f).completed, 2);
	assert_ptr_equal(ttm_device_private(f.dev), priv);
	assert_true(driver_priv_untouched(priv));
	/* Attached once: a second call gives the first data back. */
	assert_ptr_equal(ttm_device_set_private(f.dev, other, driver_release),
			 priv);
	fixture_fini(&f);
	assert_int_equal(driver_releases, 1);
	assert_ptr_equal(driver_released, priv);

	/* Attached after jobs ran. */
	fixture_init(&f);
	a = new_handle(&f, BO_SIZE, &vram_gtt);
	submit_and_run(&f, a, 5);
	assert_null(ttm_device_private(f.dev));
	assert_ptr_equal(ttm_device_set_private(f.dev, other, driver_release),
			 other);
	submit_and_run(&f, a, 6);
	expect_words(&f, a, 11);
	assert_int_equal(stats(&f).submitted, 2);
	assert_int_equal(stats(&f).completed, 2);
	assert_ptr_equal(ttm_device_private(f.dev), other);
	assert_true(driver_priv_untouched(other));
	fixture_fini(&f);
	assert_int_equal(driver_releases, 2);
	assert_ptr_equal(driver_released, other);
	free(priv);
	free(other);
}

/* ---- events ---------------------------------------------------------------- */

struct sink {
	struct ttm_execbuf_event ev[64];
	unsigned int n;
};

static void sink_fn(const struct ttm_execbuf_event *event, void *data)
{
	struct sink *s = data;

	if (s->n < 64)
		s->ev[s->n++] = *event;
}

static bool inside(const struct ttm_execbuf_event *in,
		   const struct ttm_execbuf_event *out)
{
	return in->begin_ns >= out->begin_ns && in->end_ns <= out->end_ns;
}

/*
 * Each submission gives one SUBMIT event holding LOOKUP, LOCK and QUEUE;
 * LOCK holds the BACKOFF and VALIDATE events, which do not overlap.
 */
static void test_events(void **state)
{
	struct sink s = { .n = 0 };
	const struct ttm_execbuf_event *submit = NULL, *lock = NULL, *prev;
	unsigned int i, jobs, backoffs = 0, validates = 0;
	struct fixture f;
	uint32_t h[4];

	(void)state;
	if (!ww_debug_enabled())
		skip();
	fixture_init(&f);
	for (i = 0; i < 4; i++)
		h[i] = new_handle(&f, BO_SIZE, &vram_gtt);
	ttm_client_set_event_sink(f.client, sink_fn, &s);
	/* Until a submission backs off: the sink keeps the last one. */
	ww_debug_inject(11, 2);
	for (jobs = 1; jobs < 100; jobs++) {
		s.n = 0;
		assert_int_equal(submit_add(&f, h, 4, 1, 0, 0, 0, NULL), 0);
		if (stats(&f).backoffs)
			break;
	}
	ww_debug_inject(0, 0);
	ttm_client_set_event_sink(f.client, NULL, NULL);
	assert_int_equal(submit_add(&f, h, 4, 1, 0, 0, 0, NULL), 0);
	jobs++;

	assert_true(s.n >= 5);
	for (i = 0; i < s.n; i++) {
		assert_int_equal(s.ev[i].seqno, jobs - 1);
		assert_true(s.ev[i].begin_ns <= s.ev[i].end_ns);
		if (s.ev[i].phase == TTM_EXECBUF_PHASE_SUBMIT)
			submit = &s.ev[i];
		if (s.ev[i].phase == TTM_EXECBUF_PHASE_LOCK)
			lock = &s.ev[i];
	}
	assert_non_null(submit);
	assert_non_null(lock);
	/* SUBMIT comes last: it ends last. */
	assert_ptr_equal(submit, &s.ev[s.n - 1]);
	prev = NULL;
	for (i = 0; i + 1 < s.n; i++) {
		const struct ttm_execbuf_event *e = &s.ev[i];

		assert_true(inside(e, submit));
		switch (e->phase) {
		case TTM_EXECBUF_PHASE_BACKOFF:
			backoffs++;
			/* fallthrough */
		case TTM_EXECBUF_PHASE_VALIDATE:
			validates += e->phase == TTM_EXECBUF_PHASE_VALIDATE;
			assert_true(inside(e, lock));
			if (prev)
				assert_true(e->begin_ns >= prev->end_ns);
			prev = e;
			break;
		default:
			break;
		}
	}
	assert_true(validates >= 1);
	assert_int_equal(backoffs, stats(&f).backoffs);
	assert_true(backoffs >= 1);
	assert_int_equal(stats(&f).restarts, backoffs);
	advance(&f, 1000);
	for (i = 0; i < 4; i++)
		expect_words(&f, h[i], jobs);
	fixture_fini(&f);
}

static bool wait_die_state = false, wound_wait_state = true;

#define TEST(fn) cmocka_unit_test_setup(fn, checks_reset)
#define TEST_CLASS(fn, st) \
	cmocka_unit_test_prestate_setup_teardown(fn, NULL, NULL, &st)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_add),
		TEST(test_copy),
		TEST(test_bad_handle),
		TEST(test_submit_references),
		TEST(test_many_bos),
		TEST(test_bad_args),
		TEST(test_duplicates),
		TEST(test_duplicate_index),
		TEST(test_enospc),
		TEST(test_own_buffers_move),
		TEST_CLASS(test_eintr, wait_die_state),
		TEST_CLASS(test_eintr, wound_wait_state),
		TEST(test_room_wait),
		TEST_CLASS(test_evict_backoff, wait_die_state),
		TEST_CLASS(test_evict_backoff, wound_wait_state),
		TEST(test_failed_in_fence),
		TEST(test_hang),
		TEST(test_implicit_sync),
		TEST(test_move_then_use),
		TEST(test_injected_restarts),
		TEST(test_prime),
		TEST(test_prime_xdev),
		TEST(test_close_in_flight),
		TEST(test_driver_private),
		TEST(test_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
