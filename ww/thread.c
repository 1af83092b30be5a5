// SPDX-License-Identifier: MIT
/*
 * Per-thread parking state: the registry, futex sleep/wake, and interrupts.
 * See include/ww/thread.h for the protocol.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ttmsim/interrupt.h"
#include "util/compiler.h"
#include "ww/debug.h"
#include "ww/thread.h"

__thread struct ww_thread *ww_thread_current
	__attribute__((tls_model("initial-exec")));

/*
 * Every struct ww_thread ever made, attached or not. Only thread attach,
 * thread exit and ttm_interrupt_thread() walk it: never a lock fast path.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ww_thread *registry;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
	struct ww_thread *t = arg;

	/* Rule 10: reports locks and contexts the thread leaves behind. */
	bool leaked = ww_debug_thread_exit(t);

	pthread_mutex_lock(&registry_lock);
	/*
	 * A lock taken without a context names this struct as its owner:
	 * were it reused, the next thread would seem to hold what this one
	 * leaked (and wait on itself for it). Never hand it out again.
	 */
	t->retired = leaked;
	t->attached = false;
	/* A retired struct keeps the tid: ww_mutex_owner_tid() names it. */
	if (!leaked)
		t->tid = 0;
	__atomic_store_n(&t->interrupt, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&registry_lock);
	ww_thread_current = NULL;
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* The struct of the live thread @self, if it has one. */
static struct ww_thread *registry_find_attached(pthread_t self)
{
	struct ww_thread *t;

	for (t = registry; t; t = t->next)
		if (t->attached && pthread_equal(t->self, self))
			return t;
	return NULL;
}

/*
 * The Linux thread id of @thread, read from its CPU-time clock id, which
 * the kernel's ABI builds as (~tid << 3) | PERTHREAD (4) | SCHED (2).
 * A pthread_t is reused as soon as its thread is joined; a tid only after
 * the kernel's pid space wraps. 0 if it cannot be read.
 */
static pid_t tid_of(pthread_t thread)
{
	clockid_t clk;

	if (pthread_getcpuclockid(thread, &clk) || (clk & 7) != 6)
		return 0;
	return (pid_t)~(clk >> 3);
}

/*
 * An interrupt may be posted to a thread before it first uses ttmsim: that
 * leaves an unattached struct naming it (by tid), with the interrupt
 * pending. A pending interrupt of a thread that exited without ever using
 * ttmsim dies with it, like a signal: a later thread that reuses the
 * pthread_t has another tid and does not inherit it.
 */
static struct ww_thread *registry_find_pending(pid_t tid)
{
	struct ww_thread *t;

	for (t = registry; t; t = t->next)
		if (!t->attached && t->tid == tid &&
		    __atomic_load_n(&t->interrupt, __ATOMIC_RELAXED))
			return t;
	return NULL;
}

/* Drop interrupts pending for threads that died before consuming them. */
static void registry_drop_dead(pthread_t self, pid_t tid)
{
	struct ww_thread *t;

	for (t = registry; t; t = t->next)
		if (!t->attached && t->tid != tid &&
		    pthread_equal(t->self, self))
			__atomic_store_n(&t->interrupt, 0, __ATOMIC_RELAXED);
}

/* Unattached structs with nothing pending are free for reuse. */
static struct ww_thread *registry_get_free(void)
{
	struct ww_thread *t;

	for (t = registry; t; t = t->next)
		if (!t->attached && !t->retired &&
		    !__atomic_load_n(&t->interrupt, __ATOMIC_RELAXED))
			return t;
	t = aligned_alloc(_Alignof(struct ww_thread), sizeof(*t));
	if (!t)
		return NULL;
	*t = (struct ww_thread){ .next = registry };
	registry = t;
	return t;
}

/*
 * Threads that could not get a struct of their own (out of memory) share
 * this one. Sharing only costs spurious wake-ups: wakes on it wake every
 * sleeper, and every sleeper re-checks its condition.
 */
static struct ww_thread shared_fallback = { .shared = true };

struct ww_thread *ww_thread_attach(void)
{
	pthread_t self = pthread_self();
	struct ww_thread *t;

	pid_t tid = (pid_t)syscall(SYS_gettid);

	pthread_once(&exit_key_once, make_exit_key);
	pthread_mutex_lock(&registry_lock);
	registry_drop_dead(self, tid);
	t = registry_find_pending(tid);
	if (!t)
		t = registry_get_free();
	if (t) {
		t->self = self;
		t->tid = tid;
		t->attached = true;
	}
	pthread_mutex_unlock(&registry_lock);
	if (!t)
		t = &shared_fallback;
	else
		pthread_setspecific(exit_key, t);
	ww_thread_current = t;
	return t;
}

static long futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, val3);
}

bool ww_thread_park(struct ww_thread *t, uint32_t seq,
		    const struct timespec *deadline)
{
	long ret;

	__atomic_store_n(&t->parked, 1, __ATOMIC_RELAXED);
	if (deadline)
		ret = futex(&t->wake_seq,
			    FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seq,
			    deadline, FUTEX_BITSET_MATCH_ANY);
	else
		ret = futex(&t->wake_seq, FUTEX_WAIT | FUTEX_PRIVATE_FLAG,
			    seq, NULL, 0);
	__atomic_store_n(&t->parked, 0, __ATOMIC_RELAXED);
	return !(ret == -1 && errno == ETIMEDOUT);
}

void ww_thread_wake_commit(struct ww_thread *t)
{
	futex(&t->wake_seq, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
	      t->shared ? INT32_MAX : 1, NULL, 0);
}

TTM_EXPORT int ttm_interrupt_thread(pthread_t thread)
{
	struct ww_thread *t;

	pthread_mutex_lock(&registry_lock);
	t = registry_find_attached(thread);
	if (!t) {
		pid_t tid = tid_of(thread);

		t = registry_find_pending(tid);
		if (!t) {
			t = registry_get_free();
			if (!t) {
				pthread_mutex_unlock(&registry_lock);
				return -ENOMEM;
			}
			t->self = thread;
			t->tid = tid;
		}
	}
	__atomic_store_n(&t->interrupt, 1, __ATOMIC_RELEASE);
	ww_thread_wake(t);
	pthread_mutex_unlock(&registry_lock);
	return 0;
}

TTM_EXPORT bool ttm_interrupt_clear(void)
{
	return ww_thread_take_interrupt(ww_thread_self());
}
