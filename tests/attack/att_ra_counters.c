/* SPDX-License-Identifier: MIT */
/*
 * att_ra_counters - lpc_stats' readahead counters are not exact:
 *  (a) a read-ahead page overwritten whole by lpc_pwrite (write.c's fresh
 *      path: a lookup, no lpc_page_mark_referenced) keeps RA; once written
 *      back and evicted it counts ra_wasted (and sets ra_thrash: the next
 *      window of the file halves) although the application used it;
 *  (b) a marker hit whose next window is already cached reads nothing but
 *      counts ra_windows and ra_async (readahead.c counts before
 *      lpc_filemap_ra_window finds nothing to read);
 *  (c) LOCKED mode counts ra_async for windows the marker's reader reads
 *      itself, synchronously (readahead.c A2's LOCKED branch).
 * Usage: att_ra_counters    Exit: 0 exact, 1 a counter is off.
 */
#include "att.h"
#include "fgate.h"

static const size_t PS = 4096;

static int wasted_after_write(int backend)
{
	char pa[400], pb[400];
	struct lpc_cache *c = att_cache(128 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *a, *b;
	struct lpc_stats s0, s1, s2;
	uint64_t pg[512];
	unsigned left = 0;
	struct lpc_page *p;

	att_make_file("ca", 64 * PS, 11, pa, sizeof(pa));
	att_make_file("cb", 1024 * PS, 12, pb, sizeof(pb));
	if (lpc_file_open(c, pa, O_RDWR, 0, &a) || lpc_file_open(c, pb, O_RDONLY, 0, &b))
		return 1;
	lpc_fadvise(a, 0, 0, LPC_FADV_WILLNEED); /* 64 pages read ahead */
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 64; i++) {
		for (size_t k = 0; k < PS / 8; k++)
			pg[k] = att_word(11, i * PS + k * 8);
		if (lpc_pwrite(a, pg, PS, i * PS) != (ssize_t)PS)
			return 1;
	}
	if (lpc_fsync(a))
		return 1;
	lpc_stats(c, &s1);
	/* Evict a's pages: a scan of b without readahead. */
	lpc_fadvise(b, 0, 0, LPC_FADV_RANDOM);
	for (uint64_t i = 0; i < 1024; i++)
		if (lpc_pread(b, pg, PS, i * PS) != (ssize_t)PS)
			return 1;
	lpc_stats(c, &s2);
	for (uint64_t i = 0; i < 64; i++)
		if (lpc_page_find(a, i, &p) == 0) {
			left++;
			lpc_page_put(p);
		}
	printf("  (a) %s: 64 pages read ahead (ra_pages %" PRIu64 "), all 64 overwritten by "
	       "lpc_pwrite, written back, %u still cached after a scan of another file:\n"
	       "      ra_used +%" PRIu64 ", ra_wasted +%" PRIu64 " (want ra_wasted +0)\n",
	       att_backend_name(backend), s0.ra_pages, left, s2.ra_used - s0.ra_used,
	       s2.ra_wasted - s1.ra_wasted);
	lpc_file_close(a);
	lpc_file_close(b);
	lpc_cache_destroy(c);
	return s2.ra_wasted != s1.ra_wasted;
}

static int empty_async_window(void)
{
	char path[400];
	struct lpc_cache *c = att_cache(2048 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	uint64_t pg[512];

	att_make_file("cc", 1024 * PS, 13, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	/* Pages 32.. cached without readahead. */
	lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
	for (uint64_t i = 32; i < 1024; i++)
		if (lpc_pread(f, pg, PS, i * PS) != (ssize_t)PS)
			return 1;
	lpc_fadvise(f, 0, 0, LPC_FADV_NORMAL);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 1024; i++)
		if (lpc_pread(f, pg, PS, i * PS) != (ssize_t)PS)
			return 1;
	lpc_stats(c, &s1);
	printf("  (b) scan of a file whose pages 32.. are cached: reads +%" PRIu64
	       " (read_pages +%" PRIu64 "), ra_windows +%" PRIu64 ", ra_async +%" PRIu64
	       ", ra_pages +%" PRIu64 "\n",
	       s1.reads - s0.reads, s1.read_pages - s0.read_pages, s1.ra_windows - s0.ra_windows,
	       s1.ra_async - s0.ra_async, s1.ra_pages - s0.ra_pages);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	/* The reads: page 0's single-page miss (a candidate, no window), then
	 * one window (S1 at page 1, cut at page 32).  Every window that read
	 * something is one read: windows > reads - 1 is a window counted
	 * that read nothing. */
	return s1.ra_windows - s0.ra_windows > s1.reads - s0.reads - 1;
}

/* (c) LOCKED mode: a marker hit reads its window inline, yet counts
 * ra_async.  The window's read is held at a gate for 300 ms: the marker's
 * reader waits for it. */
static struct lpc_file *fc;
static _Atomic int c_done;
static void *marker_read(void *arg)
{
	uint64_t pg[512];

	(void)arg;
	lpc_pread(fc, pg, PS, 2 * PS);
	atomic_store(&c_done, 1);
	return NULL;
}

static int locked_async(void)
{
	char path[400];
	struct lpc_cache *c = att_cache(2048 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKED, 0, 0);
	struct lpc_stats s0, s1;
	uint64_t pg[512];
	pthread_t th;
	int waited;

	att_make_file("cl", 1024 * PS, 14, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &fc))
		return 1;
	fg_install(c);
	lpc_pread(fc, pg, PS, 0);
	lpc_pread(fc, pg, PS, PS); /* window [1, 33), marker on 2 */
	lpc_stats(c, &s0);
	fg_close(fg_file_id(path));
	fg.min_index = 33;
	pthread_create(&th, NULL, marker_read, NULL);
	fg_wait_entered(1, 5000);
	usleep(300000);
	waited = !atomic_load(&c_done);
	fg_open();
	pthread_join(th, NULL);
	lpc_stats(c, &s1);
	printf("  (c) LOCKED mode: the marker's lpc_pread %s for its window's read; ra_async +%" PRIu64
	       "\n", waited ? "waited" : "did not wait", s1.ra_async - s0.ra_async);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	return waited && s1.ra_async != s0.ra_async;
}

int main(void)
{
	int d = 0;

	d |= wasted_after_write(LPC_IO_SYNC);
	d |= wasted_after_write(LPC_IO_URING);
	d |= empty_async_window();
	d |= locked_async();
	att_cleanup();
	printf(d ? "DEFECT (counters): see above\n" : "exact\n");
	return d;
}
