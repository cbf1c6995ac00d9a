/* SPDX-License-Identifier: MIT */
/*
 * test_read_run.c - multi-page misses (filemap/run.c): a call that covers
 * several absent pages reads each run of them with one I/O.
 *  - a cold lpc_pread of a range is one read per run_max pages (the cap is
 *    lpc_config.readahead_max_kb), every byte right; a cached page splits a
 *    run; lpc_pin's slow path reads its run the same way;
 *  - a run that crosses end of file stops there: one read, the last page
 *    zero-filled past the end, nothing cached past it;
 *  - a run in flight is ordinary pages in flight: each of its pages is in
 *    the index, locked (lpc_page_find: -EAGAIN), and a thread that wants any
 *    of them waits for the one read, then gets the page (a gated backend
 *    makes "in flight" a state the test reaches); a failed run fails every
 *    waiter of its pages with -EIO and caches nothing;
 *  - readahead_max_kb below a page is one page per read;
 *  - a window a marker hit started completes without its submitter: the
 *    hit returns with the read in flight, another thread waiting on one of
 *    its pages gets it when the device completes (ra_worker.c).
 * Both backends (the .sync twin), both lookup modes.
 *
 * Usage: test_read_run [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/gate_io.h"

#define PS 4096u

static int nfile;

struct tfile {
	struct lpc_file *f;
	struct tst_expect e;
	char path[600];
};

static struct lpc_cache *mk_cache(unsigned frames, int mode, uint32_t max_kb)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)frames * PS;
	cfg.page_size = PS;
	cfg.io_backend = tst_disk_backend(LPC_IO_SYNC);
	cfg.lookup_mode = mode;
	cfg.readahead_max_kb = max_kb;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	return c;
}

static void mk_file(struct lpc_cache *c, struct tfile *t, uint64_t size)
{
	char name[32];

	snprintf(name, sizeof(name), "run%d", nfile++);
	t->e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 77 + (uint64_t)nfile,
				    .size = size, .ps = PS };
	REQUIRE(tst_make_file(name, size, t->e.salt, t->path, sizeof(t->path)) == 0);
	t->e.id = tst_file_id(t->path);
	t->f = tst_file_open(c, t->path, O_RDONLY);
}

static bool cached(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	if (lpc_page_find(f, index, &p) != 0)
		return false;
	lpc_page_put(p);
	return true;
}

/* Cold pread of 40 pages with a cap of 16: reads 16 + 16 + 8; a cached page
 * in the middle of a range splits its run. */
static void t_runs(int mode)
{
	struct lpc_cache *c = mk_cache(128, mode, 16 * PS / 1024);
	unsigned char *buf = malloc(40 * PS);
	struct lpc_stats s0, s1;
	struct tfile t;
	uint64_t bad = 0;

	REQUIRE(buf);
	mk_file(c, &t, 128 * PS);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, 40 * PS, 0), (long long)(40 * PS));
	CHECK(tst_check_bytes(&t.e, 0, buf, 40 * PS, &bad), "bad at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 3, "40 pages, 16 a read");
	CHECK_EQ(s1.read_bytes - s0.read_bytes, 40 * PS);
	CHECK_EQ(s1.misses - s0.misses, 3, "one miss per run, the rest hits");
	for (uint64_t i = 0; i < 40; i++)
		CHECK(cached(t.f, i), "page %" PRIu64 " cached", i);
	CHECK(!cached(t.f, 40), "nothing read past the range");

	/* Page 45 cached splits 41..49 into 41-44 and 46-49. */
	CHECK_EQ(lpc_pread(t.f, buf, 10, 45 * PS + 3), 10);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, 9 * PS, 41 * PS), (long long)(9 * PS));
	CHECK(tst_check_bytes(&t.e, 41 * PS, buf, 9 * PS, &bad), "bad at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 2, "a cached page splits the run");

	/* lpc_pin's slow path: pages 100-109 absent (far from the stream the
	 * preads above started, which reads ahead from 46), one read. */
	{
		struct lpc_page *pages[16];

		lpc_stats(c, &s0);
		CHECK_EQ(lpc_pin(t.f, 100 * PS, 10 * PS, LPC_PIN_READ, pages, 16), 10);
		lpc_stats(c, &s1);
		CHECK_EQ(s1.reads - s0.reads, 1, "pin: one read for the run");
		for (unsigned i = 0; i < 10; i++)
			CHECK(tst_check_page(&t.e, 100 + i, lpc_page_data(pages[i])), "pin page %u", i);
		lpc_unpin(pages, 10, LPC_PIN_READ);
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
}

/* A run that crosses end of file: one read, zeros past the end in the last
 * page, nothing past it cached. */
static void t_eof(int mode)
{
	struct lpc_cache *c = mk_cache(64, mode, 0);
	const uint64_t size = 5 * PS + 123;
	unsigned char *buf = malloc(16 * PS);
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;
	uint64_t bad = 0;

	REQUIRE(buf);
	mk_file(c, &t, size);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, 16 * PS, 0), (long long)size);
	CHECK(tst_check_bytes(&t.e, 0, buf, size, &bad), "bad at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "one read to end of file");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0, "end of file is no error");
	if (CHECK_EQ(lpc_page_find(t.f, 5, &p), 0, "the last page cached")) {
		CHECK(tst_check_page(&t.e, 5, lpc_page_data(p)), "zeros past the end");
		lpc_page_put(p);
	}
	CHECK(!cached(t.f, 6), "nothing past the end");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
}

struct preader {
	struct lpc_file *f;
	uint64_t off;
	size_t len;
	void *buf;
	ssize_t r;
};

static void *preader_main(void *arg)
{
	struct preader *a = arg;

	a->r = lpc_pread(a->f, a->buf, a->len, a->off);
	return NULL;
}

/* A run held at the gate: its pages are locked in the index; a getter of
 * its fourth page waits for the one read; opened with err: the getter gets
 * -EIO, nothing cached; opened clean: every page right. */
static void t_in_flight(int mode, int err)
{
	struct lpc_cache *c = mk_cache(64, mode, 0);
	unsigned char *buf = malloc(8 * PS);
	struct tst_getter g = { 0 };
	struct preader a = { 0 };
	struct lpc_stats s0, s1;
	pthread_t ta, tg;
	struct lpc_page *p;
	struct tfile t;
	uint64_t bad = 0;

	REQUIRE(buf);
	mk_file(c, &t, 16 * PS);
	tst_gate_install(c);
	lpc_stats(c, &s0);
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = 0, .len = 8 * PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the run reached the gate");
	for (uint64_t i = 0; i < 8; i++)
		CHECK_EQ(lpc_page_find(t.f, i, &p), -EAGAIN, "page %" PRIu64 " in flight", i);
	CHECK_EQ(lpc_page_find(t.f, 8, &p), -ENOENT, "the run ends with the range");
	g = (struct tst_getter){ .f = t.f, .index = 3 };
	REQUIRE(pthread_create(&tg, NULL, tst_getter_main, &g) == 0);
	CHECK(tst_wait_page_holders(t.f, 3, 1, 10000), "the getter waits on page 3");
	CHECK_EQ(tst_gate_entered(), 1, "the getter issued no read of its own");
	tst_gate_open(err);
	pthread_join(tg, NULL);
	if (err) {
		/* The preader's page 0 failed too: it gets -EIO (pages after it
		 * are read again only if it asks, and it stops at the error). */
		tst_gate_clear_error();
		pthread_join(ta, NULL);
		CHECK_EQ(a.r, -err, "the caller of the failed run");
		CHECK_EQ(g.rc, -err, "the waiter of page 3 shares the failure");
		for (uint64_t i = 0; i < 8; i++)
			CHECK(!cached(t.f, i), "page %" PRIu64 " of a failed run cached", i);
		lpc_stats(c, &s1);
		/* One failed read; two when the getter was counted as a holder
		 * between its increment and its slot re-check (gate_io.h,
		 * tst_wait_page_holders): it then missed and read again, and
		 * the gate failed that read too. */
		CHECK(s1.read_errors - s0.read_errors >= 1 && s1.read_errors - s0.read_errors <= 2,
		      "failed reads: %" PRIu64, s1.read_errors - s0.read_errors);
		CHECK_EQ(lpc_pread(t.f, buf, 8 * PS, 0), (long long)(8 * PS), "read again");
	} else {
		pthread_join(ta, NULL);
		CHECK_EQ(a.r, (long long)(8 * PS));
		if (CHECK_EQ(g.rc, 0)) {
			CHECK(tst_check_page(&t.e, 3, lpc_page_data(g.p)), "page 3 by its waiter");
			lpc_page_put(g.p);
		}
		lpc_stats(c, &s1);
		CHECK_EQ(s1.reads - s0.reads, 1, "one read for the run and its waiter");
	}
	CHECK(tst_check_bytes(&t.e, 0, buf, 8 * PS, &bad), "bad at %" PRIu64, bad);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
}

/*
 * Completion without the submitter (ra_worker.c): A's hit on the marker
 * inserts the next window locked and returns while the window's read is
 * still held at the gate; A never calls lpc again.  B, wanting a page of
 * that window, waits on its lock and gets it, right, when the device (the
 * gate) completes the read; nobody but the readahead thread read it.
 */
static void t_async_window(void)
{
	struct lpc_cache *c = mk_cache(256, LPC_LOOKUP_LOCKLESS, 0);
	unsigned char buf[PS];
	struct tst_getter g = { 0 };
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	pthread_t tb;
	struct tfile t;

	mk_file(c, &t, 200 * PS);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), PS, "window [1, 33), marker on 2");
	lpc_stats(c, &s0);
	tst_gate_close();
	/* A: the marker hit returns with the window's read held. */
	CHECK_EQ(lpc_pread(t.f, buf, PS, 2 * PS), PS, "A's read of the marker page");
	CHECK(tst_check_page(&t.e, 2, buf), "page 2");
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	CHECK_EQ(lpc_page_find(t.f, 33, &p), -EAGAIN, "the window is in flight");
	CHECK_EQ(lpc_page_find(t.f, 96, &p), -EAGAIN, "its last page too");
	/* B waits on page 40 of it. */
	g = (struct tst_getter){ .f = t.f, .index = 40 };
	REQUIRE(pthread_create(&tb, NULL, tst_getter_main, &g) == 0);
	CHECK(tst_wait_page_holders(t.f, 40, 1, 10000), "B waits on page 40");
	tst_gate_open(0); /* the device completes */
	pthread_join(tb, NULL);
	if (CHECK_EQ(g.rc, 0, "B got page 40")) {
		CHECK(tst_check_page(&t.e, 40, lpc_page_data(g.p)), "page 40's bytes");
		lpc_page_put(g.p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.ra_async - s0.ra_async, 1);
	CHECK_EQ(s1.reads - s0.reads, 1, "one read: the readahead thread's");
	CHECK_EQ(tst_gate_entered(), 1);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* A cap below one page is one page per read. */
static void t_cap_small(void)
{
	struct lpc_cache *c = mk_cache(64, LPC_LOOKUP_LOCKLESS, 1);
	unsigned char *buf = malloc(4 * PS);
	struct lpc_stats s0, s1;
	struct tfile t;

	REQUIRE(buf);
	mk_file(c, &t, 8 * PS);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, 4 * PS, 0), (long long)(4 * PS));
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 4, "readahead_max_kb 1: a page per read");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (int mode = 0; mode < 2; mode++) {
		TST_RUN(t_runs(mode));
		TST_RUN(t_eof(mode));
		TST_RUN(t_in_flight(mode, 0));
		TST_RUN(t_in_flight(mode, EIO));
	}
	TST_RUN(t_cap_small());
	TST_RUN(t_async_window());
	return tst_finish();
}
