/* SPDX-License-Identifier: MIT */
/*
 * regress_stale_private.c - a speculative getter that loaded a page before
 * it was evicted must never take a reference on its frame once it is a
 * private page (page/alloc.c: the grace period before a private use; MR1
 * lets only the remover's own misses skip it).
 *
 * Since misses may reuse a frame with no grace period (MR1-MR5: ref 0 until
 * M2's release store, after PUBLISHED), the stress tests no longer see a
 * frame freed to the shared list at once (mutant no-grace): a stale getter
 * meets a miss's frame, whose protocol copes.  What the grace period still
 * guards is a private use, whose owner writes ref with plain stores and
 * whose put frees down the private fast path.  The story:
 *   1. Page 0 of a file is cached, nobody holds it; no background reclaimer
 *      (pool.wake NULL).
 *   2. R looks page 0 up and parks at R3: it has loaded the page from its
 *      slot, inside its read section, and not yet tried the reference.
 *   3. The test evicts it (lpc_reclaim_evict: E4-E7, the frame to pending),
 *      empties its own private list, and allocates a private page: the
 *      frame of page 0 must not be the one it gets (it waits on pending for
 *      a grace period, which R's section holds back).
 *   4. R goes on: its R3 fails on the free frame and its lookup misses.
 * With the frame freed at once, step 3 gets it, and R's R3 succeeds on a
 * private page: rule GRACE-PERIOD (after R3: the page is PUBLISHED) fires.
 *
 * Usage: regress_stale_private [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"
#include "../common/yield_stop.h"

#define PS 4096u
#define NFRAMES 512u
#define NPRIV 64u /* more than a thread's private list holds (2 tbatch) */

struct reader {
	struct lpc_file *f;
	int rc;
};

static void *r_main(void *arg)
{
	struct reader *r = arg;
	struct lpc_page *p;

	tst_stop_me();
	r->rc = lpc_page_find(r->f, 0, &p);
	if (r->rc == 0)
		lpc_page_put(p);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *p, *mine, *priv[NPRIV];
	struct lpc_tcache *t;
	struct reader r = { 0 };
	char path[600];
	unsigned npriv = 0, evicted;
	pthread_t rt;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("staleprivate", 8 * PS, path, sizeof(path)) == 0, "file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL; /* no background reclaimer: the test evicts */
	f = tst_file_open(c, path, O_RDONLY);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "page 0");
	lpc_page_put(p);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");

	/* 2. R has page 0's descriptor in hand, before R3. */
	r.f = f;
	tst_stop_arm(LPC_YP_R3);
	REQUIRE(pthread_create(&rt, NULL, r_main, &r) == 0, "R");
	REQUIRE(tst_stop_wait(), "R never reached R3");

	/* 3. Evicted; a private page must be another frame. */
	evicted = lpc_reclaim_evict(&c->reclaim, NFRAMES / 64, t);
	CHECK_EQ(evicted, 1u, "page 0 evicted");
	CHECK_EQ(lpc_file_nrpages(f), 0u, "page 0 still cached");
	while (atomic_load(&t->nfree) && npriv < NPRIV)
		REQUIRE(lpc_page_alloc(c, &priv[npriv++]) == 0, "private page");
	REQUIRE(atomic_load(&t->nfree) == 0, "the private list is not empty");
	REQUIRE(lpc_page_alloc(c, &mine) == 0, "a private page");
	CHECK(mine != p, "a private use got the evicted frame inside a reader's section");

	/* 4. R's try fails on the free frame; it misses. */
	tst_stop_release();
	pthread_join(rt, NULL);
	tst_stop_disarm();
	lpc_yield_set_hook(NULL);
	CHECK_EQ(r.rc, -ENOENT, "R's lookup of the evicted page");

	lpc_page_put(mine);
	for (unsigned i = 0; i < npriv; i++)
		lpc_page_put(priv[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return tst_finish();
}
