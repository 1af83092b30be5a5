// SPDX-License-Identifier: MIT
/*
 * The replay of a fuzz target's corpus, for builds without libFuzzer (gcc
 * included): runs LLVMFuzzerTestOneInput() once over each file named on
 * the command line, or over every file of each directory named, in name
 * order so that a failure is found at the same input every time. A broken
 * property aborts inside the target; an empty corpus is an error too, so
 * that a mistyped path cannot pass.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* libFuzzer calls it if the target defines it; so do we. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f) {
		fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *b = realloc(buf, cap ? 2 * cap : 4096);

			if (!b) {
				fprintf(stderr, "fuzz-replay: %s: out of "
					"memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = b;
			cap = cap ? 2 * cap : 4096;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	if (ferror(f)) {
		fprintf(stderr, "fuzz-replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file of @dir; the count in *@n. */
static int run_dir(const char *dir, unsigned long *n)
{
	struct dirent **names;
	int count = scandir(dir, &names, NULL, by_name);
	int i, ret = 0;

	if (count < 0) {
		fprintf(stderr, "fuzz-replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < count; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (!ret && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			ret = run_file(path);
			*n += !ret;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize) {
		LLVMFuzzerInitialize(&argc, &argv);
	}
	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "fuzz-replay: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &n)
					: run_file(argv[i])) {
			return 1;
		}
		n += !S_ISDIR(st.st_mode);
	}
	if (!n) {
		fprintf(stderr, "fuzz-replay: no input found\n");
		return 1;
	}
	printf("fuzz-replay: %lu inputs, no property broken\n", n);
	return 0;
}
