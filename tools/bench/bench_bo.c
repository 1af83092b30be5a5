// SPDX-License-Identifier: MIT
/*
 * ttmsim bench bo: what the buffer-object hot path costs, and how fast
 * eviction moves bytes.
 *
 * Two measurements, each the best of --reps repetitions:
 *  - per-buffer cost: N buffers, all resident in a VRAM large enough that
 *    nothing is ever evicted; one pass reserves (no ticket), validates
 *    (already placed: the fast path) and unreserves each of them in a
 *    random order, so that every unreserve really moves a buffer within
 *    the LRU; then the same through the locking helper, 8 buffers per
 *    transaction. Reported in ns per buffer for each N: if the hot path
 *    scanned anything of size N, the figure would grow with N.
 *    Next to it, the floors and parts that say where the time goes: one
 *    locked read-modify-write per buffer on a bench-owned line (laid out
 *    as far apart as the buffers), without and with a software prefetch
 *    of the line a few buffers ahead; reserve + unreserve alone (no
 *    validate); the whole pass with the prefetch of each buffer a few
 *    ahead, as a caller that knows its next buffers could do; and the
 *    whole pass over the buffers pinned (no LRU move on unreserve).
 *  - eviction: a 16 MiB VRAM, a large GTT, 1 MiB buffers twice as many as
 *    VRAM holds, a real-time fake GPU running the copies. Validating them
 *    round-robin into VRAM only makes every validate evict the LRU head,
 *    so each one moves two buffers. Reported as MiB moved per second (from
 *    the device's counters) and evictions per second.
 * The device's accounting invariant (ttm_device_check()) is checked after
 * each part; a violation fails the run (exit 1).
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/gpu.h"
#include "bench.h"

#define MAX_COUNTS 16
#define MAX_BUFFERS (UINT64_C(1) << 24)
#define PER_TX 8 /* buffers per transaction of the helper loop */
/*
 * How far ahead the prefetching passes fetch: a miss takes ~100 ns, a
 * buffer's pass tens, so a few buffers ahead is in time and still cached.
 */
#define AHEAD 8
/*
 * The bench-owned line of each buffer in the read-modify-write floor, one
 * per SLOT_BYTES: about what a buffer spans (struct ttm_bo and its
 * resource, 240 bytes with malloc's headers), so that the floor misses
 * the TLB as often as the real pass.
 */
#define SLOT_BYTES 256

#define EVICT_VRAM (UINT64_C(16) << 20)
#define EVICT_BO_SIZE (UINT64_C(1) << 20)
#define EVICT_BOS (2 * EVICT_VRAM / EVICT_BO_SIZE)

struct bo_config {
	struct bench_common c; /* first: the harness's */
	uint64_t counts[MAX_COUNTS];
	size_t n_counts;
	uint64_t size, evictions;
};
_Static_assert(offsetof(struct bo_config, c) == 0, "the harness's first");

/* The figures of one repetition at one buffer count, ns per buffer. */
struct count_rep {
	double touch_ns;  /* ttm_bo_size() alone: the memory-latency floor */
	double single_ns; /* reserve + validate + unreserve */
	double exec_ns;   /* the helper, PER_TX per transaction */
	/* Where single_ns goes (the file's comment). */
	double rmw_ns;             /* a locked RMW of a bench-owned line */
	double rmw_prefetch_ns;    /* the same, prefetched AHEAD */
	double reserve_ns;         /* reserve + unreserve, no validate */
	double single_prefetch_ns; /* single_ns, each buffer prefetched */
	double single_pinned_ns;   /* single_ns, pinned: no LRU move */
};

struct count_result {
	struct count_rep *reps;
	struct bench_stat touch, single, exec;
	struct bench_stat rmw, rmw_prefetch, reserve, single_prefetch;
	struct bench_stat single_pinned;
	double create_s; /* creating the buffers, once */
	double bookkeeping_bytes; /* per buffer, beyond its contents */
};

struct evict_result {
	double mib_per_s, evictions_per_s, elapsed_s;
	uint64_t evictions, bytes_moved;
};

static const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;

static int fail(const char *what, int ret)
{
	cli_error("bench bo: %s: %s", what, strerror(-ret));
	return CLI_EXIT_FAILURE;
}

static int check_device(struct ttm_device *dev)
{
	char why[256];

	if (ttm_device_check(dev, why, sizeof(why))) {
		cli_error("bench bo: accounting invariant broken: %s", why);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

/* xorshift64*'s state from @seed, never 0 (splitmix64 of any seed). */
static uint64_t rng_seed(uint64_t seed)
{
	uint64_t z = cli_splitmix64(&seed);

	return z ? z : 1;
}

/* @bos in a new random order, in place: Fisher-Yates; @n >= 1. */
static void shuffle(struct ttm_bo **bos, uint64_t n, uint64_t *rng)
{
	uint64_t i;

	for (i = n - 1; i > 0; i--) {
		uint64_t j = cli_xorshift64(rng) % (i + 1);
		struct ttm_bo *tmp = bos[i];

		bos[i] = bos[j];
		bos[j] = tmp;
	}
}

/* -------------------------------------------------------------------- */
/* Per-buffer cost. */

/*
 * Each pass a function of its own, never inlined: a profile (callgrind's
 * cache simulation counts the lines missed per buffer) then tells them
 * apart. Their bodies are inlined into them.
 */
#define PASS __attribute__((noinline))
#define BODY static inline __attribute__((always_inline))

/*
 * The floor of a random-order pass: one read of each buffer's struct, in
 * the same order. Once the buffers outgrow the caches, this is a cache
 * miss per buffer, which the real pass pays too (and more: it also
 * touches its LRU neighbours).
 */
PASS static double pass_touch(struct ttm_bo **order, uint64_t n)
{
	uint64_t i, sum = 0, start = cli_now_ns();

	for (i = 0; i < n; i++)
		sum += ttm_bo_size(order[i]);
	/* Keep the loop: the sum must be used. */
	__asm__ volatile("" : : "r"(sum));
	return (double)(cli_now_ns() - start) / (double)n;
}

/*
 * One locked read-modify-write per buffer, in a random order: the line of
 * slot @order[i] of @slots (SLOT_BYTES each). A reserve makes at least
 * one (the lock's compare-and-swap); on x86 a locked instruction lets no
 * later load start before it is done, so unlike pass_touch()'s reads the
 * misses are taken one after the other. With @prefetch, the line AHEAD
 * slots on is prefetched for writing first: a prefetch is not held back
 * by the locked instructions, so the misses overlap again.
 */
BODY double rmw_body(char *slots, const uint32_t *order, uint64_t n,
		     bool prefetch)
{
	uint64_t i, start = cli_now_ns();

	for (i = 0; i < n; i++) {
		if (prefetch && i + AHEAD < n)
			__builtin_prefetch(slots + (size_t)order[i + AHEAD] *
					   SLOT_BYTES, 1);
		__atomic_fetch_add((uint64_t *)(slots + (size_t)order[i] *
						SLOT_BYTES), 1,
				   __ATOMIC_SEQ_CST);
	}
	return (double)(cli_now_ns() - start) / (double)n;
}

/*
 * A plain read of each slot in @order: what pass_touch() is to the
 * buffers, run before each timed pass so that each starts with its lines
 * read once in its order, as the single pass does after pass_touch().
 */
static void read_slots(const char *slots, const uint32_t *order, uint64_t n)
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++)
		sum += *(const uint64_t *)(slots + (size_t)order[i] *
					   SLOT_BYTES);
	__asm__ volatile("" : : "r"(sum));
}

PASS static double pass_rmw(char *slots, const uint32_t *order, uint64_t n)
{
	return rmw_body(slots, order, n, false);
}

PASS static double pass_rmw_prefetch(char *slots, const uint32_t *order,
				     uint64_t n)
{
	return rmw_body(slots, order, n, true);
}

/*
 * What a caller that knows its next buffer can fetch ahead: its struct,
 * every line of it (the reservation's lock and the LRU node are in it).
 * What it points to (its resource, its LRU neighbours) takes a read of
 * it first: only the library could chain those.
 */
static void prefetch_bo(struct ttm_bo *bo)
{
	const char *p = (const char *)bo;
	size_t off;

	for (off = 0; off < sizeof(*bo); off += 64)
		__builtin_prefetch(p + off, 1);
	__builtin_prefetch(p + sizeof(*bo) - 1, 1);
}

/* reserve + unreserve alone: the lock and the LRU move, no validate. */
PASS static int pass_reserve(struct ttm_bo **order, uint64_t n)
{
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ttm_bo_reserve(order[i], false, false, NULL);
		if (ret)
			return fail("ttm_bo_reserve", ret);
		ttm_bo_unreserve(order[i]);
	}
	return 0;
}

BODY int single_body(struct ttm_bo **order, uint64_t n, bool prefetch)
{
	struct ttm_operation_ctx ctx = { 0 };
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (prefetch && i + AHEAD < n)
			prefetch_bo(order[i + AHEAD]);
		ret = ttm_bo_reserve(order[i], false, false, NULL);
		if (ret)
			return fail("ttm_bo_reserve", ret);
		ret = ttm_bo_validate(order[i], &vram_gtt, &ctx);
		ttm_bo_unreserve(order[i]);
		if (ret)
			return fail("ttm_bo_validate", ret);
	}
	return 0;
}

PASS static int pass_single(struct ttm_bo **order, uint64_t n)
{
	return single_body(order, n, false);
}

PASS static int pass_single_prefetch(struct ttm_bo **order, uint64_t n)
{
	return single_body(order, n, true);
}

/* One transaction of the helper over @bos[0..@n): lock all, validate. */
static int exec_tx(struct ttm_device *dev, struct ttm_bo **bos,
		   unsigned int n)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_exec exec;
	unsigned int i;
	int ret = 0;

	ttm_exec_init(&exec, dev, 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		for (i = 0; i < n; i++) {
			ret = ttm_exec_lock_bo(&exec, bos[i]);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				goto out;
		}
		for (i = 0; i < n; i++) {
			ret = ttm_bo_validate(bos[i], &vram_gtt, &ctx);
			/* Never here (nothing is evicted), but the idiom. */
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				goto out;
		}
	}
	ttm_exec_done(&exec);
out:
	ttm_exec_fini(&exec);
	return ret ? fail("ttm_exec", ret) : 0;
}

PASS static int pass_exec(struct ttm_device *dev, struct ttm_bo **order,
		     uint64_t n)
{
	uint64_t i;
	int ret;

	for (i = 0; i < n; i += PER_TX) {
		ret = exec_tx(dev, order + i,
			      (unsigned int)(n - i < PER_TX ? n - i : PER_TX));
		if (ret)
			return ret;
	}
	return 0;
}

/* @order[0..@n) a random permutation of 0..n-1: Fisher-Yates. */
static void shuffle_index(uint32_t *order, uint64_t n, uint64_t *rng)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = cli_xorshift64(rng) % (i + 1);
		uint32_t tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
}

/*
 * Pin (@pin) or unpin every buffer, each under its reservation. A pinned
 * buffer stays off the LRU: its unreserve takes the device lock but moves
 * nothing, so a pass over pinned buffers is the pass without the LRU
 * move's writes to each buffer's two neighbours.
 */
static int pin_all(struct ttm_bo **bos, uint64_t n, bool pin)
{
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ttm_bo_reserve(bos[i], false, false, NULL);
		if (ret)
			return fail("ttm_bo_reserve", ret);
		ret = pin ? ttm_bo_pin(bos[i]) : ttm_bo_unpin(bos[i]);
		ttm_bo_unreserve(bos[i]);
		if (ret)
			return fail(pin ? "ttm_bo_pin" : "ttm_bo_unpin", ret);
	}
	return 0;
}

/*
 * @pass over @bos in a new random order, after an untimed touch of them
 * in that order; its ns per buffer into *@ns. Return @pass's status.
 */
static int timed_pass(int (*pass)(struct ttm_bo **, uint64_t),
		      struct ttm_bo **bos, uint64_t n, uint64_t *rng,
		      double *ns)
{
	uint64_t start;
	int ret;

	shuffle(bos, n, rng);
	pass_touch(bos, n);
	start = cli_now_ns();
	ret = pass(bos, n);
	*ns = (double)(cli_now_ns() - start) / (double)n;
	return ret;
}

/*
 * The parts of one repetition after the figures of the first table, each
 * pass in a new random order (an order just walked leaves each buffer's
 * LRU neighbours the next ones: cached), and each after an untimed plain
 * read of its lines in that order, as the single pass comes after the
 * touch pass: all start from the same state of the caches (a large last
 * level cache may hold much of what a read brought in; 260 MiB on the
 * machine of docs/benchmarks.md). @slots and
 * @order: n slots of the read-modify-write floor and their order.
 */
static int parts_rep(struct ttm_bo **bos, uint64_t n, char *slots,
		     uint32_t *order, uint64_t *rng, struct count_rep *r)
{
	int ret;

	ret = timed_pass(pass_reserve, bos, n, rng, &r->reserve_ns);
	if (!ret)
		ret = timed_pass(pass_single_prefetch, bos, n, rng,
				 &r->single_prefetch_ns);
	if (!ret)
		ret = pin_all(bos, n, true);
	if (!ret)
		ret = timed_pass(pass_single, bos, n, rng,
				 &r->single_pinned_ns);
	if (!ret)
		ret = pin_all(bos, n, false);
	if (ret)
		return ret;

	/*
	 * The floors last: their lines, as many bytes as the buffers', push
	 * the buffers out of a large cache. An untimed pass over the buffers
	 * then brings them back, as the helper pass left them before: the
	 * next repetition's first-table figures start as they always did.
	 */
	shuffle_index(order, n, rng);
	read_slots(slots, order, n);
	r->rmw_ns = pass_rmw(slots, order, n);
	shuffle_index(order, n, rng);
	read_slots(slots, order, n);
	r->rmw_prefetch_ns = pass_rmw_prefetch(slots, order, n);
	shuffle(bos, n, rng);
	return pass_single(bos, n);
}

/* The resident set in bytes (/proc/self/statm), or -1. */
static double rss_bytes(void)
{
	unsigned long long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	int got;

	if (!f)
		return -1;
	got = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return got == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) :
			  -1;
}

static int run_count(const struct bo_config *cfg, uint64_t n,
		     struct count_result *res)
{
	/*
	 * Room for all in VRAM: the fast path, nothing ever evicted. Pages
	 * of the buffers' size (the largest power of two dividing it, at
	 * most the kernel's 4 KiB), so that VRAM holds exactly n of them.
	 */
	struct ttm_device_options opts = {
		.vram_size = n * cfg->size,
		.page_size = cfg->size & -cfg->size,
	};
	struct ttm_device_stats st;
	struct ttm_device *dev;
	struct ttm_bo **bos;
	uint32_t *order = NULL;
	char *slots = NULL;
	uint64_t i, rep, start, in_vram, rng = rng_seed(cfg->c.seed + n);
	double rss_before, rss_after;
	int ret;

	bos = calloc(n, sizeof(*bos));
	if (!bos) {
		cli_error("bench bo: out of memory");
		return CLI_EXIT_FAILURE;
	}
	/*
	 * Bookkeeping: RSS growth over the creations, minus the contents.
	 * The benchmark's own array is made resident first, and the freed
	 * memory of the previous count handed back, so that neither counts.
	 */
	memset(bos, 0, n * sizeof(*bos));
	malloc_trim(0);
	if (opts.page_size > TTM_DEFAULT_PAGE_SIZE)
		opts.page_size = TTM_DEFAULT_PAGE_SIZE;
	ret = ttm_device_create(&opts, &dev);
	if (ret) {
		free(bos);
		return fail("ttm_device_create", ret);
	}
	rss_before = rss_bytes();
	start = cli_now_ns();
	for (i = 0; i < n; i++) {
		ret = ttm_bo_create(dev, cfg->size, &vram_gtt, 0, &bos[i]);
		if (ret) {
			ret = fail("ttm_bo_create", ret);
			goto out;
		}
	}
	res->create_s = (double)(cli_now_ns() - start) / 1e9;
	rss_after = rss_bytes();
	res->bookkeeping_bytes = rss_before < 0 || rss_after < 0 ? NAN :
		(rss_after - rss_before - (double)(n * cfg->size)) / (double)n;
	/* After the bookkeeping's measure: the floor's lines, the bench's. */
	order = malloc(n * sizeof(*order));
	slots = aligned_alloc(64, n * SLOT_BYTES);
	if (!order || !slots) {
		cli_error("bench bo: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	memset(slots, 0, n * SLOT_BYTES);

	/* Repetitions outermost, both loops back to back: drift hits both. */
	for (rep = 0; rep < cfg->c.reps; rep++) {
		struct count_rep *r = &res->reps[rep];

		shuffle(bos, n, &rng);
		r->touch_ns = pass_touch(bos, n);
		start = cli_now_ns();
		ret = pass_single(bos, n);
		if (ret)
			goto out;
		r->single_ns = (double)(cli_now_ns() - start) / (double)n;

		shuffle(bos, n, &rng);
		start = cli_now_ns();
		ret = pass_exec(dev, bos, n);
		if (ret)
			goto out;
		r->exec_ns = (double)(cli_now_ns() - start) / (double)n;

		ret = parts_rep(bos, n, slots, order, &rng, r);
		if (ret)
			goto out;
	}
	bench_stat(&res->touch, &res->reps[0].touch_ns, sizeof(*res->reps),
		   cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->single, &res->reps[0].single_ns, sizeof(*res->reps),
		   cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->exec, &res->reps[0].exec_ns, sizeof(*res->reps),
		   cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->rmw, &res->reps[0].rmw_ns, sizeof(*res->reps),
		   cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->rmw_prefetch, &res->reps[0].rmw_prefetch_ns,
		   sizeof(*res->reps), cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->reserve, &res->reps[0].reserve_ns,
		   sizeof(*res->reps), cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->single_prefetch, &res->reps[0].single_prefetch_ns,
		   sizeof(*res->reps), cfg->c.reps, BENCH_LOWER);
	bench_stat(&res->single_pinned, &res->reps[0].single_pinned_ns,
		   sizeof(*res->reps), cfg->c.reps, BENCH_LOWER);

	/* A move would mean the slow path was measured: misconfigured. */
	ttm_device_get_stats(dev, &st);
	in_vram = st.domain[TTM_DOMAIN_VRAM].buffers;
	if (st.moves || in_vram != n) {
		cli_error("bench bo: %llu buffers in VRAM and %llu moves; "
			  "expected %llu and none",
			  (unsigned long long)in_vram,
			  (unsigned long long)st.moves, (unsigned long long)n);
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	ret = check_device(dev);
out:
	for (i = 0; i < n && bos[i]; i++)
		ttm_bo_put(bos[i]);
	if (ttm_device_destroy(dev))
		ret = fail("device destroy", -EBUSY);
	free(slots);
	free(order);
	free(bos);
	return ret;
}

/* -------------------------------------------------------------------- */
/* Eviction throughput. */

/* Wait for every copy: reading a buffer waits for its pending moves. */
static int drain(struct ttm_bo **bos, unsigned int n)
{
	uint32_t word;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ttm_bo_reserve(bos[i], false, false, NULL);
		if (ret)
			return fail("ttm_bo_reserve", ret);
		ret = ttm_bo_read(bos[i], 0, &word, sizeof(word));
		ttm_bo_unreserve(bos[i]);
		if (ret)
			return fail("ttm_bo_read", ret);
	}
	return 0;
}

static int evict_rep(const struct bo_config *cfg, struct evict_result *res)
{
	struct ttm_device_options opts = {
		.vram_size = EVICT_VRAM,
		.gtt_size = 2 * EVICT_BOS * EVICT_BO_SIZE,
	};
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_bo *bos[EVICT_BOS] = { NULL };
	struct ttm_device_stats before, after;
	struct ttm_device *dev = NULL;
	struct ttm_gpu *gpu;
	uint64_t i, start;
	unsigned int b;
	int ret;

	ret = ttm_gpu_create(1, NULL, &gpu);
	if (ret)
		return fail("ttm_gpu_create", ret);
	opts.gpu = gpu;
	ret = ttm_device_create(&opts, &dev);
	if (ret) {
		ret = fail("ttm_device_create", ret);
		goto out;
	}
	/* The first half fills VRAM, the second lands in GTT. */
	for (b = 0; b < EVICT_BOS; b++) {
		ret = ttm_bo_create(dev, EVICT_BO_SIZE, &vram_gtt, 0, &bos[b]);
		if (ret) {
			ret = fail("ttm_bo_create", ret);
			goto out;
		}
	}

	/*
	 * Round-robin over twice what VRAM holds, starting with the first
	 * buffer in GTT: the buffer validated next is always the one evicted
	 * longest ago, and the LRU head the one validated longest ago, so
	 * every validate evicts one buffer and moves two.
	 */
	ttm_device_get_stats(dev, &before);
	start = cli_now_ns();
	for (i = 0; i < cfg->evictions; i++) {
		struct ttm_bo *bo = bos[(i + EVICT_BOS / 2) % EVICT_BOS];

		ret = ttm_bo_reserve(bo, false, false, NULL);
		if (ret) {
			ret = fail("ttm_bo_reserve", ret);
			goto out;
		}
		ret = ttm_bo_validate(bo, &vram_only, &ctx);
		ttm_bo_unreserve(bo);
		if (ret) {
			ret = fail("ttm_bo_validate", ret);
			goto out;
		}
	}
	ret = drain(bos, EVICT_BOS);
	if (ret)
		goto out;
	res->elapsed_s = (double)(cli_now_ns() - start) / 1e9;
	ttm_device_get_stats(dev, &after);
	res->evictions = after.evictions - before.evictions;
	res->bytes_moved = after.bytes_moved - before.bytes_moved;
	res->mib_per_s = (double)res->bytes_moved / (1 << 20) /
			 res->elapsed_s;
	res->evictions_per_s = (double)res->evictions / res->elapsed_s;
	ret = check_device(dev);
out:
	for (b = 0; b < EVICT_BOS; b++)
		ttm_bo_put(bos[b]);
	/* A device left alive keeps its GPU: free neither. */
	if (ttm_device_destroy(dev))
		ret = fail("device destroy", -EBUSY);
	else
		ttm_gpu_destroy(gpu);
	return ret;
}

/* Every repetition into @reps; the best (most MiB/s) into *@best. */
static int run_evict(const struct bo_config *cfg, struct evict_result *reps,
		     struct evict_result *best)
{
	uint64_t rep;
	int ret;

	for (rep = 0; rep < cfg->c.reps; rep++) {
		ret = evict_rep(cfg, &reps[rep]);
		if (ret)
			return ret;
		if (rep == 0 || reps[rep].mib_per_s > best->mib_per_s)
			*best = reps[rep];
	}
	return 0;
}

/* -------------------------------------------------------------------- */
/* Output: the text tables and the JSON records. */

static void bo_print_config(const void *data)
{
	const struct bo_config *cfg = data;
	size_t c;

	printf("config: reps %llu (best of), buffers ",
	       (unsigned long long)cfg->c.reps);
	for (c = 0; c < cfg->n_counts; c++)
		printf("%s%llu", c ? "," : "",
		       (unsigned long long)cfg->counts[c]);
	printf(", size %llu bytes, evictions %llu, seed %llu%s\n",
	       (unsigned long long)cfg->size,
	       (unsigned long long)cfg->evictions,
	       (unsigned long long)cfg->c.seed,
	       cfg->c.quick ? ", quick" : "");
}

static void print_count(uint64_t n, const struct count_result *r)
{
	printf("  %10llu %8.1f %8.1f %8.2fx %14.1f %10.3f %10.1f\n",
	       (unsigned long long)n, r->touch.best, r->single.best,
	       bench_ratio(r->single.best, r->touch.best), r->exec.best,
	       r->create_s, r->bookkeeping_bytes);
	fflush(stdout);
}

/* The second table: where the single figure goes, with its floors. */
static void print_parts(uint64_t n, const struct count_result *r)
{
	printf("  %10llu %8.1f %8.1f %8.1f %10.1f %8.1f %8.1f %8.1f %8.2fx "
	       "%8.2fx\n", (unsigned long long)n, r->touch.best, r->rmw.best,
	       r->rmw_prefetch.best, r->reserve.best, r->single.best,
	       r->single_prefetch.best, r->single_pinned.best,
	       bench_ratio(r->single.best, r->rmw.best),
	       bench_ratio(r->single_prefetch.best, r->touch.best));
}

static void print_evict(const struct evict_result *r)
{
	printf("\neviction: VRAM %llu MiB, %llu buffers of %llu MiB "
	       "validated round-robin into VRAM only, real-time GPU\n",
	       (unsigned long long)(EVICT_VRAM >> 20),
	       (unsigned long long)EVICT_BOS,
	       (unsigned long long)(EVICT_BO_SIZE >> 20));
	printf("  %.1f MiB/s moved, %.0f evictions/s (%llu evictions, "
	       "%llu MiB in %.3f s)\n", r->mib_per_s, r->evictions_per_s,
	       (unsigned long long)r->evictions,
	       (unsigned long long)(r->bytes_moved >> 20), r->elapsed_s);
}

static void add_count(struct json_object *results,
		      const struct bo_config *cfg, uint64_t n,
		      const struct count_result *res)
{
	struct json_object *r = bench_record(results, "per_buffer"), *reps;
	uint64_t rep;

	bench_add_u64(r, "buffers", n);
	bench_add_stat(r, "single_ns_per_buffer", &res->single, 2);
	bench_add_stat(r, "exec_ns_per_buffer", &res->exec, 2);
	bench_add_stat(r, "touch_ns_per_buffer", &res->touch, 2);
	bench_add_fixed(r, "ratio_single_to_touch",
			bench_ratio(res->single.best, res->touch.best), 4);
	bench_add_stat(r, "rmw_ns_per_buffer", &res->rmw, 2);
	bench_add_stat(r, "rmw_prefetch_ns_per_buffer", &res->rmw_prefetch, 2);
	bench_add_stat(r, "reserve_unreserve_ns_per_buffer", &res->reserve, 2);
	bench_add_stat(r, "single_prefetch_ns_per_buffer",
		       &res->single_prefetch, 2);
	bench_add_stat(r, "single_pinned_ns_per_buffer", &res->single_pinned,
		       2);
	bench_add_fixed(r, "ratio_single_to_rmw",
			bench_ratio(res->single.best, res->rmw.best), 4);
	bench_add_fixed(r, "ratio_single_prefetch_to_touch",
			bench_ratio(res->single_prefetch.best,
				    res->touch.best), 4);
	bench_add_u64(r, "prefetch_ahead", AHEAD);
	bench_add_fixed(r, "create_s", res->create_s, 4);
	bench_add_fixed(r, "bookkeeping_bytes_per_buffer",
			res->bookkeeping_bytes, 1);
	reps = bench_add_array(r, "reps");
	for (rep = 0; rep < cfg->c.reps; rep++) {
		const struct count_rep *cr = &res->reps[rep];
		struct json_object *o = json_object_new_object();

		bench_add_fixed(o, "single_ns_per_buffer", cr->single_ns, 2);
		bench_add_fixed(o, "exec_ns_per_buffer", cr->exec_ns, 2);
		bench_add_fixed(o, "touch_ns_per_buffer", cr->touch_ns, 2);
		bench_add_fixed(o, "rmw_ns_per_buffer", cr->rmw_ns, 2);
		bench_add_fixed(o, "rmw_prefetch_ns_per_buffer",
				cr->rmw_prefetch_ns, 2);
		bench_add_fixed(o, "reserve_unreserve_ns_per_buffer",
				cr->reserve_ns, 2);
		bench_add_fixed(o, "single_prefetch_ns_per_buffer",
				cr->single_prefetch_ns, 2);
		bench_add_fixed(o, "single_pinned_ns_per_buffer",
				cr->single_pinned_ns, 2);
		json_object_array_add(reps, o);
	}
}

static void add_evict_figures(struct json_object *o,
			      const struct evict_result *r)
{
	bench_add_u64(o, "evictions", r->evictions);
	bench_add_u64(o, "bytes_moved", r->bytes_moved);
	bench_add_fixed(o, "elapsed_s", r->elapsed_s, 6);
}

static void add_evict(struct json_object *results,
		      const struct bo_config *cfg,
		      const struct evict_result *reps,
		      const struct evict_result *best)
{
	struct json_object *r = bench_record(results, "eviction"), *a;
	struct bench_stat st;
	uint64_t rep;

	bench_add_u64(r, "vram_bytes", EVICT_VRAM);
	bench_add_u64(r, "buffer_bytes", EVICT_BO_SIZE);
	bench_add_u64(r, "buffers", EVICT_BOS);
	bench_stat(&st, &reps[0].mib_per_s, sizeof(*reps), cfg->c.reps,
		   BENCH_HIGHER);
	bench_add_stat(r, "mib_per_s", &st, 1);
	bench_stat(&st, &reps[0].evictions_per_s, sizeof(*reps), cfg->c.reps,
		   BENCH_HIGHER);
	bench_add_stat(r, "evictions_per_s", &st, 1);
	add_evict_figures(r, best);
	a = bench_add_array(r, "reps");
	for (rep = 0; rep < cfg->c.reps; rep++) {
		struct json_object *o = json_object_new_object();

		bench_add_fixed(o, "mib_per_s", reps[rep].mib_per_s, 1);
		bench_add_fixed(o, "evictions_per_s",
				reps[rep].evictions_per_s, 1);
		add_evict_figures(o, &reps[rep]);
		json_object_array_add(a, o);
	}
}

static int bo_measure(const void *data, struct json_object *results)
{
	const struct bo_config *cfg = data;
	struct count_result res[MAX_COUNTS] = { { 0 } };
	struct evict_result best = { 0 }, *ev;
	struct count_rep *reps;
	size_t c;
	int ret = CLI_EXIT_FAILURE;

	reps = calloc(cfg->n_counts * cfg->c.reps, sizeof(*reps));
	ev = calloc(cfg->c.reps, sizeof(*ev));
	if (!reps || !ev) {
		cli_error("bench bo: out of memory");
		goto out;
	}
	if (!cfg->c.json) {
		printf("\nreserve + validate (fast path) + unreserve, random "
		       "order, ns per buffer\n");
		printf("  (bookkeeping: RSS growth while creating them, minus "
		       "their contents, bytes per buffer)\n");
		printf("  %10s %8s %8s %9s %14s %10s %10s\n", "buffers",
		       "touch", "single", "/touch", "helper, 8/tx",
		       "create s", "bookkeep.");
		fflush(stdout);
	}
	for (c = 0; c < cfg->n_counts; c++) {
		res[c].reps = reps + c * cfg->c.reps;
		ret = run_count(cfg, cfg->counts[c], &res[c]);
		if (ret)
			goto out;
		if (!cfg->c.json)
			print_count(cfg->counts[c], &res[c]);
		add_count(results, cfg, cfg->counts[c], &res[c]);
	}
	if (!cfg->c.json) {
		printf("\nwhere it goes, ns per buffer (best of the reps): "
		       "touch, one plain read; rmw, one locked\n"
		       "  read-modify-write of a line (prefetched %d ahead: "
		       "+pf); reserve + unreserve alone; single\n"
		       "  (+pf: each buffer prefetched %d ahead; pinned: on "
		       "pinned buffers, no LRU move); single/rmw,\n"
		       "  single+pf/touch\n", AHEAD, AHEAD);
		printf("  %10s %8s %8s %8s %10s %8s %8s %8s %9s %9s\n",
		       "buffers", "touch", "rmw", "rmw+pf", "res+unres",
		       "single", "+pf", "pinned", "/rmw", "+pf/touch");
		for (c = 0; c < cfg->n_counts; c++)
			print_parts(cfg->counts[c], &res[c]);
		fflush(stdout);
	}
	ret = run_evict(cfg, ev, &best);
	if (ret)
		goto out;
	add_evict(results, cfg, ev, &best);
	if (!cfg->c.json) {
		print_evict(&best);
		printf("\naccounting: ok (ttm_device_check after each part)"
		       "\n");
	}
out:
	free(ev);
	free(reps);
	return ret;
}

/* -------------------------------------------------------------------- */
/* The command. */

static int bo_check(void *data)
{
	struct bo_config *cfg = data;

	if (cfg->size % 4) {
		cli_error("--size: '%llu' is not a multiple of 4",
			  (unsigned long long)cfg->size);
		return CLI_EXIT_USAGE;
	}
	if (!cfg->n_counts) {
		static const uint64_t full[] = { 1000, 10000, 100000, 1000000 };
		static const uint64_t quick[] = { 1000, 10000 };

		cfg->n_counts = cfg->c.quick ? 2 : 4;
		memcpy(cfg->counts, cfg->c.quick ? quick : full,
		       cfg->n_counts * sizeof(cfg->counts[0]));
	}
	return 0;
}

static const struct bo_config bo_defaults = { .size = 64, .evictions = 2000 };

static const struct bench_option bo_options[] = {
	{
		.name = "buffers", .arg = "LIST", .type = BENCH_LIST,
		.help = "comma-separated buffer counts\n"
			"(default 1000,10000,100000,1000000)",
		.offset = BENCH_AT(struct bo_config, counts, uint64_t *),
		.count_offset = BENCH_AT(struct bo_config, n_counts, size_t),
		.min = 1, .max = MAX_BUFFERS, .max_n = MAX_COUNTS,
	},
	{
		.name = "size", .arg = "BYTES", .key = "size_bytes",
		.help = "size of the per-buffer part's buffers, a\n"
			"multiple of 4 (default 64: 1M buffers of\n"
			"4 KiB would need 4 GiB of real memory)",
		.offset = BENCH_AT(struct bo_config, size, uint64_t),
		.min = 4, .max = TTM_BO_MAX_SIZE,
	},
	{
		.name = "evictions", .arg = "N",
		.help = "validates in the eviction part per rep\n"
			"(default 2000)",
		.offset = BENCH_AT(struct bo_config, evictions, uint64_t),
		.min = 1, .max = UINT64_C(1) << 32, .quick = 200,
	},
	{ .name = NULL },
};

static const char bo_about[] =
	"Measures buffer objects, each figure the best of several\n"
	"repetitions:\n"
	"  per buffer  ns per ttm_bo_reserve (no ticket) +\n"
	"              ttm_bo_validate (already placed: the fast path)\n"
	"              + ttm_bo_unreserve, over N buffers in a random\n"
	"              order (every unreserve moves one in the LRU),\n"
	"              in a VRAM that holds them all; then the same\n"
	"              through the locking helper, 8 buffers per\n"
	"              transaction; and, as the floor, one read of\n"
	"              each buffer in the same order (\"touch\": a\n"
	"              cache miss each once N outgrows the caches).\n"
	"              Also the bookkeeping bytes per buffer: RSS\n"
	"              growth over the N creations, minus their\n"
	"              contents, divided by N.\n"
	"              Cache misses make the cost step up once, as\n"
	"              the buffers outgrow the caches; an O(N) scan\n"
	"              would make it grow in proportion to N.\n"
	"              A second table says where the time goes: one\n"
	"              locked read-modify-write of a line per buffer\n"
	"              (\"rmw\", on lines of the benchmark's own, as\n"
	"              far apart as the buffers), the same with a\n"
	"              prefetch 8 buffers ahead, reserve + unreserve\n"
	"              alone, the whole pass with each buffer\n"
	"              prefetched 8 ahead (what a caller that knows\n"
	"              its next buffers can do), and the whole pass\n"
	"              over the buffers pinned (no LRU move).\n"
	"  eviction    MiB/s moved and evictions/s: 32 buffers of\n"
	"              1 MiB validated round-robin into a 16 MiB VRAM,\n"
	"              so that each validate evicts the LRU head, with\n"
	"              a real-time fake GPU running the copies.\n"
	"Fails (exit 1) if the device's accounting invariant breaks.\n";

const struct bench bench_bo = {
	.name = "bo",
	.about = bo_about,
	.seed_help = "seed of the shuffles (default 1)",
	.quick_help = "2 reps, buffers 1000,10000, 200 evictions,\n"
		      "unless given explicitly",
	.options = bo_options,
	.defaults = &bo_defaults,
	.config_size = sizeof(bo_defaults),
	.check = bo_check,
	.print_config = bo_print_config,
	.measure = bo_measure,
};

int cmd_bench_bo(int argc, char **argv, const char *path)
{
	return bench_main(&bench_bo, argc, argv, path);
}
