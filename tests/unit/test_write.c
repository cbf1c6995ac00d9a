/* SPDX-License-Identifier: MIT */
/*
 * test_write.c - lpc_pwrite, lpc_page_mark_dirty, lpc_fsync, lpc_truncate
 * and what close, destroy and invalidate do with dirty pages, on every
 * write backend (guarantees H.1-H.6 of lpc.h):
 *
 *  - round trips: random offsets and lengths (unaligned, page-crossing,
 *    past the end, into holes), each followed by a pread checked byte for
 *    byte against a reference buffer; then lpc_fsync, and the file read
 *    through a fresh kernel descriptor must equal the reference; then the
 *    cache is dropped and read again (g_h1, g_h2);
 *  - a whole-page write into an uncached page reads nothing;
 *  - contiguous dirty pages go out in one vectored write (coalescing);
 *  - a write of several new pages gives them ascending frames, after the
 *    cache was filled and emptied (frames_ascending);
 *  - lpc_invalidate skips dirty pages, drops them once written (g_h6);
 *  - the last close and lpc_cache_destroy write back first (g_h6);
 *  - lpc_page_mark_dirty: the change reaches the file; its errors (g_h4);
 *  - lpc_truncate: shrink (pages gone, tail zeroed, the kernel's size),
 *    grow (zeros), a held page survives and cannot be marked dirty (g_h4);
 *  - a read-only file refuses writes.
 *
 * Usage: test_write [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/write_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;

/* The reference: a file's expected bytes and size. */
struct ref {
	unsigned char *b;
	size_t cap, size;
};

static void ref_init(struct ref *r, size_t cap, uint64_t size, uint64_t salt)
{
	r->b = calloc(1, cap);
	REQUIRE(r->b);
	r->cap = cap;
	r->size = size;
	tst_file_bytes(salt, 0, r->b, size);
}

static bool check_pread(struct lpc_file *f, const struct ref *r, uint64_t off, size_t len)
{
	unsigned char *buf = malloc(len + 1);
	size_t want = off >= r->size ? 0 : r->size - off < len ? r->size - off : len;
	ssize_t got = lpc_pread(f, buf, len, off);
	bool ok = CHECK_EQ(got, (ssize_t)want, "pread at %llu len %zu", (unsigned long long)off,
			   len);

	if (ok && want) {
		int64_t d = tst_first_diff(buf, r->b + off, want);

		ok = CHECK(d < 0, "pread at %llu: byte %lld differs", (unsigned long long)off,
			   (long long)(off + (uint64_t)d));
	}
	free(buf);
	return ok;
}

static bool check_kernel(const char *path, const struct ref *r)
{
	unsigned char *buf = calloc(1, r->cap);
	int64_t size = tst_kernel_read(path, buf, r->cap);
	bool ok = CHECK_EQ(size, (int64_t)r->size, "kernel size");

	if (ok) {
		int64_t d = tst_first_diff(buf, r->b, r->size);

		ok = CHECK(d < 0, "kernel file: byte %lld differs", (long long)d);
	}
	free(buf);
	return ok;
}

static void g_h1_h2_round_trips(int backend, int rounds)
{
	uint64_t rng = tst_seed ^ 0x77;
	const size_t cap = 48 * PS;
	char path[600];
	struct lpc_cache *c = tst_wcache_create(256, PS, backend, 0, 0, 0);
	struct lpc_file *f;
	unsigned char *src = malloc(4 * PS);
	struct ref r;
	int bad = 0;

	tst_wfile("w", path, sizeof(path), 10 * PS + 123, 5);
	ref_init(&r, cap, 10 * PS + 123, 5);
	f = tst_file_open(c, path, O_RDWR);
	for (int i = 0; i < rounds && !bad; i++) {
		uint64_t kind = tst_rnd(&rng) % 8;
		uint64_t off = tst_rnd(&rng) % (32 * PS);
		size_t len = 1 + tst_rnd(&rng) % (3 * PS);

		if (kind == 0)
			off &= ~(uint64_t)(PS - 1); /* aligned */
		if (kind == 1)
			len = PS;
		if (kind == 2)
			off = r.size + tst_rnd(&rng) % (2 * PS); /* past the end: a hole */
		if (off + len > cap - PS)
			continue;
		for (size_t k = 0; k < len; k++)
			src[k] = (unsigned char)tst_rnd(&rng);
		if (!CHECK_EQ(lpc_pwrite(f, src, len, off), (ssize_t)len, "pwrite %d", i)) {
			bad = 1;
			break;
		}
		memcpy(r.b + off, src, len);
		if (off + len > r.size)
			r.size = off + len;
		if (!check_pread(f, &r, tst_rnd(&rng) % (r.size + PS), 1 + tst_rnd(&rng) % (3 * PS)))
			bad = 1;
		if (!check_pread(f, &r, off, len))
			bad = 1;
		if (i % 97 == 50)
			CHECK_EQ(lpc_fsync(f), 0, "fsync in the middle");
	}
	check_pread(f, &r, 0, r.size + PS);
	CHECK_EQ(lpc_fsync(f), 0, "fsync");
	check_kernel(path, &r);
	/* Clean now: invalidate drops everything, reads come from the file. */
	CHECK(lpc_invalidate(f, 0, 0) > 0, "invalidate after fsync drops pages");
	check_pread(f, &r, 0, r.size + PS);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(src);
	free(r.b);
}

static void whole_page_no_read(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 0, 0, 0);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	unsigned char page[4096];
	struct lpc_page *p;

	tst_wfile("w", path, sizeof(path), 8 * PS, 9);
	f = tst_file_open(c, path, O_RDWR);
	memset(page, 0xab, PS);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pwrite(f, page, PS, 3 * PS), (ssize_t)PS);
	CHECK_EQ(lpc_pwrite(f, page, 2 * PS > sizeof(page) ? PS : PS, 20 * PS), (ssize_t)PS,
		 "whole page past the end");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 0, "a whole-page write reads nothing");
	CHECK_EQ(s1.dirty_pages, 2);
	CHECK_EQ(s1.writes - s0.writes, 2);
	CHECK_EQ(s1.write_bytes - s0.write_bytes, 2 * PS);
	/* The page is there, UPTODATE, with the data; the hole reads zeros. */
	if (CHECK_EQ(lpc_page_find(f, 3, &p), 0)) {
		CHECK(!memcmp(lpc_page_data(p), page, PS));
		lpc_page_put(p);
	}
	if (CHECK_EQ(lpc_page_get(f, 12, 0, &p), 0, "a page in the hole")) {
		unsigned char z[4096] = { 0 };

		CHECK(!memcmp(lpc_page_data(p), z, PS), "the hole reads zeros");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void coalescing(int backend)
{
	char path[600];
	/* Limits high enough that no writer throttles. */
	struct lpc_cache *c = tst_wcache_create(256, PS, backend, 60000, 80, 90);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	unsigned char *buf = malloc(64 * PS);

	tst_wfile("w", path, sizeof(path), 0, 1);
	f = tst_file_open(c, path, O_RDWR);
	for (size_t i = 0; i < 64 * PS; i++)
		buf[i] = (unsigned char)(i * 7 + i / PS);
	/* Dirtied out of order, in pieces. */
	for (int k = 63; k >= 0; k -= 2)
		CHECK_EQ(lpc_pwrite(f, buf + (size_t)k * PS, PS, (uint64_t)k * PS), (ssize_t)PS);
	for (int k = 0; k < 64; k += 2)
		CHECK_EQ(lpc_pwrite(f, buf + (size_t)k * PS, PS, (uint64_t)k * PS), (ssize_t)PS);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.dirty_pages, 64);
	CHECK_EQ(lpc_fsync(f), 0);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.writeback_pages - s0.writeback_pages, 64);
	CHECK_EQ(s1.vectored_writes - s0.vectored_writes, 1, "64 contiguous pages, one write");
	CHECK_EQ(s1.dirty_pages, 0);
	CHECK_EQ(s1.fsyncs - s0.fsyncs, 1);
	{
		struct ref r = { .b = buf, .cap = 64 * PS, .size = 64 * PS };

		check_kernel(path, &r);
	}
	/* Nothing dirty: a second fsync writes nothing. */
	CHECK_EQ(lpc_fsync(f), 0);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.writeback_pages, s1.writeback_pages);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(buf);
}

/*
 * The new pages of one lpc_pwrite get frames that ascend with their index
 * (write.c WB1-WB3), so writeback's vectored write of them is few segments
 * (adjacent frames merge).  Checked after the cache was filled and its
 * pages dropped: the free lists then hand frames out last-freed first, and
 * a page-by-page allocation gave a write's pages descending frames (every
 * page its own segment: a 4 MiB write of 1024 segments was split by a
 * virtio disk, max_segments 254, into five requests).
 */
static void frames_ascending(int backend)
{
	char path[600], path2[600];
	/* 1024 frames: a batch of WRITE_BATCH (64) fits in a sixteenth */
	struct lpc_cache *c = tst_wcache_create(1024, PS, backend, 60000, 80, 90);
	struct lpc_file *f, *f2;
	unsigned char *buf = malloc(64 * PS);
	char *prev = NULL;

	REQUIRE(buf);
	memset(buf, 0x5a, 64 * PS);
	tst_wfile("w", path, sizeof(path), 0, 1);
	tst_wfile("w2", path2, sizeof(path2), 0, 1);
	f = tst_file_open(c, path, O_RDWR);
	f2 = tst_file_open(c, path2, O_RDWR);
	/* Twice the cache written and written back, 64 pages at a time: every
	 * frame carved, and the clean pages evicted, their frames freed in
	 * the clock hand's order. */
	for (uint64_t k = 0; k < 2048; k++) {
		CHECK_EQ(lpc_pwrite(f2, buf, PS, k * PS), (ssize_t)PS);
		if (k % 64 == 63)
			CHECK_EQ(lpc_fsync(f2), 0);
	}
	/* 8 cached pages in the middle of the range: the write's new pages
	 * around them still ascend, the cached ones are written in place. */
	CHECK_EQ(lpc_pwrite(f, buf, 8 * PS, 20 * PS), (ssize_t)(8 * PS));
	CHECK_EQ(lpc_pwrite(f, buf, 48 * PS, 0), (ssize_t)(48 * PS));
	for (uint64_t i = 0; i < 48; i++) {
		struct lpc_page *p;
		char *d;

		if (i >= 20 && i < 28)
			continue;
		if (!CHECK_EQ(lpc_page_find(f, i, &p), 0, "page %" PRIu64 " cached", i))
			break;
		d = lpc_page_data(p);
		lpc_page_put(p);
		if (!CHECK(!prev || d > prev, "page %" PRIu64 "'s frame %p, the one before %p: "
			   "a write's new frames ascend", i, (void *)d, (void *)prev))
			break;
		prev = d;
	}
	CHECK_EQ(lpc_fsync(f), 0);
	{
		struct ref r = { .b = calloc(1, 48 * PS), .cap = 48 * PS, .size = 48 * PS };

		REQUIRE(r.b);
		memset(r.b, 0x5a, 48 * PS);
		check_kernel(path, &r);
		free(r.b);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_file_close(f2), 0);
	tst_cache_destroy(c);
	free(buf);
}

static void g_h6_invalidate_close_destroy(int backend)
{
	char path[600], path2[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 0, 0, 0);
	struct lpc_file *f, *f2;
	unsigned char buf[3 * 4096];
	struct ref r;

	tst_wfile("w", path, sizeof(path), 4 * PS, 11);
	ref_init(&r, 16 * PS, 4 * PS, 11);
	f = tst_file_open(c, path, O_RDWR);
	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(lpc_pwrite(f, buf, sizeof(buf), 100), (ssize_t)sizeof(buf));
	memcpy(r.b + 100, buf, sizeof(buf));
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "dirty pages are never dropped");
	check_pread(f, &r, 0, 4 * PS);
	/* A second open shares the file; its close is not the last. */
	f2 = tst_file_open(c, path, O_RDWR);
	CHECK(f2 == f);
	CHECK_EQ(lpc_file_close(f2), 0);
	CHECK_EQ(lpc_file_close(f), 0, "the last close writes back");
	check_kernel(path, &r);

	/* Destroy writes back too. */
	tst_wfile("w", path2, sizeof(path2), PS, 12);
	f = tst_file_open(c, path2, O_RDWR);
	CHECK_EQ(lpc_pwrite(f, buf, 10, PS + 5), 10);
	tst_cache_destroy(c);
	{
		unsigned char k[2 * 4096];
		unsigned char want[2 * 4096];

		tst_file_bytes(12, 0, want, PS);
		memset(want + PS, 0, 5);
		memcpy(want + PS + 5, buf, 10);
		CHECK_EQ(tst_kernel_read(path2, k, sizeof(k)), (int64_t)PS + 15, "destroy wrote back");
		CHECK(!memcmp(k, want, PS + 15));
	}
	free(r.b);
}

static void g_h4_mark_dirty(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 0, 0, 0);
	struct lpc_file *f;
	struct lpc_page *p, *priv;
	struct ref r;

	tst_wfile("w", path, sizeof(path), 6 * PS, 13);
	ref_init(&r, 8 * PS, 6 * PS, 13);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(f, 2, 0, &p) == 0);
	CHECK_EQ(lpc_page_mark_dirty(p), -EINVAL, "not locked");
	CHECK_EQ(lpc_page_mark_dirty(NULL), -EINVAL);
	lpc_page_lock(p);
	memset((char *)lpc_page_data(p) + 10, 0xee, 100);
	memset(r.b + 2 * PS + 10, 0xee, 100);
	CHECK_EQ(lpc_page_mark_dirty(p), 0);
	CHECK_EQ(lpc_page_mark_dirty(p), 0, "twice is fine");
	lpc_page_unlock(p);
	CHECK_EQ(lpc_fsync(f), 0);
	check_kernel(path, &r);
	REQUIRE(lpc_page_alloc(c, &priv) == 0);
	lpc_page_lock(priv);
	CHECK_EQ(lpc_page_mark_dirty(priv), -EINVAL, "a private page");
	lpc_page_unlock(priv);
	lpc_page_put(priv);
	/* Truncated under its holder: valid, but no longer cached. */
	CHECK_EQ(lpc_truncate(f, PS), 0);
	lpc_page_lock(p);
	CHECK_EQ(lpc_page_mark_dirty(p), -ENOENT, "truncated away");
	lpc_page_unlock(p);
	CHECK(((unsigned char *)lpc_page_data(p))[10] == 0xee, "held page still valid");
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(r.b);
}

static void g_h4_truncate(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 0, 0, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	unsigned char buf[4096];
	struct ref r;

	tst_wfile("w", path, sizeof(path), 8 * PS, 17);
	ref_init(&r, 16 * PS, 8 * PS, 17);
	f = tst_file_open(c, path, O_RDWR);
	check_pread(f, &r, 0, 8 * PS); /* every page cached */
	memset(buf, 0x33, sizeof(buf));
	CHECK_EQ(lpc_pwrite(f, buf, PS, 6 * PS), (ssize_t)PS); /* a dirty page dropped */
	CHECK_EQ(lpc_truncate(f, 3 * PS + 100), 0);
	r.size = 3 * PS + 100;
	memset(r.b + r.size, 0, r.cap - r.size);
	CHECK_EQ(lpc_page_find(f, 5, &p), -ENOENT, "past the end: gone");
	CHECK_EQ(lpc_page_find(f, 6, &p), -ENOENT, "dirty past the end: gone");
	CHECK_EQ(tst_file_size(path), (int64_t)r.size, "the kernel's size");
	check_pread(f, &r, 0, 8 * PS);
	{
		struct lpc_stats s;

		lpc_stats(c, &s);
		CHECK_EQ(s.dirty_pages, 0, "the dropped dirty page is no longer counted");
	}
	/* Grow: zeros, the old tail included. */
	CHECK_EQ(lpc_truncate(f, 6 * PS), 0);
	r.size = 6 * PS;
	check_pread(f, &r, 0, 8 * PS);
	CHECK_EQ(tst_file_size(path), (int64_t)r.size);
	/* Write past, shrink into the written page, fsync: the kernel agrees. */
	CHECK_EQ(lpc_pwrite(f, buf, 300, 7 * PS), 300);
	memcpy(r.b + 7 * PS, buf, 300);
	r.size = 7 * PS + 300;
	CHECK_EQ(lpc_truncate(f, 7 * PS + 200), 0);
	r.size = 7 * PS + 200;
	memset(r.b + r.size, 0, 100);
	CHECK_EQ(lpc_fsync(f), 0);
	check_kernel(path, &r);
	check_pread(f, &r, 0, 9 * PS);
	CHECK_EQ(lpc_invalidate(f, 0, 0) >= 0, 1);
	CHECK_EQ(lpc_truncate(f, 7 * PS + 1000), 0, "grow the partial page");
	r.size = 7 * PS + 1000;
	check_pread(f, &r, 0, 9 * PS);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(r.b);
}

static void read_only(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(16, PS, backend, 0, 0, 0);
	struct lpc_file *f;

	tst_wfile("w", path, sizeof(path), PS, 3);
	f = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lpc_pwrite(f, "x", 1, 0), -EBADF);
	CHECK_EQ(lpc_truncate(f, 0), -EBADF);
	CHECK_EQ(lpc_pwrite(NULL, "x", 1, 0), -EINVAL);
	CHECK_EQ(lpc_pwrite(f, NULL, 1, 0), -EINVAL);
	CHECK_EQ(lpc_fsync(NULL), -EINVAL);
	CHECK_EQ(lpc_truncate(NULL, 0), -EINVAL);
	CHECK_EQ(lpc_fsync(f), 0, "nothing to write");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		int be = tst_write_backends[b];

		printf("backend %s\n", tst_backend_name(be));
		TST_RUN(g_h1_h2_round_trips(be, 600));
		TST_RUN(whole_page_no_read(be));
		TST_RUN(coalescing(be));
		TST_RUN(frames_ascending(be));
		TST_RUN(g_h6_invalidate_close_destroy(be));
		TST_RUN(g_h4_mark_dirty(be));
		TST_RUN(g_h4_truncate(be));
		TST_RUN(read_only(be));
	}
	return tst_finish();
}
