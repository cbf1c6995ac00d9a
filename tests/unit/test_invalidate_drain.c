/* SPDX-License-Identifier: MIT */
/*
 * test_invalidate_drain.c - where lpc_invalidate's frames go (filemap/
 * remove.c, page/alloc.c lpc_page_free_removed_chain and
 * lpc_page_pending_kick, reclaim/reclaimer.c refill).
 *
 * Seed 002's loop (lpcbench fault) invalidates a range and reads it again.
 * Before, each invalidated page took free_lock on its own and every 64 went
 * to call_rcu (a malloc, and liburcu's thread that sleeps 10 ms after each
 * batch), so the free list ran low and the reclaimer, woken by the
 * allocations, evicted the pages the loop still cached before its drain
 * landed the invalidated ones.  Now a gang's frames go to pending in one
 * chain, the invalidate wakes the reclaimer once a batch waits there, and
 * the reclaimer's turn counts pending before it evicts.  Checked, with no
 * timing but a bounded wait for the reclaimer's drain:
 *  - an invalidate of many pages keeps some for the invalidating thread's
 *    next misses (page/alloc.c OD1-OD6: after a grace period of its own)
 *    and puts the rest on pending (npending grows by what it did not keep),
 *    and hands none to call_rcu (batches_in_flight 0);
 *  - the woken reclaimer lands them on the free list (frames_free goes back
 *    to every frame but the cached ones) and evicts nothing to do it;
 *  - the pages read again byte for byte, and every frame can be had.
 *
 * Usage: test_invalidate_drain [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 1024u
#define NPAGES 512u /* cached, then invalidated: well past a batch (64) */
#define KEEP 64u    /* cached pages outside the invalidated range */

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_pool *pool;
	struct lpc_page *p;
	struct lpc_stats s0, s1;
	unsigned char *scratch = malloc(PS);
	char path[600];
	uint64_t file_id, bad = 0;
	uint32_t pend0, pend1, kept;
	struct lpc_file *file;
	int dropped;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(scratch);
	REQUIRE(tst_make_sparse("invdrain", 2 * NFRAMES * PS, path, sizeof(path)) == 0, "file");
	file_id = tst_file_id(path);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	pool = &c->pool;
	file = tst_file_open(c, path, O_RDONLY);

	for (unsigned i = 0; i < NPAGES + KEEP; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u, "a free batch in flight before");
	pthread_mutex_lock(&pool->free_lock);
	pend0 = pool->npending;
	pthread_mutex_unlock(&pool->free_lock);

	lpc_stats(c, &s0);
	/* The reclaimer runs: hold it off the pending list until the counts
	 * below are read (its drain takes reclaim_lock). */
	pthread_mutex_lock(&pool->reclaim_lock);
	dropped = lpc_invalidate(file, 0, (uint64_t)NPAGES * PS);
	CHECK_EQ(dropped, (int)NPAGES, "pages invalidated");
	pthread_mutex_lock(&pool->free_lock);
	pend1 = pool->npending;
	pthread_mutex_unlock(&pool->free_lock);
	/* Kept by this thread for its next misses (page/alloc.c OD1-OD2) up
	 * to half the frames; the rest on pending. */
	kept = atomic_load(&lpc_tcache(&pool->owner)->ndfree);
	CHECK_EQ(pend1 + kept, pend0 + NPAGES, "invalidated pages neither kept nor pending");
	CHECK(kept > 0, "the invalidating thread kept none of its frames");
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u,
		 "invalidate handed a batch to call_rcu (waits for the call_rcu thread's 10 ms sleep)");
	pthread_mutex_unlock(&pool->reclaim_lock);

	/* The kick woke the reclaimer for what went to pending: its drain
	 * lands them (bounded wait, not a timing: a loaded machine only makes
	 * it take longer); frames_free counts the kept ones. */
	for (int i = 0; i < 10000; i++) {
		lpc_stats(c, &s1);
		if (s1.frames_free == NFRAMES - KEEP)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	CHECK_EQ(s1.frames_free, (uint64_t)(NFRAMES - KEEP),
		 "the reclaimer did not drain the invalidated frames");
	CHECK_EQ(s1.evictions - s0.evictions, 0u, "the reclaimer evicted cached pages to drain");
	CHECK_EQ(s1.invalidated - s0.invalidated, (uint64_t)NPAGES, "invalidated counted");

	for (unsigned i = 0; i < NPAGES + KEEP; i++) {
		if (lpc_page_get(file, i, 0, &p) != 0) {
			bad++;
			continue;
		}
		if (tst_null_check_page(file_id, i, PS, 2 * NFRAMES * PS, lpc_page_data(p), scratch))
			bad++;
		lpc_page_put(p);
	}
	CHECK_EQ(bad, 0, "pages read back after the drain");
	CHECK_EQ(tst_frames_allocatable(c, NFRAMES), NFRAMES, "every frame allocatable");

	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(c);
	free(scratch);
	return tst_finish();
}
