/* SPDX-License-Identifier: MIT */
/*
 * spec_get.pml - the speculative page reference against freeze, remove,
 * deferred free, reuse and truncate; with -DMISS_REUSE, also against a
 * frame reused by the miss path with no grace period (MR1-MR5 of the miss
 * reuse design).  Checked exhaustively by spin (see README.md for the
 * command lines and the step -> C function table).
 *
 * The world: NP = 2 page descriptors (type-stable: never go away), K = 2
 * index slots of one file, NR = 2 readers (-DNR=1: one).  At the start page 0
 * is in slot 0 and page 1 in slot 1, each with ref 1 (the index's reference).
 *
 *   ref[p]        atomic reference count; 0 = free, pending free or frozen
 *   ident[p]      the file index page p stands for (its identity; NONE
 *                 while the miss path initialises it, MR2)
 *   st[p]         LIVE (private or in use), PENDING (queued for the deferred
 *                 free), GP (in a batch waiting for its grace period), FREE
 *                 (on a free list: a grace period covers it), UNCOV (only
 *                 with MISS_REUSE: on the reclaimer's own t->dfree with no
 *                 grace period yet; only the miss path (MR1) or a grace
 *                 period (CB1-CB3, standing for OD3-OD5's landing and T1-T4's
 *                 steal to pending) moves it on)
 *   published[p]  the PUBLISHED flag: p has been in an index since it was last
 *                 allocated (so lpc_page_put must not free it the fast way)
 *   slot[k]       the index: a page number or NONE
 *   in_rs[r]      reader r is inside an RCU read section
 *   ilock         the file's index lock (inserts and deletes only)
 *
 * Processes (steps are the labels; README.md maps them to the C code):
 *   reader(r)   lpc_page_find -> filemap_lookup_rcu: R1-R6, one lookup of a
 *               slot chosen nondeterministically
 *   reclaimer   invalidate_one (remove.c) + the deferred free, then the miss path
 *               that recycles a frame for some index (maybe the same one:
 *               ABA), or frees it privately on -EEXIST: FA-FH, ROUNDS times.
 *               With MISS_REUSE the removed frame goes UNCOV (lpc_invalidate
 *               keeps it on t->dfree) and each round's recycle takes, chosen
 *               nondeterministically, one of two branches:
 *                 covered  FG-FH as above: `alloc` takes only FREE frames;
 *                          it stands for every private use (lpc_page_alloc,
 *                          the write path's write_new_page, write pins) and
 *                          for a miss on a covered frame done today's way
 *                 miss     MG, MR2-MR4: alloc_miss takes a FREE or an UNCOV
 *                          frame, ref stays 0 through its init, identity and
 *                          PUBLISHED are set, then ref = 2 (the index's and
 *                          ours) in one store; insert, or on -EEXIST drop both
 *                          references by atomic decrements and, if that
 *                          reached 0, back to UNCOV (a stale getter that
 *                          still holds one frees it by release ->
 *                          free_deferred -> grace period)
 *   truncator   lpc_filemap_delete / lpc_filemap_remove_all removing a page users may hold:
 *               TA-TD, once
 *   rcu_cb      liburcu's call_rcu thread running the batched deferred free
 *               (free_batch_rcu): CB1-CB3, a grace period per batch
 *
 * The miss reuse steps (the design's MR1-MR5, as modelled; the C functions
 * that will implement them are in README.md):
 *   MR1 the miss path's allocation (alloc_miss) may take an UNCOV frame; a
 *       private one (alloc) takes only FREE frames
 *   MR2 ref stays 0 while the frame is initialised (PUBLISHED, identity
 *       cleared): a stale getter's R3 keeps failing
 *   MR3 identity and PUBLISHED set, then ref = 2 in one store (from 0)
 *   MR4 from MR3 on ref changes only by atomic RMW: -EEXIST drops both
 *       references by decrements; 0 -> back to UNCOV, else the last put is a
 *       stale getter's, through release and free_deferred
 *   MR5 a stale getter that wins R3 on a reused frame: R4 fails unless the
 *       frame was reused for its very slot (a true hit), R4a puts it
 *
 * Grace period model: CB2 waits, reader by reader, until in_rs[i] is false
 * at some instant after the batch was taken (CB1).  That is sound (every read
 * section open at CB1 has closed) and complete (the waits are invisible to
 * the other processes, so the scheduler can run each one at the earliest
 * instant a real grace period could end).
 *
 * What is checked (all by assertions; the search also reports any invalid
 * end state, e.g. a process blocked for ever; and, in the progress runs with
 * -DROUNDS=1 under weak fairness, that there is no infinite execution at all:
 * no reader livelocks in the retry loops):
 *   R4   a page R4 accepts has the identity looked up and PUBLISHED (the
 *        debug rule GRACE-PERIOD's new place under MR5)
 *   R6   the page returned is LIVE, has the identity asked for, holds a
 *        reference, and was in slot[k] at some instant while the reader held
 *        its reference (ghost `incache`: "only then is the page yours")
 *   put  ref never drops below 0 (asserted before every decrement)
 *   free a page is freed only at ref 0 and only once; the private fast path
 *        (free_private) asserts the owner really holds the only reference
 *   alloc, alloc_miss  a frame is handed out once: ref 0, in no slot
 *   MR3  ref is still 0 when the miss path stores 2 (nobody changed it)
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_NO_RECHECK        skip R4: a page removed by truncate between R2 and
 *                         R3 is returned although it is no longer cached
 *   BUG_NO_GRACE          the deferred free does not wait for a grace period:
 *                         a stale reader's reference lands on a recycled,
 *                         private page, whose owner then frees it with plain
 *                         stores (the page-free fast path) under it
 *   BUG_COUNT_ONE_IS_MINE lpc_page_release takes "ref is 1, so it is mine"
 *                         and stores 0 instead of decrementing (the 2006 bug):
 *                         a speculative increment in between is lost
 *   BUG_GP_WHILE_FROZEN   (progress run) the reclaimer waits for a grace
 *                         period between the freeze and the removal: a reader
 *                         spins on the frozen page inside its read section,
 *                         so the grace period never ends
 * and, with MISS_REUSE:
 *   BUG_MR_REF_EARLY      (MR3 broken) ref = 2 is stored before PUBLISHED: a
 *                         stale getter's R3 wins, R4 fails, and its put sees
 *                         PUBLISHED clear and frees the page privately under
 *                         its owner (free_private's assertion, ref 2)
 *   BUG_MR_PRIVATE_UNPREP (MR4 broken) -EEXIST stores ref = 1 and frees
 *                         privately, as lpc_filemap_unprep_miss does today: a
 *                         stale getter's reference is lost (its put finds
 *                         ref 0: `ref > 0` before a decrement)
 *   BUG_MR_TO_PRIVATE     (MR1 broken) `alloc` may take an UNCOV frame: a
 *                         stale getter's increment lands on a private page
 *                         (free_private's assertion, as BUG_NO_GRACE)
 *   BUG_MR_UNPREP_TO_FREE (MR4 broken, needs two rounds: -DNR=1) -EEXIST's
 *                         last drop puts the frame on the private list (FREE)
 *                         instead of back on t->dfree: the next private use
 *                         gets an uncovered frame (free_private's assertion)
 * Extra switch: NO_INCACHE_CHECK drops the ghost from R6 (used to show that
 * with the deferred free the identity check alone cannot see BUG_NO_RECHECK,
 * and that with MISS_REUSE it can).
 *
 * What it shows about the two guards (each is needed, for its own reason):
 *   - The grace period alone already keeps a page's identity stable for a
 *     reader's whole read section (the retry loop R2-R4 runs in one): with
 *     -DBUG_NO_RECHECK -DNO_INCACHE_CHECK the R6 identity check never fails.
 *     The re-check R4 is what makes the page *cached* when the reference is
 *     taken: without it, find returns a page that truncate/close/invalidate
 *     had already removed (a write through it would be lost: the next miss
 *     inserts a fresh page for that index).
 *   - The re-check alone would keep identity right (it is the kernel's
 *     scheme, with immediate free), but a stale speculative increment can
 *     then land on a recycled private page, whose owner frees it with plain
 *     stores (and lpc_page_put sends such a page, PUBLISHED clear, down the
 *     fast path): BUG_NO_GRACE.
 *   - With MISS_REUSE both hold for the miss path without the grace period:
 *     the re-check keeps identity right, and MR2-MR4 keep a stale increment
 *     off any private page: it fails while ref is 0 (MR2), and once it can
 *     win (MR3) PUBLISHED is set, so every put of it decrements.  The grace
 *     period is still needed, but only before a private use (MR1: the
 *     covered branch; BUG_MR_TO_PRIVATE).  The re-check R4 now also guards
 *     identity: -DMISS_REUSE -DBUG_NO_RECHECK -DNO_INCACHE_CHECK fails on
 *     `ident[p] == k` (a frame reused by a miss for another index inside the
 *     reader's read section), so every lockless reader that used the grace
 *     period for identity must re-check (the design's audit).
 *   Not in the model: the page lock and data (a stale getter whose R4 passes
 *   on a frame reused for its own slot is a true hit, locked until M5), the
 *   stamps of t->dfree (own_defer.pml; here a grace period that begins after
 *   the frame went UNCOV, which is later than its removal), the seq section.
 *
 * The model is sequentially consistent: the memory orders are argued in the
 * C comments (page.h, lookup.c, alloc.c), not here.
 */

#define NONE	255
#define NP	2
#define K	2
#ifndef NR
#define NR	2	/* readers: 1 or 2 */
#endif
#ifndef ROUNDS
#define ROUNDS	2	/* reclaim-and-recycle rounds */
#endif

#define LIVE	0
#define PENDING	1
#define GP	2
#define FREE	3
#define UNCOV	4	/* MISS_REUSE: on the thread's t->dfree, no grace period yet */

byte ref[NP];
byte ident[NP];
byte st[NP];
bool published[NP];
byte slot[K];
bool in_rs[NR];
bool ilock;

inline index_lock()
{
	atomic { ilock == 0 -> ilock = 1 }
}

inline index_unlock()
{
	ilock = 0
}

/* lpc_page_free_deferred: queue for the next batch's grace period. */
inline free_deferred(p)
{
	atomic {
		assert(ref[p] == 0 && st[p] == LIVE);
		st[p] = PENDING
	}
}

/* lpc_page_free_private: the page-free fast path, plain stores only.  Its
 * contract: the caller is the page's only user (never published since its
 * allocation, so no speculative getter can reach it). */
inline free_private(p)
{
	assert(ref[p] == 1 && st[p] == LIVE);	/* "nobody else can see it" */
	ref[p] = 0;
	st[p] = FREE
}

/* lpc_page_release: the slow half of lpc_page_put, for published pages. */
inline release(p)
{
#ifdef BUG_COUNT_ONE_IS_MINE
	if
	:: ref[p] == 1 ->		/* "the count is 1, so it is mine" */
		ref[p] = 0;		/* plain store, not a decrement */
		z = 1
	:: else ->
		atomic { assert(ref[p] > 0); ref[p]--; z = (ref[p] == 0) }
	fi;
#else
	atomic { assert(ref[p] > 0); ref[p]--; z = (ref[p] == 0) };
#endif
	if
	:: z -> free_deferred(p)
	:: else
	fi
}

/* lpc_page_put: PUBLISHED clear -> private fast path, else release. */
inline put(p)
{
	if
	:: !published[p] -> free_private(p)
	:: else -> release(p)
	fi
}

/* lpc_page_alloc_frame + page_init_private: a frame off a free list (waits
 * for pending frees to finish, as urcu_memb_barrier does), then plain stores
 * on a page nobody else can reach. */
inline alloc(q)
{
	atomic {
		if
		:: st[0] == FREE -> q = 0
		:: st[1] == FREE -> q = 1
#ifdef BUG_MR_TO_PRIVATE
		:: st[0] == UNCOV -> q = 0	/* MR1 broken: an uncovered */
		:: st[1] == UNCOV -> q = 1	/* frame for a private use */
#endif
		fi;
		/* handed out once: nobody holds it, no slot has it */
		assert(ref[q] == 0 && slot[0] != q && slot[1] != q);
		st[q] = LIVE
	};
	published[q] = 0;
	ref[q] = 1
}

#ifdef MISS_REUSE
/* MR1: lpc_page_alloc_frame(LPC_ALLOC_MISS): a covered frame, or one off the
 * thread's own t->dfree that no grace period covers yet.  MR2: ref stays 0
 * through the initialisation (flags and identity cleared), so a stale
 * getter's R3 keeps failing on it. */
inline alloc_miss(q)
{
	atomic {
		if
		:: st[0] == FREE || st[0] == UNCOV -> q = 0
		:: st[1] == FREE || st[1] == UNCOV -> q = 1
		fi;
		assert(ref[q] == 0 && slot[0] != q && slot[1] != q);
		st[q] = LIVE
	};
MR2:	atomic { published[q] = 0; ident[q] = NONE }
}
#endif

proctype reader(byte r)
{
	byte k, p;
	bool z, same, incache;

	if
	:: k = 0
	:: k = 1
	fi;
R1:	in_rs[r] = 1;				/* rcu_read_lock */
R2:	p = slot[k];				/* load the slot */
	if
	:: p == NONE -> goto miss
	:: else
	fi;
R3:	atomic {				/* lpc_page_try_get */
		if
		:: ref[p] > 0 ->
			ref[p]++;
			incache = (slot[k] == p)	/* ghost */
		:: else -> goto R2		/* free or frozen: from the root */
		fi
	};
#ifndef BUG_NO_RECHECK
R4:	atomic {				/* re-check the slot */
		same = (slot[k] == p);
		incache = incache || same;	/* ghost */
		/* what R4 accepts: the identity looked up, PUBLISHED (the
		 * debug rule GRACE-PERIOD's place under MR5) */
		assert(!same || (ident[p] == k && published[p]))
	};
	if
	:: !same ->
R4a:		put(p);				/* recycled or removed: drop it */
		goto R2
	:: else
	fi;
#endif
R5:	in_rs[r] = 0;				/* rcu_read_unlock */
R6:
#ifdef NO_INCACHE_CHECK
	assert(st[p] == LIVE && ident[p] == k && ref[p] >= 1);
#else
	assert(st[p] == LIVE && ident[p] == k && ref[p] >= 1 && incache);
#endif
	put(p);					/* the user's lpc_page_put */
	goto done;
miss:
	in_rs[r] = 0;
done:
	skip
}

proctype reclaimer()
{
	byte k, p, q, k2, n, i;
	bool z;

again:
	z = 0;
FA:	index_lock();
	if
	:: slot[0] != NONE -> k = 0
	:: slot[1] != NONE -> k = 1
	:: else -> index_unlock(); goto done
	fi;
	p = slot[k];
FB:	atomic {				/* freeze: CAS ref 1 -> 0 */
		if
		:: ref[p] == 1 -> ref[p] = 0
		:: else -> z = 1		/* held by someone: skip it */
		fi
	};
	if
	:: z -> index_unlock(); goto done
	:: !z				/* frozen: remove it */
	:: !z ->			/* a check after the freeze said keep it */
FB2:		ref[p] = 1;		/* unfreeze: plain store, nobody at 0 */
		index_unlock();
		goto done
	fi;
#ifdef BUG_GP_WHILE_FROZEN
	i = 0;					/* waits for readers (say, an */
	do					/* allocation that runs */
	:: i < NR -> (in_rs[i] == 0); i++	/* urcu_memb_barrier) with a */
	:: else -> break			/* frozen page still in the */
	od;					/* slot: readers spin on it */
#endif
FC:	slot[k] = NONE;				/* remove from the index */
FD:	index_unlock();
#ifdef MISS_REUSE
FE:	atomic {				/* onto the thread's t->dfree */
		assert(ref[p] == 0 && st[p] == LIVE);	/* (OD1), uncovered */
		st[p] = UNCOV
	};
	if
	:: goto MG			/* MR: the miss path, no grace period */
	:: skip				/* covered: a private use, or today's miss */
	fi;
#else
FE:	free_deferred(p);			/* freed after a grace period */
#endif

	/* The miss path recycles a frame (maybe this one) for some index. */
FG:	alloc(q);
	if
	:: k2 = 0
	:: k2 = 1
	fi;
	ident[q] = k2;				/* identity: plain store, private */
FH:	index_lock();
	if
	:: slot[k2] == NONE ->			/* insert */
		ref[q]++;			/* the index's reference (atomic) */
		published[q] = 1;		/* PUBLISHED before the slot store */
		slot[k2] = q;			/* release store: published */
		index_unlock();
		put(q)				/* the owner's reference */
	:: else ->				/* -EEXIST: free ours, private */
		index_unlock();
		put(q)
	fi;
#ifdef MISS_REUSE
	goto done;

	/* MR1-MR4: the miss path on a frame maybe no grace period covers. */
MG:	alloc_miss(q);				/* MR1, MR2: ref 0 */
	if
	:: k2 = 0
	:: k2 = 1
	fi;
#ifdef BUG_MR_REF_EARLY
	atomic { assert(ref[q] == 0); ref[q] = 2 };	/* before PUBLISHED */
#endif
MR3:	atomic { ident[q] = k2; published[q] = 1 };	/* identity, flags */
#ifndef BUG_MR_REF_EARLY
	atomic { assert(ref[q] == 0); ref[q] = 2 };	/* then ref (release) */
#endif
MH:	index_lock();				/* M3 */
	if
	:: slot[k2] == NONE ->			/* insert: the index's ref is */
		slot[k2] = q;			/* one of the two */
		index_unlock();
		put(q)				/* the owner's, after M5 */
	:: else ->				/* -EEXIST */
		index_unlock();
MR4:
#ifdef BUG_MR_PRIVATE_UNPREP
		ref[q] = 1;			/* today's unprep: plain store */
		free_private(q)			/* and the private free */
#else
		atomic { assert(ref[q] > 0); ref[q]-- };	/* both refs, */
		atomic { assert(ref[q] > 0); ref[q]--; z = (ref[q] == 0) };
		if
		:: z ->				/* back onto t->dfree */
#ifdef BUG_MR_UNPREP_TO_FREE
			atomic { assert(st[q] == LIVE); st[q] = FREE }	/* t->free */
#else
			atomic { assert(st[q] == LIVE); st[q] = UNCOV }
#endif
		:: else				/* a stale getter holds one: */
		fi				/* its put frees it (release) */
#endif
	fi;
#endif
done:
	n++;
	if
	:: n < ROUNDS -> goto again
	:: else
	fi
}

proctype truncator()
{
	byte k, p;
	bool z;

TA:	index_lock();
	if
	:: slot[0] != NONE -> k = 0
	:: slot[1] != NONE -> k = 1
	:: else -> index_unlock(); goto done
	fi;
	p = slot[k];
TB:	slot[k] = NONE;				/* remove; users keep the page */
TC:	release(p);				/* drop the index's reference */
TD:	index_unlock();
done:
	skip
}

proctype rcu_cb()
{
	byte i;

end:	do
	:: CB1: atomic {			/* take the pending batch */
#ifdef MISS_REUSE
		(st[0] == PENDING || st[1] == PENDING ||
		 st[0] == UNCOV || st[1] == UNCOV) ->
		if :: st[0] == PENDING || st[0] == UNCOV -> st[0] = GP :: else fi;
		if :: st[1] == PENDING || st[1] == UNCOV -> st[1] = GP :: else fi
#else
		(st[0] == PENDING || st[1] == PENDING) ->
		if :: st[0] == PENDING -> st[0] = GP :: else fi;
		if :: st[1] == PENDING -> st[1] = GP :: else fi
#endif
	   };
#ifndef BUG_NO_GRACE
CB2:		i = 0;				/* the grace period */
		do
		:: i < NR -> (in_rs[i] == 0); i++
		:: else -> i = 0; break
		od;
#endif
CB3:		atomic {			/* onto the free list */
			if :: st[0] == GP -> st[0] = FREE :: else fi;
			if :: st[1] == GP -> st[1] = FREE :: else fi
		}
	od
}

init {
	atomic {
		slot[0] = 0; ident[0] = 0; ref[0] = 1; published[0] = 1;
		slot[1] = 1; ident[1] = 1; ref[1] = 1; published[1] = 1;
		run rcu_cb();
		run reader(0);
#if NR > 1
		run reader(1);
#endif
		run reclaimer();
		run truncator()
	}
}
