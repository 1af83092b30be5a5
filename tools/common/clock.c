// SPDX-License-Identifier: MIT
/* CLOCK_MONOTONIC in nanoseconds. */
#include <errno.h>

#include "clock.h"

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cli_sleep_until_ns(uint64_t deadline)
{
	struct timespec ts = cli_timespec(deadline);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}
