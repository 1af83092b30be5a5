// SPDX-License-Identifier: MIT
/*
 * bench ww --grid: the contended part over threads x locks per
 * transaction x lock set sizes, every scheme at every point, so that one
 * sees where each one wins; --plot draws tx/s against threads, a panel
 * per (per-tx, locks, hold).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ww.h"
#include "svg_plot.h"

/* One panel's figures: per algorithm, the median tx/s at each thread count. */
struct grid_panel {
	uint64_t per_tx, locks, hold_us;
	double x[WW_MAX_GRID];
	double y[NR_ALGOS][WW_MAX_GRID];
};

static void add_grid_record(struct json_object *results,
			    const struct ww_point *pt,
			    const struct contended_result *row)
{
	enum algo a, fastest = ww_fastest_baseline(row);

	for (a = 0; a < NR_ALGOS; a++) {
		const struct rep_result *best = &row[a].best;
		struct json_object *r = bench_record(results, "grid");

		bench_add_u64(r, "threads", pt->threads);
		bench_add_u64(r, "per_tx", pt->per_tx);
		bench_add_u64(r, "locks", pt->locks);
		bench_add_u64(r, "hold_us", pt->hold_us);
		bench_add_string(r, "hold_kind", ww_hold_kinds[pt->hold_kind]);
		bench_add_string(r, "algorithm", ww_algo_name(a));
		bench_add_stat(r, "tx_per_s", &row[a].tx_per_s, 1);
		bench_add_fixed(r, "backoffs_per_tx", ww_algo_backs_off(a) ?
				bench_ratio((double)best->backoffs,
					    (double)best->tx) : NAN, 6);
		bench_add_fixed(r, "median_ratio_to_sorted",
				bench_ratio(row[a].tx_per_s.median,
					    row[ALGO_SORTED].tx_per_s.median),
				4);
		bench_add_string(r, "fastest_baseline",
				 ww_algo_name(fastest));
	}
}

/* The algorithm with the highest median tx/s. */
static enum algo winner(const struct contended_result *row)
{
	enum algo a, best = 0;

	for (a = 1; a < NR_ALGOS; a++)
		if (row[a].tx_per_s.median > row[best].tx_per_s.median)
			best = a;
	return best;
}

static void print_panel_header(const struct grid_panel *p, unsigned int kind)
{
	enum algo a;

	printf("\nper-tx %llu, locks %llu, hold %llu us (%s): median tx/s\n",
	       (unsigned long long)p->per_tx, (unsigned long long)p->locks,
	       (unsigned long long)p->hold_us, ww_hold_kinds[kind]);
	printf("  %7s", "threads");
	for (a = 0; a < NR_ALGOS; a++)
		printf(" %15s", ww_algo_name(a));
	printf("  %s\n", "fastest");
}

static void print_point(const struct ww_point *pt,
			const struct contended_result *row)
{
	enum algo a;

	printf("  %7llu", (unsigned long long)pt->threads);
	for (a = 0; a < NR_ALGOS; a++)
		printf(" %15.0f", row[a].tx_per_s.median);
	printf("  %s\n", ww_algo_name(winner(row)));
	fflush(stdout);
}

static int write_plot(const struct ww_config *cfg,
		      const struct grid_panel *panels, size_t n)
{
	struct svg_panel *sp = calloc(n, sizeof(*sp));
	const char *names[NR_ALGOS];
	size_t i;
	enum algo a;
	int ret;

	if (!sp) {
		cli_error("bench ww: out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (a = 0; a < NR_ALGOS; a++)
		names[a] = ww_algo_name(a);
	for (i = 0; i < n; i++) {
		snprintf(sp[i].title, sizeof(sp[i].title),
			 "K=%llu of N=%llu, hold %llu us (%s)",
			 (unsigned long long)panels[i].per_tx,
			 (unsigned long long)panels[i].locks,
			 (unsigned long long)panels[i].hold_us,
			 ww_hold_kinds[cfg->hold_kind]);
		sp[i].x = panels[i].x;
		sp[i].n = cfg->n_grid_threads;
		for (a = 0; a < NR_ALGOS; a++)
			sp[i].y[a] = panels[i].y[a];
	}
	ret = svg_plot_write(cfg->plot, "ttmsim bench ww --grid: "
			     "transactions per second (median of the reps)",
			     "threads", "tx/s", names, NR_ALGOS, sp, n);
	free(sp);
	if (ret) {
		cli_error("--plot: cannot write '%s': %s", cfg->plot,
			  strerror(-ret));
		return CLI_EXIT_FAILURE;
	}
	if (!cfg->c.json)
		printf("\nplot: %s (%zu panels)\n", cfg->plot, n);
	return 0;
}

int ww_run_grid(const struct ww_config *cfg, struct json_object *results)
{
	size_t n_panels = cfg->n_holds * cfg->n_grid_per_tx *
			  cfg->n_grid_locks, np = 0, h, k, l, t;
	struct grid_panel *panels = calloc(n_panels, sizeof(*panels));
	struct rep_result *reps = calloc(NR_ALGOS * cfg->c.reps,
					 sizeof(*reps));
	struct contended_result row[NR_ALGOS];
	uint64_t runs = 0;
	enum algo a;
	int ret = 0;

	if (!panels || !reps) {
		cli_error("bench ww: out of memory");
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	for (a = 0; a < NR_ALGOS; a++)
		row[a].reps = reps + a * cfg->c.reps;
	if (!cfg->c.json)
		printf("\ngrid: every scheme at threads x per-tx x locks, "
		       "%llu ms per rep, %llu reps\n",
		       (unsigned long long)cfg->duration_ms,
		       (unsigned long long)cfg->c.reps);
	for (h = 0; h < cfg->n_holds; h++) {
		for (k = 0; k < cfg->n_grid_per_tx; k++) {
			for (l = 0; l < cfg->n_grid_locks; l++) {
				struct grid_panel *p = &panels[np];

				if (cfg->grid_per_tx[k] > cfg->grid_locks[l])
					continue; /* not distinct locks */
				np++;
				p->per_tx = cfg->grid_per_tx[k];
				p->locks = cfg->grid_locks[l];
				p->hold_us = cfg->hold_us[h];
				if (!cfg->c.json)
					print_panel_header(p, cfg->hold_kind);
				for (t = 0; t < cfg->n_grid_threads; t++) {
					struct ww_point pt = {
						.threads = cfg->grid_threads[t],
						.per_tx = p->per_tx,
						.locks = p->locks,
						.hold_us = p->hold_us,
						.hold_kind = cfg->hold_kind,
					};

					ret = ww_run_point(cfg, &pt, row);
					if (ret)
						goto out;
					runs += NR_ALGOS * cfg->c.reps;
					p->x[t] = (double)pt.threads;
					for (a = 0; a < NR_ALGOS; a++)
						p->y[a][t] =
							row[a].tx_per_s.median;
					if (!cfg->c.json)
						print_point(&pt, row);
					add_grid_record(results, &pt, row);
				}
			}
		}
	}
	if (!cfg->c.json)
		printf("\ncounters: ok (%llu runs, no lost update)\n",
		       (unsigned long long)runs);
	if (cfg->plot)
		ret = write_plot(cfg, panels, np);
out:
	free(reps);
	free(panels);
	return ret;
}
