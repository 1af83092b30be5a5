// SPDX-License-Identifier: MIT
/* Option values: unsigned integers, lists of them, seconds. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse.h"

int cli_echo_len(const char *s, size_t len)
{
	size_t n = len;

	if (n > CLI_ECHO_MAX) {
		n = CLI_ECHO_MAX;
		/* Not inside a UTF-8 sequence: back to its lead byte. */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return (int)n;
}

/* Parse @len chars of @s as a decimal: 0, -EINVAL or -ERANGE. */
static int parse_decimal(const char *s, size_t len, uint64_t *ret_value)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret_value = v;
	return 0;
}

static int check_uint(const char *flag, const char *s, size_t len,
		      const char *whole, uint64_t min, uint64_t max,
		      uint64_t *ret_value)
{
	/* Name the element, and the whole list if it is one. */
	const char *in = whole ? "' in '" : "";
	uint64_t v = 0;
	int ret;

	ret = parse_decimal(s, len, &v);
	if (ret == -EINVAL) {
		cli_error("%s: '%.*s%s%s%.*s%s' is not a number", flag,
			  CLI_ECHO(s, len), in,
			  CLI_ECHO_STR(whole ? whole : ""));
		return CLI_EXIT_USAGE;
	}
	if (ret || v < min || v > max) {
		cli_error("%s: '%.*s%s%s%.*s%s' is out of range (%llu to %llu)",
			  flag, CLI_ECHO(s, len), in,
			  CLI_ECHO_STR(whole ? whole : ""),
			  (unsigned long long)min, (unsigned long long)max);
		return CLI_EXIT_USAGE;
	}
	*ret_value = v;
	return 0;
}

int cli_parse_uint(const char *flag, const char *arg, uint64_t min,
		   uint64_t max, uint64_t *ret_value)
{
	return check_uint(flag, arg, strlen(arg), NULL, min, max, ret_value);
}

int cli_parse_uint_list(const char *flag, const char *arg, uint64_t min,
			uint64_t max, uint64_t *ret_values, size_t max_n,
			size_t *ret_n)
{
	const char *s = arg;
	size_t n = 0;

	for (;;) {
		size_t len = strcspn(s, ",");

		if (n == max_n) {
			cli_error("%s: '%.*s%s' has more than %zu values",
				  flag, CLI_ECHO_STR(arg), max_n);
			return CLI_EXIT_USAGE;
		}
		if (check_uint(flag, s, len, arg, min, max, &ret_values[n]))
			return CLI_EXIT_USAGE;
		n++;
		if (!s[len])
			break;
		s += len + 1;
	}
	*ret_n = n;
	return 0;
}

int cli_parse_seconds(const char *flag, const char *arg, double max,
		      double *ret_seconds)
{
	char *end;
	double v;

	/* Plain decimals only: no sign, "inf", "nan", hex or exponent. */
	if (!arg[0] || strspn(arg, "0123456789.") != strlen(arg)) {
		cli_error("%s: '%.*s%s' is not a number", flag,
			  CLI_ECHO_STR(arg));
		return CLI_EXIT_USAGE;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (*end || end == arg) {
		cli_error("%s: '%.*s%s' is not a number", flag,
			  CLI_ECHO_STR(arg));
		return CLI_EXIT_USAGE;
	}
	if (errno == ERANGE || !(v > 0) || v > max) {
		cli_error("%s: '%.*s%s' is out of range (more than 0, at most "
			  "%g)", flag, CLI_ECHO_STR(arg), max);
		return CLI_EXIT_USAGE;
	}
	*ret_seconds = v;
	return 0;
}
