// SPDX-License-Identifier: MIT
/*
 * Reservation objects (ttmsim/resv.h):
 *  - reserving and adding, snapshots, usage ordering, replacement by a
 *    fence of the same context (promotion yes, degradation no), pruning;
 *  - misuse reported through the ww debug checker: with a counting
 *    handler (one report, the fence not added) and forked with the default
 *    one (the child dies of SIGABRT after its report);
 *  - the same rule, resv-not-held, for each other call that needs the
 *    reservation held (reserving slots, pinning, unpinning, validating, a
 *    buffer's GPU range; the ttm_bo_*() calls name the test's line):
 *    forked (abort; with the checker off the call goes through), handled
 *    (one report, the call refused), with the buffer held by nobody or by
 *    another thread; correct use, reserved alone or through the locking
 *    helper, reports nothing;
 *  - the slot policy: a slot per append, none to replace a fence of the
 *    same context or a signalled one (the kernel's dma_resv_add_fence()),
 *    and slots left from an earlier holding still usable (the unlock
 *    cannot be seen);
 *  - ttm_resv_assert_held() (the same rule, also by the caller's line) and
 *    ttm_resv_locking_ctx();
 *  - the iterators: locked (every fence up to the usage, signalled ones
 *    too, no references) and unlocked (unsignalled ones, a reference each;
 *    restarts forced by a writer on another thread between two steps, and
 *    a writer racing with walks for real);
 *  - ttm_resv_wait(): 0, -ETIME, -EINTR;
 *  - lockless readers racing with a writer that replaces, prunes and grows;
 *  - ttm_resv_fini() dropping its references.
 *
 * The private headers give the tests the fence refcounts and the list's
 * size, which is what "no leak" and "no unbounded growth" are about.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "lib/helpers.h"

#include "bo/resv.h"
#include "gpu_sim/fence.h"
#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/fence_container.h"
#include "ttmsim/lru.h"
#include "ttmsim/resv.h"

static DEFINE_WD_CLASS(resv_test_class);

static struct ttm_fence *fence_new(uint64_t context, uint64_t seqno)
{
	struct ttm_fence *f = NULL;

	assert_int_equal(ttm_fence_create(context, seqno, &f), 0);
	return f;
}

static unsigned int refs(struct ttm_fence *f)
{
	return __atomic_load_n(&f->refcount, __ATOMIC_RELAXED);
}

static void resv_lock(struct ttm_resv *resv)
{
	assert_int_equal(ww_mutex_lock(&resv->lock, NULL), 0);
}

static void resv_unlock(struct ttm_resv *resv)
{
	ww_mutex_unlock(&resv->lock);
}

/* Reserve a slot and add: the usual pair, lock held. */
static void add(struct ttm_resv *resv, struct ttm_fence *f,
		enum ttm_resv_usage usage)
{
	assert_int_equal(ttm_resv_reserve_fences(resv, 1), 0);
	ttm_resv_add_fence(resv, f, usage);
}

/* How many unsignalled fences up to @usage; whether @f is one of them. */
static unsigned int snapshot(struct ttm_resv *resv, enum ttm_resv_usage usage,
			     struct ttm_fence *f, bool *has_f)
{
	struct ttm_fence **fences = (void *)1;
	unsigned int n = ~0u, i;

	assert_int_equal(ttm_resv_get_fences(resv, usage, &fences, &n), 0);
	assert_true(n != ~0u);
	assert_true(n ? fences != NULL : fences == NULL);
	if (has_f)
		*has_f = false;
	for (i = 0; i < n; i++) {
		assert_false(ttm_fence_is_signaled(fences[i]));
		if (has_f && fences[i] == f)
			*has_f = true;
		ttm_fence_put(fences[i]);
	}
	free(fences);
	return n;
}

static unsigned int count_up_to(struct ttm_resv *resv,
				enum ttm_resv_usage usage)
{
	return snapshot(resv, usage, NULL, NULL);
}

static bool holds(struct ttm_resv *resv, enum ttm_resv_usage usage,
		  struct ttm_fence *f)
{
	bool has_f;

	snapshot(resv, usage, f, &has_f);
	return has_f;
}

/* a1 and a2 (later) of one context, b and c of two others. */
struct abc {
	struct ttm_fence *a1, *a2, *b, *c;
};

static void abc_init(struct abc *f)
{
	uint64_t ctx = ttm_fence_context_alloc(3);

	f->a1 = fence_new(ctx, 1);
	f->a2 = fence_new(ctx, 2);
	f->b = fence_new(ctx + 1, 1);
	f->c = fence_new(ctx + 2, 1);
}

/* Only our references are left: put them. */
static void abc_fini(struct abc *f)
{
	struct ttm_fence *all[] = { f->a1, f->a2, f->b, f->c };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		assert_int_equal(refs(all[i]), 1);
		ttm_fence_put(all[i]);
	}
}

/* ---- reports ------------------------------------------------------------- */

static struct {
	pthread_mutex_t mutex;
	unsigned int count;
	struct ww_debug_report first; /* its strings are static or __FILE__ */
} seen = { .mutex = PTHREAD_MUTEX_INITIALIZER };

static void count_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	pthread_mutex_lock(&seen.mutex);
	if (seen.count++ == 0)
		seen.first = *r;
	pthread_mutex_unlock(&seen.mutex);
}

static void watch_start(void)
{
	pthread_mutex_lock(&seen.mutex);
	seen.count = 0;
	memset(&seen.first, 0, sizeof(seen.first));
	pthread_mutex_unlock(&seen.mutex);
	ww_debug_set_handler(count_report, NULL);
}

/* The reports since watch_start(); the first one in *@first. */
static unsigned int watch_stop(struct ww_debug_report *first)
{
	unsigned int n;

	ww_debug_set_handler(NULL, NULL);
	pthread_mutex_lock(&seen.mutex);
	n = seen.count;
	*first = seen.first;
	pthread_mutex_unlock(&seen.mutex);
	return n;
}

/* The reports since watch_start(), the watch going on. */
static unsigned int reports_so_far(void)
{
	unsigned int n;

	pthread_mutex_lock(&seen.mutex);
	n = seen.count;
	pthread_mutex_unlock(&seen.mutex);
	return n;
}

/* Exactly one report since watch_start(): @rule, by @call at @line. */
static void assert_one_report_by(const struct ttm_resv *resv,
				 enum ww_debug_rule rule, const char *tag,
				 const char *call, int line)
{
	struct ww_debug_report r;

	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, rule);
	assert_int_equal(r.rule_number, 11);
	assert_string_equal(r.name, tag);
	assert_string_equal(r.call, call);
	assert_string_equal(r.class_name, "resv_test_class");
	assert_ptr_equal(r.lock, &resv->lock);
	assert_non_null(r.file);
	assert_string_equal(r.file, __FILE__);
	assert_int_equal(r.line, line);
}

/* The same, for ttm_resv_add_fence(). */
static void assert_one_report(const struct ttm_resv *resv,
			      enum ww_debug_rule rule, const char *tag,
			      int line)
{
	assert_one_report_by(resv, rule, tag, "ttm_resv_add_fence", line);
}

/* ---- forked: the default handler aborts ---------------------------------- */

#define CHILD_LIMIT_S 10

struct child {
	int status;
	char out[16384]; /* its stderr, truncated */
};

/*
 * Run @fn in a child whose stderr is collected, with the default report
 * handler and the checker on or off. Only from a single thread: these
 * tests run first, before any test starts one.
 */
static void run_forked(void (*fn)(void), bool checker, struct child *c)
{
	long limit = now_ns() + CHILD_LIMIT_S * 1000000000L;
	const struct rlimit no_core = { 0, 0 };
	size_t len = 0;
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		signal(SIGABRT, SIG_DFL);
		setrlimit(RLIMIT_CORE, &no_core);
		if (dup2(fds[1], STDERR_FILENO) < 0)
			_exit(3);
		ww_debug_set_handler(NULL, NULL);
		ww_debug_set_enabled(checker);
		fn();
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		long left_ms = (limit - now_ns()) / 1000000;
		ssize_t n;

		if (left_ms <= 0 || poll(&p, 1, (int)left_ms) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(fds[0], c->out + len, sizeof(c->out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	c->out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &c->status, 0), pid);
}

static void add_without_slot(void)
{
	struct ttm_resv resv;
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);

	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_WRITE);
}

static void assert_aborted_no_slot(bool checker)
{
	struct child c;

	run_forked(add_without_slot, checker, &c);
	if (!WIFSIGNALED(c.status) || WTERMSIG(c.status) != SIGABRT ||
	    !strstr(c.out, "(resv-no-slot)") ||
	    !strstr(c.out, "resv_test_class") ||
	    !strstr(c.out, "ttm_resv_add_fence() at " __FILE__ ":"))
		fail_msg("child status %#x, stderr:\n%s", c.status, c.out);
}

/* A replacement needs no slot: the default handler is not reached. */
static void replace_without_slot(void)
{
	uint64_t ctx = ttm_fence_context_alloc(1);
	struct ttm_fence *f1 = fence_new(ctx, 1), *f2 = fence_new(ctx, 2);
	struct ttm_resv resv;

	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	if (ttm_resv_reserve_fences(&resv, 1))
		_exit(2);
	ttm_resv_add_fence(&resv, f1, TTM_RESV_USAGE_WRITE);
	ttm_resv_add_fence(&resv, f2, TTM_RESV_USAGE_WRITE);
	resv_unlock(&resv);
	ttm_resv_fini(&resv);
	ttm_fence_put(f1);
	ttm_fence_put(f2);
}

static void test_replace_no_slot_forked(void **state)
{
	struct child c;

	(void)state;
	run_forked(replace_without_slot, true, &c);
	if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0 || c.out[0])
		fail_msg("child status %#x, stderr:\n%s", c.status, c.out);
}

static void test_no_slot_forked(void **state)
{
	(void)state;
	assert_aborted_no_slot(true);
}

/* No slot is caught in every build, with the checker off too. */
static void test_no_slot_forked_checker_off(void **state)
{
	(void)state;
	assert_aborted_no_slot(false);
}

/* ---- reserve, add, get --------------------------------------------------- */

static void test_reserve_add_get(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(3);
	struct ttm_fence *f[3], **got = (void *)1;
	struct ttm_resv resv;
	unsigned int n = 1, i;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	assert_int_equal(ttm_resv_get_fences(&resv, TTM_RESV_USAGE_BOOKKEEP,
					     &got, &n), 0);
	assert_null(got);
	assert_int_equal(n, 0);
	assert_true(ttm_resv_test_signaled(&resv, TTM_RESV_USAGE_BOOKKEEP));
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_BOOKKEEP, false,
				       -1), 0);

	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 3), 0);
	for (i = 0; i < 3; i++) {
		f[i] = fence_new(ctx + i, 1);
		ttm_resv_add_fence(&resv, f[i], TTM_RESV_USAGE_READ);
		assert_int_equal(refs(f[i]), 2); /* ours and the resv's */
	}
	resv_unlock(&resv);

	assert_int_equal(ttm_resv_get_fences(&resv, TTM_RESV_USAGE_READ,
					     &got, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++) {
		assert_ptr_equal(got[i], f[i]); /* in the order added */
		assert_int_equal(refs(f[i]), 3);
		ttm_fence_put(got[i]);
	}
	free(got);

	/* Snapshots leave out what has signalled. */
	assert_int_equal(ttm_fence_signal(f[1], 0), 0);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_READ), 2);
	assert_false(holds(&resv, TTM_RESV_USAGE_READ, f[1]));

	ttm_resv_fini(&resv);
	for (i = 0; i < 3; i++) {
		assert_int_equal(refs(f[i]), 1);
		ttm_fence_put(f[i]);
	}
}

/* ---- usage ordering ------------------------------------------------------ */

static void test_usage_order(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(4);
	struct ttm_fence *f[4];
	struct ttm_resv resv;
	unsigned int u;

	(void)state;
	assert_int_equal(ttm_resv_usage_rw(true), TTM_RESV_USAGE_READ);
	assert_int_equal(ttm_resv_usage_rw(false), TTM_RESV_USAGE_WRITE);

	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	/* One fence per usage, added from the lowest priority down. */
	for (u = 4; u-- > 0;) {
		f[u] = fence_new(ctx + u, 1);
		add(&resv, f[u], (enum ttm_resv_usage)u);
	}
	resv_unlock(&resv);

	/* "For usage U" covers every usage numerically at most U. */
	for (u = 0; u < 4; u++) {
		assert_int_equal(count_up_to(&resv, u), u + 1);
		assert_true(holds(&resv, u, f[u]));
		if (u < 3)
			assert_false(holds(&resv, u, f[u + 1]));
		assert_false(ttm_resv_test_signaled(&resv, u));
		assert_int_equal(ttm_resv_wait(&resv, u, false, 0), -ETIME);
	}

	/* KERNEL, WRITE and READ done: READ is idle, BOOKKEEP is not. */
	for (u = 0; u < 3; u++)
		assert_int_equal(ttm_fence_signal(f[u], 0), 0);
	assert_true(ttm_resv_test_signaled(&resv, TTM_RESV_USAGE_READ));
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, false, 0),
			 0);
	assert_false(ttm_resv_test_signaled(&resv, TTM_RESV_USAGE_BOOKKEEP));
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_BOOKKEEP, false,
				       0), -ETIME);

	ttm_resv_fini(&resv);
	for (u = 0; u < 4; u++)
		ttm_fence_put(f[u]);
}

/* A pending reader does not hold up an access that only waits for writers. */
static void test_write_excludes_read(void **state)
{
	struct ttm_fence *w = fence_new(ttm_fence_context_alloc(1), 1);
	struct ttm_fence *r = fence_new(ttm_fence_context_alloc(1), 1);
	struct ttm_resv resv;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, w, TTM_RESV_USAGE_WRITE);
	add(&resv, r, TTM_RESV_USAGE_READ);
	resv_unlock(&resv);

	assert_int_equal(ttm_fence_signal(w, 0), 0);
	assert_true(ttm_resv_test_signaled(&resv, ttm_resv_usage_rw(false)));
	assert_int_equal(ttm_resv_wait(&resv, ttm_resv_usage_rw(false), false,
				       0), 0);
	assert_false(ttm_resv_test_signaled(&resv, ttm_resv_usage_rw(true)));
	assert_int_equal(ttm_resv_wait(&resv, ttm_resv_usage_rw(true), false,
				       0), -ETIME);

	ttm_resv_fini(&resv);
	ttm_fence_put(w);
	ttm_fence_put(r);
}

/*
 * Merged fences are independent timelines: a later merge must not replace
 * an earlier one that is still pending, or the buffer would look idle.
 */
static void test_merges_not_replaced(void **state)
{
	struct ttm_fence *in[4], *m1, *m2;
	struct ttm_resv resv;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		in[i] = fence_new(ttm_fence_context_alloc(1), 1);
	assert_int_equal(ttm_fence_unwrap_merge(2, &in[0], &m1), 0);
	assert_int_equal(ttm_fence_unwrap_merge(2, &in[2], &m2), 0);
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, m1, TTM_RESV_USAGE_WRITE);
	add(&resv, m2, TTM_RESV_USAGE_WRITE);
	resv_unlock(&resv);

	assert_int_equal(ttm_fence_signal(in[2], 0), 0);
	assert_int_equal(ttm_fence_signal(in[3], 0), 0);
	assert_false(ttm_resv_test_signaled(&resv, TTM_RESV_USAGE_WRITE));
	assert_int_equal(ttm_fence_signal(in[0], 0), 0);
	assert_int_equal(ttm_fence_signal(in[1], 0), 0);
	assert_true(ttm_resv_test_signaled(&resv, TTM_RESV_USAGE_WRITE));

	ttm_resv_fini(&resv);
	ttm_fence_put(m1);
	ttm_fence_put(m2);
	for (i = 0; i < 4; i++)
		ttm_fence_put(in[i]);
}

/* ---- replacement --------------------------------------------------------- */

static void test_replace_same_context(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(2);
	struct ttm_fence *a1 = fence_new(ctx, 1), *a2 = fence_new(ctx, 2);
	struct ttm_fence *a3 = fence_new(ctx, 3), *b1 = fence_new(ctx + 1, 1);
	struct ttm_resv resv;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);

	/* Same usage, later fence: replaced, and the old reference put. */
	add(&resv, a1, TTM_RESV_USAGE_READ);
	add(&resv, a2, TTM_RESV_USAGE_READ);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 1);
	assert_true(holds(&resv, TTM_RESV_USAGE_READ, a2));
	assert_int_equal(refs(a1), 1);

	/* Another context is kept beside it. */
	add(&resv, b1, TTM_RESV_USAGE_READ);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 2);

	/* Promotion: a WRITE replaces the READ of its context. */
	add(&resv, a3, TTM_RESV_USAGE_WRITE);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 2);
	assert_true(holds(&resv, TTM_RESV_USAGE_WRITE, a3));
	assert_false(holds(&resv, TTM_RESV_USAGE_READ, a2));
	assert_int_equal(refs(a2), 1);

	/* No degradation: re-added as BOOKKEEP, a3 still counts as WRITE. */
	add(&resv, a3, TTM_RESV_USAGE_BOOKKEEP);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 3);
	assert_true(holds(&resv, TTM_RESV_USAGE_WRITE, a3));
	assert_int_equal(refs(a3), 3);

	/* An earlier fence does not replace a later one of its context. */
	add(&resv, a2, TTM_RESV_USAGE_WRITE);
	assert_true(holds(&resv, TTM_RESV_USAGE_WRITE, a2));
	assert_true(holds(&resv, TTM_RESV_USAGE_WRITE, a3));

	resv_unlock(&resv);
	ttm_resv_fini(&resv);
	assert_int_equal(refs(a2), 1);
	assert_int_equal(refs(a3), 1);
	assert_int_equal(refs(b1), 1);
	ttm_fence_put(a1);
	ttm_fence_put(a2);
	ttm_fence_put(a3);
	ttm_fence_put(b1);
}

/* ---- pruning ------------------------------------------------------------- */

#define PRUNE_CYCLES 10000

static unsigned int retired_lists(const struct ttm_resv *resv)
{
	const struct ttm_resv_list *l;
	unsigned int n = 0;

	for (l = resv->retired; l; l = l->next)
		n++;
	return n;
}

/* Signalled fences go: 10000 add/signal cycles fit in the first list. */
static void test_prune_bounded(void **state)
{
	struct ttm_resv resv;
	unsigned int i;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	for (i = 0; i < PRUNE_CYCLES; i++) {
		/* A context of its own: nothing is replaced, only pruned. */
		struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);

		resv_lock(&resv);
		add(&resv, f, i % 4);
		resv_unlock(&resv);
		assert_int_equal(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
	}
	assert_int_equal(resv.fences->max, TTM_RESV_LIST_MIN);
	assert_int_equal(resv.fences->count, 1); /* the last, signalled */
	assert_int_equal(retired_lists(&resv), 0);

	/* Adding prunes too: a slot reserved earlier, then two signalled. */
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 3), 0);
	for (i = 0; i < 3; i++) {
		struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);

		ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_READ);
		if (i < 2)
			assert_int_equal(ttm_fence_signal(f, 0), 0);
		ttm_fence_put(f);
	}
	resv_unlock(&resv);
	assert_int_equal(resv.fences->count, 1); /* the pending one */
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_READ), 1);
	ttm_resv_fini(&resv);
}

/* Growing keeps every fence, and the old lists until fini. */
static void test_grow(void **state)
{
	struct ttm_fence *f[40];
	struct ttm_resv resv;
	unsigned int i;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	for (i = 0; i < 40; i++) {
		f[i] = fence_new(ttm_fence_context_alloc(1), 1);
		add(&resv, f[i], TTM_RESV_USAGE_BOOKKEEP);
	}
	resv_unlock(&resv);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 40);
	assert_true(resv.fences->max >= 40);
	assert_int_equal(retired_lists(&resv), 4); /* 4, 8, 16, 32 */

	/* No list can hold that many; nothing changes. */
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, UINT_MAX), -ENOMEM);
	assert_int_equal(resv.reserved, 0);
	resv_unlock(&resv);
	assert_int_equal(retired_lists(&resv), 4);
	for (i = 0; i < 40; i++)
		assert_true(holds(&resv, TTM_RESV_USAGE_BOOKKEEP, f[i]));
	ttm_resv_fini(&resv);
	for (i = 0; i < 40; i++) {
		assert_int_equal(refs(f[i]), 1);
		ttm_fence_put(f[i]);
	}
}

/* ---- misuse, with a handler ---------------------------------------------- */

static void test_no_slot_handled(void **state)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);
	struct ww_debug_report r;
	struct ttm_resv resv;
	int line;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);

	watch_start();
	line = __LINE__ + 1;
	ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_WRITE);
	assert_one_report(&resv, WW_DEBUG_RESV_NO_SLOT, "resv-no-slot", line);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 0);
	assert_int_equal(refs(f), 1);

	/* One slot, one add: the second is reported and not made. */
	assert_int_equal(ttm_resv_reserve_fences(&resv, 1), 0);
	watch_start();
	ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_WRITE);
	line = __LINE__ + 1;
	ttm_resv_add_fence_at(&resv, f, TTM_RESV_USAGE_READ, __FILE__, line);
	assert_one_report(&resv, WW_DEBUG_RESV_NO_SLOT, "resv-no-slot", line);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 1);
	assert_int_equal(refs(f), 2);

	/* The function itself, without the macro: no file:line to name. */
	watch_start();
	(ttm_resv_add_fence)(&resv, f, TTM_RESV_USAGE_READ);
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, WW_DEBUG_RESV_NO_SLOT);
	assert_null(r.file);
	assert_int_equal(refs(f), 2);

	resv_unlock(&resv);
	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

static void require_checker(void)
{
	if (ww_debug_set_enabled(true) == -EOPNOTSUPP)
		skip();
}

static void test_not_held(void **state)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);
	struct ttm_resv resv;
	bool was;
	int line;

	(void)state;
	require_checker();
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 2), 0);
	resv_unlock(&resv);

	watch_start();
	line = __LINE__ + 1;
	ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_WRITE);
	assert_one_report(&resv, WW_DEBUG_RESV_NOT_HELD, "resv-not-held",
			  line);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 0);
	assert_int_equal(refs(f), 1);

	/* With the checker off nothing can tell: the add goes through. */
	was = checker_off();
	watch_start();
	ttm_resv_add_fence(&resv, f, TTM_RESV_USAGE_WRITE);
	assert_int_equal(watch_stop(&(struct ww_debug_report){ 0 }), 0);
	checker_restore(was);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 1);

	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

/*
 * Add a pending fence of a context of its own: nothing to replace, so it
 * appends (or is reported for want of a slot).
 */
static void add_appending(struct ttm_resv *resv)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);

	ttm_resv_add_fence(resv, f, TTM_RESV_USAGE_READ);
	ttm_fence_put(f);
}

/*
 * The policy for slots across an unlock: ttmsim cannot see the unlock, so
 * leftover slots stay usable (the documentation says to reserve again);
 * every append uses one up, and reserving is not cumulative. Each add here
 * appends: re-adding one fence, as this test did before, replaces it and
 * needs no slot (test_replace_needs_no_slot).
 */
static void test_slots_after_relock(void **state)
{
	struct ww_debug_report r;
	struct ttm_resv resv;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 2), 0);
	add_appending(&resv);
	resv_unlock(&resv);

	resv_lock(&resv);
	watch_start();
	add_appending(&resv); /* the leftover */
	assert_int_equal(watch_stop(&r), 0);
	watch_start();
	add_appending(&resv); /* none left */
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, WW_DEBUG_RESV_NO_SLOT);

	/* Reserving 1 twice leaves room for one add, 3 then 1 for three. */
	assert_int_equal(ttm_resv_reserve_fences(&resv, 1), 0);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 1), 0);
	watch_start();
	add_appending(&resv);
	add_appending(&resv);
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 3), 0);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 1), 0);
	watch_start();
	add_appending(&resv);
	add_appending(&resv);
	add_appending(&resv);
	assert_int_equal(watch_stop(&r), 0);
	watch_start();
	add_appending(&resv);
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_BOOKKEEP), 6);

	resv_unlock(&resv);
	ttm_resv_fini(&resv);
}

/*
 * Only appending needs a slot, as in the kernel's dma_resv_add_fence(): a
 * fence that replaces one of its context, or takes the place of a
 * signalled one, leaves the count as it was. Before, every add used up a
 * slot, and each add below without one was reported.
 */
static void test_replace_needs_no_slot(void **state)
{
	struct ww_debug_report r;
	struct ttm_resv resv;
	struct abc f;
	int line;

	(void)state;
	abc_init(&f);
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 1), 0);
	ttm_resv_add_fence(&resv, f.a1, TTM_RESV_USAGE_READ); /* appends */
	assert_int_equal(resv.reserved, 0);

	/* A later fence of the context, then a promotion: both replace. */
	watch_start();
	ttm_resv_add_fence(&resv, f.a2, TTM_RESV_USAGE_READ);
	ttm_resv_add_fence(&resv, f.a2, TTM_RESV_USAGE_WRITE);
	assert_int_equal(watch_stop(&r), 0);
	assert_int_equal(resv.fences->count, 1);
	assert_true(holds(&resv, TTM_RESV_USAGE_WRITE, f.a2));
	assert_int_equal(refs(f.a1), 1);
	assert_int_equal(refs(f.a2), 2);

	/* After relocking, nothing reserved: the same. */
	resv_unlock(&resv);
	resv_lock(&resv);
	watch_start();
	ttm_resv_add_fence(&resv, f.a2, TTM_RESV_USAGE_WRITE);
	assert_int_equal(watch_stop(&r), 0);
	assert_int_equal(resv.fences->count, 1);
	assert_int_equal(refs(f.a2), 2);

	/* Another context appends: reported, and not added. */
	watch_start();
	line = __LINE__ + 1;
	ttm_resv_add_fence(&resv, f.b, TTM_RESV_USAGE_READ);
	assert_one_report(&resv, WW_DEBUG_RESV_NO_SLOT, "resv-no-slot", line);
	assert_int_equal(refs(f.b), 1);
	/* So does a degradation: READ does not replace the WRITE f.a2. */
	watch_start();
	line = __LINE__ + 1;
	ttm_resv_add_fence(&resv, f.a2, TTM_RESV_USAGE_READ);
	assert_one_report(&resv, WW_DEBUG_RESV_NO_SLOT, "resv-no-slot", line);
	assert_int_equal(refs(f.a2), 2);

	/* A signalled fence's entry is free: f.b takes it without a slot. */
	assert_int_equal(ttm_fence_signal(f.a2, 0), 0);
	watch_start();
	ttm_resv_add_fence(&resv, f.b, TTM_RESV_USAGE_READ);
	assert_int_equal(watch_stop(&r), 0);
	assert_int_equal(resv.fences->count, 1);
	assert_true(holds(&resv, TTM_RESV_USAGE_READ, f.b));
	assert_int_equal(refs(f.a2), 1);

	/* f.b pending, nothing to replace: f.c is reported. */
	watch_start();
	ttm_resv_add_fence(&resv, f.c, TTM_RESV_USAGE_READ);
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, WW_DEBUG_RESV_NO_SLOT);
	assert_int_equal(refs(f.c), 1);

	resv_unlock(&resv);
	ttm_resv_fini(&resv);
	abc_fini(&f);
}

/* ---- resv-not-held: the other calls that need the reservation held ------ */

static const struct ttm_placement in_vram = TTM_PLACEMENT_VRAM_INIT;
static const struct ttm_placement in_gtt = TTM_PLACEMENT_GTT_INIT;

/* A buffer in VRAM, of a device without a GPU: no thread is started. */
struct held_fix {
	struct ttm_device *dev;
	struct ttm_bo *bo;
};

static void held_fix_init(struct held_fix *f)
{
	assert_int_equal(ttm_device_create(NULL, &f->dev), 0);
	assert_int_equal(ttm_bo_create(f->dev, 4096, &in_vram, 0, &f->bo), 0);
}

static void held_fix_fini(struct held_fix *f)
{
	ttm_bo_put(f->bo);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
}

static void bo_lock(struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
}

/*
 * One call that needs @bo reserved: @prepare (if any) sets up what it
 * needs, reserving and unreserving; @call makes it, and returns what it
 * returned (ttm_bo_gpu_range(): -EINVAL for the empty range of a
 * refusal); @refused checks that a refused call changed nothing, then
 * undoes @prepare.
 */
struct needs_held {
	const char *name;
	void (*prepare)(struct held_fix *f);
	int (*call)(struct held_fix *f);
	void (*refused)(struct held_fix *f);
};

/*
 * The line of the last ttm_bo_*() call made below: those calls have a
 * caller-site macro (ttmsim/bo.h), so their reports name it.
 */
static int bo_call_line;

static int call_pin(struct held_fix *f)
{
	bo_call_line = __LINE__ + 1;
	return ttm_bo_pin(f->bo);
}

static void refused_pin(struct held_fix *f)
{
	assert_int_equal(ttm_bo_pin_count(f->bo), 0);
	/* Still on the LRU: not pinned behind the count's back. */
	assert_int_equal(ttm_device_lru_snapshot(f->dev, TTM_DOMAIN_VRAM,
						 NULL, 0), 1);
}

static void prepare_unpin(struct held_fix *f)
{
	bo_lock(f->bo);
	assert_int_equal(ttm_bo_pin(f->bo), 0);
	ttm_bo_unreserve(f->bo);
}

static int call_unpin(struct held_fix *f)
{
	bo_call_line = __LINE__ + 1;
	return ttm_bo_unpin(f->bo);
}

static void refused_unpin(struct held_fix *f)
{
	assert_int_equal(ttm_bo_pin_count(f->bo), 1);
	bo_lock(f->bo);
	assert_int_equal(ttm_bo_unpin(f->bo), 0);
	ttm_bo_unreserve(f->bo);
}

static int call_validate(struct held_fix *f)
{
	struct ttm_operation_ctx ctx = { 0 };

	bo_call_line = __LINE__ + 1;
	return ttm_bo_validate(f->bo, &in_gtt, &ctx);
}

static void refused_validate(struct held_fix *f)
{
	struct ttm_device_stats s;

	assert_int_equal(ttm_bo_domain(f->bo), TTM_DOMAIN_VRAM);
	ttm_device_get_stats(f->dev, &s);
	assert_int_equal(s.moves, 0);
}

static int call_gpu_range(struct held_fix *f)
{
	struct ttm_gpu_range range = { (void *)&range, 123 };

	bo_call_line = __LINE__ + 1;
	ttm_bo_gpu_range(f->bo, &range);
	if (!range.addr && !range.size)
		return -EINVAL;
	assert_int_equal(range.size, ttm_bo_size(f->bo));
	return 0;
}

static int call_reserve_fences(struct held_fix *f)
{
	return ttm_resv_reserve_fences(ttm_bo_resv(f->bo), 2);
}

static void refused_reserve_fences(struct held_fix *f)
{
	struct ttm_resv *resv = ttm_bo_resv(f->bo);

	assert_int_equal(resv->reserved, 0);
	assert_null(resv->fences);
}

/*
 * The function, not the macro: no file:line, like the other ttm_resv_*()
 * calls here. Refused means reported; the caller goes on either way.
 */
static int call_assert_held(struct held_fix *f)
{
	unsigned int before = reports_so_far();

	(ttm_resv_assert_held)(ttm_bo_resv(f->bo));
	return reports_so_far() > before ? -EINVAL : 0;
}

/* The locked walk of a buffer with no fence: NULL either way. */
static int call_iter_first(struct held_fix *f)
{
	unsigned int before = reports_so_far();
	struct ttm_resv_iter cursor;

	ttm_resv_iter_begin(&cursor, ttm_bo_resv(f->bo),
			    TTM_RESV_USAGE_BOOKKEEP);
	assert_null(ttm_resv_iter_first(&cursor));
	return reports_so_far() > before ? -EINVAL : 0;
}

/* Copy from itself, the one resv the fixture has. */
static int call_copy_fences(struct held_fix *f)
{
	return ttm_resv_copy_fences(ttm_bo_resv(f->bo), ttm_bo_resv(f->bo));
}

static void refused_copy_fences(struct held_fix *f)
{
	assert_null(ttm_bo_resv(f->bo)->fences);
}

static int call_replace_fences(struct held_fix *f)
{
	unsigned int before = reports_so_far();
	struct ttm_fence *r = fence_new(ttm_fence_context_alloc(1), 1);

	ttm_resv_replace_fences(ttm_bo_resv(f->bo), ttm_fence_context(r), r,
				TTM_RESV_USAGE_KERNEL);
	ttm_fence_put(r);
	return reports_so_far() > before ? -EINVAL : 0;
}

static const struct needs_held needs_held[] = {
	{ "ttm_bo_pin", NULL, call_pin, refused_pin },
	{ "ttm_bo_unpin", prepare_unpin, call_unpin, refused_unpin },
	{ "ttm_bo_validate", NULL, call_validate, refused_validate },
	{ "ttm_bo_gpu_range", NULL, call_gpu_range, NULL },
	{ "ttm_resv_reserve_fences", NULL, call_reserve_fences,
	  refused_reserve_fences },
	{ "ttm_resv_assert_held", NULL, call_assert_held, NULL },
	{ "ttm_resv_iter_first", NULL, call_iter_first, NULL },
	{ "ttm_resv_copy_fences", NULL, call_copy_fences,
	  refused_copy_fences },
	{ "ttm_resv_replace_fences", NULL, call_replace_fences, NULL },
};

/* Exactly one report since watch_start(): resv-not-held by @name. */
static void assert_not_held_report(const struct held_fix *f,
				   const char *name)
{
	struct ww_debug_report r;

	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, WW_DEBUG_RESV_NOT_HELD);
	assert_int_equal(r.rule_number, 11);
	assert_string_equal(r.name, "resv-not-held");
	assert_string_equal(r.call, name);
	assert_string_equal(r.class_name,
			    ttm_device_ww_class(f->dev)->name);
	assert_ptr_equal(r.lock, &ttm_bo_resv(f->bo)->lock);
	assert_null(r.ctx);
	/* The ttm_bo_*() calls name the test's line (their macros) ... */
	if (!strncmp(name, "ttm_bo_", 7)) {
		assert_non_null(r.file);
		assert_string_equal(r.file, __FILE__);
		assert_int_equal(r.line, bo_call_line);
		return;
	}
	/* ... the others have none: the backtrace says where. */
	assert_null(r.file);
}

/* The case a forked child runs; set before the fork. */
static const struct needs_held *forked_case;

static void needs_held_child(void)
{
	struct held_fix f;

	held_fix_init(&f);
	if (forked_case->prepare)
		forked_case->prepare(&f);
	forked_case->call(&f);
}

static void test_needs_held_forked(void **state)
{
	const struct needs_held *h = *state;
	char want[96];
	struct child c;

	require_checker();
	forked_case = h;
	run_forked(needs_held_child, true, &c);
	/* The ttm_bo_*() calls name their line, in the child's copy. */
	if (!strncmp(h->name, "ttm_bo_", 7))
		snprintf(want, sizeof(want), "call:     %s() at %s:", h->name,
			 __FILE__);
	else
		snprintf(want, sizeof(want), "call:     %s() (caller unknown",
			 h->name);
	if (!WIFSIGNALED(c.status) || WTERMSIG(c.status) != SIGABRT ||
	    !strstr(c.out, "rule 11 broken (resv-not-held)") ||
	    !strstr(c.out, "reservation_ww_class") || !strstr(c.out, want))
		fail_msg("child status %#x, stderr:\n%s", c.status, c.out);
}

/* With the checker off (or not built in) the call goes through. */
static void test_needs_held_forked_checker_off(void **state)
{
	struct child c;

	forked_case = *state;
	run_forked(needs_held_child, false, &c);
	if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0 || c.out[0])
		fail_msg("child status %#x, stderr:\n%s", c.status, c.out);
}

/* Held by nobody: one report, the call refused and nothing changed. */
static void test_needs_held_handled(void **state)
{
	const struct needs_held *h = *state;
	struct held_fix f;

	require_checker();
	held_fix_init(&f);
	if (h->prepare)
		h->prepare(&f);
	watch_start();
	assert_int_equal(h->call(&f), -EINVAL);
	assert_not_held_report(&f, h->name);
	if (h->refused)
		h->refused(&f);
	held_fix_fini(&f);
}

/*
 * Held by another thread is not held by this one: the same. Soft checks
 * while the actor lives (an assert would leave it running on our stack).
 */
static void test_needs_held_foreign(void **state)
{
	const struct needs_held *h = *state;
	struct ww_mutex *lock;
	struct held_fix f;
	struct actor a;
	int ret = 0;

	require_checker();
	held_fix_init(&f);
	if (h->prepare)
		h->prepare(&f);
	lock = &ttm_bo_resv(f.bo)->lock;
	actor_start(&a, ttm_device_ww_class(f.dev));
	if (CHECK_INT(actor_run(&a, act_lock_noctx, lock), 0)) {
		watch_start();
		ret = h->call(&f);
		actor_run(&a, act_unlock, lock);
	}
	actor_stop(&a);
	assert_checks_passed();
	assert_int_equal(ret, -EINVAL);
	assert_not_held_report(&f, h->name);
	if (h->refused)
		h->refused(&f);
	held_fix_fini(&f);
}

/*
 * Correct use reports nothing: each call with the buffer reserved alone,
 * then through the locking helper's ticket, as a submission does.
 */
static void held_calls(struct held_fix *f)
{
	assert_int_equal(ttm_bo_pin(f->bo), 0);
	assert_int_equal(ttm_bo_unpin(f->bo), 0);
	assert_int_equal(call_validate(f), 0);
	assert_int_equal(ttm_bo_domain(f->bo), TTM_DOMAIN_GTT);
	assert_int_equal(call_gpu_range(f), 0);
	assert_int_equal(call_reserve_fences(f), 0);
	ttm_resv_assert_held(ttm_bo_resv(f->bo));
	assert_int_equal(call_iter_first(f), 0);
	assert_int_equal(call_copy_fences(f), 0);
	assert_int_equal(call_replace_fences(f), 0);
}

static void test_needs_held_correct(void **state)
{
	struct ww_debug_report r;
	struct held_fix f;
	struct ttm_exec exec;
	int ret = 0;

	(void)state;
	require_checker();
	held_fix_init(&f);
	watch_start();
	bo_lock(f.bo);
	held_calls(&f);
	ttm_bo_unreserve(f.bo);
	assert_int_equal(watch_stop(&r), 0);
	held_fix_fini(&f);

	held_fix_init(&f);
	watch_start();
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, f.bo);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	held_calls(&f);
	ttm_exec_fini(&exec);
	assert_int_equal(watch_stop(&r), 0);
	held_fix_fini(&f);
}

/* Lock @resv through a new transaction in @ctx; and the other way. */
static void resv_lock_ticket(struct ttm_resv *resv, struct ww_acquire_ctx *ctx)
{
	ww_acquire_init(ctx, &resv_test_class);
	assert_int_equal(ww_mutex_lock(&resv->lock, ctx), 0);
}

static void resv_unlock_ticket(struct ttm_resv *resv,
			       struct ww_acquire_ctx *ctx)
{
	ww_mutex_unlock(&resv->lock);
	ww_acquire_fini(ctx);
}

/*
 * ttm_resv_assert_held() names the caller's line; held by this thread,
 * with a context or without, passes. ttm_resv_locking_ctx() gives the
 * holder's context: NULL when free or held without one, another thread's
 * when it holds it.
 */
static void test_assert_held_locking_ctx(void **state)
{
	struct ww_acquire_ctx ctx, *theirs = NULL;
	struct ww_debug_report r;
	struct ttm_resv resv;
	struct actor a;
	int line;

	(void)state;
	require_checker();
	ttm_resv_init(&resv, &resv_test_class);
	watch_start();
	line = __LINE__ + 1;
	ttm_resv_assert_held(&resv);
	assert_one_report_by(&resv, WW_DEBUG_RESV_NOT_HELD, "resv-not-held",
			     "ttm_resv_assert_held", line);
	assert_null(ttm_resv_locking_ctx(&resv));

	watch_start();
	resv_lock(&resv);
	ttm_resv_assert_held(&resv);
	assert_null(ttm_resv_locking_ctx(&resv));
	resv_unlock(&resv);
	resv_lock_ticket(&resv, &ctx);
	ttm_resv_assert_held(&resv);
	assert_ptr_equal(ttm_resv_locking_ctx(&resv), &ctx);
	resv_unlock_ticket(&resv, &ctx);
	assert_int_equal(watch_stop(&r), 0);
	assert_null(ttm_resv_locking_ctx(&resv));

	/* Another thread's transaction holds it: not ours, and not held. */
	actor_start(&a, &resv_test_class);
	if (CHECK_INT(actor_run(&a, act_init, NULL), 0) &&
	    CHECK_INT(actor_run(&a, act_lock, &resv.lock), 0)) {
		theirs = ttm_resv_locking_ctx(&resv);
		watch_start();
		ttm_resv_assert_held(&resv);
		CHECK_INT(watch_stop(&r), 1);
		actor_run(&a, act_unlock, &resv.lock);
	}
	actor_run(&a, act_fini, NULL);
	actor_stop(&a);
	assert_checks_passed();
	assert_non_null(theirs);
	assert_ptr_not_equal(theirs, &ctx);
	ttm_resv_fini(&resv);
}

/* ---- iterators ---------------------------------------------------------- */

/*
 * A resv with one pending fence per usage, added from BOOKKEEP down so that
 * list order is the reverse of usage order, then a WRITE fence signalled
 * after it was added (last: adding prunes signalled fences).
 */
struct iter_fix {
	struct ttm_resv resv;
	struct ttm_fence *f[4];         /* by usage */
	struct ttm_fence *done;         /* WRITE, signalled */
};

static void iter_fix_init(struct iter_fix *x)
{
	uint64_t ctx = ttm_fence_context_alloc(5);
	unsigned int u;

	ttm_resv_init(&x->resv, &resv_test_class);
	resv_lock(&x->resv);
	for (u = 4; u-- > 0;) {
		x->f[u] = fence_new(ctx + u, 1);
		add(&x->resv, x->f[u], (enum ttm_resv_usage)u);
	}
	x->done = fence_new(ctx + 4, 1);
	add(&x->resv, x->done, TTM_RESV_USAGE_WRITE);
	assert_int_equal(ttm_fence_signal(x->done, 0), 0);
	resv_unlock(&x->resv);
	assert_int_equal(x->resv.fences->count, 5);
}

static void iter_fix_fini(struct iter_fix *x)
{
	unsigned int u;

	ttm_resv_fini(&x->resv);
	for (u = 0; u < 4; u++) {
		assert_int_equal(refs(x->f[u]), 1);
		ttm_fence_put(x->f[u]);
	}
	assert_int_equal(refs(x->done), 1);
	ttm_fence_put(x->done);
}

/*
 * Locked: every fence up to the usage, signalled ones too, in list order,
 * without references; only the first is "restarted".
 */
static void test_iter_locked(void **state)
{
	struct ttm_resv_iter cursor;
	struct ttm_fence *fence;
	struct iter_fix x;
	unsigned int u, n;

	(void)state;
	iter_fix_init(&x);
	resv_lock(&x.resv);
	for (u = 0; u < 4; u++) {
		n = 0;
		ttm_resv_for_each_fence(&cursor, &x.resv, u, fence) {
			enum ttm_resv_usage used = ttm_resv_iter_usage(&cursor);

			assert_true(used <= u);
			assert_int_equal(ttm_resv_iter_is_restarted(&cursor),
					 n == 0);
			if (fence == x.done) {
				assert_int_equal(used, TTM_RESV_USAGE_WRITE);
			} else {
				/* List order: BOOKKEEP was added first. */
				assert_ptr_equal(fence, x.f[u - n]);
				assert_int_equal(used, u - n);
			}
			assert_int_equal(refs(fence), 2); /* ours, the list's */
			n++;
		}
		/* One per usage up to u, and the signalled WRITE from u = 1. */
		assert_int_equal(n, u + 1 + (u >= TTM_RESV_USAGE_WRITE));
	}
	ttm_resv_iter_end(&cursor); /* harmless after a locked walk */
	resv_unlock(&x.resv);
	iter_fix_fini(&x);

	/* An empty reservation, and one that never had a list. */
	ttm_resv_init(&x.resv, &resv_test_class);
	resv_lock(&x.resv);
	ttm_resv_iter_begin(&cursor, &x.resv, TTM_RESV_USAGE_BOOKKEEP);
	assert_null(ttm_resv_iter_first(&cursor));
	assert_int_equal(ttm_resv_reserve_fences(&x.resv, 1), 0);
	assert_null(ttm_resv_iter_first(&cursor));
	resv_unlock(&x.resv);
	ttm_resv_fini(&x.resv);
}

/*
 * Unlocked: the unsignalled fences up to the usage, each with a reference
 * held by the cursor until the next step; the usage filter is the same.
 */
static void test_iter_unlocked(void **state)
{
	struct ttm_resv_iter cursor;
	struct ttm_fence *fence, *prev;
	struct iter_fix x;
	unsigned int u, n;

	(void)state;
	iter_fix_init(&x);
	for (u = 0; u < 4; u++) {
		n = 0;
		prev = NULL;
		ttm_resv_iter_begin(&cursor, &x.resv, u);
		ttm_resv_for_each_fence_unlocked(&cursor, fence) {
			assert_ptr_not_equal(fence, x.done);
			assert_ptr_equal(fence, x.f[u - n]);
			assert_int_equal(ttm_resv_iter_usage(&cursor), u - n);
			assert_int_equal(ttm_resv_iter_is_restarted(&cursor),
					 n == 0);
			/* Ours, the list's, the cursor's; the last one put. */
			assert_int_equal(refs(fence), 3);
			if (prev)
				assert_int_equal(refs(prev), 2);
			prev = fence;
			n++;
		}
		assert_int_equal(n, u + 1);
		assert_false(ttm_resv_iter_is_restarted(&cursor));
		ttm_resv_iter_end(&cursor);
		assert_int_equal(refs(prev), 2);
	}

	/* Leaving early: end puts the reference the cursor holds. */
	ttm_resv_iter_begin(&cursor, &x.resv, TTM_RESV_USAGE_BOOKKEEP);
	fence = ttm_resv_iter_first_unlocked(&cursor);
	assert_ptr_equal(fence, x.f[TTM_RESV_USAGE_BOOKKEEP]);
	assert_int_equal(refs(fence), 3);
	ttm_resv_iter_end(&cursor);
	assert_int_equal(refs(fence), 2);
	ttm_resv_iter_end(&cursor); /* twice is harmless */
	iter_fix_fini(&x);

	/* Nothing to walk: NULL, and "restarted" (nothing collected). */
	ttm_resv_init(&x.resv, &resv_test_class);
	ttm_resv_iter_begin(&cursor, &x.resv, TTM_RESV_USAGE_BOOKKEEP);
	assert_null(ttm_resv_iter_first_unlocked(&cursor));
	assert_true(ttm_resv_iter_is_restarted(&cursor));
	ttm_resv_iter_end(&cursor);
	ttm_resv_fini(&x.resv);
}

/* A writer on another thread, one step at a time (an actor). */
struct writer_step {
	struct ttm_resv *resv;
	struct ttm_fence *fence;        /* to add, or NULL: only reserve */
	enum ttm_resv_usage usage;
};

static int act_write(struct actor *a, void *arg)
{
	struct writer_step *w = arg;
	int ret;

	(void)a;
	ret = ww_mutex_lock(&w->resv->lock, NULL);
	if (ret)
		return ret;
	/* Reserving prunes signalled fences, in a write section. */
	ret = ttm_resv_reserve_fences(w->resv, 1);
	if (!ret && w->fence)
		ttm_resv_add_fence(w->resv, w->fence, w->usage);
	ww_mutex_unlock(&w->resv->lock);
	return ret;
}

/*
 * A writer that changes the list between two steps of an unlocked walk
 * makes the next step start over: the first fence again, "restarted", and
 * then the list as the writer left it. The steps are handed to another
 * thread and waited for (no sleep), so each change lands exactly there.
 */
static void test_iter_unlocked_restart(void **state)
{
	struct writer_step w = { .usage = TTM_RESV_USAGE_READ };
	struct ttm_fence *got[3] = { NULL };
	struct ttm_resv_iter cursor;
	struct ttm_resv resv;
	struct actor a;
	struct abc f;

	(void)state;
	abc_init(&f);
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, f.a1, TTM_RESV_USAGE_READ);
	add(&resv, f.b, TTM_RESV_USAGE_READ);
	resv_unlock(&resv);
	w.resv = &resv;
	actor_start(&a, &resv_test_class);

	ttm_resv_iter_begin(&cursor, &resv, TTM_RESV_USAGE_BOOKKEEP);
	got[0] = ttm_resv_iter_first_unlocked(&cursor);
	CHECK(got[0] == f.a1 && ttm_resv_iter_is_restarted(&cursor));

	/* Appending f.c: the walk starts over and sees it. */
	w.fence = f.c;
	CHECK_INT(actor_run(&a, act_write, &w), 0);
	got[0] = ttm_resv_iter_next_unlocked(&cursor);
	CHECK(got[0] == f.a1 && ttm_resv_iter_is_restarted(&cursor));
	got[1] = ttm_resv_iter_next_unlocked(&cursor);
	CHECK(got[1] == f.b && !ttm_resv_iter_is_restarted(&cursor));

	/*
	 * Replacing f.a1 by f.a2: the list's reference to f.a1 is gone, the
	 * cursor's to f.b stays until the next step. The walk starts over.
	 */
	w.fence = f.a2;
	CHECK_INT(actor_run(&a, act_write, &w), 0);
	CHECK_INT(refs(f.a1), 1);
	CHECK_INT(refs(f.b), 3);
	got[0] = ttm_resv_iter_next_unlocked(&cursor);
	CHECK(got[0] == f.a2 && ttm_resv_iter_is_restarted(&cursor));
	CHECK_INT(refs(f.b), 2);
	got[1] = ttm_resv_iter_next_unlocked(&cursor);
	got[2] = got[1] ? ttm_resv_iter_next_unlocked(&cursor) : NULL;
	CHECK(got[1] == f.b && got[2] == f.c &&
	      !ttm_resv_iter_is_restarted(&cursor));
	CHECK(!ttm_resv_iter_next_unlocked(&cursor) &&
	      !ttm_resv_iter_is_restarted(&cursor));
	ttm_resv_iter_end(&cursor);

	/*
	 * Everything signalled and pruned after the last fence: the end of
	 * the walk restarts and finds nothing, so what was collected before
	 * is stale, and "restarted" with the NULL says so.
	 */
	ttm_resv_iter_begin(&cursor, &resv, TTM_RESV_USAGE_BOOKKEEP);
	CHECK(ttm_resv_iter_first_unlocked(&cursor) == f.a2);
	CHECK(ttm_resv_iter_next_unlocked(&cursor) == f.b);
	CHECK(ttm_resv_iter_next_unlocked(&cursor) == f.c);
	CHECK_INT(ttm_fence_signal(f.a2, 0), 0);
	CHECK_INT(ttm_fence_signal(f.b, 0), 0);
	CHECK_INT(ttm_fence_signal(f.c, 0), 0);
	w.fence = NULL;
	CHECK_INT(actor_run(&a, act_write, &w), 0);
	CHECK_INT(resv.fences->count, 0);
	CHECK(!ttm_resv_iter_next_unlocked(&cursor) &&
	      ttm_resv_iter_is_restarted(&cursor));
	ttm_resv_iter_end(&cursor);

	actor_stop(&a);
	assert_checks_passed();
	ttm_resv_fini(&resv);
	abc_fini(&f);
}

/*
 * A writer racing with unlocked walks, for real: the reader yields at each
 * fence so that writes land inside its walks, and the writer goes on until
 * the reader saw ITER_RACE_RESTARTS restarts (bounded in time). Each walk
 * the reader completes, collected as the kernel's callers do (drop on
 * restart), is one state of the list: no fence twice, only contexts the
 * writer uses, only usages up to the filter, and at most the most the
 * writer ever keeps pending. So is every copy of it, made now and then.
 */
#define ITER_RACE_CONTEXTS 8
#define ITER_RACE_PENDING 12
#define ITER_RACE_RESTARTS 200
#define ITER_RACE_WALKS 2000

struct iter_race {
	struct ttm_resv resv;
	uint64_t ctx_first;
	int started;                    /* atomic: the reader is walking */
	int restarts;                   /* atomic: seen by the reader */
	int done;                       /* atomic: the writer stopped */
};

static void *iter_race_writer(void *arg)
{
	struct iter_race *r = arg;
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	struct ttm_fence *pending[ITER_RACE_PENDING];
	unsigned int n = 0, i;

	CHECK(wait_for_int(&r->started, 1));
	for (i = 0; now_ns() < limit &&
		    __atomic_load_n(&r->restarts, __ATOMIC_RELAXED) <
		    ITER_RACE_RESTARTS; i++) {
		struct ttm_fence *f = NULL;

		if (ttm_fence_create(r->ctx_first + i % ITER_RACE_CONTEXTS,
				     i + 1, &f)) {
			check_failed(__FILE__, __LINE__, "no fence");
			break;
		}
		ww_mutex_lock(&r->resv.lock, NULL);
		if (CHECK(!ttm_resv_reserve_fences(&r->resv, 1)))
			ttm_resv_add_fence(&r->resv, f, i % 4);
		ww_mutex_unlock(&r->resv.lock);
		pending[n++] = f;
		if (n == ITER_RACE_PENDING)
			while (n) {
				CHECK(!ttm_fence_signal(pending[--n], 0));
				ttm_fence_put(pending[n]);
			}
	}
	while (n) {
		CHECK(!ttm_fence_signal(pending[--n], 0));
		ttm_fence_put(pending[n]);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One completed walk: a state of the list (see above). */
static void iter_race_check(struct iter_race *r, enum ttm_resv_usage usage,
			    const struct ttm_fence *const *got,
			    const enum ttm_resv_usage *used, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		uint64_t ctx = ttm_fence_context(got[i]) - r->ctx_first;

		CHECK_MSG(ctx < ITER_RACE_CONTEXTS, "a fence of context +%llu",
			  (unsigned long long)ctx);
		CHECK_MSG(used[i] <= usage, "usage %u in a walk up to %u",
			  used[i], usage);
		for (j = 0; j < i; j++)
			CHECK_MSG(got[j] != got[i], "fence %p twice",
				  (const void *)got[i]);
	}
}

/* A copy made while the writer races is one state of the list too. */
static void iter_race_copy(struct iter_race *r, struct ttm_resv *dst)
{
	const struct ttm_fence *got[ITER_RACE_PENDING];
	enum ttm_resv_usage used[ITER_RACE_PENDING];
	struct ttm_resv_iter cursor;
	struct ttm_fence *f;
	unsigned int n = 0;

	ww_mutex_lock(&dst->lock, NULL);
	CHECK_INT(ttm_resv_copy_fences(dst, &r->resv), 0);
	ttm_resv_for_each_fence(&cursor, dst, TTM_RESV_USAGE_BOOKKEEP, f) {
		if (!CHECK_MSG(n < ITER_RACE_PENDING,
			       "more than %d fences copied",
			       ITER_RACE_PENDING))
			break;
		used[n] = ttm_resv_iter_usage(&cursor);
		got[n++] = f;
	}
	iter_race_check(r, TTM_RESV_USAGE_BOOKKEEP, got, used, n);
	ww_mutex_unlock(&dst->lock);
}

static void drop_all(struct ttm_fence **got, unsigned int *n)
{
	while (*n)
		ttm_fence_put(got[--*n]);
}

static void test_iter_unlocked_race(void **state)
{
	struct ttm_fence *got[ITER_RACE_PENDING];
	enum ttm_resv_usage used[ITER_RACE_PENDING];
	static struct iter_race r;
	unsigned int walks = 0, n = 0;
	struct ttm_resv dst;
	pthread_t writer;

	(void)state;
	memset(&r, 0, sizeof(r));
	ttm_resv_init(&r.resv, &resv_test_class);
	ttm_resv_init(&dst, &resv_test_class);
	r.ctx_first = ttm_fence_context_alloc(ITER_RACE_CONTEXTS);
	writer = start_thread(iter_race_writer, &r);
	__atomic_store_n(&r.started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) ||
	       walks < ITER_RACE_WALKS) {
		enum ttm_resv_usage usage = walks % 4;
		struct ttm_resv_iter cursor;
		bool first = true, overflow = false;
		struct ttm_fence *f;

		ttm_resv_iter_begin(&cursor, &r.resv, usage);
		ttm_resv_for_each_fence_unlocked(&cursor, f) {
			if (ttm_resv_iter_is_restarted(&cursor)) {
				if (!first)
					__atomic_fetch_add(&r.restarts, 1,
							   __ATOMIC_RELAXED);
				drop_all(got, &n);
			}
			first = false;
			if (n == ITER_RACE_PENDING) {
				overflow = true;
				break;
			}
			used[n] = ttm_resv_iter_usage(&cursor);
			got[n++] = ttm_fence_get(f);
			/* Let the writer in, in the middle of the walk. */
			sched_yield();
		}
		if (!overflow && ttm_resv_iter_is_restarted(&cursor)) {
			if (!first)
				__atomic_fetch_add(&r.restarts, 1,
						   __ATOMIC_RELAXED);
			drop_all(got, &n);
		}
		ttm_resv_iter_end(&cursor);
		CHECK_MSG(!overflow, "more than %d fences at once",
			  ITER_RACE_PENDING);
		iter_race_check(&r, usage, (const struct ttm_fence **)got,
				used, n);
		drop_all(got, &n);
		if (walks++ % 4 == 0)
			iter_race_copy(&r, &dst);
	}
	join_thread(writer);
	assert_checks_passed();
	ttm_resv_fini(&dst);
	ttm_resv_fini(&r.resv);
	if (r.restarts < ITER_RACE_RESTARTS)
		fail_msg("only %d restarts in %u walks", r.restarts, walks);
}

/* ---- copying and replacing ---------------------------------------------- */

/* The fences of @resv under the lock, with their usages, in list order. */
static unsigned int walk_locked(struct ttm_resv *resv, struct ttm_fence **got,
				enum ttm_resv_usage *used, unsigned int max)
{
	struct ttm_resv_iter cursor;
	struct ttm_fence *f;
	unsigned int n = 0;

	ttm_resv_for_each_fence(&cursor, resv, TTM_RESV_USAGE_BOOKKEEP, f) {
		assert_true(n < max);
		got[n] = f;
		used[n++] = ttm_resv_iter_usage(&cursor);
	}
	return n;
}

/*
 * dst gets src's unsignalled fences with their usages, in place of its
 * own; its reserved slots are gone; src is not touched (nor locked).
 */
static void test_copy_fences(void **state)
{
	struct ttm_fence *mine = fence_new(ttm_fence_context_alloc(1), 1);
	enum ttm_resv_usage used[8];
	struct ttm_fence *got[8];
	struct ww_debug_report r;
	struct ttm_resv dst;
	struct iter_fix x;
	unsigned int n, u, src_count;

	(void)state;
	iter_fix_init(&x);
	src_count = x.resv.fences->count;
	ttm_resv_init(&dst, &resv_test_class);
	resv_lock(&dst);
	assert_int_equal(ttm_resv_reserve_fences(&dst, 3), 0);
	ttm_resv_add_fence(&dst, mine, TTM_RESV_USAGE_WRITE);
	assert_int_equal(refs(mine), 2);

	assert_int_equal(ttm_resv_copy_fences(&dst, &x.resv), 0);
	assert_int_equal(refs(mine), 1); /* dst's own are dropped */
	n = walk_locked(&dst, got, used, 8);
	assert_int_equal(n, 4); /* not the signalled one */
	for (u = 0; u < 4; u++) {
		/* src's order: BOOKKEEP first. */
		assert_ptr_equal(got[u], x.f[3 - u]);
		assert_int_equal(used[u], 3 - u);
		assert_int_equal(refs(x.f[3 - u]), 3); /* ours, src, dst */
	}
	assert_int_equal(x.resv.fences->count, src_count);

	/* The slots reserved before the copy are gone. */
	assert_int_equal(dst.reserved, 0);
	watch_start();
	ttm_resv_add_fence(&dst, mine, TTM_RESV_USAGE_WRITE);
	assert_int_equal(watch_stop(&r), 1);
	assert_int_equal(r.rule, WW_DEBUG_RESV_NO_SLOT);

	/* Copying from itself keeps what is pending. */
	assert_int_equal(ttm_fence_signal(x.f[1], 0), 0);
	assert_int_equal(ttm_resv_copy_fences(&dst, &dst), 0);
	assert_int_equal(walk_locked(&dst, got, used, 8), 3);
	assert_int_equal(refs(x.f[1]), 2);

	/* From an empty one: nothing left. */
	{
		struct ttm_resv empty;

		ttm_resv_init(&empty, &resv_test_class);
		assert_int_equal(ttm_resv_copy_fences(&dst, &empty), 0);
		assert_int_equal(walk_locked(&dst, got, used, 8), 0);
		assert_true(ttm_resv_test_signaled(&dst,
						   TTM_RESV_USAGE_BOOKKEEP));
		ttm_resv_fini(&empty);
	}
	resv_unlock(&dst);
	ttm_resv_fini(&dst);
	iter_fix_fini(&x);
	ttm_fence_put(mine);
}

/*
 * Every fence of the context, and only those, becomes the replacement with
 * the new usage, in place: no slot needed, the old references put.
 */
static void test_replace_fences(void **state)
{
	struct ttm_fence *got[4], *rep;
	enum ttm_resv_usage used[4];
	struct ww_debug_report r;
	struct ttm_resv resv;
	struct abc f;
	uint64_t ctx;

	(void)state;
	abc_init(&f);
	ctx = ttm_fence_context(f.a1);
	rep = f.c; /* the replacement */
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, f.a1, TTM_RESV_USAGE_WRITE);
	add(&resv, f.b, TTM_RESV_USAGE_READ);
	add(&resv, f.a2, TTM_RESV_USAGE_BOOKKEEP); /* appended: WRITE stays */
	assert_int_equal(resv.fences->count, 3);
	assert_int_equal(resv.reserved, 0);

	watch_start();
	ttm_resv_replace_fences(&resv, ctx, rep, TTM_RESV_USAGE_KERNEL);
	assert_int_equal(watch_stop(&r), 0);
	assert_int_equal(walk_locked(&resv, got, used, 4), 3);
	assert_ptr_equal(got[0], rep);
	assert_int_equal(used[0], TTM_RESV_USAGE_KERNEL);
	assert_ptr_equal(got[1], f.b);
	assert_int_equal(used[1], TTM_RESV_USAGE_READ);
	assert_ptr_equal(got[2], rep);
	assert_int_equal(used[2], TTM_RESV_USAGE_KERNEL);
	assert_int_equal(refs(f.a1), 1);
	assert_int_equal(refs(f.a2), 1);
	assert_int_equal(refs(rep), 3);

	/* A context with no fence here: nothing changes. */
	ttm_resv_replace_fences(&resv, ctx + 3, f.a1, TTM_RESV_USAGE_READ);
	assert_int_equal(walk_locked(&resv, got, used, 4), 3);
	assert_int_equal(refs(f.a1), 1);
	resv_unlock(&resv);

	/* Lockless readers see the new usage: only KERNEL now. */
	assert_int_equal(count_up_to(&resv, TTM_RESV_USAGE_KERNEL), 2);
	assert_false(holds(&resv, TTM_RESV_USAGE_BOOKKEEP, f.a2));

	ttm_resv_fini(&resv);
	abc_fini(&f);
}

/* ---- waiting ------------------------------------------------------------- */

struct waiter {
	struct ttm_resv *resv;
	bool interruptible;
	int64_t timeout_ns;
	int ret;          /* atomic; 1 until the wait returned */
	/* Interruptible waiters: their token, set before @ready. */
	struct ttm_interrupt_token *token;
	struct event ready;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	int ret;

	if (w->interruptible) {
		CHECK_INT(ttm_interrupt_self(&w->token), 0);
		event_set(&w->ready);
	}
	ret = ttm_resv_wait(w->resv, TTM_RESV_USAGE_READ, w->interruptible,
			    w->timeout_ns);
	ttm_interrupt_clear(); /* an interrupt posted after the return */
	__atomic_store_n(&w->ret, ret, __ATOMIC_RELEASE);
	return NULL;
}

static void test_wait_timeout(void **state)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);
	struct ttm_fence *b = fence_new(ttm_fence_context_alloc(1), 1);
	struct ttm_resv resv;
	long start;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, f, TTM_RESV_USAGE_WRITE);
	add(&resv, b, TTM_RESV_USAGE_BOOKKEEP);
	resv_unlock(&resv);

	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_WRITE, false, 0),
			 -ETIME);
	start = now_ns();
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_WRITE, false,
				       2000000), -ETIME);
	assert_true(now_ns() - start >= 2000000);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, true,
				       1000), -ETIME);
	/* A non-interruptible wait ignores a pending interrupt. */
	assert_int_equal(ttm_interrupt_thread(pthread_self()), 0);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, false,
				       1000000), -ETIME);
	assert_true(ttm_interrupt_clear());

	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, false, 0),
			 0);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, true, -1),
			 0);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_READ, true,
				       INT64_MAX), 0);
	assert_int_equal(ttm_resv_wait(&resv, TTM_RESV_USAGE_BOOKKEEP, false,
				       1000), -ETIME);

	ttm_resv_fini(&resv);
	ttm_fence_put(f);
	ttm_fence_put(b);
}

static bool waiter_returned(void *arg)
{
	struct waiter *w = arg;

	return __atomic_load_n(&w->ret, __ATOMIC_ACQUIRE) != 1;
}

/*
 * A wait without a limit returns once another thread signals: the signal
 * comes only once the waiter is asleep on the fence (on its waiter list),
 * so what is tested is the wake-up, not a wait that finds the fence
 * signalled. Interruptible only so that a waiter never woken can be let
 * go, and the test fail, rather than hang.
 */
static void test_wait_signalled(void **state)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);
	struct waiter w = { .interruptible = true, .timeout_ns = -1, .ret = 1 };
	struct ttm_resv resv;
	bool asleep, woken;
	pthread_t t;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, f, TTM_RESV_USAGE_READ);
	resv_unlock(&resv);

	w.resv = &resv;
	event_init(&w.ready);
	t = start_thread(waiter_main, &w);
	assert_true(event_wait_for(&w.ready, WAIT_LIMIT_S));
	asleep = wait_for_fence_waiters(f, 1);
	/* Still waiting: nothing has signalled. */
	assert_int_equal(__atomic_load_n(&w.ret, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	woken = wait_until(waiter_returned, &w);
	if (!woken)
		assert_int_equal(ttm_interrupt(w.token), 0);
	join_thread(t);
	ttm_interrupt_token_put(w.token);
	event_destroy(&w.ready);
	assert_true(asleep);
	assert_true(woken);
	assert_int_equal(w.ret, 0);

	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

/*
 * An interrupt ends an interruptible wait with -EINTR: posted until the
 * wait returns (bounded), so the waiter is interrupted whether it had
 * parked yet or not.
 */
static void test_wait_interrupted(void **state)
{
	struct ttm_fence *f = fence_new(ttm_fence_context_alloc(1), 1);
	struct waiter w = { .interruptible = true, .timeout_ns = -1, .ret = 1 };
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	struct ttm_resv resv;
	pthread_t t;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	add(&resv, f, TTM_RESV_USAGE_WRITE);
	resv_unlock(&resv);

	w.resv = &resv;
	event_init(&w.ready);
	t = start_thread(waiter_main, &w);
	if (!event_wait_for(&w.ready, WAIT_LIMIT_S))
		ttm_fence_signal(f, 0); /* no token: let it go, then fail */
	while (w.token && __atomic_load_n(&w.ret, __ATOMIC_ACQUIRE) == 1 &&
	       now_ns() < limit) {
		assert_int_equal(ttm_interrupt(w.token), 0);
		sched_yield();
	}
	if (__atomic_load_n(&w.ret, __ATOMIC_ACQUIRE) == 1)
		ttm_fence_signal(f, 0); /* let it go, then fail */
	join_thread(t);
	event_destroy(&w.ready);
	assert_checks_passed();
	assert_int_equal(w.ret, -EINTR);
	assert_false(ttm_fence_is_signaled(f));
	/* Its thread is gone: the token stays, and says so. */
	assert_int_equal(ttm_interrupt(w.token), -ESRCH);
	ttm_interrupt_token_put(w.token);

	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

/* ---- readers racing with a writer ---------------------------------------- */

#define RACE_RESVS 4
#define RACE_READERS 3
#define RACE_ROUNDS 20000
#define RACE_PENDING 48 /* per resv, then all are signalled */
#define RACE_MIN_SEEN 2000 /* the writer goes on until readers saw these */

struct race {
	struct ttm_resv resv[RACE_RESVS];
	uint64_t ctx_first;
	unsigned int ctx_count;
	int started;                    /* atomic: readers running */
	int done;                       /* atomic */
	int fences_seen;                /* atomic: by all readers */
};

struct race_writer {
	struct race *race;
	struct ttm_fence *pending[RACE_RESVS][RACE_PENDING + 2];
	unsigned int n_pending[RACE_RESVS];
};

static void race_signal_all(struct race_writer *w, unsigned int r)
{
	while (w->n_pending[r]) {
		struct ttm_fence *f = w->pending[r][--w->n_pending[r]];

		CHECK(!ttm_fence_signal(f, 0));
		ttm_fence_put(f);
	}
}

/*
 * Each round, on one resv: a fence of a new context (the list grows until
 * the pending ones are signalled, then is pruned) and a later fence of the
 * resv's own context, alternately WRITE and READ (replacing the previous
 * one on promotion, appended otherwise). At least RACE_ROUNDS rounds, and
 * on until the readers have got RACE_MIN_SEEN fences (bounded in time), so
 * that they surely overlap.
 */
static void *race_writer_main(void *arg)
{
	struct race_writer *w = arg;
	struct race *race = w->race;
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;
	unsigned int i, r;

	CHECK(wait_for_int(&race->started, RACE_READERS));
	for (i = 0; i < RACE_ROUNDS ||
		    (__atomic_load_n(&race->fences_seen, __ATOMIC_RELAXED) <
		     RACE_MIN_SEEN && now_ns() < limit); i++) {
		struct ttm_resv *resv = &race->resv[i % RACE_RESVS];
		struct ttm_fence *a = NULL, *b = NULL;
		uint64_t ctx;

		r = i % RACE_RESVS;
		ctx = race->ctx_first + RACE_RESVS + i % (race->ctx_count -
							   RACE_RESVS);
		if (ttm_fence_create(ctx, i, &a) ||
		    ttm_fence_create(race->ctx_first + r, i, &b)) {
			check_failed(__FILE__, __LINE__, "no fence");
			ttm_fence_put(a);
			break;
		}
		ww_mutex_lock(&resv->lock, NULL);
		if (CHECK(!ttm_resv_reserve_fences(resv, 2))) {
			ttm_resv_add_fence(resv, a, TTM_RESV_USAGE_BOOKKEEP);
			ttm_resv_add_fence(resv, b, (i / RACE_RESVS) & 1 ?
					   TTM_RESV_USAGE_WRITE :
					   TTM_RESV_USAGE_READ);
		}
		ww_mutex_unlock(&resv->lock);
		w->pending[r][w->n_pending[r]++] = a;
		w->pending[r][w->n_pending[r]++] = b;
		if (w->n_pending[r] >= RACE_PENDING)
			race_signal_all(w, r);
	}
	for (r = 0; r < RACE_RESVS; r++)
		race_signal_all(w, r);
	__atomic_store_n(&race->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A snapshot of resv @r holds live references to fences the writer added
 * there: its contexts are those of @r (each resv has the contexts equal to
 * its index modulo RACE_RESVS), with no fence twice (the writer never adds
 * one twice) and none at all for KERNEL (the writer adds none). A torn read
 * of the list would break one of these: stale entries past a pruned end
 * repeat fences, a recycled fence is of another resv.
 */
static void race_check_snapshot(struct race *race, unsigned int r,
				enum ttm_resv_usage usage,
				struct ttm_fence **fences, unsigned int n)
{
	unsigned int i, j;

	CHECK_MSG(usage != TTM_RESV_USAGE_KERNEL || n == 0,
		  "%u fences for KERNEL", n);
	for (i = 0; i < n; i++) {
		struct ttm_fence *f = fences[i];
		uint64_t ctx = ttm_fence_context(f) - race->ctx_first;

		CHECK_MSG(refs(f) >= 1, "fence %p with refcount %u",
			  (void *)f, refs(f));
		CHECK_MSG(ctx < race->ctx_count && ctx % RACE_RESVS == r,
			  "fence %p of context +%llu in resv %u", (void *)f,
			  (unsigned long long)ctx, r);
		for (j = 0; j < i; j++)
			CHECK_MSG(fences[j] != f, "fence %p twice", (void *)f);
	}
	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
}

static void *race_reader_main(void *arg)
{
	struct race *race = arg;
	unsigned int i = 0, n;

	__atomic_fetch_add(&race->started, 1, __ATOMIC_RELEASE);
	do {
		struct ttm_resv *resv = &race->resv[i % RACE_RESVS];
		enum ttm_resv_usage usage = (i / RACE_RESVS) % 4;
		struct ttm_fence **fences;

		if (!CHECK(!ttm_resv_get_fences(resv, usage, &fences, &n)))
			break;
		race_check_snapshot(race, i % RACE_RESVS, usage, fences, n);
		free(fences);
		__atomic_fetch_add(&race->fences_seen, (int)n,
				   __ATOMIC_RELAXED);
		ttm_resv_test_signaled(resv, usage);
		CHECK_INT(ttm_resv_wait(resv, TTM_RESV_USAGE_KERNEL, false, 0),
			  0);
		/* Fewer CPUs than threads: leave the writer some time. */
		if (++i % 16 == 0)
			sched_yield();
	} while (!__atomic_load_n(&race->done, __ATOMIC_ACQUIRE));
	return NULL;
}

static void test_readers_race(void **state)
{
	static struct race_writer w;
	static struct race race;
	pthread_t readers[RACE_READERS], writer;
	unsigned int i;

	(void)state;
	memset(&race, 0, sizeof(race));
	memset(&w, 0, sizeof(w));
	race.ctx_count = RACE_RESVS + 64;
	race.ctx_first = ttm_fence_context_alloc(race.ctx_count);
	for (i = 0; i < RACE_RESVS; i++)
		ttm_resv_init(&race.resv[i], &resv_test_class);
	w.race = &race;

	for (i = 0; i < RACE_READERS; i++)
		readers[i] = start_thread(race_reader_main, &race);
	writer = start_thread(race_writer_main, &w);
	join_thread(writer);
	for (i = 0; i < RACE_READERS; i++)
		join_thread(readers[i]);
	assert_checks_passed();

	/* The lists grew while read. */
	for (i = 0; i < RACE_RESVS; i++) {
		assert_true(race.resv[i].retired != NULL);
		ttm_resv_fini(&race.resv[i]);
	}
	if (race.fences_seen < RACE_MIN_SEEN)
		fail_msg("the readers got only %d fences", race.fences_seen);
}

/* ---- fini ---------------------------------------------------------------- */

static void test_fini_drops_fences(void **state)
{
	uint64_t ctx = ttm_fence_context_alloc(8);
	struct ttm_fence *f[8];
	struct ttm_resv resv;
	unsigned int i;

	(void)state;
	ttm_resv_init(&resv, &resv_test_class);
	resv_lock(&resv);
	assert_int_equal(ttm_resv_reserve_fences(&resv, 8), 0);
	for (i = 0; i < 8; i++) {
		f[i] = fence_new(ctx + i, 1);
		ttm_resv_add_fence(&resv, f[i], i % 4);
		assert_int_equal(refs(f[i]), 2);
	}
	resv_unlock(&resv);
	ttm_resv_fini(&resv);
	for (i = 0; i < 8; i++) {
		assert_int_equal(refs(f[i]), 1);
		ttm_fence_put(f[i]);
	}
}

/* One test per call of needs_held[]. */
#define NEEDS_HELD_TEST(fn, i, call)                                    \
	{ .name = #fn "(" call ")", .test_func = fn,                    \
	  .setup_func = checks_reset,                                   \
	  .initial_state = (void *)&needs_held[i] }
#define NEEDS_HELD_TESTS(fn)                                            \
	NEEDS_HELD_TEST(fn, 0, "ttm_bo_pin"),                           \
	NEEDS_HELD_TEST(fn, 1, "ttm_bo_unpin"),                         \
	NEEDS_HELD_TEST(fn, 2, "ttm_bo_validate"),                      \
	NEEDS_HELD_TEST(fn, 3, "ttm_bo_gpu_range"),                     \
	NEEDS_HELD_TEST(fn, 4, "ttm_resv_reserve_fences"),             \
	NEEDS_HELD_TEST(fn, 5, "ttm_resv_assert_held"),                \
	NEEDS_HELD_TEST(fn, 6, "ttm_resv_iter_first"),                 \
	NEEDS_HELD_TEST(fn, 7, "ttm_resv_copy_fences"),                \
	NEEDS_HELD_TEST(fn, 8, "ttm_resv_replace_fences")

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* Forked first, while this is the only thread. */
		cmocka_unit_test(test_no_slot_forked),
		cmocka_unit_test(test_no_slot_forked_checker_off),
		cmocka_unit_test(test_replace_no_slot_forked),
		NEEDS_HELD_TESTS(test_needs_held_forked),
		NEEDS_HELD_TESTS(test_needs_held_forked_checker_off),
		cmocka_unit_test(test_reserve_add_get),
		cmocka_unit_test(test_usage_order),
		cmocka_unit_test(test_write_excludes_read),
		cmocka_unit_test(test_merges_not_replaced),
		cmocka_unit_test(test_replace_same_context),
		cmocka_unit_test(test_prune_bounded),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_no_slot_handled),
		cmocka_unit_test(test_not_held),
		cmocka_unit_test(test_slots_after_relock),
		cmocka_unit_test(test_replace_needs_no_slot),
		NEEDS_HELD_TESTS(test_needs_held_handled),
		NEEDS_HELD_TESTS(test_needs_held_foreign),
		cmocka_unit_test(test_needs_held_correct),
		cmocka_unit_test_setup(test_assert_held_locking_ctx,
				       checks_reset),
		cmocka_unit_test(test_iter_locked),
		cmocka_unit_test(test_iter_unlocked),
		cmocka_unit_test_setup(test_iter_unlocked_restart,
				       checks_reset),
		cmocka_unit_test_setup(test_iter_unlocked_race, checks_reset),
		cmocka_unit_test(test_copy_fences),
		cmocka_unit_test(test_replace_fences),
		cmocka_unit_test(test_wait_timeout),
		cmocka_unit_test(test_wait_signalled),
		cmocka_unit_test_setup(test_wait_interrupted, checks_reset),
		cmocka_unit_test_setup(test_readers_race, checks_reset),
		cmocka_unit_test(test_fini_drops_fences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
