// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: a case run in a forked child.
 *
 * Why a child: whatever the run does to its process stays there. A
 * sanitizer's report goes to a stderr the parent reads whole, also when
 * the run passes; a crash or an abort() ends the child, not the stress
 * run, which reports it; the run's signal mask (it keeps SIGINT and
 * SIGTERM blocked after it ends, so that its summary is not cut short)
 * and the watchdog's _exit() on a stall are the child's; leaks and
 * ThreadSanitizer's end-of-process checks run at the child's exit(), as
 * for `ttmsim run` itself.
 *
 * Fork safety: the parent never starts a thread (the run's threads are
 * the child's, started after the fork), so the child inherits no lock
 * held by a thread it lacks, and ThreadSanitizer, which only supports a
 * fork from a single-threaded process, is content.
 *
 * The parent waits in ppoll() on the child's output, with SIGINT and
 * SIGTERM unblocked only there, so that one that comes is seen at once:
 * it is passed on to the child (whose run stops, exit 130). The same
 * wait wakes for the status line timer and the deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "stress.h"

static volatile sig_atomic_t got_signal;   /* the last one */
static volatile sig_atomic_t signal_count;

static void on_signal(int sig)
{
	got_signal = sig;
	signal_count++;
}

void stress_signals_catch(struct sigaction old[2])
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: waits end, EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
}

void stress_signals_restore(const struct sigaction old[2])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
}

int stress_interrupted(void)
{
	return got_signal;
}

void stress_timer_check(struct stress_timer *t, uint64_t now)
{
	if (!t || !t->period_ns || now < t->next_ns)
		return;
	t->fire(t->data, now);
	t->next_ns += t->period_ns;
	if (t->next_ns <= now)  /* late (a long shrink step): no burst */
		t->next_ns = now + t->period_ns;
}

int stress_run_argv(const struct stress_case *c, const char *path,
		    const struct stress_exec *ex, char **argv, char buf[640])
{
	static char arg0[] = "run", wl_flag[] = "--workload",
		    wdflag[] = "--watchdog", wd[] = STRESS_WATCHDOG_S,
		    cflag[] = "--check-every";
	char *every = buf + 512;
	int argc = 0;

	argv[argc++] = arg0;
	argv[argc++] = wl_flag;
	argv[argc++] = (char *)path;
	argc += stress_case_flags(c, argv + argc, buf);
	argv[argc++] = wdflag;
	argv[argc++] = wd;
	if (ex->check_every_s > 0) {
		snprintf(every, 640 - 512, "%g", ex->check_every_s);
		argv[argc++] = cflag;
		argv[argc++] = every;
	}
	return argc;
}

/* In the child: run the case, output into @fd; never returns. */
static void __attribute__((noreturn)) child_main(int argc, char **argv,
						 int fd,
						 const sigset_t *mask)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(CLI_EXIT_FAILURE);
	close(fd);
	/* exit(), not _exit(): the sanitizers check at exit, as for run. */
	exit(cmd_run(argc, argv, "run"));
}

/* How long ppoll() may wait: until the timer or the deadline; -1: none. */
static struct timespec *wait_for(const struct stress_exec *ex,
				 struct timespec *ts)
{
	uint64_t now = cli_now_ns(), until = UINT64_MAX, left;

	if (ex->timer && ex->timer->period_ns)
		until = ex->timer->next_ns;
	if (ex->deadline_ns && ex->deadline_ns < until)
		until = ex->deadline_ns;
	if (until == UINT64_MAX)
		return NULL;
	left = until > now ? until - now : 0;
	ts->tv_sec = (time_t)(left / 1000000000);
	ts->tv_nsec = (long)(left % 1000000000);
	return ts;
}

/* The parent's side: read @fd to its end, then reap @pid. */
static void parent_wait(pid_t pid, int fd, const struct stress_exec *ex,
			const sigset_t *unblocked, struct stress_outcome *out)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	sig_atomic_t passed = signal_count;
	struct timespec ts;
	char buf[4096];
	int status = 0;
	bool more = true;

	while (more) {
		uint64_t now;
		int n = ppoll(&pfd, 1, wait_for(ex, &ts), unblocked);

		if (n > 0) {
			ssize_t got = read(fd, buf, sizeof(buf));

			if (got > 0)
				stress_outcome_feed(out, buf, (size_t)got);
			else if (got == 0 || errno != EINTR)
				more = false;
		}
		if (signal_count != passed) {
			passed = signal_count;
			kill(pid, got_signal);
		}
		now = cli_now_ns();
		stress_timer_check(ex->timer, now);
		if (ex->deadline_ns && now >= ex->deadline_ns &&
		    !out->timed_out) {
			out->timed_out = true;
			kill(pid, SIGKILL);
		}
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	stress_outcome_end(out, status);
}

int stress_case_run(const struct stress_case *c, const char *path,
		    const struct stress_exec *ex, struct stress_outcome *out)
{
	char *argv[STRESS_MAX_ARGS + 16], buf[640];
	static char quiet[] = "--quiet", noprog[] = "--no-progress";
	sigset_t block, old;
	int argc, fds[2], err;
	pid_t pid;

	stress_outcome_init(out);
	if (workload_save(&c->wl, path))
		return -EIO;
	argc = stress_run_argv(c, path, ex, argv, buf);
	argv[argc++] = quiet;
	argv[argc++] = noprog;
	argv[argc] = NULL;

	/* Blocked but in ppoll(): no signal is missed between two checks. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (stress_interrupted()) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		out->status = 130;
		return 0;
	}
	if (pipe(fds)) {
		err = -errno;
		goto fail;
	}
	/* Nothing buffered is written twice, by the child too. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(argc, argv, fds[1], &old);
	}
	close(fds[1]);
	parent_wait(pid, fds[0], ex, &old, out);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
fail:
	sigprocmask(SIG_SETMASK, &old, NULL);
	cli_error("stress: cannot run a case: %s", strerror(-err));
	return err;
}
