// SPDX-License-Identifier: MIT
/*
 * ttmsim: the command-line front end of libttmsim.
 *
 * The command tree is the tables below; a new subcommand is one entry in
 * them plus its run function (declared in cli.h).
 */
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cli.h"
#include "outfile.h"
#include "bench/bench.h"

#ifndef TTMSIM_VERSION
#error "TTMSIM_VERSION must be defined by the build"
#endif

static int cmd_help(int argc, char **argv, const char *path);

static const struct cli_command bench_commands[] = {
	{
		.name = "all",
		.args = "[OPTIONS]",
		.summary = "every benchmark, one JSON object with --json",
		.run = cmd_bench_all,
	},
	{
		.name = "bo",
		.args = "[OPTIONS]",
		.summary = "reserve+validate ns per buffer, eviction MiB/s",
		.run = cmd_bench_bo,
	},
	{
		.name = "execbuf",
		.args = "[OPTIONS]",
		.summary = "jobs per second through ttm_execbuf_submit, "
			   "sorted or not",
		.run = cmd_bench_execbuf,
	},
	{
		.name = "gpu",
		.args = "[OPTIONS]",
		.summary = "jobs per second through the fake GPU's engines",
		.run = cmd_bench_gpu,
	},
	{
		.name = "hellstrom",
		.args = "[OPTIONS]",
		.summary = "Hellstrom's experiment: WW vs WD rollbacks and time",
		.run = cmd_bench_hellstrom,
	},
	{
		.name = "ww",
		.args = "[OPTIONS]",
		.summary = "ww_mutex vs pthread mutexes, alone and contended",
		.run = cmd_bench_ww,
	},
	{ .name = NULL },
};

static const struct cli_command scenario_commands[] = {
	{
		.name = "abba",
		.args = "[OPTIONS]",
		.summary = "two threads lock two buffers in opposite order",
		.run = cmd_scenario_abba,
	},
	{
		.name = "qxl",
		.args = "[OPTIONS]",
		.summary = "the qxl page flip bug the ww_debug checker catches",
		.run = cmd_scenario_qxl,
	},
	{ .name = NULL },
};

static const struct cli_command commands[] = {
	{
		.name = "bench",
		.subcommands = bench_commands,
		.noun = "benchmark",
	},
	{
		.name = "run",
		.args = "[--workload FILE] [OPTIONS]",
		.summary = "run an execbuf workload through the whole stack",
		.run = cmd_run,
	},
	{
		.name = "scenario",
		.subcommands = scenario_commands,
		.noun = "scenario",
	},
	{
		.name = "stress",
		.args = "[OPTIONS]",
		.summary = "random workloads through run; a failure shrunk",
		.run = cmd_stress,
	},
	{
		.name = "help",
		.args = "[COMMAND...]",
		.summary = "show the usage of ttmsim or of a command",
		.run = cmd_help,
	},
	{ .name = NULL },
};

static const struct cli_command root = {
	.name = "ttmsim",
	.subcommands = commands,
	.noun = "command",
};

/* "ttmsim help bench ww" is "ttmsim bench ww --help". */
static int cmd_help(int argc, char **argv, const char *path)
{
	static char help_flag[] = "--help";
	char **words;
	int i, ret;

	(void)path;
	if (argc < 2) {
		cli_usage(stdout, &root, "");
		return CLI_EXIT_OK;
	}
	words = calloc((size_t)argc + 1, sizeof(*words));
	if (!words) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (i = 1; i < argc; i++)
		words[i - 1] = argv[i];
	words[argc - 1] = help_flag;
	ret = cli_dispatch(&root, argc, words, "");
	free(words);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		if (argc > 2) {
			cli_error("unexpected argument '%s'", argv[2]);
			return CLI_EXIT_USAGE;
		}
		printf("ttmsim %s\n", TTMSIM_VERSION);
		/* Which library flavour this is; scripts test for it. */
		printf("ww_debug checker: %s\n",
		       cli_checker_describe(cli_checker_state()));
		return cli_flush_stdout(CLI_EXIT_OK);
	}
	/* Whatever the command printed must have got out. */
	return cli_flush_stdout(cli_dispatch(&root, argc - 1, argv + 1, ""));
}
