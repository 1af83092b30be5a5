// SPDX-License-Identifier: MIT
/* The self-tests' mock fence: see mock_fence.h. */
#include <stdlib.h>

#include "helpers.h"
#include "mock_fence.h"

#include "ttmsim/fence.h"
#include "util/compiler.h"

struct mock_fence {
	struct ttm_fence base;
	const char *name;
};

/* Atomic: a last put, so a release, may come from any thread. */
static int made, released;

static const char *mock_name(struct ttm_fence *f)
{
	return container_of(f, struct mock_fence, base)->name;
}

static void mock_release(struct ttm_fence *f)
{
	free(container_of(f, struct mock_fence, base));
	__atomic_add_fetch(&released, 1, __ATOMIC_RELEASE);
}

static const struct ttm_fence_ops mock_ops = {
	.get_driver_name = mock_name,
	.get_timeline_name = mock_name,
	.release = mock_release,
};

struct ttm_fence *mock_fence_new(const char *name)
{
	struct mock_fence *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->name = name;
	ttm_fence_init(&m->base, &mock_ops, ttm_fence_context_alloc(1), 0);
	__atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
	return &m->base;
}

int mock_fence_setup(void **state)
{
	__atomic_store_n(&made, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&released, 0, __ATOMIC_RELAXED);
	return checks_reset(state);
}

int mock_fence_teardown(void **state)
{
	(void)state;
	assert_int_equal(ttm_fence_rcu_barrier(), 0);
	assert_int_equal(__atomic_load_n(&released, __ATOMIC_ACQUIRE),
			 __atomic_load_n(&made, __ATOMIC_RELAXED));
	return 0;
}
