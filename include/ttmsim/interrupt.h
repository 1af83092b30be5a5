/* SPDX-License-Identifier: MIT */
/*
 * Interrupting waits: ttmsim's stand-in for a pending signal.
 *
 * Userspace threads cannot be signalled out of a ttmsim wait the way a
 * kernel task is, so interruptible waits (ww_mutex_lock_interruptible() and
 * every other *_interruptible wait in ttmsim) watch a per-thread "interrupt
 * pending" flag instead.
 *
 * A thread that may have to be interrupted takes a token for itself with
 * ttm_interrupt_self() and hands it to whoever will interrupt it (a
 * watchdog, a signal-forwarding thread, a driver's file release), as the
 * kernel signals a task through its task_struct. Taking the token sets up
 * everything the thread's waits need, so an interrupt can never miss them
 * for lack of memory; the token outlives the thread, and interrupting a
 * thread that has exited returns -ESRCH, as signalling an exited task
 * does.
 */
#ifndef TTMSIM_INTERRUPT_H
#define TTMSIM_INTERRUPT_H

#include <pthread.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_interrupt_token;

/**
 * ttm_interrupt_self() - a token by which other threads interrupt the
 * calling thread.
 * @ret_token: the token, with a reference for the caller.
 *
 * Sets up the calling thread's wait state now, if it has none yet, so that
 * none of its later waits allocates anything and every interruptible one
 * can be interrupted. Calling it again in the same thread returns the same
 * token with another reference. The token stays valid after the thread
 * exits (until its last ttm_interrupt_token_put()): ttm_interrupt() then
 * returns -ESRCH, even if a new thread took over the same pthread_t.
 *
 * Context: Does not sleep. Takes and releases the thread registry lock, so
 * not from a signal handler.
 * Return: 0 and *@ret_token; -ENOMEM, also for a thread whose wait state
 * could not be allocated earlier (it shares a fallback state and cannot
 * be interrupted, then or ever).
 */
int ttm_interrupt_self(struct ttm_interrupt_token **ret_token);

/**
 * ttm_interrupt_token_get() - take another reference to @token.
 * @token: a token the caller holds a reference to, or NULL.
 *
 * Context: Does not sleep.
 * Return: @token.
 */
struct ttm_interrupt_token *
ttm_interrupt_token_get(struct ttm_interrupt_token *token);

/**
 * ttm_interrupt_token_put() - drop a reference; the last one frees @token.
 * @token: the token, or NULL.
 *
 * Context: Does not sleep. Any thread, before or after the token's thread
 * exits.
 */
void ttm_interrupt_token_put(struct ttm_interrupt_token *token);

/**
 * ttm_interrupt() - post an interrupt to the thread of @token.
 * @token: from ttm_interrupt_self(); the caller holds a reference.
 *
 * Like a pending signal: the thread's current interruptible wait in
 * ttmsim, or its next one, returns -EINTR promptly without the resource
 * and consumes the interrupt. Non-interruptible waits ignore it. Posting
 * twice before it is consumed is the same as posting once. An interrupt
 * still pending when the thread exits dies with it.
 *
 * Context: Does not sleep. Takes and releases the thread registry lock, so
 * not from a signal handler. Any thread, the token's own included.
 * Return: 0, or -ESRCH if the token's thread has exited.
 */
int ttm_interrupt(struct ttm_interrupt_token *token);

/**
 * ttm_interrupt_thread() - post an interrupt to @thread, by its pthread_t.
 * @thread: the thread to interrupt.
 *
 * As ttm_interrupt(), for a thread known only by its pthread_t. Only a
 * thread that has wait state of its own can be found: one that took a
 * token, or already used ttmsim's locks or waits. A pthread_t may be
 * reused as soon as its thread is joined, so an interrupt meant for an
 * exited thread may reach a new one: give threads tokens instead
 * (ttm_interrupt_self()).
 *
 * Context: Does not sleep. Takes and releases the thread registry lock, so
 * not from a signal handler. Any thread.
 * Return: 0, or -ESRCH if no live thread with wait state of its own is
 * @thread (it exited, has not used ttmsim yet, or runs on the fallback
 * state of an allocation failure).
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
