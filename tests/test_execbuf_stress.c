// SPDX-License-Identifier: MIT
/*
 * The end-to-end property of the execbuf submitter: many
 * threads, each with a client of its own, submit add jobs through
 * ttm_execbuf_submit() over random, overlapping buffer lists in random
 * order, on the engines of a real-time fake GPU, with a VRAM small enough
 * that validation keeps evicting.
 *
 * The buffers are created by a setup client and shared with the workers'
 * clients, most with ttm_client_bo_add(), every fourth through PRIME
 * (ttm_client_export_fd(), ttm_client_import_fd()); the setup client is
 * closed while the workers run. Each worker adds the buffers in an order
 * of its own, so the same handle names different buffers in different
 * clients. The buffers are placed VRAM+GTT, VRAM only or GTT only; one is
 * pinned in VRAM. Any single job fits, so -ENOSPC must never come.
 *
 * The jobs: 1 to MAX_SET distinct buffers in random order, each entry
 * WRITE, READ or both, the buffer's placement given now and then. Some
 * list buffers twice with TTM_EXECBUF_ALLOW_DUPLICATES (each used once,
 * written if any entry writes it); some without it (-EINVAL, bad_index
 * the first repeated entry, nothing changed); a few name a handle that
 * does not exist (-ENOENT, bad_index that entry).
 *
 * At the end (ttm_execbuf_wait_idle()): the run finished (a watchdog
 * aborts after WATCHDOG_S seconds without progress), the counters add up
 * (submitted = rejected + completed + failed, nothing failed or in
 * flight, completed = the jobs accepted, rejections by errno as made),
 * every 32-bit word of every buffer holds the sum, mod 2^32, of the values
 * added by the accepted jobs that wrote it (read-only entries add
 * nothing), no buffer is left locked, the accounting invariant holds
 * (ttm_device_check(), also checked while the run goes on), and the run
 * evicted. Both classes, with and without injected back-offs.
 *
 * --short (the default): 8 threads x 2,000 jobs a case; --long: 16
 * threads x 20,000. TTMSIM_SEED=n replays a seed (as far as threads and
 * real time allow).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"

#define NUM_BOS 48
#define MAX_SET 6		/* distinct buffers a job */
#define MAX_ENTRIES (MAX_SET + 3) /* with repeated entries */
#define MAX_BO_SIZE (12 * KiB)
#define ENGINES 4
#define MAX_DURATION_US 20
#define MAX_THREADS 64
#ifndef WATCHDOG_S
#define WATCHDOG_S 60		/* no progress for that long: abort */
#endif
#define CHECK_EVERY 32		/* ttm_device_check() every so many jobs */

static unsigned int num_threads = 8;
static unsigned long jobs_per_thread = 2000;
static unsigned int seed;

/* Shared through PRIME rather than ttm_client_bo_add(). */
static bool is_prime(unsigned int b)
{
	return b % 4 == 3;
}

struct stress {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_bo *bos[NUM_BOS];	/* references of the test's own */
	const struct ttm_placement *place[NUM_BOS];
	uint64_t sizes[NUM_BOS];
	int fds[NUM_BOS];		/* PRIME descriptors; -1: none */
	pthread_barrier_t start;	/* workers set up, setup client gone */
	unsigned long progress;		/* atomic: bumped at every step */
	const char *phase;		/* atomic: for the watchdog's report */
};

struct worker {
	struct stress *s;
	pthread_t thread;
	unsigned int id;
	uint32_t rng;
	struct ttm_client *client;
	uint32_t handle[NUM_BOS];
	uint32_t expect[NUM_BOS];	/* sums this worker's jobs added */
	unsigned long calls, accepted, rej_dup, rej_noent, enospc, errors;
	unsigned long dup_jobs, read_entries, waited;
	bool ok;			/* set up and ran to the end */
};

static uint32_t rnd(struct worker *w)
{
	return xorshift32(&w->rng);
}

static void progress(struct stress *s)
{
	__atomic_add_fetch(&s->progress, 1, __ATOMIC_RELAXED);
}

static void set_phase(struct stress *s, const char *phase)
{
	__atomic_store_n(&s->phase, phase, __ATOMIC_RELEASE);
	progress(s);
}

/* ---- the watchdog ------------------------------------------------------ */

/* The accounting is checked once a second while the run goes on. */
static void watchdog_tick(void *arg)
{
	struct stress *s = arg;

	check_dev_ok(s->dev, "during the run");
}

/* No progress for WATCHDOG_S seconds: what the run got to, then abort. */
static void watchdog_stalled(void *arg)
{
	struct stress *s = arg;
	struct ttm_execbuf_stats es;

	ttm_execbuf_get_stats(s->dev, &es);
	fprintf(stderr,
		"execbuf_stress: phase %s; submitted %" PRIu64 ", rejected %"
		PRIu64 ", completed %" PRIu64 ", failed %" PRIu64
		", in flight %" PRIu64 ", back-offs %" PRIu64 ", restarts %"
		PRIu64 "; TTMSIM_SEED=%u\n",
		__atomic_load_n(&s->phase, __ATOMIC_ACQUIRE), es.submitted,
		es.rejected, es.completed, es.failed, es.in_flight,
		es.backoffs, es.restarts, seed);
}

/* ---- a worker ----------------------------------------------------------- */

/*
 * Open the worker's client and give it a handle for every buffer, in an
 * order of its own: by ttm_client_bo_add(), or by importing the PRIME
 * descriptor: a new handle. Asking again must give the same one, not new.
 */
static bool worker_setup(struct worker *w)
{
	struct stress *s = w->s;
	unsigned int order[NUM_BOS], b, i, j, t;
	uint32_t h;
	struct ttm_bo *bo;
	bool is_new;
	int ret;

	ret = ttm_client_open(s->dev, &w->client);
	if (!CHECK_INT(ret, 0))
		return false;
	if (!CHECK(ttm_client_device(w->client) == s->dev))
		return false;
	for (b = 0; b < NUM_BOS; b++)
		order[b] = b;
	for (i = NUM_BOS - 1; i > 0; i--) {
		j = rnd(w) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < NUM_BOS; i++) {
		b = order[i];
		is_new = false;
		ret = is_prime(b) ?
		      ttm_client_import_fd(w->client, s->fds[b], &w->handle[b],
					   &is_new) :
		      ttm_client_bo_add(w->client, s->bos[b], &w->handle[b],
					&is_new);
		if (!CHECK_MSG(ret == 0 && w->handle[b] != 0 && is_new,
			       "buffer %u: handle %u (new: %d), %d", b,
			       w->handle[b], is_new, ret))
			return false;
		/* Handles come lowest free first: 1, 2, ... */
		if (!CHECK_INT(w->handle[b], i + 1))
			return false;
	}
	for (b = 0; b < NUM_BOS; b++) {
		/* The same buffer, the same handle, either way. */
		ret = ttm_client_bo_add(w->client, s->bos[b], &h, &is_new);
		if (!CHECK_INT(ret, 0) || !CHECK_INT(h, w->handle[b]) ||
		    !CHECK(!is_new))
			return false;
		if (is_prime(b)) {
			ret = ttm_client_import_fd(w->client, s->fds[b], &h,
						   NULL);
			if (!CHECK_INT(ret, 0) || !CHECK_INT(h, w->handle[b]))
				return false;
		}
		bo = ttm_client_lookup(w->client, w->handle[b]);
		ret = CHECK_MSG(bo == s->bos[b], "handle %u of buffer %u",
				w->handle[b], b);
		ttm_bo_put(bo);
		if (!ret)
			return false;
	}
	return CHECK(ttm_client_lookup(w->client, NUM_BOS + 1) == NULL);
}

struct entry {
	unsigned int b;		/* the buffer */
	uint32_t flags;
	bool explicit_placement;
};

static uint32_t random_rw(struct worker *w)
{
	switch (rnd(w) % 8) {
	case 0:
	case 1:
		return TTM_EXECBUF_BO_READ;
	case 2:
		return TTM_EXECBUF_BO_READ | TTM_EXECBUF_BO_WRITE;
	default:
		return TTM_EXECBUF_BO_WRITE;
	}
}

enum job_kind {
	JOB_PLAIN,	/* distinct buffers */
	JOB_DUP_OK,	/* repeats, TTM_EXECBUF_ALLOW_DUPLICATES */
	JOB_DUP_BAD,	/* repeats without it: -EINVAL */
	JOB_NOENT,	/* a handle the client does not have: -ENOENT */
};

/* One ttm_execbuf_submit() call and its checks; false on a failed one. */
static bool one_job(struct worker *w)
{
	struct stress *s = w->s;
	struct entry e[MAX_ENTRIES], t;
	struct ttm_execbuf_bo list[MAX_ENTRIES];
	struct ttm_execbuf_args args;
	unsigned int n_uniq, n, i, k, r = rnd(w) % 100;
	enum job_kind kind = r < 6 ? JOB_DUP_BAD : r < 16 ? JOB_DUP_OK :
			     r < 18 ? JOB_NOENT : JOB_PLAIN;
	bool written[NUM_BOS] = { false }, dup;
	uint32_t value = rnd(w);
	int expect_bad = -1, ret;

	/* Distinct buffers first ... */
	n_uniq = 1 + rnd(w) % MAX_SET;
	for (n = 0; n < n_uniq; n++) {
		do {
			e[n].b = rnd(w) % NUM_BOS;
			for (dup = false, k = 0; k < n; k++)
				dup |= e[k].b == e[n].b;
		} while (dup);
		e[n].flags = random_rw(w);
		e[n].explicit_placement = rnd(w) % 4 == 0;
		w->read_entries += e[n].flags == TTM_EXECBUF_BO_READ;
	}
	/* ... then repeats, then all of it in random order. */
	if (kind == JOB_DUP_OK || kind == JOB_DUP_BAD) {
		unsigned int extra = 1 + rnd(w) % (MAX_ENTRIES - n_uniq);

		for (i = 0; i < extra; i++, n++) {
			e[n] = e[rnd(w) % n_uniq];
			e[n].flags = random_rw(w);
		}
	}
	for (i = n - 1; i > 0; i--) {
		k = rnd(w) % (i + 1);
		t = e[i];
		e[i] = e[k];
		e[k] = t;
	}
	for (i = 0; i < n; i++) {
		list[i] = (struct ttm_execbuf_bo){
			.handle = w->handle[e[i].b],
			.flags = e[i].flags,
			.placement = e[i].explicit_placement ? s->place[e[i].b]
							     : NULL,
		};
		if (e[i].flags & TTM_EXECBUF_BO_WRITE)
			written[e[i].b] = true;
		/* Without the flag, the first entry repeating another. */
		for (k = 0; k < i && expect_bad < 0; k++)
			if (e[k].b == e[i].b)
				expect_bad = (int)i;
	}
	if (kind == JOB_NOENT) {
		expect_bad = (int)(rnd(w) % n);
		list[expect_bad].handle = rnd(w) % 2 ? 0 :
					  NUM_BOS + 1 + rnd(w) % 1000;
	}

	args = (struct ttm_execbuf_args){
		.engine = rnd(w) % ENGINES,
		.bos = list,
		.n_bos = n,
		.op = TTM_GPU_OP_ADD,
		.add_value = value,
		.duration_us = rnd(w) % (MAX_DURATION_US + 1),
		.flags = kind == JOB_DUP_OK ? TTM_EXECBUF_ALLOW_DUPLICATES : 0,
		.tag = (uint64_t)w->id << 32 | w->calls,
		/* Garbage: the call must set them. */
		.out_fence_fd = 12345,
		.bad_index = 12345,
	};
	ret = ttm_execbuf_submit(w->client, &args);
	w->calls++;
	progress(s);

	switch (kind) {
	case JOB_PLAIN:
	case JOB_DUP_OK:
		if (ret == -ENOSPC) {
			w->enospc++;
			return CHECK_MSG(false, "-ENOSPC for a job of %u "
					 "buffers", n_uniq);
		}
		if (!CHECK_MSG(ret == 0, "submit: %d (bad_index %d)", ret,
			       args.bad_index)) {
			w->errors++;
			return false;
		}
		if (!CHECK(args.out_fence != NULL) ||
		    !CHECK_INT(args.out_fence_fd, -1) ||
		    !CHECK_INT(args.bad_index, -1)) {
			ttm_fence_put(args.out_fence);
			return false;
		}
		w->accepted++;
		w->dup_jobs += kind == JOB_DUP_OK;
		for (i = 0; i < NUM_BOS; i++)
			if (written[i])
				w->expect[i] += value;
		/* Now and then, see the job run, and run well. */
		if (rnd(w) % 64 == 0) {
			ret = ttm_fence_wait(args.out_fence, false,
					     WATCHDOG_S * 1000000000LL);
			w->waited++;
			if (!CHECK_INT(ret, 0) ||
			    !CHECK_INT(ttm_fence_get_status(args.out_fence),
				       1)) {
				ttm_fence_put(args.out_fence);
				return false;
			}
		}
		ttm_fence_put(args.out_fence);
		break;
	case JOB_DUP_BAD:
	case JOB_NOENT:
		if (!CHECK_MSG(ret == (kind == JOB_NOENT ? -ENOENT : -EINVAL),
			       "%s job: %d", kind == JOB_NOENT ? "bad-handle"
							       : "duplicate",
			       ret)) {
			if (ret == 0)
				ttm_fence_put(args.out_fence);
			w->errors++;
			return false;
		}
		if (!CHECK_INT(args.bad_index, expect_bad) ||
		    !CHECK(args.out_fence == NULL) ||
		    !CHECK_INT(args.out_fence_fd, -1))
			return false;
		if (kind == JOB_NOENT)
			w->rej_noent++;
		else
			w->rej_dup++;
		break;
	}
	if (w->calls % CHECK_EVERY == 0)
		return check_dev_ok(s->dev, "during the run");
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bool ok = worker_setup(w);

	/* Even on failure: the others and the main thread wait here. */
	pthread_barrier_wait(&w->s->start);
	while (ok && w->calls < jobs_per_thread)
		ok = one_job(w);
	w->ok = ok;
	return NULL;
}

/* ---- the cases ---------------------------------------------------------- */

/*
 * Create the buffers through a setup client, keep a reference to each,
 * pin buffer 0 in VRAM, and export the PRIME ones. Creating the later
 * ones already evicts.
 */
static void setup_buffers(struct stress *s, struct ttm_client **ret_setup)
{
	struct ttm_client *setup;
	uint32_t handles[NUM_BOS];
	unsigned int b;

	assert_int_equal(ttm_client_open(s->dev, &setup), 0);
	for (b = 0; b < NUM_BOS; b++) {
		/* 4, 8 or 12 KiB, whatever the placement. */
		s->sizes[b] = 4 * KiB * (1 + (b / 3) % 3);
		s->place[b] = b % 3 == 0 ? &vram_gtt :
			      b % 3 == 1 ? &vram_only : &gtt_only;
		assert_int_equal(ttm_client_bo_create(setup, s->sizes[b],
						      s->place[b], 0,
						      &handles[b]), 0);
		assert_int_equal(handles[b], b + 1);
		s->bos[b] = ttm_client_lookup(setup, handles[b]);
		assert_non_null(s->bos[b]);
		assert_int_equal(ttm_bo_size(s->bos[b]), s->sizes[b]);
		s->fds[b] = -1;
		if (is_prime(b))
			assert_int_equal(ttm_client_export_fd(setup, handles[b],
							      &s->fds[b]), 0);
		if (b == 0) {
			/* Pinned before the others push it out. */
			assert_int_equal(ttm_bo_domain(s->bos[0]),
					 TTM_DOMAIN_VRAM);
			assert_int_equal(ttm_bo_reserve(s->bos[0], false,
							false, NULL), 0);
			assert_int_equal(ttm_bo_pin(s->bos[0]), 0);
			ttm_bo_unreserve(s->bos[0]);
		}
		assert_true(check_dev_ok(s->dev, "after create"));
	}
	*ret_setup = setup;
}

static void run_case(void **state)
{
	const struct stress_variant *c = *state;
	struct ttm_device_options opts = { .wound_wait = c->wound_wait };
	struct worker *workers;
	struct stress *s;
	struct progress_watchdog wd = {
		.limit_s = WATCHDOG_S,
		.tick = watchdog_tick,
		.stalled = watchdog_stalled,
	};
	struct ttm_client *setup;
	struct ttm_device_stats st0, st;
	struct ttm_execbuf_stats es;
	struct ttm_gpu_stats gs;
	unsigned long calls = 0, accepted = 0, rej_dup = 0, rej_noent = 0;
	unsigned long enospc = 0, dup_jobs = 0, read_entries = 0, waited = 0;
	uint64_t total = 0;
	/* Each case its own jobs, replayable from the seed. */
	uint32_t words[MAX_BO_SIZE / 4],
		 rng = (seed ^ (c->wound_wait ? 0x9e3779b9u : 0) ^
			c->inject * 0x85ebca6bu) | 1;
	unsigned int b, t, i;
	long t0, t1, t2;
	char msg[256];
	int ret;

	s = calloc(1, sizeof(*s));
	workers = calloc(num_threads, sizeof(*workers));
	assert_non_null(s);
	assert_non_null(workers);
	assert_int_equal(ttm_gpu_create(ENGINES, NULL, &s->gpu), 0);

	/*
	 * VRAM holds 8 of the largest buffers: the largest job (MAX_SET of
	 * them, 72 KiB) fits beside the pinned one. GTT holds half of all.
	 */
	for (b = 0; b < NUM_BOS; b++)
		total += 4 * KiB * (1 + (b / 3) % 3);
	opts.gpu = s->gpu;
	opts.copy_engine = 0;
	opts.vram_size = 8 * MAX_BO_SIZE;
	opts.gtt_size = total / 2;
	assert_true(MAX_SET * MAX_BO_SIZE + 4 * KiB <= opts.vram_size);
	assert_true(MAX_SET * MAX_BO_SIZE <= opts.gtt_size);
	assert_int_equal(ttm_device_create(&opts, &s->dev), 0);
	setup_buffers(s, &setup);
	assert_int_equal(pthread_barrier_init(&s->start, NULL,
					      num_threads + 1), 0);

	wd.progress = &s->progress;
	wd.arg = s;
	progress_watchdog_start(&wd);
	set_phase(s, "worker setup");
	for (t = 0; t < num_threads; t++) {
		xorshift32(&rng);
		workers[t] = (struct worker){ .s = s, .id = t,
					      .rng = rng | 1 };
		workers[t].thread = start_thread(worker_main, &workers[t]);
	}
	pthread_barrier_wait(&s->start);

	/*
	 * Every worker holds its handles: the descriptors and the setup
	 * client go while the jobs run; the buffers must stay.
	 */
	set_phase(s, "submitting");
	ttm_device_get_stats(s->dev, &st0);
	if (c->inject)
		ww_debug_inject(seed, c->inject);
	t0 = now_ns();
	for (b = 0; b < NUM_BOS; b++)
		if (s->fds[b] >= 0)
			close(s->fds[b]);
	ttm_client_close(setup);
	for (t = 0; t < num_threads; t++)
		join_thread(workers[t].thread);
	t1 = now_ns();
	ww_debug_inject(0, 0);

	set_phase(s, "ttm_execbuf_wait_idle");
	ttm_execbuf_wait_idle(s->dev);
	t2 = now_ns();
	set_phase(s, "final checks");
	for (t = 0; t < num_threads; t++) {
		struct worker *w = &workers[t];

		CHECK_MSG(w->ok, "worker %u stopped after %lu calls", t,
			  w->calls);
		calls += w->calls;
		accepted += w->accepted;
		rej_dup += w->rej_dup;
		rej_noent += w->rej_noent;
		enospc += w->enospc;
		dup_jobs += w->dup_jobs;
		read_entries += w->read_entries;
		waited += w->waited;
	}

	/* Every call counted, every accepted job completed once. */
	ttm_execbuf_get_stats(s->dev, &es);
	CHECK_INT(es.submitted, calls);
	CHECK_INT(es.submitted, es.rejected + es.completed + es.failed);
	CHECK_INT(es.in_flight, 0);
	CHECK_INT(es.failed, 0);
	CHECK_INT(es.completed, accepted);
	CHECK_INT(es.rejected, rej_dup + rej_noent);
	CHECK_INT(es.rejected_by_errno[EINVAL], rej_dup);
	CHECK_INT(es.rejected_by_errno[ENOENT], rej_noent);
	CHECK_INT(es.rejected_by_errno[ENOSPC], 0);
	CHECK_INT(enospc, 0);
	/* Each call is counted once, on one side. */
	CHECK_INT(accepted + rej_dup + rej_noent, calls);
	/*
	 * Every -EDEADLK a submitter got started exactly one more pass (no
	 * wait here is interruptible): restarts and back-offs are equal.
	 */
	CHECK_INT(es.restarts, es.backoffs);
	if (c->inject)
		CHECK(es.backoffs > 0);

	/* Every word of every buffer holds the sum of the adds. */
	for (b = 0; b < NUM_BOS; b++) {
		struct ttm_bo *bo = s->bos[b];
		uint32_t expect = 0;
		unsigned int bad = 0;

		for (t = 0; t < num_threads; t++)
			expect += workers[t].expect[b];
		/* No assert_*() while the watchdog runs: CHECK, go on. */
		CHECK_INT(ttm_resv_wait(ttm_bo_resv(bo),
					TTM_RESV_USAGE_BOOKKEEP, false,
					WATCHDOG_S * 1000000000LL), 0);
		CHECK_MSG(!ww_mutex_is_locked(&ttm_bo_resv(bo)->lock),
			  "buffer %u is still locked", b);
		if (!CHECK_INT(ttm_bo_reserve(bo, false, false, NULL), 0))
			continue;
		memset(words, 0xa5, sizeof(words));
		ret = ttm_bo_read(bo, 0, words, s->sizes[b]);
		if (b == 0) {
			CHECK_INT(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
			CHECK_INT(ttm_bo_unpin(bo), 0);
		}
		ttm_bo_unreserve(bo);
		if (!CHECK_INT(ret, 0))
			continue;
		for (i = 0; i < s->sizes[b] / 4; i++) {
			if (words[i] != expect && bad++ == 0)
				check_failed(__FILE__, __LINE__,
					     "buffer %u word %u: %#x, not %#x",
					     b, i, words[i], expect);
		}
		CHECK_MSG(bad == 0, "buffer %u: %u of %u words wrong", b, bad,
			  (unsigned int)(s->sizes[b] / 4));
		progress(s);
	}
	check_dev_ok(s->dev, "at the end");
	progress_watchdog_stop(&wd);

	ttm_device_get_stats(s->dev, &st);
	ttm_gpu_get_stats(s->gpu, &gs);
	print_message("%s%s, %u threads: %lu calls, %lu jobs (%lu with "
		      "duplicates), %lu rejected (%lu duplicate, %lu bad "
		      "handle), %lu read-only entries, %lu waited; %" PRIu64
		      " back-offs, %" PRIu64 " restarts; %" PRIu64
		      " evictions, %" PRIu64 " moves (%" PRIu64 " KiB); %"
		      PRIu64 " out-of-order retirements; %.2f s submitting, "
		      "%.2f s to idle\n",
		      c->wound_wait ? "wound-wait" : "wait-die",
		      c->inject ? ", injected" : "", num_threads, calls,
		      accepted, dup_jobs, rej_dup + rej_noent, rej_dup,
		      rej_noent, read_entries, waited, es.backoffs,
		      es.restarts, st.evictions - st0.evictions,
		      st.moves - st0.moves,
		      (st.bytes_moved - st0.bytes_moved) / KiB,
		      gs.out_of_order_retirements, (t1 - t0) / 1e9,
		      (t2 - t1) / 1e9);
	/*
	 * The GPU ran every job it got, and got exactly the accepted jobs
	 * and the device's moves (a copy each, setup's included: the GPU
	 * is this case's own).
	 */
	CHECK_INT(gs.failed, 0);
	CHECK_INT(gs.run, gs.submitted);
	CHECK_INT(gs.submitted, es.completed + st.moves);
	assert_checks_passed();
	assert_true(accepted > 0);
	assert_true(st.evictions > st0.evictions);
	/*
	 * Not the device's enospc count: with ranges, a job's own buffers
	 * can leave the pages for its next one scattered, and that
	 * ttm_bo_validate() returns -ENOSPC (counted) before the entries
	 * helper packs the job again. No job is refused for it (above).
	 */
	assert_int_equal(ttm_device_check(s->dev, msg, sizeof(msg)), 0);

	for (t = 0; t < num_threads; t++)
		ttm_client_close(workers[t].client);
	for (b = 0; b < NUM_BOS; b++)
		ttm_bo_put(s->bos[b]);
	ttm_device_get_stats(s->dev, &st);
	assert_int_equal(st.buffers, 0);
	/* Every room wait ended on an event (bo/bo_room.c). */
	assert_int_equal(st.room_wait_timeouts, 0);
	pthread_barrier_destroy(&s->start);
	assert_int_equal(ttm_device_destroy(s->dev), 0);
	ttm_gpu_destroy(s->gpu);
	free(workers);
	free(s);
}

#define CASE(nm, ww, inj) STRESS_CASE(nm, run_case, ww, inj)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		CASE("execbuf_stress(wait-die)", false, 0),
		CASE("execbuf_stress(wound-wait)", true, 0),
		CASE("execbuf_stress(wait-die, injected)", false, 4),
		CASE("execbuf_stress(wound-wait, injected)", true, 4),
	};
	bool long_run = false;

	if (!stress_args(argc, argv, &long_run,
			 "--long: 16 threads x 20,000 jobs a case "
			 "(else 8 x 2,000)"))
		return 2;
	if (long_run) {
		num_threads = 16;
		jobs_per_thread = 20000;
	}
	seed = stress_seed();
	printf("execbuf_stress: %s run, %u threads x %lu jobs, "
	       "TTMSIM_SEED=%u, ww debug checker %s\n",
	       long_run ? "long" : "short", num_threads, jobs_per_thread,
	       seed, ww_debug_enabled() ? "on" : "off");
	return cmocka_run_group_tests_name("execbuf_stress", tests, NULL,
					   NULL);
}
