// SPDX-License-Identifier: MIT
/*
 * A client's scheduler entities: one per engine, made on the client's
 * first submission to that engine, on the device's scheduler of the
 * engine (ttm_device_sched()), with the client's priority. A DRM file's
 * contexts, in short. Closing the client flushes and destroys them.
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/execbuf.h"
#include "sched/sched.h"
#include "util/compiler.h"

int client_entity(struct ttm_client *c, unsigned int engine,
		  struct ttm_sched_entity **ret_entity)
{
	struct ttm_sched *sched = ttm_device_sched(c->dev, engine);
	int ret = 0;

	*ret_entity = NULL;
	if (!sched)
		return -EINVAL; /* no such engine: submit.c checked already */
	pthread_mutex_lock(&c->lock);
	if (!c->entities) {
		c->entities = calloc(ttm_gpu_engines(ttm_device_gpu(c->dev)),
				     sizeof(*c->entities));
		if (!c->entities)
			ret = -ENOMEM;
	}
	if (ret == 0 && !c->entities[engine])
		ret = ttm_sched_entity_create(sched, c->priority,
					      &c->entities[engine]);
	if (ret == 0)
		*ret_entity = c->entities[engine];
	pthread_mutex_unlock(&c->lock);
	return ret;
}

void client_entities_destroy(struct ttm_client *c)
{
	unsigned int i, n;

	if (!c->entities)
		return;
	n = ttm_gpu_engines(ttm_device_gpu(c->dev));
	/*
	 * As the kernel at file close (drm_sched_entity_flush() then
	 * _destroy()): give the queued jobs a while to reach the ring, then
	 * kill what is left: their fences signal -ESRCH.
	 */
	for (i = 0; i < n; i++)
		ttm_sched_entity_destroy(c->entities[i],
					 TTM_CLIENT_FLUSH_TIMEOUT_NS);
	free(c->entities);
	c->entities = NULL;
}

TTM_EXPORT int ttm_client_set_priority(struct ttm_client *client,
				       enum ttm_sched_priority priority)
{
	unsigned int i, n;

	if (!client || (unsigned int)priority >= TTM_SCHED_PRIORITY_COUNT)
		return -EINVAL;
	n = ttm_gpu_engines(ttm_device_gpu(client->dev));
	pthread_mutex_lock(&client->lock);
	client->priority = priority;
	/* The jobs already queued move with their entity. */
	for (i = 0; client->entities && i < n; i++)
		if (client->entities[i])
			sched_entity_set_priority(client->entities[i],
						  priority);
	pthread_mutex_unlock(&client->lock);
	return 0;
}
