/* SPDX-License-Identifier: MIT */
/*
 * ttmsim stress: random workloads through `ttmsim run`, for as long as
 * asked. stress.c is the command line and the loop; stress_case.c makes
 * a case (a workload and the run flags) from a seed; stress_child.c
 * writes it and runs it through cmd_run() in a forked child, collecting
 * what it printed and how it ended; stress_outcome.c tells from that
 * whether it failed, and how (the failure signature); stress_shrink.c
 * makes a failing case smaller while it still fails the same way;
 * stress_report.c writes the JSON report and the JUnit XML.
 */
#ifndef TTMSIM_TOOLS_STRESS_H
#define TTMSIM_TOOLS_STRESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/* The features a case may use; a bit each, counted in the report. */
enum stress_feature {
	SF_WOUND_WAIT,   /* --class wound-wait (else wait-die) */
	SF_PRIORITIES,   /* --priorities */
	SF_HANG,         /* hang jobs, a short --hang-timeout-ms */
	SF_NOP,          /* nop jobs */
	SF_EVICTION,     /* a small --vram the buffers do not all fit in */
	SF_PLACEMENT,    /* vram, gtt or system buffers */
	SF_PINNED,       /* pinned buffers */
	SF_SHRINKER,     /* a `shrink MS` line */
	SF_FOURCC,       /* WIDTHxHEIGHT:FOURCC buffers */
	SF_PRIME,        /* `prime` buffers: imported by fd */
	SF_SYNCOBJ,      /* syncobj lines, wait= and signal= words */
	SF_RANGES,       /* visible and vram@FPFN-LPFN buffers */
	SF_COUNT,
};

extern const char *const stress_feature_names[SF_COUNT];

/* One case: the workload and the flags of its `ttmsim run`. */
struct stress_case {
	uint64_t seed;
	struct workload wl;      /* each job's @bos its own malloc() */
	unsigned int engines;    /* --engines: >= the workload's */
	bool wound_wait;
	bool priorities;         /* --priorities, from the thread count */
	uint64_t vram;           /* --vram; 0: the default */
	unsigned int hang_timeout_ms; /* 0: the default */
	unsigned int features;   /* 1u << enum stress_feature */
};

/* stress_case.c */
int stress_case_generate(uint64_t seed, struct stress_case *c);
int stress_case_copy(const struct stress_case *from, struct stress_case *to);
void stress_case_free(struct stress_case *c);
/* Recompute wl.n_threads/n_engines and @features after an edit. */
void stress_case_settle(struct stress_case *c);
/*
 * Turn feature @f (SF_PRIME, SF_SYNCOBJ or SF_RANGES) off in @c, for the
 * shrinker: false if @c does not use it (nothing changed).
 */
bool stress_case_feature_off(struct stress_case *c, unsigned int f);
/*
 * The syncobj lines no wait= or signal= word names any more go (after
 * the shrinker dropped their jobs): false if there is none (nothing
 * changed; also when out of memory).
 */
bool stress_case_drop_unused_syncobjs(struct stress_case *c);

/*
 * The words after "ttmsim run --workload FILE" that replay @c, in @argv
 * (room for STRESS_MAX_ARGS); @buf holds their text. Return: how many.
 */
#define STRESS_MAX_ARGS 24
/* run's --watchdog for a case; the printed replay command repeats it. */
#define STRESS_WATCHDOG_S "30"
int stress_case_flags(const struct stress_case *c, char **argv,
		      char buf[512]);

/*
 * stress_outcome.c: how a case's run ended and what it printed (see
 * there): fed by stress_child.c, read by the rest.
 */
#define STRESS_HEAD 3072         /* bytes kept of the start of its output */
#define STRESS_TAIL 1024         /* and of its end */
#define STRESS_LINE 512          /* of a line, to classify it */
#define STRESS_CLASS_MAX 160
struct stress_outcome {
	int status;              /* exit status; 128 + N: signal N; -1: none */
	int signal;              /* the signal that ended it, or 0 */
	bool sanitizer;          /* a sanitizer's report in its output */
	bool timed_out;          /* killed at the deadline (not a failure) */
	char klass[STRESS_CLASS_MAX]; /* the first error line's class */
	/* private: the capture */
	bool have_line;
	char head[STRESS_HEAD];
	size_t head_len, total;
	char tail[STRESS_TAIL];  /* the last bytes, at total % STRESS_TAIL */
	char line[STRESS_LINE];
	size_t line_len;
};

void stress_outcome_init(struct stress_outcome *o);
void stress_outcome_feed(struct stress_outcome *o, const char *buf,
			 size_t n);
/* The output is over and the child reaped with @wait_status. */
void stress_outcome_end(struct stress_outcome *o, int wait_status);
bool stress_outcome_failed(const struct stress_outcome *o);
/* The same failure signature (status, signal, sanitizer, class). */
bool stress_outcome_same(const struct stress_outcome *a,
			 const struct stress_outcome *b);
/* What it printed (start, "[... N bytes ...]", end); malloc, or NULL. */
char *stress_outcome_message(const struct stress_outcome *o);
/* "exit 1", "killed by SIGABRT", "exit 0, a sanitizer report", ... */
void stress_outcome_describe(const struct stress_outcome *o, char *buf,
			     size_t len);

/*
 * A status line every @period_ns, also while a case runs: the parent's
 * wait for its child wakes for it (stress_child.c). @fire(@data, now).
 */
struct stress_timer {
	uint64_t period_ns;      /* 0: none */
	uint64_t next_ns;
	void (*fire)(void *data, uint64_t now);
	void *data;
};
/* Fire @t if it is due at @now, and set its next time. */
void stress_timer_check(struct stress_timer *t, uint64_t now);

/* How stress_case_run() runs a case: the same for a shrink candidate. */
struct stress_exec {
	double check_every_s;    /* run's --check-every; 0: none */
	uint64_t deadline_ns;    /* kill the run then (SIGKILL); 0: never */
	struct stress_timer *timer; /* NULL: no status lines */
};

/*
 * stress_child.c: SIGINT and SIGTERM caught (stress_signals_catch()) for
 * the command's life: each is passed on to a case's child, and the loops
 * stop at the next chance; stress_interrupted() is the signal, 0 if none.
 */
void stress_signals_catch(struct sigaction old[2]);
void stress_signals_restore(const struct sigaction old[2]);
int stress_interrupted(void);

/*
 * The words of "run --workload @path FLAGS --watchdog W [--check-every
 * S]" that replay @c as @ex runs it, in @argv (room for
 * STRESS_MAX_ARGS + 8), their text in @buf. Return: how many.
 */
int stress_run_argv(const struct stress_case *c, const char *path,
		    const struct stress_exec *ex, char **argv,
		    char buf[640]);

/*
 * Write @c to @path and run it with cmd_run() (quiet) in a forked child,
 * with stdout and stderr into a pipe: *@out says how it ended and what
 * it printed. Interrupted (stress_interrupted()) before it started: not
 * started, status 130. Return: 0, or a negative errno if it could not be
 * written or started (a message printed).
 */
int stress_case_run(const struct stress_case *c, const char *path,
		    const struct stress_exec *ex, struct stress_outcome *out);

/* How a shrink ended; stress_shrink_end_names[] say it in the reports. */
enum stress_shrink_end {
	STRESS_SHRINK_MINIMAL,      /* no step applies any more */
	STRESS_SHRINK_TIME,         /* the time ran out first */
	STRESS_SHRINK_INTERRUPTED,  /* a signal */
	STRESS_SHRINK_ERROR,    /* a candidate could not be made or run */
	STRESS_SHRINK_COUNT,
};
extern const char *const stress_shrink_end_names[STRESS_SHRINK_COUNT];

/*
 * stress_shrink.c: make failing @c smaller while it still fails as @want
 * says (stress_outcome_same()), each candidate run as @ex says (@ex's
 * deadline: the shrink's), for at most @seconds; *@c is then the smallest
 * found, written to @path (where candidates are written). *@ret_tried:
 * candidates tried. Return: how it ended.
 */
enum stress_shrink_end stress_shrink(struct stress_case *c,
				     const struct stress_outcome *want,
				     const struct stress_exec *ex,
				     const char *path, double seconds,
				     unsigned int *ret_tried);

/* One iteration's outcome, for the reports. */
struct stress_result {
	uint64_t seed;
	uint64_t jobs;
	unsigned int threads, bos;
	unsigned int features;
	uint64_t checksum;       /* FNV-1a of the workload file */
	int status;              /* run's exit status; 128 + N: signal N */
	int signal;              /* the signal that ended it, or 0 */
	bool sanitizer;          /* a sanitizer reported */
	bool failed;             /* status != 0, or a sanitizer report */
	double seconds;
	char *message;           /* failure: what run printed */
	char *klass;             /* failure: its first error line's class */
	const char *shrink;      /* failure: stress_shrink_end_names[] */
	char *workload_path;     /* failure: the file written */
	char *shrunk_path;       /* failure: the shrunk file */
	char *replay;            /* failure: the command that replays it */
};

struct stress_report {
	uint64_t seed;
	unsigned int shard, shards;
	double limit_s;              /* --minutes, --seconds */
	uint64_t limit_iterations;   /* --iterations; 0: none */
	double seconds;              /* the run's wall time */
	uint64_t jobs;
	uint64_t feature_counts[SF_COUNT];
	struct stress_result *results;
	size_t n_results, cap;
	size_t failures;
};

/* stress_report.c: 0, or -errno. */
int stress_report_json(const struct stress_report *r, const char *path);
int stress_report_junit(const struct stress_report *r, const char *path);
/* Whether @path can be written (created, then removed if it was not there). */
bool stress_path_writable(const char *path);

#endif /* TTMSIM_TOOLS_STRESS_H */
