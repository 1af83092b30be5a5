// SPDX-License-Identifier: MIT
/*
 * The ww_mutex debug checker (ttmsim/ww_debug.h, docs/ww-debug.md):
 *
 *  - violations: a table with one case per enum ww_debug_rule value, plus
 *    variants for the other ways to break some rules. Each case breaks its
 *    rule exactly once and runs twice:
 *     - forked, with the default handler: the child must die of SIGABRT
 *       after exactly one report on stderr that names the rule, its tag,
 *       the class, the API call and its file:line here, the lock and the
 *       context;
 *     - in process, with a counting handler: exactly one report saying the
 *       same, and the offending call refused (-EINVAL, nothing taken,
 *       released, finished or destroyed); the case then cleans up by the
 *       rules, so that nothing else is reported;
 *  - correct usage that must report nothing, in process and forked: real
 *    -EDEADLK back-offs between two threads in both algorithms (with an
 *    interrupted slow lock retried), -EALREADY and trylock of a held lock
 *    with and without a context, done/unlock/fini, a context given up after
 *    -EDEADLK, contexts of different classes nested, a plain lock of one
 *    class under a context of another;
 *  - no false positives at scale: 8 threads locking random overlapping sets
 *    with back-offs, and one context holding 5000 locks;
 *  - the run-time switch.
 *
 * Every test is skipped when libttmsim is built without the checker
 * (-Dww_debug=false). Processes are forked only while the test process has
 * a single thread; cases sequence their threads with joins and actors
 * (lib/helpers.h), never with sleeps.
 */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "lib/helpers.h"
#include "ttmsim/bo.h"
#include "ttmsim/gpu.h"
#include "util/compiler.h" /* container_of() */

/* Wait-Die, the kernel's reservation class: most cases use it. */
static DEFINE_WD_CLASS(debug_test_class);
/* Wound-Wait: the class of the cross-class cases, and controls' second. */
static DEFINE_WW_CLASS(debug_other_class);

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* What a report names as its class when there is none. */
#define NO_CLASS "(none)"

/* ---- what a violation must report ------------------------------------ */

/*
 * Filled in by a case as it breaks its rule. In the forked tests it lives
 * in memory shared with the parent, which reads it once the child is dead.
 * Pointers are kept as integers: they are compared, never followed (the
 * context of a thread that exited is gone).
 */
struct expect {
	int line;       /* of the offending call in this file */
	uintptr_t lock; /* the lock the report names, 0 for none */
	uintptr_t ctx;  /* the context it names, 0 for none */
	/* Rule 13: the object named, and the sections open; else 0. */
	uintptr_t object;
	unsigned long sections;
	char cls[64];   /* the class named, if not the case's (a device's) */
};

static void expect_at(struct expect *e, int line, const void *lock,
		      const void *ctx)
{
	e->line = line;
	e->lock = (uintptr_t)lock;
	e->ctx = (uintptr_t)ctx;
}

/*
 * Make @call, the call that breaks the rule, naming @lock and @ctx. Keep
 * the whole OFFEND() on one line: the report's line is the API macro's
 * __LINE__, and it must match ours.
 */
#define OFFEND(e, lock, ctx, call) \
	(expect_at((e), __LINE__, (lock), (ctx)), (call))

/* Lock call flavours, for cases that break one rule in several ways. */
enum how { LOCK, LOCK_INTR, TRYLOCK, SLOW, SLOW_INTR };

/*
 * One lock call of flavour @how, as an expression, so that it can sit in
 * OFFEND() on one line. ww_mutex_lock_slow() returns nothing: it counts as
 * -EINVAL here, and its refusal shows only in the lock staying free.
 */
#define LOCK_CALL(how, l, c)                                            \
	((how) == LOCK ? ww_mutex_lock(l, c) :                          \
	 (how) == LOCK_INTR ? ww_mutex_lock_interruptible(l, c) :       \
	 (how) == TRYLOCK ? ww_mutex_trylock(l, c) :                    \
	 (how) == SLOW_INTR ? ww_mutex_lock_slow_interruptible(l, c) :  \
	 (ww_mutex_lock_slow(l, c), -EINVAL))

/* A refused lock call returns -EINVAL and leaves the (free) lock free. */
#define CHECK_REFUSED(ret, lock)                                        \
	(CHECK_INT(ret, -EINVAL), CHECK(!ww_mutex_is_locked(lock)))

/* ---- fixtures -------------------------------------------------------- */

/* The locks and the context most cases need. */
struct fix {
	struct ww_mutex a, b, c;
	struct ww_acquire_ctx ctx;
};

static void fix_init(struct fix *f, struct ww_class *cls)
{
	ww_mutex_init(&f->a, cls);
	ww_mutex_init(&f->b, cls);
	ww_mutex_init(&f->c, cls);
}

/*
 * Open f->ctx, take a, and get -EDEADLK on b. The back-off is injected
 * (ww_debug_inject() with every candidate call backing off): for the
 * checker it is a real one, b becomes the contended lock, and no second
 * thread is needed.
 */
static void fix_deadlk(struct fix *f, struct ww_class *cls)
{
	ww_acquire_init(&f->ctx, cls);
	CHECK_INT(ww_mutex_lock(&f->a, &f->ctx), 0);
	ww_debug_inject(1, 1);
	CHECK_INT(ww_mutex_lock(&f->b, &f->ctx), -EDEADLK);
	ww_debug_inject(0, 0);
	CHECK(!ww_mutex_is_locked(&f->b));
}

/* End fix_deadlk()'s context by the book, once a has been unlocked. */
static void fix_backoff(struct fix *f)
{
	ww_mutex_lock_slow(&f->b, &f->ctx);
	CHECK(ww_mutex_owner_ctx(&f->b) == &f->ctx);
	ww_mutex_unlock(&f->b);
	ww_acquire_fini(&f->ctx);
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* A step run by a thread of its own, started and joined by in_thread(). */
typedef void thread_step(struct fix *f, struct expect *e);

struct thread_job {
	thread_step *fn;
	struct fix *f;
	struct expect *e;
};

static void *thread_job_main(void *arg)
{
	struct thread_job *j = arg;

	j->fn(j->f, j->e);
	return NULL;
}

/*
 * Run @fn in a new thread and wait until it has exited, its TLS
 * destructors (the checker's rule 10) included.
 */
static void in_thread(thread_step *fn, struct fix *f, struct expect *e)
{
	struct thread_job j = { .fn = fn, .f = f, .e = e };
	pthread_t t;

	if (CHECK_INT(pthread_create(&t, NULL, thread_job_main, &j), 0))
		CHECK_INT(pthread_join(t, NULL), 0);
}

/* ---- violation cases -------------------------------------------------- */

/*
 * Rule 1, null-ctx-nested: a blocking lock without a context, while this
 * thread holds a lock of the class (LOCK) or has a context of it open
 * (LOCK_INTR, which also shows the interruptible call is checked).
 */
static void case_null_ctx_nested(struct expect *e, int how)
{
	struct fix f;
	int ret;

	fix_init(&f, &debug_test_class);
	if (how == LOCK)
		CHECK_INT(ww_mutex_lock(&f.a, NULL), 0);
	else
		ww_acquire_init(&f.ctx, &debug_test_class);
	ret = OFFEND(e, &f.b, NULL, LOCK_CALL(how, &f.b, NULL));
	CHECK_REFUSED(ret, &f.b);
	if (how == LOCK)
		ww_mutex_unlock(&f.a);
	else
		ww_acquire_fini(&f.ctx);
}

/* Rule 1, ctx-after-null: the qxl order, a ticketed lock under a plain one. */
static void case_ctx_after_null(struct expect *e, int unused)
{
	struct fix f;
	int ret;

	(void)unused;
	fix_init(&f, &debug_test_class);
	CHECK_INT(ww_mutex_lock(&f.a, NULL), 0);
	ww_acquire_init(&f.ctx, &debug_test_class);
	ret = OFFEND(e, &f.b, &f.ctx, ww_mutex_lock(&f.b, &f.ctx));
	CHECK_REFUSED(ret, &f.b);
	ww_acquire_fini(&f.ctx);
	ww_mutex_unlock(&f.a);
}

/*
 * Rule 2: a second context of the class. The report names the one already
 * open; the refused init must not touch the second.
 */
static void case_ctx_nested(struct expect *e, int unused)
{
	struct ww_acquire_ctx first, second;

	(void)unused;
	memset(&second, 0, sizeof(second));
	ww_acquire_init(&first, &debug_test_class);
	OFFEND(e, NULL, &first, ww_acquire_init(&second, &debug_test_class));
	CHECK(all_zero(&second, sizeof(second)));
	ww_acquire_fini(&first);
}

/* Rule 3: a lock (LOCK) or trylock (TRYLOCK) after ww_acquire_done(). */
static void case_lock_after_done(struct expect *e, int how)
{
	struct fix f;
	int ret;

	fix_init(&f, &debug_test_class);
	ww_acquire_init(&f.ctx, &debug_test_class);
	ww_acquire_done(&f.ctx);
	ret = OFFEND(e, &f.a, &f.ctx, LOCK_CALL(how, &f.a, &f.ctx));
	CHECK_REFUSED(ret, &f.a);
	ww_acquire_fini(&f.ctx);
}

/* Rule 3: ww_acquire_done() twice. */
static void case_done_twice(struct expect *e, int unused)
{
	struct ww_acquire_ctx ctx;

	(void)unused;
	ww_acquire_init(&ctx, &debug_test_class);
	ww_acquire_done(&ctx);
	OFFEND(e, NULL, &ctx, ww_acquire_done(&ctx));
	ww_acquire_fini(&ctx);
}

/* Rule 4: fini with a lock held. Refused: the context still holds it. */
static void case_fini_held(struct expect *e, int unused)
{
	struct fix f;

	(void)unused;
	fix_init(&f, &debug_test_class);
	ww_acquire_init(&f.ctx, &debug_test_class);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), 0);
	OFFEND(e, NULL, &f.ctx, ww_acquire_fini(&f.ctx));
	CHECK(ww_mutex_owner_ctx(&f.a) == &f.ctx);
	ww_mutex_unlock(&f.a);
	ww_acquire_fini(&f.ctx);
}

/* Rule 4: fini twice. */
static void case_fini_twice(struct expect *e, int unused)
{
	struct ww_acquire_ctx ctx;

	(void)unused;
	ww_acquire_init(&ctx, &debug_test_class);
	ww_acquire_fini(&ctx);
	OFFEND(e, NULL, &ctx, ww_acquire_fini(&ctx));
}

/* Rule 4, ctx-dead: a context used after fini, or (@never_init) never set. */
static void case_ctx_dead(struct expect *e, int never_init)
{
	struct fix f;
	int ret;

	fix_init(&f, &debug_test_class);
	if (never_init) {
		memset(&f.ctx, 0, sizeof(f.ctx));
	} else {
		ww_acquire_init(&f.ctx, &debug_test_class);
		ww_acquire_fini(&f.ctx);
	}
	ret = OFFEND(e, &f.a, &f.ctx, ww_mutex_lock(&f.a, &f.ctx));
	CHECK_REFUSED(ret, &f.a);
}

/* Another thread locks with the main thread's context ... */
static void borrow_lock(struct fix *f, struct expect *e)
{
	int ret = OFFEND(e, &f->a, &f->ctx, ww_mutex_lock(&f->a, &f->ctx));

	CHECK_REFUSED(ret, &f->a);
}

/* ... or finishes it. */
static void borrow_fini(struct fix *f, struct expect *e)
{
	OFFEND(e, NULL, &f->ctx, ww_acquire_fini(&f->ctx));
}

/*
 * Rule 4, ctx-thread: a context used by another thread than the one that
 * initialised it (@fini: to finish it). Refused, so still ours to finish.
 */
static void case_ctx_thread(struct expect *e, int fini)
{
	struct fix f;

	fix_init(&f, &debug_test_class);
	ww_acquire_init(&f.ctx, &debug_test_class);
	in_thread(fini ? borrow_fini : borrow_lock, &f, e);
	ww_acquire_fini(&f.ctx);
}

/* Rule 5: a lock of another class; the report names the lock's. */
static void case_class_mismatch(struct expect *e, int unused)
{
	struct ww_mutex other;
	struct ww_acquire_ctx ctx;
	int ret;

	(void)unused;
	ww_mutex_init(&other, &debug_other_class);
	ww_acquire_init(&ctx, &debug_test_class);
	ret = OFFEND(e, &other, &ctx, ww_mutex_lock(&other, &ctx));
	CHECK_REFUSED(ret, &other);
	ww_acquire_fini(&ctx);
}

#define SLOW_FRESH 0      /* a context that never got -EDEADLK */
#define SLOW_NULL_CTX 1   /* no context at all */
#define SLOW_AGAIN 2      /* after a back-off that already took its lock */

/* Rule 6, slow-without-edeadlk: ww_mutex_lock_slow*() out of the blue. */
static void case_slow_no_deadlk(struct expect *e, int variant)
{
	enum how how = variant == SLOW_AGAIN ? SLOW_INTR : SLOW;
	struct ww_acquire_ctx *ctx = NULL;
	struct fix f;
	int ret;

	fix_init(&f, &debug_test_class);
	if (variant == SLOW_FRESH) {
		ctx = &f.ctx;
		ww_acquire_init(ctx, &debug_test_class);
	} else if (variant == SLOW_AGAIN) {
		ctx = &f.ctx;
		fix_deadlk(&f, &debug_test_class);
		ww_mutex_unlock(&f.a);
		ww_mutex_lock_slow(&f.b, ctx);
		ww_mutex_unlock(&f.b);
	}
	ret = OFFEND(e, &f.a, ctx, LOCK_CALL(how, &f.a, ctx));
	CHECK_REFUSED(ret, &f.a);
	if (ctx)
		ww_acquire_fini(ctx);
}

/*
 * After -EDEADLK on b, with a released: lock c instead. By lock_slow,
 * rule 6 (slow-wrong-lock); by lock or trylock, rule 7 (not-contended).
 */
static void case_not_contended(struct expect *e, int how)
{
	struct fix f;
	int ret;

	fix_init(&f, &debug_test_class);
	fix_deadlk(&f, &debug_test_class);
	ww_mutex_unlock(&f.a);
	ret = OFFEND(e, &f.c, &f.ctx, LOCK_CALL(how, &f.c, &f.ctx));
	CHECK_REFUSED(ret, &f.c);
	fix_backoff(&f);
}

/* Rule 6, slow-held: after -EDEADLK on b, lock_slow b still holding a. */
static void case_slow_held(struct expect *e, int unused)
{
	struct fix f;

	(void)unused;
	fix_init(&f, &debug_test_class);
	fix_deadlk(&f, &debug_test_class);
	OFFEND(e, &f.b, &f.ctx, ww_mutex_lock_slow(&f.b, &f.ctx));
	CHECK(!ww_mutex_is_locked(&f.b));
	ww_mutex_unlock(&f.a);
	fix_backoff(&f);
}

/*
 * Rule 8, unlock-unlocked: of a lock never taken, or (@twice) unlocked
 * once already. Refused: still free and usable.
 */
static void case_unlock_unlocked(struct expect *e, int twice)
{
	struct fix f;

	fix_init(&f, &debug_test_class);
	if (twice) {
		CHECK_INT(ww_mutex_lock(&f.a, NULL), 0);
		ww_mutex_unlock(&f.a);
	}
	OFFEND(e, &f.a, NULL, ww_mutex_unlock(&f.a));
	CHECK(!ww_mutex_is_locked(&f.a));
	CHECK_INT(ww_mutex_trylock(&f.a, NULL), 1);
	ww_mutex_unlock(&f.a);
}

/* Rule 8, unlock-foreign. Refused: the other thread still holds it. */
static void case_unlock_foreign(struct expect *e, int unused)
{
	struct fix f;
	struct actor other;

	(void)unused;
	fix_init(&f, &debug_test_class);
	actor_start(&other, &debug_test_class);
	CHECK_INT(actor_run(&other, act_lock_noctx, &f.a), 0);
	OFFEND(e, &f.a, NULL, ww_mutex_unlock(&f.a));
	CHECK_INT(ww_mutex_owner_tid(&f.a), other.tid);
	actor_run(&other, act_unlock, &f.a);
	actor_stop(&other);
}

/* Rule 9, destroy-locked. Refused: still locked, still of its class. */
static void case_destroy_locked(struct expect *e, int unused)
{
	struct fix f;

	(void)unused;
	fix_init(&f, &debug_test_class);
	CHECK_INT(ww_mutex_lock(&f.a, NULL), 0);
	OFFEND(e, &f.a, NULL, ww_mutex_destroy(&f.a));
	CHECK(ww_mutex_is_locked(&f.a));
	CHECK(f.a.ww_class == &debug_test_class);
	ww_mutex_unlock(&f.a);
	ww_mutex_destroy(&f.a);
}

#define BAD_UNINIT 0       /* zero-filled, locked with a context */
#define BAD_UNINIT_NOCTX 1 /* zero-filled, trylock without: no class known */
#define BAD_DESTROYED 2    /* destroyed, locked with a context */

/* Rule 9: a lock that is not (or no longer) a ww_mutex. */
static void case_bad_lock(struct expect *e, int variant)
{
	struct ww_acquire_ctx ctx, *c = NULL;
	struct ww_mutex m;
	int ret;

	memset(&m, 0, sizeof(m));
	if (variant == BAD_DESTROYED) {
		ww_mutex_init(&m, &debug_test_class);
		ww_mutex_destroy(&m);
	}
	if (variant != BAD_UNINIT_NOCTX) {
		c = &ctx;
		ww_acquire_init(c, &debug_test_class);
	}
	ret = OFFEND(e, &m, c, LOCK_CALL(c ? LOCK : TRYLOCK, &m, c));
	CHECK_REFUSED(ret, &m);
	if (c)
		ww_acquire_fini(c);
}

/*
 * Rule 10 leaves locks locked for good: these are used by nothing else,
 * and only by the one case that leaks them.
 */
static struct ww_mutex leaked_plain, leaked_ctx[2];

/* Exit holding a lock taken without a context. */
static void leak_plain(struct fix *f, struct expect *e)
{
	struct ww_mutex *l = &leaked_plain;

	(void)f;
	ww_mutex_init(l, &debug_test_class);
	CHECK_INT(OFFEND(e, l, NULL, ww_mutex_lock(l, NULL)), 0);
}

/*
 * Exit holding two locks of an open context: one report, exit-held, for
 * the first lock taken.
 */
static void leak_ctx_locks(struct fix *f, struct expect *e)
{
	struct ww_mutex *l = leaked_ctx;
	struct ww_acquire_ctx ctx;

	(void)f;
	ww_mutex_init(&l[0], &debug_test_class);
	ww_mutex_init(&l[1], &debug_test_class);
	ww_acquire_init(&ctx, &debug_test_class);
	CHECK_INT(OFFEND(e, &l[0], &ctx, ww_mutex_lock(&l[0], &ctx)), 0);
	CHECK_INT(ww_mutex_lock(&l[1], &ctx), 0);
}

/* Exit with a context open, holding nothing. */
static void leak_ctx(struct fix *f, struct expect *e)
{
	struct ww_acquire_ctx ctx;

	(void)f;
	OFFEND(e, NULL, &ctx, ww_acquire_init(&ctx, &debug_test_class));
}

/* Rule 10: a thread exits leaving locks or a context behind. */
static void case_thread_exit(struct expect *e, int variant)
{
	static thread_step *const leak[] = { leak_plain, leak_ctx_locks,
					     leak_ctx };

	in_thread(leak[variant], NULL, e);
}

/*
 * Rule 13: blocking calls inside fence-signalling sections. Each case
 * opens its own section(s) with ttm_fence_begin_signalling() and closes
 * them after the refused call; the library's own sections (fence
 * callbacks on a GPU engine) are the last case.
 */

#define SIG_LOCK 0      /* plain lock, no context */
#define SIG_LOCK_CTX 1  /* interruptible lock with a context, nested */

/* signalling-lock: a ww_mutex taken blocking inside a section. */
static void case_signalling_lock(struct expect *e, int variant)
{
	unsigned int outer = 0, inner;
	struct ww_acquire_ctx *c = NULL;
	int ret, how = LOCK;
	struct fix f;

	fix_init(&f, &debug_test_class);
	if (variant == SIG_LOCK_CTX) {
		ww_acquire_init(&f.ctx, &debug_test_class);
		outer = ttm_fence_begin_signalling();
		c = &f.ctx;
		how = LOCK_INTR;
	}
	inner = ttm_fence_begin_signalling();
	e->sections = variant == SIG_LOCK_CTX ? 2 : 1;
	/* A trylock cannot block: allowed, and not reported. */
	CHECK_INT(ww_mutex_trylock(&f.b, NULL), 1);
	ww_mutex_unlock(&f.b);
	ret = OFFEND(e, &f.a, c, LOCK_CALL(how, &f.a, c));
	CHECK_REFUSED(ret, &f.a);
	ttm_fence_end_signalling(inner);
	if (variant == SIG_LOCK_CTX) {
		ttm_fence_end_signalling(outer);
		ww_acquire_fini(&f.ctx);
	}
	/* Out of the section, the same lock is fine. */
	CHECK_INT(ww_mutex_lock(&f.a, NULL), 0);
	ww_mutex_unlock(&f.a);
}

/* A device with one buffer, for the reservation cases. */
struct sig_dev {
	struct ttm_device *dev;
	struct ttm_bo *bo;
};

static bool sig_dev_init(struct sig_dev *s, struct expect *e)
{
	static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;

	s->bo = NULL;
	if (!CHECK_INT(ttm_device_create(NULL, &s->dev), 0))
		return false;
	if (!CHECK_INT(ttm_bo_create(s->dev, 4096, &sys, 0, &s->bo), 0)) {
		ttm_device_destroy(s->dev);
		return false;
	}
	snprintf(e->cls, sizeof(e->cls), "%s",
		 ttm_device_ww_class(s->dev)->name);
	return true;
}

static void sig_dev_fini(struct sig_dev *s)
{
	ttm_bo_put(s->bo);
	CHECK_INT(ttm_device_destroy(s->dev), 0);
}

/*
 * signalling-lock through ttm_bo_reserve(): the report names the
 * reservation's lock and this line. Reserving with no_wait is allowed.
 */
static void case_signalling_reserve(struct expect *e, int unused)
{
	struct sig_dev s;
	struct ww_mutex *l;
	struct ttm_bo *bo;
	unsigned int cookie;
	int ret;

	(void)unused;
	if (!sig_dev_init(&s, e))
		return;
	bo = s.bo;
	l = &ttm_bo_resv(bo)->lock;
	cookie = ttm_fence_begin_signalling();
	e->sections = 1;
	CHECK_INT(ttm_bo_reserve(bo, false, true, NULL), 0);
	ttm_bo_unreserve(bo);
	ret = OFFEND(e, l, NULL, ttm_bo_reserve(bo, true, false, NULL));
	CHECK_REFUSED(ret, l);
	ttm_fence_end_signalling(cookie);
	sig_dev_fini(&s);
}

#define SIG_WAIT_FENCE 0 /* ttm_fence_wait() on an unsignalled fence */
#define SIG_WAIT_RESV 1  /* ttm_resv_wait() on an idle reservation */
#define SIG_WAIT_ANY 2   /* ttm_fence_wait_any() on an unsignalled fence */
#define SIG_WAIT_RCU 3   /* ttm_fence_rcu_barrier(): waits for readers */

/*
 * signalling-wait: reported whether or not the wait would sleep; the
 * fence is never signalled, so only the refusal lets the case go on.
 * A zero timeout only tests: allowed.
 */
static void case_signalling_wait(struct expect *e, int variant)
{
	const enum ttm_resv_usage all = TTM_RESV_USAGE_BOOKKEEP;
	struct ttm_resv resv, *r = &resv;
	struct ttm_fence *fence;
	unsigned int cookie;
	int ret;

	if (!CHECK_INT(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					&fence), 0))
		return;
	ttm_resv_init(&resv, &debug_test_class);
	cookie = ttm_fence_begin_signalling();
	e->sections = 1;
	CHECK_INT(ttm_fence_wait(fence, false, 0), -ETIME);
	CHECK_INT(ttm_resv_wait(&resv, all, false, 0), 0);
	if (variant == SIG_WAIT_FENCE) {
		e->object = (uintptr_t)fence;
		ret = OFFEND(e, NULL, NULL, ttm_fence_wait(fence, false, -1));
	} else if (variant == SIG_WAIT_ANY) {
		unsigned int index;

		e->object = (uintptr_t)fence;
		ret = OFFEND(e, NULL, NULL,
			     ttm_fence_wait_any(&fence, 1, false, -1, &index));
	} else if (variant == SIG_WAIT_RCU) {
		e->object = 0;
		ret = OFFEND(e, NULL, NULL, ttm_fence_rcu_barrier());
	} else {
		e->object = (uintptr_t)&resv;
		ret = OFFEND(e, NULL, NULL, ttm_resv_wait(r, all, true, 1000));
	}
	CHECK_INT(ret, -EINVAL);
	ttm_fence_end_signalling(cookie);
	ttm_resv_fini(&resv);
	ttm_fence_put(fence);
}

#define SIG_ALLOC_VALIDATE 0 /* ttm_bo_validate(), caller-site macro */
#define SIG_ALLOC_CREATE 1   /* ttm_bo_create(), no macro */

/* signalling-alloc: making room may evict and wait. */
static void case_signalling_alloc(struct expect *e, int variant)
{
	static const struct ttm_placement gtt = TTM_PLACEMENT_GTT_INIT;
	static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;
	const struct ttm_placement *p = &sys;
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct ttm_bo *bo = NULL;
	struct ttm_device *dev;
	struct sig_dev s;
	unsigned int cookie;
	int ret;

	if (!sig_dev_init(&s, e))
		return;
	dev = s.dev;
	e->cls[0] = '\0'; /* no lock: the report names no class */
	CHECK_INT(ttm_bo_reserve(s.bo, false, true, NULL), 0);
	cookie = ttm_fence_begin_signalling();
	e->sections = 1;
	if (variant == SIG_ALLOC_VALIDATE) {
		e->object = (uintptr_t)s.bo;
		ret = OFFEND(e, NULL, NULL, ttm_bo_validate(s.bo, &gtt, &ctx));
		CHECK(ttm_bo_domain(s.bo) == TTM_DOMAIN_SYSTEM);
	} else {
		e->object = (uintptr_t)s.dev;
		ret = OFFEND(e, NULL, NULL, ttm_bo_create(dev, 4, p, 0, &bo));
		CHECK(bo == NULL);
	}
	CHECK_INT(ret, -EINVAL);
	ttm_fence_end_signalling(cookie);
	ttm_bo_unreserve(s.bo);
	sig_dev_fini(&s);
}

/*
 * signalling-unbalanced: the outer section closed before the inner one.
 * Both are closed after the report: a lock afterwards is not reported.
 */
static void case_signalling_unbalanced(struct expect *e, int unused)
{
	unsigned int outer, inner;
	struct ww_mutex m;

	(void)unused;
	outer = ttm_fence_begin_signalling();
	inner = ttm_fence_begin_signalling();
	CHECK_INT(outer, 1);
	CHECK_INT(inner, 2);
	e->sections = 2;
	OFFEND(e, NULL, NULL, ttm_fence_end_signalling(outer));
	ttm_fence_end_signalling(0); /* a section never counted: nothing */
	ww_mutex_init(&m, &debug_test_class);
	CHECK_INT(ww_mutex_lock(&m, NULL), 0);
	ww_mutex_unlock(&m);
	ww_mutex_destroy(&m);
	(void)inner;
}

/*
 * The deadlock the rule is for: this thread holds a buffer's reservation
 * and waits for a GPU job's fence, whose callback, run by the engine's
 * worker thread as the job retires, reserves that buffer. Without the
 * checker both threads wait for ever. The job waits for a gate signalled
 * once the callback is in place, so that the callback cannot miss it.
 */
struct sig_cb {
	struct ttm_fence_cb cb;
	struct ttm_bo *bo;
	struct expect *e;
	int ret, done; /* atomic */
};

static void sig_cb_reserve(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct sig_cb *c = container_of(cb, struct sig_cb, cb);
	struct ww_mutex *l = &ttm_bo_resv(c->bo)->lock;
	int ret;

	(void)fence;
	/* The engine's retire, and the fence's callbacks inside it. */
	c->e->sections = 2;
	ret = OFFEND(c->e, l, NULL, ttm_bo_reserve(c->bo, false, false, NULL));
	if (ret == 0)
		ttm_bo_unreserve(c->bo);
	__atomic_store_n(&c->ret, ret, __ATOMIC_RELAXED);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

static void case_signalling_callback(struct expect *e, int unused)
{
	struct sig_cb c = { .e = e, .done = 0 };
	struct ttm_fence *gate, *fence = NULL;
	struct ttm_gpu_dep dep;
	struct ttm_gpu_job job = { .engine = 0, .n_deps = 1, .deps = &dep };
	struct ttm_gpu *gpu;
	struct sig_dev s;

	(void)unused;
	if (!sig_dev_init(&s, e))
		return;
	c.bo = s.bo;
	if (!CHECK_INT(ttm_gpu_create(1, NULL, &gpu), 0) ||
	    !CHECK_INT(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					&gate), 0))
		goto out_dev;
	dep = (struct ttm_gpu_dep){ .fence = gate };
	if (!CHECK_INT(ttm_gpu_submit(gpu, &job, &fence), 0)) {
		ttm_fence_put(gate);
		goto out_gpu;
	}
	CHECK_INT(ttm_fence_add_callback(fence, &c.cb, sig_cb_reserve), 0);
	CHECK_INT(ttm_bo_reserve(s.bo, false, false, NULL), 0);
	CHECK_INT(ttm_fence_signal(gate, 0), 0);
	/*
	 * The callback's end first, bounded: without the checker it never
	 * comes, and a wait for the fence would hang (the fence's waiters
	 * run after its callbacks). Then the holder's wait for the fence,
	 * which now returns.
	 */
	if (CHECK(wait_for_int(&c.done, 1)))
		CHECK_INT(ttm_fence_wait(fence, false, -1), 0);
	ttm_bo_unreserve(s.bo);
	CHECK_INT(ttm_fence_wait(fence, false, -1), 0);
	CHECK_INT(__atomic_load_n(&c.ret, __ATOMIC_RELAXED), -EINVAL);
	ttm_fence_put(fence);
	ttm_fence_put(gate);
out_gpu:
	ttm_gpu_destroy(gpu);
out_dev:
	sig_dev_fini(&s);
}

struct violation {
	const char *name;
	enum ww_debug_rule rule;
	unsigned int number;  /* rule_number: the rule of docs/ww-debug.md */
	const char *tag;      /* its short name */
	const char *call;     /* the API call the report names */
	struct ww_class *cls; /* the class it names, NULL for none */
	void (*run)(struct expect *e, int variant);
	int variant;
	bool no_caller;       /* the call has no caller-site macro */
};

#define WD (&debug_test_class)

static const struct violation violations[] = {
	{ "null_ctx_nested", WW_DEBUG_NULL_CTX_NESTED, 1, "null-ctx-nested",
	  "ww_mutex_lock", WD, case_null_ctx_nested, LOCK },
	{ "null_ctx_nested/ctx_open", WW_DEBUG_NULL_CTX_NESTED, 1,
	  "null-ctx-nested", "ww_mutex_lock_interruptible", WD,
	  case_null_ctx_nested, LOCK_INTR },
	{ "ctx_after_null", WW_DEBUG_CTX_AFTER_NULL, 1, "ctx-after-null",
	  "ww_mutex_lock", WD, case_ctx_after_null, 0 },
	{ "ctx_nested", WW_DEBUG_CTX_NESTED, 2, "ctx-nested",
	  "ww_acquire_init", WD, case_ctx_nested, 0 },
	{ "lock_after_done", WW_DEBUG_LOCK_AFTER_DONE, 3, "lock-after-done",
	  "ww_mutex_lock", WD, case_lock_after_done, LOCK },
	{ "lock_after_done/trylock", WW_DEBUG_LOCK_AFTER_DONE, 3,
	  "lock-after-done", "ww_mutex_trylock", WD, case_lock_after_done,
	  TRYLOCK },
	{ "done_twice", WW_DEBUG_DONE_TWICE, 3, "done-twice",
	  "ww_acquire_done", WD, case_done_twice, 0 },
	{ "fini_held", WW_DEBUG_FINI_HELD, 4, "fini-held",
	  "ww_acquire_fini", WD, case_fini_held, 0 },
	{ "fini_twice", WW_DEBUG_FINI_TWICE, 4, "fini-twice",
	  "ww_acquire_fini", WD, case_fini_twice, 0 },
	{ "ctx_dead", WW_DEBUG_CTX_DEAD, 4, "ctx-dead",
	  "ww_mutex_lock", WD, case_ctx_dead, 0 },
	{ "ctx_dead/never_init", WW_DEBUG_CTX_DEAD, 4, "ctx-dead",
	  "ww_mutex_lock", WD, case_ctx_dead, 1 },
	{ "ctx_thread", WW_DEBUG_CTX_THREAD, 4, "ctx-thread",
	  "ww_mutex_lock", WD, case_ctx_thread, 0 },
	{ "ctx_thread/fini", WW_DEBUG_CTX_THREAD, 4, "ctx-thread",
	  "ww_acquire_fini", WD, case_ctx_thread, 1 },
	{ "class_mismatch", WW_DEBUG_CLASS_MISMATCH, 5, "class-mismatch",
	  "ww_mutex_lock", &debug_other_class, case_class_mismatch, 0 },
	{ "slow_no_deadlk", WW_DEBUG_SLOW_NO_DEADLK, 6, "slow-without-edeadlk",
	  "ww_mutex_lock_slow", WD, case_slow_no_deadlk, SLOW_FRESH },
	{ "slow_no_deadlk/null_ctx", WW_DEBUG_SLOW_NO_DEADLK, 6,
	  "slow-without-edeadlk", "ww_mutex_lock_slow", WD,
	  case_slow_no_deadlk, SLOW_NULL_CTX },
	{ "slow_no_deadlk/again", WW_DEBUG_SLOW_NO_DEADLK, 6,
	  "slow-without-edeadlk", "ww_mutex_lock_slow_interruptible", WD,
	  case_slow_no_deadlk, SLOW_AGAIN },
	{ "slow_wrong_lock", WW_DEBUG_SLOW_WRONG_LOCK, 6, "slow-wrong-lock",
	  "ww_mutex_lock_slow", WD, case_not_contended, SLOW },
	{ "slow_held", WW_DEBUG_SLOW_HELD, 6, "slow-held",
	  "ww_mutex_lock_slow", WD, case_slow_held, 0 },
	{ "not_contended", WW_DEBUG_NOT_CONTENDED, 7, "not-contended",
	  "ww_mutex_lock", WD, case_not_contended, LOCK },
	{ "not_contended/trylock", WW_DEBUG_NOT_CONTENDED, 7, "not-contended",
	  "ww_mutex_trylock", WD, case_not_contended, TRYLOCK },
	{ "unlock_unlocked", WW_DEBUG_UNLOCK_UNLOCKED, 8, "unlock-unlocked",
	  "ww_mutex_unlock", WD, case_unlock_unlocked, 0 },
	{ "unlock_unlocked/twice", WW_DEBUG_UNLOCK_UNLOCKED, 8,
	  "unlock-unlocked", "ww_mutex_unlock", WD, case_unlock_unlocked, 1 },
	{ "unlock_foreign", WW_DEBUG_UNLOCK_FOREIGN, 8, "unlock-foreign",
	  "ww_mutex_unlock", WD, case_unlock_foreign, 0 },
	{ "destroy_locked", WW_DEBUG_DESTROY_LOCKED, 9, "destroy-locked",
	  "ww_mutex_destroy", WD, case_destroy_locked, 0 },
	{ "lock_uninit", WW_DEBUG_LOCK_UNINIT, 9, "lock-uninit",
	  "ww_mutex_lock", WD, case_bad_lock, BAD_UNINIT },
	{ "lock_uninit/no_ctx", WW_DEBUG_LOCK_UNINIT, 9, "lock-uninit",
	  "ww_mutex_trylock", NULL, case_bad_lock, BAD_UNINIT_NOCTX },
	{ "lock_destroyed", WW_DEBUG_LOCK_DESTROYED, 9, "lock-destroyed",
	  "ww_mutex_lock", WD, case_bad_lock, BAD_DESTROYED },
	{ "exit_held", WW_DEBUG_EXIT_HELD, 10, "exit-held",
	  "thread exit", WD, case_thread_exit, 0 },
	{ "exit_held/ctx", WW_DEBUG_EXIT_HELD, 10, "exit-held",
	  "thread exit", WD, case_thread_exit, 1 },
	{ "exit_ctx", WW_DEBUG_EXIT_CTX, 10, "exit-ctx",
	  "thread exit", WD, case_thread_exit, 2 },
	{ "signalling_lock", WW_DEBUG_SIGNALLING_LOCK, 13, "signalling-lock",
	  "ww_mutex_lock", WD, case_signalling_lock, SIG_LOCK },
	{ "signalling_lock/ctx_nested", WW_DEBUG_SIGNALLING_LOCK, 13,
	  "signalling-lock", "ww_mutex_lock_interruptible", WD,
	  case_signalling_lock, SIG_LOCK_CTX },
	{ "signalling_lock/reserve", WW_DEBUG_SIGNALLING_LOCK, 13,
	  "signalling-lock", "ww_mutex_lock_interruptible", NULL,
	  case_signalling_reserve, 0 },
	{ "signalling_lock/engine_callback", WW_DEBUG_SIGNALLING_LOCK, 13,
	  "signalling-lock", "ww_mutex_lock", NULL,
	  case_signalling_callback, 0 },
	{ "signalling_wait", WW_DEBUG_SIGNALLING_WAIT, 13, "signalling-wait",
	  "ttm_fence_wait", NULL, case_signalling_wait, SIG_WAIT_FENCE,
	  true },
	{ "signalling_wait/resv", WW_DEBUG_SIGNALLING_WAIT, 13,
	  "signalling-wait", "ttm_resv_wait", NULL, case_signalling_wait,
	  SIG_WAIT_RESV, true },
	{ "signalling_wait/any", WW_DEBUG_SIGNALLING_WAIT, 13,
	  "signalling-wait", "ttm_fence_wait_any", NULL, case_signalling_wait,
	  SIG_WAIT_ANY, true },
	{ "signalling_wait/rcu_barrier", WW_DEBUG_SIGNALLING_WAIT, 13,
	  "signalling-wait", "ttm_fence_rcu_barrier", NULL,
	  case_signalling_wait, SIG_WAIT_RCU, true },
	{ "signalling_alloc", WW_DEBUG_SIGNALLING_ALLOC, 13,
	  "signalling-alloc", "ttm_bo_validate", NULL, case_signalling_alloc,
	  SIG_ALLOC_VALIDATE },
	{ "signalling_alloc/create", WW_DEBUG_SIGNALLING_ALLOC, 13,
	  "signalling-alloc", "ttm_bo_create", NULL, case_signalling_alloc,
	  SIG_ALLOC_CREATE, true },
	{ "signalling_unbalanced", WW_DEBUG_SIGNALLING_UNBALANCED, 13,
	  "signalling-unbalanced", "ttm_fence_end_signalling", NULL,
	  case_signalling_unbalanced, 0, true },
};

/* ---- correct usage ---------------------------------------------------- */

static int act_trylock_noctx(struct actor *a, void *lock)
{
	(void)a;
	return ww_mutex_trylock(lock, NULL);
}

static int act_done(struct actor *a, void *arg)
{
	(void)arg;
	ww_acquire_done(&a->ctx);
	return 0;
}

/*
 * A real -EDEADLK: an older context O holds a, a younger Y holds b and
 * asks for a. Wait-Die: Y dies at once. Wound-Wait: O first asks for b,
 * wounding Y, which backs off at its next contended lock. Y then backs
 * off by the book, with the things allowed on the way: -EALREADY and
 * trylocks of the lock it holds (test-ww_mutex's patterns), a slow lock
 * interrupted (the -EDEADLK stays pending) and retried.
 */
static void ctl_backoff_cycle(struct ww_class *cls)
{
	struct ww_mutex a, b;
	struct actor o, y;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	actor_start(&o, cls);
	actor_start(&y, cls);
	actor_run(&o, act_init, NULL); /* first: the older stamp */
	actor_run(&y, act_init, NULL);
	CHECK_INT(actor_run(&o, act_lock, &a), 0);
	CHECK_INT(actor_run(&y, act_lock, &b), 0);
	if (!is_wait_die(cls)) {
		actor_post(&o, act_lock, &b);
		CHECK(wait_for_waiters(&b, 1));
	}
	CHECK_INT(actor_run(&y, act_lock, &a), -EDEADLK);
	CHECK_INT(actor_run(&y, act_lock, &b), -EALREADY);
	CHECK_INT(actor_run(&y, act_trylock, &b), 0);
	CHECK_INT(actor_run(&y, act_trylock_noctx, &b), 0);
	actor_run(&y, act_unlock, &b);
	if (is_wait_die(cls))
		CHECK_INT(actor_run(&o, act_lock, &b), 0);
	else if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);

	actor_post(&y, act_lock_slow_intr, &a);
	CHECK(wait_for_waiters(&a, 1));
	CHECK_INT(ttm_interrupt_thread(y.thread), 0);
	if (CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), -EINTR);
	actor_post(&y, act_lock_slow, &a);
	CHECK(wait_for_waiters(&a, 1));

	actor_run(&o, act_done, NULL);
	actor_run(&o, act_unlock, &a);
	actor_run(&o, act_unlock, &b);
	actor_run(&o, act_fini, NULL);
	if (CHECK(actor_wait(&y)))
		CHECK_INT(actor_ret(&y), 0);
	CHECK_INT(actor_run(&y, act_lock, &b), 0);
	actor_run(&y, act_done, NULL);
	actor_run(&y, act_unlock, &a);
	actor_run(&y, act_unlock, &b);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
}

/* One thread, one class: what the rules allow around them. */
static void ctl_one_thread(struct ww_class *cls)
{
	struct fix f;

	fix_init(&f, cls);
	/* test-ww_mutex's AA: nothing taken twice, nothing reported. */
	ww_acquire_init(&f.ctx, cls);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), 0);
	CHECK_INT(ww_mutex_trylock(&f.a, NULL), 0);
	CHECK_INT(ww_mutex_trylock(&f.a, &f.ctx), 0);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), -EALREADY);
	CHECK_INT(ww_mutex_lock_interruptible(&f.a, &f.ctx), -EALREADY);
	/* Rule 1 is about blocking: a plain trylock cannot deadlock. */
	CHECK_INT(ww_mutex_trylock(&f.b, NULL), 1);
	CHECK_INT(ww_mutex_trylock(&f.c, &f.ctx), 1);
	ww_mutex_unlock(&f.b);
	ww_acquire_done(&f.ctx);
	ww_mutex_unlock(&f.c);
	ww_mutex_unlock(&f.a);
	ww_acquire_fini(&f.ctx);

	/*
	 * After -EDEADLK: -EALREADY and trylock of a held lock take nothing;
	 * the contended lock may be taken by ww_mutex_lock() too.
	 */
	fix_deadlk(&f, cls);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), -EALREADY);
	CHECK_INT(ww_mutex_trylock(&f.a, &f.ctx), 0);
	ww_mutex_unlock(&f.a);
	CHECK_INT(ww_mutex_lock(&f.b, &f.ctx), 0);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), 0);
	ww_mutex_unlock(&f.a);
	ww_mutex_unlock(&f.b);
	ww_acquire_fini(&f.ctx);

	/* Or give up: finish the context, start a new one. */
	fix_deadlk(&f, cls);
	ww_mutex_unlock(&f.a);
	ww_acquire_fini(&f.ctx);
	ww_acquire_init(&f.ctx, cls);
	CHECK_INT(ww_mutex_lock(&f.c, &f.ctx), 0);
	ww_mutex_unlock(&f.c);
	ww_acquire_fini(&f.ctx);

	/* A destroyed mutex may be initialised again. */
	ww_mutex_destroy(&f.c);
	ww_mutex_init(&f.c, cls);
	CHECK_INT(ww_mutex_lock(&f.c, NULL), 0);
	ww_mutex_unlock(&f.c);
	ww_mutex_destroy(&f.a);
	ww_mutex_destroy(&f.b);
	ww_mutex_destroy(&f.c);
}

/* Rules 1 and 2 are per class: other classes may mix and nest. */
static void ctl_classes(struct ww_class *cls)
{
	struct ww_class *other = cls == &debug_test_class ?
		&debug_other_class : &debug_test_class;
	struct fix f, g;

	fix_init(&f, cls);
	fix_init(&g, other);
	ww_acquire_init(&f.ctx, cls);
	CHECK_INT(ww_mutex_lock(&f.a, &f.ctx), 0);
	/* A plain lock of another class under a context ... */
	CHECK_INT(ww_mutex_lock(&g.a, NULL), 0);
	/* ... and a context's lock while holding that plain lock. */
	CHECK_INT(ww_mutex_lock(&f.b, &f.ctx), 0);
	ww_mutex_unlock(&g.a);

	/* Nested contexts, finished in any order. */
	ww_acquire_init(&g.ctx, other);
	CHECK_INT(ww_mutex_lock(&g.a, &g.ctx), 0);
	CHECK_INT(ww_mutex_lock_interruptible(&g.b, &g.ctx), 0);
	ww_acquire_done(&g.ctx);
	ww_acquire_done(&f.ctx);
	ww_mutex_unlock(&f.a);
	ww_mutex_unlock(&g.b);
	ww_mutex_unlock(&f.b);
	ww_acquire_fini(&f.ctx);
	ww_mutex_unlock(&g.a);
	ww_acquire_fini(&g.ctx);
}

struct control {
	const char *name;
	void (*run)(struct ww_class *cls);
	struct ww_class *cls;
};

static const struct control controls[] = {
	{ "backoff_cycle", ctl_backoff_cycle, &debug_test_class },
	{ "backoff_cycle", ctl_backoff_cycle, &debug_other_class },
	{ "one_thread", ctl_one_thread, &debug_test_class },
	{ "one_thread", ctl_one_thread, &debug_other_class },
	{ "classes", ctl_classes, &debug_test_class },
	{ "classes", ctl_classes, &debug_other_class },
};

/* A violation or a control case, with what a violation must report. */
struct job {
	const struct violation *v;
	const struct control *ctl;
	struct expect *e;
};

static void job_run(const struct job *j)
{
	if (j->v)
		j->v->run(j->e, j->v->variant);
	else
		j->ctl->run(j->ctl->cls);
}

/* ---- reports ---------------------------------------------------------- */

/* What a report said: from the handler, or parsed from stderr. */
struct seen {
	unsigned int count;
	enum ww_debug_rule rule; /* handler only */
	unsigned int number;
	char tag[32], call[48], cls[64], file[256];
	int line;
	uintptr_t lock, ctx, object;
	unsigned long sections; /* rule 13's count */
};

static struct {
	pthread_mutex_t mutex;
	unsigned int expected; /* reports to take quietly; others printed */
	struct seen seen;      /* the count, and the first report */
} watch = { .mutex = PTHREAD_MUTEX_INITIALIZER };

/* Runs in the offending thread, which may be any. */
static void count_report(const struct ww_debug_report *r, void *data)
{
	struct seen *s = &watch.seen;

	(void)data;
	CHECK(r->what && *r->what);
	pthread_mutex_lock(&watch.mutex);
	if (s->count++ == 0) {
		s->rule = r->rule;
		s->number = r->rule_number;
		snprintf(s->tag, sizeof(s->tag), "%s", r->name);
		snprintf(s->call, sizeof(s->call), "%s", r->call);
		snprintf(s->cls, sizeof(s->cls), "%s",
			 r->class_name ? r->class_name : NO_CLASS);
		snprintf(s->file, sizeof(s->file), "%s",
			 r->file ? r->file : "");
		s->line = r->line;
		s->lock = (uintptr_t)r->lock;
		s->ctx = (uintptr_t)r->ctx;
		s->object = (uintptr_t)r->object;
		if (r->rule_number == 13)
			s->sections = r->count;
	}
	if (s->count > watch.expected)
		ww_debug_print_report(r, STDERR_FILENO);
	pthread_mutex_unlock(&watch.mutex);
}

static void watch_start(unsigned int expected)
{
	pthread_mutex_lock(&watch.mutex);
	memset(&watch.seen, 0, sizeof(watch.seen));
	watch.expected = expected;
	pthread_mutex_unlock(&watch.mutex);
	ww_debug_set_handler(count_report, NULL);
}

static void watch_stop(struct seen *s)
{
	ww_debug_set_handler(NULL, NULL);
	pthread_mutex_lock(&watch.mutex);
	*s = watch.seen;
	pthread_mutex_unlock(&watch.mutex);
}

static void check_str(const char *what, const char *got, const char *want)
{
	CHECK_MSG(!strcmp(got, want), "%s: \"%s\", expected \"%s\"", what,
		  got, want);
}

/* Exactly one report, saying what @v and @e say it must. */
static void check_report(const struct violation *v, const struct expect *e,
			 const struct seen *s)
{
	CHECK_INT(s->count, 1);
	CHECK_MSG(e->line > 0, "the case never reached its OFFEND()");
	CHECK_INT(s->number, v->number);
	check_str("tag", s->tag, v->tag);
	check_str("call", s->call, v->call);
	check_str("class", s->cls, e->cls[0] ? e->cls :
			 v->cls ? v->cls->name : NO_CLASS);
	/* Without a caller-site macro the report names no file:line. */
	check_str("file", s->file, v->no_caller ? "" : __FILE__);
	CHECK_INT(s->line, v->no_caller ? 0 : e->line);
	CHECK_MSG(s->object == e->object, "object %#lx, expected %#lx",
		  (unsigned long)s->object, (unsigned long)e->object);
	CHECK_INT(s->sections, e->sections);
	CHECK_MSG(s->lock == e->lock, "lock %#lx, expected %#lx",
		  (unsigned long)s->lock, (unsigned long)e->lock);
	CHECK_MSG(s->ctx == e->ctx, "ctx %#lx, expected %#lx",
		  (unsigned long)s->ctx, (unsigned long)e->ctx);
}

#define REPORT_HEAD "==== ttmsim ww_debug: rule "
#define REPORT_TAIL "==== end of ww_debug report ====\n"

/*
 * The child's stderr must hold the report and nothing else: no failed
 * check before the offending call, no sanitizer warning.
 */
static void check_only_report(const char *out)
{
	size_t len = strlen(out), tail = strlen(REPORT_TAIL);

	CHECK_MSG(!strncmp(out, "\n" REPORT_HEAD, strlen(REPORT_HEAD) + 1) &&
		  len >= tail && !strcmp(out + len - tail, REPORT_TAIL),
		  "stderr holds more than the report");
}

/* The value of the report line "  @key  value", or NULL. */
static const char *report_field(const char *out, const char *key)
{
	char needle[32];
	const char *p;

	snprintf(needle, sizeof(needle), "\n  %s", key);
	p = strstr(out, needle);
	if (!p)
		return NULL;
	p += strlen(needle);
	while (*p == ' ')
		p++;
	return p;
}

/* Read the default handler's report block from @out into @s. */
static void parse_report(const char *out, struct seen *s)
{
	const char *p = out;
	void *ptr;

	memset(s, 0, sizeof(*s));
	while ((p = strstr(p, REPORT_HEAD))) {
		s->count++;
		p++;
	}
	p = strstr(out, REPORT_HEAD);
	if (p)
		sscanf(p + strlen(REPORT_HEAD), "%u broken (%31[^)])",
		       &s->number, s->tag);
	p = report_field(out, "call:");
	if (p)
		sscanf(p, "%47[^(]() at %255[^:\n]:%d", s->call, s->file,
		       &s->line);
	p = report_field(out, "class:");
	if (p)
		sscanf(p, "%63s", s->cls);
	p = report_field(out, "lock:");
	if (p && sscanf(p, "%p", &ptr) == 1)
		s->lock = (uintptr_t)ptr;
	p = report_field(out, "ctx:");
	if (p && strncmp(p, "none", 4) && sscanf(p, "%p", &ptr) == 1)
		s->ctx = (uintptr_t)ptr;
	p = report_field(out, "on:");
	if (p && sscanf(p, "%p", &ptr) == 1)
		s->object = (uintptr_t)ptr;
	p = report_field(out, "sections:");
	if (p)
		sscanf(p, "%lu", &s->sections);
}

/* ---- running a case in a child process --------------------------------- */

#define CHILD_LIMIT_S 10
#define CHILD_OUT_MAX 65536

struct child {
	int status;
	bool timed_out;
	size_t len;
	char out[CHILD_OUT_MAX]; /* its stderr, truncated, NUL-terminated */
};

/* ThreadSanitizer runs a thread of its own once a first thread started. */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define HELPER_THREADS 1
#else
#define HELPER_THREADS 0
#endif

static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int n = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/*
 * Fork only from a single thread: a thread that runs at fork time may
 * hold a lock (malloc's, stdio's) the child would then never see released.
 * The threads of earlier tests are joined, but may take a moment to leave
 * the kernel's count.
 */
static bool single_threaded(void)
{
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;

	while (thread_count() > 1 + HELPER_THREADS) {
		if (now_ns() > limit)
			return false;
		sched_yield();
	}
	return true;
}

static __attribute__((noreturn)) void child_main(int fd, const struct job *j)
{
	static const int sigs[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	const struct rlimit no_core = { 0, 0 };
	size_t i;

	/* Die of the signal itself, not in cmocka's handlers; no core. */
	for (i = 0; i < N_ELEMS(sigs); i++)
		signal(sigs[i], SIG_DFL);
	setrlimit(RLIMIT_CORE, &no_core);
	prctl(PR_SET_DUMPABLE, 0); /* also for a piped core_pattern */
	if (dup2(fd, STDERR_FILENO) < 0)
		_exit(3);
	close(fd);
	ww_debug_set_handler(NULL, NULL);
	checks_reset(NULL);
	job_run(j);
	/* Never return to cmocka: the parent runs the other tests. */
	_exit(checks_failed_count() ? 2 : 0);
}

/* Read the child's stderr until it closes, for at most CHILD_LIMIT_S. */
static void collect(int fd, pid_t pid, struct child *c)
{
	long limit = now_ns() + CHILD_LIMIT_S * 1000000000L;
	char buf[4096];

	c->len = 0;
	c->timed_out = true;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left_ms = (limit - now_ns()) / 1000000;
		ssize_t n;
		size_t keep;

		if (left_ms <= 0)
			break;
		if (poll(&p, 1, (int)left_ms) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->timed_out = false;
			break;
		}
		keep = sizeof(c->out) - 1 - c->len;
		if (keep > (size_t)n)
			keep = (size_t)n;
		memcpy(c->out + c->len, buf, keep);
		c->len += keep;
	}
	c->out[c->len] = '\0';
	close(fd);
	if (c->timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
		;
}

/* Run @j in a child with the default handler; @c gets how it ended. */
static void run_forked(const struct job *j, struct child *c)
{
	int fds[2];
	pid_t pid;

	assert_true(single_threaded());
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1], j);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		fail_msg("fork: %s", strerror(errno));
	}
	collect(fds[0], pid, c);
	CHECK_MSG(!c->timed_out, "child still running after %d s: killed",
		  CHILD_LIMIT_S);
}

/* Fail the test if any check failed, showing what the child said. */
static void assert_child_checks(const struct child *c)
{
	unsigned int failed;

	failed = checks_failed_count();
	if (failed)
		fprintf(stderr, "---- the child's stderr ----\n%s"
			"---- end of the child's stderr ----\n", c->out);
	assert_checks_passed();
}

/* Shared with the child, which may die at any point. */
static struct expect *expect_shared(void)
{
	void *p = mmap(NULL, sizeof(struct expect), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0, sizeof(struct expect));
	return p;
}

/* ---- tests ------------------------------------------------------------ */

static void require_checker(void)
{
	if (ww_debug_set_enabled(true) == -EOPNOTSUPP)
		skip();
}

static void test_violation_handled(void **state)
{
	const struct violation *v = *state;
	struct expect e = { 0 };
	struct job j = { .v = v, .e = &e };
	struct seen s;

	require_checker();
	watch_start(1);
	job_run(&j);
	watch_stop(&s);
	CHECK_INT(s.rule, v->rule);
	check_report(v, &e, &s);
	assert_checks_passed();
}

static void test_violation_forked(void **state)
{
	const struct violation *v = *state;
	static struct child c;
	struct expect *shared, e;
	struct job j = { .v = v };
	struct seen s;

	require_checker();
	j.e = shared = expect_shared();
	run_forked(&j, &c);
	e = *shared;
	munmap(shared, sizeof(*shared));
	CHECK_MSG(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT,
		  "child did not abort: wait status %#x", c.status);
	parse_report(c.out, &s);
	check_report(v, &e, &s);
	check_only_report(c.out);
	assert_child_checks(&c);
}

static void test_control_handled(void **state)
{
	struct job j = { .ctl = *state };
	struct seen s;

	require_checker();
	watch_start(0);
	job_run(&j);
	watch_stop(&s);
	CHECK_INT(s.count, 0);
	assert_checks_passed();
}

static void test_control_forked(void **state)
{
	struct job j = { .ctl = *state };
	static struct child c;

	require_checker();
	run_forked(&j, &c);
	CHECK_MSG(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0,
		  "child failed: wait status %#x", c.status);
	CHECK_MSG(!strstr(c.out, "ww_debug"), "the child reported something");
	assert_child_checks(&c);
}

#define SCALE_THREADS 8
#define SCALE_LOCKS 24
#define SCALE_PER_TX 5
#define SCALE_TX 1000

struct scale {
	struct ww_class *cls;
	struct ww_mutex lock[SCALE_LOCKS];
	unsigned long counter[SCALE_LOCKS]; /* under lock[i] */
	pthread_barrier_t go;
	int finished;                       /* workers; atomic */
	bool stop;                          /* atomic: give up */
};

struct scale_worker {
	struct scale *s;
	pthread_t thread;
	unsigned int seed;
	bool finished;                      /* atomic */
	unsigned long done[SCALE_LOCKS];
	unsigned long backoffs;
};

/* Pick SCALE_PER_TX distinct locks in random order (partial shuffle). */
static void scale_pick(struct scale_worker *w, unsigned int *idx,
		       struct ww_mutex **list)
{
	unsigned int i, j, t;

	for (i = 0; i < SCALE_PER_TX; i++) {
		j = i + (unsigned int)rand_r(&w->seed) % (SCALE_LOCKS - i);
		t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		list[i] = &w->s->lock[idx[i]];
	}
}

/* Now and then a lone lock without a context, nothing else held. */
static bool scale_plain(struct scale_worker *w, unsigned int l)
{
	struct ww_mutex *m = &w->s->lock[l];

	if (!CHECK_INT(ww_mutex_lock_interruptible(m, NULL), 0))
		return false;
	w->s->counter[l]++;
	w->done[l]++;
	ww_mutex_unlock(m);
	return true;
}

static bool scale_stopped(struct scale *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/*
 * Every wait is interruptible: a checker that wrongly refused an unlock
 * leaves a lock held for good, and the test must then fail, not hang.
 */
static void *scale_main(void *arg)
{
	struct scale_worker *w = arg;
	struct scale *s = w->s;
	struct ww_mutex *list[SCALE_PER_TX];
	unsigned int idx[SCALE_LOCKS], i, t;
	struct ww_acquire_ctx ctx;
	int ret;

	for (i = 0; i < SCALE_LOCKS; i++)
		idx[i] = i;
	pthread_barrier_wait(&s->go);
	for (t = 0; t < SCALE_TX && !scale_stopped(s); t++) {
		scale_pick(w, idx, list);
		ww_acquire_init(&ctx, s->cls);
		ret = lock_list(list, SCALE_PER_TX, 0, &ctx, true);
		if (!CHECK_MSG(ret >= 0, "lock_list: %d", ret)) {
			ww_acquire_fini(&ctx);
			break;
		}
		w->backoffs += (unsigned long)ret;
		ww_acquire_done(&ctx);
		for (i = 0; i < SCALE_PER_TX; i++) {
			s->counter[idx[i]]++;
			w->done[idx[i]]++;
		}
		/* Unlock order does not matter: alternate it. */
		if (t & 1) {
			unlock_list(list, SCALE_PER_TX);
		} else {
			for (i = 0; i < SCALE_PER_TX; i++)
				ww_mutex_unlock(list[i]);
		}
		ww_acquire_fini(&ctx);
		if (t % 8 == 0 && !scale_plain(w, idx[0]))
			break;
	}
	__atomic_store_n(&w->finished, true, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Wait, bounded, for the workers to finish; if they do not, interrupt
 * them until they give up. False if they had to be interrupted.
 */
static bool scale_wait(struct scale *s, struct scale_worker *w)
{
	unsigned int i;
	long limit;

	if (wait_for_int(&s->finished, SCALE_THREADS))
		return true;
	limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	while (__atomic_load_n(&s->finished, __ATOMIC_ACQUIRE) <
	       SCALE_THREADS) {
		if (now_ns() > limit) {
			/* Unjoinable: they would disturb the next tests. */
			fprintf(stderr, "scale workers stuck: aborting\n");
			abort();
		}
		for (i = 0; i < SCALE_THREADS; i++)
			if (!__atomic_load_n(&w[i].finished, __ATOMIC_RELAXED))
				ttm_interrupt_thread(w[i].thread);
		sched_yield();
	}
	return false;
}

/* 8 threads, random overlapping sets, back-offs: no report, no lost count. */
static void test_scale_threads(void **state)
{
	struct ww_class *cls = *state;
	static struct scale s;
	static struct scale_worker w[SCALE_THREADS];
	unsigned long backoffs = 0, sum;
	struct seen seen;
	unsigned int i, l;

	require_checker();
	memset(&s, 0, sizeof(s));
	memset(w, 0, sizeof(w));
	s.cls = cls;
	for (l = 0; l < SCALE_LOCKS; l++)
		ww_mutex_init(&s.lock[l], cls);
	assert_int_equal(pthread_barrier_init(&s.go, NULL, SCALE_THREADS), 0);
	watch_start(0);
	for (i = 0; i < SCALE_THREADS; i++) {
		w[i].s = &s;
		w[i].seed = 1000 + i;
		w[i].thread = start_thread(scale_main, &w[i]);
	}
	CHECK_MSG(scale_wait(&s, w), "workers stuck: interrupted");
	for (i = 0; i < SCALE_THREADS; i++) {
		join_thread(w[i].thread);
		backoffs += w[i].backoffs;
	}
	watch_stop(&seen);
	pthread_barrier_destroy(&s.go);
	print_message("%s: %lu back-offs\n", cls->name, backoffs);
	assert_int_equal(seen.count, 0);
	assert_checks_passed();
	for (l = 0; l < SCALE_LOCKS; l++) {
		for (sum = 0, i = 0; i < SCALE_THREADS; i++)
			sum += w[i].done[l];
		assert_int_equal(s.counter[l], sum);
		assert_false(ww_mutex_is_locked(&s.lock[l]));
	}
}

#define BIG_CTX 5000
/*
 * Locks side by side hash to distinct slots of the checker's table:
 * spread them over a pool four times larger, so that their slots collide.
 */
#define BIG_POOL (4 * BIG_CTX)

static void shuffle(unsigned int *a, unsigned int n, unsigned int *seed)
{
	unsigned int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = (unsigned int)rand_r(seed) % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/*
 * One context holding 5000 locks, taken and released in random orders:
 * the checker's table of held locks grows and shrinks without losing one.
 */
static void test_scale_one_ctx(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex *pool = calloc(BIG_POOL, sizeof(*pool));
	unsigned int *pick = calloc(BIG_POOL, sizeof(*pick));
	unsigned int seed = 5000, i, wrong = 0, still_locked = 0;
	struct ww_acquire_ctx ctx;
	struct seen s;

	require_checker();
	assert_non_null(pool);
	assert_non_null(pick);
	for (i = 0; i < BIG_POOL; i++) {
		ww_mutex_init(&pool[i], cls);
		pick[i] = i;
	}
	watch_start(0);
	ww_acquire_init(&ctx, cls);
	/* pick[0..BIG_CTX - 1]: the locks to hold, in the order taken. */
	shuffle(pick, BIG_POOL, &seed);
	for (i = 0; i < BIG_CTX; i++)
		wrong += ww_mutex_lock(&pool[pick[i]], &ctx) != 0;
	for (i = 0; i < BIG_CTX; i += 97) {
		wrong += ww_mutex_lock(&pool[pick[i]], &ctx) != -EALREADY;
		wrong += ww_mutex_trylock(&pool[pick[i]], &ctx) != 0;
	}
	ww_acquire_done(&ctx);
	shuffle(pick, BIG_CTX, &seed);
	for (i = 0; i < BIG_CTX; i++)
		ww_mutex_unlock(&pool[pick[i]]);
	ww_acquire_fini(&ctx);
	watch_stop(&s);
	for (i = 0; i < BIG_POOL; i++) {
		if (ww_mutex_is_locked(&pool[i]))
			still_locked++; /* destroying it would abort */
		else
			ww_mutex_destroy(&pool[i]);
	}
	free(pool);
	free(pick);
	assert_int_equal(s.count, 0);
	assert_int_equal(wrong, 0);
	assert_int_equal(still_locked, 0);
}

/*
 * Off, rules 2 and 3 are broken unseen; on again, the same slip is seen
 * (so that the first half could fail).
 */
static void test_runtime_switch(void **state)
{
	struct ww_acquire_ctx first, second;
	struct seen s;

	(void)state;
	require_checker();
	assert_true(ww_debug_enabled());
	watch_start(0);
	assert_int_equal(ww_debug_set_enabled(false), 0);
	assert_false(ww_debug_enabled());
	ww_acquire_init(&first, &debug_test_class);
	ww_acquire_init(&second, &debug_test_class);
	ww_acquire_done(&second);
	ww_acquire_done(&second);
	ww_acquire_fini(&second);
	ww_acquire_fini(&first);
	assert_int_equal(ww_debug_set_enabled(true), 0);
	assert_true(ww_debug_enabled());
	watch_stop(&s);
	assert_int_equal(s.count, 0);

	watch_start(1);
	ww_acquire_init(&first, &debug_test_class);
	ww_acquire_done(&first);
	ww_acquire_done(&first);
	ww_acquire_fini(&first);
	watch_stop(&s);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.rule, WW_DEBUG_DONE_TWICE);
}

/* Lock @arg without a context and exit holding it: returns our tid. */
static void *leak_noctx_lock(void *arg)
{
	ww_mutex_lock(arg, NULL);
	return (void *)(intptr_t)test_gettid();
}

#define NEWCOMERS 64

struct newcomers {
	struct ww_mutex *lock;
	pthread_barrier_t all_in;
};

/*
 * Whether a new thread seems to own the leaked lock. The trylock makes it
 * take an internal thread record; the barrier keeps NEWCOMERS of them
 * alive at once, more than the process ever had, so that every record
 * free for reuse is in use.
 */
static void *seems_owner(void *arg)
{
	struct newcomers *n = arg;
	bool owner = ww_mutex_trylock(n->lock, NULL) != 0;

	pthread_barrier_wait(&n->all_in);
	owner |= ww_mutex_owner_tid(n->lock) == test_gettid();
	return (void *)(intptr_t)owner;
}

/*
 * A lock leaked by an exiting thread (reported, with a handler) stays
 * locked, and no later thread may look like its owner: the dead thread's
 * internal record, which the lock word names, is never handed out again.
 */
static void test_leaked_lock_stays_foreign(void **state)
{
	struct newcomers n = { .lock = NULL };
	pthread_t t[NEWCOMERS];
	struct ww_mutex l;
	struct seen s;
	void *ret;
	int i;

	(void)state;
	require_checker();
	ww_mutex_init(&l, &debug_test_class);
	watch_start(1);
	assert_int_equal(pthread_join(start_thread(leak_noctx_lock, &l), &ret),
			 0);
	watch_stop(&s);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.rule, WW_DEBUG_EXIT_HELD);
	/* It names the dead thread... */
	assert_int_equal(ww_mutex_owner_tid(&l), (pid_t)(intptr_t)ret);
	/* ...and no new thread may take or own it. */
	n.lock = &l;
	pthread_barrier_init(&n.all_in, NULL, NEWCOMERS);
	for (i = 0; i < NEWCOMERS; i++)
		t[i] = start_thread(seems_owner, &n);
	for (i = 0; i < NEWCOMERS; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		CHECK_MSG(!ret, "thread %d owns the leaked lock", i);
	}
	pthread_barrier_destroy(&n.all_in);
	assert_true(ww_mutex_is_locked(&l));
	assert_checks_passed();
}

/*
 * Rule 12: a device destroyed while a buffer of it is still held. The
 * child makes one buffer and destroys its device: the default handler
 * must report device-busy, naming the device and one buffer, and abort.
 * (The handled half, and the -EBUSY without the checker, are in
 * test_bo.c.)
 */
static void ctl_device_busy(struct ww_class *cls)
{
	static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;
	struct ttm_device *dev;
	struct ttm_bo *bo;

	(void)cls;
	if (!CHECK_INT(ttm_device_create(NULL, &dev), 0) ||
	    !CHECK_INT(ttm_bo_create(dev, 4096, &sys, 0, &bo), 0))
		return;
	fprintf(stderr, "device %p\n", (void *)dev);
	ttm_device_destroy(dev);
}

static void test_device_busy_forked(void **state)
{
	static const struct control ctl = { "device_busy", ctl_device_busy,
					    NULL };
	const struct job j = { .ctl = &ctl };
	static struct child c;
	char want[64];
	void *dev = NULL;
	const char *p;

	(void)state;
	require_checker();
	run_forked(&j, &c);
	CHECK_MSG(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGABRT,
		  "child did not abort: wait status %#x", c.status);
	CHECK(sscanf(c.out, "device %p", &dev) == 1);
	p = strstr(c.out, REPORT_HEAD);
	CHECK_MSG(p && !strncmp(p + strlen(REPORT_HEAD),
				"12 broken (device-busy)", 23),
		  "no device-busy report");
	CHECK(strstr(c.out, "  call:     ttm_device_destroy()") != NULL);
	snprintf(want, sizeof(want), "  device:   %p, buffers still "
		 "alive: 1\n", dev);
	CHECK_MSG(strstr(c.out, want) != NULL, "no line \"%s\"", want);
	assert_child_checks(&c);
}

static int test_setup(void **state)
{
	(void)state;
	/* The cases inject back-offs themselves, TTMSIM_WW_INJECT or not. */
	ww_debug_inject(0, 0);
	return checks_reset(NULL);
}

/* Whatever a failed test left behind must not leak into the next. */
static int test_teardown(void **state)
{
	(void)state;
	ww_debug_set_handler(NULL, NULL);
	ww_debug_inject(0, 0);
	return 0;
}

#define N_TESTS (2 * N_ELEMS(violations) + 2 * N_ELEMS(controls) + 7)

static struct CMUnitTest tests[N_TESTS];
static char test_names[N_TESTS][80];
static unsigned int n_tests;

static void add_test(const char *name, const char *detail,
		     CMUnitTestFunction fn, const void *state)
{
	char *buf = test_names[n_tests];

	snprintf(buf, sizeof(test_names[0]), "%s(%s)", name, detail);
	tests[n_tests++] = (struct CMUnitTest){
		.name = buf,
		.test_func = fn,
		.setup_func = test_setup,
		.teardown_func = test_teardown,
		.initial_state = (void *)state,
	};
}

int main(void)
{
	size_t i;

	/* 77: meson's "skipped", so a build without the checker says so. */
	if (ww_debug_set_enabled(true) == -EOPNOTSUPP) {
		printf("ww_debug checker not built in (-Dww_debug=false): "
		       "skipped\n");
		return 77;
	}

	for (i = 0; i < N_ELEMS(violations); i++) {
		add_test("handled", violations[i].name,
			 test_violation_handled, &violations[i]);
		add_test("forked", violations[i].name,
			 test_violation_forked, &violations[i]);
	}
	for (i = 0; i < N_ELEMS(controls); i++) {
		char detail[64];

		snprintf(detail, sizeof(detail), "%s, %s", controls[i].name,
			 is_wait_die(controls[i].cls) ? "wait-die"
						       : "wound-wait");
		add_test("correct_handled", detail, test_control_handled,
			 &controls[i]);
		add_test("correct_forked", detail, test_control_forked,
			 &controls[i]);
	}
	add_test("scale_threads", "wait-die", test_scale_threads,
		 &debug_test_class);
	add_test("scale_threads", "wound-wait", test_scale_threads,
		 &debug_other_class);
	add_test("scale_one_ctx", "wait-die", test_scale_one_ctx,
		 &debug_test_class);
	add_test("scale_one_ctx", "wound-wait", test_scale_one_ctx,
		 &debug_other_class);
	add_test("runtime_switch", "rules 2 and 3", test_runtime_switch,
		 NULL);
	add_test("leaked_lock", "stays foreign", test_leaked_lock_stays_foreign,
		 NULL);
	add_test("forked", "device_busy", test_device_busy_forked, NULL);
	if (n_tests != N_TESTS) {
		fprintf(stderr, "%u tests registered, %zu expected\n",
			n_tests, (size_t)N_TESTS);
		return 1;
	}
	return cmocka_run_group_tests_name("ww_debug", tests, NULL, NULL);
}
