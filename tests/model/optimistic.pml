/* SPDX-License-Identifier: MIT */
/*
 * optimistic.pml - the optimistic read (src/filemap/optimistic.h, O1-O6)
 * against a writer and against remove-and-reuse.  Checked exhaustively by
 * spin (README.md has the command lines and the step -> C table).
 *
 * The world: one index slot (index 0 of one file) and one page descriptor,
 * so that every reuse of a frame is the ABA case (the same frame comes back
 * in the same slot).  At the start the page is in the slot, UPTODATE, with
 * ref 1 (the index's) and data version 0.
 *
 *   inslot      the slot holds the page (else it is empty)
 *   ref         atomic reference count (0: frozen or free)
 *   seq         the page's sequence count: odd while a writer is inside
 *   uptodate    the UPTODATE flag
 *   ident       the page's identity: 0 (index 0) or NONE
 *   d0, d1      the frame's data: two words, so a copy can be torn; a
 *               version number, or GARBAGE written by a private owner
 *   locked      the page lock
 *   private     the frame is a private page (lpc_page_alloc): its owner
 *               writes it with plain stores and no seq section
 *   in_rs[r]    reader r is inside its RCU read section
 *   cached      ghost: bit v is set once version v was the stable content of
 *               the cached page at index 0 (a writer's or the miss path's
 *               seq end while the page is in the slot)
 *
 * Processes:
 *   reader(r)  lpc_pread / lpc_page_read's optimistic try, O1-O6, TRIES
 *              times; the fallback (referenced path) is spec_get.pml's
 *   writer     what the write path will do (tests/stress/stress_optimistic.c
 *              does it today): a reference on the page found in the slot
 *              (try_get), the page lock, a seq section around both words,
 *              unlock, put; WRITES times
 *   remover    once, one of: invalidate (freeze ref 1 -> 0 and delete: A, B),
 *              truncate-like removal (delete, drop the index's reference:
 *              last close, failed read), or nothing
 *   freer      the last reference's deferred free (C): a grace period, then
 *              the allocator recycles the frame (a seq section around the
 *              identity change, page_init_private), a private owner writes
 *              GARBAGE and frees it, and a miss on index 0 takes the frame
 *              again: M2 seq begin, identity, insert (M3), read a new version
 *              (M4), seq end and UPTODATE (M5)
 *
 * Grace period: the freer waits, reader by reader, for an instant with
 * in_rs[r] false (as in spec_get.pml: sound and complete).
 *
 * What is checked, at the end of every optimistic try that validates:
 *   TORN     both words are one version (c0 == c1)
 *   CACHED   that version was the cache's content at index 0 (never GARBAGE,
 *            never a write to a page that had left the cache)
 * and at each step of the copy:
 *   PRIVATE  the frame is not a private page: its owner writes it without a
 *            seq section (and, in C, a read of it would be a data race on a
 *            page its owner believes nobody else can see)
 *
 * Broken variants (spin -DBUG_...), each must make a check fail:
 *   BUG_OPT_NO_SEQ_RECHECK  O5 does not compare seq again: a copy that a
 *                           writer's section overlapped is accepted (TORN)
 *   BUG_OPT_NO_SLOT_CHECK   O5 validates seq only: the reader found the page
 *                           before a truncate-like removal; a holder then
 *                           wrote it (a lost write, in its own seq section)
 *                           and the copy returns data the cache never held
 *                           (CACHED)
 *   BUG_OPT_NO_GRACE        the deferred free does not wait for a grace
 *                           period: the frame is recycled and written by a
 *                           private owner while the reader copies (PRIVATE);
 *                           seq alone would have refused the copy, but the
 *                           read itself breaks the private page's contract
 */

#define NONE 255
#define GARBAGE 7
#ifndef NR
#define NR 1
#endif
#ifndef TRIES
#define TRIES 2
#endif
#ifndef WRITES
#define WRITES 1
#endif

bool inslot = 1;
byte ref = 1;
byte seq = 0;
bool uptodate = 1;
byte ident = 0;
byte d0 = 0;
byte d1 = 0;
bool locked = 0;
bool private = 0;
bool in_rs[NR];
byte cached = 1;
byte nextver = 1;
bool tofree = 0;

proctype reader(byte r)
{
	byte s1, s2, c0, c1, tries = 0;
	bool sl;

	do
	:: tries < TRIES ->
		tries++;
		in_rs[r] = 1;					/* O1 */
		if						/* O2 */
		:: !inslot -> goto fallback
		:: else
		fi;
		s1 = seq;					/* O3 */
		if
		:: (s1 % 2 == 1) || !uptodate || ident != 0 -> goto fallback
		:: else
		fi;
		atomic { assert(!private); c0 = d0 };		/* O4 */
		atomic { assert(!private); c1 = d1 };
		s2 = seq;					/* O5 */
		sl = inslot;
		in_rs[r] = 0;					/* O6 */
#ifdef BUG_OPT_NO_SEQ_RECHECK
		s2 = s1;
#endif
#ifdef BUG_OPT_NO_SLOT_CHECK
		sl = 1;
#endif
		if
		:: s1 == s2 && sl ->
			assert(c0 == c1);			/* TORN */
			assert(cached & (1 << c0))		/* CACHED */
		:: else
		fi;
		goto next;
fallback:
		in_rs[r] = 0;
next:
		skip
	:: else -> break
	od
}

/* The last reference's put: the frame goes to the deferred free. */
inline put()
{
	atomic {
		assert(ref > 0);
		ref--;
		if
		:: ref == 0 -> tofree = 1
		:: else
		fi
	}
}

proctype writer()
{
	byte v, n = 0;
	bool got;

	do
	:: n < WRITES ->
		n++;
		atomic {				/* find + try_get (R2-R4) */
			if
			:: inslot && ref > 0 -> ref++; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: got ->
			atomic { !locked -> locked = 1 };	/* page lock */
			atomic { v = nextver; nextver++ };
			seq++;					/* seq write begin */
			d0 = v;
			d1 = v;
			atomic {				/* seq write end */
				seq++;
				if
				:: inslot -> cached = cached | (1 << v)
				:: else
				fi
			};
			locked = 0;
			put()
		:: else
		fi
	:: else -> break
	od
}

proctype remover()
{
	if
	:: atomic { inslot && ref == 1 && !locked -> ref = 0; inslot = 0 }; /* A, B */
		tofree = 1
	:: atomic { inslot -> inslot = 0 };		/* B, truncate-like */
		put()
	:: skip
	fi
}

proctype freer()
{
	byte r, v;

end_wait:
	tofree;						/* C: ref reached 0 */
#ifndef BUG_OPT_NO_GRACE
	r = 0;
	do						/* the grace period */
	:: r < NR -> (in_rs[r] == 0); r++
	:: else -> break
	od;
#endif
	/* The allocator recycles the frame: page_init_private. */
	seq++;
	atomic { ident = NONE; uptodate = 0; private = 1 };
	seq++;
	/* Its private owner writes it, no seq section, then frees it. */
	d0 = GARBAGE;
	d1 = GARBAGE;
	/* A miss on index 0 gets the frame again (recycled: seq bumped). */
	seq++;
	atomic { private = 0 };
	seq++;
	locked = 1;					/* M2 */
	seq++;
	ident = 0;
	ref = 2;
	inslot = 1;					/* M3 */
	atomic { v = nextver; nextver++ };		/* M4 */
	d0 = v;
	d1 = v;
	atomic {					/* M5 */
		seq++;
		if
		:: inslot -> cached = cached | (1 << v)
		:: else
		fi
	};
	uptodate = 1;
	locked = 0;
	atomic { ref-- }				/* the miss's own reference */
}

init
{
	byte r;

	atomic {
		r = 0;
		do
		:: r < NR -> run reader(r); r++
		:: else -> break
		od;
		run writer();
		run remover();
		run freer()
	}
}
