/* SPDX-License-Identifier: MIT */
/*
 * page_lock.pml - the page lock: bit LOCKED of the page's 32-bit flags word,
 * with bit WAITERS and sleepers in futex(2) on that word (src/page/lock.c).
 * Checked exhaustively by spin (see README.md for the command lines and the
 * step -> C function table).
 *
 * Processes:
 *   locker x NL     lpc_page_lock (L1 = lpc_page_trylock, L2-L5 =
 *                   lpc_page_lock_slow) then lpc_page_unlock (U1-U2), NLOCK
 *                   times each
 *   waiter          lpc_page_wait_unlocked (W1-W3), once
 *   flipper         another flag bit (UPTODATE) set and cleared NFLIP times
 *                   with atomic or/and, as lpc_page_unlock_set, lpc_page_mark_referenced
 *                   and friends do while sleepers sleep: it makes futex_wait
 *                   return early (the word no longer equals the expected value)
 *
 * futex: futex_wait(val) = atomically { if flags == val: asleep = 1 }, then
 * wait until asleep == 0; futex_wake(all) clears asleep for every process.
 * With -DSPURIOUS a sleeper may also wake at any time (EINTR, spurious
 * wake-ups, a stale wake from an earlier unlock).  Spurious wake-ups would
 * hide a lost wake-up (the sleeper could always leave), so the deadlock
 * checks run without them and the -DSPURIOUS run checks the rest.
 *
 * What is checked:
 *   - mutual exclusion: at most one holder (assert at the critical section)
 *   - unlock is done by the holder: U1 sees LOCKED set
 *   - invariant WAITERS => LOCKED after every step (monitor process)
 *   - no lost wake-up: no invalid end state, i.e. no process left asleep in
 *     futex_wait or blocked anywhere when the others have finished
 *   - at the end the word has neither LOCKED nor WAITERS set
 *   - progress (run with -DNP, pan -l): no cycle at all in the state graph,
 *     so with the end-state check every execution terminates, whatever the
 *     scheduler does (without -DSPURIOUS; with it, a sleeper can of course
 *     wake spuriously for ever)
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_LOST_WAKEUP     unlock clears LOCKED|WAITERS with a plain load and
 *                       store and never wakes: a sleeper sleeps for ever
 *   BUG_NO_WAITERS_BIT  lockers and the waiter sleep on the value they loaded
 *                       without first setting WAITERS: unlock sees no WAITERS
 *                       and does not wake them
 *   BUG_WAKE_ONE        unlock wakes one sleeper although it cleared WAITERS
 *                       for all: the others sleep for ever
 */

#define LOCKED		1
#define WAITERS		2
#define UPTODATE	4

#ifndef NL
#define NL	2	/* lockers */
#endif
#ifndef NLOCK
#define NLOCK	2	/* lock/unlock rounds per locker */
#endif
#ifndef NFLIP
#define NFLIP	1	/* set+clear rounds of the other bit */
#endif

#define MAXPID	8

byte flags;
bool asleep[MAXPID];
byte holders;

/* futex_wait(&flags, val): the kernel compares under its hash-bucket lock. */
inline futex_wait(val)
{
	atomic {
		if
		:: flags == val -> asleep[_pid] = 1
		:: else			/* -EAGAIN */
		fi
	};
#ifdef SPURIOUS
	if
	:: asleep[_pid] == 0
	:: asleep[_pid] = 0		/* spurious wake-up, EINTR */
	fi
#else
	asleep[_pid] == 0
#endif
}

inline futex_wake_all()
{
	d_step {
		i = 0;
		do
		:: i < MAXPID -> asleep[i] = 0; i++
		:: else -> break
		od;
		i = 0
	}
}

#ifdef BUG_WAKE_ONE
/* futex_wake(1): one sleeper, any of them, if there is one. */
inline futex_wake_one()
{
	atomic {
		if
		:: asleep[0] -> asleep[0] = 0
		:: asleep[1] -> asleep[1] = 0
		:: asleep[2] -> asleep[2] = 0
		:: asleep[3] -> asleep[3] = 0
		:: asleep[4] -> asleep[4] = 0
		:: asleep[5] -> asleep[5] = 0
		:: asleep[6] -> asleep[6] = 0
		:: asleep[7] -> asleep[7] = 0
		:: else
		fi
	}
}
#endif

proctype locker()
{
	byte f, old, n, i;

	do
	:: n < NLOCK ->
L1:		atomic { old = flags; flags = flags | LOCKED };	/* fetch_or */
		if
		:: (old & LOCKED) == 0 -> goto acquired
		:: else
		fi;
L2:		f = flags;
L3:		if
		:: (f & LOCKED) == 0 ->
			atomic {				/* CAS */
				if
				:: flags == f -> flags = f | LOCKED; goto acquired
				:: else -> goto L2
				fi
			}
		:: else
		fi;
#ifndef BUG_NO_WAITERS_BIT
L4:		if
		:: (f & WAITERS) == 0 ->
			atomic {				/* CAS */
				if
				:: flags == f -> flags = f | WAITERS; f = flags
				:: else -> goto L2
				fi
			}
		:: else
		fi;
#endif
L5:		futex_wait(f);
		goto L2;
acquired:
		atomic { holders++; assert(holders == 1) };
		holders--;
#ifdef BUG_LOST_WAKEUP
U1:		old = flags;
		flags = old & ~(LOCKED | WAITERS);
		assert(old & LOCKED);
#else
U1:		atomic { old = flags; flags = flags & ~(LOCKED | WAITERS) };	/* fetch_and */
		assert(old & LOCKED);
U2:		if
		:: (old & WAITERS) != 0 ->
#ifdef BUG_WAKE_ONE
			futex_wake_one()
#else
			futex_wake_all()
#endif
		:: else
		fi;
#endif
		n++
	:: else -> break
	od
}

proctype waiter()
{
	byte f;

W1:	f = flags;
	if
	:: (f & LOCKED) == 0 -> goto out
	:: else
	fi;
#ifndef BUG_NO_WAITERS_BIT
W2:	if
	:: (f & WAITERS) == 0 ->
		atomic {
			if
			:: flags == f -> flags = f | WAITERS; f = flags
			:: else -> goto W1
			fi
		}
	:: else
	fi;
#endif
W3:	futex_wait(f);
	goto W1;
out:
	skip
}

proctype flipper()
{
	byte n;

	do
	:: n < NFLIP ->
		atomic { flags = flags | UPTODATE };
		atomic { flags = flags & ~UPTODATE };
		n++
	:: else -> break
	od
}

/* The invariant WAITERS => LOCKED, checked in every reachable state. */
proctype monitor()
{
end:	atomic { (flags & WAITERS) != 0 && (flags & LOCKED) == 0 -> assert(false) }
}

init {
	byte i;

	atomic {
		run monitor();
		i = 0;
		do
		:: i < NL -> run locker(); i++
		:: else -> break
		od;
		run waiter();
		run flipper()
	};
	_nr_pr == 2;		/* everyone but init and the monitor finished */
	assert((flags & (LOCKED | WAITERS)) == 0)
}
