// SPDX-License-Identifier: MIT
/* A function run in a forked child, killed if it outlives its timeout. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "clock.h"

int cli_run_child(int (*fn)(void *arg), void *arg, double timeout_s,
		  int *ret_status)
{
	uint64_t deadline, now, step = 100000; /* 0.1 ms, growing to 10 ms */
	int status, err;
	pid_t pid, got;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int ret = fn(arg);

		fflush(stdout);
		fflush(stderr);
		_exit(ret);
	}
	/*
	 * Poll rather than wait for SIGCHLD: no signal disposition of the
	 * caller changes, and a child that ends in a few milliseconds (the
	 * usual case) is reaped within a fraction of one.
	 */
	deadline = cli_now_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == pid) {
			*ret_status = status;
			return 0;
		}
		if (got < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		now = cli_now_ns();
		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		cli_sleep_until_ns(now + step < deadline ? now + step :
				   deadline);
		if (step < 10000000)
			step *= 2;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err;
}
