/* SPDX-License-Identifier: MIT */
/*
 * reclaimer.c - the background reclaimer, and eviction's installation in the
 * pool (the callbacks page/alloc.c calls).
 *
 * One thread per cache, invisible to users (no API): created by the first
 * allocation that leaves fewer than `low` frames on the shared free list, or
 * the first lpc_invalidate that leaves frames pending
 * (lpc_reclaim_wake through pool->wake, or lpc_reclaim_linger through
 * pool->linger: lpc_page_pending_kick), so a process that never fills nor
 * invalidates its cache never starts it.  Awake, it works in turns: below
 * `high`, it first takes the threads' deferred frames to pending (RF1:
 * page/alloc.c RT1-RT4), evicts batches until the free frames, plus those
 * pending, plus those it evicted reach `high` (RF2: frames that frees put
 * on pending need no eviction, only their grace period), then (RF3) takes
 * the pending list, waits
 * for one grace period and puts its frames on the free list itself
 * (lpc_page_pending_drain: no read section and no frozen page held): one
 * drain per turn, and looks again; it sleeps on `cond` when the free
 * list is above `high` with less than a batch pending, or nothing could be
 * evicted and nothing is pending (every frame held or
 * locked: the allocators then fall back to direct reclaim and their bounded
 * wait).  lpc_cache_destroy stops and joins it (lpc_reclaim_stop).
 *
 * Why not call_rcu and rcu_barrier (as before commit 95aae87, which the
 * sqlite benchmark's measurement led to):
 * liburcu's call_rcu thread sleeps 10 ms (poll) after every batch of
 * callbacks it runs, so each refill round cost 10-20 ms whatever its size,
 * and the reclaimer could free only about high - low frames per round: with
 * a 16 MiB cache (low 128, high 256 frames) about 15k frames/s, below what
 * 8 threads missing on 2 CPUs ask for.  The allocators then found the free
 * list empty and queued on reclaim_lock behind an rcu_barrier (330 us of
 * allocation per miss at 8 threads, 0.3 us with the drain).  A drain is one
 * synchronize_rcu: membarrier and a wait for the readers in a read section
 * now, tens of microseconds.
 *
 * Backoff: a refill that evicted nothing while the free list is below `low`
 * (every frame held, locked, dirty, or its file's index lock busy: in
 * LOCKED mode misses hold the rwlock for reading across their reads, and
 * E2's trylock for writing fails) would otherwise be followed at once by
 * another sweep of the whole hand, and the thread would spin.  It waits
 * first, RECLAIM_BACKOFF_MIN_US doubling to RECLAIM_BACKOFF_MAX_US, kicks
 * ignored (allocators meanwhile evict themselves: direct reclaim), cut
 * short only by a stop; a refill that evicts resets it.
 *
 * Readahead's wake (ra: page/pool.h, lpc_pool_ra_reserve): readahead never
 * takes the free list below `low`, and wakes the reclaimer once it leaves
 * fewer than twice that, or finds none above it.  A refill asked for by
 * readahead alone spares the pages read ahead and not used yet (spare_ra,
 * evict.c's E1): it makes room for a stream's next windows out of other
 * pages (in a scan, the pages already read), never out of what the stream
 * read ahead a moment before and has not reached yet (which a small cache
 * beside its windows would otherwise evict first: inactive, unreferenced,
 * the oldest); finding nothing else, it evicts nothing, and readahead reads
 * less.  A demand allocation's wake ends the sparing.  Such a refill goes
 * on to `ra_high`, `high` plus readahead's largest window (at most an eighth
 * of the frames more), not to `high`: a window takes free frames only, so
 * with `high` (2/64 of the frames, 1 MiB above the reserve in a 64 MiB
 * cache) every window of a scan in a full cache was cut to what the last
 * refill left, about 1 MiB, and a stream had one such run at the device
 * at a time, however large its window (lpcbench scan: ~100 windows of
 * ~600 pages per 256 MiB pass, no faster than one O_DIRECT 1 MiB stream).
 * Refilled to ra_high, the window a marker starts finds all its frames
 * free (the refill ran while the reader read the window before), and two
 * whole windows are in flight or unread ahead of the reader, as in the
 * kernel; the frames kept free for it are the consumed pages of the scan
 * (the refill spares the unread ones).  While two streams or more read
 * ahead, the refill goes on to `high` plus readahead's share instead
 * (ra_target: two windows of every active stream, ra_worker.c QS4): their
 * markers come in pairs, and room for one window a stream left the next
 * pair to what the last refill had landed (lpcbench scan, two scanners:
 * 1 page in 8 in windows cut for want of a frame, 1 in 25 with one).
 * RF4: such a refill then evicts a quarter of that room more (ra_slack:
 * one window of each of two streams) and a turn starts only below
 * ra_target, so that a turn, and its grace period (RF3: urcu-memb's
 * membarrier, an IPI to every CPU running one of the process's threads),
 * lands about two of the streams' windows, not one: every window of two
 * streams (half a lone stream's, QS2) took the free list below ra_target,
 * readahead's wake threshold (readahead.c A4), and its refill lasted one
 * window (lpcbench scan, two scanners, 16 KiB calls: 395 turns per 11
 * passes against 302 with one scanner; 279 with the slack).  A lone stream
 * (ra_room 0) has none: its windows are ra_max, one a turn already.
 *
 * Waking: allocators that see nfree below `low`, and lpc_invalidate once a
 * batch waits on pending (lpc_page_pending_kick), read `awake` (relaxed) and
 * do nothing more if it is set: no shared write while the reclaimer works.
 * Otherwise one of them wins the exchange, takes `lock` and signals.  The
 * reclaimer clears `awake` before it re-checks the free list and pending
 * and sleeps, so a wake that saw it set is covered by that re-check; for
 * pending a seq_cst fence on each side (after the clear here, between the
 * frees and the load of `awake` in the kick) makes it so (store buffering:
 * one of the two sees the other's store).  An allocation's low count needs
 * no fence: it is a hint, and an allocation that finds nothing free takes
 * pending itself (page/alloc.c reclaim()).
 *
 * Lingering: a pending list shorter than a batch with the free list above
 * `low` is no reason for a refill, but its frames must not wait for ever
 * (lpc_invalidate(3): "freed after one grace period by the cache's
 * background reclaimer"; F.1: frames_free exact when all is quiet; before
 * RL1-RL4 a small invalidate on a quiet cache left them on pending until
 * some allocation found the free list empty: tests/attack_miss
 * att_pending_stuck, tests/unit/test_pending_linger.c).  Steps:
 *   RL1 before it decides to sleep, the thread clears `awake` and
 *      `lingering`, then (seq_cst fence) loads pending and the free count
 *   RL2 free at or above `low`, pending 1..batch-1: it sets `lingering`
 *      and waits RECLAIM_LINGER_MS on `cond` (a stop or a demand wake,
 *      r->kick, cuts it short: back to RL1, or the refill); pending 0: it
 *      sleeps with no timeout, as before
 *   RL3 the time out: one drain (lpc_page_pending_drain: a grace period)
 *      of whatever pending holds then, no eviction
 *   RL4 back to RL1 (a kick that saw `lingering` set during the drain is
 *      seen there)
 * The kick of a small invalidate (lpc_page_pending_kick, pending 1..63,
 * after its frees and a seq_cst fence) does nothing when `awake` or
 * `lingering` is set (relaxed loads: no shared write, no syscall while
 * the thread lingers, so invalidates in a row share one drain); else the
 * kick that wins the exchange of `lingering` takes `lock` and signals,
 * without r->kick: the thread goes to RL1, not to a refill.  No lost kick:
 * if the kick's load saw neither flag cleared by RL1, the store buffering
 * argument above puts its frees before RL1's load of pending, which then
 * lingers for them; if the flag it saw was set by RL2 or by another kick,
 * that linger's RL3, or the RL1 after it, takes the frees.  The put path
 * kicks once per emptied list: a deferred free (page/alloc.c
 * free_deferred, a last put of a page already out of its index, never a
 * hit) that puts the first frame on an empty pending list; the frames after
 * it share that linger, and a full batch goes to call_rcu as before.
 * Checked in tests/model/linger.pml (RL1-RL4, the wake and the linger kick,
 * stop and retire, against puts, invalidates and destroy: no lost kick, no
 * start after retire), with broken variants spin must catch (RL1's clear
 * after its load of pending: BUG_CLEAR_AFTER_LOAD; no RL4 after the drain:
 * BUG_NO_RL4; a put that never kicks: BUG_PUT_NO_KICK; start_locked
 * ignoring the retire: BUG_START_AFTER_RETIRE).
 *
 * The thread registers with RCU on its first call (lpc_tcache: it has its
 * own block, where its counters go) and blocks every signal.
 */
#include <errno.h>
#include <time.h>

#include <lpc/lpc.h>

#include "core/debug.h"
#include "reclaim/reclaim.h"

#define RECLAIM_BACKOFF_MIN_US 100u
#define RECLAIM_BACKOFF_MAX_US 10000u
/* RL2: how long a pending list shorter than a batch waits for more frees
 * before the thread drains it. */
#define RECLAIM_LINGER_MS 20u

static unsigned evict_cb(void *arg, unsigned max_batches, struct lpc_tcache *t)
{
	return lpc_reclaim_evict(arg, max_batches, t);
}

/* CLOCK2's target bounds (reclaim.h): from the floor to the max with a
 * shadow table, fixed at the floor without one. */
static void set_target_bounds(struct lpc_reclaim *r, uint32_t window)
{
	uint32_t n = r->pool->nframes;
	uint32_t floor = (uint32_t)((uint64_t)n * LPC_ACTIVE_FLOOR_PCT / 100);

	if (!r->pool->ws.shadow)
		lpc_pool_ws_set_bounds(&r->pool->ws, floor, floor);
	else
		lpc_pool_ws_set_bounds(&r->pool->ws, (uint32_t)((uint64_t)n * LPC_ACTIVE_MIN_PCT / 100),
				  lpc_reclaim_active_max(n, window, r->high));
}

static void wake_cb(void *arg, bool ra)
{
	lpc_reclaim_wake(arg, ra);
}

static void linger_cb(void *arg)
{
	lpc_reclaim_linger(arg);
}

void lpc_reclaim_init(struct lpc_reclaim *r, struct lpc_pool *pool, int policy,
		      uint32_t alloc_wait_ms)
{
	uint32_t n = pool->nframes;

	r->pool = pool;
	r->policy = policy;
	r->batch = n < 256 ? (n / 4 ? n / 4 : 1) : 64;
	/* Low: 1/64 of the frames, at least two batches, at most 1/8. */
	r->low = n / 64 > 2 * r->batch ? n / 64 : 2 * r->batch;
	if (r->low > n / 8)
		r->low = n / 8 ? n / 8 : 1;
	r->high = 2 * r->low <= n / 4 ? 2 * r->low : r->low + 1;
	r->ra_high = r->high;
	/* Shadows for CLOCK2 only; without memory for them, a fixed target
	 * (reclaim.h).  The bounds are set again with readahead's window. */
	if (policy == LPC_RECLAIM_CLOCK2)
		(void)lpc_pool_ws_init(&pool->ws, n, true);
	else
		(void)lpc_pool_ws_init(&pool->ws, n, false);
	set_target_bounds(r, 0);
	atomic_init(&r->hand, 0);
	atomic_init(&r->demote_all, false);
	atomic_init(&r->empty_batches, 0);
	atomic_init(&r->awake, false);
	atomic_init(&r->lingering, false);
	atomic_init(&r->spare_ra, false);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->started = r->failed = r->stop = r->kick = r->retired = false;

	pool->wake_below = r->low;
	pool->alloc_wait_ms = alloc_wait_ms;
	pool->reclaim_arg = r;
	pool->wake = wake_cb;
	pool->linger = linger_cb;
	pool->evict = evict_cb;
}

void lpc_reclaim_set_ra_window(struct lpc_reclaim *r, uint32_t window)
{
	uint32_t cap = r->pool->nframes / 8;

	r->ra_high = r->high + (window < cap ? window : cap);
	set_target_bounds(r, window);
}

uint32_t lpc_reclaim_active_max(uint32_t nframes, uint32_t window, uint32_t high)
{
	uint64_t n = nframes;
	uint64_t inactive = n * (100 - LPC_ACTIVE_MAX_PCT) / 100;
	uint64_t ra = (uint64_t)window * LPC_INACTIVE_RA_WINDOWS;

	if (ra > inactive)
		inactive = ra;
	if (2 * (uint64_t)high > inactive)
		inactive = 2 * (uint64_t)high;
	if (inactive > n * (100 - LPC_ACTIVE_FLOOR_PCT) / 100)
		inactive = n * (100 - LPC_ACTIVE_FLOOR_PCT) / 100;
	return (uint32_t)(n - inactive);
}

static uint32_t free_frames(struct lpc_pool *c)
{
	return atomic_load_explicit(&c->nfree, memory_order_relaxed);
}

static uint32_t pending_frames(struct lpc_pool *c)
{
	return atomic_load_explicit(&c->npending, memory_order_relaxed);
}

/* A refill for readahead stops here: ra_high (room for the largest window
 * beyond `high`), or, while two streams or more read ahead, room for two
 * windows of each (the pool's ra_room, readahead's share: ra_worker.c QS4),
 * at most a quarter of the frames beyond `high`. */
static uint32_t ra_target(const struct lpc_reclaim *r)
{
	uint32_t room = atomic_load_explicit(&r->pool->ra_room, memory_order_relaxed);
	uint32_t cap = r->pool->nframes / 4, t;

	if (room > cap)
		room = cap;
	t = r->high + room;
	return t > r->ra_high ? t : r->ra_high;
}

/* RF4: while several streams read ahead (the pool's ra_room set: QS4), a
 * refill for readahead evicts a quarter of their room (one window of each
 * of two streams) beyond ra_target, and a turn starts only below
 * ra_target: about one grace period per two windows, not one per window.
 * 0 for a lone stream (ra_room 0: its windows are ra_max, one per refill,
 * as before). */
static uint32_t ra_slack(const struct lpc_reclaim *r)
{
	uint32_t room = atomic_load_explicit(&r->pool->ra_room, memory_order_relaxed);
	uint32_t cap = r->pool->nframes / 4;

	return (room > cap ? cap : room) / 4;
}

/* One wake-up's work: turns of (evict what pending will not bring, then one
 * drain).  Return: false when its last turn found nothing to evict and
 * nothing pending with the free list short of `high`.  Context: the
 * reclaimer thread, no lock held. */
static bool refill(struct lpc_reclaim *r, struct lpc_tcache *t)
{
	struct lpc_pool *c = r->pool;
	/* Two sweeps of the hand at most per round: a page kept for its
	 * REFERENCED bit is evictable on the second. */
	unsigned max_batches = 2 * (c->nframes / r->batch + 1);

	for (;;) {
		uint32_t free = free_frames(c), pend = pending_frames(c), got = 0;
		bool spare = atomic_load_explicit(&r->spare_ra, memory_order_relaxed);
		/* Readahead alone asked: room for its next windows too, and
		 * filled RF4's slack beyond it. */
		uint32_t high = spare ? ra_target(r) : r->high;
		uint32_t fill = spare ? high + ra_slack(r) : high;
		unsigned b = 0;

		if (atomic_load_explicit(&r->awake, memory_order_relaxed) == false)
			return true; /* destroy is stopping us */
		/* Enough free, and less than a batch waiting for a grace
		 * period (lpc_page_pending_kick wakes us for one). */
		if (free >= high && pend < r->batch)
			return true;
		/* RF1: about to evict: first the frames that threads keep
		 * on their deferred lists (lpc_invalidate's, page/alloc.c
		 * OD2) go to pending, and the counts are read again under
		 * reclaim_lock (lpc_page_deferred_take, RT1-RT4), so that
		 * they, and frames in a reclaim()'s hands, count as what
		 * pending brings: an idle thread's or a lpc_pread reader's
		 * deferred frames are no reason to evict cached pages. */
		if (free + pend < fill)
			lpc_page_deferred_take(c, &free, &pend);
		/* RF2: what pending brings counts: evict only the rest, never
		 * the cached pages that frees (lpc_invalidate, puts) made
		 * room for already. */
		while (free + pend + got < fill && b < max_batches) {
			/* A demand wake meanwhile ends the sparing, and the
			 * window's extra room with it. */
			if (spare && !atomic_load_explicit(&r->spare_ra, memory_order_relaxed)) {
				spare = false;
				high = fill = r->high;
				continue;
			}
			got += lpc_reclaim_evict_sparing(r, 1, spare, t);
			b++;
			if (atomic_load_explicit(&r->awake, memory_order_relaxed) == false)
				break; /* destroy is stopping us */
		}
		if (!got && !pend)
			return false;
		/* RF3: one drain per turn: the evicted frames wait on pending
		 * with the frees' (E7 never hands them to call_rcu) and the
		 * deferred frames RF1 took, and one grace period of our own
		 * lands them all. */
		lpc_page_pending_drain(c);
	}
}

/* RL2: waits RECLAIM_LINGER_MS on `cond`.  Return: false when the time
 * ran out; true on a stop or a demand (r->kick).  Context: r->lock held. */
static bool linger_wait(struct lpc_reclaim *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts); /* the cond's clock */
	ts.tv_nsec += (long)RECLAIM_LINGER_MS * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (!r->stop && !r->kick)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
			return r->stop || r->kick;
	return true;
}

static void *reclaimer_main(void *arg)
{
	struct lpc_reclaim *r = arg;
	struct lpc_tcache *t = lpc_tcache(&r->pool->owner);
	unsigned backoff_us = 0;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		if (!r->kick) {
			uint32_t pend;

			/* RL1 */
			atomic_store_explicit(&r->awake, false, memory_order_relaxed);
			atomic_store_explicit(&r->lingering, false, memory_order_relaxed);
			/* A wake that saw `awake` (or a kick that saw
			 * `lingering`) still set is covered here: the fence
			 * pairs with lpc_page_pending_kick's (a free whose
			 * kick saw either set is seen here; an allocation's
			 * low count is a hint either way). */
			atomic_thread_fence(memory_order_seq_cst);
			pend = pending_frames(r->pool);
			if ((free_frames(r->pool) >= r->low && pend < r->batch) || !t) {
				if (!pend || !t) {
					pthread_cond_wait(&r->cond, &r->lock);
					continue;
				}
				/* RL2-RL3: a short pending list, the free
				 * list above `low`: nothing to evict; wait
				 * for more frees (their kicks see `lingering`
				 * and leave it to us), then drain it all. */
				atomic_store_explicit(&r->lingering, true, memory_order_relaxed);
				if (!linger_wait(r)) {
					pthread_mutex_unlock(&r->lock);
					lpc_page_pending_drain(r->pool);
					pthread_mutex_lock(&r->lock);
				}
				continue; /* RL4: RL1 again */
			}
			atomic_store_explicit(&r->awake, true, memory_order_relaxed);
		}
		r->kick = false;
		pthread_mutex_unlock(&r->lock);
		lpc_count(t, LPC_C_RECLAIMER_WAKEUPS);
		if (refill(r, t)) {
			backoff_us = 0;
			pthread_mutex_lock(&r->lock);
			continue;
		}
		/* Nothing evictable: back off before the next sweep. */
		backoff_us = !backoff_us ? RECLAIM_BACKOFF_MIN_US :
			     backoff_us >= RECLAIM_BACKOFF_MAX_US / 2 ? RECLAIM_BACKOFF_MAX_US :
			     2 * backoff_us;
		{
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts); /* the cond's clock */
			ts.tv_nsec += (long)backoff_us * 1000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&r->lock);
			while (!r->stop &&
			       pthread_cond_timedwait(&r->cond, &r->lock, &ts) != ETIMEDOUT)
				;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* A demand allocation's wake ends a refill's sparing (written only when it
 * changes: the allocators below the watermark write nothing shared while the
 * reclaimer works). */
static void spare_end(struct lpc_reclaim *r, bool ra)
{
	if (!ra && atomic_load_explicit(&r->spare_ra, memory_order_relaxed))
		atomic_store_explicit(&r->spare_ra, false, memory_order_relaxed);
}

/* Creates the thread unless it runs, failed, is being stopped or was
 * retired (lpc_reclaim_retire: a kick from destroy's RCU barrier, after
 * the last stop, must not start one over a pool about to be freed; rule
 * RECLAIM-RETIRED, checked here, where every thread is created, and in
 * lpc_reclaim_destroy).  Context: r->lock held. */
static void start_locked(struct lpc_reclaim *r)
{
	if (r->started || r->failed || r->stop || r->retired)
		return;
	lpc_debug_check(!r->retired, "RECLAIM-RETIRED", NULL,
			"reclaimer %p: a kick after lpc_reclaim_retire starts its thread",
			(void *)r);
	if (lpc_thread_spawn(&r->thread, reclaimer_main, r, "lpc-reclaim") == 0)
		r->started = true;
	else
		r->failed = true; /* direct reclaim does the work */
}

void lpc_reclaim_wake(struct lpc_reclaim *r, bool ra)
{

	if (atomic_load_explicit(&r->awake, memory_order_relaxed)) {
		spare_end(r, ra);
		return;
	}
	if (atomic_exchange_explicit(&r->awake, true, memory_order_relaxed)) {
		spare_end(r, ra);
		return;
	}
	atomic_store_explicit(&r->spare_ra, ra, memory_order_relaxed);
	pthread_mutex_lock(&r->lock);
	start_locked(r);
	r->kick = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void lpc_reclaim_linger(struct lpc_reclaim *r)
{
	/* Awake, the thread reaches RL1 after its refill and sees pending
	 * (lpc_page_pending_kick's fence); lingering, its RL3 drains it. */
	if (atomic_load_explicit(&r->awake, memory_order_relaxed) ||
	    atomic_load_explicit(&r->lingering, memory_order_relaxed))
		return;
	if (atomic_exchange_explicit(&r->lingering, true, memory_order_relaxed))
		return;
	/* No kick: the thread wakes to RL1, finds the short list and lingers
	 * (it never evicts for it). */
	pthread_mutex_lock(&r->lock);
	start_locked(r);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void lpc_reclaim_stop(struct lpc_reclaim *r)
{
	bool started;

	pthread_mutex_lock(&r->lock);
	started = r->started;
	r->stop = true;
	/* Cuts a refill short (refill polls it). */
	atomic_store_explicit(&r->awake, false, memory_order_relaxed);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (started)
		pthread_join(r->thread, NULL);
	pthread_mutex_lock(&r->lock);
	r->started = false;
	r->stop = false;
	r->kick = false;
	atomic_store_explicit(&r->awake, false, memory_order_relaxed);
	atomic_store_explicit(&r->lingering, false, memory_order_relaxed);
	pthread_mutex_unlock(&r->lock);
}

void lpc_reclaim_retire(struct lpc_reclaim *r)
{
	pthread_mutex_lock(&r->lock);
	r->retired = true;
	pthread_mutex_unlock(&r->lock);
	lpc_reclaim_stop(r);
}

void lpc_reclaim_destroy(struct lpc_reclaim *r)
{
#if LPC_DEBUG
	/* Rule RECLAIM-RETIRED: the thread was joined by the last stop and
	 * nothing started it again (start_locked). */
	pthread_mutex_lock(&r->lock);
	lpc_debug_check(!r->started, "RECLAIM-RETIRED", NULL,
			"reclaimer %p destroyed with its thread running", (void *)r);
	pthread_mutex_unlock(&r->lock);
#endif
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}
