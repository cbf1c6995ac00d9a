/* SPDX-License-Identifier: MIT */
/*
 * truncate.c - lpc_truncate: setting lpc's size of a file, and the kernel's.
 *
 * First, before any lock, it waits until no page of f is write-pinned and
 * keeps new write pins out until it returns (wpin.c WC6): a holder may
 * lpc_pwrite or pin again meanwhile, which needs trunc_lock, so the waits
 * for page locks below never wait for a write pin.
 * Shrinking, with f->trunc_lock held exclusive (no lpc_pwrite runs) and
 * f->size_lock (no other size change):
 *   1 store the new size (seq_cst), after the cut in trunc_cut and the
 *     odd trunc_seq (filemap.h): from here a miss that reads a page past
 *     it drops the page (miss.c, after M4), and reads stop at it; a read
 *     that raced this truncate keeps nothing from the cut on, and loses
 *     nothing below it (misses far below the cut are not read again)
 *   2 for each page past the new end, in index order: lock it (waiting for
 *     its holder), wait for its write in flight, remove it from the index
 *     (un-dirtying it); users holding it keep a valid page, no longer cached
 *   3 the last, partial page: lock it, wait for its write, zero its tail
 *     (between seq begin and end)
 *   4 ftruncate the kernel's file, with no writeback's write in flight
 *     (rule S5 in writeback.c: a growing ftruncate racing an io_uring
 *     O_DIRECT write of the old last block corrupts it on ext4)
 * A miss racing step 2 inserts its page either before the walk passes its
 * index (the walk then waits for its lock and removes it) or after, when it
 * sees the new size after its read and drops the page itself; either way it
 * sees trunc_seq odd or changed and drops what it read from the cut on, so a
 * regrowth after step 4 never shows bytes from before the cut (rule
 * TRUNC-PAST-END checks, at the end, that no page past it is cached).  A write of a
 * page past the end cannot be in flight after step 2, so nothing extends
 * the kernel's file again after step 4 (a whole last page written later is
 * cut back by the writeback's own publish of the size).
 * lpc_truncate is the only call that cuts the kernel's file below lpc's
 * size as it was, and below bytes another process put there (the size
 * protocol, S-rules, in writeback.c).
 * Growing stores the size and extends the kernel's file: the new range
 * reads as zeros.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "writeback/writeback.h"

#define TR_GANG 32

#if LPC_DEBUG
/* Rule WPIN-GATE (wpin.c WC6): from the gate on, until the truncate ends,
 * f->wpins has CUT set (its count may rise for a moment: a WC1 that sees
 * CUT and takes its pages off again), and no page the truncate waits for is
 * write-pinned: its waits for page locks, with trunc_lock and size_lock
 * held, never wait for a holder, who may itself wait for those locks (its
 * lpc_pwrite, a slow write pin, a throttle's publish: the deadlock of
 * regress_wpin's story "truncate-holder"). */
static void debug_gate_held(struct lpc_file *f, struct lpc_page *p)
{
	uint32_t v = atomic_load_explicit(&f->wpins, memory_order_relaxed);
	bool pinned = p && lpc_page_wpinned(p);

	lpc_debug_check((v & LPC_WPINS_CUT) && !pinned, "WPIN-GATE", p,
			"a truncate %s (wpins 0x%x: CUT %s)",
			pinned ? "waits for a write-pinned page" : "runs without its gate", v,
			(v & LPC_WPINS_CUT) ? "set" : "clear");
}
#else
#define debug_gate_held(f, p) ((void)(f))
#endif

/* Locks p and waits until no write of it is in flight. */
static void lock_no_writeback(struct lpc_file *f, struct lpc_page *p)
{
	debug_gate_held(f, p);
	lpc_page_lock_noseq(p);
	while (lpc_page_flags(p) & LPC_PG_WRITEBACK) {
		lpc_page_unlock_noseq(p);
		lpc_page_wait_writeback(p);
		lpc_page_lock_noseq(p);
	}
}

static void truncate_pages(struct lpc_file *f, uint64_t size)
{
	size_t ps = f->pool->page_size;
	uint64_t first = (size + ps - 1) >> f->page_shift;
	struct lpc_page *pages[TR_GANG];
	uint64_t idx[TR_GANG];
	unsigned n;

	while ((n = lpc_wb_gang_tag_get(f, first, LPC_WB_ANY, pages, idx, TR_GANG)) > 0) {
		first = idx[n - 1] + 1;
		for (unsigned i = 0; i < n; i++) {
			lock_no_writeback(f, pages[i]);
			lpc_wb_truncate_page(f, pages[i], idx[i]);
			lpc_page_unlock_noseq(pages[i]);
			lpc_page_release(pages[i]);
		}
	}
	if (size & (ps - 1)) {
		uint64_t index = size >> f->page_shift;
		struct lpc_page *p;

		if (lpc_wb_gang_tag_get(f, index, LPC_WB_ANY, &p, idx, 1) == 1) {
			if (idx[0] == index) {
				lock_no_writeback(f, p);
				/* Not UPTODATE: its read is failing, or drops it. */
				if ((lpc_page_flags(p) & LPC_PG_UPTODATE) &&
				    lpc_wb_holds(f, p, index)) {
					size_t keep = (size_t)(size & (ps - 1));

					lpc_page_seq_write_begin(p);
					memset((char *)lpc_page_frame(p) + keep, 0, ps - keep);
					lpc_page_seq_write_end(p);
				}
				lpc_page_unlock_noseq(p);
			}
			lpc_page_release(p);
		}
	}
}

#if LPC_DEBUG
/* Rule TRUNC-PAST-END: once a shrinking truncate has removed the pages past
 * its end (step 2) and cut the kernel's file (4), no page wholly past that
 * end is UPTODATE in the index: a read that raced it kept nothing from the
 * cut on (miss.c M5, run.c U5: lpc_filemap_trunc_from), and every other
 * path that makes pages (lpc_pwrite) waits for trunc_lock.  Pages in flight
 * (not UPTODATE) are a raced read's, which drops them.  Walked under
 * tree_lock, which every insert of a page already UPTODATE takes (wpin.c,
 * dirty.c); a miss's insert may hold only its leaf's lock (radix.c FI1-FI4)
 * but publishes a page in flight, not UPTODATE, which its M5 drops past the
 * cut, so a walk that sees it or not judges the same.  (In LOCKED mode a
 * read hold of the rwlock too, which every removal needs for writing; tried
 * only: a LOCKED miss holds it for reading across its read, and may itself
 * wait here for nothing, so a busy rwlock skips the check.) */
static void debug_nothing_past(struct lpc_file *f, uint64_t size)
{
	uint64_t first = (size + f->pool->page_size - 1) >> f->page_shift;
	void *pages[TR_GANG];
	uint64_t idx[TR_GANG];
	unsigned n;

	if (f->locked_lookup && pthread_rwlock_tryrdlock(&f->tree_rwlock))
		return;
	pthread_mutex_lock(&f->tree_lock);
	while ((n = lpc_radix_gang(&f->tree, first, pages, idx, TR_GANG)) > 0) {
		first = idx[n - 1] + 1;
		for (unsigned i = 0; i < n; i++)
			lpc_debug_check(!(lpc_page_flags(pages[i]) & LPC_PG_UPTODATE), "TRUNC-PAST-END",
					pages[i],
					"page %llu is cached past the end (%llu bytes) a truncate just set",
					(unsigned long long)idx[i], (unsigned long long)size);
	}
	pthread_mutex_unlock(&f->tree_lock);
	if (f->locked_lookup)
		pthread_rwlock_unlock(&f->tree_rwlock);
}
#else
#define debug_nothing_past(f, size) ((void)0)
#endif

LPC_EXPORT int lpc_truncate(struct lpc_file *f, uint64_t size)
{
	struct lpc_tcache *t;
	uint64_t old, seen;
	int rc;

	if (unlikely(!f))
		return -EINVAL;
	lpc_debug_file_check(f);
	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	/* Acquire: pairs with the upgrade's release (filemap/file.c ZL4), so
	 * what this call writes goes through the read-write descriptor. */
	if (__atomic_load_n(&f->accmode, __ATOMIC_ACQUIRE) == O_RDONLY)
		return -EBADF;
	/* A user backend without a truncate operation: a storage of fixed
	 * size (lpc.h, struct lpc_backend_ops), refused before anything is
	 * cut from the cache. */
	if (f->io.user && !f->io.user->truncate)
		return -EOPNOTSUPP;
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	lpc_debug_no_page_lock("lpc_truncate");
	/* No write pin held or granted while we hold the locks (wpin.c WC6). */
	lpc_wb_wpins_cut_begin(f);
	pthread_rwlock_wrlock(&f->trunc_lock);
	pthread_mutex_lock(&f->size_lock);
	debug_gate_held(f, NULL);
	if (!atomic_load_explicit(&f->size_kept, memory_order_relaxed)) {
		lpc_filemap_refresh_size(f); /* last look at the kernel's */
		atomic_store_explicit(&f->size_kept, true, memory_order_release);
	}
	old = atomic_load_explicit(&f->size, memory_order_relaxed);
	/* A read in flight past the cut may carry bytes from before it; the
	 * odd count tells it so (filemap.h trunc_seq), even if the file has
	 * grown again by the time it checks the size, and the cut, stored
	 * first in this truncate's slot, tells it where: its pages below the
	 * cut are not touched by it (filemap.h lpc_filemap_trunc_from: why a
	 * reader that sees the raise reads this cut). */
	if (size < old) {
		uint64_t seq = atomic_load_explicit(&f->trunc_seq, memory_order_relaxed);

		atomic_store_explicit(&f->trunc_cut[(seq >> 1) & 1], size, memory_order_release);
		atomic_fetch_add_explicit(&f->trunc_seq, 1, memory_order_seq_cst);
	}
	atomic_store_explicit(&f->size, size, memory_order_seq_cst);	/* 1 */
	if (size < old)
		truncate_pages(f, size);					/* 2, 3 */
	lpc_yield_point(LPC_YP_SZ4);
	seen = atomic_load_explicit(&f->io.size, memory_order_relaxed);
	/* Rule S5 (writeback.c): the kernel's size is not known here, so
	 * as growing: no writeback's write in flight meanwhile. */
	rc = lpc_wb_ftruncate(f, size, true);				/* 4 */
	if (!rc)
		lpc_debug_wb_end_set(f, size);
	lpc_yield_point(LPC_YP_SZ5);
	if (size < old)
		debug_nothing_past(f, size);
	if (!rc) {
		/* As the publish's SZ5: a CAS, so a writeback's raise of
		 * io.size (SZ2: the last page, written again after step 3,
		 * landing after this ftruncate) is not lost; when io.size
		 * was past that write's end already, the raise changes
		 * nothing and this CAS succeeds, and that write's own
		 * publish trims its tail (S4 in writeback.c). */
		atomic_compare_exchange_strong_explicit(&f->io.size, &seen, size,
							memory_order_relaxed, memory_order_relaxed);
	}
	if (size < old)
		atomic_fetch_add_explicit(&f->trunc_seq, 1, memory_order_seq_cst);
	pthread_mutex_unlock(&f->size_lock);
	pthread_rwlock_unlock(&f->trunc_lock);
	lpc_wb_wpins_cut_end(f);
	/* The removed pages' frames wait on pending (their last put; fewer
	 * than a batch never reach call_rcu): the reclaimer drains them after
	 * its linger (reclaim/reclaimer.c RL1-RL4), as lpc_invalidate's. */
	if (size < old)
		lpc_page_pending_kick(f->pool);
	return rc;
}
