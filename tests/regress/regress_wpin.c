/* SPDX-License-Identifier: MIT */
/*
 * regress_wpin.c - write pins (src/writeback/wpin.c) against a truncate and
 * against writeback, two stories made deterministic by yield points.
 *
 * Story "cut", G stopped at WP1 (its fast path has counted its page in
 * f->wpins, WC1, and pinned page 1, not yet locked it):
 *   1. The file is 2 pages, page 1 cached.  G write-pins [P + 0, P + 100)
 *      (P: the page size): lpc's size covers it, so the fast path pins page
 *      1 (P1-P5), and G is stopped before WP1.
 *   2. T calls lpc_truncate(P + 50): it must sleep at WC6 (G's page is
 *      counted) without storing its size.  Without the gate (the mutant
 *      wpin-no-gate) it runs whole, and the story names rule WPIN-GATE.
 *   3. G resumes, writes 100 bytes and unpins; then T cuts: lpc_pread
 *      returns 50 bytes, all G's.  (Before WC1/WC6 the truncate ran whole
 *      at step 2, and WP4 sent G to the slow path; WP4 still re-checks.)
 * Story "stable", W (an lpc_fsync) stopped at K4W with page 0 in WRITEBACK:
 *   G write-pins page 0: WP3 waits for the write's end (stable pages), and
 *   G is granted the pin only after W's K5.  Without WP3 (the mutant
 *   wpin-no-stable) rule WPIN-WRITEBACK fires at the pin.
 *
 * Story "close", the last lpc_file_close from another thread while page 0
 * is write-pinned (clean: no flush waits for it):
 *   1. H write-pins page 0; C calls the last close, which must sleep at ZW
 *      (file.c) on f->wpins (WAITERS set: the story waits for it).
 *   2. C has not returned; H writes "KEPT" through the pin and unpins (WC3).
 *   3. C returns 0; a reopen reads "KEPT" (the close flushed the unpin's
 *      dirty page).  Without ZW the close returned at once, dropped the
 *      locked page with its bytes, and the unpin used a freed f.
 * Story "truncate-holder", a truncate while H holds a write pin:
 *   1. H write-pins page 0 (the file is 4 pages, all cached); T calls
 *      lpc_truncate(100), which must sleep at WC6 before any lock (WAITERS).
 *   2. H, still holding page 0, calls lpc_pwrite on page 3 and write-pins
 *      page 3 (both need trunc_lock, which T does not hold yet): they
 *      return.  Before WC6, T held trunc_lock and size_lock and waited for
 *      page 0's lock: both hung forever.
 *   3. H writes 10 bytes into page 0, unpins both; T returns 0 and lpc's
 *      size is 100, page 0's first 10 bytes H's.
 * "cut" and "stable" need LPC_DEBUG (yield points WP1, K4W); "close" and
 * "truncate-holder" run in every build.
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

struct trunc {
	struct lpc_file *f;
	uint64_t size;
	_Atomic int done;
	int rc;
};

static void *trunc_main(void *arg)
{
	struct trunc *tr = arg;

	tr->rc = lpc_truncate(tr->f, tr->size);
	atomic_store(&tr->done, 1);
	return NULL;
}

/* Waits (at most ~ms ms) until someone sleeps on f->wpins, or *done. */
static bool wpins_sleeper(struct lpc_file *f, _Atomic int *done, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (atomic_load(&f->wpins) & LPC_WPINS_WAITERS)
			return true;
		if (done && atomic_load(done))
			return false;
		tst_sleep_us(1000);
	}
	return false;
}

static void story_cut(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f = tst_file_open(c, path, O_RDWR);
	struct g g = { .f = f, .off = PS, .len = 100, .stop = true };
	struct trunc tr = { .f = f, .size = PS + 50 };
	unsigned char buf[200];
	pthread_t gt, tt;
	ssize_t got;

	REQUIRE(lpc_pread(f, buf, 1, PS) == 1, "page 1 cached");
	tst_stop_arm(LPC_YP_WP1);
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "G stopped at WP1");
	REQUIRE(pthread_create(&tt, NULL, trunc_main, &tr) == 0, "T");
	wpins_sleeper(f, &tr.done, 2000);
	CHECK(!atomic_load(&tr.done), "rule WPIN-GATE violated: a truncate ran while a write "
				       "pin of the page it cuts was being granted");
	tst_stop_release();
	pthread_join(gt, NULL);
	pthread_join(tt, NULL);
	tst_stop_disarm();
	CHECK_EQ(g.rc, 1, "G's write pin");
	CHECK_EQ(tr.rc, 0, "T's truncate");
	got = lpc_pread(f, buf, sizeof(buf), PS);
	if (!CHECK_EQ(got, 50, "the truncate came after the pin"))
		return;
	for (int i = 0; i < 50; i++)
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

struct closer {
	struct lpc_file *f;
	_Atomic int done;
	int rc;
};

static void *closer_main(void *arg)
{
	struct closer *cl = arg;

	cl->rc = lpc_file_close(cl->f);
	atomic_store(&cl->done, 1);
	return NULL;
}

static void story_close(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f = tst_file_open(c, path, O_RDWR);
	struct closer cl = { .f = f };
	struct lpc_page *p = NULL;
	unsigned char buf[8];
	pthread_t ct;

	CHECK_EQ(lpc_pread(f, buf, 1, 0), 1, "page 0 cached, clean");
	REQUIRE(lpc_pin(f, 0, PS, LPC_PIN_WRITE, &p, 1) == 1, "H's write pin of page 0");
	REQUIRE(pthread_create(&ct, NULL, closer_main, &cl) == 0, "C");
	CHECK(wpins_sleeper(f, &cl.done, 20000),
	      "rule WPIN-GATE violated: the last close does not wait for the write pin (ZW)");
	CHECK(!atomic_load(&cl.done), "the last close waits for the unpin");
	memcpy(lpc_page_data(p), "KEPT", 4);
	lpc_unpin(&p, 1, LPC_PIN_WRITE);
	pthread_join(ct, NULL);
	CHECK_EQ(cl.rc, 0, "the last close");
	f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pread(f, buf, 4, 0), 4);
	CHECK(!memcmp(buf, "KEPT", 4), "the pin's bytes survive the close (got %.4s)",
	      (const char *)buf);
	CHECK_EQ(lpc_file_close(f), 0);
	{
		int fd = open(path, O_RDONLY);

		REQUIRE(fd >= 0, "open");
		CHECK_EQ(pread(fd, buf, 4, 0), 4);
		CHECK(!memcmp(buf, "KEPT", 4), "the kernel's file has the pin's bytes");
		close(fd);
	}
}

static void story_truncate_holder(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f = tst_file_open(c, path, O_RDWR);
	struct trunc tr = { .f = f, .size = 100 };
	struct lpc_page *p0 = NULL, *p3 = NULL;
	unsigned char buf[PS];
	pthread_t tt;

	for (int i = 0; i < 4; i++)
		CHECK_EQ(lpc_pread(f, buf, PS, (uint64_t)i * PS), (ssize_t)PS, "page %d cached", i);
	REQUIRE(lpc_pin(f, 0, PS, LPC_PIN_WRITE, &p0, 1) == 1, "H's write pin of page 0");
	REQUIRE(pthread_create(&tt, NULL, trunc_main, &tr) == 0, "T");
	CHECK(wpins_sleeper(f, &tr.done, 20000),
	      "rule WPIN-GATE violated: the truncate does not wait for the write pins (WC6)");
	CHECK(!atomic_load(&tr.done), "the truncate waits for the unpin");
	CHECK_EQ(lpc_pwrite(f, "x", 1, 3 * PS), 1, "H's lpc_pwrite of page 3 (no deadlock)");
	CHECK_EQ(lpc_pin(f, 3 * PS, 10, LPC_PIN_WRITE, &p3, 1), 1,
		 "H's write pin of page 3 (no deadlock)");
	CHECK(!atomic_load(&tr.done), "the truncate still waits");
	memset(lpc_page_data(p0), 'A', 10);
	lpc_unpin(&p3, 1, LPC_PIN_WRITE);
	lpc_unpin(&p0, 1, LPC_PIN_WRITE);
	pthread_join(tt, NULL);
	CHECK_EQ(tr.rc, 0, "the truncate");
	CHECK_EQ(atomic_load(&f->wpins), 0u, "no write pin, no CUT, no waiter left");
	CHECK_EQ(lpc_pread(f, buf, PS, 0), 100, "lpc's size is the truncate's");
	for (int i = 0; i < 10; i++)
		if (!CHECK_EQ(buf[i], 'A', "byte %d", i))
			break;
	CHECK_EQ(lpc_file_close(f), 0);
}

int main(int argc, char **argv)
{
	struct lpc_cache *c;
	char path[600];

	tst_init(argc, argv, 60);
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		c = tst_wcache_create(64, PS, tst_write_backends[b], 60000, 0, 0);
		if (LPC_DEBUG) {
			tst_wfile("cut", path, sizeof(path), 2 * PS, 3);
			TST_RUN(story_cut(c, path));
			tst_wfile("stable", path, sizeof(path), 2 * PS, 3);
			TST_RUN(story_stable(c, path));
		}
		tst_wfile("close", path, sizeof(path), 2 * PS, 3);
		TST_RUN(story_close(c, path));
		tst_wfile("truncate-holder", path, sizeof(path), 4 * PS, 3);
		TST_RUN(story_truncate_holder(c, path));
		tst_cache_destroy(c);
	}
	tst_rm_dir();
	return tst_finish();
}
