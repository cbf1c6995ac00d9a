/* SPDX-License-Identifier: MIT */
/*
 * test_workingset.c - refaults and CLOCK2's active target (page/
 * workingset.h, reclaim/reclaim.h LPC_ACTIVE_MAX_PCT):
 *  1. the shadow table: a refault is seen once, moves the target down (a
 *     page that was never active, missed again within as many evictions
 *     as there are active pages) or up (one that was, WORKINGSET, within
 *     as many as there are inactive pages), and is weighted by the recent
 *     evictions of the other kind; a shadow further back, or of another
 *     page, is no refault; the target never leaves its bounds;
 *  2. the bounds: the upper one from the frames, readahead's window and the
 *     free watermark; a cache starts there; CLOCK keeps no shadows;
 *  3. a hot set larger than half the cache stays cached while a scan four
 *     times the cache passes (the start high: with half the frames as a
 *     fixed target, a third of it went);
 *  4. an idle hot set of 85 % of the cache gives way to a loop over 30 % of
 *     it within a few passes (refaults bring the target down: with a fixed
 *     90 % target the loop never hit, tests/attack_target).
 *  5. a one-time scan of 128 KiB lpc_pread calls promotes none of its pages
 *     (a demand run's later pages are FRESH until the call uses them);
 *  6. 4 again with the loop read through readahead (its pages refault too).
 * 3 to 6 run one thread over the null backend, readahead off unless said, with the
 * background reclaimer running, so only its timing varies; the bounds
 * asserted have wide margins (the figures are printed).
 *
 * Usage: test_workingset [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "page/workingset.h"
#include "reclaim/reclaim.h"

#define PS 4096u
#if defined(__SANITIZE_THREAD__)
#define NFRAMES 4096u  /* 16 MiB, within the watchdog under TSan: 87.5 % */
#else
#define NFRAMES 16384u /* 64 MiB: the upper bound is 90 % here */
#endif

static void test_table(void)
{
	static struct lpc_pool pool; /* nframes, nactive and ws alone are used */
	struct lpc_workingset *ws = &pool.ws;
	uint64_t a = lpc_pool_ws_key(lpc_pool_ws_file_id(1, 2), 7);
	uint64_t b = lpc_pool_ws_key(lpc_pool_ws_file_id(1, 2), 8);

	pool.nframes = 64;
	atomic_store(&pool.nactive, 40); /* 24 inactive */
	REQUIRE(lpc_pool_ws_init(ws, 64, true) == 0, "ws init");
	lpc_pool_ws_set_bounds(ws, 10, 50);
	CHECK_EQ(lpc_pool_ws_target(ws), 50u, "starts at the upper bound");
	CHECK(!lpc_pool_ws_refault(&pool, a), "no shadow yet: no refault");

	/* A page never active, evicted and missed again: down by 1 (no
	 * eviction counted yet: the weight's floor). */
	lpc_pool_ws_evicted(ws, a, false, lpc_pool_ws_clock(ws));
	lpc_pool_ws_advance(ws, 1, 0);
	CHECK(!lpc_pool_ws_refault(&pool, b) || (a & ws->mask) != (b & ws->mask),
	      "another page's miss is no refault");
	CHECK(lpc_pool_ws_refault(&pool, a), "a refault");
	CHECK_EQ(lpc_pool_ws_target(ws), 49u, "down by one");
	CHECK(!lpc_pool_ws_refault(&pool, a), "one eviction, one refault");
	CHECK_EQ((uint64_t)ws->refaults, 1u, "refaults counted");

	/* An active page's: up, weighted by the other kind's evictions (3 of
	 * 4 recent evictions were never active: weight 3). */
	lpc_pool_ws_advance(ws, 3, 1);
	lpc_pool_ws_evicted(ws, a, true, lpc_pool_ws_clock(ws));
	CHECK(lpc_pool_ws_refault(&pool, a), "an active page's refault");
	CHECK_EQ(lpc_pool_ws_target(ws), 50u, "up by 3, clamped at the upper bound");
	CHECK_EQ((uint64_t)ws->refaults_active, 1u, "counted as an active page's");

	/* Too far back: a page never active, more evictions since than
	 * active pages (40); one that had been, more than inactive pages
	 * (24), though fewer than active ones. */
	lpc_pool_ws_evicted(ws, a, false, lpc_pool_ws_clock(ws));
	lpc_pool_ws_advance(ws, 41, 0);
	CHECK(!lpc_pool_ws_refault(&pool, a), "past the active pages' span: no refault");
	lpc_pool_ws_evicted(ws, a, false, lpc_pool_ws_clock(ws));
	lpc_pool_ws_advance(ws, 40, 0);
	CHECK(lpc_pool_ws_refault(&pool, a), "within it: a refault");
	lpc_pool_ws_evicted(ws, a, true, lpc_pool_ws_clock(ws));
	lpc_pool_ws_advance(ws, 25, 0);
	CHECK(!lpc_pool_ws_refault(&pool, a), "an active page's, past the inactive pages' span");
	CHECK_EQ((uint64_t)ws->refaults, 3u, "those two were not counted");

	/* A page a stream dropped (filemap/readahead.c A5): a refault within
	 * a cache's worth of turnover (64) whatever the split, said apart,
	 * not counted, the target left alone. */
	{
		uint32_t target = lpc_pool_ws_target(ws);
		uint64_t refaults = ws->refaults;

		lpc_pool_ws_dropped(ws, a, lpc_pool_ws_clock(ws));
		lpc_pool_ws_advance(ws, 60, 0);
		CHECK_EQ(lpc_pool_ws_refault(&pool, a), LPC_WS_REFAULT_DROPPED,
			 "a dropped page, 60 turned over since (more than the 40 active)");
		CHECK_EQ(lpc_pool_ws_target(ws), target, "a dropped page's refault moves nothing");
		CHECK_EQ((uint64_t)ws->refaults, refaults, "nor is counted");
		lpc_pool_ws_dropped(ws, a, lpc_pool_ws_clock(ws));
		lpc_pool_ws_advance(ws, 65, 0);
		CHECK_EQ(lpc_pool_ws_refault(&pool, a), LPC_WS_NO_REFAULT,
			 "a dropped page, past a cache's worth");
	}

	/* The lower bound holds whatever the weights. */
	for (int i = 0; i < 200; i++)
		lpc_pool_ws_nudge(ws, false);
	CHECK_EQ(lpc_pool_ws_target(ws), 10u, "clamped at the lower bound");
	lpc_pool_ws_destroy(ws);

	/* No table: never a refault, whatever was evicted. */
	REQUIRE(lpc_pool_ws_init(ws, 64, false) == 0, "ws init without table");
	lpc_pool_ws_evicted(ws, a, false, 0);
	CHECK(!lpc_pool_ws_refault(&pool, a), "no table: no refault");
	lpc_pool_ws_destroy(ws);
}

/*
 * A file's eight neighbouring pages keep their shadows in the eight slots
 * of one line of the table (lpc_pool_ws_key: a scan's evictions and
 * readahead's lookups take one cache miss per group), in an order of the
 * group's own, so that pages that all have the same place in their groups
 * (one-page files, a stride of 8 pages) still spread over every slot; and
 * in a table smaller than a group, where two of them share a slot, one's
 * shadow is still not the other's refault.
 */
static void test_groups(void)
{
	static struct lpc_pool pool;
	struct lpc_workingset *ws = &pool.ws;
	uint64_t id = lpc_pool_ws_file_id(3, 4);
	unsigned places = 0, strided = 0, shared;

	for (uint64_t g = 0; g < 4; g++) {
		uint64_t line = lpc_pool_ws_key(id, 8 * g) & ~LPC_WS_GROUP_MASK;
		unsigned seen = 0;

		for (uint64_t i = 0; i < 8; i++) {
			uint64_t k = lpc_pool_ws_key(id, 8 * g + i);

			CHECK_EQ(k & ~LPC_WS_GROUP_MASK, line, "a neighbour shares its group's line");
			seen |= 1u << (k & LPC_WS_GROUP_MASK);
		}
		CHECK_EQ(seen, 0xffu, "the eight neighbours take the line's eight slots");
		CHECK(lpc_pool_ws_key(id, 8 * g + 8) >> LPC_WS_GROUP_SHIFT !=
			      line >> LPC_WS_GROUP_SHIFT,
		      "the next group is hashed apart");
	}
	CHECK(lpc_pool_ws_key(lpc_pool_ws_file_id(3, 5), 0) != lpc_pool_ws_key(id, 0),
	      "another file's page 0 is another key");
	/* Page 0 of 64 one-page files, and every eighth page of one file:
	 * every place of a line is used, not one (tests/attack_runcap). */
	for (uint64_t n = 0; n < 64; n++) {
		places |= 1u << (lpc_pool_ws_key(lpc_pool_ws_file_id(9, n), 0) & LPC_WS_GROUP_MASK);
		strided |= 1u << (lpc_pool_ws_key(id, 8 * n) & LPC_WS_GROUP_MASK);
	}
	CHECK_EQ(places, 0xffu, "one-page files spread over a line's eight slots");
	CHECK_EQ(strided, 0xffu, "a stride of eight pages spreads over a line's eight slots");

	pool.nframes = 4;
	atomic_store(&pool.nactive, 2);
	REQUIRE(lpc_pool_ws_init(ws, 4, true) == 0, "ws init");
	CHECK_EQ(ws->mask, 3u, "a table of four slots");
	lpc_pool_ws_set_bounds(ws, 1, 3);
	shared = 0;
	for (uint64_t i = 1; i < 8; i++) {
		uint64_t a = lpc_pool_ws_key(id, 0), b = lpc_pool_ws_key(id, i);

		if ((a & ws->mask) != (b & ws->mask))
			continue; /* only the pair that shares page 0's slot */
		lpc_pool_ws_evicted(ws, a, false, lpc_pool_ws_clock(ws));
		lpc_pool_ws_advance(ws, 1, 0);
		CHECK(!lpc_pool_ws_refault(&pool, b),
		      "page %" PRIu64 " shares page 0's slot, not its fingerprint", i);
		CHECK(lpc_pool_ws_refault(&pool, a), "page 0's own refault");
		shared++;
	}
	CHECK_EQ(shared, 1u, "one page of the group shares page 0's slot of four");
	lpc_pool_ws_destroy(ws);
}

static void test_bounds(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;

	/* 90 % of the frames, unless the inactive side must hold four of
	 * readahead's windows or twice `high`; never under half. */
	CHECK_EQ(lpc_reclaim_active_max(16384, 0, 512), 14746u, "90 %%");
	CHECK_EQ(lpc_reclaim_active_max(65536, 2048, 2048), 57344u, "four 8 MiB windows");
	CHECK_EQ(lpc_reclaim_active_max(1024, 0, 256), 512u, "twice high, never under half");
	CHECK_EQ(lpc_reclaim_active_max(64, 64, 16), 32u, "never under half");

	lpc_config_init(&cfg);
	cfg.cache_bytes = (uint64_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	CHECK(c->pool.ws.shadow != NULL, "CLOCK2 keeps shadows");
	CHECK_EQ(lpc_pool_ws_target(&c->pool.ws), c->pool.ws.max, "the target starts at its upper bound");
	CHECK_EQ(c->pool.ws.max,
		 lpc_reclaim_active_max(NFRAMES, c->files.ra_max, c->reclaim.high), "upper bound");
	CHECK_EQ(c->pool.ws.min, NFRAMES * LPC_ACTIVE_MIN_PCT / 100, "lower bound");
	tst_cache_destroy(c);
	cfg.reclaim_policy = LPC_RECLAIM_CLOCK;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	CHECK(c->pool.ws.shadow == NULL, "CLOCK keeps no shadows");
	tst_cache_destroy(c);
}

/* ra_max_kb: 0 readahead off, else on with windows up to that. */
static struct lpc_cache *cache_null_ra(uint32_t ra_max_kb)
{
	struct lpc_config cfg;
	struct lpc_cache *c;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (uint64_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	if (ra_max_kb)
		cfg.readahead_max_kb = ra_max_kb;
	else
		cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	return c;
}

static struct lpc_cache *cache_null(void)
{
	return cache_null_ra(0);
}

static void get(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(f, index, 0, &p) == 0, "get %" PRIu64, index);
	lpc_page_put(p);
}

/* Whether index is cached (a lookup that counts as a hit), then got. */
static bool touch(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;
	int rc = lpc_page_find(f, index, &p);

	if (rc == 0) {
		lpc_page_put(p);
		return true;
	}
	REQUIRE(rc == -ENOENT || rc == -EAGAIN, "find %" PRIu64 " = %d", index, rc);
	get(f, index);
	return false;
}

/* 3: hot set H = 70 % of the cache, uniform; four scanned pages per hot
 * read, over pages [8N, 12N) again and again. */
static void test_scan_keeps_hot_set(const char *path)
{
	const uint64_t H = NFRAMES * 7 / 10;
	struct lpc_cache *c = cache_null();
	struct lpc_file *f = tst_file_open(c, path, O_RDONLY);
	uint64_t rng = tst_seed, scan = 8 * NFRAMES, hits = 0, reads = 0;

	/* Direct reclaim only: this thread's allocations evict, so the run is
	 * the same for a seed whatever the build's speed (with the background
	 * reclaimer, an ASan build once kept 0.856). */
	lpc_reclaim_retire(&c->reclaim);

	for (uint64_t i = 0; i < 30 * H; i++) {
		bool hit = touch(f, tst_rnd(&rng) % H);

		if (i >= 25 * H) {
			reads++;
			hits += hit;
		}
		for (int k = 0; k < 4; k++) {
			get(f, scan++);
			if (scan == 12 * NFRAMES)
				scan = 8 * NFRAMES;
		}
	}
	printf("scan beside a hot set of 70 %%: hit ratio %.3f; target %u of [%u, %u], "
	       "refaults %" PRIu64 "\n",
	       (double)hits / (double)reads, lpc_pool_ws_target(&c->pool.ws), c->pool.ws.min,
	       c->pool.ws.max, (uint64_t)c->pool.ws.refaults);
	/* Half the frames as a fixed target: about 0.75 (all of the active
	 * side and a share of the inactive one). */
	CHECK((double)hits / (double)reads >= 0.9, "the hot set stays cached beside a scan: %.3f",
	      (double)hits / (double)reads);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

/* 4: A = 85 % of the cache hit until promoted, then idle; a loop over
 * B = 30 % of it. */
static void test_idle_hot_set_gives_way(const char *path)
{
	const uint64_t A = NFRAMES * 85 / 100, B = NFRAMES * 3 / 10;
	struct lpc_cache *c = cache_null();
	struct lpc_file *f = tst_file_open(c, path, O_RDONLY);
	uint64_t rng = tst_seed ^ 0x77, cold = 4 * NFRAMES;
	double last = 0;

	for (int round = 0; round < 8; round++)
		for (uint64_t k = 0; k < 2 * A; k++) {
			get(f, tst_rnd(&rng) % A);
			if (k % 4 == 0) {
				get(f, cold++);
				if (cold == 8 * NFRAMES)
					cold = 4 * NFRAMES;
			}
		}
	for (int pass = 0; pass < 8; pass++) {
		uint64_t hits = 0;

		for (uint64_t i = 0; i < B; i++)
			hits += touch(f, 2 * NFRAMES + i);
		last = (double)hits / (double)B;
		printf("loop over 30 %% beside an idle 85 %%: pass %d hit ratio %.3f, target %u\n",
		       pass, last, lpc_pool_ws_target(&c->pool.ws));
	}
	CHECK(last >= 0.95, "the idle hot set gave way to the loop: last pass %.3f", last);
	CHECK(lpc_pool_ws_target(&c->pool.ws) < c->pool.ws.max, "refaults moved the target down");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

/* 5: one sequential pass of 128 KiB lpc_pread calls over 4x the cache,
 * readahead off and on: no page is read twice, so none is promoted (a
 * demand run's later pages are FRESH until the call's own lookup). */
static void test_pread_scan_promotes_nothing(const char *path)
{
	static char buf[128 << 10];

	for (int ra = 0; ra < 2; ra++) {
		struct lpc_cache *c = cache_null_ra(ra ? 512 : 0);
		struct lpc_file *f = tst_file_open(c, path, O_RDONLY);

		for (uint64_t off = 0; off < 4ull * NFRAMES * PS; off += sizeof(buf))
			REQUIRE(lpc_pread(f, buf, sizeof(buf), off) == (ssize_t)sizeof(buf),
				"pread at %" PRIu64, off);
		CHECK_EQ(atomic_load(&c->pool.nactive), 0u,
			 "a one-time pread scan (readahead %s) promoted none of its pages",
			 ra ? "on" : "off");
		/* Calls of 1000 bytes: each page is read by four or five calls
		 * in a row, the first of which marks it at most (filemap/read.c,
		 * "Continuation"). */
		for (uint64_t off = 4ull * NFRAMES * PS; off < 6ull * NFRAMES * PS; off += 1000)
			REQUIRE(lpc_pread(f, buf, 1000, off) == 1000, "pread at %" PRIu64, off);
		CHECK_EQ(atomic_load(&c->pool.nactive), 0u,
			 "a one-time scan in 1000-byte calls (readahead %s) promoted none of its pages",
			 ra ? "on" : "off");
		CHECK_EQ(lpc_file_close(f), 0);
		tst_cache_destroy(c);
	}
}

/* The flags of page index of f, without a lookup that would mark it. */
static uint32_t flags_of(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;
	uint32_t fl;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	fl = p ? lpc_page_flags(p) : 0;
	lpc_rcu_read_unlock();
	REQUIRE(p, "page %" PRIu64 " cached", index);
	return fl;
}

/* 5b: a read of part of a page that goes on where the thread's last call
 * stopped does not mark it; one after a call elsewhere does. */
static void test_subpage_rereads_mark(const char *path)
{
	struct lpc_cache *c = cache_null();
	struct lpc_file *f = tst_file_open(c, path, O_RDONLY);
	char buf[100];

	REQUIRE(lpc_pread(f, buf, 100, 5 * PS) == 100, "read X");
	REQUIRE(lpc_pread(f, buf, 100, 5 * PS + 100) == 100, "read on in X");
	REQUIRE(lpc_pread(f, buf, 100, 5 * PS + 200) == 100, "read on in X");
	CHECK(!(flags_of(f, 5) & LPC_PG_REFERENCED), "X read in a row: not marked");
	REQUIRE(lpc_pread(f, buf, 100, 9 * PS) == 100, "read Y");
	REQUIRE(lpc_pread(f, buf, 100, 5 * PS + 300) == 100, "read X again");
	CHECK(flags_of(f, 5) & LPC_PG_REFERENCED, "X read again after Y: marked");
	/* A call that ends on a page boundary forgets where the last one
	 * stopped. */
	REQUIRE(lpc_pread(f, buf, 100, 11 * PS) == 100, "read Z");
	REQUIRE(lpc_pread(f, buf, 100, 14 * PS - 100) == 100, "read W's last bytes");
	REQUIRE(lpc_pread(f, buf, 100, 11 * PS + 100) == 100, "read Z again");
	CHECK(flags_of(f, 11) & LPC_PG_REFERENCED, "Z read again after a call elsewhere: marked");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

/* 6: as 4, the loop read by 128 KiB lpc_pread calls through readahead
 * (windows of 512 KiB, so that the upper bound is 90 %): the pages read
 * ahead refault too. */
static void test_idle_hot_set_gives_way_ra(const char *path)
{
	const uint64_t A = NFRAMES * 85 / 100, B = NFRAMES * 3 / 10;
	struct lpc_cache *c = cache_null_ra(512);
	struct lpc_file *f = tst_file_open(c, path, O_RDONLY);
	uint64_t rng = tst_seed ^ 0x99, cold = 4 * NFRAMES;
	static char buf[128 << 10];
	struct lpc_stats s0, s1;

	for (int round = 0; round < 8; round++)
		for (uint64_t k = 0; k < 2 * A; k++) {
			get(f, tst_rnd(&rng) % A);
			if (k % 4 == 0) {
				get(f, cold++);
				if (cold == 8 * NFRAMES)
					cold = 4 * NFRAMES;
			}
		}
	for (int pass = 0; pass < 8; pass++) {
		lpc_stats(c, &s0);
		for (uint64_t off = 2ull * NFRAMES * PS; off < (2 * NFRAMES + B) * PS; off += sizeof(buf))
			REQUIRE(lpc_pread(f, buf, sizeof(buf), off) == (ssize_t)sizeof(buf),
				"pread at %" PRIu64, off);
		lpc_stats(c, &s1);
		printf("readahead loop over 30 %% beside an idle 85 %%: pass %d read %" PRIu64
		       " pages, dropped %" PRIu64 ", evicted %" PRIu64 ", target %u\n",
		       pass, s1.read_pages - s0.read_pages, s1.ra_dropped - s0.ra_dropped,
		       s1.evictions - s0.evictions, lpc_pool_ws_target(&c->pool.ws));
	}
	CHECK(s1.read_pages - s0.read_pages <= B / 20,
	      "the idle hot set gave way to the loop read ahead: last pass read %" PRIu64 " of %" PRIu64,
	      s1.read_pages - s0.read_pages, B);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	char path[600];

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	test_table();
	test_groups();
	test_bounds();
	REQUIRE(tst_make_sparse("ws", 12ull * NFRAMES * PS, path, sizeof(path)) == 0);
	test_scan_keeps_hot_set(path);
	test_idle_hot_set_gives_way(path);
	test_pread_scan_promotes_nothing(path);
	test_subpage_rereads_mark(path);
	test_idle_hot_set_gives_way_ra(path);
	return tst_finish();
}
