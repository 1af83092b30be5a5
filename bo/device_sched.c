// SPDX-License-Identifier: MIT
/*
 * The device's rings: one fake-GPU scheduler per engine of its GPU
 * (sched/sched_gpu.c), and the KERNEL-priority entity on the copy engine
 * that TTM's moves go through. The device makes them itself rather than
 * taking them from its options: struct ttm_device_options stays as it is
 * (ABI), and every user of a device with a GPU gets the scheduler path.
 * ttm_device_sched() hands a ring to execbuf/ and to drivers.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "ttmsim/sched.h"
#include "util/compiler.h"

void bo_device_sched_fini(struct ttm_device *dev)
{
	unsigned int i;

	/* Empty by now: every move's fence has signalled (no ghosts). */
	ttm_sched_entity_destroy(dev->move_entity, 0);
	dev->move_entity = NULL;
	for (i = 0; i < dev->n_scheds; i++)
		ttm_sched_destroy(dev->scheds[i]);
	free(dev->scheds);
	dev->scheds = NULL;
	dev->n_scheds = 0;
}

int bo_device_sched_init(struct ttm_device *dev)
{
	unsigned int i, n = ttm_gpu_engines(dev->gpu);
	int ret = 0;

	dev->scheds = calloc(n, sizeof(*dev->scheds));
	if (!dev->scheds)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		ret = ttm_sched_gpu_create(dev->gpu, i, NULL, &dev->scheds[i]);
		if (ret == 0)
			dev->n_scheds++;
	}
	if (ret == 0)
		ret = ttm_sched_entity_create(dev->scheds[dev->copy_engine],
					      TTM_SCHED_PRIORITY_KERNEL,
					      &dev->move_entity);
	if (ret)
		bo_device_sched_fini(dev);
	return ret;
}

TTM_EXPORT struct ttm_sched *ttm_device_sched(struct ttm_device *dev,
					     unsigned int engine)
{
	return engine < dev->n_scheds ? dev->scheds[engine] : NULL;
}
