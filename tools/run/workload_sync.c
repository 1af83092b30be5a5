// SPDX-License-Identifier: MIT
/*
 * Workloads of `ttmsim run`: the rules of the syncobj words that span
 * jobs (workload.h): who signals what each job waits for, and that the
 * waits cannot deadlock the run. The run submits a waiting job only once
 * its signaller is submitted, and a timeline's points in increasing
 * order; with each thread submitting in file order, those are the edges
 * of a graph over the jobs, which must have no cycle (Kahn's algorithm).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "workload.h"

struct signal_ref {
	uint32_t syncobj;
	uint64_t point;
	size_t job;
	unsigned int k;
};

static int cmp_signal(const void *a, const void *b)
{
	const struct signal_ref *x = a, *y = b;

	if (x->syncobj != y->syncobj)
		return x->syncobj < y->syncobj ? -1 : 1;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->job > y->job) - (x->job < y->job);
}

static const char *source_of(const struct workload *wl)
{
	return wl->source ? wl->source : "<generated>";
}

/* "syncobj 'S' point P" or "binary syncobj 'S'" into @buf. */
static const char *sync_name(const struct workload *wl,
			     const struct wl_sync *s, char *buf, size_t len)
{
	const struct wl_syncobj *so = &wl->syncobjs[s->syncobj];

	if (s->point)
		snprintf(buf, len, "syncobj '%s' point %llu", so->name,
			 (unsigned long long)s->point);
	else
		snprintf(buf, len, "binary syncobj '%s'", so->name);
	return buf;
}

/* The signal of (@syncobj, @point) in the sorted @sig, or NULL. */
static const struct signal_ref *find_signal(const struct signal_ref *sig,
					    size_t n, uint32_t syncobj,
					    uint64_t point)
{
	struct signal_ref key = { syncobj, point, 0, 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sig[mid].syncobj < key.syncobj ||
		    (sig[mid].syncobj == key.syncobj &&
		     sig[mid].point < key.point))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && sig[lo].syncobj == syncobj && sig[lo].point == point)
		return &sig[lo];
	return NULL;
}

/*
 * A job on a cycle, from @j, which Kahn's algorithm left (@indeg not 0):
 * such a job has a predecessor left too (the job before it in its
 * thread, or a dependency); n steps back along those end on a cycle. The
 * first job left in file order may only wait on one (downstream of it),
 * and naming it would point the reader at the wrong lines.
 */
static size_t on_cycle(const struct workload *wl, const size_t *deps,
		       const size_t *indeg, size_t j)
{
	size_t steps, i, p;
	unsigned int k;

	for (steps = 0; steps < wl->n_jobs; steps++) {
		size_t pred = SIZE_MAX;

		for (k = 0; k < wl->jobs[j].n_syncs && pred == SIZE_MAX; k++) {
			p = deps[j * WL_MAX_JOB_SYNCS + k];
			if (p != SIZE_MAX && indeg[p])
				pred = p;
		}
		for (i = j; pred == SIZE_MAX && i-- > 0;)
			if (wl->jobs[i].thread == wl->jobs[j].thread) {
				if (indeg[i])
					pred = i;
				break;
			}
		if (pred == SIZE_MAX)
			break; /* cannot be: a job left has one left */
		j = pred;
	}
	return j;
}

/*
 * No cycle among the jobs with edges @deps and each thread's order.
 * 0, CLI_EXIT_USAGE after a message naming a job on a cycle, -ENOMEM.
 */
static int check_acyclic(const struct workload *wl, const size_t *deps)
{
	size_t n = wl->n_jobs, j, head = 0, tail = 0, done = 0;
	unsigned int t, k;
	size_t *indeg = calloc(n, sizeof(*indeg));
	size_t *first = calloc(n + 1, sizeof(*first));
	size_t *next_in_thread = malloc(n * sizeof(*next_in_thread));
	size_t *last = malloc((wl->n_threads ? wl->n_threads : 1) *
			      sizeof(*last));
	size_t *edges = malloc((n * WL_MAX_JOB_SYNCS + 1) * sizeof(*edges));
	size_t *queue = malloc(n * sizeof(*queue));
	int ret = -ENOMEM;

	if (!indeg || !first || !next_in_thread || !last || !edges || !queue)
		goto out;
	for (t = 0; t < wl->n_threads; t++)
		last[t] = SIZE_MAX;
	for (j = n; j-- > 0;) {
		next_in_thread[j] = last[wl->jobs[j].thread];
		last[wl->jobs[j].thread] = j;
		if (next_in_thread[j] != SIZE_MAX)
			indeg[next_in_thread[j]]++;
	}
	/* Edges dep -> j, grouped by dep (counting sort). */
	for (j = 0; j < n; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++)
			if (deps[j * WL_MAX_JOB_SYNCS + k] != SIZE_MAX) {
				first[deps[j * WL_MAX_JOB_SYNCS + k] + 1]++;
				indeg[j]++;
			}
	for (j = 0; j < n; j++)
		first[j + 1] += first[j];
	{
		size_t *fill = queue; /* borrowed: filled before it is used */

		for (j = 0; j < n; j++)
			fill[j] = first[j];
		for (j = 0; j < n; j++)
			for (k = 0; k < wl->jobs[j].n_syncs; k++) {
				size_t d = deps[j * WL_MAX_JOB_SYNCS + k];

				if (d != SIZE_MAX)
					edges[fill[d]++] = j;
			}
	}
	for (j = 0; j < n; j++)
		if (indeg[j] == 0)
			queue[tail++] = j;
	while (head < tail) {
		size_t u = queue[head++], e;

		done++;
		if (next_in_thread[u] != SIZE_MAX &&
		    --indeg[next_in_thread[u]] == 0)
			queue[tail++] = next_in_thread[u];
		for (e = first[u]; e < first[u + 1]; e++)
			if (--indeg[edges[e]] == 0)
				queue[tail++] = edges[e];
	}
	ret = 0;
	if (done < n) {
		for (j = 0; j < n && indeg[j] == 0; j++)
			;
		j = on_cycle(wl, deps, indeg, j);
		fprintf(stderr, "%s:%u: this job could never be submitted: "
			"its syncobj waits, its thread's earlier jobs and the "
			"timelines' earlier points make a cycle (a deadlock)\n",
			source_of(wl), wl->jobs[j].line);
		ret = CLI_EXIT_USAGE;
	}
out:
	free(indeg);
	free(first);
	free(next_in_thread);
	free(last);
	free(edges);
	free(queue);
	return ret;
}

int workload_sync_deps(const struct workload *wl, size_t **ret_deps)
{
	struct signal_ref *sig = NULL;
	size_t n_sig = 0, j, i, *deps = NULL;
	unsigned int k;
	int ret;

	if (ret_deps)
		*ret_deps = NULL;
	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++)
			n_sig += wl->jobs[j].syncs[k].signal;
	for (j = 0; j < wl->n_jobs && !wl->jobs[j].n_syncs; j++)
		;
	if (j == wl->n_jobs)
		return 0;
	sig = malloc((n_sig ? n_sig : 1) * sizeof(*sig));
	deps = malloc(wl->n_jobs * WL_MAX_JOB_SYNCS * sizeof(*deps));
	if (!sig || !deps) {
		ret = -ENOMEM;
		goto out;
	}
	n_sig = 0;
	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < WL_MAX_JOB_SYNCS; k++) {
			const struct wl_sync *s = &wl->jobs[j].syncs[k];

			deps[j * WL_MAX_JOB_SYNCS + k] = SIZE_MAX;
			if (k < wl->jobs[j].n_syncs && s->signal)
				sig[n_sig++] = (struct signal_ref){
					s->syncobj, s->point, j, k };
		}
	qsort(sig, n_sig, sizeof(*sig), cmp_signal);
	for (i = 1; i < n_sig; i++) {
		if (sig[i].syncobj == sig[i - 1].syncobj &&
		    sig[i].point == sig[i - 1].point) {
			const struct wl_job *job = &wl->jobs[sig[i].job];

			char name[128];

			fprintf(stderr, "%s:%u: a second signal of %s (the "
				"first: the job of line %u)%s\n",
				source_of(wl), job->line,
				sync_name(wl, &job->syncs[sig[i].k], name,
					  sizeof(name)),
				wl->jobs[sig[i - 1].job].line,
				sig[i].point ? "" : "; a timeline takes "
				"more than one");
			ret = CLI_EXIT_USAGE;
			goto out;
		}
		/* A timeline's points go in order: the one below first. */
		if (sig[i].syncobj == sig[i - 1].syncobj)
			deps[sig[i].job * WL_MAX_JOB_SYNCS + sig[i].k] =
				sig[i - 1].job;
	}
	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++) {
			const struct wl_sync *s = &wl->jobs[j].syncs[k];
			const struct signal_ref *r;
			char name[128];

			if (s->signal)
				continue;
			r = find_signal(sig, n_sig, s->syncobj, s->point);
			if (!r) {
				fprintf(stderr, "%s:%u: wait on %s, which no "
					"job signals (the wait would never "
					"end)\n", source_of(wl),
					wl->jobs[j].line,
					sync_name(wl, s, name, sizeof(name)));
				ret = CLI_EXIT_USAGE;
				goto out;
			}
			if (r->job == j) {
				fprintf(stderr, "%s:%u: the job waits on %s, "
					"which it signals itself\n",
					source_of(wl), wl->jobs[j].line,
					sync_name(wl, s, name, sizeof(name)));
				ret = CLI_EXIT_USAGE;
				goto out;
			}
			deps[j * WL_MAX_JOB_SYNCS + k] = r->job;
		}
	ret = check_acyclic(wl, deps);
out:
	free(sig);
	if (ret == 0 && ret_deps)
		*ret_deps = deps;
	else
		free(deps);
	return ret;
}

/* The job that signals (@syncobj, @point), or SIZE_MAX. */
static size_t signaller_of(const struct workload *wl, uint32_t syncobj,
			   uint64_t point)
{
	size_t j;
	unsigned int k;

	for (j = 0; j < wl->n_jobs; j++)
		for (k = 0; k < wl->jobs[j].n_syncs; k++) {
			const struct wl_sync *s = &wl->jobs[j].syncs[k];

			if (s->signal && s->syncobj == syncobj &&
			    s->point == point)
				return j;
		}
	return SIZE_MAX;
}

unsigned int workload_sync_prune(struct workload *wl)
{
	unsigned int dropped = 0, k, m;
	size_t j;

	for (j = 0; j < wl->n_jobs; j++) {
		struct wl_job *job = &wl->jobs[j];

		for (k = m = 0; k < job->n_syncs; k++) {
			const struct wl_sync *s = &job->syncs[k];
			size_t d = s->signal ? 0 :
				   signaller_of(wl, s->syncobj, s->point);

			/* No signaller left, or one the thread reaches later. */
			if (!s->signal &&
			    (d == SIZE_MAX || (d >= j &&
			     wl->jobs[d].thread == job->thread))) {
				dropped++;
				continue;
			}
			job->syncs[m++] = *s;
		}
		job->n_syncs = m;
	}
	return dropped;
}
