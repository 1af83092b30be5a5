// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: the shrinker of a failing case, as a property-based
 * test's. It tries smaller variants, one edit at a time, each run as the
 * failing case was (the same --check-every and watchdog), and keeps each
 * that still fails the same way (the same failure signature: exit status
 * or signal, sanitizer report, class of the first error line; see
 * stress_outcome.c), so that it cannot drift to another bug, until no
 * edit helps or the time is up:
 *  - drop a half, then a quarter, ... of the jobs, then single jobs;
 *  - fold the last thread into the one before (fewer threads);
 *  - drop a buffer from a job that lists more than one;
 *  - drop a buffer (from every job; jobs left with none go);
 *  - PRIME, syncobjs and ranges off (shrink_new_features()), and the
 *    syncobj lines no word names any more;
 *  - features off: the shrink line, a small VRAM, wound-wait,
 *    priorities, --hang-timeout-ms, pins, placements, fourcc sizes, hang and nop jobs (to
 *    adds), engines (to 0), durations (to 0), sizes (to 4 bytes).
 * Each pass goes over all of them; a pass that keeps nothing ends it,
 * and only then is the case called minimal (no step applies any more).
 * A step cut short by the time limit, a signal or a failed allocation
 * leaves it not minimal, and says which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "stress.h"

const char *const stress_shrink_end_names[STRESS_SHRINK_COUNT] = {
	[STRESS_SHRINK_MINIMAL] = "minimal",
	[STRESS_SHRINK_TIME] = "shrunk (time limit reached, not minimal)",
	[STRESS_SHRINK_INTERRUPTED] = "shrunk (interrupted, not minimal)",
	[STRESS_SHRINK_ERROR] = "shrunk (stopped by an error, not minimal)",
};

struct shrinker {
	const struct stress_outcome *want;
	struct stress_exec ex;       /* the failing run's, the deadline ours */
	const char *path;
	unsigned int tried;
	enum stress_shrink_end cut;  /* MINIMAL: nothing cut a step short */
	struct stress_outcome got;   /* the last candidate's */
};

/* Whether a step must stop now (which is then noted): time, a signal. */
static bool out_of_time(struct shrinker *sh)
{
	if (sh->cut != STRESS_SHRINK_MINIMAL)
		return true;
	if (stress_interrupted())
		sh->cut = STRESS_SHRINK_INTERRUPTED;
	else if (cli_now_ns() >= sh->ex.deadline_ns)
		sh->cut = STRESS_SHRINK_TIME;
	return sh->cut != STRESS_SHRINK_MINIMAL;
}

/* A candidate could not be made: the shrink is not complete. */
static bool no_copy(struct shrinker *sh, const struct stress_case *c,
		    struct stress_case *cand)
{
	if (!stress_case_copy(c, cand))
		return false;
	sh->cut = STRESS_SHRINK_ERROR;
	return true;
}

/* Whether @cand still fails the same way; if so it replaces *@c. */
static bool keep_if_fails(struct shrinker *sh, struct stress_case *c,
			  struct stress_case *cand)
{
	/*
	 * A dropped signaller or merged threads: the waits that cannot hold
	 * go, else the candidate fails to load (another signature). Not in
	 * stress_case_settle(): a generated case must not be mended.
	 */
	workload_sync_prune(&cand->wl);
	/*
	 * Syncobj lines no word names any more change nothing a run does:
	 * drop them from every candidate, rather than only in their own step,
	 * whose run may not fail again when the failure is a timing one (a
	 * waiter that starts early): a "minimal" case then kept them.
	 */
	stress_case_drop_unused_syncobjs(cand);
	stress_case_settle(cand);
	sh->tried++;
	if (stress_case_run(cand, sh->path, &sh->ex, &sh->got))
		sh->cut = STRESS_SHRINK_ERROR;
	/* Cut short (the deadline, a signal): it says nothing. */
	if (sh->got.timed_out || sh->got.status == 130)
		out_of_time(sh);
	if (stress_outcome_same(&sh->got, sh->want)) {
		stress_case_free(c);
		*c = *cand;
		return true;
	}
	stress_case_free(cand);
	return false;
}

/* Remove jobs [@from, @from + @n) of @c. */
static void drop_jobs(struct stress_case *c, size_t from, size_t n)
{
	struct workload *wl = &c->wl;
	size_t j;

	for (j = from; j < from + n; j++)
		free(wl->jobs[j].bos);
	memmove(wl->jobs + from, wl->jobs + from + n,
		(wl->n_jobs - from - n) * sizeof(*wl->jobs));
	wl->n_jobs -= n;
}

static bool shrink_jobs(struct shrinker *sh, struct stress_case *c)
{
	bool any = false;
	size_t chunk, from;
	struct stress_case cand;

	for (chunk = c->wl.n_jobs / 2; chunk >= 1; chunk /= 2) {
		for (from = 0; from + chunk <= c->wl.n_jobs &&
		     c->wl.n_jobs > 1;) {
			if (out_of_time(sh) || no_copy(sh, c, &cand))
				return any;
			drop_jobs(&cand, from, chunk);
			if (keep_if_fails(sh, c, &cand))
				any = true;
			else
				from += chunk;
		}
	}
	return any;
}

/* Jobs of the last thread go to the one before it. */
static bool shrink_threads(struct shrinker *sh, struct stress_case *c)
{
	bool any = false;
	struct stress_case cand;
	size_t j;

	while (c->wl.n_threads > 1 && !out_of_time(sh)) {
		unsigned int last = c->wl.n_threads - 1;

		if (no_copy(sh, c, &cand))
			break;
		for (j = 0; j < cand.wl.n_jobs; j++)
			if (cand.wl.jobs[j].thread == last)
				cand.wl.jobs[j].thread = last - 1;
		if (!keep_if_fails(sh, c, &cand))
			break;
		any = true;
	}
	return any;
}

static bool shrink_job_bos(struct shrinker *sh, struct stress_case *c)
{
	bool any = false;
	struct stress_case cand;
	size_t j;
	unsigned int k;

	for (j = 0; j < c->wl.n_jobs; j++)
		for (k = 0; k < c->wl.jobs[j].n_bos &&
		     c->wl.jobs[j].n_bos > 1;) {
			struct wl_job *job;

			if (out_of_time(sh) || no_copy(sh, c, &cand))
				return any;
			job = &cand.wl.jobs[j];
			memmove(job->bos + k, job->bos + k + 1,
				(job->n_bos - k - 1) * sizeof(*job->bos));
			job->n_bos--;
			if (keep_if_fails(sh, c, &cand))
				any = true;
			else
				k++;
		}
	return any;
}

/* Buffer @b goes: from every job (a job left with none goes too). */
static void drop_bo(struct stress_case *c, unsigned int b)
{
	struct workload *wl = &c->wl;
	unsigned int k, m;
	size_t j;

	for (j = 0; j < wl->n_jobs;) {
		struct wl_job *job = &wl->jobs[j];

		for (k = m = 0; k < job->n_bos; k++)
			if (job->bos[k] != b)
				job->bos[m++] = job->bos[k] - (job->bos[k] > b);
		job->n_bos = m;
		if (m == 0)
			drop_jobs(c, j, 1);
		else
			j++;
	}
	memmove(wl->bos + b, wl->bos + b + 1,
		(wl->n_bos - b - 1) * sizeof(*wl->bos));
	wl->n_bos--;
}

static bool shrink_bos(struct shrinker *sh, struct stress_case *c)
{
	bool any = false;
	struct stress_case cand;
	unsigned int b;

	for (b = c->wl.n_bos; b-- > 0;) {
		if (c->wl.n_bos <= 1 || out_of_time(sh))
			break;
		if (no_copy(sh, c, &cand))
			break;
		drop_bo(&cand, b);
		if (cand.wl.n_jobs == 0) {
			stress_case_free(&cand);
			continue;
		}
		if (keep_if_fails(sh, c, &cand))
			any = true;
	}
	return any;
}

/*
 * One feature off, or one value to its simplest: edit @what of @c's copy;
 * false if there is nothing to change (no run then).
 */
enum edit {
	E_SHRINK, E_VRAM, E_CLASS, E_PRIO, E_ENGINES_FLAG, E_HANG_TIMEOUT,
	E_BO,        /* per buffer: default placement, not pinned, 4 bytes */
	E_JOB,       /* per job: add, engine 0, 0 us */
};

static bool edit_bo(struct wl_bo *bo)
{
	struct wl_bo want = *bo;

	want.placement = WL_PLACE_DEFAULT;
	want.pinned = false;
	want.fourcc = want.width = want.height = 0;
	want.size = 4;
	if (!memcmp(&want, bo, sizeof(want)))
		return false;
	*bo = want;
	return true;
}

static bool edit_job(struct wl_job *job)
{
	if (job->op == WL_OP_ADD && job->engine == 0 && !job->duration_us)
		return false;
	job->op = WL_OP_ADD;
	job->engine = 0;
	job->duration_us = 0;
	return true;
}

static bool apply_edit(struct stress_case *c, enum edit e, size_t i)
{
	switch (e) {
	case E_SHRINK:
		if (!c->wl.shrink_ms)
			return false;
		c->wl.shrink_ms = 0;
		return true;
	case E_VRAM:
		if (!c->vram)
			return false;
		c->vram = 0;
		return true;
	case E_CLASS:
		if (!c->wound_wait)
			return false;
		c->wound_wait = false;
		return true;
	case E_PRIO:
		if (!c->priorities)
			return false;
		c->priorities = false;
		return true;
	case E_ENGINES_FLAG:
		if (c->engines <= 1 || c->engines <= c->wl.n_engines)
			return false;
		c->engines = c->wl.n_engines ? c->wl.n_engines : 1;
		return true;
	case E_HANG_TIMEOUT:
		if (!c->hang_timeout_ms)
			return false;
		c->hang_timeout_ms = 0;
		return true;
	case E_BO:
		return edit_bo(&c->wl.bos[i]);
	case E_JOB:
		return edit_job(&c->wl.jobs[i]);
	}
	return false;
}

/* Edit @e on each of @n items (0 .. n-1), keeping each that still fails. */
static bool try_each(struct shrinker *sh, struct stress_case *c, enum edit e,
		     size_t n)
{
	struct stress_case cand;
	bool any = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (out_of_time(sh) || no_copy(sh, c, &cand))
			return any;
		if (!apply_edit(&cand, e, i))
			stress_case_free(&cand);
		else if (keep_if_fails(sh, c, &cand))
			any = true;
	}
	return any;
}

static bool shrink_features(struct shrinker *sh, struct stress_case *c)
{
	static const enum edit once[] = {
		E_SHRINK, E_VRAM, E_CLASS, E_PRIO, E_ENGINES_FLAG,
		E_HANG_TIMEOUT,
	};
	bool any = false;
	size_t k;

	for (k = 0; k < sizeof(once) / sizeof(once[0]); k++)
		any |= try_each(sh, c, once[k], 1);
	any |= try_each(sh, c, E_BO, c->wl.n_bos);
	any |= try_each(sh, c, E_JOB, c->wl.n_jobs);
	return any;
}

/* PRIME, syncobjs, ranges off (stress_case_feature_off()), each whole. */
static bool shrink_new_features(struct shrinker *sh, struct stress_case *c)
{
	static const unsigned int off[] = { SF_SYNCOBJ, SF_PRIME, SF_RANGES };
	struct stress_case cand;
	bool any = false;
	size_t k;

	for (k = 0; k < sizeof(off) / sizeof(off[0]); k++) {
		/* no_copy(): a failed copy leaves the shrink not minimal. */
		if (out_of_time(sh) || no_copy(sh, c, &cand))
			break;
		if (!stress_case_feature_off(&cand, off[k]))
			stress_case_free(&cand);
		else if (keep_if_fails(sh, c, &cand))
			any = true;
	}
	/* Syncobj lines whose words went with their jobs. */
	if (!out_of_time(sh) && !no_copy(sh, c, &cand)) {
		if (!stress_case_drop_unused_syncobjs(&cand))
			stress_case_free(&cand);
		else if (keep_if_fails(sh, c, &cand))
			any = true;
	}
	return any;
}

enum stress_shrink_end stress_shrink(struct stress_case *c,
				     const struct stress_outcome *want,
				     const struct stress_exec *ex,
				     const char *path, double seconds,
				     unsigned int *ret_tried)
{
	struct shrinker sh = {
		.want = want,
		.ex = *ex,
		.path = path,
		.cut = STRESS_SHRINK_MINIMAL,
	};
	bool progress = true;

	sh.ex.deadline_ns = cli_now_ns() + (uint64_t)(seconds * 1e9);
	while (progress && !out_of_time(&sh)) {
		progress = false;
		/* First: a signaller's job cannot go while its waits stay. */
		progress |= shrink_new_features(&sh, c);
		progress |= shrink_jobs(&sh, c);
		progress |= shrink_threads(&sh, c);
		progress |= shrink_bos(&sh, c);
		progress |= shrink_job_bos(&sh, c);
		progress |= shrink_features(&sh, c);
	}
	stress_case_settle(c);
	/* The file at @path is the last candidate: write the smallest. */
	workload_save(&c->wl, path);
	*ret_tried = sh.tried;
	/* A pass that kept nothing, none of its steps cut short. */
	return progress ? (sh.cut != STRESS_SHRINK_MINIMAL ? sh.cut :
			   STRESS_SHRINK_TIME) : sh.cut;
}
