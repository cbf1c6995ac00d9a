/* SPDX-License-Identifier: MIT */
/*
 * test_evict_pending.c - where evicted frames go (reclaim/evict.c E7,
 * page/alloc.c lpc_page_free_evicted and lpc_page_pending_drain).
 *
 * Before commit 95aae87 (found by the sqlite benchmark): evicted pages were handed to call_rcu every 64,
 * and liburcu's call_rcu thread sleeps 10 ms after each batch it runs, so
 * the background reclaimer, which waited for them with rcu_barrier, freed a
 * few hundred frames per 10-20 ms and allocators under 8 threads queued
 * behind it (330 us of allocation per miss with a 16 MiB cache).  Now an
 * evicted page stays on pending and the evictor's caller lands the lot with
 * one grace period of its own.  This test checks that contract on a quiet
 * cache (the reclaimer stopped, one thread), with no timing:
 *  - evicting several batches puts every evicted page on pending and hands
 *    none to call_rcu (batches_in_flight stays 0; before, npending was
 *    reset every 64 pages and a batch was in flight);
 *  - lpc_page_pending_drain moves all of them to the shared free list at
 *    once (nfree grows by that many, pending is empty);
 *  - the frames are good: every one can be allocated, and the evicted pages
 *    read again with their data.
 *
 * Usage: test_evict_pending [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 512u /* the evictor's batch is 64 descriptors from 256 frames on */

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_pool *pool;
	struct lpc_tcache *t;
	struct lpc_page *p;
	struct lpc_stats s0, s1;
	unsigned char *scratch = malloc(PS);
	char path[600];
	uint64_t file_id, bad = 0;
	uint32_t pend0, nfree0, pend1, drained;
	unsigned evicted;
	struct lpc_file *file;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(scratch);
	REQUIRE(tst_make_sparse("evpend", 2 * NFRAMES * PS, path, sizeof(path)) == 0, "file");
	file_id = tst_file_id(path);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	/* One thread, no timing: readahead's thread would take frames and
	 * read pages ahead while the counts below are compared. */
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	pool = &c->pool;
	file = tst_file_open(c, path, O_RDONLY);

	/* Fill the cache: pages nobody holds, never referenced again (CLOCK2
	 * evicts them at first sight). */
	for (unsigned i = 0; i < NFRAMES; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	/* Quiet: no reclaimer (joined: its last drain is done), no other
	 * thread; only this one evicts and frees from here on. */
	lpc_reclaim_stop(&c->reclaim);
	t = lpc_tcache(&pool->owner);
	REQUIRE(t != NULL, "thread block");

	pthread_mutex_lock(&pool->free_lock);
	pend0 = pool->npending;
	nfree0 = pool->nfree;
	pthread_mutex_unlock(&pool->free_lock);
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u, "a free batch in flight on a quiet cache");

	lpc_stats(c, &s0);
	evicted = lpc_reclaim_evict(&c->reclaim, 4, t);
	lpc_stats(c, &s1);
	CHECK(evicted >= 128, "evicted only %u pages in 4 batches of a full cache", evicted);
	CHECK_EQ(s1.evictions - s0.evictions, (uint64_t)evicted, "evictions counted");

	/* E7: every evicted page waits on pending; none went to call_rcu. */
	pthread_mutex_lock(&pool->free_lock);
	pend1 = pool->npending;
	pthread_mutex_unlock(&pool->free_lock);
	CHECK_EQ(pend1, pend0 + evicted, "evicted pages not all on pending");
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u,
		 "eviction handed a batch to call_rcu (waits for the call_rcu thread's 10 ms sleep)");

	/* The drain: one grace period, all of them on the free list. */
	drained = lpc_page_pending_drain(pool);
	CHECK_EQ(drained, pend1, "drained");
	pthread_mutex_lock(&pool->free_lock);
	CHECK_EQ(pool->npending, 0u, "pending after the drain");
	CHECK_EQ(pool->nfree, nfree0 + pend1, "free frames after the drain");
	pthread_mutex_unlock(&pool->free_lock);
	CHECK_EQ(lpc_page_pending_drain(pool), 0u, "a second drain found frames");

	/* The evicted pages read again with their data (a miss each, into a
	 * drained frame or one direct reclaim frees). */
	for (unsigned i = 0; i < NFRAMES; i++) {
		if (lpc_page_get(file, i, 0, &p) != 0) {
			bad++;
			continue;
		}
		if (tst_null_check_page(file_id, i, PS, 2 * NFRAMES * PS, lpc_page_data(p), scratch))
			bad++;
		lpc_page_put(p);
	}
	CHECK_EQ(bad, 0, "pages read back after the drain");
	/* Every frame can be had (the cached ones evicted on the way). */
	CHECK_EQ(tst_frames_allocatable(c, NFRAMES), NFRAMES, "every frame allocatable");

	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(c);
	free(scratch);
	return tst_finish();
}
