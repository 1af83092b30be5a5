// SPDX-License-Identifier: MIT
/*
 * The grace period of drivers' fences: an epoch scheme of our own, in the
 * spirit of RCU.
 *
 * A reader thread publishes, in its record, the global epoch it saw when
 * it entered its outermost read-side section (0 outside one). A driver
 * fence whose last reference went is retired: it gets the epoch that its
 * retirement starts (the global epoch, incremented) and waits on a FIFO.
 * It may be destroyed once every reader is either outside a section or
 * inside one that it entered at that epoch or later. Why that is enough:
 *
 * - The fence's last reference went after every pointer to it that a
 *   reader could newly find was gone (a reservation list entry holds a
 *   reference; the stale entries of old lists are only visible to readers
 *   that began before). One exception, taken care of by its readers: a
 *   reservation's prune puts a fence before it overwrites the entry, but
 *   inside a write section of the sequence lock, which a reader starting
 *   a pass waits out and one continuing a pass from an earlier section
 *   sees when it re-checks the sequence (bo/resv_read.c).
 * - A reader that read the incremented epoch read it after the increment,
 *   which comes after the pointers were gone (release, then acquire): it
 *   cannot find the fence.
 * - A reader whose record the reclaimer read as 0 entered its section, if
 *   at all, after that read; the reader's store to its record and the
 *   reclaimer's increment and read of the record are each followed by a
 *   full barrier, so the reader's later loads see everything before the
 *   increment: it cannot find the fence either.
 * - Anyone else is inside a section it began earlier: the fence waits.
 *
 * Reclaiming never waits: each retirement, and ttm_fence_rcu_barrier(),
 * destroys the fences at the head of the FIFO whose epoch the oldest
 * active reader has reached, outside the FIFO's lock (a release op may put
 * other driver fences, which retire them). Readers never reclaim: a
 * release op runs only where a last put (or the barrier) may run one.
 *
 * Records are type-stable: allocated once per thread, on a list that is
 * only ever pushed to, and recycled when a thread exits, so the reclaimer
 * walks the list without a lock. A thread that cannot get a record counts
 * itself in @anon_readers instead, which holds back every fence.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "ww/debug.h"

/*
 * A full barrier. ThreadSanitizer does not model fences (GCC warns); the
 * exchange and read-modify-writes around them give it the
 * happens-before edges it checks.
 */
#ifdef TTM_TSAN
#define full_barrier() do { } while (0)
#else
#define full_barrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/*
 * The same right after a sequentially consistent read-modify-write: on
 * x86 that is a locked instruction, a full barrier already (and the
 * compiler moves no later load above it), so the reader's fast path pays
 * for one instruction, not two.
 */
#if defined(__x86_64__) || defined(__i386__)
#define full_barrier_after_rmw() do { } while (0)
#else
#define full_barrier_after_rmw() full_barrier()
#endif

struct rcu_reader {
	uint64_t epoch;         /* atomic: 0 outside a section */
	uint32_t in_use;        /* atomic: a thread owns the record */
	struct rcu_reader *next;        /* set before it is published */
};

static struct rcu_reader *readers;      /* atomic; pushed to only */
static uint64_t anon_readers;   /* atomic: readers without a record */
static uint64_t gp_epoch = 1;   /* atomic */

static __thread struct rcu_reader *self
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int nesting
	__attribute__((tls_model("initial-exec")));
static __thread bool anon
	__attribute__((tls_model("initial-exec")));

static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

/* The FIFO of retired fences, oldest epoch first, linked by rcu_next. */
static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ttm_fence *retired;
static struct ttm_fence **retired_tail = &retired;
static uint64_t destroying;     /* atomic: taken off, not destroyed yet */

/* A thread exits: its record is free for the next one. */
static void reader_exit(void *arg)
{
	struct rcu_reader *r = arg;

	self = NULL;
	__atomic_store_n(&r->epoch, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->in_use, 0, __ATOMIC_RELEASE);
}

/*
 * In the child of a fork() only the forking thread lives on: the records
 * of the others must not hold back its releases forever. (A retire_lock
 * held across the fork stays held, as every other mutex of the library.)
 */
static void reader_fork_child(void)
{
	struct rcu_reader *r;

	for (r = readers; r; r = r->next) {
		if (r == self)
			continue;
		r->epoch = 0;
		r->in_use = 0;
	}
	anon_readers = anon ? 1 : 0;
}

static void reader_key_init(void)
{
	pthread_key_create(&reader_key, reader_exit);
	pthread_atfork(NULL, NULL, reader_fork_child);
}

/* A free record, or a new one; NULL if out of memory. */
static struct rcu_reader *reader_register(void)
{
	struct rcu_reader *r;
	uint32_t free_rec;

	pthread_once(&reader_once, reader_key_init);
	for (r = __atomic_load_n(&readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		free_rec = 0;
		if (!__atomic_load_n(&r->in_use, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&r->in_use, &free_rec, 1,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
	}
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		r->in_use = 1;
		r->next = __atomic_load_n(&readers, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&readers, &r->next, r,
						    true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	}
	if (pthread_setspecific(reader_key, r)) {
		__atomic_store_n(&r->in_use, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	self = r;
	return r;
}

TTM_EXPORT void ttm_fence_read_lock(void)
{
	struct rcu_reader *r;

	if (nesting++)
		return;
	r = self;
	if (unlikely(!r) && !(r = reader_register())) {
		anon = true;
		__atomic_fetch_add(&anon_readers, 1, __ATOMIC_SEQ_CST);
		full_barrier_after_rmw();
		return;
	}
	/* Acquire: an epoch read is after the retirement that made it. */
	__atomic_exchange_n(&r->epoch,
			    __atomic_load_n(&gp_epoch, __ATOMIC_ACQUIRE),
			    __ATOMIC_SEQ_CST);
	full_barrier_after_rmw();
}

TTM_EXPORT void ttm_fence_read_unlock(void)
{
	if (--nesting)
		return;
	if (unlikely(anon)) {
		anon = false;
		__atomic_fetch_sub(&anon_readers, 1, __ATOMIC_RELEASE);
		return;
	}
	/* Release: the section's reads are done before a reclaimer sees 0. */
	__atomic_store_n(&self->epoch, 0, __ATOMIC_RELEASE);
}

/*
 * The oldest epoch an active reader entered at; UINT64_MAX if none is
 * active, 0 if a reader without a record is.
 */
static uint64_t oldest_reader(void)
{
	uint64_t oldest = UINT64_MAX, e;
	struct rcu_reader *r;

	if (__atomic_load_n(&anon_readers, __ATOMIC_ACQUIRE))
		return 0;
	for (r = __atomic_load_n(&readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		e = __atomic_load_n(&r->epoch, __ATOMIC_ACQUIRE);
		if (e && e < oldest)
			oldest = e;
	}
	return oldest;
}

/* Whether this thread runs release ops now (from reclaim_unlock()). */
static __thread bool releasing
	__attribute__((tls_model("initial-exec")));

/*
 * Take the fences whose grace period ended off the FIFO and destroy them.
 * Called with retire_lock held, which it drops (a retirement appends and
 * reclaims in one hold: one round trip on the lock every thread shares,
 * not two).
 * Return: the epoch of the oldest fence still waiting, 0 if none.
 */
static uint64_t reclaim_unlock(void)
{
	struct ttm_fence *done = NULL, **end, *f;
	uint64_t oldest, left;
	bool was_releasing;

	if (!retired) {
		pthread_mutex_unlock(&retire_lock);
		return 0;
	}
	/* After the retirement's increment, before reading the records. */
	full_barrier();
	oldest = oldest_reader();
	if (retired->rcu_epoch <= oldest) {
		done = retired;
		for (end = &retired->rcu_next;
		     *end && (*end)->rcu_epoch <= oldest;
		     end = &(*end)->rcu_next)
			;
		retired = *end;
		*end = NULL;
		if (!retired)
			retired_tail = &retired;
		__atomic_fetch_add(&destroying, 1, __ATOMIC_RELAXED);
	}
	left = retired ? retired->rcu_epoch : 0;
	pthread_mutex_unlock(&retire_lock);
	if (!done)
		return left;
	was_releasing = releasing;
	releasing = true;
	while (done) {
		f = done;
		done = f->rcu_next;
		fence_destroy(f);
	}
	releasing = was_releasing;
	__atomic_fetch_sub(&destroying, 1, __ATOMIC_RELEASE);
	return left;
}

/* reclaim_unlock() on its own: ttm_fence_rcu_barrier()'s polls. */
static uint64_t reclaim(void)
{
	pthread_mutex_lock(&retire_lock);
	return reclaim_unlock();
}

void fence_rcu_retire(struct ttm_fence *f)
{
	pthread_mutex_lock(&retire_lock);
	/*
	 * Under the lock, so that the FIFO is in epoch order; sequentially
	 * consistent, so that it is ordered before the records are read.
	 */
	f->rcu_epoch = __atomic_add_fetch(&gp_epoch, 1, __ATOMIC_SEQ_CST);
	f->rcu_next = NULL;
	*retired_tail = f;
	retired_tail = &f->rcu_next;
	reclaim_unlock();
}

TTM_EXPORT int ttm_fence_rcu_barrier(void)
{
	uint64_t target, left;

	if (nesting || releasing)
		return -EDEADLK;
	/* Waits for readers and releases, which may wait for the caller. */
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, NULL,
			    "ttm_fence_rcu_barrier", NULL, 0))
		return -EINVAL;
	/* The fences retired before the call have epochs up to this. */
	target = __atomic_load_n(&gp_epoch, __ATOMIC_ACQUIRE);
	for (;;) {
		left = reclaim();
		if ((!left || left > target) &&
		    !__atomic_load_n(&destroying, __ATOMIC_ACQUIRE))
			return 0;
		sched_yield();
	}
}
