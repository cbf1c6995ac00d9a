/* SPDX-License-Identifier: MIT */
/*
 * test_write_flusher_start.c - the flusher thread started when first needed
 * (writeback/flusher.c F0-F3, lpc.h J.5) when its start fails for a moment
 * (pthread_create returning EAGAIN: a process at its thread limit) or when
 * a busy lpc_cache_destroy stops it.  Linked with -Wl,--wrap=pthread_create
 * (and pthread_cond_broadcast, pthread_cond_timedwait for story "bg-stop"):
 * every pthread_create of the library fails while fail_create is set.
 * Each story was a defect of the lazy flusher's adversarial review (its
 * programs att_age_retry, att_bg_stuck, att_evict_stuck, att_busy_restart,
 * att_bg_stop in tests/attack_flush/); each fails if its defect returns.
 * Waits poll with a deadline (5 s): a story that passes ends as soon as
 * writeback has done its work, one whose defect is back fails at the
 * deadline.  (Checked: with the review's fixes reverted, every story fails.)
 *   age-retry     writeback by age on (100 ms): a failed start at a file's
 *                 first dirty page is tried again at the next page made
 *                 dirty, and every page reaches the kernel's file.
 *   bg-stuck      LPC_DIRTY_EXPIRE_NEVER, background 10 %: a failed start
 *                 at the background kick is tried again by the next writer
 *                 above the threshold (bg_on does not stick): dirty pages
 *                 fall to the threshold.
 *   evict-stuck   a cache full of one file's dirty pages, a failed start at
 *                 eviction's hand-off: once pthread_create works again, a
 *                 miss succeeds (wb_reclaim does not stick: a miss failing
 *                 with -ENOMEM for good was the defect).
 *   busy-restart  a destroy that returns -EBUSY stops the flusher: with
 *                 writeback by age, pages dirtied after it are still written
 *                 by age; under LPC_DIRTY_EXPIRE_NEVER with one dirty page
 *                 (below every threshold) it starts no thread.
 *   bg-stop       the flusher kicked across the threshold but not yet run
 *                 (the kick's broadcast held back) when an fsync cleans the
 *                 file and a busy destroy stops it: later writers above the
 *                 threshold still start it (bg_on not left set).
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/write_test.h"
#include "cache/cache.h"
#include "filemap/filemap.h"

static const size_t PS = 4096;

static _Atomic int fail_create, failed;
int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	if (atomic_load(&fail_create)) {
		atomic_fetch_add(&failed, 1);
		return EAGAIN;
	}
	return __real_pthread_create(t, a, fn, arg);
}

/* bg-stop: the broadcasts on hold_cond are dropped (the flusher sleeps on
 * as one not yet scheduled would); sleeps counts the flusher's entries into
 * its timed sleep on watch_cond. */
static pthread_cond_t *_Atomic hold_cond, *_Atomic watch_cond;
static _Atomic unsigned sleeps;
int __real_pthread_cond_broadcast(pthread_cond_t *cv);
int __wrap_pthread_cond_broadcast(pthread_cond_t *cv);
int __wrap_pthread_cond_broadcast(pthread_cond_t *cv)
{
	if (cv == atomic_load(&hold_cond))
		return 0;
	return __real_pthread_cond_broadcast(cv);
}
int __real_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *ts);
int __wrap_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *ts);
int __wrap_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *ts)
{
	if (cv == atomic_load(&watch_cond))
		atomic_fetch_add(&sleeps, 1);
	return __real_pthread_cond_timedwait(cv, m, ts);
}

/* Threads of this process named lpc-flusher. */
static int flushers(void)
{
	return (int)tst_threads_named("lpc-flusher");
}

static unsigned char page_byte(uint64_t tag, uint64_t i)
{
	return (unsigned char)(0x40 + ((tag * 31 + i) % 0x80));
}

static void write_page(struct lpc_file *f, uint64_t i, uint64_t tag)
{
	static unsigned char w[4096];

	memset(w, page_byte(tag, i), sizeof(w));
	REQUIRE(lpc_pwrite(f, w, PS, i * PS) == (ssize_t)PS, "lpc_pwrite of page %llu",
		(unsigned long long)i);
}

/* Pages [0, n) of path that the kernel's file has as write_page wrote them. */
static uint64_t kernel_pages(const char *path, uint64_t n, uint64_t tag)
{
	static unsigned char buf[4096];
	uint64_t good = 0;
	int fd = open(path, O_RDONLY);

	for (uint64_t i = 0; fd >= 0 && i < n; i++) {
		bool ok = pread(fd, buf, PS, (off_t)(i * PS)) == (ssize_t)PS;

		for (size_t k = 0; ok && k < PS; k++)
			ok = buf[k] == page_byte(tag, i);
		good += ok;
	}
	if (fd >= 0)
		close(fd);
	return good;
}

static uint64_t dirty_pages(struct lpc_cache *c)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	return s.dirty_pages;
}

/* Polls (1 ms) until the kernel's file has n pages of tag, or 5 s. */
static uint64_t wait_kernel_pages(const char *path, uint64_t n, uint64_t tag)
{
	uint64_t good = 0;

	for (int ms = 0; ms < 5000 && (good = kernel_pages(path, n, tag)) < n; ms += 2)
		tst_sleep_us(2000);
	return good;
}

/* Polls until c has at most max dirty pages, or 5 s. */
static uint64_t wait_dirty_at_most(struct lpc_cache *c, uint64_t max)
{
	uint64_t d = 0;

	for (int ms = 0; ms < 5000 && (d = dirty_pages(c)) > max; ms += 2)
		tst_sleep_us(2000);
	return d;
}

static void story_age_retry(void)
{
	struct lpc_cache *c = tst_wcache_create(4096, PS, LPC_IO_SYNC, 100, 0, 0);
	struct lpc_file *f;
	char path[600];

	tst_wfile("age", path, sizeof(path), 64 * PS, 1);
	f = tst_file_open(c, path, O_RDWR);
	atomic_store(&failed, 0);
	atomic_store(&fail_create, 1); /* a moment at the thread limit */
	write_page(f, 0, 2);
	atomic_store(&fail_create, 0);
	CHECK(atomic_load(&failed) >= 1, "the first dirty page asked for the flusher");
	CHECK_EQ(flushers(), 0, "no flusher: its start failed");
	for (uint64_t i = 1; i <= 4; i++)
		write_page(f, i, 2);
	CHECK_EQ(wait_kernel_pages(path, 5, 2), 5u,
		 "every page written by age (the failed start was tried again)");
	CHECK_EQ(flushers(), 1, "the flusher runs");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void story_bg_stuck(void)
{
	/* 1024 frames: background threshold 102 pages, hard limit 512. */
	struct lpc_cache *c = tst_wcache_create(1024, PS, LPC_IO_SYNC, LPC_DIRTY_EXPIRE_NEVER, 10,
						50);
	struct lpc_file *f;
	char path[600];

	tst_wfile("bg", path, sizeof(path), 512 * PS, 1);
	f = tst_file_open(c, path, O_RDWR);
	atomic_store(&failed, 0);
	atomic_store(&fail_create, 1);
	for (uint64_t i = 0; i < 110; i++) /* across the background threshold */
		write_page(f, i, 3);
	atomic_store(&fail_create, 0);
	CHECK(atomic_load(&failed) >= 1, "the background kick asked for the flusher");
	CHECK_EQ(flushers(), 0, "no flusher: its start failed");
	CHECK_EQ(dirty_pages(c), 110u, "nothing written yet");
	for (uint64_t i = 110; i < 130; i++)
		write_page(f, i, 3);
	CHECK(wait_dirty_at_most(c, 102) <= 102,
	      "background writeback brings the dirty pages to the threshold (%llu dirty: "
	      "bg_on stuck, no kick)", (unsigned long long)dirty_pages(c));
	CHECK_EQ(flushers(), 1, "the flusher runs");
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(kernel_pages(path, 130, 3), 130u, "every page in the kernel's file");
	tst_cache_destroy(c);
}

static int miss(struct lpc_file *g, uint64_t i)
{
	struct lpc_page *p;
	int rc = lpc_page_get(g, i, 0, &p);

	if (!rc)
		lpc_page_put(p);
	return rc;
}

static void story_evict_stuck(void)
{
	enum { FRAMES = 256 };
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f, *g;
	char pa[600], pb[600];
	int rc;

	tst_wfile("eva", pa, sizeof(pa), 2 * FRAMES * PS, 1);
	tst_wfile("evb", pb, sizeof(pb), 2 * FRAMES * PS, 1);
	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.dirty_expire_ms = LPC_DIRTY_EXPIRE_NEVER;
	cfg.dirty_background_pct = 100; /* no kick but eviction's hand-off */
	cfg.dirty_limit_pct = 100;
	cfg.alloc_wait_ms = 200;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	f = tst_file_open(c, pa, O_RDWR);
	g = tst_file_open(c, pb, O_RDONLY);
	/* From before the cache is full: the background reclaimer would
	 * otherwise hand the dirty pages to the flusher first. */
	atomic_store(&failed, 0);
	atomic_store(&fail_create, 1);
	for (uint64_t i = 0; i < FRAMES; i++)
		write_page(f, i, 4);
	rc = miss(g, 0); /* may fail: no flusher to clean a frame (F1) */
	atomic_store(&fail_create, 0);
	CHECK(rc == 0 || rc == -ENOMEM, "the miss with no flusher: %d", rc);
	CHECK(atomic_load(&failed) >= 1, "eviction's hand-off asked for the flusher");
	rc = miss(g, 1);
	if (rc)
		rc = miss(g, 2);
	CHECK_EQ(rc, 0, "a miss once pthread_create works again (wb_reclaim stuck: -ENOMEM "
			"for good)");
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(kernel_pages(pa, FRAMES, 4), (uint64_t)FRAMES, "every page in the kernel's file");
	tst_cache_destroy(c);
}

static void story_busy_restart(void)
{
	struct lpc_cache *c = tst_wcache_create(4096, PS, LPC_IO_SYNC, 100, 0, 0);
	struct lpc_file *f;
	struct lpc_page *pg;
	char path[600];

	tst_wfile("busy", path, sizeof(path), 256 * PS, 1);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(f, 100, 0, &pg) == 0, "a page reference: destroy is busy");
	write_page(f, 0, 5);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a reference held");
	write_page(f, 1, 5);
	write_page(f, 2, 5); /* an already dirty file: no need of its own */
	CHECK_EQ(wait_kernel_pages(path, 3, 5), 3u,
		 "pages dirtied after the busy destroy are written by age");
	lpc_page_put(pg);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);

	c = tst_wcache_create(4096, PS, LPC_IO_SYNC, LPC_DIRTY_EXPIRE_NEVER, 0, 0);
	tst_wfile("busy", path, sizeof(path), 256 * PS, 1);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(f, 100, 0, &pg) == 0, "a page reference: destroy is busy");
	write_page(f, 0, 6);
	CHECK_EQ(flushers(), 0, "NEVER, one dirty page: no flusher");
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a reference held");
	CHECK_EQ(flushers(), 0, "a busy destroy starts no thread that nothing needs");
	lpc_page_put(pg);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(kernel_pages(path, 1, 6), 1u, "the close wrote the page");
	tst_cache_destroy(c);
}

static void story_bg_stop(void)
{
	struct lpc_cache *c = tst_wcache_create(1024, PS, LPC_IO_SYNC, LPC_DIRTY_EXPIRE_NEVER, 10,
						50);
	struct lpc_file *f;
	struct lpc_page *pg;
	char path[600];
	unsigned n;

	tst_wfile("stop", path, sizeof(path), 1024 * PS, 1);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(f, 900, 0, &pg) == 0, "a page reference: destroy is busy");
	atomic_store(&watch_cond, &c->wb.cond);
	n = atomic_load(&sleeps);
	for (uint64_t i = 0; i < 110; i++) /* the thread starts, writes, sleeps */
		write_page(f, i, 7);
	CHECK(wait_dirty_at_most(c, 102) <= 102, "the first background pass");
	/* The window opens right after the flusher went to sleep, so its
	 * tick (500 ms) does not fall into it. */
	n = atomic_load(&sleeps);
	for (int ms = 0; ms < 5000 && atomic_load(&sleeps) == n; ms++)
		tst_sleep_us(1000);
	CHECK(atomic_load(&sleeps) != n, "the flusher sleeps");
	atomic_store(&hold_cond, &c->wb.cond);
	for (uint64_t i = 110; i < 230; i++) /* across the threshold again */
		write_page(f, i, 7);
	atomic_store(&hold_cond, NULL);
	CHECK_EQ(lpc_fsync(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a reference held");
	atomic_store(&watch_cond, NULL);
	CHECK_EQ(flushers(), 0, "the busy destroy stopped the flusher");
	for (uint64_t i = 230; i < 530; i++) /* 300 dirty: above 102, below 512 */
		write_page(f, i, 7);
	CHECK(wait_dirty_at_most(c, 102) <= 102,
	      "writers above the threshold start the flusher again (%llu dirty: bg_on left set)",
	      (unsigned long long)dirty_pages(c));
	lpc_page_put(pg);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(kernel_pages(path, 530, 7), 530u, "every page in the kernel's file");
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	TST_RUN(story_age_retry());
	TST_RUN(story_bg_stuck());
	TST_RUN(story_evict_stuck());
	TST_RUN(story_busy_restart());
	TST_RUN(story_bg_stop());
	tst_rm_dir();
	return tst_finish();
}
