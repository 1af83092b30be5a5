// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the run itself. One client creates every buffer; each
 * submitting thread has a client of its own, which gets a handle for a
 * buffer the first time one of its jobs lists it (as a DRM client would
 * import it), and submits its jobs in file order.
 *
 * The GPU's retire hook records what happened to each job (by its tag,
 * the job's index + 1), so that the end can check that every accepted job
 * retired exactly once and that every buffer holds exactly the adds of the
 * jobs that completed on it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/exec.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

#define READ_CHUNK (UINT64_C(1) << 20)

static const struct ttm_placement place_vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement place_vram = TTM_PLACEMENT_VRAM_INIT;
static const struct ttm_placement place_gtt = TTM_PLACEMENT_GTT_INIT;
static const struct ttm_placement place_system = TTM_PLACEMENT_SYSTEM_INIT;

/* Where jobs need a buffer of @p. SYSTEM buffers are used from GTT. */
static const struct ttm_placement *job_placement(enum wl_placement p)
{
	switch (p) {
	case WL_PLACE_VRAM:
		return &place_vram;
	case WL_PLACE_GTT:
	case WL_PLACE_SYSTEM:
		return &place_gtt;
	default:
		return &place_vram_gtt;
	}
}

static void on_retire(const struct ttm_gpu_job_info *info, void *data)
{
	struct run *run = data;

	if (info->tag && info->tag <= run->wl.n_jobs) {
		struct run_job_result *r = &run->results[info->tag - 1];

		r->status = info->status;
		__atomic_add_fetch(&r->retired, 1, __ATOMIC_RELEASE);
	}
	if (run->trace)
		run_trace_gpu_job(run, info);
	__atomic_add_fetch(&run->progress, 1, __ATOMIC_RELAXED);
}

static int create_gpu_and_device(struct run *run)
{
	const struct run_config *cfg = run->cfg;
	struct ttm_gpu_options gopts = {
		.hang_timeout_ms = cfg->hang_timeout_ms,
		.on_retire = on_retire,
		.retire_data = run,
	};
	struct ttm_device_options dopts = {
		.vram_size = cfg->vram,
		.gtt_size = cfg->gtt,
		.wound_wait = cfg->wound_wait,
		/*
		 * Moves get an engine of their own, after the jobs', unless
		 * the jobs use every engine the GPU can have.
		 */
		.copy_engine = run->engines < WL_MAX_ENGINES ? run->engines :
							       run->engines - 1,
	};
	int ret;

	ret = ttm_gpu_create(dopts.copy_engine + 1, &gopts, &run->gpu);
	if (ret) {
		cli_error("cannot start the GPU: %s", strerror(-ret));
		return CLI_EXIT_FAILURE;
	}
	run->gpu_offset_ns = cli_now_ns() - ttm_gpu_now_us(run->gpu) * 1000;
	dopts.gpu = run->gpu;
	ret = ttm_device_create(&dopts, &run->dev);
	if (ret == 0)
		ret = ttm_client_open(run->dev, &run->owner);
	if (ret) {
		cli_error("cannot create the device: %s", strerror(-ret));
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

static int create_one(struct run *run, const struct wl_bo *b,
		      const struct ttm_placement *place, uint32_t *handle)
{
	if (b->fourcc)
		return ttm_client_bo_create_fourcc(run->owner, b->width,
						   b->height, b->fourcc, place,
						   0, handle);
	return ttm_client_bo_create(run->owner, b->size, place, 0, handle);
}

/*
 * Create buffer @i where the workload says, pinned in its first domain
 * if asked. One that cannot get in there now is created in SYSTEM
 * unpinned: the jobs that use it then get -ENOSPC from the submitter if
 * it can never fit, which the run counts, as a real driver would.
 */
static int create_bo(struct run *run, unsigned int i)
{
	const struct wl_bo *b = &run->wl.bos[i];
	const struct ttm_placement *place = job_placement(b->placement);
	struct ttm_placement first = { 1, { place->domains[0] } };
	struct ttm_bo *bo;
	bool pinned = b->pinned;
	uint32_t handle;
	int ret;

	if (b->placement == WL_PLACE_SYSTEM)
		place = &place_system;
	ret = create_one(run, b, pinned ? &first : place, &handle);
	if (ret == -ENOSPC) {
		pinned = false;
		ret = create_one(run, b, &place_system, &handle);
	}
	if (ret)
		return ret;
	bo = ttm_client_lookup(run->owner, handle);
	/* The owner's handle keeps it alive until the teardown. */
	ttm_bo_put(bo);
	run->bos[i] = bo;
	if (pinned) {
		ret = ttm_bo_reserve(bo, false, false, NULL);
		if (ret == 0) {
			ret = ttm_bo_pin(bo);
			ttm_bo_unreserve(bo);
		}
	}
	return ret;
}

static int create_threads(struct run *run)
{
	const struct workload *wl = &run->wl;
	unsigned int n = wl->n_threads, t;
	size_t j, *fill;

	run->threads = calloc(n ? n : 1, sizeof(*run->threads));
	run->results = calloc(wl->n_jobs ? wl->n_jobs : 1,
			      sizeof(*run->results));
	fill = calloc(n ? n : 1, sizeof(*fill));
	if (!run->threads || !run->results || !fill)
		goto nomem;
	for (j = 0; j < wl->n_jobs; j++)
		run->threads[wl->jobs[j].thread].n_jobs++;
	for (t = 0; t < n; t++) {
		struct run_thread *th = &run->threads[t];

		th->run = run;
		th->index = t;
		th->jobs = malloc((th->n_jobs ? th->n_jobs : 1) *
				  sizeof(*th->jobs));
		th->handles = calloc(wl->n_bos ? wl->n_bos : 1,
				     sizeof(*th->handles));
		if (!th->jobs || !th->handles ||
		    ttm_client_open(run->dev, &th->client))
			goto nomem;
		if (run->trace)
			ttm_client_set_event_sink(th->client, run_trace_phase,
						  th);
	}
	for (j = 0; j < wl->n_jobs; j++) {
		t = wl->jobs[j].thread;
		run->threads[t].jobs[fill[t]++] = j;
	}
	free(fill);
	return 0;
nomem:
	free(fill);
	cli_error("out of memory setting up %u threads", n);
	return CLI_EXIT_FAILURE;
}

int run_setup(struct run *run)
{
	unsigned int i;
	int ret;

	ret = create_gpu_and_device(run);
	if (ret)
		return ret;
	if (run->cfg->trace_path && run_trace_init(run))
		return CLI_EXIT_FAILURE;
	run->bos = calloc(run->wl.n_bos ? run->wl.n_bos : 1,
			  sizeof(*run->bos));
	if (!run->bos)
		return CLI_EXIT_FAILURE;
	for (i = 0; i < run->wl.n_bos; i++) {
		ret = create_bo(run, i);
		if (ret) {
			cli_error("buffer '%s': cannot create it: %s",
				  run->wl.bos[i].name, strerror(-ret));
			return CLI_EXIT_FAILURE;
		}
	}
	return create_threads(run);
}

/* @th's handle for buffer @i, made on first use. 0 if it never fit. */
static uint32_t handle_of(struct run_thread *th, unsigned int i)
{
	struct run *run = th->run;

	if (!th->handles[i] && run->bos[i] &&
	    ttm_client_bo_add(th->client, run->bos[i], &th->handles[i]))
		th->handles[i] = 0;
	return th->handles[i];
}

static bool should_stop(struct run *run)
{
	if (__atomic_load_n(&run->stop, __ATOMIC_RELAXED))
		return true;
	if (run->cfg->seconds > 0 &&
	    cli_now_ns() - run->start_ns >=
		    (uint64_t)(run->cfg->seconds * 1e9)) {
		__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/*
 * Wait until at most @max of @th's jobs are in flight. -EINTR if a
 * signal interrupted the wait (the run stops).
 */
static int throttle(struct run_thread *th, unsigned int max)
{
	while (th->ring_count > max) {
		struct ttm_fence *oldest = th->ring[th->ring_head];
		int ret = ttm_fence_wait(oldest, true, -1);

		if (ret)
			return ret;
		ttm_fence_put(oldest);
		th->ring_head = (th->ring_head + 1) % RUN_MAX_IN_FLIGHT;
		th->ring_count--;
	}
	return 0;
}

/* Submit job @j of the workload through @th's client. */
static void submit_job(struct run_thread *th, size_t j,
		       struct ttm_execbuf_bo *list)
{
	struct run *run = th->run;
	const struct wl_job *job = &run->wl.jobs[j];
	struct run_job_result *r = &run->results[j];
	struct ttm_execbuf_args args = {
		.engine = job->engine,
		.bos = list,
		.n_bos = job->n_bos,
		.op = job->op == WL_OP_ADD ? TTM_GPU_OP_ADD : TTM_GPU_OP_NOP,
		.add_value = job->add_value,
		.duration_us = job->duration_us,
		.flags = TTM_EXECBUF_INTERRUPTIBLE |
			 (job->op == WL_OP_HANG ? TTM_EXECBUF_HANG : 0) |
			 (run->cfg->allow_duplicates ?
			  TTM_EXECBUF_ALLOW_DUPLICATES : 0),
		.tag = RUN_JOB_TAG(j),
	};
	unsigned int k;
	int ret;

	for (k = 0; k < job->n_bos; k++) {
		unsigned int b = job->bos[k];

		list[k] = (struct ttm_execbuf_bo){
			.handle = handle_of(th, b),
			.flags = TTM_EXECBUF_BO_WRITE,
			.placement = job_placement(run->wl.bos[b].placement),
		};
	}
	/*
	 * Busy, then look at the stop flag again: a signal that set it
	 * before saw this thread idle and did not interrupt it.
	 */
	__atomic_store_n(&th->busy, true, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&run->stop, __ATOMIC_SEQ_CST) ||
	    throttle(th, RUN_MAX_IN_FLIGHT - 1)) {
		__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
		return; /* stopped: not submitted */
	}
	ret = ttm_execbuf_submit(th->client, &args);
	__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
	r->state = ret ? RUN_JOB_REJECTED : RUN_JOB_ACCEPTED;
	r->err = ret;
	if (args.out_fence) {
		th->ring[(th->ring_head + th->ring_count) % RUN_MAX_IN_FLIGHT] =
			args.out_fence;
		th->ring_count++;
	}
	__atomic_add_fetch(&run->submitted_jobs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&run->progress, 1, __ATOMIC_RELAXED);
}

static void *submitter_main(void *arg)
{
	struct run_thread *th = arg;
	struct run *run = th->run;
	unsigned int max = 1;
	struct ttm_execbuf_bo *list;
	size_t k;

	__atomic_store_n(&th->tid, (pid_t)gettid(), __ATOMIC_RELAXED);
	for (k = 0; k < th->n_jobs; k++)
		if (run->wl.jobs[th->jobs[k]].n_bos > max)
			max = run->wl.jobs[th->jobs[k]].n_bos;
	list = malloc(max * sizeof(*list));
	for (k = 0; list && k < th->n_jobs && !should_stop(run); k++) {
		__atomic_store_n(&th->next, k, __ATOMIC_RELAXED);
		submit_job(th, th->jobs[k], list);
	}
	__atomic_store_n(&th->next, th->n_jobs, __ATOMIC_RELAXED);
	free(list);
	/* The GPU signals them all: no need to wait, only to let go. */
	while (th->ring_count) {
		ttm_fence_put(th->ring[th->ring_head]);
		th->ring_head = (th->ring_head + 1) % RUN_MAX_IN_FLIGHT;
		th->ring_count--;
	}
	return NULL;
}

int run_submit_all(struct run *run)
{
	unsigned int t, started = 0;
	int ret = 0;

	/* Published last: the watcher starts looking at the run then. */
	__atomic_store_n(&run->start_ns, cli_now_ns(), __ATOMIC_RELEASE);
	for (t = 0; t < run->wl.n_threads; t++) {
		ret = pthread_create(&run->threads[t].thread, NULL,
				     submitter_main, &run->threads[t]);
		if (ret) {
			cli_error("cannot start thread %u: %s", t,
				  strerror(ret));
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
			ret = CLI_EXIT_FAILURE;
			break;
		}
		started++;
	}
	for (t = 0; t < started; t++)
		pthread_join(run->threads[t].thread, NULL);
	/* Jobs in flight finish; hung ones fail by the GPU's watchdog. */
	ttm_execbuf_wait_idle(run->dev);
	run->end_ns = cli_now_ns();
	return ret;
}

/* What every word of buffer @i must hold: the adds that completed. */
static uint32_t *expected_words(struct run *run)
{
	const struct workload *wl = &run->wl;
	uint32_t *want = calloc(wl->n_bos ? wl->n_bos : 1, sizeof(*want));
	bool *seen = calloc(wl->n_bos ? wl->n_bos : 1, sizeof(*seen));
	size_t j;
	unsigned int k;

	if (!want || !seen) {
		free(seen);
		free(want);
		return NULL;
	}
	for (j = 0; j < wl->n_jobs; j++) {
		const struct wl_job *job = &wl->jobs[j];

		if (run->results[j].state != RUN_JOB_ACCEPTED ||
		    run->results[j].status != 0 || job->op != WL_OP_ADD)
			continue;
		/* A buffer listed twice (allowed) is added to once. */
		for (k = 0; k < job->n_bos; k++)
			if (!seen[job->bos[k]]) {
				seen[job->bos[k]] = true;
				want[job->bos[k]] += job->add_value;
			}
		for (k = 0; k < job->n_bos; k++)
			seen[job->bos[k]] = false;
	}
	free(seen);
	return want;
}

/* Whether every word of @bo equals @want; a message if not. */
static bool check_contents(struct ttm_bo *bo, const char *name,
			   uint32_t want)
{
	uint64_t size = ttm_bo_size(bo), off, i, n;
	uint32_t *buf = malloc(READ_CHUNK);
	bool ok = buf && ttm_bo_reserve(bo, false, false, NULL) == 0;
	bool reserved = ok;

	for (off = 0; ok && off < size; off += n * 4) {
		n = (size - off < READ_CHUNK ? size - off : READ_CHUNK) / 4;
		if (ttm_bo_read(bo, off, buf, n * 4)) {
			ok = false;
			break;
		}
		for (i = 0; i < n && ok; i++)
			if (buf[i] != want) {
				fprintf(stderr, "ttmsim: invariant: buffer "
					"'%s' word %" PRIu64 " is %" PRIu32
					", the completed adds make %" PRIu32
					"\n", name, off / 4 + i, buf[i], want);
				ok = false;
			}
	}
	if (reserved)
		ttm_bo_unreserve(bo);
	free(buf);
	return ok;
}

bool run_verify(struct run *run)
{
	const struct workload *wl = &run->wl;
	struct ttm_execbuf_stats st;
	char msg[256];
	uint32_t *want;
	bool ok = true;
	size_t j;
	unsigned int i;

	if (ttm_device_check(run->dev, msg, sizeof(msg))) {
		fprintf(stderr, "ttmsim: invariant: accounting: %s\n", msg);
		ok = false;
	}
	ttm_execbuf_get_stats(run->dev, &st);
	if (st.submitted != st.rejected + st.completed + st.failed ||
	    st.in_flight) {
		fprintf(stderr, "ttmsim: invariant: %" PRIu64 " submitted != "
			"%" PRIu64 " rejected + %" PRIu64 " completed + %"
			PRIu64 " failed\n", st.submitted, st.rejected,
			st.completed, st.failed);
		ok = false;
	}
	for (j = 0; j < wl->n_jobs; j++) {
		uint32_t runs = __atomic_load_n(&run->results[j].retired,
						__ATOMIC_ACQUIRE);
		uint32_t once = run->results[j].state == RUN_JOB_ACCEPTED;

		if (runs != once) {
			fprintf(stderr, "ttmsim: invariant: the job of line "
				"%u retired %u times, not %u\n",
				wl->jobs[j].line, runs, once);
			ok = false;
		}
	}
	want = expected_words(run);
	if (!want)
		return false;
	for (i = 0; i < wl->n_bos; i++)
		if (run->bos[i] &&
		    !check_contents(run->bos[i], wl->bos[i].name, want[i]))
			ok = false;
	free(want);
	return ok;
}

void run_teardown(struct run *run)
{
	unsigned int t;

	if (run->threads) {
		for (t = 0; t < run->wl.n_threads; t++) {
			ttm_client_close(run->threads[t].client);
			free(run->threads[t].handles);
			free(run->threads[t].jobs);
		}
	}
	if (run->dev) {
		ttm_execbuf_wait_idle(run->dev);
		/* Pinned buffers are unpinned before their last put. */
		for (unsigned int i = 0; run->bos && i < run->wl.n_bos; i++) {
			struct ttm_bo *bo = run->bos[i];

			if (bo && ttm_bo_pin_count(bo) &&
			    ttm_bo_reserve(bo, false, false, NULL) == 0) {
				while (ttm_bo_pin_count(bo))
					ttm_bo_unpin(bo);
				ttm_bo_unreserve(bo);
			}
		}
	}
	ttm_client_close(run->owner);
	ttm_device_destroy(run->dev);
	ttm_gpu_destroy(run->gpu);
	run_trace_free(run);
	free(run->threads);
	free(run->results);
	free(run->bos);
}
