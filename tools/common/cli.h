/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the ttmsim command-line tool: the command table and its
 * dispatcher, option and value parsing with uniform error messages, exit
 * statuses, and small output helpers.
 *
 * Every error is one line on stderr that starts with "ttmsim: " and names
 * the offending word; usage errors exit with CLI_EXIT_USAGE.
 */
#ifndef TTMSIM_TOOLS_CLI_H
#define TTMSIM_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1,  /* the command ran and found something wrong */
	CLI_EXIT_USAGE = 2,    /* bad command line */
	CLI_EXIT_DEADLOCK = 3, /* a watchdog saw no progress */
};

/*
 * The values of all long options start here, even of those that also have a
 * short form (which is then a separate case of the switch): that is how
 * cli_getopt_error() tells a bad long option from a bad short one.
 */
#define CLI_OPT_LONG 0x100

/**
 * struct cli_command - one word of the command tree.
 *
 * A leaf has @run; a group has @subcommands (terminated by an entry with a
 * NULL @name) and @noun, what its children are called ("benchmark").
 * @run gets its arguments getopt-style: argv[0] is the command's own name.
 * @path is the command's words after "ttmsim" ("bench ww"), for messages.
 */
struct cli_command {
	const char *name;
	const char *args;    /* synopsis after the words, e.g. "[OPTIONS]" */
	const char *summary; /* one line, for the listing in --help */
	int (*run)(int argc, char **argv, const char *path);
	const struct cli_command *subcommands;
	const char *noun;
};

/**
 * cli_dispatch - run the subcommand of group @cmd named by argv[0].
 * @argv: the words after @cmd's own name; @argc counts them.
 * @path: @cmd's words after "ttmsim", "" for the root.
 *
 * "--help" or "-h" prints the group's usage to stdout.
 * Return: the exit status of the subcommand, or CLI_EXIT_USAGE.
 */
int cli_dispatch(const struct cli_command *cmd, int argc, char **argv,
		 const char *path);

/** cli_usage - print the usage of group @cmd, listing every leaf under it. */
void cli_usage(FILE *f, const struct cli_command *cmd, const char *path);

/** cli_error - print "ttmsim: <message>" and a newline to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Option parsing. A command calls cli_getopt_reset(), then getopt_long()
 * with an optstring starting with ':' (so that getopt prints nothing), hands
 * '?' and ':' to cli_getopt_error() and ends with cli_no_operands().
 */

/** cli_getopt_reset - make the next getopt_long() start from scratch. */
void cli_getopt_reset(void);

/**
 * cli_getopt_error - report the error getopt_long() just returned.
 * @c: what getopt_long() returned, '?' or ':'.
 *
 * Return: CLI_EXIT_USAGE.
 */
int cli_getopt_error(const char *path, int c, char *const argv[]);

/**
 * cli_no_operands - complain if words are left after the options.
 *
 * Return: 0, or CLI_EXIT_USAGE after printing an error.
 */
int cli_no_operands(const char *path, int argc, char *const argv[]);

/*
 * Value parsers. @flag names the option in the message ("--rounds").
 * Each writes *ret_* only on success and returns 0, or prints an error and
 * returns CLI_EXIT_USAGE.
 */

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

/** cli_now_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t cli_now_ns(void);

/** cli_sleep_until_ns - sleep until CLOCK_MONOTONIC reaches @deadline. */
void cli_sleep_until_ns(uint64_t deadline);

/*
 * The library's debug checker (ttmsim/ww_debug.h) as a command sees it.
 */
enum cli_checker {
	CLI_CHECKER_ABSENT, /* libttmsim built with -Dww_debug=false */
	CLI_CHECKER_OFF,    /* built in, switched off (TTMSIM_WW_DEBUG=0) */
	CLI_CHECKER_ON,
};

/**
 * cli_checker_state - whether the checker is built in and on.
 *
 * Changes nothing. Locking: only while no thread holds a ww_mutex or has
 * an acquire context open, as for ww_debug_set_enabled(), which it uses.
 */
enum cli_checker cli_checker_state(void);

/**
 * cli_parse_checker - the value of a --checker flag, "on" or "off", into
 * *@on; "on" is a usage error when @state says it is not built in.
 */
int cli_parse_checker(const char *arg, enum cli_checker state, bool *on);

/** cli_checker_describe - @state in words, e.g. "not built in (...)". */
const char *cli_checker_describe(enum cli_checker state);

/**
 * cli_checker_switch - switch a built-in checker on or off.
 *
 * Only while no thread holds a ww_mutex or has an acquire context open.
 * Return: false if the checker is not built in (nothing changes).
 */
bool cli_checker_switch(bool on);

/**
 * cli_run_child - run @fn(@arg) in a forked child and wait for it to end.
 * @timeout_s: after this long, kill the child (SIGKILL) and reap it.
 * @ret_status: the child's wait status (see waitpid()) when it ended.
 *
 * The child exits with what @fn returns, after flushing stdout and stderr
 * (which are flushed before the fork too, so that nothing buffered is
 * written twice). Call it only from a single-threaded process: a child
 * of a threaded one may find a lock held forever by a thread it lacks.
 * Return: 0 when the child ended, -ETIMEDOUT when it was killed, or a
 * negative errno if it could not be started or waited for.
 */
int cli_run_child(int (*fn)(void *arg), void *arg, double timeout_s,
		  int *ret_status);

/** cli_json_string - write @s as a JSON string literal. */
void cli_json_string(FILE *f, const char *s);

/** cli_json_number - write @v with @decimals decimals, or null if infinite. */
void cli_json_number(FILE *f, double v, int decimals);

/*
 * Pseudo-random numbers, the same on every platform, so that a seed
 * replays a run: splitmix64 (any state, 0 too), and xorshift64* (faster;
 * its state must not be 0: seed it from splitmix64).
 */
static inline uint64_t cli_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t cli_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* The commands, one per file. */
int cmd_bench_bo(int argc, char **argv, const char *path);
int cmd_bench_execbuf(int argc, char **argv, const char *path);
int cmd_bench_gpu(int argc, char **argv, const char *path);
int cmd_bench_ww(int argc, char **argv, const char *path);
int cmd_run(int argc, char **argv, const char *path);
int cmd_scenario_abba(int argc, char **argv, const char *path);
int cmd_scenario_qxl(int argc, char **argv, const char *path);

#endif /* TTMSIM_TOOLS_CLI_H */
