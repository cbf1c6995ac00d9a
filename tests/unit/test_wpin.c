/* SPDX-License-Identifier: MIT */
/*
 * test_wpin.c - write pins: lpc_pin(LPC_PIN_WRITE), lpc_pin_iov and
 * lpc_unpin(LPC_PIN_WRITE) (guarantees I.4-I.7 of include/lpc/lpc.h), on
 * every write backend and both lookup modes:
 *
 *  - wpin_random: random write-pinned ranges (unaligned, page-crossing,
 *    crossing the index's 64-page leaves, at and past EOF, into holes),
 *    bytes written through the iovec, unpin; lpc_pread agrees with a
 *    reference, and after lpc_fsync a fresh kernel descriptor does too; a
 *    small cache makes eviction and misses run between the pins;
 *  - wpin_errors: -EBADF on a read-only file, -EFBIG, -E2BIG, -EINVAL, all
 *    or nothing (no page left pinned or locked);
 *  - wpin_readers_wait: lpc_pread of a write-pinned page and a second
 *    write pin of it wait for the unpin and see every byte written (I.5);
 *  - wpin_fsync: fsync waits for the unpin of a dirty write-pinned page and
 *    writes the pin's bytes, skips a clean one (I.6);
 *  - wpin_truncate: lpc_truncate waits for the unpin and cuts what the pin
 *    wrote past its end; a regrowth reads zeros there (I.7);
 *  - wpin_counters: cached ranges are fast, absent ones slow; wpin_dirtied
 *    counts the pages the unpins dirtied;
 *  - wpin_read_error: a read failing in the middle of a write pin's range
 *    leaves nothing pinned or locked, and no page the pin made without a
 *    read (zeros) in the cache in place of the file's bytes.
 *
 * Usage: test_wpin [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <sys/uio.h>

#include "../common/write_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;
static uint64_t seed_state;

static struct lpc_cache *mk_cache(size_t frames, int backend, int mode)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = frames * PS;
	cfg.page_size = PS;
	cfg.io_backend = backend;
	cfg.lookup_mode = mode;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	return c;
}

/* Writes len bytes of pattern `tag` into [off, off + len) through a write
 * pin, and into ref.  Return: lpc_pin's result. */
static int pin_write(struct lpc_file *f, unsigned char *ref, uint64_t off, size_t len,
		     unsigned char tag)
{
	struct lpc_page *pages[40];
	struct iovec iov[40];
	size_t done = 0;
	int n, k;

	n = lpc_pin(f, off, len, LPC_PIN_WRITE, pages, 40);
	if (n <= 0)
		return n;
	k = lpc_pin_iov(pages, (unsigned)n, off, len, iov);
	CHECK(k > 0 && k <= n, "iov entries %d for %d pages", k, n);
	for (int i = 0; i < k; i++) {
		unsigned char *d = iov[i].iov_base;

		for (size_t j = 0; j < iov[i].iov_len; j++)
			d[j] = ref[off + done + j] = (unsigned char)(tag + (off + done + j) * 7);
		done += iov[i].iov_len;
	}
	CHECK_EQ(done, len, "the iovec covers the range");
	for (int i = 0; i < n; i++)
		CHECK(atomic_load(&pages[i]->flags) & LPC_PG_LOCKED, "page %d locked by the pin",
		      i);
	lpc_unpin(pages, (unsigned)n, LPC_PIN_WRITE);
	return n;
}

static bool pread_equals(struct lpc_file *f, const unsigned char *ref, size_t size)
{
	unsigned char *b = malloc(size + PS);
	ssize_t got;
	bool ok;

	REQUIRE(b);
	got = lpc_pread(f, b, size + PS, 0);
	ok = CHECK_EQ(got, (ssize_t)size, "pread size") &&
	     CHECK(tst_first_diff(b, ref, size) < 0, "pread differs at %lld",
		   (long long)tst_first_diff(b, ref, size));
	free(b);
	return ok;
}

static void wpin_random(int backend, int mode, size_t frames)
{
	struct lpc_cache *c = mk_cache(frames, backend, mode);
	size_t cap = 260 * PS, size = 150 * PS + 123;
	unsigned char *ref = calloc(1, cap);
	char path[600];
	struct lpc_file *f;

	REQUIRE(ref);
	tst_wfile("wpin", path, sizeof(path), size, 77);
	tst_file_bytes(77, 0, ref, size);
	f = tst_file_open(c, path, O_RDWR);
	for (int it = 0; it < 400; it++) {
		uint64_t r = tst_rnd(&seed_state);
		uint64_t off = r % 4 == 0 ? (r >> 8) % 256 * PS : (r >> 8) % (size + 8 * PS);
		size_t len = 1 + (size_t)((r >> 40) % (r % 3 ? 3 * PS : 30 * PS));
		int n;

		if (r % 7 == 0) /* a leaf boundary */
			off = 64 * PS * (1 + (r >> 20) % 3) - (r >> 12) % PS;
		if (off + len > cap)
			continue;
		n = pin_write(f, ref, off, len, (unsigned char)it);
		if (!CHECK_EQ(n, (int)((off + len - 1) / PS - off / PS + 1), "pin [%llu, +%zu)",
			      (unsigned long long)off, len))
			break;
		if (off + len > size)
			size = off + len;
		if (r % 31 == 0)
			lpc_invalidate(f, 0, 0);
		if (it % 50 == 0 && !pread_equals(f, ref, size))
			break;
	}
	pread_equals(f, ref, size);
	CHECK_EQ(lpc_fsync(f), 0, "fsync");
	CHECK(tst_kernel_equals(path, ref, size), "the file after fsync");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(ref);
}

static bool none_locked_pinned(struct lpc_file *f, uint64_t pages)
{
	bool ok = true;

	for (uint64_t i = 0; i < pages; i++) {
		struct lpc_page *p;

		lpc_rcu_read_lock();
		p = lpc_radix_lookup(&f->tree, i, NULL);
		if (p && (atomic_load(&p->ref) > 1 || (atomic_load(&p->flags) & LPC_PG_LOCKED)))
			ok = false;
		lpc_rcu_read_unlock();
	}
	return ok;
}

static void wpin_errors(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct lpc_page *pages[8];
	struct lpc_file *f, *ro;
	char path[600];

	tst_wfile("wpine", path, sizeof(path), 20 * PS, 5);
	ro = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lpc_pin(ro, 0, 1, LPC_PIN_WRITE, pages, 8), -EBADF, "read-only file");
	CHECK_EQ(lpc_file_close(ro), 0);
	f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pin(f, 0, 0, LPC_PIN_WRITE, NULL, 0), 0, "len 0");
	CHECK_EQ(lpc_pin(f, 0, 9 * PS, LPC_PIN_WRITE, pages, 8), -E2BIG, "9 pages, max 8");
	CHECK_EQ(lpc_pin(f, (uint64_t)INT64_MAX, 2, LPC_PIN_WRITE, pages, 8), -EFBIG, "past 2^63");
	CHECK_EQ(lpc_pin(f, 0, 1, LPC_PIN_WRITE | 4, pages, 8), -EINVAL, "unknown flag");
	CHECK(none_locked_pinned(f, 20), "failures hold nothing");
	CHECK_EQ(lpc_pin(f, 100, 3 * PS, LPC_PIN_WRITE | LPC_PIN_READ, pages, 8), 4,
		 "READ|WRITE is a write pin");
	lpc_unpin(pages, 4, LPC_PIN_WRITE);
	CHECK(none_locked_pinned(f, 20), "unpinned");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

struct waiter {
	struct lpc_file *f;
	uint64_t off;
	int what; /* 0 pread, 1 write pin, 2 fsync, 3 truncate */
	_Atomic int done;
	unsigned char buf[64];
	long rc;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	if (w->what == 0) {
		w->rc = lpc_pread(w->f, w->buf, sizeof(w->buf), w->off);
	} else if (w->what == 1) {
		struct lpc_page *p;

		w->rc = lpc_pin(w->f, w->off, 8, LPC_PIN_WRITE, &p, 1);
		if (w->rc == 1) {
			memcpy(w->buf, (char *)lpc_page_data(p) + w->off % PS, 8);
			lpc_unpin(&p, 1, LPC_PIN_WRITE);
		}
	} else if (w->what == 2) {
		w->rc = lpc_fsync(w->f);
	} else {
		w->rc = lpc_truncate(w->f, w->off);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

static void start(pthread_t *th, struct waiter *w)
{
	REQUIRE(pthread_create(th, NULL, waiter_main, w) == 0);
	tst_sleep_us(50000);
}

static void wpin_readers_wait(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct waiter r = { .off = 3 * PS + 100, .what = 0 }, w = { .off = 3 * PS + 100, .what = 1 };
	struct lpc_page *p;
	char path[600];
	pthread_t t1, t2;
	unsigned char want[64];

	tst_wfile("wpinr", path, sizeof(path), 8 * PS, 9);
	r.f = w.f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pread(r.f, r.buf, 64, r.off), 64, "warm");
	REQUIRE(lpc_pin(r.f, 3 * PS, PS, LPC_PIN_WRITE, &p, 1) == 1);
	start(&t1, &r);
	start(&t2, &w);
	CHECK(!atomic_load(&r.done), "lpc_pread waits for the write pin");
	CHECK(!atomic_load(&w.done), "a second write pin waits");
	for (int i = 0; i < 64; i++)
		want[i] = (unsigned char)(0xA0 + i);
	/* Half now, half later: a reader must never return the half. */
	memcpy((char *)lpc_page_data(p) + 100, want, 32);
	tst_sleep_us(10000);
	memcpy((char *)lpc_page_data(p) + 132, want + 32, 32);
	lpc_unpin(&p, 1, LPC_PIN_WRITE);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	CHECK_EQ(r.rc, 64, "pread");
	CHECK(!memcmp(r.buf, want, 64), "pread returns every byte the pin wrote");
	CHECK(!memcmp(w.buf, want, 8), "the second write pin sees the first's bytes");
	CHECK(atomic_load(&p->flags) & LPC_PG_DIRTY, "dirty after unpin");
	CHECK_EQ(lpc_file_close(r.f), 0);
	tst_cache_destroy(c);
}

static void wpin_fsync(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct waiter y = { .what = 2 };
	unsigned char ref[8 * 4096];
	struct lpc_page *p;
	char path[600];
	pthread_t th;

	tst_wfile("wpinf", path, sizeof(path), 8 * PS, 13);
	tst_file_bytes(13, 0, ref, 8 * PS);
	y.f = tst_file_open(c, path, O_RDWR);
	/* A clean page pinned: fsync does not wait for it. */
	REQUIRE(lpc_pin(y.f, 0, PS, LPC_PIN_WRITE, &p, 1) == 1);
	CHECK_EQ(lpc_fsync(y.f), 0, "fsync with a clean page write-pinned");
	memset(lpc_page_data(p), 0x11, PS);
	memset(ref, 0x11, PS);
	lpc_unpin(&p, 1, LPC_PIN_WRITE);
	/* A dirty page pinned: fsync waits for the unpin, then writes it. */
	CHECK_EQ(lpc_pwrite(y.f, "x", 1, 2 * PS), 1);
	ref[2 * PS] = 'x';
	REQUIRE(lpc_pin(y.f, 2 * PS, PS, LPC_PIN_WRITE, &p, 1) == 1);
	start(&th, &y);
	CHECK(!atomic_load(&y.done), "fsync waits for the unpin of a dirty page");
	memset((char *)lpc_page_data(p) + 1, 0x22, 100);
	memset(ref + 2 * PS + 1, 0x22, 100);
	lpc_unpin(&p, 1, LPC_PIN_WRITE);
	pthread_join(th, NULL);
	CHECK_EQ(y.rc, 0, "fsync");
	CHECK(tst_kernel_equals(path, ref, 8 * PS), "the pin's bytes are on disk");
	CHECK_EQ(lpc_file_close(y.f), 0);
	tst_cache_destroy(c);
}

static void wpin_truncate(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct waiter tr = { .what = 3, .off = 2 * PS + 10 };
	unsigned char buf[3 * 4096];
	struct lpc_page *pages[4];
	char path[600];
	pthread_t th;

	tst_wfile("wpint", path, sizeof(path), 4 * PS, 17);
	tr.f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_pin(tr.f, PS, 3 * PS, LPC_PIN_WRITE, pages, 4) == 3);
	start(&th, &tr);
	CHECK(!atomic_load(&tr.done), "truncate waits for the unpin");
	for (int i = 0; i < 3; i++)
		memset(lpc_page_data(pages[i]), 0x33, PS);
	lpc_unpin(pages, 3, LPC_PIN_WRITE);
	pthread_join(th, NULL);
	CHECK_EQ(tr.rc, 0, "truncate");
	CHECK_EQ(lpc_truncate(tr.f, 4 * PS), 0, "regrow");
	CHECK_EQ(lpc_pread(tr.f, buf, 3 * PS, PS), (ssize_t)(3 * PS));
	CHECK(buf[0] == 0x33 && buf[PS + 9] == 0x33, "kept below the cut");
	for (size_t i = PS + 10; i < 3 * PS; i++)
		if (!CHECK_EQ(buf[i], 0, "zeros past the cut at %zu", PS + i))
			break;
	CHECK_EQ(lpc_file_close(tr.f), 0);
	tst_cache_destroy(c);
}

static void wpin_counters(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct lpc_page *pages[8];
	struct lpc_stats s0, s1;
	struct lpc_file *f;
	char path[600];

	tst_wfile("wpinc", path, sizeof(path), 16 * PS, 21);
	f = tst_file_open(c, path, O_RDWR);
	lpc_stats(c, &s0);
	REQUIRE(lpc_pin(f, 0, 4 * PS, LPC_PIN_WRITE, pages, 8) == 4);
	lpc_unpin(pages, 4, LPC_PIN_WRITE);
	REQUIRE(lpc_pin(f, 10, 4 * PS, LPC_PIN_WRITE, pages, 8) == 5);
	lpc_unpin(pages, 5, LPC_PIN_WRITE);
	REQUIRE(lpc_pin(f, 100, 3 * PS, LPC_PIN_WRITE, pages, 8) == 4);
	lpc_unpin(pages, 4, LPC_PIN_WRITE);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.wpin_slow - s0.wpin_slow, 2, "absent pages: slow");
	CHECK_EQ(s1.wpin_fast - s0.wpin_fast, 1, "cached: fast");
	CHECK_EQ(s1.pin_fast + s1.pin_slow - s0.pin_fast - s0.pin_slow, 3, "in pin_fast/slow too");
	CHECK_EQ(s1.pages_pinned - s0.pages_pinned, 13, "pages_pinned");
	CHECK_EQ(s1.wpin_dirtied - s0.wpin_dirtied, 13, "wpin_dirtied");
	CHECK_EQ(s1.dirty_pages, 5, "dirty pages");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void wpin_read_error(int backend, int mode)
{
	struct lpc_cache *c = mk_cache(64, backend, mode);
	struct lpc_io_fault fault = { .ops = LPC_IO_READ, .count = 0, .err = EIO };
	unsigned char want[4 * 4096], got[4 * 4096];
	struct lpc_page *pages[8];
	struct lpc_file *f;
	char path[600];

	tst_wfile("wpinx", path, sizeof(path), 4 * PS, 29);
	tst_file_bytes(29, 0, want, sizeof(want));
	f = tst_file_open(c, path, O_RDWR);
	fault.file_id = tst_file_id(path);
	REQUIRE(lpc_io_fault_set(&c->io, &fault) == 0);
	/* Pages 0-1 covered whole (made without a read), page 2 in part: its
	 * read fails. */
	CHECK_EQ(lpc_pin(f, 0, 2 * PS + 10, LPC_PIN_WRITE, pages, 8), -EIO, "a read fails");
	lpc_io_fault_set(&c->io, NULL);
	CHECK(none_locked_pinned(f, 4), "nothing held after -EIO");
	CHECK_EQ(lpc_pread(f, got, sizeof(got), 0), (ssize_t)sizeof(got));
	CHECK(tst_first_diff(got, want, sizeof(got)) < 0, "the file's bytes, not zeros, at %lld",
	      (long long)tst_first_diff(got, want, sizeof(got)));
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 240);
	tst_require_tmpdir();
	seed_state = tst_seed ^ 0x5eed;

	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		int backend = tst_write_backends[b];

		for (int mode = LPC_LOOKUP_LOCKLESS; mode <= LPC_LOOKUP_LOCKED; mode++) {
			printf("backend %s, mode %s\n", tst_backend_name(backend),
			       mode ? "LOCKED" : "lockless");
			TST_RUN(wpin_random(backend, mode, 1024));
			TST_RUN(wpin_random(backend, mode, 48));
			TST_RUN(wpin_errors(backend, mode));
			TST_RUN(wpin_readers_wait(backend, mode));
			TST_RUN(wpin_fsync(backend, mode));
			TST_RUN(wpin_truncate(backend, mode));
			TST_RUN(wpin_counters(backend, mode));
			TST_RUN(wpin_read_error(backend, mode));
		}
	}
	return tst_finish();
}
