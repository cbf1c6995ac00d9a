/* SPDX-License-Identifier: MIT */
/*
 * test_null_args.c - NULL and invalid arguments to every public function: -EINVAL (or
 * ignored, for the void calls), nothing written to *out, no I/O and no
 * lookup counted.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_null_args [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

/* --- NULL and invalid arguments to every function --- */
static void t_null_args(void)
{
	struct lpc_cache *c = tst_cache_create(16 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	struct lpc_stats st;
	char path[600], buf[16];

	REQUIRE(tst_make_file("nullargs", 3 * 4096, 1, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);

	CHECK_EQ(lpc_cache_destroy(NULL), -EINVAL);
	CHECK_EQ(lpc_file_open(NULL, path, O_RDONLY, 0, &f), -EINVAL);
	CHECK_EQ(lpc_file_open(c, NULL, O_RDONLY, 0, &f), -EINVAL);
	CHECK_EQ(lpc_file_open(c, path, O_RDONLY, 0, NULL), -EINVAL);
	CHECK_EQ(lpc_file_close(NULL), -EINVAL);
	CHECK_EQ(lpc_page_find(NULL, 0, &p), -EINVAL);
	CHECK_EQ(lpc_page_find(f, 0, NULL), -EINVAL);
	CHECK_EQ(lpc_page_get(NULL, 0, 0, &p), -EINVAL);
	CHECK_EQ(lpc_page_get(f, 0, 0, NULL), -EINVAL);
	/* Unknown flags: every bit. */
	for (int b = 0; b < 32; b++)
		CHECK_EQ(lpc_page_get(f, 0, 1u << b, &p), -EINVAL, "flag bit %d", b);
	CHECK(p == NULL, "a failed get wrote *out");
	lpc_page_put(NULL); /* ignored */
	CHECK_EQ(lpc_page_alloc(NULL, &p), -EINVAL);
	CHECK_EQ(lpc_page_alloc(c, NULL), -EINVAL);
	CHECK_EQ(lpc_pread(NULL, buf, sizeof(buf), 0), -EINVAL);
	CHECK_EQ(lpc_pread(f, NULL, sizeof(buf), 0), -EINVAL);
	CHECK_EQ(lpc_pread(f, NULL, 0, 0), 0, "NULL buffer, zero length: nothing to do");
	CHECK_EQ(lpc_invalidate(NULL, 0, 0), -EINVAL);
	lpc_stats(NULL, &st); /* ignored */
	lpc_stats(c, NULL);   /* ignored */
	/* Nothing above may have read or cached anything. */
	lpc_stats(c, &st);
	CHECK_EQ(st.reads, 0, "invalid calls did I/O");
	CHECK_EQ(st.lookups, 0, "invalid calls counted lookups");
	CHECK_EQ(lpc_page_find(f, 0, &p), -ENOENT);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_null_args());
	return tst_finish();
}
