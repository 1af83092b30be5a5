/* SPDX-License-Identifier: MIT */
/*
 * Making the calling thread's allocations fail, for tests that the
 * library loses nothing when memory runs out at a given moment. The
 * program's malloc(), calloc(), realloc() and aligned_alloc()
 * (alloc_fail.c, compiled into the test program itself, never into the
 * shared helpers) are the whole process's, the library's included; they
 * pass every call to glibc's
 * allocator but in a thread between alloc_fail_begin() and
 * alloc_fail_end(). Under a sanitizer, whose runtime owns the allocator,
 * there is no hook: alloc_fail_supported() is false and tests skip.
 */
#ifndef TTMSIM_TEST_ALLOC_FAIL_H
#define TTMSIM_TEST_ALLOC_FAIL_H

#include <stdbool.h>

bool alloc_fail_supported(void);
/* From now on every allocation of this thread fails (ENOMEM). */
void alloc_fail_begin(void);
/* Back to normal. Return: how many allocations failed meanwhile. */
unsigned int alloc_fail_end(void);

#endif
