/* SPDX-License-Identifier: MIT */
/*
 * size.pml - the file's size (src/writeback/writeback.c, SZ1-SZ5 and rules
 * S1-S4; write.c's raise, truncate.c): lpc_pwrite extending the file,
 * writeback's whole-page writes, the publish of lpc's size (ftruncate) and
 * lpc_truncate, against each other.
 *
 * The file is N slots ("bytes") in pages of PS slots.  A slot holds a
 * version: 0 is a zero byte (a hole, or past the end).  State: lpc's size
 * (lsize), the kernel's file (disk[], ksize), io.size (iosize), the cached
 * frames (mem[]; every page stays cached: what eviction would drop is a
 * clean page, whose data must then be on disk), DIRTY and WRITEBACK per
 * page, size_lock and trunc_lock.  want[] is what lpc promises: the bytes
 * of every lpc_pwrite that returned, zeros past an lpc_truncate.
 *
 * Processes: W, a writer (two writes: one that extends the last, partial
 * page, one of a whole new page); F and G, two writeback passes (the
 * flusher, and a throttled writer's or lpc_fsync's), each publishing the
 * size after a write that ends past lpc's size, G also at its end as
 * lpc_fsync's Y4 does; T, one lpc_truncate (shrink; -DNO_TRUNCATE leaves it
 * out).  When all are done, a last lpc_fsync writes every dirty page and
 * publishes.
 *
 * Checked (assertion): after that last fsync, the kernel's file is exactly
 * lpc's size long and holds every promised byte below it (no write cut off
 * by a publish, no tail of a page left past the size).
 * Broken variants spin must catch (CTest runs them with --expect assert):
 *   BUG_DIRTY_FIRST    SZ1 after the data: the page is dirty before lpc's
 *                      size covers it (window (a))
 *   BUG_RAISE_NO_LOCK  SZ1 raises the size without size_lock: a publish
 *                      that read the size before the raise cuts the
 *                      written page (window (b))
 *   BUG_STALE_PUBLISH  the publish reads lpc's size before it takes
 *                      size_lock
 *   BUG_TRUST_IOSIZE   the publish after a writeback's write trusts
 *                      io.size to say where lpc's writes end: a truncate
 *                      (or publish) that read io.size before a write of the
 *                      last page landed after its ftruncate, whose CAS-max
 *                      then changed nothing, sets io.size to the size and
 *                      the write's tail stays past it
 *   BUG_PLAIN_STORE    the old code: that trust, and SZ5 a plain store over
 *                      a writeback's CAS-max
 * The fix of the last two: a writeback that wrote past lpc's size publishes
 * with its own end (wend) as lpc's, and reads the kernel's size itself.
 */
#define N 4   /* slots of the file */
#define PS 2  /* slots per page */
#define NP 2  /* pages */

byte lsize = 1;  /* lpc's size */
byte ksize = 1;  /* the kernel's file */
byte iosize = 1; /* io.size */
byte mem[N];
byte disk[N];
byte want[N];
bool dirty[NP];
bool wb[NP];
bool size_lock = 0;
byte trunc_r = 0;
bool trunc_w = 0;

inline lock_size() { atomic { size_lock == 0 -> size_lock = 1 } }
inline unlock_size() { size_lock = 0 }

/* ftruncate(sz): bytes past the new end are gone; growing adds zeros. */
inline ftruncate(sz)
{
	atomic {
		j = sz;
		do
		:: j < N -> disk[j] = 0; j++
		:: else -> break
		od;
		ksize = sz
	}
}

/* SZ3-SZ5 (publish_size); wend: the end of the writeback's own write that
 * passed lpc's size (0: lpc_fsync's Y4, the last close). */
inline publish(wend)
{
#ifdef BUG_STALE_PUBLISH
	t = lsize;
	lock_size();
#else
	lock_size();
	t = lsize;						/* SZ3 */
#endif
	seen = iosize;
#if defined(BUG_TRUST_IOSIZE) || defined(BUG_PLAIN_STORE)
	own = seen; /* the old code: io.size alone says where lpc's writes end */
	force = 0;
#else
	own = (wend > seen -> wend : seen);
	force = (wend > 0);
#endif
	if
	:: own != t || force ->
		k = ksize;					/* SZ4 */
		if
		:: k < t || (k > t && k <= own) -> ftruncate(t)
		:: else -> skip
		fi;
#ifdef BUG_PLAIN_STORE
		iosize = t
#else
		atomic { if :: iosize == seen -> iosize = t :: else -> skip fi }	/* SZ5 */
#endif
	:: else -> skip
	fi;
	unlock_size()
}

/* One writeback pass over the pages in index order (K3-K5, SZ2). */
inline pass()
{
	p = 0;
	do
	:: p < NP ->
		atomic {
			if
			:: dirty[p] && !wb[p] ->			/* K3 */
				dirty[p] = 0; wb[p] = 1;
				s0 = mem[p * PS]; s1 = mem[p * PS + 1]; took = 1
			:: else -> took = 0
			fi
		};
		if
		:: took ->
			atomic {					/* K4 */
				disk[p * PS] = s0; disk[p * PS + 1] = s1;
				if :: ksize < (p + 1) * PS -> ksize = (p + 1) * PS :: else -> skip fi
			};
			atomic { if :: iosize < (p + 1) * PS -> iosize = (p + 1) * PS :: else -> skip fi };	/* SZ2 */
			wb[p] = 0;					/* K5 */
			if :: (p + 1) * PS > lsize -> publish((p + 1) * PS) :: else -> skip fi
		:: else -> skip
		fi;
		p++
	:: else -> break
	od
}

/* SZ1: lpc's size to at least e. */
inline raise(e)
{
#ifdef BUG_RAISE_NO_LOCK
	atomic { if :: lsize < e -> lsize = e :: else -> skip fi }
#else
	lock_size();
	if :: lsize < e -> lsize = e :: else -> skip fi;
	unlock_size()
#endif
}

/* D1-D3: slots [s, e) of one page get version v, the page is dirty. */
inline put(s, e, v)
{
	atomic {
		j = s;
		do
		:: j < e -> mem[j] = v; j++
		:: else -> break
		od;
		dirty[s / PS] = 1
	}
}

/* lpc_pwrite of slots [s, e) (one page) with version v. */
inline pwrite(s, e, v)
{
	atomic { trunc_w == 0 -> trunc_r++ };
#ifdef BUG_DIRTY_FIRST
	put(s, e, v);
	raise(e);
#else
	raise(e);						/* SZ1 */
	put(s, e, v);
#endif
	atomic {
		trunc_r--;
		/* the call returns: its bytes are promised */
		j = s;
		do
		:: j < e -> want[j] = v; j++
		:: else -> break
		od
	}
}

proctype W()
{
	byte j;

	pwrite(1, 2, 2); /* extends the last, partial page */
	pwrite(2, 4, 3)  /* a whole new page */
}

proctype F()
{
	byte p, s0, s1, t, seen, k, j, own;
	bool took, force;

	pass();
	pass()
}

proctype G()
{
	byte p, s0, s1, t, seen, k, j, own;
	bool took, force;

	pass();
	publish(0) /* lpc_fsync's Y4 */
}

/* lpc_truncate(1): shrink to one slot, under trunc_lock and size_lock. */
proctype T()
{
	byte j, p, seen;

	atomic { trunc_w == 0 && trunc_r == 0 -> trunc_w = 1 };
	lock_size();
	lsize = 1;						/* 1 */
	p = 0;
	do
	:: p < NP ->						/* 2, 3 */
		/* the page locked once no write of it is in flight: no K3
		 * while truncate holds it (one atomic step) */
		atomic {
			wb[p] == 0;
			if
			:: p * PS >= 1 -> dirty[p] = 0 /* removed: un-dirtied */
			:: else -> skip
			fi;
			j = (p * PS >= 1 -> p * PS : 1);
			do
			:: j < (p + 1) * PS -> mem[j] = 0; want[j] = 0; j++
			:: else -> break
			od
		};
		p++
	:: else -> break
	od;
	seen = iosize;
	ftruncate(1);						/* 4 */
	atomic { if :: iosize == seen -> iosize = 1 :: else -> skip fi };
	unlock_size();
	trunc_w = 0
}

init {
	byte p, s0, s1, t, seen, k, j, own;
	bool took, force;

	atomic {
		mem[0] = 1; disk[0] = 1; want[0] = 1;
		run W(); run F(); run G();
#ifndef NO_TRUNCATE
		run T();
#endif
	}
	(_nr_pr == 1);
	/* The last lpc_fsync: every dirty page, then Y4. */
	pass();
	publish(0);
	assert(ksize == lsize);
	j = 0;
	do
	:: j < lsize -> assert(disk[j] == want[j]); j++
	:: else -> break
	od
}
