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
 *   wrote         ghost: lpc_pwrite of version 2 returned
 *   cut           ghost: lpc_truncate to 0 returned
 *
 * Processes:
 *   ra        U1: size check (a window never starts past the end); U3
 *             insert LOCKED (empty slot only); U4 the device writes disk's
 *             version into the frame (asserting the frame is not free: no
 *             frame reused under the device); U5 load size: 0 -> delete and
 *             unlock (no ERROR); a failed read -> delete, ERROR, unlock;
 *             else UPTODATE and unlock
 *   writer    W1 lookup; empty: fill a private page (version 2, UPTODATE,
 *             DIRTY) and insert it if the slot is still empty, else again;
 *             found, not UPTODATE: wait for its unlock, then look again
 *             (failed/removed) or go on; lock, write 2, DIRTY, unlock (-DWRITER)
 *   trunc     T1 size = 0; T2 lookup; a page: wait for its lock, take it,
 *             delete it, unlock (-DTRUNCATE)
 *   evictor   E: an unlocked, clean, UPTODATE page in the slot is deleted and
 *             its frame freed, in one step (the index lock and the freeze)
 *   observer  at any time: after the write returned, an UPTODATE page in the
 *             slot holds version 2 (no stale data over new data); after the
 *             truncate returned, no UPTODATE page is in the slot (nothing
 *             resurrected past the end); a page in the slot never is ERROR
 *             and unlocked (a failed page is never cached)
 * Broken variants: BUG_NO_SIZE_RECHECK (U5 ignores the size), BUG_WRITER_NO_WAIT
 * (the writer writes into a page in flight without waiting for its lock),
 * BUG_FAILED_KEPT (a failed read leaves its page in the slot),
 * BUG_EVICT_LOCKED (eviction takes a page in flight).
 */
#define NP 3
bit lk[NP], up[NP], er[NP], dt[NP], fr[NP];
byte data[NP];
byte slot = 0;
byte size = 1;
byte disk = 1;
bit wrote = 0, cut = 0, ra_done = 0;

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
	/* U4: the device writes into the frame */
	assert(!fr[1]);
	data[1] = disk;
	if
	:: fail = 1
	:: fail = 0
	fi;
	/* U5 */
	if
#ifndef BUG_NO_SIZE_RECHECK
	:: size == 0 ->
		atomic { if :: slot == 1 -> slot = 0 :: else fi };
		lk[1] = 0; fr[1] = 1
#endif
	:: else ->
		if
		:: fail ->
#ifndef BUG_FAILED_KEPT
			atomic { if :: slot == 1 -> slot = 0 :: else fi };
#endif
			atomic { er[1] = 1; lk[1] = 0 }
		:: else ->
			atomic { up[1] = 1; lk[1] = 0 }
		fi
	fi;
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
	size = 0;				/* T1: the size first */
	atomic { p = slot };			/* T2 */
	if
	:: p != 0 ->
		atomic { (lk[p] == 0) -> lk[p] = 1 };
		atomic { if :: slot == p -> slot = 0; fr[p] = 1 :: else fi };
		lk[p] = 0
	:: else
	fi;
	cut = 1
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
		assert(!(cut && p != 0 && up[p] && !lk[p]));
		assert(!(p != 0 && er[p] && !lk[p]))
	   }
	:: ra_done -> break
	od
}
