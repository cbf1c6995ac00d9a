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
 *
 * The public lock is a seq write section too (steps X1-X2).  A user who
 * holds lpc_page_lock may change a cached page's frame in place (then
 * lpc_page_mark_dirty), and optimistic readers (filemap/optimistic.h) copy
 * the frame without the lock, validating against the page's seq.  So:
 *   X1 lpc_page_lock, once the lock is ours (L1 or L3): if the page is
 *      PUBLISHED, lpc_page_seq_write_begin (seq odd, release fence) before
 *      returning, so every store the user makes to the frame lies inside
 *      the section;
 *   X2 lpc_page_unlock, before U1: if the page is PUBLISHED,
 *      lpc_page_seq_write_end (seq even again, release).
 * A reader that loads seq while the user holds the lock sees it odd and
 * falls back (to the referenced path, whose copy waits for the lock: F3); a
 * reader whose copy began before X1 sees seq moved at O5 and falls back.
 * PUBLISHED cannot change between X1 and X2: the user holds a reference
 * (it is cleared only when a frame is reallocated) and only lpc itself
 * publishes the private frames it fills (miss.c, write.c), with the
 * internal lock below.  A private page (lpc_page_alloc) has no readers: no
 * section, and no cost.
 *
 * lpc's own lockers (the miss path, write.c, writeback, truncate, the
 * fallback copy F3) use lpc_page_lock_noseq / lpc_page_unlock_noseq: they
 * bump seq exactly where they change data or identity (D2, M2-M5, the
 * truncate's zeroing), or not at all (writeback and F3 only read the
 * frame), so a reader is not sent to the slow path by a lock that changes
 * nothing.  The debug build checks that sections neither nest nor close
 * twice (rule SEQ-UNBALANCED, page.h), which catches an internal path that
 * took the public lock and then opened its own section.
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
__thread int lpc_page_debug_wpins_taken;

/* Rules UNLOCK-NOT-LOCKED and UNLOCK-NOT-OWNER, then forgets the owner. */
static void debug_unlock_owner_check(struct lpc_page *p)
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
	lpc_debug_page_locks--;
}

/* Rule SEQ-OPEN: no page is unlocked with a write section open. */
static void debug_unlock_seq_check(struct lpc_page *p)
{
	lpc_page_debug_seq_closed(p, "page unlocked");
}

static void debug_unlock_check(struct lpc_page *p)
{
	debug_unlock_owner_check(p);
	debug_unlock_seq_check(p);
}

static void debug_locked(struct lpc_page *p)
{
	atomic_store_explicit(&p->dbg_owner, lpc_debug_tid(), memory_order_relaxed);
	lpc_debug_page_locks++;
}

void lpc_page_lock_to_pin(struct lpc_page *p)
{
	lpc_debug_check(atomic_load_explicit(&p->dbg_owner, memory_order_relaxed) ==
				lpc_debug_tid(),
			"WPIN-OWNER", p, "a page lock this thread does not hold handed to a write pin");
	/* The pinning thread's id stays with the pin: rule WPIN-SELF-WAIT. */
	atomic_store_explicit(&p->dbg_owner, LPC_DBG_OWNER_PIN | lpc_debug_tid(),
			      memory_order_relaxed);
	lpc_debug_page_locks--;
	lpc_page_debug_wpins_taken++;
}

void lpc_page_lock_from_pin(struct lpc_page *p)
{
	lpc_debug_check((atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_LOCKED) &&
				lpc_page_wpinned(p),
			"WPIN-OWNER", p,
			"write unpin of a page whose lock no write pin holds (unpinned twice, "
			"or with LPC_PIN_WRITE after a read pin)");
	if (lpc_page_wpinned_by_me(p))
		lpc_page_debug_wpins_taken--;
	debug_locked(p);
}

/* Rule WPIN-SELF-WAIT: this thread is about to sleep until p is unlocked,
 * and p's lock is held by a write pin this thread took (lpc.h I.8: its own
 * lpc_pread, lpc_page_read, lpc_pwrite, lpc_page_lock, write pin or
 * lpc_fsync of the page would wait for its own unpin, for ever). */
static void debug_wpin_self_wait(struct lpc_page *p, const char *what)
{
	lpc_debug_check(!lpc_page_wpinned_by_me(p), "WPIN-SELF-WAIT", p,
			"thread %llu waits for %s, which its own write pin holds (a "
			"self-deadlock: lpc_unpin first)",
			(unsigned long long)lpc_debug_tid(), what);
}
#else
#define debug_wpin_self_wait(p, what) ((void)(p))
#define debug_unlock_check(p) ((void)(p))
#define debug_unlock_owner_check(p) ((void)(p))
#define debug_unlock_seq_check(p) ((void)(p))
#define debug_locked(p) ((void)(p))
#endif

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* L1: the flags word as it was before; LOCKED clear in it means ours. */
static lpc_always_inline uint32_t page_trylock_old(struct lpc_page *p)
{
	uint32_t old = atomic_fetch_or_explicit(&p->flags, LPC_PG_LOCKED, memory_order_acquire);

	if (!(old & LPC_PG_LOCKED))
		debug_locked(p);
	return old;
}

bool lpc_page_trylock(struct lpc_page *p)
{
	return !(page_trylock_old(p) & LPC_PG_LOCKED);
}

/* L2-L5.  Return: the flags word the lock was taken from (L3's CAS). */
static uint32_t lpc_page_lock_slow(struct lpc_page *p)
{
	uint32_t f = atomic_load_explicit(&p->flags, memory_order_relaxed);

#if LPC_DEBUG
	/* Rule LOCK-RECURSIVE: this thread waits for a lock it holds itself
	 * (it locked the page twice, or read it with lpc_pread/lpc_page_read
	 * while holding it: their fallback F3 locks it).  Only the holder
	 * stores its id in dbg_owner, and clears it at unlock. */
	lpc_debug_check(atomic_load_explicit(&p->dbg_owner, memory_order_relaxed) !=
				lpc_debug_tid(),
			"LOCK-RECURSIVE", p, "thread %llu waits for a page lock it holds",
			(unsigned long long)lpc_debug_tid());
	debug_wpin_self_wait(p, "its lock");
#endif

	for (;;) {
		if (!(f & LPC_PG_LOCKED)) {					/* L3 */
			lpc_yield_point(LPC_YP_L3);
			if (atomic_compare_exchange_weak_explicit(&p->flags, &f,
								  f | LPC_PG_LOCKED,
								  memory_order_acquire,
								  memory_order_relaxed)) {
				debug_locked(p);
				return f;
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

/* L1, else L2-L5.  Return: the flags word the lock was taken from. */
static lpc_always_inline uint32_t page_lock(struct lpc_page *p)
{
	uint32_t old;

	lpc_yield_point(LPC_YP_L1);
	old = page_trylock_old(p);						/* L1 */
	if (likely(!(old & LPC_PG_LOCKED)))
		return old;
	return lpc_page_lock_slow(p);
}

void lpc_page_lock_noseq(struct lpc_page *p)
{
	page_lock(p);
}

LPC_EXPORT void lpc_page_lock(struct lpc_page *p)
{
	if (unlikely(!p))
		return;
	if (page_lock(p) & LPC_PG_PUBLISHED)
		lpc_page_seq_write_begin(p);					/* X1 */
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

/* U1-U2; the caller ran debug_unlock_check. */
static lpc_always_inline void page_unlock(struct lpc_page *p)
{
	uint32_t old;

	lpc_yield_point(LPC_YP_U1);
	old = atomic_fetch_and_explicit(&p->flags,
						 ~(uint32_t)(LPC_PG_LOCKED | LPC_PG_WAITERS),
						 memory_order_release);		/* U1 */
	lpc_yield_point(LPC_YP_U2);
	if (old & LPC_PG_WAITERS)						/* U2 */
		futex_wake_all(&p->flags);
}

void lpc_page_unlock_noseq(struct lpc_page *p)
{
	debug_unlock_check(p);
	page_unlock(p);
}

LPC_EXPORT void lpc_page_unlock(struct lpc_page *p)
{
	if (unlikely(!p))
		return;
	debug_unlock_owner_check(p);
	if (atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_PUBLISHED)
		lpc_page_seq_write_end(p);					/* X2 */
	debug_unlock_seq_check(p);
	page_unlock(p);
}

void lpc_page_wait_unlocked(struct lpc_page *p)
{
	uint32_t f;

	lpc_yield_point(LPC_YP_W1);
	f = atomic_load_explicit(&p->flags, memory_order_acquire);		/* W1 */

	while (f & LPC_PG_LOCKED) {
		debug_wpin_self_wait(p, "the page's unlock");
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
