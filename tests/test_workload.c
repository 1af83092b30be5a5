// SPDX-License-Identifier: MIT
/*
 * The workload file format of `ttmsim run` (tools/run/workload.h), linked
 * from the tools' static library (ttmsim-tools): every malformed input is
 * one "FILE:LINE: ..." line on stderr and CLI_EXIT_USAGE with nothing
 * kept; good files give the right data; generate, save and load
 * round-trip exactly; the generator is a function of its seed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <drm_fourcc.h>

#include "cli.h"
#include "workload.h"

/* What the last call printed on stderr. */
static char err_text[4096];

/*
 * Run @fn(@arg) with stderr going to a temporary file, and keep what it
 * printed in err_text.
 */
static int capture_stderr(int (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	ret = fn(arg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(err_text, 1, sizeof(err_text) - 1, tmp);
	err_text[n] = '\0';
	fclose(tmp);
	return ret;
}

struct parse_call {
	const char *text;
	size_t len;
	const char *name;
	struct workload *wl;
};

static int do_parse(void *arg)
{
	struct parse_call *c = arg;
	/* fmemopen() may refuse a size of 0 */
	FILE *f = c->len ? fmemopen((void *)c->text, c->len, "r")
			 : fopen("/dev/null", "r");
	int ret;

	assert_non_null(f);
	ret = workload_parse(f, c->name, c->wl);
	fclose(f);
	return ret;
}

/* Parse @len bytes of @text as file "w.txt". */
static int parse_mem(const char *text, size_t len, struct workload *wl)
{
	struct parse_call c = { text, len, "w.txt", wl };

	return capture_stderr(do_parse, &c);
}

static int parse_str(const char *text, struct workload *wl)
{
	return parse_mem(text, strlen(text), wl);
}

static bool is_empty(const struct workload *wl)
{
	static const struct workload zero;

	return memcmp(wl, &zero, sizeof(zero)) == 0;
}

/* Parse @text, which must fail on @line with a message containing @what. */
static void expect_error_mem(const char *text, size_t len, unsigned int line,
			     const char *what)
{
	struct workload wl;
	char prefix[64];
	int ret;

	memset(&wl, 0x5a, sizeof(wl));
	ret = parse_mem(text, len, &wl);
	snprintf(prefix, sizeof(prefix), "w.txt:%u: ", line);
	if (ret != CLI_EXIT_USAGE || strncmp(err_text, prefix,
					     strlen(prefix)) != 0 ||
	    !strstr(err_text, what)) {
		print_error("input: %.*s\nexpected %s...%s\ngot %d: %s\n",
			    (int)(len > 200 ? 200 : len), text, prefix, what,
			    ret, err_text);
		fail();
	}
	/* exactly one line */
	assert_non_null(strchr(err_text, '\n'));
	assert_string_equal(strchr(err_text, '\n'), "\n");
	assert_true(is_empty(&wl));
}

static void expect_error(const char *text, unsigned int line,
			 const char *what)
{
	expect_error_mem(text, strlen(text), line, what);
}

static void expect_ok(const char *text, struct workload *wl)
{
	int ret = parse_str(text, wl);

	if (ret != 0) {
		print_error("input: %s\ngot %d: %s\n", text, ret, err_text);
		fail();
	}
	assert_string_equal(err_text, "");
}

#define BO2 "bo a 16\nbo b 32\n"

static void test_errors_directive(void **state)
{
	(void)state;
	expect_error("frob a 4\n", 1, "unknown directive 'frob'");
	expect_error("\n# c\nBO a 4\n", 3, "unknown directive 'BO'");
	expect_error("bo a 4\nbob b 4\n", 2, "unknown directive 'bob'");
	expect_error("bo\n", 1, "missing NAME");
	expect_error("bo a\n", 1, "missing SIZE");
	expect_error("bo a # 16\n", 1, "missing SIZE");
	expect_error("bo a#b 16\n", 1, "missing SIZE");
	expect_error("bo a 16 vram pinned x\n", 1, "extra word 'x'");
	expect_error("bo a 16 pinned vram\n", 1, "extra word 'vram'");
	expect_error("bo a 16 vram gtt\n", 1, "extra word 'gtt'");
	expect_error("bo a 16 VRAM\n", 1, "unknown word 'VRAM'");
	expect_error("bo a 16 fast\n", 1, "unknown word 'fast'");
	expect_error(BO2 "job\n", 3, "missing THREAD");
	expect_error(BO2 "job 0\n", 3, "missing ENGINE");
	expect_error(BO2 "job 0 0\n", 3, "missing DURATION_US");
	expect_error(BO2 "job 0 0 10\n", 3, "missing OP");
	expect_error(BO2 "job 0 0 10 nop\n", 3, "job without buffers");
	expect_error(BO2 "job 0 0 10 nop # a b\n", 3, "job without buffers");
}

static void test_errors_numbers(void **state)
{
	(void)state;
	/* sizes */
	expect_error("bo a 6\n", 1, "not a multiple of 4");
	expect_error("bo a 0\n", 1, "'0' is zero");
	expect_error("bo a 00\n", 1, "is zero");
	expect_error("bo a -4\n", 1, "'-4'");
	expect_error("bo a -4\n", 1, "without a sign");
	expect_error("bo a +4\n", 1, "without a sign");
	expect_error("bo a 4k\n", 1, "bad size '4k'");
	expect_error("bo a 0x10\n", 1, "'0x10'");
	expect_error("bo a 1073741828\n", 1, "more than 1 GiB");
	expect_error("bo a 99999999999999999999999\n", 1, "more than 1 GiB");
	expect_error("bo a 18446744073709551616\n", 1, "more than 1 GiB");
	expect_error("bo a four\n", 1, "bad size 'four'");
	/* job fields */
	expect_error(BO2 "job x 0 10 nop a\n", 3, "thread 'x' is not a");
	expect_error(BO2 "job -1 0 10 nop a\n", 3, "without a sign");
	expect_error(BO2 "job 1024 0 10 nop a\n", 3,
		     "thread '1024' is out of range (0 to 1023)");
	expect_error(BO2 "job 99999999999999999999999 0 10 nop a\n", 3,
		     "out of range");
	expect_error(BO2 "job 0 64 10 nop a\n", 3,
		     "engine '64' is out of range (0 to 63)");
	expect_error(BO2 "job 0 0 60000001 nop a\n", 3,
		     "duration (us) '60000001' is out of range");
	expect_error(BO2 "job 0 0 1.5 nop a\n", 3, "'1.5' is not a decimal");
	expect_error(BO2 "job 0 0 +5 nop a\n", 3, "without a sign");
	/* ops */
	expect_error(BO2 "job 0 0 10 add a\n", 3, "bad op 'add'");
	expect_error(BO2 "job 0 0 10 sub=1 a\n", 3, "bad op 'sub=1'");
	expect_error(BO2 "job 0 0 10 NOP a\n", 3, "bad op 'NOP'");
	expect_error(BO2 "job 0 0 10 add= a\n", 3, "bad add value ''");
	expect_error(BO2 "job 0 0 10 add=-1 a\n", 3, "bad add value '-1'");
	expect_error(BO2 "job 0 0 10 add=0x a\n", 3, "bad add value '0x'");
	expect_error(BO2 "job 0 0 10 add=0xg a\n", 3, "bad add value");
	expect_error(BO2 "job 0 0 10 add=4294967296 a\n", 3,
		     "add value '4294967296' is out of range");
	expect_error(BO2 "job 0 0 10 add=0x100000000 a\n", 3,
		     "out of range");
	expect_error(BO2 "job 0 0 10 add=0x0000000100000000 a\n", 3,
		     "out of range");
}

static void test_errors_fourcc(void **state)
{
	(void)state;
	expect_error("bo a 4x4:ZZZZ\n", 1, "unknown fourcc 'ZZZZ'");
	expect_error("bo a 4x4:NV12\n", 1, "unknown fourcc 'NV12'");
	expect_error("bo a 4x4:xr24\n", 1, "unknown fourcc 'xr24'");
	expect_error("bo a 4x4:R\n", 1, "2 to 4 characters");
	expect_error("bo a 4x4:XR245\n", 1, "2 to 4 characters");
	expect_error("bo a 4x4:\n", 1, "2 to 4 characters");
	expect_error("bo a 0x4:XR24\n", 1, "zero dimension");
	expect_error("bo a 4x0:XR24\n", 1, "zero dimension");
	expect_error("bo a 3x1:R8\n", 1, "not a multiple of 4");
	expect_error("bo a 3x3:RG16\n", 1, "18 bytes");
	expect_error("bo a 16384x16385:XR24\n", 1, "more than 1 GiB");
	expect_error("bo a 4294967295x4294967295:XR24\n", 1,
		     "more than 1 GiB");
	expect_error("bo a 4294967296x1:R8\n", 1, "out of range");
	expect_error("bo a 4X4:XR24\n", 1, "bad size '4X4:XR24'");
	expect_error("bo a 4x4\n", 1, "bad size '4x4'");
	expect_error("bo a x4:R8\n", 1, "bad size");
	expect_error("bo a -4x4:R8\n", 1, "without a sign");
	expect_error("bo a 4x-4:R8\n", 1, "bad size");
}

static void test_errors_names(void **state)
{
	char line[256];

	(void)state;
	expect_error("bo a 4\nbo b 4\nbo a 8\n", 3,
		     "duplicate buffer name 'a' (defined on line 1)");
	expect_error(BO2 "job 0 0 10 nop a foo\n", 3,
		     "unknown buffer name 'foo'");
	expect_error("job 0 0 10 nop a\nbo a 4\n", 1,
		     "unknown buffer name 'a'");
	expect_error(BO2 "job 0 0 10 nop A\n", 3, "unknown buffer name 'A'");
	expect_error("bo a$ 4\n", 1, "bad character '$' in buffer name 'a$'");
	expect_error("bo a/b 4\n", 1, "bad character '/'");
	expect_error("bo a,b 4\n", 1, "bad character ','");
	expect_error("bo \xc3\xa9t\xc3\xa9 4\n", 1, "non-ASCII byte 0xc3");
	expect_error(BO2 "job 0 0 10 nop a b! \n", 3, "bad character '!'");
	/* 64 bytes are fine, 65 are not */
	snprintf(line, sizeof(line), "bo %.64s 4\n",
		 "0123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789");
	{
		struct workload wl;

		expect_ok(line, &wl);
		assert_int_equal(strlen(wl.bos[0].name), 64);
		workload_free(&wl);
	}
	snprintf(line, sizeof(line), "bo %.65s 4\n",
		 "0123456789012345678901234567890123456789"
		 "0123456789012345678901234567890123456789");
	expect_error(line, 1, "too long (65 bytes; at most 64)");
}

static void test_errors_text(void **state)
{
	static const char nul[] = "bo a 4\nbo b\0 4\n";
	static const char nul_comment[] = "bo a 4 # x\0y\n";
	char *big;
	size_t n;

	(void)state;
	expect_error_mem(nul, sizeof(nul) - 1, 2,
			 "non-text byte 0x00 at column 5");
	expect_error_mem(nul_comment, sizeof(nul_comment) - 1, 1,
			 "non-text byte 0x00 at column 11");
	expect_error("bo a 4\x01\n", 1, "non-text byte 0x01 at column 7");
	expect_error("bo a\r4\n", 1, "non-text byte 0x0d at column 5");
	expect_error("bo a 4\r\r\n", 1, "non-text byte 0x0d at column 7");
	expect_error("bo a 4\x1b[0m\n", 1, "non-text byte 0x1b");
	expect_error("bo a 4\x7f\n", 1, "non-text byte 0x7f");
	expect_error("bo a 4\f\n", 1, "non-text byte 0x0c");
	expect_error("bo a 4\v\n", 1, "non-text byte 0x0b");
	expect_error("# \xff\n", 1, "invalid UTF-8 (byte 0xff) at column 3");
	expect_error("# \xc3\n", 1, "invalid UTF-8");
	expect_error("# \xc0\x80\n", 1, "invalid UTF-8"); /* overlong */
	expect_error("# \xed\xa0\x80\n", 1, "invalid UTF-8"); /* surrogate */
	expect_error("# \xf4\x90\x80\x80\n", 1, "invalid UTF-8");
	expect_error("\n\n\n\n# \x80\n", 5, "invalid UTF-8");

	/* a line of exactly WL_MAX_LINE bytes is fine, one more is not */
	n = WL_MAX_LINE + 16;
	big = malloc(n + 16);
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "bo a 4 #", 8);
	big[WL_MAX_LINE] = '\n';
	{
		struct workload wl;

		assert_int_equal(parse_mem(big, WL_MAX_LINE + 1, &wl), 0);
		assert_int_equal(wl.n_bos, 1);
		workload_free(&wl);
	}
	memcpy(big, "bo b 4\n", 7);
	memset(big + 7, '#', n - 7);
	big[n - 1] = '\n';
	expect_error_mem(big, n, 2, "line too long (more than 1048576");
	/* ... also without a newline at the end of the file */
	expect_error_mem(big, n - 1, 2, "line too long");
	free(big);
}

static void test_good(void **state)
{
	struct workload wl;
	const struct wl_job *j;

	(void)state;
	expect_ok("# a frame\n"
		  "\n"
		  "   \t\n"
		  "bo fb 1920x1080:XR24 vram pinned # the scanout\r\n"
		  "bo tex_0 4096\tgtt\n"
		  "bo Tex-1.b 256x256:AR24 system\n"
		  "bo r 2x2:R8 pinned\n"
		  "bo rg 2x1:RG16\n"
		  "bo big 1073741824\n"
		  "\tjob 3 1 0 add=0xFFFFFFFF fb tex_0   Tex-1.b#x\n"
		  "job 0 63 60000000 nop r fb\n"
		  "job 1023 0 7 hang rg rg\n"
		  "job 0 0 1 add=4294967295 big\n"
		  "job 0 0 1 add=0 big # no change\n"
		  "job 0 0 1 add=0x0 big", &wl);
	assert_string_equal(wl.source, "w.txt");
	assert_int_equal(wl.n_bos, 6);
	assert_string_equal(wl.bos[0].name, "fb");
	assert_int_equal(wl.bos[0].size, 1920 * 1080 * 4);
	assert_int_equal(wl.bos[0].width, 1920);
	assert_int_equal(wl.bos[0].height, 1080);
	assert_int_equal(wl.bos[0].fourcc, DRM_FORMAT_XRGB8888);
	assert_int_equal(wl.bos[0].placement, WL_PLACE_VRAM);
	assert_true(wl.bos[0].pinned);
	assert_int_equal(wl.bos[0].line, 4);
	assert_string_equal(wl.bos[1].name, "tex_0");
	assert_int_equal(wl.bos[1].size, 4096);
	assert_int_equal(wl.bos[1].fourcc, 0);
	assert_int_equal(wl.bos[1].width, 0);
	assert_int_equal(wl.bos[1].placement, WL_PLACE_GTT);
	assert_false(wl.bos[1].pinned);
	assert_string_equal(wl.bos[2].name, "Tex-1.b");
	assert_int_equal(wl.bos[2].fourcc, DRM_FORMAT_ARGB8888);
	assert_int_equal(wl.bos[2].placement, WL_PLACE_SYSTEM);
	assert_int_equal(wl.bos[3].fourcc, DRM_FORMAT_R8);
	assert_int_equal(wl.bos[3].size, 4);
	assert_int_equal(wl.bos[3].placement, WL_PLACE_DEFAULT);
	assert_true(wl.bos[3].pinned);
	assert_int_equal(wl.bos[4].fourcc, DRM_FORMAT_RGB565);
	assert_int_equal(wl.bos[4].size, 4);
	assert_int_equal(wl.bos[5].size, WL_MAX_BO_SIZE);

	assert_int_equal(wl.n_jobs, 6);
	assert_int_equal(wl.n_threads, 1024);
	assert_int_equal(wl.n_engines, 64);
	j = &wl.jobs[0];
	assert_int_equal(j->thread, 3);
	assert_int_equal(j->engine, 1);
	assert_int_equal(j->duration_us, 0);
	assert_int_equal(j->op, WL_OP_ADD);
	assert_int_equal(j->add_value, 0xffffffffu);
	assert_int_equal(j->n_bos, 3);
	assert_int_equal(j->bos[0], 0);
	assert_int_equal(j->bos[1], 1);
	assert_int_equal(j->bos[2], 2);
	assert_int_equal(j->line, 10);
	j = &wl.jobs[1];
	assert_int_equal(j->engine, 63);
	assert_int_equal(j->duration_us, 60000000);
	assert_int_equal(j->op, WL_OP_NOP);
	assert_int_equal(j->n_bos, 2);
	assert_int_equal(j->bos[0], 3);
	assert_int_equal(j->bos[1], 0);
	j = &wl.jobs[2];
	assert_int_equal(j->thread, 1023);
	assert_int_equal(j->op, WL_OP_HANG);
	/* a buffer listed twice is for the run to judge */
	assert_int_equal(j->n_bos, 2);
	assert_int_equal(j->bos[0], 4);
	assert_int_equal(j->bos[1], 4);
	assert_int_equal(wl.jobs[3].add_value, 4294967295u);
	assert_int_equal(wl.jobs[4].add_value, 0);
	assert_int_equal(wl.jobs[5].add_value, 0);
	assert_int_equal(wl.jobs[5].line, 15);
	workload_free(&wl);
	assert_true(is_empty(&wl));
	workload_free(&wl);  /* again: harmless */
	workload_free(NULL);

	/* nothing at all, and only comments */
	expect_ok("", &wl);
	assert_int_equal(wl.n_bos, 0);
	assert_int_equal(wl.n_jobs, 0);
	assert_int_equal(wl.n_threads, 0);
	assert_int_equal(wl.n_engines, 0);
	workload_free(&wl);
	expect_ok("# nothing\n\n", &wl);
	assert_int_equal(wl.n_jobs, 0);
	workload_free(&wl);

	/* UTF-8 in comments; every known short code; a name that is a word */
	expect_ok("# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n"
		  "bo pinned 4 pinned\nbo vram 2x1:RG88\nbo gtt 4x1:R8\n"
		  "bo job 2x1:BG16\n"
		  "job 0 0 0 nop pinned vram gtt job\n", &wl);
	assert_int_equal(wl.bos[0].pinned, true);
	assert_int_equal(wl.bos[1].fourcc, DRM_FORMAT_RG88);
	assert_int_equal(wl.bos[3].fourcc, DRM_FORMAT_BGR565);
	assert_int_equal(wl.jobs[0].n_bos, 4);
	assert_int_equal(wl.jobs[0].bos[3], 3);
	workload_free(&wl);
}

static void test_job_bos_limit(void **state)
{
	size_t cap = 1024 * 1024, len = 0;
	char *text = malloc(cap);
	struct workload wl;
	unsigned int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < WL_MAX_JOB_BOS + 1; i++) {
		len += (size_t)sprintf(text + len, "bo b%u 4\n", i);
	}
	len += (size_t)sprintf(text + len, "job 0 0 0 nop");
	for (i = 0; i < WL_MAX_JOB_BOS; i++) {
		len += (size_t)sprintf(text + len, " b%u", i);
	}
	text[len++] = '\n';
	assert_int_equal(parse_mem(text, len, &wl), 0);
	assert_int_equal(wl.jobs[0].n_bos, WL_MAX_JOB_BOS);
	assert_int_equal(wl.jobs[0].bos[WL_MAX_JOB_BOS - 1],
			 WL_MAX_JOB_BOS - 1);
	workload_free(&wl);
	len--;
	len += (size_t)sprintf(text + len, " b%u\n", WL_MAX_JOB_BOS);
	expect_error_mem(text, len, WL_MAX_JOB_BOS + 2,
			 "job lists more than 4096 buffers");
	free(text);
}

static void assert_same(const struct workload *a, const struct workload *b)
{
	size_t j;
	unsigned int i;

	assert_int_equal(a->n_bos, b->n_bos);
	assert_int_equal(a->n_jobs, b->n_jobs);
	assert_int_equal(a->n_threads, b->n_threads);
	assert_int_equal(a->n_engines, b->n_engines);
	assert_int_equal(a->shrink_ms, b->shrink_ms);
	for (i = 0; i < a->n_bos; i++) {
		const struct wl_bo *x = &a->bos[i], *y = &b->bos[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->width, y->width);
		assert_int_equal(x->height, y->height);
		assert_int_equal(x->fourcc, y->fourcc);
		assert_int_equal(x->placement, y->placement);
		assert_int_equal(x->pinned, y->pinned);
		assert_int_equal(x->prime, y->prime);
		assert_int_equal(x->fpfn, y->fpfn);
		assert_int_equal(x->lpfn, y->lpfn);
	}
	assert_int_equal(a->n_syncobjs, b->n_syncobjs);
	for (i = 0; i < a->n_syncobjs; i++) {
		assert_string_equal(a->syncobjs[i].name, b->syncobjs[i].name);
		assert_int_equal(a->syncobjs[i].timeline,
				 b->syncobjs[i].timeline);
	}
	for (j = 0; j < a->n_jobs; j++) {
		const struct wl_job *x = &a->jobs[j], *y = &b->jobs[j];

		assert_int_equal(x->n_syncs, y->n_syncs);
		for (i = 0; i < x->n_syncs; i++) {
			assert_int_equal(x->syncs[i].syncobj,
					 y->syncs[i].syncobj);
			assert_int_equal(x->syncs[i].signal,
					 y->syncs[i].signal);
			assert_int_equal(x->syncs[i].point, y->syncs[i].point);
		}
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->engine, y->engine);
		assert_int_equal(x->duration_us, y->duration_us);
		assert_int_equal(x->op, y->op);
		assert_int_equal(x->add_value, y->add_value);
		assert_int_equal(x->n_bos, y->n_bos);
		assert_memory_equal(x->bos, y->bos,
				    x->n_bos * sizeof(*x->bos));
	}
}

static bool same_jobs(const struct workload *a, const struct workload *b)
{
	size_t j;

	if (a->n_jobs != b->n_jobs || a->n_bos != b->n_bos) {
		return false;
	}
	for (j = 0; j < a->n_jobs; j++) {
		const struct wl_job *x = &a->jobs[j], *y = &b->jobs[j];

		if (x->n_bos != y->n_bos || x->add_value != y->add_value ||
		    x->engine != y->engine ||
		    memcmp(x->bos, y->bos, x->n_bos * sizeof(*x->bos))) {
			return false;
		}
	}
	return true;
}

static struct wl_gen_options default_options(void)
{
	return (struct wl_gen_options){
		.threads = 4, .bos = 1024, .bo_size_min = 4096,
		.bo_size_max = 65536, .per_job_min = 2, .per_job_max = 8,
		.jobs = 1000, .order = WL_ORDER_RANDOM, .engines = 2,
		.job_us_min = 0, .job_us_max = 100, .seed = 1,
	};
}

struct save_call {
	const struct workload *wl;
	const char *path;
};

static int do_save(void *arg)
{
	struct save_call *c = arg;

	return workload_save(c->wl, c->path);
}

struct load_call {
	const char *path;
	struct workload *wl;
};

static int do_load(void *arg)
{
	struct load_call *c = arg;

	return workload_load(c->path, c->wl);
}

/* Save @wl to a temporary file, load it back into *@ret. */
static void save_load(const struct workload *wl, struct workload *ret)
{
	char path[] = "/tmp/test-workload-XXXXXX";
	int fd = mkstemp(path);
	struct save_call s = { wl, path };
	struct load_call l = { path, ret };

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(capture_stderr(do_save, &s), 0);
	assert_int_equal(capture_stderr(do_load, &l), 0);
	assert_string_equal(err_text, "");
	assert_string_equal(ret->source, path);
	unlink(path);
}

static void test_generate(void **state)
{
	struct wl_gen_options o = default_options();
	struct workload a, b, c;
	unsigned int per_thread[4] = { 0 }, used_engines[2] = { 0 };
	size_t j;
	unsigned int i, k;

	(void)state;
	assert_int_equal(workload_generate(&o, &a), 0);
	assert_int_equal(workload_generate(&o, &b), 0);
	assert_same(&a, &b);
	assert_true(a.has_seed);
	assert_int_equal(a.seed, 1);
	assert_null(a.source);
	assert_int_equal(a.n_bos, 1024);
	assert_int_equal(a.n_jobs, 4000);
	assert_int_equal(a.n_threads, 4);
	assert_int_equal(a.n_engines, 2);
	for (i = 0; i < a.n_bos; i++) {
		char name[16];

		snprintf(name, sizeof(name), "bo%u", i);
		assert_string_equal(a.bos[i].name, name);
		assert_int_equal(a.bos[i].size % 4, 0);
		assert_in_range(a.bos[i].size, 4096, 65536);
		assert_int_equal(a.bos[i].placement, WL_PLACE_DEFAULT);
		assert_false(a.bos[i].pinned);
		assert_int_equal(a.bos[i].fourcc, 0);
	}
	for (j = 0; j < a.n_jobs; j++) {
		const struct wl_job *job = &a.jobs[j];

		assert_in_range(job->n_bos, 2, 8);
		assert_in_range(job->duration_us, 0, 100);
		assert_int_equal(job->op, WL_OP_ADD);
		assert_int_not_equal(job->add_value, 0);
		assert_in_range(job->thread, 0, 3);
		per_thread[job->thread]++;
		used_engines[job->engine]++;
		for (i = 0; i < job->n_bos; i++) {
			assert_in_range(job->bos[i], 0, 1023);
			for (k = 0; k < i; k++) {
				assert_int_not_equal(job->bos[i],
						     job->bos[k]);
			}
		}
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(per_thread[i], 1000);
	}
	assert_true(used_engines[0] > 0 && used_engines[1] > 0);

	o.seed = 2;
	assert_int_equal(workload_generate(&o, &c), 0);
	assert_false(same_jobs(&a, &c));
	workload_free(&c);

	/* round trip */
	save_load(&a, &c);
	assert_false(c.has_seed);
	assert_same(&a, &c);
	workload_free(&c);
	workload_free(&a);
	workload_free(&b);

	/* orders, and buffers that each job takes whole */
	o.order = WL_ORDER_SORTED;
	o.bos = 5;
	o.per_job_min = 1;
	o.per_job_max = 5;
	o.bo_size_min = 0;
	o.bo_size_max = 7;
	assert_int_equal(workload_generate(&o, &a), 0);
	o.order = WL_ORDER_REVERSE;
	assert_int_equal(workload_generate(&o, &b), 0);
	for (i = 0; i < a.n_bos; i++) {
		assert_int_equal(a.bos[i].size, 4);
	}
	for (j = 0; j < a.n_jobs; j++) {
		const struct wl_job *x = &a.jobs[j], *y = &b.jobs[j];

		assert_int_equal(x->n_bos, y->n_bos);
		for (i = 1; i < x->n_bos; i++) {
			assert_true(x->bos[i - 1] < x->bos[i]);
			assert_true(y->bos[i - 1] > y->bos[i]);
		}
		for (i = 0; i < x->n_bos; i++) {
			assert_int_equal(x->bos[i],
					 y->bos[y->n_bos - 1 - i]);
		}
	}
	workload_free(&a);
	workload_free(&b);

	/* bad options */
	o = default_options();
	o.threads = 0;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
	assert_true(is_empty(&a));
	o = default_options();
	o.per_job_max = 2000;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
	o = default_options();
	o.engines = 65;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
	o = default_options();
	o.jobs = 0;
	assert_int_equal(workload_generate(&o, &a), 0);
	assert_int_equal(a.n_jobs, 0);
	workload_free(&a);
}

/*
 * The `shrink MS` directive: anywhere in the file, once, 1 to
 * WL_MAX_SHRINK_MS; each malformed form names its line, nothing kept;
 * save writes it and load gives it back; the generator carries its
 * option without changing the random workload.
 */
static void test_shrink(void **state)
{
	struct wl_gen_options o = default_options();
	struct workload a, b, c;

	(void)state;
	expect_ok("bo a 4\nshrink 5\njob 0 0 0 nop a\n", &a);
	assert_int_equal(a.shrink_ms, 5);
	assert_int_equal(a.n_bos, 1);
	assert_int_equal(a.n_jobs, 1);
	workload_free(&a);
	/* after the jobs, tabs, a comment, leading zeros, the limits */
	expect_ok("bo a 4\njob 0 0 0 nop a\n\tshrink\t007 # ms\n", &a);
	assert_int_equal(a.shrink_ms, 7);
	workload_free(&a);
	expect_ok("shrink 1\n", &a);
	assert_int_equal(a.shrink_ms, 1);
	workload_free(&a);
	expect_ok("shrink 60000\n", &a);
	assert_int_equal(a.shrink_ms, WL_MAX_SHRINK_MS);
	workload_free(&a);
	/* none: 0 */
	expect_ok(BO2, &a);
	assert_int_equal(a.shrink_ms, 0);
	workload_free(&a);

	expect_error("shrink 5\nbo a 4\nshrink 5\n", 3,
		     "a second shrink line (the first is line 1)");
	expect_error(BO2 "shrink\n", 3, "shrink: missing MS");
	expect_error(BO2 "shrink # 5\n", 3, "shrink: missing MS");
	expect_error(BO2 "shrink 0\n", 3, "'0' is out of range (1 to 60000");
	expect_error(BO2 "shrink 000\n", 3, "out of range (1 to 60000");
	expect_error(BO2 "shrink 60001\n", 3,
		     "'60001' is out of range (1 to 60000");
	expect_error(BO2 "shrink 99999999999999999999999\n", 3,
		     "out of range");
	expect_error(BO2 "shrink -5\n", 3, "'-5' is not a number");
	expect_error(BO2 "shrink +5\n", 3, "'+5' is not a number");
	expect_error(BO2 "shrink 5ms\n", 3, "'5ms' is not a number");
	expect_error(BO2 "shrink 0x10\n", 3, "'0x10' is not a number");
	expect_error(BO2 "shrink 5 6\n", 3, "extra word '6'");
	expect_error(BO2 "SHRINK 5\n", 3, "unknown directive 'SHRINK'");
	/* a late error after a good shrink line: nothing kept */
	expect_error("shrink 5\nbo a 4\nfrob\n", 3, "unknown directive");

	/* save and load */
	expect_ok("bo a 4\nshrink 250\njob 0 0 0 nop a\n", &a);
	save_load(&a, &b);
	assert_same(&a, &b);
	assert_int_equal(b.shrink_ms, 250);
	workload_free(&b);
	a.shrink_ms = 0;  /* none: no shrink line */
	save_load(&a, &b);
	assert_int_equal(b.shrink_ms, 0);
	workload_free(&b);
	workload_free(&a);

	/* the generator: the option, the same jobs as without it */
	o.jobs = 50;
	assert_int_equal(workload_generate(&o, &a), 0);
	assert_int_equal(a.shrink_ms, 0);
	o.shrink_ms = 20;
	assert_int_equal(workload_generate(&o, &b), 0);
	assert_int_equal(b.shrink_ms, 20);
	assert_true(same_jobs(&a, &b));
	save_load(&b, &c);
	assert_same(&b, &c);
	assert_int_equal(c.shrink_ms, 20);
	workload_free(&c);
	workload_free(&b);
	workload_free(&a);
	o.shrink_ms = WL_MAX_SHRINK_MS + 1;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
	assert_true(is_empty(&a));
}

/* A workload with every kind of line saves and loads back the same. */
static void test_round_trip_file(void **state)
{
	static const char text[] =
		"bo fb 1920x1080:XR24 vram pinned\n"
		"bo r 2x2:R8 gtt\n"
		"bo rg 2x1:RG16 system pinned\n"
		"bo p 8 pinned\n"
		"bo q 1073741824\n"
		"job 5 7 60000000 hang fb r\n"
		"job 0 0 0 nop q q\n"
		"job 2 1 3 add=0xdeadbeef rg p fb\n";
	struct workload a, b;

	(void)state;
	expect_ok(text, &a);
	save_load(&a, &b);
	assert_same(&a, &b);
	for (unsigned int i = 0; i < a.n_bos; i++) {
		assert_int_equal(a.bos[i].line, i + 1);
		assert_int_equal(b.bos[i].line, i + 6);  /* after 5 comments */
	}
	workload_free(&a);
	workload_free(&b);
}

/* PRIME, ranges and syncobjs: what the words parse to, and bad ones. */
static void test_features(void **state)
{
	static const char text[] =
		"syncobj s\n"
		"syncobj t timeline\n"
		"bo a 8192 vram@2-10 prime\n"
		"bo b 4 visible pinned\n"
		"bo c 4 gtt@0-1 pinned prime\n"
		"job 0 0 1 add=1 signal=s signal=t@5 a\n"
		"job 1 0 1 nop a wait=s b wait=t@5\n";
	struct workload a, b;
	size_t *deps;

	(void)state;
	expect_ok(text, &a);
	assert_int_equal(a.n_syncobjs, 2);
	assert_false(a.syncobjs[0].timeline);
	assert_true(a.syncobjs[1].timeline);
	assert_int_equal(a.bos[0].placement, WL_PLACE_VRAM);
	assert_int_equal(a.bos[0].fpfn, 2);
	assert_int_equal(a.bos[0].lpfn, 10);
	assert_true(a.bos[0].prime);
	assert_int_equal(a.bos[1].placement, WL_PLACE_VISIBLE);
	assert_true(a.bos[1].pinned && !a.bos[1].prime);
	assert_int_equal(a.bos[2].placement, WL_PLACE_GTT);
	assert_true(a.bos[2].pinned && a.bos[2].prime);
	assert_int_equal(a.jobs[0].n_syncs, 2);
	assert_true(a.jobs[0].syncs[1].signal);
	assert_int_equal(a.jobs[0].syncs[1].point, 5);
	/* Sync words may stand among the names; the names stay in order. */
	assert_int_equal(a.jobs[1].n_bos, 2);
	assert_int_equal(a.jobs[1].n_syncs, 2);
	assert_false(a.jobs[1].syncs[0].signal);
	assert_int_equal(workload_sync_deps(&a, &deps), 0);
	assert_int_equal(deps[1 * WL_MAX_JOB_SYNCS + 0], 0);
	assert_int_equal(deps[1 * WL_MAX_JOB_SYNCS + 1], 0);
	assert_int_equal(deps[0], SIZE_MAX);
	free(deps);
	save_load(&a, &b);
	assert_same(&a, &b);
	workload_free(&a);
	workload_free(&b);

	expect_error("bo a 4 vram@3-3\n", 1, "empty range 'vram@3-3'");
	expect_error("bo a 8192 gtt@0-1\n", 1, "holds 1 pages");
	expect_error("bo a 4 vram@-1\n", 1, "bad range 'vram@-1'");
	expect_error("bo a 4 prime visible\n", 1, "extra word 'visible'");
	expect_error("syncobj s\nsyncobj s\n", 2, "duplicate syncobj name");
	expect_error("syncobj s\nbo a 4\njob 0 0 0 nop wait=s a\n", 3,
		     "which no job signals");
	expect_error("syncobj s\nbo a 4\njob 0 0 0 nop wait=s a\n"
		     "job 0 0 0 nop signal=s a\n", 3, "make a cycle");
	expect_error("syncobj t timeline\nbo a 4\n"
		     "job 0 0 0 nop signal=t@1 a\njob 1 0 0 nop signal=t@1 a\n",
		     4, "a second signal of syncobj 't' point 1");
	expect_error("bo a 4\njob 0 0 0 nop wait=s a\n", 2,
		     "unknown syncobj 's'");
}

/*
 * The stress shrinker's repair: a signaller's job dropped, or the
 * threads merged so that a wait comes before its own thread's signal;
 * the waits that leave go, the rest stay, and the workload loads.
 */
static void test_sync_prune(void **state)
{
	static const char text[] =
		"syncobj s\n"
		"syncobj t timeline\n"
		"bo a 4\n"
		"job 0 0 1 add=1 signal=s signal=t@1 a\n"
		"job 1 0 1 add=1 wait=t@1 signal=t@2 a\n"
		"job 2 0 1 add=1 wait=s wait=t@2 a\n";
	struct workload a;

	(void)state;
	expect_ok(text, &a);
	assert_int_equal(workload_sync_prune(&a), 0);
	/* Job 0 goes (its bos in the load's arena): its waiters' words. */
	memmove(a.jobs, a.jobs + 1, 2 * sizeof(*a.jobs));
	a.n_jobs = 2;
	assert_int_equal(workload_sync_prune(&a), 2);
	assert_int_equal(a.jobs[0].n_syncs, 1);
	assert_true(a.jobs[0].syncs[0].signal);
	assert_int_equal(a.jobs[1].n_syncs, 1);
	assert_int_equal(a.jobs[1].syncs[0].point, 2);
	assert_int_equal(workload_sync_deps(&a, NULL), 0);
	/* Thread 1 folded into 2 after its signaller: a cycle, cut. */
	a.jobs[0].thread = 2;
	assert_int_equal(workload_sync_deps(&a, NULL), 0);
	a.jobs[0].thread = 1;
	a.jobs[1].thread = 1;
	/* The waiter first in its thread, the signal after it. */
	{
		struct wl_job tmp = a.jobs[0];

		a.jobs[0] = a.jobs[1];
		a.jobs[1] = tmp;
	}
	assert_int_equal(workload_sync_deps(&a, NULL), CLI_EXIT_USAGE);
	assert_int_equal(workload_sync_prune(&a), 1);
	assert_int_equal(a.jobs[0].n_syncs, 0);
	assert_int_equal(workload_sync_deps(&a, NULL), 0);
	workload_free(&a);
}

/* The generator's features: valid, and the rest as without them. */
static void test_generate_features(void **state)
{
	struct wl_gen_options o = default_options();
	struct workload a, b, c;
	unsigned int i, prime = 0, ranged = 0, syncs = 0;
	size_t j;

	(void)state;
	o.bos = 64;
	o.jobs = 100;
	assert_int_equal(workload_generate(&o, &a), 0);
	o.prime_percent = 50;
	o.syncobjs = 5;
	o.ranges = true;
	assert_int_equal(workload_generate(&o, &b), 0);
	assert_true(same_jobs(&a, &b));
	for (i = 0; i < b.n_bos; i++) {
		assert_int_equal(a.bos[i].size, b.bos[i].size);
		prime += b.bos[i].prime;
		ranged += b.bos[i].lpfn != 0 ||
			  b.bos[i].placement == WL_PLACE_VISIBLE;
	}
	for (j = 0; j < b.n_jobs; j++)
		syncs += b.jobs[j].n_syncs;
	assert_true(prime > 0 && ranged > 0 && syncs > 0);
	assert_int_equal(b.n_syncobjs, 5);
	assert_int_equal(workload_sync_deps(&b, NULL), 0);
	save_load(&b, &c);
	assert_same(&b, &c);
	workload_free(&a);
	workload_free(&b);
	workload_free(&c);
	o.prime_percent = 101;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
	o.prime_percent = 0;
	o.syncobjs = WL_MAX_SYNCOBJS + 1;
	assert_int_equal(workload_generate(&o, &a), -EINVAL);
}

static void test_load_errors(void **state)
{
	struct load_call l;
	struct save_call s;
	struct workload wl;
	char path[] = "/tmp/test-workload-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	l.path = "/nonexistent/w.txt";
	l.wl = &wl;
	assert_int_equal(capture_stderr(do_load, &l), CLI_EXIT_USAGE);
	assert_string_equal(err_text, "ttmsim: /nonexistent/w.txt: "
				      "No such file or directory\n");
	assert_true(is_empty(&wl));

	l.path = "/";  /* a directory: reading it fails */
	assert_int_equal(capture_stderr(do_load, &l), CLI_EXIT_USAGE);
	assert_string_equal(err_text, "ttmsim: /: Is a directory\n");
	assert_true(is_empty(&wl));

	/* the name in messages is the path */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "bo a 4\nbo a 4\n", 14), 14);
	close(fd);
	l.path = path;
	assert_int_equal(capture_stderr(do_load, &l), CLI_EXIT_USAGE);
	assert_true(strncmp(err_text, path, strlen(path)) == 0);
	assert_string_equal(err_text + strlen(path),
			    ":2: duplicate buffer name 'a' (defined on "
			    "line 1)\n");
	unlink(path);

	/* standard input is "<stdin>" */
	{
		FILE *tmp = tmpfile();
		int saved = dup(STDIN_FILENO);

		fputs("\nbo a 5\n", tmp);
		rewind(tmp);
		assert_true(dup2(fileno(tmp), STDIN_FILENO) >= 0);
		l.path = "-";
		assert_int_equal(capture_stderr(do_load, &l), CLI_EXIT_USAGE);
		assert_true(dup2(saved, STDIN_FILENO) >= 0);
		close(saved);
		fclose(tmp);
		clearerr(stdin);
		assert_string_equal(err_text, "<stdin>:2: size '5' is 5 "
					      "bytes, not a multiple of 4\n");
	}

	/* saving where one cannot: a failure (1), as --dump, not usage */
	expect_ok("bo a 4\n", &wl);
	s.wl = &wl;
	s.path = "/nonexistent/out.txt";
	assert_int_equal(capture_stderr(do_save, &s), CLI_EXIT_FAILURE);
	assert_string_equal(err_text, "ttmsim: /nonexistent/out.txt: "
				      "No such file or directory\n");
	s.path = "/dev/full";
	assert_int_equal(capture_stderr(do_save, &s), CLI_EXIT_FAILURE);
	assert_string_equal(err_text, "ttmsim: /dev/full: cannot write "
				      "it: No space left on device\n");
	workload_free(&wl);
}

/* A big generated workload saves, loads and round-trips quickly enough. */
static void test_big(void **state)
{
	struct wl_gen_options o = default_options();
	struct workload a, b;
	struct timespec t0, t1;
	double s;

	(void)state;
	o.threads = 16;
	o.jobs = 12500; /* 200,000 jobs */
	assert_int_equal(workload_generate(&o, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	save_load(&a, &b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("save + load of %zu jobs: %.3f s\n", a.n_jobs, s);
	assert_same(&a, &b);
	workload_free(&a);
	workload_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors_directive),
		cmocka_unit_test(test_errors_numbers),
		cmocka_unit_test(test_errors_fourcc),
		cmocka_unit_test(test_errors_names),
		cmocka_unit_test(test_errors_text),
		cmocka_unit_test(test_job_bos_limit),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_round_trip_file),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_sync_prune),
		cmocka_unit_test(test_generate_features),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
