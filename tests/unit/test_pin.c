/* SPDX-License-Identifier: MIT */
/*
 * test_pin.c - lpc_pin, lpc_unpin and lpc_pin_iov (guarantees I.1-I.3 of
 * include/lpc/lpc.h), in both lookup modes:
 *
 *  - i1_random_ranges: random ranges (unaligned, page-crossing, crossing the
 *    radix tree's 64-page leaves, at and past EOF) return exactly the pages
 *    of the range, in order, with the file's data; the iovec of lpc_pin_iov
 *    covers exactly the range's bytes; cold (slow path) and warm (fast);
 *  - i1_errors: len 0, -ENXIO past EOF, -E2BIG when max is too small (nothing
 *    pinned), -EBADF for LPC_PIN_WRITE on a read-only file, -EINVAL for
 *    unknown flags and NULLs;
 *  - i1_read_error: a read error in the middle of a range (fault hook) is
 *    -EIO with no page left pinned (every cached page's ref is the index's 1);
 *  - i2_survives: a pinned page survives lpc_invalidate (not dropped) and the
 *    last close (same frame, same data until unpin; destroy is -EBUSY while
 *    it is pinned);
 *  - i3_counters: a range with absent pages is counted slow, a cached one
 *    fast; pages_pinned counts the pages;
 *  - iov_errors: lpc_pin_iov refuses a range the pages do not cover and
 *    pages that are not consecutive.
 *
 * Usage: test_pin [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;
static int nfile;

struct tfile {
	struct lpc_file *f;
	char path[600];
	struct tst_expect e;
};

static void mk_file(struct lpc_cache *c, struct tfile *t, uint64_t size)
{
	char name[32];

	snprintf(name, sizeof(name), "pin%d", nfile++);
	t->e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 11 + (uint64_t)nfile,
				    .size = size, .ps = PS };
	REQUIRE(tst_make_file(name, size, t->e.salt, t->path, sizeof(t->path)) == 0, "file");
	t->f = tst_file_open(c, t->path, O_RDONLY);
}

/* The reference count of page `index` of f if cached, else 0. */
static uint32_t ref_of(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;
	uint32_t r = 0;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	if (p)
		r = atomic_load(&p->ref);
	lpc_rcu_read_unlock();
	return r;
}

/* Every cached page of f's first `pages` has only the index's reference. */
static bool none_pinned(struct lpc_file *f, uint64_t pages)
{
	for (uint64_t i = 0; i < pages; i++) {
		uint32_t r = ref_of(f, i);

		if (r > 1) {
			fprintf(stderr, "  page %llu has ref %u\n", (unsigned long long)i, r);
			return false;
		}
	}
	return true;
}

/* Checks one pin of [off, off + len): the pages, their data and the iovec. */
static void check_range(struct tfile *t, uint64_t off, size_t len)
{
	struct lpc_page *pages[80];
	struct iovec iov[80];
	uint64_t size = t->e.size, end = len > size || off + len > size ? size : off + len;
	int n, k;

	n = lpc_pin(t->f, off, len, LPC_PIN_READ, pages, 80);
	if (off >= size) {
		CHECK_EQ(n, len ? -ENXIO : 0, "pin at %llu past EOF %llu", (unsigned long long)off,
			 (unsigned long long)size);
		return;
	}
	if (len == 0) {
		CHECK_EQ(n, 0, "len 0");
		return;
	}
	if (!CHECK_EQ(n, (int)((end - 1) / PS - off / PS + 1), "pages of [%llu, +%zu)",
		      (unsigned long long)off, len))
		return;
	for (int i = 0; i < n; i++) {
		uint64_t idx = off / PS + (uint64_t)i;

		CHECK(atomic_load(&pages[i]->index) == idx && atomic_load(&pages[i]->file) == t->f,
		      "page %d of the range is index %llu", i, (unsigned long long)idx);
		CHECK(tst_check_page(&t->e, idx, lpc_page_data(pages[i])), "data of page %llu",
		      (unsigned long long)idx);
		CHECK(atomic_load(&pages[i]->ref) >= LPC_PIN_BIAS, "page %d is pinned", i);
	}
	k = lpc_pin_iov(pages, (unsigned)n, off, (size_t)(end - off), iov);
	if (CHECK(k > 0 && k <= n, "iov entries %d for %d pages", k, n)) {
		size_t total = 0;
		unsigned char *buf = malloc((size_t)(end - off));
		uint64_t bad = 0;

		REQUIRE(buf);
		for (int i = 0; i < k; i++) {
			memcpy(buf + total, iov[i].iov_base, iov[i].iov_len);
			total += iov[i].iov_len;
		}
		CHECK_EQ(total, end - off, "the iovec covers exactly the range");
		CHECK(iov[0].iov_base == (char *)lpc_page_data(pages[0]) + off % PS,
		      "the first entry starts at off");
		CHECK(tst_check_bytes(&t->e, off, buf, (size_t)(end - off), &bad),
		      "iov bytes at %llu", (unsigned long long)bad);
		free(buf);
	}
	lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
}

static void i1_random_ranges(int mode)
{
	struct lpc_cache *c = tst_cache_create(512 * PS, PS, LPC_IO_SYNC, mode);
	uint64_t size = 200 * PS + 123, s = tst_seed;
	struct tfile t;

	mk_file(c, &t, size);
	for (int pass = 0; pass < 2; pass++) {
		/* Fixed cases: leaf boundaries (64), EOF, page edges. */
		check_range(&t, 0, 1);
		check_range(&t, 63 * PS + 4000, 200);		/* crosses leaf 0 -> 1 */
		check_range(&t, 60 * PS, 10 * PS);		/* 60..69 */
		check_range(&t, 127 * PS, 2 * PS + 1);		/* 127..129 */
		check_range(&t, size - 10, 100);		/* at EOF: cut */
		check_range(&t, size - 1, 1);
		check_range(&t, size, 1);			/* -ENXIO */
		check_range(&t, size + 5 * PS, 10);
		check_range(&t, 3, 0);
		check_range(&t, 199 * PS, SIZE_MAX);		/* to "infinity": cut */
		for (int i = 0; i < 300; i++) {
			uint64_t off = tst_rnd(&s) % (size + PS);
			size_t len = (size_t)(tst_rnd(&s) % (40 * PS));

			check_range(&t, off, len);
		}
		if (pass == 0)
			CHECK(none_pinned(t.f, 201), "all unpinned");
		lpc_invalidate(t.f, 0, 0); /* second pass: cold again, then warm */
	}
	CHECK(none_pinned(t.f, 201), "all unpinned");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static void i1_errors(int mode)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, mode);
	struct lpc_page *pages[8] = { 0 };
	struct tfile t;

	mk_file(c, &t, 20 * PS);
	CHECK_EQ(lpc_pin(t.f, 0, 0, LPC_PIN_READ, NULL, 0), 0, "len 0, NULL pages");
	CHECK_EQ(lpc_pin(t.f, 20 * PS, 1, LPC_PIN_READ, pages, 8), -ENXIO, "at EOF");
	CHECK_EQ(lpc_pin(t.f, 0, 9 * PS, LPC_PIN_READ, pages, 8), -E2BIG, "9 pages, max 8");
	CHECK_EQ(lpc_pin(t.f, 100, 8 * PS, LPC_PIN_READ, pages, 8), -E2BIG, "unaligned: 9 pages");
	CHECK_EQ(lpc_pin(t.f, 0, 1, LPC_PIN_READ, pages, 0), -E2BIG, "max 0");
	CHECK(none_pinned(t.f, 20), "-E2BIG pinned nothing");
	CHECK_EQ(lpc_pin(t.f, 0, 8 * PS, LPC_PIN_READ, pages, 8), 8, "exactly max");
	lpc_unpin(pages, 8, LPC_PIN_READ);
	CHECK_EQ(lpc_pin(t.f, 0, 1, LPC_PIN_WRITE, pages, 8), -EBADF,
		 "write pin of a read-only file (write pins: test_wpin.c)");
	CHECK_EQ(lpc_pin(t.f, 0, 1, LPC_PIN_READ | 4, pages, 8), -EINVAL, "unknown flag");
	CHECK_EQ(lpc_pin(t.f, 0, 1, 0, pages, 8), -EINVAL, "no flag");
	CHECK_EQ(lpc_pin(NULL, 0, 1, LPC_PIN_READ, pages, 8), -EINVAL, "NULL file");
	CHECK_EQ(lpc_pin(t.f, 0, 1, LPC_PIN_READ, NULL, 8), -EINVAL, "NULL pages");
	lpc_unpin(NULL, 3, LPC_PIN_READ);
	pages[0] = NULL;
	lpc_unpin(pages, 1, LPC_PIN_READ); /* NULL entry: ignored */
	CHECK(none_pinned(t.f, 20), "nothing pinned");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static void i1_read_error(int mode)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, mode);
	struct lpc_page *pages[16];
	struct lpc_io_fault fault = { .ops = LPC_IO_READ, .count = 0, .err = EIO };
	struct lpc_stats s0, s1;
	struct tfile t;

	mk_file(c, &t, 16 * PS);
	/* Pages 0-5 cached (0-3 pinned by the fast path, 4-5 read by the slow
	 * path), 6.. absent: the slow path's run 6-10, one I/O, fails, and so
	 * does page 6 read alone (run.c U5a): -EIO. */
	CHECK_EQ(lpc_pin(t.f, 0, 6 * PS, LPC_PIN_READ, pages, 16), 6);
	lpc_unpin(pages, 6, LPC_PIN_READ);
	fault.file_id = tst_file_id(t.path);
	REQUIRE(lpc_io_fault_set(&c->io, &fault) == 0);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pin(t.f, 100, 10 * PS, LPC_PIN_READ, pages, 16), -EIO, "a read fails");
	lpc_io_fault_set(&c->io, NULL);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 2, "one I/O for the run 6-10, then page 6 alone");
	CHECK_EQ(s1.read_errors - s0.read_errors, 2, "two failed reads, none after page 6's");
	CHECK(none_pinned(t.f, 16), "no page left pinned after -EIO");
	CHECK_EQ(ref_of(t.f, 6), 0, "the failed page is not cached");
	CHECK_EQ(ref_of(t.f, 5), 1, "page 5 cached, held by the index alone");
	CHECK_EQ(s1.pin_fast + s1.pin_slow, s0.pin_fast + s0.pin_slow, "a failed call counts in neither");
	/* The next pin reads page 6 again. */
	CHECK_EQ(lpc_pin(t.f, 100, 10 * PS, LPC_PIN_READ, pages, 16), 11, "retry");
	lpc_unpin(pages, 11, LPC_PIN_READ);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static char malloc_buf[8 * 4096];

static void i2_survives(int mode)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, mode);
	struct lpc_page *pages[4], *q;
	struct tfile t;
	struct lpc_stats s;

	mk_file(c, &t, 8 * PS);
	CHECK_EQ(lpc_pread(t.f, malloc_buf, 8 * PS, 0), 8 * PS, "cache all 8 pages");
	REQUIRE(lpc_pin(t.f, 2 * PS, 3 * PS, LPC_PIN_READ, pages, 4) == 3, "pin 2..4");
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 5, "invalidate drops the 5 unpinned pages only");
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(lpc_page_find(t.f, 2 + (uint64_t)i, &q), 0, "pinned page %d still cached", i);
		if (i < 3 && q) {
			CHECK(q == pages[i], "the same page");
			lpc_page_put(q);
		}
	}
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy while pinned");
	CHECK_EQ(lpc_file_close(t.f), 0, "last close with pins held");
	for (int i = 0; i < 3; i++)
		CHECK(tst_check_page(&t.e, 2 + (uint64_t)i, lpc_page_data(pages[i])),
		      "pinned page %d keeps its data after close", i);
	lpc_stats(c, &s);
	lpc_unpin(pages, 3, LPC_PIN_READ);
	tst_cache_destroy(c);
}

static void i3_counters(int mode)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_NULL, mode);
	struct lpc_page *pages[16];
	struct lpc_stats s0, s1;
	struct tfile t;
	char name[32];

	snprintf(name, sizeof(name), "pinnull%d", nfile++);
	REQUIRE(tst_make_sparse(name, 32 * PS, t.path, sizeof(t.path)) == 0);
	t.f = tst_file_open(c, t.path, O_RDONLY);
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pin(t.f, 0, 10 * PS, LPC_PIN_READ, pages, 16), 10, "cold");
	lpc_unpin(pages, 10, LPC_PIN_READ);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.pin_slow - s0.pin_slow, 1, "absent pages: slow");
	CHECK_EQ(s1.pin_fast - s0.pin_fast, 0, "absent pages: not fast");
	CHECK_EQ(s1.pages_pinned - s0.pages_pinned, 10, "pages pinned");
	CHECK_EQ(s1.reads - s0.reads, 1, "the slow path read them with one I/O");
	s0 = s1;
	CHECK_EQ(lpc_pin(t.f, 0, 10 * PS, LPC_PIN_READ, pages, 16), 10, "warm");
	lpc_unpin(pages, 10, LPC_PIN_READ);
	CHECK_EQ(lpc_pin(t.f, 5 * PS + 7, 2, LPC_PIN_READ, pages, 16), 1, "warm, one page");
	lpc_unpin(pages, 1, LPC_PIN_READ);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.pin_fast - s0.pin_fast, 2, "cached ranges: fast");
	CHECK_EQ(s1.pin_slow - s0.pin_slow, 0, "cached ranges: not slow");
	CHECK_EQ(s1.pages_pinned - s0.pages_pinned, 11, "pages pinned");
	CHECK_EQ(s1.reads - s0.reads, 0, "no read");
	/* A hole in the middle: slow, and only the hole is read. */
	CHECK_EQ(lpc_invalidate(t.f, 4 * PS, PS), 1);
	s0 = s1;
	CHECK_EQ(lpc_pin(t.f, 0, 10 * PS, LPC_PIN_READ, pages, 16), 10, "hole at 4");
	for (int i = 0; i < 10; i++)
		CHECK(atomic_load(&pages[i]->index) == (uint64_t)i, "page %d in order", i);
	lpc_unpin(pages, 10, LPC_PIN_READ);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.pin_slow - s0.pin_slow, 1, "a hole: slow");
	CHECK_EQ(s1.reads - s0.reads, 1, "only the hole is read");
	CHECK(none_pinned(t.f, 32), "all unpinned");
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

static void iov_errors(void)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pages[8], *swap[2];
	struct iovec iov[8];
	struct tfile t;

	mk_file(c, &t, 8 * PS);
	REQUIRE(lpc_pin(t.f, PS, 3 * PS, LPC_PIN_READ, pages, 8) == 3, "pin 1..3");
	CHECK_EQ(lpc_pin_iov(pages, 3, PS, 0, iov), 0, "len 0");
	CHECK_EQ(lpc_pin_iov(pages, 3, PS + 1, 3 * PS, iov), -EINVAL, "one byte past page 3");
	CHECK_EQ(lpc_pin_iov(pages, 3, 0, 10, iov), -EINVAL, "off before page 1");
	CHECK_EQ(lpc_pin_iov(pages, 2, PS, 3 * PS, iov), -EINVAL, "n too small");
	CHECK_EQ(lpc_pin_iov(NULL, 3, PS, 1, iov), -EINVAL, "NULL pages");
	CHECK_EQ(lpc_pin_iov(pages, 3, PS, 1, NULL), -EINVAL, "NULL iov");
	swap[0] = pages[0];
	swap[1] = pages[2];
	CHECK_EQ(lpc_pin_iov(swap, 2, PS, 2 * PS, iov), -EINVAL, "not consecutive");
	{
		int k = lpc_pin_iov(pages, 3, PS + 10, 2 * PS, iov);
		size_t total = 0;

		CHECK(k > 0 && k <= 3, "inside: %d entries", k);
		for (int i = 0; i < k; i++)
			total += iov[i].iov_len;
		CHECK_EQ(total, 2 * PS, "bytes");
	}
	lpc_unpin(pages, 3, LPC_PIN_READ);
	CHECK_EQ(lpc_file_close(t.f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	for (int mode = LPC_LOOKUP_LOCKLESS; mode <= LPC_LOOKUP_LOCKED; mode++) {
		printf("mode %s\n", mode ? "LOCKED" : "lockless");
		TST_RUN(i1_random_ranges(mode));
		TST_RUN(i1_errors(mode));
		TST_RUN(i1_read_error(mode));
		TST_RUN(i2_survives(mode));
		TST_RUN(i3_counters(mode));
	}
	TST_RUN(iov_errors());
	return tst_finish();
}
