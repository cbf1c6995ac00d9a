/* SPDX-License-Identifier: MIT */
/*
 * writeback.pml - DIRTY / TOWRITE / WRITEBACK of one page against a writer,
 * the flusher and lpc_fsync (src/writeback/writeback.c: D1-D3, K1-K5,
 * Y1-Y4; writeback/dirty.c: flags and tags, the errseq).
 *
 * The page's data is a version number: the writer makes version v+1 under
 * the page lock and marks the page DIRTY (D1-D3), then its call returns
 * (acked = v+1).  A write of the page (K4) carries the version in memory at
 * the moment it copies, and may fail (at most NFAIL times): then the page is
 * dirty again (K5) and an error is recorded (errs++, seen = 0).
 *
 * Checked (assertion): an lpc_fsync that returns 0 finds on disk at least
 * the version acknowledged before it began (no lost write, no fsync that
 * misses a page dirtied before it started), whatever the interleaving.
 * Broken variants spin must catch (CTest runs them with --expect assert):
 *   BUG_CLEAR_DIRTY_LATE  DIRTY cleared after the write (K5) instead of
 *                         before it (K3): a change made during the write is
 *                         lost
 *   BUG_NO_WAIT_WRITEBACK fsync neither waits for a write in flight (K2,
 *                         Y3) nor writes such a page: it returns before the
 *                         flusher's write of older data lands
 *   BUG_DROP_ON_ERROR     a failed write does not re-dirty the page: once
 *                         one fsync has reported the error, the next
 *                         returns 0 with the data never written
 */
#ifndef NW
#define NW 2 /* writes */
#endif
#ifndef NF
#define NF 2 /* flusher passes */
#endif
#ifndef NS
#define NS 2 /* fsync calls */
#endif
#ifndef NFAIL
#define NFAIL 1 /* failed writes */
#endif

byte data = 0;  /* version in the frame */
byte acked = 0; /* last version whose lpc_pwrite returned */
byte disk = 0;  /* version on the file */
bool dirty = 0, wb = 0, towrite = 0;
byte lock = 0;  /* page lock: 0 free, else the holder */
byte errs = 0;  /* errseq counter */
bool seen = 0;  /* errseq SEEN */
byte fails = NFAIL;

inline page_lock(id) { atomic { lock == 0 -> lock = id } }
inline page_unlock() { lock = 0 }

/* K3, under the page lock (and the index lock: one atomic step) */
inline start_writeback()
{
	atomic {
#ifndef BUG_CLEAR_DIRTY_LATE
		dirty = 0;
#endif
		wb = 1;
		towrite = 0
	}
}

/* K4-K5, the page unlocked */
inline write_page(v)
{
	v = data; /* K4: the copy */
	if
	:: fails > 0 ->
		atomic {
			fails--;
			errs++;
			seen = 0;
#ifndef BUG_DROP_ON_ERROR
			dirty = 1 /* K5: the data is kept, dirty again */
#endif
		}
	:: true ->
		disk = v;
#ifdef BUG_CLEAR_DIRTY_LATE
		dirty = 0;
#endif
	fi;
	wb = 0 /* K5: WRITEBACK cleared, waiters wake */
}

active proctype writer()
{
	byte i = 0, mine;

	do
	:: i < NW ->
		page_lock(1);				/* D1 */
		atomic { data++; mine = data };		/* D2 */
		dirty = 1;				/* D3 */
		page_unlock();
		acked = mine;				/* the call returns */
		i++
	:: else -> break
	od
}

active proctype flusher()
{
	byte i = 0, v;

	do
	:: i < NF ->
		if
		:: atomic { lock == 0 -> lock = 2 } ->	/* K1: trylock */
			if
			:: wb || !dirty -> page_unlock()	/* K2: skip */
			:: else ->
				start_writeback();		/* K3 */
				page_unlock();
				write_page(v)			/* K4-K5 */
			fi
		:: else -> skip				/* locked: skip */
		fi;
		i++
	:: else -> break
	od
}

active proctype fsync()
{
	byte i = 0, start, since, v;
	bool rc;

	do
	:: i < NS ->
		atomic { start = acked; since = errs };	/* Y1 */
		atomic { if :: dirty -> towrite = 1 :: else fi };	/* Y2: tag */
		if
		:: towrite ->
			page_lock(3);				/* K1 */
#ifndef BUG_NO_WAIT_WRITEBACK
			do
			:: wb -> page_unlock(); (!wb); page_lock(3)	/* K2: wait */
			:: else -> break
			od;
#endif
			if
			:: dirty && !wb ->
				start_writeback();		/* K3 */
				page_unlock();
				write_page(v)			/* K4-K5 */
			:: else -> towrite = 0; page_unlock()
			fi
		:: else -> skip
		fi;
#ifndef BUG_NO_WAIT_WRITEBACK
		(!wb);						/* Y3 */
#endif
		atomic {					/* Y4: errseq */
			if
			:: errs != since -> rc = 1; seen = 1
			:: errs == since && !seen && errs > 0 -> rc = 1; seen = 1
			:: else -> rc = 0
			fi
		};
		assert(rc || disk >= start);
		i++
	:: else -> break
	od
}
