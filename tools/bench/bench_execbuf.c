// SPDX-License-Identifier: MIT
/*
 * ttmsim bench execbuf: jobs per second through ttm_execbuf_submit() when
 * several clients lock overlapping random buffer lists at once.
 *
 * --threads threads, each with its own client, submit --jobs jobs each;
 * a job writes --per-job distinct random buffers out of --bos (NOP, 0 us:
 * no GPU time, so the figure is the submitter's). The buffers are created
 * by the first client and given to the others with ttm_client_bo_add().
 * Two orders, each under both reservation classes (Wait-Die, Wound-Wait):
 *  - unsorted: the buffers in the random order they were picked in, so
 *    transactions cross and the wound/wait protocol must back off;
 *  - sorted: the thread looks every handle up (ttm_client_lookup()) and
 *    sorts the list by buffer address before submitting, so that every
 *    transaction locks in one global order: no deadlock cycle can form.
 *    Back-offs still happen: ww_mutex judges by age, not by cycles, so a
 *    Wait-Die transaction holding locks still dies when it meets an older
 *    holder, and a wounded Wound-Wait one when it next has to wait.
 * The clock runs from the start barrier until ttm_execbuf_wait_idle()
 * returns. With --phases, each client's phase events (event sink) are
 * summed per mode: where a submission's time goes, back-offs included.
 * Each figure is the best of --reps repetitions, a fresh device, GPU and
 * clients per repetition. A run fails (exit 1) unless every job
 * was accepted and completed (submitted == completed after wait_idle) and
 * ttm_device_check() passes; with the default VRAM, which holds every
 * buffer, an eviction also fails it (the run would not measure what it
 * says).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "bench.h"
#include "phase.h"

#define MAX_THREADS 256
#define MAX_ENGINES 64
#define MAX_BOS (UINT64_C(1) << 20)
#define BO_SIZE UINT64_C(4096)
/* No progress for this long while jobs are left: a deadlock. */
#define STALL_NS (UINT64_C(10) * 1000000000)

enum order { ORDER_UNSORTED, ORDER_SORTED, NR_ORDERS };
enum klass { CLASS_WAIT_DIE, CLASS_WOUND_WAIT, NR_CLASSES };

static const char *const order_names[NR_ORDERS] = { "unsorted", "sorted" };
static const char *const class_names[NR_CLASSES] = { "wait-die",
						     "wound-wait" };

struct execbuf_config {
	struct bench_common c; /* first: the harness's */
	uint64_t threads, bos, per_job, jobs, engines, vram;
	bool vram_given; /* --vram: eviction allowed */
	bool phases;     /* --phases: the event sink on */
};
_Static_assert(offsetof(struct execbuf_config, c) == 0,
	       "the harness's first");

static const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;

/* One repetition of one mode. */
struct rep_result {
	uint64_t jobs, backoffs, restarts, evictions, bytes_moved;
	double elapsed_s, jobs_per_s;
};

#define NR_PHASES (TTM_EXECBUF_PHASE_QUEUE + 1)

/* Time in each phase of a submission (--phases), summed. */
struct phase_sums {
	uint64_t ns[NR_PHASES];
	uint64_t count[NR_PHASES];
};

struct mode_result {
	struct rep_result best; /* the rep with the most jobs/s */
	struct bench_stat jobs_per_s;
	struct phase_sums phases; /* over every rep */
	uint64_t jobs;            /* over every rep */
	struct rep_result *reps;
};

struct run;

struct worker {
	struct run *run;
	pthread_t thread;
	struct ttm_client *client;
	uint32_t *handles; /* this client's handle of each buffer */
	unsigned int *perm; /* a permutation of the buffer indices */
	struct ttm_execbuf_bo *list;
	uintptr_t *addr;    /* sorted mode: the address of list[i]'s bo */
	uint64_t rng;
	unsigned int engine;
	uint64_t done;      /* atomic: jobs submitted */
	int error;          /* the first submission error */
	const char *what;
	struct phase_sums phases;
} __attribute__((aligned(64)));

struct run {
	const struct execbuf_config *cfg;
	enum order order;
	struct ttm_device *dev;
	pthread_barrier_t start;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int finished; /* under lock */
	int stop;              /* atomic: a worker failed */
};

/* Choose per_job distinct buffers, in a random order. */
static void pick_bos(struct worker *w)
{
	const struct execbuf_config *cfg = w->run->cfg;
	unsigned int i;

	bench_pick(w->perm, (unsigned int)cfg->bos,
		   (unsigned int)cfg->per_job, &w->rng);
	for (i = 0; i < cfg->per_job; i++)
		w->list[i].handle = w->handles[w->perm[i]];
}

/* For qsort(): entries paired with their addresses. */
struct keyed {
	uintptr_t addr;
	uint32_t handle;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Sort w->list by buffer address, the handles looked up as the kernel
 * would (a reference each, dropped at once: the handle keeps the buffer).
 * Return 0, -ENOENT or -ENOMEM.
 */
static int sort_by_address(struct worker *w, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		struct ttm_bo *bo = ttm_client_lookup(w->client,
						      w->list[i].handle);

		if (!bo)
			return -ENOENT;
		w->addr[i] = (uintptr_t)bo;
		ttm_bo_put(bo);
	}
	if (n <= 32) {
		/* Insertion sort: a job's list is short. */
		for (i = 1; i < n; i++) {
			uintptr_t a = w->addr[i];
			uint32_t h = w->list[i].handle;

			for (j = i; j > 0 && w->addr[j - 1] > a; j--) {
				w->addr[j] = w->addr[j - 1];
				w->list[j].handle = w->list[j - 1].handle;
			}
			w->addr[j] = a;
			w->list[j].handle = h;
		}
		return 0;
	}
	{
		struct keyed *k = malloc(n * sizeof(*k));

		if (!k)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			k[i] = (struct keyed){ w->addr[i], w->list[i].handle };
		qsort(k, n, sizeof(*k), cmp_keyed);
		for (i = 0; i < n; i++) {
			w->addr[i] = k[i].addr;
			w->list[i].handle = k[i].handle;
		}
		free(k);
	}
	return 0;
}

/* The event sink of --phases: in the worker's own thread. */
static void on_event(const struct ttm_execbuf_event *ev, void *data)
{
	struct worker *w = data;

	if ((unsigned int)ev->phase < NR_PHASES) {
		w->phases.ns[ev->phase] += ev->end_ns - ev->begin_ns;
		w->phases.count[ev->phase]++;
	}
}

static void worker_finish(struct worker *w)
{
	struct run *run = w->run;

	pthread_mutex_lock(&run->lock);
	run->finished++;
	pthread_cond_signal(&run->cond);
	pthread_mutex_unlock(&run->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;
	const struct execbuf_config *cfg = run->cfg;
	unsigned int n = (unsigned int)cfg->per_job;
	uint64_t j;
	int ret;

	pthread_barrier_wait(&run->start);
	for (j = 0; j < cfg->jobs; j++) {
		struct ttm_execbuf_args args = {
			.engine = w->engine,
			.bos = w->list,
			.n_bos = n,
			.op = TTM_GPU_OP_NOP,
		};

		if (__atomic_load_n(&run->stop, __ATOMIC_RELAXED))
			break;
		pick_bos(w);
		if (run->order == ORDER_SORTED) {
			ret = sort_by_address(w, n);
			if (ret) {
				w->what = ret == -ENOENT ? "ttm_client_lookup" :
							   "sorting";
				w->error = ret;
				break;
			}
		}
		ret = ttm_execbuf_submit(w->client, &args);
		if (ret) {
			w->what = "ttm_execbuf_submit";
			w->error = ret;
			break;
		}
		ttm_fence_put(args.out_fence);
		__atomic_store_n(&w->done, j + 1, __ATOMIC_RELAXED);
	}
	if (w->error)
		__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
	worker_finish(w);
	return NULL;
}

/* -------------------------------------------------------------------- */
/* One repetition: a fresh GPU, device, clients and buffers. */

struct setup {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
};

static int fail(const char *what, int ret)
{
	cli_error("bench execbuf: %s: %s", what, strerror(-ret));
	return CLI_EXIT_FAILURE;
}

/* Clients, buffers (made by the first client, added to the others). */
static int make_clients(const struct execbuf_config *cfg, struct run *run,
			struct worker *workers)
{
	struct ttm_client *owner;
	uint64_t t, b;
	int ret;

	for (t = 0; t < cfg->threads; t++) {
		ret = ttm_client_open(run->dev, &workers[t].client);
		if (ret)
			return fail("ttm_client_open", ret);
	}
	owner = workers[0].client;
	for (b = 0; b < cfg->bos; b++) {
		struct ttm_bo *bo;

		ret = ttm_client_bo_create(owner, BO_SIZE, &vram_gtt, 0,
					   &workers[0].handles[b]);
		if (ret)
			return fail("ttm_client_bo_create", ret);
		bo = ttm_client_lookup(owner, workers[0].handles[b]);
		if (!bo)
			return fail("ttm_client_lookup", -ENOENT);
		for (t = 1; t < cfg->threads; t++) {
			ret = ttm_client_bo_add(workers[t].client, bo,
						&workers[t].handles[b], NULL);
			if (ret) {
				ttm_bo_put(bo);
				return fail("ttm_client_bo_add", ret);
			}
		}
		ttm_bo_put(bo);
	}
	return 0;
}

static void prepare_workers(const struct execbuf_config *cfg, struct run *run,
			    struct worker *workers)
{
	uint64_t t, b;
	unsigned int i;

	for (t = 0; t < cfg->threads; t++) {
		struct worker *w = &workers[t];
		/* The same jobs in every mode and repetition. */
		uint64_t seed = cfg->c.seed ^ (0x632be59bd9b4e019ull * (t + 1));

		w->run = run;
		w->rng = cli_splitmix64(&seed) | 1;
		w->engine = (unsigned int)(t % cfg->engines);
		w->done = 0;
		w->error = 0;
		w->what = NULL;
		memset(&w->phases, 0, sizeof(w->phases));
		if (cfg->phases)
			ttm_client_set_event_sink(w->client, on_event, w);
		for (b = 0; b < cfg->bos; b++)
			w->perm[b] = (unsigned int)b;
		for (i = 0; i < cfg->per_job; i++) {
			/* Every job writes all its buffers. */
			w->list[i].flags = TTM_EXECBUF_BO_WRITE;
			/* VRAM only: with a small --vram, validation evicts. */
			w->list[i].placement = &vram_only;
		}
	}
}

static uint64_t jobs_done(const struct execbuf_config *cfg,
			  struct worker *workers)
{
	uint64_t t, sum = 0;

	for (t = 0; t < cfg->threads; t++)
		sum += __atomic_load_n(&workers[t].done, __ATOMIC_RELAXED);
	return sum;
}

/*
 * Wait for every worker to leave its loop. No progress for STALL_NS
 * while some are still in it is a deadlock: report and end the process
 * (the stuck threads use the device, which cannot be freed).
 */
static void wait_workers(const struct execbuf_config *cfg, struct run *run,
			 struct worker *workers, const char *mode)
{
	uint64_t last = 0, last_ns = cli_now_ns(), now;

	pthread_mutex_lock(&run->lock);
	while (run->finished < cfg->threads) {
		struct timespec ts;
		uint64_t done;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&run->cond, &run->lock, &ts);
		if (run->finished == cfg->threads)
			break;
		done = jobs_done(cfg, workers);
		now = cli_now_ns();
		if (done != last) {
			last = done;
			last_ns = now;
		} else if (now - last_ns > STALL_NS) {
			cli_error("bench execbuf: %s: no job submitted for "
				  "%.0f s with %llu of %llu done: deadlock",
				  mode, (double)STALL_NS / 1e9,
				  (unsigned long long)done,
				  (unsigned long long)(cfg->jobs *
						       cfg->threads));
			exit(CLI_EXIT_DEADLOCK);
		}
	}
	pthread_mutex_unlock(&run->lock);
}

/* Every job accepted and completed, accounting sound, no stray eviction. */
static int check_rep(const struct execbuf_config *cfg, struct run *run,
		     const struct ttm_execbuf_stats *st,
		     const struct ttm_device_stats *ds, const char *mode)
{
	uint64_t want = cfg->jobs * cfg->threads;
	char why[256];

	if (st->submitted != want || st->completed != want ||
	    st->rejected || st->failed || st->in_flight) {
		cli_error("bench execbuf: %s: after wait_idle: submitted "
			  "%llu, completed %llu, rejected %llu, failed %llu, "
			  "in flight %llu; expected %llu submitted and "
			  "completed", mode,
			  (unsigned long long)st->submitted,
			  (unsigned long long)st->completed,
			  (unsigned long long)st->rejected,
			  (unsigned long long)st->failed,
			  (unsigned long long)st->in_flight,
			  (unsigned long long)want);
		return CLI_EXIT_FAILURE;
	}
	if (ttm_device_check(run->dev, why, sizeof(why))) {
		cli_error("bench execbuf: %s: accounting invariant broken: %s",
			  mode, why);
		return CLI_EXIT_FAILURE;
	}
	if (!cfg->vram_given && ds->evictions) {
		cli_error("bench execbuf: %s: %llu evictions in a VRAM that "
			  "holds every buffer", mode,
			  (unsigned long long)ds->evictions);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

static int run_rep(const struct execbuf_config *cfg, enum order order,
		   enum klass klass, struct worker *workers,
		   struct rep_result *res, struct phase_sums *phases)
{
	struct ttm_device_options opts = {
		.vram_size = cfg->vram,
		.gtt_size = TTM_DEFAULT_GTT_SIZE > 2 * cfg->bos * BO_SIZE ?
			    TTM_DEFAULT_GTT_SIZE : 2 * cfg->bos * BO_SIZE,
		.wound_wait = klass == CLASS_WOUND_WAIT,
		.copy_engine = 0,
	};
	struct run run = { .cfg = cfg, .order = order };
	struct ttm_execbuf_stats st;
	struct ttm_device_stats ds;
	struct ttm_gpu *gpu = NULL;
	pthread_condattr_t attr;
	char mode[64];
	uint64_t t, started = 0, start, end;
	int ret;

	snprintf(mode, sizeof(mode), "%s %s", order_names[order],
		 class_names[klass]);
	pthread_mutex_init(&run.lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&run.cond, &attr);
	pthread_condattr_destroy(&attr);

	ret = ttm_gpu_create((unsigned int)cfg->engines, NULL, &gpu);
	if (ret) {
		ret = fail("ttm_gpu_create", ret);
		goto out;
	}
	opts.gpu = gpu;
	ret = ttm_device_create(&opts, &run.dev);
	if (ret) {
		ret = fail("ttm_device_create", ret);
		goto out;
	}
	ret = make_clients(cfg, &run, workers);
	if (ret)
		goto out;
	prepare_workers(cfg, &run, workers);

	pthread_barrier_init(&run.start, NULL, (unsigned int)cfg->threads + 1);
	for (t = 0; t < cfg->threads; t++) {
		ret = pthread_create(&workers[t].thread, NULL, worker_main,
				     &workers[t]);
		if (ret) {
			cli_error("bench execbuf: cannot create a thread: %s",
				  strerror(ret));
			exit(CLI_EXIT_FAILURE);
		}
		started++;
	}
	pthread_barrier_wait(&run.start);
	start = cli_now_ns();
	wait_workers(cfg, &run, workers, mode);
	for (t = 0; t < started; t++)
		pthread_join(workers[t].thread, NULL);
	ttm_execbuf_wait_idle(run.dev);
	end = cli_now_ns();
	pthread_barrier_destroy(&run.start);

	for (t = 0; t < cfg->threads; t++) {
		if (workers[t].error) {
			cli_error("bench execbuf: %s: thread %llu: %s: %s",
				  mode, (unsigned long long)t,
				  workers[t].what,
				  strerror(-workers[t].error));
			ret = CLI_EXIT_FAILURE;
			goto out;
		}
	}
	ttm_execbuf_get_stats(run.dev, &st);
	ttm_device_get_stats(run.dev, &ds);
	ret = check_rep(cfg, &run, &st, &ds, mode);
	if (ret)
		goto out;
	for (t = 0; t < cfg->threads; t++) {
		unsigned int p;

		for (p = 0; p < NR_PHASES; p++) {
			phases->ns[p] += workers[t].phases.ns[p];
			phases->count[p] += workers[t].phases.count[p];
		}
	}
	res->jobs = st.completed;
	res->backoffs = st.backoffs;
	res->restarts = st.restarts;
	res->evictions = ds.evictions;
	res->bytes_moved = ds.bytes_moved;
	res->elapsed_s = (double)(end - start) / 1e9;
	res->jobs_per_s = (double)res->jobs / res->elapsed_s;
out:
	for (t = 0; t < cfg->threads; t++) {
		ttm_client_close(workers[t].client);
		workers[t].client = NULL;
	}
	/* A device left alive keeps its GPU: free neither. */
	if (ttm_device_destroy(run.dev))
		ret = fail("device destroy", -EBUSY);
	else
		ttm_gpu_destroy(gpu);
	pthread_cond_destroy(&run.cond);
	pthread_mutex_destroy(&run.lock);
	return ret;
}

/* -------------------------------------------------------------------- */
/* Output. */

static double per_1k(uint64_t count, uint64_t jobs)
{
	return jobs ? 1000.0 * (double)count / (double)jobs : 0.0;
}

static void execbuf_print_config(const void *data)
{
	const struct execbuf_config *cfg = data;

	printf("config: threads %llu (a client each), buffers %llu of %llu "
	       "bytes, %llu per job, %llu jobs per thread, engines %llu, "
	       "reps %llu (best of), seed %llu%s\n",
	       (unsigned long long)cfg->threads, (unsigned long long)cfg->bos,
	       (unsigned long long)BO_SIZE, (unsigned long long)cfg->per_job,
	       (unsigned long long)cfg->jobs,
	       (unsigned long long)cfg->engines,
	       (unsigned long long)cfg->c.reps,
	       (unsigned long long)cfg->c.seed, cfg->c.quick ? ", quick" : "");
	printf("VRAM %llu KiB%s\n", (unsigned long long)(cfg->vram >> 10),
	       cfg->vram_given ? " (--vram: jobs may evict)" :
				 " (holds every buffer: no eviction)");
}

static void print_row(enum order o, enum klass k, const struct mode_result *m)
{
	const struct rep_result *r = &m->best;

	printf("  %-9s %-11s %10.0f %10.0f %12.2f %12.2f %13.2f\n",
	       order_names[o], class_names[k], r->jobs_per_s,
	       m->jobs_per_s.median, per_1k(r->backoffs, r->jobs),
	       per_1k(r->restarts, r->jobs), per_1k(r->evictions, r->jobs));
	fflush(stdout);
}

/* Mean us per job in each phase; back-off also per back-off. */
static void print_phases(struct mode_result (*res)[NR_CLASSES])
{
	unsigned int p;
	int o, k;

	printf("\nphases (--phases), mean us per job over every rep; "
	       "back-off also per back-off:\n");
	printf("  %-9s %-11s", "order", "class");
	for (p = 0; p < NR_PHASES; p++)
		printf(" %8s", cli_phase_name(p));
	printf(" %11s\n", "us/backoff");
	for (o = 0; o < NR_ORDERS; o++) {
		for (k = 0; k < NR_CLASSES; k++) {
			const struct mode_result *m = &res[o][k];
			const struct phase_sums *ph = &m->phases;
			uint64_t nb = ph->count[TTM_EXECBUF_PHASE_BACKOFF];

			printf("  %-9s %-11s", order_names[o], class_names[k]);
			for (p = 0; p < NR_PHASES; p++)
				printf(" %8.2f", m->jobs ? (double)ph->ns[p] /
					1e3 / (double)m->jobs : 0.0);
			if (nb)
				printf(" %11.1f\n", (double)ph->ns[
					TTM_EXECBUF_PHASE_BACKOFF] / 1e3 /
					(double)nb);
			else
				printf(" %11s\n", "-");
		}
	}
}

static void print_tables(const struct execbuf_config *cfg,
			 struct mode_result (*res)[NR_CLASSES], uint64_t runs)
{
	int o, k;

	printf("\njobs: NOP, 0 us, every buffer written, random buffers; "
	       "real-time GPU\n");
	printf("jobs/s: the best of %llu reps, median: of the reps; "
	       "per 1k jobs: in the best rep\n",
	       (unsigned long long)cfg->c.reps);
	printf("  %-9s %-11s %10s %10s %12s %12s %13s\n", "order", "class",
	       "jobs/s", "median", "backoffs/1k", "restarts/1k",
	       "evictions/1k");
	for (o = 0; o < NR_ORDERS; o++)
		for (k = 0; k < NR_CLASSES; k++)
			print_row((enum order)o, (enum klass)k, &res[o][k]);
	if (cfg->phases)
		print_phases(res);
	printf("\nunsorted / sorted jobs/s: wait-die %.2f, wound-wait %.2f\n",
	       res[0][0].best.jobs_per_s / res[1][0].best.jobs_per_s,
	       res[0][1].best.jobs_per_s / res[1][1].best.jobs_per_s);
	printf("counters: ok (%llu runs: submitted == completed after "
	       "wait_idle, ttm_device_check passes)\n",
	       (unsigned long long)runs);
}

static struct json_object *json_rep(const struct rep_result *r)
{
	struct json_object *o = json_object_new_object();

	bench_add_u64(o, "jobs", r->jobs);
	bench_add_u64(o, "backoffs", r->backoffs);
	bench_add_u64(o, "restarts", r->restarts);
	bench_add_u64(o, "evictions", r->evictions);
	bench_add_u64(o, "bytes_moved", r->bytes_moved);
	bench_add_fixed(o, "elapsed_s", r->elapsed_s, 6);
	bench_add_fixed(o, "jobs_per_s", r->jobs_per_s, 1);
	return o;
}

static void add_record(struct json_object *results,
		       const struct execbuf_config *cfg, enum order o,
		       enum klass k, const struct mode_result *m)
{
	struct json_object *r = bench_record(results, "submit"), *a;
	const struct rep_result *b = &m->best;
	uint64_t rep;
	unsigned int p;

	bench_add_string(r, "order", order_names[o]);
	bench_add_string(r, "class", class_names[k]);
	bench_add_stat(r, "jobs_per_s", &m->jobs_per_s, 1);
	bench_add_fixed(r, "backoffs_per_1k_jobs", per_1k(b->backoffs, b->jobs),
			3);
	bench_add_fixed(r, "restarts_per_1k_jobs", per_1k(b->restarts, b->jobs),
			3);
	bench_add_fixed(r, "evictions_per_1k_jobs",
			per_1k(b->evictions, b->jobs), 3);
	if (cfg->phases) {
		a = json_object_new_object();
		for (p = 0; p < NR_PHASES; p++)
			bench_add_fixed(a, cli_phase_name(p), m->jobs ?
					(double)m->phases.ns[p] /
					(double)m->jobs : 0, 1);
		json_object_object_add(r, "phase_ns_per_job", a);
		bench_add_u64(r, "backoff_phases",
			      m->phases.count[TTM_EXECBUF_PHASE_BACKOFF]);
	}
	a = bench_add_array(r, "reps");
	for (rep = 0; rep < cfg->c.reps; rep++)
		json_object_array_add(a, json_rep(&m->reps[rep]));
}

/* -------------------------------------------------------------------- */
/* The command. */

static int execbuf_measure(const void *data, struct json_object *results)
{
	const struct execbuf_config *cfg = data;
	struct mode_result res[NR_ORDERS][NR_CLASSES];
	struct rep_result *reps;
	struct worker *workers;
	uint64_t t, rep, runs = 0;
	int o, k, ret = CLI_EXIT_OK;

	memset(res, 0, sizeof(res));
	reps = calloc(NR_ORDERS * NR_CLASSES * cfg->c.reps, sizeof(*reps));
	workers = aligned_alloc(64, cfg->threads * sizeof(*workers));
	if (workers)
		memset(workers, 0, cfg->threads * sizeof(*workers));
	if (!reps || !workers) {
		cli_error("bench execbuf: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (t = 0; t < cfg->threads; t++) {
		struct worker *w = &workers[t];

		w->handles = calloc(cfg->bos, sizeof(*w->handles));
		w->perm = calloc(cfg->bos, sizeof(*w->perm));
		w->list = calloc(cfg->per_job, sizeof(*w->list));
		w->addr = calloc(cfg->per_job, sizeof(*w->addr));
		if (!w->handles || !w->perm || !w->list || !w->addr) {
			cli_error("bench execbuf: out of memory");
			ret = CLI_EXIT_FAILURE;
			goto out;
		}
	}
	for (o = 0; o < NR_ORDERS; o++)
		for (k = 0; k < NR_CLASSES; k++)
			res[o][k].reps = reps + ((size_t)o * NR_CLASSES + k) *
						cfg->c.reps;

	/* Repetitions outermost: drift hits every mode alike. */
	for (rep = 0; rep < cfg->c.reps; rep++) {
		for (o = 0; o < NR_ORDERS; o++) {
			for (k = 0; k < NR_CLASSES; k++) {
				struct mode_result *r = &res[o][k];

				ret = run_rep(cfg, (enum order)o,
					      (enum klass)k, workers,
					      &r->reps[rep], &r->phases);
				if (ret)
					goto out;
				r->jobs += r->reps[rep].jobs;
				runs++;
				if (rep == 0 || r->reps[rep].jobs_per_s >
						r->best.jobs_per_s)
					r->best = r->reps[rep];
			}
		}
	}
	for (o = 0; o < NR_ORDERS; o++) {
		for (k = 0; k < NR_CLASSES; k++) {
			struct mode_result *m = &res[o][k];

			bench_stat(&m->jobs_per_s, &m->reps[0].jobs_per_s,
				   sizeof(*m->reps), cfg->c.reps,
				   BENCH_HIGHER);
			add_record(results, cfg, (enum order)o, (enum klass)k,
				   m);
		}
	}
	if (!cfg->c.json)
		print_tables(cfg, res, runs);
out:
	for (t = 0; workers && t < cfg->threads; t++) {
		free(workers[t].handles);
		free(workers[t].perm);
		free(workers[t].list);
		free(workers[t].addr);
	}
	free(workers);
	free(reps);
	return ret;
}

static int execbuf_check(void *data)
{
	struct execbuf_config *cfg = data;

	if (cfg->per_job > cfg->bos) {
		cli_error("--per-job: '%llu' is more than --bos (%llu)",
			  (unsigned long long)cfg->per_job,
			  (unsigned long long)cfg->bos);
		return CLI_EXIT_USAGE;
	}
	/* --vram's least value is not 0: 0 is "not given". */
	cfg->vram_given = cfg->vram != 0;
	if (cfg->vram_given && cfg->vram < cfg->per_job * BO_SIZE) {
		cli_error("--vram: '%llu' cannot hold one job's %llu buffers "
			  "of %llu bytes", (unsigned long long)cfg->vram,
			  (unsigned long long)cfg->per_job,
			  (unsigned long long)BO_SIZE);
		return CLI_EXIT_USAGE;
	}
	if (!cfg->vram)
		cfg->vram = cfg->bos * BO_SIZE > TTM_DEFAULT_VRAM_SIZE ?
			    cfg->bos * BO_SIZE : TTM_DEFAULT_VRAM_SIZE;
	if (!cfg->engines)
		cfg->engines = cfg->threads < MAX_ENGINES ? cfg->threads :
							    MAX_ENGINES;
	return 0;
}

static void execbuf_json_config(const void *data, struct json_object *config)
{
	const struct execbuf_config *cfg = data;

	bench_add_u64(config, "bo_bytes", BO_SIZE);
	json_object_object_add(config, "vram_given",
			       json_object_new_boolean(cfg->vram_given));
}

static const struct execbuf_config execbuf_defaults = {
	.threads = 4, .bos = 1000, .per_job = 8, .jobs = 20000,
};

static const struct bench_option execbuf_options[] = {
	{
		.name = "threads", .arg = "N",
		.help = "submitting threads (default 4)",
		.offset = BENCH_AT(struct execbuf_config, threads, uint64_t),
		.min = 1, .max = MAX_THREADS,
	},
	{
		.name = "bos", .arg = "N",
		.help = "buffers of 4 KiB (default 1000)",
		.offset = BENCH_AT(struct execbuf_config, bos, uint64_t),
		.min = 1, .max = MAX_BOS,
	},
	{
		.name = "per-job", .arg = "N",
		.help = "buffers per job, at most --bos\n(default 8)",
		.offset = BENCH_AT(struct execbuf_config, per_job, uint64_t),
		.min = 1, .max = TTM_EXECBUF_MAX_BOS,
	},
	{
		.name = "jobs", .arg = "N", .key = "jobs_per_thread",
		.help = "jobs per thread and rep (default 20000)",
		.offset = BENCH_AT(struct execbuf_config, jobs, uint64_t),
		.min = 1, .max = UINT64_C(1) << 32, .quick = 500,
	},
	{
		.name = "engines", .arg = "N",
		.help = "GPU engines, thread i submits to i mod N\n"
			"(default: one per thread, at most 64)",
		.offset = BENCH_AT(struct execbuf_config, engines, uint64_t),
		.min = 1, .max = MAX_ENGINES,
	},
	{
		.name = "vram", .arg = "BYTES", .key = "vram_bytes",
		.help = "VRAM size; jobs ask for VRAM only, so a\n"
			"VRAM smaller than the buffers makes them\n"
			"evict (default: room for every buffer)",
		.offset = BENCH_AT(struct execbuf_config, vram, uint64_t),
		.min = BO_SIZE, .max = UINT64_C(1) << 40,
	},
	{
		.name = "phases", .type = BENCH_FLAG,
		.help = "also time each phase of a submission\n"
			"(the library's event sink: lookup,\n"
			"lock, back-off, validate, queue), at a\n"
			"few clock reads per phase",
		.offset = BENCH_AT(struct execbuf_config, phases, bool),
	},
	{ .name = NULL },
};

static const char execbuf_about[] =
	"Measures jobs per second through ttm_execbuf_submit(): each\n"
	"thread has its own client and submits jobs that write\n"
	"--per-job distinct random buffers out of --bos (shared: made\n"
	"by one client, given to the others with ttm_client_bo_add),\n"
	"NOP jobs of 0 us on a real-time fake GPU, so the figure is\n"
	"the submitter's. Four modes, each the best of --reps:\n"
	"  unsorted  the buffers in random order (the wound/wait\n"
	"            protocol backs off where transactions cross),\n"
	"  sorted    each job's handles looked up and sorted by\n"
	"            buffer address first (one global lock order:\n"
	"            no deadlock possible, but the classes' age\n"
	"            rules still make some transactions back off),\n"
	"each with Wait-Die and Wound-Wait reservations. Reports\n"
	"back-offs, restarts and evictions per 1000 jobs. Fails\n"
	"(exit 1) unless every job completes (after\n"
	"ttm_execbuf_wait_idle) and ttm_device_check passes.\n";

const struct bench bench_execbuf = {
	.name = "execbuf",
	.about = execbuf_about,
	.seed_help = "seed of the per-thread PRNGs (default 1)",
	.quick_help = "2 reps, 500 jobs per thread, unless given\n"
		      "explicitly",
	.options = execbuf_options,
	.defaults = &execbuf_defaults,
	.config_size = sizeof(execbuf_defaults),
	.check = execbuf_check,
	.print_config = execbuf_print_config,
	.json_config = execbuf_json_config,
	.measure = execbuf_measure,
};

int cmd_bench_execbuf(int argc, char **argv, const char *path)
{
	return bench_main(&bench_execbuf, argc, argv, path);
}
