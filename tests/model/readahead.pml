/* SPDX-License-Identifier: MIT */
/*
 * readahead.pml - a page's life under read-ahead (filemap/run.c U3-U5): in
 * flight -> UPTODATE, or failed/cut and removed, against a whole-page writer
 * (lpc_pwrite), truncate (lpc_truncate) and eviction.  Checked exhaustively
 * by spin; the broken variants (-DBUG_*) must be caught.
 *
 * The world: one file, one index slot (page 0), two descriptors: 1 for the
 * read-ahead page, 2 for the writer's private page.  disk is the version the
 * file holds on disk (1: old; writeback is not modelled, so it stays old).
 *   slot          0 empty, else the descriptor in the index
 *   lk[p] up[p] er[p] dt[p] : LOCKED, UPTODATE, ERROR, DIRTY
 *   data[p]       the version the frame holds; free[p] the frame is free
 *   size          lpc's size in pages (1, or 0 after the truncate)
 *   ts            f->trunc_seq (filemap.h): odd while a shrinking truncate
 *                 runs, from before its size store to after its ftruncate
 *   wrote         ghost: lpc_pwrite of version 2 returned
 *   cut           ghost: lpc_truncate to 0 returned
 *   regrown       ghost: lpc_truncate back to 1 page stored its size (-DREGROW)
 *
 * Processes:
 *   ra        U1: size check (a window never starts past the end); U3
 *             insert LOCKED (empty slot only); U4 the device writes disk's
 *             version into the frame (asserting the frame is not free: no
 *             frame reused under the device); U5 load size: 0 -> delete and
 *             unlock (no ERROR); a failed read -> delete, ERROR, unlock;
 *             else UPTODATE and unlock.  Before U5's size, trunc_seq: odd
 *             when loaded after the insert, or changed since -> delete and
 *             unlock, no ERROR (the caller looks up again; not modelled)
 *   writer    W1 lookup; empty: fill a private page (version 2, UPTODATE,
 *             DIRTY) and insert it if the slot is still empty, else again;
 *             found, not UPTODATE: wait for its unlock, then look again
 *             (failed/removed) or go on; lock, write 2, DIRTY, unlock (-DWRITER)
 *   trunc     T0 trunc_seq odd; T1 size = 0; T2 lookup; a page: wait for
 *             its lock, take it, delete it, unlock; T3 (-DREGROW) the
 *             ftruncate: the disk holds zeros (version 0); T4 trunc_seq
 *             even; then (-DREGROW) a second lpc_truncate grows the file
 *             back to one page (-DTRUNCATE)
 *   evictor   E: an unlocked, clean, UPTODATE page in the slot is deleted and
 *             its frame freed, in one step (the index lock and the freeze)
 *   observer  at any time: after the write returned, an UPTODATE page in the
 *             slot holds version 2 (no stale data over new data); after the
 *             truncate returned, no UPTODATE page is in the slot (nothing
 *             resurrected past the end, until it grew again); after the
 *             regrowth returned, an UPTODATE page holds zeros (no bytes from
 *             before the cut; from its size store on); a page in the slot never is ERROR and
 *             unlocked (a failed page is never cached)
 * Broken variants: BUG_NO_SIZE_RECHECK (U5 ignores the size), BUG_WRITER_NO_WAIT
 * (the writer writes into a page in flight without waiting for its lock),
 * BUG_FAILED_KEPT (a failed read leaves its page in the slot),
 * BUG_EVICT_LOCKED (eviction takes a page in flight), BUG_NO_TRUNC_SEQ (U5
 * trusts its size check alone: a read of the old bytes that raced the cut
 * is kept once the file grew back; regress_trunc_regrow.c's story).
 */
#define NP 3
bit lk[NP], up[NP], er[NP], dt[NP], fr[NP];
byte data[NP];
byte slot = 0;
byte size = 1;
byte disk = 1;
byte ts = 0;
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
	bit fail;
	byte s0;
	/* U1 */
	if
	:: size == 0 -> goto done
	:: else
	fi;
	/* U2-U3: a free frame, locked, inserted if the slot is empty */
	atomic {
		if
		:: slot == 0 && fr[1] ->
			fr[1] = 0; lk[1] = 1; up[1] = 0; er[1] = 0; dt[1] = 0; data[1] = 0;
			slot = 1
		:: else -> goto done
		fi
	}
	s0 = ts;	/* after the insert (U4's load) */
	/* U4: the device writes into the frame */
	assert(!fr[1]);
	data[1] = disk;
	if
	:: fail = 1
	:: fail = 0
	fi;
	/* U5: trunc_seq, then lpc's size */
#ifndef BUG_NO_TRUNC_SEQ
	if
	:: s0 % 2 == 1 || ts != s0 -> goto drop
	:: else
	fi;
#endif
#ifndef BUG_NO_SIZE_RECHECK
	if
	:: size == 0 -> goto drop
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
				fr[2] = 0; lk[2] = 0; up[2] = 1; er[2] = 0; dt[2] = 1; data[2] = 2;
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
		data[p] = 2;
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
	ts++;					/* T0: odd */
	size = 0;				/* T1: the size first */
	atomic { p = slot };			/* T2 */
	if
	:: p != 0 ->
		atomic { (lk[p] == 0) -> lk[p] = 1 };
		atomic { if :: slot == p -> slot = 0; fr[p] = 1 :: else fi };
		lk[p] = 0
	:: else
	fi;
#ifdef REGROW
	disk = 0;				/* T3: ftruncate: zeros */
#endif
	ts++;					/* T4: even */
	cut = 1;
#ifdef REGROW
	/* The next lpc_truncate grows it; the ghost marks the size store, not
	 * the return: from it on, a reader may cache the page (as zeros). */
	atomic { size = 1; regrown = 1 }
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
		assert(!(wrote && p != 0 && up[p] && !lk[p] && data[p] != 2));
		assert(!(cut && !regrown && p != 0 && up[p] && !lk[p]));
		assert(!(regrown && p != 0 && up[p] && !lk[p] && data[p] != 0));
		assert(!(p != 0 && er[p] && !lk[p]))
	   }
	:: ra_done -> break
	od
}
