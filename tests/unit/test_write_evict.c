/* SPDX-License-Identifier: MIT */
/*
 * test_write_evict.c - eviction hands the dirty pages it meets to writeback
 * (reclaim/evict.c E8), on every write backend.
 *
 * A cache of 64 frames whose flusher never writes of its own accord (age
 * 2^32 ms, background and hard limits 100 %: no writer is ever throttled)
 * fills with dirty pages through lpc_pwrite over a file 4x its size: whole
 * pages (private frames, inserted dirty), then partial writes (read, then
 * changed in place), with lpc_page_get of pages not cached and
 * lpc_page_alloc between them.  Each needs a frame while every cached page
 * may be dirty: none may fail with -ENOMEM (dirty pages could be written
 * and then evicted), and after lpc_fsync the file read through a fresh
 * kernel descriptor holds every byte written (a dirty page is never dropped
 * for a frame).  Before the hand-off existed, the first allocation after
 * the cache filled waited alloc_wait_ms and failed.
 *
 * Usage: test_write_evict [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/write_test.h"

static const size_t PS = 4096;
#define FRAMES 64
#define FILE_PAGES (4 * FRAMES)

static void run(int backend)
{
	size_t size = FILE_PAGES * PS;
	unsigned char *ref = malloc(size), *back = malloc(size), *buf = malloc(PS);
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats st;
	char path[512], name[32];
	uint64_t rng = tst_seed * 7919 + (uint64_t)backend;
	int enomem = 0;

	REQUIRE(ref && back && buf);
	snprintf(name, sizeof(name), "we%d", backend);
	REQUIRE(tst_make_file(name, size, 11, path, sizeof(path)) == 0);
	tst_file_bytes(11, 0, ref, size);
	c = tst_wcache_create(FRAMES, PS, backend, UINT32_MAX, 100, 100);
	f = tst_file_open(c, path, O_RDWR);

	/* Whole pages: every frame ends up dirty after the first 64. */
	for (unsigned i = 0; i < FILE_PAGES; i++) {
		ssize_t n;

		tst_file_bytes(100 + i, 0, ref + i * PS, PS);
		n = lpc_pwrite(f, ref + i * PS, PS, (uint64_t)i * PS);
		enomem += n == -ENOMEM;
		if (!CHECK_EQ(n, (ssize_t)PS, "%s: whole-page lpc_pwrite of page %u",
			      tst_backend_name(backend), i))
			break;
	}
	/* Partial writes (read first), gets and private pages in between. */
	for (unsigned i = 0; i < 3 * FILE_PAGES; i++) {
		uint64_t off = tst_rnd(&rng) % (size - 1);
		size_t len = 1 + tst_rnd(&rng) % (2 * PS);
		struct lpc_page *p;
		ssize_t n;
		int rc;

		if (len > size - off)
			len = size - off;
		tst_file_bytes(1000 + i, off, ref + off, len);
		n = lpc_pwrite(f, ref + off, len, off);
		enomem += n == -ENOMEM;
		if (!CHECK_EQ(n, (ssize_t)len, "%s: lpc_pwrite(%zu at %llu)",
			      tst_backend_name(backend), len, (unsigned long long)off))
			break;
		if (i % 4 == 0) {
			rc = lpc_page_get(f, tst_rnd(&rng) % FILE_PAGES, 0, &p);
			enomem += rc == -ENOMEM;
			if (!CHECK_EQ(rc, 0, "%s: lpc_page_get", tst_backend_name(backend)))
				break;
			lpc_page_put(p);
		}
		if (i % 8 == 0) {
			rc = lpc_page_alloc(c, &p);
			enomem += rc == -ENOMEM;
			if (!CHECK_EQ(rc, 0, "%s: lpc_page_alloc", tst_backend_name(backend)))
				break;
			lpc_page_put(p);
		}
	}
	CHECK_EQ(enomem, 0, "%s: -ENOMEM with dirty pages that could be written",
		 tst_backend_name(backend));
	lpc_stats(c, &st);
	CHECK(st.evictions > 0 && st.writeback_pages > 0,
	      "%s: evictions %llu, writeback pages %llu", tst_backend_name(backend),
	      (unsigned long long)st.evictions, (unsigned long long)st.writeback_pages);
	CHECK_EQ(st.alloc_failures, 0, "%s: allocation failures", tst_backend_name(backend));
	CHECK_EQ(st.throttled, 0, "%s: writers throttled (limit 100 %%)", tst_backend_name(backend));

	/* Nothing lost: the file through a fresh descriptor. */
	CHECK_EQ(lpc_fsync(f), 0, "%s: lpc_fsync", tst_backend_name(backend));
	CHECK_EQ(tst_kernel_read(path, back, size), (int64_t)size, "%s: size",
		 tst_backend_name(backend));
	CHECK_EQ(tst_first_diff(ref, back, size), -1, "%s: first byte that differs",
		 tst_backend_name(backend));
	CHECK_EQ(lpc_file_close(f), 0, "close");
	tst_cache_destroy(c);
	free(ref);
	free(back);
	free(buf);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++)
		run(tst_write_backends[b]);
	return tst_finish();
}
