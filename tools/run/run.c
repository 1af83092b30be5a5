// SPDX-License-Identifier: MIT
/*
 * ttmsim run: drive an execbuf workload, read from a file or generated,
 * through the whole stack (clients, ttm_execbuf_submit(), ww locking,
 * eviction, the fake GPU) with many threads, and give a verdict.
 *
 * This file is the command line and the order of things; the parts are
 * in run_setup.c, run_submit.c, run_verify.c, run_watch.c, run_report.c
 * and run_trace.c (see run.h).
 *
 * Exit status: 0 the run completed and every invariant held (rejected or
 * failed jobs do not change that); 1 an invariant was violated; 2 usage or
 * input error; 3 the watchdog saw no progress; 130 interrupted.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/ww_debug.h"
#include "cli.h"
#include "parse.h"
#include "run.h"

#define RUN_EXIT_INTERRUPTED 130

static void run_usage(const char *path)
{
	printf("usage: ttmsim %s [--workload FILE] [OPTIONS]\n"
	       "\n"
	       "Run execbuf jobs through clients, ww locking, eviction and the\n"
	       "fake GPU with many threads; check every invariant at the end.\n"
	       "Without --workload, a random workload is generated.\n"
	       "\n"
	       "Workload:\n"
	       "  --workload FILE     read it ('-': standard input)\n"
	       "  --check             only parse and check the workload\n"
	       "  --save-workload F   write the workload (generated or not)\n"
	       "Generator (not with --workload):\n"
	       "  --threads N         submitting threads (default 4)\n"
	       "  --bos N             buffers (default 1024)\n"
	       "  --bo-size MIN:MAX   bytes, multiples of 4 (4096:65536)\n"
	       "  --bos-per-job MIN:MAX  buffers per job (2:8)\n"
	       "  --jobs N            jobs per thread (1000)\n"
	       "  --order random|sorted|reverse  buffer order in jobs\n"
	       "  --job-us MIN:MAX    GPU time of a job (0:100)\n"
	       "  --seed N            (default 1; always printed)\n"
	       "  --prime PERCENT     buffers shared with the threads by\n"
	       "                      PRIME export/import (0)\n"
	       "  --syncobjs N        N syncobjs (even binary, odd\n"
	       "                      timelines) that jobs signal and wait\n"
	       "                      on across threads (0)\n"
	       "  --ranges            some buffers in CPU-visible VRAM or a\n"
	       "                      VRAM page range of their own\n"
	       "Run:\n"
	       "  --priorities NAME=COUNT[,NAME=COUNT...]  clients of each\n"
	       "                      priority (kernel, high, normal, low),\n"
	       "                      threads taking them in that order;\n"
	       "                      they add up to the threads (default:\n"
	       "                      all normal)\n"
	       "  --engines N         GPU engines (default 2, or the\n"
	       "                      workload's; never fewer than it uses)\n"
	       "  --seconds S         stop submitting after S seconds\n"
	       "  --class wait-die|wound-wait  (default wait-die)\n"
	       "  --vram BYTES        VRAM size, suffix K, M, G (256M)\n"
	       "  --gtt BYTES         GTT size (1G)\n"
	       "  --allow-duplicates  a buffer listed twice is used once\n"
	       "  --shrink-ms N       a shrinker swaps unpinned buffers out\n"
	       "                      to SYSTEM every N ms (1 to 60000;\n"
	       "                      0: none); overrides the workload's\n"
	       "                      shrink line, kept by --save-workload\n"
	       "  --hang-timeout-ms MS  GPU watchdog for hang jobs (100)\n"
	       "  --watchdog SECONDS  no progress for that long: exit 3 (60)\n"
	       "  --check-every S     check the accounting and counters\n"
	       "                      every S seconds during the run too\n"
	       "Output:\n"
	       "  --json              the summary as one JSON object\n"
	       "  --quiet             no text summary\n"
	       "  --dump FILE         final buffer contents summary (JSON)\n"
	       "  --trace FILE        Chrome trace-event JSON (Perfetto)\n"
	       "  --progress, --no-progress  progress bar on stderr\n"
	       "                      (default: if stderr is a terminal)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "Exit status: 0 all invariants held, 1 an invariant was\n"
	       "violated, 2 usage or input error, 3 no progress (deadlock),\n"
	       "130 interrupted. See ttmsim(1) for the workload format.\n",
	       path);
}

enum {
	OPT_WORKLOAD = CLI_OPT_HELP + 1,
	OPT_CHECK,
	OPT_SAVE,
	OPT_THREADS,
	OPT_BOS,
	OPT_BO_SIZE,
	OPT_PER_JOB,
	OPT_JOBS,
	OPT_ORDER,
	OPT_JOB_US,
	OPT_SEED,
	OPT_PRIME,
	OPT_SYNCOBJS,
	OPT_RANGES,
	OPT_ENGINES,
	OPT_PRIORITIES,
	OPT_SECONDS,
	OPT_CLASS,
	OPT_VRAM,
	OPT_GTT,
	OPT_DUPS,
	OPT_SHRINK,
	OPT_HANG,
	OPT_WATCHDOG,
	OPT_CHECK_EVERY,
	OPT_JSON,
	OPT_QUIET,
	OPT_DUMP,
	OPT_TRACE,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
};

static const struct option run_options[] = {
	{ "help", no_argument, NULL, CLI_OPT_HELP },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "save-workload", required_argument, NULL, OPT_SAVE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "bos", required_argument, NULL, OPT_BOS },
	{ "bo-size", required_argument, NULL, OPT_BO_SIZE },
	{ "bos-per-job", required_argument, NULL, OPT_PER_JOB },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "order", required_argument, NULL, OPT_ORDER },
	{ "job-us", required_argument, NULL, OPT_JOB_US },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "prime", required_argument, NULL, OPT_PRIME },
	{ "syncobjs", required_argument, NULL, OPT_SYNCOBJS },
	{ "ranges", no_argument, NULL, OPT_RANGES },
	{ "engines", required_argument, NULL, OPT_ENGINES },
	{ "priorities", required_argument, NULL, OPT_PRIORITIES },
	{ "seconds", required_argument, NULL, OPT_SECONDS },
	{ "class", required_argument, NULL, OPT_CLASS },
	{ "vram", required_argument, NULL, OPT_VRAM },
	{ "gtt", required_argument, NULL, OPT_GTT },
	{ "allow-duplicates", no_argument, NULL, OPT_DUPS },
	{ "shrink-ms", required_argument, NULL, OPT_SHRINK },
	{ "hang-timeout-ms", required_argument, NULL, OPT_HANG },
	{ "watchdog", required_argument, NULL, OPT_WATCHDOG },
	{ "check-every", required_argument, NULL, OPT_CHECK_EVERY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "dump", required_argument, NULL, OPT_DUMP },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ NULL, 0, NULL, 0 },
};

/* "MIN:MAX", both in [@lo, @hi], MIN <= MAX. */
static int parse_range(const char *flag, const char *arg, uint64_t lo,
		       uint64_t hi, uint64_t *min, uint64_t *max)
{
	const char *colon = strchr(arg, ':');
	char first[32];
	size_t n;

	if (!colon || (n = (size_t)(colon - arg)) >= sizeof(first)) {
		cli_error("%s: '%s' is not MIN:MAX", flag, arg);
		return CLI_EXIT_USAGE;
	}
	memcpy(first, arg, n);
	first[n] = '\0';
	if (cli_parse_uint(flag, first, lo, hi, min) ||
	    cli_parse_uint(flag, colon + 1, lo, hi, max))
		return CLI_EXIT_USAGE;
	if (*min > *max) {
		cli_error("%s: '%s': MIN is above MAX", flag, arg);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* A size in bytes, with an optional K, M or G (powers of 1024). */
static int parse_bytes(const char *flag, const char *arg, uint64_t *ret)
{
	static const char suffixes[] = "KMGkmg";
	size_t len = strlen(arg);
	char digits[32];
	const char *s;
	unsigned int shift = 0;
	uint64_t v;

	if (len && (s = strchr(suffixes, arg[len - 1])) && *s) {
		shift = 10 * (unsigned int)((s - suffixes) % 3 + 1);
		len--;
	}
	if (len == 0 || len >= sizeof(digits)) {
		cli_error("%s: '%s' is not a size in bytes", flag, arg);
		return CLI_EXIT_USAGE;
	}
	memcpy(digits, arg, len);
	digits[len] = '\0';
	if (cli_parse_uint(flag, digits, 1, UINT64_MAX >> shift, &v))
		return CLI_EXIT_USAGE;
	*ret = v << shift;
	return 0;
}

static int parse_order(const char *arg, enum wl_order *order)
{
	if (!strcmp(arg, "random"))
		*order = WL_ORDER_RANDOM;
	else if (!strcmp(arg, "sorted"))
		*order = WL_ORDER_SORTED;
	else if (!strcmp(arg, "reverse"))
		*order = WL_ORDER_REVERSE;
	else {
		cli_error("--order: '%s' is not random, sorted or reverse",
			  arg);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static int parse_class(const char *arg, bool *wound_wait)
{
	if (!strcmp(arg, "wait-die"))
		*wound_wait = false;
	else if (!strcmp(arg, "wound-wait"))
		*wound_wait = true;
	else {
		cli_error("--class: '%s' is not wait-die or wound-wait", arg);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* One option; 0 or CLI_EXIT_USAGE. */
static int parse_option(void *data, int c, const char *arg)
{
	struct run_config *cfg = data;
	struct wl_gen_options *g = &cfg->gen;
	uint64_t v, lo, hi;
	int ret = 0;

	switch (c) {
	case OPT_WORKLOAD:
		cfg->workload_path = arg;
		return 0;
	case OPT_CHECK:
		cfg->check_only = true;
		return 0;
	case OPT_SAVE:
		cfg->save_path = arg;
		return 0;
	case OPT_THREADS:
		ret = cli_parse_uint("--threads", arg, 1, WL_MAX_THREADS, &v);
		g->threads = (unsigned int)v;
		cfg->threads_given = true;
		break;
	case OPT_BOS:
		ret = cli_parse_uint("--bos", arg, 1, 1u << 24, &v);
		g->bos = (unsigned int)v;
		break;
	case OPT_BO_SIZE:
		ret = parse_range("--bo-size", arg, 4, WL_MAX_BO_SIZE, &lo, &hi);
		g->bo_size_min = lo;
		g->bo_size_max = hi;
		break;
	case OPT_PER_JOB:
		ret = parse_range("--bos-per-job", arg, 1, WL_MAX_JOB_BOS, &lo,
				  &hi);
		g->per_job_min = (unsigned int)lo;
		g->per_job_max = (unsigned int)hi;
		break;
	case OPT_JOBS:
		ret = cli_parse_uint("--jobs", arg, 1, 1u << 24, &g->jobs);
		break;
	case OPT_ORDER:
		ret = parse_order(arg, &g->order);
		break;
	case OPT_JOB_US:
		ret = parse_range("--job-us", arg, 0, 60000000, &lo, &hi);
		g->job_us_min = lo;
		g->job_us_max = hi;
		break;
	case OPT_SEED:
		ret = cli_parse_uint("--seed", arg, 0, UINT64_MAX, &g->seed);
		break;
	case OPT_PRIME:
		ret = cli_parse_uint("--prime", arg, 0, 100, &v);
		g->prime_percent = (unsigned int)v;
		break;
	case OPT_SYNCOBJS:
		ret = cli_parse_uint("--syncobjs", arg, 0, WL_MAX_SYNCOBJS, &v);
		g->syncobjs = (unsigned int)v;
		break;
	case OPT_RANGES:
		g->ranges = true;
		break;
	case OPT_ENGINES:
		ret = cli_parse_uint("--engines", arg, 1, WL_MAX_ENGINES, &v);
		cfg->engines = (unsigned int)v;
		return ret;
	case OPT_PRIORITIES:
		/* A run flag: also for a workload file's threads. */
		return run_priorities_parse(arg, &cfg->priorities);
	case OPT_SECONDS:
		return cli_parse_seconds("--seconds", arg, 1e6, &cfg->seconds);
	case OPT_CLASS:
		return parse_class(arg, &cfg->wound_wait);
	case OPT_VRAM:
		return parse_bytes("--vram", arg, &cfg->vram);
	case OPT_GTT:
		return parse_bytes("--gtt", arg, &cfg->gtt);
	case OPT_DUPS:
		cfg->allow_duplicates = true;
		return 0;
	case OPT_SHRINK:
		/* A run flag, also with --workload: 0 turns its line off. */
		ret = cli_parse_uint("--shrink-ms", arg, 0, WL_MAX_SHRINK_MS,
				     &v);
		cfg->shrink_ms = (unsigned int)v;
		cfg->shrink_ms_given = ret == 0;
		return ret;
	case OPT_HANG:
		ret = cli_parse_uint("--hang-timeout-ms", arg, 1, 3600000, &v);
		cfg->hang_timeout_ms = (unsigned int)v;
		return ret;
	case OPT_WATCHDOG:
		return cli_parse_seconds("--watchdog", arg, 1e6,
					 &cfg->watchdog_s);
	case OPT_CHECK_EVERY:
		return cli_parse_seconds("--check-every", arg, 1e6,
					 &cfg->check_every_s);
	case OPT_JSON:
		cfg->json = true;
		return 0;
	case OPT_QUIET:
		cfg->quiet = true;
		return 0;
	case OPT_DUMP:
		cfg->dump_path = arg;
		return 0;
	case OPT_TRACE:
		cfg->trace_path = arg;
		return 0;
	case OPT_PROGRESS:
		cfg->progress = 1;
		return 0;
	case OPT_NO_PROGRESS:
		cfg->progress = 0;
		return 0;
	}
	/* Only the generator's flags get here. */
	cfg->gen_flags_given = true;
	return ret;
}

static const struct cli_options run_cli = {
	.long_options = run_options,
	.usage = run_usage,
	.parse = parse_option,
};

/* Load or generate the workload, save it if asked. */
static int load_or_generate(struct run *run)
{
	const struct run_config *cfg = run->cfg;
	int ret;

	if (cfg->workload_path) {
		ret = workload_load(cfg->workload_path, &run->wl);
		if (ret)
			return ret;
		/* The command line wins over the file's shrink line. */
		if (cfg->shrink_ms_given)
			run->wl.shrink_ms = cfg->shrink_ms;
	} else if ((ret = run_generate(run))) {
		return ret;
	}
	if (cfg->engines && cfg->engines < run->wl.n_engines) {
		cli_error("--engines: %u is fewer than the %u engines the "
			  "workload uses", cfg->engines, run->wl.n_engines);
		return CLI_EXIT_USAGE;
	}
	if (cfg->priorities.n && cfg->priorities.total != run->wl.n_threads) {
		cli_error("--priorities: %u clients but the workload has %u "
			  "threads", cfg->priorities.total, run->wl.n_threads);
		return CLI_EXIT_USAGE;
	}
	run->engines = cfg->engines ? cfg->engines : run->wl.n_engines;
	if (run->engines == 0)
		run->engines = 1;
	/* Interrupted while generating: part of a workload, not saved. */
	if (cfg->save_path && !run->interrupted)
		return workload_save(&run->wl, cfg->save_path);
	return 0;
}

/*
 * load_or_generate(); if it fails after the generator blocked SIGINT and
 * SIGTERM, unblock them: no signal thread will ever take a pending one.
 */
static int prepare_workload(struct run *run)
{
	int ret = load_or_generate(run);

	if (ret && !run->cfg->workload_path)
		run_generate_unblock();
	return ret;
}

/* A checker report: printed as usual, counted, the run goes on. */
static void on_checker_report(const struct ww_debug_report *report,
			      void *data)
{
	struct run *run = data;

	ww_debug_print_report(report, STDERR_FILENO);
	__atomic_add_fetch(&run->checker_reports, 1, __ATOMIC_RELAXED);
}

static int execute(struct run *run)
{
	const struct run_config *cfg = run->cfg;
	bool ok;
	int ret;

	run->fault = run_fault_parse();
	ww_debug_set_handler(on_checker_report, run);
	/*
	 * Signals first: every thread started later (the GPU's engines, the
	 * submitters) inherits their blocking, so that only the watcher's
	 * signal thread ever receives SIGINT and SIGTERM.
	 */
	ret = run_watch_start(run);
	if (ret) {
		cli_error("cannot start the watchdog: %s", strerror(-ret));
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	ret = run_setup(run);
	if (ret == 0)
		ret = run_submit_all(run);
	run_watch_stop(run);
	if (ret)
		goto out;

	run_fault_apply(run);
	ok = run_verify(run);
	if (__atomic_load_n(&run->live_violations, __ATOMIC_RELAXED))
		ok = false;
	if (run_fault_violation(run))
		ok = false;
	if (__atomic_load_n(&run->checker_reports, __ATOMIC_RELAXED)) {
		fprintf(stderr, "ttmsim: the ww_debug checker reported %u "
			"misuse(s)\n", run->checker_reports);
		ok = false;
	}
	ret = ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
	if (__atomic_load_n(&run->interrupted, __ATOMIC_RELAXED))
		ret = RUN_EXIT_INTERRUPTED;
	if (cfg->dump_path && run_report_dump(run, cfg->dump_path) &&
	    ret == CLI_EXIT_OK)
		ret = CLI_EXIT_FAILURE;
	if (cfg->trace_path && run_trace_write(run, cfg->trace_path) &&
	    ret == CLI_EXIT_OK)
		ret = CLI_EXIT_FAILURE;
	ret = run_report_summary(run, ret);
out:
	run_teardown(run);
	ww_debug_set_handler(NULL, NULL);
	return ret;
}

int cmd_run(int argc, char **argv, const char *path)
{
	struct run_config cfg = {
		.gen = {
			.threads = 4, .bos = 1024,
			.bo_size_min = 4096, .bo_size_max = 65536,
			.per_job_min = 2, .per_job_max = 8,
			.jobs = 1000, .order = WL_ORDER_RANDOM,
			.engines = 2, .job_us_min = 0, .job_us_max = 100,
			.seed = 1,
		},
		.progress = -1,
		.watchdog_s = 60,
		.hang_timeout_ms = 100,
	};
	struct run run = {
		.cfg = &cfg,
		.sync_lock = PTHREAD_MUTEX_INITIALIZER,
		.sync_cv = PTHREAD_COND_INITIALIZER,
	};
	int ret;

	if (!cli_parse_options(&run_cli, &cfg, argc, argv, path, &ret))
		return ret;
	if (cfg.workload_path && cfg.gen_flags_given) {
		cli_error("%s: the generator's flags (--threads, --bos, "
			  "--bo-size, --bos-per-job, --jobs, --order, --prime, "
			  "--syncobjs, --ranges, "
			  "--job-us, --seed) do not go with --workload", path);
		return CLI_EXIT_USAGE;
	}
	if (cfg.gen.per_job_max > cfg.gen.bos) {
		cli_error("--bos-per-job: %u buffers per job but only %u "
			  "buffers (--bos)", cfg.gen.per_job_max, cfg.gen.bos);
		return CLI_EXIT_USAGE;
	}
	if (!cfg.workload_path && cfg.priorities.n) {
		/* Without --threads, --priorities says how many. */
		if (!cfg.threads_given) {
			cfg.gen.threads = cfg.priorities.total;
		} else if (cfg.gen.threads != cfg.priorities.total) {
			cli_error("--priorities: %u clients but --threads is %u",
				  cfg.priorities.total, cfg.gen.threads);
			return CLI_EXIT_USAGE;
		}
	}
	if (!cfg.workload_path && cfg.engines)
		cfg.gen.engines = cfg.engines;
	if (!cfg.workload_path && cfg.shrink_ms_given)
		cfg.gen.shrink_ms = cfg.shrink_ms;
	cfg.gen.bo_size_min &= ~UINT64_C(3);
	cfg.gen.bo_size_max &= ~UINT64_C(3);

	ret = prepare_workload(&run);
	if (ret == 0 && run.interrupted && cfg.check_only) {
		ret = RUN_EXIT_INTERRUPTED;
	} else if (ret == 0 && cfg.check_only) {
		printf("%s: %u buffers, %zu jobs, %u threads, %u engines",
		       run.wl.source ? run.wl.source : "generated",
		       run.wl.n_bos, run.wl.n_jobs, run.wl.n_threads,
		       run.engines);
		if (run.wl.shrink_ms)
			printf(", shrink every %u ms", run.wl.shrink_ms);
		puts(": ok");
	} else if (ret == 0) {
		ret = execute(&run);
	}
	workload_free(&run.wl);
	return ret;
}
