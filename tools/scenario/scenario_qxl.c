// SPDX-License-Identifier: MIT
/*
 * ttmsim scenario qxl: the bug fixed by Linux commit 7eb9974f3685 ("drm/qxl:
 * avoid buffer reservation in qxl_crtc_page_flip"), caught by the ww_debug
 * checker, and the fix.
 *
 * qxl_crtc_page_flip() reserved the new framebuffer's buffer object with
 * qxl_bo_reserve(), a ww_mutex_lock() without an acquire context, and kept
 * it while qxl_draw_dirty_fb() reserved buffers of the same class through a
 * context. A context that must back off cannot release a lock taken without
 * one, so that order can deadlock against any other context of the class;
 * lockdep found it on a debug kernel. The fix pins the buffer under a short
 * reservation and releases it before the draw.
 *
 * The buggy page flip runs in a forked child next to an execbuf thread that
 * holds the old framebuffer through its own context and waits for the new
 * one. The checker stops the flip at its first lock through a context
 * (rule 1, ctx-after-null) with its report on stderr and abort(), before the
 * flip blocks and closes the cycle. The parent, single-threaded, watches the
 * child with a timeout, says what happened and runs the fixed page flip
 * itself.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "ttmsim/ww_mutex.h"
#include "checker.h"
#include "child.h"
#include "cli.h"
#include "clock.h"
#include "parse.h"

/* The kernel's class of every dma_resv lock, so of every bo reservation. */
static DEFINE_WD_CLASS(reservation_ww_class);

/* The child's exit status if its lock through the context returned. */
#define QXL_NOT_CAUGHT 42

/* How long the child waits for the execbuf thread to queue up. */
#define QXL_SETUP_NS 5000000000ull

#define QXL_NR(bos) ((unsigned int)(sizeof(bos) / sizeof((bos)[0])))
/* The held mask of all @n bos of a list. */
#define QXL_ALL(n) ((1u << (n)) - 1)

struct qxl_config {
	double watchdog_s;
	bool fixed_only;
};

struct qxl_bo {
	const char *name;
	struct ww_mutex resv;   /* the reservation, as in a dma_resv */
	unsigned int pin_count; /* under resv */
};

struct qxl_crtc {
	struct qxl_bo old_fb, new_fb;
	struct qxl_bo *scanout; /* the framebuffer on screen; under resv */
};

static void qxl_crtc_init(struct qxl_crtc *crtc)
{
	*crtc = (struct qxl_crtc){
		.old_fb = { .name = "old fb" },
		.new_fb = { .name = "new fb" },
	};
	ww_mutex_init(&crtc->old_fb.resv, &reservation_ww_class);
	ww_mutex_init(&crtc->new_fb.resv, &reservation_ww_class);
	crtc->scanout = &crtc->old_fb;
}

/* Unreserve each bo of @bos whose bit is set in @held. */
static void qxl_unreserve(struct qxl_bo *const *bos, unsigned int n,
			  unsigned int held)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (held & (1u << i))
			ww_mutex_unlock(&bos[i]->resv);
}

/*
 * Reserve all @n (at most 32) of @bos through @ctx, as
 * ttm_eu_reserve_buffers() does: on -EDEADLK unreserve everything, sleep
 * on the contended bo with ww_mutex_lock_slow() and reserve the others
 * again. Counts the back-offs in *@backoffs.
 * Return: 0 with all reserved, or an error of ww_mutex_lock() with none.
 */
static int qxl_reserve_all(struct qxl_bo *const *bos, unsigned int n,
			   struct ww_acquire_ctx *ctx,
			   unsigned long *backoffs)
{
	unsigned int held = 0, i = 0;
	int ret;

	while (i < n) {
		if (held & (1u << i)) {
			i++;
			continue;
		}
		ret = ww_mutex_lock(&bos[i]->resv, ctx);
		if (ret == -EDEADLK) {
			qxl_unreserve(bos, n, held);
			ww_mutex_lock_slow(&bos[i]->resv, ctx);
			held = 1u << i;
			i = 0;
			(*backoffs)++;
			continue;
		}
		if (ret) {
			qxl_unreserve(bos, n, held);
			return ret;
		}
		held |= 1u << i++;
	}
	return 0;
}

/* ------------------------------------------------------------------- */
/* Before the fix: in a child process. */

/*
 * A command submission racing with the page flip: it reserves the old
 * framebuffer, then the new one, through its own context. In the child it
 * is still waiting for the new one when the checker ends the process.
 */
static void *qxl_execbuf(void *arg)
{
	struct qxl_crtc *crtc = arg;
	struct qxl_bo *bos[] = { &crtc->old_fb, &crtc->new_fb };
	struct ww_acquire_ctx ctx;
	unsigned long backoffs = 0;

	ww_acquire_init(&ctx, &reservation_ww_class);
	if (!qxl_reserve_all(bos, QXL_NR(bos), &ctx, &backoffs))
		qxl_unreserve(bos, QXL_NR(bos), QXL_ALL(QXL_NR(bos)));
	ww_acquire_fini(&ctx);
	return NULL;
}

/* Wait until a thread is queued on @bo; false after QXL_SETUP_NS. */
static bool qxl_wait_for_waiter(struct qxl_bo *bo)
{
	uint64_t deadline = cli_now_ns() + QXL_SETUP_NS;

	while (!ww_mutex_waiter_count(&bo->resv)) {
		if (cli_now_ns() > deadline)
			return false;
		cli_sleep_until_ns(cli_now_ns() + 100000);
	}
	return true;
}

/*
 * The child: qxl_crtc_page_flip() before the fix. With the checker on, the
 * lock through the context never returns: the report handler aborts.
 */
static int qxl_page_flip_buggy(void *arg)
{
	struct ww_acquire_ctx ctx;
	struct qxl_crtc crtc;
	pthread_t execbuf;
	bool cycle;
	int ret;

	(void)arg;
	/* The abort is the expected end here, not a crash worth a core. */
	prctl(PR_SET_DUMPABLE, 0);
	qxl_crtc_init(&crtc);

	/* qxl_bo_reserve(bo, false): no context, kept until the flip ends. */
	ww_mutex_lock(&crtc.new_fb.resv, NULL);
	printf("  page flip: qxl_bo_reserve(new fb): "
	       "ww_mutex_lock(new fb, NULL), kept\n");

	ret = pthread_create(&execbuf, NULL, qxl_execbuf, &crtc);
	if (ret) {
		cli_error("scenario qxl: cannot create a thread: %s",
			  strerror(ret));
		return CLI_EXIT_FAILURE;
	}
	if (!qxl_wait_for_waiter(&crtc.new_fb)) {
		cli_error("scenario qxl: the execbuf thread did not queue on "
			  "new fb within %llu s", QXL_SETUP_NS / 1000000000);
		return CLI_EXIT_FAILURE;
	}
	/* Unless a back-off injected by TTMSIM_WW_INJECT released it. */
	cycle = ww_mutex_owner_ctx(&crtc.old_fb.resv) != NULL;
	printf("  execbuf:   %s, waits for new fb\n", cycle ?
	       "holds old fb through its context" :
	       "backed off (injected -EDEADLK)");

	/* qxl_draw_dirty_fb(): its reservations go through a context. */
	ww_acquire_init(&ctx, &reservation_ww_class);
	printf("  dirty fb:  ww_acquire_init(), ww_mutex_lock(old fb, ctx)%s\n",
	       cycle ? ": unchecked, it\n             would wait for "
	       "execbuf, which waits for the page flip" : " ...");
	/* abort() flushes nothing. */
	fflush(stdout);
	ret = ww_mutex_lock(&crtc.old_fb.resv, &ctx);

	printf("  dirty fb:  ww_mutex_lock(old fb, ctx) returned %d\n", ret);
	return QXL_NOT_CAUGHT;
}

/*
 * Run the buggy page flip. Return: CLI_EXIT_FAILURE when the checker
 * stopped it, CLI_EXIT_DEADLOCK when not, -1 if it could not run.
 */
static int qxl_run_buggy(const struct qxl_config *cfg)
{
	int status, ret, sig;

	printf("\nbuggy page flip, in a child process (on a broken rule the "
	       "checker reports\non stderr and calls abort()):\n");
	ret = cli_run_child(qxl_page_flip_buggy, NULL, cfg->watchdog_s,
			    &status);
	if (ret == -ETIMEDOUT) {
		cli_error("scenario qxl: the buggy page flip had not ended "
			  "after %.1f s and was killed: it hung, so the "
			  "checker did not catch the qxl bug", cfg->watchdog_s);
		return CLI_EXIT_DEADLOCK;
	}
	if (ret) {
		cli_error("scenario qxl: cannot run the buggy page flip in a "
			  "child process: %s", strerror(-ret));
		return -1;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
		printf("=> stopped by the checker (SIGABRT) at that lock: "
		       "its report is above, on\n"
		       "   stderr. new fb was taken without a context, so no "
		       "back-off can release\n"
		       "   it: the page flip can deadlock with any context "
		       "that wants it.\n");
		fflush(stdout);
		return CLI_EXIT_FAILURE;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == QXL_NOT_CAUGHT) {
		cli_error("scenario qxl: the checker did not catch the qxl "
			  "bug: the lock through the context returned");
	} else if (WIFEXITED(status)) {
		cli_error("scenario qxl: the buggy page flip exited with "
			  "status %d instead of being stopped by the checker",
			  WEXITSTATUS(status));
	} else {
		sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		cli_error("scenario qxl: the buggy page flip was killed by "
			  "signal %d (%s), not by the checker's abort()", sig,
			  strsignal(sig));
	}
	return CLI_EXIT_DEADLOCK;
}

/* ------------------------------------------------------------------- */
/* After the fix: in this process. */

/*
 * qxl_crtc_page_flip() after the fix: the new framebuffer is reserved only
 * long enough to pin it, and qxl_draw_dirty_fb() takes every reservation
 * through one context, backing off properly if it must.
 */
static int qxl_page_flip_fixed(enum cli_checker checker)
{
	struct ww_acquire_ctx ctx;
	struct qxl_crtc crtc;
	struct qxl_bo *draw[] = { &crtc.new_fb, &crtc.old_fb };
	unsigned long backoffs = 0;
	int ret;

	printf("\nfixed page flip, in this process (checker %s):\n",
	       cli_checker_describe(checker));
	qxl_crtc_init(&crtc);

	/* Nothing else of the class is held: a plain reservation is fine. */
	ww_mutex_lock(&crtc.new_fb.resv, NULL);
	crtc.new_fb.pin_count++;
	ww_mutex_unlock(&crtc.new_fb.resv);
	printf("  page flip: qxl_bo_reserve(new fb), pin it, "
	       "qxl_bo_unreserve(new fb)\n");

	ww_acquire_init(&ctx, &reservation_ww_class);
	ret = qxl_reserve_all(draw, QXL_NR(draw), &ctx, &backoffs);
	if (ret) {
		ww_acquire_fini(&ctx);
		cli_error("scenario qxl: fixed page flip: ww_mutex_lock "
			  "returned %d", ret);
		return CLI_EXIT_FAILURE;
	}
	ww_acquire_done(&ctx);
	printf("  dirty fb:  ww_acquire_init(), new fb and old fb reserved "
	       "through it\n"
	       "             (%lu back-off%s), ww_acquire_done()\n", backoffs,
	       backoffs == 1 ? "" : "s");
	crtc.scanout = &crtc.new_fb;
	qxl_unreserve(draw, QXL_NR(draw), QXL_ALL(QXL_NR(draw)));
	ww_acquire_fini(&ctx);
	printf("  flip:      scanout is now %s; both unreserved, "
	       "ww_acquire_fini()\n", crtc.scanout->name);

	ww_mutex_lock(&crtc.new_fb.resv, NULL);
	crtc.new_fb.pin_count--;
	ww_mutex_unlock(&crtc.new_fb.resv);
	printf("  page flip: qxl_bo_reserve(new fb), unpin it, "
	       "qxl_bo_unreserve(new fb)\n");

	ww_mutex_destroy(&crtc.old_fb.resv);
	ww_mutex_destroy(&crtc.new_fb.resv);
	printf("=> fixed version completed: no lock taken without a context "
	       "was held\n   across the context\n");
	fflush(stdout);
	return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------- */
/* The command. */

static void qxl_usage(const char *path)
{
	printf("usage: ttmsim %s [OPTIONS]\n"
	       "\n"
	       "The bug fixed by Linux commit 7eb9974f3685 (\"drm/qxl:\n"
	       "avoid buffer reservation in qxl_crtc_page_flip\"). Two\n"
	       "framebuffers, old fb and new fb, are buffers whose\n"
	       "reservations are ww_mutexes of the Wait-Die class\n"
	       "reservation_ww_class.\n"
	       "\n"
	       "The buggy page flip reserves new fb without an acquire\n"
	       "context (qxl_bo_reserve) and keeps it while the dirty-fb draw\n"
	       "reserves old fb through a context; meanwhile an execbuf holds\n"
	       "old fb through its own context and waits for new fb. It runs\n"
	       "in a child process, where the ww_debug checker stops it at\n"
	       "the lock through the context (rule 1, ctx-after-null) with\n"
	       "its report on stderr and abort(), before it deadlocks.\n"
	       "Then the fixed page flip runs in this process: it pins new fb\n"
	       "under a short reservation, and the draw reserves both\n"
	       "framebuffers through one context.\n"
	       "\n"
	       "Options:\n"
	       "  --fixed             run only the fixed page flip\n"
	       "  --watchdog SECONDS  kill the buggy page flip if it has not\n"
	       "                      ended after this long (default 10,\n"
	       "                      decimals allowed)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "The buggy page flip needs a libttmsim built with\n"
	       "-Dww_debug=true (the default) and the checker on\n"
	       "(TTMSIM_WW_DEBUG unset or 1).\n"
	       "\n"
	       "Exit status: 1 the checker stopped the buggy page flip and\n"
	       "the fixed one completed (the expected outcome), 0 --fixed\n"
	       "completed, 2 usage error or no checker, 3 the checker did\n"
	       "not stop the buggy page flip (it hung until the watchdog\n"
	       "killed it, or ended some other way).\n", path);
}

enum {
	OPT_FIXED = CLI_OPT_HELP + 1,
	OPT_WATCHDOG,
};

static const struct option qxl_options[] = {
	{ "help", no_argument, NULL, CLI_OPT_HELP },
	{ "fixed", no_argument, NULL, OPT_FIXED },
	{ "watchdog", required_argument, NULL, OPT_WATCHDOG },
	{ NULL, 0, NULL, 0 },
};

/* The buggy page flip needs the checker on; 0 or CLI_EXIT_USAGE. */
static int qxl_need_checker(enum cli_checker checker, const char *path)
{
	if (checker == CLI_CHECKER_ABSENT) {
		cli_error("%s: the buggy page flip needs a libttmsim built "
			  "with -Dww_debug=true; this one has no checker, "
			  "and without it the page flip would deadlock (try "
			  "--fixed)", path);
		return CLI_EXIT_USAGE;
	}
	if (checker == CLI_CHECKER_OFF) {
		cli_error("%s: the ww_debug checker is switched off by "
			  "TTMSIM_WW_DEBUG=0 in the environment, and without "
			  "it the buggy page flip would deadlock; unset "
			  "TTMSIM_WW_DEBUG (or try --fixed)", path);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static int qxl_option(void *data, int c, const char *arg)
{
	struct qxl_config *cfg = data;

	switch (c) {
	case OPT_FIXED:
		cfg->fixed_only = true;
		return 0;
	case OPT_WATCHDOG:
		return cli_parse_seconds("--watchdog", arg, 3600,
					 &cfg->watchdog_s);
	}
	return CLI_EXIT_USAGE;
}

static const struct cli_options qxl_cli = {
	.long_options = qxl_options,
	.usage = qxl_usage,
	.parse = qxl_option,
};

int cmd_scenario_qxl(int argc, char **argv, const char *path)
{
	struct qxl_config cfg = { .watchdog_s = 10.0 };
	enum cli_checker checker;
	int ret;

	if (!cli_parse_options(&qxl_cli, &cfg, argc, argv, path, &ret))
		return ret;
	checker = cli_checker_state();
	if (!cfg.fixed_only && qxl_need_checker(checker, path))
		return CLI_EXIT_USAGE;

	printf("scenario qxl: Linux commit 7eb9974f3685, \"drm/qxl: avoid "
	       "buffer reservation\nin qxl_crtc_page_flip\": old fb and new "
	       "fb are ww_mutexes of the Wait-Die\nclass %s.\n",
	       reservation_ww_class.name);
	ret = CLI_EXIT_OK;
	if (!cfg.fixed_only) {
		ret = qxl_run_buggy(&cfg);
		if (ret < 0)
			return CLI_EXIT_FAILURE;
	}
	if (qxl_page_flip_fixed(checker))
		return CLI_EXIT_FAILURE;
	return ret;
}
