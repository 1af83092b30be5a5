/* SPDX-License-Identifier: MIT */
/*
 * Running a piece of a command in a forked child, for what may crash or
 * hang on purpose (a checker's abort(), a deadlock) without taking the
 * command down with it.
 */
#ifndef TTMSIM_TOOLS_CHILD_H
#define TTMSIM_TOOLS_CHILD_H

/**
 * cli_run_child - run @fn(@arg) in a forked child and wait for it to end.
 * @timeout_s: after this long, kill the child (SIGKILL) and reap it.
 * @ret_status: the child's wait status (see waitpid()) when it ended.
 *
 * The child exits with what @fn returns, after flushing stdout and stderr
 * (which are flushed before the fork too, so that nothing buffered is
 * written twice). Call it only from a single-threaded process: a child
 * of a threaded one may find a lock held forever by a thread it lacks.
 * Return: 0 when the child ended, -ETIMEDOUT when it was killed, or a
 * negative errno if it could not be started or waited for.
 */
int cli_run_child(int (*fn)(void *arg), void *arg, double timeout_s,
		  int *ret_status);

#endif /* TTMSIM_TOOLS_CHILD_H */
