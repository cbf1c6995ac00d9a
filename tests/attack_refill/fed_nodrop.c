/* SPDX-License-Identifier: MIT */
/*
 * fed_nodrop.c - review of 0ec82e2: a stream whose slot says `fed` (it
 * "drops behind, so it feeds its windows itself") loses readahead.c A4's
 * refills and QS4's room.  ra_behind sets `fed` whenever it computes a
 * range to drop, whether lpc_filemap_drop_behind then drops any page of it
 * or not.  A scanner whose pages are not droppable (each page used twice,
 * so REFERENCED; or written, so DIRTY; remove.c drop_rule keeps both)
 * drops nothing, so it feeds nothing, yet asks for no refill.
 *
 * The story: a cache of FRAMES 4 KiB frames (CLOCK2, lockless, default
 * readahead: ra_max = FRAMES / 8), one file of FILE_PAGES pages (8x the
 * cache) over a user backend that fills pages with a pattern and sleeps
 * DELAY_US per read call (a device); one scanner thread reads it from
 * start to end in one of these modes:
 *   pread  one 4 KiB lpc_pread per page (a plain scan: its pages drop)
 *   get2   lpc_page_get of page i, check, put, and again (a second use:
 *          REFERENCED, the drop keeps every page)
 *   rmw    lpc_pread of page i, then lpc_pwrite of the same bytes (DIRTY:
 *          the drop keeps every page until written back)
 * Printed: the scanner's own backend reads (calls and pages: what it read
 * at the device itself, not on the readahead threads), the readahead
 * windows, pages read ahead, pages dropped, evictions, reclaimer wake-ups,
 * the time of the scan; for the library of 0ec82e2 (built with -DNEW=1),
 * A4's refills (LPC_C_RA_REFILLS) and whether the stream's slot is `fed`
 * at the end.
 *
 * Exit (NEW build only; the parent build only prints): 1 when the stream
 * ended `fed` while the scan dropped fewer than 1 page in 100 of what it
 * read (the flag says "it feeds itself" and it fed nothing), else 0.
 * The harm (the scanner's own device reads against the parent library in
 * the same run) is judged by run_compare.sh.
 *
 * Usage: fed_nodrop MODE [DELAY_US [THINK_US [READERS]]]  (THINK_US: the scanner's pause
 * every 16 pages, its work on them; READERS: threads reading a hot set of
 * FRAMES pages of another file at random while the scan runs, at most 8)
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/thread.h"

#define PS 4096u
#define FRAMES 4096u
#define FILE_PAGES (8u * FRAMES)

static unsigned delay_us = 50, think_us;
static _Thread_local bool is_scanner;
static _Atomic uint64_t scan_calls, scan_pages, other_calls, other_pages, writes;

static uint64_t pat(uint64_t off)
{
	return off * 0x9e3779b97f4a7c15ull + 1;
}

static void fill(void *buf, uint64_t off, size_t len)
{
	uint64_t *w = buf;

	for (size_t k = 0; k < len / 8; k++)
		w[k] = pat(off + 8 * k);
}

static void nap(unsigned us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };

	if (us)
		nanosleep(&ts, NULL);
}

static ssize_t be_read(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	ssize_t n = 0;

	(void)h;
	for (int k = 0; k < iovcnt; k++) {
		fill(iov[k].iov_base, off + (uint64_t)n, iov[k].iov_len);
		n += (ssize_t)iov[k].iov_len;
	}
	if (is_scanner) {
		atomic_fetch_add(&scan_calls, 1);
		atomic_fetch_add(&scan_pages, (uint64_t)n / PS);
	} else {
		atomic_fetch_add(&other_calls, 1);
		atomic_fetch_add(&other_pages, (uint64_t)n / PS);
	}
	nap(delay_us);
	return n;
}

static ssize_t be_write(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	ssize_t n = 0;

	(void)h;
	(void)off;
	for (int k = 0; k < iovcnt; k++)
		n += (ssize_t)iov[k].iov_len;
	atomic_fetch_add(&writes, 1);
	return n;
}

static int be_size(void *h, uint64_t *size)
{
	(void)h;
	*size = (uint64_t)FILE_PAGES * PS;
	return 0;
}

static const struct lpc_backend_ops ops = {
	.version = LPC_BACKEND_V1,
	.read = be_read,
	.write = be_write,
	.size = be_size,
};

static const char *mode;
static struct lpc_file *file, *hot;
static _Atomic bool scan_done;
static _Atomic uint64_t hot_reads;
static uint64_t bad, call_ns;

static bool check(const void *buf, uint64_t off)
{
	const uint64_t *w = buf;

	for (unsigned k = 0; k < PS / 8; k++)
		if (w[k] != pat(off + 8 * k))
			return false;
	return true;
}

static void *scan_main(void *arg)
{
	static _Alignas(64) unsigned char buf[PS];

	(void)arg;
	is_scanner = true;
	for (uint64_t i = 0; i < FILE_PAGES; i++) {
		uint64_t off = i * PS;

		uint64_t c0;

		if (think_us && i % 16 == 0)
			nap(think_us); /* the reader's work on 16 pages */
		c0 = tst_now_ns();

		if (!strcmp(mode, "get2")) {
			for (int k = 0; k < 2; k++) {
				struct lpc_page *p = NULL;

				if (lpc_page_get(file, i, 0, &p) || !p) {
					bad++;
					continue;
				}
				if (!check(lpc_page_data(p), off))
					bad++;
				lpc_page_put(p);
			}
		} else {
			if (lpc_pread(file, buf, PS, off) != PS || !check(buf, off))
				bad++;
			if (!strcmp(mode, "rmw") && lpc_pwrite(file, buf, PS, off) != PS)
				bad++;
		}
		call_ns += tst_now_ns() - c0;
	}
	return NULL;
}

/* A reader of the hot set: random 4 KiB preads over the other file (as
 * many pages as the cache has frames) until the scan is done. */
static void *hot_main(void *arg)
{
	unsigned char buf[PS];
	uint64_t rnd = (uintptr_t)arg * 7919 + 1;

	while (!atomic_load(&scan_done)) {
		uint64_t i = tst_rnd(&rnd) % FRAMES;

		if (lpc_pread(hot, buf, PS, i * PS) != PS || !check(buf, i * PS))
			bad++;
		atomic_fetch_add(&hot_reads, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_stats s;
	pthread_t th, hth[8];
	unsigned nhot = 0;
	uint64_t t0, ns;
	int rc, ret = 0;

	if (argc < 2 || (strcmp(argv[1], "pread") && strcmp(argv[1], "get2") &&
			 strcmp(argv[1], "rmw"))) {
		fprintf(stderr, "usage: fed_nodrop pread|get2|rmw [DELAY_US [THINK_US [READERS]]]\n");
		return 2;
	}
	mode = argv[1];
	if (argc > 2)
		delay_us = (unsigned)atoi(argv[2]);
	if (argc > 3)
		think_us = (unsigned)atoi(argv[3]);
	if (argc > 4)
		nhot = (unsigned)atoi(argv[4]) > 8 ? 8 : (unsigned)atoi(argv[4]);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.reclaim_policy = LPC_RECLAIM_CLOCK2;
	rc = lpc_cache_create(&cfg, &c);
	if (rc || !c) {
		fprintf(stderr, "lpc_cache_create = %d\n", rc);
		return 2;
	}
	rc = lpc_file_open_backend(c, "scanfile", &ops, NULL, O_RDWR, &file);
	if (rc) {
		fprintf(stderr, "open = %d\n", rc);
		return 2;
	}
	if (nhot) {
		rc = lpc_file_open_backend(c, "hotfile", &ops, NULL, O_RDONLY, &hot);
		if (rc) {
			fprintf(stderr, "open = %d\n", rc);
			return 2;
		}
		/* cached before the scan: the cache is full of the hot set */
		CHECK_EQ(lpc_fadvise(hot, 0, 0, LPC_FADV_WILLNEED), 0);
		lpc_ra_quiesce(hot);
		CHECK_EQ(lpc_fadvise(hot, 0, 0, LPC_FADV_RANDOM), 0);
		for (unsigned k = 0; k < nhot; k++)
			pthread_create(&hth[k], NULL, hot_main, (void *)(uintptr_t)(k + 1));
	}
	t0 = tst_now_ns();
	pthread_create(&th, NULL, scan_main, NULL);
	pthread_join(th, NULL);
	ns = tst_now_ns() - t0;
	atomic_store(&scan_done, true);
	for (unsigned k = 0; k < nhot; k++)
		pthread_join(hth[k], NULL);
	lpc_ra_quiesce(file);
	lpc_stats(c, &s);
	printf("%-5s scan %6.0f ms (in lpc calls %6.0f ms)  scanner's own reads %6" PRIu64 " calls %6" PRIu64
	       " pages  readahead threads' %6" PRIu64 " calls %6" PRIu64 " pages  windows %5" PRIu64
	       "  ra_pages %6" PRIu64 "  dropped %6" PRIu64 "  evicted %6" PRIu64
	       "  wakeups %5" PRIu64,
	       mode, ns / 1e6, call_ns / 1e6, atomic_load(&scan_calls), atomic_load(&scan_pages),
	       atomic_load(&other_calls), atomic_load(&other_pages), s.ra_windows, s.ra_pages,
	       s.ra_dropped, s.evictions, s.reclaimer_wakeups);
#if NEW
	{
		uint64_t cnt[LPC_NR_COUNTERS], tfree;
		bool fed = false;

		lpc_towner_sum(&c->pool.owner, cnt, &tfree);
		pthread_mutex_lock(&file->ra_lock);
		for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
			if (file->ra_streams[i].size && file->ra_streams[i].fed)
				fed = true;
		pthread_mutex_unlock(&file->ra_lock);
		printf("  refills %4" PRIu64 "  fed %d", cnt[LPC_C_RA_REFILLS], fed);
		if (fed && s.ra_dropped * 100 < FILE_PAGES) {
			printf("\n  DEFECT: the stream is `fed` (no A4 refill, no QS4 room) but"
			       " dropped %" PRIu64 " of %u pages: it fed nothing", s.ra_dropped,
			       FILE_PAGES);
			ret = 1;
		}
	}
#endif
	if (nhot)
		printf("  hot reads %" PRIu64, atomic_load(&hot_reads));
	printf("\n");
	if (bad) {
		printf("  %" PRIu64 " bad reads\n", bad);
		ret = 1;
	}
	lpc_ra_quiesce(file);
	if (lpc_file_close(file) || (hot && lpc_file_close(hot)))
		ret = 1;
	lpc_cache_destroy(c);
	return ret;
}
