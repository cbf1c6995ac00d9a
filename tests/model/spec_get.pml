/* SPDX-License-Identifier: MIT */
/*
 * spec_get.pml - the speculative page reference against freeze, remove,
 * deferred free, reuse and truncate.  Checked exhaustively by spin (see
 * README.md for the command lines and the step -> C function table).
 *
 * The world: NP = 2 page descriptors (type-stable: never go away), K = 2
 * index slots of one file, NR = 2 readers.  At the start page 0 is in slot 0
 * and page 1 in slot 1, each with ref 1 (the index's reference).
 *
 *   ref[p]        atomic reference count; 0 = free, pending free or frozen
 *   ident[p]      the file index page p stands for (its identity)
 *   st[p]         LIVE (private or in use), PENDING (queued for the deferred
 *                 free), GP (in a batch waiting for its grace period), FREE
 *                 (on a free list)
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
 *               ABA), or frees it privately on -EEXIST: FA-FH, ROUNDS times
 *   truncator   lpc_filemap_delete / lpc_filemap_remove_all removing a page users may hold:
 *               TA-TD, once
 *   rcu_cb      liburcu's call_rcu thread running the batched deferred free
 *               (free_batch_rcu): CB1-CB3, a grace period per batch
 *
 * Grace period model: CB2 waits, reader by reader, until in_rs[i] is false
 * at some instant after the batch was taken (CB1).  That is sound (every read
 * section open at CB1 has closed) and complete (the waits are invisible to
 * the other processes, so the scheduler can run each one at the earliest
 * instant a real grace period could end).
 *
 * What is checked (all by assertions; the search also reports any invalid
 * end state, e.g. a process blocked for ever; and, in the progress run with
 * -DROUNDS=1 under weak fairness, that there is no infinite execution at all:
 * no reader livelocks in the retry loops):
 *   R6   the page returned is LIVE, has the identity asked for, holds a
 *        reference, and was in slot[k] at some instant while the reader held
 *        its reference (ghost `incache`: "only then is the page yours")
 *   put  ref never drops below 0 (asserted before every decrement)
 *   free a page is freed only at ref 0 and only once; the private fast path
 *        (free_private) asserts the owner really holds the only reference
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
 * Extra switch: NO_INCACHE_CHECK drops the ghost from R6 (used to show that
 * with the deferred free the identity check alone cannot see BUG_NO_RECHECK).
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
 *
 * The model is sequentially consistent: the memory orders are argued in the
 * C comments (page.h, lookup.c, alloc.c), not here.
 */

#define NONE	255
#define NP	2
#define K	2
#define NR	2
#ifndef ROUNDS
#define ROUNDS	2	/* reclaim-and-recycle rounds */
#endif

#define LIVE	0
#define PENDING	1
#define GP	2
#define FREE	3

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
		fi;
		st[q] = LIVE
	};
	published[q] = 0;
	ref[q] = 1
}

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
		incache = incache || same	/* ghost */
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
FE:	free_deferred(p);			/* freed after a grace period */

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
		(st[0] == PENDING || st[1] == PENDING) ->
		if :: st[0] == PENDING -> st[0] = GP :: else fi;
		if :: st[1] == PENDING -> st[1] = GP :: else fi
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
		run reader(1);
		run reclaimer();
		run truncator()
	}
}
