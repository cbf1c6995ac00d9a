/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the page lock: the LOCKED bit of the page's flags word, with
 * sleepers in futex(2) on that same 32-bit word.  Modelled in
 * tests/model/page_lock.pml (steps L1-L5, U1-U2, W1-W3 below).
 *
 * lock:
 *   L1 old = fetch_or(LOCKED, acquire); LOCKED was clear -> ours.
 *   L2 f = load(flags)
 *   L3 LOCKED clear in f: CAS(f -> f|LOCKED, acquire); ours on success, else L2
 *   L4 WAITERS clear in f: CAS(f -> f|WAITERS); on failure L2
 *   L5 futex_wait(&flags, f|WAITERS); then L2
 * unlock:
 *   U1 old = fetch_and(~(LOCKED|WAITERS), release)
 *   U2 WAITERS was set in old: futex_wake(all)
 * wait for unlock without taking the lock (readers of a page in flight):
 *   W1 f = load(flags, acquire); LOCKED clear -> done
 *   W2 WAITERS clear in f: CAS(f -> f|WAITERS); on failure W1
 *   W3 futex_wait(&flags, f|WAITERS); then W1
 *
 * Why no wake-up is lost: a sleeper sleeps only if the word still equals the
 * value it saw with LOCKED and WAITERS set (the kernel checks that under its
 * futex hash lock).  An unlock that clears LOCKED changes the word, so either
 * the sleeper's futex_wait sees the change and returns, or it was already
 * asleep when U1 ran; then WAITERS was set in `old` (it was set before the
 * sleeper slept and only U1 clears it) and U2 wakes it.  U2 wakes every
 * sleeper because U1 cleared WAITERS for all of them: each that still has to
 * wait sets it again (L4/W2) before it sleeps.
 *
 * Other bits of the word (UPTODATE, REFERENCED, ...) change while sleepers
 * sleep; that only makes futex_wait return early, and the loops re-check.
 *
 * Ordering: acquire on taking the lock pairs with the release of unlock, so
 * what the previous holder wrote (frame data, identity) is visible to the
 * next.  W1's acquire pairs with U1's release: a reader that saw the read
 * end also sees UPTODATE or ERROR and the frame data set before U1.
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "page/page.h"

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
#if LPC_DEBUG
	/* Rule LOST-WAKEUP: a sleeper set WAITERS in the word it sleeps on, and
	 * only U1 clears WAITERS, after which U2 wakes every sleeper.  So a
	 * sleep that times out and finds WAITERS clear was not woken by the
	 * unlock that cleared it (an unlock with no U2).  The timeout (2 s)
	 * only bounds how long such a bug takes to show. */
	struct timespec ts = { 2, 0 };

	if (syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0) < 0 &&
	    errno == ETIMEDOUT) {
		struct lpc_page *p = caa_container_of(word, struct lpc_page, flags);

		lpc_debug_check(atomic_load_explicit(word, memory_order_relaxed) & LPC_PG_WAITERS,
				"LOST-WAKEUP", p,
				"an unlock cleared WAITERS but did not wake this sleeper");
	}
#else
	/* EAGAIN (the word changed), EINTR and spurious wake-ups: the caller
	 * re-checks the word in every case. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
#endif
}

#if LPC_DEBUG
/* Rules UNLOCK-NOT-LOCKED and UNLOCK-NOT-OWNER, then forgets the owner. */
static void debug_unlock_check(struct lpc_page *p)
{
	lpc_debug_check(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_LOCKED,
			"UNLOCK-NOT-LOCKED", p, "unlock of a page that is not locked");
	lpc_debug_check(atomic_load_explicit(&p->dbg_owner, memory_order_relaxed) ==
				lpc_debug_tid(),
			"UNLOCK-NOT-OWNER", p, "unlock by thread %llu of a lock thread %llu holds",
			(unsigned long long)lpc_debug_tid(),
			(unsigned long long)atomic_load_explicit(&p->dbg_owner,
								 memory_order_relaxed));
	atomic_store_explicit(&p->dbg_owner, 0, memory_order_relaxed);
	lpc_page_debug_seq_closed(p, "page unlocked");
}

static void debug_locked(struct lpc_page *p)
{
	atomic_store_explicit(&p->dbg_owner, lpc_debug_tid(), memory_order_relaxed);
}
#else
#define debug_unlock_check(p) ((void)(p))
#define debug_locked(p) ((void)(p))
#endif

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

bool lpc_page_trylock(struct lpc_page *p)
{
	bool locked = !(atomic_fetch_or_explicit(&p->flags, LPC_PG_LOCKED, memory_order_acquire) &
			LPC_PG_LOCKED);

	if (locked)
		debug_locked(p);
	return locked;
}

static void lpc_page_lock_slow(struct lpc_page *p)
{
	uint32_t f = atomic_load_explicit(&p->flags, memory_order_relaxed);

	for (;;) {
		if (!(f & LPC_PG_LOCKED)) {					/* L3 */
			lpc_yield_point(LPC_YP_L3);
			if (atomic_compare_exchange_weak_explicit(&p->flags, &f,
								  f | LPC_PG_LOCKED,
								  memory_order_acquire,
								  memory_order_relaxed)) {
				debug_locked(p);
				return;
			}
			continue;
		}
		lpc_yield_point(LPC_YP_L4);
		if (!(f & LPC_PG_WAITERS)) {					/* L4 */
			if (!atomic_compare_exchange_weak_explicit(&p->flags, &f,
								   f | LPC_PG_WAITERS,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			f |= LPC_PG_WAITERS;
		}
		lpc_yield_point(LPC_YP_L5);
		futex_wait(&p->flags, f);					/* L5 */
		lpc_yield_point(LPC_YP_L2);
		f = atomic_load_explicit(&p->flags, memory_order_relaxed);	/* L2 */
	}
}

LPC_EXPORT void lpc_page_lock(struct lpc_page *p)
{
	if (unlikely(!p))
		return;
	lpc_yield_point(LPC_YP_L1);
	if (likely(lpc_page_trylock(p)))					/* L1 */
		return;
	lpc_page_lock_slow(p);
}

void lpc_page_unlock_set(struct lpc_page *p, uint32_t set)
{
	uint32_t old;
	uint32_t new;

	debug_unlock_check(p);
	lpc_yield_point(LPC_YP_U1);
	old = atomic_load_explicit(&p->flags, memory_order_relaxed);
	/* U1, with `set` folded in so UPTODATE/ERROR and the unlock are one
	 * release: a waiter never sees the lock free without the outcome. */
	do {
		new = (old | set) & ~(LPC_PG_LOCKED | LPC_PG_WAITERS);
	} while (!atomic_compare_exchange_weak_explicit(&p->flags, &old, new,
							memory_order_release,
							memory_order_relaxed));
	lpc_yield_point(LPC_YP_U2);
	if (old & LPC_PG_WAITERS)						/* U2 */
		futex_wake_all(&p->flags);
}

LPC_EXPORT void lpc_page_unlock(struct lpc_page *p)
{
	uint32_t old;

	if (unlikely(!p))
		return;
	debug_unlock_check(p);
	lpc_yield_point(LPC_YP_U1);
	old = atomic_fetch_and_explicit(&p->flags,
						 ~(uint32_t)(LPC_PG_LOCKED | LPC_PG_WAITERS),
						 memory_order_release);		/* U1 */
	lpc_yield_point(LPC_YP_U2);
	if (old & LPC_PG_WAITERS)						/* U2 */
		futex_wake_all(&p->flags);
}

void lpc_page_wait_unlocked(struct lpc_page *p)
{
	uint32_t f;

	lpc_yield_point(LPC_YP_W1);
	f = atomic_load_explicit(&p->flags, memory_order_acquire);		/* W1 */

	while (f & LPC_PG_LOCKED) {
		lpc_yield_point(LPC_YP_W2);
		if (!(f & LPC_PG_WAITERS)) {					/* W2 */
			if (!atomic_compare_exchange_weak_explicit(&p->flags, &f,
								   f | LPC_PG_WAITERS,
								   memory_order_acquire,
								   memory_order_acquire))
				continue;
			f |= LPC_PG_WAITERS;
		}
		lpc_yield_point(LPC_YP_W3);
		futex_wait(&p->flags, f);					/* W3 */
		lpc_yield_point(LPC_YP_W1);
		f = atomic_load_explicit(&p->flags, memory_order_acquire);
	}
}

/*
 * Waiting for a write in flight (writeback K3..K5), the same way as W1-W3
 * wait for LOCKED: WAITERS is shared by both kinds of sleeper, and whoever
 * clears it (U1, or K5 below) wakes every sleeper, each of which re-checks
 * its own bit and sets WAITERS again if it must still sleep.
 */
void lpc_page_wait_writeback(struct lpc_page *p)
{
	uint32_t f = atomic_load_explicit(&p->flags, memory_order_acquire);

	while (f & LPC_PG_WRITEBACK) {
		if (!(f & LPC_PG_WAITERS)) {
			if (!atomic_compare_exchange_weak_explicit(&p->flags, &f,
								   f | LPC_PG_WAITERS,
								   memory_order_acquire,
								   memory_order_acquire))
				continue;
			f |= LPC_PG_WAITERS;
		}
		futex_wait(&p->flags, f);
		f = atomic_load_explicit(&p->flags, memory_order_acquire);
	}
}

void lpc_page_end_writeback(struct lpc_page *p, uint32_t set)
{
	uint32_t old = atomic_load_explicit(&p->flags, memory_order_relaxed);
	uint32_t new;

	lpc_debug_check(old & LPC_PG_WRITEBACK, "WRITEBACK-END", p,
			"end of writeback on a page not under writeback");
	/* K5: release, so a waiter that sees WRITEBACK clear also sees the
	 * outcome (DIRTY again after a failure). */
	do {
		new = (old | set) & ~(LPC_PG_WRITEBACK | LPC_PG_WAITERS);
	} while (!atomic_compare_exchange_weak_explicit(&p->flags, &old, new,
							memory_order_release,
							memory_order_relaxed));
	if (old & LPC_PG_WAITERS)
		futex_wake_all(&p->flags);
}
