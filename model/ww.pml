/* SPDX-License-Identifier: MIT */
/*
 * A Promela model of the ww_mutex lock protocol as implemented in ww/
 * (ww/ww_mutex.c, ww/lock_slow.c, ww/waitq.c, include/ww/lockword.h).
 * model/README.md says what is modelled, what is abstracted away and why,
 * the bounds, and how to run it. Every step names the C it models.
 *
 * Build-time parameters (spin -D...):
 *   WAIT_DIE        Wait-Die class; default Wound-Wait
 *   REPEAT          the younger transactions start again forever after
 *                   they finish (for the progress check of the oldest)
 *   SPURIOUS        ww_thread_park() may return without a wake-up
 *   BUG_NO_WOUND    seeded bug: judge() never wounds (lock_slow.c:143 `wound`)
 *   BUG_NO_HANDOFF  seeded bug: the unlock slow path ignores WW_HANDOFF
 *                   (lock_slow.c:334 `WW_HANDOFF`) and always just wakes the first
 *   BUG_NO_DIE_WAKE seeded bug: wake_younger_to_die() wakes nobody
 *                   (lock_slow.c:73 `ww_thread_wake`)
 *   BUG_FAST_STORE  seeded bug: the fast path loads the word, sees it free
 *                   and stores its token, a load and a store where
 *                   ww_mutex.c:131-134 `ww_word_cas` must be one
 *                   compare-exchange: a locker in between is overwritten
 *                   (mutual exclusion, not a deadlock)
 */

#define NT 3            /* transactions; thread t has stamp t: 0 is oldest */
#define NL 3            /* locks */
#define NONE 255

#define OK 0
#define SLOW 1
#define EDEADLK 2

/* The lock word (include/ww/lockword.h): owner token, WW_WAITERS, WW_HANDOFF. */
byte owner[NL];         /* 0: free; t+1: owned by the context of thread t */
bool wbit[NL];          /* WW_WAITERS */
bool hbit[NL];          /* WW_HANDOFF */

/*
 * The per-lock wait queue (ww/waitq.c): sorted by stamp, oldest first
 * (ww_waitq_add, waitq.c:62 `ww_waitq_add`), so a bit mask over thread ids is the queue
 * and its lowest set bit is ww_waitq_first().
 */
byte q[NL];
bool granted[NT];       /* struct ww_waiter::granted */

/*
 * struct ww_thread::wake_seq: "changed since ww_thread_seq() was read".
 * Cleared where the waiter reads the sequence (lock_slow.c:237 `ww_thread_seq`), set by
 * ww_thread_wake_prepare()/ww_thread_wake(); ww_thread_park() returns
 * once it is set.
 */
bool pending[NT];

/* struct ww_acquire_ctx */
byte acquired[NT];
bool wounded[NT];

/* Ghost state for the properties. */
byte mine[NT];          /* bit l: thread t's lock call on l returned 0 */
bool done[NT];          /* thread t's transaction held all its locks */

#define BIT(x) (1 << (x))
#define QUEUED(l, u) ((q[l] >> (u)) & 1)

/* ww_waitq_first() (waitq.c:46 `ww_waitq_first`): the oldest queued context. */
#define FIRST(l) (QUEUED(l, 0) -> 0 : (QUEUED(l, 1) -> 1 : (QUEUED(l, 2) -> 2 : NONE)))

/*
 * Mutual exclusion: when t's lock call returns 0 it owns the word and no
 * other transaction believes it holds l.
 */
inline take_ghost(t, l)
{
	assert(owner[l] == t + 1);
	assert(!(mine[(t + 1) % NT] & BIT(l)) && !(mine[(t + 2) % NT] & BIT(l)));
	mine[t] = mine[t] | BIT(l)
}

/*
 * wake_younger_to_die() (lock_slow.c:65 `wake_younger_to_die`): wake every queued context
 * younger than t that holds locks.
 */
inline wake_younger_to_die(t, l, u)
{
#ifndef BUG_NO_DIE_WAKE
	u = 0;
	do
	:: u < NT ->
		if
		:: QUEUED(l, u) && u != t && acquired[u] > 0 && u > t ->  /* :69-70 */
			pending[u] = 1                                      /* :71 */
		:: else
		fi;
		u++
	:: else -> break
	od;
	u = 0
#else
	skip
#endif
}

/*
 * after_contended_acquire() (lock_slow.c:100 `after_contended_acquire`): t took l with waiters
 * queued. Wait-Die: younger holders must die. Wound-Wait: an older queued
 * holder wounds t (older_waiter(.., true), lock_slow.c:78 `older_waiter`).
 */
inline after_contended_acquire(t, l, u)
{
#ifdef WAIT_DIE
	wake_younger_to_die(t, l, u)                                /* :104 */
#else
	u = 0;
	do
	:: u < t ->
		if
		:: QUEUED(l, u) && acquired[u] > 0 -> wounded[t] = 1 /* :105-106 */
		:: else
		fi;
		u++
	:: else -> break
	od;
	u = 0
#endif
}

/*
 * judge() (lock_slow.c:118 `judge`): t must wait for l held by thread h. Sets ret
 * to EDEADLK if t must back off.
 */
inline judge(t, l, h, ret, u)
{
#ifdef WAIT_DIE
	if
	:: acquired[t] > 0 && t > h -> ret = EDEADLK               /* :127-129 */
	:: acquired[t] > 0 && t > 0 && (q[l] & (BIT(t) - 1)) ->
		ret = EDEADLK                                        /* :130-131 older_waiter */
	:: else -> wake_younger_to_die(t, l, u)                      /* :133 */
	fi
#else
	if
	:: acquired[t] == 0 -> skip                                  /* :135-136 */
	:: acquired[t] > 0 && wounded[t] -> ret = EDEADLK            /* :137-138 */
	:: acquired[t] > 0 && !wounded[t] ->
		if
		:: h > t && !wounded[h] ->                           /* :139-140 */
#ifndef BUG_NO_WOUND
			wounded[h] = 1;                              /* :141 wound(), :55 */
			pending[h] = 1                               /* :56 ww_thread_wake */
#else
			skip
#endif
		:: else
		fi
	fi
#endif
}

/*
 * settle_after_leave() (lock_slow.c:201 `settle_after_leave`): t left l's queue without it.
 */
inline settle_after_leave(l, f)
{
	f = FIRST(l);
	if
	:: f == NONE -> wbit[l] = 0; hbit[l] = 0                    /* :201-206 */
	:: f != NONE && owner[l] == 0 -> pending[f] = 1             /* :208-210 */
	:: else
	fi;
	f = 0
}

/*
 * ww_lock_slowpath() (lock_slow.c:221 `ww_lock_slowpath`) for the context of thread t on l.
 * Each pass of the loop under the bucket mutex (:227-286) is one atomic
 * step: see README.md for why that is sound.
 */
inline lock_slowpath(t, l, ret, h, f, u, act)
{
	queued = 0; slept = 0; spun = 0;
	do
	:: atomic {
		pending[t] = 0;                                     /* :229 ww_thread_seq */
		ret = OK;
		if
		:: granted[t] ->                                    /* :232-234 handed over */
			granted[t] = 0;
			acquired[t]++;                              /* ww_mutex.c:87 `acquired++` */
			take_ghost(t, l);
			act = 1
		:: !granted[t] && owner[l] == 0 ->                  /* :238 free */
			q[l] = q[l] & ~BIT(t); queued = 0;          /* :241-243 */
			f = wbit[l];
			owner[l] = t + 1;                           /* :244-245 CAS w -> token|more */
			wbit[l] = (q[l] != 0);
			hbit[l] = 0;
			if
			:: f -> after_contended_acquire(t, l, u)     /* :247-248 */
			:: else
			fi;
			f = 0;
			acquired[t]++;                              /* ww_mutex.c:87 `acquired++` */
			take_ghost(t, l);
			act = 1
		:: !granted[t] && owner[l] != 0 ->                  /* held */
			wbit[l] = 1;                                /* :256-259 */
			h = owner[l] - 1;
			judge(t, l, h, ret, u);                     /* :261-264 */
			h = 0;
			if
			:: ret == EDEADLK ->
				if
				:: queued ->                        /* :293-295 */
					q[l] = q[l] & ~BIT(t); queued = 0;
					settle_after_leave(l, f)
				:: else
				fi;
				act = 1
			:: ret != EDEADLK && !queued && !spun ->    /* :266-270 */
				spun = 1;
				act = 2
			:: ret != EDEADLK && (queued || spun) ->
				if
				:: !queued ->                       /* :277-279 ww_waitq_add */
					q[l] = q[l] | BIT(t); queued = 1
				:: queued && slept && !hbit[l] && FIRST(l) == t ->
					hbit[l] = 1                 /* :280-284 */
				:: else
				fi;
				act = 3
			fi
		fi
	   };
		if
		:: act == 1 -> act = 0; break
		:: act == 2 ->                                      /* :271-275 spin_on_owner */
			atomic {
				act = 0;
				if
				:: owner[l] == 0 && !wbit[l] && !hbit[l] ->
					owner[l] = t + 1;                   /* :164-166 */
					acquired[t]++;                      /* ww_mutex.c:87 `acquired++` */
					take_ghost(t, l);
					act = 1
				:: true                                     /* gave up: :169-184 */
				fi
			};
			if
			:: act == 1 -> act = 0; break
			:: else
			fi
		:: act == 3 ->                                      /* :286-289 */
			act = 0;
#ifdef SPURIOUS
			if
			:: pending[t]
			:: true                                     /* spurious futex return */
			fi;
#else
			pending[t];                                 /* ww_thread_park */
#endif
			slept = 1
		fi
	od;
	queued = 0; slept = 0; spun = 0
}

/*
 * lock_common() (ww_mutex.c:113 `lock_common`), ww_mutex_lock() and ww_mutex_lock_slow()
 * with a context (no injection, not interruptible).
 */
inline lock_common(t, l, ret)
{
	atomic {
		if
		:: acquired[t] == 0 -> wounded[t] = 0               /* ww_mutex.c:57-61 `forget_stale_wound` */
		:: else
		fi
	};
	atomic {
		assert(owner[l] != t + 1);                          /* ww_mutex.c:80-81: no `-EALREADY` here */
		if
		:: owner[l] == 0 && !wbit[l] && !hbit[l] ->         /* ww_mutex.c:131-134 fast CAS `ww_word_cas` */
#ifndef BUG_FAST_STORE
			owner[l] = t + 1;
			acquired[t]++;                              /* ww_mutex.c:132-133 `acquired++` */
			take_ghost(t, l);
#endif
			ret = OK
		:: else -> ret = SLOW
		fi
	};
#ifdef BUG_FAST_STORE
	/* The seeded bug: the store of the token, a step after the load saw the word free. */
	if
	:: ret == OK ->
		atomic {
			owner[l] = t + 1; wbit[l] = 0; hbit[l] = 0;
			acquired[t]++;
			take_ghost(t, l)
		}
	:: else
	fi;
#endif
	if
	:: ret == SLOW -> lock_slowpath(t, l, ret, h, f, u, act)   /* ww_mutex.c:83 `ww_lock_slowpath` */
	:: else
	fi
}

/* ww_unlock_slowpath() (lock_slow.c:324 `ww_unlock_slowpath`). */
inline unlock_slowpath(l, f)
{
	atomic {
		f = FIRST(l);                                       /* :310 */
		if
		:: f == NONE ->                                     /* :311-312 */
			owner[l] = 0; wbit[l] = 0; hbit[l] = 0
#ifndef BUG_NO_HANDOFF
		:: f != NONE && hbit[l] ->                          /* :313-318 hand over */
			q[l] = q[l] & ~BIT(f);
			granted[f] = 1;
			owner[l] = f + 1;
			wbit[l] = (q[l] != 0);
			hbit[l] = 0;
			pending[f] = 1                              /* :324 wake_prepare */
		:: f != NONE && !hbit[l] ->
#else
		:: f != NONE ->
#endif
			owner[l] = 0; wbit[l] = 1; hbit[l] = 0;     /* :319-321 */
			pending[f] = 1
		fi;
		f = 0
	}
}

/* unlock_common() (ww_mutex.c:278 `unlock_common`) by the context of thread t. */
inline unlock(t, l, f)
{
	atomic {
		assert(owner[l] == t + 1 && (mine[t] & BIT(l)));
		mine[t] = mine[t] & ~BIT(l);
		acquired[t]--;                                      /* ww_mutex.c:292-297 `ctx_released`, ww_mutex.c:252 `--ctx->acquired` */
		if
		:: !wbit[l] && !hbit[l] -> owner[l] = 0; f = 0      /* ww_mutex.c:290-295 fast CAS `__atomic_compare_exchange_n` */
		:: else -> f = 1
		fi
	};
	if
	:: f -> unlock_slowpath(l, f)                               /* ww_mutex.c:301 `ww_unlock_slowpath` */
	:: else
	fi
}

/* Unlock everything t holds, lock 0 first (as ttm_eu_backoff_reservation does, in list order). */
inline unlock_all(t, l, f)
{
	l = 0;
	do
	:: l < NL ->
		if
		:: mine[t] & BIT(l) -> unlock(t, l, f)
		:: else
		fi;
		l++
	:: else -> break
	od;
	l = 0
}

/*
 * One transaction: lock all NL locks in an order of its own (any of the
 * six; with FIXED_ORDER, t, t+1, t+2 mod NL), backing off as docs/ww-design.md and the kernel's ww_mutex
 * documentation prescribe: on -EDEADLK unlock all, ww_mutex_lock_slow()
 * the contended lock, retry the others.
 */
proctype Tx(byte t)
{
	byte i, l, ret, contended, h, f, u, act;
	byte o0, o1, o2;                    /* this transaction's lock order */
	bool queued, slept, spun;

end_again:
#ifdef FIXED_ORDER
	o0 = t; o1 = (t + 1) % NL; o2 = (t + 2) % NL;
#else
	/*
	 * Any of the 6 orders, chosen anew for each transaction; the oldest's
	 * is 0, 1, 2 without loss of generality (the locks are symmetric: any
	 * run is one of these with the locks renamed).
	 */
	if
	:: t == 0 -> o0 = 0; o1 = 1; o2 = 2
	:: t > 0 -> o0 = 0; o1 = 1; o2 = 2
	:: t > 0 -> o0 = 0; o1 = 2; o2 = 1
	:: t > 0 -> o0 = 1; o1 = 0; o2 = 2
	:: t > 0 -> o0 = 1; o1 = 2; o2 = 0
	:: t > 0 -> o0 = 2; o1 = 0; o2 = 1
	:: t > 0 -> o0 = 2; o1 = 1; o2 = 0
	fi;
#endif
	contended = NONE;                   /* ww_acquire_init(): new ctx, acquired 0 */
retry:
	i = 0;
	do
	:: i < NL ->
		l = (i == 0 -> o0 : (i == 1 -> o1 : o2));
		if
		:: l == contended -> skip   /* already held via the slow lock */
		:: else ->
			lock_common(t, l, ret);     /* ww_mutex_lock() */
			if
			:: ret == EDEADLK ->
				contended = l;          /* ww_mutex.c:88-89 `contending_lock` */
				unlock_all(t, l, f);
				l = contended;
				assert(acquired[t] == 0);
				lock_common(t, l, ret); /* ww_mutex_lock_slow() */
				assert(ret == OK);
				goto retry
			:: else
			fi
		fi;
		i++
	:: else -> break
	od;
	assert(mine[t] == BIT(NL) - 1 && acquired[t] == NL);
	done[t] = 1;
	unlock_all(t, l, f);
	i = 0; ret = 0; h = 0;              /* ww_acquire_fini() */
	o0 = 0; o1 = 0; o2 = 0;
#ifdef REPEAT
	if
	:: t > 0 -> goto end_again      /* a younger transaction, same stamp order */
	:: else
	fi
#endif
}

init
{
	atomic {
		run Tx(0);
		run Tx(1);
		run Tx(2)
	}
}

/* Progress of the oldest: it eventually holds all its locks. */
ltl oldest { <> done[0] }
