// SPDX-License-Identifier: MIT
/* The calling thread's allocations made to fail: see alloc_fail.h. */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

#include "alloc_fail.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_HOOK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOC_HOOK 0
#endif
#endif
#ifndef ALLOC_HOOK
#define ALLOC_HOOK 1
#endif

static __thread bool failing;
static __thread unsigned int failed;

#if ALLOC_HOOK
/* glibc's allocator under its exported internal names. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static bool refused(void)
{
	if (!failing)
		return false;
	failed++;
	errno = ENOMEM;
	return true;
}

/* Seen by the library: the project builds with hidden visibility. */
#define INTERPOSE __attribute__((visibility("default")))

INTERPOSE void *malloc(size_t size)
{
	return refused() ? NULL : __libc_malloc(size);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
	return refused() ? NULL : __libc_calloc(n, size);
}

INTERPOSE void *realloc(void *p, size_t size)
{
	/* realloc(p, 0) frees: not an allocation that can fail. */
	if (p && !size)
		return __libc_realloc(p, size);
	return refused() ? NULL : __libc_realloc(p, size);
}

/* The library's aligned allocations (the fence pool's chunks, the GPU). */
INTERPOSE void *aligned_alloc(size_t alignment, size_t size)
{
	return refused() ? NULL : __libc_memalign(alignment, size);
}

INTERPOSE void *memalign(size_t alignment, size_t size)
{
	return refused() ? NULL : __libc_memalign(alignment, size);
}

INTERPOSE int posix_memalign(void **ret, size_t alignment, size_t size)
{
	void *p;

	/* A power of two and a multiple of sizeof(void *), as glibc checks. */
	if (!alignment || (alignment & (alignment - 1)) ||
	    alignment % sizeof(void *))
		return EINVAL;
	if (refused())
		return ENOMEM;
	p = __libc_memalign(alignment, size);
	if (!p)
		return ENOMEM;
	*ret = p;
	return 0;
}

INTERPOSE void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}
#endif

bool alloc_fail_supported(void)
{
	return ALLOC_HOOK;
}

void alloc_fail_begin(void)
{
	failed = 0;
	failing = true;
}

unsigned int alloc_fail_end(void)
{
	failing = false;
	return failed;
}
