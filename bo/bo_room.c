// SPDX-License-Identifier: MIT
/*
 * The room wait's event: a validation that found nothing to evict but
 * room held for a moment sleeps until room is freed or a reservation is
 * released, not on a timer.
 *
 * A sleeper parks on its own thread's futex (ww/thread.h), so that an
 * interrupt (ttm_interrupt()), which wakes that futex, ends an
 * interruptible wait at once too. The sleepers are listed on the device
 * under its lock; whoever bumps the generation under the lock wakes them
 * all. A sleeper reads its wake sequence under the lock, after checking
 * the generation and joining the list, so a wake-up between its check and
 * its sleep is never lost.
 *
 * An unreserve does not hold the device lock and must not take it for
 * nothing: it bumps the generation only if a validation is registered
 * (bo_room_notify()). The validation registers before its first attempt
 * and reads the generation before each; the unlocker releases the lock,
 * then, after a full barrier, reads the count. Of the two stores (the
 * count, the lock word) and the two loads after them (the lock word in
 * the attempt, the count), at least one load sees the other side's
 * store: the attempt sees the buffer free, or the unlocker sees the
 * waiter and bumps the generation it read, and it does not sleep.
 *
 * A reservation does not know its device: ttm_resv_unlock(), the
 * driver's unlock of a reservation it holds itself, bumps a process-wide
 * generation, resv_gen, that every sleeper adds to its device's, and
 * wakes the sleepers of every device. It is the same Dekker pair: a
 * sleeper joins the global list and counts itself under resv_lock, then
 * reads the generation; the unlocker bumps the generation (a sequentially
 * consistent read-modify-write), then reads the count; either the sleeper
 * sees the bump or the unlocker sees the sleeper, on the list, and wakes
 * it.
 *
 * What no ttmsim call signals (a reservation unlocked with a bare
 * ww_mutex_unlock(); an import's reservation released through its
 * exporter on another device) is seen only by a safety timeout,
 * ROOM_SAFETY_NS, counted in room_wait_timeouts: the test suite checks
 * that it never fires in the cases ttmsim signals.
 */
#include <errno.h>

#include "bo/bo.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/thread.h"

/* The last resort; see above. */
#define ROOM_SAFETY_NS (10ull * 1000 * 1000)

struct bo_room_sleeper {
	struct list_node link;          /* on the device's list */
	struct list_node resv_link;     /* on resv_sleepers */
	struct ww_thread *thread;
};

/* ttm_resv_unlock()'s side; see above. */
unsigned int bo_room_resv_gen;
static unsigned int resv_waiters;
static pthread_mutex_t resv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_node resv_sleepers = { &resv_sleepers, &resv_sleepers };

TTM_EXPORT void ttm_resv_unlock(struct ttm_resv *resv)
{
	struct list_node *n;

	ww_mutex_unlock(&resv->lock);
	__atomic_fetch_add(&bo_room_resv_gen, 1, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_fetch_add(&resv_waiters, 0,
						__ATOMIC_SEQ_CST) == 0, 1))
		return;
	pthread_mutex_lock(&resv_lock);
	list_for_each(n, &resv_sleepers)
		ww_thread_wake(list_entry(n, struct bo_room_sleeper,
					  resv_link)->thread);
	pthread_mutex_unlock(&resv_lock);
}

static void resv_sleeper_add(struct bo_room_sleeper *me)
{
	pthread_mutex_lock(&resv_lock);
	list_add_tail(&me->resv_link, &resv_sleepers);
	__atomic_fetch_add(&resv_waiters, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&resv_lock);
}

static void resv_sleeper_del(struct bo_room_sleeper *me)
{
	pthread_mutex_lock(&resv_lock);
	list_del(&me->resv_link);
	__atomic_fetch_sub(&resv_waiters, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&resv_lock);
}

void bo_room_enter(struct ttm_device *dev)
{
	/*
	 * The Dekker pair of bo_room_notify()'s barrier: a sequentially
	 * consistent read-modify-write, a full barrier before the attempt's
	 * loads of the lock words.
	 */
	__atomic_fetch_add(&dev->room_waiters, 1, __ATOMIC_SEQ_CST);
#ifndef TTM_TSAN
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void bo_room_leave(struct ttm_device *dev)
{
	__atomic_fetch_sub(&dev->room_waiters, 1, __ATOMIC_RELEASE);
}

void bo_room_changed_locked(struct ttm_device *dev)
{
	struct list_node *n;

	__atomic_store_n(&dev->room_gen, dev->room_gen + 1, __ATOMIC_RELEASE);
	list_for_each(n, &dev->room_sleepers)
		ww_thread_wake(list_entry(n, struct bo_room_sleeper, link)
				       ->thread);
	/* ttm_device_evict_all() still sleeps on the condition. */
	pthread_cond_broadcast(&dev->changed);
}

void bo_room_notify_slow(struct ttm_device *dev)
{
	pthread_mutex_lock(&dev->lock);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
}

void bo_resv_unlock(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;

	ww_mutex_unlock(&bo->resv->lock);
	bo_room_notify(dev);
}

int bo_room_sleep(struct ttm_device *dev, unsigned int gen,
		  bool interruptible)
{
	struct ww_thread *self = ww_thread_self();
	struct bo_room_sleeper me = { .thread = self };
	uint64_t timeout = ROOM_SAFETY_NS;
	struct timespec deadline;
	bool woken = true;
	uint32_t seq;

	resv_sleeper_add(&me);
	pthread_mutex_lock(&dev->lock);
	if (bo_room_gen(dev) != gen) {
		pthread_mutex_unlock(&dev->lock);
		resv_sleeper_del(&me);
		return 0;
	}
	list_add_tail(&me.link, &dev->room_sleepers);
	seq = ww_thread_seq(self);
	pthread_mutex_unlock(&dev->lock);
	/* After the sequence: an interrupt from now on wakes the park. */
	if (interruptible && ww_thread_take_interrupt(self)) {
		pthread_mutex_lock(&dev->lock);
		list_del(&me.link);
		pthread_mutex_unlock(&dev->lock);
		resv_sleeper_del(&me);
		return -EINTR;
	}
	if (ttmsim_test_bo_room_sleep)
		ttmsim_test_bo_room_sleep(dev, &timeout);
	deadline = mono_deadline_in(timeout);
	/* A stray wake-up of the futex only makes the caller look again. */
	while (woken && bo_room_gen(dev) == gen &&
	       ww_thread_seq(self) == seq)
		woken = ww_thread_park(self, seq, &deadline);
	pthread_mutex_lock(&dev->lock);
	list_del(&me.link);
	/*
	 * Counted: a timeout that made up for a lost wake-up. The room
	 * changed (the generation moved) while this sleeper was on both
	 * lists, yet no wake-up reached it (its sequence did not move).
	 * A timeout with nothing changed is only a long wait (a holder
	 * slow to unlock, a bare ww_mutex_unlock()), not counted: the count
	 * must not depend on how fast the machine is.
	 */
	if (!woken && ww_thread_seq(self) == seq && bo_room_gen(dev) != gen)
		dev->room_wait_timeouts++;
	pthread_mutex_unlock(&dev->lock);
	resv_sleeper_del(&me);
	return 0;
}
