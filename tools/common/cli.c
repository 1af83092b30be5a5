// SPDX-License-Identifier: MIT
/* Command dispatch, option errors, value parsing and output helpers. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ttmsim/ww_debug.h"
#include "cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ttmsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* "bench: " for a command's messages, "" at the root. */
static const char *sep(const char *path)
{
	return *path ? ": " : "";
}

static void print_upper(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(toupper((unsigned char)*s), f);
}

/*
 * Print (or, with @f NULL, only measure) one line per leaf under @cmd:
 * its words after @prefix, its synopsis and its summary. Return the width
 * of the widest "words synopsis" column.
 */
static size_t list_leaves(FILE *f, const struct cli_command *cmd,
			  const char *prefix, size_t width)
{
	const struct cli_command *sub;
	size_t widest = 0;

	for (sub = cmd->subcommands; sub->name; sub++) {
		char words[128];
		size_t len;

		snprintf(words, sizeof(words), "%s%s%s", prefix,
			 *prefix ? " " : "", sub->name);
		if (sub->subcommands) {
			len = list_leaves(f, sub, words, width);
		} else {
			len = strlen(words) + 1 + strlen(sub->args);
			if (f)
				fprintf(f, "  %s %-*s  %s\n", words,
					(int)(width - strlen(words) - 1),
					sub->args, sub->summary);
		}
		if (len > widest)
			widest = len;
	}
	return widest;
}

void cli_usage(FILE *f, const struct cli_command *cmd, const char *path)
{
	fprintf(f, "usage: ttmsim %s%s", path, *path ? " " : "");
	print_upper(f, cmd->noun);
	fputs(" [ARGS]\n", f);
	if (!*path)
		fputs("       ttmsim --help | --version\n", f);
	fprintf(f, "\n%c%ss:\n", toupper((unsigned char)cmd->noun[0]),
		cmd->noun + 1);
	list_leaves(f, cmd, "", list_leaves(NULL, cmd, "", 0));
	fprintf(f, "\nRun 'ttmsim %s%s", path, *path ? " " : "");
	print_upper(f, cmd->noun);
	fputs(" --help' for its options.\n", f);
}

int cli_dispatch(const struct cli_command *cmd, int argc, char **argv,
		 const char *path)
{
	const struct cli_command *sub;
	char subpath[128];

	if (argc < 1) {
		cli_error("%s%smissing %s (try 'ttmsim %s%s--help')", path,
			  sep(path), cmd->noun, path, *path ? " " : "");
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		cli_usage(stdout, cmd, path);
		return CLI_EXIT_OK;
	}
	if (argv[0][0] == '-') {
		cli_error("%s%sunknown option '%s'", path, sep(path), argv[0]);
		return CLI_EXIT_USAGE;
	}
	for (sub = cmd->subcommands; sub->name; sub++)
		if (!strcmp(sub->name, argv[0]))
			break;
	if (!sub->name) {
		cli_error("%s%sunknown %s '%s'", path, sep(path), cmd->noun,
			  argv[0]);
		return CLI_EXIT_USAGE;
	}
	snprintf(subpath, sizeof(subpath), "%s%s%s", path, *path ? " " : "",
		 sub->name);
	if (sub->run)
		return sub->run(argc, argv, subpath);
	return cli_dispatch(sub, argc - 1, argv + 1, subpath);
}

void cli_getopt_reset(void)
{
	/* glibc: 0, not 1, also forgets a half-parsed "-abc" and permuting. */
	optind = 0;
	opterr = 0;
}

int cli_getopt_error(const char *path, int c, char *const argv[])
{
	/* For a long option, the word it came in, without any "=value". */
	const char *word = argv[optind - 1];
	int len = (int)strcspn(word, "=");
	bool is_short = optopt > 0 && optopt < CLI_OPT_LONG;

	if (c == ':') {
		if (is_short)
			cli_error("-%c: missing value", optopt);
		else
			cli_error("%.*s: missing value", len, word);
	} else if (is_short) {
		cli_error("%s%sunknown option '-%c'", path, sep(path), optopt);
	} else if (optopt) {
		cli_error("%s%soption '%.*s' takes no value", path, sep(path),
			  len, word);
	} else {
		cli_error("%s%sunknown option '%.*s'", path, sep(path), len,
			  word);
	}
	return CLI_EXIT_USAGE;
}

int cli_no_operands(const char *path, int argc, char *const argv[])
{
	if (optind >= argc)
		return 0;
	cli_error("%s%sunexpected argument '%s'", path, sep(path),
		  argv[optind]);
	return CLI_EXIT_USAGE;
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
		cli_error("%s: '%.*s%s%s' is not a number", flag, (int)len, s,
			  in, whole ? whole : "");
		return CLI_EXIT_USAGE;
	}
	if (ret || v < min || v > max) {
		cli_error("%s: '%.*s%s%s' is out of range (%llu to %llu)",
			  flag, (int)len, s, in, whole ? whole : "",
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
			cli_error("%s: '%s' has more than %zu values", flag,
				  arg, max_n);
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
		cli_error("%s: '%s' is not a number", flag, arg);
		return CLI_EXIT_USAGE;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (*end || end == arg) {
		cli_error("%s: '%s' is not a number", flag, arg);
		return CLI_EXIT_USAGE;
	}
	if (errno == ERANGE || !(v > 0) || v > max) {
		cli_error("%s: '%s' is out of range (more than 0, at most %g)",
			  flag, arg, max);
		return CLI_EXIT_USAGE;
	}
	*ret_seconds = v;
	return 0;
}

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cli_sleep_until_ns(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / 1000000000u),
		.tv_nsec = (long)(deadline % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

enum cli_checker cli_checker_state(void)
{
	if (ww_debug_enabled())
		return CLI_CHECKER_ON;
	/* Off already, so switching it off only tells whether it exists. */
	if (ww_debug_set_enabled(false) == -EOPNOTSUPP)
		return CLI_CHECKER_ABSENT;
	return CLI_CHECKER_OFF;
}

const char *cli_checker_describe(enum cli_checker state)
{
	switch (state) {
	case CLI_CHECKER_ON:
		return "built in, on";
	case CLI_CHECKER_OFF:
		return "built in, off (TTMSIM_WW_DEBUG=0)";
	case CLI_CHECKER_ABSENT:
		break;
	}
	return "not built in (-Dww_debug=false)";
}

bool cli_checker_switch(bool on)
{
	return ww_debug_set_enabled(on) == 0;
}

int cli_run_child(int (*fn)(void *arg), void *arg, double timeout_s,
		  int *ret_status)
{
	uint64_t deadline, now, step = 100000; /* 0.1 ms, growing to 10 ms */
	int status, err;
	pid_t pid, got;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int ret = fn(arg);

		fflush(stdout);
		fflush(stderr);
		_exit(ret);
	}
	/*
	 * Poll rather than wait for SIGCHLD: no signal disposition of the
	 * caller changes, and a child that ends in a few milliseconds (the
	 * usual case) is reaped within a fraction of one.
	 */
	deadline = cli_now_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == pid) {
			*ret_status = status;
			return 0;
		}
		if (got < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		now = cli_now_ns();
		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		cli_sleep_until_ns(now + step < deadline ? now + step :
				   deadline);
		if (step < 10000000)
			step *= 2;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err;
}

void cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void cli_json_number(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, "%.*f", decimals, v);
	else
		fputs("null", f);
}

int cli_parse_checker(const char *arg, enum cli_checker state, bool *on)
{
	if (strcmp(arg, "on") && strcmp(arg, "off")) {
		cli_error("--checker: '%s' is not one of on, off", arg);
		return CLI_EXIT_USAGE;
	}
	*on = !strcmp(arg, "on");
	if (*on && state == CLI_CHECKER_ABSENT) {
		cli_error("--checker: 'on' needs a libttmsim built with "
			  "-Dww_debug=true; this one has no checker");
		return CLI_EXIT_USAGE;
	}
	return 0;
}
