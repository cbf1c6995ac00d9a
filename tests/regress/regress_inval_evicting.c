/* SPDX-License-Identifier: MIT */
/*
 * regress_inval_evicting.c - lpc_invalidate while an evictor holds one of
 * the pages frozen (reclaim/evict.c E4-E6).
 *
 * stress_lookup_race and stress_mixed end with a quiet lpc_invalidate of
 * every file and expected no page left.  About one run in 40 under yield
 * injection left one: ref 0, dbg_state FROZEN, UPTODATE|PUBLISHED, in its
 * slot with its own identity.  It was the background reclaimer's: it had
 * frozen the page at E4 and was preempted before E6 deleted it.  An
 * invalidate's fast path (filemap/remove.c, under the leaf's lock alone,
 * radix.c FD1-FD3) finds the page frozen, so its own freeze fails and it
 * skips the page; since lpc_invalidate keeps emptied leaves (radix.c KL1),
 * a leaf's last page goes that way too, where it used to wait for the
 * index lock, which the evictor holds from E2 to E6.  Nothing is wrong in
 * the library: the page is being removed, a lookup retries until E6 and
 * then misses.  The tests now invalidate again, a bounded number of times,
 * while pages are left; this story is the race, step by step:
 *   1. A file's NP pages are cached (one radix leaf) and put; the
 *      background reclaimer is off (pool.wake NULL: nothing starts it).
 *   2. P evicts one batch (lpc_reclaim_evict) and parks at E6: one page is
 *      frozen in its slot, P holds the file's index lock.
 *   3. The test invalidates the whole file: it must return, without
 *      waiting for P, having dropped every page but the frozen one, which
 *      is still in its slot.
 *   4. P goes on: E6 deletes the page, and the file has no page left; the
 *      page reads again, with its data.
 *
 * Usage: regress_inval_evicting [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"
#include "../common/yield_stop.h"

#define PS 4096u
#define NFRAMES 512u /* the evictor's batch is 64 descriptors from 256 frames on */
#define NP 8u

struct evictor {
	struct lpc_cache *c;
	unsigned evicted;
};

static void *p_main(void *arg)
{
	struct evictor *e = arg;

	tst_stop_me();
	e->evicted = lpc_reclaim_evict(&e->c->reclaim, 1, lpc_tcache(&e->c->pool.owner));
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *p, *frozen = NULL;
	struct evictor e = { 0 };
	unsigned char *scratch = malloc(PS);
	uint64_t file_id, fidx = 0;
	char path[600];
	pthread_t pt;
	int dropped;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(scratch);
	REQUIRE(tst_make_sparse("invalevict", NP * PS, path, sizeof(path)) == 0, "file");
	file_id = tst_file_id(path);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS; /* the fast path: leaf locks */
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL; /* no background reclaimer: P is the only evictor */
	f = tst_file_open(c, path, O_RDONLY);
	for (uint64_t i = 0; i < NP; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "page %" PRIu64, i);
		lpc_page_put(p);
	}

	/* 2. P freezes one page and parks before E6's delete. */
	e.c = c;
	tst_stop_arm(LPC_YP_E6);
	REQUIRE(pthread_create(&pt, NULL, p_main, &e) == 0, "P");
	REQUIRE(tst_stop_wait(), "P never reached E6");
	lpc_rcu_read_lock();
	for (uint64_t i = 0; i < NP; i++) {
		struct lpc_page *q = lpc_radix_lookup(&f->tree, i, NULL);

		if (q && atomic_load(&q->ref) == 0) {
			CHECK(!frozen, "two pages frozen by one parked evictor");
			frozen = q;
			fidx = i;
		}
	}
	lpc_rcu_read_unlock();
	REQUIRE(frozen, "P parked at E6 with no page frozen");

	/* 3. The invalidate skips the frozen page and does not wait for P. */
	dropped = lpc_invalidate(f, 0, 0);
	CHECK_EQ(dropped, (int)NP - 1, "every page but the frozen one dropped");
	CHECK_EQ(lpc_file_nrpages(f), 1u, "the frozen page is still in its slot");
	lpc_rcu_read_lock();
	CHECK(lpc_radix_lookup(&f->tree, fidx, NULL) == frozen, "the frozen page left its slot");
	lpc_rcu_read_unlock();
	/* (Had it waited for P, it would never have returned: P goes on only below.) */

	/* 4. E6 removes it. */
	tst_stop_release();
	pthread_join(pt, NULL);
	tst_stop_disarm();
	lpc_yield_set_hook(NULL);
	CHECK_EQ(e.evicted, 1u, "P evicted the page it froze");
	CHECK_EQ(lpc_file_nrpages(f), 0u, "a page left after E6");
	CHECK_EQ(lpc_page_find(f, fidx, &p), -ENOENT, "the evicted page is found");
	REQUIRE(lpc_page_get(f, fidx, 0, &p) == 0, "the evicted page reads again");
	CHECK(!tst_null_check_page(file_id, fidx, PS, NP * PS, lpc_page_data(p), scratch),
	      "the page read again has the wrong bytes");
	lpc_page_put(p);

	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	free(scratch);
	return tst_finish();
}
