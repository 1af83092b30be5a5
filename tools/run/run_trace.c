// SPDX-License-Identifier: MIT
/*
 * ttmsim run --trace: Chrome trace-event JSON, for Perfetto
 * (ui.perfetto.dev) or chrome://tracing.
 *
 * Two processes: "GPU" (pid 1), one track per engine, one complete
 * ("X") event per job; and "submitters" (pid 2), one track per submitting
 * thread with the phases of each submission (submit holding lookup, lock
 * and queue; lock holding backoff and validate). Track ids are unique over
 * both processes, never 0 (Perfetto has merged tid 0 with tid 1) and never
 * a pid (which Perfetto takes for a main thread): engine E is tid 100 + E,
 * submitting thread T is tid 1000 + T.
 *
 * Recording is cheap: a thread's phases go to its own array without a
 * lock (events arrive only in that thread); a GPU job goes to its
 * engine's array under the engine's lock (only the engine's worker, or
 * whoever retires for it, takes it). Everything is written at the end,
 * each track sorted so that a parent slice comes before its children, one
 * event per json-c object (a tree of every event would be slow and big),
 * to a temporary file that becomes the trace only once all of it is
 * written (outfile.h): never a part of a trace under the trace's name.
 *
 * Events keep CLOCK_MONOTONIC times (GPU times converted with
 * run->gpu_offset_ns). They are written as microseconds since the run's
 * start (run->start_ns; or since the first event, if a move ran earlier,
 * while the buffers were created), with three decimals, i.e. exact
 * nanoseconds: a child slice never sticks out of its parent by a rounding.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "phase.h"
#include "run.h"
#include "run_json.h"

#define TRACE_PID_GPU 1
#define TRACE_PID_SUBMITTERS 2
#define TRACE_TID_ENGINE(e) (100 + (int)(e))
#define TRACE_TID_THREAD(t) (1000 + (int)(t))

/* One recorded slice, GPU job or submission phase. */
struct trace_event {
	uint64_t begin_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t id;              /* GPU: job id; phase: submission seqno */
	uint64_t tag;             /* RUN_JOB_TAG(job index), or 0 */
	int result;               /* GPU: status; phase: result */
	uint8_t phase;            /* enum ttm_execbuf_phase (phases only) */
};

struct run_trace_track {
	pthread_mutex_t lock;     /* GPU tracks only */
	struct trace_event *ev;
	size_t n, cap;
	uint64_t dropped;         /* out of memory */
};

struct run_trace {
	unsigned int n_engines;   /* job engines + the copy engine */
	unsigned int n_threads;
	struct run_trace_track *engines;
	struct run_trace_track *threads;
};

/* How deep a phase nests: the tie-break of slices with equal times. */
static const uint8_t phase_depth[] = {
	[TTM_EXECBUF_PHASE_SUBMIT] = 0,
	[TTM_EXECBUF_PHASE_LOOKUP] = 1,
	[TTM_EXECBUF_PHASE_LOCK] = 1,
	[TTM_EXECBUF_PHASE_BACKOFF] = 2,
	[TTM_EXECBUF_PHASE_VALIDATE] = 2,
	[TTM_EXECBUF_PHASE_QUEUE] = 1,
};

int run_trace_init(struct run *run)
{
	struct run_trace *tr;
	unsigned int i;

	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->n_engines = run->engines + 1;
	tr->n_threads = run->wl.n_threads;
	tr->engines = calloc(tr->n_engines, sizeof(*tr->engines));
	tr->threads = calloc(tr->n_threads ? tr->n_threads : 1,
			     sizeof(*tr->threads));
	if (!tr->engines || !tr->threads) {
		free(tr->engines);
		free(tr->threads);
		free(tr);
		return -ENOMEM;
	}
	for (i = 0; i < tr->n_engines; i++)
		pthread_mutex_init(&tr->engines[i].lock, NULL);
	run->trace = tr;
	if (run->threads)
		for (i = 0; i < tr->n_threads; i++)
			run->threads[i].track = &tr->threads[i];
	return 0;
}

void run_trace_free(struct run *run)
{
	struct run_trace *tr = run->trace;
	unsigned int i;

	if (!tr)
		return;
	for (i = 0; i < tr->n_engines; i++) {
		pthread_mutex_destroy(&tr->engines[i].lock);
		free(tr->engines[i].ev);
	}
	for (i = 0; i < tr->n_threads; i++)
		free(tr->threads[i].ev);
	if (run->threads)
		for (i = 0; i < tr->n_threads; i++)
			run->threads[i].track = NULL;
	free(tr->engines);
	free(tr->threads);
	free(tr);
	run->trace = NULL;
}

/* A slot at the end of @t, or NULL (counted as dropped). */
static struct trace_event *track_append(struct run_trace_track *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct trace_event *ev = realloc(t->ev, cap * sizeof(*ev));

		if (!ev) {
			t->dropped++;
			return NULL;
		}
		t->ev = ev;
		t->cap = cap;
	}
	return &t->ev[t->n++];
}

void run_trace_gpu_job(struct run *run, const struct ttm_gpu_job_info *info)
{
	struct run_trace *tr = run->trace;
	struct run_trace_track *t;
	struct trace_event *ev;
	uint64_t end = info->end_us * 1000 + run->gpu_offset_ns;
	/* A job that never ran: a zero-length slice when it was failed. */
	uint64_t begin = info->start_us ?
		info->start_us * 1000 + run->gpu_offset_ns : end;

	if (!tr || info->engine >= tr->n_engines)
		return;
	t = &tr->engines[info->engine];
	pthread_mutex_lock(&t->lock);
	ev = track_append(t);
	if (ev) {
		ev->begin_ns = begin;
		ev->end_ns = end;
		ev->id = info->id;
		ev->tag = info->tag;
		ev->result = info->status;
		ev->phase = 0;
	}
	pthread_mutex_unlock(&t->lock);
}

void run_trace_phase(const struct ttm_execbuf_event *event, void *data)
{
	struct run_thread *thread = data;
	struct run *run = thread->run;
	struct run_trace_track *t;
	struct trace_event *ev;
	size_t next;

	if (!run->trace || thread->index >= run->trace->n_threads)
		return;
	t = &run->trace->threads[thread->index];
	ev = track_append(t);
	if (!ev)
		return;
	next = __atomic_load_n(&thread->next, __ATOMIC_RELAXED);
	ev->begin_ns = event->begin_ns;
	ev->end_ns = event->end_ns;
	ev->id = event->seqno;
	ev->tag = next < thread->n_jobs ? RUN_JOB_TAG(thread->jobs[next]) : 0;
	ev->result = event->result;
	ev->phase = (uint8_t)event->phase;
}

/* Earlier first; of equal starts the longer (the parent) first. */
static int cmp_slices(const struct trace_event *a,
		      const struct trace_event *b, bool phases)
{
	if (a->begin_ns != b->begin_ns)
		return a->begin_ns < b->begin_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	if (phases && phase_depth[a->phase] != phase_depth[b->phase])
		return phase_depth[a->phase] < phase_depth[b->phase] ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_gpu(const void *a, const void *b)
{
	return cmp_slices(a, b, false);
}

static int cmp_phase(const void *a, const void *b)
{
	return cmp_slices(a, b, true);
}

/* @ns as microseconds with exactly three decimals. */
static struct json_object *json_us(int64_t ns)
{
	char buf[32];
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "",
		 mag / 1000, (unsigned int)(mag % 1000));
	/* The value the text reads back as: run_json_text() compares. */
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/*
 * Sort every track (parents before children) and return the time origin:
 * the run's start, or the first event if earlier (moves while the buffers
 * were created), so that no timestamp is negative.
 */
static uint64_t trace_sort(struct run *run)
{
	struct run_trace *tr = run->trace;
	uint64_t origin = run->start_ns ? run->start_ns : UINT64_MAX;
	unsigned int i;

	for (i = 0; i < tr->n_engines; i++) {
		struct run_trace_track *t = &tr->engines[i];

		pthread_mutex_lock(&t->lock);
		if (t->n) /* qsort() of NULL is undefined, even for 0 */
			qsort(t->ev, t->n, sizeof(*t->ev), cmp_gpu);
		if (t->n && t->ev[0].begin_ns < origin)
			origin = t->ev[0].begin_ns;
		pthread_mutex_unlock(&t->lock);
	}
	for (i = 0; i < tr->n_threads; i++) {
		struct run_trace_track *t = &tr->threads[i];

		if (t->n)
			qsort(t->ev, t->n, sizeof(*t->ev), cmp_phase);
		if (t->n && t->ev[0].begin_ns < origin)
			origin = t->ev[0].begin_ns;
	}
	return origin == UINT64_MAX ? 0 : origin;
}

struct trace_writer {
	FILE *f;
	bool first;
	bool ok;                 /* false once an event could not be made */
	uint64_t origin_ns;      /* CLOCK_MONOTONIC at ts 0 */
};

/*
 * Write @o as the next element of traceEvents, and free it; nothing more
 * once an event could not be made (w->ok false), the trace being lost.
 */
static void emit(struct trace_writer *w, struct json_object *o)
{
	const char *text = w->ok ? run_json_text(o) : NULL;

	if (text) {
		if (!w->first)
			fputs(",\n", w->f);
		w->first = false;
		fputs(text, w->f);
	} else {
		w->ok = false;
	}
	json_object_put(o);
}

static struct json_object *event_new(struct trace_writer *w,
				     const char *name, const char *ph,
				     int pid, int tid)
{
	struct json_object *o = json_object_new_object();

	run_json_add(o, "name", json_object_new_string(name), &w->ok);
	run_json_add(o, "ph", json_object_new_string(ph), &w->ok);
	run_json_add(o, "pid", json_object_new_int(pid), &w->ok);
	run_json_add(o, "tid", json_object_new_int(tid), &w->ok);
	return o;
}

static void emit_meta(struct trace_writer *w, const char *what, int pid,
		      int tid, const char *name, int sort_index)
{
	struct json_object *o = event_new(w, what, "M", pid, tid);
	struct json_object *args = json_object_new_object();

	run_json_add(args, "name", json_object_new_string(name), &w->ok);
	run_json_add(o, "args", args, &w->ok);
	emit(w, o);

	/* The tracks in their natural order, not by name. */
	o = event_new(w, strcmp(what, "process_name") ? "thread_sort_index" :
		      "process_sort_index", "M", pid, tid);
	args = json_object_new_object();
	run_json_add(args, "sort_index", json_object_new_int(sort_index),
		     &w->ok);
	run_json_add(o, "args", args, &w->ok);
	emit(w, o);
}

static struct json_object *slice_new(struct trace_writer *w,
				     const char *name, const char *cat,
				     int pid, int tid,
				     const struct trace_event *ev)
{
	struct json_object *o = event_new(w, name, "X", pid, tid);

	run_json_add(o, "cat", json_object_new_string(cat), &w->ok);
	run_json_add(o, "ts", json_us((int64_t)(ev->begin_ns - w->origin_ns)),
		     &w->ok);
	run_json_add(o, "dur", json_us((int64_t)(ev->end_ns - ev->begin_ns)),
		     &w->ok);
	return o;
}

static void emit_gpu(struct trace_writer *w, struct run *run,
		     unsigned int engine, const struct trace_event *ev)
{
	struct json_object *o, *args = json_object_new_object();
	char name[48];

	/* Workload jobs carry RUN_JOB_TAG(index); moves carry 0. */
	if (ev->tag && ev->tag <= run->wl.n_jobs) {
		const struct wl_job *job = &run->wl.jobs[ev->tag - 1];

		snprintf(name, sizeof(name), "job %" PRIu64, ev->tag - 1);
		run_json_add_u64(args, "job", ev->tag - 1, &w->ok);
		run_json_add(args, "thread",
			     json_object_new_int((int)job->thread), &w->ok);
		if (job->line)
			run_json_add(args, "line",
				     json_object_new_int((int)job->line),
				     &w->ok);
		run_json_add(args, "op", json_object_new_string(
			job->op == WL_OP_ADD ? "add" :
			job->op == WL_OP_HANG ? "hang" : "nop"), &w->ok);
	} else {
		snprintf(name, sizeof(name), "%s",
			 engine == run->engines ? "move" : "job");
	}
	run_json_add_u64(args, "gpu_id", ev->id, &w->ok);
	run_json_add(args, "status", json_object_new_int(ev->result), &w->ok);
	o = slice_new(w, name, "gpu", TRACE_PID_GPU, TRACE_TID_ENGINE(engine),
		      ev);
	run_json_add(o, "args", args, &w->ok);
	emit(w, o);
}

static void emit_phase(struct trace_writer *w, unsigned int thread,
		       const struct trace_event *ev)
{
	struct json_object *o, *args = json_object_new_object();
	const char *name = cli_phase_name((enum ttm_execbuf_phase)ev->phase);

	if (ev->tag)
		run_json_add_u64(args, "job", ev->tag - 1, &w->ok);
	else
		run_json_add_null(args, "job", &w->ok);
	run_json_add_u64(args, "seqno", ev->id, &w->ok);
	run_json_add(args, "result", json_object_new_int(ev->result), &w->ok);
	if (!name)
		name = "phase";
	o = slice_new(w, name, "execbuf", TRACE_PID_SUBMITTERS,
		      TRACE_TID_THREAD(thread), ev);
	run_json_add(o, "args", args, &w->ok);
	emit(w, o);
}

/*
 * Call once every submitting thread is joined and the GPU is idle (the
 * engine tracks are read under their locks all the same).
 */
int run_trace_write(struct run *run, const char *path)
{
	struct run_trace *tr = run->trace;
	struct trace_writer w = { .first = true, .ok = true };
	struct cli_outfile out;
	uint64_t dropped = 0;
	unsigned int i;
	size_t k;
	char name[32];
	int ret;

	if (!tr)
		return 0;
	w.origin_ns = trace_sort(run);
	ret = cli_outfile_open(&out, path);
	if (ret)
		return ret;
	w.f = out.f;
	fputs("{\"traceEvents\":[\n", w.f);

	emit_meta(&w, "process_name", TRACE_PID_GPU, TRACE_PID_GPU, "GPU", 1);
	emit_meta(&w, "process_name", TRACE_PID_SUBMITTERS,
		  TRACE_PID_SUBMITTERS, "submitters", 2);
	for (i = 0; i < tr->n_engines; i++) {
		if (i == run->engines)
			snprintf(name, sizeof(name), "copy engine");
		else
			snprintf(name, sizeof(name), "engine %u", i);
		emit_meta(&w, "thread_name", TRACE_PID_GPU,
			  TRACE_TID_ENGINE(i), name, (int)i);
	}
	for (i = 0; i < tr->n_threads; i++) {
		snprintf(name, sizeof(name), "thread %u", i);
		emit_meta(&w, "thread_name", TRACE_PID_SUBMITTERS,
			  TRACE_TID_THREAD(i), name, (int)i);
	}

	for (i = 0; i < tr->n_engines; i++) {
		struct run_trace_track *t = &tr->engines[i];

		pthread_mutex_lock(&t->lock);
		for (k = 0; w.ok && k < t->n; k++)
			emit_gpu(&w, run, i, &t->ev[k]);
		dropped += t->dropped;
		pthread_mutex_unlock(&t->lock);
	}
	for (i = 0; i < tr->n_threads; i++) {
		struct run_trace_track *t = &tr->threads[i];

		for (k = 0; w.ok && k < t->n; k++)
			emit_phase(&w, i, &t->ev[k]);
		dropped += t->dropped;
	}

	fputs("\n],\"displayTimeUnit\":\"ms\"", w.f);
	if (dropped)
		fprintf(w.f, ",\"otherData\":{\"dropped_events\":\"%" PRIu64
			"\"}", dropped);
	fputs("}\n", w.f);

	if (!w.ok)
		cli_error("run: %s: cannot make the trace: out of memory; "
			  "not written", path);
	/* After the run: an I/O error is a failure, not a usage error. */
	ret = cli_outfile_close(&out, w.ok);
	/*
	 * Written, and it says what it lacks (otherData), but a trace with
	 * holes is not a success.
	 */
	if (ret == CLI_EXIT_OK && dropped) {
		cli_error("run: %s: %" PRIu64 " events lost (out of memory): "
			  "the trace lacks them", path, dropped);
		ret = CLI_EXIT_FAILURE;
	}
	return ret;
}
