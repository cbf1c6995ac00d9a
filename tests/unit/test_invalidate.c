/* SPDX-License-Identifier: MIT */
/*
 * test_invalidate.c - lpc_invalidate: byte ranges rounded to the pages they touch, zero
 * length and overflowing ranges to the end of the file, held and locked
 * pages skipped, the invalidated counter, and an invalidated page read
 * again, in both lookup modes.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_invalidate [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

/* --- lpc_invalidate --- */
/* Checks guarantees A.3, B.1, D.1 of include/lpc/lpc.h. */
static void t_invalidate(int mode)
{
	const size_t ps = 4096;
	const uint64_t size = 16 * ps;
	struct lpc_cache *c = tst_cache_create(64 * ps, ps, LPC_IO_NULL, mode);
	struct lpc_file *f;
	struct lpc_page *p, *held, *locked;
	struct lpc_stats s0, s1;
	char path[600];
	int total = 0, r;

	REQUIRE(tst_make_sparse(mode ? "inval-locked" : "inval", size, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "empty file map");
	for (uint64_t i = 0; i < 16; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	lpc_stats(c, &s0);
	/* [2*ps, 5*ps): pages 2, 3, 4. */
	r = lpc_invalidate(f, 2 * ps, 3 * ps);
	CHECK_EQ(r, 3, "pages 2..4");
	total += r > 0 ? r : 0;
	for (uint64_t i = 1; i <= 5; i++) {
		int want = (i >= 2 && i <= 4) ? -ENOENT : 0;

		CHECK_EQ(lpc_page_find(f, i, &p), want, "find %" PRIu64 " after invalidate", i);
		if (want == 0 && p)
			lpc_page_put(p);
	}
	/* One byte inside page 5. */
	r = lpc_invalidate(f, 5 * ps + 1, 1);
	CHECK_EQ(r, 1, "one byte of page 5");
	total += r > 0 ? r : 0;
	/* The last byte of 5 (gone) and first of 6. */
	r = lpc_invalidate(f, 6 * ps - 1, 2);
	CHECK_EQ(r, 1, "crossing 5|6");
	total += r > 0 ? r : 0;
	/* Zero length = to the end of the file: from page 14 (offset unaligned). */
	r = lpc_invalidate(f, 14 * ps + 100, 0);
	CHECK_EQ(r, 2, "len 0 from page 14");
	total += r > 0 ? r : 0;
	/* Past the end, and an overflowing range. */
	CHECK_EQ(lpc_invalidate(f, 100 * ps, 0), 0);
	CHECK_EQ(lpc_invalidate(f, 100 * ps, ps), 0);
	r = lpc_invalidate(f, 13 * ps, UINT64_MAX);
	CHECK_EQ(r, 1, "off + len overflows: to the end");
	total += r > 0 ? r : 0;

	/* Held pages are skipped. */
	REQUIRE(lpc_page_get(f, 7, 0, &held) == 0);
	CHECK_EQ(lpc_invalidate(f, 7 * ps, ps), 0, "held page dropped");
	if (CHECK_EQ(lpc_page_find(f, 7, &p), 0, "held page gone from the cache")) {
		CHECK(p == held);
		lpc_page_put(p);
	}
	/* Locked, not held pages are skipped: lock it, drop our reference (the
	 * index keeps it), invalidate, take it back and unlock. */
	REQUIRE(lpc_page_get(f, 8, 0, &locked) == 0);
	lpc_page_lock(locked);
	lpc_page_put(locked);
	CHECK_EQ(lpc_invalidate(f, 8 * ps, ps), 0, "locked page dropped");
	if (CHECK_EQ(lpc_page_find(f, 8, &p), 0, "locked page gone")) {
		CHECK(p == locked);
		lpc_page_unlock(p);
		lpc_page_put(p);
	}
	/* Everything else: pages 0, 1, 8..12 (7 is still held). */
	r = lpc_invalidate(f, 0, 0);
	CHECK_EQ(r, 7, "the rest, with page 7 held");
	total += r > 0 ? r : 0;
	lpc_page_put(held);
	r = lpc_invalidate(f, 0, 0);
	CHECK_EQ(r, 1, "page 7 after its put");
	total += r > 0 ? r : 0;
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "nothing left");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.invalidated - s0.invalidated, (unsigned)total, "invalidated counter");
	/* An invalidated page is read again. */
	lpc_stats(c, &s0);
	if (CHECK_EQ(lpc_page_get(f, 3, 0, &p), 0))
		lpc_page_put(p);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "invalidated page read again");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_invalidate(LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_invalidate(LPC_LOOKUP_LOCKED));
	return tst_finish();
}
