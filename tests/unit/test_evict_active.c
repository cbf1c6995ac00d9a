/* SPDX-License-Identifier: MIT */
/*
 * test_evict_active.c - CLOCK2's active count through every way a page
 * leaves (reclaim/evict.c "The active count", rule ACTIVE-COUNT): at
 * quiescence pool->nactive equals the descriptors marked ACTIVE, and no
 * free frame carries ACTIVE.
 *
 * Per lookup mode (lockless: the fast invalidate under a leaf's lock;
 * locked: every removal under the index lock):
 *   - activate: pages read and hit, promoted by the evictor (E3, AC1-AC3);
 *   - remove them by each path, comparing after each: lpc_invalidate's fast
 *     path (a leaf that keeps other pages) and its slow one (a leaf's last
 *     page), lpc_truncate of pages nobody holds and of one held (freed at
 *     its last put), demotion then eviction (the target lowered to 0), the
 *     last close (remove_all);
 *   - then a race: one thread hits and evicts (promotions and demotions
 *     around the target) for ROUNDS rounds, another invalidates meanwhile; in a
 *     debug build the points between E3 and the policy (E3P) and the
 *     remover's (A, B) yield at random, which widens the window the fast
 *     invalidate once slipped through (tests/regress/
 *     regress_active_invalidate.c tells it step by step).
 * Before AC1-AC3 the race phase drifted (the count above or below the
 * pages marked active) in the debug build.
 *
 * Usage: test_evict_active [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 256u
#define FILE_PAGES 512u
#define ROUNDS 2000

static struct lpc_cache *c;

/* Rule ACTIVE-COUNT at quiescence, checked by the test. */
static void census(const char *when)
{
	uint32_t freed, live = lpc_reclaim_active_census(&c->reclaim, &freed);

	CHECK_EQ(freed, 0u, "%s: free frames carry ACTIVE", when);
	CHECK_EQ(atomic_load(&c->pool.nactive), live, "%s: nactive against the pages marked active",
		 when);
}

/* Pages [first, first + n) read, hit once (REFERENCED) and promoted. */
static void activate(struct lpc_file *f, uint64_t first, unsigned n)
{
	struct lpc_tcache *t = lpc_tcache(&c->pool.owner);
	struct lpc_page *p;
	unsigned active = 0;

	REQUIRE(t, "thread block");
	for (uint64_t i = first; i < first + n; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %" PRIu64, i);
		lpc_page_put(p);
		if (lpc_page_find(f, i, &p) == 0)
			lpc_page_put(p);
	}
	/* A sweep of the hand promotes every referenced inactive page. */
	lpc_reclaim_evict(&c->reclaim, c->pool.nframes / c->reclaim.batch + 1, t);
	for (uint64_t i = first; i < first + n; i++)
		if (lpc_page_find(f, i, &p) == 0) {
			active += !!(lpc_page_flags(p) & LPC_PG_ACTIVE);
			lpc_page_put(p);
		}
	CHECK(active > 0, "no page of [%" PRIu64 ", +%u) was promoted", first, n);
}

struct racer {
	struct lpc_file *f;
	_Atomic bool stop;
	uint64_t seed;
};

static void *hitter_main(void *arg)
{
	struct racer *x = arg;
	struct lpc_tcache *t;
	struct lpc_page *p;
	uint64_t rng = x->seed;

	if (lpc_page_get(x->f, 0, 0, &p) == 0)
		lpc_page_put(p);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < 8; k++) {
			uint64_t i = tst_rnd(&rng) % 128;

			if (lpc_page_get(x->f, i, 0, &p) == 0)
				lpc_page_put(p);
		}
		lpc_reclaim_evict(&c->reclaim, 1, t);
	}
	atomic_store(&x->stop, true);
	return NULL;
}

static void race(struct lpc_file *f)
{
	struct racer x = { .f = f, .seed = tst_seed };
	uint64_t rng = tst_seed ^ 0x5a5a;
	pthread_t ht;

	/* Promotions and demotions both: the target below the hot set (and
	 * its lower bound with it: rule WS-TARGET-BOUNDS; a plain field that
	 * the reclaimer reads, so written with its thread joined: an
	 * allocation since may have started it again). */
	lpc_reclaim_stop(&c->reclaim);
	c->pool.ws.min = 0;
	atomic_store(&c->pool.ws.target, 16);
#if LPC_DEBUG
	REQUIRE(lpc_yield_arm("E3P,A,B,FD2", 0.5, tst_seed) == 0, "arm");
#endif
	REQUIRE(pthread_create(&ht, NULL, hitter_main, &x) == 0, "hitter");
	while (!atomic_load(&x.stop)) { /* as long as the hitter runs */
		uint64_t first = tst_rnd(&rng) % 128;

		lpc_invalidate(f, first * PS, (1 + tst_rnd(&rng) % 4) * PS);
	}
	pthread_join(ht, NULL);
#if LPC_DEBUG
	lpc_yield_arm(NULL, 0, 0);
#endif
	lpc_reclaim_stop(&c->reclaim);
	census("after the race");
}

static void run(const char *path, int mode)
{
	const char *m = mode == LPC_LOOKUP_LOCKED ? "locked" : "lockless";
	struct lpc_tcache *t;
	struct lpc_file *f;
	struct lpc_page *held;
	uint32_t target;
	char what[64];

	c = tst_cache_create(NFRAMES * PS, PS, LPC_IO_SYNC, mode);
	REQUIRE(c->reclaim.policy == LPC_RECLAIM_CLOCK2, "CLOCK2 is the default");
	f = tst_file_open(c, path, O_RDWR);
	t = lpc_tcache(&c->pool.owner);
	lpc_reclaim_stop(&c->reclaim); /* only this thread evicts below */

	/* Invalidate: pages 0..31 active; 0..15 leave in one call (the fast
	 * path in lockless mode: their leaf keeps 16..31), then 16..31 (the
	 * leaf's last page goes slow). */
	activate(f, 0, 32);
	snprintf(what, sizeof(what), "%s: activated", m);
	census(what);
	CHECK_EQ(lpc_invalidate(f, 0, 16 * PS), 16, "%s: invalidate 0..15", m);
	snprintf(what, sizeof(what), "%s: invalidate (fast)", m);
	census(what);
	CHECK_EQ(lpc_invalidate(f, 16 * PS, 16 * PS), 16, "%s: invalidate 16..31", m);
	snprintf(what, sizeof(what), "%s: invalidate (slow)", m);
	census(what);

	/* Truncate: pages 64..95 active, one held across the truncate. */
	activate(f, 64, 32);
	REQUIRE(lpc_page_find(f, 70, &held) == 0, "hold 70");
	CHECK_EQ(lpc_truncate(f, 64 * PS), 0, "%s: truncate to 64 pages", m);
	snprintf(what, sizeof(what), "%s: truncate, one page still held", m);
	census(what);
	lpc_page_put(held);
	snprintf(what, sizeof(what), "%s: truncate, the held page put", m);
	census(what);
	CHECK_EQ(lpc_truncate(f, (uint64_t)FILE_PAGES * PS), 0, "%s: size back", m);

	/* Demotion, then eviction: the target 0, sweeps until none is left. */
	activate(f, 32, 32);
	target = lpc_pool_ws_target(&c->pool.ws);
	lpc_reclaim_stop(&c->reclaim); /* as race() says, before min is written */
	c->pool.ws.min = 0;		 /* rule WS-TARGET-BOUNDS */
	atomic_store(&c->pool.ws.target, 0);
	for (int i = 0; i < 8; i++)
		lpc_reclaim_evict(&c->reclaim, c->pool.nframes / c->reclaim.batch + 1, t);
	CHECK_EQ(atomic_load(&c->pool.nactive), 0u, "%s: every page demoted", m);
	snprintf(what, sizeof(what), "%s: demote and evict", m);
	census(what);
	atomic_store(&c->pool.ws.target, target);

	/* The race, then the last close with pages active. */
	race(f);
	activate(f, 0, 64);
	CHECK_EQ(lpc_file_close(f), 0, "%s: close", m);
	snprintf(what, sizeof(what), "%s: last close", m);
	census(what);
	CHECK_EQ(atomic_load(&c->pool.nactive), 0u, "%s: active pages left after the last close", m);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	char path[512];

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	tst_readahead_kb = LPC_READAHEAD_OFF; /* the pages are the test's alone */
	REQUIRE(tst_make_file("active", (uint64_t)FILE_PAGES * PS, 3, path, sizeof(path)) == 0,
		"file");
	run(path, LPC_LOOKUP_LOCKLESS);
	run(path, LPC_LOOKUP_LOCKED);
	tst_rm_dir();
	return tst_finish();
}
