/* SPDX-License-Identifier: MIT */
/*
 * gps_attrib.c - every wait counted once, in its own cache (core/thread.c
 * lpc_count_gp, page/alloc.c OD4, T2 of reclaim() and of the drain, RT3),
 * with two caches in one process and threads using both; deterministic.
 *
 * Claims attacked (ab33fde): a wait a thread takes for cache X is counted
 * exactly once, in X, never in the other cache, whether the thread's
 * current block (lpc_tcache_peek) is X's, the other cache's, or none; the
 * counts of a thread that exits are kept; lpc_stats' grace_periods equals
 * what was waited (gps.h's independent tally of every urcu_memb_synchronize_rcu
 * and urcu_memb_barrier lpc made, attributed by the page/alloc.c entry point
 * on the thread's stack) and grace_period_ns is at least the waits' time.
 * Steps (A and B: 1024 frames each, null backend, no readahead, both
 * reclaimers stopped and stopped again after a step that may wake one):
 *   1. OD4 for A (borrowing kept off: dborrow past OD8's cap) by the main
 *      thread, whose blocks are in both caches: A +1 in its A block, B +0;
 *   2. the same for B;
 *   3. a drain of A by the main thread while its current block is B's: A +1
 *      (the owner's retired sums: neither of its blocks moves), B +0;
 *   4. RT3 (lpc_page_deferred_take) of A, the current block B's: A +1;
 *   5. reclaim() of A: a helper keeps frames on its private list, the main
 *      thread allocates until one allocation takes them (T2, maybe barriers);
 *   6. a thread waits OD4 for A and for B and exits: both counts kept;
 *   7. a drain of B by a thread with no block anywhere: B +1.
 * Exit 1 on any mismatch, 0 if every claim holds.
 */
#include <limits.h>

#include "gps.h"

#define PS 4096u
#define NFRAMES 1024u
#define NP 128u

static struct lpc_cache *ca, *cb;
static struct lpc_file *fa, *fb;
static int fails;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fails++;                                                                           \
		printf("  FAIL " __VA_ARGS__);                                                     \
		printf("\n");                                                                      \
	} while (0)

static uint64_t bgp(const struct lpc_tcache *t)
{
	return atomic_load(&t->cnt[LPC_C_GRACE_PERIODS]);
}

static void read_range(struct lpc_file *f, unsigned first, unsigned n)
{
	struct lpc_page *p;

	for (unsigned i = first; i < first + n; i++) {
		if (lpc_page_get(f, i, 0, &p)) {
			FAIL("get %u", i);
			continue;
		}
		lpc_page_put(p);
	}
}

/* The calling thread's OD4 wait for f's cache: pages [first, first + NP)
 * read, invalidated (kept on its deferred list, OD1), read again with
 * borrowing off. */
static void od4(struct lpc_cache *c, struct lpc_file *f, unsigned first)
{
	struct lpc_tcache *t;
	unsigned saved;

	read_range(f, first, NP);
	if (lpc_invalidate(f, (uint64_t)first * PS, (uint64_t)NP * PS) != (int)NP)
		FAIL("invalidate");
	t = lpc_tcache(&c->pool.owner);
	if (atomic_load(&t->ndfree) < NP)
		FAIL("only %u frames kept (OD1)", atomic_load(&t->ndfree));
	saved = t->dborrow;
	t->dborrow = UINT_MAX / 2;
	read_range(f, first, NP);
	t->dborrow = saved;
}

static void quiet(void)
{
	lpc_reclaim_stop(&ca->reclaim);
	lpc_reclaim_stop(&cb->reclaim);
}

static int step_check(const char *what, const struct gps_snap *a, unsigned want_a,
		      unsigned want_b)
{
	struct gps_snap b;
	int bad;

	gps_take(&b);
	bad = gps_compare(what, a, &b, 1);
	if (want_a != ~0u && b.gp[0] - a->gp[0] != want_a) {
		printf("    %s: cache A counted %" PRIu64 ", want %u  <-- MISMATCH\n", what,
		       b.gp[0] - a->gp[0], want_a);
		bad++;
	}
	if (want_b != ~0u && b.gp[1] - a->gp[1] != want_b) {
		printf("    %s: cache B counted %" PRIu64 ", want %u  <-- MISMATCH\n", what,
		       b.gp[1] - a->gp[1], want_b);
		bad++;
	}
	printf("  %s: %s\n", what, bad ? "FAIL" : "ok");
	fails += bad;
	return bad;
}

static _Atomic int h_state; /* 1: frames kept, 2: may exit */

static void *keeper(void *arg)
{
	struct lpc_page *v[48];
	unsigned n = 0;

	(void)arg;
	while (n < 48 && lpc_page_alloc(ca, &v[n]) == 0)
		n++;
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(v[i]);
	atomic_store(&h_state, 1);
	while (atomic_load(&h_state) != 2)
		usleep(1000);
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	od4(ca, fa, 4 * NP);
	od4(cb, fb, 4 * NP);
	return NULL;
}

static void *blockless(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	(void)arg;
	if (lpc_tcache_peek(&cb->pool.owner) || lpc_self.blocks)
		FAIL("the blockless thread has a block");
	if (lpc_page_pending_drain(&cb->pool) == 0)
		FAIL("the blockless drain found nothing pending");
	lpc_rcu_scope_exit(entered);
	return NULL;
}

int main(void)
{
	struct lpc_config cfg;
	struct gps_snap s0, s;
	struct lpc_tcache *ta, *tb;
	uint64_t a0, b0;
	char pa[600], pb[600];
	pthread_t th;
	uint32_t fr, pe;

	setvbuf(stdout, NULL, _IONBF, 0);
	mh_hole_file("gpsA", 8ull * NFRAMES * PS, pa, sizeof(pa));
	mh_hole_file("gpsB", 8ull * NFRAMES * PS, pb, sizeof(pb));
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.alloc_wait_ms = 50;
	if (lpc_cache_create(&cfg, &ca) || lpc_cache_create(&cfg, &cb) ||
	    lpc_file_open(ca, pa, O_RDONLY, 0, &fa) || lpc_file_open(cb, pb, O_RDONLY, 0, &fb)) {
		printf("setup failed\n");
		return 77;
	}
	gps_register(ca);
	gps_register(cb);
	read_range(fa, 0, NP);
	read_range(fb, 0, NP);
	quiet();
	ta = lpc_tcache(&ca->pool.owner);
	tb = lpc_tcache(&cb->pool.owner);
	gps_take(&s0);

	printf("gps_attrib: two caches, one thread with blocks in both\n");
	/* 1 */
	gps_take(&s);
	a0 = bgp(ta);
	b0 = bgp(tb);
	od4(ca, fa, 0);
	quiet();
	step_check("1 OD4 for A", &s, 1, 0);
	if (bgp(ta) - a0 != 1 || bgp(tb) != b0)
		FAIL("1: blocks: A +%" PRIu64 " (want 1), B +%" PRIu64 " (want 0)", bgp(ta) - a0,
		     bgp(tb) - b0);
	/* 2 */
	gps_take(&s);
	a0 = bgp(ta);
	b0 = bgp(tb);
	(void)lpc_tcache(&ca->pool.owner);
	od4(cb, fb, 0);
	quiet();
	step_check("2 OD4 for B", &s, 0, 1);
	if (bgp(tb) - b0 != 1 || bgp(ta) != a0)
		FAIL("2: blocks: B +%" PRIu64 " (want 1), A +%" PRIu64 " (want 0)", bgp(tb) - b0,
		     bgp(ta) - a0);
	/* 3 */
	read_range(fa, NP, NP);
	if (lpc_reclaim_evict(&ca->reclaim, 16, ta) == 0)
		FAIL("3: nothing evicted");
	gps_take(&s);
	a0 = bgp(ta);
	b0 = bgp(tb);
	(void)lpc_tcache(&cb->pool.owner); /* the current block: B's */
	if (lpc_page_pending_drain(&ca->pool) == 0)
		FAIL("3: nothing drained");
	step_check("3 drain of A, current block B's", &s, 1, 0);
	if (bgp(ta) != a0 || bgp(tb) != b0)
		FAIL("3: a block moved: A +%" PRIu64 ", B +%" PRIu64, bgp(ta) - a0, bgp(tb) - b0);
	/* 4 */
	read_range(fa, 2 * NP, NP);
	if (lpc_invalidate(fa, 2ull * NP * PS, (uint64_t)NP * PS) != (int)NP)
		FAIL("4: invalidate");
	gps_take(&s);
	(void)lpc_tcache(&cb->pool.owner);
	if (lpc_page_deferred_take(&ca->pool, &fr, &pe) == 0)
		FAIL("4: RT3 took nothing");
	step_check("4 RT3 of A, current block B's", &s, 1, 0);
	(void)lpc_page_pending_drain(&ca->pool); /* counted: tallied as A's too */
	quiet();
	/* 5 */
	gps_take(&s);
	{
		struct lpc_page **v = calloc(NFRAMES + 1, sizeof(*v));
		unsigned n = 0;
		uint64_t sy = atomic_load(&gps_tally[1].sync);

		atomic_store(&h_state, 0);
		pthread_create(&th, NULL, keeper, NULL);
		while (atomic_load(&h_state) != 1)
			usleep(1000);
		while (n < NFRAMES && atomic_load(&gps_tally[1].sync) == sy &&
		       lpc_page_alloc(ca, &v[n]) == 0)
			n++;
		for (unsigned i = 0; i < n; i++)
			lpc_page_put(v[i]);
		free(v);
		atomic_store(&h_state, 2);
		pthread_join(th, NULL);
		printf("    5: %u allocations, %" PRIu64 " synchronize for A\n", n,
		       atomic_load(&gps_tally[1].sync) - sy);
		if (atomic_load(&gps_tally[1].sync) == sy)
			FAIL("5: no reclaim() happened");
	}
	quiet();
	step_check("5 reclaim() of A (and the reclaimer it woke)", &s, ~0u, 0);
	/* 6 */
	gps_take(&s);
	pthread_create(&th, NULL, exiter, NULL);
	pthread_join(th, NULL);
	quiet();
	step_check("6 a thread waits for A and B and exits", &s, 1, 1);
	/* 7 */
	read_range(fb, NP, NP);
	if (lpc_reclaim_evict(&cb->reclaim, 16, tb) == 0)
		FAIL("7: nothing evicted");
	gps_take(&s);
	pthread_create(&th, NULL, blockless, NULL);
	pthread_join(th, NULL);
	step_check("7 a drain of B by a thread with no block", &s, 0, 1);

	step_check("all steps", &s0, ~0u, ~0u);
	lpc_file_close(fa);
	lpc_file_close(fb);
	lpc_cache_destroy(ca);
	lpc_cache_destroy(cb);
	att_cleanup();
	printf("gps_attrib: %s\n", fails ? "FAIL" : "holds");
	return fails ? 1 : 0;
}
