// SPDX-License-Identifier: MIT
/*
 * The drm suite's fixture: a GPU on the real clock (moves must finish by
 * themselves: a mapping waits for its buffer's move), a device, a DRM
 * device, a primary-node file (the master) and a render-node one.
 */
#include "drm_helpers.h"

const struct ttm_drm_driver drm_test_driver = {
	.name = "drmtest",
	.desc = "ttmsim drm suite",
	.date = "20261204",
	.major = 1, .minor = 2, .patchlevel = 3,
};

int drm_fixture_setup_opts(void **state, const struct ttm_drm_driver *drv,
			   uint64_t gtt_size)
{
	struct drm_fixture *fx = calloc(1, sizeof(*fx));

	checks_reset(state);
	assert_non_null(fx);
	assert_int_equal(ttm_gpu_create(1, &(struct ttm_gpu_options){
					.flags = 0 },
					&fx->gpu), 0);
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
					.gpu = fx->gpu,
					.gtt_size = gtt_size }, &fx->dev), 0);
	assert_int_equal(ttm_drm_device_create(fx->dev, drv, &fx->ddev), 0);
	fx->primary = drm_open_file(fx->ddev, TTM_DRM_NODE_PRIMARY);
	fx->render = drm_open_file(fx->ddev, TTM_DRM_NODE_RENDER);
	*state = fx;
	return 0;
}

int drm_fixture_setup(void **state)
{
	return drm_fixture_setup_opts(state, &drm_test_driver, 0);
}

int drm_fixture_teardown(void **state)
{
	struct drm_fixture *fx = *state;

	ttm_drm_close(fx->render);
	ttm_drm_close(fx->primary);
	ttm_drm_device_destroy(fx->ddev);
	ttm_execbuf_wait_idle(fx->dev);
	assert_int_equal(ttm_device_destroy(fx->dev), 0);
	ttm_gpu_destroy(fx->gpu);
	free(fx);
	return 0;
}
