/* SPDX-License-Identifier: MIT */
/*
 * test_pread.c - lpc_pread on every kind of range (the whole file and more, at and
 * past the end, zero length, short reads, page crossings, random unaligned
 * ranges with some pages dropped) and lpc_page_get page by page, with page
 * sizes from 512 B to 2 MiB, both backends and both lookup modes.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_pread [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "../common/lpc_test.h"

#define MiB (1024ull * 1024ull)

/* --- pread with one page size and backend --- */
/* Checks guarantee A.1 of include/lpc/lpc.h. */
static void t_pread(size_t ps, int backend, int mode, uint64_t *rng)
{
	const uint64_t size = 5 * ps + ps / 2 + 3;
	struct lpc_cache *c = tst_cache_create(8 * ps, ps, backend, mode);
	struct tst_expect e = { .backend = backend, .salt = ps + (uint64_t)backend, .size = size,
			      .ps = ps };
	struct lpc_file *f;
	struct lpc_page *p;
	unsigned char *buf = malloc(size + 2 * ps);
	char path[600], name[64];
	uint64_t bad = 0;
	ssize_t r;

	REQUIRE(buf);
	snprintf(name, sizeof(name), "pread-%zu-%d-%d", ps, backend, mode);
	REQUIRE(tst_make_file(name, size, e.salt, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);

	/* The whole file, and more than the whole file. */
	memset(buf, 0xee, size + 2 * ps);
	r = lpc_pread(f, buf, size, 0);
	CHECK_EQ(r, (long long)size, "whole file, ps %zu", ps);
	CHECK(tst_check_bytes(&e, 0, buf, size, &bad), "whole file bad at %" PRIu64 " ps %zu", bad,
	      ps);
	r = lpc_pread(f, buf, size + 2 * ps, 0);
	CHECK_EQ(r, (long long)size, "more than the file, ps %zu", ps);
	CHECK(tst_check_bytes(&e, 0, buf, size, &bad), "bad at %" PRIu64, bad);
	CHECK(buf[size] == 0xee, "pread wrote past what it returned");

	/* Hits inside one page of 2 KiB and more (read.c copies those with a
	 * vector loop and its tail with memcpy), at odd page offsets, into odd
	 * destinations: the bytes, and nothing written around them. */
	static const size_t tails[] = { 0, 1, 127, 129 };

	for (size_t k = 0; ps >= 2048 && k < sizeof(tails) / sizeof(tails[0]); k++) {
		size_t len = (ps == 2048 ? 2048 - 129 : 2048) + tails[k];

		for (size_t shift = 0; shift < 4; shift += 3) {
			size_t pgoff = ps - len - (k & 1) * (ps - len) / 2;
			uint64_t off = ps + pgoff;

			memset(buf, 0xee, len + 8);
			r = lpc_pread(f, buf + shift + 1, len, off);
			CHECK_EQ(r, (long long)len, "in-page hit of %zu at %zu", len, pgoff);
			CHECK(tst_check_bytes(&e, off, buf + shift + 1, len, &bad),
			      "in-page hit of %zu at %zu bad at %" PRIu64, len, pgoff, bad);
			CHECK(buf[shift] == 0xee && buf[shift + 1 + len] == 0xee,
			      "in-page hit of %zu wrote outside its buffer", len);
		}
	}

	/* At and past end of file: 0, nothing written. */
	memset(buf, 0xee, 16);
	CHECK_EQ(lpc_pread(f, buf, 16, size), 0, "at EOF");
	CHECK_EQ(lpc_pread(f, buf, 16, size + 1), 0, "past EOF");
	CHECK_EQ(lpc_pread(f, buf, 16, 100 * ps), 0, "far past EOF");
	CHECK_EQ(lpc_pread(f, buf, 16, UINT64_MAX), 0, "offset UINT64_MAX");
	CHECK_EQ(lpc_pread(f, buf, 16, UINT64_MAX - 8), 0, "offset near UINT64_MAX");
	CHECK_EQ(lpc_pread(f, buf, SIZE_MAX, size), 0, "len SIZE_MAX at EOF");
	CHECK(buf[0] == 0xee, "pread at EOF wrote");
	/* Zero length anywhere. */
	CHECK_EQ(lpc_pread(f, buf, 0, 0), 0);
	CHECK_EQ(lpc_pread(f, buf, 0, ps + 1), 0);
	CHECK_EQ(lpc_pread(f, buf, 0, size + 5), 0);
	/* Short read at EOF. */
	r = lpc_pread(f, buf, 100, size - 10);
	CHECK_EQ(r, 10, "short at EOF");
	CHECK(tst_check_bytes(&e, size - 10, buf, 10, &bad), "short at EOF bytes");
	r = lpc_pread(f, buf, SIZE_MAX, size - 3);
	CHECK_EQ(r, 3, "len SIZE_MAX near EOF");
	CHECK(tst_check_bytes(&e, size - 3, buf, 3, &bad));
	/* Page crossings. */
	for (uint64_t k = 1; k <= 5; k++) {
		uint64_t off = k * ps - 7;

		r = lpc_pread(f, buf, 14, off);
		CHECK_EQ(r, 14, "crossing page %" PRIu64, k);
		CHECK(tst_check_bytes(&e, off, buf, 14, &bad), "crossing %" PRIu64 " bad at %" PRIu64,
		      k, bad);
	}
	r = lpc_pread(f, buf, 3 * ps + 2, ps - 1); /* touches 5 pages */
	CHECK_EQ(r, (long long)(3 * ps + 2));
	CHECK(tst_check_bytes(&e, ps - 1, buf, 3 * ps + 2, &bad), "bad at %" PRIu64, bad);
	/* Unaligned offsets and lengths at random (after dropping the cache, so
	 * some are misses, some hits). */
	CHECK(lpc_invalidate(f, 0, 0) >= 0);
	/* Fewer for big pages: each checks up to three pages of bytes. */
	int nrand = ps <= 4096 ? 300 : ps <= 65536 ? 60 : 12;

	for (int i = 0; i < nrand; i++) {
		uint64_t off = tst_rnd(rng) % (size + ps);
		size_t len = (size_t)(tst_rnd(rng) % (3 * ps + 1));
		size_t want = off >= size ? 0 : (size - off < len ? size - off : len);

		if (i % 50 == 0)
			lpc_invalidate(f, tst_rnd(rng) % size, tst_rnd(rng) % (2 * ps));
		r = lpc_pread(f, buf, len, off);
		if (!CHECK_EQ(r, (long long)want, "pread(%zu, %" PRIu64 ") ps %zu", len, off, ps))
			break;
		if (!CHECK(tst_check_bytes(&e, off, buf, want, &bad),
			   "pread(%zu, %" PRIu64 ") ps %zu bad at %" PRIu64, len, off, ps, bad))
			break;
	}
	/* Page by page through lpc_page_get: the frame holds the page (and
	 * zeros past the end of the file), aligned for O_DIRECT. */
	for (uint64_t i = 0; i * ps < size; i++) {
		if (!CHECK_EQ(lpc_page_get(f, i, 0, &p), 0, "get %" PRIu64, i))
			continue;
		CHECK(((uintptr_t)lpc_page_data(p) & ((ps < 4096 ? ps : 4096) - 1)) == 0,
		      "frame %p not aligned", lpc_page_data(p));
		CHECK(tst_check_page(&e, i, lpc_page_data(p)), "page %" PRIu64 " ps %zu", i, ps);
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_page_get(f, (size + ps - 1) / ps, 0, &p), -ENXIO);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(buf);
}

int main(int argc, char **argv)
{
	uint64_t rng;
	size_t big = 2u << 20;

	tst_init(argc, argv, 100);
	rng = tst_seed;
	tst_require_tmpdir();

	static const size_t sizes[] = { 512, 4096, 65536 };
	for (size_t i = 0; i < 3; i++) {
		TST_RUN(t_pread(sizes[i], LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, &rng));
		TST_RUN(t_pread(sizes[i], LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, &rng));
	}
	TST_RUN(t_pread(4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKED, &rng));
	/* 2 MiB pages: an 8-frame cache is 16 MiB and the file 11 MiB. */
	{
		void *probe = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (probe != MAP_FAILED) {
			munmap(probe, 64 * MiB);
			TST_RUN(t_pread(big, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, &rng));
			TST_RUN(t_pread(big, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, &rng));
		} else {
			printf("note: 2 MiB pages skipped (no memory)\n");
		}
	}
	return tst_finish();
}
