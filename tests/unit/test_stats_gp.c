/* SPDX-License-Identifier: MIT */
/*
 * test_stats_gp.c - lpc_stats' grace_periods and grace_period_ns
 * (core/thread.h lpc_count_gp, page/alloc.c's waits).  A quiet cache (the
 * reclaimer stopped, readahead off, the null backend, one thread but where
 * said), so every grace period of the process is one this test asked for,
 * and the counts are exact:
 *  - OD4: the thread invalidates NP pages (kept on its deferred list, OD1),
 *    is kept from borrowing (OD8: its borrowed count set past the cap) and
 *    allocates NP private pages (lpc_page_alloc, which never takes an
 *    uncovered frame: MR1 is for misses): exactly one wait of its own
 *    (OD4), after which OD3 lands the rest with no wait.  grace_periods grows by 1 in lpc_stats
 *    and in the thread's block, as lpc_rcu_gp_begun does, and
 *    grace_period_ns by the same non-zero time in both;
 *  - T2 of the drain (lpc_page_pending_drain) of pages the test evicted:
 *    one wait, counted in the thread's block;
 *  - the same drain by a thread with no block for the cache (a scoped RCU
 *    registration, as the reclaimer's would be without its block): counted
 *    in the cache's sums all the same (the owner's retired counts), the
 *    first thread's block unchanged;
 *  - nothing else waited: over the whole test lpc_stats' grace_periods
 *    equals lpc_rcu_gp_begun's growth.
 *
 * Usage: test_stats_gp [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <limits.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 1024u
#define NP 128u /* well under half the frames: all kept (OD1) */

static struct lpc_file *file;
static struct lpc_pool *pool;

static uint64_t block_gp(const struct lpc_tcache *t)
{
	return atomic_load(&t->cnt[LPC_C_GRACE_PERIODS]);
}

static uint64_t block_gp_ns(const struct lpc_tcache *t)
{
	return atomic_load(&t->cnt[LPC_C_GRACE_PERIOD_NS]);
}

static void read_range(unsigned first, unsigned n)
{
	struct lpc_page *p;

	for (unsigned i = first; i < first + n; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
}

/* n private pages, held until all are had, then put. */
static void alloc_private(struct lpc_cache *c, unsigned n)
{
	static struct lpc_page *held[NP];

	REQUIRE(n <= NP);
	for (unsigned i = 0; i < n; i++)
		REQUIRE(lpc_page_alloc(c, &held[i]) == 0, "private page %u", i);
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(held[i]);
}

/* A drain by a thread that has no block for the cache. */
static void *blockless_drain(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	*(uint32_t *)arg = lpc_page_pending_drain(pool);
	CHECK(lpc_tcache_peek(&pool->owner) == NULL, "the draining thread has a block");
	lpc_rcu_scope_exit(entered);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_tcache *t;
	struct lpc_stats s0, s1, sa;
	char path[600];
	uint64_t gp0, gpa, b0, bns0;
	uint32_t drained;
	unsigned evicted, borrowed;
	pthread_t th;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("statsgp", 2 * NFRAMES * PS, path, sizeof(path)) == 0, "file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	pool = &c->pool;
	file = tst_file_open(c, path, O_RDONLY);

	read_range(0, NP);
	/* Quiet: no reclaimer (joined); no frees from here on wake it (OD1
	 * keeps them, eviction leaves them on pending). */
	lpc_reclaim_stop(&c->reclaim);
	t = lpc_tcache(&pool->owner);
	REQUIRE(t, "thread block");
	lpc_stats(c, &sa);
	gpa = atomic_load(&lpc_rcu_gp_begun);

	/* OD4: one wait of the thread's own. */
	CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NP * PS), (int)NP, "invalidate");
	CHECK_EQ(atomic_load(&t->ndfree), NP, "frames kept by the invalidating thread (OD1)");
	borrowed = t->dborrow;
	t->dborrow = UINT_MAX / 2; /* past OD8's cap: the allocations must wait */
	lpc_stats(c, &s0);
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	b0 = block_gp(t);
	bns0 = block_gp_ns(t);
	alloc_private(c, NP);
	lpc_stats(c, &s1);
	t->dborrow = borrowed;
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 1u,
		 "grace periods begun by the private allocations");
	CHECK_EQ(block_gp(t) - b0, 1u, "OD4's wait in the thread's block");
	CHECK_EQ(s1.grace_periods - s0.grace_periods, 1u, "OD4's wait in lpc_stats");
	CHECK(block_gp_ns(t) > bns0, "OD4's wait took no time");
	CHECK_EQ(s1.grace_period_ns - s0.grace_period_ns, block_gp_ns(t) - bns0,
		 "lpc_stats' grace_period_ns and the thread's");
	CHECK(atomic_load(&t->ndfree) < NP, "the wait landed none of the deferred frames");
	/* MR1: misses take the rest with no wait at all. */
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	read_range(0, NP);
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u, "grace periods begun by the misses");

	/* T2 of the drain, by this thread. */
	evicted = lpc_reclaim_evict(&c->reclaim, 16, t);
	REQUIRE(evicted > 0, "nothing evicted");
	lpc_stats(c, &s0);
	b0 = block_gp(t);
	bns0 = block_gp_ns(t);
	drained = lpc_page_pending_drain(pool);
	lpc_stats(c, &s1);
	CHECK(drained >= evicted, "drained %u of %u evicted", drained, evicted);
	CHECK_EQ(block_gp(t) - b0, 1u, "the drain's wait in the thread's block");
	CHECK_EQ(s1.grace_periods - s0.grace_periods, 1u, "the drain's wait in lpc_stats");
	CHECK(block_gp_ns(t) > bns0, "the drain's wait took no time");
	CHECK_EQ(s1.grace_period_ns - s0.grace_period_ns, block_gp_ns(t) - bns0,
		 "the drain: lpc_stats' grace_period_ns and the thread's");

	/* The same by a thread with no block: the cache's sums count it. */
	read_range(NP, NP);
	evicted = lpc_reclaim_evict(&c->reclaim, 16, t);
	REQUIRE(evicted > 0, "nothing evicted the second time");
	lpc_stats(c, &s0);
	b0 = block_gp(t);
	bns0 = block_gp_ns(t);
	drained = 0;
	REQUIRE(pthread_create(&th, NULL, blockless_drain, &drained) == 0, "thread");
	REQUIRE(pthread_join(th, NULL) == 0, "join");
	lpc_stats(c, &s1);
	CHECK(drained >= evicted, "the other thread drained %u of %u evicted", drained, evicted);
	CHECK_EQ(block_gp(t) - b0, 0u, "another thread's wait in this thread's block");
	CHECK_EQ(block_gp_ns(t) - bns0, 0u, "another thread's wait time in this thread's block");
	CHECK_EQ(s1.grace_periods - s0.grace_periods, 1u, "a blockless thread's wait in lpc_stats");
	CHECK(s1.grace_period_ns > s0.grace_period_ns, "a blockless thread's wait took no time");

	/* Every wait of the process since the reclaimer stopped was counted. */
	CHECK_EQ(s1.grace_periods - sa.grace_periods, atomic_load(&lpc_rcu_gp_begun) - gpa,
		 "grace periods counted against those begun");

	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
