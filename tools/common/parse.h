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
#include <string.h>

/*
 * A word echoed in a message: "'%.*s%s'" with CLI_ECHO(s, len) prints at
 * most its first CLI_ECHO_MAX bytes (cut at a UTF-8 character boundary),
 * then "..." if it was cut; a 500 KB word makes a one-line message.
 */
#define CLI_ECHO_MAX 40
#define CLI_ECHO(s, len) cli_echo_len((s), (len)), (s), \
	((len) > CLI_ECHO_MAX ? "..." : "")
#define CLI_ECHO_STR(s) CLI_ECHO((s), strlen(s))

/** cli_echo_len - how many bytes of @s (of @len) CLI_ECHO() prints. */
int cli_echo_len(const char *s, size_t len);

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
