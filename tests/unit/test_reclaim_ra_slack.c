/* SPDX-License-Identifier: MIT */
/*
 * test_reclaim_ra_slack.c - a refill for readahead while several streams
 * read ahead evicts RF4's slack beyond its target (reclaim/reclaimer.c RF4,
 * ra_slack), and a lone stream's refill does not.
 *
 * Why: every refill turn ends in one grace period (RF3: a drain, urcu-memb's
 * membarrier IPIs every CPU that runs one of the process's threads), and a
 * refill for readahead went exactly to its target, the room for two windows
 * of every stream: with two streams, whose windows are half a lone stream's
 * (ra_worker.c QS2), every window took the free list below that target and
 * woke a refill of one window, so two scanners paid twice the grace periods
 * per MiB of one (lpcbench scan, two scanners, 16 KiB calls: 395 refill
 * turns per 11 passes against 302 with one; 279 with the slack).
 *
 * The story: a cache of 4096 frames, readahead off (no page is spared as
 * read ahead and unused: E1), full of one file's pages.  With the pool's
 * ra_room at the share (two streams' room, QS4), a readahead wake must leave
 * about high + room + room / 4 frames free (ra_target plus the slack; at
 * least half the slack is asked); before RF4 it left high + room.  With ra_room 0 (a lone stream) the same
 * wake leaves no more than ra_high plus two batches.
 *
 * Usage: test_reclaim_ra_slack [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/lpc_test.h"
#include "cache/cache.h"

#define FRAMES 4096u
#define PS 4096u
#define ROOM (FRAMES / 4) /* the share: ra_worker.c QS4 */

/* Waits until the reclaimer sleeps again (its refill done). */
static void settle(struct lpc_cache *c)
{
	for (int ms = 0; ms < 10000; ms++) {
		if (!atomic_load_explicit(&c->reclaim.awake, memory_order_relaxed))
			return;
		tst_sleep_us(1000);
	}
	CHECK(false, "the reclaimer did not settle in 10 s");
}

static uint32_t nfree(struct lpc_cache *c)
{
	return atomic_load_explicit(&c->pool.nfree, memory_order_relaxed);
}

/* Fills the cache from page `from` on, until fewer than `low` frames are
 * free (the reclaimer refills to `high` on demand), then lets it settle. */
static void fill(struct lpc_cache *c, struct lpc_file *f, uint64_t *next)
{
	struct lpc_page *p;

	for (unsigned i = 0; i < 2 * FRAMES; i++, (*next)++) {
		REQUIRE(lpc_page_get(f, *next, 0, &p) == 0, "get %llu", (unsigned long long)*next);
		lpc_page_put(p);
	}
	settle(c);
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_reclaim *r;
	struct lpc_file *f;
	char path[512];
	uint64_t next = 0;
	uint32_t got;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("ra_slack", 8ull * FRAMES * PS, path, sizeof(path)) == 0);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (uint64_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	r = &c->reclaim;
	f = tst_file_open(c, path, O_RDONLY);

	/* Two streams: the room at the share, and the slack on top. */
	fill(c, f, &next);
	atomic_store_explicit(&c->pool.ra_room, ROOM, memory_order_relaxed);
	lpc_reclaim_wake(r, true);
	settle(c);
	got = nfree(c);
	printf("two streams: %u frames free (high %u, room %u)\n", got, r->high, ROOM);
	/* ra_target + RF4's slack is high + ROOM + ROOM / 4 (1536 here); half
	 * the slack is asked, as a turn may end a few frames short of it (the
	 * frames a thread keeps), and without RF4 the refill stops at most a
	 * batch past ra_target (1280-1344 seen). */
	CHECK(got >= r->high + ROOM + ROOM / 8,
	      "a refill for two streams left %u frames free, want >= %u (ra_target + RF4's slack)",
	      got, r->high + ROOM + ROOM / 8);

	/* A lone stream (ra_room 0): to ra_high, no slack. */
	atomic_store_explicit(&c->pool.ra_room, 0, memory_order_relaxed);
	fill(c, f, &next);
	lpc_reclaim_wake(r, true);
	settle(c);
	got = nfree(c);
	printf("a lone stream: %u frames free (ra_high %u)\n", got, r->ra_high);
	CHECK(got <= r->ra_high + 2 * r->batch,
	      "a refill for a lone stream left %u frames free, want <= %u (ra_high + two batches: a turn ends past its target)",
	      got, r->ra_high + 2 * r->batch);

	CHECK_EQ(lpc_file_close(f), 0, "close");
	tst_cache_destroy(c);
	return tst_finish();
}
