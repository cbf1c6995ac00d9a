/* SPDX-License-Identifier: MIT */
/*
 * page.h - page descriptors, reference counts, flags and the page lock.
 *
 * Every frame of a cache has one descriptor, in one array created with the
 * cache and freed only when the cache is destroyed: descriptor memory is
 * type-stable, so a stale pointer to a descriptor is always safe to read and
 * to try to take a reference on.  A descriptor's identity (file, index)
 * changes when its frame is recycled.
 *
 * Fields and who writes them:
 *
 *   ref     atomic.  0: free, pending free, or frozen.  The index holds one
 *           reference while the page is in it; each user holds one, and each
 *           pin (lpc_pin) LPC_PIN_BIAS, as the kernel's FOLL_PIN: ref /
 *           LPC_PIN_BIAS is the page's pin count, and a pinned page is never
 *           at the index's lone 1, so no remover can freeze it.  Changed
 *           by speculative getters (lpc_page_try_get), putters (dec), the
 *           remover (freeze: CAS from exactly the index's count to 0) and the
 *           allocator (plain store 1 on a page nobody can reach).
 *   flags   atomic bits, the futex word of the page lock (legend below).
 *   seq     sequence count over the page's data and identity (seqlock):
 *           odd while a writer changes them, even when stable; it only
 *           grows.  Writers: lpc_page_seq_write_begin/end (below), by the
 *           page lock's holder or the owner of a page nobody else can reach.
 *           Who bumps it: the allocator when it recycles a frame (alloc.c,
 *           page_init_private: the identity is cleared), the miss path from
 *           M2 to M5 (miss.c: identity set, data read), every later writer
 *           of data (the write path D2, truncate's zeroing) or identity, and
 *           the public lpc_page_lock .. lpc_page_unlock of a published page
 *           (lock.c X1-X2: a user may change the frame in place).  Removal from an
 *           index changes neither (the optimistic reader's slot re-check
 *           sees it).  Read by optimistic readers (filemap/optimistic.c).
 *           Rules checked by LPC_DEBUG: SEQ-IDENTITY (the identity changes
 *           only while seq is odd), SEQ-OPEN (no page is unlocked or freed
 *           with seq odd: a write section left open), SEQ-UNBALANCED
 *           (sections do not nest: begin sees seq even, end sees it odd).
 *   id      the descriptor's number in the array; constant.
 *   pool    the descriptor pool it belongs to (page/pool.h); constant.
 *   file    identity: written by the owner while the page is private, read
 *   index   by holders of a reference.  Relaxed atomics: a speculative getter
 *           never trusts them before its re-check of the slot.
 *   next    chains a free list or a batch waiting for a grace period; only
 *           touched while ref is 0 (or on a private page), by the list's owner.
 *
 * Flags legend (bit: meaning, writer):
 *   LOCKED     page lock held (lock.c)
 *   WAITERS    someone sleeps in futex on this word (lock.c)
 *   UPTODATE   frame holds the file's data; set with release after the data
 *              is written, read with acquire before the data is read
 *   ERROR      the last read failed
 *   DIRTY      the frame holds data not yet written to the file; set under
 *              the page lock after the change (D1-D3, writeback/write.c),
 *              cleared under it by writeback (K3), with the DIRTY tag
 *   WRITEBACK  a write of the frame is in flight (K3..K5); waiters sleep
 *              in lpc_page_wait_writeback (WAITERS, as the lock's)
 *   REFERENCED CLOCK's second chance: set on a hit only if clear (test before
 *              set), so a hot page's line is not written on every hit
 *   PUBLISHED  the page has been in an index since it was last allocated: it
 *              may be reachable by speculative getters, so freeing it waits for
 *              an RCU grace period.  Clear: the page is private, its owner is
 *              its only user, and freeing it takes no atomic operation.
 *   ACTIVE     CLOCK2's active list (reclaim/evict.c): set and cleared by
 *              the evictor under the file's index lock and the page's leaf
 *              lock (AC1-AC3); cleared by the deferred free (alloc.c),
 *              which keeps pool->nactive exact (rule ACTIVE-COUNT)
 *   WORKINGSET promoted since it came in: set with ACTIVE by the evictor's
 *              promotion (AC2), kept by a demotion, cleared with every flag
 *              when the frame is handed out again; read at the eviction
 *              (E6), whose shadow says whether the page had been active
 *              (page/workingset.h)
 *   RA, RA_MARK  readahead's (filemap/readahead.c): a page read ahead and
 *              not used yet, and the async marker (the enum below)
 *   FRESH      read by a demand run for a later page of its caller's range,
 *              not used yet (run.c U5): its first use clears it rather than
 *              setting REFERENCED (lpc_page_mark_referenced)
 *   ONCE       read for a stream (ahead, or by its miss) and used once since:
 *              what a stream's drop-behind may take (filemap/readahead.c A5)
 *   REFAULTED  read again soon after its eviction, or by a stream soon after
 *              a drop (a refault): never ONCE, and a bulk read's hit marks it
 *   REMOVED    taken out of its index by a truncate-like removal (the last
 *              close, a failed read) while someone still holds it: its file
 *              may be freed under it, so the evictor never follows p->file
 *              (reclaim/evict.c E1-E2); set under the index lock or the leaf's (release)
 *              before the file's free is queued, cleared at reallocation
 */
#ifndef LPC_PAGE_PAGE_H
#define LPC_PAGE_PAGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rcu.h"

#include "core/compiler.h"
#include "core/debug.h"

struct lpc_pool;
struct lpc_file; /* only named here: identity is compared, never followed */

enum lpc_page_flag {
	LPC_PG_LOCKED = 1u << 0,
	LPC_PG_WAITERS = 1u << 1,
	LPC_PG_UPTODATE = 1u << 2,
	LPC_PG_ERROR = 1u << 3,
	LPC_PG_DIRTY = 1u << 4,
	LPC_PG_WRITEBACK = 1u << 5,
	LPC_PG_REFERENCED = 1u << 6,
	LPC_PG_PUBLISHED = 1u << 7,
	LPC_PG_ACTIVE = 1u << 8,
	LPC_PG_REMOVED = 1u << 9,
	/* Readahead (filemap/readahead.c): RA_MARK is the async marker (a
	 * lookup that clears it, a hit or a wait on the page in flight,
	 * starts the stream's next window), set as the page is inserted
	 * (run.c U3); RA is a page read ahead and not used yet (cleared by
	 * its first hit, counted; eviction of a page still RA counts it
	 * wasted), set at the read's unlock (run.c U5).  Both cleared with
	 * atomic and. */
	LPC_PG_RA_MARK = 1u << 10,
	LPC_PG_RA = 1u << 11,
	/* Promoted to ACTIVE once since it came in (set with ACTIVE by the
	 * evictor's promotion, AC2; kept by a demotion): its eviction leaves a
	 * shadow that says so, and a refault of it says the active side was
	 * too small (page/workingset.h). */
	LPC_PG_WORKINGSET = 1u << 12,
	/* Read by a demand run for the pages after its first (run.c U5), not
	 * used yet: the caller's own lookup of each, its first use, clears
	 * it instead of setting REFERENCED (lpc_page_mark_referenced). */
	LPC_PG_FRESH = 1u << 13,
	/* Read for a stream and used once since: set by lpc_page_ra_used as
	 * it clears RA, and at the read's unlock on the pages a stream's miss
	 * asked for (run.c U5).  A page a stream may drop behind its reader
	 * (filemap/readahead.c A5) unless it was referenced again, promoted
	 * or dirtied.  Cleared when the frame is handed out again. */
	LPC_PG_ONCE = 1u << 14,
	/* Read again soon after its eviction (a refault: page/workingset.h),
	 * or by a stream soon after a stream dropped it (set at the read's
	 * unlock, miss.c M5, run.c U5): used before, not once, so a stream
	 * never drops it, and a bulk read's hit marks it as any hit does (a
	 * loop over part of a file larger than the cache becomes a working
	 * set, as it would without drop-behind).  Cleared when the frame is
	 * handed out again. */
	LPC_PG_REFAULTED = 1u << 15,
};

struct lpc_page {
	_Atomic uint32_t ref;
	_Atomic uint32_t flags;
	_Atomic uint32_t seq;
	uint32_t id;
	struct lpc_pool *pool;
	struct lpc_file *_Atomic file;
	_Atomic uint64_t index;
	struct lpc_page *next;
	union {
		uint64_t spare[2]; /* LRU state comes with a later step; pins are a bias on ref */
		/* A free frame at the head of a segment of the pool's shared
		 * free list (page/alloc.c "Segments"): the next segment's
		 * head, and how many frames this one chains by next.  Only
		 * the allocator reads or writes them, under free_lock or on
		 * a chain that is its own. */
		struct {
			struct lpc_page *seg_next;
			uint32_t seg_n;
			uint32_t seg_pad;
		} fl;
	};
#if LPC_DEBUG
	/* Debug builds only (core/debug.h); a second cache line. */
	_Atomic uint32_t dbg_state;    /* enum lpc_debug_state */
	_Atomic uint32_t dbg_removals; /* removals from an index (lookup.c) */
	_Atomic uint64_t dbg_owner;    /* page lock holder's thread id, 0: none */
	/* Reads into the frame in flight (miss.c M4, run.c U4; rule
	 * FRAME-FREED-IN-FLIGHT: no frame is freed while one is). */
	_Atomic uint32_t dbg_reads;
	uint32_t dbg_pad32;
	/* On a thread's deferred list: its chain's stamp (core/rcu.h
	 * lpc_rcu_gp_stamp, page/alloc.c OD2; rule DEFERRED-GRACE at OD5). */
	uint64_t dbg_gp;
	uint64_t dbg_pad[4];
#endif
};
#if LPC_DEBUG
_Static_assert(sizeof(struct lpc_page) == 128, "debug: two cache lines");
#else
_Static_assert(sizeof(struct lpc_page) == 64, "one descriptor, one cache line");
#endif

static inline uint32_t lpc_page_flags(const struct lpc_page *p)
{
	return atomic_load_explicit(&((struct lpc_page *)p)->flags, memory_order_acquire);
}

/*
 * The page's sequence count (seq), a seqlock over the page's data and
 * identity: odd while a writer (who holds the page lock, or owns a page
 * nobody else can reach) changes them, even when stable.  Readers that copy
 * without a reference (optimistic reads) load seq (acquire), copy, and
 * accept the copy only if seq is even and unchanged after the copy (the
 * re-load is ordered after the copy by an acquire fence).  Sections do not
 * nest: rule SEQ-UNBALANCED (LPC_DEBUG) fires on a begin with seq odd or an
 * end with seq even.  The public lpc_page_lock opens one on a published
 * page and lpc_page_unlock closes it (lock.c X1-X2); lpc's own code locks
 * with the _noseq variants and opens sections where it changes the page.
 */
static inline void lpc_page_seq_write_begin(struct lpc_page *p)
{
	uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed);

	lpc_debug_check(!(s & 1), "SEQ-UNBALANCED", p,
			"seq write section opened inside another (seq %u odd): it would close it",
			s);
	atomic_store_explicit(&p->seq, s + 1, memory_order_relaxed);
	/* The odd count is visible before any change of data or identity. */
	atomic_thread_fence(memory_order_release);
}

static inline void lpc_page_seq_write_end(struct lpc_page *p)
{
	uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed);

	lpc_debug_check(s & 1, "SEQ-UNBALANCED", p,
			"seq write section closed that was not open (seq %u even)", s);
	/* Release: the changes are visible before the even count. */
	atomic_store_explicit(&p->seq, s + 1, memory_order_release);
}

/*
 * Speculative reference: increments ref unless it is 0.
 * Return: true with a reference held; false if the page is free or frozen.
 * Ordering: acquire on success, so the caller's re-check of the slot and its
 * reads of flags and data come after the reference is visible (pairs with the
 * remover's freeze CAS and with the release store that published the page).
 * Context: any; the caller must be able to name the descriptor (type-stable).
 */
static inline bool lpc_page_try_get(struct lpc_page *p)
{
	/* Guess the count of a cached page nobody holds (the index's 1) rather
	 * than load it first: the CAS then fetches the line for writing at once
	 * instead of shared and then again for ownership, which costs a second
	 * transfer when another CPU has it.  A wrong guess returns the count. */
	uint32_t r = 1;

	while (!atomic_compare_exchange_weak_explicit(&p->ref, &r, r + 1,
						      memory_order_acquire,
						      memory_order_relaxed)) {
		if (unlikely(r == 0))
			return false;
	}
	return true;
}

/*
 * Pins (filemap/pin.c).  A pin is LPC_PIN_BIAS references in one atomic add, so
 * the pin count lives in ref (ref / LPC_PIN_BIAS) and costs no second atomic;
 * spare[] is left alone.  A page with fewer than LPC_PIN_BIAS references is
 * certainly not pinned (the LPC_DEBUG check PIN-NOT-PINNED, and the future
 * write pin's "maybe pinned" test, rely on it); one with more is pinned
 * unless LPC_PIN_BIAS plain references are held at once, which nobody does.
 * At most 2^32 / LPC_PIN_BIAS - 1 pins of one page at a time.
 */
#define LPC_PIN_BIAS 1024u

/*
 * Speculative pin: adds LPC_PIN_BIAS to ref unless it is 0, as
 * lpc_page_try_get adds 1 (same guess, same acquire on success).
 * Return: true with a pin held; false if the page is free or frozen.
 */
static inline bool lpc_page_try_pin(struct lpc_page *p)
{
	uint32_t r = 1;

	while (!atomic_compare_exchange_weak_explicit(&p->ref, &r, r + LPC_PIN_BIAS,
						      memory_order_acquire,
						      memory_order_relaxed)) {
		if (unlikely(r == 0))
			return false;
	}
	return true;
}

/* True if p has at least one pin (or LPC_PIN_BIAS plain references). */
static inline bool lpc_page_maybe_pinned(const struct lpc_page *p)
{
	return atomic_load_explicit(&((struct lpc_page *)p)->ref, memory_order_relaxed) >=
	       LPC_PIN_BIAS;
}

/*
 * Freeze: takes the page out of reach of speculative getters if nobody but
 * the index (`expected` references) holds it.  Context: the file's index lock,
 * or (a fast invalidate, filemap/remove.c) the lock of p's radix leaf.
 * Return: true if frozen (ref is now 0).
 */
static inline bool lpc_page_freeze(struct lpc_page *p, uint32_t expected)
{
	bool frozen = atomic_compare_exchange_strong_explicit(&p->ref, &expected, 0,
							      memory_order_acq_rel,
							      memory_order_relaxed);
#if LPC_DEBUG
	if (frozen) {
		lpc_debug_frozen++;
		atomic_store_explicit(&p->dbg_state, LPC_DBG_FROZEN, memory_order_relaxed);
	}
#endif
	return frozen;
}

/* Undoes a freeze that was not followed by removal. */
static inline void lpc_page_unfreeze(struct lpc_page *p, uint32_t count)
{
#if LPC_DEBUG
	lpc_debug_frozen--;
	atomic_store_explicit(&p->dbg_state, LPC_DBG_LIVE, memory_order_relaxed);
#endif
	atomic_store_explicit(&p->ref, count, memory_order_release);
}

/*
 * Sets a page's identity.  Rule IDENTITY-CHANGE: only while the page is
 * locked and unpublished (PUBLISHED clear: M2), or free (the allocator
 * clearing it before it hands the frame out).  Rule SEQ-IDENTITY: inside a
 * seq write section (lpc_page_seq_write_begin .. end), so that an optimistic
 * reader never accepts a copy that straddles the change.  Context: the
 * page's only user.
 */
static inline void lpc_page_set_identity(struct lpc_page *p, struct lpc_file *f, uint64_t index)
{
#if LPC_DEBUG
	uint32_t fl = atomic_load_explicit(&p->flags, memory_order_relaxed);

	lpc_debug_check((!(fl & LPC_PG_PUBLISHED) && (fl & LPC_PG_LOCKED)) ||
				atomic_load_explicit(&p->dbg_state, memory_order_relaxed) ==
					LPC_DBG_FREE,
			"IDENTITY-CHANGE", p, "identity set on a published or unlocked page");
	lpc_debug_check(atomic_load_explicit(&p->seq, memory_order_relaxed) & 1, "SEQ-IDENTITY", p,
			"identity set outside a seq write section (seq even: an optimistic reader would accept it)");
#endif
	atomic_store_explicit(&p->file, f, memory_order_relaxed);
	atomic_store_explicit(&p->index, index, memory_order_relaxed);
}

/*
 * Rule FRAME-FREED-IN-FLIGHT: no frame is freed, nor handed out again, while
 * a read into it is in flight, and no read starts into a frame that is not
 * its reader's (the reader holds a reference and the page lock from its
 * insert, M3 or U3, until its reads have returned, M5 or U5; the last close
 * and lpc_cache_destroy wait for the readahead thread's windows).  The
 * reads into a page's frame are counted between lpc_page_debug_read_begin
 * (which checks the page is live, referenced and locked) and _end (miss.c,
 * run.c); the allocator's frees and hand-outs check the count (alloc.c).
 */
#if LPC_DEBUG
static inline void lpc_page_debug_read_begin(struct lpc_page *p)
{
	lpc_debug_check(atomic_load_explicit(&p->dbg_state, memory_order_relaxed) == LPC_DBG_LIVE &&
				atomic_load_explicit(&p->ref, memory_order_relaxed) >= 1 &&
				(atomic_load_explicit(&p->flags, memory_order_relaxed) &
				 LPC_PG_LOCKED),
			"FRAME-FREED-IN-FLIGHT", p,
			"a read starts into a frame that is free, or not its locked reader's");
	atomic_fetch_add_explicit(&p->dbg_reads, 1, memory_order_relaxed);
}

static inline void lpc_page_debug_read_end(struct lpc_page *p)
{
	atomic_fetch_sub_explicit(&p->dbg_reads, 1, memory_order_relaxed);
}
#define lpc_page_debug_not_reading(p, what)                                                 \
	lpc_debug_check(atomic_load_explicit(&(p)->dbg_reads, memory_order_relaxed) == 0,     \
			"FRAME-FREED-IN-FLIGHT", p, "%s of a frame with a read into it in flight", \
			what)
#else
#define lpc_page_debug_read_begin(p) ((void)0)
#define lpc_page_debug_read_end(p) ((void)0)
#define lpc_page_debug_not_reading(p, what) ((void)0)
#endif

/* Rule SEQ-OPEN: a page is unlocked or freed with its seq write section
 * closed (seq even).  `what` says where. */
#define lpc_page_debug_seq_closed(p, what)                                              \
	lpc_debug_check(!(atomic_load_explicit(&(p)->seq, memory_order_relaxed) & 1), "SEQ-OPEN", \
			p, "%s with seq odd: a write section was left open", what)

/* Debug: counts a removal of p from an index, after its slot was cleared (B).
 * Context: the file's index lock, or the lock of the leaf whose slot was
 * cleared (a fast delete, index/radix.c FD2).  See the R4 check in lookup.c. */
static inline void lpc_page_debug_removed(struct lpc_page *p)
{
#if LPC_DEBUG
	atomic_fetch_add_explicit(&p->dbg_removals, 1, memory_order_release);
#else
	(void)p;
#endif
}

/* Marks a page taken out of its index by a truncate-like removal (no
 * freeze): see REMOVED in the legend.  Context: the file's index lock, or
 * the lock of the leaf it left (a failed read's fast delete, remove.c). */
static inline void lpc_page_mark_removed(struct lpc_page *p)
{
	atomic_fetch_or_explicit(&p->flags, LPC_PG_REMOVED, memory_order_release);
}

/* A read-ahead page's first use (page.c): clears RA, counts ra_used. */
void lpc_page_ra_used(struct lpc_page *p);

/* A FRESH page's first use: clears FRESH (page.c). */
void lpc_page_fresh_used(struct lpc_page *p);

/* Sets REFERENCED only when clear: a hit writes no shared line but ref.  A
 * page read ahead (RA), or read by a demand run for a later page of the
 * caller's range (FRESH), is never REFERENCED before its first use, so that
 * use comes here: it is the read a miss would have made, which sets no
 * REFERENCED either, so it only clears RA (lpc_page_ra_used) or FRESH.
 * Otherwise a scan that reads ahead, or reads several pages per call, would
 * set REFERENCED on every page it reads, and CLOCK2 would promote the scan
 * over the hot set. */
static inline void lpc_page_mark_referenced(struct lpc_page *p, uint32_t flags)
{
	if (!(flags & LPC_PG_REFERENCED)) {
		if (unlikely(flags & LPC_PG_RA))
			lpc_page_ra_used(p);
		else if (unlikely(flags & LPC_PG_FRESH))
			lpc_page_fresh_used(p);
		else
			atomic_fetch_or_explicit(&p->flags, LPC_PG_REFERENCED,
						 memory_order_relaxed);
	}
}

/* A bulk read's use (filemap/read.c, "Bulk reads"): the first use of a
 * page read ahead or by a demand run, as lpc_page_mark_referenced, but
 * never a second: REFERENCED is left as it is; except on a page that
 * refaulted (REFAULTED), which any use marks. */
static inline void lpc_page_mark_bulk(struct lpc_page *p, uint32_t flags)
{
	if (unlikely(flags & LPC_PG_REFAULTED)) {
		lpc_page_mark_referenced(p, flags);
		return;
	}
	if (unlikely(flags & LPC_PG_RA))
		lpc_page_ra_used(p);
	else if (unlikely(flags & LPC_PG_FRESH))
		lpc_page_fresh_used(p);
}

/* Puts a published page whose ref is 0 on the pending list (alloc.c).
 * Context: inside an RCU read section that began before ref reached 0. */
void lpc_page_free_deferred(struct lpc_page *p);

/* The same for a page eviction froze (reclaim/evict.c E7): on pending, never
 * handed to call_rcu here; the evictor's caller takes pending with its own
 * grace period (lpc_page_pending_drain, or the allocator's reclaim()).
 * Context: as lpc_page_free_deferred. */
void lpc_page_free_evicted(struct lpc_page *p);

/* lpc_page_release for what may be the last reference (alloc.c). */
void lpc_page_release_last(struct lpc_page *p);

/*
 * Drops a reference on a page that was published (the half of lpc_page_put
 * that is not the private fast path): the last one frees the page after an
 * RCU grace period.  acq_rel: this holder's reads and writes of the page
 * happen before whoever frees it (release), and the freer comes after every
 * other holder's release (acquire; a fence would do, but TSan cannot see
 * fences).
 *
 * A CAS rather than a fetch_sub, so that the decrement to 0 happens only in
 * lpc_page_release_last, inside an RCU read section that lasts until the
 * frame is on the pending list or its batch is queued: a reclaimer's grace
 * period then waits for a frame in transit instead of missing it (alloc.c).
 *
 * Why not one fetch_sub now that allocation waits before -ENOMEM (H.3):
 * with a fetch_sub the count would reach 0 before the read section opens,
 * and a reclaimer whose grace period ends in that window reads pending
 * without the frame.  The wait (alloc_wait_ms) would hide it when eviction
 * is on, but a cache without eviction (and LPC_ALLOC_NOWAIT) fails at once,
 * so E.1 ("-ENOMEM only when no frame is free anywhere") would hold only
 * by timing; tests/regress/regress_alloc_transit parks a put at C0 in that
 * window's place.  The CAS costs the hit about 3 instructions (callgrind,
 * tools/hitcost), not a second transfer of the line: see the guess below.
 *
 * The first CAS guesses the count of a page held once besides the index's
 * (2) instead of loading it, as lpc_page_try_get guesses 1: the CAS then
 * asks for the line exclusive at once.  A wrong guess returns the count and
 * the loop goes on from it; 1 or less is the last reference.  Context: any,
 * RCU read section included.
 */
static inline void lpc_page_release(struct lpc_page *p)
{
	uint32_t r = 2;

	lpc_debug_check(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_PUBLISHED,
			"RELEASE-PRIVATE", p,
			"published-page release of a private page (reused under a reader?)");
	while (unlikely(!atomic_compare_exchange_weak_explicit(&p->ref, &r, r - 1,
							       memory_order_acq_rel,
							       memory_order_relaxed))) {
		if (unlikely(r <= 1)) {
			lpc_page_release_last(p);
			return;
		}
	}
}

/*
 * Drops one pin (LPC_PIN_BIAS references) as lpc_page_release drops one
 * reference: one CAS while others hold the page; the pin that is the last
 * holder becomes one plain reference and goes through lpc_page_release_last,
 * so the decrement to 0 happens inside its read section.  Rule
 * PIN-NOT-PINNED (LPC_DEBUG): the page has a pin to drop.  Context: any.
 */
static inline void lpc_page_unpin(struct lpc_page *p)
{
	uint32_t r = atomic_load_explicit(&p->ref, memory_order_relaxed);

	for (;;) {
		lpc_debug_check(r >= LPC_PIN_BIAS, "PIN-NOT-PINNED", p,
				"unpin of a page with no pin (ref %u)", r);
		if (likely(r > LPC_PIN_BIAS)) {
			if (likely(atomic_compare_exchange_weak_explicit(
				    &p->ref, &r, r - LPC_PIN_BIAS, memory_order_acq_rel,
				    memory_order_relaxed)))
				return;
			continue;
		}
		/* Ours is the only reference left: make it a plain one. */
		if (atomic_compare_exchange_weak_explicit(&p->ref, &r, 1, memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	lpc_page_release_last(p);
}

/*
 * Page lock (lock.c); see the protocol there and tests/model/page_lock.pml.
 * lpc's own code takes it with lpc_page_lock_noseq / lpc_page_unlock_noseq
 * (or trylock, unlock_set): no seq write section, the caller opens one where
 * it changes data or identity.  The public lpc_page_lock / lpc_page_unlock
 * also open and close a section on a published page (X1-X2), for users who
 * change a cached frame in place.
 */
void lpc_page_lock_noseq(struct lpc_page *p);
void lpc_page_unlock_noseq(struct lpc_page *p);
bool lpc_page_trylock(struct lpc_page *p);
/*
 * Write pins (writeback/wpin.c) hold the page lock from lpc_pin to lpc_unpin,
 * which may run on another thread: the lock then belongs to the pin, not to
 * a thread.  lpc_page_lock_to_pin hands a lock this thread holds to the pin
 * (LPC_DEBUG: dbg_owner becomes LPC_DBG_OWNER_PIN with the pinning thread's
 * id in its low bits, and the thread's count of page locks drops);
 * lpc_page_lock_from_pin takes it back for the thread that unpins, which
 * then unlocks it (rule WPIN-OWNER: it was the pin's).
 * lpc_page_wpinned: the page's lock is a write pin's; lpc_page_wpinned_by_me:
 * a write pin this thread took holds it (LPC_DEBUG only).  Rule
 * WPIN-SELF-WAIT (lock.c, filemap/file.c): the thread that took a write pin
 * is its holder until the unpin, and never sleeps for that page's lock, nor
 * for its file's write pins (lpc.h I.8).
 */
#if LPC_DEBUG
#define LPC_DBG_OWNER_PIN (UINT64_C(1) << 63)
/* Write pins this thread took and has not unpinned itself (one per page; an
 * unpin from another thread leaves it high): a filter only, that spares the
 * threads that never took one the walk of WPIN-SELF-WAIT's file check. */
extern __thread int lpc_page_debug_wpins_taken;
void lpc_page_lock_to_pin(struct lpc_page *p);
void lpc_page_lock_from_pin(struct lpc_page *p);
static inline bool lpc_page_wpinned(struct lpc_page *p)
{
	return atomic_load_explicit(&p->dbg_owner, memory_order_relaxed) & LPC_DBG_OWNER_PIN;
}
static inline bool lpc_page_wpinned_by_me(struct lpc_page *p)
{
	return atomic_load_explicit(&p->dbg_owner, memory_order_relaxed) ==
	       (LPC_DBG_OWNER_PIN | lpc_debug_tid());
}
#else
#define lpc_page_lock_to_pin(p) ((void)(p))
#define lpc_page_lock_from_pin(p) ((void)(p))
#endif
/* Sleeps until LOCKED is clear, without taking the lock. */
void lpc_page_wait_unlocked(struct lpc_page *p);
/* Sets `set` and clears LOCKED|WAITERS in one release RMW, waking sleepers. */
void lpc_page_unlock_set(struct lpc_page *p, uint32_t set);

/*
 * Writeback (lock.c).  lpc_page_wait_writeback sleeps until WRITEBACK is
 * clear (as W1-W3 for LOCKED).  lpc_page_end_writeback clears WRITEBACK,
 * sets `set` (DIRTY after a failed write), and wakes sleepers (K5).
 */
void lpc_page_wait_writeback(struct lpc_page *p);
void lpc_page_end_writeback(struct lpc_page *p, uint32_t set);

/* Frees a page never published (plain stores onto this thread's list):
 * the page-free fast path (alloc.c).  The allocator is in page/pool.h. */
void lpc_page_free_private(struct lpc_page *p);

#if LPC_DEBUG
/* The LPC_DEBUG report's description of a page (core/debug.h's
 * lpc_debug_describe_fn; page.c). */
void lpc_page_describe(const void *obj, char *buf, size_t len);
#endif

#endif /* LPC_PAGE_PAGE_H */
