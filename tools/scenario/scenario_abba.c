// SPDX-License-Identifier: MIT
/*
 * ttmsim scenario abba: the motivating case of the wound/wait article.
 *
 * T1 locks buffer A then B, T2 locks B then A. A barrier after the first
 * lock forces the bad interleaving in every round: each thread holds one
 * buffer and wants the other. Under an acquire context one of them is told
 * -EDEADLK, backs off and retries; with plain mutexes (--naive, which
 * switches the debug checker off) the two deadlock, and a watchdog reports
 * who holds and waits for what, then ends the process.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"
#include "cli.h"
#include "clock.h"
#include "parse.h"
#include "watchdog.h"

enum { LOCK_A, LOCK_B, NR_LOCKS };

static const char *const lock_names[NR_LOCKS] = { "A", "B" };

static DEFINE_WW_CLASS(abba_ww_class);
static DEFINE_WD_CLASS(abba_wd_class);

struct abba_config {
	uint64_t rounds;
	double watchdog_s;
	bool naive;
	const char *class_arg;   /* --class, the last one given */
	bool wound_wait, wait_die; /* from @class_arg */
};

struct abba_run;

struct abba_thread {
	struct abba_run *run;
	const char *name;
	unsigned int order[NR_LOCKS]; /* lock indices, in locking order */
	pthread_t thread;
	pid_t tid;                /* atomic */
	int waiting_for;          /* atomic: the lock being taken, or -1 */
	unsigned long round;      /* atomic: the current round, from 1 */
	unsigned long rounds_done;
	unsigned long backoffs;
	unsigned long bad_rounds; /* rounds that did not own both locks */
};

struct abba_run {
	const struct abba_config *cfg;
	struct ww_class *cls;
	const char *label;
	struct ww_mutex locks[NR_LOCKS];
	pthread_barrier_t barrier;
	unsigned long progress;  /* atomic: bumped on every lock taken */
	unsigned long both_held; /* plain: bumped with both locks held */
	struct abba_thread threads[2];
};

static void __attribute__((noreturn)) abba_internal_error(
	struct abba_thread *t, const char *what, int ret)
{
	cli_error("scenario abba: %s: %s: %s returned %d", t->run->label,
		  t->name, what, ret);
	exit(CLI_EXIT_FAILURE);
}

/* Take lock @idx, telling the watchdog what we wait for meanwhile. */
static int abba_lock(struct abba_thread *t, unsigned int idx,
		     struct ww_acquire_ctx *ctx, bool slow)
{
	struct ww_mutex *lock = &t->run->locks[idx];
	int ret = 0;

	__atomic_store_n(&t->waiting_for, (int)idx, __ATOMIC_RELAXED);
	if (slow)
		ww_mutex_lock_slow(lock, ctx);
	else
		ret = ww_mutex_lock(lock, ctx);
	__atomic_store_n(&t->waiting_for, -1, __ATOMIC_RELAXED);
	if (!ret)
		__atomic_fetch_add(&t->run->progress, 1, __ATOMIC_RELAXED);
	return ret;
}

static bool owns(struct abba_thread *t, unsigned int idx,
		 struct ww_acquire_ctx *ctx)
{
	struct ww_mutex *lock = &t->run->locks[idx];

	if (ctx)
		return ww_mutex_owner_ctx(lock) == ctx;
	return ww_mutex_owner_tid(lock) == t->tid;
}

/*
 * One round: the first lock, a meeting with the other thread (both now
 * hold their first lock), then the second lock, backing off on -EDEADLK.
 */
static void abba_round(struct abba_thread *t, struct ww_acquire_ctx *ctx)
{
	struct abba_run *run = t->run;
	unsigned int held, i;
	int ret;

	/* Nothing held yet, so no -EDEADLK. */
	ret = abba_lock(t, t->order[0], ctx, false);
	if (ret)
		abba_internal_error(t, "ww_mutex_lock", ret);
	held = 1u << t->order[0];
	pthread_barrier_wait(&run->barrier);

	for (;;) {
		unsigned int contended = NR_LOCKS;

		for (i = 0; i < NR_LOCKS; i++) {
			unsigned int idx = t->order[i];

			if (held & (1u << idx))
				continue;
			ret = abba_lock(t, idx, ctx, false);
			if (ret == -EDEADLK) {
				contended = idx;
				break;
			}
			if (ret)
				abba_internal_error(t, "ww_mutex_lock", ret);
			held |= 1u << idx;
		}
		if (contended == NR_LOCKS)
			break;
		/* Back off: drop all, sleep on the contended lock, retry. */
		t->backoffs++;
		for (i = 0; i < NR_LOCKS; i++)
			if (held & (1u << i))
				ww_mutex_unlock(&run->locks[i]);
		abba_lock(t, contended, ctx, true);
		held = 1u << contended;
	}

	if (owns(t, LOCK_A, ctx) && owns(t, LOCK_B, ctx))
		run->both_held++;
	else
		t->bad_rounds++;
	ww_mutex_unlock(&run->locks[t->order[1]]);
	ww_mutex_unlock(&run->locks[t->order[0]]);
}

static void *abba_thread_main(void *arg)
{
	struct abba_thread *t = arg;
	struct abba_run *run = t->run;
	struct ww_acquire_ctx ctx;
	unsigned long r;

	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELAXED);
	for (r = 1; r <= run->cfg->rounds; r++) {
		__atomic_store_n(&t->round, r, __ATOMIC_RELAXED);
		/* Start together, after the last round let go of everything. */
		pthread_barrier_wait(&run->barrier);
		if (run->cfg->naive) {
			abba_round(t, NULL);
		} else {
			ww_acquire_init(&ctx, run->cls);
			abba_round(t, &ctx);
			ww_acquire_fini(&ctx);
		}
		t->rounds_done++;
	}
	return NULL;
}

/* "T1" or "T2" if @tid is one of them (a cli_thread_name_fn). */
static const char *thread_name(void *data, pid_t tid, char *buf,
			       size_t size)
{
	struct abba_run *run = data;
	unsigned int i;

	(void)buf;
	(void)size;
	for (i = 0; i < 2; i++)
		if (tid == __atomic_load_n(&run->threads[i].tid,
					   __ATOMIC_RELAXED))
			return run->threads[i].name;
	return NULL;
}

static void print_holder(struct abba_run *run, pid_t tid)
{
	cli_print_holder(tid, "free", thread_name, run);
}

/*
 * The watchdog's report: who holds and who waits for what. The threads'
 * own account of what they wait for is checked against the library: the
 * owner of each lock by thread id, and that each wait is real, i.e. the
 * waiter is queued.
 */
static void abba_report(void *data, uint64_t stalled_ns)
{
	struct abba_run *run = data;
	pid_t owner[NR_LOCKS];
	unsigned int waiters[NR_LOCKS], i, l;
	bool cycle = true;
	const char *what;

	for (l = 0; l < NR_LOCKS; l++) {
		owner[l] = ww_mutex_owner_tid(&run->locks[l]);
		waiters[l] = ww_mutex_waiter_count(&run->locks[l]);
	}
	/* A deadlock if each thread is queued on a lock the other holds. */
	for (i = 0; i < 2; i++) {
		int w = __atomic_load_n(&run->threads[i].waiting_for,
					__ATOMIC_RELAXED);
		pid_t other = __atomic_load_n(&run->threads[!i].tid,
					      __ATOMIC_RELAXED);

		if (w < 0 || owner[w] != other || waiters[w] == 0)
			cycle = false;
	}
	what = cycle ? "deadlock" : "stall";

	cli_error("scenario abba: %s: no progress for %.1f s in round %lu, "
		  "%s", run->label, (double)stalled_ns / 1e9,
		  __atomic_load_n(&run->threads[0].round, __ATOMIC_RELAXED),
		  cycle ? "deadlocked" : "stalled");
	for (i = 0; i < 2; i++) {
		struct abba_thread *t = &run->threads[i];
		pid_t tid = __atomic_load_n(&t->tid, __ATOMIC_RELAXED);
		int w = __atomic_load_n(&t->waiting_for, __ATOMIC_RELAXED);
		unsigned int n = 0;

		fprintf(stderr, "%s: %s (tid %d) holds ", what, t->name,
			(int)tid);
		for (l = 0; l < NR_LOCKS; l++) {
			if (owner[l] != tid)
				continue;
			fprintf(stderr, "%s%s", n++ ? " and " : "",
				lock_names[l]);
		}
		if (!n)
			fputs("nothing", stderr);
		if (w < 0) {
			fputs(", waits for no lock\n", stderr);
			continue;
		}
		fprintf(stderr, ", waits for %s (", lock_names[w]);
		print_holder(run, owner[w]);
		fputs(waiters[w] ? ")\n" : "; not queued on it)\n", stderr);
	}
	fprintf(stderr, "%s: library view:", what);
	for (l = 0; l < NR_LOCKS; l++) {
		fprintf(stderr, "%s %s ", l ? ";" : "", lock_names[l]);
		print_holder(run, owner[l]);
		if (owner[l])
			fprintf(stderr, " (tid %d)", (int)owner[l]);
		fprintf(stderr, ", %u waiter%s", waiters[l],
			waiters[l] == 1 ? "" : "s");
	}
	fputc('\n', stderr);
}

static bool abba_progress(void *data, uint64_t *ret_count)
{
	struct abba_run *run = data;

	*ret_count = __atomic_load_n(&run->progress, __ATOMIC_RELAXED);
	return true;
}

/* The threads stop moving: abba_report(), exit CLI_EXIT_DEADLOCK. */
static const struct cli_watchdog_ops abba_watchdog_ops = {
	.progress = abba_progress,
	.report = abba_report,
};

/* A thread that cannot start ends the scenario. */
static void must_start(int err)
{
	if (!err)
		return;
	cli_error("scenario abba: cannot create a thread: %s", strerror(err));
	exit(CLI_EXIT_FAILURE);
}

/* Look ten times per limit, every 0.1 to 10 ms. */
static uint64_t watchdog_tick(uint64_t limit)
{
	uint64_t step = limit / 10;

	if (step > 10000000)
		step = 10000000;
	if (step < 100000)
		step = 100000;
	return step;
}

static int abba_run_class(const struct abba_config *cfg,
			  struct ww_class *cls, const char *label)
{
	struct abba_run run = {
		.cfg = cfg,
		.cls = cls,
		.label = label,
		.threads = {
			{ .name = "T1", .order = { LOCK_A, LOCK_B } },
			{ .name = "T2", .order = { LOCK_B, LOCK_A } },
		},
	};
	struct abba_thread *t1 = &run.threads[0], *t2 = &run.threads[1];
	uint64_t limit = (uint64_t)(cfg->watchdog_s * 1e9);
	struct cli_watchdog *watchdog;
	uint64_t start, elapsed;
	unsigned int i;
	int ret = CLI_EXIT_OK;

	for (i = 0; i < NR_LOCKS; i++)
		ww_mutex_init(&run.locks[i], cls);
	for (i = 0; i < 2; i++) {
		run.threads[i].run = &run;
		run.threads[i].waiting_for = -1;
	}
	pthread_barrier_init(&run.barrier, NULL, 2);

	if (cfg->naive)
		printf("%s (plain mutexes: ww_mutex_lock with a NULL ctx):\n",
		       label);
	else
		printf("%s (class %s):\n", label, cls->name);
	fflush(stdout);

	start = cli_now_ns();
	must_start(-cli_watchdog_start(&abba_watchdog_ops, &run, limit,
				       watchdog_tick(limit), &watchdog));
	must_start(pthread_create(&t1->thread, NULL, abba_thread_main, t1));
	must_start(pthread_create(&t2->thread, NULL, abba_thread_main, t2));
	pthread_join(t1->thread, NULL);
	pthread_join(t2->thread, NULL);
	elapsed = cli_now_ns() - start;
	cli_watchdog_stop(watchdog);

	printf("  rounds done: %lu and %lu of %llu", t1->rounds_done,
	       t2->rounds_done, (unsigned long long)cfg->rounds);
	if (t1->bad_rounds || t2->bad_rounds ||
	    run.both_held != 2 * cfg->rounds) {
		printf(", but both locks were held in only %lu thread-rounds"
		       " of %llu\n", run.both_held,
		       2 * (unsigned long long)cfg->rounds);
		cli_error("scenario abba: %s: %lu rounds of T1 and %lu of T2"
			  " did not own both locks", label, t1->bad_rounds,
			  t2->bad_rounds);
		ret = CLI_EXIT_FAILURE;
	} else {
		printf(", both threads owned both locks in every round\n");
	}
	printf("  back-offs:   %lu (T1 %lu, T2 %lu), %.2f per round\n",
	       t1->backoffs + t2->backoffs, t1->backoffs, t2->backoffs,
	       (double)(t1->backoffs + t2->backoffs) / (double)cfg->rounds);
	printf("  time:        %.1f ms, %.1f us per round\n",
	       (double)elapsed / 1e6, (double)elapsed / 1e3 /
	       (double)cfg->rounds);
	if (!ret)
		printf("  no deadlock occurred\n");
	fflush(stdout);

	pthread_barrier_destroy(&run.barrier);
	for (i = 0; i < NR_LOCKS; i++)
		ww_mutex_destroy(&run.locks[i]);
	return ret;
}

static void abba_usage(const char *path)
{
	printf("usage: ttmsim %s [OPTIONS]\n"
	       "\n"
	       "The article's case: T1 locks buffer A then B, T2 locks B\n"
	       "then A (ww_mutexes of one class). Each round both take their\n"
	       "first lock and meet at a barrier before taking the second,\n"
	       "so they always conflict; the one told -EDEADLK backs off\n"
	       "(unlocks, ww_mutex_lock_slow() on the contended lock,\n"
	       "relocks the other) and retries. Runs with wound-wait, then\n"
	       "with wait-die.\n"
	       "\n"
	       "Options:\n"
	       "  --rounds N          rounds per class (default 1000)\n"
	       "  --class ww|wd|both  which classes to run (default both)\n"
	       "  --naive             plain mutexes instead (ww_mutex_lock\n"
	       "                      with a NULL ctx): they deadlock in\n"
	       "                      the first round\n"
	       "  --watchdog SECONDS  after this long without progress,\n"
	       "                      report who holds and waits for what\n"
	       "                      on stderr and exit 3 (default 2,\n"
	       "                      decimals allowed)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "Exit status: 0 no deadlock, 1 a round went wrong, 2 usage\n"
	       "error, 3 the watchdog found the threads stuck.\n", path);
}

enum {
	OPT_ROUNDS = CLI_OPT_HELP + 1,
	OPT_CLASS,
	OPT_NAIVE,
	OPT_WATCHDOG,
};

static const struct option abba_options[] = {
	{ "help", no_argument, NULL, CLI_OPT_HELP },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "class", required_argument, NULL, OPT_CLASS },
	{ "naive", no_argument, NULL, OPT_NAIVE },
	{ "watchdog", required_argument, NULL, OPT_WATCHDOG },
	{ NULL, 0, NULL, 0 },
};

static int parse_class(const char *arg, struct abba_config *cfg)
{
	if (!strcmp(arg, "ww") || !strcmp(arg, "both"))
		cfg->wound_wait = true;
	if (!strcmp(arg, "wd") || !strcmp(arg, "both"))
		cfg->wait_die = true;
	if (cfg->wound_wait || cfg->wait_die)
		return 0;
	cli_error("--class: '%s' is not one of ww, wd, both", arg);
	return CLI_EXIT_USAGE;
}

static int abba_option(void *data, int c, const char *arg)
{
	struct abba_config *cfg = data;

	switch (c) {
	case OPT_ROUNDS:
		return cli_parse_uint("--rounds", arg, 1, 1000000000,
				      &cfg->rounds);
	case OPT_CLASS:
		cfg->class_arg = arg;
		return 0;
	case OPT_NAIVE:
		cfg->naive = true;
		return 0;
	case OPT_WATCHDOG:
		return cli_parse_seconds("--watchdog", arg, 3600,
					 &cfg->watchdog_s);
	}
	return CLI_EXIT_USAGE;
}

static const struct cli_options abba_cli = {
	.long_options = abba_options,
	.usage = abba_usage,
	.parse = abba_option,
};

int cmd_scenario_abba(int argc, char **argv, const char *path)
{
	struct abba_config cfg = {
		.rounds = 1000,
		.watchdog_s = 2.0,
		.class_arg = "both",
	};
	int ret;

	if (!cli_parse_options(&abba_cli, &cfg, argc, argv, path, &ret))
		return ret;
	if (parse_class(cfg.class_arg, &cfg))
		return CLI_EXIT_USAGE;

	printf("scenario abba: T1 locks A then B, T2 locks B then A, "
	       "%llu round%s, watchdog %.1f s\n",
	       (unsigned long long)cfg.rounds, cfg.rounds == 1 ? "" : "s",
	       cfg.watchdog_s);
	if (cfg.naive) {
		/*
		 * Nesting NULL-ctx locks of one class is what the checker
		 * exists to stop (rule 1, see `scenario qxl`); this mode is
		 * here to show the deadlock it prevents.
		 */
		if (ww_debug_enabled()) {
			ww_debug_set_enabled(false);
			printf("naive: ww_debug checker switched off, or it "
			       "would stop each thread at its second lock\n");
		}
		return abba_run_class(&cfg, cfg.wait_die && !cfg.wound_wait ?
				      &abba_wd_class : &abba_ww_class,
				      "naive");
	}
	ret = CLI_EXIT_OK;
	if (cfg.wound_wait)
		ret = abba_run_class(&cfg, &abba_ww_class, "wound-wait");
	if (cfg.wait_die && !ret)
		ret = abba_run_class(&cfg, &abba_wd_class, "wait-die");
	return ret;
}
