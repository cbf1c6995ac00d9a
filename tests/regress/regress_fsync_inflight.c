/* SPDX-License-Identifier: MIT */
/*
 * regress_fsync_inflight.c - story: lpc_fsync must wait for a write that
 * another pass began before it (writeback/writeback.c Y3).
 *
 * The interleaving:
 *   1. Page 0 of the file is dirty (lpc_pwrite).
 *   2. W, a background pass (the flusher's: WB_ASYNC), locks it, moves it
 *      DIRTY -> WRITEBACK (K3) and is stopped before its write (K4).  The
 *      page's new data is in memory only, and the page is no longer DIRTY.
 *   3. S calls lpc_fsync.  Y2 finds no DIRTY page to tag TOWRITE: the only
 *      dirty data is W's, in flight.  Y3 must wait for it: S blocks until
 *      W's write ends.  Without Y3 (the mutant no-y3 of
 *      tests/mutants/run.sh), S returned 0 with the data not on disk; in
 *      LPC_DEBUG builds rule FSYNC-INFLIGHT aborts there.
 *   4. W goes on and writes; S returns 0, and the file read through a fresh
 *      kernel descriptor holds the new data.
 * Deterministic: W is parked at its K4 yield point (yield_stop.h) while S
 * runs for 200 ms; S must still be inside lpc_fsync then.  The flusher is
 * kept out (age 2^32 ms, thresholds 100 %).
 */
#include <fcntl.h>

#include "../common/write_test.h"
#include "../common/yield_stop.h"
#include "writeback/writeback.h"

#define PS 4096

static struct lpc_file *file;
static _Atomic int s_rc = 1;
static _Atomic bool s_done;

static void *w_main(void *arg)
{
	tst_stop_me();
	return (void *)(intptr_t)lpc_wb_file(file, LPC_WB_ASYNC, 0,
						    lpc_file_tcache(file));
}

static void *s_main(void *arg)
{
	atomic_store(&s_rc, lpc_fsync(file));
	atomic_store(&s_done, true);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned char data[PS], back[4 * PS];
	struct lpc_cache *c;
	char path[512];
	pthread_t wt, st;
	void *wrc;

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_file("fsync_inflight", 4 * PS, 3, path, sizeof(path)) == 0);
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	file = tst_file_open(c, path, O_RDWR);

	memset(data, 0x5c, sizeof(data));					/* 1 */
	REQUIRE(lpc_pwrite(file, data, PS, 0) == PS, "lpc_pwrite");

	tst_stop_arm(LPC_YP_K4);						/* 2 */
	REQUIRE(pthread_create(&wt, NULL, w_main, NULL) == 0);
	REQUIRE(tst_stop_wait(), "W never reached K4");
	{
		struct lpc_page *p;
		uint32_t fl;
		bool tagged;

		REQUIRE(lpc_page_find(file, 0, &p) == 0, "page 0 cached");
		lpc_file_index_lock(file);
		tagged = lpc_radix_tag_get(&file->tree, 0, LPC_TAG_DIRTY);
		lpc_file_index_unlock(file);
		fl = lpc_page_flags(p);
		/* The story's premise is K3's: the flag and the tag leave
		 * together (a DIRTY flag without its tag is the invariant
		 * DIRTY-TAG broken: the mutant dirty-late). */
		if (!CHECK(!(fl & LPC_PG_DIRTY) == !tagged, "page 0: flags 0x%x, DIRTY tag %d",
			   fl, tagged))
			fprintf(stderr, "lpc debug: rule DIRTY-TAG violated: page 0 DIRTY flag and tag "
					"differ after K3 (regress_fsync_inflight)\n");
		CHECK((fl & (LPC_PG_DIRTY | LPC_PG_WRITEBACK)) == LPC_PG_WRITEBACK,
		      "page 0 under writeback, not dirty: flags 0x%x", fl);
		lpc_page_put(p);
	}

	REQUIRE(pthread_create(&st, NULL, s_main, NULL) == 0);			/* 3 */
	tst_sleep_us(200000);
	if (!CHECK(!atomic_load(&s_done), "lpc_fsync returned (%d) with W's write in flight",
		   atomic_load(&s_rc)))
		fprintf(stderr, "lpc debug: rule FSYNC-INFLIGHT violated: lpc_fsync returned "
				"before a write begun before it ended (regress_fsync_inflight)\n");

	tst_stop_release();							/* 4 */
	pthread_join(wt, &wrc);
	pthread_join(st, NULL);
	tst_stop_disarm();
	CHECK_EQ((intptr_t)wrc, 0, "W's pass");
	CHECK_EQ(atomic_load(&s_rc), 0, "lpc_fsync");
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), 4 * PS, "size");
	CHECK_EQ(tst_first_diff(back, data, PS), -1, "page 0 on disk after lpc_fsync");
	CHECK_EQ(lpc_file_close(file), 0, "close");
	tst_cache_destroy(c);
	return tst_finish();
}
