/* SPDX-License-Identifier: MIT */
/*
 * test_io_errors.c - read errors and short transfers through the I/O layer's
 * fault hook (lpc_io_fault_set), with the sync backend on a real file and with
 * the null backend, in both lookup modes:
 *
 *  - a failed read: lpc_page_get returns the backend's -errno, nothing is
 *    cached (find: -ENOENT), read_errors counts it, and once the fault is
 *    cleared the same get reads again and returns the right data;
 *  - "fail the Nth read" (skip = N) fails exactly that one;
 *  - a short transfer (short_bytes): short of a page where the file does
 *    not end is -EIO with nothing cached; at the real end of the file the
 *    frame is zero-filled past the data;
 *  - lpc_pread over a range whose third page fails returns the first two
 *    pages (short), and from the failing page on -EIO; a failed read-around
 *    (full cache) too;
 *  - faults filtered by file id and by op do not touch other reads;
 *  - threads waiting on a read in flight that fails all get -EIO (a gated
 *    backend makes the wait deterministic), and the next get reads again;
 *  - the read-time O_DIRECT fallback: a direct read the kernel refuses with
 *    EINVAL is retried buffered for good (f->direct cleared), data intact.
 *
 * Usage: test_io_errors [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;
static int nfile;

struct tfile {
	struct lpc_file *f;
	char path[600];
	uint64_t id, size, salt;
	int backend;
};

static struct lpc_cache *mk_cache(size_t frames, int backend, int mode)
{
	return tst_cache_create(frames * PS, PS, backend, mode);
}

static void mk_file(struct lpc_cache *c, struct tfile *t, int backend, uint64_t size)
{
	char name[64];

	snprintf(name, sizeof(name), "f%d", nfile++);
	t->salt = (uint64_t)nfile * 977;
	t->size = size;
	t->backend = backend;
	REQUIRE(tst_make_file(name, size, t->salt, t->path, sizeof(t->path)) == 0);
	t->id = tst_file_id(t->path);
	REQUIRE(lpc_file_open(c, t->path, O_RDONLY, 0, &t->f) == 0);
}

/* The bytes a read of `valid` bytes of page `index` gives, then zeros. */
static void expect_page(const struct tfile *t, uint64_t index, size_t valid, void *out)
{
	memset(out, 0, PS);
	if (t->backend == LPC_IO_SYNC)
		tst_file_bytes(t->salt, index * PS, out, valid);
	else if (valid)
		lpc_io_null_pattern(t->id, index, out, valid);
}

static size_t valid_of(const struct tfile *t, uint64_t index)
{
	uint64_t off = index * PS;

	return off >= t->size ? 0 : t->size - off < PS ? (size_t)(t->size - off) : PS;
}

static bool page_ok(const struct tfile *t, uint64_t index, const void *data)
{
	unsigned char want[4096];

	expect_page(t, index, valid_of(t, index), want);
	return memcmp(want, data, PS) == 0;
}

/* Expected bytes of a byte range of the file (no faults). */
static bool range_ok(const struct tfile *t, uint64_t off, const unsigned char *buf, size_t len)
{
	unsigned char want[4096];

	for (size_t done = 0; done < len;) {
		uint64_t pos = off + done, index = pos / PS;
		size_t pgoff = pos % PS, n = PS - pgoff;

		if (n > len - done)
			n = len - done;
		expect_page(t, index, valid_of(t, index), want);
		if (memcmp(buf + done, want + pgoff, n))
			return false;
		done += n;
	}
	return true;
}

static int arm(struct lpc_cache *c, unsigned ops, uint64_t file_id, uint64_t skip,
	       uint64_t count, int err, size_t short_bytes)
{
	struct lpc_io_fault f = { .ops = ops, .file_id = file_id, .skip = skip,
				  .count = count, .err = err, .short_bytes = short_bytes };

	return lpc_io_fault_set(&c->io, &f);
}

static void t_fault_set(void)
{
	struct lpc_cache *c = mk_cache(8, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);

	CHECK_EQ(arm(c, 0, 0, 0, 0, EIO, 0), -EINVAL, "no ops");
	CHECK_EQ(arm(c, LPC_IO_READ, 0, 0, 0, 0, 0), -EINVAL, "no error, no short size");
	CHECK_EQ(lpc_io_fault_set(&c->io, NULL), 0, "clear");
	CHECK_EQ(arm(c, LPC_IO_READ, 0, 0, 0, EIO, 0), 0);
	CHECK_EQ(lpc_io_faults_fired(&c->io), 0);
	CHECK_EQ(lpc_io_fault_set(&c->io, NULL), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* A failed read caches nothing; clearing the fault, the same get works. */
/* Checks guarantee C.2 of include/lpc/lpc.h. */
static void t_eio(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(32, backend, mode);
	struct lpc_stats s0, s1;
	struct lpc_page *p = NULL;
	struct tfile t;

	mk_file(c, &t, backend, 8 * PS);
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 0, EIO, 0) == 0);
	CHECK_EQ(lpc_page_get(t.f, 2, 0, &p), -EIO, "get with EIO armed");
	CHECK_EQ(lpc_page_find(t.f, 2, &p), -ENOENT, "a failed read cached its page");
	CHECK_EQ(lpc_page_get(t.f, 2, 0, &p), -EIO, "again: no stale page, read again");
	CHECK_EQ(lpc_io_faults_fired(&c->io), 2);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_errors - s0.read_errors, 2, "read_errors");
	CHECK_EQ(s1.reads - s0.reads, 2, "reads");
	CHECK_EQ(s1.read_bytes - s0.read_bytes, 0, "read_bytes");
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 0, "failed pages left in the index");
	lpc_io_fault_set(&c->io, NULL);
	if (CHECK_EQ(lpc_page_get(t.f, 2, 0, &p), 0, "get after clearing the fault")) {
		CHECK(page_ok(&t, 2, lpc_page_data(p)), "data after a failed read");
		lpc_page_put(p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 3);
	CHECK_EQ(s1.read_errors - s0.read_errors, 2);
	/* The reader gets the backend's errno, whatever it is. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, ENODATA, 0) == 0);
	CHECK_EQ(lpc_page_get(t.f, 3, 0, &p), -ENODATA, "backend errno passed through");
	CHECK_EQ(lpc_page_get(t.f, 3, 0, &p), 0, "count 1: the second read passes");
	if (p) {
		CHECK(page_ok(&t, 3, lpc_page_data(p)));
		lpc_page_put(p);
	}
	/* A hit never reaches the backend: a fault cannot fail it. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 0, EIO, 0) == 0);
	if (CHECK_EQ(lpc_page_get(t.f, 2, 0, &p), 0, "cached page with EIO armed")) {
		CHECK(page_ok(&t, 2, lpc_page_data(p)));
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 0);
	lpc_io_fault_set(&c->io, NULL);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* skip = N fails exactly the (N+1)th matching read, count of them. */
static void t_nth(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(32, backend, mode);
	struct lpc_page *p;
	struct tfile t;

	mk_file(c, &t, backend, 12 * PS);
	REQUIRE(arm(c, LPC_IO_READ, 0, 3, 1, EIO, 0) == 0);
	for (uint64_t i = 0; i < 8; i++) {
		int rc = lpc_page_get(t.f, i, 0, &p);

		CHECK_EQ(rc, i == 3 ? -EIO : 0, "read %" PRIu64 " with skip 3 count 1", i);
		if (rc == 0) {
			CHECK(page_ok(&t, i, lpc_page_data(p)));
			lpc_page_put(p);
		}
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 1);
	/* Count 1 is spent: page 3 reads now. */
	if (CHECK_EQ(lpc_page_get(t.f, 3, 0, &p), 0)) {
		CHECK(page_ok(&t, 3, lpc_page_data(p)));
		lpc_page_put(p);
	}
	/* skip 1, count 2: the 2nd and 3rd reads fail. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 1, 2, EIO, 0) == 0);
	for (uint64_t i = 8; i < 12; i++) {
		int rc = lpc_page_get(t.f, i, 0, &p);

		CHECK_EQ(rc, (i == 9 || i == 10) ? -EIO : 0, "read %" PRIu64 " skip 1 count 2",
			 i);
		if (rc == 0)
			lpc_page_put(p);
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 2);
	lpc_io_fault_set(&c->io, NULL);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/*
 * Short transfers.  miss.c M4: a read shorter than a page is the end of the
 * file only where the file ends (the storage's size says so); short anywhere
 * else is read once more (the file may have grown since), then -EIO with
 * nothing cached, so zeros never stand in for data the file has.  The null
 * backend reads short at the file's size like a disk.
 */
/* Checks guarantee C.3 of include/lpc/lpc.h. */
static void t_short(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(32, backend, mode);
	unsigned char buf[2 * 4096];
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;

	mk_file(c, &t, backend, 4 * PS + 1000);
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 2, 0, 100) == 0);
	CHECK_EQ(lpc_page_get(t.f, 1, 0, &p), -EIO, "short read mid-file, twice, is an error");
	CHECK_EQ(lpc_page_find(t.f, 1, &p), -ENOENT, "nothing cached after a short read");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_bytes - s0.read_bytes, 0, "read_bytes of a failed short read");
	CHECK_EQ(s1.read_errors - s0.read_errors, 1, "short read counted as an error");
	CHECK_EQ(s1.reads - s0.reads, 2, "the short read, then once more");
	/* The fault was for two reads: the page now reads in full. */
	CHECK_EQ(lpc_pread(t.f, buf, PS, PS), (long long)PS);
	CHECK(range_ok(&t, PS, buf, PS), "pread after the short read");
	/* Short once: the second read gets the page. */
	CHECK(lpc_invalidate(t.f, PS, 1) == 1);
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, 0, 100) == 0);
	if (CHECK_EQ(lpc_page_get(t.f, 1, 0, &p), 0, "short once mid-file: read again")) {
		CHECK(page_ok(&t, 1, lpc_page_data(p)), "page 1 from its second read");
		lpc_page_put(p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 2, "the short read, then the full one");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0, "read again, no error");
	/* Short at the last page: 500 of its 1000 bytes is short of the size. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 2, 0, 500) == 0);
	CHECK_EQ(lpc_page_get(t.f, 4, 0, &p), -EIO, "short read of the last page");
	/* The real end of the file: 1000 bytes, then zeros. */
	lpc_io_fault_set(&c->io, NULL);
	if (CHECK_EQ(lpc_page_get(t.f, 4, 0, &p), 0, "last page at end of file")) {
		unsigned char want[4096];

		expect_page(&t, 4, 1000, want);
		CHECK(memcmp(lpc_page_data(p), want, PS) == 0, "last page: 1000 bytes, zeros");
		lpc_page_put(p);
	}
	/* short_bytes >= the request: no effect on the data. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, 0, PS) == 0);
	if (CHECK_EQ(lpc_page_get(t.f, 2, 0, &p), 0)) {
		CHECK(page_ok(&t, 2, lpc_page_data(p)), "short_bytes == page size");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 1);
	lpc_io_fault_set(&c->io, NULL);
	/* After invalidate, the full page comes back. */
	CHECK(lpc_invalidate(t.f, PS, 1) == 1);
	if (CHECK_EQ(lpc_page_get(t.f, 1, 0, &p), 0)) {
		CHECK(page_ok(&t, 1, lpc_page_data(p)), "page 1 read in full after invalidate");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/*
 * pread: a miss reads the run of absent pages with one I/O (filemap/run.c),
 * so a fault fails a whole request; the caller's pages of it are then read
 * one by one (the kernel's filemap_read retries a page its readahead failed
 * the same way) until one fails alone.  Pages 0-1 cached, every later read
 * failing: the run 2.. fails, page 2 alone fails, pread returns the two
 * pages before it; from the failing page: -EIO; nothing of a failed run is
 * cached.  A run cut short where the file does not end caches the pages
 * before the cut and reads the caller's pages after it alone, so a fault on
 * one I/O costs a few more reads, not the call.
 */
static void t_pread_fail(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(32, backend, mode);
	unsigned char *buf = malloc(6 * PS);
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;
	ssize_t r;

	REQUIRE(buf);
	mk_file(c, &t, backend, 8 * PS);
	CHECK_EQ(lpc_pread(t.f, buf, 2 * PS, 0), (long long)(2 * PS), "pages 0-1 cached");
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 0, EIO, 0) == 0);
	r = lpc_pread(t.f, buf, 5 * PS, 0);
	CHECK_EQ(r, (long long)(2 * PS), "pread stops short before the failed page");
	CHECK(range_ok(&t, 0, buf, 2 * PS), "the two pages before the failure");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 2, "one I/O for the run 2-4, then page 2 alone, none after it");
	CHECK_EQ(s1.read_errors - s0.read_errors, 2, "the run's, page 2's own");
	for (uint64_t i = 2; i < 5; i++)
		CHECK_EQ(lpc_page_find(t.f, i, &p), -ENOENT, "page %" PRIu64 " of the failed run cached", i);
	for (uint64_t i = 0; i < 2; i++)
		if (CHECK_EQ(lpc_page_find(t.f, i, &p), 0, "page %" PRIu64 " cached", i))
			lpc_page_put(p);
	/* Starting at the failing page: -EIO. */
	CHECK_EQ(lpc_pread(t.f, buf, 3 * PS, 2 * PS), -EIO, "pread from the failing page");
	/* Unaligned start, the failure on the third page of the range. */
	r = lpc_pread(t.f, buf, 5 * PS, 100);
	CHECK_EQ(r, (long long)(2 * PS - 100), "unaligned start, third page fails");
	CHECK(range_ok(&t, 100, buf, 2 * PS - 100));
	CHECK_EQ(lpc_pread(t.f, buf, 10, 2 * PS + 5), -EIO, "inside the failing page");
	/* A cold run cut inside its third page (the file goes on): pages 0-1
	 * cached by it, the caller's pages 2.. read again one by one. */
	lpc_io_fault_set(&c->io, NULL);
	CHECK(lpc_invalidate(t.f, 0, 0) >= 2);
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, 0, 2 * PS + 100) == 0);
	r = lpc_pread(t.f, buf, 5 * PS, 0);
	CHECK_EQ(r, (long long)(5 * PS), "the failed pages are read again");
	CHECK(range_ok(&t, 0, buf, 5 * PS));
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 4, "the cut run, then pages 2, 3 and 4 alone");
	CHECK_EQ(s1.read_errors - s0.read_errors, 1, "the cut is an error (the file goes on)");
	lpc_io_fault_set(&c->io, NULL);
	CHECK(lpc_invalidate(t.f, 0, 0) >= 5);
	r = lpc_pread(t.f, buf, 5 * PS, 100);
	CHECK_EQ(r, (long long)(5 * PS), "after clearing");
	CHECK(range_ok(&t, 100, buf, 5 * PS));
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	free(buf);
}

/* A full cache: pread reads around, and a failure there is reported too. */
/* Checks guarantee C.4 of include/lpc/lpc.h. */
static void t_read_around_fail(int backend, int mode)
{
	enum { N = 4 };
	struct lpc_cache *c = mk_cache(N, backend, mode);
	unsigned char buf[3 * 4096];
	struct lpc_page *held[N];
	struct lpc_stats s0, s1;
	struct tfile t;
	ssize_t r;

	mk_file(c, &t, backend, 10 * PS);
	for (int i = 0; i < N; i++)
		REQUIRE(lpc_page_get(t.f, (uint64_t)i, 0, &held[i]) == 0);
	lpc_stats(c, &s0);
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, EIO, 0) == 0);
	CHECK_EQ(lpc_pread(t.f, buf, PS, 5 * PS), -EIO, "read-around failure");
	REQUIRE(arm(c, LPC_IO_READ, 0, 1, 1, EIO, 0) == 0);
	r = lpc_pread(t.f, buf, 3 * PS, 5 * PS);
	CHECK_EQ(r, (long long)PS, "read-around: the second page fails");
	CHECK(range_ok(&t, 5 * PS, buf, PS));
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_errors - s0.read_errors, 2, "read-around errors counted");
	CHECK_EQ(s1.read_around - s0.read_around, 3, "read_around");
	/* A read-around short mid-file is read once more, as a miss is
	 * (lpc_filemap_read_frame: the file may have grown between the read
	 * and the size, regress_around_grow); short twice, it is an error. */
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 1, 0, 300) == 0);
	r = lpc_pread(t.f, buf, PS, 6 * PS);
	CHECK_EQ(r, (long long)PS, "read-around short once mid-file: read again");
	CHECK(range_ok(&t, 6 * PS, buf, PS));
	REQUIRE(arm(c, LPC_IO_READ, 0, 0, 2, 0, 300) == 0);
	r = lpc_pread(t.f, buf, PS, 6 * PS);
	CHECK_EQ(r, -EIO, "read-around short twice mid-file");
	lpc_io_fault_set(&c->io, NULL);
	r = lpc_pread(t.f, buf, 3 * PS, 5 * PS);
	CHECK_EQ(r, (long long)(3 * PS));
	CHECK(range_ok(&t, 5 * PS, buf, 3 * PS));
	for (int i = 0; i < N; i++)
		lpc_page_put(held[i]);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Faults only hit the ops and the file they name. */
static void t_filters(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(32, backend, mode);
	struct lpc_page *p;
	struct tfile a, b;

	mk_file(c, &a, backend, 4 * PS);
	mk_file(c, &b, backend, 4 * PS);
	REQUIRE(arm(c, LPC_IO_READ, b.id, 0, 0, EIO, 0) == 0);
	for (uint64_t i = 0; i < 4; i++) {
		if (CHECK_EQ(lpc_page_get(a.f, i, 0, &p), 0, "file a, fault on b")) {
			CHECK(page_ok(&a, i, lpc_page_data(p)));
			lpc_page_put(p);
		}
		CHECK_EQ(lpc_page_get(b.f, i, 0, &p), -EIO, "file b");
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 4);
	REQUIRE(arm(c, LPC_IO_WRITE | LPC_IO_SYNCOP, 0, 0, 0, EIO, 0) == 0);
	for (uint64_t i = 0; i < 4; i++) {
		if (CHECK_EQ(lpc_page_get(b.f, i, 0, &p), 0, "write fault failed a read")) {
			CHECK(page_ok(&b, i, lpc_page_data(p)));
			lpc_page_put(p);
		}
	}
	CHECK_EQ(lpc_io_faults_fired(&c->io), 0);
	lpc_io_fault_set(&c->io, NULL);
	CHECK_EQ(lpc_file_close(a.f), 0);
	CHECK_EQ(lpc_file_close(b.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Threads waiting on a read in flight that fails: all get -EIO. */

/* Checks guarantees C.1, C.2 of include/lpc/lpc.h. */
static void t_waiters_fail(int backend, int mode)
{
	enum { W = 4 };
	struct lpc_cache *c = mk_cache(32, backend, mode);
	struct tst_getter g[W];
	pthread_t th[W];
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;

	mk_file(c, &t, backend, 8 * PS);
	tst_gate_install(c);
	for (int round = 0; round < 3; round++) {
		uint64_t index = (uint64_t)round + 2;

		tst_gate_close();
		lpc_stats(c, &s0);
		g[0] = (struct tst_getter){ .f = t.f, .index = index };
		REQUIRE(pthread_create(&th[0], NULL, tst_getter_main, &g[0]) == 0);
		if (!CHECK(tst_gate_wait_entered(1, 5000), "read never started")) {
			tst_gate_open(0);
			pthread_join(th[0], NULL);
			break;
		}
		/* The page is in the index, locked: the others wait on it. */
		for (int i = 1; i < W; i++) {
			g[i] = (struct tst_getter){ .f = t.f, .index = index };
			REQUIRE(pthread_create(&th[i], NULL, tst_getter_main, &g[i]) == 0);
		}
		/* All W hold the page in flight: each will see how its read ends.
		 * A holder may still be between its speculative increment and
		 * its re-check (lookup.c R3-R4), and would look up again if the
		 * page went first; a waiter counts its miss after the re-check
		 * (these found the page in the index: no -EEXIST path), so W
		 * misses mean every waiter is past it. */
		CHECK(tst_wait_page_holders(t.f, index, W, 5000), "waiters never came");
		CHECK(tst_wait_misses(c, s0.misses + W, 5000), "waiters never re-checked");
		if (round == 1)
			tst_sleep_us(10000); /* once, let them sleep in futex_wait */
		tst_gate_open(EIO);
		for (int i = 0; i < W; i++) {
			pthread_join(th[i], NULL);
			CHECK_EQ(g[i].rc, -EIO, "round %d getter %d", round, i);
			if (g[i].rc == 0)
				lpc_page_put(g[i].p);
		}
		tst_gate_clear_error();
		lpc_stats(c, &s1);
		CHECK_EQ(s1.reads - s0.reads, 1, "one read for %d getters", W);
		CHECK_EQ(s1.read_errors - s0.read_errors, 1);
		CHECK_EQ(tst_gate_entered(), 1, "waiters issued reads of their own");
		CHECK_EQ(lpc_page_find(t.f, index, &p), -ENOENT, "failed page cached");
		/* The next get reads again. */
		if (CHECK_EQ(lpc_page_get(t.f, index, 0, &p), 0, "get after the failure")) {
			CHECK(page_ok(&t, index, lpc_page_data(p)));
			lpc_page_put(p);
		}
		lpc_stats(c, &s0);
		CHECK_EQ(s0.reads - s1.reads, 1, "the next get read again");
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/*
 * The read-time O_DIRECT fallback in lpc_io_read: a direct read the kernel
 * refuses with EINVAL (here: a misaligned buffer) is retried buffered, and
 * the file stays buffered.  Skipped where the file system does not refuse
 * (no O_DIRECT at open, or no alignment rule).
 */
static void t_direct_fallback(void)
{
	struct lpc_cache *c = mk_cache(16, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	unsigned char *mem, want[4096];
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;
	int fellback = 0;
	ssize_t r;

	mk_file(c, &t, LPC_IO_SYNC, 4 * PS);
	if (!atomic_load(&t.f->io.direct)) {
		printf("note: %s is not O_DIRECT: read-time fallback not tested\n", t.path);
		goto out;
	}
	{
		int fd = open(t.path, O_RDONLY | O_DIRECT);
		unsigned char *m = NULL;
		ssize_t pr;

		REQUIRE(posix_memalign((void **)&m, 4096, 2 * PS) == 0);
		pr = fd >= 0 ? pread(fd, m + 1, PS, 0) : 0;
		free(m);
		if (fd >= 0)
			close(fd);
		if (!(pr < 0 && errno == EINVAL)) {
			printf("note: a misaligned O_DIRECT read is not refused here: "
			       "read-time fallback not tested\n");
			goto out;
		}
	}
	REQUIRE(posix_memalign((void **)&mem, 4096, 2 * PS) == 0);
	r = lpc_io_read(&c->io, &t.f->io, mem + 1, PS, PS, 1, &fellback);
	CHECK_EQ(r, (long long)PS, "buffered retry");
	CHECK_EQ(fellback, 1, "fellback");
	CHECK_EQ(atomic_load(&t.f->io.direct), 0, "file still marked O_DIRECT");
	CHECK((fcntl(t.f->io.fd, F_GETFL) & O_DIRECT) == 0, "descriptor still O_DIRECT");
	expect_page(&t, 1, PS, want);
	CHECK(memcmp(mem + 1, want, PS) == 0, "data of the buffered retry");
	free(mem);
	/* The file reads on, buffered, through the cache. */
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 4; i++)
		if (CHECK_EQ(lpc_page_get(t.f, i, 0, &p), 0)) {
			CHECK(page_ok(&t, i, lpc_page_data(p)), "page %" PRIu64 " after fallback", i);
			lpc_page_put(p);
		}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.direct_fallbacks - s0.direct_fallbacks, 0, "fell back twice");
out:
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	/* Reads and pages are counted page by page here: readahead (its own
	 * tests: test_readahead) would read pages no call asked for. */
	tst_readahead_kb = LPC_READAHEAD_OFF;
	tst_init(argc, argv, 100);
	if (!tst_tmpdir())
		tst_skip("no temporary directory");
	t_fault_set();
	for (int backend = 0; backend < 2; backend++) {
		for (int mode = 0; mode < 2; mode++) {
			t_eio(backend, mode);
			t_nth(backend, mode);
			t_short(backend, mode);
			t_pread_fail(backend, mode);
			t_read_around_fail(backend, mode);
			t_filters(backend, mode);
			t_waiters_fail(backend, mode);
		}
	}
	t_direct_fallback();
	return tst_finish();
}
