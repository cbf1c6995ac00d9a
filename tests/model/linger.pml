/* SPDX-License-Identifier: MIT */
/*
 * linger.pml - the background reclaimer's sleep, linger and drain
 * (reclaim/reclaimer.c RL1-RL4, the `awake` handshake, lpc_reclaim_wake,
 * lpc_reclaim_linger, lpc_reclaim_stop, lpc_reclaim_retire) against
 * threads that free frames onto pending and kick it (page/alloc.c
 * free_deferred and lpc_page_pending_kick: lpc_invalidate, a shrinking
 * lpc_truncate, a last put, file.c file_free) and against
 * lpc_cache_destroy (a stop, the closes' frees, the retire, a late kick
 * during the RCU barrier, then the pool is freed).  Checked exhaustively
 * by spin; the broken variants (-DBUG_*) must be caught.
 *
 * The world: the free list stays above `low` and `high` (a quiet cache:
 * nothing to evict, only pending to drain).  Two kickers do ROUNDS frees
 * each, every one a put (free_deferred: one frame pushed; the list handed
 * to call_rcu when it reaches FREE_BATCH; a kick when it was the first
 * frame on an empty list) or an invalidate (one or two frames pushed as a
 * chain, then a kick).  The kick (lpc_page_pending_kick): FREE_BATCH or
 * more pending is a wake (lpc_reclaim_wake: `awake`, r->kick, a refill),
 * fewer a linger (lpc_reclaim_linger: `lingering`, no r->kick).  The
 * thread's batch (r->batch) is RBATCH: a list of RBATCH or more at RL1 is
 * a refill's (it sets `awake` and drains), shorter lingers (RL2), empty
 * sleeps with no timeout.
 *   npending     frames on pending (PD1 pushes under free_lock: atomic
 *                here; a drain, PD2, takes them all)
 *   awake, lingering  the two flags (relaxed atomics in C; the seq_cst
 *                fences of RL1 and of the kick make the store-load pairs
 *                that matter sequentially consistent, which Promela is)
 *   mtx          r->lock; kick, stop, started, retired its fields
 *   asleep       the thread waits on r->cond and no signal reached it (a
 *                signal with nobody asleep is lost); untimed: that wait
 *                has no timeout; a timed wait can end at any time
 *   nthreads     reclaimer threads alive (joined by stop)
 * Properties:
 *   no lost kick: once the kickers are done (and before destroy), the
 *     thread is never asleep with no timeout, nor unstarted, while frames
 *     wait on pending (assert in checker: the state is for ever, nothing
 *     else would move them: F.1's frames_free, lpc_invalidate(3));
 *   no start after retire: no reclaimer thread touches the pool after
 *     destroy freed it (assert at each of its steps that reads it), so no
 *     kick after lpc_reclaim_retire may start one (rule RECLAIM-RETIRED in
 *     C);
 *   every process ends, the thread asleep with no timeout and nothing
 *     pending being a valid end.
 * Broken variants:
 *   BUG_CLEAR_AFTER_LOAD  RL1 loads pending before it clears `awake` and
 *                 `lingering`: a put whose kick saw `lingering` still set
 *                 from the linger before is covered by no RL1 (it sleeps
 *                 with no timeout over the frame)
 *   BUG_NO_RL4    after RL3's drain the thread sleeps with no timeout
 *                 instead of going back to RL1: a kick that saw
 *                 `lingering` during the drain is lost
 *   BUG_PUT_NO_KICK  free_deferred never kicks (before e35b627: the last
 *                 put of a page held across a truncate left its frame on
 *                 pending for ever)
 *   BUG_KICK_NO_SIGNAL  a linger kick that wins the exchange of
 *                 `lingering` signals nobody (as if `lingering` meant the
 *                 thread already lingers: one asleep with no timeout stays)
 *   BUG_START_AFTER_RETIRE  start_locked ignores r->retired (destroy's
 *                 plain second stop of before 02f26f1): a kick during the
 *                 RCU barrier starts a thread over a pool about to go
 */
#define NK 2
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define RBATCH 2     /* r->batch */
#define FREE_BATCH 3 /* LPC_FREE_BATCH: call_rcu's batch, the kick's wake */

byte npending;
bool awake, lingering;
bool mtx, kick, stop, started, retired;
bool asleep, untimed;
byte nthreads;
byte kdone;          /* kickers done */
bool checked;        /* the lost-kick check was made */
bool pool_freed;

inline lock()
{
	atomic { !mtx -> mtx = true }
}

inline unlock()
{
	mtx = false
}

inline signal()
{
	asleep = false
}

/* RL2-RL3's timed wait and RL2's plain one: unlock and sleep in one step
 * (pthread_cond_wait), then take the lock again once signalled (or, timed,
 * when the time runs out: to_). */
inline cond_wait()
{
	atomic { asleep = true; untimed = true; mtx = false };
end_sleep:
	(!asleep);
	atomic { untimed = false };
	lock()
}

inline cond_timedwait(to_)
{
	atomic { asleep = true; mtx = false };
	if
	:: atomic { !asleep -> to_ = false }
	:: atomic { asleep -> asleep = false; to_ = true }	/* ETIMEDOUT */
	fi;
	lock()
}

/* lpc_page_pending_drain: PD2 takes pending whole (its grace period and
 * frees of the frames are not modelled). */
inline drain()
{
	atomic { assert(!pool_freed); npending = 0 }
}

proctype reclaimer()
{
	byte pend;
	bool to, r, cont;

	lock();
	do
	:: stop -> break
	:: else ->
		cont = false;
		if
		:: !kick ->
#ifndef BUG_CLEAR_AFTER_LOAD
			awake = false;					/* RL1 */
			lingering = false;
			/* seq_cst fence */
			atomic { assert(!pool_freed); pend = npending };
#else
			atomic { assert(!pool_freed); pend = npending };
			awake = false;
			lingering = false;
#endif
			if
			:: pend < RBATCH && pend == 0 ->
				cond_wait();
				cont = true
			:: pend < RBATCH && pend > 0 ->		/* RL2 */
				lingering = true;
				/* linger_wait */
				r = false;
				do
				:: stop || kick -> r = true; break
				:: else ->
					cond_timedwait(to);
					if
					:: to -> r = stop || kick; break
					:: else -> skip
					fi
				od;
				if
				:: !r ->
					unlock();
					drain();			/* RL3 */
					lock()
#ifdef BUG_NO_RL4
					; if
					:: !stop ->
						atomic { asleep = true; untimed = true; mtx = false };
end_sleep_bug:
						(!asleep);
						atomic { untimed = false };
						lock()
					:: else -> skip
					fi
#endif
				:: else -> skip
				fi;
				cont = true				/* RL4 */
			:: else -> awake = true
			fi
		:: else -> skip
		fi;
		if
		:: cont -> skip
		:: else ->
			kick = false;
			unlock();
			/* refill: nothing to evict; a drain per turn while a
			 * batch waits, stopped when `awake` is cleared */
			do
			:: !awake -> break
			:: else ->
				assert(!pool_freed);
				if
				:: npending < RBATCH -> break
				:: else -> drain()
				fi
			od;
			lock()
		fi
	od;
	unlock();
	nthreads--
}

/* start_locked.  Context: mtx held. */
inline start_locked()
{
#ifndef BUG_START_AFTER_RETIRE
	if
	:: !started && !stop && !retired ->
#else
	if
	:: !started && !stop ->
#endif
		started = true;
		nthreads++;
		run reclaimer()
	:: else -> skip
	fi
}

/* lpc_reclaim_wake */
inline wake()
{
	if
	:: awake -> skip
	:: else ->
		atomic { old = awake; awake = true };
		if
		:: old -> skip
		:: else ->
			lock();
			start_locked();
			kick = true;
			signal();
			unlock()
		fi
	fi
}

/* lpc_reclaim_linger */
inline linger()
{
	if
	:: awake -> skip
	:: else ->
		if
		:: lingering -> skip
		:: else ->
			atomic { old = lingering; lingering = true };
			if
			:: old -> skip
			:: else ->
				lock();
				start_locked();
#ifndef BUG_KICK_NO_SIGNAL
				signal();
#endif
				unlock()
			fi
		fi
	fi
}

/* lpc_page_pending_kick: after the frees, a seq_cst fence, then pending */
inline pending_kick()
{
	n = npending;
	if
	:: n >= FREE_BATCH -> wake()
	:: n > 0 && n < FREE_BATCH -> linger()
	:: else -> skip
	fi
}

/* free_deferred(p, submit): a last put of a page out of its index */
inline put_one()
{
	atomic {						/* PD1 */
		npending++;
		n = npending;
		if
		:: n >= FREE_BATCH -> npending = 0 /* to call_rcu */
		:: else -> skip
		fi
	};
#ifndef BUG_PUT_NO_KICK
	if
	:: n == 1 -> pending_kick()
	:: else -> skip
	fi
#endif
}

/* lpc_invalidate, lpc_truncate, file_free: a chain, then the kick */
inline free_chain(m)
{
	atomic { npending = npending + m };			/* PD1 */
	pending_kick()
}

proctype kicker()
{
	byte i, n;
	bool old;

	do
	:: i < ROUNDS ->
		if
		:: put_one()
		:: free_chain(1)
		:: free_chain(2)
		fi;
		i++
	:: else -> break
	od;
	kdone++
}

/* lpc_reclaim_stop */
inline rstop()
{
	lock();
	s0 = started;
	stop = true;
	awake = false;
	signal();
	unlock();
	if
	:: s0 -> (nthreads == 0) /* pthread_join */
	:: else -> skip
	fi;
	lock();
	started = false;
	stop = false;
	kick = false;
	awake = false;
	lingering = false;
	unlock()
}

/* The kicks of destroy's RCU barrier (file_free's, or a put's), after the
 * closes and concurrent with the retire. */
proctype late()
{
	byte n;
	bool old;

	free_chain(1);
	kdone++
}

/* No lost kick: the kickers done, the thread can no longer be woken by
 * anyone before destroy; asleep with no timeout or not started, it leaves
 * pending as it is for ever. */
active proctype checker()
{
	kdone == NK;
	atomic {
		(!started || (asleep && untimed)) ->
		assert(npending == 0);
		checked = true
	}
}

active proctype destroy()
{
	byte n;
	bool old, s0;

	checked;
	rstop();						/* lpc_reclaim_stop */
	free_chain(1);						/* a close */
	run late();
	lock();							/* lpc_reclaim_retire */
	retired = true;
	unlock();
	rstop();
	(kdone == NK + 1);					/* the RCU barrier */
	pool_freed = true
}

init
{
	atomic {
		run kicker();
		run kicker()
	}
}
