/* SPDX-License-Identifier: MIT */
/*
 * regress_run_release.c - story: a run's pages, once unlocked, are not held
 * by the run (run.c U5d), so a drop or an invalidate that comes while the
 * run's thread is off its CPU takes them.
 *
 * test_drop_behind's t_self_fed failed once in CI ("rule SELF-FED
 * violated": 3 refills for a stream that drops), and then about one run in
 * 80 beside a CPU hog: a readahead thread had unlocked the 64 pages of its
 * run and was descheduled before it dropped its references (run_done
 * released them only after the whole run, and after the failed pages'
 * deletes).  The scanner read on; when its drop behind it (readahead.c A5)
 * came to those pages they were held (ref 2), so the drop kept them all,
 * the stream counted as not feeding itself and asked for a refill (A4),
 * and the pages were left to the evictor.  The interleaving, both
 * backends and both lookup modes, readahead off:
 *   1. G reads pages 0-7 of a file of 8, none cached, with one lpc_pread:
 *      one run of 8 pages (run.c U1-U4), page 0 for G's call;
 *   2. G is parked at M5R: its good pages unlocked and UPTODATE, the
 *      LOCKED rwlock left, before the failed pages' deletes;
 *   3. this thread invalidates pages 1-7: all 7 go (the run holds none of
 *      them any more).  Broken: 0 went, every page still held by G;
 *   4. G goes on; its call returns the file's 8 pages (pages 1-7 read
 *      again where they had gone).
 * Deterministic: G is parked by a yield-point hook.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"

#define PS 4096u
#define NPG 8u
#define SALT 11u

struct reader {
	struct lpc_file *f;
	unsigned char buf[NPG * PS];
	ssize_t rc;
};

static void *g_main(void *arg)
{
	struct reader *r = arg;

	tst_stop_me();
	r->rc = lpc_pread(r->f, r->buf, sizeof(r->buf), 0);
	return NULL;
}

static void story(int backend, int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	static struct reader g;
	unsigned char want[NPG * PS];
	struct lpc_cache *c;
	pthread_t gt;
	char path[512];
	int dropped;

	tst_readahead_kb = LPC_READAHEAD_OFF; /* the run is the call's alone */
	c = tst_cache_create(64 * PS, PS, backend, mode);
	REQUIRE(tst_make_file("run_release", NPG * PS, SALT, path, sizeof(path)) == 0, "file");
	tst_file_bytes(SALT, 0, want, sizeof(want));
	memset(&g, 0, sizeof(g));
	g.f = tst_file_open(c, path, O_RDONLY);
	/* 1-2 */
	tst_stop_arm(LPC_YP_M5R);
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "%s: G parked at M5R", name);
	/* 3 */
	dropped = lpc_invalidate(g.f, PS, (NPG - 1) * PS);
	/* 4 */
	tst_stop_release();
	pthread_join(gt, NULL);
	tst_stop_disarm();
	CHECK_EQ(dropped, (int)(NPG - 1),
		 "rule RUN-RELEASE violated: %s: the pages a run had unlocked were still held "
		 "by it (run.c U5d)",
		 name);
	CHECK(g.rc == (ssize_t)sizeof(g.buf), "%s: G's read: %zd", name, g.rc);
	CHECK(!memcmp(g.buf, want, sizeof(want)), "%s: G's bytes are the file's", name);
	CHECK_EQ(lpc_file_close(g.f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	story(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	story(LPC_IO_SYNC, LPC_LOOKUP_LOCKED);
	story(LPC_IO_URING, LPC_LOOKUP_LOCKLESS);
	story(LPC_IO_URING, LPC_LOOKUP_LOCKED);
	return tst_finish();
}
