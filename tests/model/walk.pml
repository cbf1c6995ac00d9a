/* SPDX-License-Identifier: MIT */
/*
 * walk.pml - the name cache's rcu-walk (src/names/walk.c Q1-Q6) against its
 * writers (src/names/ns.c V1-V4, dcache.c's rebinding of a dentry).
 *
 * The tree: the root holds two names, p and q, each bound to one of two
 * directories: P, which the walker's credential may not search, and Q,
 * which it may.  Each directory holds f (fP, fQ).  The cache: per name a
 * dentry with a binding bind[], a sequence count seq[] and the child dentry
 * it holds, child[] (NONE until a ref-walk fills it).
 *
 * Writers, serialised by ns->lock (the atomic blocks hold it):
 *   rename  lpc_ns_rename(p, q, RENAME_EXCHANGE): V1 rename_seq odd; V2+V3
 *           for each name: seq odd, its children dropped, the new binding,
 *           seq even; V4 rename_seq even.  The kernel's exchange is atomic:
 *           the oracle sees (p, q) jump from (a, b) to (b, a).
 *   rebind  a ref-walk finds p bound to another object (a change behind
 *           lpc's back, or a revalidation): seq odd, children dropped, the
 *           new binding, seq even; rename_seq untouched.
 *   filler  a ref-walk fills a missing child from the binding (ns_fill).
 *
 * Walkers, with no lock:
 *   W2 walks "p/f": Q1 rs = rename_seq (odd: fall back); Q2 s = seq[p]
 *      (odd: fall back), b = bind[p], search permission on b (P: the answer
 *      is EACCES); Q3/Q4 c = child[p] (NONE: fall back: miss); Q5 seq[p] ==
 *      s; Q6 seq[p] == s and rename_seq == rs, else fall back.
 *   W1 walks "q/../p/f": the same through q, back to the root, then p.
 * The oracle: ghost bits record every state (p, q) the kernel had while a
 * walker ran; its answer must be the kernel's answer in one of them:
 * "p/f" is fQ when p is Q, else EACCES; "q/../p/f" is fQ when both are Q,
 * else EACCES.  An answer fP (P's child, through a directory the walker may
 * search) is always a mix.
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_NO_SEQ_CHECK     Q4/Q5/Q6 skip the dentry's sequence count: W2 reads
 *                        p bound to Q, the rebinding swaps in P and the
 *                        filler P's child, and W2 answers fP.
 *   BUG_NO_RENAME_CHECK  Q1/Q6 skip rename_seq: W1 reads q bound to Q, the
 *                        exchange runs, W1 reads p bound to Q: it answers fQ,
 *                        which the kernel never gave (EACCES before and
 *                        after).  Every step was locally valid: only the
 *                        global count catches it, as in the kernel.
 */

#ifndef ROUNDS
#define ROUNDS 2
#endif

#define P 0
#define Q 1
#define NONE 2
#define FP 3
#define FQ 4
#define EACCES 5
#define FALLBACK 6

byte bind[2];          /* 0: p, 1: q */
byte seq[2];
byte child[2];
byte rename_seq;
bit lock;

/* Ghost: kernel states (p * 2 + q) seen during each walker's walk. */
bit active1, active2;
bit seen1[4], seen2[4];
byte nwalks;

inline see()
{
	if
	:: active1 -> seen1[bind[0] * 2 + bind[1]] = 1
	:: else -> skip
	fi;
	if
	:: active2 -> seen2[bind[0] * 2 + bind[1]] = 1
	:: else -> skip
	fi
}

inline rebind_one(i, to)
{
	seq[i] = seq[i] + 1;
	child[i] = NONE;
	bind[i] = to;
	seq[i] = seq[i] + 1
}

proctype renamer()
{
	byte n = 0, a;
	do
	:: n < ROUNDS ->
		atomic { lock == 0 -> lock = 1 };
		rename_seq = rename_seq + 1;           /* V1 */
		a = bind[0];
		d_step { rebind_one(0, bind[1]); rebind_one(1, a); see() } /* V2, V3 */
		rename_seq = rename_seq + 1;           /* V4 */
		lock = 0;
		n++
	:: else -> break
	od
}

proctype rebinder()
{
	byte n = 0;
	do
	:: n < ROUNDS ->
		atomic { lock == 0 -> lock = 1 };
		d_step { rebind_one(0, 1 - bind[0]); see() };
		lock = 0;
		n++
	:: else -> break
	od
}

proctype filler()
{
end_fill:
	do
	:: atomic { lock == 0 && child[0] == NONE -> child[0] = (bind[0] == P -> FP : FQ) }
	:: atomic { lock == 0 && child[1] == NONE -> child[1] = (bind[1] == P -> FP : FQ) }
	od
}

/* One name step from the root: Q2-Q5 on dentry i.  Sets res to EACCES,
 * FALLBACK, or leaves it and sets s (the dentry's seq) and b (its binding). */
inline step(i, s, b, res)
{
	s = seq[i];                                    /* Q2 */
#ifndef BUG_NO_SEQ_CHECK
	if
	:: s % 2 == 1 -> res = FALLBACK
	:: else -> skip
	fi;
#endif
	if
	:: res == 0 ->
		b = bind[i];
		if
		:: b == P -> res = EACCES              /* search permission */
		:: else -> skip
		fi
	:: else -> skip
	fi
}

inline validate(i, s, rs, res)
{
#ifndef BUG_NO_SEQ_CHECK
	if
	:: seq[i] != s -> res = FALLBACK               /* Q5 / Q6 */
	:: else -> skip
	fi;
#endif
#ifndef BUG_NO_RENAME_CHECK
	if
	:: rename_seq != rs -> res = FALLBACK          /* Q6 */
	:: else -> skip
	fi
#endif
}

/* "p/f" */
proctype walker2()
{
	byte rs, s, b, c, res = 0;

	d_step { active2 = 1; seen2[bind[0] * 2 + bind[1]] = 1 };
	rs = rename_seq;                               /* Q1 */
#ifndef BUG_NO_RENAME_CHECK
	if
	:: rs % 2 == 1 -> res = FALLBACK
	:: else -> skip
	fi;
#endif
	if
	:: res == 0 -> step(0, s, b, res)
	:: else -> skip
	fi;
	if
	:: res == 0 ->
		c = child[0];                          /* Q3, Q4 */
		if
		:: c == NONE -> res = FALLBACK
		:: else -> res = c
		fi
	:: else -> skip
	fi;
	if
	:: res != FALLBACK -> validate(0, s, rs, res)
	:: else -> skip
	fi;
	d_step {
		active2 = 0;
		assert(res != FP);
		assert(res == FALLBACK ||
		       (res == FQ && (seen2[2] || seen2[3])) ||
		       (res == EACCES && (seen2[0] || seen2[1])))
	};
	nwalks++
}

/* "q/../p/f" */
proctype walker1()
{
	byte rs, s, b, c, res = 0;

	d_step { active1 = 1; seen1[bind[0] * 2 + bind[1]] = 1 };
	rs = rename_seq;                               /* Q1 */
#ifndef BUG_NO_RENAME_CHECK
	if
	:: rs % 2 == 1 -> res = FALLBACK
	:: else -> skip
	fi;
#endif
	if
	:: res == 0 -> step(1, s, b, res)              /* q */
	:: else -> skip
	fi;
	/* "..": back to the root after validating q (Q5 for the step up). */
	if
	:: res == 0 ->
#ifndef BUG_NO_SEQ_CHECK
		if
		:: seq[1] != s -> res = FALLBACK
		:: else -> skip
		fi
#else
		skip
#endif
	:: else -> skip
	fi;
	if
	:: res == 0 -> step(0, s, b, res)              /* p */
	:: else -> skip
	fi;
	if
	:: res == 0 ->
		c = child[0];
		if
		:: c == NONE -> res = FALLBACK
		:: else -> res = c
		fi
	:: else -> skip
	fi;
	if
	:: res != FALLBACK -> validate(0, s, rs, res)
	:: else -> skip
	fi;
	d_step {
		active1 = 0;
		assert(res != FP);
		/* fQ only where p and q were both Q at one instant (index 3). */
		assert(res == FALLBACK || (res == FQ && seen1[3]) ||
		       (res == EACCES && (seen1[0] || seen1[1] || seen1[2])))
	};
	nwalks++
}

init
{
	atomic {
		bind[0] = P;
		bind[1] = Q;
		child[0] = FP;
		child[1] = FQ;
		run renamer();
		run rebinder();
		run filler();
		run walker1();
		run walker2()
	}
}
