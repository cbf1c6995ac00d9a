/* SPDX-License-Identifier: MIT */
/*
 * ws_target.pml - refaults and CLOCK2's active target (page/workingset.c):
 * shadows stored by evictors and taken by misses, and the target moved by
 * each refault within its bounds.  Checked exhaustively by spin; the broken
 * variants (-DBUG_*) must be caught.
 *
 * The world: one shadow slot; two evictors (each stores a shadow word for
 * "its" page, page 1 or page 2, with the WORKINGSET bit as it likes, as
 * lpc_pool_ws_evicted's relaxed store) and two missers of page 1 (lpc_pool_ws_refault:
 * load, compare the fingerprint, CAS the word to 0, then nudge the target up
 * for a WORKINGSET shadow, down otherwise, by a weight of 1 or 2 read from
 * the recent counts, which a third process changes at any time).  The
 * target moves by lpc_pool_ws_nudge's CAS loop: the clamped value is computed
 * from the value the CAS replaces.
 * Properties (asserts):
 *   - the target is within [MIN, MAX] in every state (never seen outside:
 *     a monitor checks it at every step);
 *   - a shadow of page 1 counts one refault at most: refaults of page 1 are
 *     never more than the shadows of page 1 stored.
 * Broken variants:
 *   BUG_ADD_THEN_CLAMP  the target moved by fetch-add, then clamped by a
 *                       second store when out of bounds: a racing reader
 *                       (the evictor's above_target) sees it outside
 *   BUG_NO_CAS          the slot cleared by a plain store after the load:
 *                       two missers both count one shadow
 */
#define MIN 1
#define MAX 3
#define EMPTY 0
/* A word: page (1 or 2) * 2 + WORKINGSET. */
byte slot = EMPTY;
byte target = MAX;
byte weight = 1;
byte stored1, refaults1;

inline nudge(up)
{
#ifdef BUG_ADD_THEN_CLAMP
	atomic {
		if
		:: up -> target = target + w
		:: else -> target = target - w
		fi
	}
	atomic {
		if
		:: target > MAX && target < 128 -> target = MAX
		:: target < MIN || target >= 128 -> target = MIN
		:: else -> skip
		fi
	}
#else
	old = target;
again:
	if
	:: up -> want = (MAX - old > w -> old + w : MAX)
	:: else -> want = (old - MIN > w -> old - w : MIN)
	fi;
	if
	:: want == old -> skip
	:: else ->
		atomic {
			if
			:: target == old -> target = want
			:: else -> old = target; goto again
			fi
		}
	fi
#endif
}

proctype evictor(byte page)
{
	byte ws;

	if
	:: ws = 0
	:: ws = 1
	fi;
	atomic {
		slot = page * 2 + ws;
		if
		:: page == 1 -> stored1++
		:: else -> skip
		fi
	}
}

proctype misser()
{
	byte word, w, old, want;
	bool up;

	word = slot;
	if
	:: word / 2 == 1 ->
#ifdef BUG_NO_CAS
		slot = EMPTY;
#else
		atomic {
			if
			:: slot == word -> slot = EMPTY
			:: else -> goto done
			fi
		}
#endif
		refaults1++;
		assert(refaults1 <= stored1);
		up = word % 2;
		w = weight;
		nudge(up)
	:: else -> skip
	fi;
done:
	skip
}

proctype counts()
{
	do
	:: weight = 1
	:: weight = 2
	:: break
	od
}

active proctype monitor()
{
	do
	:: assert(target >= MIN && target <= MAX)
	od
}

init {
	atomic {
		run evictor(1);
		run evictor(2);
		run evictor(1);
		run misser();
		run misser();
		run counts()
	}
}
