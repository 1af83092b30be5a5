// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: one case. A seed makes a small random workload across
 * the features of `ttmsim run` and the flags to run it with; the case is
 * written in the workload format and run by cmd_run() itself, in a
 * forked child (stress_child.c), with its verifier: what a stress
 * iteration checks is what `ttmsim run --workload FILE FLAGS` checks, and
 * that command replays it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rng.h"
#include "stress.h"

const char *const stress_feature_names[SF_COUNT] = {
	[SF_WOUND_WAIT] = "wound-wait",
	[SF_PRIORITIES] = "priorities",
	[SF_HANG] = "hang",
	[SF_NOP] = "nop",
	[SF_EVICTION] = "eviction",
	[SF_PLACEMENT] = "placement",
	[SF_PINNED] = "pinned",
	[SF_SHRINKER] = "shrinker",
	[SF_FOURCC] = "fourcc",
	[SF_PRIME] = "prime",
	[SF_SYNCOBJ] = "syncobj",
	[SF_RANGES] = "ranges",
};

/* Uniform in [lo, hi]. */
static uint64_t pick(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + cli_splitmix64(s) % (hi - lo + 1);
}

static bool chance(uint64_t *s, unsigned int percent)
{
	return cli_splitmix64(s) % 100 < percent;
}

void stress_case_settle(struct stress_case *c)
{
	struct workload *wl = &c->wl;
	unsigned int f = 0, i;
	size_t j;

	wl->n_threads = wl->n_engines = 0;
	for (j = 0; j < wl->n_jobs; j++) {
		const struct wl_job *job = &wl->jobs[j];

		if (job->thread + 1 > wl->n_threads)
			wl->n_threads = job->thread + 1;
		if (job->engine + 1 > wl->n_engines)
			wl->n_engines = job->engine + 1;
		if (job->op == WL_OP_HANG)
			f |= 1u << SF_HANG;
		if (job->op == WL_OP_NOP)
			f |= 1u << SF_NOP;
		if (job->n_syncs)
			f |= 1u << SF_SYNCOBJ;
	}
	if (c->engines < wl->n_engines)
		c->engines = wl->n_engines ? wl->n_engines : 1;
	for (i = 0; i < wl->n_bos; i++) {
		if (wl->bos[i].placement != WL_PLACE_DEFAULT)
			f |= 1u << SF_PLACEMENT;
		if (wl->bos[i].pinned)
			f |= 1u << SF_PINNED;
		if (wl->bos[i].fourcc)
			f |= 1u << SF_FOURCC;
		if (wl->bos[i].prime)
			f |= 1u << SF_PRIME;
		if ((wl->bos[i].lpfn &&
		     (wl->bos[i].placement == WL_PLACE_VRAM ||
		      wl->bos[i].placement == WL_PLACE_GTT)) ||
		    wl->bos[i].placement == WL_PLACE_VISIBLE)
			f |= 1u << SF_RANGES;
	}
	if (wl->n_syncobjs)
		f |= 1u << SF_SYNCOBJ;
	if (c->wound_wait)
		f |= 1u << SF_WOUND_WAIT;
	if (c->priorities && wl->n_threads)
		f |= 1u << SF_PRIORITIES;
	if (c->vram)
		f |= 1u << SF_EVICTION;
	if (wl->shrink_ms)
		f |= 1u << SF_SHRINKER;
	c->features = f;
}

static void make_bo(uint64_t *s, struct wl_bo *bo, unsigned int i,
		    bool small_vram)
{
	snprintf(bo->name, sizeof(bo->name), "b%u", i);
	if (chance(s, 10)) {
		/* A scanout-like buffer: XRGB8888, 4 bytes a pixel. */
		bo->width = (uint32_t)pick(s, 1, 64);
		bo->height = (uint32_t)pick(s, 1, 64);
		bo->fourcc = 0x34325258; /* 'XR24' */
		bo->size = (uint64_t)bo->width * bo->height * 4;
	} else {
		bo->size = pick(s, 1, small_vram ? 64 : 16) * 4096;
	}
	switch (cli_splitmix64(s) % 8) {
	case 0:
		bo->placement = WL_PLACE_VRAM;
		break;
	case 1:
		bo->placement = WL_PLACE_GTT;
		break;
	case 2:
		bo->placement = WL_PLACE_SYSTEM;
		break;
	default:
		bo->placement = WL_PLACE_DEFAULT;
		break;
	}
	/* Few pins: a pinned buffer in a small VRAM starves the rest. */
	bo->pinned = chance(s, 3);
}

static int make_job(uint64_t *s, struct stress_case *c, struct wl_job *job,
		    unsigned int threads, unsigned int engines)
{
	unsigned int n_bos = c->wl.n_bos, per, k, m;
	unsigned int r = (unsigned int)(cli_splitmix64(s) % 100);

	job->thread = (unsigned int)pick(s, 0, threads - 1);
	job->engine = (unsigned int)pick(s, 0, engines - 1);
	job->duration_us = pick(s, 0, 200);
	job->op = r < 3 ? WL_OP_HANG : r < 13 ? WL_OP_NOP : WL_OP_ADD;
	job->add_value = (uint32_t)pick(s, 1, 0xffff);
	per = (unsigned int)pick(s, 1, n_bos < 6 ? n_bos : 6);
	job->bos = malloc(per * sizeof(*job->bos));
	if (!job->bos)
		return -ENOMEM;
	/* Distinct buffers, in a random order. */
	for (k = 0; k < per; k++) {
		unsigned int b;

		do {
			b = (unsigned int)pick(s, 0, n_bos - 1);
			for (m = 0; m < k && job->bos[m] != b; m++)
				;
		} while (m < k);
		job->bos[k] = b;
	}
	job->n_bos = per;
	return 0;
}

/*
 * PRIME, ranges and syncobjs, on a stream of their own (@seed's buffers
 * and jobs stay those of the features before them). Signals of a
 * timeline go up with the job index and waits name what an earlier job
 * signalled: with each thread in file order, every dependency points
 * forward, so no case deadlocks (workload_sync_deps() would refuse it).
 */
static int add_new_features(uint64_t seed, struct stress_case *c)
{
	uint64_t s = seed ^ UINT64_C(0xd1b54a32d192ed03);
	struct workload *wl = &c->wl;
	bool prime = chance(&s, 40), ranges = chance(&s, 30);
	unsigned int n_sync = chance(&s, 40) ? (unsigned int)pick(&s, 1, 4) : 0;
	uint64_t vram_pages = (c->vram ? c->vram : UINT64_C(256) << 20) / 4096;
	uint64_t last[4] = { 0 };
	unsigned int i;
	size_t j;

	for (i = 0; i < wl->n_bos; i++) {
		struct wl_bo *bo = &wl->bos[i];
		uint64_t pages = (bo->size + 4095) / 4096;

		if (prime && chance(&s, 30))
			bo->prime = true;
		if (!ranges || (bo->placement != WL_PLACE_DEFAULT &&
				bo->placement != WL_PLACE_VRAM))
			continue;
		if (chance(&s, 25)) {
			bo->placement = WL_PLACE_VISIBLE;
		} else if (chance(&s, 33) && 2 * pages <= vram_pages) {
			bo->placement = WL_PLACE_VRAM;
			bo->fpfn = (uint32_t)pick(&s, 0, vram_pages - 2 * pages);
			bo->lpfn = bo->fpfn + (uint32_t)(2 * pages);
		}
	}
	if (!n_sync)
		return 0;
	wl->syncobjs = calloc(n_sync, sizeof(*wl->syncobjs));
	if (!wl->syncobjs)
		return -ENOMEM;
	wl->n_syncobjs = n_sync;
	for (i = 0; i < n_sync; i++) {
		snprintf(wl->syncobjs[i].name, sizeof(wl->syncobjs[i].name),
			 "s%u", i);
		wl->syncobjs[i].timeline = i % 2;
	}
	for (j = 0; j < wl->n_jobs; j++) {
		struct wl_job *job = &wl->jobs[j];
		uint32_t k = (uint32_t)pick(&s, 0, n_sync - 1);

		if (chance(&s, 30) && last[k])
			job->syncs[job->n_syncs++] = (struct wl_sync){
				.syncobj = k,
				.point = k % 2 ? pick(&s, 1, last[k]) : 0,
			};
		k = (uint32_t)pick(&s, 0, n_sync - 1);
		if (chance(&s, 30) && (k % 2 || !last[k])) {
			last[k]++;
			job->syncs[job->n_syncs++] = (struct wl_sync){
				.syncobj = k, .signal = true,
				.point = k % 2 ? last[k] : 0,
			};
		}
	}
	return 0;
}

bool stress_case_feature_off(struct stress_case *c, unsigned int f)
{
	struct workload *wl = &c->wl;
	bool any = false;
	unsigned int i;
	size_t j;

	switch (f) {
	case SF_PRIME:
		for (i = 0; i < wl->n_bos; i++) {
			any |= wl->bos[i].prime;
			wl->bos[i].prime = false;
		}
		break;
	case SF_RANGES:
		for (i = 0; i < wl->n_bos; i++) {
			struct wl_bo *bo = &wl->bos[i];

			if (bo->lpfn || bo->placement == WL_PLACE_VISIBLE) {
				if (bo->placement == WL_PLACE_VISIBLE)
					bo->placement = WL_PLACE_VRAM;
				bo->fpfn = bo->lpfn = 0;
				any = true;
			}
		}
		break;
	case SF_SYNCOBJ:
		any = wl->n_syncobjs != 0;
		for (j = 0; j < wl->n_jobs; j++)
			wl->jobs[j].n_syncs = 0;
		free(wl->syncobjs);
		wl->syncobjs = NULL;
		wl->n_syncobjs = 0;
		break;
	}
	return any;
}

bool stress_case_drop_unused_syncobjs(struct stress_case *c)
{
	struct workload *wl = &c->wl;
	uint32_t *to = calloc(wl->n_syncobjs ? wl->n_syncobjs : 1,
			      sizeof(*to));
	unsigned int i, k, n = 0;
	size_t j;

	if (!to)
		return false;
	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++)
			to[wl->jobs[j].syncs[k].syncobj] = 1;
	for (i = 0; i < wl->n_syncobjs; i++)
		if (to[i]) {
			wl->syncobjs[n] = wl->syncobjs[i];
			to[i] = n++;
		}
	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++)
			wl->jobs[j].syncs[k].syncobj =
				to[wl->jobs[j].syncs[k].syncobj];
	free(to);
	if (n == wl->n_syncobjs)
		return false;
	wl->n_syncobjs = n;
	return true;
}

int stress_case_generate(uint64_t seed, struct stress_case *c)
{
	uint64_t s = seed;
	unsigned int threads, engines, i;
	size_t j, n_jobs;
	struct workload *wl = &c->wl;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	threads = (unsigned int)pick(&s, 1, 8);
	engines = (unsigned int)pick(&s, 1, 3);
	c->engines = engines;
	c->wound_wait = chance(&s, 50);
	c->priorities = chance(&s, 40);
	if (chance(&s, 40))
		c->vram = pick(&s, 1, 16) * 64 * 1024;
	if (chance(&s, 20))
		wl->shrink_ms = (unsigned int)pick(&s, 1, 20);
	c->hang_timeout_ms = (unsigned int)pick(&s, 5, 30);
	wl->n_bos = (unsigned int)pick(&s, 1, 48);
	wl->bos = calloc(wl->n_bos, sizeof(*wl->bos));
	n_jobs = (size_t)pick(&s, 1, 60) * threads;
	wl->jobs = calloc(n_jobs, sizeof(*wl->jobs));
	if (!wl->bos || !wl->jobs) {
		stress_case_free(c);
		return -ENOMEM;
	}
	for (i = 0; i < wl->n_bos; i++)
		make_bo(&s, &wl->bos[i], i, c->vram != 0);
	for (j = 0; j < n_jobs; j++) {
		if (make_job(&s, c, &wl->jobs[j], threads, engines)) {
			stress_case_free(c);
			return -ENOMEM;
		}
		wl->n_jobs = j + 1;
	}
	if (add_new_features(seed, c)) {
		stress_case_free(c);
		return -ENOMEM;
	}
	wl->has_seed = false;
	stress_case_settle(c);
	return 0;
}

int stress_case_copy(const struct stress_case *from, struct stress_case *to)
{
	const struct workload *a = &from->wl;
	struct workload *b = &to->wl;
	size_t j;

	*to = *from;
	memset(b, 0, sizeof(*b));
	b->shrink_ms = a->shrink_ms;
	b->bos = malloc((a->n_bos ? a->n_bos : 1) * sizeof(*b->bos));
	b->jobs = calloc(a->n_jobs ? a->n_jobs : 1, sizeof(*b->jobs));
	b->syncobjs = malloc((a->n_syncobjs ? a->n_syncobjs : 1) *
			     sizeof(*b->syncobjs));
	if (!b->bos || !b->jobs || !b->syncobjs)
		goto nomem;
	if (a->n_syncobjs) /* NULL without syncobjs: memcpy() wants none */
		memcpy(b->syncobjs, a->syncobjs,
		       a->n_syncobjs * sizeof(*b->syncobjs));
	b->n_syncobjs = a->n_syncobjs;
	memcpy(b->bos, a->bos, a->n_bos * sizeof(*b->bos));
	b->n_bos = a->n_bos;
	for (j = 0; j < a->n_jobs; j++) {
		b->jobs[j] = a->jobs[j];
		b->jobs[j].bos = malloc(a->jobs[j].n_bos * sizeof(unsigned int));
		if (!b->jobs[j].bos)
			goto nomem;
		memcpy(b->jobs[j].bos, a->jobs[j].bos,
		       a->jobs[j].n_bos * sizeof(unsigned int));
		b->n_jobs = j + 1;
	}
	b->n_threads = a->n_threads;
	b->n_engines = a->n_engines;
	return 0;
nomem:
	stress_case_free(to);
	return -ENOMEM;
}

void stress_case_free(struct stress_case *c)
{
	workload_free(&c->wl);
}

/*
 * --priorities from the thread count: one kernel client if there are 4
 * threads or more, a quarter high, a quarter low, the rest normal.
 */
static void priorities_arg(unsigned int threads, char *out, size_t len)
{
	unsigned int kernel = threads >= 4, high = threads / 4,
		     low = threads / 4, normal = threads - kernel - high - low;
	size_t n = 0;

	out[0] = '\0';
	if (kernel)
		n += (size_t)snprintf(out + n, len - n, "kernel=%u,", kernel);
	if (high)
		n += (size_t)snprintf(out + n, len - n, "high=%u,", high);
	if (normal)
		n += (size_t)snprintf(out + n, len - n, "normal=%u,", normal);
	if (low)
		n += (size_t)snprintf(out + n, len - n, "low=%u,", low);
	if (n)
		out[n - 1] = '\0';
}

int stress_case_flags(const struct stress_case *c, char **argv,
		      char buf[512])
{
	size_t used = 0;
	int n = 0;

#define ADD(...) do { \
		argv[n++] = buf + used; \
		used += (size_t)snprintf(buf + used, 512 - used, \
					 __VA_ARGS__) + 1; \
	} while (0)
	ADD("--engines");
	ADD("%u", c->engines);
	ADD("--class");
	ADD("%s", c->wound_wait ? "wound-wait" : "wait-die");
	if (c->priorities && c->wl.n_threads) {
		char p[128];

		priorities_arg(c->wl.n_threads, p, sizeof(p));
		ADD("--priorities");
		ADD("%s", p);
	}
	if (c->vram) {
		ADD("--vram");
		ADD("%" PRIu64 "K", c->vram / 1024);
	}
	if (c->hang_timeout_ms) {
		ADD("--hang-timeout-ms");
		ADD("%u", c->hang_timeout_ms);
	}
#undef ADD
	return n;
}
