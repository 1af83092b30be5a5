/* SPDX-License-Identifier: MIT */
/* Private helpers shared by every layer of libttmsim. Not installed. */
#ifndef TTMSIM_UTIL_COMPILER_H
#define TTMSIM_UTIL_COMPILER_H

/* The library is built with -fvisibility=hidden; this marks the ABI. */
#define TTM_EXPORT __attribute__((visibility("default")))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* Tell the CPU we are spinning: saves power and frees the sibling thread. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Set in a ThreadSanitizer build. TSan does not model fences (GCC warns,
 * -Werror fails): a Dekker pair there uses sequentially consistent
 * read-modify-writes instead, which it does model, where other builds
 * pair a plain access with __atomic_thread_fence().
 */
#if defined(__SANITIZE_THREAD__)
#define TTM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TTM_TSAN 1
#endif
#endif

/* Set in an AddressSanitizer build: caches poison the blocks they keep. */
#if defined(__SANITIZE_ADDRESS__)
#define TTM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TTM_ASAN 1
#endif
#endif

#endif /* TTMSIM_UTIL_COMPILER_H */
