// SPDX-License-Identifier: MIT
/*
 * ttmsim run: client priorities (--priorities) and the latency of jobs
 * from submit to retire, per priority, for the summary.
 *
 * Latency is measured on the GPU's clock, not with a sleep or a wait: the
 * submitting thread notes ttm_gpu_now_us() just before
 * ttm_execbuf_submit(), the retire hook the job's end_us (what the GPU
 * says it retired at; on a virtual clock both are deterministic). The
 * difference covers everything a client waits for: reservation,
 * validation and moves, the scheduler's queue (where priorities act),
 * then the engine's queue and the job's own run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse.h"
#include "run.h"

/*
 * The priorities a client may ask for, from the highest: kernel is the
 * device's own (its moves), which a client may take as a privileged DRM
 * file may (ttm_client_set_priority()).
 */
static const struct {
	const char *name;
	enum ttm_sched_priority priority;
} prio_names[] = {
	{ "kernel", TTM_SCHED_PRIORITY_KERNEL },
	{ "high", TTM_SCHED_PRIORITY_HIGH },
	{ "normal", TTM_SCHED_PRIORITY_NORMAL },
	{ "low", TTM_SCHED_PRIORITY_LOW },
};

#define N_PRIO_NAMES (sizeof(prio_names) / sizeof(prio_names[0]))

const char *run_priority_name(enum ttm_sched_priority priority)
{
	size_t i;

	for (i = 0; i < N_PRIO_NAMES; i++)
		if (prio_names[i].priority == priority)
			return prio_names[i].name;
	return "unknown";
}

/* One NAME=COUNT item of @arg, @item NUL-terminated. */
static int parse_item(const char *arg, char *item, struct run_priorities *p)
{
	char *eq = strchr(item, '=');
	uint64_t count;
	size_t i, k;

	if (!*item) {
		cli_error("--priorities: an empty item in '%s'", arg);
		return CLI_EXIT_USAGE;
	}
	if (!eq || eq == item) {
		cli_error("--priorities: '%s' in '%s' is not NAME=COUNT", item,
			  arg);
		return CLI_EXIT_USAGE;
	}
	*eq = '\0';
	for (i = 0; i < N_PRIO_NAMES; i++)
		if (!strcmp(item, prio_names[i].name))
			break;
	if (i == N_PRIO_NAMES) {
		cli_error("--priorities: '%s' in '%s' is not one of kernel, "
			  "high, normal, low", item, arg);
		return CLI_EXIT_USAGE;
	}
	for (k = 0; k < p->n; k++) {
		if (p->prio[k] == prio_names[i].priority) {
			cli_error("--priorities: '%s' is given twice in '%s'",
				  item, arg);
			return CLI_EXIT_USAGE;
		}
	}
	if (cli_parse_uint("--priorities", eq + 1, 0, WL_MAX_THREADS,
			   &count))
		return CLI_EXIT_USAGE;
	p->prio[p->n] = prio_names[i].priority;
	p->count[p->n] = (unsigned int)count;
	p->n++;
	p->total += (unsigned int)count;
	return 0;
}

int run_priorities_parse(const char *arg, struct run_priorities *p)
{
	struct run_priorities parsed = { 0 };
	char *copy = strdup(arg), *item, *next;
	int ret = 0;

	if (!copy) {
		cli_error("--priorities: out of memory");
		return CLI_EXIT_USAGE;
	}
	/* strsep, not strtok: "high=1,,low=1" has an empty item. */
	for (next = copy; ret == 0 && (item = strsep(&next, ","));)
		ret = parse_item(arg, item, &parsed);
	free(copy);
	if (ret)
		return ret;
	if (parsed.total == 0 || parsed.total > WL_MAX_THREADS) {
		cli_error("--priorities: '%s' gives %u clients (1 to %u)", arg,
			  parsed.total, WL_MAX_THREADS);
		return CLI_EXIT_USAGE;
	}
	*p = parsed;
	return 0;
}

enum ttm_sched_priority run_priority_of(const struct run_priorities *p,
					unsigned int thread)
{
	unsigned int k;

	for (k = 0; k < p->n; k++) {
		if (thread < p->count[k])
			return p->prio[k];
		thread -= p->count[k];
	}
	return TTM_SCHED_PRIORITY_NORMAL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank @pct-th percentile of @v[0..@n), sorted, n >= 1. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank = (n * pct + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

int run_latency_gather(struct run *run,
		       struct run_latency lat[TTM_SCHED_PRIORITY_COUNT])
{
	uint64_t *v[TTM_SCHED_PRIORITY_COUNT] = { NULL };
	size_t j;
	int p, ret = 0;

	memset(lat, 0, TTM_SCHED_PRIORITY_COUNT * sizeof(*lat));
	for (p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++) {
		v[p] = malloc((run->wl.n_jobs ? run->wl.n_jobs : 1) *
			      sizeof(*v[p]));
		if (!v[p])
			ret = -ENOMEM;
	}
	for (j = 0; ret == 0 && run->results && j < run->wl.n_jobs; j++) {
		const struct run_job_result *r = &run->results[j];
		const struct run_thread *th;

		if (r->state != RUN_JOB_ACCEPTED ||
		    !__atomic_load_n(&r->retired, __ATOMIC_ACQUIRE))
			continue;
		th = &run->threads[run->wl.jobs[j].thread];
		p = th->priority;
		v[p][lat[p].count++] = r->latency_us;
	}
	for (p = 0; ret == 0 && p < TTM_SCHED_PRIORITY_COUNT; p++) {
		if (!lat[p].count)
			continue;
		qsort(v[p], lat[p].count, sizeof(*v[p]), cmp_u64);
		lat[p].p50_us = percentile(v[p], lat[p].count, 50);
		lat[p].p99_us = percentile(v[p], lat[p].count, 99);
	}
	for (p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++)
		free(v[p]);
	return ret;
}

unsigned int run_priority_clients(const struct run *run,
				  enum ttm_sched_priority priority)
{
	unsigned int t, n = 0;

	for (t = 0; run->threads && t < run->wl.n_threads; t++)
		n += run->threads[t].priority == priority;
	return n;
}
