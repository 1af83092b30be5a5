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

bool thread_futex_wait(pid_t tid, uintptr_t *ret_addr, unsigned long *ret_val)
{
	unsigned long nr, addr, op, val;
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fscanf(f, "%lu %lx %lx %lx", &nr, &addr, &op, &val);
	fclose(f);
	if (n != 4 || nr != SYS_futex)
		return false;
	*ret_addr = (uintptr_t)addr;
	*ret_val = val;
	return true;
}
