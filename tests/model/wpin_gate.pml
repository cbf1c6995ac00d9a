/* SPDX-License-Identifier: MIT */
/*
 * wpin_gate.pml - the file's count of write-pinned pages, f->wpins
 * (src/writeback/wpin.c WC1-WC6, filemap/file.c lpc_file_wpins_wait and
 * ZW), against lpc_truncate and the last close.
 *
 * The word: COUNT (pages write-pinned, or being counted), CUT (a truncate
 * cuts), WAITERS (someone sleeps in futex on the word).  A futex sleep
 * (futex_wait) blocks only while the word still holds the value the sleeper
 * saw, until a wake; a wake wakes every sleeper.
 *
 * Processes:
 *   H  a holder: WC1 (count 1), WP1 (the page lock), then, holding the pin,
 *      an lpc_pwrite of another page (trunc_lock shared), then the unpin:
 *      the page unlocked, WC3/WC4 (count back down, a wake if WAITERS).
 *   P  a second write pin of the page, at any time: WC1 (may meet CUT: take
 *      its page off, sleep until CUT clears, retry), WP1, unpin.
 *   T  lpc_truncate: WC6 (sleep while COUNT or CUT, then CAS CUT on), then
 *      trunc_lock exclusive, then the page's lock (truncate.c step 2-3),
 *      unlock, trunc_lock released, cut_end (CUT and WAITERS off, a wake).
 *   C  the last close (ZW): sleeps until COUNT is 0 (-DCLOSE).
 *
 * Checked: T never waits for the page lock while a write pin holds it
 * (rule WPIN-GATE in truncate.c; with that, no cycle holder -> trunc_lock
 * -> truncate -> page lock -> holder), and every process ends: no lost
 * wake-up, no deadlock (spin: invalid end states).
 * Broken variants spin must catch:
 *   BUG_NO_GATE      T skips WC6: it waits for the page with trunc_lock
 *                    held while H holds the pin and waits for trunc_lock
 *                    (invalid end state: the deadlock of regress_wpin's
 *                    story "truncate-holder")
 *   BUG_NO_CUT_CHECK WC1 ignores CUT: a pin is granted while T cuts
 *                    (assertion at the pin)
 *   BUG_NO_WAKE      WC4 clears WAITERS at count 0 but wakes nobody: T
 *                    sleeps for ever (invalid end state)
 */

#define WAITERS 64
#define CUT 128
#define COUNT 63

byte word;		/* f->wpins */
bit sleeping[5];	/* futex sleepers, by _pid */
byte page_owner;	/* 0 free, else the _pid + 1 of the page lock's holder */
bool pinned;		/* the page's lock is a write pin's */
byte readers;		/* trunc_lock */
bool writer;

inline futex_wait(v)
{
	atomic {
		if
		:: word == v -> sleeping[_pid] = 1
		:: else -> skip
		fi
	}
	(sleeping[_pid] == 0)
}

inline futex_wake()
{
	atomic {
		sleeping[0] = 0; sleeping[1] = 0; sleeping[2] = 0; sleeping[3] = 0;
		sleeping[4] = 0
	}
}

/* lpc_file_wpins_wait(f, busy) */
inline wpins_wait(busy)
{
	v = word;
	do
	:: (v & (busy)) == 0 -> break
	:: else ->
		if
		:: (v & WAITERS) == 0 ->
			atomic {
				if
				:: word == v -> word = v | WAITERS; v = v | WAITERS
				:: else -> v = word; goto again
				fi
			}
		:: else -> skip
		fi;
		futex_wait(v);
		v = word;
again:		skip
	od
}

/* WC4 */
inline wpins_put()
{
	atomic {
		v = word;
		nv = v - 1;
		if
		:: (nv & COUNT) == 0 -> nv = nv & ~WAITERS
		:: else -> skip
		fi;
		word = nv
	}
#ifndef BUG_NO_WAKE
	if
	:: (v & WAITERS) != 0 && (nv & WAITERS) == 0 -> futex_wake()
	:: else -> skip
	fi
#endif
}

/* WC1 */
inline wpins_get()
{
	do
	:: atomic { v = word; word = word + 1 };
#ifdef BUG_NO_CUT_CHECK
		break
#else
		if
		:: (v & CUT) == 0 -> break
		:: else -> wpins_put(); wpins_wait(CUT)
		fi
#endif
	od
}

inline page_lock()
{
	atomic { page_owner == 0 -> page_owner = _pid + 1 }
}

inline page_unlock()
{
	page_owner = 0
}

/* A write pin of the page, then its unpin. */
inline write_pin()
{
	wpins_get();
	page_lock();					/* WP1 */
	pinned = 1;
	assert((word & CUT) == 0)	/* no pin is held while a truncate cuts */
}

inline write_unpin()
{
	pinned = 0;
	page_unlock();					/* WU2 */
	wpins_put()					/* WC3 */
}

proctype holder()
{
	byte v, nv;

	write_pin();
	/* lpc_pwrite of another page while holding the pin */
	atomic { !writer -> readers++ };
	readers--;
	write_unpin()
}

proctype pinner()
{
	byte v, nv;

	write_pin();
	write_unpin()
}

proctype truncate()
{
	byte v, nv;

#ifndef BUG_NO_GATE
	/* WC6: lpc_wb_wpins_cut_begin */
	do
	:: v = word;
		if
		:: (v & (COUNT | CUT)) != 0 -> wpins_wait(COUNT | CUT)
		:: else ->
			atomic {
				if
				:: word == v -> word = v | CUT; break
				:: else -> skip
				fi
			}
		fi
	od;
#endif
	atomic { !writer && readers == 0 -> writer = 1 };
	/* step 2-3: the page's lock, trunc_lock held (rule WPIN-GATE) */
	assert(!pinned);
	page_lock();
	assert(!pinned);
	page_unlock();
	writer = 0;
#ifndef BUG_NO_GATE
	/* lpc_wb_wpins_cut_end */
	atomic { v = word; word = word & ~(CUT | WAITERS) };
	if
	:: (v & WAITERS) != 0 -> futex_wake()
	:: else -> skip
	fi
#endif
}

proctype closer()
{
	byte v, nv;

	wpins_wait(COUNT);				/* ZW */
	assert(!pinned || page_owner != 0)
}

init {
	atomic {
		run holder();
		run pinner();
		run truncate();
#ifdef CLOSE
		run closer()
#endif
	}
}
