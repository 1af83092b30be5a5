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
 * thread exit and the interrupt calls walk or read it: never a lock fast
 * path.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ww_thread *registry;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/*
 * What ttm_interrupt_self() hands out: a reference-counted handle on a
 * thread that outlives it. @thread is the thread's struct while the
 * thread lives, NULL once it exited; it changes only under registry_lock,
 * so that an interrupt never reaches a struct already handed to another
 * thread. The thread holds one reference, dropped at its exit.
 */
struct ttm_interrupt_token {
	int refcount;             /* atomic */
	struct ww_thread *thread; /* under registry_lock */
};

static void thread_exit(void *arg)
{
	struct ww_thread *t = arg;
	struct ttm_interrupt_token *token;

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
	/* Like a signal, an interrupt not consumed dies with the thread. */
	__atomic_store_n(&t->interrupt, 0, __ATOMIC_RELAXED);
	token = t->token;
	t->token = NULL;
	if (token)
		token->thread = NULL; /* from now on: -ESRCH */
	pthread_mutex_unlock(&registry_lock);
	ttm_interrupt_token_put(token);
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

/* A struct of no live thread (not retired), or a new one; NULL on OOM. */
static struct ww_thread *registry_get_free(void)
{
	struct ww_thread *t;

	for (t = registry; t; t = t->next)
		if (!t->attached && !t->retired)
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
 * sleeper, and every sleeper re-checks its condition. It is in no
 * registry and has no token: such a thread cannot be interrupted, which
 * ttm_interrupt_self() and ttm_interrupt_thread() say.
 */
static struct ww_thread shared_fallback = { .shared = true };

struct ww_thread *ww_thread_attach(void)
{
	pthread_t self = pthread_self();
	struct ww_thread *t;

	pid_t tid = (pid_t)syscall(SYS_gettid);

	pthread_once(&exit_key_once, make_exit_key);
	pthread_mutex_lock(&registry_lock);
	t = registry_get_free();
	if (t) {
		t->self = self;
		t->tid = tid;
		t->attached = true;
		t->spin_shift = 0; /* a new thread starts with the full budget */
		t->batch = false; /* its last thread may have exited holding locks */
		t->woke = false;
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

/* Post an interrupt to live @t; caller holds registry_lock. */
static void interrupt_locked(struct ww_thread *t)
{
	__atomic_store_n(&t->interrupt, 1, __ATOMIC_RELEASE);
	ww_thread_wake(t);
}

TTM_EXPORT int ttm_interrupt_self(struct ttm_interrupt_token **ret_token)
{
	struct ww_thread *t = ww_thread_self();
	struct ttm_interrupt_token *token = t->token;

	if (t->shared)
		return -ENOMEM;
	if (!token) {
		token = malloc(sizeof(*token));
		if (!token)
			return -ENOMEM;
		token->refcount = 1; /* the thread's, dropped at its exit */
		token->thread = t;
		/* Under the lock: ttm_interrupt() reads it there. */
		pthread_mutex_lock(&registry_lock);
		t->token = token;
		pthread_mutex_unlock(&registry_lock);
	}
	*ret_token = ttm_interrupt_token_get(token);
	return 0;
}

TTM_EXPORT struct ttm_interrupt_token *
ttm_interrupt_token_get(struct ttm_interrupt_token *token)
{
	if (token)
		__atomic_fetch_add(&token->refcount, 1, __ATOMIC_RELAXED);
	return token;
}

TTM_EXPORT void ttm_interrupt_token_put(struct ttm_interrupt_token *token)
{
	if (token && __atomic_sub_fetch(&token->refcount, 1,
					__ATOMIC_ACQ_REL) == 0)
		free(token);
}

TTM_EXPORT int ttm_interrupt(struct ttm_interrupt_token *token)
{
	int ret = -ESRCH;

	pthread_mutex_lock(&registry_lock);
	if (token->thread) {
		interrupt_locked(token->thread);
		ret = 0;
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/*
 * Only the registry is searched: a pthread_t of a thread that was joined
 * may not be passed to any pthread call, so one without a struct here is
 * never looked at.
 */
TTM_EXPORT int ttm_interrupt_thread(pthread_t thread)
{
	struct ww_thread *t;
	int ret = -ESRCH;

	pthread_mutex_lock(&registry_lock);
	t = registry_find_attached(thread);
	if (t) {
		interrupt_locked(t);
		ret = 0;
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

TTM_EXPORT bool ttm_interrupt_clear(void)
{
	return ww_thread_take_interrupt(ww_thread_self());
}
