// SPDX-License-Identifier: MIT
/*
 * What a job does to memory: checking its operation and ranges at
 * submission (so that a bad job never reaches an engine), and applying
 * them when it runs.
 */
#include <errno.h>
#include <string.h>

#include "gpu_sim/gpu.h"

static bool range_ok(const struct ttm_gpu_range *r)
{
	/* The engines work in little-endian 32-bit words. */
	if ((uintptr_t)r->addr % 4 || r->size % 4)
		return false;
	return r->addr || !r->size;
}

int gpu_ops_validate(const struct ttm_gpu_job *job)
{
	unsigned int i;

	switch (job->op) {
	case TTM_GPU_OP_NOP:
	case TTM_GPU_OP_ADD:
		break;
	case TTM_GPU_OP_COPY:
		if (job->n_ranges != 2 || !job->ranges ||
		    job->ranges[0].size != job->ranges[1].size)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (job->n_ranges && !job->ranges)
		return -EINVAL;
	/* The real clock's deadline is in ns: no wrap to the past. */
	if (job->duration_us > TTM_GPU_MAX_DURATION_US)
		return -EINVAL;
	for (i = 0; i < job->n_ranges; i++)
		if (!range_ok(&job->ranges[i]))
			return -EINVAL;
	return 0;
}

/* Byte by byte, so that the words are little-endian on any host. */
static void add_range(const struct ttm_gpu_range *r, uint32_t value)
{
	unsigned char *p = r->addr, *end = p + r->size;
	uint32_t w;

	for (; p < end; p += 4) {
		w = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		w += value; /* unsigned: wraps mod 2^32 */
		p[0] = (unsigned char)w;
		p[1] = (unsigned char)(w >> 8);
		p[2] = (unsigned char)(w >> 16);
		p[3] = (unsigned char)(w >> 24);
	}
}

void gpu_ops_apply(const struct gpu_job *job)
{
	unsigned int i;

	switch (job->op) {
	case TTM_GPU_OP_ADD:
		for (i = 0; i < job->n_ranges; i++)
			add_range(&job->ranges[i], job->add_value);
		break;
	case TTM_GPU_OP_COPY:
		/* memmove: the caller may hand us overlapping ranges. */
		if (job->ranges[0].size)
			memmove(job->ranges[1].addr, job->ranges[0].addr,
				job->ranges[0].size);
		break;
	case TTM_GPU_OP_NOP:
		break;
	}
}
