/* SPDX-License-Identifier: MIT */
/*
 * regress_wpin.c - write pins (src/writeback/wpin.c) against a truncate and
 * against writeback, two stories made deterministic by yield points.
 *
 * Story "cut", G stopped at WP1 (its fast path has pinned page 1, not yet
 * locked it):
 *   1. The file is 2 pages, page 1 cached.  G write-pins [P + 0, P + 100)
 *      (P: the page size): lpc's size covers it, so the fast path pins page
 *      1 (P1-P5), and G is stopped before WP1.
 *   2. lpc_truncate(P + 50) runs whole: it stores the size, locks page 1
 *      (free), zeroes its tail past 50, unlocks.
 *   3. G resumes: WP1 locks page 1; WP4 sees lpc's size below the range's
 *      end and sends the call to the slow path, whose SZ1 raises the size to
 *      P + 100 again before the holder writes.
 *   G then writes 100 bytes and unpins: lpc_pread must return all 100.
 *   Without WP4 (the mutant wpin-no-cut) the holder writes past lpc's size
 *   into the page the truncate cut: the read returns 50 bytes, and the
 *   story names rule WPIN-CUT.
 * Story "stable", W (an lpc_fsync) stopped at K4W with page 0 in WRITEBACK:
 *   G write-pins page 0: WP3 waits for the write's end (stable pages), and
 *   G is granted the pin only after W's K5.  Without WP3 (the mutant
 *   wpin-no-stable) rule WPIN-WRITEBACK fires at the pin.
 *
 * Built only with LPC_DEBUG (yield points WP1, K4W).
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/write_test.h"
#include "../common/yield_stop.h"
#include "filemap/filemap.h"

static const size_t PS = 4096;

struct g {
	struct lpc_file *f;
	uint64_t off;
	size_t len;
	bool stop;
	_Atomic int done;
	int rc;
};

static void *g_main(void *arg)
{
	struct g *g = arg;
	struct lpc_page *p[2];
	struct iovec iov[2];
	int n, k;

	if (g->stop)
		tst_stop_me();
	n = lpc_pin(g->f, g->off, g->len, LPC_PIN_WRITE, p, 2);
	g->rc = n;
	if (n > 0) {
		k = lpc_pin_iov(p, (unsigned)n, g->off, g->len, iov);
		for (int i = 0; i < k; i++)
			memset(iov[i].iov_base, 0x5A, iov[i].iov_len);
		lpc_unpin(p, (unsigned)n, LPC_PIN_WRITE);
	}
	atomic_store(&g->done, 1);
	return NULL;
}

static void story_cut(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f = tst_file_open(c, path, O_RDWR);
	struct g g = { .f = f, .off = PS, .len = 100, .stop = true };
	unsigned char buf[200];
	pthread_t gt;
	ssize_t got;

	REQUIRE(lpc_pread(f, buf, 1, PS) == 1, "page 1 cached");
	tst_stop_arm(LPC_YP_WP1);
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "G stopped at WP1");
	CHECK_EQ(lpc_truncate(f, PS + 50), 0, "truncate between P4 and WP1");
	tst_stop_release();
	pthread_join(gt, NULL);
	tst_stop_disarm();
	CHECK_EQ(g.rc, 1, "G's write pin");
	got = lpc_pread(f, buf, sizeof(buf), PS);
	if (!CHECK_EQ(got, 100, "rule WPIN-CUT violated: the write pin's bytes past the "
				"truncate's cut are not in lpc's size"))
		return;
	for (int i = 0; i < 100; i++)
		if (!CHECK_EQ(buf[i], 0x5A, "byte %d", i))
			break;
	CHECK_EQ(lpc_file_close(f), 0);
}

struct w {
	struct lpc_file *f;
	int rc;
};

static void *w_main(void *arg)
{
	struct w *w = arg;

	tst_stop_me();
	w->rc = lpc_fsync(w->f);
	return NULL;
}

static void story_stable(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f = tst_file_open(c, path, O_RDWR);
	struct g g = { .f = f, .off = 10, .len = 20 };
	struct w w = { .f = f };
	unsigned char want[2 * 4096];
	pthread_t gt, wt;

	tst_file_bytes(3, 0, want, sizeof(want));
	CHECK_EQ(lpc_pwrite(f, "y", 1, 0), 1, "page 0 dirty");
	want[0] = 'y';
	tst_stop_arm(LPC_YP_K4W);
	REQUIRE(pthread_create(&wt, NULL, w_main, &w) == 0, "W");
	REQUIRE(tst_stop_wait(), "W stopped at K4W, page 0 in WRITEBACK");
	{
		struct lpc_page *p = NULL;

		REQUIRE(lpc_page_find(f, 0, &p) == 0 && p, "page 0 cached");
		CHECK(atomic_load(&p->flags) & LPC_PG_WRITEBACK, "page 0 under writeback");
		lpc_page_put(p);
	}
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	tst_sleep_us(100000);
	CHECK(!atomic_load(&g.done), "the write pin waits for the write in flight");
	tst_stop_release();
	pthread_join(wt, NULL);
	pthread_join(gt, NULL);
	tst_stop_disarm();
	CHECK_EQ(w.rc, 0, "fsync");
	CHECK_EQ(g.rc, 1, "write pin");
	memset(want + 10, 0x5A, 20);
	CHECK_EQ(lpc_fsync(f), 0);
	CHECK(tst_kernel_equals(path, want, sizeof(want)), "the file");
	CHECK_EQ(lpc_file_close(f), 0);
}

int main(int argc, char **argv)
{
	struct lpc_cache *c;
	char path[600];

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		c = tst_wcache_create(64, PS, tst_write_backends[b], 60000, 0, 0);
		tst_wfile("cut", path, sizeof(path), 2 * PS, 3);
		TST_RUN(story_cut(c, path));
		tst_wfile("stable", path, sizeof(path), 2 * PS, 3);
		TST_RUN(story_stable(c, path));
		tst_cache_destroy(c);
	}
	tst_rm_dir();
	return tst_finish();
}
