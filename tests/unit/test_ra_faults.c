/* SPDX-License-Identifier: MIT */
/*
 * test_ra_faults.c - readahead windows meeting faults, end of file, writes
 * and their submitter's fate (filemap/run.c U1-U5, readahead.c S1-S3 A1-A3,
 * ra_worker.c Q0-Q4), with the I/O fault hook (io/io.h lpc_io_fault_set)
 * and a gated backend (gate_io.h) that holds a window's read in flight:
 *  - a device that cuts a window's request in the middle: the pages before
 *    the cut are cached and right, the pages after it are dropped, never
 *    failed (run.c U5a: nobody asked for them): the caller that asked for
 *    the window's first page gets its bytes, a waiter of a page after the
 *    cut reads that page alone and gets it, nothing else after the cut is
 *    cached, and the next call reads those pages again, right;
 *  - an asynchronous window (a marker hit) whose read fails: the hit's
 *    reader gets its page, a waiter on the window reads its page alone and
 *    gets it (or that read's own error), nothing of the window is cached,
 *    the next read gets the page;
 *  - a short transfer inside the file's last page (cut before the end of
 *    the file): the pages before it good, the last page not taken from it:
 *    its waiter reads it alone, right;
 *  - windows that cross end of file (the synchronous one and a marker's):
 *    one read, the last page zero-filled past the end, nothing cached past
 *    it (lpc_page_get there: -ENXIO), no read error;
 *  - the file grown by lpc_pwrite while a window that reaches end of file
 *    is in flight, and a whole page of a window written while in flight:
 *    the writes' bytes win over the window's (no stale zeros or older
 *    bytes), the hole between the old end and the write reads as zeros,
 *    and after lpc_fsync the kernel's file is exactly that;
 *  - lpc_truncate cutting the file inside a window in flight, then growing
 *    it again: nothing the window read past the cut is visible (zeros);
 *  - the submitter of an asynchronous window that exits (pthread_exit) or
 *    blocks for ever right after its marker hit: another thread's read of a
 *    page of the window completes when the device completes it (the
 *    readahead thread reads and unlocks it, ra_worker.c Q2), within a
 *    bounded wait: a hang fails the test instead of blocking it;
 *  - the last close of a file with a marker's window in flight waits for
 *    it (no frame freed while the device writes into it), then returns 0
 *    and every frame can be had again.
 * Both lookup modes (the marker cases: LOCKED mode reads its windows in the
 * marker's reader, so its submitter cannot leave before the read ends);
 * both backends (the .sync twin).
 *
 * Usage: test_ra_faults [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/gate_io.h"
#include "../common/write_test.h"
#include "filemap/filemap.h"

#define PS 4096u
#define BOUND_S 20 /* the longest a read of a completed window may take */

static int nfile;

struct tfile {
	struct lpc_file *f;
	struct tst_expect e;
	char path[600];
};

static struct lpc_cache *mk_cache(unsigned frames, int mode)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)frames * PS;
	cfg.page_size = PS;
	cfg.readahead_max_kb = 512; /* windows of up to 128 pages, as counted here */
	cfg.io_backend = tst_disk_backend(LPC_IO_SYNC);
	cfg.lookup_mode = mode;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	return c;
}

static void mk_file(struct lpc_cache *c, struct tfile *t, uint64_t size, int oflags)
{
	char name[32];

	snprintf(name, sizeof(name), "raf%d", nfile++);
	t->e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 313 + (uint64_t)nfile,
				    .size = size, .ps = PS };
	REQUIRE(tst_make_file(name, size, t->e.salt, t->path, sizeof(t->path)) == 0);
	t->e.id = tst_file_id(t->path);
	t->f = tst_file_open(c, t->path, oflags);
}

static bool cached(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	if (lpc_page_find(f, index, &p) != 0)
		return false;
	lpc_page_put(p);
	return true;
}

/* Joins th within BOUND_S; a thread still running then is a hang: the test
 * fails at once rather than wait for it. */
static void join_bounded(pthread_t th, const char *what)
{
	struct timespec ts;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += BOUND_S;
	rc = pthread_timedjoin_np(th, NULL, &ts);
	if (rc) {
		CHECK(false, "%s did not finish within %d s (a page locked for ever?)", what,
		      BOUND_S);
		tst_finish();
		_exit(1);
	}
}

static void *quiesce_main(void *arg)
{
	lpc_ra_quiesce(arg);
	return NULL;
}

/* Waits (bounded) until no window of f is queued or being read by the
 * readahead thread (ra_worker.c Q3), so its pages are all settled. */
static void quiesce_bounded(struct lpc_file *f)
{
	pthread_t th;

	REQUIRE(pthread_create(&th, NULL, quiesce_main, f) == 0);
	join_bounded(th, "the readahead thread's windows of the file");
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

static void start_getter(struct tst_getter *g, pthread_t *th, struct lpc_file *f, uint64_t index)
{
	*g = (struct tst_getter){ .f = f, .index = index };
	REQUIRE(pthread_create(th, NULL, tst_getter_main, g) == 0);
	/* The read's reference and the getter's (gate_io.h). */
	CHECK(tst_wait_page_holders(f, index, 2, 10000), "a getter waits on page %" PRIu64, index);
}

static void arm_short(struct lpc_cache *c, uint64_t id, size_t bytes)
{
	struct lpc_io_fault flt = { .ops = LPC_IO_READ, .file_id = id, .count = 1,
				    .short_bytes = bytes };

	REQUIRE(lpc_io_fault_set(&c->io, &flt) == 0);
}

/* A sync window [1, 33) (the miss of page 1 after a miss of page 0) cut by
 * the device after 10 pages: pages 1..10 good, 11..32 dropped, not failed
 * (nobody asked for them): a waiter of one of them reads it itself. */
static void t_cut_window(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	unsigned char *buf = malloc(32 * PS);
	struct tst_getter g1, g2;
	struct lpc_page *p;
	struct preader a;
	struct lpc_stats s0, s1;
	pthread_t ta, t1, t2;
	struct tfile t;
	uint64_t bad = 0;

	REQUIRE(buf);
	mk_file(c, &t, 200 * PS, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS, "page 0: a candidate stream");
	lpc_stats(c, &s0);
	arm_short(c, t.e.id, 10 * PS);
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	CHECK_EQ(lpc_page_find(t.f, 32, &p), -EAGAIN, "the window [1, 33) in flight");
	start_getter(&g1, &t1, t.f, 5);
	start_getter(&g2, &t2, t.f, 20);
	tst_gate_open(0);
	join_bounded(ta, "the window's caller");
	join_bounded(t1, "the waiter of page 5");
	join_bounded(t2, "the waiter of page 20");
	CHECK_EQ(a.r, PS, "the caller asked for page 1 only: its bytes, no error");
	CHECK(tst_check_page(&t.e, 1, buf), "page 1");
	if (CHECK_EQ(g1.rc, 0, "page 5, before the cut")) {
		CHECK(tst_check_page(&t.e, 5, lpc_page_data(g1.p)), "page 5's bytes");
		lpc_page_put(g1.p);
	}
	if (CHECK_EQ(g2.rc, 0, "page 20, after the cut: its waiter reads it alone, no error")) {
		CHECK(tst_check_page(&t.e, 20, lpc_page_data(g2.p)), "page 20's bytes");
		lpc_page_put(g2.p);
	}
	for (uint64_t i = 1; i <= 10; i++)
		CHECK(cached(t.f, i), "page %" PRIu64 " before the cut cached", i);
	for (uint64_t i = 11; i < 33; i++)
		CHECK(i == 20 || !cached(t.f, i), "page %" PRIu64 " after the cut cached", i);
	lpc_stats(c, &s1);
	CHECK(s1.read_errors > s0.read_errors, "the cut counted as a read error");
	/* The next call reads them again. */
	CHECK_EQ(lpc_pread(t.f, buf, 22 * PS, 11 * PS), (long long)(22 * PS), "read again");
	CHECK(tst_check_bytes(&t.e, 11 * PS, buf, 22 * PS, &bad), "bad at %" PRIu64, bad);
	CHECK_EQ(lpc_file_close(t.f), 0);
	lpc_io_fault_set(&c->io, NULL);
	tst_cache_destroy(c);
	free(buf);
}

/* The stream 0, 1 (window [1, 33), marker on 2), then the marker hit starts
 * [33, 97) whose read the gate fails: nobody asked for its pages, so none of
 * them fails; a waiter of page 40 reads it alone: the device's answer to
 * that read is its answer (it fails while the device fails every read). */
static void t_async_window_eio(int mode, bool once)
{
	struct lpc_cache *c = mk_cache(256, mode);
	unsigned char buf[PS];
	struct tst_getter g;
	struct preader a;
	pthread_t ta, tg;
	struct tfile t;

	mk_file(c, &t, 200 * PS, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), PS);
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = 2 * PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the marker's window reached the device");
	start_getter(&g, &tg, t.f, 40);
	if (once)
		tst_gate_open_once(EIO); /* the window's read fails, later reads pass */
	else
		tst_gate_open(EIO); /* every read fails */
	join_bounded(ta, "the marker's reader");
	join_bounded(tg, "the waiter of page 40");
	quiesce_bounded(t.f);
	tst_gate_clear_error();
	CHECK_EQ(a.r, PS, "the marker's reader gets its page, not the window's error");
	CHECK(tst_check_page(&t.e, 2, buf), "page 2");
	if (once) {
		if (CHECK_EQ(g.rc, 0, "the waiter of page 40 reads it alone: no error of the window's")) {
			CHECK(tst_check_page(&t.e, 40, lpc_page_data(g.p)), "page 40's bytes");
			lpc_page_put(g.p);
		}
	} else {
		CHECK_EQ(g.rc, -EIO, "the waiter of page 40: its own read of it failed too");
		if (g.rc == 0)
			lpc_page_put(g.p);
	}
	for (uint64_t i = 33; i < 97; i++)
		CHECK((once && i == 40) || !cached(t.f, i),
		      "page %" PRIu64 " of the failed window cached", i);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 40 * PS), PS, "page 40 read again");
	CHECK(tst_check_page(&t.e, 40, buf), "page 40 right");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* A window [1, 21) to end of file (20 pages + 300 bytes), its read cut by
 * the device inside the last page, before the end of the file: the last
 * page is not taken from it (no zeros for its bytes), and its waiter reads
 * it alone, right. */
static void t_short_last_page(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	const uint64_t size = 20 * PS + 300;
	unsigned char buf[PS];
	struct tst_getter g;
	struct preader a;
	pthread_t ta, tg;
	struct tfile t;

	mk_file(c, &t, size, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	arm_short(c, t.e.id, 19 * PS + 100); /* the run starts at page 1 */
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000));
	start_getter(&g, &tg, t.f, 20);
	tst_gate_open(0);
	join_bounded(ta, "the window's caller");
	join_bounded(tg, "the waiter of the last page");
	CHECK_EQ(a.r, PS);
	CHECK(tst_check_page(&t.e, 1, buf), "page 1");
	if (CHECK_EQ(g.rc, 0, "the last page, cut before the end of the file: read again")) {
		CHECK(tst_check_page(&t.e, 20, lpc_page_data(g.p)), "its 300 bytes, zeros after");
		lpc_page_put(g.p);
	}
	CHECK(cached(t.f, 19), "page 19, before the cut");
	lpc_io_fault_set(&c->io, NULL);
	CHECK_EQ(lpc_invalidate(t.f, 20 * PS, 1), 1, "the last page dropped");
	CHECK_EQ(lpc_pread(t.f, buf, PS, 20 * PS), 300, "the last page read again");
	CHECK(tst_check_bytes(&t.e, 20 * PS, buf, 300, &(uint64_t){ 0 }), "its bytes");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* Windows across end of file: the sync one ([1, 33) cut to [1, 21) by a
 * file of 20 pages + 100 bytes) and a marker's ([33, 97) cut to [33, 41)
 * by 40 pages + 100 bytes, a waiter on its last page). */
static void t_eof_windows(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	unsigned char buf[PS];
	struct lpc_stats s0, s1;
	struct tst_getter g;
	struct preader a;
	struct lpc_page *p;
	pthread_t ta, tg;
	struct tfile t, u;

	mk_file(c, &t, 20 * PS + 100, O_RDONLY);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), PS);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 2, "two reads: page 0, the window to the end");
	CHECK_EQ(s1.read_pages - s0.read_pages, 21, "the window stops at the end of the file");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0);
	if (CHECK_EQ(lpc_page_find(t.f, 20, &p), 0, "the last page cached")) {
		CHECK(tst_check_page(&t.e, 20, lpc_page_data(p)), "zeros past the end");
		lpc_page_put(p);
	}
	CHECK(!cached(t.f, 21), "nothing past the end");
	CHECK_EQ(lpc_page_get(t.f, 21, 0, &p), -ENXIO);

	mk_file(c, &u, 40 * PS + 100, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(u.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(u.f, buf, PS, PS), PS);
	lpc_stats(c, &s0);
	tst_gate_close();
	a = (struct preader){ .f = u.f, .off = 2 * PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the marker's window reached the device");
	start_getter(&g, &tg, u.f, 40);
	tst_gate_open(0);
	join_bounded(ta, "the marker's reader");
	join_bounded(tg, "the waiter of the last page");
	quiesce_bounded(u.f);
	CHECK_EQ(a.r, PS);
	if (CHECK_EQ(g.rc, 0, "the window's last page")) {
		CHECK(tst_check_page(&u.e, 40, lpc_page_data(g.p)), "zeros past the end");
		lpc_page_put(g.p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "one read for the window");
	CHECK_EQ(s1.read_pages - s0.read_pages, 8, "[33, 41): cut at the end");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0, "end of file is no error");
	CHECK(!cached(u.f, 41), "nothing past the end");
	CHECK_EQ(lpc_page_get(u.f, 41, 0, &p), -ENXIO);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_file_close(u.f), 0);
	tst_cache_destroy(c);
}

struct pwriter {
	struct lpc_file *f;
	const void *buf;
	size_t len;
	uint64_t off;
	ssize_t r;
};

static void *pwriter_main(void *arg)
{
	struct pwriter *w = arg;

	w->r = lpc_pwrite(w->f, w->buf, w->len, w->off);
	return NULL;
}

/* The window [1, 21) to end of file (20 pages + 100 bytes) held in flight;
 * one writer extends the file from inside its last page (a hole of 100
 * bytes, then 2 pages), another writes page 10 of the window whole. */
static void t_grow_in_flight(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	const uint64_t size0 = 20 * PS + 100, woff = 20 * PS + 200, wlen = 2 * PS;
	const uint64_t size1 = woff + wlen;
	unsigned char *x = malloc(wlen), *y = malloc(PS), *buf = malloc(size1 + PS);
	unsigned char *want = calloc(1, size1);
	struct pwriter w1, w2;
	struct preader a;
	pthread_t ta, tw1, tw2;
	struct tfile t;

	REQUIRE(x && y && buf && want);
	mk_file(c, &t, size0, O_RDWR);
	tst_file_bytes(t.e.salt, 0, want, size0);
	memset(x, 0xa7, wlen);
	memset(y, 0x5c, PS);
	memcpy(want + woff, x, wlen);
	memcpy(want + 10 * PS, y, PS);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	w1 = (struct pwriter){ .f = t.f, .buf = x, .len = wlen, .off = woff };
	w2 = (struct pwriter){ .f = t.f, .buf = y, .len = PS, .off = 10 * PS };
	REQUIRE(pthread_create(&tw1, NULL, pwriter_main, &w1) == 0);
	REQUIRE(pthread_create(&tw2, NULL, pwriter_main, &w2) == 0);
	/* Each writer waits on its in-flight page (the run's reference, the
	 * writer's). */
	CHECK(tst_wait_page_holders(t.f, 20, 2, 10000), "the extending writer waits on page 20");
	CHECK(tst_wait_page_holders(t.f, 10, 2, 10000), "the page writer waits on page 10");
	tst_gate_open(0);
	join_bounded(ta, "the window's caller");
	join_bounded(tw1, "the extending writer");
	join_bounded(tw2, "the page writer");
	CHECK_EQ(a.r, PS);
	CHECK_EQ(w1.r, (long long)wlen);
	CHECK_EQ(w2.r, PS);
	memset(buf, 0xee, size1 + PS);
	CHECK_EQ(lpc_pread(t.f, buf, size1 + PS, 0), (long long)size1, "the grown size");
	{
		int64_t d = tst_first_diff(buf, want, size1);

		CHECK(d < 0, "byte %lld after the writes: 0x%02x, want 0x%02x (the hole: [%llu, %llu))",
		      (long long)d, d < 0 ? 0 : buf[d], d < 0 ? 0 : want[d],
		      (unsigned long long)size0, (unsigned long long)woff);
	}
	CHECK_EQ(lpc_fsync(t.f), 0);
	CHECK(tst_kernel_equals(t.path, want, size1), "the kernel's file after lpc_fsync");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(x);
	free(y);
	free(buf);
	free(want);
}

struct truncer {
	struct lpc_file *f;
	uint64_t size;
	int rc;
};

static void *truncer_main(void *arg)
{
	struct truncer *k = arg;

	k->rc = lpc_truncate(k->f, k->size);
	return NULL;
}

/* The window [1, 33) held in flight while lpc_truncate cuts the file to
 * 10 pages + 50 bytes (it waits for the window's pages), then grows it back
 * to 40 pages: nothing the window read past the cut is visible (zeros from
 * the cut on), the kernel's file after lpc_fsync agrees. */
static void t_trunc_in_flight(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	const uint64_t cut = 10 * PS + 50, size = 40 * PS;
	unsigned char *buf = malloc(size + PS), *want = calloc(1, size);
	struct truncer k;
	struct preader a;
	pthread_t ta, tk;
	struct tfile t;

	REQUIRE(buf && want);
	mk_file(c, &t, size, O_RDWR);
	tst_file_bytes(t.e.salt, 0, want, cut);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	tst_gate_close();
	a = (struct preader){ .f = t.f, .off = PS, .len = PS, .buf = buf };
	REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	k = (struct truncer){ .f = t.f, .size = cut };
	REQUIRE(pthread_create(&tk, NULL, truncer_main, &k) == 0);
	tst_sleep_us(100000); /* the truncate reaches the window's pages */
	tst_gate_open(0);
	join_bounded(ta, "the window's caller");
	join_bounded(tk, "the truncate");
	CHECK_EQ(a.r, PS, "page 1, inside the new size");
	CHECK_EQ(k.rc, 0);
	CHECK_EQ(lpc_truncate(t.f, size), 0, "grown back");
	memset(buf, 0xee, size + PS);
	CHECK_EQ(lpc_pread(t.f, buf, size + PS, 0), (long long)size);
	{
		int64_t d = tst_first_diff(buf, want, size);

		CHECK(d < 0, "byte %lld after the cut at %llu and the regrowth: 0x%02x, want 0x%02x",
		      (long long)d, (unsigned long long)cut, d < 0 ? 0 : buf[d], d < 0 ? 0 : want[d]);
	}
	CHECK_EQ(lpc_fsync(t.f), 0);
	CHECK(tst_kernel_equals(t.path, want, size), "the kernel's file after lpc_fsync");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
	free(want);
}

/* An asynchronous window [33, 97) whose request comes back one page long
 * (a later part of it failed: io.h) on a file lpc keeps the size of (an
 * lpc_pwrite of its last page, with the bytes it had): the short count is
 * where the storage's file goes on, so pages 34.. are not zeros but
 * dropped; the reader of page 40 reads it alone and gets its bytes.
 * (Before: the window's pages past the count were cached as zeros, and
 * page 40's reader got zeros, with read_errors 0.) */
static void t_short_window_kept(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	struct lpc_io_fault flt = { .ops = LPC_IO_READ, .count = 1, .short_bytes = PS };
	unsigned char buf[PS];
	struct tfile t;

	mk_file(c, &t, 200 * PS, O_RDWR);
	tst_file_bytes(t.e.salt, 199 * PS, buf, PS);
	CHECK_EQ(lpc_pwrite(t.f, buf, PS, 199 * PS), PS, "lpc keeps the size");
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), PS, "window [1, 33), marker on 2");
	flt.file_id = t.e.id;
	REQUIRE(lpc_io_fault_set(&c->io, &flt) == 0);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 2 * PS), PS, "the marker: window [33, 97), cut");
	memset(buf, 0xee, PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 40 * PS), PS);
	CHECK(tst_check_page(&t.e, 40, buf), "page 40: the file's bytes, not zeros");
	quiesce_bounded(t.f);
	lpc_io_fault_set(&c->io, NULL);
	for (uint64_t i = 33; i < 97; i++) {
		struct lpc_page *p;

		if (lpc_page_find(t.f, i, &p) == 0) {
			CHECK(i == 33 || i == 40, "page %" PRIu64 " past the cut cached", i);
			CHECK(tst_check_page(&t.e, i, lpc_page_data(p)), "page %" PRIu64, i);
			lpc_page_put(p);
		}
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* The bridge (run.c U1): a page cached within the first run_bridge (B)
 * pages of a readahead run does not end it; the request reads that page's
 * bytes into the discard buffer.  Cached before the window: page 2
 * (written by lpc), page 5, page B + 3, page e + 3 and [e + B - 1,
 * e + B + 2) (e = B + 4, the second run's first page).  The storage's bytes
 * of pages 5 and e + 3 are then changed behind lpc's back, so a request
 * that wrote a hole's bytes into its page (not the discard buffer) would
 * show there.  WILLNEED over the file: three requests, [0, B + 3) over 2
 * and 5, [e, e + B - 1) over e + 3, and [e + B + 2, 128); every cached
 * page keeps lpc's bytes; after lpc_fsync the file holds page 2's.  With
 * `eio`, one request fails (the first that reaches the device; several
 * threads read the runs): its pages are dropped, never failed (nobody
 * asked for them), the cached pages it bridged are untouched, and reading
 * the file again gets every byte. */
static void t_bridge(int mode, bool eio)
{
	struct lpc_cache *c = mk_cache(1024, mode);
	const uint64_t np = 128;
	unsigned char *buf = malloc(np * PS), *want = malloc(np * PS), *other = malloc(PS);
	struct lpc_stats s0, d;
	uint64_t b, e, run[3][2], cached_hole[7];
	unsigned failed_runs = 0;
	struct tfile t;
	int fd;

	REQUIRE(buf && want && other);
	mk_file(c, &t, np * PS, O_RDWR);
	b = t.f->files->run_bridge;
	REQUIRE(b >= 6 && 2 * b + 8 < np, "run_bridge %" PRIu64 " pages", b);
	e = b + 4;
	memcpy(cached_hole, (uint64_t[7]){ 2, 5, b + 3, e + 3, e + b - 1, e + b, e + b + 1 },
	       sizeof(cached_hole));
	memcpy(run, (uint64_t[3][2]){ { 0, b + 3 }, { e, e + b - 1 }, { e + b + 2, np } },
	       sizeof(run));
	tst_file_bytes(t.e.salt, 0, want, np * PS);
	/* The cached pages, read with readahead off (no window yet). */
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_RANDOM), 0);
	for (unsigned k = 1; k < 7; k++)
		CHECK_EQ(lpc_pread(t.f, buf, PS, cached_hole[k] * PS), PS);
	memset(want + 2 * PS, 0x5c, PS);
	CHECK_EQ(lpc_pwrite(t.f, want + 2 * PS, PS, 2 * PS), PS);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_NORMAL), 0);
	fd = open(t.path, O_WRONLY);
	REQUIRE(fd >= 0);
	memset(other, 0xd1, PS);
	REQUIRE(pwrite(fd, other, PS, 5 * PS) == PS && pwrite(fd, other, PS, (e + 3) * PS) == PS);
	close(fd);
	if (eio) {
		struct lpc_io_fault flt = { .ops = LPC_IO_READ, .file_id = t.e.id, .count = 1,
					    .err = EIO };

		REQUIRE(lpc_io_fault_set(&c->io, &flt) == 0);
	}
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_WILLNEED), 0);
	quiesce_bounded(t.f);
	lpc_io_fault_set(&c->io, NULL);
	lpc_stats(c, &d);
	CHECK_EQ(d.reads - s0.reads, 3, "three requests, two of them over cached pages");
	CHECK_EQ(d.read_pages - s0.read_pages, np - 7, "holes are not counted as pages read");
	CHECK_EQ(d.read_errors - s0.read_errors, eio ? 1 : 0);
	for (unsigned k = 0; k < 7; k++)
		CHECK(cached(t.f, cached_hole[k]), "page %" PRIu64 " (cached before) cached",
		      cached_hole[k]);
	for (unsigned r = 0; r < 3; r++) {
		unsigned in = 0, all = 0;

		for (uint64_t i = run[r][0]; i < run[r][1]; i++) {
			bool hole = false;

			for (unsigned k = 0; k < 7; k++)
				hole |= cached_hole[k] == i;
			if (hole)
				continue;
			all++;
			in += cached(t.f, i);
		}
		CHECK(in == all || (eio && in == 0), "run [%" PRIu64 ", %" PRIu64 "): %u of %u cached",
		      run[r][0], run[r][1], in, all);
		failed_runs += in == 0;
	}
	CHECK_EQ(failed_runs, eio ? 1 : 0, "the failed request's run dropped, the others cached");
	memset(buf, 0xee, np * PS);
	CHECK_EQ(lpc_pread(t.f, buf, np * PS, 0), (long long)(np * PS));
	{
		int64_t x = tst_first_diff(buf, want, np * PS);

		CHECK(x < 0, "byte %lld (page %lld): 0x%02x, want 0x%02x", (long long)x,
		      (long long)(x / PS), x < 0 ? 0 : buf[x], x < 0 ? 0 : want[x]);
	}
	CHECK_EQ(lpc_fsync(t.f), 0);
	fd = open(t.path, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK(pread(fd, buf, 5 * PS, 0) == 5 * PS && tst_first_diff(buf, want, 5 * PS) < 0,
	      "the file's pages 0-4 after lpc_fsync: page 2 lpc's");
	close(fd);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
	free(want);
	free(other);
}

/* Joins th within `secs`; a thread still running then fails the test. */
static void join_within(pthread_t th, int secs, const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	if (pthread_timedjoin_np(th, NULL, &ts)) {
		CHECK(false, "%s did not return within %d s", what, secs);
		tst_finish();
		_exit(1);
	}
}

/*
 * A shrinking lpc_truncate that waits (its step 2) for a page past the cut
 * that the application keeps locked does not hold up reads of the file
 * (lpc_filemap_trunc_from): a read of page 0, far below the cut, returns
 * after one read; a run below the cut, one read; the page the cut is in
 * returns its bytes below the cut, cached with zeros after it; a read past
 * the cut is end of file.  (Before: every miss on the file dropped its read
 * and read again while the truncate waited, without returning.)
 */
static void t_trunc_held(int mode)
{
	struct lpc_cache *c = mk_cache(256, mode);
	const uint64_t cut = 40 * PS + 100;
	unsigned char *buf = malloc(10 * PS);
	struct lpc_stats s0, s1;
	struct lpc_page *u, *p;
	struct truncer k;
	struct preader a;
	pthread_t tk, ta;
	struct tfile t;
	uint64_t bad = 0, end;

	REQUIRE(buf);
	mk_file(c, &t, 64 * PS, O_RDWR);
	REQUIRE(lpc_page_get(t.f, 50, 0, &u) == 0);
	lpc_page_lock(u);
	k = (struct truncer){ .f = t.f, .size = cut };
	REQUIRE(pthread_create(&tk, NULL, truncer_main, &k) == 0);
	/* The truncate is under way (trunc_seq odd, its size stored) and
	 * waits for page 50's lock. */
	end = tst_now_ns() + 10000000000ull;
	while ((!(atomic_load(&t.f->trunc_seq) & 1) || atomic_load(&t.f->size) != cut) &&
	       tst_now_ns() < end)
		tst_sleep_us(1000);
	REQUIRE(atomic_load(&t.f->trunc_seq) & 1, "the truncate started");
	tst_sleep_us(50000);

	struct {
		uint64_t off;
		size_t len;
		ssize_t want;
		const char *what;
	} reads[] = {
		{ 0, PS, PS, "page 0, far below the cut" },
		{ 30 * PS, 10 * PS, 10 * PS, "a run of pages 30-39, below the cut" },
		{ 40 * PS, PS, 100, "page 40, the cut inside it" },
		{ 45 * PS, PS, 0, "page 45, past the cut" },
	};
	for (unsigned i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		lpc_stats(c, &s0);
		a = (struct preader){ .f = t.f, .off = reads[i].off, .len = reads[i].len, .buf = buf };
		REQUIRE(pthread_create(&ta, NULL, preader_main, &a) == 0);
		join_within(ta, 5, reads[i].what);
		lpc_stats(c, &s1);
		CHECK_EQ(a.r, (long long)reads[i].want, "%s", reads[i].what);
		if (a.r > 0)
			CHECK(tst_check_bytes(&t.e, reads[i].off, buf, (size_t)a.r, &bad),
			      "%s: bad at %" PRIu64, reads[i].what, bad);
		CHECK_EQ(s1.reads - s0.reads, reads[i].want ? 1 : 0, "%s: its reads",
			 reads[i].what);
	}
	if (CHECK_EQ(lpc_page_find(t.f, 40, &p), 0, "the cut's page cached")) {
		CHECK(tst_check_bytes(&t.e, 40 * PS, lpc_page_data(p), 100, &bad), "below the cut");
		for (size_t i = 100; i < PS; i++)
			if (((unsigned char *)lpc_page_data(p))[i]) {
				CHECK(false, "byte %zu of the cut's page is not zero", i);
				break;
			}
		lpc_page_put(p);
	}
	CHECK(atomic_load(&t.f->trunc_seq) & 1, "the truncate still waited meanwhile");
	lpc_page_unlock(u);
	lpc_page_put(u);
	join_bounded(tk, "the truncate, page 50 unlocked");
	CHECK_EQ(k.rc, 0);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
	free(buf);
}

/*
 * Readahead never makes a demand read fail or wait (page/pool.h,
 * lpc_pool_ra_reserve): a 97-frame cache, the application pinning 33 pages
 * of file A whose marker (page 2, met by the pin's slow path) starts the
 * window [33, 97), held in flight at the gate; lpc_page_get of file B then
 * gets a free frame at once (no direct reclaim, no wait, no failure), and
 * the reclaimer was not woken to evict A's pages read ahead a moment before
 * (none wasted, none read twice).  (Before: the window took every free
 * frame and its failed allocations woke the reclaimer: the get waited
 * alloc_wait_ms and failed -ENOMEM, and ra_wasted was 30.)
 */
static void t_ra_reserve(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *pins[64], *p = NULL;
	struct lpc_stats s0, s1;
	unsigned char buf[PS];
	struct tfile a, b;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 97 * PS;
	cfg.page_size = PS;
	cfg.readahead_max_kb = 512; /* windows of up to 128 pages, as counted here */
	cfg.io_backend = tst_disk_backend(LPC_IO_SYNC);
	cfg.alloc_wait_ms = 300;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	mk_file(c, &a, 1024 * PS, O_RDONLY);
	mk_file(c, &b, 1024 * PS, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(a.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(a.f, buf, PS, PS), PS, "window [1, 33), marker on 2");
	tst_gate_close();
	tst_gate_hold_from(a.e.id, 33); /* the marker's window only */
	CHECK_EQ(lpc_pin(a.f, 0, 33 * PS, LPC_PIN_READ, pins, 64), 33, "pages 0-32 pinned");
	REQUIRE(tst_gate_wait_entered(1, 10000), "the marker's window reached the device");
	CHECK(atomic_load(&c->pool.nfree) >= lpc_pool_ra_reserve(&c->pool),
	      "the window left %u free frames, its reserve is %u",
	      (unsigned)atomic_load(&c->pool.nfree), lpc_pool_ra_reserve(&c->pool));
	lpc_stats(c, &s0);
	rc = lpc_page_get(b.f, 500, 0, &p);
	lpc_stats(c, &s1);
	if (CHECK_EQ(rc, 0, "a demand read with a window in flight")) {
		CHECK(tst_check_page(&b.e, 500, lpc_page_data(p)), "its bytes");
		lpc_page_put(p);
	}
	CHECK_EQ(s1.direct_reclaims - s0.direct_reclaims, 0, "it took a free frame");
	CHECK_EQ(s1.alloc_failures - s0.alloc_failures, 0);
	CHECK_EQ(s1.ra_wasted, 0, "no page read ahead was evicted unused");
	CHECK_EQ(s1.read_pages, 34, "pages 0-32, B's page 500: none read twice");
	tst_gate_open(0);
	lpc_unpin(pins, 33, LPC_PIN_READ);
	quiesce_bounded(a.f);
	CHECK_EQ(lpc_file_close(a.f), 0);
	CHECK_EQ(lpc_file_close(b.f), 0);
	tst_cache_destroy(c);
}

/* The submitter A of an asynchronous window, which then exits or blocks. */
struct submitter {
	struct lpc_file *f;
	bool exits;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int step;    /* 1: the stream is set up; 2: go; 3: the hit returned */
	bool release;
	ssize_t r;
	unsigned char buf[PS];
};

static void sub_set(struct submitter *s, int step)
{
	pthread_mutex_lock(&s->mu);
	s->step = step;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static bool sub_wait(struct submitter *s, int step)
{
	uint64_t end = tst_now_ns() + 10000000000ull;
	bool ok;

	pthread_mutex_lock(&s->mu);
	while (s->step < step && tst_now_ns() < end) {
		pthread_mutex_unlock(&s->mu);
		tst_sleep_us(1000);
		pthread_mutex_lock(&s->mu);
	}
	ok = s->step >= step;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;

	(void)lpc_pread(s->f, s->buf, PS, 0);
	(void)lpc_pread(s->f, s->buf, PS, PS); /* the window [1, 33), marker on 2 */
	sub_set(s, 1);
	sub_wait(s, 2);
	s->r = lpc_pread(s->f, s->buf, PS, 2 * PS); /* the hit: [33, 97) submitted */
	sub_set(s, 3);
	if (s->exits)
		pthread_exit(NULL);
	/* Blocked for ever, as far as lpc can tell (the test lets it go at
	 * the end). */
	pthread_mutex_lock(&s->mu);
	while (!s->release)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/*
 * No head-of-line blocking between files (ra_worker.c Q2's per-file cap):
 * file A's marker window is held at the device (the gate holds A's reads
 * from page 33 on: a hung NFS server); file B's marker window, queued
 * after it, is read by another readahead thread, and a read of B's page 40
 * returns while A's read is still held.  (Before: one thread read the
 * queue in order; B's read waited for A's device.)
 */
static void t_no_head_of_line(void)
{
	struct lpc_cache *c = mk_cache(4096, LPC_LOOKUP_LOCKLESS);
	unsigned char buf[PS];
	struct tst_getter g;
	struct tfile a, b;
	pthread_t tg;

	mk_file(c, &a, 1024 * PS, O_RDONLY);
	mk_file(c, &b, 1024 * PS, O_RDONLY);
	tst_gate_install(c);
	for (uint64_t i = 0; i < 2; i++) {
		CHECK_EQ(lpc_pread(a.f, buf, PS, i * PS), PS);
		CHECK_EQ(lpc_pread(b.f, buf, PS, i * PS), PS, "window [1, 33), marker on 2");
	}
	tst_gate_close();
	tst_gate_hold_from(a.e.id, 33);
	CHECK_EQ(lpc_pread(a.f, buf, PS, 2 * PS), PS, "A's marker: its window held");
	REQUIRE(tst_gate_wait_entered(1, 10000), "A's window reached the device");
	CHECK_EQ(lpc_pread(b.f, buf, PS, 2 * PS), PS, "B's marker: its window queued");
	g = (struct tst_getter){ .f = b.f, .index = 40 };
	REQUIRE(pthread_create(&tg, NULL, tst_getter_main, &g) == 0);
	join_bounded(tg, "B's read of page 40 while A's window is held");
	if (CHECK_EQ(g.rc, 0, "B's page 40")) {
		CHECK(tst_check_page(&b.e, 40, lpc_page_data(g.p)), "page 40's bytes");
		lpc_page_put(g.p);
	}
	CHECK_EQ(tst_gate_entered(), 1, "A's read still held");
	tst_gate_open(0);
	quiesce_bounded(a.f);
	CHECK_EQ(lpc_file_close(a.f), 0);
	CHECK_EQ(lpc_file_close(b.f), 0);
	tst_cache_destroy(c);
}

static void t_submitter_gone(bool exits)
{
	struct lpc_cache *c = mk_cache(256, LPC_LOOKUP_LOCKLESS);
	struct submitter s = { .exits = exits, .mu = PTHREAD_MUTEX_INITIALIZER,
			       .cv = PTHREAD_COND_INITIALIZER };
	struct tst_getter g;
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	pthread_t ta, tg;
	struct tfile t;

	mk_file(c, &t, 200 * PS, O_RDONLY);
	tst_gate_install(c);
	s.f = t.f;
	REQUIRE(pthread_create(&ta, NULL, submitter_main, &s) == 0);
	REQUIRE(sub_wait(&s, 1), "the submitter set up its stream");
	lpc_stats(c, &s0);
	tst_gate_close();
	sub_set(&s, 2);
	REQUIRE(sub_wait(&s, 3), "the marker hit returned with its window in flight");
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	CHECK_EQ(s.r, PS);
	if (exits)
		join_bounded(ta, "the exiting submitter");
	CHECK_EQ(lpc_page_find(t.f, 60, &p), -EAGAIN, "the window in flight");
	start_getter(&g, &tg, t.f, 60);
	tst_gate_open(0); /* the device completes */
	join_bounded(tg, "the read of a page of the gone submitter's window");
	if (CHECK_EQ(g.rc, 0, "page 60 of the window")) {
		CHECK(tst_check_page(&t.e, 60, lpc_page_data(g.p)), "page 60's bytes");
		lpc_page_put(g.p);
	}
	quiesce_bounded(t.f);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.ra_async - s0.ra_async, 1);
	CHECK_EQ(tst_gate_entered(), 1, "nobody read the window again");
	for (uint64_t i = 33; i < 97; i++)
		CHECK(cached(t.f, i), "page %" PRIu64 " of the window cached", i);
	if (!exits) {
		pthread_mutex_lock(&s.mu);
		s.release = true;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
		join_bounded(ta, "the blocked submitter, let go");
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

struct closer {
	struct lpc_file *f;
	_Atomic bool done;
	int rc;
};

static void *closer_main(void *arg)
{
	struct closer *k = arg;

	k->rc = lpc_file_close(k->f);
	atomic_store(&k->done, true);
	return NULL;
}

/* The last close of a file while a marker's window of it is held in flight
 * (its submitter gone back to other work): the close waits for the window
 * (ra_worker.c Q3: no frame is freed while the device writes into it), and
 * returns 0 once the device completes; the cache then has every frame. */
static void t_close_in_flight(void)
{
	struct lpc_cache *c = mk_cache(256, LPC_LOOKUP_LOCKLESS);
	unsigned char buf[PS];
	struct closer k = { 0 };
	struct lpc_stats s;
	pthread_t tk;
	struct tfile t;

	mk_file(c, &t, 200 * PS, O_RDONLY);
	tst_gate_install(c);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 0), PS);
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), PS);
	tst_gate_close();
	CHECK_EQ(lpc_pread(t.f, buf, PS, 2 * PS), PS, "the marker hit returns at once");
	REQUIRE(tst_gate_wait_entered(1, 10000), "the window's read reached the device");
	k.f = t.f;
	REQUIRE(pthread_create(&tk, NULL, closer_main, &k) == 0);
	tst_sleep_us(200000);
	CHECK(!atomic_load(&k.done), "the last close returned with a window of its file in flight");
	tst_gate_open(0);
	join_bounded(tk, "the last close after the window completed");
	CHECK_EQ(k.rc, 0);
	CHECK_EQ(tst_frames_allocatable(c, 256), 256, "every frame back after the close");
	lpc_stats(c, &s);
	CHECK_EQ(s.frames, 256);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 240);
	tst_require_tmpdir();
	for (int mode = 0; mode < 2; mode++) {
		printf("lookup %s\n", mode == LPC_LOOKUP_LOCKED ? "locked" : "lockless");
		TST_RUN(t_cut_window(mode));
		TST_RUN(t_async_window_eio(mode, false));
		TST_RUN(t_async_window_eio(mode, true));
		TST_RUN(t_short_last_page(mode));
		TST_RUN(t_eof_windows(mode));
		TST_RUN(t_grow_in_flight(mode));
		TST_RUN(t_trunc_in_flight(mode));
		TST_RUN(t_short_window_kept(mode));
		TST_RUN(t_trunc_held(mode));
		TST_RUN(t_bridge(mode, false));
		TST_RUN(t_bridge(mode, true));
	}
	TST_RUN(t_ra_reserve());
	TST_RUN(t_no_head_of_line());
	TST_RUN(t_submitter_gone(true));
	TST_RUN(t_submitter_gone(false));
	TST_RUN(t_close_in_flight());
	return tst_finish();
}
