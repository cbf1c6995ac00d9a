/* SPDX-License-Identifier: MIT */
/*
 * pin.pml - lpc_pin's lockless fast path (src/filemap/pin.c, P1-P5) against
 * freeze (lpc_invalidate, eviction), truncate-like removal (last close,
 * failed read, truncate) and the removal of a leaf node of the radix tree
 * that the pinner is walking.  Checked exhaustively by spin (README.md).
 *
 * The world: K = 2 indices, the pinned range; each lies in a leaf node of
 * its own (the range crosses a leaf boundary), so every delete empties its
 * leaf and removes the node (radix.c N2-N3: the parent's slot is cleared and
 * the node freed after a grace period, its own slot left NULL).  NP = 2 page
 * descriptors and NN = 3 node descriptors, both type-stable and recycled:
 * a removed page's frame and a removed leaf come back for another index.
 *
 *   ref[p], ident[p], pst[p]   as spec_get.pml: count, identity, LIVE/PENDING/GP/FREE
 *   leaf[k]       the parent's slot for index k: a node or NONE
 *   nslot[n]      node n's one slot: a page or NONE
 *   nst[n], nkey[n]  node state (LIVE/PENDING/GP/FREE) and the index it covers
 *   in_rs         the pinner's read section
 *
 * Pinner (P1-P5, then the caller's use and lpc_unpin): walks k = 0, 1 in
 * order; P2 loads leaf[k] then the node's slot; P3 adds BIAS unless ref is 0;
 * P4 reloads the same node slot.  The first failure ends the fast path (the
 * slow path, lpc_page_get, is spec_get.pml's); the pages already pinned are
 * kept, as in the C.  Every pinned page is checked at P5 and again at unpin
 * (after any number of other steps): LIVE, the identity asked for, pinned,
 * and in the index at some instant while pinned (ghost `incache`, set at P3
 * or P4).  Remover (freeze, as invalidate_one): CAS ref 1 -> 0, delete,
 * unlink the emptied leaf, free both after a grace period; then the miss
 * path recycles a frame and a node for an index.  Truncator: delete and drop
 * the index's reference (holders keep the page), unlink the leaf.
 *
 * Broken variants, each caught by an assertion:
 *   BUG_NO_RECHECK    skip P4: a page removed truncate-like between P2 and
 *                     P3 is returned pinned though no longer cached
 *   BUG_PLAIN_PIN     P3 adds the bias without "unless zero": it lands on a
 *                     frozen page, which the remover frees under the pin
 *   BUG_NODE_NO_GRACE a removed leaf is freed without a grace period: the
 *                     pinner, still walking it, reads a slot of the node
 *                     reused for another index and pins the wrong page
 *
 * Sequentially consistent; the memory orders are argued in pin.c and radix.c.
 *
 * With -DWPIN the file is the model of write pins instead
 * (src/writeback/wpin.c WP1-WP5, WU1-WU2) against writeback (K1-K5) and a
 * reader of lpc_pread (optimistic O-steps, then the fallback F3 under the
 * page lock).  One page of two words d[0], d[1]; the pinner writes the
 * value 1 to both through its pin (the holder's bytes land one by one);
 * writeback copies the words to disk[] between K3 and K5.  Checked:
 *   - stable pages: no word changes while WRITEBACK is set (the copy at K5
 *     equals the page), and writeback never starts on a write-pinned page;
 *   - readers never return a mix (one word old, one new) as a completed
 *     read, optimistic or under the lock;
 *   - no lost write: once both are done, a clean page equals the disk.
 * Broken variants, each caught by an assertion:
 *   BUG_NO_STABLE   the pin does not wait for a write in flight (no WP3)
 *   BUG_WB_NO_LOCK  K1 goes on without the page lock (writeback starts on
 *                   a write-pinned page)
 *   BUG_NO_SEQ      the pin does not open the seq write section (WP5): an
 *                   optimistic reader accepts a copy taken mid-write
 */
#ifdef WPIN
bit locked, dirty, wb, wpinned;
byte seq;
byte d[2];
byte disk[2];
bit pin_done, wb_done;

inline lock_page() {
	atomic { !locked -> locked = 1 }
}

proctype Pinner()
{
	/* WP1: lock; WP3: stable pages */
	lock_page();
#ifndef BUG_NO_STABLE
	do
	:: wb -> locked = 0; (!wb); lock_page()
	:: else -> break
	od;
#endif
	wpinned = 1;
#ifndef BUG_NO_SEQ
	seq++;					/* WP5: the section opens */
#endif
	d[0] = 1;				/* the holder writes */
	d[1] = 1;
	dirty = 1;				/* WU1 */
#ifndef BUG_NO_SEQ
	seq++;					/* WU2 */
#endif
	wpinned = 0;
	locked = 0;
	pin_done = 1
}

proctype Writeback()
{
	byte pass = 0, w0, w1;

	do
	:: pass < 2 ->
#ifndef BUG_WB_NO_LOCK
		lock_page();			/* K1 */
#endif
		if
		:: dirty ->
			assert(!wpinned);	/* rule WPIN-WRITEBACK */
			dirty = 0; wb = 1	/* K3 */
		:: else -> skip
		fi;
#ifndef BUG_WB_NO_LOCK
		locked = 0;
#endif
		if
		:: wb ->
			w0 = d[0];		/* K4: the write reads the page */
			w1 = d[1];
			assert(w0 == d[0] && w1 == d[1]); /* stable while in flight */
			disk[0] = w0; disk[1] = w1;
			wb = 0			/* K5 */
		:: else -> skip
		fi;
		pass++
	:: else -> break
	od;
	wb_done = 1
}

proctype Reader()
{
	byte s1, r0, r1;

	/* O-steps: seq even, copy, seq unchanged */
	s1 = seq;
	if
	:: s1 % 2 == 0 ->
		r0 = d[0]; r1 = d[1];
		if
		:: seq == s1 -> assert(r0 == r1); goto done	/* accepted */
		:: else -> skip
		fi
	:: else -> skip
	fi;
	/* F3: the copy under the page lock */
	lock_page();
	r0 = d[0]; r1 = d[1];
	locked = 0;
	assert(r0 == r1);
done:
	skip
}

init {
	d[0] = 0; d[1] = 0; dirty = 1;	/* a dirty page: writeback may take it first */
	atomic { run Pinner(); run Writeback(); run Reader() }
	(pin_done && wb_done);
	/* No lost write: a page left clean is on disk. */
	assert(dirty || (disk[0] == d[0] && disk[1] == d[1]))
}
#else

#define NONE	255
#define NP	2
#define NN	3
#define K	2
#define BIAS	4

#define LIVE	0
#define PENDING	1
#define GP	2
#define FREE	3

byte ref[NP];
byte ident[NP];
byte pst[NP];
byte leaf[K];
byte nslot[NN];
byte nst[NN];
byte nkey[NN];
bool in_rs;
bool ilock;

inline index_lock()
{
	atomic { ilock == 0 -> ilock = 1 }
}

inline index_unlock()
{
	ilock = 0
}

/* lpc_page_release / lpc_page_unpin's last drop: free after a grace period. */
inline drop(p, d)
{
	atomic {
		assert(ref[p] >= d);
		ref[p] = ref[p] - d;
		if
		:: ref[p] == 0 -> assert(pst[p] == LIVE); pst[p] = PENDING
		:: else
		fi
	}
}

/* radix.c N2-N3 for index k (its leaf holds only k): clear the slot, unlink
 * the leaf, free it with call_rcu.  Context: index lock. */
inline delete_leaf(k)
{
	n = leaf[k];
	nslot[n] = NONE;			/* N2 */
	leaf[k] = NONE;				/* N3: the parent's slot */
#ifdef BUG_NODE_NO_GRACE
	nst[n] = FREE
#else
	nst[n] = PENDING			/* call_rcu */
#endif
}

proctype pinner()
{
	byte k, n, p, got;
	byte pg[K];
	bool inc[K], ok;

	k = 0;
P1:	in_rs = 1;
	do
	:: k < K ->
P2:		n = leaf[k];
		if
		:: n == NONE -> break
		:: else
		fi;
		p = nslot[n];
		if
		:: p == NONE -> break
		:: else
		fi;
P3:		atomic {
#ifdef BUG_PLAIN_PIN
			ok = 1;
			ref[p] = ref[p] + BIAS;
#else
			ok = (ref[p] > 0);
			if
			:: ok -> ref[p] = ref[p] + BIAS
			:: else
			fi;
#endif
			inc[k] = ok && (leaf[k] != NONE && nslot[leaf[k]] == p)	/* ghost */
		};
		if
		:: !ok -> break
		:: else
		fi;
#ifndef BUG_NO_RECHECK
P4:		atomic {
			ok = (nslot[n] == p);
			inc[k] = inc[k] || (ok && leaf[k] == n)		/* ghost */
		};
		if
		:: !ok -> drop(p, BIAS); break
		:: else
		fi;
#endif
		pg[k] = p;
		k++
	:: else -> break
	od;
	got = k;
P5:	in_rs = 0;
	k = 0;
	do					/* the caller uses its pins */
	:: k < got ->
		p = pg[k];
		assert(pst[p] == LIVE && ident[p] == k && ref[p] >= BIAS && inc[k]);
		k++
	:: else -> break
	od;
	k = 0;
	do					/* lpc_unpin, after any steps */
	:: k < got ->
		p = pg[k];
		assert(pst[p] == LIVE && ident[p] == k && ref[p] >= BIAS);
		drop(p, BIAS);
		k++
	:: else -> break
	od
}

/* The miss path after a removal: a frame and a leaf for some free index. */
inline recycle()
{
	atomic {
		if
		:: pst[0] == FREE -> q = 0
		:: pst[1] == FREE -> q = 1
		:: else -> q = NONE
		fi;
		if
		:: q != NONE -> pst[q] = LIVE; ref[q] = 1
		:: else
		fi
	};
	if
	:: q != NONE ->
		if
		:: k2 = 0
		:: k2 = 1
		fi;
		ident[q] = k2;
		index_lock();
		if
		:: leaf[k2] == NONE ->
			atomic {
				if
				:: nst[0] == FREE -> n = 0
				:: nst[1] == FREE -> n = 1
				:: nst[2] == FREE -> n = 2
				:: else -> n = NONE
				fi
			};
			if
			:: n != NONE ->
				nst[n] = LIVE; nkey[n] = k2;
				ref[q]++;		/* the index's */
				nslot[n] = q;		/* filled privately */
				leaf[k2] = n;		/* published: one store */
				index_unlock();
				drop(q, 1)
			:: else ->
				index_unlock();
				atomic { ref[q] = 0; pst[q] = FREE }	/* private free */
			fi
		:: else ->
			index_unlock();
			atomic { ref[q] = 0; pst[q] = FREE }
		fi
	:: else
	fi
}

proctype remover()
{
	byte k, n, p, q, k2;
	bool z;

	index_lock();
	if
	:: leaf[0] != NONE -> k = 0
	:: leaf[1] != NONE -> k = 1
	:: else -> index_unlock(); goto done
	fi;
	p = nslot[leaf[k]];
A:	atomic {				/* freeze */
		z = (ref[p] == 1);
		if
		:: z -> ref[p] = 0
		:: else
		fi
	};
	if
	:: !z -> index_unlock(); goto done
	:: else
	fi;
B:	delete_leaf(k);
	index_unlock();
C:	atomic { assert(pst[p] == LIVE); pst[p] = PENDING };
	recycle();
done:
	skip
}

proctype truncator()
{
	byte k, n, p, q, k2;

	index_lock();
	if
	:: leaf[0] != NONE -> k = 0
	:: leaf[1] != NONE -> k = 1
	:: else -> index_unlock(); goto done
	fi;
	p = nslot[leaf[k]];
TB:	delete_leaf(k);
TC:	drop(p, 1);				/* the index's reference */
	index_unlock();
	recycle();
done:
	skip
}

proctype rcu_cb()
{
end:	do
	:: atomic {
		(pst[0] == PENDING || pst[1] == PENDING || nst[0] == PENDING ||
		 nst[1] == PENDING || nst[2] == PENDING) ->
		if :: pst[0] == PENDING -> pst[0] = GP :: else fi;
		if :: pst[1] == PENDING -> pst[1] = GP :: else fi;
		if :: nst[0] == PENDING -> nst[0] = GP :: else fi;
		if :: nst[1] == PENDING -> nst[1] = GP :: else fi;
		if :: nst[2] == PENDING -> nst[2] = GP :: else fi
	   };
		(in_rs == 0);			/* the grace period */
		atomic {
			if :: pst[0] == GP -> pst[0] = FREE :: else fi;
			if :: pst[1] == GP -> pst[1] = FREE :: else fi;
			if :: nst[0] == GP -> nslot[0] = NONE; nst[0] = FREE :: else fi;
			if :: nst[1] == GP -> nslot[1] = NONE; nst[1] = FREE :: else fi;
			if :: nst[2] == GP -> nslot[2] = NONE; nst[2] = FREE :: else fi
		}
	od
}

init {
	atomic {
		ref[0] = 1; ident[0] = 0; pst[0] = LIVE;
		ref[1] = 1; ident[1] = 1; pst[1] = LIVE;
		nslot[0] = 0; nst[0] = LIVE; nkey[0] = 0; leaf[0] = 0;
		nslot[1] = 1; nst[1] = LIVE; nkey[1] = 1; leaf[1] = 1;
		nslot[2] = NONE; nst[2] = FREE;
		run rcu_cb();
		run pinner();
		run remover();
		run truncator()
	}
}
#endif /* WPIN */
