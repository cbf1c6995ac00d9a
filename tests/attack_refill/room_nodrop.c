/* SPDX-License-Identifier: MIT */
/*
 * room_nodrop.c - review of 0ec82e2, ra_worker.c QS4: two streams whose
 * slots say `fed` grow no room (ra_room stays 0) when their split windows
 * are cut, whether they dropped anything or not.
 *
 * Two scanner threads, each over a file of its own of FILE_PAGES pages (4x
 * the cache: drop-behind's condition), a cache of FRAMES 4 KiB frames
 * (CLOCK2), a user backend that sleeps DELAY_US per read call, each scanner
 * pausing THINK_US every 16 pages; modes as fed_nodrop.c:
 *   pread  4 KiB lpc_pread per page (the stream drops: it feeds itself)
 *   get2   lpc_page_get, put, twice per page (REFERENCED: it drops nothing)
 * A third thread samples the pool's ra_room every 200 us; printed: the most
 * it saw, the windows read, the pages the scanners read at the device
 * themselves, the pages dropped, and for the library of 0ec82e2 (-DNEW=1)
 * A4's refills and the slots left `fed`.
 *
 * Exit (NEW build only): 1 when a stream ended `fed` while the scans
 * dropped fewer than 1 page in 100 of what they read (no refill and no room
 * for streams that fed nothing); else 0.  The parent build only prints:
 * run_compare.sh sets the two side by side (ra_room, windows, the
 * scanners' own device reads).
 *
 * Usage: room_nodrop MODE [DELAY_US [THINK_US]]
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/thread.h"

#define PS 4096u
#define FRAMES 4096u
#define FILE_PAGES (4u * FRAMES)

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
static struct lpc_file *files[2];
static uint64_t bad;
static _Atomic bool done;
static struct lpc_cache *cache;

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
	struct lpc_file *f = arg;
	unsigned char buf[PS];

	is_scanner = true;
	/* not to the end: a window that reaches it stops counting (QS1) */
	for (uint64_t i = 0; i < FILE_PAGES - FRAMES / 4; i++) {
		uint64_t off = i * PS;

		if (think_us && i % 16 == 0)
			nap(think_us);
		if (!strcmp(mode, "get2")) {
			for (int k = 0; k < 2; k++) {
				struct lpc_page *p = NULL;

				if (lpc_page_get(f, i, 0, &p) || !p) {
					__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
					continue;
				}
				if (!check(lpc_page_data(p), off))
					__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
				lpc_page_put(p);
			}
		} else if (lpc_pread(f, buf, PS, off) != PS || !check(buf, off)) {
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static _Atomic uint32_t room_max;

static void *room_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		uint32_t r = atomic_load_explicit(&cache->pool.ra_room, memory_order_relaxed);

		if (r > atomic_load(&room_max))
			atomic_store(&room_max, r);
		nap(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_stats s;
	pthread_t th[2], rt;
	uint64_t t0, ns, whole;
	int rc, ret = 0;

	if (argc < 2 || (strcmp(argv[1], "pread") && strcmp(argv[1], "get2"))) {
		fprintf(stderr, "usage: room_nodrop pread|get2 [DELAY_US [THINK_US]]\n");
		return 2;
	}
	mode = argv[1];
	if (argc > 2)
		delay_us = (unsigned)atoi(argv[2]);
	if (argc > 3)
		think_us = (unsigned)atoi(argv[3]);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.reclaim_policy = LPC_RECLAIM_CLOCK2;
	rc = lpc_cache_create(&cfg, &cache);
	if (rc || !cache) {
		fprintf(stderr, "lpc_cache_create = %d\n", rc);
		return 2;
	}
	for (int k = 0; k < 2; k++) {
		rc = lpc_file_open_backend(cache, k ? "scan1" : "scan0", &ops, NULL, O_RDONLY,
					   &files[k]);
		if (rc) {
			fprintf(stderr, "open = %d\n", rc);
			return 2;
		}
	}
	pthread_create(&rt, NULL, room_main, NULL);
	t0 = tst_now_ns();
	for (int k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, scan_main, files[k]);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	ns = tst_now_ns() - t0;
	atomic_store(&done, true);
	pthread_join(rt, NULL);
	for (int k = 0; k < 2; k++)
		lpc_ra_quiesce(files[k]);
	lpc_stats(cache, &s);
	/* whole split windows: share / (2 x 2 streams) pages each */
	whole = 2 * (FILE_PAGES - FRAMES / 4) / (FRAMES / 4 / 4) + 2 * 8;
	printf("%-5s scan %5.0f ms  ra_room max %4u  windows %4" PRIu64 " (whole: about %" PRIu64
	       ")  scanners' own reads %5" PRIu64 " calls %6" PRIu64 " pages  dropped %6" PRIu64
	       "  evicted %6" PRIu64,
	       mode, ns / 1e6, atomic_load(&room_max), s.ra_windows, whole,
	       atomic_load(&scan_calls), atomic_load(&scan_pages), s.ra_dropped, s.evictions);
#if NEW
	{
		uint64_t cnt[LPC_NR_COUNTERS], tfree;
		unsigned fed = 0;

		lpc_towner_sum(&cache->pool.owner, cnt, &tfree);
		for (int k = 0; k < 2; k++) {
			pthread_mutex_lock(&files[k]->ra_lock);
			for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
				if (files[k]->ra_streams[i].size && files[k]->ra_streams[i].fed)
					fed++;
			pthread_mutex_unlock(&files[k]->ra_lock);
		}
		printf("  refills %4" PRIu64 "  fed slots %u", cnt[LPC_C_RA_REFILLS], fed);
		if (fed && s.ra_dropped * 100 < 2 * FILE_PAGES) {
			printf("\n  DEFECT: %u slots `fed` (no A4 refill, no QS4 room) while the scans"
			       " dropped %" PRIu64 " pages (room seen: %u)",
			       fed, s.ra_dropped, atomic_load(&room_max));
			ret = 1;
		}
	}
#endif
	printf("\n");
	if (bad) {
		printf("  %" PRIu64 " bad reads\n", bad);
		ret = 1;
	}
	for (int k = 0; k < 2; k++)
		if (lpc_file_close(files[k]))
			ret = 1;
	lpc_cache_destroy(cache);
	return ret;
}
