// SPDX-License-Identifier: MIT
/*
 * failalloc: a test-only LD_PRELOAD library that makes one call of a kind
 * that can fail for want of a resource fail, for tests of what a program
 * does then. Being preloaded, it reaches the calls made inside libc,
 * json-c and libttmsim too, not only the program's own.
 *
 *   TTMSIM_FAILALLOC_KIND=K   which kind of call to fail (default alloc):
 *     alloc   malloc(), calloc(), realloc(), reallocarray() and the aligned
 *             ones (the engines and fence chunks use aligned_alloc()):
 *             NULL / ENOMEM;
 *     thread  pthread_create(): EAGAIN (what it returns without memory or
 *             over RLIMIT_NPROC);
 *     pipe    pipe(), pipe2(): -1 / EMFILE;
 *     dup     dup(), dup2(), dup3(), fcntl(F_DUPFD, F_DUPFD_CLOEXEC):
 *             -1 / EMFILE;
 *     open    open(), openat(), fopen() (and their 64 names): EMFILE.
 *   TTMSIM_FAILALLOC=N        the Nth call (from 1) of that kind counted
 *                             from program start fails; 0 or unset: none.
 *   TTMSIM_FAILALLOC=N+       the Nth and every later call of it fail.
 *   TTMSIM_FAILALLOC_COUNT=F  at exit, write "KIND COUNT" lines, one per
 *                             kind, to file F (how a driver learns how
 *                             many points there are to try).
 *
 * Counting is global over the process's threads (atomic), so with
 * several threads the Nth call is not always the same one: a driver
 * must accept any outcome that is correct for some failing call.
 *
 * Every wrapper calls on to the next definition (dlsym(RTLD_NEXT)), so it
 * works in an AddressSanitizer build too: preloaded, it comes before the
 * sanitizer's runtime (a DT_NEEDED of the program) in symbol lookup, and
 * calls on into the runtime's interceptors (run with
 * ASAN_OPTIONS=verify_asan_link_order=0). Under ASan, the runtime's own
 * interceptors allocate without calling malloc() (strdup(), ...): those
 * allocations are not counted.
 */
/*
 * Both names of the calls with a 64-bit variant are defined here, each
 * under its own name: not open() renamed to open64() by meson's
 * -D_FILE_OFFSET_BITS=64.
 */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { K_ALLOC, K_THREAD, K_PIPE, K_DUP, K_OPEN, K_NR };

static const char *const kind_names[K_NR] = {
	"alloc", "thread", "pipe", "dup", "open",
};

static enum kind fail_kind;      /* K_ALLOC unless told */
static unsigned long fail_at;    /* 0: never */
static bool fail_after;          /* "N+": from fail_at on */
static unsigned long calls[K_NR];        /* atomic */
static const char *count_path;

/*
 * getenv() and strtoul() do not allocate: safe before anything runs. The
 * allocator is called before this runs (by other libraries' constructors):
 * those calls count, against no failure yet.
 */
__attribute__((constructor)) static void failalloc_init(void)
{
	const char *s = getenv("TTMSIM_FAILALLOC");
	const char *k = getenv("TTMSIM_FAILALLOC_KIND");
	char *end;
	int i;

	count_path = getenv("TTMSIM_FAILALLOC_COUNT");
	for (i = 0; k && *k && i < K_NR; i++)
		if (!strcmp(k, kind_names[i]))
			break;
	if (i == K_NR) {
		/* A typo would silently walk nothing: say so, loudly. */
		static const char msg[] =
			"failalloc: unknown TTMSIM_FAILALLOC_KIND\n";
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			(void)0;
		_exit(125);
	}
	fail_kind = k && *k ? (enum kind)i : K_ALLOC;
	if (!s || !*s)
		return;
	fail_at = strtoul(s, &end, 10);
	fail_after = *end == '+';
	/* Counted from here: the same N is the same call run after run. */
	__atomic_store_n(&calls[fail_kind], 0, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void failalloc_fini(void)
{
	char buf[32 * K_NR];
	int fd, n = 0, i;

	if (!count_path)
		return;
	for (i = 0; i < K_NR; i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s %lu\n",
			      kind_names[i],
			      __atomic_load_n(&calls[i], __ATOMIC_RELAXED));
	fd = open(count_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, buf, (size_t)n) != n)
			(void)0; /* the driver sees a short count */
		close(fd);
	}
}

/* The project builds with hidden visibility: these must be seen. */
#define FAILALLOC_EXPORT __attribute__((visibility("default")))

/* Set while a sanitizer's runtime calls what must not fail (below). */
static __thread int exempt __attribute__((tls_model("initial-exec")));

/* Counts a call of @kind; true (errno set to @err) if it is to fail. */
static bool fail_now(enum kind kind, int err)
{
	unsigned long n;

	if (exempt)
		return false;
	n = __atomic_add_fetch(&calls[kind], 1, __ATOMIC_RELAXED);

	if (kind != fail_kind || !fail_at || n < fail_at ||
	    (n > fail_at && !fail_after))
		return false;
	errno = err;
	return true;
}

/*
 * The next definitions, looked up on first use. dlsym() may allocate
 * (its error state): while it runs, the allocator answers from a static
 * arena, whose blocks free() and realloc() recognise.
 */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static void *(*next_memalign)(size_t, size_t);
static int resolving;            /* atomic: a thread is in resolve() */

static _Alignas(64) char arena[16384];
static size_t arena_used;        /* atomic */

static void *arena_alloc(size_t size)
{
	size_t sz = (size + 63) & ~(size_t)63;
	size_t at = __atomic_fetch_add(&arena_used, sz, __ATOMIC_RELAXED);

	if (at + sz > sizeof(arena)) {
		errno = ENOMEM;
		return NULL;
	}
	return arena + at;
}

static bool in_arena(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		static const char msg[] = "failalloc: no next definition\n";
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			(void)0;
		_exit(125);
	}
	return f;
}

/* False while resolving: the caller then serves from the arena. */
static bool resolve_alloc(void)
{
	if (__atomic_load_n(&next_memalign, __ATOMIC_ACQUIRE))
		return true;
	if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
		return false;
	next_malloc = next("malloc");
	next_calloc = next("calloc");
	next_realloc = next("realloc");
	next_free = next("free");
	__atomic_store_n(&next_memalign, next("memalign"), __ATOMIC_RELEASE);
	return true;
}

FAILALLOC_EXPORT void *malloc(size_t size)
{
	if (!resolve_alloc())
		return arena_alloc(size);
	return fail_now(K_ALLOC, ENOMEM) ? NULL : next_malloc(size);
}

FAILALLOC_EXPORT void *calloc(size_t n, size_t size)
{
	if (!resolve_alloc()) {
		size_t bytes;

		if (__builtin_mul_overflow(n, size, &bytes))
			return NULL;
		return arena_alloc(bytes); /* static: zeroed */
	}
	return fail_now(K_ALLOC, ENOMEM) ? NULL : next_calloc(n, size);
}

FAILALLOC_EXPORT void free(void *p)
{
	if (!p || in_arena(p))
		return;
	if (resolve_alloc())
		next_free(p);
}

FAILALLOC_EXPORT void *realloc(void *p, size_t size)
{
	void *q;

	if (in_arena(p)) {
		/*
		 * Its size is unknown: copy what the arena holds from it on
		 * (other blocks' bytes too, harmless). Still resolving, the
		 * new block is the arena's too, after @p (the arena only
		 * grows), maybe overlapping what is copied: memmove().
		 */
		size_t have = (size_t)(arena + sizeof(arena) - (char *)p);

		q = resolve_alloc() ? malloc(size) : arena_alloc(size);
		if (q)
			memmove(q, p, size < have ? size : have);
		return q;
	}
	/* No block but the arena's exists before the allocator is found. */
	if (!resolve_alloc())
		return p ? NULL : arena_alloc(size);
	/* realloc(p, 0) frees: not an allocation that can fail. */
	if (p && !size)
		return next_realloc(p, size);
	return fail_now(K_ALLOC, ENOMEM) ? NULL : next_realloc(p, size);
}

FAILALLOC_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

/* A power of two: what glibc's memalign() would round up to anyway. */
static bool power_of_two(size_t align)
{
	return align && !(align & (align - 1));
}

FAILALLOC_EXPORT void *memalign(size_t align, size_t size)
{
	if (!resolve_alloc())
		return align <= 64 ? arena_alloc(size) : NULL;
	return fail_now(K_ALLOC, ENOMEM) ? NULL : next_memalign(align, size);
}

FAILALLOC_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

FAILALLOC_EXPORT int posix_memalign(void **ret, size_t align, size_t size)
{
	void *p;

	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	p = memalign(align, size);
	if (!p)
		return ENOMEM;
	*ret = p;
	return 0;
}

/* Non-allocating calls: looked up on first use, never from the arena. */
#define NEXT(name) \
	static __typeof__(&name) next_##name; \
	if (!__atomic_load_n(&next_##name, __ATOMIC_ACQUIRE)) \
		__atomic_store_n(&next_##name, \
				 (__typeof__(&name))next(#name), \
				 __ATOMIC_RELEASE)

FAILALLOC_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr,
				    void *(*fn)(void *), void *arg)
{
	NEXT(pthread_create);
	if (fail_now(K_THREAD, EAGAIN))
		return EAGAIN;
	return next_pthread_create(t, attr, fn, arg);
}

FAILALLOC_EXPORT int pipe(int fds[2])
{
	NEXT(pipe);
	return fail_now(K_PIPE, EMFILE) ? -1 : next_pipe(fds);
}

FAILALLOC_EXPORT int pipe2(int fds[2], int flags)
{
	NEXT(pipe2);
	return fail_now(K_PIPE, EMFILE) ? -1 : next_pipe2(fds, flags);
}

FAILALLOC_EXPORT int dup(int fd)
{
	NEXT(dup);
	return fail_now(K_DUP, EMFILE) ? -1 : next_dup(fd);
}

FAILALLOC_EXPORT int dup2(int fd, int to)
{
	NEXT(dup2);
	return fail_now(K_DUP, EMFILE) ? -1 : next_dup2(fd, to);
}

FAILALLOC_EXPORT int dup3(int fd, int to, int flags)
{
	NEXT(dup3);
	return fail_now(K_DUP, EMFILE) ? -1 : next_dup3(fd, to, flags);
}

/*
 * fcntl()'s third argument is an int, a long or a pointer depending on
 * @cmd; passed on as a pointer-sized word, as glibc's own fcntl() reads
 * it. Only the duplicating commands count.
 */
static bool fcntl_fails(int cmd)
{
	return (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
	       fail_now(K_DUP, EMFILE);
}

#define FCNTL_WRAPPER(name) \
FAILALLOC_EXPORT int name(int fd, int cmd, ...) \
{ \
	va_list ap; \
	void *arg; \
	NEXT(name); \
	va_start(ap, cmd); \
	arg = va_arg(ap, void *); \
	va_end(ap); \
	return fcntl_fails(cmd) ? -1 : next_##name(fd, cmd, arg); \
}
FCNTL_WRAPPER(fcntl)
/* What fcntl() is called as with -D_FILE_OFFSET_BITS=64 (meson's default). */
FCNTL_WRAPPER(fcntl64)

/* open()'s mode is there only with O_CREAT or O_TMPFILE. */
static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

/* The mode argument of the variadic function this is used in. */
#define OPEN_MODE(flags) ({ \
	va_list ap; \
	mode_t m; \
	va_start(ap, flags); \
	m = open_mode(flags, ap); \
	va_end(ap); \
	m; \
})

/* Every open is an openat(): ASan intercepts both, glibc's are the same. */
static int open_at(int dir, const char *path, int flags, mode_t mode)
{
	NEXT(openat64);
	return fail_now(K_OPEN, EMFILE) ? -1 :
	       next_openat64(dir, path, flags, mode);
}

FAILALLOC_EXPORT int open(const char *path, int flags, ...)
{
	return open_at(AT_FDCWD, path, flags, OPEN_MODE(flags));
}

FAILALLOC_EXPORT int open64(const char *path, int flags, ...)
{
	return open_at(AT_FDCWD, path, flags, OPEN_MODE(flags));
}

FAILALLOC_EXPORT int openat(int dir, const char *path, int flags, ...)
{
	return open_at(dir, path, flags, OPEN_MODE(flags));
}

FAILALLOC_EXPORT int openat64(int dir, const char *path, int flags, ...)
{
	return open_at(dir, path, flags, OPEN_MODE(flags));
}

#define FOPEN_WRAPPER(name) \
FAILALLOC_EXPORT FILE *name(const char *path, const char *mode) \
{ \
	NEXT(name); \
	return fail_now(K_OPEN, EMFILE) ? NULL : next_##name(path, mode); \
}
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

/*
 * AddressSanitizer's runtime calls pthread_getattr_np() as each thread
 * starts, before the thread's function runs, and a failure there (its
 * allocation) stops the process with a CHECK failure: the runtime's own
 * call, not one the program could handle. Its allocations are neither
 * counted nor failed.
 */
FAILALLOC_EXPORT int pthread_getattr_np(pthread_t t, pthread_attr_t *attr)
{
	int ret;

	NEXT(pthread_getattr_np);
	exempt++;
	ret = next_pthread_getattr_np(t, attr);
	exempt--;
	return ret;
}
