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
 *                memory): its jobs are not submitted, exit 1.
 */
#include <stdlib.h>
#include <string.h>

#include "ttmsim/bo.h"
#include "cli.h"
#include "run.h"

static const char *const fault_names[] = {
	[RUN_FAULT_WORD1] = "word1",
	[RUN_FAULT_RETIRE_TWICE] = "retire-twice",
	[RUN_FAULT_SUBMIT_LIST] = "submit-list",
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
	cli_error("TTMSIM_TEST_FAULT='%s' ignored: not word1, retire-twice "
		  "or submit-list", s);
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

void run_fault_apply(struct run *run)
{
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
	default:
		break;
	}
}
