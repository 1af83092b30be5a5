// SPDX-License-Identifier: MIT
/*
 * Soft checks: failures recorded from any thread, the first one kept for
 * the message that fails the test on the main thread.
 */
#include "helpers.h"

static pthread_mutex_t checks_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned int checks_failed;
static char checks_first[512];

void check_failed(const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s:%d: check failed (tid %d): %s\n", file, line,
		(int)test_gettid(), msg);
	pthread_mutex_lock(&checks_mutex);
	if (checks_failed++ == 0)
		snprintf(checks_first, sizeof(checks_first), "%s:%d: %s",
			 file, line, msg);
	pthread_mutex_unlock(&checks_mutex);
}

int checks_reset(void **state)
{
	(void)state;
	pthread_mutex_lock(&checks_mutex);
	checks_failed = 0;
	checks_first[0] = '\0';
	pthread_mutex_unlock(&checks_mutex);
	return 0;
}

void assert_checks_passed(void)
{
	unsigned int n;
	char first[sizeof(checks_first)];

	pthread_mutex_lock(&checks_mutex);
	n = checks_failed;
	memcpy(first, checks_first, sizeof(first));
	pthread_mutex_unlock(&checks_mutex);
	if (n)
		fail_msg("%u check(s) failed; first: %s", n, first);
}

unsigned int checks_failed_count(void)
{
	unsigned int n;

	pthread_mutex_lock(&checks_mutex);
	n = checks_failed;
	pthread_mutex_unlock(&checks_mutex);
	return n;
}
