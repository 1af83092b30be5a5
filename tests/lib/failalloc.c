// SPDX-License-Identifier: MIT
/*
 * failalloc: a test-only LD_PRELOAD library that makes one allocation of
 * the process fail, for tests of what a program does when memory runs
 * out. It replaces malloc(), calloc(), realloc() and aligned_alloc(); the
 * C library's own allocations (strdup(), fopen(), ...) and those of every
 * other library (json-c, libttmsim) go through them too.
 *
 *   TTMSIM_FAILALLOC=N        the Nth call (from 1) counted from program
 *                             start fails with ENOMEM; 0 or unset: none.
 *   TTMSIM_FAILALLOC=N+       the Nth and every later call fail.
 *   TTMSIM_FAILALLOC_COUNT=F  at exit, write the number of calls counted
 *                             to file F (how a driver learns how many
 *                             points there are to try).
 *
 * Counting is global over the process's threads (atomic), so with
 * several threads the Nth call is not always the same one: a driver
 * must accept any outcome that is correct for some failing call.
 *
 * Not usable with AddressSanitizer, which must own malloc itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's allocator under its exported internal names. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static unsigned long fail_at;    /* 0: never */
static bool fail_after;          /* "N+": from fail_at on */
static unsigned long calls;      /* atomic */
static const char *count_path;

/* getenv() and strtoul() do not allocate: safe before anything runs. */
__attribute__((constructor)) static void failalloc_init(void)
{
	const char *s = getenv("TTMSIM_FAILALLOC");
	char *end;

	count_path = getenv("TTMSIM_FAILALLOC_COUNT");
	if (!s || !*s)
		return;
	fail_at = strtoul(s, &end, 10);
	fail_after = *end == '+';
	__atomic_store_n(&calls, 0, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void failalloc_fini(void)
{
	char buf[32];
	int fd, n;

	if (!count_path)
		return;
	n = snprintf(buf, sizeof(buf), "%lu\n",
		     __atomic_load_n(&calls, __ATOMIC_RELAXED));
	fd = open(count_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, buf, (size_t)n) != n)
			(void)0; /* the driver sees a short count */
		close(fd);
	}
}

/* The project builds with hidden visibility: these must be seen. */
#define FAILALLOC_EXPORT __attribute__((visibility("default")))

static bool fail_now(void)
{
	unsigned long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);

	if (!fail_at || n < fail_at || (n > fail_at && !fail_after))
		return false;
	errno = ENOMEM;
	return true;
}

FAILALLOC_EXPORT void *malloc(size_t size)
{
	return fail_now() ? NULL : __libc_malloc(size);
}

FAILALLOC_EXPORT void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __libc_calloc(n, size);
}

FAILALLOC_EXPORT void *realloc(void *p, size_t size)
{
	/* realloc(p, 0) frees: not an allocation that can fail. */
	if (p && !size)
		return __libc_realloc(p, size);
	return fail_now() ? NULL : __libc_realloc(p, size);
}

/* The library's aligned allocations (the fence pool's chunks, the GPU). */
FAILALLOC_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
	return fail_now() ? NULL : __libc_memalign(alignment, size);
}
