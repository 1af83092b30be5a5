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
	uint32_t parked;        /* atomic: asleep in ww_thread_park() */
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

/** Bump @t's wake sequence; pair with ww_thread_wake_commit(). */
static inline void ww_thread_wake_prepare(struct ww_thread *t)
{
	__atomic_fetch_add(&t->wake_seq, 1, __ATOMIC_RELEASE);
}

/** Issue the futex wake for an earlier ww_thread_wake_prepare(). */
void ww_thread_wake_commit(struct ww_thread *t);

/** Bump and wake at once. */
static inline void ww_thread_wake(struct ww_thread *t)
{
	ww_thread_wake_prepare(t);
	ww_thread_wake_commit(t);
}

/** Consume an interrupt pending for @t (the calling thread). */
static inline bool ww_thread_take_interrupt(struct ww_thread *t)
{
	if (!__atomic_load_n(&t->interrupt, __ATOMIC_RELAXED))
		return false;
	return __atomic_exchange_n(&t->interrupt, 0, __ATOMIC_ACQUIRE) != 0;
}

#endif /* TTMSIM_WW_THREAD_H */
