/* SPDX-License-Identifier: MIT */
/*
 * test_readahead.c - readahead (filemap/readahead.c) with exact counters, on
 * the null backend with 4 KiB pages (first window 32 pages, largest 128):
 *  - a sequential stream of 4 KiB preads: the second miss starts a window
 *    of 32 pages, the marker's hits read 64, 128, 128 ... to end of file;
 *    reads, read_pages, ra_windows, ra_async, ra_pages, ra_used exact, and
 *    only two misses;
 *  - two streams interleaved on one file each keep their own window;
 *  - strided, backward and random access read nothing ahead;
 *  - readahead off (LPC_READAHEAD_OFF): one read per page;
 *  - the default largest window by the cache's size;
 *  - read-ahead pages evicted unused count in ra_wasted, and the stream's
 *    next window is half its last;
 *  - lpc_fadvise: RANDOM (nothing ahead), SEQUENTIAL (the largest window at
 *    once), WILLNEED (the range in windows, then hits; in a full cache no
 *    eviction), DONTNEED (dropped), and its -EINVAL cases;
 *  - a scan of a file 4x a full cache reads whole windows (the reclaimer's
 *    refill for readahead makes room for the next window);
 *  - two windows of one sequential reader in flight at once: window N's
 *    read held at a gate, the reader that reaches its first page (the
 *    marker, set as the page was inserted) starts window N+1 before it
 *    waits (readahead.c A1-A2);
 *  - two interleaved streams, their windows held at the device, each keep
 *    their next window in flight within readahead's share (ra_worker.c
 *    QS1-QS2: windows split, none cut);
 *  - every byte read is the file's (the null backend's pattern).
 * CLOCK2's scan resistance with readahead on is test_evict_scan's (it runs
 * with the default configuration).
 *
 * Usage: test_readahead [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/readv_by_read.h"
#include "cache/cache.h"

#define PS 4096u

static int nfile;

static struct lpc_cache *mk_cache(unsigned frames, uint32_t ra_kb)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)frames * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = ra_kb;
	cfg.readahead_max_kb = 512; /* the largest window: 128 pages */
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	return c;
}

struct tf {
	struct lpc_file *f;
	struct tst_expect e;
	char path[600];
};

static void mk_file(struct lpc_cache *c, struct tf *t, uint64_t pages)
{
	char name[32];

	snprintf(name, sizeof(name), "ra%d", nfile++);
	REQUIRE(tst_make_sparse(name, pages * PS, t->path, sizeof(t->path)) == 0);
	t->e = (struct tst_expect){ .backend = LPC_IO_NULL, .id = tst_file_id(t->path),
				    .size = pages * PS, .ps = PS };
	t->f = tst_file_open(c, t->path, O_RDONLY);
}

/* One 4 KiB pread of page i, checked. */
static void read_page(struct tf *t, uint64_t i)
{
	unsigned char buf[PS];
	uint64_t bad = 0;

	if (CHECK_EQ(lpc_pread(t->f, buf, PS, i * PS), PS, "page %" PRIu64, i))
		CHECK(tst_check_bytes(&t->e, i * PS, buf, PS, &bad), "page %" PRIu64 " bad at %" PRIu64,
		      i, bad);
}

/* Flags of page `index` of f as the index holds it (no reference taken, no
 * REFERENCED set: not a hit). */
static uint32_t flags_of(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;
	uint32_t fl = 0;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	if (p)
		fl = lpc_page_flags(p);
	lpc_rcu_read_unlock();
	return fl;
}

static void delta(struct lpc_cache *c, const struct lpc_stats *s0, struct lpc_stats *d)
{
	struct lpc_stats s1;
	const uint64_t *a = (const uint64_t *)s0;
	uint64_t *b = (uint64_t *)&s1, *o = (uint64_t *)d;

	lpc_stats(c, &s1);
	for (size_t i = 0; i < sizeof(s1) / sizeof(uint64_t); i++)
		o[i] = b[i] - a[i];
}

/* Before the reader reaches a marker: waits (at most 10 s) until readahead's
 * share (ra_worker.c Q5) has room for the largest window next to the one
 * the reader is in.  The share counts a window's pages until its thread
 * reaps the whole batch and takes w->lock again (Q2), after its pages were
 * unlocked: a reader that has read past a window meanwhile reaches the next
 * marker with that window still counted, and is granted less (two windows
 * of 128 in flight and one consumed, 320 > 256): the window is cut, read in
 * two I/Os.  That lag is Q5's to allow (the grant is what is left), so the
 * exact counts below are asserted of the stream whose consumed windows were
 * given back; the wait ends by the deadline, not forever, when they never
 * are (the counts then fail). */
static void wait_share(struct lpc_file *f)
{
	struct lpc_ra_worker *w = &f->files->ra;
	uint64_t share = f->files->pool->nframes / 4, used = 0;

	for (int k = 0; k < 10000; k++) {
		pthread_mutex_lock(&w->lock);
		used = w->npages + w->respages;
		pthread_mutex_unlock(&w->lock);
		if (used + 128 <= share)
			return;
		usleep(1000);
	}
}

/* 400 pages one by one: miss 0 (a candidate), miss 1 (window [1, 33), marker
 * 2), marker hits at 2, 33, 97, 225 read [33, 97), [97, 225), [225, 353),
 * [353, 400); the marker at 353 finds the end of the file. */
static void t_sequential(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 400);
	lpc_stats(c, &s0);
	read_page(&t, 0);
	read_page(&t, 1);
	/* The window [1, 33): pages 2.. read ahead, inactive, unreferenced,
	 * RA until used; the marker on page 2. */
	for (uint64_t i = 2; i < 33; i++) {
		uint32_t fl = flags_of(t.f, i);

		CHECK((fl & (LPC_PG_UPTODATE | LPC_PG_RA | LPC_PG_REFERENCED | LPC_PG_ACTIVE)) ==
			      (LPC_PG_UPTODATE | LPC_PG_RA),
		      "rule RA-INACTIVE violated: read-ahead page %" PRIu64 " flags 0x%x", i, fl);
		CHECK(!!(fl & LPC_PG_RA_MARK) == (i == 2), "marker on page 2 only: %" PRIu64, i);
	}
	for (uint64_t i = 2; i < 400; i++) {
		if (flags_of(t.f, i) & LPC_PG_RA_MARK)
			wait_share(t.f);
		read_page(&t, i);
	}
	CHECK_EQ(lpc_file_close(t.f), 0); /* waits for the windows (Q3) */
	delta(c, &s0, &d);
	/* Two misses; more when the reader waited for a window the readahead
	 * thread was still reading (a wait on a page in flight is a miss). */
	CHECK(d.misses >= 2, "misses %" PRIu64, d.misses);
	CHECK_EQ(d.reads, 6, "reads: page 0, the sync window, 4 async");
	CHECK_EQ(d.read_pages, 400);
	CHECK_EQ(d.ra_windows, 5);
	CHECK_EQ(d.ra_async, 4, "windows the marker started");
	CHECK_EQ(d.ra_pages, 398, "pages no call had asked for");
	CHECK_EQ(d.ra_used, 398, "accuracy: all used");
	CHECK_EQ(d.ra_wasted, 0);
	tst_cache_destroy(c);
}

/* Two streams on one file, calls alternating: each ramps as if alone, but
 * a miss later: one thread's misses alternate between them, so each stream
 * starts through its candidate slot, at its third miss (readahead.c S3).
 * The first, [0, 400) of a file of 1400 pages, reads ahead to 610 (windows
 * [2, 34), [34, 98), [98, 226), [226, 354), [354, 482), [482, 610)); the
 * second, [1000, 1400), to the end of the file. */
static void t_two_streams(void)
{
	struct lpc_cache *c = mk_cache(2048, 0);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 1400);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 400; i++) {
		read_page(&t, i);
		read_page(&t, 1000 + i);
	}
	/* The last close waits for the readahead thread's windows of the
	 * file (ra_worker.c Q3): then every read is counted. */
	CHECK_EQ(lpc_file_close(t.f), 0);
	t.f = NULL;
	delta(c, &s0, &d);
	CHECK(d.misses >= 4, "two misses per stream, and waits: %" PRIu64, d.misses);
	CHECK_EQ(d.ra_windows, 11, "6 for the first, 5 for the second");
	CHECK_EQ(d.reads, 15, "pages 0, 1 of each alone, then the windows");
	CHECK_EQ(d.read_pages, 610 + 400);
	CHECK_EQ(d.ra_pages, 608 + 396);
	CHECK_EQ(d.ra_used, 397 + 397, "used: what the calls read");
	tst_cache_destroy(c);
}

/* Strided, backward and random: no window, one read per page. */
static void t_no_stream(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	uint64_t rng = tst_seed, recent[LPC_RA_STREAMS + 1] = { 0 };
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 1 << 16);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 200; i++)
		read_page(&t, 2 * i);
	for (uint64_t i = 0; i < 200; i++)
		read_page(&t, 10000 - i);
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_windows, 0, "strided and backward");
	CHECK_EQ(d.reads, 400);
	lpc_invalidate(t.f, 0, 0);
	lpc_stats(c, &s0);
	for (unsigned n = 0; n < 300;) {
		uint64_t i = tst_rnd(&rng) % (1 << 16);
		bool next = false;

		/* Random, but never the page after one of the last misses
		 * (that would be a sequential pair, by chance). */
		for (unsigned k = 0; k <= LPC_RA_STREAMS; k++)
			next = next || (n > k && i == recent[k] + 1) || (n > k && i == recent[k]);
		if (next)
			continue;
		memmove(recent + 1, recent, sizeof(recent) - sizeof(recent[0]));
		recent[0] = i;
		read_page(&t, i);
		n++;
	}
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_windows, 0, "random");
	CHECK_EQ(d.reads, d.misses, "a read per miss (a page drawn twice is a hit)");
	CHECK_EQ(d.read_pages, d.reads, "one page each");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static void t_off(void)
{
	struct lpc_cache *c = mk_cache(1024, LPC_READAHEAD_OFF);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 100);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 100; i++)
		read_page(&t, i);
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 100, "off: a read per page");
	CHECK_EQ(d.ra_windows + d.ra_pages, 0);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* readahead_max_kb 0: 1/8 of the cache within 512 KiB .. 8 MiB (cache.c,
 * LPC_READAHEAD_MAX_KB_DEFAULT): the floor, the eighth, the cap from a
 * 64 MiB cache on (96 MiB: 8 MiB, not 12), and in pages of another size;
 * and one read I/O's cap (LPC_READ_MAX_KB_DEFAULT, 2 MiB, or
 * readahead_max_kb when set below it). */
static void t_default_window(void)
{
	/* set: lpc_config.readahead_max_kb (0: the default); kb: the largest
	 * window and run_kb one read I/O's cap it gives. */
	static const struct {
		uint64_t cache_kib;
		uint32_t page, set, kb, run_kb;
	} want[] = {
		{ 2048, 4096, 0, 512, 2048 },	  { 32768, 4096, 0, 4096, 2048 },
		{ 65536, 4096, 0, 8192, 2048 },	  { 66560, 4096, 0, 8192, 2048 },
		{ 98304, 4096, 0, 8192, 2048 },	  { 131072, 4096, 0, 8192, 2048 },
		{ 262144, 4096, 0, 8192, 2048 },  { 98304, 16384, 0, 8192, 2048 },
		{ 24576, 16384, 0, 3072, 2048 },  { 65536, 4096, 1024, 1024, 1024 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct lpc_config cfg;
		struct lpc_cache *c = NULL;

		lpc_config_init(&cfg);
		cfg.cache_bytes = (size_t)(want[i].cache_kib << 10);
		cfg.page_size = want[i].page;
		cfg.readahead_max_kb = want[i].set;
		cfg.io_backend = LPC_IO_NULL;
		REQUIRE(lpc_cache_create(&cfg, &c) == 0 && c, "cache of %" PRIu64 " KiB",
			want[i].cache_kib);
		CHECK_EQ(c->files.ra_max, (uint64_t)want[i].kb * 1024 / want[i].page,
			 "largest window of a %" PRIu64 " KiB cache, pages of %u, set %u",
			 want[i].cache_kib, want[i].page, want[i].set);
		CHECK_EQ(c->files.run_max, (uint64_t)want[i].run_kb * 1024 / want[i].page,
			 "one read I/O's cap, %u KiB, in pages of %u", want[i].run_kb,
			 want[i].page);
		tst_cache_destroy(c);
	}
}

/* Pages read ahead then evicted unused: ra_wasted; the next window halves. */
static void t_wasted(void)
{
	enum { FR = 64 };
	struct lpc_cache *c = mk_cache(FR, 0);
	struct lpc_page *pg[FR];
	struct lpc_stats s0, d;
	unsigned n = 0;
	struct tf t;

	mk_file(c, &t, 400);
	read_page(&t, 0);
	read_page(&t, 1); /* window [1, 33): 2..32 read ahead, never used */
	lpc_stats(c, &s0);
	while (n < FR && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	CHECK_EQ(n, FR, "every frame, by eviction");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_wasted, 31, "pages 2..32 evicted unused");
	lpc_stats(c, &s0);
	read_page(&t, 33); /* where the stream expects its next window */
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_windows, 1);
	CHECK_EQ(d.ra_pages, 15, "a window of 16, half the last");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static bool cached(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	if (lpc_page_find(f, index, &p) != 0)
		return false;
	lpc_page_put(p);
	return true;
}

/* lpc_fadvise in each mode, and its errors. */
static void t_fadvise(void)
{
	/* 2048 frames: the WILLNEED below (300 pages) stays under the quarter
	 * of the frames that queued readahead may hold (ra_worker.c Q5). */
	struct lpc_cache *c = mk_cache(2048, 0);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 600);
	CHECK_EQ(lpc_fadvise(NULL, 0, 0, LPC_FADV_NORMAL), -EINVAL);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, 99), -EINVAL, "unknown advice");
	CHECK_EQ(lpc_fadvise(t.f, 2, UINT64_MAX, LPC_FADV_WILLNEED), -EINVAL, "off + len wraps");

	/* RANDOM: a sequential pass reads nothing ahead. */
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_RANDOM), 0);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 50; i++)
		read_page(&t, i);
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_windows, 0, "RANDOM");
	CHECK_EQ(d.reads, 50);

	/* SEQUENTIAL: the first miss reads the largest window. */
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_SEQUENTIAL), 0);
	lpc_stats(c, &s0);
	read_page(&t, 100);
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 1);
	CHECK_EQ(d.read_pages, 128, "SEQUENTIAL: 512 KiB at once");

	/* WILLNEED: the range's absent pages, a window (128 pages) a read;
	 * then the calls hit. */
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_NORMAL), 0);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_fadvise(t.f, 300 * PS, 300 * PS, LPC_FADV_WILLNEED), 0);
	/* WILLNEED returns with the reads started: the readahead threads'
	 * (ra_worker.c Q2); wait for them before counting. */
	lpc_ra_quiesce(t.f);
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 3, "300 pages in windows of 128");
	CHECK_EQ(d.read_pages, 300);
	CHECK_EQ(d.ra_pages, 300);
	CHECK_EQ(d.ra_used, 0);
	lpc_stats(c, &s0);
	for (uint64_t i = 300; i < 600; i++)
		read_page(&t, i);
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 0, "prefetched pages are hits");
	CHECK_EQ(d.ra_used, 300);

	/* DONTNEED drops what nobody holds. */
	CHECK_EQ(lpc_fadvise(t.f, 300 * PS, 10 * PS, LPC_FADV_DONTNEED), 0);
	for (uint64_t i = 300; i < 310; i++)
		CHECK(!cached(t.f, i), "page %" PRIu64 " dropped", i);
	CHECK(cached(t.f, 310), "past the range kept");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* WILLNEED over a range with one page cached reads every other page of it
 * (the window goes on past a cached page: run.c W1), and is counted as one
 * window: in one request when the page is within the run's bridge (page 1:
 * run.c U1, its bytes discarded, not counted as a page read), in two
 * around it when not (page 64); over a range all cached it reads and
 * counts nothing. */
static void t_willneed_split(void)
{
	static const uint64_t at[] = { 1, 64 };

	for (unsigned k = 0; k < 2; k++) {
		struct lpc_cache *c = mk_cache(1024, 0);
		struct lpc_stats s0, d;
		unsigned present = 0;
		struct tf t;

		mk_file(c, &t, 128);
		read_page(&t, at[k]);
		lpc_stats(c, &s0);
		CHECK_EQ(lpc_fadvise(t.f, 0, 128 * PS, LPC_FADV_WILLNEED), 0);
		lpc_ra_quiesce(t.f);
		delta(c, &s0, &d);
		for (uint64_t i = 0; i < 128; i++)
			present += cached(t.f, i);
		CHECK_EQ(present, 128, "page %" PRIu64 " cached before: the whole range after", at[k]);
		CHECK_EQ(d.read_pages, 127);
		CHECK_EQ(d.reads, at[k] < t.f->files->run_bridge ? 1 : 2,
			 "requests around cached page %" PRIu64, at[k]);
		CHECK_EQ(d.ra_windows, 1);
		CHECK_EQ(d.ra_async, 0, "no marker started it");
		lpc_stats(c, &s0);
		CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_WILLNEED), 0);
		lpc_ra_quiesce(t.f);
		delta(c, &s0, &d);
		CHECK_EQ(d.reads + d.ra_windows + d.ra_pages, 0, "all cached: nothing read or counted");
		CHECK_EQ(lpc_file_close(t.f), 0);
		tst_cache_destroy(c);
	}
}

/* A scan over a file with every 64th page cached keeps its stream: windows
 * skip the cached pages and read on (run.c W1, U6), so there are about as
 * many windows as without the cached pages, and a read per window and per
 * cached page inside it, not a restart at every cached page (before: a
 * window per gap, the ramp from 1 page each time, some 40 reads). */
static void t_stream_gaps(void)
{
	struct lpc_cache *c = mk_cache(2048, 0);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 1024);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_RANDOM), 0);
	for (uint64_t i = 0; i < 1024; i += 64)
		read_page(&t, i);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_NORMAL), 0);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 1024; i++)
		read_page(&t, i);
	CHECK_EQ(lpc_file_close(t.f), 0); /* Q3: every window counted */
	t.f = NULL;
	delta(c, &s0, &d);
	CHECK_EQ(d.read_pages, 1024 - 16, "every absent page read once");
	/* Windows 32, 64, 128, then 128 each: about 10; a run ends at each
	 * cached page inside a window: reads about windows + 16. */
	CHECK(d.ra_windows <= 12, "windows %" PRIu64 ": the stream kept", d.ra_windows);
	CHECK(d.reads <= d.ra_windows + 16 + 2, "reads %" PRIu64 " for 16 gaps", d.reads);
	CHECK_EQ(d.ra_wasted, 0);
	tst_cache_destroy(c);
}

/* Counters exact where a window reads nothing or is read by its marker's
 * reader:
 *  - a scan of a file whose pages 32.. are cached: the window [1, 33) reads
 *    31 pages, the marker's window finds nothing absent and counts nothing;
 *  - LOCKED mode: the marker's reader reads its windows itself: ra_windows
 *    counts them, ra_async does not;
 *  - pages read ahead then written whole by lpc_pwrite are used, not
 *    wasted (RA cleared, ra_used). */
static void t_counters_exact(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	struct lpc_config cfg;
	struct lpc_stats s0, d;
	unsigned char buf[PS];
	struct lpc_file *w;
	struct tf t;

	mk_file(c, &t, 128);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_RANDOM), 0);
	for (uint64_t i = 32; i < 128; i++)
		read_page(&t, i);
	CHECK_EQ(lpc_fadvise(t.f, 0, 0, LPC_FADV_NORMAL), 0);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 128; i++)
		read_page(&t, i);
	lpc_ra_quiesce(t.f);
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 2, "page 0, then [1, 32)");
	CHECK_EQ(d.read_pages, 32);
	CHECK_EQ(d.ra_windows, 1, "the marker's window had nothing to read");
	CHECK_EQ(d.ra_async, 0);
	CHECK_EQ(d.ra_pages, 30);
	CHECK_EQ(lpc_file_close(t.f), 0);

	/* Written whole: used. */
	mk_file(c, &t, 128);
	w = tst_file_open(c, t.path, O_RDWR);
	read_page(&t, 0);
	read_page(&t, 1); /* window [1, 33): 2..32 read ahead */
	lpc_stats(c, &s0);
	memset(buf, 7, sizeof(buf));
	for (uint64_t i = 3; i < 33; i++)
		CHECK_EQ(lpc_pwrite(w, buf, PS, i * PS), PS);
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_used, 30, "written whole: used");
	CHECK(!(flags_of(t.f, 3) & LPC_PG_RA), "page 3 no longer RA");
	CHECK_EQ(lpc_file_close(w), 0);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);

	/* LOCKED mode: t_sequential's stream, its marker windows read by the
	 * marker's reader. */
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1024 * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKED;
	cfg.readahead_max_kb = 512;
	c = NULL;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0 && c);
	mk_file(c, &t, 400);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 400; i++)
		read_page(&t, i);
	delta(c, &s0, &d);
	CHECK_EQ(d.ra_windows, 5, "as t_sequential");
	CHECK_EQ(d.ra_async, 0, "LOCKED: no window was asynchronous");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* Twelve streams on one file, calls in turn, each 512 pages apart: each
 * keeps its stream slot (LPC_RA_STREAMS, apart from the candidates) and
 * reads in about as many I/Os as alone (page 0, the windows 32, 64, 128,
 * 128, 128, 32: about 7); with 8 slots shared by streams and candidates
 * the twelve evicted each other's and restarted at every window (some 70
 * reads each). */
static void t_many_streams(void)
{
	enum { NS = 12, SPAN = 512 };
	struct lpc_cache *c = mk_cache(8192, 0);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, NS * SPAN);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < SPAN; i++)
		for (uint64_t k = 0; k < NS; k++)
			read_page(&t, k * SPAN + i);
	CHECK_EQ(lpc_file_close(t.f), 0);
	t.f = NULL;
	delta(c, &s0, &d);
	CHECK(d.reads <= NS * 10, "reads %" PRIu64 " for %d streams", d.reads, NS);
	CHECK_EQ(d.read_pages, NS * SPAN, "every page read once");
	tst_cache_destroy(c);
}

/* WILLNEED in a full cache takes free frames only: it never reclaims itself
 * (direct_reclaims stays), never waits, and returns 0.  The background
 * reclaimer, woken when no frame is free, may refill the free list
 * meanwhile, as kswapd does for the kernel's readahead. */
static void t_willneed_full(void)
{
	enum { FR = 64 };
	struct lpc_cache *c = mk_cache(FR, LPC_READAHEAD_OFF);
	struct lpc_stats s0, d;
	struct tf t;

	mk_file(c, &t, 400);
	for (uint64_t i = 0; i < FR; i++)
		read_page(&t, i);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_fadvise(t.f, FR * PS, 200 * PS, LPC_FADV_WILLNEED), 0);
	lpc_ra_quiesce(t.f);
	delta(c, &s0, &d);
	CHECK_EQ(d.direct_reclaims, 0, "WILLNEED reclaimed a frame itself");
	CHECK_EQ(d.alloc_failures, 0, "a frame readahead could not have is no failure");
	CHECK(d.read_pages <= 200, "read %" PRIu64 " pages", d.read_pages);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* Until the background reclaimer sleeps and no run of f is queued or being
 * read (the null backend's reads take no time: both are a matter of
 * scheduling), at most 10 s. */
static void settle(struct lpc_cache *c, struct lpc_file *f)
{
	struct lpc_ra_worker *w = &c->files.ra;

	for (int ms = 0; ms < 10000; ms++) {
		bool busy;

		lpc_ra_quiesce(f);
		pthread_mutex_lock(&w->lock);
		busy = f->ra_inflight != 0;
		pthread_mutex_unlock(&w->lock);
		if (!busy && !atomic_load_explicit(&c->reclaim.awake, memory_order_relaxed))
			return;
		usleep(1000);
	}
	CHECK(false, "the reclaimer did not settle in 10 s");
}

/* A scan of a file 4x a full cache keeps whole windows: the refill that
 * readahead's wake asks for makes room for the next window too
 * (reclaimer.c, ra_high), so the window each marker reads, once the reader
 * has settled (the refill done), is the largest, 512 pages (1/8 of the
 * cache, as the default), every time.  With the refill to `high` alone
 * (twice the reserve, 256 frames of 4096) 128 frames were free above
 * readahead's reserve, plus the reader's own few: every window was cut to
 * about that, a quarter of it, and a stream kept that much at the device. */
static void t_full_cache_windows(void)
{
	enum { FR = 4096, PAGES = 4 * FR, MAXW = 512 };
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_stats s0, d;
	unsigned whole = 0, cut = 0;
	struct tf t;

	lpc_config_init(&cfg);
	cfg.cache_bytes = FR * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_max_kb = MAXW * PS / 1024;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0 && c);
	/* The reclaimer's refill alone: no drop behind the scan, which would
	 * feed its windows itself (readahead.c A5; test_drop_behind.c). */
	c->files.ra_drop = false;
	mk_file(c, &t, PAGES);
	for (uint64_t i = 0; i < PAGES; i++) {
		bool mark = flags_of(t.f, i) & LPC_PG_RA_MARK;

		if (!mark) {
			read_page(&t, i);
			continue;
		}
		settle(c, t.f);
		lpc_stats(c, &s0);
		read_page(&t, i);
		lpc_ra_quiesce(t.f);
		delta(c, &s0, &d);
		/* Past the ramp (32, 64, 128 pages) and the first fill of
		 * the cache, before the end of the file. */
		if (i < 2 * FR || i + 2 * MAXW >= PAGES)
			continue;
		CHECK_EQ(d.ra_windows, 1, "the marker at %" PRIu64 " read a window", i);
		/* The refill's room: a window above readahead's reserve (1/64
		 * of the frames, at least two batches of 64: 128). */
		CHECK(s0.frames_free >= MAXW + 128, "%" PRIu64 " frames free before the marker at %" PRIu64,
		      s0.frames_free, i);
		if (d.ra_pages == MAXW) {
			whole++;
		} else {
			cut++;
			fprintf(stderr, "  marker %" PRIu64 ": a window of %" PRIu64 " pages\n", i, d.ra_pages);
		}
	}
	delta(c, &s0, &d);
	CHECK(whole >= 4, "%u whole windows", whole);
	CHECK_EQ(cut, 0, "windows cut short in a full cache (%u whole)", whole);
	lpc_stats(c, &d);
	CHECK(d.evictions >= PAGES - FR, "the cache was full: %" PRIu64 " evictions", d.evictions);
	CHECK_EQ(d.ra_wasted, 0, "the refill spared what was read ahead");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* Two streams scanning halves of a file 4x a full cache, one thread, in
 * turns of 32 pages (lpcbench scan's two scanners at 128 KiB), the refill's
 * room grown to the share (ra_worker.c QS4: as a cut window of theirs does,
 * t_two_streams_cut_room): once the reader settles, the free frames hold two
 * windows of each stream, the share (4 windows of 256 pages: QS2), beyond
 * readahead's reserve (reclaimer.c ra_target), and every marker's window is
 * whole.  With a refill to room for one largest window (512) alone, 798
 * frames were free at a marker: the markers of the two streams come in
 * pairs, and the next pair found what that refill had landed. */
static void t_two_streams_room(void)
{
	enum { FR = 4096, PAGES = 4 * FR, HALF = PAGES / 2, MAXW = 512, TURN = 32 };
	enum { SHARE = FR / 4, W = SHARE / 4, RESERVE = 128 };
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_stats s0, d;
	unsigned whole = 0, cut = 0, checked = 0;
	struct tf t;

	lpc_config_init(&cfg);
	cfg.cache_bytes = FR * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_max_kb = MAXW * PS / 1024;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0 && c);
	/* The reclaimer's refill alone: no drop behind the scan, which would
	 * feed its windows itself (readahead.c A5; test_drop_behind.c). */
	c->files.ra_drop = false;
	mk_file(c, &t, PAGES);
	for (uint64_t k = 0; k < HALF; k += TURN) {
		if (k == FR / 2) /* both streams past their ramps */
			atomic_store_explicit(&c->pool.ra_room, SHARE, memory_order_relaxed);
		for (uint64_t half = 0; half < 2; half++) {
			for (uint64_t i = half * HALF + k; i < half * HALF + k + TURN; i++) {
				if (!(flags_of(t.f, i) & LPC_PG_RA_MARK)) {
					read_page(&t, i);
					continue;
				}
				settle(c, t.f);
				lpc_stats(c, &s0);
				read_page(&t, i);
				lpc_ra_quiesce(t.f);
				delta(c, &s0, &d);
				/* Past the first fill of the cache (two
				 * halves), before the end of either half. */
				if (k < FR || k + 4 * W >= HALF)
					continue;
				checked++;
				CHECK(s0.frames_free >= SHARE + RESERVE,
				      "%" PRIu64 " frames free before the marker at %" PRIu64, s0.frames_free, i);
				if (d.ra_windows == 1 && d.ra_pages == W) {
					whole++;
				} else {
					cut++;
					fprintf(stderr, "  marker %" PRIu64 ": %" PRIu64 " windows, %" PRIu64 " pages\n",
						i, d.ra_windows, d.ra_pages);
				}
			}
		}
	}
	CHECK(checked >= 8, "%u markers checked", checked);
	CHECK_EQ(cut, 0, "windows cut short with two streams (%u whole)", whole);
	lpc_stats(c, &d);
	CHECK(d.evictions >= PAGES - FR, "the cache was full: %" PRIu64 " evictions", d.evictions);
	CHECK_EQ(d.ra_wasted, 0, "the refill spared what was read ahead");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* A read gate by offset: while closed, every read that touches pages
 * [lo, hi) is held there and counted (the device is slow on window N). */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t lo, hi;
	unsigned entered;
	bool closed;
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
} gate = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void gate_pass(uint64_t off, size_t len)
{
	pthread_mutex_lock(&gate.mu);
	if (gate.closed && off < gate.hi * PS && off + len > gate.lo * PS) {
		gate.entered++;
		pthread_cond_broadcast(&gate.cv);
		while (gate.closed)
			pthread_cond_wait(&gate.cv, &gate.mu);
	}
	pthread_mutex_unlock(&gate.mu);
}

static ssize_t gate_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	gate_pass(off, len);
	return gate.inner->read(f, buf, len, off, index);
}

static ssize_t gate_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	size_t len = 0;

	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	gate_pass(off, len);
	return tst_readv_inner(gate.inner, f, iov, iovcnt, off, index);
}

static void gate_set(bool closed, uint64_t lo, uint64_t hi)
{
	pthread_mutex_lock(&gate.mu);
	gate.closed = closed;
	gate.lo = lo;
	gate.hi = hi;
	gate.entered = 0;
	pthread_cond_broadcast(&gate.cv);
	pthread_mutex_unlock(&gate.mu);
}

struct seq_reader {
	struct tf *t;
	uint64_t from, to;
};

static void *seq_reader_main(void *a)
{
	struct seq_reader *r = a;

	for (uint64_t i = r->from; i < r->to; i++)
		read_page(r->t, i);
	return NULL;
}

/* Two windows of one sequential reader in flight at once, as the kernel
 * keeps them (its PG_readahead is set as the page enters the cache).  Misses
 * of pages 0 and 1 start the stream (window [1, 33), marker on 2); the hit
 * on 2 reads [33, 97) with the marker on 33, and every read of [33, 97) is
 * held at the gate.  A reader that goes on reaches page 33 in flight: it
 * must start the next window, [97, 225), before it waits for 33, so page 97
 * is cached (its read not gated) while page 33 is still locked.  When the
 * marker was set only as window [33, 97)'s read completed, the reader waited
 * on page 33 and nothing read [97, ...) until the gate opened. */
static void t_two_windows_in_flight(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	struct seq_reader r;
	struct tf t;
	pthread_t th;
	bool ahead = false;
	uint32_t fl33 = 0;

	gate_set(false, 0, 0);
	gate.inner = c->io.ops;
	gate.ops = *c->io.ops;
	gate.ops.read = gate_read;
	gate.ops.readv = gate_readv;
	gate.ops.readv_batch = NULL; /* each run through readv: the gate sees it */
	c->io.ops = &gate.ops;
	mk_file(c, &t, 400);
	read_page(&t, 0);
	read_page(&t, 1);
	CHECK(flags_of(t.f, 2) & LPC_PG_RA_MARK, "the sync window's marker on page 2");
	gate_set(true, 33, 97);
	r = (struct seq_reader){ .t = &t, .from = 2, .to = 120 };
	REQUIRE(pthread_create(&th, NULL, seq_reader_main, &r) == 0);
	/* Window N+1 [97, 225) cached while window N's read is held: at most
	 * 5 s (it never comes with the marker set at completion). */
	for (int ms = 0; ms < 5000 && !ahead; ms++) {
		uint32_t fl97 = flags_of(t.f, 97);

		fl33 = flags_of(t.f, 33);
		ahead = (fl97 & LPC_PG_UPTODATE) && (fl33 & LPC_PG_LOCKED);
		if (!ahead)
			usleep(1000);
	}
	pthread_mutex_lock(&gate.mu);
	CHECK(gate.entered >= 1, "window [33, 97)'s read reached the gate: %u", gate.entered);
	pthread_mutex_unlock(&gate.mu);
	CHECK(ahead, "window [97, 225) read while [33, 97) was in flight (page 33 flags 0x%x, "
		     "page 97 flags 0x%x)", fl33, flags_of(t.f, 97));
	CHECK(!(flags_of(t.f, 33) & LPC_PG_RA_MARK), "the reader took page 33's marker");
	CHECK(flags_of(t.f, 97) & LPC_PG_RA_MARK, "window [97, 225)'s marker on its first page");
	gate_set(false, 0, 0);
	pthread_join(th, NULL);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

/* Two interleaved sequential streams on one file both keep their next
 * window in flight (ra_worker.c QS1-QS2).  1024 frames: readahead's share
 * is 256 pages, the largest window 128.  Stream A at 0 and stream B at 1000
 * start with the device open (windows [1, 33) and [1001, 1033), markers on
 * 2 and 1002); then every read from page 33 on is held at the gate.  The
 * hits on 2 and 1002 read [33, 97) and [1033, 1097) (64 pages each: the
 * ramp, within the split, 256 / (2 x 2)); a reader per stream goes on to
 * the next window's first page, in flight, whose marker starts its next
 * window before the reader waits: 64 pages each (the ramp's 128, split),
 * [97, 161) and [1097, 1161).  All four windows in flight at once, 256
 * pages, the share exactly.  Before the split, the windows were 64 and 128
 * pages: the first stream's two took 192, and the second stream's next
 * window got the 0 left (cut: nothing of it in flight, its reader then
 * read it at the device).  Counters exact once the gate opens: the readers
 * stop before the next markers (97, 1097).  The two readers reach their
 * markers (33, 1033) at about the same time: when a marker hit only tried
 * f->ra_lock, the one that came while the other held it started nothing
 * (page 1097 absent, reads 7, ra_async 3: once in CI; readahead.c A2, the
 * story in regress_ra_mark_lock.c). */
static void t_two_streams_share(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	struct seq_reader ra, rb;
	struct lpc_stats s0, d;
	pthread_t ta, tb;
	bool both = false;
	struct tf t;

	gate_set(false, 0, 0);
	gate.inner = c->io.ops;
	gate.ops = *c->io.ops;
	gate.ops.read = gate_read;
	gate.ops.readv = gate_readv;
	gate.ops.readv_batch = NULL;
	c->io.ops = &gate.ops;
	mk_file(c, &t, 2000);
	lpc_stats(c, &s0);
	read_page(&t, 0);
	read_page(&t, 1); /* this thread's next: the stream, window [1, 33) */
	read_page(&t, 1000);
	read_page(&t, 1001); /* [1001, 1033) */
	CHECK(flags_of(t.f, 2) & LPC_PG_RA_MARK, "A's marker on page 2");
	CHECK(flags_of(t.f, 1002) & LPC_PG_RA_MARK, "B's marker on page 1002");
	gate_set(true, 33, UINT64_MAX / PS);
	read_page(&t, 2);    /* A's marker: [33, 97) to the gate */
	read_page(&t, 1002); /* B's marker: [1033, 1097) */
	ra = (struct seq_reader){ .t = &t, .from = 3, .to = 97 };
	rb = (struct seq_reader){ .t = &t, .from = 1003, .to = 1097 };
	REQUIRE(pthread_create(&ta, NULL, seq_reader_main, &ra) == 0);
	REQUIRE(pthread_create(&tb, NULL, seq_reader_main, &rb) == 0);
	/* Both next windows in the cache (locked, at the gate): at most 5 s. */
	for (int ms = 0; ms < 5000 && !both; ms++) {
		both = (flags_of(t.f, 97) & LPC_PG_RA_MARK) && (flags_of(t.f, 1097) & LPC_PG_RA_MARK) &&
		       flags_of(t.f, 160) && flags_of(t.f, 1160);
		if (!both)
			usleep(1000);
	}
	CHECK(both, "both streams' next windows in flight: page 97 0x%x, 160 0x%x, 1097 0x%x, "
		    "1160 0x%x", flags_of(t.f, 97), flags_of(t.f, 160), flags_of(t.f, 1097),
	      flags_of(t.f, 1160));
	CHECK(!flags_of(t.f, 161) && !flags_of(t.f, 1161), "windows of 64 pages: 161 0x%x, 1161 0x%x",
	      flags_of(t.f, 161), flags_of(t.f, 1161));
	pthread_mutex_lock(&c->files.ra.lock);
	CHECK(c->files.ra.npages + c->files.ra.respages <= 256, "within the share: %" PRIu64,
	      c->files.ra.npages + c->files.ra.respages);
	pthread_mutex_unlock(&c->files.ra.lock);
	gate_set(false, 0, 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(lpc_file_close(t.f), 0); /* waits for the windows (Q3) */
	delta(c, &s0, &d);
	CHECK_EQ(d.reads, 8, "pages 0 and 1000 alone, the sync windows, 4 async");
	CHECK_EQ(d.read_pages, 2 * 161);
	CHECK_EQ(d.ra_windows, 6);
	CHECK_EQ(d.ra_async, 4, "both streams' marker windows, whole");
	CHECK_EQ(d.ra_pages, 2 * (31 + 64 + 64));
	CHECK_EQ(d.ra_used, 2 * 95, "pages 2..96 of each");
	CHECK_EQ(d.ra_wasted, 0);
	tst_cache_destroy(c);
}

/* A split window cut short grows the refill's room to the share
 * (readahead.c A2, ra_worker.c QS4).  t_two_streams_share's streams, every
 * read from page 33 on held at the gate: both streams' next windows take
 * the share (256 pages of 1024 frames), and a reader that reaches page 97,
 * in flight with its marker, starts A's next window before it waits:
 * granted nothing (Q5), cut at its start, and the room is 256 (0 before:
 * the streams' windows were whole). */
static void t_two_streams_cut_room(void)
{
	struct lpc_cache *c = mk_cache(1024, 0);
	struct seq_reader ra, rb, rc;
	pthread_t ta, tb, tc;
	bool both = false;
	uint32_t room = 0;
	struct tf t;

	/* A file larger than the cache: its streams would drop behind and
	 * feed themselves, growing no room (readahead.c A4-A5). */
	c->files.ra_drop = false;
	gate_set(false, 0, 0);
	gate.inner = c->io.ops;
	gate.ops = *c->io.ops;
	gate.ops.read = gate_read;
	gate.ops.readv = gate_readv;
	gate.ops.readv_batch = NULL;
	c->io.ops = &gate.ops;
	mk_file(c, &t, 2000);
	read_page(&t, 0);
	read_page(&t, 1);
	read_page(&t, 1000);
	read_page(&t, 1001);
	gate_set(true, 33, UINT64_MAX / PS);
	read_page(&t, 2);    /* A's marker: [33, 97) to the gate */
	read_page(&t, 1002); /* B's marker: [1033, 1097) */
	ra = (struct seq_reader){ .t = &t, .from = 3, .to = 97 };
	rb = (struct seq_reader){ .t = &t, .from = 1003, .to = 1097 };
	REQUIRE(pthread_create(&ta, NULL, seq_reader_main, &ra) == 0);
	REQUIRE(pthread_create(&tb, NULL, seq_reader_main, &rb) == 0);
	for (int ms = 0; ms < 5000 && !both; ms++) {
		both = (flags_of(t.f, 97) & LPC_PG_RA_MARK) && (flags_of(t.f, 1097) & LPC_PG_RA_MARK) &&
		       flags_of(t.f, 160) && flags_of(t.f, 1160);
		if (!both)
			usleep(1000);
	}
	REQUIRE(both, "both streams' next windows in flight");
	CHECK_EQ(atomic_load_explicit(&c->pool.ra_room, memory_order_relaxed), 0,
		 "whole windows: the lone stream's room");
	rc = (struct seq_reader){ .t = &t, .from = 97, .to = 98 };
	REQUIRE(pthread_create(&tc, NULL, seq_reader_main, &rc) == 0);
	for (int ms = 0; ms < 5000 && room == 0; ms++) {
		room = atomic_load_explicit(&c->pool.ra_room, memory_order_relaxed);
		if (!room)
			usleep(1000);
	}
	CHECK_EQ(room, 256, "A's window at 161 cut: the room for two windows of each stream");
	gate_set(false, 0, 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(tc, NULL);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(t_sequential());
	TST_RUN(t_two_streams());
	TST_RUN(t_no_stream());
	TST_RUN(t_off());
	TST_RUN(t_default_window());
	TST_RUN(t_wasted());
	TST_RUN(t_fadvise());
	TST_RUN(t_willneed_split());
	TST_RUN(t_stream_gaps());
	TST_RUN(t_counters_exact());
	TST_RUN(t_many_streams());
	TST_RUN(t_willneed_full());
	TST_RUN(t_full_cache_windows());
	TST_RUN(t_two_streams_room());
	TST_RUN(t_two_windows_in_flight());
	TST_RUN(t_two_streams_share());
	TST_RUN(t_two_streams_cut_room());
	return tst_finish();
}
