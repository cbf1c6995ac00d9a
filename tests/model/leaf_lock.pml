/* SPDX-License-Identifier: MIT */
/*
 * leaf_lock.pml - the radix tree's fast writers, which hold one leaf's lock
 * and no index lock (src/index/radix.c FI1-FI4, FD1-FD3), against a
 * structural delete that empties the leaf, marks it dead and unlinks it
 * (N2-N3 under the index lock), and a lockless reader (reader steps 1-3).
 * Checked exhaustively by spin (see README.md).
 *
 * The world: one inner node whose one slot `link` holds the leaf that
 * covers the three indices, or 0; leaves 1 (there at the start) and 2 (the
 * one a slow insert makes when the first is gone).  Leaf l has slots
 * slot[l*3 + i] (i = 0, 1, 2; 0 empty, else the entry's name), cnt[l],
 * lk[l] (its lock), dead[l]; the index lock is tlock.  At the start leaf 1
 * holds A (index 0) and C (index 2).
 *
 * Processes:
 *   deleter    deletes A the structural way (lpc_radix_delete under the
 *              index lock): leaf lock, N2 (slot NULL, count - 1; count 0:
 *              DEAD in the same hold), unlock, N3 (unlink when emptied).
 *   fdeleter   deletes C the fast way (lpc_radix_leaf_lock: FD1; DEAD:
 *              slow).  FD2 takes the leaf's last entry too while the tree
 *              keeps fewer empty leaves than its bound (KL1: the leaf stays
 *              linked and live, kept + 1); at the bound it refuses, and
 *              deletes slowly, as deleter (either, nondeterministically).
 *   inserter   inserts B (index 1) the fast way (FI1 walk, FI2 lock, FI3
 *              DEAD: slow, FI4 publish), slow under the index lock when
 *              refused: the existing leaf under its lock, or a new leaf 2
 *              published whole with one store to `link`.  Either insert
 *              into a leaf whose count is 0 takes one from kept (KL2).
 *   reader     once the insert has returned, walks from `link` and must
 *              find B (a lost insert is a reader's miss for ever).
 * At the end: the tree holds exactly B, in a live leaf whose count is 1,
 * kept is 0 (no linked leaf is empty); and no leaf was written once
 * unlinked (ghost `gone`).
 *
 * Broken variants, each caught:
 *   BUG_NO_DEAD_CHECK  FI3 without the DEAD check: B goes into the leaf the
 *                      deleter emptied and unlinks (mutant leaf-no-dead).
 *   BUG_DEAD_LATE      DEAD set in a later hold than the one that emptied
 *                      the leaf (after the unlink): an insert between the
 *                      two holds is lost with the leaf.
 *   BUG_KEPT_UNCOUNTED KL1 keeps the leaf without counting it: the insert
 *                      that refills it takes kept below 0 (caught at the
 *                      end: kept is not 0).
 *   BUG_KEPT_DEAD      KL1 marks the kept leaf DEAD, as N2 marks the leaf
 *                      it empties, but nothing unlinks it (only N3 does,
 *                      after a slow delete): the insert, refused at FI3,
 *                      finds the dead leaf still linked (caught in the slow
 *                      insert).
 *
 * FD2 is one choice acted on in the same hold, as the code does: the
 * decision (lpc_radix_leaf_delete_ok, which reads the bound) and the act
 * (lpc_radix_leaf_take) never ask twice, so another leaf's keep reaching
 * the bound between them changes nothing here (the story of a second look
 * that did: tests/regress/regress_kept_bound.c).
 *
 * Abstractions: a lock is an atomic test-and-set; a hold is the steps
 * between its lock and unlock (the other processes interleave with them
 * unless they need the same lock).  RCU: leaves are never reused, so a
 * walk that loaded a leaf may always lock and read it (call_rcu's grace
 * period, which the fast paths' read sections keep); `gone` marks a leaf
 * unlinked.  Tags are left out: FD2 refuses a tagged slot like a last entry,
 * the same slow path.
 */

#define NLEAF 3 /* leaf ids 1, 2; 0 is "none" */
#define A 1
#define B 2
#define C 3

byte slot[NLEAF * 3];
byte cnt[NLEAF];
bool lk[NLEAF];
bool dead[NLEAF];
bool gone[NLEAF]; /* ghost: unlinked */
byte link = 1;
bool tlock;
bool inserted; /* the insert returned */
byte kept;     /* root->kept: empty leaves left linked (KL1-KL2) */
byte done;

inline lock(l) { atomic { !lk[l] -> lk[l] = true } }
inline unlock(l) { lk[l] = false }
inline tree_lock() { atomic { !tlock -> tlock = true } }
inline tree_unlock() { tlock = false }

/* A write to leaf l under its lock: never to an unlinked one. */
inline write_slot(l, i, v)
{
	assert(lk[l] && !gone[l]);
	slot[l * 3 + i] = v
}

/* lpc_radix_delete of index i under the index lock (N2-N3). */
inline slow_delete(i)
{
	byte sl;
	bool emptied;

	tree_lock();
	sl = link;
	assert(sl != 0);
	lock(sl);
	assert(slot[sl * 3 + i] != 0);
	write_slot(sl, i, 0);					/* N2 */
	cnt[sl]--;
	emptied = (cnt[sl] == 0);
#ifndef BUG_DEAD_LATE
	if
	:: emptied -> dead[sl] = true /* in the hold that empties it */
	:: else
	fi;
#endif
	unlock(sl);
	if
	:: emptied ->
		link = 0;					/* N3 */
		gone[sl] = true;
#ifdef BUG_DEAD_LATE
		lock(sl);
		dead[sl] = true;
		unlock(sl)
#endif
	:: else
	fi;
	tree_unlock()
}

proctype deleter()
{
	slow_delete(0);
	done++
}

proctype fdeleter()
{
	byte l;

	l = link;							/* FD1 */
	if
	:: l != 0 ->
		lock(l);
		if
		:: dead[l] -> unlock(l); goto slow
		:: else
		fi;
		assert(slot[l * 3 + 2] == C); /* live: its slot is the tree's */
		if
		:: cnt[l] > 1 ->				/* FD2 */
			write_slot(l, 2, 0);
			cnt[l]--;
			unlock(l);				/* FD3 */
			goto out
		:: cnt[l] == 1 ->				/* FD2, KL1: kept */
			write_slot(l, 2, 0);
			cnt[l]--;
#ifndef BUG_KEPT_UNCOUNTED
			kept++;
#endif
#ifdef BUG_KEPT_DEAD
			dead[l] = true;
#endif
			unlock(l);				/* FD3 */
			goto out
		:: cnt[l] == 1 -> unlock(l); goto slow	/* FD2: the bound reached */
		fi
	:: else
	fi;
slow:
	slow_delete(2);
out:
	done++
}

proctype inserter()
{
	byte l;

	l = link;							/* FI1 */
	if
	:: l != 0 ->
		lock(l);					/* FI2 */
#ifndef BUG_NO_DEAD_CHECK
		if
		:: dead[l] -> unlock(l); goto slow		/* FI3 */
		:: else
		fi;
#endif
		assert(slot[l * 3 + 1] == 0);
		if
		:: cnt[l] == 0 -> kept--			/* KL2 */
		:: else
		fi;
		cnt[l]++;					/* FI4 */
		slot[l * 3 + 1] = B; /* (write_slot, but the bug must reach the end) */
		unlock(l);
		goto out
	:: else
	fi;
slow:
	tree_lock();
	l = link;
	if
	:: l != 0 ->
		lock(l);
		assert(!dead[l]);
		write_slot(l, 1, B);
		if
		:: cnt[l] == 0 -> kept--			/* KL2 */
		:: else
		fi;
		cnt[l]++;
		unlock(l)
	:: else ->
		/* I2-I3: leaf 2 filled privately, then published by one store. */
		slot[2 * 3 + 1] = B;
		cnt[2] = 1;
		link = 2
	fi;
	tree_unlock();
out:
	inserted = true;
	done++
}

proctype reader()
{
	byte l;

	inserted;
	l = link;
	assert(l != 0 && slot[l * 3 + 1] == B);
	done++
}

init
{
	slot[1 * 3 + 0] = A;
	slot[1 * 3 + 2] = C;
	cnt[1] = 2;
	atomic {
		run deleter();
		run fdeleter();
		run inserter();
		run reader()
	}
	done == 4;
	/* The tree holds exactly B, in a live, linked leaf counted right. */
	assert(link != 0 && !dead[link] && !gone[link]);
	assert(slot[link * 3 + 0] == 0 && slot[link * 3 + 1] == B && slot[link * 3 + 2] == 0);
	assert(cnt[link] == 1);
	assert(kept == 0)
}
