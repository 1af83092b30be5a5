/* SPDX-License-Identifier: MIT */
/*
 * The ttmsim command line: the command tree and its dispatcher, exit
 * statuses, error messages, and the glue around getopt_long(). The rest
 * of the kit has a header per job: parse.h (option values), clock.h,
 * rng.h, checker.h (the ww_debug checker), child.h (a forked child with a
 * timeout), watchdog.h (the stall watchdog and its holder report),
 * phase.h (the names of a submission's phases), outfile.h (output files
 * written whole or not at all, and the check that stdout got out).
 *
 * Every error is one line on stderr that starts with "ttmsim: " and names
 * the offending word; usage errors exit with CLI_EXIT_USAGE.
 */
#ifndef TTMSIM_TOOLS_CLI_H
#define TTMSIM_TOOLS_CLI_H

#include <stdbool.h>
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
 * Option parsing. A command calls cli_parse_options(), or does what it
 * does: cli_getopt_reset(), then getopt_long() with an optstring starting
 * with ':' (so that getopt prints nothing), '?' and ':' handed to
 * cli_getopt_error(), and cli_no_operands() at the end.
 */

struct option;

/* The value of "help" in a command's long options; the others are above. */
#define CLI_OPT_HELP CLI_OPT_LONG

/**
 * struct cli_options - what cli_parse_options() needs to know of a command.
 * @long_options: for getopt_long(), with { "help", no_argument, NULL,
 *	CLI_OPT_HELP }; the only short option is -h.
 * @usage: print the command's help on stdout.
 * @parse: take option @c (a value of @long_options above CLI_OPT_HELP)
 *	and its argument @arg (NULL if it has none) into @cfg; 0, or
 *	CLI_EXIT_USAGE after a message.
 */
struct cli_options {
	const struct option *long_options;
	void (*usage)(const char *path);
	int (*parse)(void *cfg, int c, const char *arg);
};

/**
 * cli_parse_options - parse a command's argv, getopt-style, into @cfg.
 *
 * Options are taken in order, so "--help" ends the parse where it stands.
 * Return: true if the command is to run: every option was taken and no
 * operand is left. False with *@ret_status the command's exit status:
 * CLI_EXIT_OK after the help, CLI_EXIT_USAGE after an error message.
 */
bool cli_parse_options(const struct cli_options *opts, void *cfg, int argc,
		       char **argv, const char *path, int *ret_status);

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


/* The commands, one per file. */
int cmd_bench_bo(int argc, char **argv, const char *path);
int cmd_bench_execbuf(int argc, char **argv, const char *path);
int cmd_bench_gpu(int argc, char **argv, const char *path);
int cmd_bench_hellstrom(int argc, char **argv, const char *path);
int cmd_bench_ww(int argc, char **argv, const char *path);
int cmd_run(int argc, char **argv, const char *path);
int cmd_scenario_abba(int argc, char **argv, const char *path);
int cmd_scenario_qxl(int argc, char **argv, const char *path);
int cmd_stress(int argc, char **argv, const char *path);

#endif /* TTMSIM_TOOLS_CLI_H */
