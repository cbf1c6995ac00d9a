/* SPDX-License-Identifier: MIT */
/*
 * dirty.c - dirty pages, writeback states and write errors of a file's
 * cache: the index-side halves of the write protocol, whose steps (D1-D3,
 * K1-K5, and fsync's Y1-Y4) are told in writeback/writeback.c.
 *
 * Invariant DIRTY-TAG: for a page in an index, the DIRTY flag and the DIRTY
 * tag are equal, and so are WRITEBACK and its tag; each pair changes only
 * under the file's index lock.  DIRTY is set (D3) and cleared (K3, truncate)
 * only by the page lock's holder; K5 sets it again after a failed write
 * without the page lock (it holds WRITEBACK, which nobody else clears).
 * Counts: f->nrdirty (the file's DIRTY pages) and files->ndirty (the
 * cache's) move with the flag, under the index lock; a write to a page
 * already dirty touches neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>

#include "writeback/writeback.h"

/* k more DIRTY pages.  Context: index lock. */
static void dirty_add(struct lpc_file *f, uint64_t k)
{
	uint64_t n = atomic_load_explicit(&f->nrdirty, memory_order_relaxed);

	if (n == 0)
		atomic_store_explicit(&f->dirtied_when, lpc_clock_ns(), memory_order_relaxed);
	/* Writeback by age needs the flusher (flusher.c F2); every page made
	 * dirty asks while none runs, so a start that failed is tried again
	 * (one relaxed load once it runs). */
	if (f->files->wb && f->files->wb->timed &&
	    !atomic_load_explicit(&f->files->wb->running, memory_order_relaxed))
		lpc_wb_need(f->files->wb);
	atomic_store_explicit(&f->nrdirty, n + k, memory_order_relaxed);
	atomic_fetch_add_explicit(&f->files->ndirty, (int64_t)k, memory_order_relaxed);
}

/* One more DIRTY page.  Context: index lock. */
static void dirty_inc(struct lpc_file *f)
{
	dirty_add(f, 1);
}

/* One DIRTY page less.  Context: index lock. */
static void dirty_dec(struct lpc_file *f)
{
	uint64_t n = atomic_load_explicit(&f->nrdirty, memory_order_relaxed);

	lpc_debug_check(n > 0, "DIRTY-COUNT", NULL, "file's dirty count below 0");
	atomic_store_explicit(&f->nrdirty, n - 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&f->files->ndirty, 1, memory_order_relaxed);
}

bool lpc_wb_holds(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	bool held;

	lpc_rcu_read_lock();
	held = lpc_radix_lookup(&f->tree, index, NULL) == p;
	lpc_rcu_read_unlock();
	return held;
}

int lpc_wb_dirty_locked(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	int rc = 0;

	lpc_debug_check(lpc_page_flags(p) & LPC_PG_LOCKED, "DIRTY-UNLOCKED", p,
			"page marked dirty without its page lock");
	/* Set already: only the lock's holder clears it, and we hold it. */
	if (lpc_page_flags(p) & LPC_PG_DIRTY) {
#if LPC_DEBUG
		/* Rule DIRTY-TAG: a DIRTY page in the index carries the tag
		 * (both change together under the index lock), or writeback,
		 * which walks the tag, would never write it. */
		bool tagged, held;

		lpc_file_index_lock(f);
		held = lpc_radix_lookup(&f->tree, index, NULL) == p;
		tagged = held && lpc_radix_tag_get(&f->tree, index, LPC_TAG_DIRTY);
		lpc_file_index_unlock(f);
		lpc_debug_check(!held || tagged, "DIRTY-TAG", p,
				"a DIRTY page without its DIRTY tag: writeback would miss it");
#endif
		return 0;
	}
	lpc_yield_point(LPC_YP_D3);
	lpc_file_index_lock(f);
	if (lpc_radix_lookup(&f->tree, index, NULL) != p) {
		rc = -ENOENT; /* removed (truncate, close): the change is lost */
	} else if (!(atomic_fetch_or_explicit(&p->flags, LPC_PG_DIRTY, memory_order_release) &
		     LPC_PG_DIRTY)) {
		lpc_radix_tag_set(&f->tree, index, LPC_TAG_DIRTY);
		dirty_inc(f);
	}
	lpc_file_index_unlock(f);
	return rc;
}

unsigned lpc_wb_dirty_pinned(struct lpc_file *f, struct lpc_page *const *pages, unsigned n,
			     int *rcs)
{
	unsigned added = 0, clean = 0;
	/* As lpc_page_mark_dirty: nothing through a read-only descriptor
	 * (acquire: pairs with the upgrade's release, filemap/file.c ZL4).
	 * A write pin is granted only on a writable f, and the mode only
	 * upgrades; the check keeps rule WPIN-CLEAN's death test breakable. */
	int rc0 = __atomic_load_n(&f->accmode, __ATOMIC_ACQUIRE) == O_RDONLY ? -EBADF : 0;

	for (unsigned i = 0; i < n; i++) {
		rcs[i] = rc0;
		if (!pages[i])
			continue;
		lpc_debug_check(lpc_page_flags(pages[i]) & LPC_PG_LOCKED, "DIRTY-UNLOCKED",
				pages[i], "page marked dirty without its page lock");
		/* DIRTY set already: only the lock's holder clears it, and we
		 * hold it (as lpc_wb_dirty_locked). */
		clean += !(lpc_page_flags(pages[i]) & LPC_PG_DIRTY);
	}
	if (rc0 || (!clean && !LPC_DEBUG))
		return 0;
	lpc_yield_point(LPC_YP_D3);
	lpc_file_index_lock(f);
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p = pages[i];
		uint64_t index;

		if (!p)
			continue;
		index = atomic_load_explicit(&p->index, memory_order_relaxed);
		if (lpc_page_flags(p) & LPC_PG_DIRTY) {
			/* Rule DIRTY-TAG, as lpc_wb_dirty_locked checks it. */
			lpc_debug_check(lpc_radix_lookup(&f->tree, index, NULL) != p ||
						lpc_radix_tag_get(&f->tree, index, LPC_TAG_DIRTY),
					"DIRTY-TAG", p,
					"a DIRTY page without its DIRTY tag: writeback would miss it");
			continue;
		}
		if (lpc_radix_lookup(&f->tree, index, NULL) != p) {
			rcs[i] = -ENOENT; /* removed (truncate, close): the change is lost */
			continue;
		}
		if (!(atomic_fetch_or_explicit(&p->flags, LPC_PG_DIRTY, memory_order_release) &
		      LPC_PG_DIRTY)) {
			lpc_radix_tag_set(&f->tree, index, LPC_TAG_DIRTY);
			added++;
		}
	}
	if (added)
		dirty_add(f, added);
	lpc_file_index_unlock(f);
	return added;
}

int lpc_wb_insert_dirty(struct lpc_file *f, uint64_t index, struct lpc_page *p)
{
	int rc;

	lpc_debug_check(lpc_page_flags(p) & LPC_PG_PUBLISHED, "PUBLISH-UNPUBLISHED", p,
			"page inserted in an index without PUBLISHED");
	lpc_file_index_lock(f);
	rc = lpc_radix_insert(&f->tree, index, p);
	if (!rc) {
		lpc_radix_tag_set(&f->tree, index, LPC_TAG_DIRTY);
		dirty_inc(f);
	}
	lpc_file_index_unlock(f);
	return rc;
}

bool lpc_wb_start_writeback(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	bool ok = false;

#if LPC_DEBUG
	/* Rule WPIN-WRITEBACK, writeback's half: a write pin holds the page
	 * lock until its unpin (writeback/wpin.c WP1), and K1 takes the lock, so
	 * writeback never writes a page a holder may be changing. */
	lpc_debug_check(!lpc_page_wpinned(p), "WPIN-WRITEBACK", p,
			"writeback starts on a write-pinned page (its lock is the pin's)");
#endif
	lpc_debug_check((lpc_page_flags(p) & (LPC_PG_LOCKED | LPC_PG_DIRTY | LPC_PG_WRITEBACK)) ==
				(LPC_PG_LOCKED | LPC_PG_DIRTY),
			"WRITEBACK-START", p, "writeback of a page not locked, not dirty or in flight");
	lpc_file_index_lock(f);
	if (lpc_radix_lookup(&f->tree, index, NULL) == p) {
		uint32_t old = atomic_load_explicit(&p->flags, memory_order_relaxed);

		/* K3: DIRTY -> WRITEBACK in one RMW (a waiter never sees neither). */
		while (!atomic_compare_exchange_weak_explicit(
			&p->flags, &old, (old & ~LPC_PG_DIRTY) | LPC_PG_WRITEBACK,
			memory_order_acq_rel, memory_order_relaxed))
			;
		lpc_radix_tag_clear(&f->tree, index, LPC_TAG_DIRTY);
		lpc_radix_tag_clear(&f->tree, index, LPC_TAG_TOWRITE);
		lpc_radix_tag_set(&f->tree, index, LPC_TAG_WRITEBACK);
		dirty_dec(f);
#if LPC_DEBUG
		atomic_fetch_add_explicit(&f->dbg_wb_started, 1, memory_order_release);
#endif
		ok = true;
	}
	lpc_file_index_unlock(f);
	return ok;
}

void lpc_wb_end_writeback(struct lpc_file *f, struct lpc_page *p, uint64_t index, int err)
{
	uint32_t set = 0;

#if LPC_DEBUG
	/* Counted before the tag and the flag clear: an fsync that saw either
	 * clear sees the count (rule FSYNC-INFLIGHT, writeback.c). */
	atomic_fetch_add_explicit(&f->dbg_wb_ended, 1, memory_order_release);
#endif
	/* The error is on the file before WRITEBACK clears: whoever waited
	 * for this page and then checks the errseq sees it (Y3, Y4). */
	if (err)
		lpc_wb_err_record(f, err);
	lpc_file_index_lock(f);
	if (lpc_radix_lookup(&f->tree, index, NULL) == p) {
		lpc_radix_tag_clear(&f->tree, index, LPC_TAG_WRITEBACK);
		if (err && !(lpc_page_flags(p) & LPC_PG_DIRTY)) {
			/* A failed write keeps the data: dirty again. */
			lpc_radix_tag_set(&f->tree, index, LPC_TAG_DIRTY);
			dirty_inc(f);
			set = LPC_PG_DIRTY;
		}
	}
	lpc_yield_point(LPC_YP_K5);
	lpc_page_end_writeback(p, set);					/* K5 */
	lpc_file_index_unlock(f);
}

void lpc_wb_clear_towrite(struct lpc_file *f, uint64_t index)
{
	lpc_file_index_lock(f);
	lpc_radix_tag_clear(&f->tree, index, LPC_TAG_TOWRITE);
	lpc_file_index_unlock(f);
}

bool lpc_wb_truncate_page(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	bool removed;

	lpc_debug_check(!(lpc_page_flags(p) & LPC_PG_WRITEBACK), "TRUNCATE-WRITEBACK", p,
			"truncate removes a page whose write is in flight");
	lpc_file_index_lock(f);
	removed = lpc_radix_delete_if(&f->tree, index, p);
	if (removed) {
		lpc_page_debug_removed(p);
		lpc_page_mark_removed(p); /* its holders keep it: evict.c E1 */
		if (atomic_fetch_and_explicit(&p->flags, ~(uint32_t)LPC_PG_DIRTY,
					      memory_order_relaxed) & LPC_PG_DIRTY)
			dirty_dec(f);
	}
	lpc_file_index_unlock(f);
	if (removed)
		lpc_page_release(p); /* the index's reference */
	return removed;
}

unsigned lpc_wb_gang_tag_get(struct lpc_file *f, uint64_t first, unsigned tag,
				  struct lpc_page **pages, uint64_t *idx, unsigned max)
{
	unsigned n, k = 0;

	lpc_file_index_lock(f);
	do {
		if (tag == LPC_WB_ANY)
			n = lpc_radix_gang(&f->tree, first, (void **)pages, idx, max);
		else
			n = lpc_radix_gang_tag(&f->tree, first, tag, (void **)pages, idx, max);
		/* Under the index lock a page in the tree holds the index's
		 * reference, except one that a fast invalidate (remove.c,
		 * under its leaf's lock alone: radix.c FD1-FD3) has frozen and
		 * is about to delete or unfreeze in the same leaf hold.  (A
		 * tagged page never is: FD2 refuses a tagged slot.)  So: an
		 * increment unless zero; on a zero, wait for the leaf's holder
		 * by taking the lock (index lock -> leaf lock), under which a
		 * page still in its slot is not frozen and a plain increment is
		 * safe; a page gone meanwhile is left out.  A try-get that
		 * succeeds re-checks the slot (as lookup.c R4): a page a fast
		 * invalidate freed after the gang saw it may be cached again
		 * at once, for another file, by its thread's miss
		 * (page/alloc.c MR1); with our reference and the index lock,
		 * a page found in its slot stays there.  In a read section,
		 * for the frames' grace period toward private uses. */
		lpc_rcu_read_lock();
		for (unsigned i = 0; i < n; i++) {
			struct lpc_page *p = pages[i];
			bool got = lpc_page_try_get(p);

			if (got && lpc_radix_lookup(&f->tree, idx[i], NULL) != p) {
				lpc_page_release(p); /* MR5 */
				got = false;
			} else if (!got) {
				struct lpc_radix_node *leaf = lpc_radix_leaf_lock(&f->tree, idx[i]);

				if (leaf) {
					got = lpc_radix_leaf_entry(leaf, idx[i]) == p;
					if (got)
						atomic_fetch_add_explicit(&p->ref, 1,
									  memory_order_acquire);
					lpc_radix_leaf_unlock(leaf);
				}
			}
			if (got) {
				pages[k] = p;
				idx[k++] = idx[i];
			}
		}
		lpc_rcu_read_unlock();
		/* All left out: the callers stop at 0, so look further. */
		if (n && !k)
			first = idx[n - 1] + 1;
	} while (n && !k && first);
	lpc_file_index_unlock(f);
	return k;
}

/* errseq: bits 0-11 the errno, bit 12 SEEN, the rest a counter. */
#define ERRSEQ_ERRNO 0xfffu
#define ERRSEQ_SEEN (1u << 12)
#define ERRSEQ_ONE (UINT64_C(1) << 13)

void lpc_wb_err_record(struct lpc_file *f, int err)
{
	uint64_t old = atomic_load_explicit(&f->wb_err, memory_order_relaxed);
	uint64_t e = (uint64_t)(err < 0 ? -err : err) & ERRSEQ_ERRNO;

	if (!e)
		e = EIO;
	while (!atomic_compare_exchange_weak_explicit(
		&f->wb_err, &old, ((old & ~(uint64_t)(ERRSEQ_ERRNO | ERRSEQ_SEEN)) + ERRSEQ_ONE) | e,
		memory_order_seq_cst, memory_order_relaxed))
		;
}

uint64_t lpc_wb_err_sample(struct lpc_file *f)
{
	return atomic_load_explicit(&f->wb_err, memory_order_seq_cst);
}

int lpc_wb_err_check(struct lpc_file *f, uint64_t since)
{
	uint64_t now = atomic_load_explicit(&f->wb_err, memory_order_seq_cst);

	for (;;) {
		if ((now & ~(uint64_t)(ERRSEQ_ERRNO | ERRSEQ_SEEN)) !=
		    (since & ~(uint64_t)(ERRSEQ_ERRNO | ERRSEQ_SEEN))) {
			/* Recorded during this call: every such caller gets it. */
			if (!(now & ERRSEQ_SEEN))
				atomic_compare_exchange_strong(&f->wb_err, &now, now | ERRSEQ_SEEN);
			return -(int)(now & ERRSEQ_ERRNO);
		}
		if ((now & ERRSEQ_SEEN) || !(now & ERRSEQ_ERRNO))
			return 0;
		/* Recorded before, returned to nobody yet: to exactly one. */
		if (atomic_compare_exchange_strong(&f->wb_err, &now, now | ERRSEQ_SEEN))
			return -(int)(now & ERRSEQ_ERRNO);
	}
}
