/* SPDX-License-Identifier: MIT */
/*
 * evict.c - eviction: taking cached pages nobody holds out of their file's
 * index under lockless readers, over the descriptor array with a clock hand.
 *
 * The hand is a descriptor number; an evictor takes the next `batch`
 * descriptors with one atomic add (relaxed: it only hands out disjoint
 * ranges), so evictors running at once work on different batches.  One batch
 * is one RCU read section.  Per descriptor p (the evictor's steps E1-E8;
 * the lockless reader's are R1-R5 in filemap/lookup.c, the remover's A-C):
 *   E1 loads of ref, then flags (both acquire): skip unless ref == 1 (the
 *      index's reference alone), PUBLISHED, and none of REMOVED, LOCKED,
 *      DIRTY, WRITEBACK; the policy (below) may keep it too, and clears
 *      REFERENCED where it needs no lock; the background reclaimer's
 *      refill for readahead alone keeps pages read ahead and not used yet
 *      (RA: reclaim/reclaimer.c, spare_ra).
 *   E2 f = p->file, index = p->index (relaxed; stale at worst, never
 *      freed: see "Why p->file is safe to follow"); trylock f's index lock
 *      (a mutex, or the rwlock for writing in LOCKED mode).  Never block on
 *      it inside the read section: a holder may hold it long (a close's
 *      remove_all), and the batch should move on to other files rather
 *      than stall behind it.  Failure: skip (busy).
 *   E3 under the lock: the slot at `index` must hold p, else skip (busy).
 *      This is what ties (f, index) to p: a page removed by a truncate-like
 *      removal (failed read) that still has one holder has ref 1 and is no
 *      longer in the slot.  The policy decides here; a decision that
 *      changes the active count (promote, demote) is taken again under
 *      p's leaf lock too (AC1-AC3 below): the index lock alone does not
 *      keep p in its slot, a fast removal needs only the leaf's.
 *   E4 freeze: CAS ref 1 -> 0 (the remover's step A).  Failure: a user or
 *      a speculative getter past R3 holds it: skip (held), untouched.  In
 *      lockless mode E4-E5 run under p's leaf lock, after the slot is
 *      checked again under it (skip, busy, if it no longer holds p): a
 *      fast removal (remove.c) needs only that lock, and the frame it
 *      frees may be cached again at once for another file by its thread's
 *      miss (page/alloc.c MR1), with ref 1: a freeze after E3's check
 *      alone would freeze that live page, and E6-E7 free it under its new
 *      file.  Once frozen in its slot, p leaves it only by E6 (a freeze
 *      fails on 0, and a truncate-like removal needs the index lock), so
 *      the leaf is unlocked before E6's structural delete.
 *   E5 re-check LOCKED, DIRTY, WRITEBACK after the freeze: set before it
 *      (nobody can set them after: they need a reference), unfreeze (store
 *      1, release) and skip.
 *   E6 delete the slot (step B, radix N1-N4), count the removal
 *      for LPC_DEBUG's LOOKUP-NOT-IN-INDEX check (after B, under the lock),
 *      unlock.  No seq bump: data and identity are unchanged (optimistic
 *      readers re-check the slot; the allocator bumps seq on reuse).
 *   E7 free through the deferred path (step C: lpc_page_free_evicted puts
 *      it on pending and, unlike a put's lpc_page_free_deferred, never
 *      hands pending to call_rcu: the evictor's caller takes pending with
 *      its own grace period right after, the reclaimer with
 *      lpc_page_pending_drain, direct reclaim with the allocator's next
 *      reclaim(); liburcu's call_rcu thread sleeps 10 ms after each batch
 *      of callbacks, which capped the reclaimer at a few hundred frames per
 *      10-20 ms), still inside the batch's read section: a reclaimer's
 *      grace period therefore waits for a frame between E4 and pending
 *      (page/alloc.c, frames in transit).
 *   E8 (E1's dirty branch) a page E1 finds DIRTY and nothing else keeps
 *      (ref 1, published, not LOCKED, not WRITEBACK) is handed to
 *      writeback instead: f = p->file (relaxed, as E2), and if
 *      f->wb_reclaim is clear, set it (exchange, relaxed: a hint, it
 *      orders nothing) and, once the batches' read sections are over,
 *      kick the cache's flusher (writeback/flusher.c), whose next round
 *      writes f back (WB_ASYNC, K1-K5) whatever its age or the ratios.
 *      The page itself is skipped (counted skipped_dirty), untouched: the
 *      evictor never changes DIRTY or WRITEBACK, never writes, and E5
 *      still refuses a page dirtied after E1, so a dirty page is never
 *      dropped.  Once written it is clean, and a later pass evicts it;
 *      the allocator's bounded wait re-runs direct reclaim meanwhile
 *      (page/alloc.c).  Following p->file is safe inside the read
 *      section (below); a stale f (the frame reused since E1's loads) only
 *      costs a pass over a file that did not need one, and a file being
 *      closed is written back by its close anyway (the flusher picks only
 *      open files).  Why the flusher and not a write here: eviction runs
 *      inside an RCU read section and in allocating threads (direct
 *      reclaim), where a synchronous write would stall grace periods and
 *      the allocation; the kernel's direct reclaim, likewise, wakes the
 *      flusher rather than writing file pages.  And a pass over the file
 *      coalesces its dirty pages into long vectored writes, where a write
 *      of the one page met would go out alone.
 *
 * The rule that must not break (cache/cache.h): nothing waits for a grace
 * period while it holds a frozen page in a slot - a reader that loaded the
 * slot spins R2 -> R3 -> R2 inside its read section until E6.  Between E4
 * and E6 the evictor runs only flag loads and the radix delete, under an
 * index lock it took with trylock; it waits for nothing, and the grace
 * periods of its callers (direct reclaim's reclaim(), the reclaimer's
 * drain) come after the batch's read section has ended.  LPC_DEBUG counts
 * E4..E6 in lpc_debug_frozen, which lpc_rcu_synchronize and lpc_rcu_barrier
 * check (rule GP-WHILE-FROZEN).  Modelled, with the concurrent miss on the
 * same index (a new page inserted while the old one is frozen) and broken
 * variants, in tests/model/evict.pml.
 *
 * Why p->file is safe to follow (E2).  struct lpc_file is freed with
 * call_rcu after the last close's lpc_filemap_remove_all (filemap/file.c),
 * and its index lock is destroyed in that callback.  A page whose file
 * could be freed during this read section was taken out of that file's
 * index before the free was queued: either frozen (ref 0 until the frame
 * is reused: E1 skips it), or by the close's truncate-like removal, which sets
 * REMOVED (release) before queuing the free: a read section that can still
 * be running when the free runs began after it was queued, so it sees
 * REMOVED, and E1 skips the page.  A file whose close is in progress is
 * caught by E3: remove_all empties the tree under the index lock.  A frame
 * reused since has its new identity (or NULL) before any ref E1 can see as
 * 1: the allocator stores NULL and flags 0 before its release store of ref
 * 1 (alloc.c; a miss's frame keeps ref 0 until M2's release store, after
 * its identity and flags: MR2-MR3), and every later change of ref is a release RMW by a thread
 * that saw the new identity (M2's own put, or a holder that got the page
 * through its published slot); E1's acquire load of ref pairs with them,
 * so the flags and p->file it loads next are at least that new.
 *
 * The interleavings that matter (besides those of lookup.c):
 *  - R2 loads p, E4 freezes it, R3 fails: the reader retries until E6, then
 *    finds the slot empty (a miss) or a new page.  Had R3 come first, E4
 *    fails: a reference taken by a reader is never frozen away.
 *  - A miss on the same index while p is frozen: M3's insert runs under the
 *    index lock, which the evictor holds from E3 to E6: it sees p (-EEXIST,
 *    its lookup retries) or the empty slot after E6 (it inserts its page).
 *  - lpc_page_lock, lpc_invalidate, the last close: the lock needs a
 *    reference (E4 fails, or E5 sees LOCKED); the close and invalidate's
 *    slow path take the index lock (E2's trylock fails, or E3 sees the slot
 *    changed); invalidate's fast path (remove.c, radix.c FD1-FD3) takes
 *    only p's leaf lock and freezes p first: E4's CAS fails once it has
 *    (ref 0), and its own freeze fails once E4 has; between E3 and E4 it
 *    can remove p, which E4's check under the leaf lock and AC1 (below)
 *    see.
 *
 * Policy (scan resistance), in the descriptor's flags; the hit path only
 * sets REFERENCED when it is clear (filemap/lookup.c), the miss path never
 * does.  (An optimistic read marks the page after its O5 with no reference held:
 * if the frame was reused meanwhile by its remover's miss, page/alloc.c
 * MR1, the new page starts REFERENCED, or a page read ahead loses RA; a
 * policy nudge, as E1's own clear of REFERENCED on a frame reused since
 * its loads: filemap/optimistic.h.)
 *  CLOCK2 (default): new pages are inactive, REFERENCED clear.
 *    inactive, !REFERENCED -> evict, leaving a shadow (E6)
 *    inactive,  REFERENCED -> promote: set ACTIVE and WORKINGSET, clear
 *                             REFERENCED (E3)
 *    active,    REFERENCED -> clear REFERENCED, keep (E1: no lock needed)
 *    active,   !REFERENCED -> demote to inactive (E3) only while the active
 *                             count is above the target (pool->ws, moved by
 *                             refaults: reclaim.h), or after a whole sweep
 *                             that evicted nothing (demote_all: the
 *                             inactive pages are gone), else keep
 *    A sequential scan's pages are never referenced again (their first use
 *    after readahead or a demand run read them clears RA or FRESH instead:
 *    page/page.h, lpc_page_mark_referenced): they are evicted
 *    at first sight, and the hot set, active, stays.  The active count
 *    (pool->nactive) is kept by the evictor and by the deferred free of an
 *    active page (page/alloc.c), never by the hit path.
 *
 *  The active count.  Invariant (rule ACTIVE-COUNT): at quiescence,
 *  pool->nactive is the number of descriptors with ACTIVE set, and only a
 *  page in an index carries ACTIVE (a free frame never does: the allocator
 *  clears the flags with a plain store when it hands the frame out again,
 *  and a flag still set then would leave the count one too high for ever).
 *  Who changes ACTIVE, and the count with it (each with the RMW's result,
 *  so one flip is counted once):
 *   - the evictor's promotion (0 -> 1, +1) and demotion (1 -> 0, -1),
 *     AC1-AC3 below, on a page in its slot;
 *   - the deferred free of a published page (page/alloc.c deferred_prep:
 *     1 -> 0, -1), the one place every removed page passes (eviction E7,
 *     the last put of a page a close, a truncate or a failed read took
 *     out, lpc_invalidate's chains whether kept, OD2, or pending): a page
 *     removed from its index with ACTIVE set leaves the count there, and
 *     no removal path touches ACTIVE itself.
 *  Nothing else writes ACTIVE: the hit path only sets REFERENCED, the
 *  allocator's store is on a frame deferred_prep has cleared.  What must
 *  hold is that the evictor's change comes before deferred_prep's in
 *  ACTIVE's modification order: a promotion after it marks a freed frame
 *  (+1 never undone), a demotion decided before it and done after it
 *  subtracts a second time (the count 1 -> 0 -> UINT32_MAX: every hot
 *  page demoted, scan resistance lost).  E3's index lock does not give
 *  that: lpc_invalidate's fast path (filemap/remove.c, radix.c FD1-FD3)
 *  and a failed read's lpc_filemap_delete remove a page under its leaf's
 *  lock alone, and their frees need no index lock (tests/regress/
 *  regress_active_invalidate.c: both stories drifted).  So:
 *   AC1 under the index lock (E3 saw p in its slot), in lockless mode lock
 *       p's leaf (radix.c's order: index lock, then leaf lock) and check
 *       the slot still holds p, else skip (busy).  In LOCKED mode every
 *       removal takes the index lock: no leaf lock needed.
 *   AC2 re-load the flags, decide again, and change ACTIVE with one RMW
 *       whose result says whether this call flipped it; count the flip
 *       (relaxed: the count is a balance hint, read relaxed by
 *       above_target; the flip and its count need no order between them
 *       because nobody compares them but at quiescence).
 *   AC3 unlock the leaf.
 *  Why that suffices: every removal deletes the slot under the leaf's lock
 *  (fast: FD1-FD3; slow: N2, under the index lock that the evictor holds
 *  anyway), so a removal of p is either before AC1 (the check skips) or
 *  after AC3 (the unlock's release and the remover's lock acquire order
 *  the evictor's RMW before the removal, the removal before the free's
 *  deferred_prep: its fetch_and sees the evictor's change and counts it).
 *  And p is not frozen at AC2: a freezer that takes it out deletes it in
 *  the same hold of the leaf lock (or of the index lock), a freezer that
 *  puts it back (E5, an invalidate's busy re-check) changes no flag.
 *  LPC_DEBUG checks each adjustment (the RMW flipped the bit, p not
 *  frozen, no decrement from 0) and, at lpc_cache_destroy, that no frame
 *  carries ACTIVE and the count is 0 (lpc_reclaim_active_census).
 *  Modelled, against the fast invalidate, a hit and the frame's reuse, in
 *  tests/model/active.pml (broken variant BUG_NO_LEAF_LOCK: the old
 *  decision at E3, which spin catches).
 *  CLOCK: second chance only: REFERENCED -> clear, keep; else evict.
 */
#include <errno.h>

#include <lpc/lpc.h>

#include "filemap/filemap.h"
#include "reclaim/reclaim.h"
#include "writeback/writeback.h"

enum {
	SK_HELD,
	SK_LOCKED,
	SK_DIRTY,
	SK_REFERENCED,
	SK_BUSY,
	SK_NR,
};

static const enum lpc_counter sk_counter[SK_NR] = {
	[SK_HELD] = LPC_C_SKIPPED_HELD,
	[SK_LOCKED] = LPC_C_SKIPPED_LOCKED,
	[SK_DIRTY] = LPC_C_SKIPPED_DIRTY,
	[SK_REFERENCED] = LPC_C_SKIPPED_REFERENCED,
	[SK_BUSY] = LPC_C_SKIPPED_BUSY,
};

#define EV_EVICTED (-1)
#define EV_EVICTED_WS (-3) /* evicted, and it had been active (WORKINGSET) */
#define EV_IGNORED (-2) /* free or in transit: not a skip */

static const uint32_t busy_flags = LPC_PG_LOCKED | LPC_PG_DIRTY | LPC_PG_WRITEBACK;

static int busy_reason(uint32_t fl)
{
	return (fl & LPC_PG_LOCKED) ? SK_LOCKED : SK_DIRTY;
}

static void clear_referenced(struct lpc_page *p)
{
	atomic_fetch_and_explicit(&p->flags, ~LPC_PG_REFERENCED, memory_order_relaxed);
}

/* CLOCK2: may an active page that was not referenced be demoted?  Above the
 * target, or after a whole sweep of the hand evicted nothing (the inactive
 * list is empty: the active pages must give way, or allocations would fail
 * with frames nobody holds). */
static bool above_target(struct lpc_reclaim *r)
{
	return atomic_load_explicit(&r->pool->nactive, memory_order_relaxed) >
		       lpc_pool_ws_target(&r->pool->ws) ||
	       atomic_load_explicit(&r->demote_all, memory_order_relaxed);
}

/* Rule ACTIVE-COUNT at one adjustment (AC2): the RMW changed ACTIVE (nobody
 * else changes it on a page in its slot), the page is not frozen, and the
 * count does not go below 0. */
static void debug_active_step(struct lpc_pool *c, struct lpc_page *p, uint32_t old, bool set)
{
#if LPC_DEBUG
	lpc_debug_check(!(old & LPC_PG_ACTIVE) == set, "ACTIVE-COUNT", p,
			"%s of a page whose ACTIVE was %s already", set ? "promotion" : "demotion",
			set ? "set" : "cleared");
	lpc_debug_check(atomic_load_explicit(&p->ref, memory_order_relaxed) != 0, "ACTIVE-COUNT",
			p, "%s of a frozen or freed page", set ? "promotion" : "demotion");
	lpc_debug_check(set || atomic_load_explicit(&c->nactive, memory_order_relaxed) != 0,
			"ACTIVE-COUNT", p, "demotion with the active count at 0");
#else
	(void)c, (void)p, (void)old, (void)set;
#endif
}

/*
 * AC1-AC3: a promotion or demotion of p, in its slot at index.  Context: f's
 * index lock (E3 done), the batch's read section.  Return: SK_REFERENCED
 * (kept), or SK_BUSY if p left its slot since E3.
 */
static int active_change(struct lpc_reclaim *r, struct lpc_file *f, struct lpc_page *p,
			 uint64_t index)
{
	struct lpc_pool *c = r->pool;
	struct lpc_radix_node *leaf = NULL;
	uint32_t fl, old;

	if (!f->locked_lookup) {
		leaf = lpc_radix_leaf_lock(&f->tree, index);			/* AC1 */
		if (!leaf)
			return SK_BUSY;
		if (lpc_radix_leaf_entry(leaf, index) != p) {
			lpc_radix_leaf_unlock(leaf);
			return SK_BUSY; /* a fast removal took it since E3 */
		}
	}
	fl = atomic_load_explicit(&p->flags, memory_order_relaxed);		/* AC2 */
	if (fl & LPC_PG_ACTIVE) {
		if (!(fl & LPC_PG_REFERENCED) && above_target(r)) {
			old = atomic_fetch_and_explicit(&p->flags, ~LPC_PG_ACTIVE,
							memory_order_relaxed);
			debug_active_step(c, p, old, false);
			if (old & LPC_PG_ACTIVE)
				atomic_fetch_sub_explicit(&c->nactive, 1, memory_order_relaxed);
		} else {
			clear_referenced(p);
		}
	} else if (fl & LPC_PG_REFERENCED) {
		old = atomic_fetch_or_explicit(&p->flags, LPC_PG_ACTIVE | LPC_PG_WORKINGSET,
					       memory_order_relaxed);
		debug_active_step(c, p, old, true);
		if (!(old & LPC_PG_ACTIVE))
			atomic_fetch_add_explicit(&c->nactive, 1, memory_order_relaxed);
		clear_referenced(p);
	}
	if (leaf)
		lpc_radix_leaf_unlock(leaf);					/* AC3 */
	return SK_REFERENCED;
}

/*
 * The policy's decision under the index lock (E3 done: p was in its slot).
 * Return: -1 to go on and evict, or the skip reason.
 */
static int policy_locked(struct lpc_reclaim *r, struct lpc_file *f, struct lpc_page *p,
			 uint64_t index, uint32_t fl)
{
	if (r->policy == LPC_RECLAIM_CLOCK) {
		if (fl & LPC_PG_REFERENCED) {
			clear_referenced(p);
			return SK_REFERENCED;
		}
		return -1;
	}
	if (fl & LPC_PG_ACTIVE) {
		/* E1 let it through: demote if still above the target. */
		if (!(fl & LPC_PG_REFERENCED) && above_target(r))
			return active_change(r, f, p, index);
		clear_referenced(p);
		return SK_REFERENCED;
	}
	if (fl & LPC_PG_REFERENCED) /* promote: referenced since it came in */
		return active_change(r, f, p, index);
	return -1;
}

/*
 * E1-E8 for one descriptor.  Return: EV_EVICTED, EV_IGNORED, or the reason
 * it was skipped (SK_*).  Context: inside the batch's read section.
 */
/* E8: hands p's file to the flusher; *kick receives the cache's writeback
 * state when the flusher must be kicked.  Context: the batch's read
 * section. */
static void handoff(struct lpc_page *p, struct lpc_wb **kick)
{
	struct lpc_file *f;

	lpc_yield_point(LPC_YP_E8);
	f = atomic_load_explicit(&p->file, memory_order_relaxed);		/* E8 */
	if (!f)
		return;
	if (atomic_load_explicit(&f->wb_reclaim, memory_order_relaxed)) {
		/* A pass is asked for already; again only while no flusher runs
		 * to see it (its start failed: writeback/flusher.c F2). */
		if (f->files->wb &&
		    !atomic_load_explicit(&f->files->wb->running, memory_order_relaxed))
			*kick = f->files->wb;
		return;
	}
	if (!atomic_exchange_explicit(&f->wb_reclaim, true, memory_order_relaxed))
		*kick = f->files->wb;
}

static int evict_one(struct lpc_reclaim *r, struct lpc_page *p, struct lpc_wb **kick,
		     bool spare_ra, uint32_t clock, struct lpc_tcache *t)
{
	struct lpc_radix_node *leaf = NULL;
	struct lpc_file *f;
	uint64_t index;
	uint32_t ref, fl;
	int why;

	lpc_yield_point(LPC_YP_E1);
	ref = atomic_load_explicit(&p->ref, memory_order_acquire);		/* E1 */
	fl = atomic_load_explicit(&p->flags, memory_order_acquire);
	if (ref == 0)
		return EV_IGNORED; /* free, pending, or frozen by another remover */
	if (ref != 1 || (fl & (LPC_PG_PUBLISHED | LPC_PG_REMOVED)) != LPC_PG_PUBLISHED)
		return SK_HELD; /* a user's, or a private page */
	if (fl & busy_flags) {
		if ((fl & busy_flags) == LPC_PG_DIRTY)
			handoff(p, kick);
		return busy_reason(fl);
	}
	if (spare_ra && (fl & LPC_PG_RA))
		return SK_REFERENCED; /* read ahead, not used yet: kept for readahead */
	if (fl & LPC_PG_REFERENCED) {
		/* Keeping it needs no lock when the active count cannot
		 * change: CLOCK, or an active page (E3 otherwise). */
		if (r->policy == LPC_RECLAIM_CLOCK || (fl & LPC_PG_ACTIVE)) {
			clear_referenced(p);
			return SK_REFERENCED;
		}
	} else if ((fl & LPC_PG_ACTIVE) && !above_target(r)) {
		return SK_REFERENCED; /* the hot set stays */
	}

	lpc_yield_point(LPC_YP_E2);
	f = atomic_load_explicit(&p->file, memory_order_relaxed);		/* E2 */
	index = atomic_load_explicit(&p->index, memory_order_relaxed);
	if (!f || !lpc_file_index_trylock(f))
		return SK_BUSY;
	lpc_yield_point(LPC_YP_E3);
	if (lpc_radix_lookup(&f->tree, index, NULL) != p) {			/* E3 */
		why = SK_BUSY;
		goto unlock;
	}
	fl = atomic_load_explicit(&p->flags, memory_order_relaxed);
	lpc_yield_point(LPC_YP_E3P);
	why = policy_locked(r, f, p, index, fl);
	if (why >= 0)
		goto unlock;
	/* E4-E5 under p's leaf lock too (lockless mode): E3's check and the
	 * freeze must see the same page in the slot (see E4 above). */
	if (!f->locked_lookup) {
		leaf = lpc_radix_leaf_lock(&f->tree, index);
		if (!leaf || lpc_radix_leaf_entry(leaf, index) != p) {
			why = SK_BUSY; /* a fast removal took it since E3 */
			goto unlock;
		}
	}
	lpc_yield_point(LPC_YP_E4);
	if (!lpc_page_freeze(p, 1)) {						/* E4 */
		why = SK_HELD;
		goto unlock;
	}
	lpc_yield_point(LPC_YP_E5);
	fl = atomic_load_explicit(&p->flags, memory_order_acquire);		/* E5 */
	if (fl & busy_flags) {
		lpc_page_unfreeze(p, 1);
		why = busy_reason(fl);
		goto unlock;
	}
	if (leaf) {
		lpc_radix_leaf_unlock(leaf);
		leaf = NULL;
	}
	lpc_yield_point(LPC_YP_E6);
	{
		struct lpc_page *q = lpc_radix_delete(&f->tree, index);		/* E6 */

		lpc_debug_check(q == p, "EVICT-SLOT", p,
				"eviction deleted index %llu holding page %u, not the frozen page",
				(unsigned long long)index, q ? q->id : 0u);
	}
	lpc_page_debug_removed(p);
#if LPC_DEBUG
	lpc_debug_frozen--; /* out of its slot */
#endif
	/* Its shadow (page/workingset.h): a refault within the window moves
	 * the active target.  A page read ahead and never used: the window
	 * was too big, or the inactive side too small for it. */
	if (r->policy == LPC_RECLAIM_CLOCK2)
		lpc_pool_ws_evicted(&r->pool->ws, lpc_pool_ws_key(f->ws_id, index),
			       fl & LPC_PG_WORKINGSET, clock);
	if (fl & LPC_PG_RA) {
		lpc_ra_evicted_unused(f, t);
		if (r->policy == LPC_RECLAIM_CLOCK2)
			lpc_pool_ws_nudge(&r->pool->ws, false);
	}
	/* No seq bump: the page's data and identity do not change here (an
	 * optimistic reader's slot re-check sees the removal; the allocator
	 * bumps seq when it reuses the frame: filemap/optimistic.h). */
	lpc_file_index_unlock(f);
	lpc_yield_point(LPC_YP_E7);
	lpc_page_free_evicted(p);						/* E7 */
	return (fl & LPC_PG_WORKINGSET) ? EV_EVICTED_WS : EV_EVICTED;
unlock:
	if (leaf)
		lpc_radix_leaf_unlock(leaf);
	lpc_file_index_unlock(f);
	return why;
}

static unsigned evict_batches(struct lpc_reclaim *r, unsigned max_batches, bool spare_ra,
			      struct lpc_tcache *t)
{
	struct lpc_pool *c = r->pool;
	uint64_t skipped[SK_NR] = { 0 };
	struct lpc_wb *kick = NULL;
	unsigned evicted = 0, b;

	for (b = 0; b < max_batches; b++) {
		uint64_t start = atomic_fetch_add_explicit(&r->hand, r->batch,
							   memory_order_relaxed);
		uint32_t clock = lpc_pool_ws_clock(&c->ws);
		unsigned got = 0, got_ws = 0;

		lpc_rcu_read_lock();
		for (uint32_t i = 0; i < r->batch; i++) {
			struct lpc_page *p = &c->pages[(start + i) % c->nframes];
			int rc = evict_one(r, p, &kick, spare_ra, clock, t);

			if (rc == EV_EVICTED_WS)
				got_ws++;
			if (rc == EV_EVICTED || rc == EV_EVICTED_WS)
				got++;
			else if (rc >= 0)
				skipped[rc]++;
		}
		lpc_rcu_read_unlock();
		lpc_pool_ws_advance(&c->ws, got, got_ws);
		evicted += got;
	}
	if (kick) /* E8, outside the read sections: it takes the flusher's mutex */
		lpc_wb_kick(kick);
	/* A whole sweep of the hand without an eviction lets CLOCK2 demote
	 * below its target until one evicts again (written only when it
	 * changes).  Not a sweep that spared pages read ahead: the inactive
	 * pages it kept are there, and the hot set must not give way to
	 * make room for more readahead. */
	if (spare_ra && !evicted) {
		/* nothing */
	} else if (evicted) {
		if (atomic_load_explicit(&r->empty_batches, memory_order_relaxed))
			atomic_store_explicit(&r->empty_batches, 0, memory_order_relaxed);
		if (atomic_load_explicit(&r->demote_all, memory_order_relaxed))
			atomic_store_explicit(&r->demote_all, false, memory_order_relaxed);
	} else if (atomic_fetch_add_explicit(&r->empty_batches, b, memory_order_relaxed) + b >=
			   c->nframes / r->batch + 1 &&
		   !atomic_load_explicit(&r->demote_all, memory_order_relaxed)) {
		atomic_store_explicit(&r->demote_all, true, memory_order_relaxed);
	}
	if (t) {
		lpc_count_add(t, LPC_C_RECLAIM_SCANS, b);
		lpc_count_add(t, LPC_C_EVICTIONS, evicted);
		for (int i = 0; i < SK_NR; i++)
			if (skipped[i])
				lpc_count_add(t, sk_counter[i], skipped[i]);
	}
	return evicted;
}

unsigned lpc_reclaim_evict(struct lpc_reclaim *r, unsigned max_batches, struct lpc_tcache *t)
{
	return evict_batches(r, max_batches, false, t);
}

unsigned lpc_reclaim_evict_sparing(struct lpc_reclaim *r, unsigned max_batches, bool spare_ra,
				   struct lpc_tcache *t)
{
	return evict_batches(r, max_batches, spare_ra, t);
}

uint32_t lpc_reclaim_active_census(const struct lpc_reclaim *r, uint32_t *freed)
{
	const struct lpc_pool *c = r->pool;
	uint32_t live = 0, dead = 0;

	for (uint32_t i = 0; i < c->nframes; i++) {
		const struct lpc_page *p = &c->pages[i];

		if (!(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_ACTIVE))
			continue;
		if (atomic_load_explicit(&p->ref, memory_order_relaxed))
			live++;
		else
			dead++;
	}
	if (freed)
		*freed = dead;
	return live;
}
