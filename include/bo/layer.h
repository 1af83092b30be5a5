/* SPDX-License-Identifier: MIT */
/*
 * What bo/ offers the library's own layers above it (execbuf/), and
 * nobody else: a slot per layer in each device for that layer's
 * per-device state.
 *
 * ttm_device_set_private() is the driver's, as a DRM device's
 * dev_private: a layer that kept its state there would take the
 * driver's pointer for its own, or hand its own to the driver. Each
 * layer gets a slot of its own instead, with a release callback, as
 * the kernel's managed (drmm) actions: bo/ frees the state at
 * ttm_device_destroy() without knowing the layer.
 *
 * A layer attaches its state lazily, on first use, from any thread:
 * of two racing attachers the first wins and the second frees its own.
 * Reading a slot takes no lock.
 */
#ifndef TTMSIM_BO_LAYER_H
#define TTMSIM_BO_LAYER_H

#include "ttmsim/bo.h"

enum bo_layer {
	BO_LAYER_EXECBUF,
	BO_LAYER_COUNT
};

/*
 * Attach @data as @layer's state of @dev, unless the layer attached some
 * before; @release (NULL: none) gets it at ttm_device_destroy(), after
 * the driver's release (the layers are below the driver: it may still
 * use them from there) and every delayed destroy and move.
 * Return: the state attached: @data, or the earlier one (then @data was
 * not taken). Takes and releases the device lock.
 */
void *bo_device_layer_attach(struct ttm_device *dev, enum bo_layer layer,
			     void *data, void (*release)(void *data));

/* @layer's state of @dev, or NULL before it attached any. No lock. */
void *bo_device_layer(struct ttm_device *dev, enum bo_layer layer);

#endif /* TTMSIM_BO_LAYER_H */
