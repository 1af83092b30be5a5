// SPDX-License-Identifier: MIT
/*
 * ww_mutex transactions as the API documents them, and the switch for the
 * tests that break its rules on purpose.
 */
#include "helpers.h"

bool is_wait_die(const struct ww_class *cls)
{
	return cls->is_wait_die != 0;
}

void unlock_list(struct ww_mutex **locks, unsigned int n)
{
	while (n--)
		ww_mutex_unlock(locks[n]);
}

/*
 * Take locks[start..n-1] with @ctx, locks[0..start-1] being held already,
 * backing off on -EDEADLK the documented way: unlock everything, sleep on
 * the contended lock with ww_mutex_lock_slow() (or its interruptible form),
 * then take the others again in list order. Checks that -EDEADLK only comes
 * while something is held.
 *
 * Return: the number of back-offs with every lock held, or a negative errno
 * (-EINTR when @interruptible) with none held.
 */
int lock_list(struct ww_mutex **locks, unsigned int n, unsigned int start,
	      struct ww_acquire_ctx *ctx, bool interruptible)
{
	int contended = -1, backoffs = 0, ret;
	unsigned int i = start, j, held;

	for (; i < n; i++) {
		if ((int)i == contended)
			continue;
		ret = interruptible ? ww_mutex_lock_interruptible(locks[i], ctx)
				    : ww_mutex_lock(locks[i], ctx);
		if (ret == 0)
			continue;

		held = i + (contended > (int)i);
		for (j = 0; j < i; j++)
			ww_mutex_unlock(locks[j]);
		if (contended > (int)i)
			ww_mutex_unlock(locks[contended]);
		if (ret != -EDEADLK) {
			CHECK_MSG(ret == -EINTR && interruptible,
				  "lock returned %d", ret);
			return ret;
		}
		CHECK_MSG(held > 0, "-EDEADLK while holding nothing");

		backoffs++;
		if (interruptible) {
			ret = ww_mutex_lock_slow_interruptible(locks[i], ctx);
			if (ret) {
				CHECK_INT(ret, -EINTR);
				return ret;
			}
		} else {
			ww_mutex_lock_slow(locks[i], ctx);
		}
		contended = (int)i;
		i = (unsigned int)-1; /* start again from the first lock */
	}
	return backoffs;
}

bool checker_off(void)
{
	bool was = ww_debug_enabled();

	ww_debug_set_enabled(false);
	return was;
}

void checker_restore(bool was)
{
	ww_debug_set_enabled(was);
}
