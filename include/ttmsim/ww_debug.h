/* SPDX-License-Identifier: MIT */
/*
 * Debugging aids for users of ww_mutexes.
 *
 * The checker: built in unless libttmsim is configured with
 * -Dww_debug=false, and on unless TTMSIM_WW_DEBUG=0 is in the environment.
 * It keeps, per thread, the ww_mutexes the thread holds and the acquire
 * contexts it has open, and catches misuse of the API at the call that
 * breaks a rule (docs/ww-debug.md lists them with examples). By default it
 * prints a report on stderr and calls abort(): it is the one place where
 * libttmsim aborts. A program may install a handler instead.
 *
 * Back-off injection: like the kernel's CONFIG_DEBUG_WW_MUTEX_SLOWPATH, make
 * ww_mutex_lock*() fail with -EDEADLK now and then, so that a caller's
 * back-off path (unlock everything, ww_mutex_lock_slow(), retry) runs even
 * without real contention. Available in every build.
 */
#ifndef TTMSIM_WW_DEBUG_H
#define TTMSIM_WW_DEBUG_H

#include <stdbool.h>
#include <sys/types.h>

#include "ttmsim/ww_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The rules the checker enforces. The number in each comment is the rule
 * of docs/ww-debug.md (also in struct ww_debug_report::rule_number); one
 * numbered rule may be broken in several ways.
 */
enum ww_debug_rule {
	WW_DEBUG_NULL_CTX_NESTED = 1, /* 1: blocking NULL-ctx lock while holding the class */
	WW_DEBUG_CTX_AFTER_NULL,      /* 1: ctx lock while holding a NULL-ctx lock of the class */
	WW_DEBUG_CTX_NESTED,          /* 2: second open ctx of one class in a thread */
	WW_DEBUG_LOCK_AFTER_DONE,     /* 3: lock after ww_acquire_done() */
	WW_DEBUG_DONE_TWICE,          /* 3: ww_acquire_done() twice */
	WW_DEBUG_FINI_HELD,           /* 4: ww_acquire_fini() with locks held */
	WW_DEBUG_FINI_TWICE,          /* 4: ww_acquire_fini() twice */
	WW_DEBUG_CTX_DEAD,            /* 4: ctx used after fini, or never initialised */
	WW_DEBUG_CTX_THREAD,          /* 4: ctx used by another thread */
	WW_DEBUG_CLASS_MISMATCH,      /* 5: ctx and lock of different classes */
	WW_DEBUG_SLOW_NO_DEADLK,      /* 6: lock_slow without a pending -EDEADLK */
	WW_DEBUG_SLOW_WRONG_LOCK,     /* 6: lock_slow on another lock than the contended one */
	WW_DEBUG_SLOW_HELD,           /* 6: lock_slow while the ctx holds locks */
	WW_DEBUG_NOT_CONTENDED,       /* 7: after -EDEADLK, another lock first */
	WW_DEBUG_UNLOCK_UNLOCKED,     /* 8: unlock of an unlocked mutex */
	WW_DEBUG_UNLOCK_FOREIGN,      /* 8: unlock of a mutex another thread holds */
	WW_DEBUG_DESTROY_LOCKED,      /* 9: destroy of a locked mutex */
	WW_DEBUG_LOCK_UNINIT,         /* 9: use of a never-initialised mutex */
	WW_DEBUG_LOCK_DESTROYED,      /* 9: use of a destroyed mutex */
	WW_DEBUG_EXIT_HELD,           /* 10: thread exit holding ww_mutexes */
	WW_DEBUG_EXIT_CTX,            /* 10: thread exit with an open ctx */
	WW_DEBUG_RESV_NOT_HELD,       /* 11: fence added to an unheld resv */
	WW_DEBUG_RESV_NO_SLOT,        /* 11: fence added without a slot */
};

/**
 * struct ww_debug_report - one broken rule, as passed to a handler.
 *
 * Every pointer is valid only during the handler call.
 */
struct ww_debug_report {
	enum ww_debug_rule rule;
	unsigned int rule_number;        /* 1..11, see enum ww_debug_rule */
	const char *name;                /* short tag, e.g. "null-ctx-nested" */
	const char *what;                /* the rule broken, in plain words */
	const char *call;                /* the API function, e.g. "ww_mutex_lock" */
	const char *class_name;          /* NULL when there is no class */
	const struct ww_mutex *lock;     /* NULL when the call has no lock */
	const struct ww_acquire_ctx *ctx; /* NULL when the call has no ctx */
	unsigned long stamp;             /* ctx stamp, 0 without ctx */
	const char *file;                /* caller; NULL if unknown */
	int line;
	pid_t tid;                       /* the offending thread */
};

/** Signature of a report handler; @data is ww_debug_set_handler()'s. */
typedef void ww_debug_handler_fn(const struct ww_debug_report *report,
				 void *data);

/**
 * ww_debug_set_handler - call @fn instead of printing and aborting.
 * @fn: the handler, or NULL for the default (report on stderr, abort()).
 *
 * After the handler returns, the offending call does nothing: a call that
 * returns int returns -EINVAL (ww_mutex_trylock() included), a void call
 * just returns. The handler runs in the offending thread, which may hold
 * ww_mutexes: it must not lock any of them.
 * Locking: any thread, any time; the change is seen by the next report.
 */
void ww_debug_set_handler(ww_debug_handler_fn *fn, void *data);

/**
 * ww_debug_print_report - write @report to file descriptor @fd the way the
 * default handler does, with the calling thread's held locks and open
 * contexts and a backtrace. For handlers that want the standard text.
 */
void ww_debug_print_report(const struct ww_debug_report *report, int fd);

/** ww_debug_enabled - true if the checker is built in and switched on. */
bool ww_debug_enabled(void);

/**
 * ww_debug_set_enabled - switch the checker on or off at run time.
 *
 * Only while no thread holds a ww_mutex or has an acquire context open:
 * the checker does not see what happens while it is off.
 * Return: 0, or -EOPNOTSUPP if libttmsim was built with -Dww_debug=false.
 */
int ww_debug_set_enabled(bool on);

/**
 * ww_debug_inject - inject a back-off about once every @n calls.
 * @seed: seeds the pseudo-random choice: the same seed gives the same
 *        sequence of injections in a single-threaded program.
 * @n: 0 turns injection off. 1 makes every candidate call back off: only
 *     for single-step tests, since a loop that must hold two locks at once
 *     then never finishes; use 2 or more for whole programs.
 *
 * Only ww_mutex_lock() and ww_mutex_lock_interruptible() with a context
 * that already holds a lock are candidates (a context holding nothing never
 * backs off). An injected call takes nothing and returns -EDEADLK; the lock
 * it was asked for becomes the contended lock, so the caller's normal
 * back-off path runs. The environment variable TTMSIM_WW_INJECT=SEED:N does
 * the same from program start.
 *
 * Locking: may be called at any time from any thread.
 */
void ww_debug_inject(unsigned long seed, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_WW_DEBUG_H */
