/* SPDX-License-Identifier: MIT */
/*
 * loop_policy.c - the loop detection of drop-behind under each reclaim
 * policy.  test_drop_behind's t_loop, run under LPC_RECLAIM_CLOCK2 (the
 * default) and LPC_RECLAIM_CLOCK, with drop-behind on and off: a loop of
 * 4 KiB preads over a quarter of a cache of 2048 frames, inside a file 4x
 * the cache (null backend), read 6 times.  Nothing else runs, so with
 * drop-behind off every later pass is read from the cache.
 *
 * The commit says: "A stream that re-reads pages a drop took within a
 * cache's turnover (a loop over part of a big file) stops dropping".  The
 * loop is seen through the shadow entries a drop leaves
 * (lpc_pool_ws_dropped) - and the shadow table exists only under LPC_RECLAIM_CLOCK2
 * (reclaim/reclaimer.c: lpc_pool_ws_init(..., policy == LPC_RECLAIM_CLOCK2)).  Under
 * CLOCK no refault is ever seen, so the loop is dropped and read from the
 * device on every pass, forever, where without drop-behind it stays cached.
 *
 * Exit: 1 if some policy's later passes read the loop again with
 * drop-behind on while they read nothing with it off (the defect), else 0.
 */
#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "filemap/filemap.h"

#define PS 4096u
#define FRAMES 2048u
#define MAXW 64u

static int nfile;

static uint64_t run(int policy, bool drop, uint64_t reads[6])
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f;
	struct lpc_stats before, after;
	char path[600], name[32];
	unsigned char buf[PS];
	const uint64_t first = 1000, n = 3 * FRAMES / 4;
	uint64_t later = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_max_kb = MAXW * PS / 1024;
	cfg.reclaim_policy = policy;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	c->files.ra_drop = drop; /* before the first open, as test_drop_behind */
	snprintf(name, sizeof(name), "loop%d", nfile++);
	REQUIRE(tst_make_sparse(name, (uint64_t)4 * FRAMES * PS, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	for (int pass = 0; pass < 6; pass++) {
		lpc_ra_quiesce(f);
		lpc_stats(c, &before);
		for (uint64_t i = first; i < first + n; i++)
			REQUIRE(lpc_pread(f, buf, PS, i * PS) == PS);
		lpc_ra_quiesce(f);
		lpc_stats(c, &after);
		reads[pass] = after.read_pages - before.read_pages;
		printf("    pass %d: %4" PRIu64 " pages read, %4" PRIu64 " dropped, %4" PRIu64
		       " evicted\n",
		       pass, reads[pass], after.ra_dropped - before.ra_dropped, after.evictions - before.evictions);
		if (pass >= 4)
			later += reads[pass];
	}
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return later;
}

int main(int argc, char **argv)
{
	static const struct {
		int policy;
		const char *name;
	} pol[] = { { LPC_RECLAIM_CLOCK2, "LPC_RECLAIM_CLOCK2" }, { LPC_RECLAIM_CLOCK, "LPC_RECLAIM_CLOCK" } };
	int defect = 0;

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (unsigned k = 0; k < 2; k++) {
		uint64_t r_on[6], r_off[6], on, off;

		printf("%s, drop-behind on:\n", pol[k].name);
		on = run(pol[k].policy, true, r_on);
		printf("%s, drop-behind off:\n", pol[k].name);
		off = run(pol[k].policy, false, r_off);
		printf("%s: passes 4-5 read %" PRIu64 " pages with drop-behind, %" PRIu64
		       " without\n",
		       pol[k].name, on, off);
		if (off <= MAXW && on >= FRAMES / 4) {
			printf("DEFECT under %s: the loop is dropped and read again on every pass "
			       "(loop detection never fires)\n",
			       pol[k].name);
			defect = 1;
		}
	}
	tst_finish();
	return defect;
}
