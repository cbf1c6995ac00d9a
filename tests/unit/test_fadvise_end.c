/* SPDX-License-Identifier: MIT */
/*
 * test_fadvise_end.c - lpc.h says lpc_fadvise is -EINVAL when off + len is
 * past 2^64, so a range that ends exactly at 2^64 ([off, 2^64), off > 0) is
 * a valid range to the end of the file, as lpc_invalidate takes it.
 * lpc_fadvise once refused it (readahead.c's check `len && off + len < off`
 * is true for off + len == 2^64, which wraps to 0; found by model_api).
 * Checked: each advice on such a range returns 0 (DONTNEED drops the file's
 * clean pages, as lpc_invalidate of the same range does); one byte more is
 * -EINVAL.
 *
 * Usage: test_fadvise_end [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/lpc_test.h"

#define PS 4096u

int main(int argc, char **argv)
{
	static const int adv[] = { LPC_FADV_NORMAL, LPC_FADV_RANDOM, LPC_FADV_SEQUENTIAL,
				   LPC_FADV_WILLNEED, LPC_FADV_DONTNEED };
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[600];
	unsigned char buf[4 * PS];

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(tst_make_file("fend", 4 * PS, 5, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	for (unsigned i = 0; i < 5; i++) {
		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 0), (long long)sizeof(buf));
		CHECK_EQ(lpc_fadvise(f, 1, UINT64_MAX, adv[i]), 0,
			 "advice %d on [1, 2^64): ends at 2^64, not past it", adv[i]);
		CHECK_EQ(lpc_fadvise(f, PS, UINT64_MAX - PS + 1, adv[i]), 0,
			 "advice %d on [4096, 2^64)", adv[i]);
		CHECK_EQ(lpc_fadvise(f, PS, UINT64_MAX - PS + 2, adv[i]), -EINVAL,
			 "advice %d one byte past 2^64", adv[i]);
	}
	CHECK_EQ(lpc_fadvise(f, 0, 0, LPC_FADV_NORMAL), 0);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
