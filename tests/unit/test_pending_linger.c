/* SPDX-License-Identifier: MIT */
/*
 * test_pending_linger.c - the frames of a small lpc_invalidate or
 * lpc_truncate on a quiet cache come back to the free list (reclaim/
 * reclaimer.c RL1-RL4, page/alloc.c lpc_page_pending_kick).
 *
 * Before RL1-RL4 the kick woke the reclaimer only once a batch (64) of
 * frames waited on pending, and nothing else moved a shorter list but an
 * allocation that found the free list empty: after invalidating 40 pages of
 * an idle 1024-frame cache, frames_free stayed at 984 for ever
 * (tests/attack_miss att_pending_stuck), against lpc_invalidate(3) ("freed
 * after one grace period by the cache's background reclaimer, which it
 * wakes") and F.1 (frames_free exact when all is quiet).  Checked, with no
 * timing but bounded waits for the reclaimer (a loaded machine only makes
 * it take longer):
 *  - 40 pages invalidated (fewer than a batch): frames_free goes back to
 *    every frame, pending to 0, and nothing is evicted for it;
 *  - ten invalidates of 3 pages each in a row: the same;
 *  - 40 pages cut by lpc_truncate (their last puts leave them pending,
 *    short of call_rcu's batch): the same;
 *  - every frame can be had afterwards;
 *  - after lpc_reclaim_retire (lpc_cache_destroy's, before its RCU
 *    barrier), no kick starts the thread again: an invalidate's linger
 *    kick and a wake leave it unstarted (rule RECLAIM-RETIRED; the mutant
 *    retire-restart, tests/mutants/run.sh, dies of it here).
 *
 * Usage: test_pending_linger [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 1024u

static struct lpc_cache *c;

/* Waits (bounded) until every frame is free; returns the last frames_free. */
static uint64_t wait_all_free(void)
{
	struct lpc_stats s;

	for (int i = 0; i < 10000; i++) {
		lpc_stats(c, &s);
		if (s.frames_free == NFRAMES && !atomic_load(&c->pool.npending))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return s.frames_free;
}

/* The retired case's invalidate, on a thread that then exits: an
 * invalidating thread keeps its frames (page/alloc.c OD2) and its exit puts
 * them on pending with a kick (OD6), which must start nothing after retire. */
static void *invalidate_and_exit(void *arg)
{
	struct lpc_file *f = arg;

	return (void *)(intptr_t)lpc_invalidate(f, 150ull * PS, 3 * PS);
}

static void cache_pages(struct lpc_file *f, unsigned first, unsigned n)
{
	struct lpc_page *p;

	for (unsigned i = first; i < first + n; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_stats s0, s1;
	struct lpc_file *f;
	char path[600];
	int dropped = 0;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("linger", 4 * NFRAMES * PS, path, sizeof(path)) == 0, "file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	f = tst_file_open(c, path, O_RDWR);

	/* 40 pages, one invalidate. */
	cache_pages(f, 0, 40);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.frames_free, (uint64_t)(NFRAMES - 40));
	CHECK_EQ(lpc_invalidate(f, 0, 0), 40, "pages invalidated");
	CHECK_EQ(wait_all_free(), (uint64_t)NFRAMES,
		 "40 invalidated frames never left pending (fewer than a batch)");
	CHECK_EQ(atomic_load(&c->pool.npending), 0u, "pending after the linger");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.evictions - s0.evictions, 0u, "the reclaimer evicted for a short pending list");

	/* Ten small invalidates in a row. */
	cache_pages(f, 100, 30);
	for (unsigned k = 0; k < 10; k++)
		dropped += lpc_invalidate(f, (uint64_t)(100 + 3 * k) * PS, 3 * PS);
	CHECK_EQ(dropped, 30, "pages invalidated 3 at a time");
	CHECK_EQ(wait_all_free(), (uint64_t)NFRAMES, "after ten invalidates of 3 pages");

	/* A truncate of 40 cached pages. */
	cache_pages(f, 200, 40);
	CHECK_EQ(lpc_truncate(f, 200ull * PS), 0, "truncate");
	CHECK_EQ(wait_all_free(), (uint64_t)NFRAMES, "40 truncated frames never left pending");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.evictions - s0.evictions, 0u, "evictions");

	CHECK_EQ(tst_frames_allocatable(c, NFRAMES), NFRAMES, "every frame allocatable");

	/* Retired (as destroy does after its closes): the kicks of later
	 * frees (a thread's exit with the frames its invalidate kept, a wake)
	 * start nothing, and the frames wait on pending. */
	cache_pages(f, 150, 3); /* below the truncate's cut */
	lpc_reclaim_retire(&c->reclaim);
	/* The reclaimer may still evict one of the three before the retire
	 * (under yield injection it did: 2 invalidated, 2 pending), so the
	 * frames on pending are checked against what the invalidate dropped. */
	{
		pthread_t th;
		void *r = NULL;

		CHECK_EQ(pthread_create(&th, NULL, invalidate_and_exit, f), 0);
		CHECK_EQ(pthread_join(th, &r), 0);
		dropped = (int)(intptr_t)r;
		CHECK(dropped >= 1 && dropped <= 3, "%d pages invalidated after retire, want 1-3",
		      dropped);
	}
	lpc_reclaim_wake(&c->reclaim, false);
	pthread_mutex_lock(&c->reclaim.lock);
	CHECK(!c->reclaim.started, "a kick after lpc_reclaim_retire started the reclaimer");
	pthread_mutex_unlock(&c->reclaim.lock);
	CHECK_EQ(atomic_load(&c->pool.npending), (unsigned)dropped,
		 "pending after retire (the exit put them there)");

	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
