/* SPDX-License-Identifier: MIT */
/*
 * flusher.c - one flusher thread per cache, and the throttling of writers.
 *
 * The flusher wakes every quarter of the age (at most every 500 ms) or when
 * kicked (by eviction, a throttled writer, or the first lpc_pwrite that
 * leaves the cache above the background threshold: lpc_wb_kick_bg, so a
 * streaming writer's pages are written beside it, not after it); while
 * the cache stays above that threshold and its rounds make progress it
 * runs round after round.  A round writes back (WB_ASYNC) every file whose
 * dirty pages are older than the age (f->dirtied_when: when its dirty count last left 0), or every
 * file with dirty pages while the cache holds more than the background
 * threshold, or every file eviction handed to it (f->wb_reclaim, set by
 * reclaim/evict.c E8 with a kick: the cache met dirty pages it needed to
 * evict; the pick clears the flag before the pass, so a hand-off during the
 * pass asks for another).  It pins the file it works on with f->wb_busy
 * (under files->lock): the last close waits for it to drop.
 *
 * Its thread starts when first needed, so that a cache that never writes,
 * or whose writes never wait for age (LPC_DIRTY_EXPIRE_NEVER: a program
 * that makes its own writes durable, as the SQLite extension does at every
 * commit point), runs no thread of lpc's: a single-threaded program keeps
 * glibc's single-thread fast paths (its mutexes take no atomic; SQLite's
 * own mutexes were 13 % of the 75,000-insert program's cycles with a
 * flusher running, 1.5 % without).
 *   F0 lpc_wb_start (cache create; a destroy that found the cache busy)
 *      sets allowed under spawn_lock; it starts the thread at once only if
 *      a trigger of F2 holds already (pages dirty with writeback by age,
 *      or more dirty pages than the background threshold)
 *   F1 lpc_wb_need: if running is set, nothing (a relaxed load: running is
 *      only ever set while the thread exists, and stop clears it after the
 *      join); else under spawn_lock, when allowed and not started,
 *      lpc_thread_spawn (core/spawn.c: every signal blocked, liburcu's worker
 *      made first, named lpc-flusher), then started and running.  A
 *      failed create leaves both false: the next need tries again, and
 *      meanwhile dirty pages are written by lpc_fsync, the last close and
 *      throttled writers (none is lost; eviction may find only dirty pages
 *      and make a miss wait or fail with -ENOMEM, as a stuck disk would)
 *   F2 the needs: a page made dirty while no flusher runs, when timed
 *      (dirty.c dirty_inc, under the index lock: hence spawn_lock's rule),
 *      every kick (background threshold, eviction's hand-off E8) and
 *      throttling; the one-shot hints in front of the kicks (bg_on,
 *      f->wb_reclaim) are passed over while no flusher runs, since only a
 *      running flusher clears them: a failed start, or a flusher stopped
 *      before its round, never leaves a trigger that no longer fires
 *   F3 lpc_wb_stop clears allowed under spawn_lock first, so no need
 *      starts a thread while it stops and joins the running one
 *
 * Throttling: a writer that leaves the cache above the hard limit writes its
 * own file back (WB_ASYNC, THROTTLE_BYTES a pass: runs as long as the
 * flusher's) until the cache is below it;
 * when its file has nothing it can write, it kicks the flusher and waits for
 * it a millisecond at a time, at most a second in all, so dirty memory stays
 * bounded by the limit plus what the writers in flight hold, and a writer
 * whose pages cannot be written (a failing disk) is slowed, not stopped.
 */
#include <errno.h>
#include <time.h>

#include "writeback/writeback.h"

/* What a throttled writer writes per pass: a whole batch of writeback.c
 * (WB_BYTES, 4 MiB), so a sequential writer's runs are as long as the
 * flusher's; with big pages, THROTTLE_MIN pages at least. */
#define THROTTLE_BYTES ((uint64_t)4 << 20)
#define THROTTLE_MIN 32

int lpc_wb_init(struct lpc_wb *wb, struct lpc_files *fs, uint64_t expire_ms, uint64_t bg_pct,
		uint64_t limit_pct, uint32_t nframes)
{
	if (!expire_ms)
		expire_ms = LPC_WB_EXPIRE_MS;
	if (!bg_pct)
		bg_pct = LPC_WB_BACKGROUND_PCT;
	if (!limit_pct)
		limit_pct = bg_pct > LPC_WB_LIMIT_PCT ? bg_pct : LPC_WB_LIMIT_PCT;
	if (bg_pct > 100 || limit_pct > 100 || bg_pct > limit_pct ||
	    (expire_ms > UINT32_MAX && expire_ms != LPC_DIRTY_EXPIRE_NEVER))
		return -EINVAL;
	wb->files = fs;
	wb->timed = expire_ms != LPC_DIRTY_EXPIRE_NEVER;
	wb->expire_ns = wb->timed ? expire_ms * 1000000u : UINT64_MAX;
	wb->bg_pages = (int64_t)((uint64_t)nframes * bg_pct / 100);
	wb->limit_pages = (int64_t)((uint64_t)nframes * limit_pct / 100);
	if (wb->limit_pages < 1)
		wb->limit_pages = 1;
	pthread_mutex_init(&wb->lock, NULL);
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wb->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&wb->spawn_lock, NULL);
	wb->started = wb->allowed = wb->stop = wb->kick = false;
	atomic_init(&wb->running, false);
	atomic_init(&wb->bg_on, false);
	return 0;
}

/* Picks the next file after `prev` (NULL: the first) that needs a pass and
 * pins it.  Context: files->lock. */
static struct lpc_file *pick(struct lpc_wb *wb, uint64_t now, bool bg)
{
	for (struct lpc_file *f = wb->files->head; f; f = f->next) {
		uint64_t nd = atomic_load_explicit(&f->nrdirty, memory_order_relaxed);
		uint64_t when = atomic_load_explicit(&f->dirtied_when, memory_order_relaxed);

		bool rq = atomic_load_explicit(&f->wb_reclaim, memory_order_relaxed);

		if (f->wb_busy)
			continue;
		if (!nd) {
			if (rq) /* nothing left to write: the hand-off is done */
				atomic_store_explicit(&f->wb_reclaim, false, memory_order_relaxed);
			continue;
		}
		if (bg || rq || now - when >= wb->expire_ns) {
			if (rq)
				atomic_store_explicit(&f->wb_reclaim, false, memory_order_relaxed);
			f->wb_busy++;
			return f;
		}
	}
	return NULL;
}

static void unpin(struct lpc_files *fs, struct lpc_file *f)
{
	pthread_mutex_lock(&fs->lock);
	if (--f->wb_busy == 0)
		pthread_cond_broadcast(&fs->wb_idle);
	pthread_mutex_unlock(&fs->lock);
}

/* One round over the files.  Return: pages it wrote in passes without an
 * error. */
static uint64_t flush_round(struct lpc_wb *wb)
{
	struct lpc_files *fs = wb->files;
	unsigned passes = 0;
	uint64_t wrote = 0;

	/* Each file once per round at most: a pass clears its age. */
	for (;;) {
		uint64_t now = lpc_clock_ns();
		bool bg = atomic_load_explicit(&fs->ndirty, memory_order_relaxed) > wb->bg_pages;
		struct lpc_file *f;

		pthread_mutex_lock(&fs->lock);
		f = pick(wb, now, bg);
		pthread_mutex_unlock(&fs->lock);
		if (!f || ++passes > 64) {
			if (f)
				unpin(fs, f);
			break;
		}
		uint64_t n = 0;

		/* A failing file is no progress: its pages are dirty again,
		 * and the next try waits for the tick or a kick. */
		if (lpc_wb_pass(f, LPC_WB_ASYNC, 0, lpc_file_tcache(f), &n) == 0)
			wrote += n;
		/* Nothing it could write (all locked or in flight): let the
		 * file's age restart so the round moves on. */
		atomic_store_explicit(&f->dirtied_when, lpc_clock_ns(), memory_order_relaxed);
		unpin(fs, f);
	}
	return wrote;
}

static void *flusher_main(void *arg)
{
	struct lpc_wb *wb = arg;
	uint64_t period = wb->expire_ns / 4;

	if (period > 500000000u)
		period = 500000000u;
	if (period < 1000000u)
		period = 1000000u;
	pthread_mutex_lock(&wb->lock);
	while (!wb->stop) {
		struct timespec ts;
		uint64_t until = lpc_clock_ns() + period;

		ts.tv_sec = (time_t)(until / 1000000000u);
		ts.tv_nsec = (long)(until % 1000000000u);
		while (!wb->stop && !wb->kick &&
		       pthread_cond_timedwait(&wb->cond, &wb->lock, &ts) != ETIMEDOUT)
			;
		if (wb->stop)
			break;
		wb->kick = false;
		pthread_mutex_unlock(&wb->lock);
		/* Rounds while writers keep the cache above the background
		 * threshold and rounds make progress; then bg_on goes back to
		 * false before the sleep (seq_cst: a writer that saw it true
		 * skipped its kick, and the re-check of ndirty after the clear
		 * catches what it dirtied; a writer after the clear kicks). */
		for (;;) {
			uint64_t wrote = flush_round(wb);

			atomic_store_explicit(&wb->bg_on, false, memory_order_seq_cst);
			if (!wrote || atomic_load_explicit(&wb->files->ndirty,
							   memory_order_seq_cst) <= wb->bg_pages)
				break;
			atomic_store_explicit(&wb->bg_on, true, memory_order_relaxed);
			pthread_mutex_lock(&wb->lock);
			pthread_cond_broadcast(&wb->cond); /* throttled writers */
			bool stop = wb->stop;

			pthread_mutex_unlock(&wb->lock);
			if (stop)
				break;
		}
		pthread_mutex_lock(&wb->lock);
		pthread_cond_broadcast(&wb->cond); /* throttled writers */
	}
	pthread_mutex_unlock(&wb->lock);
	return NULL;
}

/* F1's start.  Context: spawn_lock held. */
static void flusher_spawn(struct lpc_wb *wb)
{
	if (wb->started || !wb->allowed)
		return;
	/* Named before anyone can look (tests/unit/test_write_flusher.c). */
	if (lpc_thread_spawn(&wb->thread, flusher_main, wb, "lpc-flusher") == 0) {
		wb->started = true;
		atomic_store_explicit(&wb->running, true, memory_order_relaxed);
	}
}

void lpc_wb_start(struct lpc_wb *wb)
{
	pthread_mutex_lock(&wb->spawn_lock);				/* F0 */
	wb->allowed = true;
	/* Only if a trigger of F2 holds already: pages dirty with writeback
	 * by age, or more than the background threshold. */
	int64_t nd = atomic_load_explicit(&wb->files->ndirty, memory_order_relaxed);

	if (nd > 0 && (wb->timed || nd > wb->bg_pages))
		flusher_spawn(wb);
	pthread_mutex_unlock(&wb->spawn_lock);
}

void lpc_wb_need(struct lpc_wb *wb)
{
	if (atomic_load_explicit(&wb->running, memory_order_relaxed))	/* F1 */
		return;
	pthread_mutex_lock(&wb->spawn_lock);
	flusher_spawn(wb);
	pthread_mutex_unlock(&wb->spawn_lock);
}

void lpc_wb_stop(struct lpc_wb *wb)
{
	bool started;

	pthread_mutex_lock(&wb->spawn_lock);				/* F3 */
	wb->allowed = false;
	started = wb->started;
	pthread_mutex_unlock(&wb->spawn_lock);
	if (!started)
		return;
	pthread_mutex_lock(&wb->lock);
	wb->stop = true;
	pthread_cond_broadcast(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
	pthread_join(wb->thread, NULL);
	pthread_mutex_lock(&wb->spawn_lock);
	wb->started = false;
	atomic_store_explicit(&wb->running, false, memory_order_relaxed);
	pthread_mutex_unlock(&wb->spawn_lock);
	pthread_mutex_lock(&wb->lock);
	wb->stop = false;
	pthread_mutex_unlock(&wb->lock);
}

void lpc_wb_destroy(struct lpc_wb *wb)
{
	lpc_wb_stop(wb);
	pthread_cond_destroy(&wb->cond);
	pthread_mutex_destroy(&wb->lock);
	pthread_mutex_destroy(&wb->spawn_lock);
}

void lpc_wb_kick(struct lpc_wb *wb)
{
	lpc_wb_need(wb);						/* F2 */
	pthread_mutex_lock(&wb->lock);
	wb->kick = true;
	pthread_cond_broadcast(&wb->cond);
	pthread_mutex_unlock(&wb->lock);
}

void lpc_wb_throttle(struct lpc_wb *wb, struct lpc_file *f, struct lpc_tcache *t)
{
	struct lpc_files *fs = wb->files;
	uint64_t deadline = lpc_clock_ns() + 1000000000u;
	uint64_t batch = THROTTLE_BYTES / f->pool->page_size;

	if (batch < THROTTLE_MIN)
		batch = THROTTLE_MIN;

	lpc_count(t, LPC_C_THROTTLED);
	lpc_wb_need(wb);						/* F2 */
	while (atomic_load_explicit(&fs->ndirty, memory_order_relaxed) > wb->limit_pages) {
		uint64_t before = atomic_load_explicit(&f->nrdirty, memory_order_relaxed);
		struct timespec ts;
		uint64_t until;

		if (before) {
			lpc_wb_file(f, LPC_WB_ASYNC, batch, t);
			if (atomic_load_explicit(&f->nrdirty, memory_order_relaxed) < before)
				continue;
		}
		if (lpc_clock_ns() >= deadline)
			break;
		until = lpc_clock_ns() + 1000000u;
		ts.tv_sec = (time_t)(until / 1000000000u);
		ts.tv_nsec = (long)(until % 1000000000u);
		pthread_mutex_lock(&wb->lock);
		wb->kick = true;
		pthread_cond_broadcast(&wb->cond);
		pthread_cond_timedwait(&wb->cond, &wb->lock, &ts);
		pthread_mutex_unlock(&wb->lock);
	}
}
