/* SPDX-License-Identifier: MIT */
/*
 * att_ra_room.c - reclaimer.c RF4 (b19e67b): does the extra eviction stop
 * when the streams do?
 *
 * RF4 evicts ra_slack() = min(ra_room, nframes / 4) / 4 frames beyond
 * ra_target on every refill woken "for readahead" (spare_ra).  ra_room is
 * set by a split window cut short (readahead.c ra_room_grow, QS4) and put
 * back to 0 only by lpc_ra_window_cap seeing fewer than two active streams
 * (ra_worker.c QS1/QS4): a window's sizing (A2, S1).  When the scanners
 * stop before the end of their files (or their files are closed), nothing
 * sizes a window any more, so ra_room stays at the share.  And a refill is
 * "for readahead" without any sizing: lpc_fadvise WILLNEED reads its
 * windows with readahead's allocations (LPC_ALLOC_NORECLAIM and the
 * reserve: page/alloc.c wakes with ra = true) but never calls
 * lpc_ra_window_cap (readahead.c lpc_fadvise).  So after two scans, a
 * workload with no stream at all (C: RANDOM advice) whose WILLNEED of 128
 * pages finds the free list short makes the reclaimer evict its cached
 * pages up to ra_target + RF4's slack: high + nframes/4 + nframes/16 free.
 *
 * The story (LPC_IO_NULL backend, 4096 frames of 4 KiB, default config):
 *   1. two threads scan slices of two files of 32768 pages at once (16 KiB
 *      preads, 2048 pages a slice, never to the end of the file) until they
 *      stop with ra_room set (windows split and cut: QS4; the first slice,
 *      mostly);
 *   2. both files closed (each by a thread that then exits, its frames
 *      landed before step 3): no stream left anywhere;
 *   3. files C and D, RANDOM advice (no readahead, no window sized):
 *      lpc_page_get of 8192 distinct pages of C (more while the free list
 *      is above `high`) and 128 of D (demand refills), the reclaimer
 *      settles;
 *   4. lpc_fadvise(D, [128, 256), WILLNEED); the reclaimer settles; nfree
 *      and the evictions are read.
 * Held (exit 0): the refill evicts at most what brings the free list from
 * what WILLNEED left (before - 128) to ra_target, + 2 batches; ra_target =
 * high + min(ra_room, nframes/4) (RF4's slack not evicted with no stream).  Defect (exit 1): it leaves about ra_target
 * + slack (1536 of 4096 frames free; 1344-1408 pages of C evicted for a
 * WILLNEED of 128): RF4's quarter evicted for streams that are gone.
 * `strict` also asks the part that is older than RF4: at most max(before,
 * ra_high) + 2 batches (QS4's room itself stuck: main evicts to ra_target
 * already).
 *
 * Run: make && out-release/att_ra_room [strict]
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define FRAMES 4096u
#define SCAN_PAGES 32768u

struct scanner {
	struct lpc_file *f;
	uint64_t from, to; /* pages */
	ssize_t bad;
};

static void *scan_main(void *arg)
{
	struct scanner *s = arg;
	char buf[4 * PS];

	/* [from, to), never to the end of the file (a window that reaches it
	 * stops counting, QS1). */
	for (uint64_t off = s->from * PS; off < s->to * PS; off += sizeof(buf))
		if (lpc_pread(s->f, buf, sizeof(buf), off) != (ssize_t)sizeof(buf))
			s->bad++;
	return NULL;
}

static void *close_main(void *arg)
{
	lpc_ra_quiesce(arg);
	CHECK_EQ(lpc_file_close(arg), 0, "close");
	return NULL;
}

static void settle(struct lpc_cache *c)
{
	/* Twice asleep 5 ms apart: a wake between two looks is seen. */
	for (int ms = 0, quiet = 0; ms < 10000; ms++) {
		if (!atomic_load_explicit(&c->reclaim.awake, memory_order_relaxed)) {
			if (++quiet == 5)
				return;
		} else
			quiet = 0;
		tst_sleep_us(1000);
	}
	CHECK(false, "the reclaimer did not settle in 10 s");
}

static uint32_t nfree(struct lpc_cache *c)
{
	return atomic_load_explicit(&c->pool.nfree, memory_order_relaxed);
}

static uint32_t room(struct lpc_cache *c)
{
	return atomic_load_explicit(&c->pool.ra_room, memory_order_relaxed);
}

int main(int argc, char **argv)
{
	bool strict = argc > 1 && !strcmp(argv[argc - 1], "strict");
	struct scanner sa = { 0 }, sb = { 0 };
	char pa[512], pb[512], pc[512], pd[512];
	struct lpc_stats s0, s1;
	struct lpc_reclaim *r;
	struct lpc_cache *c;
	struct lpc_file *fc, *fd;
	pthread_t ta, tb;
	uint32_t before, after, target, cap, rm, slack, inv = 128, bound;

	tst_init(1, argv, 120);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("a", (uint64_t)SCAN_PAGES * PS, pa, sizeof(pa)) == 0);
	REQUIRE(tst_make_sparse("b", (uint64_t)SCAN_PAGES * PS, pb, sizeof(pb)) == 0);
	REQUIRE(tst_make_sparse("c", 8ull * FRAMES * PS, pc, sizeof(pc)) == 0);
	REQUIRE(tst_make_sparse("d", 1024ull * PS, pd, sizeof(pd)) == 0);
	c = tst_cache_create((size_t)FRAMES * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	r = &c->reclaim;
	cap = c->pool.nframes / 4;

	/* 1: two scanners at once */
	sa.f = tst_file_open(c, pa, O_RDONLY);
	sb.f = tst_file_open(c, pb, O_RDONLY);
	/* Slices of 2048 pages (twice the cache), both scanners at once,
	 * until they stop with ra_room set (the last sizing saw two streams:
	 * most runs at the first slice). */
	for (unsigned k = 0; k < 15 && (k == 0 || !room(c)); k++) {
		sa.from = sb.from = (uint64_t)k * 2048;
		sa.to = sb.to = sa.from + 2048;
		REQUIRE(pthread_create(&ta, NULL, scan_main, &sa) == 0);
		REQUIRE(pthread_create(&tb, NULL, scan_main, &sb) == 0);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		printf("two scanners over pages [%llu, %llu): ra_room %u (share %u)\n",
		       (unsigned long long)sa.from, (unsigned long long)sa.to, room(c), cap);
	}
	CHECK_EQ(sa.bad + sb.bad, 0, "scan reads");
	if (!room(c))
		tst_skip("two scanners left ra_room 0 here: the premise (QS4) not met");
	/* 2: no stream left: each file closed by a thread that then exits
	 * (its frames land on pending at its exit, OD6, not during step 4) */
	REQUIRE(pthread_create(&ta, NULL, close_main, sa.f) == 0);
	REQUIRE(pthread_create(&tb, NULL, close_main, sb.f) == 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	tst_sleep_us(200000);
	settle(c);
	printf("both files closed: ra_room %u, free %u, pending %u\n", room(c), nfree(c),
	       atomic_load(&c->pool.npending));

	/* 3: a random workload, no readahead */
	fc = tst_file_open(c, pc, O_RDONLY);
	CHECK_EQ(lpc_fadvise(fc, 0, 0, LPC_FADV_RANDOM), 0);
	fd = tst_file_open(c, pd, O_RDONLY);
	CHECK_EQ(lpc_fadvise(fd, 0, 0, LPC_FADV_RANDOM), 0);
	/* 2 x the cache, then on while the free list is above `high` (A's and
	 * B's frames land when they land: page/alloc.c OD2-OD6) */
	for (uint64_t i = 0; i < 8 * FRAMES && (i < 2 * FRAMES || nfree(c) > r->high + r->batch);
	     i++) {
		struct lpc_page *p;

		REQUIRE(lpc_page_get(fc, i, 0, &p) == 0, "get %llu", (unsigned long long)i);
		lpc_page_put(p);
		if (i == 2 * FRAMES)
			settle(c);
	}
	for (uint64_t i = 0; i < inv; i++) {
		struct lpc_page *p;

		REQUIRE(lpc_page_get(fd, i, 0, &p) == 0, "get D %llu", (unsigned long long)i);
		lpc_page_put(p);
	}
	settle(c);
	before = nfree(c);
	lpc_stats(c, &s0);

	/* 4: WILLNEED of D's next 128 pages: readahead's allocations
	 * (LPC_ALLOC_NORECLAIM, keep: page/alloc.c) wake the reclaimer with
	 * ra = true, and no window is sized (no lpc_ra_window_cap: ra_room
	 * stays) */
	CHECK_EQ(lpc_fadvise(fd, (uint64_t)inv * PS, (uint64_t)inv * PS, LPC_FADV_WILLNEED), 0,
		 "WILLNEED");
	printf("WILLNEED returned: pending %u, free %u, reclaimer awake %d, spare_ra %d\n",
	       atomic_load(&c->pool.npending), nfree(c), (int)atomic_load(&r->awake),
	       (int)atomic_load(&r->spare_ra));
	settle(c);
	after = nfree(c);
	lpc_stats(c, &s1);
	rm = room(c) > cap ? cap : room(c);
	target = r->high + rm;
	if (target < r->ra_high)
		target = r->ra_high;
	slack = rm / 4;
	printf("random workload, WILLNEED of %u pages of D: free %u -> %u, evictions +%llu, "
	       "wake-ups +%llu\n  high %u ra_high %u ra_room %u: ra_target %u, RF4 slack %u, "
	       "batch %u\n",
	       inv, before, after, (unsigned long long)(s1.evictions - s0.evictions),
	       (unsigned long long)(s1.reclaimer_wakeups - s0.reclaimer_wakeups), r->high,
	       r->ra_high, room(c), target, slack, r->batch);
	/* The refill brings free + pending to its fill from what WILLNEED
	 * left (before - inv): evictions = fill - (before - inv). */
	bound = target + inv - (before < target ? before : target) + 2 * r->batch;
	CHECK(s1.evictions - s0.evictions <= bound,
	      "no stream reads ahead (A, B closed, C and D RANDOM), yet a refill for a "
	      "WILLNEED of %u evicted %llu pages > %u (to ra_target %u + 2 batches; free "
	      "%u after): RF4's slack (%u) evicted for streams that are gone (ra_room %u "
	      "never reset)",
	      inv, (unsigned long long)(s1.evictions - s0.evictions), bound, target, after,
	      slack, room(c));
	if (strict) {
		uint32_t b2 = r->ra_high + inv - (before < r->ra_high ? before : r->ra_high) +
			      2 * r->batch;

		CHECK(s1.evictions - s0.evictions <= b2,
		      "strict: a refill with no stream evicted %llu > %u (to ra_high %u + 2 "
		      "batches): QS4's room (%u) stuck, evicted for streams that are gone",
		      (unsigned long long)(s1.evictions - s0.evictions), b2, r->ra_high, rm);
	}
	CHECK_EQ(lpc_file_close(fd), 0);
	CHECK_EQ(lpc_file_close(fc), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
