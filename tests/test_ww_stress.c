// SPDX-License-Identifier: MIT
/*
 * Stress tests of the ww_mutex core, for both classes, after the stress
 * cases of the kernel's test-ww_mutex.c:
 *  - inorder: 2*ncpus workers, each locking all 16 locks in a fixed random
 *    order of its own, backing off with ww_mutex_lock_slow() on -EDEADLK;
 *  - reorder: 2*ncpus workers, each with a random order of the 16 locks;
 *    after a back-off the contended lock moves to the head of the list
 *    (method #2 of the kernel's ww-mutex design document), and the list is
 *    kept for the next transaction, reshuffled now and then;
 *  - one: 2*ncpus workers taking a single lock without a context;
 *  - mixed: 64 locks, lists of 2..16 of them, workers of all the kinds
 *    above plus interruptible reorder ones that interrupt each other
 *    (ttm_interrupt() on the tokens they took at their start) and abort
 *    the transaction on -EINTR.
 *
 * Each lock guards a plain counter that holders increment (a read, maybe a
 * yield, a write); each worker counts its own increments per lock, and at
 * the end the counters must add up exactly: no lost update, so no two
 * holders at once. Unexpected return codes fail the test too.
 *
 * Memory ordering: an unlock without release ordering (the unlock CAS
 * relaxed instead of acq_rel) still passes here on x86, where every CAS is
 * a full barrier; only ThreadSanitizer sees it (26 data races on the
 * contexts and counters these workers hand to each other). So suite ww,
 * this test with it, must stay in .ci/run's TSan build (-Db_sanitize=
 * thread): that build, not this file, is what kills that mutation.
 *
 * A case runs for a time or an iteration budget, whichever ends first:
 * about 0.5 s by default, about 12 s with --long or TTMSIM_STRESS=1
 * (--short wins over the environment). TTMSIM_SEED=n replays a seed.
 */
#include <stdlib.h>

#include "lib/helpers.h"

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

#define MAX_LIST 16
#define MAX_WORKERS 64

static long run_ns = 500 * 1000000L;
static unsigned long max_iterations = 200000;
static unsigned int seed;
static unsigned int ncpus;

enum kind { INORDER, REORDER, ONE, INTERRUPTIBLE, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"inorder", "reorder", "one", "interruptible",
};

struct stress_lock {
	struct ww_mutex lock;
	unsigned long count; /* plain: only touched with the lock held */
};

struct stress {
	struct ww_class *cls;
	struct stress_lock *locks;
	unsigned int nlocks;
	unsigned int nworkers;
	long end_ns;
	pthread_barrier_t start; /* workers see each other's pthread_t */
	pthread_barrier_t done;  /* nobody exits while others may poke it */
	int finished;            /* atomic: workers past "done" */
	struct event all_done;
	struct worker *workers;
};

struct worker {
	struct stress *s;
	pthread_t thread;
	pid_t tid;
	struct ttm_interrupt_token *token; /* set before the start barrier */
	enum kind kind;
	unsigned int id;
	uint32_t rng;
	unsigned int n;                    /* list length */
	unsigned int list[MAX_LIST];       /* lock indices */
	unsigned long *mine;               /* my increments, per lock */
	unsigned long iterations, backoffs, interrupted, pokes;
};

static uint32_t rnd(struct worker *w)
{
	return xorshift32(&w->rng);
}

static bool time_left(struct worker *w)
{
	return w->iterations < max_iterations && now_ns() < w->s->end_ns;
}

static struct ww_mutex *lock_of(struct worker *w, unsigned int i)
{
	return &w->s->locks[w->list[i]].lock;
}

/* Fill w->list with @n distinct random lock indices, in random order. */
static void random_list(struct worker *w, unsigned int n)
{
	unsigned int i, j, tmp, all[256];

	for (i = 0; i < w->s->nlocks; i++)
		all[i] = i;
	for (i = 0; i < n; i++) { /* partial Fisher-Yates */
		j = i + rnd(w) % (w->s->nlocks - i);
		tmp = all[i];
		all[i] = all[j];
		all[j] = tmp;
		w->list[i] = all[i];
	}
	w->n = n;
}

/* The critical section: bump the counter of every lock of the list. */
static void bump(struct worker *w, unsigned int idx)
{
	struct stress_lock *l = &w->s->locks[idx];
	unsigned long v = l->count;

	if ((rnd(w) & 15) == 0)
		sched_yield(); /* widen the window a lost update needs */
	l->count = v + 1;
	w->mine[idx]++;
}

static void work_list(struct worker *w, struct ww_acquire_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < w->n; i++) {
		CHECK(ww_mutex_owner_ctx(lock_of(w, i)) == ctx);
		bump(w, w->list[i]);
	}
}

static void unlock_all(struct worker *w)
{
	unsigned int i = w->n;

	while (i--)
		ww_mutex_unlock(lock_of(w, i));
}

/* Same order every time, restarting from the top after a back-off. */
static void inorder_iteration(struct worker *w)
{
	struct ww_mutex *locks[MAX_LIST];
	struct ww_acquire_ctx ctx;
	unsigned int i;
	int ret;

	for (i = 0; i < w->n; i++)
		locks[i] = lock_of(w, i);
	ww_acquire_init(&ctx, w->s->cls);
	ret = lock_list(locks, w->n, 0, &ctx, false);
	if (CHECK_MSG(ret >= 0, "inorder: %d", ret)) {
		w->backoffs += (unsigned long)ret;
		work_list(w, &ctx);
		unlock_all(w);
	}
	ww_acquire_fini(&ctx);
}

/* Move list[i] to the head of the list. */
static void move_to_front(struct worker *w, unsigned int i)
{
	unsigned int idx = w->list[i];

	memmove(&w->list[1], &w->list[0], i * sizeof(w->list[0]));
	w->list[0] = idx;
}

/*
 * The list keeps the order it ends with: a lock that was contended stays
 * at the front for the next transaction. Interruptible workers abort the
 * transaction on -EINTR.
 */
static void reorder_iteration(struct worker *w, bool intr)
{
	struct ww_acquire_ctx ctx;
	unsigned int i = 0, j;
	int ret;

	ww_acquire_init(&ctx, w->s->cls);
	while (i < w->n) {
		ret = intr ? ww_mutex_lock_interruptible(lock_of(w, i), &ctx)
			   : ww_mutex_lock(lock_of(w, i), &ctx);
		if (ret == 0) {
			i++;
			continue;
		}
		for (j = 0; j < i; j++)
			ww_mutex_unlock(lock_of(w, j));
		if (ret == -EDEADLK) {
			CHECK_MSG(i > 0, "-EDEADLK while holding nothing");
			w->backoffs++;
			ret = 0;
			if (intr)
				ret = ww_mutex_lock_slow_interruptible(
					lock_of(w, i), &ctx);
			else
				ww_mutex_lock_slow(lock_of(w, i), &ctx);
			if (ret == 0) {
				move_to_front(w, i);
				i = 1;
				continue;
			}
		}
		CHECK_MSG(ret == -EINTR && intr, "reorder: lock returned %d",
			  ret);
		w->interrupted++;
		ww_acquire_fini(&ctx);
		return;
	}
	work_list(w, &ctx);
	unlock_all(w);
	ww_acquire_fini(&ctx);
}

/* A context-less lock of one lock; sometimes by trylock first. */
static void one_iteration(struct worker *w)
{
	unsigned int idx = rnd(w) % w->s->nlocks;
	struct ww_mutex *l = &w->s->locks[idx].lock;

	if ((rnd(w) & 3) != 0 || !ww_mutex_trylock(l, NULL))
		CHECK_INT(ww_mutex_lock(l, NULL), 0);
	CHECK(ww_mutex_owner_ctx(l) == NULL);
	bump(w, idx);
	ww_mutex_unlock(l);
}

/* Interrupt another interruptible worker (all are alive until "done"). */
static void poke(struct worker *w)
{
	struct stress *s = w->s;
	struct worker *t = &s->workers[rnd(w) % s->nworkers];

	if (t->kind == INTERRUPTIBLE && t != w) {
		CHECK_INT(ttm_interrupt(t->token), 0);
		w->pokes++;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = test_gettid();
	CHECK_INT(ttm_interrupt_self(&w->token), 0);
	pthread_barrier_wait(&w->s->start);
	do {
		switch (w->kind) {
		case INORDER:
			inorder_iteration(w);
			break;
		case REORDER:
			reorder_iteration(w, false);
			if ((rnd(w) & 63) == 0) /* or the orders converge */
				random_list(w, w->n);
			break;
		case ONE:
			one_iteration(w);
			break;
		case INTERRUPTIBLE:
			reorder_iteration(w, true);
			if ((rnd(w) & 3) == 0)
				poke(w);
			break;
		case NR_KINDS:
			break;
		}
		w->iterations++;
	} while (time_left(w));
	pthread_barrier_wait(&w->s->done);
	if (__atomic_add_fetch(&w->s->finished, 1, __ATOMIC_ACQ_REL) ==
	    (int)w->s->nworkers)
		event_set(&w->s->all_done);
	return NULL;
}

/*
 * The workers did not finish: a deadlock (or a lost wake-up). They are
 * stuck in lock calls that cannot be interrupted, so the test cannot go
 * on: show who holds what and who waits, and abort.
 */
static void stalled(struct stress *s)
{
	unsigned int i;

	fprintf(stderr, "stress: %s: workers stalled, deadlock? (TTMSIM_SEED=%u)\n",
		s->cls->name, seed);
	for (i = 0; i < s->nworkers; i++)
		fprintf(stderr, "  worker %u: tid %d, %s\n", i,
			(int)s->workers[i].tid,
			kind_names[s->workers[i].kind]);
	for (i = 0; i < s->nlocks; i++) {
		struct ww_mutex *l = &s->locks[i].lock;

		if (ww_mutex_is_locked(l) || ww_mutex_waiter_count(l))
			fprintf(stderr, "  lock %u: held by tid %d, %u waiting\n",
				i, (int)ww_mutex_owner_tid(l),
				ww_mutex_waiter_count(l));
	}
	abort();
}

struct stress_case {
	unsigned int nlocks;
	unsigned int workers_per_cpu;
	bool mixed;    /* kinds round-robin; else all of @kind */
	enum kind kind;
};

static void setup_worker(struct stress *s, const struct stress_case *c,
			 struct worker *w, unsigned int id)
{
	unsigned int n;

	*w = (struct worker){ .s = s, .id = id };
	w->rng = seed * 2654435761u + id * 40503u + c->nlocks + 1;
	if (!w->rng)
		w->rng = 1;
	w->kind = c->mixed ? (enum kind)(id % NR_KINDS) : c->kind;
	w->mine = calloc(s->nlocks, sizeof(*w->mine));
	assert_non_null(w->mine);
	/* 16 locks (all of them in the 16-lock cases), or 2..16 in mixed */
	n = !c->mixed || w->kind == INORDER ? MAX_LIST
					     : 2 + rnd(w) % (MAX_LIST - 1);
	random_list(w, n < s->nlocks ? n : s->nlocks);
}

static void report(struct stress *s, long elapsed_ns)
{
	unsigned long it[NR_KINDS] = { 0 }, bo[NR_KINDS] = { 0 };
	unsigned long in[NR_KINDS] = { 0 }, pk[NR_KINDS] = { 0 };
	unsigned int i;

	for (i = 0; i < s->nworkers; i++) {
		struct worker *w = &s->workers[i];

		it[w->kind] += w->iterations;
		bo[w->kind] += w->backoffs;
		in[w->kind] += w->interrupted;
		pk[w->kind] += w->pokes;
	}
	print_message("%s: %u workers, %u locks, %.2f s\n", s->cls->name,
		      s->nworkers, s->nlocks, elapsed_ns / 1e9);
	for (i = 0; i < NR_KINDS; i++) {
		if (!it[i])
			continue;
		print_message("  %-13s %9lu transactions %8lu back-offs %6lu -EINTR %6lu pokes\n",
			      kind_names[i], it[i], bo[i], in[i], pk[i]);
	}
}

/* Every increment made is in the counter: nothing lost, nothing extra. */
static void check_counts(struct stress *s)
{
	unsigned int i, j;

	for (i = 0; i < s->nlocks; i++) {
		unsigned long sum = 0;

		for (j = 0; j < s->nworkers; j++)
			sum += s->workers[j].mine[i];
		CHECK_MSG(sum == s->locks[i].count,
			  "lock %u: counter %lu, increments made %lu", i,
			  s->locks[i].count, sum);
		CHECK(!ww_mutex_is_locked(&s->locks[i].lock));
		CHECK_INT(ww_mutex_waiter_count(&s->locks[i].lock), 0);
	}
}

static void run_case(struct ww_class *cls, const struct stress_case *c)
{
	struct stress s = { .cls = cls, .nlocks = c->nlocks };
	unsigned int i;
	long start;

	s.nworkers = c->workers_per_cpu * ncpus;
	if (s.nworkers > MAX_WORKERS)
		s.nworkers = MAX_WORKERS;
	s.locks = calloc(s.nlocks, sizeof(*s.locks));
	s.workers = calloc(s.nworkers, sizeof(*s.workers));
	assert_non_null(s.locks);
	assert_non_null(s.workers);
	for (i = 0; i < s.nlocks; i++)
		ww_mutex_init(&s.locks[i].lock, cls);
	for (i = 0; i < s.nworkers; i++)
		setup_worker(&s, c, &s.workers[i], i);
	pthread_barrier_init(&s.start, NULL, s.nworkers + 1);
	event_init(&s.all_done);
	pthread_barrier_init(&s.done, NULL, s.nworkers);

	for (i = 0; i < s.nworkers; i++)
		s.workers[i].thread = start_thread(worker_main, &s.workers[i]);
	start = now_ns();
	s.end_ns = start + run_ns;
	pthread_barrier_wait(&s.start);
	if (!event_wait_for(&s.all_done, (int)(run_ns / 1000000000L) + 30))
		stalled(&s);
	for (i = 0; i < s.nworkers; i++) {
		join_thread(s.workers[i].thread);
		ttm_interrupt_token_put(s.workers[i].token);
	}
	report(&s, now_ns() - start);
	check_counts(&s);

	event_destroy(&s.all_done);
	pthread_barrier_destroy(&s.start);
	pthread_barrier_destroy(&s.done);
	for (i = 0; i < s.nworkers; i++)
		free(s.workers[i].mine);
	for (i = 0; i < s.nlocks; i++)
		ww_mutex_destroy(&s.locks[i].lock);
	free(s.workers);
	free(s.locks);
	assert_checks_passed();
}

static void stress_inorder(void **state)
{
	static const struct stress_case c = { 16, 2, false, INORDER };

	run_case(*state, &c);
}

static void stress_reorder(void **state)
{
	static const struct stress_case c = { 16, 2, false, REORDER };

	run_case(*state, &c);
}

static void stress_one(void **state)
{
	static const struct stress_case c = { 1, 2, false, ONE };

	run_case(*state, &c);
}

static void stress_mixed(void **state)
{
	static const struct stress_case c = { 64, NR_KINDS, true, INORDER };

	run_case(*state, &c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(stress_inorder),
		BOTH_CLASSES(stress_reorder),
		BOTH_CLASSES(stress_one),
		BOTH_CLASSES(stress_mixed),
	};
	const char *env = getenv("TTMSIM_STRESS");
	bool long_run = env && strcmp(env, "0") != 0 && *env;
	long n;

	if (!stress_args(argc, argv, &long_run,
			 "--long or TTMSIM_STRESS=1: ~12 s a case "
			 "(else ~0.5 s)"))
		return 2;
	if (long_run) {
		run_ns = 12 * 1000000000L;
		max_iterations = 100000000;
	}
	seed = stress_seed();
	n = sysconf(_SC_NPROCESSORS_ONLN);
	ncpus = n < 1 ? 1 : n > 16 ? 16 : (unsigned int)n;
	printf("stress: %s run, %u cpus, TTMSIM_SEED=%u\n",
	       long_run ? "long" : "short", ncpus, seed);
	return cmocka_run_group_tests_name("ww_stress", tests, NULL, NULL);
}
