/* SPDX-License-Identifier: MIT */
/*
 * test_reclaim_backoff.c - the background reclaimer backs off when nothing
 * can be evicted (reclaim/reclaimer.c, "Backoff"), in LOCKED mode where a
 * miss holds the file's rwlock for reading across its read and eviction's
 * trylock for writing (E2) fails.
 *
 * The story: an LPC_LOOKUP_LOCKED cache of 256 frames full of one file's
 * pages; the test holds that file's rwlock for reading (as a long miss
 * would) and takes every free frame as a private page, so the free list is
 * below the low watermark and no cached page can be evicted.  The reclaimer,
 * woken by those allocations, finds nothing to evict.  It used to sweep the
 * whole hand again at once, over and over (thousands of wake-ups counted in
 * 300 ms on this machine); now it waits 100 us doubling to 10 ms between
 * fruitless sweeps: a few dozen.  Then the lock is released and the private
 * pages put: the reclaimer must still get the cache going (an allocation
 * succeeds at once).
 *
 * Usage: test_reclaim_backoff [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/lpc_test.h"
#include "filemap/filemap.h"

#define FRAMES 256
#define PS 4096

int main(int argc, char **argv)
{
	static struct lpc_page *priv[FRAMES];
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	char path[512];
	unsigned n = 0;
	uint64_t wakeups;
	int rc;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("backoff", 2 * FRAMES * PS, path, sizeof(path)) == 0);
	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKED;
	cfg.alloc_wait_ms = 50;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	f = tst_file_open(c, path, O_RDONLY);

	/* Fill the cache (the reclaimer keeps some frames free). */
	for (unsigned i = 0; i < 2 * FRAMES; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	/* A long miss holds the rwlock for reading: no eviction can take it
	 * for writing.  Take every free frame. */
	REQUIRE(pthread_rwlock_rdlock(&f->tree_rwlock) == 0);
	while (n < FRAMES && (rc = lpc_page_alloc(c, &priv[n])) == 0)
		n++;
	CHECK_EQ(rc, -ENOMEM, "the last allocation (after %u)", n);
	lpc_stats(c, &s0);
	tst_sleep_us(300000);
	lpc_stats(c, &s1);
	wakeups = s1.reclaimer_wakeups - s0.reclaimer_wakeups;
	printf("reclaimer wake-ups in 300 ms with nothing evictable: %llu\n",
	       (unsigned long long)wakeups);
	/* Backing off 100 us doubling to 10 ms: about 35 in 300 ms. */
	CHECK(wakeups <= 100, "the reclaimer swept %llu times in 300 ms: it spins",
	      (unsigned long long)wakeups);
	pthread_rwlock_unlock(&f->tree_rwlock);
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(priv[i]);

	/* It still works once pages can go. */
	CHECK_EQ(lpc_page_get(f, 2 * FRAMES - 1, 0, &p), 0, "a get after the lock is released");
	lpc_page_put(p);
	CHECK_EQ(lpc_page_alloc(c, &p), 0, "an allocation after the lock is released");
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(f), 0, "close");
	tst_cache_destroy(c);
	return tst_finish();
}
