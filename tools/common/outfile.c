// SPDX-License-Identifier: MIT
/*
 * Output files written completely or not at all (outfile.h): a temporary
 * file next to the target, renamed over it once written and closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

/* Tries at a free temporary name before giving up (stale ones, races). */
#define TMP_TRIES 100

/*
 * Open a new temporary file for @target in its directory: "TARGET.PID.N.tmp",
 * created exclusively, with the mode a new file gets (0666 less the umask).
 */
static int open_tmp(struct cli_outfile *o)
{
	size_t len = strlen(o->target) + 48;
	unsigned int n;
	int fd = -1;

	o->tmp = malloc(len);
	if (!o->tmp)
		return -ENOMEM;
	for (n = 0; n < TMP_TRIES; n++) {
		snprintf(o->tmp, len, "%s.%ld.%u.tmp", o->target,
			 (long)getpid(), n);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			  0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		goto fail;
	o->f = fdopen(fd, "w");
	if (o->f)
		return 0;
	unlink(o->tmp);
	close(fd);
fail:
	fd = -errno;
	free(o->tmp);
	o->tmp = NULL;
	return fd;
}

int cli_outfile_open(struct cli_outfile *o, const char *path)
{
	struct stat st;
	int ret;

	*o = (struct cli_outfile){ .path = path };
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* Replace what the link points to; a dangling one in place. */
		o->target = realpath(path, NULL);
		if (!o->target && errno == ENOMEM)
			goto nomem;
		if (o->target && stat(o->target, &st) == 0 &&
		    !S_ISREG(st.st_mode)) {
			free(o->target);
			o->target = NULL;
		}
	} else if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		o->target = strdup(path);
		if (!o->target)
			goto nomem;
	}
	if (!o->target) {
		o->f = fopen(path, "w");
		if (o->f)
			return 0;
		ret = -errno;
	} else {
		ret = open_tmp(o);
		if (ret == 0)
			return 0;
		free(o->target);
		o->target = NULL;
	}
	cli_error("%s: %s", path, strerror(-ret));
	return CLI_EXIT_FAILURE;
nomem:
	cli_error("%s: out of memory", path);
	return CLI_EXIT_FAILURE;
}

int cli_outfile_close(struct cli_outfile *o, bool complete)
{
	int err = 0;

	if (!o->f)
		return CLI_EXIT_FAILURE;
	/* A short write shows as the stream's error, or at the flush. */
	if (ferror(o->f))
		err = -1;
	if (o->f == stdout) {
		if (fflush(stdout) && !err)
			err = errno;
	} else if (fclose(o->f) && !err) {
		err = errno;
	}
	o->f = NULL;
	if (!err && complete && o->tmp && rename(o->tmp, o->target))
		err = errno;
	if (o->tmp && (err || !complete))
		unlink(o->tmp);
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	if (err == -1)
		cli_error("%s: write error", o->path);
	else if (err)
		cli_error("%s: cannot write it: %s", o->path, strerror(err));
	return err || !complete ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

int cli_flush_stdout(int status)
{
	/* An earlier failed write leaves only the stream's error flag. */
	bool earlier = ferror(stdout) != 0;
	int err = fflush(stdout) ? errno : 0;

	if (!earlier && !err)
		return status;
	if (err)
		cli_error("standard output: write error: %s", strerror(err));
	else
		cli_error("standard output: write error");
	return status == CLI_EXIT_OK ? CLI_EXIT_FAILURE : status;
}
