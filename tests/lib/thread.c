// SPDX-License-Identifier: MIT
/* Threads that must start and join (on the main thread), and the clock. */
#include <sys/syscall.h>

#include "helpers.h"

pthread_t start_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
	return t;
}

void join_thread(pthread_t t)
{
	assert_int_equal(pthread_join(t, NULL), 0);
}

pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}
