/* SPDX-License-Identifier: MIT */
/*
 * evict.pml - eviction (reclaim's freeze-and-delete, steps E1-E7) against
 * speculative getters, a holder that locks and dirties the page, a miss that
 * inserts a new page at the same index, truncate-like removal (file close,
 * a failed read) and the allocator recycling frames.  Checked exhaustively by
 * spin (see README.md for the command lines and the step -> C table).
 *
 * The world: NP = 2 page descriptors (type-stable), K = 2 index slots of one
 * file, and no free frame: at the start page 0 is cached at index 0 and page
 * 1 at index 1, each UPTODATE and PUBLISHED with ref 1 (the index's), so the
 * miss can only get a frame that eviction (or truncate) freed: a recycled
 * descriptor, maybe for the other index.
 *
 *   ref[p]        atomic reference count; 0 = free, pending free or frozen
 *   flags[p]      LK (LOCKED), DT (DIRTY; WRITEBACK behaves the same here),
 *                 UP (UPTODATE), RF (REFERENCED), PB (PUBLISHED)
 *   pfile[p]      p->file names the file (1) or is NULL (0); one file here
 *   ident[p]      p->index
 *   data[p]       the identity whose data the frame holds (a recycled frame
 *                 keeps its old contents until the miss's read, M4)
 *   st[p]         LIVE, PENDING (queued for the deferred free), GP (in a
 *                 batch waiting for its grace period), FREE
 *   slot[k]       the index; ilock the file's index lock (tree_lock, or
 *                 tree_rwlock held for writing); rdrs its readers in LOCKED
 *                 mode
 *   file_freed    ghost: the struct lpc_file has been freed (-DCLOSE)
 *   in_rs[i]      process i is inside an RCU read section
 *   holders[p]    ghost: references held by users (getters, the holder, the
 *                 miss's owner), counted independently of ref[p]
 *   missq, miss_done, q_gone   ghosts for "no lost insert": the page the
 *                 miss inserted, set at its insert; q_gone is set when that
 *                 page leaves the index by a legitimate removal (E6, TB)
 *
 * Processes (steps are the labels; README.md maps them to the C code):
 *   getter(r)   lpc_page_find: R1-R5 on a slot chosen nondeterministically
 *               (or, once the miss has inserted, on the miss's index: the
 *               "later getter" of the no-lost-insert check), then R6
 *   holder      gets the page at index 0, locks it (LOCKED), maybe dirties
 *               it, unlocks and puts it: H1-H4
 *   evictor     E1-E7, EROUNDS pages, each chosen nondeterministically (any
 *               position of the clock hand)
 *   miss        lpc_page_get on index 0: M0 the lookup (a hit ends it), M1
 *               a frame (none free: -ENOMEM), M2-M5, then the caller's use
 *               and put; -EEXIST frees its page privately and looks up again
 *   truncator   lpc_filemap_delete / lpc_filemap_remove_all: TA-TD, once
 *               (-DNO_TRUNCATOR drops it)
 *   closer      (-DCLOSE, instead of the truncator) the last lpc_file_close
 *               once every user call returned: CL1-CL3 remove all pages,
 *               CL4 a grace period, CL5 frees the struct lpc_file
 *   rcu_cb      the call_rcu thread running the batched deferred free: CB1-CB3
 *               (it stands as well for the other takers of pending, whose
 *               steps are the same - take pending, one grace period, free:
 *               the reclaimer's lpc_page_pending_drain, which is where
 *               evicted pages (E7, lpc_page_free_evicted) go since issue
 *               11's measurement, and the allocator's reclaim() T2)
 *
 * Grace period model (as in spec_get.pml): CB2 waits, process by process,
 * until in_rs[i] is 0 at some instant after CB1: sound and complete.
 *
 * What is checked:
 *   R6   a page a getter returns is LIVE, has the identity asked for, holds
 *        its reference (ref >= holders > 0: no reference of a holder was
 *        lost), was in the slot while the reference was held (incache), and
 *        if UPTODATE holds the data of that identity
 *   M2, free  the owner's plain stores on a private page (M2, the -EEXIST
 *        free, page_init_private) and every free (deferred, private, CB3) see
 *        no holder: no page is freed or reused while anyone holds it; a page
 *        queued for the deferred free is in no slot
 *   E6   the evictor deletes the slot of the page it froze, and only a page
 *        nobody holds that is neither LOCKED nor DIRTY
 *   E2b  (-DCLOSE) the file an evictor reads from p->file and trylocks has
 *        not been freed
 *   R2'  a getter that starts after the miss inserted q finds q in the slot,
 *        unless q was removed since by E6 or TB (no lost insert)
 *   put  ref never drops below 0
 *   progress (--np --fair): no fair infinite execution: getters do not spin
 *        for ever on a frozen page
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_EVICT_NO_SLOT_CHECK     skip E3: a stale identity (the page was
 *                               truncated, or recycled for another index)
 *                               makes the evictor freeze a page that is not
 *                               in that slot and delete whatever the slot holds
 *   BUG_EVICT_NO_RECHECK        skip E5: a page dirtied by a holder that has
 *                               put it since E1 is evicted (a lost write)
 *   BUG_EVICT_CHECK_THEN_STORE  E4 as "ref == 1, then ref = 0": a getter's
 *                               reference taken in between is wiped out
 *   BUG_EVICT_NO_GRACE          E7 frees at once: a getter that loaded the
 *                               page before E6 takes a reference on the
 *                               recycled page under its new owner's plain
 *                               stores
 *   BUG_EVICT_GP_WHILE_FROZEN   (progress run) the evictor waits for a grace
 *                               period between E4 and E6: a getter spins on
 *                               the frozen page inside its read section
 *   BUG_KEEP_FILE_POINTER       (-DCLOSE) removal leaves p->file set (as the
 *                               C code does today): an evictor whose E1 saw
 *                               the page cached enters its read section after
 *                               close's grace period, reads the stale
 *                               p->file and trylocks a freed file
 *   BUG_CLOSE_NO_GRACE          (-DCLOSE) close frees the file right after
 *                               removing its pages (file_free today)
 *   BUG_EVICT_TRYLOCK_IGNORES_READERS  (-DLOCKED_MODE) the evictor's trylock
 *                               takes tree_lock, not tree_rwlock for writing:
 *                               a LOCKED-mode lookup's plain increment lands
 *                               on the frozen page (0 -> 1) and the evictor
 *                               deletes and frees a page the getter holds
 *
 * Other switches: NG (getters, default 1), EROUNDS (pages the evictor looks
 * at, default 1), NO_TRUNCATOR, NO_HOLDER, NO_MISS, CLOSE, LOCKED_MODE.
 *
 * The model is sequentially consistent; the memory orders are argued in the
 * C comments.  The seq bump of E6 is not modelled (nothing here reads seq).
 */

#define NONE	255
#define NP	2
#define K	2
#ifndef NG
#define NG	1		/* getters */
#endif
#define HOLDER	NG		/* in_rs index of the holder */
#define EVICTOR	(NG + 1)	/* in_rs index of the evictor */
#define NRS	(NG + 2)
#ifndef EROUNDS
#define EROUNDS	1		/* pages the evictor looks at */
#endif
#define MK	0		/* the miss's index */

#define LIVE	0
#define PENDING	1
#define GP	2
#define FREE	3

#define LK	1
#define DT	2
#define UP	4
#define RF	8
#define PB	16
#define BUSY	(LK | DT)

byte ref[NP];
byte flags[NP];
byte ident[NP];
bool pfile[NP];
byte data[NP];
byte st[NP];
byte holders[NP];
byte slot[K];
bool in_rs[NRS];
bool ilock;
byte rdrs;		/* LOCKED mode: readers holding tree_rwlock */
bool file_freed;
byte ndone;		/* users (getters, holder, miss) done: close may run */
byte missq = NONE;
bool miss_done;
bool q_gone;

#ifdef CLOSE
#if defined(NO_HOLDER) || defined(NO_MISS)
#error "-DCLOSE wants the holder and the miss"
#endif
#define NUSERS		(NG + 2)
#define USER_DONE	ndone++
#else
#define USER_DONE	skip
#endif

inline index_lock()
{
	atomic { ilock == 0 && rdrs == 0 -> ilock = 1 }
}

inline index_unlock()
{
	ilock = 0
}

inline not_cached(p)
{
	assert(slot[0] != p && slot[1] != p)
}

/* B steps: a page that leaves the index forgets its file (p->file = NULL,
 * under the index lock, before the slot's grace period starts), so that an
 * evictor's stale read of p->file never names a file freed since. */
#ifdef BUG_KEEP_FILE_POINTER
#define forget_file(p)	skip
#else
#define forget_file(p)	pfile[p] = 0
#endif

/* lpc_page_free_deferred. */
inline free_deferred(p)
{
	atomic {
		assert(ref[p] == 0 && st[p] == LIVE && holders[p] == 0);
		not_cached(p);
		st[p] = PENDING
	}
}

/* lpc_page_free_private: the caller is the page's only user. */
inline free_private(p)
{
	atomic {
		assert(ref[p] == 1 && st[p] == LIVE && holders[p] == 0);
		not_cached(p);
		ref[p] = 0;
		flags[p] = 0;
		st[p] = FREE
	}
}

/* lpc_page_release (the slow half of lpc_page_put); the ghost holder count
 * is dropped by the caller. */
inline release(p)
{
	atomic { assert(ref[p] > 0); ref[p]--; z = (ref[p] == 0) };
	if
	:: z -> free_deferred(p)
	:: else
	fi
}

/* lpc_page_put by a user: PUBLISHED clear -> private fast path. */
inline put(p)
{
	atomic { assert(holders[p] > 0); holders[p]-- };
	if
	:: !(flags[p] & PB) -> free_private(p)
	:: else -> release(p)
	fi
}

/*
 * R1-R5 for process i on slot k: p is the page with a reference held, or
 * NONE (a miss).  The whole retry loop stays in one read section.
 * -DLOCKED_MODE: the file's lookups are filemap_get_locked instead: the
 * slot and a plain increment under tree_rwlock held for reading.
 */
#ifdef LOCKED_MODE
inline spec_get(i, k, p)
{
	incache = 0;
RL1:	atomic { ilock == 0 -> rdrs++ };	/* pthread_rwlock_rdlock */
RL2:	atomic {
		p = slot[k];
		assert(!late || p == missq || q_gone);
		if
		:: p != NONE ->
			ref[p]++;		/* fetch_add: no zero check */
			holders[p]++;
			incache = 1
		:: else
		fi
	};
RL3:	rdrs--
}
#else
inline spec_get(i, k, p)
{
	incache = 0;
R1:	in_rs[i] = 1;
R2:	atomic {
		p = slot[k];
		/* no lost insert: a getter that started after the miss's insert
		 * finds q unless q was removed since */
		assert(!late || p == missq || q_gone)
	};
	if
	:: p == NONE -> goto R5
	:: else
	fi;
R3:	atomic {				/* lpc_page_get_unless_zero */
		if
		:: ref[p] > 0 ->
			ref[p]++;
			holders[p]++;
			incache = (slot[k] == p)	/* ghost */
		:: else -> goto R2		/* free or frozen: from the root */
		fi
	};
R4:	atomic {
		same = (slot[k] == p);
		incache = incache || same
	};
	if
	:: !same ->
R4a:		put(p);
		goto R2
	:: else
	fi;
R5:	in_rs[i] = 0
}
#endif

proctype getter(byte r)
{
	byte k, p, f;
	bool z, same, incache, late;

	if
	:: k = 0
	:: k = 1
	:: miss_done -> k = MK; late = 1	/* a later getter */
	fi;
	spec_get(r, k, p);
	if
	:: p == NONE -> goto done
	:: else
	fi;
R6:	atomic {
		assert(st[p] == LIVE && ident[p] == k && holders[p] > 0 &&
		       ref[p] >= holders[p] && incache);
		f = flags[p];
		assert(!(f & UP) || data[p] == k)
	};
	if
	:: (f & UP) && !(f & RF) ->		/* lpc_page_mark_referenced */
		flags[p] = flags[p] | RF
	:: else				/* not UPTODATE: find says -EAGAIN */
	fi;
	put(p);
done:
	skip;
	d_step { k = 0; p = 0; f = 0; same = 0; incache = 0; late = 0 };
	USER_DONE
}

proctype holder()
{
	byte k, p;
	bool z, same, incache, late;

	k = 0;
	spec_get(HOLDER, k, p);
	if
	:: p == NONE -> goto done
	:: else
	fi;
H1:	atomic { !(flags[p] & LK) -> flags[p] = flags[p] | LK };	/* lpc_page_lock */
	assert(st[p] == LIVE && ident[p] == k && ref[p] >= holders[p]);
H2:	if
	:: flags[p] = flags[p] | DT		/* a write: DIRTY */
	:: skip
	fi;
H3:	flags[p] = flags[p] & ~LK;		/* lpc_page_unlock */
H4:	put(p);
done:
	skip;
	d_step { p = 0; same = 0; incache = 0 };
	USER_DONE
}

proctype evictor()
{
	byte n, p, r, f, i;
	bool z;

again:
	if
	:: p = 0
	:: p = 1
	fi;
E1:	atomic {				/* relaxed loads: a pre-filter */
		r = ref[p];
		f = flags[p];
		if
		:: r != 1 || !(f & PB) || (f & BUSY) -> goto next
		:: else -> r = 0
		fi
	};
	if
	:: f & RF ->
E1c:		flags[p] = flags[p] & ~RF;	/* second chance */
		goto next
	:: else
	fi;
E2:	in_rs[EVICTOR] = 1;
E2a:	atomic {				/* p->file, p->index: may be */
		z = pfile[p];			/* stale, or NULL */
		i = ident[p];
		if
		:: !z -> goto leave
		:: else -> z = 0
		fi
	};
E2b:	atomic {				/* trylock, never block */
		assert(!file_freed);		/* f's memory, f's lock */
		if
#ifdef BUG_EVICT_TRYLOCK_IGNORES_READERS
		:: ilock == 0 -> ilock = 1; f = 0
#else
		:: ilock == 0 && rdrs == 0 -> ilock = 1; f = 0
#endif
		:: else -> goto leave
		fi
	};
#ifndef BUG_EVICT_NO_SLOT_CHECK
E3:	if
	:: slot[i] != p -> goto unlock
	:: else
	fi;
#endif
#ifdef BUG_EVICT_CHECK_THEN_STORE
E4:	if
	:: ref[p] == 1
	:: else -> goto unlock
	fi;
E4b:	ref[p] = 0;
#else
E4:	atomic {				/* freeze: CAS ref 1 -> 0 */
		if
		:: ref[p] == 1 -> ref[p] = 0
		:: else -> goto unlock
		fi
	};
#endif
#ifndef BUG_EVICT_NO_RECHECK
E5:	f = flags[p];
	if
	:: f & BUSY ->
E5a:		ref[p] = 1;			/* unfreeze */
		goto unlock
	:: else
	fi;
#endif
#ifdef BUG_EVICT_GP_WHILE_FROZEN
	r = 0;					/* synchronize_rcu with the */
	do					/* frozen page in the slot */
	:: r < NRS && r != EVICTOR -> (in_rs[r] == 0); r++
	:: r == EVICTOR -> r++
	:: else -> break
	od;
#endif
E6:	atomic {				/* delete the slot */
		assert(slot[i] == p);		/* the page it froze */
		assert(holders[p] == 0);	/* nobody holds it */
		assert(ref[p] == 0);		/* still frozen */
		assert(!(flags[p] & BUSY));	/* not LOCKED, not DIRTY */
		slot[i] = NONE;
		forget_file(p);
		if
		:: p == missq -> q_gone = 1
		:: else
		fi
	};
E6b:	index_unlock();
E6c:	in_rs[EVICTOR] = 0;
#ifdef BUG_EVICT_NO_GRACE
E7:	atomic {				/* straight onto the free list */
		assert(ref[p] == 0 && st[p] == LIVE && holders[p] == 0);
		st[p] = FREE
	};
#else
E7:	free_deferred(p);
#endif
	goto next;
unlock:
	index_unlock();
leave:
	in_rs[EVICTOR] = 0;
next:
	skip;
	d_step { r = 0; f = 0; i = 0; z = 0 };
	n++;
	if
	:: n < EROUNDS -> goto again
	:: else
	fi
}

proctype miss()
{
	byte q;
	bool z;

M0:	if
	:: slot[MK] == NONE			/* the lookup missed */
	:: else -> goto mdone			/* a hit: a getter's business */
	fi;
M1:	atomic {				/* alloc_frame + page_init_private */
		if
		:: st[0] != FREE && st[1] != FREE -> goto mdone	/* -ENOMEM */
		:: else
		fi;
		if
		:: st[0] == FREE -> q = 0
		:: st[1] == FREE -> q = 1
		fi;
		assert(ref[q] == 0 && holders[q] == 0);
		st[q] = LIVE;
		pfile[q] = 0;			/* file NULL, index 0 */
		ident[q] = 0;
		flags[q] = 0;
		ref[q] = 1
	};
M2:	atomic { pfile[q] = 1; ident[q] = MK };	/* plain stores: private */
M2b:	atomic {
		assert(holders[q] == 0);	/* "nobody else can see it" */
		flags[q] = LK | PB;
		ref[q] = 2;
		holders[q] = 1			/* ours; the other is the index's */
	};
M3:	index_lock();
	if
	:: slot[MK] == NONE ->
		atomic { slot[MK] = q; missq = q; miss_done = 1; q_gone = 0 };
		index_unlock()
	:: else ->				/* -EEXIST */
		index_unlock();
M3b:		atomic {
			holders[q]--;
			assert(holders[q] == 0 && ref[q] == 2);
			forget_file(q);		/* it was never in the index */
			ref[q] = 1
		};
		free_private(q);
		d_step { q = 0; z = 0 };
		goto M0
	fi;
M4:	data[q] = MK;				/* the read, under the page lock */
M5:	flags[q] = (flags[q] | UP) & ~LK;	/* lpc_page_unlock_set */
M6:	assert(st[q] == LIVE && ident[q] == MK && data[q] == MK &&
	       holders[q] > 0 && ref[q] >= holders[q]);
	put(q);					/* the caller's lpc_page_put */
mdone:
	skip;
	d_step { q = 0; z = 0 };
	USER_DONE
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
TB:	atomic {
		slot[k] = NONE;			/* users keep the page */
		forget_file(p);
		if
		:: p == missq -> q_gone = 1
		:: else
		fi
	};
TC:	release(p);				/* the index's reference */
TD:	index_unlock();
done:
	skip
}

#ifdef CLOSE
/*
 * lpc_file_close of the last opener, after every user call on the file has
 * returned: CL1-CL3 remove every page (lpc_filemap_remove_all), CL4 waits
 * for a grace period, CL5 frees the struct lpc_file (its lock and tree).  Evictors
 * may still hold stale pointers to its pages.
 */
proctype closer()
{
	byte p, i;
	bool z;

endCL0:	ndone == NUSERS;
CL1:	index_lock();
	do
	:: slot[0] != NONE -> p = slot[0];
CL2:		atomic { slot[0] = NONE; forget_file(p) };
		release(p)
	:: slot[1] != NONE -> p = slot[1];
CL2b:		atomic { slot[1] = NONE; forget_file(p) };
		release(p)
	:: else -> break
	od;
CL3:	index_unlock();
#ifndef BUG_CLOSE_NO_GRACE
CL4:	i = 0;
	do
	:: i < NRS -> (in_rs[i] == 0); i++
	:: else -> break
	od;
#endif
CL5:	file_freed = 1
}
#endif

proctype rcu_cb()
{
	byte i;

end:	do
	:: atomic {			/* CB1 */
		(st[0] == PENDING || st[1] == PENDING) ->
		if :: st[0] == PENDING -> st[0] = GP :: else fi;
		if :: st[1] == PENDING -> st[1] = GP :: else fi
	   };
CB2:		i = 0;
		do
		:: i < NRS -> (in_rs[i] == 0); i++
		:: else -> i = 0; break
		od;
CB3:		atomic {
			if
			:: st[0] == GP -> assert(holders[0] == 0 && ref[0] == 0); st[0] = FREE
			:: else
			fi;
			if
			:: st[1] == GP -> assert(holders[1] == 0 && ref[1] == 0); st[1] = FREE
			:: else
			fi
		}
	od
}

init {
	byte g;

	atomic {
		slot[0] = 0; ident[0] = 0; pfile[0] = 1; data[0] = 0; ref[0] = 1; flags[0] = UP | PB;
		slot[1] = 1; ident[1] = 1; pfile[1] = 1; data[1] = 1; ref[1] = 1; flags[1] = UP | PB;
		run rcu_cb();
		g = 0;
		do
		:: g < NG -> run getter(g); g++
		:: else -> break
		od;
#ifndef NO_HOLDER
		run holder();
#endif
		run evictor();
#ifndef NO_MISS
		run miss();
#endif
#ifdef CLOSE
		run closer()
#else
#ifndef NO_TRUNCATOR
		run truncator()
#endif
#endif
	}
}
