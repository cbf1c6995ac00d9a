/* SPDX-License-Identifier: MIT */
/*
 * regress_reclaim_in_flight.c - story (d): frames in the hands of a
 * reclaimer waiting for a grace period (commit 34bd857, "in the hands of a
 * thread waiting for a grace period in reclaim_pending").
 *
 * The interleaving:
 *   1. Every frame of the cache was cached and then invalidated: all are on
 *      the pending list, waiting for a grace period (fewer than a batch, so
 *      none is in call_rcu yet); the shared list and the private lists are
 *      empty.
 *   2. R allocates, finds nothing, and reclaims: T1 flags the blocks, takes
 *      the pending list, and is about to wait for the grace period (T2).
 *      The frames are now in R's hands only.
 *   3. X allocates meanwhile and finds nothing anywhere: the shared list,
 *      pending and the private lists are empty.  It used to return -ENOMEM.
 *      Now it waits for R (one reclaimer at a time) and takes what R put on
 *      the shared list.
 * Deterministic: R is stopped at its yield point before T2 (a hook) until X
 * has started its allocation and had time to fail; then R goes on.  Both
 * must get a frame.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define NFRAMES 32 /* below one pending batch (64): nothing goes to call_rcu */

static struct lpc_cache *cache;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool stopped, go;
static __thread bool is_r;
static _Atomic int x_rc = 1;

static void hook(enum lpc_yield_point yp)
{
	if (!is_r || yp != LPC_YP_T2)
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

static void *r_main(void *arg)
{
	struct lpc_page **out = arg;

	is_r = true;
	return (void *)(intptr_t)lpc_page_alloc(cache, out);
}

static void *x_main(void *arg)
{
	atomic_store(&x_rc, lpc_page_alloc(cache, arg));
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_page *p, *rp = NULL, *xp = NULL;
	struct lpc_file *f;
	pthread_t rt, xt;
	char path[512];
	void *rrc;
	int n;

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	cache = tst_cache_create(NFRAMES * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	/* The story is about frames in a reclaimer's hands, not eviction: with
	 * eviction on, the background reclaimer would evict some of the cached
	 * pages before step 1 and take part in the race (reclaim/ installs it
	 * in the pool at create). */
	cache->pool.evict = NULL;
	cache->pool.wake = NULL;
	REQUIRE(tst_make_file("d", NFRAMES * 4096, 3, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(cache, path, O_RDONLY, 0, &f) == 0, "open");
	for (unsigned i = 0; i < NFRAMES; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	n = lpc_invalidate(f, 0, 0);
	CHECK_EQ(n, NFRAMES, "every frame is now pending a grace period");

	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("T2", 1.0, 1) == 0, "arm T2");
	REQUIRE(pthread_create(&rt, NULL, r_main, &rp) == 0, "R");
	pthread_mutex_lock(&mu);
	while (!stopped)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	/* R holds every free frame, before its grace period. */
	REQUIRE(pthread_create(&xt, NULL, x_main, &xp) == 0, "X");
	tst_sleep_us(200000); /* X's allocation runs dry meanwhile */
	CHECK(atomic_load(&x_rc) != -ENOMEM, "X got -ENOMEM while R held the frames");
	pthread_mutex_lock(&mu);
	go = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(rt, &rrc);
	pthread_join(xt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	CHECK_EQ((int)(intptr_t)rrc, 0, "R gets a frame");
	CHECK_EQ(atomic_load(&x_rc), 0, "X gets a frame");
	lpc_page_put(rp);
	lpc_page_put(xp);
	lpc_file_close(f);
	lpc_cache_destroy(cache);
	tst_rm_dir();
	return tst_finish();
}
