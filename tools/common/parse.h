/* SPDX-License-Identifier: MIT */
/*
 * Value parsers for option arguments, strict (no sign, no "inf", nothing
 * after the number) and with one message for each kind of bad value.
 *
 * @flag names the option in the message ("--rounds"). Each writes
 * *ret_* only on success and returns 0, or prints an error and returns
 * CLI_EXIT_USAGE.
 */
#ifndef TTMSIM_TOOLS_PARSE_H
#define TTMSIM_TOOLS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/** cli_parse_uint - a decimal unsigned integer in [@min, @max]. */
int cli_parse_uint(const char *flag, const char *arg, uint64_t min,
		   uint64_t max, uint64_t *ret_value);

/** cli_parse_uint_list - a comma-separated list of at most @max_n of them. */
int cli_parse_uint_list(const char *flag, const char *arg, uint64_t min,
			uint64_t max, uint64_t *ret_values, size_t max_n,
			size_t *ret_n);

/** cli_parse_seconds - a decimal number of seconds, > 0 and <= @max. */
int cli_parse_seconds(const char *flag, const char *arg, double max,
		      double *ret_seconds);

#endif /* TTMSIM_TOOLS_PARSE_H */
