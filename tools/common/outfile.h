/* SPDX-License-Identifier: MIT */
/*
 * An output file that is either written completely or not at all: the
 * text goes to a temporary file next to it (same directory, so the
 * rename cannot cross file systems), which replaces it by rename() only
 * once every byte is written and the file closed without error. A failed
 * output leaves the old file, if any, as it was and no temporary behind.
 *
 * "-" is standard output, and a path that exists but is not a regular
 * file (/dev/null, a FIFO, a terminal) is written in place: neither can be
 * replaced, and a reader of a FIFO wants the bytes, not a rename. For a
 * symbolic link, the file it points to is replaced, and the link stays.
 *
 * The temporary file is ".ttmsim.XXXXXX" (six random characters, created
 * exclusively with mode 0666 less the umask), short so that a target with
 * a 255-byte name still works; replacing an existing target gives it the
 * target's permission bits and, if allowed, its owner (the setuid and
 * setgid bits only with the owner). An existing target we may not write
 * is refused (EACCES), as fopen(path, "w") refuses it. When no temporary
 * file can be made there (a directory we may not write, a read-only one:
 * EACCES, EROFS, EPERM, ENAMETOOLONG), an existing target gets the text
 * in an anonymous temporary file elsewhere (tmpfile()), copied over it at
 * close only if complete and error-free; a new one is created and written
 * in place. When the rename fails with EBUSY (a bind-mounted file) or
 * EXDEV, the finished temporary file is copied over the target. A copy
 * that fails part-way is reported but can leave a partial target; the
 * named temporary file is then kept, and the message names it.
 */
#ifndef TTMSIM_TOOLS_OUTFILE_H
#define TTMSIM_TOOLS_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct cli_outfile {
	FILE *f;          /* write here */
	const char *path; /* as given, for messages */
	char *target;     /* what the rename replaces; NULL: written in place */
	char *tmp;        /* the temporary file; NULL: written in place */
	bool anon;        /* @f is an anonymous temporary file, copied over
			   * @target at close (its directory takes no new
			   * file) */
};

/**
 * cli_outfile_open - start writing @path.
 * @o: filled in; its @f is where to write.
 * @path: the output file, "-" for standard output.
 *
 * Context: any thread; not with another writer of the same @path.
 * Return: 0, or CLI_EXIT_FAILURE after a message naming @path.
 */
int cli_outfile_open(struct cli_outfile *o, const char *path);

/**
 * cli_outfile_close - finish the output started by cli_outfile_open().
 * @o: the output; let go of in every case.
 * @complete: false if the caller could not produce all of it: then the
 *	temporary file is removed and @path left as it was (the caller has
 *	said why on stderr).
 *
 * Context: any thread.
 * Return: 0 if @path now holds everything that was written; else
 * CLI_EXIT_FAILURE, after a message naming @path if the failure was a
 * write, close or rename error.
 */
int cli_outfile_close(struct cli_outfile *o, bool complete);

/**
 * cli_flush_stdout - check that everything printed on stdout got out.
 * @status: the command's exit status so far.
 *
 * Context: at the end of main().
 * Return: @status, or CLI_EXIT_FAILURE after a message if stdout had a
 * write error (a full disk, a closed pipe) and @status was CLI_EXIT_OK.
 */
int cli_flush_stdout(int status);

#endif /* TTMSIM_TOOLS_OUTFILE_H */
