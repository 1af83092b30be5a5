/* SPDX-License-Identifier: MIT */
/*
 * ttmsim stress: random workloads through `ttmsim run`, for as long as
 * asked. stress.c is the command line and the loop; stress_case.c makes
 * a case (a workload and the run flags) from a seed, writes it and runs
 * it through cmd_run(), in this process; stress_shrink.c makes a failing
 * case smaller while it still fails; stress_report.c writes the JSON
 * report and the JUnit XML.
 */
#ifndef TTMSIM_TOOLS_STRESS_H
#define TTMSIM_TOOLS_STRESS_H

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
 * The words after "ttmsim run --workload FILE" that replay @c, in @argv
 * (room for STRESS_MAX_ARGS); @buf holds their text. Return: how many.
 */
#define STRESS_MAX_ARGS 24
/* run's --watchdog for a case; the printed replay command repeats it. */
#define STRESS_WATCHDOG_S "30"
int stress_case_flags(const struct stress_case *c, char **argv,
		      char buf[512]);

/*
 * Write @c to @path and run it with cmd_run() (quiet); what it printed
 * on stderr is in @msg (NUL-terminated, cut to @len). Return: run's exit
 * status (0 clean, 1 a violation, 2 ...), or -1 if it could not be
 * written.
 */
int stress_case_run(const struct stress_case *c, const char *path,
		    double check_every_s, char *msg, size_t len);

/*
 * stress_shrink.c: make failing @c smaller while stress_case_run() still
 * returns @status, for at most @seconds; *@c is then the smallest found.
 * @path: where candidates are written. Return: candidates tried.
 */
unsigned int stress_shrink(struct stress_case *c, int status,
			   const char *path, double seconds);

/* One iteration's outcome, for the reports. */
struct stress_result {
	uint64_t seed;
	uint64_t jobs;
	unsigned int threads, bos;
	unsigned int features;
	uint64_t checksum;       /* FNV-1a of the workload file */
	int status;              /* run's exit status */
	double seconds;
	char *message;           /* failure: what run printed */
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
