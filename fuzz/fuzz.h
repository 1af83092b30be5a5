/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets (fuzz/fuzz_TARGET.c): the libFuzzer entry points and
 * the one way a target reports a broken property. A broken property
 * aborts, so that libFuzzer keeps the input as a crash and the replay
 * (fuzz/replay.c) fails its test.
 */
#ifndef TTMSIM_FUZZ_H
#define TTMSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The property @cond failed: say which and where, then abort. */
#define FUZZ_CHECK(cond, ...)                                             \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__,    \
				__LINE__, #cond);                         \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			abort();                                          \
		}                                                         \
	} while (0)

#endif /* TTMSIM_FUZZ_H */
