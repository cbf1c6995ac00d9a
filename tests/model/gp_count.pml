/* SPDX-License-Identifier: MIT */
/*
 * gp_count.pml - the counted grace periods of src/core/rcu.h alone (GC1-GC3:
 * lpc_rcu_synchronize counts the waits it begins in lpc_rcu_gp_begun and
 * those that returned in lpc_rcu_gp_done; lpc_rcu_gp_stamp and
 * lpc_rcu_gp_passed let a remover reuse what it removed once a wait another
 * thread paid, begun after its stamp, has completed: page/alloc.c OD2-OD5).
 * Checked exhaustively by spin (see README.md).
 *
 * own_defer.pml checks OD1-OD7 on these counters in a world with no wait
 * in flight when another completes; this model is the counters with waits
 * that overlap and complete out of order, which is what GC3's "the highest
 * number whose wait has returned" is about (the gap tests/attack_gp/ found:
 * own_defer.pml accepts a GC3 that counts a wait not yet ended).
 *
 * The world: ROUNDS objects, one index slot (object 0 in it at the start),
 * NR readers, NW waiters of WAITS counted waits each (NW * WAITS <= 8: one
 * bit of `ended` each), one remover.
 *
 *   slot       the object in the index slot, NONE if empty
 *   begun      lpc_rcu_gp_begun (GC1)
 *   gdone      lpc_rcu_gp_done (GC3)
 *   in_rs[r]   reader r is inside a read section
 *   freed[o]   ghost: the remover freed (reused) object o
 *   ended      ghost: bit v - 1 set once the wait numbered v has returned
 *
 * Processes:
 *   reader   RS read sections: enter (urcu_memb_read_lock), load the slot,
 *            and, still inside, assert that what it loaded is not freed;
 *            leave.  The assertion is the safety property: nothing is
 *            freed while a reader that found it (so began before its
 *            removal, before its stamp) still holds it.
 *   waiter   WAITS times lpc_rcu_synchronize: GC1 its number (begun + 1,
 *            one atomic RMW), GC2 the wait: each reader seen outside a read
 *            section at some instant after GC1, in any order (a reader
 *            that enters after it was seen is not waited for, as in RCU),
 *            GC3 done raised to its number as rcu.h does it: a load, then
 *            a CAS to the max retried while done is below (waits of two
 *            waiters complete in either order).
 *   remover  ROUNDS times: removes the slot's object (B: the slot takes the
 *            next object, or NONE after the last), then stamps it
 *            (lpc_rcu_gp_stamp: a load of begun after the removal; the
 *            seq_cst fence before it is what makes the load come after the
 *            removal here, where every step is sequentially consistent).
 *            In between, and after, it frees the oldest removed object
 *            whose stamp lpc_rcu_gp_passed (done > stamp), or stops.  It
 *            never waits itself: every landing here is covered by a
 *            waiter's wait (OD3's shortcut), the case the counters decide.
 *
 * What is checked: the reader's assertion (GRACE-PERIOD above), and GC3's
 * meaning at every CAS that raises done: the number it stores is that of a
 * wait that has returned (the ghost `ended`; -DNO_DONE_RULE leaves it out,
 * so that the GC3 variants below show the reader's assertion fails too).
 *
 * Broken variants (spin -DBUG_...), each must make an assertion fail:
 *   BUG_DONE_BEGUN   GC3 raises done to begun read at its end, not to its
 *                    own number: a wait that began later, after a stamp,
 *                    and has not ended is counted (needs two waiters: with
 *                    -DNW=1 it passes, as in own_defer.pml's world)
 *   BUG_GC3_EARLY    GC3 before GC2: done counts this wait before it ends
 *   BUG_GC1_LATE     GC1 after GC2: the number is taken after the wait, so
 *                    a wait that began before the removal counts as begun
 *                    after the stamp
 *   BUG_PASSED_LE    lpc_rcu_gp_passed off by one (done >= stamp): the
 *                    wait numbered == stamp, begun before the stamp's load
 *                    and maybe before the removal, counts
 *   BUG_PASSED_TRUE  lpc_rcu_gp_passed always true: no grace period
 *   BUG_STAMP_EARLY  the stamp loaded before the removal B: a wait that
 *                    began between the load and the removal, and missed a
 *                    reader that entered after it, counts
 * and one that shows the model is not vacuous:
 *   REACH_FREE       asserts that no free happens while reader 0 is inside
 *                    a read section (one that found nothing, or began after
 *                    the wait's start): must fail, i.e. the remover frees
 *                    concurrently with readers, on others' waits.
 *
 * Not a bug, found here: GC3 as a plain store of the wait's number, or a
 * load then a store if below (no CAS), passes too: done may go down, but it
 * is always the number of some wait that has returned, so a passed() that
 * reads it is still right; a later passed() may miss a wait that covered
 * its stamp (a landing waits needlessly).  The CAS to the max is for
 * progress, not safety.
 *
 * Not modelled: the seq_cst fence of lpc_rcu_gp_stamp and the orders of
 * GC1/GC3 (sequential consistency; argued in rcu.h); urcu's batching of
 * concurrent synchronize_rcu callers (each caller's wait still starts after
 * its GC1: the waiter's GC2 is any such wait); a weak CAS's spurious failure
 * (a retry, as a failure with done unchanged).
 */

#ifndef NR
#define NR 1
#endif
#ifndef RS
#define RS 2
#endif
#ifndef NW
#define NW 2
#endif
#ifndef WAITS
#define WAITS 1
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define NONE 255

byte slot;
byte begun;
byte gdone;
bool in_rs[NR];
bool freed[ROUNDS];
byte ended;			/* ghost: bit v-1 set once wait v has returned */
byte done;

proctype reader(byte r)
{
	byte n, p;

	n = 0;
	do
	:: n < RS ->
		n++;
		in_rs[r] = 1;					/* read lock */
		p = slot;
		if
		:: p != NONE ->
			/* ... the object used, still in the section ... */
			assert(!freed[p])			/* GRACE-PERIOD */
		:: else
		fi;
		in_rs[r] = 0;					/* read unlock */
		p = 0
	:: else -> break
	od;
	done++
}

/* GC2: each reader seen outside a read section at an instant after GC1, in
 * any order (seen: a bit per reader).  One step looks at every reader at
 * one instant and may mark any of those outside: a wait that sees them at
 * distinct instants is a sequence of such steps, one reader each. */
inline gc2_wait(seen, r)
{
	seen = 0;
	do
	:: seen == (1 << NR) - 1 -> break
	:: else ->
		atomic {
			r = 0;
			do
			:: r < NR ->
				if
				:: (seen & (1 << r)) == 0 && !in_rs[r] ->
					seen = seen | (1 << r)
				:: true
				fi;
				r++
			:: else -> break
			od;
			r = 0
		}
	od
}

/* GC3: done = max(done, v): a relaxed load, then a CAS retried while done
 * is below v (a failed CAS reloads done). */
inline gc3_raise(v, ld)
{
#ifdef BUG_DONE_BEGUN
	v = begun;
#endif
	ld = gdone;
	do
	:: ld >= v -> break
	:: else ->
		atomic {
			if
			:: gdone == ld ->
				gdone = v;
				ld = v;
#ifndef NO_DONE_RULE
				/* GC3: done is a wait that has returned */
				assert(v >= 1 && (ended & (1 << (v - 1))))
#else
				skip
#endif
			:: else -> ld = gdone
			fi
		}
	od;
	ld = 0
}

/* lpc_rcu_synchronize; v: the wait's number (gp) */
inline synchronize(v, seen, r, ld)
{
#if !defined(BUG_GC1_LATE)
	atomic { begun++; v = begun };				/* GC1 */
#endif
#ifdef BUG_GC3_EARLY
	gc3_raise(v, ld);
#endif
	gc2_wait(seen, r);					/* GC2 */
#ifdef BUG_GC1_LATE
	atomic { begun++; v = begun };
#endif
	ended = ended | (1 << (v - 1));		/* ghost: wait v returned */
#ifndef BUG_GC3_EARLY
	gc3_raise(v, ld);					/* GC3 */
#endif
	v = 0
}

proctype waiter()
{
	byte n, v, seen, r, ld;

	n = 0;
	do
	:: n < WAITS -> n++; synchronize(v, seen, r, ld)
	:: else -> break
	od;
	done++
}

/* lpc_rcu_gp_passed(stamp) */
#if defined(BUG_PASSED_TRUE)
#define PASSED(s)	true
#elif defined(BUG_PASSED_LE)
#define PASSED(s)	(gdone >= (s))
#else
#define PASSED(s)	(gdone > (s))
#endif

proctype remover()
{
	byte k, j;			/* k removed so far, j freed so far */
	byte st[ROUNDS];		/* each object's stamp */

	k = 0;
	j = 0;
	do
	:: k < ROUNDS ->
#ifdef BUG_STAMP_EARLY
		st[k] = begun;
#endif
B:		atomic {
			assert(slot == k);
			if
			:: k + 1 < ROUNDS -> slot = k + 1
			:: else -> slot = NONE
			fi
		};
#ifndef BUG_STAMP_EARLY
		st[k] = begun;					/* lpc_rcu_gp_stamp */
#endif
		k++
	:: j < k && PASSED(st[j]) ->				/* lpc_rcu_gp_passed */
#ifdef REACH_FREE
		assert(!in_rs[0]);
#endif
		freed[j] = 1;					/* the reuse */
		j++
	:: k == ROUNDS -> break
	od;
	done++
}

init {
	byte i;

	atomic {
		slot = 0;
		i = 0;
		do
		:: i < NR -> run reader(i); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> run waiter(); i++
		:: else -> break
		od;
		run remover()
	};
	(done == NR + NW + 1)
}
