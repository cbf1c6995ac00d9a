/* SPDX-License-Identifier: MIT */
/*
 * queue_cut.c - review of 00ec20b: in a live run, how often is a marker's
 * window (lpc_ra_on_mark: the only caller that passes a queue_cut flag)
 * refused by a full queue, and at those refusals was the share or were
 * the free frames short of the run too?  lpc_ra_reserve is wrapped (ld
 * --wrap: run.c's calls go through __wrap_lpc_ra_reserve); at each refusal
 * that sets the flag the wrapper reads, under w->lock, what the share has
 * left, and the pool's free list (pool.nfree, a hint: thread caches not
 * counted).
 *
 * Two scanner threads over two files (4x the cache each, lpc_pread 4 KiB
 * a page), CLOCK2, a user backend sleeping DELAY_US per call, ra_drop off
 * (QS4's own case: streams that do not feed themselves) unless DROP=1;
 * HOT random readers over the same files (pages ahead of the scanners
 * cached: windows of many short runs, the scan-mix shape).  A thread
 * samples the pool's ra_room.
 *
 * Usage: queue_cut DELAY_US HOT [DROP]
 * Exit: 1 when a queue refusal that set the flag found the share short of
 * the run as well (QS4 skipped for a window that the share also cut); 0
 * otherwise.  Frames short at a queue refusal are printed, not judged.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define FRAMES 4096u
#define FILE_PAGES (4u * FRAMES)

uint64_t __real_lpc_ra_reserve(struct lpc_files *fs, uint64_t want, bool slot, bool *queue_full);

static _Atomic uint64_t q_ref, q_share_short, q_frames_short, s_ref, calls;
static unsigned delay_us = 200;
static struct lpc_cache *cache;
static struct lpc_file *files[2];
static _Atomic bool done;
static _Atomic uint32_t room_max;
static _Atomic uint64_t bad;

uint64_t __wrap_lpc_ra_reserve(struct lpc_files *fs, uint64_t want, bool slot, bool *queue_full)
{
	bool mine = false;
	uint64_t got = __real_lpc_ra_reserve(fs, want, slot, &mine);

	if (!queue_full)
		return got; /* not a marker's window */
	atomic_fetch_add(&calls, 1);
	if (mine) {
		struct lpc_ra_worker *w = &fs->ra;
		uint64_t share = fs->pool->nframes / 4, used, left;

		*queue_full = true;
		pthread_mutex_lock(&w->lock);
		used = w->npages + w->respages;
		pthread_mutex_unlock(&w->lock);
		left = used < share ? share - used : 0;
		atomic_fetch_add(&q_ref, 1);
		if (left < want)
			atomic_fetch_add(&q_share_short, 1);
		if (atomic_load_explicit(&fs->pool->nfree, memory_order_relaxed) < want)
			atomic_fetch_add(&q_frames_short, 1);
	} else if (!got) {
		atomic_fetch_add(&s_ref, 1);
	}
	return got;
}

static uint64_t pat(uint64_t off)
{
	return off * 0x9e3779b97f4a7c15ull + 1;
}

static ssize_t be_read(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	ssize_t n = 0;

	(void)h;
	for (int k = 0; k < iovcnt; k++) {
		uint64_t *w = iov[k].iov_base;

		for (size_t j = 0; j < iov[k].iov_len / 8; j++)
			w[j] = pat(off + (uint64_t)n + 8 * j);
		n += (ssize_t)iov[k].iov_len;
	}
	if (delay_us)
		usleep(delay_us);
	return n;
}

static ssize_t be_write(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	ssize_t n = 0;

	(void)h;
	(void)off;
	for (int k = 0; k < iovcnt; k++)
		n += (ssize_t)iov[k].iov_len;
	return n;
}

static int be_size(void *h, uint64_t *size)
{
	(void)h;
	*size = (uint64_t)FILE_PAGES * PS;
	return 0;
}

static const struct lpc_backend_ops ops = {
	.version = LPC_BACKEND_V1, .read = be_read, .write = be_write, .size = be_size,
};

static void read_check(struct lpc_file *f, uint64_t i)
{
	uint64_t buf[PS / 8];

	if (lpc_pread(f, buf, PS, i * PS) != PS || buf[0] != pat(i * PS) ||
	    buf[PS / 8 - 1] != pat(i * PS + PS - 8))
		atomic_fetch_add(&bad, 1);
}

static void *scan_main(void *arg)
{
	struct lpc_file *f = arg;

	for (uint64_t i = 0; i < FILE_PAGES - FRAMES / 4; i++)
		read_check(f, i);
	return NULL;
}

static void *hot_main(void *arg)
{
	uint64_t x = (uintptr_t)arg * 2654435761u + 1;

	while (!atomic_load(&done)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		read_check(files[x & 1], (x >> 8) % FILE_PAGES);
		usleep(20);
	}
	return NULL;
}

static void *room_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		uint32_t r = atomic_load_explicit(&cache->pool.ra_room, memory_order_relaxed);

		if (r > atomic_load(&room_max))
			atomic_store(&room_max, r);
		usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_stats s;
	pthread_t th[2], rt, hot[8];
	unsigned nhot = 0;
	bool drop = false;
	uint64_t t0;
	int ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: queue_cut DELAY_US HOT [DROP]\n");
		return 2;
	}
	delay_us = (unsigned)atoi(argv[1]);
	nhot = (unsigned)atoi(argv[2]);
	if (nhot > 8)
		nhot = 8;
	drop = argc > 3 && atoi(argv[3]);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.reclaim_policy = LPC_RECLAIM_CLOCK2;
	if (lpc_cache_create(&cfg, &cache) || !cache)
		return 2;
	cache->files.ra_drop = drop; /* before the first open */
	for (int k = 0; k < 2; k++)
		if (lpc_file_open_backend(cache, k ? "s1" : "s0", &ops, NULL, O_RDONLY, &files[k]))
			return 2;
	pthread_create(&rt, NULL, room_main, NULL);
	for (unsigned k = 0; k < nhot; k++)
		pthread_create(&hot[k], NULL, hot_main, (void *)(uintptr_t)(k + 1));
	t0 = tst_now_ns();
	for (int k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, scan_main, files[k]);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	atomic_store(&done, true);
	for (unsigned k = 0; k < nhot; k++)
		pthread_join(hot[k], NULL);
	pthread_join(rt, NULL);
	for (int k = 0; k < 2; k++)
		lpc_ra_quiesce(files[k]);
	lpc_stats(cache, &s);
	printf("delay %u us, hot %u, drop %d: %.0f ms, windows %" PRIu64 ", marker reserves %" PRIu64
	       ", refused by the share %" PRIu64 ", by the queue %" PRIu64
	       " (share short too %" PRIu64 ", free list short %" PRIu64 "), ra_room max %u\n",
	       delay_us, nhot, drop, (tst_now_ns() - t0) / 1e6, s.ra_windows, atomic_load(&calls),
	       atomic_load(&s_ref), atomic_load(&q_ref), atomic_load(&q_share_short),
	       atomic_load(&q_frames_short), atomic_load(&room_max));
	if (atomic_load(&q_share_short)) {
		printf("  DEFECT: %" PRIu64 " marker windows flagged queue_cut (QS4 skipped) while the"
		       " share could not have given the run its pages either\n",
		       atomic_load(&q_share_short));
		ret = 1;
	}
	if (bad) {
		printf("  %" PRIu64 " bad reads\n", (uint64_t)bad);
		ret = 1;
	}
	for (int k = 0; k < 2; k++)
		lpc_file_close(files[k]);
	lpc_cache_destroy(cache);
	return ret;
}
