/*
 * attack_ac/active_ac2.pml - tests/model/active.pml (d4a3e29) with two
 * additions by the review (revac), to check what the model left unsaid:
 *   - assert(ref > 0) at AC2: debug_active_step's claim "p is not frozen at
 *     AC2" (rule ACTIVE-COUNT), which active.pml does not assert;
 *   - -DMUT_NO_LEAF: the intermediate mutant (tests/mutants/run.sh
 *     active-no-leaf-lock): AC2's re-read and counting by the RMW's result
 *     kept, the leaf lock of AC1/AC3 dropped.  active.pml's broken variant
 *     is only the old code (BUG_NO_LEAF_LOCK); is this one caught too?
 * Run: spin -a [-DMUT_NO_LEAF] active_ac2.pml && gcc -O2 -o pan pan.c && ./pan -m100000
 * Seen: no errors without MUT_NO_LEAF; with it "assertion violated (ref>0)",
 * and with the ref assertion removed still "(nactive==(1+act))".
 * The rest of the text is active.pml's.
 */
/* SPDX-License-Identifier: MIT */
/*
 * active.pml - CLOCK2's active count (src/reclaim/evict.c, "The active
 * count": AC1-AC3, rule ACTIVE-COUNT) against lpc_invalidate's fast path
 * (src/filemap/remove.c invalidate_one_fast, src/index/radix.c FD1-FD3),
 * the deferred free that takes a removed page out of the count
 * (src/page/alloc.c deferred_prep), a hit, and the allocator handing the
 * frame out again after a grace period (page_init_private: flags = 0).
 *
 * The world: page P at index 0 of a leaf that keeps another page (so the
 * fast delete needs no structural change), and a second page that stays
 * active throughout (held by a user: the evictor skips it; it keeps the
 * count above the target 0, so a demotion is wanted).  P starts with
 * ACTIVE and REFERENCED chosen nondeterministically; nactive counts the
 * other page and P if ACTIVE.
 *   ref        P's count: 1 the index's, 0 frozen or free; the hitter's
 *              reference makes it 2 for a while
 *   act, rf    P's ACTIVE and REFERENCED bits (each a separate atomic RMW
 *              in C on the one flags word; the model changes one bit per step
 *              except where C's single RMW changes both)
 *   slot       1 while index 0 holds P
 *   ilock      f's index lock; llock the leaf's lock
 *   st         LIVE, FREED (deferred_prep done, waiting for a grace
 *              period), REUSED (handed out: flags cleared)
 *   ev_rs      the evictor is inside its batch's read section
 *
 * Processes:
 *   evictor     E1 (ref 1, the lockless keep branches), E2 the index lock,
 *               E3 the slot, the policy: an inactive unreferenced P is
 *               evicted (E4 freeze, E6 delete, E7 deferred_prep); a
 *               promotion or demotion is AC1-AC3 (-DBUG_NO_LEAF_LOCK: the
 *               old code, the decision of E3 done with no leaf lock and
 *               counted whatever the RMW found)
 *   invalidator FD1 the leaf's lock, the slot, A freeze, B delete, FD3
 *               unlock, C deferred_prep
 *   hitter      a lookup that finds P: takes a reference (increment unless
 *               0), sets REFERENCED if clear, puts it
 *   reuser      after the frame is freed and a grace period (the evictor's
 *               read section over): flags = 0
 * At the end: nactive = 1 + act, and a freed frame carries no ACTIVE;
 * every decrement finds the count above 0.
 */

#define LIVE   0
#define FREED  1
#define REUSED 2

byte ref = 1;
bool act, rf;
bool slot = 1;
bool ilock, llock;
byte nactive;
byte st = LIVE;
bool ev_rs = 1; /* from the start: the grace period waits for it */
byte done;

/* deferred_prep: ACTIVE leaves the count with the RMW that clears it. */
inline prep()
{
	atomic {
		if
		:: act -> act = 0; assert(nactive > 0); nactive--
		:: else -> skip
		fi;
		st = FREED
	}
}

proctype evictor()
{
	bool fl_act, fl_rf, ok;

E1:	atomic {
		ok = (ref == 1 && st == LIVE);
		fl_act = act;
		fl_rf = rf
	}
	if
	:: !ok -> goto out
	:: else -> skip
	fi;
	if
	:: fl_act && fl_rf -> rf = 0; goto out	/* active, referenced: kept, no lock */
	:: fl_act && !fl_rf && !(nactive > 0) -> goto out /* at the target: kept */
	:: else -> skip
	fi;
E2:	atomic { !ilock -> ilock = 1 }
E3:	if
	:: !slot -> goto unlock_i
	:: else -> skip
	fi;
	atomic { fl_act = act; fl_rf = rf }
	/* E3P: the window the fast invalidate used */
	if
	:: !fl_act && !fl_rf ->
		/* evict: E4 freeze, E5, E6 delete under the index lock
		 * (N2 takes the leaf lock), E7 */
E4:		atomic {
			if
			:: ref == 1 -> ref = 0
			:: else -> goto unlock_i
			fi
		}
E6:		atomic { !llock -> llock = 1 }
		slot = 0;
		llock = 0;
		ilock = 0;
E7:		prep();
		goto out
	:: else -> skip
	fi;
#ifdef BUG_NO_LEAF_LOCK
	/* The old policy_locked: E3's flags, no leaf lock, counted always. */
	if
	:: fl_act && !fl_rf && nactive > 0 ->
		atomic { act = 0; assert(nactive > 0); nactive-- }
	:: fl_act && !(!fl_rf && nactive > 0) -> rf = 0
	:: !fl_act && fl_rf -> atomic { act = 1; nactive++ }; rf = 0
	:: else -> skip
	fi;
#else
#ifdef MUT_NO_LEAF
AC1:	skip;
#else
AC1:	atomic { !llock -> llock = 1 }
#endif
	if
#ifdef MUT_NO_LEAF
	:: !slot -> goto unlock_i
#else
	:: !slot -> llock = 0; goto unlock_i
#endif
	:: else -> skip
	fi;
AC2:	atomic { assert(ref > 0); fl_act = act; fl_rf = rf }
	if
	:: fl_act && !fl_rf && nactive > 0 ->
		atomic {
			if
			:: act -> act = 0; assert(nactive > 0); nactive--
			:: else -> skip
			fi
		}
	:: fl_act && !(!fl_rf && nactive > 0) -> rf = 0
	:: !fl_act && fl_rf ->
		atomic {
			if
			:: !act -> act = 1; nactive++
			:: else -> skip
			fi
		};
		rf = 0
	:: else -> skip
	fi;
#ifdef MUT_NO_LEAF
AC3:	skip;
#else
AC3:	llock = 0;
#endif
#endif
unlock_i:
	ilock = 0;
out:
	ev_rs = 0;
	done++
}

proctype invalidator()
{
FD1:	atomic { !llock -> llock = 1 }
	if
	:: slot ->
A:		atomic {
			if
			:: ref == 1 -> ref = 0
			:: else -> llock = 0; goto out
			fi
		}
B:		slot = 0;
FD3:		llock = 0;
C:		prep()
	:: else -> llock = 0
	fi;
out:
	done++
}

proctype hitter()
{
	atomic {
		if
		:: slot && ref > 0 -> ref++
		:: else -> goto out
		fi
	}
	if
	:: !rf -> rf = 1
	:: else -> skip
	fi;
	ref--; /* never the last: only the index's reference is left */
out:
	done++
}

proctype reuser()
{
	/* A grace period after the free: the evictor's section is over. */
end:	atomic { st == FREED && !ev_rs -> act = 0; rf = 0; st = REUSED }
}

init {
	atomic {
		if
		:: act = 1
		:: act = 0
		fi;
		if
		:: rf = 1
		:: rf = 0
		fi;
		nactive = 1 + act;
		run evictor();
		run invalidator();
		run hitter();
		run reuser()
	}
	done == 3;
	/* The reuser may have run or not (or run later): either way. */
	atomic {
		if
		:: st == FREED -> assert(!act)
		:: else -> skip
		fi;
		assert(nactive == 1 + act)
	}
}
