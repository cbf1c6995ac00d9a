/* SPDX-License-Identifier: MIT */
/*
 * regress_hoarded_frames.c - story (c): -ENOMEM with frames on other
 * threads' private lists (commits dacebc4, 34bd857; test_api's
 * t_hoarded_frames).
 *
 * The interleaving, about once in ten TSan runs of stress_same_page_miss:
 *   1. Threads H1..H3 each allocate a page: the refill moves a batch of
 *      frames from the shared list to the thread's private list; each frees
 *      its page again (the private fast path: back onto its own list).
 *   2. H1..H3 park (at a barrier, in the stress test) keeping their lists.
 *   3. The main thread allocates every other frame; then the shared list
 *      is empty while frames sit free in the parked threads' lists.
 *   4. The allocator used to return -ENOMEM here.  Now reclaim flags every
 *      block (T1), waits for a grace period (T2), takes the flagged lists
 *      (T3) and clears the flags (T4): every frame of the cache can be
 *      allocated, and -ENOMEM comes only when all of them are in use.
 * Deterministic: the parked threads stay parked (a barrier) while main
 * allocates, so their lists are full when main runs dry.  With LPC_DEBUG,
 * reclaim's steps also run with yields armed at S1-S3 and T1-T4.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define NFRAMES 256
#define NHOARD 3

static struct lpc_cache *cache;
static pthread_barrier_t parked, done;

static void *hoarder(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	REQUIRE(lpc_page_alloc(cache, &p) == 0, "hoarder alloc");
	lpc_page_put(p); /* back onto this thread's list */
	pthread_barrier_wait(&parked);
	pthread_barrier_wait(&done); /* keep the list until main is through */
	return NULL;
}

int main(int argc, char **argv)
{
	static struct lpc_page *got[NFRAMES];
	struct lpc_page *extra;
	pthread_t th[NHOARD];
	uint64_t kept = 0;
	unsigned n = 0;
	int rc = 0;

	tst_init(argc, argv, 60);
	cache = tst_cache_create(NFRAMES * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
#if LPC_DEBUG
	lpc_yield_arm("S1,S2,S3,T1,T2,T3,T4", 0.5, tst_seed);
#endif
	pthread_barrier_init(&parked, NULL, NHOARD + 1);
	pthread_barrier_init(&done, NULL, NHOARD + 1);
	for (unsigned i = 0; i < NHOARD; i++)
		REQUIRE(pthread_create(&th[i], NULL, hoarder, NULL) == 0, "thread");
	pthread_barrier_wait(&parked);
	{
		uint64_t cnt[LPC_NR_COUNTERS];

		lpc_towner_sum(&cache->pool.owner, cnt, &kept); /* frames on thread lists */
	}
	printf("parked threads keep %" PRIu64 " frames on their lists\n", kept);
	CHECK(kept > 0, "the story needs frames hoarded on other threads' lists");

	while (n < NFRAMES && (rc = lpc_page_alloc(cache, &got[n])) == 0)
		n++;
	CHECK_EQ(n, NFRAMES, "every frame can be allocated (rc %d after %u)", rc, n);
	CHECK_EQ(lpc_page_alloc(cache, &extra), -ENOMEM, "-ENOMEM once all are in use");
	pthread_barrier_wait(&done);
	for (unsigned i = 0; i < NHOARD; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(got[i]);
#if LPC_DEBUG
	lpc_yield_arm(NULL, 0, 0);
#endif
	lpc_cache_destroy(cache);
	return tst_finish();
}
