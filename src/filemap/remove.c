/* SPDX-License-Identifier: MIT */
/*
 * remove.c - taking pages out of a file's index: a failed read, the last
 * close, lpc_invalidate (clean pages nobody holds), and a stream's drop
 * behind its reader (those of them read for a stream and used once:
 * readahead.c A5).  The protocol against
 * lockless readers is in lookup.c (remover steps A-C; the radix tree's own
 * delete steps inside B are N1-N4, index/radix.c) and tests/model/spec_get.pml.
 */
#include <errno.h>

#include "filemap/filemap.h"

#define GANG 16
#define INVAL_CHAIN 256 /* pages lpc_invalidate hands to pending at once */

bool lpc_filemap_delete(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	struct lpc_radix_node *leaf;
	bool removed;

	/* Lockless mode: B under the leaf's lock alone where that needs no
	 * structural change (radix.c FD1-FD3); else under the index lock. */
	if (!f->locked_lookup) {
		lpc_rcu_read_lock();
		leaf = lpc_radix_leaf_lock(&f->tree, index);
		if (leaf) {
			if (lpc_radix_leaf_entry(leaf, index) != p) {
				/* The leaf is live: p is not in the tree. */
				lpc_radix_leaf_unlock(leaf);
				lpc_rcu_read_unlock();
				return false;
			}
			lpc_yield_point(LPC_YP_B);
			removed = lpc_radix_leaf_delete(&f->tree, leaf, index);	/* B */
			if (removed) {
				lpc_page_mark_removed(p);
				lpc_page_debug_removed(p); /* under the leaf lock: lookup.c */
			}
			lpc_radix_leaf_unlock(leaf);
			lpc_rcu_read_unlock();
			if (removed) {
				lpc_page_release(p); /* the index's reference */
				return true;
			}
		} else {
			lpc_rcu_read_unlock();
		}
	}
	lpc_file_index_lock(f);
	lpc_yield_point(LPC_YP_B);
	removed = lpc_radix_delete_if(&f->tree, index, p);		/* B */
	if (removed) {
		lpc_page_mark_removed(p); /* its holders keep it: evict.c E1 */
		lpc_page_debug_removed(p);
	}
	lpc_file_index_unlock(f);
	if (removed)
		lpc_page_release(p); /* the index's reference */
	return removed;
}

void lpc_filemap_remove_all(struct lpc_file *f)
{
	void *pages[GANG];
	uint64_t idx[GANG];
	unsigned n;

	lpc_file_index_lock(f);
	while ((n = lpc_radix_gang(&f->tree, 0, pages, idx, GANG)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			/* The last close wrote them back first (writeback/):
			 * a page still dirty here had its write fail, and the
			 * close returns that error. */
			if (lpc_page_flags(pages[i]) & LPC_PG_DIRTY)
				atomic_fetch_sub_explicit(&f->files->ndirty, 1,
							  memory_order_relaxed);
			lpc_radix_delete(&f->tree, idx[i]);
			/* Before the file's free is queued (file.c): an
			 * evictor that finds a holder's page after that sees
			 * REMOVED and never follows p->file (evict.c E1). */
			lpc_page_mark_removed(pages[i]);
			lpc_page_debug_removed(pages[i]);
			lpc_page_release(pages[i]);
		}
	}
	lpc_radix_destroy(&f->tree);
	atomic_store_explicit(&f->nrdirty, 0, memory_order_relaxed);
	lpc_file_index_unlock(f);
}

/*
 * Which pages a removal of a range takes: none of `keep`'s flags, every one
 * of `need`'s.  lpc_invalidate's: clean pages no read, writeback or user
 * holds locked (INVAL_BUSY).  A drop behind a stream's reader (readahead.c
 * A5): those of them that were read for the stream and used once since
 * (ONCE), and have not been referenced again (REFERENCED), promoted
 * (ACTIVE, WORKINGSET), read ahead again since a reuse (RA, RA_MARK,
 * FRESH), nor refaulted (REFAULTED: ONCE is never set on one; kept here
 * too, so that the rule says it).  A drop leaves a shadow of each page and
 * moves the eviction clock as the evictor does (`shadow`: reclaim/evict.c
 * E6, page/workingset.h), so that a loop over part of a file larger than
 * the cache refaults and stays, and a refault's distance counts the
 * frames a scan's drops turned over as it counted their evictions.
 * Flags, checked before the freeze (A) and again after it, not a lock: a
 * hit that sets REFERENCED after the check loses the page as it would to
 * an eviction, and a miss reads it again.  The freeze itself is what keeps
 * a holder's page (ref above 1: A fails).
 */
struct remove_rule {
	uint32_t keep, need;
	bool shadow;
};

#define INVAL_BUSY (LPC_PG_LOCKED | LPC_PG_DIRTY | LPC_PG_WRITEBACK)

static const struct remove_rule inval_rule = { .keep = INVAL_BUSY };
static const struct remove_rule drop_rule = {
	.keep = INVAL_BUSY | LPC_PG_REFERENCED | LPC_PG_ACTIVE | LPC_PG_WORKINGSET | LPC_PG_RA |
		LPC_PG_RA_MARK | LPC_PG_FRESH | LPC_PG_REFAULTED,
	.need = LPC_PG_ONCE,
	.shadow = true,
};

/* p may not be taken by the rule now. */
static lpc_always_inline bool rule_keeps(const struct remove_rule *rule, struct lpc_page *p)
{
	uint32_t fl = lpc_page_flags(p);

	return (fl & rule->keep) || (fl & rule->need) != rule->need;
}

/*
 * Freezes and removes p if it is still at index, the rule takes it (clean
 * and unlocked, at least) and nobody but the index holds it.  Return: true
 * if removed (the caller frees it).
 * Context: f's index lock, inside the read section that frees it.
 * In lockless mode the slot check and the freeze (A) run under p's leaf lock
 * too: the index lock alone does not keep p in its slot (a fast removal,
 * invalidate_one_fast or a failed read's lpc_filemap_delete, needs only the
 * leaf's), and a frame a fast removal frees may be a miss's again at once
 * (page/alloc.c MR1), cached for another file with ref 1, where a freeze
 * after a check made without the leaf lock would take a live page.  Once p
 * is frozen in its slot only its freezer removes it (a freeze fails on 0,
 * and a truncate-like removal needs the index lock, which is ours), so B
 * may run after the leaf is unlocked.
 */
static bool invalidate_one(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			   const struct remove_rule *rule)
{
	struct lpc_radix_node *leaf = NULL;
	bool frozen = false;

	lpc_yield_point(LPC_YP_A);
	if (!f->locked_lookup) {
		leaf = lpc_radix_leaf_lock(&f->tree, index);
		if (!leaf)
			return false; /* no live leaf: p is not at index */
		if (lpc_radix_leaf_entry(leaf, index) != p)
			goto out;
	} else if (lpc_radix_lookup(&f->tree, index, NULL) != p) {
		return false;
	}
	if (rule_keeps(rule, p) || !lpc_page_freeze(p, 1))	/* A */
		goto out;
	/* Frozen: nobody can take a reference, so nobody can lock or dirty
	 * it now; re-check what was set before the freeze. */
	if (rule_keeps(rule, p))
		lpc_page_unfreeze(p, 1);
	else
		frozen = true;
out:
	if (leaf)
		lpc_radix_leaf_unlock(leaf);
	if (!frozen)
		return false;
	lpc_yield_point(LPC_YP_B);
	lpc_radix_delete(&f->tree, index);				/* B */
	lpc_page_debug_removed(p);
#if LPC_DEBUG
	lpc_debug_frozen--; /* out of its slot */
#endif
	return true;
}

enum inval_fast {
	INV_FREED, /* removed: the caller frees it */
	INV_SKIP,  /* not at index any more, or busy, or held: left */
	INV_SLOW,  /* removing it changes the tree's structure: index lock */
};

/*
 * invalidate_one (the same rule) under the lock of p's leaf alone (radix.c
 * FD1-FD3): A and B as there, B only where lpc_radix_leaf_delete can (p
 * carries no tag, and the leaf keeps another entry or is kept empty: radix.c
 * KL1).  Context: `leaf` locked, live, covering index; inside the read
 * section that frees p.
 */
static enum inval_fast invalidate_one_fast(struct lpc_radix_root *tree,
					   struct lpc_radix_node *leaf, struct lpc_page *p,
					   uint64_t index, const struct remove_rule *rule)
{
	lpc_yield_point(LPC_YP_A);
	if (lpc_radix_leaf_entry(leaf, index) != p || rule_keeps(rule, p))
		return INV_SKIP;
	/* Before the freeze: once frozen p must leave its slot in this hold. */
	if (!lpc_radix_leaf_delete_ok(tree, leaf, index))
		return INV_SLOW;
	if (!lpc_page_freeze(p, 1))					/* A */
		return INV_SKIP;
	if (rule_keeps(rule, p)) {
		lpc_page_unfreeze(p, 1);
		return INV_SKIP;
	}
	lpc_yield_point(LPC_YP_B);
	lpc_radix_leaf_take(tree, leaf, index);				/* B */
	lpc_page_debug_removed(p); /* under the leaf lock: lookup.c */
#if LPC_DEBUG
	lpc_debug_frozen--; /* out of its slot */
#endif
	return INV_FREED;
}

/* Appends p, removed from index, to the chain that C hands to pending; its
 * shadow first where the rule leaves one (clock: the section's eviction
 * clock, as a batch of the evictor's). */
static void inval_chain(struct lpc_file *f, const struct remove_rule *rule, struct lpc_page *p,
			uint64_t index, uint32_t clock, struct lpc_page **head,
			struct lpc_page **tail, uint32_t *k)
{
	if (rule->shadow)
		lpc_pool_ws_dropped(&f->pool->ws, lpc_pool_ws_key(f->ws_id, index), clock);
	p->next = NULL;
	if (*tail)
		(*tail)->next = p;
	else
		*head = p;
	*tail = p;
	(*k)++;
}

/*
 * Removes the pages of f at [first, last] that the rule takes and that
 * nobody holds, and frees them (C).  Return: how many; *pended: how many of
 * them went to pending (the rest stay with this thread); *found: the pages
 * of the range that the index held when it looked (one the evictor takes
 * meanwhile counts as found and not removed).  Context: no page
 * lock, index lock or read section held; the thread has its block.
 */
static uint64_t remove_range(struct lpc_file *f, uint64_t first, uint64_t last,
			     const struct remove_rule *rule, uint64_t *pended, uint64_t *found)
{
	void *pages[GANG];
	uint64_t idx[GANG];
	struct lpc_page *head = NULL, *tail = NULL;
	uint32_t k = 0, clock = lpc_pool_ws_clock(&f->pool->ws);
	uint64_t dropped = 0;
	unsigned n, seen = 0;

	*pended = 0;
	*found = 0;

	/* A gang at a time under the index lock; the freed frames go to
	 * pending in chains of up to INVAL_CHAIN pages, one take of the free
	 * list's lock each.  From the first freeze (A) of a chain to its
	 * pending list (C), one read section: a reclaimer's grace period
	 * waits for the frames in transit (page/alloc.c).  A section also
	 * ends after INVAL_CHAIN pages visited, freed or not: over a range
	 * whose pages are held, locked or dirty, a section bounded by pages
	 * freed alone spanned the whole call (every gang and index lock;
	 * in LOCKED mode the rwlock waits for reads at the device), and
	 * every grace period, so every allocation that needs one, waited
	 * for all of it. */
	lpc_rcu_read_lock();
	for (;;) {
		bool done;

		n = lpc_radix_gang(&f->tree, first, pages, idx, GANG);
		seen += n;
		if (n && idx[0] <= last) {
			unsigned slow[GANG], ns = 0, i;

			for (i = 0; i < n && idx[i] <= last; i++)
				;
			*found += i;

			/* Lockless mode: each page under its leaf's lock, held
			 * across the gang's run of pages in that leaf; what
			 * would change the tree's structure (a leaf's last
			 * entry past the kept leaves' bound, a tagged one) or
			 * finds no live leaf waits for the index lock below. */
			for (i = 0; i < n && idx[i] <= last; i++) {
				struct lpc_radix_node *leaf = NULL;
				uint64_t key = idx[i] >> LPC_RADIX_SHIFT;
				unsigned j = i;

				if (f->locked_lookup) {
					slow[ns++] = i;
					continue;
				}
				leaf = lpc_radix_leaf_lock(&f->tree, idx[i]);
				for (; j < n && idx[j] <= last && idx[j] >> LPC_RADIX_SHIFT == key; j++) {
					enum inval_fast r =
						leaf ? invalidate_one_fast(&f->tree, leaf, pages[j],
									   idx[j], rule)
						     : INV_SLOW;

					if (r == INV_SLOW)
						slow[ns++] = j;
					else if (r == INV_FREED)
						inval_chain(f, rule, pages[j], idx[j], clock, &head,
							    &tail, &k);
				}
				if (leaf)
					lpc_radix_leaf_unlock(leaf);
				i = j - 1;
			}
			if (ns) {
				lpc_file_index_lock(f);
				for (i = 0; i < ns; i++)
					if (invalidate_one(f, pages[slow[i]], idx[slow[i]], rule))
						inval_chain(f, rule, pages[slow[i]], idx[slow[i]],
							    clock, &head, &tail, &k);
				lpc_file_index_unlock(f);
			}
		}
		done = n < GANG || idx[n - 1] >= last;
		if (done || seen >= INVAL_CHAIN) { /* k <= seen */
			/* C: kept for this thread's next misses (seed
			 * 002's loop reads the range again; a stream's next
			 * window), or pending. */
			if (k && !lpc_page_keep_removed_chain(f->pool, head, tail, k)) {
				lpc_page_free_removed_chain(f->pool, head, tail, k);
				*pended += k;
			}
			lpc_rcu_read_unlock();
			if (rule->shadow) {
				lpc_pool_ws_advance(&f->pool->ws, k, 0);
				clock = lpc_pool_ws_clock(&f->pool->ws);
			}
			dropped += k;
			head = tail = NULL;
			k = 0;
			seen = 0;
			if (done)
				break;
			lpc_rcu_read_lock();
		}
		first = idx[n - 1] + 1;
	}
	return dropped;
}

LPC_EXPORT int lpc_invalidate(struct lpc_file *f, uint64_t off, uint64_t len)
{
	struct lpc_tcache *t;
	uint64_t first, last, dropped, pended, found;

	if (unlikely(!f))
		return -EINVAL;
	lpc_debug_file_check(f);
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	first = off >> f->page_shift;
	if (len == 0 || off + len < off)
		last = UINT64_MAX;
	else
		last = (off + len - 1) >> f->page_shift;
	dropped = remove_range(f, first, last, &inval_rule, &pended, &found);
	/* The frames wait on pending for a grace period: the reclaimer's
	 * drain takes a batch's worth at once (no call_rcu, whose thread
	 * sleeps 10 ms after each batch: reclaim/reclaimer.c). */
	if (dropped)
		lpc_page_pending_kick(f->pool);
	/* After every page was looked at, release (stream.c ST5): a stream
	 * that loads the new count (acquire) took its later references after
	 * this walk, which therefore skipped no page because of them; one
	 * that loaded an older count drops its references and completes the
	 * drop itself before it hands a page out, and does see this count
	 * then if this call returned before (the caller's own ordering: the
	 * contract is about invalidates that returned before the get). */
	atomic_fetch_add_explicit(&f->inval_seq, 1, memory_order_release);
	lpc_count_add(t, LPC_C_INVALIDATED, dropped);
	return dropped > INT32_MAX ? INT32_MAX : (int)dropped;
}

uint64_t lpc_filemap_drop_behind(struct lpc_file *f, uint64_t first, uint64_t end,
				 struct lpc_tcache *t, uint64_t *kept)
{
	uint64_t dropped, pended, found;

	*kept = 0;
	if (end <= first)
		return 0;
	dropped = remove_range(f, first, end - 1, &drop_rule, &pended, &found);
	*kept = found - dropped;
	/* Only frames that went to pending need the reclaimer: those kept
	 * are this thread's next window's (once a window, it woke the
	 * reclaimer for nothing). */
	if (pended)
		lpc_page_pending_kick(f->pool);
	if (dropped)
		lpc_count_add(t, LPC_C_RA_DROPPED, dropped);
	return dropped;
}
