/* SPDX-License-Identifier: MIT */
/*
 * reclaim.h - bounded memory: eviction over the descriptor array (evict.c),
 * its policy (CLOCK2: CLOCK with an inactive/active split, or plain CLOCK),
 * and the background reclaimer thread (reclaimer.c).
 *
 * Layering: reclaim/ sits above filemap/ (it needs a page's file, to take
 * its index lock and delete the slot) and writeback/ (a dirty page it meets
 * is handed to the flusher: evict.c E8) and below cache/.  The allocator in
 * page/ reaches it only through the callbacks this part installs in the
 * pool (pool->evict, pool->wake: see page/pool.h), as core/ reaches page/
 * through lpc_towner's thread_exit: page/ never includes reclaim/.
 *
 * Who evicts:
 *  - the background reclaimer: one thread per cache, started by the first
 *    allocation that leaves the shared free list below the low watermark
 *    (a process that never fills its cache never starts it), keeping free
 *    frames between the low and high watermarks, sleeping on a condition
 *    variable otherwise; stopped and joined by lpc_cache_destroy;
 *  - direct reclaim: an allocation that finds no frame at all evicts up to
 *    LPC_DIRECT_BATCHES batches itself (page/alloc.c).
 * Many evictors at once take different batches of the clock (one atomic
 * add on the hand each), and never serialise on one lock.
 *
 * Locks: the evictor takes a file's index lock with trylock only, inside an
 * RCU read section (legal: cache/cache.h), and free_lock inside it (the
 * deferred free).  The reclaimer's own mutex is a leaf: never held while
 * evicting or waiting for a grace period.
 */
#ifndef LPC_RECLAIM_RECLAIM_H
#define LPC_RECLAIM_RECLAIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/thread.h"
#include "page/pool.h"

/* CLOCK2's active target: an active page that was not referenced since the
 * hand last passed is demoted only while the active count is above it.  The
 * inactive pages are the rest: where a new page must be hit again to stay,
 * and where readahead's pages wait for their reader.  The target moves with
 * refaults (page/workingset.h), between
 *  - its start and upper bound: LPC_ACTIVE_MAX_PCT of the frames, less
 *    where the inactive side would not hold LPC_INACTIVE_RA_WINDOWS of
 *    readahead's largest windows (two streams, each with its window in use
 *    and the next one read ahead) or twice the frames the reclaimer keeps
 *    free (`high`: a small cache's watermarks are a large share of it, and
 *    with the free frames and the active ones leaving no inactive page, a
 *    sweep evicts nothing and lets every active page go: evict.c
 *    demote_all), never below LPC_ACTIVE_FLOOR_PCT
 *    (lpc_reclaim_active_max);
 *  - and LPC_ACTIVE_MIN_PCT of the frames.
 * Without a shadow table (no memory for it) the target stays at
 * LPC_ACTIVE_FLOOR_PCT.
 *
 * Why start high: in `lpcbench read` scan-mix (Zipf readers of a hot set
 * that filled the cache first, then a scanner reading the file ahead), half
 * the frames active let the scanner take a third of the hot set (hit ratio
 * 0.56-0.64, the kernel's 0.70-0.73), and 87.5 % kept it (0.81-0.82).  A
 * fixed high target, though, kept an idle hot set for ever and never
 * learned a new working set (tests/attack_target): refaults bring it down
 * where the inactive side is too small.  The kernel's balance likewise
 * grows with memory (mm/vmscan.c, inactive_is_low) and shifts with
 * refaults (mm/workingset.c). */
#define LPC_ACTIVE_MAX_PCT 90
#define LPC_ACTIVE_FLOOR_PCT 50
#define LPC_ACTIVE_MIN_PCT 10
#define LPC_INACTIVE_RA_WINDOWS 4

struct lpc_reclaim {
	/* Read-mostly: set at init. */
	struct lpc_pool *pool;
	int policy;              /* enum lpc_reclaim_policy */
	uint32_t batch;          /* descriptors per batch of the hand */
	uint32_t low, high;      /* watermarks of the shared free list */
	uint32_t ra_high;        /* a refill for readahead alone stops here:
				  * high plus the largest window
				  * (lpc_reclaim_set_ra_window), or higher
				  * while streams share (reclaimer.c
				  * ra_target) */

	/* The clock hand: a descriptor number, taken a batch at a time. */
	_Atomic uint64_t hand lpc_cacheline_aligned;
	/* CLOCK2: batches in a row that evicted nothing; a sweep's worth
	 * sets demote_all (demote below the target) until one evicts. */
	_Atomic uint32_t empty_batches;
	_Atomic bool demote_all;

	/* Background reclaimer.  `awake` is read by allocators below the low
	 * watermark without the lock; the rest is under `lock` (a leaf). */
	_Atomic bool awake lpc_cacheline_aligned;
	/* The thread waits out its linger before it drains a short pending
	 * list, or a small invalidate's kick has asked it to (reclaimer.c
	 * RL1-RL4): read by the kicks without the lock, relaxed; written by
	 * the kick that wins the exchange and by the thread. */
	_Atomic bool lingering;
	/* The refill under way was asked for by readahead alone (a wake with
	 * ra set won the exchange, and no demand wake came since): it spares
	 * pages read ahead and not used yet (lpc_reclaim_wake).  Relaxed: a
	 * hint; a demand allocation that finds nothing free evicts itself. */
	_Atomic bool spare_ra;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started;  /* thread created and not joined */
	bool failed;   /* pthread_create failed: direct reclaim only */
	bool retired;  /* lpc_reclaim_retire: never started again */
	bool stop;     /* destroy asks the thread to exit */
	bool kick;     /* an allocator asked for a refill */
};

/* Installs eviction in pool (its evict and wake callbacks, watermarks and
 * alloc_wait_ms).  Context: cache creation, before any allocation. */
void lpc_reclaim_init(struct lpc_reclaim *r, struct lpc_pool *pool, int policy,
		      uint32_t alloc_wait_ms);

/* Sizes the refill readahead asks for (spare_ra): up to `high` plus
 * `window` frames (readahead's largest window), at most high plus an eighth
 * of the frames, so that the window a stream's next marker reads finds its
 * frames free (reclaimer.c, "Readahead's wake"); and CLOCK2's active
 * target's bounds with it (lpc_reclaim_active_max).  Context: cache
 * creation, after lpc_reclaim_init, before any allocation. */
void lpc_reclaim_set_ra_window(struct lpc_reclaim *r, uint32_t window);

/* The upper bound of CLOCK2's active target for a pool of `nframes` whose
 * readahead windows reach `window` frames (0: readahead off) and whose
 * reclaimer keeps `high` frames free: see LPC_ACTIVE_MAX_PCT. */
uint32_t lpc_reclaim_active_max(uint32_t nframes, uint32_t window, uint32_t high);

/* Stops and joins the background reclaimer if it runs; a later wake starts
 * it again.  Context: no lock held; not the reclaimer itself. */
void lpc_reclaim_stop(struct lpc_reclaim *r);

/* As lpc_reclaim_stop, and no wake starts the thread again: the cache is
 * going (lpc_cache_destroy, after its files' last frees, whose kicks would
 * start it over a pool about to be freed).  Context: as lpc_reclaim_stop. */
void lpc_reclaim_retire(struct lpc_reclaim *r);

/* Frees what init made.  Context: the reclaimer retired (rule
 * RECLAIM-RETIRED: its thread joined and never started again). */
void lpc_reclaim_destroy(struct lpc_reclaim *r);

/*
 * Runs up to max_batches batches of the hand (E1-E8, evict.c), counting in
 * t.  Return: pages evicted (now on the pool's pending list, or queued for
 * a grace period).  Context: outside any RCU read section, no index lock,
 * no frozen page held; t is the calling thread's block.
 */
unsigned lpc_reclaim_evict(struct lpc_reclaim *r, unsigned max_batches, struct lpc_tcache *t);
/* The same, keeping (skipped as referenced) the pages read ahead and not
 * used yet (LPC_PG_RA) when spare_ra: the background reclaimer's refill
 * for readahead alone. */
unsigned lpc_reclaim_evict_sparing(struct lpc_reclaim *r, unsigned max_batches, bool spare_ra,
				   struct lpc_tcache *t);

/* Rule ACTIVE-COUNT's walk (evict.c, "The active count"): the descriptors
 * with ACTIVE set that are held (ref > 0: in an index); *freed (if not
 * NULL) receives those with ref 0 (free or in transit), which must be none.
 * Context: a quiescent cache (no evictor, no removal running), for tests
 * and lpc_cache_destroy's LPC_DEBUG check; it reads every descriptor. */
uint32_t lpc_reclaim_active_census(const struct lpc_reclaim *r, uint32_t *freed);

/* pool->wake: wakes (and the first time starts) the background reclaimer.
 * ra: readahead asks (page/alloc.c, LPC_ALLOC_NORECLAIM): the refill then
 * spares the pages read ahead and not used yet, so that readahead never
 * has a stream's own read-ahead pages evicted to make room for more of
 * them; a demand allocation's wake (ra false) ends the sparing.  One or two
 * relaxed loads when it is already awake.  Context: any but a read
 * section, no index lock (it may create a thread). */
void lpc_reclaim_wake(struct lpc_reclaim *r, bool ra);
/* Asks the thread (created if need be) to drain pending after its linger,
 * without a refill (reclaimer.c RL1-RL4): nothing when it is awake or
 * lingering already.  Context: as lpc_reclaim_wake. */
void lpc_reclaim_linger(struct lpc_reclaim *r);

#endif /* LPC_RECLAIM_RECLAIM_H */
