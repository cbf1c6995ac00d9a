/* SPDX-License-Identifier: MIT */
/*
 * optimistic.h - reading a cached page without a reference: copy under the
 * page's sequence count, validate afterwards, write no shared line.  Used by
 * lpc_pread (read.c) and lpc_page_read (optimistic.c).  Modelled, with the
 * broken variants spin must catch, in tests/model/optimistic.pml.
 *
 * Why: a hit through the referenced path (lookup.c R1-R5) writes the page's
 * `ref` twice (get and put), so threads that read one hot page bounce its
 * descriptor's line between their cores.  An optimistic read only loads it.
 *
 * Optimistic read (reader), one try:
 *   O1 rcu_read_lock() (the caller's)
 *   O2 walk the radix tree to the leaf slot of `index` (R2's walk); an empty
 *      slot: fall back
 *   O3 s1 = load seq (acquire); fall back if s1 is odd (a writer is inside),
 *      if UPTODATE is clear, or if the identity (file, index) is not this
 *      lookup's
 *   O4 copy from the frame (lpc_pread), or run the caller's function on it
 *      (lpc_page_read): the view may be torn, nothing from it is trusted yet
 *   O5 acquire fence; s2 = load seq; re-load the slot.  The copy is valid
 *      iff s2 == s1 and the slot still holds the page
 *   O6 rcu_read_unlock().  Invalid: fall back, once, to the referenced path
 *      (R1-R5, and M1-M6 on a miss), which always completes: no livelock.
 *
 * Writers (page/page.h, lpc_page_seq_write_begin/end): every change of a
 * page's data or identity happens between begin (seq odd, release fence) and
 * end (seq even again, release), by the holder of the page lock or the
 * owner of a page nobody else can reach: the miss path from M2 to M5
 * (miss.c), the allocator when it recycles a frame (alloc.c), and - as they
 * land - the write path (lpc_pwrite: begin/end around every copy into a
 * cached page, under the page lock) and eviction (its frames are recycled
 * through the allocator, which bumps; its freeze-and-delete changes neither
 * data nor identity).  The debug build checks the identity side (rule
 * SEQ-IDENTITY) and that no section is left open (SEQ-OPEN).
 *
 * Why a torn copy is never returned.  The copy's loads lie between the
 * acquire load of s1 and the acquire fence before s2.  If any of them read a
 * byte that a writer stored, that writer's begin (odd count, then a release
 * fence) happens before our fence, so s2 sees that odd count or a later
 * one: s2 != s1.  If s1 itself came from a writer's end (release), the copy
 * sees everything that writer stored.  So with s1 == s2 even, the copy is
 * the data of one version, written by no writer during the copy.  The count
 * only grows (2^31 writes during one copy would be needed to wrap).
 *
 * Why a frame reused during the copy is never returned.  The page was in
 * the slot when O2 loaded it, inside this read section; a remover clears
 * the slot (remover B) and frees the frame.  A private use (lpc_page_alloc,
 * whose owner writes its page with plain stores and no seq section,
 * believing nobody else reads it) gets the frame only after a grace period
 * (C), which waits for this section: what seq cannot cover (spin:
 * BUG_OPT_NO_GRACE).  A miss of the remover's own thread may take it at
 * once (page/alloc.c MR1), but every such reuse moves seq before it changes
 * the frame's identity or data: page_init_private's section, then M2's,
 * open until M5.  So a copy that overlaps the reuse sees s2 != s1, and one
 * that begins after it (s1 even, from M5) is of a page with another
 * identity, refused by O3 and by O5's slot check, or of the very page this
 * lookup wants, reused for this slot: a true hit.  A refused copy may have
 * put another file's bytes in the caller's buffer (lpc_pread) or view
 * (lpc_page_read's fn) before the fallback overwrites them; where the
 * fallback then fails, the bytes past what it returns are undefined, as
 * pread(2)'s are on an error.
 *
 * Why the slot is re-checked (O5).  seq covers changes of the page itself;
 * it does not see the page leave the index.  A page removed by the last
 * close or a failed read (truncate-like: no freeze) stays valid for those
 * who hold it, and a holder may still write it (a write that is lost with
 * the page).  Without the re-check, a reader that found the page before the
 * removal could return such data, which the file never held in the cache.
 * With it, the copy was the cache's page at `index` at O5 (spin:
 * BUG_OPT_NO_SLOT_CHECK; the debug build checks it: rule
 * OPTIMISTIC-NOT-IN-INDEX).  This is R4's job for the referenced path.
 *
 * The identity check (O3) refuses, before the copy, a frame a miss reused
 * for another page since O2 (MR1: seq even again after M5), which O5's
 * slot check would refuse after it; it costs two loads of the line seq is
 * on.
 *
 * Memory order: s1 acquire pairs with the writers' release at end (the data
 * of that version is visible); the fence at O5 pairs with the release fence
 * at begin (a copy that saw any new byte sees the odd count in s2); the slot
 * load at O5 is ordered after the copy by the same fence.  UPTODATE and the
 * identity are read relaxed after s1: a stale or new value of either is
 * judged by s2 like the data.  Formally the copy races with a writer's
 * stores (a seqlock's reads are data races in C11 when a writer runs); the
 * TSan build ignores the copy's accesses (lpc_tsan_ignore_begin/end) since
 * TSan cannot see fences.
 */
#ifndef LPC_FILEMAP_OPTIMISTIC_H
#define LPC_FILEMAP_OPTIMISTIC_H

#include "filemap/filemap.h"

#if LPC_DEBUG
/*
 * Rule OPTIMISTIC-NOT-IN-INDEX: a copy O5 accepted was of a page in the
 * index at O5 (the slot re-check).  As LOOKUP-NOT-IN-INDEX (lookup.c):
 * removers count a removal (dbg_removals, release) after B under the index
 * lock or the leaf's (a fast delete); `removals` was loaded after O3.  If
 * the slot no longer holds p and, once the remover is done (both locks), the count is still what it was
 * at O3, the removal came before O3: a re-check would have refused the copy.
 * Context: inside the read section (taking the index lock there is legal:
 * no index-lock holder waits for a grace period).
 */
static inline void lpc_debug_optimistic_check(struct lpc_file *f, struct lpc_page *p,
					      uint64_t index, void *_Atomic const *slot,
					      uint32_t removals)
{
	uint32_t now;

	if (atomic_load_explicit(slot, memory_order_acquire) == p)
		return;
	lpc_file_index_lock(f);
	lpc_radix_leaf_sync(slot, index); /* a fast delete counts under it */
	now = atomic_load_explicit(&p->dbg_removals, memory_order_relaxed);
	lpc_file_index_unlock(f);
	lpc_debug_check(now != removals, "OPTIMISTIC-NOT-IN-INDEX", p,
			"optimistic read accepted a page removed from the index before its re-check (O5)");
}
#endif

/*
 * O2-O5 for page `index` of f: runs fn(frame, page_size, arg) on the page's frame and
 * says whether what it saw was one stable version of the cached page.
 * Inline so that lpc_pread's copy is inlined into it.  Return: the page
 * if valid, not marked for the policy yet (lpc_filemap_mark_seen), or NULL:
 * the caller counts and falls back.  Context: inside an RCU read section
 * (O1) of a registered thread; lockless mode only.
 */
static lpc_always_inline struct lpc_page *lpc_filemap_read_optimistic_page(struct lpc_file *f,
									 uint64_t index,
									 lpc_page_read_fn *fn,
									 void *arg)
{
	void *_Atomic const *slot;
	struct lpc_page *p;
	uint32_t s1, flags;
#if LPC_DEBUG
	uint32_t removals;
#endif

	lpc_yield_point(LPC_YP_O2);
	p = lpc_radix_lookup(&f->tree, index, &slot);			/* O2 */
	if (unlikely(!p))
		return NULL;
	lpc_yield_point(LPC_YP_O3);
	s1 = atomic_load_explicit(&p->seq, memory_order_acquire);	/* O3 */
	flags = atomic_load_explicit(&p->flags, memory_order_relaxed);
	/* A page with RA_MARK goes the referenced way, which starts the next
	 * readahead window (miss.c, readahead.c A1): same test, no cost. */
	if (unlikely((s1 & 1) || (flags & (LPC_PG_UPTODATE | LPC_PG_RA_MARK)) != LPC_PG_UPTODATE ||
		     atomic_load_explicit(&p->file, memory_order_relaxed) != f ||
		     atomic_load_explicit(&p->index, memory_order_relaxed) != index))
		return NULL;
#if LPC_DEBUG
	removals = atomic_load_explicit(&p->dbg_removals, memory_order_acquire);
#endif
	lpc_tsan_ignore_begin();
	fn(lpc_page_frame(p), f->pool->page_size, arg);			/* O4 */
	lpc_tsan_ignore_end();
	atomic_thread_fence(memory_order_acquire);			/* O5 */
	lpc_yield_point(LPC_YP_O5);
	if (unlikely(atomic_load_explicit(&p->seq, memory_order_relaxed) != s1 ||
		     atomic_load_explicit(slot, memory_order_relaxed) != p))
		return NULL;
#if LPC_DEBUG
	lpc_debug_optimistic_check(f, p, index, slot, removals);
#endif
	return p;
}

/*
 * The use of a page an optimistic read saw (after O5).  Its flags are
 * re-loaded rather than kept across fn: one register less to save.  No
 * reference is held: if a miss of its remover's thread reused the frame
 * since O5 (page/alloc.c MR1), the mark lands on that new page (REFERENCED
 * set, or RA or FRESH taken): a policy nudge, never data (reclaim/evict.c,
 * "Policy").
 */
static lpc_always_inline void lpc_filemap_mark_seen(struct lpc_page *p)
{
	lpc_page_mark_referenced(p, atomic_load_explicit(&p->flags, memory_order_relaxed));
}

/* O2-O5 and the use's mark: lpc_filemap_read_optimistic_page, then
 * lpc_filemap_mark_seen.  Return: true if valid. */
static lpc_always_inline bool lpc_filemap_read_optimistic(struct lpc_file *f, uint64_t index,
							  lpc_page_read_fn *fn, void *arg)
{
	struct lpc_page *p = lpc_filemap_read_optimistic_page(f, index, fn, arg);

	if (!p)
		return false;
	lpc_filemap_mark_seen(p);
	return true;
}

/*
 * The fallback's copy (F2-F3), on a page the caller holds with a reference:
 * the reference keeps its identity, and seq tells whether a writer changed
 * the data during fn; if one did (or is inside), fn runs once more under the
 * page lock, which excludes every writer of the data.  So a held page's view
 * is one version too (K.1), and fn runs at most twice here.
 * Context: outside a read section; may sleep (the page lock).
 */
static lpc_always_inline void lpc_filemap_read_held(struct lpc_page *p, lpc_page_read_fn *fn,
						    void *arg)
{
	uint32_t s1 = atomic_load_explicit(&p->seq, memory_order_acquire);	/* F2 */

	if (likely(!(s1 & 1))) {
		lpc_tsan_ignore_begin();
		fn(lpc_page_frame(p), p->pool->page_size, arg);
		lpc_tsan_ignore_end();
		atomic_thread_fence(memory_order_acquire);
		if (likely(atomic_load_explicit(&p->seq, memory_order_relaxed) == s1))
			return;
	}
	lpc_page_lock_noseq(p);							/* F3 */
	fn(lpc_page_frame(p), p->pool->page_size, arg);
	lpc_page_unlock_noseq(p);
}

#endif /* LPC_FILEMAP_OPTIMISTIC_H */
