/* SPDX-License-Identifier: MIT */
/*
 * ttmsim run: what its parts share. run.c parses the command line and
 * drives the run; run_setup.c makes the device, buffers and clients and
 * lets go of them; run_submit.c runs the submitting threads; run_verify.c
 * checks the invariants at the end; run_watch.c the watchdog, the
 * progress bar and the signals; run_report.c the summary and the dump;
 * run_trace.c the trace; run_shrink.c the shrinker (--shrink-ms);
 * run_priority.c the clients' priorities and the latency per priority;
 * run_json.c json-c under allocation failure (run_json.h); run_fault.c
 * the faults a test injects (TTMSIM_TEST_FAULT).
 */
#ifndef TTMSIM_TOOLS_RUN_H
#define TTMSIM_TOOLS_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ttmsim/execbuf.h"
#include "ttmsim/interrupt.h"
#include "ttmsim/sched.h"
#include "workload.h"

/*
 * --priorities: how many clients of each priority, in the order given;
 * threads 0, 1, ... take them in that order. @n == 0: not given (every
 * client normal).
 */
struct run_priorities {
	unsigned int n;
	enum ttm_sched_priority prio[TTM_SCHED_PRIORITY_COUNT];
	unsigned int count[TTM_SCHED_PRIORITY_COUNT];
	unsigned int total;          /* the sum of @count */
};

struct run_config {
	const char *workload_path;   /* NULL: generated */
	struct wl_gen_options gen;
	bool gen_flags_given;        /* a generator flag was on the line */
	bool threads_given;          /* --threads was */
	struct run_priorities priorities;
	double seconds;              /* stop submitting after; 0: never */
	unsigned int engines;        /* --engines; 0: the workload's */
	bool wound_wait;
	uint64_t vram, gtt;
	bool allow_duplicates;
	bool json, quiet, check_only;
	int progress;                /* -1: if stderr is a terminal */
	const char *dump_path, *trace_path, *save_path;
	double watchdog_s;
	unsigned int hang_timeout_ms;
	/*
	 * --shrink-ms, if @shrink_ms_given: overrides the workload file's
	 * `shrink` line, 0 turning it off; for a generated workload it goes
	 * through cfg->gen.shrink_ms (then --save-workload keeps it).
	 */
	bool shrink_ms_given;
	unsigned int shrink_ms;
	/*
	 * --check-every: ttm_device_check() and the execbuf counters'
	 * sum every that many seconds while
	 * the run goes on (the watchdog's tick), not only at the end; 0:
	 * only at the end. `ttmsim stress` turns it on.
	 */
	double check_every_s;
};

/*
 * Jobs a thread may have in flight: it waits for its oldest before it
 * submits more, as a driver throttles a client, so that the GPU's queue
 * (and the wait at a stop) stays short however fast submission is.
 */
#define RUN_MAX_IN_FLIGHT 64

/* One submitting thread. */
struct run_thread {
	struct run *run;
	unsigned int index;
	pthread_t thread;
	pid_t tid;                   /* atomic; 0 until started */
	/*
	 * Its interrupt token (ttm_interrupt_self()), set before its first
	 * busy; NULL if it could not get one. Put once it is joined.
	 */
	struct ttm_interrupt_token *token;
	struct ttm_client *client;
	enum ttm_sched_priority priority; /* its client's */
	uint32_t *handles;           /* [bo index] */
	uint32_t *sync_handles;      /* [syncobj index]: its client's */
	int done;                    /* atomic: submits no more (joined or
					gave up): its jobs' waiters go on */
	size_t *jobs;                /* its jobs, indexes in wl.jobs */
	size_t n_jobs;
	size_t next;                 /* atomic: jobs[next] is submitted now */
	bool busy;                   /* atomic: inside ttm_execbuf_submit(),
					or waiting for room to submit */
	/* Out-fences of its jobs still in flight, oldest at @ring_head. */
	struct ttm_fence *ring[RUN_MAX_IN_FLIGHT];
	unsigned int ring_head, ring_count;
	struct run_trace_track *track; /* its phase events, with --trace */
};

/* What the shrinker did (run_shrink.c), for the summary. */
struct run_shrink_stats {
	unsigned int period_ms;      /* 0: no shrinker ran */
	uint64_t passes;             /* ttm_device_swapout() calls */
	uint64_t buffers;            /* buffers they swapped out */
	uint64_t bytes;              /* the bytes they returned */
	uint64_t busy;               /* passes ended by a transient error */
	uint64_t errors;             /* passes ended by another error */
};

/* What happened to one job of the workload. */
enum run_job_state {
	RUN_JOB_NOT_SUBMITTED, /* stopped before (--seconds, a signal) */
	RUN_JOB_REJECTED,      /* ttm_execbuf_submit() failed: @err */
	RUN_JOB_ACCEPTED,      /* queued; the retire hook fills the rest */
	RUN_JOB_SUBMITTING,    /* in ttm_execbuf_submit(): maybe already
				* queued (the watchdog's grace counts it);
				* never left after it returns */
};

struct run_job_result {
	uint8_t state;         /* enum run_job_state; atomic while running */
	int err;               /* RUN_JOB_REJECTED: the errno, < 0 */
	int status;            /* retired: 0 or the error */
	uint32_t retired;      /* atomic: retirements seen (must be 1) */
	uint64_t submit_us;    /* GPU clock, just before the submit */
	uint64_t latency_us;   /* retired: its end_us - @submit_us */
	uint64_t start_us, end_us; /* retired: the GPU's times */
	/*
	 * With syncobjs only: the out-fence's callback. A job whose
	 * in-syncobj's fence failed fails without running, never reaching
	 * the GPU's retire hook: @fence_status (atomic, ttm_fence_get_status()
	 * once signalled, else 0) is how the verifier sees it end.
	 */
	struct ttm_fence_cb cb;
	int fence_status;
};

/* TTMSIM_TEST_FAULT (run_fault.c): a fault a test injects on purpose. */
enum run_fault {
	RUN_FAULT_NONE,
	RUN_FAULT_WORD1,        /* a word of a buffer changed after the run */
	RUN_FAULT_RETIRE_TWICE, /* a job counted as retired twice */
	RUN_FAULT_SUBMIT_LIST,  /* thread 0's buffer list not allocated */
	RUN_FAULT_STALL,        /* thread 0 stalls, a job in flight */
	RUN_FAULT_NO_WAIT,      /* wait= words not passed to the execbuf */
	RUN_FAULT_NO_RANGE,     /* page ranges not passed to the library */
	RUN_FAULT_SHRINKABLE,   /* a violation with a known minimal case */
	RUN_FAULT_BAD_UTF8,     /* a violation in invalid UTF-8 */
	RUN_FAULT_SANITIZER,    /* a sanitizer-like line, exit 0 */
	RUN_FAULT_ABORT,        /* abort() after the run */
	RUN_FAULT_LIVE_COUNT,   /* the mid-run check sees a wrong count */
};

struct run {
	const struct run_config *cfg;
	enum run_fault fault;
	struct workload wl;
	unsigned int engines;        /* job engines; the copy engine is next */
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_client *owner;    /* created the buffers */
	struct ttm_bo **bos;         /* [bo index]; NULL if it never fit */
	struct ttm_placement *places; /* [bo index]: for its jobs */
	int *prime_fds;              /* [bo index]: the owner's export, or -1 */
	struct ttm_syncobj **syncobjs; /* [syncobj index] */
	/*
	 * workload_sync_deps(): the job each sync word waits to be
	 * submitted; NULL without sync words. @sync_lock and @sync_cv wake
	 * the threads waiting for a submission (run_submit.c).
	 */
	size_t *sync_deps;
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_cv;
	uint64_t prime_imports;      /* atomic: fd-to-handle imports made */
	uint64_t sync_waits;         /* atomic: submissions held for a wait */
	struct run_thread *threads;
	struct run_job_result *results; /* [job index] */
	uint64_t gpu_offset_ns;      /* CLOCK_MONOTONIC at GPU time 0 */
	uint64_t start_ns, end_ns;
	uint64_t progress;           /* atomic: submissions + retirements */
	uint64_t submitted_jobs;     /* atomic: calls made */
	int stop;                    /* atomic: stop submitting (signal,
					--seconds, a failed thread) */
	int seconds_out;             /* atomic: --seconds ran out */
	/*
	 * Atomic: threads that could not submit a job for another reason
	 * than a stop (each said why on stderr): the run fails.
	 */
	unsigned int submit_failures;
	int interrupted;             /* atomic: by SIGINT/SIGTERM */
	unsigned int checker_reports; /* atomic */
	unsigned int live_violations; /* atomic: --check-every's findings */
	struct run_trace *trace;     /* NULL without --trace */
	struct run_watch *watch;     /* run_watch.c's threads */
	struct run_shrink *shrink;   /* run_shrink.c's thread, while it runs */
	struct run_shrink_stats shrink_stats; /* once it stopped */
};

/*
 * The tag of workload job @index in ttm_execbuf_args::tag, so that the
 * GPU's retire hook (and the trace) can tell it from a move (tag 0).
 */
#define RUN_JOB_TAG(index) ((uint64_t)(index) + 1)

/*
 * run_setup.c: the GPU, the device, every buffer, a client per thread.
 * 0, or an exit status after a message. run_teardown() lets go of what
 * there is, also after a failed run_setup().
 */
int run_setup(struct run *run);
void run_teardown(struct run *run);

/*
 * run_generate.c: generate the workload into run->wl, with SIGINT and
 * SIGTERM blocked from then on; one that came while generating stops it
 * and sets run->stop and run->interrupted (the jobs made so far are run's
 * workload). 0, or an exit status after a message (settings whose
 * workload cannot be allocated: CLI_EXIT_USAGE naming the flags).
 */
int run_generate(struct run *run);
/* Unblock SIGINT and SIGTERM again after a run that will not start. */
void run_generate_unblock(void);

/*
 * run_setup.c: where jobs need buffer @b (SYSTEM ones: GTT; a range or
 * visible VRAM as the bo line says), into @place.
 */
void run_job_placement(const struct wl_bo *b, struct ttm_placement *place);

/*
 * run_submit.c: start the submitting threads, wait for them and for the
 * GPU to go idle. 0, or CLI_EXIT_FAILURE if a thread could not start.
 */
int run_submit_all(struct run *run);

/*
 * run_verify.c: the invariants after the run: accounting, every job
 * submitted unless the run was stopped (--seconds, a signal), each
 * accepted job retired once, contents equal to the adds of the jobs that
 * completed. Prints each violation on stderr, and what it could not
 * check (out of memory, a buffer it could not read); false if any.
 */
bool run_verify(struct run *run);

/*
 * run_watch.c: the kit's watchdog (watchdog.h), which ends the process
 * with CLI_EXIT_DEADLOCK after cfg->watchdog_s without progress, and its
 * report naming who waits on what and who holds it; the progress bar;
 * SIGINT/SIGTERM turned into run->stop.
 * run_watch_start() blocks the signals in the calling thread (call it
 * before starting others, which inherit the mask).
 */
int run_watch_start(struct run *run);
void run_watch_stop(struct run *run);

/*
 * run_report.c: the summary (text or JSON) on stdout, and the dump.
 * run_report_summary() returns @exit_status, the one the summary shows,
 * or CLI_EXIT_FAILURE instead of CLI_EXIT_OK if it could not make all of
 * the summary (after a message; a JSON summary is then not printed).
 * run_report_dump(): 0, or CLI_EXIT_FAILURE after a message, the file
 * then left as it was (never a part of the dump).
 */
int run_report_summary(struct run *run, int exit_status);
int run_report_dump(struct run *run, const char *path);

/*
 * run_shrink.c: the shrinker thread, if run->wl.shrink_ms: every that
 * many ms, ttm_device_swapout() of an eighth of the unpinned bytes
 * resident in VRAM and GTT. run_shrink_start(): 0 (also without a
 * shrinker), or CLI_EXIT_FAILURE after a message. run_shrink_stop():
 * stop it at once, join it, keep its counters in run->shrink_stats;
 * harmless if it is not running. The device must be made with
 * run_shrink_funcs (its swap_notify counts the shrinker's buffers).
 */
extern const struct ttm_device_funcs run_shrink_funcs;
int run_shrink_start(struct run *run);
void run_shrink_stop(struct run *run);

/*
 * run_priority.c: --priorities and the latency per priority.
 * run_priorities_parse(): "NAME=COUNT,..." with NAME kernel, high, normal
 * or low, each at most once, 1 to WL_MAX_THREADS clients in all; 0 and
 * *@p, or CLI_EXIT_USAGE after a message naming --priorities.
 * run_priority_of(): the priority of thread @thread (normal beyond them).
 */
int run_priorities_parse(const char *arg, struct run_priorities *p);
enum ttm_sched_priority run_priority_of(const struct run_priorities *p,
					unsigned int thread);
const char *run_priority_name(enum ttm_sched_priority priority);
unsigned int run_priority_clients(const struct run *run,
				  enum ttm_sched_priority priority);

/* Submit-to-retire latency of the retired jobs of one priority. */
struct run_latency {
	uint64_t count;
	uint64_t p50_us, p99_us;     /* nearest rank; 0 if @count is 0 */
};

/* Fill @lat[priority] from run->results: 0, or -ENOMEM. */
int run_latency_gather(struct run *run,
		       struct run_latency lat[TTM_SCHED_PRIORITY_COUNT]);

/*
 * run_fault.c: TTMSIM_TEST_FAULT, test-only. run_fault_parse(): the fault
 * asked for, announced on stderr (an unknown one ignored with a line);
 * run_fault_apply(): make the word1, retire-twice, sanitizer or abort
 * fault, after the run and before run_verify() (submit-list acts in
 * run_submit.c). run_fault_violation(): with the shrinkable or bad-utf8
 * fault, whether the workload has the test-only violation (printed).
 * run_fault_stall_prepare(): with the stall fault, in thread 0 before its
 * job @j: a never-signalled fence on the job's first buffer (returned;
 * NULL: no stall). run_fault_stall(): after the submit, hold that buffer
 * reserved and wait, busy, until a signal; then signal and put @never.
 */
enum run_fault run_fault_parse(void);
void run_fault_apply(struct run *run);
bool run_fault_violation(struct run *run);
struct ttm_fence *run_fault_stall_prepare(struct run_thread *th, size_t j);
void run_fault_stall(struct run_thread *th, size_t j,
		     struct ttm_fence *never);
/*
 * run_fault_live.c, the live-count fault: run_fault_live_wait(), in each
 * submitting thread after its first job, waits until the mid-run check
 * has run (with --check-every; until a stop); run_fault_live_check(),
 * in that check, adds one to @st's completed jobs. Both do nothing
 * without the fault.
 */
void run_fault_live_wait(struct run_thread *th);
void run_fault_live_check(struct run *run, struct ttm_execbuf_stats *st);

/* run_trace.c: Chrome trace events, with --trace. */
int run_trace_init(struct run *run);
void run_trace_gpu_job(struct run *run,
		       const struct ttm_gpu_job_info *info);
ttm_execbuf_event_fn run_trace_phase;   /* data: the struct run_thread */
int run_trace_write(struct run *run, const char *path);
void run_trace_free(struct run *run);

#endif /* TTMSIM_TOOLS_RUN_H */
