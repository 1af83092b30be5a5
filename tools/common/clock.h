/* SPDX-License-Identifier: MIT */
/*
 * The tools' clock: CLOCK_MONOTONIC in nanoseconds, which every time of a
 * run, a benchmark or a watchdog is measured on.
 */
#ifndef TTMSIM_TOOLS_CLOCK_H
#define TTMSIM_TOOLS_CLOCK_H

#include <stdint.h>
#include <time.h>

/** cli_now_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t cli_now_ns(void);

/** cli_sleep_until_ns - sleep until CLOCK_MONOTONIC reaches @deadline. */
void cli_sleep_until_ns(uint64_t deadline);

/** cli_timespec - @ns, a time of cli_now_ns(), as an absolute timespec. */
static inline struct timespec cli_timespec(uint64_t ns)
{
	return (struct timespec){
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};
}

#endif /* TTMSIM_TOOLS_CLOCK_H */
