/* SPDX-License-Identifier: MIT */
/*
 * The library's one clock, CLOCK_MONOTONIC: readings in nanoseconds, and
 * the absolute deadlines that pthread_cond_timedwait() (on a condition
 * variable set to this clock), clock_nanosleep(TIMER_ABSTIME) and the
 * futex wait of ww/thread.c take. Not installed.
 */
#ifndef TTMSIM_UTIL_TIME_H
#define TTMSIM_UTIL_TIME_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ull

/* CLOCK_MONOTONIC now, in nanoseconds (far below 2^63: time since boot). */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The CLOCK_MONOTONIC time @ns, as an absolute deadline. */
static inline struct timespec mono_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

/*
 * The absolute deadline @delay_ns from now. A delay past 2^62 ns (146
 * years) is forever anyway: it is cut there so that nothing overflows.
 */
static inline struct timespec mono_deadline_in(uint64_t delay_ns)
{
	if (delay_ns > UINT64_C(1) << 62)
		delay_ns = UINT64_C(1) << 62;
	return mono_timespec(mono_ns() + delay_ns);
}

#endif /* TTMSIM_UTIL_TIME_H */
