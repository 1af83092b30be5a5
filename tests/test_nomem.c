// SPDX-License-Identifier: MIT
/*
 * Nothing accepted is lost when memory runs out afterwards: a job that
 * ttm_sched_gpu_submit(), ttm_sched_cb_submit() or ttm_execbuf_submit()
 * accepted, and the copy
 * of a move that ttm_bo_validate() queued, run and are correct even if
 * every allocation fails from then on. Once accepted there is no caller
 * left to tell: the scheduler's run_job used to allocate the GPU's job,
 * and without memory the job never ran (its fence failed with -ENOMEM,
 * the add or the copy not done, the buffer's contents wrong).
 *
 * And a warmed-up thread's jobs through the scheduler allocate nothing at
 * all (test_sched_steady_no_alloc()).
 *
 * On the virtual clock, so that the scheduler and the GPU do all their
 * work in the thread that advances it, the one whose allocations fail
 * (lib/alloc_fail.h). Skipped under sanitizers (no allocation hook).
 */
#include "lib/alloc_fail.h"
#include "lib/bo_helpers.h"
#include "lib/bo_profiles.h"


#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"

#define WORDS 16

static void need_hook(void)
{
	if (!alloc_fail_supported()) {
		print_message("no allocation hook under a sanitizer\n");
		skip();
	}
}

/* Every test's first step: it skips without the hook. */
static struct ttm_gpu *virtual_gpu(void)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_gpu *gpu;

	need_hook();
	assert_int_equal(ttm_gpu_create(1, &go, &gpu), 0);
	return gpu;
}

/* A device of 64 KiB of VRAM on a new virtual GPU, *@ret_gpu. */
static struct ttm_device *virtual_device(struct ttm_gpu **ret_gpu)
{
	struct ttm_device_options opts = { .vram_size = 64 * KiB };
	struct ttm_device *dev;

	opts.gpu = *ret_gpu = virtual_gpu();
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

/* More than the fence pool ever holds in this program. */
#define MAX_DRAINED (1u << 16)

/*
 * Run everything due in the next 1000 us with every allocation failing.
 * The fence pool's free fences are taken first (with allocations failing,
 * until ttm_fence_create() has none left), so that a fence made while
 * advancing needs memory too; given back after.
 */
static void advance_without_memory(struct ttm_gpu *gpu)
{
	struct ttm_fence **drained = calloc(MAX_DRAINED, sizeof(*drained));
	unsigned int n = 0, refused;
	int ret;

	assert_non_null(drained);
	alloc_fail_begin();
	while (n < MAX_DRAINED &&
	       ttm_fence_create(ttm_fence_context_alloc(1), 1,
				&drained[n]) == 0)
		n++;
	/* Count only what ttm_gpu_advance() asks for: the drain's last,
	 * refused allocation is not its. */
	alloc_fail_end();
	alloc_fail_begin();
	ret = ttm_gpu_advance(gpu, 1000);
	refused = alloc_fail_end();
	assert_true(n < MAX_DRAINED);
	while (n)
		ttm_fence_put(drained[--n]);
	free(drained);
	assert_int_equal(ret, 0);
	/* Completion and signalling allocate nothing. */
	assert_int_equal(refused, 0);
}

static int count_calls(struct ttm_sched_job *job, void *data)
{
	(void)job;
	__atomic_fetch_add((unsigned int *)data, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * A job of the callback backend: its hardware fence used to be made at
 * run_job, and without memory the function never ran.
 */
static void test_cb_job_runs(void **state)
{
	struct ttm_sched_options so = { .credit_limit = 1 };
	struct ttm_sched_cb_args args = { .fn = count_calls };
	struct ttm_sched_entity *e;
	struct ttm_fence *done;
	unsigned int calls = 0;
	struct ttm_sched *s;

	(void)state;
	so.gpu = virtual_gpu();
	assert_int_equal(ttm_sched_cb_create(&so, 0, &s), 0);
	assert_int_equal(ttm_sched_entity_create(s, TTM_SCHED_PRIORITY_NORMAL,
						 &e), 0);
	args.data = &calls;
	assert_int_equal(ttm_sched_cb_submit(e, &args, &done), 0);

	advance_without_memory(so.gpu);
	assert_int_equal(calls, 1);
	assert_true(ttm_fence_is_signaled(done));
	assert_int_equal(ttm_fence_get_status(done), 1);

	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	ttm_gpu_destroy(so.gpu);
	ttm_fence_put(done);
}

/*
 * Two adds through a scheduler entity, the second also waiting for a
 * fence of the test: both accepted with memory, run without.
 */
static void test_sched_job_runs(void **state)
{
	uint32_t a[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_dep dep = { NULL, true };
	struct ttm_gpu_job add = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				   .ranges = &ra, .n_ranges = 1,
				   .duration_us = 10 };
	struct ttm_fence *gate, *f1, *f2;
	struct ttm_sched_entity *e;
	struct ttm_gpu_stats st;
	struct ttm_sched *s;
	struct ttm_gpu *gpu;

	(void)state;
	gpu = virtual_gpu();
	assert_int_equal(ttm_sched_gpu_create(gpu, 0, NULL, &s), 0);
	assert_int_equal(ttm_sched_entity_create(s, TTM_SCHED_PRIORITY_NORMAL,
						 &e), 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &gate), 0);
	assert_int_equal(ttm_sched_gpu_submit(e, &add, &f1), 0);
	dep.fence = gate;
	add.deps = &dep;
	add.n_deps = 1;
	add.add_value = 2;
	assert_int_equal(ttm_sched_gpu_submit(e, &add, &f2), 0);
	ttm_fence_signal(gate, 0);

	advance_without_memory(gpu);
	assert_true(ttm_fence_is_signaled(f1));
	assert_int_equal(ttm_fence_get_status(f1), 1);
	assert_true(ttm_fence_is_signaled(f2));
	assert_int_equal(ttm_fence_get_status(f2), 1);
	assert_int_equal(a[0], 3);
	assert_int_equal(a[WORDS - 1], 3);
	ttm_gpu_get_stats(gpu, &st);
	assert_int_equal(st.run, 2);
	assert_int_equal(st.failed, 0);

	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	ttm_gpu_destroy(gpu);
	ttm_fence_put(gate);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
}

/* Jobs of the steady-state test; twice the per-thread caches' bound. */
#define STEADY_JOBS 64

/*
 * No allocation per job once a thread is warmed up (issue 22, goal 3): a
 * job through a scheduler entity, submitted, run, retired and freed, its
 * finished fence put, with every allocation failing. The sched job, its
 * fences and the GPU's job come back from the thread's caches (the fences
 * once their grace period, ended by the next job's retirement, is over),
 * the out-fence from the fence pool. Fails with -ENOMEM where a job
 * callocs any of them.
 */
static void test_sched_steady_no_alloc(void **state)
{
	uint32_t a[WORDS] = { 0 };
	struct ttm_gpu_range ra = { a, sizeof(a) };
	struct ttm_gpu_job add = { .op = TTM_GPU_OP_ADD, .add_value = 1,
				   .ranges = &ra, .n_ranges = 1,
				   .duration_us = 10 };
	struct ttm_sched_entity *e;
	struct ttm_fence *f;
	unsigned int i, refused;
	struct ttm_sched *s;
	struct ttm_gpu *gpu;
	int ret = 0;

	(void)state;
	gpu = virtual_gpu();
	assert_int_equal(ttm_sched_gpu_create(gpu, 0, NULL, &s), 0);
	assert_int_equal(ttm_sched_entity_create(s, TTM_SCHED_PRIORITY_NORMAL,
						 &e), 0);
	/* Warm-up, with memory: the caches and the fence pool fill. */
	for (i = 0; i < 4; i++) {
		assert_int_equal(ttm_sched_gpu_submit(e, &add, &f), 0);
		assert_int_equal(ttm_gpu_advance(gpu, 100), 0);
		assert_true(ttm_fence_is_signaled(f));
		ttm_fence_put(f);
	}
	alloc_fail_begin();
	for (i = 0; i < STEADY_JOBS && !ret; i++) {
		ret = ttm_sched_gpu_submit(e, &add, &f);
		if (ret)
			break;
		ret = ttm_gpu_advance(gpu, 100);
		if (!ttm_fence_is_signaled(f))
			ret = -EBUSY;
		ttm_fence_put(f);
	}
	refused = alloc_fail_end();
	assert_int_equal(ret, 0);
	assert_int_equal(refused, 0);
	assert_int_equal(a[0], 4 + STEADY_JOBS);

	ttm_sched_entity_destroy(e, 0);
	ttm_sched_destroy(s);
	ttm_gpu_destroy(gpu);
}

/* A buffer moved from VRAM to GTT keeps its contents. */
static void test_move_copies(void **state)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct ttm_device_stats st;
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	struct ttm_bo *bo;

	(void)state;
	dev = virtual_device(&gpu);
	assert_int_equal(ttm_bo_create(dev, 16 * KiB, &vram_only, 0, &bo), 0);
	fill_bo_words(bo, 0x5a5a0001);

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(bo, &gtt_only, &ctx), 0);
	ttm_bo_unreserve(bo);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.moves, 1);

	advance_without_memory(gpu);
	expect_bo_words(bo, 0x5a5a0001);
	assert_dev_ok(dev);

	ttm_bo_put(bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
	ttm_gpu_destroy(gpu);
}

/*
 * The driver's move hook asks to bounce through GTT, and memory runs
 * out from then on: the hop's resource cannot be allocated. That is
 * -ENOMEM, not -ENOSPC (GTT has room): a caller told "no room" would
 * evict to make some, for nothing. The buffer stays where it was.
 */
static int hop_then_nomem(struct ttm_bo *bo, enum ttm_domain from,
			  enum ttm_domain to, const struct ttm_gpu_range *src,
			  const struct ttm_gpu_range *dst,
			  const struct ttm_operation_ctx *ctx, void *data,
			  struct ttm_fence **ret_fence, enum ttm_domain *ret_hop)
{
	(void)bo; (void)ctx; (void)data; (void)ret_fence;
	if (from == TTM_DOMAIN_SYSTEM && to == TTM_DOMAIN_VRAM) {
		*ret_hop = TTM_DOMAIN_GTT;
		alloc_fail_begin();
		return -EMULTIHOP;
	}
	memcpy(dst->addr, src->addr, src->size);
	return 0;
}

static void test_hop_nomem(void **state)
{
	static const struct ttm_device_funcs funcs = { .move = hop_then_nomem };
	struct ttm_device_options opts = {
		.vram_size = 64 * KiB, .funcs = &funcs,
	};
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct ttm_device *dev;
	struct ttm_bo *bo;
	int ret;

	(void)state;
	need_hook();
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	assert_int_equal(ttm_bo_create(dev, 16 * KiB, &system_only, 0, &bo),
			 0);
	fill_bo_words(bo, 0x5a5a0002);

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ret = ttm_bo_validate(bo, &vram_only, &ctx);
	assert_true(alloc_fail_end() > 0);
	ttm_bo_unreserve(bo);
	assert_int_equal(ret, -ENOMEM);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	expect_bo_words(bo, 0x5a5a0002);
	assert_dev_ok(dev);

	ttm_bo_put(bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* A job of ttm_execbuf_submit(), adding to a buffer. */
static void test_execbuf_job_runs(void **state)
{
	struct ttm_execbuf_bo ebo = { 0, TTM_EXECBUF_BO_WRITE, &gtt_only };
	struct ttm_execbuf_args args = {
		.engine = 0, .bos = &ebo, .n_bos = 1, .op = TTM_GPU_OP_ADD,
		.add_value = 7, .duration_us = 10,
	};
	struct ttm_client *client;
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	struct ttm_bo *bo;

	(void)state;
	dev = virtual_device(&gpu);
	assert_int_equal(ttm_client_open(dev, &client), 0);
	assert_int_equal(ttm_client_bo_create(client, 4 * KiB, &gtt_only, 0,
					      &ebo.handle), 0);
	assert_int_equal(ttm_execbuf_submit(client, &args), 0);

	advance_without_memory(gpu);
	assert_true(ttm_fence_is_signaled(args.out_fence));
	assert_int_equal(ttm_fence_get_status(args.out_fence), 1);
	bo = ttm_client_lookup(client, ebo.handle);
	assert_non_null(bo);
	expect_bo_words(bo, 7);

	ttm_bo_put(bo);
	ttm_fence_put(args.out_fence);
	ttm_client_close(client);
	assert_int_equal(ttm_device_destroy(dev), 0);
	ttm_gpu_destroy(gpu);
}

/*
 * Once warm, a submission through ttm_execbuf_submit() allocates nothing
 * either: the lookup array is on the stack, the sched job, its fences, the
 * GPU's job and execbuf's completion count come from the thread's caches.
 */
static void test_execbuf_steady_no_alloc(void **state)
{
	struct ttm_execbuf_bo ebo = { 0, TTM_EXECBUF_BO_WRITE, &gtt_only };
	struct ttm_execbuf_args args = {
		.engine = 0, .bos = &ebo, .n_bos = 1, .op = TTM_GPU_OP_ADD,
		.add_value = 1, .duration_us = 10,
	};
	struct ttm_client *client;
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	unsigned int i, refused;
	struct ttm_bo *bo;
	int ret = 0;

	(void)state;
	dev = virtual_device(&gpu);
	assert_int_equal(ttm_client_open(dev, &client), 0);
	assert_int_equal(ttm_client_bo_create(client, 4 * KiB, &gtt_only, 0,
					      &ebo.handle), 0);
	/* Warm-up, with memory: the caches and the fence pool fill. */
	for (i = 0; i < 4; i++) {
		assert_int_equal(ttm_execbuf_submit(client, &args), 0);
		assert_int_equal(ttm_gpu_advance(gpu, 100), 0);
		assert_true(ttm_fence_is_signaled(args.out_fence));
		ttm_fence_put(args.out_fence);
	}
	alloc_fail_begin();
	for (i = 0; i < STEADY_JOBS && !ret; i++) {
		ret = ttm_execbuf_submit(client, &args);
		if (ret)
			break;
		ret = ttm_gpu_advance(gpu, 100);
		if (!ttm_fence_is_signaled(args.out_fence))
			ret = -EBUSY;
		ttm_fence_put(args.out_fence);
	}
	refused = alloc_fail_end();
	assert_int_equal(ret, 0);
	assert_int_equal(refused, 0);
	bo = ttm_client_lookup(client, ebo.handle);
	assert_non_null(bo);
	expect_bo_words(bo, 4 + STEADY_JOBS);

	ttm_bo_put(bo);
	ttm_client_close(client);
	assert_int_equal(ttm_device_destroy(dev), 0);
	ttm_gpu_destroy(gpu);
}

/*
 * An import that runs out of memory after it found its device's interned
 * placement (another import there made it) leaves nothing behind: that
 * placement still goes with the last import using it, and the exporter
 * (its PRIME part made by an earlier import) is intact.
 */
static void test_import_nomem(void **state)
{
	struct ttm_placement pl = { .count = 1 };
	struct ttm_device *a, *b, *c;
	struct ttm_bo *e1, *e2, *i1, *i2;
	unsigned int refused;
	int ret;

	(void)state;
	need_hook();
	assert_int_equal(ttm_device_create(NULL, &a), 0);
	assert_int_equal(ttm_device_create(NULL, &b), 0);
	assert_int_equal(ttm_device_create(NULL, &c), 0);
	pl.places[0] = (struct ttm_place){ .domain = TTM_DOMAIN_GTT };
	assert_int_equal(ttm_bo_create(a, 4 * KiB, &pl, 0, &e1), 0);
	assert_int_equal(ttm_bo_create(a, 4 * KiB, &pl, 0, &e2), 0);
	/* @e1's PRIME part, left by an import gone since. */
	assert_int_equal(ttm_bo_import(c, e1, &i1), 0);
	ttm_bo_put(i1);
	/* @b's interned import placement, made by an import of @e2. */
	assert_int_equal(ttm_bo_import(b, e2, &i2), 0);
	assert_int_equal(profiles_of(b), 1);
	alloc_fail_begin();
	ret = ttm_bo_import(b, e1, &i1);
	refused = alloc_fail_end();
	assert_int_equal(ret, -ENOMEM);
	assert_true(refused > 0);
	assert_int_equal(profiles_of(b), 1);
	ttm_bo_put(i2);
	assert_int_equal(profiles_of(b), 0);
	/* With memory again, the import works. */
	assert_int_equal(ttm_bo_import(b, e1, &i1), 0);
	assert_ptr_equal(ttm_bo_exporter(i1), e1);
	ttm_bo_put(i1);
	assert_int_equal(profiles_of(b), 0);
	ttm_bo_put(e2);
	ttm_bo_put(e1);
	ttm_device_destroy(c);
	ttm_device_destroy(b);
	ttm_device_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cb_job_runs),
		cmocka_unit_test(test_sched_job_runs),
		cmocka_unit_test(test_sched_steady_no_alloc),
		cmocka_unit_test(test_move_copies),
		cmocka_unit_test(test_execbuf_job_runs),
		cmocka_unit_test(test_execbuf_steady_no_alloc),
		cmocka_unit_test(test_hop_nomem),
		cmocka_unit_test(test_import_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
