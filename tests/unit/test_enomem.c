/* SPDX-License-Identifier: MIT */
/*
 * test_enomem.c - a full cache: lpc_page_get fails with -ENOMEM (no I/O, nothing
 * cached), lpc_pread reads around the cache (counted in read_around) and
 * still serves the cached pages from the cache, and a get works again once
 * pages are put (it evicts one of them).
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_enomem [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

/* --- every frame held: -ENOMEM from get, read-around from pread --- */
/* Checks guarantees C.4, E.1 of include/lpc/lpc.h. */
static void t_enomem(int backend, int mode)
{
	enum { N = 8 };
	const size_t ps = 4096;
	const uint64_t size = 16 * ps + 77;
	struct lpc_cache *c = tst_cache_create(N * ps, ps, backend, mode);
	struct tst_expect e = { .backend = backend, .salt = 31, .size = size, .ps = ps };
	struct lpc_file *f;
	struct lpc_page *held[N], *p;
	struct lpc_stats s0, s1;
	unsigned char *buf = malloc(6 * ps);
	uint64_t bad = 0;
	char path[600], name[64];
	ssize_t r;

	REQUIRE(buf);
	snprintf(name, sizeof(name), "enomem-%d-%d", backend, mode);
	REQUIRE(tst_make_file(name, size, 31, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);
	for (int i = 0; i < N; i++)
		REQUIRE(lpc_page_get(f, (uint64_t)i, 0, &held[i]) == 0, "hold %d", i);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.frames_free, 0);
	CHECK_EQ(lpc_page_get(f, N, 0, &p), -ENOMEM, "get with every frame held");
	CHECK_EQ(lpc_page_find(f, N, &p), -ENOENT, "a failed get cached something");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.alloc_failures - s0.alloc_failures, 1, "alloc_failures");
	CHECK_EQ(s1.reads - s0.reads, 0, "-ENOMEM get did I/O");

	/* pread reads around the cache: pages 8..12, unaligned both ends. */
	lpc_stats(c, &s0);
	r = lpc_pread(f, buf, 4 * ps + 100, N * ps + 50);
	CHECK_EQ(r, (long long)(4 * ps + 100), "pread around a full cache");
	CHECK(tst_check_bytes(&e, N * ps + 50, buf, 4 * ps + 100, &bad), "bad at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_around - s0.read_around, 5, "read_around (5 pages)");
	CHECK_EQ(s1.reads - s0.reads, 5, "reads");
	CHECK_EQ(s1.alloc_failures - s0.alloc_failures, 5, "alloc_failures");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0);
	/* The short last page, read around. */
	r = lpc_pread(f, buf, 2 * ps, 16 * ps);
	CHECK_EQ(r, 77, "short last page read around");
	CHECK(tst_check_bytes(&e, 16 * ps, buf, 77, &bad));
	/* Held pages are served from the cache: no I/O. */
	lpc_stats(c, &s0);
	r = lpc_pread(f, buf, 2 * ps, ps + 1);
	CHECK_EQ(r, (long long)(2 * ps));
	CHECK(tst_check_bytes(&e, ps + 1, buf, 2 * ps, &bad));
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 0, "cached pages read again");
	CHECK_EQ(s1.hits - s0.hits, 3);
	CHECK_EQ(lpc_page_alloc(c, &p), -ENOMEM, "private alloc with every frame held");
	/* Nothing read around was cached. */
	CHECK_EQ(lpc_page_find(f, N + 1, &p), -ENOENT);

	for (int i = 0; i < N; i++)
		lpc_page_put(held[i]);
	/* The put pages are cached and nobody holds them: a get evicts one
	 * (H.3), and invalidate drops what the reclaimer has not evicted. */
	if (CHECK_EQ(lpc_page_get(f, N, 0, &p), 0, "get after the puts (eviction)")) {
		CHECK(tst_check_page(&e, N, lpc_page_data(p)));
		lpc_page_put(p);
	}
	r = lpc_invalidate(f, 0, 0);
	CHECK(r >= 0 && r <= N, "invalidate after the puts = %zd", r);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(buf);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_enomem(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_enomem(LPC_IO_NULL, LPC_LOOKUP_LOCKED));
	return tst_finish();
}
