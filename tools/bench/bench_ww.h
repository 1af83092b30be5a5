/* SPDX-License-Identifier: MIT */
/*
 * bench ww's contended part, shared by its files: bench_ww.c (the
 * command, the uncontended part, the runs of one point) and
 * bench_ww_grid.c (the grid over threads, locks per transaction and lock
 * set sizes, and its plot).
 */
#ifndef TTMSIM_TOOLS_BENCH_WW_H
#define TTMSIM_TOOLS_BENCH_WW_H

#include "bench.h"

#define WW_MAX_HOLDS 16
#define WW_MAX_GRID 8 /* values per grid axis */

/*
 * What a hold is: HOLD_WALL busy-waits until the clock has moved on by
 * the hold time, so a holder preempted meanwhile finishes its hold as soon
 * as it runs again; HOLD_WORK does a fixed amount of computation that
 * takes the hold time on an idle CPU, so a preempted holder still owes
 * all of it (like a driver's real work under its locks).
 */
enum hold_kind { HOLD_WALL, HOLD_WORK };

/* Their names, indexed by enum hold_kind, NULL-terminated. */
extern const char *const ww_hold_kinds[];

/* c.checker_runs (--checker) is the checker's state in contended runs. */
struct ww_config {
	struct bench_common c; /* first: the harness's */
	uint64_t iterations, threads, locks, per_tx, duration_ms;
	uint64_t hold_us[WW_MAX_HOLDS];
	size_t n_holds;
	unsigned int hold_kind; /* enum hold_kind */
	bool grid;
	uint64_t grid_threads[WW_MAX_GRID], grid_per_tx[WW_MAX_GRID];
	uint64_t grid_locks[WW_MAX_GRID];
	size_t n_grid_threads, n_grid_per_tx, n_grid_locks;
	const char *plot; /* --plot FILE.svg, or NULL */
};

enum algo {
	ALGO_WOUND_WAIT,
	ALGO_WAIT_DIE,
	ALGO_SORTED,
	ALGO_GLOBAL,
	ALGO_TRYLOCK,
	NR_ALGOS,
};

struct rep_result {
	uint64_t tx, backoffs;
	double elapsed_s;
	double tx_per_s;
};

/* One algorithm at one point: @reps filled by ww_run_point(). */
struct contended_result {
	struct rep_result best; /* the rep with the most tx/s */
	struct rep_result *reps;
	struct bench_stat tx_per_s;
};

/* A point of the contended part. */
struct ww_point {
	uint64_t threads, per_tx, locks, hold_us;
	unsigned int hold_kind;
};

const char *ww_algo_name(enum algo a);
bool ww_algo_backs_off(enum algo a);

/* The fastest baseline of @row (NR_ALGOS results), by best tx/s. */
enum algo ww_fastest_baseline(const struct contended_result *row);

/*
 * Run every algorithm at @pt, --reps times (repetitions outermost): fill
 * row[0..NR_ALGOS), whose reps arrays hold cfg->c.reps each. Return 0, or
 * CLI_EXIT_FAILURE after a message (a lost update, out of memory).
 */
int ww_run_point(const struct ww_config *cfg, const struct ww_point *pt,
		 struct contended_result *row);

/* The grid (--grid): run, print, add the records, write --plot. */
int ww_run_grid(const struct ww_config *cfg, struct json_object *results);

#endif /* TTMSIM_TOOLS_BENCH_WW_H */
