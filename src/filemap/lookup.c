/* SPDX-License-Identifier: MIT */
/*
 * lookup.c - finding a page: the lockless lookup with speculative references
 * (the heart of lpc), and the LOCKED mode beside it.
 *
 * Lockless lookup (reader), modelled in tests/model/spec_get.pml:
 *   R1 rcu_read_lock()
 *   R2 walk the radix tree from the root to the leaf slot of `index`; an
 *      empty slot is a miss
 *   R3 increment page->ref unless it is 0 (lpc_page_try_get: CAS, acquire).
 *      0 means the page is frozen by a remover or free: retry from R2
 *   R4 reload the same slot.  If it no longer holds this page, the page was
 *      removed (and may be reused for another identity once we let go): drop
 *      the reference with the normal put and retry from R2 - from the root,
 *      because the leaf we hold may have been detached
 *   R5 rcu_read_unlock(); the page is ours: it cannot be freed or reused
 *      while we hold the reference.  Its identity was (f, index) at R4; to
 *      rely on it later (say, to write it back), lock it and re-check.
 *
 * Removers (remove.c, under the file's index lock, or in lockless mode the
 * lock of the one leaf they write: radix.c FD1-FD3; steps as here):
 *   A freeze: CAS ref from exactly the index's count (1) to 0.  Fails if any
 *     user, or a speculative getter past R3, holds a reference
 *   B delete the slot (release store of NULL)
 *   C free the page: to a private use only after an RCU grace period; to
 *     the remover's own misses at once (page/alloc.c MR1-MR5)
 *   Truncate-like removal (close, failed read) skips A: B, then drop the
 *   index's reference; holders keep a valid page that is no longer cached.
 *
 * The three interleavings that matter:
 *  - R2 loads the page, A freezes it, R3 fails (ref 0): retry; by then B has
 *    run or will run under the lock, and R2 sees the slot empty or a new page.
 *    Had R3 come first, A fails and the page stays (a user holds it).
 *  - R2 loads the page, truncate-like removal runs B and drops the index's
 *    reference, R3 succeeds (a user still held it, ref > 0): R4 sees the slot
 *    changed, drops the reference and retries.  Without R4 we would return a
 *    page that is no longer in the cache: a write through it would be lost.
 *    That is R4's job (spin: BUG_NO_RECHECK).
 *  - R2 loads the page, a remover freezes, deletes and frees it, and the
 *    allocator hands it out again as a private page (ref 1, PUBLISHED
 *    clear); R3 then succeeds on the recycled page, R4 fails and R4's put sees
 *    PUBLISHED clear and frees a page whose owner still holds it.  C's grace
 *    period forbids this: the page cannot be reused until every read section
 *    that could have loaded it (R1..R5, retries included) has ended.  That is
 *    the grace period's job (spin: BUG_NO_GRACE).  A frame the remover's
 *    own miss reuses at once (MR1-MR5) keeps ref 0 until it is PUBLISHED
 *    again, so R3 fails on it or R4's put is the published one; its
 *    identity may change between R2 and R4, and R4's slot check is what
 *    rejects it (or accepts it, reused for this very slot: a true hit).
 * Required by all three: R2-R4 and every retry stay in one read section; PUBLISHED
 * is set before the release store that publishes the page; nothing waits for
 * a grace period while it holds a frozen page in a slot (readers spin on it
 * inside their read sections: spin's BUG_GP_WHILE_FROZEN; the rule and where
 * it is relied on are in cache/cache.h).
 *
 * Ordering: slot and root pointers are published with release stores and
 * loaded with acquire (radix.c), so a page found at R2 has its descriptor
 * fields initialised.  R3's acquire orders R4 and every later read after the
 * reference.  UPTODATE is read with acquire (pairs with the release in
 * lpc_page_unlock_set) before the frame's data.
 *
 * A hit writes nothing shared but ref: counters go to the thread's block,
 * REFERENCED is set only when clear.
 */
#include <errno.h>

#include "filemap/filemap.h"

#if LPC_DEBUG
/*
 * Debug checks of a reference R3 just took on p, loaded from the slot of
 * (f, index) in this read section.  Rule RESURRECT: R3 never succeeds on a
 * frozen or free page (increment-unless-zero refuses ref 0).  Rule
 * GRACE-PERIOD, first half: whatever p is now, it is PUBLISHED (a frame
 * reused in the section is a miss's, MR3: page/alloc.c).  Its identity may
 * have changed (MR5): the second half is after R4.
 * Return: p's removal count, loaded after R3 and before R4.
 */
uint32_t lpc_filemap_debug_after_r3(struct lpc_file *f, uint64_t index, struct lpc_page *p)
{
	uint32_t st = atomic_load_explicit(&p->dbg_state, memory_order_relaxed);

	(void)f, (void)index;
	lpc_debug_check(st == LPC_DBG_LIVE, "RESURRECT", p,
			"R3 took a reference on a %s page", st == LPC_DBG_FREE ? "free" : "frozen");
	lpc_debug_check(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_PUBLISHED,
			"GRACE-PERIOD", p,
			"R3 took a reference on a page reused as a private one within the lookup's "
			"read section");
	return atomic_load_explicit(&p->dbg_removals, memory_order_acquire);
}

/*
 * Rule LOOKUP-NOT-IN-INDEX: a page a lookup returns was in the index at its
 * re-check (R4).  Removers count a removal (dbg_removals, release) after B,
 * under the index lock or, for a fast delete, the leaf's lock (remove.c);
 * `removals` was loaded (acquire) after R3, before R4.
 * If R4 saw p in the slot, any removal of p came after that load (had the
 * load seen its count, B would be visible to R4), so the count has moved
 * once the remover is done: take the index lock and the leaf's lock
 * (lpc_radix_leaf_sync; the leaf is valid in the caller's read section) to
 * wait for it.  If R4 was
 * skipped (a broken protocol), a page removed before R3 has its count in
 * `removals` and the slot no longer holds it: the check fires.
 */
void lpc_filemap_debug_check_in_index(struct lpc_file *f, struct lpc_page *p, uint64_t index,
				      void *_Atomic const *slot, uint32_t removals)
{
	uint32_t now;

	if (atomic_load_explicit(slot, memory_order_acquire) == p) {
		/* GRACE-PERIOD, second half: R4 accepted p, so p is
		 * (f, index) now (a frame reused since R2, MR5, only for this
		 * slot; the identity is set before the insert publishes it). */
		lpc_debug_check(atomic_load_explicit(&p->file, memory_order_relaxed) == f &&
					atomic_load_explicit(&p->index, memory_order_relaxed) ==
						index,
				"GRACE-PERIOD", p,
				"lookup of index %llu accepts a page with another identity",
				(unsigned long long)index);
		return;
	}
	/* A remover counts under the index lock (slow) or the leaf's lock
	 * (fast delete, radix.c FD1-FD3): wait for both. */
	lpc_file_index_lock(f);
	lpc_radix_leaf_sync(slot, index);
	now = atomic_load_explicit(&p->dbg_removals, memory_order_relaxed);
	lpc_file_index_unlock(f);
	lpc_debug_check(now != removals, "LOOKUP-NOT-IN-INDEX", p,
			"lookup returns a page removed from the index before its re-check (R4)");
}
#endif

/* What one try of R2-R4 ended with (filemap_try_rcu). */
enum lookup_try {
	TRY_HIT,	/* p is referenced and was in the slot at R4 */
	TRY_MISS,	/* the slot is empty */
	TRY_FROZEN,	/* R3 failed: retry from R2, nothing held */
	TRY_MOVED,	/* R4 failed: p is referenced; release it, retry from R2 */
};

/* One try of R2-R4: the steps, their yield points and debug checks, and
 * nothing else, so that the hit path of lpc_page_find can inline it and
 * leave every other outcome to an out-of-line call. */
static lpc_always_inline enum lookup_try filemap_try_rcu(struct lpc_file *f, uint64_t index,
							struct lpc_page **pp)
{
	void *_Atomic const *slot;
	struct lpc_page *p;
#if LPC_DEBUG
	uint32_t removals;
#endif

	lpc_yield_point(LPC_YP_R2);
	p = lpc_radix_lookup(&f->tree, index, &slot);			/* R2 */
	*pp = p;
	if (!p)
		return TRY_MISS;
	lpc_yield_point(LPC_YP_R3);
	if (unlikely(!lpc_page_try_get(p)))				/* R3 */
		return TRY_FROZEN;
#if LPC_DEBUG
	removals = lpc_filemap_debug_after_r3(f, index, p);
#endif
	lpc_yield_point(LPC_YP_R4);
	if (unlikely(atomic_load_explicit(slot, memory_order_acquire) != p)) /* R4 */
		return TRY_MOVED;
#if LPC_DEBUG
	lpc_filemap_debug_check_in_index(f, p, index, slot, removals);
#endif
	return TRY_HIT;
}

static lpc_always_inline struct lpc_page *filemap_lookup_rcu(struct lpc_file *f, uint64_t index,
							   struct lpc_tcache *t)
{
	struct lpc_page *p;
	enum lookup_try r;

	while ((r = filemap_try_rcu(f, index, &p)) != TRY_HIT) {
		if (r == TRY_MISS)
			return NULL;
		lpc_count(t, LPC_C_RETRIES);
		if (r == TRY_MOVED)
			lpc_page_release(p);
	}
	return p;
}

static struct lpc_page *filemap_lookup_locked(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	/* R2 here is the walk under the rwlock (no R3/R4: nothing to re-check). */
	lpc_yield_point(LPC_YP_R2);
	pthread_rwlock_rdlock(&f->tree_rwlock);
	p = lpc_radix_lookup(&f->tree, index, NULL);
	/* Removers hold the lock for writing, so a page in the tree has the
	 * index's reference: a plain increment cannot resurrect a frozen page. */
	if (p)
		atomic_fetch_add_explicit(&p->ref, 1, memory_order_acquire);
	pthread_rwlock_unlock(&f->tree_rwlock);
	return p;
}

static lpc_always_inline struct lpc_page *filemap_lookup(struct lpc_file *f, uint64_t index,
						       struct lpc_tcache *t)
{
	struct lpc_page *p;

	if (unlikely(f->locked_lookup))
		return filemap_lookup_locked(f, index);
	lpc_rcu_read_lock();						/* R1 */
	p = filemap_lookup_rcu(f, index, t);
	lpc_rcu_read_unlock();						/* R5 */
	return p;
}

struct lpc_page *lpc_filemap_lookup(struct lpc_file *f, uint64_t index, struct lpc_tcache *t)
{
	return filemap_lookup(f, index, t);
}

/* What lpc_page_find returns for the page a lookup found (or NULL). */
static lpc_always_inline int find_finish(struct lpc_page *p, struct lpc_tcache *t,
					 struct lpc_page **out)
{
	uint32_t flags;

	if (unlikely(!p)) {
		lpc_count(t, LPC_C_MISSES);
		return -ENOENT;
	}
	flags = lpc_page_flags(p);
	if (unlikely(!(flags & LPC_PG_UPTODATE))) {
		/* Its read is in flight (or just failed and it is being removed). */
		lpc_page_release(p);
		lpc_count(t, LPC_C_MISSES);
		return -EAGAIN;
	}
	lpc_page_mark_referenced(p, flags);
	lpc_count(t, LPC_C_HITS);
	*out = p;
	return 0;
}

/*
 * lpc_page_find reads f only inside its read section, so that a last
 * lpc_file_close that begins while it runs frees f only after it is done
 * (filemap/file.c).  The read section therefore opens before the first load
 * from f, on the fast path too (R1 moved up).  The slow cases (a thread's
 * first call on this cache, LOCKED mode, and find_retry's) stay in that
 * read section too: find_slow and find_retry leave it.  On a thread not registered yet,
 * R1 protects nothing (liburcu ignores an unregistered reader); find_slow
 * registers it and opens a section that counts before it reads f again.
 */

/* lpc_page_find for a thread's first call on a cache, and for LOCKED mode:
 * out of line, so that the lockless path saves fewer registers.  Context:
 * called inside the caller's read section (R1), which it leaves. */
static __attribute__((noinline)) int find_slow(struct lpc_file *f, uint64_t index,
					       struct lpc_page **out)
{
	struct lpc_tcache *t;
	struct lpc_page *p;

	if (unlikely(!lpc_self.registered)) {
		/* The caller's R1 protected nothing (liburcu ignores a reader
		 * it does not know): register, then open a read section that
		 * counts.  A first call of a new thread is therefore not
		 * covered by guarantee A.4 until it is registered. */
		lpc_rcu_read_unlock();
		if (unlikely(lpc_thread_register() < 0))
			return -ENOMEM;
		lpc_rcu_read_lock();					/* R1 */
	}
	/* Finding or making the block takes lpc_threads_lock and may
	 * allocate: both legal in a read section (nobody waits for a grace
	 * period holding that lock).  So is LOCKED mode's rwlock: no writer
	 * of an index waits for a grace period while it holds the lock. */
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		p = NULL;
	else if (f->locked_lookup)
		p = filemap_lookup_locked(f, index);
	else
		p = filemap_lookup_rcu(f, index, t);
	lpc_rcu_read_unlock();						/* R5 */
	if (unlikely(!t))
		return -ENOMEM;
	return find_finish(p, t, out);
}

/*
 * lpc_page_find after its first try (R2-R4) did not end in a hit on an
 * up-to-date page: `r` says how it ended and p is what it found (held for
 * TRY_MOVED, and for TRY_HIT on a page that is not up to date).  Out of line
 * and reached by a tail call, so that the hit path holds no value across a
 * call and saves no register.  Context: inside the caller's read section
 * (R1), which it leaves.
 */
static __attribute__((noinline)) int find_retry(struct lpc_file *f, uint64_t index,
						struct lpc_page **out, struct lpc_page *p,
						enum lookup_try r)
{
	struct lpc_tcache *t = lpc_self.cur;

	if (r == TRY_MISS) {
		p = NULL;
	} else if (r == TRY_HIT) {
		/* Found and held, not up to date: find_finish releases it. */
	} else {
		lpc_count(t, LPC_C_RETRIES);
		if (r == TRY_MOVED)
			lpc_page_release(p);
		p = filemap_lookup_rcu(f, index, t);
	}
	lpc_rcu_read_unlock();						/* R5 */
	return find_finish(p, t, out);
}

/*
 * The hit path: one try of R2-R4 inlined, then the page's flags, its
 * counter and *out, all before R5, so that after the read section ends
 * nothing is left to do but return 0 (liburcu's read_unlock may call out to
 * wake a grace period's waiter: a value live across that call would cost
 * the hit a saved register).  Everything else is find_slow's (a thread's
 * first call on the cache, LOCKED mode) or find_retry's.
 */
LPC_EXPORT int lpc_page_find(struct lpc_file *f, uint64_t index, struct lpc_page **out)
{
	struct lpc_page *p;
	enum lookup_try r;
	uint32_t flags;

	if (unlikely(!f || !out))
		return -EINVAL;
	lpc_rcu_read_lock();						/* R1 */
	/* The lockless path, for a thread that already has its block for f's
	 * cache: first calls and LOCKED mode are find_slow's. */
	lpc_debug_file_check(f);
	if (unlikely(lpc_self.cur_id != f->hit_id))
		return find_slow(f, index, out); /* leaves the read section */
	r = filemap_try_rcu(f, index, &p);				/* R2-R4 */
	if (unlikely(r != TRY_HIT))
		return find_retry(f, index, out, p, r); /* leaves it too */
	flags = lpc_page_flags(p);
	if (unlikely(!(flags & LPC_PG_UPTODATE)))
		return find_retry(f, index, out, p, r);
	lpc_page_mark_referenced(p, flags);
	lpc_count(lpc_self.cur, LPC_C_HITS);
	*out = p;
	lpc_rcu_read_unlock();						/* R5 */
	return 0;
}
