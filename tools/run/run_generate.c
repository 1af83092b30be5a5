// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the generated workload (without --workload), made the way
 * the run is watched.
 *
 * - Settings whose workload cannot be held in this machine's memory are a
 *   usage error naming the flags, before anything is asked for (a calloc()
 *   of hundreds of GiB may fail, or succeed and be killed while written).
 * - SIGINT and SIGTERM are blocked first, as run_watch_start() blocks them
 *   for the run: one that comes while generating stays pending, the
 *   generator sees it within WL_GEN_POLL_JOBS jobs and stops, and the run
 *   goes on as one interrupted before its first submission (run->stop and
 *   run->interrupted set): the usual partial summary and exit 130, instead
 *   of a process killed with no summary. The signal thread then takes the
 *   pending signal as the first one, so that one more ends the process at
 *   once, as during a run. A workload file is read with the signals
 *   unblocked: reading a terminal or a pipe may wait for ever, and Ctrl-C
 *   must end that. If the run does not start after all (the generator or
 *   a later check failed), run_generate_unblock() unblocks them again: a
 *   pending one then ends the process as the signal would have.
 *
 * Test hook: TTMSIM_TEST_GEN_SIGNAL=N (2 or 15) sends signal N to the
 * process at the generator's first poll, deterministically in the middle
 * of a generation of more than WL_GEN_POLL_JOBS jobs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"

static int test_signal; /* TTMSIM_TEST_GEN_SIGNAL; 0: none */

static void signals_of_run(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
}

/* A SIGINT or SIGTERM is pending (struct wl_gen_options.interrupted). */
static bool gen_interrupted(void)
{
	sigset_t pending;

	if (test_signal) {
		/* kill(), not raise(): process-directed, as Ctrl-C is. */
		kill(getpid(), test_signal);
		test_signal = 0;
	}
	if (sigpending(&pending))
		return false;
	return sigismember(&pending, SIGINT) == 1 ||
	       sigismember(&pending, SIGTERM) == 1;
}

static uint64_t memory_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return UINT64_MAX; /* unknown: let the allocation decide */
	return (uint64_t)pages * (uint64_t)page;
}

/* The flags that size the workload, for the messages. */
static void too_big(const struct wl_gen_options *o, uint64_t need,
		    const char *why)
{
	cli_error("--jobs %llu x --threads %u jobs of up to --bos-per-job %u "
		  "buffers, --bos %u: %s (%llu MiB%s); ask for fewer",
		  (unsigned long long)o->jobs, o->threads, o->per_job_max,
		  o->bos, why, (unsigned long long)(need >> 20),
		  need == UINT64_MAX ? " or more" : "");
}

void run_generate_unblock(void)
{
	sigset_t set;

	signals_of_run(&set);
	/* A pending one now ends the process as the signal (130, 143). */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int run_generate(struct run *run)
{
	struct wl_gen_options o = run->cfg->gen;
	uint64_t need = workload_gen_bytes(&o);
	uint64_t have = memory_bytes();
	const char *env = getenv("TTMSIM_TEST_GEN_SIGNAL");
	sigset_t set;
	int ret;

	if (need > have) {
		too_big(&o, need, "the generated workload needs more than "
			"this machine's memory");
		return CLI_EXIT_USAGE;
	}
	signals_of_run(&set);
	ret = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (ret) {
		cli_error("run: cannot block SIGINT and SIGTERM: %s",
			  strerror(ret));
		return CLI_EXIT_FAILURE;
	}
	if (env && (atoi(env) == SIGINT || atoi(env) == SIGTERM))
		test_signal = atoi(env);
	o.interrupted = gen_interrupted;
	o.vram = run->cfg->vram; /* the ranges (--ranges) fit in it */
	ret = workload_generate(&o, &run->wl);
	if (ret == -ENOMEM) {
		/* Small or not, say what failed: memory, not the flags. */
		too_big(&o, need, "cannot allocate the generated workload: "
			"out of memory");
		run_generate_unblock();
		return CLI_EXIT_USAGE;
	}
	if (ret && ret != -EINTR) {
		cli_error("cannot generate the workload: %s", strerror(-ret));
		run_generate_unblock();
		return CLI_EXIT_USAGE;
	}
	if (ret == -EINTR || gen_interrupted()) {
		cli_error("run: interrupted while generating the workload "
			  "(%zu of %llu jobs made): nothing is submitted",
			  run->wl.n_jobs,
			  (unsigned long long)(o.jobs * o.threads));
		__atomic_store_n(&run->interrupted, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&run->stop, 1, __ATOMIC_SEQ_CST);
	}
	return 0;
}
