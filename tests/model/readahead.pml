/* SPDX-License-Identifier: MIT */
/*
 * readahead.pml - a page's life under read-ahead (filemap/run.c U3-U5): in
 * flight -> UPTODATE, or failed/cut and removed, against a whole-page writer
 * (lpc_pwrite), truncate (lpc_truncate) and eviction.  Checked exhaustively
 * by spin; the broken variants (-DBUG_*) must be caught.
 *
 * The world: one file of two pages, of which one index slot (page 0) is
 * modelled, in two halves (lo, hi) so that a cut can fall inside it; two
 * descriptors: 1 for the read-ahead page, 2 for the writer's private page.
 * Sizes are in halves: the file is 4 (pages 0 and 1).  disk_lo, disk_hi are
 * the versions page 0's halves hold on disk (1: old, 0: zeros after a
 * truncate's ftruncate; writeback is not modelled).
 *   slot          0 empty, else the descriptor in the index
 *   lk[p] up[p] er[p] dt[p] : LOCKED, UPTODATE, ERROR, DIRTY
 *   lo[p] hi[p]   the versions the frame's halves hold; fr[p] the frame is free
 *   size          lpc's size in halves (4; CUT after the truncate)
 *   ts            f->trunc_seq (filemap.h): odd while a shrinking truncate
 *                 runs, from before its size store to after its ftruncate
 *   tcut[2]       f->trunc_cut: the cut of the truncate that raises ts from
 *                 2n to 2n + 1, in slot n % 2, stored before that raise
 *   wrote         ghost: lpc_pwrite of version 2 returned
 *   cut           ghost: lpc_truncate(CUT) returned
 *   regrown       ghost: lpc_truncate back to 4 halves stored its size
 *
 * Processes:
 *   ra        U1: size check (a window never starts past the end); U3
 *             insert LOCKED (empty slot only); U4 the device writes disk's
 *             versions into the frame, half by half (asserting the frame
 *             is not free: no frame reused under the device); U5 the cut
 *             of a truncate that raced the read (lpc_filemap_trunc_from:
 *             ts odd when loaded after the insert, or changed since; the
 *             cut of that one truncate, read from its slot, or 0 when ts
 *             moved by more than one truncate): the page wholly past it
 *             (cut 0) is dropped (removed, no ERROR: the caller looks up
 *             again, not modelled), the cut inside it (cut 1) zeroes the
 *             half past it, a cut past the page (2 or more) leaves it
 *             alone; then lpc's size: 0 -> removed, 1 -> hi zeroed; a
 *             failed read -> removed, ERROR; else UPTODATE and unlock
 *   writer    W1 lookup; empty: fill a private page (version 2, UPTODATE,
 *             DIRTY) and insert it if the slot is still empty, else again;
 *             found, not UPTODATE: wait for its unlock, then look again
 *             (failed/removed) or go on; lock, write 2, DIRTY, unlock (-DWRITER)
 *   trunc     T0 its cut in its slot, ts odd; T1 size = CUT; T2 page 0 wholly
 *             past the cut (CUT 0): wait for its lock, take it, delete it,
 *             unlock; T3 the cut inside it (CUT 1): wait for its lock, zero
 *             hi if UPTODATE, unlock; T4 (-DREGROW) the ftruncate: the disk
 *             holds zeros from the cut on; T5 ts even; then (-DREGROW) a
 *             second lpc_truncate grows the file back to 4 halves, and
 *             (-DTRUNC2) a third shrinks it to CUT2 (its own slot, its own
 *             cut, no ftruncate modelled: it does not touch page 0's disk
 *             halves when CUT2 >= 2) (-DTRUNCATE)
 *   evictor   E: an unlocked, clean, UPTODATE page in the slot is deleted and
 *             its frame freed, in one step (the index lock and the freeze)
 *   observer  at any time: after the write returned, an UPTODATE page in the
 *             slot holds version 2 (no stale data over new data); after the
 *             truncate returned, no UPTODATE page in the slot holds a half
 *             past the cut that is not zeros, and none at all for CUT 0
 *             (nothing resurrected past the end, until it grew again);
 *             after the regrowth, an UPTODATE page's halves past the cut
 *             are zeros (no bytes from before the cut; from its size store
 *             on); a page in the slot never is ERROR and unlocked (a failed
 *             page is never cached)
 * The rule that reads below a cut are left alone: with CUT 2 (page 0 wholly
 * below the cut) the reader never drops its page for the truncate (an
 * assertion at the drop).
 * Broken variants: BUG_NO_SIZE_RECHECK (U5 ignores the size), BUG_WRITER_NO_WAIT
 * (the writer writes into a page in flight without waiting for its lock),
 * BUG_FAILED_KEPT (a failed read leaves its page in the slot),
 * BUG_EVICT_LOCKED (eviction takes a page in flight), BUG_NO_TRUNC_SEQ (U5
 * trusts its size check alone: a read of the old bytes that raced the cut
 * is kept once the file grew back; regress_trunc_regrow.c's story),
 * BUG_DROP_ALL (the rule before lpc_filemap_trunc_from: any read that raced
 * a shrinking truncate is dropped, wherever its page lies: caught with
 * CUT 2), BUG_NO_TAIL (the cut inside the page is not zeroed past the cut:
 * caught with CUT 1 and the regrowth), BUG_ONE_SLOT (one trunc_cut for
 * every truncate: a reader that raced T reads the cut of the next one,
 * stored before the next raises ts: caught with -DTRUNC2, CUT 0, CUT2 2).
 */
#ifndef CUT
#define CUT 0
#endif
#ifndef CUT2
#define CUT2 2
#endif
#define NP 3
bit lk[NP], up[NP], er[NP], dt[NP], fr[NP];
byte lo[NP], hi[NP];
byte slot = 0;
byte size = 4;
byte disk_lo = 1, disk_hi = 1;
byte ts = 0;
byte tcut[2];
bit wrote = 0, cut = 0, regrown = 0, ra_done = 0;

/* descriptor 1 starts free, as descriptor 2 */
init {
	fr[1] = 1; fr[2] = 1;
	atomic {
		run ra();
#ifdef WRITER
		run writer();
#endif
#ifdef TRUNCATE
		run trunc();
#endif
		run evictor();
		run observer();
	}
}

proctype ra()
{
	bit fail, many;
	byte s0, s1, from;
	/* U1 */
	if
	:: size == 0 -> goto done
	:: else
	fi;
	/* U2-U3: a free frame, locked, inserted if the slot is empty */
	atomic {
		if
		:: slot == 0 && fr[1] ->
			fr[1] = 0; lk[1] = 1; up[1] = 0; er[1] = 0; dt[1] = 0; lo[1] = 0; hi[1] = 0;
			slot = 1
		:: else -> goto done
		fi
	}
	s0 = ts;	/* after the insert (U4's load) */
	/* U4: the device writes into the frame, half by half */
	assert(!fr[1]);
	lo[1] = disk_lo;
	assert(!fr[1]);
	hi[1] = disk_hi;
	if
	:: fail = 1
	:: fail = 0
	fi;
	/* U5: the cut of a truncate that raced the read, then lpc's size */
	from = 255;	/* none */
#ifndef BUG_NO_TRUNC_SEQ
	s1 = ts;
	if
	:: s0 % 2 == 0 && s1 == s0 -> skip
	:: s1 - (s0 - s0 % 2) > 2 -> from = 0; many = 1
	:: else ->
#ifdef BUG_ONE_SLOT
		from = tcut[0];
#else
		from = tcut[(s0 / 2) % 2];
#endif
		if
		:: ts - (s0 - s0 % 2) > 2 -> from = 0; many = 1
		:: else
		fi
	fi;
#ifdef BUG_DROP_ALL
	if
	:: from != 255 -> from = 0
	:: else
	fi;
#endif
	if
	:: from == 0 ->
		/* below the cut of the one truncate it raced: never dropped */
		assert(CUT != 2 || many);
		goto drop
	:: from == 1 ->
#ifndef BUG_NO_TAIL
		hi[1] = 0
#else
		skip
#endif
	:: else
	fi;
#endif
#ifndef BUG_NO_SIZE_RECHECK
	if
	:: size == 0 -> goto drop
	:: size == 1 -> hi[1] = 0
	:: else
	fi;
#endif
	if
	:: fail ->
#ifndef BUG_FAILED_KEPT
		atomic { if :: slot == 1 -> slot = 0 :: else fi };
#endif
		atomic { er[1] = 1; lk[1] = 0 }
	:: else ->
		atomic { up[1] = 1; lk[1] = 0 }
	fi;
	goto done;
drop:	/* removed, no ERROR: the caller and the waiters look up again */
	atomic { if :: slot == 1 -> slot = 0 :: else fi };
	lk[1] = 0; fr[1] = 1;
done:
	ra_done = 1
}

#ifdef WRITER
proctype writer()
{
	byte p;
again:
	atomic { p = slot };
	if
	:: p == 0 ->
		/* a private page with version 2, inserted only into an empty slot */
		atomic {
			if
			:: slot == 0 ->
				fr[2] = 0; lk[2] = 0; up[2] = 1; er[2] = 0; dt[2] = 1;
				lo[2] = 2; hi[2] = 2;
				slot = 2
			:: else -> goto again
			fi
		}
	:: else ->
#ifndef BUG_WRITER_NO_WAIT
		(lk[p] == 0);
		if
		:: !up[p] || slot != p -> goto again
		:: else
		fi;
		atomic { (lk[p] == 0) -> lk[p] = 1 };
		if
		:: slot != p -> lk[p] = 0; goto again
		:: else
		fi;
#endif
		lo[p] = 2;
		hi[p] = 2;
		dt[p] = 1;
#ifndef BUG_WRITER_NO_WAIT
		lk[p] = 0
#endif
	fi;
	wrote = 1
}
#endif

#ifdef TRUNCATE
proctype trunc()
{
	byte p;
#ifdef BUG_ONE_SLOT
	tcut[0] = CUT;				/* T0: the cut first, */
#else
	tcut[(ts / 2) % 2] = CUT;		/* T0: the cut first, */
#endif
	ts++;					/* then odd */
	size = CUT;				/* T1: the size */
	atomic { p = slot };			/* T2, T3 */
	if
	:: p != 0 && CUT == 0 ->
		atomic { (lk[p] == 0) -> lk[p] = 1 };
		atomic { if :: slot == p -> slot = 0; fr[p] = 1 :: else fi };
		lk[p] = 0
	:: p != 0 && CUT == 1 ->
		atomic { (lk[p] == 0) -> lk[p] = 1 };
		if
		:: slot == p && up[p] -> hi[p] = 0
		:: else
		fi;
		lk[p] = 0
	:: else
	fi;
#ifdef REGROW
	/* T4: ftruncate: zeros from the cut on */
	if
	:: CUT == 0 -> disk_lo = 0; disk_hi = 0
	:: CUT == 1 -> disk_hi = 0
	:: else
	fi;
#endif
	ts++;					/* T5: even */
	cut = 1;
#ifdef REGROW
	/* The next lpc_truncate grows it; the ghost marks the size store, not
	 * the return: from it on, a reader may cache the page (as zeros). */
	atomic { size = 4; regrown = 1 };
#ifdef TRUNC2
	/* And the one after shrinks it again, to CUT2 (>= 2: page 0 below). */
#ifdef BUG_ONE_SLOT
	tcut[0] = CUT2;
#else
	tcut[(ts / 2) % 2] = CUT2;
#endif
	ts++;
	size = CUT2;
	ts++
#endif
#endif
}
#endif

proctype evictor()
{
	byte p;
	do
	:: atomic {
		p = slot;
		if
#ifdef BUG_EVICT_LOCKED
		:: p != 0 && !dt[p] -> slot = 0; fr[p] = 1
#else
		:: p != 0 && !lk[p] && up[p] && !dt[p] -> slot = 0; fr[p] = 1
#endif
		:: else
		fi
	   }
	:: ra_done -> break
	od
}

proctype observer()
{
	byte p;
	do
	:: atomic {
		p = slot;
		assert(!(wrote && p != 0 && up[p] && !lk[p] && (lo[p] != 2 || hi[p] != 2)));
		assert(!(cut && !regrown && CUT == 0 && p != 0 && up[p] && !lk[p]));
		assert(!(cut && CUT == 1 && p != 0 && up[p] && !lk[p] && hi[p] != 0));
		assert(!(regrown && CUT <= 1 && p != 0 && up[p] && !lk[p] && hi[p] != 0));
		assert(!(regrown && CUT == 0 && p != 0 && up[p] && !lk[p] && lo[p] != 0));
		assert(!(p != 0 && er[p] && !lk[p]))
	   }
	:: ra_done -> break
	od
}
