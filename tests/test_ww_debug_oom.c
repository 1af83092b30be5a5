// SPDX-License-Identifier: MIT
/*
 * The debug checker out of memory: it must never turn correct code into a
 * failure. When one of its own allocations fails (a thread's state, its
 * class table, its held-lock table), the thread drops out of checking
 * before the lock it was about to take is taken, with one line on stderr,
 * and everything it does afterwards (the unlocks of locks it took while
 * checked included) is performed unchecked and reported never.
 *
 * The allocations are failed through the test-only hook
 * ttmsim_test_ww_debug_alloc_fails() (include/ww/debug_state.h), which
 * this program defines. A thread that dropped out stays out, so each case
 * runs in a thread of its own. Skipped when libttmsim is built without
 * the checker.
 *
 * The check that kills the wrong order (a checker that takes the lock,
 * then allocates its record and drops out with the lock taken but never
 * recorded) is hook.watch_was_locked: the hook notes whether the lock
 * being asked for was already held when the allocation was made, and
 * run_case() and test_classes_grow() assert it was not. The STATE and
 * CLASSES cases fail at ww_acquire_init(), before any lock call, so they
 * watch nothing (there is no lock to be taken too early); they check the
 * drop-out line and that every later call is performed unchecked.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "lib/helpers.h"
#include "ww/debug_state.h" /* the allocation hook: white-box */

static DEFINE_WD_CLASS(oom_wd);
static DEFINE_WW_CLASS(oom_ww);

/* ---- the hook ------------------------------------------------------- */

/*
 * The allocation at @fail_site fails once, in the thread @fail_thread;
 * the hook notes whether @watch was locked when the checker asked.
 */
static struct {
	pthread_mutex_t lock;
	bool armed;
	enum ww_debug_alloc_site site;
	pthread_t thread;
	struct ww_mutex *watch;
	int failed;              /* allocations failed */
	bool watch_was_locked;
} hook = { .lock = PTHREAD_MUTEX_INITIALIZER };

bool ttmsim_test_ww_debug_alloc_fails(enum ww_debug_alloc_site site)
{
	bool fail;

	pthread_mutex_lock(&hook.lock);
	fail = hook.armed && site == hook.site &&
	       pthread_equal(hook.thread, pthread_self());
	if (fail) {
		hook.armed = false;
		hook.failed++;
		hook.watch_was_locked = hook.watch &&
					ww_mutex_is_locked(hook.watch);
	}
	pthread_mutex_unlock(&hook.lock);
	return fail;
}

static void hook_arm(enum ww_debug_alloc_site site, struct ww_mutex *watch)
{
	pthread_mutex_lock(&hook.lock);
	hook.armed = true;
	hook.site = site;
	hook.thread = pthread_self();
	hook.watch = watch;
	hook.failed = 0;
	hook.watch_was_locked = false;
	pthread_mutex_unlock(&hook.lock);
}

/* After a case: a hook that did not fire must not fail a later call. */
static void hook_disarm(void)
{
	pthread_mutex_lock(&hook.lock);
	hook.armed = false;
	hook.watch = NULL;
	pthread_mutex_unlock(&hook.lock);
}

/* ---- reports and stderr ---------------------------------------------- */

static int reports;

static void count_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
	ww_debug_print_report(r, STDOUT_FILENO);
}

/* The checker's stderr, caught in a memory file for the length of a case. */
struct captured {
	int saved, file;
};

static void capture_start(struct captured *c)
{
	fflush(stderr);
	c->file = memfd_create("stderr", 0);
	c->saved = dup(STDERR_FILENO);
	if (c->file >= 0 && c->saved >= 0)
		dup2(c->file, STDERR_FILENO);
}

/* Restore stderr; the lines written meanwhile that contain @needle. */
static int capture_stop(struct captured *c, const char *needle)
{
	char buf[4096], *line, *save;
	ssize_t n;
	int count = 0;

	if (c->file < 0 || c->saved < 0)
		return -1;
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	n = pread(c->file, buf, sizeof(buf) - 1, 0);
	close(c->file);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	fputs(buf, stdout); /* for the log */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		count += strstr(line, needle) != NULL;
	return count;
}

#define DROP_LINE "no longer checked"

/* ---- the cases, each in a fresh thread ------------------------------- */

#define LOCKS 12

struct oom_case {
	struct ww_class *cls;
	enum ww_debug_alloc_site site;
	unsigned int fail_at;    /* lock index whose call fails to allocate */
	struct ww_mutex lock[LOCKS];
	/* Results, read by the main thread after the join. */
	int lock_ret[LOCKS];
	bool locked_after_unlock[LOCKS];
	int stderr_lines;
};

/*
 * One transaction over LOCKS locks, the allocation of @c->site failing
 * during the lock call @c->fail_at; then every lock unlocked, the context
 * finished, and a second transaction run the same way (the thread now
 * unchecked).
 */
static void *run_transaction(void *arg)
{
	struct oom_case *c = arg;
	struct ww_acquire_ctx ctx;
	struct captured cap;
	unsigned int i;

	capture_start(&cap);
	/*
	 * The state and the class entry come with the first call,
	 * ww_acquire_init(): no lock is being taken, nothing to watch.
	 */
	if (c->site != WW_DEBUG_ALLOC_HELD)
		hook_arm(c->site, NULL);
	ww_acquire_init(&ctx, c->cls);
	for (i = 0; i < LOCKS; i++) {
		if (i == c->fail_at && c->site == WW_DEBUG_ALLOC_HELD)
			hook_arm(c->site, &c->lock[i]);
		c->lock_ret[i] = ww_mutex_lock(&c->lock[i], &ctx);
	}
	ww_acquire_done(&ctx);
	for (i = 0; i < LOCKS; i++)
		ww_mutex_unlock(&c->lock[i]);
	for (i = 0; i < LOCKS; i++)
		c->locked_after_unlock[i] = ww_mutex_is_locked(&c->lock[i]);
	ww_acquire_fini(&ctx);

	/* Unchecked from now on, and still correct. */
	ww_acquire_init(&ctx, c->cls);
	for (i = 0; i < LOCKS; i++)
		CHECK_INT(ww_mutex_lock(&c->lock[i], &ctx), 0);
	for (i = 0; i < LOCKS; i++)
		ww_mutex_unlock(&c->lock[i]);
	ww_acquire_fini(&ctx);
	c->stderr_lines = capture_stop(&cap, DROP_LINE);
	return NULL;
}

static void run_case(struct ww_class *cls, enum ww_debug_alloc_site site,
		     unsigned int fail_at)
{
	struct oom_case *c;
	unsigned int i;

	if (!ww_debug_enabled())
		skip();
	c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->cls = cls;
	c->site = site;
	c->fail_at = fail_at;
	for (i = 0; i < LOCKS; i++)
		ww_mutex_init(&c->lock[i], cls);
	reports = 0;
	ww_debug_set_handler(count_report, NULL);
	join_thread(start_thread(run_transaction, c));
	hook_disarm();
	ww_debug_set_handler(NULL, NULL);
	assert_checks_passed();

	/* The allocation was asked for, and failed, exactly once. */
	assert_int_equal(hook.failed, 1);
	/* The thread dropped out before taking the lock, not after. */
	assert_false(hook.watch_was_locked);
	for (i = 0; i < LOCKS; i++) {
		assert_int_equal(c->lock_ret[i], 0);
		/* Every correct unlock performed... */
		assert_false(c->locked_after_unlock[i]);
	}
	/* ...and none reported. */
	assert_int_equal(reports, 0);
	/* One line on stderr says the thread is no longer checked. */
	assert_int_equal(c->stderr_lines, 1);
	for (i = 0; i < LOCKS; i++)
		ww_mutex_destroy(&c->lock[i]);
	free(c);
}

/* The held-lock table's first allocation: the first lock call. */
static void test_held_first(void **state)
{
	run_case(*state, WW_DEBUG_ALLOC_HELD, 0);
}

/*
 * The held-lock table growing (16 slots, half full at most): the ninth
 * lock call, with eight locks held and recorded that the checker must
 * forget consistently.
 */
static void test_held_grow(void **state)
{
	run_case(*state, WW_DEBUG_ALLOC_HELD, 8);
}

/* The class table, on the thread's first call (ww_acquire_init()). */
static void test_classes(void **state)
{
	run_case(*state, WW_DEBUG_ALLOC_CLASSES, 0);
}

/* The thread's state, on its first call: one line, not silence. */
static void test_state(void **state)
{
	run_case(*state, WW_DEBUG_ALLOC_STATE, 0);
}

/*
 * The class table growing (4 classes) while the thread holds a lock of
 * each of four classes: the lock of a fifth class drops the thread out
 * before it is taken; the unlocks of the four recorded locks are then
 * performed silently.
 */
static struct ww_class five[5] = {
	WW_CLASS_INITIALIZER(oom_a, 1), WW_CLASS_INITIALIZER(oom_b, 1),
	WW_CLASS_INITIALIZER(oom_c, 0), WW_CLASS_INITIALIZER(oom_d, 0),
	WW_CLASS_INITIALIZER(oom_e, 1),
};

struct five_case {
	struct ww_mutex lock[5];
	bool locked_after_unlock[5];
	int ret[5];
	int stderr_lines;
};

static void *run_five(void *arg)
{
	struct five_case *c = arg;
	struct captured cap;
	int i;

	capture_start(&cap);
	for (i = 0; i < 5; i++) {
		if (i == 4)
			hook_arm(WW_DEBUG_ALLOC_CLASSES, &c->lock[i]);
		c->ret[i] = ww_mutex_lock(&c->lock[i], NULL);
	}
	for (i = 4; i >= 0; i--)
		ww_mutex_unlock(&c->lock[i]);
	for (i = 0; i < 5; i++)
		c->locked_after_unlock[i] = ww_mutex_is_locked(&c->lock[i]);
	c->stderr_lines = capture_stop(&cap, DROP_LINE);
	return NULL;
}

static void test_classes_grow(void **state)
{
	struct five_case c = { 0 };
	int i;

	(void)state;
	if (!ww_debug_enabled())
		skip();
	for (i = 0; i < 5; i++)
		ww_mutex_init(&c.lock[i], &five[i]);
	reports = 0;
	ww_debug_set_handler(count_report, NULL);
	join_thread(start_thread(run_five, &c));
	hook_disarm();
	ww_debug_set_handler(NULL, NULL);
	assert_int_equal(hook.failed, 1);
	assert_false(hook.watch_was_locked);
	for (i = 0; i < 5; i++) {
		assert_int_equal(c.ret[i], 0);
		assert_false(c.locked_after_unlock[i]);
	}
	assert_int_equal(reports, 0);
	assert_int_equal(c.stderr_lines, 1);
}

#define OOM_TEST(fn, cls)                                               \
	{ .name = #fn "(" #cls ")", .test_func = fn,                    \
	  .setup_func = checks_reset, .initial_state = &cls }

int main(void)
{
	const struct CMUnitTest tests[] = {
		OOM_TEST(test_held_first, oom_wd),
		OOM_TEST(test_held_first, oom_ww),
		OOM_TEST(test_held_grow, oom_wd),
		OOM_TEST(test_held_grow, oom_ww),
		OOM_TEST(test_classes, oom_wd),
		OOM_TEST(test_state, oom_wd),
		OOM_TEST(test_classes_grow, oom_wd),
	};

	return cmocka_run_group_tests_name("ww_debug_oom", tests, NULL, NULL);
}
