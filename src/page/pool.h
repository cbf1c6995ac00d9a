/* SPDX-License-Identifier: MIT */
/*
 * pool.h - the descriptor pool: the descriptor array, the frame arena, the
 * free lists and the batch of published pages waiting for a grace period,
 * and the allocator over them (alloc.c).  The cache embeds one pool; nothing
 * in page/ knows the cache or the files.
 *
 * The pool is also the owner (core/thread.h) of the per-thread blocks that
 * keep each thread's private free frames and counters: `owner` comes first,
 * so a block lookup (lpc_tcache(&pool->owner)) reads the same line, at the
 * same offset, as the cache's id did.
 *
 * Locks (the whole order is in cache/cache.h):
 *   reclaim_lock  one thread reclaims at a time; held across a grace period,
 *                 so never taken in a read section or with a frozen page held
 *   free_lock     free and pending lists; a leaf, never held across I/O or a
 *                 grace period
 */
#ifndef LPC_PAGE_POOL_H
#define LPC_PAGE_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/thread.h"
#include "page/page.h"
#include "page/workingset.h"

struct lpc_pool {
	struct lpc_towner owner; /* first: see above */

	/* Read-mostly: set at init. */
	struct lpc_page *pages;
	unsigned char *frames;
	uint32_t nframes;
	unsigned page_shift;
	size_t page_size;
	size_t pages_bytes, frames_bytes;
	unsigned tbatch; /* frames moved between a thread list and the shared one */
	uint32_t low_free; /* below this many shared free frames, threads hoard none */

	/* Shared free list and the batch of published pages awaiting a grace
	 * period.  Leaf lock; never held across I/O or a grace period. */
	pthread_mutex_t free_lock lpc_cacheline_aligned;
	struct lpc_page *free;
	/* Frames [fresh, nframes) were never handed out: their descriptors are
	 * untouched (all zero: ref 0, which the evictor skips as free) and
	 * they are counted in nfree.  Only grows; written under free_lock. */
	_Atomic uint32_t fresh;
	/* The 2 MiB chunks of the frame arena and of the descriptor array
	 * advised to use huge pages so far (pool.c lpc_pool_hint_huge);
	 * written under free_lock. */
	uint32_t huge_frames, huge_pages;
	_Atomic uint32_t nfree; /* written under free_lock; read without it as a hint */
	struct lpc_page *pending;
	/* pending's last frame (NULL with pending): a take splices the list
	 * whole, never walking a thousand cold descriptors to its end (rule
	 * PENDING-CHAIN checks it, alloc.c). */
	struct lpc_page *pending_tail;
	/* Written under free_lock; read without it as a hint (the reclaimer,
	 * lpc_page_pending_kick). */
	_Atomic uint32_t npending;
	/* Batches taken off pending, not yet on the free list: call_rcu's
	 * not yet run, and a lpc_page_pending_drain in its grace period. */
	_Atomic uint32_t batches_in_flight;

	pthread_mutex_t reclaim_lock; /* see the lock order in cache/cache.h */

	/* Eviction, installed by the part above (reclaim/reclaimer.c) when the
	 * cache is created, as core's thread_exit is: page/ never includes
	 * reclaim/.  evict: runs up to max_batches batches of the clock over
	 * the descriptors and frees what it evicts through the deferred path
	 * (pending); returns how many it evicted.  Context: outside any read
	 * section, no index lock, no frozen page.  wake: asks the background
	 * reclaimer to refill the free list; called by an allocation that
	 * took frames from the shared list and left fewer than wake_below,
	 * and by readahead's (ra: the refill spares pages read ahead and not
	 * used yet; lpc_pool_ra_reserve).
	 * All NULL: no eviction (a full cache fails the allocation). */
	unsigned (*evict)(void *arg, unsigned max_batches, struct lpc_tcache *t);
	void (*wake)(void *arg, bool ra);
	/* linger: asks the background reclaimer to drain a pending list
	 * shorter than a batch after a short wait, without evicting
	 * (reclaim/reclaimer.c RL1-RL4); lpc_page_pending_kick's. */
	void (*linger)(void *arg);
	void *reclaim_arg;
	uint32_t wake_below;    /* low watermark of nfree */
	uint32_t alloc_wait_ms; /* how long a waiting allocation retries */
	/* The room a refill for readahead makes beyond `high` while two
	 * streams or more read ahead (0: one stream or none, the largest
	 * window's room; reclaim/reclaimer.c ra_target).  Written by
	 * readahead's sizing (filemap/ra_worker.c QS4) only when it changes,
	 * read by the reclaimer; relaxed both: a hint that sizes a refill. */
	_Atomic uint32_t ra_room;
	/* Pages with ACTIVE set: incremented by the evictor (promotion),
	 * decremented by it (demotion) and by the deferred free. */
	_Atomic uint32_t nactive lpc_cacheline_aligned;
	/* Shadows of evicted pages and CLOCK2's active target (workingset.h):
	 * set up by the reclaimer's init (all zero without one: no shadow, a
	 * miss never looks), its table freed by lpc_pool_destroy. */
	struct lpc_workingset ws;
};

/* lpc_page_alloc_frame flags. */
#define LPC_ALLOC_NOWAIT 1u /* no waiting when nothing can be evicted (lpc_pread) */
/* Free frames only: no grace period for pending ones, no direct reclaim, no
 * wait, and none of the last lpc_pool_ra_reserve frames of the shared list
 * (readahead, which reads less rather than take a frame a demand read may
 * need); a failure is not counted in alloc_failures. */
#define LPC_ALLOC_NORECLAIM 2u
/* For the miss path only (M1, run.c U2): the frame is published at once (M2
 * stores its references after PUBLISHED) and its references change only by
 * atomic read-modify-write from then on, so it may be one of this thread's
 * own deferred frames not yet covered by a grace period (alloc.c MR1-MR5);
 * it comes back with ref 0, not 1 (MR2). */
#define LPC_ALLOC_MISS 4u

/*
 * Readahead's reserve: the shared free frames an LPC_ALLOC_NORECLAIM
 * allocation leaves (its own thread's private frames it may take).  The
 * reclaimer's low watermark, wake_below (1/64 of the frames, at least two
 * eviction batches, at most 1/8; reclaim/reclaimer.c), and at least 1.  Why
 * that: a window in flight holds its frames locked, unevictable, for as
 * long as the device takes; with the reserve, a demand read that comes
 * meanwhile finds a free frame at once however many windows are in flight,
 * and readahead never takes the free count to where a demand allocation
 * would wake the reclaimer or evict.  Readahead wakes the reclaimer itself
 * (with ra: page/alloc.c) once it leaves fewer than twice the reserve, or
 * finds none above it, so that a stream's next windows find frames (the
 * refill runs while the stream reads what it has); that refill spares the
 * pages read ahead and not used yet (reclaim/reclaim.h), so readahead never
 * has the reclaimer evict a stream's own read-ahead pages to make room for
 * more of them.  Context: any.
 */
uint32_t lpc_pool_ra_reserve(const struct lpc_pool *pool);

static inline void *lpc_page_frame(const struct lpc_page *p)
{
	return p->pool->frames + ((size_t)p->id << p->pool->page_shift);
}

/* Bytes of the arena that frames handed out at least once cover (a gauge:
 * the part of the arena that was ever written).  Context: any. */
static inline size_t lpc_pool_touched_bytes(const struct lpc_pool *pool)
{
	return (size_t)atomic_load_explicit(&((struct lpc_pool *)pool)->fresh,
					    memory_order_relaxed)
	       << pool->page_shift;
}

/*
 * Maps nframes descriptors and frames of page_size bytes (a power of two),
 * all free, reserved and not populated (pool.c).  Return: 0 or -ENOMEM (nothing left mapped).  Context: any.
 */
int lpc_pool_init(struct lpc_pool *pool, uint32_t nframes, size_t page_size);

/* Unmaps everything.  Context: no frame in use, no call_rcu batch pending
 * (lpc_rcu_barrier after the last free), the blocks orphaned. */
void lpc_pool_destroy(struct lpc_pool *pool);

/* Frames [first, end) are being carved (alloc.c fresh_carve): advises the
 * chunks of the arena they reach, and one more, to use huge pages; the
 * descriptors' likewise once the cache has handed out POOL_HUGE_AFTER
 * bytes of frames (pool.c).  Context: free_lock held. */
void lpc_pool_hint_huge(struct lpc_pool *pool, uint32_t first, uint32_t end);

/*
 * Allocator (alloc.c).  lpc_page_alloc_frame returns a private page: ref 1
 * (0 with LPC_ALLOC_MISS), flags 0, no identity.  Frees: lpc_page_free_private for a page never
 * published (plain stores onto this thread's list); lpc_page_free_deferred
 * for one that was (after a grace period, batched).
 * When no frame is free anywhere, the allocator evicts (direct reclaim: at
 * most LPC_DIRECT_BATCHES batches per round) and takes the evicted frames
 * with one grace period; when nothing can be evicted it retries with a
 * sleeping backoff for alloc_wait_ms, unless flags has LPC_ALLOC_NOWAIT.
 * Return of alloc: 0 or -ENOMEM.  Context: outside an RCU read section
 * (it may wait for a grace period), holding no frozen page in a slot and no
 * index lock.
 */
int lpc_page_alloc_frame(struct lpc_pool *pool, unsigned flags, struct lpc_page **out);

/* Hands the pending list to call_rcu now, without waiting (the background
 * reclaimer).  Context: a registered thread; no lock held. */
void lpc_page_pending_flush(struct lpc_pool *pool);

/* Takes the pending list, waits for one grace period and puts its frames on
 * the shared free list (the background reclaimer, after it evicted).
 * Return: how many.  Context: a registered thread, outside any read
 * section, no frozen page held, no lock held (takes reclaim_lock). */
uint32_t lpc_page_pending_drain(struct lpc_pool *pool);

/*
 * The background reclaimer's take of deferred frames before it evicts
 * (alloc.c RT1-RT4): moves every thread's deferred list (OD2) to pending
 * with reclaim()'s steal (T1-T4, OD6), then reads the shared free count
 * and the pending count into *free and *pend under reclaim_lock (no drain
 * or reclaim() holds frames in its hands then).  Return: how many deferred
 * frames went to pending.  Context: a registered thread outside any read
 * section, no frozen page held, no lock held (takes reclaim_lock; waits for
 * a grace period when some thread holds deferred frames).
 */
uint32_t lpc_page_deferred_take(struct lpc_pool *pool, uint32_t *free, uint32_t *pend);

/*
 * Puts n published frames, frozen and out of their index (ref 0), chained
 * head..tail by next, on pending with one take of free_lock, without
 * handing pending to call_rcu (as lpc_page_free_evicted: the reclaimer's
 * drain or an allocator's reclaim() lands them with a grace period of its
 * own; lpc_page_pending_kick asks for it).  lpc_invalidate's batch: one
 * lock and one list operation per gang of pages, not per page.  Context: a
 * registered thread inside the RCU read section that froze them (frames in
 * transit: alloc.c).
 */
void lpc_page_free_removed_chain(struct lpc_pool *pool, struct lpc_page *head,
				 struct lpc_page *tail, uint32_t n);

/*
 * Keeps such a chain (as lpc_page_free_removed_chain's) on this thread's
 * deferred list instead: its next allocations take them after a grace
 * period of their own (alloc.c OD1-OD6), so the frames a thread frees come
 * back to it, still warm in its CPU's cache, and no other thread's lock,
 * list or wake-up is touched.  Return: true if kept; false (nothing done:
 * the caller puts them on pending) when the thread's list is being taken,
 * the shared list runs short, or the thread keeps half the frames already.
 * Context: as lpc_page_free_removed_chain.
 */
bool lpc_page_keep_removed_chain(struct lpc_pool *pool, struct lpc_page *head,
				 struct lpc_page *tail, uint32_t n);

/*
 * Wakes the background reclaimer to drain pending (one grace period for
 * all): at once when a batch's worth waits there, else after its linger
 * (reclaim/reclaimer.c RL1-RL4: a few milliseconds, so the frames of a
 * small lpc_invalidate on a quiet cache reach the free list too, and
 * invalidates in a row share one drain).  Nothing when pending is empty.
 * Context: no read section, no lock held (the wake may create the
 * thread); after frees by lpc_page_free_removed_chain.
 */
void lpc_page_pending_kick(struct lpc_pool *pool);

/* Puts the free frames head..tail (n of them, chained by next) on the
 * pool's shared list.  Context: free_lock not held. */
void lpc_page_free_chain(struct lpc_pool *pool, struct lpc_page *head, struct lpc_page *tail,
			 uint32_t n);

/*
 * Counts every free frame where it lies (alloc.c, "Counting the frames"):
 * on the shared list's segments, fresh, on the threads' private lists, on
 * pending; and the pool's counters of them (nfree + the threads' nfree +
 * npending) in `counted`.  Checks (LPC_DEBUG) rule SEG-COUNT (each list's
 * chain is as long as its count) and FRAMES-ACCOUNTED (total + in_use ==
 * nframes, counted == total).  Return: 0; -EAGAIN while frames are in
 * transit (a call_rcu batch, a drain or a reclaim() holds some: try again).
 * Context: quiet (tests): no thread allocates or frees meanwhile, in_use
 * frames are held; outside any read section, no lock held.
 */
struct lpc_pool_census {
	uint32_t shared, fresh, private_frames, pending;
	uint32_t total;   /* the four above */
	uint32_t counted; /* nfree + the threads' nfree + npending */
};
int lpc_pool_census(struct lpc_pool *pool, uint32_t in_use, struct lpc_pool_census *out);

/* The pool's thread_exit (core/thread.h): returns the block's private free
 * frames to the shared list.  Context: lpc_threads_lock. */
void lpc_pool_thread_exit(struct lpc_tcache *t);

#endif /* LPC_PAGE_POOL_H */
