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
 * Two paths (--path): "direct", ttm_gpu_submit() on the engine; "sched",
 * through a fake-GPU scheduler per engine (ttm_sched_gpu_create()) and an
 * entity per submitter (ttm_sched_gpu_submit()), the out-fence being the
 * job's finished fence: what the scheduler costs on top of the engine.
 * Each figure is the best of --reps repetitions; a repetition fails the
 * run (exit 1) if the GPU's counters do not add up.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"
#include "bench.h"

#define MAX_ENGINES 64

enum deps_mode { DEPS_OFF, DEPS_ON, NR_DEPS_MODES };

static const char *const deps_names[NR_DEPS_MODES] = { "off", "on" };

/* --deps, in the order its error message lists them. */
enum { DEPS_ARG_ON, DEPS_ARG_OFF, DEPS_ARG_BOTH };

static const char *const deps_choices[] = { "on", "off", "both", NULL };

enum path_mode { PATH_DIRECT, PATH_SCHED, NR_PATHS };

static const char *const path_names[NR_PATHS] = { "direct", "sched" };

/* --path: the modes, then both. */
enum { PATH_ARG_BOTH = NR_PATHS };

static const char *const path_choices[] = { "direct", "sched", "both",
					    NULL };

/* How long teardown waits for an entity's queue: it is empty by then. */
#define ENTITY_FLUSH_NS (UINT64_C(1000) * 1000 * 1000)

struct gpu_config {
	struct bench_common c; /* first: the harness's */
	uint64_t engines, jobs;
	unsigned int deps; /* DEPS_ARG_* */
	unsigned int path; /* enum path_mode or PATH_ARG_BOTH */
};
_Static_assert(offsetof(struct gpu_config, c) == 0, "the harness's first");

static bool runs_deps(const struct gpu_config *cfg, int d)
{
	return cfg->deps == DEPS_ARG_BOTH ||
	       (cfg->deps == DEPS_ARG_ON) == (d == DEPS_ON);
}

static bool runs_path(const struct gpu_config *cfg, int p)
{
	return cfg->path == PATH_ARG_BOTH || cfg->path == (unsigned int)p;
}

/* The latest out-fence of an engine, for the next engine's jobs. */
struct latest {
	pthread_mutex_t lock;
	struct ttm_fence *fence;
} __attribute__((aligned(64)));

struct submitter {
	pthread_t thread;
	struct ttm_gpu *gpu;
	const struct gpu_config *cfg;
	unsigned int engine;
	struct ttm_sched *sched;         /* path sched: its engine's */
	struct ttm_sched_entity *entity; /* path sched: its own; else NULL */
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
		s->error = s->entity ?
			ttm_sched_gpu_submit(s->entity, &job, &f) :
			ttm_gpu_submit(s->gpu, &job, &f);
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

/* Path sched: a scheduler per engine, an entity per submitter. */
static int rings_create(struct ttm_gpu *gpu, struct submitter *subs,
			unsigned int n)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = ttm_sched_gpu_create(gpu, i, NULL, &subs[i].sched);
		if (ret == 0)
			ret = ttm_sched_entity_create(subs[i].sched,
						      TTM_SCHED_PRIORITY_NORMAL,
						      &subs[i].entity);
	}
	if (ret)
		cli_error("bench gpu: cannot create engine %u's scheduler: "
			  "%s", i - 1, strerror(-ret));
	return ret;
}

/* After the last fences: the queues are empty, nothing is killed. */
static void rings_destroy(struct submitter *subs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ttm_sched_entity_destroy(subs[i].entity, ENTITY_FLUSH_NS);
		ttm_sched_destroy(subs[i].sched);
		subs[i].entity = NULL;
		subs[i].sched = NULL;
	}
}

/*
 * One repetition: a new GPU (and its schedulers for path sched), the
 * submitters, wait for the last fences.
 */
static int run_rep(const struct gpu_config *cfg, int path, bool deps,
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
	if (path == PATH_SCHED && rings_create(gpu, subs, n)) {
		rings_destroy(subs, n);
		ttm_gpu_destroy(gpu);
		pthread_barrier_destroy(&barrier);
		return CLI_EXIT_FAILURE;
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
			cli_error("bench gpu: %s: %s", path == PATH_SCHED ?
				  "ttm_sched_gpu_submit" : "ttm_gpu_submit",
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
	rings_destroy(subs, n);
	ttm_gpu_destroy(gpu);
	pthread_barrier_destroy(&barrier);
	return ret;
}

static void gpu_print_config(const void *data)
{
	const struct gpu_config *cfg = data;

	printf("config: %llu engines, %llu NOP jobs of 0 us per engine, one "
	       "submitter thread each, real time; best of %llu\n"
	       "paths: direct = ttm_gpu_submit(), sched = a scheduler per "
	       "engine, an entity per submitter\n\n",
	       (unsigned long long)cfg->engines,
	       (unsigned long long)cfg->jobs,
	       (unsigned long long)cfg->c.reps);
}

/* One repetition's figures, for every path and deps mode. */
struct rep_row {
	struct rep_result r[NR_PATHS][NR_DEPS_MODES];
};

static void print_row(const struct gpu_config *cfg, int p, int d,
		      const struct rep_row *res, const struct rep_result *best,
		      double ratio)
{
	uint64_t rep;

	printf("  %-6s %-5s %12.0f %12llu ", path_names[p], deps_names[d],
	       best->jobs_per_s, (unsigned long long)best->ooo);
	if (ratio == ratio)
		printf("%9.2f ", ratio);
	else
		printf("%9s ", "-");
	for (rep = 0; rep < cfg->c.reps; rep++)
		printf(" %.0f", res[rep].r[p][d].jobs_per_s);
	putchar('\n');
}

static void add_record(struct json_object *results,
		       const struct gpu_config *cfg, int p, int d,
		       const struct rep_row *res, const struct rep_result *best,
		       double ratio)
{
	struct json_object *r = bench_record(results, "throughput"), *reps;
	struct bench_stat st;
	uint64_t rep;

	bench_add_string(r, "path", path_names[p]);
	bench_add_string(r, "deps", deps_names[d]);
	bench_stat(&st, &res[0].r[p][d].jobs_per_s, sizeof(res[0]),
		   cfg->c.reps, BENCH_HIGHER);
	bench_add_stat(r, "jobs_per_s", &st, 1);
	bench_add_u64(r, "out_of_order_retirements", best->ooo);
	if (p == PATH_SCHED)
		bench_add_fixed(r, "ratio_to_direct", ratio, 3);
	reps = bench_add_array(r, "reps");
	for (rep = 0; rep < cfg->c.reps; rep++) {
		struct json_object *o = json_object_new_object();

		bench_add_fixed(o, "jobs_per_s", res[rep].r[p][d].jobs_per_s,
				1);
		bench_add_u64(o, "out_of_order_retirements",
			      res[rep].r[p][d].ooo);
		json_object_array_add(reps, o);
	}
}

/*
 * The sched path's median over the direct path's, with the same deps
 * mode: NaN unless both ran. Medians, not bests: one lucky repetition
 * of either must not make the ratio.
 */
static double ratio_to_direct(const struct gpu_config *cfg,
			      const struct rep_row *res, int p, int d)
{
	struct bench_stat a, b;

	if (p != PATH_SCHED || !runs_path(cfg, PATH_DIRECT))
		return bench_ratio(0, 0);
	bench_stat(&a, &res[0].r[PATH_SCHED][d].jobs_per_s, sizeof(res[0]),
		   cfg->c.reps, BENCH_HIGHER);
	bench_stat(&b, &res[0].r[PATH_DIRECT][d].jobs_per_s, sizeof(res[0]),
		   cfg->c.reps, BENCH_HIGHER);
	return bench_ratio(a.median, b.median);
}

static int gpu_measure(const void *data, struct json_object *results)
{
	const struct gpu_config *cfg = data;
	struct rep_result best[NR_PATHS][NR_DEPS_MODES];
	struct rep_row *res;
	struct submitter *subs;
	struct latest *latest;
	uint64_t rep, i;
	int p, d, ret = CLI_EXIT_OK;

	memset(best, 0, sizeof(best));
	res = calloc(cfg->c.reps, sizeof(*res));
	subs = aligned_alloc(64, cfg->engines * sizeof(*subs));
	latest = aligned_alloc(64, cfg->engines * sizeof(*latest));
	if (!res || !subs || !latest) {
		cli_error("bench gpu: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (i = 0; i < cfg->engines; i++)
		pthread_mutex_init(&latest[i].lock, NULL);
	/* Repetitions outermost: drift hits every path and mode alike. */
	for (rep = 0; rep < cfg->c.reps && !ret; rep++) {
		for (p = 0; p < NR_PATHS && !ret; p++) {
			for (d = 0; d < NR_DEPS_MODES && !ret; d++) {
				struct rep_result *r = &res[rep].r[p][d];

				if (!runs_path(cfg, p) || !runs_deps(cfg, d))
					continue;
				ret = run_rep(cfg, p, d == DEPS_ON, subs,
					      latest, r);
				if (r->jobs_per_s > best[p][d].jobs_per_s)
					best[p][d] = *r;
			}
		}
	}
	for (i = 0; i < cfg->engines; i++)
		pthread_mutex_destroy(&latest[i].lock);
	if (ret)
		goto out;
	if (!cfg->c.json)
		printf("  %-6s %-5s %12s %12s %9s  %s\n", "path", "deps",
		       "jobs/s", "out-of-order", "/direct",
		       "every rep (jobs/s)");
	for (p = 0; p < NR_PATHS; p++) {
		for (d = 0; d < NR_DEPS_MODES; d++) {
			double ratio = ratio_to_direct(cfg, res, p, d);

			if (!runs_path(cfg, p) || !runs_deps(cfg, d))
				continue;
			if (!cfg->c.json)
				print_row(cfg, p, d, res, &best[p][d], ratio);
			add_record(results, cfg, p, d, res, &best[p][d],
				   ratio);
		}
	}
	if (!cfg->c.json)
		printf("\ncounters: ok\n");
out:
	free(latest);
	free(subs);
	free(res);
	return ret;
}

static const struct gpu_config gpu_defaults = {
	.engines = 4, .jobs = 200000, .deps = DEPS_ARG_BOTH,
	.path = PATH_ARG_BOTH,
};

static const struct bench_option gpu_options[] = {
	{
		.name = "engines", .arg = "N",
		.help = "engines, one submitter each (default 4)",
		.offset = BENCH_AT(struct gpu_config, engines, uint64_t),
		.min = 1, .max = MAX_ENGINES,
	},
	{
		.name = "jobs", .arg = "N", .key = "jobs_per_engine",
		.help = "jobs per engine per rep (default 200000)",
		.offset = BENCH_AT(struct gpu_config, jobs, uint64_t),
		.min = 1, .max = UINT64_C(1) << 32, .quick = 20000,
	},
	{
		.name = "deps", .arg = "MODE", .type = BENCH_CHOICE,
		.help = "on, off or both (default both)",
		.offset = BENCH_AT(struct gpu_config, deps, unsigned int),
		.choices = deps_choices,
	},
	{
		.name = "path", .arg = "PATH", .type = BENCH_CHOICE,
		.help = "direct (ttm_gpu_submit), sched (a scheduler\n"
			"per engine, an entity per submitter) or both\n"
			"(default both)",
		.offset = BENCH_AT(struct gpu_config, path, unsigned int),
		.choices = path_choices,
	},
	{ .name = NULL },
};

static const char gpu_about[] =
	"Jobs per second the fake GPU retires in real time: one\n"
	"submitter thread per engine queues NOP jobs of 0 us on its\n"
	"engine; with dependencies, each job also waits for the\n"
	"latest job of the next engine. Directly on the engines, or\n"
	"through a scheduler per engine (--path); the sched rows give\n"
	"their median over the direct one's (/direct). Each figure\n"
	"is the best of several repetitions. Fails (exit 1) if the\n"
	"GPU's counters do not add up.\n";

const struct bench bench_gpu = {
	.name = "gpu",
	.about = gpu_about,
	.seed_help = "accepted for bench all; nothing here is random",
	.quick_help = "2 reps of 20000 jobs, unless given",
	.options = gpu_options,
	.defaults = &gpu_defaults,
	.config_size = sizeof(gpu_defaults),
	.print_config = gpu_print_config,
	.measure = gpu_measure,
};

int cmd_bench_gpu(int argc, char **argv, const char *path)
{
	return bench_main(&bench_gpu, argc, argv, path);
}
