/* SPDX-License-Identifier: MIT */
/*
 * od8_dcov_take.c - a stale covered front after a taker (page/alloc.c OD2,
 * OD6, OD7; core/thread.h dcov, dborrow), deterministic, one thread (and a
 * helper thread for one grace period).
 *
 * Claim attacked: a taker (here the reclaimer's take, RT1-RT4,
 * lpc_page_deferred_take) empties t->dfree and leaves t->dcov; if the next
 * chain kept (OD2) found dcov still counting the frames the taker moved,
 * OD3 would hand out the new chain's frames with no grace period after
 * their removal (DEFERRED-GRACE).  Steps:
 *   1. pages A, B, C cached (NP each); invalidate A; another thread's grace
 *      period; invalidate B: A is the covered front (dcov == NP);
 *   2. the take: dfree empty, dborrow 0 (OD8's reset);
 *   3. invalidate C: OD2 must find the list empty and reset dcov (0);
 *   4. read D (misses, no other thread): no miss may get one of C's frames
 *      while no grace period has begun after C's removal and ended
 *      (checked with lpc_rcu_gp_passed(begun after C's removal), which is
 *      C's stamp: nothing else waits meanwhile).
 * Also: A and B's frames come back in the census, none twice.
 * Exit 1 while a stale dcov covers C (or the reset of dborrow is missing),
 * 0 if it holds.  Debug builds abort earlier (rule DEFERRED-GRACE).
 *   make && out-asan/od8_dcov_take ; make VARIANT=release && out-release/od8_dcov_take
 */
#include "cache/cache.h"
#include "core/rcu.h"
#include "../attack_miss/mh.h"

#define PS 4096u
#define NFRAMES 4096u /* tbatch 32 */
#define NP 256u

static struct lpc_file *file;
static unsigned char inc[NFRAMES];
static int fails;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fails++;                                                                           \
		printf("  FAIL " __VA_ARGS__);                                                     \
		printf("\n");                                                                      \
	} while (0)

static void *other_wait(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	lpc_rcu_synchronize();
	lpc_rcu_scope_exit(entered);
	return arg;
}

static void read_range(unsigned first, unsigned char *set)
{
	struct lpc_page *p;

	for (unsigned i = first; i < first + NP; i++) {
		if (lpc_page_get(file, i, 0, &p)) {
			FAIL("get %u", i);
			continue;
		}
		if (set && p->id < NFRAMES)
			set[p->id] = 1;
		lpc_page_put(p);
	}
}

int main(void)
{
	struct lpc_config cfg;
	struct lpc_cache *cache;
	struct lpc_pool *pool;
	struct lpc_tcache *t;
	struct lpc_pool_census cs;
	pthread_t th;
	char path[512];
	uint32_t fr = 0, pend = 0;
	uint64_t stamp_c;
	unsigned early = 0, got_c = 0;
	int rc = -EAGAIN;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = 0;
	if (lpc_cache_create(&cfg, &cache)) {
		printf("create failed\n");
		return 1;
	}
	pool = &cache->pool;
	mh_hole_file("od8t", (uint64_t)4 * NP * PS, path, sizeof(path));
	if (lpc_file_open(cache, path, O_RDONLY, 0, &file)) {
		printf("open failed\n");
		return 1;
	}
	read_range(0, NULL);
	read_range(NP, NULL);
	read_range(2 * NP, inc);
	t = lpc_tcache(&pool->owner);
	if (!t) {
		printf("no thread block\n");
		return 1;
	}
	/* 1. A, covered; B behind it. */
	if (lpc_invalidate(file, 0, (uint64_t)NP * PS) != (int)NP)
		FAIL("invalidate A");
	pthread_create(&th, NULL, other_wait, NULL);
	pthread_join(th, NULL);
	if (lpc_invalidate(file, (uint64_t)NP * PS, (uint64_t)NP * PS) != (int)NP)
		FAIL("invalidate B");
	printf("after A, a grace period, B: ndfree %u dcov %u (want %u, %u)\n",
	       atomic_load(&t->ndfree), t->dcov, 2 * NP, NP);
	if (atomic_load(&t->ndfree) != 2 * NP || t->dcov != NP)
		FAIL("precondition: A is not the covered front");
	t->dborrow = 1; /* as if it had borrowed: the take must reset it */
	/* 2. The reclaimer's take (RT1-RT4). */
	lpc_page_deferred_take(pool, &fr, &pend);
	printf("after the take: ndfree %u dcov %u (stale, allowed while dfree is empty) "
	       "dborrow %u\n",
	       atomic_load(&t->ndfree), t->dcov, t->dborrow);
	if (t->dfree || atomic_load(&t->ndfree))
		FAIL("the take left deferred frames");
	if (t->dborrow)
		FAIL("the take left dborrow at %u (OD8's reset, RT3)", t->dborrow);
	/* 3. C's chain on the empty list. */
	if (lpc_invalidate(file, (uint64_t)2 * NP * PS, (uint64_t)NP * PS) != (int)NP)
		FAIL("invalidate C");
	stamp_c = atomic_load(&lpc_rcu_gp_begun);
	printf("after C: ndfree %u dcov %u (want %u, 0)\n", atomic_load(&t->ndfree), t->dcov, NP);
	if (t->dcov != 0)
		FAIL("OD2 kept a stale dcov %u over C's chain, not covered", t->dcov);
	/* 4. Misses: none gets C's frames before a grace period covers C. */
	for (unsigned i = 3 * NP; i < 4 * NP; i++) {
		struct lpc_page *p;
		bool passed = lpc_rcu_gp_passed(stamp_c);

		if (lpc_page_get(file, i, 0, &p)) {
			FAIL("get %u", i);
			continue;
		}
		if (p->id < NFRAMES && inc[p->id]) {
			got_c++;
			if (!passed && !lpc_rcu_gp_passed(stamp_c))
				early++;
		}
		lpc_page_put(p);
	}
	printf("misses of D: %u got C's frames, %u of them before a grace period covered C\n",
	       got_c, early);
	if (early)
		FAIL("%u of C's frames reused with no grace period after their removal", early);
	/* Every frame once (FRAMES-ACCOUNTED). */
	if (lpc_invalidate(file, 0, 0) < 0 || lpc_file_nrpages(file) != 0)
		FAIL("pages left in the index");
	for (int i = 0; i < 5000 && (rc = lpc_pool_census(pool, 0, &cs)) == -EAGAIN; i++)
		usleep(1000);
	if (rc || cs.total != NFRAMES || cs.counted != NFRAMES)
		FAIL("census rc %d: total %u counted %u, frames %u", rc, cs.total, cs.counted,
		     NFRAMES);
	lpc_file_close(file);
	lpc_cache_destroy(cache);
	att_cleanup();
	printf("od8_dcov_take: %s\n", fails ? "DEFECT" : "holds");
	return fails ? 1 : 0;
}
