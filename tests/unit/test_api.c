/* SPDX-License-Identifier: MIT */
/*
 * test_api.c - the public API, one call at a time, single-threaded unless a
 * case needs a second thread: bad arguments and configurations, end of file,
 * pread on every kind of range and page size, opens and closes, held pages
 * across close and destroy, private pages, a full cache (-ENOMEM and
 * read-around), lpc_invalidate, lpc_page_find on a read in flight, and exact
 * counter values.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp); one case
 * also uses /dev/shm (tmpfs) to see whether a file system that refuses
 * O_DIRECT is read buffered (direct_fallbacks).  Data read through the sync
 * backend is compared with what plain write(2) put in the file; data read
 * through the null backend with lpc_io_null_pattern.
 *
 * Usage: test_api [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"
#include "cache/cache.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static struct lpc_cache *mk_cache(size_t bytes, size_t ps, int backend, int mode)
{
	return tst_cache_create(bytes, ps, backend, mode);
}

static void destroy(struct lpc_cache *c)
{
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
}

static struct lpc_file *open_file(struct lpc_cache *c, const char *path, int oflags)
{
	struct lpc_file *f = NULL;
	int rc = lpc_file_open(c, path, oflags, 0644, &f);

	REQUIRE(rc == 0 && f, "lpc_file_open(%s) = %d", path, rc);
	return f;
}

/* Expected bytes [off, off+len) of a file: sync backend (salt) or null (id). */
struct exp_file {
	int backend;
	uint64_t salt, id, size;
	size_t ps;
};

static bool check_bytes(const struct exp_file *e, uint64_t off, const void *buf, size_t len,
			uint64_t *bad)
{
	if (e->backend == LPC_IO_SYNC) {
		const unsigned char *b = buf;
		unsigned char *want = malloc(len ? len : 1);
		bool ok = true;

		REQUIRE(want);
		tst_file_bytes(e->salt, off, want, len);
		if (memcmp(b, want, len) != 0) {
			ok = false;
			for (size_t i = 0; i < len; i++)
				if (b[i] != want[i]) {
					*bad = off + i;
					break;
				}
		}
		free(want);
		return ok;
	}
	void *scratch = malloc(e->ps);
	bool ok = tst_null_check_range(e->id, e->ps, e->size, off, buf, len, scratch, bad);

	free(scratch);
	return ok;
}

/* A whole cached page: file bytes up to the size, zeros after. */
static bool check_page(const struct exp_file *e, uint64_t index, const void *data)
{
	const unsigned char *d = data;
	uint64_t off = index * e->ps, bad = 0;
	size_t valid = off >= e->size ? 0 : e->size - off < e->ps ? e->size - off : e->ps;

	if (!check_bytes(e, off, d, valid, &bad))
		return false;
	for (size_t i = valid; i < e->ps; i++)
		if (d[i])
			return false;
	return true;
}

/* --- configurations --- */
static void t_config(void)
{
	struct lpc_config cfg, bad;
	struct lpc_cache *c = (struct lpc_cache *)0x1;
	static const size_t bad_ps[] = { 0, 1, 3, 256, 511, 513, 1000, 4097, 3 * 4096,
					 (2u << 20) + 4096, 4u << 20, 1ull << 40 };

	lpc_config_init(NULL); /* must not crash */
	memset(&cfg, 0xff, sizeof(cfg));
	lpc_config_init(&cfg);
	CHECK_EQ(cfg.cache_bytes, 64 * MiB);
	CHECK_EQ(cfg.page_size, 4096);
	CHECK_EQ(cfg.io_backend, LPC_IO_SYNC);
	CHECK_EQ(cfg.lookup_mode, LPC_LOOKUP_LOCKLESS);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(cfg.reserved[i], 0, "reserved[%d]", i);

	CHECK_EQ(lpc_cache_create(NULL, &c), -EINVAL);
	CHECK_EQ(lpc_cache_create(&cfg, NULL), -EINVAL);

	for (size_t i = 0; i < sizeof(bad_ps) / sizeof(bad_ps[0]); i++) {
		bad = cfg;
		bad.page_size = bad_ps[i];
		bad.cache_bytes = 64 * MiB;
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "page size %zu", bad_ps[i]);
	}
	/* Budget smaller than one page. */
	bad = cfg;
	bad.cache_bytes = 0;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 0");
	bad.cache_bytes = 4095;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 4095 < page 4096");
	bad.page_size = 65536;
	bad.cache_bytes = 65535;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 65535 < page 65536");
	/* Unknown backend and mode. */
	int bad_vals[] = { -1, 2, 3, 1000 };
	for (size_t i = 0; i < 4; i++) {
		bad = cfg;
		bad.io_backend = bad_vals[i];
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "backend %d", bad_vals[i]);
		bad = cfg;
		bad.lookup_mode = bad_vals[i];
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "mode %d", bad_vals[i]);
	}
	for (int i = 0; i < 8; i++) {
		bad = cfg;
		bad.reserved[i] = 1ull << (i * 7);
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "reserved[%d] != 0", i);
	}
	CHECK(c == (struct lpc_cache *)0x1, "a failed create wrote *out");

	/* The edges that are valid: 512 B and 2 MiB pages, a one-page cache. */
	static const size_t ok_ps[] = { 512, 1024, 4096, 65536, 2u << 20 };
	for (size_t i = 0; i < sizeof(ok_ps) / sizeof(ok_ps[0]); i++) {
		struct lpc_stats st;

		bad = cfg;
		bad.page_size = ok_ps[i];
		bad.cache_bytes = ok_ps[i];
		c = NULL;
		if (!CHECK_EQ(lpc_cache_create(&bad, &c), 0, "page size %zu, one page", ok_ps[i]))
			continue;
		lpc_stats(c, &st);
		CHECK_EQ(st.frames, 1, "one frame");
		CHECK_EQ(st.frames_free, 1, "one free frame");
		destroy(c);
	}
	/* A budget that is not a multiple of the page: whole frames only. */
	bad = cfg;
	bad.cache_bytes = 10 * 4096 + 4095;
	c = NULL;
	if (CHECK_EQ(lpc_cache_create(&bad, &c), 0)) {
		struct lpc_stats st;

		lpc_stats(c, &st);
		CHECK_EQ(st.frames, 10);
		destroy(c);
	}
	/* Both backends and modes. */
	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			bad = cfg;
			bad.cache_bytes = 1 * MiB;
			bad.io_backend = b;
			bad.lookup_mode = m;
			c = NULL;
			if (CHECK_EQ(lpc_cache_create(&bad, &c), 0, "backend %d mode %d", b, m))
				destroy(c);
		}
}

/* --- NULL and invalid arguments to every function --- */
static void t_null_args(void)
{
	struct lpc_cache *c = mk_cache(16 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	struct lpc_stats st;
	char path[600], buf[16];

	REQUIRE(tst_make_file("nullargs", 3 * 4096, 1, path, sizeof(path)) == 0);
	f = open_file(c, path, O_RDONLY);

	CHECK_EQ(lpc_cache_destroy(NULL), -EINVAL);
	CHECK_EQ(lpc_file_open(NULL, path, O_RDONLY, 0, &f), -EINVAL);
	CHECK_EQ(lpc_file_open(c, NULL, O_RDONLY, 0, &f), -EINVAL);
	CHECK_EQ(lpc_file_open(c, path, O_RDONLY, 0, NULL), -EINVAL);
	CHECK_EQ(lpc_file_close(NULL), -EINVAL);
	CHECK_EQ(lpc_page_find(NULL, 0, &p), -EINVAL);
	CHECK_EQ(lpc_page_find(f, 0, NULL), -EINVAL);
	CHECK_EQ(lpc_page_get(NULL, 0, 0, &p), -EINVAL);
	CHECK_EQ(lpc_page_get(f, 0, 0, NULL), -EINVAL);
	/* Unknown flags: every bit. */
	for (int b = 0; b < 32; b++)
		CHECK_EQ(lpc_page_get(f, 0, 1u << b, &p), -EINVAL, "flag bit %d", b);
	CHECK(p == NULL, "a failed get wrote *out");
	lpc_page_put(NULL); /* ignored */
	CHECK_EQ(lpc_page_alloc(NULL, &p), -EINVAL);
	CHECK_EQ(lpc_page_alloc(c, NULL), -EINVAL);
	CHECK_EQ(lpc_pread(NULL, buf, sizeof(buf), 0), -EINVAL);
	CHECK_EQ(lpc_pread(f, NULL, sizeof(buf), 0), -EINVAL);
	CHECK_EQ(lpc_pread(f, NULL, 0, 0), 0, "NULL buffer, zero length: nothing to do");
	CHECK_EQ(lpc_invalidate(NULL, 0, 0), -EINVAL);
	lpc_stats(NULL, &st); /* ignored */
	lpc_stats(c, NULL);   /* ignored */
	/* Nothing above may have read or cached anything. */
	lpc_stats(c, &st);
	CHECK_EQ(st.reads, 0, "invalid calls did I/O");
	CHECK_EQ(st.lookups, 0, "invalid calls counted lookups");
	CHECK_EQ(lpc_page_find(f, 0, &p), -ENOENT);
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

static bool link_path_ok(const char *from, const char *to)
{
	unlink(to);
	return link(from, to) == 0;
}

/* --- lpc_file_open / lpc_file_close --- */
static void t_open(void)
{
	struct lpc_cache *c = mk_cache(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = NULL, *g = NULL, *h = NULL;
	struct lpc_page *p;
	struct exp_file e = { .backend = LPC_IO_SYNC, .salt = 7, .ps = 4096 };
	char path[600], link[600], missing[600], newp[600];
	const uint64_t size = 5 * 4096 + 17;

	REQUIRE(tst_make_file("open", size, 7, path, sizeof(path)) == 0);
	e.size = size;

	CHECK_EQ(lpc_file_open(c, path, O_RDONLY | O_APPEND, 0, &f), -EINVAL, "O_APPEND");
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_APPEND, 0, &f), -EINVAL, "O_APPEND rw");
	CHECK_EQ(lpc_file_open(c, path, O_PATH, 0, &f), -EINVAL, "O_PATH");
	CHECK_EQ(lpc_file_open(c, tst_tmpdir(), O_RDONLY | O_DIRECTORY, 0, &f), -EINVAL,
		 "O_DIRECTORY");
	CHECK_EQ(lpc_file_open(c, tst_tmpdir(), O_RDONLY, 0, &f), -EINVAL, "a directory");
	CHECK_EQ(lpc_file_open(c, "/dev/null", O_RDONLY, 0, &f), -EINVAL, "a char device");
	snprintf(missing, sizeof(missing), "%s/no-such-file", tst_tmpdir());
	CHECK_EQ(lpc_file_open(c, missing, O_RDONLY, 0, &f), -ENOENT, "nonexistent");
	CHECK_EQ(lpc_file_open(c, missing, O_RDWR, 0, &f), -ENOENT, "nonexistent rw");
	CHECK(f == NULL, "failed opens wrote *out");

	/* Twice: the same lpc_file, counted. */
	f = open_file(c, path, O_RDONLY);
	g = open_file(c, path, O_RDONLY);
	CHECK(f == g, "second open of the same file: %p != %p", (void *)f, (void *)g);
	/* Through a hard link (same dev, ino): still the same. */
	snprintf(link, sizeof(link), "%s/open.link", tst_tmpdir());
	if (CHECK(link_path_ok(path, link), "link(2)")) {
		h = open_file(c, link, O_RDONLY);
		CHECK(h == f, "open through a hard link: %p != %p", (void *)h, (void *)f);
		CHECK_EQ(lpc_file_close(h), 0);
	}
	/* Upgrade to read-write: still the same. */
	h = open_file(c, path, O_RDWR);
	CHECK(h == f, "O_RDWR after O_RDONLY: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lpc_file_close(h), 0);
	h = open_file(c, path, O_WRONLY);
	CHECK(h == f, "O_WRONLY: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lpc_file_close(h), 0);

	if (CHECK_EQ(lpc_page_get(f, 1, 0, &p), 0)) {
		CHECK(check_page(&e, 1, lpc_page_data(p)), "page 1 data");
		lpc_page_put(p);
	}
	/* O_TRUNC while open: -EBUSY and the file keeps its size and data. */
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0, &h), -EBUSY, "O_TRUNC while open");
	CHECK_EQ(lpc_file_open(c, link, O_RDWR | O_TRUNC, 0, &h), -EBUSY,
		 "O_TRUNC through a link while open");
	CHECK_EQ(tst_file_size(path), (long long)size, "O_TRUNC -EBUSY truncated the file");
	{
		unsigned char b[64];
		uint64_t bad = 0;
		int fd = open(path, O_RDONLY);

		CHECK(fd >= 0 && pread(fd, b, sizeof(b), 4096) == sizeof(b) &&
			      check_bytes(&e, 4096, b, sizeof(b), &bad),
		      "file contents changed after a refused O_TRUNC");
		if (fd >= 0)
			close(fd);
	}

	/* First close: f stays usable (a second open holds it). */
	CHECK_EQ(lpc_file_close(f), 0, "first close");
	if (CHECK_EQ(lpc_page_find(f, 1, &p), 0, "page still cached after the first close")) {
		CHECK(check_page(&e, 1, lpc_page_data(p)));
		lpc_page_put(p);
	}
	if (CHECK_EQ(lpc_page_get(f, 2, 0, &p), 0)) {
		CHECK(check_page(&e, 2, lpc_page_data(p)));
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(g), 0, "second close");
	/* The second close was the last: a new open starts with nothing cached. */
	h = open_file(c, path, O_RDONLY);
	CHECK_EQ(lpc_page_find(h, 1, &p), -ENOENT, "pages survived the last close");
	CHECK_EQ(lpc_page_find(h, 2, &p), -ENOENT, "pages survived the last close");
	CHECK_EQ(lpc_file_close(h), 0);

	/* Not open any more: O_TRUNC now truncates. */
	f = NULL;
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0, &f), 0, "O_TRUNC, not open");
	CHECK_EQ(tst_file_size(path), 0, "O_TRUNC did not truncate");
	if (f) {
		char b[8];

		CHECK_EQ(lpc_page_get(f, 0, 0, &p), -ENXIO, "page 0 of an empty file");
		CHECK_EQ(lpc_pread(f, b, sizeof(b), 0), 0, "pread of an empty file");
		CHECK_EQ(lpc_file_close(f), 0);
	}
	/* O_CREAT of a new file, then O_CREAT|O_EXCL of it. */
	snprintf(newp, sizeof(newp), "%s/created", tst_tmpdir());
	f = NULL;
	CHECK_EQ(lpc_file_open(c, newp, O_RDWR | O_CREAT, 0600, &f), 0, "O_CREAT");
	CHECK_EQ(tst_file_size(newp), 0);
	CHECK_EQ(lpc_file_open(c, newp, O_RDWR | O_CREAT | O_EXCL, 0600, &h), -EEXIST,
		 "O_CREAT|O_EXCL of an existing file");
	if (f)
		CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

/* --- end of file --- */
static void t_eof(int backend)
{
	struct lpc_cache *c = mk_cache(32 * 4096, 4096, backend, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	char path[600];
	const uint64_t size = 3 * 4096 + 100; /* pages 0..3 */
	struct exp_file e = { .backend = backend, .salt = 11, .size = size, .ps = 4096 };
	static const uint64_t past[] = { 4, 5, 64, 4096, 1ull << 32, 1ull << 52,
					 (UINT64_MAX >> 12) + 1, UINT64_MAX - 1, UINT64_MAX };

	REQUIRE(tst_make_file(backend ? "eof-null" : "eof-sync", size, 11, path,
			      sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = open_file(c, path, O_RDONLY);
	/* Dirty every frame first (private pages), so a frame that is not
	 * zeroed past the end of the file shows its old bytes. */
	{
		struct lpc_page *pg[32];
		int n = 0;

		while (n < 32 && lpc_page_alloc(c, &pg[n]) == 0)
			memset(lpc_page_data(pg[n++]), 0xaa, 4096);
		CHECK_EQ(n, 32, "private pages of an idle 32-frame cache");
		while (n > 0)
			lpc_page_put(pg[--n]);
	}
	for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		CHECK_EQ(lpc_page_get(f, past[i], 0, &p), -ENXIO, "get %" PRIu64, past[i]);
		CHECK_EQ(lpc_page_find(f, past[i], &p), -ENOENT, "find %" PRIu64, past[i]);
	}
	/* The last page is short: bytes up to the size, zeros after. */
	if (CHECK_EQ(lpc_page_get(f, 3, 0, &p), 0, "last page")) {
		CHECK(check_page(&e, 3, lpc_page_data(p)), "last page: data, then zeros");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

/* --- pread with one page size and backend --- */
static void t_pread(size_t ps, int backend, int mode, uint64_t *rng)
{
	const uint64_t size = 5 * ps + ps / 2 + 3;
	struct lpc_cache *c = mk_cache(8 * ps, ps, backend, mode);
	struct exp_file e = { .backend = backend, .salt = ps + (uint64_t)backend, .size = size,
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
	f = open_file(c, path, O_RDONLY);

	/* The whole file, and more than the whole file. */
	memset(buf, 0xee, size + 2 * ps);
	r = lpc_pread(f, buf, size, 0);
	CHECK_EQ(r, (long long)size, "whole file, ps %zu", ps);
	CHECK(check_bytes(&e, 0, buf, size, &bad), "whole file bad at %" PRIu64 " ps %zu", bad,
	      ps);
	r = lpc_pread(f, buf, size + 2 * ps, 0);
	CHECK_EQ(r, (long long)size, "more than the file, ps %zu", ps);
	CHECK(check_bytes(&e, 0, buf, size, &bad), "bad at %" PRIu64, bad);
	CHECK(buf[size] == 0xee, "pread wrote past what it returned");

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
	CHECK(check_bytes(&e, size - 10, buf, 10, &bad), "short at EOF bytes");
	r = lpc_pread(f, buf, SIZE_MAX, size - 3);
	CHECK_EQ(r, 3, "len SIZE_MAX near EOF");
	CHECK(check_bytes(&e, size - 3, buf, 3, &bad));
	/* Page crossings. */
	for (uint64_t k = 1; k <= 5; k++) {
		uint64_t off = k * ps - 7;

		r = lpc_pread(f, buf, 14, off);
		CHECK_EQ(r, 14, "crossing page %" PRIu64, k);
		CHECK(check_bytes(&e, off, buf, 14, &bad), "crossing %" PRIu64 " bad at %" PRIu64,
		      k, bad);
	}
	r = lpc_pread(f, buf, 3 * ps + 2, ps - 1); /* touches 5 pages */
	CHECK_EQ(r, (long long)(3 * ps + 2));
	CHECK(check_bytes(&e, ps - 1, buf, 3 * ps + 2, &bad), "bad at %" PRIu64, bad);
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
		if (!CHECK(check_bytes(&e, off, buf, want, &bad),
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
		CHECK(check_page(&e, i, lpc_page_data(p)), "page %" PRIu64 " ps %zu", i, ps);
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_page_get(f, (size + ps - 1) / ps, 0, &p), -ENXIO);
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
	free(buf);
}

/* --- closing a file whose pages users still hold; destroy with held pages --- */
static void t_held(int backend)
{
	struct lpc_cache *c = mk_cache(16 * 4096, 4096, backend, LPC_LOOKUP_LOCKLESS);
	const uint64_t size = 6 * 4096;
	struct exp_file e = { .backend = backend, .salt = 21, .size = size, .ps = 4096 };
	struct lpc_file *f;
	struct lpc_page *p1, *p2, *q, *priv;
	struct lpc_stats st;
	unsigned char buf[3 * 4096];
	uint64_t bad = 0;
	char path[600];

	REQUIRE(tst_make_file(backend ? "held-null" : "held-sync", size, 21, path,
			      sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = open_file(c, path, O_RDONLY);
	REQUIRE(lpc_page_get(f, 1, 0, &p1) == 0);
	REQUIRE(lpc_page_get(f, 4, 0, &p2) == 0);
	/* Destroy while held: -EBUSY, nothing changed. */
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with held pages");
	CHECK(check_page(&e, 1, lpc_page_data(p1)), "held page after refused destroy");
	CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 4096), (long long)sizeof(buf),
		 "pread after refused destroy");
	CHECK(check_bytes(&e, 4096, buf, sizeof(buf), &bad), "bad at %" PRIu64, bad);
	if (CHECK_EQ(lpc_page_find(f, 1, &q), 0, "still cached after refused destroy")) {
		CHECK(q == p1, "find returned another page");
		lpc_page_put(q);
	}
	if (CHECK_EQ(lpc_page_get(f, 5, 0, &q), 0))
		lpc_page_put(q);

	/* Last close with pages held: they stay valid and correct. */
	CHECK_EQ(lpc_file_close(f), 0);
	memset(buf, 0, sizeof(buf));
	CHECK(check_page(&e, 1, lpc_page_data(p1)), "held page 1 after close");
	CHECK(check_page(&e, 4, lpc_page_data(p2)), "held page 4 after close");
	/* Still busy: the pages are out of the cache but held. */
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with pages of a closed file held");
	/* The cache still works: reopen (a fresh copy, page 1 read again). */
	lpc_stats(c, &st);
	uint64_t reads0 = st.reads;
	f = open_file(c, path, O_RDONLY);
	if (CHECK_EQ(lpc_page_get(f, 1, 0, &q), 0)) {
		CHECK(q != p1, "reopened file returned the closed file's page");
		CHECK(check_page(&e, 1, lpc_page_data(q)));
		lpc_page_put(q);
	}
	lpc_stats(c, &st);
	CHECK_EQ(st.reads - reads0, 1, "page 1 read again after close");
	CHECK(check_page(&e, 1, lpc_page_data(p1)), "held page 1 after reopen");
	lpc_page_put(p1);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with one page held");
	lpc_page_put(p2);

	/* A private page also counts as held. */
	REQUIRE(lpc_page_alloc(c, &priv) == 0);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a private page held");
	lpc_page_put(priv);
	/* Destroy with the file still open: closes it. */
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy after every put");
}

/* --- puts from a thread that never called lpc before --- */
struct putter {
	struct lpc_page **pages;
	unsigned n;
};

static void *putter_main(void *arg)
{
	struct putter *pt = arg;

	for (unsigned i = 0; i < pt->n; i++)
		lpc_page_put(pt->pages[i]);
	return NULL;
}

/*
 * The last references of 64 pages of a closed file, and 8 private pages, are
 * dropped by a fresh thread: its puts free them (the 64th hands a batch to
 * call_rcu from that thread, which must be registered with RCU for it), then
 * it exits.  Every frame must come back.
 */
static void t_foreign_put(void)
{
	enum { N = 64, NP = 8 };
	struct lpc_cache *c = mk_cache((N + NP) * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pages[N + NP];
	struct putter pt = { pages, N + NP };
	struct lpc_file *f;
	struct lpc_stats st;
	pthread_t th;
	char path[600];
	unsigned n;

	REQUIRE(tst_make_sparse("foreign", N * 4096, path, sizeof(path)) == 0);
	f = open_file(c, path, O_RDONLY);
	for (unsigned i = 0; i < N; i++)
		REQUIRE(lpc_page_get(f, i, 0, &pages[i]) == 0);
	for (unsigned i = N; i < N + NP; i++)
		REQUIRE(lpc_page_alloc(c, &pages[i]) == 0);
	CHECK_EQ(lpc_file_close(f), 0); /* the index lets go: ours are the last */
	REQUIRE(pthread_create(&th, NULL, putter_main, &pt) == 0);
	pthread_join(th, NULL);
	for (n = 0; n < N + NP; n++)
		if (lpc_page_alloc(c, &pages[n]) != 0)
			break;
	CHECK_EQ(n, N + NP, "frames back after a foreign thread's puts");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pages[i]);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N + NP);
	destroy(c);
}

/* --- private pages --- */
static void t_alloc(size_t ps)
{
	enum { N = 12 };
	struct lpc_cache *c = mk_cache(N * ps, ps, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pg[N + 1];
	struct lpc_stats st, st0;
	unsigned char *d[N];

	lpc_stats(c, &st0);
	CHECK_EQ(st0.frames, N);
	CHECK_EQ(st0.frames_free, N);
	/* One alloc/put. */
	REQUIRE(lpc_page_alloc(c, &pg[0]) == 0);
	CHECK(lpc_page_data(pg[0]) != NULL);
	memset(lpc_page_data(pg[0]), 0x5a, ps);
	lpc_page_put(pg[0]);
	/* Every frame, then -ENOMEM. */
	for (int i = 0; i < N; i++) {
		if (!CHECK_EQ(lpc_page_alloc(c, &pg[i]), 0, "alloc %d of %d", i, N)) {
			destroy(c);
			return;
		}
		d[i] = lpc_page_data(pg[i]);
		CHECK(((uintptr_t)d[i] & ((ps < 4096 ? ps : 4096) - 1)) == 0, "frame aligned");
		memset(d[i], i + 1, ps);
	}
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++)
			if (i != j)
				CHECK(d[i] + ps <= d[j] || d[j] + ps <= d[i],
				      "frames %d and %d overlap", i, j);
		CHECK(d[i][0] == i + 1 && d[i][ps - 1] == i + 1, "frame %d overwritten", i);
	}
	lpc_stats(c, &st0);
	CHECK_EQ(st0.frames_free, 0);
	CHECK_EQ(lpc_page_alloc(c, &pg[N]), -ENOMEM, "alloc with every frame held");
	lpc_stats(c, &st);
	CHECK_EQ(st.alloc_failures - st0.alloc_failures, 1, "alloc_failures");
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY);
	for (int i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "private puts return every frame at once");
	for (int i = 0; i < N; i++)
		CHECK_EQ(lpc_page_alloc(c, &pg[i]), 0, "alloc after put");
	for (int i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	destroy(c);
}

/* --- frames on other threads' private lists are not lost to -ENOMEM --- */
struct hoarder {
	struct lpc_cache *c;
	pthread_barrier_t *parked, *release;
	int got;
};

/* Allocates a few frames and frees them again, which leaves them on this
 * thread's private list, then parks until released. */
static void *hoard(void *arg)
{
	struct hoarder *h = arg;
	struct lpc_page *pg[16];

	h->got = 0;
	while (h->got < 16 && lpc_page_alloc(h->c, &pg[h->got]) == 0)
		h->got++;
	for (int i = 0; i < h->got; i++)
		lpc_page_put(pg[i]);
	pthread_barrier_wait(h->parked);
	pthread_barrier_wait(h->release);
	return NULL;
}

static void t_hoarded_frames(void)
{
	enum { N = 256, H = 3 };
	struct lpc_cache *c = mk_cache(N * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page **pg = calloc(N + 1, sizeof(*pg));
	struct hoarder h[H];
	pthread_t th[H];
	pthread_barrier_t parked, release;
	struct lpc_stats st;
	int n = 0;

	REQUIRE(pg);
	pthread_barrier_init(&parked, NULL, H + 1);
	pthread_barrier_init(&release, NULL, H + 1);
	for (int i = 0; i < H; i++) {
		h[i] = (struct hoarder){ .c = c, .parked = &parked, .release = &release };
		REQUIRE(pthread_create(&th[i], NULL, hoard, &h[i]) == 0);
	}
	pthread_barrier_wait(&parked);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "every frame free while the hoarders park");
	/* Every frame, the hoarded ones included, before -ENOMEM. */
	while (n <= N && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	CHECK_EQ(n, N, "frames allocated before -ENOMEM (hoarders got %d %d %d)", h[0].got,
		 h[1].got, h[2].got);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, 0);
	for (int i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	pthread_barrier_wait(&release);
	for (int i = 0; i < H; i++)
		pthread_join(th[i], NULL);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "every frame free again");
	pthread_barrier_destroy(&parked);
	pthread_barrier_destroy(&release);
	free(pg);
	destroy(c);
}

/* --- a full cache: -ENOMEM from get, read-around from pread --- */
static void t_enomem(int backend, int mode)
{
	enum { N = 8 };
	const size_t ps = 4096;
	const uint64_t size = 16 * ps + 77;
	struct lpc_cache *c = mk_cache(N * ps, ps, backend, mode);
	struct exp_file e = { .backend = backend, .salt = 31, .size = size, .ps = ps };
	struct lpc_file *f;
	struct lpc_page *held[N], *p;
	struct lpc_stats s0, s1;
	unsigned char *buf = malloc(6 * ps);
	uint64_t bad = 0;
	char path[600], name[64];
	ssize_t r;

	REQUIRE(buf);
	snprintf(name, sizeof(name), "enomem-%d-%d", backend, mode);
	REQUIRE(tst_make_file(name, size, 31, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = open_file(c, path, O_RDONLY);
	for (int i = 0; i < N; i++)
		REQUIRE(lpc_page_get(f, (uint64_t)i, 0, &held[i]) == 0, "hold %d", i);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.frames_free, 0);
	CHECK_EQ(lpc_page_get(f, N, 0, &p), -ENOMEM, "get with every frame held");
	CHECK_EQ(lpc_page_find(f, N, &p), -ENOENT, "a failed get cached something");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.alloc_failures - s0.alloc_failures, 1, "alloc_failures");
	CHECK_EQ(s1.reads - s0.reads, 0, "-ENOMEM get did I/O");

	/* pread reads around the cache: pages 8..12, unaligned both ends. */
	lpc_stats(c, &s0);
	r = lpc_pread(f, buf, 4 * ps + 100, N * ps + 50);
	CHECK_EQ(r, (long long)(4 * ps + 100), "pread around a full cache");
	CHECK(check_bytes(&e, N * ps + 50, buf, 4 * ps + 100, &bad), "bad at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_around - s0.read_around, 5, "read_around (5 pages)");
	CHECK_EQ(s1.reads - s0.reads, 5, "reads");
	CHECK_EQ(s1.alloc_failures - s0.alloc_failures, 5, "alloc_failures");
	CHECK_EQ(s1.read_errors - s0.read_errors, 0);
	/* The short last page, read around. */
	r = lpc_pread(f, buf, 2 * ps, 16 * ps);
	CHECK_EQ(r, 77, "short last page read around");
	CHECK(check_bytes(&e, 16 * ps, buf, 77, &bad));
	/* Held pages are served from the cache: no I/O. */
	lpc_stats(c, &s0);
	r = lpc_pread(f, buf, 2 * ps, ps + 1);
	CHECK_EQ(r, (long long)(2 * ps));
	CHECK(check_bytes(&e, ps + 1, buf, 2 * ps, &bad));
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 0, "cached pages read again");
	CHECK_EQ(s1.hits - s0.hits, 3);
	CHECK_EQ(lpc_page_alloc(c, &p), -ENOMEM, "private alloc with every frame held");
	/* Nothing read around was cached. */
	CHECK_EQ(lpc_page_find(f, N + 1, &p), -ENOENT);

	for (int i = 0; i < N; i++)
		lpc_page_put(held[i]);
	/* Frames are still cached (no reclaim yet): drop them, then get works. */
	CHECK_EQ(lpc_invalidate(f, 0, 0), N);
	if (CHECK_EQ(lpc_page_get(f, N, 0, &p), 0, "get after put and invalidate")) {
		CHECK(check_page(&e, N, lpc_page_data(p)));
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
	free(buf);
}

/* --- lpc_invalidate --- */
static void t_invalidate(int mode)
{
	const size_t ps = 4096;
	const uint64_t size = 16 * ps;
	struct lpc_cache *c = mk_cache(64 * ps, ps, LPC_IO_NULL, mode);
	struct lpc_file *f;
	struct lpc_page *p, *held, *locked;
	struct lpc_stats s0, s1;
	char path[600];
	int total = 0, r;

	REQUIRE(tst_make_sparse(mode ? "inval-locked" : "inval", size, path, sizeof(path)) == 0);
	f = open_file(c, path, O_RDONLY);
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "empty file map");
	for (uint64_t i = 0; i < 16; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	lpc_stats(c, &s0);
	/* [2*ps, 5*ps): pages 2, 3, 4. */
	r = lpc_invalidate(f, 2 * ps, 3 * ps);
	CHECK_EQ(r, 3, "pages 2..4");
	total += r > 0 ? r : 0;
	for (uint64_t i = 1; i <= 5; i++) {
		int want = (i >= 2 && i <= 4) ? -ENOENT : 0;

		CHECK_EQ(lpc_page_find(f, i, &p), want, "find %" PRIu64 " after invalidate", i);
		if (want == 0 && p)
			lpc_page_put(p);
	}
	/* One byte inside page 5. */
	r = lpc_invalidate(f, 5 * ps + 1, 1);
	CHECK_EQ(r, 1, "one byte of page 5");
	total += r > 0 ? r : 0;
	/* The last byte of 5 (gone) and first of 6. */
	r = lpc_invalidate(f, 6 * ps - 1, 2);
	CHECK_EQ(r, 1, "crossing 5|6");
	total += r > 0 ? r : 0;
	/* Zero length = to the end of the file: from page 14 (offset unaligned). */
	r = lpc_invalidate(f, 14 * ps + 100, 0);
	CHECK_EQ(r, 2, "len 0 from page 14");
	total += r > 0 ? r : 0;
	/* Past the end, and an overflowing range. */
	CHECK_EQ(lpc_invalidate(f, 100 * ps, 0), 0);
	CHECK_EQ(lpc_invalidate(f, 100 * ps, ps), 0);
	r = lpc_invalidate(f, 13 * ps, UINT64_MAX);
	CHECK_EQ(r, 1, "off + len overflows: to the end");
	total += r > 0 ? r : 0;

	/* Held pages are skipped. */
	REQUIRE(lpc_page_get(f, 7, 0, &held) == 0);
	CHECK_EQ(lpc_invalidate(f, 7 * ps, ps), 0, "held page dropped");
	if (CHECK_EQ(lpc_page_find(f, 7, &p), 0, "held page gone from the cache")) {
		CHECK(p == held);
		lpc_page_put(p);
	}
	/* Locked, not held pages are skipped: lock it, drop our reference (the
	 * index keeps it), invalidate, take it back and unlock. */
	REQUIRE(lpc_page_get(f, 8, 0, &locked) == 0);
	lpc_page_lock(locked);
	lpc_page_put(locked);
	CHECK_EQ(lpc_invalidate(f, 8 * ps, ps), 0, "locked page dropped");
	if (CHECK_EQ(lpc_page_find(f, 8, &p), 0, "locked page gone")) {
		CHECK(p == locked);
		lpc_page_unlock(p);
		lpc_page_put(p);
	}
	/* Everything else: pages 0, 1, 8..12 (7 is still held). */
	r = lpc_invalidate(f, 0, 0);
	CHECK_EQ(r, 7, "the rest, with page 7 held");
	total += r > 0 ? r : 0;
	lpc_page_put(held);
	r = lpc_invalidate(f, 0, 0);
	CHECK_EQ(r, 1, "page 7 after its put");
	total += r > 0 ? r : 0;
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "nothing left");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.invalidated - s0.invalidated, (unsigned)total, "invalidated counter");
	/* An invalidated page is read again. */
	lpc_stats(c, &s0);
	if (CHECK_EQ(lpc_page_get(f, 3, 0, &p), 0))
		lpc_page_put(p);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "invalidated page read again");
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

/* --- lpc_page_find on a read in flight (gated backend) --- */

static void t_find_in_flight(int mode)
{
	const size_t ps = 4096;
	struct lpc_cache *c = mk_cache(64 * ps, ps, LPC_IO_NULL, mode);
	struct exp_file e = { .backend = LPC_IO_NULL, .size = 8 * ps, .ps = ps };
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	struct lpc_stats s0, s1;
	struct tst_getter a, b;
	pthread_t ta, tb;
	char path[600];

	REQUIRE(tst_make_sparse(mode ? "inflight-locked" : "inflight", e.size, path,
				sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = open_file(c, path, O_RDONLY);
	tst_gate_install(c);
	tst_gate_close();
	lpc_stats(c, &s0);
	a = (struct tst_getter){ .f = f, .index = 5 };
	b = (struct tst_getter){ .f = f, .index = 5 };
	REQUIRE(pthread_create(&ta, NULL, tst_getter_main, &a) == 0);
	if (!CHECK(tst_gate_wait_entered(1, 5000), "the read never reached the backend")) {
		tst_gate_open(0);
		pthread_join(ta, NULL);
		return;
	}
	/* The page is inserted, locked, not uptodate. */
	CHECK_EQ(lpc_page_find(f, 5, &p), -EAGAIN, "find on a read in flight");
	CHECK_EQ(lpc_page_find(f, 5, &p), -EAGAIN, "find on a read in flight, again");
	CHECK_EQ(lpc_page_find(f, 4, &p), -ENOENT, "find next to it");
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "invalidate dropped a page in flight");
	/* A second getter waits for it (its miss is counted before it sleeps). */
	lpc_stats(c, &s1);
	REQUIRE(pthread_create(&tb, NULL, tst_getter_main, &b) == 0);
	CHECK(tst_wait_misses(c, s1.misses + 1, 5000), "second getter never missed");
	tst_sleep_us(20000);
	CHECK_EQ(tst_gate_entered(), 1, "second getter issued its own read");
	tst_gate_open(0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.rc, 0, "reader");
	CHECK_EQ(b.rc, 0, "waiter");
	if (a.rc == 0 && b.rc == 0) {
		CHECK(a.p == b.p, "two pages for one index");
		CHECK(check_page(&e, 5, lpc_page_data(b.p)), "waiter's data");
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "one read for two getters");
	if (CHECK_EQ(lpc_page_find(f, 5, &p), 0, "find after the read")) {
		CHECK(p == a.p);
		lpc_page_put(p);
	}
	if (a.rc == 0)
		lpc_page_put(a.p);
	if (b.rc == 0)
		lpc_page_put(b.p);
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

/* --- exact counters, single-threaded --- */
static void t_stats(int backend, int mode)
{
	const size_t ps = 4096;
	const uint64_t size = 8 * ps - 100;
	struct lpc_cache *c = mk_cache(32 * ps, ps, backend, mode);
	struct lpc_file *f;
	struct lpc_page *p;
	struct lpc_stats s;
	unsigned char buf[2 * 4096];
	char path[600], name[64];

	snprintf(name, sizeof(name), "stats-%d-%d", backend, mode);
	REQUIRE(tst_make_file(name, size, 41, path, sizeof(path)) == 0);
	f = open_file(c, path, O_RDONLY);
#define EXPECT(h, m, rd, rb)                                                           \
	do {                                                                           \
		lpc_stats(c, &s);                                                      \
		CHECK_EQ(s.hits, h, "hits");                                           \
		CHECK_EQ(s.misses, m, "misses");                                       \
		CHECK_EQ(s.lookups, (h) + (m), "lookups");                             \
		CHECK_EQ(s.reads, rd, "reads");                                        \
		CHECK_EQ(s.read_bytes, rb, "read_bytes");                              \
		CHECK_EQ(s.retries, 0, "retries");                                     \
		CHECK_EQ(s.read_errors, 0, "read_errors");                             \
		CHECK_EQ(s.read_around, 0, "read_around");                             \
		CHECK_EQ(s.alloc_failures, 0, "alloc_failures");                       \
	} while (0)
	EXPECT(0, 0, 0, 0);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(0, 1, 1, ps);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(1, 1, 1, ps);
	CHECK_EQ(lpc_page_find(f, 1, &p), -ENOENT);
	EXPECT(1, 2, 1, ps);
	REQUIRE(lpc_page_find(f, 0, &p) == 0);
	lpc_page_put(p);
	EXPECT(2, 2, 1, ps);
	CHECK_EQ(lpc_pread(f, buf, 2 * ps, 0), (long long)(2 * ps));
	EXPECT(3, 3, 2, 2 * ps);
	REQUIRE(lpc_page_get(f, 7, 0, &p) == 0); /* short page: ps - 100 bytes */
	lpc_page_put(p);
	EXPECT(3, 4, 3, 3 * ps - 100);
	CHECK_EQ(lpc_page_get(f, 8, 0, &p), -ENXIO);
	EXPECT(3, 5, 3, 3 * ps - 100);
	CHECK_EQ(lpc_page_find(f, 8, &p), -ENOENT);
	EXPECT(3, 6, 3, 3 * ps - 100);
	CHECK_EQ(lpc_pread(f, buf, 1, size), 0); /* at EOF: no lookup */
	EXPECT(3, 6, 3, 3 * ps - 100);
	CHECK_EQ(lpc_invalidate(f, 0, 0), 3);
	lpc_stats(c, &s);
	CHECK_EQ(s.invalidated, 3);
	CHECK_EQ(lpc_pread(f, buf, 100, 7 * ps + ps - 106), 6);
	EXPECT(3, 7, 4, 4 * ps - 200);
	/* 100 preads of one cached page: 100 hits, no read. */
	for (int i = 0; i < 100; i++)
		lpc_pread(f, buf, 10, 7 * ps);
	EXPECT(103, 7, 4, 4 * ps - 200);
	/* One cached page; the three invalidated ones wait on the pending list
	 * for a grace period (a batch is handed to call_rcu every 64). */
	lpc_stats(c, &s);
	CHECK_EQ(s.frames, 32);
	pthread_mutex_lock(&c->pool.free_lock);
	uint32_t pending = c->pool.npending;
	pthread_mutex_unlock(&c->pool.free_lock);
	CHECK_EQ(pending, 3, "pending frees");
	CHECK_EQ(s.frames_free + pending, 31, "free + pending frames, one page cached");
#undef EXPECT
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
}

/* --- a file system that may refuse O_DIRECT (tmpfs) --- */
static void t_tmpfs(void)
{
	char dir[512], path[600];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats s;
	struct exp_file e = { .backend = LPC_IO_SYNC, .salt = 51, .size = 5 * 4096 + 9,
			      .ps = 4096 };
	unsigned char *buf;
	uint64_t bad = 0;
	bool refused;
	int fd;

	if (!tst_mkdtemp("/dev/shm", dir, sizeof(dir))) {
		printf("note: no /dev/shm: O_DIRECT fallback through open not tested\n");
		return;
	}
	if (tst_make_file_in(dir, "f", e.size, e.salt, path, sizeof(path)) != 0) {
		rmdir(dir);
		return;
	}
	fd = open(path, O_RDONLY | O_DIRECT);
	refused = fd < 0 && errno == EINVAL;
	if (fd >= 0)
		close(fd);
	printf("note: /dev/shm %s O_DIRECT%s\n", refused ? "refuses" : "accepts",
	       refused ? "" : " (kernel >= 6.6): the open-time fallback is not exercised; "
			      "test_io_errors covers the read-time one");
	c = mk_cache(16 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	f = open_file(c, path, O_RDONLY);
	lpc_stats(c, &s);
	if (refused)
		CHECK(s.direct_fallbacks > 0, "tmpfs refused O_DIRECT: direct_fallbacks %" PRIu64,
		      s.direct_fallbacks);
	else
		CHECK_EQ(s.direct_fallbacks, 0, "O_DIRECT accepted, yet counted a fallback");
	buf = malloc(e.size);
	REQUIRE(buf);
	CHECK_EQ(lpc_pread(f, buf, e.size, 0), (long long)e.size, "tmpfs pread");
	CHECK(check_bytes(&e, 0, buf, e.size, &bad), "tmpfs bad at %" PRIu64, bad);
	CHECK_EQ(lpc_pread(f, buf, 100, 3 * 4096 - 50), 100);
	CHECK(check_bytes(&e, 3 * 4096 - 50, buf, 100, &bad), "tmpfs bad at %" PRIu64, bad);
	free(buf);
	CHECK_EQ(lpc_file_close(f), 0);
	destroy(c);
	unlink(path);
	rmdir(dir);
}

/* Runs one case and prints how long it took. */
#define RUN(call)                                                                  \
	do {                                                                       \
		uint64_t t0_ = tst_now_ns();                                       \
		call;                                                              \
		printf("  %-45s %7.1f ms\n", #call, (tst_now_ns() - t0_) / 1e6);  \
	} while (0)

int main(int argc, char **argv)
{
	uint64_t rng;
	size_t big = 2u << 20;

	tst_init(argc, argv, 100);
	rng = tst_seed;
	if (!tst_tmpdir())
		tst_skip("no temporary directory");

	RUN(t_config());
	RUN(t_null_args());
	RUN(t_open());
	RUN(t_eof(LPC_IO_SYNC));
	RUN(t_eof(LPC_IO_NULL));
	static const size_t sizes[] = { 512, 4096, 65536 };
	for (size_t i = 0; i < 3; i++) {
		RUN(t_pread(sizes[i], LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, &rng));
		RUN(t_pread(sizes[i], LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, &rng));
	}
	RUN(t_pread(4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKED, &rng));
	/* 2 MiB pages: an 8-frame cache is 16 MiB and the file 11 MiB. */
	{
		void *probe = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (probe != MAP_FAILED) {
			munmap(probe, 64 * MiB);
			RUN(t_pread(big, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, &rng));
			RUN(t_pread(big, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, &rng));
		} else {
			printf("note: 2 MiB pages skipped (no memory)\n");
		}
	}
	RUN(t_held(LPC_IO_SYNC));
	RUN(t_held(LPC_IO_NULL));
	RUN(t_foreign_put());
	RUN(t_alloc(4096));
	RUN(t_alloc(512));
	RUN(t_hoarded_frames());
	RUN(t_enomem(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS));
	RUN(t_enomem(LPC_IO_NULL, LPC_LOOKUP_LOCKED));
	RUN(t_invalidate(LPC_LOOKUP_LOCKLESS));
	RUN(t_invalidate(LPC_LOOKUP_LOCKED));
	RUN(t_find_in_flight(LPC_LOOKUP_LOCKLESS));
	RUN(t_find_in_flight(LPC_LOOKUP_LOCKED));
	RUN(t_stats(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS));
	RUN(t_stats(LPC_IO_NULL, LPC_LOOKUP_LOCKED));
	RUN(t_tmpfs());
	return tst_finish();
}
