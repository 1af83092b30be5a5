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

	struct ttm_sched_entity **ents, *e;

	*ret_entity = NULL;
	if (!sched)
		return -EINVAL; /* no such engine: submit.c checked already */
	/*
	 * Made once, kept until the client closes (when no submission may
	 * run): a lock-free read of one published under the lock is enough,
	 * and every job but the first saves the client lock's round trip.
	 */
	ents = __atomic_load_n(&c->entities, __ATOMIC_ACQUIRE);
	e = ents ? __atomic_load_n(&ents[engine], __ATOMIC_ACQUIRE) : NULL;
	if (e) {
		*ret_entity = e;
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	ents = c->entities;
	if (!ents) {
		ents = calloc(ttm_gpu_engines(ttm_device_gpu(c->dev)),
			      sizeof(*ents));
		if (!ents)
			ret = -ENOMEM;
		else
			__atomic_store_n(&c->entities, ents, __ATOMIC_RELEASE);
	}
	e = ret == 0 ? ents[engine] : NULL;
	if (ret == 0 && !e) {
		ret = ttm_sched_entity_create(sched, c->priority, &e);
		if (ret == 0)
			__atomic_store_n(&ents[engine], e, __ATOMIC_RELEASE);
	}
	if (ret == 0)
		*ret_entity = e;
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
