/* SPDX-License-Identifier: MIT */
/*
 * regress_quiet_drain.c - frames in the reclaimer's drain while a test adds
 * up the free ones (stress_mixed's "free 51-57 + pending 0 of 128 frames"
 * once the cache was quiet; the frames were never lost: the same run then
 * allocated all 128, and 200 ms later lpc_stats counted 128 free).
 *
 * The interleaving:
 *   1. Every page of a file is invalidated (by a thread that then exits:
 *      its kept frames go to pending, page/alloc.c OD6): its frames wait on
 *      pending, and the kick wakes the background reclaimer (a batch or
 *      more waits: page/alloc.c lpc_page_pending_kick).
 *   2. The checker reads batches_in_flight: 0, nothing in flight yet (the
 *      reclaimer has not run; on a loaded machine it runs whenever it is
 *      scheduled).
 *   3. The reclaimer's drain takes pending (npending 0, one batch in
 *      flight) and waits for its grace period (T2) with the frames in its
 *      hands only.
 *   4. The checker reads lpc_stats's frames_free and npending: neither
 *      counts the drain's frames, and the sum is short by all of them.
 * The fix is the checker's: lpc_pool_census counts only with no frame in
 * transit (reclaim_lock free, nothing in flight) and says -EAGAIN until then.
 * Deterministic: the kick is held back (pool->wake NULL) until step 2 is
 * done, and the drain is parked at its yield point before T2 (a hook) until
 * step 4 and the census's -EAGAIN are seen.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define NFRAMES 512 /* well above the reclaimer's watermarks: it evicts nothing */
#define NPAGES 100  /* more than the reclaimer's batch: the kick wakes it */

static struct lpc_cache *cache;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool stopped, go;

/* Only the reclaimer's drain reaches T2 here: the main thread never
 * allocates while the point is armed. */
static void hook(enum lpc_yield_point yp)
{
	if (yp != LPC_YP_T2)
		return;
	pthread_mutex_lock(&mu);
	if (!stopped) {
		stopped = true;
		pthread_cond_broadcast(&cv);
		while (!go)
			pthread_cond_wait(&cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}

struct inval_arg {
	struct lpc_file *f;
	int dropped;
};

static void *inval_main(void *arg)
{
	struct inval_arg *a = arg;

	a->dropped = lpc_invalidate(a->f, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_pool *pool;
	struct lpc_pool_census cs;
	struct lpc_stats st;
	struct lpc_page *p;
	struct lpc_file *f;
	void (*wake)(void *arg, bool ra);
	uint32_t pending;
	char path[512];
	int rc = 0;

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	cache = tst_cache_create(NFRAMES * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	pool = &cache->pool;
	REQUIRE(tst_make_file("q", NPAGES * 4096, 3, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(cache, path, O_RDONLY, 0, &f) == 0, "open");
	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	lpc_ra_quiesce(f);

	/* 1: no kick yet (the reclaimer is late). */
	wake = pool->wake;
	pool->wake = NULL;
	/* From a thread that then exits: an invalidating thread keeps its
	 * frames for its own next misses (page/alloc.c OD2), and its exit
	 * puts them on pending (OD6), where this story needs them. */
	{
		pthread_t th;
		struct inval_arg a = { .f = f };

		REQUIRE(pthread_create(&th, NULL, inval_main, &a) == 0, "thread");
		pthread_join(th, NULL);
		CHECK_EQ(a.dropped, NPAGES, "every page invalidated");
	}
	CHECK_EQ(atomic_load(&pool->npending), (uint32_t)NPAGES, "their frames pending");
	/* 2: the old check's wait for batches in flight. */
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u, "a batch in flight before the drain");
	CHECK_EQ(lpc_pool_census(pool, 0, &cs), 0, "census of a quiet pool");
	CHECK_EQ(cs.total, (uint32_t)NFRAMES, "census before the drain");
	CHECK_EQ(cs.pending, (uint32_t)NPAGES, "census: pending before the drain");

	/* 3: the reclaimer wakes and its drain stops before T2. */
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("T2", 1.0, 1) == 0, "arm T2");
	pool->wake = wake;
	lpc_page_pending_kick(pool);
	pthread_mutex_lock(&mu);
	while (!stopped)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	/* 4: what the old check read: the drain's frames in neither count. */
	lpc_stats(cache, &st);
	pthread_mutex_lock(&pool->free_lock);
	pending = pool->npending;
	pthread_mutex_unlock(&pool->free_lock);
	CHECK_EQ(pending, 0u, "the drain took pending");
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 1u, "the drain counts as a batch in flight");
	CHECK_EQ(st.frames_free + pending, (uint64_t)(NFRAMES - NPAGES),
		 "the old check's sum: short by the drain's frames");
	/* The census does not count while frames are in transit. */
	CHECK_EQ(lpc_pool_census(pool, 0, &cs), -EAGAIN, "census with a drain in its grace period");

	pthread_mutex_lock(&mu);
	go = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	/* The drain lands them (bounded wait: a loaded machine only makes
	 * it take longer). */
	for (int i = 0; i < 10000 && (rc = lpc_pool_census(pool, 0, &cs)) == -EAGAIN; i++)
		tst_sleep_us(1000);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);
	CHECK_EQ(rc, 0, "census after the drain");
	CHECK_EQ(cs.total, (uint32_t)NFRAMES, "every frame free after the drain");
	CHECK_EQ(cs.counted, (uint32_t)NFRAMES, "counters after the drain");
	CHECK_EQ(cs.pending, 0u, "nothing pending after the drain");
	lpc_stats(cache, &st);
	CHECK_EQ(st.frames_free, (uint64_t)NFRAMES, "frames_free after the drain");
	lpc_file_close(f);
	lpc_cache_destroy(cache);
	tst_rm_dir();
	return tst_finish();
}
