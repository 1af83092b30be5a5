/* SPDX-License-Identifier: MIT */
/*
 * Per-thread parking state shared by every sleeping primitive of ttmsim.
 *
 * Each thread that ever waits in ttmsim (or takes an interrupt token,
 * ttm_interrupt_self()) gets one struct ww_thread. A thread sleeps on its
 * own futex word, a wake-up sequence number: a waker bumps the sequence and
 * wakes the futex, a sleeper reads the sequence *before* checking its wait
 * condition and sleeps only while the sequence is unchanged, so a wake-up
 * that races with the check is never lost.
 *
 * The structs are type-stable: when a thread exits, its struct goes to a
 * free list for the next thread and is never returned to malloc. A waker
 * holding a stale pointer can therefore at worst cause one spurious wake-up,
 * which every waiter tolerates (they all re-check their condition).
 */
#ifndef TTMSIM_WW_THREAD_H
#define TTMSIM_WW_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ww_debug_thread;
struct ttm_interrupt_token;

struct ww_thread {
	uint32_t wake_seq;      /* futex word; atomic */
	uint32_t interrupt;     /* atomic: an interrupt is pending */
	/*
	 * atomic: 0, or WW_PARKED | the sequence it sleeps on while in
	 * ww_thread_park(): set by the thread, cleared by it on return or by
	 * the first waker that the sleeper has not seen yet
	 * (ww_thread_wake_claim())
	 */
	uint64_t parked;
	/*
	 * atomic: in a ww lock slow path (spinning, queued or asleep), so
	 * not running towards the unlock of what it holds; spinners on its
	 * locks stop (ww/lock_slow.c).
	 */
	uint32_t waiting;
	/* This thread's spin budget is ww_spin_ns >> spin_shift (ww/spin.h). */
	uint8_t spin_shift;
	/*
	 * Switched to SCHED_BATCH by a ww lock wait of its transaction, until
	 * that holds nothing (ww/park_batch.c); this thread only.
	 */
	bool batch;
	/*
	 * An unlock of its transaction woke a waiter: yield once the
	 * transaction holds nothing (ww/park_batch.c); this thread only.
	 */
	bool woke;
	pid_t tid;              /* Linux thread id, 0 until attached */
	pthread_t self;
	bool attached;          /* registry: a live thread owns this struct */
	bool shared;            /* the out-of-memory fallback, see thread.c */
	bool retired;           /* its thread leaked locks: never reused */
	struct ww_thread *next; /* registry list, under the registry lock */
	struct ww_debug_thread *debug; /* checker state; this thread only */
	/*
	 * ttm_interrupt_self()'s, or NULL; set by this thread, cleared at
	 * its exit, both under the registry lock (ww/thread.c).
	 */
	struct ttm_interrupt_token *token;
} __attribute__((aligned(64)));

/** The calling thread's struct, created on first use. Never NULL: never fails. */
struct ww_thread *ww_thread_attach(void);

extern __thread struct ww_thread *ww_thread_current
	__attribute__((tls_model("initial-exec")));

static inline struct ww_thread *ww_thread_self(void)
{
	struct ww_thread *t = ww_thread_current;

	return __builtin_expect(t != NULL, 1) ? t : ww_thread_attach();
}

/** Read @t's wake sequence; call before checking the wait condition. */
static inline uint32_t ww_thread_seq(struct ww_thread *t)
{
	return __atomic_load_n(&t->wake_seq, __ATOMIC_ACQUIRE);
}

/**
 * ww_thread_park - sleep while @t's wake sequence still equals @seq.
 * @deadline: absolute CLOCK_MONOTONIC time, or NULL for no timeout.
 *
 * Must be called by the thread @t itself. Returns on a wake-up, a spurious
 * wake-up or the deadline; the caller re-checks its condition.
 * Return: false if the deadline passed, true otherwise.
 */
bool ww_thread_park(struct ww_thread *t, uint32_t seq,
		    const struct timespec *deadline);

/* ww_thread::parked of a thread asleep on a sequence (low 32 bits). */
#define WW_PARKED (UINT64_C(1) << 32)

/**
 * ww_thread_park_arm - @t (the caller) is about to sleep on @seq.
 * @t: the calling thread's struct.
 * @seq: the sequence it read before checking its condition.
 *
 * The first half of ww_thread_park(), apart for tests.
 */
static inline void ww_thread_park_arm(struct ww_thread *t, uint32_t seq)
{
	__atomic_store_n(&t->parked, WW_PARKED | seq, __ATOMIC_RELAXED);
	/*
	 * Pairs with the fence of ww_thread_wake_claim(): either the waker
	 * sees parked set and issues the futex wake, or the futex's read of
	 * the sequence after this sees the waker's increment and does not
	 * sleep.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/**
 * ww_thread_wake_prepare - bump @t's wake sequence; pair with
 * ww_thread_wake_commit().
 * @t: the thread to wake.
 * Return: the sequence before the bump, for ww_thread_wake_commit().
 */
static inline uint32_t ww_thread_wake_prepare(struct ww_thread *t)
{
	return __atomic_fetch_add(&t->wake_seq, 1, __ATOMIC_RELEASE);
}

/**
 * ww_thread_wake_claim - does a wake of @t after its sequence moved need a
 * futex wake from us?
 * @t: the thread to wake, its sequence already incremented.
 * @old: its sequence before our increment (ww_thread_wake_prepare()).
 *
 * A thread that is not parked re-reads its sequence before it sleeps (the
 * fence of ww_thread_park() pairs with ours), so it needs no system call:
 * most wounds hit a running victim. The first waker of a parked thread
 * clears the flag and issues the one futex wake that park needs; later
 * wakers (unlocks of a lock stolen while the woken waiter waits for a CPU)
 * see it clear and skip theirs: the woken thread re-reads the sequence
 * before its next check. The shared fallback's flag stands for several
 * sleepers: it is always woken.
 *
 * Only a park on a sequence up to @old is ours to wake: a waker delayed
 * between its increment and this claim (ww_unlock_slowpath() claims after
 * the bucket unlock) may find its thread parked again on a sequence that
 * already counts our increment. Were it to clear that flag, its futex wake
 * could come before the sleeper is queued in the kernel, and the next
 * waker, the one this park waits for, would see the flag clear and skip
 * its wake: a lost wake-up.
 * Return: true if the caller must issue the futex wake.
 */
static inline bool ww_thread_wake_claim(struct ww_thread *t, uint32_t old)
{
	uint64_t p;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (t->shared)
		return true;
	p = __atomic_load_n(&t->parked, __ATOMIC_RELAXED);
	while (p && (int32_t)(old - (uint32_t)p) >= 0) {
		if (__atomic_compare_exchange_n(&t->parked, &p, 0, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/**
 * ww_thread_wake_commit - wake @t after an earlier ww_thread_wake_prepare().
 * @t: the thread to wake.
 * @old: what that ww_thread_wake_prepare() returned.
 *
 * Issues the futex wake only if ww_thread_wake_claim() says so.
 * Return: true if a futex wake was issued.
 */
bool ww_thread_wake_commit(struct ww_thread *t, uint32_t old);

/** Bump and wake at once. */
static inline void ww_thread_wake(struct ww_thread *t)
{
	ww_thread_wake_commit(t, ww_thread_wake_prepare(t));
}

/** Consume an interrupt pending for @t (the calling thread). */
static inline bool ww_thread_take_interrupt(struct ww_thread *t)
{
	if (!__atomic_load_n(&t->interrupt, __ATOMIC_RELAXED))
		return false;
	return __atomic_exchange_n(&t->interrupt, 0, __ATOMIC_ACQUIRE) != 0;
}

#endif /* TTMSIM_WW_THREAD_H */
