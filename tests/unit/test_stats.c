/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - lpc_stats, single-threaded: the exact value of every counter after
 * each call (hits, misses, lookups, reads, read_bytes, invalidated), and the
 * frames free or waiting for a grace period.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_stats [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

/* --- exact counters, single-threaded --- */
/* Checks guarantee F.1 of include/lpc/lpc.h. */
static void t_stats(int backend, int mode)
{
	const size_t ps = 4096;
	const uint64_t size = 8 * ps - 100;
	struct lpc_cache *c = tst_cache_create(32 * ps, ps, backend, mode);
	struct lpc_file *f;
	struct lpc_page *p;
	struct lpc_stats s;
	unsigned char buf[2 * 4096];
	char path[600], name[64];

	snprintf(name, sizeof(name), "stats-%d-%d", backend, mode);
	REQUIRE(tst_make_file(name, size, 41, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
#define EXPECT(h, m, rd, rb)                                                           \
	do {                                                                           \
		lpc_stats(c, &s);                                                      \
		CHECK_EQ(s.hits, h, "hits");                                           \
		CHECK_EQ(s.misses, m, "misses");                                       \
		CHECK_EQ(s.lookups, (h) + (m), "lookups");                             \
		CHECK_EQ(s.reads, rd, "reads");                                        \
		CHECK_EQ(s.read_bytes, rb, "read_bytes");                              \
		CHECK_EQ(s.retries, 0, "retries");                                     \
		CHECK_EQ(s.read_errors, 0, "read_errors");                             \
		CHECK_EQ(s.read_around, 0, "read_around");                             \
		CHECK_EQ(s.alloc_failures, 0, "alloc_failures");                       \
	} while (0)
	EXPECT(0, 0, 0, 0);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(0, 1, 1, ps);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(1, 1, 1, ps);
	CHECK_EQ(lpc_page_find(f, 1, &p), -ENOENT);
	EXPECT(1, 2, 1, ps);
	REQUIRE(lpc_page_find(f, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(2, 2, 1, ps);
	CHECK_EQ(lpc_pread(f, buf, 2 * ps, 0), (long long)(2 * ps));
	EXPECT(3, 3, 2, 2 * ps);
	REQUIRE(lpc_page_get(f, 7, 0, &p) == 0); /* short page: ps - 100 bytes */
	lpc_page_put(p);
	EXPECT(3, 4, 3, 3 * ps - 100);
	CHECK_EQ(lpc_page_get(f, 8, 0, &p), -ENXIO);
	EXPECT(3, 5, 3, 3 * ps - 100);
	CHECK_EQ(lpc_page_find(f, 8, &p), -ENOENT);
	EXPECT(3, 6, 3, 3 * ps - 100);
	CHECK_EQ(lpc_pread(f, buf, 1, size), 0); /* at EOF: no lookup */
	EXPECT(3, 6, 3, 3 * ps - 100);
	CHECK_EQ(lpc_invalidate(f, 0, 0), 3);
	lpc_stats(c, &s);
	CHECK_EQ(s.invalidated, 3);
	CHECK_EQ(lpc_pread(f, buf, 100, 7 * ps + ps - 106), 6);
	EXPECT(3, 7, 4, 4 * ps - 200);
	/* 100 preads of one cached page: 100 hits, no read. */
	for (int i = 0; i < 100; i++)
		lpc_pread(f, buf, 10, 7 * ps);
	EXPECT(103, 7, 4, 4 * ps - 200);
	/* One cached page; of the three invalidated ones, the pread's miss
	 * took one back at once (page/alloc.c MR1) and two wait for a grace
	 * period on this thread's deferred list (OD2), counted in
	 * frames_free, and none on the pending list. */
	lpc_stats(c, &s);
	CHECK_EQ(s.frames, 32);
	pthread_mutex_lock(&c->pool.free_lock);
	uint32_t pending = c->pool.npending;
	pthread_mutex_unlock(&c->pool.free_lock);
	CHECK_EQ(pending, 0, "pending frees");
	CHECK_EQ(atomic_load(&lpc_tcache(&c->pool.owner)->ndfree), 2u, "frames kept by the thread");
	CHECK_EQ(s.frames_free + pending, 31, "free + pending frames, one page cached");
#undef EXPECT
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	/* Reads and pages are counted page by page here: readahead (its own
	 * tests: test_readahead) would read pages no call asked for. */
	tst_readahead_kb = LPC_READAHEAD_OFF;
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_stats(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_stats(LPC_IO_NULL, LPC_LOOKUP_LOCKED));
	return tst_finish();
}
