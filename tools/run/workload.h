/* SPDX-License-Identifier: MIT */
/*
 * Workloads of `ttmsim run`: buffers and jobs, read from the text format
 * (workload_load()), generated at random (workload_generate()), written
 * back (workload_save()) so that any generated run can be replayed.
 *
 *	bo NAME SIZE [PLACE] [pinned] [prime]
 *	bo NAME WIDTHxHEIGHT:FOURCC [PLACE] [pinned] [prime]
 *	    PLACE: vram | gtt | system | visible | vram@FPFN-LPFN | gtt@FPFN-LPFN
 *	syncobj NAME [timeline]
 *	job THREAD ENGINE DURATION_US OP [SYNC...] NAME [NAME...]
 *	    SYNC: wait=SYNCOBJ[@POINT] | signal=SYNCOBJ[@POINT]
 *	shrink MS
 *
 * A workload is plain data: nothing here creates a buffer or submits a
 * job. The library is asked only what a fourcc's pixels take
 * (ttm_fourcc_cpp()), to size a WIDTHxHEIGHT:FOURCC buffer.
 *
 * The rules of the file, beyond the grammar (tools/run/workload.c):
 *  - '#' starts a comment anywhere on a line, even inside a word (no word
 *    may contain it); blank lines are ignored; words are separated by
 *    spaces and tabs; a CR at the very end of a line is dropped (CRLF);
 *    a UTF-8 byte order mark at the start of the file is skipped;
 *  - a file is text: any other control byte (NUL, a CR inside a line,
 *    ESC, ...), DEL, or a byte that is not valid UTF-8 is an error naming
 *    its column; UTF-8 text may appear in comments only (names are ASCII);
 *  - a line holds at most WL_MAX_LINE bytes, without its newline;
 *  - numbers are unsigned decimals, without sign; add=U32 also takes 0x
 *    hexadecimal;
 *  - the words after SIZE come in the order PLACE, pinned, prime;
 *  - `visible`: the CPU-visible part of VRAM only (TTM_PLACE_CPU_VISIBLE);
 *    `vram@FPFN-LPFN` (or gtt@): only pages [FPFN, LPFN) of that domain,
 *    in 4 KiB pages, LPFN exclusive, as struct ttm_place's fpfn/lpfn;
 *    FPFN < LPFN <= UINT32_MAX and the buffer must fit in the window (the
 *    run checks LPFN against the domain's size: --vram, --gtt);
 *  - `prime`: the creating client exports the buffer (PRIME handle-to-fd)
 *    and every submitting thread's client imports it from that fd
 *    (fd-to-handle) instead of getting a handle directly;
 *  - `syncobj NAME [timeline]` defines a syncobj (its own namespace,
 *    before the jobs that name it), binary or timeline; at most
 *    WL_MAX_SYNCOBJS;
 *  - a job's `wait=S` / `signal=S` (binary S) or `wait=S@P` /
 *    `signal=S@P` (timeline S, 1 <= P) words may stand anywhere after OP
 *    (names hold no '='), at most WL_MAX_JOB_SYNCS per job. signal hands
 *    the job's fence to the syncobj (the execbuf's out-syncobjs); wait
 *    makes the job wait for it (in-syncobjs). A binary syncobj is
 *    signalled by at most one job, a timeline's point by at most one job;
 *    every waited point must be signalled by some job, and the waits,
 *    the timelines' points and each thread's file order must not make a
 *    cycle (a deadlock): both are load errors. The run submits a waiting
 *    job only once the signalling job is submitted (or its thread has
 *    given up), and a timeline's points in increasing order: as
 *    userspace does with WAIT_FOR_SUBMIT, since the library (as the
 *    kernel) rejects a wait on a point not submitted yet with EINVAL. If
 *    the signalling job was rejected, the waiting one is submitted
 *    anyway: EINVAL for an empty binary syncobj, a counted rejection;
 *  - a buffer must be defined (bo line) before any job that lists it;
 *  - THREAD < WL_MAX_THREADS, ENGINE < WL_MAX_ENGINES, DURATION_US at
 *    most WL_MAX_JOB_US (60 s), at most WL_MAX_JOB_BOS names in a job;
 *  - a job that lists a buffer twice parses (the run decides);
 *  - `shrink MS` (anywhere, at most once) runs a shrinker every MS
 *    milliseconds, 1 to WL_MAX_SHRINK_MS: a run flag kept with the jobs
 *    so that a saved run replays with it (`ttmsim run --shrink-ms`
 *    overrides it).
 */
#ifndef TTMSIM_TOOLS_WORKLOAD_H
#define TTMSIM_TOOLS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WL_MAX_THREADS 1024u
#define WL_MAX_ENGINES 64u     /* the fake GPU's limit */
#define WL_MAX_NAME 64u        /* bytes of a name, without the NUL */
#define WL_MAX_BO_SIZE (UINT64_C(1) << 30)
#define WL_MAX_JOB_BOS 4096u   /* TTM_EXECBUF_MAX_BOS */
#define WL_MAX_JOB_US (UINT64_C(60) * 1000 * 1000) /* a job's DURATION_US */
#define WL_MAX_SHRINK_MS 60000u /* `shrink MS`, --shrink-ms: a minute */
#define WL_MAX_SYNCOBJS 65536u
#define WL_MAX_JOB_SYNCS 4u    /* wait= and signal= words of a job */
/* Bytes of a line, without its newline: room for WL_MAX_JOB_BOS long names. */
#define WL_MAX_LINE (1u << 20)

enum wl_placement {
	WL_PLACE_DEFAULT, /* no word: VRAM preferred, GTT allowed */
	WL_PLACE_VRAM,    /* VRAM only */
	WL_PLACE_GTT,     /* GTT only */
	WL_PLACE_SYSTEM,  /* created in SYSTEM, moved to GTT for jobs */
	WL_PLACE_VISIBLE, /* the CPU-visible part of VRAM only */
};

struct wl_bo {
	char name[WL_MAX_NAME + 1];
	uint64_t size;           /* bytes */
	uint32_t width, height;  /* with @fourcc; 0 for a plain size */
	uint32_t fourcc;         /* 0: plain size */
	enum wl_placement placement;
	bool pinned;             /* pinned in its first domain at creation */
	bool prime;              /* shared with the threads through PRIME */
	/* VRAM or GTT only: pages [fpfn, lpfn); lpfn 0: the whole domain. */
	uint32_t fpfn, lpfn;
	unsigned int line;       /* in the file; 0 if generated */
};

struct wl_syncobj {
	char name[WL_MAX_NAME + 1]; /* first: the name table reads it */
	bool timeline;
	unsigned int line;
};

/* A job's wait= or signal= word. */
struct wl_sync {
	uint32_t syncobj;        /* index into workload.syncobjs */
	bool signal;             /* signal=; else wait= */
	uint64_t point;          /* 0 for a binary syncobj */
};

enum wl_op {
	WL_OP_ADD,  /* add @add_value to every word of each listed buffer */
	WL_OP_NOP,
	WL_OP_HANG, /* hangs until the GPU's watchdog fails it */
};

struct wl_job {
	unsigned int thread, engine;
	uint64_t duration_us;
	enum wl_op op;
	uint32_t add_value;
	unsigned int *bos;       /* indexes into workload.bos, as listed */
	unsigned int n_bos;      /* >= 1 */
	unsigned int line;
	/* Inline, so that a copy of the struct copies them. */
	unsigned int n_syncs;
	struct wl_sync syncs[WL_MAX_JOB_SYNCS];
};

struct workload {
	char *source;            /* the file's name, "<stdin>", or NULL */
	struct wl_bo *bos;
	unsigned int n_bos;
	struct wl_syncobj *syncobjs;
	unsigned int n_syncobjs;
	struct wl_job *jobs;     /* in file order */
	size_t n_jobs;
	unsigned int n_threads;  /* largest thread index + 1 (0: no jobs) */
	unsigned int n_engines;  /* largest engine index + 1 (0: no jobs) */
	/*
	 * Where the jobs' @bos lists live: one allocation for all of them
	 * (what workload_load() and workload_generate() make), or NULL if
	 * each job's list is its own malloc() (a workload built by hand).
	 */
	unsigned int *bo_arena;
	bool has_seed;           /* generated: @seed made it */
	uint64_t seed;
	unsigned int shrink_ms;  /* `shrink MS`: the shrinker period; 0: none */
};

/**
 * workload_load - read and check the workload file @path ("-": standard
 * input, named "<stdin>" in messages).
 *
 * Every error is one line "FILE:LINE: what is wrong" on stderr (a file that
 * cannot be read, or holds no job: "ttmsim: FILE: reason"), and nothing
 * is kept: *@wl is then all zero (workload_free() on it is harmless).
 * The open does not wait for a FIFO's writer (one without a writer reads
 * as empty, and says so); reading then waits for the data, as for a pipe.
 * Return: 0 and *@wl (free it with workload_free()), or CLI_EXIT_USAGE.
 */
int workload_load(const char *path, struct workload *wl);

/**
 * workload_parse - as workload_load(), from an open stream named @name;
 * a workload without jobs is not an error here.
 */
int workload_parse(FILE *f, const char *name, struct workload *wl);

enum wl_order {
	WL_ORDER_RANDOM,  /* each job lists its buffers in random order */
	WL_ORDER_SORTED,  /* by buffer index */
	WL_ORDER_REVERSE,
};

/* What `ttmsim run` generates without --workload. */
struct wl_gen_options {
	unsigned int threads;          /* >= 1 */
	unsigned int bos;              /* >= 1 */
	uint64_t bo_size_min, bo_size_max;     /* multiples of 4 */
	unsigned int per_job_min, per_job_max; /* 1 <= min <= max <= bos */
	uint64_t jobs;                 /* per thread */
	enum wl_order order;
	unsigned int engines;          /* >= 1 */
	uint64_t job_us_min, job_us_max;
	uint64_t seed;
	unsigned int shrink_ms;        /* <= WL_MAX_SHRINK_MS; 0: none */
	/*
	 * The features below draw from a second random stream, so that a
	 * seed gives the same buffers and jobs as before with them off.
	 * prime_percent: each buffer is `prime` with this chance (0-100);
	 * syncobjs: that many syncobjs (even indexes binary, odd ones
	 * timelines), each job signalling or waiting on one with a chance
	 * of a quarter each; ranges: an eighth of the buffers `visible`, an
	 * eighth in a window of twice their pages in the VRAM's first half
	 * (vram@FPFN-LPFN, from @vram).
	 */
	unsigned int prime_percent;
	unsigned int syncobjs;         /* <= WL_MAX_SYNCOBJS */
	bool ranges;
	uint64_t vram;                 /* bytes, for the ranges; 0: 256 MiB */
	/*
	 * Asked after every WL_GEN_POLL_JOBS jobs: true stops generating
	 * (a signal came). NULL: never asked.
	 */
	bool (*interrupted)(void);
};

#define WL_GEN_POLL_JOBS 4096u

/**
 * workload_generate - a random workload: @o->bos buffers of the default
 * placement, named bo0, bo1, ..., and @o->jobs add jobs per thread, each
 * over distinct buffers; the same options and seed give the same workload
 * (splitmix64, the same on every platform). Sizes are uniform in
 * [bo_size_min, bo_size_max] rounded down to a multiple of 4 (at least 4);
 * add values are never 0; thread t's jobs are jobs t, t + threads, ...
 * n_threads and n_engines are @o's, even if an engine gets no job (a
 * saved copy then loads back with fewer: replay with --engines, which the
 * saved file's header comment names). shrink_ms is @o's; the random
 * sequence does not depend on it.
 * Return: 0 and *@wl, -EINVAL if @o breaks a rule above or a WL_MAX_*
 * limit (*@wl all zero), -ENOMEM (*@wl all zero), or -EINTR when
 * @o->interrupted said so: *@wl then holds every buffer and the jobs
 * made so far (free it with workload_free()).
 */
int workload_generate(const struct wl_gen_options *o, struct workload *wl);

/**
 * workload_gen_bytes - the most memory workload_generate(@o) asks for:
 * its jobs, their buffer lists (at @o->per_job_max each) and its buffers;
 * UINT64_MAX if that does not fit in 64 bits. To refuse, before asking,
 * settings that cannot be allocated.
 */
uint64_t workload_gen_bytes(const struct wl_gen_options *o);

/**
 * workload_save - write @wl in the file format to @path ("-": stdout), so
 * that workload_load() gives it back exactly (but for @line, @source,
 * @has_seed and @seed, and n_threads/n_engines when some thread or engine
 * has no job), a `shrink` line first if @shrink_ms. A header comment
 * names the seed if @has_seed. Written whole or not at all (outfile.h).
 * Return: 0, or CLI_EXIT_FAILURE after a message naming @path (it cannot
 * be opened or written).
 */
int workload_save(const struct workload *wl, const char *path);

/**
 * workload_sync_deps - check the rules of the syncobj words that span
 * jobs (tools/run/workload_sync.c): each binary syncobj and each timeline
 * point signalled at most once, every waited point signalled, and no
 * cycle of waits, timeline order and each thread's file order (a
 * deadlock). Messages are "SOURCE:LINE: ..." (the job's line; SOURCE
 * "<generated>" without @wl->source).
 * *@ret_deps (if not NULL, a malloc()ed array of n_jobs *
 * WL_MAX_JOB_SYNCS, NULL without sync words) gets, for sync word k of
 * job j at [j * WL_MAX_JOB_SYNCS + k], the job that must be submitted
 * before job j: for a wait its signaller, for a timeline signal the
 * signaller of the point below; SIZE_MAX for none.
 * Return: 0; CLI_EXIT_USAGE after a message; -ENOMEM (no message).
 */
int workload_sync_deps(const struct workload *wl, size_t **ret_deps);

/**
 * workload_sync_prune - drop the wait= words an edit of @wl left
 * unsatisfiable: a wait on a point no job signals any more (its signaller
 * dropped), or on one that a later job of the waiter's own thread signals
 * (threads merged: a cycle). For the stress shrinker, whose candidates
 * must keep failing the same way, not on the load-time checks of
 * workload_sync_deps(). A longer cycle (through other threads) is left:
 * such a candidate fails to load, and the shrinker rejects it.
 * @wl: the workload, edited in place.
 *
 * Context: any; O(syncs * jobs).
 * Return: the number of wait words dropped.
 */
unsigned int workload_sync_prune(struct workload *wl);

/** workload_free - free what *@wl holds; NULL fields are fine. */
void workload_free(struct workload *wl);

#endif /* TTMSIM_TOOLS_WORKLOAD_H */
