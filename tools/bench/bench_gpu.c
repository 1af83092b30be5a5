// SPDX-License-Identifier: MIT
/*
 * ttmsim bench gpu: how many jobs per second the fake GPU retires in real
 * time when it has nothing to simulate.
 *
 * One submitter thread per engine queues --jobs NOP jobs of 0 us on its
 * engine as fast as it can; the clock stops when every engine's last
 * out-fence has signalled. With --deps on, each job also depends on the
 * latest job submitted to the next engine (engine i waits on engine i+1,
 * round the ring), so the engines' progress is coupled by fence callbacks.
 * Each figure is the best of --reps repetitions; a repetition fails the
 * run (exit 1) if the GPU's counters do not add up.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "cli.h"

#define MAX_ENGINES 64

enum deps_mode { DEPS_OFF, DEPS_ON, NR_DEPS_MODES };

static const char *const deps_names[NR_DEPS_MODES] = { "off", "on" };

struct bench_config {
	uint64_t engines, jobs, reps;
	bool run_deps[NR_DEPS_MODES];
	bool json, quick;
};

/* The latest out-fence of an engine, for the next engine's jobs. */
struct latest {
	pthread_mutex_t lock;
	struct ttm_fence *fence;
} __attribute__((aligned(64)));

struct submitter {
	pthread_t thread;
	struct ttm_gpu *gpu;
	const struct bench_config *cfg;
	unsigned int engine;
	bool deps;
	pthread_barrier_t *start;
	struct latest *latest; /* one per engine */
	struct ttm_fence *last;
	int error;
} __attribute__((aligned(64)));

static struct ttm_fence *latest_get(struct latest *l)
{
	struct ttm_fence *f;

	pthread_mutex_lock(&l->lock);
	f = ttm_fence_get(l->fence);
	pthread_mutex_unlock(&l->lock);
	return f;
}

static void latest_set(struct latest *l, struct ttm_fence *f)
{
	struct ttm_fence *old;

	pthread_mutex_lock(&l->lock);
	old = l->fence;
	l->fence = ttm_fence_get(f);
	pthread_mutex_unlock(&l->lock);
	ttm_fence_put(old);
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	unsigned int n = (unsigned int)s->cfg->engines;
	struct latest *next = &s->latest[(s->engine + 1) % n];
	struct ttm_gpu_dep dep = { NULL, false };
	struct ttm_gpu_job job = {
		.engine = s->engine, .op = TTM_GPU_OP_NOP, .deps = &dep,
	};
	struct ttm_fence *f;
	uint64_t i;

	pthread_barrier_wait(s->start);
	for (i = 0; i < s->cfg->jobs; i++) {
		dep.fence = s->deps ? latest_get(next) : NULL;
		job.n_deps = dep.fence ? 1 : 0;
		s->error = ttm_gpu_submit(s->gpu, &job, &f);
		ttm_fence_put(dep.fence);
		if (s->error)
			break;
		if (s->deps)
			latest_set(&s->latest[s->engine], f);
		ttm_fence_put(s->last);
		s->last = f;
	}
	return NULL;
}

struct rep_result {
	double jobs_per_s;
	uint64_t ooo;
};

/* One repetition: a new GPU, the submitters, wait for the last fences. */
static int run_rep(const struct bench_config *cfg, bool deps,
		   struct submitter *subs, struct latest *latest,
		   struct rep_result *res)
{
	unsigned int n = (unsigned int)cfg->engines, i, started = 0;
	uint64_t start, total = cfg->engines * cfg->jobs;
	pthread_barrier_t barrier;
	struct ttm_gpu_stats st;
	struct ttm_gpu *gpu;
	int ret;

	ret = ttm_gpu_create(n, NULL, &gpu);
	if (ret) {
		cli_error("bench gpu: ttm_gpu_create: %s", strerror(-ret));
		return CLI_EXIT_FAILURE;
	}
	pthread_barrier_init(&barrier, NULL, n + 1);
	for (i = 0; i < n; i++) {
		latest[i].fence = NULL;
		subs[i] = (struct submitter){
			.gpu = gpu, .cfg = cfg, .engine = i, .deps = deps,
			.start = &barrier, .latest = latest,
		};
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&subs[i].thread, NULL, submitter_main,
				   &subs[i]))
			break;
		started++;
	}
	if (started < n) {
		/* The barrier can never open: nothing to join. Give up. */
		cli_error("bench gpu: cannot start a submitter thread");
		exit(CLI_EXIT_FAILURE);
	}
	start = cli_now_ns();
	pthread_barrier_wait(&barrier);
	for (i = 0; i < n; i++)
		pthread_join(subs[i].thread, NULL);
	for (i = 0; i < n; i++)
		if (subs[i].last)
			ttm_fence_wait(subs[i].last, false, -1);
	res->jobs_per_s = (double)total * 1e9 /
			  (double)(cli_now_ns() - start);
	ttm_gpu_get_stats(gpu, &st);
	res->ooo = st.out_of_order_retirements;
	ret = CLI_EXIT_OK;
	for (i = 0; i < n; i++) {
		if (subs[i].error) {
			cli_error("bench gpu: ttm_gpu_submit: %s",
				  strerror(-subs[i].error));
			ret = CLI_EXIT_FAILURE;
		}
		ttm_fence_put(subs[i].last);
		ttm_fence_put(latest[i].fence);
	}
	if (!ret && (st.submitted != total || st.run != total)) {
		cli_error("bench gpu: %llu jobs submitted, %llu run, %llu "
			  "expected", (unsigned long long)st.submitted,
			  (unsigned long long)st.run,
			  (unsigned long long)total);
		ret = CLI_EXIT_FAILURE;
	}
	ttm_gpu_destroy(gpu);
	pthread_barrier_destroy(&barrier);
	return ret;
}

static void print_json(const struct bench_config *cfg,
		       struct rep_result (*res)[NR_DEPS_MODES],
		       const struct rep_result *best, double wall_s)
{
	const char *sep = "";
	uint64_t rep;
	int d;

	fputs("{\n  \"tool\": \"ttmsim\",\n  \"version\": ", stdout);
	cli_json_string(stdout, TTMSIM_VERSION);
	printf(",\n  \"benchmark\": \"gpu\",\n  \"config\": {\"engines\": "
	       "%llu, \"jobs_per_engine\": %llu, \"reps\": %llu, "
	       "\"op\": \"nop\", \"duration_us\": 0, \"quick\": %s, "
	       "\"online_cpus\": %ld},\n  \"results\": [\n",
	       (unsigned long long)cfg->engines,
	       (unsigned long long)cfg->jobs, (unsigned long long)cfg->reps,
	       cfg->quick ? "true" : "false", sysconf(_SC_NPROCESSORS_ONLN));
	for (d = 0; d < NR_DEPS_MODES; d++) {
		if (!cfg->run_deps[d])
			continue;
		printf("%s    {\"deps\": \"%s\", \"jobs_per_s\": ", sep,
		       deps_names[d]);
		cli_json_number(stdout, best[d].jobs_per_s, 1);
		printf(", \"out_of_order_retirements\": %llu, "
		       "\"reps_jobs_per_s\": [",
		       (unsigned long long)best[d].ooo);
		for (rep = 0; rep < cfg->reps; rep++) {
			fputs(rep ? ", " : "", stdout);
			cli_json_number(stdout, res[rep][d].jobs_per_s, 1);
		}
		fputs("]}", stdout);
		sep = ",\n";
	}
	fputs("\n  ],\n  \"counters_ok\": true,\n  \"wall_s\": ", stdout);
	cli_json_number(stdout, wall_s, 3);
	fputs("\n}\n", stdout);
}

static void print_table(const struct bench_config *cfg,
			struct rep_result (*res)[NR_DEPS_MODES],
			const struct rep_result *best, double wall_s)
{
	uint64_t rep;
	int d;

	printf("bench gpu: %llu engines, %llu NOP jobs of 0 us per engine, "
	       "one submitter thread each, real time; best of %llu\n\n",
	       (unsigned long long)cfg->engines,
	       (unsigned long long)cfg->jobs, (unsigned long long)cfg->reps);
	printf("  %-5s %12s %12s  %s\n", "deps", "jobs/s", "out-of-order",
	       "every rep (jobs/s)");
	for (d = 0; d < NR_DEPS_MODES; d++) {
		if (!cfg->run_deps[d])
			continue;
		printf("  %-5s %12.0f %12llu ", deps_names[d],
		       best[d].jobs_per_s, (unsigned long long)best[d].ooo);
		for (rep = 0; rep < cfg->reps; rep++)
			printf(" %.0f", res[rep][d].jobs_per_s);
		putchar('\n');
	}
	printf("\ncounters: ok\nwall time: %.1f s\n", wall_s);
}

static int run_bench(const struct bench_config *cfg)
{
	struct rep_result (*res)[NR_DEPS_MODES], best[NR_DEPS_MODES] = {
		{ 0 }
	};
	struct submitter *subs;
	struct latest *latest;
	uint64_t rep, start = cli_now_ns(), i;
	int d, ret = CLI_EXIT_OK;
	double wall_s;

	res = calloc(cfg->reps, sizeof(*res));
	subs = aligned_alloc(64, cfg->engines * sizeof(*subs));
	latest = aligned_alloc(64, cfg->engines * sizeof(*latest));
	if (!res || !subs || !latest) {
		cli_error("bench gpu: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (i = 0; i < cfg->engines; i++)
		pthread_mutex_init(&latest[i].lock, NULL);
	/* Repetitions outermost: drift hits both modes alike. */
	for (rep = 0; rep < cfg->reps && !ret; rep++) {
		for (d = 0; d < NR_DEPS_MODES && !ret; d++) {
			if (!cfg->run_deps[d])
				continue;
			ret = run_rep(cfg, d == DEPS_ON, subs, latest,
				      &res[rep][d]);
			if (res[rep][d].jobs_per_s > best[d].jobs_per_s)
				best[d] = res[rep][d];
		}
	}
	for (i = 0; i < cfg->engines; i++)
		pthread_mutex_destroy(&latest[i].lock);
	if (ret)
		goto out;
	wall_s = (double)(cli_now_ns() - start) / 1e9;
	if (cfg->json)
		print_json(cfg, res, best, wall_s);
	else
		print_table(cfg, res, best, wall_s);
out:
	free(latest);
	free(subs);
	free(res);
	return ret;
}

static void bench_gpu_usage(const char *path)
{
	printf("usage: ttmsim %s [OPTIONS]\n"
	       "\n"
	       "Jobs per second the fake GPU retires in real time: one\n"
	       "submitter thread per engine queues NOP jobs of 0 us on its\n"
	       "engine; with dependencies, each job also waits for the\n"
	       "latest job of the next engine. Each figure is the best of\n"
	       "several repetitions. Fails (exit 1) if the GPU's counters\n"
	       "do not add up.\n"
	       "\n"
	       "Options:\n"
	       "  --engines N       engines, one submitter each (default 4)\n"
	       "  --jobs N          jobs per engine per rep (default 200000)\n"
	       "  --reps N          repetitions, the best counts (default 5)\n"
	       "  --deps MODE       on, off or both (default both)\n"
	       "  --quick           2 reps of 20000 jobs, unless given\n"
	       "  --json            print one JSON object instead of a table\n"
	       "  -h, --help        show this help\n", path);
}

enum {
	OPT_HELP = CLI_OPT_LONG,
	OPT_ENGINES,
	OPT_JOBS,
	OPT_REPS,
	OPT_DEPS,
	OPT_QUICK,
	OPT_JSON,
};

static const struct option bench_gpu_options[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "engines", required_argument, NULL, OPT_ENGINES },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "deps", required_argument, NULL, OPT_DEPS },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

static int parse_deps(const char *arg, struct bench_config *cfg)
{
	bool both = !strcmp(arg, "both");

	if (!both && strcmp(arg, "on") && strcmp(arg, "off")) {
		cli_error("--deps: '%s' is not one of on, off, both", arg);
		return CLI_EXIT_USAGE;
	}
	cfg->run_deps[DEPS_OFF] = both || !strcmp(arg, "off");
	cfg->run_deps[DEPS_ON] = both || !strcmp(arg, "on");
	return 0;
}

int cmd_bench_gpu(int argc, char **argv, const char *path)
{
	/* 0: not given; the defaults depend on --quick. */
	struct bench_config cfg = {
		.engines = 4, .run_deps = { true, true },
	};
	int c, ret = 0;

	cli_getopt_reset();
	while (!ret && (c = getopt_long(argc, argv, ":h", bench_gpu_options,
					NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			bench_gpu_usage(path);
			return CLI_EXIT_OK;
		case OPT_ENGINES:
			ret = cli_parse_uint("--engines", optarg, 1,
					     MAX_ENGINES, &cfg.engines);
			break;
		case OPT_JOBS:
			ret = cli_parse_uint("--jobs", optarg, 1,
					     UINT64_C(1) << 32, &cfg.jobs);
			break;
		case OPT_REPS:
			ret = cli_parse_uint("--reps", optarg, 1, 1000,
					     &cfg.reps);
			break;
		case OPT_DEPS:
			ret = parse_deps(optarg, &cfg);
			break;
		case OPT_QUICK:
			cfg.quick = true;
			break;
		case OPT_JSON:
			cfg.json = true;
			break;
		default:
			return cli_getopt_error(path, c, argv);
		}
	}
	if (ret || cli_no_operands(path, argc, argv))
		return CLI_EXIT_USAGE;
	if (!cfg.reps)
		cfg.reps = cfg.quick ? 2 : 5;
	if (!cfg.jobs)
		cfg.jobs = cfg.quick ? 20000 : 200000;
	return run_bench(&cfg);
}
