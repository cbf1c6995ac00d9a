/* SPDX-License-Identifier: MIT */
/*
 * test_write_flusher.c - the flusher's thread starts when first needed
 * (writeback/flusher.c F0-F3, lpc.h J.5), on each write backend, counted by
 * its name in /proc/self/task:
 *
 *   lazy     lpc_cache_create starts no thread; a read starts none; the
 *            first page dirtied does (timed writeback), and its page is
 *            written back by age without an lpc_fsync
 *   never    dirty_expire_ms LPC_DIRTY_EXPIRE_NEVER: writes and lpc_fsync
 *            below the background threshold start no thread, and a dirty
 *            page stays dirty however long it waits; passing the threshold
 *            starts the flusher, which writes the pages back
 *   restart  lpc_cache_destroy that finds the cache busy (a held page) lets
 *            the flusher start again: dirty pages written later are still
 *            written back by age
 *   config   dirty_expire_ms above UINT32_MAX is -EINVAL, except NEVER
 */
#include <fcntl.h>

#include "../common/write_test.h"

#define PS 4096
#define FRAMES 64

/* Threads named lpc-flusher: the fewest seen over about 50 ms.  One sample
 * can count a thread too many: a joined thread stays in /proc/self/task a
 * moment after pthread_join returns (the kernel wakes the joiner before it
 * reaps the task), and a thread the flusher creates bears its name until it
 * names itself; under TSan on a loaded machine a sample saw 2 flushers in a
 * cache that has one.  A flusher never ends on its own (only lpc_wb_stop
 * joins it), so the fewest is the count: a second flusher, a missing one or
 * one not joined is still seen in every sample. */
static unsigned flushers(void)
{
	unsigned least = tst_threads_named("lpc-flusher");

	for (int i = 0; i < 10 && least > 0; i++) {
		unsigned n;

		tst_sleep_us(5000);
		n = tst_threads_named("lpc-flusher");
		if (n < least)
			least = n;
	}
	return least;
}

static uint64_t dirty_now(struct lpc_cache *c)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	return s.dirty_pages;
}

/* Waits up to ms for the cache's dirty pages to reach 0. */
static bool clean_within(struct lpc_cache *c, unsigned ms)
{
	for (unsigned i = 0; i < ms; i++) {
		if (!dirty_now(c))
			return true;
		tst_sleep_us(1000);
	}
	return !dirty_now(c);
}

static void lazy(int backend)
{
	const char *bn = tst_backend_name(backend);
	unsigned char buf[PS];
	char path[512];
	struct lpc_cache *c;
	struct lpc_file *f;

	tst_wfile("flusher-lazy-", path, sizeof(path), 4 * PS, 1);
	c = tst_wcache_create(FRAMES, PS, backend, 20, 0, 0);
	CHECK_EQ(flushers(), 0u, "%s: no flusher after lpc_cache_create", bn);
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &f) == 0, "open");
	CHECK_EQ(lpc_pread(f, buf, PS, 0), (ssize_t)PS, "%s: read", bn);
	CHECK_EQ(flushers(), 0u, "%s: no flusher after a read", bn);
	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(lpc_pwrite(f, buf, PS, PS), (ssize_t)PS, "%s: write", bn);
	CHECK_EQ(flushers(), 1u, "%s: the first dirty page started the flusher", bn);
	CHECK(clean_within(c, 5000), "%s: the page written back by age, no lpc_fsync", bn);
	CHECK_EQ(lpc_file_close(f), 0, "%s: close", bn);
	tst_cache_destroy(c);
	CHECK_EQ(flushers(), 0u, "%s: destroy joined the flusher", bn);
}

static void never(int backend)
{
	const char *bn = tst_backend_name(backend);
	unsigned char buf[PS];
	char path[512];
	struct lpc_cache *c;
	struct lpc_file *f;

	tst_wfile("flusher-never-", path, sizeof(path), 0, 2);
	/* Background 10 % of 64 frames: 6 pages; limit 50 %. */
	c = tst_wcache_create(FRAMES, PS, backend, LPC_DIRTY_EXPIRE_NEVER, 10, 50);
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &f) == 0, "open");
	memset(buf, 0x11, sizeof(buf));
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(lpc_pwrite(f, buf, PS, (off_t)i * PS), (ssize_t)PS, "%s: write %u", bn, i);
	CHECK_EQ(lpc_fsync(f), 0, "%s: fsync", bn);
	CHECK_EQ(flushers(), 0u, "%s: writes and fsync below the threshold start no thread", bn);
	CHECK_EQ(lpc_pwrite(f, buf, PS, 0), (ssize_t)PS, "%s: rewrite", bn);
	tst_sleep_us(300 * 1000);
	CHECK_EQ(dirty_now(c), 1u, "%s: a page dirty 300 ms is not written by age", bn);
	CHECK_EQ(flushers(), 0u, "%s: still no thread", bn);
	for (unsigned i = 0; i < 12; i++)
		CHECK_EQ(lpc_pwrite(f, buf, PS, (off_t)i * PS), (ssize_t)PS, "%s: write %u", bn, i);
	CHECK_EQ(flushers(), 1u, "%s: the background threshold started the flusher", bn);
	/* The flusher writes while the cache stays above the threshold. */
	for (unsigned i = 0; i < 5000 && dirty_now(c) > 6; i++)
		tst_sleep_us(1000);
	CHECK(dirty_now(c) <= 6, "%s: the flusher wrote down to the threshold (%" PRIu64 " dirty)",
	      bn, dirty_now(c));
	CHECK_EQ(lpc_file_close(f), 0, "%s: close", bn);
	tst_cache_destroy(c);
	{
		unsigned char back[12 * PS], want[12 * PS];

		memset(want, 0x11, sizeof(want));
		CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), (int64_t)sizeof(back),
			 "%s: size on disk", bn);
		CHECK_EQ(tst_first_diff(back, want, sizeof(back)), -1, "%s: bytes on disk", bn);
	}
}

static void restart(int backend)
{
	const char *bn = tst_backend_name(backend);
	unsigned char buf[PS];
	struct lpc_page *p;
	char path[512];
	struct lpc_cache *c;
	struct lpc_file *f;

	tst_wfile("flusher-restart-", path, sizeof(path), 4 * PS, 3);
	c = tst_wcache_create(FRAMES, PS, backend, 20, 0, 0);
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &f) == 0, "open");
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "get");
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "%s: destroy with a held page", bn);
	CHECK_EQ(flushers(), 0u, "%s: nothing dirty: no thread after the busy destroy", bn);
	memset(buf, 0x77, sizeof(buf));
	CHECK_EQ(lpc_pwrite(f, buf, PS, PS), (ssize_t)PS, "%s: write", bn);
	CHECK_EQ(flushers(), 1u, "%s: allowed again: the write started the flusher", bn);
	CHECK(clean_within(c, 5000), "%s: written back by age after the busy destroy", bn);
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(f), 0, "%s: close", bn);
	tst_cache_destroy(c);
}

static void config(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;

	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.dirty_expire_ms = (uint64_t)UINT32_MAX + 1;
	CHECK_EQ(lpc_cache_create(&cfg, &c), -EINVAL, "expire past UINT32_MAX");
	cfg.dirty_expire_ms = LPC_DIRTY_EXPIRE_NEVER - 1;
	CHECK_EQ(lpc_cache_create(&cfg, &c), -EINVAL, "expire NEVER - 1");
	cfg.dirty_expire_ms = LPC_DIRTY_EXPIRE_NEVER;
	CHECK_EQ(lpc_cache_create(&cfg, &c), 0, "expire NEVER");
	if (c)
		tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	config();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		lazy(tst_write_backends[b]);
		never(tst_write_backends[b]);
		restart(tst_write_backends[b]);
	}
	return tst_finish();
}
