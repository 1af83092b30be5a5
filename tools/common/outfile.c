// SPDX-License-Identifier: MIT
/*
 * Output files written completely or not at all (outfile.h): a temporary
 * file next to the target, renamed over it once written and closed; in
 * place where no temporary file can be made or renamed there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"

/* Short, so that a 255-byte target name still has room for it. */
#define TMP_NAME ".ttmsim.XXXXXX"
#define TMP_SUFFIX 6            /* the X's */
/* Tries at a free temporary name before giving up (stale ones, races). */
#define TMP_TRIES 100

/*
 * The errors after which the target is written in place instead: the
 * directory cannot take a new file (not writable, read-only, a path too
 * long for one more name) or the target cannot be replaced by rename (a
 * bind-mounted file is EBUSY, another file system EXDEV).
 */
static bool in_place_error(int err)
{
	return err == EACCES || err == EROFS || err == ENAMETOOLONG ||
	       err == EPERM || err == EBUSY || err == EXDEV;
}

/*
 * Open a new temporary file in @o->target's directory, created exclusively
 * with the mode a new file gets (0666 less the umask: not mkostemp(),
 * whose 0600 a new target would keep), and give it @old's owner (if we
 * may) and permission bits when the target exists, so that replacing it
 * keeps them.
 */
static int open_tmp(struct cli_outfile *o, const struct stat *old)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	const char *slash = strrchr(o->target, '/');
	size_t dirlen = slash ? (size_t)(slash - o->target) + 1 : 0;
	char *x;
	struct timespec ts;
	uint64_t seed;
	unsigned int n, k;
	int fd = -1, err;

	o->tmp = malloc(dirlen + sizeof(TMP_NAME));
	if (!o->tmp)
		return -ENOMEM;
	memcpy(o->tmp, o->target, dirlen);
	memcpy(o->tmp + dirlen, TMP_NAME, sizeof(TMP_NAME));
	x = o->tmp + dirlen + sizeof(TMP_NAME) - 1 - TMP_SUFFIX;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	for (n = 0; n < TMP_TRIES; n++) {
		uint64_t v = seed + n * 0x9e3779b97f4a7c15ull;

		for (k = 0; k < TMP_SUFFIX; k++, v >>= 5)
			x[k] = digits[v & 31];
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			  0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		goto fail;
	if (old) {
		/* The owner only if allowed; chown before chmod (setuid). */
		mode_t mode = old->st_mode & 07777;

		/* Not someone else's setuid/setgid bits on a file we own. */
		if (fchown(fd, old->st_uid, old->st_gid))
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
		if (fchmod(fd, mode))
			goto fail_unlink;
	}
	o->f = fdopen(fd, "w");
	if (o->f)
		return 0;
fail_unlink:
	err = errno;
	unlink(o->tmp);
	close(fd);
	errno = err;
fail:
	err = errno;
	free(o->tmp);
	o->tmp = NULL;
	return -err;
}

/*
 * Copy the finished temporary file @in (read from its start) over the
 * target in place, for a target that rename() cannot replace or whose
 * directory takes no temporary file. Opened without O_TRUNC and cut to
 * the copied length only at the end, so that a copy that cannot even
 * start leaves the target as it was. Not atomic: a failure part-way
 * leaves a partial target, but never an unreported one. Return: 0 or an
 * errno.
 */
static int copy_in_place(int in, const char *target)
{
	char buf[65536];
	int out, err = 0;
	off_t total = 0;
	ssize_t n;

	if (lseek(in, 0, SEEK_SET) < 0)
		return errno;
	out = open(target, O_WRONLY | O_CLOEXEC);
	if (out < 0)
		return errno;
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		ssize_t done = 0;

		if (n < 0) {
			if (errno != EINTR)
				err = errno;
			continue;
		}
		while (!err && done < n) {
			ssize_t w = write(out, buf + done, n - done);

			if (w >= 0)
				done += w;
			else if (errno != EINTR)
				err = errno;
		}
		total += done;
	}
	if (!err && ftruncate(out, total))
		err = errno;
	if (close(out) && !err)
		err = errno;
	return err;
}

/* copy_in_place() from the named temporary file @tmp. */
static int copy_file_in_place(const char *tmp, const char *target)
{
	int in = open(tmp, O_RDONLY | O_CLOEXEC), err;

	if (in < 0)
		return errno;
	err = copy_in_place(in, target);
	close(in);
	return err;
}

int cli_outfile_open(struct cli_outfile *o, const char *path)
{
	struct stat st;
	bool exists;
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
		exists = stat(o->target, &st) == 0;
		/*
		 * A target we may not write is refused, as fopen(path, "w")
		 * refuses it, not replaced by a rename the directory allows
		 * (root may write it, with fopen() too).
		 */
		if (exists && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS))
			ret = -errno;
		else
			ret = open_tmp(o, exists ? &st : NULL);
		if (ret == 0)
			return 0;
		if (in_place_error(-ret) && exists) {
			/*
			 * No new file there: write an anonymous temporary
			 * file elsewhere, copied over the target only once
			 * complete, so a failure still leaves it as it was.
			 */
			o->f = tmpfile();
			if (o->f) {
				o->anon = true;
				return 0;
			}
			ret = -errno;
		} else if (in_place_error(-ret)) {
			/* Nothing there to keep: create the target itself. */
			o->f = fopen(o->target, "w");
			ret = o->f ? 0 : -errno;
		}
		free(o->target);
		o->target = NULL;
		if (ret == 0)
			return 0;
	}
	cli_error("%s: %s", path, strerror(-ret));
	return CLI_EXIT_FAILURE;
nomem:
	cli_error("%s: out of memory", path);
	return CLI_EXIT_FAILURE;
}

int cli_outfile_close(struct cli_outfile *o, bool complete)
{
	bool kept = false;
	int err = 0;

	if (!o->f)
		return CLI_EXIT_FAILURE;
	/* A short write shows as the stream's error, or at the flush. */
	if (ferror(o->f))
		err = -1;
	if (o->f == stdout) {
		if (fflush(stdout) && !err)
			err = errno;
	} else if (o->anon) {
		if (fflush(o->f) && !err)
			err = errno;
		if (!err && complete)
			err = copy_in_place(fileno(o->f), o->target);
		fclose(o->f);
	} else if (fclose(o->f) && !err) {
		err = errno;
	}
	o->f = NULL;
	if (!err && complete && o->tmp && rename(o->tmp, o->target)) {
		err = errno;
		if (in_place_error(err)) {
			err = copy_file_in_place(o->tmp, o->target);
			/* The complete output is not thrown away. */
			kept = err != 0;
		}
	}
	if (o->tmp && (err || !complete) && !kept)
		unlink(o->tmp);
	if (err == -1)
		cli_error("%s: write error", o->path);
	else if (kept)
		cli_error("%s: cannot write it: %s; the complete output is "
			  "in %s", o->path, strerror(err), o->tmp);
	else if (err)
		cli_error("%s: cannot write it: %s", o->path, strerror(err));
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	o->anon = false;
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
