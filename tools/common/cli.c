// SPDX-License-Identifier: MIT
/*
 * The command tree (dispatch and usage), errors, getopt glue, and the
 * benchmarks' hand-written JSON (going once they use json-c).
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

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

bool cli_parse_options(const struct cli_options *opts, void *cfg, int argc,
		       char **argv, const char *path, int *ret_status)
{
	int c;

	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts->long_options,
				NULL)) != -1) {
		if (c == 'h' || c == CLI_OPT_HELP) {
			opts->usage(path);
			*ret_status = CLI_EXIT_OK;
			return false;
		}
		if (c < CLI_OPT_LONG)
			*ret_status = cli_getopt_error(path, c, argv);
		else
			*ret_status = opts->parse(cfg, c, optarg);
		if (*ret_status)
			return false;
	}
	*ret_status = cli_no_operands(path, argc, argv);
	return *ret_status == 0;
}

