// SPDX-License-Identifier: MIT
/*
 * ttmsim run: what a run is made of, and letting go of it. One client
 * creates every buffer; each submitting thread gets a client of its own
 * (run_submit.c gives it handles as its jobs need them). The GPU's retire
 * hook records what happened to each job (by its tag, the job's index + 1)
 * for run_verify.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/gpu.h"
#include "ttmsim/syncobj.h"
#include "cli.h"
#include "clock.h"
#include "run.h"

static const struct ttm_placement place_vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement place_vram = TTM_PLACEMENT_VRAM_INIT;
static const struct ttm_placement place_gtt = TTM_PLACEMENT_GTT_INIT;
static const struct ttm_placement place_system = TTM_PLACEMENT_SYSTEM_INIT;

void run_job_placement(const struct wl_bo *b, struct ttm_placement *place)
{
	switch (b->placement) {
	case WL_PLACE_VRAM:
	case WL_PLACE_VISIBLE:
		*place = place_vram;
		break;
	case WL_PLACE_GTT:
	case WL_PLACE_SYSTEM:
		*place = place_gtt;
		break;
	default:
		*place = place_vram_gtt;
		return;
	}
	if (b->placement == WL_PLACE_VISIBLE)
		place->places[0].flags = TTM_PLACE_CPU_VISIBLE;
	if (b->placement != WL_PLACE_SYSTEM) {
		place->places[0].fpfn = b->fpfn;
		place->places[0].lpfn = b->lpfn;
	}
}

static void on_retire(const struct ttm_gpu_job_info *info, void *data)
{
	struct run *run = data;

	if (info->tag && info->tag <= run->wl.n_jobs) {
		struct run_job_result *r = &run->results[info->tag - 1];

		r->status = info->status;
		r->start_us = info->start_us;
		r->end_us = info->end_us;
		/* Published by the release below, for run_latency_gather(). */
		r->latency_us = info->end_us > r->submit_us ?
				info->end_us - r->submit_us : 0;
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
	if (run->wl.shrink_ms) {
		dopts.funcs = &run_shrink_funcs;
		dopts.funcs_data = run;
	}
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
	const struct ttm_placement *place = &run->places[i];
	struct ttm_placement first = { 1, { place->places[0] } };
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
	/* PRIME: the threads import it from this fd (run_submit.c). */
	if (ret == 0 && b->prime)
		ret = ttm_client_export_fd(run->owner, handle,
					   &run->prime_fds[i]);
	return ret;
}

/*
 * A range must lie in its domain: the workload cannot know the sizes
 * (--vram, --gtt). CLI_EXIT_USAGE after a message naming the line.
 */
static int check_range(struct run *run, unsigned int i)
{
	const struct wl_bo *b = &run->wl.bos[i];
	bool vram = b->placement == WL_PLACE_VRAM;
	uint64_t size = vram ? run->cfg->vram : run->cfg->gtt;
	uint64_t pages;

	if (!b->lpfn)
		return 0;
	if (!size)
		size = vram ? TTM_DEFAULT_VRAM_SIZE : TTM_DEFAULT_GTT_SIZE;
	pages = size / ttm_device_page_size(run->dev);
	if (b->lpfn <= pages)
		return 0;
	cli_error("%s:%u: buffer '%s': range %s@%u-%u ends beyond the %s's "
		  "%llu pages (%s)", run->wl.source ? run->wl.source :
		  "<generated>", b->line, b->name, vram ? "vram" : "gtt",
		  b->fpfn, b->lpfn, vram ? "VRAM" : "GTT",
		  (unsigned long long)pages, vram ? "--vram" : "--gtt");
	return CLI_EXIT_USAGE;
}

/* The syncobjs, made once and shared by every thread's client. */
static int create_syncobjs(struct run *run)
{
	const struct workload *wl = &run->wl;
	unsigned int k;
	int ret;

	ret = workload_sync_deps(wl, &run->sync_deps);
	if (ret == -ENOMEM) {
		cli_error("out of memory setting up the syncobjs");
		return CLI_EXIT_FAILURE;
	}
	if (ret)
		return ret;
	run->syncobjs = calloc(wl->n_syncobjs ? wl->n_syncobjs : 1,
			       sizeof(*run->syncobjs));
	if (!run->syncobjs) {
		cli_error("out of memory setting up %u syncobjs",
			  wl->n_syncobjs);
		return CLI_EXIT_FAILURE;
	}
	for (k = 0; k < wl->n_syncobjs; k++) {
		ret = ttm_syncobj_create(0, NULL, &run->syncobjs[k]);
		if (ret) {
			cli_error("syncobj '%s': cannot create it: %s",
				  wl->syncobjs[k].name, strerror(-ret));
			return CLI_EXIT_FAILURE;
		}
	}
	return 0;
}

static int create_threads(struct run *run)
{
	const struct workload *wl = &run->wl;
	unsigned int n = wl->n_threads, t;
	size_t j, *fill;
	int ret;

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
		th->priority = run_priority_of(&run->cfg->priorities, t);
		th->jobs = malloc((th->n_jobs ? th->n_jobs : 1) *
				  sizeof(*th->jobs));
		th->handles = calloc(wl->n_bos ? wl->n_bos : 1,
				     sizeof(*th->handles));
		th->sync_handles = calloc(wl->n_syncobjs ? wl->n_syncobjs : 1,
					  sizeof(*th->sync_handles));
		if (!th->jobs || !th->handles || !th->sync_handles ||
		    ttm_client_open(run->dev, &th->client))
			goto nomem;
		for (unsigned int k = 0; k < wl->n_syncobjs; k++)
			if (ttm_client_syncobj_add(th->client,
						   run->syncobjs[k],
						   &th->sync_handles[k]))
				goto nomem;
		/* Before its first job: its entities are made with it. */
		ret = ttm_client_set_priority(th->client, th->priority);
		if (ret) {
			free(fill);
			cli_error("thread %u: cannot set its client's priority "
				  "%s: %s", t, run_priority_name(th->priority),
				  strerror(-ret));
			return CLI_EXIT_FAILURE;
		}
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
	if (run->cfg->trace_path && run_trace_init(run)) {
		cli_error("%s: cannot set up the trace: out of memory",
			  run->cfg->trace_path);
		return CLI_EXIT_FAILURE;
	}
	run->bos = calloc(run->wl.n_bos ? run->wl.n_bos : 1,
			  sizeof(*run->bos));
	run->places = calloc(run->wl.n_bos ? run->wl.n_bos : 1,
			     sizeof(*run->places));
	run->prime_fds = malloc((run->wl.n_bos ? run->wl.n_bos : 1) *
				sizeof(*run->prime_fds));
	/* -1 before any return: the teardown closes what is >= 0. */
	for (i = 0; run->prime_fds && i < run->wl.n_bos; i++)
		run->prime_fds[i] = -1;
	if (!run->bos || !run->places || !run->prime_fds) {
		cli_error("out of memory setting up %u buffers",
			  run->wl.n_bos);
		return CLI_EXIT_FAILURE;
	}
	for (i = 0; i < run->wl.n_bos; i++) {
		run_job_placement(&run->wl.bos[i], &run->places[i]);
		/* TTMSIM_TEST_FAULT=no-range: the verifier must catch it. */
		if (run->fault == RUN_FAULT_NO_RANGE)
			run->places[i].places[0].fpfn =
				run->places[i].places[0].lpfn = 0;
	}
	for (i = 0; i < run->wl.n_bos; i++) {
		ret = check_range(run, i);
		if (ret)
			return ret;
	}
	ret = create_syncobjs(run);
	if (ret)
		return ret;
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

void run_teardown(struct run *run)
{
	unsigned int t;

	run_shrink_stop(run);  /* normally stopped by run_submit_all() */
	if (run->threads) {
		for (t = 0; t < run->wl.n_threads; t++) {
			ttm_client_close(run->threads[t].client);
			free(run->threads[t].handles);
			free(run->threads[t].sync_handles);
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
				/* A refused unpin (checker) must not loop. */
				while (ttm_bo_pin_count(bo) &&
				       ttm_bo_unpin(bo) == 0)
					;
				ttm_bo_unreserve(bo);
			}
		}
	}
	/* Before the owner, the device's last client (execbuf.h). */
	for (unsigned int i = 0; run->prime_fds && i < run->wl.n_bos; i++)
		if (run->prime_fds[i] >= 0)
			close(run->prime_fds[i]);
	ttm_client_close(run->owner);
	for (unsigned int k = 0; run->syncobjs && k < run->wl.n_syncobjs; k++)
		ttm_syncobj_put(run->syncobjs[k]);
	/*
	 * A buffer still alive keeps the device, and the device its GPU:
	 * leak both rather than free what that buffer would touch.
	 */
	if (ttm_device_destroy(run->dev))
		cli_error("teardown: buffers of the device are still alive: "
			  "device and GPU left allocated");
	else
		ttm_gpu_destroy(run->gpu);
	run_trace_free(run);
	free(run->threads);
	free(run->results);
	free(run->bos);
	free(run->places);
	free(run->prime_fds);
	free(run->syncobjs);
	free(run->sync_deps);
}
