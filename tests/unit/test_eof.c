/* SPDX-License-Identifier: MIT */
/*
 * test_eof.c - the end of a file: lpc_page_get past it fails with -ENXIO and
 * lpc_page_find with -ENOENT, for every kind of index up to UINT64_MAX; the
 * short last page holds the file's bytes, then zeros (on frames dirtied
 * first), with both backends; the short direct read of the tail costs io_uring
 * no registration.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_eof [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

/* --- end of file --- */
static void t_eof(int backend)
{
	struct lpc_cache *c = tst_cache_create(32 * 4096, 4096, backend, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	char path[600];
	const uint64_t size = 3 * 4096 + 100; /* pages 0..3 */
	struct tst_expect e = { .backend = backend, .salt = 11, .size = size, .ps = 4096 };
	static const uint64_t past[] = { 4, 5, 64, 4096, 1ull << 32, 1ull << 52,
					 (UINT64_MAX >> 12) + 1, UINT64_MAX - 1, UINT64_MAX };

	REQUIRE(tst_make_file(backend ? "eof-null" : "eof-sync", size, 11, path,
			      sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);
	/* Dirty every frame first (private pages), so a frame that is not
	 * zeroed past the end of the file shows its old bytes. */
	{
		struct lpc_page *pg[32];
		int n = 0;

		while (n < 32 && lpc_page_alloc(c, &pg[n]) == 0)
			memset(lpc_page_data(pg[n++]), 0xaa, 4096);
		CHECK_EQ(n, 32, "private pages of an idle 32-frame cache");
		while (n > 0)
			lpc_page_put(pg[--n]);
	}
	for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		CHECK_EQ(lpc_page_get(f, past[i], 0, &p), -ENXIO, "get %" PRIu64, past[i]);
		CHECK_EQ(lpc_page_find(f, past[i], &p), -ENOENT, "find %" PRIu64, past[i]);
	}
	/* The last page is short: bytes up to the size, zeros after. */
	if (CHECK_EQ(lpc_page_get(f, 3, 0, &p), 0, "last page")) {
		struct lpc_stats st;

		CHECK(tst_check_page(&e, 3, lpc_page_data(p)), "last page: data, then zeros");
		lpc_page_put(p);
		/* The short direct read of the tail (100 bytes of 4096) is the
		 * end: io_uring keeps its registered chunk (io.h
		 * lpc_io_read_ends; the race that broke it needs the file to
		 * grow between two reads: stress_readahead checks it). */
		lpc_stats(c, &st);
		CHECK_EQ(st.uring_unregistered, 0, "the tail's short read leaves the rings registered");
	}
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_eof(LPC_IO_SYNC));
	TST_RUN(t_eof(LPC_IO_NULL));
	return tst_finish();
}
