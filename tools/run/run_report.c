// SPDX-License-Identifier: MIT
/*
 * ttmsim run: the summary of a run (text `key: value` lines, or one JSON
 * object with --json) and the --dump of the buffers' final contents.
 *
 * Both read the device, the GPU and the buffers: call them after the
 * submitting threads are joined and the device is idle, before
 * run_teardown(). JSON is built with json-c, never by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/gpu.h"
#include "cli.h"
#include "clock.h"
#include "outfile.h"
#include "run.h"
#include "run_json.h"

#ifndef TTMSIM_VERSION
#define TTMSIM_VERSION "unknown"
#endif

/* The errno values a submission can be rejected with, by name. */
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{ EINVAL, "EINVAL" },     { ENOENT, "ENOENT" },
	{ ENOSPC, "ENOSPC" },     { EINTR, "EINTR" },
	{ EBUSY, "EBUSY" },       { ENOMEM, "ENOMEM" },
	{ EMFILE, "EMFILE" },     { ENFILE, "ENFILE" },
	{ EDEADLK, "EDEADLK" },   { ETIMEDOUT, "ETIMEDOUT" },
	{ ECANCELED, "ECANCELED" }, { EIO, "EIO" },
	{ EBADF, "EBADF" },       { ESHUTDOWN, "ESHUTDOWN" },
	{ EAGAIN, "EAGAIN" },     { EPERM, "EPERM" },
};

/* "EINVAL" for EINVAL (positive), else "E<number>" in @buf. */
static const char *errno_name(int err, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	snprintf(buf, len, "E%d", err);
	return buf;
}

/* Everything the summary says, gathered once. */
struct report {
	struct ttm_execbuf_stats ex;
	struct ttm_device_stats dev;
	struct ttm_gpu_stats gpu;
	uint64_t vram, gtt;
	uint64_t not_submitted;
	double wall_s, jobs_per_s;
	bool has_latency;            /* run_latency_gather() worked */
	struct run_latency latency[TTM_SCHED_PRIORITY_COUNT];
};

/* false, after a message, if a part of the summary could not be made. */
static bool report_gather(struct run *run, struct report *r)
{
	const struct run_config *cfg = run->cfg;
	uint64_t end;

	memset(r, 0, sizeof(*r));
	if (run->dev) {
		ttm_execbuf_get_stats(run->dev, &r->ex);
		ttm_device_get_stats(run->dev, &r->dev);
	}
	if (run->gpu)
		ttm_gpu_get_stats(run->gpu, &r->gpu);

	/* The device's own capacities if it exists: what the run really had. */
	r->vram = cfg->vram ? cfg->vram : TTM_DEFAULT_VRAM_SIZE;
	r->gtt = cfg->gtt ? cfg->gtt : TTM_DEFAULT_GTT_SIZE;
	if (run->dev) {
		r->vram = r->dev.domain[TTM_DOMAIN_VRAM].capacity;
		r->gtt = r->dev.domain[TTM_DOMAIN_GTT].capacity;
	}

	r->not_submitted = run->wl.n_jobs > r->ex.submitted ?
		run->wl.n_jobs - r->ex.submitted : 0;

	end = run->end_ns ? run->end_ns : cli_now_ns();
	if (run->start_ns && end > run->start_ns)
		r->wall_s = (double)(end - run->start_ns) / 1e9;
	if (r->wall_s > 0)
		r->jobs_per_s = (double)(r->ex.completed + r->ex.failed) /
				r->wall_s;
	r->has_latency = run_latency_gather(run, r->latency) == 0;
	if (!r->has_latency)
		cli_error("run: cannot compute the latencies for the summary: "
			  "out of memory");
	return r->has_latency;
}

static const char *class_name(const struct run_config *cfg)
{
	return cfg->wound_wait ? "wound-wait" : "wait-die";
}

/*
 * "priorities": clients per priority, "latency": per priority, count,
 * p50_us and p99_us; both list only the priorities that have clients.
 */
static void json_priorities(struct run *run, const struct report *r,
			    struct json_object *o, bool *ok)
{
	struct json_object *clients = json_object_new_object();
	struct json_object *latency = json_object_new_object();
	int p;

	for (p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++) {
		const char *name = run_priority_name(p);
		unsigned int n = run_priority_clients(run, p);
		struct json_object *l;

		if (!n)
			continue;
		run_json_add_u64(clients, name, n, ok);
		if (!r->has_latency)
			continue;
		l = json_object_new_object();
		run_json_add_u64(l, "count", r->latency[p].count, ok);
		run_json_add_u64(l, "p50_us", r->latency[p].p50_us, ok);
		run_json_add_u64(l, "p99_us", r->latency[p].p99_us, ok);
		run_json_add(latency, name, l, ok);
	}
	run_json_add(o, "priorities", clients, ok);
	run_json_add(o, "latency", latency, ok);
}

static void text_priorities(struct run *run, const struct report *r)
{
	unsigned int n;
	int p;

	fputs("priorities:", stdout);
	for (p = 0; p < TTM_SCHED_PRIORITY_COUNT; p++)
		if ((n = run_priority_clients(run, p)))
			printf(" %s=%u", run_priority_name(p), n);
	puts("");
	for (p = 0; r->has_latency && p < TTM_SCHED_PRIORITY_COUNT; p++) {
		if (!run_priority_clients(run, p))
			continue;
		printf("latency_%s: count=%" PRIu64 " p50_us=%" PRIu64
		       " p99_us=%" PRIu64 "\n", run_priority_name(p),
		       r->latency[p].count, r->latency[p].p50_us,
		       r->latency[p].p99_us);
	}
}

/* What the workload's PRIME, ranges and syncobj words came to. */
struct feature_counts {
	uint64_t prime_buffers, ranged_buffers, syncobjs, sync_words;
};

static void count_features(const struct run *run, struct feature_counts *f)
{
	const struct workload *wl = &run->wl;
	unsigned int i;
	size_t j;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < wl->n_bos; i++) {
		f->prime_buffers += wl->bos[i].prime;
		f->ranged_buffers += wl->bos[i].lpfn != 0 ||
				     wl->bos[i].placement == WL_PLACE_VISIBLE;
	}
	f->syncobjs = wl->n_syncobjs;
	for (j = 0; j < wl->n_jobs; j++)
		f->sync_words += wl->jobs[j].n_syncs;
}

static struct json_object *report_json(struct run *run,
				       const struct report *r,
				       int exit_status, bool *ok)
{
	const struct run_config *cfg = run->cfg;
	struct json_object *o = json_object_new_object();
	struct json_object *by_errno = json_object_new_object();
	struct feature_counts fc;
	bool lossy;
	char buf[16];
	int e;

	run_json_add(o, "version", json_object_new_string(TTMSIM_VERSION), ok);
	run_json_add(o, "class", json_object_new_string(class_name(cfg)), ok);
	run_json_add_u64(o, "threads", run->wl.n_threads, ok);
	run_json_add_u64(o, "engines", run->engines, ok);
	if (cfg->workload_path) {
		/* A path is bytes; JSON text must be UTF-8. */
		run_json_add(o, "workload", run_json_string(run->wl.source ?
			run->wl.source : cfg->workload_path, &lossy), ok);
		if (lossy)
			run_json_add(o, "workload_not_utf8",
				     json_object_new_boolean(1), ok);
	} else {
		run_json_add_u64(o, "seed", cfg->gen.seed, ok);
	}
	run_json_add_u64(o, "vram", r->vram, ok);
	run_json_add_u64(o, "gtt", r->gtt, ok);
	run_json_add(o, "allow_duplicates",
		     json_object_new_boolean(cfg->allow_duplicates), ok);

	run_json_add_u64(o, "jobs", run->wl.n_jobs, ok);
	run_json_add_u64(o, "submitted", r->ex.submitted, ok);
	run_json_add_u64(o, "not_submitted", r->not_submitted, ok);
	run_json_add_u64(o, "rejected", r->ex.rejected, ok);
	for (e = 1; e <= TTM_EXECBUF_ERRNO_MAX; e++) {
		uint64_t n = r->ex.rejected_by_errno[e];

		if (!n)
			continue;
		/* The last entry counts every errno beyond the table. */
		run_json_add_u64(by_errno, e == TTM_EXECBUF_ERRNO_MAX ?
				 "other" : errno_name(e, buf, sizeof(buf)), n,
				 ok);
	}
	run_json_add(o, "rejected_by_errno", by_errno, ok);
	run_json_add_u64(o, "completed", r->ex.completed, ok);
	run_json_add_u64(o, "failed", r->ex.failed, ok);
	run_json_add_u64(o, "in_flight", r->ex.in_flight, ok);
	run_json_add_u64(o, "backoffs", r->ex.backoffs, ok);
	run_json_add_u64(o, "restarts", r->ex.restarts, ok);
	run_json_add_u64(o, "evictions", r->dev.evictions, ok);
	run_json_add_u64(o, "moves", r->dev.moves, ok);
	run_json_add_u64(o, "room_waits", r->dev.room_waits, ok);
	run_json_add_u64(o, "room_wait_timeouts", r->dev.room_wait_timeouts,
			 ok);
	run_json_add_u64(o, "out_of_order_retirements",
			 r->gpu.out_of_order_retirements, ok);
	run_json_add_u64(o, "bytes_moved", r->dev.bytes_moved, ok);
	run_json_add_u64(o, "gpu_resets", r->gpu.resets, ok);
	count_features(run, &fc);
	if (fc.prime_buffers) {
		run_json_add_u64(o, "prime_buffers", fc.prime_buffers, ok);
		run_json_add_u64(o, "prime_imports",
				 __atomic_load_n(&run->prime_imports,
						 __ATOMIC_RELAXED), ok);
	}
	if (fc.ranged_buffers)
		run_json_add_u64(o, "ranged_buffers", fc.ranged_buffers, ok);
	if (fc.syncobjs) {
		run_json_add_u64(o, "syncobjs", fc.syncobjs, ok);
		run_json_add_u64(o, "syncobj_words", fc.sync_words, ok);
		run_json_add_u64(o, "syncobj_held",
				 __atomic_load_n(&run->sync_waits,
						 __ATOMIC_RELAXED), ok);
	}
	if (run->shrink_stats.period_ms) {
		const struct run_shrink_stats *sh = &run->shrink_stats;

		run_json_add_u64(o, "shrink_ms", sh->period_ms, ok);
		run_json_add_u64(o, "shrink_passes", sh->passes, ok);
		run_json_add_u64(o, "shrink_buffers", sh->buffers, ok);
		run_json_add_u64(o, "shrink_bytes", sh->bytes, ok);
		run_json_add_u64(o, "shrink_busy", sh->busy, ok);
		run_json_add_u64(o, "shrink_errors", sh->errors, ok);
	}
	run_json_add_u64(o, "checker_reports",
			 __atomic_load_n(&run->checker_reports,
					 __ATOMIC_RELAXED), ok);
	run_json_add(o, "wall_s", run_json_fixed(r->wall_s, 6), ok);
	run_json_add(o, "jobs_per_s", run_json_fixed(r->jobs_per_s, 1), ok);
	json_priorities(run, r, o, ok);
	run_json_add(o, "exit_status", json_object_new_int(exit_status), ok);
	run_json_add(o, "interrupted", json_object_new_boolean(
		__atomic_load_n(&run->interrupted, __ATOMIC_RELAXED) != 0), ok);
	return o;
}

static void report_text(struct run *run, const struct report *r,
			int exit_status)
{
	const struct run_config *cfg = run->cfg;
	struct feature_counts fc;
	unsigned int n = 0;
	char buf[16];
	int e;

	printf("version: %s\n", TTMSIM_VERSION);
	printf("class: %s\n", class_name(cfg));
	printf("threads: %u\n", run->wl.n_threads);
	printf("engines: %u\n", run->engines);
	if (cfg->workload_path)
		printf("workload: %s\n",
		       run->wl.source ? run->wl.source : cfg->workload_path);
	else
		printf("seed: %" PRIu64 "\n", cfg->gen.seed);
	printf("vram: %" PRIu64 "\n", r->vram);
	printf("gtt: %" PRIu64 "\n", r->gtt);
	printf("jobs: %zu\n", run->wl.n_jobs);
	printf("submitted: %" PRIu64 "\n", r->ex.submitted);
	printf("not_submitted: %" PRIu64 "\n", r->not_submitted);
	printf("rejected: %" PRIu64 "\n", r->ex.rejected);
	fputs("rejected_by_errno:", stdout);
	for (e = 1; e <= TTM_EXECBUF_ERRNO_MAX; e++) {
		uint64_t count = r->ex.rejected_by_errno[e];

		if (!count)
			continue;
		printf(" %s=%" PRIu64, e == TTM_EXECBUF_ERRNO_MAX ? "other" :
		       errno_name(e, buf, sizeof(buf)), count);
		n++;
	}
	puts(n ? "" : " none");
	printf("completed: %" PRIu64 "\n", r->ex.completed);
	printf("failed: %" PRIu64 "\n", r->ex.failed);
	if (r->ex.in_flight)
		printf("in_flight: %" PRIu64 "\n", r->ex.in_flight);
	printf("backoffs: %" PRIu64 "\n", r->ex.backoffs);
	printf("restarts: %" PRIu64 "\n", r->ex.restarts);
	printf("evictions: %" PRIu64 "\n", r->dev.evictions);
	printf("room_waits: %" PRIu64 "\n", r->dev.room_waits);
	printf("room_wait_timeouts: %" PRIu64 "\n", r->dev.room_wait_timeouts);
	printf("out_of_order_retirements: %" PRIu64 "\n",
	       r->gpu.out_of_order_retirements);
	printf("bytes_moved: %" PRIu64 "\n", r->dev.bytes_moved);
	count_features(run, &fc);
	if (fc.prime_buffers) {
		printf("prime_buffers: %" PRIu64 "\n", fc.prime_buffers);
		printf("prime_imports: %" PRIu64 "\n",
		       __atomic_load_n(&run->prime_imports, __ATOMIC_RELAXED));
	}
	if (fc.ranged_buffers)
		printf("ranged_buffers: %" PRIu64 "\n", fc.ranged_buffers);
	if (fc.syncobjs) {
		printf("syncobjs: %" PRIu64 "\n", fc.syncobjs);
		printf("syncobj_words: %" PRIu64 "\n", fc.sync_words);
		printf("syncobj_held: %" PRIu64 "\n",
		       __atomic_load_n(&run->sync_waits, __ATOMIC_RELAXED));
	}
	if (run->shrink_stats.period_ms) {
		const struct run_shrink_stats *sh = &run->shrink_stats;

		printf("shrink_ms: %u\n", sh->period_ms);
		printf("shrink_passes: %" PRIu64 "\n", sh->passes);
		printf("shrink_buffers: %" PRIu64 "\n", sh->buffers);
		printf("shrink_bytes: %" PRIu64 "\n", sh->bytes);
		if (sh->busy)
			printf("shrink_busy: %" PRIu64 "\n", sh->busy);
		printf("shrink_errors: %" PRIu64 "\n", sh->errors);
	}
	printf("checker_reports: %u\n",
	       __atomic_load_n(&run->checker_reports, __ATOMIC_RELAXED));
	printf("wall_s: %.3f\n", r->wall_s);
	printf("jobs_per_s: %.1f\n", r->jobs_per_s);
	text_priorities(run, r);
	if (__atomic_load_n(&run->interrupted, __ATOMIC_RELAXED))
		puts("interrupted: yes");
	printf("exit_status: %d\n", exit_status);
}

/* A failure to report turns a success into CLI_EXIT_FAILURE. */
static int failed_status(int exit_status)
{
	return exit_status == CLI_EXIT_OK ? CLI_EXIT_FAILURE : exit_status;
}

int run_report_summary(struct run *run, int exit_status)
{
	struct report r;

	if (!report_gather(run, &r))
		exit_status = failed_status(exit_status);
	if (run->cfg->json) {
		/* --quiet silences the text only: JSON is what was asked. */
		bool ok = true;
		struct json_object *o = report_json(run, &r, exit_status, &ok);
		const char *text = ok ? run_json_text(o) : NULL;

		/* All of it or nothing: never a summary with keys missing. */
		if (text) {
			puts(text);
		} else {
			cli_error("run: cannot make the JSON summary: out of "
				  "memory");
			exit_status = failed_status(exit_status);
		}
		json_object_put(o);
	} else if (!run->cfg->quiet) {
		report_text(run, &r, exit_status);
	}
	fflush(stdout);
	return exit_status;
}

static const char *domain_name(enum ttm_domain d)
{
	switch (d) {
	case TTM_DOMAIN_VRAM:
		return "vram";
	case TTM_DOMAIN_GTT:
		return "gtt";
	case TTM_DOMAIN_SYSTEM:
		return "system";
	default:
		return "unknown";
	}
}

/* Read in pieces: buffers go up to 1 GiB. */
#define DUMP_CHUNK (1u << 20)

/*
 * Where @bo ends up, its first word and the sum of its words, read
 * under its reservation (which also waits for the jobs writing it).
 */
static int dump_bo(struct ttm_bo *bo, uint32_t *chunk,
		   struct json_object *entry, bool *ok)
{
	uint64_t size = ttm_bo_size(bo), off, sum = 0;
	uint32_t first = 0;
	enum ttm_domain domain;
	int ret;

	ret = ttm_bo_reserve(bo, false, false, NULL);
	if (ret)
		return ret;
	domain = ttm_bo_domain(bo);
	for (off = 0; off < size; off += DUMP_CHUNK) {
		size_t len = size - off < DUMP_CHUNK ? (size_t)(size - off) :
			     DUMP_CHUNK, i;

		ret = ttm_bo_read(bo, off, chunk, len);
		if (ret)
			break;
		if (!off)
			first = chunk[0];
		for (i = 0; i < len / 4; i++)
			sum += chunk[i];
	}
	ttm_bo_unreserve(bo);
	if (ret)
		return ret;
	run_json_add(entry, "placement",
		     json_object_new_string(domain_name(domain)), ok);
	run_json_add_u64(entry, "first_word", first, ok);
	run_json_add_u64(entry, "words_sum", sum, ok);
	return 0;
}

/*
 * I/O errors here come after the run has happened: they are
 * CLI_EXIT_FAILURE (the command ran and something went wrong), not
 * CLI_EXIT_USAGE, which is for a bad command line before anything ran.
 * The file is written whole or not at all (outfile.h).
 */
int run_report_dump(struct run *run, const char *path)
{
	struct json_object *root, *bos;
	struct cli_outfile out;
	const char *text;
	uint32_t *chunk;
	unsigned int i;
	bool ok = true;
	int ret = CLI_EXIT_OK;

	chunk = malloc(DUMP_CHUNK);
	if (!chunk) {
		cli_error("run: %s: out of memory", path);
		return CLI_EXIT_FAILURE;
	}
	root = json_object_new_object();
	bos = json_object_new_array_ext((int)run->wl.n_bos);
	/*
	 * Kept for the entries even if the add fails: put with root's. Not
	 * added (no root, or the add failed): put here, or it leaks.
	 */
	if (bos && (!root || json_object_object_add(root, "bos", bos))) {
		json_object_put(bos);
		bos = NULL;
	}
	ok = root && bos;
	for (i = 0; ok && i < run->wl.n_bos; i++) {
		const struct wl_bo *wb = &run->wl.bos[i];
		struct json_object *e = json_object_new_object();
		struct ttm_bo *bo = run->bos ? run->bos[i] : NULL;
		int err;

		run_json_add(e, "name", json_object_new_string(wb->name), &ok);
		run_json_add_u64(e, "size", wb->size, &ok);
		if (!bo) {
			/* Never fit: its jobs were rejected (-ENOSPC). */
			run_json_add_null(e, "placement", &ok);
			run_json_add_u64(e, "first_word", 0, &ok);
			run_json_add_u64(e, "words_sum", 0, &ok);
			run_json_add(e, "missing", json_object_new_boolean(1),
				     &ok);
		} else if (e && (err = dump_bo(bo, chunk, e, &ok))) {
			cli_error("run: %s: cannot read buffer %s: %s", path,
				  wb->name, strerror(-err));
			json_object_put(e);
			ret = CLI_EXIT_FAILURE;
			goto out;
		}
		run_json_append(bos, e, &ok);
	}
	text = ok ? run_json_text(root) : NULL;
	if (!text) {
		cli_error("run: %s: cannot make the dump: out of memory", path);
		ret = CLI_EXIT_FAILURE;
		goto out;
	}
	ret = cli_outfile_open(&out, path);
	if (ret == CLI_EXIT_OK) {
		fputs(text, out.f);
		fputc('\n', out.f);
		ret = cli_outfile_close(&out, true);
	}
out:
	json_object_put(root);
	free(chunk);
	return ret;
}
