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
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/ww_mutex.h"
#include "cli.h"

#define MAX_HOLDS 16
#define MAX_PER_TX 64 /* the held set of a transaction is a uint64_t */
#define MAX_THREADS 1024
#define MAX_LOCKS (1u << 20)

static DEFINE_WW_CLASS(bench_ww_class);
static DEFINE_WD_CLASS(bench_wd_class);

struct bench_config {
	uint64_t reps, iterations, threads, locks, per_tx, duration_ms, seed;
	uint64_t hold_us[MAX_HOLDS];
	size_t n_holds;
	bool json, quick;
	bool checker_contended;   /* --checker */
	enum cli_checker checker; /* as the program started */
};

static bool checker_built_in(const struct bench_config *cfg)
{
	return cfg->checker != CLI_CHECKER_ABSENT;
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
	double best_ns; /* per pair */
	double *rep_ns;
};

/* Whether uncontended benchmark @b is measured with the checker @on. */
static bool unc_measured(const struct bench_config *cfg, size_t b, int on)
{
	return on == CHECKER_OFF ||
	       (uncontended_benches[b].checked && checker_built_in(cfg));
}

static void *no_op_thread(void *arg)
{
	return arg;
}

static void run_uncontended(const struct bench_config *cfg,
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
	for (rep = 0; rep < cfg->reps; rep++) {
		for (b = 0; b < NR_UNCONTENDED; b++) {
			for (on = 0; on < NR_CHECKER; on++) {
				struct uncontended_result *r = &res[b][on];
				double ns;

				if (!unc_measured(cfg, b, on))
					continue;
				if (uncontended_benches[b].checked)
					cli_checker_switch(on);
				start = cli_now_ns();
				uncontended_benches[b].loop(cfg->iterations);
				ns = (double)(cli_now_ns() - start) /
				     (double)cfg->iterations;
				r->rep_ns[rep] = ns;
				if (rep == 0 || ns < r->best_ns)
					r->best_ns = ns;
			}
		}
	}
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

enum algo {
	ALGO_WOUND_WAIT,
	ALGO_WAIT_DIE,
	ALGO_SORTED,
	ALGO_GLOBAL,
	ALGO_TRYLOCK,
	NR_ALGOS,
};

struct worker;

struct algo_desc {
	const char *name;
	struct ww_class *cls; /* for the ww algorithms */
	bool baseline;        /* a pthread scheme the others are compared to */
	bool backs_off;       /* counts back-offs */
	void (*tx)(struct worker *w, const unsigned int *picks);
};

struct contended_run {
	const struct bench_config *cfg;
	const struct algo_desc *algo;
	struct slot *slots;
	unsigned int per_tx;
	uint64_t hold_ns;
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

struct rep_result {
	uint64_t tx, backoffs;
	double elapsed_s;
	double tx_per_s;
};

struct contended_result {
	struct rep_result best; /* the rep with the most tx/s */
	struct rep_result *reps;
};

static void __attribute__((noreturn)) worker_fail(struct worker *w,
						  const char *what, int ret)
{
	cli_error("bench ww: %s: %s returned %d", w->run->algo->name, what,
		  ret);
	exit(CLI_EXIT_FAILURE);
}

/* Choose per_tx distinct locks: a partial Fisher-Yates shuffle. */
static void pick_locks(struct worker *w, unsigned int *picks)
{
	struct contended_run *run = w->run;
	unsigned int n = (unsigned int)run->cfg->locks, i;

	for (i = 0; i < run->per_tx; i++) {
		unsigned int j = i + (unsigned int)(cli_xorshift64(&w->rng) %
						    (n - i));
		unsigned int tmp = w->perm[i];

		w->perm[i] = w->perm[j];
		w->perm[j] = tmp;
		picks[i] = w->perm[i];
	}
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

	if (run->hold_ns)
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
	const struct bench_config *cfg = run->cfg;
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
		uint64_t seed = cfg->seed ^ (0x632be59bd9b4e019ull * (i + 1));

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
	const struct bench_config *cfg = run->cfg;
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

/* -------------------------------------------------------------------- */
/* Output. */

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

/* The fastest baseline at each hold time, by tx/s. */
static enum algo fastest_baseline(const struct contended_result *row)
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

static void print_header(const struct bench_config *cfg)
{
	size_t h;

	printf("ttmsim %s bench ww\n", TTMSIM_VERSION);
	printf("sizeof(struct ww_mutex) = %zu, "
	       "sizeof(struct ww_acquire_ctx) = %zu, "
	       "sizeof(pthread_mutex_t) = %zu\n",
	       sizeof(struct ww_mutex), sizeof(struct ww_acquire_ctx),
	       sizeof(pthread_mutex_t));
	printf("config: reps %llu (best of), iterations %llu, threads %llu, "
	       "locks %llu, per-tx %llu, hold-us ",
	       (unsigned long long)cfg->reps,
	       (unsigned long long)cfg->iterations,
	       (unsigned long long)cfg->threads,
	       (unsigned long long)cfg->locks,
	       (unsigned long long)cfg->per_tx);
	for (h = 0; h < cfg->n_holds; h++)
		printf("%s%llu", h ? "," : "",
		       (unsigned long long)cfg->hold_us[h]);
	printf(", duration-ms %llu, seed %llu%s\n",
	       (unsigned long long)cfg->duration_ms,
	       (unsigned long long)cfg->seed, cfg->quick ? ", quick" : "");
	printf("online CPUs %ld, TTMSIM_WW_SPIN_NS %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN),
	       spin_env() ? spin_env() : "unset (library default)");
	printf("ww_debug checker at start: %s\n",
	       cli_checker_describe(cfg->checker));
}

static void print_uncontended(const struct bench_config *cfg,
			      struct uncontended_result (*unc)[NR_CHECKER])
{
	int on, columns = checker_built_in(cfg) ? NR_CHECKER : 1;
	size_t b;

	printf("\nuncontended lock+unlock, 1 thread, ns per pair "
	       "(best of %llu x %llu; the process is threaded)\n",
	       (unsigned long long)cfg->reps,
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
				printf(" %12.2f", unc[b][on].best_ns);
			else
				printf(" %12s", "-");
		}
		printf("\n");
	}
	printf("  %-22s", "ratio ww(ctx)/pthread");
	for (on = 0; on < columns; on++)
		printf(" %12.2f", ratio(unc[UNC_WW_CTX][on].best_ns,
					unc[UNC_PTHREAD][CHECKER_OFF].best_ns));
	printf("\n");
}

static void print_contended_header(const struct bench_config *cfg)
{
	printf("\ncontended: %llu threads, %llu distinct random locks of %llu "
	       "per tx, %llu ms per rep, tx/s best of %llu\n",
	       (unsigned long long)cfg->threads,
	       (unsigned long long)cfg->per_tx,
	       (unsigned long long)cfg->locks,
	       (unsigned long long)cfg->duration_ms,
	       (unsigned long long)cfg->reps);
	printf("  (backoffs/tx: -EDEADLK for ww, failed trylock rounds for "
	       "trylock; ratios are tx/s over tx/s)\n");
	if (checker_built_in(cfg))
		printf("  ww_debug checker %s during these runs "
		       "(--checker on|off)\n",
		       checker_names[cfg->checker_contended]);
	else
		printf("  ww_debug checker: not built in (-Dww_debug=false)"
		       "\n");
}

static void print_contended_row(uint64_t hold_us,
				const struct contended_result *row)
{
	enum algo a, fastest = fastest_baseline(row);

	printf("\nhold %llu us:\n", (unsigned long long)hold_us);
	printf("  %-16s %12s %12s %10s %11s\n", "algorithm", "tx/s",
	       "backoffs/tx", "vs sorted", "vs fastest");
	for (a = 0; a < NR_ALGOS; a++) {
		const struct rep_result *best = &row[a].best;

		printf("  %-16s %12.0f ", algos[a].name, best->tx_per_s);
		if (algos[a].backs_off)
			printf("%12.3f ", ratio((double)best->backoffs,
						(double)best->tx));
		else
			printf("%12s ", "-");
		printf("%9.2fx %10.2fx%s\n",
		       ratio(best->tx_per_s, row[ALGO_SORTED].best.tx_per_s),
		       ratio(best->tx_per_s, row[fastest].best.tx_per_s),
		       a == fastest ? "  (fastest baseline)" : "");
	}
	fflush(stdout);
}

static void json_rep(FILE *f, const struct rep_result *r)
{
	fprintf(f, "{\"tx\": %llu, \"backoffs\": %llu, \"elapsed_s\": ",
		(unsigned long long)r->tx, (unsigned long long)r->backoffs);
	cli_json_number(f, r->elapsed_s, 6);
	fputs(", \"tx_per_s\": ", f);
	cli_json_number(f, r->tx_per_s, 1);
	fputc('}', f);
}

/* The records of one hold time, one per algorithm. */
static void json_contended(FILE *f, const struct bench_config *cfg,
			   uint64_t hold_us, const struct contended_result *row,
			   bool last)
{
	enum algo a, fastest = fastest_baseline(row);
	double sorted_tx_per_s = row[ALGO_SORTED].best.tx_per_s;
	uint64_t rep;

	for (a = 0; a < NR_ALGOS; a++) {
		const struct rep_result *best = &row[a].best;

		fprintf(f, "    {\"algorithm\": \"%s\", \"hold_us\": %llu, "
			"\"tx_per_s\": ", algos[a].name,
			(unsigned long long)hold_us);
		cli_json_number(f, best->tx_per_s, 1);
		fputs(", \"backoffs_per_tx\": ", f);
		if (algos[a].backs_off)
			cli_json_number(f, ratio((double)best->backoffs,
						 (double)best->tx), 6);
		else
			fputs("null", f);
		fputs(", \"ratio_to_sorted\": ", f);
		cli_json_number(f, ratio(best->tx_per_s, sorted_tx_per_s), 4);
		fputs(", \"ratio_to_fastest_baseline\": ", f);
		cli_json_number(f, ratio(best->tx_per_s,
					 row[fastest].best.tx_per_s), 4);
		fprintf(f, ", \"fastest_baseline\": \"%s\", \"reps\": [",
			algos[fastest].name);
		for (rep = 0; rep < cfg->reps; rep++) {
			fputs(rep ? ", " : "", f);
			json_rep(f, &row[a].reps[rep]);
		}
		fprintf(f, "]}%s\n", last && a + 1 == NR_ALGOS ? "" : ",");
	}
}

/*
 * One record per measured loop: a key names a loop and a checker state;
 * the checker-off keys are those of the time before the checker.
 */
static void json_uncontended(FILE *f, const struct bench_config *cfg,
			     struct uncontended_result (*unc)[NR_CHECKER])
{
	const char *sep = "";
	uint64_t rep;
	size_t b;
	int on;

	for (on = 0; on < NR_CHECKER; on++) {
		for (b = 0; b < NR_UNCONTENDED; b++) {
			const struct uncontended_bench *u =
				&uncontended_benches[b];

			if (!unc_measured(cfg, b, on))
				continue;
			fprintf(f, "%s    {\"lock\": \"%s%s\", \"checker\": ",
				sep, u->key, on ? "_checker_on" : "");
			if (u->checked)
				fprintf(f, "\"%s\"", checker_names[on]);
			else
				fputs("null", f);
			fputs(", \"op\": \"lock+unlock\", \"ns_per_op\": ", f);
			cli_json_number(f, unc[b][on].best_ns, 3);
			fputs(", \"reps_ns_per_op\": [", f);
			for (rep = 0; rep < cfg->reps; rep++) {
				fputs(rep ? ", " : "", f);
				cli_json_number(f, unc[b][on].rep_ns[rep], 3);
			}
			fputs("]}", f);
			sep = ",\n";
		}
	}
	fputc('\n', f);
}

static void print_json(const struct bench_config *cfg,
		       struct uncontended_result (*unc)[NR_CHECKER],
		       struct contended_result (*con)[NR_ALGOS],
		       double wall_s)
{
	FILE *f = stdout;
	size_t h;

	fputs("{\n  \"tool\": \"ttmsim\",\n  \"version\": ", f);
	cli_json_string(f, TTMSIM_VERSION);
	fputs(",\n  \"benchmark\": \"ww\",\n", f);
	fprintf(f, "  \"config\": {\"reps\": %llu, \"iterations\": %llu, "
		"\"threads\": %llu, \"locks\": %llu, \"per_tx\": %llu, "
		"\"hold_us\": [",
		(unsigned long long)cfg->reps,
		(unsigned long long)cfg->iterations,
		(unsigned long long)cfg->threads,
		(unsigned long long)cfg->locks,
		(unsigned long long)cfg->per_tx);
	for (h = 0; h < cfg->n_holds; h++)
		fprintf(f, "%s%llu", h ? ", " : "",
			(unsigned long long)cfg->hold_us[h]);
	fprintf(f, "], \"duration_ms\": %llu, \"seed\": %llu, "
		"\"quick\": %s, \"checker\": \"%s\", \"online_cpus\": %ld, "
		"\"ttmsim_ww_spin_ns_env\": ",
		(unsigned long long)cfg->duration_ms,
		(unsigned long long)cfg->seed, cfg->quick ? "true" : "false",
		checker_names[cfg->checker_contended],
		sysconf(_SC_NPROCESSORS_ONLN));
	if (spin_env())
		cli_json_string(f, spin_env());
	else
		fputs("null", f);
	fprintf(f, "},\n  \"sizes\": {\"ww_mutex_bytes\": %zu, "
		"\"ww_acquire_ctx_bytes\": %zu, "
		"\"pthread_mutex_bytes\": %zu},\n",
		sizeof(struct ww_mutex), sizeof(struct ww_acquire_ctx),
		sizeof(pthread_mutex_t));
	fprintf(f, "  \"checker\": {\"built_in\": %s, \"at_start\": %s, "
		"\"contended\": \"%s\"},\n",
		checker_built_in(cfg) ? "true" : "false",
		!checker_built_in(cfg) ? "null" :
		cfg->checker == CLI_CHECKER_ON ? "\"on\"" : "\"off\"",
		checker_names[cfg->checker_contended]);

	fputs("  \"uncontended\": [\n", f);
	json_uncontended(f, cfg, unc);
	fputs("  ],\n  \"uncontended_ratio_ww_ctx_to_pthread\": ", f);
	cli_json_number(f, ratio(unc[UNC_WW_CTX][CHECKER_OFF].best_ns,
				 unc[UNC_PTHREAD][CHECKER_OFF].best_ns), 4);
	fputs(",\n  \"uncontended_ratio_ww_ctx_checker_on_to_off\": ", f);
	if (checker_built_in(cfg))
		cli_json_number(f, ratio(unc[UNC_WW_CTX][CHECKER_ON].best_ns,
					 unc[UNC_WW_CTX][CHECKER_OFF].best_ns),
				4);
	else
		fputs("null", f);

	fputs(",\n  \"contended\": [\n", f);
	for (h = 0; h < cfg->n_holds; h++)
		json_contended(f, cfg, cfg->hold_us[h], con[h],
			       h + 1 == cfg->n_holds);
	fputs("  ],\n  \"counters_ok\": true,\n  \"wall_s\": ", f);
	cli_json_number(f, wall_s, 3);
	fputs("\n}\n", f);
}

/* -------------------------------------------------------------------- */
/* The command. */

static int run_bench(const struct bench_config *cfg)
{
	struct uncontended_result unc[NR_UNCONTENDED][NR_CHECKER] = {
		{ { 0 } }
	};
	struct contended_result (*con)[NR_ALGOS];
	struct contended_run run = { .cfg = cfg };
	struct worker *workers;
	double *rep_ns;
	struct rep_result *reps;
	uint64_t rep, i, start = cli_now_ns(), checks = 0;
	size_t b, h;
	enum algo a;
	int on, ret = CLI_EXIT_OK;

	rep_ns = calloc(NR_UNCONTENDED * NR_CHECKER * cfg->reps,
			sizeof(*rep_ns));
	reps = calloc(cfg->n_holds * NR_ALGOS * cfg->reps, sizeof(*reps));
	con = calloc(cfg->n_holds, sizeof(*con));
	workers = aligned_alloc(64, cfg->threads * sizeof(*workers));
	if (workers)
		memset(workers, 0, cfg->threads * sizeof(*workers));
	run.slots = aligned_alloc(64, cfg->locks * sizeof(*run.slots));
	if (!rep_ns || !reps || !con || !workers || !run.slots) {
		cli_error("bench ww: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (i = 0; i < cfg->threads; i++) {
		workers[i].perm = calloc(cfg->locks, sizeof(unsigned int));
		if (!workers[i].perm) {
			cli_error("bench ww: out of memory");
			ret = CLI_EXIT_FAILURE;
			goto out;
		}
	}
	for (b = 0; b < NR_UNCONTENDED; b++)
		for (on = 0; on < NR_CHECKER; on++)
			unc[b][on].rep_ns = rep_ns +
					    (b * NR_CHECKER + on) * cfg->reps;
	for (h = 0; h < cfg->n_holds; h++)
		for (a = 0; a < NR_ALGOS; a++)
			con[h][a].reps = reps + (h * NR_ALGOS + a) * cfg->reps;

	if (!cfg->json)
		print_header(cfg);
	run_uncontended(cfg, unc);
	if (!cfg->json) {
		print_uncontended(cfg, unc);
		print_contended_header(cfg);
	}
	/* Between runs: no thread holds a lock. */
	cli_checker_switch(cfg->checker_contended);

	run.per_tx = (unsigned int)cfg->per_tx;
	for (h = 0; h < cfg->n_holds; h++) {
		run.hold_ns = cfg->hold_us[h] * 1000;
		/* Repetitions outside algorithms: drift hits all alike. */
		for (rep = 0; rep < cfg->reps; rep++) {
			for (a = 0; a < NR_ALGOS; a++) {
				struct contended_result *r = &con[h][a];

				run.algo = &algos[a];
				ret = run_rep(&run, workers, rep,
					      &r->reps[rep]);
				if (ret)
					goto out;
				checks++;
				if (rep == 0 || r->reps[rep].tx_per_s >
						r->best.tx_per_s)
					r->best = r->reps[rep];
			}
		}
		if (!cfg->json)
			print_contended_row(cfg->hold_us[h], con[h]);
	}

	if (cfg->json) {
		print_json(cfg, unc, con, (double)(cli_now_ns() - start) / 1e9);
	} else {
		printf("\ncounters: ok (%llu runs, no lost update)\n",
		       (unsigned long long)checks);
		printf("wall time: %.1f s\n",
		       (double)(cli_now_ns() - start) / 1e9);
	}
out:
	/* Any workers are gone: back to the state the program started in. */
	cli_checker_switch(cfg->checker == CLI_CHECKER_ON);
	for (i = 0; workers && i < cfg->threads; i++)
		free(workers[i].perm);
	free(workers);
	free(run.slots);
	free(con);
	free(reps);
	free(rep_ns);
	return ret;
}

static void bench_ww_usage(const char *path)
{
	printf("usage: ttmsim %s [OPTIONS]\n"
	       "\n"
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
	       "               trylock-all-or-retry.\n"
	       "Fails (exit 1) if any per-lock counter lost an update.\n"
	       "\n"
	       "Options:\n"
	       "  --reps N          repetitions, the best counts (default 5)\n"
	       "  --iterations N    uncontended lock+unlock pairs per rep\n"
	       "                    (default 10000000)\n"
	       "  --threads N       contending threads (default 4)\n"
	       "  --locks N         locks in the set (default 64)\n"
	       "  --per-tx N        locks per transaction, at most 64 and at\n"
	       "                    most --locks (default 8)\n"
	       "  --hold-us LIST    comma-separated hold times in us\n"
	       "                    (default 0,2,20)\n"
	       "  --duration-ms N   contended run time per rep (default 300)\n"
	       "  --seed N          seed of the per-thread PRNGs (default 1)\n"
	       "  --quick           2 reps, 1000000 iterations, 50 ms, unless\n"
	       "                    given explicitly\n"
	       "  --checker on|off  the ww_debug checker in the contended\n"
	       "                    runs (default off: they measure the\n"
	       "                    locking); the uncontended ww_mutex rows\n"
	       "                    are measured with it off and on\n"
	       "  --json            print one JSON object instead of tables\n"
	       "  -h, --help        show this help\n"
	       "\n"
	       "Environment: TTMSIM_WW_SPIN_NS (the library's spin budget) is\n"
	       "echoed in the output.\n", path);
}

enum {
	OPT_HELP = CLI_OPT_LONG,
	OPT_REPS,
	OPT_ITERATIONS,
	OPT_THREADS,
	OPT_LOCKS,
	OPT_PER_TX,
	OPT_HOLD_US,
	OPT_DURATION_MS,
	OPT_SEED,
	OPT_QUICK,
	OPT_JSON,
	OPT_CHECKER,
};

static const struct option bench_ww_options[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "iterations", required_argument, NULL, OPT_ITERATIONS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "locks", required_argument, NULL, OPT_LOCKS },
	{ "per-tx", required_argument, NULL, OPT_PER_TX },
	{ "hold-us", required_argument, NULL, OPT_HOLD_US },
	{ "duration-ms", required_argument, NULL, OPT_DURATION_MS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "checker", required_argument, NULL, OPT_CHECKER },
	{ NULL, 0, NULL, 0 },
};

int cmd_bench_ww(int argc, char **argv, const char *path)
{
	/* 0: not given; the defaults depend on --quick. */
	struct bench_config cfg = {
		.threads = 4, .locks = 64, .per_tx = 8, .seed = 1,
		.hold_us = { 0, 2, 20 }, .n_holds = 3,
		.checker = cli_checker_state(),
	};
	int c, ret = 0;

	cli_getopt_reset();
	while (!ret && (c = getopt_long(argc, argv, ":h", bench_ww_options,
					NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			bench_ww_usage(path);
			return CLI_EXIT_OK;
		case OPT_REPS:
			ret = cli_parse_uint("--reps", optarg, 1, 1000,
					     &cfg.reps);
			break;
		case OPT_ITERATIONS:
			ret = cli_parse_uint("--iterations", optarg, 1,
					     UINT64_C(1) << 40,
					     &cfg.iterations);
			break;
		case OPT_THREADS:
			ret = cli_parse_uint("--threads", optarg, 1,
					     MAX_THREADS, &cfg.threads);
			break;
		case OPT_LOCKS:
			ret = cli_parse_uint("--locks", optarg, 1, MAX_LOCKS,
					     &cfg.locks);
			break;
		case OPT_PER_TX:
			ret = cli_parse_uint("--per-tx", optarg, 1,
					     MAX_PER_TX, &cfg.per_tx);
			break;
		case OPT_HOLD_US:
			ret = cli_parse_uint_list("--hold-us", optarg, 0,
						  1000000, cfg.hold_us,
						  MAX_HOLDS, &cfg.n_holds);
			break;
		case OPT_DURATION_MS:
			ret = cli_parse_uint("--duration-ms", optarg, 1,
					     3600000, &cfg.duration_ms);
			break;
		case OPT_SEED:
			ret = cli_parse_uint("--seed", optarg, 0, UINT64_MAX,
					     &cfg.seed);
			break;
		case OPT_QUICK:
			cfg.quick = true;
			break;
		case OPT_JSON:
			cfg.json = true;
			break;
		case OPT_CHECKER:
			ret = cli_parse_checker(optarg, cfg.checker,
						&cfg.checker_contended);
			break;
		default:
			return cli_getopt_error(path, c, argv);
		}
	}
	if (ret || cli_no_operands(path, argc, argv))
		return CLI_EXIT_USAGE;
	if (cfg.per_tx > cfg.locks) {
		cli_error("--per-tx: '%llu' is more than --locks (%llu)",
			  (unsigned long long)cfg.per_tx,
			  (unsigned long long)cfg.locks);
		return CLI_EXIT_USAGE;
	}
	if (!cfg.reps)
		cfg.reps = cfg.quick ? 2 : 5;
	if (!cfg.iterations)
		cfg.iterations = cfg.quick ? 1000000 : 10000000;
	if (!cfg.duration_ms)
		cfg.duration_ms = cfg.quick ? 50 : 300;
	return run_bench(&cfg);
}
