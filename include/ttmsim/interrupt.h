/* SPDX-License-Identifier: MIT */
/*
 * Interrupting waits: ttmsim's stand-in for a pending signal.
 *
 * Userspace threads cannot be signalled out of a ttmsim wait the way a
 * kernel task is, so interruptible waits (ww_mutex_lock_interruptible() and
 * every other *_interruptible wait in ttmsim) watch a per-thread "interrupt
 * pending" flag instead.
 */
#ifndef TTMSIM_INTERRUPT_H
#define TTMSIM_INTERRUPT_H

#include <pthread.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ttm_interrupt_thread() - post an interrupt to @thread.
 * @thread: the thread to interrupt.
 *
 * Like a pending signal: @thread's current interruptible wait in ttmsim, or
 * its next one, returns -EINTR promptly without the resource and consumes
 * the interrupt. Non-interruptible waits ignore it. Posting twice before it
 * is consumed is the same as posting once. @thread must be a live thread of
 * this process; it need not have used ttmsim yet.
 *
 * Context: Does not sleep. Takes and releases the thread registry lock, so
 * not from a signal handler. Any thread.
 * Return: 0, or -ENOMEM.
 */
int ttm_interrupt_thread(pthread_t thread);

/**
 * ttm_interrupt_clear() - drop an interrupt pending for the calling thread.
 *
 * Context: Does not sleep.
 * Return: true if one was pending.
 */
bool ttm_interrupt_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_INTERRUPT_H */
