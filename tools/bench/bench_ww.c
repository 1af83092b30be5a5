// SPDX-License-Identifier: MIT
/*
 * ttmsim bench ww: what a ww_mutex costs next to pthread mutexes.
 *
 * Two measurements in one run, each the best of --reps repetitions:
 *  - uncontended: one thread locks and unlocks one lock in a tight loop;
 *    the ww_mutex loops run with the debug checker switched off (the lock
 *    itself) and, if it is built in, on (what checking costs);
 *  - contended: --threads threads run transactions that each lock
 *    --per-tx distinct random locks out of --locks, hold them for a busy
 *    wait, bump a plain counter per lock and unlock, under five ways of
 *    avoiding deadlock (wound-wait, wait-die, address-sorted pthread
 *    mutexes, one global mutex, trylock-all-or-retry), with the checker
 *    off unless --checker on.
 * The per-lock counters must add up to the increments the threads made: a
 * lost update means mutual exclusion failed, and the run fails.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ttmsim/ww_mutex.h"
#include "bench_ww.h"

#define MAX_PER_TX 64 /* the held set of a transaction is a uint64_t */
#define MAX_THREADS 1024
#define MAX_LOCKS (1u << 20)

static DEFINE_WW_CLASS(bench_ww_class);
static DEFINE_WD_CLASS(bench_wd_class);

const char *const ww_hold_kinds[] = { "wall", "work", NULL };
_Static_assert(offsetof(struct ww_config, c) == 0, "the harness's first");

static bool checker_built_in(const struct ww_config *cfg)
{
	return cfg->c.checker != CLI_CHECKER_ABSENT;
}

/* -------------------------------------------------------------------- */
/* Uncontended: ns per lock+unlock pair, one thread, one lock. */

struct uncontended_bench {
	const char *key;   /* JSON */
	const char *label; /* table */
	void (*loop)(uint64_t iterations);
	bool checked;      /* runs with the checker off, then on */
};

static void loop_ww_ctx(uint64_t iterations)
{
	struct ww_acquire_ctx ctx;
	struct ww_mutex lock;
	uint64_t i;

	ww_mutex_init(&lock, &bench_ww_class);
	ww_acquire_init(&ctx, &bench_ww_class);
	for (i = 0; i < iterations; i++) {
		ww_mutex_lock(&lock, &ctx);
		ww_mutex_unlock(&lock);
	}
	ww_acquire_fini(&ctx);
	ww_mutex_destroy(&lock);
}

static void loop_ww_noctx(uint64_t iterations)
{
	struct ww_mutex lock;
	uint64_t i;

	ww_mutex_init(&lock, &bench_ww_class);
	for (i = 0; i < iterations; i++) {
		ww_mutex_lock(&lock, NULL);
		ww_mutex_unlock(&lock);
	}
	ww_mutex_destroy(&lock);
}

static void loop_pthread(uint64_t iterations)
{
	pthread_mutex_t lock;
	uint64_t i;

	pthread_mutex_init(&lock, NULL);
	for (i = 0; i < iterations; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_destroy(&lock);
}

/* The floor: what any lock word costs, one CAS in and a store out. */
static void loop_atomic(uint64_t iterations)
{
	unsigned long word = 0;
	uint64_t i;

	for (i = 0; i < iterations; i++) {
		unsigned long expected = 0;

		while (!__atomic_compare_exchange_n(&word, &expected, 1, false,
						    __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
			expected = 0;
		__atomic_store_n(&word, 0, __ATOMIC_RELEASE);
	}
}

static const struct uncontended_bench uncontended_benches[] = {
	{ "ww_mutex_ctx", "ww_mutex, ctx", loop_ww_ctx, true },
	{ "ww_mutex_null_ctx", "ww_mutex, NULL ctx", loop_ww_noctx, true },
	{ "pthread_mutex", "pthread_mutex_t", loop_pthread, false },
	{ "atomic_cas_store", "atomic CAS + store", loop_atomic, false },
};

#define NR_UNCONTENDED \
	(sizeof(uncontended_benches) / sizeof(uncontended_benches[0]))

enum { UNC_WW_CTX, UNC_WW_NULL, UNC_PTHREAD, UNC_ATOMIC };

/* The checker's state in a run; indexes the uncontended results. */
enum { CHECKER_OFF, CHECKER_ON, NR_CHECKER };

static const char *const checker_names[NR_CHECKER] = { "off", "on" };

struct uncontended_result {
	struct bench_stat ns; /* per pair */
	double *rep_ns;
};

/* Whether uncontended benchmark @b is measured with the checker @on. */
static bool unc_measured(const struct ww_config *cfg, size_t b, int on)
{
	return on == CHECKER_OFF ||
	       (uncontended_benches[b].checked && checker_built_in(cfg));
}

static void *no_op_thread(void *arg)
{
	return arg;
}

static void run_uncontended(const struct ww_config *cfg,
			    struct uncontended_result (*res)[NR_CHECKER])
{
	uint64_t rep, start;
	pthread_t thread;
	size_t b;
	int on;

	/*
	 * glibc (2.35 on) takes and releases a pthread mutex without atomics
	 * while the process has never had a second thread. Locks are only
	 * worth comparing in a threaded process, so make this one threaded.
	 */
	if (!pthread_create(&thread, NULL, no_op_thread, NULL))
		pthread_join(thread, NULL);

	/*
	 * Repetitions outermost, so that drift hits every lock alike; off
	 * and on back to back. Each loop releases all it takes, so the
	 * checker is switched with no lock held, as it must be.
	 */
	for (rep = 0; rep < cfg->c.reps; rep++) {
		for (b = 0; b < NR_UNCONTENDED; b++) {
			for (on = 0; on < NR_CHECKER; on++) {
				if (!unc_measured(cfg, b, on))
					continue;
				if (uncontended_benches[b].checked)
					cli_checker_switch(on);
				start = cli_now_ns();
				uncontended_benches[b].loop(cfg->iterations);
				res[b][on].rep_ns[rep] =
					(double)(cli_now_ns() - start) /
					(double)cfg->iterations;
			}
		}
	}
	for (b = 0; b < NR_UNCONTENDED; b++)
		for (on = 0; on < NR_CHECKER; on++)
			bench_stat(&res[b][on].ns, res[b][on].rep_ns,
				   sizeof(double), cfg->c.reps, BENCH_LOWER);
}

/* -------------------------------------------------------------------- */
/* Contended: transactions per second over a shared set of locks. */

/*
 * One lock of the set, in its own cache line, with every algorithm's lock
 * in it: all algorithms see the same layout and the same counters.
 */
struct slot {
	struct ww_mutex ww;
	pthread_mutex_t mutex;
	unsigned long count; /* plain: only touched with the lock held */
} __attribute__((aligned(64)));

struct worker;

struct algo_desc {
	const char *name;
	struct ww_class *cls; /* for the ww algorithms */
	bool baseline;        /* a pthread scheme the others are compared to */
	bool backs_off;       /* counts back-offs */
	void (*tx)(struct worker *w, const unsigned int *picks);
};

struct contended_run {
	const struct ww_config *cfg;
	const struct algo_desc *algo;
	struct slot *slots;
	unsigned int per_tx;
	uint64_t hold_ns;
	uint64_t hold_iters; /* HOLD_WORK: bench_work_loop() iterations */
	pthread_barrier_t start;
	int stop;              /* atomic */
	unsigned int finished; /* atomic: workers out of their loop */
	struct {
		pthread_mutex_t mutex;
	} global __attribute__((aligned(64)));
};

struct worker {
	struct contended_run *run;
	pthread_t thread;
	uint64_t rng;
	unsigned int *perm; /* a permutation of the lock indices */
	unsigned long tx, backoffs, increments;
	uint64_t end_ns; /* when it left its loop */
} __attribute__((aligned(64)));

static void __attribute__((noreturn)) worker_fail(struct worker *w,
						  const char *what, int ret)
{
	cli_error("bench ww: %s: %s returned %d", w->run->algo->name, what,
		  ret);
	exit(CLI_EXIT_FAILURE);
}

/* Choose per_tx distinct locks, in a random order. */
static void pick_locks(struct worker *w, unsigned int *picks)
{
	struct contended_run *run = w->run;

	bench_pick(w->perm, (unsigned int)run->cfg->locks, run->per_tx,
		   &w->rng);
	memcpy(picks, w->perm, run->per_tx * sizeof(*picks));
}

static void busy_wait_ns(uint64_t ns)
{
	uint64_t end = cli_now_ns() + ns;

	while (cli_now_ns() < end)
		;
}

/* The work done with every lock of the transaction held. */
static void critical_section(struct worker *w, const unsigned int *picks)
{
	struct contended_run *run = w->run;
	unsigned int i;

	if (run->hold_iters)
		bench_work_loop(run->hold_iters);
	else if (run->hold_ns)
		busy_wait_ns(run->hold_ns);
	for (i = 0; i < run->per_tx; i++)
		run->slots[picks[i]].count++;
	w->increments += run->per_tx;
}

static void ww_unlock_held(struct contended_run *run,
			   const unsigned int *picks, uint64_t held)
{
	unsigned int i;

	for (i = 0; i < run->per_tx; i++)
		if (held & (1ull << i))
			ww_mutex_unlock(&run->slots[picks[i]].ww);
}

/*
 * Lock every pick not yet in *held, in pick order. On -EDEADLK release
 * everything and return the index of the contended pick; -1 when all are
 * held.
 */
static int ww_lock_picks(struct worker *w, struct ww_acquire_ctx *ctx,
			 const unsigned int *picks, uint64_t *held)
{
	struct contended_run *run = w->run;
	unsigned int i;

	for (i = 0; i < run->per_tx; i++) {
		int ret;

		if (*held & (1ull << i))
			continue;
		ret = ww_mutex_lock(&run->slots[picks[i]].ww, ctx);
		if (ret == -EDEADLK) {
			ww_unlock_held(run, picks, *held);
			*held = 0;
			return (int)i;
		}
		if (ret)
			worker_fail(w, "ww_mutex_lock", ret);
		*held |= 1ull << i;
	}
	return -1;
}

/* Wound-wait and wait-die alike: the class makes the difference. */
static void tx_ww(struct worker *w, const unsigned int *picks)
{
	struct contended_run *run = w->run;
	struct ww_acquire_ctx ctx;
	uint64_t held = 0;
	int contended;

	ww_acquire_init(&ctx, run->algo->cls);
	while ((contended = ww_lock_picks(w, &ctx, picks, &held)) >= 0) {
		w->backoffs++;
		ww_mutex_lock_slow(&run->slots[picks[contended]].ww, &ctx);
		held = 1ull << contended;
	}
	ww_acquire_done(&ctx);
	critical_section(w, picks);
	ww_unlock_held(run, picks, held);
	ww_acquire_fini(&ctx);
}

static void tx_sorted(struct worker *w, const unsigned int *picks)
{
	struct contended_run *run = w->run;
	pthread_mutex_t *order[MAX_PER_TX];
	unsigned int i, j;

	/* Insertion sort by address: per_tx is small. */
	for (i = 0; i < run->per_tx; i++) {
		pthread_mutex_t *m = &run->slots[picks[i]].mutex;

		for (j = i; j > 0 && (uintptr_t)order[j - 1] > (uintptr_t)m;
		     j--)
			order[j] = order[j - 1];
		order[j] = m;
	}
	for (i = 0; i < run->per_tx; i++)
		pthread_mutex_lock(order[i]);
	critical_section(w, picks);
	for (i = run->per_tx; i-- > 0;)
		pthread_mutex_unlock(order[i]);
}

static void tx_global(struct worker *w, const unsigned int *picks)
{
	struct contended_run *run = w->run;

	pthread_mutex_lock(&run->global.mutex);
	critical_section(w, picks);
	pthread_mutex_unlock(&run->global.mutex);
}

static void tx_trylock(struct worker *w, const unsigned int *picks)
{
	struct contended_run *run = w->run;
	unsigned int i;

	for (;;) {
		for (i = 0; i < run->per_tx; i++)
			if (pthread_mutex_trylock(&run->slots[picks[i]].mutex))
				break;
		if (i == run->per_tx)
			break;
		while (i-- > 0)
			pthread_mutex_unlock(&run->slots[picks[i]].mutex);
		w->backoffs++;
		sched_yield();
	}
	critical_section(w, picks);
	for (i = 0; i < run->per_tx; i++)
		pthread_mutex_unlock(&run->slots[picks[i]].mutex);
}

static const struct algo_desc algos[NR_ALGOS] = {
	[ALGO_WOUND_WAIT] = {
		.name = "wound-wait", .cls = &bench_ww_class,
		.backs_off = true, .tx = tx_ww,
	},
	[ALGO_WAIT_DIE] = {
		.name = "wait-die", .cls = &bench_wd_class,
		.backs_off = true, .tx = tx_ww,
	},
	[ALGO_SORTED] = {
		.name = "sorted-pthread", .baseline = true, .tx = tx_sorted,
	},
	[ALGO_GLOBAL] = {
		.name = "global-pthread", .baseline = true, .tx = tx_global,
	},
	[ALGO_TRYLOCK] = {
		.name = "trylock-pthread", .baseline = true,
		.backs_off = true, .tx = tx_trylock,
	},
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct contended_run *run = w->run;
	unsigned int picks[MAX_PER_TX];

	pthread_barrier_wait(&run->start);
	while (!__atomic_load_n(&run->stop, __ATOMIC_RELAXED)) {
		pick_locks(w, picks);
		run->algo->tx(w, picks);
		w->tx++;
	}
	w->end_ns = cli_now_ns();
	__atomic_fetch_add(&run->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reset the lock set and the workers for one repetition. */
static void prepare_rep(struct contended_run *run, struct worker *workers)
{
	const struct ww_config *cfg = run->cfg;
	uint64_t i, j;

	for (i = 0; i < cfg->locks; i++) {
		/* The pthread algorithms leave the ww_mutexes alone. */
		ww_mutex_init(&run->slots[i].ww, run->algo->cls ?
			      run->algo->cls : &bench_ww_class);
		pthread_mutex_init(&run->slots[i].mutex, NULL);
		run->slots[i].count = 0;
	}
	pthread_mutex_init(&run->global.mutex, NULL);
	for (i = 0; i < cfg->threads; i++) {
		struct worker *w = &workers[i];
		/* The same transactions for every algorithm. */
		uint64_t seed = cfg->c.seed ^ (0x632be59bd9b4e019ull * (i + 1));

		w->run = run;
		w->rng = cli_splitmix64(&seed) | 1;
		for (j = 0; j < cfg->locks; j++)
			w->perm[j] = (unsigned int)j;
		w->tx = w->backoffs = w->increments = 0;
	}
	run->stop = 0;
	run->finished = 0;
}

static void finish_rep(struct contended_run *run)
{
	uint64_t i;

	for (i = 0; i < run->cfg->locks; i++) {
		ww_mutex_destroy(&run->slots[i].ww);
		pthread_mutex_destroy(&run->slots[i].mutex);
	}
	pthread_mutex_destroy(&run->global.mutex);
}

/*
 * Run one repetition of run->algo. Return 0, or CLI_EXIT_FAILURE after a
 * message if an update was lost. Threads that get stuck end the process:
 * they still use the lock set, so it cannot be freed.
 */
static int run_rep(struct contended_run *run, struct worker *workers,
		   uint64_t rep, struct rep_result *res)
{
	const struct ww_config *cfg = run->cfg;
	uint64_t i, start, end, grace, counted = 0, made = 0;
	int ret;

	prepare_rep(run, workers);
	pthread_barrier_init(&run->start, NULL, (unsigned int)cfg->threads + 1);
	for (i = 0; i < cfg->threads; i++) {
		ret = pthread_create(&workers[i].thread, NULL, worker_main,
				     &workers[i]);
		if (ret) {
			cli_error("bench ww: cannot create a thread: %s",
				  strerror(ret));
			exit(CLI_EXIT_FAILURE);
		}
	}
	pthread_barrier_wait(&run->start);
	start = cli_now_ns();
	cli_sleep_until_ns(start + cfg->duration_ms * 1000000);
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);

	/* Transactions in flight finish; stuck ones mean a deadlock. */
	grace = cli_now_ns() + 10000000000ull + 20 * cfg->duration_ms * 1000000;
	while (__atomic_load_n(&run->finished, __ATOMIC_ACQUIRE) <
	       cfg->threads) {
		if (cli_now_ns() > grace) {
			cli_error("bench ww: %s, hold %llu us, rep %llu: "
				  "threads still busy %.0f s after the stop; "
				  "deadlock?", run->algo->name,
				  (unsigned long long)(run->hold_ns / 1000),
				  (unsigned long long)rep + 1,
				  (double)(cli_now_ns() - start) / 1e9);
			exit(CLI_EXIT_FAILURE);
		}
		cli_sleep_until_ns(cli_now_ns() + 1000000);
	}
	end = start;
	for (i = 0; i < cfg->threads; i++) {
		pthread_join(workers[i].thread, NULL);
		if (workers[i].end_ns > end)
			end = workers[i].end_ns;
	}
	pthread_barrier_destroy(&run->start);

	*res = (struct rep_result){ .elapsed_s = (double)(end - start) / 1e9 };
	for (i = 0; i < cfg->threads; i++) {
		res->tx += workers[i].tx;
		res->backoffs += workers[i].backoffs;
		made += workers[i].increments;
	}
	res->tx_per_s = (double)res->tx / res->elapsed_s;
	for (i = 0; i < cfg->locks; i++)
		counted += run->slots[i].count;
	finish_rep(run);
	if (counted != made) {
		cli_error("bench ww: counters: lost updates with %s, hold "
			  "%llu us, rep %llu: the locks counted %llu, the "
			  "threads made %llu increments", run->algo->name,
			  (unsigned long long)(run->hold_ns / 1000),
			  (unsigned long long)rep + 1,
			  (unsigned long long)counted,
			  (unsigned long long)made);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

/* Free what ww_run_point() allocated; @workers may be partly set up. */
static void free_point(struct worker *workers, uint64_t threads,
		       struct slot *slots)
{
	uint64_t i;

	for (i = 0; workers && i < threads; i++)
		free(workers[i].perm);
	free(workers);
	free(slots);
}

int ww_run_point(const struct ww_config *cfg, const struct ww_point *pt,
		 struct contended_result *row)
{
	struct ww_config at = *cfg;
	struct contended_run run = { .cfg = &at };
	struct worker *workers;
	uint64_t rep, i;
	enum algo a;
	int ret = 0;

	/* The run's code reads its shape from the config. */
	at.threads = pt->threads;
	at.locks = pt->locks;
	at.per_tx = pt->per_tx;
	run.per_tx = (unsigned int)pt->per_tx;
	run.hold_ns = pt->hold_us * 1000;
	if (pt->hold_kind == HOLD_WORK)
		run.hold_iters = (uint64_t)(bench_work_iters_per_us() *
					    (double)pt->hold_us);
	workers = aligned_alloc(64, pt->threads * sizeof(*workers));
	run.slots = aligned_alloc(64, pt->locks * sizeof(*run.slots));
	if (workers)
		memset(workers, 0, pt->threads * sizeof(*workers));
	for (i = 0; workers && i < pt->threads; i++)
		if (!(workers[i].perm = calloc(pt->locks, sizeof(unsigned))))
			break;
	if (!workers || !run.slots || i < pt->threads) {
		cli_error("bench ww: out of memory");
		free_point(workers, pt->threads, run.slots);
		return CLI_EXIT_FAILURE;
	}
	/* Repetitions outside algorithms: drift hits all alike. */
	for (rep = 0; !ret && rep < cfg->c.reps; rep++) {
		for (a = 0; !ret && a < NR_ALGOS; a++) {
			struct contended_result *r = &row[a];

			run.algo = &algos[a];
			ret = run_rep(&run, workers, rep, &r->reps[rep]);
			if (!ret && (rep == 0 || r->reps[rep].tx_per_s >
						 r->best.tx_per_s))
				r->best = r->reps[rep];
		}
	}
	for (a = 0; !ret && a < NR_ALGOS; a++)
		bench_stat(&row[a].tx_per_s, &row[a].reps[0].tx_per_s,
			   sizeof(*row[a].reps), cfg->c.reps, BENCH_HIGHER);
	free_point(workers, pt->threads, run.slots);
	return ret;
}

/* -------------------------------------------------------------------- */
/* Output. */

const char *ww_algo_name(enum algo a)
{
	return algos[a].name;
}

bool ww_algo_backs_off(enum algo a)
{
	return algos[a].backs_off;
}

enum algo ww_fastest_baseline(const struct contended_result *row)
{
	enum algo a, best = ALGO_SORTED;

	for (a = 0; a < NR_ALGOS; a++)
		if (algos[a].baseline &&
		    row[a].best.tx_per_s > row[best].best.tx_per_s)
			best = a;
	return best;
}

static const char *spin_env(void)
{
	return getenv("TTMSIM_WW_SPIN_NS");
}

static void ww_print_config(const void *data)
{
	const struct ww_config *cfg = data;
	size_t h;

	printf("sizeof(struct ww_mutex) = %zu, "
	       "sizeof(struct ww_acquire_ctx) = %zu, "
	       "sizeof(pthread_mutex_t) = %zu\n",
	       sizeof(struct ww_mutex), sizeof(struct ww_acquire_ctx),
	       sizeof(pthread_mutex_t));
	printf("config: reps %llu (best of), iterations %llu, threads %llu, "
	       "locks %llu, per-tx %llu, hold-us ",
	       (unsigned long long)cfg->c.reps,
	       (unsigned long long)cfg->iterations,
	       (unsigned long long)cfg->threads,
	       (unsigned long long)cfg->locks,
	       (unsigned long long)cfg->per_tx);
	for (h = 0; h < cfg->n_holds; h++)
		printf("%s%llu", h ? "," : "",
		       (unsigned long long)cfg->hold_us[h]);
	printf(", hold-kind %s, duration-ms %llu, seed %llu%s\n",
	       ww_hold_kinds[cfg->hold_kind],
	       (unsigned long long)cfg->duration_ms,
	       (unsigned long long)cfg->c.seed, cfg->c.quick ? ", quick" : "");
	printf("TTMSIM_WW_SPIN_NS %s\n",
	       spin_env() ? spin_env() : "unset (library default)");
}

static void print_uncontended(const struct ww_config *cfg,
			      struct uncontended_result (*unc)[NR_CHECKER])
{
	int on, columns = checker_built_in(cfg) ? NR_CHECKER : 1;
	size_t b;

	printf("\nuncontended lock+unlock, 1 thread, ns per pair "
	       "(best of %llu x %llu; the process is threaded)\n",
	       (unsigned long long)cfg->c.reps,
	       (unsigned long long)cfg->iterations);
	if (checker_built_in(cfg))
		printf("  ww_debug checker: built in; each ww_mutex row runs "
		       "with it off, then on\n");
	else
		printf("  ww_debug checker: not built in (-Dww_debug=false)"
		       "\n");
	printf("  %-22s", "lock");
	for (on = 0; on < columns; on++)
		printf(" %12s", on ? "checker on" : "checker off");
	printf("\n");
	for (b = 0; b < NR_UNCONTENDED; b++) {
		printf("  %-22s", uncontended_benches[b].label);
		for (on = 0; on < columns; on++) {
			if (unc_measured(cfg, b, on))
				printf(" %12.2f", unc[b][on].ns.best);
			else
				printf(" %12s", "-");
		}
		printf("\n");
	}
	printf("  %-22s", "ratio ww(ctx)/pthread");
	for (on = 0; on < columns; on++)
		printf(" %12.2f",
		       bench_ratio(unc[UNC_WW_CTX][on].ns.best,
				   unc[UNC_PTHREAD][CHECKER_OFF].ns.best));
	printf("\n");
}

static void print_contended_header(const struct ww_config *cfg)
{
	printf("\ncontended: %llu threads, %llu distinct random locks of %llu "
	       "per tx, %llu ms per rep, tx/s best of %llu\n",
	       (unsigned long long)cfg->threads,
	       (unsigned long long)cfg->per_tx,
	       (unsigned long long)cfg->locks,
	       (unsigned long long)cfg->duration_ms,
	       (unsigned long long)cfg->c.reps);
	printf("  (backoffs/tx: -EDEADLK for ww, failed trylock rounds for "
	       "trylock; ratios are tx/s over tx/s)\n");
	if (checker_built_in(cfg))
		printf("  ww_debug checker %s during these runs "
		       "(--checker on|off)\n",
		       checker_names[cfg->c.checker_runs]);
	else
		printf("  ww_debug checker: not built in (-Dww_debug=false)"
		       "\n");
}

/*
 * One point's table: best and median tx/s, back-offs, and the ratios of
 * the best and of the medians. @name: a named case's, or NULL.
 */
static void print_contended_row(const struct ww_point *pt, const char *name,
				const struct contended_result *row)
{
	enum algo a, fastest = ww_fastest_baseline(row);

	if (name)
		printf("\ncase %s: %llu threads, %llu locks of %llu per tx, "
		       "hold %llu us (%s):\n", name,
		       (unsigned long long)pt->threads,
		       (unsigned long long)pt->per_tx,
		       (unsigned long long)pt->locks,
		       (unsigned long long)pt->hold_us,
		       ww_hold_kinds[pt->hold_kind]);
	else
		printf("\nhold %llu us (%s):\n",
		       (unsigned long long)pt->hold_us,
		       ww_hold_kinds[pt->hold_kind]);
	printf("  %-16s %10s %10s %12s %10s %11s %10s\n", "algorithm",
	       "tx/s best", "median", "backoffs/tx", "vs sorted",
	       "vs fastest", "(medians)");
	for (a = 0; a < NR_ALGOS; a++) {
		const struct rep_result *best = &row[a].best;

		printf("  %-16s %10.0f %10.0f ", algos[a].name,
		       best->tx_per_s, row[a].tx_per_s.median);
		if (algos[a].backs_off)
			printf("%12.3f ", bench_ratio((double)best->backoffs,
						      (double)best->tx));
		else
			printf("%12s ", "-");
		printf("%9.2fx %10.2fx %9.2fx%s\n",
		       bench_ratio(best->tx_per_s,
				   row[ALGO_SORTED].best.tx_per_s),
		       bench_ratio(best->tx_per_s, row[fastest].best.tx_per_s),
		       bench_ratio(row[a].tx_per_s.median,
				   row[ALGO_SORTED].tx_per_s.median),
		       a == fastest ? "  (fastest baseline)" : "");
	}
	fflush(stdout);
}

/*
 * The records of one point, one per algorithm: part "contended" (the
 * hold times of --hold-us), or part "case" for the named case @name.
 */
static void add_contended(struct json_object *results,
			  const struct ww_config *cfg,
			  const struct ww_point *pt, const char *name,
			  const struct contended_result *row)
{
	enum algo a, fastest = ww_fastest_baseline(row);
	uint64_t rep;

	for (a = 0; a < NR_ALGOS; a++) {
		const struct rep_result *best = &row[a].best;
		struct json_object *r = bench_record(results, name ? "case" :
						     "contended"), *o;

		if (name) {
			bench_add_string(r, "case", name);
			bench_add_u64(r, "threads", pt->threads);
			bench_add_u64(r, "per_tx", pt->per_tx);
			bench_add_u64(r, "locks", pt->locks);
		}
		bench_add_string(r, "algorithm", algos[a].name);
		bench_add_u64(r, "hold_us", pt->hold_us);
		bench_add_string(r, "hold_kind", ww_hold_kinds[pt->hold_kind]);
		bench_add_stat(r, "tx_per_s", &row[a].tx_per_s, 1);
		bench_add_fixed(r, "backoffs_per_tx", algos[a].backs_off ?
				bench_ratio((double)best->backoffs,
					    (double)best->tx) : NAN, 6);
		bench_add_fixed(r, "ratio_to_sorted",
				bench_ratio(best->tx_per_s,
					    row[ALGO_SORTED].best.tx_per_s), 4);
		bench_add_fixed(r, "ratio_to_fastest_baseline",
				bench_ratio(best->tx_per_s,
					    row[fastest].best.tx_per_s), 4);
		bench_add_string(r, "fastest_baseline", algos[fastest].name);
		bench_add_fixed(r, "median_ratio_to_sorted",
				bench_ratio(row[a].tx_per_s.median,
					    row[ALGO_SORTED].tx_per_s.median),
				4);
		o = bench_add_array(r, "reps");
		for (rep = 0; rep < cfg->c.reps; rep++) {
			const struct rep_result *rr = &row[a].reps[rep];
			struct json_object *e = json_object_new_object();

			bench_add_u64(e, "tx", rr->tx);
			bench_add_u64(e, "backoffs", rr->backoffs);
			bench_add_fixed(e, "elapsed_s", rr->elapsed_s, 6);
			bench_add_fixed(e, "tx_per_s", rr->tx_per_s, 1);
			json_object_array_add(o, e);
		}
	}
}

/*
 * One record per measured loop: a lock names a loop and a checker state;
 * the checker-off names are those of the time before the checker.
 */
static void add_uncontended(struct json_object *results,
			    const struct ww_config *cfg,
			    struct uncontended_result (*unc)[NR_CHECKER])
{
	double pthread_ns = unc[UNC_PTHREAD][CHECKER_OFF].ns.best;
	char lock[64];
	uint64_t rep;
	size_t b;
	int on;

	for (on = 0; on < NR_CHECKER; on++) {
		for (b = 0; b < NR_UNCONTENDED; b++) {
			const struct uncontended_bench *u =
				&uncontended_benches[b];
			const struct uncontended_result *ur = &unc[b][on];
			struct json_object *r, *a;

			if (!unc_measured(cfg, b, on))
				continue;
			r = bench_record(results, "uncontended");
			snprintf(lock, sizeof(lock), "%s%s", u->key,
				 on ? "_checker_on" : "");
			bench_add_string(r, "lock", lock);
			bench_add_string(r, "checker", u->checked ?
					 checker_names[on] : NULL);
			bench_add_string(r, "op", "lock+unlock");
			bench_add_stat(r, "ns_per_op", &ur->ns, 3);
			bench_add_fixed(r, "ratio_to_pthread", bench_ratio(
						ur->ns.best, pthread_ns), 4);
			if (on)
				bench_add_fixed(r, "ratio_to_checker_off",
						bench_ratio(ur->ns.best,
						unc[b][CHECKER_OFF].ns.best),
						4);
			a = bench_add_array(r, "reps");
			for (rep = 0; rep < cfg->c.reps; rep++) {
				struct json_object *e =
					json_object_new_object();

				bench_add_fixed(e, "ns_per_op", ur->rep_ns[rep],
						3);
				json_object_array_add(a, e);
			}
		}
	}
}

static void ww_json_config(const void *data, struct json_object *config)
{
	struct json_object *sizes = json_object_new_object();

	(void)data;
	bench_add_string(config, "ttmsim_ww_spin_ns_env", spin_env());
	bench_add_u64(sizes, "ww_mutex_bytes", sizeof(struct ww_mutex));
	bench_add_u64(sizes, "ww_acquire_ctx_bytes",
		      sizeof(struct ww_acquire_ctx));
	bench_add_u64(sizes, "pthread_mutex_bytes", sizeof(pthread_mutex_t));
	json_object_object_add(config, "sizes", sizes);
}

/* -------------------------------------------------------------------- */
/* The command. */

/*
 * The named case: the shape the contended part runs by default, with its
 * 2 us hold spent computing, not waiting for the clock. A holder that is
 * preempted still owes its work then, and that is where wound-wait is
 * weak (docs/benchmarks.md, [perf]).
 */
static const struct ww_point named_case = {
	.threads = 4, .per_tx = 8, .locks = 64, .hold_us = 2,
	.hold_kind = HOLD_WORK,
};

#define NAMED_CASE "T4-K8-N64-work-2us"

static int ww_measure(const void *data, struct json_object *results)
{
	const struct ww_config *cfg = data;
	struct uncontended_result unc[NR_UNCONTENDED][NR_CHECKER] = {
		{ { { 0 } } }
	};
	struct contended_result (*con)[NR_ALGOS];
	double *rep_ns;
	struct rep_result *reps;
	uint64_t nr = cfg->c.reps;
	size_t b, h, rows = cfg->n_holds + 1; /* the named case last */
	enum algo a;
	int on, ret = CLI_EXIT_OK;

	rep_ns = calloc(NR_UNCONTENDED * NR_CHECKER * nr, sizeof(*rep_ns));
	reps = calloc(rows * NR_ALGOS * nr, sizeof(*reps));
	con = calloc(rows, sizeof(*con));
	if (!rep_ns || !reps || !con) {
		cli_error("bench ww: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (b = 0; b < NR_UNCONTENDED; b++)
		for (on = 0; on < NR_CHECKER; on++)
			unc[b][on].rep_ns = rep_ns + (b * NR_CHECKER + on) * nr;
	for (h = 0; h < rows; h++)
		for (a = 0; a < NR_ALGOS; a++)
			con[h][a].reps = reps + (h * NR_ALGOS + a) * nr;

	run_uncontended(cfg, unc);
	add_uncontended(results, cfg, unc);
	if (!cfg->c.json)
		print_uncontended(cfg, unc);
	/* Between runs: no thread holds a lock. */
	cli_checker_switch(cfg->c.checker_runs);
	if (cfg->grid) {
		ret = ww_run_grid(cfg, results);
		goto out;
	}
	if (!cfg->c.json)
		print_contended_header(cfg);
	for (h = 0; h < cfg->n_holds; h++) {
		struct ww_point pt = {
			.threads = cfg->threads, .per_tx = cfg->per_tx,
			.locks = cfg->locks, .hold_us = cfg->hold_us[h],
			.hold_kind = cfg->hold_kind,
		};

		ret = ww_run_point(cfg, &pt, con[h]);
		if (ret)
			goto out;
		if (!cfg->c.json)
			print_contended_row(&pt, NULL, con[h]);
		add_contended(results, cfg, &pt, NULL, con[h]);
	}
	ret = ww_run_point(cfg, &named_case, con[h]);
	if (ret)
		goto out;
	if (!cfg->c.json)
		print_contended_row(&named_case, NAMED_CASE, con[h]);
	add_contended(results, cfg, &named_case, NAMED_CASE, con[h]);
	if (!cfg->c.json)
		printf("\ncounters: ok (%llu runs, no lost update)\n",
		       (unsigned long long)(rows * NR_ALGOS * nr));
out:
	free(con);
	free(reps);
	free(rep_ns);
	return ret;
}

static int ww_check(void *data)
{
	struct ww_config *cfg = data;
	static const uint64_t threads[] = { 1, 2, 4, 8, 16 };
	static const uint64_t per_tx[] = { 2, 8, 32 };
	static const uint64_t locks[] = { 16, 1024, 65536 };
	static const uint64_t holds[] = { 0, 2, 20 };

	if (cfg->plot && !cfg->grid) {
		cli_error("--plot: draws the grid; give --grid too");
		return CLI_EXIT_USAGE;
	}
	if (!cfg->grid && (cfg->n_grid_threads || cfg->n_grid_per_tx ||
			   cfg->n_grid_locks)) {
		cli_error("--grid-%s: only with --grid", cfg->n_grid_threads ?
			  "threads" : cfg->n_grid_per_tx ? "per-tx" : "locks");
		return CLI_EXIT_USAGE;
	}
	if (!cfg->n_holds) {
		/* The grid is big: one hold, the one of the named case. */
		cfg->n_holds = cfg->grid ? 1 : 3;
		memcpy(cfg->hold_us, cfg->grid ? &holds[1] : holds,
		       cfg->n_holds * sizeof(holds[0]));
	}
#define GRID_DEFAULT(axis) \
	do { \
		if (!cfg->n_grid_##axis) { \
			cfg->n_grid_##axis = sizeof(axis) / sizeof(axis[0]); \
			memcpy(cfg->grid_##axis, axis, sizeof(axis)); \
		} \
	} while (0)
	if (cfg->grid) {
		GRID_DEFAULT(threads);
		GRID_DEFAULT(per_tx);
		GRID_DEFAULT(locks);
	}
#undef GRID_DEFAULT
	if (!cfg->grid && cfg->per_tx > cfg->locks) {
		cli_error("--per-tx: '%llu' is more than --locks (%llu)",
			  (unsigned long long)cfg->per_tx,
			  (unsigned long long)cfg->locks);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static const struct ww_config ww_defaults = {
	.iterations = 10000000, .threads = 4, .locks = 64, .per_tx = 8,
	.duration_ms = 300,
};

static const struct bench_option ww_options[] = {
	{
		.name = "iterations", .arg = "N",
		.help = "uncontended lock+unlock pairs per rep\n"
			"(default 10000000)",
		.offset = BENCH_AT(struct ww_config, iterations, uint64_t),
		.min = 1, .max = UINT64_C(1) << 40, .quick = 1000000,
	},
	{
		.name = "threads", .arg = "N",
		.help = "contending threads (default 4)",
		.offset = BENCH_AT(struct ww_config, threads, uint64_t),
		.min = 1, .max = MAX_THREADS,
	},
	{
		.name = "locks", .arg = "N",
		.help = "locks in the set (default 64)",
		.offset = BENCH_AT(struct ww_config, locks, uint64_t),
		.min = 1, .max = MAX_LOCKS,
	},
	{
		.name = "per-tx", .arg = "N",
		.help = "locks per transaction, at most 64 and at\n"
			"most --locks (default 8)",
		.offset = BENCH_AT(struct ww_config, per_tx, uint64_t),
		.min = 1, .max = MAX_PER_TX,
	},
	{
		.name = "hold-us", .arg = "LIST", .type = BENCH_LIST,
		.help = "comma-separated hold times in us\n"
			"(default 0,2,20; with --grid 2)",
		.offset = BENCH_AT(struct ww_config, hold_us, uint64_t *),
		.count_offset = BENCH_AT(struct ww_config, n_holds, size_t),
		.min = 0, .max = 1000000, .max_n = WW_MAX_HOLDS,
	},
	{
		.name = "hold-kind", .arg = "wall|work", .type = BENCH_CHOICE,
		.help = "wall: busy-wait until the clock has moved\n"
			"on by the hold; work: computation that takes\n"
			"the hold on an idle CPU, still owed after a\n"
			"preemption (default wall)",
		.offset = BENCH_AT(struct ww_config, hold_kind, unsigned int),
		.choices = ww_hold_kinds,
	},
	{
		.name = "duration-ms", .arg = "N",
		.help = "contended run time per rep (default 300)",
		.offset = BENCH_AT(struct ww_config, duration_ms, uint64_t),
		.min = 1, .max = 3600000, .quick = 50,
	},
	{
		.name = "grid", .type = BENCH_FLAG,
		.help = "contended: every scheme over the grid of\n"
			"--grid-threads x --grid-per-tx x --grid-locks\n"
			"(points with per-tx > locks skipped) instead\n"
			"of --threads, --per-tx, --locks",
		.offset = BENCH_AT(struct ww_config, grid, bool),
	},
	{
		.name = "grid-threads", .arg = "LIST", .type = BENCH_LIST,
		.help = "the grid's thread counts (1,2,4,8,16)",
		.offset = BENCH_AT(struct ww_config, grid_threads, uint64_t *),
		.count_offset = BENCH_AT(struct ww_config, n_grid_threads,
					 size_t),
		.min = 1, .max = MAX_THREADS, .max_n = WW_MAX_GRID,
	},
	{
		.name = "grid-per-tx", .arg = "LIST", .type = BENCH_LIST,
		.help = "the grid's locks per transaction (2,8,32)",
		.offset = BENCH_AT(struct ww_config, grid_per_tx, uint64_t *),
		.count_offset = BENCH_AT(struct ww_config, n_grid_per_tx,
					 size_t),
		.min = 1, .max = MAX_PER_TX, .max_n = WW_MAX_GRID,
	},
	{
		.name = "grid-locks", .arg = "LIST", .type = BENCH_LIST,
		.help = "the grid's lock set sizes (16,1024,65536)",
		.offset = BENCH_AT(struct ww_config, grid_locks, uint64_t *),
		.count_offset = BENCH_AT(struct ww_config, n_grid_locks,
					 size_t),
		.min = 1, .max = MAX_LOCKS, .max_n = WW_MAX_GRID,
	},
	{
		.name = "plot", .arg = "FILE.svg", .type = BENCH_STRING,
		.help = "with --grid: write an SVG of tx/s against\n"
			"threads, a curve per scheme, a panel per\n"
			"(per-tx, locks, hold)",
		.offset = BENCH_AT(struct ww_config, plot, const char *),
	},
	{ .name = NULL },
};

static const char ww_about[] =
	"Measures ww_mutex against pthread mutexes in one run, each\n"
	"figure the best of several repetitions:\n"
	"  uncontended  ns per lock+unlock pair in one thread:\n"
	"               ww_mutex with a ctx and with NULL,\n"
	"               pthread_mutex_t, and a bare atomic CAS +\n"
	"               release store as the floor;\n"
	"  contended    transactions per second: each locks --per-tx\n"
	"               distinct random locks out of --locks,\n"
	"               busy-waits --hold-us with them held, bumps a\n"
	"               counter per lock and unlocks; with\n"
	"               wound-wait and wait-die ww_mutexes (back off\n"
	"               on -EDEADLK), address-sorted pthread mutexes,\n"
	"               one global pthread mutex, and pthread\n"
	"               trylock-all-or-retry; then the named case\n"
	"               " NAMED_CASE " (4 threads, 8 of 64, 2 us of\n"
	"               computation held: where wound-wait is weak).\n"
	"  grid         (--grid) the contended part over threads x\n"
	"               locks per tx x lock set sizes, --plot an SVG.\n"
	"Fails (exit 1) if any per-lock counter lost an update.\n";

static const char ww_notes[] =
	"Environment: TTMSIM_WW_SPIN_NS (the library's spin budget) is\n"
	"echoed in the output.\n";

const struct bench bench_ww = {
	.name = "ww",
	.about = ww_about,
	.seed_help = "seed of the per-thread PRNGs (default 1)",
	.quick_help = "2 reps, 1000000 iterations, 50 ms, unless\n"
		      "given explicitly",
	.checker_help = "the ww_debug checker in the contended\n"
			"runs (default off: they measure the\n"
			"locking); the uncontended ww_mutex rows\n"
			"are measured with it off and on",
	.notes = ww_notes,
	.options = ww_options,
	.defaults = &ww_defaults,
	.config_size = sizeof(ww_defaults),
	.check = ww_check,
	.print_config = ww_print_config,
	.json_config = ww_json_config,
	.measure = ww_measure,
};

int cmd_bench_ww(int argc, char **argv, const char *path)
{
	return bench_main(&bench_ww, argc, argv, path);
}
