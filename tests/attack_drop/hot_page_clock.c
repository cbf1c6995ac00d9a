/* SPDX-License-Identifier: MIT */
/*
 * hot_page_clock.c - "Pages of the range that others use stay: a hit on
 * them set REFERENCED" (readahead.c, the drop-behind comment) under each
 * reclaim policy.
 *
 * A scan of 4 KiB preads over a file 4x a cache of 512 frames (null
 * backend, 64-page windows) passes 16 pages that another user then uses
 * ten times each (lpc_page_get: REFERENCED), just after the scan read them
 * and before its drop reaches them (test_drop_behind's t_others_kept does
 * the same with one use).  Then the clock hand sweeps once - as the other
 * readers' misses make it do at any time (lpc_reclaim_evict for a whole
 * turn of the frames) - and the scan goes on four windows past them.
 *
 * LPC_RECLAIM_CLOCK2: the sweep promotes the hot pages (ACTIVE): the drop keeps them.
 * LPC_RECLAIM_CLOCK without drop-behind: the sweep clears REFERENCED and keeps them (a
 * second chance); they stay until the next sweep finds them unused.
 * LPC_RECLAIM_CLOCK with drop-behind: the sweep clears REFERENCED, the pages still carry
 * ONCE from the scan's first use, nothing else protects them, and the drop
 * behind the scan removes pages used ten times by someone else.
 *
 * Exit: 1 if a policy with drop-behind on loses hot pages that the same
 * policy with it off keeps (the defect), else 0.
 */
#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "filemap/filemap.h"
#include "reclaim/reclaim.h"

#define PS 4096u
#define FRAMES 512u
#define MAXW 64u
#define HOT_FIRST 900u
#define NHOT 16u
/* Where the scan stops: four windows past the hot pages, far enough for
 * its drop to have passed them, near enough that without drop-behind the
 * scan's new pages still fit in the frames the sweep freed (no second turn
 * of the hand). */
#define STOP (HOT_FIRST + NHOT + 4 + 4 * MAXW)

static int nfile;

static unsigned run(int policy, bool drop)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f;
	struct lpc_tcache *t;
	struct lpc_stats s;
	char path[600], name[32];
	unsigned char buf[PS];
	unsigned kept = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_max_kb = MAXW * PS / 1024;
	cfg.reclaim_policy = policy;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	c->files.ra_drop = drop; /* before the first open, as test_drop_behind */
	snprintf(name, sizeof(name), "hot%d", nfile++);
	REQUIRE(tst_make_sparse(name, (uint64_t)4 * FRAMES * PS, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t);
	for (uint64_t i = 0; i < STOP; i++) {
		REQUIRE(lpc_pread(f, buf, PS, i * PS) == PS);
		if (i == HOT_FIRST + NHOT + 4) {
			struct lpc_page *p;

			/* Another user's hot pages: ten uses each. */
			for (int k = 0; k < 10; k++)
				for (uint64_t h = HOT_FIRST; h < HOT_FIRST + NHOT; h++) {
					REQUIRE(lpc_page_get(f, h, 0, &p) == 0);
					lpc_page_put(p);
				}
			/* One turn of the hand. */
			lpc_reclaim_evict(&c->reclaim, c->pool.nframes / c->reclaim.batch + 1, t);
		}
	}
	lpc_ra_quiesce(f);
	for (uint64_t h = HOT_FIRST; h < HOT_FIRST + NHOT; h++) {
		struct lpc_page *p;

		lpc_rcu_read_lock();
		p = lpc_radix_lookup(&f->tree, h, NULL);
		kept += p && (lpc_page_flags(p) & LPC_PG_UPTODATE);
		lpc_rcu_read_unlock();
	}
	lpc_stats(c, &s);
	printf("  %-18s drop-behind %-3s: %2u of %u hot pages cached after the scan "
	       "(ra_dropped %" PRIu64 ", evictions %" PRIu64 ")\n",
	       policy == LPC_RECLAIM_CLOCK ? "LPC_RECLAIM_CLOCK" : "LPC_RECLAIM_CLOCK2", drop ? "on" : "off", kept, NHOT,
	       s.ra_dropped, s.evictions);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return kept;
}

int main(int argc, char **argv)
{
	int defect = 0;

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (int policy = LPC_RECLAIM_CLOCK2; policy <= LPC_RECLAIM_CLOCK; policy++) {
		unsigned on = run(policy, true), off = run(policy, false);

		if (on < off) {
			printf("DEFECT under %s: drop-behind took %u pages used ten times by "
			       "another user\n",
			       policy == LPC_RECLAIM_CLOCK ? "LPC_RECLAIM_CLOCK" : "LPC_RECLAIM_CLOCK2", off - on);
			defect = 1;
		}
	}
	tst_finish();
	return defect;
}
