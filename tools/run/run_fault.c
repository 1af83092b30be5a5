// SPDX-License-Identifier: MIT
/*
 * ttmsim run: faults a test injects on purpose (TTMSIM_TEST_FAULT), so
 * that the suites can check that the run's own checks fail when they
 * must: a verifier that checked nothing would otherwise pass every test.
 * Test-only (the man page says so); each one announces itself on stderr.
 *
 *  word1         after the run, word 1 (bytes 4 to 7) of the first
 *                buffer of at least 8 bytes is changed: the verifier
 *                must report it and the run exit 1;
 *  retire-twice  the first accepted job is counted as retired once more:
 *                exit 1, "retired 2 times";
 *  submit-list   thread 0 cannot allocate its buffer list (as if out of
 *                memory): its jobs are not submitted, exit 1;
 *  stall         a real stall with a job in flight: thread 0 puts a fence
 *                that never signals on its first job's first buffer,
 *                submits the job (it stays in flight, waiting on that
 *                fence), then takes the buffer's reservation and keeps it,
 *                busy, until a signal: the watchdog must report it (exit
 *                3) within --watchdog plus the in-flight job's duration;
 *  no-wait       the jobs' wait= words are not passed to the execbuf
 *                (the run still holds a waiter until its signaller is
 *                submitted): a waiter then runs as soon as it can, and
 *                the verifier must see one start before its signaller
 *                ended, exit 1 (a workload with a long signaller on
 *                another engine makes it certain);
 *  no-range      the buffers' page ranges are not passed to the library:
 *                the verifier must see a ranged buffer outside its
 *                window, exit 1 (a range that does not start at 0);
 *  shrinkable    a workload of 3 threads or more with a job on its third
 *                buffer (index 2) is a violation (exit 1), so that the
 *                tests of `ttmsim stress` have a failure whose minimal
 *                workload is known (3 buffers, one job on thread 2 that
 *                lists buffer 2); one of exactly 2 threads with such a
 *                job is another violation (a decoy, with another
 *                message), which a shrinker that keeps any exit 1 drifts
 *                to;
 *  bad-utf8      a violation whose message has invalid UTF-8 and control
 *                bytes in it (exit 1): the reports of `ttmsim stress`
 *                must still be valid JSON and XML;
 *  sanitizer     after the run, a line as UBSan prints one ("runtime
 *                error:"), the run otherwise clean (exit 0): `ttmsim
 *                stress` must count the case as failed;
 *  abort         after the run, abort() (no core file): the process ends
 *                by SIGABRT;
 *  live-count    with --check-every, each thread waits after its first
 *                job until the mid-run check has run (so that it runs
 *                while the jobs are in flight or done, however short the
 *                run), and that check sees one completed job more than
 *                there is, as if a retirement were counted twice: it must
 *                report it, exit 1 (run_fault_live.c).
 *
 * They are live in the shipped binary on purpose: the suites test the
 * installed-style ttmsim, not a special build. Nothing sets the variable
 * but a test, and every fault says so on stderr first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "ttmsim/resv.h"
#include "cli.h"
#include "run.h"

static const char *const fault_names[] = {
	[RUN_FAULT_WORD1] = "word1",
	[RUN_FAULT_RETIRE_TWICE] = "retire-twice",
	[RUN_FAULT_SUBMIT_LIST] = "submit-list",
	[RUN_FAULT_STALL] = "stall",
	[RUN_FAULT_NO_WAIT] = "no-wait",
	[RUN_FAULT_NO_RANGE] = "no-range",
	[RUN_FAULT_SHRINKABLE] = "shrinkable",
	[RUN_FAULT_BAD_UTF8] = "bad-utf8",
	[RUN_FAULT_SANITIZER] = "sanitizer",
	[RUN_FAULT_ABORT] = "abort",
	[RUN_FAULT_LIVE_COUNT] = "live-count",
};

enum run_fault run_fault_parse(void)
{
	const char *s = getenv("TTMSIM_TEST_FAULT");
	unsigned int i;

	if (!s || !*s)
		return RUN_FAULT_NONE;
	for (i = 1; i < sizeof(fault_names) / sizeof(fault_names[0]); i++) {
		if (!strcmp(s, fault_names[i])) {
			cli_error("TTMSIM_TEST_FAULT=%s: a fault is injected "
				  "for a test", s);
			return (enum run_fault)i;
		}
	}
	cli_error("TTMSIM_TEST_FAULT='%s' ignored: not word1, retire-twice, "
		  "submit-list, stall, no-wait, no-range, shrinkable, bad-utf8, "
		  "sanitizer, abort or live-count", s);
	return RUN_FAULT_NONE;
}

/* Add 1 to word 1 of the first buffer that has one. */
static void corrupt_word1(struct run *run)
{
	unsigned int i;
	uint32_t w;

	for (i = 0; i < run->wl.n_bos; i++) {
		struct ttm_bo *bo = run->bos[i];

		if (!bo || ttm_bo_size(bo) < 8 ||
		    ttm_bo_reserve(bo, false, false, NULL))
			continue;
		if (ttm_bo_read(bo, 4, &w, 4) == 0) {
			w++;
			ttm_bo_write(bo, 4, &w, 4);
		}
		ttm_bo_unreserve(bo);
		return;
	}
}

/* A job of @wl lists buffer @b. */
static bool uses_bo(const struct workload *wl, unsigned int b)
{
	unsigned int k;
	size_t j;

	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_bos; k++)
			if (wl->jobs[j].bos[k] == b)
				return true;
	return false;
}

bool run_fault_violation(struct run *run)
{
	const struct workload *wl = &run->wl;

	switch (run->fault) {
	case RUN_FAULT_SHRINKABLE:
		if (wl->n_threads < 2 || !uses_bo(wl, 2))
			return false;
		if (wl->n_threads == 2)
			fputs("ttmsim: invariant: TTMSIM_TEST_FAULT=shrinkable: "
			      "decoy: two threads and a job on buffer 2 "
			      "(test-only failure)\n", stderr);
		else
			fprintf(stderr, "ttmsim: invariant: TTMSIM_TEST_FAULT="
				"shrinkable: %u threads and a job on buffer 2 "
				"(test-only failure)\n", wl->n_threads);
		return true;
	case RUN_FAULT_BAD_UTF8:
		/* Cut sequences, an overlong '/', a surrogate, ESC, DEL. */
		fputs("ttmsim: invariant: TTMSIM_TEST_FAULT=bad-utf8: \xff\xfe "
		      "\xc3 \xe2\x82 \xc0\xaf \xed\xa0\x80 \x01\x1b[K\x7f "
		      "<&\"'> \xc3\xa9 (test-only failure)\n", stderr);
		return true;
	default:
		return false;
	}
}

void run_fault_apply(struct run *run)
{
	struct rlimit no_core = { 0, 0 };
	size_t j;

	switch (run->fault) {
	case RUN_FAULT_WORD1:
		corrupt_word1(run);
		break;
	case RUN_FAULT_RETIRE_TWICE:
		for (j = 0; j < run->wl.n_jobs; j++) {
			if (run->results[j].state == RUN_JOB_ACCEPTED) {
				__atomic_add_fetch(&run->results[j].retired, 1,
						   __ATOMIC_RELEASE);
				break;
			}
		}
		break;
	case RUN_FAULT_SANITIZER:
		fprintf(stderr, "%s:%d:5: runtime error: TTMSIM_TEST_FAULT="
			"sanitizer: a line as UBSan prints one (test-only)\n",
			__FILE__, __LINE__);
		break;
	case RUN_FAULT_ABORT:
		fflush(stderr);
		setrlimit(RLIMIT_CORE, &no_core);
		abort();
	default:
		break;
	}
}

/* The buffer of job @j the stall fault uses: its first; NULL if none. */
static struct ttm_bo *stall_bo(struct run *run, size_t j)
{
	const struct wl_job *job = &run->wl.jobs[j];

	return job->n_bos ? run->bos[job->bos[0]] : NULL;
}

struct ttm_fence *run_fault_stall_prepare(struct run_thread *th, size_t j)
{
	struct run *run = th->run;
	struct ttm_bo *bo = stall_bo(run, j);
	struct ttm_fence *never;

	if (run->fault != RUN_FAULT_STALL || th->index != 0 || !bo)
		return NULL;
	if (ttm_fence_create(ttm_fence_context_alloc(1), 1, &never))
		return NULL;
	if (ttm_bo_reserve(bo, true, false, NULL)) {
		ttm_fence_put(never);
		return NULL;
	}
	if (ttm_resv_reserve_fences(ttm_bo_resv(bo), 1) == 0)
		ttm_resv_add_fence(ttm_bo_resv(bo), never,
				   TTM_RESV_USAGE_WRITE);
	ttm_bo_unreserve(bo);
	return never;
}

void run_fault_stall(struct run_thread *th, size_t j,
		     struct ttm_fence *never)
{
	struct run *run = th->run;
	struct ttm_bo *bo = stall_bo(run, j);

	if (!never)
		return;
	/* Busy, then the stop flag: as submit_job() does (interrupts). */
	__atomic_store_n(&th->busy, true, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&run->stop, __ATOMIC_SEQ_CST) &&
	    ttm_bo_reserve(bo, true, false, NULL) == 0) {
		/* Held until a signal interrupts the wait. */
		ttm_fence_wait(never, true, -1);
		ttm_bo_unreserve(bo);
	}
	/* Let the job in flight run, so that the run can end. */
	ttm_fence_signal(never, -ECANCELED);
	ttm_fence_put(never);
	__atomic_store_n(&th->busy, false, __ATOMIC_SEQ_CST);
}
