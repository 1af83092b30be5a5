// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the workload parser of `ttmsim run` (tools/run/workload.c).
 *
 * Any input: workload_parse() returns 0 or CLI_EXIT_USAGE, without a crash
 * or a leak (ASan). An input that parses: workload_save() of it loads back
 * as the same workload (buffers, jobs, thread and engine counts, shrink
 * period), and saving that copy writes the very same text: the file format
 * is a faithful round trip, which is what replaying a saved run relies on.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "workload.h"

static void check_same(const struct workload *a, const struct workload *b)
{
	unsigned int i;
	size_t j;

	FUZZ_CHECK(a->n_bos == b->n_bos, "%u vs %u", a->n_bos, b->n_bos);
	FUZZ_CHECK(a->n_jobs == b->n_jobs, "%zu vs %zu", a->n_jobs, b->n_jobs);
	FUZZ_CHECK(a->n_threads == b->n_threads, "%u vs %u", a->n_threads,
		   b->n_threads);
	FUZZ_CHECK(a->n_engines == b->n_engines, "%u vs %u", a->n_engines,
		   b->n_engines);
	FUZZ_CHECK(a->shrink_ms == b->shrink_ms, "%u vs %u", a->shrink_ms,
		   b->shrink_ms);
	for (i = 0; i < a->n_bos; i++) {
		const struct wl_bo *x = &a->bos[i], *y = &b->bos[i];

		FUZZ_CHECK(strcmp(x->name, y->name) == 0, "bo %u: %s vs %s",
			   i, x->name, y->name);
		FUZZ_CHECK(x->size == y->size && x->width == y->width &&
			   x->height == y->height && x->fourcc == y->fourcc &&
			   x->placement == y->placement &&
			   x->pinned == y->pinned && x->prime == y->prime &&
			   x->fpfn == y->fpfn && x->lpfn == y->lpfn,
			   "bo %s differs", x->name);
	}
	FUZZ_CHECK(a->n_syncobjs == b->n_syncobjs, "%u vs %u syncobjs",
		   a->n_syncobjs, b->n_syncobjs);
	for (i = 0; i < a->n_syncobjs; i++)
		FUZZ_CHECK(strcmp(a->syncobjs[i].name, b->syncobjs[i].name) ==
			   0 && a->syncobjs[i].timeline ==
			   b->syncobjs[i].timeline, "syncobj %u differs", i);
	for (j = 0; j < a->n_jobs; j++) {
		const struct wl_job *x = &a->jobs[j], *y = &b->jobs[j];

		FUZZ_CHECK(x->thread == y->thread && x->engine == y->engine &&
			   x->duration_us == y->duration_us &&
			   x->op == y->op && x->add_value == y->add_value &&
			   x->n_bos == y->n_bos && x->n_syncs == y->n_syncs,
			   "job %zu differs", j);
		for (unsigned int k = 0; k < x->n_syncs && k < y->n_syncs; k++)
			FUZZ_CHECK(x->syncs[k].syncobj == y->syncs[k].syncobj &&
				   x->syncs[k].signal == y->syncs[k].signal &&
				   x->syncs[k].point == y->syncs[k].point,
				   "job %zu names other syncobj points", j);
		FUZZ_CHECK(memcmp(x->bos, y->bos,
				  x->n_bos * sizeof(*x->bos)) == 0,
			   "job %zu lists other buffers", j);
	}
}

/* workload_save() into the memory file @fd, from its start; its length. */
static size_t save(const struct workload *wl, int fd)
{
	char path[64];
	off_t len;

	FUZZ_CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	FUZZ_CHECK(workload_save(wl, path) == 0, "save failed");
	len = lseek(fd, 0, SEEK_END);
	FUZZ_CHECK(len >= 0, "lseek");
	return (size_t)len;
}

static char *contents(int fd, size_t len)
{
	char *s = malloc(len + 1);

	FUZZ_CHECK(s, "out of memory");
	FUZZ_CHECK(pread(fd, s, len, 0) == (ssize_t)len, "pread");
	s[len] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload a, b;
	size_t len1, len2;
	char *text1, *text2;
	FILE *in;
	int fd, ret;

	/* fmemopen() of an empty buffer fails on some libcs: nothing to do. */
	if (size == 0) {
		return 0;
	}
	in = fmemopen((void *)data, size, "r");
	FUZZ_CHECK(in, "fmemopen");
	ret = workload_parse(in, "fuzz-input", &a);
	fclose(in);
	FUZZ_CHECK(ret == 0 || ret == 2, "workload_parse returned %d", ret);
	if (ret) {
		return 0;
	}

	fd = memfd_create("fuzz-workload", 0);
	FUZZ_CHECK(fd >= 0, "memfd_create");
	len1 = save(&a, fd);
	text1 = contents(fd, len1);
	in = fmemopen(text1, len1, "r");
	FUZZ_CHECK(in, "fmemopen");
	ret = workload_parse(in, "fuzz-input", &b);
	fclose(in);
	FUZZ_CHECK(ret == 0, "the saved workload does not load:\n%s", text1);
	check_same(&a, &b);

	len2 = save(&b, fd);
	text2 = contents(fd, len2);
	FUZZ_CHECK(len1 == len2 && memcmp(text1, text2, len1) == 0,
		   "saving the reloaded copy wrote other text");
	free(text1);
	free(text2);
	close(fd);
	workload_free(&a);
	workload_free(&b);
	return 0;
}
