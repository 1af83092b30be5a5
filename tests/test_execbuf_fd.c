// SPDX-License-Identifier: MIT
/*
 * A submission whose out-fence descriptor (TTM_EXECBUF_FENCE_FD_OUT) cannot
 * be made, the process being out of descriptors (RLIMIT_NOFILE lowered to
 * what is open), is rejected with -EMFILE and leaves no trace: no job on
 * the GPU (its counters), no fence in the buffer's reservation, the
 * buffer's words unchanged, only `submitted` and `rejected` counted, no
 * number taken on the client's timeline (a job that was made and then
 * cancelled takes one). With descriptors again the same submission works.
 * Virtual GPU clock.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/bo_helpers.h"

#include "ttmsim/execbuf.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"

#define BO_SIZE (4 * KiB)
#define MAX_FILLERS 256

struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_client *client;
	uint32_t handle;
	struct ttm_bo *bo;
};

static void fixture_init(struct fixture *f)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_device_options opts = { 0 };

	assert_int_equal(ttm_gpu_create(1, &gopts, &f->gpu), 0);
	opts.gpu = f->gpu;
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	assert_int_equal(ttm_client_open(f->dev, &f->client), 0);
	assert_int_equal(ttm_client_bo_create(f->client, BO_SIZE, &gtt_only,
					      0, &f->handle), 0);
	f->bo = ttm_client_lookup(f->client, f->handle);
	assert_non_null(f->bo);
}

static void fixture_fini(struct fixture *f)
{
	ttm_bo_put(f->bo);
	ttm_client_close(f->client);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	ttm_gpu_destroy(f->gpu);
}

/* An add of @value to the buffer, its fence as a descriptor. */
static int submit_fd(struct fixture *f, uint32_t value,
		     struct ttm_execbuf_args *args, struct ttm_execbuf_bo *e)
{
	*e = (struct ttm_execbuf_bo){ f->handle, TTM_EXECBUF_BO_WRITE };
	*args = (struct ttm_execbuf_args){
		.bos = e,
		.n_bos = 1,
		.op = TTM_GPU_OP_ADD,
		.add_value = value,
		.duration_us = 10,
		.flags = TTM_EXECBUF_FENCE_FD_OUT,
	};
	return ttm_execbuf_submit(f->client, args);
}

/* Run the job of @args to its end and drop what it handed out. */
static void finish(struct fixture *f, struct ttm_execbuf_args *args)
{
	assert_int_equal(ttm_gpu_advance(f->gpu, 1000), 0);
	assert_true(ttm_fence_is_signaled(args->out_fence));
	close(args->out_fence_fd);
	ttm_fence_put(args->out_fence);
}

/*
 * Take every free descriptor below a limit lowered to just above the
 * highest one open; *@old gets the limit to restore. Return: how many.
 */
static unsigned int exhaust_fds(int *fillers, struct rlimit *old)
{
	struct rlimit low;
	unsigned int n = 0;
	int probe, fd;

	CHECK_INT(getrlimit(RLIMIT_NOFILE, old), 0);
	probe = dup(0);
	CHECK(probe >= 0);
	close(probe);
	low = *old;
	low.rlim_cur = (rlim_t)probe + 8;
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < MAX_FILLERS && (fd = dup(0)) >= 0)
		fillers[n++] = fd;
	CHECK_INT(errno, EMFILE);
	return n;
}

static void release_fds(const int *fillers, unsigned int n,
			const struct rlimit *old)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fillers[i]);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, old), 0);
}

static void test_out_fd_emfile_leaves_no_trace(void **state)
{
	struct ttm_gpu_stats g0, g1;
	struct ttm_execbuf_stats s0, s1;
	struct ttm_execbuf_args args;
	struct ttm_execbuf_bo e;
	struct fixture f;
	struct rlimit old;
	int fillers[MAX_FILLERS];
	uint64_t context, seqno;
	unsigned int n;
	int ret;

	(void)state;
	fixture_init(&f);
	/* One job through first: whatever the path makes once is made. */
	assert_int_equal(submit_fd(&f, 1, &args, &e), 0);
	context = ttm_fence_context(args.out_fence);
	seqno = ttm_fence_seqno(args.out_fence);
	finish(&f, &args);
	ttm_gpu_get_stats(f.gpu, &g0);
	ttm_execbuf_get_stats(f.dev, &s0);

	n = exhaust_fds(fillers, &old);
	ret = submit_fd(&f, 100, &args, &e);
	release_fds(fillers, n, &old);
	assert_checks_passed();
	assert_int_equal(ret, -EMFILE);
	assert_null(args.out_fence);
	assert_int_equal(args.out_fence_fd, -1);

	/* Nothing for the GPU to run, nothing in the reservation. */
	assert_int_equal(ttm_gpu_advance(f.gpu, 1000), 0);
	ttm_execbuf_wait_idle(f.dev);
	ttm_gpu_get_stats(f.gpu, &g1);
	assert_int_equal(g1.submitted, g0.submitted);
	assert_int_equal(g1.run, g0.run);
	assert_int_equal(g1.failed, g0.failed);
	assert_true(ttm_resv_test_signaled(ttm_bo_resv(f.bo),
					   TTM_RESV_USAGE_BOOKKEEP));
	expect_bo_words(f.bo, 1);
	ttm_execbuf_get_stats(f.dev, &s1);
	assert_int_equal(s1.submitted, s0.submitted + 1);
	assert_int_equal(s1.rejected, s0.rejected + 1);
	assert_int_equal(s1.rejected_by_errno[EMFILE],
			 s0.rejected_by_errno[EMFILE] + 1);
	assert_int_equal(s1.completed, s0.completed);
	assert_int_equal(s1.failed, s0.failed);
	assert_int_equal(s1.in_flight, 0);

	/*
	 * With descriptors again, the same job runs, once, and is the next
	 * on the client's timeline: the rejected one took no number there.
	 */
	assert_int_equal(submit_fd(&f, 100, &args, &e), 0);
	assert_true(args.out_fence_fd >= 0);
	assert_int_equal(ttm_fence_context(args.out_fence), context);
	assert_int_equal(ttm_fence_seqno(args.out_fence), seqno + 1);
	finish(&f, &args);
	expect_bo_words(f.bo, 101);
	fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_fd_emfile_leaves_no_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
