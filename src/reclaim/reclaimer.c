/* SPDX-License-Identifier: MIT */
/*
 * reclaimer.c - the background reclaimer, and eviction's installation in the
 * pool (the callbacks page/alloc.c calls).
 *
 * One thread per cache, invisible to users (no API): created by the first
 * allocation that leaves fewer than `low` frames on the shared free list, or
 * the first lpc_invalidate that leaves a batch of frames pending
 * (lpc_reclaim_wake through pool->wake, lpc_page_pending_kick), so a
 * process that never fills its cache never starts it.  Awake, it works in
 * turns: it evicts batches until the free frames, plus those pending, plus
 * those it evicted reach `high` (frames that frees put on pending need no
 * eviction, only their grace period), then takes the pending list, waits
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
 * (the refill spares the unread ones).
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
 * Trim (giving memory back, page/pool.c TR1-TR4): while the shared free
 * list holds more than `high` frames that were not given back yet, and
 * the pool allows it (trim_ok: no backend pins its frames), the idle
 * thread does not sleep for good but wakes every LPC_TRIM_TICK_MS and
 * notes nfree.  Once LPC_TRIM_TICKS ticks in a row saw at least m frames
 * free, m frames were not needed for that long: it gives back what of
 * them lies beyond `high` and is not given back yet (at most
 * LPC_TRIM_MAX_BATCHES batches a tick; the next tick goes on), so the
 * frames the cache keeps resident for the next allocations are the
 * watermark's (what a refill would make free anyway).  Nothing to give
 * back (the free list at or below `high` beside the trimmed frames): it
 * sleeps until woken, and the watch starts again from zero.  A process
 * whose cache never shrinks never ticks; one whose cache shrank ticks
 * until the excess is given back, then stops.  Only this thread trims:
 * it is the one trimmer that pool.c's steps ask for.
 *
 * The thread registers with RCU on its first call (lpc_tcache: it has its
 * own block, where its counters go) and blocks every signal.
 */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include <lpc/lpc.h>

#include "reclaim/reclaim.h"

#define RECLAIM_BACKOFF_MIN_US 100u
#define RECLAIM_BACKOFF_MAX_US 10000u
/* Trim: a tick every LPC_TRIM_TICK_MS; frames free at LPC_TRIM_TICKS ticks
 * in a row (2 s) are given back, at most LPC_TRIM_MAX_BATCHES batches of
 * pool.c's a tick. */
#define LPC_TRIM_TICK_MS 250u
#define LPC_TRIM_TICKS 8u
#define LPC_TRIM_MAX_BATCHES 64u
_Static_assert(LPC_TRIM_TICKS <= sizeof(((struct lpc_reclaim *)0)->trim_seen) /
					 sizeof(uint32_t),
	       "trim_seen holds a window");

static unsigned evict_cb(void *arg, unsigned max_batches, struct lpc_tcache *t)
{
	return lpc_reclaim_evict(arg, max_batches, t);
}

static void wake_cb(void *arg, bool ra)
{
	lpc_reclaim_wake(arg, ra);
}

void lpc_reclaim_init(struct lpc_reclaim *r, struct lpc_pool *pool, int policy,
		      uint32_t alloc_wait_ms)
{
	uint32_t n = pool->nframes;

	r->pool = pool;
	r->policy = policy;
	r->batch = n < 256 ? (n / 4 ? n / 4 : 1) : 64;
	r->active_target = (uint32_t)((uint64_t)n * LPC_ACTIVE_TARGET_PCT / 100);
	/* Low: 1/64 of the frames, at least two batches, at most 1/8. */
	r->low = n / 64 > 2 * r->batch ? n / 64 : 2 * r->batch;
	if (r->low > n / 8)
		r->low = n / 8 ? n / 8 : 1;
	r->high = 2 * r->low <= n / 4 ? 2 * r->low : r->low + 1;
	r->ra_high = r->high;
	atomic_init(&r->hand, 0);
	atomic_init(&r->demote_all, false);
	atomic_init(&r->empty_batches, 0);
	atomic_init(&r->awake, false);
	atomic_init(&r->spare_ra, false);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->started = r->failed = r->stop = r->kick = false;
	r->trim_ticks = 0;
	r->trim_next = 0;

	pool->wake_below = r->low;
	pool->alloc_wait_ms = alloc_wait_ms;
	pool->reclaim_arg = r;
	pool->wake = wake_cb;
	pool->evict = evict_cb;
}

void lpc_reclaim_set_ra_window(struct lpc_reclaim *r, uint32_t window)
{
	uint32_t cap = r->pool->nframes / 8;

	r->ra_high = r->high + (window < cap ? window : cap);
}

static uint32_t free_frames(struct lpc_pool *c)
{
	return atomic_load_explicit(&c->nfree, memory_order_relaxed);
}

static uint32_t pending_frames(struct lpc_pool *c)
{
	return atomic_load_explicit(&c->npending, memory_order_relaxed);
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
		/* Readahead alone asked: room for its next window too. */
		uint32_t high = spare ? r->ra_high : r->high;
		unsigned b = 0;

		if (atomic_load_explicit(&r->awake, memory_order_relaxed) == false)
			return true; /* destroy is stopping us */
		/* Enough free, and less than a batch waiting for a grace
		 * period (lpc_page_pending_kick wakes us for one). */
		if (free >= high && pend < r->batch)
			return true;
		/* What pending brings counts: evict only the rest, never the
		 * cached pages that frees (lpc_invalidate, puts) made room
		 * for already. */
		while (free + pend + got < high && b < max_batches) {
			/* A demand wake meanwhile ends the sparing, and the
			 * window's extra room with it. */
			if (spare && !atomic_load_explicit(&r->spare_ra, memory_order_relaxed)) {
				spare = false;
				high = r->high;
				continue;
			}
			got += lpc_reclaim_evict_sparing(r, 1, spare, t);
			b++;
			if (atomic_load_explicit(&r->awake, memory_order_relaxed) == false)
				break; /* destroy is stopping us */
		}
		if (!got && !pend)
			return false;
		/* One drain per turn: the evicted frames wait on pending with
		 * the frees' (E7 never hands them to call_rcu), and one grace
		 * period of our own lands them all. */
		lpc_page_pending_drain(c);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Free frames not given back beyond `high`: something to watch. */
static bool trim_armed(struct lpc_reclaim *r)
{
	struct lpc_pool *c = r->pool;

	return c->trim_ok &&
	       free_frames(c) >
		       (uint64_t)atomic_load_explicit(&c->ntrimmed, memory_order_relaxed) + r->high;
}

/* One tick of the watch: notes nfree; a full window gives back what stayed
 * free beyond `high` (the module comment).  Context: the reclaimer thread,
 * no lock held. */
static void trim_tick(struct lpc_reclaim *r)
{
	struct lpc_pool *c = r->pool;
	uint32_t m = UINT32_MAX, nt, want;

	r->trim_seen[r->trim_ticks++ % LPC_TRIM_TICKS] = free_frames(c);
	if (r->trim_ticks < LPC_TRIM_TICKS)
		return;
	for (unsigned i = 0; i < LPC_TRIM_TICKS; i++)
		if (r->trim_seen[i] < m)
			m = r->trim_seen[i];
	nt = atomic_load_explicit(&c->ntrimmed, memory_order_relaxed);
	if (m <= (uint64_t)nt + r->high)
		return;
	want = m - nt - r->high;
	for (unsigned b = 0; want && b < LPC_TRIM_MAX_BATCHES; b++) {
		uint32_t got = lpc_pool_trim(c, want);

		if (!got)
			break;
		want = got < want ? want - got : 0;
	}
}

/*
 * The watch's clock: runs a tick of it (without `lock`) when one is due and
 * says whether it did; with nothing to give back it stops the watch, which
 * starts again from zero.  Called where the thread would sleep and after
 * each refill, so a reclaimer that is kept busy (frees landing on pending
 * faster than a tick) still ticks: the watch measures time, not idleness.
 * Context: r->lock held (dropped and taken again when a tick runs).
 */
static bool trim_poll(struct lpc_reclaim *r, uint64_t now)
{
	if (!trim_armed(r)) {
		r->trim_next = 0;
		r->trim_ticks = 0;
		return false;
	}
	if (!r->trim_next)
		r->trim_next = now + (uint64_t)LPC_TRIM_TICK_MS * 1000000u;
	if (now < r->trim_next)
		return false;
	r->trim_next = now + (uint64_t)LPC_TRIM_TICK_MS * 1000000u;
	pthread_mutex_unlock(&r->lock);
	trim_tick(r);
	pthread_mutex_lock(&r->lock);
	return true;
}

/*
 * The idle thread's sleep: until woken, or, while the watch runs
 * (trim_poll), until its next tick.
 * Context: r->lock held (dropped and taken again).
 */
static void idle_wait(struct lpc_reclaim *r)
{
	struct timespec ts;
	uint64_t now = mono_ns(), d;

	if (trim_poll(r, now))
		return;
	if (!r->trim_next) {
		pthread_cond_wait(&r->cond, &r->lock);
		return;
	}
	d = r->trim_next - now;
	clock_gettime(CLOCK_REALTIME, &ts); /* the cond's clock */
	ts.tv_sec += (time_t)(d / 1000000000u);
	ts.tv_nsec += (long)(d % 1000000000u);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	(void)pthread_cond_timedwait(&r->cond, &r->lock, &ts);
}

static void *reclaimer_main(void *arg)
{
	struct lpc_reclaim *r = arg;
	struct lpc_tcache *t = lpc_tcache(&r->pool->owner);
	unsigned backoff_us = 0;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		if (!r->kick) {
			atomic_store_explicit(&r->awake, false, memory_order_relaxed);
			/* A wake that saw `awake` still set is covered here:
			 * the fence pairs with lpc_page_pending_kick's (a
			 * free that saw `awake` set is seen here; an
			 * allocation's low count is a hint either way). */
			atomic_thread_fence(memory_order_seq_cst);
			if ((free_frames(r->pool) >= r->low &&
			     pending_frames(r->pool) < r->batch) ||
			    !t) {
				idle_wait(r);
				continue;
			}
			atomic_store_explicit(&r->awake, true, memory_order_relaxed);
		}
		r->kick = false;
		pthread_mutex_unlock(&r->lock);
		lpc_count(t, LPC_C_RECLAIMER_WAKEUPS);
		if (refill(r, t)) {
			backoff_us = 0;
			pthread_mutex_lock(&r->lock);
			(void)trim_poll(r, mono_ns());
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

void lpc_reclaim_wake(struct lpc_reclaim *r, bool ra)
{
	sigset_t all, old;

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
	if (!r->started && !r->failed && !r->stop) {
		/* The thread blocks every signal (it inherits the mask). */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&r->thread, NULL, reclaimer_main, r) == 0) {
			/* Named (a thread inherits its creator's name, which
			 * may be another lpc thread's). */
			pthread_setname_np(r->thread, "lpc-reclaim");
			r->started = true;
		} else
			r->failed = true; /* direct reclaim does the work */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	r->kick = true;
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
	pthread_mutex_unlock(&r->lock);
}

void lpc_reclaim_destroy(struct lpc_reclaim *r)
{
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}
