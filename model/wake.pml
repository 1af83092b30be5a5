/* SPDX-License-Identifier: MIT */
/*
 * A Promela model of the futex claim protocol of include/ww/thread.h
 * (ww_thread_park_arm(), ww_thread_park() in ww/thread.c,
 * ww_thread_wake_prepare(), ww_thread_wake_claim(), ww_thread_wake_commit()):
 * a sleeper waits for two conditions in turn, set by waker A and by wakers
 * B and C; any waker may be delayed anywhere between its increment and its
 * claim; the futex may return on its own (a timeout, a signal) up to
 * SPURIOUS times. The sleeper must never stay asleep once every waker is
 * done (spin: invalid end state = a lost wake-up). model/README.md says
 * how to run it; model/meson.build runs it.
 *
 * Spin interleaves atomic steps: sequentially consistent, i.e. with the
 * two full fences of the C (park_arm's, wake_claim's) in place; the kernel's
 * futex is modelled as its guarantee: FUTEX_WAIT compares and queues in
 * one step, FUTEX_WAKE dequeues whoever is queued at that moment.
 *
 * Build-time parameters (spin -D...):
 *   SPURIOUS        the futex may return without a wake (bound: 2 times)
 *   BUG_CLAIM_ANY   seeded bug: a waker claims any park, not only one on a
 *                   sequence up to its own (the code before the fix)
 *   BUG_ARM_ONCE    seeded bug: the sleeper sets parked for its first park
 *                   only, not again when it parks after a return
 */

byte seq;               /* ww_thread::wake_seq */
bool parked;            /* ww_thread::parked & WW_PARKED */
byte parked_seq;        /* its low 32 bits */
bool queued;            /* the sleeper is in the kernel's futex queue */
bool cond[2];           /* what the sleeper waits for, in turn */

#ifdef SPURIOUS
byte spurious = 2;
#else
byte spurious = 0;
#endif

/* ww_thread_wake_prepare() then ww_thread_wake_commit(). */
inline wake(c, old, claimed)
{
	atomic { cond[c] = 1; old = seq; seq++ };      /* condition, then the bump */
	/* any delay here: other processes interleave */
	atomic {                                       /* ww_thread_wake_claim() */
#ifdef BUG_CLAIM_ANY
		claimed = parked;
#else
		claimed = parked && parked_seq <= old;
#endif
		if
		:: claimed -> parked = 0
		:: else
		fi
	};
	if
	:: claimed -> queued = 0                       /* FUTEX_WAKE */
	:: else
	fi
}

active proctype waker_a()
{
	byte old; bool claimed;
	wake(0, old, claimed)
}

/* Two wakers of the second condition: only the first claim wakes. */
active [2] proctype waker_bc()
{
	byte old; bool claimed;
	wake(1, old, claimed)
}

active proctype sleeper()
{
	byte c = 0, s;
	bool armed = 0;

	do
	:: c == 2 -> break
	:: else ->
		s = seq;                               /* ww_thread_seq() */
		if
		:: cond[c] -> c++
		:: else ->
#ifdef BUG_ARM_ONCE
			if
			:: !armed -> atomic { parked = 1; parked_seq = s }
			:: else
			fi;
#else
			atomic { parked = 1; parked_seq = s }  /* ww_thread_park_arm() */
#endif
			armed = 1;
			atomic {                       /* FUTEX_WAIT: compare, queue */
				if
				:: seq == s -> queued = 1
				:: else
				fi
			};
			if
			:: !queued                     /* woken, or never queued */
			:: spurious > 0 && queued ->   /* timeout, signal */
				atomic { queued = 0; spurious-- }
			fi;
			parked = 0                     /* ww_thread_park() returns */
		fi
	od;
	assert(cond[0] && cond[1])
}
