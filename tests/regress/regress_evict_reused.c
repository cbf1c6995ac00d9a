/* SPDX-License-Identifier: MIT */
/*
 * regress_evict_reused.c - an evictor between E3 and E4 while the page it
 * checked is removed and its frame cached again, for another file, by the
 * remover's own miss (page/alloc.c MR1; reclaim/evict.c E4).
 *
 * Before a frame could be reused with no grace period, E3's check of the
 * slot under the file's index lock was enough: a fast invalidate (under the
 * leaf's lock alone) could still remove the page before E4, but its frame
 * stayed free until the evictor's read section ended, so E4's freeze failed
 * on ref 0.  With MR1 the remover's next miss takes the frame at once and,
 * once read and put, it is another file's cached page with ref 1: a freeze
 * after E3's check alone succeeds on that live page, E6 deletes whatever the
 * first file's slot holds and E7 frees the frame under its new file (in
 * LPC_DEBUG builds rule EVICT-SLOT fires at E6).  E4-E5 now run under the
 * page's leaf lock after the slot is checked again.  The story:
 *   1. File f has one cached page, p (index 0), nobody holds it; the
 *      background reclaimer is off (pool.wake NULL).
 *   2. P evicts (lpc_reclaim_evict) and parks at E3P: p passed E3, P holds
 *      f's index lock.
 *   3. The test thread invalidates f (fast path: p frozen, deleted, kept on
 *      its deferred list, not covered), empties its private list, and gets
 *      page 5 of file g: the miss takes p's frame (checked) and reads it.
 *   4. P goes on.  It must evict nothing; g's page 5 must still be cached
 *      in the same frame with g's data, and f must hold no page.
 *
 * Usage: regress_evict_reused [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"
#include "../common/yield_stop.h"

#define PS 4096u
#define NFRAMES 512u
#define NPRIV 64u /* more than a thread's private list holds (2 tbatch) */

struct evictor {
	struct lpc_cache *c;
	unsigned evicted;
};

static void *p_main(void *arg)
{
	struct evictor *e = arg;

	tst_stop_me();
	e->evicted = lpc_reclaim_evict(&e->c->reclaim, NFRAMES / 64, lpc_tcache(&e->c->pool.owner));
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f, *g;
	struct lpc_page *p, *q, *priv[NPRIV];
	struct lpc_tcache *t;
	struct evictor e = { 0 };
	unsigned char *scratch = malloc(PS);
	char fpath[600], gpath[600];
	uint64_t g_id;
	unsigned npriv = 0;
	pthread_t pt;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(scratch);
	REQUIRE(tst_make_sparse("evreused-f", 8 * PS, fpath, sizeof(fpath)) == 0, "file f");
	REQUIRE(tst_make_sparse("evreused-g", 8 * PS, gpath, sizeof(gpath)) == 0, "file g");
	g_id = tst_file_id(gpath);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL; /* no background reclaimer: P is the only evictor */
	f = tst_file_open(c, fpath, O_RDONLY);
	g = tst_file_open(c, gpath, O_RDONLY);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "f's page 0");
	lpc_page_put(p);

	/* 2. P checks p at E3 and parks before E4. */
	e.c = c;
	tst_stop_arm(LPC_YP_E3P);
	REQUIRE(pthread_create(&pt, NULL, p_main, &e) == 0, "P");
	REQUIRE(tst_stop_wait(), "P never reached E3P");

	/* 3. p removed by the fast path, its frame taken by a miss on g. */
	CHECK_EQ(lpc_invalidate(f, 0, PS), 1, "invalidate of f's page 0 (P holds the index lock)");
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	CHECK(atomic_load(&t->ndfree) >= 1u, "p's frame kept by the invalidating thread");
	while (atomic_load(&t->nfree) && npriv < NPRIV)
		REQUIRE(lpc_page_alloc(c, &priv[npriv++]) == 0, "private page");
	REQUIRE(atomic_load(&t->nfree) == 0, "the private list is not empty");
	REQUIRE(lpc_page_get(g, 5, 0, &q) == 0, "g's page 5");
	CHECK(q == p, "the miss did not reuse p's frame at once (MR1)");
	lpc_page_put(q);

	/* 4. P goes on: nothing to evict, g's page untouched. */
	tst_stop_release();
	pthread_join(pt, NULL);
	tst_stop_disarm();
	lpc_yield_set_hook(NULL);
	CHECK_EQ(e.evicted, 0u, "P evicted a page (the frame reused for g)");
	CHECK_EQ(lpc_file_nrpages(f), 0u, "f holds a page");
	CHECK_EQ(lpc_file_nrpages(g), 1u, "g's page 5 left the cache");
	REQUIRE(lpc_page_find(g, 5, &q) == 0, "g's page 5 is no longer cached");
	CHECK(q == p, "g's page 5 moved to another frame");
	CHECK(!tst_null_check_page(g_id, 5, PS, 8 * PS, lpc_page_data(q), scratch),
	      "g's page 5 has the wrong bytes");
	lpc_page_put(q);

	for (unsigned i = 0; i < npriv; i++)
		lpc_page_put(priv[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	free(scratch);
	return tst_finish();
}
