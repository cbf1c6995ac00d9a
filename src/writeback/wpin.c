/* SPDX-License-Identifier: MIT */
/*
 * wpin.c - lpc_pin and lpc_unpin: read pins (filemap/pin.c, the lockless
 * get_user_pages) and write pins, which land bytes straight in cached pages
 * and dirty them at the unpin (here: writing and dirtying are writeback's
 * layer, below which filemap/ sits).
 *
 * A write pin (LPC_PIN_WRITE; the contract is lpc.h's I.4-I.8)
 * is a pin plus the page's lock, held from lpc_pin to lpc_unpin, with the
 * page's seq write section open for as long:
 *   - readers: an optimistic reader sees seq odd (or moved) and falls back to
 *     the referenced path, whose copy waits for the lock (read.c F3), so
 *     lpc_pread returns the bytes before the pin or after the unpin, never a
 *     mix, as for lpc_page_lock; a read pin or a page reference does not
 *     wait (they are views of the frame, as mmap);
 *   - writers: lpc_pwrite (D1), another write pin (WP1) and lpc_page_lock
 *     wait for the unpin: two write pins of one page never interleave;
 *   - writeback: K1 takes the lock (WB_ASYNC skips a locked page, WB_SYNC
 *     waits for it), so a write-pinned page is never written while held
 *     (rule WPIN-WRITEBACK at K3), and a pin never changes a page whose write
 *     is in flight: WP3 waits for it (stable pages, as folio_wait_stable);
 *   - truncate locks every page it removes or zeroes (truncate.c steps 2-3):
 *     it waits for the unpin, and cuts what the holder wrote past its size.
 * The pages stay locked in index order within a call (lower first), as
 * every other path that holds two page locks takes them.
 *
 * Write pin, per page, the page pinned (P3, or the slow path's reference
 * turned into a pin):
 *   WP1 lock the page (sleeps; outside any read section)
 *   WP2 re-check the page is still f's at `index`: a truncate-like
 *       removal between P4 and WP1 left us a page that is no longer
 *       cached: unlock, drop it, and take the slow path.  The fast path
 *       re-checks every page of the range in one walk once all are locked
 *       (lpc_filemap_pages_held; a removed page's WP3 wait ends as any),
 *       the slow path page by page (lpc_wb_holds, write.c's lock step)
 *   WP3 WRITEBACK set: unlock, wait for the write's end (K5), back to WP1
 *   WP4 fast path only, once every page is locked: lpc's size still covers
 *       the range (acquire).  A shrinking truncate stores the size (its step
 *       1) before it locks the pages it cuts (2-3); one that cut a page of
 *       ours between our size check and WP1 (zeroing its tail, or removing
 *       it) released that lock before our WP1 took it, so WP4 sees its size
 *       and sends the call to the slow path, which extends the size again
 *       under trunc_lock before the holder writes (rule S1 of writeback.c).
 *       Without WP4 the holder would write past lpc's size into a page the
 *       truncate had zeroed: bytes no read returns, that a later regrowth
 *       would show instead of zeros.  WC1 and WC6 (below) now keep a
 *       truncate from running at all between our WC1 and our unpin, so
 *       WP4 is a re-check that costs one load (tests/regress/regress_wpin.c
 *       story "cut": the truncate waits).
 *   WP5 open the seq write section, hand the lock to the pin (debug owner)
 * Slow path of a write pin: nothing the fast path took is kept (its locks
 * and pins are dropped); under f->trunc_lock held shared (no truncate runs,
 * as in lpc_pwrite) SZ1 raises lpc's size to the range's end first (no page
 * lock held yet: a truncate holds size_lock while it waits for page locks),
 * then per page: an absent page the range covers wholly, or that lies wholly
 * past the size before SZ1, is made here without a read (zeros, inserted
 * UPTODATE, clean, locked, pinned, its section open); any other is got
 * through the miss path (read if absent) and goes through WP1-WP3, WP5.
 * Unpin (LPC_PIN_WRITE), every page's lock first taken back from the pin:
 *   WU1 mark the pages dirty while their locks are held (D3 for up to 64
 *       pages at once, lpc_wb_dirty_pinned: one index lock, the flags and
 *       tags of those not dirty yet, the counts moved once; rule
 *       WPIN-CLEAN: a write unpin leaves its page DIRTY, unless the page
 *       left the index meanwhile)
 *   WU2 per page: close the seq section, unlock
 *   WU3 once for the call: throttle or kick the flusher (lpc_wb_balance);
 *       then drop the pins.
 * Size: the range's end is lpc's size from the pin on (SZ1 at the pin, not
 * at the unpin): the bytes are in the page before the unpin, and rule S1
 * wants the size raised before any byte below it can be dirty; lpc_unpin
 * carries no length either.  A holder that writes less than it pinned
 * leaves what the pages held (zeros for pages made by the pin).
 * tests/model/pin.pml models WP1-WP5 and WU1-WU2 against a reader and
 * writeback, with broken variants.
 *
 * The file's count of write-pinned pages, f->wpins (filemap.h), lets the
 * last close and lpc_truncate wait for the unpins without holding a lock a
 * holder may need meanwhile (lpc.h I.7):
 *   WC1 a write pin adds its n pages (acquire) before it locks any page;
 *       CUT set in what it read: a truncate cuts, so it takes them off
 *       again (WC4) and sleeps until CUT clears, then WC1 again.  The holder
 *       of another write pin never meets CUT (WC6 sets it only at count 0),
 *       so it may pin again, lpc_pwrite, throttle while a truncate waits.
 *   WC2 a write pin that fails takes its n off (WC4) before it returns.
 *   WC3 lpc_unpin takes its pages off after its last use of f (WU3), inside
 *       an RCU read section: the count reaching 0 may let the last close
 *       free f (after a grace period, so the wake-up below still finds it).
 *   WC4 take off: a CAS (release: the unpin's dirtying and unlocks come
 *       before, for whoever sees the count drop); reaching 0 clears
 *       WAITERS, then wakes every sleeper (filemap/file.c
 *       lpc_file_wpins_wait: no lost wake-up).
 *   WC5 the last close (file.c ZW) sleeps until the count is 0, then
 *       flushes: the holders' bytes are dirty and written, and no unpin
 *       runs on a freed f.
 *   WC6 lpc_truncate, before trunc_lock and size_lock: sleeps until count
 *       and CUT are 0, then sets CUT (a CAS from that value, acquire); from
 *       then no write pin is held or granted on f, so its waits for page
 *       locks (truncate.c steps 2-3) never wait for a holder that waits in
 *       turn for trunc_lock (lpc_pwrite, a slow write pin) or size_lock (a
 *       throttle's publish).  At its end it clears CUT and WAITERS
 *       (release) and wakes the pins that wait.  A truncate waits for every
 *       write pin of f, not only those it cuts: it cannot know its cut
 *       before it holds size_lock; a stream of overlapping write pins that
 *       never leaves the count at 0 delays it (as readers a rwlock).
 * (tests/regress/regress_wpin.c, stories "close" and "truncate-holder";
 * tests/model/wpin_gate.pml models WC1-WC6 against a truncate and the last
 * close, with broken variants.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "writeback/writeback.h"

/* WC4: n pages of f no longer write-pinned. */
static void wpins_put(struct lpc_file *f, uint32_t n)
{
	uint32_t v = atomic_load_explicit(&f->wpins, memory_order_relaxed), nv;

	do {
		nv = v - n;
		if (!(nv & LPC_WPINS_COUNT))
			nv &= ~LPC_WPINS_WAITERS;
	} while (!atomic_compare_exchange_weak_explicit(&f->wpins, &v, nv, memory_order_release,
							memory_order_relaxed));	/* WC4 */
	if ((v & LPC_WPINS_WAITERS) && !(nv & LPC_WPINS_WAITERS))
		lpc_file_wpins_wake(f);
}

/* WC1: n pages of f about to be write-pinned; waits while a truncate cuts. */
static void wpins_get(struct lpc_file *f, uint32_t n)
{
	for (;;) {
		uint32_t old = atomic_fetch_add_explicit(&f->wpins, n, memory_order_acquire);

		if (likely(!(old & LPC_WPINS_CUT)))
			return;
		wpins_put(f, n);
		lpc_file_wpins_wait(f, LPC_WPINS_CUT);
	}
}

void lpc_wb_wpins_cut_begin(struct lpc_file *f)
{
	const uint32_t busy = LPC_WPINS_COUNT | LPC_WPINS_CUT;

	for (;;) {
		uint32_t v = atomic_load_explicit(&f->wpins, memory_order_relaxed);

		if (v & busy) {
			lpc_file_wpins_wait(f, busy);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&f->wpins, &v, v | LPC_WPINS_CUT,
							  memory_order_acquire,
							  memory_order_relaxed))	/* WC6 */
			return;
	}
}

void lpc_wb_wpins_cut_end(struct lpc_file *f)
{
	uint32_t old = atomic_fetch_and_explicit(&f->wpins,
						 ~(LPC_WPINS_CUT | LPC_WPINS_WAITERS),
						 memory_order_release);

	if (old & LPC_WPINS_WAITERS)
		lpc_file_wpins_wake(f);
}

/* WP5 on a locked page. */
static void wpin_open(struct lpc_page *p)
{
	lpc_page_seq_write_begin(p);						/* WP5 */
	lpc_page_lock_to_pin(p);
}

/* Undoes WP5 and WP1 (WU2). */
static void wpin_close(struct lpc_page *p)
{
	lpc_page_lock_from_pin(p);
	lpc_page_seq_write_end(p);
	lpc_page_unlock_noseq(p);
}

static void wpin_drop_all(struct lpc_page **pages, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		wpin_close(pages[i]);
		lpc_page_unpin(pages[i]);
	}
}

/* The fast path's pages[0..n): WP1 and WP3 per page, then WP2 for the
 * whole range in one walk (lpc_filemap_pages_held: a page removed between
 * its P4 and its WP1 sends the call to the slow path, as the per-page
 * re-check did), WP4, WP5.  Return: true, every page locked and its
 * section open; false, nothing held any more (pins dropped). */
static bool wpin_fast_lock(struct lpc_file *f, uint64_t first, uint64_t end, unsigned n,
			   struct lpc_page **pages)
{
	unsigned i;

	for (i = 0; i < n; i++)
		(void)lpc_wb_lock_for_write(f, pages[i], first + i,		/* WP1, WP3 */
					    LPC_WB_GET_STABLE | LPC_WB_LOCK_HELD_LATER,
					    LPC_YP_WP1);
	lpc_yield_point(LPC_YP_WP4);
	if (likely(lpc_filemap_pages_held(f, first, n, pages) == n) &&		/* WP2 */
	    likely(atomic_load_explicit(&f->size, memory_order_acquire) >= end)) {	/* WP4 */
		for (i = 0; i < n; i++) {
			/* Rule WPIN-WRITEBACK, the pin's half: stable pages. */
			lpc_debug_check(!(lpc_page_flags(pages[i]) & LPC_PG_WRITEBACK),
					"WPIN-WRITEBACK", pages[i],
					"write pin granted on a page whose write is in flight");
			wpin_open(pages[i]);
		}
		return true;
	}
	for (i = 0; i < n; i++)
		lpc_page_unlock_noseq(pages[i]);
	lpc_filemap_unpin_all(pages, n);
	return false;
}

/* A new page for a write pin: zeros, f's at `index`, inserted UPTODATE
 * (clean: it becomes dirty at the unpin, as a cached page does, so fsync
 * treats both alike), locked by the pin with its section open, pinned (ref:
 * the index's and the pin).  As write.c's new page: filled while private.
 * Return: 0; -EEXIST (another inserted first); -ENOMEM. */
static int wpin_new_page(struct lpc_file *f, uint64_t index, struct lpc_page **out)
{
	struct lpc_page *p;
	int rc;

	rc = lpc_page_alloc_frame(f->pool, 0, &p);
	if (rc)
		return rc;
	lpc_page_seq_write_begin(p);
	memset(lpc_page_frame(p), 0, f->pool->page_size);
	atomic_store_explicit(&p->flags, LPC_PG_LOCKED, memory_order_relaxed);
	lpc_page_set_identity(p, f, index);
	atomic_store_explicit(&p->flags,
			      LPC_PG_PUBLISHED | LPC_PG_UPTODATE | LPC_PG_LOCKED,
			      memory_order_relaxed);
	atomic_store_explicit(&p->ref, 1 + LPC_PIN_BIAS, memory_order_relaxed);
#if LPC_DEBUG
	atomic_store_explicit(&p->dbg_owner, LPC_DBG_OWNER_PIN | lpc_debug_tid(),
			      memory_order_relaxed);
	lpc_page_debug_wpins_taken++;
#endif
	lpc_file_index_lock(f);
	rc = lpc_radix_insert(&f->tree, index, p);
	lpc_file_index_unlock(f);
	if (rc) {
#if LPC_DEBUG
		atomic_store_explicit(&p->dbg_owner, 0, memory_order_relaxed);
		lpc_page_debug_wpins_taken--;
#endif
		atomic_store_explicit(&p->ref, 1, memory_order_relaxed);
		atomic_store_explicit(&p->flags, LPC_PG_PUBLISHED | LPC_PG_UPTODATE,
				      memory_order_relaxed);
		lpc_page_seq_write_end(p);
		lpc_page_free_private(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* make() of the loop: a new page, and *(bool *)made set. */
static int wpin_make(struct lpc_file *f, uint64_t index, void *made, struct lpc_page **out)
{
	int rc = wpin_new_page(f, index, out);

	*(bool *)made = rc == 0;
	return rc;
}

/* One page of the slow path: pinned, locked, stable, its section open
 * (write.c's find/make/wait loop, shared with lpc_pwrite). */
static int wpin_slow_page(struct lpc_file *f, uint64_t index, bool whole, uint64_t size0,
			  struct lpc_tcache *t, struct lpc_page **out)
{
	bool fresh = whole || (index << f->page_shift) >= size0;
	bool made = false;
	struct lpc_page *p;
	int rc;

	rc = lpc_wb_get_locked(f, index, fresh, LPC_WB_GET_PIN | LPC_WB_GET_STABLE, LPC_YP_WP1,
			       wpin_make, &made, t, &p);
	if (rc)
		return rc;
	if (made) {
		*out = p; /* locked by the pin, its section open */
		return 0;
	}
	/* Rule WPIN-WRITEBACK, the pin's half: stable pages. */
	lpc_debug_check(!(lpc_page_flags(p) & LPC_PG_WRITEBACK), "WPIN-WRITEBACK", p,
			"write pin granted on a page whose write is in flight");
	wpin_open(p);								/* WP5 */
	*out = p;
	return 0;
}

/* lpc_pin(LPC_PIN_WRITE). */
static int pin_write(struct lpc_file *f, uint64_t off, size_t len, struct lpc_page **pages,
		     unsigned max, struct lpc_tcache *t)
{
	uint64_t size, end, first, last, size0;
	size_t ps = f->pool->page_size;
	unsigned n, got;
	int rc = 0;

	/* Acquire: pairs with the upgrade's release (filemap/file.c ZL4). */
	if (__atomic_load_n(&f->accmode, __ATOMIC_ACQUIRE) == O_RDONLY)
		return -EBADF;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	end = off + len;
	first = off >> f->page_shift;
	last = (end - 1) >> f->page_shift;
	if (unlikely(last - first >= max || last - first >= INT32_MAX))
		return -E2BIG;
	n = (unsigned)(last - first + 1);
	/* Locked pages are frames: no cache has this many (f->wpins' count). */
	if (unlikely(n > (LPC_WPINS_COUNT >> 2)))
		return -ENOMEM;
	wpins_get(f, n);							/* WC1 */

	size = atomic_load_explicit(&f->size, memory_order_acquire);
	if (likely(end <= size)) {
		got = lpc_filemap_pin_fast(f, first, n, pages);		/* P1-P5 */
		if (likely(got == n) && likely(wpin_fast_lock(f, first, end, n, pages))) {
			lpc_count(t, LPC_C_PIN_FAST);
			lpc_count(t, LPC_C_WPIN_FAST);
			lpc_count_add(t, LPC_C_PAGES_PINNED, n);
			return (int)n;
		}
		if (got != n)
			lpc_filemap_unpin_all(pages, got);
	}
	/* Slow path: as lpc_pwrite, under trunc_lock shared. */
	lpc_debug_no_page_lock("lpc_pin(LPC_PIN_WRITE) slow path");
	pthread_rwlock_rdlock(&f->trunc_lock);
	if (!atomic_load_explicit(&f->size_kept, memory_order_relaxed))
		atomic_store_explicit(&f->size_kept, true, memory_order_release);
	size0 = lpc_wb_extend(f, end);						/* SZ1 */
	for (got = 0; got < n; got++) {
		uint64_t index = first + got;
		uint64_t pstart = index << f->page_shift;
		bool whole = off <= pstart && end >= pstart + ps;

		rc = wpin_slow_page(f, index, whole, size0, t, &pages[got]);
		if (rc)
			break;
	}
	if (rc) {
		/* All or nothing, and no stale byte: a page this call made
		 * without a read below the old size holds zeros, not the
		 * file's bytes; it leaves the cache (it is clean, so a page
		 * that was cached clean before may go too: it is on disk). */
		for (unsigned i = 0; i < got; i++) {
			uint64_t pstart = (first + i) << f->page_shift;

			if (off <= pstart && end >= pstart + ps && pstart < size0 &&
			    !(lpc_page_flags(pages[i]) & LPC_PG_DIRTY))
				lpc_wb_truncate_page(f, pages[i], first + i);
		}
		pthread_rwlock_unlock(&f->trunc_lock);
		wpin_drop_all(pages, got);
		wpins_put(f, n);						/* WC2 */
		return rc;
	}
	pthread_rwlock_unlock(&f->trunc_lock);
	lpc_count(t, LPC_C_PIN_SLOW);
	lpc_count(t, LPC_C_WPIN_SLOW);
	lpc_count_add(t, LPC_C_PAGES_PINNED, n);
	return (int)n;
}

LPC_EXPORT int lpc_pin(struct lpc_file *f, uint64_t off, size_t len, unsigned flags,
		       struct lpc_page **pages, unsigned max)
{
	struct lpc_tcache *t;

	if (unlikely(!f || (!pages && len) || !flags ||
		     (flags & ~(unsigned)(LPC_PIN_READ | LPC_PIN_WRITE))))
		return -EINVAL;
	lpc_debug_file_check(f);
	if (unlikely(len == 0))
		return 0;
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	if (flags & LPC_PIN_WRITE)
		return pin_write(f, off, len, pages, max, t);
	return lpc_filemap_pin_read(f, off, len, pages, max, t);
}

#if LPC_DEBUG
/* Rule WPIN-CLEAN: a write unpin leaves its page DIRTY (the flusher, fsync
 * and eviction's skip all go by it), unless it left the index (a removal
 * that did not wait for the lock: the bytes went with the page). */
static void debug_check_dirtied(struct lpc_page *p, int rc)
{
	uint32_t fl = lpc_page_flags(p);

	lpc_debug_check(rc == -ENOENT || (fl & LPC_PG_REMOVED) || (fl & LPC_PG_DIRTY),
			"WPIN-CLEAN", p, "write unpin left its page clean (rc %d): its bytes "
			"would never be written", rc);
}

/* Rule WPIN-OWNER, the other way round: a read unpin (no LPC_PIN_WRITE) that
 * would drop the only pin of a write-pinned page drops the write pin's own:
 * the page would stay locked with no holder, and every later lock of it
 * (lpc_pread, lpc_pwrite, writeback) would sleep for ever.  (A read pin
 * taken on a write-pinned page, by its holder or another thread, is a
 * second pin: its unpin is fine.) */
static void debug_check_read_unpin(struct lpc_page *p)
{
	lpc_debug_check(!lpc_page_wpinned(p) ||
				atomic_load_explicit(&p->ref, memory_order_relaxed) >=
					2 * LPC_PIN_BIAS,
			"WPIN-OWNER", p,
			"read unpin (no LPC_PIN_WRITE) of a write pin: its lock would stay held "
			"with no holder");
}
#else
#define debug_check_dirtied(p, rc) ((void)0)
#define debug_check_read_unpin(p) ((void)(p))
#endif

/* Pages of a write unpin dirtied under one index lock (WU1). */
#define WPIN_DIRTY_BATCH 64

LPC_EXPORT void lpc_unpin(struct lpc_page **pages, unsigned n, unsigned flags)
{
	struct lpc_file *f = NULL;
	unsigned dirtied = 0, held = 0;

	if (!pages)
		return;
	if (flags & LPC_PIN_WRITE) {
		/* The locks back from the pin first (rule WPIN-OWNER: a page
		 * this call did not lock for writing is refused before
		 * anything changes). */
		for (unsigned i = 0; i < n; i++) {
			if (!pages[i])
				continue;
			if (!f)
				f = atomic_load_explicit(&pages[i]->file, memory_order_relaxed);
			held++;
			lpc_page_lock_from_pin(pages[i]);
		}
		/* f stays valid until WC3: its last close waits for the count. */
		for (unsigned c = 0; f && c < n; c += WPIN_DIRTY_BATCH) {
			unsigned m = n - c < WPIN_DIRTY_BATCH ? n - c : WPIN_DIRTY_BATCH;
			int rcs[WPIN_DIRTY_BATCH];

			lpc_yield_point(LPC_YP_WU1);
			(void)lpc_wb_dirty_pinned(f, pages + c, m, rcs);		/* WU1 */
			for (unsigned i = 0; i < m; i++) {
				struct lpc_page *p = pages[c + i];

				if (!p)
					continue;
				debug_check_dirtied(p, rcs[i]);
				dirtied += rcs[i] == 0;
				lpc_page_seq_write_end(p);				/* WU2 */
				lpc_page_unlock_noseq(p);
			}
		}
		if (f) {							/* WU3 */
			struct lpc_tcache *t = lpc_file_tcache(f);
			bool scoped;

			/* From now on the size is lpc's (as lpc_page_mark_dirty). */
			if (dirtied && !atomic_load_explicit(&f->size_kept, memory_order_relaxed))
				atomic_store_explicit(&f->size_kept, true, memory_order_release);
			if (t) {
				lpc_count_add(t, LPC_C_WPIN_DIRTIED, dirtied);
				lpc_wb_balance(f, t);
			}
			scoped = lpc_rcu_scope_enter();
			lpc_rcu_read_lock();
			wpins_put(f, held);					/* WC3 */
			lpc_rcu_read_unlock();
			lpc_rcu_scope_exit(scoped);
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (pages[i]) {
			if (!(flags & LPC_PIN_WRITE))
				debug_check_read_unpin(pages[i]);
			lpc_page_unpin(pages[i]);
		}
}
