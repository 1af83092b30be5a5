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
 * The clock runs from the start barrier until ttm_execbuf_wait_idle()
 * returns. Each figure is the best of --reps repetitions, a fresh device,
 * GPU and clients per repetition. A run fails (exit 1) unless every job
 * was accepted and completed (submitted == completed after wait_idle) and
 * ttm_device_check() passes; with the default VRAM, which holds every
 * buffer, an eviction also fails it (the run would not measure what it
 * says).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "cli.h"

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

struct bench_config {
	uint64_t threads, bos, per_job, jobs, reps, seed, engines, vram;
	bool vram_given; /* --vram: eviction allowed */
	bool json, quick;
	bool checker_runs;        /* --checker */
	enum cli_checker checker; /* as the program started */
};

static const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;

/* One repetition of one mode. */
struct rep_result {
	uint64_t jobs, backoffs, restarts, evictions, bytes_moved;
	double elapsed_s, jobs_per_s;
};

struct mode_result {
	struct rep_result best; /* the rep with the most jobs/s */
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
} __attribute__((aligned(64)));

struct run {
	const struct bench_config *cfg;
	enum order order;
	struct ttm_device *dev;
	pthread_barrier_t start;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int finished; /* under lock */
	int stop;              /* atomic: a worker failed */
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64*: never seeded with 0. */
static uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Choose per_job distinct buffers, in a random order: partial shuffle. */
static void pick_bos(struct worker *w)
{
	const struct bench_config *cfg = w->run->cfg;
	unsigned int n = (unsigned int)cfg->bos, i;

	for (i = 0; i < cfg->per_job; i++) {
		unsigned int j = i + (unsigned int)(xorshift64(&w->rng) %
						    (n - i));
		unsigned int tmp = w->perm[i];

		w->perm[i] = w->perm[j];
		w->perm[j] = tmp;
		w->list[i].handle = w->handles[w->perm[i]];
	}
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
 * Return 0 or -ENOENT.
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
	const struct bench_config *cfg = run->cfg;
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
				w->what = "ttm_client_lookup";
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
