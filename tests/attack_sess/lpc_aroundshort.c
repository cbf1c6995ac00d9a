/* SPDX-License-Identifier: MIT */
/*
 * lpc_aroundshort - read_around's two tries (e6a810e: read.c read_around
 * through miss.c lpc_filemap_read_frame), with every frame held so that
 * lpc_pread reads around the cache, against a user backend whose read of
 * one page misbehaves as told.
 *
 * Contract: lpc.h C.3 / lpc_backend_ops.read: "fewer than asked only where
 * the storage object ends (lpc zeroes the rest of the page and asks size
 * whether it really ends there, C.3)"; filemap.h lpc_filemap_read_frame:
 * "reads once more when it came short where the storage's file goes on
 * ... -EIO: short twice where the file goes on"; never stale data.
 *
 * Cases (page 40 of a 64-page file, frames all held by lpc_page_get):
 *   short-always  read returns half the page, size says the file goes on:
 *                 want -EIO after exactly 2 reads, read_errors +1
 *   error         read returns -EIO: want -EIO after 1 read
 *   short-then-ok first read half (its bytes 0xEE), second full: want the
 *                 second's bytes, 2 reads
 *   grow-between  first read half, the storage grows before the size is
 *                 asked (as RB1 over a hole): want the second read's page
 *   true-eof      the file ends 2048 bytes into page 40 (size 40.5 pages):
 *                 want 2048 bytes of data, then the call's end (lpc_pread
 *                 returns 2048), 1 read
 *   shrink-after  first read 3/4 of the page, the storage shrinks (outside
 *                 lpc) to 1/4 into it before the size is asked: the short
 *                 count is at or past the end, taken (a read before the
 *                 shrink), 1 read; the last quarter zeros
 * Also: read_around counted in every case (the path was taken).
 * Exit 1 when a case differs.
 * Seen (int 1907d0f, asan): every case as contracted; held.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <lpc/lpc.h>

#define PS 4096
#define NP 64
#define T 40

static unsigned char store[NP * PS];
static _Atomic uint64_t size_now = NP * PS;
static int mode, calls;

enum { M_NORMAL, M_SHORT, M_ERR, M_SHORT_OK, M_GROW, M_EOF, M_SHRINK };

static ssize_t b_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	ssize_t done = 0;

	(void)h;
	for (int k = 0; k < n; k++) {
		uint64_t o = off + (uint64_t)done;
		size_t len = iov[k].iov_len;
		uint64_t sz = atomic_load(&size_now);

		if (o / PS == T) {
			calls++;
			if (mode == M_ERR)
				return -EIO;
			if ((mode == M_SHORT) || (mode == M_SHORT_OK && calls == 1) ||
			    (mode == M_GROW && calls == 1)) {
				memset(iov[k].iov_base, 0xEE, PS);
				memcpy(iov[k].iov_base, store + o, PS / 2);
				if (mode == M_GROW) /* the file grows past page T now */
					atomic_store(&size_now, (uint64_t)NP * PS);
				return done + PS / 2;
			}
			if (mode == M_SHRINK && calls == 1) {
				/* a read of 3/4 of the page; the file then shrinks
				 * to a quarter into it before lpc asks its size
				 * (no second try: the count is at its end) */
				memcpy(iov[k].iov_base, store + o, 3 * PS / 4);
				atomic_store(&size_now, (uint64_t)T * PS + PS / 4);
				return done + 3 * PS / 4;
			}
		}
		if (o >= sz)
			return done;
		if (len > sz - o)
			len = sz - o;
		memcpy(iov[k].iov_base, store + o, len);
		done += len;
		if (len < iov[k].iov_len)
			return done;
	}
	return done;
}

static ssize_t b_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	(void)h; (void)iov; (void)n; (void)off;
	return -EROFS;
}

static int b_size(void *h, uint64_t *s)
{
	(void)h;
	*s = atomic_load(&size_now);
	return 0;
}

static const struct lpc_backend_ops ops = {
	.version = LPC_BACKEND_V1, .read = b_read, .write = b_write, .size = b_size,
};

static int run_case(const char *name, int m, uint64_t size0, ssize_t want_r, int want_calls,
		    const unsigned char *want, int want_err_delta)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *held[NP];
	struct lpc_stats a, b;
	static unsigned char buf[PS];
	int nheld = 0, fail = 0;
	ssize_t r;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 * PS;
	cfg.page_size = PS;
	cfg.alloc_wait_ms = 1;
	atomic_store(&size_now, size0);
	mode = M_NORMAL;
	calls = 0;
	if (lpc_cache_create(&cfg, &c) != 0 ||
	    lpc_file_open_backend(c, "mem", &ops, NULL, O_RDONLY, &f) != 0) {
		fprintf(stderr, "setup failed\n");
		exit(2);
	}
	for (uint64_t i = 0; i < T - 8 && nheld < NP; i++) {
		struct lpc_page *p;

		if (lpc_page_get(f, i, 0, &p) != 0)
			break;
		held[nheld++] = p;
	}
	(void)lpc_invalidate(f, (uint64_t)T * PS, PS);
	mode = m;
	calls = 0;
	lpc_stats(c, &a);
	memset(buf, 0x55, sizeof(buf));
	r = lpc_pread(f, buf, PS, (uint64_t)T * PS);
	lpc_stats(c, &b);
	if (r != want_r) {
		printf("%s: lpc_pread = %zd, want %zd\n", name, r, want_r);
		fail = 1;
	}
	if (calls != want_calls) {
		printf("%s: %d read(s) of the page, want %d\n", name, calls, want_calls);
		fail = 1;
	}
	if (b.read_around == a.read_around) {
		printf("%s: not read around (held %d frames)\n", name, nheld);
		fail = 1;
	}
	if ((int)(b.read_errors - a.read_errors) != want_err_delta) {
		printf("%s: read_errors +%" PRIu64 ", want +%d\n", name,
		       b.read_errors - a.read_errors, want_err_delta);
		fail = 1;
	}
	if (want && r > 0 && memcmp(buf, want, (size_t)r) != 0) {
		size_t k = 0;

		while (buf[k] == want[k])
			k++;
		printf("%s: byte %zu is 0x%02x, want 0x%02x\n", name, k, buf[k], want[k]);
		fail = 1;
	}
	printf("%s: r %zd, %d read(s), read_errors +%" PRIu64 ", read_around +%" PRIu64 ": %s\n",
	       name, r, calls, b.read_errors - a.read_errors, b.read_around - a.read_around,
	       fail ? "WRONG" : "as contracted");
	for (int k = 0; k < nheld; k++)
		lpc_page_put(held[k]);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return fail;
}

int main(void)
{
	static unsigned char want[PS];
	int fails = 0;

	for (size_t i = 0; i < sizeof(store); i++)
		store[i] = (unsigned char)(i * 7 + i / PS);
	memcpy(want, store + (size_t)T * PS, PS);

	fails += run_case("short-always", M_SHORT, NP * PS, -EIO, 2, NULL, 1);
	fails += run_case("error", M_ERR, NP * PS, -EIO, 1, NULL, 1);
	fails += run_case("short-then-ok", M_SHORT_OK, NP * PS, PS, 2, want, 0);
	/* lpc's size covers the page (opened at the full size); the storage
	 * says T + 0.5 pages at the first try, then grows */
	fails += run_case("true-eof", M_EOF, (uint64_t)T * PS + PS / 2, PS / 2, 1, want, 0);
	fails += run_case("grow-between", M_GROW, NP * PS, PS, 2, want, 0);
	{
		static unsigned char w2[PS];

		/* The storage shrinks (outside lpc) to a quarter into the page
		 * just after a read that got 3/4 of it: the read is judged at
		 * the storage's end (short_at_eof: 3/4 >= 1/4), taken, not
		 * read again; its 3/4 are the storage's bytes at the read (a
		 * read before the shrink), and the last quarter must be zeros
		 * (never the backend's leftovers or the caller's buffer). */
		memcpy(w2, want, 3 * PS / 4);
		fails += run_case("shrink-after", M_SHRINK, NP * PS, PS, 1, w2, 0);
	}
	printf("%s\n", fails ? "DEFECT" : "ok");
	return fails ? 1 : 0;
}
