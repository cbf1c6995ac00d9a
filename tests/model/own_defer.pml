/* SPDX-License-Identifier: MIT */
/*
 * own_defer.pml - a thread keeps the frames it removed from an index for its
 * own next allocations (src/page/alloc.c OD1-OD8), against a speculative
 * getter that may still hold one of them, and a taker (reclaim()'s steal,
 * T1-T4) that moves the thread's lists meanwhile; with the counted grace
 * periods of core/rcu.h (GC1-GC3) that let a landing skip its own wait.
 * Checked exhaustively by spin (see README.md).
 *
 * The world: NF = 2 frames, one index slot, one owner thread (the
 * invalidating thread: lpc_invalidate, then a miss), one getter, one taker.
 * At the start frame 0 is in the slot and frame 1 on the shared list.
 * tbatch is 1: a landing (OD5) moves one frame, the rest stay (OD7).
 *
 *   slot         the frame in the index slot, NONE if empty
 *   dhead, dtail the owner's deferred list (t->dfree, t->dfree_tail),
 *                linked by next[]; nd its length (t->ndfree)
 *   dcov         the owner's t->dcov: how many frames at dhead's front
 *                are covered (OD2, OD7)
 *   dgp          the owner's t->dfree_gp: the newest chain's stamp
 *   steal        the owner's t->steal
 *   in_rs[p]     process p (OWNER, GETTER, TAKER) is inside a read section
 *   begun, gdone lpc_rcu_gp_begun and lpc_rcu_gp_done (GC1, GC3)
 *   ident[f]     frame f's identity (file, index): the owner writes a new
 *                one when it reuses f (page_init_private, then the insert)
 *   where[f]     ghost: INDEX, DFREE, PENDING, PRIV (t->free), SHARED, HELD
 *   stamp[f]     ghost: the stamp OD2 gave f (rule DEFERRED-GRACE)
 *
 * Processes (steps are the labels, as in alloc.c):
 *   owner   R rounds of: in one read section (S1) remove the slot's page
 *           (B), stamp it (OD2: begun, after B) and keep it (OD1-OD2:
 *           dcov reset on an empty list, the whole list when gdone > dgp,
 *           then the chain appended BEHIND the list, dgp raised to the
 *           stamp), or put it on pending when the taker has flagged the
 *           thread; then allocate (OD3): its private list, else its
 *           deferred list's front at once when gdone > dgp (OD5 with no
 *           wait of its own; dcov = what is left), else the covered front
 *           alone when dcov > 0 (OD7: dcov - 1 left), else, an allocation
 *           that may wait (chosen freely: NOWAIT ones and OD8's borrow go
 *           on), after a grace period of its own (OD4, counted; then OD5
 *           in a new section, unless flagged), else the shared list (a
 *           NOWAIT refill, or OD8's borrow: its conditions and cap only
 *           restrict when it happens, so the model lets it happen
 *           whenever the list holds a frame); reuse the frame (new
 *           identity) and insert it.
 *   getter  R lookups: in a read section load the slot, record the frame's
 *           identity, and at the section's end assert it is unchanged
 *           (rule GRACE-PERIOD: a frame is reused only after a grace period
 *           that began after its page left the index).
 *   taker   T1 flag, T2 a grace period (counted: it covers the owner's
 *           stamps below its number), T3 move t->free to the shared list
 *           and t->dfree to pending (OD6: never to a free list), T4 clear
 *           the flag (dcov left alone, as steal_take does); then a drain
 *           of pending (PD2-PD3: its own counted
 *           grace period, then the shared list).  A thread's exit (OD6 too) is
 *           the same move without the flag.  The background reclaimer's
 *           take before it evicts (alloc.c RT1-RT4) is this taker on the
 *           blocks that hold deferred frames, moving t->dfree only: a
 *           subset of the moves checked here.
 *
 * Grace period model: the waiter takes its number (GC1: begun + 1), sees
 * each other process outside a read section at some instant after that,
 * in any order (a reader that enters after being seen is not waited for,
 * as in RCU), then raises gdone to its number if below (GC3).
 *
 * What is checked: the getter's identity assertion; DEFERRED-GRACE at OD5
 * (the moved frame's stamp is below gdone: a front taken with no wait,
 * OD7-OD8's, is covered by a completed grace period numbered after its
 * stamp); after every OD2 and OD5 (list_check), nd is the list's length,
 * dcov <= nd and the first dcov frames are covered; every move of a frame starts
 * where the ghost says it is (no frame on two lists, none handed out
 * twice); at the end every frame is in the slot or on a list.
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_OWN_NO_GRACE      OD4 skipped: the owner reuses a frame a getter
 *                         loaded before the removal (DEFERRED-GRACE, or
 *                         the getter's assertion)
 *   BUG_OD5_IGNORES_FLAG  OD5 moves while the taker owns the lists: the
 *                         move and T3 move the same chain
 *   BUG_STAMP_OLDEST      OD2 raises dgp only when dfree was empty: the
 *                         list's stamp is its oldest chain's, and a wait
 *                         that covered that chain lands a newer frame
 *                         (the getter's assertion)
 *   BUG_STAMP_EARLY       OD2's stamp loaded before the removal B: a wait
 *                         that began before the removal, and missed a
 *                         getter that entered after it, covers the frame
 *                         (the getter's assertion)
 *   BUG_FRONT_UNPASSED    OD2 marks the old list a covered front without
 *                         checking that its stamp has passed: OD3 takes
 *                         it with no wait (DEFERRED-GRACE)
 *   BUG_DCOV_NO_RESET     OD2 keeps dcov on a list the taker emptied: the
 *                         stale count covers the new chain (DEFERRED-
 *                         GRACE: a front left covered, the taker, then a
 *                         new chain)
 *   BUG_TAKE_KEEPS_DCOV   OD7 does not count the moved frame out of dcov:
 *                         the front claims an uncovered frame (list_check)
 *
 * Not a bug, found here: T3 moving t->dfree straight to the shared list
 * passes too (OD1 loads the flag after the removal, so a chain pushed with
 * the flag clear was removed before T1, and T2 covers it).  alloc.c keeps
 * the move to pending anyway (OD6): it is rare, and the exit's move, which
 * has no grace period of its own, is the same code.
 */

#define NF 2
#ifndef R
#define R 2
#endif
#define NONE 255
#define OWNER 0
#define GETTER 1
#define TAKER 2
#define NP 3

#define INDEX 0
#define DFREE 1
#define PENDING 2
#define PRIV 3
#define SHARED 4
#define HELD 5

byte slot;
byte dhead;
byte dtail;
byte nd;
byte dcov;
byte dgp;
byte begun;
byte gdone;
byte stamp[NF];
byte next[NF];
bool steal;
bool in_rs[NP];
byte ident[NF];
byte where[NF];
byte done;
byte lc_h = NONE, lc_k;

/* Waits for a grace period on behalf of process `me`, counted (GC1-GC3;
 * v: the waiter's number). */
inline grace(me, s0, s1, s2, v)
{
	atomic { begun++; v = begun };					/* GC1 */
	s0 = (me == OWNER);
	s1 = (me == GETTER);
	s2 = (me == TAKER);
	do
	:: !s0 && !in_rs[OWNER] -> s0 = 1
	:: !s1 && !in_rs[GETTER] -> s1 = 1
	:: !s2 && !in_rs[TAKER] -> s2 = 1
	:: s0 && s1 && s2 -> break
	od;
	atomic { if :: gdone < v -> gdone = v :: else fi }		/* GC3 */
}

/* The invariant alloc.c OD2 states (the owner's, inside S1-S3), asserted
 * after every OD2 and OD5: nd is the list's length; while the list is not
 * empty, dcov <= nd and each of its first dcov frames has a stamp below
 * gdone (a review's addition, tests/attack_od8: without it an OD7 that
 * forgets to count dcov down, BUG_TAKE_KEEPS_DCOV, was caught only with
 * R=3). */
inline list_check()
{
	lc_h = dhead; lc_k = 0;
	do
	:: lc_h != NONE ->
		assert(where[lc_h] == DFREE);
		assert(lc_k >= dcov || stamp[lc_h] < gdone);
		lc_k++; lc_h = next[lc_h]
	:: else -> break
	od;
	assert(lc_k == nd);
	assert(dhead == NONE || dcov <= nd);
	lc_h = NONE; lc_k = 0
}

/* OD5: the deferred list's front (tbatch 1) to the owner, the rest stays
 * (OD7); avail: how many at the front are covered (nd, or dcov), dcov the
 * covered ones left.  DEFERRED-GRACE: a wait numbered above its stamp has
 * ended. */
inline own_take(f, h, avail)
{
	atomic {
		h = dhead;
		assert(h != NONE && avail > 0 && nd > 0);
		assert(where[h] == DFREE);
		assert(stamp[h] < gdone);				/* DEFERRED-GRACE */
		dhead = next[h];
		if :: dhead == NONE -> dtail = NONE :: else fi;
		nd--;
#ifdef BUG_TAKE_KEEPS_DCOV
		dcov = avail;	/* OD7 forgets the frame it moved */
#else
		dcov = avail - 1;
#endif
		where[h] = HELD;
		f = h;
		list_check();
		skip
	}
}

proctype owner()
{
	byte n, f, h, st, v;
	bool s0, s1, s2;

	n = 0;
	do
	:: n < R ->
		n++;
		/* lpc_invalidate: remove and keep, in one read section */
S1:		in_rs[OWNER] = 1;
		f = slot;
		if
		:: f != NONE ->
#ifdef BUG_STAMP_EARLY
			st = begun;
#endif
B:			atomic { slot = NONE; assert(where[f] == INDEX); where[f] = HELD };
#ifndef BUG_STAMP_EARLY
			st = begun;					/* OD2's stamp */
#endif
			if
			:: !steal ->					/* OD1 */
OD2:				atomic {	/* the covered front (dcov) */
					if
#ifndef BUG_DCOV_NO_RESET
					:: dhead == NONE -> dcov = 0
#endif
#ifdef BUG_FRONT_UNPASSED
					:: dhead != NONE -> dcov = nd
#else
					:: dhead != NONE && gdone > dgp -> dcov = nd
#endif
					:: else
					fi
				};
				next[f] = NONE;
				atomic {	/* behind the list */
					if
					:: dhead == NONE -> dhead = f
					:: else -> next[dtail] = f
					fi;
					dtail = f;
#ifdef BUG_STAMP_OLDEST
					if :: next[f] == NONE && dhead == f -> dgp = st :: else fi;
#else
					if :: st > dgp -> dgp = st :: else fi;
#endif
					nd++; where[f] = DFREE; stamp[f] = st;
					list_check();
					skip
				}
			:: else ->					/* PD1 */
				atomic { assert(where[f] == HELD); where[f] = PENDING }
			fi
		:: else
		fi;
S3:		in_rs[OWNER] = 0;
		/* the next miss: lpc_page_alloc_frame */
		f = NONE;
		do
		:: f != NONE -> break
		:: else ->
			in_rs[OWNER] = 1;
			if
			:: !steal ->
				if
				:: where[0] == PRIV -> atomic { f = 0; where[0] = HELD }
				:: where[1] == PRIV -> atomic { f = 1; where[1] = HELD }
				:: else -> if
					:: dhead != NONE && gdone > dgp ->	/* OD3, covered */
						own_take(f, h, nd)
					:: dhead != NONE && gdone <= dgp && dcov > 0 ->
						/* OD3, the front: min(dcov, nd) as the C */
						if
						:: dcov < nd -> own_take(f, h, dcov)
						:: else -> own_take(f, h, nd)
						fi
					:: dhead != NONE && gdone <= dgp && dcov == 0 ->
						/* OD3, may wait (else OD8) */
						in_rs[OWNER] = 0;
#ifndef BUG_OWN_NO_GRACE
OD4:						grace(OWNER, s0, s1, s2, v);
#endif
OD5:						in_rs[OWNER] = 1;
#ifndef BUG_OD5_IGNORES_FLAG
						if
						:: steal -> goto out	/* the taker moves it */
						:: else
						fi;
#endif
						if
						:: dhead != NONE -> own_take(f, h, nd)
						:: else
						fi
					:: true	/* NOWAIT, OD8's borrow, or nothing deferred */
					fi
				fi
			:: else
			fi;
			if
			:: f == NONE ->	/* the shared list (free_lock) */
				atomic {
					if
					:: where[0] == SHARED -> f = 0; where[0] = HELD
					:: where[1] == SHARED -> f = 1; where[1] = HELD
					:: else
					fi
				}
			:: else
			fi;
out:			in_rs[OWNER] = 0
		od;
		/* reuse: a new identity, then the insert (the miss's M3) */
		ident[f] = ident[f] + 1;
		atomic { assert(where[f] == HELD && slot == NONE); slot = f; where[f] = INDEX };
		d_step { f = NONE; h = NONE; st = 0; v = 0; s0 = 0; s1 = 0; s2 = 0 }
	:: else -> break
	od;
	done++
}

proctype getter()
{
	byte n, p, id;

	n = 0;
	do
	:: n < R ->
		n++;
		in_rs[GETTER] = 1;
		p = slot;
		if
		:: p != NONE ->
			id = ident[p];
			/* ... R3, R4, the copy: still in the section ... */
			assert(ident[p] == id)			/* GRACE-PERIOD */
		:: else
		fi;
		in_rs[GETTER] = 0;
		d_step { p = NONE; id = 0 }
	:: else -> break
	od;
	done++
}

proctype taker()
{
	byte f, h, g, v;
	bool s0, s1, s2;

T1:	steal = 1;
T2:	grace(TAKER, s0, s1, s2, v);
T3:	atomic {	/* lpc_threads_lock held; the owner is off its lists */
		f = 0;
		do
		:: f < NF ->
			if :: where[f] == PRIV -> where[f] = SHARED :: else fi;
			f++
		:: else -> break
		od;
		h = dhead;
		do
		:: h != NONE ->
			assert(where[h] == DFREE);
			where[h] = PENDING;				/* OD6 */
			g = next[h];
			h = g
		:: else -> break
		od;
		dhead = NONE;
		dtail = NONE;
		nd = 0
	};
T4:	steal = 0;
	/* the drain: PD2, its grace period, PD3 */
	grace(TAKER, s0, s1, s2, v);
	atomic {
		f = 0;
		do
		:: f < NF ->
			if :: where[f] == PENDING -> where[f] = SHARED :: else fi;
			f++
		:: else -> break
		od
	};
	done++
}

init {
	atomic {
		slot = 0;
		where[0] = INDEX;
		where[1] = SHARED;
		dhead = NONE;
		dtail = NONE;
		run owner();
		run getter();
		run taker()
	};
	(done == 3);
	/* Every frame is somewhere the lists say. */
	assert(where[0] != HELD && where[1] != HELD);
	assert(slot == NONE || where[slot] == INDEX)
}
