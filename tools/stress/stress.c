// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: random cases through `ttmsim run` for a given time, for
 * CI farms. Each iteration makes a case from its seed (stress_case.c),
 * runs it through cmd_run() in a forked child (stress_child.c) with its
 * verifier and a mid-run accounting check (--check-every), and stops at
 * the first failure (a non-zero exit, a signal, a sanitizer's report):
 * the case is written out, shrunk (stress_shrink.c), and the command that
 * replays the shrunk file is printed. A status line goes to stderr every
 * --status-every seconds, also in the middle of a case or a shrink.
 *
 * Seeds. Shard K of N (1 <= K <= N) runs, as its iteration i, global
 * iteration j = (K - 1) + i * N, with the seed splitmix64's output for
 * the state S + (j + 1) * 0x9e3779b97f4a7c15 (S: --seed). That state is
 * one-to-one with j, and splitmix64's finaliser is one-to-one, so shards
 * never share a seed and together walk the one sequence of seed S.
 *
 * Exit status: 0 every iteration passed; 1 one failed; 2 usage error;
 * 3 the failing case's run saw no progress (run's watchdog); 130
 * interrupted (SIGINT, SIGTERM: passed on to the case's run, and the
 * reports are written).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "parse.h"
#include "rng.h"
#include "stress.h"

struct stress_config {
	double seconds;          /* run for; default a minute */
	uint64_t iterations;     /* at most; 0: no limit */
	uint64_t seed;
	unsigned int shard, shards;
	const char *junit, *json, *out;
	double shrink_s;
	double check_every_s;
	double status_every_s;
};

static void stress_usage(const char *path)
{
	printf("usage: ttmsim %s [OPTIONS]\n"
	       "\n"
	       "Run random workloads through `ttmsim run` (both classes,\n"
	       "priorities, hangs, eviction in a small VRAM, placements,\n"
	       "pins, the shrinker, PRIME buffers, syncobj waits and\n"
	       "signals across threads, page ranges and visible VRAM)\n"
	       "until the time is up; stop at the first\n"
	       "failure, write its workload, shrink it and print the\n"
	       "command that replays it.\n"
	       "\n"
	       "  --minutes M         run for M minutes (default 1)\n"
	       "  --seconds S         run for S seconds instead\n"
	       "  --iterations N      at most N iterations\n"
	       "  --seed S            the seed sequence (default 1)\n"
	       "  --shard K/N         run shard K (1..N) of N: iteration i\n"
	       "                      takes seed number K-1+i*N of the\n"
	       "                      sequence (default 1/1)\n"
	       "  --junit FILE        JUnit XML, a testcase per iteration\n"
	       "  --json FILE         the report as JSON\n"
	       "  --out DIR           where failing workloads go (.)\n"
	       "  --shrink-seconds S  time for the shrinker (default 60)\n"
	       "  --check-every S     mid-run accounting check period (1)\n"
	       "  --status-every S    a status line every S seconds (10)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "Exit status: 0 no failure, 1 a failure, 2 usage error,\n"
	       "3 no progress (deadlock), 130 interrupted.\n", path);
}

enum {
	OPT_MINUTES = CLI_OPT_HELP + 1,
	OPT_SECONDS,
	OPT_ITERATIONS,
	OPT_SEED,
	OPT_SHARD,
	OPT_JUNIT,
	OPT_JSON,
	OPT_OUT,
	OPT_SHRINK_S,
	OPT_CHECK_EVERY,
	OPT_STATUS_EVERY,
};

static const struct option stress_options[] = {
	{ "help", no_argument, NULL, CLI_OPT_HELP },
	{ "minutes", required_argument, NULL, OPT_MINUTES },
	{ "seconds", required_argument, NULL, OPT_SECONDS },
	{ "iterations", required_argument, NULL, OPT_ITERATIONS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "shrink-seconds", required_argument, NULL, OPT_SHRINK_S },
	{ "check-every", required_argument, NULL, OPT_CHECK_EVERY },
	{ "status-every", required_argument, NULL, OPT_STATUS_EVERY },
	{ NULL, 0, NULL, 0 },
};

/* "K/N", 1 <= K <= N. */
static int parse_shard(const char *arg, struct stress_config *cfg)
{
	const char *slash = strchr(arg, '/');
	char first[32];
	uint64_t k, n;
	size_t len;

	if (!slash || (len = (size_t)(slash - arg)) >= sizeof(first)) {
		cli_error("--shard: '%s' is not K/N", arg);
		return CLI_EXIT_USAGE;
	}
	memcpy(first, arg, len);
	first[len] = '\0';
	if (cli_parse_uint("--shard", first, 1, 1u << 20, &k) ||
	    cli_parse_uint("--shard", slash + 1, 1, 1u << 20, &n))
		return CLI_EXIT_USAGE;
	if (k > n) {
		cli_error("--shard: '%s': shard %" PRIu64 " of %" PRIu64
			  " (K goes from 1 to N)", arg, k, n);
		return CLI_EXIT_USAGE;
	}
	cfg->shard = (unsigned int)k;
	cfg->shards = (unsigned int)n;
	return 0;
}

static int parse_option(void *data, int c, const char *arg)
{
	struct stress_config *cfg = data;
	int ret;

	switch (c) {
	case OPT_MINUTES:
		ret = cli_parse_seconds("--minutes", arg, 1e6, &cfg->seconds);
		cfg->seconds *= 60;
		return ret;
	case OPT_SECONDS:
		return cli_parse_seconds("--seconds", arg, 6e7, &cfg->seconds);
	case OPT_ITERATIONS:
		return cli_parse_uint("--iterations", arg, 1, UINT64_MAX,
				      &cfg->iterations);
	case OPT_SEED:
		return cli_parse_uint("--seed", arg, 0, UINT64_MAX,
				      &cfg->seed);
	case OPT_SHARD:
		return parse_shard(arg, cfg);
	case OPT_JUNIT:
		cfg->junit = arg;
		return 0;
	case OPT_JSON:
		cfg->json = arg;
		return 0;
	case OPT_OUT:
		cfg->out = arg;
		return 0;
	case OPT_SHRINK_S:
		return cli_parse_seconds("--shrink-seconds", arg, 1e6,
					 &cfg->shrink_s);
	case OPT_CHECK_EVERY:
		return cli_parse_seconds("--check-every", arg, 1e6,
					 &cfg->check_every_s);
	case OPT_STATUS_EVERY:
		return cli_parse_seconds("--status-every", arg, 1e6,
					 &cfg->status_every_s);
	}
	return CLI_EXIT_USAGE;
}

static const struct cli_options stress_cli = {
	.long_options = stress_options,
	.usage = stress_usage,
	.parse = parse_option,
};

/* The seed of iteration @i of the shard (see the top of the file). */
static uint64_t iteration_seed(const struct stress_config *cfg, uint64_t i)
{
	uint64_t j = (cfg->shard - 1) + i * cfg->shards;
	uint64_t state = cfg->seed + j * UINT64_C(0x9e3779b97f4a7c15);

	return cli_splitmix64(&state);
}

/* FNV-1a of the file at @path: the workload's identity in the report. */
static uint64_t file_fnv1a(const char *path)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	FILE *f = fopen(path, "rb");
	int ch;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF)
		h = (h ^ (uint64_t)ch) * UINT64_C(0x100000001b3);
	fclose(f);
	return h;
}

static char *path_in(const char *dir, uint64_t seed, const char *suffix)
{
	size_t len = strlen(dir) + 64;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%s/stress-%" PRIu64 "%s", dir, seed, suffix);
	return p;
}

/* TTMSIM_TEST_FAULT's value if it is a plain word, to repeat it. */
static const char *test_fault(void)
{
	const char *v = getenv("TTMSIM_TEST_FAULT");

	if (!v || !*v || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
	    strlen(v))
		return NULL;
	return v;
}

/*
 * "ttmsim run --workload FILE FLAGS" for @c at @path, with the flags
 * stress_case_run() gave run as @ex says (--watchdog, --check-every), so
 * that the replay checks what the failing run checked; a test's
 * TTMSIM_TEST_FAULT in front.
 */
static char *replay_command(const struct stress_case *c, const char *path,
			    const struct stress_exec *ex)
{
	char *argv[STRESS_MAX_ARGS + 16], buf[640];
	int n = stress_run_argv(c, path, ex, argv, buf), i;
	const char *fault = test_fault();
	size_t len = strlen(path) + (fault ? strlen(fault) : 0) + 800;
	char *cmd = malloc(len), *p;

	if (!cmd)
		return NULL;
	p = cmd;
	if (fault)
		p += snprintf(p, len, "TTMSIM_TEST_FAULT=%s ", fault);
	p += snprintf(p, len - (size_t)(p - cmd), "ttmsim");
	for (i = 0; i < n; i++)
		p += snprintf(p, len - (size_t)(p - cmd), " %s", argv[i]);
	return cmd;
}

static struct stress_result *add_result(struct stress_report *r)
{
	if (r->n_results == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct stress_result *n = realloc(r->results,
						  cap * sizeof(*n));

		if (!n)
			return NULL;
		r->results = n;
		r->cap = cap;
	}
	memset(&r->results[r->n_results], 0, sizeof(*r->results));
	return &r->results[r->n_results++];
}

/* The loop's state: what the status line tells, how cases run. */
struct stress_loop {
	const struct stress_config *cfg;
	struct stress_report r;
	uint64_t start_ns;
	struct stress_timer timer;   /* the status line */
	struct stress_exec ex;       /* how cases run */
	uint64_t seed;               /* the case running now */
	bool shrinking;              /* and it is being shrunk */
};

/*
 * A failure: keep the workload, shrink a copy, print what replays it.
 * The case's file is already at @res->workload_path; @got is how it
 * failed, which shrink candidates must repeat.
 */
static void handle_failure(struct stress_loop *l, struct stress_case *c,
			   struct stress_result *res,
			   const struct stress_outcome *got)
{
	const struct stress_config *cfg = l->cfg;
	struct stress_exec ex = l->ex;
	struct stress_case small;
	char *try_path = path_in(cfg->out, c->seed, ".try.wl");
	char *replay, how[96];
	enum stress_shrink_end end;
	unsigned int tried;

	stress_outcome_describe(got, how, sizeof(how));
	fprintf(stderr, "ttmsim stress: seed %" PRIu64 " failed (%s); "
		"workload: %s\n", c->seed, how, res->workload_path);
	if (res->message && *res->message)
		fputs(res->message, stderr);
	res->replay = replay_command(c, res->workload_path, &ex);
	if (!try_path || stress_case_copy(c, &small)) {
		free(try_path);
		return;
	}
	fprintf(stderr, "ttmsim stress: shrinking for at most %g s...\n",
		cfg->shrink_s);
	l->shrinking = true;
	end = stress_shrink(&small, got, &ex, try_path, cfg->shrink_s,
			    &tried);
	l->shrinking = false;
	res->shrink = stress_shrink_end_names[end];
	res->shrunk_path = path_in(cfg->out, c->seed, ".min.wl");
	if (res->shrunk_path && rename(try_path, res->shrunk_path) == 0) {
		replay = replay_command(&small, res->shrunk_path, &ex);
		fprintf(stderr, "ttmsim stress: %s after %u tries: %u "
			"buffers, %zu jobs, %u threads: %s\n"
			"ttmsim stress: replay: %s\n", res->shrink,
			tried, small.wl.n_bos, small.wl.n_jobs,
			small.wl.n_threads, res->shrunk_path,
			replay ? replay : "?");
		free(res->replay);
		res->replay = replay;
	} else {
		free(res->shrunk_path);
		res->shrunk_path = NULL;
		res->shrink = NULL;
		fprintf(stderr, "ttmsim stress: replay: %s\n",
			res->replay ? res->replay : "?");
	}
	stress_case_free(&small);
	free(try_path);
}

/* What a failed @got makes of stress's exit status. */
static int failure_status(const struct stress_outcome *got)
{
	return got->status == CLI_EXIT_DEADLOCK ? CLI_EXIT_DEADLOCK :
	       CLI_EXIT_FAILURE;
}

/*
 * One iteration: 0 passed, 130 interrupted, or stress's exit status for
 * its failure (res has the rest).
 */
static int iterate(struct stress_loop *l, uint64_t seed)
{
	const struct stress_config *cfg = l->cfg;
	struct stress_report *r = &l->r;
	struct stress_outcome got;
	struct stress_case c;
	struct stress_result *res = add_result(r);
	char *path = path_in(cfg->out, seed, ".wl");
	uint64_t t0 = cli_now_ns();
	unsigned int f;

	if (!res || !path || stress_case_generate(seed, &c)) {
		cli_error("stress: out of memory");
		free(path);
		if (res)
			r->n_results--;
		return CLI_EXIT_FAILURE;
	}
	res->seed = seed;
	res->threads = c.wl.n_threads;
	res->bos = c.wl.n_bos;
	res->jobs = c.wl.n_jobs;
	res->features = c.features;
	l->seed = seed;
	if (stress_case_run(&c, path, &l->ex, &got)) {
		/* Not run at all: said on stderr; not an iteration. */
		r->n_results--;
		unlink(path);
		free(path);
		stress_case_free(&c);
		return CLI_EXIT_FAILURE;
	}
	res->seconds = (double)(cli_now_ns() - t0) / 1e9;
	res->checksum = file_fnv1a(path);
	res->status = got.status;
	res->signal = got.signal;
	res->sanitizer = got.sanitizer;
	res->failed = stress_outcome_failed(&got);
	if (got.status == 130 || (stress_interrupted() && res->failed)) {
		/* Interrupted: not an iteration that ran to its end. */
		r->n_results--;
		unlink(path);
		free(path);
		stress_case_free(&c);
		return 130;
	}
	r->jobs += c.wl.n_jobs;
	for (f = 0; f < SF_COUNT; f++)
		if (c.features & (1u << f))
			r->feature_counts[f]++;
	if (!res->failed) {
		unlink(path);
		free(path);
		stress_case_free(&c);
		return 0;
	}
	res->message = stress_outcome_message(&got);
	res->klass = strdup(got.klass);
	res->workload_path = path;
	r->failures++;
	handle_failure(l, &c, res, &got);
	stress_case_free(&c);
	return failure_status(&got);
}

/* --out first: the reports may go in it. */
static int check_outputs(const struct stress_config *cfg)
{
	struct stat st;

	if (mkdir(cfg->out, 0777) && errno != EEXIST) {
		cli_error("--out: cannot make '%s': %s", cfg->out,
			  strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (stat(cfg->out, &st) || !S_ISDIR(st.st_mode) ||
	    access(cfg->out, W_OK)) {
		cli_error("--out: '%s' is not a writable directory", cfg->out);
		return CLI_EXIT_USAGE;
	}
	if (cfg->junit && !stress_path_writable(cfg->junit)) {
		cli_error("--junit: cannot write '%s': %s", cfg->junit,
			  strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (cfg->json && !stress_path_writable(cfg->json)) {
		cli_error("--json: cannot write '%s': %s", cfg->json,
			  strerror(errno));
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static void status_line(struct stress_loop *l, uint64_t now, bool running)
{
	const struct stress_report *r = &l->r;
	/* A case that runs has its result added already: not done yet. */
	size_t done = r->n_results - (running && !l->shrinking);

	fprintf(stderr, "ttmsim stress: %.0f s: shard %u/%u, %zu iterations, "
		"%" PRIu64 " jobs, %zu failures", (double)(now - l->start_ns) /
		1e9, r->shard, r->shards, done, r->jobs, r->failures);
	if (running)
		fprintf(stderr, "; %s seed %" PRIu64, l->shrinking ?
			"shrinking" : "running", l->seed);
	fputc('\n', stderr);
}

/* The timer's (struct stress_timer): a case is running or shrinking. */
static void status_tick(void *data, uint64_t now)
{
	status_line(data, now, true);
}

static int write_reports(const struct stress_config *cfg,
			 const struct stress_report *r)
{
	int ret = 0, err;

	if (cfg->json && (err = stress_report_json(r, cfg->json))) {
		cli_error("--json: %s: %s", cfg->json, strerror(-err));
		ret = CLI_EXIT_FAILURE;
	}
	if (cfg->junit && (err = stress_report_junit(r, cfg->junit))) {
		cli_error("--junit: %s: %s", cfg->junit, strerror(-err));
		ret = CLI_EXIT_FAILURE;
	}
	return ret;
}

static void report_free(struct stress_report *r)
{
	size_t i;

	for (i = 0; i < r->n_results; i++) {
		free(r->results[i].message);
		free(r->results[i].klass);
		free(r->results[i].workload_path);
		free(r->results[i].shrunk_path);
		free(r->results[i].replay);
	}
	free(r->results);
}

int cmd_stress(int argc, char **argv, const char *path)
{
	struct stress_config cfg = {
		.seconds = 60, .seed = 1, .shard = 1, .shards = 1,
		.out = ".", .shrink_s = 60, .check_every_s = 1,
		.status_every_s = 10,
	};
	struct stress_loop l = { .cfg = &cfg };
	struct stress_report *r = &l.r;
	struct sigaction old[2];
	uint64_t now, i;
	int ret, status = 0;

	if (!cli_parse_options(&stress_cli, &cfg, argc, argv, path, &ret))
		return ret;
	ret = check_outputs(&cfg);
	if (ret)
		return ret;
	r->seed = cfg.seed;
	r->shard = cfg.shard;
	r->shards = cfg.shards;
	r->limit_s = cfg.seconds;
	r->limit_iterations = cfg.iterations;
	fprintf(stderr, "ttmsim stress: seed %" PRIu64 ", shard %u/%u, "
		"%g s\n", cfg.seed, cfg.shard, cfg.shards, cfg.seconds);
	stress_signals_catch(old);
	l.start_ns = cli_now_ns();
	l.timer = (struct stress_timer){
		.period_ns = (uint64_t)(cfg.status_every_s * 1e9),
		.fire = status_tick, .data = &l,
	};
	l.timer.next_ns = l.start_ns + l.timer.period_ns;
	l.ex = (struct stress_exec){
		.check_every_s = cfg.check_every_s, .timer = &l.timer,
	};
	for (i = 0; !cfg.iterations || i < cfg.iterations; i++) {
		now = cli_now_ns();
		if ((double)(now - l.start_ns) / 1e9 >= cfg.seconds)
			break;
		if (stress_interrupted()) {
			status = 130;
			break;
		}
		status = iterate(&l, iteration_seed(&cfg, i));
		if (status)
			break;
	}
	r->seconds = (double)(cli_now_ns() - l.start_ns) / 1e9;
	if (status == 130)
		fprintf(stderr, "ttmsim stress: interrupted (SIG%s)\n",
			stress_interrupted() ?
			sigabbrev_np(stress_interrupted()) : "INT");
	status_line(&l, cli_now_ns(), false);
	ret = write_reports(&cfg, r);
	report_free(r);
	stress_signals_restore(old);
	return status ? status : ret;
}
